/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestConfigArtifacts"

#include "config.h"

#include <jansson.h>
#include <string.h>

#include "sfl-config.h"
#include "sfl-test-files.h"

/*
 * config.schema.json and the Helm chart's generated config: block against their renderers
 * (sfl-config-jsonschema.c, sfl-config-helm.c). What the schema accepts is compared with
 * `sf2loki check` by tests/data/check-config-schema.py.
 */

static void
assert_not_drifted(const gchar *committed, const gchar *generated, const gchar *what)
{
	if (g_strcmp0(committed, generated) == 0)
		return;
	g_error("%s has drifted from the schema tables; regenerate it with `make gen-config` "
		"(scripts/gen-config.sh)",
		what);
}

static json_t *
load_schema(void)
{
	g_autofree gchar *text = sfl_config_render_jsonschema();
	json_error_t jerr;
	json_t *schema = json_loads(text, 0, &jerr);
	if (schema == NULL)
		g_error("the rendered schema is not JSON: %s at line %d", jerr.text, jerr.line);
	return schema;
}

static void
test_schema_drift(void)
{
	g_autofree gchar *committed = sfl_test_read_source_file("config.schema.json");
	g_autofree gchar *generated = sfl_config_render_jsonschema();
	assert_not_drifted(committed, generated, "config.schema.json");
}

/* the properties object of @schema's definition, or the root's */
static json_t *
schema_properties(json_t *root, const SflConfigSchema *schema)
{
	json_t *def = schema == &sfl_config_root_schema
			      ? root
			      : json_object_get(json_object_get(root, "$defs"), schema->name);
	if (def == NULL)
		g_error("no $defs entry for %s", schema->name);
	g_assert_true(json_is_false(json_object_get(def, "additionalProperties")));
	return json_object_get(def, "properties");
}

/* every key of every table, walked the way the loader does, is in the schema: none is missed */
static void
assert_section_described(json_t *root, const SflConfigSchema *schema, GHashTable *seen,
			 guint *count)
{
	json_t *properties = schema_properties(root, schema);
	json_t *required = json_object_get(
		schema == &sfl_config_root_schema
			? root
			: json_object_get(json_object_get(root, "$defs"), schema->name),
		"required");
	guint n_required = 0;
	guint n_fields = 0;

	if (!g_hash_table_add(seen, (gpointer)schema))
		return;
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		json_t *p = json_object_get(properties, f->key);
		const gchar *description = json_string_value(json_object_get(p, "description"));
		if (p == NULL)
			g_error("%s.%s is not in the schema", schema->name, f->key);
		(*count)++;
		n_fields++;
		g_assert_nonnull(description);
		if (f->help != NULL)
			g_assert_true(g_str_has_prefix(description, f->help));
		if (f->type == SFL_CONFIG_TYPE_SECRET) {
			/* a secret's value never appears, not even a default */
			g_assert_null(json_object_get(p, "default"));
			g_assert_null(json_object_get(p, "examples"));
			g_assert_nonnull(strstr(description, "_file"));
		}
		if (f->flags & SFL_CONFIG_FIELD_REQUIRED) {
			gboolean listed = FALSE;
			gsize i;
			json_t *v;
			json_array_foreach (required, i, v)
				listed |= g_str_equal(json_string_value(v), f->key);
			g_assert_true(listed);
			n_required++;
		}
		if (f->schema != NULL)
			assert_section_described(root, f->schema, seen, count);
	}
	/* and nothing the tables do not have */
	g_assert_cmpuint(json_object_size(properties), ==, n_fields);
	g_assert_cmpuint(json_array_size(required), ==, n_required);
}

static void
test_schema_covers_tables(void)
{
	json_t *root = load_schema();
	g_autoptr(GHashTable) seen = g_hash_table_new(NULL, NULL);
	guint count = 0;

	g_assert_cmpstr(json_string_value(json_object_get(root, "$schema")), ==,
			"https://json-schema.org/draft/2020-12/schema");
	assert_section_described(root, &sfl_config_root_schema, seen, &count);
	/* one $defs entry per section plus the four shared value grammars */
	g_assert_cmpuint(json_object_size(json_object_get(root, "$defs")), ==,
			 g_hash_table_size(seen) - 1 + 4);
	g_assert_cmpuint(count, >, 100);
	json_decref(root);
}

static json_t *
property(json_t *root, const gchar *def, const gchar *key)
{
	json_t *p = json_object_get(
		json_object_get(json_object_get(json_object_get(root, "$defs"), def), "properties"),
		key);
	if (p == NULL)
		g_error("no %s.%s", def, key);
	return p;
}

/* the first anyOf branch that carries @keyword */
static json_t *
branch_with(json_t *p, const gchar *keyword)
{
	gsize i;
	json_t *b;
	if (json_object_get(p, keyword) != NULL)
		return p;
	json_array_foreach (json_object_get(p, "anyOf"), i, b) {
		if (json_object_get(b, keyword) != NULL)
			return b;
	}
	g_error("no branch with %s", keyword);
}

static void
test_schema_values(void)
{
	json_t *root = load_schema();
	json_t *p;

	/* bounds, in the table's units (seconds for durations) */
	p = branch_with(property(root, "PubSubConfig", "default_num_requested"), "maximum");
	g_assert_cmpint(json_integer_value(json_object_get(p, "minimum")), ==, 1);
	g_assert_cmpint(json_integer_value(json_object_get(p, "maximum")), ==, 100);
	p = branch_with(property(root, "SalesforceConfig", "token_ttl"), "minimum");
	g_assert_cmpint(json_integer_value(json_object_get(p, "minimum")), ==, 120);
	p = branch_with(property(root, "ApexLogConfig", "sample"), "exclusiveMinimum");
	g_assert_cmpint(json_integer_value(json_object_get(p, "exclusiveMinimum")), ==, 0);
	/* defaults as the field reads them: durations formatted, numbers typed */
	g_assert_cmpstr(json_string_value(json_object_get(
				property(root, "ServiceConfig", "shutdown_grace"), "default")),
			==, "25s");
	g_assert_cmpint(json_integer_value(json_object_get(
				property(root, "BatchConfig", "max_entries"), "default")),
			==, 1000);
	g_assert_true(json_is_false(
		json_object_get(property(root, "LimitsConfig", "enabled"), "default")));
	/* choices, and the table's anchored pattern */
	p = branch_with(property(root, "StateConfig", "store"), "enum");
	g_assert_cmpuint(json_array_size(json_object_get(p, "enum")), ==, 3);
	p = branch_with(property(root, "SalesforceConfig", "api_version"), "pattern");
	g_assert_cmpstr(json_string_value(json_object_get(p, "pattern")), ==,
			"^(?:[0-9]+\\.[0-9]+$)");
	/* a secret's file names the pair */
	g_assert_nonnull(
		strstr(json_string_value(json_object_get(
			       property(root, "LokiConfig", "auth_token_file"), "description")),
		       "auth_token"));
	json_decref(root);
}

static GRegex *
def_pattern(json_t *root, const gchar *def)
{
	const gchar *pattern = json_string_value(
		json_object_get(json_object_get(json_object_get(root, "$defs"), def), "pattern"));
	g_autoptr(GError) error = NULL;
	GRegex *re = g_regex_new(pattern, 0, 0, &error);
	g_assert_no_error(error);
	return re;
}

/* the schema's duration and size grammars accept exactly what the loader's parsers do */
static void
test_schema_grammars(void)
{
	json_t *root = load_schema();
	g_autoptr(GRegex) duration = def_pattern(root, "durationText");
	g_autoptr(GRegex) size = def_pattern(root, "sizeText");
	const gchar *durations[] = { "500ms",	 "30s",	      "5m",	  "1h30m",	"1.5h",
				     "2d",	 "1w",	      "250us",	  "1m30s500ms", "PT5M",
				     "pt5m",	 "P1D",	      "P1DT2H",	  "P1W",	"PT1.5S",
				     "01:30:00", "1:02:03.5", "01:60:00", "1:00:60",	"5 minutes",
				     "1H",	 "h",	      "P",	  "PT",		"P1H",
				     "PT1D",	 "1.2.3s",    "-5s",	  "1h ",	"" };
	const gchar *sizes[] = { "512", "1_000", "256KiB", "4MiB", "1GB", "1.5GB", "500kB", "4 MiB",
				 "1b",	"1.5",	 "4 MB/s", "-1",   "KiB", "1XB",   "" };

	for (gsize i = 0; i < G_N_ELEMENTS(durations); i++) {
		SflDuration d = 0;
		gboolean parsed = sfl_duration_parse(durations[i], &d, NULL);
		gboolean matched = g_regex_match(duration, durations[i], 0, NULL);
		if (parsed != matched)
			g_error("duration '%s': the parser says %d, the schema %d", durations[i],
				parsed, matched);
	}
	for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
		gint64 bytes = 0;
		g_autofree gchar *plain = g_strdup(sizes[i]);
		gboolean parsed;
		gboolean matched = g_regex_match(size, sizes[i], 0, NULL);
		/* the loader reads digits with "_" separators as an integer first */
		g_strdelimit(plain, "_", '0');
		parsed = sfl_size_parse(strchr(sizes[i], '_') ? plain : sizes[i], &bytes, NULL) &&
			 sizes[i][0] != '-';
		if (parsed != matched)
			g_error("size '%s': the parser says %d, the schema %d", sizes[i], parsed,
				matched);
	}
	json_decref(root);
}

/* the marker region of deploy/helm/values.yaml, markers included */
static gchar *
values_region(const gchar *values)
{
	const gchar *begin = strstr(values, "# >>> BEGIN generated config");
	const gchar *end = begin != NULL ? strstr(begin, "# >>> END generated config <<<\n") : NULL;
	if (begin == NULL || end == NULL)
		g_error("deploy/helm/values.yaml has no BEGIN/END generated config markers");
	return g_strndup(begin, end + strlen("# >>> END generated config <<<\n") - begin);
}

static void
test_helm_values_drift(void)
{
	g_autofree gchar *values = sfl_test_read_source_file("deploy/helm/values.yaml");
	g_autofree gchar *committed = values_region(values);
	g_autofree gchar *generated = sfl_config_render_helm_values();
	assert_not_drifted(committed, generated, "the config: block of deploy/helm/values.yaml");
}

/* the block is the example under config:, with the chart's paths */
static void
test_helm_values_shape(void)
{
	g_autofree gchar *block = sfl_config_render_helm_values();
	g_autofree gchar *example = sfl_config_render_example();
	g_auto(GStrv) lines = g_strsplit(block, "\n", -1);
	guint in_config = 0;

	g_assert_true(g_str_has_prefix(block, "# >>> BEGIN generated config — do not edit"));
	g_assert_true(g_str_has_suffix(block, "# >>> END generated config <<<\n"));
	for (guint i = 0; lines[i] != NULL; i++) {
		if (g_str_equal(lines[i], "config:"))
			in_config = i;
		else if (in_config && lines[i][0] != '\0' && lines[i][0] != '#' &&
			 lines[i][0] != ' ')
			g_error("line %u of the block is outside config: '%s'", i, lines[i]);
	}
	g_assert_cmpuint(in_config, >, 0);
	g_assert_nonnull(
		strstr(block, "\n    private_key_file: /etc/sf2loki/secrets/private_key.pem"));
	g_assert_nonnull(strstr(block, "\n      path: /var/lib/sf2loki/state.json"));
	g_assert_nonnull(strstr(block, "\n      namespace: ${POD_NAMESPACE}"));
	g_assert_nonnull(strstr(block, "\n    health_addr: \":8080\""));
	/* every other active line of the example is there, indented once */
	{
		g_auto(GStrv) ex = g_strsplit(example, "\n", -1);
		guint i = 0;
		while (ex[i] != NULL && ex[i][0] != '\0')
			i++;
		for (; ex[i] != NULL; i++) {
			g_autofree gchar *indented = g_strdup_printf("\n  %s\n", ex[i]);
			if (ex[i][0] == '\0' || strstr(ex[i], "private_key_file: ${") ||
			    strstr(ex[i], "  path: /") || strstr(ex[i], "namespace: default"))
				continue;
			if (strstr(block, indented) == NULL)
				g_error("the example's line '%s' is not in the block", ex[i]);
		}
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/config-artifacts/schema/drift", test_schema_drift);
	g_test_add_func("/sfl/config-artifacts/schema/covers-tables", test_schema_covers_tables);
	g_test_add_func("/sfl/config-artifacts/schema/values", test_schema_values);
	g_test_add_func("/sfl/config-artifacts/schema/grammars", test_schema_grammars);
	g_test_add_func("/sfl/config-artifacts/helm-values/drift", test_helm_values_drift);
	g_test_add_func("/sfl/config-artifacts/helm-values/shape", test_helm_values_shape);
	return g_test_run();
}
