/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflStoreMerge"

#include "config.h"

#include "sfl-store-merge.h"

#include "sfl-error.h"

/**
 * sfl_store_parse:
 * @data: the stored document's bytes
 * @len: how many
 * @origin: the storage's name, for messages
 * @error: return location for an error
 *
 * The fence is part of the document's integrity: a garbled epoch is corruption as much as
 * garbled JSON, so a store never starts (or commits) from a document it cannot fence with.
 *
 * Returns: (transfer full) (nullable): the document, or %NULL with %SFL_ERROR_CORRUPT
 */
SflStateDoc *
sfl_store_parse(const gchar *data, gsize len, const gchar *origin, GError **error)
{
	g_autoptr(SflStateDoc) doc = sfl_state_doc_parse(data, len, origin, error);
	g_autoptr(GError) local = NULL;
	guint64 epoch = 0;

	if (doc == NULL)
		return NULL;
	sfl_state_doc_get_epoch(doc, &epoch, &local);
	if (local != NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT, "%s is corrupt: %s", origin,
			    local->message);
		return NULL;
	}
	return g_steal_pointer(&doc);
}

/**
 * sfl_store_write_needed:
 * @fresh: the document as just read from storage
 * @items: (nullable): keys to set
 * @delete_key: (nullable): a key to remove
 * @writer: the writer's epoch
 *
 * Returns: %FALSE when the write would change nothing: a delete of an absent key with no
 *   epoch to record (the store skips the write and keeps @fresh as its cache)
 */
gboolean
sfl_store_write_needed(const SflStateDoc *fresh, const SflStateDoc *items, const gchar *delete_key,
		       const SflStoreWriter *writer)
{
	return delete_key == NULL || items != NULL ||
	       sfl_state_doc_get(fresh, delete_key) != NULL || writer->have_epoch;
}

/**
 * sfl_store_apply_write:
 * @fresh: the document as just read from storage; modified in place
 * @items: (nullable): keys to set
 * @delete_key: (nullable): a key to remove
 * @writer: the writer's epoch, sampled when the write was dispatched
 * @origin: the storage's name, for messages
 * @error: return location for an error
 *
 * The fencing rule shared by every store that keeps an epoch: a writer whose epoch is below
 * the recorded one is a stale leader and is rejected before anything changes; otherwise only
 * the written keys change (never a rewrite of other keys from someone's cache) and the
 * writer's epoch is recorded.
 *
 * Returns: %TRUE when @fresh now holds the document to write
 */
gboolean
sfl_store_apply_write(SflStateDoc *fresh, const SflStateDoc *items, const gchar *delete_key,
		      const SflStoreWriter *writer, const gchar *origin, GError **error)
{
	guint64 stored = 0;
	g_autoptr(GError) local = NULL;
	gboolean have_stored = sfl_state_doc_get_unit_epoch(fresh, writer->unit, &stored, &local);

	if (local != NULL) {
		g_propagate_prefixed_error(error, g_steal_pointer(&local), "%s: ", origin);
		return FALSE;
	}
	if (writer->have_epoch && have_stored && stored > writer->epoch) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_FENCED,
			    "stale leader (epoch %" G_GUINT64_FORMAT
			    ") rejected: %s%s%s%s was already "
			    "advanced to epoch %" G_GUINT64_FORMAT " by a newer leader",
			    writer->epoch, writer->unit != NULL ? "unit " : "",
			    writer->unit != NULL ? writer->unit : "",
			    writer->unit != NULL ? " in " : "", origin, stored);
		return FALSE;
	}
	if (items != NULL) {
		for (guint i = 0; i < sfl_state_doc_size(items); i++) {
			const gchar *key = sfl_state_doc_key_at(items, i);
			sfl_state_doc_set(fresh, key, sfl_state_doc_get(items, key));
		}
	}
	if (delete_key != NULL)
		sfl_state_doc_remove(fresh, delete_key);
	if (writer->have_epoch && (!have_stored || writer->epoch > stored)) {
		g_autofree gchar *text = g_strdup_printf("%" G_GUINT64_FORMAT, writer->epoch);
		g_autofree gchar *key = sfl_state_epoch_key(writer->unit);
		sfl_state_doc_set(fresh, key, text);
	}
	return TRUE;
}

/**
 * sfl_store_persisted_epoch:
 * @fresh: (nullable): the document as just read, %NULL when the read failed
 * @epoch: (out): the recorded epoch, 0 without one
 * @present: (out): whether the document records an epoch
 *
 * The persisted_epoch vfunc of a store whose reads already refuse a garbled epoch
 * (sfl_store_parse()).
 *
 * Returns: %FALSE when @fresh is %NULL (the read's error stands)
 */
gboolean
sfl_store_persisted_epoch(const SflStateDoc *fresh, const gchar *unit, guint64 *epoch,
			  gboolean *present, GError **error)
{
	g_autoptr(GError) local = NULL;

	*epoch = 0;
	*present = FALSE;
	if (fresh == NULL)
		return FALSE;
	/* the store's own epoch was checked by the read; a unit's is checked here */
	*present = sfl_state_doc_get_unit_epoch(fresh, unit, epoch, &local);
	if (local != NULL) {
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	return TRUE;
}
