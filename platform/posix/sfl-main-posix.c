/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflMain"

#include "config.h"

#include <glib-unix.h>
#include <locale.h>
#include <signal.h>

#include "sfl-cli.h"
#include "sfl-platform.h"

/*
 * The POSIX entry point: the one place that turns OS signals into main-loop messages.
 * SIGTERM (systemd, launchd, kill) and SIGINT (a terminal) both ask for an orderly stop.
 * It goes through sfl_platform_service_run() like the Windows entry point, which has an SCM
 * dispatcher to join there; here that is a direct call.
 */

static GPtrArray *
sfl_main_install_stop_handlers(GMainContext *context, GSourceFunc func, gpointer user_data)
{
	static const int signals[] = { SIGTERM, SIGINT };
	GPtrArray *sources = g_ptr_array_new_with_free_func((GDestroyNotify)g_source_unref);

	for (gsize i = 0; i < G_N_ELEMENTS(signals); i++) {
		GSource *source = g_unix_signal_source_new(signals[i]);
		g_source_set_callback(source, func, user_data, NULL);
		g_source_attach(source, context);
		g_ptr_array_add(sources, source);
	}
	return sources;
}

static int
sfl_main_run(int argc, char **argv, void *user_data)
{
	const SflCliPlatform *platform = user_data;
	return sfl_cli_main(argc, argv, platform);
}

int
main(int argc, char **argv)
{
	SflCliPlatform platform = {
		.install_stop_handlers = sfl_main_install_stop_handlers,
	};

	setlocale(LC_ALL, "");
	/* a closed pipe on stdout (sf2loki config example | head) must not kill us */
	signal(SIGPIPE, SIG_IGN);
	return sfl_platform_service_run(PACKAGE_NAME, sfl_main_run, argc, argv, &platform);
}
