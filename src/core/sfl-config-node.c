/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

#include "sfl-config-node.h"

#include <jansson.h>
#include <string.h>
#include <yaml.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"

SflConfigNode *
sfl_config_node_new(SflConfigNodeKind kind, GRefString *origin)
{
	SflConfigNode *node = g_new0(SflConfigNode, 1);
	node->kind = kind;
	node->origin = origin != NULL ? g_ref_string_acquire(origin) : NULL;
	if (kind == SFL_CONFIG_NODE_SEQUENCE || kind == SFL_CONFIG_NODE_MAPPING)
		node->items = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_config_node_free);
	if (kind == SFL_CONFIG_NODE_MAPPING) {
		node->keys = g_ptr_array_new_with_free_func(g_free);
		node->key_pos = g_array_new(FALSE, TRUE, sizeof(SflConfigPos));
		node->index = g_hash_table_new(g_str_hash, g_str_equal);
	}
	return node;
}

SflConfigNode *
sfl_config_node_new_scalar(const gchar *text, gboolean quoted, GRefString *origin)
{
	SflConfigNode *node = sfl_config_node_new(SFL_CONFIG_NODE_SCALAR, origin);
	node->text = g_strdup(text);
	node->quoted = quoted;
	return node;
}

void
sfl_config_node_free(SflConfigNode *node)
{
	if (node == NULL)
		return;
	g_free(node->text);
	if (node->items != NULL)
		g_ptr_array_unref(node->items);
	if (node->keys != NULL)
		g_ptr_array_unref(node->keys);
	if (node->key_pos != NULL)
		g_array_unref(node->key_pos);
	if (node->index != NULL)
		g_hash_table_unref(node->index);
	if (node->origin != NULL)
		g_ref_string_release(node->origin);
	g_free(node);
}

/**
 * sfl_config_node_copy:
 * @node: a node
 *
 * Returns: (transfer full): a deep copy keeping positions and origins
 */
SflConfigNode *
sfl_config_node_copy(const SflConfigNode *node)
{
	SflConfigNode *copy = sfl_config_node_new(node->kind, node->origin);
	copy->text = g_strdup(node->text);
	copy->quoted = node->quoted;
	copy->from_yaml = node->from_yaml;
	copy->line = node->line;
	copy->column = node->column;
	if (node->items != NULL) {
		for (guint i = 0; i < node->items->len; i++)
			g_ptr_array_add(copy->items,
					sfl_config_node_copy(g_ptr_array_index(node->items, i)));
	}
	if (node->keys != NULL) {
		for (guint i = 0; i < node->keys->len; i++) {
			gchar *key = g_strdup(g_ptr_array_index(node->keys, i));
			g_ptr_array_add(copy->keys, key);
			g_hash_table_insert(copy->index, key, GUINT_TO_POINTER(i + 1));
		}
		g_array_append_vals(copy->key_pos, node->key_pos->data, node->key_pos->len);
	}
	return copy;
}

gboolean
sfl_config_node_is_null(const SflConfigNode *node)
{
	return node == NULL || node->kind == SFL_CONFIG_NODE_NULL;
}

/**
 * sfl_config_node_lookup:
 * @mapping: (nullable): a mapping node
 * @key: the key
 *
 * Returns: (transfer none) (nullable): the value node
 */
SflConfigNode *
sfl_config_node_lookup(const SflConfigNode *mapping, const gchar *key)
{
	guint pos;

	if (mapping == NULL || mapping->kind != SFL_CONFIG_NODE_MAPPING)
		return NULL;
	pos = GPOINTER_TO_UINT(g_hash_table_lookup(mapping->index, key));
	return pos > 0 ? g_ptr_array_index(mapping->items, pos - 1) : NULL;
}

static gint
sfl_config_node_index_of(const SflConfigNode *mapping, const gchar *key)
{
	return (gint)GPOINTER_TO_UINT(g_hash_table_lookup(mapping->index, key)) - 1;
}

/* after keys moved, the positions must be counted again */
static void
sfl_config_node_reindex(SflConfigNode *mapping)
{
	g_hash_table_remove_all(mapping->index);
	for (guint i = 0; i < mapping->keys->len; i++)
		g_hash_table_insert(mapping->index, g_ptr_array_index(mapping->keys, i),
				    GUINT_TO_POINTER(i + 1));
}

/* appends a key known to be new */
static void
sfl_config_node_append(SflConfigNode *mapping, gchar *key, SflConfigNode *value, SflConfigPos pos)
{
	g_ptr_array_add(mapping->keys, key);
	g_ptr_array_add(mapping->items, value);
	g_array_append_val(mapping->key_pos, pos);
	g_hash_table_insert(mapping->index, key, GUINT_TO_POINTER(mapping->keys->len));
}

/**
 * sfl_config_node_set:
 * @mapping: a mapping node
 * @key: the key
 * @value: (transfer full): the new value, replacing any existing one in place
 */
void
sfl_config_node_set(SflConfigNode *mapping, const gchar *key, SflConfigNode *value)
{
	SflConfigPos pos = { value->line, value->column };
	gint idx;

	g_return_if_fail(mapping->kind == SFL_CONFIG_NODE_MAPPING);
	idx = sfl_config_node_index_of(mapping, key);
	if (idx >= 0) {
		sfl_config_node_free(g_ptr_array_index(mapping->items, idx));
		g_ptr_array_index(mapping->items, idx) = value;
		g_array_index(mapping->key_pos, SflConfigPos, idx) = pos;
		return;
	}
	sfl_config_node_append(mapping, g_strdup(key), value, pos);
}

/**
 * sfl_config_node_merge:
 * @base: a mapping node, modified
 * @overlay: a mapping node whose leaves win
 *
 * Deep merge as the original does for environment overrides: mappings merge key by key,
 * anything else (scalars, lists) replaces the base value whole.
 */
void
sfl_config_node_merge(SflConfigNode *base, const SflConfigNode *overlay)
{
	g_return_if_fail(base->kind == SFL_CONFIG_NODE_MAPPING);
	g_return_if_fail(overlay->kind == SFL_CONFIG_NODE_MAPPING);

	for (guint i = 0; i < overlay->keys->len; i++) {
		const gchar *key = g_ptr_array_index(overlay->keys, i);
		const SflConfigNode *ov = g_ptr_array_index(overlay->items, i);
		SflConfigNode *cur = sfl_config_node_lookup(base, key);

		if (cur != NULL && cur->kind == SFL_CONFIG_NODE_MAPPING &&
		    ov->kind == SFL_CONFIG_NODE_MAPPING) {
			sfl_config_node_merge(cur, ov);
			continue;
		}
		sfl_config_node_set(base, key, sfl_config_node_copy(ov));
	}
}

static gchar *
sfl_config_node_where_pos(GRefString *origin, guint line, guint column)
{
	if (origin == NULL)
		return g_strdup("default");
	if (line == 0)
		return g_strdup(origin);
	return g_strdup_printf("%s:%u:%u", origin, line, column);
}

/**
 * sfl_config_node_where:
 * @node: (nullable): a node
 *
 * Returns: (transfer full): "file:line:column", "env NAME", or "default"
 */
gchar *
sfl_config_node_where(const SflConfigNode *node)
{
	if (node == NULL)
		return g_strdup("default");
	return sfl_config_node_where_pos(node->origin, node->line, node->column);
}

gchar *
sfl_config_node_where_key(const SflConfigNode *mapping, guint idx)
{
	SflConfigPos pos = g_array_index(mapping->key_pos, SflConfigPos, idx);
	return sfl_config_node_where_pos(mapping->origin, pos.line, pos.column);
}

/* --- YAML ------------------------------------------------------------------------------ */

typedef struct {
	SflConfigNode *node;
	gchar *pending_key; /* MAPPING: key read, value not yet */
	SflConfigPos pending_pos;
	gchar *anchor;
} SflYamlFrame;

typedef struct {
	GRefString *origin;
	GArray *stack; /* of SflYamlFrame */
	GHashTable *anchors;
	SflConfigNode *root;
	guint n_nodes;
	gboolean have_document;
} SflYamlBuilder;

static void
sfl_yaml_builder_clear(SflYamlBuilder *b)
{
	for (guint i = 0; i < b->stack->len; i++) {
		SflYamlFrame *f = &g_array_index(b->stack, SflYamlFrame, i);
		sfl_config_node_free(f->node);
		g_free(f->pending_key);
		g_free(f->anchor);
	}
	g_array_unref(b->stack);
	g_hash_table_unref(b->anchors);
	sfl_config_node_free(b->root);
	g_ref_string_release(b->origin);
}

static guint
sfl_config_node_count(const SflConfigNode *node)
{
	guint n = 1;
	if (node->items != NULL) {
		for (guint i = 0; i < node->items->len; i++)
			n += sfl_config_node_count(g_ptr_array_index(node->items, i));
	}
	return n;
}

/* the "<<" merge key pulls in an anchored mapping's entries that the mapping lacks */
static gboolean
sfl_yaml_apply_merge_key(SflConfigNode *mapping, GError **error)
{
	gint idx = sfl_config_node_index_of(mapping, "<<");
	g_autoptr(GPtrArray) sources = g_ptr_array_new();
	SflConfigNode *merge;

	if (idx < 0)
		return TRUE;
	merge = g_ptr_array_index(mapping->items, idx);
	if (merge->kind == SFL_CONFIG_NODE_MAPPING) {
		g_ptr_array_add(sources, merge);
	} else if (merge->kind == SFL_CONFIG_NODE_SEQUENCE) {
		for (guint i = 0; i < merge->items->len; i++)
			g_ptr_array_add(sources, g_ptr_array_index(merge->items, i));
	}
	for (guint s = 0; s < sources->len; s++) {
		SflConfigNode *src = g_ptr_array_index(sources, s);
		if (src->kind != SFL_CONFIG_NODE_MAPPING) {
			g_autofree gchar *where = sfl_config_node_where(merge);
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "%s: the '<<' merge key needs a mapping or a list of mappings",
				    where);
			return FALSE;
		}
	}
	/* take ownership of the merge value before the index shifts */
	merge = g_ptr_array_steal_index(mapping->items, idx);
	g_ptr_array_remove_index(mapping->keys, idx);
	g_array_remove_index(mapping->key_pos, idx);
	sfl_config_node_reindex(mapping);
	for (guint s = 0; s < sources->len; s++) {
		SflConfigNode *src = g_ptr_array_index(sources, s);
		for (guint i = 0; i < src->keys->len; i++) {
			const gchar *key = g_ptr_array_index(src->keys, i);
			if (sfl_config_node_lookup(mapping, key) != NULL)
				continue;
			sfl_config_node_set(mapping, key,
					    sfl_config_node_copy(g_ptr_array_index(src->items, i)));
		}
	}
	sfl_config_node_free(merge);
	return TRUE;
}

/* attach a finished node to its parent, or make it the root */
static gboolean
sfl_yaml_builder_attach(SflYamlBuilder *b, SflConfigNode *node, const gchar *anchor, GError **error)
{
	b->n_nodes += 1;
	if (b->n_nodes > SFL_CONFIG_MAX_NODES) {
		sfl_config_node_free(node);
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "%s: document has more than %u values (alias expansion?)", b->origin,
			    (guint)SFL_CONFIG_MAX_NODES);
		return FALSE;
	}
	if (anchor != NULL)
		g_hash_table_replace(b->anchors, g_strdup(anchor), sfl_config_node_copy(node));

	if (b->stack->len == 0) {
		if (b->root != NULL) {
			sfl_config_node_free(node);
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "%s: only one YAML document is allowed", b->origin);
			return FALSE;
		}
		b->root = node;
		return TRUE;
	}

	{
		SflYamlFrame *top = &g_array_index(b->stack, SflYamlFrame, b->stack->len - 1);
		if (top->node->kind == SFL_CONFIG_NODE_SEQUENCE) {
			g_ptr_array_add(top->node->items, node);
			return TRUE;
		}
		if (top->pending_key == NULL) {
			/* a key */
			if (node->kind != SFL_CONFIG_NODE_SCALAR) {
				g_autofree gchar *where = sfl_config_node_where(node);
				sfl_config_node_free(node);
				g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
					    "%s: mapping keys must be plain strings", where);
				return FALSE;
			}
			if (sfl_config_node_index_of(top->node, node->text) >= 0 &&
			    g_strcmp0(node->text, "<<") != 0) {
				g_autofree gchar *where = sfl_config_node_where(node);
				g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
					    "%s: duplicate key '%s'", where, node->text);
				sfl_config_node_free(node);
				return FALSE;
			}
			top->pending_key = g_steal_pointer(&node->text);
			top->pending_pos.line = node->line;
			top->pending_pos.column = node->column;
			sfl_config_node_free(node);
			return TRUE;
		}
		if (g_str_equal(top->pending_key, "<<") &&
		    sfl_config_node_index_of(top->node, "<<") >= 0) {
			/* a second merge key would silently shadow the first: ask for one list */
			g_autofree gchar *where = sfl_config_node_where(node);
			g_clear_pointer(&top->pending_key, g_free);
			sfl_config_node_free(node);
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "%s: use one '<<' key with a list of aliases", where);
			return FALSE;
		}
		sfl_config_node_append(top->node, g_steal_pointer(&top->pending_key), node,
				       top->pending_pos);
	}
	return TRUE;
}

static SflConfigNode *
sfl_yaml_scalar_node(SflYamlBuilder *b, const yaml_event_t *ev)
{
	const gchar *text = (const gchar *)ev->data.scalar.value;
	gboolean quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE &&
			  ev->data.scalar.style != YAML_ANY_SCALAR_STYLE;
	SflConfigNode *node;
	const gchar *tag = (const gchar *)ev->data.scalar.tag;

	if (tag != NULL && g_str_equal(tag, YAML_STR_TAG))
		quoted = TRUE;
	if (!quoted && (text[0] == '\0' || g_str_equal(text, "~") || g_str_equal(text, "null") ||
			g_str_equal(text, "Null") || g_str_equal(text, "NULL"))) {
		node = sfl_config_node_new(SFL_CONFIG_NODE_NULL, b->origin);
	} else {
		node = sfl_config_node_new_scalar(text, quoted, b->origin);
	}
	node->from_yaml = TRUE;
	node->line = ev->start_mark.line + 1;
	node->column = ev->start_mark.column + 1;
	return node;
}

static gboolean
sfl_yaml_builder_event(SflYamlBuilder *b, const yaml_event_t *ev, GError **error)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->have_document) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "%s:%zu: only one YAML document is allowed", b->origin,
				    ev->start_mark.line + 1);
			return FALSE;
		}
		b->have_document = TRUE;
		return TRUE;
	case YAML_SCALAR_EVENT: {
		SflConfigNode *node = sfl_yaml_scalar_node(b, ev);
		return sfl_yaml_builder_attach(b, node, (const gchar *)ev->data.scalar.anchor,
					       error);
	}
	case YAML_ALIAS_EVENT: {
		const gchar *name = (const gchar *)ev->data.alias.anchor;
		SflConfigNode *target = g_hash_table_lookup(b->anchors, name);
		SflConfigNode *copy;
		if (target == NULL) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "%s:%zu:%zu: unknown alias '*%s'", b->origin,
				    ev->start_mark.line + 1, ev->start_mark.column + 1, name);
			return FALSE;
		}
		b->n_nodes += sfl_config_node_count(target);
		if (b->n_nodes > SFL_CONFIG_MAX_NODES) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "%s: document has more than %u values (alias expansion?)",
				    b->origin, (guint)SFL_CONFIG_MAX_NODES);
			return FALSE;
		}
		copy = sfl_config_node_copy(target);
		return sfl_yaml_builder_attach(b, copy, NULL, error);
	}
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		SflYamlFrame frame = { 0 };
		gboolean is_map = ev->type == YAML_MAPPING_START_EVENT;
		const yaml_char_t *anchor =
			is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
		if (b->stack->len >= SFL_CONFIG_MAX_DEPTH) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "%s:%zu:%zu: nesting deeper than %u levels", b->origin,
				    ev->start_mark.line + 1, ev->start_mark.column + 1,
				    (guint)SFL_CONFIG_MAX_DEPTH);
			return FALSE;
		}
		frame.node = sfl_config_node_new(
			is_map ? SFL_CONFIG_NODE_MAPPING : SFL_CONFIG_NODE_SEQUENCE, b->origin);
		frame.node->from_yaml = TRUE;
		frame.node->line = ev->start_mark.line + 1;
		frame.node->column = ev->start_mark.column + 1;
		frame.anchor = g_strdup((const gchar *)anchor);
		g_array_append_val(b->stack, frame);
		return TRUE;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: {
		SflYamlFrame frame = g_array_index(b->stack, SflYamlFrame, b->stack->len - 1);
		g_autofree gchar *anchor = frame.anchor;
		g_array_set_size(b->stack, b->stack->len - 1);
		g_free(frame.pending_key);
		if (frame.node->kind == SFL_CONFIG_NODE_MAPPING &&
		    !sfl_yaml_apply_merge_key(frame.node, error)) {
			sfl_config_node_free(frame.node);
			return FALSE;
		}
		return sfl_yaml_builder_attach(b, frame.node, anchor, error);
	}
	default:
		return TRUE;
	}
}

/**
 * sfl_config_node_from_yaml:
 * @data: the document
 * @len: its length in bytes
 * @origin: a name for error messages, usually the file path
 * @error: return location for an error
 *
 * Returns: (transfer full): the root node; an empty document gives an empty mapping
 */
SflConfigNode *
sfl_config_node_from_yaml(const gchar *data, gsize len, const gchar *origin, GError **error)
{
	g_auto(yaml_parser_t) parser = { 0 };
	SflYamlBuilder b = { 0 };
	gboolean done = FALSE;
	gboolean ok = TRUE;

	g_return_val_if_fail(data != NULL || len == 0, NULL);
	g_return_val_if_fail(origin != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (len > SFL_CONFIG_MAX_DOCUMENT_BYTES) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "%s: document is larger than %u bytes", origin,
			    (guint)SFL_CONFIG_MAX_DOCUMENT_BYTES);
		return NULL;
	}
	if (!yaml_parser_initialize(&parser)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "cannot initialise YAML parser");
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)(data ? data : ""), len);

	b.origin = g_ref_string_new(origin);
	b.stack = g_array_new(FALSE, TRUE, sizeof(SflYamlFrame));
	b.anchors = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					  (GDestroyNotify)sfl_config_node_free);

	while (!done && ok) {
		g_auto(yaml_event_t) ev = { 0 };
		if (!yaml_parser_parse(&parser, &ev)) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "%s:%zu:%zu: invalid YAML: %s%s%s", origin,
				    parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				    parser.problem != NULL ? parser.problem : "syntax error",
				    parser.context != NULL ? " " : "",
				    parser.context != NULL ? parser.context : "");
			ok = FALSE;
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		ok = sfl_yaml_builder_event(&b, &ev, error);
	}

	if (ok) {
		SflConfigNode *root = g_steal_pointer(&b.root);
		if (root == NULL)
			root = sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, b.origin);
		else if (root->kind == SFL_CONFIG_NODE_NULL) {
			sfl_config_node_free(root);
			root = sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, b.origin);
		}
		sfl_yaml_builder_clear(&b);
		return root;
	}
	sfl_yaml_builder_clear(&b);
	return NULL;
}

/* --- JSON (environment values) ------------------------------------------------------------ */

static SflConfigNode *
sfl_config_node_from_json_value(json_t *value, GRefString *origin)
{
	SflConfigNode *node = NULL;

	switch (json_typeof(value)) {
	case JSON_OBJECT: {
		const gchar *key;
		json_t *member;
		node = sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, origin);
		json_object_foreach (value, key, member) {
			sfl_config_node_set(node, key,
					    sfl_config_node_from_json_value(member, origin));
		}
		break;
	}
	case JSON_ARRAY: {
		gsize i;
		json_t *member;
		node = sfl_config_node_new(SFL_CONFIG_NODE_SEQUENCE, origin);
		json_array_foreach (value, i, member)
			g_ptr_array_add(node->items,
					sfl_config_node_from_json_value(member, origin));
		break;
	}
	case JSON_STRING:
		node = sfl_config_node_new_scalar(json_string_value(value), TRUE, origin);
		break;
	case JSON_INTEGER: {
		g_autofree gchar *text =
			g_strdup_printf("%" G_GINT64_FORMAT, (gint64)json_integer_value(value));
		node = sfl_config_node_new_scalar(text, FALSE, origin);
		break;
	}
	case JSON_REAL: {
		gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
		node = sfl_config_node_new_scalar(
			g_ascii_dtostr(buf, sizeof(buf), json_real_value(value)), FALSE, origin);
		break;
	}
	case JSON_TRUE:
		node = sfl_config_node_new_scalar("true", FALSE, origin);
		break;
	case JSON_FALSE:
		node = sfl_config_node_new_scalar("false", FALSE, origin);
		break;
	case JSON_NULL:
	default:
		node = sfl_config_node_new(SFL_CONFIG_NODE_NULL, origin);
		break;
	}
	return node;
}

/**
 * sfl_config_node_from_json:
 * @text: a JSON document (any value, not only objects)
 * @origin: a name for error messages, e.g. "env SF2LOKI_SOURCES__PUBSUB__TOPICS"
 * @error: return location for an error
 *
 * Returns: (transfer full): the node
 */
SflConfigNode *
sfl_config_node_from_json(const gchar *text, const gchar *origin, GError **error)
{
	json_error_t jerr = { 0 };
	g_autoptr(json_t) value = NULL;
	g_autoptr(GRefString) ref = NULL;

	g_return_val_if_fail(text != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	value = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (value == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "%s: invalid JSON at character %d: %s", origin, jerr.position,
			    jerr.text);
		return NULL;
	}
	ref = g_ref_string_new(origin);
	return sfl_config_node_from_json_value(value, ref);
}
