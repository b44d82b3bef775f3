/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The checkpoint document: one JSON object of string keys to string values, in insertion
 * order. The text form is byte-compatible with the Python original's json.dumps (separators
 * ", " and ": ", ASCII-only with \uXXXX escapes, no trailing newline), so an operator can swap
 * binaries and keep the file.
 */

/* reserved keys look like __name__ and never reach sources */
#define SFL_STATE_KEY_FENCE_EPOCH "__fence_epoch__"
/* a work unit's own fence epoch under sharding: "__fence_epoch__:<unit>" (reserved too) */
#define SFL_STATE_KEY_UNIT_EPOCH_PREFIX "__fence_epoch__:"

typedef struct _SflStateDoc SflStateDoc;

SflStateDoc *sfl_state_doc_new(void);
SflStateDoc *sfl_state_doc_copy(const SflStateDoc *doc);
void sfl_state_doc_free(SflStateDoc *doc);

SflStateDoc *sfl_state_doc_parse(const gchar *data, gsize len, const gchar *origin,
				 GError **error) G_GNUC_WARN_UNUSED_RESULT;
gchar *sfl_state_doc_serialize(const SflStateDoc *doc, gsize *len) G_GNUC_WARN_UNUSED_RESULT;

const gchar *sfl_state_doc_get(const SflStateDoc *doc, const gchar *key);
void sfl_state_doc_set(SflStateDoc *doc, const gchar *key, const gchar *value);
gboolean sfl_state_doc_remove(SflStateDoc *doc, const gchar *key);
guint sfl_state_doc_size(const SflStateDoc *doc);
const gchar *sfl_state_doc_key_at(const SflStateDoc *doc, guint idx);
gboolean sfl_state_doc_equal(const SflStateDoc *a, const SflStateDoc *b);

gboolean sfl_state_key_is_reserved(const gchar *key);
/* the key that records @unit's epoch, or the store's own for %NULL (transfer full) */
gchar *sfl_state_epoch_key(const gchar *unit) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_state_doc_get_epoch(const SflStateDoc *doc, guint64 *epoch, GError **error);
/* the same for @unit's own epoch (%NULL: the store's) */
gboolean sfl_state_doc_get_unit_epoch(const SflStateDoc *doc, const gchar *unit, guint64 *epoch,
				      GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflStateDoc, sfl_state_doc_free)

G_END_DECLS
