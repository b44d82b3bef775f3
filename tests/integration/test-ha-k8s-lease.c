/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestHaK8s"

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-k8s-lease-doctor.h"
#include "sfl-test-sim.h"

/*
 * Real processes against the Lease API simulator (HTTPS with its own CA, bearer tokens,
 * resourceVersion compare-and-swap): replicas of `sf2loki run` under k8s_lease with one shared
 * file store. Exactly one leads; SIGKILL of the leader hands over within lease_duration + renew
 * interval; a leader frozen past its duration surrenders on SIGCONT without writing the Lease;
 * deleting the Lease under a running pair never rewinds the epoch; and with the Salesforce and
 * Loki simulators, a commit under k8s_lease + file store takes the epoch-fenced path.
 */

#define DURATION_MS 2000
#define RENEW_MS    600
/* generous: these wait for events, they do not time them */
#define EVENT_TIMEOUT_US (60 * G_USEC_PER_SEC)
#define LEASE		 "default/sf2loki-leader"

typedef SflTestReplica Replica;

typedef struct {
	gchar *dir;
	gchar *simdir;
	gchar *state;
	gchar *k8s_base; /* the simulator's control URL */
	SflTestSim *k8s_proc;
	gchar *sf_base;
	SflTestSim *sf_proc;
	gchar *loki_base;
	SflTestSim *loki_proc;
	gchar *key_path;
	SflCurlLoop *loop;
	GPtrArray *replicas;
	gboolean skip;
} Fixture;

/* a config for one replica: its own kubeconfig flavour, the shared state file */
static gchar *
write_config(Fixture *fx, const gchar *name, const gchar *kubeconfig, const gchar *sources)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *file = g_strdup_printf("config-%s.yaml", name);
	gchar *path = g_build_filename(fx->dir, file, NULL);
	g_autofree gchar *kube = g_build_filename(fx->simdir, kubeconfig, NULL);
	g_autofree gchar *yaml = NULL;

	if (sources == NULL) {
		/* a replica needs a source, or it exits at once; the source needs only a token */
		if (fx->sf_base == NULL)
			fx->sf_base = sfl_test_sf_sim_start(NULL, &fx->sf_proc);
		g_assert_nonnull(fx->sf_base);
		yaml = g_strdup_printf(
			SFL_TEST_SF_SIM_SALESFORCE SFL_TEST_IDLE_SOURCES
			"sink:\n"
			"  loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}\n"
			"state:\n"
			"  file: {path: '%s'}\n"
			"service: {log_format: json}\n"
			"coordinate:\n"
			"  type: k8s_lease\n"
			"  k8s_lease: {identity: %s, kubeconfig: '%s', lease_duration: %dms, "
			"renew_interval: %dms}\n",
			fx->sf_base, fx->state, name, kube, DURATION_MS, RENEW_MS);
	} else {
		SflTestSims sims = { .sf_base = fx->sf_base, .key_path = fx->key_path };
		g_autofree gchar *head = sfl_test_sims_config(&sims, NULL, fx->loki_base);

		yaml = g_strdup_printf(
			"%s"
			"    batch: {flush_interval: 100ms}\n"
			"state:\n"
			"  file: {path: '%s'}\n"
			"service: {log_format: json, shutdown_grace: 5s}\n"
			"coordinate:\n"
			"  type: k8s_lease\n"
			"  k8s_lease: {identity: %s, kubeconfig: '%s', lease_duration: %dms, "
			"renew_interval: %dms}\n"
			"sources:\n%s",
			head, fx->state, name, kube, DURATION_MS, RENEW_MS, sources);
	}
	g_file_set_contents(path, yaml, -1, &error);
	g_assert_no_error(error);
	return path;
}

static Replica *
replica_start_with(Fixture *fx, const gchar *name, const gchar *kubeconfig, const gchar *sources)
{
	g_autofree gchar *config = write_config(fx, name, kubeconfig, sources);

	return sfl_test_replica_start(fx->replicas, name, config, NULL);
}

static Replica *
replica_start(Fixture *fx, const gchar *name, const gchar *kubeconfig)
{
	return replica_start_with(fx, name, kubeconfig, NULL);
}

/* `sf2loki state set KEY VALUE --force` on the shared store (what a leader's commit records) */
static void
state_set(Fixture *fx, const gchar *key, const gchar *value)
{
	g_autofree gchar *config = write_config(fx, "cli", "kubeconfig", NULL);
	const gchar *args[] = { "state", "set", key, value, "--force", "--config", config, NULL };
	g_autoptr(GSubprocess) proc = sfl_test_bin_spawn(
		G_SUBPROCESS_FLAGS_STDERR_SILENCE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE, args, NULL);
	g_autoptr(GError) error = NULL;

	g_assert_true(g_subprocess_wait_check(proc, NULL, &error));
	g_assert_no_error(error);
}

static json_t *
state_doc(Fixture *fx)
{
	g_autofree gchar *text = NULL;
	json_error_t jerr;

	if (!g_file_get_contents(fx->state, &text, NULL, NULL))
		return json_object();
	return json_loads(text, 0, &jerr);
}

typedef gboolean (*Cond)(Fixture *fx, gpointer data);

#define wait_until(fx, cond, data)                                                                 \
	sfl_test_wait_fixture((SflTestFixtureCond)(cond), (fx), (data), EVENT_TIMEOUT_US)

/* the simulator's view: the Lease (or NULL) and every write it answered */
static json_t *
sim_state(Fixture *fx)
{
	return sfl_test_sim_control(fx->loop, fx->k8s_base, "GET", "/control/state", NULL);
}

static json_t *
sim_lease(json_t *state)
{
	return json_object_get(json_object_get(state, "leases"), LEASE);
}

static const gchar *
lease_holder(json_t *lease)
{
	return json_string_value(json_object_get(json_object_get(lease, "spec"), "holderIdentity"));
}

static json_int_t
lease_transitions(json_t *lease)
{
	return json_integer_value(
		json_object_get(json_object_get(lease, "spec"), "leaseTransitions"));
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	fx->dir = g_dir_make_tmp("sfl-test-ha-k8s-XXXXXX", &error);
	g_assert_no_error(error);
	fx->simdir = g_build_filename(fx->dir, "sim", NULL);
	g_assert_cmpint(g_mkdir(fx->simdir, 0700), ==, 0);
	fx->state = g_build_filename(fx->dir, "state.json", NULL);
	fx->replicas = sfl_test_replicas_new();
	fx->loop = sfl_curl_loop_new();
	{
		const gchar *args[] = { "--dir", fx->simdir, NULL };
		fx->k8s_base = sfl_test_k8s_sim_start(args, &fx->k8s_proc);
	}
	fx->skip = fx->k8s_base == NULL;
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	/* each replica is killed and read to its EOF: the pending line reads point at it */
	g_ptr_array_unref(fx->replicas);
	sfl_test_sim_stop(&fx->k8s_proc);
	sfl_test_sim_stop(&fx->sf_proc);
	sfl_test_sim_stop(&fx->loki_proc);
	sfl_test_loop_dir_clear(&fx->loop, &fx->dir);
	g_free(fx->simdir);
	g_free(fx->state);
	g_free(fx->k8s_base);
	g_free(fx->sf_base);
	g_free(fx->loki_base);
	g_free(fx->key_path);
}

/* --- one leader, kill -9 ------------------------------------------------------------------- */

typedef struct {
	gchar *last_rv;
	guint renewals;
} RenewWatch;

static gboolean
renewed_twice(Fixture *fx, gpointer data)
{
	RenewWatch *w = data;
	g_autoptr(json_t) state = sim_state(fx);
	json_t *lease = sim_lease(state);
	const gchar *rv = json_string_value(
		json_object_get(json_object_get(lease, "metadata"), "resourceVersion"));

	if (rv == NULL)
		return FALSE;
	if (w->last_rv != NULL && g_strcmp0(w->last_rv, rv) != 0)
		w->renewals++;
	g_free(w->last_rv);
	w->last_rv = g_strdup(rv);
	return w->renewals >= 2;
}

static void
test_one_leader_and_kill(Fixture *fx, gconstpointer data)
{
	Replica *a;
	Replica *b;
	Replica *leader;
	Replica *standby;
	RenewWatch watch = { 0 };
	g_autoptr(json_t) state = NULL;
	gint64 killed_at;
	gint64 failover_ms;
	guint64 first_epoch;

	if (fx->skip)
		return;
	/* two kubeconfig flavours: CA file + token file, and inline CA data + token */
	a = replica_start(fx, "pod-a", "kubeconfig");
	b = replica_start(fx, "pod-b", "kubeconfig-inline");
	g_assert_true(wait_until(fx, sfl_test_replicas_lead_cond, fx->replicas));
	leader = sfl_test_replicas_leader(fx->replicas);
	standby = leader == a ? b : a;
	first_epoch = leader->epoch;
	g_assert_cmpuint(first_epoch, ==, 1);
	g_assert_true(wait_until(fx, renewed_twice, &watch));
	g_free(watch.last_rv);
	g_assert_cmpuint(standby->acquired, ==, 0);
	state = sim_state(fx);
	g_assert_cmpstr(lease_holder(sim_lease(state)), ==, leader->name);
	g_assert_cmpint(lease_transitions(sim_lease(state)), ==, 1);
	/* the shared file store is named in a startup warning */
	g_assert_true(sfl_test_replica_logged(a, "k8s_lease with state.store: file"));

	killed_at = g_get_monotonic_time();
	g_subprocess_force_exit(leader->proc);
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, standby));
	failover_ms = (g_get_monotonic_time() - killed_at) / 1000;
	g_test_message("failover after %" G_GINT64_FORMAT " ms (duration %d ms, renew %d ms)",
		       failover_ms, DURATION_MS, RENEW_MS);
	g_assert_cmpuint(standby->epoch, ==, first_epoch + 1);
	g_clear_pointer(&state, json_decref);
	state = sim_state(fx);
	g_assert_cmpstr(lease_holder(sim_lease(state)), ==, standby->name);
	g_assert_cmpint(lease_transitions(sim_lease(state)), ==, 2);
}

/* --- SIGSTOP past the duration --------------------------------------------------------------- */

/* no write by @holder answered 200 after the write at @from */
static guint
writes_by_after(json_t *state, const gchar *holder, gsize from)
{
	json_t *writes = json_object_get(state, "writes");
	guint n = 0;

	for (gsize i = from; i < json_array_size(writes); i++) {
		json_t *w = json_array_get(writes, i);
		if (g_strcmp0(json_string_value(json_object_get(w, "holder")), holder) == 0)
			n++;
	}
	return n;
}

static void
test_frozen_leader_surrenders(Fixture *fx, gconstpointer data)
{
	Replica *a;
	Replica *b;
	g_autoptr(json_t) state = NULL;
	g_autoptr(json_t) after = NULL;
	gsize n_writes;

	if (fx->skip)
		return;
	a = replica_start(fx, "pod-a", "kubeconfig");
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, a));
	b = replica_start(fx, "pod-b", "kubeconfig-inline");

	g_subprocess_send_signal(a->proc, SIGSTOP);
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, b));
	g_assert_cmpuint(b->epoch, ==, a->epoch + 1);
	state = sim_state(fx);
	n_writes = json_array_size(json_object_get(state, "writes"));

	/* thawed, it notices it slept through its duration and surrenders without a write */
	g_subprocess_send_signal(a->proc, SIGCONT);
	g_assert_true(wait_until(fx, sfl_test_replica_lost_cond, a));
	g_assert_true(sfl_test_replica_logged(a, "was this process stalled?"));
	after = sim_state(fx);
	g_assert_cmpuint(writes_by_after(after, "pod-a", n_writes), ==, 0);
	g_assert_cmpstr(lease_holder(sim_lease(after)), ==, "pod-b");
	g_assert_cmpint(lease_transitions(sim_lease(after)), ==, (json_int_t)b->epoch);
	g_assert_true(sfl_test_replica_leads_cond(fx, b));
}

/* --- a clean stop hands the Lease over ------------------------------------------------------- */

static gboolean
replica_exited(Fixture *fx, gpointer data)
{
	Replica *r = data;
	return r->eof;
}

static void
test_clean_stop_releases(Fixture *fx, gconstpointer data)
{
	Replica *a;
	Replica *b;
	g_autoptr(json_t) state = NULL;
	json_t *writes;
	gboolean released = FALSE;

	if (fx->skip)
		return;
	a = replica_start(fx, "pod-a", "kubeconfig");
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, a));
	b = replica_start(fx, "pod-b", "kubeconfig-inline");
	g_subprocess_send_signal(a->proc, SIGTERM);
	g_assert_true(wait_until(fx, replica_exited, a));
	g_assert_true(g_subprocess_wait(a->proc, NULL, NULL));
	g_assert_true(g_subprocess_get_if_exited(a->proc));
	g_assert_cmpint(g_subprocess_get_exit_status(a->proc), ==, 0);
	/* the leader cleared its holder (keeping the epoch) before it exited */
	state = sim_state(fx);
	writes = json_object_get(state, "writes");
	for (gsize i = 0; i < json_array_size(writes); i++) {
		json_t *w = json_array_get(writes, i);
		if (g_strcmp0(json_string_value(json_object_get(w, "holder")), "") == 0 &&
		    json_integer_value(json_object_get(w, "status")) == 200 &&
		    json_integer_value(json_object_get(w, "transitions")) == (json_int_t)a->epoch)
			released = TRUE;
	}
	g_assert_true(released);
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, b));
	g_assert_cmpuint(b->epoch, ==, a->epoch + 1);
}

/* --- delete the Lease under a running pair --------------------------------------------------- */

static gboolean
lease_recreated(Fixture *fx, gpointer data)
{
	g_autoptr(json_t) state = sim_state(fx);
	json_t *lease = sim_lease(state);

	return lease != NULL && lease_holder(lease) != NULL && lease_holder(lease)[0] != '\0' &&
	       lease_transitions(lease) > 0;
}

static gboolean
a_new_term(Fixture *fx, gpointer data)
{
	guint *terms_before = data;
	guint terms = 0;

	for (guint i = 0; i < fx->replicas->len; i++) {
		Replica *r = g_ptr_array_index(fx->replicas, i);
		terms += r->acquired;
	}
	return terms > *terms_before && sfl_test_replicas_lead_cond(fx, fx->replicas);
}

static void
test_lease_deleted(Fixture *fx, gconstpointer data)
{
	Replica *leader;
	g_autoptr(json_t) state = NULL;
	guint terms = 0;
	guint64 epoch;

	if (fx->skip)
		return;
	/* the store remembers epoch 5 (a Lease that was lost before): the first win writes 6 */
	state_set(fx, "__fence_epoch__", "5");
	replica_start(fx, "pod-a", "kubeconfig");
	replica_start(fx, "pod-b", "kubeconfig-inline");
	g_assert_true(wait_until(fx, sfl_test_replicas_lead_cond, fx->replicas));
	leader = sfl_test_replicas_leader(fx->replicas);
	g_assert_cmpuint(leader->epoch, ==, 6);
	state = sim_state(fx);
	g_assert_cmpint(lease_transitions(sim_lease(state)), ==, 6);
	/* what the leader's commits record */
	state_set(fx, "__fence_epoch__", "6");

	for (guint i = 0; i < fx->replicas->len; i++)
		terms += ((Replica *)g_ptr_array_index(fx->replicas, i))->acquired;
	json_decref(sfl_test_sim_control(fx->loop, fx->k8s_base, "POST", "/control/delete", "{}"));
	g_assert_true(wait_until(fx, sfl_test_replica_lost_cond, leader));
	/* its next renewal finds the Lease gone, or already recreated by the standby */
	g_assert_true(sfl_test_replica_logged(leader, "was deleted") ||
		      sfl_test_replica_logged(leader, "is now held by"));
	/* whoever recreates it continues above the store's epoch: never 1 */
	g_assert_true(wait_until(fx, a_new_term, &terms));
	g_assert_true(wait_until(fx, lease_recreated, NULL));
	epoch = sfl_test_replicas_leader(fx->replicas)->epoch;
	g_assert_cmpuint(epoch, ==, 7);
	g_clear_pointer(&state, json_decref);
	state = sim_state(fx);
	g_assert_cmpint(lease_transitions(sim_lease(state)), ==, 7);
}

/* --- app wiring: a commit under k8s_lease + file store is epoch-fenced ----------------------- */

static gboolean
loki_has_entries(Fixture *fx, gpointer data)
{
	g_autoptr(json_t) summary =
		sfl_test_sim_control(fx->loop, fx->loki_base, "GET", "/control/summary", NULL);
	return json_integer_value(json_object_get(summary, "entries")) > 0;
}

static gboolean
logged_fenced(Fixture *fx, gpointer data)
{
	return sfl_test_replica_logged(data, "checkpoint commit fenced");
}

/* the Salesforce and Loki simulators with one ELF file; FALSE when skipped */
static gboolean
start_pipeline_sims(Fixture *fx)
{
	g_autofree gchar *pub_path = g_build_filename(fx->dir, "pub.pem", NULL);
	g_autofree gchar *dataset_path = g_build_filename(fx->dir, "dataset.json", NULL);
	g_autofree gchar *dataset = sfl_test_elf_dataset("0ATSIM00000K8S01", 3, 20, 3);
	g_autoptr(GError) error = NULL;

	fx->key_path = g_build_filename(fx->dir, "key.pem", NULL);
	sfl_test_write_rsa_key(fx->key_path, pub_path);
	g_assert_true(g_file_set_contents(dataset_path, dataset, -1, &error));
	{
		const gchar *args[] = { "--public-key", pub_path, "--dataset", dataset_path, NULL };
		fx->sf_base = sfl_test_sf_sim_start(args, &fx->sf_proc);
	}
	if (fx->sf_base == NULL)
		return FALSE;
	fx->loki_base = sfl_test_loki_sim_start(NULL, &fx->loki_proc);
	return fx->loki_base != NULL;
}

#define SOURCES_ELF "  eventlogfile:\n    enabled: true\n    event_types: [API]\n"

static void
test_commit_is_epoch_fenced(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) doc = NULL;
	g_autoptr(json_t) pending = NULL;
	Replica *a;
	gsize keys;

	if (fx->skip || !start_pipeline_sims(fx))
		return;
	/* pushes hang, so the first commit waits until the store has moved on */
	pending = sfl_test_sim_control(fx->loop, fx->loki_base, "POST", "/control/fault",
				       "{\"hang\": 1000}");

	a = replica_start_with(fx, "pod-a", "kubeconfig", SOURCES_ELF);
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, a));
	g_assert_cmpuint(a->epoch, ==, 1);
	/* a newer leader recorded epoch 9 (and its own watermark) in the shared file */
	state_set(fx, "__fence_epoch__", "9");
	doc = state_doc(fx);
	keys = json_object_size(doc);
	json_decref(sfl_test_sim_control(fx->loop, fx->loki_base, "POST", "/control/clear", "{}"));
	g_assert_true(wait_until(fx, loki_has_entries, NULL));
	/* the commit after Loki's answer meets the higher epoch: FENCED, demote, stay up */
	g_assert_true(wait_until(fx, logged_fenced, a));
	g_assert_true(wait_until(fx, sfl_test_replica_lost_cond, a));
	g_assert_nonnull(g_subprocess_get_identifier(a->proc));
	g_clear_pointer(&doc, json_decref);
	doc = state_doc(fx);
	/* nothing of the fenced writer landed: the epoch and the keys are the newer leader's */
	g_assert_cmpstr(json_string_value(json_object_get(doc, "__fence_epoch__")), ==, "9");
	g_assert_cmpuint(json_object_size(doc), ==, keys);
	/* contesting again, it continues above the store's epoch */
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, a));
	g_assert_cmpuint(a->epoch, ==, 10);
}

/* --- in process: the client and the doctor probe against the simulator ---------------------- */

static SflK8sLeaseApi *
in_cluster_api(Fixture *fx, guint timeout_ms)
{
	g_autofree gchar *port_path = g_build_filename(fx->simdir, "api_port", NULL);
	g_autofree gchar *port = NULL;
	g_autofree gchar *port_env = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflKubeClient) client = NULL;

	g_assert_true(g_file_get_contents(port_path, &port, NULL, NULL));
	port_env = g_strdup_printf("KUBERNETES_SERVICE_PORT=%s", g_strstrip(port));
	{
		const gchar *env[] = { "KUBERNETES_SERVICE_HOST=127.0.0.1", port_env, NULL };
		client = sfl_kube_client_new_in_cluster(env, fx->simdir, &error);
	}
	g_assert_no_error(error);
	g_assert_cmpstr(sfl_kube_client_get_namespace(client), ==, "default");
	sfl_kube_client_set_curl_loop(client, fx->loop);
	return sfl_k8s_lease_api_new(client, "default", "sf2loki-leader", timeout_ms);
}

static SflK8sLease *
api_get(SflK8sLeaseApi *api, GError **error)
{
	SflTestWaiter w = { 0 };
	SflK8sLease *lease;

	sfl_k8s_lease_api_get_async(api, NULL, sfl_test_waiter_cb, &w);
	sfl_test_wait_for(&w.done, 30);
	lease = sfl_k8s_lease_api_get_finish(api, w.result, error);
	g_object_unref(w.result);
	return lease;
}

static SflK8sLease *
api_write(SflK8sLeaseApi *api, const SflK8sLease *lease, GError **error)
{
	SflTestWaiter w = { 0 };
	SflK8sLease *stored;

	sfl_k8s_lease_api_write_async(api, lease, FALSE, NULL, sfl_test_waiter_cb, &w);
	sfl_test_wait_for(&w.done, 30);
	stored = sfl_k8s_lease_api_write_finish(api, w.result, error);
	g_object_unref(w.result);
	return stored;
}

static gboolean
probe(SflK8sLeaseApi *api, gchar **detail, GError **error)
{
	SflTestWaiter w = { 0 };
	gboolean ok;

	sfl_k8s_lease_doctor_probe_async(api, NULL, sfl_test_waiter_cb, &w);
	sfl_test_wait_for(&w.done, 30);
	ok = sfl_k8s_lease_doctor_probe_finish(api, w.result, detail, error);
	g_object_unref(w.result);
	return ok;
}

static void
control(Fixture *fx, const gchar *path, const gchar *json)
{
	json_decref(sfl_test_sim_control(fx->loop, fx->k8s_base, "POST", path, json));
}

static void
test_client_in_cluster(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflK8sLeaseApi) api = NULL;
	g_autoptr(SflK8sLease) mine = sfl_k8s_lease_new();
	g_autoptr(SflK8sLease) created = NULL;
	g_autoptr(SflK8sLease) read = NULL;
	g_autoptr(SflK8sLease) stale = NULL;
	g_autoptr(SflK8sLease) none = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) state = NULL;

	if (fx->skip)
		return;
	api = in_cluster_api(fx, 5000);
	none = api_get(api, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_NOT_FOUND);
	g_assert_nonnull(strstr(error->message, "404"));
	g_clear_error(&error);

	/* a create: the server's copy with its resourceVersion, MicroTime accepted as sent */
	mine->holder = g_strdup("pod-x");
	mine->duration_s = 15;
	mine->transitions = 4;
	mine->renew_time = sfl_k8s_micro_time(g_get_real_time());
	mine->acquire_time = g_strdup(mine->renew_time);
	created = api_write(api, mine, &error);
	g_assert_no_error(error);
	g_assert_nonnull(created->resource_version);
	g_assert_cmpint(created->transitions, ==, 4);
	g_assert_cmpstr(created->renew_time, ==, mine->renew_time);

	/* the kubelet rotates the token: the next request reads the new one */
	control(fx, "/control/token", "{\"token\": \"rotated-token-abcdef\"}");
	read = api_get(api, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(read->resource_version, ==, created->resource_version);
	g_assert_cmpstr(read->holder, ==, "pod-x");

	/* a second create is 409 AlreadyExists; a replace on an old version is 409 Conflict */
	stale = api_write(api, mine, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
	g_clear_error(&error);
	g_free(mine->resource_version);
	mine->resource_version = g_strdup("1");
	stale = api_write(api, mine, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
	g_assert_nonnull(strstr(error->message, "the object has been modified"));
	g_clear_error(&error);

	/* a 5xx, and a request that gets no answer within the deadline */
	control(fx, "/control/fault", "{\"status\": 500, \"count\": 1, \"methods\": [\"GET\"]}");
	none = api_get(api, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "500"));
	g_clear_error(&error);
	g_clear_object(&api);
	api = in_cluster_api(fx, 300);
	control(fx, "/control/hold", "{\"count\": 1, \"methods\": [\"GET\"]}");
	none = api_get(api, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_clear_error(&error);
	control(fx, "/control/release", "{}");

	/* deleted under us: a replace is 404 (never a silent re-creation) */
	control(fx, "/control/delete", "{}");
	g_free(mine->resource_version);
	mine->resource_version = g_strdup(read->resource_version);
	none = api_write(api, mine, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_NOT_FOUND);
	g_clear_error(&error);

	/* a token the server does not take */
	control(fx, "/control/token", "{\"token\": \"server-side-only-token\"}");
	{
		g_autofree gchar *token = g_build_filename(fx->simdir, "token", NULL);
		g_assert_true(g_file_set_contents(token, "stale-token-123456\n", -1, NULL));
	}
	none = api_get(api, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_null(strstr(error->message, "stale-token-123456"));
	g_clear_error(&error);
	state = sim_state(fx);
	g_assert_null(sim_lease(state));
}

#define LEASE_X_PATH "/apis/coordination.k8s.io/v1/namespaces/default/leases/x"

/* one request through @client, waited for; its answer (NULL on error) */
static json_t *
kube_call(SflKubeClient *client, const gchar *method, const gchar *path, json_t *body,
	  guint *status, GError **error)
{
	SflTestWaiter w = { 0 };
	json_t *object;

	sfl_kube_client_request_async(client, method, path, body, 5000, NULL, sfl_test_waiter_cb,
				      &w);
	sfl_test_wait_for(&w.done, 30);
	object = sfl_kube_client_request_finish(client, w.result, status, error);
	g_clear_object(&w.result);
	return object;
}

static gboolean
sim_holds_one(Fixture *fx, gpointer data)
{
	g_autoptr(json_t) state = sim_state(fx);
	return json_integer_value(json_object_get(state, "held")) == 1;
}

static void
test_client_kubeconfig(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *path = NULL;
	g_autoptr(SflKubeClient) client = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) object = NULL;
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	SflTestWaiter held = { 0 };
	guint status = 0;

	if (fx->skip)
		return;
	/* inline CA data and a fixed token; the client makes its own curl loop */
	path = g_build_filename(fx->simdir, "kubeconfig-inline", NULL);
	client = sfl_kube_client_new_from_kubeconfig(path, &error);
	g_assert_no_error(error);
	json_decref(sfl_test_sim_control(fx->loop, fx->k8s_base, "POST", "/control/fault",
					 "{\"status\": 200, \"raw\": \"not json\"}"));
	object = kube_call(client, "GET", LEASE_X_PATH, NULL, &status, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "not a JSON object"));
	g_clear_error(&error);

	/* a proxy's HTML error page: its start is quoted */
	json_decref(
		sfl_test_sim_control(fx->loop, fx->k8s_base, "POST", "/control/fault",
				     "{\"status\": 502, \"raw\": \"<html>bad gateway</html>\"}"));
	object = kube_call(client, "GET", LEASE_X_PATH, NULL, &status, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "502: <html>bad gateway"));
	g_clear_error(&error);

	/* a 2xx with its status */
	{
		g_autoptr(json_t) body = json_pack(
			"{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "coordination.k8s.io/v1",
			"kind", "Lease", "metadata", "name", "x", "spec", "holderIdentity", "p");
		object = kube_call(client, "POST",
				   "/apis/coordination.k8s.io/v1/namespaces/default/leases", body,
				   &status, &error);
		g_assert_no_error(error);
		g_assert_cmpuint(status, ==, 201);
		g_clear_pointer(&object, json_decref);
	}

	/* cancelled while the server holds the request */
	json_decref(sfl_test_sim_control(fx->loop, fx->k8s_base, "POST", "/control/hold",
					 "{\"count\": 1}"));
	sfl_kube_client_request_async(client, "GET", LEASE_X_PATH, NULL, 0, cancellable,
				      sfl_test_waiter_cb, &held);
	/* cancel once the server holds it */
	g_assert_true(wait_until(fx, sim_holds_one, NULL));
	g_cancellable_cancel(cancellable);
	sfl_test_wait_for(&held.done, 30);
	object = sfl_kube_client_request_finish(client, held.result, NULL, &error);
	g_clear_object(&held.result);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_clear_error(&error);
	json_decref(sfl_test_sim_control(fx->loop, fx->k8s_base, "POST", "/control/release", "{}"));
}

static void
test_token_file_gone(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflK8sLeaseApi) api = NULL;
	g_autoptr(SflK8sLease) none = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *token = NULL;

	if (fx->skip)
		return;
	api = in_cluster_api(fx, 5000);
	token = g_build_filename(fx->simdir, "token", NULL);
	g_assert_cmpint(g_unlink(token), ==, 0);
	none = api_get(api, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, token));
}

static void
test_doctor_probe(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflK8sLeaseApi) api = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) state = NULL;
	g_autofree gchar *detail = NULL;
	json_t *writes;
	json_t *last;

	if (fx->skip)
		return;
	api = in_cluster_api(fx, 5000);
	/* absent: a dry-run create, and nothing stored */
	g_assert_true(probe(api, &detail, &error));
	g_assert_no_error(error);
	g_assert_nonnull(strstr(detail, "dry-run create"));
	state = sim_state(fx);
	g_assert_null(sim_lease(state));
	writes = json_object_get(state, "writes");
	g_assert_cmpuint(json_array_size(writes), ==, 1);
	last = json_array_get(writes, 0);
	g_assert_true(json_is_true(json_object_get(last, "dryRun")));
	g_assert_cmpstr(json_string_value(json_object_get(last, "method")), ==, "POST");
	g_assert_cmpint(json_integer_value(json_object_get(last, "status")), ==, 201);

	/* present: a dry-run replace of the object just read */
	{
		g_autoptr(SflK8sLease) lease = sfl_k8s_lease_new();
		g_autoptr(SflK8sLease) stored = NULL;

		lease->holder = g_strdup("pod-x");
		lease->duration_s = 30;
		stored = api_write(api, lease, &error);
		g_assert_no_error(error);
	}
	g_clear_pointer(&detail, g_free);
	g_assert_true(probe(api, &detail, &error));
	g_assert_nonnull(strstr(detail, "dry-run update"));
	g_clear_pointer(&state, json_decref);
	state = sim_state(fx);
	g_assert_cmpstr(lease_holder(sim_lease(state)), ==, "pod-x");

	/* RBAC missing: FAIL with the fix */
	control(fx, "/control/fault", "{\"status\": 403, \"count\": 1, \"methods\": [\"GET\"]}");
	g_assert_false(probe(api, NULL, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message, "cannot read"));
	g_assert_nonnull(strstr(error->message, "get, create and update on leases"));
	g_clear_error(&error);
	control(fx, "/control/fault", "{\"status\": 403, \"count\": 1, \"methods\": [\"PUT\"]}");
	g_assert_false(probe(api, NULL, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message, "cannot update (dry run)"));
	g_clear_error(&error);
	control(fx, "/control/delete", "{}");
	control(fx, "/control/fault", "{\"status\": 500, \"count\": 1, \"methods\": [\"POST\"]}");
	g_assert_false(probe(api, NULL, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "cannot create (dry run)"));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_setup, func, fixture_teardown)
	ADD("/sfl/ha/k8s-lease/one-leader-and-kill", test_one_leader_and_kill);
	ADD("/sfl/ha/k8s-lease/frozen-leader-surrenders", test_frozen_leader_surrenders);
	ADD("/sfl/ha/k8s-lease/clean-stop-releases", test_clean_stop_releases);
	ADD("/sfl/ha/k8s-lease/lease-deleted-never-rewinds", test_lease_deleted);
	ADD("/sfl/ha/k8s-lease/commit-is-epoch-fenced", test_commit_is_epoch_fenced);
	ADD("/sfl/ha/k8s-lease/client/in-cluster", test_client_in_cluster);
	ADD("/sfl/ha/k8s-lease/doctor-probe", test_doctor_probe);
	ADD("/sfl/ha/k8s-lease/client/kubeconfig", test_client_kubeconfig);
	ADD("/sfl/ha/k8s-lease/client/token-file-gone", test_token_file_gone);
#undef ADD
	return g_test_run();
}
