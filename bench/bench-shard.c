/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBenchShard"

#include "config.h"

#include "sfl-shard.h"

/*
 * The work-unit assignment at scale (issue 26, item 6): 50 replicas and 1,000 units, no
 * network. For a join (a 51st replica), a leave (one of 50 stops) and a crash (the same as a
 * leave for the assignment: the lease machinery, not this, decides how fast it is noticed) it
 * prints the units that change owner next to the 1/N share a plain rendezvous would move, and
 * what one assignment costs. Its floor is a plain rendezvous (best score, no capacity) over the
 * same inputs, computed in the same run. Nothing is asserted.
 */

#define BENCH_UNITS   1000u
#define BENCH_MEMBERS 50u
#define BENCH_ROUNDS  20u

static GPtrArray *
bench_names(const gchar *prefix, guint first, guint n)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	for (guint i = first; i < first + n; i++)
		g_ptr_array_add(out, g_strdup_printf("%s%u", prefix, i));
	return out;
}

/* the owner's name per unit, so member lists of different lengths compare */
static const gchar **
bench_owners(GPtrArray *units, GPtrArray *members, gboolean plain)
{
	const gchar **out = g_new(const gchar *, units->len);

	if (plain) {
		for (guint u = 0; u < units->len; u++) {
			guint64 best = 0;
			guint best_m = 0;

			for (guint m = 0; m < members->len; m++) {
				guint64 s = sfl_shard_score(members->pdata[m], units->pdata[u]);
				if (m == 0 || s > best) {
					best = s;
					best_m = m;
				}
			}
			out[u] = members->pdata[best_m];
		}
		return out;
	}
	{
		g_autofree gint *owner =
			sfl_shard_assign((const gchar *const *)units->pdata, units->len,
					 (const gchar *const *)members->pdata, members->len);
		for (guint u = 0; u < units->len; u++)
			out[u] = members->pdata[owner[u]];
	}
	return out;
}

static guint
bench_moved(const gchar **a, const gchar **b, guint n)
{
	guint moved = 0;

	for (guint u = 0; u < n; u++)
		moved += g_strcmp0(a[u], b[u]) != 0;
	return moved;
}

static void
bench_run(gboolean plain)
{
	guint64 join = 0;
	guint64 leave = 0;
	guint max_load = 0;
	gint64 spent = 0;
	guint assignments = 0;

	for (guint r = 0; r < BENCH_ROUNDS; r++) {
		g_autofree gchar *prefix = g_strdup_printf("org%u:eventlogfile:Type", r);
		g_autoptr(GPtrArray) units = bench_names(prefix, 0, BENCH_UNITS);
		g_autoptr(GPtrArray) members = bench_names("replica-", r * 100, BENCH_MEMBERS);
		g_autoptr(GPtrArray) joined = bench_names("replica-", r * 100, BENCH_MEMBERS + 1);
		g_autoptr(GPtrArray) left = bench_names("replica-", r * 100 + 1, BENCH_MEMBERS - 1);
		gint64 t0 = g_get_monotonic_time();
		g_autofree const gchar **base = bench_owners(units, members, plain);
		g_autofree const gchar **after_join = bench_owners(units, joined, plain);
		g_autofree const gchar **after_leave = bench_owners(units, left, plain);
		g_autoptr(GHashTable) load = g_hash_table_new(g_str_hash, g_str_equal);

		spent += g_get_monotonic_time() - t0;
		assignments += 3;
		join += bench_moved(base, after_join, BENCH_UNITS);
		leave += bench_moved(base, after_leave, BENCH_UNITS);
		for (guint u = 0; u < BENCH_UNITS; u++) {
			guint n = GPOINTER_TO_UINT(g_hash_table_lookup(load, base[u])) + 1;
			g_hash_table_insert(load, (gpointer)base[u], GUINT_TO_POINTER(n));
			max_load = MAX(max_load, n);
		}
	}
	g_print("%-28s join %6.1f units (1/N share %.1f, ratio %.2f), leave %6.1f (share %.1f, "
		"ratio %.2f), most units on one replica %u (ideal %u), %.2f ms per assignment\n",
		plain ? "plain rendezvous (floor)" : "balanced rendezvous",
		(gdouble)join / BENCH_ROUNDS, (gdouble)BENCH_UNITS / (BENCH_MEMBERS + 1),
		(gdouble)join / BENCH_ROUNDS / ((gdouble)BENCH_UNITS / (BENCH_MEMBERS + 1)),
		(gdouble)leave / BENCH_ROUNDS, (gdouble)BENCH_UNITS / BENCH_MEMBERS,
		(gdouble)leave / BENCH_ROUNDS / ((gdouble)BENCH_UNITS / BENCH_MEMBERS), max_load,
		(BENCH_UNITS + BENCH_MEMBERS - 1) / BENCH_MEMBERS,
		(gdouble)spent / assignments / 1000.0);
}

/* what a member computes at each membership change to know which leases to watch */
static void
bench_successors(void)
{
	gint64 spent = 0;
	guint64 watched = 0;

	for (guint r = 0; r < BENCH_ROUNDS; r++) {
		g_autofree gchar *prefix = g_strdup_printf("org%u:eventlogfile:Type", r);
		g_autoptr(GPtrArray) units = bench_names(prefix, 0, BENCH_UNITS);
		g_autoptr(GPtrArray) members = bench_names("replica-", r * 100, BENCH_MEMBERS);
		gint64 t0 = g_get_monotonic_time();
		g_autofree gboolean *watch = sfl_shard_successors(
			(const gchar *const *)units->pdata, BENCH_UNITS,
			(const gchar *const *)members->pdata, BENCH_MEMBERS, r % BENCH_MEMBERS);

		spent += g_get_monotonic_time() - t0;
		for (guint u = 0; u < BENCH_UNITS; u++)
			watched += watch[u];
	}
	g_print("%-28s %.1f units watched per replica (ideal share %.1f), %.2f ms per replica "
		"per membership change\n",
		"successors (watch list)", (gdouble)watched / BENCH_ROUNDS,
		(gdouble)BENCH_UNITS / BENCH_MEMBERS, (gdouble)spent / BENCH_ROUNDS / 1000.0);
}

int
main(int argc, char **argv)
{
	g_print("%u units over %u replicas, %u rounds of fresh names\n", BENCH_UNITS, BENCH_MEMBERS,
		BENCH_ROUNDS);
	bench_run(TRUE);
	bench_run(FALSE);
	bench_successors();
	return 0;
}
