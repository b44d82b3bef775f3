/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCli"

#include "config.h"

#include "sfl-cli-dump.h"

#include <stdio.h>

#include "sfl-config-leaves.h"
#include "sfl-config.h"
#include "sfl-error.h"

int
sfl_cli_config_dump(const gchar *config_path, gboolean origin)
{
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = sfl_config_load(config_path, envp, &error);
	g_autoptr(GPtrArray) leaves = NULL;

	if (config == NULL) {
		g_auto(GStrv) lines = g_strsplit(error->message, "\n", -1);
		for (guint i = 0; lines[i] != NULL; i++)
			fprintf(stderr, "%s\n", lines[i]);
		return SFL_EXIT_USAGE;
	}
	leaves = sfl_config_leaves(config);
	for (guint i = 0; i < leaves->len; i++) {
		const SflConfigLeaf *leaf = g_ptr_array_index(leaves, i);
		/* leaf values are already redacted: a secret is "<redacted>", never its text */
		if (origin) {
			g_autofree gchar *where = sfl_config_dup_origin(config, leaf->path);
			printf("%s: %s  # %s\n", leaf->path, leaf->value, where);
		} else {
			printf("%s: %s\n", leaf->path, leaf->value);
		}
	}
	return fflush(stdout) == 0 ? SFL_EXIT_OK : SFL_EXIT_FAILURE;
}
