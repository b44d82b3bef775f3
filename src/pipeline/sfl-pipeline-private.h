/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-pipeline.h"

G_BEGIN_DECLS

/* test hooks: make the backoff jitter reproducible */
void sfl_pipeline_set_seed(SflPipeline *self, guint32 seed);
gboolean sfl_pipeline_has_commit_in_flight(SflPipeline *self);
gint64 sfl_pipeline_backoff_usec(GRand *rand, guint attempt, gint64 retry_after_usec);

G_END_DECLS
