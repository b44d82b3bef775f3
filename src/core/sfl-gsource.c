/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflGSource"

#include "config.h"

#include "sfl-gsource.h"

/**
 * sfl_clear_source:
 * @source: (inout) (nullable): a held source, or a pointer to %NULL
 *
 * Destroys the source (so its callback never runs again) and drops the reference, leaving
 * %NULL behind. Safe to call on an already cleared pointer.
 */
void
sfl_clear_source(GSource **source)
{
	if (*source == NULL)
		return;
	g_source_destroy(*source);
	g_clear_pointer(source, g_source_unref);
}
