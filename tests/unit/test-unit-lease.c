/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestUnitLease"

#include "config.h"

#include <string.h>

#include "sfl-unit-lease.h"

/* the names of the unit leases: stable, DNS-1123 labels, distinct for distinct units */

static gboolean
is_dns_label(const gchar *name)
{
	gsize len = strlen(name);

	if (len == 0 || len > 63 || !g_ascii_isalnum(name[0]) || !g_ascii_isalnum(name[len - 1]))
		return FALSE;
	for (gsize i = 0; i < len; i++)
		if (!(g_ascii_islower(name[i]) || g_ascii_isdigit(name[i]) || name[i] == '-'))
			return FALSE;
	return TRUE;
}

static void
test_object_key(void)
{
	g_autofree gchar *a =
		sfl_unit_lease_object_key("sf2loki/leader.json", "pubsub:/event/LoginEventStream");
	g_autofree gchar *b =
		sfl_unit_lease_object_key("sf2loki/leader.json", "org=prod:elf:Login");
	g_autofree gchar *c = sfl_unit_lease_object_key("k", "a/b");
	g_autofree gchar *d = sfl_unit_lease_object_key("k", "a%2Fb");

	g_assert_cmpstr(a, ==, "sf2loki/leader.json.units/pubsub%3A%2Fevent%2FLoginEventStream");
	g_assert_cmpstr(b, ==, "sf2loki/leader.json.units/org%3Dprod%3Aelf%3ALogin");
	/* the escape character itself is escaped: no two units share a key */
	g_assert_cmpstr(c, ==, "k.units/a%2Fb");
	g_assert_cmpstr(d, ==, "k.units/a%252Fb");
}

static void
test_k8s_name(void)
{
	static const gchar *const units[] = { "pubsub:/event/LoginEventStream",
					      "pubsub:/event/LogoutEventStream",
					      "org=prod:elf:Login",
					      "org=prod:elf:login",
					      "",
					      "x" };
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree gchar *again = NULL;
	g_autofree gchar *longer = NULL;
	g_autofree gchar *odd = NULL;
	g_autofree gchar *first = NULL;

	for (guint i = 0; i < G_N_ELEMENTS(units); i++) {
		gchar *name = sfl_unit_lease_k8s_name("sf2loki-Leader", units[i]);

		g_assert_true(is_dns_label(name));
		g_assert_true(g_str_has_prefix(name, "sf2loki-leader-u-"));
		g_assert_cmpuint(strlen(name), ==, strlen("sf2loki-leader-u-") + 16);
		g_assert_false(g_hash_table_contains(seen, name));
		g_hash_table_add(seen, name);
	}
	/* stable: the same on every call (and platform: the hash is sfl_shard_score's) */
	first = sfl_unit_lease_k8s_name("sf2loki-leader", units[0]);
	again = sfl_unit_lease_k8s_name("sf2loki-leader", units[0]);
	g_assert_cmpstr(first, ==, again);
	/* a long lease name is cut to fit 63, and a cut ending in '-' stays a valid label */
	longer = sfl_unit_lease_k8s_name(
		"a-very-long-lease-name-that-goes-on-and-on-and-on-and-on-and-on", units[0]);
	g_assert_true(is_dns_label(longer));
	g_assert_cmpuint(strlen(longer), <=, 63);
	odd = sfl_unit_lease_k8s_name("---", units[0]);
	g_assert_true(is_dns_label(odd));
}

static void
test_k8s_member_name(void)
{
	g_autofree gchar *a = sfl_unit_lease_k8s_member_name("sf2loki", "pod-a");
	g_autofree gchar *b = sfl_unit_lease_k8s_member_name("sf2loki", "pod-b");
	g_autofree gchar *unit = sfl_unit_lease_k8s_name("sf2loki", "pod-a");
	g_autofree gchar *label = sfl_unit_lease_k8s_group_label("Sf2loki-Leader");
	g_autofree gchar *long_label = sfl_unit_lease_k8s_group_label(
		"a-very-long-lease-name-that-goes-on-and-on-and-on-and-on-and-on-.x");
	g_autofree gchar *odd = sfl_unit_lease_k8s_group_label("---");

	g_assert_true(is_dns_label(a));
	g_assert_true(g_str_has_prefix(a, "sf2loki-m-"));
	g_assert_cmpstr(a, !=, b);
	/* a member's record never shares a name with a unit's lease of the same id */
	g_assert_cmpstr(a, !=, unit);
	g_assert_cmpstr(label, ==, "sf2loki-leader");
	/* a label value: at most 63 characters, ending alphanumeric */
	g_assert_cmpuint(strlen(long_label), <=, 63);
	g_assert_true(g_ascii_isalnum(long_label[strlen(long_label) - 1]));
	g_assert_cmpstr(odd, ==, "sf2loki");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/unit-lease/object-key", test_object_key);
	g_test_add_func("/sfl/unit-lease/k8s-name", test_k8s_name);
	g_test_add_func("/sfl/unit-lease/k8s-member-name", test_k8s_member_name);
	return g_test_run();
}
