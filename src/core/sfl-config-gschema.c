/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

#include <math.h>
#include <string.h>

#include "sfl-config-gsettings.h"
#include "sfl-config.h"

/*
 * data/org.sf2loki.gschema.xml is rendered from the schema tables like config.example.yaml,
 * so GSettings cannot offer a key the loader does not know; a unit test compares the
 * committed file with this output and another compiles it with --strict.
 */

gchar *
sfl_config_gsettings_name(const gchar *key)
{
	gchar *name = g_strdup(key);
	g_strdelimit(name, "_", '-');
	return name;
}

const gchar *
sfl_config_gsettings_type(const SflConfigField *f)
{
	gboolean nullable = (f->flags & SFL_CONFIG_FIELD_NULLABLE) != 0;

	switch (f->type) {
	case SFL_CONFIG_TYPE_BOOL:
		return "b";
	case SFL_CONFIG_TYPE_INT:
		return "x";
	case SFL_CONFIG_TYPE_FLOAT:
		return "d";
	case SFL_CONFIG_TYPE_DURATION:
	case SFL_CONFIG_TYPE_STRING:
	case SFL_CONFIG_TYPE_PATH:
		/* a computed default (the state directory) is "nothing" too: the loader knows it */
		return nullable || f->def_state_file != NULL ? "ms" : "s";
	case SFL_CONFIG_TYPE_SIZE:
	case SFL_CONFIG_TYPE_ENUM:
		return "s";
	case SFL_CONFIG_TYPE_STRING_LIST:
		return nullable ? "mas" : "as";
	case SFL_CONFIG_TYPE_STRING_MAP:
		return "a{ss}";
	case SFL_CONFIG_TYPE_FLOAT_MAP:
		return "a{sd}";
	case SFL_CONFIG_TYPE_OBJECT_LIST:
		return "aa{sv}";
	case SFL_CONFIG_TYPE_SECRET:
	case SFL_CONFIG_TYPE_OBJECT:
		return NULL;
	}
	return NULL;
}

static gboolean
sfl_gschema_parse_bool(const gchar *text, gboolean *out)
{
	static const gchar *const yes[] = { "true", "yes", "on", NULL };
	static const gchar *const no[] = { "false", "no", "off", NULL };
	for (guint i = 0; yes[i] != NULL; i++) {
		if (g_ascii_strcasecmp(text, yes[i]) == 0) {
			*out = TRUE;
			return TRUE;
		}
		if (g_ascii_strcasecmp(text, no[i]) == 0) {
			*out = FALSE;
			return TRUE;
		}
	}
	return FALSE;
}

static gboolean
sfl_gschema_parse_int(const gchar *text, gint64 *out)
{
	return g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, out, NULL);
}

static gboolean
sfl_gschema_parse_double(const gchar *text, gdouble *out)
{
	gchar *end = NULL;
	if (*text == '\0')
		return FALSE;
	*out = g_ascii_strtod(text, &end);
	return end != NULL && *end == '\0' && isfinite(*out);
}

/* a value of unknown type inside an a{sv}: what the YAML scalar would mean */
static GVariant *
sfl_gschema_guess(const SflConfigNode *node)
{
	switch (node->kind) {
	case SFL_CONFIG_NODE_NULL:
		return g_variant_new_maybe(G_VARIANT_TYPE_STRING, NULL);
	case SFL_CONFIG_NODE_SCALAR: {
		gboolean b;
		gint64 x;
		gdouble d;
		if (!node->quoted && sfl_gschema_parse_bool(node->text, &b))
			return g_variant_new_boolean(b);
		if (!node->quoted && sfl_gschema_parse_int(node->text, &x))
			return g_variant_new_int64(x);
		if (!node->quoted && sfl_gschema_parse_double(node->text, &d))
			return g_variant_new_double(d);
		return g_variant_new_string(node->text);
	}
	case SFL_CONFIG_NODE_SEQUENCE: {
		gboolean scalars = TRUE, mappings = TRUE;
		for (guint i = 0; i < node->items->len; i++) {
			const SflConfigNode *item = g_ptr_array_index(node->items, i);
			scalars = scalars && item->kind == SFL_CONFIG_NODE_SCALAR;
			mappings = mappings && item->kind == SFL_CONFIG_NODE_MAPPING;
		}
		if (scalars)
			return sfl_config_gsettings_from_node(node, "as");
		if (mappings)
			return sfl_config_gsettings_from_node(node, "aa{sv}");
		return sfl_config_gsettings_from_node(node, "av");
	}
	case SFL_CONFIG_NODE_MAPPING:
		return sfl_config_gsettings_from_node(node, "a{sv}");
	}
	return NULL;
}

/**
 * sfl_config_gsettings_from_node:
 * @node: a YAML node
 * @type_string: the GVariant type wanted
 *
 * Returns: (transfer floating) (nullable): the value, or %NULL when @node does not fit
 */
GVariant *
sfl_config_gsettings_from_node(const SflConfigNode *node, const gchar *type_string)
{
	const gchar *t = type_string;

	if (t[0] == 'm') {
		GVariant *inner;
		if (node == NULL || node->kind == SFL_CONFIG_NODE_NULL)
			return g_variant_new_maybe(G_VARIANT_TYPE(t + 1), NULL);
		inner = sfl_config_gsettings_from_node(node, t + 1);
		return inner != NULL ? g_variant_new_maybe(NULL, inner) : NULL;
	}
	if (node == NULL)
		return NULL;
	if (g_str_equal(t, "v")) {
		GVariant *inner = sfl_gschema_guess(node);
		return inner != NULL ? g_variant_new_variant(inner) : NULL;
	}
	if (t[0] == 'a' && t[1] == '{') {
		g_autofree gchar *value_type = g_strndup(t + 3, strlen(t) - 4);
		g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE(t));
		if (node->kind != SFL_CONFIG_NODE_MAPPING)
			return NULL;
		for (guint i = 0; i < node->keys->len; i++) {
			GVariant *v = sfl_config_gsettings_from_node(
				g_ptr_array_index(node->items, i), value_type);
			if (v == NULL)
				return NULL;
			g_variant_builder_add(&b, "{s@*}", g_ptr_array_index(node->keys, i), v);
		}
		return g_variant_builder_end(&b);
	}
	if (t[0] == 'a') {
		g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE(t));
		if (node->kind != SFL_CONFIG_NODE_SEQUENCE)
			return NULL;
		for (guint i = 0; i < node->items->len; i++) {
			GVariant *v = sfl_config_gsettings_from_node(
				g_ptr_array_index(node->items, i), t + 1);
			if (v == NULL)
				return NULL;
			g_variant_builder_add_value(&b, v);
		}
		return g_variant_builder_end(&b);
	}
	if (node->kind != SFL_CONFIG_NODE_SCALAR)
		return NULL;
	switch (t[0]) {
	case 'b': {
		gboolean v;
		return sfl_gschema_parse_bool(node->text, &v) ? g_variant_new_boolean(v) : NULL;
	}
	case 'x': {
		gint64 v;
		return sfl_gschema_parse_int(node->text, &v) ? g_variant_new_int64(v) : NULL;
	}
	case 'd': {
		gdouble v;
		return sfl_gschema_parse_double(node->text, &v) ? g_variant_new_double(v) : NULL;
	}
	case 's':
		return g_variant_new_string(node->text);
	default:
		return NULL;
	}
}

/* the zero value a field without a default takes, as the key's type */
static GVariant *
sfl_gschema_zero(const SflConfigField *f, const gchar *type)
{
	if (type[0] == 'm')
		return g_variant_new_maybe(G_VARIANT_TYPE(type + 1), NULL);
	switch (f->type) {
	case SFL_CONFIG_TYPE_BOOL:
		return g_variant_new_boolean(FALSE);
	case SFL_CONFIG_TYPE_INT:
		return g_variant_new_int64(f->flags & SFL_CONFIG_FIELD_MIN ? (gint64)ceil(f->min)
									   : 0);
	case SFL_CONFIG_TYPE_FLOAT:
		return g_variant_new_double(f->flags & SFL_CONFIG_FIELD_MIN ? f->min : 0);
	case SFL_CONFIG_TYPE_DURATION:
		return g_variant_new_string("0s");
	case SFL_CONFIG_TYPE_SIZE:
		return g_variant_new_string("0");
	case SFL_CONFIG_TYPE_ENUM:
		return g_variant_new_string(f->choices[0]);
	default:
		return g_variant_new_string("");
	}
	return NULL;
}

static GVariant *
sfl_gschema_default(const SflConfigField *f, const gchar *type)
{
	g_autoptr(SflConfigNode) doc = NULL;
	g_autofree gchar *wrapped = NULL;
	const SflConfigNode *node;
	GVariant *v;

	if (f->def == NULL || f->def_state_file != NULL) {
		if (f->type == SFL_CONFIG_TYPE_OBJECT_LIST ||
		    f->type == SFL_CONFIG_TYPE_STRING_LIST ||
		    f->type == SFL_CONFIG_TYPE_STRING_MAP || f->type == SFL_CONFIG_TYPE_FLOAT_MAP) {
			if (type[0] == 'm')
				return g_variant_new_maybe(G_VARIANT_TYPE(type + 1), NULL);
			return g_variant_new_array(g_variant_type_element(G_VARIANT_TYPE(type)),
						   NULL, 0);
		}
		return sfl_gschema_zero(f, type);
	}
	wrapped = g_strdup_printf("v: %s", f->def);
	doc = sfl_config_node_from_yaml(wrapped, strlen(wrapped), "default", NULL);
	node = doc != NULL ? sfl_config_node_lookup(doc, "v") : NULL;
	if (node != NULL && f->type == SFL_CONFIG_TYPE_DURATION &&
	    node->kind == SFL_CONFIG_NODE_SCALAR) {
		/* the canonical spelling ("30" seconds in the table reads "30s" here) */
		SflDuration d = 0;
		gdouble secs = 0;
		g_autofree gchar *text = NULL;
		if (sfl_gschema_parse_double(node->text, &secs))
			d = (SflDuration)llround(secs * G_USEC_PER_SEC);
		else if (!sfl_duration_parse(node->text, &d, NULL))
			return sfl_gschema_zero(f, type);
		text = sfl_duration_format(d);
		v = g_variant_new_string(text);
		return type[0] == 'm' ? g_variant_new_maybe(NULL, v) : v;
	}
	v = sfl_config_gsettings_from_node(node, type);
	return v != NULL ? v : sfl_gschema_zero(f, type);
}

/* XML text and attribute escaping; quotes stay as they are, so GVariant text reads as itself */
static gchar *
sfl_gschema_escape(const gchar *text)
{
	GString *out = g_string_new(NULL);
	for (const gchar *p = text; *p != '\0'; p++) {
		if (*p == '&')
			g_string_append(out, "&amp;");
		else if (*p == '<')
			g_string_append(out, "&lt;");
		else if (*p == '>')
			g_string_append(out, "&gt;");
		else
			g_string_append_c(out, *p);
	}
	return g_string_free(out, FALSE);
}

static void
sfl_gschema_range(GString *out, const SflConfigField *f)
{
	gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
	gboolean has_min =
		(f->flags & (SFL_CONFIG_FIELD_MIN | SFL_CONFIG_FIELD_MIN_EXCLUSIVE)) != 0;
	gboolean has_max = (f->flags & SFL_CONFIG_FIELD_MAX) != 0;

	if ((f->type != SFL_CONFIG_TYPE_INT && f->type != SFL_CONFIG_TYPE_FLOAT) ||
	    (!has_min && !has_max))
		return;
	g_string_append(out, "      <range");
	if (has_min) {
		if (f->type == SFL_CONFIG_TYPE_INT) {
			/* GSettings ranges are inclusive */
			gint64 min = (gint64)ceil(f->min);
			if ((f->flags & SFL_CONFIG_FIELD_MIN_EXCLUSIVE) && (gdouble)min == f->min)
				min++;
			g_string_append_printf(out, " min=\"%" G_GINT64_FORMAT "\"", min);
		} else {
			/* an exclusive bound is left to the loader, which names the key */
			g_string_append_printf(out, " min=\"%s\"",
					       g_ascii_dtostr(buf, sizeof(buf), f->min));
		}
	}
	if (has_max) {
		if (f->type == SFL_CONFIG_TYPE_INT)
			g_string_append_printf(out, " max=\"%" G_GINT64_FORMAT "\"",
					       (gint64)floor(f->max));
		else
			g_string_append_printf(out, " max=\"%s\"",
					       g_ascii_dtostr(buf, sizeof(buf), f->max));
	}
	g_string_append(out, "/>\n");
}

static void
sfl_gschema_key(GString *out, const SflConfigField *f, const gchar *type)
{
	g_autofree gchar *name = sfl_config_gsettings_name(f->key);
	g_autoptr(GVariant) def = g_variant_ref_sink(sfl_gschema_default(f, type));
	g_autofree gchar *def_text = g_variant_print(def, FALSE);
	g_autofree gchar *def_xml = sfl_gschema_escape(def_text);
	const gchar *help = f->help != NULL ? f->help : f->key;
	g_autofree gchar *summary = sfl_config_help_first_sentence(help);
	g_autofree gchar *summary_xml = sfl_gschema_escape(summary);
	g_autofree gchar *help_xml = sfl_gschema_escape(help);

	g_string_append_printf(out, "    <key name=\"%s\" type=\"%s\">\n", name, type);
	if (f->type == SFL_CONFIG_TYPE_ENUM) {
		g_string_append(out, "      <choices>\n");
		for (guint i = 0; f->choices[i] != NULL; i++) {
			g_autofree gchar *c = sfl_gschema_escape(f->choices[i]);
			g_string_append_printf(out, "        <choice value=\"%s\"/>\n", c);
		}
		g_string_append(out, "      </choices>\n");
	}
	sfl_gschema_range(out, f);
	g_string_append_printf(out, "      <default>%s</default>\n", def_xml);
	g_string_append_printf(out, "      <summary>%s</summary>\n", summary_xml);
	g_string_append_printf(out, "      <description>%s</description>\n", help_xml);
	g_string_append(out, "    </key>\n");
}

static void
sfl_gschema_schema(GString *out, const SflConfigSchema *schema, const gchar *id, const gchar *path)
{
	g_string_append_printf(out, "  <schema id=\"%s\" path=\"%s\">\n", id, path);
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		const gchar *type = sfl_config_gsettings_type(f);
		if (type != NULL)
			sfl_gschema_key(out, f, type);
	}
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		g_autofree gchar *name = NULL;
		if (f->type != SFL_CONFIG_TYPE_OBJECT)
			continue;
		name = sfl_config_gsettings_name(f->key);
		g_string_append_printf(out, "    <child name=\"%s\" schema=\"%s.%s\"/>\n", name, id,
				       name);
	}
	g_string_append(out, "  </schema>\n");
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		g_autofree gchar *name = NULL;
		g_autofree gchar *child_id = NULL;
		g_autofree gchar *child_path = NULL;
		if (f->type != SFL_CONFIG_TYPE_OBJECT)
			continue;
		name = sfl_config_gsettings_name(f->key);
		child_id = g_strdup_printf("%s.%s", id, name);
		child_path = g_strdup_printf("%s%s/", path, name);
		sfl_gschema_schema(out, f->schema, child_id, child_path);
	}
}

/**
 * sfl_config_render_gschema:
 *
 * Returns: (transfer full): the text of data/org.sf2loki.gschema.xml
 */
gchar *
sfl_config_render_gschema(void)
{
	GString *out =
		g_string_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			     "<!--\n"
			     "  sf2loki's GSettings schema (docs/configuration.md).\n"
			     "  Generated by `sf2loki config gschema` from the schema tables; "
			     "do not edit by hand.\n"
			     "  One child schema per section; key names are the YAML keys "
			     "with '_' written '-'.\n"
			     "  Secrets are never keys: set their *-file path instead.\n"
			     "-->\n"
			     "<schemalist>\n");
	sfl_gschema_schema(out, &sfl_config_root_schema, SFL_GSETTINGS_SCHEMA_ID,
			   SFL_GSETTINGS_SCHEMA_PATH);
	g_string_append(out, "</schemalist>\n");
	return g_string_free(out, FALSE);
}
