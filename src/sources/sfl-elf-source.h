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
 * SflElfSource: EventLogFile ingestion (docs/sources/eventlogfile.md).
 *
 * Each cycle lists the new files of every configured (or discovered) EventType and streams
 * each LogFile through the CSV parser into the bulk lane, one entry per row. The download is
 * paused while the lane is full, so memory stays bounded whatever the file size.
 *
 * Checkpoint `eventlogfile:<EventType>` =
 *   {"ids": [["<Id>", "<CreatedDate>"], ...], "last_created": "<CreatedDate>"}
 * Every row of a file carries the checkpoint in effect before the file, except the last,
 * which carries the one that includes the file: a file counts as done only once its last row
 * is in Loki, and a file cut short is read again whole.
 */

#define SFL_TYPE_ELF_SOURCE (sfl_elf_source_get_type())
G_DECLARE_FINAL_TYPE(SflElfSource, sfl_elf_source, SFL, ELF_SOURCE, SflSource)

/* @config and @sources must outlive the source; a bad transform is SFL_ERROR_INVALID_CONFIG */
SflElfSource *sfl_elf_source_new(SflSfRest *rest, const SflEventLogFileConfig *config,
				 const SflSourcesConfig *sources, const gchar *salt,
				 GError **error) G_GNUC_WARN_UNUSED_RESULT;

/*
 * Backfill mode (docs/cli.md, "backfill"): one pass over the window [since, until) instead of
 * cycles, then sfl_source_finish(). The same streamed download, CSV parser, backpressure and
 * commit-after-accept as the daemon; what differs is data: the types and interval given, the
 * original's backfill keys `backfill:[org=<name>:]<interval>:<type>` and values
 * {"done_ids": [...], "last_created": "..."} (plus an `in_flight` mark at every row, so a
 * kill re-sends at most what was pushed and not yet committed), no lookback, settle window,
 * sampling or abandonment (a failed file stops its type; a rerun resumes it), and the
 * original's backfill labels and timestamps.
 */
typedef struct {
	gint64 since_usec; /* inclusive */
	gint64 until_usec; /* exclusive */
	/* validated EventType names; "*" means discovery (with the configured exclusions) */
	const gchar *const *event_types;
	gint interval; /* SflElfInterval */
	guint concurrency;
	/* FALSE: a backfill="true" label and the rows' own times (fallback: the file's
	 * CreatedDate, never clamped); TRUE: no label, times from @run_start_usec advancing 1 µs
	 * per entry, the row's own time in structured metadata `event_time` */
	gboolean ingest_timestamps;
	gint64 run_start_usec;
	/* list only: count files and LogFileLength; nothing is downloaded or offered */
	gboolean dry_run;
} SflElfBackfillOptions;

/* @options is copied; otherwise as sfl_elf_source_new() */
SflElfSource *sfl_elf_source_new_backfill(SflSfRest *rest, const SflEventLogFileConfig *config,
					  const SflSourcesConfig *sources, const gchar *salt,
					  const SflElfBackfillOptions *options,
					  GError **error) G_GNUC_WARN_UNUSED_RESULT;

typedef struct {
	guint64 cycles;
	guint64 files_processed;
	guint64 files_abandoned;
	guint64 download_bytes;
	guint64 download_errors;
	guint64 listing_errors;
	/* body bytes received so far, the file being read included (progress) */
	guint64 stream_bytes;
	guint64 listing_calls;
	/* files listed for reading (in a dry run: that would be downloaded) and their
	 * LogFileLength */
	guint64 files_listed;
	guint64 bytes_listed;
	guint64 downloads; /* downloads started */
	guint64 types_failed;
} SflElfCounters;

const SflElfCounters *sfl_elf_source_get_counters(SflElfSource *self);

/* the key and cursor this source commits, for /statusz and the commit gauges */
gboolean
sfl_elf_source_describe_checkpoint(const gchar *key, const gchar *value, SflCheckpointView *view);

G_END_DECLS
