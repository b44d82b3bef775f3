/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestConfigLeaves"

#include "config.h"

#include <string.h>

#include "sfl-config-leaves.h"
#include "sfl-config.h"
#include "sfl-redact.h"
#include "sfl-test-files.h"

static SflConfig *
load(const gchar *yaml)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) envp = g_environ_setenv(NULL, "HOME", "/nonexistent", TRUE);
	SflConfig *config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", envp, &error);
	g_assert_no_error(error);
	g_assert_nonnull(config);
	return config;
}

static const SflConfigLeaf *
find_leaf(GPtrArray *leaves, const gchar *path)
{
	for (guint i = 0; i < leaves->len; i++) {
		const SflConfigLeaf *leaf = g_ptr_array_index(leaves, i);
		if (g_str_equal(leaf->path, path))
			return leaf;
	}
	return NULL;
}

/* the leaf at @path, which must exist (g_error does not return, so no NULL reaches callers) */
static const SflConfigLeaf *
leaf_at(GPtrArray *leaves, const gchar *path)
{
	const SflConfigLeaf *leaf = find_leaf(leaves, path);
	if (leaf == NULL)
		g_error("no leaf %s", path);
	return leaf;
}

static gboolean
diff_has(GPtrArray *diff, const gchar *path)
{
	for (guint i = 0; i < diff->len; i++) {
		if (g_str_equal(g_ptr_array_index(diff, i), path))
			return TRUE;
	}
	return FALSE;
}

static void
test_defaults_appear(void)
{
	g_autoptr(SflConfig) config = load(SFL_TEST_YAML_MINIMAL);
	g_autoptr(GPtrArray) leaves = sfl_config_leaves(config);
	const SflConfigLeaf *leaf;

	/* a key the file never mentions still shows, with its table default */
	leaf = leaf_at(leaves, "sources.pubsub.include");
	g_assert_cmpstr(leaf->value, ==, "[\"*\"]");
	g_assert_true(leaf->field == sfl_config_field_at("sources.pubsub.include"));
	leaf = leaf_at(leaves, "sources.pubsub.cdc_field_names");
	g_assert_cmpstr(leaf->value, ==, "metadata");
	leaf = leaf_at(leaves, "sink.loki.url");
	g_assert_cmpstr(leaf->value, ==, "\"http://127.0.0.1:3100/loki/api/v1/push\"");
	leaf = leaf_at(leaves, "sink.loki.labels");
	g_assert_cmpstr(leaf->value, ==, "{}");
	/* an empty object list is one leaf, so emptying a list is a change */
	leaf = leaf_at(leaves, "orgs");
	g_assert_cmpstr(leaf->value, ==, "[]");
	/* every leaf is a table entry and names one */
	for (guint i = 0; i < leaves->len; i++) {
		const SflConfigLeaf *l = g_ptr_array_index(leaves, i);
		g_assert_nonnull(l->field);
		g_assert_nonnull(l->value);
		g_assert_true(g_str_has_suffix(l->path, l->field->key) ||
			      g_str_has_suffix(l->path, "]"));
	}
}

static void
test_secret_redacted(void)
{
	g_autoptr(SflConfig) config = load(SFL_TEST_YAML_MINIMAL);
	g_autoptr(GPtrArray) leaves = sfl_config_leaves(config);
	const SflConfigLeaf *key = leaf_at(leaves, "salesforce.private_key");
	const SflConfigLeaf *unset = leaf_at(leaves, "salesforce.client_secret");
	g_autofree gchar *want =
		g_compute_checksum_for_string(G_CHECKSUM_SHA256, "inline-key-material", -1);

	g_assert_cmpstr(key->value, ==, "<redacted>");
	g_assert_cmpstr(key->digest, ==, want);
	g_assert_cmpstr(unset->value, ==, "null");
	g_assert_null(unset->digest);
	for (guint i = 0; i < leaves->len; i++) {
		const SflConfigLeaf *l = g_ptr_array_index(leaves, i);
		g_assert_null(strstr(l->value, "inline-key-material"));
	}
}

static void
test_types_rendered(void)
{
	g_autoptr(SflConfig) config =
		load(SFL_TEST_YAML_MINIMAL "sources:\n"
					   "  pubsub:\n"
					   "    topics: [/event/A, \"/event/B\\\"q\"]\n"
					   "    sample: {LoginEvent: 0.25}\n"
					   "    transforms:\n"
					   "      - {action: drop_row, match: {type: login}}\n"
					   "      - {action: drop_row, match: {type: api}}\n");
	g_autoptr(GPtrArray) leaves = sfl_config_leaves(config);
	const SflConfigLeaf *leaf;

	leaf = leaf_at(leaves, "sources.pubsub.topics");
	g_assert_cmpstr(leaf->value, ==, "[\"/event/A\", \"/event/B\\\"q\"]");
	leaf = leaf_at(leaves, "sources.pubsub.sample");
	g_assert_cmpstr(leaf->value, ==, "{\"LoginEvent\": 0.25}");
	leaf = leaf_at(leaves, "sources.pubsub.transforms[1].match");
	g_assert_cmpstr(leaf->value, ==, "{\"type\": \"api\"}");
	g_assert_null(find_leaf(leaves, "sources.pubsub.transforms"));
	g_assert_null(find_leaf(leaves, "sources.pubsub.transforms[2].match"));
}

static void
test_diff(void)
{
	g_autoptr(SflConfig) a =
		load(SFL_TEST_YAML_MINIMAL "sources:\n  pubsub:\n    topics: [/event/A]\n");
	g_autoptr(SflConfig) same =
		load(SFL_TEST_YAML_MINIMAL "sources:\n  pubsub:\n    topics: [/event/A]\n");
	g_autoptr(SflConfig) b = load("salesforce:\n"
				      "  client_id: cid\n"
				      "  username: integration@example.com\n"
				      "  private_key: rotated-key-material\n"
				      "sink:\n"
				      "  loki:\n"
				      "    url: http://127.0.0.1:3100/loki/api/v1/push\n"
				      "sources:\n"
				      "  pubsub:\n"
				      "    topics: [/event/A, /event/B]\n"
				      "    transforms:\n"
				      "      - {action: drop_row, match: {type: login}}\n");
	g_autoptr(GPtrArray) none = sfl_config_diff(a, same);
	g_autoptr(GPtrArray) diff = sfl_config_diff(a, b);
	g_autoptr(GPtrArray) back = sfl_config_diff(b, a);

	g_assert_cmpuint(none->len, ==, 0);
	g_assert_true(diff_has(diff, "sources.pubsub.topics"));
	g_assert_true(diff_has(diff, "salesforce.private_key"));
	/* a list that grew: the old empty-list leaf and the new item's leaves */
	g_assert_true(diff_has(diff, "sources.pubsub.transforms"));
	g_assert_true(diff_has(diff, "sources.pubsub.transforms[0].match"));
	g_assert_false(diff_has(diff, "sink.loki.url"));
	g_assert_cmpuint(back->len, ==, diff->len);
}

static void
test_hash(void)
{
	g_autoptr(SflConfig) a = load(SFL_TEST_YAML_MINIMAL);
	g_autoptr(SflConfig) again = load(SFL_TEST_YAML_MINIMAL);
	g_autoptr(SflConfig) rotated = load("salesforce:\n"
					    "  client_id: cid\n"
					    "  username: integration@example.com\n"
					    "  private_key: another-key\n"
					    "sink:\n"
					    "  loki:\n"
					    "    url: http://127.0.0.1:3100/loki/api/v1/push\n");
	g_autoptr(SflConfig) other =
		load(SFL_TEST_YAML_MINIMAL "sources:\n  pubsub:\n    topics: [/event/A]\n");
	g_autofree gchar *ha = sfl_config_dup_hash(a);
	g_autofree gchar *hagain = sfl_config_dup_hash(again);
	g_autofree gchar *hrot = sfl_config_dup_hash(rotated);
	g_autofree gchar *hother = sfl_config_dup_hash(other);

	g_assert_cmpuint(strlen(ha), ==, 16);
	for (const gchar *p = ha; *p != '\0'; p++)
		g_assert_true(g_ascii_isdigit(*p) || (*p >= 'a' && *p <= 'f'));
	g_assert_cmpstr(ha, ==, hagain);
	/* secrets never reach the hash, which ends up in a metric */
	g_assert_cmpstr(ha, ==, hrot);
	g_assert_cmpstr(ha, !=, hother);
}

int
main(int argc, char **argv)
{
	int rc;
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/config/leaves/defaults", test_defaults_appear);
	g_test_add_func("/sfl/config/leaves/secret-redacted", test_secret_redacted);
	g_test_add_func("/sfl/config/leaves/types", test_types_rendered);
	g_test_add_func("/sfl/config/leaves/diff", test_diff);
	g_test_add_func("/sfl/config/leaves/hash", test_hash);
	rc = g_test_run();
	sfl_redact_clear_secrets();
	return rc;
}
