/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflPyJson"

#include "config.h"

#include "sfl-pyjson.h"

#include <string.h>

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

/* bytes JSON copies as they are: printable ASCII but the quote and the backslash */
const guint8 sfl_pyjson_plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static const gchar sfl_pyjson_hex[] = "0123456789abcdef";

static void
sfl_pyjson_append_uescape(GString *out, gunichar u)
{
	gchar esc[6] = { '\\', 'u' };

	esc[2] = sfl_pyjson_hex[(u >> 12) & 0xf];
	esc[3] = sfl_pyjson_hex[(u >> 8) & 0xf];
	esc[4] = sfl_pyjson_hex[(u >> 4) & 0xf];
	esc[5] = sfl_pyjson_hex[u & 0xf];
	g_string_append_len(out, esc, 6);
}

/**
 * sfl_pyjson_append_char:
 * @out: where to append
 * @c: a Unicode character
 *
 * Appends @c as ensure_ascii JSON writes it inside a string: printable ASCII as is, the short
 * forms for quote, backslash and \b \f \n \r \t, \u00XX (lower-case hex) for the rest of
 * the BMP, and a UTF-16 surrogate pair for astral characters. The one place those rules live.
 */
void
sfl_pyjson_append_char(GString *out, gunichar c)
{
	const gchar *esc = NULL;

	if (c < 0x80 && sfl_pyjson_plain[c]) {
		g_string_append_c(out, (gchar)c);
		return;
	}
	esc = sfl_json_short_escape(c);
	if (esc != NULL) {
		g_string_append(out, esc);
	} else if (c > 0xffff) {
		sfl_pyjson_append_uescape(out, 0xd800 + ((c - 0x10000) >> 10));
		sfl_pyjson_append_uescape(out, 0xdc00 + ((c - 0x10000) & 0x3ff));
	} else {
		sfl_pyjson_append_uescape(out, c);
	}
}

/**
 * sfl_pyjson_append_escaped:
 * @out: where to append
 * @s: UTF-8 text (not NUL-terminated)
 * @len: its length in bytes
 *
 * Appends @s escaped as by sfl_pyjson_append_char(), without the quotes. Runs of plain bytes
 * are copied at once; each byte that is not part of valid UTF-8 becomes \ufffd, so a stray
 * byte never breaks the document.
 */
void
sfl_pyjson_append_escaped(GString *out, const gchar *s, gsize len)
{
	const gchar *p = s;
	const gchar *end = s + len;
	const gchar *run = s;

	while (p < end) {
		guchar c = (guchar)*p;
		gunichar u;

		if (sfl_pyjson_plain[c]) {
			p++;
			continue;
		}
		if (p > run)
			g_string_append_len(out, run, p - run);
		if (c < 0x80) {
			u = c;
			p++;
		} else {
			u = g_utf8_get_char_validated(p, end - p);
			if (u == (gunichar)-1 || u == (gunichar)-2) {
				u = 0xfffd;
				p++;
			} else {
				p = g_utf8_next_char(p);
			}
		}
		run = p;
		sfl_pyjson_append_char(out, u);
	}
	if (p > run)
		g_string_append_len(out, run, p - run);
}

/**
 * sfl_pyjson_append_string:
 * @out: where to append
 * @utf8: the string; invalid UTF-8 is replaced, as it can never be in a document
 *
 * Appends a quoted JSON string with everything outside 0x20..0x7e escaped
 * (sfl_pyjson_append_char()).
 */
void
sfl_pyjson_append_string(GString *out, const gchar *utf8)
{
	g_autofree gchar *valid = g_utf8_make_valid(utf8, -1);

	g_string_append_c(out, '"');
	sfl_pyjson_append_escaped(out, valid, strlen(valid));
	g_string_append_c(out, '"');
}

/**
 * sfl_pyjson_append_int64:
 * @out: where to append
 * @value: an integer
 *
 * Appends @value in decimal, as json.dumps writes an int, without printf's locale and parsing.
 */
void
sfl_pyjson_append_int64(GString *out, gint64 value)
{
	gchar buf[24];
	gchar *p = buf + sizeof(buf);
	guint64 u = value < 0 ? (guint64)0 - (guint64)value : (guint64)value;

	do {
		*--p = (gchar)('0' + (u % 10));
		u /= 10;
	} while (u != 0);
	if (value < 0)
		*--p = '-';
	g_string_append_len(out, p, (gssize)(buf + sizeof(buf) - p));
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
