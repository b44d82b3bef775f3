/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflShard"

#include "config.h"

#include "sfl-k8s-member-store.h"

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-k8s-lease-api.h"
#include "sfl-unit-lease.h"

struct _SflK8sMemberStore {
	SflMemberStore parent_instance;
	SflKubeClient *client;
	SflClock *clock;
	gchar *namespace_;
	gchar *lease_name;
	gchar *label;	   /* the group's sf2loki.io/member-of value */
	gchar *collection; /* .../namespaces/<ns>/leases */
	gint64 duration_s; /* spec.leaseDurationSeconds: members_ttl, for `kubectl get` readers */
	guint timeout_ms;
	gchar *own_holder;  /* the holder this replica publishes as */
	gchar *own_version; /* the resourceVersion its last write produced; NULL: unknown */
	GHashTable *listed; /* holder -> the resourceVersion the last listing saw */
};

#define SFL_TYPE_K8S_MEMBER_STORE (sfl_k8s_member_store_get_type())
G_DECLARE_FINAL_TYPE(SflK8sMemberStore, sfl_k8s_member_store, SFL, K8S_MEMBER_STORE, SflMemberStore)
G_DEFINE_TYPE(SflK8sMemberStore, sfl_k8s_member_store, SFL_TYPE_MEMBER_STORE)

static gchar *
sfl_k8s_member_path(SflK8sMemberStore *self, const gchar *holder)
{
	g_autofree gchar *name = sfl_unit_lease_k8s_member_name(self->lease_name, holder);

	return g_strconcat(self->collection, "/", name, NULL);
}

/* --- publish: a replace on our last version, re-learning it once when it is not ours ------- */

typedef enum {
	SFL_K8S_MEMBER_RENEW,	/* PUT with the version our last write produced */
	SFL_K8S_MEMBER_CREATE,	/* POST */
	SFL_K8S_MEMBER_READ,	/* it exists (a previous run of this holder): learn its version */
	SFL_K8S_MEMBER_REPLACE, /* PUT with what the read returned */
} SflK8sMemberStep;

typedef struct {
	gchar *holder;
	gchar *name;
	guint64 seq;
	SflK8sMemberStep step;
} SflK8sMemberPublish;

static void
sfl_k8s_member_publish_free(SflK8sMemberPublish *job)
{
	g_free(job->holder);
	g_free(job->name);
	g_free(job);
}

static json_t *
sfl_k8s_member_body(SflK8sMemberStore *self, SflK8sMemberPublish *job, const gchar *version)
{
	g_autoptr(SflK8sLease) lease = sfl_k8s_lease_new();
	g_autofree gchar *seq = g_strdup_printf("%" G_GUINT64_FORMAT, job->seq);
	json_t *body = NULL;
	json_t *metadata = NULL;

	lease->resource_version = g_strdup(version);
	lease->holder = g_strdup(job->holder);
	lease->duration_s = self->duration_s;
	lease->renew_time = sfl_k8s_micro_time(sfl_clock_wall_usec(self->clock));
	body = sfl_k8s_lease_to_json(lease, self->namespace_, job->name);
	metadata = json_object_get(body, "metadata");
	json_object_set_new(metadata, "labels",
			    json_pack("{s:s}", SFL_K8S_MEMBER_LABEL, self->label));
	json_object_set_new(metadata, "annotations", json_pack("{s:s}", SFL_K8S_MEMBER_SEQ, seq));
	return body;
}

static void sfl_k8s_member_publish_step(GTask *task, const gchar *version);

static void
sfl_k8s_member_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflK8sMemberStore *self = g_task_get_source_object(task);
	SflK8sMemberPublish *job = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) object =
		sfl_kube_client_request_finish(SFL_KUBE_CLIENT(source), result, NULL, &error);
	const gchar *version = NULL;

	if (object == NULL && g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND)) {
		/* deleted between the create and the read: create again, once */
		job->step = SFL_K8S_MEMBER_CREATE;
		sfl_k8s_member_publish_step(g_steal_pointer(&task), NULL);
		return;
	}
	if (object == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	version = json_string_value(
		json_object_get(json_object_get(object, "metadata"), "resourceVersion"));
	if (version == NULL) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"the membership Lease %s/%s has no resourceVersion",
					self->namespace_, job->name);
		return;
	}
	job->step = SFL_K8S_MEMBER_REPLACE;
	sfl_k8s_member_publish_step(g_steal_pointer(&task), version);
}

static void
sfl_k8s_member_written_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflK8sMemberStore *self = g_task_get_source_object(task);
	SflK8sMemberPublish *job = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) object =
		sfl_kube_client_request_finish(SFL_KUBE_CLIENT(source), result, NULL, &error);
	const gchar *version = NULL;
	gboolean lost = g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT) ||
			g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND);

	if (object != NULL)
		version = json_string_value(
			json_object_get(json_object_get(object, "metadata"), "resourceVersion"));
	if (version != NULL) {
		g_free(self->own_version);
		self->own_version = g_strdup(version);
		g_task_return_boolean(task, TRUE);
		return;
	}
	g_clear_pointer(&self->own_version, g_free);
	if (object != NULL) {
		/* stored, but which version is not known: the next round reads it */
		g_task_return_boolean(task, TRUE);
		return;
	}
	/* our record changed under us (a cleanup deleted it, a restart of this holder wrote
	 * it): take it over once; a second race in one round is left to the next round */
	if (lost && job->step == SFL_K8S_MEMBER_RENEW) {
		job->step = SFL_K8S_MEMBER_CREATE;
		sfl_k8s_member_publish_step(g_steal_pointer(&task), NULL);
		return;
	}
	if (lost && job->step == SFL_K8S_MEMBER_CREATE) {
		job->step = SFL_K8S_MEMBER_READ;
		sfl_k8s_member_publish_step(g_steal_pointer(&task), NULL);
		return;
	}
	g_task_return_error(task, g_steal_pointer(&error));
}

static void
sfl_k8s_member_publish_step(GTask *task, const gchar *version)
{
	SflK8sMemberStore *self = g_task_get_source_object(task);
	SflK8sMemberPublish *job = g_task_get_task_data(task);
	GCancellable *cancellable = g_task_get_cancellable(task);
	g_autofree gchar *path = sfl_k8s_member_path(self, job->holder);
	g_autoptr(json_t) body = NULL;

	switch (job->step) {
	case SFL_K8S_MEMBER_READ:
		sfl_kube_client_request_async(self->client, "GET", path, NULL, self->timeout_ms,
					      cancellable, sfl_k8s_member_read_cb, task);
		return;
	case SFL_K8S_MEMBER_CREATE:
		body = sfl_k8s_member_body(self, job, NULL);
		sfl_kube_client_request_async(self->client, "POST", self->collection, body,
					      self->timeout_ms, cancellable,
					      sfl_k8s_member_written_cb, task);
		return;
	case SFL_K8S_MEMBER_RENEW:
	case SFL_K8S_MEMBER_REPLACE:
		body = sfl_k8s_member_body(self, job, version);
		sfl_kube_client_request_async(self->client, "PUT", path, body, self->timeout_ms,
					      cancellable, sfl_k8s_member_written_cb, task);
		return;
	}
}

static void
sfl_k8s_member_publish_async(SflMemberStore *store, const gchar *holder, guint64 seq,
			     GCancellable *cancellable, GAsyncReadyCallback callback,
			     gpointer user_data)
{
	SflK8sMemberStore *self = SFL_K8S_MEMBER_STORE(store);
	GTask *task = g_task_new(store, cancellable, callback, user_data);
	SflK8sMemberPublish *job = g_new0(SflK8sMemberPublish, 1);

	if (g_strcmp0(self->own_holder, holder) != 0) {
		g_free(self->own_holder);
		self->own_holder = g_strdup(holder);
		g_clear_pointer(&self->own_version, g_free);
	}
	job->holder = g_strdup(holder);
	job->name = sfl_unit_lease_k8s_member_name(self->lease_name, holder);
	job->seq = seq;
	job->step = self->own_version != NULL ? SFL_K8S_MEMBER_RENEW : SFL_K8S_MEMBER_CREATE;
	g_task_set_task_data(task, job, (GDestroyNotify)sfl_k8s_member_publish_free);
	sfl_k8s_member_publish_step(task, self->own_version);
}

static gboolean
sfl_k8s_member_boolean_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

/* --- list: one labelSelector read of the group's Leases ---------------------------------- */

static void
sfl_k8s_member_listed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflK8sMemberStore *self = g_task_get_source_object(task);
	GError *error = NULL;
	g_autoptr(json_t) list =
		sfl_kube_client_request_finish(SFL_KUBE_CLIENT(source), result, NULL, &error);
	json_t *items = NULL;
	GPtrArray *entries = NULL;
	gsize i = 0;
	json_t *item = NULL;

	if (list == NULL) {
		g_prefix_error(&error, "cannot list the membership Leases: ");
		g_task_return_error(task, error);
		return;
	}
	items = json_object_get(list, "items");
	if (!json_is_array(items)) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"cannot list the membership Leases: the LeaseList of %s "
					"has no items array",
					self->collection);
		return;
	}
	entries = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_member_entry_free);
	g_hash_table_remove_all(self->listed);
	json_array_foreach (items, i, item) {
		json_t *metadata = json_object_get(item, "metadata");
		const gchar *name = json_string_value(json_object_get(metadata, "name"));
		const gchar *version =
			json_string_value(json_object_get(metadata, "resourceVersion"));
		const gchar *holder = json_string_value(
			json_object_get(json_object_get(item, "spec"), "holderIdentity"));
		g_autofree gchar *expected = NULL;
		SflMemberEntry *entry = NULL;

		if (name == NULL || version == NULL || holder == NULL || holder[0] == '\0')
			continue;
		/* a Lease that carries the label but not the name its holder's record has is
		 * not a record of this group (copied by hand, or another tool's) */
		expected = sfl_unit_lease_k8s_member_name(self->lease_name, holder);
		if (!g_str_equal(expected, name))
			continue;
		entry = g_new0(SflMemberEntry, 1);
		entry->holder = g_strdup(holder);
		entry->version = g_strdup(version);
		g_hash_table_insert(self->listed, g_strdup(holder), g_strdup(version));
		g_ptr_array_add(entries, entry);
	}
	g_task_return_pointer(task, entries, (GDestroyNotify)g_ptr_array_unref);
}

static void
sfl_k8s_member_list_async(SflMemberStore *store, GCancellable *cancellable,
			  GAsyncReadyCallback callback, gpointer user_data)
{
	SflK8sMemberStore *self = SFL_K8S_MEMBER_STORE(store);
	GTask *task = g_task_new(store, cancellable, callback, user_data);
	g_autofree gchar *selector = g_strconcat(SFL_K8S_MEMBER_LABEL, "=", self->label, NULL);
	g_autofree gchar *escaped = g_uri_escape_string(selector, NULL, FALSE);
	g_autofree gchar *path = g_strconcat(self->collection, "?labelSelector=", escaped, NULL);

	sfl_kube_client_request_async(self->client, "GET", path, NULL, self->timeout_ms,
				      cancellable, sfl_k8s_member_listed_cb, task);
}

static GPtrArray *
sfl_k8s_member_list_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

/* --- remove: gone already, or renewed since the listing, is not a failure ----------------- */

static void
sfl_k8s_member_removed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	GError *error = NULL;
	g_autoptr(json_t) answer =
		sfl_kube_client_request_finish(SFL_KUBE_CLIENT(source), result, NULL, &error);

	if (answer == NULL && !g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND) &&
	    !g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT)) {
		g_task_return_error(task, error);
		return;
	}
	g_clear_error(&error);
	g_task_return_boolean(task, TRUE);
}

static void
sfl_k8s_member_remove_async(SflMemberStore *store, const gchar *holder, GCancellable *cancellable,
			    GAsyncReadyCallback callback, gpointer user_data)
{
	SflK8sMemberStore *self = SFL_K8S_MEMBER_STORE(store);
	GTask *task = g_task_new(store, cancellable, callback, user_data);
	g_autofree gchar *path = sfl_k8s_member_path(self, holder);
	/* our own record: the version we wrote; another's: what the listing judged dead */
	const gchar *version = g_strcmp0(holder, self->own_holder) == 0
				       ? self->own_version
				       : g_hash_table_lookup(self->listed, holder);
	g_autoptr(json_t) options =
		json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "DeleteOptions");

	if (version != NULL)
		json_object_set_new(options, "preconditions",
				    json_pack("{s:s}", "resourceVersion", version));
	sfl_kube_client_request_async(self->client, "DELETE", path, options, self->timeout_ms,
				      cancellable, sfl_k8s_member_removed_cb, task);
}

/* --- the object ----------------------------------------------------------------------------- */

static void
sfl_k8s_member_store_finalize(GObject *object)
{
	SflK8sMemberStore *self = SFL_K8S_MEMBER_STORE(object);

	g_clear_object(&self->client);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_free(self->namespace_);
	g_free(self->lease_name);
	g_free(self->label);
	g_free(self->collection);
	g_free(self->own_holder);
	g_free(self->own_version);
	g_hash_table_unref(self->listed);
	G_OBJECT_CLASS(sfl_k8s_member_store_parent_class)->finalize(object);
}

static void
sfl_k8s_member_store_class_init(SflK8sMemberStoreClass *klass)
{
	SflMemberStoreClass *store_class = SFL_MEMBER_STORE_CLASS(klass);

	G_OBJECT_CLASS(klass)->finalize = sfl_k8s_member_store_finalize;
	store_class->publish_async = sfl_k8s_member_publish_async;
	store_class->publish_finish = sfl_k8s_member_boolean_finish;
	store_class->list_async = sfl_k8s_member_list_async;
	store_class->list_finish = sfl_k8s_member_list_finish;
	store_class->remove_async = sfl_k8s_member_remove_async;
	store_class->remove_finish = sfl_k8s_member_boolean_finish;
}

static void
sfl_k8s_member_store_init(SflK8sMemberStore *self)
{
	self->listed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

/**
 * sfl_k8s_member_store_new:
 * @client: the API client
 * @namespace_: where the group's Leases live (the single lease's namespace)
 * @lease_name: coordinate.k8s_lease.name: the group's name
 * @members_ttl_usec: coordinate.sharding.members_ttl, written as leaseDurationSeconds
 * @timeout_ms: bound of each request
 * @clock: the wall clock renewTime is read from
 *
 * Returns: (transfer full): the store
 */
SflMemberStore *
sfl_k8s_member_store_new(SflKubeClient *client, const gchar *namespace_, const gchar *lease_name,
			 gint64 members_ttl_usec, guint timeout_ms, SflClock *clock)
{
	SflK8sMemberStore *self = NULL;
	g_autofree gchar *ns = NULL;

	g_return_val_if_fail(SFL_IS_KUBE_CLIENT(client), NULL);
	g_return_val_if_fail(namespace_ != NULL && lease_name != NULL, NULL);

	self = g_object_new(SFL_TYPE_K8S_MEMBER_STORE, NULL);
	ns = g_uri_escape_string(namespace_, NULL, FALSE);
	self->client = g_object_ref(client);
	self->clock = sfl_clock_ref(clock);
	self->namespace_ = g_strdup(namespace_);
	self->lease_name = g_strdup(lease_name);
	self->label = sfl_unit_lease_k8s_group_label(lease_name);
	self->collection = g_strdup_printf("/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
	self->duration_s = MAX((members_ttl_usec + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC, 1);
	self->timeout_ms = timeout_ms;
	return SFL_MEMBER_STORE(self);
}
