/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-config-node.h"

G_BEGIN_DECLS

/*
 * The configuration is described by tables, one per section. The same tables drive the YAML
 * and environment loader, validation, secret resolution, freeing, and the generated
 * config.example.yaml and docs/config-reference.md, so a key added to a table is documented
 * and validated with no other edit.
 *
 * Storage per type (the member at @offset in the section struct):
 *   BOOL gboolean · INT gint64 · FLOAT gdouble · DURATION SflDuration (µs) · SIZE gint64 bytes
 *   STRING/PATH/SECRET gchar* (NULL = null) · ENUM gint (index into @choices)
 *   STRING_LIST GStrv (NULL = null when NULLABLE) · STRING_MAP/FLOAT_MAP GPtrArray of SflConfigPair
 *   OBJECT the embedded struct (or a pointer to it when NULLABLE)
 *   OBJECT_LIST GPtrArray of structs allocated with the sub-schema's @struct_size
 */

typedef gint64 SflDuration;
#define SFL_DURATION_UNSET ((SflDuration)-1)

typedef enum {
	SFL_CONFIG_TYPE_BOOL,
	SFL_CONFIG_TYPE_INT,
	SFL_CONFIG_TYPE_FLOAT,
	SFL_CONFIG_TYPE_DURATION,
	SFL_CONFIG_TYPE_SIZE,
	SFL_CONFIG_TYPE_STRING,
	SFL_CONFIG_TYPE_PATH,
	SFL_CONFIG_TYPE_SECRET,
	SFL_CONFIG_TYPE_ENUM,
	SFL_CONFIG_TYPE_STRING_LIST,
	SFL_CONFIG_TYPE_STRING_MAP,
	SFL_CONFIG_TYPE_FLOAT_MAP,
	SFL_CONFIG_TYPE_OBJECT,
	SFL_CONFIG_TYPE_OBJECT_LIST,
} SflConfigType;

typedef enum {
	SFL_CONFIG_FIELD_REQUIRED = 1 << 0,
	/* null is a legal value, distinct from the default */
	SFL_CONFIG_FIELD_NULLABLE = 1 << 1,
	SFL_CONFIG_FIELD_MIN = 1 << 2,
	SFL_CONFIG_FIELD_MAX = 1 << 3,
	SFL_CONFIG_FIELD_MIN_EXCLUSIVE = 1 << 4,
	SFL_CONFIG_FIELD_CASE_INSENSITIVE = 1 << 5,
	/* a PATH naming the file that holds the SECRET field of the same name minus "_file" */
	SFL_CONFIG_FIELD_SECRET_FILE = 1 << 6,
	/* rendered commented out in the example (mutually exclusive alternatives) */
	SFL_CONFIG_FIELD_EXAMPLE_COMMENTED = 1 << 7,
} SflConfigFieldFlags;

typedef struct _SflConfigSchema SflConfigSchema;

typedef struct {
	const gchar *key;
	SflConfigType type;
	gsize offset;
	guint flags;
	/* default in YAML flow syntax, parsed by the same code as user input; NULL = zero/null */
	const gchar *def;
	/* bounds; durations in seconds, sizes in bytes */
	gdouble min;
	gdouble max;
	const gchar *const *choices;
	/* GRegex every string (or list item) must match in full */
	const gchar *pattern;
	const SflConfigSchema *schema;
	const gchar *help;
	/* YAML flow text the example shows instead of the default */
	const gchar *example;
	/* the Default column of the reference, when the default is computed */
	const gchar *def_doc;
	/*
	 * a PATH whose default is this file name in the platform's state directory for a system
	 * service (/var/lib/sf2loki on Linux and macOS, %ProgramData%\sf2loki on Windows), so a
	 * Windows build never defaults to a POSIX path; @def stays NULL
	 */
	const gchar *def_state_file;
} SflConfigField;

typedef struct {
	gchar *key;
	gchar *value;
	gdouble number;
} SflConfigPair;

/**
 * SflConfigContext:
 *
 * State of one load. Problems are collected, not thrown, so `sf2loki check` reports all of
 * them at once; the environment is explicit so tests never touch the process environment.
 */
typedef struct {
	GPtrArray *errors; /* of gchar*, each "path: message [where]" */
	gchar **envp;
	/* resolved secret values, handed to the redactor once loading is done */
	GPtrArray *secrets;
} SflConfigContext;

typedef void (*SflConfigValidateFunc)(gpointer obj, const SflConfigNode *node, const gchar *path,
				      SflConfigContext *ctx);

struct _SflConfigSchema {
	const gchar *name;
	const gchar *doc;
	gsize struct_size;
	const SflConfigField *fields; /* terminated by an entry with key == NULL */
	SflConfigValidateFunc validate;
	/* a bare scalar in place of the mapping is taken as this key (event_types: [Login]) */
	const gchar *scalar_key;
};

void sfl_config_context_init(SflConfigContext *ctx, gchar **envp);
void sfl_config_context_clear(SflConfigContext *ctx);
void sfl_config_error(SflConfigContext *ctx, const gchar *path, const SflConfigNode *where,
		      const gchar *format, ...) G_GNUC_PRINTF(4, 5);
gchar *sfl_config_path_join(const gchar *parent, const gchar *key);

void sfl_config_schema_load(const SflConfigSchema *schema, gpointer obj, const SflConfigNode *node,
			    const gchar *path, SflConfigContext *ctx);
void sfl_config_schema_apply_env(const SflConfigSchema *schema, SflConfigNode *root, gchar **envp,
				 SflConfigContext *ctx);
void sfl_config_schema_clear(const SflConfigSchema *schema, gpointer obj);
gboolean sfl_config_schema_is_secret(const SflConfigField *field);
gchar *sfl_config_default_state_file(const gchar *name, GError **error) G_GNUC_WARN_UNUSED_RESULT;
const SflConfigField *sfl_config_schema_find(const SflConfigSchema *schema, const gchar *key);
/* the first sentence of a table's help text, for summaries ("" when there is none) */
gchar *sfl_config_help_first_sentence(const gchar *help) G_GNUC_WARN_UNUSED_RESULT;

SflConfigPair *sfl_config_pair_new(const gchar *key, const gchar *value, gdouble number);
void sfl_config_pair_free(SflConfigPair *pair);
const SflConfigPair *sfl_config_map_lookup(GPtrArray *map, const gchar *key);

gboolean sfl_duration_parse(const gchar *text, SflDuration *out, GError **error);
gchar *sfl_duration_format(SflDuration duration) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_size_parse(const gchar *text, gint64 *out, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflConfigPair, sfl_config_pair_free)

G_END_DECLS
