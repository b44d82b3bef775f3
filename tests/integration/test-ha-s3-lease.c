/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestHaS3"

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-test-sim.h"

/*
 * The stateless topology end to end: two `sf2loki run` replicas with state.store: s3 and
 * coordinate.type: s3_lease against tests/sim/s3_sim.py (every request's SigV4 recomputed by
 * python3-botocore), and the same with gcs + gcs_lease against tests/sim/gcs_sim.py (a
 * service-account key whose JWT python3-jwt verifies before it hands out bearer tokens), with
 * the Salesforce and Loki simulators. Exactly one leads; its
 * checkpoints land in the bucket; kill -9 of the leader hands over within ttl + renew_interval
 * with the epoch bumped by one, and the new leader continues from the old leader's checkpoint
 * (the file already shipped is not shipped again; a new file is, and committed at epoch 2).
 */

#define TTL_MS	 2000
#define RENEW_MS 600
/* generous: these wait for events, they do not time them */
#define EVENT_TIMEOUT_US (90 * G_USEC_PER_SEC)
#define BUCKET		 "ckpt"
#define STATE_KEY	 "sf2loki/state.json"
#define LEASE_KEY	 "sf2loki/leader.json"
#define ROWS		 20

typedef SflTestReplica Replica;

typedef struct {
	gboolean gcs;
	gchar *dir;
	gchar *sa_path; /* the service-account key for gcs */
	gchar *s3_base;
	SflTestSim *s3_proc;
	gchar *sf_base;
	SflTestSim *sf_proc;
	gchar *loki_base;
	SflTestSim *loki_proc;
	gchar *key_path;
	SflCurlLoop *loop;
	GPtrArray *replicas;
	gboolean skip;
} Fixture;

static gchar *
write_config(Fixture *fx, const gchar *name)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *file = g_strdup_printf("config-%s.yaml", name);
	gchar *path = g_build_filename(fx->dir, file, NULL);
	g_autofree gchar *store = NULL;
	g_autofree gchar *yaml = NULL;
	SflTestSims sims = { .sf_base = fx->sf_base, .key_path = fx->key_path };
	g_autofree gchar *head = sfl_test_sims_config(&sims, NULL, fx->loki_base);

	if (fx->gcs)
		store = g_strdup_printf(
			"state:\n"
			"  store: gcs\n"
			"  gcs: {bucket: " BUCKET ", object_name: " STATE_KEY
			", service_file: '%s'}\n"
			"coordinate:\n"
			"  type: gcs_lease\n"
			"  gcs_lease: {bucket: " BUCKET ", object_name: " LEASE_KEY
			", service_file: '%s', holder_id: %s, ttl: %dms, renew_interval: %dms}\n",
			fx->sa_path, fx->sa_path, name, TTL_MS, RENEW_MS);
	else
		store = g_strdup_printf(
			"state:\n"
			"  store: s3\n"
			"  s3: {bucket: " BUCKET ", key: " STATE_KEY ", endpoint_url: '%s', "
			"region: us-east-1}\n"
			"coordinate:\n"
			"  type: s3_lease\n"
			"  s3_lease: {bucket: " BUCKET ", key: " LEASE_KEY ", endpoint_url: '%s', "
			"region: us-east-1, holder_id: %s, ttl: %dms, renew_interval: %dms}\n",
			fx->s3_base, fx->s3_base, name, TTL_MS, RENEW_MS);
	yaml = g_strdup_printf("%s"
			       "    batch: {flush_interval: 100ms}\n"
			       "%s"
			       "service: {log_format: json, shutdown_grace: 5s}\n"
			       "sources:\n"
			       "  eventlogfile:\n"
			       "    enabled: true\n"
			       "    event_types: [API]\n"
			       "    poll_interval: 1s\n",
			       head, store);

	g_file_set_contents(path, yaml, -1, &error);
	g_assert_no_error(error);
	return path;
}

static Replica *
replica_start(Fixture *fx, const gchar *name)
{
	g_autofree gchar *config = write_config(fx, name);
	/* the first link of the credential chain; nothing else of the host's may leak in */
	const gchar *env[] = { "AWS_ACCESS_KEY_ID",
			       "AKIDSIMULATOR",
			       "AWS_SECRET_ACCESS_KEY",
			       "sim/secret+key",
			       "AWS_EC2_METADATA_DISABLED",
			       "true",
			       "HOME",
			       fx->dir,
			       fx->gcs ? "STORAGE_EMULATOR_HOST" : NULL,
			       fx->s3_base,
			       NULL };

	return sfl_test_replica_start(fx->replicas, name, config, env);
}

static gchar *
replica_get(Fixture *fx, Replica *r, const gchar *path, guint *status)
{
	g_autofree gchar *url =
		g_strdup_printf("http://127.0.0.1:%u%s", sfl_test_replica_health_port(r), path);
	return sfl_test_http_call(fx->loop, "GET", url, status);
}

/* /readyz and sf2loki_leader: 200 and 1 on the leader, 503 standby and 0 on the other */
static void
assert_probes(Fixture *fx, Replica *leader, Replica *standby)
{
	guint status = 0;
	g_autofree gchar *ready = replica_get(fx, leader, "/readyz", &status);
	g_autofree gchar *metrics = NULL;
	g_autofree gchar *standby_ready = NULL;
	g_autofree gchar *standby_metrics = NULL;

	g_assert_cmpuint(status, ==, 200);
	g_assert_nonnull(ready);
	metrics = replica_get(fx, leader, "/metrics", &status);
	g_assert_nonnull(strstr(metrics, "\nsf2loki_leader 1\n"));
	standby_ready = replica_get(fx, standby, "/readyz", &status);
	g_assert_cmpuint(status, ==, 503);
	g_assert_nonnull(strstr(standby_ready, "standby"));
	standby_metrics = replica_get(fx, standby, "/metrics", &status);
	g_assert_nonnull(strstr(standby_metrics, "\nsf2loki_leader 0\n"));
}

typedef gboolean (*Cond)(Fixture *fx, gpointer data);

#define wait_until(fx, cond, data)                                                                 \
	sfl_test_wait_fixture((SflTestFixtureCond)(cond), (fx), (data), EVENT_TIMEOUT_US)

static gboolean
health_ports_known(Fixture *fx, gpointer data)
{
	for (guint i = 0; i < fx->replicas->len; i++) {
		if (sfl_test_replica_health_port(g_ptr_array_index(fx->replicas, i)) == 0)
			return FALSE;
	}
	return TRUE;
}

static json_t *
s3_state(Fixture *fx)
{
	return sfl_test_sim_control(fx->loop, fx->s3_base, "GET", "/control/state", NULL);
}

/* the object's body parsed as JSON, or NULL when absent */
static json_t *
s3_object_json(Fixture *fx, const gchar *key)
{
	g_autoptr(json_t) state = s3_state(fx);
	g_autofree gchar *name = g_strdup_printf("%s/%s", BUCKET, key);
	json_t *obj = json_object_get(json_object_get(state, "objects"), name);
	json_error_t jerr;

	if (obj == NULL)
		return NULL;
	return json_loads(json_string_value(json_object_get(obj, "body")), 0, &jerr);
}

static json_int_t
loki_entries(Fixture *fx)
{
	g_autoptr(json_t) summary =
		sfl_test_sim_control(fx->loop, fx->loki_base, "GET", "/control/summary", NULL);
	return json_integer_value(json_object_get(summary, "entries"));
}

typedef struct {
	const gchar *epoch;
	json_int_t entries;
} Progress;

/* Loki has @entries lines and the checkpoint document records @epoch with an ELF key */
static gboolean
committed(Fixture *fx, gpointer data)
{
	Progress *p = data;
	g_autoptr(json_t) doc = NULL;
	const gchar *key;
	json_t *value;
	gboolean have_elf = FALSE;

	if (loki_entries(fx) < p->entries)
		return FALSE;
	doc = s3_object_json(fx, STATE_KEY);
	if (doc == NULL ||
	    g_strcmp0(json_string_value(json_object_get(doc, "__fence_epoch__")), p->epoch) != 0)
		return FALSE;
	json_object_foreach (doc, key, value) {
		if (g_str_has_prefix(key, "eventlogfile:"))
			have_elf = TRUE;
	}
	return have_elf;
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *pub_path = NULL;
	g_autofree gchar *dataset_path = NULL;
	g_autofree gchar *dataset = sfl_test_elf_dataset("0ATSIM000000S301", 3, ROWS, 3);

	fx->gcs = g_strcmp0(data, "gcs") == 0;
	fx->dir = g_dir_make_tmp("sfl-test-ha-object-XXXXXX", &error);
	g_assert_no_error(error);
	fx->replicas = sfl_test_replicas_new();
	fx->loop = sfl_curl_loop_new();
	pub_path = g_build_filename(fx->dir, "pub.pem", NULL);
	dataset_path = g_build_filename(fx->dir, "dataset.json", NULL);
	fx->key_path = g_build_filename(fx->dir, "key.pem", NULL);
	sfl_test_write_rsa_key(fx->key_path, pub_path);
	if (fx->gcs) {
		fx->s3_base =
			sfl_test_gcs_sim_start_with_account(fx->dir, &fx->s3_proc, &fx->sa_path);
		fx->skip = fx->s3_base == NULL;
		if (fx->skip)
			return;
	} else {
		fx->s3_base = sfl_test_s3_sim_start(NULL, &fx->s3_proc);
		fx->skip = fx->s3_base == NULL;
		if (fx->skip)
			return;
	}
	g_assert_true(g_file_set_contents(dataset_path, dataset, -1, &error));
	{
		const gchar *args[] = { "--public-key", pub_path, "--dataset", dataset_path, NULL };
		fx->sf_base = sfl_test_sf_sim_start(args, &fx->sf_proc);
	}
	fx->skip = fx->sf_base == NULL;
	if (fx->skip)
		return;
	fx->loki_base = sfl_test_loki_sim_start(NULL, &fx->loki_proc);
	fx->skip = fx->loki_base == NULL;
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	/* each replica is killed and read to its EOF: the pending line reads point at it */
	g_ptr_array_unref(fx->replicas);
	sfl_test_sim_stop(&fx->s3_proc);
	sfl_test_sim_stop(&fx->sf_proc);
	sfl_test_sim_stop(&fx->loki_proc);
	sfl_test_loop_dir_clear(&fx->loop, &fx->dir);
	g_free(fx->s3_base);
	g_free(fx->sf_base);
	g_free(fx->loki_base);
	g_free(fx->key_path);
	g_free(fx->sa_path);
}

static void
test_failover_continues_checkpoints(Fixture *fx, gconstpointer data)
{
	Replica *a;
	Replica *b;
	Replica *leader;
	Replica *standby;
	Progress first = { "1", ROWS };
	Progress second = { "2", 2 * ROWS };
	g_autoptr(json_t) lease = NULL;
	g_autoptr(json_t) before = NULL;
	g_autoptr(json_t) after = NULL;
	g_autoptr(json_t) state = NULL;
	g_autofree gchar *more = NULL;
	gint64 killed_at;

	if (fx->skip)
		return;
	a = replica_start(fx, "task-a");
	b = replica_start(fx, "task-b");
	g_assert_true(wait_until(fx, sfl_test_replicas_lead_cond, fx->replicas));
	leader = sfl_test_replicas_leader(fx->replicas);
	standby = leader == a ? b : a;
	g_assert_cmpuint(leader->epoch, ==, 1);
	lease = s3_object_json(fx, LEASE_KEY);
	g_assert_nonnull(lease);
	g_assert_cmpstr(json_string_value(json_object_get(lease, "holder")), ==, leader->name);
	g_assert_cmpint(json_integer_value(json_object_get(lease, "epoch")), ==, 1);

	/* the leader ships the file and commits its checkpoint, with its epoch, to the bucket */
	g_assert_true(wait_until(fx, committed, &first));
	g_assert_cmpuint(standby->acquired, ==, 0);
	before = s3_object_json(fx, STATE_KEY);
	g_assert_true(wait_until(fx, health_ports_known, NULL));
	assert_probes(fx, leader, standby);

	killed_at = g_get_monotonic_time();
	g_subprocess_force_exit(leader->proc);
	g_assert_true(wait_until(fx, sfl_test_replica_leads_cond, standby));
	g_test_message("failover after %" G_GINT64_FORMAT " ms (ttl %d ms, renew %d ms)",
		       (g_get_monotonic_time() - killed_at) / 1000, TTL_MS, RENEW_MS);
	g_assert_cmpuint(standby->epoch, ==, 2);
	g_clear_pointer(&lease, json_decref);
	lease = s3_object_json(fx, LEASE_KEY);
	g_assert_cmpstr(json_string_value(json_object_get(lease, "holder")), ==, standby->name);

	/* a new file: the new leader ships only that one, from the old leader's checkpoint */
	more = sfl_test_elf_dataset("0ATSIM000000S302", 2, ROWS, 4);
	json_decref(sfl_test_sim_control(fx->loop, fx->sf_base, "POST", "/control/add", more));
	g_assert_true(wait_until(fx, committed, &second));
	after = s3_object_json(fx, STATE_KEY);
	g_assert_false(json_equal(before, after));
	g_assert_cmpint(loki_entries(fx), ==, 2 * ROWS);

	/* every request of both replicas was authorized: a SigV4 signature botocore agreed
	 * with, or a bearer token the simulator issued for a JWT python3-jwt verified */
	state = s3_state(fx);
	g_assert_cmpint(json_integer_value(json_object_get(state, "auth_failures")), ==, 0);
	if (fx->gcs)
		g_assert_cmpint(json_integer_value(json_object_get(state, "tokens_issued")), >=, 2);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/sfl/ha-object/s3/failover-continues-checkpoints", Fixture, "s3", fixture_setup,
		   test_failover_continues_checkpoints, fixture_teardown);
	g_test_add("/sfl/ha-object/gcs/failover-continues-checkpoints", Fixture, "gcs",
		   fixture_setup, test_failover_continues_checkpoints, fixture_teardown);
	return g_test_run();
}
