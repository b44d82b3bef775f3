/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * SflCliPlatform:
 * @install_stop_handlers: attach sources to @context that call @func(@user_data) when the OS
 *   asks the service to stop (SIGTERM/SIGINT, an SCM stop); returns them, transfer full
 *
 * What the OS-specific entry point hands the portable command code.
 */
typedef struct {
	GPtrArray *(*install_stop_handlers)(GMainContext *context, GSourceFunc func,
					    gpointer user_data);
} SflCliPlatform;

int sfl_cli_main(int argc, char **argv, const SflCliPlatform *platform);

G_END_DECLS
