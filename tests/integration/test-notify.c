/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestNotify"

#include "config.h"

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "sfl-autocleanups.h"
#include "sfl-test-sim.h"

/*
 * The sd_notify protocol end to end: the test plays the service manager, binding the datagram
 * socket that $NOTIFY_SOCKET names, runs the real binary with a controlled environment and
 * checks what arrives and when. Every wait iterates a private main context until a condition
 * holds or a deadline passes.
 */

/* from spawn until READY=1; generous because sanitizer builds start slowly */
#define TEST_NOTIFY_READY_TIMEOUT_MS (20 * 1000)
/* from SIGTERM until STOPPING=1 and the exit */
#define TEST_NOTIFY_STOP_TIMEOUT_MS (20 * 1000)
/* the contract under test: a ping within every WATCHDOG_USEC */
#define TEST_NOTIFY_WATCHDOG_USEC G_GINT64_CONSTANT(2000000)
/* a short interval for the cases that must see no ping: 100 ms between pings if any */
#define TEST_NOTIFY_SHORT_WATCHDOG_USEC "200000"

/* a source, or `run` exits at once; its token comes from the Salesforce simulator */
#define TEST_NOTIFY_MINIMAL_CONFIG                                                                 \
	SFL_TEST_SF_SIM_SALESFORCE SFL_TEST_IDLE_SOURCES                                           \
		"sink:\n"                                                                          \
		"  loki:\n"                                                                        \
		"    url: http://127.0.0.1:3100/loki/api/v1/push\n"

typedef struct {
	gint64 received_usec; /* monotonic, on arrival */
	gchar *text;
} TestNotifyDatagram;

typedef struct {
	gchar *dir;
	gchar *config;
	GMainContext *context;
	GSocket *socket;
	GSource *socket_source;
	GPtrArray *datagrams; /* (element-type TestNotifyDatagram) */
	GSubprocess *proc;
	GDataInputStream *err;
	GPtrArray *err_lines; /* (element-type utf8): the daemon's stderr */
	gboolean err_eof;
	gboolean exited;
	gchar *sf_base; /* NULL: the Salesforce simulator could not start, the test was skipped */
	SflTestSim *sf_proc;
} TestNotifyFixture;

static void
test_notify_datagram_free(TestNotifyDatagram *datagram)
{
	g_free(datagram->text);
	g_free(datagram);
}

/* --- fixture ------------------------------------------------------------------------------- */

static void
test_notify_setup(TestNotifyFixture *fx, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *config_text = NULL;

	fx->dir = g_dir_make_tmp("sfl-test-notify-XXXXXX", &error);
	g_assert_no_error(error);
	fx->config = g_build_filename(fx->dir, "config.yaml", NULL);
	/* the checkpoint store lives in the test's own directory */
	fx->sf_base = sfl_test_sf_sim_start(NULL, &fx->sf_proc);
	config_text = g_strdup_printf(
		TEST_NOTIFY_MINIMAL_CONFIG "state:\n  file: {path: '%s/state.json'}\n",
		fx->sf_base != NULL ? fx->sf_base : "http://127.0.0.1:9", fx->dir);
	g_file_set_contents(fx->config, config_text, -1, &error);
	g_assert_no_error(error);
	fx->datagrams = g_ptr_array_new_with_free_func((GDestroyNotify)test_notify_datagram_free);
	fx->err_lines = g_ptr_array_new_with_free_func(g_free);
	/* async subprocess I/O completes on the context that was current when it started */
	fx->context = g_main_context_new();
	g_main_context_push_thread_default(fx->context);
}

/* --- waiting ------------------------------------------------------------------------------- */

typedef gboolean (*TestNotifyCondFunc)(TestNotifyFixture *fx, gconstpointer data);

static gboolean
test_notify_deadline_cb(gpointer user_data)
{
	gboolean *expired = user_data;
	*expired = TRUE;
	return G_SOURCE_REMOVE;
}

/* iterates the context until @cond holds or @timeout_ms pass; returns what @cond said last */
static gboolean
test_notify_iterate_until(TestNotifyFixture *fx, TestNotifyCondFunc cond, gconstpointer data,
			  guint timeout_ms)
{
	g_autoptr(GSource) deadline = g_timeout_source_new(timeout_ms);
	gboolean expired = FALSE;

	g_source_set_callback(deadline, test_notify_deadline_cb, &expired, NULL);
	g_source_attach(deadline, fx->context);
	while (!cond(fx, data) && !expired)
		g_main_context_iteration(fx->context, TRUE);
	g_source_destroy(deadline);
	return cond(fx, data);
}

/* --- the service manager's socket ---------------------------------------------------------- */

static gboolean
test_notify_socket_cb(GSocket *socket, GIOCondition condition, gpointer user_data)
{
	TestNotifyFixture *fx = user_data;

	for (;;) {
		g_autoptr(GError) error = NULL;
		gchar buf[4096];
		gssize n = g_socket_receive(socket, buf, sizeof(buf) - 1, NULL, &error);
		TestNotifyDatagram *datagram;

		if (n < 0) {
			if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
				g_test_message("receiving: %s", error->message);
			break;
		}
		buf[n] = '\0';
		datagram = g_new0(TestNotifyDatagram, 1);
		datagram->received_usec = g_get_monotonic_time();
		datagram->text = g_strdup(buf);
		g_ptr_array_add(fx->datagrams, datagram);
	}
	return G_SOURCE_CONTINUE;
}

/* binds the datagram socket and returns the matching $NOTIFY_SOCKET value */
static gchar *
test_notify_bind(TestNotifyFixture *fx, gboolean abstract)
{
	g_autoptr(GSocketAddress) address = NULL;
	g_autoptr(GError) error = NULL;
	gchar *value;

	fx->socket = g_socket_new(G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_DATAGRAM,
				  G_SOCKET_PROTOCOL_DEFAULT, &error);
	g_assert_no_error(error);
	if (abstract) {
		g_autofree gchar *name =
			g_strdup_printf("sfl-test-%08x%08x", g_random_int(), g_random_int());
		/* not padded: the address length ends with the name, as the daemon sends it */
		address = g_unix_socket_address_new_with_type(name, -1,
							      G_UNIX_SOCKET_ADDRESS_ABSTRACT);
		value = g_strconcat("@", name, NULL);
	} else {
		value = g_build_filename(fx->dir, "notify.sock", NULL);
		address = g_unix_socket_address_new(value);
	}
	g_socket_bind(fx->socket, address, FALSE, &error);
	g_assert_no_error(error);
	g_socket_set_blocking(fx->socket, FALSE);
	fx->socket_source = g_socket_create_source(fx->socket, G_IO_IN, NULL);
	g_source_set_callback(fx->socket_source, G_SOURCE_FUNC(test_notify_socket_cb), fx, NULL);
	g_source_attach(fx->socket_source, fx->context);
	return value;
}

/* true when one line of @datagram is exactly @assignment */
static gboolean
test_notify_datagram_has(const TestNotifyDatagram *datagram, const gchar *assignment)
{
	g_auto(GStrv) lines = g_strsplit(datagram->text, "\n", -1);
	return g_strv_contains((const gchar *const *)lines, assignment);
}

/* the index of the first datagram carrying @assignment, or -1 */
static gint
test_notify_find(TestNotifyFixture *fx, const gchar *assignment)
{
	for (guint i = 0; i < fx->datagrams->len; i++) {
		if (test_notify_datagram_has(g_ptr_array_index(fx->datagrams, i), assignment))
			return (gint)i;
	}
	return -1;
}

static guint
test_notify_count(TestNotifyFixture *fx, const gchar *assignment)
{
	guint n = 0;

	for (guint i = 0; i < fx->datagrams->len; i++)
		n += test_notify_datagram_has(g_ptr_array_index(fx->datagrams, i), assignment);
	return n;
}

static gboolean
test_notify_has_cond(TestNotifyFixture *fx, gconstpointer data)
{
	/* an early exit will never send it; stop waiting and let the caller report */
	return fx->exited || test_notify_find(fx, data) >= 0;
}

typedef struct {
	const gchar *assignment;
	guint count;
} TestNotifyCount;

static gboolean
test_notify_count_cond(TestNotifyFixture *fx, gconstpointer data)
{
	const TestNotifyCount *want = data;
	return fx->exited || test_notify_count(fx, want->assignment) >= want->count;
}

static gboolean
test_notify_finished_cond(TestNotifyFixture *fx, gconstpointer data)
{
	return fx->exited && fx->err_eof;
}

/* --- teardown ----------------------------------------------------------------------------- */

static void
test_notify_teardown(TestNotifyFixture *fx, gconstpointer user_data)
{
	g_autofree gchar *sock = g_build_filename(fx->dir, "notify.sock", NULL);
	g_autofree gchar *state = g_build_filename(fx->dir, "state.json", NULL);
	g_autofree gchar *state_lock = g_build_filename(fx->dir, "state.json.lock", NULL);

	/* the pending callbacks point at @fx, so they must all have run before it goes */
	if (fx->proc != NULL && !fx->exited) {
		g_subprocess_force_exit(fx->proc);
		g_assert_true(test_notify_iterate_until(fx, test_notify_finished_cond, NULL,
							TEST_NOTIFY_STOP_TIMEOUT_MS));
	}
	if (fx->socket_source != NULL) {
		g_source_destroy(fx->socket_source);
		g_clear_pointer(&fx->socket_source, g_source_unref);
	}
	/* leftovers of cancelled operations must run before the context goes */
	while (g_main_context_iteration(fx->context, FALSE))
		;
	g_clear_object(&fx->err);
	g_clear_object(&fx->proc);
	g_clear_object(&fx->socket);
	g_main_context_pop_thread_default(fx->context);
	g_main_context_unref(fx->context);
	g_ptr_array_unref(fx->datagrams);
	g_ptr_array_unref(fx->err_lines);
	sfl_test_sim_stop(&fx->sf_proc);
	g_free(fx->sf_base);
	g_unlink(fx->config);
	/* the path socket, when one was bound */
	g_unlink(sock);
	g_unlink(state);
	g_unlink(state_lock);
	g_rmdir(fx->dir);
	g_free(fx->config);
	g_free(fx->dir);
}

/* --- the daemon ---------------------------------------------------------------------------- */

static void
test_notify_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	TestNotifyFixture *fx = user_data;
	g_autoptr(GError) error = NULL;
	gchar *line = g_data_input_stream_read_line_finish(G_DATA_INPUT_STREAM(source), result,
							   NULL, &error);

	if (line == NULL) {
		if (error != NULL)
			g_test_message("reading stderr: %s", error->message);
		fx->err_eof = TRUE;
		return;
	}
	g_ptr_array_add(fx->err_lines, line);
	g_data_input_stream_read_line_async(fx->err, G_PRIORITY_DEFAULT, NULL, test_notify_read_cb,
					    fx);
}

static void
test_notify_wait_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	TestNotifyFixture *fx = user_data;
	g_autoptr(GError) error = NULL;

	if (!g_subprocess_wait_finish(G_SUBPROCESS(source), result, &error))
		g_test_message("waiting for the process: %s", error->message);
	fx->exited = TRUE;
}

/* between fork and exec: a failed assertion must not leave the daemon running */
static void
test_notify_child_setup(gpointer user_data)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

/* runs `sf2loki run` with PATH, the sanitizer knobs and @extra (name, value, …, NULL) only */
static void
test_notify_spawn(TestNotifyFixture *fx, const gchar *first_name, ...)
{
	static const gchar *const passed[] = { "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS",
					       "G_DEBUG", NULL };
	g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new(
		G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
	g_auto(GStrv) envp = g_new0(gchar *, 1);
	g_autoptr(GError) error = NULL;
	const gchar *bin = g_getenv("SF2LOKI_BIN");
	const gchar *path = g_getenv("PATH");
	const gchar *name;
	va_list args;

	g_assert_nonnull(bin);
	envp = g_environ_setenv(envp, "PATH", path != NULL ? path : "/usr/bin:/bin", TRUE);
	envp = g_environ_setenv(envp, "LC_ALL", "C.UTF-8", TRUE);
	/* an ephemeral health port: daemons of parallel tests never compete for :8080 */
	envp = g_environ_setenv(envp, "SF2LOKI_SERVICE__HEALTH_ADDR", "127.0.0.1:0", FALSE);
	for (guint i = 0; passed[i] != NULL; i++) {
		const gchar *value = g_getenv(passed[i]);
		if (value != NULL)
			envp = g_environ_setenv(envp, passed[i], value, TRUE);
	}
	va_start(args, first_name);
	for (name = first_name; name != NULL; name = va_arg(args, const gchar *)) {
		const gchar *value = va_arg(args, const gchar *);
		envp = g_environ_setenv(envp, name, value, TRUE);
	}
	va_end(args);

	g_subprocess_launcher_set_child_setup(launcher, test_notify_child_setup, NULL, NULL);
	g_subprocess_launcher_set_environ(launcher, envp);
	g_subprocess_launcher_set_cwd(launcher, fx->dir);
	fx->proc = g_subprocess_launcher_spawn(launcher, &error, bin, "run", "--config", fx->config,
					       NULL);
	g_assert_no_error(error);
	fx->err = g_data_input_stream_new(g_subprocess_get_stderr_pipe(fx->proc));
	g_data_input_stream_read_line_async(fx->err, G_PRIORITY_DEFAULT, NULL, test_notify_read_cb,
					    fx);
	g_subprocess_wait_async(fx->proc, NULL, test_notify_wait_cb, fx);
}

static void
test_notify_dump(TestNotifyFixture *fx)
{
	for (guint i = 0; i < fx->datagrams->len; i++) {
		TestNotifyDatagram *datagram = g_ptr_array_index(fx->datagrams, i);
		g_autofree gchar *flat = g_strescape(datagram->text, NULL);
		g_test_message("datagram %u: %s", i, flat);
	}
	for (guint i = 0; i < fx->err_lines->len; i++)
		g_test_message("stderr: %s", (const gchar *)g_ptr_array_index(fx->err_lines, i));
}

/* waits for READY=1 and returns the index of its datagram */
static guint
test_notify_wait_ready(TestNotifyFixture *fx)
{
	gint ready;

	test_notify_iterate_until(fx, test_notify_has_cond, "READY=1",
				  TEST_NOTIFY_READY_TIMEOUT_MS);
	ready = test_notify_find(fx, "READY=1");
	if (ready < 0)
		test_notify_dump(fx);
	g_assert_cmpint(ready, >=, 0);
	return (guint)ready;
}

/* SIGTERM, then STOPPING=1 and a clean exit */
static void
test_notify_stop(TestNotifyFixture *fx, gboolean expect_stopping)
{
	gboolean finished;

	g_subprocess_send_signal(fx->proc, SIGTERM);
	if (expect_stopping)
		test_notify_iterate_until(fx, test_notify_has_cond, "STOPPING=1",
					  TEST_NOTIFY_STOP_TIMEOUT_MS);
	finished = test_notify_iterate_until(fx, test_notify_finished_cond, NULL,
					     TEST_NOTIFY_STOP_TIMEOUT_MS);
	if (!finished || !g_subprocess_get_if_exited(fx->proc) ||
	    g_subprocess_get_exit_status(fx->proc) != 0 ||
	    (expect_stopping && test_notify_find(fx, "STOPPING=1") < 0))
		test_notify_dump(fx);
	g_assert_true(finished);
	g_assert_true(g_subprocess_get_if_exited(fx->proc));
	g_assert_cmpint(g_subprocess_get_exit_status(fx->proc), ==, 0);
	if (expect_stopping)
		g_assert_cmpint(test_notify_find(fx, "STOPPING=1"), >,
				test_notify_find(fx, "READY=1"));
}

/* --- cases --------------------------------------------------------------------------------- */

static void
test_notify_ready_stopping(TestNotifyFixture *fx, gconstpointer user_data)
{
	g_autofree gchar *socket_path = test_notify_bind(fx, FALSE);
	TestNotifyDatagram *ready;
	g_auto(GStrv) lines = NULL;
	gboolean has_status = FALSE;
	guint index;

	if (fx->sf_base == NULL)
		return;
	test_notify_spawn(fx, "NOTIFY_SOCKET", socket_path, NULL);
	/* two steps: waiting grows the array, which may move its storage */
	index = test_notify_wait_ready(fx);
	ready = g_ptr_array_index(fx->datagrams, index);
	/* READY=1 travels with a human-readable STATUS= line */
	lines = g_strsplit(ready->text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++)
		has_status |= g_str_has_prefix(lines[i], "STATUS=") && lines[i][7] != '\0';
	g_assert_true(has_status);

	test_notify_stop(fx, TRUE);
	g_assert_cmpint(test_notify_find(fx, "STATUS=stopping"), >=, 0);
	/* no watchdog was asked for */
	g_assert_cmpuint(test_notify_count(fx, "WATCHDOG=1"), ==, 0);
}

static void
test_notify_watchdog(TestNotifyFixture *fx, gconstpointer user_data)
{
	g_autofree gchar *socket_path = test_notify_bind(fx, FALSE);
	g_autofree gchar *usec = g_strdup_printf("%" G_GINT64_FORMAT, TEST_NOTIFY_WATCHDOG_USEC);
	const TestNotifyCount want = { "WATCHDOG=1", 3 };
	gint64 last;
	guint pings = 0;
	guint ready;

	if (fx->sf_base == NULL)
		return;
	test_notify_spawn(fx, "NOTIFY_SOCKET", socket_path, "WATCHDOG_USEC", usec, NULL);
	ready = test_notify_wait_ready(fx);
	/* the interval is half of WATCHDOG_USEC, stated in READY's status line */
	g_assert_nonnull(
		strstr(((TestNotifyDatagram *)g_ptr_array_index(fx->datagrams, ready))->text,
		       "watchdog ping every 1000 ms"));
	/* three pings take about three seconds at half the interval */
	test_notify_iterate_until(fx, test_notify_count_cond, &want, TEST_NOTIFY_READY_TIMEOUT_MS);
	if (test_notify_count(fx, "WATCHDOG=1") < 3)
		test_notify_dump(fx);
	g_assert_cmpuint(test_notify_count(fx, "WATCHDOG=1"), >=, 3);

	/* the pings, the first counted from READY=1 */
	last = ((TestNotifyDatagram *)g_ptr_array_index(fx->datagrams, ready))->received_usec;
	for (guint i = ready; i < fx->datagrams->len; i++) {
		TestNotifyDatagram *datagram = g_ptr_array_index(fx->datagrams, i);

		if (!test_notify_datagram_has(datagram, "WATCHDOG=1"))
			continue;
		/* logged, not asserted: wall-time gaps on a loaded CI machine are no contract */
		g_test_message("ping %u after %" G_GINT64_FORMAT " us", pings,
			       datagram->received_usec - last);
		last = datagram->received_usec;
		pings++;
	}
	g_assert_cmpuint(pings, >=, 3);
	test_notify_stop(fx, TRUE);
}

static void
test_notify_watchdog_other_pid(TestNotifyFixture *fx, gconstpointer user_data)
{
	g_autofree gchar *socket_path = test_notify_bind(fx, FALSE);
	/* our own pid: set, valid, and not the daemon's */
	g_autofree gchar *pid = g_strdup_printf("%ld", (long)getpid());
	TestNotifyDatagram *ready;
	guint index;

	if (fx->sf_base == NULL)
		return;
	test_notify_spawn(fx, "NOTIFY_SOCKET", socket_path, "WATCHDOG_USEC",
			  TEST_NOTIFY_SHORT_WATCHDOG_USEC, "WATCHDOG_PID", pid, NULL);
	/* the daemon decides once, before READY, and says so in READY's status line */
	/* two steps: waiting grows the array, which may move its storage */
	index = test_notify_wait_ready(fx);
	ready = g_ptr_array_index(fx->datagrams, index);
	g_assert_nonnull(strstr(ready->text, "watchdog off"));
	test_notify_stop(fx, TRUE);
	g_assert_cmpuint(test_notify_count(fx, "WATCHDOG=1"), ==, 0);
}

static void
test_notify_abstract(TestNotifyFixture *fx, gconstpointer user_data)
{
	g_autofree gchar *socket_name = test_notify_bind(fx, TRUE);

	if (fx->sf_base == NULL)
		return;
	g_assert_true(socket_name[0] == '@');
	test_notify_spawn(fx, "NOTIFY_SOCKET", socket_name, NULL);
	test_notify_wait_ready(fx);
	test_notify_stop(fx, TRUE);
}

#define TEST_NOTIFY_WARNING "could not notify the service manager"

/* a JSON log line whose event starts with TEST_NOTIFY_WARNING, or NULL */
static json_t *
test_notify_parse_warning(const gchar *line)
{
	json_error_t jerr;
	g_autoptr(json_t) obj = json_loads(line, 0, &jerr);
	const gchar *msg;

	if (obj == NULL || !json_is_object(obj))
		return NULL;
	msg = json_string_value(json_object_get(obj, "event"));
	if (msg == NULL || !g_str_has_prefix(msg, TEST_NOTIFY_WARNING))
		return NULL;
	return g_steal_pointer(&obj);
}

static gboolean
test_notify_warned_cond(TestNotifyFixture *fx, gconstpointer data)
{
	if (fx->exited)
		return TRUE;
	for (guint i = 0; i < fx->err_lines->len; i++) {
		g_autoptr(json_t) obj =
			test_notify_parse_warning(g_ptr_array_index(fx->err_lines, i));
		if (obj != NULL)
			return TRUE;
	}
	return FALSE;
}

static void
test_notify_unreachable(TestNotifyFixture *fx, gconstpointer user_data)
{
	g_autofree gchar *absent = g_build_filename(fx->dir, "absent.sock", NULL);
	guint warnings = 0;
	json_int_t repeated = 0;

	if (fx->sf_base == NULL)
		return;
	/* READY=1, every ping and STOPPING=1 fail, all with the same warning */
	test_notify_spawn(fx, "NOTIFY_SOCKET", absent, "WATCHDOG_USEC",
			  TEST_NOTIFY_SHORT_WATCHDOG_USEC, NULL);
	test_notify_iterate_until(fx, test_notify_warned_cond, NULL, TEST_NOTIFY_READY_TIMEOUT_MS);
	if (fx->exited)
		test_notify_dump(fx);
	/* a service manager that cannot be reached is no reason to stop shipping logs */
	g_assert_false(fx->exited);
	test_notify_stop(fx, FALSE);

	for (guint i = 0; i < fx->err_lines->len; i++) {
		g_autoptr(json_t) obj =
			test_notify_parse_warning(g_ptr_array_index(fx->err_lines, i));
		json_t *count;

		if (obj == NULL)
			continue;
		g_assert_cmpstr(json_string_value(json_object_get(obj, "level")), ==, "warning");
		g_assert_nonnull(strstr(json_string_value(json_object_get(obj, "event")), absent));
		count = json_object_get(obj, "repeated");
		if (count != NULL)
			repeated += json_integer_value(count);
		warnings++;
	}
	/* printed once, the repeats counted and flushed as one line at exit */
	if (warnings != 2 || repeated < 1)
		test_notify_dump(fx);
	g_assert_cmpuint(warnings, ==, 2);
	g_assert_cmpint(repeated, >=, 1);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

#define ADD(path, func)                                                                            \
	g_test_add(path, TestNotifyFixture, NULL, test_notify_setup, func, test_notify_teardown)
	ADD("/sfl/notify/ready-stopping", test_notify_ready_stopping);
	ADD("/sfl/notify/watchdog", test_notify_watchdog);
	ADD("/sfl/notify/watchdog-other-pid", test_notify_watchdog_other_pid);
	ADD("/sfl/notify/abstract", test_notify_abstract);
	ADD("/sfl/notify/unreachable", test_notify_unreachable);
#undef ADD
	return g_test_run();
}
