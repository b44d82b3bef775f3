/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflElfSource"

#include "config.h"

#include "sfl-elf-source.h"
#include "sfl-elf-source-private.h"

#include <string.h>

#include "sfl-csv.h"
#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-pyjson.h"
#include "sfl-record.h"
#include "sfl-shape.h"

/* one cursor per EventType: "eventlogfile:<type>" (the original's keys) */
#define SFL_ELF_KEY_PREFIX "eventlogfile:"
/* backfill: "backfill:[org=<name>:]<interval>:<type>" (the original's backfill keys) */
#define SFL_ELF_BACKFILL_PREFIX "backfill:"

/*
 * Runtime model: one cycle at a time; within a cycle one job per EventType, at most
 * `concurrency` running. A job walks its type's listing file by file; each file is one
 * streamed download feeding the CSV parser, whose record callback shapes the row and offers
 * the previous one (one-row lookahead, so the last row can carry the file's checkpoint).
 * When the lane refuses an entry the parser stops, the download pauses, and the job parks
 * until the lane has room.
 */

#define SFL_ELF_WINDOW_OLDER 200  /* older carried ids kept besides the boundary set */
#define SFL_ELF_WINDOW_WARN  5000 /* boundary set size worth a warning */
#define SFL_ELF_SKEW_APPLY   (30 * G_USEC_PER_SEC)
/*
 * While a file is in flight its rows carry, every this many rows, a cursor that also names
 * how far into the file they are (`in_flight`), so a restart or a failover re-reads the file
 * but re-sends only from the last committed mark (docs/sources/eventlogfile.md, "Resuming
 * inside a file"): the duplicates of a failover are the entries in flight plus fewer than
 * this many rows, not the whole file.
 */
#define SFL_ELF_RESUME_EVERY 100
#define SFL_ELF_SKEW_WARN    (60 * G_USEC_PER_SEC)

typedef struct {
	gchar *id;
	gchar *created; /* NULL: a legacy bare id, matches any CreatedDate */
} SflElfId;

/* one EventType's configuration and cursor, kept for the whole term */
typedef struct {
	gchar *name;
	gchar *key;
	GStrv metadata_fields;
	GStrv promoted;
	gdouble sample;
	SflLabels *labels; /* when nothing is promoted */
	gboolean loaded;
	gchar *last_created; /* NULL: first run */
	GPtrArray *ids;	     /* SflElfId */
	gchar *current;	     /* JSON of the cursor, NULL before the first file */
	gchar *resume_id;    /* (nullable): the file a committed `in_flight` names */
	guint64 resume_rows; /* its data rows already delivered */
	guint failures;	     /* consecutive contained failures */
	gchar *legacy_key; /* backfill, first org: the unprefixed key a missing one falls back to */
	gboolean at_until; /* backfill: the listing reached --until */
	/* this type's instruments (NULL without a registry) */
	SflSeries *m_files;
	SflSeries *m_rows;
	SflSeries *m_bytes;
} SflElfType;

typedef enum {
	SFL_ELF_PHASE_PARSING,
	SFL_ELF_PHASE_FINISHING,
	SFL_ELF_PHASE_COMPLETING,
} SflElfPhase;

/* a shaped row waiting to become an entry */
typedef struct {
	SflRecord *record;
	SflShaped shaped; /* its metadata strings live in record's arena */
	SflLabels *labels;
	gboolean valid;
	guint64 no; /* its data row number in the file, from 1 */
} SflElfRow;

typedef struct _SflElfSource SflElfSource;

typedef struct {
	SflElfSource *self; /* strong */
	SflElfType *type;
	gboolean dead;	   /* the source stopped: finish quietly */
	gboolean in_query; /* a listing or store load is in flight */
	json_t *files;
	guint file_idx;
	guint page_started; /* backfill: files of this page read (or counted, in a dry run) */
	/* the current file */
	const gchar *file_id;
	const gchar *file_created;
	gboolean created_ok;
	gint64 created_usec;
	GRefString *pre; /* shared by every row of the file but the last */
	GRefString *post;
	GPtrArray *post_ids; /* the window @post renders, adopted when the file is done */
	SflSfDownload *download;
	SflCsvParser *parser;
	GStrv header;
	guint n_header;
	guint64 data_rows;
	guint64 skip_rows;  /* resuming: data rows delivered before the restart */
	guint64 mark_rows;  /* the rows the current @pre says were delivered */
	guint64 offered_no; /* the last data row handed to the lane */
	guint64 pending_no; /* the data row of @pending */
	SflElfRow rows[2];
	guint held; /* index of the row in lookahead */
	SflEntry *pending;
	SflElfPhase phase;
	gboolean parser_stopped;
	gboolean download_paused;
	gboolean download_done;
	GError *download_error;
	GSource *idle;
	GString *scratch;
} SflElfJob;

struct _SflElfSource {
	SflSource parent_instance;
	SflSfRest *rest;
	const SflEventLogFileConfig *config;
	const SflSourcesConfig *sources;
	SflTransforms *transforms;
	gboolean wildcard;
	gdouble wildcard_sample;
	GStrv wildcard_metadata;
	GHashTable *types; /* name → SflElfType */
	GCancellable *cancellable;
	GSource *timer;
	GRand *rand;
	/* the cycle */
	gboolean in_cycle;
	GPtrArray *queue; /* SflElfType, waiting for a job slot */
	GPtrArray *jobs;  /* SflElfJob, running */
	gboolean throttled;
	gint64 cycle_now;
	gint64 cycle_started;
	gboolean skew_warned;
	SflElfCounters counters;
	gint interval;	   /* SflElfInterval: the configured one, or the backfill's */
	guint concurrency; /* jobs at once */
	/* backfill mode (sfl_elf_source_new_backfill()), else NULL; its types in @backfill_types */
	SflElfBackfillOptions *backfill;
	GStrv backfill_types;
	guint64 ingest_seq; /* --ingest-timestamps: entries timed so far */
};

G_DEFINE_FINAL_TYPE(SflElfSource, sfl_elf_source, SFL_TYPE_SOURCE)

static void sfl_elf_job_next_file(SflElfJob *job);
static void sfl_elf_job_list(SflElfJob *job);
static void sfl_elf_job_continue(SflElfJob *job);
static void sfl_elf_job_done(SflElfJob *job);
static void sfl_elf_cycle_pump(SflElfSource *self);

/* --- the cursor ----------------------------------------------------------------------------- */

static void
sfl_elf_id_free(gpointer data)
{
	SflElfId *id = data;
	if (id == NULL)
		return;
	g_free(id->id);
	g_free(id->created);
	g_free(id);
}

static void
sfl_elf_type_free(gpointer data)
{
	SflElfType *type = data;
	g_free(type->name);
	g_free(type->key);
	g_strfreev(type->metadata_fields);
	g_strfreev(type->promoted);
	g_clear_pointer(&type->labels, sfl_labels_unref);
	g_free(type->last_created);
	g_ptr_array_unref(type->ids);
	g_free(type->current);
	g_free(type->resume_id);
	g_free(type->legacy_key);
	g_free(type);
}

/*
 * {"ids": [["<Id>", "<CreatedDate>"], ...], "last_created": "..."}: json.dumps, sorted keys.
 * With @in_flight_id, also "in_flight": {"id": ..., "rows": N} between the two, where the
 * original's reader (which reads "ids" and "last_created" only) does not look.
 */
static gchar *
sfl_elf_cursor_render_full(GPtrArray *ids, const gchar *last_created, const gchar *in_flight_id,
			   guint64 in_flight_rows)
{
	GString *out = g_string_sized_new(64 + ids->len * 48);

	g_string_append(out, "{\"ids\": [");
	for (guint i = 0; i < ids->len; i++) {
		SflElfId *id = g_ptr_array_index(ids, i);
		if (i > 0)
			g_string_append(out, ", ");
		if (id->created == NULL) {
			sfl_pyjson_append_string(out, id->id);
			continue;
		}
		g_string_append_c(out, '[');
		sfl_pyjson_append_string(out, id->id);
		g_string_append(out, ", ");
		sfl_pyjson_append_string(out, id->created);
		g_string_append_c(out, ']');
	}
	g_string_append(out, "], ");
	if (in_flight_id != NULL) {
		g_string_append(out, "\"in_flight\": {\"id\": ");
		sfl_pyjson_append_string(out, in_flight_id);
		g_string_append_printf(out, ", \"rows\": %" G_GUINT64_FORMAT "}, ", in_flight_rows);
	}
	g_string_append(out, "\"last_created\": ");
	sfl_pyjson_append_string(out, last_created != NULL ? last_created : "");
	g_string_append_c(out, '}');
	return g_string_free(out, FALSE);
}

static gchar *
sfl_elf_cursor_render(GPtrArray *ids, const gchar *last_created)
{
	return sfl_elf_cursor_render_full(ids, last_created, NULL, 0);
}

/*
 * decodes a stored value; FALSE for anything that is not the documented object (SFL-0019). An
 * `in_flight` that does not read as {"id": string, "rows": integer ≥ 0} is ignored: the file
 * is then read whole, as the original would.
 */
static gboolean
sfl_elf_cursor_parse(const gchar *value, gchar **last_created, GPtrArray *ids, gchar **resume_id,
		     guint64 *resume_rows)
{
	g_autoptr(GPtrArray) parsed = g_ptr_array_new_with_free_func(sfl_elf_id_free);
	json_t *root = json_loads(value, JSON_REJECT_DUPLICATES, NULL);
	json_t *jids = NULL;
	json_t *jlast = NULL;
	gint64 usec = 0;
	gsize i = 0;
	json_t *item = NULL;

	if (root == NULL)
		return FALSE;
	if (!json_is_object(root)) {
		json_decref(root);
		return FALSE;
	}
	jlast = json_object_get(root, "last_created");
	jids = json_object_get(root, "ids");
	if ((jlast != NULL && !json_is_string(jlast) && !json_is_null(jlast)) ||
	    (jids != NULL && !json_is_array(jids))) {
		json_decref(root);
		return FALSE;
	}
	if (jlast != NULL && json_is_string(jlast) && json_string_length(jlast) > 0 &&
	    !sfl_parse_iso_datetime(json_string_value(jlast), &usec)) {
		json_decref(root);
		return FALSE;
	}
	json_array_foreach (jids, i, item) {
		SflElfId *id = g_new0(SflElfId, 1);
		if (json_is_string(item)) {
			id->id = g_strdup(json_string_value(item));
		} else if (json_is_array(item) && json_array_size(item) == 2 &&
			   json_is_string(json_array_get(item, 0))) {
			json_t *created = json_array_get(item, 1);
			id->id = g_strdup(json_string_value(json_array_get(item, 0)));
			if (json_is_string(created))
				id->created = g_strdup(json_string_value(created));
		} else {
			g_free(id);
			json_decref(root);
			return FALSE;
		}
		g_ptr_array_add(parsed, id);
	}
	*last_created = jlast != NULL && json_is_string(jlast) && json_string_length(jlast) > 0
				? g_strdup(json_string_value(jlast))
				: NULL;
	{
		json_t *flight = json_object_get(root, "in_flight");
		json_t *fid = json_object_get(flight, "id");
		json_t *frows = json_object_get(flight, "rows");

		*resume_id = NULL;
		*resume_rows = 0;
		if (json_is_string(fid) && json_is_integer(frows) &&
		    json_integer_value(frows) >= 0) {
			*resume_id = g_strdup(json_string_value(fid));
			*resume_rows = (guint64)json_integer_value(frows);
		}
	}
	for (guint k = 0; k < parsed->len; k++)
		g_ptr_array_add(ids, g_steal_pointer(&parsed->pdata[k]));
	json_decref(root);
	return TRUE;
}

gchar *
sfl_elf_cursor_normalize(const gchar *value)
{
	g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func(sfl_elf_id_free);
	g_autofree gchar *last_created = NULL;
	g_autofree gchar *resume_id = NULL;
	guint64 resume_rows = 0;

	if (!sfl_elf_cursor_parse(value, &last_created, ids, &resume_id, &resume_rows))
		return NULL;
	return sfl_elf_cursor_render_full(ids, last_created, resume_id, resume_rows);
}

/*
 * The backfill cursor, the original's: {"done_ids": [...], "last_created": "..."} (json.dumps,
 * sorted keys), done_ids being the files read at exactly last_created; the window's older ids
 * are not rendered (the listing starts at last_created, so they never come back). With
 * @in_flight_id, also the `in_flight` mark, between the two in sorted order, where the
 * original's reader does not look.
 */
static gchar *
sfl_elf_backfill_render(GPtrArray *ids, const gchar *last_created, const gchar *in_flight_id,
			guint64 in_flight_rows)
{
	GString *out = g_string_sized_new(64 + ids->len * 24);
	gboolean first = TRUE;

	g_string_append(out, "{\"done_ids\": [");
	for (guint i = 0; i < ids->len; i++) {
		SflElfId *id = g_ptr_array_index(ids, i);
		if (id->created == NULL || g_strcmp0(id->created, last_created) != 0)
			continue;
		if (!first)
			g_string_append(out, ", ");
		first = FALSE;
		sfl_pyjson_append_string(out, id->id);
	}
	g_string_append(out, "], ");
	if (in_flight_id != NULL) {
		g_string_append(out, "\"in_flight\": {\"id\": ");
		sfl_pyjson_append_string(out, in_flight_id);
		g_string_append_printf(out, ", \"rows\": %" G_GUINT64_FORMAT "}, ", in_flight_rows);
	}
	g_string_append(out, "\"last_created\": ");
	sfl_pyjson_append_string(out, last_created != NULL ? last_created : "");
	g_string_append_c(out, '}');
	return g_string_free(out, FALSE);
}

/* a stored backfill value; FALSE for anything that is not the documented object */
static gboolean
sfl_elf_backfill_parse(const gchar *value, gchar **last_created, GPtrArray *ids, gchar **resume_id,
		       guint64 *resume_rows)
{
	json_t *root = json_loads(value, JSON_REJECT_DUPLICATES, NULL);
	json_t *jdone = NULL;
	json_t *jlast = NULL;
	json_t *flight = NULL;
	gint64 usec = 0;
	gsize i = 0;
	json_t *item = NULL;
	const gchar *last = NULL;

	if (root == NULL)
		return FALSE;
	jdone = json_object_get(root, "done_ids");
	jlast = json_object_get(root, "last_created");
	if (!json_is_object(root) || (jdone != NULL && !json_is_array(jdone)) ||
	    (jlast != NULL && !json_is_string(jlast) && !json_is_null(jlast))) {
		json_decref(root);
		return FALSE;
	}
	last = json_is_string(jlast) && json_string_length(jlast) > 0 ? json_string_value(jlast)
								      : NULL;
	if (last != NULL && !sfl_parse_iso_datetime(last, &usec)) {
		json_decref(root);
		return FALSE;
	}
	json_array_foreach (jdone, i, item) {
		if (!json_is_string(item)) {
			json_decref(root);
			return FALSE;
		}
	}
	json_array_foreach (jdone, i, item) {
		SflElfId *id = g_new0(SflElfId, 1);
		id->id = g_strdup(json_string_value(item));
		id->created = g_strdup(last);
		g_ptr_array_add(ids, id);
	}
	*last_created = g_strdup(last);
	flight = json_object_get(root, "in_flight");
	*resume_id = NULL;
	*resume_rows = 0;
	if (json_is_string(json_object_get(flight, "id")) &&
	    json_is_integer(json_object_get(flight, "rows")) &&
	    json_integer_value(json_object_get(flight, "rows")) >= 0) {
		*resume_id = g_strdup(json_string_value(json_object_get(flight, "id")));
		*resume_rows = (guint64)json_integer_value(json_object_get(flight, "rows"));
	}
	json_decref(root);
	return TRUE;
}

gchar *
sfl_elf_backfill_cursor_normalize(const gchar *value)
{
	g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func(sfl_elf_id_free);
	g_autofree gchar *last_created = NULL;
	g_autofree gchar *resume_id = NULL;
	guint64 resume_rows = 0;

	if (!sfl_elf_backfill_parse(value, &last_created, ids, &resume_id, &resume_rows))
		return NULL;
	return sfl_elf_backfill_render(ids, last_created, resume_id, resume_rows);
}

/* the cursor in this source's format: the daemon's, or the backfill's */
static gchar *
sfl_elf_render(SflElfSource *self, GPtrArray *ids, const gchar *last_created,
	       const gchar *in_flight_id, guint64 in_flight_rows)
{
	if (self->backfill != NULL)
		return sfl_elf_backfill_render(ids, last_created, in_flight_id, in_flight_rows);
	return sfl_elf_cursor_render_full(ids, last_created, in_flight_id, in_flight_rows);
}

/* already processed: carried with a legacy, equal or newer CreatedDate
 * (docs/sources/eventlogfile.md) */
static gboolean
sfl_elf_already_processed(SflElfType *type, const gchar *id, const gchar *created)
{
	for (guint i = 0; i < type->ids->len; i++) {
		SflElfId *c = g_ptr_array_index(type->ids, i);
		gint64 a = 0;
		gint64 b = 0;

		if (!g_str_equal(c->id, id))
			continue;
		if (c->created == NULL || g_strcmp0(c->created, created) == 0)
			return TRUE;
		if (created != NULL && sfl_parse_iso_datetime(created, &a) &&
		    sfl_parse_iso_datetime(c->created, &b))
			return a <= b;
		return FALSE;
	}
	return FALSE;
}

/* folds a file into a copy of the window: the boundary set stays whole, older ids are capped */
static GPtrArray *
sfl_elf_fold(SflElfType *type, const gchar *id, const gchar *created)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(sfl_elf_id_free);
	guint older = 0;
	guint boundary = 0;
	g_autoptr(GPtrArray) all = g_ptr_array_new();
	SflElfId self = { (gchar *)id, (gchar *)created };

	for (guint i = 0; i < type->ids->len; i++) {
		SflElfId *c = g_ptr_array_index(type->ids, i);
		if (!g_str_equal(c->id, id))
			g_ptr_array_add(all, c);
	}
	g_ptr_array_add(all, &self);
	for (guint i = 0; i < all->len; i++) {
		SflElfId *c = g_ptr_array_index(all, i);
		if (c->created == NULL || g_strcmp0(c->created, created) != 0)
			older++;
	}
	for (guint i = 0; i < all->len; i++) {
		SflElfId *c = g_ptr_array_index(all, i);
		SflElfId *copy = NULL;
		gboolean at_boundary = c->created != NULL && g_strcmp0(c->created, created) == 0;

		if (!at_boundary && older-- > SFL_ELF_WINDOW_OLDER)
			continue;
		boundary += at_boundary;
		copy = g_new0(SflElfId, 1);
		copy->id = g_strdup(c->id);
		copy->created = g_strdup(c->created);
		g_ptr_array_add(out, copy);
	}
	if (boundary > SFL_ELF_WINDOW_WARN)
		g_warning("eventlogfile %s: %u files share CreatedDate %s; the carried id window "
			  "keeps them all",
			  type->name, boundary, created);
	return out;
}

/* --- types ---------------------------------------------------------------------------------- */

/*
 * The labels of @type's entries besides the deployment's and the promoted ones: source and
 * event_type, and backfill="true" for a backfill that keeps the rows' own times (the
 * original's label, so backfilled streams can be told from live ones). Fills @pairs[3].
 */
static guint
sfl_elf_fixed_labels(SflElfSource *self, const gchar *type_name, SflLabelPair *pairs)
{
	guint n = 0;

	pairs[n++] = (SflLabelPair){ "source", "eventlogfile" };
	pairs[n++] = (SflLabelPair){ "event_type", type_name };
	if (self->backfill != NULL && !self->backfill->ingest_timestamps)
		pairs[n++] = (SflLabelPair){ "backfill", "true" };
	return n;
}

static SflElfType *
sfl_elf_type_get(SflElfSource *self, const gchar *name, const SflElfTypeConfig *tc)
{
	SflSource *source = SFL_SOURCE(self);
	const SflSourceContext *ctx = sfl_source_get_context(source);
	SflElfType *type = g_hash_table_lookup(self->types, name);
	g_autofree gchar *key = NULL;

	if (type != NULL)
		return type;
	type = g_new0(SflElfType, 1);
	type->name = g_strdup(name);
	if (self->backfill != NULL) {
		/* the org prefix sits inside the backfill key, where the original puts it */
		const gchar *interval =
			self->interval == SFL_ELF_INTERVAL_DAILY ? "Daily" : "Hourly";
		const gchar *prefix = ctx->key_prefix != NULL ? ctx->key_prefix : "";

		type->key = g_strconcat(SFL_ELF_BACKFILL_PREFIX, prefix, interval, ":", name, NULL);
		if (ctx->legacy_keys && prefix[0] != '\0')
			type->legacy_key =
				g_strconcat(SFL_ELF_BACKFILL_PREFIX, interval, ":", name, NULL);
	} else {
		key = g_strconcat(SFL_ELF_KEY_PREFIX, name, NULL);
		type->key = sfl_source_key(source, key);
	}
	type->ids = g_ptr_array_new_with_free_func(sfl_elf_id_free);
	if (tc != NULL) {
		type->sample = tc->sample;
		type->metadata_fields = g_strdupv(tc->structured_metadata_fields != NULL
							  ? tc->structured_metadata_fields
							  : (GStrv)ctx->metadata_fields);
		type->promoted = g_strdupv(tc->labels);
	} else {
		type->sample = self->wildcard_sample;
		type->metadata_fields =
			g_strdupv(self->wildcard_metadata != NULL ? self->wildcard_metadata
								  : (GStrv)ctx->metadata_fields);
	}
	/* the original's backfill samples nothing */
	if (self->backfill != NULL)
		type->sample = 1.0;
	{
		const gchar *names[] = { "event_type", NULL };
		const gchar *values[] = { name, NULL };
		type->m_files = sfl_source_series(
			source, SFL_METRIC_COUNTER, "sf2loki_eventlogfile_files_processed",
			"EventLogFile files read to the end.", names, values);
		type->m_rows = sfl_source_series(
			source, SFL_METRIC_COUNTER, "sf2loki_eventlogfile_rows_ingested",
			"EventLogFile rows handed to the pipeline.", names, values);
		type->m_bytes = sfl_source_series(
			source, SFL_METRIC_COUNTER, "sf2loki_eventlogfile_download_bytes",
			"EventLogFile body bytes downloaded.", names, values);
	}
	if (type->promoted == NULL || type->promoted[0] == NULL) {
		SflLabelPair pairs[3];
		guint n = sfl_elf_fixed_labels(self, name, pairs);
		type->labels = sfl_source_intern_labels(source, pairs, n);
	}
	g_hash_table_insert(self->types, type->name, type);
	return type;
}

/* --- rows ----------------------------------------------------------------------------------- */

static void
sfl_elf_row_init(SflElfRow *row)
{
	row->record = sfl_record_new();
	sfl_shaped_init(&row->shaped);
}

static void
sfl_elf_row_clear(SflElfRow *row)
{
	g_clear_pointer(&row->record, sfl_record_free);
	sfl_shaped_clear(&row->shaped);
	g_clear_pointer(&row->labels, sfl_labels_unref);
	row->valid = FALSE;
}

static SflEntry *
sfl_elf_row_to_entry(SflElfJob *job, SflElfRow *row, GRefString *checkpoint)
{
	SflEntry *entry = sfl_shaped_entry(&row->shaped, row->labels, job->type->key, checkpoint);
	sfl_series_inc(job->type->m_rows);
	row->valid = FALSE;
	g_clear_pointer(&row->labels, sfl_labels_unref);
	return entry;
}

/*
 * --ingest-timestamps (the original's rule): the entry is timed by a clock that starts with
 * the run and advances 1 µs per entry, so a backfill is never older than Loki accepts; the
 * row's own time goes to structured metadata `event_time`, as Python's isoformat() writes it
 */
static void
sfl_elf_ingest_time(SflElfSource *self, SflRecord *record, SflShaped *shaped)
{
	gint64 usec = shaped->timestamp_ns / 1000;
	gint64 frac = ((usec % G_USEC_PER_SEC) + G_USEC_PER_SEC) % G_USEC_PER_SEC;
	g_autoptr(GDateTime) secs = g_date_time_new_from_unix_utc((usec - frac) / G_USEC_PER_SEC);
	g_autoptr(GDateTime) when = secs != NULL ? g_date_time_add(secs, frac) : NULL;
	g_autofree gchar *text = NULL;
	SflLabelPair pair = { "event_time", NULL };

	if (when != NULL) {
		text = g_date_time_format(when, frac == 0 ? "%Y-%m-%dT%H:%M:%S+00:00"
							  : "%Y-%m-%dT%H:%M:%S.%f+00:00");
		pair.value = sfl_record_intern(record, text, -1);
		g_array_append_val(shaped->metadata, pair);
	}
	shaped->timestamp_ns = (self->backfill->run_start_usec + (gint64)self->ingest_seq++) * 1000;
}

/* shapes one CSV row into @row; FALSE when a transform or the sampler dropped it */
static gboolean
sfl_elf_shape(SflElfJob *job, const SflCsvRecord *rec, SflElfRow *row)
{
	SflElfSource *self = job->self;
	SflElfType *type = job->type;
	SflRecord *record = row->record;
	const gchar *const timestamp_fields[] = { self->config->timestamp_column, "TIMESTAMP" };
	const SflShapeSpec spec = {
		.transforms = self->transforms,
		.sample = type->sample,
		.sample_field = "REQUEST_ID",
		.event_type = type->name,
		.timestamp_fields = timestamp_fields,
		.n_timestamp_fields = G_N_ELEMENTS(timestamp_fields),
		/* a row without a time of its own is dated by its file */
		.has_fallback = job->created_ok,
		.fallback_usec = job->created_usec,
		/* a backfill dates such a row by its file however old (the original's rule): seen
		 * from the file's own time, the candidate is never old enough to be clamped */
		.now_usec = self->backfill != NULL && job->created_ok ? job->created_usec
								      : self->cycle_now,
		.metadata_fields = (const gchar *const *)type->metadata_fields,
	};
	guint n = MIN(rec->n_fields, job->n_header);

	sfl_record_reset(record);
	for (guint i = 0; i < n; i++)
		sfl_record_add_string(record, job->header[i], rec->fields[i], rec->lens[i]);
	for (guint i = n; i < job->n_header; i++)
		sfl_record_add_string(record, job->header[i], "", 0);
	if (rec->n_fields > job->n_header) {
		const gchar *extra = NULL;
		g_string_truncate(job->scratch, 0);
		for (guint i = job->n_header; i < rec->n_fields; i++) {
			if (i > job->n_header)
				g_string_append_c(job->scratch, ',');
			g_string_append_len(job->scratch, rec->fields[i], (gssize)rec->lens[i]);
		}
		extra = sfl_record_intern(record, job->scratch->str, (gssize)job->scratch->len);
		sfl_record_add_string(record, "_extra", extra, job->scratch->len);
	}

	if (!sfl_source_keep_record(SFL_SOURCE(self), &spec, record, TRUE))
		return FALSE;
	sfl_source_shape_record(SFL_SOURCE(self), &spec, record, &row->shaped);
	if (self->backfill != NULL && self->backfill->ingest_timestamps)
		sfl_elf_ingest_time(self, record, &row->shaped);

	g_clear_pointer(&row->labels, sfl_labels_unref);
	if (type->labels != NULL) {
		row->labels = sfl_labels_ref(type->labels);
	} else {
		g_autoptr(GArray) pairs = g_array_new(FALSE, FALSE, sizeof(SflLabelPair));
		SflLabelPair fixed[3];
		guint n_fixed = sfl_elf_fixed_labels(self, type->name, fixed);
		SflLabelGuard *guard = sfl_source_get_context(SFL_SOURCE(self))->label_guard;
		for (guint i = 0; type->promoted != NULL && type->promoted[i] != NULL; i++) {
			const gchar *v = sfl_record_lookup_string(record, type->promoted[i]);
			SflLabelPair p = { type->promoted[i], v };
			if (v == NULL || v[0] == '\0')
				continue;
			/* only these come from data; the fixed ones are identity */
			p.value = sfl_label_guard_admit(guard, p.name, v);
			g_array_append_val(pairs, p);
		}
		g_array_append_vals(pairs, fixed, n_fixed);
		row->labels = sfl_source_intern_labels(
			SFL_SOURCE(self), (const SflLabelPair *)(const void *)pairs->data,
			pairs->len);
	}
	row->valid = row->labels != NULL;
	return row->valid;
}

/* the file's cursor alone, when none of its rows became an entry */
static SflEntry *
sfl_elf_token(SflElfJob *job)
{
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(job->self));
	return sfl_entry_new_checkpoint_only(sfl_clock_wall_usec(ctx->clock) * 1000, job->type->key,
					     job->post);
}

static void
sfl_elf_job_writable_cb(gpointer user_data)
{
	SflElfJob *job = user_data;

	if (job->dead)
		return;
	if (job->pending != NULL) {
		if (!sfl_source_offer(SFL_SOURCE(job->self), job->pending)) {
			sfl_source_wait_writable(SFL_SOURCE(job->self), sfl_elf_job_writable_cb,
						 job);
			return;
		}
		job->pending = NULL;
		job->offered_no = MAX(job->offered_no, job->pending_no);
	}
	sfl_elf_job_continue(job);
}

/* offers @entry, data row @no of the file (0: none); FALSE when the job must park (the entry
 * is kept as pending) */
static gboolean
sfl_elf_job_offer_row(SflElfJob *job, SflEntry *entry, guint64 no)
{
	g_assert(job->pending == NULL);
	if (sfl_source_offer(SFL_SOURCE(job->self), entry)) {
		job->offered_no = MAX(job->offered_no, no);
		return TRUE;
	}
	job->pending = entry;
	job->pending_no = no;
	sfl_source_wait_writable(SFL_SOURCE(job->self), sfl_elf_job_writable_cb, job);
	return FALSE;
}

/* @pre from now on: the cursor from before the file, plus the @rows delivered of it */
static void
sfl_elf_job_mark(SflElfJob *job, guint64 rows)
{
	g_autofree gchar *value = sfl_elf_render(job->self, job->type->ids, job->type->last_created,
						 job->file_id, rows);

	g_clear_pointer(&job->pre, g_ref_string_release);
	job->pre = g_ref_string_new(value);
	job->mark_rows = rows;
}

static gboolean
sfl_elf_job_offer(SflElfJob *job, SflEntry *entry)
{
	return sfl_elf_job_offer_row(job, entry, 0);
}

static gboolean
sfl_elf_record_cb(const SflCsvRecord *rec, gpointer user_data)
{
	SflElfJob *job = user_data;
	SflSourceCounters *counters = sfl_source_counters(SFL_SOURCE(job->self));
	SflElfRow *next = NULL;
	SflElfRow *held = NULL;

	if (job->header == NULL) {
		job->header = g_new0(gchar *, rec->n_fields + 1);
		for (guint i = 0; i < rec->n_fields; i++)
			job->header[i] = g_strndup(rec->fields[i], rec->lens[i]);
		job->n_header = rec->n_fields;
		return TRUE;
	}
	counters->rows_read++;
	job->data_rows++;
	/* delivered before the restart: parsed, never sent again */
	if (job->data_rows <= job->skip_rows)
		return TRUE;
	next = &job->rows[1 - job->held];
	if (!sfl_elf_shape(job, rec, next))
		return TRUE;
	next->no = job->data_rows;
	held = &job->rows[job->held];
	job->held = 1 - job->held;
	if (!held->valid)
		return TRUE;
	/* every row but the file's last carries the cursor from before the file, marked every
	 * SFL_ELF_RESUME_EVERY rows with how far into the file it is; a backfill marks every
	 * row, so a kill re-sends no more than what was pushed and not yet committed */
	if (held->no >= job->mark_rows + (job->self->backfill != NULL ? 1 : SFL_ELF_RESUME_EVERY))
		sfl_elf_job_mark(job, held->no);
	return sfl_elf_job_offer_row(job, sfl_elf_row_to_entry(job, held, job->pre), held->no);
}

/* --- files ---------------------------------------------------------------------------------- */

static void
sfl_elf_job_close_file(SflElfJob *job)
{
	sfl_clear_source(&job->idle);
	g_clear_pointer(&job->download, sfl_sf_download_free);
	g_clear_pointer(&job->parser, sfl_csv_parser_free);
	g_clear_pointer(&job->header, g_strfreev);
	job->n_header = 0;
	g_clear_pointer(&job->pre, g_ref_string_release);
	g_clear_pointer(&job->post, g_ref_string_release);
	g_clear_pointer(&job->post_ids, g_ptr_array_unref);
	g_clear_error(&job->download_error);
	for (guint i = 0; i < 2; i++) {
		job->rows[i].valid = FALSE;
		g_clear_pointer(&job->rows[i].labels, sfl_labels_unref);
	}
	g_clear_pointer(&job->pending, sfl_entry_unref);
	sfl_source_cancel_wait(SFL_SOURCE(job->self), job);
	job->parser_stopped = FALSE;
	job->download_paused = FALSE;
	job->download_done = FALSE;
	job->data_rows = 0;
	job->skip_rows = 0;
	job->mark_rows = 0;
	job->offered_no = 0;
	job->pending_no = 0;
}

/* the file is done (or abandoned): the cursor now includes it */
static void
sfl_elf_job_advance(SflElfJob *job)
{
	SflElfType *type = job->type;
	g_ptr_array_unref(type->ids);
	type->ids = g_steal_pointer(&job->post_ids);
	g_free(type->last_created);
	type->last_created = g_strdup(job->file_created);
	g_free(type->current);
	type->current = g_strdup(job->post);
	g_clear_pointer(&type->resume_id, g_free);
	type->resume_rows = 0;
}

/* `sf2loki_eventlogfile_download_errors{reason}`: listing, transport or `HTTP <code>` */
static void
sfl_elf_count_error(SflElfSource *self, const gchar *kind, const GError *error)
{
	guint status = error != NULL ? sfl_error_get_http_status(error) : 0;
	g_autofree gchar *reason = NULL;
	const gchar *names[] = { "reason", NULL };
	const gchar *values[] = { NULL, NULL };

	if (kind == NULL && status != 0)
		reason = g_strdup_printf("HTTP %u", status);
	values[0] = kind != NULL ? kind : reason != NULL ? reason : "transport";
	sfl_series_inc(sfl_source_series(
		SFL_SOURCE(self), SFL_METRIC_COUNTER, "sf2loki_eventlogfile_download_errors",
		"EventLogFile listing and download failures.", names, values));
}

static void
sfl_elf_contained_failure(SflElfJob *job, const GError *error, const gchar *what)
{
	SflElfSource *self = job->self;
	SflSourceCounters *counters = sfl_source_counters(SFL_SOURCE(self));

	job->type->failures++;
	counters->errors++;
	if (g_error_matches(error, SFL_ERROR, SFL_ERROR_THROTTLED)) {
		sfl_source_count_throttled(SFL_SOURCE(self), "eventlogfile");
		self->throttled = TRUE;
		g_critical("eventlogfile %s: %s throttled by Salesforce (REQUEST_LIMIT_EXCEEDED); "
			   "the remaining types wait for the next cycle: %s",
			   job->type->name, what, error->message);
		return;
	}
	if (self->backfill != NULL)
		g_critical("eventlogfile backfill %s: %s failed; this type stops here (a rerun "
			   "resumes it): %s",
			   job->type->name, what, error->message);
	else if (job->type->failures >= 3)
		g_critical(
			"eventlogfile %s: %s failed (%u times in a row); retrying next cycle: %s",
			job->type->name, what, job->type->failures, error->message);
	else
		g_warning("eventlogfile %s: %s failed; retrying next cycle: %s", job->type->name,
			  what, error->message);
}

/* a download or parse failure: abandon a file too old to ever succeed, else stop the type */
static void
sfl_elf_job_file_failed(SflElfJob *job, const GError *error)
{
	SflElfSource *self = job->self;
	gint64 age = self->cycle_now - job->created_usec;
	g_autofree gchar *what = g_strdup_printf("LogFile %s", job->file_id);

	self->counters.download_errors++;
	sfl_elf_count_error(self, NULL, error);
	/* a backfill reads old files on purpose: it never abandons one */
	if (self->backfill == NULL && !g_error_matches(error, SFL_ERROR, SFL_ERROR_THROTTLED) &&
	    job->created_ok && age > self->config->download_max_age) {
		SflElfRow *held = &job->rows[job->held];
		SflEntry *entry = NULL;
		g_autofree gchar *max_age = sfl_duration_format(self->config->download_max_age);

		g_warning("eventlogfile %s: abandoning LogFile %s (created %s, older than "
			  "download_max_age %s) after: %s",
			  job->type->name, job->file_id, job->file_created, max_age,
			  error->message);
		self->counters.files_abandoned++;
		/* rows parsed before the failure are kept; the cursor moves past the file */
		sfl_clear_source(&job->idle);
		g_clear_pointer(&job->download, sfl_sf_download_free);
		g_clear_pointer(&job->parser, sfl_csv_parser_free);
		entry = held->valid ? sfl_elf_row_to_entry(job, held, job->post)
				    : sfl_elf_token(job);
		sfl_elf_job_advance(job);
		job->phase = SFL_ELF_PHASE_COMPLETING;
		if (sfl_elf_job_offer(job, entry))
			sfl_elf_job_continue(job);
		return;
	}
	sfl_elf_contained_failure(job, error, what);
	if (self->backfill != NULL)
		self->counters.types_failed++;
	/* the rows already in the lane get delivered: the retry starts after them */
	if (job->offered_no > 0) {
		g_free(job->type->resume_id);
		job->type->resume_id = g_strdup(job->file_id);
		job->type->resume_rows = job->offered_no;
	}
	sfl_elf_job_close_file(job);
	sfl_elf_job_done(job);
}

static void
sfl_elf_job_finish_file(SflElfJob *job)
{
	SflElfRow *held = &job->rows[job->held];
	SflEntry *entry = NULL;

	if (job->data_rows == 0) {
		/* nothing to carry the cursor; the file may be listed again, which is harmless */
		g_debug("eventlogfile %s: LogFile %s has no rows", job->type->name, job->file_id);
		sfl_elf_job_close_file(job);
		job->file_idx++;
		sfl_elf_job_next_file(job);
		return;
	}
	job->self->counters.files_processed++;
	sfl_series_inc(job->type->m_files);
	entry = held->valid ? sfl_elf_row_to_entry(job, held, job->post) : sfl_elf_token(job);
	sfl_elf_job_advance(job);
	job->phase = SFL_ELF_PHASE_COMPLETING;
	if (sfl_elf_job_offer(job, entry))
		sfl_elf_job_continue(job);
}

/* runs the state machine forward after a park or a download event */
static void
sfl_elf_job_continue(SflElfJob *job)
{
	g_autoptr(GError) error = NULL;

	if (job->dead)
		return;
	switch (job->phase) {
	case SFL_ELF_PHASE_PARSING:
		if (job->parser_stopped) {
			if (!sfl_csv_parser_feed(job->parser, NULL, 0, sfl_elf_record_cb, job,
						 &error)) {
				if (error != NULL)
					sfl_elf_job_file_failed(job, error);
				return;
			}
			job->parser_stopped = FALSE;
		}
		if (job->download_error != NULL) {
			g_autoptr(GError) failed = g_steal_pointer(&job->download_error);
			sfl_elf_job_file_failed(job, failed);
			return;
		}
		if (!job->download_done) {
			if (job->download_paused) {
				job->download_paused = FALSE;
				sfl_sf_download_resume(job->download);
			}
			return;
		}
		job->phase = SFL_ELF_PHASE_FINISHING;
		if (!sfl_csv_parser_finish(job->parser, sfl_elf_record_cb, job, &error)) {
			if (error != NULL)
				sfl_elf_job_file_failed(job, error);
			return;
		}
		G_GNUC_FALLTHROUGH;
	case SFL_ELF_PHASE_FINISHING:
		sfl_elf_job_finish_file(job);
		return;
	case SFL_ELF_PHASE_COMPLETING:
		sfl_elf_job_close_file(job);
		job->file_idx++;
		sfl_elf_job_next_file(job);
		return;
	}
}

/* download events are handled from an idle: the transfer must not be freed in its callbacks */
static gboolean
sfl_elf_job_idle_cb(gpointer user_data)
{
	SflElfJob *job = user_data;

	g_clear_pointer(&job->idle, g_source_unref);
	if (job->dead || job->pending != NULL || job->parser_stopped)
		return G_SOURCE_REMOVE;
	sfl_elf_job_continue(job);
	return G_SOURCE_REMOVE;
}

static void
sfl_elf_job_defer(SflElfJob *job)
{
	if (job->idle != NULL)
		return;
	job->idle = g_idle_source_new();
	g_source_set_callback(job->idle, sfl_elf_job_idle_cb, job, NULL);
	g_source_attach(job->idle, NULL);
}

static void
sfl_elf_data_cb(const gchar *data, gsize len, gpointer user_data)
{
	SflElfJob *job = user_data;
	g_autoptr(GError) error = NULL;

	if (job->dead || job->download_error != NULL)
		return;
	job->self->counters.stream_bytes += len;
	if (sfl_csv_parser_feed(job->parser, data, len, sfl_elf_record_cb, job, &error))
		return;
	/* a full lane (no error) or bad CSV: either way no more bytes until we are ready */
	job->download_paused = TRUE;
	sfl_sf_download_pause(job->download);
	if (error != NULL) {
		job->download_error = g_steal_pointer(&error);
		sfl_elf_job_defer(job);
		return;
	}
	job->parser_stopped = TRUE;
}

static void
sfl_elf_done_cb(const GError *error, gpointer user_data)
{
	SflElfJob *job = user_data;

	if (job->dead)
		return;
	if (job->download != NULL) {
		guint64 bytes = sfl_sf_download_get_bytes(job->download);
		job->self->counters.download_bytes += bytes;
		sfl_series_add(job->type->m_bytes, (gdouble)bytes);
	}
	if (error != NULL && job->download_error == NULL)
		job->download_error = g_error_copy(error);
	job->download_done = TRUE;
	/* a parked job continues when the lane has room; it sees download_done then */
	sfl_elf_job_defer(job);
}

static void
sfl_elf_job_start_file(SflElfJob *job)
{
	SflElfSource *self = job->self;
	g_autofree gchar *path =
		g_strdup_printf("/services/data/v%s/sobjects/EventLogFile/%s/LogFile",
				sfl_sf_rest_get_api_version(self->rest), job->file_id);
	GPtrArray *window = sfl_elf_fold(job->type, job->file_id, job->file_created);
	g_autofree gchar *pre =
		job->type->current != NULL
			? g_strdup(job->type->current)
			: sfl_elf_render(self, job->type->ids, job->type->last_created, NULL, 0);
	g_autofree gchar *post = sfl_elf_render(self, window, job->file_created, NULL, 0);

	job->pre = g_ref_string_new(pre);
	job->post = g_ref_string_new(post);
	job->post_ids = window;
	if (job->type->resume_id != NULL && g_str_equal(job->type->resume_id, job->file_id)) {
		job->skip_rows = job->type->resume_rows;
		/* until the next mark, what is committed still says how far the file got */
		sfl_elf_job_mark(job, job->skip_rows);
		g_message("eventlogfile %s: resuming LogFile %s after row %" G_GUINT64_FORMAT
			  " (delivered before the restart)",
			  job->type->name, job->file_id, job->skip_rows);
	}
	job->phase = SFL_ELF_PHASE_PARSING;
	self->counters.downloads++;
	job->parser = sfl_csv_parser_new(SFL_CSV_DEFAULT_MAX_FIELD);
	job->download =
		sfl_sf_rest_download(self->rest, path, sfl_elf_data_cb, sfl_elf_done_cb, job);
}

/* a dry run counts a file and moves the in-memory cursor past it: nothing is read or kept */
static void
sfl_elf_dry_run_skip(SflElfJob *job)
{
	SflElfType *type = job->type;
	GPtrArray *window = sfl_elf_fold(type, job->file_id, job->file_created);

	g_ptr_array_unref(type->ids);
	type->ids = window;
	g_free(type->last_created);
	type->last_created = g_strdup(job->file_created);
	job->file_idx++;
}

/*
 * A backfill's page is read: a full one is followed by the next, listed from the cursor the
 * page moved; TRUE when that listing started. A full page with nothing new in it would be
 * listed again forever (every file shares the cursor's CreatedDate): give up on the type.
 */
static gboolean
sfl_elf_backfill_next_page(SflElfJob *job)
{
	SflElfSource *self = job->self;
	gsize listed = job->files != NULL ? json_array_size(job->files) : 0;

	if (job->dead || job->type->at_until || listed < (gsize)self->config->page_size)
		return FALSE;
	if (job->page_started == 0) {
		g_warning("eventlogfile backfill %s: a full page of %" G_GSIZE_FORMAT
			  " files at CreatedDate %s holds nothing not yet read; raise "
			  "sources.eventlogfile.page_size; this type stops here",
			  job->type->name, listed, job->type->last_created);
		self->counters.types_failed++;
		return FALSE;
	}
	g_clear_pointer(&job->files, json_decref);
	sfl_elf_job_list(job);
	return TRUE;
}

static void
sfl_elf_job_next_file(SflElfJob *job)
{
	SflElfSource *self = job->self;

	while (!job->dead && job->files != NULL && job->file_idx < json_array_size(job->files)) {
		json_t *file = json_array_get(job->files, job->file_idx);
		const gchar *id = json_string_value(json_object_get(file, "Id"));
		const gchar *created = json_string_value(json_object_get(file, "CreatedDate"));

		if (id == NULL || created == NULL) {
			g_warning("eventlogfile %s: listing row %u has no Id or CreatedDate; "
				  "skipped",
				  job->type->name, job->file_idx);
			job->file_idx++;
			continue;
		}
		if (sfl_elf_already_processed(job->type, id, created)) {
			job->file_idx++;
			continue;
		}
		job->file_id = id;
		job->file_created = created;
		job->created_ok = sfl_parse_iso_datetime(created, &job->created_usec);
		if (self->backfill != NULL) {
			/* sorted by CreatedDate: every later file is past the window too */
			if (job->created_ok && job->created_usec >= self->backfill->until_usec) {
				job->type->at_until = TRUE;
				break;
			}
			job->page_started++;
			self->counters.files_listed++;
			self->counters.bytes_listed += (guint64)MAX(
				json_number_value(json_object_get(file, "LogFileLength")), 0.0);
			if (self->backfill->dry_run) {
				sfl_elf_dry_run_skip(job);
				continue;
			}
			sfl_elf_job_start_file(job);
			return;
		}
		/* settle: the newest files may still be written; later ones are newer still */
		if (self->config->settle_window > 0 && job->created_ok &&
		    self->cycle_now - job->created_usec < self->config->settle_window) {
			g_debug("eventlogfile %s: LogFile %s created %s is inside the settle "
				"window; next cycle",
				job->type->name, id, created);
			break;
		}
		sfl_elf_job_start_file(job);
		return;
	}
	if (self->backfill != NULL && sfl_elf_backfill_next_page(job))
		return;
	job->type->failures = 0;
	sfl_elf_job_done(job);
}

/* --- jobs ----------------------------------------------------------------------------------- */

static void
sfl_elf_job_free(SflElfJob *job)
{
	sfl_elf_job_close_file(job);
	for (guint i = 0; i < 2; i++)
		sfl_elf_row_clear(&job->rows[i]);
	g_clear_pointer(&job->files, json_decref);
	g_string_free(job->scratch, TRUE);
	g_object_unref(job->self);
	g_free(job);
}

static void
sfl_elf_job_done(SflElfJob *job)
{
	SflElfSource *self = job->self;

	/* the job may hold the last reference */
	g_object_ref(self);
	g_ptr_array_remove(self->jobs, job);
	sfl_elf_job_free(job);
	sfl_elf_cycle_pump(self);
	g_object_unref(self);
}

static void
sfl_elf_list_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflElfJob *job = user_data;
	SflElfSource *self = job->self;
	g_autoptr(GError) error = NULL;
	json_t *files = sfl_sf_rest_query_finish(SFL_SF_REST(object), result, &error);

	job->in_query = FALSE;
	if (job->dead) {
		if (files != NULL)
			json_decref(files);
		sfl_elf_job_free(job);
		return;
	}
	if (files == NULL) {
		self->counters.listing_errors++;
		sfl_elf_count_error(self, "listing", error);
		sfl_elf_contained_failure(job, error, "listing");
		if (self->backfill != NULL)
			self->counters.types_failed++;
		sfl_elf_job_done(job);
		return;
	}
	job->files = files;
	job->file_idx = 0;
	job->page_started = 0;
	sfl_elf_job_next_file(job);
}

static void
sfl_elf_job_list(SflElfJob *job)
{
	SflElfSource *self = job->self;
	SflElfType *type = job->type;
	g_autofree gchar *since = NULL;
	g_autofree gchar *lit = NULL;
	g_autofree gchar *name = sfl_soql_escape(type->name);
	g_autofree gchar *soql = NULL;

	/* first run: the lookback is pinned, so a restart does not slide it past a file; a
	 * backfill starts at --since */
	if (type->last_created == NULL)
		type->last_created = sfl_format_iso_seconds(
			self->backfill != NULL ? self->backfill->since_usec
					       : self->cycle_now - self->config->lookback);
	since = g_strdup(type->last_created);
	lit = sfl_soql_datetime_literal(since);
	soql = g_strdup_printf("SELECT Id,EventType,Interval,LogDate,CreatedDate,LogFileLength,"
			       "Sequence FROM EventLogFile WHERE EventType='%s' AND "
			       "Interval='%s' AND CreatedDate >= %s ORDER BY CreatedDate, Id "
			       "LIMIT %" G_GINT64_FORMAT,
			       name, self->interval == SFL_ELF_INTERVAL_DAILY ? "Daily" : "Hourly",
			       lit, self->config->page_size);
	job->in_query = TRUE;
	self->counters.listing_calls++;
	sfl_sf_rest_query_async(self->rest, soql, FALSE, self->cancellable, sfl_elf_list_cb, job);
}

static void
sfl_elf_load_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflElfJob *job = user_data;
	SflElfType *type = job->type;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *value = sfl_source_load_finish(SFL_SOURCE(object), result, &error);

	job->in_query = FALSE;
	if (job->dead) {
		sfl_elf_job_free(job);
		return;
	}
	if (value == NULL && error != NULL) {
		sfl_elf_contained_failure(job, error, "reading the checkpoint");
		sfl_elf_job_done(job);
		return;
	}
	if (value == NULL && type->legacy_key != NULL) {
		/* the first org reads the single-org backfill key once (the original's fallback) */
		g_autofree gchar *legacy = g_steal_pointer(&type->legacy_key);
		job->in_query = TRUE;
		sfl_source_load_async(SFL_SOURCE(job->self), legacy, job->self->cancellable,
				      sfl_elf_load_cb, job);
		return;
	}
	type->loaded = TRUE;
	if (job->self->backfill != NULL) {
		if (value != NULL && !sfl_elf_backfill_parse(value, &type->last_created, type->ids,
							     &type->resume_id, &type->resume_rows))
			g_warning(
				"eventlogfile backfill %s: the stored checkpoint %s is not a valid "
				"backfill cursor; starting from --since instead",
				type->name, type->key);
		else if (value != NULL)
			type->current =
				sfl_elf_render(job->self, type->ids, type->last_created, NULL, 0);
	} else if (value != NULL && !sfl_elf_cursor_parse(value, &type->last_created, type->ids,
							  &type->resume_id, &type->resume_rows)) {
		g_autofree gchar *lookback = sfl_duration_format(job->self->config->lookback);
		g_warning("eventlogfile %s: the stored checkpoint %s is not a valid EventLogFile "
			  "cursor; starting from the lookback (%s) instead",
			  type->name, type->key, lookback);
	} else if (value != NULL && type->resume_id != NULL) {
		/* the cursor before that file is what every other file starts from */
		type->current = sfl_elf_cursor_render(type->ids, type->last_created);
	} else if (value != NULL) {
		type->current = g_strdup(value);
	}
	sfl_elf_job_list(job);
}

static void
sfl_elf_job_start(SflElfSource *self, SflElfType *type)
{
	SflElfJob *job = g_new0(SflElfJob, 1);
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(self));

	job->self = g_object_ref(self);
	job->type = type;
	job->scratch = g_string_new(NULL);
	for (guint i = 0; i < 2; i++)
		sfl_elf_row_init(&job->rows[i]);
	g_ptr_array_add(self->jobs, job);
	if (!type->loaded && ctx->store != NULL) {
		job->in_query = TRUE;
		sfl_source_load_async(SFL_SOURCE(self), type->key, self->cancellable,
				      sfl_elf_load_cb, job);
		return;
	}
	type->loaded = TRUE;
	sfl_elf_job_list(job);
}

/* --- cycles --------------------------------------------------------------------------------- */

static void sfl_elf_timer_cb(gpointer user_data);

static void
sfl_elf_schedule(SflElfSource *self, gint64 delay)
{
	sfl_source_arm_timer(SFL_SOURCE(self), &self->timer, delay, sfl_elf_timer_cb, self);
}

static void
sfl_elf_cycle_end(SflElfSource *self)
{
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(self));
	gint64 delay = self->config->poll_interval;

	gint64 took = sfl_clock_monotonic_usec(ctx->clock) - self->cycle_started;

	self->in_cycle = FALSE;
	self->counters.cycles++;
	sfl_series_set(sfl_source_series(SFL_SOURCE(self), SFL_METRIC_GAUGE,
					 "sf2loki_eventlogfile_cycle_seconds",
					 "Duration of the last EventLogFile cycle.", NULL, NULL),
		       (gdouble)took / G_USEC_PER_SEC);
	g_debug("eventlogfile: cycle done in %" G_GINT64_FORMAT " ms", took / 1000);
	if (self->backfill != NULL) {
		/* one pass: the window is read (or a type stopped); the run drains and ends */
		sfl_source_finish(SFL_SOURCE(self));
		return;
	}
	if (delay > 0)
		delay = (gint64)((gdouble)delay * g_rand_double_range(self->rand, 0.9, 1.1));
	sfl_elf_schedule(self, delay);
}

static void
sfl_elf_cycle_pump(SflElfSource *self)
{
	if (sfl_source_is_stopped(SFL_SOURCE(self)))
		return;
	while (self->queue->len > 0 && !self->throttled && self->jobs->len < self->concurrency) {
		SflElfType *type = g_ptr_array_steal_index(self->queue, 0);
		sfl_elf_job_start(self, type);
		if (sfl_source_is_stopped(SFL_SOURCE(self)))
			return;
	}
	if (self->throttled)
		g_ptr_array_set_size(self->queue, 0);
	if (self->queue->len == 0 && self->jobs->len == 0 && self->in_cycle)
		sfl_elf_cycle_end(self);
}

static gint
sfl_elf_strcmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const gchar *const *)a, *(const gchar *const *)b);
}

/* the configured settings (promoted labels, metadata fields) of type @name, or NULL */
static const SflElfTypeConfig *
sfl_elf_type_config(SflElfSource *self, const gchar *name)
{
	for (guint k = 0; k < self->config->event_types->len; k++) {
		const SflElfTypeConfig *tc = g_ptr_array_index(self->config->event_types, k);
		if (g_str_equal(tc->name, name))
			return tc;
	}
	return NULL;
}

/* a backfill's types: the given ones, then ("*") the discovered ones not given, excluded or
 * owned by another source, each with its configured settings when it has some */
static void
sfl_elf_run_backfill_types(SflElfSource *self, json_t *discovered)
{
	const gchar *const *given = (const gchar *const *)self->backfill_types;
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	gsize i = 0;
	json_t *rec = NULL;

	for (guint k = 0; given[k] != NULL; k++) {
		if (!g_str_equal(given[k], "*"))
			g_ptr_array_add(self->queue,
					sfl_elf_type_get(self, given[k],
							 sfl_elf_type_config(self, given[k])));
	}
	json_array_foreach (discovered, i, rec) {
		const gchar *name = json_string_value(json_object_get(rec, "EventType"));
		if (name != NULL && name[0] != '\0')
			g_ptr_array_add(names, (gpointer)name);
	}
	g_ptr_array_sort(names, sfl_elf_strcmp);
	for (guint k = 0; k < names->len; k++) {
		const gchar *name = g_ptr_array_index(names, k);
		if ((k > 0 && g_str_equal(name, g_ptr_array_index(names, k - 1))) ||
		    g_strv_contains(given, name) ||
		    g_strv_contains((const gchar *const *)self->config->exclude, name) ||
		    sfl_overlap_elf_type_owned_elsewhere(self->sources, name))
			continue;
		g_ptr_array_add(self->queue,
				sfl_elf_type_get(self, name, sfl_elf_type_config(self, name)));
	}
	sfl_elf_cycle_pump(self);
}

static void
sfl_elf_run_types(SflElfSource *self, json_t *discovered)
{
	GPtrArray *types = self->config->event_types;
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	gsize i = 0;
	json_t *rec = NULL;

	if (self->backfill != NULL) {
		sfl_elf_run_backfill_types(self, discovered);
		return;
	}

	for (guint k = 0; k < types->len; k++) {
		SflElfTypeConfig *tc = g_ptr_array_index(types, k);
		if (!g_str_equal(tc->name, "*"))
			g_ptr_array_add(self->queue, sfl_elf_type_get(self, tc->name, tc));
	}
	json_array_foreach (discovered, i, rec) {
		const gchar *name = json_string_value(json_object_get(rec, "EventType"));
		if (name != NULL && name[0] != '\0')
			g_ptr_array_add(names, (gpointer)name);
	}
	g_ptr_array_sort(names, sfl_elf_strcmp);
	for (guint k = 0; k < names->len; k++) {
		const gchar *name = g_ptr_array_index(names, k);
		gboolean skip =
			(k > 0 && g_str_equal(name, g_ptr_array_index(names, k - 1))) ||
			g_strv_contains((const gchar *const *)self->config->exclude, name) ||
			sfl_overlap_elf_type_owned_elsewhere(self->sources, name);
		for (guint t = 0; t < types->len && !skip; t++)
			skip = g_str_equal(((SflElfTypeConfig *)g_ptr_array_index(types, t))->name,
					   name);
		if (!skip)
			g_ptr_array_add(self->queue, sfl_elf_type_get(self, name, NULL));
	}
	sfl_elf_cycle_pump(self);
}

static void
sfl_elf_discover_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflElfSource *self = user_data;
	g_autoptr(GError) error = NULL;
	json_t *found = sfl_sf_rest_query_finish(SFL_SF_REST(object), result, &error);

	if (sfl_source_is_stopped(SFL_SOURCE(self))) {
		if (found != NULL)
			json_decref(found);
		g_object_unref(self);
		return;
	}
	if (found == NULL) {
		SflSourceCounters *counters = sfl_source_counters(SFL_SOURCE(self));
		const gchar *names[] = { "source", "object", NULL };
		const gchar *values[] = { "eventlogfile", "discovery", NULL };

		counters->errors++;
		sfl_series_inc(sfl_source_series(SFL_SOURCE(self), SFL_METRIC_COUNTER,
						 "sf2loki_soql_poll_errors",
						 "Failed SOQL polls and listings.", names, values));
		if (g_error_matches(error, SFL_ERROR, SFL_ERROR_THROTTLED)) {
			/* SFL-0042: every call this cycle would be throttled too */
			sfl_source_count_throttled(SFL_SOURCE(self), "eventlogfile");
			g_critical("eventlogfile: type discovery throttled by Salesforce "
				   "(REQUEST_LIMIT_EXCEEDED); skipping this cycle: %s",
				   error->message);
			self->in_cycle = TRUE;
			sfl_elf_cycle_end(self);
			g_object_unref(self);
			return;
		}
		if (self->backfill != NULL)
			self->counters.types_failed++;
		g_warning("eventlogfile: type discovery failed; using the explicit types: %s",
			  error->message);
	}
	sfl_elf_run_types(self, found);
	if (found != NULL)
		json_decref(found);
	g_object_unref(self);
}

static void
sfl_elf_timer_cb(gpointer user_data)
{
	SflElfSource *self = user_data;
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(self));
	gint64 skew = 0;

	self->in_cycle = TRUE;
	self->throttled = FALSE;
	self->cycle_started = sfl_clock_monotonic_usec(ctx->clock);
	self->cycle_now = sfl_clock_wall_usec(ctx->clock);
	if (sfl_sf_rest_get_clock_skew(self->rest, &skew) && ABS(skew) > SFL_ELF_SKEW_APPLY) {
		self->cycle_now += skew;
		if (ABS(skew) > SFL_ELF_SKEW_WARN && !self->skew_warned) {
			self->skew_warned = TRUE;
			g_warning("eventlogfile: Salesforce's clock is %" G_GINT64_FORMAT
				  " s off ours; using its time for settle and lookback",
				  skew / G_USEC_PER_SEC);
		}
	}
	if (self->wildcard) {
		g_autofree gchar *soql = g_strdup_printf(
			"SELECT EventType FROM EventLogFile WHERE Interval='%s' GROUP BY EventType",
			self->interval == SFL_ELF_INTERVAL_DAILY ? "Daily" : "Hourly");
		self->counters.listing_calls++;
		sfl_sf_rest_query_async(self->rest, soql, FALSE, self->cancellable,
					sfl_elf_discover_cb, g_object_ref(self));
		return;
	}
	sfl_elf_run_types(self, NULL);
}

/* --- the seam ------------------------------------------------------------------------------- */

static void
sfl_elf_source_start(SflSource *source)
{
	SflElfSource *self = SFL_ELF_SOURCE(source);
	sfl_elf_schedule(self, 0);
}

static void
sfl_elf_source_stop(SflSource *source)
{
	SflElfSource *self = SFL_ELF_SOURCE(source);

	g_cancellable_cancel(self->cancellable);
	sfl_clear_source(&self->timer);
	g_ptr_array_set_size(self->queue, 0);
	while (self->jobs->len > 0) {
		SflElfJob *job = g_ptr_array_steal_index(self->jobs, self->jobs->len - 1);
		job->dead = TRUE;
		sfl_elf_job_close_file(job);
		/* a job with a call in flight is freed by that call's callback */
		if (!job->in_query)
			sfl_elf_job_free(job);
	}
}

static void
sfl_elf_source_finalize(GObject *object)
{
	SflElfSource *self = SFL_ELF_SOURCE(object);

	sfl_clear_source(&self->timer);
	g_clear_object(&self->rest);
	g_clear_pointer(&self->transforms, sfl_transforms_free);
	g_clear_pointer(&self->types, g_hash_table_unref);
	g_clear_object(&self->cancellable);
	g_clear_pointer(&self->rand, g_rand_free);
	g_clear_pointer(&self->queue, g_ptr_array_unref);
	g_clear_pointer(&self->jobs, g_ptr_array_unref);
	g_strfreev(self->wildcard_metadata);
	g_free(self->backfill);
	g_strfreev(self->backfill_types);
	G_OBJECT_CLASS(sfl_elf_source_parent_class)->finalize(object);
}

static void
sfl_elf_source_class_init(SflElfSourceClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflSourceClass *source_class = SFL_SOURCE_CLASS(klass);

	object_class->finalize = sfl_elf_source_finalize;
	source_class->start = sfl_elf_source_start;
	source_class->stop = sfl_elf_source_stop;
}

static void
sfl_elf_source_init(SflElfSource *self)
{
	self->types = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, sfl_elf_type_free);
	self->cancellable = g_cancellable_new();
	self->rand = g_rand_new();
	self->queue = g_ptr_array_new();
	self->jobs = g_ptr_array_new();
}

/**
 * sfl_elf_source_new:
 * @rest: the org's REST client
 * @config: sources.eventlogfile
 * @sources: the org's sources section (overlap filtering of discovered types)
 * @salt: the transform salt, or %NULL
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the source, or %NULL with @error set
 */
SflElfSource *
sfl_elf_source_new(SflSfRest *rest, const SflEventLogFileConfig *config,
		   const SflSourcesConfig *sources, const gchar *salt, GError **error)
{
	g_autoptr(SflElfSource) self = NULL;

	g_return_val_if_fail(SFL_IS_SF_REST(rest), NULL);
	g_return_val_if_fail(config != NULL && sources != NULL, NULL);

	self = g_object_new(SFL_TYPE_ELF_SOURCE, "name", "eventlogfile", NULL);
	self->rest = g_object_ref(rest);
	self->config = config;
	self->sources = sources;
	self->wildcard_sample = 1.0;
	self->interval = config->interval;
	self->concurrency = (guint)MAX(config->concurrency, 1);
	if (config->transforms != NULL && config->transforms->len > 0) {
		self->transforms = sfl_transforms_new(config->transforms, salt, error);
		if (self->transforms == NULL) {
			g_prefix_error(error, "sources.eventlogfile.transforms: ");
			return NULL;
		}
	}
	for (guint i = 0; i < config->event_types->len; i++) {
		SflElfTypeConfig *tc = g_ptr_array_index(config->event_types, i);
		if (g_str_equal(tc->name, "*")) {
			self->wildcard = TRUE;
			self->wildcard_sample = tc->sample;
			self->wildcard_metadata = g_strdupv(tc->structured_metadata_fields);
		}
	}
	return g_steal_pointer(&self);
}

/**
 * sfl_elf_source_new_backfill:
 * @rest: the org's REST client
 * @config: sources.eventlogfile (transforms, page size, type settings)
 * @sources: the org's sources section
 * @salt: the transform salt, or %NULL
 * @options: the window, types and modes; copied
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): a source that reads the window once and finishes
 */
SflElfSource *
sfl_elf_source_new_backfill(SflSfRest *rest, const SflEventLogFileConfig *config,
			    const SflSourcesConfig *sources, const gchar *salt,
			    const SflElfBackfillOptions *options, GError **error)
{
	g_autoptr(SflElfSource) self = NULL;

	g_return_val_if_fail(options != NULL && options->event_types != NULL, NULL);
	self = sfl_elf_source_new(rest, config, sources, salt, error);
	if (self == NULL)
		return NULL;
	self->backfill = g_memdup2(options, sizeof(*options));
	self->backfill_types = g_strdupv((gchar **)options->event_types);
	self->backfill->event_types = (const gchar *const *)self->backfill_types;
	self->interval = options->interval;
	self->concurrency = MAX(options->concurrency, 1);
	/* the configured "*" has no say: discovery is what the options ask for */
	self->wildcard = g_strv_contains(options->event_types, "*");
	return g_steal_pointer(&self);
}

/**
 * sfl_elf_source_get_counters:
 * @self: the source
 *
 * Returns: (transfer none): the source's EventLogFile counters
 */
const SflElfCounters *
sfl_elf_source_get_counters(SflElfSource *self)
{
	g_return_val_if_fail(SFL_IS_ELF_SOURCE(self), NULL);
	return &self->counters;
}

/**
 * sfl_elf_source_describe_checkpoint:
 * @key: a committed key, without the multi-org prefix
 * @value: its value
 * @view: (out caller-allocates): filled when the key is this source's
 *
 * Returns: %TRUE when @key is an EventLogFile type's cursor
 */
gboolean
sfl_elf_source_describe_checkpoint(const gchar *key, const gchar *value, SflCheckpointView *view)
{
	if (!g_str_has_prefix(key, SFL_ELF_KEY_PREFIX))
		return FALSE;
	view->source = "eventlogfile";
	view->object = key + strlen(SFL_ELF_KEY_PREFIX);
	sfl_checkpoint_view_cursor(view, value, "last_created");
	return TRUE;
}
