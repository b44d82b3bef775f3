/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestRunSalesforce"

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
 * The real `sf2loki run` binary between the Salesforce and Loki simulators: start-up
 * authentication, a 10,000-row file end to end, and restart safety under SIGTERM and SIGKILL.
 */

#define EVENT_TIMEOUT_US (240 * G_USEC_PER_SEC)

typedef struct {
	gchar *dir;
	gchar *key_path;
	gchar *pub_path;
	gchar *wrong_key_path;
	gchar *config;
	gchar *state;
	gchar *sf_base;
	gchar *loki_base;
	GSubprocess *sf_proc;
	GSubprocess *loki_proc;
	SflCurlLoop *loop;
	GSubprocess *run;
	GDataInputStream *err;
	GPtrArray *lines;
	gboolean eof;
	gboolean skip;
} Fx;

static gchar *
iso(gint64 usec)
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(usec / G_USEC_PER_SEC);
	return g_date_time_format(dt, "%Y-%m-%dT%H:%M:%S.000+0000");
}

static void
fx_setup(Fx *fx, const gchar *dataset, const gchar *sources_yaml)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dataset_path = NULL;
	g_autofree gchar *yaml = NULL;

	fx->dir = g_dir_make_tmp("sfl-run-sf-XXXXXX", &error);
	g_assert_no_error(error);
	fx->key_path = g_build_filename(fx->dir, "key.pem", NULL);
	fx->pub_path = g_build_filename(fx->dir, "pub.pem", NULL);
	fx->wrong_key_path = g_build_filename(fx->dir, "wrong.pem", NULL);
	fx->config = g_build_filename(fx->dir, "config.yaml", NULL);
	fx->state = g_build_filename(fx->dir, "state.json", NULL);
	sfl_test_write_rsa_key(fx->key_path, fx->pub_path);
	sfl_test_write_rsa_key(fx->wrong_key_path, NULL);
	dataset_path = g_build_filename(fx->dir, "dataset.json", NULL);
	g_assert_true(g_file_set_contents(dataset_path, dataset, -1, &error));
	{
		const gchar *args[] = { "--public-key", fx->pub_path, "--dataset", dataset_path,
					NULL };
		fx->sf_base = sfl_test_sf_sim_start(args, &fx->sf_proc);
	}
	if (fx->sf_base == NULL) {
		fx->skip = TRUE;
		return;
	}
	fx->loki_base = sfl_test_loki_sim_start(NULL, &fx->loki_proc);
	if (fx->loki_base == NULL) {
		fx->skip = TRUE;
		return;
	}
	fx->loop = sfl_curl_loop_new();
	fx->lines = g_ptr_array_new_with_free_func(g_free);
	yaml = g_strdup_printf("salesforce:\n"
			       "  login_url: %s\n"
			       "  client_id: sim-client-id\n"
			       "  username: sim@example.com\n"
			       "  private_key_file: %s\n"
			       "sink:\n"
			       "  loki:\n"
			       "    url: %s/loki/api/v1/push\n"
			       "    structured_metadata_fields: [USER_ID, CLIENT_IP]\n"
			       "    batch:\n"
			       "      flush_interval: 100ms\n"
			       "state:\n"
			       "  file:\n"
			       "    path: %s\n"
			       "service:\n"
			       "  log_format: json\n"
			       "  shutdown_grace: 20s\n"
			       "sources:\n%s",
			       fx->sf_base, fx->key_path, fx->loki_base, fx->state, sources_yaml);
	g_assert_true(g_file_set_contents(fx->config, yaml, -1, &error));
}

static void fx_line_cb(GObject *source, GAsyncResult *result, gpointer user_data);

static void
fx_read_next(Fx *fx)
{
	g_data_input_stream_read_line_async(fx->err, G_PRIORITY_DEFAULT, NULL, fx_line_cb, fx);
}

static void
fx_line_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Fx *fx = user_data;
	gchar *line = g_data_input_stream_read_line_finish_utf8(G_DATA_INPUT_STREAM(source), result,
								NULL, NULL);
	if (line == NULL) {
		fx->eof = TRUE;
		return;
	}
	g_test_message("[sf2loki] %s", line);
	g_ptr_array_add(fx->lines, line);
	fx_read_next(fx);
}

static void
child_setup(gpointer user_data)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

static void
fx_start_run(Fx *fx)
{
	g_autoptr(GSubprocessLauncher) l =
		g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
	g_autoptr(GError) error = NULL;
	const gchar *passed[] = { "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", NULL };
	g_auto(GStrv) envp = g_new0(gchar *, 1);

	envp = g_environ_setenv(envp, "LC_ALL", "C.UTF-8", TRUE);
	/* an ephemeral health port: daemons of parallel tests never compete for :8080 */
	envp = g_environ_setenv(envp, "SF2LOKI_SERVICE__HEALTH_ADDR", "127.0.0.1:0", FALSE);
	for (guint i = 0; passed[i] != NULL; i++) {
		if (g_getenv(passed[i]) != NULL)
			envp = g_environ_setenv(envp, passed[i], g_getenv(passed[i]), TRUE);
	}
	g_subprocess_launcher_set_environ(l, envp);
	g_subprocess_launcher_set_child_setup(l, child_setup, NULL, NULL);
	g_clear_object(&fx->err);
	g_clear_object(&fx->run);
	fx->eof = FALSE;
	fx->run = g_subprocess_launcher_spawn(l, &error, g_getenv("SF2LOKI_BIN"), "run", "--config",
					      fx->config, NULL);
	g_assert_no_error(error);
	fx->err = g_data_input_stream_new(g_subprocess_get_stderr_pipe(fx->run));
	fx_read_next(fx);
}

typedef gboolean (*Cond)(Fx *fx, gpointer data);

static gboolean
wake_cb(gpointer data)
{
	return G_SOURCE_REMOVE;
}

static void
fx_wait(Fx *fx, Cond cond, gpointer data, const gchar *what)
{
	gint64 deadline = g_get_monotonic_time() + EVENT_TIMEOUT_US;

	while (!cond(fx, data)) {
		g_autoptr(GSource) tick = NULL;
		if (g_get_monotonic_time() > deadline)
			g_error("timed out waiting for %s", what);
		/* the simulators change without telling us: look again now and then */
		tick = g_timeout_source_new(100);
		g_source_set_callback(tick, wake_cb, NULL, NULL);
		g_source_attach(tick, NULL);
		g_main_context_iteration(NULL, TRUE);
		g_source_destroy(tick);
	}
}

static gboolean
fx_exited(Fx *fx, gpointer data)
{
	return fx->eof && g_subprocess_get_identifier(fx->run) == NULL;
}

static gboolean
fx_eof(Fx *fx, gpointer data)
{
	return fx->eof;
}

/* waits for the process to end (its stderr closes first) and returns its exit status */
static gint
fx_wait_exit(Fx *fx)
{
	fx_wait(fx, fx_eof, NULL, "sf2loki to exit");
	g_assert_true(g_subprocess_wait(fx->run, NULL, NULL));
	return g_subprocess_get_if_exited(fx->run) ? g_subprocess_get_exit_status(fx->run) : -1;
}

static gboolean
fx_logged(Fx *fx, const gchar *needle)
{
	for (guint i = 0; i < fx->lines->len; i++) {
		if (strstr(g_ptr_array_index(fx->lines, i), needle) != NULL)
			return TRUE;
	}
	return FALSE;
}

/* the daemon's health port, from its "health server listening on …" line */
static guint
fx_health_port(Fx *fx)
{
	for (guint i = 0; i < fx->lines->len; i++) {
		const gchar *line = g_ptr_array_index(fx->lines, i);
		const gchar *at = strstr(line, "health server listening on ");
		const gchar *port = at != NULL ? strstr(at, "(port ") : NULL;
		if (port != NULL)
			return (guint)g_ascii_strtoull(port + 6, NULL, 10);
	}
	g_error("no health server line");
	return 0;
}

static gchar *
fx_get_metrics(Fx *fx)
{
	g_autofree gchar *url = g_strdup_printf("http://127.0.0.1:%u/metrics", fx_health_port(fx));
	guint status = 0;
	gchar *body = sfl_test_http_call(fx->loop, "GET", url, &status);

	g_assert_cmpuint(status, ==, 200);
	return body;
}

static json_t *
fx_summary(Fx *fx)
{
	return sfl_test_sim_control(fx->loop, fx->loki_base, "GET",
				    "/control/summary?field=REQUEST_ID", NULL);
}

static void
fx_teardown(Fx *fx)
{
	if (fx->run != NULL && g_subprocess_get_identifier(fx->run) != NULL) {
		g_subprocess_force_exit(fx->run);
		g_subprocess_wait(fx->run, NULL, NULL);
	}
	g_clear_object(&fx->err);
	g_clear_object(&fx->run);
	for (guint i = 0; i < 2; i++) {
		GSubprocess **p = i == 0 ? &fx->sf_proc : &fx->loki_proc;
		if (*p != NULL) {
			g_subprocess_force_exit(*p);
			g_subprocess_wait(*p, NULL, NULL);
			g_clear_object(p);
		}
	}
	g_clear_object(&fx->loop);
	while (g_main_context_iteration(NULL, FALSE))
		;
	if (fx->dir != NULL) {
		g_autofree gchar *cmd = g_strdup_printf("rm -rf '%s'", fx->dir);
		g_assert_cmpint(system(cmd), ==, 0);
	}
	g_clear_pointer(&fx->lines, g_ptr_array_unref);
	g_free(fx->dir);
	g_free(fx->key_path);
	g_free(fx->pub_path);
	g_free(fx->wrong_key_path);
	g_free(fx->config);
	g_free(fx->state);
	g_free(fx->sf_base);
	g_free(fx->loki_base);
}

/* --- start-up authentication ---------------------------------------------------------------- */

static void
test_wrong_key_fails_startup(void)
{
	Fx fx = { 0 };
	g_autofree gchar *text = NULL;
	g_autoptr(GError) error = NULL;
	gchar *swapped = NULL;

	fx_setup(&fx, "{\"eventlogfiles\": []}",
		 "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n");
	if (fx.skip) {
		fx_teardown(&fx);
		return;
	}
	/* a key the connected app does not know */
	g_assert_true(g_file_get_contents(fx.config, &text, NULL, &error));
	{
		g_auto(GStrv) parts = g_strsplit(text, fx.key_path, -1);
		swapped = g_strjoinv(fx.wrong_key_path, parts);
	}
	g_assert_true(g_file_set_contents(fx.config, swapped, -1, &error));
	g_free(swapped);
	fx_start_run(&fx);
	g_assert_cmpint(fx_wait_exit(&fx), ==, 1);
	g_assert_true(fx_logged(&fx, "Salesforce start-up check failed"));
	g_assert_true(fx_logged(&fx, "invalid_grant"));
	g_assert_false(fx_logged(&fx, "ready; contesting leadership"));
	g_assert_false(fx_logged(&fx, "leadership acquired"));
	/* the signed assertion never reaches a log line */
	g_assert_false(fx_logged(&fx, "eyJ"));
	fx_teardown(&fx);
}

/* --- a 10,000-row file end to end ----------------------------------------------------------- */

static gboolean
fx_entries_at_least(Fx *fx, gpointer data)
{
	json_t *summary = fx_summary(fx);
	gboolean done = json_integer_value(json_object_get(summary, "entries")) >=
			(json_int_t)GPOINTER_TO_UINT(data);
	json_decref(summary);
	return done;
}

static void
test_ten_thousand_rows(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *created = iso(now - 3 * G_TIME_SPAN_HOUR);
	g_autofree gchar *dataset = g_strdup_printf(
		"{\"eventlogfiles\": [{\"Id\": \"0ATSIM00000TENK1\", \"EventType\": \"API\", "
		"\"Interval\": \"Hourly\", \"LogDate\": \"%s\", \"CreatedDate\": \"%s\", "
		"\"Sequence\": 0, \"generate\": {\"rows\": 10000, \"kind\": \"API\", \"seed\": "
		"11}}]}",
		created, created);
	json_t *summary = NULL;
	json_t *received = NULL;
	json_t *streams = NULL;
	gsize i = 0;
	json_t *stream = NULL;
	guint checked = 0;

	fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [API]\n");
	if (fx.skip) {
		fx_teardown(&fx);
		return;
	}
	fx_start_run(&fx);
	fx_wait(&fx, fx_entries_at_least, GUINT_TO_POINTER(10000), "10,000 entries in Loki");
	{
		/* every entry counted at enqueue, every push that Loki accepted */
		g_autofree gchar *metrics = fx_get_metrics(&fx);
		g_assert_nonnull(strstr(metrics,
					"sf2loki_events_ingested_total{source=\"eventlogfile\","
					"event_type=\"API\"} 10000\n"));
		g_assert_nonnull(strstr(metrics, "sf2loki_loki_push_total{outcome=\"success\"} "));
		g_assert_nonnull(strstr(metrics,
					"sf2loki_ingest_lag_seconds_count{event_type=\"API\"} "
					"10000\n"));
		g_assert_nonnull(strstr(metrics, "\nsf2loki_leader 1\n"));
	}
	g_subprocess_send_signal(fx.run, SIGTERM);
	g_assert_cmpint(fx_wait_exit(&fx), ==, 0);

	summary = fx_summary(&fx);
	g_assert_cmpint(json_integer_value(json_object_get(summary, "entries")), ==, 10000);
	g_assert_cmpint(json_integer_value(json_object_get(summary, "distinct")), ==, 10000);
	json_decref(summary);

	received = sfl_test_sim_control(fx.loop, fx.loki_base, "GET", "/control/received", NULL);
	streams = json_object_get(received, "streams");
	json_array_foreach (streams, i, stream) {
		json_t *labels = json_object_get(stream, "labels");
		json_t *entries = json_object_get(stream, "entries");
		gsize k = 0;
		json_t *entry = NULL;

		g_assert_cmpstr(json_string_value(json_object_get(labels, "source")), ==,
				"eventlogfile");
		g_assert_cmpstr(json_string_value(json_object_get(labels, "event_type")), ==,
				"API");
		g_assert_cmpstr(json_string_value(json_object_get(labels, "job")), ==, "sf2loki");
		g_assert_cmpstr(json_string_value(json_object_get(labels, "sf_org_id")), ==,
				"00DSIM0000000001AA");
		g_assert_cmpstr(json_string_value(json_object_get(labels, "environment")), ==,
				"production");
		json_array_foreach (entries, k, entry) {
			json_t *line = json_loads(json_string_value(json_object_get(entry, "line")),
						  0, NULL);
			json_t *md = json_object_get(entry, "metadata");
			const gchar *derived =
				json_string_value(json_object_get(line, "TIMESTAMP_DERIVED"));
			g_autoptr(GDateTime) dt = g_date_time_new_from_iso8601(derived, NULL);
			gint64 want = (g_date_time_to_unix(dt) * G_USEC_PER_SEC +
				       g_date_time_get_microsecond(dt)) *
				      1000;
			gint64 got = g_ascii_strtoll(
				json_string_value(json_object_get(entry, "ts")), NULL, 10);

			g_assert_cmpint(got, ==, want);
			g_assert_cmpstr(json_string_value(json_object_get(md, "USER_ID")), ==,
					json_string_value(json_object_get(line, "USER_ID")));
			g_assert_nonnull(json_object_get(md, "level"));
			json_decref(line);
			checked++;
		}
	}
	g_assert_cmpuint(checked, ==, 10000);
	json_decref(received);
	fx_teardown(&fx);
}

/* --- two orgs ----------------------------------------------------------------------------- */

static gboolean
fx_state_has(Fx *fx, gpointer data)
{
	g_autofree gchar *state = NULL;
	const gchar *const *keys = data;

	if (!g_file_get_contents(fx->state, &state, NULL, NULL))
		return FALSE;
	for (guint i = 0; keys[i] != NULL; i++) {
		if (strstr(state, keys[i]) == NULL)
			return FALSE;
	}
	return TRUE;
}

static void
test_two_orgs(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *created = iso(now - 3 * G_TIME_SPAN_HOUR);
	g_autofree gchar *dataset = g_strdup_printf(
		"{\"eventlogfiles\": ["
		"{\"Id\": \"0ATSIM0000ORGA01\", \"EventType\": \"API\", \"Interval\": \"Hourly\", "
		"\"LogDate\": \"%s\", \"CreatedDate\": \"%s\", \"Sequence\": 0, "
		"\"generate\": {\"rows\": 300, \"kind\": \"API\", \"seed\": 1}}, "
		"{\"Id\": \"0ATSIM0000ORGB01\", \"EventType\": \"URI\", \"Interval\": \"Hourly\", "
		"\"LogDate\": \"%s\", \"CreatedDate\": \"%s\", \"Sequence\": 0, "
		"\"generate\": {\"rows\": 200, \"kind\": \"URI\", \"seed\": 2}}]}",
		created, created, created, created);
	g_autofree gchar *yaml = NULL;
	g_autoptr(GError) error = NULL;
	const gchar *keys[] = { "\"org=alpha:eventlogfile:API\"", "0ATSIM0000ORGA01",
				"\"org=beta:eventlogfile:URI\"", "0ATSIM0000ORGB01", NULL };
	json_t *summary = NULL;
	json_t *by_labels = NULL;
	const gchar *labels = NULL;
	json_t *count = NULL;
	guint alpha = 0;
	guint beta = 0;

	fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: false\n");
	if (fx.skip) {
		fx_teardown(&fx);
		return;
	}
	yaml = g_strdup_printf(
		"orgs:\n"
		"  - name: alpha\n"
		"    salesforce: {login_url: '%s', client_id: sim-client-id, username: "
		"sim@example.com, private_key_file: '%s'}\n"
		"    sources: {eventlogfile: {enabled: true, event_types: [API]}}\n"
		"  - name: beta\n"
		"    salesforce: {login_url: '%s', client_id: sim-client-id, username: "
		"sim@example.com, private_key_file: '%s', environment: sandbox}\n"
		"    sources: {eventlogfile: {enabled: true, event_types: [URI]}}\n"
		"sink:\n  loki:\n    url: %s/loki/api/v1/push\n"
		"state:\n  file:\n    path: %s\n"
		"service:\n  log_format: json\n",
		fx.sf_base, fx.key_path, fx.sf_base, fx.key_path, fx.loki_base, fx.state);
	g_assert_true(g_file_set_contents(fx.config, yaml, -1, &error));
	fx_start_run(&fx);
	/* each org's keys carry its prefix (original §6.6) */
	fx_wait(&fx, fx_state_has, keys, "both orgs' checkpoints");
	g_subprocess_send_signal(fx.run, SIGTERM);
	g_assert_cmpint(fx_wait_exit(&fx), ==, 0);

	summary = fx_summary(&fx);
	by_labels = json_object_get(summary, "by_labels");
	json_object_foreach (by_labels, labels, count) {
		if (strstr(labels, "org=\"alpha\"") != NULL) {
			g_assert_nonnull(strstr(labels, "event_type=\"API\""));
			g_assert_nonnull(strstr(labels, "environment=\"production\""));
			alpha += (guint)json_integer_value(count);
		} else if (strstr(labels, "org=\"beta\"") != NULL) {
			g_assert_nonnull(strstr(labels, "event_type=\"URI\""));
			g_assert_nonnull(strstr(labels, "environment=\"sandbox\""));
			beta += (guint)json_integer_value(count);
		} else {
			g_error("a stream without an org label: %s", labels);
		}
	}
	g_assert_cmpuint(alpha, ==, 300);
	g_assert_cmpuint(beta, ==, 200);
	json_decref(summary);
	fx_teardown(&fx);
}

/* --- restart safety ------------------------------------------------------------------------- */

#define RS_TYPES 3
#define RS_FILES 2
#define RS_ROWS	 33334 /* 3 types x 2 files x 33,334 = 200,004 rows */

static const gchar *rs_types[RS_TYPES] = { "API", "Login", "URI" };

static gchar *
rs_file_id(guint t, guint f)
{
	return g_strdup_printf("0ATSIMRS%02u%02u0001", t, f);
}

static gchar *
rs_dataset(void)
{
	GString *out = g_string_new("{\"eventlogfiles\": [");
	gint64 now = g_get_real_time();

	for (guint t = 0; t < RS_TYPES; t++) {
		for (guint f = 0; f < RS_FILES; f++) {
			g_autofree gchar *id = rs_file_id(t, f);
			g_autofree gchar *created =
				iso(now - (gint64)(4 - f) * G_TIME_SPAN_HOUR + t * G_USEC_PER_SEC);
			g_string_append_printf(out,
					       "%s{\"Id\": \"%s\", \"EventType\": \"%s\", "
					       "\"Interval\": \"Hourly\", \"LogDate\": \"%s\", "
					       "\"CreatedDate\": \"%s\", \"Sequence\": %u, "
					       "\"generate\": {\"rows\": %u, \"kind\": \"%s\", "
					       "\"seed\": %u}}",
					       t + f > 0 ? ", " : "", id, rs_types[t], created,
					       created, f, RS_ROWS, rs_types[t], t * 10 + f);
		}
	}
	g_string_append(out, "]}");
	return g_string_free(out, FALSE);
}

/* rows of files already partly in Loki whose completion was not yet committed: a restart
 * sends them again (every row but a file's last carries the checkpoint from before it) */
static guint64
rs_resend_bound(Fx *fx)
{
	json_t *summary = fx_summary(fx);
	json_t *by_prefix = json_object_get(summary, "by_prefix");
	g_autofree gchar *state = NULL;
	guint64 bound = 0;

	g_file_get_contents(fx->state, &state, NULL, NULL);
	for (guint t = 0; t < RS_TYPES; t++) {
		for (guint f = 0; f < RS_FILES; f++) {
			g_autofree gchar *id = rs_file_id(t, f);
			json_int_t seen = json_integer_value(json_object_get(by_prefix, id));
			if (seen > 0 && (state == NULL || strstr(state, id) == NULL))
				bound += (guint64)seen;
		}
	}
	json_decref(summary);
	return bound;
}

static gboolean
rs_all_committed(Fx *fx, gpointer data)
{
	g_autofree gchar *state = NULL;

	if (!g_file_get_contents(fx->state, &state, NULL, NULL))
		return FALSE;
	for (guint t = 0; t < RS_TYPES; t++) {
		g_autofree gchar *id = rs_file_id(t, RS_FILES - 1);
		if (strstr(state, id) == NULL)
			return FALSE;
	}
	return TRUE;
}

static gboolean
rs_distinct_at_least(Fx *fx, gpointer data)
{
	json_t *summary = fx_summary(fx);
	gboolean done = json_integer_value(json_object_get(summary, "distinct")) >=
			(json_int_t)GPOINTER_TO_UINT(data);
	json_decref(summary);
	return done;
}

static void
test_restart_safety(void)
{
	Fx fx = { 0 };
	g_autofree gchar *dataset = rs_dataset();
	const guint total = RS_TYPES * RS_FILES * RS_ROWS;
	guint64 bound = 0;
	json_t *summary = NULL;
	json_t *by_prefix = NULL;
	json_int_t entries = 0;

	fx_setup(&fx, dataset,
		 "  eventlogfile:\n    enabled: true\n    event_types: [API, Login, URI]\n"
		 "    lookback: 6h\n");
	if (fx.skip) {
		fx_teardown(&fx);
		return;
	}
	/* a third in, an orderly stop: the drain commits what Loki accepted */
	fx_start_run(&fx);
	fx_wait(&fx, rs_distinct_at_least, GUINT_TO_POINTER(total / 3), "a third of the rows");
	g_subprocess_send_signal(fx.run, SIGTERM);
	g_assert_cmpint(fx_wait_exit(&fx), ==, 0);
	bound += rs_resend_bound(&fx);

	/* two thirds in, a crash: nothing is drained or committed */
	fx_start_run(&fx);
	fx_wait(&fx, rs_distinct_at_least, GUINT_TO_POINTER(2 * total / 3),
		"two thirds of the rows");
	g_subprocess_send_signal(fx.run, SIGKILL);
	fx_wait(&fx, fx_exited, NULL, "the killed process");
	g_subprocess_wait(fx.run, NULL, NULL);
	bound += rs_resend_bound(&fx);

	/* the restart finishes the set */
	fx_start_run(&fx);
	fx_wait(&fx, rs_all_committed, NULL, "every file's checkpoint");
	g_subprocess_send_signal(fx.run, SIGTERM);
	g_assert_cmpint(fx_wait_exit(&fx), ==, 0);

	summary = fx_summary(&fx);
	by_prefix = json_object_get(summary, "by_prefix");
	/* no loss: every row of every file is in Loki */
	g_assert_cmpint(json_integer_value(json_object_get(summary, "distinct")), ==, total);
	for (guint t = 0; t < RS_TYPES; t++) {
		for (guint f = 0; f < RS_FILES; f++) {
			g_autofree gchar *id = rs_file_id(t, f);
			g_assert_cmpint(json_integer_value(json_object_get(by_prefix, id)), ==,
					RS_ROWS);
		}
	}
	/* bounded duplicates: only rows of files that were in flight at a stop come again */
	entries = json_integer_value(json_object_get(summary, "entries"));
	g_test_message("%" G_GINT64_FORMAT " entries for %u rows; resend bound %" G_GUINT64_FORMAT,
		       (gint64)entries, total, bound);
	g_assert_cmpint(entries - total, <=, (json_int_t)bound);
	json_decref(summary);
	fx_teardown(&fx);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/run-salesforce/wrong-key-fails-startup", test_wrong_key_fails_startup);
	g_test_add_func("/run-salesforce/ten-thousand-rows", test_ten_thousand_rows);
	g_test_add_func("/run-salesforce/two-orgs", test_two_orgs);
	g_test_add_func("/run-salesforce/restart-safety", test_restart_safety);
	return g_test_run();
}
