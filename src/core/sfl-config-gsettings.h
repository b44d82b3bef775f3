/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-config.h"

G_BEGIN_DECLS

/*
 * GSettings as a configuration layer (docs/configuration.md): the schema org.sf2loki is
 * generated from the tables (sfl-config-gschema.c), one child schema per section, and a
 * load reads only the keys a user set, so everything else falls through to YAML and the
 * defaults.
 */

#define SFL_GSETTINGS_SCHEMA_ID	  "org.sf2loki"
#define SFL_GSETTINGS_SCHEMA_PATH "/org/sf2loki/"
/* the keyfile group of the keys directly under SFL_GSETTINGS_SCHEMA_PATH */
#define SFL_GSETTINGS_KEYFILE_ROOT_GROUP "sf2loki"

/* "label_cardinality" → "label-cardinality": GSettings allows no '_' in names */
gchar *sfl_config_gsettings_name(const gchar *key) G_GNUC_WARN_UNUSED_RESULT;

/*
 * the GVariant type of @field's key, or NULL when the field is no key: SECRET fields (only
 * their *_file path is) and OBJECT fields (a child schema)
 */
const gchar *sfl_config_gsettings_type(const SflConfigField *field);

/* a YAML node as a GVariant of @type_string (the key's type), or NULL when it does not fit */
GVariant *sfl_config_gsettings_from_node(const SflConfigNode *node, const gchar *type_string);

/* a GVariant of a key as the node YAML would have produced; @origin names schema and key */
SflConfigNode *
sfl_config_gsettings_to_node(GVariant *value, GRefString *origin) G_GNUC_WARN_UNUSED_RESULT;

typedef struct _SflConfigGSettings SflConfigGSettings;

/*
 * Opens the backend and schema source @envp selects (DCONF_PROFILE → dconf, else
 * @keyfile if it exists, else none). Returns FALSE with @error when one was asked for but
 * cannot be used; *out is NULL when there is no backend (the layer is skipped).
 */
gboolean sfl_config_gsettings_open(gchar **envp, const gchar *keyfile, SflConfigGSettings **out,
				   GError **error);
void sfl_config_gsettings_free(SflConfigGSettings *gs);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflConfigGSettings, sfl_config_gsettings_free)

/*
 * a mapping node of the user-set keys, merged between YAML and the environment; values
 * GSettings itself refuses (a wrong type, an enum text not in its choices) and unknown keys of
 * a keyfile are problems in @ctx, each naming the schema and key
 */
SflConfigNode *
sfl_config_gsettings_read(SflConfigGSettings *gs, SflConfigContext *ctx) G_GNUC_WARN_UNUSED_RESULT;

/* sections merge key by key, lists and maps replace the file's value whole */
void sfl_config_gsettings_merge(const SflConfigSchema *schema, SflConfigNode *base,
				const SflConfigNode *overlay);

/* "keyfile PATH" or "dconf (DCONF_PROFILE=…)" for the dump header */
const gchar *sfl_config_gsettings_describe(const SflConfigGSettings *gs);

/* the keyfile default: gsettings/sf2loki.ini in the platform's system config directory */
gchar *sfl_config_gsettings_default_keyfile(GError **error) G_GNUC_WARN_UNUSED_RESULT;

/**
 * SflConfigWatch:
 *
 * Keeps GSettings objects for every schema of the layer alive and calls a function on any
 * "changed" signal (in @ctx), so the daemon can reload. A configuration that read no
 * GSettings gets a watch that never fires.
 */
typedef struct _SflConfigWatch SflConfigWatch;
typedef void (*SflConfigWatchFunc)(gpointer user_data);

SflConfigWatch *sfl_config_watch_new(const SflConfig *config, GMainContext *ctx,
				     SflConfigWatchFunc func, gpointer user_data);
void sfl_config_watch_free(SflConfigWatch *watch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflConfigWatch, sfl_config_watch_free)

G_END_DECLS
