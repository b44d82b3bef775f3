/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestRunSalesforce"

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-curl-loop.h"
#include "sfl-test-sim.h"

/*
 * The real `sf2loki run` binary between the Salesforce and Loki simulators: start-up
 * authentication, a 10,000-row file end to end, and restart safety under SIGTERM and SIGKILL.
 */

#define EVENT_TIMEOUT_SEC 240

typedef struct {
	SflTestSims sims;
	gchar *config;
	gchar *state;
	SflTestDaemon *run;
	const gchar *const *env; /* (nullable) NAME, VALUE pairs for the daemon */
	gconstpointer want;	 /* what the condition being awaited looks for */
} Fx;

static void fx_teardown(Fx *fx);

/* the simulators and the config file; FALSE (torn down, the test skipped) without them */
static gboolean
fx_setup(Fx *fx, const gchar *dataset, const gchar *sources_yaml)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *head = NULL;
	g_autofree gchar *yaml = NULL;

	if (!sfl_test_sims_start(&fx->sims, "sfl-run-sf-XXXXXX", dataset, NULL)) {
		fx_teardown(fx);
		return FALSE;
	}
	fx->config = g_build_filename(fx->sims.dir, "config.yaml", NULL);
	fx->state = g_build_filename(fx->sims.dir, "state.json", NULL);
	head = sfl_test_sims_config(&fx->sims, NULL, NULL);
	yaml = g_strdup_printf("%s"
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
			       head, fx->state, sources_yaml);
	g_assert_true(g_file_set_contents(fx->config, yaml, -1, &error));
	return TRUE;
}

/* a dataset of one hourly API file (sfl_test_elf_file()) */
static gchar *
fx_one_file_dataset(const gchar *id, const gchar *created, guint rows, guint seed)
{
	g_autofree gchar *file = sfl_test_elf_file(id, "API", created, rows, seed);

	return g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
}

/* a fresh daemon (after the last one ended) with the fixture's config and environment */
static void
fx_start_run(Fx *fx)
{
	g_clear_pointer(&fx->run, sfl_test_daemon_free);
	fx->run = sfl_test_daemon_start(fx->config, fx->env);
}

/* the simulators change without telling us: @cond is asked again until it holds */
static void
fx_wait(Fx *fx, SflTestCondFunc cond, gconstpointer want, const gchar *what)
{
	fx->want = want;
	sfl_test_poll_until(cond, fx, EVENT_TIMEOUT_SEC, what);
}

static gint
fx_stop(Fx *fx)
{
	return sfl_test_daemon_stop(fx->run, EVENT_TIMEOUT_SEC);
}

static gchar *
fx_get_metrics(Fx *fx)
{
	g_autofree gchar *url = g_strdup_printf("http://127.0.0.1:%u/metrics",
						sfl_test_daemon_health_port(fx->run));
	guint status = 0;
	gchar *body = sfl_test_http_call(fx->sims.loop, "GET", url, &status);

	g_assert_cmpuint(status, ==, 200);
	return body;
}

static json_t *
fx_summary(Fx *fx)
{
	return sfl_test_sim_control(fx->sims.loop, fx->sims.loki_base, "GET",
				    "/control/summary?field=REQUEST_ID", NULL);
}

static void
fx_teardown(Fx *fx)
{
	g_clear_pointer(&fx->run, sfl_test_daemon_free);
	sfl_test_sims_clear(&fx->sims);
	g_free(fx->config);
	g_free(fx->state);
}

/* --- start-up authentication ---------------------------------------------------------------- */

static void
test_wrong_key_fails_startup(void)
{
	Fx fx = { 0 };
	g_autofree gchar *text = NULL;
	g_autoptr(GError) error = NULL;
	gchar *swapped = NULL;

	if (!fx_setup(&fx, "{\"eventlogfiles\": []}",
		      "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n"))
		return;
	/* a key the connected app does not know */
	g_assert_true(g_file_get_contents(fx.config, &text, NULL, &error));
	{
		g_auto(GStrv) parts = g_strsplit(text, fx.sims.key_path, -1);
		swapped = g_strjoinv(fx.sims.wrong_key_path, parts);
	}
	g_assert_true(g_file_set_contents(fx.config, swapped, -1, &error));
	g_free(swapped);
	fx_start_run(&fx);
	g_assert_cmpint(sfl_test_daemon_wait_exit(fx.run, EVENT_TIMEOUT_SEC), ==, 1);
	g_assert_true(sfl_test_daemon_logged(fx.run, "Salesforce start-up check failed"));
	g_assert_true(sfl_test_daemon_logged(fx.run, "invalid_grant"));
	g_assert_false(sfl_test_daemon_logged(fx.run, "ready; contesting leadership"));
	g_assert_false(sfl_test_daemon_logged(fx.run, "leadership acquired"));
	/* the signed assertion never reaches a log line */
	g_assert_false(sfl_test_daemon_logged(fx.run, "eyJ"));
	fx_teardown(&fx);
}

/* --- a 10,000-row file end to end ----------------------------------------------------------- */

static gboolean
fx_entries_at_least(gpointer data)
{
	Fx *fx = data;
	json_t *summary = fx_summary(fx);
	gboolean done = json_integer_value(json_object_get(summary, "entries")) >=
			(json_int_t)GPOINTER_TO_UINT(fx->want);
	json_decref(summary);
	return done;
}

static void
test_ten_thousand_rows(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *created = sfl_test_sf_datetime(now - 3 * G_TIME_SPAN_HOUR);
	g_autofree gchar *dataset = fx_one_file_dataset("0ATSIM00000TENK1", created, 10000, 11);
	json_t *summary = NULL;
	json_t *received = NULL;
	json_t *streams = NULL;
	gsize i = 0;
	json_t *stream = NULL;
	guint checked = 0;

	if (!fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [API]\n"))
		return;
	fx_start_run(&fx);
	fx_wait(&fx, fx_entries_at_least, GUINT_TO_POINTER(10000), "10,000 entries in Loki");
	{
		/* every entry counted at enqueue, every push that Loki accepted */
		g_autofree gchar *metrics = fx_get_metrics(&fx);
		g_assert_nonnull(strstr(metrics,
					"sf2loki_events_ingested_total{source=\"eventlogfile\","
					"event_type=\"API\"} 10000\n"));
		g_assert_nonnull(strstr(metrics, "sf2loki_loki_push_total{outcome=\"success\"} "));
		/* per source (SFL-0021) */
		g_assert_nonnull(strstr(metrics,
					"sf2loki_ingest_lag_seconds_count{source=\"eventlogfile\","
					"event_type=\"API\"} 10000\n"));
		g_assert_nonnull(strstr(metrics, "\nsf2loki_leader 1\n"));
	}
	sfl_test_daemon_finish(fx.run, EVENT_TIMEOUT_SEC);

	summary = fx_summary(&fx);
	g_assert_cmpint(json_integer_value(json_object_get(summary, "entries")), ==, 10000);
	g_assert_cmpint(json_integer_value(json_object_get(summary, "distinct")), ==, 10000);
	json_decref(summary);

	received = sfl_test_sim_control(fx.sims.loop, fx.sims.loki_base, "GET", "/control/received",
					NULL);
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
fx_state_has(gpointer data)
{
	Fx *fx = data;
	g_autofree gchar *state = NULL;
	const gchar *const *keys = fx->want;

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
	g_autofree gchar *created = sfl_test_sf_datetime(now - 3 * G_TIME_SPAN_HOUR);
	g_autofree gchar *file_a = sfl_test_elf_file("0ATSIM0000ORGA01", "API", created, 300, 1);
	g_autofree gchar *file_b = sfl_test_elf_file("0ATSIM0000ORGB01", "URI", created, 200, 2);
	g_autofree gchar *dataset =
		g_strdup_printf("{\"eventlogfiles\": [%s, %s]}", file_a, file_b);
	g_autofree gchar *yaml = NULL;
	g_autoptr(GError) error = NULL;
	/* the files among the done ids (an escaped JSON value in the state file), not a mark
	 * inside them */
	const gchar *keys[] = { "\"org=alpha:eventlogfile:API\"", "[\\\"0ATSIM0000ORGA01",
				"\"org=beta:eventlogfile:URI\"", "[\\\"0ATSIM0000ORGB01", NULL };
	json_t *summary = NULL;
	json_t *by_labels = NULL;
	const gchar *labels = NULL;
	json_t *count = NULL;
	guint alpha = 0;
	guint beta = 0;

	if (!fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: false\n"))
		return;
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
		fx.sims.sf_base, fx.sims.key_path, fx.sims.sf_base, fx.sims.key_path,
		fx.sims.loki_base, fx.state);
	g_assert_true(g_file_set_contents(fx.config, yaml, -1, &error));
	fx_start_run(&fx);
	/* each org's keys carry its prefix (docs/sources/README.md) */
	fx_wait(&fx, fx_state_has, keys, "both orgs' checkpoints");
	sfl_test_daemon_finish(fx.run, EVENT_TIMEOUT_SEC);

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
			g_autofree gchar *created = sfl_test_sf_datetime(
				now - (gint64)(4 - f) * G_TIME_SPAN_HOUR + t * G_USEC_PER_SEC);
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

/*
 * What the state file says of LogFile @id: done (among some type's ids), or in flight with
 * @mark rows delivered (the `in_flight` of its type's cursor), or neither.
 */
static gboolean
rs_file_done(const gchar *state, const gchar *id, guint64 *mark)
{
	json_t *doc = state != NULL ? json_loads(state, 0, NULL) : NULL;
	const gchar *key = NULL;
	json_t *value = NULL;
	gboolean done = FALSE;

	*mark = 0;
	json_object_foreach (doc, key, value) {
		json_t *cursor = NULL;
		json_t *pair = NULL;
		json_t *flight = NULL;
		gsize i = 0;

		if (strstr(key, "eventlogfile:") == NULL || !json_is_string(value))
			continue;
		cursor = json_loads(json_string_value(value), 0, NULL);
		json_array_foreach (json_object_get(cursor, "ids"), i, pair) {
			const gchar *done_id = json_is_array(pair)
						       ? json_string_value(json_array_get(pair, 0))
						       : json_string_value(pair);
			done |= g_strcmp0(done_id, id) == 0;
		}
		flight = json_object_get(cursor, "in_flight");
		if (g_strcmp0(json_string_value(json_object_get(flight, "id")), id) == 0)
			*mark = (guint64)json_integer_value(json_object_get(flight, "rows"));
		json_decref(cursor);
	}
	json_decref(doc);
	return done;
}

/* rows of files already partly in Loki whose completion was not yet committed: a restart
 * sends again what follows the file's committed mark (docs/sources/eventlogfile.md) */
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
			guint64 mark = 0;

			if (seen > 0 && !rs_file_done(state, id, &mark) && (guint64)seen > mark)
				bound += (guint64)seen - mark;
		}
	}
	json_decref(summary);
	return bound;
}

static gboolean
rs_all_committed(gpointer data)
{
	Fx *fx = data;
	g_autofree gchar *state = NULL;

	if (!g_file_get_contents(fx->state, &state, NULL, NULL))
		return FALSE;
	for (guint t = 0; t < RS_TYPES; t++) {
		g_autofree gchar *id = rs_file_id(t, RS_FILES - 1);
		guint64 mark = 0;

		if (!rs_file_done(state, id, &mark))
			return FALSE;
	}
	return TRUE;
}

static gboolean
rs_distinct_at_least(gpointer data)
{
	Fx *fx = data;
	json_t *summary = fx_summary(fx);
	gboolean done = json_integer_value(json_object_get(summary, "distinct")) >=
			(json_int_t)GPOINTER_TO_UINT(fx->want);
	json_decref(summary);
	return done;
}

/*
 * A push can be on the wire when SIGKILL lands: Loki takes it after the kill, so the count
 * taken right after the kill can miss that one batch, which the restart sends again. Its rows
 * belong to a file in flight all the same; only the count was early.
 */
#define RS_BATCH_ENTRIES 1000

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
	const gchar *env[] = { "SF2LOKI_SINK__LOKI__BATCH__MAX_ENTRIES",
			       G_STRINGIFY(RS_BATCH_ENTRIES), NULL };

	/* the first stop of the three is an orderly one, and the bound on resends assumes it */
	if (sfl_test_skip_without_signals())
		return;
	if (!fx_setup(&fx, dataset,
		      "  eventlogfile:\n    enabled: true\n    event_types: [API, Login, URI]\n"
		      "    lookback: 6h\n"))
		return;
	fx.env = env;
	/* a third in, an orderly stop: the drain commits what Loki accepted */
	fx_start_run(&fx);
	fx_wait(&fx, rs_distinct_at_least, GUINT_TO_POINTER(total / 3), "a third of the rows");
	g_assert_cmpint(fx_stop(&fx), ==, 0);
	bound += rs_resend_bound(&fx);

	/* two thirds in, a crash: nothing is drained or committed */
	fx_start_run(&fx);
	fx_wait(&fx, rs_distinct_at_least, GUINT_TO_POINTER(2 * total / 3),
		"two thirds of the rows");
	sfl_test_proc_signal(fx.run->proc, SFL_TEST_SIGNAL_KILL);
	sfl_test_daemon_wait_exit(fx.run, EVENT_TIMEOUT_SEC);
	bound += rs_resend_bound(&fx) + RS_BATCH_ENTRIES;

	/* the restart finishes the set */
	fx_start_run(&fx);
	fx_wait(&fx, rs_all_committed, NULL, "every file's checkpoint");
	g_assert_cmpint(fx_stop(&fx), ==, 0);

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

/* --- a drain that cannot finish: the shutdown grace bounds it ------------------------------ */

static gboolean fx_metrics_have(gpointer data);

/*
 * Loki takes the first push and never answers it: an orderly stop drains the term for
 * service.shutdown_grace, then abandons what Loki never took and exits 0 with none of it
 * committed, so the next run reads the file again (at least once, never lost).
 */
static void
test_shutdown_grace_bounds_a_stuck_drain(void)
{
	Fx fx = { 0 };
	g_autofree gchar *created = sfl_test_sf_datetime(g_get_real_time() - 3 * G_TIME_SPAN_HOUR);
	g_autofree gchar *dataset = fx_one_file_dataset("0ATSIM00000GRACE", created, 200, 5);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *state = NULL;
	g_autoptr(GString) edited = NULL;
	json_t *answer = NULL;

	if (sfl_test_skip_without_signals())
		return;
	if (!fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [API]\n"))
		return;
	g_assert_true(g_file_get_contents(fx.config, &yaml, NULL, &error));
	g_assert_no_error(error);
	edited = g_string_new(yaml);
	g_assert_cmpuint(g_string_replace(edited, "shutdown_grace: 20s", "shutdown_grace: 1s", 1),
			 ==, 1);
	g_assert_true(g_file_set_contents(fx.config, edited->str, -1, &error));
	answer = sfl_test_sim_control(fx.sims.loop, fx.sims.loki_base, "POST", "/control/fault",
				      "{\"hang\": 1000}");
	json_decref(answer);

	fx_start_run(&fx);
	sfl_test_daemon_wait_logged(fx.run, "health server listening on ", EVENT_TIMEOUT_SEC);
	/* every row is queued (counted at enqueue) while the first push hangs */
	fx_wait(&fx, fx_metrics_have,
		"sf2loki_events_ingested_total{source=\"eventlogfile\",event_type=\"API\"} 200\n",
		"200 rows queued");
	g_assert_cmpint(fx_stop(&fx), ==, 0);
	g_assert_true(sfl_test_daemon_logged(fx.run, "abandoned 200 undelivered entries"));
	g_assert_true(sfl_test_daemon_logged(
		fx.run, "pipeline run stopped: 0 entries pushed, 0 commits, 200 abandoned"));
	/* nothing of the file was committed: Loki took none of it */
	if (g_file_get_contents(fx.state, &state, NULL, NULL))
		g_assert_null(strstr(state, "eventlogfile:API"));
	fx_teardown(&fx);
}

/* --- observability: readiness through a Loki outage, /statusz, /metrics ------------------- */

#define OBS_SECRET "Obs-7Kq-loki-S3cr3t"

static gchar *
fx_health_get(Fx *fx, const gchar *path, guint *status)
{
	g_autofree gchar *url = g_strdup_printf("http://127.0.0.1:%u%s",
						sfl_test_daemon_health_port(fx->run), path);
	return sfl_test_http_call(fx->sims.loop, "GET", url, status);
}

static gboolean
fx_readyz_is(gpointer data)
{
	Fx *fx = data;
	const gchar *want = fx->want;
	guint status = 0;
	g_autofree gchar *body = fx_health_get(fx, "/readyz", &status);
	return body != NULL && g_str_has_prefix(body, want);
}

/* the checkpoint position /statusz shows for @key, or NULL */
static gchar *
fx_status_position(Fx *fx, const gchar *key, const gchar *field)
{
	guint status = 0;
	g_autofree gchar *body = fx_health_get(fx, "/statusz", &status);
	json_t *doc = json_loads(body, 0, NULL);
	json_t *item = NULL;
	gsize i = 0;
	gchar *found = NULL;

	g_assert_cmpuint(status, ==, 200);
	g_assert_nonnull(doc);
	json_array_foreach (json_object_get(doc, "checkpoints"), i, item) {
		if (g_strcmp0(json_string_value(json_object_get(item, "key")), key) == 0)
			found = g_strdup(json_string_value(
				json_object_get(json_object_get(item, "position"), field)));
	}
	json_decref(doc);
	return found;
}

static gboolean
fx_status_has_position(gpointer data)
{
	Fx *fx = data;
	g_autofree gchar *pos = fx_status_position(fx, "eventlogfile:API", "last_created");
	return pos != NULL;
}

static gboolean
fx_metrics_have(gpointer data)
{
	Fx *fx = data;
	g_autofree gchar *metrics = fx_get_metrics(fx);
	return strstr(metrics, fx->want) != NULL;
}

/* promtool (Debian package prometheus) reads the live exposition */
static void
assert_promtool_accepts(const gchar *text)
{
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GBytes) input = g_bytes_new(text, strlen(text));
	g_autoptr(GBytes) out = NULL;
	g_autoptr(GBytes) err = NULL;
	g_autoptr(GError) error = NULL;

	if (!g_file_test("/usr/bin/promtool", G_FILE_TEST_IS_EXECUTABLE)) {
		g_test_message("promtool not installed: exposition not linted");
		return;
	}
	proc = g_subprocess_new(G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
					G_SUBPROCESS_FLAGS_STDERR_MERGE,
				&error, "/usr/bin/promtool", "check", "metrics", NULL);
	g_assert_no_error(error);
	g_subprocess_communicate(proc, input, NULL, &out, &err, &error);
	g_assert_no_error(error);
	if (g_subprocess_get_exit_status(proc) != 0)
		g_test_message("promtool: %.*s", (int)g_bytes_get_size(out),
			       (const gchar *)g_bytes_get_data(out, NULL));
	g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 0);
}

static void
test_observability(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	gint64 created_usec = (now / G_USEC_PER_SEC - 3 * 3600) * G_USEC_PER_SEC;
	g_autofree gchar *created = sfl_test_sf_datetime(created_usec);
	g_autofree gchar *dataset = fx_one_file_dataset("0ATSIM0000000OBS", created, 500, 5);
	g_autofree gchar *metrics = NULL;
	g_autofree gchar *statusz = NULL;
	g_autofree gchar *position = NULL;
	g_autofree gchar *watermark = NULL;
	json_t *reply = NULL;
	guint status = 0;
	const gchar *env[] = { "SF2LOKI_SERVICE__UNREADY_AFTER_SINK_FAILING",
			       "1s",
			       "SF2LOKI_SINK__LOKI__AUTH_TOKEN",
			       OBS_SECRET,
			       "SF2LOKI_SALESFORCE__LIMITS__ENABLED",
			       "true",
			       "SF2LOKI_SINK__LOKI__LABEL_CARDINALITY__MAX_VALUES",
			       "2",
			       NULL };

	/*
	 * the simulator's CLIENT_NAME cycles through 3 values and an empty one (not promoted):
	 * past the guard's 2, the third value's 125 rows fold (SFL-0034)
	 */
	if (!fx_setup(&fx, dataset,
		      "  eventlogfile:\n    enabled: true\n"
		      "    event_types: [{name: API, labels: [CLIENT_NAME]}]\n"))
		return;
	fx.env = env;
	/* Loki fails every push until told otherwise */
	reply = sfl_test_sim_control(fx.sims.loop, fx.sims.loki_base, "POST", "/control/fault",
				     "{\"count\": 1000000, \"status\": 500}");
	json_decref(reply);
	/* the start-up token request is held: the service is up but has not led yet */
	reply = sfl_test_sim_control(fx.sims.loop, fx.sims.sf_base, "POST", "/control/fault",
				     "{\"match\": \"token\", \"count\": 1, \"delay_ms\": 120000}");
	json_decref(reply);
	fx_start_run(&fx);
	sfl_test_daemon_wait_logged(fx.run, "health server listening on ", EVENT_TIMEOUT_SEC);
	fx_wait(&fx, fx_readyz_is, "not ready", "/readyz to say not ready during start-up");
	g_assert_false(sfl_test_daemon_logged(fx.run, "leadership acquired"));
	reply = sfl_test_sim_control(fx.sims.loop, fx.sims.sf_base, "POST", "/control/clear_faults",
				     "{}");
	json_decref(reply);

	/* past the 1 s threshold the leader reports itself degraded, with the duration */
	fx_wait(&fx, fx_readyz_is, "degraded: loki pushes failing for ",
		"/readyz to report the Loki outage");
	g_assert_true(sfl_test_daemon_logged(fx.run, "Loki push failed (HTTP 500), retrying"));
	statusz = fx_health_get(&fx, "/statusz", &status);
	g_assert_nonnull(strstr(statusz, "\"degraded\": \"degraded: loki pushes failing for "));
	g_clear_pointer(&statusz, g_free);
	metrics = fx_get_metrics(&fx);
	g_assert_nonnull(strstr(metrics, "sf2loki_loki_push_total{outcome=\"retried\"} "));
	g_clear_pointer(&metrics, g_free);

	/* Loki heals: ready again, everything delivered, the recovery logged */
	reply = sfl_test_sim_control(fx.sims.loop, fx.sims.loki_base, "POST", "/control/clear",
				     "{}");
	json_decref(reply);
	fx_wait(&fx, fx_readyz_is, "ready", "/readyz to recover");
	fx_wait(&fx, fx_entries_at_least, GUINT_TO_POINTER(500), "500 entries in Loki");
	fx_wait(&fx, fx_status_has_position, NULL, "the committed position in /statusz");
	g_assert_true(sfl_test_daemon_logged(fx.run, "Loki pushes recovered after "));

	position = fx_status_position(&fx, "eventlogfile:API", "last_created");
	g_assert_cmpstr(position, ==, created);
	statusz = fx_health_get(&fx, "/statusz", &status);
	g_assert_null(strstr(statusz, OBS_SECRET));

	fx_wait(&fx, fx_metrics_have, "sf2loki_salesforce_limit_max{", "the first limits poll");
	metrics = fx_get_metrics(&fx);
	g_assert_null(strstr(metrics, OBS_SECRET));
	g_assert_nonnull(strstr(
		metrics, "sf2loki_eventlogfile_files_processed_total{event_type=\"API\"} 1\n"));
	g_assert_nonnull(strstr(
		metrics, "sf2loki_eventlogfile_rows_ingested_total{event_type=\"API\"} 500\n"));
	g_assert_nonnull(
		strstr(metrics, "sf2loki_eventlogfile_download_bytes_total{event_type=\"API\"} "));
	g_assert_null(strstr(metrics,
			     "sf2loki_eventlogfile_download_bytes_total{event_type=\"API\"} 0\n"));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_auth_refreshes_total 1\n"));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_auth_errors_total 0\n"));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_loki_push_duration_seconds_count "));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_loki_bytes_pushed_total "));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_eventlogfile_cycle_seconds "));
	watermark = g_strdup_printf("sf2loki_watermark_timestamp_seconds{source=\"eventlogfile\","
				    "object=\"API\"} %" G_GINT64_FORMAT "\n",
				    created_usec / G_USEC_PER_SEC);
	g_assert_nonnull(strstr(metrics, watermark));
	/* the limits poller of the term (the simulator's org allows 15000 calls a day) */
	g_assert_nonnull(strstr(
		metrics, "sf2loki_salesforce_limit_max{limit_name=\"DailyApiRequests\"} 15000\n"));
	g_assert_nonnull(strstr(
		metrics, "sf2loki_salesforce_limit_remaining{limit_name=\"DailyApiRequests\"} "));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_salesforce_limits_poll_errors_total 0\n"));
	g_assert_nonnull(strstr(
		metrics, "\nsf2loki_label_values_folded_total{label=\"CLIENT_NAME\"} 125\n"));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_label_values{label=\"CLIENT_NAME\"} 2\n"));
	g_assert_true(
		sfl_test_daemon_logged(fx.run, "label CLIENT_NAME took more than 2 distinct"));
	assert_promtool_accepts(metrics);

	sfl_test_daemon_finish(fx.run, EVENT_TIMEOUT_SEC);
	fx_teardown(&fx);
}

/* --- checkpoint commits failing while Loki takes the data (issue 19 item 7) ------------- */

/* the committed eventlogfile:API cursor's last_created in the state file, or NULL */
static gchar *
fx_state_last_created(Fx *fx)
{
	g_autofree gchar *text = NULL;
	json_t *doc = NULL;
	json_t *cursor = NULL;
	gchar *found = NULL;

	if (!g_file_get_contents(fx->state, &text, NULL, NULL))
		return NULL;
	doc = json_loads(text, 0, NULL);
	if (doc != NULL) {
		const gchar *value = json_string_value(json_object_get(doc, "eventlogfile:API"));
		cursor = value != NULL ? json_loads(value, 0, NULL) : NULL;
	}
	if (cursor != NULL)
		found = g_strdup(json_string_value(json_object_get(cursor, "last_created")));
	json_decref(cursor);
	json_decref(doc);
	return found;
}

static gboolean
fx_state_committed(gpointer data)
{
	Fx *fx = data;
	g_autofree gchar *last = fx_state_last_created(fx);
	return g_strcmp0(last, fx->want) == 0;
}

/*
 * The state file is replaced by a directory while the daemon runs (root writes anywhere, so
 * a read-only directory would not stop it): every rename onto it fails. The rows still reach
 * Loki; /readyz turns 503 past the threshold with the reason, /metrics counts the failures by
 * store and reason, and the log names the store and its path. Once the directory is gone the
 * kept checkpoint lands, nothing is lost, and the service is ready again.
 */
/* @s as the JSON log writes it inside a string: a Windows path has its backslashes doubled */
static gchar *
json_string_inner(const gchar *s)
{
	g_autoptr(json_t) str = json_string(s);
	g_autofree gchar *dumped = json_dumps(str, JSON_ENCODE_ANY);

	return g_strndup(dumped + 1, strlen(dumped) - 2);
}

static void
test_commit_failures(void)
{
	g_autofree gchar *state_in_log = NULL;
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	gint64 created_usec = (now / G_USEC_PER_SEC - 3 * 3600) * G_USEC_PER_SEC;
	g_autofree gchar *created = sfl_test_sf_datetime(created_usec);
	g_autofree gchar *dataset = fx_one_file_dataset("0ATSIM0000000CMT", created, 200, 3);
	g_autofree gchar *metrics = NULL;
	g_autofree gchar *statusz = NULL;
	g_autofree gchar *first = NULL;
	g_autofree gchar *recovered = NULL;
	json_t *reply = NULL;
	json_t *summary = NULL;
	guint status = 0;
	const gchar *env[] = { "SF2LOKI_SERVICE__UNREADY_AFTER_SINK_FAILING", "1s", NULL };

	if (!fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [API]\n"))
		return;
	fx.env = env;
	/* the start-up token request is held, so the fault is in place before any commit */
	reply = sfl_test_sim_control(fx.sims.loop, fx.sims.sf_base, "POST", "/control/fault",
				     "{\"match\": \"token\", \"count\": 1, \"delay_ms\": 120000}");
	json_decref(reply);
	fx_start_run(&fx);
	sfl_test_daemon_wait_logged(fx.run, "checkpoint store ready (file)", EVENT_TIMEOUT_SEC);
	g_assert_cmpint(g_mkdir(fx.state, 0700), ==, 0);
	state_in_log = json_string_inner(fx.state);
	reply = sfl_test_sim_control(fx.sims.loop, fx.sims.sf_base, "POST", "/control/clear_faults",
				     "{}");
	json_decref(reply);

	fx_wait(&fx, fx_readyz_is, "degraded: checkpoint commits failing for ",
		"/readyz to report the failing commits");
	g_free(fx_health_get(&fx, "/readyz", &status));
	g_assert_cmpuint(status, ==, 503);
	/* the data itself went through */
	fx_wait(&fx, fx_entries_at_least, GUINT_TO_POINTER(200), "200 entries in Loki");
	/* one warning naming the store and its path */
	first = g_strdup_printf("checkpoint commit to the file store %s failed (io), retrying "
				"with backoff",
				state_in_log);
	g_assert_true(sfl_test_daemon_logged(fx.run, first));
	metrics = fx_get_metrics(&fx);
	g_assert_nonnull(strstr(metrics,
				"\nsf2loki_checkpoint_commit_failures_total{store=\"file\","
				"reason=\"io\"} "));
	assert_promtool_accepts(metrics);
	statusz = fx_health_get(&fx, "/statusz", &status);
	g_assert_nonnull(
		strstr(statusz, "\"degraded\": \"degraded: checkpoint commits failing for "));
	g_assert_null(fx_state_last_created(&fx));

	/* the fault is fixed: the kept checkpoint lands with nothing lost, ready again */
	g_assert_cmpint(g_rmdir(fx.state), ==, 0);
	fx_wait(&fx, fx_state_committed, created, "the checkpoint in the state file");
	fx_wait(&fx, fx_readyz_is, "ready", "/readyz to recover");
	recovered = g_strdup_printf("checkpoint commits to the file store %s recovered after ",
				    state_in_log);
	g_assert_true(sfl_test_daemon_logged(fx.run, recovered));
	summary = fx_summary(&fx);
	g_assert_cmpint(json_integer_value(json_object_get(summary, "distinct")), ==, 200);
	json_decref(summary);
	sfl_test_daemon_finish(fx.run, EVENT_TIMEOUT_SEC);
	fx_teardown(&fx);
}

/* --- the egress governor through the real binary ------------------------------------------ */

static gboolean
fx_status_egress(gpointer data)
{
	Fx *fx = data;
	guint status = 0;
	g_autofree gchar *body = fx_health_get(fx, "/statusz", &status);
	json_t *doc = json_loads(body, 0, NULL);
	json_t *egress = json_object_get(doc, "egress");
	gboolean ok = json_is_true(json_object_get(egress, "enforced")) &&
		      json_is_true(json_object_get(egress, "paused"));

	json_decref(doc);
	return ok;
}

/*
 * A daily budget smaller than any line (100 bytes): in pause mode the leader holds the batch back
 * (no push, no commit), says so on /readyz, /statusz and /metrics, and still stops at once; in drop
 * mode the same rows are dropped, counted and committed past, and the leader is ready.
 */
static void
test_egress_budget(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	gint64 created_usec = (now / G_USEC_PER_SEC - 3 * 3600) * G_USEC_PER_SEC;
	g_autofree gchar *created = sfl_test_sf_datetime(created_usec);
	g_autofree gchar *dataset = fx_one_file_dataset("0ATSIM0000000EGR", created, 300, 9);
	g_autofree gchar *metrics = NULL;
	g_autofree gchar *position = NULL;
	json_t *summary = NULL;
	const gchar *pause_env[] = { "SF2LOKI_SINK__LOKI__EGRESS__DAILY_BYTE_BUDGET", "100",
				     "SF2LOKI_SINK__LOKI__EGRESS__BUDGET_ACTION", "pause", NULL };
	const gchar *drop_env[] = { "SF2LOKI_SINK__LOKI__EGRESS__DAILY_BYTE_BUDGET", "100",
				    "SF2LOKI_SINK__LOKI__EGRESS__BUDGET_ACTION", "drop", NULL };

	if (!fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [API]\n"))
		return;
	fx.env = pause_env;
	fx_start_run(&fx);
	sfl_test_daemon_wait_logged(fx.run, "health server listening on ", EVENT_TIMEOUT_SEC);
	fx_wait(&fx, fx_readyz_is, "degraded: daily byte budget exhausted, pushes paused until ",
		"/readyz to report the budget pause");
	g_assert_true(sfl_test_daemon_logged(fx.run, "is smaller than sink.loki.batch.max_bytes"));
	fx_wait(&fx, fx_status_egress, NULL, "/statusz to show the enforced, paused governor");
	metrics = fx_get_metrics(&fx);
	g_assert_nonnull(strstr(metrics, "\nsf2loki_egress_paused 1\n"));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_egress_budget_used_bytes 0\n"));
	g_clear_pointer(&metrics, g_free);
	summary = fx_summary(&fx);
	g_assert_cmpint(json_integer_value(json_object_get(summary, "entries")), ==, 0);
	json_decref(summary);
	position = fx_status_position(&fx, "eventlogfile:API", "last_created");
	g_assert_null(position);
	/* the held batch does not hold the stop for the 20 s grace, and nothing is lost (where a
	 * child can be stopped in order: not on Windows, where the daemon is killed) */
	sfl_test_daemon_finish(fx.run, EVENT_TIMEOUT_SEC);
	g_assert_false(sfl_test_daemon_logged(fx.run, "shutdown grace"));

	/* drop mode: the same rows are dropped as over budget, and the file is committed */
	fx.env = drop_env;
	fx_start_run(&fx);
	sfl_test_daemon_wait_logged(fx.run, "health server listening on ", EVENT_TIMEOUT_SEC);
	/* attributed to their stream (SFL-0061); single-org has no org */
	fx_wait(&fx, fx_metrics_have,
		"sf2loki_loki_entries_dropped_total{reason=\"budget\",source=\"eventlogfile\","
		"event_type=\"API\",org=\"\"} 300\n",
		"300 rows dropped as over budget");
	fx_wait(&fx, fx_status_has_position, NULL, "the committed position in /statusz");
	position = fx_status_position(&fx, "eventlogfile:API", "last_created");
	g_assert_cmpstr(position, ==, created);
	fx_wait(&fx, fx_readyz_is, "ready", "/readyz to stay ready in drop mode");
	metrics = fx_get_metrics(&fx);
	g_assert_nonnull(strstr(metrics, "\nsf2loki_egress_paused 0\n"));
	assert_promtool_accepts(metrics);
	summary = fx_summary(&fx);
	g_assert_cmpint(json_integer_value(json_object_get(summary, "entries")), ==, 0);
	json_decref(summary);
	g_assert_true(sfl_test_daemon_logged(fx.run, "does not fit in the daily byte budget"));
	sfl_test_daemon_finish(fx.run, EVENT_TIMEOUT_SEC);
	fx_teardown(&fx);
}

/* --- the ApexLog source through the real binary ------------------------------------------ */

/* the Loki simulator's entries of the stream labelled source=apexlog, in the order received */
static json_t *
fx_apexlog_entries(Fx *fx, json_t **received)
{
	json_t *streams = NULL;
	gsize i = 0;
	json_t *stream = NULL;

	*received = sfl_test_sim_control(fx->sims.loop, fx->sims.loki_base, "GET",
					 "/control/received", NULL);
	streams = json_object_get(*received, "streams");
	json_array_foreach (streams, i, stream) {
		json_t *labels = json_object_get(stream, "labels");
		if (g_strcmp0(json_string_value(json_object_get(labels, "source")), "apexlog") == 0)
			return stream;
	}
	return NULL;
}

/*
 * `run` with sources.apexlog: debug log bodies reach the Loki simulator byte for byte, with
 * the identity labels, a log over max_body_bytes as metadata only (never downloaded), the
 * `apexlog` checkpoint in the original's format and the source's metrics.
 */
static void
test_apexlog(void)
{
	Fx fx = { 0 };
	gint64 t = (g_get_real_time() / G_USEC_PER_SEC - 20 * 60) * G_USEC_PER_SEC;
	g_autofree gchar *t0 = sfl_test_sf_datetime(t);
	g_autofree gchar *t1 = sfl_test_sf_datetime(t + G_USEC_PER_SEC);
	/* the body as JSON text in the dataset: a newline, a quote, a non-ASCII letter */
	const gchar *body_json = "64.0 APEX_CODE,FINEST\\n12:00:00.1 (1)|USER_DEBUG|[1]|DEBUG|"
				 "caf\\u00e9 \\\"x\\\"\\n";
	g_autofree gchar *dataset = g_strdup_printf(
		"{\"apexlogs\": [{\"Id\": \"07LSIMRUN0000001\", \"StartTime\": \"%s\", \"body\": "
		"\"%s\"}, {\"Id\": \"07LSIMRUN0000002\", \"StartTime\": \"%s\", \"body\": "
		"\"a body longer than the eighty bytes that max_body_bytes allows in this test, "
		"padded\"}]}",
		t0, body_json, t1);
	g_autofree gchar *want_state = g_strdup_printf(
		"{\\\"ids\\\": [\\\"07LSIMRUN0000001\\\", \\\"07LSIMRUN0000002\\\"], "
		"\\\"last_ts\\\": \\\"%s\\\"}",
		t1);
	const gchar *keys[] = { want_state, NULL };
	json_t *received = NULL;
	json_t *stream = NULL;
	json_t *entries = NULL;
	json_t *labels = NULL;
	json_t *md = NULL;
	g_autofree gchar *metrics = NULL;
	json_t *stats = NULL;
	json_t *requests = NULL;
	gsize i = 0;
	json_t *r = NULL;

	if (!fx_setup(&fx, dataset,
		      "  pubsub: {enabled: false}\n"
		      "  apexlog:\n    enabled: true\n    max_body_bytes: 80\n"))
		return;
	fx_start_run(&fx);
	fx_wait(&fx, fx_entries_at_least, GUINT_TO_POINTER(2), "two ApexLog entries in Loki");
	fx_wait(&fx, fx_state_has, keys, "the apexlog checkpoint in the state file");
	metrics = fx_get_metrics(&fx);
	g_assert_nonnull(strstr(metrics, "\nsf2loki_apexlog_logs_ingested_total 2\n"));
	g_assert_nonnull(
		strstr(metrics, "\nsf2loki_apexlog_bodies_skipped_total{reason=\"size\"} 1\n"));
	g_assert_nonnull(strstr(metrics, "\nsf2loki_apexlog_download_bytes_total 68\n"));
	assert_promtool_accepts(metrics);
	sfl_test_daemon_finish(fx.run, EVENT_TIMEOUT_SEC);

	stream = fx_apexlog_entries(&fx, &received);
	g_assert_nonnull(stream);
	labels = json_object_get(stream, "labels");
	g_assert_cmpstr(json_string_value(json_object_get(labels, "event_type")), ==, "apexlog");
	g_assert_cmpstr(json_string_value(json_object_get(labels, "job")), ==, "sf2loki");
	g_assert_cmpstr(json_string_value(json_object_get(labels, "sf_org_id")), ==,
			"00DSIM0000000001AA");
	entries = json_object_get(stream, "entries");
	g_assert_cmpuint(json_array_size(entries), ==, 2);
	g_assert_cmpstr(
		json_string_value(json_object_get(json_array_get(entries, 0), "line")), ==,
		"64.0 APEX_CODE,FINEST\n12:00:00.1 (1)|USER_DEBUG|[1]|DEBUG|caf\xc3\xa9 \"x\"\n");
	md = json_object_get(json_array_get(entries, 0), "metadata");
	g_assert_cmpstr(json_string_value(json_object_get(md, "Id")), ==, "07LSIMRUN0000001");
	g_assert_null(json_object_get(md, "body_skipped"));
	md = json_object_get(json_array_get(entries, 1), "metadata");
	g_assert_cmpstr(json_string_value(json_object_get(md, "body_skipped")), ==, "true");
	g_assert_cmpstr(json_string_value(json_object_get(md, "body_skip_reason")), ==, "size");
	g_assert_true(g_str_has_prefix(
		json_string_value(json_object_get(json_array_get(entries, 1), "line")),
		"{\"Application\": "));
	json_decref(received);
	/* the oversize log was never downloaded */
	stats = sfl_test_sim_control(fx.sims.loop, fx.sims.sf_base, "GET", "/control/stats", NULL);
	requests = json_object_get(stats, "requests");
	json_array_foreach (requests, i, r) {
		const gchar *path = json_string_value(json_object_get(r, "path"));
		g_assert_null(strstr(path, "07LSIMRUN0000002"));
	}
	json_decref(stats);
	fx_teardown(&fx);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/run-salesforce/apexlog", test_apexlog);
	g_test_add_func("/run-salesforce/wrong-key-fails-startup", test_wrong_key_fails_startup);
	g_test_add_func("/run-salesforce/ten-thousand-rows", test_ten_thousand_rows);
	g_test_add_func("/run-salesforce/two-orgs", test_two_orgs);
	g_test_add_func("/run-salesforce/restart-safety", test_restart_safety);
	g_test_add_func("/run-salesforce/shutdown-grace-bounds-a-stuck-drain",
			test_shutdown_grace_bounds_a_stuck_drain);
	g_test_add_func("/run-salesforce/observability", test_observability);
	g_test_add_func("/run-salesforce/egress-budget", test_egress_budget);
	g_test_add_func("/run-salesforce/commit-failures", test_commit_failures);
	return g_test_run();
}
