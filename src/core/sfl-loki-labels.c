/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLokiLabels"

#include "config.h"

#include "sfl-loki-labels.h"

#include <stdlib.h>
#include <string.h>

#include "sfl-error.h"

/**
 * sfl_loki_truncate_line:
 * @line: a writable UTF-8 line of @len bytes
 * @len: its length
 * @max_line_bytes: the cap; 0 disables it
 *
 * The original's per-line cap: keep the longest prefix that leaves room for the marker
 * `…[truncated, original N bytes]` without splitting a character, then append the marker. If
 * the marker alone does not fit, cut to the cap on a character boundary with no marker. The
 * result is never longer than the cap, so capping again changes nothing.
 *
 * Works in place: the result is always shorter than the input, and when it is shorter a NUL
 * is written at its end.
 *
 * Returns: the new length (@len when the line fits)
 */
gsize
sfl_loki_truncate_line(gchar *line, gsize len, gsize max_line_bytes)
{
	gchar marker[80];
	gsize marker_len;
	gsize keep;

	g_return_val_if_fail(line != NULL, len);
	if (max_line_bytes == 0 || len <= max_line_bytes)
		return len;
	marker_len = (gsize)g_snprintf(marker, sizeof(marker), SFL_LOKI_TRUNCATION_MARKER_FMT, len);
	keep = marker_len <= max_line_bytes ? max_line_bytes - marker_len : max_line_bytes;
	/* keep < len, so line[keep] exists; back off continuation bytes to a character start */
	while (keep > 0 && ((guchar)line[keep] & 0xc0) == 0x80)
		keep--;
	if (marker_len <= max_line_bytes) {
		memcpy(line + keep, marker, marker_len);
		keep += marker_len;
	}
	line[keep] = '\0';
	return keep;
}

/**
 * sfl_loki_label_name_is_valid:
 * @name: a label name
 *
 * Returns: whether @name matches `^[a-zA-Z_][a-zA-Z0-9_]*$`
 */
gboolean
sfl_loki_label_name_is_valid(const gchar *name)
{
	g_return_val_if_fail(name != NULL, FALSE);
	if (!g_ascii_isalpha(name[0]) && name[0] != '_')
		return FALSE;
	for (const gchar *p = name + 1; *p != '\0'; p++) {
		if (!g_ascii_isalnum(*p) && *p != '_')
			return FALSE;
	}
	return TRUE;
}

static gint
sfl_loki_pair_cmp(gconstpointer a, gconstpointer b)
{
	const SflLabelPair *pa = a;
	const SflLabelPair *pb = b;

	return strcmp(pa->name, pb->name);
}

/**
 * sfl_loki_label_string:
 * @pairs: (array length=n_pairs) (nullable): labels in any order, values valid UTF-8
 * @n_pairs: number of pairs
 * @len: (out) (optional): the result's length in bytes
 * @error: (nullable): %SFL_ERROR_INVALID_CONFIG for a bad or repeated name
 *
 * Renders a label set as Loki's `labels` field wants it: `{a="x", b="y"}`, names sorted by
 * byte value (so equal sets give equal strings), values in double quotes with `\` → `\\`,
 * `"` → `\"` and newline → `\n`, everything else, non-ASCII included, verbatim. The empty set
 * renders as `{}`, which Loki refuses; empty values are kept, as the original does.
 *
 * Returns: (transfer full) (nullable): the label string, or %NULL with @error set
 */
gchar *
sfl_loki_label_string(const SflLabelPair *pairs, guint n_pairs, gsize *len, GError **error)
{
	g_autofree SflLabelPair *sorted = NULL;
	GString *out;

	g_return_val_if_fail(pairs != NULL || n_pairs == 0, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	sorted = g_new(SflLabelPair, n_pairs + 1);
	if (n_pairs > 0)
		memcpy(sorted, pairs, n_pairs * sizeof(SflLabelPair));
	qsort(sorted, n_pairs, sizeof(SflLabelPair), sfl_loki_pair_cmp);
	for (guint i = 0; i < n_pairs; i++) {
		g_return_val_if_fail(sorted[i].name != NULL && sorted[i].value != NULL, NULL);
		if (!sfl_loki_label_name_is_valid(sorted[i].name)) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "invalid Loki label name \"%s\": names match "
				    "[a-zA-Z_][a-zA-Z0-9_]*",
				    sorted[i].name);
			return NULL;
		}
		if (i > 0 && strcmp(sorted[i - 1].name, sorted[i].name) == 0) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "duplicate Loki label name \"%s\"", sorted[i].name);
			return NULL;
		}
	}

	out = g_string_sized_new(64);
	g_string_append_c(out, '{');
	for (guint i = 0; i < n_pairs; i++) {
		/* the original's exact form (no space after commas): same bytes on replay */
		if (i > 0)
			g_string_append_c(out, ',');
		g_string_append(out, sorted[i].name);
		g_string_append(out, "=\"");
		for (const gchar *p = sorted[i].value; *p != '\0'; p++) {
			if (*p == '\\')
				g_string_append(out, "\\\\");
			else if (*p == '"')
				g_string_append(out, "\\\"");
			else if (*p == '\n')
				g_string_append(out, "\\n");
			else
				g_string_append_c(out, *p);
		}
		g_string_append_c(out, '"');
	}
	g_string_append_c(out, '}');
	if (len != NULL)
		*len = out->len;
	return g_string_free(out, FALSE);
}
