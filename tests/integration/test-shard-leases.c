/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestShard"

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-curl-loop.h"
#include "sfl-test-sim.h"

/*
 * Sharded replicas (coordinate.sharding) as real processes, under file_lease on one directory,
 * k8s_lease (tests/sim/k8s_sim.py: a Lease per member found by label, a Lease per unit),
 * s3_lease (tests/sim/s3_sim.py, every request's SigV4 recomputed by botocore) and gcs_lease
 * (tests/sim/gcs_sim.py, JWT grants checked by python3-jwt) with the object stores of the same
 * bucket, against the Salesforce and Loki simulators: six EventLogFile types are six work units.
 * Three replicas own two each, every unit exactly once; a replica killed with SIGKILL has its units
 * taken over under higher epochs once their leases went stale; a fourth replica joining takes
 * its share only after the owners drained and let go; a replica stopped in order leaves the
 * group; and across all of it Loki receives every row (duplicates allowed, loss not) and no
 * unit's recorded epoch ever goes back.
 */

#define TTL_MS	   2000
#define RENEW_MS   600
#define N_TYPES	   6
#define ROWS	   400
#define TIMEOUT_US (60 * G_USEC_PER_SEC)

static const gchar *const TYPES[N_TYPES] = { "API", "URI", "Login", "Logout", "Report", "RestApi" };

#define BUCKET	  "ckpt"
#define STATE_KEY "sf2loki/state.json"
#define LEASE_KEY "sf2loki/leader.json"
#define K8S_LEASE "sf2loki-leader"

typedef enum {
	BACKEND_FILE,
	BACKEND_S3,
	BACKEND_GCS,
	BACKEND_K8S,
} Backend;

typedef struct {
	SflTestSims sims;
	Backend backend;
	gchar *object_base; /* the S3, GCS or Kubernetes simulator (its control URL) */
	SflTestSim *object_proc;
	gchar *sa_path; /* gcs: the service-account key */
	gchar *config;
	gchar *state;
	GPtrArray *replicas;
	SflCurlLoop *loop;
	guint files; /* EventLogFiles added so far, each of ROWS rows */
	gboolean skipped;
} Fixture;

/* one file per type, hourly, @hours_ago; the generator writes API rows under every type */
static gchar *
dataset(guint round, gint hours_ago)
{
	g_autofree gchar *created =
		sfl_test_sf_datetime(g_get_real_time() - (gint64)hours_ago * G_TIME_SPAN_HOUR);
	g_autoptr(GString) out = g_string_new("{\"eventlogfiles\": [");

	for (guint i = 0; i < N_TYPES; i++)
		g_string_append_printf(out,
				       "%s{\"Id\": \"0ATSH%u%012u\", \"EventType\": \"%s\", "
				       "\"Interval\": \"Hourly\", \"LogDate\": \"%s\", "
				       "\"CreatedDate\": \"%s\", \"Sequence\": 0, \"generate\": "
				       "{\"rows\": %u, \"kind\": \"API\", \"seed\": %u}}",
				       i > 0 ? ", " : "", round, i, TYPES[i], created, created,
				       ROWS, round * 100 + i + 1);
	g_string_append(out, "]}");
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/* the state store and the coordinator of @fx's backend, as configuration */
static gchar *
backend_yaml(Fixture *fx)
{
	g_autofree gchar *lease = g_build_filename(fx->sims.dir, "leader.lease", NULL);
	g_autofree gchar *timing =
		g_strdup_printf("ttl: %dms, renew_interval: %dms", TTL_MS, RENEW_MS);

	switch (fx->backend) {
	case BACKEND_K8S:
		return g_strdup_printf("state:\n"
				       "  file: {path: '%s'}\n"
				       "coordinate:\n"
				       "  type: k8s_lease\n"
				       "  k8s_lease: {kubeconfig: '%s/k8s/kubeconfig', "
				       "lease_duration: %dms, renew_interval: %dms}\n",
				       fx->state, fx->sims.dir, TTL_MS, RENEW_MS);
	case BACKEND_S3:
		return g_strdup_printf("state:\n"
				       "  store: s3\n"
				       "  s3: {bucket: " BUCKET ", key: " STATE_KEY
				       ", endpoint_url: '%s', region: us-east-1}\n"
				       "coordinate:\n"
				       "  type: s3_lease\n"
				       "  s3_lease: {bucket: " BUCKET ", key: " LEASE_KEY
				       ", endpoint_url: '%s', region: us-east-1, %s}\n",
				       fx->object_base, fx->object_base, timing);
	case BACKEND_GCS:
		return g_strdup_printf("state:\n"
				       "  store: gcs\n"
				       "  gcs: {bucket: " BUCKET ", object_name: " STATE_KEY
				       ", service_file: '%s'}\n"
				       "coordinate:\n"
				       "  type: gcs_lease\n"
				       "  gcs_lease: {bucket: " BUCKET ", object_name: " LEASE_KEY
				       ", service_file: '%s', %s}\n",
				       fx->sa_path, fx->sa_path, timing);
	case BACKEND_FILE:
	default:
		return g_strdup_printf("state:\n"
				       "  file: {path: '%s'}\n"
				       "coordinate:\n"
				       "  type: file_lease\n"
				       "  file_lease: {path: '%s', %s}\n",
				       fx->state, lease, timing);
	}
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *first = dataset(1, 2);
	g_autofree gchar *head = NULL;
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *store = NULL;
	g_autoptr(GString) types = g_string_new(NULL);
	g_autoptr(GError) error = NULL;

	fx->backend = GPOINTER_TO_INT(data);
	fx->replicas = sfl_test_replicas_new();
	if (!sfl_test_sims_start(&fx->sims, "sfl-shard-XXXXXX", first, NULL)) {
		fx->skipped = TRUE;
		return;
	}
	if (fx->backend == BACKEND_S3)
		fx->object_base = sfl_test_s3_sim_start(NULL, &fx->object_proc);
	else if (fx->backend == BACKEND_GCS)
		fx->object_base = sfl_test_gcs_sim_start_with_account(
			fx->sims.dir, &fx->object_proc, &fx->sa_path);
	else if (fx->backend == BACKEND_K8S) {
		g_autofree gchar *dir = g_build_filename(fx->sims.dir, "k8s", NULL);
		const gchar *args[] = { "--dir", dir, NULL };

		g_assert_cmpint(g_mkdir(dir, 0700), ==, 0);
		fx->object_base = sfl_test_k8s_sim_start(args, &fx->object_proc);
	}
	if (fx->backend != BACKEND_FILE && fx->object_base == NULL) {
		fx->skipped = TRUE;
		return;
	}
	fx->files = N_TYPES;
	fx->loop = sfl_curl_loop_new();
	for (guint i = 0; i < N_TYPES; i++)
		g_string_append_printf(types, "%s%s", i > 0 ? ", " : "", TYPES[i]);
	fx->state = g_build_filename(fx->sims.dir, "state.json", NULL);
	head = sfl_test_sims_config(&fx->sims, NULL, NULL);
	store = backend_yaml(fx);
	yaml = g_strdup_printf("%s"
			       "sources:\n"
			       "  eventlogfile:\n"
			       "    enabled: true\n"
			       "    interval: Hourly\n"
			       "    event_types: [%s]\n"
			       "    poll_interval: 1s\n"
			       "    lookback: 6h\n"
			       "    settle_window: 0s\n"
			       "%s"
			       "  sharding: {enabled: true, members_ttl: %dms}\n"
			       "service:\n"
			       "  health_addr: 127.0.0.1:0\n"
			       "  shutdown_grace: 10s\n",
			       head, types->str, store, TTL_MS);
	fx->config = g_build_filename(fx->sims.dir, "config.yaml", NULL);
	g_file_set_contents(fx->config, yaml, -1, &error);
	g_assert_no_error(error);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	g_ptr_array_unref(fx->replicas);
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_clear_object(&fx->loop);
	sfl_test_sim_stop(&fx->object_proc);
	sfl_test_sims_clear(&fx->sims);
	g_free(fx->object_base);
	g_free(fx->sa_path);
	g_free(fx->config);
	g_free(fx->state);
}

static SflTestReplica *
replica_start(Fixture *fx, const gchar *name)
{
	static const gchar *const holder_vars[] = {
		[BACKEND_FILE] = "SF2LOKI_COORDINATE__FILE_LEASE__HOLDER_ID",
		[BACKEND_S3] = "SF2LOKI_COORDINATE__S3_LEASE__HOLDER_ID",
		[BACKEND_GCS] = "SF2LOKI_COORDINATE__GCS_LEASE__HOLDER_ID",
		[BACKEND_K8S] = "SF2LOKI_COORDINATE__K8S_LEASE__IDENTITY",
	};
	/* the first link of the AWS chain; nothing of the host's may leak in */
	const gchar *env[] = { holder_vars[fx->backend],
			       name,
			       "AWS_ACCESS_KEY_ID",
			       "AKIDSIMULATOR",
			       "AWS_SECRET_ACCESS_KEY",
			       "sim/secret+key",
			       "AWS_EC2_METADATA_DISABLED",
			       "true",
			       "HOME",
			       fx->sims.dir,
			       fx->backend == BACKEND_GCS ? "STORAGE_EMULATOR_HOST" : NULL,
			       fx->object_base,
			       NULL };

	return sfl_test_replica_start(fx->replicas, name, fx->config, env);
}

/* the replica's /statusz, or NULL while it is not up (or gone) */
static json_t *
statusz(Fixture *fx, SflTestReplica *r)
{
	guint port = sfl_test_replica_health_port(r);
	g_autofree gchar *url = NULL;
	g_autofree gchar *body = NULL;
	guint status = 0;

	if (port == 0 || r->eof)
		return NULL;
	url = g_strdup_printf("http://127.0.0.1:%u/statusz", port);
	body = sfl_test_http_call(fx->loop, "GET", url, &status);
	if (status != 200 || body == NULL)
		return NULL;
	return json_loads(body, 0, NULL);
}

/* the units @r leads now and their epochs (unit → epoch); NULL when it cannot be asked */
static GHashTable *
owned_units(Fixture *fx, SflTestReplica *r)
{
	g_autoptr(json_t) doc = statusz(fx, r);
	json_t *units = json_object_get(json_object_get(doc, "sharding"), "units");
	GHashTable *out = NULL;
	gsize i;
	json_t *u;

	if (!json_is_array(units))
		return NULL;
	out = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	json_array_foreach (units, i, u) {
		g_hash_table_insert(
			out, g_strdup(json_string_value(json_object_get(u, "unit"))),
			GSIZE_TO_POINTER(json_integer_value(json_object_get(u, "epoch"))));
	}
	return out;
}

typedef struct {
	GPtrArray *members;	 /* SflTestReplica: the ones that must share the units */
	guint64 epochs[N_TYPES]; /* out: each unit's epoch at its owner */
	gchar *owners[N_TYPES];	 /* out: each unit's owner */
} Balance;

static void
balance_clear(Balance *b)
{
	g_clear_pointer(&b->members, g_ptr_array_unref);
	for (guint i = 0; i < N_TYPES; i++)
		g_clear_pointer(&b->owners[i], g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Balance, balance_clear)

/* every unit led by exactly one of the members, each member leading ⌊U/N⌋ or ⌈U/N⌉ */
static gboolean
balanced(gpointer fixture, gpointer data)
{
	Fixture *fx = fixture;
	Balance *b = data;
	guint lo = N_TYPES / b->members->len;
	guint hi = (N_TYPES + b->members->len - 1) / b->members->len;
	guint seen[N_TYPES] = { 0 };

	for (guint m = 0; m < b->members->len; m++) {
		SflTestReplica *r = g_ptr_array_index(b->members, m);
		g_autoptr(GHashTable) owned = owned_units(fx, r);

		if (owned == NULL || g_hash_table_size(owned) < lo || g_hash_table_size(owned) > hi)
			return FALSE;
		for (guint i = 0; i < N_TYPES; i++) {
			g_autofree gchar *unit = g_strconcat("eventlogfile:", TYPES[i], NULL);
			gpointer epoch = NULL;

			if (!g_hash_table_lookup_extended(owned, unit, NULL, &epoch))
				continue;
			seen[i]++;
			b->epochs[i] = GPOINTER_TO_SIZE(epoch);
			g_free(b->owners[i]);
			b->owners[i] = g_strdup(r->name);
		}
	}
	for (guint i = 0; i < N_TYPES; i++)
		if (seen[i] != 1)
			return FALSE;
	return TRUE;
}

static void
wait_balanced(Fixture *fx, Balance *b, const gchar *what)
{
	sfl_test_fixture_wait(balanced, fx, b, TIMEOUT_US, what);
	for (guint i = 0; i < N_TYPES; i++)
		g_test_message("%s: eventlogfile:%s led by %s (epoch %" G_GUINT64_FORMAT ")", what,
			       TYPES[i], b->owners[i], b->epochs[i]);
}

/* every row added so far reached Loki at least once */
static gboolean
all_delivered(gpointer fixture, gpointer data)
{
	Fixture *fx = fixture;

	return sfl_test_sims_loki_stat(&fx->sims, "REQUEST_ID", "distinct") >=
	       (json_int_t)fx->files * ROWS;
}

/* the checkpoint document as the store holds it */
static json_t *
state_doc(Fixture *fx)
{
	g_autofree gchar *text = NULL;
	g_autoptr(json_t) sim = NULL;
	g_autofree gchar *name = NULL;

	if (fx->backend == BACKEND_FILE || fx->backend == BACKEND_K8S) {
		g_assert_true(g_file_get_contents(fx->state, &text, NULL, NULL));
		return json_loads(text, 0, NULL);
	}
	sim = sfl_test_sim_control(fx->loop, fx->object_base, "GET", "/control/state", NULL);
	name = g_strdup_printf("%s/%s", BUCKET, STATE_KEY);
	return json_loads(json_string_value(json_object_get(
				  json_object_get(json_object_get(sim, "objects"), name), "body")),
			  0, NULL);
}

/* the names the sharded group's objects got in the bucket (members and unit leases) */
static void
assert_object_layout(Fixture *fx)
{
	g_autoptr(json_t) sim = NULL;
	guint members = 0, units = 0;
	const gchar *name;
	json_t *value;

	if (fx->backend == BACKEND_FILE)
		return;
	sim = sfl_test_sim_control(fx->loop, fx->object_base, "GET", "/control/state", NULL);
	if (fx->backend == BACKEND_K8S) {
		/* a Lease per member, labelled with the group; a Lease per unit */
		json_object_foreach (json_object_get(sim, "leases"), name, value) {
			json_t *meta = json_object_get(value, "metadata");
			const gchar *group = json_string_value(json_object_get(
				json_object_get(meta, "labels"), "sf2loki.io/member-of"));
			const gchar *holder = json_string_value(
				json_object_get(json_object_get(value, "spec"), "holderIdentity"));

			if (g_str_has_prefix(name, "default/" K8S_LEASE "-m-")) {
				g_assert_cmpstr(group, ==, K8S_LEASE);
				g_assert_true(g_str_has_prefix(holder, "replica-"));
				g_assert_nonnull(json_object_get(
					json_object_get(meta, "annotations"), "sf2loki.io/seq"));
				members++;
			} else if (g_str_has_prefix(name, "default/" K8S_LEASE "-u-")) {
				g_assert_null(group);
				units++;
			}
		}
		g_assert_cmpuint(members, ==, 3);
		g_assert_cmpuint(units, ==, N_TYPES);
		return;
	}
	json_object_foreach (json_object_get(sim, "objects"), name, value) {
		if (g_str_has_prefix(name, BUCKET "/" LEASE_KEY ".members/"))
			members++;
		else if (g_str_has_prefix(name, BUCKET "/" LEASE_KEY ".units/eventlogfile%3A"))
			units++;
	}
	g_assert_cmpuint(members, ==, 3);
	g_assert_cmpuint(units, ==, N_TYPES);
}

/* each unit's epoch as the store records it */
static void
recorded_epochs(Fixture *fx, guint64 *epochs)
{
	g_autoptr(json_t) doc = state_doc(fx);

	g_assert_nonnull(doc);
	for (guint i = 0; i < N_TYPES; i++) {
		g_autofree gchar *key =
			g_strconcat("__fence_epoch__:eventlogfile:", TYPES[i], NULL);
		const gchar *value = json_string_value(json_object_get(doc, key));

		g_assert_nonnull(value);
		epochs[i] = g_ascii_strtoull(value, NULL, 10);
	}
}

static void
add_files(Fixture *fx, guint round)
{
	g_autofree gchar *more = dataset(round, 1);
	g_autoptr(json_t) answer =
		sfl_test_sim_control(fx->loop, fx->sims.sf_base, "POST", "/control/add", more);

	g_assert_true(json_is_true(json_object_get(answer, "ok")));
	fx->files += N_TYPES;
}

static GPtrArray *
members_of(SflTestReplica *first, ...)
{
	GPtrArray *out = g_ptr_array_new();
	va_list ap;

	va_start(ap, first);
	for (SflTestReplica *r = first; r != NULL; r = va_arg(ap, SflTestReplica *))
		g_ptr_array_add(out, r);
	va_end(ap);
	return out;
}

typedef struct {
	SflTestReplica *replica;
	const gchar *needle;
} Logged;

static gboolean
logged_cond(gpointer fixture, gpointer data)
{
	const Logged *what = data;

	return sfl_test_replica_logged(what->replica, what->needle);
}

typedef struct {
	SflTestReplica *replicas[3];
} Members;

/*
 * /statusz counts each replica's unit pipelines as one, including the tenures handed on since
 * (the first replica up may have pushed everything before the others joined): together every
 * row added so far, in bytes more than entries
 */
static gboolean
pushed_everything(gpointer fixture, gpointer data)
{
	Fixture *fx = fixture;
	Members *m = data;
	json_int_t pushed = 0, bytes = 0;

	for (guint i = 0; i < G_N_ELEMENTS(m->replicas); i++) {
		g_autoptr(json_t) doc = statusz(fx, m->replicas[i]);
		json_t *p = json_object_get(doc, "pipeline");

		if (!json_is_object(p))
			return FALSE;
		pushed += json_integer_value(json_object_get(p, "pushed_entries"));
		bytes += json_integer_value(json_object_get(p, "pushed_bytes"));
	}
	return pushed >= (json_int_t)fx->files * ROWS && bytes > pushed;
}

/* the value of an unlabelled series in a Prometheus text exposition; the test fails without it */
static gdouble
metric_value(const gchar *text, const gchar *series)
{
	g_autofree gchar *needle = g_strdup_printf("\n%s ", series);
	const gchar *at = strstr(text, needle);

	if (at == NULL)
		g_error("no series %s in /metrics", series);
	return g_ascii_strtod(at + strlen(needle), NULL);
}

static void
test_balance_failover_join_leave(Fixture *fx, gconstpointer data)
{
	SflTestReplica *a, *b, *c, *d;
	g_auto(Balance) three = { 0 };
	g_auto(Balance) two = { 0 };
	g_auto(Balance) joined = { 0 };
	g_auto(Balance) left = { 0 };
	guint64 recorded[N_TYPES] = { 0 };
	guint64 after[N_TYPES] = { 0 };
	g_autoptr(json_t) status = NULL;
	gint64 killed_at;

	if (fx->skipped || sfl_test_skip_without_signals())
		return;
	a = replica_start(fx, "replica-a");
	b = replica_start(fx, "replica-b");
	c = replica_start(fx, "replica-c");

	/* three members: two units each, every unit once */
	three.members = members_of(a, b, c, NULL);
	wait_balanced(fx, &three, "three replicas");
	sfl_test_fixture_wait(all_delivered, fx, NULL, TIMEOUT_US, "the first files in Loki");
	{
		Members all = { { a, b, c } };
		sfl_test_fixture_wait(pushed_everything, fx, &all, TIMEOUT_US,
				      "the replicas' pipeline counters");
	}
	status = statusz(fx, a);
	g_assert_true(json_is_true(json_object_get(json_object_get(status, "sharding"), "member")));
	g_assert_cmpint(json_integer_value(json_object_get(json_object_get(status, "sharding"),
							   "units_total")),
			==, N_TYPES);
	g_assert_cmpint(
		json_array_size(json_object_get(json_object_get(status, "sharding"), "members")),
		==, 3);
	recorded_epochs(fx, recorded);
	assert_object_layout(fx);
	{
		/* the group's size, for the alert that compares the owned units with it */
		g_autofree gchar *url = g_strdup_printf("http://127.0.0.1:%u/metrics",
							sfl_test_replica_health_port(a));
		guint code = 0;
		g_autofree gchar *metrics = sfl_test_http_call(fx->loop, "GET", url, &code);

		g_assert_cmpuint(code, ==, 200);
		g_assert_nonnull(strstr(metrics, "\nsf2loki_units_total 6\n"));
		g_assert_nonnull(strstr(metrics, "\nsf2loki_units_owned 2\n"));
		/* every unit it leads was won and started at least once: a lease won again after
		 * a race at the start counts twice, never less */
		g_assert_cmpfloat(metric_value(metrics, "sf2loki_unit_acquisitions_total"), >=, 2);
		g_assert_cmpfloat(metric_value(metrics, "sf2loki_unit_handoff_seconds_count"), >=,
				  2);
		g_assert_cmpfloat(metric_value(metrics, "sf2loki_unit_handoff_seconds_sum"), >, 0);
	}
	{
		/* no live reload while sharded, and the answer says why */
		g_autofree gchar *url = g_strdup_printf("http://127.0.0.1:%u/-/reload",
							sfl_test_replica_health_port(a));
		guint code = 0;
		g_autofree gchar *body = sfl_test_http_call(fx->loop, "POST", url, &code);

		g_assert_cmpuint(code, ==, 503);
		g_assert_nonnull(strstr(body, "\"refused\""));
		g_assert_nonnull(strstr(body, "coordinate.sharding.enabled"));
	}

	/* SIGKILL: c's units are taken over once their leases went stale, under higher epochs */
	killed_at = g_get_monotonic_time();
	sfl_test_replica_kill(c);
	add_files(fx, 2);
	two.members = members_of(a, b, NULL);
	wait_balanced(fx, &two, "after the kill");
	g_test_message("every unit led again %" G_GINT64_FORMAT " ms after the kill (ttl %d ms)",
		       (g_get_monotonic_time() - killed_at) / 1000, TTL_MS);
	for (guint i = 0; i < N_TYPES; i++) {
		if (g_strcmp0(three.owners[i], "replica-c") == 0)
			g_assert_cmpuint(two.epochs[i], >, three.epochs[i]);
		else /* a survivor's units stayed where they were */
			g_assert_cmpstr(two.owners[i], ==, three.owners[i]);
	}
	sfl_test_fixture_wait(all_delivered, fx, NULL, TIMEOUT_US, "every file after the kill");
	recorded_epochs(fx, after);
	for (guint i = 0; i < N_TYPES; i++)
		g_assert_cmpuint(after[i], >=, recorded[i]);
	memcpy(recorded, after, sizeof(recorded));

	/* a fourth replica joins: it takes its share, each only after its owner let go */
	d = replica_start(fx, "replica-d");
	joined.members = members_of(a, b, d, NULL);
	wait_balanced(fx, &joined, "after the join");
	g_assert_true(sfl_test_replica_logged(d, "acquired (epoch"));
	g_assert_true(sfl_test_replica_logged(a, "draining before the handover") ||
		      sfl_test_replica_logged(b, "draining before the handover"));
	add_files(fx, 3);
	sfl_test_fixture_wait(all_delivered, fx, NULL, TIMEOUT_US, "every file after the join");

	/* b stops in order: it leaves the group, a and d lead everything */
	g_subprocess_send_signal(b->proc, SIGTERM);
	{
		Logged what = { b, "left the group" };
		sfl_test_fixture_wait(logged_cond, fx, &what, TIMEOUT_US, "b leaving");
	}
	left.members = members_of(a, d, NULL);
	wait_balanced(fx, &left, "after b left");
	add_files(fx, 4);
	sfl_test_fixture_wait(all_delivered, fx, NULL, TIMEOUT_US, "every file after the leave");
	recorded_epochs(fx, after);
	for (guint i = 0; i < N_TYPES; i++)
		g_assert_cmpuint(after[i], >=, recorded[i]);
	/* no unit was ever led by two members at the checks above, and no epoch was reused: a
	 * new owner's epoch is above every earlier one of that unit */
	for (guint i = 0; i < N_TYPES; i++)
		if (g_strcmp0(left.owners[i], joined.owners[i]) != 0)
			g_assert_cmpuint(left.epochs[i], >, joined.epochs[i]);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/sfl/shard/file-lease/balance-failover-join-leave", Fixture,
		   GINT_TO_POINTER(BACKEND_FILE), fixture_setup, test_balance_failover_join_leave,
		   fixture_teardown);
	g_test_add("/sfl/shard/k8s-lease/balance-failover-join-leave", Fixture,
		   GINT_TO_POINTER(BACKEND_K8S), fixture_setup, test_balance_failover_join_leave,
		   fixture_teardown);
	g_test_add("/sfl/shard/s3-lease/balance-failover-join-leave", Fixture,
		   GINT_TO_POINTER(BACKEND_S3), fixture_setup, test_balance_failover_join_leave,
		   fixture_teardown);
	g_test_add("/sfl/shard/gcs-lease/balance-failover-join-leave", Fixture,
		   GINT_TO_POINTER(BACKEND_GCS), fixture_setup, test_balance_failover_join_leave,
		   fixture_teardown);
	return g_test_run();
}
