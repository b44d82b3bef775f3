/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflRun"

#include "config.h"

#include "sfl-run.h"

#include "sfl-app.h"
#include "sfl-daemon.h"
#include "sfl-log.h"

/*
 * `sf2loki run`: the log set up as configured, then the daemon object (src/app/sfl-daemon.c)
 * runs until a stop request and releases everything it built.
 */

/**
 * sfl_run:
 * @config: a loaded configuration
 * @platform: (nullable): OS hooks
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
	g_autoptr(SflDaemon) daemon = NULL;

	g_return_val_if_fail(config != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	sfl_log_setup((SflLogFormat)config->data.service.log_format, sfl_app_log_level(config));
	daemon = sfl_daemon_new(config, platform != NULL ? platform->install_stop_handlers : NULL);
	return sfl_daemon_run(daemon, error);
}
