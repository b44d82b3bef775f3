/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-config.h"
/* the calls go through the Pub/Sub client, which also turns the endpoint into a URL */
#include "sfl-pubsub-client.h"
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"
#include "sfl-source.h"

G_BEGIN_DECLS

/*
 * SflPubsubSource: Salesforce Pub/Sub API streams (docs/sources/pubsub.md),
 *, one Subscribe call per topic, all in the streaming lane.
 *
 * - Start position: the stored `pubsub:<topic>` replay id (base64) with CUSTOM, else the
 *   configured preset (CUSTOM with nothing stored = LATEST). A stored value that is not
 *   base64 is counted (sf2loki_checkpoint_load_errors) and the preset is used.
 * - Flow control: the first FetchRequest asks for N = default_num_requested; after a
 *   response whose entries the lane has all taken, N more are asked for when
 *   pending_num_requested <= N/2. While the lane refuses an entry nothing is asked for, so
 *   Salesforce stops sending once the credit is spent.
 * - Keepalives (no events, a latest_replay_id) become checkpoint-only entries when the id
 *   differs from the position in memory.
 * - Failures: reconnect after a capped exponential backoff (1 s .. 30 s) plus jitter of up to
 *   half of it, from the last replay id seen. UNAUTHENTICATED invalidates the token used.
 *   INVALID_ARGUMENT for a CUSTOM start with `replayid.corrupted` (or no error-code) drops the
 *   replay id (counted, logged with its age when known) and resubscribes with EARLIEST,
 *   whatever replay_preset says (docs/sources/pubsub.md). 300 s without a response while the lane
 *   takes entries is a stall (counted) and reconnects.
 * - CDC: the line carries ChangeEventHeader as decoded; the field names its bitmaps select
 *   go to structured metadata, into the line or nowhere (cdc_field_names).
 * - Schemas: fetched once per schema id with GetSchema (concurrent needs share one call) and
 *   kept for the source's life; a fetch failure reconnects, never skips. A payload that does
 *   not decode is skipped and counted (sf2loki_decode_errors).
 * - Topics: the explicit list, plus "*" = discovery through describeGlobal of every
 *   `*EventStream` and every `<X>Event` with an `<X>EventStore` (SFL-0038), include/exclude
 *   globs, overlap filtering, rediscovery every rediscovery_interval.
 */

#define SFL_TYPE_PUBSUB_SOURCE (sfl_pubsub_source_get_type())
G_DECLARE_FINAL_TYPE(SflPubsubSource, sfl_pubsub_source, SFL, PUBSUB_SOURCE, SflSource)

/*
 * @config and @sources must outlive the source; @rest (for discovery) may be NULL when no
 * topic is "*"; @org_id NULL = resolved through @auth. A bad transform is
 * SFL_ERROR_INVALID_CONFIG.
 */
SflPubsubSource *
sfl_pubsub_source_new(SflSfAuth *auth, SflSfRest *rest, const SflPubsubConfig *config,
		      const SflSourcesConfig *sources, const gchar *org_id, const gchar *salt,
		      GError **error) G_GNUC_WARN_UNUSED_RESULT;

/* discovery rule (SFL-0038): the topics among describeGlobal's sObject names, sorted */
GPtrArray *sfl_pubsub_discover_topics(const gchar *const *names) G_GNUC_WARN_UNUSED_RESULT;

/* include/exclude (case-sensitive globs): whether @topic is streamed */
gboolean sfl_pubsub_config_wants_topic(const SflPubsubConfig *config, const gchar *topic);

/*
 * The explicit topics the source subscribes to, in order: `topics` without "*" and repeats,
 * then include/exclude. The overlap filter is not applied: it only drops discovered topics
 * (docs/sources/pubsub.md, "Topics"). The doctor probes exactly these.
 */
GPtrArray *sfl_pubsub_explicit_topics(const SflPubsubConfig *config) G_GNUC_WARN_UNUSED_RESULT;

typedef struct {
	guint64 probes;		  /* half-closed first requests (see sfl-pubsub-source.c) */
	guint64 subscribes;	  /* Subscribe streams opened */
	guint64 reconnects;	  /* opened after the first one of a topic */
	guint64 responses;	  /* FetchResponses */
	guint64 events;		  /* events received */
	guint64 keepalive_tokens; /* checkpoint-only entries from keepalives */
	guint64 topups;		  /* FetchRequests after the first */
	guint64 decode_errors;
	guint64 decode_stalls; /* streaks of undecodable responses or failed schema fetches */
	guint64 replay_fallbacks;
	guint64 stalls;
	guint64 auth_rejections;
	guint64 schema_fetches; /* GetSchema calls */
	guint64 schema_failures;
	guint64 checkpoint_load_errors;
	guint64 discoveries;
} SflPubsubCounters;

const SflPubsubCounters *sfl_pubsub_source_get_counters(SflPubsubSource *self);
/* the topics being streamed, in start order */
GStrv sfl_pubsub_source_dup_topics(SflPubsubSource *self) G_GNUC_WARN_UNUSED_RESULT;
/* tests: shorter reconnect backoff and silence watchdog than the hard-coded 1 s / 30 s / 300 s */
void sfl_pubsub_source_set_timing(SflPubsubSource *self, gint64 backoff_base_usec,
				  gint64 backoff_max_usec, gint64 watchdog_usec);

/* the key and cursor this source commits, for /statusz and the commit gauges */
gboolean sfl_pubsub_source_describe_checkpoint(const gchar *key, const gchar *value,
					       SflCheckpointView *view);

G_END_DECLS
