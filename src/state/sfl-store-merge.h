/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-checkpoint-store.h"

G_BEGIN_DECLS

SflStateDoc *sfl_store_parse(const gchar *data, gsize len, const gchar *origin, GError **error);
gboolean sfl_store_write_needed(const SflStateDoc *fresh, const SflStateDoc *items,
				const gchar *delete_key, const SflStoreWriter *writer);
gboolean
sfl_store_apply_write(SflStateDoc *fresh, const SflStateDoc *items, const gchar *delete_key,
		      const SflStoreWriter *writer, const gchar *origin, GError **error);
gboolean sfl_store_persisted_epoch(const SflStateDoc *fresh, const gchar *unit, guint64 *epoch,
				   gboolean *present, GError **error);

G_END_DECLS
