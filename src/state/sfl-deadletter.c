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

#define SEGMENT_PREFIX "seg-"
#define SEGMENT_SUFFIX ".jsonl"
/* each append rewrites the open segment, so it stays small: the cost of a batch is bounded */
#define SEGMENT_MIN_BYTES (16 * 1024)
#define SEGMENT_MAX_BYTES (4 * 1024 * 1024)
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
		SEGMENT_PREFIX "%020" G_GINT64_FORMAT "-%06" G_GUINT64_FORMAT SEGMENT_SUFFIX, now,
		self->seq++ % 1000000);
	seg->path = g_build_filename(self->dir, name, NULL);
	seg->newest_usec = now;
	g_ptr_array_add(self->segments, seg);
	g_string_truncate(self->open_text, 0);
	return seg;
}

SflDeadletter *
sfl_deadletter_open(const gchar *dir, guint64 max_bytes, gint64 max_age_usec, SflClock *clock,
		    GError **error)
{
	g_autoptr(GDir) gdir = NULL;
	g_autoptr(GPtrArray) names = NULL;
	SflDeadletter *self;
	const gchar *name;

	g_return_val_if_fail(dir != NULL && clock != NULL, NULL);
	if (g_mkdir_with_parents(dir, 0700) != 0) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT,
			    "cannot create dead-letter directory %s: %s", dir, g_strerror(errno));
		return NULL;
	}
	gdir = g_dir_open(dir, 0, error);
	if (gdir == NULL)
		return NULL;

	self = g_new0(SflDeadletter, 1);
	self->dir = g_strdup(dir);
	self->max_bytes = max_bytes;
	self->max_age_usec = max_age_usec;
	self->segment_cap = CLAMP(max_bytes / 8, SEGMENT_MIN_BYTES, SEGMENT_MAX_BYTES);
	self->clock = sfl_clock_ref(clock);
	self->segments = g_ptr_array_new_with_free_func(segment_free);
	self->open_text = g_string_new(NULL);

	names = g_ptr_array_new_with_free_func(g_free);
	while ((name = g_dir_read_name(gdir)) != NULL) {
		if (g_str_has_prefix(name, SEGMENT_PREFIX) &&
		    g_str_has_suffix(name, SEGMENT_SUFFIX))
			g_ptr_array_add(names, g_strdup(name));
	}
	g_ptr_array_sort(names, compare_names);
	for (guint i = 0; i < names->len; i++) {
		Segment *seg = g_new0(Segment, 1);
		GStatBuf st;

		seg->path = g_build_filename(dir, g_ptr_array_index(names, i), NULL);
		if (g_stat(seg->path, &st) == 0) {
			seg->bytes = (guint64)st.st_size;
			seg->newest_usec = (gint64)st.st_mtime * G_USEC_PER_SEC;
		}
		g_ptr_array_add(self->segments, seg);
	}
	/* appends never go into an old segment: a damaged tail stays where it is, readable around
	 */
	begin_segment(self);
	sfl_deadletter_enforce_bounds(self);
	return self;
}

void
sfl_deadletter_free(SflDeadletter *self)
{
	if (self == NULL)
		return;
	g_free(self->dir);
	sfl_clock_unref(self->clock);
	g_ptr_array_unref(self->segments);
	g_string_free(self->open_text, TRUE);
	g_free(self);
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
	}
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

gboolean
sfl_deadletter_append(SflDeadletter *self, json_t *const *records, guint n_records, GError **error)
{
	Segment *seg;
	gsize before;

	if (n_records == 0)
		return TRUE;
	if (open_segment(self)->bytes >= self->segment_cap)
		begin_segment(self);
	seg = open_segment(self);
	before = self->open_text->len;
	for (guint i = 0; i < n_records; i++) {
		g_autofree gchar *text = json_dumps(records[i], JSON_COMPACT | JSON_ENSURE_ASCII);
		g_string_append(self->open_text, text);
		g_string_append_c(self->open_text, '\n');
	}
	if (!write_segment(seg->path, self->open_text, error)) {
		g_string_truncate(self->open_text, before);
		return FALSE;
	}
	seg->bytes = self->open_text->len;
	seg->newest_usec = sfl_clock_wall_usec(self->clock);
	sfl_deadletter_enforce_bounds(self);
	return TRUE;
}

gboolean
sfl_deadletter_append_entries(SflDeadletter *self, SflEntry *const *entries, guint n_entries,
			      const gchar *reason, const gchar *org, GError **error)
{
	g_autoptr(GPtrArray) records = g_ptr_array_new_with_free_func((GDestroyNotify)json_decref);
	for (guint i = 0; i < n_entries; i++) {
		if (!entries[i]->checkpoint_only)
			g_ptr_array_add(records,
					sfl_deadletter_record_new(self, entries[i], reason, org));
	}
	return sfl_deadletter_append(self, (json_t *const *)records->pdata, records->len, error);
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

GPtrArray *
sfl_deadletter_read_all(SflDeadletter *self, guint *n_skipped)
{
	GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)json_decref);
	guint skipped = 0;
	for (guint i = 0; i < self->segments->len; i++) {
		Segment *seg = g_ptr_array_index(self->segments, i);
		g_autofree gchar *data = NULL;
		gsize len = 0;
		guint bad;

		if (seg->bytes == 0)
			continue;
		data = read_segment(seg->path, &len);
		if (data == NULL)
			continue;
		bad = sfl_deadletter_parse_segment(data, len, out);
		if (bad > 0)
			g_warning("dead-letter segment %s: %u damaged line(s) skipped", seg->path,
				  bad);
		skipped += bad;
	}
	if (n_skipped != NULL)
		*n_skipped = skipped;
	return out;
}

gboolean
sfl_deadletter_rewrite(SflDeadletter *self, GPtrArray *keep, GError **error)
{
	/* new segments first, then the old ones go: a crash in between duplicates, never loses */
	g_autoptr(GPtrArray) old = self->segments;
	Segment *seg;

	self->segments = g_ptr_array_new_with_free_func(segment_free);
	seg = begin_segment(self);
	for (guint i = 0; i < keep->len; i++) {
		g_autofree gchar *text =
			json_dumps(g_ptr_array_index(keep, i), JSON_COMPACT | JSON_ENSURE_ASCII);
		g_string_append(self->open_text, text);
		g_string_append_c(self->open_text, '\n');
		if (self->open_text->len >= self->segment_cap || i + 1 == keep->len) {
			if (!write_segment(seg->path, self->open_text, error)) {
				/* the old segments are still whole: keep them, drop the partial new
				 * ones */
				for (guint j = 0; j < self->segments->len; j++)
					g_remove(((Segment *)g_ptr_array_index(self->segments, j))
							 ->path);
				g_ptr_array_unref(self->segments);
				self->segments = g_steal_pointer(&old);
				begin_segment(self);
				return FALSE;
			}
			seg->bytes = self->open_text->len;
			if (i + 1 < keep->len)
				seg = begin_segment(self);
		}
	}
	for (guint i = 0; i < old->len; i++) {
		Segment *o = g_ptr_array_index(old, i);
		SflPlatformError perr = { 0 };
		SflPlatformStatus status = sfl_platform_remove_file(o->path, &perr);
		if (status != SFL_PLATFORM_OK && status != SFL_PLATFORM_ERR_NOT_FOUND)
			g_warning("cannot remove dead-letter segment %s: %s", o->path,
				  perr.message);
	}
	return TRUE;
}
