/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-curl-loop.h"

G_BEGIN_DECLS

/*
 * SflHttpStream: one streamed HTTP GET on an SflCurlLoop, for bodies too large to hold (ELF
 * CSVs of 100 MB and more).
 *
 * - TLS verification on (the loop's default trust); proxies from the environment; no
 *   redirects; connect timeout 10 s.
 * - A transport failure names the peer's host:port, never the URL.
 * - No whole-request deadline: a transfer that moves fewer than 1 byte/s for
 *   %SFL_HTTP_STREAM_LOW_SPEED_SEC fails with a timeout. curl (7.68 and later) skips that
 *   check while the transfer is paused, so time spent paused by the consumer never counts.
 * - @response runs once, when the final status line and headers are in (before any @data).
 * - @data gets each body chunk in order (curl's buffer size: at most 64 KiB here).
 * - pause() makes the next chunk wait inside curl (the write callback answers
 *   CURL_WRITEFUNC_PAUSE, and curl re-delivers that chunk later); resume() unpauses from an
 *   idle source, never from inside a curl callback.
 * - @done runs exactly once unless the stream is freed first: @error NULL when the transfer
 *   completed (any HTTP status), else SFL_ERROR_TRANSIENT with curl's description.
 * - free() may be called from any of the callbacks; no callback runs after it.
 *
 * Threading: the loop's thread.
 */

#define SFL_HTTP_STREAM_LOW_SPEED_SEC 30
#define SFL_HTTP_STREAM_MAX_CHUNK     (64 * 1024)

typedef struct _SflHttpStream SflHttpStream;

typedef void (*SflHttpStreamResponseFunc)(SflHttpStream *stream, guint status, gpointer user_data);
typedef void (*SflHttpStreamDataFunc)(SflHttpStream *stream, const gchar *data, gsize len,
				      gpointer user_data);
typedef void (*SflHttpStreamDoneFunc)(SflHttpStream *stream, const GError *error, guint status,
				      gpointer user_data);

SflHttpStream *
sfl_http_stream_new(SflCurlLoop *loop, const gchar *url, const gchar *const *headers,
		    SflHttpStreamResponseFunc response, SflHttpStreamDataFunc data,
		    SflHttpStreamDoneFunc done, gpointer user_data) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_http_stream_start(SflHttpStream *self, GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_http_stream_pause(SflHttpStream *self);
void sfl_http_stream_resume(SflHttpStream *self);
gboolean sfl_http_stream_is_paused(SflHttpStream *self);
guint sfl_http_stream_get_status(SflHttpStream *self);
const gchar *sfl_http_stream_get_header(SflHttpStream *self, const gchar *name);
guint64 sfl_http_stream_get_body_bytes(SflHttpStream *self);
void sfl_http_stream_free(SflHttpStream *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflHttpStream, sfl_http_stream_free)

/*
 * Plumbing shared with the other streaming curl user (the gRPC call): the same rules for
 * touching a transfer from outside curl's callbacks, and the same reading of header lines.
 */

/*
 * An idle source on the thread-default context, kept in @slot, for work that may not run
 * inside a curl callback (unpausing, freeing). @func must clear @slot when it runs.
 */
void
sfl_http_defer(GSource **slot, gint priority, const gchar *name, GSourceFunc func, gpointer data);

/*
 * Releases the curl side of a transfer: @easy (taken out of @loop first when @attached), its
 * header list, and the loop reference in @loop.
 */
void sfl_http_release_transfer(SflCurlLoop **loop, CURL *easy, gboolean attached,
			       struct curl_slist *headers);

typedef enum {
	SFL_HTTP_HEADER_OTHER,	/* nothing to read: a malformed or continuation line */
	SFL_HTTP_HEADER_STATUS, /* "HTTP/...": a response (perhaps an interim 1xx) begins */
	SFL_HTTP_HEADER_END,	/* the blank line that ends a header block */
	SFL_HTTP_HEADER_FIELD,	/* "Name:value", white space trimmed */
} SflHttpHeaderKind;

SflHttpHeaderKind sfl_http_header_parse(const gchar *data, gsize len, gchar **line);
gboolean sfl_http_header_is(const gchar *line, const gchar *name);

G_END_DECLS
