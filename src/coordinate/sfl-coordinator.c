/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCoordinator"

#include "config.h"

#include "sfl-coordinator.h"

#include "sfl-error.h"

typedef struct {
	GTask *run; /* the run in progress */
	gulong cancel_id;
	SflLeadershipFunc acquired;
	SflLeadershipFunc lost;
	gpointer user_data;
	gboolean leader;
	gboolean stopping;
	SflEpochFloorFunc floor;
	SflEpochFloorFinishFunc floor_finish;
	gpointer floor_data;
	GDestroyNotify floor_destroy;
} SflCoordinatorPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE(SflCoordinator, sfl_coordinator, G_TYPE_OBJECT)

#define GET_PRIVATE(o) ((SflCoordinatorPrivate *)sfl_coordinator_get_instance_private(o))

/**
 * sfl_coordinator_set_leader:
 * @self: a coordinator
 * @leader: whether this replica leads now
 *
 * Implementations report every change here; only real transitions reach the callbacks, so
 * acquired and lost always alternate.
 */
void
sfl_coordinator_set_leader(SflCoordinator *self, gboolean leader)
{
	SflCoordinatorPrivate *priv = GET_PRIVATE(self);

	g_return_if_fail(SFL_IS_COORDINATOR(self));
	if (priv->leader == leader)
		return;
	/* no new leadership once the run is being stopped */
	if (leader && (priv->stopping || priv->run == NULL))
		return;
	priv->leader = leader;
	if (leader && priv->acquired != NULL)
		priv->acquired(self, priv->user_data);
	else if (!leader && priv->lost != NULL)
		priv->lost(self, priv->user_data);
}

gboolean
sfl_coordinator_is_leader(SflCoordinator *self)
{
	g_return_val_if_fail(SFL_IS_COORDINATOR(self), FALSE);
	return GET_PRIVATE(self)->leader;
}

static gboolean
sfl_coordinator_finish_run_cb(gpointer user_data)
{
	SflCoordinator *self = SFL_COORDINATOR(user_data);
	SflCoordinatorPrivate *priv = GET_PRIVATE(self);
	g_autoptr(GTask) run = g_steal_pointer(&priv->run);

	if (run == NULL)
		return G_SOURCE_REMOVE;
	if (priv->cancel_id != 0) {
		g_cancellable_disconnect(g_task_get_cancellable(run), priv->cancel_id);
		priv->cancel_id = 0;
	}
	g_task_return_boolean(run, TRUE);
	return G_SOURCE_REMOVE;
}

static void
sfl_coordinator_cancelled_cb(GCancellable *cancellable, gpointer user_data)
{
	SflCoordinator *self = SFL_COORDINATOR(user_data);
	SflCoordinatorPrivate *priv = GET_PRIVATE(self);
	SflCoordinatorClass *klass = SFL_COORDINATOR_GET_CLASS(self);

	if (priv->stopping)
		return;
	priv->stopping = TRUE;
	if (klass->stop != NULL)
		klass->stop(self);
	sfl_coordinator_set_leader(self, FALSE);
	/* complete from the loop, never from inside the cancel signal */
	g_idle_add_full(G_PRIORITY_DEFAULT, sfl_coordinator_finish_run_cb, g_object_ref(self),
			g_object_unref);
}

/**
 * sfl_coordinator_run_async:
 * @self: a coordinator
 * @acquired: called when this replica starts leading
 * @lost: called when it stops leading
 * @user_data: for @acquired and @lost
 * @cancellable: ends the run
 * @callback: completion, after @cancellable fired and leadership (if any) was given up
 * @callback_data: for @callback
 */
void
sfl_coordinator_run_async(SflCoordinator *self, SflLeadershipFunc acquired, SflLeadershipFunc lost,
			  gpointer user_data, GCancellable *cancellable,
			  GAsyncReadyCallback callback, gpointer callback_data)
{
	SflCoordinatorPrivate *priv = GET_PRIVATE(self);
	SflCoordinatorClass *klass = SFL_COORDINATOR_GET_CLASS(self);

	g_return_if_fail(SFL_IS_COORDINATOR(self));
	g_return_if_fail(G_IS_CANCELLABLE(cancellable));
	g_return_if_fail(priv->run == NULL);

	priv->run = g_task_new(self, cancellable, callback, callback_data);
	g_task_set_source_tag(priv->run, sfl_coordinator_run_async);
	/* the cancellable is how a run ends normally, not an error */
	g_task_set_check_cancellable(priv->run, FALSE);
	priv->acquired = acquired;
	priv->lost = lost;
	priv->user_data = user_data;
	priv->stopping = FALSE;
	klass->start(self);
	priv->cancel_id = g_cancellable_connect(
		cancellable, G_CALLBACK(sfl_coordinator_cancelled_cb), self, NULL);
}

gboolean
sfl_coordinator_run_finish(SflCoordinator *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

gboolean
sfl_coordinator_check_fence(SflCoordinator *self)
{
	SflCoordinatorClass *klass = SFL_COORDINATOR_GET_CLASS(self);
	g_return_val_if_fail(SFL_IS_COORDINATOR(self), FALSE);
	if (!GET_PRIVATE(self)->leader)
		return FALSE;
	return klass->check_fence != NULL ? klass->check_fence(self) : TRUE;
}

guint64
sfl_coordinator_get_epoch(SflCoordinator *self)
{
	SflCoordinatorClass *klass = SFL_COORDINATOR_GET_CLASS(self);
	g_return_val_if_fail(SFL_IS_COORDINATOR(self), 0);
	return klass->get_epoch != NULL ? klass->get_epoch(self) : 0;
}

const gchar *
sfl_coordinator_get_holder(SflCoordinator *self)
{
	SflCoordinatorClass *klass = SFL_COORDINATOR_GET_CLASS(self);
	g_return_val_if_fail(SFL_IS_COORDINATOR(self), NULL);
	return klass->get_holder != NULL ? klass->get_holder(self) : "";
}

/**
 * sfl_coordinator_set_watching:
 * @self: a coordinator, running or not
 * @watching: %TRUE to observe the lease without ever claiming it
 *
 * A watching contest reads the lease as a standby does, so the staleness of its holder is
 * already being timed when this replica is told to take it over (sfl_coordinator_set_watching()
 * with %FALSE): the takeover then waits for the rest of the holder's ttl, not a whole ttl from
 * the moment it was assigned. One already leading is not affected.
 *
 * Returns: %FALSE when @self cannot watch (it would claim as usual): a caller that wanted it
 *   to watch should not run it
 */
gboolean
sfl_coordinator_set_watching(SflCoordinator *self, gboolean watching)
{
	SflCoordinatorClass *klass = SFL_COORDINATOR_GET_CLASS(self);

	g_return_val_if_fail(SFL_IS_COORDINATOR(self), FALSE);
	return klass->set_watching != NULL && klass->set_watching(self, watching);
}

/**
 * sfl_coordinator_demote:
 * @self: a coordinator
 *
 * A commit was fenced: another replica leads. Stop leading now (lost is called) and keep
 * contesting; the process goes on as a standby.
 */
void
sfl_coordinator_demote(SflCoordinator *self)
{
	SflCoordinatorClass *klass = SFL_COORDINATOR_GET_CLASS(self);

	g_return_if_fail(SFL_IS_COORDINATOR(self));
	if (!GET_PRIVATE(self)->leader)
		return;
	if (klass->demote != NULL)
		klass->demote(self);
	sfl_coordinator_set_leader(self, FALSE);
}

void
sfl_coordinator_set_epoch_floor(SflCoordinator *self, SflEpochFloorFunc func,
				SflEpochFloorFinishFunc finish, gpointer user_data,
				GDestroyNotify destroy)
{
	SflCoordinatorPrivate *priv = GET_PRIVATE(self);

	g_return_if_fail(SFL_IS_COORDINATOR(self));
	if (priv->floor_destroy != NULL)
		priv->floor_destroy(priv->floor_data);
	priv->floor = func;
	priv->floor_finish = finish;
	priv->floor_data = user_data;
	priv->floor_destroy = destroy;
}

static void
sfl_coordinator_floor_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflCoordinator *self = g_task_get_source_object(task);
	SflCoordinatorPrivate *priv = GET_PRIVATE(self);
	guint64 floor = 0;
	gboolean present = FALSE;
	GError *error = NULL;

	if (!priv->floor_finish(priv->floor_data, result, &floor, &present, &error)) {
		g_task_return_error(task, error);
		return;
	}
	g_task_return_pointer(task, g_memdup2(&floor, sizeof(floor)), g_free);
}

/**
 * sfl_coordinator_epoch_floor_async:
 * @self: a coordinator
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Reads the lowest acceptable epoch (the store's persisted one) through the installed
 * functions; without any, the floor is 0.
 */
void
sfl_coordinator_epoch_floor_async(SflCoordinator *self, GCancellable *cancellable,
				  GAsyncReadyCallback callback, gpointer user_data)
{
	SflCoordinatorPrivate *priv = GET_PRIVATE(self);
	GTask *task = g_task_new(self, cancellable, callback, user_data);
	guint64 zero = 0;

	g_task_set_source_tag(task, sfl_coordinator_epoch_floor_async);
	if (priv->floor == NULL) {
		g_task_return_pointer(task, g_memdup2(&zero, sizeof(zero)), g_free);
		g_object_unref(task);
		return;
	}
	priv->floor(priv->floor_data, cancellable, sfl_coordinator_floor_cb, task);
}

/**
 * sfl_coordinator_epoch_floor_finish:
 * @self: a coordinator
 * @result: the result
 * @floor: (out): the floor; 0 when the read failed
 * @error: return location for an error
 *
 * Returns: %FALSE when the floor could not be read (log it and go on with 0)
 */
gboolean
sfl_coordinator_epoch_floor_finish(SflCoordinator *self, GAsyncResult *result, guint64 *floor,
				   GError **error)
{
	g_autofree guint64 *value = NULL;

	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	*floor = 0;
	value = g_task_propagate_pointer(G_TASK(result), error);
	if (value == NULL)
		return FALSE;
	*floor = *value;
	return TRUE;
}

static void
sfl_coordinator_dispose(GObject *object)
{
	SflCoordinator *self = SFL_COORDINATOR(object);
	SflCoordinatorPrivate *priv = GET_PRIVATE(self);

	if (priv->run != NULL && priv->cancel_id != 0) {
		g_cancellable_disconnect(g_task_get_cancellable(priv->run), priv->cancel_id);
		priv->cancel_id = 0;
	}
	sfl_coordinator_set_epoch_floor(self, NULL, NULL, NULL, NULL);
	G_OBJECT_CLASS(sfl_coordinator_parent_class)->dispose(object);
}

static void
sfl_coordinator_class_init(SflCoordinatorClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	object_class->dispose = sfl_coordinator_dispose;
}

static void
sfl_coordinator_init(SflCoordinator *self)
{
}
