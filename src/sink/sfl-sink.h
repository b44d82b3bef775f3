/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-entry.h"

G_BEGIN_DECLS

/*
 * SflSink: where batches go (docs/architecture.md, "The seams").
 *
 * Contract
 *  - push_async() delivers one batch and classifies the outcome; it never retries part of a
 *    batch silently and never drops data on its own:
 *      OK        every entry was accepted;
 *      RETRY     nothing was accepted, try the whole batch again later (after retry_after_usec
 *                when the peer said so, else the caller's backoff): 429, 5xx, transport
 *                errors, and also 401/403/404 and unknown statuses (a credential problem must
 *                never lose data);
 *      REJECTED  the peer refused this batch as such (400, 413): the caller bisects it, and a
 *                single rejected entry is dropped and counted under @reason;
 *      PARTIAL   the peer stored some entries and named the others it refused (Loki's
 *                partial acceptance, docs/reliability.md): @verdicts has one per entry of the
 *                batch; those with a NULL reason were stored and must not be sent again,
 *                retryable ones may be pushed again later, the rest never will be accepted;
 *      FATAL     the sink cannot work at all (a broken configuration found at push time).
 *  - Entries flagged checkpoint_only are never sent; a batch of only those is OK at once.
 *  - One push at a time per sink: the caller waits for the result before the next push.
 *
 * Threading: main thread; network I/O on the main loop, encoding of large batches may run in
 * a worker thread. Cancellation aborts the request and finishes with G_IO_ERROR_CANCELLED.
 */

#define SFL_TYPE_SINK (sfl_sink_get_type())
G_DECLARE_DERIVABLE_TYPE(SflSink, sfl_sink, SFL, SINK, GObject)

typedef enum {
	SFL_SINK_OK,
	SFL_SINK_RETRY,
	SFL_SINK_REJECTED,
	SFL_SINK_FATAL,
	SFL_SINK_PARTIAL,
} SflSinkOutcome;

/* PARTIAL: the peer's word on one entry */
typedef struct {
	const gchar *reason; /* static; NULL: stored */
	gboolean retryable;
} SflSinkVerdict;

typedef struct {
	SflSinkOutcome outcome;
	/* RETRY: the peer's Retry-After in microseconds, or -1 */
	gint64 retry_after_usec;
	/* REJECTED: "bad_request" or "oversized_413"; otherwise a short description */
	gchar *reason;
	/* the HTTP status, 0 for transport failures */
	guint status;
	/* a redacted, bounded excerpt of the response body, for logs */
	gchar *detail;
	/* OK, PARTIAL: the request body's size on the wire (encoded and compressed) */
	gsize body_bytes;
	/* PARTIAL: SflSinkVerdict, one per entry of the pushed batch, in order */
	GArray *verdicts;
} SflSinkResult;

struct _SflSinkClass {
	GObjectClass parent_class;

	void (*push_async)(SflSink *self, SflBatch *batch, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data);
	SflSinkResult *(*push_finish)(SflSink *self, GAsyncResult *result, GError **error);

	gpointer padding[8];
};

SflSinkResult *sfl_sink_result_new(SflSinkOutcome outcome);
void sfl_sink_result_free(SflSinkResult *result);
const gchar *sfl_sink_outcome_to_string(SflSinkOutcome outcome);

void sfl_sink_push_async(SflSink *self, SflBatch *batch, GCancellable *cancellable,
			 GAsyncReadyCallback callback, gpointer user_data);
SflSinkResult *
sfl_sink_push_finish(SflSink *self, GAsyncResult *result, GError **error) G_GNUC_WARN_UNUSED_RESULT;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflSinkResult, sfl_sink_result_free)

G_END_DECLS
