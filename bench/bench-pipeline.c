/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBenchPipeline"

#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sfl-memory-store.h"
#include "sfl-pipeline.h"

/*
 * The pipeline's own cost and memory bound: a flood source offers realistic entries (~600-byte
 * lines, a few label sets, checkpoint keys) to both lanes as fast as they accept, resuming on
 * the writable callback, into a sink that discards every batch (OK from an idle) and a memory
 * store. queue_max_bytes is 64 MiB per lane, so peak RSS must stay under 2 x 64 MiB plus
 * 32 MiB for everything else. Prints PASS/FAIL for the bound; never exits non-zero for it.
 *
 * Usage: bench-pipeline [N_ENTRIES]   (default 2,000,000, stops producing after ~20 s)
 */

#define BENCH_DEFAULT_ENTRIES 2000000
#define BENCH_MAX_SECONDS     20
#define BENCH_QUEUE_MAX_BYTES (64 * 1024 * 1024)
#define BENCH_LINE_POOL	      4096
#define BENCH_N_LABEL_SETS    4
#define BENCH_N_KEYS	      8

/* --- a sink that discards ------------------------------------------------------------------- */

#define BENCH_TYPE_SINK (bench_sink_get_type())
G_DECLARE_FINAL_TYPE(BenchSink, bench_sink, BENCH, SINK, SflSink)

struct _BenchSink {
	SflSink parent_instance;
	guint64 pushes;
};

G_DEFINE_TYPE(BenchSink, bench_sink, SFL_TYPE_SINK)

static gboolean
bench_sink_answer_cb(gpointer user_data)
{
	GTask *task = user_data;

	g_task_return_pointer(task, sfl_sink_result_new(SFL_SINK_OK),
			      (GDestroyNotify)sfl_sink_result_free);
	return G_SOURCE_REMOVE;
}

static void
bench_sink_push_async(SflSink *sink, SflBatch *batch, GCancellable *cancellable,
		      GAsyncReadyCallback callback, gpointer user_data)
{
	BenchSink *self = BENCH_SINK(sink);
	GTask *task = g_task_new(self, cancellable, callback, user_data);

	(void)batch;
	self->pushes++;
	g_idle_add_full(G_PRIORITY_DEFAULT, bench_sink_answer_cb, task, g_object_unref);
}

static SflSinkResult *
bench_sink_push_finish(SflSink *sink, GAsyncResult *result, GError **error)
{
	(void)sink;
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
bench_sink_class_init(BenchSinkClass *klass)
{
	SFL_SINK_CLASS(klass)->push_async = bench_sink_push_async;
	SFL_SINK_CLASS(klass)->push_finish = bench_sink_push_finish;
}

static void
bench_sink_init(BenchSink *self)
{
	(void)self;
}

/* --- the flood source ----------------------------------------------------------------------- */

typedef struct {
	SflPipeline *pipeline;
	GPtrArray *lines; /* gchar*, the pool the lines are copied from */
	SflLabels *labels[BENCH_N_LABEL_SETS];
	gchar *keys[SFL_LANE_COUNT][BENCH_N_KEYS];
	guint64 target[SFL_LANE_COUNT];
	guint64 offered[SFL_LANE_COUNT];
	guint64 refused;
	gint64 deadline_usec;
	gboolean out_of_time;
	gboolean stopped;
} Bench;

static gdouble
bench_cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (gdouble)ru.ru_utime.tv_sec + (gdouble)ru.ru_utime.tv_usec / 1e6 +
	       (gdouble)ru.ru_stime.tv_sec + (gdouble)ru.ru_stime.tv_usec / 1e6;
}

static glong
bench_peak_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* an EventLogFile-like row, ~600 bytes of sorted-key JSON */
static gchar *
bench_line(GRand *rand, guint seq)
{
	return g_strdup_printf(
		"{\"API_TYPE\": \"REST\", \"CLIENT_IP\": \"10.%u.%u.%u\", \"CPU_TIME\": \"%u\", "
		"\"DB_TOTAL_TIME\": \"%u\", \"EVENT_TYPE\": \"API\", \"LOGIN_KEY\": \"%08x%08x\", "
		"\"METHOD_NAME\": \"query\", \"ORGANIZATION_ID\": \"00D5j00000AbCdE\", "
		"\"REQUEST_ID\": \"4%013u-%06x\", \"REQUEST_SIZE\": \"%u\", \"REQUEST_STATUS\": "
		"\"S\", \"RESPONSE_SIZE\": \"%u\", \"ROWS_PROCESSED\": \"%u\", \"RUN_TIME\": "
		"\"%u\", "
		"\"SESSION_KEY\": \"%08x%08x%08x\", \"TIMESTAMP\": \"20260101%06u.%03u\", "
		"\"URI\": \"/services/data/v59.0/query\", \"USER_AGENT\": \"%u\", \"USER_ID\": "
		"\"0055j00000%05u\", \"ENTITY_NAME\": \"Account\"}",
		g_rand_int_range(rand, 0, 255), g_rand_int_range(rand, 0, 255),
		g_rand_int_range(rand, 0, 255), g_rand_int_range(rand, 1, 500),
		g_rand_int_range(rand, 1, 90000000), g_rand_int(rand), g_rand_int(rand), seq,
		g_rand_int_range(rand, 0, 0xffffff), g_rand_int_range(rand, 0, 4096),
		g_rand_int_range(rand, 0, 1 << 20), g_rand_int_range(rand, 0, 2000),
		g_rand_int_range(rand, 1, 3000), g_rand_int(rand), g_rand_int(rand),
		g_rand_int(rand), seq % 1000000, seq % 1000, g_rand_int_range(rand, 1000, 9999),
		g_rand_int_range(rand, 0, 99999));
}

/* offers to @lane until it refuses or its share is done */
static void
bench_produce(Bench *bench, SflLane lane)
{
	gchar value[32];

	while (bench->offered[lane] < bench->target[lane] && !bench->out_of_time) {
		guint64 seq = bench->offered[lane];
		const gchar *line = bench->lines->pdata[seq % BENCH_LINE_POOL];
		g_autoptr(SflEntry) entry = NULL;

		if ((seq & 1023) == 0 && g_get_monotonic_time() >= bench->deadline_usec) {
			bench->out_of_time = TRUE;
			break;
		}
		g_snprintf(value, sizeof(value), "%" G_GUINT64_FORMAT, seq);
		entry = sfl_entry_new(G_GINT64_CONSTANT(1700000000000000000) + (gint64)seq,
				      bench->labels[seq % BENCH_N_LABEL_SETS], line, -1, NULL, 0,
				      bench->keys[lane][seq % BENCH_N_KEYS], value);
		if (!sfl_pipeline_offer(bench->pipeline, lane, entry)) {
			bench->refused++;
			return;
		}
		bench->offered[lane]++;
	}
}

static void
bench_writable(SflPipeline *pipeline, SflLane lane, gpointer user_data)
{
	(void)pipeline;
	bench_produce(user_data, lane);
}

static void
bench_error(SflPipeline *pipeline, SflLane lane, const GError *error, gpointer user_data)
{
	(void)pipeline;
	(void)user_data;
	g_error("%s lane stopped: %s", sfl_lane_to_string(lane), error->message);
}

static gboolean
bench_start_cb(gpointer user_data)
{
	Bench *bench = user_data;

	bench_produce(bench, SFL_LANE_STREAMING);
	bench_produce(bench, SFL_LANE_BULK);
	return G_SOURCE_REMOVE;
}

static void
bench_stop_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Bench *bench = user_data;
	g_autoptr(GError) error = NULL;

	if (!sfl_pipeline_stop_finish(SFL_PIPELINE(source), result, &error))
		g_printerr("stop: %s\n", error->message);
	bench->stopped = TRUE;
}

static gboolean
bench_done(Bench *bench)
{
	SflPipelineCounters counters;

	for (guint lane = 0; lane < SFL_LANE_COUNT; lane++) {
		if (!bench->out_of_time && bench->offered[lane] < bench->target[lane])
			return FALSE;
	}
	sfl_pipeline_get_counters(bench->pipeline, &counters);
	return counters.pushed_entries ==
	       bench->offered[SFL_LANE_STREAMING] + bench->offered[SFL_LANE_BULK];
}

int
main(int argc, char **argv)
{
	Bench bench = { 0 };
	SflLokiBatchConfig config = { 0 };
	SflPipelineCallbacks callbacks = { bench_writable, bench_error, bench_error };
	g_autoptr(SflMemoryBacking) backing = sfl_memory_backing_new();
	g_autoptr(SflCheckpointStore) store = sfl_memory_store_new(backing);
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(GRand) rand = g_rand_new_with_seed(20260101);
	g_autoptr(GError) error = NULL;
	g_autoptr(BenchSink) sink = g_object_new(BENCH_TYPE_SINK, NULL);
	SflPipelineCounters counters;
	guint64 n = BENCH_DEFAULT_ENTRIES;
	guint64 total = 0;
	guint64 line_bytes = 0;
	gint64 t0 = 0;
	gdouble wall_s = 0;
	gdouble cpu0 = 0;
	gdouble cpu_s = 0;
	glong rss_kib = 0;
	glong limit_kib = (2 * 64 + 32) * 1024;
	static const gchar *const event_types[BENCH_N_LABEL_SETS] = { "API", "Login", "Report",
								      "URI" };

	if (argc > 1)
		n = g_ascii_strtoull(argv[1], NULL, 10);
	bench.lines = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < BENCH_LINE_POOL; i++) {
		gchar *line = bench_line(rand, i);

		line_bytes += strlen(line);
		g_ptr_array_add(bench.lines, line);
	}
	for (guint i = 0; i < BENCH_N_LABEL_SETS; i++) {
		const SflLabelPair pairs[] = { { "job", "sf2loki" },
					       { "org", "acme" },
					       { "event_type", event_types[i] } };

		bench.labels[i] = sfl_labels_intern(interner, pairs, G_N_ELEMENTS(pairs), &error);
		g_assert_no_error(error);
	}
	for (guint lane = 0; lane < SFL_LANE_COUNT; lane++) {
		for (guint k = 0; k < BENCH_N_KEYS; k++)
			bench.keys[lane][k] =
				g_strdup_printf("acme/%s/stream-%u", sfl_lane_to_string(lane), k);
	}
	bench.target[SFL_LANE_STREAMING] = n / 2;
	bench.target[SFL_LANE_BULK] = n - n / 2;

	config.max_entries = 1000;
	config.max_bytes = 1 << 20;
	config.flush_interval = G_USEC_PER_SEC;
	config.max_line_bytes = 0;
	config.queue_maxsize = 10000000;
	config.queue_max_bytes = BENCH_QUEUE_MAX_BYTES;
	bench.pipeline = sfl_pipeline_new(&config, SFL_SINK(sink), store, clock);
	sfl_pipeline_set_callbacks(bench.pipeline, &callbacks, &bench);

	cpu0 = bench_cpu_seconds();
	t0 = g_get_monotonic_time();
	bench.deadline_usec = t0 + BENCH_MAX_SECONDS * G_USEC_PER_SEC;
	g_idle_add(bench_start_cb, &bench);
	while (!bench_done(&bench))
		g_main_context_iteration(NULL, TRUE);
	wall_s = (gdouble)(g_get_monotonic_time() - t0) / 1e6;
	cpu_s = bench_cpu_seconds() - cpu0;
	sfl_pipeline_get_counters(bench.pipeline, &counters);
	total = bench.offered[SFL_LANE_STREAMING] + bench.offered[SFL_LANE_BULK];

	sfl_pipeline_stop_async(bench.pipeline, 10 * G_USEC_PER_SEC, NULL, bench_stop_cb, &bench);
	while (!bench.stopped)
		g_main_context_iteration(NULL, TRUE);
	rss_kib = bench_peak_rss_kib();

	g_print("bench-pipeline: %" G_GUINT64_FORMAT " entries (%" G_GUINT64_FORMAT
		" streaming, %" G_GUINT64_FORMAT " bulk), mean line %.0f bytes%s\n",
		total, bench.offered[SFL_LANE_STREAMING], bench.offered[SFL_LANE_BULK],
		(gdouble)line_bytes / BENCH_LINE_POOL,
		bench.out_of_time ? " (stopped at the time limit)" : "");
	g_print("  wall %.2f s, %.0f entries/s, %.0f MB/s of lines\n", wall_s,
		(gdouble)total / wall_s, (gdouble)counters.pushed_bytes / wall_s / 1e6);
	g_print("  cpu %.2f s, %.3f CPU-us per entry\n", cpu_s, cpu_s * 1e6 / (gdouble)total);
	g_print("  pushes %" G_GUINT64_FORMAT ", commits %" G_GUINT64_FORMAT
		", refused offers %" G_GUINT64_FORMAT "\n",
		sink->pushes, counters.commits, bench.refused);
	g_print("  peak RSS %.1f MiB (limit 2 x 64 MiB + 32 MiB = %.0f MiB): %s\n",
		(gdouble)rss_kib / 1024, (gdouble)limit_kib / 1024,
		rss_kib < limit_kib ? "PASS" : "FAIL");

	g_clear_object(&bench.pipeline);
	while (g_main_context_iteration(NULL, FALSE))
		;
	for (guint i = 0; i < BENCH_N_LABEL_SETS; i++)
		sfl_labels_unref(bench.labels[i]);
	for (guint lane = 0; lane < SFL_LANE_COUNT; lane++) {
		for (guint k = 0; k < BENCH_N_KEYS; k++)
			g_free(bench.keys[lane][k]);
	}
	g_ptr_array_unref(bench.lines);
	return EXIT_SUCCESS;
}
