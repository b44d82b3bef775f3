/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-platform.h"

G_BEGIN_DECLS

gboolean
sfl_platform_to_gerror(SflPlatformStatus status, const SflPlatformError *perr, GError **error);

G_END_DECLS
