/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestMetrics"

#include "config.h"

#include <math.h>
#include <string.h>

#include <gio/gio.h>

#include "sfl-metrics.h"

#define SFL_METRICS_DOMAIN "SflMetrics"

static const gchar *const test_no_labels[] = { NULL };

/* the overflow warning is part of the contract; the build logs structured, which
 * g_test_expect_message() does not see, so warnings are recorded here instead */
static GPtrArray *test_warnings; /* (element-type utf8) */

static GLogWriterOutput
test_metrics_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
		    gpointer user_data)
{
	if (level & G_LOG_LEVEL_WARNING) {
		for (gsize i = 0; i < n_fields; i++) {
			if (g_str_equal(fields[i].key, "MESSAGE")) {
				g_ptr_array_add(test_warnings, g_strdup(fields[i].value));
				return G_LOG_WRITER_HANDLED;
			}
		}
	}
	return g_log_writer_default(level, fields, n_fields, user_data);
}

static void
test_metrics_assert_render(SflMetrics *metrics, const gchar *expected)
{
	g_autofree gchar *text = sfl_metrics_render_prometheus(metrics);
	g_assert_cmpstr(text, ==, expected);
}

static void
test_metrics_counter(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	const gchar *const labels[] = { "source", "event_type", NULL };
	const gchar *const login[] = { "elf", "Login", NULL };
	const gchar *const api[] = { "pubsub", "Api", NULL };
	SflMetricFamily *events =
		sfl_metrics_counter(metrics, "sfl_test_events", "Events seen.", labels);
	SflMetricFamily *pushes = sfl_metrics_counter(metrics, "sfl_test_pushes", "Pushes.", NULL);
	SflSeries *s;

	/* families with labels and no series render their HELP and TYPE only; label-less
	 * families have their one series from the start */
	test_metrics_assert_render(metrics, "# HELP sfl_test_events_total Events seen.\n"
					    "# TYPE sfl_test_events_total counter\n"
					    "# HELP sfl_test_pushes_total Pushes.\n"
					    "# TYPE sfl_test_pushes_total counter\n"
					    "sfl_test_pushes_total 0\n");

	s = sfl_metric_family_series(events, login);
	sfl_series_inc(s);
	sfl_series_inc(s);
	sfl_series_add(s, 1);
	g_assert_true(sfl_metric_family_series(events, login) == s);
	sfl_series_add(sfl_metric_family_series(events, api), 0.5);
	sfl_series_add(sfl_metric_family_series(pushes, NULL), 12345678901.0);
	g_assert_cmpfloat(sfl_series_get(s), ==, 3.0);

	test_metrics_assert_render(
		metrics, "# HELP sfl_test_events_total Events seen.\n"
			 "# TYPE sfl_test_events_total counter\n"
			 "sfl_test_events_total{source=\"elf\",event_type=\"Login\"} 3\n"
			 "sfl_test_events_total{source=\"pubsub\",event_type=\"Api\"} 0.5\n"
			 "# HELP sfl_test_pushes_total Pushes.\n"
			 "# TYPE sfl_test_pushes_total counter\n"
			 "sfl_test_pushes_total 12345678901\n");

	/* counters only go up; NaN would stick forever */
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*value >= 0*");
	sfl_series_add(s, -1);
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*value >= 0*");
	sfl_series_add(s, NAN);
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*SFL_METRIC_GAUGE*");
	sfl_series_set(s, 1);
	g_test_assert_expected_messages();
	g_assert_cmpfloat(sfl_series_get(s), ==, 3.0);
}

static void
test_metrics_gauge(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	SflMetricFamily *depth = sfl_metrics_gauge(metrics, "sfl_test_depth", "Depth.", NULL);
	SflSeries *s = sfl_metric_family_series(depth, NULL);
	/* value → rendering; the non-integral ones are Python's repr() of the same double */
	const struct {
		gdouble value;
		const gchar *text;
	} cases[] = {
		{ 0.0, "0" },
		{ -0.0, "0" },
		{ 42.0, "42" },
		{ -3.0, "-3" },
		{ 0.1, "0.1" },
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ 123456.789, "123456.789" },
		{ 1e-05, "1e-05" },
		{ 5e-324, "5e-324" },
		{ -1.5e-300, "-1.5e-300" },
		{ 9007199254740991.0, "9007199254740991" },
		{ 9007199254740992.0, "9007199254740992" },
		{ 1e20, "1e+20" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ INFINITY, "+Inf" },
		{ -INFINITY, "-Inf" },
		{ NAN, "NaN" },
	};

	test_metrics_assert_render(metrics, "# HELP sfl_test_depth Depth.\n"
					    "# TYPE sfl_test_depth gauge\n"
					    "sfl_test_depth 0\n");
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *expected = g_strdup_printf("# HELP sfl_test_depth Depth.\n"
							     "# TYPE sfl_test_depth gauge\n"
							     "sfl_test_depth %s\n",
							     cases[i].text);
		sfl_series_set(s, cases[i].value);
		test_metrics_assert_render(metrics, expected);
	}

	/* gauges also move by deltas, in both directions */
	sfl_series_set(s, 10);
	sfl_series_add(s, -2.5);
	sfl_series_inc(s);
	g_assert_cmpfloat(sfl_series_get(s), ==, 8.5);
}

static void
test_metrics_histogram(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	const gdouble bounds[] = { 0.005, 0.1, 1, 2.5 };
	const gchar *const labels[] = { "route", NULL };
	const gchar *const push[] = { "push", NULL };
	SflMetricFamily *latency = sfl_metrics_histogram(metrics, "sfl_test_latency_seconds",
							 "Latency.", labels, bounds, 4);
	SflMetricFamily *plain =
		sfl_metrics_histogram(metrics, "sfl_test_size_bytes", NULL, NULL, NULL, 0);
	SflSeries *s = sfl_metric_family_series(latency, push);
	guint n_bounds = 0;

	sfl_series_observe(s, 0.001);
	sfl_series_observe(s, 0.1); /* on a bound: counted in that bound's bucket */
	sfl_series_observe(s, 3);
	sfl_series_observe(s, 1);
	sfl_series_observe(sfl_metric_family_series(plain, NULL), 7);

	g_assert_cmpuint(sfl_series_get_count(s), ==, 4);
	g_assert_cmpuint(sfl_series_get_bucket(s, 0), ==, 1);
	g_assert_cmpuint(sfl_series_get_bucket(s, 3), ==, 0);
	g_assert_cmpuint(sfl_series_get_bucket(s, 4), ==, 1);
	g_assert_true(sfl_metric_family_get_bounds(latency, &n_bounds) != NULL);
	g_assert_cmpuint(n_bounds, ==, 4);
	test_metrics_assert_render(
		metrics, "# HELP sfl_test_latency_seconds Latency.\n"
			 "# TYPE sfl_test_latency_seconds histogram\n"
			 "sfl_test_latency_seconds_bucket{route=\"push\",le=\"0.005\"} 1\n"
			 "sfl_test_latency_seconds_bucket{route=\"push\",le=\"0.1\"} 2\n"
			 "sfl_test_latency_seconds_bucket{route=\"push\",le=\"1\"} 3\n"
			 "sfl_test_latency_seconds_bucket{route=\"push\",le=\"2.5\"} 3\n"
			 "sfl_test_latency_seconds_bucket{route=\"push\",le=\"+Inf\"} 4\n"
			 "sfl_test_latency_seconds_sum{route=\"push\"} 4.101\n"
			 "sfl_test_latency_seconds_count{route=\"push\"} 4\n"
			 "# TYPE sfl_test_size_bytes histogram\n"
			 "sfl_test_size_bytes_bucket{le=\"+Inf\"} 1\n"
			 "sfl_test_size_bytes_sum 7\n"
			 "sfl_test_size_bytes_count 1\n");

	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*SFL_METRIC_HISTOGRAM*");
	sfl_series_add(s, 1);
	g_test_assert_expected_messages();
}

static void
test_metrics_escaping(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	const gchar *const labels[] = { "reason", NULL };
	const gchar *const odd[] = { "say \"hi\"\\now\nthen", NULL };
	const gchar *const invalid[] = { "bad\xff", NULL };
	const gchar *const repaired[] = { "bad\xef\xbf\xbd", NULL };
	SflMetricFamily *errors = sfl_metrics_counter(
		metrics, "sfl_test_errors", "Errors by \"reason\", C:\\path\nsecond line", labels);

	sfl_series_inc(sfl_metric_family_series(errors, odd));
	/* invalid UTF-8 is repaired before lookup, so both spellings share one series */
	sfl_series_inc(sfl_metric_family_series(errors, invalid));
	g_assert_true(sfl_metric_family_series(errors, invalid) ==
		      sfl_metric_family_series(errors, repaired));
	test_metrics_assert_render(
		metrics,
		"# HELP sfl_test_errors_total Errors by \"reason\", C:\\\\path\\nsecond line\n"
		"# TYPE sfl_test_errors_total counter\n"
		"sfl_test_errors_total{reason=\"say \\\"hi\\\"\\\\now\\nthen\"} 1\n"
		"sfl_test_errors_total{reason=\"bad\xef\xbf\xbd\"} 1\n");
}

static void
test_metrics_overflow(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	const gchar *const labels[] = { "topic", "object", NULL };
	SflMetricFamily *family = sfl_metrics_counter(metrics, "sfl_test_topics", "T.", labels);
	SflSeries *first = NULL;
	SflSeries *overflow;
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;
	const gchar *const extra[] = { "extra", "x", NULL };
	const gchar *const more[] = { "more", "y", NULL };

	for (guint i = 0; i < SFL_METRICS_MAX_SERIES; i++) {
		g_autofree gchar *topic = g_strdup_printf("t%u", i);
		const gchar *const values[] = { topic, "o", NULL };
		SflSeries *s = sfl_metric_family_series(family, values);

		g_assert_nonnull(s);
		if (i == 0)
			first = s;
		sfl_series_inc(s);
	}
	g_ptr_array_set_size(test_warnings, 0);
	overflow = sfl_metric_family_series(family, extra);
	g_assert_cmpuint(test_warnings->len, ==, 1);
	g_assert_true(g_pattern_match_simple("*sfl_test_topics*more than 1000*",
					     g_ptr_array_index(test_warnings, 0)));
	g_assert_cmpstrv(sfl_series_get_label_values(overflow),
			 ((const gchar *const[]){ "other", "other", NULL }));
	/* warned once: a second newcomer shares the series silently */
	g_assert_true(sfl_metric_family_series(family, more) == overflow);
	sfl_series_inc(overflow);
	sfl_series_inc(sfl_metric_family_series(family, more));
	g_assert_cmpuint(test_warnings->len, ==, 1);
	/* the existing tuples keep their own series */
	g_assert_true(sfl_metric_family_series(
			      family, ((const gchar *const[]){ "t0", "o", NULL })) == first);

	text = sfl_metrics_render_prometheus(metrics);
	lines = g_strsplit(text, "\n", -1);
	/* HELP, TYPE, 1000 series, the overflow series, the empty string after the last \n */
	g_assert_cmpuint(g_strv_length(lines), ==, 2 + SFL_METRICS_MAX_SERIES + 1 + 1);
	g_assert_cmpstr(lines[2], ==, "sfl_test_topics_total{topic=\"t0\",object=\"o\"} 1");
	g_assert_cmpstr(lines[2 + SFL_METRICS_MAX_SERIES], ==,
			"sfl_test_topics_total{topic=\"other\",object=\"other\"} 2");
}

static void
test_metrics_same_family(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	const gchar *const labels[] = { "source", NULL };
	const gchar *const other_labels[] = { "topic", NULL };
	const gdouble bounds[] = { 1, 2 };
	const gdouble other_bounds[] = { 1, 3 };
	SflMetricFamily *a = sfl_metrics_counter(metrics, "sfl_test_a", "A.", labels);
	SflMetricFamily *h = sfl_metrics_histogram(metrics, "sfl_test_h", "H.", NULL, bounds, 2);

	g_assert_nonnull(a);
	g_assert_true(sfl_metrics_counter(metrics, "sfl_test_a", "A again.", labels) == a);
	g_assert_true(
		sfl_metrics_histogram(metrics, "sfl_test_h", "H.", test_no_labels, bounds, 2) == h);
	g_assert_cmpstr(sfl_metric_family_get_name(a), ==, "sfl_test_a");
	g_assert_cmpstr(sfl_metric_family_get_help(a), ==, "A.");
	g_assert_cmpint(sfl_metric_family_get_type(h), ==, SFL_METRIC_HISTOGRAM);
	g_assert_cmpstrv(sfl_metric_family_get_label_names(a), labels);

	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*type*");
	g_assert_null(sfl_metrics_gauge(metrics, "sfl_test_a", "A.", labels));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*same_labels*");
	g_assert_null(sfl_metrics_counter(metrics, "sfl_test_a", "A.", other_labels));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*bounds*");
	g_assert_null(sfl_metrics_histogram(metrics, "sfl_test_h", "H.", NULL, other_bounds, 2));
	g_test_assert_expected_messages();
}

static void
test_metrics_foreach_cb(SflMetricFamily *family, SflSeries *series, gpointer user_data)
{
	GString *seen = user_data;
	g_autofree gchar *values = g_strjoinv(",", (gchar **)sfl_series_get_label_values(series));

	g_string_append_printf(seen, "%s[%s];", sfl_metric_family_get_name(family), values);
}

static void
test_metrics_foreach(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(GString) seen = g_string_new(NULL);
	const gchar *const labels[] = { "source", NULL };
	SflMetricFamily *a = sfl_metrics_counter(metrics, "sfl_test_a", "A.", labels);

	sfl_metrics_gauge(metrics, "sfl_test_empty", "E.", labels);
	sfl_metrics_gauge(metrics, "sfl_test_g", "G.", NULL);
	sfl_metric_family_series(a, (const gchar *const[]){ "y", NULL });
	sfl_metric_family_series(a, (const gchar *const[]){ "x", NULL });
	sfl_metrics_foreach(metrics, test_metrics_foreach_cb, seen);
	g_assert_cmpstr(seen->str, ==, "sfl_test_a[y];sfl_test_a[x];sfl_test_g[];");
}

static void
test_metrics_invalid_names(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	const gchar *const dunder[] = { "__name", NULL };
	const gchar *const dash[] = { "a-b", NULL };
	const gchar *const le[] = { "le", NULL };
	const gchar *const twice[] = { "a", "a", NULL };
	const gdouble descending[] = { 2, 1 };
	const gdouble nan_bound[] = { NAN };

	g_assert_nonnull(sfl_metrics_gauge(metrics, "a:b_c9", "ok", NULL));
	g_assert_nonnull(sfl_metrics_gauge(metrics, "_x", "ok", le));

	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*name_is_valid*");
	g_assert_null(sfl_metrics_gauge(metrics, "9lives", "bad", NULL));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*name_is_valid*");
	g_assert_null(sfl_metrics_gauge(metrics, "a.b", "bad", NULL));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*label_name_is_valid*");
	g_assert_null(sfl_metrics_gauge(metrics, "g1", "bad", dunder));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*label_name_is_valid*");
	g_assert_null(sfl_metrics_gauge(metrics, "g2", "bad", dash));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*label_names*");
	g_assert_null(sfl_metrics_gauge(metrics, "g3", "bad", twice));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*\"le\"*");
	g_assert_null(sfl_metrics_histogram(metrics, "h1", "bad", le, NULL, 0));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*bounds*");
	g_assert_null(sfl_metrics_histogram(metrics, "h2", "bad", NULL, descending, 2));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*isfinite*");
	g_assert_null(sfl_metrics_histogram(metrics, "h3", "bad", NULL, nan_bound, 1));
	g_test_assert_expected_messages();
	g_test_expect_message(SFL_METRICS_DOMAIN, G_LOG_LEVEL_CRITICAL, "*_total*");
	g_assert_null(sfl_metrics_counter(metrics, "c_total", "bad", NULL));
	g_test_assert_expected_messages();
}

#define TEST_THREADS	4
#define TEST_INCREMENTS 1000000

typedef struct {
	SflMetricFamily *counter;
	SflMetricFamily *histogram;
} TestWorker;

/* every thread looks the shared series up itself and updates both */
static gpointer
test_metrics_worker(gpointer data)
{
	TestWorker *worker = data;
	const gchar *const values[] = { "shared", NULL };
	SflSeries *c = sfl_metric_family_series(worker->counter, values);
	SflSeries *h = sfl_metric_family_series(worker->histogram, values);

	for (guint i = 0; i < TEST_INCREMENTS; i++) {
		sfl_series_inc(c);
		sfl_series_observe(h, (gdouble)(i % 4) * 0.5); /* exact in binary */
	}
	return NULL;
}

static void
test_metrics_concurrency(void)
{
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	const gchar *const labels[] = { "lane", NULL };
	const gchar *const values[] = { "shared", NULL };
	const gdouble bounds[] = { 0.25, 0.75, 1.25 };
	TestWorker worker = {
		sfl_metrics_counter(metrics, "sfl_test_hits", "H.", labels),
		sfl_metrics_histogram(metrics, "sfl_test_obs", "O.", labels, bounds, 3),
	};
	GThread *threads[TEST_THREADS];
	SflSeries *s;
	const guint64 total = (guint64)TEST_THREADS * TEST_INCREMENTS;

	for (guint i = 0; i < TEST_THREADS; i++)
		threads[i] = g_thread_new("metrics", test_metrics_worker, &worker);
	for (guint i = 0; i < TEST_THREADS; i++)
		g_thread_join(threads[i]);

	s = sfl_metric_family_series(worker.counter, values);
	g_assert_cmpfloat(sfl_series_get(s), ==, (gdouble)total);
	s = sfl_metric_family_series(worker.histogram, values);
	g_assert_cmpuint(sfl_series_get_count(s), ==, total);
	/* each of 0, 0.5, 1, 1.5 a quarter of the time: sum = count * 0.75 */
	g_assert_cmpfloat(sfl_series_get(s), ==, (gdouble)total * 0.75);
	for (guint b = 0; b <= 3; b++)
		g_assert_cmpuint(sfl_series_get_bucket(s, b), ==, total / 4);
}

/* a third party's reading of our exposition: promtool (Debian package prometheus) parses
 * the text and lints the names */
static void
test_metrics_promtool(void)
{
	const gchar *promtool = "/usr/bin/promtool";
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(GSubprocess) proc = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	const gchar *const source_event[] = { "source", "event_type", NULL };
	const gchar *const reason[] = { "reason", NULL };
	const gchar *const topic[] = { "topic", NULL };
	const gchar *const dropped[] = { "reason", "source", "event_type", "org", NULL };
	const gchar *const label[] = { "label", NULL };
	const gdouble bounds[] = { 1, 5, 15, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400 };
	const gdouble small[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };
	SflMetricFamily *f;

#ifdef G_OS_WIN32
	/* the Windows build runs under wine, which cannot start a Linux program */
	g_test_skip("promtool is a Linux program: not run by the Windows build");
	return;
#endif
	if (!g_file_test(promtool, G_FILE_TEST_IS_EXECUTABLE)) {
		g_test_skip("promtool not installed (Debian package prometheus)");
		return;
	}
	f = sfl_metrics_counter(metrics, "sf2loki_events_ingested",
				"Entries enqueued for Loki, by source and event type.",
				source_event);
	sfl_series_add(sfl_metric_family_series(f, (const gchar *const[]){ "elf", "Login", NULL }),
		       1234);
	sfl_series_inc(sfl_metric_family_series(
		f, (const gchar *const[]){ "pubsub", "Say \"x\"\\y\nz", NULL }));
	sfl_metrics_counter(metrics, "sf2loki_decode_errors", "Decode failures.", reason);
	f = sfl_metrics_gauge(metrics, "sf2loki_pubsub_stream_up", "1 while streaming.", topic);
	sfl_series_set(sfl_metric_family_series(f, (const gchar *const[]){ "/event/A", NULL }), 1);
	sfl_series_set(sfl_metric_family_series(f, (const gchar *const[]){ "/event/B", NULL }),
		       NAN);
	f = sfl_metrics_gauge(metrics, "sf2loki_last_push_success_timestamp_seconds",
			      "Unix time of the last successful push.\nSecond line \\ here.", NULL);
	sfl_series_set(sfl_metric_family_series(f, NULL), 1780000000.123);
	f = sfl_metrics_gauge(metrics, "sf2loki_queue_depth", "Entries queued.", NULL);
	sfl_series_set(sfl_metric_family_series(f, NULL), INFINITY);
	/* the label sets the original's alerts need (SFL-0021, SFL-0061, SFL-0034); an empty
	 * org is how single-org renders */
	f = sfl_metrics_histogram(metrics, "sf2loki_ingest_lag_seconds", "Lag at enqueue.",
				  source_event, bounds, G_N_ELEMENTS(bounds));
	for (guint i = 0; i < 100; i++) {
		sfl_series_observe(
			sfl_metric_family_series(
				f, (const gchar *const[]){ "eventlogfile", "Login", NULL }),
			i * 997.5);
		sfl_series_observe(sfl_metric_family_series(
					   f, (const gchar *const[]){ "pubsub", "/event/X", NULL }),
				   i * 0.1);
	}
	f = sfl_metrics_counter(metrics, "sf2loki_loki_entries_dropped", "Entries dropped.",
				dropped);
	sfl_series_add(sfl_metric_family_series(f, (const gchar *const[]){ "budget", "eventlogfile",
									   "API", "", NULL }),
		       300);
	sfl_series_inc(sfl_metric_family_series(
		f, (const gchar *const[]){ "bad_request", "pubsub", "/event/X", "prod", NULL }));
	f = sfl_metrics_counter(metrics, "sf2loki_label_values_folded", "Folded values.", label);
	sfl_series_inc(sfl_metric_family_series(f, (const gchar *const[]){ "USER_TYPE", NULL }));
	f = sfl_metrics_gauge(metrics, "sf2loki_label_values", "Distinct values.", label);
	sfl_series_set(sfl_metric_family_series(f, (const gchar *const[]){ "USER_TYPE", NULL }),
		       100);
	f = sfl_metrics_histogram(metrics, "sf2loki_loki_push_duration_seconds", "Push wall time.",
				  NULL, small, G_N_ELEMENTS(small));
	sfl_series_observe(sfl_metric_family_series(f, NULL), 0.0731);

	text = sfl_metrics_render_prometheus(metrics);

	/* the exposition on a pipe, as a scraper hands it over */
	proc = g_subprocess_new(G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
					G_SUBPROCESS_FLAGS_STDERR_PIPE,
				&error, promtool, "check", "metrics", NULL);
	g_assert_no_error(error);
	g_subprocess_communicate_utf8(proc, text, NULL, &out, &err, &error);
	g_assert_no_error(error);
	if (!g_subprocess_get_if_exited(proc) || g_subprocess_get_exit_status(proc) != 0)
		g_test_message("promtool said:\n%s%s\non:\n%s", out, err, text);
	g_assert_true(g_subprocess_get_if_exited(proc));
	g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 0);
}

int
main(int argc, char **argv)
{
	g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);

	test_warnings = warnings;
	g_log_set_writer_func(test_metrics_writer, NULL, NULL);
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/metrics/counter", test_metrics_counter);
	g_test_add_func("/metrics/gauge", test_metrics_gauge);
	g_test_add_func("/metrics/histogram", test_metrics_histogram);
	g_test_add_func("/metrics/escaping", test_metrics_escaping);
	g_test_add_func("/metrics/overflow", test_metrics_overflow);
	g_test_add_func("/metrics/same-family", test_metrics_same_family);
	g_test_add_func("/metrics/foreach", test_metrics_foreach);
	g_test_add_func("/metrics/invalid-names", test_metrics_invalid_names);
	g_test_add_func("/metrics/concurrency", test_metrics_concurrency);
	g_test_add_func("/metrics/promtool", test_metrics_promtool);
	return g_test_run();
}
