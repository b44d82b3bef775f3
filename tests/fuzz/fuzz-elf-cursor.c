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
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree gchar *value = g_strndup((const gchar *)data, size);
	g_autofree gchar *once = sfl_elf_cursor_normalize(value);
	g_autofree gchar *twice = NULL;

	if (once == NULL)
		return 0;
	if (!g_utf8_validate(once, -1, NULL))
		g_error("rendered cursor is not UTF-8");
	twice = sfl_elf_cursor_normalize(once);
	if (twice == NULL || strcmp(once, twice) != 0)
		g_error("rendered cursor does not read back to itself: %s", once);
	return 0;
}
