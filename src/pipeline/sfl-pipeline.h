/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-checkpoint-store.h"
#include "sfl-clock.h"
#include "sfl-config.h"
#include "sfl-deadletter.h"
#include "sfl-egress.h"
#include "sfl-entry.h"
#include "sfl-lane-handle.h"
#include "sfl-metrics.h"
#include "sfl-sink.h"

G_BEGIN_DECLS

/*
 * SflPipeline: the two lanes between the sources and the sink (docs/architecture.md,
 * "The seams"; docs/internals/pipeline.md).
 *
 * Contract
 *  - Two lanes, STREAMING (Pub/Sub) and BULK (everything else). Each has a FIFO bounded by
 *    entries (queue_maxsize) and bytes (queue_max_bytes, 0 = no byte bound), one consumer and
 *    at most one push in flight. A bulk drain never delays the streaming lane.
 *  - "Full": a lane is full while its FIFO holds >= queue_maxsize entries or >= queue_max_bytes
 *    bytes. offer() on a full lane returns FALSE and does not take the entry; the producer
 *    pauses until the writable callback fires for that lane (once the FIFO is under both
 *    budgets again). An entry is admitted while the lane is under budget, so the FIFO may
 *    overshoot by one entry and an entry larger than the whole budget never deadlocks.
 *    Nothing is ever dropped to make room. Checkpoint-only entries cost zero bytes but take a
 *    slot of the entry bound.
 *  - Batching: max_entries, max_bytes (line bytes) or flush_interval, whichever comes first.
 *  - Delivery: OK commits; RETRY retries the same batch forever (Retry-After capped at 60 s,
 *    else capped exponential backoff with full jitter, 1 s .. 60 s); REJECTED bisects down to
 *    single entries, which are dropped and counted by reason; PARTIAL disposes of what the
 *    peer stored, drops and counts (under the peer's reason) what it refused for good, and
 *    retries only the retryable rest, with the same backoff; FATAL stops the lane and calls
 *    the error callback. Every entry Loki refused for good reaches the rejected callback.
 *  - Commit: a key's checkpoint is committed only once every earlier entry of that key (FIFO
 *    order) was accepted or deliberately dropped; one commit_many per disposed batch or
 *    bisected part, last value per key. A FENCED commit calls the fenced callback and stops
 *    the lane; other commit errors are retried with backoff. Every failed commit is counted
 *    by store and reason (sf2loki_checkpoint_commit_failures); a streak of them is logged
 *    like a push streak (the first, one summary a minute, the recovery) and reported by
 *    sfl_pipeline_get_commit_failing_since().
 *  - Egress (optional, sfl_pipeline_set_egress()): each batch is admitted once by the shared
 *    governor before its first push (rate caps, daily byte budget); a batch the budget refuses
 *    in drop mode is dropped (reason "budget") and its checkpoints commit; after a push Loki
 *    accepted, today's count (SFL_EGRESS_BUDGET_KEY) is written in the same commit as the
 *    batch's checkpoints.
 *  - Shutdown: stop_async() stops accepting, drains for up to the grace period, then abandons
 *    the rest uncommitted; an abandoned entry's key never commits again in this pipeline
 *    (SFL-0002).
 *
 * Threading: main thread only (the thread-default main context at construction).
 */

typedef enum {
	SFL_LANE_STREAMING,
	SFL_LANE_BULK,
} SflLane;

#define SFL_LANE_COUNT 2

/**
 * SflPipelineCounters:
 *
 * A snapshot of the pipeline's counters, for metrics and tests.
 */
typedef struct {
	guint64 pushed_entries;
	guint64 pushed_bytes;
	guint64 dropped_bad_request;
	guint64 dropped_oversized_413;
	guint64 dropped_other;
	guint64 dropped_budget; /* entries of batches the daily budget refused (drop mode) */
	guint64 retries;
	guint64 commits;
	guint64 commit_retries;
	guint64 abandoned_entries;
	guint queue_depth[SFL_LANE_COUNT];
	guint64 queue_bytes[SFL_LANE_COUNT];
	gint64 last_success_wall_usec; /* 0: no push accepted yet */
} SflPipelineCounters;

#define SFL_TYPE_PIPELINE (sfl_pipeline_get_type())
G_DECLARE_FINAL_TYPE(SflPipeline, sfl_pipeline, SFL, PIPELINE, GObject)

/* one lane as a source sees it (sfl-lane-handle.h); it wakes its writers itself */
#define SFL_TYPE_PIPELINE_LANE (sfl_pipeline_lane_get_type())
G_DECLARE_FINAL_TYPE(SflPipelineLane, sfl_pipeline_lane, SFL, PIPELINE_LANE, GObject)

/* the lane is under both budgets again: resume producing */
typedef void (*SflPipelineWritableFunc)(SflPipeline *pipeline, SflLane lane, gpointer user_data);
/* the lane stopped: a FATAL sink result (error callback) or a fenced commit (fenced callback) */
typedef void (*SflPipelineErrorFunc)(SflPipeline *pipeline, SflLane lane, const GError *error,
				     gpointer user_data);
/* checkpoints were written: @doc holds every key of the commit with its new value */
typedef void (*SflPipelineCommittedFunc)(SflPipeline *pipeline, const SflStateDoc *doc,
					 gpointer user_data);
/*
 * Loki refused @entry for good under @reason (its reason label, e.g. "line_too_long"); it is
 * counted and its checkpoint moves past it after this returns. The seam for a dead-letter
 * store: take a reference to keep the entry.
 */
typedef void (*SflPipelineRejectedFunc)(SflPipeline *pipeline, SflLane lane, SflEntry *entry,
					const gchar *reason, gpointer user_data);

/**
 * SflPipelineCallbacks:
 * @writable: (nullable): a lane drained below its budgets after refusing an offer
 * @error: (nullable): the sink failed fatally; the lane stopped
 * @fenced: (nullable): a commit was fenced; the lane stopped, demote to standby
 * @committed: (nullable): a commit landed (commit-derived gauges, /statusz)
 * @rejected: (nullable): Loki named an entry it will never accept (partial rejections)
 */
typedef struct {
	SflPipelineWritableFunc writable;
	SflPipelineErrorFunc error;
	SflPipelineErrorFunc fenced;
	SflPipelineCommittedFunc committed;
	SflPipelineRejectedFunc rejected;
} SflPipelineCallbacks;

const gchar *sfl_lane_to_string(SflLane lane);

SflPipeline *sfl_pipeline_new(const SflLokiBatchConfig *config, SflSink *sink,
			      SflCheckpointStore *store, SflClock *clock) G_GNUC_WARN_UNUSED_RESULT;
void sfl_pipeline_set_callbacks(SflPipeline *self, const SflPipelineCallbacks *callbacks,
				gpointer user_data);
/* records sf2loki_loki_push, sf2loki_loki_entries_dropped,
 * sf2loki_last_push_success_timestamp_seconds and sf2loki_checkpoint_commit_failures in
 * @metrics from now on */
void sfl_pipeline_set_metrics(SflPipeline *self, SflMetrics *metrics);
/* keeps what never reaches Loki in @deadletter (a reference is taken) from now on */
void sfl_pipeline_set_deadletter(SflPipeline *self, SflDeadletter *deadletter);
/* admits every batch through @egress from now on; call before the first offer */
void sfl_pipeline_set_egress(SflPipeline *self, SflEgress *egress);
/* a lane's next push waits until its last commit landed (backfill); call before the first
 * offer */
void sfl_pipeline_set_serial_commits(SflPipeline *self, gboolean serial);
/*
 * A sharded work unit's pipeline (coordinate.sharding): every commit goes through
 * sfl_checkpoint_store_commit_unit_async() under @epoch, and @fence (the unit lease's check)
 * replaces the store's fence before each push and at the stop. Call before the first offer.
 */
typedef gboolean (*SflPipelineFenceFunc)(gpointer user_data);
void sfl_pipeline_set_unit(SflPipeline *self, const gchar *unit, guint64 epoch,
			   SflPipelineFenceFunc fence, gpointer fence_data, GDestroyNotify destroy);
gboolean sfl_pipeline_offer(SflPipeline *self, SflLane lane, SflEntry *entry);
gboolean sfl_pipeline_is_lane_stopped(SflPipeline *self, SflLane lane);
SflLaneHandle *sfl_pipeline_get_lane(SflPipeline *self, SflLane lane) G_GNUC_WARN_UNUSED_RESULT;
void sfl_pipeline_get_counters(SflPipeline *self, SflPipelineCounters *counters);
/* monotonic time since which pushes have failed continuously (0: none failing) */
gint64 sfl_pipeline_get_failing_since(SflPipeline *self);
/* the store's metrics label (file, s3, gcs, memory) and, for logs, its path or URL */
void sfl_pipeline_set_store_label(SflPipeline *self, const gchar *kind, const gchar *location);
/* monotonic time since which checkpoint commits have failed continuously (0: none failing) */
gint64 sfl_pipeline_get_commit_failing_since(SflPipeline *self);

void sfl_pipeline_stop_async(SflPipeline *self, gint64 grace_usec, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data);
gboolean sfl_pipeline_stop_finish(SflPipeline *self, GAsyncResult *result, GError **error);

G_END_DECLS
