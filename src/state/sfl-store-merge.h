/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-checkpoint-store.h"

G_BEGIN_DECLS

gboolean
sfl_store_apply_write(SflStateDoc *fresh, const SflStateDoc *items, const gchar *delete_key,
		      const SflStoreWriter *writer, const gchar *origin, GError **error);

G_END_DECLS
