/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflDeadletter"

#include "config.h"

#include "sfl-deadletter.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-platform-glib.h"
#include "sfl-platform.h"
#include "sfl-pyjson.h"

#define SEGMENT_PREFIX "seg-"
#define SEGMENT_SUFFIX ".jsonl"
/* a segment taken by replay or purge: no appender or reader looks at it any more */
#define CLAIM_PREFIX "claimed-"
#define CLAIM_LOCK   "claim.lock"
/* each append rewrites the open segment, so it stays small: the cost of a batch is bounded */
#define SEGMENT_MIN_BYTES (16 * 1024)
#define SEGMENT_MAX_BYTES (1024 * 1024)
/* one append batch may carry a segment past its cap (it rolls on the next one) */
#define SEGMENT_READ_LIMIT (64 * 1024 * 1024)

typedef struct {
	gchar *path;
	guint64 bytes;
	gint64 newest_usec;
} Segment;

struct _SflDeadletter {
	gchar *dir;
	guint64 max_bytes;
	gint64 max_age_usec;
	guint64 segment_cap;
	SflClock *clock;
	GPtrArray *segments; /* Segment, oldest first; the last is open for appends */
	GString *open_text;  /* contents of the last segment */
	guint64 evicted;
	guint64 seq;
	guint32 writer;	      /* in every segment name: writers never share a file */
	gboolean warned_full; /* the 90 % warning was logged; again after it fell below 80 % */
	SflPlatformLock *claim_lock; /* held between claim and settle/abort */
	/* sf2loki_deadletter_* (NULL without a registry) */
	SflMetricFamily *entries_family;
	SflSeries *bytes_series;
	SflSeries *evicted_series;
	SflSeries *failures_series;
	GPtrArray *claimed; /* paths renamed to CLAIM_PREFIX, to remove or restore */
};

static void
segment_free(gpointer data)
{
	Segment *seg = data;
	g_free(seg->path);
	g_free(seg);
}

static gint
compare_names(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

static gboolean
write_segment(const gchar *path, const GString *text, GError **error)
{
	SflPlatformError perr = { 0 };
	g_autoptr(GError) local = NULL;
	SflPlatformStatus status = sfl_platform_replace_file(path, text->str, text->len, &perr);
	if (!sfl_platform_to_gerror(status, &perr, &local)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT,
			    "cannot write dead-letter segment %s: %s", path, local->message);
		return FALSE;
	}
	return TRUE;
}

static gchar *
read_segment(const gchar *path, gsize *len)
{
	SflPlatformError perr = { 0 };
	char *data = NULL;
	size_t n = 0;
	gchar *copy;

	if (sfl_platform_read_file(path, SEGMENT_READ_LIMIT, &data, &n, &perr) != SFL_PLATFORM_OK) {
		g_warning("cannot read dead-letter segment %s: %s", path, perr.message);
		return NULL;
	}
	copy = g_strndup(data, n);
	sfl_platform_free(data);
	*len = n;
	return copy;
}

static void
remove_segment(SflDeadletter *self, guint idx)
{
	Segment *seg = g_ptr_array_index(self->segments, idx);
	SflPlatformError perr = { 0 };
	SflPlatformStatus status = sfl_platform_remove_file(seg->path, &perr);
	if (status != SFL_PLATFORM_OK && status != SFL_PLATFORM_ERR_NOT_FOUND)
		g_warning("cannot remove dead-letter segment %s: %s", seg->path, perr.message);
	g_ptr_array_remove_index(self->segments, idx);
}

static Segment *
begin_segment(SflDeadletter *self)
{
	gint64 now = sfl_clock_wall_usec(self->clock);
	Segment *seg = g_new0(Segment, 1);
	/* the name sorts by creation; the sequence breaks ties within one microsecond */
	g_autofree gchar *name = g_strdup_printf(
		SEGMENT_PREFIX "%020" G_GINT64_FORMAT "-%08x-%06" G_GUINT64_FORMAT SEGMENT_SUFFIX,
		now, self->writer, self->seq++ % 1000000);
	seg->path = g_build_filename(self->dir, name, NULL);
	seg->newest_usec = now;
	g_ptr_array_add(self->segments, seg);
	g_string_truncate(self->open_text, 0);
	return seg;
}

/*
 * Other writers (a replica on the same disk, the CLI) add and remove segments behind our back:
 * the list of closed segments is read from the directory again before it is used, and only our
 * own open segment is kept from memory.
 */
static void
rescan(SflDeadletter *self)
{
	g_autoptr(GDir) gdir = g_dir_open(self->dir, 0, NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) known = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GPtrArray) old = NULL;
	Segment *open = NULL;
	const gchar *name;

	if (self->segments->len > 0)
		open = g_ptr_array_steal_index(self->segments, self->segments->len - 1);
	/* our own closed segments keep the time of their newest record, which an mtime may not
	 * match (a copied directory, an injected clock) */
	old = g_steal_pointer(&self->segments);
	self->segments = g_ptr_array_new_with_free_func(segment_free);
	for (guint i = 0; i < old->len; i++) {
		Segment *seg = g_ptr_array_index(old, i);
		g_hash_table_insert(known, seg->path, seg);
	}
	while (gdir != NULL && (name = g_dir_read_name(gdir)) != NULL) {
		if (g_str_has_prefix(name, SEGMENT_PREFIX) &&
		    g_str_has_suffix(name, SEGMENT_SUFFIX))
			g_ptr_array_add(names, g_strdup(name));
	}
	g_ptr_array_sort(names, compare_names);
	for (guint i = 0; i < names->len; i++) {
		Segment *seg;
		GStatBuf st;
		g_autofree gchar *path =
			g_build_filename(self->dir, g_ptr_array_index(names, i), NULL);

		if (open != NULL && g_strcmp0(path, open->path) == 0)
			continue;
		if (g_stat(path, &st) != 0)
			continue;
		seg = g_new0(Segment, 1);
		seg->bytes = (guint64)st.st_size;
		seg->newest_usec =
			g_hash_table_contains(known, path)
				? ((Segment *)g_hash_table_lookup(known, path))->newest_usec
				: (gint64)st.st_mtime * G_USEC_PER_SEC;
		seg->path = g_steal_pointer(&path);
		g_ptr_array_add(self->segments, seg);
	}
	if (open != NULL)
		g_ptr_array_add(self->segments, open);
}

SflDeadletter *
sfl_deadletter_open(const gchar *dir, guint64 max_bytes, gint64 max_age_usec, SflClock *clock,
		    GError **error)
{
	g_autoptr(GDir) gdir = NULL;
	SflDeadletter *self;

	g_return_val_if_fail(dir != NULL && clock != NULL, NULL);
	if (g_mkdir_with_parents(dir, 0700) != 0) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT,
			    "cannot create dead-letter directory %s: %s", dir, g_strerror(errno));
		return NULL;
	}
	gdir = g_dir_open(dir, 0, error);
	if (gdir == NULL)
		return NULL;

	self = g_rc_box_new0(SflDeadletter);
	self->dir = g_strdup(dir);
	self->max_bytes = max_bytes;
	self->max_age_usec = max_age_usec;
	self->segment_cap = CLAMP(max_bytes / 8, SEGMENT_MIN_BYTES, SEGMENT_MAX_BYTES);
	self->clock = sfl_clock_ref(clock);
	self->segments = g_ptr_array_new_with_free_func(segment_free);
	self->open_text = g_string_new(NULL);
	self->writer = g_random_int();
	self->claimed = g_ptr_array_new_with_free_func(g_free);

	rescan(self);
	/* appends never go into an old segment: a damaged tail stays where it is, readable around
	 */
	begin_segment(self);
	sfl_deadletter_enforce_bounds(self);
	return self;
}

static void
sfl_deadletter_clear(gpointer data)
{
	SflDeadletter *self = data;

	if (self->claim_lock != NULL)
		sfl_deadletter_abort_claim(self);
	g_ptr_array_unref(self->claimed);
	g_free(self->dir);
	sfl_clock_unref(self->clock);
	g_ptr_array_unref(self->segments);
	g_string_free(self->open_text, TRUE);
}

SflDeadletter *
sfl_deadletter_ref(SflDeadletter *self)
{
	return g_rc_box_acquire(self);
}

void
sfl_deadletter_unref(SflDeadletter *self)
{
	if (self != NULL)
		g_rc_box_release_full(self, sfl_deadletter_clear);
}

guint
sfl_deadletter_fill_percent(SflDeadletter *self)
{
	return self->max_bytes > 0 ? (guint)(sfl_deadletter_get_bytes(self) * 100 / self->max_bytes)
				   : 0;
}

gboolean
sfl_deadletter_is_filling(SflDeadletter *self)
{
	return sfl_deadletter_fill_percent(self) >= 90;
}

static void
update_gauges(SflDeadletter *self)
{
	guint percent = sfl_deadletter_fill_percent(self);

	if (percent >= 90 && !self->warned_full) {
		g_warning("dead-letter store %s is %u%% full (state.deadletter.max_bytes "
			  "%" G_GUINT64_FORMAT
			  "): the oldest segments go next; replay or purge it (sf2loki deadletter)",
			  self->dir, percent, self->max_bytes);
		self->warned_full = TRUE;
	} else if (percent < 80) {
		self->warned_full = FALSE;
	}
	if (self->bytes_series != NULL)
		sfl_series_set(self->bytes_series, (gdouble)sfl_deadletter_get_bytes(self));
}

/**
 * sfl_deadletter_set_metrics:
 * @self: a store
 * @metrics: (transfer none): the registry
 *
 * Records sf2loki_deadletter_entries{reason}, sf2loki_deadletter_bytes,
 * sf2loki_deadletter_max_bytes, sf2loki_deadletter_evicted_segments and
 * sf2loki_deadletter_write_failures from now on.
 */
void
sfl_deadletter_set_metrics(SflDeadletter *self, SflMetrics *metrics)
{
	static const gchar *const reason_label[] = { "reason", NULL };

	self->entries_family = sfl_metrics_counter(
		metrics, "sf2loki_deadletter_entries",
		"Entries written to the dead-letter store, by the reason they never reached Loki.",
		reason_label);
	self->bytes_series = sfl_metric_family_series(
		sfl_metrics_gauge(metrics, "sf2loki_deadletter_bytes",
				  "Bytes the dead-letter store holds now.", NULL),
		NULL);
	sfl_series_set(sfl_metric_family_series(
			       sfl_metrics_gauge(metrics, "sf2loki_deadletter_max_bytes",
						 "The dead-letter store's size bound.", NULL),
			       NULL),
		       (gdouble)self->max_bytes);
	self->evicted_series = sfl_metric_family_series(
		sfl_metrics_counter(metrics, "sf2loki_deadletter_evicted_segments",
				    "Dead-letter segments removed by the size or age bound.", NULL),
		NULL);
	self->failures_series = sfl_metric_family_series(
		sfl_metrics_counter(metrics, "sf2loki_deadletter_write_failures",
				    "Batches the dead-letter store could not write (those entries "
				    "are lost).",
				    NULL),
		NULL);
	update_gauges(self);
}

static Segment *
open_segment(SflDeadletter *self)
{
	return g_ptr_array_index(self->segments, self->segments->len - 1);
}

guint64
sfl_deadletter_get_bytes(SflDeadletter *self)
{
	guint64 total = 0;
	for (guint i = 0; i < self->segments->len; i++)
		total += ((Segment *)g_ptr_array_index(self->segments, i))->bytes;
	return total;
}

const gchar *
sfl_deadletter_get_dir(SflDeadletter *self)
{
	return self->dir;
}

guint64
sfl_deadletter_get_max_bytes(SflDeadletter *self)
{
	return self->max_bytes;
}

guint64
sfl_deadletter_get_evicted_segments(SflDeadletter *self)
{
	return self->evicted;
}

guint
sfl_deadletter_get_n_segments(SflDeadletter *self)
{
	guint n = 0;
	for (guint i = 0; i < self->segments->len; i++)
		n += ((Segment *)g_ptr_array_index(self->segments, i))->bytes > 0;
	return n;
}

void
sfl_deadletter_enforce_bounds(SflDeadletter *self)
{
	gint64 now = sfl_clock_wall_usec(self->clock);

	rescan(self);
	/* closed segments only: the open one is at most one segment_cap and is the newest data */
	while (self->segments->len > 1) {
		Segment *oldest = g_ptr_array_index(self->segments, 0);
		gboolean too_old =
			self->max_age_usec > 0 && now - oldest->newest_usec > self->max_age_usec;
		gboolean too_big = sfl_deadletter_get_bytes(self) > self->max_bytes;
		if (!too_old && !too_big)
			break;
		g_message("dead-letter segment %s removed (%s)", oldest->path,
			  too_old ? "max_age" : "max_bytes");
		remove_segment(self, 0);
		self->evicted++;
		if (self->evicted_series != NULL)
			sfl_series_inc(self->evicted_series);
	}
	update_gauges(self);
}

json_t *
sfl_deadletter_record_new(SflDeadletter *self, const SflEntry *entry, const gchar *reason,
			  const gchar *org)
{
	json_t *labels = json_object();
	json_t *metadata = json_array();
	json_t *record = json_object();

	if (entry->labels != NULL) {
		for (guint i = 0; i < sfl_labels_get_n_pairs(entry->labels); i++) {
			const SflLabelPair *p = sfl_labels_get_pair(entry->labels, i);
			json_object_set_new(labels, p->name, json_string(p->value));
		}
	}
	for (guint i = 0; i < entry->n_metadata; i++)
		json_array_append_new(metadata, json_pack("[ss]", entry->metadata[i].name,
							  entry->metadata[i].value));
	json_object_set_new(record, "labels", labels);
	json_object_set_new(record, "timestamp_ns", json_integer(entry->timestamp_ns));
	json_object_set_new(record, "line", json_stringn(entry->line, entry->line_len));
	json_object_set_new(record, "metadata", metadata);
	json_object_set_new(record, "reason", json_string(reason != NULL ? reason : "unknown"));
	json_object_set_new(record, "checkpoint_key",
			    entry->checkpoint_key != NULL ? json_string(entry->checkpoint_key)
							  : json_null());
	json_object_set_new(record, "org", org != NULL ? json_string(org) : json_null());
	json_object_set_new(record, "captured_usec",
			    json_integer(sfl_clock_wall_usec(self->clock)));
	return record;
}

/*
 * Writes @batch (whole lines) durably; @reasons (one per record) feed the entries counter.
 * Each append rewrites the open segment, so a batch that would carry it past its cap starts
 * a new one: what a batch costs stays near its own size (bench-deadletter). A replay or purge
 * that claimed our open segment (renamed it away) also means a new one: rewriting it would
 * bring back what the claim took.
 */
static gboolean
append_batch(SflDeadletter *self, const GString *batch, const gchar *const *reasons, guint n,
	     GError **error)
{
	Segment *seg;
	gsize before;

	if (open_segment(self)->bytes > 0 &&
	    (open_segment(self)->bytes + batch->len > self->segment_cap ||
	     !g_file_test(open_segment(self)->path, G_FILE_TEST_EXISTS)))
		begin_segment(self);
	seg = open_segment(self);
	before = self->open_text->len;
	g_string_append_len(self->open_text, batch->str, (gssize)batch->len);
	if (!write_segment(seg->path, self->open_text, error)) {
		g_string_truncate(self->open_text, before);
		if (self->failures_series != NULL)
			sfl_series_inc(self->failures_series);
		return FALSE;
	}
	for (guint i = 0; self->entries_family != NULL && i < n; i++)
		sfl_series_inc(sfl_metric_family_series(
			self->entries_family,
			(const gchar *[]){ reasons[i] != NULL ? reasons[i] : "unknown" }));
	seg->bytes = self->open_text->len;
	seg->newest_usec = sfl_clock_wall_usec(self->clock);
	sfl_deadletter_enforce_bounds(self);
	return TRUE;
}

gboolean
sfl_deadletter_append(SflDeadletter *self, json_t *const *records, guint n_records, GError **error)
{
	g_autoptr(GString) batch = g_string_new(NULL);
	g_autofree const gchar **reasons = g_new0(const gchar *, n_records + 1);

	if (n_records == 0)
		return TRUE;
	for (guint i = 0; i < n_records; i++) {
		g_autofree gchar *text = json_dumps(records[i], JSON_COMPACT | JSON_ENSURE_ASCII);
		g_string_append(batch, text);
		g_string_append_c(batch, '\n');
		reasons[i] = json_string_value(json_object_get(records[i], "reason"));
	}
	return append_batch(self, batch, reasons, n_records, error);
}

/* a JSON string of possibly invalid UTF-8: invalid bytes become U+FFFD, as jansson would refuse */
static void
append_json_string(GString *out, const gchar *s, gssize len)
{
	gsize n = len < 0 ? strlen(s) : (gsize)len;

	if (g_utf8_validate_len(s, n, NULL)) {
		sfl_json_append_utf8(out, s, n);
	} else {
		g_autofree gchar *valid = g_utf8_make_valid(s, (gssize)n);
		sfl_json_append_utf8(out, valid, strlen(valid));
	}
}

static void
append_json_string_or_null(GString *out, const gchar *s)
{
	if (s == NULL)
		g_string_append(out, "null");
	else
		append_json_string(out, s, -1);
}

/*
 * One record as a line, written directly: the refused batches of a budget drop come a
 * thousand entries at a time, and building jansson objects for them cost ten times the I/O
 * (bench-deadletter). The reader is jansson, so the two cannot drift apart unnoticed
 * (test-deadletter reads every field back).
 */
static void
append_record_text(GString *out, const SflEntry *entry, const gchar *reason, const gchar *org,
		   gint64 now_usec)
{
	g_string_append(out, "{\"labels\":{");
	if (entry->labels != NULL) {
		for (guint i = 0; i < sfl_labels_get_n_pairs(entry->labels); i++) {
			const SflLabelPair *p = sfl_labels_get_pair(entry->labels, i);
			if (i > 0)
				g_string_append_c(out, ',');
			append_json_string(out, p->name, -1);
			g_string_append_c(out, ':');
			append_json_string(out, p->value, -1);
		}
	}
	g_string_append_printf(
		out, "},\"timestamp_ns\":%" G_GINT64_FORMAT ",\"line\":", entry->timestamp_ns);
	append_json_string(out, entry->line, (gssize)entry->line_len);
	g_string_append(out, ",\"metadata\":[");
	for (guint i = 0; i < entry->n_metadata; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		g_string_append_c(out, '[');
		append_json_string(out, entry->metadata[i].name, -1);
		g_string_append_c(out, ',');
		append_json_string(out, entry->metadata[i].value, -1);
		g_string_append_c(out, ']');
	}
	g_string_append(out, "],\"reason\":");
	append_json_string(out, reason != NULL ? reason : "unknown", -1);
	g_string_append(out, ",\"checkpoint_key\":");
	append_json_string_or_null(out, entry->checkpoint_key);
	g_string_append(out, ",\"org\":");
	append_json_string_or_null(out, org);
	g_string_append_printf(out, ",\"captured_usec\":%" G_GINT64_FORMAT "}\n", now_usec);
}

gboolean
sfl_deadletter_append_refused(SflDeadletter *self, SflEntry *const *entries,
			      const gchar *const *reasons, const gchar *const *orgs,
			      guint n_entries, GError **error)
{
	g_autoptr(GString) batch = g_string_new(NULL);
	g_autofree const gchar **kept = g_new0(const gchar *, n_entries + 1);
	gint64 now = sfl_clock_wall_usec(self->clock);
	guint n = 0;

	for (guint i = 0; i < n_entries; i++) {
		if (entries[i]->checkpoint_only)
			continue;
		append_record_text(batch, entries[i], reasons[i], orgs != NULL ? orgs[i] : NULL,
				   now);
		kept[n++] = reasons[i];
	}
	if (n == 0)
		return TRUE;
	return append_batch(self, batch, kept, n, error);
}

gboolean
sfl_deadletter_append_entries(SflDeadletter *self, SflEntry *const *entries, guint n_entries,
			      const gchar *reason, const gchar *org, GError **error)
{
	g_autofree const gchar **reasons = g_new0(const gchar *, n_entries + 1);
	g_autofree const gchar **orgs = g_new0(const gchar *, n_entries + 1);

	for (guint i = 0; i < n_entries; i++) {
		reasons[i] = reason;
		orgs[i] = org;
	}
	return sfl_deadletter_append_refused(self, entries, reasons, orgs, n_entries, error);
}

guint
sfl_deadletter_parse_segment(const gchar *data, gsize len, GPtrArray *out)
{
	guint bad = 0;
	gsize pos = 0;
	while (pos < len) {
		const gchar *nl = memchr(data + pos, '\n', len - pos);
		gsize end = nl != NULL ? (gsize)(nl - data) : len;
		if (end > pos) {
			json_error_t jerr;
			json_t *value =
				json_loadb(data + pos, end - pos, JSON_REJECT_DUPLICATES, &jerr);
			if (value != NULL && json_is_object(value))
				g_ptr_array_add(out, value);
			else {
				if (value != NULL)
					json_decref(value);
				bad++;
			}
		}
		pos = end + 1;
	}
	return bad;
}

/* the records of one segment file into @out; returns its damaged lines, warned about as @name */
static guint
read_records(const gchar *path, const gchar *name, GPtrArray *out)
{
	gsize len = 0;
	g_autofree gchar *data = read_segment(path, &len);
	guint bad;

	if (data == NULL)
		return 0;
	bad = sfl_deadletter_parse_segment(data, len, out);
	if (bad > 0)
		g_warning("dead-letter segment %s: %u damaged line(s) skipped", name, bad);
	return bad;
}

GPtrArray *
sfl_deadletter_read_all(SflDeadletter *self, guint *n_skipped)
{
	GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)json_decref);
	guint skipped = 0;

	rescan(self);
	for (guint i = 0; i < self->segments->len; i++) {
		Segment *seg = g_ptr_array_index(self->segments, i);

		if (seg->bytes == 0)
			continue;
		skipped += read_records(seg->path, seg->path, out);
	}
	if (n_skipped != NULL)
		*n_skipped = skipped;
	return out;
}

static void
restore_claimed(SflDeadletter *self)
{
	for (guint i = 0; i < self->claimed->len; i++) {
		const gchar *path = g_ptr_array_index(self->claimed, i);
		g_autofree gchar *base = g_path_get_basename(path);
		g_autofree gchar *dir = g_path_get_dirname(path);
		g_autofree gchar *back = g_build_filename(dir, base + strlen(CLAIM_PREFIX), NULL);
		if (g_rename(path, back) != 0)
			g_warning("cannot restore dead-letter segment %s: %s", path,
				  g_strerror(errno));
	}
	g_ptr_array_set_size(self->claimed, 0);
}

/* segments a claimer that died left behind go back first: nothing is lost to a crash */
static void
recover_claims(SflDeadletter *self)
{
	g_autoptr(GDir) gdir = g_dir_open(self->dir, 0, NULL);
	const gchar *name;

	while (gdir != NULL && (name = g_dir_read_name(gdir)) != NULL) {
		if (g_str_has_prefix(name, CLAIM_PREFIX SEGMENT_PREFIX) &&
		    g_str_has_suffix(name, SEGMENT_SUFFIX)) {
			g_warning(
				"dead-letter segment %s was claimed by a run that did not finish; "
				"restored",
				name + strlen(CLAIM_PREFIX));
			g_ptr_array_add(self->claimed, g_build_filename(self->dir, name, NULL));
		}
	}
	restore_claimed(self);
}

GPtrArray *
sfl_deadletter_claim(SflDeadletter *self, guint *n_skipped, GError **error)
{
	g_autofree gchar *lock_path = g_build_filename(self->dir, CLAIM_LOCK, NULL);
	GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)json_decref);
	SflPlatformError perr = { 0 };
	int64_t holder = 0;
	guint skipped = 0;
	SflPlatformStatus status;

	g_return_val_if_fail(self->claim_lock == NULL, NULL);
	status = sfl_platform_lock_acquire(lock_path, &self->claim_lock, &holder, &perr);
	if (status != SFL_PLATFORM_OK) {
		if (status == SFL_PLATFORM_ERR_BUSY)
			g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
				    "another replay or purge holds %s (%s)", lock_path,
				    perr.message);
		else
			g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT, "cannot lock %s: %s",
				    lock_path, perr.message);
		g_ptr_array_unref(out);
		return NULL;
	}
	recover_claims(self);
	rescan(self);
	for (guint i = 0; i < self->segments->len; i++) {
		Segment *seg = g_ptr_array_index(self->segments, i);
		g_autofree gchar *base = g_path_get_basename(seg->path);
		g_autofree gchar *claimed = g_strconcat(CLAIM_PREFIX, base, NULL);
		g_autofree gchar *target = g_build_filename(self->dir, claimed, NULL);

		/* an appender that finds its open segment gone starts a new one: the rename is
		 * the whole hand-over */
		if (g_rename(seg->path, target) != 0)
			continue;
		g_ptr_array_add(self->claimed, g_strdup(target));
		skipped += read_records(target, seg->path, out);
	}
	/* ours went too (a CLI's own is empty): the next append begins a fresh one */
	g_ptr_array_set_size(self->segments, 0);
	begin_segment(self);
	update_gauges(self);
	if (n_skipped != NULL)
		*n_skipped = skipped;
	return out;
}

static void
release_claim(SflDeadletter *self)
{
	sfl_platform_lock_release(self->claim_lock);
	self->claim_lock = NULL;
}

gboolean
sfl_deadletter_settle_claim(SflDeadletter *self, GPtrArray *keep, GError **error)
{
	g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);

	g_return_val_if_fail(self->claim_lock != NULL, FALSE);
	/* what stays is written before the claimed segments go: a crash between duplicates */
	for (guint i = 0; i < keep->len;) {
		guint n = 0;
		gsize bytes = 0;

		/* one append per segment's worth, so no segment grows far past its cap */
		while (i + n < keep->len && (n == 0 || bytes < self->segment_cap)) {
			g_autofree gchar *text = json_dumps(g_ptr_array_index(keep, i + n),
							    JSON_COMPACT | JSON_ENSURE_ASCII);
			bytes += strlen(text) + 1;
			n++;
		}
		if (!sfl_deadletter_append(self, (json_t *const *)keep->pdata + i, n, error)) {
			/* the claimed ones are still whole and go back; the new ones would
			 * duplicate them */
			for (guint j = 0; j < written->len; j++)
				g_remove(g_ptr_array_index(written, j));
			g_ptr_array_set_size(self->segments, 0);
			begin_segment(self);
			sfl_deadletter_abort_claim(self);
			return FALSE;
		}
		if (written->len == 0 || g_strcmp0(g_ptr_array_index(written, written->len - 1),
						   open_segment(self)->path) != 0)
			g_ptr_array_add(written, g_strdup(open_segment(self)->path));
		i += n;
	}
	for (guint i = 0; i < self->claimed->len; i++) {
		const gchar *path = g_ptr_array_index(self->claimed, i);
		SflPlatformError perr = { 0 };
		SflPlatformStatus status = sfl_platform_remove_file(path, &perr);
		if (status != SFL_PLATFORM_OK && status != SFL_PLATFORM_ERR_NOT_FOUND)
			g_warning("cannot remove dead-letter segment %s: %s", path, perr.message);
	}
	g_ptr_array_set_size(self->claimed, 0);
	release_claim(self);
	return TRUE;
}

void
sfl_deadletter_abort_claim(SflDeadletter *self)
{
	if (self->claim_lock == NULL)
		return;
	restore_claimed(self);
	release_claim(self);
}
