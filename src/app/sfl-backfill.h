/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-config.h"

G_BEGIN_DECLS

/*
 * `sf2loki backfill`: a one-shot EventLogFile load of a past window (docs/cli.md,
 * "backfill"). The daemon's parts in a run of their own: the configured checkpoint store (a
 * document of its own for the file store), the Loki sink and pipeline (batching,
 * backpressure, commit after Loki accepted), the org's token provider and the EventLogFile
 * source in backfill mode, which streams each file and finishes once the window is read.
 */

typedef struct {
	guint64 files;	      /* files read to the end (a dry run: that would be downloaded) */
	guint64 files_listed; /* files of the window listed for reading so far */
	guint64 bytes_listed; /* their LogFileLength */
	guint64 rows_read;
	guint64 rows_pushed;
	guint64 rows_dropped; /* refused by Loki for good */
	guint64 bytes_pushed;
	guint64 bytes_downloaded;
	guint64 downloads;     /* LogFile downloads (the original's api_calls) */
	guint64 listing_calls; /* SOQL listings and the type discovery */
	guint64 types_failed;  /* types stopped by a listing or download failure */
	gdouble elapsed_seconds;
	gboolean interrupted; /* a stop request ended the run early */
} SflBackfillStats;

typedef void (*SflBackfillProgressFunc)(const SflBackfillStats *stats, gpointer user_data);
typedef GPtrArray *(*SflBackfillStopHandlersFunc)(GMainContext *context, GSourceFunc func,
						  gpointer user_data);

typedef struct {
	const gchar *org; /* (nullable): the first org */
	gint64 since_usec;
	gint64 until_usec;
	/* (nullable): the org's configured explicit types, or discovery when it has none;
	 * "*" asks for discovery (validated by the caller) */
	const gchar *const *event_types;
	gint interval; /* SflElfInterval */
	gboolean ingest_timestamps;
	guint concurrency;
	gboolean dry_run;
	/* (nullable): SIGINT/SIGTERM (the first drains and commits, the second quits) */
	SflBackfillStopHandlersFunc install_stop_handlers;
	/* (nullable): called from the loop about four times a second, and once at the end */
	SflBackfillProgressFunc progress;
	gpointer progress_data;
} SflBackfillOptions;

/*
 * Runs the backfill to its end. FALSE with @error: SFL_ERROR_INVALID_CONFIG for a bad
 * configuration or org (exit 2); otherwise a runtime failure (exit 1): the store, the
 * Salesforce start-up check, a fatal sink error, a fenced commit, or 10 pushes in a row
 * that Loki did not take. @stats is filled either way.
 */
gboolean sfl_backfill_run(const SflConfig *config, const SflBackfillOptions *options,
			  SflBackfillStats *stats, GError **error);

G_END_DECLS
