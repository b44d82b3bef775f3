/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
	gboolean json;
	gboolean force;
	gboolean merge;
	const gchar *key_glob;
} SflCliStateOptions;

int sfl_cli_state(const gchar *config_path, gchar **args, const SflCliStateOptions *opts);

G_END_DECLS
