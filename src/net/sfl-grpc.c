/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflGrpc"

#include "config.h"

#include "sfl-grpc.h"
#include "sfl-grpc-private.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-http-stream.h"
#include "sfl-http.h"
#include "sfl-redact.h"

struct _SflGrpcCall {
	SflCurlLoop *loop;
	CURL *easy;
	gchar *url;
	gboolean h2c;
	struct curl_slist *headers;
	SflGrpcMessageFunc message;
	SflGrpcDoneFunc done;
	gpointer user_data;

	/* request side */
	GByteArray *out;
	gsize out_off;
	gboolean send_closed;
	gboolean upload_paused; /* the read callback answered CURL_READFUNC_PAUSE */
	GSource *unpause_source;

	/* response side */
	GByteArray *in;
	gsize in_off;
	gboolean in_headers_done; /* the first header block is over: later lines are trailers */
	guint http_status;
	gboolean got_status;
	SflGrpcCode code;
	gchar *grpc_message;
	gchar *error_code;
	gchar *protocol_error; /* bad framing: the call ends INTERNAL */

	gboolean started;
	gboolean finished;
	guint dispatching;
	gboolean dead;
	GSource *cleanup_source;
	gchar errbuf[CURL_ERROR_SIZE];
};

static const gchar *const sfl_grpc_code_names[] = {
	"OK",
	"CANCELLED",
	"UNKNOWN",
	"INVALID_ARGUMENT",
	"DEADLINE_EXCEEDED",
	"NOT_FOUND",
	"ALREADY_EXISTS",
	"PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION",
	"ABORTED",
	"OUT_OF_RANGE",
	"UNIMPLEMENTED",
	"INTERNAL",
	"UNAVAILABLE",
	"DATA_LOSS",
	"UNAUTHENTICATED",
};

const gchar *
sfl_grpc_code_name(SflGrpcCode code)
{
	if ((guint)code < G_N_ELEMENTS(sfl_grpc_code_names))
		return sfl_grpc_code_names[code];
	return "UNKNOWN";
}

/* the status a proxy's HTTP answer stands for (docs/internals/wire-notes.md, "Status") */
SflGrpcCode
sfl_grpc_code_from_http(guint http_status)
{
	switch (http_status) {
	case 400:
	case 431:
		return SFL_GRPC_INTERNAL;
	case 401:
		return SFL_GRPC_UNAUTHENTICATED;
	case 403:
		return SFL_GRPC_PERMISSION_DENIED;
	case 404:
		return SFL_GRPC_UNIMPLEMENTED;
	case 429:
	case 502:
	case 503:
	case 504:
		return SFL_GRPC_UNAVAILABLE;
	default:
		return SFL_GRPC_UNKNOWN;
	}
}

gchar *
sfl_grpc_decode_message(const gchar *text)
{
	GString *out = NULL;

	if (text == NULL)
		return NULL;
	out = g_string_sized_new(strlen(text));
	for (const gchar *p = text; *p != '\0'; p++) {
		gint hi = 0;
		gint lo = 0;

		if (*p == '%' && (hi = g_ascii_xdigit_value(p[1])) >= 0 &&
		    (lo = g_ascii_xdigit_value(p[2])) >= 0) {
			g_string_append_c(out, (gchar)((hi << 4) | lo));
			p += 2;
			continue;
		}
		g_string_append_c(out, *p);
	}
	return g_string_free(out, FALSE);
}

gchar *
sfl_grpc_status_describe(const SflGrpcStatus *status)
{
	GString *out = g_string_new(sfl_grpc_code_name(status->code));

	if (status->message != NULL && status->message[0] != '\0') {
		g_autofree gchar *clean = sfl_redact(status->message);
		g_string_append_printf(out, ": %s", clean);
	}
	if (status->error_code != NULL)
		g_string_append_printf(out, " (error-code %s)", status->error_code);
	if (!status->has_trailers && status->http_status != 0 && status->http_status != 200)
		g_string_append_printf(out, " (HTTP %u without grpc-status)", status->http_status);
	return g_string_free(out, FALSE);
}

gint
sfl_grpc_status_to_sfl_error(const SflGrpcStatus *status)
{
	switch (status->code) {
	case SFL_GRPC_UNAUTHENTICATED:
		return SFL_ERROR_AUTH;
	case SFL_GRPC_NOT_FOUND:
		return SFL_ERROR_NOT_FOUND;
	case SFL_GRPC_RESOURCE_EXHAUSTED:
		return SFL_ERROR_THROTTLED;
	case SFL_GRPC_INVALID_ARGUMENT:
	case SFL_GRPC_PERMISSION_DENIED:
	case SFL_GRPC_UNIMPLEMENTED:
	case SFL_GRPC_FAILED_PRECONDITION:
		return SFL_ERROR_REJECTED;
	default:
		return SFL_ERROR_TRANSIENT;
	}
}

void
sfl_grpc_status_clear(SflGrpcStatus *status)
{
	g_clear_pointer(&status->message, g_free);
	g_clear_pointer(&status->error_code, g_free);
	memset(status, 0, sizeof(*status));
}

/* --- the call ------------------------------------------------------------------------------- */

static void
sfl_grpc_call_destroy(SflGrpcCall *self)
{
	sfl_clear_source(&self->unpause_source);
	sfl_clear_source(&self->cleanup_source);
	sfl_http_release_transfer(&self->loop, self->easy, self->started && !self->finished,
				  self->headers);
	g_byte_array_unref(self->out);
	g_byte_array_unref(self->in);
	g_free(self->grpc_message);
	g_free(self->error_code);
	g_free(self->protocol_error);
	g_free(self->url);
	g_free(self);
}

static gboolean
sfl_grpc_call_cleanup_cb(gpointer user_data)
{
	SflGrpcCall *self = user_data;

	g_source_unref(g_steal_pointer(&self->cleanup_source));
	sfl_grpc_call_destroy(self);
	return G_SOURCE_REMOVE;
}

static gboolean
sfl_grpc_call_unpause_cb(gpointer user_data)
{
	SflGrpcCall *self = user_data;

	sfl_clear_source(&self->unpause_source);
	if (self->dead || self->finished || !self->upload_paused)
		return G_SOURCE_REMOVE;
	self->upload_paused = FALSE;
	self->dispatching++;
	/* may call the read callback before it returns */
	curl_easy_pause(self->easy, CURLPAUSE_CONT);
	self->dispatching--;
	return G_SOURCE_REMOVE;
}

/* never unpauses from inside a curl callback: curl is not reentrant there */
static void
sfl_grpc_call_schedule_unpause(SflGrpcCall *self)
{
	if (!self->upload_paused || self->unpause_source != NULL || self->dead || self->finished)
		return;
	sfl_http_defer(&self->unpause_source, G_PRIORITY_DEFAULT, "[sf2loki] grpc unpause",
		       sfl_grpc_call_unpause_cb, self);
}

static size_t
sfl_grpc_read_cb(char *buffer, size_t size, size_t nitems, void *user_data)
{
	SflGrpcCall *self = user_data;
	gsize room = size * nitems;
	gsize avail = 0;

	if (self->dead)
		return CURL_READFUNC_ABORT;
	avail = self->out->len - self->out_off;
	if (avail > 0) {
		gsize n = MIN(avail, room);

		memcpy(buffer, self->out->data + self->out_off, n);
		self->out_off += n;
		if (self->out_off == self->out->len) {
			g_byte_array_set_size(self->out, 0);
			self->out_off = 0;
		}
		return n;
	}
	if (self->send_closed)
		return 0; /* END_STREAM */
	self->upload_paused = TRUE;
	return CURL_READFUNC_PAUSE;
}

static void
sfl_grpc_call_fail_protocol(SflGrpcCall *self, gchar *why)
{
	if (self->protocol_error == NULL)
		self->protocol_error = why;
	else
		g_free(why);
}

/* hands every whole message in @in to the consumer */
static void
sfl_grpc_call_parse(SflGrpcCall *self)
{
	while (!self->dead && self->protocol_error == NULL) {
		gsize avail = self->in->len - self->in_off;
		const guint8 *p = self->in->data + self->in_off;
		guint32 len = 0;

		if (avail < 5)
			break;
		len = ((guint32)p[1] << 24) | ((guint32)p[2] << 16) | ((guint32)p[3] << 8) |
		      (guint32)p[4];
		if (p[0] != 0) {
			/* we never send grpc-accept-encoding, so nothing may arrive compressed */
			sfl_grpc_call_fail_protocol(
				self, g_strdup_printf("compressed message (flag %u) without "
						      "grpc-accept-encoding",
						      p[0]));
			break;
		}
		if (len > SFL_GRPC_MAX_MESSAGE) {
			sfl_grpc_call_fail_protocol(
				self,
				g_strdup_printf("message of %u bytes is over the %d byte limit",
						len, SFL_GRPC_MAX_MESSAGE));
			break;
		}
		if (avail < 5 + (gsize)len)
			break;
		self->in_off += 5 + len;
		if (self->message != NULL)
			self->message(self, p + 5, len, self->user_data);
	}
	if (self->dead)
		return;
	if (self->in_off == self->in->len) {
		g_byte_array_set_size(self->in, 0);
		self->in_off = 0;
	} else if (self->in_off > 64 * 1024) {
		g_byte_array_remove_range(self->in, 0, (guint)self->in_off);
		self->in_off = 0;
	}
}

/**
 * sfl_grpc_call_receive:
 * @self: a call
 * @data: a piece of the response body, as curl hands it over
 * @len: its length
 *
 * Returns: @len, or 0 to abort the transfer (bad framing, or the call was freed)
 */
gsize
sfl_grpc_call_receive(SflGrpcCall *self, const guint8 *data, gsize len)
{
	if (self->dead)
		return 0;
	if (self->protocol_error != NULL)
		return 0; /* aborts the transfer: the stream cannot be trusted any more */
	g_byte_array_append(self->in, data, (guint)len);
	self->dispatching++;
	sfl_grpc_call_parse(self);
	self->dispatching--;
	return self->dead ? 0 : len;
}

/* the framing error that will end the call INTERNAL, or NULL */
const gchar *
sfl_grpc_call_get_protocol_error(SflGrpcCall *self)
{
	return self->protocol_error;
}

static size_t
sfl_grpc_write_cb(char *data, size_t size, size_t nmemb, void *user_data)
{
	return sfl_grpc_call_receive(user_data, (const guint8 *)data, size * nmemb);
}

static void
sfl_grpc_call_got_status(SflGrpcCall *self)
{
	self->got_status = TRUE;
	/*
	 * The server has ended the call. curl 7.88 never completes a transfer whose upload is
	 * paused, so end our side too and let the read callback answer EOF.
	 */
	self->send_closed = TRUE;
	sfl_grpc_call_schedule_unpause(self);
}

static size_t
sfl_grpc_header_cb(char *data, size_t size, size_t nmemb, void *user_data)
{
	SflGrpcCall *self = user_data;
	gsize len = size * nmemb;
	g_autofree gchar *line = NULL;
	const gchar *value = NULL;
	long status = 0;

	if (self->dead)
		return 0;
	switch (sfl_http_header_parse(data, len, &line)) {
	case SFL_HTTP_HEADER_STATUS:
		curl_easy_getinfo(self->easy, CURLINFO_RESPONSE_CODE, &status);
		self->http_status = (guint)status;
		return len;
	case SFL_HTTP_HEADER_END:
		self->in_headers_done = TRUE;
		return len;
	case SFL_HTTP_HEADER_OTHER:
		return len;
	case SFL_HTTP_HEADER_FIELD:
	default:
		break;
	}
	value = strchr(line, ':') + 1;
	if (sfl_http_header_is(line, "grpc-status")) {
		guint64 code = 0;
		if (!g_ascii_string_to_unsigned(value, 10, 0, 16, &code, NULL))
			code = SFL_GRPC_UNKNOWN;
		self->code = (SflGrpcCode)code;
		sfl_grpc_call_got_status(self);
	} else if (sfl_http_header_is(line, "grpc-message")) {
		g_free(self->grpc_message);
		self->grpc_message = sfl_grpc_decode_message(value);
	} else if (sfl_http_header_is(line, "error-code")) {
		g_free(self->error_code);
		self->error_code = g_strdup(value);
	}
	return len;
}

static void
sfl_grpc_call_done_cb(CURL *easy, CURLcode code, gpointer user_data)
{
	SflGrpcCall *self = user_data;
	SflGrpcStatus status = { 0 };
	long version = 0;
	long http = 0;

	(void)easy;
	if (self->dead || self->finished)
		return;
	self->finished = TRUE;
	sfl_clear_source(&self->unpause_source);
	curl_easy_getinfo(self->easy, CURLINFO_RESPONSE_CODE, &http);
	curl_easy_getinfo(self->easy, CURLINFO_HTTP_VERSION, &version);
	self->http_status = (guint)http;
	status.http_status = self->http_status;
	status.has_trailers = self->got_status;
	status.error_code = g_strdup(self->error_code);
	if (self->protocol_error == NULL && self->in->len > self->in_off && code == CURLE_OK)
		self->protocol_error =
			g_strdup_printf("the response ended inside a message (%u bytes "
					"left)",
					(guint)(self->in->len - self->in_off));
	if (self->protocol_error != NULL) {
		status.code = SFL_GRPC_INTERNAL;
		status.message = g_strdup(self->protocol_error);
	} else if (self->got_status) {
		/* what the server said wins over how the connection ended afterwards */
		status.code = self->code;
		status.message = g_strdup(self->grpc_message);
	} else if (code != CURLE_OK) {
		g_autofree gchar *detail = sfl_redact(self->errbuf);
		g_autofree gchar *endpoint = sfl_http_url_endpoint(self->url);

		status.code = SFL_GRPC_UNAVAILABLE;
		status.transport = TRUE;
		status.unanswered = self->http_status == 0 &&
				    (code == CURLE_GOT_NOTHING || code == CURLE_RECV_ERROR ||
				     code == CURLE_SEND_ERROR);
		status.message = g_strdup_printf("%s: %s%s%s", endpoint, curl_easy_strerror(code),
						 detail[0] != '\0' ? ": " : "", detail);
	} else if (http != 0 && version != CURL_HTTP_VERSION_2_0) {
		status.code = SFL_GRPC_UNAVAILABLE;
		status.transport = TRUE;
		status.message = g_strdup("the server did not answer in HTTP/2");
	} else if (http != 200) {
		status.code = sfl_grpc_code_from_http(self->http_status);
		status.message = g_strdup_printf("HTTP status %u", self->http_status);
	} else {
		status.code = SFL_GRPC_UNKNOWN;
		status.message = g_strdup("the response ended without grpc-status");
	}
	self->dispatching++;
	if (self->done != NULL)
		self->done(self, &status, self->user_data);
	self->dispatching--;
	sfl_grpc_status_clear(&status);
}

/**
 * sfl_grpc_call_new:
 * @loop: the curl loop
 * @base_url: "https://host:port" (or "http://host:port" for h2c prior knowledge)
 * @path: the method's :path
 * @metadata: (nullable) (array zero-terminated=1): "key: value" metadata
 * @message: (nullable): a response message arrived
 * @done: (nullable): the call ended
 * @user_data: for the callbacks
 *
 * Returns: (transfer full): a call, not started
 */
SflGrpcCall *
sfl_grpc_call_new(SflCurlLoop *loop, const gchar *base_url, const gchar *path,
		  const gchar *const *metadata, SflGrpcMessageFunc message, SflGrpcDoneFunc done,
		  gpointer user_data)
{
	SflGrpcCall *self = NULL;
	g_autofree gchar *base = NULL;

	g_return_val_if_fail(SFL_IS_CURL_LOOP(loop), NULL);
	g_return_val_if_fail(base_url != NULL && path != NULL, NULL);

	base = g_strdup(base_url);
	while (g_str_has_suffix(base, "/"))
		base[strlen(base) - 1] = '\0';
	self = g_new0(SflGrpcCall, 1);
	self->loop = g_object_ref(loop);
	self->url = g_strconcat(base, path, NULL);
	self->h2c = g_str_has_prefix(base, "http://");
	self->message = message;
	self->done = done;
	self->user_data = user_data;
	self->out = g_byte_array_new();
	self->in = g_byte_array_new();
	/*
	 * call-definition headers first, then metadata
	 * (docs/internals/wire-notes.md, "Request headers")
	 */
	self->headers = curl_slist_append(self->headers, "te: trailers");
	self->headers = curl_slist_append(self->headers, "content-type: application/grpc");
	self->headers = curl_slist_append(self->headers, "grpc-accept-encoding: identity");
	/* curl adds these for a POST of unknown length over HTTP/1.1; never wanted here */
	self->headers = curl_slist_append(self->headers, "Expect:");
	self->headers = curl_slist_append(self->headers, "Accept:");
	/* curl adds it when a half-closed call's body size is known (see start); gRPC has none */
	self->headers = curl_slist_append(self->headers, "Content-Length:");
	for (guint i = 0; metadata != NULL && metadata[i] != NULL; i++)
		self->headers = curl_slist_append(self->headers, metadata[i]);
	return self;
}

/**
 * sfl_grpc_call_start:
 * @self: a call
 * @error: return location for an error
 *
 * Returns: %TRUE when the call was started; @done will run
 */
gboolean
sfl_grpc_call_start(SflGrpcCall *self, GError **error)
{
	CURLcode rc = CURLE_OK;

	g_return_val_if_fail(self != NULL && !self->started, FALSE);

	self->easy = sfl_curl_loop_new_easy(
		self->loop, self->url,
		&(SflCurlEasyOptions){ .user_agent = "grpc-c-sf2loki/" PACKAGE_VERSION }, &rc);
	if (self->easy == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "cannot create a curl handle");
		return FALSE;
	}
	/*
	 * Through an HTTP proxy (HTTPS_PROXY, read by curl) the call always goes in a CONNECT
	 * tunnel: HTTP/2 cannot be forwarded request by request, and an h2c endpoint would
	 * otherwise be sent to the proxy as a plain-HTTP request. No effect without a proxy.
	 */
	rc |= curl_easy_setopt(self->easy, CURLOPT_HTTPPROXYTUNNEL, 1L);
	rc |= curl_easy_setopt(self->easy, CURLOPT_HTTP_VERSION,
			       self->h2c ? (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
					 : (long)CURL_HTTP_VERSION_2TLS);
	/*
	 * One connection per call: curl 7.88 fails a POST started on a reused HTTP/2
	 * connection ("Error in the HTTP2 framing layer"). Calls are few and long-lived.
	 */
	rc |= curl_easy_setopt(self->easy, CURLOPT_FRESH_CONNECT, 1L);
	rc |= curl_easy_setopt(self->easy, CURLOPT_FORBID_REUSE, 1L);
	rc |= curl_easy_setopt(self->easy, CURLOPT_POST, 1L);
	rc |= curl_easy_setopt(self->easy, CURLOPT_READFUNCTION, sfl_grpc_read_cb);
	rc |= curl_easy_setopt(self->easy, CURLOPT_READDATA, self);
	/*
	 * Half-closed before the start (unary calls, the probe): with the size known, curl sets
	 * END_STREAM on the last DATA frame (docs/internals/wire-notes.md, "Half-close"). Otherwise
	 * it only learns of the end from the read callback's next EOF, and a server that refuses
	 * the call at once answers first: HEADERS with END_STREAM, then RST_STREAM NO_ERROR for our
	 * still open side. curl 7.88 handles both in one read and drops the buffered header block,
	 * so the Trailers-Only status turned into "Empty reply from server" (UNAVAILABLE).
	 */
	if (self->send_closed)
		rc |= curl_easy_setopt(self->easy, CURLOPT_POSTFIELDSIZE_LARGE,
				       (curl_off_t)(self->out->len - self->out_off));
	rc |= curl_easy_setopt(self->easy, CURLOPT_HTTPHEADER, self->headers);
	rc |= curl_easy_setopt(self->easy, CURLOPT_ERRORBUFFER, self->errbuf);
	rc |= curl_easy_setopt(self->easy, CURLOPT_WRITEFUNCTION, sfl_grpc_write_cb);
	rc |= curl_easy_setopt(self->easy, CURLOPT_WRITEDATA, self);
	rc |= curl_easy_setopt(self->easy, CURLOPT_HEADERFUNCTION, sfl_grpc_header_cb);
	rc |= curl_easy_setopt(self->easy, CURLOPT_HEADERDATA, self);
	rc |= curl_easy_setopt(self->easy, CURLOPT_CONNECTTIMEOUT_MS,
			       (long)SFL_HTTP_CONNECT_TIMEOUT_MS);
	rc |= curl_easy_setopt(self->easy, CURLOPT_TCP_KEEPALIVE, 1L);
	rc |= curl_easy_setopt(self->easy, CURLOPT_TCP_KEEPIDLE, (long)SFL_GRPC_KEEPALIVE_SEC);
	rc |= curl_easy_setopt(self->easy, CURLOPT_TCP_KEEPINTVL, 10L);
	if (rc != CURLE_OK) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "cannot configure gRPC call: %s",
			    curl_easy_strerror(rc));
		return FALSE;
	}
	if (!sfl_curl_loop_add(self->loop, self->easy, sfl_grpc_call_done_cb, self, error))
		return FALSE;
	self->started = TRUE;
	return TRUE;
}

/**
 * sfl_grpc_call_send:
 * @self: a started or new call
 * @data: a serialized message
 * @len: its length
 *
 * Queues one message; ignored once the send side is closed.
 */
void
sfl_grpc_call_send(SflGrpcCall *self, const guint8 *data, gsize len)
{
	guint8 prefix[5];

	g_return_if_fail(self != NULL);
	g_return_if_fail(len <= G_MAXUINT32);
	if (self->send_closed || self->dead)
		return;
	prefix[0] = 0;
	prefix[1] = (guint8)(len >> 24);
	prefix[2] = (guint8)(len >> 16);
	prefix[3] = (guint8)(len >> 8);
	prefix[4] = (guint8)len;
	g_byte_array_append(self->out, prefix, sizeof(prefix));
	if (len > 0)
		g_byte_array_append(self->out, data, (guint)len);
	sfl_grpc_call_schedule_unpause(self);
}

/**
 * sfl_grpc_call_close_send:
 * @self: a call
 *
 * Half-closes once the queued messages are written.
 */
void
sfl_grpc_call_close_send(SflGrpcCall *self)
{
	g_return_if_fail(self != NULL);
	self->send_closed = TRUE;
	sfl_grpc_call_schedule_unpause(self);
}

gboolean
sfl_grpc_call_can_send(SflGrpcCall *self)
{
	g_return_val_if_fail(self != NULL, FALSE);
	return !self->send_closed && !self->finished && !self->dead;
}

gboolean
sfl_grpc_call_has_response(SflGrpcCall *self)
{
	g_return_val_if_fail(self != NULL, FALSE);
	return self->in_headers_done;
}

gboolean
sfl_grpc_call_is_upload_paused(SflGrpcCall *self)
{
	g_return_val_if_fail(self != NULL, FALSE);
	return self->upload_paused;
}

/**
 * sfl_grpc_call_free:
 * @self: (nullable): a call
 *
 * Cancels a running call. Safe from inside the call's own callbacks.
 */
void
sfl_grpc_call_free(SflGrpcCall *self)
{
	if (self == NULL)
		return;
	g_return_if_fail(!self->dead);
	self->dead = TRUE;
	self->message = NULL;
	self->done = NULL;
	sfl_clear_source(&self->unpause_source);
	if (self->dispatching == 0) {
		sfl_grpc_call_destroy(self);
		return;
	}
	sfl_http_defer(&self->cleanup_source, G_PRIORITY_HIGH, "[sf2loki] grpc call free",
		       sfl_grpc_call_cleanup_cb, self);
}

/* --- unary calls ---------------------------------------------------------------------------- */

typedef struct {
	SflGrpcCall *call;
	SflCurlLoop *loop;
	gchar *base_url;
	GStrv metadata;
	GBytes *request;
	guint attempts;
	gchar *path;
	GBytes *response;
	SflGrpcStatus status;
	gulong cancel_id;
	GCancellable *cancellable;
	GSource *cancel_source;
} SflGrpcUnary;

static void
sfl_grpc_unary_free(gpointer data)
{
	SflGrpcUnary *u = data;

	sfl_clear_source(&u->cancel_source);
	g_clear_pointer(&u->call, sfl_grpc_call_free);
	g_clear_pointer(&u->response, g_bytes_unref);
	sfl_grpc_status_clear(&u->status);
	g_clear_object(&u->loop);
	g_free(u->base_url);
	g_strfreev(u->metadata);
	g_clear_pointer(&u->request, g_bytes_unref);
	g_free(u->path);
	g_free(u);
}

static void
sfl_grpc_unary_disconnect(GTask *task)
{
	SflGrpcUnary *u = g_task_get_task_data(task);

	if (u->cancel_id != 0)
		g_cancellable_disconnect(u->cancellable, u->cancel_id);
	u->cancel_id = 0;
}

static void
sfl_grpc_unary_message(SflGrpcCall *call, const guint8 *data, gsize len, gpointer user_data)
{
	SflGrpcUnary *u = g_task_get_task_data(G_TASK(user_data));

	if (u->response == NULL)
		u->response = g_bytes_new(data, len);
}

static gboolean sfl_grpc_unary_attempt(GTask *task, GError **error);

static void
sfl_grpc_unary_done(SflGrpcCall *call, const SflGrpcStatus *status, gpointer user_data)
{
	GTask *task = user_data;
	SflGrpcUnary *u = g_task_get_task_data(task);

	/*
	 * curl 7.88 now and then ends an HTTP/2 stream without handing over the DATA that came
	 * with the trailers: an OK status with no (or a cut) message. Asking again is safe for
	 * the read-only calls this is used for.
	 */
	/* ...and a connection that closed before any answer (seen under load) is asked again too */
	if (((status->code == SFL_GRPC_OK && u->response == NULL) ||
	     (status->code == SFL_GRPC_INTERNAL && !status->has_trailers) || status->unanswered) &&
	    u->attempts < SFL_GRPC_UNARY_ATTEMPTS) {
		g_autoptr(GError) error = NULL;

		g_debug("gRPC %s: %s; asking again", u->path,
			u->response == NULL ? "no response message" : status->message);
		g_clear_pointer(&u->call, sfl_grpc_call_free);
		g_clear_pointer(&u->response, g_bytes_unref);
		if (sfl_grpc_unary_attempt(task, &error))
			return;
		sfl_grpc_unary_disconnect(task);
		sfl_clear_source(&u->cancel_source);
		g_task_return_error(task, g_steal_pointer(&error));
		g_object_unref(task);
		return;
	}
	sfl_grpc_unary_disconnect(task);
	sfl_clear_source(&u->cancel_source);
	u->status.code = status->code;
	u->status.message = g_strdup(status->message);
	u->status.error_code = g_strdup(status->error_code);
	u->status.http_status = status->http_status;
	u->status.has_trailers = status->has_trailers;
	u->status.transport = status->transport;
	u->status.unanswered = status->unanswered;
	if (status->code == SFL_GRPC_OK && u->response != NULL) {
		g_task_return_pointer(task, g_bytes_ref(u->response),
				      (GDestroyNotify)g_bytes_unref);
	} else {
		g_autofree gchar *what = sfl_grpc_status_describe(status);
		if (status->code == SFL_GRPC_OK)
			g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
						"gRPC %s: OK without a response message", u->path);
		else
			g_task_return_new_error(task, SFL_ERROR,
						sfl_grpc_status_to_sfl_error(status),
						"gRPC %s failed: %s", u->path, what);
	}
	g_object_unref(task);
}

static gboolean
sfl_grpc_unary_cancel_idle(gpointer user_data)
{
	GTask *task = user_data;
	SflGrpcUnary *u = g_task_get_task_data(task);

	g_clear_pointer(&u->cancel_source, g_source_unref);
	sfl_grpc_unary_disconnect(task);
	g_clear_pointer(&u->call, sfl_grpc_call_free);
	g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "gRPC %s cancelled",
				u->path);
	g_object_unref(task);
	return G_SOURCE_REMOVE;
}

static void
sfl_grpc_unary_cancelled(GCancellable *cancellable, gpointer user_data)
{
	GTask *task = user_data;
	SflGrpcUnary *u = g_task_get_task_data(task);

	/* the call is freed from the loop: this may run inside one of its callbacks */
	if (u->cancel_source != NULL || u->call == NULL)
		return;
	u->cancel_source = g_idle_source_new();
	g_source_set_callback(u->cancel_source, sfl_grpc_unary_cancel_idle, task, NULL);
	g_source_attach(u->cancel_source, g_task_get_context(task));
}

static gboolean
sfl_grpc_unary_attempt(GTask *task, GError **error)
{
	SflGrpcUnary *u = g_task_get_task_data(task);
	gsize len = 0;
	const guint8 *data = g_bytes_get_data(u->request, &len);

	u->attempts++;
	u->call =
		sfl_grpc_call_new(u->loop, u->base_url, u->path, (const gchar *const *)u->metadata,
				  sfl_grpc_unary_message, sfl_grpc_unary_done, task);
	sfl_grpc_call_send(u->call, data, len);
	sfl_grpc_call_close_send(u->call);
	return sfl_grpc_call_start(u->call, error);
}

/**
 * sfl_grpc_unary_async:
 * @loop: the curl loop
 * @base_url: see sfl_grpc_call_new()
 * @path: the method's :path
 * @metadata: (nullable): "key: value" metadata
 * @request: the serialized request message
 * @cancellable: (nullable): a cancellable
 * @callback: called with the result
 * @user_data: for @callback
 */
void
sfl_grpc_unary_async(SflCurlLoop *loop, const gchar *base_url, const gchar *path,
		     const gchar *const *metadata, GBytes *request, GCancellable *cancellable,
		     GAsyncReadyCallback callback, gpointer user_data)
{
	GTask *task = g_task_new(NULL, cancellable, callback, user_data);
	SflGrpcUnary *u = g_new0(SflGrpcUnary, 1);
	g_autoptr(GError) error = NULL;

	g_task_set_source_tag(task, sfl_grpc_unary_async);
	g_task_set_task_data(task, u, sfl_grpc_unary_free);
	u->path = g_strdup(path);
	u->cancellable = cancellable;
	u->loop = g_object_ref(loop);
	u->base_url = g_strdup(base_url);
	u->metadata = g_strdupv((gchar **)metadata);
	u->request = g_bytes_ref(request);
	if (!sfl_grpc_unary_attempt(task, &error)) {
		g_task_return_error(task, g_steal_pointer(&error));
		g_object_unref(task);
		return;
	}
	if (cancellable != NULL) {
		/* the handler holds no reference: done or cancel, whichever comes first, drops
		 * the task's own and disconnects the other */
		u->cancel_id = g_cancellable_connect(
			cancellable, G_CALLBACK(sfl_grpc_unary_cancelled), task, NULL);
	}
}

/**
 * sfl_grpc_unary_finish:
 * @result: the result
 * @status_out: (out caller-allocates) (optional): the call's status; clear it after use
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the serialized response
 */
GBytes *
sfl_grpc_unary_finish(GAsyncResult *result, SflGrpcStatus *status_out, GError **error)
{
	GTask *task = G_TASK(result);
	SflGrpcUnary *u = g_task_get_task_data(task);

	if (status_out != NULL) {
		memset(status_out, 0, sizeof(*status_out));
		status_out->code = u->status.code;
		status_out->message = g_strdup(u->status.message);
		status_out->error_code = g_strdup(u->status.error_code);
		status_out->http_status = u->status.http_status;
		status_out->has_trailers = u->status.has_trailers;
		status_out->transport = u->status.transport;
	}
	return g_task_propagate_pointer(task, error);
}
