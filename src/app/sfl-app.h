/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-checkpoint-store.h"
#include "sfl-config.h"
#include "sfl-deadletter.h"
#include "sfl-coordinator.h"
#include "sfl-curl-loop.h"
#include "sfl-log.h"
#include "sfl-sink.h"

G_BEGIN_DECLS

/*
 * The composition root: the only place that turns configuration into concrete types, through
 * the kind tables of sfl-kinds.h.
 */

SflCheckpointStore *sfl_app_build_store(const SflConfig *config, gboolean exclusive,
					GError **error) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_app_store_wants_exclusive(const SflConfig *config);
/* `backfill`'s state: the configured store kind; for the file, a document of its own */
SflCheckpointStore *sfl_app_build_backfill_store(const SflConfig *config, gchar **location,
						 GError **error) G_GNUC_WARN_UNUSED_RESULT;
gchar *sfl_app_backfill_file_path(const gchar *path) G_GNUC_WARN_UNUSED_RESULT;
/* state.deadletter.path, or deadletter/ next to state.file.path */
gchar *sfl_app_deadletter_dir(const SflConfig *config) G_GNUC_WARN_UNUSED_RESULT;
SflDeadletter *sfl_app_open_deadletter(const SflConfig *config, SflClock *clock,
				       GError **error) G_GNUC_WARN_UNUSED_RESULT;

/* @loop: (nullable): the daemon's curl loop, for coordinators that talk HTTP; NULL where
 * the coordinator is only built to check the configuration */
SflCoordinator *sfl_app_build_coordinator(const SflConfig *config, SflCurlLoop *loop,
					  GError **error) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_app_coordinator_is_fenced(const SflConfig *config);
SflSink *sfl_app_build_sink(const SflConfig *config, SflCurlLoop *loop, guint push_timeout_ms,
			    GError **error) G_GNUC_WARN_UNUSED_RESULT;
gchar *sfl_app_default_holder(void) G_GNUC_WARN_UNUSED_RESULT;

/* service.log_level as the log writer's level (`run` at start, a reload later) */
SflLogLevel sfl_app_log_level(const SflConfig *config);

/* offline: why a run would ingest nothing (every source of every org off), or NULL */
gchar *sfl_app_dup_no_source_reason(const SflConfig *config) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
