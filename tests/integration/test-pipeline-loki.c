/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestPipelineLoki"

#include "config.h"

#include <jansson.h>
#include <glib/gstdio.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-test-sim.h"
#include "sfl-http.h"
#include "sfl-loki-sink.h"
#include "sfl-memory-store.h"
#include "sfl-pipeline-private.h"
#include "sfl-pipeline.h"

/*
 * The real pipeline, the real Loki sink and tests/sim/loki_sim.py end to end, with a memory
 * store and the system clock. Faults are injected through the simulator's control endpoints;
 * what it received is read back and checked line by line. Waits iterate the default main
 * context until a condition holds, under a real-time deadline that fails the test.
 */

#define TEST_DEADLINE_SEC 60
#define TEST_N_KEYS	  4
#define TEST_POISON_KEY	  "poison-key"

typedef struct {
	gint encoding;
	gint compression;
} Encoding;

static const Encoding enc_protobuf = { SFL_LOKI_ENCODING_PROTOBUF, SFL_LOKI_COMPRESSION_SNAPPY };
static const Encoding enc_json_gzip = { SFL_LOKI_ENCODING_JSON, SFL_LOKI_COMPRESSION_GZIP };

typedef struct {
	SflTestSim *sim;
	gchar *base;
	gchar *push_url;
	SflCurlLoop *loop;
	SflLabelsInterner *interner;
	SflLabels *labels[2];
	SflMemoryBacking *backing;
	SflCheckpointStore *store;
	SflClock *clock;
	SflSink *sink;
	SflPipeline *pipeline;
	SflLokiBatchConfig config;
	guint errors;
	gboolean skip;
	/* a producer that resumes on the writable callback */
	GPtrArray *feed; /* SflEntry */
	guint feed_next;
	/* key -> the last value offered for it */
	GHashTable *last_value;
	/* the entries Loki refused for good, as the rejected callback saw them: "reason line" */
	GPtrArray *rejected;
	/* every test keeps what Loki refused in a dead-letter store of its own */
	gchar *tmpdir;
	SflDeadletter *deadletter;
} Fixture;

static gboolean
test_deadline_cb(gpointer user_data)
{
	gboolean *expired = user_data;

	*expired = TRUE;
	return G_SOURCE_REMOVE;
}

/* iterates the default context until @cond holds; fails the test at the deadline */
#define TEST_WAIT_FOR(cond)                                                                        \
	G_STMT_START                                                                               \
	{                                                                                          \
		gboolean expired_ = FALSE;                                                         \
		GSource *deadline_ = g_timeout_source_new_seconds(TEST_DEADLINE_SEC);              \
		g_source_set_callback(deadline_, test_deadline_cb, &expired_, NULL);               \
		g_source_attach(deadline_, NULL);                                                  \
		while (!(cond) && !expired_)                                                       \
			g_main_context_iteration(NULL, TRUE);                                      \
		g_source_destroy(deadline_);                                                       \
		g_source_unref(deadline_);                                                         \
		if (!(cond))                                                                       \
			g_error("timed out waiting for %s", #cond);                                \
	}                                                                                          \
	G_STMT_END

/* a control call to the simulator; returns the parsed JSON answer */
static json_t *
test_control(Fixture *fx, const gchar *method, const gchar *path, const gchar *json)
{
	return sfl_test_sim_control(fx->loop, fx->base, method, path, json);
}

/* GET /control/received: tens of MB in the large cases, which the control call's bound allows */
static json_t *
test_received(Fixture *fx)
{
	return test_control(fx, "GET", "/control/received", NULL);
}

static void
test_fault(Fixture *fx, const gchar *json)
{
	g_autoptr(json_t) answer = test_control(fx, "POST", "/control/fault", json);

	g_assert_true(json_is_object(answer));
}

static void
fx_error(SflPipeline *pipeline, SflLane lane, const GError *error, gpointer user_data)
{
	Fixture *fx = user_data;

	(void)pipeline;
	(void)lane;
	(void)error;
	fx->errors++;
}

static void
fx_rejected(SflPipeline *pipeline, SflLane lane, SflEntry *entry, const gchar *reason,
	    gpointer user_data)
{
	Fixture *fx = user_data;

	(void)pipeline;
	(void)lane;
	g_ptr_array_add(fx->rejected, g_strdup_printf("%s %.12s", reason, entry->line));
}

static void
fx_feed_run(Fixture *fx)
{
	while (fx->feed_next < fx->feed->len &&
	       sfl_pipeline_offer(fx->pipeline, SFL_LANE_BULK, fx->feed->pdata[fx->feed_next]))
		fx->feed_next++;
}

static void
fx_writable(SflPipeline *pipeline, SflLane lane, gpointer user_data)
{
	Fixture *fx = user_data;

	(void)pipeline;
	if (lane == SFL_LANE_BULK)
		fx_feed_run(fx);
}

static void
fx_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	const SflLabelPair pairs_a[] = { { "job", "sf2loki" }, { "org", "acme" } };
	const SflLabelPair pairs_b[] = { { "job", "sf2loki" }, { "org", "globex" } };

	(void)data;
	fx->base = sfl_test_loki_sim_start(NULL, &fx->sim);
	if (fx->base == NULL) {
		fx->skip = TRUE;
		return;
	}
	fx->push_url = g_strconcat(fx->base, "/loki/api/v1/push", NULL);
	fx->loop = sfl_curl_loop_new();
	fx->interner = sfl_labels_interner_new();
	fx->labels[0] = sfl_labels_intern(fx->interner, pairs_a, G_N_ELEMENTS(pairs_a), &error);
	g_assert_no_error(error);
	fx->labels[1] = sfl_labels_intern(fx->interner, pairs_b, G_N_ELEMENTS(pairs_b), &error);
	g_assert_no_error(error);
	fx->backing = sfl_memory_backing_new();
	fx->store = sfl_memory_store_new(fx->backing);
	fx->clock = sfl_clock_get_system();
	fx->config.max_entries = 100;
	fx->config.max_bytes = 1 << 20;
	fx->config.flush_interval = 50 * 1000;
	fx->config.max_line_bytes = 0;
	fx->config.queue_maxsize = 300;
	fx->config.queue_max_bytes = 0;
	fx->feed = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_entry_unref);
	fx->last_value = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	fx->rejected = g_ptr_array_new_with_free_func(g_free);
	fx->tmpdir = g_dir_make_tmp("sfl-test-pipeline-loki-XXXXXX", &error);
	g_assert_no_error(error);
	{
		g_autofree gchar *dir = g_build_filename(fx->tmpdir, "deadletter", NULL);
		fx->deadletter = sfl_deadletter_open(dir, 1 << 20, 0, fx->clock, &error);
		g_assert_no_error(error);
	}
}

/*
 * The dead-letter store holds exactly what the rejected seam heard, as "reason line-prefix",
 * with the entries' labels: nothing Loki refused for good is gone without a copy.
 */
static void
fx_check_deadletter(Fixture *fx)
{
	g_autoptr(GPtrArray) records = sfl_deadletter_read_all(fx->deadletter, NULL);
	g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func(g_free);

	g_assert_cmpuint(records->len, ==, fx->rejected->len);
	for (guint i = 0; i < records->len; i++) {
		json_t *r = g_ptr_array_index(records, i);
		json_t *labels = json_object_get(r, "labels");

		g_assert_cmpstr(json_string_value(json_object_get(labels, "job")), ==, "sf2loki");
		g_assert_true(json_integer_value(json_object_get(r, "timestamp_ns")) > 0);
		g_ptr_array_add(seen,
				g_strdup_printf("%s %.12s",
						json_string_value(json_object_get(r, "reason")),
						json_string_value(json_object_get(r, "line"))));
	}
	for (guint i = 0; i < fx->rejected->len; i++) {
		guint at;
		g_assert_true(g_ptr_array_find_with_equal_func(seen, fx->rejected->pdata[i],
							       g_str_equal, &at));
		g_ptr_array_remove_index(seen, at);
	}
}

/* builds the sink and the pipeline once the test has set the config */
static void
fx_start(Fixture *fx, const Encoding *enc)
{
	SflPipelineCallbacks callbacks = { .writable = fx_writable,
					   .error = fx_error,
					   .fenced = fx_error,
					   .rejected = fx_rejected };
	SflLokiConfig cfg = { 0 };
	g_autoptr(GError) error = NULL;

	cfg.url = fx->push_url;
	cfg.encoding = enc->encoding;
	cfg.compression = enc->compression;
	cfg.batch = fx->config;
	fx->sink = sfl_loki_sink_new(fx->loop, &cfg, &error);
	g_assert_no_error(error);
	g_assert_nonnull(fx->sink);
	fx->pipeline = sfl_pipeline_new(&fx->config, fx->sink, fx->store, fx->clock);
	sfl_pipeline_set_seed(fx->pipeline, 42);
	sfl_pipeline_set_deadletter(fx->pipeline, fx->deadletter);
	sfl_pipeline_set_callbacks(fx->pipeline, &callbacks, fx);
}

static void
fx_teardown(Fixture *fx, gconstpointer data)
{
	(void)data;
	if (fx->pipeline != NULL) {
		gpointer weak = fx->pipeline;

		g_object_add_weak_pointer(G_OBJECT(fx->pipeline), &weak);
		g_clear_object(&fx->pipeline);
		/* a push or commit in flight holds the pipeline until it completes */
		TEST_WAIT_FOR(weak == NULL);
	}
	g_clear_object(&fx->sink);
	if (fx->loop != NULL)
		g_assert_cmpuint(sfl_curl_loop_get_n_transfers(fx->loop), ==, 0);
	g_clear_object(&fx->loop);
	g_clear_object(&fx->store);
	g_clear_pointer(&fx->backing, sfl_memory_backing_unref);
	g_clear_pointer(&fx->clock, sfl_clock_unref);
	g_clear_pointer(&fx->feed, g_ptr_array_unref);
	g_clear_pointer(&fx->last_value, g_hash_table_unref);
	g_clear_pointer(&fx->rejected, g_ptr_array_unref);
	g_clear_pointer(&fx->deadletter, sfl_deadletter_unref);
	if (fx->tmpdir != NULL)
		sfl_test_rmtree(fx->tmpdir);
	g_free(fx->tmpdir);
	g_clear_pointer(&fx->labels[0], sfl_labels_unref);
	g_clear_pointer(&fx->labels[1], sfl_labels_unref);
	g_clear_pointer(&fx->interner, sfl_labels_interner_unref);
	if (fx->sim != NULL) {
		sfl_test_sim_kill(fx->sim);
	}
	g_clear_object(&fx->sim);
	g_free(fx->base);
	g_free(fx->push_url);
	/* let sources destroyed above release their data */
	while (g_main_context_iteration(NULL, FALSE))
		;
}

/* --- entries -------------------------------------------------------------------------------- */

/* a line of @len characters that compresses poorly, unique through its prefix */
static gchar *
test_line(guint idx, gsize len, GRand *rand)
{
	static const gchar alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	GString *line = g_string_sized_new(len + 1);

	g_string_printf(line, "entry-%06u ", idx);
	while (line->len < len)
		g_string_append_c(line, alphabet[g_rand_int_range(rand, 0, 64)]);
	return g_string_free(line, FALSE);
}

/* queues an entry for the feed and remembers the last value of its key */
static void
fx_add(Fixture *fx, guint idx, const gchar *line, const gchar *key)
{
	g_autofree gchar *value = g_strdup_printf("%u", idx);
	gint64 ts = G_GINT64_CONSTANT(1700000000000000000) + (gint64)idx * 1000;

	g_ptr_array_add(fx->feed,
			sfl_entry_new(ts, fx->labels[idx % 2], line, -1, NULL, 0, key, value));
	g_hash_table_insert(fx->last_value, g_strdup(key), g_steal_pointer(&value));
}

/* @n entries of @len bytes on TEST_N_KEYS keys */
static void
fx_add_many(Fixture *fx, guint n, gsize len)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(7);

	for (guint i = 0; i < n; i++) {
		g_autofree gchar *line = test_line(i, len, rand);
		g_autofree gchar *key = g_strdup_printf("key-%u", i % TEST_N_KEYS);

		fx_add(fx, i, line, key);
	}
}

/* every key's last offered value is committed */
static gboolean
fx_all_committed(Fixture *fx)
{
	g_autoptr(SflStateDoc) doc = sfl_memory_backing_dup_document(fx->backing);
	GHashTableIter iter;
	gpointer key;
	gpointer value;

	g_hash_table_iter_init(&iter, fx->last_value);
	while (g_hash_table_iter_next(&iter, &key, &value)) {
		if (g_strcmp0(sfl_state_doc_get(doc, key), value) != 0)
			return FALSE;
	}
	return TRUE;
}

/* offers the feed and waits until every key committed its last value */
static void
fx_run(Fixture *fx)
{
	fx_feed_run(fx);
	TEST_WAIT_FOR(fx->feed_next == fx->feed->len && fx_all_committed(fx));
	g_assert_cmpuint(fx->errors, ==, 0);
	g_assert_false(sfl_pipeline_is_lane_stopped(fx->pipeline, SFL_LANE_BULK));
}

static SflPipelineCounters
fx_counters(Fixture *fx)
{
	SflPipelineCounters counters;

	sfl_pipeline_get_counters(fx->pipeline, &counters);
	return counters;
}

/*
 * Checks the simulator received every feed entry but @skip exactly once, with its stream's
 * labels, and nothing else; returns the number of accepted pushes.
 */
static guint
fx_check_received(Fixture *fx, const gchar *skip)
{
	g_autoptr(json_t) received = test_received(fx);
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	json_t *streams = json_object_get(received, "streams");
	json_t *pushes = json_object_get(received, "pushes");
	json_t *stream = NULL;
	json_t *entry = NULL;
	gsize i = 0;
	gsize j = 0;
	guint total = 0;
	guint expected = 0;

	g_assert_true(json_is_array(streams));
	g_assert_true(json_is_array(pushes));
	json_array_foreach (streams, i, stream) {
		json_t *labels = json_object_get(stream, "labels");

		g_assert_cmpstr(json_string_value(json_object_get(labels, "job")), ==, "sf2loki");
		json_array_foreach (json_object_get(stream, "entries"), j, entry) {
			const gchar *line = json_string_value(json_object_get(entry, "line"));

			g_assert_nonnull(line);
			/* each line once */
			g_assert_false(g_hash_table_contains(seen, line));
			g_hash_table_add(seen, (gpointer)line);
			total++;
		}
	}
	for (guint k = 0; k < fx->feed->len; k++) {
		const SflEntry *e = fx->feed->pdata[k];

		if (g_strcmp0(e->line, skip) == 0) {
			g_assert_false(g_hash_table_contains(seen, e->line));
			continue;
		}
		g_assert_true(g_hash_table_contains(seen, e->line));
		expected++;
	}
	g_assert_cmpuint(total, ==, expected);
	return (guint)json_array_size(pushes);
}

/* --- partial rejections (tests/data/loki-rejections) ---------------------------------------- */

/* 2023-11-14T22:13:20.123456789Z: the time the shapes name */
#define TS_NAMED G_GINT64_CONSTANT(1700000000123456789)

/* an entry on its own stream {job="sf2loki", source=@source}, extra labels after */
static void
fx_add_at(Fixture *fx, guint idx, const gchar *source, const gchar *event_type, gint64 ts)
{
	SflLabelPair pairs[3] = { { "job", "sf2loki" }, { "source", source } };
	g_autoptr(SflLabels) labels = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *line = g_strdup_printf("entry-%06u on %s", idx, source);
	g_autofree gchar *key = g_strdup_printf("key-%s", source);
	g_autofree gchar *value = g_strdup_printf("%u", idx);
	guint n = 2;

	if (event_type != NULL)
		pairs[n++] = (SflLabelPair){ "event_type", event_type };
	labels = sfl_labels_intern(fx->interner, pairs, n, &error);
	g_assert_no_error(error);
	g_ptr_array_add(fx->feed, sfl_entry_new(ts, labels, line, -1, NULL, 0, key, value));
	g_hash_table_insert(fx->last_value, g_steal_pointer(&key), g_steal_pointer(&value));
}

/* the simulator answers @shape with @status to pushes holding a line starting with @refuse */
static void
fx_partial(Fixture *fx, guint status, const gchar *shape, const gchar *const *refuse, guint count,
	   gboolean all_or_nothing)
{
	g_autofree gchar *path =
		g_test_build_filename(G_TEST_DIST, "data", "loki-rejections", shape, NULL);
	g_autofree gchar *body = NULL;
	g_autoptr(json_t) doc = NULL;
	json_t *list = json_array();
	g_autofree gchar *text = NULL;

	g_assert_true(g_file_get_contents(path, &body, NULL, NULL));
	for (guint i = 0; refuse[i] != NULL; i++)
		json_array_append_new(list, json_string(refuse[i]));
	doc = json_pack("{s:{s:i, s:s, s:o, s:i, s:b}}", "partial", "status", (int)status, "body",
			body, "refuse", list, "count", (int)count, "all_or_nothing",
			all_or_nothing);
	g_assert_nonnull(doc);
	text = json_dumps(doc, JSON_COMPACT);
	test_fault(fx, text);
}

/* how often the simulator refused a line starting with @prefix */
static guint
fx_refused(Fixture *fx, const gchar *prefix)
{
	g_autoptr(json_t) received = test_received(fx);
	json_t *line = NULL;
	gsize i = 0;
	guint n = 0;

	json_array_foreach (json_object_get(received, "refused"), i, line)
		n += g_str_has_prefix(json_string_value(line), prefix);
	return n;
}

/* 40 entries on two streams and the named one: only the named one is refused, for good */
static void
fx_feed_with_named(Fixture *fx, guint named_idx, const gchar *source, gint64 ts)
{
	for (guint i = 0; i < 40; i++) {
		g_autofree gchar *line = g_strdup_printf("entry-%06u plain", i);
		g_autofree gchar *key = g_strdup_printf("key-%u", i % TEST_N_KEYS);

		if (i == named_idx)
			fx_add_at(fx, i, source, NULL, ts);
		else
			fx_add(fx, i, line, key);
	}
}

/* a 400 that drops one entry of 40 for good: the other 39 stored once, never sent again */
typedef struct {
	const gchar *body;	/* under tests/data/loki-rejections/ */
	guint named;		/* the entry Loki refuses */
	gboolean names_nothing; /* the body names no entry: the batch is bisected */
	const gchar *rejected;	/* what the rejected seam heard */
} PartialDrop;

static void
fx_check_partial_drop(Fixture *fx, gconstpointer data, const PartialDrop *c)
{
	g_autofree gchar *named = g_strdup_printf("entry-%06u", c->named);
	g_autofree gchar *stored_not = g_strdup_printf("%s on pubsub", named);
	const gchar *const refuse[] = { named, NULL };
	SflPipelineCounters counters;

	if (fx->skip)
		return;
	fx_partial(fx, 400, c->body, refuse, 100, c->names_nothing);
	fx_start(fx, data);
	fx_feed_with_named(fx, c->named, "pubsub", TS_NAMED);
	fx_run(fx);
	fx_check_received(fx, stored_not);
	/* named: refused once; bisected: 40 → 20 → 10 → 5 → 3 → 2 → 1, one refusal per level */
	if (c->names_nothing)
		g_assert_cmpuint(fx_refused(fx, named), >=, 5);
	else
		g_assert_cmpuint(fx_refused(fx, named), ==, 1);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.dropped_bad_request, ==, 1);
	g_assert_cmpuint(counters.pushed_entries, ==, 39);
	/* a bisected drop reaches the rejected seam too, under the status' reason */
	g_assert_cmpuint(fx->rejected->len, ==, 1);
	g_assert_cmpstr(fx->rejected->pdata[0], ==, c->rejected);
	fx_check_deadletter(fx);
	g_assert_true(fx_all_committed(fx));
}

/* a distributor 400 naming the entry: refused once, the accepted 39 never sent again */
static void
test_partial_permanent(Fixture *fx, gconstpointer data)
{
	static const PartialDrop c = { "distributor-too-old.txt", 17, FALSE,
				       "greater_than_max_sample_age entry-000017" };

	fx_check_partial_drop(fx, data, &c);
}

/* the ingester's per-stream rate limit (429) on one entry: it alone goes again, and lands */
static void
test_partial_retryable(Fixture *fx, gconstpointer data)
{
	const gchar *const refuse[] = { "entry-000005", NULL };
	SflPipelineCounters counters;

	if (fx->skip)
		return;
	fx_partial(fx, 429, "ingester-rate-limited.txt", refuse, 1, FALSE);
	fx_start(fx, data);
	fx_feed_with_named(fx, 5, "pubsub", TS_NAMED);
	fx_run(fx);
	fx_check_received(fx, NULL);
	g_assert_cmpuint(fx_refused(fx, "entry-000005"), ==, 1);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.dropped_bad_request, ==, 0);
	g_assert_cmpuint(counters.pushed_entries, ==, 40);
	g_assert_cmpuint(counters.retries, >=, 1);
	g_assert_cmpuint(fx->rejected->len, ==, 0);
	/* retried and stored: nothing for the dead-letter store */
	fx_check_deadletter(fx);
}

/* a 400 that names nothing we can read, storing nothing: bisected down to the one entry */
static void
test_partial_unparseable(Fixture *fx, gconstpointer data)
{
	static const PartialDrop c = { "unparseable.txt", 23, TRUE, "bad_request entry-000023" };

	fx_check_partial_drop(fx, data, &c);
}

/* three streams refused for three reasons, one of them stream-wide, in one body */
static void
test_partial_mixed(Fixture *fx, gconstpointer data)
{
	const gchar *const refuse[] = { "entry-000003", "entry-000011", "entry-000030", NULL };
	SflPipelineCounters counters;
	g_autoptr(GHashTable) reasons = g_hash_table_new(g_str_hash, g_str_equal);

	if (fx->skip)
		return;
	fx_partial(fx, 400, "mixed.txt", refuse, 100, FALSE);
	fx_start(fx, data);
	for (guint i = 0; i < 40; i++) {
		g_autofree gchar *line = g_strdup_printf("entry-%06u plain", i);
		g_autofree gchar *key = g_strdup_printf("key-%u", i % TEST_N_KEYS);

		if (i == 3)
			fx_add_at(fx, i, "pubsub", NULL, TS_NAMED);
		else if (i == 11)
			fx_add_at(fx, i, "elf", "Login", TS_NAMED);
		else if (i == 30)
			fx_add_at(fx, i, "api", NULL, G_GINT64_CONSTANT(1893456000000000000));
		else
			fx_add(fx, i, line, key);
	}
	fx_run(fx);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.dropped_bad_request, ==, 3);
	g_assert_cmpuint(counters.pushed_entries, ==, 37);
	g_assert_cmpuint(fx_refused(fx, "entry-0000"), ==, 3);
	g_assert_cmpuint(fx->rejected->len, ==, 3);
	for (guint i = 0; i < fx->rejected->len; i++)
		g_hash_table_add(reasons, fx->rejected->pdata[i]);
	g_assert_true(g_hash_table_contains(reasons, "greater_than_max_sample_age entry-000003"));
	g_assert_true(g_hash_table_contains(reasons, "max_label_names_per_series entry-000011"));
	g_assert_true(g_hash_table_contains(reasons, "too_far_in_future entry-000030"));
	fx_check_deadletter(fx);
	g_assert_true(fx_all_committed(fx));
}

/* --- tests ---------------------------------------------------------------------------------- */

/* 1,000 entries, one of them too long for the peer: 999 delivered, the poison dropped */
static void
test_poison(Fixture *fx, gconstpointer data)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(11);
	g_autofree gchar *poison = NULL;
	SflPipelineCounters counters;

	if (fx->skip)
		return;
	test_fault(fx, "{\"reject_line_over\": 1000}");
	fx_start(fx, data);
	for (guint i = 0; i < 1000; i++) {
		g_autofree gchar *line = test_line(i, i == 500 ? 2000 : 120, rand);
		g_autofree gchar *key = g_strdup_printf("key-%u", i % TEST_N_KEYS);

		if (i == 500) {
			poison = g_strdup(line);
			fx_add(fx, i, line, TEST_POISON_KEY);
		} else {
			fx_add(fx, i, line, key);
		}
	}
	fx_run(fx);
	fx_check_received(fx, poison);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.dropped_bad_request, ==, 1);
	g_assert_cmpuint(counters.dropped_oversized_413, ==, 0);
	g_assert_cmpuint(counters.dropped_other, ==, 0);
	g_assert_cmpuint(counters.pushed_entries, ==, 999);
	g_assert_cmpuint(fx->rejected->len, ==, 1);
	fx_check_deadletter(fx);
	{
		g_autoptr(GPtrArray) kept = sfl_deadletter_read_all(fx->deadletter, NULL);
		g_assert_cmpstr(json_string_value(json_object_get(kept->pdata[0], "line")), ==,
				poison);
		g_assert_cmpstr(
			json_string_value(json_object_get(kept->pdata[0], "checkpoint_key")), ==,
			TEST_POISON_KEY);
	}
	/* the poison entry's key committed too: a deliberate drop counts as disposed */
	g_assert_true(fx_all_committed(fx));
	{
		g_autoptr(SflStateDoc) doc = sfl_memory_backing_dup_document(fx->backing);

		g_assert_cmpstr(sfl_state_doc_get(doc, TEST_POISON_KEY), ==, "500");
		g_assert_cmpstr(sfl_state_doc_get(doc, "key-3"), ==, "999");
	}
}

/* 413 for bodies of 8 entries: the pipeline bisects down to parts that fit, drops nothing */
static void
test_oversized(Fixture *fx, gconstpointer data)
{
	SflPipelineCounters counters;
	guint pushes;

	if (fx->skip)
		return;
	/* one 600-byte entry makes a body well under 2,000 bytes, eight make one well over */
	test_fault(fx, "{\"max_body\": 2000}");
	fx_start(fx, data);
	fx_add_many(fx, 200, 600);
	fx_run(fx);
	pushes = fx_check_received(fx, NULL);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.dropped_bad_request, ==, 0);
	g_assert_cmpuint(counters.dropped_oversized_413, ==, 0);
	g_assert_cmpuint(counters.dropped_other, ==, 0);
	g_assert_cmpuint(counters.pushed_entries, ==, 200);
	/* two batches of 100 at most without bisection; every accepted push holds < 8 entries */
	g_assert_cmpuint(pushes, >=, 200 / 7);
}

/* 500 twice, then success: the same batch retried, delivered once */
static void
test_retry_500(Fixture *fx, gconstpointer data)
{
	SflPipelineCounters counters;

	if (fx->skip)
		return;
	/* no base-backoff hook exists: the peer's Retry-After makes the retries immediate */
	test_fault(fx, "{\"count\": 2, \"status\": 500, \"retry_after\": \"0\"}");
	fx_start(fx, data);
	fx_add_many(fx, 50, 200);
	fx_run(fx);
	fx_check_received(fx, NULL);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.retries, >=, 2);
	g_assert_cmpuint(counters.dropped_bad_request + counters.dropped_oversized_413 +
				 counters.dropped_other,
			 ==, 0);
	g_assert_cmpuint(counters.pushed_entries, ==, 50);
}

/* 401 once: a credential problem is retried (through the real backoff), never dropped */
static void
test_retry_401(Fixture *fx, gconstpointer data)
{
	SflPipelineCounters counters;

	if (fx->skip)
		return;
	test_fault(fx, "{\"count\": 1, \"status\": 401}");
	fx_start(fx, data);
	fx_add_many(fx, 50, 200);
	fx_run(fx);
	fx_check_received(fx, NULL);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.retries, >=, 1);
	g_assert_cmpuint(counters.dropped_bad_request + counters.dropped_oversized_413 +
				 counters.dropped_other,
			 ==, 0);
	g_assert_cmpuint(counters.pushed_entries, ==, 50);
}

/* a plain run through the writable callback: a small queue refuses offers and resumes */
static void
test_flow(Fixture *fx, gconstpointer data)
{
	SflPipelineCounters counters;

	if (fx->skip)
		return;
	fx->config.queue_maxsize = 50;
	fx_start(fx, data);
	fx_add_many(fx, 1000, 300);
	fx_run(fx);
	fx_check_received(fx, NULL);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.pushed_entries, ==, 1000);
	g_assert_cmpuint(counters.retries, ==, 0);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* the pipeline warns about every deliberate drop; that is expected here */
	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);

#define ADD(path, enc, func) g_test_add(path, Fixture, enc, fx_setup, func, fx_teardown)
	ADD("/sfl/pipeline-loki/protobuf/flow", &enc_protobuf, test_flow);
	ADD("/sfl/pipeline-loki/protobuf/poison", &enc_protobuf, test_poison);
	ADD("/sfl/pipeline-loki/protobuf/oversized", &enc_protobuf, test_oversized);
	ADD("/sfl/pipeline-loki/protobuf/retry-500", &enc_protobuf, test_retry_500);
	ADD("/sfl/pipeline-loki/protobuf/retry-401", &enc_protobuf, test_retry_401);
	ADD("/sfl/pipeline-loki/json-gzip/flow", &enc_json_gzip, test_flow);
	ADD("/sfl/pipeline-loki/json-gzip/poison", &enc_json_gzip, test_poison);
	ADD("/sfl/pipeline-loki/json-gzip/oversized", &enc_json_gzip, test_oversized);
	ADD("/sfl/pipeline-loki/json-gzip/retry-500", &enc_json_gzip, test_retry_500);
	ADD("/sfl/pipeline-loki/json-gzip/retry-401", &enc_json_gzip, test_retry_401);
	ADD("/sfl/pipeline-loki/protobuf/partial/permanent", &enc_protobuf, test_partial_permanent);
	ADD("/sfl/pipeline-loki/protobuf/partial/retryable", &enc_protobuf, test_partial_retryable);
	ADD("/sfl/pipeline-loki/protobuf/partial/unparseable", &enc_protobuf,
	    test_partial_unparseable);
	ADD("/sfl/pipeline-loki/protobuf/partial/mixed", &enc_protobuf, test_partial_mixed);
	ADD("/sfl/pipeline-loki/json-gzip/partial/mixed", &enc_json_gzip, test_partial_mixed);
#undef ADD

	return g_test_run();
}
