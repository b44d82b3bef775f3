/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTest"

#include "config.h"

#include "sfl-coordinator.h"
#include "sfl-shard.h"
#include "sfl-shards.h"
#include "sfl-test-coordinator.h"

/*
 * SflShards over fake unit leases: one shared table of unit -> holder stands for the lease
 * backend, a claim wins when the unit is free and waits otherwise, a release frees it and
 * wakes the waiters. The lease rules themselves (staleness, CAS, epochs) are the real
 * coordinators' and tested with them; this proves the orchestration: each unit led by one
 * replica at a time, handed over only after its work drained, every unit led after a join,
 * a leave and a crash, and the balance.
 */

typedef struct {
	GHashTable *holder; /* unit -> holder */
	GHashTable *epoch;  /* unit -> last epoch handed out */
	GPtrArray *waiting; /* FakeLease, contesting */
	gboolean watchable; /* the leases can watch without claiming (the CAS leases can) */
} FakeTable;

static FakeTable table;

#define FAKE_TYPE_LEASE (fake_lease_get_type())
G_DECLARE_FINAL_TYPE(FakeLease, fake_lease, FAKE, LEASE, SflCoordinator)

struct _FakeLease {
	SflCoordinator parent_instance;
	gchar *unit;
	gchar *holder;
	guint64 epoch;
	gboolean running;
	gboolean watching; /* contesting without ever claiming */
};

G_DEFINE_TYPE(FakeLease, fake_lease, SFL_TYPE_COORDINATOR)

static void
fake_lease_try(FakeLease *self)
{
	const gchar *held = g_hash_table_lookup(table.holder, self->unit);

	if (!self->running || self->watching || held != NULL)
		return;
	g_hash_table_insert(table.holder, g_strdup(self->unit), g_strdup(self->holder));
	self->epoch = GPOINTER_TO_UINT(g_hash_table_lookup(table.epoch, self->unit)) + 1;
	g_hash_table_insert(table.epoch, g_strdup(self->unit),
			    GUINT_TO_POINTER((guint)self->epoch));
	g_ptr_array_remove(table.waiting, self);
	sfl_coordinator_set_leader(SFL_COORDINATOR(self), TRUE);
}

/* like a real lease: the answer comes from the loop, not from inside start */
static gboolean
fake_lease_try_cb(gpointer data)
{
	fake_lease_try(data);
	return G_SOURCE_REMOVE;
}

static void
fake_table_wake(void)
{
	for (guint i = 0; i < table.waiting->len; i++)
		g_idle_add_full(G_PRIORITY_DEFAULT, fake_lease_try_cb,
				g_object_ref(table.waiting->pdata[i]), g_object_unref);
}

static void
fake_lease_start(SflCoordinator *coord)
{
	FakeLease *self = FAKE_LEASE(coord);

	self->running = TRUE;
	g_ptr_array_add(table.waiting, self);
	g_idle_add_full(G_PRIORITY_DEFAULT, fake_lease_try_cb, g_object_ref(self), g_object_unref);
}

static void
fake_lease_stop(SflCoordinator *coord)
{
	FakeLease *self = FAKE_LEASE(coord);

	self->running = FALSE;
	g_ptr_array_remove(table.waiting, self);
	if (g_strcmp0(g_hash_table_lookup(table.holder, self->unit), self->holder) == 0) {
		g_hash_table_remove(table.holder, self->unit);
		fake_table_wake();
	}
}

static gboolean
fake_lease_set_watching(SflCoordinator *coord, gboolean watching)
{
	FakeLease *self = FAKE_LEASE(coord);

	if (!table.watchable)
		return FALSE;
	self->watching = watching;
	if (!watching && self->running)
		g_idle_add_full(G_PRIORITY_DEFAULT, fake_lease_try_cb, g_object_ref(self),
				g_object_unref);
	return TRUE;
}

static guint64
fake_lease_get_epoch(SflCoordinator *coord)
{
	return FAKE_LEASE(coord)->epoch;
}

static void
fake_lease_finalize(GObject *object)
{
	FakeLease *self = FAKE_LEASE(object);

	g_free(self->unit);
	g_free(self->holder);
	G_OBJECT_CLASS(fake_lease_parent_class)->finalize(object);
}

static void
fake_lease_class_init(FakeLeaseClass *klass)
{
	SflCoordinatorClass *coord_class = SFL_COORDINATOR_CLASS(klass);

	G_OBJECT_CLASS(klass)->finalize = fake_lease_finalize;
	coord_class->start = fake_lease_start;
	coord_class->stop = fake_lease_stop;
	coord_class->get_epoch = fake_lease_get_epoch;
	coord_class->set_watching = fake_lease_set_watching;
}

static void
fake_lease_init(FakeLease *self)
{
}

/* --- replicas ---------------------------------------------------------------------------- */

typedef struct {
	gchar *holder;
	SflShards *shards;
	GHashTable *working;	/* unit -> epoch, the units whose work runs here */
	gboolean hold_releases; /* a drain that takes a while: released later by the test */
	GPtrArray *held;	/* units waiting for their drain to end */
} Replica;

static GHashTable *leader_of; /* unit -> holder, from the hooks: at most one at a time */
static guint violations;

static SflCoordinator *
lease_for(const gchar *unit, gpointer user_data)
{
	Replica *r = user_data;
	FakeLease *lease = g_object_new(FAKE_TYPE_LEASE, NULL);

	lease->unit = g_strdup(unit);
	lease->holder = g_strdup(r->holder);
	return SFL_COORDINATOR(lease);
}

static void
acquired_hook(SflShards *shards, const gchar *unit, guint64 epoch, gpointer user_data)
{
	Replica *r = user_data;
	const gchar *other = g_hash_table_lookup(leader_of, unit);

	if (other != NULL && !g_str_equal(other, r->holder)) {
		g_test_message("%s acquired %s while %s still works it", r->holder, unit, other);
		violations++;
	}
	g_hash_table_insert(leader_of, g_strdup(unit), g_strdup(r->holder));
	g_hash_table_insert(r->working, g_strdup(unit), GUINT_TO_POINTER((guint)epoch));
}

static void
stop_work(Replica *r, const gchar *unit)
{
	if (g_strcmp0(g_hash_table_lookup(leader_of, unit), r->holder) == 0)
		g_hash_table_remove(leader_of, unit);
	g_hash_table_remove(r->working, unit);
}

static void
release_hook(SflShards *shards, const gchar *unit, gpointer user_data)
{
	Replica *r = user_data;

	if (r->hold_releases) {
		g_ptr_array_add(r->held, g_strdup(unit));
		return;
	}
	stop_work(r, unit);
	sfl_shards_released(shards, unit);
}

static void
lost_hook(SflShards *shards, const gchar *unit, gpointer user_data)
{
	stop_work(user_data, unit);
}

static const SflShardsHooks hooks = { acquired_hook, release_hook, lost_hook };

#define N_UNITS 12

static const gchar *const unit_names[] = {
	"org=a:eventlogfile:API",
	"org=a:eventlogfile:URI",
	"org=a:eventlogfile:Login",
	"org=a:objects:LoginEvent",
	"org=a:objects:ApiEvent",
	"org=a:pubsub:/event/A",
	"org=a:pubsub:/event/B",
	"org=a:pubsub:/event/C",
	"org=a:apexlog",
	"org=b:eventlogfile:API",
	"org=b:eventlogfile:Report",
	"org=b:pubsub:/event/A",
	NULL,
};

static Replica *
replica_new(const gchar *holder)
{
	Replica *r = g_new0(Replica, 1);

	r->holder = g_strdup(holder);
	r->working = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	r->held = g_ptr_array_new_with_free_func(g_free);
	r->shards = sfl_shards_new(holder, unit_names, lease_for, r, &hooks, r);
	return r;
}

static void
replica_free(Replica *r)
{
	sfl_shards_free(r->shards);
	g_hash_table_unref(r->working);
	g_ptr_array_unref(r->held);
	g_free(r->holder);
	g_free(r);
}

static void
settle(void)
{
	while (g_main_context_iteration(NULL, FALSE))
		;
}

static void
members(Replica **rs, guint n)
{
	g_autoptr(GPtrArray) live = g_ptr_array_new();

	for (guint i = 0; i < n; i++)
		g_ptr_array_add(live, rs[i]->holder);
	for (guint i = 0; i < n; i++)
		sfl_shards_set_members(rs[i]->shards, live);
	settle();
}

/* every unit worked by exactly one of @rs, each owning ⌊U/N⌋ or ⌈U/N⌉ */
static void
assert_covered_and_balanced(Replica **rs, guint n)
{
	guint total = 0;

	for (guint i = 0; i < n; i++) {
		g_autoptr(GPtrArray) owned = sfl_shards_dup_owned(rs[i]->shards);
		g_autoptr(GPtrArray) assigned = sfl_shards_dup_assigned(rs[i]->shards);

		g_assert_cmpuint(owned->len, ==, assigned->len);
		g_assert_cmpuint(owned->len, >=, N_UNITS / n);
		g_assert_cmpuint(owned->len, <=, (N_UNITS + n - 1) / n);
		g_assert_cmpuint(g_hash_table_size(rs[i]->working), ==, owned->len);
		total += owned->len;
	}
	g_assert_cmpuint(total, ==, N_UNITS);
	g_assert_cmpuint(g_hash_table_size(leader_of), ==, N_UNITS);
	g_assert_cmpuint(violations, ==, 0);
}

static void
table_setup(void)
{
	table.holder = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	table.epoch = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	table.waiting = g_ptr_array_new();
	table.watchable = FALSE;
	leader_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	violations = 0;
}

static void
table_teardown(void)
{
	settle();
	g_assert_cmpuint(table.waiting->len, ==, 0);
	g_hash_table_unref(table.holder);
	g_hash_table_unref(table.epoch);
	g_ptr_array_unref(table.waiting);
	g_hash_table_unref(leader_of);
}

/* every lease given up, then the table must hold no claim waiting */
static void
replicas_stop(Replica **rs, guint n)
{
	for (guint i = 0; i < n; i++) {
		sfl_shards_stop(rs[i]->shards);
		settle();
		g_assert_true(sfl_shards_is_stopped(rs[i]->shards));
		replica_free(rs[i]);
	}
	table_teardown();
}

/* three replicas, then a fourth joins, then one leaves cleanly: covered and balanced after
 * each, no unit ever worked by two */
static void
test_join_and_leave(void)
{
	Replica *rs[4];

	table_setup();
	rs[0] = replica_new("replica-a");
	rs[1] = replica_new("replica-b");
	rs[2] = replica_new("replica-c");
	members(rs, 3);
	assert_covered_and_balanced(rs, 3);

	rs[3] = replica_new("replica-d");
	members(rs, 4);
	assert_covered_and_balanced(rs, 4);

	/* c leaves: everyone's next member list lacks it, c included (its own view too) */
	{
		Replica *left[] = { rs[0], rs[1], rs[3] };
		g_autoptr(GPtrArray) live = g_ptr_array_new();

		for (guint i = 0; i < 3; i++)
			g_ptr_array_add(live, left[i]->holder);
		sfl_shards_set_members(rs[2]->shards, live);
		members(left, 3);
		assert_covered_and_balanced(left, 3);
		g_assert_cmpuint(g_hash_table_size(rs[2]->working), ==, 0);
	}
	replicas_stop(rs, 4);
}

/* make-before-break: the newcomer waits for the old owner's drain, however long it takes */
static void
test_handover_waits_for_drain(void)
{
	Replica *rs[2];

	table_setup();
	rs[0] = replica_new("replica-a");
	rs[0]->hold_releases = TRUE;
	members(rs, 1);
	assert_covered_and_balanced(rs, 1);
	rs[1] = replica_new("replica-b");
	members(rs, 2);
	/* a still drains what is now b's: b leads none of it yet */
	g_assert_cmpuint(rs[0]->held->len, ==, N_UNITS / 2);
	{
		g_autoptr(GPtrArray) b_owned = sfl_shards_dup_owned(rs[1]->shards);
		g_assert_cmpuint(b_owned->len, ==, 0);
	}
	for (guint i = 0; i < rs[0]->held->len; i++) {
		stop_work(rs[0], rs[0]->held->pdata[i]);
		sfl_shards_released(rs[0]->shards, rs[0]->held->pdata[i]);
	}
	settle();
	assert_covered_and_balanced(rs, 2);
	replicas_stop(rs, 2);
}

/* @r's work ends with it and its leases expire (here: freed in the table) */
static void
crash(Replica *r)
{
	GHashTableIter it;
	gpointer unit = NULL;
	gpointer holder = NULL;

	g_hash_table_iter_init(&it, r->working);
	while (g_hash_table_iter_next(&it, &unit, NULL))
		g_hash_table_remove(leader_of, unit);
	g_hash_table_iter_init(&it, table.holder);
	while (g_hash_table_iter_next(&it, &unit, &holder))
		if (g_str_equal(holder, r->holder))
			g_hash_table_iter_remove(&it);
}

/* a crashed replica's leases go stale (here: freed in the table); the survivors take its units */
static void
test_crash(void)
{
	Replica *rs[3];

	table_setup();
	rs[0] = replica_new("replica-a");
	rs[1] = replica_new("replica-b");
	rs[2] = replica_new("replica-c");
	members(rs, 3);
	/* c dies: its work stops with it and its leases expire; its object is gone */
	crash(rs[2]);
	replica_free(rs[2]);
	members(rs, 2);
	assert_covered_and_balanced(rs, 2);
	replicas_stop(rs, 2);
}

/* the watching contest of a unit, if any; at most one replica watches it */
static FakeLease *
watcher_of(const gchar *unit)
{
	FakeLease *found = NULL;

	for (guint i = 0; i < table.waiting->len; i++) {
		FakeLease *lease = table.waiting->pdata[i];

		if (!lease->watching || !g_str_equal(lease->unit, unit))
			continue;
		g_assert_null(found);
		found = lease;
	}
	return found;
}

/*
 * With leases that can watch, every unit's successor (who takes it if its owner leaves)
 * watches it without claiming; after a crash the very contests that watched take the dead
 * member's units over, no new contest started after the member list changed.
 */
static void
test_successors_watch(void)
{
	Replica *rs[3];
	g_autoptr(GPtrArray) live = g_ptr_array_new();
	g_autoptr(GPtrArray) takers = g_ptr_array_new_with_free_func(g_object_unref);

	table_setup();
	table.watchable = TRUE;
	rs[0] = replica_new("replica-a");
	rs[1] = replica_new("replica-b");
	rs[2] = replica_new("replica-c");
	members(rs, 3);
	assert_covered_and_balanced(rs, 3);
	for (guint i = 0; i < 3; i++)
		g_ptr_array_add(live, rs[i]->holder);
	for (guint i = 0; i < 3; i++) {
		g_autofree gboolean *succ = sfl_shard_successors(
			unit_names, N_UNITS, (const gchar *const *)live->pdata, 3, i);

		for (guint u = 0; u < N_UNITS; u++) {
			FakeLease *w = watcher_of(unit_names[u]);
			const gchar *owner = g_hash_table_lookup(table.holder, unit_names[u]);

			g_assert_nonnull(w);
			/* watched, never claimed: the owner still holds it */
			g_assert_cmpstr(owner, !=, w->holder);
			g_assert_cmpint(succ[u], ==, g_str_equal(w->holder, rs[i]->holder));
			if (i == 0 && g_str_equal(owner, "replica-c"))
				g_ptr_array_add(takers, g_object_ref(w));
		}
	}
	g_assert_cmpuint(takers->len, ==, N_UNITS / 3);

	/* c dies: its leases expire */
	crash(rs[2]);
	fake_table_wake();
	settle();
	/* still not claimed: a watcher leaves a free lease to its assignee */
	for (guint i = 0; i < takers->len; i++)
		g_assert_false(sfl_coordinator_is_leader(takers->pdata[i]));
	replica_free(rs[2]);
	members(rs, 2);
	assert_covered_and_balanced(rs, 2);
	/* taken by the contests that watched them */
	for (guint i = 0; i < takers->len; i++)
		g_assert_true(sfl_coordinator_is_leader(takers->pdata[i]));
	replicas_stop(rs, 2);
}

/* a replica missing from its own member list hands everything back */
static void
test_not_a_member_releases_all(void)
{
	Replica *rs[2];
	g_autoptr(GPtrArray) only_b = g_ptr_array_new();

	table_setup();
	rs[0] = replica_new("replica-a");
	rs[1] = replica_new("replica-b");
	members(rs, 2);
	g_ptr_array_add(only_b, rs[1]->holder);
	sfl_shards_set_members(rs[0]->shards, only_b);
	sfl_shards_set_members(rs[1]->shards, only_b);
	settle();
	g_assert_cmpuint(g_hash_table_size(rs[0]->working), ==, 0);
	assert_covered_and_balanced(&rs[1], 1);
	replicas_stop(rs, 2);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	(void)sfl_test_warnings_record(TRUE);
	g_test_add_func("/sfl/shards/join-and-leave", test_join_and_leave);
	g_test_add_func("/sfl/shards/handover-waits-for-drain", test_handover_waits_for_drain);
	g_test_add_func("/sfl/shards/crash", test_crash);
	g_test_add_func("/sfl/shards/not-a-member-releases-all", test_not_a_member_releases_all);
	g_test_add_func("/sfl/shards/successors-watch", test_successors_watch);
	return g_test_run();
}
