/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflShard"

#include "config.h"

#include "sfl-sharding.h"

#include <string.h>

#include "sfl-app.h"
#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-kinds.h"
#include "sfl-membership.h"
#include "sfl-shards.h"
#include "sfl-term.h"

/* one work unit of the group, as this replica sees it */
typedef struct {
	SflSharding *sharding; /* (unowned): records live as long as it does */
	gchar *name;
	SflTerm *term;	    /* the running term while this replica leads the unit */
	guint64 epoch;	    /* of the current or last tenure here */
	guint generation;   /* bumped by every acquisition, loss and release */
	gboolean assigned;  /* by the last member list */
	gint64 assigned_at; /* monotonic: when the last member list assigned it here */
	gint64 acquired_at; /* monotonic: when its current tenure began (0: none) */
	gboolean releasing; /* handed over: its drain runs, then the lease goes */
	guint epoch_attempts;
	GSource *epoch_retry;
} SflShardUnit;

struct _SflSharding {
	gint ref;
	const SflConfig *config;
	SflCheckpointStore *store;
	SflOrgs *orgs;
	SflSink *sink;
	SflMetrics *metrics;
	SflEgress *egress;
	SflDeadletter *deadletter;
	SflCurlLoop *loop;
	GMainContext *context;
	SflClock *clock;
	SflPipelineCallbacks callbacks; /* the daemon's */
	gpointer callback_data;
	const SflCoordinatorKind *kind;
	gchar *holder;
	GPtrArray *units; /* SflShardUnit, in the order sfl_orgs_dup_units() gives */
	SflMembership *membership;
	SflShards *shards;
	GPtrArray *stopping_terms;   /* SflTerm: ended tenures still draining */
	SflPipelineCounters retired; /* what the tenures that ended here did, summed */
	gboolean stopping;
	GTask *stop_task;
	SflSeries *owned_gauge;
	SflSeries *acquisitions;
	SflSeries *handoff;
	SflSeries *members_gauge;
};

static SflSharding *
sfl_sharding_ref(SflSharding *self)
{
	g_atomic_int_inc(&self->ref);
	return self;
}

static void
sfl_shard_unit_free(gpointer data)
{
	SflShardUnit *unit = data;

	sfl_clear_source(&unit->epoch_retry);
	g_clear_pointer(&unit->term, sfl_term_free);
	g_free(unit->name);
	g_free(unit);
}

static void
sfl_sharding_unref(SflSharding *self)
{
	if (!g_atomic_int_dec_and_test(&self->ref))
		return;
	g_clear_pointer(&self->shards, sfl_shards_free);
	g_clear_pointer(&self->membership, sfl_membership_free);
	g_clear_pointer(&self->stopping_terms, g_ptr_array_unref);
	g_clear_pointer(&self->units, g_ptr_array_unref);
	g_clear_object(&self->store);
	g_clear_object(&self->sink);
	g_clear_object(&self->egress);
	g_clear_pointer(&self->deadletter, sfl_deadletter_unref);
	g_clear_pointer(&self->metrics, sfl_metrics_unref);
	g_clear_object(&self->loop);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_clear_pointer(&self->context, g_main_context_unref);
	g_free(self->holder);
	g_free(self);
}

static SflShardUnit *
sfl_sharding_find(SflSharding *self, const gchar *name)
{
	for (guint i = 0; i < self->units->len; i++) {
		SflShardUnit *unit = g_ptr_array_index(self->units, i);

		if (g_str_equal(unit->name, name))
			return unit;
	}
	return NULL;
}

static void
sfl_sharding_update_gauges(SflSharding *self)
{
	sfl_series_set(self->owned_gauge, sfl_sharding_get_n_owned(self));
	if (self->membership != NULL)
		sfl_series_set(self->members_gauge, sfl_membership_get_live(self->membership)->len);
}

/* --- a unit's pipeline callbacks -------------------------------------------------------- */

static SflShardUnit *
sfl_sharding_unit_of(SflSharding *self, SflPipeline *pipeline)
{
	for (guint i = 0; i < self->units->len; i++) {
		SflShardUnit *unit = g_ptr_array_index(self->units, i);

		if (unit->term != NULL && sfl_term_get_pipeline(unit->term) == pipeline)
			return unit;
	}
	return NULL;
}

static void
sfl_sharding_fenced_cb(SflPipeline *pipeline, SflLane lane, const GError *error, gpointer user_data)
{
	SflSharding *self = user_data;
	SflShardUnit *unit = sfl_sharding_unit_of(self, pipeline);

	if (unit == NULL)
		return;
	/* a newer owner holds this unit: stop leading it, and it alone */
	g_warning("unit %s: %s; handing it back", unit->name, error->message);
	sfl_shards_demote(self->shards, unit->name);
}

static void
sfl_sharding_error_cb(SflPipeline *pipeline, SflLane lane, const GError *error, gpointer user_data)
{
	SflSharding *self = user_data;

	if (self->callbacks.error != NULL)
		self->callbacks.error(pipeline, lane, error, self->callback_data);
}

static void
sfl_sharding_committed_cb(SflPipeline *pipeline, const SflStateDoc *doc, gpointer user_data)
{
	SflSharding *self = user_data;

	if (self->callbacks.committed != NULL)
		self->callbacks.committed(pipeline, doc, self->callback_data);
}

/* the unit pipeline's fence, which may outlive the group at teardown: it holds a reference */
typedef struct {
	SflSharding *sharding; /* owned */
	gchar *unit;
} SflUnitFence;

static void
sfl_unit_fence_free(gpointer data)
{
	SflUnitFence *fence = data;

	sfl_sharding_unref(fence->sharding);
	g_free(fence->unit);
	g_free(fence);
}

/* the unit's lease still held (a unit being handed over included) */
static gboolean
sfl_sharding_unit_fence_cb(gpointer user_data)
{
	SflUnitFence *fence = user_data;
	SflSharding *self = fence->sharding;

	return self->shards != NULL && sfl_shards_check_fence(self->shards, fence->unit);
}

/* --- tenures ---------------------------------------------------------------------------- */

static void
sfl_sharding_maybe_stopped(SflSharding *self)
{
	g_autoptr(GTask) task = NULL;

	if (!self->stopping || self->stop_task == NULL || self->stopping_terms->len > 0)
		return;
	for (guint i = 0; i < self->units->len; i++)
		if (((SflShardUnit *)g_ptr_array_index(self->units, i))->term != NULL)
			return;
	if (!sfl_shards_is_stopped(self->shards))
		return;
	task = g_steal_pointer(&self->stop_task);
	g_message("sharding: left the group; every unit lease given up");
	g_task_return_boolean(task, TRUE);
}

/* an ended tenure still draining; freed with the group, whose teardown drops its term */
typedef struct {
	SflSharding *sharding; /* (unowned): the group's stopping_terms holds this */
	SflTerm *term;
	gchar *unit;
	guint generation;
	gboolean release; /* the drain of a handover: the lease goes when it ends */
} SflTermEnd;

static void
sfl_term_end_free(gpointer data)
{
	SflTermEnd *end = data;

	/* a drain still running is orphaned: it frees the term and never calls back */
	sfl_term_free(end->term);
	g_free(end->unit);
	g_free(end);
}

/* @to += @c: the totals of several unit pipelines, as one pipeline would count them */
static void
sfl_sharding_counters_add(SflPipelineCounters *to, const SflPipelineCounters *c)
{
	to->pushed_entries += c->pushed_entries;
	to->pushed_bytes += c->pushed_bytes;
	to->dropped_bad_request += c->dropped_bad_request;
	to->dropped_oversized_413 += c->dropped_oversized_413;
	to->dropped_other += c->dropped_other;
	to->dropped_budget += c->dropped_budget;
	to->retries += c->retries;
	to->commits += c->commits;
	to->commit_retries += c->commit_retries;
	to->abandoned_entries += c->abandoned_entries;
	for (guint l = 0; l < SFL_LANE_COUNT; l++) {
		to->queue_depth[l] += c->queue_depth[l];
		to->queue_bytes[l] += c->queue_bytes[l];
	}
	to->last_success_wall_usec = MAX(to->last_success_wall_usec, c->last_success_wall_usec);
}

static void
sfl_sharding_term_stopped(SflTerm *term, const SflPipelineCounters *counters, gpointer user_data)
{
	SflTermEnd *end = user_data;
	SflSharding *self = end->sharding;
	SflShardUnit *unit = sfl_sharding_find(self, end->unit);

	g_message("unit %s: pipeline run stopped: %" G_GUINT64_FORMAT
		  " entries pushed, %" G_GUINT64_FORMAT " commits, %" G_GUINT64_FORMAT
		  " abandoned uncommitted",
		  end->unit, counters->pushed_entries, counters->commits,
		  counters->abandoned_entries);
	{
		/* a stopped pipeline holds nothing queued any more */
		SflPipelineCounters done = *counters;

		memset(done.queue_depth, 0, sizeof(done.queue_depth));
		memset(done.queue_bytes, 0, sizeof(done.queue_bytes));
		sfl_sharding_counters_add(&self->retired, &done);
	}
	if (end->release && unit != NULL && unit->generation == end->generation &&
	    self->shards != NULL) {
		unit->releasing = FALSE;
		sfl_shards_released(self->shards, end->unit);
	}
	/* frees the term, whose drain just ended, and @end */
	g_ptr_array_remove_fast(self->stopping_terms, end);
	if (self->stopping && self->shards != NULL && self->stopping_terms->len == 0)
		sfl_shards_stop(self->shards);
	sfl_sharding_maybe_stopped(self);
}

/* ends @unit's tenure here: what it accepted drains within @grace_usec and is committed */
static void
sfl_sharding_end_term(SflSharding *self, SflShardUnit *unit, gint64 grace_usec, gboolean release)
{
	SflTerm *term = g_steal_pointer(&unit->term);
	SflTermEnd *end = NULL;

	if (term == NULL)
		return;
	end = g_new0(SflTermEnd, 1);
	end->sharding = self;
	end->term = term;
	end->unit = g_strdup(unit->name);
	end->generation = unit->generation;
	end->release = release;
	g_ptr_array_add(self->stopping_terms, end);
	sfl_term_stop(term, grace_usec, sfl_sharding_term_stopped, end);
	sfl_sharding_update_gauges(self);
}

static void
sfl_sharding_begin_term(SflSharding *self, SflShardUnit *unit)
{
	const SflPipelineCallbacks callbacks = {
		.error = sfl_sharding_error_cb,
		.fenced = sfl_sharding_fenced_cb,
		.committed = sfl_sharding_committed_cb,
	};
	SflTermArgs args = {
		.config = self->config,
		.sink = self->sink,
		.store = self->store,
		.orgs = self->orgs,
		.metrics = self->metrics,
		.egress = self->egress,
		.deadletter = self->deadletter,
		.clock = self->clock,
		.context = self->context,
		.callbacks = &callbacks,
		.callback_data = self,
		.unit = unit->name,
		.unit_epoch = unit->epoch,
		.unit_fence = sfl_sharding_unit_fence_cb,
		.unit_fence_destroy = sfl_unit_fence_free,
	};
	gint64 now = sfl_clock_monotonic_usec(self->clock);
	SflUnitFence *fence = g_new0(SflUnitFence, 1);

	fence->sharding = sfl_sharding_ref(self);
	fence->unit = g_strdup(unit->name);
	args.unit_fence_data = fence;
	unit->term = sfl_term_start(&args);
	unit->acquired_at = now;
	sfl_series_inc(self->acquisitions);
	if (unit->assigned_at > 0)
		sfl_series_observe(self->handoff,
				   (gdouble)(now - unit->assigned_at) / G_USEC_PER_SEC);
	sfl_sharding_update_gauges(self);
}

static void sfl_sharding_record_epoch(SflSharding *self, SflShardUnit *unit);

static void
sfl_sharding_epoch_retry_cb(gpointer user_data)
{
	SflShardUnit *unit = user_data;

	sfl_sharding_record_epoch(unit->sharding, unit);
}

typedef struct {
	SflSharding *sharding; /* owned */
	gchar *unit;
	guint generation;
} SflEpochRecord;

static void
sfl_sharding_epoch_recorded_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflEpochRecord *rec = user_data;
	SflSharding *self = rec->sharding;
	SflShardUnit *unit = sfl_sharding_find(self, rec->unit);
	g_autoptr(GError) error = NULL;
	gboolean ok = sfl_checkpoint_store_commit_many_finish(SFL_CHECKPOINT_STORE(source), result,
							      &error);

	/* only this tenure's: a loss or release since then ended it */
	if (unit == NULL || unit->generation != rec->generation || self->stopping ||
	    self->shards == NULL) {
		/* nothing */
	} else if (ok) {
		sfl_sharding_begin_term(self, unit);
	} else if (g_error_matches(error, SFL_ERROR, SFL_ERROR_FENCED)) {
		g_warning("unit %s: %s; handing it back", unit->name, error->message);
		sfl_shards_demote(self->shards, unit->name);
	} else {
		/* the unit's source waits: it must read what every earlier owner finished writing
		 */
		guint delay_ms = MIN(250u << MIN(unit->epoch_attempts, 3u), 2000u);

		if (unit->epoch_attempts++ == 0)
			g_warning("unit %s: cannot record its epoch in the checkpoint store yet "
				  "(%s); retrying before its source starts",
				  unit->name, error->message);
		sfl_clock_once(self->clock, &unit->epoch_retry, (gint64)delay_ms * 1000,
			       "sf2loki unit epoch retry", sfl_sharding_epoch_retry_cb, unit,
			       self->context);
	}
	g_free(rec->unit);
	g_free(rec);
	sfl_sharding_unref(self);
}

/*
 * As for the single lease (sfl-leadership.c): the unit's epoch is written as soon as it is won,
 * so a previous owner's late commit is refused from now on, and the source starts only once it
 * landed, reading everything that owner committed.
 */
static void
sfl_sharding_record_epoch(SflSharding *self, SflShardUnit *unit)
{
	g_autoptr(SflStateDoc) none = sfl_state_doc_new();
	SflEpochRecord *rec = g_new0(SflEpochRecord, 1);

	rec->sharding = sfl_sharding_ref(self);
	rec->unit = g_strdup(unit->name);
	rec->generation = unit->generation;
	sfl_checkpoint_store_commit_unit_async(self->store, unit->name, unit->epoch, none, NULL,
					       sfl_sharding_epoch_recorded_cb, rec);
}

/* --- the shards' hooks ------------------------------------------------------------------ */

static void
sfl_sharding_acquired(SflShards *shards, const gchar *name, guint64 epoch, gpointer user_data)
{
	SflSharding *self = user_data;
	SflShardUnit *unit = sfl_sharding_find(self, name);

	if (unit == NULL)
		return;
	unit->generation++;
	unit->epoch = epoch;
	unit->epoch_attempts = 0;
	unit->releasing = FALSE;
	sfl_clear_source(&unit->epoch_retry);
	g_message("unit %s: acquired (epoch %" G_GUINT64_FORMAT ")", name, epoch);
	/* the previous owner's last commits are on storage: read them, not a cache */
	sfl_checkpoint_store_reset(self->store);
	sfl_sharding_record_epoch(self, unit);
}

static void
sfl_sharding_release(SflShards *shards, const gchar *name, gpointer user_data)
{
	SflSharding *self = user_data;
	SflShardUnit *unit = sfl_sharding_find(self, name);

	if (unit == NULL)
		return;
	unit->generation++;
	sfl_clear_source(&unit->epoch_retry);
	if (unit->term == NULL) {
		/* won but not started yet: nothing to drain */
		sfl_shards_released(shards, name);
		return;
	}
	unit->releasing = TRUE;
	g_message("unit %s: assigned to another member; draining before the handover", name);
	sfl_sharding_end_term(self, unit, self->config->data.service.shutdown_grace, TRUE);
}

static void
sfl_sharding_lost(SflShards *shards, const gchar *name, gpointer user_data)
{
	SflSharding *self = user_data;
	SflShardUnit *unit = sfl_sharding_find(self, name);

	if (unit == NULL)
		return;
	unit->generation++;
	unit->releasing = FALSE;
	sfl_clear_source(&unit->epoch_retry);
	/* the epoch makes each loss its own line: the log folds repeats of one text */
	g_warning("unit %s: lease lost (epoch %" G_GUINT64_FORMAT "); its pipeline stops", name,
		  unit->epoch);
	/* nothing of this tenure can be committed any more: no drain */
	sfl_sharding_end_term(self, unit, 0, FALSE);
	/* the next owner must read what the winner wrote */
	sfl_checkpoint_store_reset(self->store);
}

static void
sfl_sharding_members_changed(SflMembership *membership, const GPtrArray *live, gpointer user_data)
{
	SflSharding *self = user_data;
	g_autoptr(GPtrArray) assigned = NULL;
	gint64 now = sfl_clock_monotonic_usec(self->clock);
	g_autoptr(GString) names = g_string_new(NULL);

	for (guint i = 0; i < live->len; i++)
		g_string_append_printf(names, "%s%s", i > 0 ? ", " : "",
				       (const gchar *)live->pdata[i]);
	g_message("sharding: %u live member(s): %s", live->len, names->str);
	if (self->stopping)
		return;
	sfl_shards_set_members(self->shards, live);
	assigned = sfl_shards_dup_assigned(self->shards);
	for (guint i = 0; i < self->units->len; i++) {
		SflShardUnit *unit = g_ptr_array_index(self->units, i);
		gboolean now_assigned =
			g_ptr_array_find_with_equal_func(assigned, unit->name, g_str_equal, NULL);

		if (now_assigned && !unit->assigned)
			unit->assigned_at = now;
		unit->assigned = now_assigned;
	}
	g_message("sharding: %u of %u unit(s) assigned here", assigned->len, self->units->len);
	sfl_sharding_update_gauges(self);
}

/* --- unit leases ------------------------------------------------------------------------ */

typedef struct {
	SflCheckpointStore *store; /* owned */
	gchar *unit;
} SflUnitFloor;

static void
sfl_unit_floor_free(gpointer data)
{
	SflUnitFloor *floor = data;

	g_object_unref(floor->store);
	g_free(floor->unit);
	g_free(floor);
}

static void
sfl_unit_floor_cb(gpointer user_data, GCancellable *cancellable, GAsyncReadyCallback callback,
		  gpointer callback_data)
{
	SflUnitFloor *floor = user_data;

	sfl_checkpoint_store_persisted_unit_epoch_async(floor->store, floor->unit, cancellable,
							callback, callback_data);
}

static gboolean
sfl_unit_floor_finish_cb(gpointer user_data, GAsyncResult *result, guint64 *epoch,
			 gboolean *present, GError **error)
{
	SflUnitFloor *floor = user_data;

	return sfl_checkpoint_store_persisted_epoch_finish(floor->store, result, epoch, present,
							   error);
}

static SflCoordinator *
sfl_sharding_unit_lease(const gchar *name, gpointer user_data)
{
	SflSharding *self = user_data;
	g_autoptr(GError) error = NULL;
	SflCoordinator *lease =
		self->kind->build_unit_lease(self->config, self->loop, self->holder, name, &error);
	SflUnitFloor *floor = NULL;

	if (lease == NULL) {
		g_warning("unit %s: cannot build its lease: %s", name, error->message);
		return NULL;
	}
	/* a unit's epochs never repeat, even when its lease was deleted: the store's is the floor
	 */
	floor = g_new0(SflUnitFloor, 1);
	floor->store = g_object_ref(self->store);
	floor->unit = g_strdup(name);
	sfl_coordinator_set_epoch_floor(lease, sfl_unit_floor_cb, sfl_unit_floor_finish_cb, floor,
					sfl_unit_floor_free);
	return lease;
}

/* --- the object ------------------------------------------------------------------------- */

static const gdouble sfl_sharding_handoff_bounds[] = { 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300 };

/**
 * sfl_sharding_new:
 * @args: what the group borrows from the daemon
 * @error: return location for an error
 *
 * Returns: (transfer full): the sharded runtime, not started, or %NULL when the coordinator
 * kind cannot shard or its member store cannot be set up
 */
SflSharding *
sfl_sharding_new(const SflShardingArgs *args, GError **error)
{
	const SflCoordinatorKind *kind = sfl_coordinator_kind_for_config(args->config, error);
	const SflShardingConfig *sc = &args->config->data.coordinate.sharding;
	g_autoptr(SflCoordinator) single = NULL;
	g_autoptr(SflMemberStore) members = NULL;
	g_autoptr(GPtrArray) names = NULL;
	SflSharding *self = NULL;

	if (kind == NULL)
		return NULL;
	if (kind->build_members == NULL || kind->build_unit_lease == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "coordinate.sharding.enabled: coordinate.type %s cannot shard in this "
			    "build; set coordinate.sharding.enabled to false",
			    kind->name);
		return NULL;
	}
	/* the identity the single lease would use: the same holder names the member */
	single = sfl_app_build_coordinator(args->config, args->loop, error);
	if (single == NULL)
		return NULL;
	members = kind->build_members(args->config, args->loop, error);
	if (members == NULL)
		return NULL;

	self = g_new0(SflSharding, 1);
	self->ref = 1;
	self->config = args->config;
	self->store = g_object_ref(args->store);
	self->orgs = args->orgs;
	self->sink = g_object_ref(args->sink);
	self->metrics = sfl_metrics_ref(args->metrics);
	self->egress = args->egress != NULL ? g_object_ref(args->egress) : NULL;
	self->deadletter = args->deadletter != NULL ? sfl_deadletter_ref(args->deadletter) : NULL;
	self->loop = args->loop != NULL ? g_object_ref(args->loop) : NULL;
	self->context = g_main_context_ref(args->context);
	self->clock = sfl_clock_get_system();
	if (args->callbacks != NULL)
		self->callbacks = *args->callbacks;
	self->callback_data = args->callback_data;
	self->kind = kind;
	self->holder = g_strdup(sfl_coordinator_get_holder(single));
	self->stopping_terms = g_ptr_array_new_with_free_func(sfl_term_end_free);
	self->units = g_ptr_array_new_with_free_func(sfl_shard_unit_free);
	names = sfl_orgs_dup_units(args->orgs);
	for (guint i = 0; i < names->len; i++) {
		SflShardUnit *unit = g_new0(SflShardUnit, 1);

		unit->sharding = self;
		unit->name = g_strdup(names->pdata[i]);
		g_ptr_array_add(self->units, unit);
	}
	g_ptr_array_add(names, NULL);
	{
		const SflShardsHooks hooks = {
			.acquired = sfl_sharding_acquired,
			.release = sfl_sharding_release,
			.lost = sfl_sharding_lost,
		};
		self->shards = sfl_shards_new(self->holder, (const gchar *const *)names->pdata,
					      sfl_sharding_unit_lease, self, &hooks, self);
	}
	/* renewed three times per ttl, as the leases are by default */
	self->membership = sfl_membership_new(members, self->holder, self->clock, sc->members_ttl,
					      MAX(sc->members_ttl / 3, 1000), self->context);
	sfl_membership_set_changed_func(self->membership, sfl_sharding_members_changed, self);

	self->owned_gauge = sfl_metric_family_series(
		sfl_metrics_gauge(self->metrics, "sf2loki_units_owned",
				  "Work units this replica leads (coordinate.sharding).", NULL),
		NULL);
	/* the same on every replica of a group: alerts compare the sum of units_owned with it */
	sfl_series_set(sfl_metric_family_series(
			       sfl_metrics_gauge(
				       self->metrics, "sf2loki_units_total",
				       "Work units of the sharded group (one lease each).", NULL),
			       NULL),
		       self->units->len);
	self->members_gauge = sfl_metric_family_series(
		sfl_metrics_gauge(self->metrics, "sf2loki_shard_members",
				  "Live members of the sharded group, as this replica sees them.",
				  NULL),
		NULL);
	self->acquisitions = sfl_metric_family_series(
		sfl_metrics_counter(self->metrics, "sf2loki_unit_acquisitions",
				    "Work-unit leases won by this replica.", NULL),
		NULL);
	self->handoff = sfl_metric_family_series(
		sfl_metrics_histogram(
			self->metrics, "sf2loki_unit_handoff_seconds",
			"From a unit's assignment to this replica until its pipeline started.",
			NULL, sfl_sharding_handoff_bounds,
			G_N_ELEMENTS(sfl_sharding_handoff_bounds)),
		NULL);
	g_message("sharding: member %s of a group with %u work unit(s)", self->holder,
		  self->units->len);
	return self;
}

void
sfl_sharding_start(SflSharding *self)
{
	sfl_membership_start(self->membership);
}

static void
sfl_sharding_shards_stopped_cb(gpointer shards, gpointer user_data)
{
	sfl_sharding_maybe_stopped(user_data);
}

/**
 * sfl_sharding_stop_async:
 * @self: a sharded runtime
 * @callback: called once every unit drained and its lease was given up
 * @user_data: for @callback
 *
 * The membership record goes first, so the others reassign this replica's units at once; they
 * take each only after its drain here committed and its lease was given up.
 */
void
sfl_sharding_stop_async(SflSharding *self, GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(self != NULL && !self->stopping);
	self->stopping = TRUE;
	self->stop_task = g_task_new(NULL, NULL, callback, user_data);
	sfl_membership_stop(self->membership);
	sfl_shards_set_stopped_func(self->shards, sfl_sharding_shards_stopped_cb, self);
	for (guint i = 0; i < self->units->len; i++) {
		SflShardUnit *unit = g_ptr_array_index(self->units, i);

		unit->generation++;
		sfl_clear_source(&unit->epoch_retry);
		sfl_sharding_end_term(self, unit, self->config->data.service.shutdown_grace, FALSE);
	}
	if (self->stopping_terms->len == 0)
		sfl_shards_stop(self->shards);
	sfl_sharding_maybe_stopped(self);
}

gboolean
sfl_sharding_stop_finish(SflSharding *self, GAsyncResult *result, GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

gboolean
sfl_sharding_is_member(SflSharding *self)
{
	const GPtrArray *live = sfl_membership_get_live(self->membership);

	return !self->stopping &&
	       g_ptr_array_find_with_equal_func((GPtrArray *)live, self->holder, g_str_equal, NULL);
}

guint
sfl_sharding_get_n_owned(SflSharding *self)
{
	guint n = 0;

	for (guint i = 0; i < self->units->len; i++)
		n += ((SflShardUnit *)g_ptr_array_index(self->units, i))->term != NULL;
	return n;
}

void
sfl_sharding_get_counters(SflSharding *self, SflPipelineCounters *counters)
{
	/* since this replica started: the ended tenures, the running and the draining ones */
	*counters = self->retired;
	for (guint i = 0; i < self->units->len; i++) {
		SflShardUnit *unit = g_ptr_array_index(self->units, i);
		SflPipelineCounters c = { 0 };

		if (unit->term == NULL)
			continue;
		sfl_pipeline_get_counters(sfl_term_get_pipeline(unit->term), &c);
		sfl_sharding_counters_add(counters, &c);
	}
	for (guint i = 0; i < self->stopping_terms->len; i++) {
		const SflTermEnd *end = g_ptr_array_index(self->stopping_terms, i);
		SflPipelineCounters c = { 0 };

		sfl_pipeline_get_counters(sfl_term_get_pipeline(end->term), &c);
		sfl_sharding_counters_add(counters, &c);
	}
}

/**
 * sfl_sharding_status:
 * @self: a sharded runtime
 *
 * Returns: (transfer full): `{holder, member, members, units_total, units_assigned, units}`,
 * `units` being the ones led here with their epochs and how long they have been
 */
json_t *
sfl_sharding_status(SflSharding *self)
{
	json_t *members = json_array();
	json_t *owned = json_array();
	json_t *assigned = json_array();
	const GPtrArray *live = sfl_membership_get_live(self->membership);
	gint64 now = sfl_clock_monotonic_usec(self->clock);

	for (guint i = 0; i < live->len; i++)
		json_array_append_new(members, json_string(live->pdata[i]));
	for (guint i = 0; i < self->units->len; i++) {
		SflShardUnit *unit = g_ptr_array_index(self->units, i);

		if (unit->assigned)
			json_array_append_new(assigned, json_string(unit->name));
		if (unit->term == NULL)
			continue;
		json_array_append_new(
			owned, json_pack("{s:s, s:I, s:f}", "unit", unit->name, "epoch",
					 (json_int_t)unit->epoch, "owned_seconds",
					 (gdouble)(now - unit->acquired_at) / G_USEC_PER_SEC));
	}
	return json_pack("{s:s, s:b, s:o, s:I, s:o, s:o}", "holder", self->holder, "member",
			 sfl_sharding_is_member(self), "members", members, "units_total",
			 (json_int_t)self->units->len, "units_assigned", assigned, "units", owned);
}

/* the daemon's teardown: whatever still runs is dropped (an orderly stop came first) */
void
sfl_sharding_free(SflSharding *self)
{
	if (self == NULL)
		return;
	self->stopping = TRUE;
	for (guint i = 0; i < self->units->len; i++) {
		SflShardUnit *unit = g_ptr_array_index(self->units, i);

		unit->generation++;
		sfl_clear_source(&unit->epoch_retry);
		g_clear_pointer(&unit->term, sfl_term_free);
	}
	g_ptr_array_set_size(self->stopping_terms, 0);
	g_clear_object(&self->stop_task);
	if (self->shards != NULL)
		sfl_shards_set_stopped_func(self->shards, NULL, NULL);
	g_clear_pointer(&self->shards, sfl_shards_free);
	if (self->membership != NULL)
		sfl_membership_stop(self->membership);
	sfl_sharding_unref(self);
}
