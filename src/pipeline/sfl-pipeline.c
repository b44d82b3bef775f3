/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflPipeline"

#include "config.h"

#include "sfl-pipeline.h"

#include "sfl-gsource.h"

#include "sfl-error.h"
#include "sfl-pipeline-private.h"

/*
 * Per lane: a FIFO of items, the batch being accumulated, at most one delivery (a batch and
 * its bisected parts, pushed one part at a time) and a commit queue. Every entry with a
 * checkpoint key also gets a mark in its key's track, in FIFO order; a mark is set when its
 * entry is disposed of (accepted, dropped, or a checkpoint-only entry flushed), and a key
 * commits the value of the last mark of the longest run of set marks at the head of its
 * track. That is the whole ordering rule: nothing commits past an entry still in flight, and
 * an abandoned entry keeps its mark unset for good (SFL-0002).
 */

#define SFL_PIPELINE_BACKOFF_BASE_USEC ((gint64)G_USEC_PER_SEC)
#define SFL_PIPELINE_BACKOFF_CAP_USEC  ((gint64)60 * G_USEC_PER_SEC)
/*
 * per-entry overhead in the byte budget: what a queued entry really costs besides its
 * strings (the entry block, the queue item and link, its key-tracking record, allocator
 * headers), measured with bench-pipeline, so queue_max_bytes bounds actual memory
 */
#define SFL_PIPELINE_ENTRY_OVERHEAD 256

/* one entry's place in its key's checkpoint sequence */
typedef struct {
	SflEntry *entry;
	gboolean disposed;
} SflKeyMark;

typedef struct {
	GQueue marks; /* SflKeyMark, FIFO order */
	gboolean abandoned;
} SflKeyTrack;

typedef struct {
	SflEntry *entry;
	guint64 cost;
	SflKeyMark *mark; /* (nullable): owned by the key's track */
	gboolean disposed;
} SflItem;

typedef struct {
	guint start;
	guint len;
} SflRange;

typedef struct _SflLaneState SflLaneState;

typedef struct {
	GObject *writer; /* not referenced: a writer removes itself before it goes away */
	SflLaneWritableFunc func;
} SflLaneWriter;

typedef struct {
	SflLaneState *lane;
	SflPipeline *push_ref; /* held while a push is in flight */
	SflBatch *batch;       /* the real entries, lines capped */
	GPtrArray *items;      /* SflItem, aligned with @batch; NULL once disposed of */
	GArray *ranges;	       /* SflRange stack, the top is pushed next */
	SflRange part;
	SflBatch *part_batch;
	guint attempt;
	gboolean push_in_flight;
	gboolean admitting; /* waiting for the egress governor; push_ref is held */
	gboolean abandoned;
	GSource *retry_timer;
	GCancellable *cancellable;
	gint64 part_started; /* monotonic, the part's first attempt; 0 between parts */
} SflDelivery;

struct _SflLaneState {
	SflPipeline *pipeline; /* borrowed back-pointer */
	SflLane lane;
	GQueue fifo; /* SflItem */
	guint64 fifo_bytes;
	gboolean refused; /* an offer was refused: owe the producer a writable call */
	GArray *writers;  /* SflLaneWriter, in registration order: woken when refused drains */
	GPtrArray *acc;	  /* SflItem, the batch being filled */
	guint64 acc_bytes;
	guint acc_real;
	gboolean acc_ready;
	GSource *flush_timer;
	SflDelivery *delivery;
	GHashTable *keys; /* checkpoint key -> SflKeyTrack */
	SflStateDoc *commit_pending;
	SflStateDoc *commit_doc; /* the write in flight or waiting for its retry */
	guint commit_attempt;
	gboolean commit_in_flight;
	GSource *commit_timer;
	gboolean stopped; /* no more offers or pushes: a fatal sink result, or fenced */
	gboolean fenced;  /* no more commits either */
	/* pushes failing since (monotonic; 0: the last push succeeded or was disposed of) */
	gint64 failing_since;
	guint64 failed_pushes;	  /* retried pushes in the current failing streak */
	gint64 failure_logged_at; /* monotonic, the last streak summary */
	/* commits failing since (monotonic; 0: the last commit landed), as for pushes */
	gint64 commit_failing_since;
	guint64 failed_commits;
	gint64 commit_failure_logged_at;
};

struct _SflPipeline {
	GObject parent_instance;
	SflLokiBatchConfig config;
	SflSink *sink;
	SflCheckpointStore *store;
	SflClock *clock;
	GMainContext *context;
	GRand *rand;
	SflLaneState lanes[SFL_LANE_COUNT];
	SflPipelineCallbacks callbacks;
	gpointer callbacks_data;
	SflPipelineCounters counters;
	GSource *pump_source;
	GSource *grace_timer;
	GTask *stop_task;
	gboolean stopping;
	gboolean abandoning;
	/* sfl_pipeline_set_serial_commits(): a lane's next push waits for its last commit */
	gboolean serial_commits;
	SflEgress *egress;	   /* (nullable): admits every batch before its first push */
	SflDeadletter *deadletter; /* (nullable): keeps what will never reach Loki */
	/* sfl_pipeline_set_unit(): a sharded unit's commits and fence (NULL: the store's) */
	gchar *unit;
	guint64 unit_epoch;
	SflPipelineFenceFunc unit_fence;
	gpointer unit_fence_data;
	GDestroyNotify unit_fence_destroy;
	/* metrics (NULL without a registry); series are looked up once */
	SflMetrics *metrics;
	SflSeries *push_success;
	SflSeries *push_retried;
	/* sf2loki_loki_entries_dropped{reason, source, event_type, org} */
	SflMetricFamily *dropped;
	SflSeries *last_success;
	SflSeries *push_duration;
	SflSeries *bytes_pushed;
	SflMetricFamily *truncated;	  /* sf2loki_lines_truncated{source} */
	SflMetricFamily *commit_failures; /* sf2loki_checkpoint_commit_failures{store,reason} */
	gchar *store_kind;		  /* the store label: file, s3, gcs, memory */
	gchar *store_desc;		  /* "the file store /var/lib/…", for logs */
};

G_DEFINE_TYPE(SflPipeline, sfl_pipeline, G_TYPE_OBJECT)

static void sfl_lane_pump(SflLaneState *lane);
static void sfl_delivery_push(SflDelivery *delivery);
static void sfl_lane_commit_kick(SflLaneState *lane);
static void sfl_pipeline_check_stopped(SflPipeline *self);
static void sfl_pipeline_schedule_pump(SflPipeline *self);
static void sfl_delivery_abandon(SflDelivery *delivery);

static void
sfl_pipeline_arm(SflPipeline *self, GSource **slot, gint64 delay_usec, SflClockOnceFunc func,
		 gpointer data)
{
	sfl_clock_once(self->clock, slot, MAX(delay_usec, 0), NULL, func, data, self->context);
}

/**
 * sfl_lane_to_string:
 * @lane: a lane
 *
 * Returns: (transfer none): the lane's name for logs and metrics
 */
const gchar *
sfl_lane_to_string(SflLane lane)
{
	return lane == SFL_LANE_STREAMING ? "streaming" : "bulk";
}

/**
 * sfl_pipeline_backoff_usec:
 * @rand: the jitter source
 * @attempt: failures so far of this batch or commit, from 0
 * @retry_after_usec: the peer's delay, or -1
 *
 * Returns: the peer's delay capped at 60 s when it gave one, else a full-jitter delay in
 * [0, min(60 s, 1 s * 2^attempt)]
 */
gint64
sfl_pipeline_backoff_usec(GRand *rand, guint attempt, gint64 retry_after_usec)
{
	gint64 cap = SFL_PIPELINE_BACKOFF_BASE_USEC;

	g_return_val_if_fail(rand != NULL, SFL_PIPELINE_BACKOFF_CAP_USEC);
	if (retry_after_usec >= 0)
		return MIN(retry_after_usec, SFL_PIPELINE_BACKOFF_CAP_USEC);
	for (guint i = 0; i < attempt && cap < SFL_PIPELINE_BACKOFF_CAP_USEC; i++)
		cap *= 2;
	cap = MIN(cap, SFL_PIPELINE_BACKOFF_CAP_USEC);
	return (gint64)g_rand_double_range(rand, 0, (gdouble)cap + 1);
}

/* --- items and key tracks ------------------------------------------------------------------- */

static guint64
sfl_entry_cost(const SflEntry *entry)
{
	guint64 cost;

	if (entry->checkpoint_only)
		return 0;
	cost = entry->line_len + SFL_PIPELINE_ENTRY_OVERHEAD;
	if (entry->labels != NULL) {
		for (guint i = 0; i < sfl_labels_get_n_pairs(entry->labels); i++) {
			const SflLabelPair *pair = sfl_labels_get_pair(entry->labels, i);
			cost += strlen(pair->name) + strlen(pair->value);
		}
	}
	for (guint i = 0; i < entry->n_metadata; i++)
		cost += strlen(entry->metadata[i].name) + strlen(entry->metadata[i].value);
	if (entry->checkpoint_key != NULL)
		cost += strlen(entry->checkpoint_key);
	/* a shared value is stored once, however many entries carry it */
	if (entry->checkpoint_value != NULL && !entry->checkpoint_shared)
		cost += strlen(entry->checkpoint_value);
	return cost;
}

static void
sfl_item_free(SflItem *item)
{
	sfl_entry_unref(item->entry);
	g_free(item);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflItem, sfl_item_free)

static void
sfl_key_mark_free(SflKeyMark *mark)
{
	sfl_entry_unref(mark->entry);
	g_free(mark);
}

static void
sfl_key_track_free(SflKeyTrack *track)
{
	g_queue_clear_full(&track->marks, (GDestroyNotify)sfl_key_mark_free);
	g_free(track);
}

static SflKeyMark *
sfl_lane_track_entry(SflLaneState *lane, SflEntry *entry)
{
	SflKeyTrack *track;
	SflKeyMark *mark;

	if (entry->checkpoint_key == NULL || entry->checkpoint_value == NULL)
		return NULL;
	track = g_hash_table_lookup(lane->keys, entry->checkpoint_key);
	if (track == NULL) {
		track = g_new0(SflKeyTrack, 1);
		g_queue_init(&track->marks);
		g_hash_table_insert(lane->keys, g_strdup(entry->checkpoint_key), track);
	}
	mark = g_new0(SflKeyMark, 1);
	mark->entry = sfl_entry_ref(entry);
	g_queue_push_tail(&track->marks, mark);
	return mark;
}

/* pops the set marks at the head of @key's track; records the furthest value in @doc */
static void
sfl_lane_track_advance(SflLaneState *lane, const gchar *key, SflStateDoc *doc)
{
	SflKeyTrack *track = g_hash_table_lookup(lane->keys, key);
	SflKeyMark *last = NULL;

	if (track == NULL || track->abandoned)
		return;
	while (!g_queue_is_empty(&track->marks)) {
		SflKeyMark *head = g_queue_peek_head(&track->marks);
		if (!head->disposed)
			break;
		g_queue_pop_head(&track->marks);
		if (last != NULL)
			sfl_key_mark_free(last);
		last = head;
	}
	if (last == NULL)
		return;
	sfl_state_doc_set(doc, key, last->entry->checkpoint_value);
	sfl_key_mark_free(last);
}

/* the entries were accepted or deliberately dropped: commit whatever that unblocked */
static void
sfl_lane_dispose(SflLaneState *lane, GPtrArray *items, guint start, guint len)
{
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();

	for (guint i = start; i < start + len; i++) {
		SflItem *item = g_ptr_array_index(items, i);
		item->disposed = TRUE;
		if (item->mark != NULL)
			item->mark->disposed = TRUE;
	}
	for (guint i = start; i < start + len; i++) {
		SflItem *item = g_ptr_array_index(items, i);
		if (item->mark != NULL)
			sfl_lane_track_advance(lane, item->entry->checkpoint_key, doc);
	}
	if (sfl_state_doc_size(doc) == 0)
		return;
	if (lane->commit_pending == NULL)
		lane->commit_pending = sfl_state_doc_new();
	for (guint i = 0; i < sfl_state_doc_size(doc); i++) {
		const gchar *key = sfl_state_doc_key_at(doc, i);
		sfl_state_doc_set(lane->commit_pending, key, sfl_state_doc_get(doc, key));
	}
	sfl_lane_commit_kick(lane);
}

/* shutdown gave up on @item: its key never commits again in this pipeline (SFL-0002) */
static void
sfl_lane_abandon_keys(SflLaneState *lane, SflItem *item)
{
	if (item->mark != NULL) {
		SflKeyTrack *track = g_hash_table_lookup(lane->keys, item->entry->checkpoint_key);
		if (track != NULL)
			track->abandoned = TRUE;
	}
	if (!item->entry->checkpoint_only)
		lane->pipeline->counters.abandoned_entries++;
}

/* --- commits -------------------------------------------------------------------------------- */

typedef struct {
	SflPipeline *pipeline;
	SflLaneState *lane;
} SflCommitOp;

/* how often a failing lane repeats its summary line */
#define SFL_PIPELINE_FAILURE_LOG_USEC (60 * G_USEC_PER_SEC)

/*
 * The reason label of a failed commit, from the error code alone (messages are for people):
 * conflict, fenced, corrupt, permission (access refused), io (the file system failed), transient
 * (a bucket service unreachable, overloaded or throttling) or other.
 */
static const gchar *
sfl_pipeline_commit_failure_reason(SflPipeline *self, const GError *error)
{
	if (error->domain != SFL_ERROR)
		return "other";
	switch ((SflError)error->code) {
	case SFL_ERROR_FENCED:
		return "fenced";
	case SFL_ERROR_CONFLICT:
		return "conflict";
	case SFL_ERROR_CORRUPT:
		return "corrupt";
	case SFL_ERROR_AUTH:
		return "permission";
	case SFL_ERROR_TRANSIENT:
		/* the same code means a failing disk for the file store, a network hiccup else */
		return g_strcmp0(self->store_kind, "file") == 0 ? "io" : "transient";
	case SFL_ERROR_THROTTLED:
		return "transient";
	case SFL_ERROR_INVALID_CONFIG:
	case SFL_ERROR_REJECTED:
	case SFL_ERROR_NOT_FOUND:
	case SFL_ERROR_INTERNAL:
	default:
		return "other";
	}
}

static void
sfl_pipeline_count_commit_failure(SflPipeline *self, const gchar *reason)
{
	if (self->commit_failures == NULL)
		return;
	sfl_series_inc(sfl_metric_family_series(self->commit_failures,
						(const gchar *[]){ self->store_kind, reason }));
}

/* a commit to retry: the first of a streak is a WARNING, then one summary a minute */
static void
sfl_lane_commit_failed(SflLaneState *lane, const gchar *reason, const GError *error)
{
	SflPipeline *self = lane->pipeline;
	gint64 now = sfl_clock_monotonic_usec(self->clock);

	lane->failed_commits++;
	if (lane->commit_failing_since == 0) {
		lane->commit_failing_since = now;
		lane->commit_failure_logged_at = now;
		g_warning("%s lane: checkpoint commit to %s failed (%s), retrying with backoff; "
			  "the data reached Loki and the checkpoint is kept: %s",
			  sfl_lane_to_string(lane->lane), self->store_desc, reason, error->message);
		return;
	}
	if (now - lane->commit_failure_logged_at < SFL_PIPELINE_FAILURE_LOG_USEC) {
		g_debug("%s lane: checkpoint commit failed again, retrying: %s",
			sfl_lane_to_string(lane->lane), error->message);
		return;
	}
	lane->commit_failure_logged_at = now;
	g_warning("%s lane: checkpoint commits to %s still failing after %" G_GINT64_FORMAT
		  " s (%" G_GUINT64_FORMAT " failures; last: %s: %s)",
		  sfl_lane_to_string(lane->lane), self->store_desc,
		  (now - lane->commit_failing_since) / G_USEC_PER_SEC, lane->failed_commits, reason,
		  error->message);
}

/* a commit landed, or the lane will not commit any more: the streak is over */
static void
sfl_lane_commit_settled(SflLaneState *lane, gboolean landed)
{
	SflPipeline *self = lane->pipeline;

	if (lane->commit_failing_since == 0)
		return;
	if (landed)
		g_message("%s lane: checkpoint commits to %s recovered after %" G_GINT64_FORMAT
			  " s and %" G_GUINT64_FORMAT " failures",
			  sfl_lane_to_string(lane->lane), self->store_desc,
			  (sfl_clock_monotonic_usec(self->clock) - lane->commit_failing_since) /
				  G_USEC_PER_SEC,
			  lane->failed_commits);
	lane->commit_failing_since = 0;
	lane->failed_commits = 0;
}

static void
sfl_lane_commit_timer_cb(gpointer user_data)
{
	sfl_lane_commit_kick(user_data);
}

static void
sfl_lane_stop(SflLaneState *lane, const GError *error, gboolean fenced)
{
	SflPipeline *self = lane->pipeline;
	SflPipelineErrorFunc func = fenced ? self->callbacks.fenced : self->callbacks.error;

	if (lane->stopped && (!fenced || lane->fenced))
		return;
	lane->stopped = TRUE;
	sfl_clear_source(&lane->flush_timer);
	if (fenced) {
		/* a newer leader owns the store: nothing of ours may be written any more */
		lane->fenced = TRUE;
		/* a demotion, not a degradation: no commit is failing once none is attempted */
		sfl_lane_commit_settled(lane, FALSE);
		if (lane->delivery != NULL)
			sfl_delivery_abandon(lane->delivery);
		sfl_clear_source(&lane->commit_timer);
		g_clear_pointer(&lane->commit_doc, sfl_state_doc_free);
		g_clear_pointer(&lane->commit_pending, sfl_state_doc_free);
	}
	g_warning("%s lane stopped: %s", sfl_lane_to_string(lane->lane), error->message);
	if (func != NULL)
		func(self, lane->lane, error, self->callbacks_data);
}

static void
sfl_lane_commit_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflCommitOp *op = user_data;
	g_autoptr(SflPipeline) self = op->pipeline;
	SflLaneState *lane = op->lane;
	g_autoptr(GError) error = NULL;
	const gchar *reason = NULL;

	g_free(op);
	lane->commit_in_flight = FALSE;
	if (sfl_checkpoint_store_commit_many_finish(SFL_CHECKPOINT_STORE(source), result, &error)) {
		self->counters.commits++;
		sfl_lane_commit_settled(lane, TRUE);
		if (self->callbacks.committed != NULL)
			self->callbacks.committed(self, lane->commit_doc, self->callbacks_data);
		lane->commit_attempt = 0;
		g_clear_pointer(&lane->commit_doc, sfl_state_doc_free);
		sfl_lane_commit_kick(lane);
		if (self->serial_commits)
			sfl_pipeline_schedule_pump(self);
		sfl_pipeline_check_stopped(self);
		return;
	}
	reason = sfl_pipeline_commit_failure_reason(self, error);
	sfl_pipeline_count_commit_failure(self, reason);
	if (g_error_matches(error, SFL_ERROR, SFL_ERROR_FENCED)) {
		sfl_lane_stop(lane, error, TRUE);
		sfl_pipeline_check_stopped(self);
		return;
	}
	if (self->abandoning || lane->fenced) {
		g_warning("%s lane: checkpoint commit given up at shutdown: %s",
			  sfl_lane_to_string(lane->lane), error->message);
		g_clear_pointer(&lane->commit_doc, sfl_state_doc_free);
		g_clear_pointer(&lane->commit_pending, sfl_state_doc_free);
		sfl_pipeline_check_stopped(self);
		return;
	}
	/* the data was delivered: keep the checkpoint, retry it merged with anything newer */
	self->counters.commit_retries++;
	sfl_lane_commit_failed(lane, reason, error);
	sfl_pipeline_arm(self, &lane->commit_timer,
			 sfl_pipeline_backoff_usec(self->rand, lane->commit_attempt++, -1),
			 sfl_lane_commit_timer_cb, lane);
}

static void
sfl_lane_commit_kick(SflLaneState *lane)
{
	SflPipeline *self = lane->pipeline;
	SflCommitOp *op;

	if (lane->fenced || lane->commit_in_flight || lane->commit_timer != NULL)
		return;
	if (lane->commit_pending != NULL) {
		if (lane->commit_doc == NULL) {
			lane->commit_doc = g_steal_pointer(&lane->commit_pending);
		} else {
			for (guint i = 0; i < sfl_state_doc_size(lane->commit_pending); i++) {
				const gchar *key = sfl_state_doc_key_at(lane->commit_pending, i);
				sfl_state_doc_set(lane->commit_doc, key,
						  sfl_state_doc_get(lane->commit_pending, key));
			}
			g_clear_pointer(&lane->commit_pending, sfl_state_doc_free);
		}
	}
	if (lane->commit_doc == NULL)
		return;
	/*
	 * Today's count goes out as it is now, not as it was when the batch was recorded: the
	 * other lane may have written a larger one meanwhile, which a retried older value would
	 * otherwise overwrite.
	 */
	if (self->egress != NULL &&
	    sfl_state_doc_get(lane->commit_doc, SFL_EGRESS_BUDGET_KEY) != NULL) {
		g_autofree gchar *budget = sfl_egress_dup_persisted(self->egress);
		if (budget != NULL)
			sfl_state_doc_set(lane->commit_doc, SFL_EGRESS_BUDGET_KEY, budget);
	}
	lane->commit_in_flight = TRUE;
	op = g_new0(SflCommitOp, 1);
	op->pipeline = g_object_ref(self);
	op->lane = lane;
	if (self->unit != NULL)
		sfl_checkpoint_store_commit_unit_async(self->store, self->unit, self->unit_epoch,
						       lane->commit_doc, NULL, sfl_lane_commit_cb,
						       op);
	else
		sfl_checkpoint_store_commit_many_async(self->store, lane->commit_doc,
						       SFL_CHECKPOINT_STORE_NONE, NULL,
						       sfl_lane_commit_cb, op);
}

/* the unit lease's fence for a sharded unit, else the store's (the single lease's) */
static gboolean
sfl_pipeline_check_fence(SflPipeline *self)
{
	if (self->unit_fence != NULL)
		return self->unit_fence(self->unit_fence_data);
	return sfl_checkpoint_store_check_fence(self->store);
}

/* --- deliveries ----------------------------------------------------------------------------- */

static void
sfl_delivery_free(SflDelivery *delivery)
{
	sfl_clear_source(&delivery->retry_timer);
	g_clear_object(&delivery->cancellable);
	g_clear_pointer(&delivery->part_batch, sfl_batch_free);
	g_clear_pointer(&delivery->batch, sfl_batch_free);
	g_clear_pointer(&delivery->items, g_ptr_array_unref);
	g_clear_pointer(&delivery->ranges, g_array_unref);
	g_free(delivery);
}

/* the delivery ended (all parts disposed of): the lane may flush its next batch */
static void
sfl_delivery_finish(SflDelivery *delivery)
{
	SflLaneState *lane = delivery->lane;

	lane->delivery = NULL;
	sfl_delivery_free(delivery);
	sfl_lane_pump(lane);
}

static void
sfl_delivery_next(SflDelivery *delivery)
{
	if (delivery->ranges->len == 0) {
		sfl_delivery_finish(delivery);
		return;
	}
	delivery->part = g_array_index(delivery->ranges, SflRange, delivery->ranges->len - 1);
	g_array_set_size(delivery->ranges, delivery->ranges->len - 1);
	delivery->attempt = 0;
	g_clear_pointer(&delivery->part_batch, sfl_batch_free);
	delivery->part_batch =
		sfl_batch_slice(delivery->batch, delivery->part.start, delivery->part.len);
	sfl_delivery_push(delivery);
}

static void
sfl_delivery_dispose_part(SflDelivery *delivery)
{
	SflRange part = delivery->part;

	sfl_lane_dispose(delivery->lane, delivery->items, part.start, part.len);
	/* the items stay in the array (indices are ranges), their entries are released with it */
}

static void
sfl_delivery_retry_cb(gpointer user_data)
{
	sfl_delivery_push(user_data);
}

/*
 * The drop series of an entry: attributed to its stream (SFL-0061), so a drop alert can say
 * which source, type and org lost data. org is empty (no label, to Prometheus) without one.
 */
static SflSeries *
sfl_pipeline_drop_series(SflPipeline *self, const gchar *reason, const SflEntry *entry)
{
	const gchar *source = NULL;
	const gchar *event_type = NULL;
	const gchar *org = NULL;

	if (self->dropped == NULL)
		return NULL;
	if (entry->labels != NULL) {
		source = sfl_labels_lookup(entry->labels, "source");
		event_type = sfl_labels_lookup(entry->labels, "event_type");
		org = sfl_labels_lookup(entry->labels, "org");
	}
	return sfl_metric_family_series(
		self->dropped, (const gchar *[]){ reason, source != NULL ? source : "unknown",
						  event_type != NULL ? event_type : "unknown",
						  org != NULL ? org : "" });
}

/* the reason label of a single dropped entry: the sink's two named ones, else "permanent" */
static const gchar *
sfl_pipeline_drop_reason(const gchar *reason)
{
	if (g_strcmp0(reason, "bad_request") == 0 || g_strcmp0(reason, "oversized_413") == 0)
		return reason;
	return "permanent";
}

static void
sfl_delivery_count_drop(SflPipeline *self, const gchar *reason, const SflEntry *entry)
{
	if (g_strcmp0(reason, "bad_request") == 0) {
		self->counters.dropped_bad_request++;
	} else if (g_strcmp0(reason, "oversized_413") == 0) {
		self->counters.dropped_oversized_413++;
	} else {
		self->counters.dropped_other++;
		reason = "permanent";
	}
	sfl_series_inc(sfl_pipeline_drop_series(self, reason, entry));
}

/*
 * The checkpoints move past @entries as soon as this returns, so the dead-letter store is
 * written first; one durable append per disposal, not per entry.
 */
static void
sfl_pipeline_deadletter(SflPipeline *self, SflLane lane, SflEntry *const *entries,
			const gchar *const *reasons, guint n)
{
	g_autofree const gchar **orgs = NULL;
	g_autoptr(GError) error = NULL;

	if (self->deadletter == NULL || n == 0)
		return;
	orgs = g_new0(const gchar *, n + 1);
	for (guint i = 0; i < n; i++)
		orgs[i] = entries[i]->labels != NULL ? sfl_labels_lookup(entries[i]->labels, "org")
						     : NULL;
	if (!sfl_deadletter_append_refused(self->deadletter, entries, reasons, orgs, n, &error))
		g_warning("%s lane: %u refused entries could not be kept in the dead-letter store "
			  "and are lost: %s",
			  sfl_lane_to_string(lane), n, error->message);
}

/**
 * sfl_pipeline_get_failing_since:
 * @self: a pipeline
 *
 * Returns: the monotonic time since which the earliest failing lane's pushes have failed
 * continuously, or 0 when no lane is failing
 */
gint64
sfl_pipeline_get_failing_since(SflPipeline *self)
{
	gint64 since = 0;

	g_return_val_if_fail(SFL_IS_PIPELINE(self), 0);
	for (guint i = 0; i < SFL_LANE_COUNT; i++) {
		gint64 t = self->lanes[i].failing_since;
		if (t != 0 && (since == 0 || t < since))
			since = t;
	}
	return since;
}

/**
 * sfl_pipeline_set_metrics:
 * @self: a pipeline
 * @metrics: (nullable): the registry
 */
void
sfl_pipeline_set_metrics(SflPipeline *self, SflMetrics *metrics)
{
	/* Prometheus' default buckets: pushes take milliseconds to seconds */
	static const gdouble push_bounds[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
					       0.5,   1,    2.5,   5,	 10 };
	const gchar *outcome[] = { "outcome", NULL };
	const gchar *dropped_labels[] = { "reason", "source", "event_type", "org", NULL };
	SflMetricFamily *push = NULL;
	SflMetricFamily *last = NULL;

	g_return_if_fail(SFL_IS_PIPELINE(self));
	g_clear_pointer(&self->metrics, sfl_metrics_unref);
	self->dropped = NULL;
	if (metrics == NULL)
		return;
	self->metrics = sfl_metrics_ref(metrics);
	push = sfl_metrics_counter(metrics, "sf2loki_loki_push", "Loki push attempts by outcome.",
				   outcome);
	self->push_duration = sfl_metric_family_series(
		sfl_metrics_histogram(metrics, "sf2loki_loki_push_duration_seconds",
				      "Wall time of successful pushes, retries included.", NULL,
				      push_bounds, G_N_ELEMENTS(push_bounds)),
		NULL);
	self->bytes_pushed = sfl_metric_family_series(
		sfl_metrics_counter(metrics, "sf2loki_loki_bytes_pushed",
				    "Request body bytes Loki accepted.", NULL),
		NULL);
	self->truncated = sfl_metrics_counter(metrics, "sf2loki_lines_truncated",
					      "Lines cut to sink.loki.batch.max_line_bytes.",
					      (const gchar *[]){ "source", NULL });
	self->dropped = sfl_metrics_counter(
		metrics, "sf2loki_loki_entries_dropped",
		"Entries dropped for good, by reason and by the stream they belonged to.",
		dropped_labels);
	last = sfl_metrics_gauge(metrics, "sf2loki_last_push_success_timestamp_seconds",
				 "Unix time of the last accepted push.", NULL);
	self->push_success = sfl_metric_family_series(push, (const gchar *[]){ "success" });
	self->push_retried = sfl_metric_family_series(push, (const gchar *[]){ "retried" });
	self->last_success = sfl_metric_family_series(last, NULL);
	self->commit_failures = sfl_metrics_counter(metrics, "sf2loki_checkpoint_commit_failures",
						    "Checkpoint commits that failed, by store and "
						    "reason; each is retried unless fenced.",
						    (const gchar *[]){ "store", "reason", NULL });
}

/**
 * sfl_pipeline_set_store_label:
 * @self: a pipeline
 * @kind: the store's kind: `file`, `s3`, `gcs` or `memory` (the metrics label)
 * @location: (nullable): where it keeps the document (a path, `s3://bucket/key`), for logs
 */
void
sfl_pipeline_set_store_label(SflPipeline *self, const gchar *kind, const gchar *location)
{
	g_return_if_fail(SFL_IS_PIPELINE(self));
	g_return_if_fail(kind != NULL);
	g_free(self->store_kind);
	g_free(self->store_desc);
	self->store_kind = g_strdup(kind);
	self->store_desc = location != NULL ? g_strdup_printf("the %s store %s", kind, location)
					    : g_strdup_printf("the %s store", kind);
}

/**
 * sfl_pipeline_get_commit_failing_since:
 * @self: a pipeline
 *
 * Returns: the monotonic time since which the earliest failing lane's checkpoint commits have
 * failed continuously (fenced commits excluded: they demote), or 0 when none is failing
 */
gint64
sfl_pipeline_get_commit_failing_since(SflPipeline *self)
{
	gint64 since = 0;

	g_return_val_if_fail(SFL_IS_PIPELINE(self), 0);
	for (guint i = 0; i < SFL_LANE_COUNT; i++) {
		gint64 t = self->lanes[i].commit_failing_since;
		if (t != 0 && (since == 0 || t < since))
			since = t;
	}
	return since;
}

/* a retried push: the first of a streak is a WARNING, then one summary a minute */
static void
sfl_lane_push_failed(SflLaneState *lane, const SflSinkResult *result)
{
	SflPipeline *self = lane->pipeline;
	gint64 now = sfl_clock_monotonic_usec(self->clock);
	const gchar *reason = result->reason != NULL ? result->reason : "no reason";
	const gchar *detail = result->detail != NULL ? result->detail : "";

	lane->failed_pushes++;
	if (lane->failing_since == 0) {
		lane->failing_since = now;
		lane->failure_logged_at = now;
		g_warning("%s lane: Loki push failed (%s), retrying with backoff; nothing is "
			  "dropped%s%s",
			  sfl_lane_to_string(lane->lane), reason, detail[0] != '\0' ? ": " : "",
			  detail);
		return;
	}
	if (now - lane->failure_logged_at < SFL_PIPELINE_FAILURE_LOG_USEC)
		return;
	lane->failure_logged_at = now;
	g_warning("%s lane: Loki pushes still failing after %" G_GINT64_FORMAT
		  " s (%" G_GUINT64_FORMAT " retries; last: %s)",
		  sfl_lane_to_string(lane->lane), (now - lane->failing_since) / G_USEC_PER_SEC,
		  lane->failed_pushes, reason);
}

/* a push succeeded or its entries were disposed of for good: the streak is over */
static void
sfl_lane_push_settled(SflLaneState *lane)
{
	SflPipeline *self = lane->pipeline;

	if (lane->failing_since == 0)
		return;
	g_message("%s lane: Loki pushes recovered after %" G_GINT64_FORMAT
		  " s and %" G_GUINT64_FORMAT " retries",
		  sfl_lane_to_string(lane->lane),
		  (sfl_clock_monotonic_usec(self->clock) - lane->failing_since) / G_USEC_PER_SEC,
		  lane->failed_pushes);
	lane->failing_since = 0;
	lane->failed_pushes = 0;
}

/* Loki took the part: count it against today's budget, persisted with its checkpoints */
static void sfl_delivery_record_egress(SflDelivery *delivery, guint64 line_bytes);

/* like sfl_delivery_next, but the next part waits @delay_usec first and keeps its attempt */
static void
sfl_delivery_next_later(SflDelivery *delivery, gint64 delay_usec)
{
	SflPipeline *self = delivery->lane->pipeline;

	delivery->part = g_array_index(delivery->ranges, SflRange, delivery->ranges->len - 1);
	g_array_set_size(delivery->ranges, delivery->ranges->len - 1);
	g_clear_pointer(&delivery->part_batch, sfl_batch_free);
	delivery->part_batch =
		sfl_batch_slice(delivery->batch, delivery->part.start, delivery->part.len);
	sfl_pipeline_arm(self, &delivery->retry_timer, delay_usec, sfl_delivery_retry_cb, delivery);
}

/*
 * Loki stored some entries of the part and named the others (docs/reliability.md, "Partial
 * rejections"): the stored ones are done, the permanent refusals are counted and disposed of
 * like a single rejected entry, and only the retryable ones go out again, after a backoff,
 * as runs of neighbours so the parts stay in FIFO order.
 */
static gboolean
sfl_delivery_partial(SflDelivery *delivery, const SflSinkResult *result)
{
	SflLaneState *lane = delivery->lane;
	SflPipeline *self = lane->pipeline;
	SflRange part = delivery->part;
	g_autoptr(GArray) runs = g_array_new(FALSE, FALSE, sizeof(SflRange));
	guint stored = 0, refused = 0, again = 0;
	gsize stored_bytes = 0;

	if (result->verdicts == NULL || result->verdicts->len != part.len)
		return FALSE;
	if (self->deadletter != NULL) {
		g_autoptr(GPtrArray) refused_entries = g_ptr_array_new();
		g_autoptr(GPtrArray) reasons = g_ptr_array_new();
		for (guint i = 0; i < part.len; i++) {
			const SflSinkVerdict *v =
				&g_array_index(result->verdicts, SflSinkVerdict, i);
			if (v->reason == NULL || v->retryable)
				continue;
			g_ptr_array_add(refused_entries, ((SflItem *)g_ptr_array_index(
								  delivery->items, part.start + i))
								 ->entry);
			g_ptr_array_add(reasons, (gpointer)v->reason);
		}
		sfl_pipeline_deadletter(self, lane->lane, (SflEntry *const *)refused_entries->pdata,
					(const gchar *const *)reasons->pdata, refused_entries->len);
	}
	for (guint i = 0; i < part.len; i++) {
		const SflSinkVerdict *v = &g_array_index(result->verdicts, SflSinkVerdict, i);
		SflItem *item = g_ptr_array_index(delivery->items, part.start + i);

		if (v->reason != NULL && v->retryable) {
			SflRange *last = runs->len > 0
						 ? &g_array_index(runs, SflRange, runs->len - 1)
						 : NULL;
			if (last != NULL && last->start + last->len == part.start + i) {
				last->len++;
			} else {
				SflRange run = { part.start + i, 1 };
				g_array_append_val(runs, run);
			}
			again++;
			continue;
		}
		if (v->reason == NULL) {
			stored++;
			if (!item->entry->checkpoint_only)
				stored_bytes +=
					sfl_batch_get(delivery->batch, part.start + i)->line_len;
		} else {
			refused++;
			self->counters.dropped_bad_request++;
			sfl_series_inc(sfl_pipeline_drop_series(self, v->reason, item->entry));
			if (self->callbacks.rejected != NULL)
				self->callbacks.rejected(self, lane->lane, item->entry, v->reason,
							 self->callbacks_data);
		}
		sfl_lane_dispose(lane, delivery->items, part.start + i, 1);
	}
	self->counters.pushed_entries += stored;
	self->counters.pushed_bytes += stored_bytes;
	/* what Loki stored counts against today's budget, as for an OK */
	if (stored_bytes > 0)
		sfl_delivery_record_egress(delivery, stored_bytes);
	/* a retry alone is reported by the failing streak's own summary */
	if (refused > 0)
		g_warning("%s lane: Loki stored %u of %u entries, refused %u for good, %u to retry",
			  sfl_lane_to_string(lane->lane), stored, part.len, refused, again);
	else
		g_debug("%s lane: Loki stored %u of %u entries, %u to retry",
			sfl_lane_to_string(lane->lane), stored, part.len, again);
	delivery->part_started = 0;
	if (runs->len == 0) {
		sfl_lane_push_settled(lane);
		sfl_delivery_next(delivery);
		return TRUE;
	}
	/* a stack: the last run goes under, so the first is pushed first */
	for (guint r = runs->len; r > 0; r--)
		g_array_append_val(delivery->ranges, g_array_index(runs, SflRange, r - 1));
	self->counters.retries++;
	if (self->push_retried != NULL)
		sfl_series_inc(self->push_retried);
	sfl_lane_push_failed(lane, result);
	sfl_delivery_next_later(delivery, sfl_pipeline_backoff_usec(self->rand, delivery->attempt++,
								    result->retry_after_usec));
	return TRUE;
}

static void
sfl_delivery_record_egress(SflDelivery *delivery, guint64 line_bytes)
{
	SflLaneState *lane = delivery->lane;
	SflPipeline *self = lane->pipeline;
	g_autofree gchar *budget = NULL;

	if (self->egress == NULL)
		return;
	budget = sfl_egress_record(self->egress, line_bytes);
	if (budget == NULL || lane->fenced)
		return;
	if (lane->commit_pending == NULL)
		lane->commit_pending = sfl_state_doc_new();
	/* not kicked here: the part's checkpoints join this write when it is disposed of */
	sfl_state_doc_set(lane->commit_pending, SFL_EGRESS_BUDGET_KEY, budget);
}

static void
sfl_delivery_push_cb(GObject *source, GAsyncResult *res, gpointer user_data)
{
	SflDelivery *delivery = user_data;
	g_autoptr(SflPipeline) self = g_steal_pointer(&delivery->push_ref);
	g_autoptr(SflSinkResult) result = NULL;
	g_autoptr(GError) error = NULL;
	SflLaneState *lane = delivery->lane;
	SflRange part = delivery->part;
	gint64 retry_after = -1;

	delivery->push_in_flight = FALSE;
	result = sfl_sink_push_finish(SFL_SINK(source), res, &error);
	/* shutdown gave up on this batch while the push was in flight */
	if (delivery->abandoned) {
		sfl_delivery_free(delivery);
		sfl_pipeline_check_stopped(self);
		return;
	}
	if (result == NULL) {
		/* the sink classifies failures; an unclassified one must not lose data */
		g_debug("%s lane: push failed: %s", sfl_lane_to_string(lane->lane), error->message);
		result = sfl_sink_result_new(SFL_SINK_RETRY);
		result->retry_after_usec = -1;
	}
	switch (result->outcome) {
	case SFL_SINK_OK:
		self->counters.pushed_entries += part.len;
		self->counters.pushed_bytes += sfl_batch_get_line_bytes(delivery->part_batch);
		sfl_lane_push_settled(lane);
		self->counters.last_success_wall_usec = sfl_clock_wall_usec(self->clock);
		if (self->push_success != NULL) {
			sfl_series_inc(self->push_success);
			sfl_series_set(self->last_success,
				       (gdouble)sfl_clock_wall_usec(self->clock) / G_USEC_PER_SEC);
			sfl_series_observe(self->push_duration,
					   (gdouble)(sfl_clock_monotonic_usec(self->clock) -
						     delivery->part_started) /
						   G_USEC_PER_SEC);
			sfl_series_add(self->bytes_pushed, (gdouble)result->body_bytes);
		}
		delivery->part_started = 0;
		sfl_delivery_record_egress(delivery,
					   sfl_batch_get_line_bytes(delivery->part_batch));
		sfl_delivery_dispose_part(delivery);
		/* a part without checkpoints still owes the store today's count */
		sfl_lane_commit_kick(lane);
		sfl_delivery_next(delivery);
		break;
	case SFL_SINK_RETRY:
		self->counters.retries++;
		if (self->push_retried != NULL)
			sfl_series_inc(self->push_retried);
		retry_after = result->retry_after_usec;
		sfl_lane_push_failed(lane, result);
		g_debug("%s lane: push of %u entries to retry (%s)", sfl_lane_to_string(lane->lane),
			part.len, result->reason != NULL ? result->reason : "no reason");
		sfl_pipeline_arm(
			self, &delivery->retry_timer,
			sfl_pipeline_backoff_usec(self->rand, delivery->attempt++, retry_after),
			sfl_delivery_retry_cb, delivery);
		break;
	case SFL_SINK_PARTIAL:
		if (sfl_delivery_partial(delivery, result))
			break;
		/* verdicts that do not fit the part: as a whole-batch rejection */
		G_GNUC_FALLTHROUGH;
	case SFL_SINK_REJECTED:
		delivery->part_started = 0;
		if (part.len == 1) {
			/*
			 * a permanent drop ends a failing streak, as in the original
			 * (docs/operations/health.md)
			 */
			SflEntry *dropped =
				((SflItem *)g_ptr_array_index(delivery->items, part.start))->entry;

			sfl_lane_push_settled(lane);
			sfl_pipeline_deadletter(
				self, lane->lane, &dropped,
				(const gchar *const[]){ sfl_pipeline_drop_reason(result->reason) },
				1);
			sfl_delivery_count_drop(self, result->reason, dropped);
			if (self->callbacks.rejected != NULL)
				self->callbacks.rejected(self, lane->lane, dropped,
							 result->reason != NULL ? result->reason
										: "rejected",
							 self->callbacks_data);
			g_warning("%s lane: dropped one entry the sink rejected (%s)",
				  sfl_lane_to_string(lane->lane),
				  result->reason != NULL ? result->reason : "rejected");
			sfl_delivery_dispose_part(delivery);
		} else {
			SflRange left = { part.start, part.len / 2 };
			SflRange right = { part.start + part.len / 2, part.len - part.len / 2 };
			/* a stack: the left half goes first, so the parts stay in FIFO order */
			g_array_append_val(delivery->ranges, right);
			g_array_append_val(delivery->ranges, left);
		}
		sfl_delivery_next(delivery);
		break;
	case SFL_SINK_FATAL:
	default: {
		g_autoptr(GError) fatal =
			g_error_new(SFL_ERROR, SFL_ERROR_INVALID_CONFIG, "sink failed: %s",
				    result->reason != NULL ? result->reason : "fatal");
		lane->delivery = NULL;
		sfl_delivery_free(delivery);
		sfl_lane_stop(lane, fatal, FALSE);
		sfl_pipeline_check_stopped(self);
		break;
	}
	}
}

/* the fence closed before this push: it ends like a fenced commit, from the loop */
static gboolean
sfl_delivery_withheld_cb(gpointer user_data)
{
	SflDelivery *delivery = user_data;
	g_autoptr(SflPipeline) self = g_steal_pointer(&delivery->push_ref);
	g_autoptr(GError) error = NULL;

	delivery->push_in_flight = FALSE;
	if (delivery->abandoned) {
		sfl_delivery_free(delivery);
		sfl_pipeline_check_stopped(self);
		return G_SOURCE_REMOVE;
	}
	error = g_error_new_literal(SFL_ERROR, SFL_ERROR_FENCED,
				    "push withheld: this replica is no longer the leader");
	sfl_lane_stop(delivery->lane, error, TRUE);
	sfl_pipeline_check_stopped(self);
	return G_SOURCE_REMOVE;
}

static void
sfl_delivery_push(SflDelivery *delivery)
{
	SflPipeline *self = delivery->lane->pipeline;

	delivery->push_in_flight = TRUE;
	delivery->push_ref = g_object_ref(self);
	/*
	 * A replica that lost the lease must not keep sending: no commit of its can land any
	 * more, so every line it pushed would reach Loki again from the next leader, and a drain
	 * after the loss would run two pipelines side by side for up to shutdown_grace.
	 */
	if (!sfl_pipeline_check_fence(self)) {
		GSource *idle = g_idle_source_new();
		g_source_set_callback(idle, sfl_delivery_withheld_cb, delivery, NULL);
		g_source_attach(idle, self->context);
		g_source_unref(idle);
		return;
	}
	if (delivery->part_started == 0)
		delivery->part_started = sfl_clock_monotonic_usec(self->clock);
	sfl_sink_push_async(self->sink, delivery->part_batch, delivery->cancellable,
			    sfl_delivery_push_cb, delivery);
}

static void
sfl_delivery_admitted_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflDelivery *delivery = user_data;
	g_autoptr(SflPipeline) self = g_steal_pointer(&delivery->push_ref);
	g_autoptr(GError) error = NULL;
	SflLaneState *lane = delivery->lane;
	SflEgressVerdict verdict = SFL_EGRESS_ADMITTED;

	delivery->admitting = FALSE;
	if (!sfl_egress_admit_finish(SFL_EGRESS(source), result, &verdict, &error) &&
	    !delivery->abandoned) {
		/* only an abandon cancels an admission; anything else must not lose the batch */
		g_warning("%s lane: egress admission failed (%s); pushing the batch",
			  sfl_lane_to_string(lane->lane), error->message);
		verdict = SFL_EGRESS_ADMITTED;
	}
	if (delivery->abandoned) {
		sfl_delivery_free(delivery);
		sfl_pipeline_check_stopped(self);
		return;
	}
	switch (verdict) {
	case SFL_EGRESS_DROP: {
		guint n = delivery->items->len;

		/* like a permanent rejection: counted, and the checkpoints move past it */
		self->counters.dropped_budget += n;
		if (self->deadletter != NULL) {
			g_autoptr(GPtrArray) entries = g_ptr_array_sized_new(n);
			g_autoptr(GPtrArray) reasons = g_ptr_array_sized_new(n);
			for (guint i = 0; i < n; i++) {
				g_ptr_array_add(
					entries,
					((SflItem *)g_ptr_array_index(delivery->items, i))->entry);
				g_ptr_array_add(reasons, (gpointer) "budget");
			}
			sfl_pipeline_deadletter(self, lane->lane, (SflEntry *const *)entries->pdata,
						(const gchar *const *)reasons->pdata, n);
		}
		for (guint i = 0; self->dropped != NULL && i < n;) {
			const SflEntry *first =
				((SflItem *)g_ptr_array_index(delivery->items, i))->entry;
			guint run = 1;

			/* a batch is mostly runs of one interned label set: one lookup per run */
			while (i + run < n &&
			       ((SflItem *)g_ptr_array_index(delivery->items, i + run))
					       ->entry->labels == first->labels)
				run++;
			sfl_series_add(sfl_pipeline_drop_series(self, "budget", first),
				       (gdouble)run);
			i += run;
		}
		sfl_lane_dispose(lane, delivery->items, 0, n);
		sfl_delivery_finish(delivery);
		break;
	}
	case SFL_EGRESS_PAUSED:
		/* stopping while the budget is spent: nothing more goes out this run, and what
		 * was not pushed is not committed (a later run delivers it) */
		sfl_delivery_abandon(delivery);
		sfl_lane_pump(lane);
		break;
	case SFL_EGRESS_ADMITTED:
	default:
		sfl_delivery_next(delivery);
		break;
	}
}

static void
sfl_delivery_start(SflLaneState *lane, GPtrArray *items)
{
	SflPipeline *self = lane->pipeline;
	SflDelivery *delivery = g_new0(SflDelivery, 1);
	SflRange all = { 0, items->len };

	delivery->lane = lane;
	delivery->items = items;
	delivery->batch = sfl_batch_new();
	for (guint i = 0; i < items->len; i++) {
		SflItem *item = g_ptr_array_index(items, i);
		sfl_batch_add(delivery->batch, sfl_entry_ref(item->entry));
	}
	/* before any slicing: a slice does not see a later cap's byte count */
	if (self->config.max_line_bytes > 0) {
		for (guint i = 0; self->truncated != NULL && i < items->len; i++) {
			const SflEntry *entry = ((SflItem *)g_ptr_array_index(items, i))->entry;
			const gchar *source = NULL;

			if (entry->line_len <= (gsize)self->config.max_line_bytes)
				continue;
			source = entry->labels != NULL ? sfl_labels_lookup(entry->labels, "source")
						       : NULL;
			sfl_series_inc(sfl_metric_family_series(
				self->truncated,
				(const gchar *[]){ source != NULL ? source : "unknown" }));
		}
		sfl_batch_cap_lines(delivery->batch, (gsize)self->config.max_line_bytes);
	}
	delivery->ranges = g_array_new(FALSE, FALSE, sizeof(SflRange));
	g_array_append_val(delivery->ranges, all);
	delivery->cancellable = g_cancellable_new();
	lane->delivery = delivery;
	if (self->egress == NULL) {
		sfl_delivery_next(delivery);
		return;
	}
	/* once per batch: retries and bisected parts are not admitted again */
	delivery->admitting = TRUE;
	delivery->push_ref = g_object_ref(self);
	sfl_egress_admit_async(self->egress, sfl_batch_get_length(delivery->batch),
			       sfl_batch_get_line_bytes(delivery->batch),
			       self->stopping ? SFL_EGRESS_ADMIT_NO_PAUSE : SFL_EGRESS_ADMIT_NONE,
			       delivery->cancellable, sfl_delivery_admitted_cb, delivery);
}

static void
sfl_delivery_abandon(SflDelivery *delivery)
{
	SflLaneState *lane = delivery->lane;

	for (guint i = 0; i < delivery->items->len; i++) {
		SflItem *item = g_ptr_array_index(delivery->items, i);
		if (!item->disposed)
			sfl_lane_abandon_keys(lane, item);
	}
	lane->delivery = NULL;
	delivery->abandoned = TRUE;
	sfl_clear_source(&delivery->retry_timer);
	g_cancellable_cancel(delivery->cancellable);
	if (!delivery->push_in_flight && !delivery->admitting)
		sfl_delivery_free(delivery);
}

/* --- lanes ---------------------------------------------------------------------------------- */

static gboolean
sfl_lane_is_full(SflLaneState *lane)
{
	const SflLokiBatchConfig *config = &lane->pipeline->config;

	if (config->queue_maxsize > 0 && g_queue_get_length(&lane->fifo) >= config->queue_maxsize)
		return TRUE;
	return config->queue_max_bytes > 0 && lane->fifo_bytes >= (guint64)config->queue_max_bytes;
}

static void
sfl_lane_flush_timer_cb(gpointer user_data)
{
	SflLaneState *lane = user_data;

	lane->acc_ready = TRUE;
	sfl_lane_pump(lane);
}

/* moves the FIFO's head into the batch being filled */
static void
sfl_lane_take(SflLaneState *lane)
{
	SflPipeline *self = lane->pipeline;
	SflItem *item = g_queue_pop_head(&lane->fifo);

	lane->fifo_bytes -= item->cost;
	g_ptr_array_add(lane->acc, item);
	if (!item->entry->checkpoint_only) {
		lane->acc_real++;
		lane->acc_bytes += item->entry->line_len;
	}
	if (lane->acc->len >= (guint)MAX(self->config.max_entries, 1) ||
	    lane->acc_bytes >= (guint64)MAX(self->config.max_bytes, 1) ||
	    self->config.flush_interval <= 0)
		lane->acc_ready = TRUE;
	else if (lane->acc->len == 1)
		sfl_pipeline_arm(self, &lane->flush_timer, self->config.flush_interval,
				 sfl_lane_flush_timer_cb, lane);
}

static void
sfl_lane_flush(SflLaneState *lane)
{
	g_autoptr(GPtrArray) items = g_steal_pointer(&lane->acc);
	g_autoptr(GPtrArray) real = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_item_free);
	g_autoptr(GPtrArray) markers =
		g_ptr_array_new_with_free_func((GDestroyNotify)sfl_item_free);

	lane->acc = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_item_free);
	lane->acc_bytes = 0;
	lane->acc_real = 0;
	lane->acc_ready = FALSE;
	sfl_clear_source(&lane->flush_timer);
	g_ptr_array_set_free_func(items, NULL);
	for (guint i = 0; i < items->len; i++) {
		SflItem *item = g_ptr_array_index(items, i);
		g_ptr_array_add(item->entry->checkpoint_only ? markers : real, item);
	}
	/* checkpoint-only entries are never pushed: they are disposed of by being flushed, and
	 * still commit only behind the earlier real entries of their key */
	if (markers->len > 0)
		sfl_lane_dispose(lane, markers, 0, markers->len);
	if (real->len > 0)
		sfl_delivery_start(lane, g_steal_pointer(&real));
}

/* the lane has room again: every writer, in the order they registered */
static void
sfl_lane_wake_writers(SflLaneState *lane)
{
	/* a writer may stop (and unregister) itself or another one while it is woken */
	g_autoptr(GPtrArray) snapshot = g_ptr_array_new_with_free_func(g_object_unref);
	g_autoptr(GArray) funcs =
		g_array_sized_new(FALSE, FALSE, sizeof(SflLaneWritableFunc), lane->writers->len);

	for (guint i = 0; i < lane->writers->len; i++) {
		SflLaneWriter *w = &g_array_index(lane->writers, SflLaneWriter, i);
		g_ptr_array_add(snapshot, g_object_ref(w->writer));
		g_array_append_val(funcs, w->func);
	}
	for (guint i = 0; i < snapshot->len; i++)
		g_array_index(funcs, SflLaneWritableFunc, i)(g_ptr_array_index(snapshot, i));
}

static void
sfl_lane_pump(SflLaneState *lane)
{
	g_autoptr(SflPipeline) self = g_object_ref(lane->pipeline);

	while (!lane->stopped) {
		gboolean drain_now = self->stopping && g_queue_is_empty(&lane->fifo);

		if (lane->acc->len > 0 && (lane->acc_ready || drain_now)) {
			if (lane->acc_real > 0 && lane->delivery != NULL)
				break; /* one push in flight: stop taking, let the FIFO fill */
			if (lane->acc_real > 0 && self->serial_commits &&
			    (lane->commit_in_flight || lane->commit_doc != NULL ||
			     lane->commit_pending != NULL))
				break; /* the commit lands first; its callback pumps again */
			sfl_lane_flush(lane);
			continue;
		}
		if (g_queue_is_empty(&lane->fifo))
			break;
		sfl_lane_take(lane);
	}
	if (lane->refused && !lane->stopped && !self->stopping && !sfl_lane_is_full(lane)) {
		lane->refused = FALSE;
		sfl_lane_wake_writers(lane);
		if (self->callbacks.writable != NULL)
			self->callbacks.writable(self, lane->lane, self->callbacks_data);
	}
	sfl_pipeline_check_stopped(self);
}

static gboolean
sfl_pipeline_pump_cb(gpointer user_data)
{
	/* a finished stop may drop the owner's last reference while the lanes are pumped */
	g_autoptr(SflPipeline) self = g_object_ref(SFL_PIPELINE(user_data));

	sfl_clear_source(&self->pump_source);
	for (guint i = 0; i < SFL_LANE_COUNT; i++)
		sfl_lane_pump(&self->lanes[i]);
	return G_SOURCE_REMOVE;
}

static void
sfl_pipeline_schedule_pump(SflPipeline *self)
{
	if (self->pump_source != NULL)
		return;
	self->pump_source = g_idle_source_new();
	g_source_set_callback(self->pump_source, sfl_pipeline_pump_cb, self, NULL);
	g_source_attach(self->pump_source, self->context);
}

static void
sfl_lane_init(SflLaneState *lane, SflPipeline *self, SflLane id)
{
	lane->pipeline = self;
	lane->lane = id;
	g_queue_init(&lane->fifo);
	lane->acc = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_item_free);
	lane->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					   (GDestroyNotify)sfl_key_track_free);
	lane->writers = g_array_new(FALSE, FALSE, sizeof(SflLaneWriter));
}

static void
sfl_lane_clear(SflLaneState *lane)
{
	if (lane->delivery != NULL)
		sfl_delivery_abandon(lane->delivery);
	sfl_clear_source(&lane->flush_timer);
	sfl_clear_source(&lane->commit_timer);
	g_queue_clear_full(&lane->fifo, (GDestroyNotify)sfl_item_free);
	lane->fifo_bytes = 0;
	g_clear_pointer(&lane->acc, g_ptr_array_unref);
	g_clear_pointer(&lane->commit_pending, sfl_state_doc_free);
	g_clear_pointer(&lane->commit_doc, sfl_state_doc_free);
	g_clear_pointer(&lane->keys, g_hash_table_unref);
	g_clear_pointer(&lane->writers, g_array_unref);
}

/* grace is over: give up on everything not yet delivered (SFL-0002: and on its keys) */
static void
sfl_lane_abandon(SflLaneState *lane)
{
	guint64 before = lane->pipeline->counters.abandoned_entries;

	if (lane->delivery != NULL)
		sfl_delivery_abandon(lane->delivery);
	for (guint i = 0; i < lane->acc->len; i++)
		sfl_lane_abandon_keys(lane, g_ptr_array_index(lane->acc, i));
	g_ptr_array_set_size(lane->acc, 0);
	lane->acc_bytes = 0;
	lane->acc_real = 0;
	lane->acc_ready = FALSE;
	sfl_clear_source(&lane->flush_timer);
	while (!g_queue_is_empty(&lane->fifo)) {
		g_autoptr(SflItem) item = g_queue_pop_head(&lane->fifo);
		sfl_lane_abandon_keys(lane, item);
	}
	lane->fifo_bytes = 0;
	if (lane->pipeline->counters.abandoned_entries > before)
		g_warning("%s lane: abandoned %" G_GUINT64_FORMAT
			  " undelivered entries at shutdown",
			  sfl_lane_to_string(lane->lane),
			  lane->pipeline->counters.abandoned_entries - before);
	/* a commit waiting for its retry will not get one */
	if (lane->commit_timer != NULL) {
		sfl_clear_source(&lane->commit_timer);
		g_clear_pointer(&lane->commit_doc, sfl_state_doc_free);
		g_clear_pointer(&lane->commit_pending, sfl_state_doc_free);
	}
}

static gboolean
sfl_lane_is_idle(SflLaneState *lane)
{
	if (lane->commit_in_flight)
		return FALSE;
	if (lane->fenced)
		return TRUE;
	/* a stopped lane still owes the store what it delivered before it stopped */
	if (lane->commit_doc != NULL || lane->commit_pending != NULL)
		return FALSE;
	if (lane->stopped)
		return TRUE;
	return g_queue_is_empty(&lane->fifo) && lane->acc->len == 0 && lane->delivery == NULL;
}

/* --- the pipeline --------------------------------------------------------------------------- */

static void
sfl_pipeline_check_stopped(SflPipeline *self)
{
	g_autoptr(GTask) task = NULL;

	if (self->stop_task == NULL)
		return;
	for (guint i = 0; i < SFL_LANE_COUNT; i++) {
		if (!sfl_lane_is_idle(&self->lanes[i]))
			return;
	}
	sfl_clear_source(&self->grace_timer);
	task = g_steal_pointer(&self->stop_task);
	g_task_return_boolean(task, TRUE);
}

static void
sfl_pipeline_grace_cb(gpointer user_data)
{
	/* the callbacks below may drop the caller's last reference */
	g_autoptr(SflPipeline) self = g_object_ref(SFL_PIPELINE(user_data));

	self->abandoning = TRUE;
	for (guint i = 0; i < SFL_LANE_COUNT; i++)
		sfl_lane_abandon(&self->lanes[i]);
	sfl_pipeline_check_stopped(self);
}

static void
sfl_pipeline_dispose(GObject *object)
{
	SflPipeline *self = SFL_PIPELINE(object);

	sfl_clear_source(&self->pump_source);
	sfl_clear_source(&self->grace_timer);
	for (guint i = 0; i < SFL_LANE_COUNT; i++) {
		if (self->lanes[i].delivery != NULL)
			sfl_delivery_abandon(self->lanes[i].delivery);
	}
	if (self->stop_task != NULL) {
		g_autoptr(GTask) task = g_steal_pointer(&self->stop_task);
		g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
					"pipeline disposed while stopping");
	}
	G_OBJECT_CLASS(sfl_pipeline_parent_class)->dispose(object);
}

static void
sfl_pipeline_finalize(GObject *object)
{
	SflPipeline *self = SFL_PIPELINE(object);

	for (guint i = 0; i < SFL_LANE_COUNT; i++)
		sfl_lane_clear(&self->lanes[i]);
	g_clear_object(&self->sink);
	g_clear_object(&self->store);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_clear_pointer(&self->context, g_main_context_unref);
	g_clear_pointer(&self->rand, g_rand_free);
	g_clear_pointer(&self->metrics, sfl_metrics_unref);
	g_clear_object(&self->egress);
	g_clear_pointer(&self->deadletter, sfl_deadletter_unref);
	g_free(self->unit);
	if (self->unit_fence_destroy != NULL)
		self->unit_fence_destroy(self->unit_fence_data);
	g_free(self->store_kind);
	g_free(self->store_desc);
	G_OBJECT_CLASS(sfl_pipeline_parent_class)->finalize(object);
}

static void
sfl_pipeline_class_init(SflPipelineClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = sfl_pipeline_dispose;
	object_class->finalize = sfl_pipeline_finalize;
}

static void
sfl_pipeline_init(SflPipeline *self)
{
	for (guint i = 0; i < SFL_LANE_COUNT; i++)
		sfl_lane_init(&self->lanes[i], self, (SflLane)i);
	self->rand = g_rand_new();
	self->context = g_main_context_ref_thread_default();
	self->store_kind = g_strdup("unknown");
	self->store_desc = g_strdup("the checkpoint store");
}

/**
 * sfl_pipeline_new:
 * @config: batching and queue budgets (copied)
 * @sink: (transfer none): where batches go
 * @store: (transfer none): where checkpoints are committed
 * @clock: (transfer none): timers for flushes and backoff
 *
 * Returns: (transfer full): a running pipeline with two empty lanes
 */
SflPipeline *
sfl_pipeline_new(const SflLokiBatchConfig *config, SflSink *sink, SflCheckpointStore *store,
		 SflClock *clock)
{
	SflPipeline *self;

	g_return_val_if_fail(config != NULL, NULL);
	g_return_val_if_fail(SFL_IS_SINK(sink), NULL);
	g_return_val_if_fail(SFL_IS_CHECKPOINT_STORE(store), NULL);
	g_return_val_if_fail(clock != NULL, NULL);
	self = g_object_new(SFL_TYPE_PIPELINE, NULL);
	self->config = *config;
	self->sink = g_object_ref(sink);
	self->store = g_object_ref(store);
	self->clock = sfl_clock_ref(clock);
	return self;
}

/**
 * sfl_pipeline_set_callbacks:
 * @self: a pipeline
 * @callbacks: (nullable): the callbacks (copied); %NULL clears them
 * @user_data: (nullable): passed to every callback
 */
void
sfl_pipeline_set_callbacks(SflPipeline *self, const SflPipelineCallbacks *callbacks,
			   gpointer user_data)
{
	g_return_if_fail(SFL_IS_PIPELINE(self));
	if (callbacks != NULL)
		self->callbacks = *callbacks;
	else
		memset(&self->callbacks, 0, sizeof(self->callbacks));
	self->callbacks_data = user_data;
}

/**
 * sfl_pipeline_set_deadletter:
 * @self: a pipeline
 * @deadletter: (nullable) (transfer none): the store, or %NULL for none
 *
 * Writes every entry disposed of without reaching Loki (a permanent rejection, a partial
 * rejection's refused entries, a budget drop) to @deadletter before its checkpoint moves on.
 */
void
sfl_pipeline_set_deadletter(SflPipeline *self, SflDeadletter *deadletter)
{
	g_return_if_fail(SFL_IS_PIPELINE(self));
	g_clear_pointer(&self->deadletter, sfl_deadletter_unref);
	if (deadletter != NULL)
		self->deadletter = sfl_deadletter_ref(deadletter);
}

/**
 * sfl_pipeline_set_egress:
 * @self: a pipeline
 * @egress: (nullable) (transfer none): the governor shared by both lanes, or %NULL for none
 *
 * Starts the governor's run (it reads today's count from the pipeline's store) and admits
 * every batch through it from now on.
 */
void
sfl_pipeline_set_egress(SflPipeline *self, SflEgress *egress)
{
	g_return_if_fail(SFL_IS_PIPELINE(self));
	g_return_if_fail(egress == NULL || SFL_IS_EGRESS(egress));
	g_clear_object(&self->egress);
	if (egress == NULL)
		return;
	self->egress = g_object_ref(egress);
	sfl_egress_begin(egress, self->store);
}

/**
 * sfl_pipeline_set_serial_commits:
 * @self: the pipeline, before the first offer
 * @serial: whether a lane's next push waits until its last commit landed
 *
 * For a one-shot run that must resume with at most one batch sent twice after a SIGKILL
 * (`sf2loki backfill`): a push never overlaps a commit, so what Loki holds and the store does
 * not is the one batch in flight. The daemon keeps them overlapped (the default), which is
 * faster against a slow store.
 */
void
sfl_pipeline_set_serial_commits(SflPipeline *self, gboolean serial)
{
	g_return_if_fail(SFL_IS_PIPELINE(self));
	self->serial_commits = serial;
}

/**
 * sfl_pipeline_set_unit:
 * @self: a pipeline
 * @unit: the sharded work unit whose keys this pipeline commits
 * @epoch: the epoch of the unit's lease
 * @fence: the unit lease's fence check
 * @fence_data: its data
 * @destroy: (nullable): frees @fence_data with the pipeline
 *
 * Each unit is fenced on its own: a commit carries the unit's epoch, and a stale owner's is
 * refused for that unit alone (docs/deployment/scale-out.md).
 */
void
sfl_pipeline_set_unit(SflPipeline *self, const gchar *unit, guint64 epoch,
		      SflPipelineFenceFunc fence, gpointer fence_data, GDestroyNotify destroy)
{
	g_return_if_fail(SFL_IS_PIPELINE(self));
	g_return_if_fail(unit != NULL && fence != NULL);
	g_return_if_fail(self->unit == NULL);
	self->unit = g_strdup(unit);
	self->unit_epoch = epoch;
	self->unit_fence = fence;
	self->unit_fence_data = fence_data;
	self->unit_fence_destroy = destroy;
}

/**
 * sfl_pipeline_set_seed:
 * @self: a pipeline
 * @seed: the backoff jitter seed
 */
void
sfl_pipeline_set_seed(SflPipeline *self, guint32 seed)
{
	g_return_if_fail(SFL_IS_PIPELINE(self));
	g_rand_set_seed(self->rand, seed);
}

/**
 * sfl_pipeline_has_commit_in_flight:
 * @self: a pipeline
 *
 * Returns: %TRUE while a lane waits for the store
 */
gboolean
sfl_pipeline_has_commit_in_flight(SflPipeline *self)
{
	g_return_val_if_fail(SFL_IS_PIPELINE(self), FALSE);
	for (guint i = 0; i < SFL_LANE_COUNT; i++) {
		if (self->lanes[i].commit_in_flight)
			return TRUE;
	}
	return FALSE;
}

/**
 * sfl_pipeline_offer:
 * @self: a pipeline
 * @lane: the producer's lane
 * @entry: (transfer none): the entry; referenced when taken
 *
 * Queues @entry when @lane is under both budgets. Otherwise (or once stopping, or on a
 * stopped lane) the entry is not taken, and the producer pauses until the writable callback
 * names @lane.
 *
 * Returns: %TRUE when the entry was taken
 */
gboolean
sfl_pipeline_offer(SflPipeline *self, SflLane lane, SflEntry *entry)
{
	SflLaneState *state;
	SflItem *item;

	g_return_val_if_fail(SFL_IS_PIPELINE(self), FALSE);
	g_return_val_if_fail(lane == SFL_LANE_STREAMING || lane == SFL_LANE_BULK, FALSE);
	g_return_val_if_fail(entry != NULL, FALSE);
	state = &self->lanes[lane];
	if (self->stopping || state->stopped)
		return FALSE;
	if (sfl_lane_is_full(state)) {
		state->refused = TRUE;
		return FALSE;
	}
	item = g_new0(SflItem, 1);
	item->entry = sfl_entry_ref(entry);
	item->cost = sfl_entry_cost(entry);
	item->mark = sfl_lane_track_entry(state, entry);
	g_queue_push_tail(&state->fifo, item);
	state->fifo_bytes += item->cost;
	sfl_pipeline_schedule_pump(self);
	return TRUE;
}

/**
 * sfl_pipeline_is_lane_stopped:
 * @self: a pipeline
 * @lane: a lane
 *
 * Returns: %TRUE after a fatal sink result or a fenced commit on @lane
 */
gboolean
sfl_pipeline_is_lane_stopped(SflPipeline *self, SflLane lane)
{
	g_return_val_if_fail(SFL_IS_PIPELINE(self), TRUE);
	g_return_val_if_fail(lane == SFL_LANE_STREAMING || lane == SFL_LANE_BULK, TRUE);
	return self->lanes[lane].stopped;
}

/**
 * sfl_pipeline_get_counters:
 * @self: a pipeline
 * @counters: (out caller-allocates): filled with a snapshot
 */
void
sfl_pipeline_get_counters(SflPipeline *self, SflPipelineCounters *counters)
{
	g_return_if_fail(SFL_IS_PIPELINE(self));
	g_return_if_fail(counters != NULL);
	*counters = self->counters;
	for (guint i = 0; i < SFL_LANE_COUNT; i++) {
		counters->queue_depth[i] = g_queue_get_length(&self->lanes[i].fifo);
		counters->queue_bytes[i] = self->lanes[i].fifo_bytes;
	}
}

/**
 * sfl_pipeline_stop_async:
 * @self: a pipeline
 * @grace_usec: how long to keep draining on the pipeline's clock
 * @cancellable: (nullable): unused beyond the task's own check
 * @callback: called once everything accepted is committed and the rest abandoned
 * @user_data: (nullable): for @callback
 *
 * Stops accepting entries, flushes what is queued without waiting for the flush interval,
 * and keeps delivering for up to @grace_usec. Then abandons whatever was not delivered; the
 * keys of abandoned entries are never committed again by this pipeline.
 */
void
sfl_pipeline_stop_async(SflPipeline *self, gint64 grace_usec, GCancellable *cancellable,
			GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = NULL;

	g_return_if_fail(SFL_IS_PIPELINE(self));
	g_return_if_fail(cancellable == NULL || G_IS_CANCELLABLE(cancellable));
	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_pipeline_stop_async);
	if (self->stop_task != NULL || self->stopping) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_INTERNAL,
					"the pipeline is already stopping");
		return;
	}
	/*
	 * Stopped because the term ended: nothing of this run can be committed any more, so a
	 * drain only pushes duplicates, and a push waiting on its backoff would fire later, even
	 * into a following term of this replica, whose open fence would then let this run's older
	 * checkpoints overwrite what another leader committed meanwhile (found by tests/ha).
	 */
	if (!sfl_pipeline_check_fence(self))
		grace_usec = 0;
	self->stopping = TRUE;
	self->stop_task = g_steal_pointer(&task);
	/* a batch waiting for midnight on the spent budget would only run out the grace */
	for (guint i = 0; self->egress != NULL && i < SFL_LANE_COUNT; i++) {
		SflDelivery *delivery = self->lanes[i].delivery;
		if (delivery != NULL && delivery->admitting)
			sfl_egress_stop_waiting(self->egress, delivery->cancellable);
	}
	sfl_pipeline_arm(self, &self->grace_timer, grace_usec, sfl_pipeline_grace_cb, self);
	sfl_pipeline_schedule_pump(self);
}

/**
 * sfl_pipeline_stop_finish:
 * @self: a pipeline
 * @result: the result
 * @error: (nullable): return location for a #GError
 *
 * Returns: %TRUE once stopped
 */
gboolean
sfl_pipeline_stop_finish(SflPipeline *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/* --- the lane handle a source writes into ------------------------------------------------ */

struct _SflPipelineLane {
	GObject parent_instance;
	SflPipeline *pipeline; /* held: a source may outlive the term's last other reference */
	SflLane lane;
};

static void sfl_pipeline_lane_iface_init(SflLaneHandleInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(SflPipelineLane, sfl_pipeline_lane, G_TYPE_OBJECT,
			      G_IMPLEMENT_INTERFACE(SFL_TYPE_LANE_HANDLE,
						    sfl_pipeline_lane_iface_init))

static gboolean
sfl_pipeline_lane_offer(SflLaneHandle *handle, SflEntry *entry)
{
	SflPipelineLane *self = SFL_PIPELINE_LANE(handle);
	return sfl_pipeline_offer(self->pipeline, self->lane, entry);
}

static gboolean
sfl_pipeline_lane_is_full(SflLaneHandle *handle)
{
	SflPipelineLane *self = SFL_PIPELINE_LANE(handle);
	return sfl_lane_is_full(&self->pipeline->lanes[self->lane]);
}

static gboolean
sfl_pipeline_lane_is_stopped(SflLaneHandle *handle)
{
	SflPipelineLane *self = SFL_PIPELINE_LANE(handle);
	return sfl_pipeline_is_lane_stopped(self->pipeline, self->lane);
}

static void
sfl_pipeline_lane_add_writer(SflLaneHandle *handle, GObject *writer, SflLaneWritableFunc func)
{
	SflPipelineLane *self = SFL_PIPELINE_LANE(handle);
	SflLaneWriter w = { writer, func };
	g_array_append_val(self->pipeline->lanes[self->lane].writers, w);
}

static void
sfl_pipeline_lane_remove_writer(SflLaneHandle *handle, GObject *writer)
{
	SflPipelineLane *self = SFL_PIPELINE_LANE(handle);
	GArray *writers = self->pipeline->lanes[self->lane].writers;

	for (guint i = writers->len; i > 0; i--) {
		if (g_array_index(writers, SflLaneWriter, i - 1).writer == writer)
			g_array_remove_index(writers, i - 1);
	}
}

static void
sfl_pipeline_lane_iface_init(SflLaneHandleInterface *iface)
{
	iface->offer = sfl_pipeline_lane_offer;
	iface->is_full = sfl_pipeline_lane_is_full;
	iface->is_stopped = sfl_pipeline_lane_is_stopped;
	iface->add_writer = sfl_pipeline_lane_add_writer;
	iface->remove_writer = sfl_pipeline_lane_remove_writer;
}

static void
sfl_pipeline_lane_finalize(GObject *object)
{
	SflPipelineLane *self = SFL_PIPELINE_LANE(object);

	g_clear_object(&self->pipeline);
	G_OBJECT_CLASS(sfl_pipeline_lane_parent_class)->finalize(object);
}

static void
sfl_pipeline_lane_class_init(SflPipelineLaneClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_pipeline_lane_finalize;
}

static void
sfl_pipeline_lane_init(SflPipelineLane *self)
{
}

/**
 * sfl_pipeline_get_lane:
 * @self: a pipeline
 * @lane: which lane
 *
 * Returns: (transfer full): a handle on @lane for a source to write into; it holds @self
 */
SflLaneHandle *
sfl_pipeline_get_lane(SflPipeline *self, SflLane lane)
{
	SflPipelineLane *handle = NULL;

	g_return_val_if_fail(SFL_IS_PIPELINE(self), NULL);
	g_return_val_if_fail(lane == SFL_LANE_STREAMING || lane == SFL_LANE_BULK, NULL);
	handle = g_object_new(SFL_TYPE_PIPELINE_LANE, NULL);
	handle->pipeline = g_object_ref(self);
	handle->lane = lane;
	return SFL_LANE_HANDLE(handle);
}
