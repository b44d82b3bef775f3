/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-checkpoint-store.h"
#include "sfl-clock.h"
#include "sfl-config.h"
#include "sfl-egress.h"
#include "sfl-metrics.h"
#include "sfl-orgs.h"
#include "sfl-pipeline.h"
#include "sfl-sink.h"

G_BEGIN_DECLS

/*
 * One leadership term: the pipeline run and the sources that feed it, from an acquisition
 * to the end of that leadership (docs/architecture.md, "The daemon and its terms"). A term is
 * built afresh on every acquisition, so nothing of a lost term (queued entries, a source's
 * cursor) reaches the next one, which reads the store it won. The daemon owns the process
 * (store, coordinator, sink, orgs, servers); a term borrows them for its lifetime.
 */

typedef struct _SflTerm SflTerm;

typedef struct {
	const SflConfig *config;
	SflSink *sink;
	SflCheckpointStore *store;
	SflOrgs *orgs;
	SflMetrics *metrics;
	SflEgress *egress;	   /* (nullable): shared by every term */
	SflDeadletter *deadletter; /* (nullable): shared by every term */
	SflClock *clock;
	GMainContext *context; /* where the progress line's timer runs */
	/* the pipeline's callbacks, with @callback_data */
	const SflPipelineCallbacks *callbacks;
	gpointer callback_data;
	/* (nullable): a sharded work unit's term: only its source, its commits fenced by its own
	 * lease (@unit_fence with @unit_fence_data, which the pipeline frees with
	 * @unit_fence_destroy) under @unit_epoch; no progress lines */
	const gchar *unit;
	guint64 unit_epoch;
	SflPipelineFenceFunc unit_fence;
	gpointer unit_fence_data;
	GDestroyNotify unit_fence_destroy;
} SflTermArgs;

/* builds the pipeline, starts every enabled source on it, and logs progress lines */
SflTerm *sfl_term_start(const SflTermArgs *args) G_GNUC_WARN_UNUSED_RESULT;

SflPipeline *sfl_term_get_pipeline(SflTerm *self);

/* the term's end: its pipeline counters as it stopped */
typedef void (*SflTermStoppedFunc)(SflTerm *term, const SflPipelineCounters *counters,
				   gpointer user_data);

/*
 * Ends the term: the sources stop first, so nothing new enters, then what the lanes hold
 * drains within @grace_usec and is committed; the rest is abandoned. @func runs once, from
 * the loop; the caller frees the term after that (or at teardown).
 */
void sfl_term_stop(SflTerm *self, gint64 grace_usec, SflTermStoppedFunc func, gpointer user_data);

/* a term dropped without a stop (the daemon's teardown) still lets go of its sources */
void sfl_term_free(SflTerm *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflTerm, sfl_term_free)

G_END_DECLS
