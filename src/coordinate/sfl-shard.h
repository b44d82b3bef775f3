/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Work-unit assignment for sharded replicas (coordinate.sharding). A unit is named by the
 * checkpoint key it writes, a member by its holder string. Every replica computes the same
 * assignment from the same member list, with no messages between them: rendezvous
 * (highest-random-weight) scores, made exactly balanced by a capacity — each member owns ⌊U/N⌋ or
 * ⌈U/N⌉ units — and taken greedily in descending score order, so a join or a leave moves close to
 * the 1/N share a plain rendezvous would move.
 */

/* the rendezvous weight of @unit on @member: a 64-bit hash, the same on every platform */
guint64 sfl_shard_score(const gchar *member, const gchar *unit);

/*
 * The owner of each of @units (@n_units, distinct) among @members (@n_members, distinct,
 * any order): returns an array of @n_units indexes into @members, in @units' order
 * (transfer full, g_free). With no member every unit is -1.
 */
gint *sfl_shard_assign(const gchar *const *units, guint n_units, const gchar *const *members,
		       guint n_members) G_GNUC_WARN_UNUSED_RESULT;
/*
 * For each of @units, whether @members[@me] owns it once its owner (another member) has gone:
 * an array of @n_units booleans (transfer full, g_free), all FALSE with fewer than two members.
 */
gboolean *
sfl_shard_successors(const gchar *const *units, guint n_units, const gchar *const *members,
		     guint n_members, guint me) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
