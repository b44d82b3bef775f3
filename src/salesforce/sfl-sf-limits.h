/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-clock.h"
#include "sfl-metrics.h"
#include "sfl-sf-rest.h"

G_BEGIN_DECLS

/*
 * SflSfLimits: the org-limits poller (docs/operations/metrics.md). While it lives (one
 * leadership term), it fetches /limits at once and then every interval, and sets
 * `sf2loki_salesforce_limit_max{limit_name}` and `sf2loki_salesforce_limit_remaining{limit_name}`
 * for every limit with integer Max and Remaining. A failure counts in
 * `sf2loki_salesforce_limits_poll_errors` and never stops the poller.
 */

typedef struct _SflSfLimits SflSfLimits;

/* @org: the org's name in multi-org mode (an `org` label is added), else NULL */
SflSfLimits *sfl_sf_limits_new(SflSfRest *rest, SflClock *clock, gint64 interval_usec,
			       SflMetrics *metrics, const gchar *org) G_GNUC_WARN_UNUSED_RESULT;
void sfl_sf_limits_free(SflSfLimits *self);
/* completed polls (successful or not), for tests */
guint64 sfl_sf_limits_get_polls(SflSfLimits *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflSfLimits, sfl_sf_limits_free)

G_END_DECLS
