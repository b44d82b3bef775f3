/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzGrpcFrame"

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "sfl-grpc-private.h"
#include "sfl-grpc.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static SflCurlLoop *fuzz_loop;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init_logging();
	/* never started: the calls below only take response bytes */
	fuzz_loop = sfl_curl_loop_new();
	return 0;
}

static void
fuzz_grpc_message_cb(SflGrpcCall *call, const guint8 *data, gsize len, gpointer user_data)
{
	GString *seen = user_data;

	(void)call;
	if (len > SFL_GRPC_MAX_MESSAGE)
		g_error("a message of %" G_GSIZE_FORMAT " bytes was delivered", len);
	g_string_append_printf(seen, "%" G_GSIZE_FORMAT ":", len);
	g_string_append_len(seen, (const gchar *)data, (gssize)len);
}

/*
 * The length-prefixed framing read here without the product's code (gRPC over HTTP/2,
 * "Length-Prefixed-Message"): flag byte, 4-byte big-endian length, the message. Returns
 * whether the stream is bad, with the whole messages before that point in @seen.
 */
static gboolean
fuzz_grpc_expect(const guint8 *stream, gsize size, GString *seen)
{
	gsize off = 0;

	while (size - off >= 5) {
		guint64 len = ((guint64)stream[off + 1] << 24) | ((guint64)stream[off + 2] << 16) |
			      ((guint64)stream[off + 3] << 8) | stream[off + 4];

		if (stream[off] != 0 || len > SFL_GRPC_MAX_MESSAGE)
			return TRUE;
		if (size - off - 5 < len)
			break;
		g_string_append_printf(seen, "%" G_GUINT64_FORMAT ":", len);
		g_string_append_len(seen, (const gchar *)stream + off + 5, (gssize)len);
		off += 5 + len;
	}
	return FALSE;
}

/*
 * Feeds @stream in pieces ending at @cuts (ascending), as curl's write chunks would come.
 * Returns whether the call found bad framing; from the chunk after the one that showed it,
 * every write must abort the transfer.
 */
static gboolean
fuzz_grpc_feed(const guint8 *stream, gsize size, const gsize *cuts, guint n_cuts, GString *seen)
{
	SflGrpcCall *call = sfl_grpc_call_new(fuzz_loop, "http://127.0.0.1:9", "/fuzz.v1.Fuzz/Fuzz",
					      NULL, fuzz_grpc_message_cb, NULL, seen);
	gsize from = 0;
	gboolean bad = FALSE;

	for (guint i = 0; i <= n_cuts; i++) {
		gsize to = i < n_cuts ? cuts[i] : size;
		gsize taken;

		if (to == from)
			continue;
		taken = sfl_grpc_call_receive(call, stream + from, to - from);
		if (taken != (bad ? 0 : to - from))
			g_error("a write of %" G_GSIZE_FORMAT " bytes took %" G_GSIZE_FORMAT
				" after %s",
				to - from, taken, bad ? "bad framing" : "good framing");
		bad = sfl_grpc_call_get_protocol_error(call) != NULL;
		from = to;
	}
	if (bad && sfl_grpc_call_receive(call, stream, 1) != 0)
		g_error("a write after bad framing was taken");
	sfl_grpc_call_free(call);
	return bad;
}

/*
 * A Pub/Sub response body is whatever the peer (or a middlebox) sends. However it is cut into
 * chunks, the call hands over exactly the whole messages the framing holds, in order, and
 * stops the transfer at the first compressed or oversized frame. The input is read twice in
 * a row so the consumed-buffer compaction past 64 KiB is reached too.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree guint8 *stream = g_malloc(MAX(2 * size, 1));
	g_autoptr(GString) expected = g_string_new(NULL);
	g_autoptr(GString) whole = g_string_new(NULL);
	g_autoptr(GString) split = g_string_new(NULL);
	g_autoptr(GString) bytewise = g_string_new(NULL);
	gsize total = 2 * size;
	gsize cuts[4];
	g_autofree gsize *every = NULL;
	guint32 h = 2166136261u;
	gboolean bad;

	if (size > 0) {
		memcpy(stream, data, size);
		memcpy(stream + size, data, size);
	}
	for (gsize i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	cuts[0] = h % (total + 1);
	cuts[1] = cuts[0] + (h >> 8) % (total - cuts[0] + 1);
	cuts[2] = MIN(cuts[1] + 1, total);
	cuts[3] = cuts[2] + (h >> 16) % (total - cuts[2] + 1);

	bad = fuzz_grpc_expect(stream, total, expected);
	if (fuzz_grpc_feed(stream, total, NULL, 0, whole) != bad ||
	    !g_string_equal(whole, expected))
		g_error("one chunk: %" G_GSIZE_FORMAT
			" bytes of messages, expected %" G_GSIZE_FORMAT " (framing %s)",
			whole->len, expected->len, bad ? "bad" : "good");
	if (fuzz_grpc_feed(stream, total, cuts, G_N_ELEMENTS(cuts), split) != bad ||
	    !g_string_equal(split, expected))
		g_error("cut at %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT
			", %" G_GSIZE_FORMAT ": different messages",
			cuts[0], cuts[1], cuts[2], cuts[3]);
	/* one byte at a time, for small inputs (a header split at every point) */
	if (total <= 512) {
		every = g_new(gsize, MAX(total, 1));
		for (gsize i = 0; i < total; i++)
			every[i] = i + 1;
		if (fuzz_grpc_feed(stream, total, every, (guint)total, bytewise) != bad ||
		    !g_string_equal(bytewise, expected))
			g_error("byte by byte: different messages");
	}
	return 0;
}
