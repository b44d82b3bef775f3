/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflShard"

#include "config.h"

#include "sfl-shard.h"

#include <string.h>

/* FNV-1a over the member, a NUL and the unit, then a 64-bit finalizer to spread the bits */
guint64
sfl_shard_score(const gchar *member, const gchar *unit)
{
	guint64 h = G_GUINT64_CONSTANT(0xcbf29ce484222325);
	const guint64 prime = G_GUINT64_CONSTANT(0x100000001b3);

	for (const guchar *p = (const guchar *)member; *p != '\0'; p++)
		h = (h ^ *p) * prime;
	h *= prime; /* the separator, so ("ab", "c") and ("a", "bc") differ */
	for (const guchar *p = (const guchar *)unit; *p != '\0'; p++)
		h = (h ^ *p) * prime;
	h ^= h >> 33;
	h *= G_GUINT64_CONSTANT(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= G_GUINT64_CONSTANT(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

typedef struct {
	guint64 score;
	guint unit;
	guint member;
} SflShardPair;

/* highest score first; ties (improbable) by unit then member name, so every replica agrees */
static gint
sfl_shard_pair_cmp(gconstpointer a, gconstpointer b, gpointer user_data)
{
	const SflShardPair *x = a;
	const SflShardPair *y = b;
	const gchar *const *units = ((const gchar *const *const *)user_data)[0];
	const gchar *const *members = ((const gchar *const *const *)user_data)[1];
	gint c = 0;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	c = strcmp(units[x->unit], units[y->unit]);
	if (c != 0)
		return c;
	return strcmp(members[x->member], members[y->member]);
}

/* every (unit, member) pair by score, best first: the order every replica fills units in */
static SflShardPair *
sfl_shard_pairs(const gchar *const *units, guint n_units, const gchar *const *members,
		guint n_members)
{
	SflShardPair *pairs = g_new(SflShardPair, MAX((gsize)n_units * n_members, 1));
	const gchar *const *const ctx[] = { units, members };

	for (guint u = 0; u < n_units; u++)
		for (guint m = 0; m < n_members; m++)
			pairs[(gsize)u * n_members + m] =
				(SflShardPair){ sfl_shard_score(members[m], units[u]), u, m };
	g_qsort_with_data(pairs, (gint)((gsize)n_units * n_members), sizeof(SflShardPair),
			  sfl_shard_pair_cmp, (gpointer)ctx);
	return pairs;
}

/*
 * Each unit goes to the best-scoring member that still has room. Room is ⌊U/N⌋, plus one for
 * the first U mod N members to get there: the totals come out exact whatever order the scores
 * fill them in. @skip (or -1) is a member left out, as if it had gone; N counts the others.
 */
static void
sfl_shard_fill(const SflShardPair *pairs, guint n_units, guint n_members, gint skip, gint *owner)
{
	g_autofree guint *owned = g_new0(guint, MAX(n_members, 1));
	guint n_live = skip >= 0 ? n_members - 1 : n_members;
	guint floor_share = 0;
	guint extra = 0; /* members that may still own ⌈U/N⌉ */
	guint left = n_units;

	for (guint u = 0; u < n_units; u++)
		owner[u] = -1;
	if (n_live == 0 || n_units == 0)
		return;
	floor_share = n_units / n_live;
	extra = n_units % n_live;
	for (gsize i = 0; left > 0 && i < (gsize)n_units * n_members; i++) {
		const SflShardPair *p = &pairs[i];
		guint room = floor_share + (extra > 0 ? 1 : 0);

		if ((gint)p->member == skip || owner[p->unit] >= 0 || owned[p->member] >= room)
			continue;
		owner[p->unit] = (gint)p->member;
		owned[p->member]++;
		left--;
		if (owned[p->member] == floor_share + 1)
			extra--;
	}
}

gint *
sfl_shard_assign(const gchar *const *units, guint n_units, const gchar *const *members,
		 guint n_members)
{
	gint *owner = g_new(gint, MAX(n_units, 1));
	g_autofree SflShardPair *pairs = NULL;

	if (n_members == 0 || n_units == 0) {
		for (guint u = 0; u < n_units; u++)
			owner[u] = -1;
		return owner;
	}
	pairs = sfl_shard_pairs(units, n_units, members, n_members);
	sfl_shard_fill(pairs, n_units, n_members, -1, owner);
	return owner;
}

/*
 * Which units @me would take over if their owner left: for every other member, the assignment
 * of the rest (what sfl_shard_assign() gives without it), from one scoring and sort. A replica
 * watches these units' leases so that a takeover after a crash does not start timing the dead
 * owner's lease only once the member list dropped it.
 */
gboolean *
sfl_shard_successors(const gchar *const *units, guint n_units, const gchar *const *members,
		     guint n_members, guint me)
{
	gboolean *watch = g_new0(gboolean, MAX(n_units, 1));
	g_autofree SflShardPair *pairs = NULL;
	g_autofree gint *owner = NULL;
	g_autofree gint *next = NULL;

	if (n_members < 2 || n_units == 0 || me >= n_members)
		return watch;
	pairs = sfl_shard_pairs(units, n_units, members, n_members);
	owner = g_new(gint, n_units);
	next = g_new(gint, n_units);
	sfl_shard_fill(pairs, n_units, n_members, -1, owner);
	for (guint gone = 0; gone < n_members; gone++) {
		if (gone == me)
			continue;
		sfl_shard_fill(pairs, n_units, n_members, (gint)gone, next);
		for (guint u = 0; u < n_units; u++)
			if (owner[u] == (gint)gone && next[u] == (gint)me)
				watch[u] = TRUE;
	}
	return watch;
}
