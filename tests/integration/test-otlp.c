/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestOtlp"

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <string.h>

#include "sfl-curl-loop.h"
#include "sfl-error.h"
#include "sfl-metrics.h"
#include "sfl-otlp.h"
#include "sfl-test-sim.h"

/*
 * OTLP/HTTP metrics push (docs/operations/metrics.md, "OTLP push"). Every request is decoded by
 * tests/sim/otlp_collector.py with protoc-generated python3-protobuf classes from a schema of
 * our own, never with our encoder:
 * - the headers: basic auth inherited from the Loki credentials, a token file, overrides;
 * - the exporter in-process on a fake clock: point kinds, times, buckets, resource
 *   attributes, the final export on shutdown, and failures logged once then rate-limited;
 * - the real binary between the Salesforce and Loki simulators: names, kinds, resource,
 *   no per-series version label, Authorization, cumulative values growing across exports,
 *   and the final export on SIGTERM.
 */

#define EVENT_TIMEOUT_SEC    120
#define DEADLINE_SEC	     30
#define LOKI_TENANT	     "tenant-otlp"
#define LOKI_TOKEN	     "loki-S3cr3t-otlp-token"
#define FAKE_WALL_START_USEC G_GINT64_CONSTANT(1700000000000000)

/* ---- JSON helpers over the collector's /control/received ---------------------------------- */

static json_t *
export_metric(json_t *export, const gchar *name)
{
	gsize i = 0;
	json_t *metric = NULL;

	json_array_foreach (json_object_get(export, "metrics"), i, metric) {
		if (g_strcmp0(json_string_value(json_object_get(metric, "name")), name) == 0)
			return metric;
	}
	return NULL;
}

/* the point of @metric whose attribute @key is @value (any point when @key is NULL) */
static json_t *
metric_point(json_t *metric, const gchar *key, const gchar *value)
{
	gsize i = 0;
	json_t *point = NULL;

	json_array_foreach (json_object_get(metric, "points"), i, point) {
		json_t *attrs = json_object_get(point, "attributes");
		if (key == NULL ||
		    g_strcmp0(json_string_value(json_object_get(attrs, key)), value) == 0)
			return point;
	}
	return NULL;
}

/* the sum of every point's value, -1 when the metric is absent */
static gdouble
metric_total(json_t *export, const gchar *name)
{
	json_t *metric = export_metric(export, name);
	gsize i = 0;
	json_t *point = NULL;
	gdouble total = 0;

	if (metric == NULL)
		return -1;
	json_array_foreach (json_object_get(metric, "points"), i, point)
		total += json_number_value(json_object_get(point, "value"));
	return total;
}

static const gchar *
jstr(json_t *obj, const gchar *key)
{
	return json_string_value(json_object_get(obj, key));
}

static gchar *
basic_auth(const gchar *user, const gchar *token)
{
	g_autofree gchar *pair = g_strdup_printf("%s:%s", user, token);
	g_autofree gchar *b64 = g_base64_encode((const guchar *)pair, strlen(pair));
	return g_strdup_printf("Basic %s", b64);
}

static void
assert_no_rejects(json_t *received)
{
	json_t *rejected = json_object_get(received, "rejected");

	if (json_array_size(rejected) > 0) {
		g_autofree gchar *text = json_dumps(rejected, 0);
		g_error("the collector rejected exports: %s", text);
	}
}

/* ---- captured warnings ---------------------------------------------------------------------- */

static GPtrArray *captured; /* warnings from the exporter */
static gboolean recovered;  /* the exporter said its failures ended */

static GLogWriterOutput
capture_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	const gchar *domain = NULL;
	const gchar *message = NULL;

	for (gsize i = 0; i < n_fields; i++) {
		if (g_strcmp0(fields[i].key, "GLIB_DOMAIN") == 0)
			domain = fields[i].value;
		else if (g_strcmp0(fields[i].key, "MESSAGE") == 0)
			message = fields[i].value;
	}
	if (captured != NULL && g_strcmp0(domain, "SflOtlp") == 0 &&
	    (level & G_LOG_LEVEL_WARNING) != 0) {
		g_ptr_array_add(captured, g_strdup(message));
		return G_LOG_WRITER_HANDLED;
	}
	if (g_strcmp0(domain, "SflOtlp") == 0 && message != NULL &&
	    strstr(message, "recovered") != NULL)
		recovered = TRUE;
	return g_log_writer_default(level, fields, n_fields, user_data);
}

/* ---- headers ------------------------------------------------------------------------------- */

static SflConfigPair *
pair_new(const gchar *key, const gchar *value)
{
	SflConfigPair *pair = g_new0(SflConfigPair, 1);
	pair->key = g_strdup(key);
	pair->value = g_strdup(value);
	return pair;
}

static void
pair_free(gpointer data)
{
	SflConfigPair *pair = data;
	g_free(pair->key);
	g_free(pair->value);
	g_free(pair);
}

static gchar *
headers_joined(const SflTelemetryConfig *tel, const SflLokiConfig *loki)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) headers = sfl_otlp_headers(tel, loki, &error);

	g_assert_no_error(error);
	g_ptr_array_add(headers, NULL);
	return g_strjoinv("|", (gchar **)headers->pdata);
}

static void
test_headers(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dir = g_dir_make_tmp("sfl-otlp-XXXXXX", &error);
	g_autofree gchar *token_file = g_build_filename(dir, "token", NULL);
	g_autofree gchar *inherited = basic_auth("tenant-1", "loki-tok");
	g_autofree gchar *from_file = basic_auth("me", "file-tok");
	g_autoptr(GPtrArray) extra = g_ptr_array_new_with_free_func(pair_free);
	SflLokiConfig loki = { .tenant_id = (gchar *)"tenant-1",
			       .auth_token = (gchar *)"loki-tok" };
	SflTelemetryConfig tel = { .enabled = TRUE, .auth = SFL_TELEMETRY_AUTH_BASIC };

	g_assert_no_error(error);

	/* user and token inherited from the Loki sink */
	{
		g_autofree gchar *got = headers_joined(&tel, &loki);
		g_autofree gchar *want = g_strdup_printf("Authorization: %s", inherited);
		g_assert_cmpstr(got, ==, want);
	}
	/* an explicit user and a token file (trailing newline stripped) win */
	g_assert_true(g_file_set_contents(token_file, "file-tok\n", -1, &error));
	tel.basic_auth_user = (gchar *)"me";
	tel.basic_auth_token_file = token_file;
	{
		g_autofree gchar *got = headers_joined(&tel, &loki);
		g_autofree gchar *want = g_strdup_printf("Authorization: %s", from_file);
		g_assert_cmpstr(got, ==, want);
	}
	/* configured headers replace the computed one whatever their case, and add others */
	g_ptr_array_add(extra, pair_new("authorization", "Bearer override"));
	g_ptr_array_add(extra, pair_new("X-Scope-OrgID", "t1"));
	tel.headers = extra;
	{
		g_autofree gchar *got = headers_joined(&tel, &loki);
		g_assert_cmpstr(got, ==, "authorization: Bearer override|X-Scope-OrgID: t1");
	}
	/* a line break in a value would add a header of its own: refused, naming the key */
	g_ptr_array_add(extra, pair_new("X-Evil", "1\r\nX-Injected: 2"));
	{
		g_autoptr(GPtrArray) headers = sfl_otlp_headers(&tel, &loki, &error);
		g_assert_null(headers);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_assert_nonnull(strstr(error->message, "service.telemetry.headers.X-Evil"));
		g_clear_error(&error);
	}
	g_ptr_array_remove_index(extra, extra->len - 1);
	/* auth none: only the configured headers */
	g_ptr_array_remove_index(extra, 0);
	tel.auth = SFL_TELEMETRY_AUTH_NONE;
	{
		g_autofree gchar *got = headers_joined(&tel, &loki);
		g_assert_cmpstr(got, ==, "X-Scope-OrgID: t1");
	}
	/* a user without any token: no Authorization at all */
	tel.auth = SFL_TELEMETRY_AUTH_BASIC;
	tel.headers = NULL;
	tel.basic_auth_token_file = NULL;
	loki.auth_token = NULL;
	{
		g_autofree gchar *got = headers_joined(&tel, &loki);
		g_assert_cmpstr(got, ==, "");
	}
	/* an unreadable token file is a configuration error naming the key */
	tel.basic_auth_token_file = (gchar *)"/nonexistent/sf2loki/otlp-token";
	{
		g_autoptr(GPtrArray) headers = sfl_otlp_headers(&tel, &loki, &error);
		g_assert_null(headers);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_assert_nonnull(strstr(error->message, "basic_auth_token_file"));
		g_clear_error(&error);
	}
	g_assert_cmpint(g_remove(token_file), ==, 0);
	g_assert_cmpint(g_rmdir(dir), ==, 0);
}

/* ---- the exporter in-process, on a fake clock --------------------------------------------- */

typedef struct {
	SflCurlLoop *loop;
	SflTestSim *collector;
	gchar *base;
	gchar *endpoint;
	SflMetrics *metrics;
	SflClock *clock;
	GPtrArray *resource;
	gboolean refreshed;
	gboolean shut_down;
} ExFx;

static gboolean
exfx_setup(ExFx *fx)
{
	fx->base = sfl_test_otlp_sim_start(NULL, &fx->collector);
	if (fx->base == NULL)
		return FALSE;
	fx->endpoint = g_strconcat(fx->base, "/v1/metrics", NULL);
	fx->loop = sfl_curl_loop_new();
	fx->metrics = sfl_metrics_new();
	fx->clock = sfl_fake_clock_new(FAKE_WALL_START_USEC);
	fx->resource = g_ptr_array_new_with_free_func(pair_free);
	captured = g_ptr_array_new_with_free_func(g_free);
	return TRUE;
}

static void
exfx_teardown(ExFx *fx)
{
	sfl_test_sim_stop(&fx->collector);
	g_clear_pointer(&fx->metrics, sfl_metrics_unref);
	g_clear_pointer(&fx->clock, sfl_clock_unref);
	g_clear_pointer(&fx->resource, g_ptr_array_unref);
	g_clear_object(&fx->loop);
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_clear_pointer(&captured, g_ptr_array_unref);
	g_free(fx->base);
	g_free(fx->endpoint);
}

static void
exfx_refresh_cb(gpointer user_data)
{
	((ExFx *)user_data)->refreshed = TRUE;
}

static void
exfx_shutdown_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	ExFx *fx = user_data;
	fx->shut_down = TRUE;
}

static SflOtlpExporter *
exfx_exporter(ExFx *fx, const gchar *user, const gchar *token)
{
	g_autoptr(GError) error = NULL;
	SflLokiConfig loki = { 0 };
	SflTelemetryConfig tel = {
		.enabled = TRUE,
		.endpoint = fx->endpoint,
		.auth = SFL_TELEMETRY_AUTH_BASIC,
		.basic_auth_user = (gchar *)user,
		.basic_auth_token = (gchar *)token,
		.export_interval = G_USEC_PER_SEC,
		.resource_attributes = fx->resource,
	};
	SflOtlpExporter *otlp =
		sfl_otlp_exporter_new(fx->loop, fx->metrics, fx->clock, &tel, &loki, &error);

	g_assert_no_error(error);
	sfl_otlp_exporter_set_refresh(otlp, exfx_refresh_cb, fx);
	return otlp;
}

/* one timer tick (its export goes out), then the shutdown's final export; both answered */
static void
exfx_tick_then_shutdown(ExFx *fx, SflOtlpExporter *otlp, void (*between)(ExFx *fx))
{
	fx->refreshed = FALSE;
	fx->shut_down = FALSE;
	sfl_otlp_exporter_start(otlp);
	sfl_fake_clock_advance(fx->clock, G_USEC_PER_SEC);
	sfl_test_wait_for(&fx->refreshed, DEADLINE_SEC);
	if (between != NULL)
		between(fx);
	sfl_fake_clock_advance(fx->clock, G_USEC_PER_SEC / 2);
	sfl_otlp_exporter_shutdown_async(otlp, exfx_shutdown_cb, fx);
	sfl_test_wait_for(&fx->shut_down, DEADLINE_SEC);
}

static void
exfx_more_pushes(ExFx *fx)
{
	const gchar *success[] = { "success", NULL };
	sfl_series_inc(
		sfl_metric_family_series(sfl_metrics_counter(fx->metrics, "sf2loki_loki_push", "",
							     (const gchar *[]){ "outcome", NULL }),
					 success));
}

static void
test_exporter_points(void)
{
	ExFx fx = { 0 };
	const gchar *outcome[] = { "outcome", NULL };
	const gchar *event_type[] = { "event_type", NULL };
	const gchar *source_rule[] = { "source", "rule", NULL };
	const gdouble bounds[] = { 1, 5 };
	g_autoptr(SflOtlpExporter) otlp = NULL;
	g_autofree gchar *auth = basic_auth("u", "tok-S3cr3t");
	g_autofree gchar *t0 = g_strdup_printf("%" G_GINT64_FORMAT, FAKE_WALL_START_USEC * 1000);
	g_autofree gchar *t1 = g_strdup_printf("%" G_GINT64_FORMAT,
					       (FAKE_WALL_START_USEC + G_USEC_PER_SEC) * 1000);
	g_autofree gchar *t2 = g_strdup_printf(
		"%" G_GINT64_FORMAT, (FAKE_WALL_START_USEC + 3 * G_USEC_PER_SEC / 2) * 1000);
	json_t *received = NULL;
	json_t *exports = NULL;
	SflMetricFamily *push = NULL;
	SflMetricFamily *lag = NULL;
	SflSeries *hist = NULL;

	if (!exfx_setup(&fx)) {
		exfx_teardown(&fx);
		return;
	}
	push = sfl_metrics_counter(fx.metrics, "sf2loki_loki_push", "Push attempts.", outcome);
	sfl_series_add(sfl_metric_family_series(push, (const gchar *[]){ "success" }), 3);
	sfl_series_inc(sfl_metric_family_series(push, (const gchar *[]){ "retried" }));
	sfl_series_set(
		sfl_metric_family_series(
			sfl_metrics_gauge(fx.metrics, "sf2loki_leader", "Leader.", NULL), NULL),
		-2.5);
	lag = sfl_metrics_histogram(fx.metrics, "sf2loki_ingest_lag_seconds", "Lag.", event_type,
				    bounds, G_N_ELEMENTS(bounds));
	hist = sfl_metric_family_series(lag, (const gchar *[]){ "Login" });
	sfl_series_observe(hist, 0.5);
	sfl_series_observe(hist, 3);
	sfl_series_observe(hist, 100); /* above the last bound: the +Inf bucket */
	/* label values are sent as they are: quotes and non-ASCII need no escaping in OTLP */
	sfl_series_inc(sfl_metric_family_series(
		sfl_metrics_counter(fx.metrics, "sf2loki_rows_filtered", "", source_rule),
		(const gchar *[]){ "a\"b", "r\xc3\xa9gle" }));
	/* a labelled family without series is not sent */
	sfl_metrics_counter(fx.metrics, "sf2loki_auth_errors", "",
			    (const gchar *[]){ "org", NULL });
	g_ptr_array_add(fx.resource, pair_new("service.name", "sf2loki-east"));
	g_ptr_array_add(fx.resource, pair_new("k8s.pod.name", "pod-1"));

	otlp = exfx_exporter(&fx, "u", "tok-S3cr3t");
	exfx_tick_then_shutdown(&fx, otlp, exfx_more_pushes);
	g_assert_cmpuint(sfl_otlp_exporter_get_successes(otlp), ==, 2);
	g_assert_cmpuint(sfl_otlp_exporter_get_failures(otlp), ==, 0);
	g_assert_cmpuint(captured->len, ==, 0);

	received = sfl_test_sim_control(fx.loop, fx.base, "GET", "/control/received", NULL);
	assert_no_rejects(received);
	exports = json_object_get(received, "exports");
	g_assert_cmpuint(json_array_size(exports), ==, 2);
	for (guint i = 0; i < 2; i++) {
		json_t *ex = json_array_get(exports, i);
		json_t *res = json_object_get(ex, "resource");
		json_t *m = NULL;
		json_t *p = NULL;

		g_assert_cmpstr(jstr(ex, "content_type"), ==, "application/x-protobuf");
		g_assert_cmpstr(jstr(ex, "auth"), ==, auth);
		g_assert_cmpstr(jstr(res, "service.name"), ==, "sf2loki-east");
		g_assert_cmpstr(jstr(res, "service.version"), ==, PACKAGE_VERSION);
		g_assert_cmpstr(jstr(res, "k8s.pod.name"), ==, "pod-1");
		g_assert_cmpuint(json_object_size(res), ==, 3);
		g_assert_cmpuint(json_array_size(json_object_get(ex, "metrics")), ==, 4);
		g_assert_null(export_metric(ex, "sf2loki_auth_errors"));

		m = export_metric(ex, "sf2loki_loki_push");
		g_assert_cmpstr(jstr(m, "kind"), ==, "sum");
		g_assert_cmpstr(jstr(m, "temporality"), ==, "AGGREGATION_TEMPORALITY_CUMULATIVE");
		g_assert_true(json_is_true(json_object_get(m, "monotonic")));
		g_assert_cmpstr(jstr(m, "description"), ==, "Push attempts.");
		p = metric_point(m, "outcome", "success");
		g_assert_cmpfloat(json_number_value(json_object_get(p, "value")), ==,
				  i == 0 ? 3 : 4);
		g_assert_cmpstr(jstr(p, "start"), ==, t0);
		g_assert_cmpstr(jstr(p, "time"), ==, i == 0 ? t1 : t2);
		p = metric_point(m, "outcome", "retried");
		g_assert_cmpfloat(json_number_value(json_object_get(p, "value")), ==, 1);

		m = export_metric(ex, "sf2loki_leader");
		g_assert_cmpstr(jstr(m, "kind"), ==, "gauge");
		p = metric_point(m, NULL, NULL);
		g_assert_cmpfloat(json_number_value(json_object_get(p, "value")), ==, -2.5);
		g_assert_cmpuint(json_object_size(json_object_get(p, "attributes")), ==, 0);

		m = export_metric(ex, "sf2loki_ingest_lag_seconds");
		g_assert_cmpstr(jstr(m, "kind"), ==, "histogram");
		g_assert_cmpstr(jstr(m, "temporality"), ==, "AGGREGATION_TEMPORALITY_CUMULATIVE");
		p = metric_point(m, "event_type", "Login");
		g_assert_cmpint(json_integer_value(json_object_get(p, "count")), ==, 3);
		g_assert_cmpfloat(json_number_value(json_object_get(p, "sum")), ==, 103.5);
		{
			g_autofree gchar *counts =
				json_dumps(json_object_get(p, "bucket_counts"), JSON_COMPACT);
			g_autofree gchar *bnds =
				json_dumps(json_object_get(p, "explicit_bounds"), JSON_COMPACT);
			g_assert_cmpstr(counts, ==, "[1,1,1]");
			g_assert_cmpstr(bnds, ==, "[1.0,5.0]");
		}
		g_assert_cmpstr(jstr(p, "start"), ==, t0);

		m = export_metric(ex, "sf2loki_rows_filtered");
		p = metric_point(m, "source", "a\"b");
		g_assert_nonnull(p);
		g_assert_cmpstr(jstr(json_object_get(p, "attributes"), "rule"), ==, "r\xc3\xa9gle");
	}
	json_decref(received);
	g_clear_pointer(&otlp, sfl_otlp_exporter_free);
	exfx_teardown(&fx);
}

typedef struct {
	SflOtlpExporter *otlp;
	guint64 failures;
	guint64 successes;
} Answered;

static gboolean
answered_cb(gpointer data)
{
	Answered *a = data;
	return sfl_otlp_exporter_get_failures(a->otlp) == a->failures &&
	       sfl_otlp_exporter_get_successes(a->otlp) == a->successes;
}

/* moves the fake clock by @usec (one timer tick) and waits for that export's answer */
static void
exfx_tick(ExFx *fx, SflOtlpExporter *otlp, gint64 usec, guint64 failures, guint64 successes)
{
	Answered a = { otlp, failures, successes };

	sfl_fake_clock_advance(fx->clock, usec);
	sfl_test_poll_until(answered_cb, &a, DEADLINE_SEC, "the export's answer");
}

static void
test_exporter_failures(void)
{
	ExFx fx = { 0 };
	g_autoptr(SflOtlpExporter) otlp = NULL;
	g_autofree gchar *auth = basic_auth("u", "tok-S3cr3t");
	json_t *received = NULL;
	json_t *exports = NULL;

	if (!exfx_setup(&fx)) {
		exfx_teardown(&fx);
		return;
	}
	recovered = FALSE;
	sfl_series_set(sfl_metric_family_series(
			       sfl_metrics_gauge(fx.metrics, "sf2loki_leader", "", NULL), NULL),
		       1);
	json_decref(sfl_test_sim_control(fx.loop, fx.base, "POST", "/control/fault",
					 "{\"count\": 3, \"status\": 401}"));
	otlp = exfx_exporter(&fx, "u", "tok-S3cr3t");
	sfl_otlp_exporter_start(otlp);

	/* the first failure of a streak is a warning naming the status, with a hint */
	exfx_tick(&fx, otlp, G_USEC_PER_SEC, 1, 0);
	g_assert_cmpuint(captured->len, ==, 1);
	g_assert_nonnull(strstr(g_ptr_array_index(captured, 0), "HTTP 401"));
	g_assert_nonnull(strstr(g_ptr_array_index(captured, 0), "basic-auth"));
	/* the next one, a second later, is only counted */
	exfx_tick(&fx, otlp, G_USEC_PER_SEC, 2, 0);
	g_assert_cmpuint(captured->len, ==, 1);
	/* five minutes on, one summary line */
	exfx_tick(&fx, otlp, 5 * 60 * G_USEC_PER_SEC, 3, 0);
	g_assert_cmpuint(captured->len, ==, 2);
	g_assert_nonnull(strstr(g_ptr_array_index(captured, 1), "3 consecutive failures"));
	g_assert_false(recovered);
	/* then the collector accepts again, and the exporter says so */
	exfx_tick(&fx, otlp, G_USEC_PER_SEC, 3, 1);
	g_assert_true(recovered);
	g_assert_cmpuint(captured->len, ==, 2);
	for (guint i = 0; i < captured->len; i++) {
		g_assert_null(strstr(g_ptr_array_index(captured, i), "tok-S3cr3t"));
		g_assert_null(strstr(g_ptr_array_index(captured, i), auth + strlen("Basic ")));
	}

	received = sfl_test_sim_control(fx.loop, fx.base, "GET", "/control/received", NULL);
	assert_no_rejects(received);
	exports = json_object_get(received, "exports");
	g_assert_cmpuint(json_array_size(exports), ==, 4);
	for (guint i = 0; i < 4; i++) {
		g_assert_cmpint(
			json_integer_value(json_object_get(json_array_get(exports, i), "status")),
			==, i < 3 ? 401 : 200);
	}
	json_decref(received);
	g_clear_pointer(&otlp, sfl_otlp_exporter_free);
	exfx_teardown(&fx);
}

/* ---- the real binary ------------------------------------------------------------------------ */

typedef struct {
	SflTestSims sims;
	gchar *config;
	gchar *otlp_base;
	SflTestSim *collector;
	SflTestDaemon *run;
	gconstpointer want; /* what the condition being awaited looks for */
	gboolean skip;
} Fx;

static gchar *
elf_file(const gchar *id, gint64 created_usec, guint seed)
{
	g_autofree gchar *created = sfl_test_sf_datetime(created_usec);
	return g_strdup_printf(
		"{\"Id\": \"%s\", \"EventType\": \"Login\", \"Interval\": \"Hourly\", "
		"\"LogDate\": \"%s\", \"CreatedDate\": \"%s\", \"Sequence\": 0, "
		"\"generate\": {\"rows\": 20, \"kind\": \"Login\", \"seed\": %u}}",
		id, created, created, seed);
}

static void
fx_setup(Fx *fx, gconstpointer export_interval)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *file =
		elf_file("0ATSIM00000OTLP1", g_get_real_time() - 3 * G_TIME_SPAN_HOUR, 7);
	g_autofree gchar *dataset = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
	g_autofree gchar *state = NULL;
	g_autofree gchar *head = NULL;
	g_autofree gchar *yaml = NULL;
	const gchar *loki_args[] = { "--tenant", LOKI_TENANT, "--token", LOKI_TOKEN, NULL };

	if (sfl_test_sims_start(&fx->sims, "sfl-otlp-run-XXXXXX", dataset, loki_args))
		fx->otlp_base = sfl_test_otlp_sim_start(NULL, &fx->collector);
	if (fx->otlp_base == NULL) {
		fx->skip = TRUE;
		return;
	}
	fx->config = g_build_filename(fx->sims.dir, "config.yaml", NULL);
	state = g_build_filename(fx->sims.dir, "state.json", NULL);
	head = sfl_test_sims_config(&fx->sims, NULL, NULL);
	yaml = g_strdup_printf("%s"
			       "    tenant_id: " LOKI_TENANT "\n"
			       "    auth_token: " LOKI_TOKEN "\n"
			       "    batch:\n"
			       "      flush_interval: 100ms\n"
			       "service:\n"
			       "  log_format: json\n"
			       "  shutdown_grace: 20s\n"
			       "  telemetry:\n"
			       "    enabled: true\n"
			       "    endpoint: %s/v1/metrics\n"
			       "    export_interval: %s\n"
			       "    resource_attributes: {deployment.environment: otlp-test}\n"
			       "state:\n"
			       "  file:\n"
			       "    path: %s\n"
			       "sources:\n"
			       "  eventlogfile:\n"
			       "    enabled: true\n"
			       "    event_types: [Login]\n"
			       "    poll_interval: 1s\n",
			       head, fx->otlp_base, (const gchar *)export_interval, state);
	g_assert_true(g_file_set_contents(fx->config, yaml, -1, &error));
	fx->run = sfl_test_daemon_start(fx->config, NULL);
}

/* the collector and the simulators change without telling us: @cond is asked again */
static void
fx_wait(Fx *fx, SflTestCondFunc cond, gconstpointer want, const gchar *what)
{
	fx->want = want;
	sfl_test_poll_until(cond, fx, EVENT_TIMEOUT_SEC, what);
}

static json_t *
fx_received(Fx *fx)
{
	json_t *received = sfl_test_sim_control(fx->sims.loop, fx->otlp_base, "GET",
						"/control/received", NULL);
	assert_no_rejects(received);
	return received;
}

/* some export counted at least *@data events (from every Login row read) */
static gboolean
fx_export_with_events(gpointer data)
{
	Fx *fx = data;
	gdouble want = *(const gdouble *)fx->want;
	json_t *received = fx_received(fx);
	json_t *exports = json_object_get(received, "exports");
	gboolean found = FALSE;

	for (gsize i = 0; i < json_array_size(exports) && !found; i++)
		found = metric_total(json_array_get(exports, i), "sf2loki_events_ingested") >= want;
	json_decref(received);
	return found;
}

/* an export counted more successful pushes than the first one that counted 20 events did */
static gboolean
fx_export_with_later_pushes(gpointer data)
{
	Fx *fx = data;
	json_t *received = fx_received(fx);
	json_t *exports = json_object_get(received, "exports");
	gdouble first = -1;
	gboolean found = FALSE;

	for (gsize i = 0; i < json_array_size(exports) && !found; i++) {
		json_t *ex = json_array_get(exports, i);
		gdouble pushes = json_number_value(json_object_get(
			metric_point(export_metric(ex, "sf2loki_loki_push"), "outcome", "success"),
			"value"));

		if (first < 0 && metric_total(ex, "sf2loki_events_ingested") == 20)
			first = pushes;
		else if (first >= 0 && pushes > first)
			found = TRUE;
	}
	json_decref(received);
	return found;
}

static gboolean
fx_loki_entries(gpointer data)
{
	Fx *fx = data;
	json_t *summary = sfl_test_sim_control(fx->sims.loop, fx->sims.loki_base, "GET",
					       "/control/summary?field=REQUEST_ID", NULL);
	gboolean done = json_integer_value(json_object_get(summary, "entries")) >=
			GPOINTER_TO_INT(fx->want);
	json_decref(summary);
	return done;
}

static void
fx_teardown(Fx *fx, gconstpointer data)
{
	g_clear_pointer(&fx->run, sfl_test_daemon_free);
	sfl_test_sim_stop(&fx->collector);
	sfl_test_sims_clear(&fx->sims);
	g_free(fx->config);
	g_free(fx->otlp_base);
}

/* what every export of the daemon must satisfy, whatever its values */
static void
assert_daemon_export(json_t *ex, const gchar *start)
{
	g_autofree gchar *auth = basic_auth(LOKI_TENANT, LOKI_TOKEN);
	json_t *res = json_object_get(ex, "resource");
	json_t *metrics = json_object_get(ex, "metrics");
	json_t *m = NULL;
	json_t *p = NULL;
	gsize i = 0;

	g_assert_cmpstr(jstr(ex, "path"), ==, "/v1/metrics");
	g_assert_cmpstr(jstr(ex, "content_type"), ==, "application/x-protobuf");
	/* basic auth inherited from sink.loki: tenant_id and auth_token */
	g_assert_cmpstr(jstr(ex, "auth"), ==, auth);
	g_assert_cmpstr(jstr(res, "service.name"), ==, "sf2loki");
	g_assert_cmpstr(jstr(res, "service.version"), ==, PACKAGE_VERSION);
	g_assert_cmpstr(jstr(res, "deployment.environment"), ==, "otlp-test");
	g_assert_cmpstr(jstr(json_array_get(json_object_get(ex, "scopes"), 0), "name"), ==,
			"sf2loki");

	json_array_foreach (metrics, i, m) {
		const gchar *name = jstr(m, "name");
		const gchar *kind = jstr(m, "kind");
		gsize k = 0;

		/* unsuffixed: the OTLP→Prometheus translation adds _total and the rest */
		g_assert_true(g_str_has_prefix(name, "sf2loki_"));
		g_assert_false(g_str_has_suffix(name, "_total"));
		g_assert_false(g_str_has_suffix(name, "_bucket"));
		if (g_strcmp0(kind, "sum") == 0 || g_strcmp0(kind, "histogram") == 0)
			g_assert_cmpstr(jstr(m, "temporality"), ==,
					"AGGREGATION_TEMPORALITY_CUMULATIVE");
		json_array_foreach (json_object_get(m, "points"), k, p) {
			json_t *attrs = json_object_get(p, "attributes");
			/* SFL-0001: the version is on the resource and build_info only */
			if (g_strcmp0(name, "sf2loki_build_info") != 0)
				g_assert_null(json_object_get(attrs, "version"));
			g_assert_cmpstr(jstr(p, "start"), ==, start);
			g_assert_cmpuint(g_ascii_strtoull(jstr(p, "time"), NULL, 10), >=,
					 g_ascii_strtoull(start, NULL, 10));
		}
	}
	m = export_metric(ex, "sf2loki_build_info");
	g_assert_cmpstr(jstr(m, "kind"), ==, "gauge");
	p = metric_point(m, "version", PACKAGE_VERSION);
	g_assert_nonnull(p);
	g_assert_cmpfloat(json_number_value(json_object_get(p, "value")), ==, 1);
	g_assert_cmpstr(jstr(export_metric(ex, "sf2loki_leader"), "kind"), ==, "gauge");
	g_assert_cmpstr(jstr(export_metric(ex, "sf2loki_queue_depth"), "kind"), ==, "gauge");
}

/* the start of the daemon's points (process start): the same in every export */
static const gchar *
daemon_start_time(json_t *exports)
{
	json_t *m = export_metric(json_array_get(exports, 0), "sf2loki_build_info");
	return jstr(metric_point(m, NULL, NULL), "start");
}

static void
test_run_periodic(Fx *fx, gconstpointer data)
{
	json_t *received = NULL;
	json_t *exports = NULL;
	json_t *first = NULL;
	json_t *last = NULL;
	const gchar *start = NULL;
	gdouble twenty = 20;
	gdouble forty = 40;
	guint64 first_time = 0;

	if (fx->skip)
		return;
	fx_wait(fx, fx_export_with_events, &twenty, "an export counting the first 20 rows");
	/* a second file: the next exports must count 40, not the 20 new ones (cumulative) */
	{
		g_autofree gchar *file =
			elf_file("0ATSIM00000OTLP2", g_get_real_time() - G_TIME_SPAN_HOUR, 8);
		g_autofree gchar *doc = g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
		json_decref(sfl_test_sim_control(fx->sims.loop, fx->sims.sf_base, "POST",
						 "/control/add", doc));
	}
	fx_wait(fx, fx_export_with_events, &forty, "an export counting all 40 rows");
	/* without it only the shutdown's export (not sent where the daemon is killed: Windows) is
	 * sure to count the second file's push */
	fx_wait(fx, fx_export_with_later_pushes, NULL, "an export counting the second file's push");
	sfl_test_daemon_finish(fx->run, EVENT_TIMEOUT_SEC);

	received = fx_received(fx);
	exports = json_object_get(received, "exports");
	g_assert_cmpuint(json_array_size(exports), >=, 3);
	start = daemon_start_time(exports);
	g_assert_nonnull(start);
	for (gsize i = 0; i < json_array_size(exports); i++)
		assert_daemon_export(json_array_get(exports, i), start);

	for (gsize i = 0; i < json_array_size(exports) && first == NULL; i++) {
		if (metric_total(json_array_get(exports, i), "sf2loki_events_ingested") == 20)
			first = json_array_get(exports, i);
	}
	g_assert_nonnull(first);
	last = json_array_get(exports, json_array_size(exports) - 1);
	first_time = g_ascii_strtoull(
		jstr(metric_point(export_metric(first, "sf2loki_events_ingested"), NULL, NULL),
		     "time"),
		NULL, 10);
	g_assert_cmpfloat(metric_total(last, "sf2loki_events_ingested"), ==, 40);
	g_assert_cmpuint(
		g_ascii_strtoull(jstr(metric_point(export_metric(last, "sf2loki_events_ingested"),
						   NULL, NULL),
				      "time"),
				 NULL, 10),
		>, first_time);
	g_assert_cmpstr(jstr(export_metric(last, "sf2loki_events_ingested"), "kind"), ==, "sum");
	g_assert_true(json_is_true(
		json_object_get(export_metric(last, "sf2loki_events_ingested"), "monotonic")));
	g_assert_cmpstr(jstr(export_metric(last, "sf2loki_loki_push"), "kind"), ==, "sum");
	g_assert_cmpfloat(json_number_value(json_object_get(
				  metric_point(export_metric(last, "sf2loki_loki_push"), "outcome",
					       "success"),
				  "value")),
			  >,
			  json_number_value(json_object_get(
				  metric_point(export_metric(first, "sf2loki_loki_push"), "outcome",
					       "success"),
				  "value")));
	{
		json_t *lag = export_metric(last, "sf2loki_ingest_lag_seconds");
		json_t *p = metric_point(lag, "event_type", "Login");
		g_assert_cmpstr(jstr(lag, "kind"), ==, "histogram");
		g_assert_cmpint(json_integer_value(json_object_get(p, "count")), ==, 40);
		g_assert_cmpuint(json_array_size(json_object_get(p, "explicit_bounds")), ==, 12);
		g_assert_cmpuint(json_array_size(json_object_get(p, "bucket_counts")), ==, 13);
	}
	g_test_message("%" G_GSIZE_FORMAT " exports; the last: %" G_GINT64_FORMAT
		       " bytes, %" G_GSIZE_FORMAT " metrics",
		       json_array_size(exports),
		       (gint64)json_integer_value(json_object_get(last, "body_bytes")),
		       json_array_size(json_object_get(last, "metrics")));
	/* the token never reaches the daemon's log */
	for (guint i = 0; i < fx->run->lines->len; i++)
		g_assert_null(strstr(g_ptr_array_index(fx->run->lines, i), LOKI_TOKEN));
	json_decref(received);
}

static void
test_run_final_export(Fx *fx, gconstpointer data)
{
	json_t *received = NULL;
	json_t *exports = NULL;
	json_t *ex = NULL;

	/* the export this case is about is the one an orderly stop sends */
	if (fx->skip || sfl_test_skip_without_signals())
		return;
	/* the export interval is 1h: an export received is the shutdown's */
	fx_wait(fx, fx_loki_entries, GINT_TO_POINTER(20), "20 entries in Loki");
	received = fx_received(fx);
	g_assert_cmpuint(json_array_size(json_object_get(received, "exports")), ==, 0);
	json_decref(received);
	g_assert_cmpint(sfl_test_daemon_stop(fx->run, EVENT_TIMEOUT_SEC), ==, 0);

	received = fx_received(fx);
	exports = json_object_get(received, "exports");
	g_assert_cmpuint(json_array_size(exports), ==, 1);
	ex = json_array_get(exports, 0);
	assert_daemon_export(ex, daemon_start_time(exports));
	g_assert_cmpfloat(metric_total(ex, "sf2loki_events_ingested"), ==, 20);
	/* the pipeline stopped before the export: leader is 0 */
	g_assert_cmpfloat(metric_total(ex, "sf2loki_leader"), ==, 0);
	json_decref(received);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_log_set_writer_func(capture_writer, NULL, NULL);
	g_test_add_func("/otlp/headers", test_headers);
	g_test_add_func("/otlp/exporter/points", test_exporter_points);
	g_test_add_func("/otlp/exporter/failures", test_exporter_failures);
	g_test_add("/otlp/run/periodic", Fx, "200ms", fx_setup, test_run_periodic, fx_teardown);
	/* no periodic export within the test */
	g_test_add("/otlp/run/final-export", Fx, "1h", fx_setup, test_run_final_export,
		   fx_teardown);
	return g_test_run();
}
