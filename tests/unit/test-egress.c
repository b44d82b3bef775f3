/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestEgress"

#include "config.h"

#include <glib/gstdio.h>

#include "sfl-egress.h"
#include "sfl-error.h"
#include "sfl-memory-store.h"
#include "sfl-pipeline-private.h"
#include "sfl-pipeline.h"
#include "sfl-test-coordinator.h"
#include "sfl-test-sink.h"

/*
 * The egress governor (docs/internals/pipeline.md, "Egress governor") on the fake clock: first on
 * its own, driving admissions by hand, then inside a pipeline with the fake sink of
 * tests/common/sfl-test-sink.h, unscripted so it accepts everything. Time moves only when a test
 * advances the clock. Warnings and errors are part of the contract here: a log writer records them,
 * and each test asserts the ones it expects.
 */

/* 2023-11-14 22:13:20 UTC: midnight is 6400 s away */
#define T0_WALL_SEC G_GINT64_CONSTANT(1700000000)
#define TO_MIDNIGHT ((gint64)6400 * G_USEC_PER_SEC)
#define TODAY	    "2023-11-14"
#define TOMORROW    "2023-11-15"
#define SEC	    ((gint64)G_USEC_PER_SEC)

/* --- recorded warnings and errors ----------------------------------------------------------- */

static GPtrArray *logged; /* "W <message>" or "E <message>" */

static GLogWriterOutput
test_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	if (!(level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR))) {
		/* TEST_DEBUG=1 G_MESSAGES_DEBUG=all shows the governor's reasoning */
		if (g_getenv("TEST_DEBUG") != NULL)
			g_log_writer_default(level, fields, n_fields, user_data);
		return G_LOG_WRITER_HANDLED;
	}
	for (gsize i = 0; i < n_fields; i++) {
		if (g_str_equal(fields[i].key, "MESSAGE")) {
			gchar *line =
				g_strdup_printf("%s %s", level & G_LOG_LEVEL_WARNING ? "W" : "E",
						(const gchar *)fields[i].value);
			/* on stderr too: a failing test shows what was logged */
			g_printerr("# %s\n", line);
			g_ptr_array_add(logged, line);
		}
	}
	return G_LOG_WRITER_HANDLED;
}

/* how many recorded lines start with @prefix ("W egress: …") and contain @needle */
static guint
logged_count(const gchar *prefix, const gchar *needle)
{
	guint n = 0;

	for (guint i = 0; i < logged->len; i++) {
		const gchar *line = logged->pdata[i];
		if (g_str_has_prefix(line, prefix) && (needle == NULL || strstr(line, needle)))
			n++;
	}
	return n;
}

/* --- fixture -------------------------------------------------------------------------------- */

typedef struct {
	SflClock *clock;
	SflMemoryBacking *backing;
	SflCheckpointStore *store;
	SflMetrics *metrics;
	SflLokiEgressConfig config;
	SflEgress *egress;
	/* the pipeline tests */
	SflTestSink *sink;
	SflLabelsInterner *interner;
	SflLabels *labels;
	SflLokiBatchConfig batch;
	SflPipeline *pipeline;
	GPtrArray *commits; /* SflStateDoc, what each commit wrote */
	gboolean stopped;
} Fixture;

static void
fx_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	SflLabelPair pair = { "job", "test" };

	g_ptr_array_set_size(logged, 0);
	fx->clock = sfl_fake_clock_new(T0_WALL_SEC * G_USEC_PER_SEC);
	fx->backing = sfl_memory_backing_new();
	fx->store = sfl_memory_store_new(fx->backing);
	fx->metrics = sfl_metrics_new();
	fx->config.budget_action = SFL_BUDGET_ACTION_PAUSE;
	fx->sink = sfl_test_sink_new(fx->clock);
	fx->interner = sfl_labels_interner_new();
	fx->labels = sfl_labels_intern(fx->interner, &pair, 1, &error);
	g_assert_no_error(error);
	fx->batch.max_entries = 1000;
	fx->batch.max_bytes = 1 << 20;
	fx->batch.flush_interval = SEC;
	fx->batch.queue_maxsize = 10000;
	fx->commits = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_state_doc_free);
}

#define FX_WAIT_FOR(cond) SFL_TEST_ITERATE_UNTIL(cond)

static void
fx_advance(Fixture *fx, gint64 usec)
{
	sfl_fake_clock_advance(fx->clock, usec);
	sfl_test_drain(NULL);
}

static void
fx_teardown(Fixture *fx, gconstpointer data)
{
	sfl_test_drain(NULL);
	if (fx->pipeline != NULL) {
		gpointer weak = fx->pipeline;
		g_object_add_weak_pointer(G_OBJECT(fx->pipeline), &weak);
		g_clear_object(&fx->pipeline);
		FX_WAIT_FOR(weak == NULL);
	}
	if (fx->egress != NULL) {
		gpointer weak = fx->egress;
		g_object_add_weak_pointer(G_OBJECT(fx->egress), &weak);
		g_clear_object(&fx->egress);
		/* a pending load holds the governor until it lands */
		FX_WAIT_FOR(weak == NULL);
	}
	g_ptr_array_unref(fx->commits);
	sfl_labels_unref(fx->labels);
	sfl_labels_interner_unref(fx->interner);
	g_object_unref(fx->sink);
	g_object_unref(fx->store);
	sfl_memory_backing_unref(fx->backing);
	sfl_metrics_unref(fx->metrics);
	sfl_clock_unref(fx->clock);
}

static void
fx_egress(Fixture *fx)
{
	fx->egress = sfl_egress_new(&fx->config, fx->clock);
	sfl_egress_set_metrics(fx->egress, fx->metrics);
}

static gdouble
fx_gauge(Fixture *fx, const gchar *name)
{
	return sfl_series_get(
		sfl_metric_family_series(sfl_metrics_gauge(fx->metrics, name, NULL, NULL), NULL));
}

/* --- admissions by hand --------------------------------------------------------------------- */

typedef struct {
	SflClock *clock;
	gboolean done;
	gboolean ok;
	SflEgressVerdict verdict;
	GError *error;
	gint64 at_usec; /* fake monotonic time of the completion */
} Admit;

static void
admit_free(Admit *a)
{
	g_clear_error(&a->error);
	g_free(a);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Admit, admit_free)

static void
admit_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Admit *a = user_data;

	a->ok = sfl_egress_admit_finish(SFL_EGRESS(source), result, &a->verdict, &a->error);
	a->at_usec = sfl_clock_monotonic_usec(a->clock);
	a->done = TRUE;
}

static Admit *
fx_admit(Fixture *fx, guint64 lines, guint64 bytes, SflEgressAdmitFlags flags,
	 GCancellable *cancellable)
{
	Admit *a = g_new0(Admit, 1);

	a->clock = fx->clock;
	sfl_egress_admit_async(fx->egress, lines, bytes, flags, cancellable, admit_cb, a);
	sfl_test_drain(NULL);
	return a;
}

#define ASSERT_VERDICT(a, v)                                                                       \
	G_STMT_START                                                                               \
	{                                                                                          \
		g_assert_true((a)->done);                                                          \
		g_assert_no_error((a)->error);                                                     \
		g_assert_true((a)->ok);                                                            \
		g_assert_cmpint((a)->verdict, ==, (v));                                            \
	}                                                                                          \
	G_STMT_END

/* the line bucket: the next batch waits exactly its shortfall */
static void
test_rate_lines_shortfall(Fixture *fx, gconstpointer data)
{
	g_autoptr(Admit) first = NULL;
	g_autoptr(Admit) second = NULL;

	fx->config.max_lines_per_second = 10;
	fx_egress(fx);
	/* the bucket starts full: one second's worth goes at once */
	first = fx_admit(fx, 10, 1000, 0, NULL);
	ASSERT_VERDICT(first, SFL_EGRESS_ADMITTED);
	/* empty now: 5 lines need half a second of refill */
	second = fx_admit(fx, 5, 1000, 0, NULL);
	g_assert_false(second->done);
	fx_advance(fx, SEC / 2 - 1);
	g_assert_false(second->done);
	fx_advance(fx, 1);
	ASSERT_VERDICT(second, SFL_EGRESS_ADMITTED);
	g_assert_false(sfl_egress_is_paused(fx->egress));
}

/* both buckets: the larger shortfall wins */
static void
test_rate_larger_shortfall(Fixture *fx, gconstpointer data)
{
	g_autoptr(Admit) first = NULL;
	g_autoptr(Admit) second = NULL;

	fx->config.max_lines_per_second = 100;
	fx->config.max_bytes_per_second = 1000;
	fx_egress(fx);
	first = fx_admit(fx, 100, 1000, 0, NULL);
	ASSERT_VERDICT(first, SFL_EGRESS_ADMITTED);
	/* lines lack 0.1 s, bytes 0.5 s */
	second = fx_admit(fx, 10, 500, 0, NULL);
	fx_advance(fx, SEC / 10);
	g_assert_false(second->done);
	fx_advance(fx, SEC / 2 - SEC / 10 - 1);
	g_assert_false(second->done);
	fx_advance(fx, 1);
	ASSERT_VERDICT(second, SFL_EGRESS_ADMITTED);
}

/* a batch larger than the capacity waits at most one second, then leaves a debt */
static void
test_rate_over_capacity(Fixture *fx, gconstpointer data)
{
	g_autoptr(Admit) drain = NULL;
	g_autoptr(Admit) big = NULL;
	g_autoptr(Admit) next = NULL;

	fx->config.max_bytes_per_second = 1000;
	fx_egress(fx);
	drain = fx_admit(fx, 1, 1000, 0, NULL);
	ASSERT_VERDICT(drain, SFL_EGRESS_ADMITTED);
	big = fx_admit(fx, 1, 5000, 0, NULL);
	fx_advance(fx, SEC - 1);
	g_assert_false(big->done);
	fx_advance(fx, 1);
	ASSERT_VERDICT(big, SFL_EGRESS_ADMITTED);
	/* the full 5000 bytes were taken: -4000, so 1000 more bytes wait 5 s */
	next = fx_admit(fx, 1, 1000, 0, NULL);
	fx_advance(fx, 5 * SEC - 1);
	g_assert_false(next->done);
	fx_advance(fx, 1);
	ASSERT_VERDICT(next, SFL_EGRESS_ADMITTED);
}

/* an idle bucket refills to one second's worth, no more */
static void
test_rate_capacity_capped(Fixture *fx, gconstpointer data)
{
	g_autoptr(Admit) full = NULL;
	g_autoptr(Admit) one = NULL;

	fx->config.max_bytes_per_second = 1000;
	fx_egress(fx);
	fx_advance(fx, 10 * SEC);
	full = fx_admit(fx, 1, 1000, 0, NULL);
	ASSERT_VERDICT(full, SFL_EGRESS_ADMITTED);
	one = fx_admit(fx, 1, 1, 0, NULL);
	g_assert_false(one->done);
	fx_advance(fx, 1000);
	ASSERT_VERDICT(one, SFL_EGRESS_ADMITTED);
}

/* drop mode: refused batches, a warning at most once a minute, the 80 % warning once a day */
static void
test_budget_drop(Fixture *fx, gconstpointer data)
{
	g_autoptr(Admit) fits = NULL;
	g_autoptr(Admit) over = NULL;
	g_autoptr(Admit) again = NULL;
	g_autoptr(Admit) later = NULL;
	g_autofree gchar *persisted = NULL;
	g_autofree gchar *more = NULL;

	fx->config.daily_byte_budget = 1000;
	fx->config.budget_action = SFL_BUDGET_ACTION_DROP;
	fx_egress(fx);
	persisted = sfl_egress_record(fx->egress, 900);
	g_assert_cmpstr(persisted, ==, "{\"date\": \"" TODAY "\", \"bytes\": 900}");
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_budget_used_bytes"), ==, 900);
	g_assert_cmpuint(logged_count("W egress:", "at least 80 %"), ==, 1);
	more = sfl_egress_record(fx->egress, 0);
	g_assert_cmpuint(logged_count("W egress:", "at least 80 %"), ==, 1);

	/* exactly up to the budget is fine */
	fits = fx_admit(fx, 1, 100, 0, NULL);
	ASSERT_VERDICT(fits, SFL_EGRESS_ADMITTED);
	over = fx_admit(fx, 1, 101, 0, NULL);
	ASSERT_VERDICT(over, SFL_EGRESS_DROP);
	g_assert_cmpuint(logged_count("W egress:", "dropping batches"), ==, 1);
	again = fx_admit(fx, 1, 101, 0, NULL);
	ASSERT_VERDICT(again, SFL_EGRESS_DROP);
	g_assert_cmpuint(logged_count("W egress:", "dropping batches"), ==, 1);
	fx_advance(fx, 61 * SEC);
	later = fx_admit(fx, 1, 101, 0, NULL);
	ASSERT_VERDICT(later, SFL_EGRESS_DROP);
	g_assert_cmpuint(logged_count("W egress:", "dropping batches"), ==, 2);
	g_assert_cmpuint(logged_count("W egress:", "2 batch(es) dropped since"), ==, 1);
	/* drop mode never pauses, so readiness never degrades */
	g_assert_false(sfl_egress_is_paused(fx->egress));
	g_assert_null(sfl_egress_dup_degraded(fx->egress));
	g_assert_cmpuint(logged_count("E ", NULL), ==, 0);
}

/* SFL-0004: two paused waiters (one per lane) both wake at the UTC rollover */
static void
test_budget_pause_both_waiters(Fixture *fx, gconstpointer data)
{
	g_autoptr(Admit) streaming = NULL;
	g_autoptr(Admit) bulk = NULL;
	g_autofree gchar *persisted = NULL;
	g_autofree gchar *degraded = NULL;
	g_autofree gchar *after = NULL;
	SflEgressStatus status;

	fx->config.daily_byte_budget = 1000;
	fx_egress(fx);
	persisted = sfl_egress_record(fx->egress, 1000);
	streaming = fx_admit(fx, 1, 10, 0, NULL);
	bulk = fx_admit(fx, 1, 10, 0, NULL);
	g_assert_false(streaming->done);
	g_assert_false(bulk->done);
	g_assert_true(sfl_egress_is_paused(fx->egress));
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_paused"), ==, 1);
	degraded = sfl_egress_dup_degraded(fx->egress);
	g_assert_cmpstr(degraded, ==,
			"degraded: daily byte budget exhausted, pushes paused until " TOMORROW);
	/* one ERROR a day, however many waiters pause */
	g_assert_cmpuint(logged_count("E egress:", "paused until " TOMORROW), ==, 1);

	fx_advance(fx, TO_MIDNIGHT - 1);
	g_assert_false(streaming->done);
	g_assert_false(bulk->done);
	fx_advance(fx, 1);
	ASSERT_VERDICT(streaming, SFL_EGRESS_ADMITTED);
	ASSERT_VERDICT(bulk, SFL_EGRESS_ADMITTED);
	g_assert_false(sfl_egress_is_paused(fx->egress));
	g_assert_null(sfl_egress_dup_degraded(fx->egress));
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_paused"), ==, 0);
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_budget_used_bytes"), ==, 0);
	sfl_egress_get_status(fx->egress, &status);
	g_assert_cmpstr(status.date, ==, TOMORROW);
	g_assert_cmpuint(status.used_bytes, ==, 0);
	after = sfl_egress_dup_persisted(fx->egress);
	g_assert_cmpstr(after, ==, "{\"date\": \"" TOMORROW "\", \"bytes\": 0}");
	g_assert_cmpuint(logged_count("E ", NULL), ==, 1);
}

/* a wall clock stepped back while paused: the waiter wakes, sees the same day, sleeps again */
static void
test_budget_pause_wall_stepped_back(Fixture *fx, gconstpointer data)
{
	g_autoptr(Admit) a = NULL;
	g_autofree gchar *persisted = NULL;

	fx->config.daily_byte_budget = 1000;
	fx_egress(fx);
	persisted = sfl_egress_record(fx->egress, 1000);
	a = fx_admit(fx, 1, 1, 0, NULL);
	sfl_fake_clock_jump_wall(fx->clock, -3600 * SEC);
	fx_advance(fx, TO_MIDNIGHT);
	g_assert_false(a->done);
	g_assert_true(sfl_egress_is_paused(fx->egress));
	fx_advance(fx, 3600 * SEC);
	ASSERT_VERDICT(a, SFL_EGRESS_ADMITTED);
	g_assert_false(sfl_egress_is_paused(fx->egress));
}

/* a stopping caller does not wait for midnight, and its leaving clears the pause */
static void
test_budget_pause_stop(Fixture *fx, gconstpointer data)
{
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	g_autoptr(GCancellable) other = g_cancellable_new();
	g_autoptr(Admit) paused = NULL;
	g_autoptr(Admit) stopping = NULL;
	g_autoptr(Admit) cancelled = NULL;
	g_autofree gchar *persisted = NULL;

	fx->config.daily_byte_budget = 1000;
	fx_egress(fx);
	persisted = sfl_egress_record(fx->egress, 1000);
	/* already stopping: told at once */
	stopping = fx_admit(fx, 1, 1, SFL_EGRESS_ADMIT_NO_PAUSE, NULL);
	ASSERT_VERDICT(stopping, SFL_EGRESS_PAUSED);
	g_assert_false(sfl_egress_is_paused(fx->egress));

	paused = fx_admit(fx, 1, 1, 0, cancellable);
	cancelled = fx_admit(fx, 1, 1, 0, other);
	g_assert_true(sfl_egress_is_paused(fx->egress));
	/* only the stopping caller's admissions are released */
	sfl_egress_stop_waiting(fx->egress, cancellable);
	sfl_test_drain(NULL);
	ASSERT_VERDICT(paused, SFL_EGRESS_PAUSED);
	g_assert_false(cancelled->done);
	g_assert_true(sfl_egress_is_paused(fx->egress));
	/* a cancelled wait ends with CANCELLED; the last paused waiter gone clears the pause */
	g_cancellable_cancel(other);
	sfl_test_drain(NULL);
	g_assert_true(cancelled->done);
	g_assert_false(cancelled->ok);
	g_assert_error(cancelled->error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_assert_false(sfl_egress_is_paused(fx->egress));
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_paused"), ==, 0);
}

/* --- today's count from the store ----------------------------------------------------------- */

static void
fx_commit_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	gboolean *done = user_data;
	g_autoptr(GError) error = NULL;

	g_assert_true(sfl_checkpoint_store_commit_many_finish(SFL_CHECKPOINT_STORE(source), result,
							      &error));
	g_assert_no_error(error);
	*done = TRUE;
}

static void
fx_seed(Fixture *fx, const gchar *value)
{
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	gboolean done = FALSE;

	sfl_state_doc_set(doc, SFL_EGRESS_BUDGET_KEY, value);
	sfl_checkpoint_store_commit_many_async(fx->store, doc, SFL_CHECKPOINT_STORE_NONE, NULL,
					       fx_commit_cb, &done);
	FX_WAIT_FOR(done);
}

typedef struct {
	const gchar *stored; /* NULL: absent */
	guint64 used;	     /* expected after the load */
	gboolean warns;
} LoadCase;

static const LoadCase load_same_day = { "{\"date\": \"" TODAY "\", \"bytes\": 950}", 950, FALSE };
static const LoadCase load_other_day = { "{\"date\": \"2023-11-13\", \"bytes\": 950}", 0, FALSE };
static const LoadCase load_corrupt = { "{\"date\": \"" TODAY "\", \"bytes\": \"lots\"}", 0, TRUE };
static const LoadCase load_not_json = { "950", 0, TRUE };
static const LoadCase load_absent = { NULL, 0, FALSE };

/* the count is loaded when a run begins, and admissions wait for it */
static void
test_load(Fixture *fx, gconstpointer data)
{
	const LoadCase *c = data;
	g_autoptr(Admit) a = NULL;
	SflEgressStatus status;

	if (c->stored != NULL)
		fx_seed(fx, c->stored);
	fx->config.daily_byte_budget = 1000;
	fx->config.budget_action = SFL_BUDGET_ACTION_DROP;
	fx_egress(fx);
	sfl_egress_begin(fx->egress, fx->store);
	/* asked before the store answered: decided on the loaded count, not on 0 */
	a = g_new0(Admit, 1);
	a->clock = fx->clock;
	sfl_egress_admit_async(fx->egress, 1, 100, 0, NULL, admit_cb, a);
	FX_WAIT_FOR(a->done);
	ASSERT_VERDICT(a, c->used + 100 > 1000 ? SFL_EGRESS_DROP : SFL_EGRESS_ADMITTED);
	sfl_egress_get_status(fx->egress, &status);
	g_assert_true(status.budget_enabled);
	g_assert_cmpuint(status.used_bytes, ==, c->used);
	g_assert_cmpstr(status.date, ==, TODAY);
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_budget_used_bytes"), ==, (gdouble)c->used);
	g_assert_cmpuint(logged_count("W egress:", SFL_EGRESS_BUDGET_KEY), ==, c->warns ? 1 : 0);
}

/* --- inside a pipeline ---------------------------------------------------------------------- */

static void
fx_committed_cb(SflPipeline *pipeline, const SflStateDoc *doc, gpointer user_data)
{
	Fixture *fx = user_data;
	g_ptr_array_add(fx->commits, sfl_state_doc_copy(doc));
}

static void
fx_pipeline(Fixture *fx)
{
	SflPipelineCallbacks callbacks = { .committed = fx_committed_cb };

	fx_egress(fx);
	fx->pipeline = sfl_pipeline_new(&fx->batch, SFL_SINK(fx->sink), fx->store, fx->clock);
	sfl_pipeline_set_seed(fx->pipeline, 42);
	sfl_pipeline_set_callbacks(fx->pipeline, &callbacks, fx);
	sfl_pipeline_set_metrics(fx->pipeline, fx->metrics);
	sfl_pipeline_set_egress(fx->pipeline, fx->egress);
}

static void
fx_offer(Fixture *fx, SflLane lane, const gchar *line, const gchar *key, const gchar *value)
{
	g_autoptr(SflEntry) entry = sfl_entry_new(1, fx->labels, line, -1, NULL, 0, key, value);
	g_assert_true(sfl_pipeline_offer(fx->pipeline, lane, entry));
	/* taken into the batch now, so the flush interval runs from here */
	sfl_test_drain(NULL);
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

static void
fx_stop_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Fixture *fx = user_data;
	g_autoptr(GError) error = NULL;

	g_assert_true(sfl_pipeline_stop_finish(SFL_PIPELINE(source), result, &error));
	g_assert_no_error(error);
	fx->stopped = TRUE;
}

/* one store write per flush: the batch's checkpoints and today's count together */
static void
test_pipeline_commit_carries_budget(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *budget = NULL;
	g_autofree gchar *key = NULL;
	const SflStateDoc *doc = NULL;

	fx->config.daily_byte_budget = 1000000;
	fx_pipeline(fx);
	fx_offer(fx, SFL_LANE_BULK, "hello", "k", "1");
	fx_offer(fx, SFL_LANE_BULK, "héllo", "k", "2");
	fx_advance(fx, SEC);
	FX_WAIT_FOR(fx->commits->len == 1);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 1);
	g_assert_cmpuint(sfl_memory_backing_get_write_count(fx->backing), ==, 1);
	doc = fx->commits->pdata[0];
	g_assert_cmpuint(sfl_state_doc_size(doc), ==, 2);
	g_assert_cmpstr(sfl_state_doc_get(doc, "k"), ==, "2");
	/* UTF-8 bytes of the lines: 5 + 6 */
	g_assert_cmpstr(sfl_state_doc_get(doc, SFL_EGRESS_BUDGET_KEY), ==,
			"{\"date\": \"" TODAY "\", \"bytes\": 11}");
	budget = fx_committed(fx, SFL_EGRESS_BUDGET_KEY);
	key = fx_committed(fx, "k");
	g_assert_cmpstr(budget, ==, "{\"date\": \"" TODAY "\", \"bytes\": 11}");
	g_assert_cmpstr(key, ==, "2");
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_budget_used_bytes"), ==, 11);
}

/* a batch without checkpoint keys still persists today's count */
static void
test_pipeline_budget_without_keys(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *budget = NULL;

	fx->config.daily_byte_budget = 1000000;
	fx_pipeline(fx);
	fx_offer(fx, SFL_LANE_STREAMING, "abc", NULL, NULL);
	fx_advance(fx, SEC);
	FX_WAIT_FOR(fx->commits->len == 1);
	budget = fx_committed(fx, SFL_EGRESS_BUDGET_KEY);
	g_assert_cmpstr(budget, ==, "{\"date\": \"" TODAY "\", \"bytes\": 3}");
}

static gdouble
fx_dropped(Fixture *fx, const gchar *source, const gchar *event_type, const gchar *org)
{
	const gchar *names[] = { "reason", "source", "event_type", "org", NULL };
	const gchar *values[] = { "budget", source, event_type, org, NULL };

	return sfl_series_get(sfl_metric_family_series(
		sfl_metrics_counter(fx->metrics, "sf2loki_loki_entries_dropped", NULL, names),
		values));
}

/* drop mode: the batch is counted as dropped (reason budget), never pushed, and commits */
static void
test_pipeline_budget_drop(Fixture *fx, gconstpointer data)
{
	const SflLabelPair pairs[] = { { "event_type", "API" },
				       { "source", "eventlogfile" },
				       { "org", "prod" } };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflLabels) prod = sfl_labels_intern(fx->interner, pairs, 3, &error);
	g_autofree gchar *key = NULL;
	g_autofree gchar *tmpdir = g_dir_make_tmp("sfl-test-egress-XXXXXX", NULL);
	g_autofree gchar *dldir = g_build_filename(tmpdir, "deadletter", NULL);
	g_autoptr(SflDeadletter) dl = NULL;

	g_assert_no_error(error);
	dl = sfl_deadletter_open(dldir, 1 << 20, 0, fx->clock, &error);
	g_assert_no_error(error);
	sfl_deadletter_set_metrics(dl, fx->metrics);
	fx->config.daily_byte_budget = 10;
	fx->config.budget_action = SFL_BUDGET_ACTION_DROP;
	fx_pipeline(fx);
	sfl_pipeline_set_deadletter(fx->pipeline, dl);
	fx_offer(fx, SFL_LANE_BULK, "0123456789", "k", "1");
	{
		g_autoptr(SflEntry) entry = sfl_entry_new(1, prod, "x", -1, NULL, 0, "k", "2");
		g_assert_true(sfl_pipeline_offer(fx->pipeline, SFL_LANE_BULK, entry));
	}
	fx_offer(fx, SFL_LANE_BULK, "y", "k", "3");
	fx_advance(fx, SEC);
	FX_WAIT_FOR(fx->commits->len == 1);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 0);
	g_assert_cmpuint(fx_counters(fx).dropped_budget, ==, 3);
	g_assert_cmpuint(fx_counters(fx).pushed_entries, ==, 0);
	/* attributed to each entry's stream (SFL-0061): the fixture's has only a job label */
	g_assert_cmpfloat(fx_dropped(fx, "unknown", "unknown", ""), ==, 2);
	g_assert_cmpfloat(fx_dropped(fx, "eventlogfile", "API", "prod"), ==, 1);
	key = fx_committed(fx, "k");
	g_assert_cmpstr(key, ==, "3");
	g_assert_cmpuint(logged_count("W egress:", "dropping batches"), ==, 1);
	/* a budget drop is kept for a replay once the budget allows, with its stream */
	{
		g_autoptr(GPtrArray) kept = sfl_deadletter_read_all(dl, NULL);
		const gchar *reason_values[] = { "budget", NULL };
		const gchar *reason_names[] = { "reason", NULL };

		g_assert_cmpuint(kept->len, ==, 3);
		for (guint i = 0; i < kept->len; i++)
			g_assert_cmpstr(
				json_string_value(json_object_get(kept->pdata[i], "reason")), ==,
				"budget");
		g_assert_cmpstr(json_string_value(json_object_get(
					json_object_get(kept->pdata[1], "labels"), "event_type")),
				==, "API");
		g_assert_cmpstr(json_string_value(json_object_get(kept->pdata[1], "org")), ==,
				"prod");
		g_assert_cmpfloat(
			sfl_series_get(sfl_metric_family_series(
				sfl_metrics_counter(fx->metrics, "sf2loki_deadletter_entries", NULL,
						    reason_names),
				reason_values)),
			==, 3);
	}

	/* a batch that fits still goes out */
	fx_offer(fx, SFL_LANE_BULK, "small", "k", "4");
	fx_advance(fx, SEC);
	FX_WAIT_FOR(fx->commits->len == 2);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 1);
	g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, "small"), ==, 1);
	g_clear_object(&fx->pipeline);
	{
		g_autoptr(GDir) d = g_dir_open(dldir, 0, NULL);
		const gchar *name;
		while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
			g_autofree gchar *path = g_build_filename(dldir, name, NULL);
			g_remove(path);
		}
		g_rmdir(dldir);
		g_rmdir(tmpdir);
	}
}

/* SFL-0004 through the pipeline: both lanes pause on the shared budget and both resume */
static void
test_pipeline_pause_both_lanes(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *stream_key = NULL;
	g_autofree gchar *bulk_key = NULL;
	g_autofree gchar *budget = NULL;

	fx->config.daily_byte_budget = 20;
	fx_pipeline(fx);
	fx_offer(fx, SFL_LANE_STREAMING, "aaaaaaaaaaaaaaaaaaaa", "s", "1");
	fx_advance(fx, SEC);
	FX_WAIT_FOR(fx->commits->len == 1);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 1);

	fx_offer(fx, SFL_LANE_STREAMING, "b", "s", "2");
	fx_offer(fx, SFL_LANE_BULK, "c", "b", "1");
	fx_advance(fx, SEC);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 1);
	g_assert_true(sfl_egress_is_paused(fx->egress));
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_paused"), ==, 1);
	g_assert_cmpuint(logged_count("E egress:", "paused until " TOMORROW), ==, 1);

	/* to midnight: both lanes' batches go out, not only the first waiter's */
	fx_advance(fx, TO_MIDNIGHT - 2 * SEC);
	FX_WAIT_FOR(fx->commits->len == 3);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 3);
	g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, "b"), ==, 1);
	g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, "c"), ==, 1);
	g_assert_false(sfl_egress_is_paused(fx->egress));
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_paused"), ==, 0);
	stream_key = fx_committed(fx, "s");
	bulk_key = fx_committed(fx, "b");
	budget = fx_committed(fx, SFL_EGRESS_BUDGET_KEY);
	g_assert_cmpstr(stream_key, ==, "2");
	g_assert_cmpstr(bulk_key, ==, "1");
	g_assert_cmpstr(budget, ==, "{\"date\": \"" TOMORROW "\", \"bytes\": 2}");
}

/* a stop while paused ends at once (no midnight, no grace) and commits nothing unpushed */
static void
test_pipeline_stop_while_paused(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *key = NULL;

	fx->config.daily_byte_budget = 5;
	fx_pipeline(fx);
	fx_offer(fx, SFL_LANE_BULK, "0123456789", "k", "1");
	fx_offer(fx, SFL_LANE_STREAMING, "abcdefgh", "s", "1");
	fx_advance(fx, SEC);
	/* the store answers today's count from its worker thread first */
	FX_WAIT_FOR(sfl_egress_is_paused(fx->egress));
	g_assert_cmpuint(fx->sink->pushes->len, ==, 0);

	sfl_pipeline_stop_async(fx->pipeline, 30 * SEC, NULL, fx_stop_cb, fx);
	FX_WAIT_FOR(fx->stopped);
	g_assert_cmpuint(fx->sink->pushes->len, ==, 0);
	g_assert_cmpuint(fx_counters(fx).abandoned_entries, ==, 2);
	g_assert_false(sfl_egress_is_paused(fx->egress));
	g_assert_cmpfloat(fx_gauge(fx, "sf2loki_egress_paused"), ==, 0);
	key = fx_committed(fx, "k");
	g_assert_null(key);
	g_assert_cmpuint(sfl_memory_backing_get_write_count(fx->backing), ==, 0);
}

/* rate caps slow the pipeline down but lose nothing: every line once, the last key committed */
static void
test_pipeline_capped_delivers_all(Fixture *fx, gconstpointer data)
{
	const guint n = 100;
	gint64 start = 0;
	g_autofree gchar *stream_key = NULL;
	g_autofree gchar *bulk_key = NULL;

	fx->config.max_lines_per_second = 10;
	fx->config.max_bytes_per_second = 1000;
	fx->batch.max_entries = 10;
	fx_pipeline(fx);
	start = sfl_clock_monotonic_usec(fx->clock);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *line = g_strdup_printf("line-%03u", i);
		g_autofree gchar *value = g_strdup_printf("%u", i);
		SflLane lane = i % 2 == 0 ? SFL_LANE_STREAMING : SFL_LANE_BULK;
		fx_offer(fx, lane, line, lane == SFL_LANE_STREAMING ? "s" : "b", value);
	}
	for (guint step = 0; step < 400 && fx_counters(fx).pushed_entries < n; step++)
		fx_advance(fx, SEC / 10);
	FX_WAIT_FOR(sfl_pipeline_has_commit_in_flight(fx->pipeline) == FALSE);
	g_assert_cmpuint(fx_counters(fx).pushed_entries, ==, n);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *line = g_strdup_printf("line-%03u", i);
		g_assert_cmpuint(sfl_test_sink_accepted(fx->sink, line), ==, 1);
	}
	/* 100 lines at 10/s, the first second's worth at once: the last push waited >= 9 s */
	g_assert_cmpint(
		((SflTestPush *)g_ptr_array_index(fx->sink->pushes, fx->sink->pushes->len - 1))
				->at_usec -
			start,
		>=, 9 * SEC);
	for (guint i = 1; i < fx->sink->pushes->len; i++) {
		SflTestPush *prev = fx->sink->pushes->pdata[i - 1];
		SflTestPush *push = fx->sink->pushes->pdata[i];
		/* after the first second, no two 10-line batches go out less than 1 s apart */
		if (i >= 2)
			g_assert_cmpint(push->at_usec - prev->at_usec, >=, SEC * 9 / 10);
	}
	FX_WAIT_FOR(fx_committed_is(fx, "s", "98") && fx_committed_is(fx, "b", "99"));
	stream_key = fx_committed(fx, "s");
	bulk_key = fx_committed(fx, "b");
	g_assert_cmpstr(stream_key, ==, "98");
	g_assert_cmpstr(bulk_key, ==, "99");
	/* no budget: nothing persisted for it */
	g_assert_null(sfl_egress_dup_persisted(fx->egress));
	g_assert_cmpuint(logged_count("", NULL), ==, 0);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	logged = g_ptr_array_new_with_free_func(g_free);
	/* the writer records warnings and errors; the tests assert them */
	g_log_set_writer_func(test_writer, NULL, NULL);
	g_log_set_always_fatal(G_LOG_FATAL_MASK);

#define ADD(path, func, data) g_test_add(path, Fixture, data, fx_setup, func, fx_teardown)
	ADD("/sfl/egress/rate/lines-shortfall", test_rate_lines_shortfall, NULL);
	ADD("/sfl/egress/rate/larger-shortfall", test_rate_larger_shortfall, NULL);
	ADD("/sfl/egress/rate/over-capacity", test_rate_over_capacity, NULL);
	ADD("/sfl/egress/rate/capacity-capped", test_rate_capacity_capped, NULL);
	ADD("/sfl/egress/budget/drop", test_budget_drop, NULL);
	ADD("/sfl/egress/budget/pause-both-waiters", test_budget_pause_both_waiters, NULL);
	ADD("/sfl/egress/budget/pause-wall-stepped-back", test_budget_pause_wall_stepped_back,
	    NULL);
	ADD("/sfl/egress/budget/pause-stop", test_budget_pause_stop, NULL);
	ADD("/sfl/egress/load/same-day", test_load, &load_same_day);
	ADD("/sfl/egress/load/other-day", test_load, &load_other_day);
	ADD("/sfl/egress/load/corrupt", test_load, &load_corrupt);
	ADD("/sfl/egress/load/not-json", test_load, &load_not_json);
	ADD("/sfl/egress/load/absent", test_load, &load_absent);
	ADD("/sfl/egress/pipeline/commit-carries-budget", test_pipeline_commit_carries_budget,
	    NULL);
	ADD("/sfl/egress/pipeline/budget-without-keys", test_pipeline_budget_without_keys, NULL);
	ADD("/sfl/egress/pipeline/budget-drop", test_pipeline_budget_drop, NULL);
	ADD("/sfl/egress/pipeline/pause-both-lanes", test_pipeline_pause_both_lanes, NULL);
	ADD("/sfl/egress/pipeline/stop-while-paused", test_pipeline_stop_while_paused, NULL);
	ADD("/sfl/egress/pipeline/capped-delivers-all", test_pipeline_capped_delivers_all, NULL);
#undef ADD
	return g_test_run();
}
