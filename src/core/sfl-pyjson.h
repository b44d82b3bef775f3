/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * JSON text exactly as Python's json.dumps writes it with its defaults (ensure_ascii): the
 * checkpoint and lease documents must be byte-identical to the original's so both
 * implementations can share them, and so replays re-emit identical bytes.
 */

void sfl_pyjson_append_string(GString *out, const gchar *utf8);
void sfl_pyjson_append_escaped(GString *out, const gchar *s, gsize len);
void sfl_pyjson_append_char(GString *out, gunichar c);
void sfl_pyjson_append_int64(GString *out, gint64 value);

/* the bytes ensure_ascii JSON copies as they are: printable ASCII but the quote and backslash */
extern const guint8 sfl_pyjson_plain[256];

/* \" \\ \n \r \t \b \f for the characters that have one, else NULL */
const gchar *sfl_json_short_escape(gunichar c);

/* plain JSON with UTF-8 kept as is (Loki push bodies) */
void sfl_json_append_utf8(GString *out, const gchar *s, gsize len);

G_END_DECLS
