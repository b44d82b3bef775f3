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
 * SflApexLogSource: Apex debug logs through the Tooling API (docs/sources/apexlog.md).
 *
 * One poll at a time: list ApexLog in ascending (StartTime, Id) order with a compound cursor,
 * then fetch each new log's body (streamed, capped by max_body_bytes) and emit it as the line.
 * A log's cursor advance is applied only once its entry exists, so a transient body failure
 * stops the poll with the cursor before that log and the next poll retries it (SFL-0009); a
 * log older than download_max_age, or one Salesforce no longer has (404), ships its metadata
 * only. Checkpoint `apexlog` = {"ids": [...], "last_ts": "<StartTime>"}.
 */

#define SFL_TYPE_APEXLOG_SOURCE (sfl_apexlog_source_get_type())
G_DECLARE_FINAL_TYPE(SflApexLogSource, sfl_apexlog_source, SFL, APEXLOG_SOURCE, SflSource)

/* @config must outlive the source; a bad transform is SFL_ERROR_INVALID_CONFIG */
SflApexLogSource *
sfl_apexlog_source_new(SflSfRest *rest, const SflApexLogConfig *config, const gchar *salt,
		       GError **error) G_GNUC_WARN_UNUSED_RESULT;

typedef struct {
	guint64 polls;
	guint64 polls_done;
	guint64 queries;
	guint64 query_errors;
	guint64 stalls;
	guint64 downloads;
	guint64 download_errors;
	guint64 bodies_skipped;
	guint64 logs_abandoned;
	guint64 logs_ingested;
} SflApexLogCounters;

const SflApexLogCounters *sfl_apexlog_source_get_counters(SflApexLogSource *self);

/* the key and cursor this source commits, for /statusz and the commit gauges */
gboolean sfl_apexlog_source_describe_checkpoint(const gchar *key, const gchar *value,
						SflCheckpointView *view);

G_END_DECLS
