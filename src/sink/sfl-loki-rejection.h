/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-entry.h"

G_BEGIN_DECLS

/*
 * SflLokiRejection: what a Loki 4xx body says about the entries it refused
 * (docs/internals/wire-notes.md, "Loki partial rejections"; the shapes are in
 * tests/data/loki-rejections/).
 *
 * Loki validates each entry on its own and ingests the valid ones, so a 400 that names entries
 * means every entry it does not name was stored. Two writers produce these bodies:
 *  - the distributor's validation: messages joined by "; ", each maybe prefixed "N errors like: ",
 *    naming the stream as '{a="b", c="d"}' and (for the age checks) a second-precision RFC 3339
 *    timestamp, or (for line_too_long) the entry's length;
 *  - the ingester: "entry with timestamp <Go time> ignored, reason: '<why>'," lines, then a
 *    "total ignored: N out of M" summary naming the stream (older Loki named the stream on each
 *    line instead). Only the first few entries may be listed, the summary counts them all.
 *
 * The parser reads untrusted input: it looks at most SFL_LOKI_REJECTION_MAX_BODY bytes, keeps
 * at most SFL_LOKI_REJECTION_MAX_ITEMS items, and never fails: what it cannot read is skipped
 * and @unparsed says so.
 */

#define SFL_LOKI_REJECTION_MAX_BODY   (256 * 1024)
#define SFL_LOKI_REJECTION_MAX_ITEMS  4096
#define SFL_LOKI_REJECTION_MAX_LABELS 64

typedef struct {
	/* the stream's labels, Loki's escapes undone; n_labels 0: the stream was not named */
	gchar **names;
	gchar **values;
	guint n_labels;
	/* the entry's time (-1: not named), valid to within precision_ns */
	gint64 timestamp_ns;
	gint64 precision_ns;
	/* line_too_long: the entry's length in bytes; else -1 */
	gint64 line_bytes;
	/* Loki's reason label (static), e.g. "greater_than_max_sample_age" */
	const gchar *reason;
	/* TRUE: may be accepted later (rate and stream limits); FALSE: never */
	gboolean retryable;
	/* how many entries the message stands for ("N errors like: "), at least 1 */
	guint count;
} SflLokiRejectedItem;

typedef struct {
	GPtrArray *items; /* SflLokiRejectedItem */
	/* the ingester summaries: sums of "total ignored: N out of M" */
	guint64 ignored;
	guint64 total;
	guint n_summaries;
	/* a summary's stream ignored more entries than its lines listed */
	gboolean unlisted;
	/* some text was neither a known message nor a separator, or a bound was hit */
	gboolean unparsed;
} SflLokiRejection;

SflLokiRejection *sfl_loki_rejection_parse(const gchar *body, gsize len);
void sfl_loki_rejection_free(SflLokiRejection *self);
const gchar *sfl_loki_rejection_classify(const gchar *message, gboolean *retryable);
gboolean sfl_loki_rejected_item_matches(const SflLokiRejectedItem *item, const SflEntry *entry);
gboolean
sfl_loki_rejected_item_same_stream(const SflLokiRejectedItem *item, const SflLabels *labels);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflLokiRejection, sfl_loki_rejection_free)

G_END_DECLS
