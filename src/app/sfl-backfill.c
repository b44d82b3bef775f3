/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBackfill"

#include "config.h"

#include "sfl-backfill.h"

#include "sfl-app.h"
#include "sfl-elf-source.h"
#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-orgs.h"
#include "sfl-pipeline.h"
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"

/* how often the progress callback and the push-failure watch run */
#define SFL_BACKFILL_TICK_USEC (250 * 1000)
/* the original aborts after this many pushes in a row that Loki did not take */
#define SFL_BACKFILL_MAX_PUSH_FAILURES 10
/* a finished window drains whatever it takes: the failure watch ends a dead sink instead */
#define SFL_BACKFILL_DRAIN_USEC ((gint64)7 * 24 * 3600 * G_USEC_PER_SEC)

typedef struct {
	const SflConfig *config;
	const SflBackfillOptions *opts;
	SflClock *clock;
	GMainLoop *loop;
	SflCurlLoop *curl;
	SflCheckpointStore *store;
	SflSink *sink;
	SflSfAuth *auth;
	SflSfRest *rest;
	SflPipeline *pipeline;
	SflElfSource *source;
	SflLabelsInterner *interner;
	SflLabelGuard *guard;
	GSource *tick;
	GSource *finish_idle;
	GPtrArray *stop_sources;
	guint stops; /* stop requests so far */
	gboolean draining;
	GError *failure;
	/* the push-failure watch: the pipeline's retries since entries were last accepted */
	guint64 watch_pushed;
	guint64 watch_retries;
	/* the fence: the document's epoch when the run began */
	gboolean have_epoch;
	guint64 epoch;
	gint64 started;
	SflBackfillStats stats;
} SflBackfill;

static void
sfl_backfill_result_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	GAsyncResult **out = user_data;
	*out = g_object_ref(result);
}

/* runs the default context until @result is set (start-up steps, before the loop runs) */
static void
sfl_backfill_wait(GAsyncResult **result)
{
	while (*result == NULL)
		g_main_context_iteration(NULL, TRUE);
}

static void
sfl_backfill_update_stats(SflBackfill *self)
{
	SflBackfillStats *st = &self->stats;
	SflPipelineCounters pc = { 0 };

	st->elapsed_seconds =
		(gdouble)(sfl_clock_monotonic_usec(self->clock) - self->started) / G_USEC_PER_SEC;
	if (self->pipeline != NULL) {
		sfl_pipeline_get_counters(self->pipeline, &pc);
		st->rows_pushed = pc.pushed_entries;
		st->bytes_pushed = pc.pushed_bytes;
		st->rows_dropped =
			pc.dropped_bad_request + pc.dropped_oversized_413 + pc.dropped_other;
	}
	if (self->source != NULL) {
		const SflElfCounters *ec = sfl_elf_source_get_counters(self->source);
		SflSourceCounters *sc = sfl_source_counters(SFL_SOURCE(self->source));

		st->files = self->opts->dry_run ? ec->files_listed : ec->files_processed;
		st->files_listed = ec->files_listed;
		st->bytes_listed = ec->bytes_listed;
		st->bytes_downloaded = ec->stream_bytes;
		st->downloads = self->opts->dry_run ? ec->files_listed : ec->downloads;
		st->listing_calls = ec->listing_calls;
		st->types_failed = ec->types_failed;
		st->rows_read = sc->rows_read;
	}
}

static void
sfl_backfill_fail(SflBackfill *self, GError *error)
{
	if (self->failure == NULL)
		self->failure = error;
	else
		g_error_free(error);
	g_main_loop_quit(self->loop);
}

static void
sfl_backfill_tick_cb(gpointer user_data)
{
	SflBackfill *self = user_data;
	SflPipelineCounters pc = { 0 };

	sfl_pipeline_get_counters(self->pipeline, &pc);
	if (pc.pushed_entries != self->watch_pushed) {
		self->watch_pushed = pc.pushed_entries;
		self->watch_retries = pc.retries;
	} else if (pc.retries >= self->watch_retries + SFL_BACKFILL_MAX_PUSH_FAILURES) {
		sfl_backfill_fail(self, g_error_new(SFL_ERROR, SFL_ERROR_TRANSIENT,
						    "Loki did not take %u pushes in a row; "
						    "aborting (a rerun resumes from the last "
						    "commit)",
						    SFL_BACKFILL_MAX_PUSH_FAILURES));
		return;
	}
	sfl_backfill_update_stats(self);
	if (self->opts->progress != NULL)
		self->opts->progress(&self->stats, self->opts->progress_data);
	sfl_clock_once(self->clock, &self->tick, SFL_BACKFILL_TICK_USEC, "sf2loki backfill tick",
		       sfl_backfill_tick_cb, self, NULL);
}

static void
sfl_backfill_drained_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflBackfill *self = user_data;
	SflPipelineCounters pc = { 0 };

	/* the run may be tearing down already: the pipeline is this callback's own */
	sfl_pipeline_stop_finish(SFL_PIPELINE(source), result, NULL);
	sfl_pipeline_get_counters(SFL_PIPELINE(source), &pc);
	if (pc.abandoned_entries > 0)
		g_warning("backfill: %" G_GUINT64_FORMAT " entries were not pushed before the "
			  "stop; a rerun sends them",
			  pc.abandoned_entries);
	g_main_loop_quit(self->loop);
}

/* nothing new enters; what the lane holds is pushed and committed within @grace_usec */
static void
sfl_backfill_drain(SflBackfill *self, gint64 grace_usec)
{
	if (self->draining)
		return;
	self->draining = TRUE;
	sfl_source_stop(SFL_SOURCE(self->source));
	sfl_pipeline_stop_async(self->pipeline, grace_usec, NULL, sfl_backfill_drained_cb, self);
}

static gboolean
sfl_backfill_finished_idle_cb(gpointer user_data)
{
	SflBackfill *self = user_data;

	g_clear_pointer(&self->finish_idle, g_source_unref);
	sfl_backfill_drain(self, SFL_BACKFILL_DRAIN_USEC);
	return G_SOURCE_REMOVE;
}

/* the window is read; from the source's own callback, so the drain starts from the loop */
static void
sfl_backfill_finished_cb(SflSource *source, gpointer user_data)
{
	SflBackfill *self = user_data;

	if (self->finish_idle != NULL)
		return;
	self->finish_idle = g_idle_source_new();
	g_source_set_callback(self->finish_idle, sfl_backfill_finished_idle_cb, self, NULL);
	g_source_attach(self->finish_idle, NULL);
}

static gboolean
sfl_backfill_stop_cb(gpointer user_data)
{
	SflBackfill *self = user_data;

	self->stats.interrupted = TRUE;
	/* during start-up: sfl_backfill_run() drains at once when the loop starts */
	if (self->pipeline == NULL) {
		self->stops++;
		return G_SOURCE_CONTINUE;
	}
	if (self->stops++ == 0) {
		g_autofree gchar *grace =
			sfl_duration_format(self->config->data.service.shutdown_grace);
		g_message("backfill: stop requested; pushing and committing what is in flight "
			  "(up to %s; a second request quits at once), then a rerun resumes",
			  grace);
		sfl_backfill_drain(self, self->config->data.service.shutdown_grace);
	} else {
		g_message("backfill: second stop request; quitting now (a rerun re-sends what "
			  "was not committed)");
		g_main_loop_quit(self->loop);
	}
	return G_SOURCE_CONTINUE;
}

static void
sfl_backfill_pipeline_error_cb(SflPipeline *pipeline, SflLane lane, const GError *error,
			       gpointer user_data)
{
	sfl_backfill_fail(user_data, g_error_new(error->domain, error->code,
						 "the Loki sink failed: %s", error->message));
}

static void
sfl_backfill_pipeline_fenced_cb(SflPipeline *pipeline, SflLane lane, const GError *error,
				gpointer user_data)
{
	sfl_backfill_fail(user_data,
			  g_error_new(SFL_ERROR, SFL_ERROR_FENCED,
				      "a checkpoint commit was fenced (a newer leader's epoch is "
				      "in the store): %s",
				      error->message));
}

static gboolean
sfl_backfill_epoch_cb(gpointer user_data, guint64 *epoch)
{
	SflBackfill *self = user_data;

	*epoch = self->epoch;
	return self->have_epoch;
}

/* the org the options name (the first by default); FALSE when there is none of that name */
static gboolean
sfl_backfill_pick_org(const SflConfig *config, const gchar *wanted, const gchar **name,
		      const SflSalesforceConfig **sf, const SflSourcesConfig **sources,
		      gboolean *first, GError **error)
{
	const SflConfigData *d = &config->data;
	g_autoptr(GString) names = g_string_new(NULL);

	*first = FALSE;
	if (d->orgs->len == 0) {
		if (wanted != NULL) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "--org %s: the configuration has no orgs: list (single-org)",
				    wanted);
			return FALSE;
		}
		*name = "";
		*sf = d->salesforce;
		*sources = &d->sources;
		return TRUE;
	}
	for (guint i = 0; i < d->orgs->len; i++) {
		const SflOrgConfig *oc = g_ptr_array_index(d->orgs, i);
		if (wanted == NULL || g_str_equal(oc->name, wanted)) {
			*name = oc->name;
			*sf = &oc->salesforce;
			*sources = &oc->sources;
			*first = i == 0;
			return TRUE;
		}
		g_string_append_printf(names, "%s%s", i > 0 ? ", " : "", oc->name);
	}
	g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
		    "--org %s: no such org (configured: %s)", wanted, names->str);
	return FALSE;
}

/* the configured explicit types, or discovery ("*") when there are none */
static GStrv
sfl_backfill_default_types(const SflSourcesConfig *sources)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	GPtrArray *types = sources->eventlogfile.event_types;
	guint n = 0;

	for (guint i = 0; types != NULL && i < types->len; i++) {
		const SflElfTypeConfig *tc = g_ptr_array_index(types, i);
		if (!g_str_equal(tc->name, "*")) {
			g_strv_builder_add(b, tc->name);
			n++;
		}
	}
	if (n == 0)
		g_strv_builder_add(b, "*");
	return g_strv_builder_end(b);
}

static gboolean
sfl_backfill_open_store(SflBackfill *self, GError **error)
{
	g_autoptr(GAsyncResult) result = NULL;
	g_autofree gchar *location = NULL;

	self->store = sfl_app_build_backfill_store(self->config, &location, error);
	if (self->store == NULL)
		return FALSE;
	sfl_checkpoint_store_open_async(self->store, NULL, sfl_backfill_result_cb, &result);
	sfl_backfill_wait(&result);
	if (!sfl_checkpoint_store_open_finish(self->store, result, error)) {
		g_prefix_error(error, "cannot open the checkpoint store: ");
		return FALSE;
	}
	g_message("backfill: checkpoint store ready (%s, %s)",
		  sfl_config_enum_name("state.store", self->config->data.state.store), location);
	if (!sfl_app_coordinator_is_fenced(self->config))
		return TRUE;
	/*
	 * Under a fencing coordinator the backfill writes with the epoch the document holds
	 * now: it does not lead (the daemon does), but a store that a newer leader has moved
	 * past refuses its writes instead of letting them land beside the new term's.
	 */
	g_clear_object(&result);
	sfl_checkpoint_store_persisted_epoch_async(self->store, NULL, sfl_backfill_result_cb,
						   &result);
	sfl_backfill_wait(&result);
	if (!sfl_checkpoint_store_persisted_epoch_finish(self->store, result, &self->epoch,
							 &self->have_epoch, error)) {
		g_prefix_error(error, "cannot read the checkpoint store's epoch: ");
		return FALSE;
	}
	sfl_checkpoint_store_set_epoch(self->store, sfl_backfill_epoch_cb, self, NULL);
	if (self->have_epoch)
		g_message("backfill: commits are fenced at epoch %" G_GUINT64_FORMAT, self->epoch);
	return TRUE;
}

/* the token and the org id, so a bad credential fails here and sf_org_id is known */
static gchar *
sfl_backfill_probe(SflBackfill *self, GError **error)
{
	g_autoptr(GAsyncResult) result = NULL;
	g_autoptr(SflSfToken) token = NULL;
	gchar *org_id = NULL;

	sfl_sf_auth_get_token_async(self->auth, NULL, sfl_backfill_result_cb, &result);
	sfl_backfill_wait(&result);
	token = sfl_sf_auth_get_token_finish(self->auth, result, error);
	if (token == NULL)
		return NULL;
	g_clear_object(&result);
	sfl_sf_auth_get_org_id_async(self->auth, NULL, sfl_backfill_result_cb, &result);
	sfl_backfill_wait(&result);
	org_id = sfl_sf_auth_get_org_id_finish(self->auth, result, error);
	return org_id;
}

static gboolean
sfl_backfill_start(SflBackfill *self, GError **error)
{
	const SflConfigData *d = &self->config->data;
	const SflBackfillOptions *opts = self->opts;
	const gchar *org_name = NULL;
	const SflSalesforceConfig *sf = NULL;
	const SflSourcesConfig *sources = NULL;
	gboolean first = FALSE;
	g_auto(GStrv) types = NULL;
	g_auto(GStrv) labels = NULL;
	g_autofree gchar *org_id = NULL;
	g_autofree gchar *prefix = NULL;
	g_autoptr(SflLaneHandle) lane = NULL;
	const SflLokiLabelCardinalityConfig *lc = &d->sink.loki.label_cardinality;
	const SflPipelineCallbacks callbacks = {
		.error = sfl_backfill_pipeline_error_cb,
		.fenced = sfl_backfill_pipeline_fenced_cb,
	};
	SflElfBackfillOptions eo = {
		.since_usec = opts->since_usec,
		.until_usec = opts->until_usec,
		.interval = opts->interval,
		.concurrency = opts->concurrency,
		.ingest_timestamps = opts->ingest_timestamps,
		.run_start_usec = sfl_clock_wall_usec(self->clock),
		.dry_run = opts->dry_run,
	};

	if (!sfl_backfill_pick_org(self->config, opts->org, &org_name, &sf, &sources, &first,
				   error))
		return FALSE;
	if (!sfl_orgs_check_config(self->config, error))
		return FALSE;
	types = opts->event_types != NULL ? g_strdupv((gchar **)opts->event_types)
					  : sfl_backfill_default_types(sources);
	eo.event_types = (const gchar *const *)types;
	if (!sfl_backfill_open_store(self, error))
		return FALSE;

	self->curl = sfl_curl_loop_new();
	self->sink = sfl_app_build_sink(self->config, self->curl, 0, error);
	if (self->sink == NULL) {
		g_prefix_error(error, "cannot set up the Loki sink: ");
		return FALSE;
	}
	self->auth = sfl_sf_auth_new(self->curl, sf, self->clock, error);
	if (self->auth == NULL)
		return FALSE;
	self->rest = sfl_sf_rest_new(self->curl, self->auth, sf->api_version);
	org_id = sfl_backfill_probe(self, error);
	if (org_id == NULL) {
		g_prefix_error(error, "Salesforce start-up check failed: ");
		return FALSE;
	}
	g_message("backfill: %s%s%sauthenticated to Salesforce (org id %s)",
		  org_name[0] != '\0' ? "org " : "", org_name, org_name[0] != '\0' ? ": " : "",
		  org_id);

	self->source = sfl_elf_source_new_backfill(
		self->rest, &sources->eventlogfile, sources,
		sources->transform_salt != NULL ? sources->transform_salt : "", &eo, error);
	if (self->source == NULL)
		return FALSE;
	self->pipeline =
		sfl_pipeline_new(&d->sink.loki.batch, self->sink, self->store, self->clock);
	sfl_pipeline_set_callbacks(self->pipeline, &callbacks, self);
	/* a kill then re-sends at most the one batch in flight (docs/cli.md, "Stopping") */
	sfl_pipeline_set_serial_commits(self->pipeline, TRUE);
	self->interner = sfl_labels_interner_new();
	if (lc->max_values > 0 && lc->window > 0)
		self->guard = sfl_label_guard_new((guint)MIN(lc->max_values, G_MAXUINT), lc->window,
						  self->clock, NULL);
	/* the daemon's identity labels (SFL-0005) and key prefix */
	labels = sfl_orgs_identity_labels(self->config, sf, org_name, org_id);
	prefix = org_name[0] != '\0' ? g_strdup_printf("org=%s:", org_name) : g_strdup("");
	lane = sfl_pipeline_get_lane(self->pipeline, SFL_LANE_BULK);
	{
		SflSourceContext ctx = {
			.lane = lane,
			.store = self->store,
			.interner = self->interner,
			.clock = self->clock,
			.static_labels = (const gchar *const *)labels,
			.key_prefix = prefix,
			.metadata_fields =
				(const gchar *const *)d->sink.loki.structured_metadata_fields,
			.org = org_name[0] != '\0' ? org_name : NULL,
			.legacy_keys = first && org_name[0] != '\0',
			.label_guard = self->guard,
		};
		g_signal_connect(self->source, "finished", G_CALLBACK(sfl_backfill_finished_cb),
				 self);
		sfl_source_start(SFL_SOURCE(self->source), &ctx);
	}
	return TRUE;
}

static void
sfl_backfill_clear(SflBackfill *self)
{
	if (self->source != NULL && !sfl_source_is_stopped(SFL_SOURCE(self->source)))
		sfl_source_stop(SFL_SOURCE(self->source));
	sfl_clear_source(&self->tick);
	sfl_clear_source(&self->finish_idle);
	if (self->stop_sources != NULL) {
		for (guint i = 0; i < self->stop_sources->len; i++)
			g_source_destroy(g_ptr_array_index(self->stop_sources, i));
		g_clear_pointer(&self->stop_sources, g_ptr_array_unref);
	}
	g_clear_object(&self->source);
	g_clear_object(&self->pipeline);
	g_clear_pointer(&self->guard, sfl_label_guard_unref);
	g_clear_pointer(&self->interner, sfl_labels_interner_unref);
	g_clear_object(&self->rest);
	g_clear_object(&self->auth);
	g_clear_object(&self->sink);
	g_clear_object(&self->curl);
	/* the lock goes with the store; let its worker tasks and cancelled transfers finish */
	g_clear_object(&self->store);
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_clear_pointer(&self->loop, g_main_loop_unref);
	g_clear_pointer(&self->clock, sfl_clock_unref);
}

/**
 * sfl_backfill_run:
 * @config: the loaded configuration
 * @options: the window, the types and the modes
 * @stats: (out caller-allocates): what the run did, filled whatever the outcome
 * @error: return location for an error
 *
 * Returns: %TRUE when the window was read (or the run was stopped) and everything
 * pushed was committed; types stopped by a Salesforce failure still count as a success,
 * as in the original (they are in @stats and the log)
 */
gboolean
sfl_backfill_run(const SflConfig *config, const SflBackfillOptions *options,
		 SflBackfillStats *stats, GError **error)
{
	SflBackfill self = { .config = config, .opts = options };
	gboolean ok = FALSE;

	g_return_val_if_fail(config != NULL && options != NULL && stats != NULL, FALSE);

	self.clock = sfl_clock_get_system();
	self.loop = g_main_loop_new(NULL, FALSE);
	self.started = sfl_clock_monotonic_usec(self.clock);
	if (options->install_stop_handlers != NULL)
		self.stop_sources = options->install_stop_handlers(g_main_context_default(),
								   sfl_backfill_stop_cb, &self);
	if (sfl_backfill_start(&self, error)) {
		if (self.stops > 0) {
			/* a stop during start-up: nothing was read yet */
			sfl_backfill_drain(&self, 0);
		}
		sfl_clock_once(self.clock, &self.tick, SFL_BACKFILL_TICK_USEC,
			       "sf2loki backfill tick", sfl_backfill_tick_cb, &self, NULL);
		g_main_loop_run(self.loop);
		sfl_backfill_update_stats(&self);
		if (self.failure != NULL)
			g_propagate_error(error, g_steal_pointer(&self.failure));
		else
			ok = TRUE;
	}
	sfl_backfill_update_stats(&self);
	if (options->progress != NULL)
		options->progress(&self.stats, options->progress_data);
	*stats = self.stats;
	sfl_backfill_clear(&self);
	g_clear_error(&self.failure);
	return ok;
}
