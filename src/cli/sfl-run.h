/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-cli.h"
#include "sfl-config.h"

G_BEGIN_DECLS

gboolean sfl_run(SflConfig *config, const SflCliPlatform *platform, GError **error);

G_END_DECLS
