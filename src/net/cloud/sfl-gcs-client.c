/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflGcsClient"

#include "config.h"

#include "sfl-gcs-client.h"

#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-http.h"

struct _SflGcsClient {
	SflObjectClient parent_instance;
	gchar *bucket;
	gchar *base; /* scheme://host[:port], no trailing slash */
	SflGcsTokenProvider *tokens;
	gboolean anonymous; /* an emulator without a key file */
	SflCurlLoop *loop;
	guint timeout_ms;
};

G_DEFINE_TYPE(SflGcsClient, sfl_gcs_client, SFL_TYPE_OBJECT_CLIENT)

/*
 * A get is two requests: the metadata, for the generation, then the media of that generation
 * (ifGenerationMatch), so the bytes and the version always belong together.
 */
static gboolean
sfl_gcs_is_media(const SflObjectRequest *call)
{
	return call->op == SFL_OBJECT_OP_GET && call->version != NULL;
}

/* the ifGenerationMatch precondition: generation 0 means "no live object", create-only */
static const gchar *
sfl_gcs_precondition(const SflObjectRequest *call)
{
	return call->create_only ? "0" : call->version;
}

static gchar *
sfl_gcs_client_describe(SflObjectClient *client, const gchar *key)
{
	return g_strdup_printf("gs://%s/%s", SFL_GCS_CLIENT(client)->bucket, key);
}

static gchar *
sfl_gcs_escape(const gchar *text)
{
	/* every reserved character, "/" included, as the JSON API wants object names */
	return g_uri_escape_string(text, NULL, FALSE);
}

static gchar *sfl_gcs_generation_text(json_t *gen);

static gboolean
sfl_gcs_classify(SflObjectClient *self, const SflObjectRequest *call, SflHttpResponse *response,
		 GError **error)
{
	guint status = sfl_http_response_get_status(response);
	gsize len = 0;
	const gchar *data = g_bytes_get_data(sfl_http_response_get_body(response), &len);
	json_error_t jerr;
	g_autoptr(json_t) doc = json_loadb(data != NULL ? data : "", len, 0, &jerr);
	const gchar *message =
		json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
	g_autofree gchar *what = sfl_gcs_client_describe(self, call->key);
	SflHttpClass klass = sfl_http_status_class(status);

	if (klass == SFL_HTTP_CLASS_SUCCESS)
		return TRUE;
	if (message == NULL)
		message = "";
	if (status == 404 && call->op != SFL_OBJECT_OP_PUT) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_NOT_FOUND, "%s does not exist", what);
		return FALSE;
	}
	if (status == 412 && sfl_gcs_is_media(call)) {
		/* replaced between the metadata and the media read: read again */
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT, "%s changed while being read",
			    what);
		return FALSE;
	}
	if (klass == SFL_HTTP_CLASS_CONFLICT) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
			    "%s: precondition failed (HTTP %u): another writer changed it", what,
			    status);
		return FALSE;
	}
	if (sfl_http_class_is_retryable(klass)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT, "%s: HTTP %u %s", what, status,
			    message);
		return FALSE;
	}
	g_set_error(error, SFL_ERROR,
		    klass == SFL_HTTP_CLASS_AUTH ? SFL_ERROR_AUTH : SFL_ERROR_REJECTED,
		    "%s: HTTP %u %s", what, status, message);
	return FALSE;
}

static void sfl_gcs_send(GTask *task);

/* the "generation" of a JSON object resource, written as a string */
static gchar *
sfl_gcs_generation(SflHttpResponse *response)
{
	gsize len = 0;
	const gchar *data = g_bytes_get_data(sfl_http_response_get_body(response), &len);
	json_error_t jerr;
	g_autoptr(json_t) doc = json_loadb(data != NULL ? data : "", len, 0, &jerr);

	return sfl_gcs_generation_text(json_object_get(doc, "generation"));
}

/* a JSON generation (the API writes it as a string) as text */
static gchar *
sfl_gcs_generation_text(json_t *gen)
{
	if (json_is_string(gen))
		return g_strdup(json_string_value(gen));
	if (json_is_integer(gen))
		return g_strdup_printf("%" G_GINT64_FORMAT, (gint64)json_integer_value(gen));
	return NULL;
}

/*
 * One objects.list page into the listing: items[].name and .generation (the version a get
 * reads), and nextPageToken while there are more. A page without items is an empty one.
 */
static gboolean
sfl_gcs_parse_listing(SflHttpResponse *response, GPtrArray *listing, gchar **next_page)
{
	gsize len = 0;
	const gchar *data = g_bytes_get_data(sfl_http_response_get_body(response), &len);
	json_error_t jerr;
	g_autoptr(json_t) doc = json_loadb(data != NULL ? data : "", len, 0, &jerr);
	json_t *items = json_object_get(doc, "items");
	json_t *token = json_object_get(doc, "nextPageToken");
	json_t *item = NULL;
	gsize i = 0;

	if (!json_is_object(doc) || (items != NULL && !json_is_array(items)))
		return FALSE;
	json_array_foreach (items, i, item) {
		const gchar *name = json_string_value(json_object_get(item, "name"));
		gchar *generation = sfl_gcs_generation_text(json_object_get(item, "generation"));
		SflObjectEntry *entry;

		if (name == NULL || generation == NULL) {
			g_free(generation);
			return FALSE;
		}
		entry = g_new0(SflObjectEntry, 1);
		entry->key = g_strdup(name);
		entry->version = generation;
		g_ptr_array_add(listing, entry);
	}
	*next_page = json_is_string(token) ? g_strdup(json_string_value(token)) : NULL;
	return TRUE;
}

static void
sfl_gcs_complete(SflObjectClient *client, GTask *task, SflObjectRequest *call,
		 SflHttpResponse *response)
{
	g_autofree gchar *generation = NULL;

	if (sfl_gcs_is_media(call)) {
		sfl_object_client_return_object(task, response, call->version);
		return;
	}
	switch (call->op) {
	case SFL_OBJECT_OP_GET:
	case SFL_OBJECT_OP_PUT:
		generation = sfl_gcs_generation(response);
		if (generation == NULL) {
			g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_REJECTED,
						call->op == SFL_OBJECT_OP_GET
							? "the object resource has no generation"
							: "the upload answer has no generation");
			return;
		}
		if (call->op == SFL_OBJECT_OP_PUT) {
			g_task_return_pointer(task, g_steal_pointer(&generation), g_free);
			return;
		}
		/* the metadata: now the media of that generation */
		call->version = g_steal_pointer(&generation);
		sfl_gcs_send(g_object_ref(task));
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
		    !sfl_gcs_parse_listing(response, call->listing, &next_page)) {
			g_autofree gchar *what = sfl_gcs_client_describe(client, call->key);
			g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
						"listing %s*: the answer is no object list", what);
			return;
		}
		sfl_object_client_list_continue(task, next_page);
		return;
	}
	}
}

static void
sfl_gcs_send(GTask *task)
{
	SflGcsClient *self = g_task_get_source_object(task);
	SflObjectRequest *call = g_task_get_task_data(task);
	GCancellable *cancellable = g_task_get_cancellable(task);
	g_autofree gchar *name = sfl_gcs_escape(call->key);
	g_autofree gchar *bucket = sfl_gcs_escape(self->bucket);
	g_autofree gchar *url = NULL;
	g_autofree gchar *auth = NULL;
	const gchar *headers[3] = { NULL, NULL, NULL };
	const gchar *method = "GET";
	guint n = 0;

	switch (call->op) {
	case SFL_OBJECT_OP_GET:
		url = call->version == NULL
			      ? g_strdup_printf("%s/storage/v1/b/%s/o/%s", self->base, bucket, name)
			      : g_strdup_printf(
					"%s/storage/v1/b/%s/o/%s?alt=media&ifGenerationMatch=%s",
					self->base, bucket, name, call->version);
		break;
	case SFL_OBJECT_OP_PUT:
		method = "POST";
		url = g_strdup_printf("%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s&"
				      "ifGenerationMatch=%s",
				      self->base, bucket, name, sfl_gcs_precondition(call));
		headers[n++] = "Content-Type: application/json";
		break;
	case SFL_OBJECT_OP_DELETE:
		method = "DELETE";
		url = call->version != NULL
			      ? g_strdup_printf("%s/storage/v1/b/%s/o/%s?ifGenerationMatch=%s",
						self->base, bucket, name, call->version)
			      : g_strdup_printf("%s/storage/v1/b/%s/o/%s", self->base, bucket,
						name);
		break;
	case SFL_OBJECT_OP_LIST: {
		g_autofree gchar *prefix = sfl_gcs_escape(call->key);
		g_autofree gchar *page =
			call->page_token != NULL ? sfl_gcs_escape(call->page_token) : NULL;

		url = g_strdup_printf("%s/storage/v1/b/%s/o?prefix=%s%s%s", self->base, bucket,
				      prefix, page != NULL ? "&pageToken=" : "",
				      page != NULL ? page : "");
		break;
	}
	}
	if (call->token != NULL) {
		auth = g_strdup_printf("Authorization: Bearer %s", call->token);
		headers[n++] = auth;
	}
	if (self->loop == NULL)
		self->loop = sfl_curl_loop_new();
	sfl_http_request_bounded_async(self->loop, method, url, headers, call->body,
				       self->timeout_ms, SFL_OBJECT_MAX_BYTES, cancellable,
				       sfl_object_client_response_cb, task);
}

static void
sfl_gcs_token_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflObjectRequest *call = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;

	call->token =
		sfl_gcs_token_provider_get_finish(SFL_GCS_TOKEN_PROVIDER(source), result, &error);
	if (call->token == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	sfl_gcs_send(g_steal_pointer(&task));
}

static void
sfl_gcs_start(SflObjectClient *client, GTask *task)
{
	SflGcsClient *self = SFL_GCS_CLIENT(client);

	if (self->anonymous) {
		sfl_gcs_send(task);
		return;
	}
	sfl_gcs_token_provider_get_async(self->tokens, g_task_get_cancellable(task),
					 sfl_gcs_token_cb, task);
}

static void
sfl_gcs_client_close(SflObjectClient *client)
{
	SflGcsClient *self = SFL_GCS_CLIENT(client);

	g_clear_object(&self->loop);
	if (self->tokens != NULL)
		sfl_gcs_token_provider_close(self->tokens);
}

static void
sfl_gcs_client_finalize(GObject *object)
{
	SflGcsClient *self = SFL_GCS_CLIENT(object);

	g_free(self->bucket);
	g_free(self->base);
	g_clear_object(&self->tokens);
	g_clear_object(&self->loop);
	G_OBJECT_CLASS(sfl_gcs_client_parent_class)->finalize(object);
}

static void
sfl_gcs_client_class_init(SflGcsClientClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflObjectClientClass *client_class = SFL_OBJECT_CLIENT_CLASS(klass);

	object_class->finalize = sfl_gcs_client_finalize;
	client_class->start = sfl_gcs_start;
	client_class->classify = sfl_gcs_classify;
	client_class->complete = sfl_gcs_complete;
	client_class->describe = sfl_gcs_client_describe;
	client_class->close = sfl_gcs_client_close;
}

static void
sfl_gcs_client_init(SflGcsClient *self)
{
}

/**
 * sfl_gcs_client_new:
 * @bucket: the bucket
 * @service_file: (nullable): a service-account JSON key; NULL for application default
 *   credentials (GOOGLE_APPLICATION_CREDENTIALS, else the metadata server)
 * @envp: (nullable): the environment to read, NULL for the process's
 * @clock: (nullable): NULL for the system clock
 * @timeout_ms: bound of each request
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the client
 */
SflObjectClient *
sfl_gcs_client_new(const gchar *bucket, const gchar *service_file, const gchar *const *envp,
		   SflClock *clock, guint timeout_ms, GError **error)
{
	g_autoptr(SflGcsClient) self = NULL;
	g_auto(GStrv) env = envp != NULL ? g_strdupv((gchar **)envp) : g_get_environ();
	const gchar *emulator = g_environ_getenv(env, "STORAGE_EMULATOR_HOST");

	if (bucket == NULL || bucket[0] == '\0' || strchr(bucket, '/') != NULL) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "a GCS bucket name must be non-empty and contain no '/'");
		return NULL;
	}
	self = g_object_new(SFL_TYPE_GCS_CLIENT, NULL);
	self->bucket = g_strdup(bucket);
	self->timeout_ms = timeout_ms;
	if (emulator != NULL && emulator[0] != '\0') {
		self->base = g_str_has_prefix(emulator, "http://") ||
					     g_str_has_prefix(emulator, "https://")
				     ? g_strdup(emulator)
				     : g_strconcat("http://", emulator, NULL);
		while (g_str_has_suffix(self->base, "/"))
			self->base[strlen(self->base) - 1] = '\0';
		/* an emulator needs no credentials; a key file given anyway is used */
		self->anonymous = service_file == NULL || service_file[0] == '\0';
	} else {
		self->base = g_strdup("https://storage.googleapis.com");
	}
	if (!self->anonymous) {
		self->tokens = sfl_gcs_token_provider_new(service_file, (const gchar *const *)env,
							  clock, error);
		if (self->tokens == NULL)
			return NULL;
	}
	return SFL_OBJECT_CLIENT(g_steal_pointer(&self));
}
