/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-config.h"
#include "sfl-entry.h"
#include "sfl-loki-labels.h"

G_BEGIN_DECLS

/*
 * Batch → Loki push body, as pure functions: no network, no main loop, callable from a worker
 * thread. Both encodings share one stream layout:
 *
 * - checkpoint-only entries are skipped;
 * - entries are grouped into streams by label set, streams in order of first appearance;
 * - within a stream entries are in timestamp order, batch order among equal timestamps.
 *
 * protobuf: logproto.PushRequest{streams: [StreamAdapter{labels: "{k=\"v\", ...}", entries:
 *   [EntryAdapter{timestamp: {seconds, nanos}, line, structured_metadata: [{name, value}]
 *   sorted by name}]}]}, serialised, then one snappy raw block (not the framing format).
 *   Content-Type application/x-protobuf, Content-Encoding snappy.
 *
 * json: {"streams": [{"stream": {"k": "v", ...}, "values": [["<unix ns>", "<line>",
 *   {"<name>": "<value>", ...}], ...]}]}; the third element only when the entry has structured
 *   metadata, in the entry's own order. Content-Type application/json; gzip (with its header)
 *   and Content-Encoding gzip when asked for, else identity.
 *
 * A batch with no real entries encodes to a request with no streams, which Loki answers with
 * 422: callers do not send it.
 */

/*
 * The encoding and compression enums are the configuration's (sfl-config.h): protobuf is
 * always snappy; JSON is gzip when compression is SFL_LOKI_COMPRESSION_GZIP and plain
 * otherwise, as in the original (docs/differences-from-python.md, "Kept as in the original").
 */

GBytes *
sfl_loki_encode_push_request(const SflBatch *batch, GError **error) G_GNUC_WARN_UNUSED_RESULT;
GBytes *sfl_loki_encode_protobuf(const SflBatch *batch, GError **error) G_GNUC_WARN_UNUSED_RESULT;
GBytes *sfl_loki_encode_json(const SflBatch *batch, SflLokiCompression compression,
			     GError **error) G_GNUC_WARN_UNUSED_RESULT;
GBytes *sfl_loki_encode(const SflBatch *batch, SflLokiEncoding encoding,
			SflLokiCompression compression, GError **error) G_GNUC_WARN_UNUSED_RESULT;
/*
 * sfl_loki_encode() off the main thread for batches of at least
 * SFL_LOKI_ENCODE_THREAD_BYTES line bytes (smaller ones are encoded inline: a thread hop
 * costs more than they do). The task keeps its own references to the entries, so the caller
 * may drop the batch at any time. Completes on the caller's thread-default context.
 */
#define SFL_LOKI_ENCODE_THREAD_BYTES (64 * 1024)
void sfl_loki_encode_async(const SflBatch *batch, SflLokiEncoding encoding,
			   SflLokiCompression compression, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data);
GBytes *sfl_loki_encode_finish(GAsyncResult *result, GError **error) G_GNUC_WARN_UNUSED_RESULT;

GBytes *
sfl_loki_snappy_compress(const guint8 *data, gsize len, GError **error) G_GNUC_WARN_UNUSED_RESULT;

const gchar *sfl_loki_content_type(SflLokiEncoding encoding);
const gchar *sfl_loki_content_encoding(SflLokiEncoding encoding, SflLokiCompression compression);

G_END_DECLS
