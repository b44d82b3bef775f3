/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflRun"

#include "config.h"

#include "sfl-run.h"

#include "sfl-gsource.h"

#include "sfl-log.h"
#include "sfl-app.h"
#include "sfl-curl-loop.h"
#include "sfl-egress.h"
#include "sfl-error.h"
#include "sfl-leadership.h"
#include "sfl-loki-sink.h"
#include "sfl-health-server.h"
#include "sfl-metrics.h"
#include "sfl-otlp.h"
#include "sfl-orgs.h"
#include "sfl-pipeline.h"
#include "sfl-run-obs.h"
#include "sfl-platform.h"
#include "sfl-redact.h"

/*
 * The service lifecycle. Stop requests from the OS are messages to the loop: the first one
 * starts an orderly shutdown bounded by service.shutdown_grace, a second one ends it at once.
 * Components (sources, pipeline, sink, coordinator) register here as they arrive; each is
 * asked to stop and reports back, and the loop quits when all have or the grace runs out.
 *
 * The service manager hears about it through sfl_platform_notify(): READY=1 once start-up
 * succeeded, STOPPING=1 when the drain begins, and WATCHDOG=1 from a timer on this loop, so a
 * wedged loop stops pinging and gets restarted.
 */

typedef enum {
	SFL_RUN_STATE_RUNNING,
	SFL_RUN_STATE_STOPPING,
	SFL_RUN_STATE_STOPPED,
} SflRunState;

typedef struct {
	SflConfig *config;
	GMainLoop *loop;
	GMainContext *context;
	SflRunState state;
	guint pending_stops; /* components still draining */
	GSource *grace_source;
	GSource *watchdog_source;
	GSource *os_stop_source; /* woken by stop requests from OS threads */
	gint os_stop_requests;	 /* (atomic) */
	SflLeadership *leadership;
	SflCheckpointStore *store;
	SflSink *sink;
	SflPipeline *pipeline; /* the current leadership term's, or NULL */
	SflEgress *egress;     /* sink.loki.egress, shared by every term; NULL when unset */
	SflOrgs *orgs;
	SflCoordinator *coordinator;
	SflHealthServer *health;
	SflMetrics *metrics;
	SflSeries *leader_gauge;
	SflSeries *queue_gauge;
	SflRunObs *obs;	       /* commit-derived gauges, positions, degradation */
	gint64 started_at;     /* monotonic */
	GCancellable *startup; /* cancelled by a stop during the start-up probe */
	GSource *progress_source;
	GSource *finished_source; /* checks, on the loop, whether every source finished */
	gint64 progress_at;	  /* monotonic time of the last progress line */
	guint64 progress_rows;	  /* rows read at the last progress line */
	gboolean failed;	  /* a runtime failure ends the run with exit 1 */
	GError *failure;
} SflRunner;

static void
sfl_runner_clear_grace(SflRunner *runner)
{
	sfl_clear_source(&runner->grace_source);
}

/* one warning per failure; the log writer folds identical repeats (a failing watchdog) */
static void
sfl_runner_notify(const gchar *state)
{
	SflPlatformError perr = { 0 };

	if (sfl_platform_notify(state, &perr) != SFL_PLATFORM_OK)
		g_warning("could not notify the service manager: %s", perr.message);
}

static void
sfl_runner_finish(SflRunner *runner, const gchar *why)
{
	if (runner->state == SFL_RUN_STATE_STOPPED)
		return;
	runner->state = SFL_RUN_STATE_STOPPED;
	sfl_runner_clear_grace(runner);
	g_message("sf2loki stopped (%s)", why);
	g_main_loop_quit(runner->loop);
}

static gboolean
sfl_runner_grace_cb(gpointer user_data)
{
	SflRunner *runner = user_data;
	g_autofree gchar *grace = sfl_duration_format(runner->config->data.service.shutdown_grace);
	g_clear_pointer(&runner->grace_source, g_source_unref);
	g_warning("shutdown grace of %s elapsed with %u component(s) still stopping; exiting",
		  grace, runner->pending_stops);
	sfl_runner_finish(runner, "shutdown grace elapsed");
	return G_SOURCE_REMOVE;
}

static void
sfl_runner_leadership_stopped_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflRunner *runner = user_data;
	g_autoptr(GError) error = NULL;

	if (!sfl_leadership_stop_finish(SFL_LEADERSHIP(source), result, &error))
		g_warning("stopping leadership: %s", error->message);
	runner->pending_stops--;
	if (runner->pending_stops == 0 && runner->state == SFL_RUN_STATE_STOPPING)
		sfl_runner_finish(runner, "stop requested");
}

static gboolean
sfl_runner_stop_cb(gpointer user_data)
{
	SflRunner *runner = user_data;

	if (runner->state == SFL_RUN_STATE_STOPPING) {
		g_warning("second stop request; exiting without waiting for the drain");
		sfl_runner_finish(runner, "second stop request");
		return G_SOURCE_CONTINUE;
	}
	if (runner->state != SFL_RUN_STATE_RUNNING)
		return G_SOURCE_CONTINUE;

	runner->state = SFL_RUN_STATE_STOPPING;
	g_message("stop requested; shutting down");
	if (runner->startup != NULL)
		g_cancellable_cancel(runner->startup);
	sfl_runner_notify("STOPPING=1\nSTATUS=stopping");
	if (runner->leadership != NULL) {
		/* gives up the lease (if held) after the run of this term stopped */
		runner->pending_stops++;
		sfl_leadership_stop_async(runner->leadership, sfl_runner_leadership_stopped_cb,
					  runner);
	}
	if (runner->pending_stops == 0) {
		sfl_runner_finish(runner, "stop requested");
		return G_SOURCE_CONTINUE;
	}
	runner->grace_source =
		g_timeout_source_new((guint)(runner->config->data.service.shutdown_grace / 1000));
	g_source_set_callback(runner->grace_source, sfl_runner_grace_cb, runner, NULL);
	g_source_attach(runner->grace_source, runner->context);
	return G_SOURCE_CONTINUE;
}

static gboolean
sfl_runner_watchdog_cb(gpointer user_data)
{
	sfl_runner_notify("WATCHDOG=1");
	return G_SOURCE_CONTINUE;
}

/* returns the ping interval in ms, 0 when no watchdog is asked of us */
static guint64
sfl_runner_start_watchdog(SflRunner *runner)
{
	guint64 usec = sfl_platform_watchdog_usec();
	guint64 interval_ms;

	if (usec == 0)
		return 0;
	/* half the interval: a ping delayed by one busy dispatch still beats the deadline */
	interval_ms = CLAMP(usec / 2 / 1000, 1, G_MAXUINT);
	runner->watchdog_source = g_timeout_source_new((guint)interval_ms);
	g_source_set_callback(runner->watchdog_source, sfl_runner_watchdog_cb, runner, NULL);
	g_source_attach(runner->watchdog_source, runner->context);
	g_debug("service manager watchdog: pinging every %" G_GUINT64_FORMAT " ms", interval_ms);
	return interval_ms;
}

/*
 * Stop requests from OS threads (the Windows SCM and console handlers) must only post to the
 * loop. They raise a counter and make this source ready; g_source_set_ready_time() takes the
 * context lock and wakes the loop, which is what GCancellable's source relies on when another
 * thread cancels. Nothing is allocated on the OS thread, and nothing outlives the runner.
 */
static gboolean
sfl_runner_os_stop_dispatch(GSource *source, GSourceFunc callback, gpointer user_data)
{
	g_source_set_ready_time(source, -1);
	return callback(user_data);
}

static GSourceFuncs sfl_runner_os_stop_funcs = {
	.dispatch = sfl_runner_os_stop_dispatch,
};

/* on an OS thread, with the platform layer's lock held */
static void
sfl_runner_os_stop_cb(void *user_data)
{
	SflRunner *runner = user_data;

	g_atomic_int_inc(&runner->os_stop_requests);
	g_source_set_ready_time(runner->os_stop_source, 0);
}

static gboolean
sfl_runner_os_stop_requests_cb(gpointer user_data)
{
	SflRunner *runner = user_data;
	gint n = g_atomic_int_exchange(&runner->os_stop_requests, 0);

	/* a second request, e.g. Ctrl-C pressed twice, still ends the drain at once */
	for (gint i = 0; i < n; i++)
		sfl_runner_stop_cb(runner);
	return G_SOURCE_CONTINUE;
}

static void
sfl_runner_install_os_stop(SflRunner *runner)
{
	runner->os_stop_source = g_source_new(&sfl_runner_os_stop_funcs, sizeof(GSource));
	g_source_set_callback(runner->os_stop_source, sfl_runner_os_stop_requests_cb, runner, NULL);
	g_source_attach(runner->os_stop_source, runner->context);
	sfl_platform_set_stop_handler(sfl_runner_os_stop_cb, runner);
}

static void
sfl_runner_remove_os_stop(SflRunner *runner)
{
	/* returns only when no callback runs any more, so the source can go */
	sfl_platform_set_stop_handler(NULL, NULL);
	sfl_clear_source(&runner->os_stop_source);
}

static void
sfl_run_log_banner(SflConfig *config)
{
	SflConfigData *d = &config->data;
	g_autofree gchar *loki_url = sfl_redact(d->sink.loki.url);
	g_autoptr(GString) names = g_string_new(NULL);

	if (d->orgs->len == 0) {
		g_string_append(names, "(single org)");
	} else {
		for (guint i = 0; i < d->orgs->len; i++) {
			SflOrgConfig *org = g_ptr_array_index(d->orgs, i);
			g_string_append_printf(names, "%s%s", i ? "," : "", org->name);
		}
	}
	/* MESSAGE goes last: its printf arguments end the list */
	g_log_structured(G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "VERSION", PACKAGE_VERSION, "CONFIG",
			 config->path != NULL ? config->path : "(none)", "LOKI_URL", loki_url,
			 "STATE_STORE", sfl_config_enum_name("state.store", d->state.store),
			 "COORDINATOR", sfl_config_enum_name("coordinate.type", d->coordinate.type),
			 "ORGS", names->str, "MESSAGE", "sf2loki %s starting", PACKAGE_VERSION);
	if (sfl_egress_config_is_active(&d->sink.loki.egress))
		g_message("egress governor: %g lines/s, %g bytes/s, daily byte budget "
			  "%" G_GINT64_FORMAT " (%s when spent; 0 is off)",
			  d->sink.loki.egress.max_lines_per_second,
			  d->sink.loki.egress.max_bytes_per_second,
			  d->sink.loki.egress.daily_byte_budget,
			  sfl_config_enum_name("sink.loki.egress.budget_action",
					       d->sink.loki.egress.budget_action));
	if (d->sources.apexlog.enabled)
		g_warning("%s", SFL_APEXLOG_NOT_BUILT);
	/* the budget is checked per batch: one that can never fit stops its lane every day */
	if (d->sink.loki.egress.daily_byte_budget > 0 &&
	    d->sink.loki.batch.max_bytes > d->sink.loki.egress.daily_byte_budget)
		g_warning("sink.loki.egress.daily_byte_budget (%" G_GINT64_FORMAT
			  " bytes) is smaller than sink.loki.batch.max_bytes (%" G_GINT64_FORMAT
			  " bytes): a batch larger than the whole budget never fits and is %s",
			  d->sink.loki.egress.daily_byte_budget, d->sink.loki.batch.max_bytes,
			  d->sink.loki.egress.budget_action == SFL_BUDGET_ACTION_DROP
				  ? "dropped"
				  : "held back every day");
}

static SflLogLevel
sfl_run_log_level(gint level)
{
	switch ((SflConfigLogLevel)level) {
	case SFL_CONFIG_LOG_LEVEL_DEBUG:
		return SFL_LOG_LEVEL_DEBUG;
	case SFL_CONFIG_LOG_LEVEL_INFO:
		return SFL_LOG_LEVEL_INFO;
	case SFL_CONFIG_LOG_LEVEL_WARNING:
	case SFL_CONFIG_LOG_LEVEL_WARN:
		return SFL_LOG_LEVEL_WARNING;
	case SFL_CONFIG_LOG_LEVEL_ERROR:
		return SFL_LOG_LEVEL_ERROR;
	case SFL_CONFIG_LOG_LEVEL_CRITICAL:
		return SFL_LOG_LEVEL_CRITICAL;
	}
	return SFL_LOG_LEVEL_INFO;
}

static void
sfl_run_pipeline_fenced_cb(SflPipeline *pipeline, SflLane lane, const GError *error,
			   gpointer user_data)
{
	SflRunner *runner = user_data;
	/* another replica leads: stand by in place, never exit (architecture §5 rule 5) */
	sfl_leadership_handle_commit_error(runner->leadership, error);
}

static void
sfl_run_pipeline_error_cb(SflPipeline *pipeline, SflLane lane, const GError *error,
			  gpointer user_data)
{
	SflRunner *runner = user_data;

	g_warning("the %s lane stopped: %s; exiting", sfl_lane_to_string(lane), error->message);
	if (runner->failure == NULL)
		runner->failure = g_error_copy(error);
	runner->failed = TRUE;
	sfl_runner_stop_cb(runner);
}

static void
sfl_run_pipeline_committed_cb(SflPipeline *pipeline, const SflStateDoc *doc, gpointer user_data)
{
	SflRunner *runner = user_data;
	sfl_run_obs_committed(runner->obs, doc, g_get_real_time());
}

static void
sfl_run_pipeline_writable_cb(SflPipeline *pipeline, SflLane lane, gpointer user_data)
{
	SflRunner *runner = user_data;
	sfl_orgs_notify_writable(runner->orgs, lane);
}

/* one line now and then, so an operator (or `make run`) sees the data move */
static gboolean
sfl_run_progress_cb(gpointer user_data)
{
	SflRunner *runner = user_data;
	SflSourceCounters totals = { 0 };
	SflPipelineCounters counters = { 0 };
	gint64 now = g_get_monotonic_time();
	gdouble secs = (gdouble)(now - runner->progress_at) / G_USEC_PER_SEC;

	if (runner->pipeline == NULL)
		return G_SOURCE_CONTINUE;
	sfl_orgs_get_totals(runner->orgs, &totals);
	sfl_pipeline_get_counters(runner->pipeline, &counters);
	g_message("progress: %" G_GUINT64_FORMAT " rows read, %" G_GUINT64_FORMAT
		  " entries pushed, %" G_GUINT64_FORMAT " commits, %u queued, %.0f rows/s, "
		  "%" G_GUINT64_FORMAT " source errors",
		  totals.rows_read, counters.pushed_entries, counters.commits,
		  counters.queue_depth[SFL_LANE_BULK] + counters.queue_depth[SFL_LANE_STREAMING],
		  secs > 0 ? (gdouble)(totals.rows_read - runner->progress_rows) / secs : 0.0,
		  totals.errors);
	runner->progress_at = now;
	runner->progress_rows = totals.rows_read;
	return G_SOURCE_CONTINUE;
}

/* where the store keeps its document, for the pipeline's log lines (never a credential) */
static gchar *
sfl_run_store_location(const SflConfig *config)
{
	const SflStateConfig *state = &config->data.state;

	switch ((SflStateStoreKind)state->store) {
	case SFL_STATE_STORE_FILE:
		return g_strdup(state->file.path);
	case SFL_STATE_STORE_S3:
		return g_strdup_printf("s3://%s/%s", state->s3.bucket, state->s3.key);
	case SFL_STATE_STORE_GCS:
		return g_strdup_printf("gs://%s/%s", state->gcs.bucket, state->gcs.object_name);
	}
	return NULL;
}

static gboolean
sfl_run_finished_cb(gpointer user_data)
{
	SflRunner *runner = user_data;

	sfl_clear_source(&runner->finished_source);
	if (runner->state != SFL_RUN_STATE_RUNNING || runner->pipeline == NULL ||
	    !sfl_orgs_all_finished(runner->orgs))
		return G_SOURCE_REMOVE;
	/* the original's pipeline ends when its sources do, and the process exits 0 (§6.4) */
	g_message("every source finished: nothing left to read; exiting (a finite run)");
	sfl_runner_stop_cb(runner);
	return G_SOURCE_REMOVE;
}

/* a source finished, maybe inside its own callback: look at all of them from the loop */
static void
sfl_run_source_finished(gpointer user_data)
{
	SflRunner *runner = user_data;

	if (runner->finished_source != NULL)
		return;
	runner->finished_source = g_idle_source_new();
	g_source_set_callback(runner->finished_source, sfl_run_finished_cb, runner, NULL);
	g_source_attach(runner->finished_source, runner->context);
}

/* one leadership term: a fresh pipeline run and fresh sources on every acquisition */
static void
sfl_run_start_term(SflLeadership *leadership, gpointer user_data)
{
	SflRunner *runner = user_data;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	const SflPipelineCallbacks callbacks = {
		.writable = sfl_run_pipeline_writable_cb,
		.error = sfl_run_pipeline_error_cb,
		.fenced = sfl_run_pipeline_fenced_cb,
		.committed = sfl_run_pipeline_committed_cb,
	};
	SflDuration progress = runner->config->data.service.progress_interval;
	g_autofree gchar *location = sfl_run_store_location(runner->config);

	runner->pipeline = sfl_pipeline_new(&runner->config->data.sink.loki.batch, runner->sink,
					    runner->store, clock);
	sfl_pipeline_set_callbacks(runner->pipeline, &callbacks, runner);
	sfl_pipeline_set_store_label(
		runner->pipeline,
		sfl_config_enum_name("state.store", runner->config->data.state.store), location);
	sfl_pipeline_set_metrics(runner->pipeline, runner->metrics);
	/* one governor for the whole process: the rate buckets carry over from term to term,
	 * and every term reads today's count from the store afresh */
	if (runner->egress == NULL &&
	    sfl_egress_config_is_active(&runner->config->data.sink.loki.egress)) {
		runner->egress = sfl_egress_new(&runner->config->data.sink.loki.egress, clock);
		sfl_egress_set_metrics(runner->egress, runner->metrics);
	}
	sfl_pipeline_set_egress(runner->pipeline, runner->egress);
	sfl_orgs_start_sources(runner->orgs, runner->pipeline, runner->store, runner->metrics);
	g_message("leader: pipeline run started with %u source(s)",
		  sfl_orgs_get_n_sources(runner->orgs));
	runner->progress_at = g_get_monotonic_time();
	runner->progress_rows = 0;
	if (progress > 0 && runner->progress_source == NULL) {
		runner->progress_source = g_timeout_source_new((guint)MAX(progress / 1000, 1));
		g_source_set_callback(runner->progress_source, sfl_run_progress_cb, runner, NULL);
		g_source_attach(runner->progress_source, runner->context);
	}
}

static void
sfl_run_pipeline_stopped_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflRunner *runner = user_data;
	SflPipelineCounters counters = { 0 };

	sfl_pipeline_stop_finish(SFL_PIPELINE(source), result, NULL);
	sfl_pipeline_get_counters(SFL_PIPELINE(source), &counters);
	g_message("pipeline run stopped: %" G_GUINT64_FORMAT " entries pushed, %" G_GUINT64_FORMAT
		  " commits, %" G_GUINT64_FORMAT " abandoned uncommitted",
		  counters.pushed_entries, counters.commits, counters.abandoned_entries);
	g_object_unref(source);
	runner->pending_stops--;
	if (runner->pending_stops == 0 && runner->state == SFL_RUN_STATE_STOPPING)
		sfl_runner_finish(runner, "stop requested");
}

/* the term ended: drain what was accepted within the grace, commit it, abandon the rest */
static void
sfl_run_stop_term(SflLeadership *leadership, gpointer user_data)
{
	SflRunner *runner = user_data;
	SflPipeline *pipeline = g_steal_pointer(&runner->pipeline);

	if (pipeline == NULL)
		return;
	/* nothing new enters; what the lanes hold drains within the grace */
	sfl_orgs_stop_sources(runner->orgs);
	sfl_clear_source(&runner->progress_source);
	runner->pending_stops++;
	sfl_pipeline_stop_async(pipeline, runner->config->data.service.shutdown_grace, NULL,
				sfl_run_pipeline_stopped_cb, runner);
}

static void
sfl_run_status_changed(SflLeadership *leadership, const gchar *status, gpointer user_data)
{
	g_autofree gchar *line = g_strdup_printf("STATUS=%s", status);
	sfl_runner_notify(line);
}

static void
sfl_run_teardown(SflRunner *runner, GPtrArray *stop_sources)
{
	g_clear_pointer(&runner->health, sfl_health_server_free);
	g_clear_pointer(&runner->obs, sfl_run_obs_free);
	g_clear_object(&runner->egress);
	g_clear_pointer(&runner->metrics, sfl_metrics_unref);
	sfl_runner_remove_os_stop(runner);
	if (stop_sources != NULL) {
		for (guint i = 0; i < stop_sources->len; i++)
			g_source_destroy(g_ptr_array_index(stop_sources, i));
	}
	sfl_clear_source(&runner->watchdog_source);
	sfl_clear_source(&runner->progress_source);
	sfl_clear_source(&runner->finished_source);
	sfl_runner_clear_grace(runner);
	g_main_context_unref(runner->context);
	sfl_log_flush_repeats();
}

static void
sfl_run_store_opened_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	GAsyncResult **out = user_data;
	*out = g_object_ref(result);
}

/*
 * Opens the checkpoint store before anything else: without a coordinator it takes the state
 * file's lock, so a second instance stops here, and a corrupt or unreadable document stops
 * start-up instead of turning into an empty one.
 */
static SflCheckpointStore *
sfl_run_open_store(SflRunner *runner, GError **error)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GAsyncResult) result = NULL;

	store = sfl_app_build_store(runner->config, sfl_app_store_wants_exclusive(runner->config),
				    error);
	if (store == NULL)
		return NULL;
	sfl_checkpoint_store_open_async(store, NULL, sfl_run_store_opened_cb, &result);
	while (result == NULL)
		g_main_context_iteration(runner->context, TRUE);
	if (!sfl_checkpoint_store_open_finish(store, result, error)) {
		g_prefix_error(error, "cannot open the checkpoint store: ");
		return NULL;
	}
	g_message("checkpoint store ready (%s)",
		  sfl_config_enum_name("state.store", runner->config->data.state.store));
	return g_steal_pointer(&store);
}

/* the first degradation reason of original §6.5: the budget pause comes before the others */
static gchar *
sfl_run_degraded(SflRunner *runner)
{
	gchar *reason = runner->egress != NULL ? sfl_egress_dup_degraded(runner->egress) : NULL;
	/* the pipeline's clock: its streaks are stamped on it, which g_get_monotonic_time() is
	 * not (it stops during a suspend, the platform's monotonic clock does not) */
	g_autoptr(SflClock) clock = sfl_clock_get_system();

	if (reason != NULL)
		return reason;
	return sfl_run_obs_degraded(
		runner->obs, runner->orgs != NULL ? sfl_orgs_get_auth_failing(runner->orgs) : NULL,
		runner->pipeline != NULL ? sfl_pipeline_get_failing_since(runner->pipeline) : 0,
		runner->pipeline != NULL ? sfl_pipeline_get_commit_failing_since(runner->pipeline)
					 : 0,
		sfl_clock_monotonic_usec(clock));
}

/* /readyz: ready only while this replica leads and runs its pipeline (original §6.5) */
static gboolean
sfl_run_health_ready(gpointer user_data, gchar **reason)
{
	SflRunner *runner = user_data;

	if (runner->state != SFL_RUN_STATE_RUNNING) {
		*reason = g_strdup("not ready: stopping");
		return FALSE;
	}
	if (runner->leadership == NULL) {
		*reason = g_strdup("not ready");
		return FALSE;
	}
	switch (sfl_leadership_get_readiness(runner->leadership)) {
	case SFL_READINESS_READY:
		*reason = sfl_run_degraded(runner);
		return *reason == NULL;
	case SFL_READINESS_STANDBY:
		*reason = g_strdup("standby");
		return FALSE;
	case SFL_READINESS_STARTING:
		break;
	}
	*reason = g_strdup("not ready");
	return FALSE;
}

/* the gauges that describe the present, brought up to date before /metrics or an OTLP export */
static void
sfl_run_refresh_gauges(gpointer user_data)
{
	SflRunner *runner = user_data;
	SflPipelineCounters counters = { 0 };

	if (runner->pipeline != NULL)
		sfl_pipeline_get_counters(runner->pipeline, &counters);
	sfl_series_set(runner->leader_gauge, runner->pipeline != NULL ? 1 : 0);
	sfl_series_set(runner->queue_gauge, counters.queue_depth[SFL_LANE_BULK] +
						    counters.queue_depth[SFL_LANE_STREAMING]);
}

/* /metrics: the registry, with the gauges that describe the present refreshed first */
static gchar *
sfl_run_health_metrics(gpointer user_data)
{
	SflRunner *runner = user_data;

	sfl_run_refresh_gauges(runner);
	return sfl_metrics_render_prometheus(runner->metrics);
}

/* the instruments the run itself owns; components register theirs when they start */
static void
sfl_run_init_metrics(SflRunner *runner)
{
	const gchar *version[] = { "version", NULL };
	SflMetricFamily *build_info = NULL;

	runner->metrics = sfl_metrics_new();
	runner->obs = sfl_run_obs_new(runner->config, runner->metrics);
	build_info = sfl_metrics_gauge(runner->metrics, "sf2loki_build_info",
				       "Always 1; the version is a label.", version);
	sfl_series_set(sfl_metric_family_series(build_info, (const gchar *[]){ PACKAGE_VERSION }),
		       1);
	runner->leader_gauge = sfl_metric_family_series(
		sfl_metrics_gauge(runner->metrics, "sf2loki_leader",
				  "1 while this replica leads and runs the pipeline, else 0.",
				  NULL),
		NULL);
	runner->queue_gauge =
		sfl_metric_family_series(sfl_metrics_gauge(runner->metrics, "sf2loki_queue_depth",
							   "Entries queued in both lanes.", NULL),
					 NULL);
	/* exported (at 0) without a governor too, so dashboards and alerts see a series */
	sfl_egress_register_metrics(runner->metrics, NULL, NULL);
}

/* --- OTLP push (service.telemetry, original §9.1): the same registry, every export_interval - */

static SflOtlpExporter *
sfl_run_start_otlp(SflRunner *runner, SflCurlLoop *loop, GError **error)
{
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	SflOtlpExporter *otlp = sfl_otlp_exporter_new(loop, runner->metrics, clock,
						      &runner->config->data.service.telemetry,
						      &runner->config->data.sink.loki, error);

	if (otlp == NULL) {
		g_prefix_error(error, "cannot set up the OTLP metrics push: ");
		return NULL;
	}
	sfl_otlp_exporter_set_refresh(otlp, sfl_run_refresh_gauges, runner);
	sfl_otlp_exporter_start(otlp);
	return otlp;
}

static void
sfl_run_otlp_flushed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
}

/* the final export, once the pipeline stopped and its counts are final; bounded by the
 * exporter's request deadline */
static void
sfl_run_stop_otlp(SflRunner *runner, SflOtlpExporter *otlp)
{
	gboolean done = FALSE;

	sfl_otlp_exporter_shutdown_async(otlp, sfl_run_otlp_flushed_cb, &done);
	while (!done)
		g_main_context_iteration(runner->context, TRUE);
	sfl_otlp_exporter_free(otlp);
}

/* the governor's limits and today's count; "enforced" is false when no limit is set */
static json_t *
sfl_run_egress_status(SflRunner *runner)
{
	const SflLokiEgressConfig *config = &runner->config->data.sink.loki.egress;
	SflEgressStatus status = { 0 };

	if (runner->egress != NULL)
		sfl_egress_get_status(runner->egress, &status);
	return json_pack(
		"{s:b, s:f, s:f, s:I, s:s, s:o, s:o, s:b}", "enforced",
		sfl_egress_config_is_active(config), "max_lines_per_second",
		config->max_lines_per_second, "max_bytes_per_second", config->max_bytes_per_second,
		"daily_byte_budget", (json_int_t)config->daily_byte_budget, "budget_action",
		sfl_config_enum_name("sink.loki.egress.budget_action", config->budget_action),
		"used_bytes",
		status.budget_enabled ? json_integer((json_int_t)status.used_bytes) : json_null(),
		"date", status.budget_enabled ? json_string(status.date) : json_null(), "paused",
		status.paused);
}

/* /statusz: a snapshot an operator can read; nothing secret is ever in it */
static gchar *
sfl_run_health_status(gpointer user_data)
{
	SflRunner *runner = user_data;
	SflPipelineCounters c = { 0 };
	json_t *doc = json_object();
	json_t *pipeline = NULL;
	gchar *text = NULL;

	json_object_set_new(doc, "version", json_string(PACKAGE_VERSION));
	json_object_set_new(
		doc, "uptime_seconds",
		json_integer((g_get_monotonic_time() - runner->started_at) / G_USEC_PER_SEC));
	json_object_set_new(
		doc, "readiness",
		json_string(runner->leadership != NULL
				    ? sfl_readiness_to_string(
					      sfl_leadership_get_readiness(runner->leadership))
				    : "starting"));
	if (runner->coordinator != NULL) {
		const gchar *holder = sfl_coordinator_get_holder(runner->coordinator);
		json_object_set_new(
			doc, "leadership",
			json_pack("{s:s?, s:I, s:b}", "holder", holder, "epoch",
				  (json_int_t)sfl_coordinator_get_epoch(runner->coordinator),
				  "leader", runner->pipeline != NULL));
	}
	if (runner->pipeline != NULL) {
		sfl_pipeline_get_counters(runner->pipeline, &c);
		pipeline = json_pack(
			"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"pushed_entries", (json_int_t)c.pushed_entries, "pushed_bytes",
			(json_int_t)c.pushed_bytes, "dropped_bad_request",
			(json_int_t)c.dropped_bad_request, "dropped_oversized_413",
			(json_int_t)c.dropped_oversized_413, "dropped_other",
			(json_int_t)c.dropped_other, "dropped_budget", (json_int_t)c.dropped_budget,
			"retries", (json_int_t)c.retries, "commits", (json_int_t)c.commits,
			"commit_retries", (json_int_t)c.commit_retries, "bulk_depth",
			(json_int_t)c.queue_depth[SFL_LANE_BULK], "bulk_bytes",
			(json_int_t)c.queue_bytes[SFL_LANE_BULK], "streaming_depth",
			(json_int_t)c.queue_depth[SFL_LANE_STREAMING], "streaming_bytes",
			(json_int_t)c.queue_bytes[SFL_LANE_STREAMING]);
		json_object_set_new(doc, "pipeline", pipeline);
	}
	json_object_set_new(doc, "sources",
			    runner->orgs != NULL ? sfl_orgs_status(runner->orgs) : json_array());
	json_object_set_new(doc, "checkpoints",
			    sfl_run_obs_checkpoints(runner->obs, g_get_real_time()));
	{
		g_autofree gchar *degraded = NULL;
		gint64 failing = runner->pipeline != NULL
					 ? sfl_pipeline_get_failing_since(runner->pipeline)
					 : 0;
		g_autoptr(SflClock) clock = sfl_clock_get_system();
		gint64 now = sfl_clock_monotonic_usec(clock);

		degraded = sfl_run_degraded(runner);
		json_object_set_new(
			doc, "loki",
			json_pack("{s:o, s:o, s:s?}", "last_push_success",
				  c.last_success_wall_usec > 0
					  ? json_real((gdouble)c.last_success_wall_usec /
						      G_USEC_PER_SEC)
					  : json_null(),
				  "failing_for_seconds",
				  failing > 0 ? json_integer((now - failing) / G_USEC_PER_SEC)
					      : json_null(),
				  "degraded", degraded));
		json_object_set_new(doc, "egress", sfl_run_egress_status(runner));
	}
	text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(doc);
	return text;
}

static void
sfl_run_probe_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	GAsyncResult **out = user_data;
	*out = g_object_ref(result);
}

/*
 * Builds the Salesforce side and proves the credentials work before READY: a wrong key or
 * secret fails the start (exit 1) instead of a service that is "up" and ingests nothing.
 */
static SflOrgs *
sfl_run_start_orgs(SflRunner *runner, SflCurlLoop *loop, GError **error)
{
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflOrgs) orgs = sfl_orgs_new(runner->config, loop, clock, error);
	g_autoptr(GAsyncResult) result = NULL;

	if (orgs == NULL)
		return NULL;
	sfl_orgs_set_metrics(orgs, runner->metrics);
	runner->startup = g_cancellable_new();
	sfl_orgs_probe_async(orgs, runner->startup, sfl_run_probe_cb, &result);
	while (result == NULL)
		g_main_context_iteration(runner->context, TRUE);
	g_clear_object(&runner->startup);
	if (!sfl_orgs_probe_finish(orgs, result, error)) {
		g_prefix_error(error, "Salesforce start-up check failed: ");
		return NULL;
	}
	return g_steal_pointer(&orgs);
}

/**
 * sfl_run:
 * @config: a loaded configuration
 * @platform: OS hooks
 * @error: return location for an error
 *
 * Runs the service on the thread-default main context until a stop request. A configuration
 * with no enabled source returns at once, after saying why.
 *
 * Returns: %TRUE after a clean stop
 */
gboolean
sfl_run(SflConfig *config, const SflCliPlatform *platform, GError **error)
{
	SflRunner runner = { 0 };
	g_autoptr(GPtrArray) stop_sources = NULL;
	g_autoptr(GMainLoop) loop = NULL;
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(SflCoordinator) coordinator = NULL;
	g_autoptr(SflLeadership) leadership = NULL;
	g_autoptr(SflCurlLoop) curl_loop = NULL;
	g_autoptr(SflSink) sink = NULL;
	g_autoptr(SflOrgs) orgs = NULL;
	g_autoptr(SflOtlpExporter) otlp = NULL;
	g_autofree gchar *no_source = NULL;

	g_return_val_if_fail(config != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	sfl_log_setup((SflLogFormat)config->data.service.log_format,
		      sfl_run_log_level(config->data.service.log_level));

	runner.config = config;
	runner.context = g_main_context_ref_thread_default();
	loop = g_main_loop_new(runner.context, FALSE);
	runner.loop = loop;
	runner.state = SFL_RUN_STATE_RUNNING;

	if (platform != NULL && platform->install_stop_handlers != NULL)
		stop_sources = platform->install_stop_handlers(runner.context, sfl_runner_stop_cb,
							       &runner);
	sfl_runner_install_os_stop(&runner);

	sfl_run_log_banner(config);
	/*
	 * Nothing to ingest: the original's pipeline ends at once and the process exits 0 (a
	 * finite run, original §6.4). Under a coordinator too: leading would change nothing, so
	 * every replica ends here without contesting the lease or opening the store.
	 */
	if (!sfl_orgs_check_config(config, error)) {
		sfl_run_teardown(&runner, stop_sources);
		return FALSE;
	}
	no_source = sfl_app_dup_no_source_reason(config);
	if (no_source != NULL) {
		g_warning("%s: nothing to ingest; exiting", no_source);
		g_message("sf2loki stopped (no enabled source)");
		sfl_run_teardown(&runner, stop_sources);
		return TRUE;
	}
	runner.started_at = g_get_monotonic_time();
	sfl_run_init_metrics(&runner);
	{
		const SflHealthCallbacks health = {
			.ready = sfl_run_health_ready,
			.metrics = sfl_run_health_metrics,
			.status = sfl_run_health_status,
		};
		runner.health = sfl_health_server_new(config->data.service.health_addr, &health,
						      &runner, error);
		if (runner.health == NULL) {
			sfl_run_teardown(&runner, stop_sources);
			return FALSE;
		}
		g_message("health server listening on %s (port %u): /healthz /readyz /metrics "
			  "/statusz",
			  config->data.service.health_addr,
			  sfl_health_server_get_port(runner.health));
	}

	/*
	 * start-up: the sink, coordinator and sources start here as they arrive, after the
	 * checkpoint store. A failure returns before READY=1, so the service manager records a
	 * failed start (and systemd's RestartPreventExitStatus=2 keeps a configuration error from
	 * looping).
	 */
	store = sfl_run_open_store(&runner, error);
	if (store == NULL) {
		sfl_run_teardown(&runner, stop_sources);
		return FALSE;
	}
	/* a stop that arrived during start-up already finished the run: honour it */
	if (runner.state != SFL_RUN_STATE_RUNNING) {
		g_clear_object(&store);
		while (g_main_context_iteration(runner.context, FALSE))
			;
		sfl_run_teardown(&runner, stop_sources);
		return TRUE;
	}

	/*
	 * one curl loop for every HTTP client of the process, the coordinator's included; its
	 * trust is SSL_CERT_FILE / SSL_CERT_DIR over the system store, and sink.loki.ca_file
	 * stays with the Loki sink's own requests
	 */
	curl_loop = sfl_curl_loop_new();
	coordinator = sfl_app_build_coordinator(config, curl_loop, error);
	if (coordinator == NULL) {
		g_clear_object(&curl_loop);
		g_clear_object(&store);
		sfl_run_teardown(&runner, stop_sources);
		return FALSE;
	}
	sink = sfl_loki_sink_new(curl_loop, &config->data.sink.loki, error);
	if (sink == NULL) {
		g_prefix_error(error, "cannot set up the Loki sink: ");
		g_clear_object(&coordinator);
		g_clear_object(&store);
		sfl_run_teardown(&runner, stop_sources);
		return FALSE;
	}
	if (config->data.service.telemetry.enabled) {
		otlp = sfl_run_start_otlp(&runner, curl_loop, error);
		if (otlp == NULL) {
			g_clear_object(&sink);
			g_clear_object(&coordinator);
			g_clear_object(&store);
			sfl_run_teardown(&runner, stop_sources);
			return FALSE;
		}
	}
	orgs = sfl_run_start_orgs(&runner, curl_loop, error);
	if (orgs == NULL) {
		/* before the loop drains below, so a cancelled export is delivered and freed */
		g_clear_pointer(&otlp, sfl_otlp_exporter_free);
		g_clear_object(&sink);
		g_clear_object(&coordinator);
		g_clear_object(&store);
		while (g_main_context_iteration(runner.context, FALSE))
			;
		sfl_run_teardown(&runner, stop_sources);
		/* a stop during the probe is a clean stop */
		if (runner.state != SFL_RUN_STATE_RUNNING && *error != NULL &&
		    g_error_matches(*error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
			g_clear_error(error);
			return TRUE;
		}
		return FALSE;
	}
	runner.orgs = orgs;
	sfl_orgs_set_finished_func(orgs, sfl_run_source_finished, &runner);
	runner.coordinator = coordinator;
	runner.store = store;
	runner.sink = sink;
	leadership = sfl_leadership_new(store, coordinator, sfl_app_coordinator_is_fenced(config));
	sfl_leadership_set_hooks(leadership, sfl_run_start_term, sfl_run_stop_term,
				 sfl_run_status_changed, &runner);
	runner.leadership = leadership;
	sfl_leadership_start(leadership);

	g_message("ready; contesting leadership");
	{
		/* the READY status says whether pings follow, so nobody has to wait to find out */
		guint64 ping_ms = sfl_runner_start_watchdog(&runner);
		g_autofree gchar *ready =
			ping_ms > 0 ? g_strdup_printf(
					      "READY=1\nSTATUS=started; contesting "
					      "leadership; watchdog ping every %" G_GUINT64_FORMAT
					      " ms",
					      ping_ms)
				    : g_strdup("READY=1\nSTATUS=started; contesting leadership; "
					       "watchdog off");
		sfl_runner_notify(ready);
	}
	g_main_loop_run(loop);
	if (otlp != NULL)
		sfl_run_stop_otlp(&runner, g_steal_pointer(&otlp));

	runner.leadership = NULL;
	g_clear_object(&leadership);
	g_clear_object(&coordinator);
	runner.orgs = NULL;
	runner.coordinator = NULL;
	g_clear_pointer(&orgs, sfl_orgs_free);
	runner.sink = NULL;
	runner.store = NULL;
	g_clear_object(&sink);
	g_clear_object(&curl_loop);
	/* the lock goes when the store does; let its worker tasks finish first */
	g_clear_object(&store);
	while (g_main_context_iteration(runner.context, FALSE))
		;
	sfl_run_teardown(&runner, stop_sources);
	if (runner.failed) {
		if (runner.failure != NULL)
			g_propagate_error(error, g_steal_pointer(&runner.failure));
		else
			g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INTERNAL, "the run failed");
		return FALSE;
	}
	return TRUE;
}
