/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestHealth"

#include "config.h"

#include <gio/gio.h>
#include <jansson.h>
#include <string.h>

#include "sfl-curl-loop.h"
#include "sfl-test-sim.h"

/*
 * The health server of the real binary: /healthz, /readyz (ready on the leader, standby on a
 * second replica under file_lease), /metrics, /statusz without secrets, 404 and 405.
 */

#define EVENT_TIMEOUT_SEC 60
#define SECRET		  "Zq9-health-S3cr3t-marker"

typedef struct {
	gchar *dir;
	gchar *config;
	SflCurlLoop *loop;
	gchar *sf_base; /* NULL: the Salesforce simulator could not start, the test was skipped */
	SflTestSim *sf_proc;
} Fx;

/* a replica under the fixture's lease, as @holder; @health_addr overrides the config's */
static SflTestDaemon *
daemon_start_with(Fx *fx, const gchar *holder, const gchar *health_addr)
{
	const gchar *env[] = { "SF2LOKI_COORDINATE__FILE_LEASE__HOLDER_ID", holder,
			       health_addr != NULL ? "SF2LOKI_SERVICE__HEALTH_ADDR" : NULL,
			       health_addr, NULL };

	return sfl_test_daemon_start(fx->config, env);
}

/* a replica that has logged its health port */
static SflTestDaemon *
daemon_start(Fx *fx, const gchar *holder)
{
	SflTestDaemon *d = daemon_start_with(fx, holder, NULL);

	sfl_test_daemon_wait_logged(d, "health server listening on ", EVENT_TIMEOUT_SEC);
	return d;
}

static void
daemon_stop(SflTestDaemon *d)
{
	sfl_test_daemon_finish(d, EVENT_TIMEOUT_SEC);
	sfl_test_daemon_free(d);
}

/* one request to the daemon; the body is returned, the status stored in *status */
static gchar *
http_call(Fx *fx, SflTestDaemon *d, const gchar *method, const gchar *path, guint *status)
{
	g_autofree gchar *url =
		g_strdup_printf("http://127.0.0.1:%u%s", sfl_test_daemon_health_port(d), path);
	return sfl_test_http_call(fx->loop, method, url, status);
}

typedef struct {
	Fx *fx;
	SflTestDaemon *daemon;
	guint status;
	const gchar *body_prefix;
} ReadyWant;

/* readiness changes inside the daemon without telling us: asked again until it holds */
static gboolean
readyz_is(gpointer data)
{
	ReadyWant *want = data;
	guint status = 0;
	g_autofree gchar *body = http_call(want->fx, want->daemon, "GET", "/readyz", &status);
	return status == want->status && g_str_has_prefix(body, want->body_prefix);
}

/* a client that connects and never sends: the server must hang up on it */
typedef struct {
	gboolean done;
	gssize got;
	GError *error;
} SilentRead;

static void
silent_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SilentRead *r = user_data;
	r->got = g_input_stream_read_finish(G_INPUT_STREAM(source), result, &r->error);
	r->done = TRUE;
}

static void
assert_silent_client_dropped(Fx *fx, SflTestDaemon *d)
{
	g_autoptr(GSocketClient) client = g_socket_client_new();
	g_autoptr(GSocketConnection) conn = NULL;
	g_autoptr(GError) error = NULL;
	SilentRead r = { 0 };
	gchar buf[64];

	conn = g_socket_client_connect_to_host(
		client, "127.0.0.1", (guint16)sfl_test_daemon_health_port(d), NULL, &error);
	g_assert_no_error(error);
	g_input_stream_read_async(g_io_stream_get_input_stream(G_IO_STREAM(conn)), buf, sizeof(buf),
				  G_PRIORITY_DEFAULT, NULL, silent_read_cb, &r);
	sfl_test_wait_for(&r.done, EVENT_TIMEOUT_SEC);
	/* end of stream (or a reset): the server closed it without an answer */
	g_assert_true(r.got == 0 || r.error != NULL);
	g_clear_error(&r.error);
}

static void
fx_setup(Fx *fx)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *lease = NULL;
	g_autofree gchar *state = NULL;
	g_autofree gchar *yaml = NULL;

	fx->dir = g_dir_make_tmp("sfl-health-XXXXXX", &error);
	g_assert_no_error(error);
	fx->config = g_build_filename(fx->dir, "config.yaml", NULL);
	lease = g_build_filename(fx->dir, "leader.lease", NULL);
	state = g_build_filename(fx->dir, "state.json", NULL);
	fx->loop = sfl_curl_loop_new();
	/* a replica needs a source, or it exits at once; the source needs a token */
	fx->sf_base = sfl_test_sf_sim_start(NULL, &fx->sf_proc);
	if (fx->sf_base == NULL)
		return;
	/* client credentials: the inline key is never parsed, and must still never be shown */
	yaml = g_strdup_printf(SFL_TEST_SF_SIM_SALESFORCE
			       "  private_key: \"%s\"\n" SFL_TEST_IDLE_SOURCES "sink:\n"
			       "  loki:\n"
			       "    url: http://127.0.0.1:9/loki/api/v1/push\n"
			       "    auth_token: \"%s\"\n"
			       "state:\n  file:\n    path: %s\n"
			       "  deadletter: {max_bytes: 65536}\n"
			       "coordinate:\n"
			       "  type: file_lease\n"
			       "  file_lease: {path: %s, ttl: 2s, renew_interval: 500ms}\n"
			       "service:\n"
			       "  health_addr: 127.0.0.1:0\n"
			       "  log_format: json\n",
			       fx->sf_base, SECRET, SECRET, state, lease);
	g_assert_true(g_file_set_contents(fx->config, yaml, -1, &error));
}

static void
fx_teardown(Fx *fx)
{
	g_clear_object(&fx->loop);
	while (g_main_context_iteration(NULL, FALSE))
		;
	sfl_test_sim_stop(&fx->sf_proc);
	g_free(fx->sf_base);
	sfl_test_rmtree(fx->dir);
	g_free(fx->dir);
	g_free(fx->config);
}

static void
test_endpoints(void)
{
	Fx fx = { 0 };
	SflTestDaemon *leader = NULL;
	SflTestDaemon *standby = NULL;
	g_autofree gchar *healthz = NULL;
	g_autofree gchar *metrics = NULL;
	g_autofree gchar *statusz = NULL;
	g_autofree gchar *missing = NULL;
	g_autofree gchar *post = NULL;
	g_autofree gchar *build_info = NULL;
	ReadyWant ready = { 0 };
	ReadyWant standing_by = { 0 };
	json_t *doc = NULL;
	guint status = 0;

	fx_setup(&fx);
	if (fx.sf_base == NULL) {
		fx_teardown(&fx);
		return;
	}
	/* a dead-letter store 91 % full (60,000 of 65,536 bytes) from an earlier run, shared by
	 * both replicas (deadletter/ next to the state file) */
	{
		g_autofree gchar *dldir = g_build_filename(fx.dir, "deadletter", NULL);
		g_autofree gchar *seg = g_build_filename(
			dldir, "seg-00000000000000000001-00000000-000000.jsonl", NULL);
		g_autofree gchar *line = g_strnfill(60000, 'x');
		g_autofree gchar *record = g_strdup_printf("{\"line\":\"%s\"}\n", line + 12);
		g_assert_cmpint(g_mkdir_with_parents(dldir, 0700), ==, 0);
		g_assert_cmpuint(strlen(record), ==, 60000);
		g_assert_true(g_file_set_contents(seg, record, -1, NULL));
	}
	leader = daemon_start(&fx, "replica-a");
	healthz = http_call(&fx, leader, "GET", "/healthz", &status);
	g_assert_cmpuint(status, ==, 200);
	g_assert_cmpstr(healthz, ==, "ok\n");
	/* still ready, and says why an operator should look */
	ready = (ReadyWant){
		&fx, leader, 200,
		"ready (warning: dead-letter store 91% full (state.deadletter.max_bytes))"
	};
	sfl_test_poll_until(readyz_is, &ready, EVENT_TIMEOUT_SEC, "the leader to be ready");

	/* a second replica under the same lease stands by, and says so */
	standby = daemon_start(&fx, "replica-b");
	standing_by = (ReadyWant){ &fx, standby, 503, "standby" };
	sfl_test_poll_until(readyz_is, &standing_by, EVENT_TIMEOUT_SEC,
			    "the second replica to stand by");

	metrics = http_call(&fx, leader, "GET", "/metrics", &status);
	g_assert_cmpuint(status, ==, 200);
	build_info = g_strdup_printf("sf2loki_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
	g_assert_nonnull(strstr(metrics, build_info));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_leader 1\n"));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_deadletter_bytes 60000\n"));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_deadletter_max_bytes 65536\n"));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_deadletter_evicted_segments_total 0\n"));
	g_assert_null(strstr(metrics, SECRET));

	statusz = http_call(&fx, leader, "GET", "/statusz", &status);
	g_assert_cmpuint(status, ==, 200);
	doc = json_loads(statusz, 0, NULL);
	g_assert_nonnull(doc);
	g_assert_cmpstr(json_string_value(json_object_get(doc, "version")), ==, PACKAGE_VERSION);
	g_assert_cmpstr(json_string_value(json_object_get(doc, "readiness")), ==, "ready");
	g_assert_cmpstr(
		json_string_value(json_object_get(json_object_get(doc, "leadership"), "holder")),
		==, "replica-a");
	g_assert_true(json_is_object(json_object_get(doc, "pipeline")));
	{
		json_t *dl = json_object_get(doc, "deadletter");
		g_assert_true(json_is_object(dl));
		g_assert_true(g_str_has_suffix(json_string_value(json_object_get(dl, "dir")),
					       "deadletter"));
		g_assert_cmpint(json_integer_value(json_object_get(dl, "bytes")), ==, 60000);
		g_assert_cmpint(json_integer_value(json_object_get(dl, "percent_full")), ==, 91);
		g_assert_true(json_is_true(json_object_get(dl, "filling")));
	}
	g_assert_null(strstr(statusz, SECRET));
	json_decref(doc);

	assert_silent_client_dropped(&fx, leader);

	missing = http_call(&fx, leader, "GET", "/nope", &status);
	g_assert_cmpuint(status, ==, 404);
	post = http_call(&fx, leader, "POST", "/healthz", &status);
	g_assert_cmpuint(status, ==, 405);

	/* a third replica on the leader's port fails its start, naming the address */
	{
		g_autofree gchar *taken =
			g_strdup_printf("127.0.0.1:%u", sfl_test_daemon_health_port(leader));
		g_autoptr(SflTestDaemon) third = daemon_start_with(&fx, "replica-c", taken);
		g_assert_cmpint(sfl_test_daemon_wait_exit(third, EVENT_TIMEOUT_SEC), ==, 1);
	}

	daemon_stop(standby);
	daemon_stop(leader);
	fx_teardown(&fx);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/health/endpoints", test_endpoints);
	return g_test_run();
}
