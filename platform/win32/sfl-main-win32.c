/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflMain"

#include "config.h"

#include <glib.h>
#include <locale.h>

#include "sfl-cli.h"
#include "sfl-platform.h"

/*
 * The Windows entry point, the counterpart of posix/sfl-main-posix.c. There are no signals to
 * bridge: Ctrl-C, Ctrl-Break and a console close (console mode) and an SCM stop or shutdown
 * (service mode) reach the run loop through sfl_platform_set_stop_handler(), whose handler
 * only posts to the main loop. sfl_platform_service_run() decides between the two modes: it
 * connects to the SCM when the SCM started us, and falls back to console mode otherwise.
 * Service mode (registration, the MSI, the event log) builds on that seam; the entry point
 * stays the same.
 */

static int
sfl_main_run(int argc, char **argv, void *user_data)
{
	const SflCliPlatform *platform = user_data;

	return sfl_cli_main(argc, argv, platform);
}

int
main(int argc, char **argv)
{
	/* no install_stop_handlers: the platform layer's stop handler covers every stop request */
	SflCliPlatform platform = { 0 };
	/* the C runtime's argv is in the ANSI code page; the service takes UTF-8 everywhere */
	g_auto(GStrv) utf8_argv = g_win32_get_command_line();
	int exit_code;

	(void)argc;
	(void)argv;
	setlocale(LC_ALL, "");
	exit_code = sfl_platform_service_run(PACKAGE_NAME, sfl_main_run,
					     (int)g_strv_length(utf8_argv), utf8_argv, &platform);
	return exit_code;
}
