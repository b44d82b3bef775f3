/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflObjectStore"

#include "config.h"

#include "sfl-object-store.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-object-store-private.h"
#include "sfl-store-merge.h"

struct _SflObjectStore {
	SflCheckpointStore parent_instance;
	SflObjectClient *client; /* main context only */
	GMainContext *context;	 /* where the client runs */
	gchar *key;
	gchar *origin; /* s3://bucket/key, for messages */
	gint64 backoff_min_usec;
	gint64 backoff_max_usec;
	/* worker thread only */
	SflStateDoc *cache;
	gint writes; /* atomic: read by tests from the main thread */
};

G_DEFINE_TYPE(SflObjectStore, sfl_object_store, SFL_TYPE_CHECKPOINT_STORE)

/* --- one request, handed from the worker thread to the client's context ------------------- */

typedef enum {
	SFL_OBJECT_CALL_GET,
	SFL_OBJECT_CALL_PUT,
	SFL_OBJECT_CALL_WAIT,
} SflObjectCallKind;

typedef struct {
	SflObjectStore *self;
	SflObjectCallKind kind;
	GBytes *data;
	SflObjectCondition condition;
	const gchar *version;
	gint64 wait_usec;
	/* results */
	SflObject *object;
	gchar *new_version;
	GError *error;
	GMutex mutex;
	GCond cond;
	gboolean done;
} SflObjectCall;

static void
sfl_object_call_finish(SflObjectCall *call)
{
	g_mutex_lock(&call->mutex);
	call->done = TRUE;
	g_cond_signal(&call->cond);
	g_mutex_unlock(&call->mutex);
}

/* a get or a put came back on the client's context */
static void
sfl_object_call_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflObjectCall *call = user_data;
	SflObjectClient *client = SFL_OBJECT_CLIENT(source);

	if (call->kind == SFL_OBJECT_CALL_GET)
		call->object = sfl_object_client_get_finish(client, result, &call->error);
	else
		call->new_version = sfl_object_client_put_finish(client, result, &call->error);
	sfl_object_call_finish(call);
}

static gboolean
sfl_object_call_waited_cb(gpointer user_data)
{
	sfl_object_call_finish(user_data);
	return G_SOURCE_REMOVE;
}

/* runs on the client's context */
static gboolean
sfl_object_call_start_cb(gpointer user_data)
{
	SflObjectCall *call = user_data;
	SflObjectStore *self = call->self;
	g_autoptr(GSource) timer = NULL;

	switch (call->kind) {
	case SFL_OBJECT_CALL_GET:
		sfl_object_client_get_async(self->client, self->key, NULL, sfl_object_call_done_cb,
					    call);
		break;
	case SFL_OBJECT_CALL_PUT:
		sfl_object_client_put_async(self->client, self->key, call->data, call->condition,
					    call->version, NULL, sfl_object_call_done_cb, call);
		break;
	case SFL_OBJECT_CALL_WAIT:
		/* a timeout source, not a sleep: the worker only waits on its condition */
		timer = g_timeout_source_new((guint)MAX(1, call->wait_usec / 1000));
		g_source_set_callback(timer, sfl_object_call_waited_cb, call, NULL);
		g_source_attach(timer, self->context);
		break;
	}
	return G_SOURCE_REMOVE;
}

/* the worker thread blocks here; the client's context does the work */
static void
sfl_object_call_run(SflObjectCall *call)
{
	g_autoptr(GSource) idle = g_idle_source_new();

	g_mutex_init(&call->mutex);
	g_cond_init(&call->cond);
	/* an idle attached to the context, never g_main_context_invoke(): that would run the
	 * request in this thread whenever the main thread happens not to own the context */
	g_source_set_callback(idle, sfl_object_call_start_cb, call, NULL);
	g_source_attach(idle, call->self->context);
	g_mutex_lock(&call->mutex);
	while (!call->done)
		g_cond_wait(&call->cond, &call->mutex);
	g_mutex_unlock(&call->mutex);
	g_mutex_clear(&call->mutex);
	g_cond_clear(&call->cond);
}

static void
sfl_object_store_backoff(SflObjectStore *self, guint attempt)
{
	SflObjectCall call = { .self = self, .kind = SFL_OBJECT_CALL_WAIT };
	gint64 delay = self->backoff_min_usec;

	for (guint i = 1; i < attempt && delay < self->backoff_max_usec; i++)
		delay *= 2;
	delay = MIN(delay, self->backoff_max_usec);
	/* jitter keeps replicas that failed together from retrying together */
	call.wait_usec = self->backoff_min_usec +
			 (gint64)(g_random_double() * (gdouble)(delay - self->backoff_min_usec));
	sfl_object_call_run(&call);
}

/*
 * After attempt @attempt failed with @failure (taken): TRUE once the backoff has passed and the
 * request should go again; FALSE with @error set when the failure is final or the attempts
 * are spent.
 */
static gboolean
sfl_object_store_retry(SflObjectStore *self, guint attempt, const gchar *doing, GError *failure,
		       GError **error)
{
	if (!sfl_object_client_is_retryable(failure) || attempt >= SFL_OBJECT_STORE_ATTEMPTS) {
		if (sfl_object_client_is_retryable(failure))
			g_prefix_error(&failure, "giving up after %u attempts: ", attempt);
		g_propagate_error(error, failure);
		return FALSE;
	}
	g_debug("%s %s failed (%s); retrying", doing, self->origin, failure->message);
	g_error_free(failure);
	sfl_object_store_backoff(self, attempt);
	return TRUE;
}

/* GET with the bounded transient retry; NULL and SFL_ERROR_NOT_FOUND when absent */
static SflObject *
sfl_object_store_get(SflObjectStore *self, GError **error)
{
	for (guint attempt = 1;; attempt++) {
		SflObjectCall call = { .self = self, .kind = SFL_OBJECT_CALL_GET };

		sfl_object_call_run(&call);
		if (call.object != NULL)
			return call.object;
		if (!sfl_object_store_retry(self, attempt, "reading", call.error, error))
			return NULL;
	}
}

/* absent is an empty document with no version; unreadable or corrupt is an error */
static SflStateDoc *
sfl_object_store_read_fresh(SflObjectStore *self, gchar **version, GError **error)
{
	g_autoptr(GError) local = NULL;
	g_autoptr(SflObject) object = sfl_object_store_get(self, &local);
	g_autoptr(SflStateDoc) doc = NULL;
	gsize len = 0;
	const gchar *data;

	if (version != NULL)
		*version = NULL;
	if (object == NULL) {
		if (g_error_matches(local, SFL_ERROR, SFL_ERROR_NOT_FOUND))
			return sfl_state_doc_new();
		g_propagate_error(error, g_steal_pointer(&local));
		return NULL;
	}
	data = g_bytes_get_data(object->data, &len);
	doc = sfl_store_parse(data != NULL ? data : "", len, self->origin, error);
	if (doc == NULL)
		return NULL;
	if (version != NULL)
		*version = g_strdup(object->version);
	return g_steal_pointer(&doc);
}

/* the conditional PUT with the bounded transient retry and the lost-response check */
static gboolean
sfl_object_store_put(SflObjectStore *self, GBytes *data, const gchar *version, GError **error)
{
	for (guint attempt = 1;; attempt++) {
		SflObjectCall call = { .self = self,
				       .kind = SFL_OBJECT_CALL_PUT,
				       .data = data,
				       .condition = version != NULL ? SFL_OBJECT_WRITE_IF_VERSION
								    : SFL_OBJECT_WRITE_CREATE_ONLY,
				       .version = version };
		g_autoptr(GError) reread_error = NULL;
		g_autoptr(SflObject) current = NULL;

		sfl_object_call_run(&call);
		if (call.new_version != NULL) {
			g_free(call.new_version);
			return TRUE;
		}
		/* an earlier attempt may have landed with only its answer lost. Not only after
		 * our own retries: curl silently resends a request whose reused connection died
		 * before any answer, so every conflict is checked against the stored bytes */
		if (g_error_matches(call.error, SFL_ERROR, SFL_ERROR_CONFLICT)) {
			current = sfl_object_store_get(self, &reread_error);
			if (current != NULL && g_bytes_equal(current->data, data)) {
				g_message(
					"%s: a retried write met a conflict, but the object holds "
					"exactly what was written; the earlier attempt landed",
					self->origin);
				g_clear_error(&call.error);
				return TRUE;
			}
		}
		if (!sfl_object_store_retry(self, attempt, "writing", g_steal_pointer(&call.error),
					    error))
			return FALSE;
	}
}

/* --- SflCheckpointStore ------------------------------------------------------------------- */

static gboolean
sfl_object_store_open(SflCheckpointStore *store, GCancellable *cancellable, GError **error)
{
	SflObjectStore *self = SFL_OBJECT_STORE(store);
	g_autoptr(SflStateDoc) doc = NULL;

	/* bad credentials or a corrupt object stop start-up here, before any source runs; a
	 * standby may lead much later, so the document is read again on first use */
	g_clear_pointer(&self->cache, sfl_state_doc_free);
	doc = sfl_object_store_read_fresh(self, NULL, error);
	return doc != NULL;
}

static gchar *
sfl_object_store_load(SflCheckpointStore *store, const gchar *key, GCancellable *cancellable,
		      GError **error)
{
	SflObjectStore *self = SFL_OBJECT_STORE(store);

	if (self->cache == NULL)
		self->cache = sfl_object_store_read_fresh(self, NULL, error);
	if (self->cache == NULL)
		return NULL;
	return g_strdup(sfl_state_doc_get(self->cache, key));
}

static gboolean
sfl_object_store_apply(SflObjectStore *self, const SflStateDoc *items, const gchar *delete_key,
		       const SflStoreWriter *writer, GError **error)
{
	g_autofree gchar *version = NULL;
	g_autoptr(SflStateDoc) doc = sfl_object_store_read_fresh(self, &version, error);
	g_autoptr(GBytes) data = NULL;
	gchar *text;
	gsize len = 0;

	if (doc == NULL)
		return FALSE;
	if (sfl_store_write_needed(doc, items, delete_key, writer)) {
		if (!sfl_store_apply_write(doc, items, delete_key, writer, self->origin, error))
			return FALSE;
		text = sfl_state_doc_serialize(doc, &len);
		data = g_bytes_new_take(text, len);
		if (!sfl_object_store_put(self, data, version, error))
			return FALSE;
		g_atomic_int_inc(&self->writes);
	}
	g_clear_pointer(&self->cache, sfl_state_doc_free);
	self->cache = g_steal_pointer(&doc);
	return TRUE;
}

static gboolean
sfl_object_store_commit_many(SflCheckpointStore *store, const SflStateDoc *items,
			     const SflStoreWriter *writer, GCancellable *cancellable,
			     GError **error)
{
	return sfl_object_store_apply(SFL_OBJECT_STORE(store), items, NULL, writer, error);
}

static gboolean
sfl_object_store_delete_key(SflCheckpointStore *store, const gchar *key,
			    const SflStoreWriter *writer, GCancellable *cancellable, GError **error)
{
	return sfl_object_store_apply(SFL_OBJECT_STORE(store), NULL, key, writer, error);
}

static SflStateDoc *
sfl_object_store_snapshot(SflCheckpointStore *store, GCancellable *cancellable, GError **error)
{
	return sfl_object_store_read_fresh(SFL_OBJECT_STORE(store), NULL, error);
}

static gboolean
sfl_object_store_persisted_epoch(SflCheckpointStore *store, const gchar *unit, guint64 *epoch,
				 gboolean *present, GCancellable *cancellable, GError **error)
{
	g_autoptr(SflStateDoc) doc =
		sfl_object_store_read_fresh(SFL_OBJECT_STORE(store), NULL, error);

	return sfl_store_persisted_epoch(doc, unit, epoch, present, error);
}

static void
sfl_object_store_reset(SflCheckpointStore *store)
{
	SflObjectStore *self = SFL_OBJECT_STORE(store);
	g_clear_pointer(&self->cache, sfl_state_doc_free);
}

static void
sfl_object_store_finalize(GObject *object)
{
	SflObjectStore *self = SFL_OBJECT_STORE(object);

	G_OBJECT_CLASS(sfl_object_store_parent_class)->finalize(object);
	g_clear_pointer(&self->cache, sfl_state_doc_free);
	g_clear_object(&self->client);
	g_clear_pointer(&self->context, g_main_context_unref);
	g_free(self->key);
	g_free(self->origin);
}

static void
sfl_object_store_class_init(SflObjectStoreClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflCheckpointStoreClass *store_class = SFL_CHECKPOINT_STORE_CLASS(klass);

	object_class->finalize = sfl_object_store_finalize;
	store_class->open = sfl_object_store_open;
	store_class->load = sfl_object_store_load;
	store_class->commit_many = sfl_object_store_commit_many;
	store_class->delete_key = sfl_object_store_delete_key;
	store_class->snapshot = sfl_object_store_snapshot;
	store_class->persisted_epoch = sfl_object_store_persisted_epoch;
	store_class->reset = sfl_object_store_reset;
}

static void
sfl_object_store_init(SflObjectStore *self)
{
	self->backoff_min_usec = G_USEC_PER_SEC / 10;
	self->backoff_max_usec = 2 * G_USEC_PER_SEC;
}

/**
 * sfl_object_store_new:
 * @client: the bucket; used on the caller's thread-default main context
 * @key: the object holding the document
 *
 * Nothing is read until sfl_checkpoint_store_open_async().
 *
 * Returns: (transfer full): the store
 */
SflCheckpointStore *
sfl_object_store_new(SflObjectClient *client, const gchar *key)
{
	SflObjectStore *self;

	g_return_val_if_fail(SFL_IS_OBJECT_CLIENT(client), NULL);
	g_return_val_if_fail(key != NULL && key[0] != '\0', NULL);
	self = g_object_new(SFL_TYPE_OBJECT_STORE, NULL);
	self->client = g_object_ref(client);
	self->context = g_main_context_ref_thread_default();
	self->key = g_strdup(key);
	self->origin = sfl_object_client_describe(client, key);
	return SFL_CHECKPOINT_STORE(self);
}

SflObjectClient *
sfl_object_store_get_client(SflObjectStore *self)
{
	g_return_val_if_fail(SFL_IS_OBJECT_STORE(self), NULL);
	return self->client;
}

const gchar *
sfl_object_store_get_key(SflObjectStore *self)
{
	g_return_val_if_fail(SFL_IS_OBJECT_STORE(self), NULL);
	return self->key;
}

guint
sfl_object_store_get_write_count(SflObjectStore *self)
{
	return (guint)g_atomic_int_get(&self->writes);
}

void
sfl_object_store_set_backoff(SflObjectStore *self, gint64 min_usec, gint64 max_usec)
{
	g_return_if_fail(SFL_IS_OBJECT_STORE(self));
	g_return_if_fail(min_usec > 0 && max_usec >= min_usec);
	self->backoff_min_usec = min_usec;
	self->backoff_max_usec = max_usec;
}
