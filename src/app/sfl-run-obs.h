/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>
#include <jansson.h>

#include "sfl-config.h"
#include "sfl-metrics.h"
#include "sfl-state-doc.h"

G_BEGIN_DECLS

/*
 * SflRunObs: what the run learns from its commits and failures, for operators: the
 * commit-derived gauges (docs/operations/metrics.md), the checkpoint positions /statusz shows
 * and the degradation reasons of /readyz (docs/operations/health.md).
 */

typedef struct _SflRunObs SflRunObs;

SflRunObs *sfl_run_obs_new(const SflConfig *config, SflMetrics *metrics) G_GNUC_WARN_UNUSED_RESULT;
void sfl_run_obs_free(SflRunObs *self);

/* a commit landed at @now_wall_usec: remember each key's position, update the gauges */
void sfl_run_obs_committed(SflRunObs *self, const SflStateDoc *doc, gint64 now_wall_usec);

/* [{"key", "position", "committed_at", "age_seconds"}], sorted by key */
json_t *sfl_run_obs_checkpoints(SflRunObs *self, gint64 now_wall_usec) G_GNUC_WARN_UNUSED_RESULT;

/*
 * The first degradation reason (docs/operations/health.md), or NULL: @auth_failing_org is the first
 * org whose authentication fails, @failing_since the monotonic start of the earliest lane's Loki
 * failure streak, @commit_failing_since that of its checkpoint-commit failure streak (0: none).
 */
gchar *
sfl_run_obs_degraded(SflRunObs *self, const gchar *auth_failing_org, gint64 failing_since,
		     gint64 commit_failing_since, gint64 now_mono_usec) G_GNUC_WARN_UNUSED_RESULT;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflRunObs, sfl_run_obs_free)

G_END_DECLS
