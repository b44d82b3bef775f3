/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflSfRest"

#include "config.h"

#include "sfl-sf-rest.h"
#include "sfl-sf-rest-private.h"

#include <stdio.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-http-stream.h"
#include "sfl-http.h"

/* a SOQL page may be several MB; past this the org is misbehaving */
#define SFL_SF_REST_QUERY_MAX_BODY   (32 * 1024 * 1024)
#define SFL_SF_REST_QUERY_TIMEOUT_MS (120 * 1000)
/* enough of an error body to find REQUEST_LIMIT_EXCEEDED and Salesforce's message */
#define SFL_SF_REST_ERROR_BODY_MAX (4 * 1024)

struct _SflSfRest {
	GObject parent_instance;
	SflCurlLoop *loop;
	SflSfAuth *auth;
	gchar *api_version; /* "64.0", without the "v" */

	gboolean have_skew;
	gint64 skew_usec;
	gboolean have_usage;
	gint64 usage_used;
	gint64 usage_max;
	guint64 throttled;
};

G_DEFINE_TYPE(SflSfRest, sfl_sf_rest, G_TYPE_OBJECT)

/* --- response bookkeeping -------------------------------------------------------------------- */

/* "api-usage=25/15000" or "api-usage=25/15000; api-bursts=1/100" */
static gboolean
sfl_sf_rest_parse_limit_info(const gchar *value, gint64 *used, gint64 *max)
{
	const gchar *p = value != NULL ? strstr(value, "api-usage=") : NULL;
	gchar *end = NULL;

	if (p == NULL)
		return FALSE;
	p += strlen("api-usage=");
	*used = g_ascii_strtoll(p, &end, 10);
	if (end == p || *end != '/' || *used < 0)
		return FALSE;
	p = end + 1;
	*max = g_ascii_strtoll(p, &end, 10);
	return end != p && *max >= 0;
}

void
sfl_sf_rest_note_headers(SflSfRest *self, const gchar *date, const gchar *limit_info)
{
	gint64 used = 0, max = 0;
	gint64 server = date != NULL ? sfl_http_parse_date(date) : -1;

	if (server >= 0) {
		self->skew_usec = server - sfl_clock_wall_usec(sfl_sf_auth_get_clock(self->auth));
		self->have_skew = TRUE;
	}
	if (sfl_sf_rest_parse_limit_info(limit_info, &used, &max)) {
		self->usage_used = used;
		self->usage_max = max;
		self->have_usage = TRUE;
	}
}

/*
 * One error for every non-2xx answer of the REST API: an array of {message, errorCode}
 * (docs/internals/wire-notes.md, "Queries and errors"), the error code chosen from its errorCode.
 */
GError *
sfl_sf_rest_http_error(SflSfRest *self, const gchar *what, guint status, const gchar *data,
		       gsize len)
{
	g_autoptr(json_t) doc = NULL;
	g_autofree gchar *detail = NULL;
	json_t *first = NULL;
	const gchar *code = NULL;
	const gchar *message = NULL;
	gboolean limit_exceeded = FALSE;
	SflError error_code = SFL_ERROR_REJECTED;
	SflHttpClass klass;
	GError *error = NULL;

	if (data == NULL)
		len = 0;
	doc = json_loadb(data != NULL ? data : "", len, 0, NULL);
	first = json_is_array(doc) ? json_array_get(doc, 0) : doc;
	if (json_is_object(first)) {
		code = json_string_value(json_object_get(first, "errorCode"));
		message = json_string_value(json_object_get(first, "message"));
		if (code == NULL)
			code = json_string_value(json_object_get(first, "error"));
		if (message == NULL)
			message = json_string_value(json_object_get(first, "error_description"));
	}
	if (code != NULL) {
		g_autofree gchar *joined =
			g_strdup_printf("%s: %s", code, message != NULL ? message : "");

		detail = sfl_sf_excerpt(joined, strlen(joined));
	} else {
		detail = len > 0 ? sfl_sf_excerpt(data, len) : g_strdup("(empty body)");
	}
	limit_exceeded = len > 0 && g_strstr_len(data, (gssize)len, "REQUEST_LIMIT_EXCEEDED");
	klass = sfl_http_status_class(status);
	if ((status == 403 && limit_exceeded) || klass == SFL_HTTP_CLASS_THROTTLED) {
		self->throttled++;
		error_code = SFL_ERROR_THROTTLED;
	} else if (klass == SFL_HTTP_CLASS_SERVER || klass == SFL_HTTP_CLASS_TIMEOUT) {
		error_code = SFL_ERROR_TRANSIENT;
	} else if (status == 401) {
		error_code = SFL_ERROR_AUTH;
	}
	error = g_error_new(SFL_ERROR, error_code, "%s: HTTP %u %s", what, status, detail);
	sfl_error_set_http_status(error, status);
	sfl_error_set_peer_code(error, code);
	return error;
}

static gchar *
sfl_sf_rest_bearer(const SflSfToken *token)
{
	return g_strconcat("Authorization: Bearer ", token->access_token, NULL);
}

/* --- query ------------------------------------------------------------------------------------ */

typedef struct {
	gchar *path; /* of the next page, relative to the instance URL */
	json_t *records;
	SflSfToken *token;
	gboolean retried; /* the 401 re-mint of this page was used */
	guint pages;
	gchar *what; /* (nullable) a plain GET of one JSON object, named for errors */
} SflSfRestQuery;

static void
sfl_sf_rest_query_free(SflSfRestQuery *query)
{
	g_free(query->path);
	g_free(query->what);
	json_decref(query->records);
	g_clear_pointer(&query->token, sfl_sf_token_unref);
	g_free(query);
}

static void sfl_sf_rest_query_next(GTask *task);

/* a plain GET's 2xx: one JSON object, or a transient error (SFL-0010) */
static void
sfl_sf_rest_get_done(GTask *task, guint status, const gchar *data, gsize len, gboolean truncated)
{
	SflSfRestQuery *query = g_task_get_task_data(task);
	json_t *doc = NULL;

	if (!truncated)
		doc = json_loadb(data != NULL ? data : "", len, 0, NULL);
	if (!json_is_object(doc)) {
		g_autofree gchar *excerpt = sfl_sf_excerpt(data, len);

		if (doc != NULL)
			json_decref(doc);
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"%s: HTTP %u body is not a JSON object: %s", query->what,
					status, excerpt);
		return;
	}
	g_task_return_pointer(task, doc, (GDestroyNotify)json_decref);
}

static void
sfl_sf_rest_query_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflSfRest *self = g_task_get_source_object(task);
	SflSfRestQuery *query = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflHttpResponse) response = NULL;
	g_autoptr(json_t) doc = NULL;
	json_t *records = NULL;
	const gchar *next = NULL;
	const gchar *data = NULL;
	gsize len = 0;
	guint status = 0;

	(void)source;
	response = sfl_http_request_finish(result, &error);
	if (response == NULL) {
		if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			g_prefix_error(&error, "Salesforce query (page %u): ", query->pages + 1);
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	status = sfl_http_response_get_status(response);
	data = g_bytes_get_data(sfl_http_response_get_body(response), &len);
	sfl_sf_rest_note_headers(self, sfl_http_response_get_header(response, "Date"),
				 sfl_http_response_get_header(response, "Sforce-Limit-Info"));
	if (status == 401 && !query->retried) {
		query->retried = TRUE;
		sfl_sf_auth_invalidate(self->auth, query->token);
		g_clear_pointer(&query->token, sfl_sf_token_unref);
		sfl_sf_rest_query_next(g_steal_pointer(&task));
		return;
	}
	if (sfl_http_status_class(status) != SFL_HTTP_CLASS_SUCCESS) {
		g_task_return_error(
			task, sfl_sf_rest_http_error(
				      self, query->what != NULL ? query->what : "Salesforce query",
				      status, data, len));
		return;
	}
	if (query->what != NULL) {
		sfl_sf_rest_get_done(task, status, data, len,
				     sfl_http_response_get_body_truncated(response));
		return;
	}
	if (sfl_http_response_get_body_truncated(response)) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"Salesforce query: HTTP %u page larger than %u bytes",
					status, (guint)SFL_SF_REST_QUERY_MAX_BODY);
		return;
	}
	doc = json_loadb(data != NULL ? data : "", len, 0, NULL);
	records = json_object_get(doc, "records");
	if (!json_is_array(records)) {
		g_autofree gchar *excerpt = sfl_sf_excerpt(data, len);

		/* SFL-0010: a proxy page or a truncated answer is a hiccup, not a crash */
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"Salesforce query: HTTP %u body is not a query result: %s",
					status, excerpt);
		return;
	}
	json_array_extend(query->records, records);
	query->pages++;
	next = json_string_value(json_object_get(doc, "nextRecordsUrl"));
	if (json_is_true(json_object_get(doc, "done")) || next == NULL) {
		g_task_return_pointer(task, json_incref(query->records),
				      (GDestroyNotify)json_decref);
		return;
	}
	if (next[0] != '/') {
		g_autofree gchar *excerpt = sfl_sf_excerpt(next, strlen(next));

		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"Salesforce query: nextRecordsUrl is not a path: %s",
					excerpt);
		return;
	}
	g_free(query->path);
	query->path = g_strdup(next);
	query->retried = FALSE;
	/* the next page takes a fresh look at the provider's cache */
	g_clear_pointer(&query->token, sfl_sf_token_unref);
	sfl_sf_rest_query_next(g_steal_pointer(&task));
}

static void
sfl_sf_rest_query_token_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflSfRestQuery *query = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;

	g_clear_pointer(&query->token, sfl_sf_token_unref);
	query->token = sfl_sf_auth_get_token_finish(SFL_SF_AUTH(source), result, &error);
	if (query->token == NULL) {
		if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			g_prefix_error(&error, "Salesforce query: ");
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	sfl_sf_rest_query_next(g_steal_pointer(&task));
}

static void
sfl_sf_rest_query_next(GTask *owned_task)
{
	g_autoptr(GTask) task = owned_task;
	SflSfRest *self = g_task_get_source_object(task);
	SflSfRestQuery *query = g_task_get_task_data(task);
	GCancellable *cancellable = g_task_get_cancellable(task);
	g_autofree gchar *url = NULL;
	g_autofree gchar *bearer = NULL;
	const gchar *headers[3] = { NULL };

	if (g_task_return_error_if_cancelled(task))
		return;
	/* every page asks: the provider answers from its cache, or re-mints once for everyone */
	if (query->token == NULL) {
		sfl_sf_auth_get_token_async(self->auth, cancellable, sfl_sf_rest_query_token_cb,
					    g_steal_pointer(&task));
		return;
	}
	url = g_strconcat(query->token->instance_url, query->path, NULL);
	bearer = sfl_sf_rest_bearer(query->token);
	headers[0] = bearer;
	headers[1] = "Accept: application/json";
	sfl_http_request_bounded_async(self->loop, "GET", url, headers, NULL,
				       SFL_SF_REST_QUERY_TIMEOUT_MS, SFL_SF_REST_QUERY_MAX_BODY,
				       cancellable, sfl_sf_rest_query_done_cb,
				       g_steal_pointer(&task));
}

/**
 * sfl_sf_rest_query_async:
 * @self: a client
 * @soql: the query
 * @tooling: use the Tooling API
 * @cancellable: (nullable): aborts the query
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_sf_rest_query_async(SflSfRest *self, const gchar *soql, gboolean tooling,
			GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	g_autofree gchar *q = NULL;
	SflSfRestQuery *query = NULL;

	g_return_if_fail(SFL_IS_SF_REST(self));
	g_return_if_fail(soql != NULL);

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_sf_rest_query_async);
	query = g_new0(SflSfRestQuery, 1);
	query->records = json_array();
	/* every reserved character escaped: spaces become %20 */
	q = g_uri_escape_string(soql, NULL, FALSE);
	query->path = g_strdup_printf("/services/data/v%s/%squery?q=%s", self->api_version,
				      tooling ? "tooling/" : "", q);
	g_task_set_task_data(task, query, (GDestroyNotify)sfl_sf_rest_query_free);
	sfl_sf_rest_query_next(g_steal_pointer(&task));
}

/**
 * sfl_sf_rest_query_finish:
 * @self: a client
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): a JSON array of every record
 */
json_t *
sfl_sf_rest_query_finish(SflSfRest *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_sf_rest_get_async:
 * @self: a client
 * @path: under the versioned REST root, e.g. `/limits` or `/sobjects/EventLogFile/describe`
 * @cancellable: (nullable): aborts the call
 * @callback: completion
 * @user_data: for @callback
 *
 * One GET answered by a JSON object; errors are classified like a query's (401 re-mints once).
 */
void
sfl_sf_rest_get_async(SflSfRest *self, const gchar *path, GCancellable *cancellable,
		      GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	SflSfRestQuery *query = NULL;

	g_return_if_fail(SFL_IS_SF_REST(self));
	g_return_if_fail(path != NULL && path[0] == '/');

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_sf_rest_get_async);
	query = g_new0(SflSfRestQuery, 1);
	query->records = json_array();
	query->path = g_strdup_printf("/services/data/v%s%s", self->api_version, path);
	query->what = g_strdup_printf("Salesforce GET %s", path);
	g_task_set_task_data(task, query, (GDestroyNotify)sfl_sf_rest_query_free);
	sfl_sf_rest_query_next(g_steal_pointer(&task));
}

/**
 * sfl_sf_rest_get_finish:
 * @self: a client
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the JSON object
 */
json_t *
sfl_sf_rest_get_finish(SflSfRest *self, GAsyncResult *result, GError **error)
{
	return sfl_sf_rest_query_finish(self, result, error);
}

/* --- download --------------------------------------------------------------------------------- */

struct _SflSfDownload {
	gint ref_count;
	gboolean dead;	   /* freed by its owner: no more callbacks */
	gboolean finished; /* @done ran */
	SflSfRest *rest;
	gchar *path;
	gchar *what;
	SflSfDownloadDataFunc data;
	SflSfDownloadDoneFunc done;
	gpointer user_data;

	GCancellable *cancellable;
	SflSfToken *token;
	SflHttpStream *stream;
	gboolean paused;
	gboolean retried;
	guint64 bytes;
	GByteArray *error_body;
};

static SflSfDownload *
sfl_sf_download_ref(SflSfDownload *dl)
{
	dl->ref_count++;
	return dl;
}

static void
sfl_sf_download_unref(SflSfDownload *dl)
{
	if (--dl->ref_count > 0)
		return;
	g_clear_pointer(&dl->stream, sfl_http_stream_free);
	g_clear_pointer(&dl->token, sfl_sf_token_unref);
	g_clear_object(&dl->cancellable);
	g_clear_object(&dl->rest);
	g_byte_array_unref(dl->error_body);
	g_free(dl->path);
	g_free(dl->what);
	g_free(dl);
}

static void
sfl_sf_download_finish(SflSfDownload *dl, const GError *error)
{
	if (dl->dead || dl->finished)
		return;
	dl->finished = TRUE;
	g_clear_pointer(&dl->stream, sfl_http_stream_free);
	if (error != NULL)
		g_debug("%s", error->message);
	/* @done may free @dl */
	sfl_sf_download_ref(dl);
	if (dl->done != NULL)
		dl->done(error, dl->user_data);
	sfl_sf_download_unref(dl);
}

static void sfl_sf_download_start(SflSfDownload *dl);

static void
sfl_sf_download_response_cb(SflHttpStream *stream, guint status, gpointer user_data)
{
	SflSfDownload *dl = user_data;

	(void)status;
	sfl_sf_rest_note_headers(dl->rest, sfl_http_stream_get_header(stream, "Date"),
				 sfl_http_stream_get_header(stream, "Sforce-Limit-Info"));
}

static void
sfl_sf_download_data_cb(SflHttpStream *stream, const gchar *data, gsize len, gpointer user_data)
{
	SflSfDownload *dl = user_data;
	guint status = sfl_http_stream_get_status(stream);

	if (status >= 200 && status < 300) {
		dl->bytes += len;
		if (dl->data != NULL)
			dl->data(data, len, dl->user_data);
		return;
	}
	g_byte_array_append(dl->error_body, (const guint8 *)data,
			    (guint)MIN(len, SFL_SF_REST_ERROR_BODY_MAX - dl->error_body->len));
	if (dl->error_body->len >= SFL_SF_REST_ERROR_BODY_MAX && status != 401) {
		g_autoptr(GError) error = sfl_sf_rest_http_error(
			dl->rest, dl->what, status, (const gchar *)dl->error_body->data,
			dl->error_body->len);

		/* the rest of a large error page tells nothing more */
		sfl_sf_download_finish(dl, error);
	}
}

static void
sfl_sf_download_done_cb(SflHttpStream *stream, const GError *stream_error, guint status,
			gpointer user_data)
{
	SflSfDownload *dl = user_data;
	g_autoptr(GError) error = NULL;

	(void)stream;
	if (stream_error != NULL) {
		error = g_error_new(SFL_ERROR, SFL_ERROR_TRANSIENT, "%s: %s", dl->what,
				    stream_error->message);
		sfl_sf_download_finish(dl, error);
		return;
	}
	if (status == 401 && dl->bytes == 0 && !dl->retried) {
		dl->retried = TRUE;
		sfl_sf_auth_invalidate(sfl_sf_rest_get_auth(dl->rest), dl->token);
		/* safe from inside the stream's own callback */
		g_clear_pointer(&dl->stream, sfl_http_stream_free);
		g_clear_pointer(&dl->token, sfl_sf_token_unref);
		g_byte_array_set_size(dl->error_body, 0);
		sfl_sf_download_start(dl);
		return;
	}
	if (status >= 200 && status < 300) {
		sfl_sf_download_finish(dl, NULL);
		return;
	}
	error = sfl_sf_rest_http_error(dl->rest, dl->what, status,
				       (const gchar *)dl->error_body->data, dl->error_body->len);
	sfl_sf_download_finish(dl, error);
}

static void
sfl_sf_download_token_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflSfDownload *dl = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSfToken) token = NULL;
	g_autofree gchar *url = NULL;
	g_autofree gchar *bearer = NULL;
	const gchar *headers[3] = { NULL };

	token = sfl_sf_auth_get_token_finish(SFL_SF_AUTH(source), result, &error);
	if (dl->dead) {
		sfl_sf_download_unref(dl);
		return;
	}
	if (token == NULL) {
		g_prefix_error(&error, "%s: ", dl->what);
		sfl_sf_download_finish(dl, error);
		sfl_sf_download_unref(dl);
		return;
	}
	dl->token = g_steal_pointer(&token);
	url = g_strconcat(dl->token->instance_url, dl->path, NULL);
	bearer = sfl_sf_rest_bearer(dl->token);
	headers[0] = bearer;
	headers[1] = "Accept: text/csv, */*";
	dl->stream = sfl_http_stream_new(dl->rest->loop, url, headers, sfl_sf_download_response_cb,
					 sfl_sf_download_data_cb, sfl_sf_download_done_cb, dl);
	if (dl->paused)
		sfl_http_stream_pause(dl->stream);
	if (!sfl_http_stream_start(dl->stream, &error)) {
		g_prefix_error(&error, "%s: ", dl->what);
		sfl_sf_download_finish(dl, error);
	}
	sfl_sf_download_unref(dl);
}

static void
sfl_sf_download_start(SflSfDownload *dl)
{
	sfl_sf_auth_get_token_async(sfl_sf_rest_get_auth(dl->rest), dl->cancellable,
				    sfl_sf_download_token_cb, sfl_sf_download_ref(dl));
}

/**
 * sfl_sf_rest_download:
 * @self: a client
 * @path: a path below the instance URL
 * @data: (nullable): each body chunk of a 2xx answer
 * @done: (nullable): the end, once
 * @user_data: for the callbacks
 *
 * Returns: (transfer full): the running download; free it to cancel
 */
SflSfDownload *
sfl_sf_rest_download(SflSfRest *self, const gchar *path, SflSfDownloadDataFunc data,
		     SflSfDownloadDoneFunc done, gpointer user_data)
{
	SflSfDownload *dl = NULL;

	g_return_val_if_fail(SFL_IS_SF_REST(self), NULL);
	g_return_val_if_fail(path != NULL && path[0] == '/', NULL);

	dl = g_new0(SflSfDownload, 1);
	dl->ref_count = 1;
	dl->rest = g_object_ref(self);
	dl->path = g_strdup(path);
	dl->what = g_strdup_printf("Salesforce download %s", path);
	dl->data = data;
	dl->done = done;
	dl->user_data = user_data;
	dl->cancellable = g_cancellable_new();
	dl->error_body = g_byte_array_new();
	sfl_sf_download_start(dl);
	return dl;
}

/**
 * sfl_sf_download_pause:
 * @self: a download
 *
 * No data callback after this returns, until sfl_sf_download_resume(). Safe from inside the
 * data callback.
 */
void
sfl_sf_download_pause(SflSfDownload *self)
{
	g_return_if_fail(self != NULL);
	self->paused = TRUE;
	if (self->stream != NULL)
		sfl_http_stream_pause(self->stream);
}

/**
 * sfl_sf_download_resume:
 * @self: a download
 *
 * Data flows again from an idle source.
 */
void
sfl_sf_download_resume(SflSfDownload *self)
{
	g_return_if_fail(self != NULL);
	self->paused = FALSE;
	if (self->stream != NULL)
		sfl_http_stream_resume(self->stream);
}

/**
 * sfl_sf_download_get_bytes:
 * @self: a download
 *
 * Returns: body bytes given to the data callback
 */
guint64
sfl_sf_download_get_bytes(SflSfDownload *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->bytes;
}

/**
 * sfl_sf_download_free:
 * @self: (nullable): a download
 *
 * Cancels it if it still runs; no callback runs afterwards. Safe from inside its callbacks.
 */
void
sfl_sf_download_free(SflSfDownload *self)
{
	if (self == NULL)
		return;
	self->dead = TRUE;
	self->data = NULL;
	self->done = NULL;
	g_cancellable_cancel(self->cancellable);
	g_clear_pointer(&self->stream, sfl_http_stream_free);
	sfl_sf_download_unref(self);
}

/* --- object ---------------------------------------------------------------------------------- */

/**
 * sfl_sf_rest_get_auth:
 * @self: a client
 *
 * Returns: (transfer none): its org's token provider
 */
SflSfAuth *
sfl_sf_rest_get_auth(SflSfRest *self)
{
	g_return_val_if_fail(SFL_IS_SF_REST(self), NULL);
	return self->auth;
}

const gchar *
sfl_sf_rest_get_api_version(SflSfRest *self)
{
	g_return_val_if_fail(SFL_IS_SF_REST(self), NULL);
	return self->api_version;
}

gboolean
sfl_sf_rest_get_clock_skew(SflSfRest *self, gint64 *skew_usec)
{
	g_return_val_if_fail(SFL_IS_SF_REST(self), FALSE);
	if (self->have_skew && skew_usec != NULL)
		*skew_usec = self->skew_usec;
	return self->have_skew;
}

gboolean
sfl_sf_rest_get_api_usage(SflSfRest *self, gint64 *used, gint64 *max)
{
	g_return_val_if_fail(SFL_IS_SF_REST(self), FALSE);
	if (self->have_usage) {
		if (used != NULL)
			*used = self->usage_used;
		if (max != NULL)
			*max = self->usage_max;
	}
	return self->have_usage;
}

guint64
sfl_sf_rest_get_throttled(SflSfRest *self)
{
	g_return_val_if_fail(SFL_IS_SF_REST(self), 0);
	return self->throttled;
}

static void
sfl_sf_rest_finalize(GObject *object)
{
	SflSfRest *self = SFL_SF_REST(object);

	g_clear_object(&self->loop);
	g_clear_object(&self->auth);
	g_free(self->api_version);
	G_OBJECT_CLASS(sfl_sf_rest_parent_class)->finalize(object);
}

static void
sfl_sf_rest_class_init(SflSfRestClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->finalize = sfl_sf_rest_finalize;
}

static void
sfl_sf_rest_init(SflSfRest *self)
{
	(void)self;
}

/**
 * sfl_sf_rest_new:
 * @loop: the curl loop
 * @auth: the org's token provider
 * @api_version: e.g. "64.0" (a leading "v" is accepted)
 *
 * Returns: (transfer full): a client
 */
SflSfRest *
sfl_sf_rest_new(SflCurlLoop *loop, SflSfAuth *auth, const gchar *api_version)
{
	SflSfRest *self = NULL;

	g_return_val_if_fail(SFL_IS_CURL_LOOP(loop), NULL);
	g_return_val_if_fail(SFL_IS_SF_AUTH(auth), NULL);
	g_return_val_if_fail(api_version != NULL, NULL);

	self = g_object_new(SFL_TYPE_SF_REST, NULL);
	self->loop = g_object_ref(loop);
	self->auth = g_object_ref(auth);
	if (api_version[0] == 'v' || api_version[0] == 'V')
		api_version++;
	self->api_version = g_strdup(api_version);
	return self;
}
