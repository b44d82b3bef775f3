/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-checkpoint-store.h"
#include "sfl-clock.h"
#include "sfl-config.h"
#include "sfl-metrics.h"

G_BEGIN_DECLS

/*
 * SflEgress: the Loki egress governor (sink.loki.egress; docs/internals/pipeline.md,
 * "Egress governor"), shared by both lanes of a pipeline run.
 *
 * Contract
 *  - Created only when a limit is set (sfl_egress_config_is_active()).
 *  - admit() once per batch, before its first push; retries and bisected parts never re-admit.
 *    It completes from a timeout source on the governor's clock, never blocking:
 *     1. daily budget (UTC day of the wall clock): used + bytes > budget → DROP in drop mode;
 *        in pause mode the batch waits until the next UTC midnight (every waiter wakes there
 *        on its own, SFL-0004), or returns PAUSED at once when the caller is stopping;
 *     2. rate caps: two token buckets (lines/s, bytes/s), capacity one second of the rate,
 *        initially full, refilled from the monotonic clock; the batch waits the larger
 *        shortfall of min(amount, capacity), then the full amounts are taken (balances may go
 *        negative).
 *  - begin() at the start of every pipeline run loads today's used bytes from the store key
 *    SFL_EGRESS_BUDGET_KEY; admissions wait for that load.
 *  - record() after a successful push adds the bytes and returns the value to persist under
 *    SFL_EGRESS_BUDGET_KEY, which the pipeline writes with the batch's checkpoints.
 *  - A cancelled admission completes with G_IO_ERROR_CANCELLED; when the last paused
 *    admission leaves, the paused flag and gauge clear.
 *
 * Threading: main thread only (the thread-default main context at construction).
 */

#define SFL_EGRESS_BUDGET_KEY "egress:budget"

typedef enum {
	SFL_EGRESS_ADMITTED, /* push it */
	SFL_EGRESS_DROP,     /* drop mode, budget spent: drop the batch (counted) and commit */
	SFL_EGRESS_PAUSED,   /* pause mode, budget spent, and the caller asked not to wait */
} SflEgressVerdict;

typedef enum {
	SFL_EGRESS_ADMIT_NONE = 0,
	/* the caller is stopping: report PAUSED instead of waiting for midnight */
	SFL_EGRESS_ADMIT_NO_PAUSE = 1 << 0,
} SflEgressAdmitFlags;

/**
 * SflEgressStatus:
 *
 * A snapshot for /statusz.
 */
typedef struct {
	gboolean budget_enabled;
	guint64 used_bytes; /* today's */
	gchar date[11];	    /* YYYY-MM-DD (UTC) that @used_bytes counts */
	gboolean paused;
} SflEgressStatus;

#define SFL_TYPE_EGRESS (sfl_egress_get_type())
G_DECLARE_FINAL_TYPE(SflEgress, sfl_egress, SFL, EGRESS, GObject)

gboolean sfl_egress_config_is_active(const SflLokiEgressConfig *config);
SflEgress *
sfl_egress_new(const SflLokiEgressConfig *config, SflClock *clock) G_GNUC_WARN_UNUSED_RESULT;
void sfl_egress_register_metrics(SflMetrics *metrics, SflSeries **used, SflSeries **paused);
void sfl_egress_set_metrics(SflEgress *self, SflMetrics *metrics);
void sfl_egress_begin(SflEgress *self, SflCheckpointStore *store);

void
sfl_egress_admit_async(SflEgress *self, guint64 lines, guint64 bytes, SflEgressAdmitFlags flags,
		       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
gboolean sfl_egress_admit_finish(SflEgress *self, GAsyncResult *result, SflEgressVerdict *verdict,
				 GError **error);
void sfl_egress_stop_waiting(SflEgress *self, GCancellable *cancellable);

gchar *sfl_egress_record(SflEgress *self, guint64 bytes) G_GNUC_WARN_UNUSED_RESULT;
gchar *sfl_egress_dup_persisted(SflEgress *self) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_egress_is_paused(SflEgress *self);
gchar *sfl_egress_dup_degraded(SflEgress *self) G_GNUC_WARN_UNUSED_RESULT;
void sfl_egress_get_status(SflEgress *self, SflEgressStatus *status);

G_END_DECLS
