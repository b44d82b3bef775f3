/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflEntry"

#include "config.h"

#include "sfl-entry.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-loki-labels.h"

struct _SflLabelsInterner {
	gint ref_count;
	/* guards the table and every label-set refcount that may reach zero */
	GMutex lock;
	/* rendered label string (owned by the value) → SflLabels, not holding a reference */
	GHashTable *sets;
};

struct _SflLabels {
	gint ref_count;
	SflLabelsInterner *interner;
	gchar *string;
	gsize string_len;
	guint n_pairs;
	/* sorted by name; the strings live in the same allocation, after the array */
	SflLabelPair pairs[];
};

struct _SflBatch {
	GPtrArray *entries;
	guint64 line_bytes;
};

/**
 * sfl_labels_interner_new:
 *
 * Returns: (transfer full): an empty interner; label sets keep it alive while they exist
 */
SflLabelsInterner *
sfl_labels_interner_new(void)
{
	SflLabelsInterner *self = g_new0(SflLabelsInterner, 1);

	self->ref_count = 1;
	g_mutex_init(&self->lock);
	self->sets = g_hash_table_new(g_str_hash, g_str_equal);
	return self;
}

/**
 * sfl_labels_interner_ref:
 * @self: an interner
 *
 * Returns: (transfer full): @self
 */
SflLabelsInterner *
sfl_labels_interner_ref(SflLabelsInterner *self)
{
	g_return_val_if_fail(self != NULL, NULL);
	g_atomic_int_inc(&self->ref_count);
	return self;
}

/**
 * sfl_labels_interner_unref:
 * @self: (nullable) (transfer full): an interner
 */
void
sfl_labels_interner_unref(SflLabelsInterner *self)
{
	if (self == NULL)
		return;
	if (!g_atomic_int_dec_and_test(&self->ref_count))
		return;
	/* every label set holds a reference, so the table is empty by now */
	g_warn_if_fail(g_hash_table_size(self->sets) == 0);
	g_hash_table_unref(self->sets);
	g_mutex_clear(&self->lock);
	g_free(self);
}

/**
 * sfl_labels_interner_size:
 * @self: an interner
 *
 * Returns: how many distinct label sets are alive
 */
guint
sfl_labels_interner_size(SflLabelsInterner *self)
{
	g_autoptr(GMutexLocker) locker = NULL;

	g_return_val_if_fail(self != NULL, 0);
	locker = g_mutex_locker_new(&self->lock);
	return g_hash_table_size(self->sets);
}

static gint
sfl_labels_pair_cmp(gconstpointer a, gconstpointer b)
{
	const SflLabelPair *pa = a;
	const SflLabelPair *pb = b;

	return strcmp(pa->name, pb->name);
}

/* returns @s, or a repaired copy parked in @scratch when it is not valid, NUL-free UTF-8 */
/* plain ASCII without NUL, 8 bytes at a time: every line a source renders as JSON */
static gboolean
sfl_entry_is_plain_ascii(const gchar *s, gsize len)
{
	const guint64 high = G_GUINT64_CONSTANT(0x8080808080808080);
	const guint64 ones = G_GUINT64_CONSTANT(0x0101010101010101);
	gsize i = 0;

	for (; i + 8 <= len; i += 8) {
		guint64 w;
		memcpy(&w, s + i, 8);
		if ((w & high) != 0 || ((w - ones) & ~w & high) != 0)
			return FALSE;
	}
	for (; i < len; i++) {
		if ((guchar)s[i] >= 0x80 || s[i] == '\0')
			return FALSE;
	}
	return TRUE;
}

static const gchar *
sfl_entry_valid_utf8(const gchar *s, gsize len, gsize *out_len, GPtrArray **scratch)
{
	gchar *fixed;

	if (sfl_entry_is_plain_ascii(s, len) || g_utf8_validate_len(s, len, NULL)) {
		*out_len = len;
		return s;
	}
	fixed = g_utf8_make_valid(s, (gssize)len);
	if (*scratch == NULL)
		*scratch = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(*scratch, fixed);
	*out_len = strlen(fixed);
	return fixed;
}

/* appends @len bytes and a NUL at *@cursor and returns where they went */
static gchar *
sfl_entry_put(gchar **cursor, const gchar *s, gsize len)
{
	gchar *dst = *cursor;

	memcpy(dst, s, len);
	dst[len] = '\0';
	*cursor = dst + len + 1;
	return dst;
}

static SflLabels *
sfl_labels_build(SflLabelsInterner *interner, const SflLabelPair *sorted, guint n_pairs,
		 const gchar *string, gsize string_len)
{
	gsize size = sizeof(SflLabels) + n_pairs * sizeof(SflLabelPair) + string_len + 1;
	SflLabels *self;
	gchar *cursor;

	for (guint i = 0; i < n_pairs; i++)
		size += strlen(sorted[i].name) + strlen(sorted[i].value) + 2;
	self = g_malloc(size);
	self->ref_count = 1;
	self->interner = sfl_labels_interner_ref(interner);
	self->n_pairs = n_pairs;
	cursor = (gchar *)&self->pairs[n_pairs];
	self->string = sfl_entry_put(&cursor, string, string_len);
	self->string_len = string_len;
	for (guint i = 0; i < n_pairs; i++) {
		self->pairs[i].name =
			sfl_entry_put(&cursor, sorted[i].name, strlen(sorted[i].name));
		self->pairs[i].value =
			sfl_entry_put(&cursor, sorted[i].value, strlen(sorted[i].value));
	}
	return self;
}

/**
 * sfl_labels_intern:
 * @interner: where equal sets are shared
 * @pairs: (array length=n_pairs): the labels, in any order
 * @n_pairs: number of pairs
 * @error: (nullable): set to %SFL_ERROR_INVALID_CONFIG for a bad or repeated name
 *
 * Validates and renders the set once, then returns the one live object for it. Values that
 * are not valid UTF-8 are repaired; empty values are kept, as the original does.
 *
 * Returns: (transfer full) (nullable): the shared label set, or %NULL with @error set
 */
SflLabels *
sfl_labels_intern(SflLabelsInterner *interner, const SflLabelPair *pairs, guint n_pairs,
		  GError **error)
{
	g_autofree SflLabelPair *sorted = NULL;
	g_autoptr(GPtrArray) scratch = NULL;
	g_autoptr(GMutexLocker) locker = NULL;
	g_autofree gchar *string = NULL;
	gsize string_len = 0;
	SflLabels *found;
	SflLabels *self;

	g_return_val_if_fail(interner != NULL, NULL);
	g_return_val_if_fail(pairs != NULL || n_pairs == 0, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	sorted = g_new(SflLabelPair, n_pairs + 1);
	for (guint i = 0; i < n_pairs; i++) {
		gsize value_len = 0;

		g_return_val_if_fail(pairs[i].name != NULL && pairs[i].value != NULL, NULL);
		sorted[i].name = pairs[i].name;
		sorted[i].value = sfl_entry_valid_utf8(pairs[i].value, strlen(pairs[i].value),
						       &value_len, &scratch);
	}
	qsort(sorted, n_pairs, sizeof(SflLabelPair), sfl_labels_pair_cmp);
	string = sfl_loki_label_string(sorted, n_pairs, &string_len, error);
	if (string == NULL)
		return NULL;

	locker = g_mutex_locker_new(&interner->lock);
	found = g_hash_table_lookup(interner->sets, string);
	if (found != NULL) {
		/* a set in the table always has a live reference: the last unref removes it */
		g_atomic_int_inc(&found->ref_count);
		return found;
	}
	self = sfl_labels_build(interner, sorted, n_pairs, string, string_len);
	g_hash_table_insert(interner->sets, self->string, self);
	return self;
}

/**
 * sfl_labels_ref:
 * @self: a label set
 *
 * Returns: (transfer full): @self
 */
SflLabels *
sfl_labels_ref(SflLabels *self)
{
	g_return_val_if_fail(self != NULL, NULL);
	g_atomic_int_inc(&self->ref_count);
	return self;
}

/**
 * sfl_labels_unref:
 * @self: (nullable) (transfer full): a label set
 */
void
sfl_labels_unref(SflLabels *self)
{
	SflLabelsInterner *interner;
	gboolean last;

	if (self == NULL)
		return;
	/* the common case never touches the lock: only a drop to zero races with interning */
	for (;;) {
		gint old = g_atomic_int_get(&self->ref_count);

		if (old <= 1)
			break;
		if (g_atomic_int_compare_and_exchange(&self->ref_count, old, old - 1))
			return;
	}
	interner = self->interner;
	g_mutex_lock(&interner->lock);
	last = g_atomic_int_dec_and_test(&self->ref_count);
	if (last)
		g_hash_table_remove(interner->sets, self->string);
	g_mutex_unlock(&interner->lock);
	if (!last)
		return;
	g_free(self);
	sfl_labels_interner_unref(interner);
}

/**
 * sfl_labels_get_string:
 * @self: a label set
 * @len: (out) (optional): the string's length in bytes
 *
 * Returns: (transfer none): the Loki label string, e.g. `{job="sf2loki", source="pubsub"}`
 */
const gchar *
sfl_labels_get_string(const SflLabels *self, gsize *len)
{
	g_return_val_if_fail(self != NULL, NULL);
	if (len != NULL)
		*len = self->string_len;
	return self->string;
}

/**
 * sfl_labels_get_n_pairs:
 * @self: a label set
 *
 * Returns: the number of labels
 */
guint
sfl_labels_get_n_pairs(const SflLabels *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->n_pairs;
}

/**
 * sfl_labels_get_pair:
 * @self: a label set
 * @idx: index below sfl_labels_get_n_pairs()
 *
 * Returns: (transfer none): the @idx-th label in name order
 */
const SflLabelPair *
sfl_labels_get_pair(const SflLabels *self, guint idx)
{
	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(idx < self->n_pairs, NULL);
	return &self->pairs[idx];
}

/**
 * sfl_labels_lookup:
 * @self: a label set
 * @name: a label name
 *
 * Returns: (transfer none) (nullable): the value of @name, or %NULL when absent
 */
const gchar *
sfl_labels_lookup(const SflLabels *self, const gchar *name)
{
	SflLabelPair key = { name, NULL };
	const SflLabelPair *hit;

	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(name != NULL, NULL);
	hit = bsearch(&key, self->pairs, self->n_pairs, sizeof(SflLabelPair), sfl_labels_pair_cmp);
	return hit != NULL ? hit->value : NULL;
}

/**
 * sfl_entry_new:
 * @timestamp_ns: Unix time in nanoseconds
 * @labels: (transfer none): the stream's label set; the entry takes its own reference
 * @line: the log line
 * @line_len: bytes in @line, or -1 when NUL-terminated
 * @metadata: (array length=n_metadata) (nullable): structured metadata, names unique
 * @n_metadata: number of pairs; a pair whose value is %NULL is left out, as the original
 *   drops `None` fields
 * @checkpoint_key: (nullable): the checkpoint stream this entry advances
 * @checkpoint_value: (nullable): the position it advances to
 *
 * Copies everything into one allocation. Invalid UTF-8 and NUL bytes in the line and in
 * metadata become U+FFFD, so the encoders never meet them.
 *
 * Returns: (transfer full): a new entry
 */
SflEntry *
sfl_entry_new(gint64 timestamp_ns, SflLabels *labels, const gchar *line, gssize line_len,
	      const SflLabelPair *metadata, guint n_metadata, const gchar *checkpoint_key,
	      const gchar *checkpoint_value)
{
	g_autoptr(GPtrArray) scratch = NULL;
	g_autofree SflLabelPair *md = NULL;
	g_autofree gsize *md_lens = NULL;
	gsize ulen = 0;
	gsize size = sizeof(SflEntry);
	gsize key_len = checkpoint_key != NULL ? strlen(checkpoint_key) : 0;
	gsize value_len = checkpoint_value != NULL ? strlen(checkpoint_value) : 0;
	guint n_md = 0;
	SflEntry *self;
	SflLabelPair *md_dst;
	gchar *cursor;

	g_return_val_if_fail(labels != NULL, NULL);
	g_return_val_if_fail(line != NULL || line_len == 0, NULL);
	g_return_val_if_fail(metadata != NULL || n_metadata == 0, NULL);

	if (line != NULL) {
		ulen = line_len < 0 ? strlen(line) : (gsize)line_len;
		line = sfl_entry_valid_utf8(line, ulen, &ulen, &scratch);
	} else {
		line = "";
	}
	md = g_new(SflLabelPair, n_metadata + 1);
	md_lens = g_new(gsize, 2 * (gsize)n_metadata + 2);
	for (guint i = 0; i < n_metadata; i++) {
		g_return_val_if_fail(metadata[i].name != NULL, NULL);
		if (metadata[i].value == NULL)
			continue;
		md[n_md].name = sfl_entry_valid_utf8(metadata[i].name, strlen(metadata[i].name),
						     &md_lens[2 * n_md], &scratch);
		md[n_md].value = sfl_entry_valid_utf8(metadata[i].value, strlen(metadata[i].value),
						      &md_lens[2 * n_md + 1], &scratch);
		size += md_lens[2 * n_md] + md_lens[2 * n_md + 1] + 2;
		n_md++;
	}
	size += n_md * sizeof(SflLabelPair) + ulen + 1;
	if (checkpoint_key != NULL)
		size += key_len + 1;
	if (checkpoint_value != NULL)
		size += value_len + 1;

	/* one block: the struct, the metadata array, then every string */
	self = g_malloc(size);
	self->ref_count = 1;
	self->checkpoint_shared = FALSE;
	self->checkpoint_only = FALSE;
	self->timestamp_ns = timestamp_ns;
	self->labels = sfl_labels_ref(labels);
	md_dst = (SflLabelPair *)(self + 1);
	cursor = (gchar *)(md_dst + n_md);
	self->line = sfl_entry_put(&cursor, line, ulen);
	self->line_len = ulen;
	for (guint i = 0; i < n_md; i++) {
		md_dst[i].name = sfl_entry_put(&cursor, md[i].name, md_lens[2 * i]);
		md_dst[i].value = sfl_entry_put(&cursor, md[i].value, md_lens[2 * i + 1]);
	}
	self->metadata = md_dst;
	self->n_metadata = n_md;
	self->checkpoint_key =
		checkpoint_key != NULL ? sfl_entry_put(&cursor, checkpoint_key, key_len) : NULL;
	self->checkpoint_value = checkpoint_value != NULL
					 ? sfl_entry_put(&cursor, checkpoint_value, value_len)
					 : NULL;
	return self;
}

/**
 * sfl_entry_new_checkpoint_only:
 * @timestamp_ns: when the marker was made
 * @checkpoint_key: the checkpoint stream
 * @checkpoint_value: (nullable): the position it advances to
 *
 * A marker that moves a checkpoint through the same FIFO as real data, so it is committed
 * only after everything queued ahead of it. Empty line, no labels, no metadata; never sent.
 *
 * Returns: (transfer full): a new entry
 */
SflEntry *
sfl_entry_new_checkpoint_only(gint64 timestamp_ns, const gchar *checkpoint_key,
			      const gchar *checkpoint_value)
{
	gsize key_len;
	gsize value_len;
	SflEntry *self;
	gchar *cursor;

	g_return_val_if_fail(checkpoint_key != NULL, NULL);
	key_len = strlen(checkpoint_key);
	value_len = checkpoint_value != NULL ? strlen(checkpoint_value) : 0;
	self = g_malloc(sizeof(SflEntry) + 1 + key_len + 1 + value_len + 1);
	self->ref_count = 1;
	self->checkpoint_shared = FALSE;
	self->checkpoint_only = TRUE;
	self->timestamp_ns = timestamp_ns;
	self->labels = NULL;
	self->metadata = NULL;
	self->n_metadata = 0;
	cursor = (gchar *)(self + 1);
	self->line = sfl_entry_put(&cursor, "", 0);
	self->line_len = 0;
	self->checkpoint_key = sfl_entry_put(&cursor, checkpoint_key, key_len);
	self->checkpoint_value = checkpoint_value != NULL
					 ? sfl_entry_put(&cursor, checkpoint_value, value_len)
					 : NULL;
	return self;
}

/**
 * sfl_entry_new_shared:
 * @timestamp_ns: Unix time in nanoseconds
 * @labels: the stream's label set
 * @line: the log line
 * @line_len: its length, or -1 when NUL-terminated
 * @metadata: (array length=n_metadata) (nullable): structured metadata
 * @n_metadata: number of pairs
 * @checkpoint_key: the checkpoint stream
 * @checkpoint_value: the position, shared (a reference is taken)
 *
 * Returns: (transfer full): a new entry
 */
SflEntry *
sfl_entry_new_shared(gint64 timestamp_ns, SflLabels *labels, const gchar *line, gssize line_len,
		     const SflLabelPair *metadata, guint n_metadata, const gchar *checkpoint_key,
		     GRefString *checkpoint_value)
{
	SflEntry *self = NULL;

	g_return_val_if_fail(checkpoint_key != NULL, NULL);
	g_return_val_if_fail(checkpoint_value != NULL, NULL);
	self = sfl_entry_new(timestamp_ns, labels, line, line_len, metadata, n_metadata,
			     checkpoint_key, NULL);
	if (self == NULL)
		return NULL;
	self->checkpoint_value = g_ref_string_acquire(checkpoint_value);
	self->checkpoint_shared = TRUE;
	return self;
}

/**
 * sfl_entry_ref:
 * @self: an entry
 *
 * Returns: (transfer full): @self
 */
SflEntry *
sfl_entry_ref(SflEntry *self)
{
	g_return_val_if_fail(self != NULL, NULL);
	g_atomic_int_inc(&self->ref_count);
	return self;
}

/**
 * sfl_entry_unref:
 * @self: (nullable) (transfer full): an entry
 */
void
sfl_entry_unref(SflEntry *self)
{
	if (self == NULL)
		return;
	if (!g_atomic_int_dec_and_test(&self->ref_count))
		return;
	sfl_labels_unref(self->labels);
	if (self->checkpoint_shared)
		g_ref_string_release((gchar *)self->checkpoint_value);
	g_free(self);
}

/**
 * sfl_entry_lookup_metadata:
 * @self: an entry
 * @name: a structured-metadata name
 *
 * Returns: (transfer none) (nullable): the value of @name, or %NULL when absent
 */
const gchar *
sfl_entry_lookup_metadata(const SflEntry *self, const gchar *name)
{
	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(name != NULL, NULL);
	for (guint i = 0; i < self->n_metadata; i++) {
		if (g_strcmp0(self->metadata[i].name, name) == 0)
			return self->metadata[i].value;
	}
	return NULL;
}

/**
 * sfl_batch_new:
 *
 * Returns: (transfer full): an empty batch
 */
SflBatch *
sfl_batch_new(void)
{
	SflBatch *self = g_new0(SflBatch, 1);

	self->entries = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_entry_unref);
	return self;
}

/**
 * sfl_batch_free:
 * @self: (nullable) (transfer full): a batch; drops its references to the entries
 */
void
sfl_batch_free(SflBatch *self)
{
	if (self == NULL)
		return;
	g_ptr_array_unref(self->entries);
	g_free(self);
}

/**
 * sfl_batch_add:
 * @self: a batch
 * @entry: (transfer full): the entry to append
 */
void
sfl_batch_add(SflBatch *self, SflEntry *entry)
{
	g_return_if_fail(self != NULL);
	g_return_if_fail(entry != NULL);
	g_ptr_array_add(self->entries, entry);
	self->line_bytes += entry->line_len;
}

/**
 * sfl_batch_get_length:
 * @self: a batch
 *
 * Returns: the number of entries, checkpoint-only ones included
 */
guint
sfl_batch_get_length(const SflBatch *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->entries->len;
}

/**
 * sfl_batch_get:
 * @self: a batch
 * @idx: index below sfl_batch_get_length()
 *
 * Returns: (transfer none): the @idx-th entry
 */
SflEntry *
sfl_batch_get(const SflBatch *self, guint idx)
{
	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(idx < self->entries->len, NULL);
	return g_ptr_array_index(self->entries, idx);
}

/**
 * sfl_batch_get_line_bytes:
 * @self: a batch
 *
 * Returns: the sum of the entries' line lengths in bytes
 */
guint64
sfl_batch_get_line_bytes(const SflBatch *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->line_bytes;
}

/**
 * sfl_batch_slice:
 * @self: a batch
 * @start: first entry
 * @len: number of entries
 *
 * For splitting a rejected batch: the slice shares the entries. Cap lines before slicing, as
 * a later cap on one batch does not update another batch's byte count.
 *
 * Returns: (transfer full): a new batch with entries [@start, @start + @len)
 */
SflBatch *
sfl_batch_slice(const SflBatch *self, guint start, guint len)
{
	SflBatch *slice;

	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(start <= self->entries->len, NULL);
	g_return_val_if_fail(len <= self->entries->len - start, NULL);
	slice = sfl_batch_new();
	for (guint i = start; i < start + len; i++)
		sfl_batch_add(slice, sfl_entry_ref(g_ptr_array_index(self->entries, i)));
	return slice;
}

/**
 * sfl_batch_cap_lines:
 * @self: a batch
 * @max_line_bytes: the per-line cap in bytes; 0 disables it
 *
 * Shortens every over-long line in place with sfl_loki_truncate_line(), so a retry or a split
 * re-encodes the shortened line, and keeps the byte count right. Running it twice is the same
 * as running it once.
 *
 * Returns: how many lines were shortened
 */
guint
sfl_batch_cap_lines(SflBatch *self, gsize max_line_bytes)
{
	guint n_capped = 0;

	g_return_val_if_fail(self != NULL, 0);
	if (max_line_bytes == 0)
		return 0;
	for (guint i = 0; i < self->entries->len; i++) {
		SflEntry *entry = g_ptr_array_index(self->entries, i);
		gsize new_len;

		if (entry->line_len <= max_line_bytes)
			continue;
		new_len = sfl_loki_truncate_line(entry->line, entry->line_len, max_line_bytes);
		self->line_bytes -= entry->line_len - new_len;
		entry->line_len = new_len;
		n_capped++;
	}
	return n_capped;
}
