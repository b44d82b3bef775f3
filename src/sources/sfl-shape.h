/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-clock.h"
#include "sfl-config.h"
#include "sfl-entry.h"
#include "sfl-metrics.h"
#include "sfl-record.h"

G_BEGIN_DECLS

/*
 * Shaping shared by every source (docs/sources/README.md, docs/differences-from-python.md):
 * transforms, deterministic sampling, timestamps, field routing (line + structured metadata +
 * level), SOQL literals, Python fnmatch, and the overlap guard's categories.
 */

/* --- transforms -------------------------------------------------------------------------- */

typedef struct _SflTransforms SflTransforms;

/* compiles the rules once; a bad regex is SFL_ERROR_INVALID_CONFIG naming the rule */
SflTransforms *sfl_transforms_new(GPtrArray *rules /* SflTransformRule, may be NULL */,
				  const gchar *salt, GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_transforms_free(SflTransforms *self);
guint sfl_transforms_get_n_rules(const SflTransforms *self);
/* number of hash rules (the caller warns once per rule when the salt is empty) */
guint sfl_transforms_get_n_hash_rules(const SflTransforms *self);
/*
 * Runs the rules in order on @record. Returns FALSE when a drop_row rule matched; then
 * *dropped_by (if given) is that rule's metric name (`name` or `<action>-<index>`).
 */
gboolean
sfl_transforms_apply(const SflTransforms *self, SflRecord *record, const gchar **dropped_by);

/* --- sampling ---------------------------------------------------------------------------- */

/*
 * SHA-256(key)[0..8] big-endian mod 10000 < rate * 10000; rate >= 1 keeps everything, rate
 * <= 0 keeps nothing
 */
gboolean sfl_sample_keep(const gchar *key, gsize len, gdouble rate);

/* --- timestamps -------------------------------------------------------------------------- */

/* Python 3.11 datetime.fromisoformat after replacing "Z" with "+00:00"; naive = UTC */
gboolean sfl_parse_iso_datetime(const gchar *text, gint64 *unix_usec);
/* ISO, else the compact YYYYMMDDHHMMSS[.ffffff] form (UTC) */
gboolean sfl_parse_timestamp_text(const gchar *text, gint64 *unix_usec);
/*
 * numbers are epoch milliseconds (bools too: Python's isinstance(v, int)); strings as
 * sfl_parse_timestamp_text(); outside years 1-9999 fails
 */
gboolean sfl_parse_timestamp_field(const SflField *field, gint64 *unix_usec);
/*
 * The fallback rule: no candidate (has_candidate FALSE) → now; a candidate older than one
 * hour → now − 5 min; else the candidate.
 */
gint64 sfl_timestamp_fallback(gboolean has_candidate, gint64 candidate_usec, gint64 now_usec);
/* YYYY-MM-DDTHH:MM:SSZ, the original's first-run "since" format */
gchar *sfl_format_iso_seconds(gint64 unix_usec) G_GNUC_WARN_UNUSED_RESULT;
/* SOQL datetime literal YYYY-MM-DDTHH:MM:SS.mmmZ in UTC; unparseable text comes back as is */
gchar *sfl_soql_datetime_literal(const gchar *text) G_GNUC_WARN_UNUSED_RESULT;
/* a SOQL string literal body: backslash and quote escaped with a backslash */
gchar *sfl_soql_escape(const gchar *text) G_GNUC_WARN_UNUSED_RESULT;

/* --- routing ----------------------------------------------------------------------------- */

/* "error", "warn" or "info" (static strings) */
const gchar *sfl_shape_level(const SflRecord *record);

/*
 * Appends to @pairs (an array of SflLabelPair) each of @fields present in @record with a
 * non-null value, as Python str(value), then "level" (replacing a listed "level"). The
 * strings live in @record's arena.
 */
void sfl_shape_metadata(SflRecord *record, const gchar *const *fields, GArray *pairs);

/* --- globbing, categories ---------------------------------------------------------------- */

/* Python fnmatch.fnmatchcase: *, ?, [seq], [!seq]; '*' also matches '/' */
gboolean sfl_fnmatch(const gchar *pattern, const gchar *name);

gchar *sfl_category_for_topic(const gchar *topic) G_GNUC_WARN_UNUSED_RESULT;
gchar *sfl_category_for_object(const gchar *object) G_GNUC_WARN_UNUSED_RESULT;
gchar *sfl_category_for_elf_type(const gchar *event_type) G_GNUC_WARN_UNUSED_RESULT;

/*
 * The startup overlap guard for one org's sources: explicit Pub/Sub topics, enabled polled
 * objects and explicit ELF types mapped to categories; a category claimed by more than one
 * source type is SFL_ERROR_INVALID_CONFIG listing every collision, unless allow_overlap.
 * Both Pub/Sub and ELF using "*" is refused too (SFL-0007): the runtime filters cannot see
 * each other's discoveries.
 */
gboolean sfl_overlap_check(const SflSourcesConfig *sources, const gchar *org_name, GError **error);
/*
 * runtime filter for wildcard ELF discovery: is the type's category owned by an explicit
 * enabled Pub/Sub topic or an enabled polled object? (independent of allow_overlap)
 */
gboolean
sfl_overlap_elf_type_owned_elsewhere(const SflSourcesConfig *sources, const gchar *event_type);
/*
 * runtime filter for wildcard Pub/Sub discovery: is the topic's category owned by an enabled
 * polled object or an explicit enabled ELF type? (independent of allow_overlap)
 */
gboolean sfl_overlap_topic_owned_elsewhere(const SflSourcesConfig *sources, const gchar *topic);

/* --- the promoted-label cardinality guard (SFL-0034) --------------------------------------- */

/*
 * Labels promoted from data (an EventLogFile type's `labels`) are bounded per label name:
 * past max_values distinct values in a window (sink.loki.label_cardinality), further new
 * values become SFL_LABEL_OTHER, counted in sf2loki_label_values_folded{label}, with one
 * WARNING per label per window. Identity labels (job, source, event_type, org...) are never
 * passed through it. One guard serves every source and org of the run, across terms.
 * Threading: the main thread.
 */
#define SFL_LABEL_OTHER "__other__"

typedef struct _SflLabelGuard SflLabelGuard;

SflLabelGuard *sfl_label_guard_new(guint max_values, gint64 window_usec, SflClock *clock,
				   SflMetrics *metrics) G_GNUC_WARN_UNUSED_RESULT;
SflLabelGuard *sfl_label_guard_ref(SflLabelGuard *self);
void sfl_label_guard_unref(SflLabelGuard *self);
const gchar *sfl_label_guard_admit(SflLabelGuard *self, const gchar *label, const gchar *value);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflTransforms, sfl_transforms_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflLabelGuard, sfl_label_guard_unref)

G_END_DECLS
