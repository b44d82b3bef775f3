/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzElfCursor"

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "sfl-elf-source-private.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init_logging();
	return 0;
}

/*
 * An EventLogFile checkpoint value comes from the store, which an operator (or the original)
 * may have written: any input is accepted or refused without crashing, and what is accepted
 * renders to a value that reads back to itself, so a commit never changes its meaning.
 */
static void
fuzz_elf_cursor_round_trip(gchar *(*normalize)(const gchar *value), const gchar *value)
{
	g_autofree gchar *once = normalize(value);
	g_autofree gchar *twice = NULL;

	if (once == NULL)
		return;
	if (!g_utf8_validate(once, -1, NULL))
		g_error("rendered cursor is not UTF-8");
	twice = normalize(once);
	if (twice == NULL || strcmp(once, twice) != 0)
		g_error("rendered cursor does not read back to itself: %s", once);
}

/* the daemon's cursor and the backfill's (`backfill:` keys) alike */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree gchar *value = g_strndup((const gchar *)data, size);

	fuzz_elf_cursor_round_trip(sfl_elf_cursor_normalize, value);
	fuzz_elf_cursor_round_trip(sfl_elf_backfill_cursor_normalize, value);
	return 0;
}
