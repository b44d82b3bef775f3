/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflK8sLease"

#include "config.h"

#include "sfl-k8s-lease-api.h"

#include "sfl-autocleanups.h"
#include "sfl-cas-lease-coordinator.h"
#include "sfl-error.h"

/* --- the record ---------------------------------------------------------------------------- */

/**
 * sfl_k8s_lease_new:
 *
 * Returns: (transfer full): a lease with every field unset
 */
SflK8sLease *
sfl_k8s_lease_new(void)
{
	SflK8sLease *lease = g_new0(SflK8sLease, 1);

	lease->duration_s = -1;
	lease->transitions = -1;
	return lease;
}

/**
 * sfl_k8s_lease_copy:
 * @lease: a lease
 *
 * Returns: (transfer full): a deep copy
 */
SflK8sLease *
sfl_k8s_lease_copy(const SflK8sLease *lease)
{
	SflK8sLease *copy = sfl_k8s_lease_new();

	copy->resource_version = g_strdup(lease->resource_version);
	copy->holder = g_strdup(lease->holder);
	copy->duration_s = lease->duration_s;
	copy->acquire_time = g_strdup(lease->acquire_time);
	copy->renew_time = g_strdup(lease->renew_time);
	copy->transitions = lease->transitions;
	return copy;
}

/**
 * sfl_k8s_lease_free:
 * @lease: (nullable): a lease
 */
void
sfl_k8s_lease_free(SflK8sLease *lease)
{
	if (lease == NULL)
		return;
	g_free(lease->resource_version);
	g_free(lease->holder);
	g_free(lease->acquire_time);
	g_free(lease->renew_time);
	g_free(lease);
}

static gchar *
sfl_k8s_lease_string(json_t *object, const gchar *key)
{
	const gchar *value = json_string_value(json_object_get(object, key));
	return value != NULL ? g_strdup(value) : NULL;
}

static gint64
sfl_k8s_lease_integer(json_t *object, const gchar *key)
{
	json_t *value = json_object_get(object, key);

	if (!json_is_integer(value) || json_integer_value(value) < 0)
		return -1;
	return (gint64)json_integer_value(value);
}

/**
 * sfl_k8s_lease_from_json:
 * @object: a Lease object as the API returns it
 *
 * Tolerant: a missing or mistyped field reads as unset (null in the API means unset too).
 *
 * Returns: (transfer full): the lease
 */
SflK8sLease *
sfl_k8s_lease_from_json(json_t *object)
{
	SflK8sLease *lease = sfl_k8s_lease_new();
	json_t *metadata = json_object_get(object, "metadata");
	json_t *spec = json_object_get(object, "spec");

	lease->resource_version = sfl_k8s_lease_string(metadata, "resourceVersion");
	lease->holder = sfl_k8s_lease_string(spec, "holderIdentity");
	lease->duration_s = sfl_k8s_lease_integer(spec, "leaseDurationSeconds");
	lease->acquire_time = sfl_k8s_lease_string(spec, "acquireTime");
	lease->renew_time = sfl_k8s_lease_string(spec, "renewTime");
	lease->transitions = sfl_k8s_lease_integer(spec, "leaseTransitions");
	return lease;
}

/**
 * sfl_k8s_lease_to_json:
 * @lease: a lease
 * @namespace_: the Lease's namespace
 * @name: the Lease's name
 *
 * Unset fields are left out; resourceVersion only when set (a create must not carry one).
 *
 * Returns: (transfer full): the Lease object to send
 */
json_t *
sfl_k8s_lease_to_json(const SflK8sLease *lease, const gchar *namespace_, const gchar *name)
{
	json_t *object = json_object();
	json_t *metadata = json_object();
	json_t *spec = json_object();

	json_object_set_new(object, "apiVersion", json_string("coordination.k8s.io/v1"));
	json_object_set_new(object, "kind", json_string("Lease"));
	json_object_set_new(metadata, "name", json_string(name));
	json_object_set_new(metadata, "namespace", json_string(namespace_));
	if (lease->resource_version != NULL)
		json_object_set_new(metadata, "resourceVersion",
				    json_string(lease->resource_version));
	if (lease->holder != NULL)
		json_object_set_new(spec, "holderIdentity", json_string(lease->holder));
	if (lease->duration_s >= 0)
		json_object_set_new(spec, "leaseDurationSeconds",
				    json_integer((json_int_t)lease->duration_s));
	if (lease->acquire_time != NULL)
		json_object_set_new(spec, "acquireTime", json_string(lease->acquire_time));
	if (lease->renew_time != NULL)
		json_object_set_new(spec, "renewTime", json_string(lease->renew_time));
	if (lease->transitions >= 0)
		json_object_set_new(spec, "leaseTransitions",
				    json_integer((json_int_t)lease->transitions));
	json_object_set_new(object, "metadata", metadata);
	json_object_set_new(object, "spec", spec);
	return object;
}

/**
 * sfl_k8s_micro_time:
 * @wall_usec: Unix microseconds
 *
 * Returns: (transfer full): "2026-01-02T03:04:05.123456Z"
 */
gchar *
sfl_k8s_micro_time(gint64 wall_usec)
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(wall_usec / G_USEC_PER_SEC);
	g_autofree gchar *base = NULL;

	if (dt == NULL)
		return g_strdup("1970-01-01T00:00:00.000000Z");
	base = g_date_time_format(dt, "%Y-%m-%dT%H:%M:%S");
	return g_strdup_printf("%s.%06dZ", base, (gint)(wall_usec % G_USEC_PER_SEC));
}

/* --- the API ------------------------------------------------------------------------------- */

typedef struct {
	SflKubeClient *client;
	gchar *namespace_;
	gchar *name;
	gchar *collection; /* .../namespaces/<ns>/leases */
	gchar *item;	   /* .../leases/<name> */
	gchar *description;
	guint timeout_ms;
} SflK8sLeaseApiPrivate;

static void sfl_k8s_lease_api_backend_init(SflCasLeaseBackendInterface *iface);

G_DEFINE_TYPE_WITH_CODE(SflK8sLeaseApi, sfl_k8s_lease_api, G_TYPE_OBJECT,
			G_ADD_PRIVATE(SflK8sLeaseApi)
				G_IMPLEMENT_INTERFACE(SFL_TYPE_CAS_LEASE_BACKEND,
						      sfl_k8s_lease_api_backend_init))

#define GET_PRIVATE(o) (sfl_k8s_lease_api_get_instance_private(o))

static void
sfl_k8s_lease_api_request_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) object =
		sfl_kube_client_request_finish(SFL_KUBE_CLIENT(source), result, NULL, &error);

	if (object == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	g_task_return_pointer(task, sfl_k8s_lease_from_json(object),
			      (GDestroyNotify)sfl_k8s_lease_free);
}

static void
sfl_k8s_lease_api_real_get_async(SflK8sLeaseApi *self, GCancellable *cancellable,
				 GAsyncReadyCallback callback, gpointer user_data)
{
	SflK8sLeaseApiPrivate *priv = GET_PRIVATE(self);
	GTask *task = g_task_new(self, cancellable, callback, user_data);

	sfl_kube_client_request_async(priv->client, "GET", priv->item, NULL, priv->timeout_ms,
				      cancellable, sfl_k8s_lease_api_request_cb, task);
}

static SflK8sLease *
sfl_k8s_lease_api_real_finish(SflK8sLeaseApi *self, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
sfl_k8s_lease_api_real_write_async(SflK8sLeaseApi *self, const SflK8sLease *lease, gboolean dry_run,
				   GCancellable *cancellable, GAsyncReadyCallback callback,
				   gpointer user_data)
{
	SflK8sLeaseApiPrivate *priv = GET_PRIVATE(self);
	GTask *task = g_task_new(self, cancellable, callback, user_data);
	g_autoptr(json_t) body = sfl_k8s_lease_to_json(lease, priv->namespace_, priv->name);
	gboolean create = lease->resource_version == NULL;
	g_autofree gchar *path = g_strconcat(create ? priv->collection : priv->item,
					     dry_run ? "?dryRun=All" : "", NULL);

	sfl_kube_client_request_async(priv->client, create ? "POST" : "PUT", path, body,
				      priv->timeout_ms, cancellable, sfl_k8s_lease_api_request_cb,
				      task);
}

static void
sfl_k8s_lease_api_finalize(GObject *object)
{
	SflK8sLeaseApiPrivate *priv = GET_PRIVATE(SFL_K8S_LEASE_API(object));

	g_clear_object(&priv->client);
	g_free(priv->namespace_);
	g_free(priv->name);
	g_free(priv->collection);
	g_free(priv->item);
	g_free(priv->description);
	G_OBJECT_CLASS(sfl_k8s_lease_api_parent_class)->finalize(object);
}

static void
sfl_k8s_lease_api_class_init(SflK8sLeaseApiClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_k8s_lease_api_finalize;
	klass->get_async = sfl_k8s_lease_api_real_get_async;
	klass->get_finish = sfl_k8s_lease_api_real_finish;
	klass->write_async = sfl_k8s_lease_api_real_write_async;
	klass->write_finish = sfl_k8s_lease_api_real_finish;
}

static void
sfl_k8s_lease_api_init(SflK8sLeaseApi *self)
{
}

/**
 * sfl_k8s_lease_api_new:
 * @client: (nullable): the API client; %NULL only for subclasses that override every vfunc
 * @namespace_: the Lease's namespace
 * @name: the Lease's name
 * @timeout_ms: the deadline of each request
 *
 * Returns: (transfer full): the Lease API
 */
SflK8sLeaseApi *
sfl_k8s_lease_api_new(SflKubeClient *client, const gchar *namespace_, const gchar *name,
		      guint timeout_ms)
{
	SflK8sLeaseApi *self = NULL;
	SflK8sLeaseApiPrivate *priv = NULL;
	g_autofree gchar *ns = NULL;
	g_autofree gchar *n = NULL;

	g_return_val_if_fail(client == NULL || SFL_IS_KUBE_CLIENT(client), NULL);
	g_return_val_if_fail(namespace_ != NULL && name != NULL, NULL);

	self = g_object_new(SFL_TYPE_K8S_LEASE_API, NULL);
	priv = GET_PRIVATE(self);
	ns = g_uri_escape_string(namespace_, NULL, FALSE);
	n = g_uri_escape_string(name, NULL, FALSE);
	priv->client = client != NULL ? g_object_ref(client) : NULL;
	priv->namespace_ = g_strdup(namespace_);
	priv->name = g_strdup(name);
	priv->collection = g_strdup_printf("/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
	priv->item = g_strdup_printf("%s/%s", priv->collection, n);
	priv->description = g_strdup_printf("Lease %s/%s", namespace_, name);
	priv->timeout_ms = timeout_ms;
	return self;
}

/**
 * sfl_k8s_lease_api_describe:
 * @self: the API
 *
 * Returns: (transfer none): "Lease <namespace>/<name>", for messages
 */
const gchar *
sfl_k8s_lease_api_describe(SflK8sLeaseApi *self)
{
	SflK8sLeaseApiPrivate *priv = NULL;

	g_return_val_if_fail(SFL_IS_K8S_LEASE_API(self), NULL);
	priv = GET_PRIVATE(self);
	return priv->description != NULL ? priv->description : "Lease";
}

/**
 * sfl_k8s_lease_api_get_namespace:
 * @self: the API
 *
 * Returns: (transfer none): the Lease's namespace
 */
const gchar *
sfl_k8s_lease_api_get_namespace(SflK8sLeaseApi *self)
{
	SflK8sLeaseApiPrivate *priv = NULL;

	g_return_val_if_fail(SFL_IS_K8S_LEASE_API(self), NULL);
	priv = GET_PRIVATE(self);
	return priv->namespace_;
}

/**
 * sfl_k8s_lease_api_get_async:
 * @self: the API
 * @cancellable: (nullable): aborts the read
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_k8s_lease_api_get_async(SflK8sLeaseApi *self, GCancellable *cancellable,
			    GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_K8S_LEASE_API(self));
	SFL_K8S_LEASE_API_GET_CLASS(self)->get_async(self, cancellable, callback, user_data);
}

/**
 * sfl_k8s_lease_api_get_finish:
 * @self: the API
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full): the Lease, or %NULL (SFL_ERROR_NOT_FOUND when absent)
 */
SflK8sLease *
sfl_k8s_lease_api_get_finish(SflK8sLeaseApi *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(SFL_IS_K8S_LEASE_API(self), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	return SFL_K8S_LEASE_API_GET_CLASS(self)->get_finish(self, result, error);
}

/**
 * sfl_k8s_lease_api_write_async:
 * @self: the API
 * @lease: what to store; without resource_version a create, else a replace
 * @dry_run: validate and authorize only
 * @cancellable: (nullable): aborts the write (which may still land)
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_k8s_lease_api_write_async(SflK8sLeaseApi *self, const SflK8sLease *lease, gboolean dry_run,
			      GCancellable *cancellable, GAsyncReadyCallback callback,
			      gpointer user_data)
{
	g_return_if_fail(SFL_IS_K8S_LEASE_API(self));
	g_return_if_fail(lease != NULL);
	SFL_K8S_LEASE_API_GET_CLASS(self)->write_async(self, lease, dry_run, cancellable, callback,
						       user_data);
}

/**
 * sfl_k8s_lease_api_write_finish:
 * @self: the API
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full): the stored Lease, or %NULL (CONFLICT, NOT_FOUND, ...)
 */
SflK8sLease *
sfl_k8s_lease_api_write_finish(SflK8sLeaseApi *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(SFL_IS_K8S_LEASE_API(self), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	return SFL_K8S_LEASE_API_GET_CLASS(self)->write_finish(self, result, error);
}

/* --- as the backend of the compare-and-swap lease engine ----------------------------------- */

static SflCasLeaseDoc *
sfl_k8s_lease_api_to_doc(const SflK8sLease *lease)
{
	SflCasLeaseDoc *doc = sfl_cas_lease_doc_new();

	doc->version = g_strdup(lease->resource_version);
	doc->holder = g_strdup(lease->holder);
	doc->epoch = lease->transitions;
	/* without a renewTime nobody renews it: claimable at once */
	doc->duration_usec = lease->renew_time != NULL && lease->duration_s > 0
				     ? lease->duration_s * G_USEC_PER_SEC
				     : 0;
	doc->tenure = g_strdup(lease->acquire_time);
	return doc;
}

static SflK8sLease *
sfl_k8s_lease_api_from_doc(const SflCasLeaseDoc *doc, const gchar *resource_version)
{
	SflK8sLease *lease = sfl_k8s_lease_new();

	lease->resource_version = g_strdup(resource_version);
	lease->holder = g_strdup(doc->holder);
	/* whole seconds on the wire; rounding up never shortens what standbys wait */
	lease->duration_s = MAX(1, (doc->duration_usec + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC);
	lease->renew_time = sfl_k8s_micro_time(doc->wall_usec);
	/* a new tenure starts at this renewal */
	lease->acquire_time =
		doc->tenure != NULL ? g_strdup(doc->tenure) : g_strdup(lease->renew_time);
	lease->transitions = doc->epoch >= 0 ? MIN(doc->epoch, (gint64)G_MAXINT32) : -1;
	return lease;
}

static void
sfl_k8s_lease_api_doc_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflK8sLeaseApi *self = g_task_get_source_object(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflK8sLease) lease = NULL;

	if (g_task_get_source_tag(task) == sfl_k8s_lease_api_get_async)
		lease = sfl_k8s_lease_api_get_finish(self, result, &error);
	else
		lease = sfl_k8s_lease_api_write_finish(self, result, &error);
	if (lease == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	g_task_return_pointer(task, sfl_k8s_lease_api_to_doc(lease),
			      (GDestroyNotify)sfl_cas_lease_doc_free);
}

static GTask *
sfl_k8s_lease_api_doc_task(SflK8sLeaseApi *self, gpointer tag, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data)
{
	GTask *task = g_task_new(self, cancellable, callback, user_data);

	g_task_set_source_tag(task, tag);
	/* the API's own answer decides, as it would for a direct caller */
	g_task_set_check_cancellable(task, FALSE);
	return task;
}

static const gchar *
sfl_k8s_lease_api_backend_describe(SflCasLeaseBackend *backend)
{
	return sfl_k8s_lease_api_describe(SFL_K8S_LEASE_API(backend));
}

static void
sfl_k8s_lease_api_backend_read_async(SflCasLeaseBackend *backend, GCancellable *cancellable,
				     GAsyncReadyCallback callback, gpointer user_data)
{
	SflK8sLeaseApi *self = SFL_K8S_LEASE_API(backend);

	sfl_k8s_lease_api_get_async(self, cancellable, sfl_k8s_lease_api_doc_cb,
				    sfl_k8s_lease_api_doc_task(self, sfl_k8s_lease_api_get_async,
							       cancellable, callback, user_data));
}

static SflCasLeaseDoc *
sfl_k8s_lease_api_backend_finish(SflCasLeaseBackend *backend, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

/* CREATE_ONLY is a POST, IF_VERSION a PUT carrying the version: the API server's own CAS */
static void
sfl_k8s_lease_api_backend_write_async(SflCasLeaseBackend *backend, const SflCasLeaseDoc *doc,
				      SflCasLeasePrecondition precondition, const gchar *version,
				      GCancellable *cancellable, GAsyncReadyCallback callback,
				      gpointer user_data)
{
	SflK8sLeaseApi *self = SFL_K8S_LEASE_API(backend);
	g_autoptr(SflK8sLease) lease = sfl_k8s_lease_api_from_doc(
		doc, precondition == SFL_CAS_LEASE_IF_VERSION ? version : NULL);

	sfl_k8s_lease_api_write_async(self, lease, FALSE, cancellable, sfl_k8s_lease_api_doc_cb,
				      sfl_k8s_lease_api_doc_task(self,
								 sfl_k8s_lease_api_write_async,
								 cancellable, callback, user_data));
}

static void
sfl_k8s_lease_api_backend_init(SflCasLeaseBackendInterface *iface)
{
	iface->describe = sfl_k8s_lease_api_backend_describe;
	iface->read_async = sfl_k8s_lease_api_backend_read_async;
	iface->read_finish = sfl_k8s_lease_api_backend_finish;
	iface->write_async = sfl_k8s_lease_api_backend_write_async;
	iface->write_finish = sfl_k8s_lease_api_backend_finish;
	/* a release is a replace with the holder cleared: the engine writes it */
}
