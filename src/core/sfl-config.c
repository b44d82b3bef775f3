/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

#include "sfl-config.h"

#include <string.h>

#include "sfl-config-gsettings.h"
#include "sfl-error.h"
#include "sfl-redact.h"

/*
 * Problems never quote secret fields, but they may quote other values (a URL with userinfo,
 * say). Only the message is redacted: the "path: " prefix names keys such as
 * "salesforce.private_key", which the redactor would otherwise take for a secret assignment.
 */
static gchar *
sfl_config_redact_problem(const gchar *line)
{
	const gchar *sep = strstr(line, ": ");
	g_autofree gchar *rest = NULL;

	if (sep == NULL)
		return sfl_redact(line);
	rest = sfl_redact(sep + 2);
	return g_strdup_printf("%.*s: %s", (int)(sep - line), line, rest);
}

void
sfl_config_free(SflConfig *config)
{
	if (config == NULL)
		return;
	sfl_config_schema_clear(&sfl_config_root_schema, &config->data);
	g_clear_pointer(&config->root, sfl_config_node_free);
	g_clear_pointer(&config->gsettings, sfl_config_gsettings_free);
	g_free(config->path);
	g_free(config);
}

typedef struct {
	gboolean file;
	gboolean gsettings;
	gboolean env;
	gchar *keyfile;
} SflConfigSources;

/* the keys the pre-pass reads, and the only ones a file outside the sources still gives */
static const gchar *const sfl_config_prepass_keys[] = { "config_sources", "gsettings_keyfile",
							NULL };

/*
 * Which layers to read is itself configuration, but it cannot come from GSettings (whether
 * GSettings is read would depend on GSettings), so a pre-pass reads service.config_sources
 * and service.gsettings_keyfile from the file and the environment only. Its problems are
 * left to the main pass, which reports them with the rest; until then the defaults apply.
 */
static void
sfl_config_prepass(const SflConfigNode *root, gchar **envp, SflConfigSources *out)
{
	g_autoptr(SflConfigNode) copy = sfl_config_node_copy(root);
	SflConfigContext scratch;
	const SflConfigNode *service, *list, *keyfile;

	out->file = out->gsettings = out->env = TRUE;
	out->keyfile = NULL;
	sfl_config_context_init(&scratch, envp);
	sfl_config_schema_apply_env(&sfl_config_root_schema, copy, envp, &scratch);
	sfl_config_context_clear(&scratch);

	service = sfl_config_node_lookup(copy, "service");
	if (service == NULL || service->kind != SFL_CONFIG_NODE_MAPPING)
		return;
	list = sfl_config_node_lookup(service, "config_sources");
	if (list != NULL && list->kind == SFL_CONFIG_NODE_SEQUENCE) {
		out->file = out->gsettings = out->env = FALSE;
		for (guint i = 0; i < list->items->len; i++) {
			const SflConfigNode *item = g_ptr_array_index(list->items, i);
			if (item->kind != SFL_CONFIG_NODE_SCALAR)
				continue;
			out->file |= g_str_equal(item->text, "file");
			out->gsettings |= g_str_equal(item->text, "gsettings");
			out->env |= g_str_equal(item->text, "env");
		}
	}
	keyfile = sfl_config_node_lookup(service, "gsettings_keyfile");
	if (keyfile != NULL && keyfile->kind == SFL_CONFIG_NODE_SCALAR)
		out->keyfile = g_strdup(keyfile->text);
}

/* a root holding only the pre-pass keys of @root, for a file left out of the sources */
static SflConfigNode *
sfl_config_prepass_only(const SflConfigNode *root)
{
	SflConfigNode *out = sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, root->origin);
	const SflConfigNode *service = sfl_config_node_lookup(root, "service");
	SflConfigNode *kept = NULL;

	if (service == NULL || service->kind != SFL_CONFIG_NODE_MAPPING)
		return out;
	for (guint i = 0; sfl_config_prepass_keys[i] != NULL; i++) {
		const SflConfigNode *v =
			sfl_config_node_lookup(service, sfl_config_prepass_keys[i]);
		if (v == NULL)
			continue;
		if (kept == NULL)
			kept = sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, service->origin);
		sfl_config_node_set(kept, sfl_config_prepass_keys[i], sfl_config_node_copy(v));
	}
	if (kept != NULL)
		sfl_config_node_set(out, "service", kept);
	return out;
}

/**
 * sfl_config_load_from_data:
 * @data: YAML text
 * @len: its length
 * @origin: a name for messages, usually the file path
 * @envp: (nullable): the environment for ${VAR} and SF2LOKI_* overrides
 * @error: return location for an error
 *
 * Every problem found is reported, one "path: message [where]" per line of the error
 * message, with the %SFL_ERROR_INVALID_CONFIG code. Resolved secrets are registered with the
 * redactor so they can never reach a log line.
 *
 * Returns: (transfer full): the configuration, or %NULL
 */
SflConfig *
sfl_config_load_from_data(const gchar *data, gsize len, const gchar *origin, gchar **envp,
			  GError **error)
{
	g_autoptr(SflConfigNode) root = NULL;
	g_autoptr(SflConfig) config = g_new0(SflConfig, 1);
	SflConfigContext ctx;
	SflConfigSources sources;

	g_return_val_if_fail(data != NULL || len == 0, NULL);
	g_return_val_if_fail(origin != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	root = sfl_config_node_from_yaml(data, len, origin, error);
	if (root == NULL)
		return NULL;
	if (root->kind != SFL_CONFIG_NODE_MAPPING) {
		g_autofree gchar *where = sfl_config_node_where(root);
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "%s: the top level of the configuration must be a mapping", where);
		return NULL;
	}

	sfl_config_context_init(&ctx, envp);
	/* defaults < file < GSettings < environment, per leaf (docs/configuration.md) */
	sfl_config_prepass(root, envp, &sources);
	if (!sources.file) {
		SflConfigNode *only = sfl_config_prepass_only(root);
		sfl_config_node_free(root);
		root = only;
	}
	if (sources.gsettings) {
		g_autoptr(GError) gerror = NULL;
		if (!sfl_config_gsettings_open(envp, sources.keyfile, &config->gsettings,
					       &gerror)) {
			sfl_config_error(&ctx, "service.config_sources", NULL, "%s",
					 gerror->message);
		} else if (config->gsettings != NULL) {
			g_autoptr(SflConfigNode) overlay =
				sfl_config_gsettings_read(config->gsettings, &ctx);
			sfl_config_gsettings_merge(&sfl_config_root_schema, root, overlay);
		}
	}
	g_free(sources.keyfile);
	if (sources.env)
		sfl_config_schema_apply_env(&sfl_config_root_schema, root, envp, &ctx);
	sfl_config_schema_load(&sfl_config_root_schema, &config->data, root, "", &ctx);

	if (ctx.errors->len > 0) {
		g_autoptr(GString) msg = g_string_new(NULL);
		for (guint i = 0; i < ctx.errors->len; i++) {
			g_autofree gchar *line =
				sfl_config_redact_problem(g_ptr_array_index(ctx.errors, i));
			g_string_append_printf(msg, "%s%s", i ? "\n" : "", line);
		}
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG, msg->str);
		sfl_config_context_clear(&ctx);
		return NULL;
	}
	for (guint i = 0; i < ctx.secrets->len; i++)
		sfl_redact_add_secret(g_ptr_array_index(ctx.secrets, i));
	sfl_config_context_clear(&ctx);
	config->root = g_steal_pointer(&root);
	return g_steal_pointer(&config);
}

/**
 * sfl_config_load:
 * @path: (nullable): a YAML file; %NULL loads defaults and the environment only
 * @envp: (nullable): the environment
 * @error: return location for an error
 *
 * Returns: (transfer full): the configuration, or %NULL
 */
SflConfig *
sfl_config_load(const gchar *path, gchar **envp, GError **error)
{
	g_autofree gchar *data = NULL;
	gsize len = 0;
	g_autoptr(GError) local = NULL;
	SflConfig *config;

	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (path == NULL)
		return sfl_config_load_from_data("", 0, "(no config file)", envp, error);
	if (!g_file_get_contents(path, &data, &len, &local)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "cannot read config file: %s", local->message);
		return NULL;
	}
	config = sfl_config_load_from_data(data, len, path, envp, error);
	if (config != NULL)
		config->path = g_strdup(path);
	return config;
}

/**
 * sfl_config_field_at:
 * @path: a dotted path through the schema, e.g. "coordinate.file_lease.ttl"
 *
 * Returns: (transfer none) (nullable): the field's table entry
 */
const SflConfigField *
sfl_config_field_at(const gchar *path)
{
	g_auto(GStrv) parts = g_strsplit(path, ".", -1);
	const SflConfigSchema *schema = &sfl_config_root_schema;
	const SflConfigField *field = NULL;

	for (guint i = 0; parts[i] != NULL; i++) {
		if (schema == NULL)
			return NULL;
		field = sfl_config_schema_find(schema, parts[i]);
		if (field == NULL)
			return NULL;
		schema = field->schema;
	}
	return field;
}

/**
 * sfl_config_enum_name:
 * @path: the dotted path of an ENUM key, e.g. "coordinate.type"
 * @value: the stored index
 *
 * Returns: (transfer none): the choice's text
 */
const gchar *
sfl_config_enum_name(const gchar *path, gint value)
{
	const SflConfigField *field = sfl_config_field_at(path);
	g_return_val_if_fail(field != NULL && field->type == SFL_CONFIG_TYPE_ENUM, NULL);
	g_return_val_if_fail(value >= 0 && value < (gint)g_strv_length((gchar **)field->choices),
			     NULL);
	return field->choices[value];
}
