/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-config.h"

G_BEGIN_DECLS

/*
 * The effective configuration as a flat list of leaves, walked from the typed struct through
 * the same tables as the loader, so defaults appear too. `config dump` prints it, a reload
 * diffs two of them, and the config hash is taken over it.
 */

typedef struct {
	/* dotted path; list items as "sources.pubsub.topics[0].topic_name" */
	gchar *path;
	/* canonical YAML flow text of the value; "<redacted>" for a set secret, "null" for none */
	gchar *value;
	/* secrets only: a SHA-256 of the value, so a rotated secret still counts as a change */
	gchar *digest;
	const SflConfigField *field;
} SflConfigLeaf;

void sfl_config_leaf_free(SflConfigLeaf *leaf);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflConfigLeaf, sfl_config_leaf_free)

/* (transfer full) (element-type SflConfigLeaf): in table order */
GPtrArray *sfl_config_leaves(const SflConfig *config) G_GNUC_WARN_UNUSED_RESULT;

/*
 * (transfer full) (element-type utf8): the dotted paths whose value differs between @old
 * and @new, including leaves present in only one of them (a list that grew or shrank)
 */
GPtrArray *
sfl_config_diff(const SflConfig *old, const SflConfig *new_config) G_GNUC_WARN_UNUSED_RESULT;

/*
 * where the value of the leaf at @path came from: "default", "file:PATH:LINE",
 * "gsettings:org.sf2loki.sink.loki url" (+ " (locked)" for a dconf lock) or "env:SF2LOKI_…"
 */
gchar *sfl_config_dup_origin(const SflConfig *config, const gchar *path) G_GNUC_WARN_UNUSED_RESULT;

/* 16 lowercase hex characters over every non-secret leaf (secrets never reach a metric) */
gchar *sfl_config_dup_hash(const SflConfig *config) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
