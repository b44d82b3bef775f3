/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "sfl-cli-reload.h"
#include "sfl-error.h"
#include "sfl-health-server.h"
#include "sfl-test-sim.h"

/*
 * Live reload of the real binary (docs/configuration.md, "Live reload"): `sf2loki run` under
 * file_lease, Pub/Sub and Loki simulators, a stream flowing. A SIGHUP after a YAML edit adds a
 * topic and a transform without a new leadership term at the coordinator (one acquisition,
 * same epoch) and without losing or replaying a committed event; an invalid edit sent with
 * `sf2loki reload` is refused and the old configuration keeps shipping; a restart-only change
 * is reported in /statusz and the log and not applied.
 */

#define TOPIC_A "/event/LoginEventStream"
#define TOPIC_B "/event/ApiAnomalyEvent"

typedef struct {
	SflTestSims sims;
	gchar *ps_ctl;
	SflTestSim *ps_proc;
	gint64 grpc_port;
	gchar *config;
	gchar *state;
	gchar *lease;
	SflTestDaemon *run;
	guint port;
	guint want;
	const gchar *needle;
	guint needle_count;
} Fx;

static void
fx_write_config_elf(Fx *fx, const gchar *topics, const gchar *transforms, const gchar *ttl,
		    const gchar *extra, const gchar *elf)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *head = sfl_test_sims_config(&fx->sims, NULL, NULL);
	g_autofree gchar *yaml = g_strdup_printf(
		"%s"
		"    batch:\n"
		"      flush_interval: 100ms\n"
		"      max_entries: 100\n"
		"state:\n"
		"  file: {path: '%s'}\n"
		"coordinate:\n"
		"  type: file_lease\n"
		"  file_lease: {path: '%s', ttl: %s, renew_interval: 1s}\n"
		"service:\n"
		"  shutdown_grace: 20s\n"
		"%s"
		"sources:\n"
		"  eventlogfile: %s\n"
		"  pubsub:\n"
		"    endpoint: http://127.0.0.1:%" G_GINT64_FORMAT "\n"
		"    topics: [%s]\n"
		"    replay_preset: EARLIEST\n"
		"    transforms: %s\n",
		head, fx->state, fx->lease, ttl, extra, elf, fx->grpc_port, topics, transforms);

	g_assert_true(g_file_set_contents(fx->config, yaml, -1, &error));
	g_assert_no_error(error);
}

static void
fx_write_config(Fx *fx, const gchar *topics, const gchar *transforms, const gchar *ttl,
		const gchar *extra)
{
	fx_write_config_elf(fx, topics, transforms, ttl, extra, "{enabled: false}");
}

static void
fx_publish(Fx *fx, const gchar *topic, guint count)
{
	g_autofree gchar *body =
		g_strdup_printf("{\"topic\": \"%s\", \"count\": %u}", topic, count);
	json_decref(
		sfl_test_sim_control(fx->sims.loop, fx->ps_ctl, "POST", "/control/publish", body));
}

static gboolean
fx_distinct_at_least(gpointer data)
{
	Fx *fx = data;

	return sfl_test_sims_loki_stat(&fx->sims, "EventIdentifier", "distinct") >=
	       (json_int_t)fx->want;
}

/* the log lines read so far hold @needle at least @needle_count times */
static guint
fx_count_logged(Fx *fx, const gchar *needle)
{
	guint n = 0;

	for (guint i = 0; i < fx->run->lines->len; i++)
		n += strstr(g_ptr_array_index(fx->run->lines, i), needle) != NULL;
	return n;
}

static gboolean
fx_logged_times(gpointer data)
{
	Fx *fx = data;
	return fx_count_logged(fx, fx->needle) >= fx->needle_count;
}

static void
fx_wait_logged_times(Fx *fx, const gchar *needle, guint count, const gchar *what)
{
	fx->needle = needle;
	fx->needle_count = count;
	sfl_test_poll_until(fx_logged_times, fx, 120, what);
}

static gchar *
fx_health(Fx *fx, const gchar *method, const gchar *path, guint *status)
{
	g_autofree gchar *url = g_strdup_printf("http://127.0.0.1:%u%s", fx->port, path);
	return sfl_test_http_call(fx->sims.loop, method, url, status);
}

static json_t *
fx_statusz(Fx *fx)
{
	guint status = 0;
	g_autofree gchar *body = fx_health(fx, "GET", "/statusz", &status);
	json_t *doc = NULL;

	g_assert_cmpuint(status, ==, 200);
	doc = json_loads(body, 0, NULL);
	g_assert_nonnull(doc);
	return doc;
}

static gint64
fx_epoch(Fx *fx)
{
	json_t *doc = fx_statusz(fx);
	json_t *leadership = json_object_get(doc, "leadership");
	gint64 epoch = 0;

	g_assert_true(json_is_true(json_object_get(leadership, "leader")));
	epoch = json_integer_value(json_object_get(leadership, "epoch"));
	json_decref(doc);
	return epoch;
}

static gboolean
fx_metric_has(Fx *fx, const gchar *line)
{
	guint status = 0;
	g_autofree gchar *body = fx_health(fx, "GET", "/metrics", &status);

	g_assert_cmpuint(status, ==, 200);
	return strstr(body, line) != NULL;
}

/* `sf2loki reload --config CONFIG` against the daemon's port: exit status, stdout, stderr */
static gint
fx_cli_reload(Fx *fx, gchar **out, gchar **err)
{
	g_autofree gchar *addr = g_strdup_printf("127.0.0.1:%u", fx->port);
	const gchar *args[] = { "reload", "--config", fx->config, NULL };
	const gchar *env[] = { "SF2LOKI_SERVICE__HEALTH_ADDR", addr, NULL };
	g_autoptr(GSubprocess) proc = sfl_test_bin_spawn(
		G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, args, env);
	g_autoptr(GError) error = NULL;
	gboolean done = FALSE;
	g_autoptr(GAsyncResult) result = NULL;
	SflTestWaiter waiter = { 0 };

	/* the daemon answers on this test's loop-free server, but the simulators' control calls
	 * share the context: communicate asynchronously and keep iterating */
	g_subprocess_communicate_utf8_async(proc, NULL, NULL, sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, 120);
	result = waiter.result;
	done = g_subprocess_communicate_utf8_finish(proc, result, out, err, &error);
	g_assert_no_error(error);
	g_assert_true(done);
	g_test_message("sf2loki reload: exit %d\n%s%s", g_subprocess_get_exit_status(proc), *out,
		       *err);
	return g_subprocess_get_exit_status(proc);
}

/* every Loki entry of @topic's events: how often each sequence number was shipped, and
 * whether the entries of sequence numbers in [@from, @to] carry Username */
static void
fx_check_entries(Fx *fx, const gchar *topic, guint total, guint committed, guint marker_from,
		 gboolean marker_has_username, gboolean before_has_username)
{
	json_t *received = sfl_test_sim_control(fx->sims.loop, fx->sims.loki_base, "GET",
						"/control/received", NULL);
	json_t *streams = json_object_get(received, "streams");
	g_autofree guint *seen = g_new0(guint, total + 1);
	const gchar *name = strrchr(topic, '/') + 1;
	gsize i = 0;
	json_t *stream = NULL;

	json_array_foreach (streams, i, stream) {
		gsize j = 0;
		json_t *entry = NULL;

		json_array_foreach (json_object_get(stream, "entries"), j, entry) {
			json_t *line = json_loads(json_string_value(json_object_get(entry, "line")),
						  0, NULL);
			const gchar *id =
				json_string_value(json_object_get(line, "EventIdentifier"));
			guint64 seq = 0;

			if (id == NULL || !g_str_has_prefix(id, name) || id[strlen(name)] != '-') {
				json_decref(line);
				continue;
			}
			g_assert_true(g_ascii_string_to_unsigned(id + strlen(name) + 1, 10, 1,
								 total, &seq, NULL));
			seen[seq]++;
			if (seq >= marker_from)
				g_assert_true((json_object_get(line, "Username") != NULL) ==
					      marker_has_username);
			else if (seq <= committed)
				g_assert_true((json_object_get(line, "Username") != NULL) ==
					      before_has_username);
			json_decref(line);
		}
	}
	json_decref(received);
	for (guint s = 1; s <= total; s++) {
		/* no gap; and what was committed before the reload is never shipped again */
		if (seen[s] == 0 || (s <= committed && seen[s] != 1))
			g_error("%s event %u shipped %u times", name, s, seen[s]);
	}
}

static gboolean
fx_start(Fx *fx)
{
	const gchar *args[] = { "--keepalive-ms", "500", NULL };
	json_t *info = NULL;

	if (!sfl_test_sims_start(&fx->sims, "sfl-reload-XXXXXX", "{}", NULL))
		return FALSE;
	fx->ps_ctl = sfl_test_pubsub_sim_start(args, &fx->ps_proc);
	if (fx->ps_ctl == NULL)
		return FALSE;
	info = sfl_test_sim_control(fx->sims.loop, fx->ps_ctl, "GET", "/control/info", NULL);
	fx->grpc_port = json_integer_value(json_object_get(info, "grpc_port"));
	json_decref(info);
	fx->config = g_build_filename(fx->sims.dir, "config.yaml", NULL);
	fx->state = g_build_filename(fx->sims.dir, "state.json", NULL);
	fx->lease = g_build_filename(fx->sims.dir, "leader.lease", NULL);
	return TRUE;
}

static void
fx_clear(Fx *fx)
{
	g_clear_pointer(&fx->run, sfl_test_daemon_free);
	sfl_test_sim_stop(&fx->ps_proc);
	g_free(fx->ps_ctl);
	g_free(fx->config);
	g_free(fx->state);
	g_free(fx->lease);
	sfl_test_sims_clear(&fx->sims);
}

static void
test_reload_live(void)
{
	Fx fx = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	gint64 epoch = 0;
	json_t *doc = NULL;
	json_t *pending = NULL;
	const guint first = 300, in_flight = 200, marker = 100, after_reject = 100;

	if (sfl_test_skip_without_signals() || !fx_start(&fx)) {
		fx_clear(&fx);
		return;
	}
	fx_write_config(&fx, "\"" TOPIC_A "\"", "[]", "10s", "");
	fx_publish(&fx, TOPIC_A, first);
	fx.run = sfl_test_daemon_start(fx.config, NULL);
	sfl_test_daemon_wait_logged(fx.run, "leadership acquired", 60);
	fx.port = sfl_test_daemon_health_port(fx.run);
	fx.want = first;
	sfl_test_poll_until(fx_distinct_at_least, &fx, 120, "the first events in Loki");
	epoch = fx_epoch(&fx);
	g_assert_cmpint(epoch, >, 0);
	g_assert_true(fx_metric_has(&fx, "sf2loki_config_reloads_total{outcome=\"applied\"} 0"));

	/* (a) a topic and a transform, by YAML edit and SIGHUP, while events are in flight */
	fx_publish(&fx, TOPIC_A, in_flight);
	fx_write_config(&fx, "\"" TOPIC_A "\", \"" TOPIC_B "\"",
			"[{action: drop_field, fields: [Username]}]", "10s", "");
	g_assert_true(sfl_test_proc_signal(fx.run->proc, SFL_TEST_SIGNAL_HUP));
	sfl_test_daemon_wait_logged(fx.run, "configuration reload applied", 120);
	g_assert_true(sfl_test_daemon_logged(fx.run, "sources.pubsub.topics"));
	g_assert_true(sfl_test_daemon_logged(fx.run, "sources.pubsub.transforms"));
	/* the marker: published after the reload was reported applied */
	fx_publish(&fx, TOPIC_A, marker);
	fx_publish(&fx, TOPIC_B, marker);
	fx.want = first + in_flight + 2 * marker;
	sfl_test_poll_until(fx_distinct_at_least, &fx, 120, "every event of both topics in Loki");
	fx_check_entries(&fx, TOPIC_A, first + in_flight + marker, first, first + in_flight + 1,
			 FALSE, TRUE);
	fx_check_entries(&fx, TOPIC_B, marker, 0, 1, FALSE, FALSE);
	g_assert_cmpint(fx_epoch(&fx), ==, epoch);
	g_assert_true(fx_metric_has(&fx, "sf2loki_config_reloads_total{outcome=\"applied\"} 1"));

	/* (b) an invalid edit through `sf2loki reload`: refused, named, the old one keeps going */
	fx_write_config(&fx, "\"" TOPIC_A "\", \"" TOPIC_B "\"",
			"[{action: drop_field, fields: [Username]}]", "10s",
			"  progress_interval: banana\n");
	g_assert_true(sfl_test_proc_signal(fx.run->proc, SFL_TEST_SIGNAL_HUP));
	sfl_test_daemon_wait_logged(fx.run, "configuration reload rejected", 60);
	g_assert_true(sfl_test_daemon_logged(fx.run, "service.progress_interval"));
	g_assert_true(fx_metric_has(&fx, "sf2loki_config_reloads_total{outcome=\"rejected\"} 1"));
	/* the command loads the file too: an error there is its own (exit 2), the daemon is not
	 * asked */
	g_assert_cmpint(fx_cli_reload(&fx, &out, &err), ==, 2);
	g_assert_nonnull(strstr(err, "service.progress_interval"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);
	/* one only the daemon's cross-checks find (as `check` does): exit 1, the key named */
	fx_write_config_elf(&fx, "\"" TOPIC_A "\", \"" TOPIC_B "\"",
			    "[{action: drop_field, fields: [Username]}]", "10s", "",
			    "{enabled: true, event_types: [Login]}");
	g_assert_cmpint(fx_cli_reload(&fx, &out, &err), ==, 1);
	g_assert_nonnull(strstr(err, "sources overlap"));
	g_assert_nonnull(strstr(err, "sources.allow_overlap"));
	g_assert_true(fx_metric_has(&fx, "sf2loki_config_reloads_total{outcome=\"rejected\"} 2"));
	fx_publish(&fx, TOPIC_B, after_reject);
	fx.want = first + in_flight + 2 * marker + after_reject;
	sfl_test_poll_until(fx_distinct_at_least, &fx, 120, "events after the rejected reload");
	fx_check_entries(&fx, TOPIC_B, marker + after_reject, 0, 1, FALSE, FALSE);
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);

	/* (c, d) a restart-only change through `sf2loki reload`: reported, not applied */
	fx_write_config(&fx, "\"" TOPIC_A "\", \"" TOPIC_B "\"",
			"[{action: drop_field, fields: [Username]}]", "12s", "");
	g_assert_cmpint(fx_cli_reload(&fx, &out, &err), ==, 0);
	g_assert_nonnull(strstr(out, "coordinate.file_lease.ttl"));
	fx_wait_logged_times(&fx, "configuration reload applied", 2, "the second applied reload");
	g_assert_true(
		sfl_test_daemon_logged(fx.run, "ignored until restart coordinate.file_lease.ttl"));
	doc = fx_statusz(&fx);
	pending = json_object_get(json_object_get(doc, "config"), "pending_restart");
	g_assert_cmpuint(json_array_size(pending), ==, 1);
	g_assert_cmpstr(json_string_value(json_array_get(pending, 0)), ==,
			"coordinate.file_lease.ttl");
	json_decref(doc);

	/* the control path: POST only */
	{
		guint status = 0;
		g_autofree gchar *body = fx_health(&fx, "GET", "/-/reload", &status);
		g_assert_cmpuint(status, ==, 405);
		g_assert_nonnull(body);
	}

	/* leadership was never given up: one acquisition, no loss, the same epoch */
	g_assert_cmpint(fx_epoch(&fx), ==, epoch);
	g_assert_cmpuint(fx_count_logged(&fx, "leadership acquired"), ==, 1);
	g_assert_cmpuint(fx_count_logged(&fx, "leadership lost"), ==, 0);
	sfl_test_daemon_finish(fx.run, 60);
	fx_clear(&fx);
}

/* the control path's peer check, and where `sf2loki reload` sends its request */
static void
test_reload_peer_and_url(void)
{
	struct {
		const gchar *addr;
		gboolean local;
	} peers[] = {
		{ "127.0.0.1", TRUE },	      { "127.8.9.10", TRUE },	{ "::1", TRUE },
		{ "::ffff:127.0.0.1", TRUE }, { "10.0.0.5", FALSE },	{ "192.168.1.1", FALSE },
		{ "::ffff:10.0.0.5", FALSE }, { "2001:db8::1", FALSE },
	};
	struct {
		const gchar *health_addr;
		const gchar *url;
	} urls[] = {
		{ "127.0.0.1:8080", "http://127.0.0.1:8080/-/reload" },
		{ "0.0.0.0:8080", "http://127.0.0.1:8080/-/reload" },
		{ ":9000", "http://127.0.0.1:9000/-/reload" },
		{ "[::]:8080", "http://[::1]:8080/-/reload" },
		{ "[::1]:8080", "http://[::1]:8080/-/reload" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(peers); i++) {
		g_autoptr(GSocketAddress) sa =
			g_inet_socket_address_new_from_string(peers[i].addr, 1234);
		g_assert_nonnull(sa);
		g_assert_true(sfl_health_peer_is_local(sa) == peers[i].local);
	}
	g_assert_false(sfl_health_peer_is_local(NULL));
	for (gsize i = 0; i < G_N_ELEMENTS(urls); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree gchar *url = sfl_cli_reload_url(urls[i].health_addr, &error);
		g_assert_no_error(error);
		g_assert_cmpstr(url, ==, urls[i].url);
	}
	{
		g_autoptr(GError) error = NULL;
		g_autofree gchar *url = sfl_cli_reload_url("127.0.0.1:0", &error);
		g_assert_null(url);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	}
}

/*
 * The GSettings trigger: the keyfile layer is rewritten (as configuration management would),
 * its "changed" signal reaches the daemon, and a topic and a transform are applied as after a
 * SIGHUP: the new topic's events arrive, the marker batch carries the transform, one term at
 * the coordinator.
 */
static void
test_reload_gsettings(void)
{
	Fx fx = { 0 };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *keyfile = NULL;
	g_autofree gchar *extra = NULL;
	const gchar *schema_dir = g_getenv("SFL_GSETTINGS_SCHEMA_DIR");
	const gchar *env[] = { "GSETTINGS_SCHEMA_DIR", schema_dir, NULL };
	gint64 epoch = 0;
	const guint first = 200, marker = 100;

	if (schema_dir == NULL) {
		g_test_skip("SFL_GSETTINGS_SCHEMA_DIR is not set (run through meson test)");
		return;
	}
	if (sfl_test_skip_without_signals() || !fx_start(&fx)) {
		fx_clear(&fx);
		return;
	}
	keyfile = g_build_filename(fx.sims.dir, "sf2loki.ini", NULL);
	g_assert_true(g_file_set_contents(keyfile, "[sources/pubsub]\ntopics=['" TOPIC_A "']\n", -1,
					  &error));
	extra = g_strdup_printf("  gsettings_keyfile: '%s'\n", keyfile);
	fx_write_config(&fx, "\"" TOPIC_A "\"", "[]", "10s", extra);
	fx_publish(&fx, TOPIC_A, first);
	fx.run = sfl_test_daemon_start(fx.config, env);
	sfl_test_daemon_wait_logged(fx.run, "leadership acquired", 60);
	fx.port = sfl_test_daemon_health_port(fx.run);
	fx.want = first;
	sfl_test_poll_until(fx_distinct_at_least, &fx, 120, "the first events in Loki");
	epoch = fx_epoch(&fx);

	g_assert_true(g_file_set_contents(
		keyfile,
		"[sources/pubsub]\n"
		"topics=['" TOPIC_A "', '" TOPIC_B "']\n"
		"transforms=[{'action': <'drop_field'>, 'fields': <['Username']>}]\n",
		-1, &error));
	sfl_test_daemon_wait_logged(fx.run, "configuration reload applied", 120);
	g_assert_true(sfl_test_daemon_logged(fx.run, "configuration reload requested (GSettings"));
	fx_publish(&fx, TOPIC_A, marker);
	fx_publish(&fx, TOPIC_B, marker);
	fx.want = first + 2 * marker;
	sfl_test_poll_until(fx_distinct_at_least, &fx, 120, "every event of both topics in Loki");
	fx_check_entries(&fx, TOPIC_A, first + marker, first, first + 1, FALSE, TRUE);
	fx_check_entries(&fx, TOPIC_B, marker, 0, 1, FALSE, FALSE);
	g_assert_cmpint(fx_epoch(&fx), ==, epoch);
	g_assert_cmpuint(fx_count_logged(&fx, "leadership acquired"), ==, 1);
	g_assert_cmpuint(fx_count_logged(&fx, "leadership lost"), ==, 0);
	sfl_test_daemon_finish(fx.run, 60);
	fx_clear(&fx);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/reload/peer-and-url", test_reload_peer_and_url);
	g_test_add_func("/reload/daemon/file-lease-live", test_reload_live);
	g_test_add_func("/reload/daemon/gsettings", test_reload_gsettings);
	return g_test_run();
}
