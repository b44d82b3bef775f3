/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestHealth"

#include "config.h"

#include <gio/gio.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "sfl-curl-loop.h"
#include "sfl-test-sim.h"

/*
 * The health server of the real binary: /healthz, /readyz (ready on the leader, standby on a
 * second replica under file_lease), /metrics, /statusz without secrets, 404 and 405.
 */

#define EVENT_TIMEOUT_US (60 * G_USEC_PER_SEC)
#define SECRET		 "Zq9-health-S3cr3t-marker"

typedef struct {
	GSubprocess *proc;
	GDataInputStream *err;
	guint port;
	gboolean eof;
} Daemon;

typedef struct {
	gchar *dir;
	gchar *config;
	SflCurlLoop *loop;
} Fx;

static void daemon_line_cb(GObject *source, GAsyncResult *result, gpointer user_data);

static void
daemon_read_next(Daemon *d)
{
	g_data_input_stream_read_line_async(d->err, G_PRIORITY_DEFAULT, NULL, daemon_line_cb, d);
}

static void
daemon_line_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Daemon *d = user_data;
	g_autofree gchar *line = g_data_input_stream_read_line_finish_utf8(
		G_DATA_INPUT_STREAM(source), result, NULL, NULL);
	json_t *obj = NULL;
	const gchar *msg = NULL;

	if (line == NULL) {
		d->eof = TRUE;
		return;
	}
	g_test_message("[sf2loki] %s", line);
	obj = json_loads(line, 0, NULL);
	msg = json_string_value(json_object_get(obj, "msg"));
	if (msg != NULL && g_str_has_prefix(msg, "health server listening on ")) {
		const gchar *port = strstr(msg, "(port ");
		g_assert_nonnull(port);
		d->port = (guint)g_ascii_strtoull(port + 6, NULL, 10);
	}
	json_decref(obj);
	daemon_read_next(d);
}

static void
child_setup(gpointer user_data)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

static Daemon *
daemon_start_with(Fx *fx, const gchar *holder, const gchar *health_addr)
{
	g_autoptr(GSubprocessLauncher) l =
		g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
	g_autoptr(GError) error = NULL;
	const gchar *passed[] = { "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", NULL };
	g_auto(GStrv) envp = g_new0(gchar *, 1);
	Daemon *d = g_new0(Daemon, 1);

	envp = g_environ_setenv(envp, "LC_ALL", "C.UTF-8", TRUE);
	envp = g_environ_setenv(envp, "SF2LOKI_COORDINATE__FILE_LEASE__HOLDER_ID", holder, TRUE);
	if (health_addr != NULL)
		envp = g_environ_setenv(envp, "SF2LOKI_SERVICE__HEALTH_ADDR", health_addr, TRUE);
	for (guint i = 0; passed[i] != NULL; i++) {
		if (g_getenv(passed[i]) != NULL)
			envp = g_environ_setenv(envp, passed[i], g_getenv(passed[i]), TRUE);
	}
	g_subprocess_launcher_set_environ(l, envp);
	g_subprocess_launcher_set_child_setup(l, child_setup, NULL, NULL);
	d->proc = g_subprocess_launcher_spawn(l, &error, g_getenv("SF2LOKI_BIN"), "run", "--config",
					      fx->config, NULL);
	g_assert_no_error(error);
	d->err = g_data_input_stream_new(g_subprocess_get_stderr_pipe(d->proc));
	daemon_read_next(d);
	return d;
}

static Daemon *
daemon_start(Fx *fx, const gchar *holder)
{
	return daemon_start_with(fx, holder, NULL);
}

static gboolean
wake_cb(gpointer data)
{
	return G_SOURCE_REMOVE;
}

typedef gboolean (*Cond)(Fx *fx, gpointer data);

static void
fx_wait(Fx *fx, Cond cond, gpointer data, const gchar *what)
{
	gint64 deadline = g_get_monotonic_time() + EVENT_TIMEOUT_US;

	while (!cond(fx, data)) {
		g_autoptr(GSource) tick = NULL;
		if (g_get_monotonic_time() > deadline)
			g_error("timed out waiting for %s", what);
		/* readiness changes inside the daemon without telling us: look again */
		tick = g_timeout_source_new(50);
		g_source_set_callback(tick, wake_cb, NULL, NULL);
		g_source_attach(tick, NULL);
		g_main_context_iteration(NULL, TRUE);
		g_source_destroy(tick);
	}
}

static gboolean
daemon_has_port(Fx *fx, gpointer data)
{
	return ((Daemon *)data)->port != 0;
}

static void
daemon_stop(Fx *fx, Daemon *d)
{
	g_subprocess_send_signal(d->proc, SIGTERM);
	while (!d->eof)
		g_main_context_iteration(NULL, TRUE);
	g_assert_true(g_subprocess_wait(d->proc, NULL, NULL));
	g_assert_true(g_subprocess_get_if_exited(d->proc));
	g_assert_cmpint(g_subprocess_get_exit_status(d->proc), ==, 0);
	g_clear_object(&d->err);
	g_clear_object(&d->proc);
	g_free(d);
}

/* one request to the daemon; the body is returned, the status stored in *status */
static gchar *
http_call(Fx *fx, Daemon *d, const gchar *method, const gchar *path, guint *status)
{
	g_autofree gchar *url = g_strdup_printf("http://127.0.0.1:%u%s", d->port, path);
	return sfl_test_http_call(fx->loop, method, url, status);
}

typedef struct {
	Daemon *daemon;
	guint status;
	const gchar *body_prefix;
} ReadyWant;

static gboolean
readyz_is(Fx *fx, gpointer data)
{
	ReadyWant *want = data;
	guint status = 0;
	g_autofree gchar *body = http_call(fx, want->daemon, "GET", "/readyz", &status);
	return status == want->status && g_str_has_prefix(body, want->body_prefix);
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
	yaml = g_strdup_printf("salesforce:\n"
			       "  client_id: cid\n"
			       "  username: u@example.com\n"
			       "  private_key: \"%s\"\n"
			       "sink:\n"
			       "  loki:\n"
			       "    url: http://127.0.0.1:9/loki/api/v1/push\n"
			       "    auth_token: \"%s\"\n"
			       "state:\n  file:\n    path: %s\n"
			       "coordinate:\n"
			       "  type: file_lease\n"
			       "  file_lease: {path: %s, ttl: 2s, renew_interval: 500ms}\n"
			       "service:\n"
			       "  health_addr: 127.0.0.1:0\n"
			       "  log_format: json\n",
			       SECRET, SECRET, state, lease);
	g_assert_true(g_file_set_contents(fx->config, yaml, -1, &error));
	fx->loop = sfl_curl_loop_new();
}

static void
fx_teardown(Fx *fx)
{
	g_autofree gchar *cmd = g_strdup_printf("rm -rf '%s'", fx->dir);

	g_clear_object(&fx->loop);
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_assert_cmpint(system(cmd), ==, 0);
	g_free(fx->dir);
	g_free(fx->config);
}

static void
test_endpoints(void)
{
	Fx fx = { 0 };
	Daemon *leader = NULL;
	Daemon *standby = NULL;
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
	leader = daemon_start(&fx, "replica-a");
	fx_wait(&fx, daemon_has_port, leader, "the first health port");
	healthz = http_call(&fx, leader, "GET", "/healthz", &status);
	g_assert_cmpuint(status, ==, 200);
	g_assert_cmpstr(healthz, ==, "ok\n");
	ready = (ReadyWant){ leader, 200, "ready" };
	fx_wait(&fx, readyz_is, &ready, "the leader to be ready");

	/* a second replica under the same lease stands by, and says so */
	standby = daemon_start(&fx, "replica-b");
	fx_wait(&fx, daemon_has_port, standby, "the second health port");
	standing_by = (ReadyWant){ standby, 503, "standby" };
	fx_wait(&fx, readyz_is, &standing_by, "the second replica to stand by");

	metrics = http_call(&fx, leader, "GET", "/metrics", &status);
	g_assert_cmpuint(status, ==, 200);
	build_info = g_strdup_printf("sf2loki_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
	g_assert_nonnull(strstr(metrics, build_info));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_leader 1\n"));
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
	g_assert_null(strstr(statusz, SECRET));
	json_decref(doc);

	missing = http_call(&fx, leader, "GET", "/nope", &status);
	g_assert_cmpuint(status, ==, 404);
	post = http_call(&fx, leader, "POST", "/healthz", &status);
	g_assert_cmpuint(status, ==, 405);

	/* a third replica on the leader's port fails its start, naming the address */
	{
		g_autofree gchar *taken = g_strdup_printf("127.0.0.1:%u", leader->port);
		Daemon *third = daemon_start_with(&fx, "replica-c", taken);
		while (!third->eof)
			g_main_context_iteration(NULL, TRUE);
		g_assert_true(g_subprocess_wait(third->proc, NULL, NULL));
		g_assert_true(g_subprocess_get_if_exited(third->proc));
		g_assert_cmpint(g_subprocess_get_exit_status(third->proc), ==, 1);
		g_clear_object(&third->err);
		g_clear_object(&third->proc);
		g_free(third);
	}

	daemon_stop(&fx, standby);
	daemon_stop(&fx, leader);
	fx_teardown(&fx);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/health/endpoints", test_endpoints);
	return g_test_run();
}
