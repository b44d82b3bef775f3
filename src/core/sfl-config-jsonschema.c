/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "sfl-config.h"

/*
 * config.schema.json (JSON Schema draft 2020-12) rendered from the same tables as the loader,
 * so editors validate exactly the keys, types, choices and bounds `sf2loki check` knows.
 * What the tables cannot say — the cross-field rules of each section's validate function, and
 * values given by environment variables — stays with `sf2loki check`
 * (docs/operations/config-schema.md).
 */

#define SFL_SCHEMA_DIALECT "https://json-schema.org/draft/2020-12/schema"

/* the platform layer's state directory, spelled out for both platforms (as the reference) */
#define SFL_SCHEMA_STATE_DIR_POSIX   "/var/lib/sf2loki/"
#define SFL_SCHEMA_STATE_DIR_WINDOWS "%ProgramData%\\sf2loki\\"

/* a number with an optional fraction, as sfl_duration_read_number() takes it */
#define SFL_SCHEMA_NUM "(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)"

/*
 * the three duration spellings of sfl_duration_parse() (minutes and seconds below 60); a bare
 * number must be a YAML number
 */
static const gchar *const sfl_schema_duration_pattern =
	"^(?:(?:" SFL_SCHEMA_NUM "(?:us|ms|s|m|h|d|w))+"
	"|[Pp](?=.*[0-9])(?:" SFL_SCHEMA_NUM "[WwDd])*(?:[Tt](?:" SFL_SCHEMA_NUM "[HhMmSs])*)?"
	"|[0-9]+:0*[0-5]?[0-9]:0*[0-5]?[0-9](?:\\.[0-9]*)?)$";

/* sfl_size_parse(): bytes, or a number and a case-insensitive unit */
static const gchar *const sfl_schema_size_pattern =
	"^(?:[0-9][0-9_]*|" SFL_SCHEMA_NUM " *(?:[Bb]|[KkMmGgTt][Ii]?[Bb]))$";

/* the loader's boolean spellings (sfl_config_parse_bool), in any case */
static const gchar *const sfl_schema_bool_pattern =
	"^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[Yy][Ee][Ss]|[Nn][Oo]|[Oo][Nn]|[Oo][Ff][Ff]"
	"|[TtFfYyNn01])$";

/* a value that names an environment variable is only known once it is interpolated */
static const gchar *const sfl_schema_interpolated_pattern = "\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}";

static json_t *
sfl_schema_ref(const gchar *name)
{
	g_autofree gchar *ref = g_strdup_printf("#/$defs/%s", name);
	return json_pack("{s:s}", "$ref", ref);
}

/* integral bounds as JSON integers, so "minimum": 1 reads as written */
static json_t *
sfl_schema_number(gdouble v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		return json_integer((json_int_t)v);
	return json_real(v);
}

static void
sfl_schema_bounds(json_t *out, const SflConfigField *f)
{
	if (f->flags & SFL_CONFIG_FIELD_MIN_EXCLUSIVE)
		json_object_set_new(out, "exclusiveMinimum", sfl_schema_number(f->min));
	else if (f->flags & SFL_CONFIG_FIELD_MIN)
		json_object_set_new(out, "minimum", sfl_schema_number(f->min));
	if (f->flags & SFL_CONFIG_FIELD_MAX)
		json_object_set_new(out, "maximum", sfl_schema_number(f->max));
}

/* a duration or size given as a number is never negative, whatever the table's bounds */
static void
sfl_schema_bounds_non_negative(json_t *out, const SflConfigField *f)
{
	sfl_schema_bounds(out, f);
	if (json_object_get(out, "minimum") == NULL &&
	    json_object_get(out, "exclusiveMinimum") == NULL)
		json_object_set_new(out, "minimum", json_integer(0));
	else if (json_object_get(out, "minimum") != NULL &&
		 json_number_value(json_object_get(out, "minimum")) < 0)
		json_object_set_new(out, "minimum", json_integer(0));
}

static json_t *sfl_schema_any_of(json_t *first, ...) G_GNUC_NULL_TERMINATED;

/*
 * The table's GRegex is anchored at the start only, so the schema's must be too; a ${VAR}
 * is matched against it only once the environment has replaced it.
 */
static json_t *
sfl_schema_string(const SflConfigField *f)
{
	json_t *out = json_pack("{s:s}", "type", "string");
	g_autofree gchar *pattern = NULL;

	if (f->pattern == NULL)
		return out;
	pattern = g_strdup_printf("^(?:%s)", f->pattern);
	json_object_set_new(out, "pattern", json_string(pattern));
	return sfl_schema_any_of(out, sfl_schema_ref("interpolated"), NULL);
}

/* "Hourly" as "[Hh][Oo][Uu][Rr][Ll][Yy]": JSON Schema has no case-insensitive enum */
static gchar *
sfl_schema_caseless_choices(const gchar *const *choices)
{
	GString *out = g_string_new("^(?:");
	for (guint i = 0; choices[i] != NULL; i++) {
		if (i > 0)
			g_string_append_c(out, '|');
		for (const gchar *p = choices[i]; *p != '\0'; p++) {
			if (g_ascii_isalpha(*p))
				g_string_append_printf(out, "[%c%c]", g_ascii_toupper(*p),
						       g_ascii_tolower(*p));
			else if (g_ascii_isalnum(*p) || *p == '_')
				g_string_append_c(out, *p);
			else
				g_string_append_printf(out, "\\%c", *p);
		}
	}
	g_string_append(out, ")$");
	return g_string_free(out, FALSE);
}

static gboolean
sfl_schema_has_required(const SflConfigSchema *schema)
{
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		if (f->flags & SFL_CONFIG_FIELD_REQUIRED)
			return TRUE;
		if (f->type == SFL_CONFIG_TYPE_OBJECT && !(f->flags & SFL_CONFIG_FIELD_NULLABLE) &&
		    sfl_schema_has_required(f->schema))
			return TRUE;
	}
	return FALSE;
}

/*
 * Whether an explicit null loads: where null is a value of its own, where the default is
 * "none" anyway, and for a section whose defaults need nothing the user must give
 * (sfl_config_schema_load()).
 */
static gboolean
sfl_schema_null_ok(const SflConfigField *f)
{
	if (f->type == SFL_CONFIG_TYPE_OBJECT)
		return !sfl_schema_has_required(f->schema);
	if (f->flags & SFL_CONFIG_FIELD_NULLABLE)
		return TRUE;
	return f->def == NULL && f->def_state_file == NULL &&
	       !(f->flags & SFL_CONFIG_FIELD_REQUIRED) && f->type != SFL_CONFIG_TYPE_OBJECT_LIST;
}

static json_t *
sfl_schema_any_of(json_t *first, ...)
{
	json_t *list = json_array();
	va_list args;

	json_array_append_new(list, first);
	va_start(args, first);
	for (json_t *next = va_arg(args, json_t *); next != NULL; next = va_arg(args, json_t *))
		json_array_append_new(list, next);
	va_end(args);
	return json_pack("{s:o}", "anyOf", list);
}

static json_t *
sfl_schema_object_ref(const SflConfigSchema *schema)
{
	if (schema->scalar_key != NULL)
		return sfl_schema_any_of(sfl_schema_ref(schema->name),
					 json_pack("{s:s}", "type", "string"), NULL);
	return sfl_schema_ref(schema->name);
}

/* the value's schema, without description or default */
static json_t *
sfl_schema_value(const SflConfigField *f)
{
	json_t *out = NULL;

	switch (f->type) {
	case SFL_CONFIG_TYPE_BOOL:
		return sfl_schema_any_of(
			json_pack("{s:s}", "type", "boolean"), json_pack("{s:[i,i]}", "enum", 0, 1),
			sfl_schema_ref("boolText"), sfl_schema_ref("interpolated"), NULL);
	case SFL_CONFIG_TYPE_INT:
		out = json_pack("{s:s}", "type", "integer");
		sfl_schema_bounds(out, f);
		return sfl_schema_any_of(out, sfl_schema_ref("interpolated"), NULL);
	case SFL_CONFIG_TYPE_FLOAT:
		out = json_pack("{s:s}", "type", "number");
		sfl_schema_bounds(out, f);
		return sfl_schema_any_of(out, sfl_schema_ref("interpolated"), NULL);
	case SFL_CONFIG_TYPE_DURATION:
		/* YAML numbers are seconds; the table's bounds are seconds too */
		out = json_pack("{s:s}", "type", "number");
		sfl_schema_bounds_non_negative(out, f);
		return sfl_schema_any_of(out, sfl_schema_ref("durationText"),
					 sfl_schema_ref("interpolated"), NULL);
	case SFL_CONFIG_TYPE_SIZE:
		out = json_pack("{s:s}", "type", "integer");
		sfl_schema_bounds_non_negative(out, f);
		return sfl_schema_any_of(out, sfl_schema_ref("sizeText"),
					 sfl_schema_ref("interpolated"), NULL);
	case SFL_CONFIG_TYPE_STRING:
	case SFL_CONFIG_TYPE_PATH:
		return sfl_schema_string(f);
	case SFL_CONFIG_TYPE_SECRET:
		out = sfl_schema_string(f);
		json_object_set_new(out, "writeOnly", json_true());
		return out;
	case SFL_CONFIG_TYPE_ENUM: {
		json_t *choices = json_array();
		for (guint i = 0; f->choices[i] != NULL; i++)
			json_array_append_new(choices, json_string(f->choices[i]));
		out = json_pack("{s:o}", "enum", choices);
		if (f->flags & SFL_CONFIG_FIELD_CASE_INSENSITIVE) {
			g_autofree gchar *pattern = sfl_schema_caseless_choices(f->choices);
			return sfl_schema_any_of(
				out, json_pack("{s:s,s:s}", "type", "string", "pattern", pattern),
				sfl_schema_ref("interpolated"), NULL);
		}
		return sfl_schema_any_of(out, sfl_schema_ref("interpolated"), NULL);
	}
	case SFL_CONFIG_TYPE_STRING_LIST:
		return json_pack("{s:s,s:o}", "type", "array", "items", sfl_schema_string(f));
	case SFL_CONFIG_TYPE_STRING_MAP:
		return json_pack("{s:s,s:{s:s}}", "type", "object", "additionalProperties", "type",
				 "string");
	case SFL_CONFIG_TYPE_FLOAT_MAP:
		out = json_pack("{s:s}", "type", "number");
		sfl_schema_bounds(out, f);
		return json_pack("{s:s,s:o}", "type", "object", "additionalProperties", out);
	case SFL_CONFIG_TYPE_OBJECT:
		return sfl_schema_ref(f->schema->name);
	case SFL_CONFIG_TYPE_OBJECT_LIST:
		return json_pack("{s:s,s:o}", "type", "array", "items",
				 sfl_schema_object_ref(f->schema));
	}
	g_return_val_if_reached(json_object());
}

static gboolean
sfl_schema_text_bool(const gchar *text)
{
	return g_ascii_strcasecmp(text, "true") == 0 || g_ascii_strcasecmp(text, "yes") == 0 ||
	       g_ascii_strcasecmp(text, "on") == 0 || g_str_equal(text, "1");
}

/* one scalar of a default or example as the JSON value the field's type reads it as */
static json_t *
sfl_schema_scalar_json(const SflConfigField *f, const SflConfigNode *node)
{
	const gchar *text = node->text;

	if (strstr(text, "${") != NULL)
		return json_string(text);
	switch (f->type) {
	case SFL_CONFIG_TYPE_BOOL:
		return json_boolean(sfl_schema_text_bool(text));
	case SFL_CONFIG_TYPE_INT:
		return json_integer(g_ascii_strtoll(text, NULL, 10));
	case SFL_CONFIG_TYPE_SIZE: {
		gint64 bytes = 0;
		if (!sfl_size_parse(text, &bytes, NULL))
			return json_string(text);
		return json_integer(bytes);
	}
	case SFL_CONFIG_TYPE_FLOAT:
	case SFL_CONFIG_TYPE_FLOAT_MAP:
		return sfl_schema_number(g_ascii_strtod(text, NULL));
	case SFL_CONFIG_TYPE_DURATION: {
		SflDuration d = 0;
		g_autofree gchar *formatted = NULL;
		gchar *end = NULL;
		gdouble secs = g_ascii_strtod(text, &end);

		if (end != text && *end == '\0' && !node->quoted)
			d = (SflDuration)llround(secs * G_USEC_PER_SEC);
		else if (!sfl_duration_parse(text, &d, NULL))
			return json_string(text);
		formatted = sfl_duration_format(d);
		return json_string(formatted);
	}
	default:
		return json_string(text);
	}
}

/* a default or example in the tables' YAML flow syntax, as JSON; NULL when there is none */
static json_t *
sfl_schema_yaml_json(const SflConfigField *f, const gchar *yaml)
{
	g_autofree gchar *wrapped = g_strdup_printf("v: %s", yaml);
	g_autoptr(SflConfigNode) doc =
		sfl_config_node_from_yaml(wrapped, strlen(wrapped), "default", NULL);
	const SflConfigNode *value = doc != NULL ? sfl_config_node_lookup(doc, "v") : NULL;
	json_t *out = NULL;

	if (value == NULL)
		return NULL;
	switch (value->kind) {
	case SFL_CONFIG_NODE_NULL:
		return json_null();
	case SFL_CONFIG_NODE_SCALAR:
		return sfl_schema_scalar_json(f, value);
	case SFL_CONFIG_NODE_SEQUENCE:
		out = json_array();
		for (guint i = 0; i < value->items->len; i++) {
			const SflConfigNode *item = g_ptr_array_index(value->items, i);
			if (item->kind == SFL_CONFIG_NODE_SCALAR)
				json_array_append_new(out, json_string(item->text));
		}
		return out;
	case SFL_CONFIG_NODE_MAPPING:
		out = json_object();
		for (guint i = 0; i < value->keys->len; i++) {
			const SflConfigNode *item = g_ptr_array_index(value->items, i);
			if (item->kind == SFL_CONFIG_NODE_SCALAR)
				json_object_set_new(out, g_ptr_array_index(value->keys, i),
						    sfl_schema_scalar_json(f, item));
		}
		return out;
	}
	return NULL;
}

static gchar *
sfl_schema_description(const SflConfigField *f)
{
	GString *out = g_string_new(f->help != NULL ? f->help : "");

	if (f->def_doc != NULL)
		g_string_append_printf(out, " Default: %s.", f->def_doc);
	if (f->def_state_file != NULL)
		g_string_append_printf(out, " Default: %s%s (on Windows %s%s).",
				       SFL_SCHEMA_STATE_DIR_POSIX, f->def_state_file,
				       SFL_SCHEMA_STATE_DIR_WINDOWS, f->def_state_file);
	if (f->type == SFL_CONFIG_TYPE_SECRET)
		g_string_append_printf(
			out, " Secret (never logged); the file alternative is %s_file.", f->key);
	if (f->flags & SFL_CONFIG_FIELD_SECRET_FILE) {
		g_autofree gchar *secret = g_strndup(f->key, strlen(f->key) - strlen("_file"));
		g_string_append_printf(out, " The file alternative to the secret %s.", secret);
	}
	return g_string_free(out, FALSE);
}

static json_t *
sfl_schema_property(const SflConfigField *f)
{
	json_t *value = sfl_schema_value(f);
	json_t *out = NULL;
	g_autofree gchar *description = sfl_schema_description(f);

	if (sfl_schema_null_ok(f))
		value = sfl_schema_any_of(value, json_pack("{s:s}", "type", "null"), NULL);
	/* the keywords sit next to the type, so editors show them on hover and completion */
	out = json_pack("{s:s}", "description", description);
	json_object_update(out, value);
	json_decref(value);

	if (f->def != NULL && f->type != SFL_CONFIG_TYPE_OBJECT &&
	    f->type != SFL_CONFIG_TYPE_OBJECT_LIST && f->type != SFL_CONFIG_TYPE_SECRET) {
		json_t *def = sfl_schema_yaml_json(f, f->def);
		if (def != NULL)
			json_object_set_new(out, "default", def);
	} else if (f->def == NULL && (f->flags & SFL_CONFIG_FIELD_NULLABLE) &&
		   f->type != SFL_CONFIG_TYPE_OBJECT && f->def_doc == NULL) {
		json_object_set_new(out, "default", json_null());
	}
	if (f->example != NULL && f->type != SFL_CONFIG_TYPE_SECRET) {
		json_t *example = sfl_schema_yaml_json(f, f->example);
		if (example != NULL)
			json_object_set_new(out, "examples", json_pack("[o]", example));
	}
	return out;
}

/* a section's properties, required list and closed key set into @out */
static void
sfl_schema_fill_object(json_t *out, const SflConfigSchema *schema)
{
	json_t *properties = json_object();
	json_t *required = json_array();

	json_object_set_new(out, "type", json_string("object"));
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		json_object_set_new(properties, f->key, sfl_schema_property(f));
		if (f->flags & SFL_CONFIG_FIELD_REQUIRED)
			json_array_append_new(required, json_string(f->key));
	}
	json_object_set_new(out, "properties", properties);
	if (json_array_size(required) > 0)
		json_object_set_new(out, "required", required);
	else
		json_decref(required);
	json_object_set_new(out, "additionalProperties", json_false());
}

static void
sfl_schema_collect_defs(json_t *defs, const SflConfigSchema *schema)
{
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		json_t *def = NULL;
		if (f->schema == NULL || json_object_get(defs, f->schema->name) != NULL)
			continue;
		def = json_object();
		if (f->schema->doc != NULL)
			json_object_set_new(def, "description", json_string(f->schema->doc));
		/* set before recursing: a section reached twice is described once */
		json_object_set_new(defs, f->schema->name, def);
		sfl_schema_fill_object(def, f->schema);
		sfl_schema_collect_defs(defs, f->schema);
	}
}

/**
 * sfl_config_render_jsonschema:
 *
 * Returns: (transfer full): the text of config.schema.json, 2-space indented
 */
gchar *
sfl_config_render_jsonschema(void)
{
	json_t *root = json_object();
	json_t *defs = json_object();
	gchar *dumped = NULL;
	gchar *text = NULL;

	json_object_set_new(root, "$schema", json_string(SFL_SCHEMA_DIALECT));
	json_object_set_new(root, "title", json_string("sf2loki configuration"));
	json_object_set_new(root, "$comment",
			    json_string("Generated by `sf2loki config schema` from the schema "
					"tables; do not edit by hand. Cross-field rules and "
					"environment overrides are checked by `sf2loki check`."));
	json_object_set_new(root, "description", json_string(sfl_config_root_schema.doc));
	sfl_schema_fill_object(root, &sfl_config_root_schema);

	json_object_set_new(defs, "boolText",
			    json_pack("{s:s,s:s,s:s}", "description",
				      "A boolean spelled as the loader reads it, in any case.",
				      "type", "string", "pattern", sfl_schema_bool_pattern));
	json_object_set_new(defs, "durationText",
			    json_pack("{s:s,s:s,s:s}", "description",
				      "500ms, 30s, 5m, 1h30m, 1.5h, 2d, 1w, ISO-8601 PT5M or "
				      "HH:MM:SS; a YAML number is seconds, a quoted number "
				      "needs a unit.",
				      "type", "string", "pattern", sfl_schema_duration_pattern));
	json_object_set_new(defs, "sizeText",
			    json_pack("{s:s,s:s,s:s}", "description",
				      "A number of bytes, or 256KiB, 4MiB, 1GiB, 500kB, 1GB.",
				      "type", "string", "pattern", sfl_schema_size_pattern));
	json_object_set_new(defs, "interpolated",
			    json_pack("{s:s,s:s,s:s}", "description",
				      "A ${VAR} reference, checked once the environment has "
				      "replaced it.",
				      "type", "string", "pattern",
				      sfl_schema_interpolated_pattern));
	sfl_schema_collect_defs(defs, &sfl_config_root_schema);
	json_object_set_new(root, "$defs", defs);

	dumped = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	json_decref(root);
	g_return_val_if_fail(dumped != NULL, g_strdup(""));
	text = g_strconcat(dumped, "\n", NULL);
	free(dumped);
	return text;
}
