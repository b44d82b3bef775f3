/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-cli.h"

G_BEGIN_DECLS

/* the usage lines `sf2loki help` shows for the command */
#define SFL_CLI_BACKFILL_USAGE                                                                     \
	"  sf2loki backfill --since YYYY-MM-DD [--until YYYY-MM-DD] [--event-types A,B|*]\n"       \
	"                   [--interval Daily|Hourly] [--ingest-timestamps] [--concurrency N]\n"   \
	"                   [--org NAME] [--dry-run] [--config PATH]\n"                            \
	"                                    load past EventLogFiles once, resumably (exit 0\n"    \
	"                                    done, 1 failed, 2 usage, config or org)\n"

/* `sf2loki backfill ...`: @argv as the process got it (the command among the arguments) */
int sfl_cli_backfill(int argc, char **argv, const SflCliPlatform *platform);

G_END_DECLS
