/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflKubeClient"

#include "config.h"

#include "sfl-kube-client.h"

#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-config-node.h"
#include "sfl-error.h"
#include "sfl-http.h"
#include "sfl-redact.h"

/* larger than any Lease or Status object; the API server never sends more for our calls */
#define SFL_KUBE_MAX_BODY (256 * 1024)
#define SFL_KUBE_MAX_FILE (1024 * 1024)

struct _SflKubeClient {
	GObject parent_instance;
	gchar *server; /* https://host:port, no trailing slash */
	gchar *namespace_;
	gchar *ca_file;
	GBytes *ca_data;
	gchar *cert_file;
	GBytes *cert_data;
	gchar *key_file;
	GBytes *key_data;
	gchar *token;	   /* a fixed token, or NULL */
	gchar *token_file; /* read for every request, or NULL */
	SflCurlLoop *loop;
};

G_DEFINE_TYPE(SflKubeClient, sfl_kube_client, G_TYPE_OBJECT)

static void
sfl_kube_client_finalize(GObject *object)
{
	SflKubeClient *self = SFL_KUBE_CLIENT(object);

	g_free(self->server);
	g_free(self->namespace_);
	g_free(self->ca_file);
	g_clear_pointer(&self->ca_data, g_bytes_unref);
	g_free(self->cert_file);
	g_clear_pointer(&self->cert_data, g_bytes_unref);
	g_free(self->key_file);
	g_clear_pointer(&self->key_data, g_bytes_unref);
	if (self->token != NULL)
		memset(self->token, 0, strlen(self->token));
	g_free(self->token);
	g_free(self->token_file);
	g_clear_object(&self->loop);
	G_OBJECT_CLASS(sfl_kube_client_parent_class)->finalize(object);
}

static void
sfl_kube_client_class_init(SflKubeClientClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_kube_client_finalize;
}

static void
sfl_kube_client_init(SflKubeClient *self)
{
}

/* reads a small credential file; the error names the file, never its content */
static gchar *
sfl_kube_client_read_file(const gchar *what, const gchar *path, gsize *len, GError **error)
{
	g_autoptr(GError) local = NULL;
	g_autofree gchar *data = NULL;
	gsize n = 0;

	if (!g_file_get_contents(path, &data, &n, &local)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG, "cannot read the %s %s: %s",
			    what, path, local->message);
		return NULL;
	}
	if (n > SFL_KUBE_MAX_FILE) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "the %s %s is larger than %d bytes", what, path, SFL_KUBE_MAX_FILE);
		return NULL;
	}
	if (len != NULL)
		*len = n;
	return g_steal_pointer(&data);
}

static gchar *
sfl_kube_client_read_token(const gchar *path, GError **error)
{
	g_autofree gchar *data = sfl_kube_client_read_file("token file", path, NULL, error);

	if (data == NULL)
		return NULL;
	g_strstrip(data);
	if (data[0] == '\0') {
		g_set_error(error, SFL_ERROR, SFL_ERROR_AUTH, "the token file %s is empty", path);
		return NULL;
	}
	return g_steal_pointer(&data);
}

/* --- in-cluster ---------------------------------------------------------------------------- */

/**
 * sfl_kube_client_new_in_cluster:
 * @envp: (nullable) (array zero-terminated=1): the environment; %NULL for the process's
 * @sa_dir: (nullable): the service account directory (token, ca.crt, namespace); %NULL for
 *   %SFL_KUBE_SERVICE_ACCOUNT_DIR
 * @error: return location for an error
 *
 * Checks that the token and the CA can be read now, so a pod without a mounted service
 * account token fails at startup rather than at its first renewal.
 *
 * Returns: (transfer full): a client, or %NULL with SFL_ERROR_INVALID_CONFIG
 */
SflKubeClient *
sfl_kube_client_new_in_cluster(const gchar *const *envp, const gchar *sa_dir, GError **error)
{
	g_auto(GStrv) own_env = NULL;
	g_autoptr(SflKubeClient) self = NULL;
	g_autofree gchar *token = NULL;
	g_autofree gchar *ns = NULL;
	g_autofree gchar *ns_path = NULL;
	const gchar *host = NULL;
	const gchar *port = NULL;

	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (envp == NULL) {
		own_env = g_get_environ();
		envp = (const gchar *const *)own_env;
	}
	if (sa_dir == NULL)
		sa_dir = SFL_KUBE_SERVICE_ACCOUNT_DIR;
	host = g_environ_getenv((gchar **)envp, "KUBERNETES_SERVICE_HOST");
	port = g_environ_getenv((gchar **)envp, "KUBERNETES_SERVICE_PORT");
	if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0') {
		g_set_error_literal(
			error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			"coordinate.k8s_lease: not running in a Kubernetes pod "
			"(KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set); set "
			"coordinate.k8s_lease.kubeconfig to run outside a cluster");
		return NULL;
	}
	self = g_object_new(SFL_TYPE_KUBE_CLIENT, NULL);
	/* an IPv6 service address needs brackets in a URL */
	self->server = strchr(host, ':') != NULL ? g_strdup_printf("https://[%s]:%s", host, port)
						 : g_strdup_printf("https://%s:%s", host, port);
	self->ca_file = g_build_filename(sa_dir, "ca.crt", NULL);
	self->token_file = g_build_filename(sa_dir, "token", NULL);
	if (!g_file_test(self->ca_file, G_FILE_TEST_IS_REGULAR)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "coordinate.k8s_lease: the service account CA %s is missing (is the "
			    "service account token mounted? see automountServiceAccountToken)",
			    self->ca_file);
		return NULL;
	}
	token = sfl_kube_client_read_token(self->token_file, error);
	if (token == NULL) {
		g_prefix_error(error, "coordinate.k8s_lease: ");
		return NULL;
	}
	ns_path = g_build_filename(sa_dir, "namespace", NULL);
	if (g_file_get_contents(ns_path, &ns, NULL, NULL))
		self->namespace_ = g_strdup(g_strstrip(ns));
	return g_steal_pointer(&self);
}

/* --- kubeconfig ---------------------------------------------------------------------------- */

static const gchar *
sfl_kube_client_scalar(const SflConfigNode *mapping, const gchar *key)
{
	const SflConfigNode *node = NULL;

	if (mapping == NULL || mapping->kind != SFL_CONFIG_NODE_MAPPING)
		return NULL;
	node = sfl_config_node_lookup(mapping, key);
	if (node == NULL || node->kind != SFL_CONFIG_NODE_SCALAR)
		return NULL;
	return node->text;
}

/* the "what" mapping of the entry of list @list named @name, e.g. clusters[].cluster */
static const SflConfigNode *
sfl_kube_client_named(const SflConfigNode *root, const gchar *list, const gchar *what,
		      const gchar *name, const gchar *path, GError **error)
{
	const SflConfigNode *items = sfl_config_node_lookup(root, list);

	for (guint i = 0;
	     items != NULL && items->kind == SFL_CONFIG_NODE_SEQUENCE && i < items->items->len;
	     i++) {
		const SflConfigNode *item = g_ptr_array_index(items->items, i);
		const SflConfigNode *value = NULL;

		if (g_strcmp0(sfl_kube_client_scalar(item, "name"), name) != 0)
			continue;
		value = sfl_config_node_lookup(item, what);
		if (value == NULL || value->kind != SFL_CONFIG_NODE_MAPPING)
			break;
		return value;
	}
	g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
		    "kubeconfig %s: no %s named '%s' with a '%s' mapping", path, list, name, what);
	return NULL;
}

/* kubeconfig paths are relative to the kubeconfig's own directory */
static gchar *
sfl_kube_client_resolve(const gchar *dir, const gchar *path)
{
	if (g_path_is_absolute(path))
		return g_strdup(path);
	return g_build_filename(dir, path, NULL);
}

static gboolean
sfl_kube_client_base64(const gchar *kubeconfig, const gchar *key, const gchar *text, GBytes **out,
		       GError **error)
{
	gsize len = 0;
	guchar *data = NULL;

	/* g_base64_decode() never fails; an empty result from non-empty text is what bad looks like
	 */
	data = g_base64_decode(text, &len);
	if (len == 0) {
		g_free(data);
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "kubeconfig %s: %s is not base64-encoded PEM", kubeconfig, key);
		return FALSE;
	}
	*out = g_bytes_new_take(data, len);
	return TRUE;
}

/* a file or inline (base64) credential: KEY or KEY-data */
static gboolean
sfl_kube_client_pem(const gchar *kubeconfig, const gchar *dir, const SflConfigNode *mapping,
		    const gchar *key, gchar **file, GBytes **data, GError **error)
{
	g_autofree gchar *data_key = g_strdup_printf("%s-data", key);
	const gchar *inline_text = sfl_kube_client_scalar(mapping, data_key);
	const gchar *path = sfl_kube_client_scalar(mapping, key);

	if (inline_text != NULL && inline_text[0] != '\0')
		return sfl_kube_client_base64(kubeconfig, data_key, inline_text, data, error);
	if (path != NULL && path[0] != '\0')
		*file = sfl_kube_client_resolve(dir, path);
	return TRUE;
}

static gboolean
sfl_kube_client_load_cluster(SflKubeClient *self, const gchar *path, const gchar *dir,
			     const SflConfigNode *cluster, GError **error)
{
	const gchar *server = sfl_kube_client_scalar(cluster, "server");
	const gchar *insecure = sfl_kube_client_scalar(cluster, "insecure-skip-tls-verify");

	if (server == NULL || !g_str_has_prefix(server, "https://")) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "kubeconfig %s: the cluster's server must be an https:// URL", path);
		return FALSE;
	}
	if (insecure != NULL && g_ascii_strcasecmp(insecure, "true") == 0) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "kubeconfig %s: insecure-skip-tls-verify is not supported; give the "
			    "cluster's certificate-authority instead",
			    path);
		return FALSE;
	}
	self->server = g_strdup(server);
	while (g_str_has_suffix(self->server, "/"))
		self->server[strlen(self->server) - 1] = '\0';
	return sfl_kube_client_pem(path, dir, cluster, "certificate-authority", &self->ca_file,
				   &self->ca_data, error);
}

static gboolean
sfl_kube_client_load_user(SflKubeClient *self, const gchar *path, const gchar *dir,
			  const SflConfigNode *user, GError **error)
{
	static const gchar *const unsupported[] = { "exec", "auth-provider", "username",
						    "password" };
	const gchar *token = sfl_kube_client_scalar(user, "token");
	const gchar *token_file = sfl_kube_client_scalar(user, "tokenFile");

	for (guint i = 0; i < G_N_ELEMENTS(unsupported); i++) {
		if (sfl_config_node_lookup(user, unsupported[i]) != NULL) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "kubeconfig %s: the user's '%s' is not supported; use a token, "
				    "a tokenFile or a client certificate",
				    path, unsupported[i]);
			return FALSE;
		}
	}
	if (token != NULL && token[0] != '\0') {
		self->token = g_strdup(token);
		sfl_redact_add_secret(token);
	} else if (token_file != NULL && token_file[0] != '\0') {
		self->token_file = sfl_kube_client_resolve(dir, token_file);
	}
	if (!sfl_kube_client_pem(path, dir, user, "client-certificate", &self->cert_file,
				 &self->cert_data, error) ||
	    !sfl_kube_client_pem(path, dir, user, "client-key", &self->key_file, &self->key_data,
				 error))
		return FALSE;
	if ((self->cert_file != NULL || self->cert_data != NULL) !=
	    (self->key_file != NULL || self->key_data != NULL)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "kubeconfig %s: a client certificate needs its client key and the "
			    "other way round",
			    path);
		return FALSE;
	}
	return TRUE;
}

/**
 * sfl_kube_client_new_from_kubeconfig:
 * @path: a kubeconfig file
 * @error: return location for an error
 *
 * Uses the current context. Credential files are read at request time.
 *
 * Returns: (transfer full): a client, or %NULL with SFL_ERROR_INVALID_CONFIG
 */
SflKubeClient *
sfl_kube_client_new_from_kubeconfig(const gchar *path, GError **error)
{
	g_autoptr(SflKubeClient) self = NULL;
	g_autoptr(SflConfigNode) root = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *dir = NULL;
	const SflConfigNode *context = NULL;
	const SflConfigNode *cluster = NULL;
	const SflConfigNode *user = NULL;
	const gchar *current = NULL;
	const gchar *cluster_name = NULL;
	const gchar *user_name = NULL;
	gsize len = 0;

	g_return_val_if_fail(path != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	text = sfl_kube_client_read_file("kubeconfig", path, &len, error);
	if (text == NULL)
		return NULL;
	root = sfl_config_node_from_yaml(text, len, path, error);
	if (root == NULL)
		return NULL;
	if (root->kind != SFL_CONFIG_NODE_MAPPING) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "kubeconfig %s: not a mapping", path);
		return NULL;
	}
	current = sfl_kube_client_scalar(root, "current-context");
	if (current == NULL || current[0] == '\0') {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "kubeconfig %s: current-context is not set", path);
		return NULL;
	}
	context = sfl_kube_client_named(root, "contexts", "context", current, path, error);
	if (context == NULL)
		return NULL;
	cluster_name = sfl_kube_client_scalar(context, "cluster");
	user_name = sfl_kube_client_scalar(context, "user");
	cluster = sfl_kube_client_named(root, "clusters", "cluster",
					cluster_name != NULL ? cluster_name : "", path, error);
	if (cluster == NULL)
		return NULL;
	self = g_object_new(SFL_TYPE_KUBE_CLIENT, NULL);
	dir = g_path_get_dirname(path);
	if (!sfl_kube_client_load_cluster(self, path, dir, cluster, error))
		return NULL;
	/* a context without a user is anonymous access, which a test cluster may allow */
	if (user_name != NULL && user_name[0] != '\0') {
		user = sfl_kube_client_named(root, "users", "user", user_name, path, error);
		if (user == NULL || !sfl_kube_client_load_user(self, path, dir, user, error))
			return NULL;
	}
	self->namespace_ = g_strdup(sfl_kube_client_scalar(context, "namespace"));
	return g_steal_pointer(&self);
}

/**
 * sfl_kube_client_get_server:
 * @self: a client
 *
 * Returns: (transfer none): the API server's base URL
 */
const gchar *
sfl_kube_client_get_server(SflKubeClient *self)
{
	g_return_val_if_fail(SFL_IS_KUBE_CLIENT(self), NULL);
	return self->server;
}

/**
 * sfl_kube_client_get_namespace:
 * @self: a client
 *
 * Returns: (transfer none) (nullable): the kubeconfig context's or the pod's namespace
 */
const gchar *
sfl_kube_client_get_namespace(SflKubeClient *self)
{
	g_return_val_if_fail(SFL_IS_KUBE_CLIENT(self), NULL);
	return self->namespace_;
}

/**
 * sfl_kube_client_set_curl_loop:
 * @self: a client
 * @loop: (nullable): the daemon's curl loop; %NULL makes the client create its own on the
 *   first request
 */
void
sfl_kube_client_set_curl_loop(SflKubeClient *self, SflCurlLoop *loop)
{
	g_return_if_fail(SFL_IS_KUBE_CLIENT(self));
	g_set_object(&self->loop, loop);
}

/* --- requests ------------------------------------------------------------------------------ */

typedef struct {
	gchar *method;
	gchar *path;
} SflKubeRequest;

typedef struct {
	json_t *object;
	guint status;
} SflKubeResult;

static void
sfl_kube_result_free(SflKubeResult *result)
{
	if (result->object != NULL)
		json_decref(result->object);
	g_free(result);
}

static void
sfl_kube_request_free(SflKubeRequest *req)
{
	g_free(req->method);
	g_free(req->path);
	g_free(req);
}

static SflError
sfl_kube_client_status_code(guint status)
{
	SflHttpClass klass = sfl_http_status_class(status);

	/* an invalid object is refused for good; anything else unknown may pass on a retry */
	if (status == 422)
		return SFL_ERROR_REJECTED;
	if (klass == SFL_HTTP_CLASS_AUTH || klass == SFL_HTTP_CLASS_NOT_FOUND ||
	    klass == SFL_HTTP_CLASS_THROTTLED || status == 409)
		return sfl_http_class_error_code(klass);
	return SFL_ERROR_TRANSIENT;
}

static void
sfl_kube_client_response_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflKubeRequest *req = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflHttpResponse) response = sfl_http_request_finish(result, &error);
	g_autoptr(json_t) object = NULL;
	SflKubeResult *res = NULL;
	const gchar *data = NULL;
	gsize len = 0;
	guint status = 0;

	if (response == NULL) {
		/* the transport's message is redacted already */
		g_prefix_error(&error, "Kubernetes API %s %s: ", req->method, req->path);
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	status = sfl_http_response_get_status(response);
	data = g_bytes_get_data(sfl_http_response_get_body(response), &len);
	/* a cut-off body is never parsed: a prefix of JSON may still parse */
	if (!sfl_http_response_get_body_truncated(response))
		object = json_loadb(data != NULL ? data : "", len, 0, NULL);
	if (sfl_http_status_class(status) != SFL_HTTP_CLASS_SUCCESS) {
		const gchar *message = json_string_value(json_object_get(object, "message"));
		g_autofree gchar *excerpt = NULL;
		g_autofree gchar *safe = NULL;
		g_autoptr(GError) failed = NULL;

		if (message == NULL) {
			excerpt = g_strndup(data != NULL ? data : "", MIN(len, 200));
			message = excerpt;
		}
		safe = sfl_redact(message);
		failed = g_error_new(SFL_ERROR, sfl_kube_client_status_code(status),
				     "Kubernetes API %s %s answered %u: %s", req->method, req->path,
				     status, safe);
		sfl_error_set_http_status(failed, status);
		g_task_return_error(task, g_steal_pointer(&failed));
		return;
	}
	if (object == NULL || !json_is_object(object)) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"Kubernetes API %s %s answered %u with a body that is not "
					"a JSON object",
					req->method, req->path, status);
		return;
	}
	res = g_new0(SflKubeResult, 1);
	res->object = g_steal_pointer(&object);
	res->status = status;
	g_task_return_pointer(task, res, (GDestroyNotify)sfl_kube_result_free);
}

/* the bearer token header, or NULL without a token; the caller wipes and frees it */
static gboolean
sfl_kube_client_auth_header(SflKubeClient *self, gchar **header, GError **error)
{
	g_autofree gchar *token = NULL;

	*header = NULL;
	if (self->token_file != NULL) {
		token = sfl_kube_client_read_token(self->token_file, error);
		if (token == NULL)
			return FALSE;
	} else if (self->token != NULL) {
		token = g_strdup(self->token);
	}
	if (token != NULL) {
		*header = g_strconcat("Authorization: Bearer ", token, NULL);
		memset(token, 0, strlen(token));
	}
	return TRUE;
}

/**
 * sfl_kube_client_request_async:
 * @self: a client
 * @method: "GET", "POST" or "PUT"
 * @path: the path and query after the server URL, starting with "/"
 * @body: (nullable): a JSON body (not stolen)
 * @timeout_ms: the whole request's deadline (connecting included), 0 for none
 * @cancellable: (nullable): aborts the request
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_kube_client_request_async(SflKubeClient *self, const gchar *method, const gchar *path,
			      json_t *body, guint timeout_ms, GCancellable *cancellable,
			      GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) payload = NULL;
	g_autofree gchar *url = NULL;
	g_autofree gchar *auth = NULL;
	const gchar *headers[4] = { NULL };
	guint n = 0;
	SflKubeRequest *req = NULL;
	SflHttpTls tls = { 0 };
	SflHttpOptions options = { 0 };

	g_return_if_fail(SFL_IS_KUBE_CLIENT(self));
	g_return_if_fail(method != NULL && path != NULL && path[0] == '/');

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_kube_client_request_async);
	req = g_new0(SflKubeRequest, 1);
	req->method = g_strdup(method);
	req->path = g_strdup(path);
	g_task_set_task_data(task, req, (GDestroyNotify)sfl_kube_request_free);
	if (!sfl_kube_client_auth_header(self, &auth, &error)) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	if (self->loop == NULL)
		self->loop = sfl_curl_loop_new();
	if (auth != NULL)
		headers[n++] = auth;
	headers[n++] = "Accept: application/json";
	if (body != NULL) {
		gchar *text = json_dumps(body, JSON_COMPACT);

		payload = g_bytes_new_take(text, strlen(text));
		headers[n++] = "Content-Type: application/json";
	}
	url = g_strconcat(self->server, path, NULL);
	/* the cluster's own CA (never the daemon's bundle) and the kubeconfig's client cert */
	tls = (SflHttpTls){ .ca_file = self->ca_file,
			    .ca_pem = self->ca_data,
			    .cert_file = self->cert_file,
			    .cert_pem = self->cert_data,
			    .key_file = self->key_file,
			    .key_pem = self->key_data };
	options = (SflHttpOptions){ .timeout_ms = timeout_ms,
				    .connect_timeout_ms = timeout_ms,
				    .max_body = SFL_KUBE_MAX_BODY,
				    .https_only = TRUE,
				    .tls = &tls };
	sfl_http_request_full_async(self->loop, method, url, headers, payload, &options,
				    cancellable, sfl_kube_client_response_cb, g_object_ref(task));
	if (auth != NULL)
		memset(auth, 0, strlen(auth));
}

/**
 * sfl_kube_client_request_finish:
 * @self: a client
 * @result: the result
 * @status: (out) (optional): the HTTP status of a 2xx answer
 * @error: return location for an error
 *
 * Returns: (transfer full): the answer's JSON object, or %NULL with an error
 */
json_t *
sfl_kube_client_request_finish(SflKubeClient *self, GAsyncResult *result, guint *status,
			       GError **error)
{
	SflKubeResult *res = NULL;
	json_t *object = NULL;

	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	res = g_task_propagate_pointer(G_TASK(result), error);
	if (res == NULL)
		return NULL;
	if (status != NULL)
		*status = res->status;
	object = g_steal_pointer(&res->object);
	sfl_kube_result_free(res);
	return object;
}
