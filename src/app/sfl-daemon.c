/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* the run's log domain, kept from before the daemon object owned the lifecycle */
#define G_LOG_DOMAIN "SflRun"

#include "config.h"

#include "sfl-daemon.h"

#include "sfl-app.h"
#include "sfl-curl-loop.h"
#include "sfl-egress.h"
#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-health-server.h"
#include "sfl-kinds.h"
#include "sfl-leadership.h"
#include "sfl-sharding.h"
#include "sfl-term.h"
#include "sfl-log.h"
#include "sfl-metrics.h"
#include "sfl-orgs.h"
#include "sfl-otlp.h"
#include "sfl-pipeline.h"
#include "sfl-platform.h"
#include "sfl-redact.h"
#include "sfl-reload.h"
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
	 * the last one a reload applied (owned by @reload, which outlives everything built from
	 * it): the components built once keep reading the one they were built from, and a term
	 * borrows its own
	 */
	SflConfig *config;
	const SflConfig *started; /* the caller's: what the restart-only parts were built from */
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
	SflSharding *sharding;	   /* coordinate.sharding: in place of the leadership */
	SflTerm *term;		   /* the current leadership term, or NULL */
	GPtrArray *stopping_terms; /* ended terms still draining */
	SflEgress *egress;	   /* sink.loki.egress, shared by every term; NULL when unset */
	SflDeadletter *deadletter; /* state.deadletter; NULL when off */
	SflHealthServer *health;
	SflMetrics *metrics;
	SflSeries *leader_gauge;
	SflSeries *queue_gauge;
	SflRunObs *obs; /* commit-derived gauges, positions, degradation */
	/* live reload (docs/configuration.md, "Live reload") */
	SflReload *reload;
	gboolean term_wanted;	  /* leadership wants a term once the reload is applied */
	SflTerm *reload_term;	  /* the term the reload is draining */
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

static gboolean sfl_daemon_start_sharding(SflDaemon *self, GError **error);

static void
sfl_daemon_sharding_stopped_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflDaemon *self = user_data;
	g_autoptr(GError) error = NULL;

	if (!sfl_sharding_stop_finish(self->sharding, result, &error))
		g_warning("leaving the sharded group: %s", error->message);
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
	if (self->sharding != NULL) {
		/* every unit drains and commits, then its lease goes */
		self->pending_stops++;
		sfl_sharding_stop_async(self->sharding, sfl_daemon_sharding_stopped_cb, self);
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
static void sfl_daemon_health_reload(gpointer user_data, SflHealthReply *reply);

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
	args.deadletter = self->deadletter;
	self->term = sfl_term_start(&args);
}

static void
sfl_daemon_start_term(SflLeadership *leadership, gpointer user_data)
{
	SflDaemon *self = user_data;

	/* a reload is between two terms: the next one starts with its configuration */
	if (sfl_reload_is_busy(self->reload)) {
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
		sfl_reload_drained(self->reload);
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
	if (sfl_reload_is_busy(self->reload))
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
	if (self->sharding != NULL) {
		/* a member is ready whether it owns units or none (docs/deployment/scale-out.md) */
		if (!sfl_sharding_is_member(self->sharding)) {
			*reason = g_strdup("not ready: not a live member of the sharded group yet");
			return FALSE;
		}
		*reason = sfl_daemon_degraded(self);
		if (*reason == NULL && self->deadletter != NULL &&
		    sfl_deadletter_is_filling(self->deadletter))
			*reason = g_strdup_printf(
				"warning: dead-letter store %u%% full (state.deadletter.max_bytes)",
				sfl_deadletter_fill_percent(self->deadletter));
		return *reason == NULL || g_str_has_prefix(*reason, "warning:");
	}
	if (self->leadership == NULL) {
		*reason = g_strdup("not ready");
		return FALSE;
	}
	switch (sfl_leadership_get_readiness(self->leadership)) {
	case SFL_READINESS_READY:
		*reason = sfl_daemon_degraded(self);
		if (*reason == NULL && self->deadletter != NULL &&
		    sfl_deadletter_is_filling(self->deadletter))
			/* still ready: the store evicts its oldest, nothing in flight is lost */
			*reason = g_strdup_printf(
				"warning: dead-letter store %u%% full (state.deadletter.max_bytes)",
				sfl_deadletter_fill_percent(self->deadletter));
		return *reason == NULL || g_str_has_prefix(*reason, "warning:");
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
	else if (self->sharding != NULL)
		sfl_sharding_get_counters(self->sharding, &counters);
	/* sharded: this replica leads some of the work */
	sfl_series_set(self->leader_gauge,
		       self->term != NULL || (self->sharding != NULL &&
					      sfl_sharding_get_n_owned(self->sharding) > 0)
			       ? 1
			       : 0);
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
static void
sfl_daemon_init_metrics(SflDaemon *self)
{
	const gchar *version[] = { "version", NULL };
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
		json_string(
			self->leadership != NULL
				? sfl_readiness_to_string(
					  sfl_leadership_get_readiness(self->leadership))
			: self->sharding != NULL
				? (sfl_sharding_is_member(self->sharding) ? "ready" : "starting")
				: "starting"));
	if (self->sharding != NULL)
		json_object_set_new(doc, "sharding", sfl_sharding_status(self->sharding));
	/* the coordinator is built before the start-up probe; it is shown once it is contested */
	if (self->leadership != NULL) {
		const gchar *holder = sfl_coordinator_get_holder(self->coordinator);
		json_object_set_new(
			doc, "leadership",
			json_pack("{s:s?, s:I, s:b}", "holder", holder, "epoch",
				  (json_int_t)sfl_coordinator_get_epoch(self->coordinator),
				  "leader", self->term != NULL));
	}
	if (self->term != NULL || self->sharding != NULL) {
		if (self->term != NULL)
			sfl_pipeline_get_counters(sfl_term_get_pipeline(self->term), &c);
		else
			sfl_sharding_get_counters(self->sharding, &c);
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
		json_object_set_new(
			doc, "deadletter",
			self->deadletter != NULL
				? json_pack("{s:s, s:I, s:I, s:i, s:I, s:b}", "dir",
					    sfl_deadletter_get_dir(self->deadletter), "bytes",
					    (json_int_t)sfl_deadletter_get_bytes(self->deadletter),
					    "max_bytes",
					    (json_int_t)sfl_deadletter_get_max_bytes(
						    self->deadletter),
					    "percent_full",
					    (int)sfl_deadletter_fill_percent(self->deadletter),
					    "evicted_segments",
					    (json_int_t)sfl_deadletter_get_evicted_segments(
						    self->deadletter),
					    "filling", sfl_deadletter_is_filling(self->deadletter))
				: json_null());
	}
	json_object_set_new(doc, "config", sfl_reload_status(self->reload));
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

/* --- live reload (src/app/sfl-reload.c): the daemon's side ------------------------------- */

static gboolean
sfl_daemon_can_reload(gpointer user_data, const gchar **why)
{
	SflDaemon *self = user_data;

	if (self->state == SFL_DAEMON_STATE_RUNNING && self->sharding != NULL) {
		/* the unit terms are not rebuilt on a reload yet: a restart applies a change */
		*why = "sharded (coordinate.sharding.enabled): restart the replicas to apply "
		       "changes";
		return FALSE;
	}
	if (self->state == SFL_DAEMON_STATE_RUNNING && self->leadership != NULL)
		return TRUE;
	*why = self->state == SFL_DAEMON_STATE_RUNNING ? "starting" : "stopping";
	return FALSE;
}

static SflSink *
sfl_daemon_reload_sink(gpointer user_data, const SflConfig *next, GError **error)
{
	SflDaemon *self = user_data;

	return sfl_app_build_sink(next, self->curl_loop, 0, error);
}

static gboolean
sfl_daemon_reload_drain(gpointer user_data)
{
	SflDaemon *self = user_data;

	if (self->term == NULL)
		return FALSE;
	self->term_wanted = TRUE;
	self->reload_term = sfl_daemon_drain_term(self);
	return TRUE;
}

/* between terms: swap in what the reload validated, then the leader's next term starts */
static void
sfl_daemon_reload_apply(gpointer user_data, SflConfig *next, SflSink *sink, gboolean egress)
{
	SflDaemon *self = user_data;

	if (sink != NULL) {
		g_clear_object(&self->sink);
		self->sink = sink;
	}
	/* the next term builds the governor from the new limits; today's count is in the store */
	if (egress)
		g_clear_object(&self->egress);
	if (sfl_app_log_level(next) != sfl_app_log_level(self->config))
		sfl_log_setup((SflLogFormat)self->started->data.service.log_format,
			      sfl_app_log_level(next));
	if (sfl_orgs_same_orgs(self->started, next))
		sfl_orgs_rebind(self->orgs, next);
	self->config = next;
	/* same coordinator, same epoch: leadership never noticed the gap */
	if (self->term_wanted && self->state == SFL_DAEMON_STATE_RUNNING && self->term == NULL)
		sfl_daemon_begin_term(self);
	self->term_wanted = FALSE;
}

static void
sfl_daemon_request_reload(SflDaemon *self, const gchar *trigger, SflHealthReply *reply)
{
	/* a signal before start-up built the reload: what is being loaded is the file as it is */
	if (self->reload == NULL) {
		g_message("configuration reload requested (%s) while starting; ignored", trigger);
		g_assert(reply == NULL); /* the health server starts after the reload */
		return;
	}
	sfl_reload_request(self->reload, trigger, reply);
}

static void
sfl_daemon_health_reload(gpointer user_data, SflHealthReply *reply)
{
	sfl_daemon_request_reload(user_data, "control path", reply);
}

/* --- one teardown ---------------------------------------------------------------------- */

static void
sfl_daemon_dispose(GObject *object)
{
	SflDaemon *self = SFL_DAEMON(object);

	if (self->reload != NULL)
		sfl_reload_shutdown(self->reload);
	/* a final OTLP export belongs to an orderly stop (sfl_daemon_run()); here it is dropped */
	g_clear_pointer(&self->otlp, sfl_otlp_exporter_free);
	/* a term is stopped by its leadership's end; one left here only lets go of its sources */
	g_clear_pointer(&self->term, sfl_term_free);
	g_clear_pointer(&self->stopping_terms, g_ptr_array_unref);
	g_clear_object(&self->leadership);
	g_clear_pointer(&self->sharding, sfl_sharding_free);
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
	g_clear_pointer(&self->deadletter, sfl_deadletter_unref);
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
	/* last: everything built from its configurations is gone */
	g_clear_pointer(&self->reload, sfl_reload_free);
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
	const SflReloadHooks reload_hooks = {
		.can_reload = sfl_daemon_can_reload,
		.build_sink = sfl_daemon_reload_sink,
		.drain = sfl_daemon_reload_drain,
		.apply = sfl_daemon_reload_apply,
	};

	self->started_at = g_get_monotonic_time();
	sfl_daemon_init_metrics(self);
	/* a reload reads the same file under the same environment as this start did */
	self->reload =
		sfl_reload_new(self->config, self->metrics, self->context, &reload_hooks, self);
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
	if (config->data.state.deadletter.enabled) {
		g_autoptr(SflClock) wall = sfl_clock_get_system();
		self->deadletter = sfl_app_open_deadletter(config, wall, error);
		if (self->deadletter == NULL)
			return FALSE;
		sfl_deadletter_set_metrics(self->deadletter, self->metrics);
		g_message("dead-letter store: %s (max %" G_GINT64_FORMAT " bytes)",
			  sfl_deadletter_get_dir(self->deadletter),
			  config->data.state.deadletter.max_bytes);
	}
	/* a stop that arrived during start-up already finished the run: honour it */
	if (self->state != SFL_DAEMON_STATE_RUNNING)
		return TRUE;

	/*
	 * one curl loop for every HTTP client of the process, the coordinator's included; its
	 * trust is SSL_CERT_FILE / SSL_CERT_DIR over the system store, and sink.loki.ca_file
	 * stays with the Loki sink's own requests
	 */
	self->curl_loop = sfl_curl_loop_new();
	/* sharded, every unit has its own lease: there is no single one to build */
	if (!config->data.coordinate.sharding.enabled) {
		self->coordinator = sfl_app_build_coordinator(config, self->curl_loop, error);
		if (self->coordinator == NULL)
			return FALSE;
	}
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
	if (config->data.coordinate.sharding.enabled)
		return sfl_daemon_start_sharding(self, error);
	self->leadership = sfl_leadership_new(self->store, self->coordinator,
					      sfl_app_coordinator_is_fenced(config));
	sfl_leadership_set_hooks(self->leadership, sfl_daemon_start_term, sfl_daemon_stop_term,
				 sfl_daemon_status_changed, self);
	sfl_leadership_start(self->leadership);
	sfl_reload_watch(self->reload);
	return TRUE;
}

static gboolean
sfl_daemon_start_sharding(SflDaemon *self, GError **error)
{
	const SflPipelineCallbacks callbacks = {
		.error = sfl_daemon_pipeline_error_cb,
		.committed = sfl_daemon_pipeline_committed_cb,
	};
	SflShardingArgs args = {
		.config = self->config,
		.store = self->store,
		.orgs = self->orgs,
		.sink = self->sink,
		.metrics = self->metrics,
		.deadletter = self->deadletter,
		.loop = self->curl_loop,
		.context = self->context,
		.callbacks = &callbacks,
		.callback_data = self,
	};

	if (sfl_egress_config_is_active(&self->config->data.sink.loki.egress)) {
		g_autoptr(SflClock) clock = sfl_clock_get_system();

		self->egress = sfl_egress_new(&self->config->data.sink.loki.egress, clock);
		sfl_egress_set_metrics(self->egress, self->metrics);
	}
	args.egress = self->egress;
	self->sharding = sfl_sharding_new(&args, error);
	if (self->sharding == NULL)
		return FALSE;
	sfl_sharding_start(self->sharding);
	sfl_reload_watch(self->reload);
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
	if (self->leadership == NULL && self->sharding == NULL)
		return TRUE;

	g_message(self->sharding != NULL ? "ready; joining the sharded group"
					 : "ready; contesting leadership");
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
