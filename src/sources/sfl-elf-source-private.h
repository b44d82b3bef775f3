/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The EventLogFile cursor codec, for tests and the fuzz target: a stored value decoded and
 * rendered again as this source would commit it (the original's format, plus `in_flight` when
 * the value has a readable one), or %NULL when the source would not accept the value and
 * would start from the lookback (transfer full).
 */
gchar *sfl_elf_cursor_normalize(const gchar *value) G_GNUC_WARN_UNUSED_RESULT;
/* the same for a backfill value ({"done_ids": [...], "last_created": ...}) */
gchar *sfl_elf_backfill_cursor_normalize(const gchar *value) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
