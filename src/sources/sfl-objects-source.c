/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflObjectsSource"

#include "config.h"

#include "sfl-objects-source.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-pyjson.h"
#include "sfl-record.h"
#include "sfl-shape.h"

/* one cursor per object: "eventlog_objects:<object>" (the original's keys) */
#define SFL_OBJECTS_KEY_PREFIX "eventlog_objects:"

/*
 * One object is polled at a time, in config order, each on its own schedule. A poll reads
 * pages of at most 200 records (Salesforce's cap for FIELDS(ALL)) and emits each page in two
 * passes: the first moves the cursor and finds the last record that becomes an entry, the
 * second shapes and offers. Every entry but the page's last carries the cursor from before
 * the page and the last carries the cursor after it, so an interrupted page is read again
 * whole and the value is rendered twice per page rather than once per record.
 */

#define SFL_OBJ_PAGE   200
#define SFL_OBJ_WINDOW 500
/*
 * Ids one big-object `Id NOT IN (...)` may list: 400 quoted ids are about 12 KiB of URL, under
 * Salesforce's 16 KiB request-URI limit (SFL-0011). A tie group of up to 400 + one page
 * (600 records) is read whole.
 */
#define SFL_OBJ_TIE_IDS 400

typedef struct {
	const SflEventLogObjectConfig *cfg;
	gchar *key;
	SflLabels *labels;
	gboolean loaded;
	gchar *wm;	     /* the watermark as Salesforce wrote it */
	GPtrArray *older;    /* ids before the watermark instant, capped */
	GPtrArray *boundary; /* ids at the watermark instant, never capped (SFL-0043) */
	GHashTable *seen;    /* every id of both lists */
	gint64 next_due;     /* monotonic */
	guint failures;
	gchar *stalled_at; /* the boundary of the last stall */
	SflSeries *m_poll_errors;
	SflSeries *m_stalls;
} SflObj;

typedef struct _SflObjectsSource SflObjectsSource;

struct _SflObjectsSource {
	SflSource parent_instance;
	SflSfRest *rest;
	const SflEventLogObjectsConfig *config;
	SflTransforms *transforms;
	GPtrArray *objs; /* SflObj, config order */
	GCancellable *cancellable;
	GSource *timer;
	GRand *rand;
	gboolean busy;	/* a call is in flight or a page is being emitted */
	gboolean alive; /* cleared by stop; in-flight callbacks then drop their results */
	SflObj *active;
	gint64 now; /* wall clock of the poll */
	gboolean pass_throttled;
	/* the page being emitted */
	json_t *page;
	guint page_idx;
	gint page_last;	    /* index of the last record that becomes an entry, or -1 */
	gboolean page_full; /* the query should go on after this page */
	GRefString *pre;
	GRefString *post;
	SflEntry *pending;
	SflRecord *record;
	/* the big-object drain */
	json_t *collected;	   /* array, newest first */
	GHashTable *collected_ids; /* id → TRUE */
	gchar *upper;		   /* SOQL literal of the bound, or NULL */
	gboolean upper_exclusive;
	gchar *tie_ts; /* raw timestamp of the tie group, NULL outside tie mode */
	GPtrArray *tie_ids;
	SflObjectsCounters counters;
};

G_DEFINE_FINAL_TYPE(SflObjectsSource, sfl_objects_source, SFL_TYPE_SOURCE)

static void sfl_objects_poll_next(SflObjectsSource *self);
static void sfl_objects_query(SflObjectsSource *self);
static void sfl_objects_emit(SflObjectsSource *self);
static void sfl_objects_drain_query(SflObjectsSource *self);

/* --- the cursor ----------------------------------------------------------------------------- */

static void
sfl_obj_free(gpointer data)
{
	SflObj *obj = data;
	g_free(obj->key);
	g_clear_pointer(&obj->labels, sfl_labels_unref);
	g_free(obj->wm);
	g_ptr_array_unref(obj->older);
	g_ptr_array_unref(obj->boundary);
	g_hash_table_unref(obj->seen);
	g_free(obj->stalled_at);
	g_free(obj);
}

static const gchar *
sfl_obj_last_id(SflObj *obj)
{
	if (obj->boundary->len > 0)
		return g_ptr_array_index(obj->boundary, obj->boundary->len - 1);
	if (obj->older->len > 0)
		return g_ptr_array_index(obj->older, obj->older->len - 1);
	return NULL;
}

static gboolean
sfl_obj_same_instant(const gchar *a, const gchar *b)
{
	gint64 ua = 0;
	gint64 ub = 0;

	if (a == NULL || b == NULL)
		return FALSE;
	if (g_str_equal(a, b))
		return TRUE;
	return sfl_parse_iso_datetime(a, &ua) && sfl_parse_iso_datetime(b, &ub) && ua == ub;
}

static void
sfl_obj_evict_older(SflObj *obj)
{
	while (obj->older->len > SFL_OBJ_WINDOW) {
		g_hash_table_remove(obj->seen, g_ptr_array_index(obj->older, 0));
		g_ptr_array_remove_index(obj->older, 0);
	}
}

/* one record moves the cursor (docs/sources/objects.md, boundary ids kept whole) */
static void
sfl_obj_advance(SflObj *obj, const gchar *ts_raw, const gchar *id)
{
	gint64 usec = 0;
	gchar *copy = NULL;

	if (ts_raw != NULL && sfl_parse_iso_datetime(ts_raw, &usec) &&
	    !sfl_obj_same_instant(ts_raw, obj->wm)) {
		/* a new instant: the old boundary set becomes ordinary history */
		for (guint i = 0; i < obj->boundary->len; i++)
			g_ptr_array_add(obj->older, g_steal_pointer(&obj->boundary->pdata[i]));
		g_ptr_array_set_size(obj->boundary, 0);
		g_free(obj->wm);
		obj->wm = g_strdup(ts_raw);
	}
	if (id == NULL || g_hash_table_contains(obj->seen, id)) {
		sfl_obj_evict_older(obj);
		return;
	}
	copy = g_strdup(id);
	if (ts_raw != NULL && sfl_obj_same_instant(ts_raw, obj->wm))
		g_ptr_array_add(obj->boundary, copy);
	else
		g_ptr_array_add(obj->older, copy);
	g_hash_table_add(obj->seen, copy);
	sfl_obj_evict_older(obj);
}

/* {"ids": [...], "last_ts": "..."}: json.dumps with sorted keys */
static GRefString *
sfl_obj_render(SflObj *obj)
{
	g_autoptr(GString) out =
		g_string_sized_new(64 + 24 * (obj->older->len + obj->boundary->len));
	gboolean first = TRUE;

	g_string_append(out, "{\"ids\": [");
	for (guint l = 0; l < 2; l++) {
		GPtrArray *ids = l == 0 ? obj->older : obj->boundary;
		for (guint i = 0; i < ids->len; i++) {
			if (!first)
				g_string_append(out, ", ");
			first = FALSE;
			sfl_pyjson_append_string(out, g_ptr_array_index(ids, i));
		}
	}
	g_string_append(out, "], \"last_ts\": ");
	sfl_pyjson_append_string(out, obj->wm != NULL ? obj->wm : "");
	g_string_append_c(out, '}');
	return g_ref_string_new(out->str);
}

static void
sfl_obj_set_ids(SflObj *obj, json_t *ids)
{
	gsize i = 0;
	json_t *item = NULL;

	json_array_foreach (ids, i, item) {
		const gchar *id = json_string_value(item);
		if (id == NULL || g_hash_table_contains(obj->seen, id))
			continue;
		/* stored ids may include a whole tie group: keep them all until the cursor moves */
		g_ptr_array_add(obj->boundary, g_strdup(id));
		g_hash_table_add(obj->seen,
				 g_ptr_array_index(obj->boundary, obj->boundary->len - 1));
	}
}

/* tolerant decoding (docs/sources/objects.md, "Checkpoint"): a non-object is a legacy bare
 * watermark */
static void
sfl_obj_load_value(SflObjectsSource *self, SflObj *obj, const gchar *value)
{
	json_t *root = value != NULL ? json_loads(value, JSON_DECODE_ANY, NULL) : NULL;
	const gchar *wm = value;
	gint64 usec = 0;

	if (root != NULL && json_is_object(root)) {
		json_t *ids = json_object_get(root, "ids");
		wm = json_string_value(json_object_get(root, "last_ts"));
		if (json_is_array(ids))
			sfl_obj_set_ids(obj, ids);
	} else if (root != NULL && json_is_string(root)) {
		wm = json_string_value(root);
	}
	if (wm != NULL && sfl_parse_iso_datetime(wm, &usec)) {
		obj->wm = g_strdup(wm);
	} else {
		g_autofree gchar *lookback = sfl_duration_format(obj->cfg->lookback);
		if (value != NULL)
			g_warning("eventlog_objects %s: the stored watermark in %s is not a "
				  "timestamp; reading the last %s instead",
				  obj->cfg->name, obj->key, lookback);
		obj->wm = sfl_format_iso_seconds(self->now - obj->cfg->lookback);
	}
	if (root != NULL)
		json_decref(root);
}

/* --- emission ------------------------------------------------------------------------------- */

static const gchar *
sfl_objects_record_id(json_t *rec)
{
	const gchar *id = json_string_value(json_object_get(rec, "Id"));
	return id != NULL && id[0] != '\0' ? id : NULL;
}

/* how this object's records become entries */
static void
sfl_objects_spec(SflObjectsSource *self, SflObj *obj, const gchar *const *timestamp_fields,
		 SflShapeSpec *spec)
{
	*spec = (SflShapeSpec){
		.transforms = self->transforms,
		.sample = obj->cfg->sample,
		.sample_field = "Id",
		.event_type = obj->cfg->name,
		.timestamp_fields = timestamp_fields,
		.n_timestamp_fields = 3,
		.now_usec = self->now,
		.metadata_fields = sfl_source_get_context(SFL_SOURCE(self))->metadata_fields,
	};
}

/* transforms + sampling on @rec, loaded as the current record; FALSE when it becomes no
 * entry */
static gboolean
sfl_objects_keep(SflObjectsSource *self, SflObj *obj, json_t *rec, gboolean count)
{
	const gchar *const fields[] = { obj->cfg->timestamp_field, "EventDate", "CreatedDate" };
	SflShapeSpec spec;

	sfl_objects_spec(self, obj, fields, &spec);
	sfl_record_reset(self->record);
	sfl_record_add_json_object(self->record, rec);
	return sfl_source_keep_record(SFL_SOURCE(self), &spec, self->record, count);
}

/* the entry for @rec, NULL when a transform or the sampler dropped it (counted) */
static SflEntry *
sfl_objects_shape(SflObjectsSource *self, SflObj *obj, json_t *rec, GRefString *checkpoint)
{
	const gchar *const fields[] = { obj->cfg->timestamp_field, "EventDate", "CreatedDate" };
	SflShapeSpec spec;

	sfl_objects_spec(self, obj, fields, &spec);
	/* a record without a time of its own is dated by the cursor */
	spec.has_fallback = obj->wm != NULL && sfl_parse_iso_datetime(obj->wm, &spec.fallback_usec);
	sfl_record_reset(self->record);
	sfl_record_add_json_object(self->record, rec);
	return sfl_source_emit_record(SFL_SOURCE(self), &spec, self->record, obj->labels, obj->key,
				      checkpoint);
}

/* pass 1: moves the cursor over the new records of @page and finds the last kept one */
static json_t *
sfl_objects_prepare(SflObjectsSource *self, SflObj *obj, json_t *records, guint *n_new)
{
	json_t *fresh = json_array();
	gsize i = 0;
	json_t *rec = NULL;

	self->pre = sfl_obj_render(obj);
	self->page_last = -1;
	json_array_foreach (records, i, rec) {
		const gchar *id = sfl_objects_record_id(rec);
		const gchar *ts =
			json_string_value(json_object_get(rec, obj->cfg->timestamp_field));

		if (id != NULL && g_hash_table_contains(obj->seen, id))
			continue;
		sfl_source_counters(SFL_SOURCE(self))->rows_read++;
		sfl_obj_advance(obj, ts, id);
		json_array_append(fresh, rec);
		if (sfl_objects_keep(self, obj, rec, FALSE))
			self->page_last = (gint)json_array_size(fresh) - 1;
	}
	self->post = sfl_obj_render(obj);
	*n_new = (guint)json_array_size(fresh);
	return fresh;
}

static void
sfl_objects_clear_page(SflObjectsSource *self)
{
	g_clear_pointer(&self->page, json_decref);
	g_clear_pointer(&self->pre, g_ref_string_release);
	g_clear_pointer(&self->post, g_ref_string_release);
	g_clear_pointer(&self->pending, sfl_entry_unref);
}

static void
sfl_objects_writable_cb(gpointer user_data)
{
	SflObjectsSource *self = user_data;

	if (!self->alive || self->pending == NULL)
		return;
	if (!sfl_source_offer(SFL_SOURCE(self), self->pending)) {
		sfl_source_wait_writable(SFL_SOURCE(self), sfl_objects_writable_cb, self);
		return;
	}
	self->pending = NULL;
	sfl_objects_emit(self);
}

static gboolean
sfl_objects_offer(SflObjectsSource *self, SflEntry *entry)
{
	if (sfl_source_offer(SFL_SOURCE(self), entry))
		return TRUE;
	self->pending = entry;
	sfl_source_wait_writable(SFL_SOURCE(self), sfl_objects_writable_cb, self);
	return FALSE;
}

static void
sfl_objects_poll_done(SflObjectsSource *self)
{
	SflObj *obj = self->active;
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(self));
	gdouble jitter = g_rand_double_range(self->rand, 0.9, 1.1);

	obj->next_due = sfl_clock_monotonic_usec(ctx->clock) +
			(gint64)((gdouble)obj->cfg->poll_interval * jitter);
	self->active = NULL;
	self->counters.polls_done++;
	sfl_objects_poll_next(self);
}

/* pass 2: shape and offer the page's records; parks while the lane is full */
static void
sfl_objects_emit(SflObjectsSource *self)
{
	SflObj *obj = self->active;

	while (self->alive && self->page_idx < json_array_size(self->page)) {
		json_t *rec = json_array_get(self->page, self->page_idx);
		gboolean last = (gint)self->page_idx == self->page_last;
		SflEntry *entry = NULL;

		self->page_idx++;
		entry = sfl_objects_shape(self, obj, rec, last ? self->post : self->pre);
		if (entry == NULL)
			continue;
		if (!sfl_objects_offer(self, entry))
			return;
	}
	if (!self->alive)
		return;
	if (self->page_last < 0 && !g_str_equal(self->pre, self->post)) {
		/* the cursor moved but every record was filtered or sampled out (#64) */
		SflEntry *token = sfl_entry_new_checkpoint_only(
			sfl_clock_wall_usec(sfl_source_get_context(SFL_SOURCE(self))->clock) * 1000,
			obj->key, self->post);
		self->page_last = G_MAXINT;
		if (!sfl_objects_offer(self, token))
			return;
	}
	sfl_objects_clear_page(self);
	obj->failures = 0;
	if (self->page_full && !obj->cfg->big_object) {
		sfl_objects_query(self);
		return;
	}
	sfl_objects_poll_done(self);
}

static void
sfl_objects_stall(SflObjectsSource *self, SflObj *obj)
{
	if (g_strcmp0(obj->stalled_at, obj->wm) == 0) {
		self->counters.stalls++;
		sfl_series_inc(obj->m_stalls);
		g_critical("eventlog_objects %s: still more than %d records at %s %s; the cursor "
			   "cannot move past them",
			   obj->cfg->name, SFL_OBJ_PAGE, obj->cfg->timestamp_field, obj->wm);
		return;
	}
	g_free(obj->stalled_at);
	obj->stalled_at = g_strdup(obj->wm);
	g_warning("eventlog_objects %s: a full page of records at %s %s was already seen; "
		  "retrying next poll",
		  obj->cfg->name, obj->cfg->timestamp_field, obj->wm);
}

static void
sfl_objects_failed(SflObjectsSource *self, SflObj *obj, const GError *error)
{
	SflSourceCounters *counters = sfl_source_counters(SFL_SOURCE(self));

	counters->errors++;
	self->counters.query_errors++;
	obj->failures++;
	sfl_series_inc(obj->m_poll_errors);
	if (g_error_matches(error, SFL_ERROR, SFL_ERROR_THROTTLED)) {
		sfl_source_count_throttled(SFL_SOURCE(self), "soql");
		self->pass_throttled = TRUE;
		g_critical("eventlog_objects %s: throttled by Salesforce (REQUEST_LIMIT_EXCEEDED); "
			   "every object waits a poll interval: %s",
			   obj->cfg->name, error->message);
	} else if (obj->failures >= 3) {
		g_critical("eventlog_objects %s: poll failed (%u times in a row): %s",
			   obj->cfg->name, obj->failures, error->message);
	} else {
		g_warning("eventlog_objects %s: poll failed; retrying next poll: %s",
			  obj->cfg->name, error->message);
	}
	if (g_strcmp0(sfl_error_get_peer_code(error), "BIG_OBJECT_UNSUPPORTED_OPERATION") == 0)
		g_warning("eventlog_objects %s: this looks like a big object; set big_object: "
			  "true for it",
			  obj->cfg->name);
}

/* --- ascending polls ------------------------------------------------------------------------ */

static gchar *
sfl_objects_upper_clause(SflObjectsSource *self, SflObj *obj)
{
	g_autofree gchar *iso = NULL;
	g_autofree gchar *lit = NULL;

	if (obj->cfg->settle_window <= 0)
		return g_strdup("");
	iso = sfl_format_iso_seconds(self->now - obj->cfg->settle_window);
	lit = sfl_soql_datetime_literal(iso);
	return g_strdup_printf(" AND %s <= %s", obj->cfg->timestamp_field, lit);
}

/*
 * Drops the reference an answer's callback was given. FALSE when the source stopped while the
 * call was out: the answer is dropped unread, and @self may be gone once this returns.
 */
static gboolean
sfl_objects_answer_wanted(SflObjectsSource *self)
{
	gboolean alive = self->alive;

	g_object_unref(self);
	return alive;
}

static void
sfl_objects_query_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflObjectsSource *self = user_data;
	SflObj *obj = self->active;
	g_autoptr(GError) error = NULL;
	json_t *records = sfl_sf_rest_query_finish(SFL_SF_REST(object), result, &error);
	guint n_new = 0;

	if (!sfl_objects_answer_wanted(self)) {
		g_clear_pointer(&records, json_decref);
		return;
	}
	if (records == NULL) {
		sfl_objects_failed(self, obj, error);
		sfl_objects_poll_done(self);
		return;
	}
	self->page_full = json_array_size(records) >= SFL_OBJ_PAGE;
	self->page = sfl_objects_prepare(self, obj, records, &n_new);
	json_decref(records);
	self->page_idx = 0;
	if (n_new == 0 && self->page_full) {
		sfl_objects_stall(self, obj);
		self->page_full = FALSE;
	} else if (n_new > 0) {
		g_clear_pointer(&obj->stalled_at, g_free);
	}
	sfl_objects_emit(self);
}

static void
sfl_objects_query(SflObjectsSource *self)
{
	SflObj *obj = self->active;
	const gchar *ts = obj->cfg->timestamp_field;
	const gchar *last_id = sfl_obj_last_id(obj);
	g_autofree gchar *lit = sfl_soql_datetime_literal(obj->wm);
	g_autofree gchar *upper = sfl_objects_upper_clause(self, obj);
	g_autofree gchar *where = NULL;
	g_autofree gchar *soql = NULL;

	if (last_id == NULL) {
		where = g_strdup_printf("%s >= %s", ts, lit);
	} else {
		g_autofree gchar *esc = sfl_soql_escape(last_id);
		where = g_strdup_printf("(%s > %s OR (%s = %s AND Id > '%s'))", ts, lit, ts, lit,
					esc);
	}
	soql = g_strdup_printf("SELECT FIELDS(ALL) FROM %s WHERE %s%s ORDER BY %s ASC, Id ASC "
			       "LIMIT %d",
			       obj->cfg->name, where, upper, ts, SFL_OBJ_PAGE);
	self->counters.queries++;
	sfl_sf_rest_query_async(self->rest, soql, FALSE, self->cancellable, sfl_objects_query_cb,
				g_object_ref(self));
}

/* --- the big-object drain (docs/sources/objects.md) ---------------------------------------- */

static void
sfl_objects_drain_reset(SflObjectsSource *self)
{
	g_clear_pointer(&self->collected, json_decref);
	g_hash_table_remove_all(self->collected_ids);
	g_clear_pointer(&self->upper, g_free);
	g_clear_pointer(&self->tie_ts, g_free);
	g_ptr_array_set_size(self->tie_ids, 0);
	self->upper_exclusive = FALSE;
}

static gint
sfl_objects_ts_cmp(gconstpointer a, gconstpointer b, gpointer user_data)
{
	const gchar *field = user_data;
	json_t *ra = *(json_t *const *)a;
	json_t *rb = *(json_t *const *)b;
	gint64 ua = 0;
	gint64 ub = 0;
	gboolean pa = sfl_parse_iso_datetime(json_string_value(json_object_get(ra, field)), &ua);
	gboolean pb = sfl_parse_iso_datetime(json_string_value(json_object_get(rb, field)), &ub);

	/* unparseable first, then ascending */
	if (pa != pb)
		return pa ? 1 : -1;
	return ua < ub ? -1 : (ua > ub ? 1 : 0);
}

/* the sweep is complete: emit what it collected, oldest first */
static void
sfl_objects_drain_finish(SflObjectsSource *self)
{
	SflObj *obj = self->active;
	g_autoptr(GPtrArray) sorted = g_ptr_array_new();
	json_t *records = json_array();
	gsize i = 0;
	json_t *rec = NULL;
	guint n_new = 0;

	json_array_foreach (self->collected, i, rec)
		g_ptr_array_add(sorted, rec);
	/* newest-first pages reversed keep ties in a stable order before the sort */
	for (guint a = 0, b = sorted->len > 0 ? sorted->len - 1 : 0; a < b; a++, b--) {
		gpointer t = sorted->pdata[a];
		sorted->pdata[a] = sorted->pdata[b];
		sorted->pdata[b] = t;
	}
	g_ptr_array_sort_with_data(sorted, sfl_objects_ts_cmp, (gpointer)obj->cfg->timestamp_field);
	for (guint k = 0; k < sorted->len; k++)
		json_array_append(records, g_ptr_array_index(sorted, k));
	sfl_objects_drain_reset(self);
	self->page_full = FALSE;
	self->page = sfl_objects_prepare(self, obj, records, &n_new);
	json_decref(records);
	if (n_new > 0)
		g_clear_pointer(&obj->stalled_at, g_free);
	self->page_idx = 0;
	sfl_objects_emit(self);
}

static void
sfl_objects_drain_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflObjectsSource *self = user_data;
	SflObj *obj = self->active;
	g_autoptr(GError) error = NULL;
	json_t *records = sfl_sf_rest_query_finish(SFL_SF_REST(object), result, &error);
	gboolean full = FALSE;
	guint n_new = 0;
	gsize i = 0;
	json_t *rec = NULL;
	const gchar *ts = obj != NULL ? obj->cfg->timestamp_field : NULL;
	const gchar *first_ts = NULL;
	const gchar *oldest_ts = NULL;
	gboolean one_instant = TRUE;

	if (!sfl_objects_answer_wanted(self)) {
		g_clear_pointer(&records, json_decref);
		return;
	}
	if (records == NULL) {
		/* the whole sweep is discarded; the next poll starts it again */
		sfl_objects_drain_reset(self);
		sfl_objects_failed(self, obj, error);
		sfl_objects_poll_done(self);
		return;
	}
	full = json_array_size(records) >= SFL_OBJ_PAGE;
	json_array_foreach (records, i, rec) {
		const gchar *id = sfl_objects_record_id(rec);
		const gchar *t = json_string_value(json_object_get(rec, ts));

		if (first_ts == NULL)
			first_ts = t;
		else if (!sfl_obj_same_instant(first_ts, t))
			one_instant = FALSE;
		if (t != NULL)
			oldest_ts = t;
		if (id == NULL || g_hash_table_contains(self->collected_ids, id))
			continue;
		n_new++;
		g_hash_table_add(self->collected_ids, g_strdup(id));
		json_array_append(self->collected, rec);
		if (self->tie_ts != NULL)
			g_ptr_array_add(self->tie_ids, g_strdup(id));
	}
	/* the memory cap evicts the newest: a later poll finds them once the watermark moved */
	if (obj->cfg->max_catchup_records > 0 &&
	    json_array_size(self->collected) > (gsize)obj->cfg->max_catchup_records) {
		gsize excess =
			json_array_size(self->collected) - (gsize)obj->cfg->max_catchup_records;
		json_t *kept = json_array();
		for (gsize k = 0; k < json_array_size(self->collected); k++) {
			json_t *r = json_array_get(self->collected, k);
			const gchar *id = sfl_objects_record_id(r);
			if (k >= excess)
				json_array_append(kept, r);
			else if (id != NULL)
				g_hash_table_remove(self->collected_ids, id);
		}
		json_decref(self->collected);
		self->collected = kept;
	}
	if (self->tie_ts != NULL) {
		if (!full) {
			g_free(self->upper);
			self->upper = sfl_soql_datetime_literal(self->tie_ts);
			self->upper_exclusive = TRUE;
			g_clear_pointer(&self->tie_ts, g_free);
			g_ptr_array_set_size(self->tie_ids, 0);
		} else if (n_new == 0) {
			sfl_objects_stall(self, obj);
			json_decref(records);
			sfl_objects_drain_finish(self);
			return;
		} else if (self->tie_ids->len > SFL_OBJ_TIE_IDS) {
			/* SFL-0011: a longer NOT IN would pass Salesforce's URI limit; move on */
			self->counters.tie_overflows++;
			g_critical("eventlog_objects %s: %u or more records share %s %s; listing "
				   "more would pass Salesforce's URL limit, so the rest of that "
				   "instant is skipped",
				   obj->cfg->name, self->tie_ids->len, ts, self->tie_ts);
			g_free(self->upper);
			self->upper = sfl_soql_datetime_literal(self->tie_ts);
			self->upper_exclusive = TRUE;
			g_clear_pointer(&self->tie_ts, g_free);
			g_ptr_array_set_size(self->tie_ids, 0);
		}
	} else if (!full) {
		json_decref(records);
		sfl_objects_drain_finish(self);
		return;
	} else if (one_instant && first_ts != NULL) {
		self->tie_ts = g_strdup(first_ts);
		json_array_foreach (records, i, rec) {
			const gchar *id = sfl_objects_record_id(rec);
			if (id != NULL)
				g_ptr_array_add(self->tie_ids, g_strdup(id));
		}
	} else if (n_new == 0) {
		sfl_objects_stall(self, obj);
		json_decref(records);
		sfl_objects_drain_finish(self);
		return;
	} else {
		g_free(self->upper);
		self->upper = sfl_soql_datetime_literal(oldest_ts);
		self->upper_exclusive = FALSE;
	}
	json_decref(records);
	sfl_objects_drain_query(self);
}

static void
sfl_objects_drain_query(SflObjectsSource *self)
{
	SflObj *obj = self->active;
	const gchar *ts = obj->cfg->timestamp_field;
	g_autofree gchar *lit = sfl_soql_datetime_literal(obj->wm);
	g_autoptr(GString) where = g_string_new(NULL);
	g_autofree gchar *soql = NULL;

	g_string_append_printf(where, "%s >= %s", ts, lit);
	if (self->tie_ts != NULL) {
		g_autofree gchar *tie = sfl_soql_datetime_literal(self->tie_ts);
		g_string_append_printf(where, " AND %s = %s", ts, tie);
		if (self->tie_ids->len > 0) {
			g_string_append(where, " AND Id NOT IN (");
			for (guint i = 0; i < self->tie_ids->len; i++) {
				g_autofree gchar *esc =
					sfl_soql_escape(g_ptr_array_index(self->tie_ids, i));
				g_string_append_printf(where, "%s'%s'", i > 0 ? ", " : "", esc);
			}
			g_string_append_c(where, ')');
		}
	} else if (self->upper != NULL) {
		g_string_append_printf(where, " AND %s %s %s", ts,
				       self->upper_exclusive ? "<" : "<=", self->upper);
	}
	soql = g_strdup_printf("SELECT FIELDS(ALL) FROM %s WHERE %s ORDER BY %s DESC LIMIT %d",
			       obj->cfg->name, where->str, ts, SFL_OBJ_PAGE);
	self->counters.queries++;
	sfl_sf_rest_query_async(self->rest, soql, FALSE, self->cancellable, sfl_objects_drain_cb,
				g_object_ref(self));
}

static void
sfl_objects_drain_start(SflObjectsSource *self)
{
	SflObj *obj = self->active;

	sfl_objects_drain_reset(self);
	self->collected = json_array();
	if (obj->cfg->settle_window > 0) {
		g_autofree gchar *iso = sfl_format_iso_seconds(self->now - obj->cfg->settle_window);
		self->upper = sfl_soql_datetime_literal(iso);
	}
	sfl_objects_drain_query(self);
}

/* --- scheduling ----------------------------------------------------------------------------- */

static void
sfl_objects_poll_start(SflObjectsSource *self)
{
	SflObj *obj = self->active;

	self->counters.polls++;
	if (obj->cfg->big_object)
		sfl_objects_drain_start(self);
	else
		sfl_objects_query(self);
}

static void
sfl_objects_load_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflObjectsSource *self = user_data;
	SflObj *obj = self->active;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *value = sfl_source_load_finish(SFL_SOURCE(object), result, &error);

	if (!sfl_objects_answer_wanted(self))
		return;
	if (value == NULL && error != NULL) {
		sfl_objects_failed(self, obj, error);
		sfl_objects_poll_done(self);
		return;
	}
	obj->loaded = TRUE;
	sfl_obj_load_value(self, obj, value);
	sfl_objects_poll_start(self);
}

static void sfl_objects_timer_cb(gpointer user_data);

/* polls the next due object in config order, or sleeps until one is due */
static void
sfl_objects_poll_next(SflObjectsSource *self)
{
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(self));
	gint64 now = sfl_clock_monotonic_usec(ctx->clock);
	gint64 earliest = G_MAXINT64;

	if (!self->alive)
		return;
	for (guint i = 0; i < self->objs->len; i++) {
		SflObj *obj = g_ptr_array_index(self->objs, i);
		if (obj->next_due > now) {
			earliest = MIN(earliest, obj->next_due);
			continue;
		}
		if (self->pass_throttled) {
			/* the org's API budget is spent: everyone waits an interval */
			obj->next_due = now + (gint64)((gdouble)obj->cfg->poll_interval *
						       g_rand_double_range(self->rand, 0.9, 1.1));
			earliest = MIN(earliest, obj->next_due);
			continue;
		}
		self->active = obj;
		self->now = sfl_clock_wall_usec(ctx->clock);
		if (!obj->loaded && ctx->store != NULL) {
			sfl_source_load_async(SFL_SOURCE(self), obj->key, self->cancellable,
					      sfl_objects_load_cb, g_object_ref(self));
			return;
		}
		if (!obj->loaded) {
			obj->loaded = TRUE;
			sfl_obj_load_value(self, obj, NULL);
		}
		sfl_objects_poll_start(self);
		return;
	}
	self->pass_throttled = FALSE;
	if (earliest == G_MAXINT64)
		return;
	sfl_source_arm_timer(SFL_SOURCE(self), &self->timer, MAX(earliest - now, 0),
			     sfl_objects_timer_cb, self);
}

static void
sfl_objects_timer_cb(gpointer user_data)
{
	sfl_objects_poll_next(user_data);
}

/* --- the seam ------------------------------------------------------------------------------- */

static void
sfl_objects_source_start(SflSource *source)
{
	SflObjectsSource *self = SFL_OBJECTS_SOURCE(source);
	const SflSourceContext *ctx = sfl_source_get_context(source);

	self->alive = TRUE;
	for (guint i = 0; i < self->config->objects->len; i++) {
		const SflEventLogObjectConfig *cfg = g_ptr_array_index(self->config->objects, i);
		SflObj *obj = g_new0(SflObj, 1);
		g_autofree gchar *key = g_strconcat(SFL_OBJECTS_KEY_PREFIX, cfg->name, NULL);
		const SflLabelPair pairs[] = { { "source", "eventlog_objects" },
					       { "event_type", cfg->name } };

		obj->cfg = cfg;
		obj->key = sfl_source_key(source, key);
		obj->labels = sfl_source_intern_labels(source, pairs, G_N_ELEMENTS(pairs));
		obj->older = g_ptr_array_new_with_free_func(g_free);
		obj->boundary = g_ptr_array_new_with_free_func(g_free);
		obj->seen = g_hash_table_new(g_str_hash, g_str_equal);
		obj->next_due = sfl_clock_monotonic_usec(ctx->clock);
		{
			const gchar *names[] = { "source", "object", NULL };
			const gchar *values[] = { "eventlog_objects", cfg->name, NULL };
			obj->m_poll_errors = sfl_source_series(
				source, SFL_METRIC_COUNTER, "sf2loki_soql_poll_errors",
				"Failed SOQL polls and listings.", names, values);
			obj->m_stalls = sfl_source_series(
				source, SFL_METRIC_COUNTER, "sf2loki_watermark_stalls",
				"Polls that could not move the cursor past a full page of "
				"records sharing one timestamp.",
				names, values);
		}
		if (obj->labels == NULL) {
			sfl_obj_free(obj);
			continue;
		}
		g_ptr_array_add(self->objs, obj);
	}
	/* from the loop, never from inside start() */
	sfl_source_arm_timer(source, &self->timer, 0, sfl_objects_timer_cb, self);
}

static void
sfl_objects_source_stop(SflSource *source)
{
	SflObjectsSource *self = SFL_OBJECTS_SOURCE(source);

	self->alive = FALSE;
	g_cancellable_cancel(self->cancellable);
	sfl_clear_source(&self->timer);
	sfl_objects_clear_page(self);
	sfl_objects_drain_reset(self);
	self->active = NULL;
}

static void
sfl_objects_source_finalize(GObject *object)
{
	SflObjectsSource *self = SFL_OBJECTS_SOURCE(object);

	sfl_clear_source(&self->timer);
	sfl_objects_clear_page(self);
	sfl_objects_drain_reset(self);
	g_clear_object(&self->rest);
	g_clear_pointer(&self->transforms, sfl_transforms_free);
	g_clear_pointer(&self->objs, g_ptr_array_unref);
	g_clear_object(&self->cancellable);
	g_clear_pointer(&self->rand, g_rand_free);
	g_clear_pointer(&self->record, sfl_record_free);
	g_clear_pointer(&self->collected_ids, g_hash_table_unref);
	g_clear_pointer(&self->tie_ids, g_ptr_array_unref);
	G_OBJECT_CLASS(sfl_objects_source_parent_class)->finalize(object);
}

static void
sfl_objects_source_class_init(SflObjectsSourceClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflSourceClass *source_class = SFL_SOURCE_CLASS(klass);

	object_class->finalize = sfl_objects_source_finalize;
	source_class->start = sfl_objects_source_start;
	source_class->stop = sfl_objects_source_stop;
}

static void
sfl_objects_source_init(SflObjectsSource *self)
{
	self->objs = g_ptr_array_new_with_free_func(sfl_obj_free);
	self->cancellable = g_cancellable_new();
	self->rand = g_rand_new();
	self->record = sfl_record_new();
	self->collected_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	self->tie_ids = g_ptr_array_new_with_free_func(g_free);
}

/**
 * sfl_objects_source_new:
 * @rest: the org's REST client
 * @config: sources.eventlog_objects
 * @salt: the transform salt, or %NULL
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the source, or %NULL with @error set
 */
SflObjectsSource *
sfl_objects_source_new(SflSfRest *rest, const SflEventLogObjectsConfig *config, const gchar *salt,
		       GError **error)
{
	g_autoptr(SflObjectsSource) self = NULL;

	g_return_val_if_fail(SFL_IS_SF_REST(rest), NULL);
	g_return_val_if_fail(config != NULL, NULL);

	self = g_object_new(SFL_TYPE_OBJECTS_SOURCE, "name", "eventlog_objects", NULL);
	self->rest = g_object_ref(rest);
	self->config = config;
	if (config->transforms != NULL && config->transforms->len > 0) {
		self->transforms = sfl_transforms_new(config->transforms, salt, error);
		if (self->transforms == NULL) {
			g_prefix_error(error, "sources.eventlog_objects.transforms: ");
			return NULL;
		}
	}
	return g_steal_pointer(&self);
}

/**
 * sfl_objects_source_get_counters:
 * @self: the source
 *
 * Returns: (transfer none): the source's counters
 */
const SflObjectsCounters *
sfl_objects_source_get_counters(SflObjectsSource *self)
{
	g_return_val_if_fail(SFL_IS_OBJECTS_SOURCE(self), NULL);
	return &self->counters;
}

/**
 * sfl_objects_source_describe_checkpoint:
 * @key: a committed key, without the multi-org prefix
 * @value: its value
 * @view: (out caller-allocates): filled when the key is this source's
 *
 * Returns: %TRUE when @key is a polled object's cursor
 */
gboolean
sfl_objects_source_describe_checkpoint(const gchar *key, const gchar *value,
				       SflCheckpointView *view)
{
	if (!g_str_has_prefix(key, SFL_OBJECTS_KEY_PREFIX))
		return FALSE;
	view->source = "eventlog_objects";
	view->object = key + strlen(SFL_OBJECTS_KEY_PREFIX);
	sfl_checkpoint_view_cursor(view, value, "last_ts");
	return TRUE;
}
