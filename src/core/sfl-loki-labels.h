/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-entry.h"

G_BEGIN_DECLS

/*
 * Loki's label and line rules, part of the entry model: the entry model renders a label set's
 * string and caps lines with them, and the sink's encoders use the same functions, so they live
 * below both.
 */

/* the original's marker: U+2026, then the untruncated length in bytes */
#define SFL_LOKI_TRUNCATION_MARKER_FMT "\xe2\x80\xa6[truncated, original %" G_GSIZE_FORMAT " bytes]"

gsize sfl_loki_truncate_line(gchar *line, gsize len, gsize max_line_bytes);

gboolean sfl_loki_label_name_is_valid(const gchar *name);
gchar *sfl_loki_label_string(const SflLabelPair *pairs, guint n_pairs, gsize *len,
			     GError **error) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
