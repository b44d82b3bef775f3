/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestDeadletter"

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-deadletter.h"
#include "sfl-error.h"
#include "sfl-test-coordinator.h"
#include "sfl-test-files.h"

#define WALL_START G_GINT64_CONSTANT(1700000000000000)

typedef struct {
	gchar *tmpdir;
	gchar *dir;
	SflClock *clock;
	SflLabelsInterner *interner;
} Fixture;

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	(void)data;
	fx->tmpdir = g_dir_make_tmp("sfl-test-deadletter-XXXXXX", &error);
	g_assert_no_error(error);
	fx->dir = g_build_filename(fx->tmpdir, "deadletter", NULL);
	fx->clock = sfl_fake_clock_new(WALL_START);
	fx->interner = sfl_labels_interner_new();
}

static void
rm_rf(const gchar *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	if (dir != NULL) {
		const gchar *name;
		while ((name = g_dir_read_name(dir)) != NULL) {
			g_autofree gchar *child = g_build_filename(path, name, NULL);
			rm_rf(child);
		}
	}
	g_remove(path);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	(void)data;
	rm_rf(fx->tmpdir);
	g_free(fx->tmpdir);
	g_free(fx->dir);
	sfl_clock_unref(fx->clock);
	sfl_labels_interner_unref(fx->interner);
}

static SflEntry *
make_entry(Fixture *fx, gint64 ts, const gchar *line)
{
	const SflLabelPair labels[] = { { "job", "sf2loki" }, { "event_type", "Login" } };
	const SflLabelPair metadata[] = { { "event_id", "e-1" } };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflLabels) set = sfl_labels_intern(fx->interner, labels, 2, &error);
	g_assert_no_error(error);
	return sfl_entry_new(ts, set, line, -1, metadata, 1, "elf:Login", "cursor-7");
}

static void
append_lines(Fixture *fx, SflDeadletter *dl, guint n, gsize line_len, const gchar *reason)
{
	g_autofree gchar *line = g_strnfill(line_len, 'x');
	for (guint i = 0; i < n; i++) {
		SflEntry *entry = make_entry(fx, 1000 + i, line);
		g_autoptr(GError) error = NULL;
		g_assert_true(
			sfl_deadletter_append_entries(dl, &entry, 1, reason, "00Dorg", &error));
		g_assert_no_error(error);
		sfl_entry_unref(entry);
	}
}

static void
test_append_reopen(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) records = NULL;
	SflEntry *entries[] = { make_entry(fx, 111, "first"), make_entry(fx, 222, "second") };
	SflDeadletter *dl;
	guint64 bytes;
	guint skipped = 99;
	json_t *r, *md;

	(void)data;
	dl = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	g_assert_true(
		sfl_deadletter_append_entries(dl, entries, 2, "line_too_long", "00Dorg", &error));
	g_assert_no_error(error);
	bytes = sfl_deadletter_get_bytes(dl);
	g_assert_cmpuint(bytes, >, 0);
	sfl_deadletter_unref(dl);
	for (guint i = 0; i < 2; i++)
		sfl_entry_unref(entries[i]);

	/* a second process (the CLI) sees what the first wrote, field by field */
	dl = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(sfl_deadletter_get_bytes(dl), ==, bytes);
	records = sfl_deadletter_read_all(dl, &skipped);
	g_assert_cmpuint(skipped, ==, 0);
	g_assert_cmpuint(records->len, ==, 2);
	r = g_ptr_array_index(records, 1);
	g_assert_cmpstr(json_string_value(json_object_get(r, "line")), ==, "second");
	g_assert_cmpint(json_integer_value(json_object_get(r, "timestamp_ns")), ==, 222);
	g_assert_cmpstr(json_string_value(json_object_get(r, "reason")), ==, "line_too_long");
	g_assert_cmpstr(json_string_value(json_object_get(r, "checkpoint_key")), ==, "elf:Login");
	g_assert_cmpstr(json_string_value(json_object_get(r, "org")), ==, "00Dorg");
	g_assert_cmpint(json_integer_value(json_object_get(r, "captured_usec")), ==, WALL_START);
	g_assert_cmpstr(
		json_string_value(json_object_get(json_object_get(r, "labels"), "event_type")), ==,
		"Login");
	md = json_array_get(json_object_get(r, "metadata"), 0);
	g_assert_cmpstr(json_string_value(json_array_get(md, 0)), ==, "event_id");
	g_assert_cmpstr(json_string_value(json_array_get(md, 1)), ==, "e-1");
	sfl_deadletter_unref(dl);
}

/*
 * Lines as a source may hand them over: quotes, control characters, non-ASCII and bytes that
 * are not UTF-8 come back readable (jansson is the reader), the invalid bytes as U+FFFD, and
 * the record is not counted as damaged. Checkpoint-only entries are not records at all.
 */
static void
test_awkward_lines(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) records = NULL;
	SflEntry *entries[] = {
		make_entry(fx, 1, "say \"hi\"\t\\ \x01 caf\xc3\xa9"),
		make_entry(fx, 2, "bad \xff\xfe bytes"),
		sfl_entry_new_checkpoint_only(3, "elf:Login", "c"),
	};
	const gchar *reasons[] = { "line_too_long", "bad_request", "permanent" };
	SflDeadletter *dl;
	guint skipped = 99;

	(void)data;
	dl = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	g_assert_true(sfl_deadletter_append_refused(dl, entries, reasons, NULL, 3, &error));
	g_assert_no_error(error);
	records = sfl_deadletter_read_all(dl, &skipped);
	g_assert_cmpuint(skipped, ==, 0);
	g_assert_cmpuint(records->len, ==, 2);
	g_assert_cmpstr(json_string_value(json_object_get(records->pdata[0], "line")), ==,
			"say \"hi\"\t\\ \x01 caf\xc3\xa9");
	g_assert_cmpstr(json_string_value(json_object_get(records->pdata[1], "line")), ==,
			"bad \xef\xbf\xbd\xef\xbf\xbd bytes");
	g_assert_cmpstr(json_string_value(json_object_get(records->pdata[1], "reason")), ==,
			"bad_request");
	g_assert_true(json_is_null(json_object_get(records->pdata[1], "org")));
	for (guint i = 0; i < G_N_ELEMENTS(entries); i++)
		sfl_entry_unref(entries[i]);
	sfl_deadletter_unref(dl);
}

static void
test_bound_by_size(Fixture *fx, gconstpointer data)
{
	/* 128 KiB total, 16 KiB segments: ~1 KiB records fill it many times over */
	const guint64 max = 128 * 1024;
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) records = NULL;
	SflDeadletter *dl;
	json_t *first, *last;

	(void)data;
	dl = sfl_deadletter_open(fx->dir, max, 0, fx->clock, &error);
	g_assert_no_error(error);
	append_lines(fx, dl, 400, 1000, "bad_request");
	g_assert_cmpuint(sfl_deadletter_get_bytes(dl), <=, max);
	g_assert_cmpuint(sfl_deadletter_get_evicted_segments(dl), >, 0);
	g_assert_cmpuint(sfl_deadletter_get_n_segments(dl), >, 1);

	/* the newest records stay, the oldest went */
	records = sfl_deadletter_read_all(dl, NULL);
	g_assert_cmpuint(records->len, <, 400);
	last = g_ptr_array_index(records, records->len - 1);
	g_assert_cmpint(json_integer_value(json_object_get(last, "timestamp_ns")), ==, 1000 + 399);
	first = g_ptr_array_index(records, 0);
	g_assert_cmpint(json_integer_value(json_object_get(first, "timestamp_ns")), >, 1000);
	sfl_deadletter_unref(dl);
}

static void
test_bound_by_age(Fixture *fx, gconstpointer data)
{
	const gint64 day = G_GINT64_CONSTANT(86400) * G_USEC_PER_SEC;
	g_autoptr(GError) error = NULL;
	SflDeadletter *dl;
	guint before;

	(void)data;
	dl = sfl_deadletter_open(fx->dir, 128 * 1024, 7 * day, fx->clock, &error);
	g_assert_no_error(error);
	append_lines(fx, dl, 20, 1000, "permanent"); /* over 16 KiB: more than one segment */
	before = sfl_deadletter_get_n_segments(dl);
	g_assert_cmpuint(before, >, 1);

	sfl_fake_clock_jump_wall(fx->clock, 6 * day);
	sfl_deadletter_enforce_bounds(dl);
	g_assert_cmpuint(sfl_deadletter_get_evicted_segments(dl), ==, 0);

	/* 8 days on, past max_age: every closed segment goes; the open one holds the newest */
	sfl_fake_clock_jump_wall(fx->clock, 2 * day);
	sfl_deadletter_enforce_bounds(dl);
	g_assert_cmpuint(sfl_deadletter_get_evicted_segments(dl), ==, before - 1);
	g_assert_cmpuint(sfl_deadletter_get_n_segments(dl), ==, 1);
	sfl_deadletter_unref(dl);
}

static void
test_damaged_segment(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) records = NULL;
	g_autofree gchar *bad = NULL;
	SflDeadletter *dl;
	guint warnings, skipped = 0;

	(void)data;
	dl = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	append_lines(fx, dl, 2, 10, "bad_request");
	sfl_deadletter_unref(dl);

	/* a hand-edited or torn segment: garbage, a non-object and a cut-off last line */
	bad = sfl_test_write_file(
		fx->dir, "seg-00000000000000000001-000000.jsonl",
		"{\"line\":\"kept\",\"reason\":\"x\"}\nnot json\n[1,2]\n{\"line\":\"cut");
	dl = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	warnings = sfl_test_warnings_count("damaged line");
	records = sfl_deadletter_read_all(dl, &skipped);
	g_assert_cmpuint(skipped, ==, 3);
	g_assert_cmpuint(records->len, ==, 3);
	g_assert_cmpuint(sfl_test_warnings_count("damaged line"), ==, warnings + 1);
	g_assert_cmpuint(sfl_test_warnings_count("seg-00000000000000000001"), >=, 1);
	/* the damaged segment sorts oldest */
	g_assert_cmpstr(json_string_value(json_object_get(g_ptr_array_index(records, 0), "line")),
			==, "kept");
	sfl_deadletter_unref(dl);
}

static const gchar *
record_line(GPtrArray *records, guint i)
{
	return json_string_value(json_object_get(g_ptr_array_index(records, i), "line"));
}

static void
append_named(Fixture *fx, SflDeadletter *dl, const gchar *line, const gchar *reason)
{
	g_autoptr(GError) error = NULL;
	SflEntry *entry = make_entry(fx, 5000, line);
	g_assert_true(sfl_deadletter_append_entries(dl, &entry, 1, reason, NULL, &error));
	g_assert_no_error(error);
	sfl_entry_unref(entry);
}

/* purge keeps what it is told to keep, written before the claimed segments go */
static void
test_claim_settle(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) all = NULL;
	g_autoptr(GPtrArray) keep = g_ptr_array_new();
	g_autoptr(GPtrArray) left = NULL;
	SflDeadletter *dl;

	(void)data;
	dl = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	append_lines(fx, dl, 30, 1000, "bad_request");
	append_lines(fx, dl, 5, 10, "line_too_long");
	all = sfl_deadletter_claim(dl, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(all->len, ==, 35);
	/* claimed: a reader sees none of it while the claim runs */
	{
		g_autoptr(GPtrArray) during = sfl_deadletter_read_all(dl, NULL);
		g_assert_cmpuint(during->len, ==, 0);
	}
	for (guint i = 0; i < all->len; i++) {
		json_t *r = g_ptr_array_index(all, i);
		if (g_strcmp0(json_string_value(json_object_get(r, "reason")), "line_too_long") ==
		    0)
			g_ptr_array_add(keep, r);
	}
	g_assert_true(sfl_deadletter_settle_claim(dl, keep, &error));
	g_assert_no_error(error);
	sfl_deadletter_unref(dl);

	dl = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	left = sfl_deadletter_read_all(dl, NULL);
	g_assert_cmpuint(left->len, ==, 5);
	for (guint i = 0; i < left->len; i++)
		g_assert_cmpstr(
			json_string_value(json_object_get(g_ptr_array_index(left, i), "reason")),
			==, "line_too_long");
	sfl_deadletter_unref(dl);
}

/*
 * A daemon keeps appending while the CLI replays: what it wrote after the claim is neither
 * claimed nor lost, and what the claim took does not come back with its next append.
 */
static void
test_claim_beside_appender(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) claimed = NULL;
	g_autoptr(GPtrArray) keep = g_ptr_array_new();
	g_autoptr(GPtrArray) left = NULL;
	SflDeadletter *daemon, *cli;

	(void)data;
	daemon = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	append_named(fx, daemon, "a1", "line_too_long");
	append_named(fx, daemon, "a2", "line_too_long");
	append_named(fx, daemon, "a3", "line_too_long");

	cli = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	claimed = sfl_deadletter_claim(cli, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(claimed->len, ==, 3);

	append_named(fx, daemon, "b1", "too_old");
	append_named(fx, daemon, "b2", "too_old");

	g_ptr_array_add(keep, g_ptr_array_index(claimed, 1)); /* a2 was refused again */
	g_assert_true(sfl_deadletter_settle_claim(cli, keep, &error));
	g_assert_no_error(error);
	sfl_deadletter_unref(cli);

	left = sfl_deadletter_read_all(daemon, NULL);
	g_assert_cmpuint(left->len, ==, 3);
	{
		g_autoptr(GHashTable) lines = g_hash_table_new(g_str_hash, g_str_equal);
		for (guint i = 0; i < left->len; i++)
			g_hash_table_add(lines, (gpointer)record_line(left, i));
		g_assert_true(g_hash_table_contains(lines, "a2"));
		g_assert_true(g_hash_table_contains(lines, "b1"));
		g_assert_true(g_hash_table_contains(lines, "b2"));
	}
	sfl_deadletter_unref(daemon);
}

/* one claimer at a time; an abort puts everything back */
static void
test_claim_exclusive_abort(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) first = NULL;
	g_autoptr(GPtrArray) second = NULL;
	g_autoptr(GPtrArray) after = NULL;
	SflDeadletter *a, *b;

	(void)data;
	a = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	append_named(fx, a, "only", "too_old");
	b = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);

	first = sfl_deadletter_claim(a, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(first->len, ==, 1);
	second = sfl_deadletter_claim(b, NULL, &error);
	g_assert_null(second);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
	g_assert_nonnull(strstr(error->message, "claim.lock"));
	g_clear_error(&error);

	sfl_deadletter_abort_claim(a);
	after = sfl_deadletter_read_all(b, NULL);
	g_assert_cmpuint(after->len, ==, 1);
	g_assert_cmpstr(record_line(after, 0), ==, "only");
	sfl_deadletter_unref(a);
	sfl_deadletter_unref(b);
}

/* a claimer that died mid-replay leaves claimed-* files: the next claim takes them back */
static void
test_claim_recovers_dead_claimer(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) records = NULL;
	g_autofree gchar *orphan = NULL;
	SflDeadletter *dl;

	(void)data;
	dl = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	append_named(fx, dl, "kept-by-daemon", "too_old");
	orphan = sfl_test_write_file(fx->dir,
				     "claimed-seg-00000000000000000001-0000abcd-000000.jsonl",
				     "{\"line\":\"orphan\",\"reason\":\"too_old\"}\n");
	/* readers do not see a claimed segment */
	{
		g_autoptr(GPtrArray) seen = sfl_deadletter_read_all(dl, NULL);
		g_assert_cmpuint(seen->len, ==, 1);
	}
	records = sfl_deadletter_claim(dl, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(records->len, ==, 2);
	g_assert_cmpstr(record_line(records, 0), ==, "orphan");
	g_assert_cmpuint(sfl_test_warnings_count("did not finish"), >=, 1);
	sfl_deadletter_abort_claim(dl);
	sfl_deadletter_unref(dl);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	(void)sfl_test_warnings_record(TRUE);
#define ADD(path, fn) g_test_add(path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
	ADD("/deadletter/append-reopen", test_append_reopen);
	ADD("/deadletter/awkward-lines", test_awkward_lines);
	ADD("/deadletter/bound-by-size", test_bound_by_size);
	ADD("/deadletter/bound-by-age", test_bound_by_age);
	ADD("/deadletter/damaged-segment", test_damaged_segment);
	ADD("/deadletter/claim-settle", test_claim_settle);
	ADD("/deadletter/claim-beside-appender", test_claim_beside_appender);
	ADD("/deadletter/claim-exclusive-abort", test_claim_exclusive_abort);
	ADD("/deadletter/claim-recovers-dead-claimer", test_claim_recovers_dead_claimer);
	return g_test_run();
}
