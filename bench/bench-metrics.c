/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBenchMetrics"

#include "config.h"

#include <malloc.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "sfl-metrics.h"

/*
 * The metrics hot path (issue 9): a labelled counter incremented 10,000,000 times must cost a
 * few nanoseconds and allocate nothing. Allocations are counted two ways that do not depend on
 * GLib: calls into malloc/calloc/realloc through the interposers below (every g_malloc ends
 * there), and glibc's mallinfo2() bytes in use before and after. Nothing here asserts a time;
 * the program fails only when the hot path allocates.
 */

#define BENCH_INCREMENTS 10000000u
#define BENCH_LOOKUPS	 1000000u
#define BENCH_THREADS	 4u

/* ASan brings its own malloc; interposing on top of it would fight it */
#if defined(__SANITIZE_ADDRESS__)
#define BENCH_COUNT_CALLS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BENCH_COUNT_CALLS 0
#endif
#endif
#ifndef BENCH_COUNT_CALLS
#define BENCH_COUNT_CALLS 1
#endif

static guint64 bench_alloc_calls;

#if BENCH_COUNT_CALLS
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);

void *
malloc(size_t size)
{
	__atomic_fetch_add(&bench_alloc_calls, 1, __ATOMIC_RELAXED);
	return __libc_malloc(size);
}

void *
calloc(size_t n, size_t size)
{
	__atomic_fetch_add(&bench_alloc_calls, 1, __ATOMIC_RELAXED);
	return __libc_calloc(n, size);
}

void *
realloc(void *ptr, size_t size)
{
	__atomic_fetch_add(&bench_alloc_calls, 1, __ATOMIC_RELAXED);
	return __libc_realloc(ptr, size);
}
#endif

typedef struct {
	guint64 calls;
	gint64 bytes; /* in use, heap and mmap */
} BenchHeap;

static BenchHeap
bench_heap(void)
{
	struct mallinfo2 mi = mallinfo2();
	BenchHeap h = { __atomic_load_n(&bench_alloc_calls, __ATOMIC_RELAXED),
			(gint64)(mi.uordblks + mi.hblkhd) };
	return h;
}

static gboolean bench_failed;

static void
bench_report(const gchar *what, guint64 n, gint64 elapsed_usec, BenchHeap before, BenchHeap after)
{
	guint64 calls = after.calls - before.calls;
	gint64 bytes = after.bytes - before.bytes;

	g_print("%-38s %9" G_GUINT64_FORMAT " ops  %8.2f ns/op  allocations %" G_GUINT64_FORMAT
		"%s  bytes %+" G_GINT64_FORMAT "\n",
		what, n, (gdouble)elapsed_usec * 1000.0 / (gdouble)n, calls,
		BENCH_COUNT_CALLS ? "" : " (not counted)", bytes);
	if (calls != 0 || bytes != 0)
		bench_failed = TRUE;
}

static gpointer
bench_thread(gpointer data)
{
	SflSeries *series = data;

	for (guint i = 0; i < BENCH_INCREMENTS / BENCH_THREADS; i++)
		sfl_series_inc(series);
	return NULL;
}

int
main(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	const gchar *const labels[] = { "source", "event_type", NULL };
	const gchar *const values[] = { "eventlogfile", "ApexExecution", NULL };
	const gdouble bounds[] = { 1, 5, 15, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400 };
	SflMetricFamily *events =
		sfl_metrics_counter(metrics, "sf2loki_events_ingested", "Entries.", labels);
	SflMetricFamily *lag = sfl_metrics_histogram(metrics, "sf2loki_ingest_lag_seconds", "Lag.",
						     labels, bounds, G_N_ELEMENTS(bounds));
	SflSeries *counter = sfl_metric_family_series(events, values);
	SflSeries *histogram = sfl_metric_family_series(lag, values);
	GThread *threads[BENCH_THREADS];
	struct rusage usage = { 0 };
	BenchHeap before;
	BenchHeap after;
	gint64 start;
	gint64 elapsed;

	/* warm: whatever GLib sets up on first use is not the hot path's cost */
	sfl_series_inc(counter);
	g_free(sfl_metrics_render_prometheus(metrics));

	/* the counters must see a g_malloc, or a zero below would prove nothing */
	before = bench_heap();
	g_free(g_malloc(4096));
	after = bench_heap();
	if (BENCH_COUNT_CALLS && after.calls == before.calls)
		g_error("the allocation counter does not see g_malloc");

	before = bench_heap();
	start = g_get_monotonic_time();
	for (guint i = 0; i < BENCH_INCREMENTS; i++)
		sfl_series_inc(counter);
	elapsed = g_get_monotonic_time() - start;
	after = bench_heap();
	bench_report("counter inc, labelled series", BENCH_INCREMENTS, elapsed, before, after);

	before = bench_heap();
	start = g_get_monotonic_time();
	for (guint i = 0; i < BENCH_INCREMENTS; i++)
		sfl_series_observe(histogram, (gdouble)(i % 100000));
	elapsed = g_get_monotonic_time() - start;
	after = bench_heap();
	bench_report("histogram observe, 12 buckets", BENCH_INCREMENTS, elapsed, before, after);

	before = bench_heap();
	start = g_get_monotonic_time();
	for (guint i = 0; i < BENCH_LOOKUPS; i++) {
		if (sfl_metric_family_series(events, values) != counter)
			g_error("lookup returned another series");
	}
	elapsed = g_get_monotonic_time() - start;
	after = bench_heap();
	bench_report("lookup of an existing series", BENCH_LOOKUPS, elapsed, before, after);

	/* contended: all threads on one series, the CAS loop's worst case (thread creation
	 * allocates, so no allocation figures here) */
	start = g_get_monotonic_time();
	for (guint t = 0; t < BENCH_THREADS; t++)
		threads[t] = g_thread_new("bench", bench_thread, counter);
	for (guint t = 0; t < BENCH_THREADS; t++)
		g_thread_join(threads[t]);
	elapsed = g_get_monotonic_time() - start;
	g_print("%-38s %9u ops  %8.2f ns/op (wall, all threads)\n",
		"counter inc, 4 threads, one series", BENCH_INCREMENTS,
		(gdouble)elapsed * 1000.0 / BENCH_INCREMENTS);

	if (sfl_series_get(counter) != 2.0 * BENCH_INCREMENTS + 1)
		g_error("counter lost increments: %.0f", sfl_series_get(counter));
	getrusage(RUSAGE_SELF, &usage);
	g_print("peak RSS: %ld KiB\n", usage.ru_maxrss);
	if (bench_failed) {
		g_printerr("bench-metrics: the hot path allocated\n");
		return 1;
	}
	return 0;
}
