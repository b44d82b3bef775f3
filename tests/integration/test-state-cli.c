/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestStateCli"

#include "config.h"

#include <gio/gio.h>
#include <signal.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"

/*
 * `sf2loki state` end to end, through the built binary, on real files.
 */

typedef struct {
	gchar *tmpdir;
	gchar *state_path;
	gchar *lease_path;
	gchar *config_path;
} Fixture;

typedef struct {
	gint status;
	gchar *out;
	gchar *err;
} Result;

static void
result_clear(Result *r)
{
	g_free(r->out);
	g_free(r->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Result, result_clear)

static const gchar *
binary(void)
{
	const gchar *bin = g_getenv("SF2LOKI_BIN");
	g_assert_nonnull(bin);
	return bin;
}

static GSubprocessLauncher *
launcher_new(GSubprocessFlags flags)
{
	GSubprocessLauncher *l = g_subprocess_launcher_new(flags);
	/* a clean environment: nothing of the developer's SF2LOKI_* may leak in */
	const gchar *env[] = { "LC_ALL=C.UTF-8", NULL };
	g_subprocess_launcher_set_environ(l, (gchar **)env);
	return l;
}

static void
run_cli(Result *r, const gchar *first, ...)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GSubprocessLauncher) l =
		launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
	g_autoptr(GSubprocess) p = NULL;
	g_autoptr(GError) error = NULL;
	va_list args;
	const gchar *a;

	g_ptr_array_add(argv, (gpointer)binary());
	va_start(args, first);
	for (a = first; a != NULL; a = va_arg(args, const gchar *))
		g_ptr_array_add(argv, (gpointer)a);
	va_end(args);
	g_ptr_array_add(argv, NULL);

	p = g_subprocess_launcher_spawnv(l, (const gchar *const *)argv->pdata, &error);
	g_assert_no_error(error);
	g_subprocess_communicate_utf8(p, NULL, NULL, &r->out, &r->err, &error);
	g_assert_no_error(error);
	r->status = g_subprocess_get_exit_status(p);
	g_test_message("exit %d\nstdout: %s\nstderr: %s", r->status, r->out, r->err);
}

static void
write_config(Fixture *fx, const gchar *coordinate)
{
	g_autofree gchar *yaml =
		g_strdup_printf("salesforce:\n"
				"  client_id: cid\n"
				"  username: u@example.com\n"
				"  private_key: key\n"
				"sink:\n"
				"  loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}\n"
				"state:\n"
				"  file: {path: '%s'}\n"
				"service: {health_addr: '127.0.0.1:0'}\n"
				"coordinate:\n"
				"%s",
				fx->state_path, coordinate);
	g_autoptr(GError) error = NULL;
	g_file_set_contents(fx->config_path, yaml, -1, &error);
	g_assert_no_error(error);
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	fx->tmpdir = g_dir_make_tmp("sfl-test-state-cli-XXXXXX", &error);
	g_assert_no_error(error);
	fx->state_path = g_build_filename(fx->tmpdir, "lib", "state.json", NULL);
	fx->lease_path = g_build_filename(fx->tmpdir, "leader.lease", NULL);
	fx->config_path = g_build_filename(fx->tmpdir, "config.yaml", NULL);
	write_config(fx, "  type: noop\n");
}

static void
rm_rf(const gchar *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const gchar *name;
	if (dir == NULL) {
		g_unlink(path);
		return;
	}
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *child = g_build_filename(path, name, NULL);
		rm_rf(child);
	}
	g_rmdir(path);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	rm_rf(fx->tmpdir);
	g_free(fx->tmpdir);
	g_free(fx->state_path);
	g_free(fx->lease_path);
	g_free(fx->config_path);
}

static json_t *
parse_json(const gchar *text)
{
	json_error_t jerr;
	json_t *value = json_loads(text, 0, &jerr);
	if (value == NULL)
		g_error("not JSON (%s): %s", jerr.text, text);
	return value;
}

static void
test_roundtrip(Fixture *fx, gconstpointer data)
{
	const gchar *c = fx->config_path;
	g_auto(Result) empty = { 0 }, set = { 0 }, get = { 0 }, list = { 0 }, json = { 0 },
		       del = { 0 }, gone = { 0 }, getjson = { 0 };
	g_autoptr(json_t) doc = NULL;
	g_autoptr(json_t) one = NULL;
	g_autofree gchar *file = NULL;

	run_cli(&empty, "state", "list", "--config", c, NULL);
	g_assert_cmpint(empty.status, ==, 0);
	g_assert_nonnull(strstr(empty.out, "0 checkpoints"));

	run_cli(&set, "state", "set", "pubsub:/event/LoginEventStream", "AAAAAAAtR2A=", "--config",
		c, NULL);
	g_assert_cmpint(set.status, ==, 0);
	g_assert_nonnull(strstr(set.out, "set pubsub:/event/LoginEventStream = AAAAAAAtR2A="));
	/* the file the Python original would have written */
	g_file_get_contents(fx->state_path, &file, NULL, NULL);
	g_assert_cmpstr(file, ==, "{\"pubsub:/event/LoginEventStream\": \"AAAAAAAtR2A=\"}");

	run_cli(&get, "state", "get", "pubsub:/event/LoginEventStream", "--config", c, NULL);
	g_assert_cmpint(get.status, ==, 0);
	g_assert_cmpstr(get.out, ==, "AAAAAAAtR2A=\n");

	run_cli(&list, "state", "show", "--key", "pubsub:*", "--config", c, NULL);
	g_assert_cmpint(list.status, ==, 0);
	g_assert_nonnull(strstr(list.out, "pubsub:/event/LoginEventStream\tAAAAAAAtR2A=\n"));
	g_assert_nonnull(strstr(list.out, "1 checkpoint matching 'pubsub:*'"));

	run_cli(&json, "state", "list", "--json", "--config", c, NULL);
	g_assert_cmpint(json.status, ==, 0);
	doc = parse_json(json.out);
	g_assert_cmpint(json_integer_value(json_object_get(doc, "count")), ==, 1);
	g_assert_cmpstr(json_string_value(json_object_get(json_object_get(doc, "checkpoints"),
							  "pubsub:/event/LoginEventStream")),
			==, "AAAAAAAtR2A=");

	run_cli(&del, "state", "delete", "pubsub:/event/LoginEventStream", "--config", c, NULL);
	g_assert_cmpint(del.status, ==, 0);
	g_assert_nonnull(strstr(del.out, "deleted pubsub:/event/LoginEventStream"));

	run_cli(&gone, "state", "get", "pubsub:/event/LoginEventStream", "--config", c, NULL);
	g_assert_cmpint(gone.status, ==, 1);
	g_assert_nonnull(strstr(gone.err, "no checkpoint"));

	run_cli(&getjson, "state", "get", "nope", "--json", "--config", c, NULL);
	g_assert_cmpint(getjson.status, ==, 1);
	one = parse_json(getjson.out);
	g_assert_true(json_is_null(json_object_get(one, "value")));
}

static void
test_reserved(Fixture *fx, gconstpointer data)
{
	const gchar *c = fx->config_path;
	g_auto(Result) refused = { 0 }, forced = { 0 }, list = { 0 }, exp = { 0 }, expf = { 0 },
		       del = { 0 };

	run_cli(&refused, "state", "set", "__fence_epoch__", "3", "--config", c, NULL);
	g_assert_cmpint(refused.status, ==, 1);
	g_assert_nonnull(strstr(refused.err, "reserved"));
	g_assert_false(g_file_test(fx->state_path, G_FILE_TEST_EXISTS));

	run_cli(&forced, "state", "set", "__fence_epoch__", "3", "--force", "--config", c, NULL);
	g_assert_cmpint(forced.status, ==, 0);
	g_assert_nonnull(strstr(forced.err, "warning"));

	run_cli(&list, "state", "list", "--config", c, NULL);
	g_assert_null(strstr(list.out, "__fence_epoch__"));
	run_cli(&exp, "state", "export", "--config", c, NULL);
	g_assert_cmpstr(exp.out, ==, "{}\n");
	run_cli(&expf, "state", "export", "-", "--force", "--config", c, NULL);
	g_assert_cmpstr(expf.out, ==, "{\"__fence_epoch__\": \"3\"}\n");
	run_cli(&del, "state", "delete", "__fence_epoch__", "--force", "--config", c, NULL);
	g_assert_cmpint(del.status, ==, 0);
}

static void
test_export_import(Fixture *fx, gconstpointer data)
{
	const gchar *c = fx->config_path;
	g_autofree gchar *exported = g_build_filename(fx->tmpdir, "export.json", NULL);
	g_autofree gchar *incoming = g_build_filename(fx->tmpdir, "in.json", NULL);
	g_autofree gchar *text = NULL;
	g_auto(Result) s1 = { 0 }, s2 = { 0 }, exp = { 0 }, imp = { 0 }, merge = { 0 },
		       list = { 0 }, bad = { 0 };

	run_cli(&s1, "state", "set", "a", "1", "--config", c, NULL);
	run_cli(&s2, "state", "set", "b", "2", "--config", c, NULL);
	run_cli(&exp, "state", "export", exported, "--config", c, NULL);
	g_assert_cmpint(exp.status, ==, 0);
	g_file_get_contents(exported, &text, NULL, NULL);
	g_assert_cmpstr(text, ==, "{\"a\": \"1\", \"b\": \"2\"}");

	g_file_set_contents(incoming, "{\"b\": \"20\", \"c\": \"30\"}", -1, NULL);
	run_cli(&imp, "state", "import", incoming, "--config", c, NULL);
	g_assert_cmpint(imp.status, ==, 0);
	g_assert_nonnull(strstr(imp.out, "imported 2 checkpoints"));
	g_assert_nonnull(strstr(imp.out, "removed 1"));

	g_file_set_contents(incoming, "{\"a\": \"10\"}", -1, NULL);
	run_cli(&merge, "state", "import", incoming, "--merge", "--config", c, NULL);
	g_assert_cmpint(merge.status, ==, 0);
	run_cli(&list, "state", "list", "--config", c, NULL);
	g_assert_cmpstr(list.out, ==, "a\t10\nb\t20\nc\t30\n\n3 checkpoints\n");

	g_file_set_contents(incoming, "{\"a\": 1}", -1, NULL);
	run_cli(&bad, "state", "import", incoming, "--config", c, NULL);
	g_assert_cmpint(bad.status, ==, 1);
	g_assert_nonnull(strstr(bad.err, "not a string"));
}

static void
test_corrupt_and_usage(Fixture *fx, gconstpointer data)
{
	const gchar *c = fx->config_path;
	g_autofree gchar *dir = g_path_get_dirname(fx->state_path);
	g_autofree gchar *after = NULL;
	g_auto(Result) corrupt = { 0 }, usage = { 0 }, unknown = { 0 }, badcfg = { 0 };

	g_mkdir_with_parents(dir, 0700);
	g_file_set_contents(fx->state_path, "{\"a\": \"1\", ", -1, NULL);
	run_cli(&corrupt, "state", "set", "a", "2", "--config", c, NULL);
	g_assert_cmpint(corrupt.status, ==, 1);
	g_assert_nonnull(strstr(corrupt.err, fx->state_path));
	g_assert_nonnull(strstr(corrupt.err, "at byte"));
	g_file_get_contents(fx->state_path, &after, NULL, NULL);
	g_assert_cmpstr(after, ==, "{\"a\": \"1\", ");

	run_cli(&usage, "state", "set", "onlykey", "--config", c, NULL);
	g_assert_cmpint(usage.status, ==, 2);
	run_cli(&unknown, "state", "frobnicate", "--config", c, NULL);
	g_assert_cmpint(unknown.status, ==, 2);
	g_assert_nonnull(strstr(unknown.err, "unknown state command"));
	run_cli(&badcfg, "state", "list", "--config", fx->state_path, NULL);
	g_assert_cmpint(badcfg.status, ==, 2);
}

static void
test_lease_refusal(Fixture *fx, gconstpointer data)
{
	const gchar *c = fx->config_path;
	g_autofree gchar *coordinate =
		g_strdup_printf("  type: file_lease\n  file_lease: {path: '%s'}\n", fx->lease_path);
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autoptr(GDateTime) later = g_date_time_add_hours(now, 1);
	g_autoptr(GDateTime) earlier = g_date_time_add_hours(now, -1);
	g_autofree gchar *live_at = g_date_time_format(later, "%Y-%m-%dT%H:%M:%S.%f+00:00");
	g_autofree gchar *dead_at = g_date_time_format(earlier, "%Y-%m-%dT%H:%M:%S.%f+00:00");
	g_autofree gchar *live = g_strdup_printf(
		"{\"holder\": \"replica-b-4242\", \"expires_at\": \"%s\", \"epoch\": 3}", live_at);
	g_autofree gchar *dead = g_strdup_printf(
		"{\"holder\": \"replica-b-4242\", \"expires_at\": \"%s\", \"epoch\": 3}", dead_at);
	g_auto(Result) refused = { 0 }, forced = { 0 }, expired = { 0 }, read_ok = { 0 },
		       unreadable = { 0 }, k8s = { 0 }, unit_live = { 0 }, unit_released = { 0 };
	g_autofree gchar *units = g_strconcat(fx->lease_path, ".units", NULL);
	g_autofree gchar *unit_lease =
		g_build_filename(units, "pubsub%3A%2Fevent%2FLoginEventStream.lease", NULL);
	g_autofree gchar *unit_held = g_strdup_printf(
		"{\"holder\": \"replica-c-77\", \"expires_at\": \"%s\", \"epoch\": 9}", live_at);
	g_autofree gchar *unit_free = g_strdup_printf(
		"{\"holder\": \"\", \"expires_at\": \"%s\", \"epoch\": 9}", live_at);

	write_config(fx, coordinate);
	g_file_set_contents(fx->lease_path, live, -1, NULL);
	run_cli(&refused, "state", "set", "k", "v", "--config", c, NULL);
	g_assert_cmpint(refused.status, ==, 1);
	g_assert_nonnull(strstr(refused.err, "replica-b-4242"));
	g_assert_nonnull(strstr(refused.err, "epoch 3"));
	g_assert_false(g_file_test(fx->state_path, G_FILE_TEST_EXISTS));
	/* reads are always allowed */
	run_cli(&read_ok, "state", "list", "--config", c, NULL);
	g_assert_cmpint(read_ok.status, ==, 0);

	run_cli(&forced, "state", "set", "k", "v", "--force", "--config", c, NULL);
	g_assert_cmpint(forced.status, ==, 0);

	g_file_set_contents(fx->lease_path, dead, -1, NULL);
	run_cli(&expired, "state", "set", "k", "v2", "--config", c, NULL);
	g_assert_cmpint(expired.status, ==, 0);

	/* a sharded group holds unit leases beside the single one: a live one is a writer,
	 * named with its unit; a released one is not */
	g_assert_cmpint(g_mkdir(units, 0700), ==, 0);
	g_file_set_contents(unit_lease, unit_held, -1, NULL);
	run_cli(&unit_live, "state", "set", "k", "v3", "--config", c, NULL);
	g_assert_cmpint(unit_live.status, ==, 1);
	g_assert_nonnull(strstr(unit_live.err, "replica-c-77"));
	g_assert_nonnull(strstr(unit_live.err, "'pubsub:/event/LoginEventStream'"));
	g_assert_nonnull(strstr(unit_live.err, "epoch 9"));
	g_file_set_contents(unit_lease, unit_free, -1, NULL);
	run_cli(&unit_released, "state", "set", "k", "v3", "--config", c, NULL);
	g_assert_cmpint(unit_released.status, ==, 0);
	g_unlink(unit_lease);
	g_rmdir(units);

	/* a lease that cannot be read is "cannot tell", never "no leader" */
	g_unlink(fx->lease_path);
	g_mkdir(fx->lease_path, 0700);
	run_cli(&unreadable, "state", "set", "k", "v3", "--config", c, NULL);
	g_assert_cmpint(unreadable.status, ==, 1);
	g_assert_nonnull(strstr(unreadable.err, "cannot tell"));

	write_config(fx, "  type: k8s_lease\n");
	run_cli(&k8s, "state", "delete", "k", "--config", c, NULL);
	g_assert_cmpint(k8s.status, ==, 1);
	g_assert_nonnull(strstr(k8s.err, "Kubernetes Lease"));
}

/* a running daemon holds the lock; the CLI refuses to write under it */
static void
test_lock_refusal(Fixture *fx, gconstpointer data)
{
	const gchar *c = fx->config_path;
	g_autoptr(GSubprocessLauncher) l = launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
	g_autoptr(GSubprocess) daemon = NULL;
	g_autoptr(GDataInputStream) err = NULL;
	g_autoptr(GError) error = NULL;
	g_auto(Result) refused = { 0 }, forced = { 0 }, read_ok = { 0 };
	gboolean ready = FALSE;
	g_autoptr(GSocketListener) silent = g_socket_listener_new();
	g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
	g_autoptr(GSocketAddress) any_port = g_inet_socket_address_new(loopback, 0);
	g_autoptr(GSocketAddress) bound = NULL;
	g_autofree gchar *login_url = NULL;

	/*
	 * A source gives `run` work (with none it exits at once): its start-up authentication
	 * goes to a server that takes the connection and never answers, so the daemon keeps the
	 * lock it took when it opened the store, with no Salesforce needed.
	 */
	g_socket_listener_add_address(silent, any_port, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
				      NULL, &bound, &error);
	g_assert_no_error(error);
	login_url = g_strdup_printf("http://127.0.0.1:%u", (guint)g_inet_socket_address_get_port(
								   G_INET_SOCKET_ADDRESS(bound)));
	g_subprocess_launcher_setenv(l, "SF2LOKI_SALESFORCE__LOGIN_URL", login_url, TRUE);
	g_subprocess_launcher_setenv(l, "SF2LOKI_SALESFORCE__AUTH_MODE", "client_credentials",
				     TRUE);
	g_subprocess_launcher_setenv(l, "SF2LOKI_SALESFORCE__CLIENT_SECRET", "secret", TRUE);
	g_subprocess_launcher_setenv(l, "SF2LOKI_SOURCES__PUBSUB__TOPICS",
				     "[\"/event/LoginEventStream\"]", TRUE);
	daemon = g_subprocess_launcher_spawn(l, &error, binary(), "run", "--config", c, NULL);
	g_assert_no_error(error);
	err = g_data_input_stream_new(g_subprocess_get_stderr_pipe(daemon));
	/* the store is open, and locked, once it says so */
	while (!ready) {
		g_autofree gchar *line =
			g_data_input_stream_read_line_utf8(err, NULL, NULL, &error);
		g_assert_no_error(error);
		if (line == NULL)
			g_error("sf2loki run exited before its checkpoint store was ready");
		g_test_message("daemon: %s", line);
		ready = strstr(line, "checkpoint store ready") != NULL;
	}

	run_cli(&refused, "state", "set", "k", "v", "--config", c, NULL);
	g_assert_cmpint(refused.status, ==, 1);
	g_assert_nonnull(strstr(refused.err, "state.json.lock"));
	g_assert_nonnull(strstr(refused.err, "--force"));
	run_cli(&read_ok, "state", "list", "--config", c, NULL);
	g_assert_cmpint(read_ok.status, ==, 0);
	run_cli(&forced, "state", "set", "k", "v", "--force", "--config", c, NULL);
	g_assert_cmpint(forced.status, ==, 0);

	g_subprocess_send_signal(daemon, SIGTERM);
	g_subprocess_wait(daemon, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpint(g_subprocess_get_exit_status(daemon), ==, 0);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_setup, func, fixture_teardown)
	ADD("/sfl/state-cli/roundtrip", test_roundtrip);
	ADD("/sfl/state-cli/reserved", test_reserved);
	ADD("/sfl/state-cli/export-import", test_export_import);
	ADD("/sfl/state-cli/corrupt-and-usage", test_corrupt_and_usage);
	ADD("/sfl/state-cli/lease-refusal", test_lease_refusal);
	ADD("/sfl/state-cli/lock-refusal", test_lock_refusal);
	return g_test_run();
}
