/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestSources"

#include "config.h"

#include <string.h>

#include "sfl-checkpoint-store.h"
#include "sfl-config.h"
#include "sfl-elf-source.h"
#include "sfl-error.h"
#include "sfl-memory-store.h"
#include "sfl-objects-source.h"
#include "sfl-pipeline.h"
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"
#include "sfl-sink.h"
#include "sfl-test-sim.h"

/*
 * The EventLogFile and polled-object sources against the Salesforce simulator, through the
 * real pipeline into a capturing sink, with an in-memory checkpoint store. The sources' own
 * timers run on a fake clock, so a "next cycle" is a clock advance, never a wait.
 */

#define TEST_DEADLINE_USEC (60 * G_USEC_PER_SEC)

/* --- the fixture ---------------------------------------------------------------------------- */

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
	gboolean skip;
	const gchar *key_prefix; /* NULL: single-org */
	gboolean legacy_keys;
	SflMetrics *metrics;  /* (nullable) */
	SflLabelGuard *guard; /* (nullable) */
} Fx;

/* conditions on the simulator's state are not signalled: they are re-checked now and then */
static void
fx_wait(Fx *fx, gboolean (*cond)(Fx *fx, gpointer data), gpointer data, const gchar *what)
{
	sfl_test_fixture_wait((SflTestFixtureCond)cond, fx, data, TEST_DEADLINE_USEC, what);
}

static void
fx_write_keys(Fx *fx)
{
	fx->key_path = g_build_filename(fx->dir, "key.pem", NULL);
	fx->pub_path = g_build_filename(fx->dir, "pub.pem", NULL);
	sfl_test_write_rsa_key(fx->key_path, fx->pub_path);
}

/* starts the simulator with @dataset and loads a config made of the salesforce section plus
 * @sources_yaml */
static void
fx_setup(Fx *fx, const gchar *dataset, const gchar *sources_yaml, gint64 queue_maxsize)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dataset_path = NULL;
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *head = NULL;
	SflTestSims sims = { 0 };

	fx->dir = g_dir_make_tmp("sfl-sources-XXXXXX", &error);
	g_assert_no_error(error);
	fx_write_keys(fx);
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
			       "    structured_metadata_fields: [USER_ID, Username]\n"
			       "    batch:\n"
			       "      max_entries: 100\n"
			       "      flush_interval: 20ms\n"
			       "      queue_maxsize: %" G_GINT64_FORMAT "\n"
			       "sources:\n%s",
			       head, queue_maxsize, sources_yaml);
	fx->config = sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", NULL, &error);
	g_assert_no_error(error);
	fx->loop = sfl_curl_loop_new();
	fx->fake = sfl_fake_clock_new(g_get_real_time());
	fx->system = sfl_clock_get_system();
	/* the JWT's exp must be real time: the simulator checks it against its own clock */
	fx->auth = sfl_sf_auth_new(fx->loop, fx->config->data.salesforce, fx->system, &error);
	g_assert_no_error(error);
	fx->rest = sfl_sf_rest_new(fx->loop, fx->auth, fx->config->data.salesforce->api_version);
	fx->backing = sfl_memory_backing_new();
	fx->store = sfl_memory_store_new(fx->backing);
	fx->sink = g_object_new(SFL_TEST_TYPE_CAPTURE, NULL);
	fx->interner = sfl_labels_interner_new();
}

static void
fx_start(Fx *fx, SflSource *source)
{
	const gchar *labels[] = { "job", "sf2loki", NULL };
	g_autoptr(SflLaneHandle) lane = NULL;
	SflSourceContext ctx = { 0 };

	fx->pipeline = sfl_pipeline_new(&fx->config->data.sink.loki.batch, SFL_SINK(fx->sink),
					fx->store, fx->system);
	/* the lane wakes a parked source itself: no writable callback to forward */
	lane = sfl_pipeline_get_lane(fx->pipeline, SFL_LANE_BULK);
	fx->source = source;
	ctx.lane = lane;
	ctx.store = fx->store;
	ctx.interner = fx->interner;
	ctx.clock = fx->fake;
	ctx.static_labels = labels;
	ctx.key_prefix = fx->key_prefix != NULL ? fx->key_prefix : "";
	ctx.legacy_keys = fx->legacy_keys;
	ctx.metadata_fields =
		(const gchar *const *)fx->config->data.sink.loki.structured_metadata_fields;
	ctx.metrics = fx->metrics;
	ctx.label_guard = fx->guard;
	sfl_source_start(source, &ctx);
}

/* the configured EventLogFile source, started */
static void
fx_start_elf(Fx *fx)
{
	g_autoptr(GError) error = NULL;
	SflElfSource *source = sfl_elf_source_new(fx->rest, &fx->config->data.sources.eventlogfile,
						  &fx->config->data.sources, NULL, &error);

	g_assert_no_error(error);
	fx_start(fx, SFL_SOURCE(source));
}

/* the configured polled-objects source, started */
static void
fx_start_objects(Fx *fx)
{
	g_autoptr(GError) error = NULL;
	SflObjectsSource *source = sfl_objects_source_new(
		fx->rest, &fx->config->data.sources.eventlog_objects, NULL, &error);

	g_assert_no_error(error);
	fx_start(fx, SFL_SOURCE(source));
}

static void
fx_stopped_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	gboolean *done = user_data;
	*done = TRUE;
}

static gboolean
fx_flag(Fx *fx, gpointer data)
{
	return *(gboolean *)data;
}

static void
fx_teardown(Fx *fx)
{
	if (fx->source != NULL)
		sfl_source_stop(fx->source);
	g_clear_object(&fx->source);
	sfl_test_pipeline_stop(&fx->pipeline, fx->sink, TEST_DEADLINE_USEC / G_USEC_PER_SEC);
	g_clear_object(&fx->sink);
	g_clear_object(&fx->store);
	g_clear_pointer(&fx->backing, sfl_memory_backing_unref);
	g_clear_object(&fx->rest);
	g_clear_object(&fx->auth);
	g_clear_object(&fx->loop);
	g_clear_pointer(&fx->interner, sfl_labels_interner_unref);
	g_clear_pointer(&fx->guard, sfl_label_guard_unref);
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
fx_committed(Fx *fx, const gchar *key)
{
	g_autoptr(SflStateDoc) doc = sfl_memory_backing_dup_document(fx->backing);
	return g_strdup(doc != NULL ? sfl_state_doc_get(doc, key) : NULL);
}

/* the values of JSON line field @field over every row the sink received (transfer full) */
static GHashTable *
fx_line_values(Fx *fx, const gchar *field)
{
	GHashTable *values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < fx->sink->rows->len; i++) {
		SflTestRow *row = g_ptr_array_index(fx->sink->rows, i);
		json_t *line = json_loads(row->line, 0, NULL);
		g_assert_nonnull(line);
		g_hash_table_add(values, g_strdup(json_string_value(json_object_get(line, field))));
		json_decref(line);
	}
	return values;
}

typedef struct {
	const gchar *key;
	const gchar *substring;
} FxCommit;

static gboolean
fx_has_commit(Fx *fx, gpointer data)
{
	FxCommit *c = data;
	g_autofree gchar *value = fx_committed(fx, c->key);
	return value != NULL && (c->substring == NULL || strstr(value, c->substring) != NULL);
}

static gboolean
fx_has_rows(Fx *fx, gpointer data)
{
	return fx->sink->rows->len >= GPOINTER_TO_UINT(data);
}

static gboolean
fx_elf_cycles(Fx *fx, gpointer data)
{
	return sfl_elf_source_get_counters(SFL_ELF_SOURCE(fx->source))->cycles >=
	       GPOINTER_TO_UINT(data);
}

static gboolean
fx_errors(Fx *fx, gpointer data)
{
	return sfl_source_counters(fx->source)->errors >= GPOINTER_TO_UINT(data);
}

static gboolean
fx_held(Fx *fx, gpointer data)
{
	return fx->sink->held->len > 0;
}

static gboolean
fx_polls(Fx *fx, gpointer data)
{
	return sfl_objects_source_get_counters(SFL_OBJECTS_SOURCE(fx->source))->polls_done >=
	       GPOINTER_TO_UINT(data);
}

static guint fx_count_requests(Fx *fx, const gchar *path_part, const gchar *q_part);

static gboolean
fx_two_listings(Fx *fx, gpointer data)
{
	return fx_count_requests(fx, "/query", "FROM EventLogFile") >= 2;
}

/* spins the loop without blocking, to show that nothing more happens */
static void
fx_settle(void)
{
	for (guint i = 0; i < 200; i++)
		g_main_context_iteration(NULL, FALSE);
}

static void
fx_elf_wait_cycles(Fx *fx, guint n)
{
	fx_wait(fx, fx_elf_cycles, GUINT_TO_POINTER(n), "an EventLogFile cycle");
}

static void
fx_seed(Fx *fx, const gchar *key, const gchar *value)
{
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	gboolean done = FALSE;

	sfl_state_doc_set(doc, key, value);
	sfl_checkpoint_store_commit_many_async(fx->store, doc, SFL_CHECKPOINT_STORE_NONE, NULL,
					       fx_stopped_cb, &done);
	fx_wait(fx, fx_flag, &done, "the seed commit");
}

static json_t *
fx_stats(Fx *fx)
{
	return sfl_test_sim_control(fx->loop, fx->sf_base, "GET", "/control/stats", NULL);
}

static guint
fx_count_requests(Fx *fx, const gchar *path_part, const gchar *q_part)
{
	json_t *stats = fx_stats(fx);
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

/* --- EventLogFile --------------------------------------------------------------------------- */

static const gchar *elf_csv =
	"\"EVENT_TYPE\",\"TIMESTAMP\",\"REQUEST_ID\",\"USER_ID\",\"QUERY\",\"TIMESTAMP_DERIVED\","
	"\"STATUS_CODE\"\n"
	"\"Login\",\"20261130040000.123\",\"R1\",\"005A\",\"a, b\",\"2026-11-30T04:00:00.123Z\","
	"\"200\"\n"
	"\"Login\",\"20261130040001.000\",\"R2\",\"005B\",\"say \"\"hi\"\" \xc3\xa9\","
	"\"2026-11-30T04:00:01.000Z\",\"500\"\n"
	"\"Login\",\"20261130040002.000\",\"R3\",\"005C\",\"line1\nline2\",\"\",\"\"\n";

static gchar *
elf_dataset(const gchar *id, gint64 created_usec, const gchar *csv_json)
{
	g_autofree gchar *created = sfl_test_sf_datetime(created_usec);
	return g_strdup_printf("{\"Id\": \"%s\", \"EventType\": \"Login\", \"Interval\": "
			       "\"Hourly\", \"LogDate\": \"%s\", \"CreatedDate\": \"%s\", "
			       "\"Sequence\": 0, %s}",
			       id, created, created, csv_json);
}

static gchar *
json_quote(const gchar *text)
{
	json_t *s = json_string(text);
	gchar *out = json_dumps(s, JSON_ENCODE_ANY);
	json_decref(s);
	return out;
}

static void
test_elf_rows(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *csv = json_quote(elf_csv);
	g_autofree gchar *csvfield = g_strdup_printf("\"csv\": %s", csv);
	g_autofree gchar *file =
		elf_dataset("0ATSIM0000000001", now - 2 * G_TIME_SPAN_HOUR, csvfield);
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
	g_autofree gchar *created = sfl_test_sf_datetime(now - 2 * G_TIME_SPAN_HOUR);
	g_autofree gchar *expected_cp = NULL;
	g_autofree gchar *value = NULL;
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000001" };
	SflTestRow *row = NULL;

	fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n",
		 1000);
	if (fx.skip)
		return;
	fx_start_elf(&fx);
	fx_wait(&fx, fx_has_commit, &commit, "the file's checkpoint");

	g_assert_cmpuint(fx.sink->rows->len, ==, 3);
	row = g_ptr_array_index(fx.sink->rows, 0);
	/* json.dumps(row, sort_keys=True), byte for byte */
	g_assert_cmpstr(row->line, ==,
			"{\"EVENT_TYPE\": \"Login\", \"QUERY\": \"a, b\", \"REQUEST_ID\": \"R1\", "
			"\"STATUS_CODE\": \"200\", \"TIMESTAMP\": \"20261130040000.123\", "
			"\"TIMESTAMP_DERIVED\": \"2026-11-30T04:00:00.123Z\", \"USER_ID\": "
			"\"005A\"}");
	g_assert_cmpstr(row->labels, ==,
			"{event_type=\"Login\",job=\"sf2loki\",source=\"eventlogfile\"}");
	g_assert_cmpstr(row->metadata, ==, "USER_ID=005A;level=info");
	g_assert_cmpint(row->ts_ns, ==, G_GINT64_CONSTANT(1796011200123000000));
	row = g_ptr_array_index(fx.sink->rows, 1);
	g_assert_cmpstr(row->line, ==,
			"{\"EVENT_TYPE\": \"Login\", \"QUERY\": \"say \\\"hi\\\" \\u00e9\", "
			"\"REQUEST_ID\": \"R2\", \"STATUS_CODE\": \"500\", \"TIMESTAMP\": "
			"\"20261130040001.000\", \"TIMESTAMP_DERIVED\": "
			"\"2026-11-30T04:00:01.000Z\", \"USER_ID\": \"005B\"}");
	g_assert_cmpstr(row->metadata, ==, "USER_ID=005B;level=error");
	row = g_ptr_array_index(fx.sink->rows, 2);
	g_assert_nonnull(strstr(row->line, "\"QUERY\": \"line1\\nline2\""));
	/* an empty TIMESTAMP_DERIVED falls back to the compact TIMESTAMP */
	g_assert_cmpint(row->ts_ns, ==, G_GINT64_CONSTANT(1796011202000000000));

	expected_cp = g_strdup_printf("{\"ids\": [[\"0ATSIM0000000001\", \"%s\"]], "
				      "\"last_created\": \"%s\"}",
				      created, created);
	value = fx_committed(&fx, "eventlogfile:Login");
	g_assert_cmpstr(value, ==, expected_cp);

	/* the next cycle lists again and skips the file it carries */
	sfl_fake_clock_advance(fx.fake, fx.config->data.sources.eventlogfile.poll_interval * 2);
	{
		json_t *stats = NULL;
		fx_wait(&fx, fx_two_listings, NULL, "the second listing");
		fx_elf_wait_cycles(&fx, 2);
		stats = fx_stats(&fx);
		g_assert_cmpint(json_integer_value(json_object_get(
					json_object_get(stats, "downloads"), "0ATSIM0000000001")),
				==, 1);
		json_decref(stats);
	}
	g_assert_cmpuint(fx.sink->rows->len, ==, 3);
	fx_teardown(&fx);
}

static void
test_elf_cut_download_resumes(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *file = elf_dataset("0ATSIM0000000002", now - 3 * G_TIME_SPAN_HOUR,
					     "\"generate\": {\"rows\": 3000, \"kind\": \"API\", "
					     "\"seed\": 7}");
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000002\"" };
	FxCommit in_flight = { "eventlogfile:Login", "\"in_flight\"" };
	g_autoptr(GHashTable) ids = NULL;
	guint before = 0;
	guint mark = 0;
	json_t *answer = NULL;

	fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n",
		 1000);
	if (fx.skip)
		return;
	answer = sfl_test_sim_control(fx.loop, fx.sf_base, "POST", "/control/fault",
				      "{\"match\": \"logfile\", \"reset_after_bytes\": 300000}");
	json_decref(answer);
	fx_start_elf(&fx);
	/* the cut file stops the type for this cycle with the file not done */
	fx_wait(&fx, fx_has_rows, GUINT_TO_POINTER(1), "rows from the cut file");
	fx_wait(&fx, fx_errors, GUINT_TO_POINTER(1), "the download failure");
	/* everything offered before the cut still reaches the sink; nothing after it */
	before = (guint)sfl_source_counters(fx.source)->entries_offered;
	g_assert_cmpuint(before, <, 3000);
	/* what was delivered of the file is committed as a mark inside it, never the file */
	fx_wait(&fx, fx_has_commit, &in_flight, "a mark inside the cut file");
	{
		g_autofree gchar *value = fx_committed(&fx, "eventlogfile:Login");
		json_t *doc = json_loads(value, 0, NULL);
		json_t *flight = json_object_get(doc, "in_flight");

		g_assert_cmpstr(json_string_value(json_object_get(flight, "id")), ==,
				"0ATSIM0000000002");
		mark = (guint)json_integer_value(json_object_get(flight, "rows"));
		g_assert_cmpuint(json_array_size(json_object_get(doc, "ids")), ==, 0);
		json_decref(doc);
	}
	g_assert_cmpuint(mark, >, 0);
	g_assert_cmpuint(mark % 100, ==, 0);
	g_assert_cmpuint(mark, <=, before);
	/* the next cycle reads the file again and sends only what follows the rows already in
	 * the lane (a restart would resume after the committed mark instead) */
	sfl_fake_clock_advance(fx.fake, fx.config->data.sources.eventlogfile.poll_interval * 2);
	fx_wait(&fx, fx_has_commit, &commit, "the file's checkpoint");
	ids = fx_line_values(&fx, "REQUEST_ID");
	g_assert_cmpuint(g_hash_table_size(ids), ==, 3000);
	g_assert_cmpuint(fx.sink->rows->len, ==, 3000);
	{
		/* done: the original's format again, the mark gone */
		g_autofree gchar *value = fx_committed(&fx, "eventlogfile:Login");
		g_assert_null(strstr(value, "in_flight"));
	}
	fx_teardown(&fx);
}

/*
 * A checkpoint naming a file in flight (`in_flight`, which the original's reader ignores)
 * resumes after the rows it counts: they are parsed and skipped, the rest delivered once, and
 * the file's final checkpoint is the original's format.
 */
static void
test_elf_resume_inside_file(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *file = elf_dataset("0ATSIM0000000009", now - 3 * G_TIME_SPAN_HOUR,
					     "\"generate\": {\"rows\": 1000, \"kind\": \"API\", "
					     "\"seed\": 9}");
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
	g_autofree gchar *created = sfl_test_sf_datetime(now - 3 * G_TIME_SPAN_HOUR);
	g_autofree gchar *expected = NULL;
	g_autofree gchar *value = NULL;
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000009\"" };
	g_autoptr(GHashTable) ids = NULL;

	fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n",
		 1000);
	if (fx.skip)
		return;
	fx_seed(&fx, "eventlogfile:Login",
		"{\"ids\": [], \"in_flight\": {\"id\": \"0ATSIM0000000009\", \"rows\": 600}, "
		"\"last_created\": \"\"}");
	fx_start_elf(&fx);
	fx_wait(&fx, fx_has_commit, &commit, "the file's checkpoint");
	ids = fx_line_values(&fx, "REQUEST_ID");
	g_assert_cmpuint(fx.sink->rows->len, ==, 400);
	g_assert_cmpuint(g_hash_table_size(ids), ==, 400);
	g_assert_false(g_hash_table_contains(ids, "0ATSIM0000000009-599"));
	g_assert_true(g_hash_table_contains(ids, "0ATSIM0000000009-600"));
	g_assert_true(g_hash_table_contains(ids, "0ATSIM0000000009-999"));
	expected = g_strdup_printf("{\"ids\": [[\"0ATSIM0000000009\", \"%s\"]], "
				   "\"last_created\": \"%s\"}",
				   created, created);
	value = fx_committed(&fx, "eventlogfile:Login");
	g_assert_cmpstr(value, ==, expected);
	fx_teardown(&fx);
}

/* a checkpoint the Python original wrote (json.dumps, sorted keys, no in_flight) is read as
 * it means: the file it names is done, the next one is read whole */
static void
test_elf_original_checkpoint(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *done_created = sfl_test_sf_datetime(now - 4 * G_TIME_SPAN_HOUR);
	g_autofree gchar *file_a = elf_dataset("0ATSIM0000000010", now - 4 * G_TIME_SPAN_HOUR,
					       "\"generate\": {\"rows\": 50, \"kind\": \"API\", "
					       "\"seed\": 10}");
	g_autofree gchar *file_b = elf_dataset("0ATSIM0000000011", now - 3 * G_TIME_SPAN_HOUR,
					       "\"generate\": {\"rows\": 70, \"kind\": \"API\", "
					       "\"seed\": 11}");
	g_autofree gchar *dataset =
		g_strdup_printf("{\"eventlogfiles\": [%s, %s]}", file_a, file_b);
	g_autofree gchar *seed = g_strdup_printf(
		"{\"ids\": [[\"0ATSIM0000000010\", \"%s\"]], \"last_created\": \"%s\"}",
		done_created, done_created);
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000011" };

	fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n",
		 1000);
	if (fx.skip)
		return;
	fx_seed(&fx, "eventlogfile:Login", seed);
	fx_start_elf(&fx);
	fx_wait(&fx, fx_has_commit, &commit, "the second file's checkpoint");
	g_assert_cmpuint(fx.sink->rows->len, ==, 70);
	for (guint i = 0; i < fx.sink->rows->len; i++) {
		SflTestRow *row = g_ptr_array_index(fx.sink->rows, i);
		g_assert_nonnull(strstr(row->line, "0ATSIM0000000011-"));
	}
	fx_teardown(&fx);
}

static void
test_elf_backpressure(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *file = elf_dataset("0ATSIM0000000003", now - 3 * G_TIME_SPAN_HOUR,
					     "\"generate\": {\"rows\": 5000, \"kind\": \"API\", "
					     "\"seed\": 3}");
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000003" };
	SflPipelineCounters counters = { 0 };
	guint64 read = 0;

	fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n",
		 100);
	if (fx.skip)
		return;
	fx.sink->hold = TRUE;
	fx_start_elf(&fx);
	/* with the sink held the lane fills, the parser stops and the download pauses */
	fx_wait(&fx, fx_held, NULL, "the first push");
	fx_settle();
	read = sfl_source_counters(fx.source)->rows_read;
	sfl_pipeline_get_counters(fx.pipeline, &counters);
	g_assert_cmpuint(counters.queue_depth[SFL_LANE_BULK], <=, 101);
	g_assert_cmpuint(read, <, 5000);
	/* released, everything arrives */
	sfl_test_capture_release(fx.sink);
	fx_wait(&fx, fx_has_commit, &commit, "the file's checkpoint");
	g_assert_cmpuint(fx.sink->rows->len, ==, 5000);
	fx_teardown(&fx);
}

static void
test_elf_settle_window(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *file = elf_dataset("0ATSIM0000000004", now - 60 * G_USEC_PER_SEC,
					     "\"generate\": {\"rows\": 10, \"kind\": \"API\", "
					     "\"seed\": 4}");
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000004" };

	fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n",
		 1000);
	if (fx.skip)
		return;
	fx_start_elf(&fx);
	/* created a minute ago: inside the 5 m Hourly settle window, not downloaded */
	fx_elf_wait_cycles(&fx, 1);
	g_assert_cmpuint(fx_count_requests(&fx, "/LogFile", NULL), ==, 0);
	g_assert_null(fx_committed(&fx, "eventlogfile:Login"));
	/* an hour later it has settled */
	sfl_fake_clock_advance(fx.fake, G_TIME_SPAN_HOUR + G_TIME_SPAN_MINUTE * 10);
	fx_wait(&fx, fx_has_commit, &commit, "the settled file's checkpoint");
	g_assert_cmpuint(fx.sink->rows->len, ==, 10);
	fx_teardown(&fx);
}

static void
test_elf_throttled(void)
{
	Fx fx = { 0 };
	json_t *answer = NULL;

	fx_setup(&fx, "{\"eventlogfiles\": []}",
		 "  eventlogfile:\n    enabled: true\n    concurrency: 1\n"
		 "    event_types: [Login, API, URI]\n",
		 1000);
	if (fx.skip)
		return;
	answer = sfl_test_sim_control(fx.loop, fx.sf_base, "POST", "/control/fault",
				      "{\"match\": \"query\", \"status\": 403, \"error_code\": "
				      "\"REQUEST_LIMIT_EXCEEDED\", \"message\": \"TotalRequests "
				      "Limit exceeded.\"}");
	json_decref(answer);
	fx_start_elf(&fx);
	fx_elf_wait_cycles(&fx, 1);
	/* the first type hit the limit; the other two did not even try */
	g_assert_cmpuint(sfl_source_counters(fx.source)->throttled, ==, 1);
	g_assert_cmpuint(fx_count_requests(&fx, "/query", "FROM EventLogFile"), ==, 1);
	fx_teardown(&fx);
}

static void
test_elf_discovery_throttled(void)
{
	Fx fx = { 0 };
	json_t *answer = NULL;

	fx_setup(&fx, "{\"eventlogfiles\": []}",
		 "  eventlogfile:\n    enabled: true\n    event_types: ['*', Login]\n", 1000);
	if (fx.skip)
		return;
	answer = sfl_test_sim_control(fx.loop, fx.sf_base, "POST", "/control/fault",
				      "{\"match\": \"query\", \"status\": 403, \"error_code\": "
				      "\"REQUEST_LIMIT_EXCEEDED\", \"message\": \"limit\"}");
	json_decref(answer);
	fx_start_elf(&fx);
	fx_elf_wait_cycles(&fx, 1);
	/* SFL-0042: a throttled discovery ends the cycle; no listing is attempted */
	g_assert_cmpuint(fx_count_requests(&fx, "/query", "GROUP BY"), ==, 1);
	g_assert_cmpuint(fx_count_requests(&fx, "/query", "ORDER BY CreatedDate"), ==, 0);
	fx_teardown(&fx);
}

static void
test_elf_garbage_checkpoint(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *file = elf_dataset("0ATSIM0000000005", now - 3 * G_TIME_SPAN_HOUR,
					     "\"generate\": {\"rows\": 20, \"kind\": \"API\", "
					     "\"seed\": 5}");
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000005" };

	fx_setup(&fx, dataset, "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n",
		 1000);
	if (fx.skip)
		return;
	/* SFL-0019: the original crash-loops on this; we read the lookback instead */
	fx_seed(&fx, "eventlogfile:Login", "2026-01-01T00:00:00Z garbage");
	fx_start_elf(&fx);
	fx_wait(&fx, fx_has_commit, &commit, "the checkpoint after a garbage one");
	g_assert_cmpuint(fx.sink->rows->len, ==, 20);
	fx_teardown(&fx);
}

static void
test_elf_shaping_and_labels(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	const gchar *csv = "\"EVENT_TYPE\",\"REQUEST_ID\",\"USER_ID\",\"USER_TYPE\",\"CLIENT_IP\","
			   "\"TIMESTAMP_DERIVED\"\n"
			   "\"API\",\"Q1\",\"005A\",\"Standard\",\"10.1.2.3\","
			   "\"2026-11-30T04:00:00.000Z\"\n"
			   "\"API\",\"Q2\",\"005B\",\"Automated\",\"10.1.2.4\","
			   "\"2026-11-30T04:00:01.000Z\"\n"
			   "\"API\",\"Q3\",\"005C\",\"Standard\",\"10.1.2.5\","
			   "\"2026-11-30T04:00:02.000Z\"\n";
	g_autofree gchar *quoted = json_quote(csv);
	g_autofree gchar *csvfield = g_strdup_printf("\"csv\": %s", quoted);
	g_autofree gchar *file =
		elf_dataset("0ATSIM0000000006", now - 2 * G_TIME_SPAN_HOUR, csvfield);
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000006" };
	SflTestRow *row = NULL;

	fx_setup(&fx, dataset,
		 "  eventlogfile:\n    enabled: true\n"
		 "    event_types: [{name: Login, labels: [USER_TYPE]}]\n"
		 "    transforms:\n"
		 "      - {action: mask, fields: [CLIENT_IP]}\n"
		 "      - {action: drop_row, name: no-robots, match: {USER_TYPE: 'Auto*'}}\n",
		 1000);
	if (fx.skip)
		return;
	fx_start_elf(&fx);
	fx_wait(&fx, fx_has_commit, &commit, "the file's checkpoint");
	/* the dropped row is gone, the file still completes on the last kept row */
	g_assert_cmpuint(fx.sink->rows->len, ==, 2);
	g_assert_cmpuint(sfl_source_counters(fx.source)->rows_filtered, ==, 1);
	row = g_ptr_array_index(fx.sink->rows, 0);
	g_assert_cmpstr(row->labels, ==,
			"{USER_TYPE=\"Standard\",event_type=\"Login\",job=\"sf2loki\","
			"source=\"eventlogfile\"}");
	g_assert_nonnull(strstr(row->line, "\"CLIENT_IP\": \"10.1.2.x\""));
	g_assert_nonnull(strstr(((SflTestRow *)g_ptr_array_index(fx.sink->rows, 1))->line,
				"\"REQUEST_ID\": \"Q3\""));
	fx_teardown(&fx);
}

/*
 * SFL-0034 through the source: a promoted column past the guard's limit is sent as __other__
 * (the value stays in the line), an admitted value keeps its label; the fixed labels are never
 * guarded. SFL-0021: the lag is recorded per source.
 */
static void
test_elf_label_guard(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	const gchar *csv = "\"EVENT_TYPE\",\"REQUEST_ID\",\"USER_TYPE\",\"TIMESTAMP_DERIVED\"\n"
			   "\"API\",\"Q1\",\"Standard\",\"2026-11-30T04:00:00.000Z\"\n"
			   "\"API\",\"Q2\",\"Automated\",\"2026-11-30T04:00:01.000Z\"\n"
			   "\"API\",\"Q3\",\"Guest\",\"2026-11-30T04:00:02.000Z\"\n"
			   "\"API\",\"Q4\",\"Standard\",\"2026-11-30T04:00:03.000Z\"\n";
	g_autofree gchar *quoted = json_quote(csv);
	g_autofree gchar *csvfield = g_strdup_printf("\"csv\": %s", quoted);
	g_autofree gchar *file =
		elf_dataset("0ATSIM0000000016", now - 2 * G_TIME_SPAN_HOUR, csvfield);
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000016" };
	const gchar *want[] = { "Standard", "Automated", "__other__", "Standard" };
	g_autofree gchar *text = NULL;

	fx_setup(&fx, dataset,
		 "  eventlogfile:\n    enabled: true\n"
		 "    event_types: [{name: Login, labels: [USER_TYPE]}]\n",
		 1000);
	if (fx.skip)
		return;
	fx.metrics = sfl_metrics_new();
	fx.guard = sfl_label_guard_new(2, G_TIME_SPAN_HOUR, fx.fake, fx.metrics);
	fx_start_elf(&fx);
	fx_wait(&fx, fx_has_commit, &commit, "the file's checkpoint");
	g_assert_cmpuint(fx.sink->rows->len, ==, 4);
	for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
		SflTestRow *row = g_ptr_array_index(fx.sink->rows, i);
		g_autofree gchar *labels =
			g_strdup_printf("{USER_TYPE=\"%s\",event_type=\"Login\",job=\"sf2loki\","
					"source=\"eventlogfile\"}",
					want[i]);
		g_assert_cmpstr(row->labels, ==, labels);
	}
	g_assert_nonnull(strstr(((SflTestRow *)g_ptr_array_index(fx.sink->rows, 2))->line,
				"\"USER_TYPE\": \"Guest\""));
	text = sfl_metrics_render_prometheus(fx.metrics);
	g_assert_nonnull(
		strstr(text, "\nsf2loki_label_values_folded_total{label=\"USER_TYPE\"} 1\n"));
	g_assert_nonnull(strstr(text, "\nsf2loki_ingest_lag_seconds_count{source=\"eventlogfile\","
				      "event_type=\"Login\"} 4\n"));
	fx_teardown(&fx);
}

static void
test_elf_abandon_old_file(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *old = elf_dataset("0ATSIM0000000007", now - 3 * G_TIME_SPAN_HOUR,
					    "\"generate\": {\"rows\": 5, \"kind\": \"API\", "
					    "\"seed\": 7}");
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", old);
	FxCommit commit = { "eventlogfile:Login", "[\"0ATSIM0000000007" };
	json_t *answer = NULL;

	fx_setup(&fx, dataset,
		 "  eventlogfile:\n    enabled: true\n    event_types: [Login]\n"
		 "    download_max_age: 1h\n",
		 1000);
	if (fx.skip)
		return;
	answer = sfl_test_sim_control(
		fx.loop, fx.sf_base, "POST", "/control/fault",
		"{\"match\": \"logfile\", \"count\": 5, \"status\": 500, "
		"\"error_code\": \"UNKNOWN_EXCEPTION\", \"message\": \"boom\"}");
	json_decref(answer);
	fx_start_elf(&fx);
	/* older than download_max_age and failing: the cursor moves past it, nothing is sent */
	fx_wait(&fx, fx_has_commit, &commit, "the abandoned file in the checkpoint");
	g_assert_cmpuint(sfl_elf_source_get_counters(SFL_ELF_SOURCE(fx.source))->files_abandoned,
			 ==, 1);
	g_assert_cmpuint(fx.sink->rows->len, ==, 0);
	fx_teardown(&fx);
}

/* --- polled objects ------------------------------------------------------------------------- */

static gchar *
objects_records(guint n, gint64 base_usec, guint tie_from, guint tie_to, gint64 tie_usec,
		const gchar *prefix)
{
	GString *out = g_string_new("[");

	for (guint i = 0; i < n; i++) {
		gint64 ts =
			(i >= tie_from && i < tie_to) ? tie_usec : base_usec + (gint64)i * 1000000;
		g_autofree gchar *iso = sfl_test_sf_datetime(ts);
		g_string_append_printf(out,
				       "%s{\"Id\": \"%s%05u\", \"EventDate\": \"%s\", "
				       "\"Username\": \"u%u@example.com\"}",
				       i > 0 ? ", " : "", prefix, i, iso, i % 7);
	}
	g_string_append_c(out, ']');
	return g_string_free(out, FALSE);
}

static guint
fx_distinct_ids(Fx *fx)
{
	g_autoptr(GHashTable) ids = fx_line_values(fx, "Id");
	return g_hash_table_size(ids);
}

static void
test_objects_ties(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	/* 450 records, 250 of them at one instant across two pages */
	g_autofree gchar *records = objects_records(450, now - 30 * G_TIME_SPAN_MINUTE, 100, 350,
						    now - 20 * G_TIME_SPAN_MINUTE, "0LgA");
	g_autofree gchar *dataset =
		g_strdup_printf("{\"objects\": {\"LoginEvent\": {\"records\": %s}}}", records);
	SflTestRow *row = NULL;

	fx_setup(&fx, dataset,
		 "  eventlog_objects:\n    enabled: true\n    objects:\n"
		 "      - name: LoginEvent\n        lookback: 2h\n",
		 10000);
	if (fx.skip)
		return;
	fx_start_objects(&fx);
	fx_wait(&fx, fx_has_rows, GUINT_TO_POINTER(450), "every record");
	g_assert_cmpuint(fx_distinct_ids(&fx), ==, 450);
	row = g_ptr_array_index(fx.sink->rows, 0);
	g_assert_cmpstr(row->labels, ==,
			"{event_type=\"LoginEvent\",job=\"sf2loki\",source=\"eventlog_objects\"}");
	/* the REST record, attributes included, as json.dumps(sort_keys=True) */
	g_assert_true(g_str_has_prefix(row->line, "{\"EventDate\": "));
	g_assert_nonnull(strstr(row->line, "\"attributes\": {\"type\": \"LoginEvent\", \"url\": "));
	g_assert_nonnull(strstr(row->metadata, "Username=u0@example.com"));
	/* another poll finds nothing new and emits nothing */
	sfl_fake_clock_advance(fx.fake, 10 * G_TIME_SPAN_MINUTE);
	fx_wait(&fx, fx_polls, GUINT_TO_POINTER(2), "the next poll");
	fx_settle();
	g_assert_cmpuint(fx.sink->rows->len, ==, 450);
	fx_teardown(&fx);
}

/*
 * Multi-org upgrade (docs/sources/README.md): the first org reads the single-org checkpoint when
 * its prefixed key does not exist yet, and commits under the prefixed key; another org does not.
 */
static void
objects_legacy_case(gboolean legacy, guint want_rows)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	gint64 base = now - 30 * G_TIME_SPAN_MINUTE;
	g_autofree gchar *records = objects_records(10, base, 0, 0, 0, "0LgB");
	g_autofree gchar *dataset =
		g_strdup_printf("{\"objects\": {\"LoginEvent\": {\"records\": %s}}}", records);
	/* the cursor of a single-org run that already shipped the first six records */
	g_autofree gchar *wm = sfl_test_sf_datetime(base + 5 * G_USEC_PER_SEC);
	g_autofree gchar *cursor =
		g_strdup_printf("{\"ids\": [\"0LgB00005\"], \"last_ts\": \"%s\"}", wm);
	g_autofree gchar *prefixed = NULL;

	fx_setup(&fx, dataset,
		 "  eventlog_objects:\n    enabled: true\n    objects:\n"
		 "      - name: LoginEvent\n        lookback: 2h\n",
		 10000);
	if (fx.skip)
		return;
	fx_seed(&fx, "eventlog_objects:LoginEvent", cursor);
	fx.key_prefix = "org=alpha:";
	fx.legacy_keys = legacy;
	fx_start_objects(&fx);
	fx_wait(&fx, fx_has_commit, &(FxCommit){ "org=alpha:eventlog_objects:LoginEvent" },
		"the prefixed commit");
	fx_settle();
	g_assert_cmpuint(fx.sink->rows->len, ==, want_rows);
	g_assert_cmpuint(fx_distinct_ids(&fx), ==, want_rows);
	/* the single-org key is left as it was */
	prefixed = fx_committed(&fx, "eventlog_objects:LoginEvent");
	g_assert_cmpstr(prefixed, ==, cursor);
	fx_teardown(&fx);
}

static void
test_objects_first_org_legacy_key(void)
{
	objects_legacy_case(TRUE, 4);
}

static void
test_objects_other_org_no_legacy_key(void)
{
	objects_legacy_case(FALSE, 10);
}

static void
test_objects_big_object_tie(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	/* 520 records; 260 share one instant, more than one page of 200 */
	g_autofree gchar *records = objects_records(520, now - 50 * G_TIME_SPAN_MINUTE, 100, 360,
						    now - 30 * G_TIME_SPAN_MINUTE, "0BgA");
	g_autofree gchar *dataset = g_strdup_printf(
		"{\"objects\": {\"Audit__b\": {\"big_object\": true, \"records\": %s}}}", records);
	FxCommit commit = { "eventlog_objects:Audit__b", NULL };
	g_autofree gchar *value = NULL;
	json_t *cp = NULL;

	fx_setup(&fx, dataset,
		 "  eventlog_objects:\n    enabled: true\n    objects:\n"
		 "      - name: Audit__b\n        big_object: true\n        lookback: 2h\n",
		 10000);
	if (fx.skip)
		return;
	fx_start_objects(&fx);
	fx_wait(&fx, fx_has_rows, GUINT_TO_POINTER(520), "every big-object record");
	fx_wait(&fx, fx_has_commit, &commit, "the checkpoint");
	g_assert_cmpuint(fx_distinct_ids(&fx), ==, 520);
	/* emitted oldest first */
	g_assert_nonnull(
		strstr(((SflTestRow *)g_ptr_array_index(fx.sink->rows, 0))->line, "0BgA00000"));
	/* the next sweep starts at the newest record and re-emits nothing */
	sfl_fake_clock_advance(fx.fake, 10 * G_TIME_SPAN_MINUTE);
	fx_wait(&fx, fx_polls, GUINT_TO_POINTER(2), "the next poll");
	fx_settle();
	g_assert_cmpuint(fx.sink->rows->len, ==, 520);
	value = fx_committed(&fx, "eventlog_objects:Audit__b");
	cp = json_loads(value, 0, NULL);
	g_assert_nonnull(cp);
	g_assert_true(g_str_has_prefix(value, "{\"ids\": [\""));
	json_decref(cp);
	fx_teardown(&fx);
}

static void
test_objects_big_object_tie_overflow(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	/* 720 records: 700 share one instant, 10 older and 10 newer around it */
	g_autofree gchar *records = objects_records(720, now - 50 * G_TIME_SPAN_MINUTE, 10, 710,
						    now - 30 * G_TIME_SPAN_MINUTE, "0BgB");
	g_autofree gchar *dataset = g_strdup_printf(
		"{\"objects\": {\"Audit__b\": {\"big_object\": true, \"records\": %s}}}", records);
	const SflObjectsCounters *counters = NULL;
	guint first = 0;

	fx_setup(&fx, dataset,
		 "  eventlog_objects:\n    enabled: true\n    objects:\n"
		 "      - name: Audit__b\n        big_object: true\n        lookback: 2h\n",
		 10000);
	if (fx.skip)
		return;
	fx_start_objects(&fx);
	counters = sfl_objects_source_get_counters(SFL_OBJECTS_SOURCE(fx.source));
	fx_wait(&fx, fx_polls, GUINT_TO_POINTER(1), "the first sweep");
	fx_wait(&fx, fx_has_rows, GUINT_TO_POINTER(620), "the sweep's records");
	fx_settle();
	/* SFL-0011: the NOT IN list stops at its bound, the sweep goes on past the instant */
	g_assert_cmpuint(counters->tie_overflows, ==, 1);
	first = fx.sink->rows->len;
	/* 600 of the tie (three pages, the last two with 200 and 400 ids excluded), all 20 others
	 */
	g_assert_cmpuint(first, ==, 620);
	g_assert_cmpuint(fx_distinct_ids(&fx), ==, 620);
	/* the next sweep neither fails nor re-emits: the boundary ids are all carried (SFL-0043) */
	sfl_fake_clock_advance(fx.fake, 10 * G_TIME_SPAN_MINUTE);
	fx_wait(&fx, fx_polls, GUINT_TO_POINTER(2), "the next sweep");
	fx_settle();
	g_assert_cmpuint(fx.sink->rows->len, ==, first);
	g_assert_cmpuint(counters->query_errors, ==, 0);
	fx_teardown(&fx);
}

static void
test_objects_settle_catches_late_row(void)
{
	Fx fx = { 0 };
	gint64 now = g_get_real_time();
	g_autofree gchar *a = sfl_test_sf_datetime(now - 120 * G_USEC_PER_SEC);
	g_autofree gchar *d = sfl_test_sf_datetime(now - 10 * G_USEC_PER_SEC);
	g_autofree gchar *b = sfl_test_sf_datetime(now - 30 * G_USEC_PER_SEC);
	g_autofree gchar *dataset = g_strdup_printf(
		"{\"objects\": {\"LoginEvent\": {\"records\": ["
		"{\"Id\": \"0LgA\", \"EventDate\": \"%s\", \"Username\": \"a\"}, "
		"{\"Id\": \"0LgD\", \"EventDate\": \"%s\", \"Username\": \"d\"}]}}}",
		a, d);
	g_autofree gchar *late = g_strdup_printf(
		"{\"objects\": {\"LoginEvent\": {\"records\": ["
		"{\"Id\": \"0LgB\", \"EventDate\": \"%s\", \"Username\": \"b\"}]}}}",
		b);
	json_t *answer = NULL;

	fx_setup(&fx, dataset,
		 "  eventlog_objects:\n    enabled: true\n    objects:\n"
		 "      - name: LoginEvent\n        lookback: 1h\n        settle_window: 1m\n"
		 "        poll_interval: 1m\n",
		 1000);
	if (fx.skip)
		return;
	fx_start_objects(&fx);
	/* the first poll reads up to now - 1 m: A only */
	fx_wait(&fx, fx_has_rows, GUINT_TO_POINTER(1), "the settled record");
	fx_wait(&fx, fx_polls, GUINT_TO_POINTER(1), "the first poll");
	fx_settle();
	g_assert_cmpuint(fx.sink->rows->len, ==, 1);
	/* B becomes queryable late, with a timestamp older than D */
	answer = sfl_test_sim_control(fx.loop, fx.sf_base, "POST", "/control/add", late);
	json_decref(answer);
	sfl_fake_clock_advance(fx.fake, 2 * G_TIME_SPAN_MINUTE);
	fx_wait(&fx, fx_has_rows, GUINT_TO_POINTER(3), "the late record and D");
	g_assert_nonnull(strstr(((SflTestRow *)g_ptr_array_index(fx.sink->rows, 1))->line,
				"\"Id\": \"0LgB\""));
	g_assert_nonnull(strstr(((SflTestRow *)g_ptr_array_index(fx.sink->rows, 2))->line,
				"\"Id\": \"0LgD\""));
	fx_teardown(&fx);
}

/*
 * The sources log warnings and criticals on purpose (a throttled org, a cut download); the
 * tests assert on counters instead, so those lines are printed as TAP comments, not fatal.
 */
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
	if (level & G_LOG_LEVEL_ERROR)
		g_abort();
	return G_LOG_WRITER_HANDLED;
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_log_set_writer_func(test_log_writer, NULL, NULL);
	g_test_add_func("/sources/elf/rows", test_elf_rows);
	g_test_add_func("/sources/elf/cut-download-resumes", test_elf_cut_download_resumes);
	g_test_add_func("/sources/elf/resume-inside-file", test_elf_resume_inside_file);
	g_test_add_func("/sources/elf/original-checkpoint", test_elf_original_checkpoint);
	g_test_add_func("/sources/elf/backpressure", test_elf_backpressure);
	g_test_add_func("/sources/elf/settle-window", test_elf_settle_window);
	g_test_add_func("/sources/elf/throttled", test_elf_throttled);
	g_test_add_func("/sources/elf/discovery-throttled", test_elf_discovery_throttled);
	g_test_add_func("/sources/elf/garbage-checkpoint", test_elf_garbage_checkpoint);
	g_test_add_func("/sources/elf/shaping-and-labels", test_elf_shaping_and_labels);
	g_test_add_func("/sources/elf/label-guard", test_elf_label_guard);
	g_test_add_func("/sources/elf/abandon-old-file", test_elf_abandon_old_file);
	g_test_add_func("/sources/objects/ties", test_objects_ties);
	g_test_add_func("/sources/objects/first-org-legacy-key", test_objects_first_org_legacy_key);
	g_test_add_func("/sources/objects/other-org-no-legacy-key",
			test_objects_other_org_no_legacy_key);
	g_test_add_func("/sources/objects/big-object-tie", test_objects_big_object_tie);
	g_test_add_func("/sources/objects/big-object-tie-overflow",
			test_objects_big_object_tie_overflow);
	g_test_add_func("/sources/objects/settle-catches-late-row",
			test_objects_settle_catches_late_row);
	return g_test_run();
}
