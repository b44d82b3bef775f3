/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflShard"

#include "config.h"

#include "sfl-unit-lease.h"

#include <string.h>

#include "sfl-shard.h"

/* escaped so that distinct units never share a key and no unit makes a path segment */
gchar *
sfl_unit_lease_object_key(const gchar *lease_key, const gchar *unit)
{
	GString *key = g_string_new(lease_key);

	g_string_append(key, ".units/");
	for (const guchar *p = (const guchar *)unit; *p != '\0'; p++) {
		if (g_ascii_isalnum(*p) || *p == '.' || *p == '_' || *p == '-')
			g_string_append_c(key, (gchar)*p);
		else
			g_string_append_printf(key, "%%%02X", *p);
	}
	return g_string_free(key, FALSE);
}

/*
 * The hash is sfl_shard_score with an empty member: the same FNV-1a and finalizer the
 * assignment uses, so it is stable across platforms; 64 bits keep distinct units distinct.
 */
gchar *
sfl_unit_lease_k8s_name(const gchar *lease_name, const gchar *unit)
{
	g_autofree gchar *suffix =
		g_strdup_printf("-u-%016" G_GINT64_MODIFIER "x", sfl_shard_score("", unit));
	g_autofree gchar *lower = g_ascii_strdown(lease_name, -1);
	gsize room = 63 - strlen(suffix);
	gsize len = MIN(strlen(lower), room);

	/* the label's head must end alphanumeric before the '-' of the suffix joins it */
	while (len > 0 && !g_ascii_isalnum(lower[len - 1]))
		len--;
	if (len == 0)
		return g_strconcat("unit", suffix, NULL);
	lower[len] = '\0';
	return g_strconcat(lower, suffix, NULL);
}
