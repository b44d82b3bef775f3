/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestDeadletterCli"

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-deadletter.h"
#include "sfl-error.h"
#include "sfl-test-sim.h"

/*
 * `sf2loki deadletter` as an operator runs it: the real binary against a store on disk and the
 * Loki simulator. The store is filled through its own API here; the pipeline's part (what
 * goes in, and when) is tested in test-pipeline-loki and test-egress.
 */

#define WALL_NOW G_GINT64_CONSTANT(1796000000000000)
#define DAY	 (G_GINT64_CONSTANT(86400) * G_USEC_PER_SEC)

typedef struct {
	gchar *tmpdir;
	gchar *dir;
	gchar *config_path;
	SflTestSim *sim;
	gchar *base;
	SflCurlLoop *loop;
	SflLabelsInterner *interner;
	gboolean skip;
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

static void
run_cli(Fixture *fx, Result *r, const gchar *first, ...)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(
		G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
	const gchar *env[] = { "LC_ALL=C.UTF-8", NULL };
	g_autoptr(GSubprocess) p = NULL;
	g_autoptr(GError) error = NULL;
	va_list args;
	const gchar *a;

	g_subprocess_launcher_set_environ(l, (gchar **)env);
	g_ptr_array_add(argv, (gpointer)g_getenv("SF2LOKI_BIN"));
	g_ptr_array_add(argv, (gpointer) "--config");
	g_ptr_array_add(argv, fx->config_path);
	g_ptr_array_add(argv, (gpointer) "deadletter");
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
fx_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *yaml = NULL;

	(void)data;
	fx->base = sfl_test_loki_sim_start(NULL, &fx->sim);
	if (fx->base == NULL) {
		fx->skip = TRUE;
		return;
	}
	fx->loop = sfl_curl_loop_new();
	fx->interner = sfl_labels_interner_new();
	fx->tmpdir = g_dir_make_tmp("sfl-test-deadletter-cli-XXXXXX", &error);
	g_assert_no_error(error);
	fx->dir = g_build_filename(fx->tmpdir, "deadletter", NULL);
	fx->config_path = g_build_filename(fx->tmpdir, "config.yaml", NULL);
	/* the default directory: deadletter/ next to state.file.path */
	yaml = g_strdup_printf("salesforce:\n"
			       "  client_id: cid\n"
			       "  username: u@example.com\n"
			       "  private_key: key\n"
			       "sink:\n"
			       "  loki: {url: '%s/loki/api/v1/push'}\n"
			       "state:\n"
			       "  file: {path: '%s/state.json'}\n",
			       fx->base, fx->tmpdir);
	g_file_set_contents(fx->config_path, yaml, -1, &error);
	g_assert_no_error(error);
}

static void
fx_teardown(Fixture *fx, gconstpointer data)
{
	(void)data;
	if (fx->tmpdir != NULL)
		sfl_test_rmtree(fx->tmpdir);
	g_free(fx->tmpdir);
	g_free(fx->dir);
	g_free(fx->config_path);
	g_clear_object(&fx->loop);
	g_clear_pointer(&fx->interner, sfl_labels_interner_unref);
	if (fx->sim != NULL)
		sfl_test_sim_kill(fx->sim);
	g_clear_object(&fx->sim);
	g_free(fx->base);
}

/* one refused entry per (line, reason), captured @age_days ago, on {job, event_type} */
static void
fx_keep(Fixture *fx, const gchar *line, const gchar *reason, gint64 ts_ns, gint age_days)
{
	const SflLabelPair labels[] = { { "job", "sf2loki" }, { "event_type", "Login" } };
	const SflLabelPair metadata[] = { { "event_id", "e-1" } };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflLabels) set = sfl_labels_intern(fx->interner, labels, 2, &error);
	g_autoptr(SflClock) clock = sfl_fake_clock_new(WALL_NOW - age_days * DAY);
	g_autoptr(SflDeadletter) dl = sfl_deadletter_open(fx->dir, 1 << 20, 0, clock, &error);
	g_autoptr(SflEntry) entry = NULL;

	g_assert_no_error(error);
	entry = sfl_entry_new(ts_ns, set, line, -1, metadata, 1, "elf:Login", "c");
	g_assert_true(sfl_deadletter_append_entries(dl, &entry, 1, reason, NULL, &error));
	g_assert_no_error(error);
}

static GPtrArray *
fx_left(Fixture *fx)
{
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(GError) error = NULL;
	g_autoptr(SflDeadletter) dl = sfl_deadletter_open(fx->dir, 1 << 20, 0, clock, &error);
	g_assert_no_error(error);
	return sfl_deadletter_read_all(dl, NULL);
}

/* the lines Loki stored, and each one's structured metadata */
static json_t *
fx_received_entries(Fixture *fx)
{
	g_autoptr(json_t) received =
		sfl_test_sim_control(fx->loop, fx->base, "GET", "/control/received", NULL);
	json_t *out = json_array();
	json_t *stream, *entry;
	gsize i, j;

	json_array_foreach (json_object_get(received, "streams"), i, stream) {
		json_array_foreach (json_object_get(stream, "entries"), j, entry)
			json_array_append(out, entry);
	}
	return out;
}

static gboolean
entries_have_line(json_t *entries, const gchar *line, json_t **out)
{
	json_t *e;
	gsize i;

	json_array_foreach (entries, i, e) {
		if (g_strcmp0(json_string_value(json_object_get(e, "line")), line) == 0) {
			if (out != NULL)
				*out = e;
			return TRUE;
		}
	}
	return FALSE;
}

/* list shows every entry with its reason, --json the records; show one by its index */
static void
test_list_show(Fixture *fx, gconstpointer data)
{
	g_auto(Result) r = { 0 };
	g_auto(Result) j = { 0 };
	g_auto(Result) s = { 0 };
	g_auto(Result) bad = { 0 };
	g_autoptr(json_t) doc = NULL;
	g_autoptr(json_t) one = NULL;

	(void)data;
	if (fx->skip)
		return;
	fx_keep(fx, "too old line", "greater_than_max_sample_age", 1000, 2);
	fx_keep(fx, "too long line", "line_too_long", 2000, 1);
	fx_keep(fx, "budget line", "budget", 3000, 0);

	run_cli(fx, &r, "list", NULL);
	g_assert_cmpint(r.status, ==, 0);
	g_assert_nonnull(strstr(r.out, "too old line"));
	g_assert_nonnull(strstr(r.out, "line_too_long"));
	g_assert_nonnull(strstr(r.out, "event_type=\"Login\""));
	g_assert_nonnull(strstr(r.out, "3 of 3 entries"));

	run_cli(fx, &j, "list", "--json", "--reason", "budget", NULL);
	g_assert_cmpint(j.status, ==, 0);
	doc = json_loads(j.out, 0, NULL);
	g_assert_true(json_is_array(doc));
	g_assert_cmpuint(json_array_size(doc), ==, 1);
	g_assert_cmpstr(json_string_value(json_object_get(json_array_get(doc, 0), "line")), ==,
			"budget line");
	g_assert_cmpint(json_integer_value(json_object_get(json_array_get(doc, 0), "index")), ==,
			2);

	run_cli(fx, &s, "show", "1", NULL);
	g_assert_cmpint(s.status, ==, 0);
	one = json_loads(s.out, 0, NULL);
	g_assert_cmpstr(json_string_value(json_object_get(one, "reason")), ==, "line_too_long");
	g_assert_cmpstr(json_string_value(json_object_get(one, "checkpoint_key")), ==, "elf:Login");

	run_cli(fx, &bad, "show", "7", NULL);
	g_assert_cmpint(bad.status, ==, 1);
	g_assert_nonnull(strstr(bad.err, "no dead-letter entry 7"));
}

/*
 * replay: what Loki accepts leaves the store, what it refuses again stays under Loki's new
 * reason, what the filter did not pick is untouched; --ingest-timestamps moves the original
 * time into event_time.
 */
static void
test_replay(Fixture *fx, gconstpointer data)
{
	g_auto(Result) dry = { 0 };
	g_auto(Result) r = { 0 };
	g_autoptr(json_t) entries = NULL;
	g_autoptr(GPtrArray) left = NULL;
	g_autoptr(json_t) fault = NULL;
	json_t *e = NULL;

	(void)data;
	if (fx->skip)
		return;
	fx_keep(fx, "old-1", "greater_than_max_sample_age", 1000000000, 3);
	fx_keep(fx, "old-2 refused again", "greater_than_max_sample_age", 2000000000, 3);
	fx_keep(fx, "over budget", "budget", 3000000000, 0);
	/* Loki refuses lines over 15 bytes for good: old-2 is refused again */
	fault = sfl_test_sim_control(fx->loop, fx->base, "POST", "/control/fault",
				     "{\"reject_line_over\": 15}");
	g_assert_true(json_is_object(fault));

	run_cli(fx, &dry, "replay", "--dry-run", "--reason", "greater_than_max_sample_age", NULL);
	g_assert_cmpint(dry.status, ==, 0);
	g_assert_nonnull(strstr(dry.out, "would push 2 entries, keep 1"));
	entries = fx_received_entries(fx);
	g_assert_cmpuint(json_array_size(entries), ==, 0);
	g_clear_pointer(&entries, json_decref);

	run_cli(fx, &r, "replay", "--reason", "greater_than_max_sample_age", "--ingest-timestamps",
		NULL);
	g_assert_cmpint(r.status, ==, 0);
	g_assert_nonnull(strstr(r.out, "entries=2 accepted=1 refused_again=1"));
	entries = fx_received_entries(fx);
	g_assert_true(entries_have_line(entries, "old-1", &e));
	g_assert_false(entries_have_line(entries, "over budget", NULL));
	/* stamped at replay time, the original second in event_time */
	g_assert_cmpstr(
		json_string_value(json_object_get(json_object_get(e, "metadata"), "event_time")),
		==, "1970-01-01T00:00:01.000000Z");
	g_assert_cmpstr(
		json_string_value(json_object_get(json_object_get(e, "metadata"), "event_id")), ==,
		"e-1");

	left = fx_left(fx);
	g_assert_cmpuint(left->len, ==, 2);
	{
		g_autoptr(GHashTable) lines = g_hash_table_new(g_str_hash, g_str_equal);
		for (guint i = 0; i < left->len; i++)
			g_hash_table_insert(lines,
					    (gpointer)json_string_value(
						    json_object_get(left->pdata[i], "line")),
					    (gpointer)json_string_value(
						    json_object_get(left->pdata[i], "reason")));
		g_assert_cmpstr(g_hash_table_lookup(lines, "over budget"), ==, "budget");
		g_assert_cmpstr(g_hash_table_lookup(lines, "old-2 refused again"), ==,
				"bad_request");
	}
}

/*
 * A batch Loki rejects is retried entry by entry; when one of those pushes keeps failing the
 * replay gives up, and every entry it did not get to stays in the store with its reason (this
 * lost them once). The exit status says it failed.
 */
static void
test_replay_gives_up_keeps_rest(Fixture *fx, gconstpointer data)
{
	g_auto(Result) r = { 0 };
	g_autoptr(json_t) entries = NULL;
	g_autoptr(GPtrArray) left = NULL;
	g_autoptr(json_t) fault = NULL;

	(void)data;
	if (fx->skip)
		return;
	fx_keep(fx, "first", "greater_than_max_sample_age", 1000000000, 3);
	fx_keep(fx, "second", "greater_than_max_sample_age", 2000000000, 3);
	fx_keep(fx, "third", "greater_than_max_sample_age", 3000000000, 3);
	/* the batch is refused (400), then the first single push meets 503 on every try */
	fault = sfl_test_sim_control(fx->loop, fx->base, "POST", "/control/fault",
				     "{\"sequence\": [{\"count\": 1, \"status\": 400}, "
				     "{\"count\": 5, \"status\": 503}]}");
	g_assert_true(json_is_object(fault));

	run_cli(fx, &r, "replay", "--reason", "greater_than_max_sample_age", NULL);
	g_assert_cmpint(r.status, !=, 0);
	g_assert_nonnull(strstr(r.err, "503"));
	entries = fx_received_entries(fx);
	g_assert_cmpuint(json_array_size(entries), ==, 0);
	left = fx_left(fx);
	g_assert_cmpuint(left->len, ==, 3);
	for (guint i = 0; i < left->len; i++)
		g_assert_cmpstr(json_string_value(json_object_get(left->pdata[i], "reason")), ==,
				"greater_than_max_sample_age");
}

/* purge removes what it is told to, never everything by accident */
static void
test_purge(Fixture *fx, gconstpointer data)
{
	g_auto(Result) none = { 0 };
	g_auto(Result) old = { 0 };
	g_auto(Result) all = { 0 };
	g_autoptr(GPtrArray) left = NULL;
	g_autoptr(GPtrArray) empty = NULL;

	(void)data;
	if (fx->skip)
		return;
	fx_keep(fx, "ten days old", "permanent", 1000, 10);
	fx_keep(fx, "today", "permanent", 2000, 0);

	run_cli(fx, &none, "purge", NULL);
	g_assert_cmpint(none.status, ==, 2);
	g_assert_nonnull(strstr(none.err, "--all"));

	run_cli(fx, &old, "purge", "--older-than", "7d", NULL);
	g_assert_cmpint(old.status, ==, 0);
	g_assert_nonnull(strstr(old.out, "removed=1 kept=1"));
	left = fx_left(fx);
	g_assert_cmpuint(left->len, ==, 1);
	g_assert_cmpstr(json_string_value(json_object_get(left->pdata[0], "line")), ==, "today");

	run_cli(fx, &all, "purge", "--all", NULL);
	g_assert_cmpint(all.status, ==, 0);
	empty = fx_left(fx);
	g_assert_cmpuint(empty->len, ==, 0);
}

/* a second replay or purge while one runs is refused, and changes nothing */
static void
test_claim_busy(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(GError) error = NULL;
	g_autoptr(SflDeadletter) holder = NULL;
	g_autoptr(GPtrArray) claimed = NULL;
	g_autoptr(GPtrArray) left = NULL;
	g_auto(Result) r = { 0 };

	(void)data;
	if (fx->skip)
		return;
	fx_keep(fx, "held", "permanent", 1000, 0);
	holder = sfl_deadletter_open(fx->dir, 1 << 20, 0, clock, &error);
	g_assert_no_error(error);
	claimed = sfl_deadletter_claim(holder, NULL, &error);
	g_assert_no_error(error);

	run_cli(fx, &r, "purge", "--all", NULL);
	g_assert_cmpint(r.status, ==, 1);
	g_assert_nonnull(strstr(r.err, "another replay or purge"));

	sfl_deadletter_abort_claim(holder);
	left = fx_left(fx);
	g_assert_cmpuint(left->len, ==, 1);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add(path, Fixture, NULL, fx_setup, fn, fx_teardown)
	ADD("/deadletter-cli/list-show", test_list_show);
	ADD("/deadletter-cli/replay", test_replay);
	ADD("/deadletter-cli/replay-gives-up-keeps-rest", test_replay_gives_up_keeps_rest);
	ADD("/deadletter-cli/purge", test_purge);
	ADD("/deadletter-cli/claim-busy", test_claim_busy);
#undef ADD
	return g_test_run();
}
