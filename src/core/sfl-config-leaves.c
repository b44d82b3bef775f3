/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

#include "sfl-config-leaves.h"

#include "sfl-log.h"

#include <string.h>

#define SFL_LEAF_REDACTED "<redacted>"

void
sfl_config_leaf_free(SflConfigLeaf *leaf)
{
	if (leaf == NULL)
		return;
	g_free(leaf->path);
	g_free(leaf->value);
	g_free(leaf->digest);
	g_free(leaf);
}

static gpointer
sfl_leaf_member(gconstpointer obj, const SflConfigField *field)
{
	return (guint8 *)obj + field->offset;
}

static void
sfl_leaf_append_double(GString *out, gdouble v)
{
	gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
	g_string_append(out, g_ascii_dtostr(buf, sizeof(buf), v));
}

static void
sfl_leaf_add(GPtrArray *leaves, const SflConfigField *field, const gchar *path, gchar *value,
	     gchar *digest)
{
	SflConfigLeaf *leaf = g_new0(SflConfigLeaf, 1);
	leaf->path = g_strdup(path);
	leaf->value = value;
	leaf->digest = digest;
	leaf->field = field;
	g_ptr_array_add(leaves, leaf);
}

static gchar *
sfl_leaf_scalar_text(const SflConfigField *f, gconstpointer member, gchar **digest)
{
	g_autoptr(GString) out = g_string_new(NULL);

	switch (f->type) {
	case SFL_CONFIG_TYPE_BOOL:
		g_string_append(out, *(const gboolean *)member ? "true" : "false");
		break;
	case SFL_CONFIG_TYPE_INT:
	case SFL_CONFIG_TYPE_SIZE:
		g_string_append_printf(out, "%" G_GINT64_FORMAT, *(const gint64 *)member);
		break;
	case SFL_CONFIG_TYPE_FLOAT:
		sfl_leaf_append_double(out, *(const gdouble *)member);
		break;
	case SFL_CONFIG_TYPE_DURATION: {
		SflDuration d = *(const SflDuration *)member;
		if (d == SFL_DURATION_UNSET && (f->flags & SFL_CONFIG_FIELD_NULLABLE)) {
			g_string_append(out, "null");
		} else {
			g_autofree gchar *text = sfl_duration_format(d);
			g_string_append(out, text);
		}
		break;
	}
	case SFL_CONFIG_TYPE_STRING:
	case SFL_CONFIG_TYPE_PATH: {
		const gchar *s = *(gchar *const *)member;
		if (s == NULL)
			g_string_append(out, "null");
		else
			sfl_log_append_quoted(out, s);
		break;
	}
	case SFL_CONFIG_TYPE_SECRET: {
		const gchar *s = *(gchar *const *)member;
		if (s == NULL) {
			g_string_append(out, "null");
		} else {
			/* a digest, never the value, so a rotation is visible without leaking it */
			*digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, s, -1);
			g_string_append(out, SFL_LEAF_REDACTED);
		}
		break;
	}
	case SFL_CONFIG_TYPE_ENUM: {
		gint idx = *(const gint *)member;
		guint n = g_strv_length((gchar **)f->choices);
		if (idx >= 0 && (guint)idx < n)
			g_string_append(out, f->choices[idx]);
		else
			g_string_append_printf(out, "%d", idx);
		break;
	}
	case SFL_CONFIG_TYPE_STRING_LIST: {
		gchar *const *list = *(gchar * *const *)member;
		if (list == NULL) {
			g_string_append(out, "null");
			break;
		}
		g_string_append_c(out, '[');
		for (guint i = 0; list[i] != NULL; i++) {
			if (i > 0)
				g_string_append(out, ", ");
			sfl_log_append_quoted(out, list[i]);
		}
		g_string_append_c(out, ']');
		break;
	}
	case SFL_CONFIG_TYPE_STRING_MAP:
	case SFL_CONFIG_TYPE_FLOAT_MAP: {
		GPtrArray *map = *(GPtrArray *const *)member;
		g_string_append_c(out, '{');
		for (guint i = 0; map != NULL && i < map->len; i++) {
			const SflConfigPair *pair = g_ptr_array_index(map, i);
			if (i > 0)
				g_string_append(out, ", ");
			sfl_log_append_quoted(out, pair->key);
			g_string_append(out, ": ");
			if (f->type == SFL_CONFIG_TYPE_FLOAT_MAP)
				sfl_leaf_append_double(out, pair->number);
			else
				sfl_log_append_quoted(out, pair->value);
		}
		g_string_append_c(out, '}');
		break;
	}
	default:
		g_assert_not_reached();
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

static void sfl_leaves_walk(GPtrArray *leaves, const SflConfigSchema *schema, gconstpointer obj,
			    const gchar *path);

static void
sfl_leaves_field(GPtrArray *leaves, const SflConfigField *f, gconstpointer obj, const gchar *path)
{
	gconstpointer member = sfl_leaf_member(obj, f);
	g_autofree gchar *fpath = sfl_config_path_join(path, f->key);

	switch (f->type) {
	case SFL_CONFIG_TYPE_OBJECT:
		if (f->flags & SFL_CONFIG_FIELD_NULLABLE) {
			gconstpointer sub = *(gconstpointer const *)member;
			if (sub == NULL)
				sfl_leaf_add(leaves, f, fpath, g_strdup("null"), NULL);
			else
				sfl_leaves_walk(leaves, f->schema, sub, fpath);
		} else {
			sfl_leaves_walk(leaves, f->schema, member, fpath);
		}
		break;
	case SFL_CONFIG_TYPE_OBJECT_LIST: {
		GPtrArray *list = *(GPtrArray *const *)member;
		/* an empty list is a leaf of its own, so emptying a list is a change too */
		if (list == NULL || list->len == 0) {
			sfl_leaf_add(leaves, f, fpath, g_strdup("[]"), NULL);
			break;
		}
		for (guint i = 0; i < list->len; i++) {
			g_autofree gchar *ipath = g_strdup_printf("%s[%u]", fpath, i);
			sfl_leaves_walk(leaves, f->schema, g_ptr_array_index(list, i), ipath);
		}
		break;
	}
	default: {
		gchar *digest = NULL;
		gchar *value = sfl_leaf_scalar_text(f, member, &digest);
		sfl_leaf_add(leaves, f, fpath, value, digest);
		break;
	}
	}
}

static void
sfl_leaves_walk(GPtrArray *leaves, const SflConfigSchema *schema, gconstpointer obj,
		const gchar *path)
{
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++)
		sfl_leaves_field(leaves, f, obj, path);
}

/**
 * sfl_config_leaves:
 * @config: a loaded configuration
 *
 * Returns: (transfer full) (element-type SflConfigLeaf): every leaf, in table order
 */
GPtrArray *
sfl_config_leaves(const SflConfig *config)
{
	GPtrArray *leaves = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_config_leaf_free);

	g_return_val_if_fail(config != NULL, leaves);
	sfl_leaves_walk(leaves, &sfl_config_root_schema, &config->data, "");
	return leaves;
}

static GHashTable *
sfl_leaves_index(GPtrArray *leaves)
{
	GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; i < leaves->len; i++) {
		SflConfigLeaf *leaf = g_ptr_array_index(leaves, i);
		g_hash_table_insert(index, leaf->path, leaf);
	}
	return index;
}

static gboolean
sfl_leaf_equal(const SflConfigLeaf *a, const SflConfigLeaf *b)
{
	return g_str_equal(a->value, b->value) && g_strcmp0(a->digest, b->digest) == 0;
}

/**
 * sfl_config_diff:
 * @old: the running configuration
 * @new_config: the candidate
 *
 * Returns: (transfer full) (element-type utf8): the changed paths, @old's order first, then
 * the paths only @new_config has
 */
GPtrArray *
sfl_config_diff(const SflConfig *old, const SflConfig *new_config)
{
	g_autoptr(GPtrArray) a = sfl_config_leaves(old);
	g_autoptr(GPtrArray) b = sfl_config_leaves(new_config);
	g_autoptr(GHashTable) ia = sfl_leaves_index(a);
	g_autoptr(GHashTable) ib = sfl_leaves_index(b);
	GPtrArray *changed = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < a->len; i++) {
		const SflConfigLeaf *leaf = g_ptr_array_index(a, i);
		const SflConfigLeaf *other = g_hash_table_lookup(ib, leaf->path);
		if (other == NULL || !sfl_leaf_equal(leaf, other))
			g_ptr_array_add(changed, g_strdup(leaf->path));
	}
	for (guint i = 0; i < b->len; i++) {
		const SflConfigLeaf *leaf = g_ptr_array_index(b, i);
		if (!g_hash_table_contains(ia, leaf->path))
			g_ptr_array_add(changed, g_strdup(leaf->path));
	}
	return changed;
}

/**
 * sfl_config_dup_hash:
 * @config: a loaded configuration
 *
 * Returns: (transfer full): 16 lowercase hex characters of a SHA-256 over the non-secret
 * leaves
 */
gchar *
sfl_config_dup_hash(const SflConfig *config)
{
	g_autoptr(GPtrArray) leaves = sfl_config_leaves(config);
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);

	for (guint i = 0; i < leaves->len; i++) {
		const SflConfigLeaf *leaf = g_ptr_array_index(leaves, i);
		if (leaf->field->type == SFL_CONFIG_TYPE_SECRET)
			continue;
		/* NUL separators: no path/value pair can be spelled two ways */
		g_checksum_update(sum, (const guchar *)leaf->path, strlen(leaf->path) + 1);
		g_checksum_update(sum, (const guchar *)leaf->value, strlen(leaf->value) + 1);
	}
	return g_strndup(g_checksum_get_string(sum), 16);
}

/* "name[2][0]" → "name", with the indices appended to @indices */
static gchar *
sfl_origin_segment(const gchar *segment, GArray *indices)
{
	const gchar *bracket = strchr(segment, '[');
	const gchar *p = bracket;

	g_array_set_size(indices, 0);
	if (bracket == NULL)
		return g_strdup(segment);
	while (p != NULL && *p == '[') {
		guint64 idx = g_ascii_strtoull(p + 1, NULL, 10);
		guint v = (guint)idx;
		g_array_append_val(indices, v);
		p = strchr(p, ']');
		p = p != NULL ? p + 1 : NULL;
	}
	return g_strndup(segment, bracket - segment);
}

static gchar *
sfl_origin_of_node(const SflConfigNode *node)
{
	const gchar *origin = node->origin;

	if (origin == NULL)
		return g_strdup("default");
	if (g_str_has_prefix(origin, "env "))
		return g_strdup_printf("env:%s", origin + strlen("env "));
	if (g_str_has_prefix(origin, "gsettings:"))
		return g_strdup(origin);
	if (node->line == 0)
		return g_strdup_printf("file:%s", origin);
	return g_strdup_printf("file:%s:%u", origin, node->line);
}

/**
 * sfl_config_dup_origin:
 * @config: a loaded configuration
 * @path: a leaf's path
 *
 * Returns: (transfer full): which layer gave the leaf its value
 */
gchar *
sfl_config_dup_origin(const SflConfig *config, const gchar *path)
{
	g_auto(GStrv) segments = g_strsplit(path, ".", -1);
	g_autoptr(GArray) indices = g_array_new(FALSE, FALSE, sizeof(guint));
	const SflConfigNode *node = config->root;

	for (guint i = 0; node != NULL && segments[i] != NULL; i++) {
		g_autofree gchar *key = sfl_origin_segment(segments[i], indices);
		if (node->kind != SFL_CONFIG_NODE_MAPPING)
			/* a whole value set above the leaf (a bare scalar list item, a JSON list)
			 */
			return sfl_origin_of_node(node);
		node = sfl_config_node_lookup(node, key);
		for (guint j = 0; node != NULL && j < indices->len; j++) {
			guint idx = g_array_index(indices, guint, j);
			if (node->kind != SFL_CONFIG_NODE_SEQUENCE || idx >= node->items->len)
				return sfl_origin_of_node(node);
			node = g_ptr_array_index(node->items, idx);
		}
	}
	return node != NULL ? sfl_origin_of_node(node) : g_strdup("default");
}
