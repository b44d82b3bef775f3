/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBenchShardSim"

#include "config.h"

#include "sfl-cas-lease-coordinator.h"
#include "sfl-clock.h"
#include "sfl-error.h"
#include "sfl-membership.h"
#include "sfl-shard.h"
#include "sfl-shards.h"

/*
 * The sharded assignment and lease logic at scale (issue 26, item 6), simulated: no network,
 * no files. Every replica runs the real SflMembership over one shared in-memory member store
 * and the real SflShards whose unit leases are real SflCasLeaseCoordinators over one shared
 * in-memory table of lease documents (compare-and-swap on a version, like a Kubernetes Lease).
 * Everything runs on the default main context and a fake clock moved in steps of 100 ms. The
 * store and the table answer from the loop, never inside the _async call: either within the
 * step the call was issued in (no latency: the times printed are the protocol's own) or one
 * step later (100 ms, which takes renewals and membership rounds out of phase as a real
 * store's latency does). Drains are instant: the release hook answers sfl_shards_released()
 * at once.
 *
 * For a join (one more replica), a clean leave (one stops: record removed, leases released)
 * and a crash (one vanishes: nothing more is written, in-flight writes are lost) on a fresh
 * group each time it prints the simulated time from the event until every unit is led by
 * exactly the member the assignment over the true member set gives it, the units that changed
 * owner next to the 1/N ideal, and, at steady state, the store operations per second. Two
 * timing profiles: the daemon's defaults and a fast one. Nothing is asserted.
 *
 * Usage: bench-shard-sim [replicas [units]]   (defaults 50 and 1000)
 */

#define SIM_STEP_USEC (100 * 1000)

typedef struct {
	const gchar *name;
	gint64 ttl_usec;	   /* unit lease ttl (duration) */
	gint64 renew_usec;	   /* unit lease renew interval */
	gint64 members_ttl_usec;   /* coordinate.sharding.members_ttl */
	gint64 members_renew_usec; /* the daemon renews records every third of it */
} SimProfile;

/* the daemon's defaults (coordinate.file_lease / k8s_lease / s3_lease / gcs_lease ttl 30 s,
 * renew_interval 10 s; sharding.members_ttl 30 s, renewed every members_ttl / 3 by
 * sfl-sharding.c) and a fast setting ten times shorter */
static const SimProfile sim_profiles[] = {
	{ "daemon defaults", 30 * G_USEC_PER_SEC, 10 * G_USEC_PER_SEC, 30 * G_USEC_PER_SEC,
	  10 * G_USEC_PER_SEC },
	{ "fast", 3 * G_USEC_PER_SEC, 1 * G_USEC_PER_SEC, 3 * G_USEC_PER_SEC, 1 * G_USEC_PER_SEC },
};

/*
 * Zero latency keeps every replica's lease renewals in phase with its membership rounds (a
 * unit is won in the step its member list arrived), so a handover always finds a renewal in
 * flight; one step of latency puts the rounds' answers before the renewals, as a real store's
 * latency does.
 */
static const gint64 sim_latencies[] = { 0, SIM_STEP_USEC };

typedef struct {
	guint64 lease_reads;
	guint64 lease_writes; /* every write issued that reached the table, conflicts included */
	guint64 lease_conflicts;
	guint64 lease_releases; /* writes of holder "" that landed */
	guint64 member_publishes;
	guint64 member_lists;
	guint64 member_removes;
} SimCounters;

typedef struct _SimReplica SimReplica;

/* the shared world: every replica's store and leases point here */
typedef struct {
	SflClock *clock;
	const SimProfile *profile;
	gint64 latency_usec; /* how long after its call a store operation answers (0: next idle) */
	GHashTable *records; /* holder -> version (member store) */
	GHashTable *docs;    /* unit -> SflCasLeaseDoc (lease table) */
	guint64 next_version;
	SimCounters counters;
	gchar **units; /* unit names, NULL-terminated */
	guint n_units;
	GHashTable *unit_index; /* name -> index + 1 */
	GPtrArray *replicas;	/* SimReplica */
	guint *owners;		/* per unit: how many replicas work it now */
	guint64 *last_epoch;	/* per unit: the last epoch acquired */
	guint double_owned;	/* acquisitions of a unit another replica still worked */
	guint epoch_regressions;
	guint acquisitions;
	guint losses;
	guint warnings;
} SimWorld;

static SimWorld world;

struct _SimReplica {
	guint index;
	gchar *holder;
	gboolean crashed; /* nothing it does reaches the stores any more */
	gboolean gone;	  /* stopped or crashed: not a member of the true set */
	SflMemberStore *store;
	SflMembership *membership;
	SflShards *shards;
	gboolean *works; /* per unit: its work runs here */
	SimCounters counters;
};

/* --- asynchronous completion ----------------------------------------------------------------- */

typedef struct _SimCall SimCall;
typedef void (*SimCallFunc)(SimCall *call);

struct _SimCall {
	GTask *task;
	SimCallFunc func;
	SimReplica *replica;
	gchar *key; /* holder or unit */
	guint64 seq;
	SflCasLeaseDoc *doc;
	SflCasLeasePrecondition precondition;
	gchar *version;
};

static gboolean
sim_call_cb(gpointer data)
{
	SimCall *call = data;

	if (call->replica->crashed)
		g_task_return_new_error(call->task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"the replica crashed");
	else
		call->func(call);
	g_object_unref(call->task);
	g_free(call->key);
	g_clear_pointer(&call->doc, sfl_cas_lease_doc_free);
	g_free(call->version);
	g_free(call);
	return G_SOURCE_REMOVE;
}

/* like a real store: the answer comes from the loop, not from inside the _async call */
static SimCall *
sim_call_new(gpointer source, SimReplica *replica, GCancellable *cancellable,
	     GAsyncReadyCallback callback, gpointer user_data, SimCallFunc func, const gchar *key)
{
	SimCall *call = g_new0(SimCall, 1);

	call->task = g_task_new(source, cancellable, callback, user_data);
	call->func = func;
	call->replica = replica;
	call->key = g_strdup(key);
	if (world.latency_usec > 0) {
		GSource *timer = sfl_clock_timeout_source_new(world.clock, world.latency_usec);

		g_source_set_callback(timer, sim_call_cb, call, NULL);
		g_source_attach(timer, NULL);
		g_source_unref(timer);
	} else {
		g_idle_add_full(G_PRIORITY_DEFAULT, sim_call_cb, call, NULL);
	}
	return call;
}

/* --- the member store ------------------------------------------------------------------------ */

#define SIM_TYPE_MEMBER_STORE (sim_member_store_get_type())
G_DECLARE_FINAL_TYPE(SimMemberStore, sim_member_store, SIM, MEMBER_STORE, SflMemberStore)

struct _SimMemberStore {
	SflMemberStore parent_instance;
	SimReplica *replica;
};

G_DEFINE_TYPE(SimMemberStore, sim_member_store, SFL_TYPE_MEMBER_STORE)

static void
sim_publish_run(SimCall *call)
{
	g_hash_table_insert(world.records, g_strdup(call->key),
			    g_strdup_printf("%" G_GUINT64_FORMAT, call->seq));
	world.counters.member_publishes++;
	call->replica->counters.member_publishes++;
	g_task_return_boolean(call->task, TRUE);
}

static void
sim_publish_async(SflMemberStore *store, const gchar *holder, guint64 seq,
		  GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
	SimCall *call = sim_call_new(store, SIM_MEMBER_STORE(store)->replica, cancellable, callback,
				     user_data, sim_publish_run, holder);
	call->seq = seq;
}

static gboolean
sim_boolean_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

static void
sim_list_run(SimCall *call)
{
	GPtrArray *entries = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_member_entry_free);
	GHashTableIter it;
	gpointer holder = NULL;
	gpointer version = NULL;

	g_hash_table_iter_init(&it, world.records);
	while (g_hash_table_iter_next(&it, &holder, &version)) {
		SflMemberEntry *entry = g_new0(SflMemberEntry, 1);

		entry->holder = g_strdup(holder);
		entry->version = g_strdup(version);
		g_ptr_array_add(entries, entry);
	}
	world.counters.member_lists++;
	call->replica->counters.member_lists++;
	g_task_return_pointer(call->task, entries, (GDestroyNotify)g_ptr_array_unref);
}

static void
sim_list_async(SflMemberStore *store, GCancellable *cancellable, GAsyncReadyCallback callback,
	       gpointer user_data)
{
	sim_call_new(store, SIM_MEMBER_STORE(store)->replica, cancellable, callback, user_data,
		     sim_list_run, NULL);
}

static GPtrArray *
sim_list_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
sim_remove_run(SimCall *call)
{
	g_hash_table_remove(world.records, call->key);
	world.counters.member_removes++;
	call->replica->counters.member_removes++;
	g_task_return_boolean(call->task, TRUE);
}

static void
sim_remove_async(SflMemberStore *store, const gchar *holder, GCancellable *cancellable,
		 GAsyncReadyCallback callback, gpointer user_data)
{
	sim_call_new(store, SIM_MEMBER_STORE(store)->replica, cancellable, callback, user_data,
		     sim_remove_run, holder);
}

static void
sim_member_store_class_init(SimMemberStoreClass *klass)
{
	SflMemberStoreClass *store_class = SFL_MEMBER_STORE_CLASS(klass);

	store_class->publish_async = sim_publish_async;
	store_class->publish_finish = sim_boolean_finish;
	store_class->list_async = sim_list_async;
	store_class->list_finish = sim_list_finish;
	store_class->remove_async = sim_remove_async;
	store_class->remove_finish = sim_boolean_finish;
}

static void
sim_member_store_init(SimMemberStore *self)
{
}

/* --- the lease table ------------------------------------------------------------------------- */

#define SIM_TYPE_LEASE (sim_lease_get_type())
G_DECLARE_FINAL_TYPE(SimLease, sim_lease, SIM, LEASE, GObject)

struct _SimLease {
	GObject parent_instance;
	SimReplica *replica;
	gchar *unit;
	gchar *what;
};

static void sim_lease_backend_init(SflCasLeaseBackendInterface *iface);

G_DEFINE_TYPE_WITH_CODE(SimLease, sim_lease, G_TYPE_OBJECT,
			G_IMPLEMENT_INTERFACE(SFL_TYPE_CAS_LEASE_BACKEND, sim_lease_backend_init))

static const gchar *
sim_lease_describe(SflCasLeaseBackend *backend)
{
	return SIM_LEASE(backend)->what;
}

static void
sim_lease_read_run(SimCall *call)
{
	const SflCasLeaseDoc *doc = g_hash_table_lookup(world.docs, call->key);

	world.counters.lease_reads++;
	call->replica->counters.lease_reads++;
	if (doc == NULL)
		g_task_return_new_error(call->task, SFL_ERROR, SFL_ERROR_NOT_FOUND, "no lease %s",
					call->key);
	else
		g_task_return_pointer(call->task, sfl_cas_lease_doc_copy(doc),
				      (GDestroyNotify)sfl_cas_lease_doc_free);
}

static void
sim_lease_read_async(SflCasLeaseBackend *backend, GCancellable *cancellable,
		     GAsyncReadyCallback callback, gpointer user_data)
{
	SimLease *self = SIM_LEASE(backend);

	sim_call_new(backend, self->replica, cancellable, callback, user_data, sim_lease_read_run,
		     self->unit);
}

static SflCasLeaseDoc *
sim_lease_doc_finish(SflCasLeaseBackend *backend, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
sim_lease_write_run(SimCall *call)
{
	const SflCasLeaseDoc *cur = g_hash_table_lookup(world.docs, call->key);
	SflCasLeaseDoc *stored = NULL;

	world.counters.lease_writes++;
	call->replica->counters.lease_writes++;
	if (call->precondition == SFL_CAS_LEASE_CREATE_ONLY && cur != NULL) {
		world.counters.lease_conflicts++;
		g_task_return_new_error(call->task, SFL_ERROR, SFL_ERROR_CONFLICT,
					"lease %s exists", call->key);
		return;
	}
	if (call->precondition == SFL_CAS_LEASE_IF_VERSION && cur == NULL) {
		g_task_return_new_error(call->task, SFL_ERROR, SFL_ERROR_NOT_FOUND, "no lease %s",
					call->key);
		return;
	}
	if (call->precondition == SFL_CAS_LEASE_IF_VERSION &&
	    g_strcmp0(cur->version, call->version) != 0) {
		world.counters.lease_conflicts++;
		g_task_return_new_error(call->task, SFL_ERROR, SFL_ERROR_CONFLICT,
					"lease %s changed (version %s, not %s)", call->key,
					cur->version, call->version);
		return;
	}
	stored = sfl_cas_lease_doc_copy(call->doc);
	g_free(stored->version);
	stored->version = g_strdup_printf("%" G_GUINT64_FORMAT, ++world.next_version);
	/* a claim starts a tenure, carried through renewals and the release */
	if (stored->tenure == NULL)
		stored->tenure = g_strdup_printf("%" G_GINT64_FORMAT, stored->wall_usec);
	if (stored->holder == NULL || stored->holder[0] == '\0')
		world.counters.lease_releases++;
	g_hash_table_insert(world.docs, g_strdup(call->key), stored);
	g_task_return_pointer(call->task, sfl_cas_lease_doc_copy(stored),
			      (GDestroyNotify)sfl_cas_lease_doc_free);
}

static void
sim_lease_write_async(SflCasLeaseBackend *backend, const SflCasLeaseDoc *doc,
		      SflCasLeasePrecondition precondition, const gchar *version,
		      GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
	SimLease *self = SIM_LEASE(backend);
	SimCall *call = sim_call_new(backend, self->replica, cancellable, callback, user_data,
				     sim_lease_write_run, self->unit);

	call->doc = sfl_cas_lease_doc_copy(doc);
	call->precondition = precondition;
	call->version = g_strdup(version);
}

static void
sim_lease_backend_init(SflCasLeaseBackendInterface *iface)
{
	iface->describe = sim_lease_describe;
	iface->read_async = sim_lease_read_async;
	iface->read_finish = sim_lease_doc_finish;
	iface->write_async = sim_lease_write_async;
	iface->write_finish = sim_lease_doc_finish;
	/* no release_async: the engine releases with a conditional write (holder "") */
	iface->flags = SFL_CAS_LEASE_BACKEND_NONE;
	iface->lifetime_name = "ttl";
}

static void
sim_lease_finalize(GObject *object)
{
	SimLease *self = SIM_LEASE(object);

	g_free(self->unit);
	g_free(self->what);
	G_OBJECT_CLASS(sim_lease_parent_class)->finalize(object);
}

static void
sim_lease_class_init(SimLeaseClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sim_lease_finalize;
}

static void
sim_lease_init(SimLease *self)
{
}

/* --- replicas -------------------------------------------------------------------------------- */

static guint
sim_unit(const gchar *name)
{
	return GPOINTER_TO_UINT(g_hash_table_lookup(world.unit_index, name)) - 1;
}

static SflCoordinator *
sim_lease_for(const gchar *unit, gpointer user_data)
{
	SimReplica *r = user_data;
	g_autoptr(SimLease) backend = g_object_new(SIM_TYPE_LEASE, NULL);

	backend->replica = r;
	backend->unit = g_strdup(unit);
	backend->what = g_strdup_printf("lease of %s", unit);
	return sfl_cas_lease_coordinator_new(SFL_CAS_LEASE_BACKEND(backend),
					     world.profile->ttl_usec, world.profile->renew_usec,
					     r->holder, world.clock);
}

static void
sim_work_stop(SimReplica *r, guint u)
{
	if (!r->works[u])
		return;
	r->works[u] = FALSE;
	world.owners[u]--;
}

static void
sim_acquired(SflShards *shards, const gchar *name, guint64 epoch, gpointer user_data)
{
	SimReplica *r = user_data;
	guint u = sim_unit(name);

	world.acquisitions++;
	if (world.owners[u] > 0)
		world.double_owned++;
	if (epoch <= world.last_epoch[u])
		world.epoch_regressions++;
	world.last_epoch[u] = epoch;
	if (!r->works[u]) {
		r->works[u] = TRUE;
		world.owners[u]++;
	}
}

/* the drain is instant: the unit is handed back at once */
static void
sim_release(SflShards *shards, const gchar *name, gpointer user_data)
{
	sim_work_stop(user_data, sim_unit(name));
	sfl_shards_released(shards, name);
}

static void
sim_lost(SflShards *shards, const gchar *name, gpointer user_data)
{
	world.losses++;
	sim_work_stop(user_data, sim_unit(name));
}

static const SflShardsHooks sim_hooks = { sim_acquired, sim_release, sim_lost };

static void
sim_members_changed(SflMembership *membership, const GPtrArray *live, gpointer user_data)
{
	SimReplica *r = user_data;

	sfl_shards_set_members(r->shards, live);
}

static SimReplica *
sim_replica_new(guint index)
{
	SimReplica *r = g_new0(SimReplica, 1);
	SimMemberStore *store = g_object_new(SIM_TYPE_MEMBER_STORE, NULL);

	r->index = index;
	r->holder = g_strdup_printf("replica-%03u", index);
	r->works = g_new0(gboolean, world.n_units);
	store->replica = r;
	r->store = SFL_MEMBER_STORE(store);
	r->shards = sfl_shards_new(r->holder, (const gchar *const *)world.units, sim_lease_for, r,
				   &sim_hooks, r);
	r->membership = sfl_membership_new(r->store, r->holder, world.clock,
					   world.profile->members_ttl_usec,
					   world.profile->members_renew_usec, NULL);
	sfl_membership_set_changed_func(r->membership, sim_members_changed, r);
	g_ptr_array_add(world.replicas, r);
	sfl_membership_start(r->membership);
	return r;
}

static void
sim_replica_free(SimReplica *r)
{
	sfl_membership_free(r->membership);
	sfl_shards_free(r->shards);
	g_clear_object(&r->store);
	g_free(r->works);
	g_free(r->holder);
	g_free(r);
}

static void
sim_work_stop_all(SimReplica *r)
{
	for (guint u = 0; u < world.n_units; u++)
		sim_work_stop(r, u);
}

/* a clean stop as sfl_sharding_stop_async() does it: the record first, then every lease given
 * up once its (here instant) drain is done */
static void
sim_replica_leave(SimReplica *r)
{
	r->gone = TRUE;
	sfl_membership_stop(r->membership);
	sim_work_stop_all(r);
	sfl_shards_stop(r->shards);
}

/* the process vanishes: no write of it lands any more, its work is gone with it */
static void
sim_replica_crash(SimReplica *r)
{
	r->gone = TRUE;
	r->crashed = TRUE;
	sim_work_stop_all(r);
	g_clear_pointer(&r->membership, sfl_membership_free);
	g_clear_pointer(&r->shards, sfl_shards_free);
}

/* --- driving --------------------------------------------------------------------------------- */

static void
sim_drain(void)
{
	while (g_main_context_iteration(NULL, FALSE))
		;
}

static void
sim_step(void)
{
	sfl_fake_clock_advance(world.clock, SIM_STEP_USEC);
	sim_drain();
}

static gint64
sim_now(void)
{
	return sfl_clock_monotonic_usec(world.clock);
}

/* the true member set, sorted */
static GPtrArray *
sim_true_members(void)
{
	GPtrArray *live = g_ptr_array_new();

	for (guint i = 0; i < world.replicas->len; i++) {
		SimReplica *r = world.replicas->pdata[i];

		if (!r->gone)
			g_ptr_array_add(live, r->holder);
	}
	return live;
}

/* per unit the replica (index into world.replicas) the assignment over the true set names */
static guint *
sim_expected(void)
{
	g_autoptr(GPtrArray) live = sim_true_members();
	g_autofree gint *owner = sfl_shard_assign((const gchar *const *)world.units, world.n_units,
						  (const gchar *const *)live->pdata, live->len);
	guint *out = g_new(guint, world.n_units);

	for (guint u = 0; u < world.n_units; u++) {
		const gchar *holder = live->pdata[owner[u]];

		for (guint i = 0; i < world.replicas->len; i++)
			if (((SimReplica *)world.replicas->pdata[i])->holder == holder)
				out[u] = i;
	}
	return out;
}

static gboolean
sim_units_converged(const guint *expected)
{
	for (guint u = 0; u < world.n_units; u++) {
		const SimReplica *r = world.replicas->pdata[expected[u]];

		if (world.owners[u] != 1 || !r->works[u])
			return FALSE;
	}
	return TRUE;
}

/* every live replica's view is the true member set */
static gboolean
sim_views_converged(void)
{
	g_autoptr(GPtrArray) truth = sim_true_members();

	for (guint i = 0; i < world.replicas->len; i++) {
		SimReplica *r = world.replicas->pdata[i];
		const GPtrArray *live = NULL;

		if (r->gone)
			continue;
		live = sfl_membership_get_live(r->membership);
		if (live->len != truth->len)
			return FALSE;
		for (guint m = 0; m < live->len; m++)
			if (!g_str_equal(live->pdata[m], truth->pdata[m]))
				return FALSE;
	}
	return TRUE;
}

typedef struct {
	gint64 views_usec; /* -1: never within the limit */
	gint64 units_usec;
	guint acquisitions;
	guint losses;
	guint double_owned;
	guint64 releases;
} SimConvergence;

/* steps until the units are converged; the clock of both answers starts now */
static SimConvergence
sim_converge(const guint *expected, gint64 limit_usec)
{
	SimConvergence c = { -1,
			     -1,
			     world.acquisitions,
			     world.losses,
			     world.double_owned,
			     world.counters.lease_releases };
	gint64 t0 = sim_now();

	sim_drain();
	for (;;) {
		if (c.views_usec < 0 && sim_views_converged())
			c.views_usec = sim_now() - t0;
		if (sim_units_converged(expected)) {
			c.units_usec = sim_now() - t0;
			break;
		}
		if (sim_now() - t0 >= limit_usec)
			break;
		sim_step();
	}
	c.acquisitions = world.acquisitions - c.acquisitions;
	c.losses = world.losses - c.losses;
	c.double_owned = world.double_owned - c.double_owned;
	c.releases = world.counters.lease_releases - c.releases;
	return c;
}

static void
sim_advance(gint64 usec)
{
	for (gint64 t = 0; t < usec; t += SIM_STEP_USEC)
		sim_step();
}

static gchar *
sim_secs(gint64 usec)
{
	if (usec < 0)
		return g_strdup("did not converge");
	return g_strdup_printf("%.1f s", (gdouble)usec / G_USEC_PER_SEC);
}

/* --- the world ------------------------------------------------------------------------------- */

static void
sim_world_setup(const SimProfile *profile, gint64 latency_usec, guint n_units)
{
	world.profile = profile;
	world.latency_usec = latency_usec;
	world.clock = sfl_fake_clock_new(G_GINT64_CONSTANT(1800000000) * G_USEC_PER_SEC);
	world.records = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	world.docs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					   (GDestroyNotify)sfl_cas_lease_doc_free);
	world.next_version = 0;
	memset(&world.counters, 0, sizeof(world.counters));
	world.units = g_new0(gchar *, n_units + 1);
	world.n_units = n_units;
	world.unit_index = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint u = 0; u < n_units; u++) {
		/* the shapes of real unit ids: event types, objects and topics of a few orgs */
		static const gchar *const kinds[] = { "eventlogfile:Type", "objects:Object",
						      "pubsub:/event/Topic" };
		gchar *name = g_strdup_printf("org=o%u:%s%u", u % 7, kinds[u % 3], u);

		world.units[u] = name;
		g_hash_table_insert(world.unit_index, name, GUINT_TO_POINTER(u + 1));
	}
	world.replicas = g_ptr_array_new();
	world.owners = g_new0(guint, n_units);
	world.last_epoch = g_new0(guint64, n_units);
	world.double_owned = 0;
	world.acquisitions = 0;
	world.losses = 0;
}

static void
sim_world_teardown(void)
{
	for (guint i = 0; i < world.replicas->len; i++) {
		SimReplica *r = world.replicas->pdata[i];

		if (!r->gone)
			sim_replica_leave(r);
	}
	/* the releases and the runs' ends complete on the loop */
	sim_drain();
	sim_advance(world.profile->renew_usec);
	for (guint i = 0; i < world.replicas->len; i++)
		sim_replica_free(world.replicas->pdata[i]);
	sim_drain();
	g_ptr_array_unref(world.replicas);
	g_hash_table_unref(world.unit_index);
	g_strfreev(world.units);
	g_hash_table_unref(world.records);
	g_hash_table_unref(world.docs);
	g_free(world.owners);
	g_free(world.last_epoch);
	g_clear_pointer(&world.clock, sfl_clock_unref);
}

typedef enum { SIM_JOIN, SIM_LEAVE, SIM_CRASH } SimEvent;

static const gchar *const sim_event_names[] = { "join", "clean leave", "crash" };

/* units whose expected owner differs between two assignments (by holder) */
static guint
sim_moved(const guint *before, const guint *after, guint n)
{
	guint moved = 0;

	for (guint u = 0; u < n; u++)
		moved += before[u] != after[u];
	return moved;
}

static void
sim_print_steady(guint n_replicas, gint64 window_usec)
{
	SimCounters start = world.counters;
	gdouble secs = (gdouble)window_usec / G_USEC_PER_SEC;
	gdouble lw = 0;
	gdouble lr = 0;
	gdouble mw = 0;
	gdouble ml = 0;

	sim_advance(window_usec);
	lw = (gdouble)(world.counters.lease_writes - start.lease_writes) / secs;
	lr = (gdouble)(world.counters.lease_reads - start.lease_reads) / secs;
	mw = (gdouble)(world.counters.member_publishes - start.member_publishes) / secs;
	ml = (gdouble)(world.counters.member_lists - start.member_lists) / secs;
	g_print("  steady state (%.0f s window): writes %.1f/s total (unit leases %.1f + "
		"membership "
		"records %.1f), %.2f/s per replica; reads %.1f/s total (unit leases %.1f + "
		"member listings %.1f), %.2f/s per replica; conflicts %" G_GUINT64_FORMAT "\n",
		secs, lw + mw, lw, mw, (lw + mw) / n_replicas, lr + ml, lr, ml,
		(lr + ml) / n_replicas, world.counters.lease_conflicts - start.lease_conflicts);
}

static void
sim_scenario(const SimProfile *profile, gint64 latency_usec, guint n_replicas, guint n_units,
	     SimEvent event, gboolean steady)
{
	/* a crash: members_ttl until it drops out, a round, then a ttl of staleness */
	gint64 limit = 10 * (profile->members_ttl_usec + profile->ttl_usec);
	g_autofree guint *before = NULL;
	g_autofree guint *after = NULL;
	g_autofree gchar *up = NULL;
	g_autofree gchar *views = NULL;
	g_autofree gchar *units = NULL;
	SimConvergence c;
	guint moved = 0;
	guint n_after = event == SIM_JOIN ? n_replicas + 1 : n_replicas - 1;
	gdouble ideal = (gdouble)n_units / MAX(n_replicas, n_after);

	sim_world_setup(profile, latency_usec, n_units);
	for (guint i = 0; i < n_replicas; i++)
		sim_replica_new(i);
	before = sim_expected();
	c = sim_converge(before, limit);
	up = sim_secs(c.units_usec);
	if (steady) {
		g_print("  start of %u replicas at once: every unit led by its member after %s\n",
			n_replicas, up);
		sim_advance(profile->members_ttl_usec);
		sim_print_steady(n_replicas, MAX(6 * profile->renew_usec, 60 * G_USEC_PER_SEC));
	} else {
		/* past the start's own transients */
		sim_advance(profile->members_ttl_usec);
	}

	switch (event) {
	case SIM_JOIN:
		sim_replica_new(n_replicas);
		break;
	case SIM_LEAVE:
		sim_replica_leave(world.replicas->pdata[n_replicas / 2]);
		break;
	case SIM_CRASH:
		sim_replica_crash(world.replicas->pdata[n_replicas / 2]);
		break;
	}
	after = sim_expected();
	/* a joiner's index is past the old array: compare by replica index, which is stable */
	moved = sim_moved(before, after, n_units);
	c = sim_converge(after, limit);
	views = sim_secs(c.views_usec);
	units = sim_secs(c.units_usec);
	g_print("  %-11s (%u -> %u): all views agree after %s, every unit led by its member after "
		"%s; %u units moved (1/N ideal %.1f, ratio %.2f), %u acquisitions, "
		"%" G_GUINT64_FORMAT
		" leases released, %u lost, %u acquisitions of a unit still worked elsewhere\n",
		sim_event_names[event], n_replicas, n_after, views, units, moved, ideal,
		moved / ideal, c.acquisitions, c.releases, c.losses, c.double_owned);
	sim_world_teardown();
}

/* --- logs ------------------------------------------------------------------------------------ */

/* the real code logs every acquisition and handover: counted, not printed; criticals shown */
static GLogWriterOutput
sim_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
		return g_log_writer_default(level, fields, n_fields, user_data);
	if (level & G_LOG_LEVEL_WARNING)
		world.warnings++;
	if (g_getenv("SIM_VERBOSE") != NULL)
		return g_log_writer_standard_streams(level, fields, n_fields, user_data);
	return G_LOG_WRITER_HANDLED;
}

int
main(int argc, char **argv)
{
	guint n_replicas = argc > 1 ? (guint)g_ascii_strtoull(argv[1], NULL, 10) : 50;
	guint n_units = argc > 2 ? (guint)g_ascii_strtoull(argv[2], NULL, 10) : 1000;
	gint64 wall0 = g_get_monotonic_time();

	if (n_replicas < 2 || n_units < 1) {
		g_printerr("usage: %s [replicas (>= 2) [units (>= 1)]]\n", argv[0]);
		return 2;
	}
	g_log_set_writer_func(sim_log_writer, NULL, NULL);
	g_print("sharding simulation: %u replicas x %u units, real SflMembership + SflShards + "
		"SflCasLeaseCoordinator over in-memory stores, fake clock in %d ms "
		"steps, instant drains\n",
		n_replicas, n_units, SIM_STEP_USEC / 1000);
	for (guint p = 0; p < G_N_ELEMENTS(sim_profiles); p++) {
		const SimProfile *profile = &sim_profiles[p];
		gint64 t0 = g_get_monotonic_time();

		g_print("%s: lease ttl %.0f s, renew %.0f s; members_ttl %.0f s, records renewed "
			"every %.0f s\n",
			profile->name, (gdouble)profile->ttl_usec / G_USEC_PER_SEC,
			(gdouble)profile->renew_usec / G_USEC_PER_SEC,
			(gdouble)profile->members_ttl_usec / G_USEC_PER_SEC,
			(gdouble)profile->members_renew_usec / G_USEC_PER_SEC);
		for (guint l = 0; l < G_N_ELEMENTS(sim_latencies); l++) {
			gint64 latency = sim_latencies[l];

			if (latency > 0)
				g_print(" store latency %" G_GINT64_FORMAT " ms (each operation "
					"answers one step after its call):\n",
					latency / 1000);
			else
				g_print(" store latency 0 (each operation answers on the next idle "
					"of the same step):\n");
			sim_scenario(profile, latency, n_replicas, n_units, SIM_JOIN, TRUE);
			sim_scenario(profile, latency, n_replicas, n_units, SIM_LEAVE, FALSE);
			sim_scenario(profile, latency, n_replicas, n_units, SIM_CRASH, FALSE);
		}
		g_print("  (%.1f s of real time)\n",
			(gdouble)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC);
	}
	g_print("epoch regressions %u, warnings logged %u, %.1f s of real time in all\n",
		world.epoch_regressions, world.warnings,
		(gdouble)(g_get_monotonic_time() - wall0) / G_USEC_PER_SEC);
	return 0;
}
