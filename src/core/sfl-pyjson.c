/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflPyJson"

#include "config.h"

#include "sfl-pyjson.h"

/**
 * sfl_json_short_escape:
 * @c: a character
 *
 * Returns: (nullable): the two-character escape JSON defines for @c, or %NULL
 */
const gchar *
sfl_json_short_escape(gunichar c)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	default:
		return NULL;
	}
}

/**
 * sfl_pyjson_append_string:
 * @out: where to append
 * @utf8: the string; invalid UTF-8 is replaced, as it can never be in a document
 *
 * Appends a quoted JSON string with everything outside 0x20..0x7e escaped: the short forms
 * for quote, backslash and \b \f \n \r \t, \u00XX (lower-case hex) for the rest of the BMP,
 * and a UTF-16 surrogate pair for astral characters.
 */
void
sfl_pyjson_append_string(GString *out, const gchar *utf8)
{
	g_autofree gchar *valid = g_utf8_make_valid(utf8, -1);

	g_string_append_c(out, '"');
	for (const gchar *p = valid; *p != '\0'; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);
		const gchar *esc = sfl_json_short_escape(c);
		if (esc != NULL)
			g_string_append(out, esc);
		else if (c >= 0x20 && c <= 0x7e)
			g_string_append_c(out, (gchar)c);
		else if (c > 0xffff)
			g_string_append_printf(out, "\\u%04x\\u%04x",
					       0xd800 + ((c - 0x10000) >> 10),
					       0xdc00 + ((c - 0x10000) & 0x3ff));
		else
			g_string_append_printf(out, "\\u%04x", c);
	}
	g_string_append_c(out, '"');
}

/**
 * sfl_json_append_utf8:
 * @out: where to append
 * @s: valid UTF-8 (not NUL-terminated)
 * @len: its length in bytes
 *
 * A quoted JSON string with only the escapes JSON requires; UTF-8 passes through untouched.
 * Runs of plain bytes are copied at once, as this writes every log line pushed to Loki.
 */
void
sfl_json_append_utf8(GString *out, const gchar *s, gsize len)
{
	static const gchar hex[] = "0123456789abcdef";
	gsize run = 0;

	g_string_append_c(out, '"');
	for (gsize i = 0; i < len; i++) {
		guchar c = (guchar)s[i];
		const gchar *esc;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		g_string_append_len(out, s + run, (gssize)(i - run));
		run = i + 1;
		esc = sfl_json_short_escape(c);
		if (esc != NULL) {
			g_string_append(out, esc);
		} else {
			g_string_append(out, "\\u00");
			g_string_append_c(out, hex[c >> 4]);
			g_string_append_c(out, hex[c & 0xf]);
		}
	}
	g_string_append_len(out, s + run, (gssize)(len - run));
	g_string_append_c(out, '"');
}
