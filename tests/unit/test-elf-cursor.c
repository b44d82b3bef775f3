/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTest"

#include "config.h"

#include "sfl-elf-source-private.h"

/* the original's value is rendered back byte for byte: committing it changes nothing */
static void
test_original_format(void)
{
	const gchar *original =
		"{\"ids\": [[\"0ATXX0000000001\", \"2026-11-30T03:00:00.000+0000\"]], "
		"\"last_created\": \"2026-11-30T03:00:00.000+0000\"}";
	const gchar *bare = "{\"ids\": [\"0ATXX0000000001\"], \"last_created\": "
			    "\"2026-11-29T05:51:21Z\"}";
	g_autofree gchar *a = sfl_elf_cursor_normalize(original);
	g_autofree gchar *b = sfl_elf_cursor_normalize(bare);

	g_assert_cmpstr(a, ==, original);
	/* legacy bare ids stay bare: they match any CreatedDate */
	g_assert_cmpstr(b, ==, bare);
}

/* ours: in_flight kept in its place; one that does not read is dropped, never the cursor */
static void
test_in_flight(void)
{
	const gchar *ours = "{\"ids\": [], \"in_flight\": {\"id\": \"0ATXX0000000002\", \"rows\": "
			    "12300}, \"last_created\": \"2026-11-30T03:00:00.000+0000\"}";
	const gchar *bad = "{\"ids\": [], \"in_flight\": {\"id\": 7, \"rows\": -1}, "
			   "\"last_created\": \"2026-11-30T03:00:00.000+0000\"}";
	g_autofree gchar *a = sfl_elf_cursor_normalize(ours);
	g_autofree gchar *b = sfl_elf_cursor_normalize(bad);

	g_assert_cmpstr(a, ==, ours);
	g_assert_cmpstr(b, ==, "{\"ids\": [], \"last_created\": \"2026-11-30T03:00:00.000+0000\"}");
}

/* what the source would refuse (and start from the lookback with a warning) */
static void
test_refused(void)
{
	const gchar *const refused[] = {
		"2026-01-01T00:00:00Z garbage",
		"[]",
		"{\"ids\": {}, \"last_created\": \"2026-11-30T03:00:00Z\"}",
		"{\"ids\": [], \"last_created\": \"yesterday\"}",
		"{\"ids\": [1], \"last_created\": \"2026-11-30T03:00:00Z\"}",
	};

	for (gsize i = 0; i < G_N_ELEMENTS(refused); i++) {
		g_autofree gchar *got = sfl_elf_cursor_normalize(refused[i]);
		g_assert_null(got);
	}
}

/* backfill values: the original's rendered back as they are, in_flight in its sorted place */
static void
test_backfill_format(void)
{
	const gchar *original = "{\"done_ids\": [\"0ATXX0000000001\", \"0ATXX0000000002\"], "
				"\"last_created\": \"2026-11-30T03:00:00.000+0000\"}";
	const gchar *ours = "{\"done_ids\": [], \"in_flight\": {\"id\": \"0ATXX0000000003\", "
			    "\"rows\": 17}, \"last_created\": \"2026-01-01T00:00:00Z\"}";
	const gchar *const refused[] = {
		"[]",
		"{\"done_ids\": {}, \"last_created\": \"2026-11-30T03:00:00Z\"}",
		"{\"done_ids\": [1], \"last_created\": \"2026-11-30T03:00:00Z\"}",
		"{\"done_ids\": [], \"last_created\": \"tomorrow\"}",
	};
	g_autofree gchar *a = sfl_elf_backfill_cursor_normalize(original);
	g_autofree gchar *b = sfl_elf_backfill_cursor_normalize(ours);
	g_autofree gchar *empty = sfl_elf_backfill_cursor_normalize("{}");

	g_assert_cmpstr(a, ==, original);
	g_assert_cmpstr(b, ==, ours);
	g_assert_cmpstr(empty, ==, "{\"done_ids\": [], \"last_created\": \"\"}");
	for (gsize i = 0; i < G_N_ELEMENTS(refused); i++) {
		g_autofree gchar *got = sfl_elf_backfill_cursor_normalize(refused[i]);
		g_assert_null(got);
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/elf-cursor/original-format", test_original_format);
	g_test_add_func("/sfl/elf-cursor/in-flight", test_in_flight);
	g_test_add_func("/sfl/elf-cursor/refused", test_refused);
	g_test_add_func("/sfl/elf-cursor/backfill-format", test_backfill_format);
	return g_test_run();
}
