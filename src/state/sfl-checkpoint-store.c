/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCheckpointStore"

#include "config.h"

#include "sfl-checkpoint-store.h"

#include "sfl-error.h"

/*
 * The base class owns the threading so no implementation can get it wrong: operations queue
 * in call order, the fence and epoch are sampled on the main thread the moment a write is
 * dispatched, and the blocking vfunc runs in a worker thread. One operation at a time per
 * store means an implementation never sees two of its own vfuncs at once.
 */

typedef enum {
	SFL_STORE_OP_OPEN,
	SFL_STORE_OP_LOAD,
	SFL_STORE_OP_COMMIT,
	SFL_STORE_OP_DELETE,
	SFL_STORE_OP_LIST,
	SFL_STORE_OP_SNAPSHOT,
	SFL_STORE_OP_EPOCH,
	SFL_STORE_OP_RESET,
} SflStoreOpKind;

typedef struct {
	SflStoreOpKind kind;
	gchar *key;
	SflStateDoc *items;
	SflStoreWriter writer;
	gchar *unit;	    /* (nullable): a work unit's commit or epoch read */
	guint64 unit_epoch; /* the unit lease's epoch, for a unit's commit */
	GTask *outer;	    /* the caller's task; NULL for reset */
	GObject *keepalive; /* reset's reference on the store while queued */
	/* results, filled by the worker */
	gpointer result;
	GDestroyNotify result_free;
	guint64 epoch;
	gboolean present;
	GError *error;
} SflStoreOp;

typedef struct {
	GQueue pending;
	gboolean busy;
	SflFenceFunc fence;
	gpointer fence_data;
	GDestroyNotify fence_destroy;
	SflEpochFunc epoch;
	gpointer epoch_data;
	GDestroyNotify epoch_destroy;
} SflCheckpointStorePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE(SflCheckpointStore, sfl_checkpoint_store, G_TYPE_OBJECT)

#define GET_PRIVATE(o) (sfl_checkpoint_store_get_instance_private(o))

static void
sfl_store_op_free(SflStoreOp *op)
{
	g_free(op->key);
	g_free(op->unit);
	if (op->items != NULL)
		sfl_state_doc_free(op->items);
	if (op->result != NULL && op->result_free != NULL)
		op->result_free(op->result);
	g_clear_error(&op->error);
	g_clear_object(&op->outer);
	g_clear_object(&op->keepalive);
	g_free(op);
}

static void sfl_checkpoint_store_start_next(SflCheckpointStore *self);

static gint
sfl_store_cmp_str(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

static void
sfl_store_op_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
	SflCheckpointStore *self = source;
	SflCheckpointStoreClass *klass = SFL_CHECKPOINT_STORE_GET_CLASS(self);
	SflStoreOp *op = task_data;

	switch (op->kind) {
	case SFL_STORE_OP_OPEN:
		if (klass->open != NULL)
			klass->open(self, cancellable, &op->error);
		break;
	case SFL_STORE_OP_LOAD:
		op->result = klass->load(self, op->key, cancellable, &op->error);
		op->result_free = g_free;
		break;
	case SFL_STORE_OP_COMMIT:
		klass->commit_many(self, op->items, &op->writer, cancellable, &op->error);
		break;
	case SFL_STORE_OP_DELETE:
		klass->delete_key(self, op->key, &op->writer, cancellable, &op->error);
		break;
	case SFL_STORE_OP_SNAPSHOT:
		op->result = klass->snapshot(self, cancellable, &op->error);
		op->result_free = (GDestroyNotify)sfl_state_doc_free;
		break;
	case SFL_STORE_OP_LIST: {
		g_autoptr(SflStateDoc) doc = klass->snapshot(self, cancellable, &op->error);
		GPtrArray *keys;
		if (doc == NULL)
			break;
		keys = g_ptr_array_new_with_free_func(g_free);
		for (guint i = 0; i < sfl_state_doc_size(doc); i++) {
			const gchar *key = sfl_state_doc_key_at(doc, i);
			if (!sfl_state_key_is_reserved(key))
				g_ptr_array_add(keys, g_strdup(key));
		}
		g_ptr_array_sort(keys, sfl_store_cmp_str);
		op->result = keys;
		op->result_free = (GDestroyNotify)g_ptr_array_unref;
		break;
	}
	case SFL_STORE_OP_EPOCH:
		klass->persisted_epoch(self, op->unit, &op->epoch, &op->present, cancellable,
				       &op->error);
		break;
	case SFL_STORE_OP_RESET:
		if (klass->reset != NULL)
			klass->reset(self);
		break;
	}
	g_task_return_boolean(task, TRUE);
}

static void
sfl_store_op_complete(SflStoreOp *op)
{
	GTask *outer = op->outer;

	if (outer == NULL)
		return;
	if (op->error != NULL) {
		g_task_return_error(outer, g_steal_pointer(&op->error));
		return;
	}
	switch (op->kind) {
	case SFL_STORE_OP_LOAD:
	case SFL_STORE_OP_LIST:
	case SFL_STORE_OP_SNAPSHOT:
		g_task_return_pointer(outer, g_steal_pointer(&op->result), op->result_free);
		break;
	case SFL_STORE_OP_EPOCH: {
		guint64 *pair = g_new0(guint64, 2);
		pair[0] = op->epoch;
		pair[1] = op->present;
		g_task_return_pointer(outer, pair, g_free);
		break;
	}
	default:
		g_task_return_boolean(outer, TRUE);
		break;
	}
}

static void
sfl_store_op_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflCheckpointStore *self = SFL_CHECKPOINT_STORE(source);
	SflCheckpointStorePrivate *priv = GET_PRIVATE(self);
	SflStoreOp *op = g_task_get_task_data(G_TASK(result));

	sfl_store_op_complete(op);
	priv->busy = FALSE;
	sfl_checkpoint_store_start_next(self);
}

/* the fence and the epoch are the coordinator's, read on its thread at dispatch time */
static gboolean
sfl_checkpoint_store_sample_writer(SflCheckpointStore *self, SflStoreOp *op)
{
	SflCheckpointStorePrivate *priv = GET_PRIVATE(self);

	/* a unit's commit carries its own lease's epoch: the store's hooks are the single
	 * leader's and say nothing about it */
	if (op->unit != NULL) {
		op->writer.have_epoch = TRUE;
		op->writer.epoch = op->unit_epoch;
		op->writer.unit = op->unit;
		return TRUE;
	}
	if (priv->fence != NULL && !priv->fence(priv->fence_data)) {
		g_set_error_literal(&op->error, SFL_ERROR, SFL_ERROR_FENCED,
				    "write rejected: this replica is no longer the leader");
		return FALSE;
	}
	op->writer.have_epoch =
		priv->epoch != NULL && priv->epoch(priv->epoch_data, &op->writer.epoch);
	return TRUE;
}

static void
sfl_checkpoint_store_start_next(SflCheckpointStore *self)
{
	SflCheckpointStorePrivate *priv = GET_PRIVATE(self);

	while (!priv->busy && !g_queue_is_empty(&priv->pending)) {
		SflStoreOp *op = g_queue_pop_head(&priv->pending);
		g_autoptr(GTask) inner = NULL;

		if (op->outer != NULL && g_cancellable_set_error_if_cancelled(
						 g_task_get_cancellable(op->outer), &op->error)) {
			sfl_store_op_complete(op);
			sfl_store_op_free(op);
			continue;
		}
		if ((op->kind == SFL_STORE_OP_COMMIT || op->kind == SFL_STORE_OP_DELETE) &&
		    !sfl_checkpoint_store_sample_writer(self, op)) {
			sfl_store_op_complete(op);
			sfl_store_op_free(op);
			continue;
		}
		priv->busy = TRUE;
		/* not cancellable once dispatched: a durable write is finished, not abandoned */
		inner = g_task_new(self, NULL, sfl_store_op_done, NULL);
		g_task_set_source_tag(inner, sfl_checkpoint_store_start_next);
		g_task_set_task_data(inner, op, (GDestroyNotify)sfl_store_op_free);
		g_task_run_in_thread(inner, sfl_store_op_thread);
	}
}

static void
sfl_checkpoint_store_enqueue(SflCheckpointStore *self, SflStoreOp *op)
{
	SflCheckpointStorePrivate *priv = GET_PRIVATE(self);
	g_queue_push_tail(&priv->pending, op);
	sfl_checkpoint_store_start_next(self);
}

static SflStoreOp *
sfl_store_op_new(SflCheckpointStore *self, SflStoreOpKind kind, GCancellable *cancellable,
		 GAsyncReadyCallback callback, gpointer user_data, gpointer source_tag)
{
	SflStoreOp *op = g_new0(SflStoreOp, 1);
	op->kind = kind;
	op->outer = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(op->outer, source_tag);
	return op;
}

/* reserved keys belong to the store; only --force may touch them */
static gboolean
sfl_checkpoint_store_check_key(const gchar *key, SflCheckpointStoreFlags flags, GError **error)
{
	if (key == NULL || key[0] == '\0' || !g_utf8_validate(key, -1, NULL)) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INTERNAL,
				    "checkpoint keys must be non-empty UTF-8");
		return FALSE;
	}
	if (sfl_state_key_is_reserved(key) && !(flags & SFL_CHECKPOINT_STORE_FORCE)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL,
			    "'%s' is a reserved key of the checkpoint store", key);
		return FALSE;
	}
	return TRUE;
}

void
sfl_checkpoint_store_set_fence(SflCheckpointStore *self, SflFenceFunc func, gpointer user_data,
			       GDestroyNotify destroy)
{
	SflCheckpointStorePrivate *priv = GET_PRIVATE(self);
	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	if (priv->fence_destroy != NULL)
		priv->fence_destroy(priv->fence_data);
	priv->fence = func;
	priv->fence_data = user_data;
	priv->fence_destroy = destroy;
}

void
sfl_checkpoint_store_set_epoch(SflCheckpointStore *self, SflEpochFunc func, gpointer user_data,
			       GDestroyNotify destroy)
{
	SflCheckpointStorePrivate *priv = GET_PRIVATE(self);
	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	if (priv->epoch_destroy != NULL)
		priv->epoch_destroy(priv->epoch_data);
	priv->epoch = func;
	priv->epoch_data = user_data;
	priv->epoch_destroy = destroy;
}

/**
 * sfl_checkpoint_store_check_fence:
 * @self: a store
 *
 * Evaluates the installed fence check now (main thread), without writing anything: a writer
 * can learn that its next commit would be rejected before it does work that only that commit
 * would make good.
 *
 * Returns: %FALSE when a write would be rejected as fenced; %TRUE without a fence check
 */
gboolean
sfl_checkpoint_store_check_fence(SflCheckpointStore *self)
{
	SflCheckpointStorePrivate *priv = GET_PRIVATE(self);
	g_return_val_if_fail(SFL_IS_CHECKPOINT_STORE(self), FALSE);
	return priv->fence == NULL || priv->fence(priv->fence_data);
}

/**
 * sfl_checkpoint_store_open_async:
 * @self: a store
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Prepares storage (creates directories, takes locks). A store that needs no preparation
 * completes at once.
 */
void
sfl_checkpoint_store_open_async(SflCheckpointStore *self, GCancellable *cancellable,
				GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	sfl_checkpoint_store_enqueue(self, sfl_store_op_new(self, SFL_STORE_OP_OPEN, cancellable,
							    callback, user_data,
							    sfl_checkpoint_store_open_async));
}

gboolean
sfl_checkpoint_store_open_finish(SflCheckpointStore *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/**
 * sfl_checkpoint_store_load_async:
 * @self: a store
 * @key: a non-reserved key
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Finishes with the value, or %NULL and no error when the key is absent.
 */
void
sfl_checkpoint_store_load_async(SflCheckpointStore *self, const gchar *key,
				GCancellable *cancellable, GAsyncReadyCallback callback,
				gpointer user_data)
{
	SflStoreOp *op;
	g_autoptr(GError) error = NULL;

	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	op = sfl_store_op_new(self, SFL_STORE_OP_LOAD, cancellable, callback, user_data,
			      sfl_checkpoint_store_load_async);
	if (!sfl_checkpoint_store_check_key(key, SFL_CHECKPOINT_STORE_NONE, &error)) {
		g_task_return_error(op->outer, g_steal_pointer(&error));
		sfl_store_op_free(op);
		return;
	}
	op->key = g_strdup(key);
	sfl_checkpoint_store_enqueue(self, op);
}

/**
 * sfl_checkpoint_store_load_finish:
 * @self: a store
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the value, %NULL when absent or on error
 */
gchar *
sfl_checkpoint_store_load_finish(SflCheckpointStore *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_checkpoint_store_commit_many_async:
 * @self: a store
 * @items: the keys and values to write; copied
 * @flags: %SFL_CHECKPOINT_STORE_FORCE to allow reserved keys
 * @cancellable: (nullable): cancels only before the write starts
 * @callback: completion
 * @user_data: for @callback
 *
 * One durable write for all @items. Fails with %SFL_ERROR_FENCED when the fence check says
 * leadership is lost or the store recorded a newer epoch than the writer's.
 */
void
sfl_checkpoint_store_commit_many_async(SflCheckpointStore *self, const SflStateDoc *items,
				       SflCheckpointStoreFlags flags, GCancellable *cancellable,
				       GAsyncReadyCallback callback, gpointer user_data)
{
	SflStoreOp *op;
	g_autoptr(GError) error = NULL;

	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	g_return_if_fail(items != NULL);
	op = sfl_store_op_new(self, SFL_STORE_OP_COMMIT, cancellable, callback, user_data,
			      sfl_checkpoint_store_commit_many_async);
	for (guint i = 0; i < sfl_state_doc_size(items); i++) {
		if (!sfl_checkpoint_store_check_key(sfl_state_doc_key_at(items, i), flags,
						    &error)) {
			g_task_return_error(op->outer, g_steal_pointer(&error));
			sfl_store_op_free(op);
			return;
		}
	}
	op->items = sfl_state_doc_copy(items);
	sfl_checkpoint_store_enqueue(self, op);
}

/**
 * sfl_checkpoint_store_commit_unit_async:
 * @self: a store
 * @unit: the work unit whose keys @items are
 * @epoch: the epoch of the unit's lease
 * @items: the keys to set (no reserved ones)
 * @cancellable: (nullable): a #GCancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * One durable write, fenced per unit: %SFL_ERROR_FENCED when the store recorded a newer epoch
 * for @unit, which demotes that unit only. The unit's epoch is recorded with the write.
 */
void
sfl_checkpoint_store_commit_unit_async(SflCheckpointStore *self, const gchar *unit, guint64 epoch,
				       const SflStateDoc *items, GCancellable *cancellable,
				       GAsyncReadyCallback callback, gpointer user_data)
{
	SflStoreOp *op;
	g_autoptr(GError) error = NULL;

	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	g_return_if_fail(unit != NULL && items != NULL);
	op = sfl_store_op_new(self, SFL_STORE_OP_COMMIT, cancellable, callback, user_data,
			      sfl_checkpoint_store_commit_unit_async);
	for (guint i = 0; i < sfl_state_doc_size(items); i++) {
		if (!sfl_checkpoint_store_check_key(sfl_state_doc_key_at(items, i),
						    SFL_CHECKPOINT_STORE_NONE, &error)) {
			g_task_return_error(op->outer, g_steal_pointer(&error));
			sfl_store_op_free(op);
			return;
		}
	}
	op->items = sfl_state_doc_copy(items);
	op->unit = g_strdup(unit);
	op->unit_epoch = epoch;
	sfl_checkpoint_store_enqueue(self, op);
}

gboolean
sfl_checkpoint_store_commit_many_finish(SflCheckpointStore *self, GAsyncResult *result,
					GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/**
 * sfl_checkpoint_store_delete_async:
 * @self: a store
 * @key: the key; deleting an absent key succeeds
 * @flags: %SFL_CHECKPOINT_STORE_FORCE to allow reserved keys
 * @cancellable: (nullable): cancels only before the write starts
 * @callback: completion
 * @user_data: for @callback
 *
 * Fenced exactly like a commit.
 */
void
sfl_checkpoint_store_delete_async(SflCheckpointStore *self, const gchar *key,
				  SflCheckpointStoreFlags flags, GCancellable *cancellable,
				  GAsyncReadyCallback callback, gpointer user_data)
{
	SflStoreOp *op;
	g_autoptr(GError) error = NULL;

	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	op = sfl_store_op_new(self, SFL_STORE_OP_DELETE, cancellable, callback, user_data,
			      sfl_checkpoint_store_delete_async);
	if (!sfl_checkpoint_store_check_key(key, flags, &error)) {
		g_task_return_error(op->outer, g_steal_pointer(&error));
		sfl_store_op_free(op);
		return;
	}
	op->key = g_strdup(key);
	sfl_checkpoint_store_enqueue(self, op);
}

gboolean
sfl_checkpoint_store_delete_finish(SflCheckpointStore *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/**
 * sfl_checkpoint_store_list_async:
 * @self: a store
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Finishes with the sorted non-reserved keys.
 */
void
sfl_checkpoint_store_list_async(SflCheckpointStore *self, GCancellable *cancellable,
				GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	sfl_checkpoint_store_enqueue(self, sfl_store_op_new(self, SFL_STORE_OP_LIST, cancellable,
							    callback, user_data,
							    sfl_checkpoint_store_list_async));
}

/**
 * sfl_checkpoint_store_list_finish:
 * @self: a store
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (element-type utf8): the keys
 */
GPtrArray *
sfl_checkpoint_store_list_finish(SflCheckpointStore *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_checkpoint_store_snapshot_async:
 * @self: a store
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Finishes with the whole document including reserved keys (for the state CLI).
 */
void
sfl_checkpoint_store_snapshot_async(SflCheckpointStore *self, GCancellable *cancellable,
				    GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	sfl_checkpoint_store_enqueue(self, sfl_store_op_new(self, SFL_STORE_OP_SNAPSHOT,
							    cancellable, callback, user_data,
							    sfl_checkpoint_store_snapshot_async));
}

/**
 * sfl_checkpoint_store_snapshot_finish:
 * @self: a store
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full): the document
 */
SflStateDoc *
sfl_checkpoint_store_snapshot_finish(SflCheckpointStore *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_checkpoint_store_persisted_epoch_async:
 * @self: a store
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Reads the recorded fence epoch fresh from storage, bypassing every cache; the lease
 * coordinator floors its next epoch on it.
 */
void
sfl_checkpoint_store_persisted_epoch_async(SflCheckpointStore *self, GCancellable *cancellable,
					   GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	sfl_checkpoint_store_enqueue(
		self, sfl_store_op_new(self, SFL_STORE_OP_EPOCH, cancellable, callback, user_data,
				       sfl_checkpoint_store_persisted_epoch_async));
}

/**
 * sfl_checkpoint_store_persisted_unit_epoch_async:
 * @self: a store
 * @unit: a work unit
 * @cancellable: (nullable): a #GCancellable
 * @callback: completion, finished with sfl_checkpoint_store_persisted_epoch_finish()
 * @user_data: for @callback
 *
 * Reads @unit's recorded fence epoch fresh from storage: a unit lease floors its next epoch on
 * it, as the single lease does on the store's.
 */
void
sfl_checkpoint_store_persisted_unit_epoch_async(SflCheckpointStore *self, const gchar *unit,
						GCancellable *cancellable,
						GAsyncReadyCallback callback, gpointer user_data)
{
	SflStoreOp *op = NULL;

	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	g_return_if_fail(unit != NULL);
	op = sfl_store_op_new(self, SFL_STORE_OP_EPOCH, cancellable, callback, user_data,
			      sfl_checkpoint_store_persisted_epoch_async);
	op->unit = g_strdup(unit);
	sfl_checkpoint_store_enqueue(self, op);
}

/**
 * sfl_checkpoint_store_persisted_epoch_finish:
 * @self: a store
 * @result: the result
 * @epoch: (out): the stored epoch, 0 when absent
 * @present: (out): whether the store has one
 * @error: return location for an error
 *
 * Returns: %TRUE when storage could be read
 */
gboolean
sfl_checkpoint_store_persisted_epoch_finish(SflCheckpointStore *self, GAsyncResult *result,
					    guint64 *epoch, gboolean *present, GError **error)
{
	g_autofree guint64 *pair = NULL;

	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	pair = g_task_propagate_pointer(G_TASK(result), error);
	if (pair == NULL)
		return FALSE;
	if (epoch != NULL)
		*epoch = pair[0];
	if (present != NULL)
		*present = pair[1] != 0;
	return TRUE;
}

/**
 * sfl_checkpoint_store_reset:
 * @self: a store
 *
 * Drops caches after every operation already queued, so the next access re-reads storage.
 * Called when this replica is demoted.
 */
void
sfl_checkpoint_store_reset(SflCheckpointStore *self)
{
	SflStoreOp *op;

	g_return_if_fail(SFL_IS_CHECKPOINT_STORE(self));
	op = g_new0(SflStoreOp, 1);
	op->kind = SFL_STORE_OP_RESET;
	op->keepalive = g_object_ref(G_OBJECT(self));
	sfl_checkpoint_store_enqueue(self, op);
}

static void
sfl_checkpoint_store_finalize(GObject *object)
{
	SflCheckpointStore *self = SFL_CHECKPOINT_STORE(object);
	SflCheckpointStorePrivate *priv = GET_PRIVATE(self);
	SflCheckpointStoreClass *klass = SFL_CHECKPOINT_STORE_GET_CLASS(self);

	/* every queued operation holds a reference, so nothing is pending here */
	g_warn_if_fail(g_queue_is_empty(&priv->pending));
	if (klass->close != NULL)
		klass->close(self);
	sfl_checkpoint_store_set_fence(self, NULL, NULL, NULL);
	sfl_checkpoint_store_set_epoch(self, NULL, NULL, NULL);
	G_OBJECT_CLASS(sfl_checkpoint_store_parent_class)->finalize(object);
}

static void
sfl_checkpoint_store_class_init(SflCheckpointStoreClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	object_class->finalize = sfl_checkpoint_store_finalize;
}

static void
sfl_checkpoint_store_init(SflCheckpointStore *self)
{
	SflCheckpointStorePrivate *priv = GET_PRIVATE(self);
	g_queue_init(&priv->pending);
}
