/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflHttpStream"

#include "config.h"

#include "sfl-http-stream.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-http.h"
#include "sfl-redact.h"

struct _SflHttpStream {
	SflCurlLoop *loop;
	CURL *easy;
	gchar *url;
	struct curl_slist *headers;
	SflHttpStreamResponseFunc response;
	SflHttpStreamDataFunc data;
	SflHttpStreamDoneFunc done;
	gpointer user_data;

	GPtrArray *response_headers; /* "Name: value", of the final response */
	guint status;
	gboolean headers_done;
	gboolean response_sent;
	guint64 body_bytes;

	gboolean started;
	gboolean paused;      /* asked by the consumer */
	gboolean curl_paused; /* curl holds a chunk we answered CURL_WRITEFUNC_PAUSE to */
	GByteArray *pending;  /* taken from curl but not yet given to the consumer */
	gboolean finished;    /* curl is done; @done waits for @pending */
	CURLcode code;
	GSource *resume_source;

	guint dispatching; /* > 0 while one of our callbacks runs consumer code */
	gboolean dead;	   /* freed by the consumer; the memory goes in @cleanup_source */
	GSource *cleanup_source;
	gchar errbuf[CURL_ERROR_SIZE];
};

static void
sfl_http_stream_destroy(SflHttpStream *self)
{
	sfl_clear_source(&self->resume_source);
	sfl_clear_source(&self->cleanup_source);
	sfl_http_release_transfer(&self->loop, self->easy, self->started, self->headers);
	g_ptr_array_unref(self->response_headers);
	g_byte_array_unref(self->pending);
	g_free(self->url);
	g_free(self);
}

static gboolean
sfl_http_stream_cleanup_cb(gpointer user_data)
{
	SflHttpStream *self = user_data;

	/* the source is destroyed with the stream; only drop our pointer to it here */
	g_source_unref(g_steal_pointer(&self->cleanup_source));
	sfl_http_stream_destroy(self);
	return G_SOURCE_REMOVE;
}

static void
sfl_http_stream_send_response(SflHttpStream *self)
{
	long status = 0;

	if (self->response_sent)
		return;
	self->response_sent = TRUE;
	curl_easy_getinfo(self->easy, CURLINFO_RESPONSE_CODE, &status);
	self->status = (guint)status;
	if (self->response != NULL)
		self->response(self, self->status, self->user_data);
}

/*
 * Gives @len bytes to the consumer in pieces of at most SFL_HTTP_STREAM_MAX_CHUNK; what is
 * left when the consumer pauses (or frees) midway goes to @pending.
 */
static void
sfl_http_stream_deliver(SflHttpStream *self, const gchar *data, gsize len)
{
	gsize offset = 0;

	while (offset < len && !self->dead && !self->paused) {
		gsize piece = MIN(len - offset, SFL_HTTP_STREAM_MAX_CHUNK);

		self->body_bytes += piece;
		if (self->data != NULL)
			self->data(self, data + offset, piece, self->user_data);
		offset += piece;
	}
	if (offset < len && !self->dead)
		g_byte_array_append(self->pending, (const guint8 *)data + offset,
				    (guint)(len - offset));
}

static size_t
sfl_http_stream_write_cb(char *data, size_t size, size_t nmemb, void *user_data)
{
	SflHttpStream *self = user_data;
	gsize len = size * nmemb;

	if (self->dead)
		return 0;
	if (self->paused || self->pending->len > 0) {
		/* curl keeps this chunk and hands it over again after CURLPAUSE_CONT */
		self->curl_paused = TRUE;
		return CURL_WRITEFUNC_PAUSE;
	}
	self->dispatching++;
	sfl_http_stream_send_response(self);
	if (!self->dead && !self->paused)
		sfl_http_stream_deliver(self, data, len);
	else if (!self->dead) {
		/* paused from the response callback: keep the chunk ourselves */
		g_byte_array_append(self->pending, (const guint8 *)data, (guint)len);
	}
	self->dispatching--;
	/* a non-len answer aborts the transfer; @done is not called for a dead stream */
	return self->dead ? 0 : len;
}

static size_t
sfl_http_stream_header_cb(char *data, size_t size, size_t nmemb, void *user_data)
{
	SflHttpStream *self = user_data;
	gsize len = size * nmemb;
	g_autofree gchar *line = NULL;
	long status = 0;

	if (self->dead)
		return 0;
	/* trailers after the body are not headers of the response */
	if (self->headers_done)
		return len;
	switch (sfl_http_header_parse(data, len, &line)) {
	case SFL_HTTP_HEADER_STATUS:
		/* an interim 1xx response starts a new header set */
		g_ptr_array_set_size(self->response_headers, 0);
		return len;
	case SFL_HTTP_HEADER_END:
		curl_easy_getinfo(self->easy, CURLINFO_RESPONSE_CODE, &status);
		if (status >= 200) {
			self->headers_done = TRUE;
			self->dispatching++;
			sfl_http_stream_send_response(self);
			self->dispatching--;
		}
		return self->dead ? 0 : len;
	case SFL_HTTP_HEADER_FIELD:
		g_ptr_array_add(self->response_headers, g_steal_pointer(&line));
		return len;
	case SFL_HTTP_HEADER_OTHER:
	default:
		return len;
	}
}

static void
sfl_http_stream_finish(SflHttpStream *self)
{
	g_autoptr(GError) error = NULL;

	if (self->code != CURLE_OK) {
		g_autofree gchar *detail = sfl_redact(self->errbuf);
		g_autofree gchar *endpoint = sfl_http_url_endpoint(self->url);

		g_set_error(&error, SFL_ERROR, SFL_ERROR_TRANSIENT,
			    "HTTP transfer from %s failed after %" G_GUINT64_FORMAT
			    " body bytes: %s%s%s",
			    endpoint, self->body_bytes, curl_easy_strerror(self->code),
			    detail[0] != '\0' ? ": " : "", detail);
	}
	self->dispatching++;
	if (!self->response_sent && self->code == CURLE_OK)
		sfl_http_stream_send_response(self);
	if (!self->dead && self->done != NULL)
		self->done(self, error, self->status, self->user_data);
	self->dispatching--;
}

static void
sfl_http_stream_done_cb(CURL *easy, CURLcode code, gpointer user_data)
{
	SflHttpStream *self = user_data;
	long status = 0;

	(void)easy;
	if (self->dead || self->finished)
		return;
	self->finished = TRUE;
	self->code = code;
	curl_easy_getinfo(self->easy, CURLINFO_RESPONSE_CODE, &status);
	self->status = (guint)status;
	/* what we still hold is delivered first, on resume */
	if (self->pending->len > 0)
		return;
	sfl_http_stream_finish(self);
}

static gboolean
sfl_http_stream_resume_cb(gpointer user_data)
{
	SflHttpStream *self = user_data;

	sfl_clear_source(&self->resume_source);
	self->dispatching++;
	if (self->pending->len > 0 && !self->paused) {
		g_autoptr(GByteArray) held = g_steal_pointer(&self->pending);

		self->pending = g_byte_array_new();
		sfl_http_stream_deliver(self, (const gchar *)held->data, held->len);
	}
	if (!self->dead && !self->paused && self->pending->len == 0) {
		if (self->finished) {
			sfl_http_stream_finish(self);
		} else if (self->curl_paused) {
			self->curl_paused = FALSE;
			/* may call the write callback (with the held chunk) before it returns */
			curl_easy_pause(self->easy, CURLPAUSE_CONT);
		}
	}
	self->dispatching--;
	return G_SOURCE_REMOVE;
}

/**
 * sfl_http_stream_new:
 * @loop: the curl loop
 * @url: an http or https URL
 * @headers: (nullable) (array zero-terminated=1): "Name: value" strings
 * @response: (nullable): the final status is known
 * @data: (nullable): a body chunk
 * @done: (nullable): the transfer ended
 * @user_data: for the callbacks
 *
 * Returns: (transfer full): a stream, not started
 */
SflHttpStream *
sfl_http_stream_new(SflCurlLoop *loop, const gchar *url, const gchar *const *headers,
		    SflHttpStreamResponseFunc response, SflHttpStreamDataFunc data,
		    SflHttpStreamDoneFunc done, gpointer user_data)
{
	SflHttpStream *self = NULL;

	g_return_val_if_fail(SFL_IS_CURL_LOOP(loop), NULL);
	g_return_val_if_fail(url != NULL, NULL);

	self = g_new0(SflHttpStream, 1);
	self->loop = g_object_ref(loop);
	self->url = g_strdup(url);
	self->response = response;
	self->data = data;
	self->done = done;
	self->user_data = user_data;
	self->response_headers = g_ptr_array_new_with_free_func(g_free);
	self->pending = g_byte_array_new();
	for (guint i = 0; headers != NULL && headers[i] != NULL; i++)
		self->headers = curl_slist_append(self->headers, headers[i]);
	return self;
}

/**
 * sfl_http_stream_start:
 * @self: a stream
 * @error: return location for an error
 *
 * Returns: %TRUE when the transfer was started; @done will run
 */
gboolean
sfl_http_stream_start(SflHttpStream *self, GError **error)
{
	CURLcode rc = CURLE_OK;

	g_return_val_if_fail(self != NULL, FALSE);
	g_return_val_if_fail(!self->started, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	self->easy = sfl_curl_loop_new_easy(self->loop, self->url, NULL, &rc);
	if (self->easy == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "cannot create a curl handle");
		return FALSE;
	}
	rc |= curl_easy_setopt(self->easy, CURLOPT_HTTPGET, 1L);
	/*
	 * One transfer per connection: a paused HTTP/2 stream holds its flow-control window on
	 * a shared connection, and pause/resume is exercised on HTTP/1.1 only.
	 */
	rc |= curl_easy_setopt(self->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	rc |= curl_easy_setopt(self->easy, CURLOPT_HTTPHEADER, self->headers);
	/* gzip and deflate as the server likes: CSV shrinks a lot */
	rc |= curl_easy_setopt(self->easy, CURLOPT_ACCEPT_ENCODING, "");
	rc |= curl_easy_setopt(self->easy, CURLOPT_ERRORBUFFER, self->errbuf);
	rc |= curl_easy_setopt(self->easy, CURLOPT_WRITEFUNCTION, sfl_http_stream_write_cb);
	rc |= curl_easy_setopt(self->easy, CURLOPT_WRITEDATA, self);
	rc |= curl_easy_setopt(self->easy, CURLOPT_HEADERFUNCTION, sfl_http_stream_header_cb);
	rc |= curl_easy_setopt(self->easy, CURLOPT_HEADERDATA, self);
	rc |= curl_easy_setopt(self->easy, CURLOPT_CONNECTTIMEOUT_MS,
			       (long)SFL_HTTP_CONNECT_TIMEOUT_MS);
	/* a stall, not a slow consumer: curl does not check the speed of a paused transfer */
	rc |= curl_easy_setopt(self->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
	rc |= curl_easy_setopt(self->easy, CURLOPT_LOW_SPEED_TIME,
			       (long)SFL_HTTP_STREAM_LOW_SPEED_SEC);
	if (rc != CURLE_OK) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL,
			    "cannot configure HTTP request: %s", curl_easy_strerror(rc));
		return FALSE;
	}
	if (!sfl_curl_loop_add(self->loop, self->easy, sfl_http_stream_done_cb, self, error))
		return FALSE;
	self->started = TRUE;
	return TRUE;
}

/**
 * sfl_http_stream_pause:
 * @self: a stream
 *
 * No @data call after this returns until sfl_http_stream_resume().
 */
void
sfl_http_stream_pause(SflHttpStream *self)
{
	g_return_if_fail(self != NULL);
	self->paused = TRUE;
	sfl_clear_source(&self->resume_source);
}

/**
 * sfl_http_stream_resume:
 * @self: a stream
 *
 * Data flows again from an idle source; nothing is delivered from inside this call.
 */
void
sfl_http_stream_resume(SflHttpStream *self)
{
	g_return_if_fail(self != NULL);
	if (!self->paused || self->dead)
		return;
	self->paused = FALSE;
	if (self->resume_source != NULL)
		return;
	sfl_http_defer(&self->resume_source, G_PRIORITY_DEFAULT, "[sf2loki] http stream resume",
		       sfl_http_stream_resume_cb, self);
}

gboolean
sfl_http_stream_is_paused(SflHttpStream *self)
{
	g_return_val_if_fail(self != NULL, FALSE);
	return self->paused;
}

/**
 * sfl_http_stream_get_status:
 * @self: a stream
 *
 * Returns: the final HTTP status, 0 before the response callback
 */
guint
sfl_http_stream_get_status(SflHttpStream *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->status;
}

/**
 * sfl_http_stream_get_header:
 * @self: a stream
 * @name: a header name, any case
 *
 * Returns: (transfer none) (nullable): the last value of @name in the final response
 */
const gchar *
sfl_http_stream_get_header(SflHttpStream *self, const gchar *name)
{
	gsize name_len = 0;

	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(name != NULL, NULL);
	name_len = strlen(name);
	for (guint i = self->response_headers->len; i > 0; i--) {
		const gchar *line = g_ptr_array_index(self->response_headers, i - 1);

		if (sfl_http_header_is(line, name))
			return line + name_len + 1;
	}
	return NULL;
}

/**
 * sfl_http_stream_get_body_bytes:
 * @self: a stream
 *
 * Returns: body bytes given to @data so far
 */
guint64
sfl_http_stream_get_body_bytes(SflHttpStream *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->body_bytes;
}

/**
 * sfl_http_stream_free:
 * @self: (nullable): a stream
 *
 * Cancels a running transfer. Safe from inside the stream's own callbacks.
 */
void
sfl_http_stream_free(SflHttpStream *self)
{
	if (self == NULL)
		return;
	g_return_if_fail(!self->dead);
	self->dead = TRUE;
	self->response = NULL;
	self->data = NULL;
	self->done = NULL;
	if (self->dispatching == 0) {
		sfl_http_stream_destroy(self);
		return;
	}
	/* inside a callback: curl must not see its handle removed under it */
	sfl_clear_source(&self->resume_source);
	sfl_http_defer(&self->cleanup_source, G_PRIORITY_HIGH, "[sf2loki] http stream free",
		       sfl_http_stream_cleanup_cb, self);
}

void
sfl_http_release_transfer(SflCurlLoop **loop, CURL *easy, gboolean attached,
			  struct curl_slist *headers)
{
	if (easy != NULL) {
		if (attached)
			sfl_curl_loop_remove(*loop, easy);
		curl_easy_cleanup(easy);
	}
	curl_slist_free_all(headers);
	g_clear_object(loop);
}

void
sfl_http_defer(GSource **slot, gint priority, const gchar *name, GSourceFunc func, gpointer data)
{
	*slot = g_idle_source_new();
	g_source_set_priority(*slot, priority);
	g_source_set_name(*slot, name);
	g_source_set_callback(*slot, func, data, NULL);
	g_source_attach(*slot, g_main_context_get_thread_default());
}

/**
 * sfl_http_header_parse:
 * @data: (array length=len): one line as curl's header callback gets it
 * @len: its length
 * @line: (out) (transfer full): the line without its line end; for a field, "Name:value"
 *   with the white space around the value trimmed
 *
 * Returns: what the line is
 */
SflHttpHeaderKind
sfl_http_header_parse(const gchar *data, gsize len, gchar **line)
{
	gchar *text = g_strchomp(g_strndup(data, len));
	gchar *colon;

	*line = text;
	if (g_str_has_prefix(text, "HTTP/"))
		return SFL_HTTP_HEADER_STATUS;
	if (text[0] == '\0')
		return SFL_HTTP_HEADER_END;
	colon = strchr(text, ':');
	if (colon == NULL || colon == text)
		return SFL_HTTP_HEADER_OTHER;
	g_strchug(colon + 1);
	return SFL_HTTP_HEADER_FIELD;
}

/* whether the field @line (as sfl_http_header_parse() left it) is @name, in any case */
gboolean
sfl_http_header_is(const gchar *line, const gchar *name)
{
	gsize name_len = strlen(name);

	return g_ascii_strncasecmp(line, name, name_len) == 0 && line[name_len] == ':';
}
