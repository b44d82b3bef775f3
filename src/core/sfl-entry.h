/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The records that travel from a source to the Loki sink.
 *
 * - SflLabels: one Loki stream label set. Immutable, refcounted and interned through an
 *   SflLabelsInterner, so equal sets are one object: grouping a batch into streams compares
 *   pointers, and the label string is rendered once per set, not once per entry.
 * - SflEntry: one log line with its timestamp, labels, structured metadata and the checkpoint
 *   it advances. One allocation holds the struct and every string it owns. Refcounted so a
 *   batch split for a retry can share entries; the line is the only thing that ever changes
 *   (the per-line cap shortens it in place, through the batch that owns it).
 * - SflBatch: the ordered entries handed to one push, with the sum of their line bytes.
 *
 * Strings are UTF-8. Constructors repair invalid sequences and NUL bytes to U+FFFD, so every
 * encoder downstream may treat lines and values as valid, NUL-free text.
 *
 * Threading: labels and entries may be read from any thread; interning and the last unref of
 * a label set take the interner's lock. A batch belongs to one thread at a time.
 */

/**
 * SflLabelPair:
 * @name: the label or structured-metadata name
 * @value: its value
 *
 * A borrowed name/value pair, used both to build label sets and as structured metadata.
 */
typedef struct {
	const gchar *name;
	const gchar *value;
} SflLabelPair;

typedef struct _SflLabels SflLabels;
typedef struct _SflLabelsInterner SflLabelsInterner;

SflLabelsInterner *sfl_labels_interner_new(void);
SflLabelsInterner *sfl_labels_interner_ref(SflLabelsInterner *self);
void sfl_labels_interner_unref(SflLabelsInterner *self);
guint sfl_labels_interner_size(SflLabelsInterner *self);

SflLabels *sfl_labels_intern(SflLabelsInterner *interner, const SflLabelPair *pairs, guint n_pairs,
			     GError **error) G_GNUC_WARN_UNUSED_RESULT;
SflLabels *sfl_labels_ref(SflLabels *self);
void sfl_labels_unref(SflLabels *self);
const gchar *sfl_labels_get_string(const SflLabels *self, gsize *len);
guint sfl_labels_get_n_pairs(const SflLabels *self);
const SflLabelPair *sfl_labels_get_pair(const SflLabels *self, guint idx);
const gchar *sfl_labels_lookup(const SflLabels *self, const gchar *name);

/**
 * SflEntry:
 * @timestamp_ns: Unix time in nanoseconds (UTC)
 * @labels: (nullable): the stream's label set; %NULL only for a checkpoint-only entry
 * @line: the log line, NUL-terminated, valid UTF-8
 * @line_len: bytes in @line, without the NUL
 * @metadata: (array length=n_metadata): structured metadata in the order given
 * @n_metadata: number of pairs in @metadata
 * @checkpoint_key: (nullable): the checkpoint stream this entry advances
 * @checkpoint_value: (nullable): the position it advances to
 * @checkpoint_only: a marker that only carries a checkpoint advance and is never sent to Loki
 *
 * Read-only for everyone but sfl-entry.c: the line changes only through
 * sfl_batch_cap_lines(), which keeps the batch's byte count right.
 */
typedef struct {
	/*< private >*/
	gint ref_count;
	gboolean checkpoint_shared; /* checkpoint_value is a GRefString held by the entry */
	/*< public >*/
	gboolean checkpoint_only;
	gint64 timestamp_ns;
	SflLabels *labels;
	gchar *line;
	gsize line_len;
	const SflLabelPair *metadata;
	guint n_metadata;
	const gchar *checkpoint_key;
	const gchar *checkpoint_value;
} SflEntry;

SflEntry *sfl_entry_new(gint64 timestamp_ns, SflLabels *labels, const gchar *line, gssize line_len,
			const SflLabelPair *metadata, guint n_metadata, const gchar *checkpoint_key,
			const gchar *checkpoint_value) G_GNUC_WARN_UNUSED_RESULT;
/*
 * As sfl_entry_new(), but the checkpoint value is shared rather than copied: a file's
 * thousands of rows all carry the same (possibly long) cursor, which then costs one
 * reference per row instead of a copy, and nothing against the lane's byte budget.
 */
SflEntry *
sfl_entry_new_shared(gint64 timestamp_ns, SflLabels *labels, const gchar *line, gssize line_len,
		     const SflLabelPair *metadata, guint n_metadata, const gchar *checkpoint_key,
		     GRefString *checkpoint_value) G_GNUC_WARN_UNUSED_RESULT;
SflEntry *sfl_entry_new_checkpoint_only(gint64 timestamp_ns, const gchar *checkpoint_key,
					const gchar *checkpoint_value) G_GNUC_WARN_UNUSED_RESULT;
SflEntry *sfl_entry_ref(SflEntry *self);
void sfl_entry_unref(SflEntry *self);
const gchar *sfl_entry_lookup_metadata(const SflEntry *self, const gchar *name);

typedef struct _SflBatch SflBatch;

SflBatch *sfl_batch_new(void);
void sfl_batch_free(SflBatch *self);
void sfl_batch_add(SflBatch *self, SflEntry *entry);
guint sfl_batch_get_length(const SflBatch *self);
SflEntry *sfl_batch_get(const SflBatch *self, guint idx);
guint64 sfl_batch_get_line_bytes(const SflBatch *self);
SflBatch *sfl_batch_slice(const SflBatch *self, guint start, guint len);
guint sfl_batch_cap_lines(SflBatch *self, gsize max_line_bytes);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflLabelsInterner, sfl_labels_interner_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflLabels, sfl_labels_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflEntry, sfl_entry_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflBatch, sfl_batch_free)

G_END_DECLS
