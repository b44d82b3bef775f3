/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLokiSink"

#include "config.h"

#include "sfl-loki-sink.h"
#include "sfl-loki-sink-private.h"

#include <stdio.h>
#include <string.h>

#include "sfl-error.h"
#include "sfl-http.h"
#include "sfl-loki-encode.h"
#include "sfl-loki-rejection.h"
#include "sfl-redact.h"

#define SFL_LOKI_SINK_DEFAULT_TIMEOUT_MS (60 * 1000)

struct _SflLokiSink {
	SflSink parent_instance;
	SflCurlLoop *loop;
	gchar *url;
	SflLokiEncoding encoding;
	SflLokiCompression compression;
	GPtrArray *headers; /* "Name: value"; may hold the credential, never logged */
	gchar *ca_file;	    /* sink.loki.ca_file: Loki's own trust, NULL: the loop's default */
	guint timeout_ms;
};

G_DEFINE_TYPE(SflLokiSink, sfl_loki_sink, SFL_TYPE_SINK)

static gboolean
sfl_loki_sink_has_entries(const SflBatch *batch)
{
	for (guint i = 0; i < sfl_batch_get_length(batch); i++) {
		if (!sfl_batch_get(batch, i)->checkpoint_only)
			return TRUE;
	}
	return FALSE;
}

/* valid UTF-8, secrets masked, then cut to SFL_LOKI_SINK_DETAIL_MAX bytes on a character */
static gchar *
sfl_loki_sink_excerpt(const gchar *data, gsize len)
{
	g_autofree gchar *valid =
		g_utf8_make_valid(data != NULL ? data : "", data != NULL ? (gssize)len : 0);
	g_autofree gchar *redacted = sfl_redact(valid);
	gsize cut = strlen(redacted);

	if (cut > SFL_LOKI_SINK_DETAIL_MAX) {
		cut = SFL_LOKI_SINK_DETAIL_MAX;
		while (cut > 0 && (redacted[cut] & 0xC0) == 0x80)
			cut--;
		redacted[cut] = '\0';
	}
	return g_strdup(g_strstrip(redacted));
}

/**
 * sfl_loki_sink_parse_retry_after:
 * @value: (nullable): a Retry-After header value
 * @now_usec: the current Unix time in microseconds, for the HTTP-date form
 *
 * Returns: the delay in microseconds, capped at %SFL_LOKI_SINK_RETRY_AFTER_CAP_USEC, or -1
 *   when @value is absent or unreadable
 */
gint64
sfl_loki_sink_parse_retry_after(const gchar *value, gint64 now_usec)
{
	g_autofree gchar *text = NULL;
	guint64 seconds = 0;
	gint64 when = 0;

	if (value == NULL)
		return -1;
	text = g_strstrip(g_strdup(value));
	if (text[0] >= '0' && text[0] <= '9') {
		if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &seconds, NULL))
			return -1;
		if (seconds > SFL_LOKI_SINK_RETRY_AFTER_CAP_USEC / G_USEC_PER_SEC)
			return SFL_LOKI_SINK_RETRY_AFTER_CAP_USEC;
		return (gint64)seconds * G_USEC_PER_SEC;
	}
	when = sfl_http_parse_date(text);
	if (when < 0)
		return -1;
	return CLAMP(when - now_usec, 0, SFL_LOKI_SINK_RETRY_AFTER_CAP_USEC);
}

/**
 * sfl_loki_sink_classify:
 * @response: Loki's answer to a push
 *
 * Returns: (transfer full): the outcome, as the class comment of sfl-loki-sink.h lists it
 */
SflSinkResult *
sfl_loki_sink_classify(const SflHttpResponse *response)
{
	guint status = sfl_http_response_get_status(response);
	GBytes *body = sfl_http_response_get_body(response);
	gsize len = 0;
	const gchar *data = g_bytes_get_data(body, &len);
	g_autoptr(SflSinkResult) result = NULL;

	if (sfl_http_status_class(status) == SFL_HTTP_CLASS_SUCCESS) {
		result = sfl_sink_result_new(SFL_SINK_OK);
	} else if (status == 400) {
		result = sfl_sink_result_new(SFL_SINK_REJECTED);
		result->reason = g_strdup("bad_request");
	} else if (status == 413) {
		result = sfl_sink_result_new(SFL_SINK_REJECTED);
		result->reason = g_strdup("oversized_413");
	} else {
		/* 429, 5xx, and also 401/403/404 and anything unknown: never drop data */
		result = sfl_sink_result_new(SFL_SINK_RETRY);
		if (sfl_http_status_class(status) == SFL_HTTP_CLASS_AUTH)
			result->reason = g_strdup_printf("HTTP %u: credentials refused", status);
		else
			result->reason = g_strdup_printf("HTTP %u", status);
		result->retry_after_usec = sfl_loki_sink_parse_retry_after(
			sfl_http_response_get_header(response, "Retry-After"), g_get_real_time());
	}
	result->status = status;
	if (result->outcome != SFL_SINK_OK)
		result->detail = sfl_loki_sink_excerpt(data, len);
	return g_steal_pointer(&result);
}

/* what a push carries to its answer; the batch is the caller's, alive until the push ends */
typedef struct {
	const SflBatch *batch;
	gsize body_bytes;
} SflLokiPush;

/* pass 1 takes the items naming one entry, pass 2 the stream-wide ones for what is left */
static gboolean
sfl_loki_sink_judge_pass(const SflLokiRejection *rejection, const SflBatch *batch, GArray *verdicts,
			 gboolean stream_wide)
{
	for (guint r = 0; r < rejection->items->len; r++) {
		const SflLokiRejectedItem *item = g_ptr_array_index(rejection->items, r);
		gboolean wide = item->timestamp_ns < 0 && item->line_bytes < 0;
		guint matched = 0;

		if (wide != stream_wide)
			continue;
		for (guint i = 0; i < verdicts->len; i++) {
			const SflEntry *entry = sfl_batch_get(batch, i);
			SflSinkVerdict *v = &g_array_index(verdicts, SflSinkVerdict, i);

			if (entry->checkpoint_only || !sfl_loki_rejected_item_matches(item, entry))
				continue;
			matched++;
			if (v->reason == NULL) {
				v->reason = item->reason;
				v->retryable = item->retryable;
			}
		}
		/* a named entry we did not send: the body is not about this batch as we read it */
		if (matched == 0 && g_strcmp0(item->reason, "unlisted") != 0)
			return FALSE;
	}
	return TRUE;
}

/**
 * sfl_loki_sink_judge:
 * @status: Loki's status
 * @body: (nullable): its body
 * @len: the body's length
 * @batch: the batch pushed
 *
 * Returns: (transfer full) (nullable): one SflSinkVerdict per entry of @batch when the body
 *   names the entries Loki refused and every name is found in @batch; %NULL when it names
 *   nothing or anything we cannot place, so the caller keeps treating the batch as a whole
 */
GArray *
sfl_loki_sink_judge(guint status, const gchar *body, gsize len, const SflBatch *batch)
{
	g_autoptr(SflLokiRejection) rejection = NULL;
	g_autoptr(GArray) verdicts = NULL;
	guint refused = 0;

	if (status != 400 && status != 429)
		return NULL;
	rejection = sfl_loki_rejection_parse(body, len);
	/* any message not understood might name entries: then nothing can be taken as stored */
	if (rejection->items->len == 0 || rejection->unparsed)
		return NULL;
	/* a 429 is partial only as the ingester words it; the distributor's refuses the push */
	if (status == 429 && rejection->n_summaries == 0)
		return NULL;
	verdicts = g_array_new(FALSE, TRUE, sizeof(SflSinkVerdict));
	g_array_set_size(verdicts, sfl_batch_get_length(batch));
	if (!sfl_loki_sink_judge_pass(rejection, batch, verdicts, FALSE) ||
	    !sfl_loki_sink_judge_pass(rejection, batch, verdicts, TRUE))
		return NULL;
	for (guint i = 0; i < verdicts->len; i++)
		refused += g_array_index(verdicts, SflSinkVerdict, i).reason != NULL;
	if (refused == 0)
		return NULL;
	return g_steal_pointer(&verdicts);
}

static void
sfl_loki_sink_push_cb(GObject *source, GAsyncResult *res, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	g_autoptr(SflHttpResponse) response = NULL;
	g_autoptr(SflSinkResult) result = NULL;
	g_autoptr(GError) error = NULL;
	SflLokiPush *push = NULL;

	(void)source;
	response = sfl_http_request_finish(res, &error);
	if (response == NULL) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
			g_task_return_error(task, g_steal_pointer(&error));
			return;
		}
		result = sfl_sink_result_new(SFL_SINK_RETRY);
		result->reason = g_strdup("transport error");
		result->detail = sfl_loki_sink_excerpt(error->message, strlen(error->message));
		g_debug("push failed: %s", result->detail);
		g_task_return_pointer(task, g_steal_pointer(&result),
				      (GDestroyNotify)sfl_sink_result_free);
		return;
	}
	result = sfl_loki_sink_classify(response);
	push = g_task_get_task_data(task);
	if (result->outcome == SFL_SINK_REJECTED || result->outcome == SFL_SINK_RETRY) {
		GBytes *answer = sfl_http_response_get_body(response);
		gsize len = 0;
		const gchar *data = g_bytes_get_data(answer, &len);

		result->verdicts = sfl_loki_sink_judge(result->status, data, len, push->batch);
		if (result->verdicts != NULL) {
			result->outcome = SFL_SINK_PARTIAL;
			g_free(result->reason);
			result->reason = g_strdup("partial");
		}
	}
	if (result->outcome == SFL_SINK_OK || result->outcome == SFL_SINK_PARTIAL)
		result->body_bytes = push->body_bytes;
	g_debug("push answered HTTP %u: %s", result->status,
		sfl_sink_outcome_to_string(result->outcome));
	g_task_return_pointer(task, g_steal_pointer(&result), (GDestroyNotify)sfl_sink_result_free);
}

static void
sfl_loki_sink_encoded_cb(GObject *source, GAsyncResult *res, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflLokiSink *self = g_task_get_source_object(task);
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) headers = NULL;
	const gchar *content_encoding = NULL;
	GCancellable *cancellable = NULL;
	SflHttpTls tls = { 0 };
	SflHttpOptions options = { 0 };

	body = sfl_loki_encode_finish(res, &error);
	if (body == NULL) {
		g_autoptr(SflSinkResult) result = NULL;

		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
			g_task_return_error(task, g_steal_pointer(&error));
			return;
		}
		result = sfl_sink_result_new(SFL_SINK_FATAL);
		result->reason = g_strdup("encode_failed");
		result->detail = sfl_loki_sink_excerpt(error->message, strlen(error->message));
		g_task_return_pointer(task, g_steal_pointer(&result),
				      (GDestroyNotify)sfl_sink_result_free);
		return;
	}
	if (g_task_return_error_if_cancelled(task))
		return;
	headers = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < self->headers->len; i++)
		g_ptr_array_add(headers, g_strdup(g_ptr_array_index(self->headers, i)));
	g_ptr_array_add(headers,
			g_strdup_printf("Content-Type: %s", sfl_loki_content_type(self->encoding)));
	content_encoding = sfl_loki_content_encoding(self->encoding, self->compression);
	if (content_encoding != NULL)
		g_ptr_array_add(headers, g_strdup_printf("Content-Encoding: %s", content_encoding));
	g_ptr_array_add(headers, NULL);
	cancellable = g_task_get_cancellable(task);
	((SflLokiPush *)g_task_get_task_data(task))->body_bytes = g_bytes_get_size(body);
	tls.ca_file = self->ca_file;
	options.timeout_ms = self->timeout_ms;
	options.tls = self->ca_file != NULL ? &tls : NULL;
	sfl_http_request_full_async(self->loop, "POST", self->url,
				    (const gchar *const *)headers->pdata, body, &options,
				    cancellable, sfl_loki_sink_push_cb, g_steal_pointer(&task));
}

static void
sfl_loki_sink_push_async(SflSink *sink, SflBatch *batch, GCancellable *cancellable,
			 GAsyncReadyCallback callback, gpointer user_data)
{
	SflLokiSink *self = SFL_LOKI_SINK(sink);
	g_autoptr(GTask) task = NULL;
	SflLokiPush *push = NULL;

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_loki_sink_push_async);
	push = g_new0(SflLokiPush, 1);
	push->batch = batch;
	g_task_set_task_data(task, push, g_free);
	if (g_task_return_error_if_cancelled(task))
		return;
	if (!sfl_loki_sink_has_entries(batch)) {
		g_task_return_pointer(task, sfl_sink_result_new(SFL_SINK_OK),
				      (GDestroyNotify)sfl_sink_result_free);
		return;
	}
	/* a large batch is encoded in a worker thread, so the loop keeps reading sources */
	sfl_loki_encode_async(batch, self->encoding, self->compression, cancellable,
			      sfl_loki_sink_encoded_cb, g_steal_pointer(&task));
}

static SflSinkResult *
sfl_loki_sink_push_finish(SflSink *sink, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, sink), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
sfl_loki_sink_finalize(GObject *object)
{
	SflLokiSink *self = SFL_LOKI_SINK(object);

	g_clear_object(&self->loop);
	g_free(self->url);
	g_free(self->ca_file);
	g_ptr_array_unref(self->headers);
	G_OBJECT_CLASS(sfl_loki_sink_parent_class)->finalize(object);
}

static void
sfl_loki_sink_class_init(SflLokiSinkClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflSinkClass *sink_class = SFL_SINK_CLASS(klass);

	object_class->finalize = sfl_loki_sink_finalize;
	sink_class->push_async = sfl_loki_sink_push_async;
	sink_class->push_finish = sfl_loki_sink_push_finish;
}

static void
sfl_loki_sink_init(SflLokiSink *self)
{
	self->headers = g_ptr_array_new_with_free_func(g_free);
	self->timeout_ms = SFL_LOKI_SINK_DEFAULT_TIMEOUT_MS;
}

static gboolean
sfl_loki_sink_check_url(const gchar *url, GError **error)
{
	g_autoptr(GUri) uri = NULL;
	const gchar *scheme = NULL;

	if (url == NULL || url[0] == '\0') {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "sink.loki.url is not set");
		return FALSE;
	}
	/* the URL may carry credentials: it is never quoted in the error */
	uri = g_uri_parse(url, G_URI_FLAGS_NONE, NULL);
	if (uri == NULL) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "sink.loki.url is not a valid URL");
		return FALSE;
	}
	scheme = g_uri_get_scheme(uri);
	if (g_ascii_strcasecmp(scheme, "http") != 0 && g_ascii_strcasecmp(scheme, "https") != 0) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "sink.loki.url must be an http or https URL");
		return FALSE;
	}
	if (g_uri_get_host(uri) == NULL || g_uri_get_host(uri)[0] == '\0') {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "sink.loki.url has no host");
		return FALSE;
	}
	return TRUE;
}

static gboolean
sfl_loki_sink_url_has_userinfo(const gchar *url)
{
	g_autoptr(GUri) uri = g_uri_parse(url, G_URI_FLAGS_NONE, NULL);

	return uri != NULL && g_uri_get_userinfo(uri) != NULL && g_uri_get_userinfo(uri)[0] != '\0';
}

/**
 * sfl_loki_sink_new:
 * @loop: the curl loop to send on
 * @cfg: the sink.loki configuration, with auth_token already resolved; copied
 * @error: return location for an error
 *
 * Returns: (transfer full): a sink, or %NULL with SFL_ERROR_INVALID_CONFIG
 */
SflSink *
sfl_loki_sink_new(SflCurlLoop *loop, const SflLokiConfig *cfg, GError **error)
{
	g_autoptr(SflLokiSink) self = NULL;
	const gchar *tenant = NULL;
	const gchar *token = NULL;

	g_return_val_if_fail(SFL_IS_CURL_LOOP(loop), NULL);
	g_return_val_if_fail(cfg != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (!sfl_loki_sink_check_url(cfg->url, error))
		return NULL;
	self = g_object_new(SFL_TYPE_LOKI_SINK, NULL);
	self->loop = g_object_ref(loop);
	self->url = g_strdup(cfg->url);
	self->encoding = cfg->encoding;
	/* protobuf is always snappy; JSON is gzip only when asked for
	 * (docs/differences-from-python.md, "Kept as in the original") */
	self->compression = cfg->compression;

	self->ca_file =
		cfg->ca_file != NULL && cfg->ca_file[0] != '\0' ? g_strdup(cfg->ca_file) : NULL;

	/*
	 * docs/deployment/network.md, "Loki authentication": a token is always HTTP Basic with the
	 * tenant (or nothing) as the user, and then no X-Scope-OrgID (the gateway derives the
	 * tenant from the credential); a tenant alone is X-Scope-OrgID. Credentials in the URL win
	 * over the computed header: curl sends them itself, and only when no Authorization header
	 * is given.
	 */
	tenant = cfg->tenant_id != NULL && cfg->tenant_id[0] != '\0' ? cfg->tenant_id : NULL;
	token = cfg->auth_token != NULL && cfg->auth_token[0] != '\0' ? cfg->auth_token : NULL;
	if (token != NULL) {
		g_autofree gchar *pair =
			g_strdup_printf("%s:%s", tenant != NULL ? tenant : "", token);
		g_autofree gchar *b64 = g_base64_encode((const guchar *)pair, strlen(pair));

		sfl_redact_add_secret(token);
		sfl_redact_add_secret(b64);
		if (!sfl_loki_sink_url_has_userinfo(cfg->url))
			g_ptr_array_add(self->headers,
					g_strdup_printf("Authorization: Basic %s", b64));
	} else if (tenant != NULL) {
		g_ptr_array_add(self->headers, g_strdup_printf("X-Scope-OrgID: %s", tenant));
	}
	return SFL_SINK(g_steal_pointer(&self));
}

/**
 * sfl_loki_sink_set_timeout:
 * @self: a sink
 * @timeout_ms: the deadline of one push, 0 for none
 */
void
sfl_loki_sink_set_timeout(SflLokiSink *self, guint timeout_ms)
{
	g_return_if_fail(SFL_IS_LOKI_SINK(self));
	self->timeout_ms = timeout_ms;
}
