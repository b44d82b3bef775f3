/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* the run's log domain, kept from before the daemon object owned the lifecycle */
#define G_LOG_DOMAIN "SflRun"

#include "config.h"

#include "sfl-daemon.h"

#include <string.h>

#include "sfl-app.h"
#include "sfl-config-gsettings.h"
#include "sfl-config-leaves.h"
#include "sfl-curl-loop.h"
#include "sfl-egress.h"
#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-health-server.h"
#include "sfl-kinds.h"
#include "sfl-leadership.h"
#include "sfl-term.h"
#include "sfl-log.h"
#include "sfl-metrics.h"
#include "sfl-orgs.h"
#include "sfl-otlp.h"
#include "sfl-pipeline.h"
#include "sfl-platform.h"
#include "sfl-redact.h"
#include "sfl-run-obs.h"

/*
 * The service lifecycle. Stop requests from the OS are messages to the loop: the first one
 * starts an orderly shutdown bounded by service.shutdown_grace, a second one ends it at once.
 * Components (sources, pipeline, sink, coordinator) register here as they arrive; each is
 * asked to stop and reports back, and the loop quits when all have or the grace runs out.
 *
 * The service manager hears about it through sfl_platform_notify(): READY=1 once start-up
 * succeeded, STOPPING=1 when the drain begins, and WATCHDOG=1 from a timer on this loop, so a
 * wedged loop stops pinging and gets restarted.
 *
 * Whatever start-up built, and however far it got, the object's dispose releases it: one
 * teardown, newest component first.
 */

typedef enum {
	SFL_DAEMON_STATE_RUNNING,
	SFL_DAEMON_STATE_STOPPING,
	SFL_DAEMON_STATE_STOPPED,
} SflDaemonState;

struct _SflDaemon {
	GObject parent_instance;
	/*
	 * the configuration in force: the caller's at first (borrowed, outlives the daemon), then
	 * the last one a reload applied. Every configuration ever in force stays in @configs
	 * until the teardown: the components built once (coordinator, store, token providers,
	 * OTLP) keep reading the one they were built from, and a term borrows its own.
	 */
	SflConfig *config;
	const SflConfig *started; /* the caller's: what the restart-only parts were built from */
	GPtrArray *configs;	  /* (element-type SflConfig): owned, the reloaded ones */
	gchar *config_path;	  /* (nullable): the file a reload reads again */
	gchar **envp;		  /* the environment a reload reads again */
	SflDaemonStopHandlersFunc install_stop_handlers;
	GMainLoop *loop;
	GMainContext *context;
	SflDaemonState state;
	guint pending_stops;	 /* components still draining */
	GPtrArray *stop_sources; /* the platform's stop handlers (GSource) */
	GSource *grace_source;
	GSource *watchdog_source;
	GSource *os_stop_source; /* woken by stop and reload requests from OS threads */
	gint os_stop_requests;	 /* (atomic) */
	gint os_reload_requests; /* (atomic) */
	/* the components, in the order start-up builds them */
	SflCheckpointStore *store;
	SflCurlLoop *curl_loop; /* every HTTP client of the process */
	SflCoordinator *coordinator;
	SflSink *sink;
	SflOtlpExporter *otlp; /* service.telemetry; NULL when off */
	SflOrgs *orgs;
	SflLeadership *leadership;
	SflTerm *term;		   /* the current leadership term, or NULL */
	GPtrArray *stopping_terms; /* ended terms still draining */
	SflEgress *egress;	   /* sink.loki.egress, shared by every term; NULL when unset */
	SflHealthServer *health;
	SflMetrics *metrics;
	SflSeries *leader_gauge;
	SflSeries *queue_gauge;
	SflRunObs *obs; /* commit-derived gauges, positions, degradation */
	/* live reload (docs/configuration.md, "Live reload") */
	SflConfigWatch *watch;	    /* GSettings "changed" */
	GSource *rewatch_source;    /* rebuilds @watch for the configuration in force */
	gboolean reloading;	    /* a reload waits for its term's drain */
	gboolean reload_queued;	    /* another request came meanwhile: one more reload */
	gboolean term_wanted;	    /* leadership wants a term once the reload is applied */
	SflTerm *reload_term;	    /* the term the reload is draining */
	GPtrArray *reload_replies;  /* (element-type SflHealthReply): answered by this reload */
	GPtrArray *queued_replies;  /* answered by the queued one */
	SflConfig *reload_next;	    /* validated, applied when the drain ends */
	SflSink *reload_sink;	    /* the sink rebuilt for it, or NULL */
	GPtrArray *reload_changed;  /* the paths it applies */
	GPtrArray *reload_ignored;  /* the restart-only paths it changed */
	gboolean reload_egress;	    /* rebuild the governor */
	GPtrArray *pending_restart; /* restart-only paths differing from the start */
	gint64 loaded_at;	    /* wall clock, of the configuration in force */
	gchar *last_outcome;	    /* (nullable) */
	GStrv last_errors;	    /* (nullable): the last rejection's lines */
	SflMetricFamily *reloads_total;
	SflMetricFamily *config_info;
	SflSeries *config_info_series;
	gint64 started_at;	  /* monotonic */
	GCancellable *startup;	  /* cancelled by a stop during the start-up probe */
	GSource *finished_source; /* checks, on the loop, whether every source finished */
	gboolean failed;	  /* a runtime failure ends the run with exit 1 */
	GError *failure;
};

G_DEFINE_FINAL_TYPE(SflDaemon, sfl_daemon, G_TYPE_OBJECT)

static void
sfl_daemon_clear_grace(SflDaemon *self)
{
	sfl_clear_source(&self->grace_source);
}

/* one warning per failure; the log writer folds identical repeats (a failing watchdog) */
static void
sfl_daemon_notify(const gchar *state)
{
	SflPlatformError perr = { 0 };

	if (sfl_platform_notify(state, &perr) != SFL_PLATFORM_OK)
		g_warning("could not notify the service manager: %s", perr.message);
}

static void
sfl_daemon_finish(SflDaemon *self, const gchar *why)
{
	if (self->state == SFL_DAEMON_STATE_STOPPED)
		return;
	self->state = SFL_DAEMON_STATE_STOPPED;
	sfl_daemon_clear_grace(self);
	g_message("sf2loki stopped (%s)", why);
	g_main_loop_quit(self->loop);
}

static void
sfl_daemon_grace_cb(gpointer user_data)
{
	SflDaemon *self = user_data;
	g_autofree gchar *grace = sfl_duration_format(self->config->data.service.shutdown_grace);

	g_warning("shutdown grace of %s elapsed with %u component(s) still stopping; exiting",
		  grace, self->pending_stops);
	sfl_daemon_finish(self, "shutdown grace elapsed");
}

static void
sfl_daemon_leadership_stopped_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflDaemon *self = user_data;
	g_autoptr(GError) error = NULL;

	if (!sfl_leadership_stop_finish(SFL_LEADERSHIP(source), result, &error))
		g_warning("stopping leadership: %s", error->message);
	self->pending_stops--;
	if (self->pending_stops == 0 && self->state == SFL_DAEMON_STATE_STOPPING)
		sfl_daemon_finish(self, "stop requested");
}

static gboolean
sfl_daemon_stop_cb(gpointer user_data)
{
	SflDaemon *self = user_data;

	if (self->state == SFL_DAEMON_STATE_STOPPING) {
		g_warning("second stop request; exiting without waiting for the drain");
		sfl_daemon_finish(self, "second stop request");
		return G_SOURCE_CONTINUE;
	}
	if (self->state != SFL_DAEMON_STATE_RUNNING)
		return G_SOURCE_CONTINUE;

	self->state = SFL_DAEMON_STATE_STOPPING;
	g_message("stop requested; shutting down");
	if (self->startup != NULL)
		g_cancellable_cancel(self->startup);
	sfl_daemon_notify("STOPPING=1\nSTATUS=stopping");
	if (self->leadership != NULL) {
		/* gives up the lease (if held) after the run of this term stopped */
		self->pending_stops++;
		sfl_leadership_stop_async(self->leadership, sfl_daemon_leadership_stopped_cb, self);
	}
	if (self->pending_stops == 0) {
		sfl_daemon_finish(self, "stop requested");
		return G_SOURCE_CONTINUE;
	}
	{
		g_autoptr(SflClock) clock = sfl_clock_get_system();

		sfl_clock_once(clock, &self->grace_source,
			       self->config->data.service.shutdown_grace, "sf2loki shutdown grace",
			       sfl_daemon_grace_cb, self, self->context);
	}
	return G_SOURCE_CONTINUE;
}

static gboolean
sfl_daemon_watchdog_cb(gpointer user_data)
{
	sfl_daemon_notify("WATCHDOG=1");
	return G_SOURCE_CONTINUE;
}

/* returns the ping interval in ms, 0 when no watchdog is asked of us */
static guint64
sfl_daemon_start_watchdog(SflDaemon *self)
{
	guint64 usec = sfl_platform_watchdog_usec();
	guint64 interval_ms;

	if (usec == 0)
		return 0;
	/* half the interval: a ping delayed by one busy dispatch still beats the deadline */
	interval_ms = CLAMP(usec / 2 / 1000, 1, G_MAXUINT);
	self->watchdog_source = g_timeout_source_new((guint)interval_ms);
	g_source_set_callback(self->watchdog_source, sfl_daemon_watchdog_cb, self, NULL);
	g_source_attach(self->watchdog_source, self->context);
	g_debug("service manager watchdog: pinging every %" G_GUINT64_FORMAT " ms", interval_ms);
	return interval_ms;
}

/*
 * Stop requests from OS threads (the Windows SCM and console handlers) must only post to the
 * loop. They raise a counter and make this source ready; g_source_set_ready_time() takes the
 * context lock and wakes the loop, which is what GCancellable's source relies on when another
 * thread cancels. Nothing is allocated on the OS thread, and nothing outlives the daemon.
 */
static gboolean
sfl_daemon_os_stop_dispatch(GSource *source, GSourceFunc callback, gpointer user_data)
{
	g_source_set_ready_time(source, -1);
	return callback(user_data);
}

static GSourceFuncs sfl_daemon_os_stop_funcs = {
	.dispatch = sfl_daemon_os_stop_dispatch,
};

/* on an OS thread, with the platform layer's lock held */
static void
sfl_daemon_os_stop_cb(void *user_data)
{
	SflDaemon *self = user_data;

	g_atomic_int_inc(&self->os_stop_requests);
	g_source_set_ready_time(self->os_stop_source, 0);
}

/* on an OS thread (the SCM's PARAMCHANGE, the POSIX SIGHUP reader), with the platform layer's
 * lock held */
static void
sfl_daemon_os_reload_cb(void *user_data)
{
	SflDaemon *self = user_data;

	g_atomic_int_inc(&self->os_reload_requests);
	g_source_set_ready_time(self->os_stop_source, 0);
}

static void sfl_daemon_request_reload(SflDaemon *self, const gchar *trigger, SflHealthReply *reply);
static json_t *sfl_daemon_config_status(SflDaemon *self);
static void sfl_daemon_health_reload(gpointer user_data, SflHealthReply *reply);
static void sfl_daemon_gsettings_changed(gpointer user_data);

static gboolean
sfl_daemon_os_stop_requests_cb(gpointer user_data)
{
	SflDaemon *self = user_data;
	gint reloads = g_atomic_int_exchange(&self->os_reload_requests, 0);
	gint n = g_atomic_int_exchange(&self->os_stop_requests, 0);

	/* several signals before the loop woke are one reload: it reads the file as it is now */
	if (reloads > 0 && n == 0)
		sfl_daemon_request_reload(self, "SIGHUP or PARAMCHANGE", NULL);

	/* a second request, e.g. Ctrl-C pressed twice, still ends the drain at once */
	for (gint i = 0; i < n; i++)
		sfl_daemon_stop_cb(self);
	return G_SOURCE_CONTINUE;
}

static void
sfl_daemon_install_os_stop(SflDaemon *self)
{
	self->os_stop_source = g_source_new(&sfl_daemon_os_stop_funcs, sizeof(GSource));
	g_source_set_callback(self->os_stop_source, sfl_daemon_os_stop_requests_cb, self, NULL);
	g_source_attach(self->os_stop_source, self->context);
	sfl_platform_set_stop_handler(sfl_daemon_os_stop_cb, self);
	sfl_platform_set_reload_handler(sfl_daemon_os_reload_cb, self);
}

static void
sfl_daemon_remove_os_stop(SflDaemon *self)
{
	/* returns only when no callback runs any more, so the source can go */
	sfl_platform_set_reload_handler(NULL, NULL);
	sfl_platform_set_stop_handler(NULL, NULL);
	sfl_clear_source(&self->os_stop_source);
}

/*
 * What the service manager should know of the configuration: on Windows the drain's wait hint,
 * the preshutdown timeout and the recovery actions follow service.shutdown_grace. A service
 * account that may not change its own configuration keeps the installer's: never fatal.
 */
static void
sfl_daemon_configure_service(SflDaemon *self)
{
	SflPlatformServiceOptions options = {
		.shutdown_grace_ms =
			(guint64)MAX(self->config->data.service.shutdown_grace, 0) / 1000,
	};
	SflPlatformError perr = { 0 };
	SflPlatformStatus status = sfl_platform_service_configure(&options, &perr);

	if (status != SFL_PLATFORM_OK && status != SFL_PLATFORM_ERR_UNSUPPORTED)
		g_message("%s; the installer's settings stay in force "
			  "(docs/deployment/windows.md, \"Recovery\")",
			  perr.message);
}

static void
sfl_daemon_log_banner(SflConfig *config)
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

static void
sfl_daemon_pipeline_fenced_cb(SflPipeline *pipeline, SflLane lane, const GError *error,
			      gpointer user_data)
{
	SflDaemon *self = user_data;
	/*
	 * another replica leads: stand by in place, never exit
	 * (docs/architecture.md, "The daemon and its terms")
	 */
	sfl_leadership_handle_commit_error(self->leadership, error);
}

static void
sfl_daemon_pipeline_error_cb(SflPipeline *pipeline, SflLane lane, const GError *error,
			     gpointer user_data)
{
	SflDaemon *self = user_data;

	g_warning("the %s lane stopped: %s; exiting", sfl_lane_to_string(lane), error->message);
	if (self->failure == NULL)
		self->failure = g_error_copy(error);
	self->failed = TRUE;
	sfl_daemon_stop_cb(self);
}

static void
sfl_daemon_pipeline_committed_cb(SflPipeline *pipeline, const SflStateDoc *doc, gpointer user_data)
{
	SflDaemon *self = user_data;
	sfl_run_obs_committed(self->obs, doc, g_get_real_time());
}

/* the current term's pipeline, or NULL between terms */
static SflPipeline *
sfl_daemon_pipeline(SflDaemon *self)
{
	return self->term != NULL ? sfl_term_get_pipeline(self->term) : NULL;
}

static gboolean
sfl_daemon_finished_cb(gpointer user_data)
{
	SflDaemon *self = user_data;

	sfl_clear_source(&self->finished_source);
	if (self->state != SFL_DAEMON_STATE_RUNNING || self->term == NULL ||
	    !sfl_orgs_all_finished(self->orgs))
		return G_SOURCE_REMOVE;
	/*
	 * the original's pipeline ends when its sources do, and the process exits 0
	 * (docs/cli.md, "run")
	 */
	g_message("every source finished: nothing left to read; exiting (a finite run)");
	sfl_daemon_stop_cb(self);
	return G_SOURCE_REMOVE;
}

/* a source finished, maybe inside its own callback: look at all of them from the loop */
static void
sfl_daemon_source_finished(gpointer user_data)
{
	SflDaemon *self = user_data;

	if (self->finished_source != NULL)
		return;
	self->finished_source = g_idle_source_new();
	g_source_set_callback(self->finished_source, sfl_daemon_finished_cb, self, NULL);
	g_source_attach(self->finished_source, self->context);
}

static void sfl_daemon_reload_apply(SflDaemon *self);

/* one leadership term: a fresh pipeline run and fresh sources on every acquisition */
static void
sfl_daemon_begin_term(SflDaemon *self)
{
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	const SflPipelineCallbacks callbacks = {
		.error = sfl_daemon_pipeline_error_cb,
		.fenced = sfl_daemon_pipeline_fenced_cb,
		.committed = sfl_daemon_pipeline_committed_cb,
	};
	SflTermArgs args = {
		.config = self->config,
		.sink = self->sink,
		.store = self->store,
		.orgs = self->orgs,
		.metrics = self->metrics,
		.clock = clock,
		.context = self->context,
		.callbacks = &callbacks,
		.callback_data = self,
	};

	/* one governor for the whole process: the rate buckets carry over from term to term,
	 * and every term reads today's count from the store afresh */
	if (self->egress == NULL &&
	    sfl_egress_config_is_active(&self->config->data.sink.loki.egress)) {
		self->egress = sfl_egress_new(&self->config->data.sink.loki.egress, clock);
		sfl_egress_set_metrics(self->egress, self->metrics);
	}
	args.egress = self->egress;
	self->term = sfl_term_start(&args);
}

static void
sfl_daemon_start_term(SflLeadership *leadership, gpointer user_data)
{
	SflDaemon *self = user_data;

	/* a reload is between two terms: the next one starts with its configuration */
	if (self->reloading) {
		self->term_wanted = TRUE;
		return;
	}
	sfl_daemon_begin_term(self);
}

static void
sfl_daemon_term_stopped(SflTerm *term, const SflPipelineCounters *counters, gpointer user_data)
{
	SflDaemon *self = user_data;
	gboolean for_reload = term == self->reload_term;

	g_message("pipeline run stopped: %" G_GUINT64_FORMAT " entries pushed, %" G_GUINT64_FORMAT
		  " commits, %" G_GUINT64_FORMAT " abandoned uncommitted",
		  counters->pushed_entries, counters->commits, counters->abandoned_entries);
	/* frees the term, whose drain just ended */
	g_ptr_array_remove_fast(self->stopping_terms, term);
	self->pending_stops--;
	if (for_reload) {
		self->reload_term = NULL;
		sfl_daemon_reload_apply(self);
	}
	if (self->pending_stops == 0 && self->state == SFL_DAEMON_STATE_STOPPING)
		sfl_daemon_finish(self, "stop requested");
}

/* drains @self->term like a lost leadership would, without telling the coordinator */
static SflTerm *
sfl_daemon_drain_term(SflDaemon *self)
{
	SflTerm *term = g_steal_pointer(&self->term);

	if (term == NULL)
		return NULL;
	/* kept until its drain ends, or freed by the teardown if the grace ran out first */
	g_ptr_array_add(self->stopping_terms, term);
	self->pending_stops++;
	sfl_term_stop(term, self->config->data.service.shutdown_grace, sfl_daemon_term_stopped,
		      self);
	return term;
}

/* the term ended: drain what was accepted within the grace, commit it, abandon the rest */
static void
sfl_daemon_stop_term(SflLeadership *leadership, gpointer user_data)
{
	SflDaemon *self = user_data;

	/* lost while a reload drains: the reload must not start a term */
	if (self->reloading)
		self->term_wanted = FALSE;
	(void)sfl_daemon_drain_term(self);
}

static void
sfl_daemon_status_changed(SflLeadership *leadership, const gchar *status, gpointer user_data)
{
	g_autofree gchar *line = g_strdup_printf("STATUS=%s", status);
	sfl_daemon_notify(line);
}

static void
sfl_daemon_store_opened_cb(GObject *source, GAsyncResult *result, gpointer user_data)
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
sfl_daemon_open_store(SflDaemon *self, GError **error)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GAsyncResult) result = NULL;

	store = sfl_app_build_store(self->config, sfl_app_store_wants_exclusive(self->config),
				    error);
	if (store == NULL)
		return NULL;
	sfl_checkpoint_store_open_async(store, NULL, sfl_daemon_store_opened_cb, &result);
	while (result == NULL)
		g_main_context_iteration(self->context, TRUE);
	if (!sfl_checkpoint_store_open_finish(store, result, error)) {
		g_prefix_error(error, "cannot open the checkpoint store: ");
		return NULL;
	}
	g_message("checkpoint store ready (%s)",
		  sfl_config_enum_name("state.store", self->config->data.state.store));
	return g_steal_pointer(&store);
}

/* the first degradation reason (docs/operations/health.md): the budget pause comes first */
static gchar *
sfl_daemon_degraded(SflDaemon *self)
{
	gchar *reason = self->egress != NULL ? sfl_egress_dup_degraded(self->egress) : NULL;
	/* the pipeline's clock: its streaks are stamped on it, which g_get_monotonic_time() is
	 * not (it stops during a suspend, the platform's monotonic clock does not) */
	g_autoptr(SflClock) clock = sfl_clock_get_system();

	if (reason != NULL)
		return reason;
	return sfl_run_obs_degraded(
		self->obs, self->orgs != NULL ? sfl_orgs_get_auth_failing(self->orgs) : NULL,
		sfl_daemon_pipeline(self) != NULL
			? sfl_pipeline_get_failing_since(sfl_daemon_pipeline(self))
			: 0,
		sfl_daemon_pipeline(self) != NULL
			? sfl_pipeline_get_commit_failing_since(sfl_daemon_pipeline(self))
			: 0,
		sfl_clock_monotonic_usec(clock));
}

/* /readyz: ready only while this replica leads and runs its pipeline (docs/operations/health.md) */
static gboolean
sfl_daemon_health_ready(gpointer user_data, gchar **reason)
{
	SflDaemon *self = user_data;

	if (self->state != SFL_DAEMON_STATE_RUNNING) {
		*reason = g_strdup("not ready: stopping");
		return FALSE;
	}
	if (self->leadership == NULL) {
		*reason = g_strdup("not ready");
		return FALSE;
	}
	switch (sfl_leadership_get_readiness(self->leadership)) {
	case SFL_READINESS_READY:
		*reason = sfl_daemon_degraded(self);
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
sfl_daemon_refresh_gauges(gpointer user_data)
{
	SflDaemon *self = user_data;
	SflPipelineCounters counters = { 0 };

	if (self->term != NULL)
		sfl_pipeline_get_counters(sfl_term_get_pipeline(self->term), &counters);
	sfl_series_set(self->leader_gauge, self->term != NULL ? 1 : 0);
	sfl_series_set(self->queue_gauge, counters.queue_depth[SFL_LANE_BULK] +
						  counters.queue_depth[SFL_LANE_STREAMING]);
}

/* /metrics: the registry, with the gauges that describe the present refreshed first */
static gchar *
sfl_daemon_health_metrics(gpointer user_data)
{
	SflDaemon *self = user_data;

	sfl_daemon_refresh_gauges(self);
	return sfl_metrics_render_prometheus(self->metrics);
}

/* the instruments the run itself owns; components register theirs when they start */
static void sfl_daemon_set_config_info(SflDaemon *self);

static void
sfl_daemon_init_metrics(SflDaemon *self)
{
	const gchar *version[] = { "version", NULL };
	static const gchar *const outcomes[] = { "applied", "rejected", "unchanged" };
	SflMetricFamily *build_info = NULL;

	self->metrics = sfl_metrics_new();
	self->obs = sfl_run_obs_new(self->config, self->metrics);
	build_info = sfl_metrics_gauge(self->metrics, "sf2loki_build_info",
				       "Always 1; the version is a label.", version);
	sfl_series_set(sfl_metric_family_series(build_info, (const gchar *[]){ PACKAGE_VERSION }),
		       1);
	self->leader_gauge = sfl_metric_family_series(
		sfl_metrics_gauge(self->metrics, "sf2loki_leader",
				  "1 while this replica leads and runs the pipeline, else 0.",
				  NULL),
		NULL);
	self->queue_gauge =
		sfl_metric_family_series(sfl_metrics_gauge(self->metrics, "sf2loki_queue_depth",
							   "Entries queued in both lanes.", NULL),
					 NULL);
	/* exported (at 0) without a governor too, so dashboards and alerts see a series */
	sfl_egress_register_metrics(self->metrics, NULL, NULL);
	self->reloads_total = sfl_metrics_counter(self->metrics, "sf2loki_config_reloads",
						  "Configuration reloads by outcome: applied, "
						  "rejected (the old one stays), unchanged.",
						  (const gchar *[]){ "outcome", NULL });
	/* every outcome at 0 from the start, so an alert on "rejected" has a series to watch */
	for (gsize i = 0; i < G_N_ELEMENTS(outcomes); i++)
		(void)sfl_metric_family_series(self->reloads_total,
					       (const gchar *[]){ outcomes[i] });
	self->config_info =
		sfl_metrics_gauge(self->metrics, "sf2loki_config_info",
				  "Always 1; the hash of the configuration in force is a label.",
				  (const gchar *[]){ "hash", NULL });
	sfl_daemon_set_config_info(self);
}

/* --- OTLP push (service.telemetry, docs/operations/metrics.md): every export_interval ------- */

static SflOtlpExporter *
sfl_daemon_start_otlp(SflDaemon *self, SflCurlLoop *loop, GError **error)
{
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	SflOtlpExporter *otlp = sfl_otlp_exporter_new(loop, self->metrics, clock,
						      &self->config->data.service.telemetry,
						      &self->config->data.sink.loki, error);

	if (otlp == NULL) {
		g_prefix_error(error, "cannot set up the OTLP metrics push: ");
		return NULL;
	}
	sfl_otlp_exporter_set_refresh(otlp, sfl_daemon_refresh_gauges, self);
	sfl_otlp_exporter_start(otlp);
	return otlp;
}

static void
sfl_daemon_otlp_flushed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
}

/* the final export, once the pipeline stopped and its counts are final; bounded by the
 * exporter's request deadline */
static void
sfl_daemon_stop_otlp(SflDaemon *self, SflOtlpExporter *otlp)
{
	gboolean done = FALSE;

	sfl_otlp_exporter_shutdown_async(otlp, sfl_daemon_otlp_flushed_cb, &done);
	while (!done)
		g_main_context_iteration(self->context, TRUE);
	sfl_otlp_exporter_free(otlp);
}

/* the governor's limits and today's count; "enforced" is false when no limit is set */
static json_t *
sfl_daemon_egress_status(SflDaemon *self)
{
	const SflLokiEgressConfig *config = &self->config->data.sink.loki.egress;
	SflEgressStatus status = { 0 };

	if (self->egress != NULL)
		sfl_egress_get_status(self->egress, &status);
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
sfl_daemon_health_status(gpointer user_data)
{
	SflDaemon *self = user_data;
	SflPipelineCounters c = { 0 };
	json_t *doc = json_object();
	json_t *pipeline = NULL;
	gchar *text = NULL;

	json_object_set_new(doc, "version", json_string(PACKAGE_VERSION));
	json_object_set_new(
		doc, "uptime_seconds",
		json_integer((g_get_monotonic_time() - self->started_at) / G_USEC_PER_SEC));
	json_object_set_new(
		doc, "readiness",
		json_string(self->leadership != NULL
				    ? sfl_readiness_to_string(
					      sfl_leadership_get_readiness(self->leadership))
				    : "starting"));
	/* the coordinator is built before the start-up probe; it is shown once it is contested */
	if (self->leadership != NULL) {
		const gchar *holder = sfl_coordinator_get_holder(self->coordinator);
		json_object_set_new(
			doc, "leadership",
			json_pack("{s:s?, s:I, s:b}", "holder", holder, "epoch",
				  (json_int_t)sfl_coordinator_get_epoch(self->coordinator),
				  "leader", self->term != NULL));
	}
	if (self->term != NULL) {
		sfl_pipeline_get_counters(sfl_term_get_pipeline(self->term), &c);
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
			    self->orgs != NULL ? sfl_orgs_status(self->orgs) : json_array());
	json_object_set_new(doc, "checkpoints",
			    sfl_run_obs_checkpoints(self->obs, g_get_real_time()));
	{
		g_autofree gchar *degraded = NULL;
		gint64 failing = sfl_daemon_pipeline(self) != NULL
					 ? sfl_pipeline_get_failing_since(sfl_daemon_pipeline(self))
					 : 0;
		g_autoptr(SflClock) clock = sfl_clock_get_system();
		gint64 now = sfl_clock_monotonic_usec(clock);

		degraded = sfl_daemon_degraded(self);
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
		json_object_set_new(doc, "egress", sfl_daemon_egress_status(self));
	}
	json_object_set_new(doc, "config", sfl_daemon_config_status(self));
	text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(doc);
	return text;
}

static void
sfl_daemon_probe_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	GAsyncResult **out = user_data;
	*out = g_object_ref(result);
}

/*
 * Builds the Salesforce side and proves the credentials work before READY: a wrong key or
 * secret fails the start (exit 1) instead of a service that is "up" and ingests nothing.
 */
static SflOrgs *
sfl_daemon_start_orgs(SflDaemon *self, SflCurlLoop *loop, GError **error)
{
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflOrgs) orgs = sfl_orgs_new(self->config, loop, clock, error);
	g_autoptr(GAsyncResult) result = NULL;

	if (orgs == NULL)
		return NULL;
	sfl_orgs_set_metrics(orgs, self->metrics);
	self->startup = g_cancellable_new();
	sfl_orgs_probe_async(orgs, self->startup, sfl_daemon_probe_cb, &result);
	while (result == NULL)
		g_main_context_iteration(self->context, TRUE);
	g_clear_object(&self->startup);
	if (!sfl_orgs_probe_finish(orgs, result, error)) {
		g_prefix_error(error, "Salesforce start-up check failed: ");
		return NULL;
	}
	return g_steal_pointer(&orgs);
}

/* --- live reload (docs/configuration.md, "Live reload") ----------------------------------- */

/* @path is @prefix or lies under it ("a.b" under "a", "a[0].b" under "a") */
static gboolean
sfl_daemon_path_under(const gchar *path, const gchar *prefix)
{
	gsize n = strlen(prefix);

	return strncmp(path, prefix, n) == 0 &&
	       (path[n] == '\0' || path[n] == '.' || path[n] == '[');
}

/*
 * What a term cannot absorb: whatever the daemon built once at start-up and a term only
 * borrows (the store, the coordinator, the health server, the OTLP push, the token
 * providers and REST clients, the log format, the label guard, the degradation thresholds).
 */
static gboolean
sfl_daemon_path_needs_restart(const gchar *path, gboolean same_orgs)
{
	static const gchar *const restart_only[] = {
		"state",
		"coordinate",
		"salesforce",
		"service.health_addr",
		"service.telemetry",
		"service.log_format",
		"service.config_sources",
		"service.gsettings_keyfile",
		"service.unready_after_sink_failing",
		"sink.loki.label_cardinality",
	};

	for (gsize i = 0; i < G_N_ELEMENTS(restart_only); i++)
		if (sfl_daemon_path_under(path, restart_only[i]))
			return TRUE;
	if (!g_str_has_prefix(path, "orgs"))
		return FALSE;
	/* an org added, removed or renamed needs its token provider: a restart */
	if (!same_orgs)
		return TRUE;
	{
		const gchar *rest = strchr(path, ']');
		return rest != NULL &&
		       (g_str_has_prefix(rest, "].salesforce") || g_str_has_prefix(rest, "].name"));
	}
}

static void
sfl_daemon_finish_replies(GPtrArray *replies, guint status, const gchar *body)
{
	for (guint i = 0; i < replies->len; i++)
		sfl_health_reply_finish(g_ptr_array_index(replies, i), status, body);
	g_ptr_array_set_size(replies, 0);
}

static json_t *
sfl_daemon_strings_json(const GPtrArray *paths)
{
	json_t *array = json_array();

	for (guint i = 0; paths != NULL && i < paths->len; i++)
		json_array_append_new(array, json_string(g_ptr_array_index(paths, i)));
	return array;
}

static gchar *
sfl_daemon_join_paths(const GPtrArray *paths)
{
	g_autoptr(GString) text = g_string_new(NULL);

	for (guint i = 0; paths != NULL && i < paths->len; i++)
		g_string_append_printf(text, "%s%s", i ? ", " : "",
				       (const gchar *)g_ptr_array_index(paths, i));
	if (text->len == 0)
		g_string_append(text, "none");
	return g_string_free(g_steal_pointer(&text), FALSE);
}

static void
sfl_daemon_set_config_info(SflDaemon *self)
{
	g_autofree gchar *hash = sfl_config_dup_hash(self->config);

	/* one series at 1: the previous hash drops to 0 (the registry keeps its series) */
	if (self->config_info_series != NULL)
		sfl_series_set(self->config_info_series, 0);
	self->config_info_series =
		sfl_metric_family_series(self->config_info, (const gchar *[]){ hash });
	sfl_series_set(self->config_info_series, 1);
}

/*
 * One line per reload, and its answer to every `sf2loki reload` waiting on it. Paths only:
 * values, secrets included, never reach the log or the reply.
 */
static void
sfl_daemon_reload_done(SflDaemon *self, const gchar *outcome, const GPtrArray *changed,
		       const GPtrArray *ignored, const GError *error)
{
	g_autofree gchar *changed_text = sfl_daemon_join_paths(changed);
	g_autofree gchar *ignored_text = sfl_daemon_join_paths(ignored);
	g_autofree gchar *body = NULL;
	g_autofree gchar *hash = sfl_config_dup_hash(self->config);
	json_t *doc = NULL;
	json_t *errors = json_array();

	sfl_series_inc(sfl_metric_family_series(self->reloads_total, (const gchar *[]){ outcome }));
	g_free(self->last_outcome);
	self->last_outcome = g_strdup(outcome);
	g_clear_pointer(&self->last_errors, g_strfreev);
	if (error != NULL) {
		g_autofree gchar *redacted = sfl_redact(error->message);

		self->last_errors = g_strsplit(redacted, "\n", -1);
		/* every line, so the operator sees each key that is wrong */
		for (guint i = 0; self->last_errors[i] != NULL; i++) {
			g_warning("configuration reload rejected: %s", self->last_errors[i]);
			json_array_append_new(errors, json_string(self->last_errors[i]));
		}
		g_log_structured(G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "RELOAD_OUTCOME", outcome,
				 "MESSAGE",
				 "configuration reload rejected; the running configuration stays "
				 "in force");
	} else {
		g_log_structured(G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "RELOAD_OUTCOME", outcome,
				 "CONFIG_HASH", hash, "MESSAGE",
				 "configuration reload %s: changed %s; ignored until restart %s",
				 outcome, changed_text, ignored_text);
	}
	doc = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "outcome", outcome, "hash", hash,
			"changed", sfl_daemon_strings_json(changed), "ignored_until_restart",
			sfl_daemon_strings_json(ignored), "pending_restart",
			sfl_daemon_strings_json(self->pending_restart), "errors", errors);
	body = json_dumps(doc, JSON_SORT_KEYS);
	json_decref(doc);
	/* 422: the request was understood and the configuration is wrong */
	sfl_daemon_finish_replies(self->reload_replies, error != NULL ? 422 : 200, body);
}

static void sfl_daemon_reload_begin(SflDaemon *self);

/* the queued request, if any, is the next reload: its replies wait on it */
static void
sfl_daemon_reload_next(SflDaemon *self)
{
	if (!self->reload_queued)
		return;
	self->reload_queued = FALSE;
	g_ptr_array_extend_and_steal(self->reload_replies, g_steal_pointer(&self->queued_replies));
	self->queued_replies = g_ptr_array_new();
	sfl_daemon_reload_begin(self);
}

/* the watch follows the configuration in force: a keyfile created since the start is watched */
static gboolean
sfl_daemon_rewatch_cb(gpointer user_data)
{
	SflDaemon *self = user_data;

	sfl_clear_source(&self->rewatch_source);
	g_clear_pointer(&self->watch, sfl_config_watch_free);
	self->watch = sfl_config_watch_new(self->config, self->context,
					   sfl_daemon_gsettings_changed, self);
	return G_SOURCE_REMOVE;
}

/* from the loop, never inside the watch's own signal, which a reload may be running in */
static void
sfl_daemon_rewatch(SflDaemon *self)
{
	if (self->rewatch_source != NULL)
		return;
	self->rewatch_source = g_idle_source_new();
	g_source_set_callback(self->rewatch_source, sfl_daemon_rewatch_cb, self, NULL);
	g_source_attach(self->rewatch_source, self->context);
}

/* between terms: swap in what the reload validated, then the leader's next term starts */
static void
sfl_daemon_reload_apply(SflDaemon *self)
{
	SflConfig *next = g_steal_pointer(&self->reload_next);
	g_autoptr(GPtrArray) changed = g_steal_pointer(&self->reload_changed);
	g_autoptr(GPtrArray) ignored = g_steal_pointer(&self->reload_ignored);

	if (self->reload_sink != NULL) {
		g_clear_object(&self->sink);
		self->sink = g_steal_pointer(&self->reload_sink);
	}
	/* the next term builds the governor from the new limits; today's count is in the store */
	if (self->reload_egress)
		g_clear_object(&self->egress);
	self->reload_egress = FALSE;
	if (sfl_app_log_level(next) != sfl_app_log_level(self->config))
		sfl_log_setup((SflLogFormat)self->started->data.service.log_format,
			      sfl_app_log_level(next));
	if (sfl_orgs_same_orgs(self->started, next))
		sfl_orgs_rebind(self->orgs, next);
	g_ptr_array_add(self->configs, next);
	self->config = next;
	self->loaded_at = g_get_real_time();
	sfl_daemon_rewatch(self);
	self->reloading = FALSE;
	sfl_daemon_set_config_info(self);
	sfl_daemon_reload_done(self, "applied", changed, ignored, NULL);
	/* same coordinator, same epoch: leadership never noticed the gap */
	if (self->term_wanted && self->state == SFL_DAEMON_STATE_RUNNING && self->term == NULL)
		sfl_daemon_begin_term(self);
	self->term_wanted = FALSE;
	sfl_daemon_reload_next(self);
}

/* loads and validates everything offline; nothing of the running service changes yet */
static SflConfig *
sfl_daemon_reload_load(SflDaemon *self, GError **error)
{
	g_autoptr(SflConfig) next = sfl_config_load(self->config_path, self->envp, error);
	g_autofree gchar *no_source = NULL;

	if (next == NULL || !sfl_orgs_check_config(next, error))
		return NULL;
	no_source = sfl_app_dup_no_source_reason(next);
	if (no_source != NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "%s: a reload keeps the service running, so it needs a source",
			    no_source);
		return NULL;
	}
	return g_steal_pointer(&next);
}

static void
sfl_daemon_reload_begin(SflDaemon *self)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) next = sfl_daemon_reload_load(self, &error);
	g_autoptr(GPtrArray) diff = NULL;
	g_autoptr(GPtrArray) since_start = NULL;
	g_autoptr(GPtrArray) pending = NULL;
	g_autoptr(GPtrArray) changed = NULL;
	g_autoptr(GPtrArray) ignored = NULL;
	gboolean same_orgs = FALSE;
	gboolean rebuild_sink = FALSE;

	if (next == NULL) {
		sfl_daemon_reload_done(self, "rejected", NULL, NULL, error);
		sfl_daemon_reload_next(self);
		return;
	}
	diff = sfl_config_diff(self->config, next);
	/* a keyfile that appeared, still empty, is a layer to watch from now on */
	if (diff->len == 0 && self->config->gsettings == NULL && next->gsettings != NULL) {
		g_ptr_array_add(self->configs, g_steal_pointer(&next));
		self->config = g_ptr_array_index(self->configs, self->configs->len - 1);
		sfl_daemon_rewatch(self);
	}
	if (diff->len == 0) {
		sfl_daemon_reload_done(self, "unchanged", NULL, NULL, NULL);
		sfl_daemon_reload_next(self);
		return;
	}
	same_orgs = sfl_orgs_same_orgs(self->started, next);
	changed = g_ptr_array_new_with_free_func(g_free);
	ignored = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < diff->len; i++) {
		const gchar *path = g_ptr_array_index(diff, i);

		if (sfl_daemon_path_needs_restart(path, same_orgs)) {
			g_ptr_array_add(ignored, g_strdup(path));
			continue;
		}
		g_ptr_array_add(changed, g_strdup(path));
		if (sfl_daemon_path_under(path, "sink.loki.egress"))
			self->reload_egress = TRUE;
		else if (sfl_daemon_path_under(path, "sink"))
			rebuild_sink = TRUE;
	}
	/* against the start: a change reverted is no longer pending */
	since_start = sfl_config_diff(self->started, next);
	pending = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < since_start->len; i++)
		if (sfl_daemon_path_needs_restart(g_ptr_array_index(since_start, i), same_orgs))
			g_ptr_array_add(pending, g_strdup(g_ptr_array_index(since_start, i)));
	if (rebuild_sink) {
		self->reload_sink = sfl_app_build_sink(next, self->curl_loop, 0, &error);
		if (self->reload_sink == NULL) {
			g_prefix_error(&error, "sink.loki: ");
			self->reload_egress = FALSE;
			sfl_daemon_reload_done(self, "rejected", NULL, NULL, error);
			sfl_daemon_reload_next(self);
			return;
		}
	}
	g_ptr_array_unref(self->pending_restart);
	self->pending_restart = g_steal_pointer(&pending);
	self->reload_next = g_steal_pointer(&next);
	self->reload_changed = g_steal_pointer(&changed);
	self->reload_ignored = g_steal_pointer(&ignored);
	self->reloading = TRUE;
	/*
	 * A leader drains and commits its term first, as a stop would, but keeps the lease: the
	 * coordinator's renewals go on, and the next term starts under the same epoch. With no
	 * term running (standby, or the epoch still being recorded) the swap is immediate and the
	 * next acquisition uses it.
	 */
	if (self->reload_changed->len > 0 && self->term != NULL) {
		self->term_wanted = TRUE;
		g_message("configuration reload: draining the current term before applying");
		self->reload_term = sfl_daemon_drain_term(self);
		return;
	}
	sfl_daemon_reload_apply(self);
}

/* every trigger ends here, on the loop: a signal, PARAMCHANGE, GSettings, POST /-/reload */
static void
sfl_daemon_request_reload(SflDaemon *self, const gchar *trigger, SflHealthReply *reply)
{
	if (self->state != SFL_DAEMON_STATE_RUNNING || self->leadership == NULL) {
		g_message("configuration reload requested (%s) while %s; ignored", trigger,
			  self->state == SFL_DAEMON_STATE_RUNNING ? "starting" : "stopping");
		if (reply != NULL)
			sfl_health_reply_finish(
				reply, 503,
				"{\"outcome\": \"refused\", \"errors\": [\"the service is not "
				"running\"]}");
		return;
	}
	g_message("configuration reload requested (%s)", trigger);
	if (self->reloading) {
		/* one more reload after this one reads whatever the file says by then */
		self->reload_queued = TRUE;
		if (reply != NULL)
			g_ptr_array_add(self->queued_replies, reply);
		return;
	}
	if (reply != NULL)
		g_ptr_array_add(self->reload_replies, reply);
	sfl_daemon_reload_begin(self);
}

static void
sfl_daemon_health_reload(gpointer user_data, SflHealthReply *reply)
{
	sfl_daemon_request_reload(user_data, "control path", reply);
}

static void
sfl_daemon_gsettings_changed(gpointer user_data)
{
	sfl_daemon_request_reload(user_data, "GSettings changed", NULL);
}

/* /statusz's "config": what is in force, since when, and what waits for a restart */
static json_t *
sfl_daemon_config_status(SflDaemon *self)
{
	g_autofree gchar *hash = sfl_config_dup_hash(self->config);
	g_autoptr(GDateTime) at = g_date_time_new_from_unix_utc(self->loaded_at / G_USEC_PER_SEC);
	g_autofree gchar *loaded_at = g_date_time_format_iso8601(at);
	json_t *errors = json_array();

	for (guint i = 0; self->last_errors != NULL && self->last_errors[i] != NULL; i++)
		json_array_append_new(errors, json_string(self->last_errors[i]));
	return json_pack("{s:s, s:s?, s:s, s:o, s:s?, s:o}", "hash", hash, "path",
			 self->config_path, "loaded_at", loaded_at, "pending_restart",
			 sfl_daemon_strings_json(self->pending_restart), "last_reload",
			 self->last_outcome, "last_errors", errors);
}

/* --- one teardown ---------------------------------------------------------------------- */

static void
sfl_daemon_dispose(GObject *object)
{
	SflDaemon *self = SFL_DAEMON(object);

	sfl_clear_source(&self->rewatch_source);
	g_clear_pointer(&self->watch, sfl_config_watch_free);
	/* nobody waits on a reload any more: the answer is that the service stopped */
	if (self->reload_replies != NULL) {
		const gchar *body =
			"{\"outcome\": \"refused\", \"errors\": [\"the service stopped\"]}";
		sfl_daemon_finish_replies(self->reload_replies, 503, body);
		sfl_daemon_finish_replies(self->queued_replies, 503, body);
	}
	g_clear_object(&self->reload_sink);
	/* a final OTLP export belongs to an orderly stop (sfl_daemon_run()); here it is dropped */
	g_clear_pointer(&self->otlp, sfl_otlp_exporter_free);
	/* a term is stopped by its leadership's end; one left here only lets go of its sources */
	g_clear_pointer(&self->term, sfl_term_free);
	g_clear_pointer(&self->stopping_terms, g_ptr_array_unref);
	g_clear_object(&self->leadership);
	g_clear_object(&self->coordinator);
	g_clear_pointer(&self->orgs, sfl_orgs_free);
	g_clear_object(&self->sink);
	g_clear_object(&self->curl_loop);
	/* the lock goes when the store does; let its worker tasks and the cancelled transfers
	 * finish before the loop's own sources go */
	g_clear_object(&self->store);
	while (self->context != NULL && g_main_context_iteration(self->context, FALSE))
		;
	g_clear_pointer(&self->health, sfl_health_server_free);
	g_clear_pointer(&self->obs, sfl_run_obs_free);
	g_clear_object(&self->egress);
	g_clear_pointer(&self->metrics, sfl_metrics_unref);
	if (self->os_stop_source != NULL)
		sfl_daemon_remove_os_stop(self);
	if (self->stop_sources != NULL) {
		for (guint i = 0; i < self->stop_sources->len; i++)
			g_source_destroy(g_ptr_array_index(self->stop_sources, i));
		g_clear_pointer(&self->stop_sources, g_ptr_array_unref);
	}
	sfl_clear_source(&self->watchdog_source);
	sfl_clear_source(&self->finished_source);
	sfl_daemon_clear_grace(self);
	if (self->context != NULL) {
		g_clear_pointer(&self->loop, g_main_loop_unref);
		g_clear_pointer(&self->context, g_main_context_unref);
		sfl_log_flush_repeats();
	}
	G_OBJECT_CLASS(sfl_daemon_parent_class)->dispose(object);
}

static void
sfl_daemon_finalize(GObject *object)
{
	SflDaemon *self = SFL_DAEMON(object);

	g_clear_error(&self->failure);
	g_clear_pointer(&self->reload_replies, g_ptr_array_unref);
	g_clear_pointer(&self->queued_replies, g_ptr_array_unref);
	g_clear_pointer(&self->reload_changed, g_ptr_array_unref);
	g_clear_pointer(&self->reload_ignored, g_ptr_array_unref);
	g_clear_pointer(&self->pending_restart, g_ptr_array_unref);
	g_clear_pointer(&self->reload_next, sfl_config_free);
	/* last: everything built from them is gone */
	g_clear_pointer(&self->configs, g_ptr_array_unref);
	g_clear_pointer(&self->last_errors, g_strfreev);
	g_free(self->last_outcome);
	g_free(self->config_path);
	g_strfreev(self->envp);
	G_OBJECT_CLASS(sfl_daemon_parent_class)->finalize(object);
}

static void
sfl_daemon_class_init(SflDaemonClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = sfl_daemon_dispose;
	object_class->finalize = sfl_daemon_finalize;
}

static void
sfl_daemon_init(SflDaemon *self)
{
	self->state = SFL_DAEMON_STATE_RUNNING;
	self->stopping_terms = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_term_free);
	self->configs = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_config_free);
	self->reload_replies = g_ptr_array_new();
	self->queued_replies = g_ptr_array_new();
	self->pending_restart = g_ptr_array_new_with_free_func(g_free);
}

/**
 * sfl_daemon_new:
 * @config: a loaded configuration; must outlive the daemon
 * @install_stop_handlers: (nullable): the OS's stop requests (SIGTERM/SIGINT, an SCM stop)
 *
 * Returns: (transfer full): a daemon for the thread-default main context, not yet running
 */
SflDaemon *
sfl_daemon_new(SflConfig *config, SflDaemonStopHandlersFunc install_stop_handlers)
{
	SflDaemon *self = NULL;

	g_return_val_if_fail(config != NULL, NULL);

	self = g_object_new(SFL_TYPE_DAEMON, NULL);
	self->config = config;
	self->started = config;
	/* a reload reads the same file under the same environment as this start did */
	self->config_path = g_strdup(config->path);
	self->envp = g_get_environ();
	self->loaded_at = g_get_real_time();
	self->install_stop_handlers = install_stop_handlers;
	self->context = g_main_context_ref_thread_default();
	self->loop = g_main_loop_new(self->context, FALSE);
	return self;
}

/* the start-up, in order; FALSE with @error set stops it (dispose releases what it built) */
static gboolean
sfl_daemon_start(SflDaemon *self, GError **error)
{
	const SflConfig *config = self->config;
	const SflHealthCallbacks health = {
		.ready = sfl_daemon_health_ready,
		.metrics = sfl_daemon_health_metrics,
		.status = sfl_daemon_health_status,
		.reload = sfl_daemon_health_reload,
	};

	self->started_at = g_get_monotonic_time();
	sfl_daemon_init_metrics(self);
	self->health =
		sfl_health_server_new(config->data.service.health_addr, &health, self, error);
	if (self->health == NULL)
		return FALSE;
	g_message("health server listening on %s (port %u): /healthz /readyz /metrics /statusz",
		  config->data.service.health_addr, sfl_health_server_get_port(self->health));

	/*
	 * start-up: the sink, coordinator and sources start here as they arrive, after the
	 * checkpoint store. A failure returns before READY=1, so the service manager records a
	 * failed start (and systemd's RestartPreventExitStatus=2 keeps a configuration error from
	 * looping).
	 */
	self->store = sfl_daemon_open_store(self, error);
	if (self->store == NULL)
		return FALSE;
	/* a stop that arrived during start-up already finished the run: honour it */
	if (self->state != SFL_DAEMON_STATE_RUNNING)
		return TRUE;

	/*
	 * one curl loop for every HTTP client of the process, the coordinator's included; its
	 * trust is SSL_CERT_FILE / SSL_CERT_DIR over the system store, and sink.loki.ca_file
	 * stays with the Loki sink's own requests
	 */
	self->curl_loop = sfl_curl_loop_new();
	self->coordinator = sfl_app_build_coordinator(config, self->curl_loop, error);
	if (self->coordinator == NULL)
		return FALSE;
	self->sink = sfl_app_build_sink(config, self->curl_loop, 0, error);
	if (self->sink == NULL) {
		g_prefix_error(error, "cannot set up the Loki sink: ");
		return FALSE;
	}
	if (config->data.service.telemetry.enabled) {
		self->otlp = sfl_daemon_start_otlp(self, self->curl_loop, error);
		if (self->otlp == NULL)
			return FALSE;
	}
	self->orgs = sfl_daemon_start_orgs(self, self->curl_loop, error);
	if (self->orgs == NULL)
		return FALSE;
	sfl_orgs_set_finished_func(self->orgs, sfl_daemon_source_finished, self);
	self->leadership = sfl_leadership_new(self->store, self->coordinator,
					      sfl_app_coordinator_is_fenced(config));
	sfl_leadership_set_hooks(self->leadership, sfl_daemon_start_term, sfl_daemon_stop_term,
				 sfl_daemon_status_changed, self);
	sfl_leadership_start(self->leadership);
	self->watch = sfl_config_watch_new(self->started, self->context,
					   sfl_daemon_gsettings_changed, self);
	return TRUE;
}

/**
 * sfl_daemon_run:
 * @self: a daemon
 * @error: return location for an error
 *
 * Runs the service on the thread-default main context until a stop request. A configuration
 * with no enabled source returns at once, after saying why.
 *
 * Returns: %TRUE after a clean stop (a stop during start-up included)
 */
gboolean
sfl_daemon_run(SflDaemon *self, GError **error)
{
	g_autoptr(GError) local = NULL;
	g_autofree gchar *no_source = NULL;

	g_return_val_if_fail(SFL_IS_DAEMON(self), FALSE);
	g_return_val_if_fail(self->leadership == NULL && self->stop_sources == NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (self->install_stop_handlers != NULL)
		self->stop_sources =
			self->install_stop_handlers(self->context, sfl_daemon_stop_cb, self);
	sfl_daemon_install_os_stop(self);

	sfl_daemon_log_banner(self->config);
	/* after the banner, so a warning about it follows the line naming the version */
	sfl_daemon_configure_service(self);
	/*
	 * Nothing to ingest: the original's pipeline ends at once and the process exits 0 (a
	 * finite run, docs/cli.md, "run"). Under a coordinator too: leading would change nothing,
	 * so every replica ends here without contesting the lease or opening the store.
	 */
	if (!sfl_orgs_check_config(self->config, error))
		return FALSE;
	no_source = sfl_app_dup_no_source_reason(self->config);
	if (no_source != NULL) {
		g_warning("%s: nothing to ingest; exiting", no_source);
		g_message("sf2loki stopped (no enabled source)");
		return TRUE;
	}
	if (!sfl_daemon_start(self, &local)) {
		/* a stop during the Salesforce probe is a clean stop */
		if (self->state != SFL_DAEMON_STATE_RUNNING &&
		    g_error_matches(local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			return TRUE;
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	if (self->leadership == NULL)
		return TRUE;

	g_message("ready; contesting leadership");
	{
		/* the READY status says whether pings follow, so nobody has to wait to find out */
		guint64 ping_ms = sfl_daemon_start_watchdog(self);
		g_autofree gchar *ready =
			ping_ms > 0 ? g_strdup_printf(
					      "READY=1\nSTATUS=started; contesting "
					      "leadership; watchdog ping every %" G_GUINT64_FORMAT
					      " ms",
					      ping_ms)
				    : g_strdup("READY=1\nSTATUS=started; contesting leadership; "
					       "watchdog off");
		sfl_daemon_notify(ready);
	}
	g_main_loop_run(self->loop);
	/* the final export, once the pipeline stopped and its counts are final */
	if (self->otlp != NULL)
		sfl_daemon_stop_otlp(self, g_steal_pointer(&self->otlp));
	if (self->failed) {
		if (self->failure != NULL)
			g_propagate_error(error, g_steal_pointer(&self->failure));
		else
			g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INTERNAL, "the run failed");
		return FALSE;
	}
	return TRUE;
}
