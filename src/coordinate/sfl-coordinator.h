/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-clock.h"

G_BEGIN_DECLS

/*
 * SflCoordinator: decides which replica runs the pipeline (docs/architecture.md, "The seams").
 *
 * Contract
 *  - sfl_coordinator_run_async() contests leadership until its cancellable fires. The acquired
 *    and lost callbacks strictly alternate, starting with acquired; the base class enforces it.
 *    When the run is cancelled while leading, lost is called before the run completes (and the
 *    implementation gives the lease up where it can).
 *  - check_fence() is FALSE from the moment this replica can no longer be sure it leads; the
 *    checkpoint store evaluates it before every write.
 *  - epoch() is the fence token: 0 before the first win, bumped on every winning acquisition,
 *    never lowered, preserved across renewals.
 *  - holder() names this replica (for logs and the state CLI).
 *  - demote() is called when the store rejected a commit as fenced: the replica stops leading
 *    at once (lost is called) and contests again normally. It never ends the process.
 *  - set_epoch_floor() installs an asynchronous source of the lowest acceptable next epoch
 *    (the store's persisted epoch), evaluated at every acquisition.
 *
 * Threading: main thread only; implementations run blocking I/O in worker threads.
 */

#define SFL_TYPE_COORDINATOR (sfl_coordinator_get_type())
G_DECLARE_DERIVABLE_TYPE(SflCoordinator, sfl_coordinator, SFL, COORDINATOR, GObject)

typedef void (*SflLeadershipFunc)(SflCoordinator *self, gpointer user_data);

/*
 * The epoch floor as an asynchronous pair, so the store's persisted_epoch async/finish plug
 * in directly: the start function begins the read, the finish function yields the floor
 * (*present FALSE when nothing is recorded).
 */
typedef void (*SflEpochFloorFunc)(gpointer user_data, GCancellable *cancellable,
				  GAsyncReadyCallback callback, gpointer callback_data);
typedef gboolean (*SflEpochFloorFinishFunc)(gpointer user_data, GAsyncResult *result,
					    guint64 *floor, gboolean *present, GError **error);

struct _SflCoordinatorClass {
	GObjectClass parent_class;

	/* begin contesting; report with sfl_coordinator_set_leader() */
	void (*start)(SflCoordinator *self);
	/* stop contesting; when leading, give up (best effort) and report not leading */
	void (*stop)(SflCoordinator *self);
	gboolean (*check_fence)(SflCoordinator *self);
	guint64 (*get_epoch)(SflCoordinator *self);
	const gchar *(*get_holder)(SflCoordinator *self);
	/* stop leading now and contest again; the base class reports lost */
	void (*demote)(SflCoordinator *self);
	/* contest by observing only (never claim), or claim again; FALSE: it cannot watch */
	gboolean (*set_watching)(SflCoordinator *self, gboolean watching);

	gpointer padding[7];
};

void
sfl_coordinator_run_async(SflCoordinator *self, SflLeadershipFunc acquired, SflLeadershipFunc lost,
			  gpointer user_data, GCancellable *cancellable,
			  GAsyncReadyCallback callback, gpointer callback_data);
gboolean sfl_coordinator_run_finish(SflCoordinator *self, GAsyncResult *result, GError **error);

gboolean sfl_coordinator_check_fence(SflCoordinator *self);
guint64 sfl_coordinator_get_epoch(SflCoordinator *self);
const gchar *sfl_coordinator_get_holder(SflCoordinator *self);
gboolean sfl_coordinator_is_leader(SflCoordinator *self);
gboolean sfl_coordinator_set_watching(SflCoordinator *self, gboolean watching);
void sfl_coordinator_demote(SflCoordinator *self);

void sfl_coordinator_set_epoch_floor(SflCoordinator *self, SflEpochFloorFunc func,
				     SflEpochFloorFinishFunc finish, gpointer user_data,
				     GDestroyNotify destroy);

/* for implementations */
void sfl_coordinator_set_leader(SflCoordinator *self, gboolean leader);
/*
 * Reads the floor through the installed functions; with none installed, or when the read
 * fails, it completes with 0 (a failing floor is logged by the caller and treated as 0).
 */
void sfl_coordinator_epoch_floor_async(SflCoordinator *self, GCancellable *cancellable,
				       GAsyncReadyCallback callback, gpointer user_data);
gboolean sfl_coordinator_epoch_floor_finish(SflCoordinator *self, GAsyncResult *result,
					    guint64 *floor, GError **error);

G_END_DECLS
