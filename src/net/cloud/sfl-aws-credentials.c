/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflAwsCredentials"

#include "config.h"

#include "sfl-aws-credentials.h"

#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-http.h"
#include "sfl-object-client.h"

/* refresh this long before the expiry, so a signed request never carries dead credentials */
#define SFL_AWS_REFRESH_MARGIN_USEC  (5 * 60 * G_USEC_PER_SEC)
#define SFL_AWS_CONTAINER_TIMEOUT_MS 2000
#define SFL_AWS_IMDS_TIMEOUT_MS	     1000
#define SFL_AWS_CREDS_MAX_BODY	     (64 * 1024)

SflAwsCredentials *
sfl_aws_credentials_new(const gchar *access_key_id, const gchar *secret_access_key,
			const gchar *session_token, gint64 expires_usec, const gchar *source)
{
	SflAwsCredentials *creds = g_new0(SflAwsCredentials, 1);
	creds->access_key_id = g_strdup(access_key_id);
	creds->secret_access_key = g_strdup(secret_access_key);
	creds->session_token =
		session_token != NULL && session_token[0] != '\0' ? g_strdup(session_token) : NULL;
	creds->expires_usec = expires_usec;
	creds->source = g_strdup(source);
	return creds;
}

SflAwsCredentials *
sfl_aws_credentials_copy(const SflAwsCredentials *creds)
{
	return sfl_aws_credentials_new(creds->access_key_id, creds->secret_access_key,
				       creds->session_token, creds->expires_usec, creds->source);
}

void
sfl_aws_credentials_free(SflAwsCredentials *creds)
{
	if (creds == NULL)
		return;
	g_free(creds->access_key_id);
	if (creds->secret_access_key != NULL)
		memset(creds->secret_access_key, 0, strlen(creds->secret_access_key));
	g_free(creds->secret_access_key);
	g_free(creds->session_token);
	g_free(creds->source);
	g_free(creds);
}

struct _SflAwsCredentialProvider {
	GObject parent_instance;
	gchar **envp;
	SflCurlLoop *loop;
	SflClock *clock;
	gchar *container_base;
	gchar *imds_base;
	SflAwsCredentials *cached;
	GPtrArray *waiting; /* GTasks waiting for the resolution in flight */
	GCancellable *cancellable;
};

G_DEFINE_TYPE(SflAwsCredentialProvider, sfl_aws_credential_provider, G_TYPE_OBJECT)

/**
 * sfl_aws_region_from_env:
 * @envp: (nullable): an environment, NULL for the process's
 *
 * Returns: (transfer none) (nullable): the region the SDKs would use
 */
const gchar *
sfl_aws_region_from_env(const gchar *const *envp)
{
	const gchar *region;

	if (envp == NULL) {
		region = g_getenv("AWS_REGION");
		if (region == NULL || region[0] == '\0')
			region = g_getenv("AWS_DEFAULT_REGION");
	} else {
		region = g_environ_getenv((gchar **)envp, "AWS_REGION");
		if (region == NULL || region[0] == '\0')
			region = g_environ_getenv((gchar **)envp, "AWS_DEFAULT_REGION");
	}
	return region != NULL && region[0] != '\0' ? region : NULL;
}

static const gchar *
sfl_aws_env(SflAwsCredentialProvider *self, const gchar *name)
{
	const gchar *value = g_environ_getenv(self->envp, name);
	return value != NULL && value[0] != '\0' ? value : NULL;
}

/* --- environment and shared files (worker thread) ----------------------------------------- */

/* the [section]'s key = value pairs of an AWS INI file; NULL when the section is absent */
static GHashTable *
sfl_aws_ini_section(const gchar *text, const gchar *section)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	GHashTable *found = NULL;
	gboolean inside = FALSE;

	for (guint i = 0; lines[i] != NULL; i++) {
		gchar *line = g_strstrip(lines[i]);
		gchar *eq;

		if (line[0] == '\0' || line[0] == '#' || line[0] == ';')
			continue;
		if (line[0] == '[') {
			gchar *end = strchr(line, ']');
			if (end != NULL)
				*end = '\0';
			inside = g_strcmp0(g_strstrip(line + 1), section) == 0;
			if (inside && found == NULL)
				found = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
							      g_free);
			continue;
		}
		eq = strchr(line, '=');
		if (!inside || eq == NULL)
			continue;
		*eq = '\0';
		g_hash_table_replace(found, g_strdup(g_strstrip(line)),
				     g_strdup(g_strstrip(eq + 1)));
	}
	return found;
}

static gchar *
sfl_aws_home_file(SflAwsCredentialProvider *self, const gchar *env_name, const gchar *name)
{
	const gchar *path = sfl_aws_env(self, env_name);
	const gchar *home = sfl_aws_env(self, "HOME");

	if (path != NULL) {
		if (g_str_has_prefix(path, "~/") && home != NULL)
			return g_build_filename(home, path + 2, NULL);
		return g_strdup(path);
	}
	return g_build_filename(home != NULL ? home : g_get_home_dir(), ".aws", name, NULL);
}

/* TRUE with *creds NULL when the file or the profile is absent */
static gboolean
sfl_aws_from_file(SflAwsCredentialProvider *self, const gchar *path, const gchar *section,
		  SflAwsCredentials **creds, GError **error)
{
	g_autofree gchar *text = NULL;
	g_autoptr(GError) local = NULL;
	g_autoptr(GHashTable) keys = NULL;
	g_autofree gchar *source = NULL;
	const gchar *akid;
	const gchar *secret;

	*creds = NULL;
	if (!g_file_get_contents(path, &text, NULL, &local)) {
		if (g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			return TRUE;
		g_set_error(error, SFL_ERROR, SFL_ERROR_AUTH, "cannot read AWS credentials: %s",
			    local->message);
		return FALSE;
	}
	keys = sfl_aws_ini_section(text, section);
	if (keys == NULL)
		return TRUE;
	akid = g_hash_table_lookup(keys, "aws_access_key_id");
	secret = g_hash_table_lookup(keys, "aws_secret_access_key");
	if (akid == NULL && secret == NULL)
		return TRUE;
	if (akid == NULL || secret == NULL || akid[0] == '\0' || secret[0] == '\0') {
		g_set_error(error, SFL_ERROR, SFL_ERROR_AUTH,
			    "%s: [%s] needs both aws_access_key_id and aws_secret_access_key", path,
			    section);
		return FALSE;
	}
	source = g_strdup_printf("%s [%s]", path, section);
	*creds = sfl_aws_credentials_new(akid, secret,
					 g_hash_table_lookup(keys, "aws_session_token"), 0, source);
	return TRUE;
}

static gboolean
sfl_aws_parse_expiration(const gchar *text, gint64 *usec)
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_iso8601(text, NULL);

	if (dt == NULL)
		return FALSE;
	*usec = g_date_time_to_unix(dt) * G_USEC_PER_SEC + g_date_time_get_microsecond(dt);
	return TRUE;
}

/* the synchronous providers; TRUE with *creds NULL when none of them applies */
static gboolean
sfl_aws_local_chain(SflAwsCredentialProvider *self, SflAwsCredentials **creds, GError **error)
{
	const gchar *akid = sfl_aws_env(self, "AWS_ACCESS_KEY_ID");
	const gchar *secret = sfl_aws_env(self, "AWS_SECRET_ACCESS_KEY");
	const gchar *profile_env = sfl_aws_env(self, "AWS_PROFILE");
	const gchar *profile = profile_env;
	g_autofree gchar *cred_path = NULL;
	g_autofree gchar *config_path = NULL;
	g_autofree gchar *config_section = NULL;

	*creds = NULL;
	if (akid != NULL) {
		const gchar *token = sfl_aws_env(self, "AWS_SESSION_TOKEN");
		const gchar *expiration = sfl_aws_env(self, "AWS_CREDENTIAL_EXPIRATION");
		gint64 expires = 0;

		if (secret == NULL) {
			g_set_error_literal(error, SFL_ERROR, SFL_ERROR_AUTH,
					    "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is "
					    "not");
			return FALSE;
		}
		if (token == NULL)
			token = sfl_aws_env(self, "AWS_SECURITY_TOKEN");
		if (expiration != NULL && !sfl_aws_parse_expiration(expiration, &expires)) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_AUTH,
				    "AWS_CREDENTIAL_EXPIRATION is not an ISO-8601 time: %s",
				    expiration);
			return FALSE;
		}
		*creds = sfl_aws_credentials_new(akid, secret, token, expires, "environment");
		return TRUE;
	}
	if (secret != NULL) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_AUTH,
				    "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
		return FALSE;
	}
	if (profile == NULL)
		profile = sfl_aws_env(self, "AWS_DEFAULT_PROFILE");
	if (profile == NULL)
		profile = "default";
	cred_path = sfl_aws_home_file(self, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
	if (!sfl_aws_from_file(self, cred_path, profile, creds, error))
		return FALSE;
	if (*creds != NULL)
		return TRUE;
	config_path = sfl_aws_home_file(self, "AWS_CONFIG_FILE", "config");
	config_section = g_str_equal(profile, "default") ? g_strdup("default")
							 : g_strconcat("profile ", profile, NULL);
	return sfl_aws_from_file(self, config_path, config_section, creds, error);
}

static void
sfl_aws_local_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
	SflAwsCredentialProvider *self = source;
	SflAwsCredentials *creds = NULL;
	GError *error = NULL;

	if (!sfl_aws_local_chain(self, &creds, &error)) {
		g_task_return_error(task, error);
		return;
	}
	/* NULL: no local provider applies */
	g_task_return_pointer(task, creds, (GDestroyNotify)sfl_aws_credentials_free);
}

/* --- container endpoint and IMDSv2 (main thread) ------------------------------------------ */

typedef struct {
	gchar *imds_token;
	gchar *imds_role;
	gchar *container_error;
} SflAwsResolve;

static void
sfl_aws_resolve_free(SflAwsResolve *r)
{
	g_free(r->imds_token);
	g_free(r->imds_role);
	g_free(r->container_error);
	g_free(r);
}

static void sfl_aws_provider_deliver(SflAwsCredentialProvider *self, SflAwsCredentials *creds,
				     const GError *error);

/* {AccessKeyId, SecretAccessKey, Token, Expiration} from either metadata service */
static SflAwsCredentials *
sfl_aws_parse_document(GBytes *body, const gchar *source, GError **error)
{
	gsize len = 0;
	const gchar *data = g_bytes_get_data(body, &len);
	json_error_t jerr;
	g_autoptr(json_t) doc = json_loadb(data, len, 0, &jerr);
	const gchar *akid, *secret, *token, *expiration;
	gint64 expires = 0;

	if (!json_is_object(doc)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_AUTH,
			    "%s answered with something that is not a JSON object", source);
		return NULL;
	}
	akid = json_string_value(json_object_get(doc, "AccessKeyId"));
	secret = json_string_value(json_object_get(doc, "SecretAccessKey"));
	token = json_string_value(json_object_get(doc, "Token"));
	expiration = json_string_value(json_object_get(doc, "Expiration"));
	if (akid == NULL || secret == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_AUTH,
			    "%s answered without AccessKeyId/SecretAccessKey", source);
		return NULL;
	}
	if (expiration != NULL && !sfl_aws_parse_expiration(expiration, &expires)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_AUTH,
			    "%s answered with an Expiration that is not ISO-8601", source);
		return NULL;
	}
	return sfl_aws_credentials_new(akid, secret, token, expires, source);
}

/* the response body, or an error naming @what with its status */
static GBytes *
sfl_aws_http_body(GAsyncResult *result, const gchar *what, GError **error)
{
	g_autoptr(SflHttpResponse) response = sfl_http_request_finish(result, error);
	guint status;

	if (response == NULL) {
		g_prefix_error(error, "%s: ", what);
		return NULL;
	}
	status = sfl_http_response_get_status(response);
	if (status != 200) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_AUTH, "%s answered HTTP %u", what, status);
		return NULL;
	}
	return g_bytes_ref(sfl_http_response_get_body(response));
}

/* the body of a 200 answer from @what, as text */
static gchar *
sfl_aws_http_text(GAsyncResult *result, const gchar *what, GError **error)
{
	g_autoptr(GBytes) body = sfl_aws_http_body(result, what, error);
	gsize len = 0;
	const gchar *data;

	if (body == NULL)
		return NULL;
	data = g_bytes_get_data(body, &len);
	return g_strndup(data != NULL ? data : "", len);
}

static void sfl_aws_imds_start(GTask *task);

/* a credentials document fetched from @what completes @task */
static void
sfl_aws_return_document(GTask *task, GAsyncResult *result, const gchar *what)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body = sfl_aws_http_body(result, what, &error);
	SflAwsCredentials *creds = body != NULL ? sfl_aws_parse_document(body, what, &error) : NULL;

	if (creds == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	g_task_return_pointer(task, creds, (GDestroyNotify)sfl_aws_credentials_free);
}

static void
sfl_aws_imds_creds_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;

	sfl_aws_return_document(task, result, "instance metadata");
}

/* one request to instance metadata, @path under its base, with the one @header it needs */
static void
sfl_aws_imds_request(GTask *task, const gchar *method, const gchar *path, const gchar *header,
		     GBytes *body, GAsyncReadyCallback callback)
{
	SflAwsCredentialProvider *self = g_task_get_source_object(task);
	g_autofree gchar *url = g_strconcat(self->imds_base, path, NULL);
	const gchar *headers[2] = { header, NULL };

	sfl_http_request_bounded_async(self->loop, method, url, headers, body,
				       SFL_AWS_IMDS_TIMEOUT_MS, SFL_AWS_CREDS_MAX_BODY,
				       g_task_get_cancellable(task), callback, task);
}

/* a GET of the IMDS credentials path (the role list, or @role's credentials), with the token */
static void
sfl_aws_imds_get(GTask *task, const gchar *role, GAsyncReadyCallback callback)
{
	SflAwsResolve *r = g_task_get_task_data(task);
	g_autofree gchar *header = g_strdup_printf("X-aws-ec2-metadata-token: %s", r->imds_token);
	g_autofree gchar *path =
		g_strdup_printf("/latest/meta-data/iam/security-credentials/%s", role);

	sfl_aws_imds_request(task, "GET", path, header, NULL, callback);
}

/* the IMDSv2 handshake: the session token first, then the instance's role, then its keys */
static void
sfl_aws_imds_text_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflAwsResolve *r = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	gboolean token = r->imds_token == NULL;
	g_autofree gchar *text = sfl_aws_http_text(
		result, token ? "instance metadata (IMDSv2 token)" : "instance metadata", &error);
	g_auto(GStrv) lines = NULL;

	if (text == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	if (token) {
		r->imds_token = g_strstrip(g_steal_pointer(&text));
		sfl_aws_imds_get(g_steal_pointer(&task), "", sfl_aws_imds_text_cb);
		return;
	}
	lines = g_strsplit(text, "\n", 2);
	r->imds_role = g_strstrip(g_strdup(lines[0] != NULL ? lines[0] : ""));
	if (r->imds_role[0] == '\0' || strchr(r->imds_role, '/') != NULL) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_AUTH,
					"instance metadata names no IAM role for this instance");
		return;
	}
	sfl_aws_imds_get(g_steal_pointer(&task), r->imds_role, sfl_aws_imds_creds_cb);
}

static void
sfl_aws_imds_start(GTask *task)
{
	SflAwsCredentialProvider *self = g_task_get_source_object(task);
	const gchar *disabled = sfl_aws_env(self, "AWS_EC2_METADATA_DISABLED");
	const gchar *endpoint = sfl_aws_env(self, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	g_autoptr(GBytes) empty = g_bytes_new_static("", 0);

	if (disabled != NULL && g_ascii_strcasecmp(disabled, "true") == 0) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_AUTH,
					"no AWS credentials found (environment, shared files, "
					"container endpoint; instance metadata is disabled)");
		g_object_unref(task);
		return;
	}
	if (endpoint != NULL) {
		g_free(self->imds_base);
		self->imds_base = g_strdup(endpoint);
		while (g_str_has_suffix(self->imds_base, "/"))
			self->imds_base[strlen(self->imds_base) - 1] = '\0';
	}
	sfl_aws_imds_request(task, "PUT", "/latest/api/token",
			     "X-aws-ec2-metadata-token-ttl-seconds: 21600", empty,
			     sfl_aws_imds_text_cb);
}

static void
sfl_aws_container_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;

	sfl_aws_return_document(task, result, "the container credentials endpoint");
}

static gboolean
sfl_aws_full_uri_allowed(const gchar *url)
{
	g_autoptr(GUri) uri = g_uri_parse(url, G_URI_FLAGS_NONE, NULL);
	const gchar *host;

	if (uri == NULL)
		return FALSE;
	host = g_uri_get_host(uri);
	if (g_strcmp0(g_uri_get_scheme(uri), "https") == 0)
		return host != NULL;
	return g_strcmp0(host, "127.0.0.1") == 0 || g_strcmp0(host, "localhost") == 0 ||
	       g_strcmp0(host, "::1") == 0 || g_strcmp0(host, "169.254.170.2") == 0 ||
	       g_strcmp0(host, "169.254.170.23") == 0 || g_strcmp0(host, "fd00:ec2::23") == 0;
}

/* starts the container provider; FALSE when it does not apply */
static gboolean
sfl_aws_container_start(GTask *task, GError **error)
{
	SflAwsCredentialProvider *self = g_task_get_source_object(task);
	const gchar *relative = sfl_aws_env(self, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const gchar *full = sfl_aws_env(self, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const gchar *token_file = sfl_aws_env(self, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	g_autofree gchar *token = g_strdup(sfl_aws_env(self, "AWS_CONTAINER_AUTHORIZATION_TOKEN"));
	g_autofree gchar *url = NULL;
	g_autofree gchar *header = NULL;
	const gchar *headers[2] = { NULL, NULL };

	if (relative != NULL) {
		url = g_strconcat(self->container_base, relative[0] == '/' ? "" : "/", relative,
				  NULL);
	} else if (full != NULL) {
		if (!sfl_aws_full_uri_allowed(full)) {
			g_set_error_literal(error, SFL_ERROR, SFL_ERROR_AUTH,
					    "AWS_CONTAINER_CREDENTIALS_FULL_URI must be HTTPS, "
					    "loopback or a container credentials address");
			return TRUE;
		}
		url = g_strdup(full);
	} else {
		return FALSE;
	}
	if (token_file != NULL) {
		g_autoptr(GError) local = NULL;
		g_clear_pointer(&token, g_free);
		if (!g_file_get_contents(token_file, &token, NULL, &local)) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_AUTH,
				    "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: %s",
				    local->message);
			return TRUE;
		}
		g_strstrip(token);
	}
	if (token != NULL) {
		if (strchr(token, '\r') != NULL || strchr(token, '\n') != NULL) {
			g_set_error_literal(error, SFL_ERROR, SFL_ERROR_AUTH,
					    "the container authorization token contains a line "
					    "break");
			return TRUE;
		}
		header = g_strdup_printf("Authorization: %s", token);
		headers[0] = header;
	}
	sfl_http_request_bounded_async(self->loop, "GET", url, headers, NULL,
				       SFL_AWS_CONTAINER_TIMEOUT_MS, SFL_AWS_CREDS_MAX_BODY,
				       g_task_get_cancellable(task), sfl_aws_container_cb,
				       g_object_ref(task));
	return TRUE;
}

static void
sfl_aws_remote_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflAwsCredentialProvider *self = SFL_AWS_CREDENTIAL_PROVIDER(source);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflAwsCredentials) creds = g_task_propagate_pointer(G_TASK(result), &error);

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	sfl_aws_provider_deliver(self, creds, error);
}

static void
sfl_aws_local_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflAwsCredentialProvider *self = SFL_AWS_CREDENTIAL_PROVIDER(source);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflAwsCredentials) creds = g_task_propagate_pointer(G_TASK(result), &error);
	g_autoptr(GTask) remote = NULL;

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	if (creds != NULL || error != NULL) {
		sfl_aws_provider_deliver(self, creds, error);
		return;
	}
	if (self->loop == NULL)
		self->loop = sfl_curl_loop_new();
	remote = g_task_new(self, self->cancellable, sfl_aws_remote_done_cb, NULL);
	g_task_set_task_data(remote, g_new0(SflAwsResolve, 1),
			     (GDestroyNotify)sfl_aws_resolve_free);
	if (sfl_aws_container_start(remote, &error)) {
		if (error != NULL)
			g_task_return_error(remote, g_steal_pointer(&error));
		return;
	}
	sfl_aws_imds_start(g_steal_pointer(&remote));
}

static void
sfl_aws_provider_deliver(SflAwsCredentialProvider *self, SflAwsCredentials *creds,
			 const GError *error)
{
	if (creds != NULL) {
		g_clear_pointer(&self->cached, sfl_aws_credentials_free);
		self->cached = sfl_aws_credentials_copy(creds);
		g_debug("AWS credentials from %s", creds->source);
	}
	sfl_object_waiters_deliver(&self->waiting, creds, (GBoxedCopyFunc)sfl_aws_credentials_copy,
				   (GDestroyNotify)sfl_aws_credentials_free, error);
}

/**
 * sfl_aws_credential_provider_get_async:
 * @self: a provider
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * The cached credentials while they are good for five more minutes, else the chain again.
 * Callers arriving while the chain runs share its result.
 */
void
sfl_aws_credential_provider_get_async(SflAwsCredentialProvider *self, GCancellable *cancellable,
				      GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	g_autoptr(GTask) local = NULL;

	g_return_if_fail(SFL_IS_AWS_CREDENTIAL_PROVIDER(self));
	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_aws_credential_provider_get_async);
	if (self->cached != NULL &&
	    (self->cached->expires_usec == 0 ||
	     sfl_clock_wall_usec(self->clock) <
		     self->cached->expires_usec - SFL_AWS_REFRESH_MARGIN_USEC)) {
		g_task_return_pointer(task, sfl_aws_credentials_copy(self->cached),
				      (GDestroyNotify)sfl_aws_credentials_free);
		return;
	}
	if (!sfl_object_waiters_join(&self->waiting, g_steal_pointer(&task)))
		return;
	local = g_task_new(self, self->cancellable, sfl_aws_local_done_cb, NULL);
	g_task_run_in_thread(local, sfl_aws_local_thread);
}

/**
 * sfl_aws_credential_provider_get_finish:
 * @self: a provider
 * @result: the result
 * @error: return location for an error (SFL_ERROR_AUTH when the chain found nothing usable)
 *
 * Returns: (transfer full) (nullable): the credentials
 */
SflAwsCredentials *
sfl_aws_credential_provider_get_finish(SflAwsCredentialProvider *self, GAsyncResult *result,
				       GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

void
sfl_aws_credential_provider_set_link_local(SflAwsCredentialProvider *self,
					   const gchar *container_base, const gchar *imds_base)
{
	g_return_if_fail(SFL_IS_AWS_CREDENTIAL_PROVIDER(self));
	g_free(self->container_base);
	self->container_base = g_strdup(container_base);
	g_free(self->imds_base);
	self->imds_base = g_strdup(imds_base);
}

static void
sfl_aws_credential_provider_dispose(GObject *object)
{
	SflAwsCredentialProvider *self = SFL_AWS_CREDENTIAL_PROVIDER(object);

	if (self->cancellable != NULL)
		g_cancellable_cancel(self->cancellable);
	G_OBJECT_CLASS(sfl_aws_credential_provider_parent_class)->dispose(object);
}

static void
sfl_aws_credential_provider_finalize(GObject *object)
{
	SflAwsCredentialProvider *self = SFL_AWS_CREDENTIAL_PROVIDER(object);

	g_strfreev(self->envp);
	g_clear_object(&self->loop);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_free(self->container_base);
	g_free(self->imds_base);
	g_clear_pointer(&self->cached, sfl_aws_credentials_free);
	g_clear_pointer(&self->waiting, g_ptr_array_unref);
	g_clear_object(&self->cancellable);
	G_OBJECT_CLASS(sfl_aws_credential_provider_parent_class)->finalize(object);
}

static void
sfl_aws_credential_provider_class_init(SflAwsCredentialProviderClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	object_class->dispose = sfl_aws_credential_provider_dispose;
	object_class->finalize = sfl_aws_credential_provider_finalize;
}

static void
sfl_aws_credential_provider_init(SflAwsCredentialProvider *self)
{
	self->container_base = g_strdup("http://169.254.170.2");
	self->imds_base = g_strdup("http://169.254.169.254");
	self->cancellable = g_cancellable_new();
}

/**
 * sfl_aws_credential_provider_new:
 * @envp: (nullable): the environment to read, NULL for the process's (copied)
 * @loop: (nullable): the curl loop for the metadata services; one is made when needed
 * @clock: (nullable): for expiry; NULL for the system clock
 *
 * Returns: (transfer full): a provider
 */
SflAwsCredentialProvider *
sfl_aws_credential_provider_new(const gchar *const *envp, SflCurlLoop *loop, SflClock *clock)
{
	SflAwsCredentialProvider *self = g_object_new(SFL_TYPE_AWS_CREDENTIAL_PROVIDER, NULL);

	self->envp = envp != NULL ? g_strdupv((gchar **)envp) : g_get_environ();
	self->loop = loop != NULL ? g_object_ref(loop) : NULL;
	self->clock = clock != NULL ? sfl_clock_ref(clock) : sfl_clock_get_system();
	return self;
}
