/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

#include "sfl-config-schema.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "sfl-config.h"
#include "sfl-error.h"
#include "sfl-platform.h"

#define SFL_CONFIG_UNKNOWN_KEY_HINT                                                                \
	"unknown configuration key (check for typos; see docs/config-reference.md for valid keys)"

#define SFL_ENV_PREFIX "SF2LOKI_"

/* a PEM key is a few KiB; anything this big is the wrong file (or /dev/zero) */
#define SFL_CONFIG_MAX_SECRET_BYTES (1024 * 1024)

void
sfl_config_context_init(SflConfigContext *ctx, gchar **envp)
{
	ctx->errors = g_ptr_array_new_with_free_func(g_free);
	ctx->secrets = g_ptr_array_new_with_free_func(g_free);
	ctx->envp = envp;
}

void
sfl_config_context_clear(SflConfigContext *ctx)
{
	g_clear_pointer(&ctx->errors, g_ptr_array_unref);
	g_clear_pointer(&ctx->secrets, g_ptr_array_unref);
}

/**
 * sfl_config_error:
 * @ctx: the load context
 * @path: dotted key path
 * @where: (nullable): the node the problem is about, for its position
 * @format: message
 *
 * Records "path: message [file:line:column]". Messages must never contain a secret value.
 */
void
sfl_config_error(SflConfigContext *ctx, const gchar *path, const SflConfigNode *where,
		 const gchar *format, ...)
{
	va_list args;
	g_autofree gchar *msg = NULL;

	va_start(args, format);
	msg = g_strdup_vprintf(format, args);
	va_end(args);
	if (where != NULL && where->origin != NULL) {
		g_autofree gchar *pos = sfl_config_node_where(where);
		g_ptr_array_add(ctx->errors, g_strdup_printf("%s: %s [%s]", path, msg, pos));
	} else {
		g_ptr_array_add(ctx->errors, g_strdup_printf("%s: %s", path, msg));
	}
}

static void
sfl_config_error_key(SflConfigContext *ctx, const gchar *path, const SflConfigNode *mapping,
		     guint idx, const gchar *msg)
{
	g_autofree gchar *pos = sfl_config_node_where_key(mapping, idx);
	g_ptr_array_add(ctx->errors, g_strdup_printf("%s: %s [%s]", path, msg, pos));
}

gchar *
sfl_config_path_join(const gchar *parent, const gchar *key)
{
	if (parent == NULL || parent[0] == '\0')
		return g_strdup(key);
	return g_strdup_printf("%s.%s", parent, key);
}

SflConfigPair *
sfl_config_pair_new(const gchar *key, const gchar *value, gdouble number)
{
	SflConfigPair *pair = g_new0(SflConfigPair, 1);
	pair->key = g_strdup(key);
	pair->value = g_strdup(value);
	pair->number = number;
	return pair;
}

void
sfl_config_pair_free(SflConfigPair *pair)
{
	if (pair == NULL)
		return;
	g_free(pair->key);
	g_free(pair->value);
	g_free(pair);
}

/**
 * sfl_config_map_lookup:
 * @map: (nullable): a GPtrArray of #SflConfigPair
 * @key: the key
 *
 * Returns: (transfer none) (nullable): the pair
 */
const SflConfigPair *
sfl_config_map_lookup(GPtrArray *map, const gchar *key)
{
	if (map == NULL)
		return NULL;
	for (guint i = 0; i < map->len; i++) {
		SflConfigPair *pair = g_ptr_array_index(map, i);
		if (g_strcmp0(pair->key, key) == 0)
			return pair;
	}
	return NULL;
}

gboolean
sfl_config_schema_is_secret(const SflConfigField *field)
{
	return field->type == SFL_CONFIG_TYPE_SECRET;
}

const SflConfigField *
sfl_config_schema_find(const SflConfigSchema *schema, const gchar *key)
{
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		if (g_str_equal(f->key, key))
			return f;
	}
	return NULL;
}

static gpointer
sfl_config_member(gpointer obj, const SflConfigField *field)
{
	return G_STRUCT_MEMBER_P(obj, field->offset);
}

/* --- scalar conversion ---------------------------------------------------------------------- */

/* ${NAME} over one string value; NULL with an error recorded when a variable is unset */
static gchar *
sfl_config_interpolate(const SflConfigNode *node, const gchar *path, SflConfigContext *ctx)
{
	g_autoptr(GString) out = g_string_new(NULL);
	const gchar *p = node->text;
	gboolean ok = TRUE;

	while (*p != '\0') {
		const gchar *start = strstr(p, "${");
		const gchar *end;
		g_autofree gchar *name = NULL;
		const gchar *value;

		if (start == NULL) {
			g_string_append(out, p);
			break;
		}
		g_string_append_len(out, p, start - p);
		end = strchr(start + 2, '}');
		if (end == NULL) {
			g_string_append(out, start);
			break;
		}
		name = g_strndup(start + 2, end - start - 2);
		if (name[0] == '\0' || !(g_ascii_isalpha(name[0]) || name[0] == '_') ||
		    strspn(name,
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
			    strlen(name)) {
			/* not a reference: keep the text as written */
			g_string_append_len(out, start, end - start + 1);
			p = end + 1;
			continue;
		}
		value = g_environ_getenv(ctx->envp, name);
		if (value == NULL) {
			sfl_config_error(ctx, path, node,
					 "config references undefined environment variable ${%s}",
					 name);
			ok = FALSE;
		} else {
			g_string_append(out, value);
		}
		p = end + 1;
	}
	if (!ok)
		return NULL;
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/* the text of a scalar after interpolation; *quoted tells whether it is a string for sure */
static gchar *
sfl_config_scalar_text(const SflConfigNode *node, const gchar *path, SflConfigContext *ctx,
		       gboolean *quoted)
{
	*quoted = node->quoted;
	if (node->from_yaml && strstr(node->text, "${") != NULL) {
		gchar *text = sfl_config_interpolate(node, path, ctx);
		/* a substituted value was a string in the original too */
		*quoted = TRUE;
		return text;
	}
	return g_strdup(node->text);
}

static const gchar *
sfl_config_type_noun(SflConfigType type)
{
	switch (type) {
	case SFL_CONFIG_TYPE_BOOL:
		return "a boolean (true or false)";
	case SFL_CONFIG_TYPE_INT:
		return "an integer";
	case SFL_CONFIG_TYPE_FLOAT:
		return "a number";
	case SFL_CONFIG_TYPE_DURATION:
		return "a duration";
	case SFL_CONFIG_TYPE_SIZE:
		return "a size";
	case SFL_CONFIG_TYPE_STRING:
	case SFL_CONFIG_TYPE_SECRET:
	case SFL_CONFIG_TYPE_ENUM:
		return "a string";
	case SFL_CONFIG_TYPE_PATH:
		return "a file path";
	case SFL_CONFIG_TYPE_STRING_LIST:
		return "a list of strings";
	case SFL_CONFIG_TYPE_STRING_MAP:
		return "a mapping of strings";
	case SFL_CONFIG_TYPE_FLOAT_MAP:
		return "a mapping of numbers";
	case SFL_CONFIG_TYPE_OBJECT:
		return "a mapping";
	case SFL_CONFIG_TYPE_OBJECT_LIST:
		return "a list of mappings";
	}
	return "a value";
}

static gboolean
sfl_config_parse_bool(const gchar *text, gboolean *out)
{
	static const gchar *const truthy[] = { "true", "yes", "on", "1", "t", "y", NULL };
	static const gchar *const falsy[] = { "false", "no", "off", "0", "f", "n", NULL };
	for (guint i = 0; truthy[i] != NULL; i++) {
		if (g_ascii_strcasecmp(text, truthy[i]) == 0) {
			*out = TRUE;
			return TRUE;
		}
		if (g_ascii_strcasecmp(text, falsy[i]) == 0) {
			*out = FALSE;
			return TRUE;
		}
	}
	return FALSE;
}

static gboolean
sfl_config_parse_int(const gchar *text, gint64 *out)
{
	g_autoptr(GString) digits = g_string_new(NULL);
	const gchar *p = text;
	gchar *end = NULL;
	gint64 v;

	/* YAML 1.1 allows digit separators */
	for (; *p != '\0'; p++) {
		if (*p != '_')
			g_string_append_c(digits, *p);
	}
	if (digits->len == 0)
		return FALSE;
	errno = 0;
	v = g_ascii_strtoll(digits->str, &end, 10);
	if (errno != 0 || end == digits->str || *end != '\0')
		return FALSE;
	*out = v;
	return TRUE;
}

static gboolean
sfl_config_parse_float(const gchar *text, gdouble *out)
{
	gchar *end = NULL;
	gdouble v;

	if (text[0] == '\0')
		return FALSE;
	errno = 0;
	v = g_ascii_strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || !isfinite(v))
		return FALSE;
	*out = v;
	return TRUE;
}

static gboolean
sfl_config_check_bounds(const SflConfigField *field, gdouble v, const gchar *shown,
			const gchar *path, const SflConfigNode *node, SflConfigContext *ctx)
{
	if ((field->flags & SFL_CONFIG_FIELD_MIN_EXCLUSIVE) && !(v > field->min)) {
		sfl_config_error(ctx, path, node, "must be greater than %g (got %s)", field->min,
				 shown);
		return FALSE;
	}
	if ((field->flags & SFL_CONFIG_FIELD_MIN) && v < field->min) {
		sfl_config_error(ctx, path, node, "must be at least %g (got %s)", field->min,
				 shown);
		return FALSE;
	}
	if ((field->flags & SFL_CONFIG_FIELD_MAX) && v > field->max) {
		sfl_config_error(ctx, path, node, "must be at most %g (got %s)", field->max, shown);
		return FALSE;
	}
	return TRUE;
}

static gboolean
sfl_config_check_pattern(const SflConfigField *field, const gchar *text, const gchar *path,
			 const SflConfigNode *node, SflConfigContext *ctx)
{
	g_autoptr(GRegex) re = NULL;

	if (field->pattern == NULL)
		return TRUE;
	re = g_regex_new(field->pattern, G_REGEX_ANCHORED | G_REGEX_DOLLAR_ENDONLY, 0, NULL);
	g_return_val_if_fail(re != NULL, FALSE);
	if (!g_regex_match(re, text, 0, NULL)) {
		sfl_config_error(ctx, path, node, "'%s' does not match %s", text, field->pattern);
		return FALSE;
	}
	return TRUE;
}

static void
sfl_config_load_scalar(const SflConfigField *field, gpointer member, const SflConfigNode *node,
		       const gchar *path, SflConfigContext *ctx)
{
	gboolean quoted = FALSE;
	g_autofree gchar *text = NULL;

	if (node->kind != SFL_CONFIG_NODE_SCALAR) {
		sfl_config_error(ctx, path, node, "expected %s", sfl_config_type_noun(field->type));
		return;
	}
	text = sfl_config_scalar_text(node, path, ctx, &quoted);
	if (text == NULL)
		return;

	switch (field->type) {
	case SFL_CONFIG_TYPE_BOOL:
		if (!sfl_config_parse_bool(text, member))
			sfl_config_error(ctx, path, node,
					 "expected a boolean (true or false), got '%s'", text);
		break;
	case SFL_CONFIG_TYPE_INT: {
		gint64 v = 0;
		if (!sfl_config_parse_int(text, &v)) {
			sfl_config_error(ctx, path, node, "expected an integer, got '%s'", text);
			break;
		}
		if (sfl_config_check_bounds(field, (gdouble)v, text, path, node, ctx))
			*(gint64 *)member = v;
		break;
	}
	case SFL_CONFIG_TYPE_FLOAT: {
		gdouble v = 0;
		if (!sfl_config_parse_float(text, &v)) {
			sfl_config_error(ctx, path, node, "expected a number, got '%s'", text);
			break;
		}
		if (sfl_config_check_bounds(field, v, text, path, node, ctx))
			*(gdouble *)member = v;
		break;
	}
	case SFL_CONFIG_TYPE_DURATION: {
		SflDuration v = 0;
		gdouble secs = 0;
		g_autoptr(GError) error = NULL;
		if (sfl_config_parse_float(text, &secs)) {
			if (quoted) {
				/* the original rejects numeric strings; say how to fix it */
				sfl_config_error(ctx, path, node,
						 "invalid duration '%s': a quoted number needs a "
						 "unit, e.g. '%ss'",
						 text, text);
				break;
			}
			if (secs < 0) {
				sfl_config_error(ctx, path, node,
						 "invalid duration '%s': must not be negative",
						 text);
				break;
			}
			v = (SflDuration)llround(secs * G_USEC_PER_SEC);
		} else if (!sfl_duration_parse(text, &v, &error)) {
			sfl_config_error(ctx, path, node, "%s", error->message);
			break;
		}
		if (sfl_config_check_bounds(field, (gdouble)v / G_USEC_PER_SEC, text, path, node,
					    ctx))
			*(SflDuration *)member = v;
		break;
	}
	case SFL_CONFIG_TYPE_SIZE: {
		gint64 v = 0;
		g_autoptr(GError) error = NULL;
		if (!sfl_config_parse_int(text, &v) && !sfl_size_parse(text, &v, &error)) {
			sfl_config_error(ctx, path, node, "%s", error->message);
			break;
		}
		if (v < 0) {
			sfl_config_error(ctx, path, node, "invalid size '%s': must not be negative",
					 text);
			break;
		}
		if (sfl_config_check_bounds(field, (gdouble)v, text, path, node, ctx))
			*(gint64 *)member = v;
		break;
	}
	case SFL_CONFIG_TYPE_STRING:
	case SFL_CONFIG_TYPE_PATH:
		if (!sfl_config_check_pattern(field, text, path, node, ctx))
			break;
		g_free(*(gchar **)member);
		*(gchar **)member = g_steal_pointer(&text);
		break;
	case SFL_CONFIG_TYPE_SECRET:
		/* never echo the value, not even in an error */
		g_free(*(gchar **)member);
		*(gchar **)member = g_steal_pointer(&text);
		break;
	case SFL_CONFIG_TYPE_ENUM: {
		for (guint i = 0; field->choices[i] != NULL; i++) {
			gboolean same = (field->flags & SFL_CONFIG_FIELD_CASE_INSENSITIVE)
						? g_ascii_strcasecmp(field->choices[i], text) == 0
						: g_str_equal(field->choices[i], text);
			if (same) {
				*(gint *)member = (gint)i;
				return;
			}
		}
		{
			g_autofree gchar *choices = g_strjoinv(", ", (gchar **)field->choices);
			sfl_config_error(ctx, path, node, "must be one of: %s (got '%s')", choices,
					 text);
		}
		break;
	}
	default:
		g_assert_not_reached();
	}
}

static void
sfl_config_load_string_list(const SflConfigField *field, GStrv *member, const SflConfigNode *node,
			    const gchar *path, SflConfigContext *ctx)
{
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
	gboolean ok = TRUE;

	if (node->kind != SFL_CONFIG_NODE_SEQUENCE) {
		sfl_config_error(ctx, path, node, "expected a list of strings");
		return;
	}
	for (guint i = 0; i < node->items->len; i++) {
		const SflConfigNode *item = g_ptr_array_index(node->items, i);
		g_autofree gchar *item_path = g_strdup_printf("%s[%u]", path, i);
		g_autofree gchar *text = NULL;
		gboolean quoted;

		if (item->kind != SFL_CONFIG_NODE_SCALAR) {
			sfl_config_error(ctx, item_path, item, "expected a string");
			ok = FALSE;
			continue;
		}
		text = sfl_config_scalar_text(item, item_path, ctx, &quoted);
		if (text == NULL || !sfl_config_check_pattern(field, text, item_path, item, ctx)) {
			ok = FALSE;
			continue;
		}
		g_strv_builder_add(builder, text);
	}
	if (!ok)
		return;
	g_strfreev(*member);
	*member = g_strv_builder_end(builder);
}

static void
sfl_config_load_map(const SflConfigField *field, GPtrArray **member, const SflConfigNode *node,
		    const gchar *path, SflConfigContext *ctx)
{
	g_autoptr(GPtrArray) pairs =
		g_ptr_array_new_with_free_func((GDestroyNotify)sfl_config_pair_free);
	gboolean ok = TRUE;

	if (node->kind != SFL_CONFIG_NODE_MAPPING) {
		sfl_config_error(ctx, path, node, "expected %s", sfl_config_type_noun(field->type));
		return;
	}
	for (guint i = 0; i < node->keys->len; i++) {
		const gchar *key = g_ptr_array_index(node->keys, i);
		const SflConfigNode *item = g_ptr_array_index(node->items, i);
		g_autofree gchar *item_path = sfl_config_path_join(path, key);
		g_autofree gchar *text = NULL;
		gboolean quoted;
		gdouble number = 0;

		if (item->kind != SFL_CONFIG_NODE_SCALAR) {
			sfl_config_error(ctx, item_path, item, "expected %s",
					 field->type == SFL_CONFIG_TYPE_FLOAT_MAP ? "a number"
										  : "a string");
			ok = FALSE;
			continue;
		}
		text = sfl_config_scalar_text(item, item_path, ctx, &quoted);
		if (text == NULL) {
			ok = FALSE;
			continue;
		}
		if (field->type == SFL_CONFIG_TYPE_FLOAT_MAP) {
			if (!sfl_config_parse_float(text, &number)) {
				sfl_config_error(ctx, item_path, item,
						 "expected a number, got '%s'", text);
				ok = FALSE;
				continue;
			}
			if (!sfl_config_check_bounds(field, number, text, item_path, item, ctx)) {
				ok = FALSE;
				continue;
			}
		}
		g_ptr_array_add(pairs, sfl_config_pair_new(key, text, number));
	}
	if (!ok)
		return;
	g_clear_pointer(member, g_ptr_array_unref);
	*member = g_steal_pointer(&pairs);
}

static void
sfl_config_load_object_list(const SflConfigField *field, GPtrArray **member,
			    const SflConfigNode *node, const gchar *path, SflConfigContext *ctx)
{
	if (node->kind != SFL_CONFIG_NODE_SEQUENCE) {
		sfl_config_error(ctx, path, node, "expected a list of mappings");
		return;
	}
	for (guint i = 0; i < node->items->len; i++) {
		const SflConfigNode *item = g_ptr_array_index(node->items, i);
		g_autofree gchar *item_path = g_strdup_printf("%s[%u]", path, i);
		gpointer obj = g_malloc0(field->schema->struct_size);
		sfl_config_schema_load(field->schema, obj, item, item_path, ctx);
		g_ptr_array_add(*member, obj);
	}
}

static void
sfl_config_object_free(gpointer data, gpointer user_data)
{
	const SflConfigSchema *schema = user_data;
	sfl_config_schema_clear(schema, data);
	g_free(data);
}

/* the zero value each type takes before a default or the user's value lands */
static void
sfl_config_init_member(const SflConfigField *field, gpointer member)
{
	switch (field->type) {
	case SFL_CONFIG_TYPE_DURATION:
		*(SflDuration *)member =
			(field->flags & SFL_CONFIG_FIELD_NULLABLE) ? SFL_DURATION_UNSET : 0;
		break;
	case SFL_CONFIG_TYPE_STRING_LIST:
		if (!(field->flags & SFL_CONFIG_FIELD_NULLABLE))
			*(GStrv *)member = g_new0(gchar *, 1);
		break;
	case SFL_CONFIG_TYPE_STRING_MAP:
	case SFL_CONFIG_TYPE_FLOAT_MAP:
		*(GPtrArray **)member =
			g_ptr_array_new_with_free_func((GDestroyNotify)sfl_config_pair_free);
		break;
	case SFL_CONFIG_TYPE_OBJECT_LIST:
		*(GPtrArray **)member = g_ptr_array_new();
		break;
	default:
		break;
	}
}

static void
sfl_config_load_value(const SflConfigField *field, gpointer member, const SflConfigNode *node,
		      const gchar *path, SflConfigContext *ctx)
{
	switch (field->type) {
	case SFL_CONFIG_TYPE_STRING_LIST:
		sfl_config_load_string_list(field, member, node, path, ctx);
		break;
	case SFL_CONFIG_TYPE_STRING_MAP:
	case SFL_CONFIG_TYPE_FLOAT_MAP:
		sfl_config_load_map(field, member, node, path, ctx);
		break;
	case SFL_CONFIG_TYPE_OBJECT_LIST:
		sfl_config_load_object_list(field, member, node, path, ctx);
		break;
	case SFL_CONFIG_TYPE_OBJECT:
		if (field->flags & SFL_CONFIG_FIELD_NULLABLE) {
			gpointer *slot = member;
			if (*slot == NULL)
				*slot = g_malloc0(field->schema->struct_size);
			sfl_config_schema_load(field->schema, *slot, node, path, ctx);
		} else {
			sfl_config_schema_load(field->schema, member, node, path, ctx);
		}
		break;
	default:
		sfl_config_load_scalar(field, member, node, path, ctx);
		break;
	}
}

/**
 * sfl_config_default_state_file:
 * @name: a file name, e.g. "state.json"
 * @error: return location for an error
 *
 * The default of a field with @def_state_file: @name in the directory the platform layer gives
 * a system service for its state, joined with the platform's separator.
 *
 * Returns: (transfer full) (nullable): the absolute path, or %NULL when the OS cannot say
 * where that directory is
 */
gchar *
sfl_config_default_state_file(const gchar *name, GError **error)
{
	SflPlatformError perr = { 0 };
	SflPlatformStatus status;
	gchar dir[4096];

	g_return_val_if_fail(name != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	status = sfl_platform_default_dir(SFL_PLATFORM_DIR_STATE, SFL_PLATFORM_SCOPE_SYSTEM, dir,
					  sizeof(dir), &perr);
	if (status != SFL_PLATFORM_OK) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG, "%s", perr.message);
		return NULL;
	}
	return g_build_filename(dir, name, NULL);
}

/* defaults are YAML text in the tables, parsed like user input so they cannot drift */
static void
sfl_config_load_default(const SflConfigField *field, gpointer member, const gchar *path,
			SflConfigContext *ctx)
{
	g_autoptr(SflConfigNode) doc = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *wrapped = NULL;
	guint before = ctx->errors->len;

	if (field->type == SFL_CONFIG_TYPE_OBJECT) {
		if (!(field->flags & SFL_CONFIG_FIELD_NULLABLE))
			sfl_config_schema_load(field->schema, member, NULL, path, ctx);
		return;
	}
	if (field->def_state_file != NULL) {
		gchar **slot = member;
		g_autofree gchar *file =
			sfl_config_default_state_file(field->def_state_file, &error);

		if (file == NULL) {
			sfl_config_error(ctx, path, NULL,
					 "has no default on this host (%s): set it",
					 error->message);
			return;
		}
		g_free(*slot);
		*slot = g_steal_pointer(&file);
		return;
	}
	if (field->def == NULL)
		return;
	wrapped = g_strdup_printf("v: %s", field->def);
	doc = sfl_config_node_from_yaml(wrapped, strlen(wrapped), "default", &error);
	if (doc == NULL) {
		g_critical("bad default for %s: %s", path, error->message);
		return;
	}
	{
		SflConfigNode *value = sfl_config_node_lookup(doc, "v");
		/* origin-less nodes keep the default out of "where" */
		if (value != NULL && !sfl_config_node_is_null(value))
			sfl_config_load_value(field, member, value, path, ctx);
	}
	if (ctx->errors->len != before)
		g_critical("bad default for %s: %s", path,
			   (const gchar *)g_ptr_array_index(ctx->errors, before));
}

gboolean
sfl_config_text_blank(const gchar *text)
{
	if (text == NULL)
		return TRUE;
	for (const gchar *p = text; *p != '\0'; p++) {
		if (!g_ascii_isspace(*p))
			return FALSE;
	}
	return TRUE;
}

static void
sfl_config_resolve_secret(const SflConfigSchema *schema, const SflConfigField *field, gpointer obj,
			  const SflConfigNode *node, const gchar *path, SflConfigContext *ctx)
{
	gchar **value = sfl_config_member(obj, field);
	g_autofree gchar *file_key = g_strdup_printf("%s_file", field->key);
	const SflConfigField *file_field = sfl_config_schema_find(schema, file_key);
	const gchar *file_path;
	g_autofree gchar *contents = NULL;
	g_autofree gchar *fpath = NULL;
	SflPlatformError perr = { 0 };
	SflPlatformStatus status;
	gchar *raw = NULL;
	gsize raw_len = 0;

	/* blank counts as absent everywhere (SFL-0047), so it can never shadow the file */
	if (sfl_config_text_blank(*value))
		g_clear_pointer(value, g_free);
	if (*value != NULL) {
		g_ptr_array_add(ctx->secrets, g_strdup(*value));
		return;
	}
	if (file_field == NULL)
		return;
	file_path = *(gchar **)sfl_config_member(obj, file_field);
	if (sfl_config_text_blank(file_path))
		return;
	fpath = sfl_config_path_join(path, file_key);
	status = sfl_platform_read_file(file_path, SFL_CONFIG_MAX_SECRET_BYTES, &raw, &raw_len,
					&perr);
	if (status != SFL_PLATFORM_OK) {
		const SflConfigNode *where = sfl_config_node_lookup(node, file_key);
		if (perr.access_denied) {
			sfl_config_error(ctx, fpath, where,
					 "cannot read %s from %s: permission denied (the service "
					 "user must be able to read it: make it group-readable, "
					 "e.g. chmod 0640 and chgrp to the service group)",
					 field->key, file_path);
		} else {
			/* the platform's message names the path and the OS reason */
			sfl_config_error(ctx, fpath, where, "cannot read %s: %s", field->key,
					 perr.message);
		}
		return;
	}
	contents = g_strndup(raw, raw_len);
	sfl_platform_free(raw);
	g_strstrip(contents);
	if (contents[0] == '\0')
		return;
	g_ptr_array_add(ctx->secrets, g_strdup(contents));
	*value = g_steal_pointer(&contents);
}

/**
 * sfl_config_schema_load:
 * @schema: the section's table
 * @obj: the zero-filled struct to fill
 * @node: (nullable): the mapping from the document; NULL means "all defaults"
 * @path: the dotted path of @node, "" for the root
 * @ctx: the load context, collecting errors
 *
 * Fills @obj from @node and the defaults, reports unknown keys, resolves secret pairs and runs
 * the section's cross-field validation. Problems go into @ctx; @obj is always left in a state
 * sfl_config_schema_clear() can free.
 */
void
sfl_config_schema_load(const SflConfigSchema *schema, gpointer obj, const SflConfigNode *node,
		       const gchar *path, SflConfigContext *ctx)
{
	g_autoptr(SflConfigNode) wrapped = NULL;

	if (node != NULL && node->kind == SFL_CONFIG_NODE_NULL)
		node = NULL;
	if (node != NULL && node->kind == SFL_CONFIG_NODE_SCALAR && schema->scalar_key != NULL) {
		wrapped = sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, node->origin);
		wrapped->line = node->line;
		wrapped->column = node->column;
		sfl_config_node_set(wrapped, schema->scalar_key, sfl_config_node_copy(node));
		node = wrapped;
	}
	if (node != NULL && node->kind != SFL_CONFIG_NODE_MAPPING) {
		sfl_config_error(ctx, path[0] ? path : "(top level)", node, "expected a mapping");
		node = NULL;
	}

	for (const SflConfigField *f = schema->fields; f->key != NULL; f++)
		sfl_config_init_member(f, sfl_config_member(obj, f));

	if (node != NULL) {
		for (guint i = 0; i < node->keys->len; i++) {
			const gchar *key = g_ptr_array_index(node->keys, i);
			if (sfl_config_schema_find(schema, key) == NULL) {
				g_autofree gchar *kpath = sfl_config_path_join(path, key);
				sfl_config_error_key(ctx, kpath, node, i,
						     SFL_CONFIG_UNKNOWN_KEY_HINT);
			}
		}
	}

	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		g_autofree gchar *fpath = sfl_config_path_join(path, f->key);
		const SflConfigNode *value = sfl_config_node_lookup(node, f->key);
		gpointer member = sfl_config_member(obj, f);

		if (value == NULL) {
			if (f->flags & SFL_CONFIG_FIELD_REQUIRED) {
				sfl_config_error(ctx, fpath, node, "field required");
				continue;
			}
			sfl_config_load_default(f, member, fpath, ctx);
			continue;
		}
		if (value->kind == SFL_CONFIG_NODE_NULL) {
			if (f->type == SFL_CONFIG_TYPE_OBJECT) {
				sfl_config_load_value(f, member, value, fpath, ctx);
			} else if ((f->flags & SFL_CONFIG_FIELD_NULLABLE) ||
				   (f->def == NULL && f->def_state_file == NULL &&
				    !(f->flags & SFL_CONFIG_FIELD_REQUIRED) &&
				    f->type != SFL_CONFIG_TYPE_OBJECT_LIST)) {
				/* explicit null where "none" is the default: keep the zero value */
			} else if (f->flags & SFL_CONFIG_FIELD_REQUIRED) {
				sfl_config_error(ctx, fpath, value, "field required (got null)");
			} else {
				sfl_config_error(ctx, fpath, value,
						 "expected %s, got null (remove the key to use the "
						 "default)",
						 sfl_config_type_noun(f->type));
			}
			continue;
		}
		sfl_config_load_value(f, member, value, fpath, ctx);
	}

	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		if (f->type == SFL_CONFIG_TYPE_SECRET)
			sfl_config_resolve_secret(schema, f, obj, node, path, ctx);
	}

	if (schema->validate != NULL)
		schema->validate(obj, node, path, ctx);
}

/**
 * sfl_config_schema_clear:
 * @schema: the section's table
 * @obj: a struct filled by sfl_config_schema_load()
 *
 * Frees every member (not @obj itself) and zeroes it.
 */
void
sfl_config_schema_clear(const SflConfigSchema *schema, gpointer obj)
{
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		gpointer member = sfl_config_member(obj, f);
		switch (f->type) {
		case SFL_CONFIG_TYPE_STRING:
		case SFL_CONFIG_TYPE_PATH:
			g_clear_pointer((gchar **)member, g_free);
			break;
		case SFL_CONFIG_TYPE_SECRET: {
			gchar **secret = member;
			if (*secret != NULL)
				memset(*secret, 0, strlen(*secret));
			g_clear_pointer(secret, g_free);
			break;
		}
		case SFL_CONFIG_TYPE_STRING_LIST:
			g_clear_pointer((GStrv *)member, g_strfreev);
			break;
		case SFL_CONFIG_TYPE_STRING_MAP:
		case SFL_CONFIG_TYPE_FLOAT_MAP:
			g_clear_pointer((GPtrArray **)member, g_ptr_array_unref);
			break;
		case SFL_CONFIG_TYPE_OBJECT_LIST: {
			GPtrArray **list = member;
			if (*list != NULL) {
				g_ptr_array_foreach(*list, sfl_config_object_free,
						    (gpointer)f->schema);
				g_clear_pointer(list, g_ptr_array_unref);
			}
			break;
		}
		case SFL_CONFIG_TYPE_OBJECT:
			if (f->flags & SFL_CONFIG_FIELD_NULLABLE) {
				gpointer *slot = member;
				if (*slot != NULL) {
					sfl_config_object_free(*slot, (gpointer)f->schema);
					*slot = NULL;
				}
			} else {
				sfl_config_schema_clear(f->schema, member);
			}
			break;
		default:
			break;
		}
	}
}

/* --- environment overrides ------------------------------------------------------------------ */

static gboolean
sfl_config_type_is_complex(SflConfigType type)
{
	return type == SFL_CONFIG_TYPE_STRING_LIST || type == SFL_CONFIG_TYPE_STRING_MAP ||
	       type == SFL_CONFIG_TYPE_FLOAT_MAP || type == SFL_CONFIG_TYPE_OBJECT ||
	       type == SFL_CONFIG_TYPE_OBJECT_LIST;
}

static SflConfigNode *
sfl_config_env_mapping_at(SflConfigNode *root, gchar **segments, guint depth)
{
	SflConfigNode *cur = root;
	for (guint i = 0; i < depth; i++) {
		SflConfigNode *next = sfl_config_node_lookup(cur, segments[i]);
		if (next == NULL || next->kind != SFL_CONFIG_NODE_MAPPING) {
			/* an env leaf below a non-mapping replaces it, as a deep merge would */
			next = sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, NULL);
			sfl_config_node_set(cur, segments[i], next);
		}
		cur = next;
	}
	return cur;
}

static void
sfl_config_apply_env_one(const SflConfigSchema *schema, SflConfigNode *root, const gchar *name,
			 const gchar *value, SflConfigContext *ctx)
{
	g_autofree gchar *lower = g_ascii_strdown(name + strlen(SFL_ENV_PREFIX), -1);
	g_auto(GStrv) segments = g_strsplit(lower, "__", -1);
	g_autofree gchar *origin = g_strdup_printf("env %s", name);
	g_autoptr(GRefString) ref = g_ref_string_new(origin);
	const SflConfigSchema *cur = schema;
	g_autofree gchar *path = g_strdup("");
	guint n = g_strv_length(segments);

	for (guint i = 0; i < n; i++) {
		const SflConfigField *field = NULL;
		g_autofree gchar *next_path = sfl_config_path_join(path, segments[i]);
		gboolean last = i + 1 == n;

		if (segments[i][0] == '\0') {
			sfl_config_error(ctx, next_path, NULL, "empty key segment in %s", origin);
			return;
		}
		field = sfl_config_schema_find(cur, segments[i]);
		if (field == NULL) {
			/* unknown top-level variables belong to someone else */
			if (i == 0)
				return;
			sfl_config_error(ctx, next_path, NULL, "%s [%s]",
					 SFL_CONFIG_UNKNOWN_KEY_HINT, origin);
			return;
		}
		g_free(path);
		path = g_steal_pointer(&next_path);
		if (!last) {
			if (field->type != SFL_CONFIG_TYPE_OBJECT) {
				sfl_config_error(ctx, path, NULL,
						 "%s sets a key below '%s', which is not a mapping",
						 origin, field->key);
				return;
			}
			cur = field->schema;
			continue;
		}
		{
			SflConfigNode *parent = sfl_config_env_mapping_at(root, segments, i);
			SflConfigNode *leaf = NULL;
			if (sfl_config_type_is_complex(field->type)) {
				g_autoptr(GError) error = NULL;
				leaf = sfl_config_node_from_json(value, origin, &error);
				if (leaf == NULL) {
					sfl_config_error(
						ctx, path, NULL,
						"%s (lists and mappings are given as JSON)",
						error->message);
					return;
				}
			} else {
				/* environment values are strings, never interpolated */
				leaf = sfl_config_node_new_scalar(value, TRUE, ref);
			}
			if (leaf->kind == SFL_CONFIG_NODE_MAPPING &&
			    field->type == SFL_CONFIG_TYPE_OBJECT) {
				SflConfigNode *existing =
					sfl_config_node_lookup(parent, segments[i]);
				if (existing != NULL && existing->kind == SFL_CONFIG_NODE_MAPPING) {
					sfl_config_node_merge(existing, leaf);
					sfl_config_node_free(leaf);
					return;
				}
			}
			sfl_config_node_set(parent, segments[i], leaf);
		}
	}
}

static gint
sfl_config_env_cmp(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

/**
 * sfl_config_schema_apply_env:
 * @schema: the root table
 * @root: the document's root mapping, modified
 * @envp: the environment
 * @ctx: the load context
 *
 * Merges `SF2LOKI_<SECTION>__<KEY>` variables over the document; each variable wins for its
 * leaf. Variables are applied in name order so a deeper variable refines a shallower JSON one.
 */
void
sfl_config_schema_apply_env(const SflConfigSchema *schema, SflConfigNode *root, gchar **envp,
			    SflConfigContext *ctx)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; envp != NULL && envp[i] != NULL; i++) {
		const gchar *eq = strchr(envp[i], '=');
		if (eq == NULL || (gsize)(eq - envp[i]) <= strlen(SFL_ENV_PREFIX))
			continue;
		if (g_ascii_strncasecmp(envp[i], SFL_ENV_PREFIX, strlen(SFL_ENV_PREFIX)) != 0)
			continue;
		g_ptr_array_add(names, g_strndup(envp[i], eq - envp[i]));
	}
	g_ptr_array_sort(names, sfl_config_env_cmp);
	for (guint i = 0; i < names->len; i++) {
		const gchar *name = g_ptr_array_index(names, i);
		sfl_config_apply_env_one(schema, root, name, g_environ_getenv(envp, name), ctx);
	}
}
