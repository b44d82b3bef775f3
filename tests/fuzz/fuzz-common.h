/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>
#include <stdlib.h>

/*
 * g_error() (and a critical made fatal) ends the process with a breakpoint trap, which
 * libFuzzer does not catch: the run would die without saving the input. Aborting instead lets
 * it write the crash artifact and print its path like for any other finding.
 */
static GLogWriterOutput
fuzz_log_writer(GLogLevelFlags log_level, const GLogField *fields, gsize n_fields,
		gpointer user_data)
{
	GLogWriterOutput out =
		g_log_writer_standard_streams(log_level, fields, n_fields, user_data);

	if (log_level & (G_LOG_FLAG_FATAL | G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
		abort();
	return out;
}

/* call once, from LLVMFuzzerInitialize(); criticals are findings too */
static inline void
fuzz_init_logging(void)
{
	g_log_set_writer_func(fuzz_log_writer, NULL, NULL);
	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
}
