/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzLokiResponse"

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-http-frame.h"
#include "sfl-http-private.h"
#include "sfl-loki-rejection.h"
#include "sfl-loki-sink-private.h"
#include "sfl-loki-sink.h"
#include "sfl-redact.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a token the sink would have registered; it must never reach a result */
#define FUZZ_LOKI_SECRET "glc_fuzzLokiToken8f3a"

/* the batch the rejection bodies are judged against: the streams and times the seeds name */
static SflLabelsInterner *fuzz_interner;
static SflBatch *fuzz_batch;

static void
fuzz_loki_batch_add(const gchar *source, gint64 ts, gsize line_len)
{
	const SflLabelPair pairs[] = { { "job", "sf2loki" }, { "source", source } };
	g_autoptr(SflLabels) labels = sfl_labels_intern(fuzz_interner, pairs, 2, NULL);
	g_autofree gchar *line = g_strnfill(line_len, 'x');

	sfl_batch_add(fuzz_batch,
		      sfl_entry_new(ts, labels, line, (gssize)line_len, NULL, 0, "k", "v"));
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init_logging();
	sfl_redact_add_secret(FUZZ_LOKI_SECRET);
	fuzz_interner = sfl_labels_interner_new();
	fuzz_batch = sfl_batch_new();
	fuzz_loki_batch_add("pubsub", G_GINT64_CONSTANT(1700000000123456789), 10);
	fuzz_loki_batch_add("pubsub", G_GINT64_CONSTANT(1700000001000000000), 10);
	fuzz_loki_batch_add("elf", G_GINT64_CONSTANT(1700000000123456789), 300000);
	fuzz_loki_batch_add("api", G_GINT64_CONSTANT(1893456000000000000), 10);
	return 0;
}

/*
 * The partial-rejection reading of a body: bounded, every item well formed, and verdicts that
 * either cover the batch entry by entry with at least one refusal, or are absent.
 */
static void
fuzz_loki_check_rejection(guint status, const gchar *body, gsize body_len)
{
	g_autoptr(SflLokiRejection) rejection = sfl_loki_rejection_parse(body, body_len);
	g_autoptr(GArray) verdicts = sfl_loki_sink_judge(status, body, body_len, fuzz_batch);
	guint refused = 0;

	if (rejection->items->len > SFL_LOKI_REJECTION_MAX_ITEMS)
		g_error("%u items", rejection->items->len);
	if (rejection->ignored > rejection->total)
		g_error("ignored %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT, rejection->ignored,
			rejection->total);
	for (guint i = 0; i < rejection->items->len; i++) {
		const SflLokiRejectedItem *item = g_ptr_array_index(rejection->items, i);

		if (item->reason == NULL || item->count == 0 ||
		    item->n_labels > SFL_LOKI_REJECTION_MAX_LABELS || item->precision_ns < 1)
			g_error("malformed item %u", i);
		for (guint l = 0; l < item->n_labels; l++) {
			if (item->names[l] == NULL || item->values[l] == NULL)
				g_error("item %u: label %u missing", i, l);
		}
	}
	if (verdicts == NULL)
		return;
	if (status != 400 && status != 429)
		g_error("verdicts for HTTP %u", status);
	if (verdicts->len != sfl_batch_get_length(fuzz_batch))
		g_error("%u verdicts for %u entries", verdicts->len,
			sfl_batch_get_length(fuzz_batch));
	for (guint i = 0; i < verdicts->len; i++)
		refused += g_array_index(verdicts, SflSinkVerdict, i).reason != NULL;
	if (refused == 0)
		g_error("verdicts that refuse nothing");
}

/*
 * The header value as the peer sent it, found here without the product's code: the last
 * line of that name, any case, since the last status line (an interim 1xx answer starts a new
 * set), blanks around the value dropped; curl hands over each line as a C string.
 */
static gchar *
fuzz_loki_last_header(const gchar *head, gsize len, const gchar *name)
{
	gchar *found = NULL;
	gsize name_len = strlen(name);
	gsize from = 0;

	while (from < len) {
		const gchar *nl = memchr(head + from, '\n', len - from);
		gsize to = nl != NULL ? (gsize)(nl - head) + 1 : len;
		g_autofree gchar *line = g_strndup(head + from, to - from);

		from = to;
		if (g_str_has_prefix(line, "HTTP/")) {
			g_clear_pointer(&found, g_free);
		} else if (g_ascii_strncasecmp(line, name, name_len) == 0 &&
			   line[name_len] == ':') {
			g_free(found);
			found = g_strstrip(g_strdup(line + name_len + 1));
		}
	}
	return found;
}

/* @value is 1 to 60 written as plain digits (no sign, no blanks inside): that many seconds */
static gboolean
fuzz_loki_delay_seconds(const gchar *value, guint64 *seconds)
{
	gsize len = value != NULL ? strlen(value) : 0;

	if (len == 0 || len > 3 || strspn(value, "0123456789") != len)
		return FALSE;
	*seconds = g_ascii_strtoull(value, NULL, 10);
	return *seconds <= 60;
}

static void
fuzz_loki_check(guint status, const gchar *head, gsize head_len, const gchar *body, gsize body_len)
{
	g_autoptr(GBytes) bytes = g_bytes_new(body, body_len);
	g_autoptr(SflHttpResponse) response =
		sfl_http_response_new_parsed(status, head, head_len, bytes, FALSE);
	g_autoptr(SflSinkResult) result = sfl_loki_sink_classify(response);
	g_autofree gchar *retry_after = fuzz_loki_last_header(head, head_len, "Retry-After");
	const gchar *seen = sfl_http_response_get_header(response, "retry-after");
	guint64 seconds = 0;

	if (result == NULL)
		g_error("no result for HTTP %u", status);
	if (result->status != status)
		g_error("status %u became %u", status, result->status);
	if ((retry_after == NULL) != (seen == NULL) ||
	    (seen != NULL && strcmp(seen, retry_after) != 0))
		g_error("Retry-After read as \"%s\", sent as \"%s\"",
			seen != NULL ? seen : "(none)",
			retry_after != NULL ? retry_after : "(none)");

	if (status >= 200 && status < 300) {
		if (result->outcome != SFL_SINK_OK || result->detail != NULL)
			g_error("HTTP %u is not a plain OK", status);
		return;
	}
	if (status == 400 || status == 413) {
		if (result->outcome != SFL_SINK_REJECTED ||
		    g_strcmp0(result->reason, status == 400 ? "bad_request" : "oversized_413") != 0)
			g_error("HTTP %u is not REJECTED with its reason", status);
	} else {
		if (result->outcome != SFL_SINK_RETRY || result->reason == NULL)
			g_error("HTTP %u must be retried, never dropped", status);
		if (result->retry_after_usec < -1 ||
		    result->retry_after_usec > SFL_LOKI_SINK_RETRY_AFTER_CAP_USEC)
			g_error("Retry-After \"%s\" gave %" G_GINT64_FORMAT " us",
				retry_after != NULL ? retry_after : "(none)",
				result->retry_after_usec);
		if (retry_after == NULL && result->retry_after_usec != -1)
			g_error("a delay without a Retry-After");
		/* delay-seconds (RFC 9110: 1*DIGIT) within the cap are taken exactly */
		if (fuzz_loki_delay_seconds(retry_after, &seconds) &&
		    result->retry_after_usec != (gint64)seconds * G_USEC_PER_SEC)
			g_error("Retry-After \"%s\" gave %" G_GINT64_FORMAT " us", retry_after,
				result->retry_after_usec);
	}
	/* the detail goes into log lines: bounded, valid UTF-8, trimmed, the token masked */
	if (result->detail == NULL)
		g_error("HTTP %u without a detail", status);
	if (strlen(result->detail) > SFL_LOKI_SINK_DETAIL_MAX)
		g_error("detail of %" G_GSIZE_FORMAT " bytes", strlen(result->detail));
	if (!g_utf8_validate(result->detail, -1, NULL))
		g_error("detail is not valid UTF-8");
	if (result->detail[0] != '\0' &&
	    (g_ascii_isspace(result->detail[0]) ||
	     g_ascii_isspace(result->detail[strlen(result->detail) - 1])))
		g_error("detail is not trimmed: \"%s\"", result->detail);
	if (strstr(result->detail, FUZZ_LOKI_SECRET) != NULL)
		g_error("the token reached the detail");
	fuzz_loki_check_rejection(status, body, body_len);
}

/*
 * A Loki push answer as it comes off the wire: status line, header lines, a blank line, the
 * body (what a proxy or gateway in front of Loki may also send). Whatever it holds, the
 * classifier follows the documented table (2xx OK; 400, 413 REJECTED; everything else RETRY,
 * with Retry-After honoured up to the cap), and the excerpt it keeps is safe to log.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const gchar *text = (const gchar *)data;
	FuzzHttpFrame frame = fuzz_http_frame(text, size);

	fuzz_loki_check(frame.status, text, frame.head_len, text + frame.body_from,
			size - frame.body_from);
	/* the same answer under the statuses whose handling differs most */
	if (frame.status == 0) {
		static const guint statuses[] = { 204, 400, 413, 429, 503 };

		fuzz_loki_check(statuses[size % G_N_ELEMENTS(statuses)], text, frame.head_len,
				text + frame.body_from, size - frame.body_from);
	}
	return 0;
}
