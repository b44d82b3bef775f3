/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflStateDoc"

#include "config.h"

#include "sfl-state-doc.h"

#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-pyjson.h"

struct _SflStateDoc {
	GPtrArray *keys;    /* insertion order, owns the strings */
	GHashTable *values; /* key (borrowed from keys) → value (owned) */
};

SflStateDoc *
sfl_state_doc_new(void)
{
	SflStateDoc *doc = g_new0(SflStateDoc, 1);
	doc->keys = g_ptr_array_new_with_free_func(g_free);
	doc->values = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	return doc;
}

void
sfl_state_doc_free(SflStateDoc *doc)
{
	if (doc == NULL)
		return;
	g_hash_table_unref(doc->values);
	g_ptr_array_unref(doc->keys);
	g_free(doc);
}

/**
 * sfl_state_doc_copy:
 * @doc: a document
 *
 * Returns: (transfer full): an independent copy in the same key order
 */
SflStateDoc *
sfl_state_doc_copy(const SflStateDoc *doc)
{
	SflStateDoc *copy = sfl_state_doc_new();
	for (guint i = 0; i < doc->keys->len; i++) {
		const gchar *key = g_ptr_array_index(doc->keys, i);
		sfl_state_doc_set(copy, key, g_hash_table_lookup(doc->values, key));
	}
	return copy;
}

/**
 * sfl_state_doc_get:
 * @doc: a document
 * @key: the key
 *
 * Returns: (transfer none) (nullable): the value
 */
const gchar *
sfl_state_doc_get(const SflStateDoc *doc, const gchar *key)
{
	return g_hash_table_lookup(doc->values, key);
}

/* a new key goes last; an existing key keeps its place, as a Python dict does */
void
sfl_state_doc_set(SflStateDoc *doc, const gchar *key, const gchar *value)
{
	gchar *stored_key;

	g_return_if_fail(key != NULL && value != NULL);
	g_return_if_fail(g_utf8_validate(key, -1, NULL) && g_utf8_validate(value, -1, NULL));

	if (g_hash_table_lookup_extended(doc->values, key, (gpointer *)&stored_key, NULL)) {
		g_hash_table_insert(doc->values, stored_key, g_strdup(value));
		return;
	}
	stored_key = g_strdup(key);
	g_ptr_array_add(doc->keys, stored_key);
	g_hash_table_insert(doc->values, stored_key, g_strdup(value));
}

gboolean
sfl_state_doc_remove(SflStateDoc *doc, const gchar *key)
{
	for (guint i = 0; i < doc->keys->len; i++) {
		if (g_str_equal(g_ptr_array_index(doc->keys, i), key)) {
			g_hash_table_remove(doc->values, key);
			g_ptr_array_remove_index(doc->keys, i);
			return TRUE;
		}
	}
	return FALSE;
}

guint
sfl_state_doc_size(const SflStateDoc *doc)
{
	return doc->keys->len;
}

const gchar *
sfl_state_doc_key_at(const SflStateDoc *doc, guint idx)
{
	g_return_val_if_fail(idx < doc->keys->len, NULL);
	return g_ptr_array_index(doc->keys, idx);
}

/* same pairs, whatever the order */
gboolean
sfl_state_doc_equal(const SflStateDoc *a, const SflStateDoc *b)
{
	if (a->keys->len != b->keys->len)
		return FALSE;
	for (guint i = 0; i < a->keys->len; i++) {
		const gchar *key = g_ptr_array_index(a->keys, i);
		if (g_strcmp0(sfl_state_doc_get(a, key), sfl_state_doc_get(b, key)) != 0)
			return FALSE;
	}
	return TRUE;
}

gboolean
sfl_state_key_is_reserved(const gchar *key)
{
	gsize len = strlen(key);
	return (len > 4 && g_str_has_prefix(key, "__") && g_str_has_suffix(key, "__")) ||
	       g_str_has_prefix(key, SFL_STATE_KEY_UNIT_EPOCH_PREFIX);
}

gchar *
sfl_state_epoch_key(const gchar *unit)
{
	return unit != NULL ? g_strconcat(SFL_STATE_KEY_UNIT_EPOCH_PREFIX, unit, NULL)
			    : g_strdup(SFL_STATE_KEY_FENCE_EPOCH);
}

/**
 * sfl_state_doc_get_epoch:
 * @doc: a document
 * @epoch: (out): the recorded fence epoch
 * @error: return location for an error
 *
 * Returns: %TRUE with @epoch set when the fence key is present; %FALSE with no error when it
 * is absent; %FALSE with %SFL_ERROR_CORRUPT when it is not a decimal integer
 */
gboolean
sfl_state_doc_get_epoch(const SflStateDoc *doc, guint64 *epoch, GError **error)
{
	return sfl_state_doc_get_unit_epoch(doc, NULL, epoch, error);
}

/**
 * sfl_state_doc_get_unit_epoch:
 * @doc: a document
 * @unit: (nullable): a work unit, %NULL for the store's own epoch
 * @epoch: (out): the recorded fence epoch
 * @error: return location for an error
 *
 * Returns: %TRUE with @epoch set when the fence key is present; %FALSE with no error when it
 * is absent; %FALSE with %SFL_ERROR_CORRUPT when it is not a decimal integer
 */
gboolean
sfl_state_doc_get_unit_epoch(const SflStateDoc *doc, const gchar *unit, guint64 *epoch,
			     GError **error)
{
	g_autofree gchar *key = sfl_state_epoch_key(unit);
	const gchar *text = sfl_state_doc_get(doc, key);
	g_autoptr(GError) local = NULL;

	if (text == NULL)
		return FALSE;
	if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, epoch, &local)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
			    "%s is '%s', not a decimal integer (repair it with `sf2loki state set "
			    "%s N --force`)",
			    key, text, key);
		return FALSE;
	}
	return TRUE;
}

static const gchar *
sfl_state_json_type_name(json_t *value)
{
	switch (json_typeof(value)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
	default:
		return "null";
	}
}

/**
 * sfl_state_doc_parse:
 * @data: the bytes read from storage
 * @len: their length
 * @origin: where they came from, for messages
 * @error: return location for an error
 *
 * Anything but a JSON object of strings is %SFL_ERROR_CORRUPT with the byte offset; the caller
 * must never replace such a document with an empty one.
 *
 * Returns: (transfer full): the document
 */
SflStateDoc *
sfl_state_doc_parse(const gchar *data, gsize len, const gchar *origin, GError **error)
{
	json_error_t jerr = { 0 };
	g_autoptr(json_t) root = NULL;
	g_autoptr(SflStateDoc) doc = NULL;
	const gchar *key;
	json_t *value;

	g_return_val_if_fail(data != NULL || len == 0, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	root = json_loadb(data, len, JSON_DECODE_ANY, &jerr);
	if (root == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
			    "%s is corrupt: invalid JSON at byte %d (line %d, column %d): %s",
			    origin, jerr.position, jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
			    "%s is corrupt: the document is %s, not a JSON object", origin,
			    sfl_state_json_type_name(root));
		return NULL;
	}
	doc = sfl_state_doc_new();
	json_object_foreach (root, key, value) {
		if (!json_is_string(value)) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
				    "%s is corrupt: the value of key '%s' is %s, not a string",
				    origin, key, sfl_state_json_type_name(value));
			return NULL;
		}
		if (memchr(json_string_value(value), '\0', json_string_length(value)) != NULL) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
				    "%s is corrupt: the value of key '%s' contains a NUL", origin,
				    key);
			return NULL;
		}
		sfl_state_doc_set(doc, key, json_string_value(value));
	}
	return g_steal_pointer(&doc);
}

/**
 * sfl_state_doc_serialize:
 * @doc: a document
 * @len: (out) (optional): the length of the text
 *
 * Returns: (transfer full): the JSON text, as the Python original writes it
 */
gchar *
sfl_state_doc_serialize(const SflStateDoc *doc, gsize *len)
{
	GString *out = g_string_sized_new(64 + doc->keys->len * 64);

	g_string_append_c(out, '{');
	for (guint i = 0; i < doc->keys->len; i++) {
		const gchar *key = g_ptr_array_index(doc->keys, i);
		if (i > 0)
			g_string_append(out, ", ");
		sfl_pyjson_append_string(out, key);
		g_string_append(out, ": ");
		sfl_pyjson_append_string(out, g_hash_table_lookup(doc->values, key));
	}
	g_string_append_c(out, '}');
	if (len != NULL)
		*len = out->len;
	return g_string_free(out, FALSE);
}
