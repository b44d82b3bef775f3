/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-config.h"
#include "sfl-sf-rest.h"
#include "sfl-source.h"

G_BEGIN_DECLS

/*
 * SflObjectsSource: SOQL-polled event objects (docs/sources/objects.md),
 *.
 *
 * Each object has its own poll timer. Standard and custom objects are read in ascending
 * (timestamp, Id) order with a compound cursor; big objects are swept newest-first and the
 * sweep is emitted oldest-first. Records newer than settle_window are left for a later poll
 * (SFL-0003). Checkpoint `eventlog_objects:<Object>` = {"ids": [...], "last_ts": "<ts>"}.
 */

#define SFL_TYPE_OBJECTS_SOURCE (sfl_objects_source_get_type())
G_DECLARE_FINAL_TYPE(SflObjectsSource, sfl_objects_source, SFL, OBJECTS_SOURCE, SflSource)

/* @config must outlive the source; a bad transform is SFL_ERROR_INVALID_CONFIG */
SflObjectsSource *
sfl_objects_source_new(SflSfRest *rest, const SflEventLogObjectsConfig *config, const gchar *salt,
		       GError **error) G_GNUC_WARN_UNUSED_RESULT;

typedef struct {
	guint64 polls;
	guint64 polls_done;
	guint64 queries;
	guint64 stalls;
	guint64 tie_overflows;
	guint64 query_errors;
} SflObjectsCounters;

const SflObjectsCounters *sfl_objects_source_get_counters(SflObjectsSource *self);

/* the key and cursor this source commits, for /statusz and the commit gauges */
gboolean sfl_objects_source_describe_checkpoint(const gchar *key, const gchar *value,
						SflCheckpointView *view);

G_END_DECLS
