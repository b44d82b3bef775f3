/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflShard"

#include "config.h"

#include "sfl-member-view.h"

typedef struct {
	gchar *version;
	gint64 changed_at; /* monotonic, when this replica saw the version change */
	guint missed;	   /* complete listings in a row without this record */
} SflMemberSeen;

struct _SflMemberView {
	gchar *self_holder;
	gint64 ttl_usec;
	GHashTable *seen;   /* holder -> SflMemberSeen, the other members */
	gint64 observed_at; /* the last complete listing: the others' ages are judged there */
	gboolean self_confirmed;
	gint64 self_confirmed_at;
};

static void
sfl_member_seen_free(gpointer data)
{
	SflMemberSeen *seen = data;

	g_free(seen->version);
	g_free(seen);
}

SflMemberView *
sfl_member_view_new(const gchar *self_holder, gint64 ttl_usec)
{
	SflMemberView *view = g_new0(SflMemberView, 1);

	g_return_val_if_fail(self_holder != NULL && ttl_usec > 0, NULL);
	view->self_holder = g_strdup(self_holder);
	view->ttl_usec = ttl_usec;
	view->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, sfl_member_seen_free);
	return view;
}

void
sfl_member_view_free(SflMemberView *view)
{
	if (view == NULL)
		return;
	g_hash_table_unref(view->seen);
	g_free(view->self_holder);
	g_free(view);
}

void
sfl_member_view_observe(SflMemberView *view, gint64 now_usec, const SflMemberRecord *records,
			guint n_records)
{
	g_autoptr(GHashTable) listed = g_hash_table_new(g_str_hash, g_str_equal);
	GHashTableIter it;
	gpointer holder = NULL;
	gpointer value = NULL;

	view->observed_at = now_usec;
	for (guint i = 0; i < n_records; i++) {
		SflMemberSeen *seen = NULL;

		if (records[i].holder == NULL || g_str_equal(records[i].holder, view->self_holder))
			continue;
		g_hash_table_add(listed, (gpointer)records[i].holder);
		seen = g_hash_table_lookup(view->seen, records[i].holder);
		if (seen == NULL) {
			seen = g_new0(SflMemberSeen, 1);
			g_hash_table_insert(view->seen, g_strdup(records[i].holder), seen);
		} else if (g_strcmp0(seen->version, records[i].version) == 0) {
			seen->missed = 0;
			continue;
		}
		seen->missed = 0;
		g_free(seen->version);
		seen->version = g_strdup(records[i].version);
		seen->changed_at = now_usec;
	}
	/*
	 * A record gone from two listings in a row was removed by its owner's clean stop or by a
	 * cleanup. Gone from one may be a renewal caught mid-replace where the platform's
	 * replace is not atomic for a directory reader (wine unlinks, then renames): that member
	 * stays, judged by its age as before.
	 */
	g_hash_table_iter_init(&it, view->seen);
	while (g_hash_table_iter_next(&it, &holder, &value)) {
		SflMemberSeen *seen = value;

		if (!g_hash_table_contains(listed, holder) && ++seen->missed >= 2)
			g_hash_table_iter_remove(&it);
	}
}

void
sfl_member_view_confirm_self(SflMemberView *view, gint64 now_usec)
{
	view->self_confirmed = TRUE;
	view->self_confirmed_at = now_usec;
}

static gint
sfl_member_view_strcmp(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

GPtrArray *
sfl_member_view_live(SflMemberView *view, gint64 now_usec)
{
	GPtrArray *live = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	gpointer holder = NULL;
	gpointer value = NULL;

	if (view->self_confirmed && now_usec - view->self_confirmed_at < view->ttl_usec)
		g_ptr_array_add(live, g_strdup(view->self_holder));
	g_hash_table_iter_init(&it, view->seen);
	while (g_hash_table_iter_next(&it, &holder, &value)) {
		const SflMemberSeen *seen = value;

		if (view->observed_at - seen->changed_at < view->ttl_usec)
			g_ptr_array_add(live, g_strdup(holder));
	}
	g_ptr_array_sort(live, sfl_member_view_strcmp);
	return live;
}

GPtrArray *
sfl_member_view_dead(SflMemberView *view, gint64 stale_usec)
{
	GPtrArray *dead = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	gpointer holder = NULL;
	gpointer value = NULL;

	g_hash_table_iter_init(&it, view->seen);
	while (g_hash_table_iter_next(&it, &holder, &value)) {
		const SflMemberSeen *seen = value;

		if (view->observed_at - seen->changed_at >= stale_usec)
			g_ptr_array_add(dead, g_strdup(holder));
	}
	g_ptr_array_sort(dead, sfl_member_view_strcmp);
	return dead;
}
