/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestApexLog"

#include "config.h"

#include <string.h>

#include "sfl-apexlog-source.h"
#include "sfl-checkpoint-store.h"
#include "sfl-config.h"
#include "sfl-error.h"
#include "sfl-memory-store.h"
#include "sfl-pipeline.h"
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"
#include "sfl-shape.h"
#include "sfl-sink.h"
#include "sfl-test-sim.h"

/*
 * The ApexLog source (docs/sources/apexlog.md) against the Salesforce simulator's Tooling API,
 * through the real pipeline into a capturing sink, with an in-memory checkpoint store. The
 * source's timer runs on a fake clock, so "the next poll" is a clock advance, never a wait.
 * What the source asked for is read back from the simulator's request log.
 */

#define TEST_DEADLINE_USEC (60 * G_USEC_PER_SEC)
#define MINUTE		   (60 * G_USEC_PER_SEC)

/* the warnings and criticals the source logged, for the assertions that name a log Id */
static GString *test_log;

typedef struct {
	gchar *dir;
	gchar *key_path;
	gchar *pub_path;
	gchar *sf_base;
	SflTestSim *sf_proc;
	SflCurlLoop *loop;
	SflClock *fake;
	SflClock *system;
	SflConfig *config;
	SflSfAuth *auth;
	SflSfRest *rest;
	SflMemoryBacking *backing;
	SflCheckpointStore *store;
	SflTestCapture *sink;
	SflPipeline *pipeline;
	SflSource *source;
	SflLabelsInterner *interner;
	SflMetrics *metrics;
	gint64 queue_maxsize; /* sink.loki.batch.queue_maxsize, 0: the default */
	gboolean skip;
} Fx;

static void
fx_wait(Fx *fx, gboolean (*cond)(Fx *fx, gpointer data), gpointer data, const gchar *what)
{
	sfl_test_fixture_wait((SflTestFixtureCond)cond, fx, data, TEST_DEADLINE_USEC, what);
}

/* the simulator with @dataset, and a config of the salesforce section plus @apexlog_yaml (the
 * keys under sources.apexlog) */
static void
fx_setup(Fx *fx, const gchar *dataset, const gchar *apexlog_yaml)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dataset_path = NULL;
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *head = NULL;
	SflTestSims sims = { 0 };

	g_string_truncate(test_log, 0);
	fx->dir = g_dir_make_tmp("sfl-apexlog-XXXXXX", &error);
	g_assert_no_error(error);
	fx->key_path = g_build_filename(fx->dir, "key.pem", NULL);
	fx->pub_path = g_build_filename(fx->dir, "pub.pem", NULL);
	sfl_test_write_rsa_key(fx->key_path, fx->pub_path);
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
	sims.sf_base = fx->sf_base;
	sims.key_path = fx->key_path;
	head = sfl_test_sims_config(&sims, NULL, "http://127.0.0.1:9");
	yaml = g_strdup_printf("%s"
			       "    structured_metadata_fields: [Operation]\n"
			       "    batch:\n"
			       "      max_entries: 100\n"
			       "      flush_interval: 20ms\n"
			       "      queue_maxsize: %" G_GINT64_FORMAT "\n"
			       "sources:\n"
			       "  apexlog:\n"
			       "    enabled: true\n%s",
			       head, fx->queue_maxsize > 0 ? fx->queue_maxsize : 10000,
			       apexlog_yaml);
	fx->config = sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", NULL, &error);
	g_assert_no_error(error);
	fx->loop = sfl_curl_loop_new();
	fx->fake = sfl_fake_clock_new(g_get_real_time());
	fx->system = sfl_clock_get_system();
	fx->auth = sfl_sf_auth_new(fx->loop, fx->config->data.salesforce, fx->system, &error);
	g_assert_no_error(error);
	fx->rest = sfl_sf_rest_new(fx->loop, fx->auth, fx->config->data.salesforce->api_version);
	fx->backing = sfl_memory_backing_new();
	fx->store = sfl_memory_store_new(fx->backing);
	fx->sink = g_object_new(SFL_TEST_TYPE_CAPTURE, NULL);
	fx->interner = sfl_labels_interner_new();
	fx->metrics = sfl_metrics_new();
}

/* a new source on the same store, pipeline and sink: a restart as far as the source knows */
static void
fx_start(Fx *fx)
{
	const gchar *labels[] = { "job", "sf2loki", NULL };
	g_autoptr(SflLaneHandle) lane = NULL;
	g_autoptr(GError) error = NULL;
	SflSourceContext ctx = { 0 };
	SflApexLogSource *source = NULL;

	if (fx->pipeline == NULL)
		fx->pipeline = sfl_pipeline_new(&fx->config->data.sink.loki.batch,
						SFL_SINK(fx->sink), fx->store, fx->system);
	source = sfl_apexlog_source_new(fx->rest, &fx->config->data.sources.apexlog, NULL, &error);
	g_assert_no_error(error);
	lane = sfl_pipeline_get_lane(fx->pipeline, SFL_LANE_BULK);
	fx->source = SFL_SOURCE(source);
	ctx.lane = lane;
	ctx.store = fx->store;
	ctx.interner = fx->interner;
	ctx.clock = fx->fake;
	ctx.static_labels = labels;
	ctx.key_prefix = "";
	ctx.metadata_fields =
		(const gchar *const *)fx->config->data.sink.loki.structured_metadata_fields;
	ctx.metrics = fx->metrics;
	sfl_source_start(fx->source, &ctx);
}

static void
fx_stop_source(Fx *fx)
{
	if (fx->source != NULL)
		sfl_source_stop(fx->source);
	g_clear_object(&fx->source);
}

static void
fx_teardown(Fx *fx)
{
	fx_stop_source(fx);
	sfl_test_pipeline_stop(&fx->pipeline, fx->sink, TEST_DEADLINE_USEC / G_USEC_PER_SEC);
	g_clear_object(&fx->sink);
	g_clear_object(&fx->store);
	g_clear_pointer(&fx->backing, sfl_memory_backing_unref);
	g_clear_object(&fx->rest);
	g_clear_object(&fx->auth);
	g_clear_object(&fx->loop);
	g_clear_pointer(&fx->interner, sfl_labels_interner_unref);
	g_clear_pointer(&fx->metrics, sfl_metrics_unref);
	g_clear_pointer(&fx->fake, sfl_clock_unref);
	g_clear_pointer(&fx->system, sfl_clock_unref);
	g_clear_pointer(&fx->config, sfl_config_free);
	if (fx->sf_proc != NULL) {
		sfl_test_sim_kill(fx->sf_proc);
		g_clear_object(&fx->sf_proc);
	}
	while (g_main_context_iteration(NULL, FALSE))
		;
	if (fx->dir != NULL)
		sfl_test_rmtree(fx->dir);
	g_free(fx->dir);
	g_free(fx->key_path);
	g_free(fx->pub_path);
	g_free(fx->sf_base);
}

static gchar *
fx_committed(Fx *fx)
{
	g_autoptr(SflStateDoc) doc = sfl_memory_backing_dup_document(fx->backing);
	return g_strdup(doc != NULL ? sfl_state_doc_get(doc, "apexlog") : NULL);
}

static void
fx_done_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
}

static gboolean
fx_flag(Fx *fx, gpointer data)
{
	return *(gboolean *)data;
}

static void
fx_seed(Fx *fx, const gchar *value)
{
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	gboolean done = FALSE;

	sfl_state_doc_set(doc, "apexlog", value);
	sfl_checkpoint_store_commit_many_async(fx->store, doc, SFL_CHECKPOINT_STORE_NONE, NULL,
					       fx_done_cb, &done);
	fx_wait(fx, fx_flag, &done, "the seed commit");
}

/* the committed value contains @data */
static gboolean
fx_has_commit(Fx *fx, gpointer data)
{
	g_autofree gchar *value = fx_committed(fx);
	return value != NULL && strstr(value, data) != NULL;
}

static gboolean
fx_polls(Fx *fx, gpointer data)
{
	return sfl_apexlog_source_get_counters(SFL_APEXLOG_SOURCE(fx->source))->polls_done >=
	       GPOINTER_TO_UINT(data);
}

static gboolean
fx_has_rows(Fx *fx, gpointer data)
{
	return fx->sink->rows->len >= GPOINTER_TO_UINT(data);
}

/* the next poll: past the poll interval and its jitter */
static void
fx_next_poll(Fx *fx)
{
	guint64 done = sfl_apexlog_source_get_counters(SFL_APEXLOG_SOURCE(fx->source))->polls_done;

	sfl_fake_clock_advance(fx->fake, 2 * MINUTE);
	fx_wait(fx, fx_polls, GUINT_TO_POINTER((guint)done + 1), "the next poll");
}

static void
fx_control(Fx *fx, const gchar *path, const gchar *body)
{
	json_t *answer = sfl_test_sim_control(fx->loop, fx->sf_base, "POST", path, body);
	json_decref(answer);
}

/* requests whose path contains @path_part and (if given) whose q contains @q_part */
static guint
fx_count_requests(Fx *fx, const gchar *path_part, const gchar *q_part)
{
	json_t *stats = sfl_test_sim_control(fx->loop, fx->sf_base, "GET", "/control/stats", NULL);
	json_t *requests = json_object_get(stats, "requests");
	gsize i = 0;
	json_t *r = NULL;
	guint n = 0;

	json_array_foreach (requests, i, r) {
		const gchar *path = json_string_value(json_object_get(r, "path"));
		const gchar *q = json_string_value(json_object_get(r, "q"));
		if (path != NULL && strstr(path, path_part) != NULL &&
		    (q_part == NULL || (q != NULL && strstr(q, q_part) != NULL)))
			n++;
	}
	json_decref(stats);
	return n;
}

static guint
fx_body_requests(Fx *fx, const gchar *id)
{
	g_autofree gchar *part = g_strdup_printf("/tooling/sobjects/ApexLog/%s/Body", id);
	return fx_count_requests(fx, part, NULL);
}

static SflTestRow *
fx_row(Fx *fx, guint i)
{
	g_assert_cmpuint(i, <, fx->sink->rows->len);
	return g_ptr_array_index(fx->sink->rows, i);
}

/* the Prometheus text has @line (a whole series line) */
static void
fx_assert_metric(Fx *fx, const gchar *line)
{
	g_autofree gchar *text = sfl_metrics_render_prometheus(fx->metrics);
	g_autofree gchar *want = g_strdup_printf("\n%s\n", line);

	if (strstr(text, want) == NULL)
		g_error("no metric line %s in:\n%s", line, text);
}

/* {"Id": ..., "StartTime": ..., "body": ..., extra} */
static gchar *
apexlog(const gchar *id, gint64 start_usec, const gchar *body, const gchar *extra)
{
	g_autofree gchar *start = sfl_test_sf_datetime(start_usec);
	json_t *doc = json_pack("{s:s, s:s, s:s}", "Id", id, "StartTime", start, "body", body);
	gchar *text = NULL;

	if (extra != NULL) {
		json_t *more = json_loads(extra, 0, NULL);
		g_assert_nonnull(more);
		json_object_update(doc, more);
		json_decref(more);
	}
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return text;
}

static const gchar *body_one =
	"64.0 APEX_CODE,FINEST;DB,INFO\n"
	"12:00:00.0 (1)|EXECUTION_STARTED\n"
	"12:00:00.1 (2)|USER_DEBUG|[3]|DEBUG|caf\xc3\xa9 \"quoted\" \\ tab\t\n"
	"12:00:00.2 (3)|EXECUTION_FINISHED\n";

/* --- cases ---------------------------------------------------------------------------------- */

/*
 * Three logs (two share a StartTime): each body arrives byte-exact as its line, with the
 * labels, the metadata and the original's checkpoint; a restart resumes from the checkpoint
 * and ships only the log that is new.
 */
static void
test_bodies_checkpoint_restart(void)
{
	Fx fx = { 0 };
	gint64 t = g_get_real_time() - 30 * MINUTE;
	g_autofree gchar *a =
		apexlog("07LSIM0000000001", t, body_one, "{\"Operation\": \"/apex/A\"}");
	g_autofree gchar *b = apexlog("07LSIM0000000002", t, "second", NULL);
	g_autofree gchar *c = apexlog("07LSIM0000000003", t + G_USEC_PER_SEC, "third\n",
				      "{\"Status\": \"Fail\"}");
	g_autofree gchar *d = apexlog("07LSIM0000000004", t + 2 * G_USEC_PER_SEC, "fourth", NULL);
	g_autofree gchar *dataset = g_strdup_printf("{\"apexlogs\": [%s, %s, %s]}", c, a, b);
	g_autofree gchar *more = g_strdup_printf("{\"apexlogs\": [%s]}", d);
	g_autofree gchar *last_ts = sfl_test_sf_datetime(t + G_USEC_PER_SEC);
	g_autofree gchar *want = g_strdup_printf("{\"ids\": [\"07LSIM0000000001\", "
						 "\"07LSIM0000000002\", \"07LSIM0000000003\"], "
						 "\"last_ts\": \"%s\"}",
						 last_ts);
	g_autofree gchar *committed = NULL;
	g_autofree gchar *bytes = NULL;
	SflTestRow *row = NULL;

	fx_setup(&fx, dataset, "");
	if (fx.skip)
		return;
	fx_start(&fx);
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM0000000003", "the third log committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 3);
	g_assert_cmpstr(fx_row(&fx, 0)->line, ==, body_one);
	g_assert_cmpstr(fx_row(&fx, 1)->line, ==, "second");
	g_assert_cmpstr(fx_row(&fx, 2)->line, ==, "third\n");
	row = fx_row(&fx, 0);
	g_assert_cmpstr(row->labels, ==,
			"{event_type=\"apexlog\",job=\"sf2loki\",source=\"apexlog\"}");
	/* the configured field first, then level, then every non-empty metadata field */
	g_assert_true(g_str_has_prefix(row->metadata, "Operation=/apex/A;level="));
	g_assert_nonnull(strstr(row->metadata, ";Id=07LSIM0000000001;"));
	{
		g_autofree gchar *length = g_strdup_printf(";LogLength=%zu;", strlen(body_one));
		g_assert_nonnull(strstr(row->metadata, length));
	}
	g_assert_null(strstr(row->metadata, "body_skipped"));
	g_assert_cmpint(row->ts_ns, ==, t / G_USEC_PER_SEC * G_USEC_PER_SEC * 1000);
	/* Status drives the level */
	g_assert_nonnull(strstr(row->metadata, ";level=info;"));
	g_assert_nonnull(strstr(fx_row(&fx, 2)->metadata, ";level=warn;"));
	g_assert_nonnull(strstr(fx_row(&fx, 2)->metadata, "Status=Fail"));
	committed = fx_committed(&fx);
	g_assert_cmpstr(committed, ==, want);
	{
		/* what /statusz and the commit gauges read of it */
		SflCheckpointView view = { 0 };
		g_assert_false(
			sfl_apexlog_source_describe_checkpoint("apexlog:x", committed, &view));
		g_assert_true(sfl_apexlog_source_describe_checkpoint("apexlog", committed, &view));
		g_assert_cmpstr(view.source, ==, "apexlog");
		g_assert_cmpstr(view.object, ==, "apexlog");
		g_assert_true(view.has_time);
		g_assert_cmpfloat(view.time_seconds, ==,
				  (gdouble)((t + G_USEC_PER_SEC) / G_USEC_PER_SEC));
		sfl_checkpoint_view_clear(&view);
	}
	/* the Tooling API, first from the lookback with no id, ordered by (StartTime, Id) */
	g_assert_cmpuint(
		fx_count_requests(&fx, "/tooling/query", "FROM ApexLog WHERE StartTime >= "), ==,
		1);
	g_assert_cmpuint(fx_count_requests(&fx, "/tooling/query",
					   "ORDER BY StartTime ASC, Id ASC LIMIT 200"),
			 ==, 1);
	fx_assert_metric(&fx, "sf2loki_apexlog_logs_ingested_total 3");
	bytes = g_strdup_printf("sf2loki_apexlog_download_bytes_total %zu",
				strlen(body_one) + strlen("second") + strlen("third\n"));
	fx_assert_metric(&fx, bytes);

	/* a restart: the new source reads the checkpoint and asks past the last id */
	fx_stop_source(&fx);
	fx_control(&fx, "/control/add", more);
	fx_start(&fx);
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM0000000004", "the fourth log committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 4);
	g_assert_cmpstr(fx_row(&fx, 3)->line, ==, "fourth");
	g_assert_cmpuint(fx_count_requests(&fx, "/tooling/query", "AND Id > '07LSIM0000000003'"),
			 ==, 1);
	g_assert_cmpuint(fx_body_requests(&fx, "07LSIM0000000001"), ==, 1);
	fx_teardown(&fx);
}

/* a log over max_body_bytes ships its metadata without a download; one whose LogLength
 * understates its body is cut at the cap */
static void
test_size_cap(void)
{
	Fx fx = { 0 };
	gint64 t = g_get_real_time() - 30 * MINUTE;
	g_autofree gchar *a = apexlog("07LSIM00000000S1", t, "small", NULL);
	g_autofree gchar *b = apexlog("07LSIM00000000S2", t + G_USEC_PER_SEC,
				      "this body is longer than twenty bytes", NULL);
	g_autofree gchar *c = apexlog("07LSIM00000000S3", t + 2 * G_USEC_PER_SEC,
				      "this one lies about its length", "{\"LogLength\": 4}");
	g_autofree gchar *dataset = g_strdup_printf("{\"apexlogs\": [%s, %s, %s]}", a, b, c);
	json_t *line = NULL;

	fx_setup(&fx, dataset, "    max_body_bytes: 20\n");
	if (fx.skip)
		return;
	fx_start(&fx);
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM00000000S3", "the third log committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 3);
	g_assert_cmpstr(fx_row(&fx, 0)->line, ==, "small");
	/* the metadata payload as the line: canonical JSON, sorted keys */
	line = json_loads(fx_row(&fx, 1)->line, 0, NULL);
	g_assert_nonnull(line);
	g_assert_cmpstr(json_string_value(json_object_get(line, "Id")), ==, "07LSIM00000000S2");
	g_assert_cmpint(json_integer_value(json_object_get(line, "LogLength")), ==, 37);
	g_assert_null(json_object_get(line, "attributes"));
	json_decref(line);
	g_assert_true(g_str_has_prefix(fx_row(&fx, 1)->line, "{\"Application\": "));
	g_assert_true(g_str_has_suffix(fx_row(&fx, 1)->metadata,
				       ";body_skipped=true;body_skip_reason=size"));
	g_assert_true(g_str_has_suffix(fx_row(&fx, 2)->metadata,
				       ";body_skipped=true;body_skip_reason=size"));
	/* no download for the one whose LogLength said it was too big */
	g_assert_cmpuint(fx_body_requests(&fx, "07LSIM00000000S2"), ==, 0);
	g_assert_cmpuint(fx_body_requests(&fx, "07LSIM00000000S3"), ==, 1);
	fx_assert_metric(&fx, "sf2loki_apexlog_bodies_skipped_total{reason=\"size\"} 2");
	fx_teardown(&fx);
}

/* the users filter reaches Salesforce as LogUser.Username IN (...); a stored id with a quote
 * is sent as an escaped SOQL literal (SFL-0066) */
static void
test_users_and_escaped_id(void)
{
	Fx fx = { 0 };
	gint64 t = g_get_real_time() - 30 * MINUTE;
	g_autofree gchar *a = apexlog("07LSIM00000000U1", t, "by a", "{\"Username\": \"a@x.com\"}");
	g_autofree gchar *b =
		apexlog("07LSIM00000000U2", t, "by b", "{\"Username\": \"b.b@x.com\"}");
	g_autofree gchar *c =
		apexlog("07LSIM00000000U3", t, "by c", "{\"Username\": \"c+c@x.com\"}");
	g_autofree gchar *dataset = g_strdup_printf("{\"apexlogs\": [%s, %s, %s]}", a, b, c);
	g_autofree gchar *wm = sfl_test_sf_datetime(t);
	g_autofree gchar *seed =
		g_strdup_printf("{\"ids\": [\"07L'0\\\\\"], \"last_ts\": \"%s\"}", wm);

	fx_setup(&fx, dataset, "    users: [a@x.com, c+c@x.com]\n");
	if (fx.skip)
		return;
	fx_seed(&fx, seed);
	fx_start(&fx);
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM00000000U3", "the third log committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 2);
	g_assert_cmpstr(fx_row(&fx, 0)->line, ==, "by a");
	g_assert_cmpstr(fx_row(&fx, 1)->line, ==, "by c");
	g_assert_cmpuint(fx_count_requests(&fx, "/tooling/query",
					   " AND LogUser.Username IN ('a@x.com', 'c+c@x.com') "),
			 ==, 1);
	/* the quote and the backslash escaped, and the simulator's SOQL parser took it */
	g_assert_cmpuint(fx_count_requests(&fx, "/tooling/query", "AND Id > '07L\\'0\\\\'))"), ==,
			 1);
	fx_teardown(&fx);
}

/*
 * SFL-0009: a body that fails with a 503 stops the poll before that log (its checkpoint is not
 * committed, the later log is not fetched); the next poll fetches it and nothing is lost.
 */
static void
test_body_failure_retried(void)
{
	Fx fx = { 0 };
	gint64 t = g_get_real_time() - 30 * MINUTE;
	g_autofree gchar *a = apexlog("07LSIM00000000R1", t, "one", NULL);
	g_autofree gchar *b = apexlog("07LSIM00000000R2", t + G_USEC_PER_SEC, "two", NULL);
	g_autofree gchar *c = apexlog("07LSIM00000000R3", t + 2 * G_USEC_PER_SEC, "three", NULL);
	g_autofree gchar *dataset = g_strdup_printf("{\"apexlogs\": [%s, %s, %s]}", a, b, c);
	g_autofree gchar *first_ts = sfl_test_sf_datetime(t);
	g_autofree gchar *want =
		g_strdup_printf("{\"ids\": [\"07LSIM00000000R1\"], \"last_ts\": \"%s\"}", first_ts);
	g_autofree gchar *committed = NULL;

	fx_setup(&fx, dataset, "");
	if (fx.skip)
		return;
	fx_control(
		&fx, "/control/fault",
		"{\"match\": \"apexlog_body\", \"id\": \"07LSIM00000000R2\", \"count\": 1, "
		"\"status\": 503, \"error_code\": \"SERVER_UNAVAILABLE\", \"message\": \"busy\"}");
	fx_start(&fx);
	fx_wait(&fx, fx_polls, GUINT_TO_POINTER(1), "the first poll");
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM00000000R1", "the first log committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 1);
	committed = fx_committed(&fx);
	g_assert_cmpstr(committed, ==, want);
	g_assert_cmpuint(fx_body_requests(&fx, "07LSIM00000000R3"), ==, 0);
	g_assert_nonnull(strstr(test_log->str, "07LSIM00000000R2"));
	fx_assert_metric(&fx, "sf2loki_apexlog_download_errors_total{reason=\"HTTP 503\"} 1");

	fx_next_poll(&fx);
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM00000000R3", "the retried logs committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 3);
	g_assert_cmpstr(fx_row(&fx, 1)->line, ==, "two");
	g_assert_cmpstr(fx_row(&fx, 2)->line, ==, "three");
	g_assert_cmpuint(fx_body_requests(&fx, "07LSIM00000000R2"), ==, 2);
	fx_assert_metric(&fx, "sf2loki_apexlog_logs_ingested_total 3");
	fx_teardown(&fx);
}

/*
 * A body that fails for a log older than download_max_age is abandoned: its metadata ships
 * with body_skip_reason=download_error, counted and logged with the Id; a 404 (the log is
 * gone) is abandoned at once, whatever its age.
 */
static void
test_abandoned(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *a = apexlog("07LSIM00000000A1", now - 2 * G_TIME_SPAN_HOUR, "old", NULL);
	g_autofree gchar *b = apexlog("07LSIM00000000A2", now - 10 * MINUTE, "gone", NULL);
	g_autofree gchar *c = apexlog("07LSIM00000000A3", now - 9 * MINUTE, "fine", NULL);
	g_autofree gchar *dataset = g_strdup_printf("{\"apexlogs\": [%s, %s, %s]}", a, b, c);

	fx_setup(&fx, dataset, "    lookback: 3h\n    download_max_age: 1h\n");
	if (fx.skip)
		return;
	fx_control(
		&fx, "/control/fault",
		"{\"match\": \"apexlog_body\", \"id\": \"07LSIM00000000A1\", \"count\": 1, "
		"\"status\": 500, \"error_code\": \"UNKNOWN_EXCEPTION\", \"message\": \"boom\"}");
	fx_control(&fx, "/control/fault",
		   "{\"match\": \"apexlog_body\", \"id\": \"07LSIM00000000A2\", \"count\": 1, "
		   "\"status\": 404, \"error_code\": \"NOT_FOUND\", \"message\": \"gone\"}");
	fx_start(&fx);
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM00000000A3", "the third log committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 3);
	g_assert_true(g_str_has_prefix(fx_row(&fx, 0)->line, "{\"Application\": "));
	g_assert_true(g_str_has_suffix(fx_row(&fx, 0)->metadata,
				       ";body_skipped=true;body_skip_reason=download_error"));
	g_assert_true(g_str_has_suffix(fx_row(&fx, 1)->metadata,
				       ";body_skipped=true;body_skip_reason=download_error"));
	g_assert_cmpstr(fx_row(&fx, 2)->line, ==, "fine");
	g_assert_nonnull(strstr(test_log->str, "abandoning the body of ApexLog 07LSIM00000000A1"));
	g_assert_nonnull(strstr(test_log->str, "ApexLog 07LSIM00000000A2"));
	fx_assert_metric(&fx, "sf2loki_apexlog_bodies_skipped_total{reason=\"download_error\"} 2");
	fx_assert_metric(&fx, "sf2loki_apexlog_download_errors_total{reason=\"HTTP 500\"} 1");
	fx_assert_metric(&fx, "sf2loki_apexlog_download_errors_total{reason=\"HTTP 404\"} 1");
	g_assert_cmpuint(
		sfl_apexlog_source_get_counters(SFL_APEXLOG_SOURCE(fx.source))->logs_abandoned, ==,
		2);
	fx_teardown(&fx);
}

/* throttling (REQUEST_LIMIT_EXCEEDED) of a body or of the listing stops the poll; the next
 * poll delivers */
static void
test_throttled(void)
{
	Fx fx = { 0 };
	gint64 t = g_get_real_time() - 30 * MINUTE;
	g_autofree gchar *a = apexlog("07LSIM00000000T1", t, "one", NULL);
	g_autofree gchar *b = apexlog("07LSIM00000000T2", t + G_USEC_PER_SEC, "two", NULL);
	g_autofree gchar *dataset = g_strdup_printf("{\"apexlogs\": [%s, %s]}", a, b);
	g_autofree gchar *committed = NULL;

	fx_setup(&fx, dataset, "");
	if (fx.skip)
		return;
	fx_control(&fx, "/control/fault",
		   "{\"match\": \"apexlog_body\", \"count\": 1, \"status\": 403, \"error_code\": "
		   "\"REQUEST_LIMIT_EXCEEDED\", \"message\": \"TotalRequests Limit exceeded.\"}");
	fx_start(&fx);
	fx_wait(&fx, fx_polls, GUINT_TO_POINTER(1), "the first poll");
	g_assert_cmpuint(fx_body_requests(&fx, "07LSIM00000000T1"), ==, 1);
	g_assert_cmpuint(fx_body_requests(&fx, "07LSIM00000000T2"), ==, 0);
	committed = fx_committed(&fx);
	g_assert_null(committed);
	g_assert_cmpuint(fx.sink->rows->len, ==, 0);
	fx_assert_metric(&fx, "sf2loki_salesforce_api_throttled_total{api=\"apexlog_body\"} 1");

	/* the listing throttled: counted under the poll errors, nothing fetched */
	fx_control(&fx, "/control/fault",
		   "{\"match\": \"query\", \"count\": 1, \"status\": 403, \"error_code\": "
		   "\"REQUEST_LIMIT_EXCEEDED\", \"message\": \"TotalRequests Limit exceeded.\"}");
	fx_next_poll(&fx);
	g_assert_cmpuint(fx_body_requests(&fx, "07LSIM00000000T1"), ==, 1);
	fx_assert_metric(&fx, "sf2loki_salesforce_api_throttled_total{api=\"soql\"} 1");
	fx_assert_metric(&fx,
			 "sf2loki_soql_poll_errors_total{source=\"apexlog\",object=\"apexlog\"} 1");

	fx_next_poll(&fx);
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM00000000T2", "both logs committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 2);
	g_assert_cmpstr(fx_row(&fx, 0)->line, ==, "one");
	g_assert_cmpstr(fx_row(&fx, 1)->line, ==, "two");
	fx_teardown(&fx);
}

/* sampling keeps the logs whose Id the deterministic sampler keeps, and downloads no other;
 * the cursor still moves past the dropped ones */
static void
test_sampling(void)
{
	Fx fx = { 0 };
	gint64 t = g_get_real_time() - 30 * MINUTE;
	g_autoptr(GString) logs = g_string_new(NULL);
	g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func(g_free);
	g_autofree gchar *dataset = NULL;
	g_autofree gchar *last_id = NULL;
	guint dropped = 0;

	for (guint i = 0; i < 24; i++) {
		g_autofree gchar *id = g_strdup_printf("07LSIM0000000%03u", i);
		g_autofree gchar *body = g_strdup_printf("body of %s", id);
		g_autofree gchar *one = apexlog(id, t + i * G_USEC_PER_SEC, body, NULL);
		g_string_append_printf(logs, "%s%s", i > 0 ? ", " : "", one);
		if (sfl_sample_keep(id, strlen(id), 0.5))
			g_ptr_array_add(kept, g_strdup_printf("body of %s", id));
		else
			dropped++;
		g_free(last_id);
		last_id = g_strdup(id);
	}
	g_assert_cmpuint(kept->len, >, 0);
	g_assert_cmpuint(dropped, >, 0);
	dataset = g_strdup_printf("{\"apexlogs\": [%s]}", logs->str);
	fx_setup(&fx, dataset, "    sample: 0.5\n");
	if (fx.skip)
		return;
	fx_start(&fx);
	fx_wait(&fx, fx_has_commit, last_id, "the last log in the checkpoint");
	fx_wait(&fx, fx_has_rows, GUINT_TO_POINTER(kept->len), "the kept logs");
	g_assert_cmpuint(fx.sink->rows->len, ==, kept->len);
	for (guint i = 0; i < kept->len; i++)
		g_assert_cmpstr(fx_row(&fx, i)->line, ==, g_ptr_array_index(kept, i));
	g_assert_cmpuint(fx_count_requests(&fx, "/Body", NULL), ==, kept->len);
	{
		g_autofree gchar *line = g_strdup_printf("sf2loki_entries_sampled_out_total{source="
							 "\"apexlog\",event_type=\"apexlog\"} "
							 "%u",
							 dropped);
		fx_assert_metric(&fx, line);
	}
	fx_teardown(&fx);
}

/* transforms rewrite the metadata, never the body; a drop_row drops the log without a
 * download */
static void
test_transforms_metadata_only(void)
{
	Fx fx = { 0 };
	gint64 t = g_get_real_time() - 30 * MINUTE;
	g_autofree gchar *a =
		apexlog("07LSIM00000000X1", t, "user 005SIM0000000001AA ran /apex/Keep",
			"{\"Operation\": \"/apex/Keep\"}");
	g_autofree gchar *b = apexlog("07LSIM00000000X2", t + G_USEC_PER_SEC, "dropped",
				      "{\"Operation\": \"/apex/Noise\"}");
	g_autofree gchar *dataset = g_strdup_printf("{\"apexlogs\": [%s, %s]}", a, b);
	SflTestRow *row = NULL;

	fx_setup(&fx, dataset,
		 "    transforms:\n"
		 "      - {action: hash, fields: [LogUserId]}\n"
		 "      - {action: drop_row, match: {Operation: \"*Noise\"}}\n");
	if (fx.skip)
		return;
	fx_start(&fx);
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM00000000X2",
		"the dropped log in the checkpoint");
	g_assert_cmpuint(fx.sink->rows->len, ==, 1);
	row = fx_row(&fx, 0);
	g_assert_cmpstr(row->line, ==, "user 005SIM0000000001AA ran /apex/Keep");
	g_assert_nonnull(strstr(row->metadata, ";LogUserId="));
	g_assert_null(strstr(row->metadata, "005SIM0000000001AA"));
	g_assert_cmpuint(fx_body_requests(&fx, "07LSIM00000000X2"), ==, 0);
	fx_teardown(&fx);
}

static gboolean
fx_held(Fx *fx, gpointer data)
{
	return fx->sink->held->len > 0;
}

/* a full lane parks the source between logs (no more bodies, no next page); released, every
 * log of both pages arrives once, in order */
static void
test_backpressure(void)
{
	Fx fx = { .queue_maxsize = 100 };
	gint64 t = g_get_real_time() - 30 * MINUTE;
	g_autoptr(GString) logs = g_string_new(NULL);
	g_autofree gchar *dataset = NULL;
	SflPipelineCounters counters = { 0 };
	guint64 read = 0;

	for (guint i = 0; i < 250; i++) {
		g_autofree gchar *id = g_strdup_printf("07LSIM00000BP%03u", i);
		g_autofree gchar *one = apexlog(id, t + i * G_USEC_PER_SEC, id, NULL);
		g_string_append_printf(logs, "%s%s", i > 0 ? ", " : "", one);
	}
	dataset = g_strdup_printf("{\"apexlogs\": [%s]}", logs->str);
	fx_setup(&fx, dataset, "");
	if (fx.skip)
		return;
	fx.sink->hold = TRUE;
	fx_start(&fx);
	fx_wait(&fx, fx_held, NULL, "the first push");
	for (guint i = 0; i < 200; i++)
		g_main_context_iteration(NULL, FALSE);
	read = sfl_source_counters(fx.source)->rows_read;
	sfl_pipeline_get_counters(fx.pipeline, &counters);
	g_assert_cmpuint(counters.queue_depth[SFL_LANE_BULK], <=, 101);
	g_assert_cmpuint(read, <, 250);
	sfl_test_capture_release(fx.sink);
	fx_wait(&fx, fx_has_commit, (gpointer) "07LSIM00000BP249", "the last log committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 250);
	for (guint i = 0; i < 250; i++) {
		g_autofree gchar *id = g_strdup_printf("07LSIM00000BP%03u", i);
		g_assert_cmpstr(fx_row(&fx, i)->line, ==, id);
	}
	fx_teardown(&fx);
}

/* --- main ----------------------------------------------------------------------------------- */

/* the source warns on purpose; the lines are TAP comments, and kept for the assertions */
static GLogWriterOutput
test_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	const gchar *domain = "";
	const gchar *message = "";

	for (gsize i = 0; i < n_fields; i++) {
		if (g_str_equal(fields[i].key, "GLIB_DOMAIN"))
			domain = fields[i].value;
		else if (g_str_equal(fields[i].key, "MESSAGE"))
			message = fields[i].value;
	}
	if (level & (G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO))
		return G_LOG_WRITER_HANDLED;
	g_printerr("# [%s] %s\n", domain, message);
	g_string_append_printf(test_log, "%s\n", message);
	if (level & G_LOG_LEVEL_ERROR)
		g_abort();
	return G_LOG_WRITER_HANDLED;
}

int
main(int argc, char **argv)
{
	gint rc = 0;

	g_test_init(&argc, &argv, NULL);
	test_log = g_string_new(NULL);
	g_log_set_writer_func(test_log_writer, NULL, NULL);
	g_test_add_func("/apexlog/bodies-checkpoint-restart", test_bodies_checkpoint_restart);
	g_test_add_func("/apexlog/size-cap", test_size_cap);
	g_test_add_func("/apexlog/users-and-escaped-id", test_users_and_escaped_id);
	g_test_add_func("/apexlog/body-failure-retried", test_body_failure_retried);
	g_test_add_func("/apexlog/abandoned", test_abandoned);
	g_test_add_func("/apexlog/throttled", test_throttled);
	g_test_add_func("/apexlog/sampling", test_sampling);
	g_test_add_func("/apexlog/backpressure", test_backpressure);
	g_test_add_func("/apexlog/transforms-metadata-only", test_transforms_metadata_only);
	rc = g_test_run();
	g_string_free(test_log, TRUE);
	return rc;
}
