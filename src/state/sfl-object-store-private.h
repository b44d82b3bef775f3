/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-object-store.h"

G_BEGIN_DECLS

/* test hooks: successful writes made by this instance; the retry backoff bounds */
guint sfl_object_store_get_write_count(SflObjectStore *self);
void sfl_object_store_set_backoff(SflObjectStore *self, gint64 min_usec, gint64 max_usec);

G_END_DECLS
