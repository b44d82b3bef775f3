/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>
#include <string.h>

/*
 * The fuzz targets for HTTP answers take an input as it comes off the wire: status line,
 * header lines, a blank line, the body. Interim answers (HTTP/1.1 100 Continue and their blank
 * line) before the final one stay in the header block, as curl hands them over too.
 */
typedef struct {
	gsize head_len;	 /* the header block, up to and including its last line's newline */
	gsize body_from; /* where the body starts */
	guint status;	 /* of the last status line; 0 without one or without three digits */
} FuzzHttpFrame;

static inline const gchar *
fuzz_http_blank_line(const gchar *text, gsize from, gsize size, gsize *skip)
{
	for (gsize i = from; i + 1 < size; i++) {
		if (text[i] == '\n' && text[i + 1] == '\n') {
			*skip = 1;
			return text + i + 1;
		}
		if (i + 3 < size && memcmp(text + i, "\r\n\r\n", 4) == 0) {
			*skip = 2;
			return text + i + 2;
		}
	}
	return NULL;
}

static inline FuzzHttpFrame
fuzz_http_frame(const gchar *text, gsize size)
{
	FuzzHttpFrame frame = { size, size, 0 };
	gsize from = 0;
	gsize line = 0;

	for (;;) {
		gsize skip = 0;
		const gchar *blank = fuzz_http_blank_line(text, from, size, &skip);

		if (blank == NULL)
			break;
		frame.head_len = (gsize)(blank - text);
		frame.body_from = frame.head_len + skip;
		if (size - frame.body_from < 5 || memcmp(text + frame.body_from, "HTTP/", 5) != 0)
			break;
		from = frame.body_from;
		frame.head_len = frame.body_from = size;
	}
	while (line < frame.head_len) {
		const gchar *nl = memchr(text + line, '\n', frame.head_len - line);
		gsize next = nl != NULL ? (gsize)(nl - text) + 1 : frame.head_len;

		if (next - line >= 5 && memcmp(text + line, "HTTP/", 5) == 0) {
			const gchar *space = memchr(text + line, ' ', next - line);
			guint status = 0;
			guint digits = 0;

			while (space != NULL && digits < 3 && space + 1 + digits < text + next &&
			       g_ascii_isdigit(space[1 + digits])) {
				status = status * 10 + (guint)(space[1 + digits] - '0');
				digits++;
			}
			frame.status = digits == 3 ? status : 0;
		}
		line = next;
	}
	return frame;
}
