/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * `sf2loki config dump [--origin]`: the effective configuration, one redacted
 * `path: value` line per leaf; with @origin each line also says which layer gave it
 * (docs/cli.md). Returns the exit code (2 for a configuration error, like `check`).
 */
int sfl_cli_config_dump(const gchar *config_path, gboolean origin);

G_END_DECLS
