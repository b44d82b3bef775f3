/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflSource"

#include "config.h"

#include "sfl-source.h"

#include "sfl-error.h"

typedef struct {
	SflSourceWritableFunc func;
	gpointer user_data;
} SflSourceWaiter;

typedef struct {
	gchar *name;
	SflSourceContext context;
	gboolean started;
	gboolean stopped;
	gboolean finished;
	GArray *waiters; /* SflSourceWaiter, FIFO */
	SflSourceCounters counters;
	SflMetricFamily *ingested;
	SflMetricFamily *lag;
	/* the series of the last event_type seen: consecutive rows nearly always share it */
	const gchar *last_event_type;
	SflSeries *last_ingested;
	SflSeries *last_lag;
	/* shaping outcomes, cached like the ingest series */
	gchar *last_rule;
	SflSeries *filtered;
	gchar *last_sampled_type;
	SflSeries *sampled_out;
	SflSeries *fallbacks;
	/* sfl_source_emit_record()'s line and metadata, reused record after record */
	SflShaped scratch;
} SflSourcePrivate;

G_DEFINE_TYPE_WITH_PRIVATE(SflSource, sfl_source, G_TYPE_OBJECT)

enum {
	SIGNAL_FINISHED,
	N_SIGNALS,
};

static guint sfl_source_signals[N_SIGNALS] = { 0 };

enum {
	PROP_0,
	PROP_NAME,
	N_PROPS,
};

static GParamSpec *sfl_source_props[N_PROPS];

static void
sfl_source_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(SFL_SOURCE(object));

	switch (prop_id) {
	case PROP_NAME:
		g_free(priv->name);
		priv->name = g_value_dup_string(value);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
sfl_source_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(SFL_SOURCE(object));

	switch (prop_id) {
	case PROP_NAME:
		g_value_set_string(value, priv->name);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
sfl_source_finalize(GObject *object)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(SFL_SOURCE(object));

	g_free(priv->name);
	g_array_unref(priv->waiters);
	if (priv->context.lane != NULL && !priv->stopped)
		sfl_lane_handle_remove_writer(priv->context.lane, object);
	g_clear_object(&priv->context.lane);
	g_clear_object(&priv->context.store);
	g_clear_pointer(&priv->context.interner, sfl_labels_interner_unref);
	g_clear_pointer(&priv->context.clock, sfl_clock_unref);
	g_strfreev((gchar **)priv->context.static_labels);
	g_free((gchar *)priv->context.key_prefix);
	g_free((gchar *)priv->context.org);
	g_strfreev((gchar **)priv->context.metadata_fields);
	g_clear_pointer(&priv->context.metrics, sfl_metrics_unref);
	g_clear_pointer(&priv->context.label_guard, sfl_label_guard_unref);
	g_free((gchar *)priv->last_event_type);
	g_free(priv->last_rule);
	g_free(priv->last_sampled_type);
	sfl_shaped_clear(&priv->scratch);
	G_OBJECT_CLASS(sfl_source_parent_class)->finalize(object);
}

static void
sfl_source_class_init(SflSourceClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->set_property = sfl_source_set_property;
	object_class->get_property = sfl_source_get_property;
	object_class->finalize = sfl_source_finalize;
	sfl_source_props[PROP_NAME] = g_param_spec_string(
		"name", NULL, NULL, NULL,
		G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
	g_object_class_install_properties(object_class, N_PROPS, sfl_source_props);
	/* see sfl_source_finish() */
	sfl_source_signals[SIGNAL_FINISHED] =
		g_signal_new("finished", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
			     NULL, G_TYPE_NONE, 0);
}

static void
sfl_source_init(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	priv->waiters = g_array_new(FALSE, FALSE, sizeof(SflSourceWaiter));
	sfl_shaped_init(&priv->scratch);
}

/**
 * sfl_source_get_name:
 * @self: a source
 *
 * Returns: the source's name: "eventlogfile", "eventlog_objects", "pubsub", ...
 */
const gchar *
sfl_source_get_name(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	return priv->name;
}

/**
 * sfl_source_get_context:
 * @self: a started source
 *
 * Returns: (transfer none): what the source emits into
 */
const SflSourceContext *
sfl_source_get_context(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	return &priv->context;
}

/**
 * sfl_source_arm_timer:
 * @self: a started source
 * @slot: where the source keeps the timer; one already there is destroyed first
 * @delay_usec: how long from now on the term's clock
 * @func: runs once, after *@slot was cleared
 * @user_data: for @func
 */
void
sfl_source_arm_timer(SflSource *self, GSource **slot, gint64 delay_usec, SflClockOnceFunc func,
		     gpointer user_data)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	sfl_clock_once(priv->context.clock, slot, delay_usec, NULL, func, user_data, NULL);
}

static void
sfl_source_lane_writable(GObject *writer)
{
	sfl_source_notify_writable(SFL_SOURCE(writer));
}

/**
 * sfl_source_start:
 * @self: a source, not started yet
 * @context: the lane, store and labels to use; copied
 *
 * Starts producing. Nothing is offered from inside this call.
 */
void
sfl_source_start(SflSource *self, const SflSourceContext *context)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	g_return_if_fail(SFL_IS_SOURCE(self));
	g_return_if_fail(!priv->started);
	g_return_if_fail(context != NULL && SFL_IS_LANE_HANDLE(context->lane));
	g_return_if_fail(context->interner != NULL && context->clock != NULL);

	priv->started = TRUE;
	priv->context.lane = g_object_ref(context->lane);
	sfl_lane_handle_add_writer(priv->context.lane, G_OBJECT(self), sfl_source_lane_writable);
	priv->context.store = context->store != NULL ? g_object_ref(context->store) : NULL;
	priv->context.interner = sfl_labels_interner_ref(context->interner);
	priv->context.clock = sfl_clock_ref(context->clock);
	priv->context.static_labels =
		(const gchar *const *)g_strdupv((gchar **)context->static_labels);
	priv->context.key_prefix = g_strdup(context->key_prefix != NULL ? context->key_prefix : "");
	priv->context.org = g_strdup(context->org);
	priv->context.legacy_keys = context->legacy_keys;
	priv->context.label_guard =
		context->label_guard != NULL ? sfl_label_guard_ref(context->label_guard) : NULL;
	priv->context.metadata_fields =
		(const gchar *const *)g_strdupv((gchar **)context->metadata_fields);
	if (context->metrics != NULL) {
		static const gdouble lag_bounds[] = { 1,    5,	  15,	60,    300,   900,
						      1800, 3600, 7200, 14400, 28800, 86400 };
		const gchar *ingested_labels[] = { "source", "event_type", NULL };
		/* per source (SFL-0021): EventLogFile lag is hours by design, Pub/Sub's seconds */
		const gchar *lag_labels[] = { "source", "event_type", NULL };

		priv->context.metrics = sfl_metrics_ref(context->metrics);
		priv->ingested =
			sfl_metrics_counter(context->metrics, "sf2loki_events_ingested",
					    "Entries handed to the pipeline.", ingested_labels);
		priv->lag = sfl_metrics_histogram(
			context->metrics, "sf2loki_ingest_lag_seconds",
			"Wall clock minus the entry's timestamp when it is queued.", lag_labels,
			lag_bounds, G_N_ELEMENTS(lag_bounds));
	}
	SFL_SOURCE_GET_CLASS(self)->start(self);
}

/**
 * sfl_source_stop:
 * @self: a source
 *
 * Stops at once: parked callers are forgotten and the subclass cancels its work. Entries not
 * yet offered are never offered, so their checkpoints are not committed and the next term
 * reads them again.
 */
void
sfl_source_stop(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	g_return_if_fail(SFL_IS_SOURCE(self));
	if (priv->stopped)
		return;
	priv->stopped = TRUE;
	g_array_set_size(priv->waiters, 0);
	if (priv->started) {
		sfl_lane_handle_remove_writer(priv->context.lane, G_OBJECT(self));
		SFL_SOURCE_GET_CLASS(self)->stop(self);
	}
}

gboolean
sfl_source_is_stopped(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	return priv->stopped;
}

/**
 * sfl_source_finish:
 * @self: a started source
 *
 * Says that @self has nothing to read in this term, and never will (a Pub/Sub source whose
 * topics resolved to none, with no rediscovery). Emits #SflSource::finished once; a run whose
 * sources all finished is a finite run and ends (docs/cli.md, "run"). Handlers may run inside the
 * source's own callbacks, so they must not stop or drop it there.
 */
void
sfl_source_finish(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	g_return_if_fail(SFL_IS_SOURCE(self));
	if (priv->finished || priv->stopped)
		return;
	priv->finished = TRUE;
	g_signal_emit(self, sfl_source_signals[SIGNAL_FINISHED], 0);
}

gboolean
sfl_source_is_finished(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	return priv->finished;
}

/* as in the original: counted at enqueue, so later drops are still counted here */
static void
sfl_source_record_ingest(SflSource *self, SflSourcePrivate *priv, const SflEntry *entry)
{
	const gchar *event_type = sfl_labels_lookup(entry->labels, "event_type");
	gdouble lag = 0;

	if (event_type == NULL)
		event_type = "unknown";
	if (priv->last_event_type == NULL || !g_str_equal(priv->last_event_type, event_type)) {
		const gchar *ingested[] = { priv->name, event_type, NULL };
		const gchar *lagged[] = { priv->name, event_type, NULL };

		g_free((gchar *)priv->last_event_type);
		priv->last_event_type = g_strdup(event_type);
		priv->last_ingested = sfl_metric_family_series(priv->ingested, ingested);
		priv->last_lag = sfl_metric_family_series(priv->lag, lagged);
	}
	sfl_series_inc(priv->last_ingested);
	lag = (gdouble)(sfl_clock_wall_usec(priv->context.clock) * 1000 - entry->timestamp_ns) /
	      1e9;
	sfl_series_observe(priv->last_lag, lag);
}

/**
 * sfl_source_offer:
 * @self: a started source
 * @entry: (transfer full): the entry
 *
 * Returns: %TRUE when the lane took @entry; %FALSE when the lane is full (or the source
 * stopped) and the caller still owns @entry
 */
gboolean
sfl_source_offer(SflSource *self, SflEntry *entry)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	g_return_val_if_fail(SFL_IS_SOURCE(self), FALSE);
	g_return_val_if_fail(entry != NULL, FALSE);
	if (priv->stopped)
		return FALSE;
	if (!sfl_lane_handle_offer(priv->context.lane, entry))
		return FALSE;
	if (entry->checkpoint_only) {
		priv->counters.checkpoint_tokens++;
	} else {
		priv->counters.entries_offered++;
		if (priv->ingested != NULL)
			sfl_source_record_ingest(self, priv, entry);
	}
	/* the lane took its own reference */
	sfl_entry_unref(entry);
	return TRUE;
}

/**
 * sfl_source_wait_writable:
 * @self: a started source
 * @func: called once when the lane has room again
 * @user_data: for @func; also the handle for sfl_source_cancel_wait()
 */
void
sfl_source_wait_writable(SflSource *self, SflSourceWritableFunc func, gpointer user_data)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	SflSourceWaiter waiter = { func, user_data };

	g_return_if_fail(SFL_IS_SOURCE(self));
	if (priv->stopped)
		return;
	g_array_append_val(priv->waiters, waiter);
}

void
sfl_source_cancel_wait(SflSource *self, gpointer user_data)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	for (guint i = priv->waiters->len; i > 0; i--) {
		if (g_array_index(priv->waiters, SflSourceWaiter, i - 1).user_data == user_data)
			g_array_remove_index(priv->waiters, i - 1);
	}
}

/**
 * sfl_source_notify_writable:
 * @self: a source
 *
 * Wakes the callers parked when this call starts, oldest first. A caller that fills the
 * lane again parks again and waits for the next notification, after the others.
 */
void
sfl_source_notify_writable(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	guint n = 0;

	g_return_if_fail(SFL_IS_SOURCE(self));
	g_object_ref(self);
	/* one at a time from the live list, so a waiter cancelled by an earlier one is skipped */
	n = priv->waiters->len;
	while (n-- > 0 && priv->waiters->len > 0 && !priv->stopped &&
	       !sfl_lane_handle_is_stopped(priv->context.lane)) {
		SflSourceWaiter w = g_array_index(priv->waiters, SflSourceWaiter, 0);
		guint before = priv->waiters->len - 1;

		g_array_remove_index(priv->waiters, 0);
		w.func(w.user_data);
		/* it parked again: the lane is full; the rest keep their place in front of it */
		if (priv->waiters->len > before)
			break;
	}
	g_object_unref(self);
}

/**
 * sfl_source_key:
 * @self: a started source
 * @key: a checkpoint key as the single-org original writes it
 *
 * Returns: the key as stored: with the org prefix in multi-org mode
 */
gchar *
sfl_source_key(SflSource *self, const gchar *key)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	return g_strconcat(priv->context.key_prefix != NULL ? priv->context.key_prefix : "", key,
			   NULL);
}

/**
 * sfl_source_intern_labels:
 * @self: a started source
 * @pairs: the source's labels
 * @n_pairs: their number
 *
 * Returns: (transfer full) (nullable): the interned set with the deployment labels merged
 * in (they win); %NULL with a warning if a name is not a valid label
 */
SflLabels *
sfl_source_intern_labels(SflSource *self, const SflLabelPair *pairs, guint n_pairs)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	const gchar *const *st = priv->context.static_labels;
	guint n_static = st != NULL ? g_strv_length((gchar **)st) / 2 : 0;
	g_autoptr(GArray) merged =
		g_array_sized_new(FALSE, FALSE, sizeof(SflLabelPair), n_pairs + n_static);
	g_autoptr(GError) error = NULL;
	SflLabels *labels = NULL;

	for (guint i = 0; i < n_pairs; i++) {
		gboolean shadowed = FALSE;
		for (guint j = 0; j < n_static && !shadowed; j++)
			shadowed = g_str_equal(pairs[i].name, st[2 * j]);
		if (!shadowed)
			g_array_append_val(merged, pairs[i]);
	}
	for (guint j = 0; j < n_static; j++) {
		SflLabelPair p = { st[2 * j], st[2 * j + 1] };
		g_array_append_val(merged, p);
	}
	labels = sfl_labels_intern(priv->context.interner,
				   (const SflLabelPair *)(const void *)merged->data, merged->len,
				   &error);
	if (labels == NULL)
		g_warning("%s: %s", priv->name, error->message);
	return labels;
}

typedef struct {
	gchar *key;
	gboolean fell_back;
} SflSourceLoad;

static void
sfl_source_load_free(gpointer data)
{
	SflSourceLoad *load = data;
	g_free(load->key);
	g_free(load);
}

static void
sfl_source_load_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflSource *self = g_task_get_source_object(task);
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	SflSourceLoad *load = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	gchar *value =
		sfl_checkpoint_store_load_finish(SFL_CHECKPOINT_STORE(object), result, &error);
	gsize prefix = strlen(priv->context.key_prefix);

	if (error != NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	if (value == NULL && !load->fell_back && priv->context.legacy_keys && prefix > 0 &&
	    g_str_has_prefix(load->key, priv->context.key_prefix)) {
		GCancellable *cancellable = g_task_get_cancellable(task);

		load->fell_back = TRUE;
		sfl_checkpoint_store_load_async(SFL_CHECKPOINT_STORE(object), load->key + prefix,
						cancellable, sfl_source_load_cb,
						g_steal_pointer(&task));
		return;
	}
	if (value != NULL && load->fell_back)
		g_message(
			"%s: no checkpoint under %s yet; continuing from the single-org checkpoint "
			"%s (the next commit writes %s)",
			priv->name, load->key, load->key + prefix, load->key);
	g_task_return_pointer(task, value, g_free);
}

/**
 * sfl_source_load_async:
 * @self: a started source with a store
 * @key: the full key, as sfl_source_key() built it
 * @cancellable: (nullable): aborts the load
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_source_load_async(SflSource *self, const gchar *key, GCancellable *cancellable,
		      GAsyncReadyCallback callback, gpointer user_data)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	GTask *task = g_task_new(self, cancellable, callback, user_data);
	SflSourceLoad *load = g_new0(SflSourceLoad, 1);

	g_task_set_source_tag(task, sfl_source_load_async);
	load->key = g_strdup(key);
	g_task_set_task_data(task, load, sfl_source_load_free);
	sfl_checkpoint_store_load_async(priv->context.store, key, cancellable, sfl_source_load_cb,
					task);
}

/**
 * sfl_source_load_finish:
 * @self: the source
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the stored value, or %NULL when there is none (no
 *   error) or on failure
 */
gchar *
sfl_source_load_finish(SflSource *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_source_counters:
 * @self: a source
 *
 * Returns: (transfer none): the source's counters, updated in place
 */
SflSourceCounters *
sfl_source_counters(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	return &priv->counters;
}

/**
 * sfl_source_count_filtered:
 * @self: a started source
 * @rule: (nullable): the drop_row rule that matched
 */
void
sfl_source_count_filtered(SflSource *self, const gchar *rule)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	priv->counters.rows_filtered++;
	if (rule == NULL)
		rule = "drop_row";
	if (priv->last_rule == NULL || !g_str_equal(priv->last_rule, rule)) {
		const gchar *names[] = { "source", "rule", NULL };
		const gchar *values[] = { priv->name, rule, NULL };

		g_free(priv->last_rule);
		priv->last_rule = g_strdup(rule);
		priv->filtered =
			sfl_source_series(self, SFL_METRIC_COUNTER, "sf2loki_rows_filtered",
					  "Rows dropped by a drop_row transform.", names, values);
	}
	sfl_series_inc(priv->filtered);
}

/**
 * sfl_source_count_sampled_out:
 * @self: a started source
 * @event_type: the row's event type (or object)
 */
void
sfl_source_count_sampled_out(SflSource *self, const gchar *event_type)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	priv->counters.rows_sampled_out++;
	if (priv->last_sampled_type == NULL || !g_str_equal(priv->last_sampled_type, event_type)) {
		const gchar *names[] = { "source", "event_type", NULL };
		const gchar *values[] = { priv->name, event_type, NULL };

		g_free(priv->last_sampled_type);
		priv->last_sampled_type = g_strdup(event_type);
		priv->sampled_out =
			sfl_source_series(self, SFL_METRIC_COUNTER, "sf2loki_entries_sampled_out",
					  "Rows the deterministic sampler dropped.", names, values);
	}
	sfl_series_inc(priv->sampled_out);
}

/**
 * sfl_source_count_timestamp_fallback:
 * @self: a started source
 */
void
sfl_source_count_timestamp_fallback(SflSource *self)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	/* the first of a term says so once; the rest are only counted */
	if (priv->counters.timestamp_fallbacks++ == 0)
		g_warning("%s: an entry had no usable timestamp and was stamped with its fallback "
			  "time; later ones are only counted (sf2loki_timestamp_fallbacks_total)",
			  priv->name);
	if (priv->fallbacks == NULL) {
		const gchar *names[] = { "source", NULL };
		const gchar *values[] = { priv->name, NULL };
		priv->fallbacks = sfl_source_series(
			self, SFL_METRIC_COUNTER, "sf2loki_timestamp_fallbacks",
			"Entries whose own timestamp was missing or unparseable.", names, values);
	}
	sfl_series_inc(priv->fallbacks);
}

/**
 * sfl_source_count_throttled:
 * @source: a started source
 * @api: `soql`, `eventlogfile` or `apexlog_body`
 *
 * Counts a REQUEST_LIMIT_EXCEEDED answer (`sf2loki_salesforce_api_throttled{api}`).
 */
void
sfl_source_count_throttled(SflSource *source, const gchar *api)
{
	const gchar *names[] = { "api", NULL };
	const gchar *values[] = { api, NULL };

	sfl_source_counters(source)->throttled++;
	sfl_series_inc(sfl_source_series(
		source, SFL_METRIC_COUNTER, "sf2loki_salesforce_api_throttled",
		"Salesforce calls refused with REQUEST_LIMIT_EXCEEDED.", names, values));
}

/**
 * sfl_source_series:
 * @self: a started source
 * @type: counter or gauge
 * @name: the instrument, without the Prometheus suffix
 * @help: its help text
 * @label_names: (nullable): NULL-terminated, without `org`
 * @label_values: (nullable): as many as @label_names
 *
 * Returns: (transfer none) (nullable): the series, or %NULL when the run keeps no metrics
 */
SflSeries *
sfl_source_series(SflSource *self, SflMetricType type, const gchar *name, const gchar *help,
		  const gchar *const *label_names, const gchar *const *label_values)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	const gchar *names[8] = { NULL };
	const gchar *values[8] = { NULL };
	SflMetricFamily *family = NULL;
	guint n = 0;

	g_return_val_if_fail(type != SFL_METRIC_HISTOGRAM, NULL);
	if (priv->context.metrics == NULL)
		return NULL;
	for (; label_names != NULL && label_names[n] != NULL; n++) {
		g_return_val_if_fail(n + 2 < G_N_ELEMENTS(names), NULL);
		names[n] = label_names[n];
		values[n] = label_values[n];
	}
	if (priv->context.org != NULL) {
		names[n] = "org";
		values[n] = priv->context.org;
	}
	family = type == SFL_METRIC_COUNTER
			 ? sfl_metrics_counter(priv->context.metrics, name, help, names)
			 : sfl_metrics_gauge(priv->context.metrics, name, help, names);
	return sfl_metric_family_series(family, names[0] != NULL ? values : NULL);
}

void
sfl_shaped_init(SflShaped *shaped)
{
	shaped->line = g_string_sized_new(2048);
	shaped->metadata = g_array_new(FALSE, FALSE, sizeof(SflLabelPair));
	shaped->timestamp_ns = 0;
}

void
sfl_shaped_clear(SflShaped *shaped)
{
	if (shaped->line != NULL)
		g_string_free(shaped->line, TRUE);
	shaped->line = NULL;
	g_clear_pointer(&shaped->metadata, g_array_unref);
}

SflEntry *
sfl_shaped_entry(const SflShaped *shaped, SflLabels *labels, const gchar *key,
		 GRefString *checkpoint)
{
	return sfl_entry_new_shared(shaped->timestamp_ns, labels, shaped->line->str,
				    (gssize)shaped->line->len,
				    (const SflLabelPair *)(const void *)shaped->metadata->data,
				    shaped->metadata->len, key, checkpoint);
}

static gboolean
sfl_source_sample_keep(SflSourcePrivate *priv, const SflShapeSpec *spec, SflRecord *record)
{
	const gchar *key = NULL;

	if (spec->sample_key != NULL)
		return sfl_sample_keep(spec->sample_key, spec->sample_key_len, spec->sample);
	if (spec->sample_field != NULL)
		key = sfl_record_lookup_string(record, spec->sample_field);
	if (key != NULL && key[0] != '\0')
		return sfl_sample_keep(key, strlen(key), spec->sample);
	/* no identity to hash: the whole line, so equal rows share a fate */
	g_string_truncate(priv->scratch.line, 0);
	sfl_record_append_json(record, priv->scratch.line);
	return sfl_sample_keep(priv->scratch.line->str, priv->scratch.line->len, spec->sample);
}

/**
 * sfl_source_keep_record:
 * @self: a started source
 * @spec: how this source shapes
 * @record: the decoded record; transforms rewrite it in place
 * @count: count a drop in the source's counters and instruments
 *
 * Returns: %FALSE when a drop_row transform or the sampler dropped @record
 */
gboolean
sfl_source_keep_record(SflSource *self, const SflShapeSpec *spec, SflRecord *record, gboolean count)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);
	const gchar *rule = NULL;

	if (spec->transforms != NULL && !sfl_transforms_apply(spec->transforms, record, &rule)) {
		if (count)
			sfl_source_count_filtered(self, rule);
		return FALSE;
	}
	if (spec->sample >= 1.0 || sfl_source_sample_keep(priv, spec, record))
		return TRUE;
	if (count)
		sfl_source_count_sampled_out(self, spec->event_type);
	return FALSE;
}

/**
 * sfl_source_shape_record:
 * @self: a started source
 * @spec: how this source shapes
 * @record: a record sfl_source_keep_record() kept
 * @shaped: receives the timestamp, line and metadata
 */
void
sfl_source_shape_record(SflSource *self, const SflShapeSpec *spec, SflRecord *record,
			SflShaped *shaped)
{
	gint64 usec = 0;
	gboolean found = FALSE;

	if (spec->timestamp_func != NULL) {
		found = spec->timestamp_func(record, &usec, spec->user_data);
	} else {
		for (guint i = 0; i < spec->n_timestamp_fields && !found; i++) {
			const SflField *f = sfl_record_lookup(record, spec->timestamp_fields[i]);
			found = f != NULL && sfl_parse_timestamp_field(f, &usec);
		}
	}
	if (!found) {
		usec = sfl_timestamp_fallback(spec->has_fallback, spec->fallback_usec,
					      spec->now_usec);
		sfl_source_count_timestamp_fallback(self);
	}
	shaped->timestamp_ns = usec * 1000;
	g_string_truncate(shaped->line, 0);
	sfl_record_append_json(record, shaped->line);
	g_array_set_size(shaped->metadata, 0);
	sfl_shape_metadata(record, spec->metadata_fields, shaped->metadata);
	if (spec->metadata_func != NULL)
		spec->metadata_func(record, shaped->metadata, spec->user_data);
}

/**
 * sfl_source_emit_record:
 * @self: a started source
 * @spec: how this source shapes
 * @record: the decoded record
 * @labels: the entry's labels
 * @key: its checkpoint key
 * @checkpoint: its checkpoint value, shared
 *
 * Returns: (transfer full) (nullable): the entry, or %NULL when @record was dropped
 */
SflEntry *
sfl_source_emit_record(SflSource *self, const SflShapeSpec *spec, SflRecord *record,
		       SflLabels *labels, const gchar *key, GRefString *checkpoint)
{
	SflSourcePrivate *priv = sfl_source_get_instance_private(self);

	if (!sfl_source_keep_record(self, spec, record, TRUE))
		return NULL;
	sfl_source_shape_record(self, spec, record, &priv->scratch);
	return sfl_shaped_entry(&priv->scratch, labels, key, checkpoint);
}

/**
 * sfl_checkpoint_view_cursor:
 * @view: the view to fill (its time and position)
 * @value: the committed value
 * @field: the cursor's time field
 *
 * A value that is not such a cursor leaves @view without a time and a position.
 */
void
sfl_checkpoint_view_cursor(SflCheckpointView *view, const gchar *value, const gchar *field)
{
	json_t *root = json_loads(value, 0, NULL);
	json_t *v = NULL;
	const gchar *text = NULL;
	gint64 usec = 0;

	if (root == NULL)
		return;
	v = json_object_get(root, field);
	text = json_string_value(v);
	if (text != NULL && sfl_parse_iso_datetime(text, &usec)) {
		view->has_time = TRUE;
		view->time_seconds = (gdouble)usec / G_USEC_PER_SEC;
	}
	if (v != NULL && !json_is_null(v))
		view->position = json_pack("{s:O}", field, v);
	json_decref(root);
}

void
sfl_checkpoint_view_clear(SflCheckpointView *view)
{
	g_clear_pointer(&view->position, json_decref);
}
