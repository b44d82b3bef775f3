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

/* a DNS-1123 label's head: lowercase, cut to @room, ending alphanumeric */
static gchar *
sfl_unit_lease_k8s_head(const gchar *lease_name, gsize room)
{
	gchar *lower = g_ascii_strdown(lease_name, -1);
	gsize len = MIN(strlen(lower), room);

	while (len > 0 && !g_ascii_isalnum(lower[len - 1]))
		len--;
	lower[len] = '\0';
	return lower;
}

/*
 * The hash is sfl_shard_score with an empty member: the same FNV-1a and finalizer the
 * assignment uses, so it is stable across platforms; 64 bits keep distinct ids distinct.
 */
static gchar *
sfl_unit_lease_k8s_tagged(const gchar *lease_name, const gchar *tag, const gchar *id)
{
	g_autofree gchar *suffix =
		g_strdup_printf("-%s-%016" G_GINT64_MODIFIER "x", tag, sfl_shard_score("", id));
	/* the label's head must end alphanumeric before the '-' of the suffix joins it */
	g_autofree gchar *head = sfl_unit_lease_k8s_head(lease_name, 63 - strlen(suffix));

	if (head[0] == '\0')
		return g_strconcat(g_str_equal(tag, "u") ? "unit" : "member", suffix, NULL);
	return g_strconcat(head, suffix, NULL);
}

gchar *
sfl_unit_lease_k8s_name(const gchar *lease_name, const gchar *unit)
{
	return sfl_unit_lease_k8s_tagged(lease_name, "u", unit);
}

gchar *
sfl_unit_lease_k8s_member_name(const gchar *lease_name, const gchar *holder)
{
	return sfl_unit_lease_k8s_tagged(lease_name, "m", holder);
}

gchar *
sfl_unit_lease_k8s_group_label(const gchar *lease_name)
{
	gchar *head = sfl_unit_lease_k8s_head(lease_name, 63);

	if (head[0] != '\0')
		return head;
	g_free(head);
	return g_strdup("sf2loki");
}
