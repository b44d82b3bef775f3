/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflGcsToken"

#include "config.h"

#include "sfl-gcs-token.h"

#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-http.h"
#include "sfl-jwt.h"
#include "sfl-object-client.h"

#define SFL_GCS_TOKEN_MARGIN_USEC (5 * 60 * G_USEC_PER_SEC)
#define SFL_GCS_TOKEN_TIMEOUT_MS  10000
#define SFL_GCS_TOKEN_MAX_BODY	  (64 * 1024)

struct _SflGcsTokenProvider {
	GObject parent_instance;
	SflClock *clock;
	SflCurlLoop *loop;
	/* service-account key */
	SflJwtSigner *key;
	gchar *client_email;
	gchar *key_id;
	gchar *token_uri;
	gchar *key_path; /* for messages */
	/* else the metadata server */
	gchar *metadata_url;
	/* cache */
	gchar *token;
	gint64 expires_usec;
	GPtrArray *waiting;
};

G_DEFINE_TYPE(SflGcsTokenProvider, sfl_gcs_token_provider, G_TYPE_OBJECT)

static gboolean
sfl_gcs_token_load_key(SflGcsTokenProvider *self, const gchar *path, GError **error)
{
	g_autofree gchar *text = NULL;
	gsize len = 0;
	json_error_t jerr;
	g_autoptr(json_t) doc = NULL;
	g_autoptr(GError) local = NULL;
	g_autoptr(GError) key_error = NULL;
	const gchar *pem;
	const gchar *email;
	const gchar *uri;

	if (!g_file_get_contents(path, &text, &len, &local)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "cannot read the service-account key: %s", local->message);
		return FALSE;
	}
	doc = json_loadb(text, len, 0, &jerr);
	/* the key file is a secret: do not leave it in freed heap memory */
	memset(text, 0, len);
	if (!json_is_object(doc) ||
	    g_strcmp0(json_string_value(json_object_get(doc, "type")), "service_account") != 0) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "%s is not a service-account JSON key (\"type\": \"service_account\")",
			    path);
		return FALSE;
	}
	pem = json_string_value(json_object_get(doc, "private_key"));
	email = json_string_value(json_object_get(doc, "client_email"));
	uri = json_string_value(json_object_get(doc, "token_uri"));
	if (pem == NULL || email == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "%s lacks private_key or client_email", path);
		return FALSE;
	}
	/* the key size is the token endpoint's to judge (Google issues 2048-bit keys) */
	self->key = sfl_jwt_signer_new_rsa_pem(pem, -1, 0, &key_error);
	if (self->key == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "%s: private_key is not an unencrypted RSA PEM key", path);
		return FALSE;
	}
	self->client_email = g_strdup(email);
	self->key_id = g_strdup(json_string_value(json_object_get(doc, "private_key_id")));
	self->token_uri = g_strdup(uri != NULL ? uri : "https://oauth2.googleapis.com/token");
	self->key_path = g_strdup(path);
	return TRUE;
}

/* the service-account assertion: its own claims and "kid", signed by the shared RS256 signer */
static gchar *
sfl_gcs_token_jwt(SflGcsTokenProvider *self, GError **error)
{
	g_autoptr(json_t) header = json_object();
	g_autoptr(json_t) claims = json_object();
	g_autofree gchar *header_text = NULL;
	g_autofree gchar *claims_text = NULL;
	g_autoptr(GError) local = NULL;
	gchar *jwt = NULL;
	gint64 now = sfl_clock_wall_usec(self->clock) / G_USEC_PER_SEC;

	json_object_set_new(header, "alg", json_string("RS256"));
	json_object_set_new(header, "typ", json_string("JWT"));
	if (self->key_id != NULL)
		json_object_set_new(header, "kid", json_string(self->key_id));
	json_object_set_new(claims, "iss", json_string(self->client_email));
	json_object_set_new(claims, "scope", json_string(SFL_GCS_SCOPE));
	json_object_set_new(claims, "aud", json_string(self->token_uri));
	json_object_set_new(claims, "iat", json_integer(now));
	json_object_set_new(claims, "exp", json_integer(now + 3600));
	header_text = json_dumps(header, JSON_COMPACT);
	claims_text = json_dumps(claims, JSON_COMPACT);
	jwt = sfl_jwt_signer_sign_parts(self->key, header_text, claims_text, &local);
	if (jwt == NULL)
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_AUTH,
				    "cannot sign the service-account assertion");
	return jwt;
}

static void
sfl_gcs_token_deliver(SflGcsTokenProvider *self, const gchar *token, const GError *error)
{
	sfl_object_waiters_deliver(&self->waiting, token, (GBoxedCopyFunc)g_strdup, g_free, error);
}

static void
sfl_gcs_token_response_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflGcsTokenProvider) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflHttpResponse) response = sfl_http_request_finish(result, &error);
	g_autoptr(json_t) doc = NULL;
	const gchar *what = self->key != NULL ? self->token_uri : "the metadata server";
	const gchar *token;
	json_error_t jerr;
	gsize len = 0;
	const gchar *data;
	guint status;
	json_int_t expires_in;

	if (response == NULL) {
		g_prefix_error(&error, "cannot get a Cloud Storage token from %s: ", what);
		sfl_gcs_token_deliver(self, NULL, error);
		return;
	}
	status = sfl_http_response_get_status(response);
	data = g_bytes_get_data(sfl_http_response_get_body(response), &len);
	doc = json_loadb(data != NULL ? data : "", len, 0, &jerr);
	token = json_string_value(json_object_get(doc, "access_token"));
	if (status != 200 || token == NULL) {
		const gchar *reason = json_string_value(json_object_get(doc, "error"));
		g_set_error(&error, SFL_ERROR,
			    sfl_http_status_class(status) == SFL_HTTP_CLASS_SERVER
				    ? SFL_ERROR_TRANSIENT
				    : SFL_ERROR_AUTH,
			    "%s refused the Cloud Storage token request (HTTP %u%s%s)", what,
			    status, reason != NULL ? " " : "", reason != NULL ? reason : "");
		sfl_gcs_token_deliver(self, NULL, error);
		return;
	}
	expires_in = json_integer_value(json_object_get(doc, "expires_in"));
	g_free(self->token);
	self->token = g_strdup(token);
	self->expires_usec = sfl_clock_wall_usec(self->clock) +
			     (expires_in > 0 ? expires_in : 3600) * G_USEC_PER_SEC;
	sfl_gcs_token_deliver(self, self->token, NULL);
}

/**
 * sfl_gcs_token_provider_get_async:
 * @self: a provider
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * The cached token while good for five more minutes, else a new one; callers arriving while
 * one is fetched share it.
 */
void
sfl_gcs_token_provider_get_async(SflGcsTokenProvider *self, GCancellable *cancellable,
				 GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *jwt = NULL;
	g_autofree gchar *form = NULL;
	g_autoptr(GBytes) body = NULL;
	const gchar *form_headers[] = { "Content-Type: application/x-www-form-urlencoded", NULL };
	const gchar *metadata_headers[] = { "Metadata-Flavor: Google", NULL };

	g_return_if_fail(SFL_IS_GCS_TOKEN_PROVIDER(self));
	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_gcs_token_provider_get_async);
	if (self->token != NULL &&
	    sfl_clock_wall_usec(self->clock) < self->expires_usec - SFL_GCS_TOKEN_MARGIN_USEC) {
		g_task_return_pointer(task, g_strdup(self->token), g_free);
		return;
	}
	if (!sfl_object_waiters_join(&self->waiting, g_steal_pointer(&task)))
		return;
	if (self->loop == NULL)
		self->loop = sfl_curl_loop_new();
	if (self->key == NULL) {
		sfl_http_request_bounded_async(self->loop, "GET", self->metadata_url,
					       metadata_headers, NULL, SFL_GCS_TOKEN_TIMEOUT_MS,
					       SFL_GCS_TOKEN_MAX_BODY, NULL,
					       sfl_gcs_token_response_cb, g_object_ref(self));
		return;
	}
	jwt = sfl_gcs_token_jwt(self, &error);
	if (jwt == NULL) {
		sfl_gcs_token_deliver(self, NULL, error);
		return;
	}
	form = g_strdup_printf("grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Ajwt-"
			       "bearer&assertion=%s",
			       jwt);
	body = g_bytes_new(form, strlen(form));
	sfl_http_request_bounded_async(self->loop, "POST", self->token_uri, form_headers, body,
				       SFL_GCS_TOKEN_TIMEOUT_MS, SFL_GCS_TOKEN_MAX_BODY, NULL,
				       sfl_gcs_token_response_cb, g_object_ref(self));
}

/**
 * sfl_gcs_token_provider_get_finish:
 * @self: a provider
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the access token
 */
gchar *
sfl_gcs_token_provider_get_finish(SflGcsTokenProvider *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

gboolean
sfl_gcs_token_provider_has_key(SflGcsTokenProvider *self)
{
	g_return_val_if_fail(SFL_IS_GCS_TOKEN_PROVIDER(self), FALSE);
	return self->key != NULL;
}

/* drops the connections; the cached token stays */
void
sfl_gcs_token_provider_close(SflGcsTokenProvider *self)
{
	g_return_if_fail(SFL_IS_GCS_TOKEN_PROVIDER(self));
	if (self->waiting == NULL)
		g_clear_object(&self->loop);
}

static void
sfl_gcs_token_provider_finalize(GObject *object)
{
	SflGcsTokenProvider *self = SFL_GCS_TOKEN_PROVIDER(object);

	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_clear_object(&self->loop);
	g_clear_pointer(&self->key, sfl_jwt_signer_free);
	g_free(self->client_email);
	g_free(self->key_id);
	g_free(self->token_uri);
	g_free(self->key_path);
	g_free(self->metadata_url);
	g_free(self->token);
	g_clear_pointer(&self->waiting, g_ptr_array_unref);
	G_OBJECT_CLASS(sfl_gcs_token_provider_parent_class)->finalize(object);
}

static void
sfl_gcs_token_provider_class_init(SflGcsTokenProviderClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_gcs_token_provider_finalize;
}

static void
sfl_gcs_token_provider_init(SflGcsTokenProvider *self)
{
}

/**
 * sfl_gcs_token_provider_new:
 * @key_file: (nullable): a service-account JSON key
 * @envp: (nullable): the environment to read, NULL for the process's
 * @clock: (nullable): for iat/exp and expiry; NULL for the system clock
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): a provider
 */
SflGcsTokenProvider *
sfl_gcs_token_provider_new(const gchar *key_file, const gchar *const *envp, SflClock *clock,
			   GError **error)
{
	g_autoptr(SflGcsTokenProvider) self = g_object_new(SFL_TYPE_GCS_TOKEN_PROVIDER, NULL);
	g_auto(GStrv) env = envp != NULL ? g_strdupv((gchar **)envp) : g_get_environ();
	const gchar *adc = g_environ_getenv(env, "GOOGLE_APPLICATION_CREDENTIALS");
	const gchar *host = g_environ_getenv(env, "GCE_METADATA_HOST");

	self->clock = clock != NULL ? sfl_clock_ref(clock) : sfl_clock_get_system();
	if (key_file == NULL || key_file[0] == '\0')
		key_file = adc != NULL && adc[0] != '\0' ? adc : NULL;
	if (key_file != NULL && !sfl_gcs_token_load_key(self, key_file, error))
		return NULL;
	if (host == NULL || host[0] == '\0')
		host = "metadata.google.internal";
	self->metadata_url =
		g_strdup_printf("%s%s/computeMetadata/v1/instance/service-accounts/default/token",
				g_str_has_prefix(host, "http://") ? "" : "http://", host);
	return g_steal_pointer(&self);
}
