/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzDeadletterSegment"

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "sfl-deadletter.h"

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
 * A dead-letter segment may be torn, hand-edited or from another version: every line is a
 * record or counted as damaged, never both, never a crash, and only JSON objects come out.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func((GDestroyNotify)json_decref);
	guint bad = sfl_deadletter_parse_segment((const gchar *)data, size, out);
	guint lines = 0;
	for (size_t i = 0; i < size; i++) {
		if (data[i] == '\n')
			lines++;
	}
	if (size > 0 && data[size - 1] != '\n')
		lines++;
	if (out->len + bad > lines)
		g_error("%u records and %u damaged lines from %u lines", out->len, bad, lines);
	for (guint i = 0; i < out->len; i++) {
		if (!json_is_object((json_t *)g_ptr_array_index(out, i)))
			g_error("a record that is not an object");
	}
	return 0;
}
