/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflObjectLease"

#include "config.h"

#include "sfl-object-lease-coordinator.h"

#include "sfl-lease-doc.h"

/*
 * The algorithm is the compare-and-swap lease engine's; this file is its backend over an
 * SflObjectClient: the object's version as the document's, the file lease's JSON document as
 * the body, and the closing of the client's connections once a stopped run has nothing in
 * flight.
 */

/* --- the backend -------------------------------------------------------------------------- */

#define SFL_TYPE_OBJECT_LEASE_BACKEND (sfl_object_lease_backend_get_type())
G_DECLARE_FINAL_TYPE(SflObjectLeaseBackend, sfl_object_lease_backend, SFL, OBJECT_LEASE_BACKEND,
		     GObject)

struct _SflObjectLeaseBackend {
	GObject parent_instance;
	SflObjectClient *client;
	gchar *key;
	gchar *name; /* "lease s3://bucket/key" */
	gint64 ttl_usec;
	guint pending;	/* requests in flight, of any run */
	gboolean close; /* close the client once nothing is in flight */
};

static void sfl_object_lease_backend_iface_init(SflCasLeaseBackendInterface *iface);

G_DEFINE_TYPE_WITH_CODE(SflObjectLeaseBackend, sfl_object_lease_backend, G_TYPE_OBJECT,
			G_IMPLEMENT_INTERFACE(SFL_TYPE_CAS_LEASE_BACKEND,
					      sfl_object_lease_backend_iface_init))

static GTask *
sfl_object_lease_backend_task(SflObjectLeaseBackend *self, GCancellable *cancellable,
			      GAsyncReadyCallback callback, gpointer user_data)
{
	self->pending++;
	return g_task_new(self, cancellable, callback, user_data);
}

/* a request is over: the client may be closed before the engine hears of it */
static void
sfl_object_lease_backend_done(SflObjectLeaseBackend *self)
{
	if (--self->pending == 0 && self->close) {
		self->close = FALSE;
		sfl_object_client_close(self->client);
	}
}

static void
sfl_object_lease_backend_close_when_idle(SflObjectLeaseBackend *self)
{
	if (self->pending == 0)
		sfl_object_client_close(self->client);
	else
		self->close = TRUE;
}

/* no staleness without a duration: the document has none, the configured ttl is it */
static SflCasLeaseDoc *
sfl_object_lease_backend_parse(SflObjectLeaseBackend *self, const SflObject *object)
{
	SflCasLeaseDoc *doc = sfl_cas_lease_doc_new();
	g_auto(SflLeaseDoc) lease = { 0 };
	gsize len = 0;
	const gchar *data = g_bytes_get_data(object->data, &len);

	sfl_lease_doc_parse(data != NULL ? data : "", len, &lease);
	doc->version = g_strdup(object->version);
	doc->duration_usec = self->ttl_usec;
	if (lease.state == SFL_LEASE_VALID) {
		doc->holder = g_strdup(lease.holder);
		doc->epoch = (gint64)MIN(lease.epoch, (guint64)G_MAXINT64);
	} else {
		/* held by nobody knows whom: it waits out the ttl like a held lease */
		doc->holder = g_strdup("(unreadable)");
		doc->epoch = 0;
	}
	return doc;
}

static void
sfl_object_lease_backend_get_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflObjectLeaseBackend *self = g_task_get_source_object(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflObject) object = sfl_object_client_get_finish(self->client, result, &error);

	if (object == NULL)
		g_task_return_error(task, g_steal_pointer(&error));
	else
		g_task_return_pointer(task, sfl_object_lease_backend_parse(self, object),
				      (GDestroyNotify)sfl_cas_lease_doc_free);
	/* after the answer: a release the engine sends from it still finds the client open */
	sfl_object_lease_backend_done(self);
}

static void
sfl_object_lease_backend_read_async(SflCasLeaseBackend *backend, GCancellable *cancellable,
				    GAsyncReadyCallback callback, gpointer user_data)
{
	SflObjectLeaseBackend *self = SFL_OBJECT_LEASE_BACKEND(backend);
	GTask *task = sfl_object_lease_backend_task(self, cancellable, callback, user_data);

	sfl_object_client_get_async(self->client, self->key, cancellable,
				    sfl_object_lease_backend_get_cb, task);
}

static SflCasLeaseDoc *
sfl_object_lease_backend_finish(SflCasLeaseBackend *backend, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
sfl_object_lease_backend_put_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflObjectLeaseBackend *self = g_task_get_source_object(task);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *version = sfl_object_client_put_finish(self->client, result, &error);
	SflCasLeaseDoc *stored;

	if (version == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
	} else {
		/* what we wrote, with the version from the response, not a re-read */
		stored = sfl_cas_lease_doc_copy(g_task_get_task_data(task));
		g_free(stored->version);
		stored->version = g_steal_pointer(&version);
		g_task_return_pointer(task, stored, (GDestroyNotify)sfl_cas_lease_doc_free);
	}
	/* after the answer: a release the engine sends from it still finds the client open */
	sfl_object_lease_backend_done(self);
}

/* the store's conflict and missing-object errors are already the engine's (sfl-object-client.h) */
static void
sfl_object_lease_backend_write_async(SflCasLeaseBackend *backend, const SflCasLeaseDoc *doc,
				     SflCasLeasePrecondition precondition, const gchar *version,
				     GCancellable *cancellable, GAsyncReadyCallback callback,
				     gpointer user_data)
{
	SflObjectLeaseBackend *self = SFL_OBJECT_LEASE_BACKEND(backend);
	GTask *task = sfl_object_lease_backend_task(self, cancellable, callback, user_data);
	SflCasLeaseDoc *stored = sfl_cas_lease_doc_copy(doc);
	g_autoptr(GBytes) body = NULL;
	gsize len = 0;
	gchar *text;

	stored->duration_usec = self->ttl_usec;
	g_task_set_task_data(task, stored, (GDestroyNotify)sfl_cas_lease_doc_free);
	/* expires_at on this host's wall clock, for humans: nobody compares it */
	text = sfl_lease_doc_serialize(doc->holder != NULL ? doc->holder : "",
				       doc->wall_usec + doc->duration_usec,
				       (guint64)MAX(doc->epoch, 0), &len);
	body = g_bytes_new_take(text, len);
	sfl_object_client_put_async(self->client, self->key, body,
				    precondition == SFL_CAS_LEASE_IF_VERSION
					    ? SFL_OBJECT_WRITE_IF_VERSION
					    : SFL_OBJECT_WRITE_CREATE_ONLY,
				    version, cancellable, sfl_object_lease_backend_put_cb, task);
}

static const gchar *
sfl_object_lease_backend_describe(SflCasLeaseBackend *backend)
{
	return SFL_OBJECT_LEASE_BACKEND(backend)->name;
}

static void
sfl_object_lease_backend_iface_init(SflCasLeaseBackendInterface *iface)
{
	iface->describe = sfl_object_lease_backend_describe;
	iface->read_async = sfl_object_lease_backend_read_async;
	iface->read_finish = sfl_object_lease_backend_finish;
	iface->write_async = sfl_object_lease_backend_write_async;
	iface->write_finish = sfl_object_lease_backend_finish;
	/* no release of its own: the engine writes an empty holder under IF_VERSION */
	iface->flags = SFL_CAS_LEASE_BACKEND_RENEW_UNREAD;
	iface->lifetime_name = "ttl";
}

static void
sfl_object_lease_backend_finalize(GObject *object)
{
	SflObjectLeaseBackend *self = SFL_OBJECT_LEASE_BACKEND(object);

	g_clear_object(&self->client);
	g_free(self->key);
	g_free(self->name);
	G_OBJECT_CLASS(sfl_object_lease_backend_parent_class)->finalize(object);
}

static void
sfl_object_lease_backend_class_init(SflObjectLeaseBackendClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_object_lease_backend_finalize;
}

static void
sfl_object_lease_backend_init(SflObjectLeaseBackend *self)
{
}

/* --- the coordinator ---------------------------------------------------------------------- */

struct _SflObjectLeaseCoordinator {
	SflCasLeaseCoordinator parent_instance;
	SflObjectLeaseBackend *backend; /* the engine holds the reference */
};

G_DEFINE_TYPE(SflObjectLeaseCoordinator, sfl_object_lease_coordinator,
	      SFL_TYPE_CAS_LEASE_COORDINATOR)

static void
sfl_object_lease_coordinator_start(SflCoordinator *coordinator)
{
	SFL_OBJECT_LEASE_COORDINATOR(coordinator)->backend->close = FALSE;
	SFL_COORDINATOR_CLASS(sfl_object_lease_coordinator_parent_class)->start(coordinator);
}

/* the run owns the client's connections: after the engine's release, if any, is issued */
static void
sfl_object_lease_coordinator_stop(SflCoordinator *coordinator)
{
	SFL_COORDINATOR_CLASS(sfl_object_lease_coordinator_parent_class)->stop(coordinator);
	sfl_object_lease_backend_close_when_idle(
		SFL_OBJECT_LEASE_COORDINATOR(coordinator)->backend);
}

static void
sfl_object_lease_coordinator_class_init(SflObjectLeaseCoordinatorClass *klass)
{
	SflCoordinatorClass *coordinator_class = SFL_COORDINATOR_CLASS(klass);

	coordinator_class->start = sfl_object_lease_coordinator_start;
	coordinator_class->stop = sfl_object_lease_coordinator_stop;
}

static void
sfl_object_lease_coordinator_init(SflObjectLeaseCoordinator *self)
{
}

/**
 * sfl_object_lease_coordinator_new:
 * @client: the bucket holding the lease object
 * @key: the lease object's key (name)
 * @ttl_usec: a lease unchanged for this long may be taken over
 * @renew_usec: how often the leader renews (config validation keeps 2 × renew < ttl); also
 *   the retry period of a standby
 * @holder: this replica's identity, already resolved
 * @clock: the clocks and timers to run on
 *
 * Returns: (transfer full): a coordinator
 */
SflCoordinator *
sfl_object_lease_coordinator_new(SflObjectClient *client, const gchar *key, gint64 ttl_usec,
				 gint64 renew_usec, const gchar *holder, SflClock *clock)
{
	g_autoptr(SflObjectLeaseBackend) backend = NULL;
	g_autofree gchar *where = NULL;
	SflCoordinator *coordinator;

	g_return_val_if_fail(SFL_IS_OBJECT_CLIENT(client), NULL);
	g_return_val_if_fail(key != NULL && key[0] != '\0', NULL);
	g_return_val_if_fail(ttl_usec > 0 && renew_usec > 0, NULL);

	backend = g_object_new(SFL_TYPE_OBJECT_LEASE_BACKEND, NULL);
	backend->client = g_object_ref(client);
	backend->key = g_strdup(key);
	backend->ttl_usec = ttl_usec;
	where = sfl_object_client_describe(client, key);
	backend->name = g_strdup_printf("lease %s", where);
	coordinator = sfl_cas_lease_coordinator_new_full(
		SFL_TYPE_OBJECT_LEASE_COORDINATOR, G_LOG_DOMAIN, SFL_CAS_LEASE_BACKEND(backend),
		ttl_usec, renew_usec, holder, clock);
	if (coordinator != NULL)
		SFL_OBJECT_LEASE_COORDINATOR(coordinator)->backend = backend;
	return coordinator;
}

SflObjectClient *
sfl_object_lease_coordinator_get_client(SflObjectLeaseCoordinator *self)
{
	g_return_val_if_fail(SFL_IS_OBJECT_LEASE_COORDINATOR(self), NULL);
	return self->backend->client;
}

const gchar *
sfl_object_lease_coordinator_get_key(SflObjectLeaseCoordinator *self)
{
	g_return_val_if_fail(SFL_IS_OBJECT_LEASE_COORDINATOR(self), NULL);
	return self->backend->key;
}
