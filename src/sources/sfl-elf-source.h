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

typedef struct {
	guint64 cycles;
	guint64 files_processed;
	guint64 files_abandoned;
	guint64 download_bytes;
	guint64 download_errors;
	guint64 listing_errors;
} SflElfCounters;

const SflElfCounters *sfl_elf_source_get_counters(SflElfSource *self);

/* the key and cursor this source commits, for /statusz and the commit gauges */
gboolean
sfl_elf_source_describe_checkpoint(const gchar *key, const gchar *value, SflCheckpointView *view);

G_END_DECLS
