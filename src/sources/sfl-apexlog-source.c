/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflApexLogSource"

#include "config.h"

#include "sfl-apexlog-source.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-pyjson.h"
#include "sfl-record.h"
#include "sfl-shape.h"

/* the original's key, one per org */
#define SFL_APEXLOG_KEY	 "apexlog"
#define SFL_APEXLOG_PAGE 200
/* ids carried in the checkpoint (the original's cap) */
#define SFL_APEXLOG_WINDOW 500

/* the listed fields: the metadata payload, every one of them structured metadata */
static const gchar *const sfl_apexlog_fields[] = {
	"Id",	     "LogUserId",   "LogLength",
	"Operation", "Request",	    "Status",
	"StartTime", "Application", "DurationMilliseconds",
	"Location",
};

typedef enum {
	SFL_APEXLOG_IDLE,
	SFL_APEXLOG_LOADING,
	SFL_APEXLOG_LISTING,
	SFL_APEXLOG_EMITTING,
	SFL_APEXLOG_DOWNLOADING,
	SFL_APEXLOG_ENDING,
} SflApexLogPhase;

struct _SflApexLogSource {
	SflSource parent_instance;
	SflSfRest *rest;
	const SflApexLogConfig *config;
	SflTransforms *transforms;
	GCancellable *cancellable;
	GSource *timer;
	GRand *rand;
	gboolean alive;
	SflApexLogPhase phase;
	gchar *key;
	SflLabels *labels;
	/* the cursor */
	gboolean loaded;
	gchar *wm;	  /* StartTime as Salesforce wrote it */
	GPtrArray *ids;	  /* the window, oldest first, capped */
	GHashTable *seen; /* the window's ids */
	guint failures;
	guint stalls;
	/* the value the last offered entry carried (or the loaded one): what a token must beat */
	gchar *offered;
	gint64 now; /* wall clock of the poll */
	/* the page being emitted */
	json_t *page;
	guint page_idx;
	gboolean page_full;
	SflEntry *pending;
	SflRecord *record;
	SflShaped shaped;
	/* the log whose body is downloading */
	json_t *log;
	SflSfDownload *download;
	GString *body;
	gboolean body_too_big;
	guint64 body_bytes;
	GSource *cut; /* finishes a download cut at the cap, outside curl's callback */
	/* instruments */
	SflSeries *m_poll_errors;
	SflSeries *m_stalls;
	SflSeries *m_ingested;
	SflSeries *m_bytes;
	SflApexLogCounters counters;
};

G_DEFINE_FINAL_TYPE(SflApexLogSource, sfl_apexlog_source, SFL_TYPE_SOURCE)

static void sfl_apexlog_step(SflApexLogSource *self);
static void sfl_apexlog_query(SflApexLogSource *self);

/* --- the cursor ----------------------------------------------------------------------------- */

static const gchar *
sfl_apexlog_since_id(SflApexLogSource *self)
{
	return self->ids->len > 0 ? g_ptr_array_index(self->ids, self->ids->len - 1) : NULL;
}

static void
sfl_apexlog_add_id(SflApexLogSource *self, const gchar *id)
{
	gchar *copy = NULL;

	if (g_hash_table_contains(self->seen, id))
		return;
	copy = g_strdup(id);
	g_ptr_array_add(self->ids, copy);
	g_hash_table_add(self->seen, copy);
	while (self->ids->len > SFL_APEXLOG_WINDOW) {
		g_hash_table_remove(self->seen, g_ptr_array_index(self->ids, 0));
		g_ptr_array_remove_index(self->ids, 0);
	}
}

/* one log moves the cursor: applied only once the log's entry exists (SFL-0009) */
static void
sfl_apexlog_advance(SflApexLogSource *self, const gchar *start_time, const gchar *id)
{
	gint64 usec = 0;

	if (start_time != NULL && sfl_parse_iso_datetime(start_time, &usec)) {
		g_free(self->wm);
		self->wm = g_strdup(start_time);
	}
	sfl_apexlog_add_id(self, id);
}

/* {"ids": [...], "last_ts": "..."}: json.dumps with sorted keys, as the original */
static gchar *
sfl_apexlog_render(SflApexLogSource *self)
{
	g_autoptr(GString) out = g_string_sized_new(64 + 24 * self->ids->len);

	g_string_append(out, "{\"ids\": [");
	for (guint i = 0; i < self->ids->len; i++) {
		if (i > 0)
			g_string_append(out, ", ");
		sfl_pyjson_append_string(out, g_ptr_array_index(self->ids, i));
	}
	g_string_append(out, "], \"last_ts\": ");
	sfl_pyjson_append_string(out, self->wm != NULL ? self->wm : "");
	g_string_append_c(out, '}');
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/* tolerant decoding: a JSON object, else a legacy bare watermark; a bad watermark reads the
 * lookback instead */
static void
sfl_apexlog_load_value(SflApexLogSource *self, const gchar *value)
{
	json_t *root = value != NULL ? json_loads(value, JSON_DECODE_ANY, NULL) : NULL;
	const gchar *wm = value;
	gint64 usec = 0;

	if (root != NULL && json_is_object(root)) {
		json_t *ids = json_object_get(root, "ids");
		gsize i = 0;
		json_t *item = NULL;

		wm = json_string_value(json_object_get(root, "last_ts"));
		json_array_foreach (ids, i, item) {
			const gchar *id = json_string_value(item);
			if (id != NULL && id[0] != '\0')
				sfl_apexlog_add_id(self, id);
		}
	} else if (root != NULL && json_is_string(root)) {
		wm = json_string_value(root);
	}
	if (wm != NULL && sfl_parse_iso_datetime(wm, &usec)) {
		self->wm = g_strdup(wm);
	} else {
		g_autofree gchar *lookback = sfl_duration_format(self->config->lookback);
		if (value != NULL)
			g_warning("apexlog: the stored watermark in %s is not a timestamp; reading "
				  "the last %s instead",
				  self->key, lookback);
		self->wm = sfl_format_iso_seconds(self->now - self->config->lookback);
	}
	if (root != NULL)
		json_decref(root);
	g_free(self->offered);
	self->offered = sfl_apexlog_render(self);
}

/* --- shaping -------------------------------------------------------------------------------- */

static const gchar *
sfl_apexlog_id(json_t *rec)
{
	const gchar *id = json_string_value(json_object_get(rec, "Id"));
	return id != NULL && id[0] != '\0' ? id : NULL;
}

/* every non-empty metadata field becomes structured metadata, whatever the global list says */
static void
sfl_apexlog_metadata(SflRecord *record, GArray *pairs, gpointer user_data)
{
	g_autoptr(GString) text = g_string_new(NULL);

	(void)user_data;
	for (guint i = 0; i < G_N_ELEMENTS(sfl_apexlog_fields); i++) {
		const SflField *f = sfl_record_lookup(record, sfl_apexlog_fields[i]);
		gboolean listed = FALSE;
		SflLabelPair pair;

		if (f == NULL || f->type == SFL_VALUE_NULL ||
		    (f->type == SFL_VALUE_STRING && f->len == 0))
			continue;
		for (guint k = 0; k < pairs->len && !listed; k++)
			listed = g_str_equal(g_array_index(pairs, SflLabelPair, k).name, f->name);
		if (listed)
			continue;
		g_string_truncate(text, 0);
		sfl_field_append_pystr(f, text);
		pair.name = f->name;
		pair.value = sfl_record_intern(record, text->str, (gssize)text->len);
		g_array_append_val(pairs, pair);
	}
}

/* transforms and sampling of @rec's metadata payload, then its shape; FALSE: no entry */
static gboolean
sfl_apexlog_keep_and_shape(SflApexLogSource *self, json_t *rec, const gchar *id)
{
	const gchar *const ts_fields[] = { "StartTime" };
	SflShapeSpec spec = {
		.transforms = self->transforms,
		.sample = self->config->sample,
		.sample_key = id,
		.sample_key_len = strlen(id),
		.event_type = "apexlog",
		.timestamp_fields = ts_fields,
		.n_timestamp_fields = 1,
		.now_usec = self->now,
		.metadata_fields = sfl_source_get_context(SFL_SOURCE(self))->metadata_fields,
		.metadata_func = sfl_apexlog_metadata,
	};

	/* the payload is the listed fields, not Salesforce's `attributes` */
	sfl_record_reset(self->record);
	for (guint i = 0; i < G_N_ELEMENTS(sfl_apexlog_fields); i++) {
		json_t *v = json_object_get(rec, sfl_apexlog_fields[i]);
		if (v != NULL)
			sfl_record_add_json(self->record, sfl_apexlog_fields[i], v);
	}
	if (!sfl_source_keep_record(SFL_SOURCE(self), &spec, self->record, TRUE))
		return FALSE;
	spec.has_fallback =
		self->wm != NULL && sfl_parse_iso_datetime(self->wm, &spec.fallback_usec);
	sfl_source_shape_record(SFL_SOURCE(self), &spec, self->record, &self->shaped);
	return TRUE;
}

static void
sfl_apexlog_count_skipped(SflApexLogSource *self, const gchar *reason)
{
	const gchar *names[] = { "reason", NULL };
	const gchar *values[] = { reason, NULL };

	self->counters.bodies_skipped++;
	sfl_series_inc(sfl_source_series(
		SFL_SOURCE(self), SFL_METRIC_COUNTER, "sf2loki_apexlog_bodies_skipped",
		"ApexLog entries shipped without their body.", names, values));
}

/*
 * The entry of the log being emitted (already shaped): @body is the line, or NULL for the
 * metadata-only line with body_skipped and @skip_reason. The cursor moves past the log here.
 */
static void
sfl_apexlog_finish_log(SflApexLogSource *self, json_t *rec, const GString *body,
		       const gchar *skip_reason)
{
	g_autofree gchar *value = NULL;
	g_autoptr(GRefString) checkpoint = NULL;

	if (body != NULL) {
		g_string_truncate(self->shaped.line, 0);
		g_string_append_len(self->shaped.line, body->str, (gssize)body->len);
	} else {
		const SflLabelPair skipped[] = { { "body_skipped", "true" },
						 { "body_skip_reason", skip_reason } };
		g_array_append_vals(self->shaped.metadata, skipped, G_N_ELEMENTS(skipped));
		sfl_apexlog_count_skipped(self, skip_reason);
	}
	sfl_apexlog_advance(self, json_string_value(json_object_get(rec, "StartTime")),
			    sfl_apexlog_id(rec));
	value = sfl_apexlog_render(self);
	checkpoint = g_ref_string_new(value);
	self->pending = sfl_shaped_entry(&self->shaped, self->labels, self->key, checkpoint);
	g_free(self->offered);
	self->offered = g_steal_pointer(&value);
	self->counters.logs_ingested++;
	sfl_series_inc(self->m_ingested);
}

/* --- body downloads ------------------------------------------------------------------------- */

static void
sfl_apexlog_count_download_error(SflApexLogSource *self, const GError *error)
{
	guint status = sfl_error_get_http_status(error);
	g_autofree gchar *reason =
		status != 0 ? g_strdup_printf("HTTP %u", status) : g_strdup("transport");
	const gchar *names[] = { "reason", NULL };
	const gchar *values[] = { reason, NULL };

	self->counters.download_errors++;
	sfl_series_inc(sfl_source_series(SFL_SOURCE(self), SFL_METRIC_COUNTER,
					 "sf2loki_apexlog_download_errors",
					 "ApexLog body downloads that failed.", names, values));
}

static void sfl_apexlog_body_done_cb(const GError *error, gpointer user_data);

static void
sfl_apexlog_cut_cb(gpointer user_data)
{
	sfl_apexlog_body_done_cb(NULL, user_data);
}

static void
sfl_apexlog_body_data_cb(const gchar *data, gsize len, gpointer user_data)
{
	SflApexLogSource *self = user_data;

	self->body_bytes += len;
	if (self->body->len + len > (gsize)self->config->max_body_bytes) {
		/* LogLength understated the body: the cap holds anyway, and no more is read */
		self->body_too_big = TRUE;
		g_clear_pointer(&self->download, sfl_sf_download_free);
		sfl_source_arm_timer(SFL_SOURCE(self), &self->cut, 0, sfl_apexlog_cut_cb, self);
		return;
	}
	g_string_append_len(self->body, data, (gssize)len);
}

/* a failed body: abandon a log that can never succeed, else stop the poll before it */
static void
sfl_apexlog_body_failed(SflApexLogSource *self, json_t *rec, const GError *error)
{
	const gchar *id = sfl_apexlog_id(rec);
	const gchar *start = json_string_value(json_object_get(rec, "StartTime"));
	gint64 started = 0;
	gboolean dated = start != NULL && sfl_parse_iso_datetime(start, &started);
	gboolean gone = sfl_error_get_http_status(error) == 404;
	SflSourceCounters *counters = sfl_source_counters(SFL_SOURCE(self));

	sfl_apexlog_count_download_error(self, error);
	if (g_error_matches(error, SFL_ERROR, SFL_ERROR_THROTTLED)) {
		counters->errors++;
		sfl_source_count_throttled(SFL_SOURCE(self), "apexlog_body");
		g_critical("apexlog: the body of ApexLog %s was throttled by Salesforce "
			   "(REQUEST_LIMIT_EXCEEDED); the poll stops and retries it next time: %s",
			   id, error->message);
		self->phase = SFL_APEXLOG_ENDING;
		return;
	}
	if (gone || (dated && self->now - started > self->config->download_max_age)) {
		g_autofree gchar *max_age = sfl_duration_format(self->config->download_max_age);

		if (gone)
			g_warning("apexlog: ApexLog %s (StartTime %s) is gone from Salesforce; "
				  "shipping its metadata without the body: %s",
				  id, start != NULL ? start : "?", error->message);
		else
			g_warning("apexlog: abandoning the body of ApexLog %s (StartTime %s, older "
				  "than download_max_age %s); shipping its metadata only: %s",
				  id, start, max_age, error->message);
		self->counters.logs_abandoned++;
		sfl_apexlog_finish_log(self, rec, NULL, "download_error");
		self->phase = SFL_APEXLOG_EMITTING;
		return;
	}
	counters->errors++;
	self->failures++;
	if (self->failures >= 3)
		g_critical("apexlog: the body of ApexLog %s failed (%u polls in a row); the cursor "
			   "stays before it and the next poll retries it: %s",
			   id, self->failures, error->message);
	else
		g_warning("apexlog: the body of ApexLog %s failed; the cursor stays before it and "
			  "the next poll retries it: %s",
			  id, error->message);
	self->phase = SFL_APEXLOG_ENDING;
}

static void
sfl_apexlog_body_done_cb(const GError *error, gpointer user_data)
{
	SflApexLogSource *self = user_data;
	json_t *rec = self->log;
	guint64 bytes = self->body_bytes;

	self->log = NULL;
	g_clear_pointer(&self->download, sfl_sf_download_free);
	if (!self->alive) {
		json_decref(rec);
		return;
	}
	sfl_series_add(self->m_bytes, (gdouble)bytes);
	if (self->body_too_big) {
		sfl_apexlog_finish_log(self, rec, NULL, "size");
		self->phase = SFL_APEXLOG_EMITTING;
	} else if (error != NULL) {
		sfl_apexlog_body_failed(self, rec, error);
	} else {
		sfl_apexlog_finish_log(self, rec, self->body, NULL);
		self->phase = SFL_APEXLOG_EMITTING;
	}
	g_string_truncate(self->body, 0);
	json_decref(rec);
	sfl_apexlog_step(self);
}

/* --- the poll ------------------------------------------------------------------------------- */

/* one listed log: its entry becomes pending, or its body download starts, or it is dropped */
static void
sfl_apexlog_emit_one(SflApexLogSource *self, json_t *rec)
{
	const gchar *id = sfl_apexlog_id(rec);
	json_t *length = json_object_get(rec, "LogLength");
	g_autofree gchar *path = NULL;
	g_autofree gchar *escaped = NULL;

	if (id == NULL || g_hash_table_contains(self->seen, id))
		return;
	sfl_source_counters(SFL_SOURCE(self))->rows_read++;
	if (!sfl_apexlog_keep_and_shape(self, rec, id)) {
		/* dropped: the cursor moves past it; a token carries that if nothing else does */
		sfl_apexlog_advance(self, json_string_value(json_object_get(rec, "StartTime")), id);
		return;
	}
	if (json_is_number(length) &&
	    json_number_value(length) > (gdouble)self->config->max_body_bytes) {
		sfl_apexlog_finish_log(self, rec, NULL, "size");
		return;
	}
	/* an Id is alphanumeric; escaped anyway, since it is Salesforce's data in our URL */
	escaped = g_uri_escape_string(id, NULL, FALSE);
	path = g_strdup_printf("/services/data/v%s/tooling/sobjects/ApexLog/%s/Body",
			       sfl_sf_rest_get_api_version(self->rest), escaped);
	self->counters.downloads++;
	self->log = json_incref(rec);
	self->body_too_big = FALSE;
	self->body_bytes = 0;
	g_string_truncate(self->body, 0);
	self->phase = SFL_APEXLOG_DOWNLOADING;
	self->download = sfl_sf_rest_download(self->rest, path, sfl_apexlog_body_data_cb,
					      sfl_apexlog_body_done_cb, self);
}

static void
sfl_apexlog_writable_cb(gpointer user_data)
{
	sfl_apexlog_step(user_data);
}

static void sfl_apexlog_timer_cb(gpointer user_data);

static void
sfl_apexlog_poll_done(SflApexLogSource *self)
{
	gdouble jitter = g_rand_double_range(self->rand, 0.9, 1.1);

	g_clear_pointer(&self->page, json_decref);
	self->phase = SFL_APEXLOG_IDLE;
	self->counters.polls_done++;
	sfl_source_arm_timer(SFL_SOURCE(self), &self->timer,
			     (gint64)((gdouble)self->config->poll_interval * jitter),
			     sfl_apexlog_timer_cb, self);
}

/* drives the poll: offers the pending entry (parking while the lane is full), then the next
 * log, page or the end */
static void
sfl_apexlog_step(SflApexLogSource *self)
{
	while (self->alive) {
		if (self->pending != NULL) {
			if (!sfl_source_offer(SFL_SOURCE(self), self->pending)) {
				sfl_source_wait_writable(SFL_SOURCE(self), sfl_apexlog_writable_cb,
							 self);
				return;
			}
			self->pending = NULL;
		}
		if (self->phase == SFL_APEXLOG_EMITTING) {
			if (self->page_idx < json_array_size(self->page)) {
				sfl_apexlog_emit_one(self,
						     json_array_get(self->page, self->page_idx++));
				if (self->phase == SFL_APEXLOG_DOWNLOADING)
					return;
				continue;
			}
			self->failures = 0;
			if (self->page_full) {
				g_clear_pointer(&self->page, json_decref);
				sfl_apexlog_query(self);
				return;
			}
			self->phase = SFL_APEXLOG_ENDING;
			continue;
		}
		if (self->phase == SFL_APEXLOG_ENDING) {
			g_autofree gchar *value = sfl_apexlog_render(self);

			/* the cursor moved past logs that became no entry (#64) */
			if (g_strcmp0(value, self->offered) != 0) {
				self->pending = sfl_entry_new_checkpoint_only(
					sfl_clock_wall_usec(
						sfl_source_get_context(SFL_SOURCE(self))->clock) *
						1000,
					self->key, value);
				g_free(self->offered);
				self->offered = g_steal_pointer(&value);
				continue;
			}
			sfl_apexlog_poll_done(self);
		}
		return;
	}
}

/*
 * Drops the reference an answer's callback was given. FALSE when the source stopped while the
 * call was out: the answer is dropped unread, and @self may be gone once this returns.
 */
static gboolean
sfl_apexlog_answer_wanted(SflApexLogSource *self)
{
	gboolean alive = self->alive;

	g_object_unref(self);
	return alive;
}

static void
sfl_apexlog_query_failed(SflApexLogSource *self, const GError *error)
{
	SflSourceCounters *counters = sfl_source_counters(SFL_SOURCE(self));

	counters->errors++;
	self->counters.query_errors++;
	self->failures++;
	sfl_series_inc(self->m_poll_errors);
	if (g_error_matches(error, SFL_ERROR, SFL_ERROR_THROTTLED)) {
		sfl_source_count_throttled(SFL_SOURCE(self), "soql");
		g_critical("apexlog: the ApexLog listing was throttled by Salesforce "
			   "(REQUEST_LIMIT_EXCEEDED); retrying next poll: %s",
			   error->message);
	} else if (self->failures >= 3) {
		g_critical("apexlog: the ApexLog listing failed (%u times in a row): %s",
			   self->failures, error->message);
	} else {
		g_warning("apexlog: the ApexLog listing failed; retrying next poll: %s",
			  error->message);
	}
}

static void
sfl_apexlog_query_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflApexLogSource *self = user_data;
	g_autoptr(GError) error = NULL;
	json_t *records = sfl_sf_rest_query_finish(SFL_SF_REST(object), result, &error);
	gsize i = 0;
	json_t *rec = NULL;
	guint n_new = 0;

	if (!sfl_apexlog_answer_wanted(self)) {
		g_clear_pointer(&records, json_decref);
		return;
	}
	if (records == NULL) {
		sfl_apexlog_query_failed(self, error);
		self->phase = SFL_APEXLOG_ENDING;
		sfl_apexlog_step(self);
		return;
	}
	json_array_foreach (records, i, rec) {
		const gchar *id = sfl_apexlog_id(rec);
		if (id != NULL && !g_hash_table_contains(self->seen, id))
			n_new++;
	}
	self->page_full = json_array_size(records) >= SFL_APEXLOG_PAGE;
	self->page = records;
	self->page_idx = 0;
	if (n_new == 0 && self->page_full) {
		/* a full page of logs already seen: the cursor cannot move */
		self->stalls++;
		self->counters.stalls++;
		if (self->stalls >= 2) {
			sfl_series_inc(self->m_stalls);
			g_critical(
				"apexlog: %u polls in a row found a full page of ApexLogs already "
				"seen at StartTime %s; the cursor cannot move past them",
				self->stalls, self->wm);
		} else {
			g_warning("apexlog: a full page of ApexLogs at StartTime %s was already "
				  "seen; retrying next poll",
				  self->wm);
		}
		self->page_full = FALSE;
	} else if (n_new > 0) {
		self->stalls = 0;
	}
	self->phase = SFL_APEXLOG_EMITTING;
	sfl_apexlog_step(self);
}

static void
sfl_apexlog_query(SflApexLogSource *self)
{
	const gchar *since_id = sfl_apexlog_since_id(self);
	g_autofree gchar *lit = sfl_soql_datetime_literal(self->wm);
	g_autoptr(GString) soql = g_string_new(
		"SELECT Id, LogUserId, LogLength, Operation, Request, Status, StartTime, "
		"Application, DurationMilliseconds, Location FROM ApexLog WHERE ");

	if (since_id == NULL) {
		g_string_append_printf(soql, "StartTime >= %s", lit);
	} else {
		/* SFL-0066: the id is a SOQL literal like any other value */
		g_autofree gchar *esc = sfl_soql_escape(since_id);
		g_string_append_printf(soql, "(StartTime > %s OR (StartTime = %s AND Id > '%s'))",
				       lit, lit, esc);
	}
	if (self->config->users != NULL && self->config->users[0] != NULL) {
		g_string_append(soql, " AND LogUser.Username IN (");
		for (guint i = 0; self->config->users[i] != NULL; i++) {
			g_autofree gchar *esc = sfl_soql_escape(self->config->users[i]);
			g_string_append_printf(soql, "%s'%s'", i > 0 ? ", " : "", esc);
		}
		g_string_append_c(soql, ')');
	}
	g_string_append_printf(soql, " ORDER BY StartTime ASC, Id ASC LIMIT %d", SFL_APEXLOG_PAGE);
	self->phase = SFL_APEXLOG_LISTING;
	self->counters.queries++;
	sfl_sf_rest_query_async(self->rest, soql->str, TRUE, self->cancellable,
				sfl_apexlog_query_cb, g_object_ref(self));
}

static void
sfl_apexlog_load_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflApexLogSource *self = user_data;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *value = sfl_source_load_finish(SFL_SOURCE(object), result, &error);

	if (!sfl_apexlog_answer_wanted(self))
		return;
	if (value == NULL && error != NULL) {
		sfl_source_counters(SFL_SOURCE(self))->errors++;
		g_warning("apexlog: loading the checkpoint %s failed; retrying next poll: %s",
			  self->key, error->message);
		sfl_apexlog_poll_done(self);
		return;
	}
	self->loaded = TRUE;
	sfl_apexlog_load_value(self, value);
	sfl_apexlog_query(self);
}

static void
sfl_apexlog_timer_cb(gpointer user_data)
{
	SflApexLogSource *self = user_data;
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(self));

	if (!self->alive)
		return;
	self->counters.polls++;
	self->now = sfl_clock_wall_usec(ctx->clock);
	if (!self->loaded && ctx->store != NULL) {
		self->phase = SFL_APEXLOG_LOADING;
		sfl_source_load_async(SFL_SOURCE(self), self->key, self->cancellable,
				      sfl_apexlog_load_cb, g_object_ref(self));
		return;
	}
	if (!self->loaded) {
		self->loaded = TRUE;
		sfl_apexlog_load_value(self, NULL);
	}
	sfl_apexlog_query(self);
}

/* --- the seam ------------------------------------------------------------------------------- */

static void
sfl_apexlog_source_start(SflSource *source)
{
	SflApexLogSource *self = SFL_APEXLOG_SOURCE(source);
	const SflLabelPair pairs[] = { { "source", "apexlog" }, { "event_type", "apexlog" } };
	const gchar *names[] = { "source", "object", NULL };
	const gchar *values[] = { "apexlog", "apexlog", NULL };

	self->key = sfl_source_key(source, SFL_APEXLOG_KEY);
	self->labels = sfl_source_intern_labels(source, pairs, G_N_ELEMENTS(pairs));
	if (self->labels == NULL)
		return;
	self->m_poll_errors =
		sfl_source_series(source, SFL_METRIC_COUNTER, "sf2loki_soql_poll_errors",
				  "Failed SOQL polls and listings.", names, values);
	self->m_stalls = sfl_source_series(
		source, SFL_METRIC_COUNTER, "sf2loki_watermark_stalls",
		"Polls that could not move the cursor past a full page of records sharing one "
		"timestamp.",
		names, values);
	self->m_ingested =
		sfl_source_series(source, SFL_METRIC_COUNTER, "sf2loki_apexlog_logs_ingested",
				  "ApexLog entries emitted.", NULL, NULL);
	self->m_bytes =
		sfl_source_series(source, SFL_METRIC_COUNTER, "sf2loki_apexlog_download_bytes",
				  "ApexLog body bytes downloaded.", NULL, NULL);
	self->alive = TRUE;
	/* from the loop, never from inside start() */
	sfl_source_arm_timer(source, &self->timer, 0, sfl_apexlog_timer_cb, self);
}

static void
sfl_apexlog_clear_poll(SflApexLogSource *self)
{
	sfl_clear_source(&self->cut);
	g_clear_pointer(&self->download, sfl_sf_download_free);
	g_clear_pointer(&self->log, json_decref);
	g_clear_pointer(&self->page, json_decref);
	g_clear_pointer(&self->pending, sfl_entry_unref);
}

static void
sfl_apexlog_source_stop(SflSource *source)
{
	SflApexLogSource *self = SFL_APEXLOG_SOURCE(source);

	self->alive = FALSE;
	g_cancellable_cancel(self->cancellable);
	sfl_clear_source(&self->timer);
	sfl_source_cancel_wait(source, self);
	sfl_apexlog_clear_poll(self);
	self->phase = SFL_APEXLOG_IDLE;
}

static void
sfl_apexlog_source_finalize(GObject *object)
{
	SflApexLogSource *self = SFL_APEXLOG_SOURCE(object);

	sfl_clear_source(&self->timer);
	sfl_apexlog_clear_poll(self);
	g_clear_object(&self->rest);
	g_clear_pointer(&self->transforms, sfl_transforms_free);
	g_clear_object(&self->cancellable);
	g_clear_pointer(&self->rand, g_rand_free);
	g_clear_pointer(&self->record, sfl_record_free);
	sfl_shaped_clear(&self->shaped);
	g_clear_pointer(&self->labels, sfl_labels_unref);
	g_free(self->key);
	g_free(self->wm);
	g_free(self->offered);
	g_ptr_array_unref(self->ids);
	g_hash_table_unref(self->seen);
	g_string_free(self->body, TRUE);
	G_OBJECT_CLASS(sfl_apexlog_source_parent_class)->finalize(object);
}

static void
sfl_apexlog_source_class_init(SflApexLogSourceClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflSourceClass *source_class = SFL_SOURCE_CLASS(klass);

	object_class->finalize = sfl_apexlog_source_finalize;
	source_class->start = sfl_apexlog_source_start;
	source_class->stop = sfl_apexlog_source_stop;
}

static void
sfl_apexlog_source_init(SflApexLogSource *self)
{
	self->cancellable = g_cancellable_new();
	self->rand = g_rand_new();
	self->record = sfl_record_new();
	sfl_shaped_init(&self->shaped);
	self->ids = g_ptr_array_new_with_free_func(g_free);
	self->seen = g_hash_table_new(g_str_hash, g_str_equal);
	self->body = g_string_new(NULL);
}

/**
 * sfl_apexlog_source_new:
 * @rest: the org's REST client
 * @config: sources.apexlog
 * @salt: the transform salt, or %NULL
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the source, or %NULL with @error set
 */
SflApexLogSource *
sfl_apexlog_source_new(SflSfRest *rest, const SflApexLogConfig *config, const gchar *salt,
		       GError **error)
{
	g_autoptr(SflApexLogSource) self = NULL;

	g_return_val_if_fail(SFL_IS_SF_REST(rest), NULL);
	g_return_val_if_fail(config != NULL, NULL);

	self = g_object_new(SFL_TYPE_APEXLOG_SOURCE, "name", "apexlog", NULL);
	self->rest = g_object_ref(rest);
	self->config = config;
	if (config->transforms != NULL && config->transforms->len > 0) {
		self->transforms = sfl_transforms_new(config->transforms, salt, error);
		if (self->transforms == NULL) {
			g_prefix_error(error, "sources.apexlog.transforms: ");
			return NULL;
		}
	}
	return g_steal_pointer(&self);
}

/**
 * sfl_apexlog_source_get_counters:
 * @self: the source
 *
 * Returns: (transfer none): the source's counters
 */
const SflApexLogCounters *
sfl_apexlog_source_get_counters(SflApexLogSource *self)
{
	g_return_val_if_fail(SFL_IS_APEXLOG_SOURCE(self), NULL);
	return &self->counters;
}

/**
 * sfl_apexlog_source_describe_checkpoint:
 * @key: a committed key, without the multi-org prefix
 * @value: its value
 * @view: (out caller-allocates): filled when the key is this source's
 *
 * Returns: %TRUE when @key is the ApexLog cursor
 */
gboolean
sfl_apexlog_source_describe_checkpoint(const gchar *key, const gchar *value,
				       SflCheckpointView *view)
{
	if (!g_str_equal(key, SFL_APEXLOG_KEY))
		return FALSE;
	view->source = "apexlog";
	view->object = "apexlog";
	sfl_checkpoint_view_cursor(view, value, "last_ts");
	return TRUE;
}
