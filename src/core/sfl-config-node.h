/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * An untyped document tree with source positions. YAML and environment overrides are both
 * turned into this shape and merged before the schema gives the values types, so every error
 * can say where the offending value came from (file:line:column or the variable name).
 */

typedef enum {
	SFL_CONFIG_NODE_NULL,
	SFL_CONFIG_NODE_SCALAR,
	SFL_CONFIG_NODE_SEQUENCE,
	SFL_CONFIG_NODE_MAPPING,
} SflConfigNodeKind;

typedef struct _SflConfigNode SflConfigNode;

typedef struct {
	guint line;
	guint column;
} SflConfigPos;

struct _SflConfigNode {
	SflConfigNodeKind kind;
	gchar *text;	    /* SCALAR */
	gboolean quoted;    /* SCALAR: quoted or block style, so never a number/bool/null */
	gboolean from_yaml; /* ${VAR} interpolation applies only to file values */
	GPtrArray *keys;    /* MAPPING: gchar* */
	GPtrArray *items;   /* SEQUENCE and MAPPING values: SflConfigNode* */
	GArray *key_pos;    /* MAPPING: SflConfigPos of each key */
	GHashTable *index;  /* MAPPING: key → position + 1, so lookups stay O(1) */
	guint line;	    /* 1-based; 0 when not from a file */
	guint column;
	GRefString *origin; /* file path, or "env NAME" */
};

/* documents larger than this are refused before parsing */
#define SFL_CONFIG_MAX_DOCUMENT_BYTES (4 * 1024 * 1024)
#define SFL_CONFIG_MAX_DEPTH	      64
#define SFL_CONFIG_MAX_NODES	      200000

SflConfigNode *sfl_config_node_new(SflConfigNodeKind kind, GRefString *origin);
SflConfigNode *sfl_config_node_new_scalar(const gchar *text, gboolean quoted, GRefString *origin);
void sfl_config_node_free(SflConfigNode *node);
SflConfigNode *sfl_config_node_copy(const SflConfigNode *node);

SflConfigNode *sfl_config_node_from_yaml(const gchar *data, gsize len, const gchar *origin,
					 GError **error) G_GNUC_WARN_UNUSED_RESULT;
SflConfigNode *sfl_config_node_from_json(const gchar *text, const gchar *origin,
					 GError **error) G_GNUC_WARN_UNUSED_RESULT;

SflConfigNode *sfl_config_node_lookup(const SflConfigNode *mapping, const gchar *key);
gchar *sfl_config_node_where_key(const SflConfigNode *mapping, guint idx);
void sfl_config_node_set(SflConfigNode *mapping, const gchar *key, SflConfigNode *value);
void sfl_config_node_merge(SflConfigNode *base, const SflConfigNode *overlay);
gboolean sfl_config_node_is_null(const SflConfigNode *node);
gchar *sfl_config_node_where(const SflConfigNode *node);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflConfigNode, sfl_config_node_free)

G_END_DECLS
