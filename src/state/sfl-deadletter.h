/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>
#include <jansson.h>

#include "sfl-clock.h"
#include "sfl-entry.h"

G_BEGIN_DECLS

/*
 * The dead-letter store: entries Loki or the pipeline refused for good, kept as JSON lines in
 * rotating segment files under one directory (<state dir>/deadletter/ for the file store).
 *
 * One record per line: labels (object), timestamp_ns, line, metadata (array of [name, value]),
 * reason, checkpoint_key, org, captured_usec (wall time of capture).
 * docs/operations/dead-letter.md.
 *
 * Durability: every sfl_deadletter_append() call is one durable atomic replace of the current
 * segment (temp file, fsync, rename, directory fsync), so a batch either survives a crash whole
 * or not at all, and a torn line cannot appear. The segment is capped small so the rewrite stays
 * cheap; a full segment is closed and a new one begun.
 *
 * Bounds: the total of all segments stays at or under max_bytes and no closed segment whose
 * newest record is older than max_age is kept; the oldest segments go first and are counted.
 *
 * Not thread-safe: one owner (the pipeline's callbacks run on its thread, the CLI is one thread).
 */

typedef struct _SflDeadletter SflDeadletter;

SflDeadletter *sfl_deadletter_open(const gchar *dir, guint64 max_bytes, gint64 max_age_usec,
				   SflClock *clock, GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_deadletter_free(SflDeadletter *self);

/* builds one record (transfer full) for @entry refused under @reason, captured now */
json_t *sfl_deadletter_record_new(SflDeadletter *self, const SflEntry *entry, const gchar *reason,
				  const gchar *org);
/* writes @records (borrowed) durably as one batch, then applies the bounds */
gboolean
sfl_deadletter_append(SflDeadletter *self, json_t *const *records, guint n_records, GError **error);
/* sfl_deadletter_record_new() for each entry with one @reason, then one append */
gboolean
sfl_deadletter_append_entries(SflDeadletter *self, SflEntry *const *entries, guint n_entries,
			      const gchar *reason, const gchar *org, GError **error);
/* applies the age bound now (the daemon calls this now and then; append does it too) */
void sfl_deadletter_enforce_bounds(SflDeadletter *self);

guint64 sfl_deadletter_get_bytes(SflDeadletter *self);
guint64 sfl_deadletter_get_max_bytes(SflDeadletter *self);
guint64 sfl_deadletter_get_evicted_segments(SflDeadletter *self);
guint sfl_deadletter_get_n_segments(SflDeadletter *self);

/*
 * Every record of every segment, oldest first (json_t, transfer full in the array). Lines that
 * are not a JSON object (a damaged segment) are skipped with one warning per segment naming it
 * and counted in *@n_skipped.
 */
GPtrArray *sfl_deadletter_read_all(SflDeadletter *self, guint *n_skipped);
/*
 * Replaces the whole store by @keep (borrowed records, oldest first): what purge and replay
 * leave behind. Durable like append.
 */
gboolean sfl_deadletter_rewrite(SflDeadletter *self, GPtrArray *keep, GError **error);

/* parses one segment's text: appends records to @out, returns the count of unparsable lines */
guint sfl_deadletter_parse_segment(const gchar *data, gsize len, GPtrArray *out);

G_END_DECLS
