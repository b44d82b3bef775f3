/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* `sf2loki deadletter list|show|replay|purge`: parses its own command line (@argv whole) */
int sfl_cli_deadletter(int argc, char **argv);

G_END_DECLS
