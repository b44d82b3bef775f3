/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-curl-loop.h"

G_BEGIN_DECLS

/*
 * SflGrpcCall: one gRPC call over HTTP/2 on the shared curl loop (docs/internals/wire-notes.md,
 * "gRPC over HTTP/2"; the loop: sfl-curl-loop.h).
 *
 * - @base_url "https://host:port" negotiates h2 by ALPN (TLS verification on, the loop's CA
 *   bundle); "http://host:port" speaks h2c with prior knowledge, for tests only. A server that
 *   does not answer in HTTP/2 fails the call (UNAVAILABLE).
 * - The request side is a POST whose body is fed by a read callback: send() queues one
 *   length-prefixed message and unpauses the upload; with nothing queued the read callback
 *   pauses the upload. close_send() ends the request stream (END_STREAM) once the queue is
 *   written; a call half-closed before start() (unary calls, the probe) tells curl the body's
 *   size, so END_STREAM rides on the last DATA frame instead of coming after it. curl offers at
 *   most 64 KiB per read call; frames are split across calls.
 * - Response messages are reassembled across curl's write chunks (a message may span many
 *   chunks, a chunk may hold many messages) and handed to @message in order, each whole.
 * - Status: grpc-status, grpc-message (percent-decoded) and Salesforce's `error-code` are
 *   taken from the first header block (Trailers-Only) or from the trailers. Without
 *   grpc-status the HTTP status is mapped (docs/internals/wire-notes.md, "Status").
 *   A transport failure is UNAVAILABLE with curl's description.
 * - Paused-upload hang (curl 7.88): when grpc-status arrives in trailers while the upload is
 *   paused, the send side is closed and the upload unpaused, so the transfer can complete.
 * - curl 7.88 limits a caller has to design around: a Trailers-Only answer (the call refused
 *   before any response header) that arrives while the request body is still open is never
 *   surfaced: the transfer hangs while the upload is paused, or fails (UNAVAILABLE, "stream
 *   error") without the status. Half-closed calls get it fine, so a bidi caller that must know
 *   why a call was refused first asks with a half-closed call (the Pub/Sub source's probe).
 *   And a POST on a reused HTTP/2 connection fails, so every call has its own connection.
 * - Keepalive: TCP keepalive probes after %SFL_GRPC_KEEPALIVE_SEC idle seconds; curl's HTTP/2
 *   upkeep PING only runs for easy-interface handles, so the stream owner keeps its own
 *   silence watchdog.
 * - @done runs exactly once unless the call is freed first. free() may be called from any
 *   callback; no callback runs after it. free() of a running call cancels it (RST_STREAM).
 *
 * Threading: the loop's thread.
 */

#define SFL_GRPC_KEEPALIVE_SEC 30
/* the usual gRPC receive limit; Salesforce caps an event at 1 MB */
#define SFL_GRPC_MAX_MESSAGE (4 * 1024 * 1024)
/* a unary call that ended OK without its message is asked again up to this many times: curl
 * 7.88 drops the DATA of a stream now and then when it arrives with the trailers (seen on about
 * a third of calls under ASan timing, rarely otherwise) */
#define SFL_GRPC_UNARY_ATTEMPTS 6

typedef enum {
	SFL_GRPC_OK = 0,
	SFL_GRPC_CANCELLED = 1,
	SFL_GRPC_UNKNOWN = 2,
	SFL_GRPC_INVALID_ARGUMENT = 3,
	SFL_GRPC_DEADLINE_EXCEEDED = 4,
	SFL_GRPC_NOT_FOUND = 5,
	SFL_GRPC_ALREADY_EXISTS = 6,
	SFL_GRPC_PERMISSION_DENIED = 7,
	SFL_GRPC_RESOURCE_EXHAUSTED = 8,
	SFL_GRPC_FAILED_PRECONDITION = 9,
	SFL_GRPC_ABORTED = 10,
	SFL_GRPC_OUT_OF_RANGE = 11,
	SFL_GRPC_UNIMPLEMENTED = 12,
	SFL_GRPC_INTERNAL = 13,
	SFL_GRPC_UNAVAILABLE = 14,
	SFL_GRPC_DATA_LOSS = 15,
	SFL_GRPC_UNAUTHENTICATED = 16,
} SflGrpcCode;

/**
 * SflGrpcStatus:
 * @code: the call's status
 * @message: (nullable): grpc-message, percent-decoded, or a transport description
 * @error_code: (nullable): Salesforce's `error-code` metadata
 * @http_status: the HTTP status, 0 when no response arrived
 * @has_trailers: the server sent grpc-status (in headers or trailers)
 * @transport: the call failed below gRPC (connect, reset, protocol)
 */
typedef struct {
	SflGrpcCode code;
	gchar *message;
	gchar *error_code;
	guint http_status;
	gboolean has_trailers;
	gboolean transport;
	/* a transport failure after which nothing of the call was answered (the connection closed
	 * or was reset with no response): safe to repeat for a read-only call */
	gboolean unanswered;
} SflGrpcStatus;

const gchar *sfl_grpc_code_name(SflGrpcCode code);
SflGrpcCode sfl_grpc_code_from_http(guint http_status);
/* percent-decoding of grpc-message; a bad escape is kept as it is */
gchar *sfl_grpc_decode_message(const gchar *text) G_GNUC_WARN_UNUSED_RESULT;
/* "UNAVAILABLE: text (error-code x)", for logs; never holds metadata values */
gchar *sfl_grpc_status_describe(const SflGrpcStatus *status) G_GNUC_WARN_UNUSED_RESULT;
/* the SflError code a caller should act on */
gint sfl_grpc_status_to_sfl_error(const SflGrpcStatus *status);

typedef struct _SflGrpcCall SflGrpcCall;

typedef void (*SflGrpcMessageFunc)(SflGrpcCall *call, const guint8 *data, gsize len,
				   gpointer user_data);
typedef void (*SflGrpcDoneFunc)(SflGrpcCall *call, const SflGrpcStatus *status, gpointer user_data);

/*
 * @path: "/eventbus.v1.PubSub/Subscribe"; @metadata: "key: value" strings (lowercase keys),
 * NULL-terminated; they are copied and never logged.
 */
SflGrpcCall *sfl_grpc_call_new(SflCurlLoop *loop, const gchar *base_url, const gchar *path,
			       const gchar *const *metadata, SflGrpcMessageFunc message,
			       SflGrpcDoneFunc done, gpointer user_data) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_grpc_call_start(SflGrpcCall *self, GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_grpc_call_send(SflGrpcCall *self, const guint8 *data, gsize len);
void sfl_grpc_call_close_send(SflGrpcCall *self);
/* the send side is still open (neither closed by us nor ended by the server's status) */
gboolean sfl_grpc_call_can_send(SflGrpcCall *self);
/* the response headers arrived: the server accepted the call */
gboolean sfl_grpc_call_has_response(SflGrpcCall *self);
/* the upload is paused inside curl, waiting for a message */
gboolean sfl_grpc_call_is_upload_paused(SflGrpcCall *self);
void sfl_grpc_call_free(SflGrpcCall *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflGrpcCall, sfl_grpc_call_free)

/*
 * One unary call: @request is the serialized message. The result is the serialized response
 * (GBytes) or an error: SFL_ERROR_AUTH for UNAUTHENTICATED, SFL_ERROR_NOT_FOUND for NOT_FOUND,
 * SFL_ERROR_REJECTED for INVALID_ARGUMENT / PERMISSION_DENIED / UNIMPLEMENTED, else
 * SFL_ERROR_TRANSIENT; the message names @path and the gRPC status.
 */
void sfl_grpc_unary_async(SflCurlLoop *loop, const gchar *base_url, const gchar *path,
			  const gchar *const *metadata, GBytes *request, GCancellable *cancellable,
			  GAsyncReadyCallback callback, gpointer user_data);
GBytes *sfl_grpc_unary_finish(GAsyncResult *result, SflGrpcStatus *status_out,
			      GError **error) G_GNUC_WARN_UNUSED_RESULT;

void sfl_grpc_status_clear(SflGrpcStatus *status);

G_END_DECLS
