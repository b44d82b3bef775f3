/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBenchDeadletter"

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "sfl-deadletter.h"
#include "sfl-platform.h"

/*
 * What keeping refused entries costs the pipeline's thread: a budget drop under
 * `budget_action: drop` hands the store whole batches (sink.loki.batch.max_entries, 1,000 by
 * default), each one durable append. The store rewrites its open segment per append, so the
 * bytes written per batch grow with the segment's fill; the floor is one durable replace of
 * just the batch's own bytes into a fresh file, measured in the same run on the same disk.
 * Reported: ms per batch, MiB/s of records, and the ratio to the floor. Nothing is asserted.
 */

#define BENCH_BATCHES 200u
#define BENCH_ENTRIES 1000u
#define BENCH_LINE    200u

static void
bench_rmtree(const gchar *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const gchar *name;

	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		g_remove(path);
	}
	g_rmdir(dir);
}

int
main(int argc, char **argv)
{
	const SflLabelPair pairs[] = { { "job", "sf2loki" },
				       { "source", "eventlogfile" },
				       { "event_type", "API" } };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *tmp = g_dir_make_tmp("sfl-bench-deadletter-XXXXXX", &error);
	g_autofree gchar *dir = g_build_filename(tmp, "deadletter", NULL);
	g_autofree gchar *floor_path = g_build_filename(tmp, "floor.jsonl", NULL);
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflLabels) labels = NULL;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflDeadletter) dl = NULL;
	g_autoptr(GPtrArray) entries =
		g_ptr_array_new_with_free_func((GDestroyNotify)sfl_entry_unref);
	g_autofree gchar *line = g_strnfill(BENCH_LINE, 'x');
	gint64 t0, store_usec, floor_usec = 0;
	gsize batch_bytes = 0;

	(void)argc;
	(void)argv;
	g_assert_no_error(error);
	labels = sfl_labels_intern(interner, pairs, G_N_ELEMENTS(pairs), &error);
	g_assert_no_error(error);
	dl = sfl_deadletter_open(dir, G_GUINT64_CONSTANT(64) << 20, 0, clock, &error);
	g_assert_no_error(error);
	for (guint i = 0; i < BENCH_ENTRIES; i++)
		g_ptr_array_add(entries, sfl_entry_new(1700000000000000000 + i, labels, line, -1,
						       NULL, 0, "elf:API", "cursor"));

	/* the floor: the batch's records, serialised as the store does, one durable replace */
	{
		g_autoptr(GString) text = g_string_new(NULL);
		for (guint i = 0; i < BENCH_ENTRIES; i++) {
			json_t *r =
				sfl_deadletter_record_new(dl, entries->pdata[i], "budget", NULL);
			g_autofree gchar *s = json_dumps(r, JSON_COMPACT | JSON_ENSURE_ASCII);
			g_string_append(text, s);
			g_string_append_c(text, '\n');
			json_decref(r);
		}
		batch_bytes = text->len;
		for (guint b = 0; b < BENCH_BATCHES; b++) {
			SflPlatformError perr = { 0 };
			t0 = g_get_monotonic_time();
			/* a new file each time, as a fresh segment would be */
			g_remove(floor_path);
			g_assert_cmpint(
				sfl_platform_replace_file(floor_path, text->str, text->len, &perr),
				==, SFL_PLATFORM_OK);
			floor_usec += g_get_monotonic_time() - t0;
		}
	}

	t0 = g_get_monotonic_time();
	for (guint b = 0; b < BENCH_BATCHES; b++) {
		g_assert_true(sfl_deadletter_append_entries(dl, (SflEntry *const *)entries->pdata,
							    entries->len, "budget", NULL, &error));
		g_assert_no_error(error);
	}
	store_usec = g_get_monotonic_time() - t0;

	g_print("dead-letter append: %u batches x %u entries (%.1f KiB a batch), store bound 64 "
		"MiB, %u segments at the end, %" G_GUINT64_FORMAT " evicted\n",
		BENCH_BATCHES, BENCH_ENTRIES, batch_bytes / 1024.0,
		sfl_deadletter_get_n_segments(dl), sfl_deadletter_get_evicted_segments(dl));
	g_print("  store: %.2f ms a batch, %.1f MiB/s of records\n",
		store_usec / 1000.0 / BENCH_BATCHES,
		(gdouble)batch_bytes * BENCH_BATCHES / (1 << 20) / (store_usec / 1e6));
	g_print("  floor (one durable replace of the batch alone): %.2f ms a batch, %.1f MiB/s\n",
		floor_usec / 1000.0 / BENCH_BATCHES,
		(gdouble)batch_bytes * BENCH_BATCHES / (1 << 20) / (floor_usec / 1e6));
	g_print("  ratio store/floor: %.2f\n", (gdouble)store_usec / (gdouble)floor_usec);

	g_clear_pointer(&dl, sfl_deadletter_unref);
	bench_rmtree(dir);
	g_remove(floor_path);
	g_rmdir(tmp);
	return 0;
}
