/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-checkpoint-store.h"
#include "sfl-clock.h"
#include "sfl-coordinator.h"

G_BEGIN_DECLS

/*
 * SflLeadership: the leadership lifecycle of one process (docs/architecture.md, "The daemon and its
 * terms").
 *
 * It wires the coordinator to the checkpoint store (fence check and epoch source on the store,
 * the store's persisted epoch as the coordinator's epoch floor), and turns leadership changes
 * into the process's behaviour:
 *  - acquired → readiness "ready", the run hook starts a pipeline run, STATUS=leader;
 *  - lost → the stop hook ends the run, the store drops its caches, readiness "standby",
 *    STATUS=standby;
 *  - a commit rejected as fenced → demote to standby in place; the process never exits for it
 *    and the coordinator contests again.
 */

#define SFL_TYPE_LEADERSHIP (sfl_leadership_get_type())
G_DECLARE_FINAL_TYPE(SflLeadership, sfl_leadership, SFL, LEADERSHIP, GObject)

typedef enum {
	SFL_READINESS_STARTING,
	SFL_READINESS_READY,
	SFL_READINESS_STANDBY,
} SflReadiness;

/* start or stop the pipeline run of one leadership term */
typedef void (*SflRunHook)(SflLeadership *self, gpointer user_data);
/* a human status line changed (for sd_notify STATUS=, /statusz) */
typedef void (*SflStatusHook)(SflLeadership *self, const gchar *status, gpointer user_data);

SflLeadership *
sfl_leadership_new(SflCheckpointStore *store, SflCoordinator *coordinator, gboolean fenced);
void sfl_leadership_set_clock(SflLeadership *self, SflClock *clock);
void sfl_leadership_set_hooks(SflLeadership *self, SflRunHook start_run, SflRunHook stop_run,
			      SflStatusHook status, gpointer user_data);
void sfl_leadership_start(SflLeadership *self);
void
sfl_leadership_stop_async(SflLeadership *self, GAsyncReadyCallback callback, gpointer user_data);
gboolean sfl_leadership_stop_finish(SflLeadership *self, GAsyncResult *result, GError **error);

gboolean sfl_leadership_handle_commit_error(SflLeadership *self, const GError *error);

SflReadiness sfl_leadership_get_readiness(SflLeadership *self);
const gchar *sfl_readiness_to_string(SflReadiness readiness);
guint sfl_leadership_get_terms(SflLeadership *self);

G_END_DECLS
