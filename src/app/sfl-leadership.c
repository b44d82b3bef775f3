/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLeadership"

#include "config.h"

#include "sfl-leadership.h"

#include "sfl-clock.h"
#include "sfl-error.h"
#include "sfl-gsource.h"

struct _SflLeadership {
	GObject parent_instance;
	SflCheckpointStore *store;
	SflCoordinator *coordinator;
	GCancellable *cancellable;
	SflClock *clock; /* the epoch retry's */
	SflReadiness readiness;
	guint terms;	 /* acquisitions so far */
	gboolean fenced; /* the store carries this coordinator's fence and epoch */
	gboolean running;
	gboolean run_started; /* start_run was called for this term */
	GSource *epoch_retry; /* the next attempt to record this term's epoch */
	guint epoch_attempts;
	SflRunHook start_run;
	SflRunHook stop_run;
	SflStatusHook status;
	gpointer hook_data;
	GTask *stop_task;
};

G_DEFINE_TYPE(SflLeadership, sfl_leadership, G_TYPE_OBJECT)

const gchar *
sfl_readiness_to_string(SflReadiness readiness)
{
	switch (readiness) {
	case SFL_READINESS_STARTING:
		return "starting";
	case SFL_READINESS_READY:
		return "ready";
	case SFL_READINESS_STANDBY:
		return "standby";
	}
	return "unknown";
}

static void
sfl_leadership_set_status(SflLeadership *self, const gchar *status)
{
	if (self->status != NULL)
		self->status(self, status, self->hook_data);
}

/* the store asks the coordinator, on the main thread, at every write */
static gboolean
sfl_leadership_fence_cb(gpointer user_data)
{
	SflLeadership *self = user_data;
	return sfl_coordinator_check_fence(self->coordinator);
}

static gboolean
sfl_leadership_epoch_cb(gpointer user_data, guint64 *epoch)
{
	SflLeadership *self = user_data;
	*epoch = sfl_coordinator_get_epoch(self->coordinator);
	/* before the first win there is nothing to fence with */
	return *epoch > 0;
}

static void
sfl_leadership_floor_cb(gpointer user_data, GCancellable *cancellable, GAsyncReadyCallback callback,
			gpointer callback_data)
{
	SflLeadership *self = user_data;
	sfl_checkpoint_store_persisted_epoch_async(self->store, cancellable, callback,
						   callback_data);
}

static gboolean
sfl_leadership_floor_finish_cb(gpointer user_data, GAsyncResult *result, guint64 *floor,
			       gboolean *present, GError **error)
{
	SflLeadership *self = user_data;
	return sfl_checkpoint_store_persisted_epoch_finish(self->store, result, floor, present,
							   error);
}

typedef struct {
	SflLeadership *self; /* owned */
	guint term;
} SflEpochRecord;

static void sfl_leadership_record_epoch(SflLeadership *self);

static void
sfl_leadership_start_run(SflLeadership *self)
{
	self->run_started = TRUE;
	if (self->start_run != NULL)
		self->start_run(self, self->hook_data);
}

static void
sfl_leadership_epoch_retry_cb(gpointer user_data)
{
	SflLeadership *self = SFL_LEADERSHIP(user_data);

	if (self->running && !self->run_started)
		sfl_leadership_record_epoch(self);
}

static void
sfl_leadership_epoch_recorded_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflEpochRecord *rec = user_data;
	SflLeadership *self = rec->self;
	g_autoptr(GError) error = NULL;
	gboolean ok = sfl_checkpoint_store_commit_many_finish(SFL_CHECKPOINT_STORE(source), result,
							      &error);

	/* only this term's: a later term records its own epoch */
	if (!self->running || self->terms != rec->term || self->run_started) {
		/* nothing */
	} else if (ok) {
		sfl_leadership_start_run(self);
	} else if (!sfl_leadership_handle_commit_error(self, error)) {
		/* a transient failure (another replica's write in progress, I/O): the run waits,
		 * so its sources read what every earlier leader finished writing */
		guint delay_ms = MIN(250u << MIN(self->epoch_attempts, 3u), 2000u);

		if (self->epoch_attempts++ == 0)
			g_warning("cannot record the new epoch in the checkpoint store yet (%s); "
				  "retrying before the sources start",
				  error->message);
		sfl_clock_once(self->clock, &self->epoch_retry, (gint64)delay_ms * 1000,
			       "sf2loki leadership epoch retry", sfl_leadership_epoch_retry_cb,
			       self, g_main_context_get_thread_default());
	}
	g_object_unref(self);
	g_free(rec);
}

/*
 * The epoch is written to the store as soon as it is won, not with the first checkpoint: a
 * replica that finds the lease deleted or garbled takes the store's epoch as its floor, and a
 * leader that had not committed yet (Loki refusing pushes, a long first file) would otherwise
 * see its own epoch handed out a second time, leaving the store unable to tell the two apart
 * (found by tests/ha). The sources start only once it is written: a write of the previous
 * leader still in progress (a frozen process) finishes or is fenced first, so they read
 * everything it committed.
 */
static void
sfl_leadership_record_epoch(SflLeadership *self)
{
	g_autoptr(SflStateDoc) none = sfl_state_doc_new();
	SflEpochRecord *rec = g_new0(SflEpochRecord, 1);

	rec->self = g_object_ref(self);
	rec->term = self->terms;
	sfl_checkpoint_store_commit_many_async(self->store, none, SFL_CHECKPOINT_STORE_NONE, NULL,
					       sfl_leadership_epoch_recorded_cb, rec);
}

static void
sfl_leadership_acquired_cb(SflCoordinator *coordinator, gpointer user_data)
{
	SflLeadership *self = SFL_LEADERSHIP(user_data);
	guint64 epoch = sfl_coordinator_get_epoch(coordinator);
	g_autofree gchar *status = g_strdup_printf("leader (epoch %" G_GUINT64_FORMAT ")", epoch);
	g_autofree gchar *epoch_text = g_strdup_printf("%" G_GUINT64_FORMAT, epoch);

	self->terms++;
	self->readiness = SFL_READINESS_READY;
	g_log_structured(G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "HOLDER",
			 sfl_coordinator_get_holder(coordinator), "EPOCH", epoch_text, "MESSAGE",
			 "leadership acquired");
	sfl_leadership_set_status(self, status);
	self->running = TRUE;
	self->run_started = FALSE;
	self->epoch_attempts = 0;
	if (self->fenced)
		sfl_leadership_record_epoch(self);
	else
		sfl_leadership_start_run(self);
}

static void
sfl_leadership_lost_cb(SflCoordinator *coordinator, gpointer user_data)
{
	SflLeadership *self = SFL_LEADERSHIP(user_data);
	g_autofree gchar *epoch_text =
		g_strdup_printf("%" G_GUINT64_FORMAT, sfl_coordinator_get_epoch(coordinator));

	sfl_clear_source(&self->epoch_retry);
	if (self->running && self->run_started && self->stop_run != NULL)
		self->stop_run(self, self->hook_data);
	self->running = FALSE;
	self->run_started = FALSE;
	/* a later term must read what the winner wrote, not this term's cache */
	sfl_checkpoint_store_reset(self->store);
	self->readiness = SFL_READINESS_STANDBY;
	g_log_structured(G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "HOLDER",
			 sfl_coordinator_get_holder(coordinator), "EPOCH", epoch_text, "MESSAGE",
			 "leadership lost; standing by");
	sfl_leadership_set_status(self, "standby");
}

static void
sfl_leadership_run_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflLeadership *self = SFL_LEADERSHIP(user_data);
	g_autoptr(GError) error = NULL;
	g_autoptr(GTask) stop = g_steal_pointer(&self->stop_task);

	if (!sfl_coordinator_run_finish(SFL_COORDINATOR(source), result, &error))
		g_warning("coordinator ended with an error: %s", error->message);
	if (stop != NULL)
		g_task_return_boolean(stop, TRUE);
	g_object_unref(self);
}

/**
 * sfl_leadership_new:
 * @store: the checkpoint store (opened)
 * @coordinator: the coordinator
 * @fenced: wire the fence and epoch into the store (every coordinator but noop)
 *
 * Returns: (transfer full): the lifecycle
 */
SflLeadership *
sfl_leadership_new(SflCheckpointStore *store, SflCoordinator *coordinator, gboolean fenced)
{
	SflLeadership *self = g_object_new(SFL_TYPE_LEADERSHIP, NULL);

	self->store = g_object_ref(store);
	self->coordinator = g_object_ref(coordinator);
	self->fenced = fenced;
	if (fenced) {
		sfl_checkpoint_store_set_fence(store, sfl_leadership_fence_cb, self, NULL);
		sfl_checkpoint_store_set_epoch(store, sfl_leadership_epoch_cb, self, NULL);
		sfl_coordinator_set_epoch_floor(coordinator, sfl_leadership_floor_cb,
						sfl_leadership_floor_finish_cb, self, NULL);
	}
	return self;
}

/**
 * sfl_leadership_set_clock:
 * @self: a lifecycle
 * @clock: the clock the epoch retries wait on (the system clock unless set)
 */
void
sfl_leadership_set_clock(SflLeadership *self, SflClock *clock)
{
	g_return_if_fail(SFL_IS_LEADERSHIP(self) && clock != NULL);
	sfl_clock_ref(clock);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	self->clock = clock;
}

void
sfl_leadership_set_hooks(SflLeadership *self, SflRunHook start_run, SflRunHook stop_run,
			 SflStatusHook status, gpointer user_data)
{
	g_return_if_fail(SFL_IS_LEADERSHIP(self));
	self->start_run = start_run;
	self->stop_run = stop_run;
	self->status = status;
	self->hook_data = user_data;
}

/**
 * sfl_leadership_start:
 * @self: a lifecycle
 *
 * Starts contesting; the process is "standby" until the first acquisition.
 */
void
sfl_leadership_start(SflLeadership *self)
{
	g_return_if_fail(SFL_IS_LEADERSHIP(self));
	g_return_if_fail(self->cancellable == NULL);
	self->cancellable = g_cancellable_new();
	self->readiness = SFL_READINESS_STANDBY;
	sfl_leadership_set_status(self, "standby");
	sfl_coordinator_run_async(self->coordinator, sfl_leadership_acquired_cb,
				  sfl_leadership_lost_cb, self, self->cancellable,
				  sfl_leadership_run_done_cb, g_object_ref(self));
}

/**
 * sfl_leadership_stop_async:
 * @self: a lifecycle
 * @callback: completion, after leadership (if held) was given up and the run stopped
 * @user_data: for @callback
 */
void
sfl_leadership_stop_async(SflLeadership *self, GAsyncReadyCallback callback, gpointer user_data)
{
	GTask *task = g_task_new(self, NULL, callback, user_data);

	g_task_set_source_tag(task, sfl_leadership_stop_async);
	if (self->cancellable == NULL || g_cancellable_is_cancelled(self->cancellable) ||
	    self->stop_task != NULL) {
		g_task_return_boolean(task, TRUE);
		g_object_unref(task);
		return;
	}
	self->stop_task = task;
	g_cancellable_cancel(self->cancellable);
}

gboolean
sfl_leadership_stop_finish(SflLeadership *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/**
 * sfl_leadership_handle_commit_error:
 * @self: a lifecycle
 * @error: what a checkpoint commit failed with
 *
 * A fenced commit means another replica leads: demote to standby in place (SFL-0013) and let
 * the coordinator contest again. Anything else is the caller's to handle.
 *
 * Returns: %TRUE when @error was a fence and the process demoted
 */
gboolean
sfl_leadership_handle_commit_error(SflLeadership *self, const GError *error)
{
	g_return_val_if_fail(SFL_IS_LEADERSHIP(self), FALSE);
	if (!g_error_matches(error, SFL_ERROR, SFL_ERROR_FENCED))
		return FALSE;
	g_warning("checkpoint commit fenced (%s); demoting to standby", error->message);
	sfl_coordinator_demote(self->coordinator);
	return TRUE;
}

SflReadiness
sfl_leadership_get_readiness(SflLeadership *self)
{
	g_return_val_if_fail(SFL_IS_LEADERSHIP(self), SFL_READINESS_STARTING);
	return self->readiness;
}

guint
sfl_leadership_get_terms(SflLeadership *self)
{
	g_return_val_if_fail(SFL_IS_LEADERSHIP(self), 0);
	return self->terms;
}

static void
sfl_leadership_dispose(GObject *object)
{
	SflLeadership *self = SFL_LEADERSHIP(object);

	sfl_clear_source(&self->epoch_retry);
	if (self->store != NULL) {
		sfl_checkpoint_store_set_fence(self->store, NULL, NULL, NULL);
		sfl_checkpoint_store_set_epoch(self->store, NULL, NULL, NULL);
	}
	if (self->coordinator != NULL)
		sfl_coordinator_set_epoch_floor(self->coordinator, NULL, NULL, NULL, NULL);
	g_clear_object(&self->store);
	g_clear_object(&self->coordinator);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_clear_object(&self->cancellable);
	G_OBJECT_CLASS(sfl_leadership_parent_class)->dispose(object);
}

static void
sfl_leadership_class_init(SflLeadershipClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	object_class->dispose = sfl_leadership_dispose;
}

static void
sfl_leadership_init(SflLeadership *self)
{
	self->readiness = SFL_READINESS_STARTING;
	self->clock = sfl_clock_get_system();
}
