/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>
#include <jansson.h>

#include "sfl-checkpoint-store.h"
#include "sfl-config.h"
#include "sfl-curl-loop.h"
#include "sfl-deadletter.h"
#include "sfl-egress.h"
#include "sfl-metrics.h"
#include "sfl-orgs.h"
#include "sfl-pipeline.h"
#include "sfl-sink.h"

G_BEGIN_DECLS

/*
 * SflSharding: a replica of a sharded group (coordinate.sharding, docs/deployment/scale-out.md).
 * In place of the single leadership, every replica is a member (a membership record renewed
 * on the shared backend) and runs one term per work unit it owns: the unit's own source on a
 * pipeline of its own, whose commits carry the unit lease's epoch and are fenced per unit. A
 * unit is taken only once its lease is won, its epoch is recorded before its source reads the
 * store, and a unit assigned away drains and commits before its lease is given up.
 */
typedef struct _SflSharding SflSharding;

typedef struct {
	const SflConfig *config;
	SflCheckpointStore *store;
	SflOrgs *orgs;
	SflSink *sink;
	SflMetrics *metrics;
	SflEgress *egress;	   /* (nullable) */
	SflDeadletter *deadletter; /* (nullable) */
	SflCurlLoop *loop;
	GMainContext *context;
	/* the daemon's: @error and @committed are passed on; a fenced commit demotes its unit */
	const SflPipelineCallbacks *callbacks;
	gpointer callback_data;
} SflShardingArgs;

/* the kind's member store and unit leases, this replica's holder and the units (no I/O yet) */
SflSharding *
sfl_sharding_new(const SflShardingArgs *args, GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_sharding_start(SflSharding *self);
/* leaves the group: the membership record goes, every unit drains within the shutdown grace
 * and is committed, then the unit leases are given up */
void sfl_sharding_stop_async(SflSharding *self, GAsyncReadyCallback callback, gpointer user_data);
gboolean sfl_sharding_stop_finish(SflSharding *self, GAsyncResult *result, GError **error);

/* a live member of its group as of its own last round (/readyz; owning no unit is fine) */
gboolean sfl_sharding_is_member(SflSharding *self);
guint sfl_sharding_get_n_owned(SflSharding *self);
/* the unit pipelines counted as one: every tenure since the start, running, draining or ended */
void sfl_sharding_get_counters(SflSharding *self, SflPipelineCounters *counters);
/* /statusz "sharding" */
json_t *sfl_sharding_status(SflSharding *self) G_GNUC_WARN_UNUSED_RESULT;
void sfl_sharding_free(SflSharding *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflSharding, sfl_sharding_free)

G_END_DECLS
