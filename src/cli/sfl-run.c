/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflRun"

#include "config.h"

#include "sfl-run.h"

#include "sfl-log.h"
#include "sfl-redact.h"

/*
 * The service lifecycle. Stop requests from the OS are messages to the loop: the first one
 * starts an orderly shutdown bounded by service.shutdown_grace, a second one ends it at once.
 * Components (sources, pipeline, sink, coordinator) register here as they arrive; each is
 * asked to stop and reports back, and the loop quits when all have or the grace runs out.
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
} SflRunner;

static void
sfl_runner_clear_grace(SflRunner *runner)
{
	if (runner->grace_source != NULL) {
		g_source_destroy(runner->grace_source);
		g_clear_pointer(&runner->grace_source, g_source_unref);
	}
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

/**
 * sfl_run:
 * @config: a loaded configuration
 * @platform: OS hooks
 * @error: return location for an error
 *
 * Runs the service on the thread-default main context until a stop request.
 *
 * Returns: %TRUE after a clean stop
 */
gboolean
sfl_run(SflConfig *config, const SflCliPlatform *platform, GError **error)
{
	SflRunner runner = { 0 };
	g_autoptr(GPtrArray) stop_sources = NULL;
	g_autoptr(GMainLoop) loop = NULL;

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

	sfl_run_log_banner(config);
	g_message("ready; waiting for work (no sources are built yet)");
	g_main_loop_run(loop);

	if (stop_sources != NULL) {
		for (guint i = 0; i < stop_sources->len; i++)
			g_source_destroy(g_ptr_array_index(stop_sources, i));
	}
	sfl_runner_clear_grace(&runner);
	g_main_context_unref(runner.context);
	sfl_log_flush_repeats();
	return TRUE;
}
