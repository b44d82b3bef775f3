/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* timers and watches are held as GSource* (never ids); this is the one way to drop them */
void sfl_clear_source(GSource **source);

G_END_DECLS
