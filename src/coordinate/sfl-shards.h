/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-coordinator.h"

G_BEGIN_DECLS

/*
 * SflShards: which work units this replica leads in a sharded group (coordinate.sharding,
 * run by app/sfl-sharding.c). Given the live members (sfl-membership.c) it computes the balanced
 * assignment (sfl-shard.c) and runs one unit lease, an SflCoordinator with the rules every
 * single lease follows, for each unit assigned to it. A unit is led only once its lease is
 * won, so a previous owner that has not let go (still draining, or stale for less than a ttl)
 * keeps it until then. A unit assigned away is handed back only after its work drained: the
 * @release hook asks for that, sfl_shards_released() says it is done, and only then is the
 * lease given up (make-before-break: the new owner's claim waits on the release, not on a
 * ttl). A unit assigned back while it is being released is contested again once the release
 * is complete.
 */
typedef struct _SflShards SflShards;

/* a coordinator for @unit's lease, not started (transfer full), or NULL after logging why */
typedef SflCoordinator *(*SflShardsLeaseFunc)(const gchar *unit, gpointer user_data);

/**
 * SflShardsHooks:
 * @acquired: this replica now leads @unit under @epoch: start its work
 * @release: @unit is assigned away: drain and commit its work, then sfl_shards_released()
 * @lost: the lease of @unit was lost (fenced, taken over): its work must stop at once
 */
typedef struct {
	void (*acquired)(SflShards *shards, const gchar *unit, guint64 epoch, gpointer user_data);
	void (*release)(SflShards *shards, const gchar *unit, gpointer user_data);
	void (*lost)(SflShards *shards, const gchar *unit, gpointer user_data);
} SflShardsHooks;

SflShards *sfl_shards_new(const gchar *holder, const gchar *const *units, SflShardsLeaseFunc lease,
			  gpointer lease_data, const SflShardsHooks *hooks,
			  gpointer user_data) G_GNUC_WARN_UNUSED_RESULT;
/* the live members changed (sorted or not; this replica among them when it is a member) */
void sfl_shards_set_members(SflShards *self, const GPtrArray *live);
/* @unit's work drained after @release: its lease is given up now */
void sfl_shards_released(SflShards *self, const gchar *unit);
/* the units this replica leads now, sorted (transfer full) */
GPtrArray *sfl_shards_dup_owned(SflShards *self) G_GNUC_WARN_UNUSED_RESULT;
/* the units assigned to this replica by the last member list, sorted (transfer full) */
GPtrArray *sfl_shards_dup_assigned(SflShards *self) G_GNUC_WARN_UNUSED_RESULT;
/* @unit is led here and its lease still says so (a unit pipeline's fence) */
gboolean sfl_shards_check_fence(SflShards *self, const gchar *unit);
/* @unit's commit was fenced: stop leading it now; its lease contests again (lost runs) */
void sfl_shards_demote(SflShards *self, const gchar *unit);
/* every lease given up (no hooks run); the object may be freed once they completed */
void sfl_shards_stop(SflShards *self);
gboolean sfl_shards_is_stopped(SflShards *self);
/* @func(shards, @user_data) runs once the last lease run ended after a stop */
void sfl_shards_set_stopped_func(SflShards *self, GFunc func, gpointer user_data);
void sfl_shards_free(SflShards *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflShards, sfl_shards_free)

G_END_DECLS
