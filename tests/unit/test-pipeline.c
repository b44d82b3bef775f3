/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestPipeline"

#include "config.h"

#include "sfl-error.h"
#include "sfl-memory-store.h"
#include "sfl-pipeline-private.h"
#include "sfl-pipeline.h"
#include "sfl-run-obs.h"
#include "sfl-test-coordinator.h"
#include "sfl-test-sink.h"

/*
 * The pipeline against the scripted fake sink (tests/common/sfl-test-sink.h), a memory store
 * and the fake clock. Time moves only when a test advances the clock; the store's worker
 * thread is waited for by iterating the main context until a condition holds (with a
 * real-time deadline that fails the test).
 */

/* --- a store whose first writes fail ---------------------------------------------------------- */

#define TEST_TYPE_FLAKY_STORE (test_flaky_store_get_type())
G_DECLARE_FINAL_TYPE(TestFlakyStore, test_flaky_store, TEST, FLAKY_STORE, SflCheckpointStore)

struct _TestFlakyStore {
	SflCheckpointStore parent_instance;
	GMutex lock;
	gint failures; /* writes still to fail */
	GArray *codes; /* SflError: each fails one write with that code first */
	guint writes;
	SflStateDoc *doc;
};

G_DEFINE_TYPE(TestFlakyStore, test_flaky_store, SFL_TYPE_CHECKPOINT_STORE)

/* worker thread */
static gboolean
test_flaky_store_commit_many(SflCheckpointStore *store, const SflStateDoc *items,
			     const SflStoreWriter *writer, GCancellable *cancellable,
			     GError **error)
{
	TestFlakyStore *self = TEST_FLAKY_STORE(store);
	gboolean ok = TRUE;

	/* clang in GLib 2.74 flags an autoptr GMutexLocker as unused */
	g_mutex_lock(&self->lock);
	if (self->codes->len > 0) {
		SflError code = g_array_index(self->codes, SflError, 0);
		g_array_remove_index(self->codes, 0);
		g_set_error(error, SFL_ERROR, code, "scripted %s", sfl_error_code_to_string(code));
		ok = FALSE;
	} else if (self->failures > 0) {
		self->failures--;
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_TRANSIENT, "disk hiccup");
		ok = FALSE;
	} else {
		for (guint i = 0; i < sfl_state_doc_size(items); i++) {
			const gchar *key = sfl_state_doc_key_at(items, i);
			sfl_state_doc_set(self->doc, key, sfl_state_doc_get(items, key));
		}
		self->writes++;
	}
	g_mutex_unlock(&self->lock);
	return ok;
}

static gchar *
test_flaky_store_get(TestFlakyStore *self, const gchar *key)
{
	gchar *value;

	g_mutex_lock(&self->lock);
	value = g_strdup(sfl_state_doc_get(self->doc, key));
	g_mutex_unlock(&self->lock);
	return value;
}

static void
test_flaky_store_finalize(GObject *object)
{
	TestFlakyStore *self = TEST_FLAKY_STORE(object);

	sfl_state_doc_free(self->doc);
	g_array_unref(self->codes);
	g_mutex_clear(&self->lock);
	G_OBJECT_CLASS(test_flaky_store_parent_class)->finalize(object);
}

static void
test_flaky_store_class_init(TestFlakyStoreClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = test_flaky_store_finalize;
	SFL_CHECKPOINT_STORE_CLASS(klass)->commit_many = test_flaky_store_commit_many;
}

static void
test_flaky_store_init(TestFlakyStore *self)
{
	g_mutex_init(&self->lock);
	self->doc = sfl_state_doc_new();
	self->codes = g_array_new(FALSE, FALSE, sizeof(SflError));
}

static void
test_flaky_store_set_failures(TestFlakyStore *self, gint failures)
{
	g_mutex_lock(&self->lock);
	self->failures = failures;
	g_mutex_unlock(&self->lock);
}

/* --- fixture -------------------------------------------------------------------------------- */

typedef struct {
	SflClock *clock;
	SflMemoryBacking *backing;
	SflCheckpointStore *store;
	SflTestSink *sink;
	SflLabelsInterner *interner;
	SflLabels *labels;
	SflLokiBatchConfig config;
	SflPipeline *pipeline;
	guint writable[SFL_LANE_COUNT];
	guint errors;
	guint fenced;
	gboolean fence_open;
	/* a producer that resumes on the writable callback */
	GPtrArray *feed; /* SflEntry */
	guint feed_next;
	SflLane feed_lane;
	gboolean stopped;
	gboolean stop_ok;
} Fixture;

static void fx_writable(SflPipeline *pipeline, SflLane lane, gpointer user_data);

static void
fx_error(SflPipeline *pipeline, SflLane lane, const GError *error, gpointer user_data)
{
	Fixture *fx = user_data;
	g_assert_false(g_error_matches(error, SFL_ERROR, SFL_ERROR_FENCED));
	fx->errors++;
}

static void
fx_fenced(SflPipeline *pipeline, SflLane lane, const GError *error, gpointer user_data)
{
	Fixture *fx = user_data;
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
	fx->fenced++;
}

static gboolean
fx_fence(gpointer user_data)
{
	Fixture *fx = user_data;
	return fx->fence_open;
}

static void
fx_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	SflLabelPair pair = { "job", "test" };

	fx->clock = sfl_fake_clock_new(G_GINT64_CONSTANT(1700000000) * G_USEC_PER_SEC);
	fx->backing = sfl_memory_backing_new();
	fx->store = sfl_memory_store_new(fx->backing);
	fx->fence_open = TRUE;
	sfl_checkpoint_store_set_fence(fx->store, fx_fence, fx, NULL);
	fx->sink = sfl_test_sink_new(fx->clock);
	fx->interner = sfl_labels_interner_new();
	fx->labels = sfl_labels_intern(fx->interner, &pair, 1, &error);
	g_assert_no_error(error);
	fx->config.max_entries = 1000;
	fx->config.max_bytes = 1 << 20;
	fx->config.flush_interval = G_USEC_PER_SEC;
	fx->config.max_line_bytes = 0;
	fx->config.queue_maxsize = 10000;
	fx->config.queue_max_bytes = 0;
	fx->feed = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_entry_unref);
}

/* builds the pipeline once the test has set the config */
static void
fx_start(Fixture *fx)
{
	SflPipelineCallbacks callbacks = { fx_writable, fx_error, fx_fenced };

	fx->pipeline = sfl_pipeline_new(&fx->config, SFL_SINK(fx->sink), fx->store, fx->clock);
	sfl_pipeline_set_seed(fx->pipeline, 42);
	sfl_pipeline_set_callbacks(fx->pipeline, &callbacks, fx);
}

#define FX_WAIT_FOR(cond) SFL_TEST_ITERATE_UNTIL(cond)

static void
fx_advance(Fixture *fx, gint64 usec)
{
	sfl_fake_clock_advance(fx->clock, usec);
	sfl_test_drain(NULL);
}

static guint
fx_writes(Fixture *fx)
{
	return sfl_memory_backing_get_write_count(fx->backing);
}

static gchar *
fx_committed(Fixture *fx, const gchar *key)
{
	g_autoptr(SflStateDoc) doc = sfl_memory_backing_dup_document(fx->backing);
	return g_strdup(sfl_state_doc_get(doc, key));
}

static gboolean
fx_committed_is(Fixture *fx, const gchar *key, const gchar *value)
{
	g_autofree gchar *got = fx_committed(fx, key);
	return g_strcmp0(got, value) == 0;
}

static SflPipelineCounters
fx_counters(Fixture *fx)
{
	SflPipelineCounters counters;
	sfl_pipeline_get_counters(fx->pipeline, &counters);
	return counters;
}

#define FX_ASSERT_COMMITTED(fx, key, value)                                                        \
	G_STMT_START                                                                               \
	{                                                                                          \
		g_autofree gchar *got_ = fx_committed(fx, key);                                    \
		g_assert_cmpstr(got_, ==, value);                                                  \
	}                                                                                          \
	G_STMT_END

static SflEntry *
fx_entry(Fixture *fx, const gchar *line, const gchar *key, const gchar *value)
{
	return sfl_entry_new(1, fx->labels, line, -1, NULL, 0, key, value);
}

static void
fx_offer(Fixture *fx, SflLane lane, const gchar *line, const gchar *key, const gchar *value)
{
	g_autoptr(SflEntry) entry = fx_entry(fx, line, key, value);
	g_assert_true(sfl_pipeline_offer(fx->pipeline, lane, entry));
}

static void
fx_offer_marker(Fixture *fx, SflLane lane, const gchar *key, const gchar *value)
{
	g_autoptr(SflEntry) entry = sfl_entry_new_checkpoint_only(1, key, value);
	g_assert_true(sfl_pipeline_offer(fx->pipeline, lane, entry));
}

static void
fx_feed_run(Fixture *fx)
{
	while (fx->feed_next < fx->feed->len &&
	       sfl_pipeline_offer(fx->pipeline, fx->feed_lane, fx->feed->pdata[fx->feed_next]))
		fx->feed_next++;
}

static void
fx_writable(SflPipeline *pipeline, SflLane lane, gpointer user_data)
{
	Fixture *fx = user_data;

	fx->writable[lane]++;
	if (lane == fx->feed_lane)
		fx_feed_run(fx);
}

static SflTestPush *
fx_push(Fixture *fx, guint idx)
{
	g_assert_cmpuint(idx, <, fx->sink->pushes->len);
	return g_ptr_array_index(fx->sink->pushes, idx);
}

static void
fx_stop_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Fixture *fx = user_data;
	g_autoptr(GError) error = NULL;

	fx->stop_ok = sfl_pipeline_stop_finish(SFL_PIPELINE(source), result, &error);
	g_assert_no_error(error);
	fx->stopped = TRUE;
}

static void
fx_teardown(Fixture *fx, gconstpointer data)
{
	sfl_test_sink_release(fx->sink);
	sfl_test_drain(NULL);
	if (fx->pipeline != NULL) {
		gpointer weak = fx->pipeline;
		g_object_add_weak_pointer(G_OBJECT(fx->pipeline), &weak);
		g_clear_object(&fx->pipeline);
		/* a push or commit in flight holds the pipeline until it completes */
		FX_WAIT_FOR(weak == NULL);
	}
	g_ptr_array_unref(fx->feed);
	sfl_labels_unref(fx->labels);
	sfl_labels_interner_unref(fx->interner);
	g_object_unref(fx->sink);
	g_object_unref(fx->store);
	sfl_memory_backing_unref(fx->backing);
	sfl_clock_unref(fx->clock);
}

/* --- batching ------------------------------------------------------------------------------- */

static void
test_batch_count(Fixture *fx, gconstpointer data)
{
	fx->config.max_entries = 10;
	fx_start(fx);
	for (guint i = 0; i < 25; i++) {
		g_autofree gchar *line = g_strdup_printf("line-%u", i);
		g_autofree gchar *value = g_strdup_printf("%u", i);
		fx_offer(fx, SFL_LANE_BULK, line, "k", value);
	}
	FX_WAIT_FOR(fx->sink->pushes->len == 2 && fx_counters(fx).commits == 2);
	g_assert_cmpuint(fx_push(fx, 0)->lines->len, ==, 10);
	g_assert_cmpuint(fx_push(fx, 1)->lines->len, ==, 10);
	g_assert_cmpstr(fx_push(fx, 1)->lines->pdata[0], ==, "line-10");
	/* the rest waits for the flush interval */
	fx_advance(fx, G_USEC_PER_SEC - 1);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 2);
	fx_advance(fx, 1);
	FX_WAIT_FOR(fx->sink->pushes->len == 3 && fx_counters(fx).commits == 3);
	g_assert_cmpuint(fx_push(fx, 2)->lines->len, ==, 5);
	FX_ASSERT_COMMITTED(fx, "k", "24");
}

static void
test_batch_bytes(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *line = g_strnfill(30, 'x');
	SflPipelineCounters counters;

	fx->config.max_bytes = 100;
	fx_start(fx);
	for (guint i = 0; i < 9; i++)
		fx_offer(fx, SFL_LANE_BULK, line, NULL, NULL);
	/* 4 x 30 bytes reach 100 */
	FX_WAIT_FOR(fx->sink->pushes->len == 2);
	g_assert_cmpuint(fx_push(fx, 0)->lines->len, ==, 4);
	g_assert_cmpuint(fx_push(fx, 1)->lines->len, ==, 4);
	fx_advance(fx, G_USEC_PER_SEC);
	FX_WAIT_FOR(fx->sink->pushes->len == 3);
	g_assert_cmpuint(fx_push(fx, 2)->lines->len, ==, 1);
	sfl_pipeline_get_counters(fx->pipeline, &counters);
	g_assert_cmpuint(counters.pushed_entries, ==, 9);
	g_assert_cmpuint(counters.pushed_bytes, ==, 9 * 30);
	/* no keys: nothing to commit */
	g_assert_cmpuint(fx_writes(fx), ==, 0);
}

static void
test_batch_timer(Fixture *fx, gconstpointer data)
{
	fx_start(fx);
	fx_offer(fx, SFL_LANE_STREAMING, "a", "k", "1");
	sfl_test_drain(NULL);
	fx_advance(fx, G_USEC_PER_SEC / 2);
	fx_offer(fx, SFL_LANE_STREAMING, "b", "k", "2");
	sfl_test_drain(NULL);
	/* the interval counts from the batch's first entry */
	fx_advance(fx, G_USEC_PER_SEC / 2 - 1);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 0);
	fx_advance(fx, 1);
	FX_WAIT_FOR(fx->sink->pushes->len == 1 && fx_counters(fx).commits == 1);
	g_assert_cmpuint(fx_push(fx, 0)->lines->len, ==, 2);
	FX_ASSERT_COMMITTED(fx, "k", "2");
}

static void
test_batch_line_cap(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *line = g_strnfill(4000, 'y');
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	SflSeries *truncated = NULL;

	fx->config.max_line_bytes = 1024;
	fx->config.max_entries = 1;
	fx_start(fx);
	sfl_pipeline_set_metrics(fx->pipeline, metrics);
	fx_offer(fx, SFL_LANE_BULK, line, NULL, NULL);
	fx_offer(fx, SFL_LANE_BULK, "short", NULL, NULL);
	FX_WAIT_FOR(fx->sink->pushes->len == 2);
	g_assert_cmpuint(strlen(fx_push(fx, 0)->lines->pdata[0]), <=, 1024);
	/* the entry has no source label: counted as unknown, once */
	truncated =
		sfl_metric_family_series(sfl_metrics_counter(metrics, "sf2loki_lines_truncated", "",
							     (const gchar *[]){ "source", NULL }),
					 (const gchar *[]){ "unknown" });
	g_assert_cmpfloat(sfl_series_get(truncated), ==, 1);
}

/* a failing streak: its start is reported for /readyz, then cleared by the success that
 * also records the push's duration, retries included, and its body size */
static void
committed_cb(SflPipeline *pipeline, const SflStateDoc *doc, gpointer user_data)
{
	gchar **last = user_data;
	g_free(*last);
	*last = g_strdup(sfl_state_doc_get(doc, "k"));
}

static void
test_failing_streak(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autofree gchar *committed = NULL;
	const SflPipelineCallbacks callbacks = { .committed = committed_cb };
	SflSeries *duration = NULL;
	gint64 started = 0;

	fx->config.max_entries = 1;
	fx_start(fx);
	sfl_pipeline_set_callbacks(fx->pipeline, &callbacks, &committed);
	sfl_pipeline_set_metrics(fx->pipeline, metrics);
	g_assert_cmpint(sfl_pipeline_get_failing_since(fx->pipeline), ==, 0);
	sfl_test_sink_script(fx->sink, SFL_SINK_RETRY, 5 * G_USEC_PER_SEC);
	started = sfl_clock_monotonic_usec(fx->clock);
	fx_offer(fx, SFL_LANE_BULK, "a1", "k", "1");
	FX_WAIT_FOR(fx->sink->pushes->len == 1);
	FX_WAIT_FOR(sfl_pipeline_get_failing_since(fx->pipeline) != 0);
	g_assert_cmpint(sfl_pipeline_get_failing_since(fx->pipeline), ==, started);
	fx_advance(fx, 5 * G_USEC_PER_SEC);
	FX_WAIT_FOR(fx_counters(fx).commits == 1);
	g_assert_cmpint(sfl_pipeline_get_failing_since(fx->pipeline), ==, 0);
	g_assert_cmpstr(committed, ==, "1");
	g_assert_cmpint(fx_counters(fx).last_success_wall_usec, ==, sfl_clock_wall_usec(fx->clock));
	duration = sfl_metric_family_series(
		sfl_metrics_histogram(metrics, "sf2loki_loki_push_duration_seconds", "", NULL,
				      (const gdouble[]){ 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
							 1, 2.5, 5, 10 },
				      11),
		NULL);
	g_assert_cmpuint(sfl_series_get_count(duration), ==, 1);
	g_assert_cmpfloat(sfl_series_get(duration), ==, 5.0);
}

/* --- commits -------------------------------------------------------------------------------- */

static void
test_commit_after_push(Fixture *fx, gconstpointer data)
{
	SflPipelineCounters counters;

	fx->config.max_entries = 3;
	fx_start(fx);
	fx->sink->hold = TRUE;
	fx_offer(fx, SFL_LANE_BULK, "a1", "a", "1");
	fx_offer(fx, SFL_LANE_BULK, "b1", "b", "1");
	fx_offer(fx, SFL_LANE_BULK, "a2", "a", "2");
	FX_WAIT_FOR(fx->sink->held->len == 1);
	/* nothing commits while the push is unanswered */
	g_assert_cmpuint(fx_writes(fx), ==, 0);
	sfl_test_sink_release(fx->sink);
	FX_WAIT_FOR(fx_counters(fx).commits == 1);
	/* one write for the batch, last value per key */
	FX_ASSERT_COMMITTED(fx, "a", "2");
	FX_ASSERT_COMMITTED(fx, "b", "1");
	fx_offer(fx, SFL_LANE_BULK, "a3", "a", "3");
	fx_offer(fx, SFL_LANE_BULK, "b2", "b", "2");
	fx_offer(fx, SFL_LANE_BULK, "b3", "b", "3");
	FX_WAIT_FOR(fx_counters(fx).commits == 2);
	FX_ASSERT_COMMITTED(fx, "a", "3");
	FX_ASSERT_COMMITTED(fx, "b", "3");
	sfl_pipeline_get_counters(fx->pipeline, &counters);
	g_assert_cmpuint(counters.commits, ==, 2);
	g_assert_cmpuint(counters.pushed_entries, ==, 6);
}

static void
test_commit_markers_alone(Fixture *fx, gconstpointer data)
{
	fx->config.max_entries = 4;
	fx_start(fx);
	fx_offer_marker(fx, SFL_LANE_STREAMING, "p", "10");
	fx_offer_marker(fx, SFL_LANE_STREAMING, "q", "20");
	fx_offer_marker(fx, SFL_LANE_STREAMING, "p", "11");
	fx_offer_marker(fx, SFL_LANE_STREAMING, "q", "21");
	FX_WAIT_FOR(fx_counters(fx).commits == 1);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 0);
	FX_ASSERT_COMMITTED(fx, "p", "11");
	FX_ASSERT_COMMITTED(fx, "q", "21");
}

/*
 * a's real entry retries; markers for a and b queue behind it. b commits at once, a only once
 * its real entry is accepted, and then at the marker's value.
 */
static void
test_commit_key_order(Fixture *fx, gconstpointer data)
{
	fx->config.max_entries = 1;
	fx_start(fx);
	sfl_test_sink_script(fx->sink, SFL_SINK_RETRY, 5 * G_USEC_PER_SEC);
	fx_offer(fx, SFL_LANE_BULK, "a1", "a", "1");
	FX_WAIT_FOR(fx->sink->pushes->len == 1);
	fx_offer_marker(fx, SFL_LANE_BULK, "b", "7");
	fx_offer_marker(fx, SFL_LANE_BULK, "a", "2");
	fx_offer(fx, SFL_LANE_BULK, "c1", "c", "1");
	fx_offer_marker(fx, SFL_LANE_BULK, "b", "8");
	FX_WAIT_FOR(fx_counters(fx).commits >= 1);
	FX_ASSERT_COMMITTED(fx, "b", "7");
	FX_ASSERT_COMMITTED(fx, "a", NULL);
	FX_ASSERT_COMMITTED(fx, "c", NULL);
	/* c waits for the push slot, and so does the b marker queued behind c */
	g_assert_cmpuint(fx->sink->pushes->len, ==, 1);
	fx_advance(fx, 5 * G_USEC_PER_SEC);
	FX_WAIT_FOR(fx->sink->pushes->len == 3);
	FX_WAIT_FOR(fx_committed_is(fx, "a", "2") && fx_committed_is(fx, "c", "1") &&
		    fx_committed_is(fx, "b", "8"));
	g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, "a1"), ==, 1);
	g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, "c1"), ==, 1);
}

/* a failed commit is retried with backoff, merged with what was delivered meanwhile */
static void
test_commit_retry(Fixture *fx, gconstpointer data)
{
	TestFlakyStore *flaky = g_object_new(TEST_TYPE_FLAKY_STORE, NULL);
	SflPipelineCounters counters;
	g_autofree gchar *got = NULL;

	flaky->failures = 2;
	g_object_unref(fx->store);
	fx->store = SFL_CHECKPOINT_STORE(flaky);
	fx->config.max_entries = 1;
	fx_start(fx);
	fx_offer(fx, SFL_LANE_BULK, "a1", "k", "1");
	FX_WAIT_FOR(fx_counters(fx).commit_retries == 1);
	fx_offer(fx, SFL_LANE_BULK, "a2", "k", "2");
	FX_WAIT_FOR(fx_counters(fx).pushed_entries == 2);
	while (fx_counters(fx).commits == 0) {
		fx_advance(fx, G_USEC_PER_SEC / 10);
		/* let the worker thread answer */
		FX_WAIT_FOR(!sfl_pipeline_has_commit_in_flight(fx->pipeline));
	}
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.commit_retries, ==, 2);
	g_assert_cmpuint(counters.commits, ==, 1);
	g_assert_cmpuint(flaky->writes, ==, 1);
	got = test_flaky_store_get(flaky, "k");
	g_assert_cmpstr(got, ==, "2");
}

/* serial commits (backfill): the next push waits until the last commit landed, retries too */
static void
test_commit_serial(Fixture *fx, gconstpointer data)
{
	TestFlakyStore *flaky = g_object_new(TEST_TYPE_FLAKY_STORE, NULL);
	g_autofree gchar *got = NULL;

	flaky->failures = 2;
	g_object_unref(fx->store);
	fx->store = SFL_CHECKPOINT_STORE(flaky);
	fx->config.max_entries = 1;
	fx_start(fx);
	sfl_pipeline_set_serial_commits(fx->pipeline, TRUE);
	fx_offer(fx, SFL_LANE_BULK, "a1", "k", "1");
	fx_offer(fx, SFL_LANE_BULK, "a2", "k", "2");
	FX_WAIT_FOR(fx_counters(fx).commit_retries == 1);
	while (fx_counters(fx).commits == 0) {
		/* a2 is not pushed while a1's checkpoint is not in the store */
		g_assert_cmpuint(fx_counters(fx).pushed_entries, ==, 1);
		fx_advance(fx, G_USEC_PER_SEC / 10);
		FX_WAIT_FOR(!sfl_pipeline_has_commit_in_flight(fx->pipeline));
	}
	FX_WAIT_FOR(fx_counters(fx).commits == 2);
	g_assert_cmpuint(fx_counters(fx).pushed_entries, ==, 2);
	g_assert_cmpuint(fx_counters(fx).commit_retries, ==, 2);
	got = test_flaky_store_get(flaky, "k");
	g_assert_cmpstr(got, ==, "2");
}

/*
 * Issue 19 item 7: a store that keeps failing is visible. Every failed commit is counted by
 * store and reason, the first of a streak is a warning, then one summary a minute and a
 * recovery line; past service.unready_after_sink_failing, /readyz says so.
 */

/* the pipeline's warnings and messages, to check what an operator reads */
static GPtrArray *logged;

static GLogWriterOutput
fx_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	const gchar *domain = NULL;
	const gchar *message = NULL;

	for (gsize i = 0; i < n_fields; i++) {
		if (g_str_equal(fields[i].key, "GLIB_DOMAIN"))
			domain = fields[i].value;
		else if (g_str_equal(fields[i].key, "MESSAGE"))
			message = fields[i].value;
	}
	if ((level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE)) &&
	    g_strcmp0(domain, "SflPipeline") == 0 && message != NULL)
		g_ptr_array_add(logged, g_strdup(message));
	return g_log_writer_default(level, fields, n_fields, user_data);
}

static guint
fx_logged_count(const gchar *needle)
{
	guint n = 0;

	for (guint i = 0; i < logged->len; i++) {
		if (strstr(g_ptr_array_index(logged, i), needle) != NULL)
			n++;
	}
	return n;
}

static gdouble
fx_commit_failures(SflMetrics *metrics, const gchar *store, const gchar *reason)
{
	const gchar *names[] = { "store", "reason", NULL };
	const gchar *values[] = { store, reason, NULL };

	return sfl_series_get(sfl_metric_family_series(
		sfl_metrics_counter(metrics, "sf2loki_checkpoint_commit_failures", "", names),
		values));
}

static SflConfig *
fx_load_config(const gchar *service_yaml)
{
	g_autoptr(GError) error = NULL;
	gchar *envp[] = { NULL };
	g_autofree gchar *yaml =
		g_strdup_printf("salesforce: {client_id: c, username: u, private_key: k}\n"
				"sink: {loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}}\n"
				"service: %s\n",
				service_yaml);
	SflConfig *config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", envp, &error);

	g_assert_no_error(error);
	return config;
}

/* the /readyz reason the run would give now, from the pipeline's streaks and clock */
static gchar *
fx_degraded(Fixture *fx, SflRunObs *obs)
{
	return sfl_run_obs_degraded(obs, NULL, sfl_pipeline_get_failing_since(fx->pipeline),
				    sfl_pipeline_get_commit_failing_since(fx->pipeline),
				    sfl_clock_monotonic_usec(fx->clock));
}

/* moves the fake clock to @t, one second at a time, letting every retried commit finish */
static void
fx_advance_to(Fixture *fx, gint64 t)
{
	while (sfl_clock_monotonic_usec(fx->clock) < t) {
		fx_advance(fx, G_USEC_PER_SEC);
		FX_WAIT_FOR(!sfl_pipeline_has_commit_in_flight(fx->pipeline));
	}
}

static void
test_commit_failing_degrades(Fixture *fx, gconstpointer data)
{
	TestFlakyStore *flaky = g_object_new(TEST_TYPE_FLAKY_STORE, NULL);
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflConfig) config = fx_load_config("{unready_after_sink_failing: 30s}");
	g_autoptr(SflRunObs) obs = sfl_run_obs_new(config, metrics);
	g_autofree gchar *got = NULL;
	gchar *reason = NULL;
	gint64 t0 = 0;

	test_flaky_store_set_failures(flaky, G_MAXINT);
	g_object_unref(fx->store);
	fx->store = SFL_CHECKPOINT_STORE(flaky);
	fx->config.max_entries = 1;
	fx_start(fx);
	sfl_pipeline_set_store_label(fx->pipeline, "file", "/srv/sf2loki/state.json");
	sfl_pipeline_set_metrics(fx->pipeline, metrics);
	g_ptr_array_set_size(logged, 0);
	t0 = sfl_clock_monotonic_usec(fx->clock);
	fx_offer(fx, SFL_LANE_BULK, "a1", "k", "1");
	FX_WAIT_FOR(fx_counters(fx).commit_retries == 1);
	/* Loki took the data: only the commit fails, since the first failure */
	g_assert_cmpuint(fx_counters(fx).pushed_entries, ==, 1);
	g_assert_cmpint(sfl_pipeline_get_failing_since(fx->pipeline), ==, 0);
	g_assert_cmpint(sfl_pipeline_get_commit_failing_since(fx->pipeline), ==, t0);
	g_assert_cmpuint(fx_logged_count("checkpoint commit to the file store "
					 "/srv/sf2loki/state.json failed (io)"),
			 ==, 1);
	g_assert_null(fx_degraded(fx, obs));

	/* up to the threshold it is still ready; past it, degraded, with the duration */
	fx_advance_to(fx, t0 + 30 * G_USEC_PER_SEC);
	g_assert_null(fx_degraded(fx, obs));
	fx_advance_to(fx, t0 + 45 * G_USEC_PER_SEC);
	reason = fx_degraded(fx, obs);
	g_assert_cmpstr(reason, ==, "degraded: checkpoint commits failing for 45s");
	g_clear_pointer(&reason, g_free);
	fx_advance_to(fx, t0 + 185 * G_USEC_PER_SEC);
	reason = fx_degraded(fx, obs);
	g_assert_cmpstr(reason, ==, "degraded: checkpoint commits failing for 3m");
	g_clear_pointer(&reason, g_free);

	/* every failure counted as io; one first warning, at most one summary a minute */
	g_assert_cmpfloat(fx_commit_failures(metrics, "file", "io"), ==,
			  (gdouble)fx_counters(fx).commit_retries);
	g_assert_cmpuint(fx_counters(fx).commit_retries, >=, 4);
	g_assert_cmpuint(fx_logged_count("failed (io), retrying with backoff"), ==, 1);
	g_assert_cmpuint(fx_logged_count("still failing after"), >=, 1);
	g_assert_cmpuint(fx_logged_count("still failing after"), <=, 3);
	g_assert_cmpuint(fx_logged_count("recovered"), ==, 0);

	/* the store heals: the kept checkpoint lands at the next retry, ready again */
	test_flaky_store_set_failures(flaky, 0);
	while (fx_counters(fx).commits == 0)
		fx_advance_to(fx, sfl_clock_monotonic_usec(fx->clock) + G_USEC_PER_SEC);
	g_assert_cmpint(sfl_pipeline_get_commit_failing_since(fx->pipeline), ==, 0);
	g_assert_null(fx_degraded(fx, obs));
	g_assert_cmpuint(fx_logged_count("checkpoint commits to the file store "
					 "/srv/sf2loki/state.json recovered after "),
			 ==, 1);
	got = test_flaky_store_get(flaky, "k");
	g_assert_cmpstr(got, ==, "1");
}

/* each failure is counted under the reason its error code names */
static void
test_commit_failure_reasons(Fixture *fx, gconstpointer data)
{
	TestFlakyStore *flaky = g_object_new(TEST_TYPE_FLAKY_STORE, NULL);
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	const SflError codes[] = { SFL_ERROR_AUTH,	SFL_ERROR_CORRUPT,   SFL_ERROR_CONFLICT,
				   SFL_ERROR_TRANSIENT, SFL_ERROR_THROTTLED, SFL_ERROR_INTERNAL,
				   SFL_ERROR_AUTH };
	g_autofree gchar *text = NULL;

	g_array_append_vals(flaky->codes, codes, G_N_ELEMENTS(codes));
	g_object_unref(fx->store);
	fx->store = SFL_CHECKPOINT_STORE(flaky);
	fx->config.max_entries = 1;
	fx_start(fx);
	sfl_pipeline_set_store_label(fx->pipeline, "s3", "s3://bucket/sf2loki/state.json");
	sfl_pipeline_set_metrics(fx->pipeline, metrics);
	fx_offer(fx, SFL_LANE_BULK, "a1", "k", "1");
	while (fx_counters(fx).commits == 0)
		fx_advance_to(fx, sfl_clock_monotonic_usec(fx->clock) + G_USEC_PER_SEC);
	g_assert_cmpfloat(fx_commit_failures(metrics, "s3", "permission"), ==, 2);
	g_assert_cmpfloat(fx_commit_failures(metrics, "s3", "corrupt"), ==, 1);
	g_assert_cmpfloat(fx_commit_failures(metrics, "s3", "conflict"), ==, 1);
	/* an object store's TRANSIENT is a network or service hiccup, not a disk's I/O error */
	g_assert_cmpfloat(fx_commit_failures(metrics, "s3", "transient"), ==, 2);
	g_assert_cmpfloat(fx_commit_failures(metrics, "s3", "other"), ==, 1);
	g_assert_cmpfloat(fx_commit_failures(metrics, "s3", "io"), ==, 0);
	text = sfl_metrics_render_prometheus(metrics);
	g_assert_nonnull(
		strstr(text, "\n# TYPE sf2loki_checkpoint_commit_failures_total counter\n"));
	g_assert_nonnull(strstr(text, "\nsf2loki_checkpoint_commit_failures_total{store=\"s3\","
				      "reason=\"permission\"} 2\n"));
}

static gboolean
fx_epoch_is(gpointer user_data, guint64 *epoch)
{
	*epoch = *(const guint64 *)user_data;
	return TRUE;
}

static void
fx_store_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	gboolean *done = user_data;
	g_autoptr(GError) error = NULL;

	g_assert_true(sfl_checkpoint_store_commit_many_finish(SFL_CHECKPOINT_STORE(source), result,
							      &error));
	g_assert_no_error(error);
	*done = TRUE;
}

/* a fenced commit is counted (reason fenced) and demotes: it never degrades readiness */
static void
test_commit_fenced_counted(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflConfig) config = fx_load_config("{unready_after_sink_failing: 30s}");
	g_autoptr(SflRunObs) obs = sfl_run_obs_new(config, metrics);
	g_autoptr(SflCheckpointStore) leader = sfl_memory_store_new(fx->backing);
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	guint64 leader_epoch = 9;
	guint64 stale_epoch = 3;
	gboolean done = FALSE;

	/* a newer leader wrote epoch 9 */
	sfl_checkpoint_store_set_epoch(leader, fx_epoch_is, &leader_epoch, NULL);
	sfl_state_doc_set(doc, "k", "leader");
	sfl_checkpoint_store_commit_many_async(leader, doc, SFL_CHECKPOINT_STORE_NONE, NULL,
					       fx_store_cb, &done);
	FX_WAIT_FOR(done);
	sfl_checkpoint_store_set_epoch(fx->store, fx_epoch_is, &stale_epoch, NULL);
	fx->config.max_entries = 1;
	fx_start(fx);
	sfl_pipeline_set_store_label(fx->pipeline, "memory", NULL);
	sfl_pipeline_set_metrics(fx->pipeline, metrics);
	fx_offer(fx, SFL_LANE_BULK, "a1", "k", "stale");
	FX_WAIT_FOR(fx->fenced == 1);
	g_assert_cmpfloat(fx_commit_failures(metrics, "memory", "fenced"), ==, 1);
	g_assert_cmpint(sfl_pipeline_get_commit_failing_since(fx->pipeline), ==, 0);
	fx_advance(fx, 60 * G_USEC_PER_SEC);
	g_assert_null(fx_degraded(fx, obs));
	FX_ASSERT_COMMITTED(fx, "k", "leader");
}

/* --- retries -------------------------------------------------------------------------------- */

static void
test_retry_after(Fixture *fx, gconstpointer data)
{
	SflPipelineCounters counters;

	fx->config.max_entries = 1;
	fx_start(fx);
	sfl_test_sink_script(fx->sink, SFL_SINK_RETRY, 7 * G_USEC_PER_SEC);
	sfl_test_sink_script(fx->sink, SFL_SINK_RETRY, 600 * G_USEC_PER_SEC);
	fx_offer(fx, SFL_LANE_STREAMING, "x", "k", "1");
	FX_WAIT_FOR(fx->sink->pushes->len == 1);
	fx_advance(fx, 7 * G_USEC_PER_SEC - 1);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 1);
	fx_advance(fx, 1);
	FX_WAIT_FOR(fx->sink->pushes->len == 2);
	/* a Retry-After beyond 60 s is capped */
	fx_advance(fx, 60 * G_USEC_PER_SEC - 1);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 2);
	fx_advance(fx, 1);
	FX_WAIT_FOR(fx->sink->pushes->len == 3 && fx_counters(fx).commits == 1);
	FX_ASSERT_COMMITTED(fx, "k", "1");
	sfl_pipeline_get_counters(fx->pipeline, &counters);
	g_assert_cmpuint(counters.retries, ==, 2);
	g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, "x"), ==, 1);
}

static void
test_retry_backoff_pure(void)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(7);

	for (guint attempt = 0; attempt < 12; attempt++) {
		gint64 cap = MIN((gint64)G_USEC_PER_SEC << attempt, 60 * G_USEC_PER_SEC);
		gint64 max = 0;
		for (guint i = 0; i < 2000; i++) {
			gint64 d = sfl_pipeline_backoff_usec(rand, attempt, -1);
			g_assert_cmpint(d, >=, 0);
			g_assert_cmpint(d, <=, cap);
			max = MAX(max, d);
		}
		/* full jitter spreads over the whole range */
		g_assert_cmpint(max, >, cap * 9 / 10);
	}
	g_assert_cmpint(sfl_pipeline_backoff_usec(rand, 3, 2 * G_USEC_PER_SEC), ==,
			2 * G_USEC_PER_SEC);
	g_assert_cmpint(sfl_pipeline_backoff_usec(rand, 0, (gint64)3600 * G_USEC_PER_SEC), ==,
			60 * G_USEC_PER_SEC);
}

static void
test_retry_backoff(Fixture *fx, gconstpointer data)
{
	const guint n_retries = 12;
	const gint64 step = G_USEC_PER_SEC / 10;
	gint64 longest = 0;

	fx->config.max_entries = 1;
	fx_start(fx);
	for (guint i = 0; i < n_retries; i++)
		sfl_test_sink_script(fx->sink, SFL_SINK_RETRY, -1);
	fx_offer(fx, SFL_LANE_BULK, "x", "k", "1");
	FX_WAIT_FOR(fx->sink->pushes->len == 1);
	while (fx->sink->pushes->len < n_retries + 1) {
		guint before = fx->sink->pushes->len;
		fx_advance(fx, step);
		if (fx->sink->pushes->len > before) {
			gint64 gap =
				fx_push(fx, before)->at_usec - fx_push(fx, before - 1)->at_usec;
			gint64 cap =
				MIN((gint64)G_USEC_PER_SEC << (before - 1), 60 * G_USEC_PER_SEC);
			/* the timer is observed at step granularity */
			g_assert_cmpint(gap, <=, cap + step);
			longest = MAX(longest, gap);
		}
	}
	/* the delays grew well past the base */
	g_assert_cmpint(longest, >, 4 * G_USEC_PER_SEC);
	FX_WAIT_FOR(fx_counters(fx).commits == 1);
	g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, "x"), ==, 1);
}

/* --- rejections ----------------------------------------------------------------------------- */

static void
test_rejected_poison(Fixture *fx, gconstpointer data)
{
	const guint n = 1000;
	const guint poison = 537;
	SflPipelineCounters counters;

	fx->config.max_entries = 100;
	fx->config.queue_maxsize = 150;
	fx_start(fx);
	g_hash_table_insert(fx->sink->rejected, g_strdup("line-537"), g_strdup("bad_request"));
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *line = g_strdup_printf("line-%u", i);
		g_autofree gchar *key = g_strdup_printf("k%u", i % 7);
		g_autofree gchar *value = g_strdup_printf("%04u", i);
		g_ptr_array_add(fx->feed, fx_entry(fx, line, key, value));
	}
	fx->feed_lane = SFL_LANE_BULK;
	fx_feed_run(fx);
	g_assert_cmpuint(fx->feed_next, <, n);
	FX_WAIT_FOR(fx->feed_next == n);
	fx_advance(fx, G_USEC_PER_SEC);
	FX_WAIT_FOR(fx_counters(fx).pushed_entries == n - 1);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.dropped_bad_request, ==, 1);
	g_assert_cmpuint(counters.dropped_oversized_413, ==, 0);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *line = g_strdup_printf("line-%u", i);
		g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, line), ==, i == poison ? 0 : 1);
	}
	g_assert_cmpuint(fx->writable[SFL_LANE_BULK], >, 0);
	/* the last index of key k{r} is 994 + r, except k6 at 993 */
	FX_WAIT_FOR(fx_committed_is(fx, "k5", "0999"));
	for (guint k = 0; k < 7; k++) {
		g_autofree gchar *key = g_strdup_printf("k%u", k);
		g_autofree gchar *want = g_strdup_printf("%04u", k < 6 ? 994 + k : 993);
		FX_ASSERT_COMMITTED(fx, key, want);
	}
}

static void
test_rejected_413(Fixture *fx, gconstpointer data)
{
	SflPipelineCounters counters;

	fx->config.max_entries = 8;
	fx_start(fx);
	fx->sink->max_ok_len = 1;
	g_hash_table_insert(fx->sink->rejected, g_strdup("huge"), g_strdup("oversized_413"));
	for (guint i = 0; i < 8; i++) {
		g_autofree gchar *line = i == 5 ? g_strdup("huge") : g_strdup_printf("l%u", i);
		g_autofree gchar *value = g_strdup_printf("%u", i);
		fx_offer(fx, SFL_LANE_BULK, line, "k", value);
	}
	FX_WAIT_FOR(fx_counters(fx).pushed_entries == 7);
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.dropped_oversized_413, ==, 1);
	g_assert_cmpuint(counters.dropped_bad_request, ==, 0);
	/* 1 + 2 + 4 + 8 pushes: every split down to single entries */
	g_assert_cmpuint(fx->sink->pushes->len, ==, 15);
	for (guint i = 0; i < fx->sink->pushes->len; i++)
		g_assert_cmpuint(fx_push(fx, i)->lines->len, >=, 1);
	g_assert_cmpuint(fx_push(fx, 14)->lines->len, ==, 1);
	FX_WAIT_FOR(fx_committed_is(fx, "k", "7"));
}

/* SFL-0061: a drop is counted against the stream it belonged to, org empty without one */
static SflLabels *
fx_labels(Fixture *fx, const gchar *source, const gchar *event_type, const gchar *org)
{
	g_autoptr(GError) error = NULL;
	const SflLabelPair pairs[] = { { "event_type", event_type },
				       { "source", source },
				       { "org", org } };
	SflLabels *labels = sfl_labels_intern(fx->interner, pairs, org != NULL ? 3 : 2, &error);

	g_assert_no_error(error);
	return labels;
}

static gdouble
fx_dropped(SflMetrics *metrics, const gchar *reason, const gchar *source, const gchar *event_type,
	   const gchar *org)
{
	const gchar *names[] = { "reason", "source", "event_type", "org", NULL };
	const gchar *values[] = { reason, source, event_type, org, NULL };

	return sfl_series_get(sfl_metric_family_series(
		sfl_metrics_counter(metrics, "sf2loki_loki_entries_dropped", "", names), values));
}

static void
test_rejected_attributed(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflLabels) prod = fx_labels(fx, "eventlogfile", "API", "prod");
	g_autoptr(SflLabels) single = fx_labels(fx, "pubsub", "LoginEventStream", NULL);
	g_autofree gchar *text = NULL;
	const gchar *lines[] = { "ok1", "bad-prod", "ok2", "huge-single", "bad-prod-2" };
	SflLabels *labels[] = { prod, prod, single, single, prod };

	fx->config.max_entries = 5;
	fx_start(fx);
	sfl_pipeline_set_metrics(fx->pipeline, metrics);
	g_hash_table_insert(fx->sink->rejected, g_strdup("bad-prod"), g_strdup("bad_request"));
	g_hash_table_insert(fx->sink->rejected, g_strdup("bad-prod-2"), g_strdup("bad_request"));
	g_hash_table_insert(fx->sink->rejected, g_strdup("huge-single"), g_strdup("oversized_413"));
	for (guint i = 0; i < G_N_ELEMENTS(lines); i++) {
		g_autofree gchar *value = g_strdup_printf("%u", i);
		g_autoptr(SflEntry) entry =
			sfl_entry_new(1, labels[i], lines[i], -1, NULL, 0, "k", value);
		g_assert_true(sfl_pipeline_offer(fx->pipeline, SFL_LANE_BULK, entry));
	}
	FX_WAIT_FOR(fx_counters(fx).pushed_entries == 2);
	FX_WAIT_FOR(fx_committed_is(fx, "k", "4"));
	g_assert_cmpfloat(fx_dropped(metrics, "bad_request", "eventlogfile", "API", "prod"), ==, 2);
	g_assert_cmpfloat(fx_dropped(metrics, "oversized_413", "pubsub", "LoginEventStream", ""),
			  ==, 1);
	text = sfl_metrics_render_prometheus(metrics);
	g_assert_nonnull(strstr(text,
				"\nsf2loki_loki_entries_dropped_total{reason=\"bad_request\","
				"source=\"eventlogfile\",event_type=\"API\",org=\"prod\"} 2\n"));
	g_assert_nonnull(strstr(text,
				"\nsf2loki_loki_entries_dropped_total{reason=\"oversized_413\","
				"source=\"pubsub\",event_type=\"LoginEventStream\",org=\"\"} "
				"1\n"));
}

/* --- backpressure and lanes ----------------------------------------------------------------- */

static void
test_backpressure(Fixture *fx, gconstpointer data)
{
	const guint n = 60;
	SflPipelineCounters counters;
	guint64 cost;
	guint writable_stuck;

	fx->config.max_entries = 5;
	fx->config.queue_maxsize = 1000;
	fx->config.queue_max_bytes = 500;
	fx_start(fx);
	fx->sink->hold = TRUE;
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *line =
			g_strdup_printf("line-%03u-%s", i, "padding-padding-padding");
		g_autofree gchar *value = g_strdup_printf("%03u", i);
		g_ptr_array_add(fx->feed, fx_entry(fx, line, "k", value));
	}
	/* line + 64 + labels + checkpoint value, as the budget charges it */
	cost = strlen(((SflEntry *)fx->feed->pdata[0])->line) + 64 + strlen("job") +
	       strlen("test") + 3;
	fx->feed_lane = SFL_LANE_BULK;
	fx_feed_run(fx);
	FX_WAIT_FOR(fx->sink->held->len == 1);
	fx_feed_run(fx);
	sfl_test_drain(NULL);
	/* one batch in flight, one batch full and waiting, the FIFO at its byte budget */
	counters = fx_counters(fx);
	g_assert_cmpuint(fx->feed_next, <, n);
	writable_stuck = fx->writable[SFL_LANE_BULK];
	g_assert_false(
		sfl_pipeline_offer(fx->pipeline, SFL_LANE_BULK, fx->feed->pdata[fx->feed_next]));
	fx_advance(fx, 10 * G_USEC_PER_SEC);
	g_assert_cmpuint(fx->writable[SFL_LANE_BULK], ==, writable_stuck);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 1);
	g_assert_cmpuint(counters.queue_bytes[SFL_LANE_BULK], >=, 500);
	g_assert_cmpuint(counters.queue_bytes[SFL_LANE_BULK], <=, 500 + cost);
	g_assert_cmpuint(counters.queue_depth[SFL_LANE_BULK], ==, fx->feed_next - 10);
	/* the streaming lane is unaffected */
	fx_offer(fx, SFL_LANE_STREAMING, "live", NULL, NULL);
	/* the sink answers: the lane drains, the producer is told, and resumes */
	sfl_test_sink_release(fx->sink);
	FX_WAIT_FOR(fx->feed_next == n);
	FX_WAIT_FOR(fx_counters(fx).pushed_entries == n);
	g_assert_cmpuint(fx->writable[SFL_LANE_BULK], >, writable_stuck);
	for (guint i = 0; i < n; i++)
		g_assert_cmpuint(
			sfl_test_sink_accepted(fx->sink, ((SflEntry *)fx->feed->pdata[i])->line),
			==, 1);
	FX_WAIT_FOR(fx_committed_is(fx, "k", "059"));
	counters = fx_counters(fx);
	g_assert_cmpuint(counters.dropped_bad_request + counters.dropped_oversized_413 +
				 counters.dropped_other,
			 ==, 0);
}

/* a lane writer: logs itself each time its lane wakes it */
static void
lane_writer_woken(GObject *writer)
{
	g_ptr_array_add(g_object_get_data(writer, "log"), writer);
}

/* the lane wakes the writers registered with it, in order, without the writable callback's
 * help; one that left, or one of the other lane, is not woken */
static void
test_backpressure_lane_wakes_writers(Fixture *fx, gconstpointer data)
{
	g_autoptr(GPtrArray) log = g_ptr_array_new();
	g_autoptr(GObject) first = g_object_new(G_TYPE_OBJECT, NULL);
	g_autoptr(GObject) gone = g_object_new(G_TYPE_OBJECT, NULL);
	g_autoptr(GObject) second = g_object_new(G_TYPE_OBJECT, NULL);
	g_autoptr(GObject) other = g_object_new(G_TYPE_OBJECT, NULL);
	g_autoptr(SflLaneHandle) bulk = NULL;
	g_autoptr(SflLaneHandle) streaming = NULL;
	GObject *writers[] = { first, gone, second, other };
	guint taken = 0;

	fx->config.max_entries = 1;
	fx->config.queue_maxsize = 2;
	fx_start(fx);
	bulk = sfl_pipeline_get_lane(fx->pipeline, SFL_LANE_BULK);
	streaming = sfl_pipeline_get_lane(fx->pipeline, SFL_LANE_STREAMING);
	for (guint i = 0; i < G_N_ELEMENTS(writers); i++)
		g_object_set_data(writers[i], "log", log);
	sfl_lane_handle_add_writer(bulk, first, lane_writer_woken);
	sfl_lane_handle_add_writer(bulk, gone, lane_writer_woken);
	sfl_lane_handle_add_writer(bulk, second, lane_writer_woken);
	sfl_lane_handle_add_writer(streaming, other, lane_writer_woken);
	sfl_lane_handle_remove_writer(bulk, gone);

	g_assert_false(sfl_lane_handle_is_full(bulk));
	for (guint i = 0; i < 5; i++) {
		g_autofree gchar *line = g_strdup_printf("line-%u", i);
		g_autoptr(SflEntry) entry = fx_entry(fx, line, "k", "v");
		if (!sfl_lane_handle_offer(bulk, entry))
			break;
		taken++;
	}
	g_assert_cmpuint(taken, ==, 2);
	g_assert_true(sfl_lane_handle_is_full(bulk));
	g_assert_false(sfl_lane_handle_is_full(streaming));
	g_assert_cmpuint(log->len, ==, 0);

	FX_WAIT_FOR(log->len > 0);
	g_assert_cmpuint(log->len, ==, 2);
	g_assert_true(g_ptr_array_index(log, 0) == first);
	g_assert_true(g_ptr_array_index(log, 1) == second);
	g_assert_cmpuint(fx->writable[SFL_LANE_BULK], ==, 1);
	g_assert_cmpuint(fx->writable[SFL_LANE_STREAMING], ==, 0);
	g_assert_false(sfl_lane_handle_is_stopped(bulk));
	sfl_lane_handle_remove_writer(bulk, first);
	sfl_lane_handle_remove_writer(bulk, second);
	sfl_lane_handle_remove_writer(streaming, other);
}

static void
test_backpressure_huge_entry(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *huge = g_strnfill(10000, 'h');

	fx->config.max_entries = 1;
	fx->config.queue_max_bytes = 100;
	fx_start(fx);
	/* larger than the whole budget, and still admitted into an empty lane */
	fx_offer(fx, SFL_LANE_BULK, huge, "k", "1");
	FX_WAIT_FOR(fx_committed_is(fx, "k", "1"));
}

static void
test_lanes_independent(Fixture *fx, gconstpointer data)
{
	fx->config.max_entries = 1;
	fx_start(fx);
	fx->sink->hold_prefix = g_strdup("bulk");
	fx_offer(fx, SFL_LANE_BULK, "bulk-1", "elf", "1");
	fx_offer(fx, SFL_LANE_BULK, "bulk-2", "elf", "2");
	FX_WAIT_FOR(fx->sink->held->len == 1);
	for (guint i = 0; i < 5; i++) {
		g_autofree gchar *line = g_strdup_printf("live-%u", i);
		g_autofree gchar *value = g_strdup_printf("%u", i);
		fx_offer(fx, SFL_LANE_STREAMING, line, "topic", value);
	}
	FX_WAIT_FOR(fx_committed_is(fx, "topic", "4"));
	FX_ASSERT_COMMITTED(fx, "elf", NULL);
	g_assert_cmpuint(fx_counters(fx).queue_depth[SFL_LANE_BULK], <=, 1);
	sfl_test_sink_release(fx->sink);
	FX_WAIT_FOR(fx_committed_is(fx, "elf", "2"));
}

/* --- errors --------------------------------------------------------------------------------- */

static void
test_fenced(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflEntry) late = NULL;

	fx->config.max_entries = 1;
	fx_start(fx);
	fx->fence_open = FALSE;
	fx_offer(fx, SFL_LANE_STREAMING, "a", "k", "1");
	FX_WAIT_FOR(fx->fenced == 1);
	g_assert_true(sfl_pipeline_is_lane_stopped(fx->pipeline, SFL_LANE_STREAMING));
	g_assert_false(sfl_pipeline_is_lane_stopped(fx->pipeline, SFL_LANE_BULK));
	g_assert_cmpuint(fx->errors, ==, 0);
	g_assert_cmpuint(fx_writes(fx), ==, 0);
	late = fx_entry(fx, "b", "k", "2");
	g_assert_false(sfl_pipeline_offer(fx->pipeline, SFL_LANE_STREAMING, late));
	sfl_test_drain(NULL);
	/* a closed fence withholds the push itself: its commit could never land */
	g_assert_cmpuint(fx->sink->pushes->len, ==, 0);
}

/*
 * Found by the HA harness (tests/ha): a leader that lost the lease kept draining its queue to
 * Loki for up to shutdown_grace while the next leader sent the same lines. Once the fence
 * closes, nothing more is pushed, neither new batches nor what a stop would drain.
 */
static void
test_fenced_no_push_after_loss(Fixture *fx, gconstpointer data)
{
	fx->config.max_entries = 1;
	fx_start(fx);
	fx_offer(fx, SFL_LANE_BULK, "a", "k", "1");
	FX_WAIT_FOR(fx_committed_is(fx, "k", "1"));
	g_assert_cmpuint(fx->sink->pushes->len, ==, 1);
	/* a push is in flight and more is queued when the lease is lost */
	fx->sink->hold = TRUE;
	fx_offer(fx, SFL_LANE_BULK, "b", "k", "2");
	fx_offer(fx, SFL_LANE_BULK, "c", "k", "3");
	fx_offer(fx, SFL_LANE_BULK, "d", "k", "4");
	sfl_test_drain(NULL);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 2);
	fx->fence_open = FALSE;
	sfl_pipeline_stop_async(fx->pipeline, 30 * G_USEC_PER_SEC, NULL, fx_stop_cb, fx);
	sfl_test_sink_release(fx->sink);
	FX_WAIT_FOR(fx->stopped);
	/* "b" was on the wire already; "c" and "d" never left */
	g_assert_cmpuint(fx->sink->pushes->len, ==, 2);
	FX_ASSERT_COMMITTED(fx, "k", "1");
	g_assert_cmpuint(fx_counters(fx).abandoned_entries, >=, 1);
}

/*
 * Found by the HA harness (tests/ha): a push backing off when the lease was lost fired after
 * this replica had won the lease again; the new term's open fence let the old run's push and
 * its older checkpoint through, rewinding what another leader had committed in between.
 */
static void
test_no_late_push_into_next_term(Fixture *fx, gconstpointer data)
{
	fx->config.max_entries = 1;
	fx_start(fx);
	fx_offer(fx, SFL_LANE_BULK, "a", "k", "1");
	FX_WAIT_FOR(fx_committed_is(fx, "k", "1"));
	/* the next push fails and waits for its retry */
	sfl_test_sink_script(fx->sink, SFL_SINK_RETRY, -1);
	fx_offer(fx, SFL_LANE_BULK, "b", "k", "2");
	FX_WAIT_FOR(fx->sink->pushes->len == 2);
	/* the term ends, the run is stopped, and this replica leads again before the retry */
	fx->fence_open = FALSE;
	sfl_pipeline_stop_async(fx->pipeline, 30 * G_USEC_PER_SEC, NULL, fx_stop_cb, fx);
	sfl_test_drain(NULL);
	fx->fence_open = TRUE;
	fx_advance(fx, 60 * G_USEC_PER_SEC);
	FX_WAIT_FOR(fx->stopped);
	fx_advance(fx, 60 * G_USEC_PER_SEC);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 2);
	FX_ASSERT_COMMITTED(fx, "k", "1");
	g_assert_cmpuint(fx_counters(fx).abandoned_entries, ==, 1);
}

static void
test_fatal(Fixture *fx, gconstpointer data)
{
	fx->config.max_entries = 1;
	fx_start(fx);
	sfl_test_sink_script(fx->sink, SFL_SINK_FATAL, -1);
	fx_offer(fx, SFL_LANE_BULK, "a", "k", "1");
	FX_WAIT_FOR(fx->errors == 1);
	g_assert_true(sfl_pipeline_is_lane_stopped(fx->pipeline, SFL_LANE_BULK));
	g_assert_cmpuint(fx_writes(fx), ==, 0);
	/* the other lane keeps working */
	fx_offer(fx, SFL_LANE_STREAMING, "b", "t", "1");
	fx_advance(fx, G_USEC_PER_SEC);
	FX_WAIT_FOR(fx_committed_is(fx, "t", "1"));
}

/* --- shutdown ------------------------------------------------------------------------------- */

static void
test_shutdown_drain(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflEntry) late = NULL;

	fx_start(fx);
	fx_offer(fx, SFL_LANE_BULK, "a", "k", "1");
	fx_offer(fx, SFL_LANE_STREAMING, "b", "t", "1");
	fx_offer_marker(fx, SFL_LANE_BULK, "k", "2");
	sfl_test_drain(NULL);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 0);
	sfl_pipeline_stop_async(fx->pipeline, 30 * G_USEC_PER_SEC, NULL, fx_stop_cb, fx);
	late = fx_entry(fx, "c", "k", "3");
	g_assert_false(sfl_pipeline_offer(fx->pipeline, SFL_LANE_BULK, late));
	/* flushed at once, without waiting for the interval */
	FX_WAIT_FOR(fx->stopped);
	g_assert_true(fx->stop_ok);
	FX_ASSERT_COMMITTED(fx, "k", "2");
	FX_ASSERT_COMMITTED(fx, "t", "1");
	g_assert_cmpuint(fx_counters(fx).abandoned_entries, ==, 0);
}

/* the daemon drops its last reference from the stop callback: the pipeline must cope */
static void
fx_stop_release_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Fixture *fx = user_data;

	fx->stop_ok = sfl_pipeline_stop_finish(SFL_PIPELINE(source), result, NULL);
	fx->stopped = TRUE;
	g_object_unref(source);
}

static void
test_shutdown_release_in_callback(Fixture *fx, gconstpointer data)
{
	SflPipeline *owned;

	/* an idle pipeline finishes its stop while the lanes are being pumped */
	fx_start(fx);
	sfl_test_drain(NULL);
	/* hand the fixture's reference to the callback, as sf2loki run does */
	owned = g_steal_pointer(&fx->pipeline);
	sfl_pipeline_stop_async(owned, 30 * G_USEC_PER_SEC, NULL, fx_stop_release_cb, fx);
	FX_WAIT_FOR(fx->stopped);
	sfl_test_drain(NULL);
	g_assert_true(fx->stop_ok);
}

/*
 * SFL-0002: a's batch keeps failing until the grace period ends and is abandoned. During the
 * drain a later marker of a is flushed; it must not commit (it would skip a1), while b's
 * marker does. A late OK for the abandoned push changes nothing.
 */
static void
test_shutdown_leapfrog(Fixture *fx, gconstpointer data)
{
	fx->config.max_entries = 1;
	fx_start(fx);
	g_hash_table_add(fx->sink->retried, g_strdup("a1"));
	fx_offer(fx, SFL_LANE_BULK, "a1", "a", "1");
	FX_WAIT_FOR(fx->sink->pushes->len == 1);
	fx_offer_marker(fx, SFL_LANE_BULK, "a", "2");
	fx_offer_marker(fx, SFL_LANE_BULK, "b", "5");
	sfl_pipeline_stop_async(fx->pipeline, 10 * G_USEC_PER_SEC, NULL, fx_stop_cb, fx);
	FX_WAIT_FOR(fx_committed_is(fx, "b", "5"));
	FX_ASSERT_COMMITTED(fx, "a", NULL);
	g_assert_false(fx->stopped);
	/* still retrying during the grace period */
	fx_advance(fx, 5 * G_USEC_PER_SEC);
	g_assert_cmpuint(fx->sink->pushes->len, >, 1);
	/* the last retry is in flight when the grace period ends */
	g_hash_table_remove(fx->sink->retried, "a1");
	fx->sink->hold = TRUE;
	fx->sink->late_ok = TRUE;
	while (fx->sink->held->len == 0)
		fx_advance(fx, G_USEC_PER_SEC / 10);
	fx_advance(fx, 5 * G_USEC_PER_SEC);
	FX_WAIT_FOR(fx->stopped);
	g_assert_true(fx->stop_ok);
	g_assert_cmpuint(fx_counters(fx).abandoned_entries, ==, 1);
	sfl_test_sink_release(fx->sink);
	sfl_test_drain(NULL);
	g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, "a1"), ==, 1);
	FX_ASSERT_COMMITTED(fx, "a", NULL);
	FX_ASSERT_COMMITTED(fx, "b", "5");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* the pipeline warns about drops, stops and abandonment: part of these contracts */
	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	logged = g_ptr_array_new_with_free_func(g_free);
	g_log_set_writer_func(fx_log_writer, NULL, NULL);

#define ADD(path, func) g_test_add(path, Fixture, NULL, fx_setup, func, fx_teardown)
	ADD("/sfl/pipeline/batch/count", test_batch_count);
	ADD("/sfl/pipeline/batch/bytes", test_batch_bytes);
	ADD("/sfl/pipeline/batch/timer", test_batch_timer);
	ADD("/sfl/pipeline/batch/line-cap", test_batch_line_cap);
	ADD("/sfl/pipeline/failing-streak", test_failing_streak);
	ADD("/sfl/pipeline/commit/after-push", test_commit_after_push);
	ADD("/sfl/pipeline/commit/markers-alone", test_commit_markers_alone);
	ADD("/sfl/pipeline/commit/key-order", test_commit_key_order);
	ADD("/sfl/pipeline/commit/retry", test_commit_retry);
	ADD("/sfl/pipeline/commit/serial", test_commit_serial);
	ADD("/sfl/pipeline/commit/failing-degrades", test_commit_failing_degrades);
	ADD("/sfl/pipeline/commit/failure-reasons", test_commit_failure_reasons);
	ADD("/sfl/pipeline/commit/fenced-counted", test_commit_fenced_counted);
	ADD("/sfl/pipeline/retry/retry-after", test_retry_after);
	g_test_add_func("/sfl/pipeline/retry/backoff-pure", test_retry_backoff_pure);
	ADD("/sfl/pipeline/retry/backoff", test_retry_backoff);
	ADD("/sfl/pipeline/rejected/poison", test_rejected_poison);
	ADD("/sfl/pipeline/rejected/413", test_rejected_413);
	ADD("/sfl/pipeline/rejected/attributed", test_rejected_attributed);
	ADD("/sfl/pipeline/backpressure/full", test_backpressure);
	ADD("/sfl/pipeline/backpressure/huge-entry", test_backpressure_huge_entry);
	ADD("/sfl/pipeline/backpressure/lane-wakes-writers", test_backpressure_lane_wakes_writers);
	ADD("/sfl/pipeline/lanes/independent", test_lanes_independent);
	ADD("/sfl/pipeline/errors/fenced", test_fenced);
	ADD("/sfl/pipeline/errors/fenced-no-push-after-loss", test_fenced_no_push_after_loss);
	ADD("/sfl/pipeline/errors/no-late-push-into-next-term", test_no_late_push_into_next_term);
	ADD("/sfl/pipeline/errors/fatal", test_fatal);
	ADD("/sfl/pipeline/shutdown/drain", test_shutdown_drain);
	ADD("/sfl/pipeline/shutdown/leapfrog", test_shutdown_leapfrog);
	ADD("/sfl/pipeline/shutdown/release-in-callback", test_shutdown_release_in_callback);
#undef ADD
	return g_test_run();
}
