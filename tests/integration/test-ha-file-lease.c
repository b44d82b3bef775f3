/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestHa"

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-test-sim.h"

/*
 * Real processes, real files, real signals: replicas of `sf2loki run` under file_lease on one
 * directory. Exactly one leads; SIGKILL of the leader hands over within ttl + renew interval;
 * a leader frozen with SIGSTOP past its ttl surrenders on SIGCONT without writing.
 */

#define TTL_MS	 2000
#define RENEW_MS 600
/* generous: these wait for events, they do not time them */
#define EVENT_TIMEOUT_US (30 * G_USEC_PER_SEC)

typedef SflTestReplica Replica;

typedef struct {
	gchar *dir;
	gchar *config;
	gchar *lease;
	GPtrArray *replicas;
	gchar *sf_base; /* NULL: the Salesforce simulator could not start, the test was skipped */
	SflTestSim *sf_proc;
} Fixture;

static Replica *
replica_start(Fixture *fx, const gchar *name)
{
	const gchar *env[] = { "SF2LOKI_COORDINATE__FILE_LEASE__HOLDER_ID", name, NULL };

	return sfl_test_replica_start(fx->replicas, name, fx->config, env);
}

typedef gboolean (*Cond)(Fixture *fx, gpointer data);

#define wait_until(fx, cond, data)                                                                 \
	sfl_test_wait_fixture((SflTestFixtureCond)(cond), (fx), (data), EVENT_TIMEOUT_US)

typedef struct {
	gchar *holder;
	guint64 epoch;
	gchar *expires_at;
} Lease;

static gboolean
read_lease(Fixture *fx, Lease *lease)
{
	g_autofree gchar *text = NULL;
	json_error_t jerr;
	g_autoptr(json_t) obj = NULL;

	if (!g_file_get_contents(fx->lease, &text, NULL, NULL))
		return FALSE;
	obj = json_loads(text, 0, &jerr);
	if (obj == NULL)
		return FALSE;
	g_free(lease->holder);
	g_free(lease->expires_at);
	lease->holder = g_strdup(json_string_value(json_object_get(obj, "holder")));
	lease->expires_at = g_strdup(json_string_value(json_object_get(obj, "expires_at")));
	lease->epoch = (guint64)json_integer_value(json_object_get(obj, "epoch"));
	return lease->holder != NULL;
}

static void
lease_clear(Lease *lease)
{
	g_free(lease->holder);
	g_free(lease->expires_at);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Lease, lease_clear)

typedef struct {
	gchar *last;
	guint renewals;
} RenewWatch;

/* the leader renews: expires_at changes; count two renewals */
static gboolean
renewed_twice(Fixture *fx, gpointer data)
{
	RenewWatch *w = data;
	g_auto(Lease) lease = { 0 };
	if (!read_lease(fx, &lease))
		return FALSE;
	if (w->last != NULL && g_strcmp0(w->last, lease.expires_at) != 0)
		w->renewals++;
	g_free(w->last);
	w->last = g_strdup(lease.expires_at);
	return w->renewals >= 2;
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *yaml = NULL;

	fx->dir = g_dir_make_tmp("sfl-test-ha-XXXXXX", &error);
	g_assert_no_error(error);
	fx->config = g_build_filename(fx->dir, "config.yaml", NULL);
	fx->lease = g_build_filename(fx->dir, "leader.lease", NULL);
	fx->replicas = sfl_test_replicas_new();
	/* a replica needs a source, or it exits at once; the source needs a token */
	fx->sf_base = sfl_test_sf_sim_start(NULL, &fx->sf_proc);
	if (fx->sf_base == NULL)
		return;
	yaml = g_strdup_printf(SFL_TEST_SF_SIM_SALESFORCE SFL_TEST_IDLE_SOURCES
			       "sink:\n"
			       "  loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}\n"
			       "state:\n"
			       "  file: {path: '%s/state.json'}\n"
			       "coordinate:\n"
			       "  type: file_lease\n"
			       "  file_lease: {path: '%s', ttl: %dms, renew_interval: %dms}\n",
			       fx->sf_base, fx->dir, fx->lease, TTL_MS, RENEW_MS);
	g_file_set_contents(fx->config, yaml, -1, &error);
	g_assert_no_error(error);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	g_autoptr(GDir) dir = NULL;
	const gchar *name;

	/* each replica is killed and read to its EOF: the pending line reads point at it */
	g_ptr_array_unref(fx->replicas);
	while (g_main_context_iteration(NULL, FALSE))
		;
	sfl_test_sim_stop(&fx->sf_proc);
	g_free(fx->sf_base);
	dir = g_dir_open(fx->dir, 0, NULL);
	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *path = g_build_filename(fx->dir, name, NULL);
		g_unlink(path);
	}
	g_rmdir(fx->dir);
	g_free(fx->dir);
	g_free(fx->config);
	g_free(fx->lease);
}

static void
test_one_leader_and_kill(Fixture *fx, gconstpointer data)
{
	Replica *a = NULL;
	Replica *b = NULL;
	Replica *leader;
	Replica *standby;
	RenewWatch watch = { 0 };
	g_auto(Lease) lease = { 0 };
	gint64 killed_at;
	guint64 first_epoch;

	if (fx->sf_base == NULL)
		return;
	a = replica_start(fx, "replica-a");
	b = replica_start(fx, "replica-b");

	g_assert_true(wait_until(fx, sfl_test_replicas_lead_cond, fx->replicas));
	leader = sfl_test_replicas_leader(fx->replicas);
	standby = leader == a ? b : a;
	first_epoch = leader->epoch;
	g_assert_cmpuint(first_epoch, >=, 1);
	/* while the leader renews twice, the standby never leads */
	g_assert_true(wait_until(fx, renewed_twice, &watch));
	g_free(watch.last);
	g_assert_cmpuint(standby->acquired, ==, 0);
	g_assert_true(read_lease(fx, &lease));
	g_assert_cmpstr(lease.holder, ==, leader->name);
	g_assert_cmpuint(lease.epoch, ==, first_epoch);

	/* SIGKILL: no surrender, the lease just stops being renewed */
	killed_at = g_get_monotonic_time();
	g_subprocess_force_exit(leader->proc);
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, standby));
	g_test_message("failover after %" G_GINT64_FORMAT " ms (ttl %d ms, renew %d ms)",
		       (g_get_monotonic_time() - killed_at) / 1000, TTL_MS, RENEW_MS);
	/* a bump, never a reuse */
	g_assert_cmpuint(standby->epoch, ==, first_epoch + 1);
	g_assert_true(read_lease(fx, &lease));
	g_assert_cmpstr(lease.holder, ==, standby->name);
}

static void
test_frozen_leader_surrenders(Fixture *fx, gconstpointer data)
{
	Replica *a = NULL;
	Replica *leader;
	Replica *other;
	g_auto(Lease) lease = { 0 };
	guint64 new_epoch;

	if (fx->sf_base == NULL)
		return;
	a = replica_start(fx, "replica-a");
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, a));
	leader = a;
	other = replica_start(fx, "replica-b");

	/* freeze the leader past its ttl; the standby takes over */
	g_subprocess_send_signal(leader->proc, SIGSTOP);
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, other));
	new_epoch = other->epoch;
	g_assert_cmpuint(new_epoch, >, leader->epoch);

	/* thawed, the old leader notices it was frozen past the ttl and surrenders, no write */
	g_subprocess_send_signal(leader->proc, SIGCONT);
	g_assert_true(wait_until(fx, sfl_test_replica_lost_cond, leader));
	g_assert_true(read_lease(fx, &lease));
	g_assert_cmpstr(lease.holder, ==, other->name);
	g_assert_cmpuint(lease.epoch, ==, new_epoch);
	g_assert_true(sfl_test_replica_leads_cond(fx, other));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/sfl/ha/file-lease/one-leader-and-kill", Fixture, NULL, fixture_setup,
		   test_one_leader_and_kill, fixture_teardown);
	g_test_add("/sfl/ha/file-lease/frozen-leader-surrenders", Fixture, NULL, fixture_setup,
		   test_frozen_leader_surrenders, fixture_teardown);
	return g_test_run();
}
