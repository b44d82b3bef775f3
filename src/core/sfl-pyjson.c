/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflPyJson"

#include "config.h"

#include "sfl-pyjson.h"

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
		switch (c) {
		case '"':
			g_string_append(out, "\\\"");
			break;
		case '\\':
			g_string_append(out, "\\\\");
			break;
		case '\n':
			g_string_append(out, "\\n");
			break;
		case '\r':
			g_string_append(out, "\\r");
			break;
		case '\t':
			g_string_append(out, "\\t");
			break;
		case '\b':
			g_string_append(out, "\\b");
			break;
		case '\f':
			g_string_append(out, "\\f");
			break;
		default:
			if (c >= 0x20 && c <= 0x7e) {
				g_string_append_c(out, (gchar)c);
			} else if (c > 0xffff) {
				gunichar v = c - 0x10000;
				g_string_append_printf(out, "\\u%04x\\u%04x", 0xd800 + (v >> 10),
						       0xdc00 + (v & 0x3ff));
			} else {
				g_string_append_printf(out, "\\u%04x", c);
			}
		}
	}
	g_string_append_c(out, '"');
}
