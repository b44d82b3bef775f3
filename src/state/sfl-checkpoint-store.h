/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-state-doc.h"

G_BEGIN_DECLS

/*
 * SflCheckpointStore: where each stream's resume position lives.
 *
 * Contract
 *  - One document of string keys to string values for the whole deployment (all orgs).
 *  - commit_many() is one durable write whatever the number of keys; it returns only after the
 *    write is durable. load() after a successful commit returns the committed value.
 *  - Reserved keys (__name__) are the store's own (the fence epoch). Sources can neither read
 *    nor write them; the state CLI may with SFL_CHECKPOINT_STORE_FORCE.
 *  - Fencing: set_fence() installs a check evaluated on the main thread right before each
 *    commit/delete runs; FALSE rejects the write with SFL_ERROR_FENCED before anything is read.
 *    set_epoch() installs the writer's fence token; a store that keeps an epoch
 *    (the file store) rejects the write with SFL_ERROR_FENCED when the stored epoch is greater
 *    and records the writer's epoch with every write. persisted_epoch() reads the stored epoch
 *    fresh from storage, bypassing every cache.
 *  - reset() drops caches (on demotion); the next access re-reads storage.
 *  - A document that cannot be read or parsed is an error (SFL_ERROR_CORRUPT for bad content,
 *    SFL_ERROR_AUTH when access is refused, SFL_ERROR_TRANSIENT for other I/O), never an empty
 *    document.
 *
 * Threading: every public call is made on the thread-default main context of the caller. The
 * operations of one store run one at a time, in call order, in a worker thread (storage may be
 * NFS or a network service), and complete on the caller's context. Implementations only
 * implement the blocking vfuncs, which the base class calls from that worker thread.
 *
 * Cancellation: an operation cancelled before it started returns G_IO_ERROR_CANCELLED; once a
 * write started it completes (a half-cancelled durable write would help nobody).
 */

#define SFL_TYPE_CHECKPOINT_STORE (sfl_checkpoint_store_get_type())
G_DECLARE_DERIVABLE_TYPE(SflCheckpointStore, sfl_checkpoint_store, SFL, CHECKPOINT_STORE, GObject)

typedef enum {
	SFL_CHECKPOINT_STORE_NONE = 0,
	/* allow reserved keys (the state CLI's --force) */
	SFL_CHECKPOINT_STORE_FORCE = 1 << 0,
} SflCheckpointStoreFlags;

/* main thread; FALSE once this replica has lost leadership */
typedef gboolean (*SflFenceFunc)(gpointer user_data);
/* main thread; FALSE when no epoch is known yet (no check for that write) */
typedef gboolean (*SflEpochFunc)(gpointer user_data, guint64 *epoch);

/* what the main thread knew about the writer when the write was dispatched */
typedef struct {
	gboolean have_epoch;
	guint64 epoch;
	/* (nullable): a sharded work unit's commit, fenced by that unit's own epoch */
	const gchar *unit;
} SflStoreWriter;

struct _SflCheckpointStoreClass {
	GObjectClass parent_class;

	/* blocking, called from the store's worker thread, one at a time */
	gboolean (*open)(SflCheckpointStore *self, GCancellable *cancellable, GError **error);
	/* NULL with no error: the key is absent */
	gchar *(*load)(SflCheckpointStore *self, const gchar *key, GCancellable *cancellable,
		       GError **error);
	gboolean (*commit_many)(SflCheckpointStore *self, const SflStateDoc *items,
				const SflStoreWriter *writer, GCancellable *cancellable,
				GError **error);
	gboolean (*delete_key)(SflCheckpointStore *self, const gchar *key,
			       const SflStoreWriter *writer, GCancellable *cancellable,
			       GError **error);
	/* the whole document, reserved keys included */
	SflStateDoc *(*snapshot)(SflCheckpointStore *self, GCancellable *cancellable,
				 GError **error);
	/* TRUE with *present FALSE when the store has no epoch recorded for @unit (nullable: the
	 * store's own) */
	gboolean (*persisted_epoch)(SflCheckpointStore *self, const gchar *unit, guint64 *epoch,
				    gboolean *present, GCancellable *cancellable, GError **error);
	void (*reset)(SflCheckpointStore *self);
	void (*close)(SflCheckpointStore *self);

	gpointer padding[8];
};

void sfl_checkpoint_store_set_fence(SflCheckpointStore *self, SflFenceFunc func, gpointer user_data,
				    GDestroyNotify destroy);
void sfl_checkpoint_store_set_epoch(SflCheckpointStore *self, SflEpochFunc func, gpointer user_data,
				    GDestroyNotify destroy);
gboolean sfl_checkpoint_store_check_fence(SflCheckpointStore *self);

void sfl_checkpoint_store_open_async(SflCheckpointStore *self, GCancellable *cancellable,
				     GAsyncReadyCallback callback, gpointer user_data);
gboolean
sfl_checkpoint_store_open_finish(SflCheckpointStore *self, GAsyncResult *result, GError **error);

void sfl_checkpoint_store_load_async(SflCheckpointStore *self, const gchar *key,
				     GCancellable *cancellable, GAsyncReadyCallback callback,
				     gpointer user_data);
gchar *sfl_checkpoint_store_load_finish(SflCheckpointStore *self, GAsyncResult *result,
					GError **error) G_GNUC_WARN_UNUSED_RESULT;

void
sfl_checkpoint_store_commit_many_async(SflCheckpointStore *self, const SflStateDoc *items,
				       SflCheckpointStoreFlags flags, GCancellable *cancellable,
				       GAsyncReadyCallback callback, gpointer user_data);
gboolean sfl_checkpoint_store_commit_many_finish(SflCheckpointStore *self, GAsyncResult *result,
						 GError **error);
/*
 * A sharded work unit's commit: fenced by @unit's own recorded epoch against @epoch (the unit
 * lease's), not by the store's fence and epoch hooks; the caller checked its unit lease. Only
 * @unit's epoch is recorded. Finish with sfl_checkpoint_store_commit_many_finish().
 */
void
sfl_checkpoint_store_commit_unit_async(SflCheckpointStore *self, const gchar *unit, guint64 epoch,
				       const SflStateDoc *items, GCancellable *cancellable,
				       GAsyncReadyCallback callback, gpointer user_data);

void sfl_checkpoint_store_delete_async(SflCheckpointStore *self, const gchar *key,
				       SflCheckpointStoreFlags flags, GCancellable *cancellable,
				       GAsyncReadyCallback callback, gpointer user_data);
gboolean
sfl_checkpoint_store_delete_finish(SflCheckpointStore *self, GAsyncResult *result, GError **error);

void sfl_checkpoint_store_list_async(SflCheckpointStore *self, GCancellable *cancellable,
				     GAsyncReadyCallback callback, gpointer user_data);
GPtrArray *sfl_checkpoint_store_list_finish(SflCheckpointStore *self, GAsyncResult *result,
					    GError **error) G_GNUC_WARN_UNUSED_RESULT;

void sfl_checkpoint_store_snapshot_async(SflCheckpointStore *self, GCancellable *cancellable,
					 GAsyncReadyCallback callback, gpointer user_data);
SflStateDoc *sfl_checkpoint_store_snapshot_finish(SflCheckpointStore *self, GAsyncResult *result,
						  GError **error) G_GNUC_WARN_UNUSED_RESULT;

void sfl_checkpoint_store_persisted_epoch_async(SflCheckpointStore *self, GCancellable *cancellable,
						GAsyncReadyCallback callback, gpointer user_data);
/* @unit's own recorded epoch (sharding); finish with sfl_checkpoint_store_persisted_epoch_finish */
void
sfl_checkpoint_store_persisted_unit_epoch_async(SflCheckpointStore *self, const gchar *unit,
						GCancellable *cancellable,
						GAsyncReadyCallback callback, gpointer user_data);
gboolean
sfl_checkpoint_store_persisted_epoch_finish(SflCheckpointStore *self, GAsyncResult *result,
					    guint64 *epoch, gboolean *present, GError **error);

void sfl_checkpoint_store_reset(SflCheckpointStore *self);

G_END_DECLS
