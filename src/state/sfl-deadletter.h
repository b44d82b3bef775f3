/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>
#include <jansson.h>

#include "sfl-clock.h"
#include "sfl-entry.h"
#include "sfl-metrics.h"

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
 * Writers: every process appends to segments of its own (a random writer id is part of the
 * name), so replicas on one disk and the CLI never write the same file; the closed segments
 * are read from the directory each time they are needed.
 *
 * Bounds: the total of all segments stays at or under max_bytes and no closed segment whose
 * newest record is older than max_age is kept; the oldest segments go first and are counted.
 *
 * Reference-counted (a pipeline keeps one). Not thread-safe: one owner (the pipeline's callbacks
 * run on its thread, the CLI is one thread).
 */

typedef struct _SflDeadletter SflDeadletter;

SflDeadletter *sfl_deadletter_open(const gchar *dir, guint64 max_bytes, gint64 max_age_usec,
				   SflClock *clock, GError **error) G_GNUC_WARN_UNUSED_RESULT;
SflDeadletter *sfl_deadletter_ref(SflDeadletter *self);
void sfl_deadletter_unref(SflDeadletter *self);
void sfl_deadletter_set_metrics(SflDeadletter *self, SflMetrics *metrics);
const gchar *sfl_deadletter_get_dir(SflDeadletter *self);

/* builds one record (transfer full) for @entry refused under @reason, captured now */
json_t *sfl_deadletter_record_new(SflDeadletter *self, const SflEntry *entry, const gchar *reason,
				  const gchar *org);
/* writes @records (borrowed) durably as one batch, then applies the bounds */
gboolean
sfl_deadletter_append(SflDeadletter *self, json_t *const *records, guint n_records, GError **error);
/* the records of @entries, each with its own @reasons[i] and @orgs[i] (@orgs nullable), as
 * one append; checkpoint-only entries are skipped */
gboolean sfl_deadletter_append_refused(SflDeadletter *self, SflEntry *const *entries,
				       const gchar *const *reasons, const gchar *const *orgs,
				       guint n_entries, GError **error);
/* sfl_deadletter_append_refused() with one @reason and @org for all */
gboolean
sfl_deadletter_append_entries(SflDeadletter *self, SflEntry *const *entries, guint n_entries,
			      const gchar *reason, const gchar *org, GError **error);
/* applies the age bound now (the daemon calls this now and then; append does it too) */
void sfl_deadletter_enforce_bounds(SflDeadletter *self);

guint64 sfl_deadletter_get_bytes(SflDeadletter *self);
guint64 sfl_deadletter_get_max_bytes(SflDeadletter *self);
guint64 sfl_deadletter_get_evicted_segments(SflDeadletter *self);
guint sfl_deadletter_get_n_segments(SflDeadletter *self);
/* bytes held as a percentage of max_bytes (may pass 100 by up to one segment) */
guint sfl_deadletter_fill_percent(SflDeadletter *self);
/* at or over 90 % of max_bytes: the next bytes evict the oldest segments */
gboolean sfl_deadletter_is_filling(SflDeadletter *self);

/*
 * Every record of every segment, oldest first (json_t, transfer full in the array). Lines that
 * are not a JSON object (a damaged segment) are skipped with one warning per segment naming it
 * and counted in *@n_skipped.
 */
GPtrArray *sfl_deadletter_read_all(SflDeadletter *self, guint *n_skipped);
/*
 * Replay and purge: takes every segment out of the appenders' way (renamed to claimed-*, under
 * <dir>/claim.lock, so one claimer at a time) and returns their records, oldest first. A
 * daemon appending meanwhile finds its open segment gone and begins a new one, so nothing it
 * writes later is claimed or lost. Segments a claimer that died left behind are restored first.
 * Fails with SFL_ERROR_CONFLICT when another claim is running.
 */
GPtrArray *sfl_deadletter_claim(SflDeadletter *self, guint *n_skipped,
				GError **error) G_GNUC_WARN_UNUSED_RESULT;
/* writes @keep (borrowed, oldest first) as new segments, then removes the claimed ones; on a
 * write failure the claimed segments are restored as they were */
gboolean sfl_deadletter_settle_claim(SflDeadletter *self, GPtrArray *keep, GError **error);
/* puts the claimed segments back unchanged */
void sfl_deadletter_abort_claim(SflDeadletter *self);

/* parses one segment's text: appends records to @out, returns the count of unparsable lines */
guint sfl_deadletter_parse_segment(const gchar *data, gsize len, GPtrArray *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflDeadletter, sfl_deadletter_unref)

G_END_DECLS
