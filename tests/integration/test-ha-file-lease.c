/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestHa"

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#include "sfl-autocleanups.h"

#ifdef __linux__
#include <sys/prctl.h>
#endif

/*
 * Real processes, real files, real signals: replicas of `sf2loki run` under file_lease on one
 * directory. Exactly one leads; SIGKILL of the leader hands over within ttl + renew interval;
 * a leader frozen with SIGSTOP past its ttl surrenders on SIGCONT without writing.
 */

#define TTL_MS	 2000
#define RENEW_MS 600
/* generous: these wait for events, they do not time them */
#define EVENT_TIMEOUT_US (30 * G_USEC_PER_SEC)

typedef struct {
	gchar *name;
	GSubprocess *proc;
	GDataInputStream *err;
	GPtrArray *lines; /* every stderr line */
	guint acquired;
	guint lost;
	guint64 epoch; /* of the last acquisition */
	gboolean eof;
} Replica;

typedef struct {
	gchar *dir;
	gchar *config;
	gchar *lease;
	GPtrArray *replicas;
} Fixture;

/* ends the process; its pipe then reaches EOF, which ends the pending read */
static void
replica_kill(Replica *r)
{
	if (r->proc != NULL && g_subprocess_get_identifier(r->proc) != NULL) {
		g_subprocess_send_signal(r->proc, SIGCONT);
		g_subprocess_force_exit(r->proc);
		g_subprocess_wait(r->proc, NULL, NULL);
	}
}

static void
replica_free(Replica *r)
{
	g_clear_object(&r->err);
	g_clear_object(&r->proc);
	g_ptr_array_unref(r->lines);
	g_free(r->name);
	g_free(r);
}

static void replica_line_cb(GObject *source, GAsyncResult *result, gpointer user_data);

static void
replica_read_next(Replica *r)
{
	g_data_input_stream_read_line_async(r->err, G_PRIORITY_DEFAULT, NULL, replica_line_cb, r);
}

static void
replica_parse(Replica *r, const gchar *line)
{
	json_error_t jerr;
	g_autoptr(json_t) obj = json_loads(line, 0, &jerr);
	const gchar *msg;

	if (obj == NULL)
		return;
	msg = json_string_value(json_object_get(obj, "msg"));
	if (g_strcmp0(msg, "leadership acquired") == 0) {
		r->acquired++;
		r->epoch = g_ascii_strtoull(json_string_value(json_object_get(obj, "epoch")), NULL,
					    10);
	} else if (g_strcmp0(msg, "leadership lost; standing by") == 0) {
		r->lost++;
	}
}

static void
replica_line_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Replica *r = user_data;
	g_autoptr(GError) error = NULL;
	gchar *line = g_data_input_stream_read_line_finish_utf8(G_DATA_INPUT_STREAM(source), result,
								NULL, &error);
	if (line == NULL) {
		r->eof = TRUE;
		return;
	}
	g_test_message("[%s] %s", r->name, line);
	replica_parse(r, line);
	g_ptr_array_add(r->lines, line);
	replica_read_next(r);
}

/* between fork and exec: a failed assertion must not leave replicas running */
static void
replica_child_setup(gpointer user_data)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

static Replica *
replica_start(Fixture *fx, const gchar *name)
{
	g_autoptr(GSubprocessLauncher) l =
		g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
	Replica *r = g_new0(Replica, 1);
	g_autoptr(GError) error = NULL;
	const gchar *passed[] = { "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", NULL };
	gchar **envp = g_new0(gchar *, 1);

	envp = g_environ_setenv(envp, "LC_ALL", "C.UTF-8", TRUE);
	/* an ephemeral health port: daemons of parallel tests never compete for :8080 */
	envp = g_environ_setenv(envp, "SF2LOKI_SERVICE__HEALTH_ADDR", "127.0.0.1:0", FALSE);
	envp = g_environ_setenv(envp, "SF2LOKI_COORDINATE__FILE_LEASE__HOLDER_ID", name, TRUE);
	for (guint i = 0; passed[i] != NULL; i++) {
		if (g_getenv(passed[i]) != NULL)
			envp = g_environ_setenv(envp, passed[i], g_getenv(passed[i]), TRUE);
	}
	g_subprocess_launcher_set_environ(l, envp);
	g_subprocess_launcher_set_child_setup(l, replica_child_setup, NULL, NULL);
	g_strfreev(envp);

	r->name = g_strdup(name);
	r->lines = g_ptr_array_new_with_free_func(g_free);
	r->proc = g_subprocess_launcher_spawn(l, &error, g_getenv("SF2LOKI_BIN"), "run", "--config",
					      fx->config, NULL);
	g_assert_no_error(error);
	r->err = g_data_input_stream_new(g_subprocess_get_stderr_pipe(r->proc));
	replica_read_next(r);
	g_ptr_array_add(fx->replicas, r);
	return r;
}

typedef gboolean (*Cond)(Fixture *fx, gpointer data);

static gboolean
wake_cb(gpointer data)
{
	return G_SOURCE_REMOVE;
}

static gboolean
wait_until(Fixture *fx, Cond cond, gpointer data)
{
	gint64 deadline = g_get_monotonic_time() + EVENT_TIMEOUT_US;
	while (!cond(fx, data)) {
		if (g_get_monotonic_time() > deadline)
			return FALSE;
		/* lines arrive from pipes; files change without an event, so wake now and then */
		{
			g_autoptr(GSource) tick = g_timeout_source_new(20);
			g_source_set_callback(tick, wake_cb, NULL, NULL);
			g_source_attach(tick, NULL);
			g_main_context_iteration(NULL, TRUE);
			g_source_destroy(tick);
		}
	}
	return TRUE;
}

static gboolean
someone_leads(Fixture *fx, gpointer data)
{
	for (guint i = 0; i < fx->replicas->len; i++) {
		Replica *r = g_ptr_array_index(fx->replicas, i);
		if (r->acquired > r->lost)
			return TRUE;
	}
	return FALSE;
}

static gboolean
replica_leads(Fixture *fx, gpointer data)
{
	Replica *r = data;
	return r->acquired > r->lost;
}

static gboolean
replica_lost(Fixture *fx, gpointer data)
{
	Replica *r = data;
	return r->lost > 0 && r->lost >= r->acquired;
}

static Replica *
the_leader(Fixture *fx)
{
	Replica *leader = NULL;
	for (guint i = 0; i < fx->replicas->len; i++) {
		Replica *r = g_ptr_array_index(fx->replicas, i);
		if (r->acquired > r->lost) {
			g_assert_null(leader); /* never two at once */
			leader = r;
		}
	}
	return leader;
}

typedef struct {
	gchar *holder;
	guint64 epoch;
	gchar *expires_at;
} Lease;

static gboolean
read_lease(Fixture *fx, Lease *lease)
{
	g_autofree gchar *text = NULL;
	json_error_t jerr;
	g_autoptr(json_t) obj = NULL;

	if (!g_file_get_contents(fx->lease, &text, NULL, NULL))
		return FALSE;
	obj = json_loads(text, 0, &jerr);
	if (obj == NULL)
		return FALSE;
	g_free(lease->holder);
	g_free(lease->expires_at);
	lease->holder = g_strdup(json_string_value(json_object_get(obj, "holder")));
	lease->expires_at = g_strdup(json_string_value(json_object_get(obj, "expires_at")));
	lease->epoch = (guint64)json_integer_value(json_object_get(obj, "epoch"));
	return lease->holder != NULL;
}

static void
lease_clear(Lease *lease)
{
	g_free(lease->holder);
	g_free(lease->expires_at);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Lease, lease_clear)

typedef struct {
	gchar *last;
	guint renewals;
} RenewWatch;

/* the leader renews: expires_at changes; count two renewals */
static gboolean
renewed_twice(Fixture *fx, gpointer data)
{
	RenewWatch *w = data;
	g_auto(Lease) lease = { 0 };
	if (!read_lease(fx, &lease))
		return FALSE;
	if (w->last != NULL && g_strcmp0(w->last, lease.expires_at) != 0)
		w->renewals++;
	g_free(w->last);
	w->last = g_strdup(lease.expires_at);
	return w->renewals >= 2;
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *yaml = NULL;

	fx->dir = g_dir_make_tmp("sfl-test-ha-XXXXXX", &error);
	g_assert_no_error(error);
	fx->config = g_build_filename(fx->dir, "config.yaml", NULL);
	fx->lease = g_build_filename(fx->dir, "leader.lease", NULL);
	yaml = g_strdup_printf("salesforce:\n"
			       "  client_id: cid\n"
			       "  username: u@example.com\n"
			       "  private_key: key\n"
			       "sink:\n"
			       "  loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}\n"
			       "state:\n"
			       "  file: {path: '%s/state.json'}\n"
			       "coordinate:\n"
			       "  type: file_lease\n"
			       "  file_lease: {path: '%s', ttl: %dms, renew_interval: %dms}\n",
			       fx->dir, fx->lease, TTL_MS, RENEW_MS);
	g_file_set_contents(fx->config, yaml, -1, &error);
	g_assert_no_error(error);
	fx->replicas = g_ptr_array_new_with_free_func((GDestroyNotify)replica_free);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	g_autoptr(GDir) dir = NULL;
	const gchar *name;

	/* the pending line reads point at the replicas: let each see its EOF first */
	for (guint i = 0; i < fx->replicas->len; i++) {
		Replica *r = g_ptr_array_index(fx->replicas, i);
		replica_kill(r);
		while (!r->eof)
			g_main_context_iteration(NULL, TRUE);
	}
	g_ptr_array_unref(fx->replicas);
	while (g_main_context_iteration(NULL, FALSE))
		;
	dir = g_dir_open(fx->dir, 0, NULL);
	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *path = g_build_filename(fx->dir, name, NULL);
		g_unlink(path);
	}
	g_rmdir(fx->dir);
	g_free(fx->dir);
	g_free(fx->config);
	g_free(fx->lease);
}

static void
test_one_leader_and_kill(Fixture *fx, gconstpointer data)
{
	Replica *a = replica_start(fx, "replica-a");
	Replica *b = replica_start(fx, "replica-b");
	Replica *leader;
	Replica *standby;
	RenewWatch watch = { 0 };
	g_auto(Lease) lease = { 0 };
	gint64 killed_at;
	guint64 first_epoch;

	g_assert_true(wait_until(fx, someone_leads, NULL));
	leader = the_leader(fx);
	standby = leader == a ? b : a;
	first_epoch = leader->epoch;
	g_assert_cmpuint(first_epoch, >=, 1);
	/* while the leader renews twice, the standby never leads */
	g_assert_true(wait_until(fx, renewed_twice, &watch));
	g_free(watch.last);
	g_assert_cmpuint(standby->acquired, ==, 0);
	g_assert_true(read_lease(fx, &lease));
	g_assert_cmpstr(lease.holder, ==, leader->name);
	g_assert_cmpuint(lease.epoch, ==, first_epoch);

	/* SIGKILL: no surrender, the lease just stops being renewed */
	killed_at = g_get_monotonic_time();
	g_subprocess_force_exit(leader->proc);
	g_assert_true(wait_until(fx, replica_leads, standby));
	g_test_message("failover after %" G_GINT64_FORMAT " ms (ttl %d ms, renew %d ms)",
		       (g_get_monotonic_time() - killed_at) / 1000, TTL_MS, RENEW_MS);
	/* a bump, never a reuse */
	g_assert_cmpuint(standby->epoch, ==, first_epoch + 1);
	g_assert_true(read_lease(fx, &lease));
	g_assert_cmpstr(lease.holder, ==, standby->name);
}

static void
test_frozen_leader_surrenders(Fixture *fx, gconstpointer data)
{
	Replica *a = replica_start(fx, "replica-a");
	Replica *leader;
	Replica *other;
	g_auto(Lease) lease = { 0 };
	guint64 new_epoch;

	g_assert_true(wait_until(fx, replica_leads, a));
	leader = a;
	other = replica_start(fx, "replica-b");

	/* freeze the leader past its ttl; the standby takes over */
	g_subprocess_send_signal(leader->proc, SIGSTOP);
	g_assert_true(wait_until(fx, replica_leads, other));
	new_epoch = other->epoch;
	g_assert_cmpuint(new_epoch, >, leader->epoch);

	/* thawed, the old leader notices it was frozen past the ttl and surrenders, no write */
	g_subprocess_send_signal(leader->proc, SIGCONT);
	g_assert_true(wait_until(fx, replica_lost, leader));
	g_assert_true(read_lease(fx, &lease));
	g_assert_cmpstr(lease.holder, ==, other->name);
	g_assert_cmpuint(lease.epoch, ==, new_epoch);
	g_assert_true(replica_leads(fx, other));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/sfl/ha/file-lease/one-leader-and-kill", Fixture, NULL, fixture_setup,
		   test_one_leader_and_kill, fixture_teardown);
	g_test_add("/sfl/ha/file-lease/frozen-leader-surrenders", Fixture, NULL, fixture_setup,
		   test_frozen_leader_surrenders, fixture_teardown);
	return g_test_run();
}
