/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflShard"

#include "config.h"

#include "sfl-shards.h"

#include "sfl-shard.h"

typedef enum {
	SFL_UNIT_IDLE,	     /* no lease run */
	SFL_UNIT_CONTESTING, /* the lease run waits to win */
	SFL_UNIT_LEADING,    /* won: the unit's work runs here */
	SFL_UNIT_RELEASING,  /* assigned away: its work drains before the lease is given up */
	SFL_UNIT_STOPPING,   /* the lease run was cancelled and has not completed yet */
} SflUnitState;

/* refcounted: a lease run keeps its unit alive past the shards' own lifetime */
typedef struct {
	gint ref;
	SflShards *shards; /* NULL once the shards were freed */
	gchar *name;
	SflUnitState state;
	gboolean wanted; /* assigned here by the last member list */
	gboolean watch;	 /* not assigned here, but would be if its owner left */
	SflCoordinator *lease;
	GCancellable *cancellable;
} SflUnit;

struct _SflShards {
	gchar *holder;
	GPtrArray *units; /* SflUnit, in the caller's order */
	SflShardsLeaseFunc lease_func;
	gpointer lease_data;
	SflShardsHooks hooks;
	gpointer user_data;
	gboolean stopping;
	GFunc stopped_func; /* every lease given up after sfl_shards_stop() */
	gpointer stopped_data;
};

static SflUnit *
sfl_unit_ref(SflUnit *unit)
{
	g_atomic_int_inc(&unit->ref);
	return unit;
}

static void
sfl_unit_unref(SflUnit *unit)
{
	if (!g_atomic_int_dec_and_test(&unit->ref))
		return;
	g_clear_object(&unit->lease);
	g_clear_object(&unit->cancellable);
	g_free(unit->name);
	g_free(unit);
}

static void sfl_shards_contest(SflUnit *unit);
static void sfl_shards_hand_over(SflUnit *unit);

static void
sfl_shards_acquired_cb(SflCoordinator *lease, gpointer user_data)
{
	SflUnit *unit = user_data;
	SflShards *self = unit->shards;

	if (self == NULL || unit->state != SFL_UNIT_CONTESTING)
		return;
	unit->state = SFL_UNIT_LEADING;
	g_message("shards: leading %s (epoch %" G_GUINT64_FORMAT ")", unit->name,
		  sfl_coordinator_get_epoch(lease));
	if (self->hooks.acquired != NULL)
		self->hooks.acquired(self, unit->name, sfl_coordinator_get_epoch(lease),
				     self->user_data);
	/* won by a claim already out when it was assigned away: the owner gets it back */
	if (!unit->wanted && unit->state == SFL_UNIT_LEADING)
		sfl_shards_hand_over(unit);
}

static void
sfl_shards_cancel(SflUnit *unit)
{
	unit->state = SFL_UNIT_STOPPING;
	g_cancellable_cancel(unit->cancellable);
}

static void
sfl_shards_lost_cb(SflCoordinator *lease, gpointer user_data)
{
	SflUnit *unit = user_data;
	SflShards *self = unit->shards;
	SflUnitState was = unit->state;

	/* a stop's own loss: the work was drained first, or the whole group is going */
	if (self == NULL || was == SFL_UNIT_STOPPING)
		return;
	if (was != SFL_UNIT_LEADING && was != SFL_UNIT_RELEASING)
		return;
	g_warning("shards: lost the lease of %s (epoch %" G_GUINT64_FORMAT ")", unit->name,
		  sfl_coordinator_get_epoch(lease));
	/* its lease run contests again; one that was being handed back has nothing to win */
	unit->state = SFL_UNIT_CONTESTING;
	if (was == SFL_UNIT_RELEASING || !unit->wanted)
		sfl_shards_cancel(unit);
	if (self->hooks.lost != NULL)
		self->hooks.lost(self, unit->name, self->user_data);
}

static void
sfl_shards_run_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflUnit *unit = user_data;
	g_autoptr(GError) error = NULL;

	if (!sfl_coordinator_run_finish(SFL_COORDINATOR(source), result, &error))
		g_warning("shards: the lease of %s ended: %s", unit->name, error->message);
	g_clear_object(&unit->lease);
	g_clear_object(&unit->cancellable);
	unit->state = SFL_UNIT_IDLE;
	/* assigned back (or to be watched) while it was being handed over: contest it again */
	if (unit->shards != NULL && (unit->wanted || unit->watch) && !unit->shards->stopping)
		sfl_shards_contest(unit);
	else if (unit->shards != NULL && unit->shards->stopped_func != NULL &&
		 sfl_shards_is_stopped(unit->shards))
		unit->shards->stopped_func(unit->shards, unit->shards->stopped_data);
	sfl_unit_unref(unit);
}

static void
sfl_shards_hand_over(SflUnit *unit)
{
	SflShards *self = unit->shards;

	unit->state = SFL_UNIT_RELEASING;
	g_message("shards: handing %s over", unit->name);
	if (self->hooks.release != NULL)
		self->hooks.release(self, unit->name, self->user_data);
	else
		sfl_shards_cancel(unit);
}

static void
sfl_shards_contest(SflUnit *unit)
{
	SflShards *self = unit->shards;

	unit->lease = self->lease_func(unit->name, self->lease_data);
	/* the factory said why; the next member list tries again */
	if (unit->lease == NULL) {
		unit->state = SFL_UNIT_IDLE;
		return;
	}
	/* a lease that cannot be watched without claiming it (file_lease times it by its
	 * expiry anyway) is left alone until assigned here */
	if (!sfl_coordinator_set_watching(unit->lease, !unit->wanted) && !unit->wanted) {
		g_clear_object(&unit->lease);
		unit->state = SFL_UNIT_IDLE;
		return;
	}
	unit->cancellable = g_cancellable_new();
	unit->state = SFL_UNIT_CONTESTING;
	sfl_coordinator_run_async(unit->lease, sfl_shards_acquired_cb, sfl_shards_lost_cb, unit,
				  unit->cancellable, sfl_shards_run_done_cb, sfl_unit_ref(unit));
}

SflShards *
sfl_shards_new(const gchar *holder, const gchar *const *units, SflShardsLeaseFunc lease,
	       gpointer lease_data, const SflShardsHooks *hooks, gpointer user_data)
{
	SflShards *self = g_new0(SflShards, 1);

	self->holder = g_strdup(holder);
	self->units = g_ptr_array_new();
	self->lease_func = lease;
	self->lease_data = lease_data;
	self->hooks = *hooks;
	self->user_data = user_data;
	for (guint i = 0; units[i] != NULL; i++) {
		SflUnit *unit = g_new0(SflUnit, 1);

		unit->ref = 1;
		unit->shards = self;
		unit->name = g_strdup(units[i]);
		g_ptr_array_add(self->units, unit);
	}
	return self;
}

void
sfl_shards_set_members(SflShards *self, const GPtrArray *live)
{
	g_autofree const gchar **names = g_new0(const gchar *, self->units->len + 1);
	g_autofree gint *owner = NULL;
	g_autofree gboolean *watch = NULL;
	gint me = -1;

	if (self->stopping)
		return;
	for (guint u = 0; u < self->units->len; u++)
		names[u] = ((SflUnit *)self->units->pdata[u])->name;
	for (guint m = 0; m < live->len; m++)
		if (g_str_equal(live->pdata[m], self->holder))
			me = (gint)m;
	owner = sfl_shard_assign(names, self->units->len, (const gchar *const *)live->pdata,
				 live->len);
	/*
	 * The units this replica takes over if their owner leaves: their leases are read as a
	 * standby reads them, so a crash is covered within ttl + renew_interval of the last
	 * renewal, not members_ttl + ttl (the staleness timed only once the list dropped it).
	 */
	if (me >= 0)
		watch = sfl_shard_successors(names, self->units->len,
					     (const gchar *const *)live->pdata, live->len,
					     (guint)me);
	for (guint u = 0; u < self->units->len; u++) {
		SflUnit *unit = self->units->pdata[u];

		/* not a member in its own view: this replica hands everything back */
		unit->wanted = me >= 0 && owner[u] == me;
		unit->watch = !unit->wanted && watch != NULL && watch[u];
		switch (unit->state) {
		case SFL_UNIT_IDLE:
			if (unit->wanted || unit->watch)
				sfl_shards_contest(unit);
			break;
		case SFL_UNIT_CONTESTING:
			if ((!unit->wanted && !unit->watch) ||
			    (!sfl_coordinator_set_watching(unit->lease, !unit->wanted) &&
			     !unit->wanted))
				sfl_shards_cancel(unit);
			break;
		case SFL_UNIT_LEADING:
			if (!unit->wanted)
				sfl_shards_hand_over(unit);
			break;
		case SFL_UNIT_RELEASING:
		case SFL_UNIT_STOPPING:
			/* the run completes first; a wanted unit is contested again then */
			break;
		}
	}
}

void
sfl_shards_released(SflShards *self, const gchar *unit_name)
{
	for (guint u = 0; u < self->units->len; u++) {
		SflUnit *unit = self->units->pdata[u];

		if (g_str_equal(unit->name, unit_name) && unit->state == SFL_UNIT_RELEASING) {
			sfl_shards_cancel(unit);
			return;
		}
	}
}

static SflUnit *
sfl_shards_find(SflShards *self, const gchar *unit_name)
{
	for (guint u = 0; u < self->units->len; u++) {
		SflUnit *unit = self->units->pdata[u];

		if (g_str_equal(unit->name, unit_name))
			return unit;
	}
	return NULL;
}

gboolean
sfl_shards_check_fence(SflShards *self, const gchar *unit_name)
{
	SflUnit *unit = sfl_shards_find(self, unit_name);

	/* a unit being handed back still commits its drain under its lease */
	return unit != NULL &&
	       (unit->state == SFL_UNIT_LEADING || unit->state == SFL_UNIT_RELEASING) &&
	       unit->lease != NULL && sfl_coordinator_check_fence(unit->lease);
}

void
sfl_shards_demote(SflShards *self, const gchar *unit_name)
{
	SflUnit *unit = sfl_shards_find(self, unit_name);

	if (unit != NULL && unit->lease != NULL &&
	    (unit->state == SFL_UNIT_LEADING || unit->state == SFL_UNIT_RELEASING))
		sfl_coordinator_demote(unit->lease);
}

static GPtrArray *
sfl_shards_dup_where(SflShards *self, gboolean leading)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	for (guint u = 0; u < self->units->len; u++) {
		const SflUnit *unit = self->units->pdata[u];

		if (leading ? unit->state == SFL_UNIT_LEADING : unit->wanted)
			g_ptr_array_add(out, g_strdup(unit->name));
	}
	return out;
}

static gint
sfl_shards_strcmp(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

GPtrArray *
sfl_shards_dup_owned(SflShards *self)
{
	GPtrArray *out = sfl_shards_dup_where(self, TRUE);

	g_ptr_array_sort(out, sfl_shards_strcmp);
	return out;
}

GPtrArray *
sfl_shards_dup_assigned(SflShards *self)
{
	GPtrArray *out = sfl_shards_dup_where(self, FALSE);

	g_ptr_array_sort(out, sfl_shards_strcmp);
	return out;
}

void
sfl_shards_stop(SflShards *self)
{
	self->stopping = TRUE;
	for (guint u = 0; u < self->units->len; u++) {
		SflUnit *unit = self->units->pdata[u];

		unit->wanted = FALSE;
		unit->watch = FALSE;
		if (unit->state != SFL_UNIT_IDLE && unit->state != SFL_UNIT_STOPPING)
			sfl_shards_cancel(unit);
	}
}

void
sfl_shards_set_stopped_func(SflShards *self, GFunc func, gpointer user_data)
{
	self->stopped_func = func;
	self->stopped_data = user_data;
}

gboolean
sfl_shards_is_stopped(SflShards *self)
{
	if (!self->stopping)
		return FALSE;
	for (guint u = 0; u < self->units->len; u++)
		if (((SflUnit *)self->units->pdata[u])->state != SFL_UNIT_IDLE)
			return FALSE;
	return TRUE;
}

void
sfl_shards_free(SflShards *self)
{
	if (self == NULL)
		return;
	sfl_shards_stop(self);
	/* a lease run still giving up keeps its unit; it finds no shards when it completes */
	for (guint u = 0; u < self->units->len; u++) {
		SflUnit *unit = self->units->pdata[u];

		unit->shards = NULL;
		sfl_unit_unref(unit);
	}
	g_ptr_array_unref(self->units);
	g_free(self->holder);
	g_free(self);
}
