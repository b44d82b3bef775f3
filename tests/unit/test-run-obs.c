/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestRunObs"

#include "config.h"

#include <string.h>

#include "sfl-config.h"
#include "sfl-run-obs.h"

/*
 * What the run derives from its commits and failures: the readiness reasons of
 * docs/operations/health.md, the commit-derived gauges of docs/operations/metrics.md (with
 * SFL-0016 fixed and the objects cursor's own time), and the positions /statusz lists.
 */

#define SINGLE_ORG                                                                                 \
	"salesforce: {client_id: c, username: u, private_key: k}\n"                                \
	"sink: {loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}}\n"

#define MULTI_ORG                                                                                  \
	"orgs:\n"                                                                                  \
	"  - {name: alpha, salesforce: {client_id: c, username: u, private_key: k}}\n"             \
	"  - {name: beta, salesforce: {client_id: c, username: u, private_key: k}}\n"              \
	"sink: {loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}}\n"

static SflConfig *
load(const gchar *yaml)
{
	g_autoptr(GError) error = NULL;
	gchar *envp[] = { NULL };
	SflConfig *config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", envp, &error);

	g_assert_no_error(error);
	return config;
}

static gdouble
gauge(SflMetrics *metrics, const gchar *name, const gchar *const *labels,
      const gchar *const *values)
{
	SflMetricFamily *family = sfl_metrics_gauge(metrics, name, "", labels);
	return sfl_series_get(sfl_metric_family_series(family, values));
}

static void
test_degraded(void)
{
	g_autoptr(SflConfig) config =
		load(SINGLE_ORG "service: {unready_after_sink_failing: 30s}\n");
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflRunObs) obs = sfl_run_obs_new(config, metrics);
	gint64 t0 = 1000 * G_USEC_PER_SEC;
	gchar *r = NULL;

	g_assert_null(sfl_run_obs_degraded(obs, NULL, 0, 0, t0));
	/* at the threshold, not yet; past it, in whole seconds under a minute */
	g_assert_null(sfl_run_obs_degraded(obs, NULL, t0, 0, t0 + 30 * G_USEC_PER_SEC));
	r = sfl_run_obs_degraded(obs, NULL, t0, 0, t0 + 59 * G_USEC_PER_SEC + 999999);
	g_assert_cmpstr(r, ==, "degraded: loki pushes failing for 59s");
	g_free(r);
	/* minutes, truncated */
	r = sfl_run_obs_degraded(obs, NULL, t0, 0, t0 + 179 * G_USEC_PER_SEC);
	g_assert_cmpstr(r, ==, "degraded: loki pushes failing for 2m");
	g_free(r);
	/* an org's authentication comes first */
	r = sfl_run_obs_degraded(obs, "beta", t0, 0, t0 + 179 * G_USEC_PER_SEC);
	g_assert_cmpstr(r, ==, "degraded: org beta auth failing");
	g_free(r);
	/* failing checkpoint commits, formatted the same way, after a failing Loki */
	g_assert_null(sfl_run_obs_degraded(obs, NULL, 0, t0, t0 + 30 * G_USEC_PER_SEC));
	r = sfl_run_obs_degraded(obs, NULL, 0, t0, t0 + 45 * G_USEC_PER_SEC);
	g_assert_cmpstr(r, ==, "degraded: checkpoint commits failing for 45s");
	g_free(r);
	r = sfl_run_obs_degraded(obs, NULL, 0, t0,
				 t0 + 3 * 60 * G_USEC_PER_SEC + 59 * G_USEC_PER_SEC);
	g_assert_cmpstr(r, ==, "degraded: checkpoint commits failing for 3m");
	g_free(r);
	r = sfl_run_obs_degraded(obs, NULL, t0, t0, t0 + 179 * G_USEC_PER_SEC);
	g_assert_cmpstr(r, ==, "degraded: loki pushes failing for 2m");
	g_free(r);
}

static void
test_degraded_disabled(void)
{
	g_autoptr(SflConfig) config =
		load(SINGLE_ORG "service: {unready_after_sink_failing: 0s}\n");
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflRunObs) obs = sfl_run_obs_new(config, metrics);

	g_assert_null(
		sfl_run_obs_degraded(obs, NULL, G_USEC_PER_SEC, G_USEC_PER_SEC, G_TIME_SPAN_HOUR));
}

static void
test_gauges_single_org(void)
{
	g_autoptr(SflConfig) config = load(SINGLE_ORG);
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflRunObs) obs = sfl_run_obs_new(config, metrics);
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	const gchar *labels[] = { "source", "object", NULL };
	const gchar *topic[] = { "topic", NULL };
	gint64 now = G_GINT64_CONSTANT(1790000000) * G_USEC_PER_SEC;
	g_autofree gchar *text = NULL;

	sfl_state_doc_set(doc, "eventlogfile:Login",
			  "{\"ids\": [[\"0AT1\", \"2026-11-30T10:00:00.000+0000\"]], "
			  "\"last_created\": \"2026-11-30T10:00:00.000+0000\"}");
	sfl_state_doc_set(doc, "eventlog_objects:LoginEvent",
			  "{\"ids\": [], \"last_ts\": \"2026-11-30T09:00:00.000Z\"}");
	/* a value without its time still proves progress: the commit time stands in */
	sfl_state_doc_set(doc, "eventlog_objects:ApiEvent", "not json");
	sfl_state_doc_set(doc, "pubsub:/event/LoginEventStream", "AAAAAAAA");
	/* another mode's key cannot carry this mode's labels */
	sfl_state_doc_set(doc, "org=alpha:eventlogfile:API", "{\"last_created\": \"x\"}");
	sfl_run_obs_committed(obs, doc, now);

	g_assert_cmpfloat(gauge(metrics, "sf2loki_watermark_timestamp_seconds", labels,
				(const gchar *[]){ "eventlogfile", "Login" }),
			  ==, 1796032800.0);
	g_assert_cmpfloat(gauge(metrics, "sf2loki_watermark_timestamp_seconds", labels,
				(const gchar *[]){ "eventlog_objects", "LoginEvent" }),
			  ==, 1796029200.0);
	g_assert_cmpfloat(gauge(metrics, "sf2loki_watermark_timestamp_seconds", labels,
				(const gchar *[]){ "eventlog_objects", "ApiEvent" }),
			  ==, 1790000000.0);
	g_assert_cmpfloat(gauge(metrics, "sf2loki_last_replay_commit_timestamp_seconds", topic,
				(const gchar *[]){ "/event/LoginEventStream" }),
			  ==, 1790000000.0);
	text = sfl_metrics_render_prometheus(metrics);
	g_assert_null(strstr(text, "API"));
}

static void
test_gauges_multi_org(void)
{
	g_autoptr(SflConfig) config = load(MULTI_ORG);
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflRunObs) obs = sfl_run_obs_new(config, metrics);
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	const gchar *labels[] = { "source", "object", "org", NULL };
	g_autofree gchar *text = NULL;

	/* SFL-0016: the original never showed these for prefixed keys */
	sfl_state_doc_set(doc, "org=beta:eventlogfile:URI",
			  "{\"ids\": [], \"last_created\": \"2026-11-30T10:00:00.000+0000\"}");
	sfl_state_doc_set(doc, "eventlogfile:API", "{\"last_created\": \"2026-11-30T10:00:00Z\"}");
	sfl_state_doc_set(doc, "org=broken", "{}");
	sfl_run_obs_committed(obs, doc, G_GINT64_CONSTANT(1790000000) * G_USEC_PER_SEC);
	g_assert_cmpfloat(gauge(metrics, "sf2loki_watermark_timestamp_seconds", labels,
				(const gchar *[]){ "eventlogfile", "URI", "beta" }),
			  ==, 1796032800.0);
	text = sfl_metrics_render_prometheus(metrics);
	g_assert_null(strstr(text, "object=\"API\""));
}

static void
test_checkpoints(void)
{
	g_autoptr(SflConfig) config = load(SINGLE_ORG);
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflRunObs) obs = sfl_run_obs_new(config, metrics);
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	g_autoptr(SflStateDoc) later = sfl_state_doc_new();
	g_autoptr(GString) window = g_string_new("{\"ids\": [");
	json_t *list = NULL;
	json_t *item = NULL;
	const gchar *cut = NULL;

	for (guint i = 0; i < 50; i++)
		g_string_append_printf(window, "%s\"0AT%04u\"", i > 0 ? ", " : "", i);
	g_string_append(window, "]}");
	sfl_state_doc_set(doc, "eventlogfile:Login", "{\"last_created\": \"2026-11-30T10:00Z\"}");
	sfl_state_doc_set(doc, "custom", "plain");
	sfl_state_doc_set(doc, "big", window->str);
	sfl_run_obs_committed(obs, doc, 100 * G_USEC_PER_SEC);
	sfl_state_doc_set(later, "custom", "plain-2");
	sfl_run_obs_committed(obs, later, 110 * G_USEC_PER_SEC);

	list = sfl_run_obs_checkpoints(obs, 130 * G_USEC_PER_SEC);
	g_assert_cmpuint(json_array_size(list), ==, 3);
	/* sorted by key */
	item = json_array_get(list, 0);
	g_assert_cmpstr(json_string_value(json_object_get(item, "key")), ==, "big");
	cut = json_string_value(json_object_get(item, "position"));
	g_assert_nonnull(cut);
	g_assert_true(g_str_has_suffix(cut, "…"));
	g_assert_cmpuint(strlen(cut), <, window->len);
	g_assert_cmpfloat(json_real_value(json_object_get(item, "age_seconds")), ==, 30.0);
	item = json_array_get(list, 1);
	g_assert_cmpstr(json_string_value(json_object_get(item, "key")), ==, "custom");
	g_assert_cmpstr(json_string_value(json_object_get(item, "position")), ==, "plain-2");
	g_assert_cmpfloat(json_real_value(json_object_get(item, "age_seconds")), ==, 20.0);
	g_assert_cmpstr(json_string_value(json_object_get(item, "committed_at")), ==,
			"1970-01-01T00:01:50Z");
	item = json_array_get(list, 2);
	g_assert_cmpstr(json_string_value(
				json_object_get(json_object_get(item, "position"), "last_created")),
			==, "2026-11-30T10:00Z");
	json_decref(list);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/run-obs/degraded", test_degraded);
	g_test_add_func("/sfl/run-obs/degraded-disabled", test_degraded_disabled);
	g_test_add_func("/sfl/run-obs/gauges-single-org", test_gauges_single_org);
	g_test_add_func("/sfl/run-obs/gauges-multi-org", test_gauges_multi_org);
	g_test_add_func("/sfl/run-obs/checkpoints", test_checkpoints);
	return g_test_run();
}
