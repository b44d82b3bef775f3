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
	sfl_deadletter_free(dl);
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
	sfl_deadletter_free(dl);
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
	sfl_deadletter_free(dl);
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
	sfl_deadletter_free(dl);
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
	sfl_deadletter_free(dl);

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
	sfl_deadletter_free(dl);
}

static void
test_rewrite(Fixture *fx, gconstpointer data)
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
	all = sfl_deadletter_read_all(dl, NULL);
	g_assert_cmpuint(all->len, ==, 35);
	for (guint i = 0; i < all->len; i++) {
		json_t *r = g_ptr_array_index(all, i);
		if (g_strcmp0(json_string_value(json_object_get(r, "reason")), "line_too_long") ==
		    0)
			g_ptr_array_add(keep, r);
	}
	g_assert_true(sfl_deadletter_rewrite(dl, keep, &error));
	g_assert_no_error(error);
	sfl_deadletter_free(dl);

	dl = sfl_deadletter_open(fx->dir, 1024 * 1024, 0, fx->clock, &error);
	g_assert_no_error(error);
	left = sfl_deadletter_read_all(dl, NULL);
	g_assert_cmpuint(left->len, ==, 5);
	for (guint i = 0; i < left->len; i++)
		g_assert_cmpstr(
			json_string_value(json_object_get(g_ptr_array_index(left, i), "reason")),
			==, "line_too_long");
	sfl_deadletter_free(dl);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	(void)sfl_test_warnings_record(TRUE);
#define ADD(path, fn) g_test_add(path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
	ADD("/deadletter/append-reopen", test_append_reopen);
	ADD("/deadletter/bound-by-size", test_bound_by_size);
	ADD("/deadletter/bound-by-age", test_bound_by_age);
	ADD("/deadletter/damaged-segment", test_damaged_segment);
	ADD("/deadletter/rewrite", test_rewrite);
	return g_test_run();
}
