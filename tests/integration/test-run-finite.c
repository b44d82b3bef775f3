/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestRunFinite"

#include "config.h"

#include <gio/gio.h>
#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-curl-loop.h"
#include "sfl-test-sim.h"

/*
 * A finite run (docs/cli.md, "run"): a Pub/Sub-only configuration whose "*" discovery finds no
 * topic and that never rediscovers has nothing to read once discovery answered, so `run`
 * exits 0 after saying why, as the original's pipeline ends with its sources. Under a lease
 * every replica does, each once it has led. The Salesforce simulator's describeGlobal lists
 * no event channel without a dataset; no Pub/Sub endpoint is ever contacted.
 */

#define EVENT_TIMEOUT_SEC 60

typedef struct {
	gchar *dir;
	gchar *config;
	gchar *sf_base; /* NULL: the simulator could not start, the test was skipped */
	SflTestSim *sf_proc;
	SflCurlLoop *loop;
} Fx;

/* a Pub/Sub-only configuration: "*" without rediscovery; @ha adds a file lease */
static gboolean
fx_setup(Fx *fx, gboolean ha)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *coordinate = NULL;

	fx->dir = g_dir_make_tmp("sfl-run-finite-XXXXXX", &error);
	g_assert_no_error(error);
	fx->config = g_build_filename(fx->dir, "config.yaml", NULL);
	fx->loop = sfl_curl_loop_new();
	fx->sf_base = sfl_test_sf_sim_start(NULL, &fx->sf_proc);
	if (fx->sf_base == NULL)
		return FALSE;
	if (ha)
		coordinate = g_strdup_printf(
			"coordinate:\n"
			"  type: file_lease\n"
			"  file_lease: {path: '%s/leader.lease', ttl: 2s, renew_interval: 500ms}\n",
			fx->dir);
	yaml = g_strdup_printf(SFL_TEST_SF_SIM_SALESFORCE
			       "sources:\n"
			       "  pubsub:\n"
			       "    endpoint: 127.0.0.1:9\n"
			       "    topics: ['*']\n"
			       "    rediscovery_interval: 0s\n"
			       "sink:\n"
			       "  loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}\n"
			       "state:\n"
			       "  file: {path: '%s/state.json'}\n"
			       "service: {log_format: json, shutdown_grace: 5s}\n"
			       "%s",
			       fx->sf_base, fx->dir, coordinate != NULL ? coordinate : "");
	g_assert_true(g_file_set_contents(fx->config, yaml, -1, &error));
	return TRUE;
}

static void
fx_teardown(Fx *fx)
{
	sfl_test_sim_stop(&fx->sf_proc);
	g_clear_object(&fx->loop);
	while (g_main_context_iteration(NULL, FALSE))
		;
	sfl_test_rmtree(fx->dir);
	g_free(fx->dir);
	g_free(fx->config);
	g_free(fx->sf_base);
}

/* the number of describeGlobal calls the simulator answered */
static guint
fx_describe_calls(Fx *fx)
{
	g_autoptr(json_t) stats =
		sfl_test_sim_control(fx->loop, fx->sf_base, "GET", "/control/stats", NULL);
	json_t *requests = json_object_get(stats, "requests");
	json_t *request = NULL;
	gsize i = 0;
	guint n = 0;

	json_array_foreach (requests, i, request) {
		const gchar *path = json_string_value(json_object_get(request, "path"));
		if (path != NULL &&
		    (g_str_has_suffix(path, "/sobjects/") || g_str_has_suffix(path, "/sobjects")))
			n++;
	}
	return n;
}

/* the exit came from the finished sources, after discovery, with the reason logged */
static void
assert_finite_exit(Fx *fx, SflTestDaemon *d)
{
	g_assert_cmpint(sfl_test_daemon_wait_exit(d, EVENT_TIMEOUT_SEC), ==, 0);
	g_assert_true(
		sfl_test_daemon_logged(d, "\"leader: pipeline run started with 1 source(s)\""));
	g_assert_true(sfl_test_daemon_logged(d, "pubsub: no topic to stream and no rediscovery"));
	g_assert_true(sfl_test_daemon_logged(
		d, "\"every source finished: nothing left to read; exiting (a finite run)\""));
	g_assert_true(sfl_test_daemon_logged(d, "\"sf2loki stopped ("));
	g_assert_false(sfl_test_daemon_logged(d, "pubsub: subscribing to"));
}

static void
test_discovery_finds_none(void)
{
	Fx fx = { 0 };
	g_autoptr(SflTestDaemon) d = NULL;

	if (!fx_setup(&fx, FALSE)) {
		fx_teardown(&fx);
		return;
	}
	d = sfl_test_daemon_start(fx.config, NULL);
	assert_finite_exit(&fx, d);
	/* it asked once, found nothing, and did not ask again */
	g_assert_cmpuint(fx_describe_calls(&fx), ==, 1);
	fx_teardown(&fx);
}

/* under file_lease each replica exits once it led: the first hands the lease on as it stops */
static void
test_discovery_finds_none_ha(void)
{
	Fx fx = { 0 };
	g_autoptr(SflTestDaemon) a = NULL;
	g_autoptr(SflTestDaemon) b = NULL;
	const gchar *env_a[] = { "SF2LOKI_COORDINATE__FILE_LEASE__HOLDER_ID", "replica-a", NULL };
	const gchar *env_b[] = { "SF2LOKI_COORDINATE__FILE_LEASE__HOLDER_ID", "replica-b", NULL };

	if (!fx_setup(&fx, TRUE)) {
		fx_teardown(&fx);
		return;
	}
	a = sfl_test_daemon_start(fx.config, env_a);
	b = sfl_test_daemon_start(fx.config, env_b);
	assert_finite_exit(&fx, a);
	assert_finite_exit(&fx, b);
	g_assert_true(sfl_test_daemon_logged(a, "\"leadership acquired\""));
	g_assert_true(sfl_test_daemon_logged(b, "\"leadership acquired\""));
	fx_teardown(&fx);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/run-finite/discovery-finds-none", test_discovery_finds_none);
	g_test_add_func("/run-finite/discovery-finds-none-ha", test_discovery_finds_none_ha);
	return g_test_run();
}
