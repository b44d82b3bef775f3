/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

/* the keyfile backend's constructor is only declared with this */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gsettingsbackend.h>

#include "sfl-config-gsettings.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-platform.h"

#define SFL_GSETTINGS_KEYFILE_NAME "sf2loki.ini"

struct _SflConfigGSettings {
	GSettingsBackend *backend;
	GSettingsSchemaSource *source;
	/* the keyfile read, or NULL for dconf */
	gchar *keyfile;
	gchar *describe;
	/* dconf: the profile has a writable database, so an unwritable key is a lock */
	gboolean dconf_user_layer;
};

void
sfl_config_gsettings_free(SflConfigGSettings *gs)
{
	if (gs == NULL)
		return;
	g_clear_object(&gs->backend);
	g_clear_pointer(&gs->source, g_settings_schema_source_unref);
	g_free(gs->keyfile);
	g_free(gs->describe);
	g_free(gs);
}

const gchar *
sfl_config_gsettings_describe(const SflConfigGSettings *gs)
{
	return gs->describe;
}

/**
 * sfl_config_gsettings_default_keyfile:
 *
 * Returns: (transfer full) (nullable): gsettings/sf2loki.ini in the platform's system
 * configuration directory (/etc/sf2loki, %ProgramData%\sf2loki)
 */
gchar *
sfl_config_gsettings_default_keyfile(GError **error)
{
	SflPlatformError perr = { 0 };
	gchar dir[4096];

	if (sfl_platform_default_dir(SFL_PLATFORM_DIR_CONFIG, SFL_PLATFORM_SCOPE_SYSTEM, dir,
				     sizeof(dir), &perr) != SFL_PLATFORM_OK) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG, "%s", perr.message);
		return NULL;
	}
	return g_build_filename(dir, "gsettings", SFL_GSETTINGS_KEYFILE_NAME, NULL);
}

/*
 * Whether the dconf profile lists a user (writable) database. Without one every key is
 * unwritable, and GSettings cannot tell a lock from a read-only profile, so no key is called
 * locked then (every system value applies anyway: nothing can override it).
 */
static gboolean
sfl_gsettings_profile_has_user_db(const gchar *profile)
{
	g_autofree gchar *path = g_path_is_absolute(profile)
					 ? g_strdup(profile)
					 : g_build_filename("/etc/dconf/profile", profile, NULL);
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return FALSE;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		const gchar *line = g_strchug(lines[i]);
		if (g_str_has_prefix(line, "user-db:") || g_str_has_prefix(line, "service-db:"))
			return TRUE;
	}
	return FALSE;
}

/* GSETTINGS_SCHEMA_DIR from @envp, never the process environment (tests pass their own) */
static GSettingsSchemaSource *
sfl_gsettings_source(gchar **envp, GError **error)
{
	const gchar *dirs = g_environ_getenv(envp, "GSETTINGS_SCHEMA_DIR");
	GSettingsSchemaSource *source = g_settings_schema_source_get_default();

	if (source != NULL)
		g_settings_schema_source_ref(source);
	if (dirs == NULL || dirs[0] == '\0')
		return source;
	{
		g_auto(GStrv) list = g_strsplit(dirs, G_SEARCHPATH_SEPARATOR_S, -1);
		/* the first directory wins, as in GLib's own handling of the variable */
		for (gint i = (gint)g_strv_length(list) - 1; i >= 0; i--) {
			GSettingsSchemaSource *next;
			g_autoptr(GError) local = NULL;
			if (list[i][0] == '\0')
				continue;
			next = g_settings_schema_source_new_from_directory(list[i], source, TRUE,
									   &local);
			if (next == NULL) {
				g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
					    "GSETTINGS_SCHEMA_DIR %s: %s", list[i], local->message);
				g_clear_pointer(&source, g_settings_schema_source_unref);
				return NULL;
			}
			g_clear_pointer(&source, g_settings_schema_source_unref);
			source = next;
		}
	}
	return source;
}

/**
 * sfl_config_gsettings_open:
 * @envp: the environment (DCONF_PROFILE, GSETTINGS_SCHEMA_DIR)
 * @keyfile: (nullable): service.gsettings_keyfile; %NULL is the platform's default
 * @out: (out) (transfer full) (nullable): the layer, or %NULL when no backend exists
 * @error: return location for an error
 *
 * Returns: FALSE when a backend exists but cannot be used
 */
gboolean
sfl_config_gsettings_open(gchar **envp, const gchar *keyfile, SflConfigGSettings **out,
			  GError **error)
{
	g_autoptr(SflConfigGSettings) gs = g_new0(SflConfigGSettings, 1);
	const gchar *profile = g_environ_getenv(envp, "DCONF_PROFILE");
	g_autoptr(GSettingsSchema) schema = NULL;

	*out = NULL;
	if (profile != NULL && profile[0] != '\0') {
		/*
		 * dconf reads DCONF_PROFILE itself; the backend is GIO's default, a singleton
		 * that only the dconf module provides (dconf-gsettings-backend)
		 */
		GSettingsBackend *backend = g_settings_backend_get_default();
		const gchar *type = G_OBJECT_TYPE_NAME(backend);
		if (!g_str_equal(type, "DConfSettingsBackend")) {
			g_object_unref(backend);
			g_set_error(
				error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				"gsettings: DCONF_PROFILE is set (%s) but GIO's GSettings backend "
				"is %s, not dconf: install the dconf GIO module "
				"(dconf-gsettings-backend) or unset DCONF_PROFILE to use the "
				"keyfile",
				profile, type);
			return FALSE;
		}
		gs->backend = backend;
		gs->dconf_user_layer = sfl_gsettings_profile_has_user_db(profile);
		gs->describe = g_strdup_printf("dconf (DCONF_PROFILE=%s)", profile);
	} else {
		g_autofree gchar *path = NULL;
		if (keyfile != NULL && keyfile[0] != '\0') {
			path = g_strdup(keyfile);
		} else {
			path = sfl_config_gsettings_default_keyfile(NULL);
			if (path == NULL)
				return TRUE;
		}
		/* an absent keyfile is no layer: GSettings is optional on every host */
		if (!g_file_test(path, G_FILE_TEST_EXISTS))
			return TRUE;
		gs->backend = g_keyfile_settings_backend_new(path, SFL_GSETTINGS_SCHEMA_PATH,
							     SFL_GSETTINGS_KEYFILE_ROOT_GROUP);
		gs->describe = g_strdup_printf("keyfile %s", path);
		gs->keyfile = g_steal_pointer(&path);
	}

	gs->source = sfl_gsettings_source(envp, error);
	if (gs->source == NULL && error != NULL && *error != NULL)
		return FALSE;
	if (gs->source != NULL)
		schema = g_settings_schema_source_lookup(gs->source, SFL_GSETTINGS_SCHEMA_ID, TRUE);
	if (schema == NULL) {
		g_set_error(
			error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			"gsettings: the GSettings schema %s is not installed (needed for the %s): "
			"install org.sf2loki.gschema.xml into the glib-2.0/schemas directory "
			"and run glib-compile-schemas there, point GSETTINGS_SCHEMA_DIR at a "
			"compiled copy, or leave gsettings out of service.config_sources",
			SFL_GSETTINGS_SCHEMA_ID, gs->describe);
		return FALSE;
	}
	*out = g_steal_pointer(&gs);
	return TRUE;
}

/* --- GVariant → node -------------------------------------------------------------------- */

SflConfigNode *
sfl_config_gsettings_to_node(GVariant *value, GRefString *origin)
{
	gchar buf[G_ASCII_DTOSTR_BUF_SIZE];

	if (g_variant_is_of_type(value, G_VARIANT_TYPE_VARIANT)) {
		g_autoptr(GVariant) inner = g_variant_get_variant(value);
		return sfl_config_gsettings_to_node(inner, origin);
	}
	if (g_variant_type_is_maybe(g_variant_get_type(value))) {
		g_autoptr(GVariant) inner = g_variant_get_maybe(value);
		if (inner == NULL)
			return sfl_config_node_new(SFL_CONFIG_NODE_NULL, origin);
		return sfl_config_gsettings_to_node(inner, origin);
	}
	switch (g_variant_classify(value)) {
	case G_VARIANT_CLASS_BOOLEAN:
		return sfl_config_node_new_scalar(g_variant_get_boolean(value) ? "true" : "false",
						  FALSE, origin);
	case G_VARIANT_CLASS_BYTE:
	case G_VARIANT_CLASS_INT16:
	case G_VARIANT_CLASS_UINT16:
	case G_VARIANT_CLASS_INT32:
	case G_VARIANT_CLASS_UINT32:
	case G_VARIANT_CLASS_INT64:
	case G_VARIANT_CLASS_UINT64: {
		/* the printer spells every integer type as plain digits */
		g_autofree gchar *text = g_variant_print(value, FALSE);
		return sfl_config_node_new_scalar(text, FALSE, origin);
	}
	case G_VARIANT_CLASS_DOUBLE:
		return sfl_config_node_new_scalar(
			g_ascii_dtostr(buf, sizeof(buf), g_variant_get_double(value)), FALSE,
			origin);
	case G_VARIANT_CLASS_STRING:
	case G_VARIANT_CLASS_OBJECT_PATH:
	case G_VARIANT_CLASS_SIGNATURE:
		/* quoted: a string key's value is never a number, bool or null to the loader */
		return sfl_config_node_new_scalar(g_variant_get_string(value, NULL), TRUE, origin);
	case G_VARIANT_CLASS_ARRAY: {
		const GVariantType *elem = g_variant_type_element(g_variant_get_type(value));
		gsize n = g_variant_n_children(value);
		gboolean dict =
			g_variant_type_is_dict_entry(elem) &&
			g_variant_type_equal(g_variant_type_key(elem), G_VARIANT_TYPE_STRING);
		SflConfigNode *node = sfl_config_node_new(
			dict ? SFL_CONFIG_NODE_MAPPING : SFL_CONFIG_NODE_SEQUENCE, origin);
		for (gsize i = 0; i < n; i++) {
			g_autoptr(GVariant) child = g_variant_get_child_value(value, i);
			if (dict) {
				g_autoptr(GVariant) k = g_variant_get_child_value(child, 0);
				g_autoptr(GVariant) v = g_variant_get_child_value(child, 1);
				sfl_config_node_set(node, g_variant_get_string(k, NULL),
						    sfl_config_gsettings_to_node(v, origin));
			} else {
				g_ptr_array_add(node->items,
						sfl_config_gsettings_to_node(child, origin));
			}
		}
		return node;
	}
	default: {
		/* tuples and other shapes no key has: the loader says what it expected */
		g_autofree gchar *text = g_variant_print(value, TRUE);
		return sfl_config_node_new_scalar(text, TRUE, origin);
	}
	}
}

/* --- reading --------------------------------------------------------------------------- */

/* the keyfile group of a schema path under /org/sf2loki/ */
static gchar *
sfl_gsettings_group(const gchar *path)
{
	const gchar *rel = path + strlen(SFL_GSETTINGS_SCHEMA_PATH);
	if (rel[0] == '\0')
		return g_strdup(SFL_GSETTINGS_KEYFILE_ROOT_GROUP);
	return g_strndup(rel, strlen(rel) - 1);
}

typedef struct {
	SflConfigGSettings *gs;
	SflConfigContext *ctx;
	GKeyFile *keyfile;  /* the raw file, to name values GSettings drops; NULL for dconf */
	GHashTable *groups; /* keyfile groups that belong to a schema */
} SflGSettingsRead;

/*
 * The value a key sets, or NULL when it sets none. A keyfile holds only user values. dconf
 * hands the values of its read-only system databases to GSettings as defaults, so a key
 * whose default differs from the schema's was set there; a locked key enforces its
 * database value (or the schema default) over the user's and over YAML.
 */
static GVariant *
sfl_gsettings_value(SflGSettingsRead *r, GSettings *settings, GSettingsSchema *gschema,
		    const gchar *name, gboolean *locked)
{
	g_autoptr(GVariant) user = g_settings_get_user_value(settings, name);
	g_autoptr(GSettingsSchemaKey) key = NULL;
	g_autoptr(GVariant) system = NULL;
	g_autoptr(GVariant) schema_default = NULL;

	*locked = FALSE;
	if (r->keyfile != NULL)
		return g_steal_pointer(&user);
	/* a keyfile the service cannot write is no lock, so only dconf is asked */
	*locked = r->gs->dconf_user_layer && !g_settings_is_writable(settings, name);
	if (!*locked && user != NULL)
		return g_steal_pointer(&user);
	system = g_settings_get_default_value(settings, name);
	if (*locked)
		return g_steal_pointer(&system);
	key = g_settings_schema_get_key(gschema, name);
	schema_default = g_settings_schema_key_get_default_value(key);
	if (system == NULL || g_variant_equal(system, schema_default))
		return NULL;
	return g_steal_pointer(&system);
}

static SflConfigNode *
sfl_gsettings_read_schema(SflGSettingsRead *r, const SflConfigSchema *schema, const gchar *id,
			  const gchar *spath, const gchar *ypath)
{
	g_autoptr(GSettingsSchema) gschema =
		g_settings_schema_source_lookup(r->gs->source, id, TRUE);
	g_autoptr(GSettings) settings = NULL;
	g_autofree gchar *group = sfl_gsettings_group(spath);
	SflConfigNode *out = NULL;

	if (gschema == NULL) {
		sfl_config_error(r->ctx, ypath[0] ? ypath : "(top level)", NULL,
				 "the installed GSettings schema has no %s: it is older than this "
				 "binary (install the schema of this version)",
				 id);
		return NULL;
	}
	settings = g_settings_new_full(gschema, r->gs->backend, NULL);
	g_hash_table_add(r->groups, g_strdup(group));

	if (r->keyfile != NULL && g_key_file_has_group(r->keyfile, group)) {
		g_auto(GStrv) keys = g_key_file_get_keys(r->keyfile, group, NULL, NULL);
		for (guint i = 0; keys != NULL && keys[i] != NULL; i++) {
			if (!g_settings_schema_has_key(gschema, keys[i]))
				sfl_config_error(
					r->ctx, ypath[0] ? ypath : "(top level)", NULL,
					"unknown key '%s' in group [%s] [gsettings:%s, %s]",
					keys[i], group, id, r->gs->keyfile);
		}
	}

	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		const gchar *type = sfl_config_gsettings_type(f);
		g_autofree gchar *name = sfl_config_gsettings_name(f->key);
		g_autofree gchar *fpath = sfl_config_path_join(ypath, f->key);
		SflConfigNode *node = NULL;

		if (f->type == SFL_CONFIG_TYPE_OBJECT) {
			g_autofree gchar *child_id = g_strdup_printf("%s.%s", id, name);
			g_autofree gchar *child_path = g_strdup_printf("%s%s/", spath, name);
			node = sfl_gsettings_read_schema(r, f->schema, child_id, child_path, fpath);
		} else if (type != NULL) {
			g_autoptr(GVariant) value = NULL;
			gboolean locked = FALSE;
			g_autofree gchar *origin = NULL;
			g_autoptr(GRefString) ref = NULL;

			if (!g_settings_schema_has_key(gschema, name)) {
				sfl_config_error(r->ctx, fpath, NULL,
						 "the installed GSettings schema %s has no key %s: "
						 "install the schema of this version",
						 id, name);
				continue;
			}
			value = sfl_gsettings_value(r, settings, gschema, name, &locked);
			if (value == NULL) {
				/* GSettings drops what does not parse or fit: say so, not fall back
				 */
				g_autofree gchar *raw =
					r->keyfile != NULL ? g_key_file_get_value(r->keyfile, group,
										  name, NULL)
							   : NULL;
				if (raw != NULL)
					sfl_config_error(
						r->ctx, fpath, NULL,
						"not a valid %s value%s: %s "
						"[gsettings:%s %s]",
						type,
						f->type == SFL_CONFIG_TYPE_ENUM ||
								f->flags & (SFL_CONFIG_FIELD_MIN |
									    SFL_CONFIG_FIELD_MAX)
							? " (or outside its choices or range)"
							: "",
						raw, id, name);
				continue;
			}
			/* nothing in a maybe key that has a default: the default applies */
			if (type[0] == 'm' && !(f->flags & SFL_CONFIG_FIELD_NULLABLE) &&
			    g_variant_n_children(value) == 0)
				continue;
			origin = g_strdup_printf("gsettings:%s %s%s", id, name,
						 locked ? " (locked)" : "");
			ref = g_ref_string_new(origin);
			node = sfl_config_gsettings_to_node(value, ref);
		}
		if (node == NULL)
			continue;
		if (out == NULL)
			out = sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, NULL);
		sfl_config_node_set(out, f->key, node);
	}
	return out;
}

/**
 * sfl_config_gsettings_read:
 * @gs: an open layer
 * @ctx: the load context
 *
 * Returns: (transfer full): a mapping of the keys a user set (maybe empty)
 */
SflConfigNode *
sfl_config_gsettings_read(SflConfigGSettings *gs, SflConfigContext *ctx)
{
	g_autoptr(GKeyFile) keyfile = NULL;
	g_autoptr(GHashTable) groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	SflGSettingsRead r = { .gs = gs, .ctx = ctx, .groups = groups };
	SflConfigNode *root;

	if (gs->keyfile != NULL) {
		g_autoptr(GError) error = NULL;
		keyfile = g_key_file_new();
		if (!g_key_file_load_from_file(keyfile, gs->keyfile, G_KEY_FILE_NONE, &error)) {
			sfl_config_error(ctx, "(gsettings)", NULL, "cannot read the keyfile %s: %s",
					 gs->keyfile, error->message);
			return sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, NULL);
		}
		r.keyfile = keyfile;
	}
	root = sfl_gsettings_read_schema(&r, &sfl_config_root_schema, SFL_GSETTINGS_SCHEMA_ID,
					 SFL_GSETTINGS_SCHEMA_PATH, "");
	if (keyfile != NULL) {
		g_auto(GStrv) names = g_key_file_get_groups(keyfile, NULL);
		for (guint i = 0; names[i] != NULL; i++) {
			if (!g_hash_table_contains(groups, names[i]))
				sfl_config_error(ctx, "(gsettings)", NULL,
						 "unknown group [%s] in the keyfile %s (groups are "
						 "schema paths below %s, e.g. [sink/loki])",
						 names[i], gs->keyfile, SFL_GSETTINGS_SCHEMA_PATH);
		}
	}
	return root != NULL ? root : sfl_config_node_new(SFL_CONFIG_NODE_MAPPING, NULL);
}

/* --- watching -------------------------------------------------------------------------- */

struct _SflConfigWatch {
	GSettingsBackend *backend;
	GPtrArray *settings; /* GSettings*, one per schema */
	SflConfigWatchFunc func;
	gpointer user_data;
};

static void
sfl_config_watch_changed(GSettings *settings, const gchar *key, gpointer data)
{
	SflConfigWatch *watch = data;
	g_debug("GSettings key %s changed", key);
	watch->func(watch->user_data);
}

static void
sfl_config_watch_schema(SflConfigWatch *watch, GSettingsSchemaSource *source,
			const SflConfigSchema *schema, const gchar *id)
{
	g_autoptr(GSettingsSchema) gschema = g_settings_schema_source_lookup(source, id, TRUE);
	GSettings *settings;

	if (gschema == NULL)
		return;
	settings = g_settings_new_full(gschema, watch->backend, NULL);
	g_signal_connect(settings, "changed", G_CALLBACK(sfl_config_watch_changed), watch);
	g_ptr_array_add(watch->settings, settings);
	for (const SflConfigField *f = schema->fields; f->key != NULL; f++) {
		g_autofree gchar *name = NULL;
		g_autofree gchar *child_id = NULL;
		if (f->type != SFL_CONFIG_TYPE_OBJECT)
			continue;
		name = sfl_config_gsettings_name(f->key);
		child_id = g_strdup_printf("%s.%s", id, name);
		sfl_config_watch_schema(watch, source, f->schema, child_id);
	}
}

/**
 * sfl_config_watch_new:
 * @config: a loaded configuration
 * @ctx: (nullable): where "changed" is delivered; %NULL is the global default context
 * @func: called on any change of a key of the layer
 * @user_data: for @func
 *
 * Returns: (transfer full): the watch; free it before @ctx goes away
 */
SflConfigWatch *
sfl_config_watch_new(const SflConfig *config, GMainContext *ctx, SflConfigWatchFunc func,
		     gpointer user_data)
{
	SflConfigWatch *watch = g_new0(SflConfigWatch, 1);
	const SflConfigGSettings *gs = config->gsettings;

	watch->settings = g_ptr_array_new_with_free_func(g_object_unref);
	watch->func = func;
	watch->user_data = user_data;
	if (gs == NULL)
		return watch;

	/* GSettings and the keyfile's file monitor signal in the context current at creation */
	g_main_context_push_thread_default(ctx);
	if (gs->keyfile != NULL)
		watch->backend = g_keyfile_settings_backend_new(
			gs->keyfile, SFL_GSETTINGS_SCHEMA_PATH, SFL_GSETTINGS_KEYFILE_ROOT_GROUP);
	else
		watch->backend = g_object_ref(gs->backend);
	sfl_config_watch_schema(watch, gs->source, &sfl_config_root_schema,
				SFL_GSETTINGS_SCHEMA_ID);
	g_main_context_pop_thread_default(ctx);
	return watch;
}

void
sfl_config_watch_free(SflConfigWatch *watch)
{
	if (watch == NULL)
		return;
	for (guint i = 0; i < watch->settings->len; i++)
		g_signal_handlers_disconnect_by_data(g_ptr_array_index(watch->settings, i), watch);
	g_ptr_array_unref(watch->settings);
	g_clear_object(&watch->backend);
	g_free(watch);
}

/**
 * sfl_config_gsettings_merge:
 * @schema: the table of @base
 * @base: the document so far, modified
 * @overlay: the GSettings layer
 *
 * Sections merge key by key; every other value (lists, maps) replaces the file's whole, as an
 * environment override does.
 */
void
sfl_config_gsettings_merge(const SflConfigSchema *schema, SflConfigNode *base,
			   const SflConfigNode *overlay)
{
	for (guint i = 0; i < overlay->keys->len; i++) {
		const gchar *key = g_ptr_array_index(overlay->keys, i);
		const SflConfigNode *ov = g_ptr_array_index(overlay->items, i);
		const SflConfigField *f = sfl_config_schema_find(schema, key);
		SflConfigNode *cur = sfl_config_node_lookup(base, key);

		if (f != NULL && f->type == SFL_CONFIG_TYPE_OBJECT && cur != NULL &&
		    cur->kind == SFL_CONFIG_NODE_MAPPING && ov->kind == SFL_CONFIG_NODE_MAPPING) {
			sfl_config_gsettings_merge(f->schema, cur, ov);
			continue;
		}
		sfl_config_node_set(base, key, sfl_config_node_copy(ov));
	}
}
