/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflS3Client"

#include "config.h"

#include "sfl-s3-client.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-http.h"
#include "sfl-sigv4.h"

struct _SflS3Client {
	SflObjectClient parent_instance;
	gchar *bucket;
	gchar *region;
	gchar *base;	    /* scheme://host[:port][/prefix], no trailing slash */
	gchar *host;	    /* the Host header curl sends for @base */
	gchar *path_prefix; /* "" or "/<prefix>"; then "/<bucket>" when path-style */
	SflAwsCredentialProvider *credentials;
	SflClock *clock;
	SflCurlLoop *loop;
	guint timeout_ms;
};

G_DEFINE_TYPE(SflS3Client, sfl_s3_client, SFL_TYPE_OBJECT_CLIENT)

static gchar *
sfl_s3_client_describe(SflObjectClient *client, const gchar *key)
{
	SflS3Client *self = SFL_S3_CLIENT(client);
	return g_strdup_printf("s3://%s/%s", self->bucket, key);
}

/* the text between <tag> and </tag> of an S3 XML error body */
static gchar *
sfl_s3_xml_field(GBytes *body, const gchar *tag)
{
	gsize len = 0;
	const gchar *data = body != NULL ? g_bytes_get_data(body, &len) : NULL;
	g_autofree gchar *text = g_strndup(data != NULL ? data : "", len);
	g_autofree gchar *open = g_strdup_printf("<%s>", tag);
	g_autofree gchar *close = g_strdup_printf("</%s>", tag);
	const gchar *start = strstr(text, open);
	const gchar *end;

	if (start == NULL)
		return NULL;
	start += strlen(open);
	end = strstr(start, close);
	if (end == NULL)
		return NULL;
	return g_strndup(start, MIN((gsize)(end - start), 300));
}

/* XML character data with its five entities and numeric references resolved */
static gchar *
sfl_s3_xml_unescape(const gchar *text, gsize len)
{
	static const struct {
		const gchar *name;
		gchar c;
	} entities[] = { { "&amp;", '&' },
			 { "&lt;", '<' },
			 { "&gt;", '>' },
			 { "&quot;", '"' },
			 { "&apos;", '\'' } };
	GString *out = g_string_sized_new(len);
	const gchar *end = text + len;

	for (const gchar *p = text; p < end;) {
		gboolean done = FALSE;

		if (*p != '&') {
			g_string_append_c(out, *p++);
			continue;
		}
		for (guint i = 0; i < G_N_ELEMENTS(entities) && !done; i++) {
			gsize n = strlen(entities[i].name);
			if ((gsize)(end - p) >= n && strncmp(p, entities[i].name, n) == 0) {
				g_string_append_c(out, entities[i].c);
				p += n;
				done = TRUE;
			}
		}
		if (!done && end - p > 3 && p[1] == '#') {
			const gchar *semi = memchr(p, ';', end - p);
			gboolean hex = p[2] == 'x' || p[2] == 'X';
			gchar *stop = NULL;
			guint64 code = semi != NULL ? g_ascii_strtoull(p + (hex ? 3 : 2), &stop,
								       hex ? 16 : 10)
						    : 0;

			if (semi != NULL && stop == semi && code > 0 && code <= 0x10FFFF) {
				g_string_append_unichar(out, (gunichar)code);
				p = semi + 1;
				done = TRUE;
			}
		}
		if (!done)
			g_string_append_c(out, *p++);
	}
	return g_string_free(out, FALSE);
}

/* the unescaped text of the first <tag>...</tag> within [start, end), or NULL */
static gchar *
sfl_s3_xml_element(const gchar *start, const gchar *end, const gchar *tag)
{
	g_autofree gchar *open = g_strdup_printf("<%s>", tag);
	g_autofree gchar *close = g_strdup_printf("</%s>", tag);
	const gchar *from = g_strstr_len(start, end - start, open);
	const gchar *to;

	if (from == NULL)
		return NULL;
	from += strlen(open);
	to = g_strstr_len(from, end - from, close);
	if (to == NULL)
		return NULL;
	return sfl_s3_xml_unescape(from, to - from);
}

/*
 * One ListObjectsV2 page into the listing: every <Contents> with its <Key> and <ETag> (the
 * same quoted ETag a GET answers); the next page's <NextContinuationToken> while
 * <IsTruncated> is true. Keys are XML-escaped text (no encoding-type is asked for).
 */
static gboolean
sfl_s3_parse_listing(GBytes *body, GPtrArray *listing, gchar **next_page)
{
	gsize len = 0;
	const gchar *data = body != NULL ? g_bytes_get_data(body, &len) : NULL;
	const gchar *end = data + len;
	const gchar *p = data;
	g_autofree gchar *truncated = NULL;

	if (data == NULL || g_strstr_len(data, len, "<ListBucketResult") == NULL)
		return FALSE;
	while ((p = g_strstr_len(p, end - p, "<Contents>")) != NULL) {
		const gchar *close = g_strstr_len(p, end - p, "</Contents>");
		SflObjectEntry *entry;
		g_autofree gchar *key = NULL;

		if (close == NULL)
			return FALSE;
		key = sfl_s3_xml_element(p, close, "Key");
		if (key == NULL)
			return FALSE;
		entry = g_new0(SflObjectEntry, 1);
		entry->key = g_steal_pointer(&key);
		entry->version = sfl_s3_xml_element(p, close, "ETag");
		if (entry->version == NULL)
			entry->version = g_strdup("");
		g_ptr_array_add(listing, entry);
		p = close;
	}
	truncated = sfl_s3_xml_element(data, end, "IsTruncated");
	*next_page = g_strcmp0(truncated, "true") == 0
			     ? sfl_s3_xml_element(data, end, "NextContinuationToken")
			     : NULL;
	/* truncated without a token would list the first page forever */
	return g_strcmp0(truncated, "true") != 0 || *next_page != NULL;
}

static gboolean
sfl_s3_code_is_transient(const gchar *code)
{
	static const gchar *const transient[] = {
		"SlowDown",
		"InternalError",
		"InternalFailure",
		"ServiceUnavailable",
		"RequestTimeout",
		"RequestTimeTooSkewed",
		"Throttling",
		"ThrottlingException",
		"RequestLimitExceeded",
		NULL,
	};
	return code != NULL && g_strv_contains(transient, code);
}

/*
 * A refusal that names a precondition header as what it cannot take: S3 names the argument
 * of an InvalidArgument in <ArgumentName> and the header of a NotImplemented in <Header>.
 */
static gboolean
sfl_s3_refuses_precondition(GBytes *body)
{
	static const gchar *const fields[] = { "ArgumentName", "Header" };

	for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
		g_autofree gchar *name = sfl_s3_xml_field(body, fields[i]);
		if (name != NULL && (g_ascii_strcasecmp(name, "If-None-Match") == 0 ||
				     g_ascii_strcasecmp(name, "If-Match") == 0))
			return TRUE;
	}
	return FALSE;
}

/* a failed answer turned into the contract's error */
static void
sfl_s3_classify_failure(SflObjectClient *client, const SflObjectRequest *call, guint status,
			GBytes *body, const gchar *code, GError **error)
{
	g_autofree gchar *message = sfl_s3_xml_field(body, "Message");
	g_autofree gchar *what = sfl_s3_client_describe(client, call->key);
	const gchar *op = sfl_object_request_method(call);
	SflHttpClass klass = sfl_http_status_class(status);

	if (status == 404 && call->op == SFL_OBJECT_OP_GET) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_NOT_FOUND, "%s does not exist", what);
		return;
	}
	if (status == 412 ||
	    (status == 409 && g_strcmp0(code, "ConditionalRequestConflict") == 0) ||
	    (status == 404 && call->version != NULL) || (status == 304 && call->create_only)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
			    "%s %s: precondition failed (HTTP %u%s%s): another writer changed it",
			    op, what, status, code != NULL ? " " : "", code != NULL ? code : "");
		return;
	}
	if (status == 404) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_NOT_FOUND, "%s does not exist", what);
		return;
	}
	if (status == 501 || g_strcmp0(code, "NotImplemented") == 0 ||
	    (status == 400 && call->op != SFL_OBJECT_OP_GET && sfl_s3_refuses_precondition(body))) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_REJECTED,
			    "%s %s: the endpoint does not support conditional writes (HTTP %u %s: "
			    "%s); use a store that does (docs/internals/wire-notes.md, "
			    "S3-compatible stores)",
			    op, what, status, code != NULL ? code : "",
			    message != NULL ? message : "");
		return;
	}
	if (klass == SFL_HTTP_CLASS_SERVER || sfl_s3_code_is_transient(code)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT, "%s %s: HTTP %u %s%s%s", op,
			    what, status, code != NULL ? code : "", message != NULL ? ": " : "",
			    message != NULL ? message : "");
		return;
	}
	g_set_error(error, SFL_ERROR,
		    klass == SFL_HTTP_CLASS_AUTH ? SFL_ERROR_AUTH : SFL_ERROR_REJECTED,
		    "%s %s: HTTP %u %s%s%s", op, what, status, code != NULL ? code : "",
		    message != NULL ? ": " : "", message != NULL ? message : "");
}

/* one response turned into the contract's errors; TRUE when it is a success */
static gboolean
sfl_s3_classify(SflObjectClient *client, const SflObjectRequest *call, SflHttpResponse *response,
		GError **error)
{
	guint status = sfl_http_response_get_status(response);
	GBytes *body = sfl_http_response_get_body(response);
	g_autofree gchar *code = NULL;
	g_autoptr(GError) local = NULL;

	if (sfl_http_status_class(status) == SFL_HTTP_CLASS_SUCCESS)
		return TRUE;
	code = sfl_s3_xml_field(body, "Code");
	sfl_s3_classify_failure(client, call, status, body, code, &local);
	/* callers decide on these, never on the message */
	sfl_error_set_http_status(local, status);
	sfl_error_set_peer_code(local, code);
	g_propagate_error(error, g_steal_pointer(&local));
	return FALSE;
}

static void
sfl_s3_complete(SflObjectClient *client, GTask *task, SflObjectRequest *call,
		SflHttpResponse *response)
{
	const gchar *etag;

	etag = sfl_http_response_get_header(response, "ETag");
	switch (call->op) {
	case SFL_OBJECT_OP_GET:
		sfl_object_client_return_object(task, response, etag != NULL ? etag : "");
		return;
	case SFL_OBJECT_OP_PUT:
		if (etag == NULL || etag[0] == '\0') {
			g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_REJECTED,
						"the endpoint answered the write without an ETag");
			return;
		}
		g_task_return_pointer(task, g_strdup(etag), g_free);
		return;
	case SFL_OBJECT_OP_DELETE:
		g_task_return_boolean(task, TRUE);
		return;
	case SFL_OBJECT_OP_LIST: {
		g_autofree gchar *next_page = NULL;

		if (call->listing == NULL)
			call->listing = g_ptr_array_new_with_free_func(
				(GDestroyNotify)sfl_object_entry_free);
		if (sfl_http_response_get_body_truncated(response) ||
		    !sfl_s3_parse_listing(sfl_http_response_get_body(response), call->listing,
					  &next_page)) {
			g_autofree gchar *what = sfl_s3_client_describe(client, call->key);
			g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
						"listing %s*: the answer is no ListBucketResult",
						what);
			return;
		}
		sfl_object_client_list_continue(task, next_page);
		return;
	}
	}
}

/* signs @task's request with @creds and sends it */
static void
sfl_s3_send(GTask *task, const SflAwsCredentials *creds)
{
	SflS3Client *self = g_task_get_source_object(task);
	SflObjectRequest *call = g_task_get_task_data(task);
	g_autofree gchar *uri = NULL;
	g_autofree gchar *url = NULL;
	g_autofree gchar *payload = NULL;
	g_autofree gchar *amz_date = NULL;
	g_autoptr(GPtrArray) sign = g_ptr_array_new();
	g_autoptr(GPtrArray) headers = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) query = g_ptr_array_new();
	g_auto(SflSigV4Result) sig = { 0 };
	SflSigV4Request req = { 0 };
	const gchar *method = sfl_object_request_method(call);
	gsize body_len = 0;
	gconstpointer body_data =
		call->body != NULL ? g_bytes_get_data(call->body, &body_len) : NULL;

	if (call->op == SFL_OBJECT_OP_LIST) {
		/* ListObjectsV2 on the bucket; the query is signed raw and sent encoded alike */
		g_autoptr(GString) text = g_string_new(NULL);

		g_ptr_array_add(query, (gpointer) "list-type");
		g_ptr_array_add(query, (gpointer) "2");
		g_ptr_array_add(query, (gpointer) "prefix");
		g_ptr_array_add(query, call->key);
		if (call->page_token != NULL) {
			g_ptr_array_add(query, (gpointer) "continuation-token");
			g_ptr_array_add(query, call->page_token);
		}
		for (guint i = 0; i + 1 < query->len; i += 2) {
			g_autofree gchar *value = sfl_sigv4_uri_encode(query->pdata[i + 1], FALSE);
			g_string_append_printf(text, "%s%s=%s", i == 0 ? "?" : "&",
					       (const gchar *)query->pdata[i], value);
		}
		uri = g_strdup(self->path_prefix[0] != '\0' ? self->path_prefix : "/");
		url = g_strconcat(self->base, uri, text->str, NULL);
	} else {
		url = sfl_s3_client_object_url(self, call->key, &uri);
	}
	g_ptr_array_add(query, NULL);
	payload = sfl_sigv4_hex_sha256(body_data, body_len);
	amz_date = sfl_sigv4_amz_date(sfl_clock_wall_usec(self->clock));

	g_ptr_array_add(sign, (gpointer) "host");
	g_ptr_array_add(sign, self->host);
	g_ptr_array_add(sign, (gpointer) "x-amz-content-sha256");
	g_ptr_array_add(sign, payload);
	g_ptr_array_add(sign, (gpointer) "x-amz-date");
	g_ptr_array_add(sign, amz_date);
	if (creds->session_token != NULL) {
		g_ptr_array_add(sign, (gpointer) "x-amz-security-token");
		g_ptr_array_add(sign, creds->session_token);
	}
	if (call->op == SFL_OBJECT_OP_PUT) {
		g_ptr_array_add(sign, (gpointer) "content-type");
		g_ptr_array_add(sign, (gpointer) "application/json");
	}
	if (call->create_only) {
		g_ptr_array_add(sign, (gpointer) "if-none-match");
		g_ptr_array_add(sign, (gpointer) "*");
	} else if (call->version != NULL) {
		g_ptr_array_add(sign, (gpointer) "if-match");
		g_ptr_array_add(sign, call->version);
	}
	g_ptr_array_add(sign, NULL);
	req.method = method;
	req.canonical_uri = uri;
	req.query = (const gchar *const *)query->pdata;
	req.headers = (const gchar *const *)sign->pdata;
	req.payload_hash = payload;
	req.amz_date = amz_date;
	req.region = self->region;
	req.service = "s3";
	req.access_key_id = creds->access_key_id;
	req.secret_access_key = creds->secret_access_key;
	sfl_sigv4_sign(&req, &sig);

	/* curl sends Host itself, from the URL, exactly as signed */
	for (guint i = 2; i + 1 < sign->len; i += 2)
		g_ptr_array_add(headers, g_strdup_printf("%s: %s", (const gchar *)sign->pdata[i],
							 (const gchar *)sign->pdata[i + 1]));
	g_ptr_array_add(headers, g_strdup_printf("Authorization: %s", sig.authorization));
	/* no 100-continue round trip for a small document */
	g_ptr_array_add(headers, g_strdup("Expect:"));
	g_ptr_array_add(headers, NULL);
	if (self->loop == NULL)
		self->loop = sfl_curl_loop_new();
	sfl_http_request_bounded_async(
		self->loop, method, url, (const gchar *const *)headers->pdata, call->body,
		self->timeout_ms, SFL_OBJECT_MAX_BYTES, g_task_get_cancellable(task),
		sfl_object_client_response_cb, task);
}

static void
sfl_s3_credentials_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflAwsCredentials) creds = sfl_aws_credential_provider_get_finish(
		SFL_AWS_CREDENTIAL_PROVIDER(source), result, &error);

	if (creds == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	sfl_s3_send(g_steal_pointer(&task), creds);
}

static void
sfl_s3_client_start(SflObjectClient *client, GTask *task)
{
	SflS3Client *self = SFL_S3_CLIENT(client);

	sfl_aws_credential_provider_get_async(self->credentials, g_task_get_cancellable(task),
					      sfl_s3_credentials_cb, task);
}

static void
sfl_s3_client_close(SflObjectClient *client)
{
	SflS3Client *self = SFL_S3_CLIENT(client);
	g_clear_object(&self->loop);
}

static void
sfl_s3_client_finalize(GObject *object)
{
	SflS3Client *self = SFL_S3_CLIENT(object);

	g_free(self->bucket);
	g_free(self->region);
	g_free(self->base);
	g_free(self->host);
	g_free(self->path_prefix);
	g_clear_object(&self->credentials);
	g_clear_object(&self->loop);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	G_OBJECT_CLASS(sfl_s3_client_parent_class)->finalize(object);
}

static void
sfl_s3_client_class_init(SflS3ClientClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflObjectClientClass *client_class = SFL_OBJECT_CLIENT_CLASS(klass);

	object_class->finalize = sfl_s3_client_finalize;
	client_class->start = sfl_s3_client_start;
	client_class->classify = sfl_s3_classify;
	client_class->complete = sfl_s3_complete;
	client_class->describe = sfl_s3_client_describe;
	client_class->close = sfl_s3_client_close;
}

static void
sfl_s3_client_init(SflS3Client *self)
{
}

/* scheme://host[:port] and the Host header for it; FALSE when @url is not usable */
static gboolean
sfl_s3_client_set_endpoint(SflS3Client *self, const gchar *url, gboolean path_style, GError **error)
{
	g_autoptr(GUri) uri = g_uri_parse(url, G_URI_FLAGS_NONE, NULL);
	const gchar *scheme = uri != NULL ? g_uri_get_scheme(uri) : NULL;
	const gchar *host = uri != NULL ? g_uri_get_host(uri) : NULL;
	gint port = uri != NULL ? g_uri_get_port(uri) : -1;
	g_autofree gchar *path = NULL;
	g_autofree gchar *host_port = NULL;
	g_autofree gchar *bracketed = NULL;

	if (uri == NULL || host == NULL || host[0] == '\0' ||
	    (g_strcmp0(scheme, "http") != 0 && g_strcmp0(scheme, "https") != 0) ||
	    g_uri_get_userinfo(uri) != NULL || g_uri_get_query(uri) != NULL) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "endpoint_url must be an http(s) URL without credentials or "
				    "query");
		return FALSE;
	}
	path = g_strdup(g_uri_get_path(uri));
	while (g_str_has_suffix(path, "/"))
		path[strlen(path) - 1] = '\0';
	/* an IPv6 literal is bracketed; the default port is left out of Host, as curl does */
	bracketed = strchr(host, ':') != NULL ? g_strdup_printf("[%s]", host) : g_strdup(host);
	if (port > 0 && !((port == 80 && g_str_equal(scheme, "http")) ||
			  (port == 443 && g_str_equal(scheme, "https"))))
		host_port = g_strdup_printf("%s:%d", bracketed, port);
	else
		host_port = g_strdup(bracketed);
	self->host = g_strdup(host_port);
	self->base = g_strdup_printf("%s://%s", scheme, host_port);
	self->path_prefix =
		path_style ? g_strdup_printf("%s/%s", path, self->bucket) : g_strdup(path);
	return TRUE;
}

/**
 * sfl_s3_client_new:
 * @bucket: the bucket
 * @region: (nullable): the region; NULL for the environment's, else us-east-1
 * @endpoint_url: (nullable): an S3-compatible endpoint (path-style)
 * @credentials: the credential chain
 * @clock: (nullable): for x-amz-date; NULL for the system clock
 * @timeout_ms: bound of each request
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the client
 */
SflObjectClient *
sfl_s3_client_new(const gchar *bucket, const gchar *region, const gchar *endpoint_url,
		  SflAwsCredentialProvider *credentials, SflClock *clock, guint timeout_ms,
		  GError **error)
{
	g_autoptr(SflS3Client) self = NULL;
	g_autofree gchar *aws = NULL;
	gboolean ok;

	g_return_val_if_fail(SFL_IS_AWS_CREDENTIAL_PROVIDER(credentials), NULL);
	if (bucket == NULL || bucket[0] == '\0' || strchr(bucket, '/') != NULL) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "an S3 bucket name must be non-empty and contain no '/'");
		return NULL;
	}
	self = g_object_new(SFL_TYPE_S3_CLIENT, NULL);
	self->bucket = g_strdup(bucket);
	if (region == NULL || region[0] == '\0')
		region = sfl_aws_region_from_env(NULL);
	self->region = g_strdup(region != NULL ? region : "us-east-1");
	self->credentials = g_object_ref(credentials);
	self->clock = clock != NULL ? sfl_clock_ref(clock) : sfl_clock_get_system();
	self->timeout_ms = timeout_ms;
	if (endpoint_url != NULL && endpoint_url[0] != '\0') {
		ok = sfl_s3_client_set_endpoint(self, endpoint_url, TRUE, error);
	} else if (strchr(bucket, '.') != NULL) {
		aws = g_strdup_printf("https://s3.%s.amazonaws.com", self->region);
		ok = sfl_s3_client_set_endpoint(self, aws, TRUE, error);
	} else {
		aws = g_strdup_printf("https://%s.s3.%s.amazonaws.com", bucket, self->region);
		ok = sfl_s3_client_set_endpoint(self, aws, FALSE, error);
	}
	if (!ok)
		return NULL;
	return SFL_OBJECT_CLIENT(g_steal_pointer(&self));
}

const gchar *
sfl_s3_client_get_region(SflS3Client *self)
{
	g_return_val_if_fail(SFL_IS_S3_CLIENT(self), NULL);
	return self->region;
}

/**
 * sfl_s3_client_object_url:
 * @self: a client
 * @key: an object key
 * @canonical_uri: (out) (optional): the path as SigV4 signs it (each segment encoded once)
 *
 * Returns: (transfer full): the object's URL
 */
gchar *
sfl_s3_client_object_url(SflS3Client *self, const gchar *key, gchar **canonical_uri)
{
	g_autofree gchar *encoded_key = sfl_sigv4_uri_encode(key, TRUE);
	g_autofree gchar *uri = g_strdup_printf("%s/%s", self->path_prefix, encoded_key);
	gchar *url = g_strconcat(self->base, uri, NULL);

	if (canonical_uri != NULL)
		*canonical_uri = g_steal_pointer(&uri);
	return url;
}
