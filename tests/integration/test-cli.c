/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestCli"

#include "config.h"

#include <gio/gio.h>
#include <jansson.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "sfl-autocleanups.h"

/*
 * End-to-end tests of the sf2loki binary. Every case runs the real executable from
 * SF2LOKI_BIN in an environment built from scratch, so a developer's SF2LOKI_* variables can
 * never change the outcome, and checks both the exit status and what was printed.
 */

/* a whole short command; generous because sanitizer builds start slowly */
#define TEST_CLI_COMMAND_TIMEOUT_MS (60 * 1000)
/* from spawn until the banner line of `run` */
#define TEST_CLI_BANNER_TIMEOUT_MS (20 * 1000)
/* from the stop signal until the process has exited and its pipes are closed */
#define TEST_CLI_STOP_TIMEOUT_MS (20 * 1000)

#define TEST_CLI_LOKI_PUSH "loki.example.com/loki/api/v1/push"
/* one source, so a configuration has something to ingest (`check` would warn otherwise) */
#define TEST_CLI_SOURCE "sources: {pubsub: {topics: [/event/LoginEventStream]}}\n"

/* SF2LOKI_BIN made absolute, because the binary runs from the per-test directory */
static gchar *test_cli_bin = NULL;

typedef struct {
	gchar *dir;	 /* per-test scratch directory */
	gchar *key_path; /* a private key file with content */
	gchar *marker;	 /* a secret value that must never be printed */
	GMainContext *context;
	GSocketListener *silent; /* accepts connections and never answers; NULL until needed */
	gchar *silent_url;
} TestCliFixture;

typedef struct {
	gboolean exited; /* FALSE when a signal ended it */
	gint status;	 /* the exit code, or the signal number */
	gchar *out;
	gchar *err;
	GStrv err_lines; /* stderr split at newlines, without the empty tail */
} TestCliResult;

static void
test_cli_result_free(TestCliResult *res)
{
	g_free(res->out);
	g_free(res->err);
	g_strfreev(res->err_lines);
	g_free(res);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(TestCliResult, test_cli_result_free)

/* --- fixture ------------------------------------------------------------------------------- */

static void
test_cli_remove_tree(const gchar *path)
{
	g_autoptr(GDir) dir = NULL;
	const gchar *name;

	if (!g_file_test(path, G_FILE_TEST_IS_DIR) || g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
		g_remove(path);
		return;
	}
	dir = g_dir_open(path, 0, NULL);
	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *child = g_build_filename(path, name, NULL);
		test_cli_remove_tree(child);
	}
	g_rmdir(path);
}

static gchar *
test_cli_write(TestCliFixture *fixture, const gchar *name, const gchar *contents)
{
	g_autofree gchar *path = g_build_filename(fixture->dir, name, NULL);
	g_autoptr(GError) error = NULL;

	g_file_set_contents(path, contents, -1, &error);
	g_assert_no_error(error);
	return g_steal_pointer(&path);
}

static void
test_cli_setup(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;

	fixture->dir = g_dir_make_tmp("sf2loki-test-cli-XXXXXX", &error);
	g_assert_no_error(error);
	fixture->marker = g_strdup_printf("S3cr3tMarker-%08x%08x", g_random_int(), g_random_int());
	fixture->key_path = test_cli_write(
		fixture, "key.pem",
		"-----BEGIN PRIVATE KEY-----\nnot-a-real-key\n-----END PRIVATE KEY-----\n");
	/* async subprocess I/O completes on the context that was current when it started */
	fixture->context = g_main_context_new();
	g_main_context_push_thread_default(fixture->context);
}

static void
test_cli_teardown(TestCliFixture *fixture, gconstpointer user_data)
{
	/* callbacks still queued on the context run before it goes */
	while (g_main_context_iteration(fixture->context, FALSE))
		;
	g_main_context_pop_thread_default(fixture->context);
	g_main_context_unref(fixture->context);
	if (fixture->silent != NULL)
		g_socket_listener_close(fixture->silent);
	g_clear_object(&fixture->silent);
	g_free(fixture->silent_url);
	test_cli_remove_tree(fixture->dir);
	g_free(fixture->dir);
	g_free(fixture->key_path);
	g_free(fixture->marker);
}

/*
 * a login URL whose server takes the connection and never answers: `run` with a source then
 * stays in its start-up authentication until it is stopped, with no Salesforce needed
 */
static const gchar *
test_cli_silent_url(TestCliFixture *fixture)
{
	g_autoptr(GInetAddress) loopback = NULL;
	g_autoptr(GSocketAddress) address = NULL;
	g_autoptr(GSocketAddress) bound = NULL;
	g_autoptr(GError) error = NULL;

	if (fixture->silent_url != NULL)
		return fixture->silent_url;
	loopback = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
	address = g_inet_socket_address_new(loopback, 0);
	fixture->silent = g_socket_listener_new();
	g_socket_listener_add_address(fixture->silent, address, G_SOCKET_TYPE_STREAM,
				      G_SOCKET_PROTOCOL_TCP, NULL, &bound, &error);
	g_assert_no_error(error);
	fixture->silent_url = g_strdup_printf(
		"http://127.0.0.1:%u",
		(guint)g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound)));
	return fixture->silent_url;
}

/* --- waiting ------------------------------------------------------------------------------- */

typedef gboolean (*TestCliCondFunc)(gpointer user_data);

static gboolean
test_cli_deadline_cb(gpointer user_data)
{
	gboolean *expired = user_data;
	*expired = TRUE;
	return G_SOURCE_REMOVE;
}

/* iterates @context until @cond holds or @timeout_ms pass; returns what @cond said last */
static gboolean
test_cli_iterate_until(GMainContext *context, TestCliCondFunc cond, gpointer user_data,
		       guint timeout_ms)
{
	g_autoptr(GSource) deadline = g_timeout_source_new(timeout_ms);
	gboolean expired = FALSE;

	g_source_set_callback(deadline, test_cli_deadline_cb, &expired, NULL);
	g_source_attach(deadline, context);
	while (!cond(user_data) && !expired)
		g_main_context_iteration(context, TRUE);
	g_source_destroy(deadline);
	return cond(user_data);
}

static gboolean
test_cli_flag_is_set(gpointer user_data)
{
	return *(gboolean *)user_data;
}

/* --- running the binary -------------------------------------------------------------------- */

/* PATH and the test harness's own knobs; everything else comes from @extra (name, value...) */
static gchar **
test_cli_environ(const gchar *const *extra)
{
	static const gchar *const passed[] = { "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS",
					       "G_DEBUG", NULL };
	const gchar *path = g_getenv("PATH");
	gchar **envp = g_new0(gchar *, 1);

	envp = g_environ_setenv(envp, "PATH", path != NULL ? path : "/usr/bin:/bin", TRUE);
	envp = g_environ_setenv(envp, "LC_ALL", "C.UTF-8", TRUE);
	for (guint i = 0; passed[i] != NULL; i++) {
		const gchar *value = g_getenv(passed[i]);
		if (value != NULL)
			envp = g_environ_setenv(envp, passed[i], value, TRUE);
	}
	for (guint i = 0; extra != NULL && extra[i] != NULL; i += 2) {
		g_assert_nonnull(extra[i + 1]);
		envp = g_environ_setenv(envp, extra[i], extra[i + 1], TRUE);
	}
	return envp;
}

/* runs in the child between fork and exec */
static void
test_cli_child_setup(gpointer user_data)
{
#ifdef __linux__
	/* a failed assertion aborts this process; a running daemon must not outlive it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

static GSubprocess *
test_cli_spawnv(TestCliFixture *fixture, const gchar *const *env, const gchar *const *args)
{
	g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new(
		G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
	g_auto(GStrv) envp = test_cli_environ(env);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) error = NULL;
	g_autofree gchar *state = g_build_filename(fixture->dir, "state.json", NULL);
	GSubprocess *proc;

	/* `run` opens the checkpoint store: keep it (and its lock) inside the fixture */
	envp = g_environ_setenv(envp, "SF2LOKI_STATE__FILE__PATH", state, FALSE);

	g_ptr_array_add(argv, test_cli_bin);
	for (guint i = 0; args[i] != NULL; i++)
		g_ptr_array_add(argv, (gpointer)args[i]);
	g_ptr_array_add(argv, NULL);

	g_subprocess_launcher_set_environ(launcher, envp);
	g_subprocess_launcher_set_child_setup(launcher, test_cli_child_setup, NULL, NULL);
	/* nothing the binary does may land in the source tree */
	g_subprocess_launcher_set_cwd(launcher, fixture->dir);
	proc = g_subprocess_launcher_spawnv(launcher, (const gchar *const *)argv->pdata, &error);
	g_assert_no_error(error);
	return proc;
}

typedef struct {
	gboolean done;
	GBytes *out;
	GBytes *err;
	GError *error;
} TestCliCommunicate;

static void
test_cli_communicate_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	TestCliCommunicate *comm = user_data;

	g_subprocess_communicate_finish(G_SUBPROCESS(source), result, &comm->out, &comm->err,
					&comm->error);
	comm->done = TRUE;
}

static gchar *
test_cli_bytes_to_string(GBytes *bytes)
{
	gsize len = 0;
	const gchar *data = bytes != NULL ? g_bytes_get_data(bytes, &len) : NULL;
	return g_strndup(data != NULL ? data : "", len);
}

static GStrv
test_cli_split_lines(const gchar *text)
{
	g_auto(GStrv) parts = g_strsplit(text, "\n", -1);
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
	guint n = g_strv_length(parts);

	/* a final newline leaves an empty last part that is not a line */
	for (guint i = 0; i < n; i++) {
		if (i + 1 == n && parts[i][0] == '\0')
			break;
		g_strv_builder_add(builder, parts[i]);
	}
	return g_strv_builder_end(builder);
}

/* runs the binary with @env (name, value pairs) and the NULL-terminated arguments */
static TestCliResult *
test_cli_run(TestCliFixture *fixture, const gchar *const *env, ...) G_GNUC_NULL_TERMINATED;

static TestCliResult *
test_cli_run(TestCliFixture *fixture, const gchar *const *env, ...)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	g_autoptr(GSubprocess) proc = NULL;
	TestCliCommunicate comm = { 0 };
	TestCliResult *res = g_new0(TestCliResult, 1);
	const gchar *arg;
	va_list ap;

	va_start(ap, env);
	while ((arg = va_arg(ap, const gchar *)) != NULL)
		g_ptr_array_add(args, (gpointer)arg);
	va_end(ap);
	g_ptr_array_add(args, NULL);

	proc = test_cli_spawnv(fixture, env, (const gchar *const *)args->pdata);
	g_subprocess_communicate_async(proc, NULL, NULL, test_cli_communicate_cb, &comm);
	if (!test_cli_iterate_until(fixture->context, test_cli_flag_is_set, &comm.done,
				    TEST_CLI_COMMAND_TIMEOUT_MS)) {
		/* end it, and let the pending communicate finish before its state goes away */
		g_subprocess_force_exit(proc);
		test_cli_iterate_until(fixture->context, test_cli_flag_is_set, &comm.done,
				       TEST_CLI_COMMAND_TIMEOUT_MS);
		g_assert_true(comm.done);
		g_test_fail_printf("%s did not finish within %u ms",
				   (const gchar *)g_ptr_array_index(args, 0),
				   (guint)TEST_CLI_COMMAND_TIMEOUT_MS);
	}
	g_assert_no_error(comm.error);

	res->exited = g_subprocess_get_if_exited(proc);
	res->status =
		res->exited ? g_subprocess_get_exit_status(proc) : g_subprocess_get_term_sig(proc);
	res->out = test_cli_bytes_to_string(comm.out);
	res->err = test_cli_bytes_to_string(comm.err);
	res->err_lines = test_cli_split_lines(res->err);
	g_clear_pointer(&comm.out, g_bytes_unref);
	g_clear_pointer(&comm.err, g_bytes_unref);
	return res;
}

/* --- assertions ---------------------------------------------------------------------------- */

static void
test_cli_assert_exit(const TestCliResult *res, gint code)
{
	if (!res->exited || res->status != code)
		g_test_message("stdout:\n%s\nstderr:\n%s", res->out, res->err);
	g_assert_true(res->exited);
	g_assert_cmpint(res->status, ==, code);
}

/* the stderr line of the problem at @path ("path: message [where]"), or NULL */
static const gchar *
test_cli_find_problem(const TestCliResult *res, const gchar *path)
{
	g_autofree gchar *prefix = g_strdup_printf("%s: ", path);

	for (guint i = 0; res->err_lines[i] != NULL; i++) {
		if (g_str_has_prefix(res->err_lines[i], prefix))
			return res->err_lines[i];
	}
	return NULL;
}

/*
 * asserts a problem line for @path that mentions @fragment; @where is the exact
 * "[...]" suffix, or NULL when the position is not checked
 */
static void
test_cli_assert_problem(const TestCliResult *res, const gchar *path, const gchar *fragment,
			const gchar *where)
{
	const gchar *line = test_cli_find_problem(res, path);

	if (line == NULL)
		g_test_message("no problem for %s in stderr:\n%s", path, res->err);
	g_assert_nonnull(line);
	if (fragment != NULL && strstr(line, fragment) == NULL)
		g_test_message("problem line lacks '%s': %s", fragment, line);
	g_assert_true(fragment == NULL || strstr(line, fragment) != NULL);
	if (where != NULL) {
		g_autofree gchar *suffix = g_strdup_printf(" [%s]", where);
		if (!g_str_has_suffix(line, suffix))
			g_test_message("problem line does not end in '%s': %s", suffix, line);
		g_assert_true(g_str_has_suffix(line, suffix));
	}
}

/* asserts that @path's problem points into @file with a line and a column */
static void
test_cli_assert_problem_in_file(const TestCliResult *res, const gchar *path, const gchar *file)
{
	const gchar *line = test_cli_find_problem(res, path);
	g_autofree gchar *escaped = g_regex_escape_string(file, -1);
	g_autofree gchar *pattern = g_strdup_printf(" \\[%s:[0-9]+:[0-9]+\\]$", escaped);

	g_assert_nonnull(line);
	if (!g_regex_match_simple(pattern, line, 0, 0))
		g_test_message("problem line has no %s:LINE:COLUMN: %s", file, line);
	g_assert_true(g_regex_match_simple(pattern, line, 0, 0));
}

/* `check` failed with exactly @n problem lines and said so on its last line */
static void
test_cli_assert_check_failed(const TestCliResult *res, guint n)
{
	guint lines = g_strv_length(res->err_lines);
	g_autofree gchar *summary =
		g_strdup_printf("config check FAILED: %u problem%s", n, n == 1 ? "" : "s");

	test_cli_assert_exit(res, 2);
	g_assert_cmpstr(res->out, ==, "");
	g_assert_cmpuint(lines, ==, n + 1);
	g_assert_cmpstr(res->err_lines[lines - 1], ==, summary);
}

static void
test_cli_assert_check_ok(const TestCliResult *res)
{
	test_cli_assert_exit(res, 0);
	g_assert_cmpstr(res->out, ==, "config check OK\n");
	g_assert_cmpstr(res->err, ==, "");
}

static void
test_cli_assert_usage_error(const TestCliResult *res, const gchar *fragment)
{
	test_cli_assert_exit(res, 2);
	g_assert_cmpstr(res->out, ==, "");
	g_assert_true(g_str_has_prefix(res->err, "sf2loki: "));
	g_assert_nonnull(strstr(res->err, fragment));
	g_assert_nonnull(strstr(res->err, "\nUsage:\n"));
}

static void
test_cli_assert_no_marker(TestCliFixture *fixture, const gchar *text, const gchar *what)
{
	if (strstr(text, fixture->marker) != NULL)
		g_test_message("%s leaks the secret marker:\n%s", what, text);
	g_assert_null(strstr(text, fixture->marker));
}

/*
 * a minimal valid configuration with one source; @extra is appended as more sink.loki keys or
 * top-level YAML (the source comes after it, so the positions of @extra's lines are fixed)
 */
static gchar *
test_cli_good_config(TestCliFixture *fixture, const gchar *extra)
{
	g_autofree gchar *text = g_strdup_printf("salesforce:\n"
						 "  client_id: abc\n"
						 "  username: integration@example.com\n"
						 "  private_key_file: %s\n"
						 "sink:\n"
						 "  loki:\n"
						 "    url: https://" TEST_CLI_LOKI_PUSH "\n"
						 "%s" TEST_CLI_SOURCE,
						 fixture->key_path, extra != NULL ? extra : "");
	return test_cli_write(fixture, "good.yaml", text);
}

static gchar *
test_cli_where(const gchar *file, guint line, guint column)
{
	return g_strdup_printf("%s:%u:%u", file, line, column);
}

/* --- commands and flags -------------------------------------------------------------------- */

static void
test_cli_version(TestCliFixture *fixture, gconstpointer user_data)
{
	static const gchar *const spellings[] = { "version", "--version", "-V", NULL };

	for (guint i = 0; spellings[i] != NULL; i++) {
		g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, spellings[i], NULL);
		test_cli_assert_exit(res, 0);
		g_assert_cmpstr(res->out, ==, "sf2loki " PACKAGE_VERSION "\n");
		g_assert_cmpstr(res->err, ==, "");
	}
}

static void
test_cli_help(TestCliFixture *fixture, gconstpointer user_data)
{
	static const gchar *const spellings[] = { "help", "--help", "-h", NULL };

	for (guint i = 0; spellings[i] != NULL; i++) {
		g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, spellings[i], NULL);
		test_cli_assert_exit(res, 0);
		g_assert_true(g_str_has_prefix(res->out, "Usage:\n"));
		g_assert_nonnull(strstr(res->out, "sf2loki check --config PATH"));
		g_assert_cmpstr(res->err, ==, "");
	}
}

static void
test_cli_unknown_command(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "frobnicate", NULL);
	test_cli_assert_usage_error(res, "unknown command 'frobnicate'");
}

static void
test_cli_bad_flag(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "--bogus", NULL);
	g_autoptr(TestCliResult) extra = NULL;

	test_cli_assert_usage_error(res, "--bogus");

	/* a stray argument after a command is a usage error too */
	extra = test_cli_run(fixture, NULL, "check", "stray", NULL);
	test_cli_assert_usage_error(extra, "unexpected argument 'stray'");
}

static void
test_cli_config_artifacts(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autoptr(TestCliResult) example = test_cli_run(fixture, NULL, "config", "example", NULL);
	g_autoptr(TestCliResult) reference =
		test_cli_run(fixture, NULL, "config", "reference", NULL);
	g_autoptr(TestCliResult) unknown = test_cli_run(fixture, NULL, "config", "nonsense", NULL);
	g_autoptr(TestCliResult) missing = test_cli_run(fixture, NULL, "config", NULL);

	test_cli_assert_exit(example, 0);
	g_assert_nonnull(strstr(example->out, "\nsalesforce:\n"));
	g_assert_cmpstr(example->err, ==, "");
	test_cli_assert_exit(reference, 0);
	g_assert_true(g_str_has_prefix(reference->out, "# Configuration reference"));
	test_cli_assert_usage_error(unknown, "unknown config artifact 'nonsense'");
	test_cli_assert_usage_error(missing, "config needs one of: example, reference");
}

/* the schema and the Helm block need no configuration, and print nothing else */
static void
test_cli_config_schema_helm(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autoptr(TestCliResult) schema = test_cli_run(fixture, NULL, "config", "schema", NULL);
	g_autoptr(TestCliResult) helm = test_cli_run(fixture, NULL, "config", "helm-values", NULL);
	json_error_t jerr;
	json_t *doc = NULL;

	test_cli_assert_exit(schema, 0);
	g_assert_cmpstr(schema->err, ==, "");
	doc = json_loads(schema->out, 0, &jerr);
	g_assert_nonnull(doc);
	g_assert_cmpstr(json_string_value(json_object_get(doc, "$schema")), ==,
			"https://json-schema.org/draft/2020-12/schema");
	g_assert_nonnull(json_object_get(json_object_get(doc, "properties"), "sink"));
	json_decref(doc);
	/* 2-space indentation, as the original printed it */
	g_assert_true(g_str_has_prefix(schema->out, "{\n  \"$schema\""));

	test_cli_assert_exit(helm, 0);
	g_assert_cmpstr(helm->err, ==, "");
	g_assert_true(g_str_has_prefix(helm->out, "# >>> BEGIN generated config"));
	g_assert_true(g_str_has_suffix(helm->out, "# >>> END generated config <<<\n"));
	g_assert_nonnull(strstr(helm->out, "\nconfig:\n  # "));
}

/* --- check: accepted configurations -------------------------------------------------------- */

/* check builds what run would: a backend this build cannot construct fails here, exit 2 */
static void
test_cli_check_wiring(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_good_config(
		fixture, "state:\n  store: s3\n"
			 "  s3: {bucket: b, endpoint_url: 'ftp://minio:9000'}\n");
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);

	test_cli_assert_exit(res, 2);
	test_cli_assert_problem(res, "state.s3", "endpoint_url must be an http(s) URL", NULL);
}

static void
test_cli_check_good(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_good_config(fixture, NULL);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autoptr(TestCliResult) alias = NULL;

	test_cli_assert_check_ok(res);

	/* --check is the same command */
	alias = test_cli_run(fixture, NULL, "--check", "--config", path, NULL);
	test_cli_assert_check_ok(alias);
}

static void
test_cli_check_example(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autoptr(TestCliResult) example = test_cli_run(fixture, NULL, "config", "example", NULL);
	g_autofree gchar *path = NULL;
	g_autoptr(TestCliResult) with_env = NULL;
	g_autoptr(TestCliResult) without_env = NULL;
	const gchar *env[] = { "SF_CLIENT_ID",
			       "3MVG9example",
			       "SF_USERNAME",
			       "integration@example.com",
			       "SF_PRIVATE_KEY_FILE",
			       fixture->key_path,
			       "LOKI_URL",
			       "https://" TEST_CLI_LOKI_PUSH,
			       NULL };

	test_cli_assert_exit(example, 0);
	path = test_cli_write(fixture, "example.yaml", example->out);

	with_env = test_cli_run(fixture, env, "check", "--config", path, NULL);
	test_cli_assert_check_ok(with_env);

	without_env = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	test_cli_assert_check_failed(without_env, 4);
	test_cli_assert_problem(without_env, "salesforce.client_id", "${SF_CLIENT_ID}", NULL);
	test_cli_assert_problem_in_file(without_env, "salesforce.client_id", path);
	test_cli_assert_problem(without_env, "salesforce.username", "${SF_USERNAME}", NULL);
	test_cli_assert_problem(without_env, "salesforce.private_key_file",
				"${SF_PRIVATE_KEY_FILE}", NULL);
	test_cli_assert_problem(without_env, "sink.loki.url", "${LOKI_URL}", NULL);
	test_cli_assert_problem_in_file(without_env, "sink.loki.url", path);
}

static void
test_cli_check_blank_inline_secret(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *text =
		g_strdup_printf("salesforce:\n"
				"  client_id: abc\n"
				"  username: integration@example.com\n"
				"  private_key: \"  \"\n"
				"  private_key_file: %s\n"
				"sink:\n"
				"  loki:\n"
				"    url: https://" TEST_CLI_LOKI_PUSH "\n" TEST_CLI_SOURCE,
				fixture->key_path);
	g_autofree gchar *path = test_cli_write(fixture, "shadow.yaml", text);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);

	/* blank counts as absent, so the whitespace cannot shadow the file */
	test_cli_assert_check_ok(res);
}

/* --- check: one problem of each shape ------------------------------------------------------ */

static void
test_cli_check_unknown_key(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *text = g_strdup_printf("salesforce:\n"
						 "  client_id: abc\n"
						 "  username: integration@example.com\n"
						 "  private_key_file: %s\n"
						 "  usernme: typo\n"
						 "sink:\n"
						 "  loki:\n"
						 "    url: https://" TEST_CLI_LOKI_PUSH "\n"
						 "    batch:\n"
						 "      max_entrys: 5\n",
						 fixture->key_path);
	g_autofree gchar *path = test_cli_write(fixture, "unknown.yaml", text);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *where1 = test_cli_where(path, 5, 3);
	g_autofree gchar *where2 = test_cli_where(path, 10, 7);

	test_cli_assert_check_failed(res, 2);
	test_cli_assert_problem(res, "salesforce.usernme", "unknown configuration key", where1);
	test_cli_assert_problem(res, "sink.loki.batch.max_entrys", "unknown configuration key",
				where2);
}

static void
test_cli_check_wrong_type(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = NULL;
	g_autoptr(TestCliResult) res = NULL;
	g_autofree gchar *where1 = NULL;
	g_autofree gchar *where2 = NULL;
	g_autofree gchar *where3 = NULL;

	path = test_cli_good_config(fixture, "    batch:\n"
					     "      max_entries: lots\n"
					     "    labels: [job]\n"
					     "service:\n"
					     "  telemetry:\n"
					     "    enabled: maybe\n");
	res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	where1 = test_cli_where(path, 9, 20);
	where2 = test_cli_where(path, 10, 13);
	where3 = test_cli_where(path, 13, 14);

	test_cli_assert_check_failed(res, 3);
	test_cli_assert_problem(res, "sink.loki.batch.max_entries",
				"expected an integer, got 'lots'", where1);
	test_cli_assert_problem(res, "sink.loki.labels", "expected a mapping of strings", where2);
	test_cli_assert_problem(res, "service.telemetry.enabled", "expected a boolean", where3);
}

static void
test_cli_check_bad_duration(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_good_config(fixture, "    batch:\n"
							       "      flush_interval: 5 parsecs\n"
							       "service:\n"
							       "  shutdown_grace: \"30\"\n");
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *where1 = test_cli_where(path, 9, 23);
	g_autofree gchar *where2 = test_cli_where(path, 11, 19);

	test_cli_assert_check_failed(res, 2);
	test_cli_assert_problem(res, "sink.loki.batch.flush_interval",
				"invalid duration '5 parsecs'", where1);
	test_cli_assert_problem(res, "service.shutdown_grace", "a quoted number needs a unit",
				where2);
}

static void
test_cli_check_bad_enum(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_good_config(fixture, "    encoding: xml\n"
							       "state:\n"
							       "  store: floppy\n");
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *where1 = test_cli_where(path, 8, 15);
	g_autofree gchar *where2 = test_cli_where(path, 10, 10);

	test_cli_assert_check_failed(res, 2);
	test_cli_assert_problem(res, "sink.loki.encoding",
				"must be one of: protobuf, json (got 'xml')", where1);
	test_cli_assert_problem(res, "state.store", "must be one of: file, s3, gcs (got 'floppy')",
				where2);
}

static void
test_cli_check_out_of_range(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *text = g_strdup_printf("salesforce:\n"
						 "  client_id: abc\n"
						 "  username: integration@example.com\n"
						 "  private_key_file: %s\n"
						 "  token_ttl: 1m\n"
						 "sources:\n"
						 "  pubsub:\n"
						 "    default_num_requested: 101\n"
						 "sink:\n"
						 "  loki:\n"
						 "    url: https://" TEST_CLI_LOKI_PUSH "\n",
						 fixture->key_path);
	g_autofree gchar *path = test_cli_write(fixture, "range.yaml", text);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *where1 = test_cli_where(path, 5, 14);
	g_autofree gchar *where2 = test_cli_where(path, 8, 28);

	test_cli_assert_check_failed(res, 2);
	test_cli_assert_problem(res, "salesforce.token_ttl", "must be at least 120 (got 1m)",
				where1);
	test_cli_assert_problem(res, "sources.pubsub.default_num_requested",
				"must be at most 100 (got 101)", where2);
}

static void
test_cli_check_unset_variable(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *text =
		g_strdup_printf("salesforce:\n"
				"  client_id: abc\n"
				"  username: integration@example.com\n"
				"  private_key_file: %s\n"
				"sink:\n"
				"  loki:\n"
				"    url: ${SFL_TEST_UNSET}/loki/api/v1/push\n" TEST_CLI_SOURCE,
				fixture->key_path);
	g_autofree gchar *path = test_cli_write(fixture, "unset.yaml", text);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *where = test_cli_where(path, 7, 10);
	const gchar *env[] = { "SFL_TEST_UNSET", "https://loki.example.com", NULL };
	g_autoptr(TestCliResult) set = NULL;

	test_cli_assert_check_failed(res, 1);
	test_cli_assert_problem(res, "sink.loki.url",
				"undefined environment variable ${SFL_TEST_UNSET}", where);

	/* the same file is fine once the variable exists */
	set = test_cli_run(fixture, env, "check", "--config", path, NULL);
	test_cli_assert_check_ok(set);
}

static gchar *
test_cli_config_with_key_file(TestCliFixture *fixture, const gchar *key_file)
{
	g_autofree gchar *text = g_strdup_printf("salesforce:\n"
						 "  client_id: abc\n"
						 "  username: integration@example.com\n"
						 "  private_key_file: %s\n"
						 "sink:\n"
						 "  loki:\n"
						 "    url: https://" TEST_CLI_LOKI_PUSH "\n",
						 key_file);
	return test_cli_write(fixture, "secret-file.yaml", text);
}

static void
test_cli_check_secret_file_missing(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *key = g_build_filename(fixture->dir, "no-such-key.pem", NULL);
	g_autofree gchar *path = test_cli_config_with_key_file(fixture, key);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *where = test_cli_where(path, 4, 21);

	/* the read failure is the one problem; no "required" on top of it */
	test_cli_assert_check_failed(res, 1);
	test_cli_assert_problem(res, "salesforce.private_key_file", key, where);
	g_assert_null(test_cli_find_problem(res, "salesforce.private_key"));
}

static void
test_cli_check_secret_file_directory(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *key = g_build_filename(fixture->dir, "keys.d", NULL);
	g_autofree gchar *path = NULL;
	g_autoptr(TestCliResult) res = NULL;
	g_autofree gchar *where = NULL;

	g_assert_cmpint(g_mkdir(key, 0700), ==, 0);
	path = test_cli_config_with_key_file(fixture, key);
	res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	where = test_cli_where(path, 4, 21);

	test_cli_assert_check_failed(res, 1);
	test_cli_assert_problem(res, "salesforce.private_key_file", key, where);
}

static void
test_cli_check_secret_file_blank(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *key = test_cli_write(fixture, "blank.pem", "  \n\t \n");
	g_autofree gchar *path = test_cli_config_with_key_file(fixture, key);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *where = test_cli_where(path, 2, 3);

	test_cli_assert_check_failed(res, 1);
	test_cli_assert_problem(res, "salesforce.private_key", "required", where);
	test_cli_assert_problem(res, "salesforce.private_key", "count as absent", NULL);
}

/* --- check: environment -------------------------------------------------------------------- */

static void
test_cli_check_env_override(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *good = test_cli_good_config(fixture, NULL);
	g_autofree gchar *text =
		g_strdup_printf("salesforce:\n"
				"  client_id: abc\n"
				"  username: integration@example.com\n"
				"  private_key_file: %s\n"
				"sink:\n"
				"  loki:\n"
				"    url: ftp://loki.example.com\n" TEST_CLI_SOURCE,
				fixture->key_path);
	g_autofree gchar *bad = test_cli_write(fixture, "bad-url.yaml", text);
	const gchar *bad_env[] = { "SF2LOKI_SINK__LOKI__URL", "ftp://override.example.com", NULL };
	const gchar *good_env[] = { "SF2LOKI_SINK__LOKI__URL", "https://" TEST_CLI_LOKI_PUSH,
				    NULL };
	g_autoptr(TestCliResult) broken = NULL;
	g_autoptr(TestCliResult) fixed = NULL;

	/* a good file is broken by the variable, so the variable won */
	broken = test_cli_run(fixture, bad_env, "check", "--config", good, NULL);
	test_cli_assert_check_failed(broken, 1);
	test_cli_assert_problem(broken, "sink.loki.url", "must be an http(s) URL",
				"env SF2LOKI_SINK__LOKI__URL");

	/* and a bad file is repaired by it */
	fixed = test_cli_run(fixture, good_env, "check", "--config", bad, NULL);
	test_cli_assert_check_ok(fixed);
}

static void
test_cli_check_env_json_list(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_good_config(fixture, NULL);
	const gchar *good_env[] = { "SF2LOKI_SOURCES__PUBSUB__TOPICS", "[\"/event/A\"]", NULL };
	const gchar *bad_env[] = { "SF2LOKI_SOURCES__PUBSUB__TOPICS", "[\"/event/A\"", NULL };
	g_autoptr(TestCliResult) good = NULL;
	g_autoptr(TestCliResult) bad = NULL;

	good = test_cli_run(fixture, good_env, "check", "--config", path, NULL);
	test_cli_assert_check_ok(good);

	bad = test_cli_run(fixture, bad_env, "check", "--config", path, NULL);
	test_cli_assert_check_failed(bad, 1);
	test_cli_assert_problem(bad, "sources.pubsub.topics", "env SF2LOKI_SOURCES__PUBSUB__TOPICS",
				NULL);
	test_cli_assert_problem(bad, "sources.pubsub.topics", "invalid JSON", NULL);
}

static void
test_cli_check_env_unknown_key(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_good_config(fixture, NULL);
	const gchar *nested[] = { "SF2LOKI_SINK__LOKI__BOGUS", "1", NULL };
	const gchar *foreign[] = { "SF2LOKI_UNRELATED", "1", NULL };
	g_autoptr(TestCliResult) res = NULL;
	g_autoptr(TestCliResult) ignored = NULL;

	res = test_cli_run(fixture, nested, "check", "--config", path, NULL);
	test_cli_assert_check_failed(res, 1);
	test_cli_assert_problem(res, "sink.loki.bogus", "unknown configuration key",
				"env SF2LOKI_SINK__LOKI__BOGUS");

	/* an unknown top-level name belongs to someone else and is left alone */
	ignored = test_cli_run(fixture, foreign, "check", "--config", path, NULL);
	test_cli_assert_check_ok(ignored);
}

/* --- check: documents that are not configurations ------------------------------------------ */

static void
test_cli_check_cross_field(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_good_config(fixture, "coordinate:\n"
							       "  type: file_lease\n"
							       "  file_lease:\n"
							       "    ttl: 10s\n"
							       "    renew_interval: 10s\n");
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *where = test_cli_where(path, 11, 5);

	test_cli_assert_check_failed(res, 1);
	test_cli_assert_problem(res, "coordinate.file_lease.renew_interval",
				"2 x renew_interval (10s) must be less than ttl (10s)", where);
}

/* k8s_lease outside a pod: the service account is read at startup, not by check */
static void
test_cli_check_k8s_outside_pod(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *missing = g_build_filename(fixture->dir, "no-kubeconfig", NULL);
	g_autofree gchar *with_kubeconfig = g_strdup_printf(
		"coordinate:\n  type: k8s_lease\n  k8s_lease:\n    kubeconfig: %s\n", missing);
	g_autofree gchar *path = NULL;
	g_autoptr(TestCliResult) res = NULL;
	g_autoptr(TestCliResult) bad = NULL;

	path = test_cli_good_config(fixture, "coordinate:\n  type: k8s_lease\n");
	res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_assert_true(res->exited);
	g_assert_cmpint(res->status, ==, 0);
	g_assert_nonnull(strstr(res->out, "note: coordinate.k8s_lease reads the pod's service"));
	g_assert_true(g_str_has_suffix(res->out, "config check OK\n"));

	/* a kubeconfig is read by check, and a missing one is a problem */
	g_free(path);
	path = test_cli_good_config(fixture, with_kubeconfig);
	bad = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	test_cli_assert_check_failed(bad, 1);
	g_assert_nonnull(strstr(bad->err, "no-kubeconfig"));
}

static void
test_cli_check_yaml_syntax(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_write(fixture, "syntax.yaml",
						"salesforce:\n"
						"  client_id: abc\n"
						" username: misindented\n"
						"sink: {}\n");
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *prefix = g_strdup_printf("%s:3:", path);

	test_cli_assert_check_failed(res, 1);
	g_assert_true(g_str_has_prefix(res->err_lines[0], prefix));
	g_assert_nonnull(strstr(res->err_lines[0], "invalid YAML"));
}

static void
test_cli_check_empty_file(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_write(fixture, "empty.yaml", "");
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);

	test_cli_assert_check_failed(res, 2);
	test_cli_assert_problem(res, "salesforce", "field required", path);
	test_cli_assert_problem(res, "sink", "field required", path);
}

static void
test_cli_check_top_level_list(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_write(fixture, "list.yaml", "- salesforce\n- sink\n");
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *expected = g_strdup_printf(
		"%s:1:1: the top level of the configuration must be a mapping", path);

	test_cli_assert_check_failed(res, 1);
	g_assert_cmpstr(res->err_lines[0], ==, expected);
}

static void
test_cli_check_missing_file(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = g_build_filename(fixture->dir, "absent.yaml", NULL);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);

	test_cli_assert_check_failed(res, 1);
	g_assert_true(g_str_has_prefix(res->err_lines[0], "cannot read config file: "));
	g_assert_nonnull(strstr(res->err_lines[0], path));
}

/* --- secrets ------------------------------------------------------------------------------- */

/*
 * secrets in every secret slot plus URL userinfo, and the marker quoted inside values that
 * error messages echo; @broken adds problems elsewhere so every message path is taken
 */
static gchar *
test_cli_secret_config(TestCliFixture *fixture, const gchar *log_format, gboolean broken)
{
	const gchar *m = fixture->marker;
	g_autofree gchar *state = g_build_filename(fixture->dir, "state.json", NULL);
	g_autofree gchar *errors = NULL;
	g_autofree gchar *preset = NULL;
	g_autofree gchar *health = NULL;
	g_autofree gchar *text = NULL;

	if (broken) {
		errors = g_strdup_printf("  token_ttl: 1m\n"
					 "  api_version: \"https://user:%s@loki.example.com/x\"\n",
					 m);
		preset = g_strdup_printf("    replay_preset: \"token=%s\"\n", m);
		health = g_strdup_printf("https://user:%s@health.example.com", m);
	}
	/*
	 * one source, so `run` has work: it stays in its start-up authentication against the
	 * silent login URL (client credentials: the inline key is never parsed, and the marker
	 * in it must still never be printed)
	 */
	text = g_strdup_printf("salesforce:\n"
			       "  login_url: %s\n"
			       "  auth_mode: client_credentials\n"
			       "  client_secret: %s\n"
			       "  client_id: abc\n"
			       "  username: integration@example.com\n"
			       "  private_key: \"-----BEGIN PRIVATE KEY-----\\n%s\\n"
			       "-----END PRIVATE KEY-----\\n\"\n"
			       "%s"
			       "sink:\n"
			       "  loki:\n"
			       "    url: https://user:%s@" TEST_CLI_LOKI_PUSH "\n"
			       "    auth_token: %s\n"
			       "    tenant_id: \"12345\"\n"
			       "state:\n"
			       "  file:\n"
			       "    path: %s\n"
			       "service:\n"
			       "  health_addr: \"%s\"\n"
			       "  log_format: %s\n"
			       "  shutdown_grace: 5s\n"
			       "sources:\n"
			       "  pubsub:\n"
			       "    topics: [/event/LoginEventStream]\n"
			       "%s",
			       test_cli_silent_url(fixture), m, m, errors != NULL ? errors : "", m,
			       m, state, health != NULL ? health : "127.0.0.1:0", log_format,
			       preset != NULL ? preset : "");
	return test_cli_write(fixture, broken ? "secrets-broken.yaml" : "secrets.yaml", text);
}

static void
test_cli_check_no_secret_leak(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_secret_config(fixture, "json", TRUE);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);
	g_autofree gchar *good = test_cli_secret_config(fixture, "json", FALSE);
	g_autoptr(TestCliResult) ok = NULL;

	test_cli_assert_check_failed(res, 4);
	test_cli_assert_problem(res, "salesforce.token_ttl", "must be at least 120", NULL);
	test_cli_assert_problem(res, "salesforce.api_version", "https://user:***@", NULL);
	test_cli_assert_problem(res, "sources.pubsub.replay_preset", "must be one of", NULL);
	test_cli_assert_problem(res, "service.health_addr", "expected host:port", NULL);
	test_cli_assert_no_marker(fixture, res->out, "check stdout");
	test_cli_assert_no_marker(fixture, res->err, "check stderr");

	ok = test_cli_run(fixture, NULL, "check", "--config", good, NULL);
	test_cli_assert_check_ok(ok);
}

/* --- run ----------------------------------------------------------------------------------- */

typedef struct {
	GSubprocess *proc;
	GDataInputStream *err;
	GPtrArray *lines; /* (element-type utf8): stderr so far */
	gboolean err_eof;
	GOutputStream *out;
	gboolean out_done;
	gboolean exited;
} TestCliDaemon;

static void
test_cli_daemon_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	TestCliDaemon *daemon = user_data;
	g_autoptr(GError) error = NULL;
	gchar *line = g_data_input_stream_read_line_finish(G_DATA_INPUT_STREAM(source), result,
							   NULL, &error);

	if (line == NULL) {
		if (error != NULL)
			g_test_message("reading stderr: %s", error->message);
		daemon->err_eof = TRUE;
		return;
	}
	g_ptr_array_add(daemon->lines, line);
	g_data_input_stream_read_line_async(daemon->err, G_PRIORITY_DEFAULT, NULL,
					    test_cli_daemon_read_cb, daemon);
}

static void
test_cli_daemon_splice_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	TestCliDaemon *daemon = user_data;
	g_autoptr(GError) error = NULL;

	if (g_output_stream_splice_finish(G_OUTPUT_STREAM(source), result, &error) < 0)
		g_test_message("reading stdout: %s", error->message);
	daemon->out_done = TRUE;
}

static void
test_cli_daemon_wait_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	TestCliDaemon *daemon = user_data;
	g_autoptr(GError) error = NULL;

	if (!g_subprocess_wait_finish(G_SUBPROCESS(source), result, &error))
		g_test_message("waiting for the process: %s", error->message);
	daemon->exited = TRUE;
}

static TestCliDaemon *
test_cli_daemon_start(TestCliFixture *fixture, const gchar *config)
{
	const gchar *args[] = { "run", "--config", config, NULL };
	TestCliDaemon *daemon = g_new0(TestCliDaemon, 1);

	daemon->proc = test_cli_spawnv(fixture, NULL, args);
	daemon->lines = g_ptr_array_new_with_free_func(g_free);
	daemon->err = g_data_input_stream_new(g_subprocess_get_stderr_pipe(daemon->proc));
	g_data_input_stream_read_line_async(daemon->err, G_PRIORITY_DEFAULT, NULL,
					    test_cli_daemon_read_cb, daemon);
	daemon->out = g_memory_output_stream_new_resizable();
	g_output_stream_splice_async(daemon->out, g_subprocess_get_stdout_pipe(daemon->proc),
				     G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE |
					     G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET,
				     G_PRIORITY_DEFAULT, NULL, test_cli_daemon_splice_cb, daemon);
	g_subprocess_wait_async(daemon->proc, NULL, test_cli_daemon_wait_cb, daemon);
	return daemon;
}

static gboolean
test_cli_daemon_finished(gpointer user_data)
{
	TestCliDaemon *daemon = user_data;
	return daemon->exited && daemon->err_eof && daemon->out_done;
}

/* waits for exit and closed pipes, ending the process first if it outlives the deadline */
static gboolean
test_cli_daemon_wait(TestCliFixture *fixture, TestCliDaemon *daemon)
{
	if (test_cli_iterate_until(fixture->context, test_cli_daemon_finished, daemon,
				   TEST_CLI_STOP_TIMEOUT_MS))
		return TRUE;
	g_test_message("sf2loki still running %u ms after the stop request; killing it",
		       (guint)TEST_CLI_STOP_TIMEOUT_MS);
	g_subprocess_force_exit(daemon->proc);
	/* the callbacks point at @daemon, so they must all have run before it is freed */
	g_assert_true(test_cli_iterate_until(fixture->context, test_cli_daemon_finished, daemon,
					     TEST_CLI_STOP_TIMEOUT_MS));
	return FALSE;
}

static void
test_cli_daemon_free(TestCliDaemon *daemon)
{
	g_object_unref(daemon->err);
	g_object_unref(daemon->out);
	g_object_unref(daemon->proc);
	g_ptr_array_unref(daemon->lines);
	g_free(daemon);
}

static gchar *
test_cli_daemon_stdout(TestCliDaemon *daemon)
{
	GMemoryOutputStream *mem = G_MEMORY_OUTPUT_STREAM(daemon->out);
	const gchar *data = g_memory_output_stream_get_data(mem);

	/* nothing written leaves no buffer at all */
	return g_strndup(data != NULL ? data : "", g_memory_output_stream_get_data_size(mem));
}

static gchar *
test_cli_daemon_stderr(TestCliDaemon *daemon)
{
	g_autoptr(GString) text = g_string_new(NULL);
	for (guint i = 0; i < daemon->lines->len; i++)
		g_string_append_printf(text, "%s\n",
				       (const gchar *)g_ptr_array_index(daemon->lines, i));
	return g_string_free(g_steal_pointer(&text), FALSE);
}

/* a JSON log line with the four fixed string keys (the original's), or NULL */
static json_t *
test_cli_parse_json_line(const gchar *line)
{
	static const gchar *const keys[] = { "timestamp", "level", "event", "logger", NULL };
	json_error_t jerr;
	g_autoptr(json_t) obj = json_loads(line, 0, &jerr);

	if (obj == NULL || !json_is_object(obj))
		return NULL;
	for (guint i = 0; keys[i] != NULL; i++) {
		if (!json_is_string(json_object_get(obj, keys[i])))
			return NULL;
	}
	return g_steal_pointer(&obj);
}

static const gchar *
test_cli_json_str(json_t *obj, const gchar *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* the index of the first JSON line whose event starts with @prefix, or -1 */
static gint
test_cli_find_json_msg(GPtrArray *lines, const gchar *prefix)
{
	for (guint i = 0; i < lines->len; i++) {
		g_autoptr(json_t) obj = test_cli_parse_json_line(g_ptr_array_index(lines, i));
		if (obj != NULL && g_str_has_prefix(test_cli_json_str(obj, "event"), prefix))
			return (gint)i;
	}
	return -1;
}

/* the index of the first logfmt line carrying event="@msg", or -1 */
static gint
test_cli_find_logfmt_msg(GPtrArray *lines, const gchar *msg)
{
	g_autofree gchar *pair = g_strdup_printf(" event=\"%s", msg);

	for (guint i = 0; i < lines->len; i++) {
		const gchar *line = g_ptr_array_index(lines, i);
		if (g_str_has_prefix(line, "timestamp=") && strstr(line, pair) != NULL)
			return (gint)i;
	}
	return -1;
}

#define TEST_CLI_BANNER "sf2loki " PACKAGE_VERSION " starting"

typedef struct {
	TestCliDaemon *daemon;
	gboolean logfmt;
} TestCliBannerWait;

static gboolean
test_cli_banner_seen(gpointer user_data)
{
	TestCliBannerWait *wait = user_data;
	GPtrArray *lines = wait->daemon->lines;

	/* an early exit will never print it; stop waiting and let the caller report */
	if (wait->daemon->exited)
		return TRUE;
	if (wait->logfmt)
		return test_cli_find_logfmt_msg(lines, TEST_CLI_BANNER) >= 0;
	return test_cli_find_json_msg(lines, TEST_CLI_BANNER) >= 0;
}

/* starts `run`, waits for its banner and returns the daemon with the banner's line index */
static TestCliDaemon *
test_cli_daemon_start_ready(TestCliFixture *fixture, const gchar *config, gboolean logfmt,
			    gint *banner)
{
	TestCliDaemon *daemon = test_cli_daemon_start(fixture, config);
	TestCliBannerWait wait = { daemon, logfmt };
	gboolean seen = test_cli_iterate_until(fixture->context, test_cli_banner_seen, &wait,
					       TEST_CLI_BANNER_TIMEOUT_MS);

	*banner = logfmt ? test_cli_find_logfmt_msg(daemon->lines, TEST_CLI_BANNER)
			 : test_cli_find_json_msg(daemon->lines, TEST_CLI_BANNER);
	if (!seen || *banner < 0) {
		g_autofree gchar *err = NULL;
		test_cli_daemon_wait(fixture, daemon);
		err = test_cli_daemon_stderr(daemon);
		g_test_message("no banner within %u ms; stderr:\n%s",
			       (guint)TEST_CLI_BANNER_TIMEOUT_MS, err);
	}
	g_assert_cmpint(*banner, >=, 0);
	return daemon;
}

/* sends @signum and asserts a clean exit with the stop lines logged and no secret anywhere */
static void
test_cli_daemon_stop(TestCliFixture *fixture, TestCliDaemon *daemon, gint signum, gboolean logfmt)
{
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	gboolean stopped;

	g_subprocess_send_signal(daemon->proc, signum);
	stopped = test_cli_daemon_wait(fixture, daemon);
	out = test_cli_daemon_stdout(daemon);
	err = test_cli_daemon_stderr(daemon);
	if (!stopped || !g_subprocess_get_if_exited(daemon->proc) ||
	    g_subprocess_get_exit_status(daemon->proc) != 0)
		g_test_message("stdout:\n%s\nstderr:\n%s", out, err);
	g_assert_true(stopped);
	g_assert_true(g_subprocess_get_if_exited(daemon->proc));
	g_assert_cmpint(g_subprocess_get_exit_status(daemon->proc), ==, 0);

	if (logfmt) {
		g_assert_cmpint(test_cli_find_logfmt_msg(daemon->lines, "stop requested"), >=, 0);
		g_assert_cmpint(test_cli_find_logfmt_msg(daemon->lines, "sf2loki stopped ("), >=,
				0);
	} else {
		/* every line is a JSON object with the fixed keys */
		for (guint i = 0; i < daemon->lines->len; i++) {
			const gchar *line = g_ptr_array_index(daemon->lines, i);
			g_autoptr(json_t) obj = test_cli_parse_json_line(line);
			if (obj == NULL)
				g_test_message("not a JSON log line: %s", line);
			g_assert_nonnull(obj);
		}
		g_assert_cmpint(test_cli_find_json_msg(daemon->lines, "stop requested"), >=, 0);
		g_assert_cmpint(test_cli_find_json_msg(daemon->lines, "sf2loki stopped ("), >=, 0);
	}
	test_cli_assert_no_marker(fixture, out, "run stdout");
	test_cli_assert_no_marker(fixture, err, "run stderr");
}

static void
test_cli_run_signal(TestCliFixture *fixture, gint signum)
{
	g_autofree gchar *path = test_cli_secret_config(fixture, "json", FALSE);
	gint banner = -1;
	TestCliDaemon *daemon = test_cli_daemon_start_ready(fixture, path, FALSE, &banner);
	g_autoptr(json_t) obj = test_cli_parse_json_line(g_ptr_array_index(daemon->lines, banner));

	g_assert_nonnull(obj);
	g_assert_cmpstr(test_cli_json_str(obj, "event"), ==, TEST_CLI_BANNER);
	g_assert_cmpstr(test_cli_json_str(obj, "level"), ==, "info");
	g_assert_cmpstr(test_cli_json_str(obj, "logger"), ==, "SflRun");
	g_assert_true(g_regex_match_simple(
		"^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{6})?Z$",
		test_cli_json_str(obj, "timestamp"), 0, 0));
	test_cli_daemon_stop(fixture, daemon, signum, FALSE);
	test_cli_daemon_free(daemon);
}

static void
test_cli_run_sigterm(TestCliFixture *fixture, gconstpointer user_data)
{
	test_cli_run_signal(fixture, SIGTERM);
}

static void
test_cli_run_sigint(TestCliFixture *fixture, gconstpointer user_data)
{
	test_cli_run_signal(fixture, SIGINT);
}

/* a soft check: the test still fails, but only after the daemon was stopped cleanly */
static void
test_cli_expect_field(json_t *obj, const gchar *key, const gchar *expected, const gchar *line)
{
	const gchar *value = test_cli_json_str(obj, key);

	if (g_strcmp0(value, expected) != 0)
		g_test_fail_printf("banner field %s is %s%s%s, expected '%s'; banner: %s", key,
				   value != NULL ? "'" : "", value != NULL ? value : "missing",
				   value != NULL ? "'" : "", expected, line);
}

static void
test_cli_run_banner_fields(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_secret_config(fixture, "json", FALSE);
	gint banner = -1;
	TestCliDaemon *daemon = test_cli_daemon_start_ready(fixture, path, FALSE, &banner);
	const gchar *line = g_ptr_array_index(daemon->lines, banner);
	g_autoptr(json_t) obj = test_cli_parse_json_line(line);

	g_assert_nonnull(obj);
	/* userinfo keeps the user and loses the password */
	test_cli_expect_field(obj, "loki_url", "https://user:***@" TEST_CLI_LOKI_PUSH, line);
	test_cli_expect_field(obj, "version", PACKAGE_VERSION, line);
	test_cli_expect_field(obj, "config", path, line);
	test_cli_expect_field(obj, "state_store", "file", line);
	test_cli_expect_field(obj, "coordinator", "noop", line);
	test_cli_expect_field(obj, "orgs", "(single org)", line);
	test_cli_daemon_stop(fixture, daemon, SIGTERM, FALSE);
	test_cli_daemon_free(daemon);
}

static void
test_cli_run_logfmt(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_secret_config(fixture, "logfmt", FALSE);
	gint banner = -1;
	TestCliDaemon *daemon = test_cli_daemon_start_ready(fixture, path, TRUE, &banner);
	const gchar *line = g_ptr_array_index(daemon->lines, banner);
	json_error_t jerr;
	g_autoptr(json_t) obj = json_loads(line, 0, &jerr);

	g_assert_true(g_str_has_prefix(line, "timestamp="));
	g_assert_nonnull(strstr(line, " level=info event=\"" TEST_CLI_BANNER "\" logger=SflRun "));
	g_assert_null(obj);
	test_cli_daemon_stop(fixture, daemon, SIGTERM, TRUE);
	test_cli_daemon_free(daemon);
}

static void
test_cli_run_bad_config(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_secret_config(fixture, "json", TRUE);
	g_autofree gchar *absent = g_build_filename(fixture->dir, "absent.yaml", NULL);
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "run", "--config", path, NULL);
	g_autoptr(TestCliResult) missing = NULL;
	static const gchar *const expected[] = { "salesforce.token_ttl", "salesforce.api_version",
						 "sources.pubsub.replay_preset",
						 "service.health_addr", NULL };

	test_cli_assert_exit(res, 2);
	g_assert_cmpstr(res->out, ==, "");
	g_assert_cmpuint(g_strv_length(res->err_lines), ==, 4);
	for (guint i = 0; res->err_lines[i] != NULL; i++)
		g_assert_true(g_str_has_prefix(res->err_lines[i], "sf2loki: "));
	for (guint i = 0; expected[i] != NULL; i++) {
		g_autofree gchar *prefix = g_strdup_printf("sf2loki: %s: ", expected[i]);
		gboolean found = FALSE;
		for (guint j = 0; res->err_lines[j] != NULL; j++)
			found |= g_str_has_prefix(res->err_lines[j], prefix);
		if (!found)
			g_test_message("no '%s' line in stderr:\n%s", prefix, res->err);
		g_assert_true(found);
	}
	test_cli_assert_no_marker(fixture, res->out, "run stdout");
	test_cli_assert_no_marker(fixture, res->err, "run stderr");

	/* `run` is also the default command */
	missing = test_cli_run(fixture, NULL, "--config", absent, NULL);
	test_cli_assert_exit(missing, 2);
	g_assert_cmpuint(g_strv_length(missing->err_lines), ==, 1);
	g_assert_true(
		g_str_has_prefix(missing->err_lines[0], "sf2loki: cannot read config file: "));
	g_assert_nonnull(strstr(missing->err_lines[0], absent));
}

/* --- nothing to ingest (docs/cli.md: a finite run exits 0) -------------------------------- */

/* a valid configuration whose single org has @sources (a whole `sources:` section) */
static gchar *
test_cli_idle_config(TestCliFixture *fixture, const gchar *sources, const gchar *extra)
{
	g_autofree gchar *text =
		g_strdup_printf("salesforce:\n"
				"  client_id: abc\n"
				"  username: integration@example.com\n"
				"  private_key_file: %s\n"
				"sink:\n"
				"  loki:\n"
				"    url: https://" TEST_CLI_LOKI_PUSH "\n"
				"service: {health_addr: '127.0.0.1:0'}\n"
				"%s%s",
				fixture->key_path, sources, extra != NULL ? extra : "");
	return test_cli_write(fixture, "idle.yaml", text);
}

/*
 * `run` exits 0 on its own, says why with every one of @reasons, and ends before the
 * checkpoint store is opened (no state file, no lock)
 */
static void
test_cli_assert_idle_run(TestCliFixture *fixture, const gchar *path, const gchar *const *reasons)
{
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "run", "--config", path, NULL);
	g_autofree gchar *state = g_build_filename(fixture->dir, "state.json", NULL);
	g_autofree gchar *lock = g_strconcat(state, ".lock", NULL);
	g_autofree gchar *warning = NULL;
	g_autofree gchar *last = NULL;

	test_cli_assert_exit(res, 0);
	g_assert_cmpstr(res->out, ==, "");
	for (guint i = 0; res->err_lines[i] != NULL; i++) {
		g_autoptr(json_t) obj = test_cli_parse_json_line(res->err_lines[i]);
		const gchar *event = NULL;

		if (obj == NULL)
			g_test_message("not a JSON log line: %s", res->err_lines[i]);
		g_assert_nonnull(obj);
		event = test_cli_json_str(obj, "event");
		if (g_str_has_prefix(event, "no source is enabled")) {
			g_assert_cmpstr(test_cli_json_str(obj, "level"), ==, "warning");
			g_assert_null(warning);
			warning = g_strdup(event);
		}
		g_free(last);
		last = g_strdup(event);
	}
	if (warning == NULL)
		g_test_message("no reason logged; stderr:\n%s", res->err);
	g_assert_nonnull(warning);
	g_assert_true(g_str_has_suffix(warning, ": nothing to ingest; exiting"));
	for (guint i = 0; reasons[i] != NULL; i++) {
		if (strstr(warning, reasons[i]) == NULL)
			g_test_message("the reason lacks '%s': %s", reasons[i], warning);
		g_assert_nonnull(strstr(warning, reasons[i]));
	}
	g_assert_cmpstr(last, ==, "sf2loki stopped (no enabled source)");
	g_assert_false(g_file_test(state, G_FILE_TEST_EXISTS));
	g_assert_false(g_file_test(lock, G_FILE_TEST_EXISTS));
}

/* `check` accepts it (exit 0, "config check OK") and warns on one stderr line */
static void
test_cli_assert_idle_check(TestCliFixture *fixture, const gchar *path, const gchar *reason)
{
	g_autoptr(TestCliResult) res = test_cli_run(fixture, NULL, "check", "--config", path, NULL);

	test_cli_assert_exit(res, 0);
	g_assert_cmpstr(res->out, ==, "config check OK\n");
	g_assert_cmpuint(g_strv_length(res->err_lines), ==, 1);
	g_assert_true(g_str_has_prefix(res->err_lines[0], "warning: no source is enabled"));
	g_assert_nonnull(strstr(res->err_lines[0], reason));
	g_assert_true(g_str_has_suffix(res->err_lines[0],
				       ": `sf2loki run` has nothing to ingest and exits 0"));
}

/* every source off (the defaults) */
static void
test_cli_run_no_source(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_idle_config(fixture, "", NULL);
	static const gchar *const reasons[] = {
		"no source is enabled (",
		"sources.eventlogfile.enabled is false",
		"sources.eventlog_objects.enabled is false",
		"sources.apexlog.enabled is false",
		"sources.pubsub.topics is empty",
		NULL,
	};

	test_cli_assert_idle_run(fixture, path, reasons);
	test_cli_assert_idle_check(fixture, path, "sources.pubsub.topics is empty");
}

/* a Pub/Sub-only configuration whose topic list resolves to nothing offline */
static void
test_cli_run_no_topics(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *path = test_cli_idle_config(
		fixture,
		"sources:\n"
		"  pubsub: {topics: [/event/LoginEventStream], exclude: ['/event/Login*']}\n"
		"  eventlog_objects: {enabled: true, objects: []}\n",
		NULL);
	static const gchar *const reasons[] = {
		"sources.pubsub.include/exclude leave none of sources.pubsub.topics",
		"sources.eventlog_objects.objects is empty",
		NULL,
	};

	test_cli_assert_idle_run(fixture, path, reasons);
	test_cli_assert_idle_check(fixture, path, "leave none of sources.pubsub.topics");
}

/* under a coordinator every replica ends at once too, without touching the lease */
static void
test_cli_run_no_source_ha(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *lease = g_build_filename(fixture->dir, "leader.lease", NULL);
	g_autofree gchar *coordinate = g_strdup_printf(
		"coordinate:\n  type: file_lease\n  file_lease: {path: '%s'}\n", lease);
	g_autofree gchar *path =
		test_cli_idle_config(fixture, "sources: {pubsub: {enabled: false}}\n", coordinate);
	static const gchar *const reasons[] = { "sources.pubsub.enabled is false", NULL };

	test_cli_assert_idle_run(fixture, path, reasons);
	g_assert_false(g_file_test(lease, G_FILE_TEST_EXISTS));
}

/* two orgs; west has Pub/Sub @topics, east no source at all */
static gchar *
test_cli_orgs_config(TestCliFixture *fixture, const gchar *name, const gchar *topics)
{
	g_autofree gchar *sf = g_strdup_printf("    salesforce:\n"
					       "      client_id: abc\n"
					       "      username: integration@example.com\n"
					       "      private_key_file: %s\n",
					       fixture->key_path);
	g_autofree gchar *text =
		g_strdup_printf("orgs:\n"
				"  - name: east\n%s"
				"  - name: west\n%s"
				"    sources: {pubsub: {topics: %s, include: ['/event/Api*']}}\n"
				"sink:\n"
				"  loki:\n"
				"    url: https://" TEST_CLI_LOKI_PUSH "\n"
				"service: {health_addr: '127.0.0.1:0'}\n",
				sf, sf, topics);

	return test_cli_write(fixture, name, text);
}

/* multi-org: only when no org has anything to read, each org named with its reasons */
static void
test_cli_run_no_source_orgs(TestCliFixture *fixture, gconstpointer user_data)
{
	g_autofree gchar *busy = test_cli_orgs_config(fixture, "orgs-busy.yaml", "['*']");
	g_autofree gchar *idle = test_cli_orgs_config(fixture, "orgs-idle.yaml", "[]");
	g_autoptr(TestCliResult) check = NULL;
	static const gchar *const reasons[] = {
		"no source is enabled in any org (orgs[0] (east): sources.eventlogfile.enabled is "
		"false, ",
		"; orgs[1] (west): sources.eventlogfile.enabled is false, ",
		NULL,
	};

	/* "*" is resolved by discovery at run time, so west counts as a source offline */
	check = test_cli_run(fixture, NULL, "check", "--config", busy, NULL);
	test_cli_assert_check_ok(check);

	test_cli_assert_idle_run(fixture, idle, reasons);
	test_cli_assert_idle_check(fixture, idle, "in any org");
}

/* --- main ---------------------------------------------------------------------------------- */

static void
test_cli_no_binary(void)
{
	g_test_skip("SF2LOKI_BIN is not set; run this through `meson test`");
}

#define TEST_CLI_ADD(path, func)                                                                   \
	g_test_add(path, TestCliFixture, NULL, test_cli_setup, func, test_cli_teardown)

int
main(int argc, char **argv)
{
	int ret;

	g_test_init(&argc, &argv, NULL);

	if (g_getenv("SF2LOKI_BIN") == NULL) {
		g_test_add_func("/sfl/cli/prerequisites", test_cli_no_binary);
		return g_test_run();
	}
	test_cli_bin = g_canonicalize_filename(g_getenv("SF2LOKI_BIN"), NULL);

	TEST_CLI_ADD("/sfl/cli/version", test_cli_version);
	TEST_CLI_ADD("/sfl/cli/help", test_cli_help);
	TEST_CLI_ADD("/sfl/cli/unknown-command", test_cli_unknown_command);
	TEST_CLI_ADD("/sfl/cli/bad-flag", test_cli_bad_flag);
	TEST_CLI_ADD("/sfl/cli/config-artifacts", test_cli_config_artifacts);
	TEST_CLI_ADD("/sfl/cli/config-schema-helm", test_cli_config_schema_helm);

	TEST_CLI_ADD("/sfl/cli/check/good", test_cli_check_good);
	TEST_CLI_ADD("/sfl/cli/check/wiring", test_cli_check_wiring);
	TEST_CLI_ADD("/sfl/cli/check/k8s-outside-pod", test_cli_check_k8s_outside_pod);
	TEST_CLI_ADD("/sfl/cli/check/example", test_cli_check_example);
	TEST_CLI_ADD("/sfl/cli/check/blank-inline-secret", test_cli_check_blank_inline_secret);
	TEST_CLI_ADD("/sfl/cli/check/unknown-key", test_cli_check_unknown_key);
	TEST_CLI_ADD("/sfl/cli/check/wrong-type", test_cli_check_wrong_type);
	TEST_CLI_ADD("/sfl/cli/check/bad-duration", test_cli_check_bad_duration);
	TEST_CLI_ADD("/sfl/cli/check/bad-enum", test_cli_check_bad_enum);
	TEST_CLI_ADD("/sfl/cli/check/out-of-range", test_cli_check_out_of_range);
	TEST_CLI_ADD("/sfl/cli/check/unset-variable", test_cli_check_unset_variable);
	TEST_CLI_ADD("/sfl/cli/check/secret-file-missing", test_cli_check_secret_file_missing);
	TEST_CLI_ADD("/sfl/cli/check/secret-file-directory", test_cli_check_secret_file_directory);
	TEST_CLI_ADD("/sfl/cli/check/secret-file-blank", test_cli_check_secret_file_blank);
	TEST_CLI_ADD("/sfl/cli/check/env-override", test_cli_check_env_override);
	TEST_CLI_ADD("/sfl/cli/check/env-json-list", test_cli_check_env_json_list);
	TEST_CLI_ADD("/sfl/cli/check/env-unknown-key", test_cli_check_env_unknown_key);
	TEST_CLI_ADD("/sfl/cli/check/cross-field", test_cli_check_cross_field);
	TEST_CLI_ADD("/sfl/cli/check/yaml-syntax", test_cli_check_yaml_syntax);
	TEST_CLI_ADD("/sfl/cli/check/empty-file", test_cli_check_empty_file);
	TEST_CLI_ADD("/sfl/cli/check/top-level-list", test_cli_check_top_level_list);
	TEST_CLI_ADD("/sfl/cli/check/missing-file", test_cli_check_missing_file);
	TEST_CLI_ADD("/sfl/cli/check/no-secret-leak", test_cli_check_no_secret_leak);

	TEST_CLI_ADD("/sfl/cli/run/sigterm", test_cli_run_sigterm);
	TEST_CLI_ADD("/sfl/cli/run/sigint", test_cli_run_sigint);
	TEST_CLI_ADD("/sfl/cli/run/logfmt", test_cli_run_logfmt);
	TEST_CLI_ADD("/sfl/cli/run/bad-config", test_cli_run_bad_config);
	TEST_CLI_ADD("/sfl/cli/run/banner-fields", test_cli_run_banner_fields);
	TEST_CLI_ADD("/sfl/cli/run/no-source", test_cli_run_no_source);
	TEST_CLI_ADD("/sfl/cli/run/no-topics", test_cli_run_no_topics);
	TEST_CLI_ADD("/sfl/cli/run/no-source-ha", test_cli_run_no_source_ha);
	TEST_CLI_ADD("/sfl/cli/run/no-source-orgs", test_cli_run_no_source_orgs);

	ret = g_test_run();
	g_free(test_cli_bin);
	return ret;
}
