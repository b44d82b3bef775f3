/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>
#include <jansson.h>

#include "sfl-checkpoint-store.h"
#include "sfl-clock.h"
#include "sfl-entry.h"
#include "sfl-lane-handle.h"
#include "sfl-metrics.h"
#include "sfl-shape.h"

G_BEGIN_DECLS

/*
 * SflSource: the seam every source implements (docs/architecture.md, "The seams").
 *
 * A source lives for one leadership term: it is built when the term starts, resumes from
 * the checkpoint store, emits entries into its lane and is stopped when the term ends. Its
 * in-memory cursors therefore never outlive the leadership that produced them.
 *
 * Backpressure: sfl_source_offer() hands an entry to the source's lane. When the lane is full
 * the entry is refused (the caller keeps it) and the caller parks itself with
 * sfl_source_wait_writable(); its callback runs once the lane has room again (the lane wakes
 * the source, which registered with it at start), and the caller offers the same entry
 * again. Parked callers are woken in the order they parked. A curl
 * transfer stays paused, a poll stays unscheduled, until then: nothing is dropped.
 *
 * Labels: sfl_source_intern_labels() merges the deployment labels (job, service_name,
 * environment, sf_org_id, sink.loki.labels; they win on collisions, docs/sources/README.md) into
 * the source's own and interns the set. Checkpoint keys go through sfl_source_key(), which adds the
 * org prefix in multi-org mode (docs/sources/README.md).
 *
 * Threading: the main thread.
 */

typedef struct {
	/* what the source writes into (the pipeline's streaming or bulk lane) */
	SflLaneHandle *lane;
	SflCheckpointStore *store;
	SflLabelsInterner *interner;
	SflClock *clock;
	/* deployment labels: name/value pairs, NULL-terminated flat array (name, value, ...) */
	const gchar *const *static_labels;
	/* "org=<name>:" in multi-org mode, else "" */
	const gchar *key_prefix;
	/* sink.loki.structured_metadata_fields */
	const gchar *const *metadata_fields;
	/* (nullable) sf2loki_events_ingested and sf2loki_ingest_lag_seconds are recorded here */
	SflMetrics *metrics;
	/* the org's name in multi-org mode (its per-org instruments gain `org`), else NULL */
	const gchar *org;
	/* (nullable) bounds labels promoted from data; shared by the run's sources */
	SflLabelGuard *label_guard;
	/*
	 * the first org in multi-org mode: a prefixed key that is missing is read from its
	 * unprefixed single-org name (docs/sources/README.md: a transparent upgrade; the next
	 * commit writes the prefixed key)
	 */
	gboolean legacy_keys;
} SflSourceContext;

typedef void (*SflSourceWritableFunc)(gpointer user_data);

#define SFL_TYPE_SOURCE (sfl_source_get_type())
G_DECLARE_DERIVABLE_TYPE(SflSource, sfl_source, SFL, SOURCE, GObject)

struct _SflSourceClass {
	GObjectClass parent_class;

	/* begin producing */
	void (*start)(SflSource *self);
	/* stop producing at once: cancel transfers and timers; nothing is offered afterwards */
	void (*stop)(SflSource *self);
};

const gchar *sfl_source_get_name(SflSource *self);
const SflSourceContext *sfl_source_get_context(SflSource *self);
/* a one-shot timer on the term's clock, in the default context (see sfl_clock_once()) */
void sfl_source_arm_timer(SflSource *self, GSource **slot, gint64 delay_usec, SflClockOnceFunc func,
			  gpointer user_data);

void sfl_source_start(SflSource *self, const SflSourceContext *context);
void sfl_source_stop(SflSource *self);
gboolean sfl_source_is_stopped(SflSource *self);
/* nothing left to read in this term, ever: emits "finished" once (docs/cli.md, "run") */
void sfl_source_finish(SflSource *self);
gboolean sfl_source_is_finished(SflSource *self);

/* TRUE: the pipeline took @entry (its reference is consumed); FALSE: the lane is full and
 * the caller still owns @entry */
gboolean sfl_source_offer(SflSource *self, SflEntry *entry);
void sfl_source_wait_writable(SflSource *self, SflSourceWritableFunc func, gpointer user_data);
void sfl_source_cancel_wait(SflSource *self, gpointer user_data);
/* wakes the parked callers; the lane calls it when it has room again */
void sfl_source_notify_writable(SflSource *self);

gchar *sfl_source_key(SflSource *self, const gchar *key) G_GNUC_WARN_UNUSED_RESULT;
/* loads @key (as sfl_source_key() returned it), with the first org's single-org fallback */
void sfl_source_load_async(SflSource *self, const gchar *key, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data);
gchar *sfl_source_load_finish(SflSource *self, GAsyncResult *result,
			      GError **error) G_GNUC_WARN_UNUSED_RESULT;
SflLabels *sfl_source_intern_labels(SflSource *self, const SflLabelPair *pairs,
				    guint n_pairs) G_GNUC_WARN_UNUSED_RESULT;

/* counters every source keeps, for progress lines and metrics */
typedef struct {
	guint64 rows_read;	   /* records read from Salesforce */
	guint64 entries_offered;   /* real entries handed to the pipeline */
	guint64 checkpoint_tokens; /* checkpoint-only entries */
	guint64 rows_filtered;	   /* drop_row */
	guint64 rows_sampled_out;
	guint64 timestamp_fallbacks;
	guint64 errors; /* contained failures (cycle, type or object) */
	guint64 throttled;
} SflSourceCounters;

SflSourceCounters *sfl_source_counters(SflSource *self);

/*
 * One series of a per-org instrument (docs/operations/metrics.md "Multi-org"): the family is
 * registered on first use, and in multi-org mode an `org` label is appended to
 * @label_names/@label_values. NULL without a registry; updating a NULL series is a no-op. Look a
 * series up once per event type or object, not per row.
 */
/* shaping outcomes: the counter above and its instrument, both at once */
void sfl_source_count_filtered(SflSource *self, const gchar *rule);
void sfl_source_count_sampled_out(SflSource *self, const gchar *event_type);
void sfl_source_count_timestamp_fallback(SflSource *self);
void sfl_source_count_throttled(SflSource *source, const gchar *api);

SflSeries *
sfl_source_series(SflSource *self, SflMetricType type, const gchar *name, const gchar *help,
		  const gchar *const *label_names, const gchar *const *label_values);

/*
 * Shaping (docs/sources/README.md "Shared by every source"): every source turns a decoded record
 * into an entry the same way: transforms, then the deterministic sampler, then the record's own
 * timestamp (or the fallback rule), the JSON line and the structured metadata. What differs between
 * sources is data, and lives in the spec: which field the sampler hashes, which fields carry
 * the timestamp, what the fallback's candidate is.
 */
typedef struct {
	/* (nullable) run in order; a drop_row rule drops the record */
	const SflTransforms *transforms;
	/* kept fraction; >= 1 keeps everything without hashing */
	gdouble sample;
	/*
	 * what the sampler hashes: sample_key when set; else the record's sample_field when it
	 * is a non-empty string; else the record's JSON line
	 */
	const gchar *sample_key;
	gsize sample_key_len;
	const gchar *sample_field;
	/* the event type or object a sampled-out row is counted under */
	const gchar *event_type;
	/* the record's own timestamp: the first of these fields that parses... */
	const gchar *const *timestamp_fields;
	guint n_timestamp_fields;
	/* ...or, when set, this instead */
	gboolean (*timestamp_func)(SflRecord *record, gint64 *unix_usec, gpointer user_data);
	/* sfl_timestamp_fallback()'s inputs when the record has none */
	gboolean has_fallback;
	gint64 fallback_usec;
	gint64 now_usec;
	/* structured metadata fields (sfl_shape_metadata()) */
	const gchar *const *metadata_fields;
	/* (nullable) appends a source's own pairs after the listed fields */
	void (*metadata_func)(SflRecord *record, GArray *pairs, gpointer user_data);
	gpointer user_data;
} SflShapeSpec;

/* a shaped record: the line and metadata (its strings in the record's arena) and the time */
typedef struct {
	GString *line;
	GArray *metadata; /* SflLabelPair */
	gint64 timestamp_ns;
} SflShaped;

void sfl_shaped_init(SflShaped *shaped);
void sfl_shaped_clear(SflShaped *shaped);
/* (transfer full): the entry for @shaped; it shares @checkpoint */
SflEntry *sfl_shaped_entry(const SflShaped *shaped, SflLabels *labels, const gchar *key,
			   GRefString *checkpoint) G_GNUC_WARN_UNUSED_RESULT;

/* transforms and sampling: FALSE when @record becomes no entry (counted when @count) */
gboolean sfl_source_keep_record(SflSource *self, const SflShapeSpec *spec, SflRecord *record,
				gboolean count);
/* timestamp, line and metadata of a kept @record, into @shaped */
void sfl_source_shape_record(SflSource *self, const SflShapeSpec *spec, SflRecord *record,
			     SflShaped *shaped);
/*
 * Both of the above, then the entry: (transfer full) (nullable) NULL when a transform or the
 * sampler dropped @record (counted). The entry's strings are copied out of @record.
 */
SflEntry *sfl_source_emit_record(SflSource *self, const SflShapeSpec *spec, SflRecord *record,
				 SflLabels *labels, const gchar *key,
				 GRefString *checkpoint) G_GNUC_WARN_UNUSED_RESULT;

/*
 * What operators see of one committed checkpoint (docs/operations/health.md "/statusz"): each
 * source reads its own key and cursor formats, so the run's observer never has to. A
 * source's describe function (its kind record's `describe_checkpoint`) claims the keys it
 * writes, given without the multi-org prefix.
 */
typedef struct {
	/* sf2loki_watermark_timestamp_seconds{source, object}: both set, static or in the key */
	const gchar *source;
	const gchar *object;
	/* or sf2loki_last_replay_commit_timestamp_seconds{topic}, pointing into the key */
	const gchar *topic;
	/* the cursor's own time; without it the commit time stands in */
	gboolean has_time;
	gdouble time_seconds;
	/* (owned) (nullable): the part of the cursor a person reads; NULL: the value itself */
	json_t *position;
} SflCheckpointView;

typedef gboolean (*SflCheckpointDescribeFunc)(const gchar *key, const gchar *value,
					      SflCheckpointView *view);

/* a JSON cursor: @field (a timestamp string) is its time and what /statusz shows of it */
void sfl_checkpoint_view_cursor(SflCheckpointView *view, const gchar *value, const gchar *field);
void sfl_checkpoint_view_clear(SflCheckpointView *view);

G_END_DECLS
