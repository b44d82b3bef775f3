/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflHttp"

#include "config.h"

#include "sfl-http.h"
#include "sfl-http-private.h"

#include <stdio.h>
#include <string.h>

#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-redact.h"

static const gchar *const sfl_http_months[] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

/**
 * sfl_http_parse_date:
 * @value: a Date or Retry-After header value
 *
 * Returns: the IMF-fixdate as Unix microseconds, or -1 when it is not one
 */
gint64
sfl_http_parse_date(const gchar *value)
{
	g_autoptr(GDateTime) dt = NULL;
	gchar weekday[4] = { 0 };
	gchar month[4] = { 0 };
	gint day = 0, year = 0, hour = 0, minute = 0, second = 0;
	gint mon = -1;

	if (sscanf(value, "%3s, %d %3s %d %d:%d:%d GMT", weekday, &day, month, &year, &hour,
		   &minute, &second) != 7)
		return -1;
	for (guint i = 0; i < G_N_ELEMENTS(sfl_http_months); i++) {
		if (g_strcmp0(month, sfl_http_months[i]) == 0)
			mon = (gint)i + 1;
	}
	if (mon < 0)
		return -1;
	dt = g_date_time_new_utc(year, mon, day, hour, minute, second);
	if (dt == NULL)
		return -1;
	return g_date_time_to_unix(dt) * G_USEC_PER_SEC;
}

/**
 * sfl_http_url_endpoint:
 * @url: an http(s) URL, perhaps with credentials in it
 *
 * Names a peer in an error without its credentials or path: userinfo, query and fragment may
 * all hold secrets (sink.loki.url may carry a user and token).
 *
 * Returns: (transfer full): "host:port" (the scheme's port when the URL has none; an IPv6
 *   host in brackets), or "(unparsable URL)"
 */
gchar *
sfl_http_url_endpoint(const gchar *url)
{
	g_autoptr(GUri) uri = NULL;
	const gchar *host = NULL;
	gint port = -1;

	g_return_val_if_fail(url != NULL, NULL);
	uri = g_uri_parse(url, G_URI_FLAGS_NONE, NULL);
	if (uri == NULL || g_uri_get_host(uri) == NULL)
		return g_strdup("(unparsable URL)");
	host = g_uri_get_host(uri);
	port = g_uri_get_port(uri);
	if (port < 0)
		port = g_ascii_strcasecmp(g_uri_get_scheme(uri), "https") == 0 ? 443 : 80;
	if (strchr(host, ':') != NULL)
		return g_strdup_printf("[%s]:%d", host, port);
	return g_strdup_printf("%s:%d", host, port);
}

struct _SflHttpResponse {
	guint status;
	GPtrArray *headers; /* "Name: value", of the last response only */
	GBytes *body;
	gboolean truncated;
};

typedef struct {
	SflCurlLoop *loop;
	CURL *easy;
	struct curl_slist *headers;
	GBytes *body;
	GSource *cancel_source;
	SflHttpResponse *response;
	GByteArray *response_body;
	gsize max_body;
	gchar *endpoint; /* host:port, for errors: never the URL, which may hold credentials */
	gchar errbuf[CURL_ERROR_SIZE];
} SflHttpRequest;

static void
sfl_http_request_free(SflHttpRequest *req)
{
	sfl_clear_source(&req->cancel_source);
	if (req->easy != NULL) {
		sfl_curl_loop_remove(req->loop, req->easy);
		curl_easy_cleanup(req->easy);
	}
	curl_slist_free_all(req->headers);
	g_clear_pointer(&req->body, g_bytes_unref);
	g_clear_pointer(&req->response, sfl_http_response_free);
	g_clear_pointer(&req->response_body, g_byte_array_unref);
	g_clear_object(&req->loop);
	g_free(req->endpoint);
	g_free(req);
}

void
sfl_http_response_free(SflHttpResponse *self)
{
	if (self == NULL)
		return;
	g_ptr_array_unref(self->headers);
	g_clear_pointer(&self->body, g_bytes_unref);
	g_free(self);
}

/**
 * sfl_http_status_class:
 * @status: an HTTP status code
 *
 * Returns: what @status means to a client
 */
SflHttpClass
sfl_http_status_class(guint status)
{
	if (status >= 200 && status < 300)
		return SFL_HTTP_CLASS_SUCCESS;
	if (status >= 500)
		return SFL_HTTP_CLASS_SERVER;
	switch (status) {
	case 401:
	case 403:
		return SFL_HTTP_CLASS_AUTH;
	case 404:
		return SFL_HTTP_CLASS_NOT_FOUND;
	case 408:
		return SFL_HTTP_CLASS_TIMEOUT;
	case 409:
	case 412:
		return SFL_HTTP_CLASS_CONFLICT;
	case 429:
		return SFL_HTTP_CLASS_THROTTLED;
	default:
		return SFL_HTTP_CLASS_REJECTED;
	}
}

/**
 * sfl_http_class_is_retryable:
 * @klass: a class from sfl_http_status_class()
 *
 * Returns: %TRUE when the same request may succeed later: throttling, a request timeout or a
 *   server error
 */
gboolean
sfl_http_class_is_retryable(SflHttpClass klass)
{
	return klass == SFL_HTTP_CLASS_THROTTLED || klass == SFL_HTTP_CLASS_TIMEOUT ||
	       klass == SFL_HTTP_CLASS_SERVER;
}

/**
 * sfl_http_class_error_code:
 * @klass: a class other than %SFL_HTTP_CLASS_SUCCESS
 *
 * Returns: the %SFL_ERROR code that tells the caller what to do next
 */
SflError
sfl_http_class_error_code(SflHttpClass klass)
{
	switch (klass) {
	case SFL_HTTP_CLASS_AUTH:
		return SFL_ERROR_AUTH;
	case SFL_HTTP_CLASS_NOT_FOUND:
		return SFL_ERROR_NOT_FOUND;
	case SFL_HTTP_CLASS_CONFLICT:
		return SFL_ERROR_CONFLICT;
	case SFL_HTTP_CLASS_THROTTLED:
		return SFL_ERROR_THROTTLED;
	case SFL_HTTP_CLASS_TIMEOUT:
	case SFL_HTTP_CLASS_SERVER:
		return SFL_ERROR_TRANSIENT;
	case SFL_HTTP_CLASS_SUCCESS:
		/* not an error: a caller asking is a bug */
		return SFL_ERROR_INTERNAL;
	case SFL_HTTP_CLASS_REJECTED:
	default:
		return SFL_ERROR_REJECTED;
	}
}

/**
 * sfl_http_response_get_status:
 * @self: a response
 *
 * Returns: the HTTP status code
 */
guint
sfl_http_response_get_status(const SflHttpResponse *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->status;
}

/**
 * sfl_http_response_get_header:
 * @self: a response
 * @name: a header name, any case
 *
 * Returns: (transfer none) (nullable): the last value of @name, without surrounding blanks
 */
const gchar *
sfl_http_response_get_header(const SflHttpResponse *self, const gchar *name)
{
	gsize name_len = 0;

	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(name != NULL, NULL);
	name_len = strlen(name);
	for (guint i = self->headers->len; i > 0; i--) {
		const gchar *line = g_ptr_array_index(self->headers, i - 1);

		if (g_ascii_strncasecmp(line, name, name_len) == 0 && line[name_len] == ':')
			return line + name_len + 1;
	}
	return NULL;
}

/**
 * sfl_http_response_get_body:
 * @self: a response
 *
 * Returns: (transfer none): the body, at most the request's cap (%SFL_HTTP_MAX_BODY unless
 *   sfl_http_request_bounded_async() set another) bytes of it
 */
GBytes *
sfl_http_response_get_body(const SflHttpResponse *self)
{
	g_return_val_if_fail(self != NULL, NULL);
	return self->body;
}

/**
 * sfl_http_response_get_body_truncated:
 * @self: a response
 *
 * Returns: %TRUE when the peer sent more than the request's body cap
 */
gboolean
sfl_http_response_get_body_truncated(const SflHttpResponse *self)
{
	g_return_val_if_fail(self != NULL, FALSE);
	return self->truncated;
}

static size_t
sfl_http_write_cb(char *data, size_t size, size_t nmemb, void *user_data)
{
	SflHttpRequest *req = user_data;
	gsize len = size * nmemb;
	gsize room = req->max_body - MIN(req->response_body->len, req->max_body);

	if (len > room)
		req->response->truncated = TRUE;
	g_byte_array_append(req->response_body, (const guint8 *)data, (guint)MIN(len, room));
	return len;
}

/*
 * A server that answers 5xx may be half broken (a proxy whose upstream died, a node being
 * drained); the caller's retry should get a fresh connection, possibly to another node, rather
 * than the same socket from the pool. curl reads the flag when the transfer is done, so setting
 * it here, after the status line and before the body, keeps this connection out of the pool.
 * Transport failures need nothing: curl already closes a connection whose transfer failed.
 */
static void
sfl_http_check_status_line(SflHttpRequest *req, const gchar *line)
{
	const gchar *code = strchr(line, ' ');
	guint64 status = 0;

	if (code == NULL || !g_ascii_isdigit(code[1]))
		return;
	status = g_ascii_strtoull(code + 1, NULL, 10);
	if (sfl_http_status_class((guint)MIN(status, G_MAXUINT)) == SFL_HTTP_CLASS_SERVER)
		(void)curl_easy_setopt(req->easy, CURLOPT_FORBID_REUSE, 1L);
}

/* keeps one header line as curl hands it over; returns TRUE for a status line */
static gboolean
sfl_http_response_add_header(SflHttpResponse *self, const gchar *data, gsize len)
{
	g_autofree gchar *line = g_strndup(data, len);
	gchar *colon = NULL;

	g_strchomp(line);
	/* a new status line (interim 1xx response) starts a new header set */
	if (g_str_has_prefix(line, "HTTP/")) {
		g_ptr_array_set_size(self->headers, 0);
		return TRUE;
	}
	colon = strchr(line, ':');
	if (colon == NULL || colon == line)
		return FALSE;
	g_strchug(colon + 1);
	g_ptr_array_add(self->headers, g_steal_pointer(&line));
	return FALSE;
}

static size_t
sfl_http_header_cb(char *data, size_t size, size_t nmemb, void *user_data)
{
	SflHttpRequest *req = user_data;
	gsize len = size * nmemb;

	if (sfl_http_response_add_header(req->response, data, len)) {
		g_autofree gchar *line = g_strndup(data, len);

		sfl_http_check_status_line(req, line);
	}
	return len;
}

/**
 * sfl_http_response_new_parsed:
 * @status: the HTTP status
 * @header_block: the header lines as the peer sent them, status line included, each ending
 *   in a newline (the last one need not)
 * @len: the length of @header_block
 * @body: the body
 * @truncated: whether @body was cut at a cap
 *
 * A response built the way a transfer builds one, line by line through the same header
 * handling, without a transfer: for tests and fuzz targets (sfl-http-private.h).
 *
 * Returns: (transfer full): the response
 */
SflHttpResponse *
sfl_http_response_new_parsed(guint status, const gchar *header_block, gsize len, GBytes *body,
			     gboolean truncated)
{
	SflHttpResponse *self = NULL;
	gsize from = 0;

	g_return_val_if_fail(body != NULL, NULL);
	self = g_new0(SflHttpResponse, 1);
	self->status = status;
	self->headers = g_ptr_array_new_with_free_func(g_free);
	for (gsize i = 0; i < len; i++) {
		if (header_block[i] == '\n' || i + 1 == len) {
			(void)sfl_http_response_add_header(self, header_block + from, i + 1 - from);
			from = i + 1;
		}
	}
	self->body = g_bytes_ref(body);
	self->truncated = truncated;
	return self;
}

static void
sfl_http_done_cb(CURL *easy, CURLcode code, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflHttpRequest *req = g_task_get_task_data(task);
	long status = 0;

	sfl_clear_source(&req->cancel_source);
	if (code != CURLE_OK) {
		g_autofree gchar *detail = sfl_redact(req->errbuf[0] != '\0' ? req->errbuf : "");

		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"HTTP transfer to %s failed: %s%s%s", req->endpoint,
					curl_easy_strerror(code), detail[0] != '\0' ? ": " : "",
					detail);
		return;
	}
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	req->response->status = (guint)status;
	req->response->body = g_byte_array_free_to_bytes(g_steal_pointer(&req->response_body));
	g_task_return_pointer(task, g_steal_pointer(&req->response),
			      (GDestroyNotify)sfl_http_response_free);
}

static gboolean
sfl_http_cancelled_cb(GCancellable *cancellable, gpointer user_data)
{
	GTask *task = G_TASK(user_data);
	SflHttpRequest *req = g_task_get_task_data(task);

	(void)cancellable;
	sfl_clear_source(&req->cancel_source);
	/* dispatched from the main loop, never from inside a curl callback */
	sfl_curl_loop_remove(req->loop, req->easy);
	g_task_return_error_if_cancelled(task);
	/* drop the reference the transfer held */
	g_object_unref(task);
	return G_SOURCE_REMOVE;
}

static gboolean
sfl_http_setup(SflHttpRequest *req, const gchar *method, const gchar *url,
	       const gchar *const *headers, const SflHttpOptions *options, GError **error)
{
	SflCurlEasyOptions easy_options = { .https_only = options->https_only,
					    .tls = options->tls };
	CURLcode rc = CURLE_OK;
	CURL *easy = NULL;

	easy = req->easy = sfl_curl_loop_new_easy(req->loop, url, &easy_options, &rc);
	if (easy == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "cannot create a curl handle");
		return FALSE;
	}
	for (guint i = 0; headers != NULL && headers[i] != NULL; i++)
		req->headers = curl_slist_append(req->headers, headers[i]);
	/* no "Expect: 100-continue" round trip before large bodies */
	req->headers = curl_slist_append(req->headers, "Expect:");

	rc |= curl_easy_setopt(easy, CURLOPT_HTTPHEADER, req->headers);
	rc |= curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, req->errbuf);
	rc |= curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, sfl_http_write_cb);
	rc |= curl_easy_setopt(easy, CURLOPT_WRITEDATA, req);
	rc |= curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, sfl_http_header_cb);
	rc |= curl_easy_setopt(easy, CURLOPT_HEADERDATA, req);
	if (options->timeout_ms > 0)
		rc |= curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)options->timeout_ms);
	if (options->connect_timeout_ms > 0)
		rc |= curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
				       (long)options->connect_timeout_ms);
	if (req->body != NULL) {
		gsize len = 0;
		gconstpointer data = g_bytes_get_data(req->body, &len);

		rc |= curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		rc |= curl_easy_setopt(easy, CURLOPT_POSTFIELDS, len > 0 ? data : "");
	}
	if (g_strcmp0(method, "GET") == 0 && req->body == NULL)
		rc |= curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
	else if (g_strcmp0(method, "POST") != 0 || req->body == NULL)
		rc |= curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
	if (rc != CURLE_OK) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL,
			    "cannot configure HTTP request: %s", curl_easy_strerror(rc));
		return FALSE;
	}
	return TRUE;
}

static void
sfl_http_request_start(SflCurlLoop *loop, const gchar *method, const gchar *url,
		       const gchar *const *headers, GBytes *body, const SflHttpOptions *options,
		       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data,
		       gpointer source_tag)
{
	g_autoptr(GTask) task = NULL;
	g_autoptr(GError) error = NULL;
	SflHttpRequest *req = NULL;

	task = g_task_new(NULL, cancellable, callback, user_data);
	g_task_set_source_tag(task, source_tag);
	req = g_new0(SflHttpRequest, 1);
	req->loop = g_object_ref(loop);
	req->body = body != NULL ? g_bytes_ref(body) : NULL;
	req->max_body = options->max_body > 0 ? options->max_body : SFL_HTTP_MAX_BODY;
	req->endpoint = sfl_http_url_endpoint(url);

	req->response = g_new0(SflHttpResponse, 1);
	req->response->headers = g_ptr_array_new_with_free_func(g_free);
	req->response_body = g_byte_array_new();
	g_task_set_task_data(task, req, (GDestroyNotify)sfl_http_request_free);

	if (g_task_return_error_if_cancelled(task))
		return;
	if (!sfl_http_setup(req, method, url, headers, options, &error)) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	/* the transfer holds one task reference until it finishes or is cancelled */
	if (!sfl_curl_loop_add(loop, req->easy, sfl_http_done_cb, g_object_ref(task), &error)) {
		g_object_unref(task);
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	if (cancellable != NULL) {
		req->cancel_source = g_cancellable_source_new(cancellable);
		g_source_set_callback(req->cancel_source,
				      (GSourceFunc)(void (*)(void))sfl_http_cancelled_cb, task,
				      NULL);
		g_source_attach(req->cancel_source, g_main_context_get_thread_default());
	}
}

/**
 * sfl_http_request_async:
 * @loop: the curl loop
 * @method: "GET", "POST", ...
 * @url: an http or https URL
 * @headers: (nullable) (array zero-terminated=1): "Name: value" strings
 * @body: (nullable): the request body, kept alive until the request finishes
 * @timeout_ms: the whole request's deadline, 0 for none
 * @cancellable: (nullable): aborts the request
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_http_request_async(SflCurlLoop *loop, const gchar *method, const gchar *url,
		       const gchar *const *headers, GBytes *body, guint timeout_ms,
		       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_CURL_LOOP(loop));
	g_return_if_fail(method != NULL);
	g_return_if_fail(url != NULL);

	sfl_http_request_start(loop, method, url, headers, body,
			       &(SflHttpOptions){ .timeout_ms = timeout_ms }, cancellable, callback,
			       user_data, sfl_http_request_async);
}

/**
 * sfl_http_request_bounded_async:
 * @loop: the curl loop
 * @method: "GET", "POST", ...
 * @url: an http or https URL
 * @headers: (nullable) (array zero-terminated=1): "Name: value" strings
 * @body: (nullable): the request body, kept alive until the request finishes
 * @timeout_ms: the whole request's deadline, 0 for none
 * @max_body: how many response body bytes are kept; more sets the truncated flag
 * @cancellable: (nullable): aborts the request
 * @callback: completion
 * @user_data: for @callback
 *
 * Like sfl_http_request_async() with the body cap chosen by the caller (SOQL pages are
 * several MB) and a connect timeout of %SFL_HTTP_CONNECT_TIMEOUT_MS.
 */
void
sfl_http_request_bounded_async(SflCurlLoop *loop, const gchar *method, const gchar *url,
			       const gchar *const *headers, GBytes *body, guint timeout_ms,
			       gsize max_body, GCancellable *cancellable,
			       GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_CURL_LOOP(loop));
	g_return_if_fail(method != NULL);
	g_return_if_fail(url != NULL);
	g_return_if_fail(max_body > 0);

	sfl_http_request_start(loop, method, url, headers, body,
			       &(SflHttpOptions){ .timeout_ms = timeout_ms,
						  .connect_timeout_ms = SFL_HTTP_CONNECT_TIMEOUT_MS,
						  .max_body = max_body },
			       cancellable, callback, user_data, sfl_http_request_bounded_async);
}

/**
 * sfl_http_request_full_async:
 * @loop: the curl loop
 * @method: "GET", "POST", ...
 * @url: an http or https URL
 * @headers: (nullable) (array zero-terminated=1): "Name: value" strings
 * @body: (nullable): the request body, kept alive until the request finishes
 * @options: timeouts, body cap, protocols and TLS material; read only during this call
 * @cancellable: (nullable): aborts the request
 * @callback: completion
 * @user_data: for @callback
 *
 * Like sfl_http_request_async() with every knob the caller's (a peer with its own CA or a
 * client certificate, a larger body cap, https only).
 */
void
sfl_http_request_full_async(SflCurlLoop *loop, const gchar *method, const gchar *url,
			    const gchar *const *headers, GBytes *body,
			    const SflHttpOptions *options, GCancellable *cancellable,
			    GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_CURL_LOOP(loop));
	g_return_if_fail(method != NULL);
	g_return_if_fail(url != NULL);
	g_return_if_fail(options != NULL);

	sfl_http_request_start(loop, method, url, headers, body, options, cancellable, callback,
			       user_data, sfl_http_request_full_async);
}

/**
 * sfl_http_request_finish:
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full): the response, or %NULL on transport failure or cancellation
 */
SflHttpResponse *
sfl_http_request_finish(GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}
