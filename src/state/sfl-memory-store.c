/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflMemoryStore"

#include "config.h"

#include "sfl-memory-store.h"

#include "sfl-error.h"
#include "sfl-store-merge.h"

struct _SflMemoryBacking {
	gint refcount;
	GMutex mutex;
	SflStateDoc *doc;
	guint writes;
	guint failing_writes; /* the next writes that fail as a busy disk would */
};

struct _SflMemoryStore {
	SflCheckpointStore parent_instance;
	SflMemoryBacking *backing;
	SflStateDoc *cache; /* worker thread only */
};

G_DEFINE_TYPE(SflMemoryStore, sfl_memory_store, SFL_TYPE_CHECKPOINT_STORE)

SflMemoryBacking *
sfl_memory_backing_new(void)
{
	SflMemoryBacking *backing = g_new0(SflMemoryBacking, 1);
	backing->refcount = 1;
	g_mutex_init(&backing->mutex);
	backing->doc = sfl_state_doc_new();
	return backing;
}

SflMemoryBacking *
sfl_memory_backing_ref(SflMemoryBacking *backing)
{
	g_atomic_int_inc(&backing->refcount);
	return backing;
}

void
sfl_memory_backing_unref(SflMemoryBacking *backing)
{
	if (backing == NULL || !g_atomic_int_dec_and_test(&backing->refcount))
		return;
	sfl_state_doc_free(backing->doc);
	g_mutex_clear(&backing->mutex);
	g_free(backing);
}

guint
sfl_memory_backing_get_write_count(SflMemoryBacking *backing)
{
	guint n;
	g_mutex_lock(&backing->mutex);
	n = backing->writes;
	g_mutex_unlock(&backing->mutex);
	return n;
}

/**
 * sfl_memory_backing_fail_writes:
 * @backing: a backing
 * @count: how many of the next writes fail
 *
 * Makes the next @count writes through any store on @backing fail with %SFL_ERROR_TRANSIENT,
 * the way a file store's write fails on a full or busy disk, leaving the document unchanged.
 */
void
sfl_memory_backing_fail_writes(SflMemoryBacking *backing, guint count)
{
	g_mutex_lock(&backing->mutex);
	backing->failing_writes = count;
	g_mutex_unlock(&backing->mutex);
}

/**
 * sfl_memory_backing_dup_document:
 * @backing: a backing
 *
 * Returns: (transfer full): a copy of the stored document
 */
SflStateDoc *
sfl_memory_backing_dup_document(SflMemoryBacking *backing)
{
	SflStateDoc *copy;
	g_mutex_lock(&backing->mutex);
	copy = sfl_state_doc_copy(backing->doc);
	g_mutex_unlock(&backing->mutex);
	return copy;
}

static SflStateDoc *
sfl_memory_store_cache(SflMemoryStore *self)
{
	if (self->cache == NULL)
		self->cache = sfl_memory_backing_dup_document(self->backing);
	return self->cache;
}

static gchar *
sfl_memory_store_load(SflCheckpointStore *store, const gchar *key, GCancellable *cancellable,
		      GError **error)
{
	SflMemoryStore *self = SFL_MEMORY_STORE(store);
	return g_strdup(sfl_state_doc_get(sfl_memory_store_cache(self), key));
}

static gboolean
sfl_memory_store_write(SflMemoryStore *self, const SflStateDoc *items, const gchar *delete_key,
		       const SflStoreWriter *writer, GError **error)
{
	g_autoptr(SflStateDoc) fresh = NULL;

	g_mutex_lock(&self->backing->mutex);
	if (self->backing->failing_writes > 0) {
		self->backing->failing_writes--;
		g_mutex_unlock(&self->backing->mutex);
		g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT,
			    "the memory store: write failed (injected)");
		return FALSE;
	}
	fresh = sfl_state_doc_copy(self->backing->doc);
	if (!sfl_store_apply_write(fresh, items, delete_key, writer, "the memory store", error)) {
		g_mutex_unlock(&self->backing->mutex);
		return FALSE;
	}
	sfl_state_doc_free(self->backing->doc);
	self->backing->doc = sfl_state_doc_copy(fresh);
	self->backing->writes++;
	g_mutex_unlock(&self->backing->mutex);

	g_clear_pointer(&self->cache, sfl_state_doc_free);
	self->cache = g_steal_pointer(&fresh);
	return TRUE;
}

static gboolean
sfl_memory_store_commit_many(SflCheckpointStore *store, const SflStateDoc *items,
			     const SflStoreWriter *writer, GCancellable *cancellable,
			     GError **error)
{
	return sfl_memory_store_write(SFL_MEMORY_STORE(store), items, NULL, writer, error);
}

static gboolean
sfl_memory_store_delete_key(SflCheckpointStore *store, const gchar *key,
			    const SflStoreWriter *writer, GCancellable *cancellable, GError **error)
{
	return sfl_memory_store_write(SFL_MEMORY_STORE(store), NULL, key, writer, error);
}

static SflStateDoc *
sfl_memory_store_snapshot(SflCheckpointStore *store, GCancellable *cancellable, GError **error)
{
	SflMemoryStore *self = SFL_MEMORY_STORE(store);
	return sfl_memory_backing_dup_document(self->backing);
}

static gboolean
sfl_memory_store_persisted_epoch(SflCheckpointStore *store, const gchar *unit, guint64 *epoch,
				 gboolean *present, GCancellable *cancellable, GError **error)
{
	SflMemoryStore *self = SFL_MEMORY_STORE(store);
	g_autoptr(SflStateDoc) doc = sfl_memory_backing_dup_document(self->backing);

	return sfl_store_persisted_epoch(doc, unit, epoch, present, error);
}

static void
sfl_memory_store_reset(SflCheckpointStore *store)
{
	SflMemoryStore *self = SFL_MEMORY_STORE(store);
	g_clear_pointer(&self->cache, sfl_state_doc_free);
}

static void
sfl_memory_store_finalize(GObject *object)
{
	SflMemoryStore *self = SFL_MEMORY_STORE(object);
	G_OBJECT_CLASS(sfl_memory_store_parent_class)->finalize(object);
	g_clear_pointer(&self->cache, sfl_state_doc_free);
	sfl_memory_backing_unref(self->backing);
}

static void
sfl_memory_store_class_init(SflMemoryStoreClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflCheckpointStoreClass *store_class = SFL_CHECKPOINT_STORE_CLASS(klass);

	object_class->finalize = sfl_memory_store_finalize;
	store_class->load = sfl_memory_store_load;
	store_class->commit_many = sfl_memory_store_commit_many;
	store_class->delete_key = sfl_memory_store_delete_key;
	store_class->snapshot = sfl_memory_store_snapshot;
	store_class->persisted_epoch = sfl_memory_store_persisted_epoch;
	store_class->reset = sfl_memory_store_reset;
}

static void
sfl_memory_store_init(SflMemoryStore *self)
{
}

/**
 * sfl_memory_store_new:
 * @backing: (nullable): storage shared with other memory stores; a private one when %NULL
 *
 * Returns: (transfer full): a store
 */
SflCheckpointStore *
sfl_memory_store_new(SflMemoryBacking *backing)
{
	SflMemoryStore *self = g_object_new(SFL_TYPE_MEMORY_STORE, NULL);
	self->backing =
		backing != NULL ? sfl_memory_backing_ref(backing) : sfl_memory_backing_new();
	return SFL_CHECKPOINT_STORE(self);
}
