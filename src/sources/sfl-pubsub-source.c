/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflPubsubSource"

#include "config.h"

#include "sfl-pubsub-source.h"

#include <string.h>

#include "pubsub_api.pb-c.h"
#include "sfl-avro.h"
#include "sfl-error.h"
#include "sfl-grpc.h"
#include "sfl-gsource.h"
#include "sfl-pubsub-client.h"
#include "sfl-record.h"
#include "sfl-shape.h"

/* one replay position per topic: "pubsub:<topic>" (the original's keys) */
#define SFL_PUBSUB_KEY_PREFIX "pubsub:"

/*
 * Each topic is a small state machine on the main loop: load the checkpoint (once per term),
 * get a token, open Subscribe, then turn responses into entries in order. Responses are
 * queued as they arrive (the server never sends more than the credit asked for, so the queue
 * is bounded by N events) and drained one entry at a time into the lane; a refused entry
 * parks the topic until the lane is writable again, and no credit is asked for meanwhile.
 */

#define SFL_PUBSUB_BACKOFF_BASE	   (1 * G_USEC_PER_SEC)
#define SFL_PUBSUB_BACKOFF_MAX	   (30 * G_USEC_PER_SEC)
#define SFL_PUBSUB_WATCHDOG	   (300 * G_USEC_PER_SEC)
#define SFL_PUBSUB_DISCOVERY_TRIES 3
/* a refusal of the first FetchRequest comes at once; silence this long means accepted */
#define SFL_PUBSUB_PROBE_USEC (2 * G_USEC_PER_SEC)

typedef struct _SflPubsubSource SflPubsubSource;

typedef struct {
	SflPubsubSource *source; /* the source owns the topic */
	gchar *name;
	gchar *key;
	gchar *event_type;
	SflLabels *labels;
	gdouble sample;
	gboolean loaded;
	GBytes *position;     /* resume after this replay id; NULL: the preset */
	gint64 position_usec; /* wall time the stream gave @position; 0: it came from the store */
	gint preset;	      /* SflReplayPreset used when @position is NULL */
	gboolean resuming;    /* the current stream started with CUSTOM */
	SflGrpcCall *call;
	SflGrpcCall *probe; /* the half-closed first request, see sfl_topic_probe() */
	GSource *probe_timer;
	GSource *kick; /* runs the topic from the loop, out of curl's callbacks */
	SflSfToken *token;
	gboolean healthy;
	guint64 attempts;
	gint64 backoff;
	guint generation; /* bumped on teardown: late callbacks of an old stream drop out */
	gboolean busy;	  /* load, token or open in flight */
	GSource *timer;
	GSource *watchdog;
	GQueue responses; /* Eventbus__V1__FetchResponse */
	guint event_idx;
	gboolean tail_done; /* the head response's keepalive entry was made */
	SflEntry *pending;
	gboolean parked;
	gboolean waiting_schema;
	gboolean have_ts;
	gint64 last_ts;
	/* stuck-topic detection (docs/sources/pubsub.md): kept across reconnects */
	guint resp_decoded; /* of the head response */
	guint resp_failed;
	guint bad_batches;     /* non-empty responses in a row where nothing decoded */
	guint schema_failures; /* schema fetches in a row that failed */
	SflSeries *m_pending_credits;
	SflSeries *m_reconnects;
	SflSeries *m_fallbacks;
	SflSeries *m_stalls;
	SflSeries *m_up;
	SflSeries *m_decode_errors;
	SflSeries *m_decode_stalls;
} SflTopic;

struct _SflPubsubSource {
	SflSource parent_instance;
	SflSfAuth *auth;
	SflSfRest *rest;
	const SflPubsubConfig *config;
	const SflSourcesConfig *sources;
	gchar *org_id;
	SflPubsubClient *client; /* made once the org id is known */
	SflTransforms *transforms;
	GPtrArray *topics;	    /* SflTopic */
	GHashTable *schemas;	    /* schema id → SflAvroSchema */
	GHashTable *schema_waiters; /* schema id → GPtrArray of SflTopicRef */
	GCancellable *cancellable;
	GRand *rand;
	gboolean alive;
	gint64 backoff_base;
	gint64 backoff_max;
	gint64 watchdog_usec;
	GSource *discovery_timer;
	guint discovery_attempt;
	SflRecord *record;
	SflSeries *m_schema_cache;
	SflSeries *m_load_errors;
	SflPubsubCounters counters;
};

G_DEFINE_FINAL_TYPE(SflPubsubSource, sfl_pubsub_source, SFL_TYPE_SOURCE)

/* a callback's handle on a topic: the source stays alive, the stream may have moved on */
typedef struct {
	SflPubsubSource *self;
	SflTopic *topic;
	guint generation;
} SflTopicRef;

static void sfl_topic_connect(SflTopic *t);
static void sfl_topic_open_stream(SflTopic *t);
static void sfl_topic_kick(SflTopic *t);
static void sfl_topic_process(SflTopic *t);
static void sfl_topic_failed(SflTopic *t, gboolean error);
static void sfl_pubsub_discover(SflPubsubSource *self);

static SflTopicRef *
sfl_topic_ref_new(SflTopic *t)
{
	SflTopicRef *ref = g_new0(SflTopicRef, 1);
	ref->self = g_object_ref(t->source);
	ref->topic = t;
	ref->generation = t->generation;
	return ref;
}

/* TRUE when the callback still concerns the live stream; frees @ref either way */
static gboolean
sfl_topic_ref_take(SflTopicRef *ref, SflTopic **out)
{
	gboolean live = ref->self->alive && ref->topic->generation == ref->generation;

	*out = ref->topic;
	g_object_unref(ref->self);
	g_free(ref);
	return live;
}

/* --- helpers -------------------------------------------------------------------------------- */

static gint
sfl_str_cmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const gchar *const *)a, *(const gchar *const *)b);
}

GPtrArray *
sfl_pubsub_discover_topics(const gchar *const *names)
{
	g_autoptr(GHashTable) all = g_hash_table_new(g_str_hash, g_str_equal);
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; names != NULL && names[i] != NULL; i++)
		g_hash_table_add(all, (gpointer)names[i]);
	for (guint i = 0; names != NULL && names[i] != NULL; i++) {
		const gchar *n = names[i];
		g_autofree gchar *store = NULL;

		if (g_str_has_suffix(n, "EventStream")) {
			g_ptr_array_add(out, g_strconcat("/event/", n, NULL));
			continue;
		}
		/* the threat-detection family: a channel <X>Event stored as <X>EventStore */
		if (!g_str_has_suffix(n, "Event"))
			continue;
		store = g_strconcat(n, "Store", NULL);
		if (g_hash_table_contains(all, store))
			g_ptr_array_add(out, g_strconcat("/event/", n, NULL));
	}
	g_ptr_array_sort(out, sfl_str_cmp);
	return out;
}

gboolean
sfl_pubsub_config_wants_topic(const SflPubsubConfig *c, const gchar *topic)
{
	gboolean included = c->include == NULL || c->include[0] == NULL;

	for (guint i = 0; c->include != NULL && c->include[i] != NULL && !included; i++)
		included = sfl_fnmatch(c->include[i], topic);
	if (!included)
		return FALSE;
	for (guint i = 0; c->exclude != NULL && c->exclude[i] != NULL; i++) {
		if (sfl_fnmatch(c->exclude[i], topic))
			return FALSE;
	}
	return TRUE;
}

static gboolean
sfl_pubsub_topic_wanted(SflPubsubSource *self, const gchar *topic)
{
	return sfl_pubsub_config_wants_topic(self->config, topic);
}

GPtrArray *
sfl_pubsub_explicit_topics(const SflPubsubConfig *config)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	/* the order of sfl_pubsub_start_topics(): "*" is discovery, a repeat is one stream */
	for (guint i = 0; config->topics != NULL && config->topics[i] != NULL; i++) {
		const gchar *name = config->topics[i];
		if (g_str_equal(name, "*") ||
		    g_ptr_array_find_with_equal_func(out, name, g_str_equal, NULL) ||
		    !sfl_pubsub_config_wants_topic(config, name))
			continue;
		g_ptr_array_add(out, g_strdup(name));
	}
	return out;
}

static gdouble
sfl_pubsub_sample_rate(SflPubsubSource *self, const gchar *topic)
{
	for (guint i = 0; self->config->sample != NULL && i < self->config->sample->len; i++) {
		SflConfigPair *p = g_ptr_array_index(self->config->sample, i);
		if (sfl_fnmatch(p->key, topic))
			return p->number;
	}
	return 1.0;
}

/* strict: g_base64_decode() skips characters outside the alphabet */
static GBytes *
sfl_pubsub_decode_position(const gchar *value)
{
	gsize len = strlen(value);
	gsize out_len = 0;
	guchar *raw = NULL;

	if (len == 0 || len % 4 != 0)
		return NULL;
	for (gsize i = 0; i < len; i++) {
		gchar c = value[i];
		if (!(g_ascii_isalnum(c) || c == '+' || c == '/' || (c == '=' && i >= len - 2)))
			return NULL;
		if (c != '=' && i > 0 && value[i - 1] == '=')
			return NULL;
	}
	raw = g_base64_decode(value, &out_len);
	if (out_len == 0) {
		g_free(raw);
		return NULL;
	}
	return g_bytes_new_take(raw, out_len);
}

static GRefString *
sfl_pubsub_encode_position(const guint8 *data, gsize len)
{
	g_autofree gchar *b64 = g_base64_encode(data, len);
	return g_ref_string_new(b64);
}

static gboolean
sfl_pubsub_same_position(GBytes *position, const ProtobufCBinaryData *id)
{
	gsize len = 0;
	const guint8 *data = NULL;

	if (position == NULL)
		return FALSE;
	data = g_bytes_get_data(position, &len);
	return len == id->len && memcmp(data, id->data, len) == 0;
}

static void
sfl_topic_set_position(SflTopic *t, const ProtobufCBinaryData *id)
{
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(t->source));

	g_clear_pointer(&t->position, g_bytes_unref);
	t->position = g_bytes_new(id->data, id->len);
	t->position_usec = sfl_clock_wall_usec(ctx->clock);
}

/* --- topics --------------------------------------------------------------------------------- */

static void
sfl_topic_clear_responses(SflTopic *t)
{
	Eventbus__V1__FetchResponse *r = NULL;

	while ((r = g_queue_pop_head(&t->responses)) != NULL)
		eventbus__v1__fetch_response__free_unpacked(r, NULL);
	t->event_idx = 0;
	t->tail_done = FALSE;
	t->resp_decoded = 0;
	t->resp_failed = 0;
}

/* what one stream holds: its timers, calls, token and undelivered responses */
static void
sfl_topic_release_stream(SflTopic *t)
{
	sfl_clear_source(&t->watchdog);
	sfl_clear_source(&t->probe_timer);
	sfl_clear_source(&t->kick);
	g_clear_pointer(&t->probe, sfl_grpc_call_free);
	g_clear_pointer(&t->call, sfl_grpc_call_free);
	g_clear_pointer(&t->token, sfl_sf_token_unref);
	sfl_topic_clear_responses(t);
}

static void
sfl_topic_free(gpointer data)
{
	SflTopic *t = data;

	sfl_clear_source(&t->timer);
	sfl_topic_release_stream(t);
	g_clear_pointer(&t->pending, sfl_entry_unref);
	g_clear_pointer(&t->position, g_bytes_unref);
	g_clear_pointer(&t->labels, sfl_labels_unref);
	g_free(t->name);
	g_free(t->key);
	g_free(t->event_type);
	g_free(t);
}

static void
sfl_topic_watchdog_cb(gpointer user_data)
{
	SflTopic *t = user_data;

	t->source->counters.stalls++;
	sfl_series_inc(t->m_stalls);
	g_warning("pubsub %s: no response for %" G_GINT64_FORMAT " s; reconnecting", t->name,
		  t->source->watchdog_usec / G_USEC_PER_SEC);
	sfl_topic_failed(t, TRUE);
}

/* the watchdog runs while a stream is open and the lane takes our entries */
static void
sfl_topic_arm_watchdog(SflTopic *t)
{
	sfl_clear_source(&t->watchdog);
	if (t->call == NULL || t->parked || !t->source->alive)
		return;
	sfl_source_arm_timer(SFL_SOURCE(t->source), &t->watchdog, t->source->watchdog_usec,
			     sfl_topic_watchdog_cb, t);
}

/* ends the current stream; unprocessed events are replayed from @position by the next one */
static void
sfl_topic_teardown(SflTopic *t)
{
	t->generation++;
	sfl_topic_release_stream(t);
	t->waiting_schema = FALSE;
	t->busy = FALSE;
	sfl_series_set(t->m_up, 0);
}

static void
sfl_topic_timer_cb(gpointer user_data)
{
	sfl_topic_connect(user_data);
}

static void
sfl_topic_schedule(SflTopic *t, gint64 delay)
{
	sfl_clear_source(&t->timer);
	if (!t->source->alive)
		return;
	sfl_source_arm_timer(SFL_SOURCE(t->source), &t->timer, MAX(delay, 0), sfl_topic_timer_cb,
			     t);
}

/*
 * Reconnects later: after a clean end the base delay, after an error the current backoff
 * (doubled for next time, capped); each plus jitter of up to half of it (docs/sources/pubsub.md).
 */
static void
sfl_topic_failed(SflTopic *t, gboolean error)
{
	SflPubsubSource *self = t->source;
	gint64 delay = 0;

	sfl_topic_teardown(t);
	if (!self->alive)
		return;
	if (!error || t->healthy)
		t->backoff = self->backoff_base;
	t->healthy = FALSE;
	delay = t->backoff;
	delay += (gint64)g_rand_double_range(self->rand, 0, (gdouble)delay / 2);
	if (error)
		t->backoff = MIN(t->backoff * 2, self->backoff_max);
	sfl_topic_schedule(t, delay);
}

/* how long ago the stream gave the position, for the operator judging a replay fallback */
static gchar *
sfl_topic_position_age(SflTopic *t)
{
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(t->source));
	gint64 age = 0;

	if (t->position_usec == 0)
		return g_strdup("its age is unknown: it was loaded from the checkpoint store, "
				"which keeps no commit time");
	age = MAX(sfl_clock_wall_usec(ctx->clock) - t->position_usec, 0) / G_USEC_PER_SEC;
	if (age < 2 * 60)
		return g_strdup_printf("last seen on the stream %" G_GINT64_FORMAT " s ago", age);
	if (age < 2 * 3600)
		return g_strdup_printf("last seen on the stream %" G_GINT64_FORMAT " min ago",
				       age / 60);
	return g_strdup_printf("last seen on the stream %.1f h ago", (gdouble)age / 3600);
}

/* how a Subscribe (or its probe) ended decides how the topic goes on */
static void
sfl_topic_handle_status(SflTopic *t, const SflGrpcStatus *status)
{
	SflPubsubSource *self = t->source;
	g_autofree gchar *what = sfl_grpc_status_describe(status);

	if (status->code == SFL_GRPC_OK) {
		g_message("pubsub %s: the server ended the stream; resubscribing", t->name);
		sfl_topic_failed(t, FALSE);
		return;
	}
	if (status->code == SFL_GRPC_UNAUTHENTICATED) {
		self->counters.auth_rejections++;
		if (t->token != NULL)
			sfl_sf_auth_invalidate(self->auth, t->token);
		g_warning("pubsub %s: authentication refused (%s); minting a new token", t->name,
			  what);
	} else if (status->code == SFL_GRPC_INVALID_ARGUMENT && t->resuming) {
		g_autofree gchar *lower =
			status->error_code != NULL ? g_ascii_strdown(status->error_code, -1) : NULL;
		gboolean corrupted = lower == NULL || strstr(lower, "replayid.corrupted") != NULL;

		if (corrupted) {
			g_autofree gchar *age = sfl_topic_position_age(t);

			/*
			 * EARLIEST whatever replay_preset says (docs/sources/pubsub.md): it
			 * re-delivers at most the retention window, LATEST would skip everything
			 * since the stored position for good. replay_preset only picks where a
			 * topic with no stored position starts.
			 */
			self->counters.replay_fallbacks++;
			sfl_series_inc(t->m_fallbacks);
			g_critical(
				"pubsub %s: Salesforce refused the replay id to resume from (%s); "
				"it is expired or corrupt (%s). Resubscribing from EARLIEST: up to "
				"the retention window (about 72 h) of events may be delivered "
				"again, and events after the refused id that already left the "
				"window are lost",
				t->name, what, age);
			g_clear_pointer(&t->position, g_bytes_unref);
			t->position_usec = 0;
			t->preset = SFL_REPLAY_EARLIEST;
		} else {
			g_critical("pubsub %s: the resume request was refused (%s); keeping the "
				   "replay position and retrying",
				   t->name, what);
		}
	} else if (status->code == SFL_GRPC_INVALID_ARGUMENT) {
		g_critical("pubsub %s: the subscription was refused (%s); likely a configuration "
			   "error",
			   t->name, what);
	} else {
		g_warning("pubsub %s: stream failed: %s", t->name, what);
	}
	sfl_topic_failed(t, TRUE);
}

static void
sfl_topic_done_cb(SflGrpcCall *call, const SflGrpcStatus *status, gpointer user_data)
{
	sfl_topic_handle_status(user_data, status);
}

static void sfl_topic_probe_passed(SflTopic *t);

static gboolean
sfl_topic_kick_cb(gpointer user_data)
{
	SflTopic *t = user_data;

	sfl_clear_source(&t->kick);
	/* an answer to the probe: the subscription is accepted */
	if (t->probe != NULL)
		sfl_topic_probe_passed(t);
	else
		sfl_topic_process(t);
	return G_SOURCE_REMOVE;
}

/* curl's callbacks may not start transfers: the topic goes on from an idle */
static void
sfl_topic_kick(SflTopic *t)
{
	if (t->kick != NULL)
		return;
	t->kick = g_idle_source_new();
	g_source_set_priority(t->kick, G_PRIORITY_DEFAULT);
	g_source_set_callback(t->kick, sfl_topic_kick_cb, t, NULL);
	g_source_attach(t->kick, NULL);
}

static void
sfl_topic_message_cb(SflGrpcCall *call, const guint8 *data, gsize len, gpointer user_data)
{
	SflTopic *t = user_data;
	Eventbus__V1__FetchResponse *r = eventbus__v1__fetch_response__unpack(NULL, len, data);

	if (r == NULL) {
		g_warning("pubsub %s: a FetchResponse of %" G_GSIZE_FORMAT " bytes did not parse; "
			  "reconnecting",
			  t->name, len);
		sfl_topic_failed(t, TRUE);
		return;
	}
	t->source->counters.responses++;
	t->source->counters.events += r->n_events;
	if (!t->healthy) {
		t->healthy = TRUE;
		t->backoff = t->source->backoff_base;
		sfl_series_set(t->m_up, 1);
	}
	g_queue_push_tail(&t->responses, r);
	sfl_topic_arm_watchdog(t);
	sfl_topic_kick(t);
}

static void
sfl_topic_send_fetch_to(SflTopic *t, SflGrpcCall *call, gboolean first, gint32 n)
{
	Eventbus__V1__FetchRequest req = EVENTBUS__V1__FETCH_REQUEST__INIT;
	gsize len = 0;
	g_autofree guint8 *buf = NULL;

	req.topic_name = t->name;
	req.num_requested = n;
	if (first && t->position != NULL) {
		req.replay_preset = EVENTBUS__V1__REPLAY_PRESET__CUSTOM;
		req.replay_id.data = (guint8 *)g_bytes_get_data(t->position, &req.replay_id.len);
	} else if (first) {
		req.replay_preset = t->preset == SFL_REPLAY_EARLIEST
					    ? EVENTBUS__V1__REPLAY_PRESET__EARLIEST
					    : EVENTBUS__V1__REPLAY_PRESET__LATEST;
	}
	len = eventbus__v1__fetch_request__get_packed_size(&req);
	buf = g_malloc(MAX(len, 1));
	eventbus__v1__fetch_request__pack(&req, buf);
	sfl_grpc_call_send(call, buf, len);
	if (!first)
		t->source->counters.topups++;
}

static void
sfl_topic_send_fetch(SflTopic *t, gboolean first)
{
	sfl_topic_send_fetch_to(t, t->call, first,
				(gint32)t->source->config->default_num_requested);
}

static SflGrpcCall *
sfl_topic_new_call(SflTopic *t, SflGrpcMessageFunc message, SflGrpcDoneFunc done)
{
	return sfl_pubsub_client_subscribe_new(t->source->client, t->token, message, done, t);
}

static void
sfl_topic_open_stream(SflTopic *t)
{
	SflPubsubSource *self = t->source;
	g_autoptr(GError) error = NULL;

	t->call = sfl_topic_new_call(t, sfl_topic_message_cb, sfl_topic_done_cb);
	sfl_topic_send_fetch(t, TRUE);
	if (!sfl_grpc_call_start(t->call, &error)) {
		g_warning("pubsub %s: cannot open the stream: %s", t->name, error->message);
		sfl_topic_failed(t, TRUE);
		return;
	}
	self->counters.subscribes++;
	if (t->attempts++ > 0) {
		self->counters.reconnects++;
		sfl_series_inc(t->m_reconnects);
	}
	sfl_topic_arm_watchdog(t);
	/* what was parked or waiting goes on as soon as the lane allows */
	sfl_topic_process(t);
}

/* the probe was not refused: the real stream starts */
static void
sfl_topic_probe_passed(SflTopic *t)
{
	sfl_clear_source(&t->probe_timer);
	g_clear_pointer(&t->probe, sfl_grpc_call_free);
	sfl_topic_open_stream(t);
}

static void
sfl_topic_probe_timer_cb(gpointer user_data)
{
	sfl_topic_probe_passed(user_data);
}

static void
sfl_topic_probe_message_cb(SflGrpcCall *call, const guint8 *data, gsize len, gpointer user_data)
{
	sfl_topic_kick(user_data);
}

static void
sfl_topic_probe_done_cb(SflGrpcCall *call, const SflGrpcStatus *status, gpointer user_data)
{
	SflTopic *t = user_data;

	if (status->code == SFL_GRPC_OK) {
		sfl_topic_probe_passed(t);
		return;
	}
	sfl_topic_handle_status(t, status);
}

/*
 * Salesforce refuses a bad first FetchRequest (token, replay id, topic) with a Trailers-Only
 * answer, which curl 7.88 never surfaces while the request body is still open (see
 * sfl-grpc.h). So the first request is sent once on a half-closed call asking for one event:
 * a refusal comes back with its status and error-code; an answer, or silence past
 * %SFL_PUBSUB_PROBE_USEC, means the subscription is accepted and the real stream opens.
 */
static void
sfl_topic_open(SflTopic *t, SflSfToken *token)
{
	SflPubsubSource *self = t->source;
	g_autoptr(GError) error = NULL;

	t->token = sfl_sf_token_ref(token);
	t->resuming = t->position != NULL;
	t->probe = sfl_topic_new_call(t, sfl_topic_probe_message_cb, sfl_topic_probe_done_cb);
	sfl_topic_send_fetch_to(t, t->probe, TRUE, 1);
	sfl_grpc_call_close_send(t->probe);
	if (!sfl_grpc_call_start(t->probe, &error)) {
		g_warning("pubsub %s: cannot open the stream: %s", t->name, error->message);
		sfl_topic_failed(t, TRUE);
		return;
	}
	self->counters.probes++;
	sfl_source_arm_timer(SFL_SOURCE(self), &t->probe_timer, SFL_PUBSUB_PROBE_USEC,
			     sfl_topic_probe_timer_cb, t);
}

static void
sfl_topic_token_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflTopic *t = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSfToken) token =
		sfl_sf_auth_get_token_finish(SFL_SF_AUTH(object), result, &error);

	if (!sfl_topic_ref_take(user_data, &t))
		return;
	t->busy = FALSE;
	if (token == NULL) {
		g_warning("pubsub %s: no access token: %s", t->name, error->message);
		sfl_topic_failed(t, TRUE);
		return;
	}
	sfl_topic_open(t, token);
}

static void
sfl_topic_load_value(SflTopic *t, const gchar *value)
{
	SflPubsubSource *self = t->source;

	t->loaded = TRUE;
	t->preset = self->config->replay_preset == SFL_REPLAY_CUSTOM ? SFL_REPLAY_LATEST
								     : self->config->replay_preset;
	if (value == NULL)
		return;
	t->position = sfl_pubsub_decode_position(value);
	t->position_usec = 0;
	if (t->position == NULL) {
		self->counters.checkpoint_load_errors++;
		sfl_series_inc(self->m_load_errors);
		g_critical("pubsub %s: the stored replay id in %s is not base64; starting from "
			   "%s instead",
			   t->name, t->key,
			   sfl_config_enum_name("sources.pubsub.replay_preset", t->preset));
	}
}

static void
sfl_topic_load_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflTopic *t = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *value =
		sfl_checkpoint_store_load_finish(SFL_CHECKPOINT_STORE(object), result, &error);

	if (!sfl_topic_ref_take(user_data, &t))
		return;
	t->busy = FALSE;
	if (value == NULL && error != NULL) {
		g_warning("pubsub %s: cannot read the checkpoint %s: %s; retrying", t->name, t->key,
			  error->message);
		sfl_topic_failed(t, TRUE);
		return;
	}
	sfl_topic_load_value(t, value);
	sfl_topic_connect(t);
}

static void
sfl_topic_connect(SflTopic *t)
{
	SflPubsubSource *self = t->source;
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(self));

	if (!self->alive || t->busy || t->call != NULL || t->probe != NULL)
		return;
	t->busy = TRUE;
	if (!t->loaded && ctx->store != NULL) {
		sfl_checkpoint_store_load_async(ctx->store, t->key, self->cancellable,
						sfl_topic_load_cb, sfl_topic_ref_new(t));
		return;
	}
	if (!t->loaded)
		sfl_topic_load_value(t, NULL);
	sfl_sf_auth_get_token_async(self->auth, self->cancellable, sfl_topic_token_cb,
				    sfl_topic_ref_new(t));
}

/* --- schemas -------------------------------------------------------------------------------- */

typedef struct {
	SflPubsubSource *self;
	gchar *schema_id;
} SflSchemaFetch;

static void
sfl_schema_fetch_free(SflSchemaFetch *f)
{
	g_object_unref(f->self);
	g_free(f->schema_id);
	g_free(f);
}

/* every topic that waited on @schema_id goes on (or reconnects when @error is set) */
static void
sfl_pubsub_schema_ready(SflPubsubSource *self, const gchar *schema_id, const GError *error)
{
	g_autoptr(GPtrArray) waiters = NULL;
	g_autofree gchar *key = NULL;

	/* stolen, key and array both: the callbacks below may ask for the same id again */
	if (!g_hash_table_steal_extended(self->schema_waiters, schema_id, (gpointer *)&key,
					 (gpointer *)&waiters))
		return;
	for (guint i = 0; i < waiters->len; i++) {
		SflTopic *t = NULL;
		if (!sfl_topic_ref_take(g_ptr_array_index(waiters, i), &t))
			continue;
		t->waiting_schema = FALSE;
		if (error != NULL && ++t->schema_failures == 3) {
			self->counters.decode_stalls++;
			sfl_series_inc(t->m_decode_stalls);
			g_critical("pubsub %s: schema %s could not be fetched 3 times in a row: %s",
				   t->name, schema_id, error->message);
		}
		if (error != NULL) {
			g_warning("pubsub %s: cannot get schema %s: %s; reconnecting", t->name,
				  schema_id, error->message);
			sfl_topic_failed(t, TRUE);
		} else {
			sfl_topic_arm_watchdog(t);
			sfl_topic_process(t);
		}
	}
	g_ptr_array_set_size(waiters, 0);
}

static void
sfl_pubsub_schema_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflSchemaFetch *f = user_data;
	SflPubsubSource *self = f->self;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *json = sfl_pubsub_client_get_schema_finish(SFL_PUBSUB_CLIENT(object),
								     result, NULL, &error);
	SflAvroSchema *schema = NULL;

	if (!self->alive) {
		sfl_schema_fetch_free(f);
		return;
	}
	if (json != NULL)
		schema =
			sfl_avro_schema_new_full(json,
						 self->config->cdc_field_names == SFL_CDC_NAMES_LINE
							 ? SFL_AVRO_SCHEMA_CDC_NAMES_IN_LINE
							 : SFL_AVRO_SCHEMA_DEFAULT,
						 &error);
	if (schema != NULL) {
		g_hash_table_insert(self->schemas, g_strdup(f->schema_id), schema);
		sfl_series_set(self->m_schema_cache, g_hash_table_size(self->schemas));
	} else {
		self->counters.schema_failures++;
	}
	sfl_pubsub_schema_ready(self, f->schema_id, error);
	sfl_schema_fetch_free(f);
}

static void
sfl_pubsub_schema_token_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflSchemaFetch *f = user_data;
	SflPubsubSource *self = f->self;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSfToken) token =
		sfl_sf_auth_get_token_finish(SFL_SF_AUTH(object), result, &error);

	if (!self->alive || token == NULL) {
		if (self->alive) {
			self->counters.schema_failures++;
			sfl_pubsub_schema_ready(self, f->schema_id, error);
		}
		sfl_schema_fetch_free(f);
		return;
	}
	self->counters.schema_fetches++;
	sfl_pubsub_client_get_schema_async(self->client, token, f->schema_id, self->cancellable,
					   sfl_pubsub_schema_cb, f);
}

/* parks @t until @schema_id is known; one GetSchema per id however many topics wait */
static void
sfl_topic_need_schema(SflTopic *t, const gchar *schema_id)
{
	SflPubsubSource *self = t->source;
	GPtrArray *waiters = g_hash_table_lookup(self->schema_waiters, schema_id);
	SflSchemaFetch *f = NULL;

	t->waiting_schema = TRUE;
	sfl_clear_source(&t->watchdog);
	if (waiters != NULL) {
		g_ptr_array_add(waiters, sfl_topic_ref_new(t));
		return;
	}
	waiters = g_ptr_array_new();
	g_ptr_array_add(waiters, sfl_topic_ref_new(t));
	g_hash_table_insert(self->schema_waiters, g_strdup(schema_id), waiters);
	f = g_new0(SflSchemaFetch, 1);
	f->self = g_object_ref(self);
	f->schema_id = g_strdup(schema_id);
	sfl_sf_auth_get_token_async(self->auth, self->cancellable, sfl_pubsub_schema_token_cb, f);
}

/* --- events into entries -------------------------------------------------------------------- */

/* the payload as the record's fields (never rendered and parsed back); the one place the Avro
 * decoder is called. *@holder keeps nested values alive until the record is reset. */
static gboolean
sfl_pubsub_decode(SflAvroSchema *schema, const ProtobufCBinaryData *payload, SflRecord *record,
		  json_t **holder, GError **error)
{
	sfl_record_reset(record);
	return sfl_avro_decode_record(schema, payload->data, payload->len, record, holder, error);
}

static gboolean
sfl_pubsub_event_ts(SflRecord *record, gint64 *usec)
{
	const gchar *names[] = { "EventDate", "CreatedDate" };
	const SflField *header = NULL;

	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		const SflField *f = sfl_record_lookup(record, names[i]);
		if (f != NULL && sfl_parse_timestamp_field(f, usec))
			return TRUE;
	}
	header = sfl_record_lookup(record, "ChangeEventHeader");
	if (header != NULL && header->type == SFL_VALUE_JSON && json_is_object(header->json)) {
		json_t *ct = json_object_get(header->json, "commitTimestamp");
		SflField f = { .name = "commitTimestamp" };
		if (json_is_integer(ct)) {
			f.type = SFL_VALUE_INT;
			f.i = json_integer_value(ct);
		} else if (json_is_string(ct)) {
			f.type = SFL_VALUE_STRING;
			f.str = json_string_value(ct);
			f.len = json_string_length(ct);
		} else {
			return FALSE;
		}
		return sfl_parse_timestamp_field(&f, usec);
	}
	return FALSE;
}

/*
 * cdc_field_names: metadata — the names the header's bitmaps select as structured metadata
 * changed_fields / nulled_fields / diff_fields, so the line stays the original's. Taken from
 * the record after transforms: a header dropped or rewritten names nothing. A listed
 * metadata field of the same name keeps its value; an empty list is omitted, as None is.
 */
static void
sfl_pubsub_cdc_metadata(SflRecord *record, SflAvroSchema *schema, GArray *pairs)
{
	static const gchar *const fields[][2] = {
		{ "changedFields", "changed_fields" },
		{ "nulledFields", "nulled_fields" },
		{ "diffFields", "diff_fields" },
	};
	const SflField *header = sfl_record_lookup(record, "ChangeEventHeader");
	g_autoptr(GString) names = NULL;
	guint start = 0;

	if (header == NULL || header->type != SFL_VALUE_JSON || !json_is_object(header->json))
		return;
	names = g_string_new(NULL);
	start = pairs->len;
	for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
		SflLabelPair pair = { fields[i][1], NULL };
		gboolean seen = FALSE;

		for (guint k = 0; k < start && !seen; k++)
			seen = strcmp(g_array_index(pairs, SflLabelPair, k).name, pair.name) == 0;
		g_string_truncate(names, 0);
		if (seen || !sfl_avro_schema_append_cdc_names(
				    schema, json_object_get(header->json, fields[i][0]), names))
			continue;
		pair.value = sfl_record_intern(record, names->str, (gssize)names->len);
		g_array_append_val(pairs, pair);
	}
}

static void
sfl_topic_count_decode_error(SflTopic *t, const GError *error)
{
	t->resp_failed++;
	t->source->counters.decode_errors++;
	sfl_series_inc(t->m_decode_errors);
	g_warning("pubsub %s: skipping an event whose payload does not decode: %s", t->name,
		  error->message);
}

/* what the shaping hooks of one event need */
typedef struct {
	SflTopic *topic;
	SflAvroSchema *schema;
} SflTopicEvent;

/* the event's own time; the topic remembers the last one as the next fallback */
static gboolean
sfl_topic_event_ts(SflRecord *record, gint64 *usec, gpointer user_data)
{
	SflTopic *t = ((SflTopicEvent *)user_data)->topic;

	if (!sfl_pubsub_event_ts(record, usec))
		return FALSE;
	t->have_ts = TRUE;
	t->last_ts = *usec;
	return TRUE;
}

static void
sfl_topic_event_metadata(SflRecord *record, GArray *pairs, gpointer user_data)
{
	SflTopicEvent *event = user_data;

	if (event->topic->source->config->cdc_field_names == SFL_CDC_NAMES_METADATA)
		sfl_pubsub_cdc_metadata(record, event->schema, pairs);
}

/* the entry for one event, NULL when it becomes none (decode failure) */
static SflEntry *
sfl_topic_event_entry(SflTopic *t, Eventbus__V1__ConsumerEvent *ev, SflAvroSchema *schema)
{
	SflPubsubSource *self = t->source;
	const SflSourceContext *ctx = sfl_source_get_context(SFL_SOURCE(self));
	gint64 now = sfl_clock_wall_usec(ctx->clock);
	g_autoptr(GError) error = NULL;
	g_autoptr(GRefString) checkpoint =
		sfl_pubsub_encode_position(ev->replay_id.data, ev->replay_id.len);
	g_autoptr(GString) hex = NULL;
	json_t *holder = NULL;
	SflEntry *entry = NULL;
	SflTopicEvent event = { t, schema };
	SflShapeSpec spec = {
		.transforms = self->transforms,
		.sample = t->sample,
		.event_type = t->event_type,
		.timestamp_func = sfl_topic_event_ts,
		/* an event without a time of its own is dated by the topic's last one */
		.has_fallback = t->have_ts,
		.fallback_usec = t->last_ts,
		.now_usec = now,
		.metadata_fields = ctx->metadata_fields,
		.metadata_func = sfl_topic_event_metadata,
		.user_data = &event,
	};

	sfl_source_counters(SFL_SOURCE(self))->rows_read++;
	if (!sfl_pubsub_decode(schema, &ev->event->payload, self->record, &holder, &error)) {
		sfl_record_reset(self->record);
		if (holder != NULL)
			json_decref(holder);
		sfl_topic_count_decode_error(t, error);
		return NULL;
	}
	t->resp_decoded++;
	t->schema_failures = 0;
	if (t->sample < 1.0) {
		/* the replay id is the event's identity: the same event samples the same way */
		hex = g_string_new(NULL);
		for (gsize i = 0; i < ev->replay_id.len; i++)
			g_string_append_printf(hex, "%02x", ev->replay_id.data[i]);
		spec.sample_key = hex->str;
		spec.sample_key_len = hex->len;
	}
	entry = sfl_source_emit_record(SFL_SOURCE(self), &spec, self->record, t->labels, t->key,
				       checkpoint);
	/* a dropped event still moves the replay position */
	if (entry == NULL)
		entry = sfl_entry_new_checkpoint_only(now * 1000, t->key, checkpoint);
	sfl_record_reset(self->record);
	if (holder != NULL)
		json_decref(holder);
	return entry;
}

/* three non-empty responses in a row without one decodable event: say so once per streak */
static void
sfl_topic_check_stuck(SflTopic *t, Eventbus__V1__FetchResponse *r)
{
	guint decoded = t->resp_decoded;
	guint failed = t->resp_failed;

	t->resp_decoded = 0;
	t->resp_failed = 0;
	if (r->n_events == 0)
		return;
	if (decoded > 0 || failed == 0) {
		t->bad_batches = 0;
		return;
	}
	if (++t->bad_batches != 3)
		return;
	t->source->counters.decode_stalls++;
	sfl_series_inc(t->m_decode_stalls);
	g_critical("pubsub %s: three responses in a row with no event that decodes; the topic "
		   "is moving on but producing nothing (schema or payload problem)",
		   t->name);
}

static void
sfl_topic_writable_cb(gpointer user_data)
{
	SflTopic *t = user_data;

	if (!t->source->alive)
		return;
	t->parked = FALSE;
	sfl_topic_arm_watchdog(t);
	sfl_topic_process(t);
}

/* offers what is pending; FALSE (and parked) when the lane refused it */
static gboolean
sfl_topic_flush_pending(SflTopic *t)
{
	SflSource *source = SFL_SOURCE(t->source);

	if (t->pending == NULL)
		return TRUE;
	if (!sfl_source_offer(source, t->pending)) {
		t->parked = TRUE;
		sfl_clear_source(&t->watchdog);
		sfl_source_wait_writable(source, sfl_topic_writable_cb, t);
		return FALSE;
	}
	t->pending = NULL;
	return TRUE;
}

static void
sfl_topic_process(SflTopic *t)
{
	SflPubsubSource *self = t->source;
	gint64 n = self->config->default_num_requested;

	while (self->alive && !t->parked && !t->waiting_schema) {
		Eventbus__V1__FetchResponse *r = NULL;

		if (!sfl_topic_flush_pending(t))
			return;
		r = g_queue_peek_head(&t->responses);
		if (r == NULL)
			return;
		if (t->event_idx < r->n_events) {
			Eventbus__V1__ConsumerEvent *ev = r->events[t->event_idx];
			SflAvroSchema *schema = NULL;

			if (ev->event == NULL) {
				/* nothing to decode: only the position moves */
				sfl_topic_set_position(t, &ev->replay_id);
				t->event_idx++;
				continue;
			}
			schema = g_hash_table_lookup(self->schemas, ev->event->schema_id);
			if (schema == NULL) {
				sfl_topic_need_schema(t, ev->event->schema_id);
				return;
			}
			t->pending = sfl_topic_event_entry(t, ev, schema);
			sfl_topic_set_position(t, &ev->replay_id);
			t->event_idx++;
			continue;
		}
		if (!t->tail_done) {
			t->tail_done = TRUE;
			if (r->n_events == 0 && r->latest_replay_id.len > 0 &&
			    !sfl_pubsub_same_position(t->position, &r->latest_replay_id)) {
				const SflSourceContext *ctx =
					sfl_source_get_context(SFL_SOURCE(self));
				g_autoptr(GRefString) value = sfl_pubsub_encode_position(
					r->latest_replay_id.data, r->latest_replay_id.len);

				sfl_topic_set_position(t, &r->latest_replay_id);
				t->pending = sfl_entry_new_checkpoint_only(
					sfl_clock_wall_usec(ctx->clock) * 1000, t->key, value);
				self->counters.keepalive_tokens++;
				continue;
			}
		}
		sfl_topic_check_stuck(t, r);
		/* every entry of the response is in the lane: ask for more if it is due */
		sfl_series_set(t->m_pending_credits, r->pending_num_requested);
		if (t->call != NULL && sfl_grpc_call_can_send(t->call) &&
		    r->pending_num_requested <= n / 2)
			sfl_topic_send_fetch(t, FALSE);
		eventbus__v1__fetch_response__free_unpacked(g_queue_pop_head(&t->responses), NULL);
		t->event_idx = 0;
		t->tail_done = FALSE;
	}
}

/* --- topics and discovery ------------------------------------------------------------------- */

static gboolean
sfl_pubsub_has_topic(SflPubsubSource *self, const gchar *name)
{
	for (guint i = 0; i < self->topics->len; i++) {
		SflTopic *t = g_ptr_array_index(self->topics, i);
		if (g_str_equal(t->name, name))
			return TRUE;
	}
	return FALSE;
}

static void
sfl_pubsub_add_topic(SflPubsubSource *self, const gchar *name)
{
	SflSource *source = SFL_SOURCE(self);
	SflTopic *t = g_new0(SflTopic, 1);
	g_autofree gchar *key = g_strconcat(SFL_PUBSUB_KEY_PREFIX, name, NULL);
	g_autofree gchar *trimmed = g_strdup(name);
	const gchar *slash = NULL;
	const gchar *names[] = { "topic", NULL };
	const gchar *values[] = { name, NULL };
	const gchar *reason_names[] = { "reason", "topic", NULL };
	const gchar *reason_values[] = { "CorruptPayload", name, NULL };

	while (g_str_has_suffix(trimmed, "/"))
		trimmed[strlen(trimmed) - 1] = '\0';
	slash = strrchr(trimmed, '/');
	t->source = self;
	t->name = g_strdup(name);
	t->key = sfl_source_key(source, key);
	t->event_type = g_strdup(slash != NULL ? slash + 1 : trimmed);
	{
		const SflLabelPair pairs[] = { { "source", "pubsub" },
					       { "event_type", t->event_type } };
		t->labels = sfl_source_intern_labels(source, pairs, G_N_ELEMENTS(pairs));
	}
	t->sample = sfl_pubsub_sample_rate(self, name);
	t->backoff = self->backoff_base;
	g_queue_init(&t->responses);
	t->m_pending_credits = sfl_source_series(
		source, SFL_METRIC_GAUGE, "sf2loki_pubsub_pending_credits",
		"pending_num_requested of the last FetchResponse.", names, values);
	t->m_reconnects = sfl_source_series(source, SFL_METRIC_COUNTER, "sf2loki_pubsub_reconnects",
					    "Subscribe calls opened after a topic's first one.",
					    names, values);
	t->m_fallbacks = sfl_source_series(
		source, SFL_METRIC_COUNTER, "sf2loki_pubsub_replay_fallbacks",
		"Stored replay ids Salesforce refused; the topic restarted from EARLIEST.", names,
		values);
	t->m_stalls = sfl_source_series(source, SFL_METRIC_COUNTER, "sf2loki_pubsub_stream_stalls",
					"Streams silent past the watchdog; each reconnected.",
					names, values);
	t->m_up = sfl_source_series(source, SFL_METRIC_GAUGE, "sf2loki_pubsub_stream_up",
				    "1 while the topic's stream has answered, else 0.", names,
				    values);
	t->m_decode_errors = sfl_source_series(source, SFL_METRIC_COUNTER, "sf2loki_decode_errors",
					       "Pub/Sub events skipped because the payload did not "
					       "decode.",
					       reason_names, reason_values);
	t->m_decode_stalls = sfl_source_series(
		source, SFL_METRIC_COUNTER, "sf2loki_pubsub_decode_stalls",
		"Streaks of responses where no event decoded, or of failed schema fetches.", names,
		values);
	sfl_series_set(t->m_up, 0);
	g_ptr_array_add(self->topics, t);
	g_message("pubsub: subscribing to %s", name);
	sfl_topic_connect(t);
}

static void
sfl_pubsub_discovered(SflPubsubSource *self, json_t *doc)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	g_autoptr(GPtrArray) topics = NULL;
	json_t *list = json_object_get(doc, "sobjects");
	gsize i = 0;
	json_t *item = NULL;

	json_array_foreach (list, i, item) {
		const gchar *n = json_string_value(json_object_get(item, "name"));
		if (n != NULL)
			g_ptr_array_add(names, (gpointer)n);
	}
	g_ptr_array_add(names, NULL);
	topics = sfl_pubsub_discover_topics((const gchar *const *)names->pdata);
	self->counters.discoveries++;
	for (guint k = 0; k < topics->len; k++) {
		const gchar *topic = g_ptr_array_index(topics, k);
		if (sfl_pubsub_has_topic(self, topic) || !sfl_pubsub_topic_wanted(self, topic))
			continue;
		if (sfl_overlap_topic_owned_elsewhere(self->sources, topic)) {
			g_message("pubsub: not subscribing to discovered %s: another source of "
				  "this org owns its category",
				  topic);
			continue;
		}
		sfl_pubsub_add_topic(self, topic);
	}
}

static void
sfl_pubsub_discovery_timer_cb(gpointer user_data)
{
	sfl_pubsub_discover(user_data);
}

static void
sfl_pubsub_discovery_schedule(SflPubsubSource *self, gint64 delay)
{
	sfl_clear_source(&self->discovery_timer);
	if (!self->alive || delay <= 0)
		return;
	sfl_source_arm_timer(SFL_SOURCE(self), &self->discovery_timer, delay,
			     sfl_pubsub_discovery_timer_cb, self);
}

/* no topic, and no discovery to come: the run has nothing to read here (docs/sources/pubsub.md) */
static void
sfl_pubsub_finish_if_idle(SflPubsubSource *self, gboolean discovery_pending)
{
	if (self->topics->len > 0 || discovery_pending)
		return;
	g_message("pubsub: no topic to stream and no rediscovery (rediscovery_interval 0): "
		  "nothing to read");
	sfl_source_finish(SFL_SOURCE(self));
}

static void
sfl_pubsub_describe_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflPubsubSource *self = user_data;
	g_autoptr(GError) error = NULL;
	json_t *doc = sfl_sf_rest_get_finish(SFL_SF_REST(object), result, &error);

	if (!self->alive) {
		if (doc != NULL)
			json_decref(doc);
		g_object_unref(self);
		return;
	}
	g_object_unref(self);
	if (doc == NULL) {
		self->discovery_attempt++;
		if (self->discovery_attempt < SFL_PUBSUB_DISCOVERY_TRIES) {
			gint64 delay = self->backoff_base << (self->discovery_attempt - 1);
			g_warning("pubsub: topic discovery failed (attempt %u of %d): %s",
				  self->discovery_attempt, SFL_PUBSUB_DISCOVERY_TRIES,
				  error->message);
			delay += (gint64)g_rand_double_range(self->rand, 0, (gdouble)delay / 2);
			sfl_pubsub_discovery_schedule(self, delay);
			return;
		}
		g_critical("pubsub: topic discovery failed %d times: %s; streaming only the "
			   "explicit topics",
			   SFL_PUBSUB_DISCOVERY_TRIES, error->message);
	} else {
		sfl_pubsub_discovered(self, doc);
		json_decref(doc);
	}
	self->discovery_attempt = 0;
	sfl_pubsub_finish_if_idle(self, self->config->rediscovery_interval > 0);
	sfl_pubsub_discovery_schedule(self, self->config->rediscovery_interval);
}

static void
sfl_pubsub_discover(SflPubsubSource *self)
{
	if (!self->alive || self->rest == NULL)
		return;
	/* describeGlobal; the client adds /services/data/vNN.N */
	sfl_sf_rest_get_async(self->rest, "/sobjects/", self->cancellable, sfl_pubsub_describe_cb,
			      g_object_ref(self));
}

static gboolean
sfl_pubsub_wants_discovery(SflPubsubSource *self)
{
	for (guint i = 0; self->config->topics != NULL && self->config->topics[i] != NULL; i++) {
		if (g_str_equal(self->config->topics[i], "*"))
			return TRUE;
	}
	return FALSE;
}

static void
sfl_pubsub_start_topics(SflPubsubSource *self)
{
	/* every call carries tenantid: the client exists from here on */
	if (self->client == NULL)
		self->client = sfl_pubsub_client_new(sfl_sf_auth_get_loop(self->auth),
						     self->config->endpoint, self->org_id);
	for (guint i = 0; self->config->topics != NULL && self->config->topics[i] != NULL; i++) {
		const gchar *name = self->config->topics[i];
		if (g_str_equal(name, "*") || sfl_pubsub_has_topic(self, name) ||
		    !sfl_pubsub_topic_wanted(self, name))
			continue;
		sfl_pubsub_add_topic(self, name);
	}
	if (sfl_pubsub_wants_discovery(self) && self->rest != NULL)
		sfl_pubsub_discover(self);
	else
		sfl_pubsub_finish_if_idle(self, FALSE);
}

static void sfl_pubsub_org_id_cb(GObject *object, GAsyncResult *result, gpointer user_data);

static void
sfl_pubsub_org_id_retry_cb(gpointer user_data)
{
	SflPubsubSource *self = user_data;

	sfl_sf_auth_get_org_id_async(self->auth, self->cancellable, sfl_pubsub_org_id_cb,
				     g_object_ref(self));
}

static void
sfl_pubsub_org_id_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflPubsubSource *self = user_data;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *org_id =
		sfl_sf_auth_get_org_id_finish(SFL_SF_AUTH(object), result, &error);

	if (!self->alive) {
		g_object_unref(self);
		return;
	}
	g_object_unref(self);
	if (org_id == NULL) {
		g_critical("pubsub: cannot find the org id (tenantid): %s; retrying",
			   error->message);
		/* nothing else runs before the org id is known: the discovery slot is free */
		sfl_source_arm_timer(SFL_SOURCE(self), &self->discovery_timer, self->backoff_max,
				     sfl_pubsub_org_id_retry_cb, self);
		return;
	}
	self->org_id = g_steal_pointer(&org_id);
	sfl_pubsub_start_topics(self);
}

/* --- the seam ------------------------------------------------------------------------------- */

static void
sfl_pubsub_source_start(SflSource *source)
{
	SflPubsubSource *self = SFL_PUBSUB_SOURCE(source);
	const gchar *names[] = { "source", NULL };
	const gchar *values[] = { "pubsub", NULL };
	const gchar *none[] = { NULL };

	self->alive = TRUE;
	self->m_load_errors = sfl_source_series(
		source, SFL_METRIC_COUNTER, "sf2loki_checkpoint_load_errors",
		"Stored Pub/Sub replay ids that could not be decoded.", names, values);
	self->m_schema_cache =
		sfl_source_series(source, SFL_METRIC_GAUGE, "sf2loki_schema_cache_size",
				  "Avro schemas cached.", none, none);
	if (self->org_id != NULL) {
		sfl_pubsub_start_topics(self);
		return;
	}
	sfl_sf_auth_get_org_id_async(self->auth, self->cancellable, sfl_pubsub_org_id_cb,
				     g_object_ref(self));
}

static void
sfl_pubsub_source_stop(SflSource *source)
{
	SflPubsubSource *self = SFL_PUBSUB_SOURCE(source);

	self->alive = FALSE;
	g_cancellable_cancel(self->cancellable);
	sfl_clear_source(&self->discovery_timer);
	/* the waiters hold references on the source */
	g_hash_table_remove_all(self->schema_waiters);
	for (guint i = 0; i < self->topics->len; i++) {
		SflTopic *t = g_ptr_array_index(self->topics, i);
		sfl_clear_source(&t->timer);
		sfl_topic_teardown(t);
		g_clear_pointer(&t->pending, sfl_entry_unref);
		sfl_source_cancel_wait(source, t);
	}
}

static void
sfl_pubsub_source_finalize(GObject *object)
{
	SflPubsubSource *self = SFL_PUBSUB_SOURCE(object);

	sfl_clear_source(&self->discovery_timer);
	g_clear_pointer(&self->topics, g_ptr_array_unref);
	g_clear_pointer(&self->schemas, g_hash_table_unref);
	g_clear_pointer(&self->schema_waiters, g_hash_table_unref);
	g_clear_object(&self->auth);
	g_clear_object(&self->rest);
	g_clear_object(&self->cancellable);
	g_clear_pointer(&self->rand, g_rand_free);
	g_clear_pointer(&self->transforms, sfl_transforms_free);
	g_clear_pointer(&self->record, sfl_record_free);
	g_clear_object(&self->client);
	g_free(self->org_id);
	G_OBJECT_CLASS(sfl_pubsub_source_parent_class)->finalize(object);
}

static void
sfl_pubsub_source_class_init(SflPubsubSourceClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflSourceClass *source_class = SFL_SOURCE_CLASS(klass);

	object_class->finalize = sfl_pubsub_source_finalize;
	source_class->start = sfl_pubsub_source_start;
	source_class->stop = sfl_pubsub_source_stop;
}

static void
sfl_waiters_free(gpointer data)
{
	GPtrArray *waiters = data;

	for (guint i = 0; i < waiters->len; i++) {
		SflTopicRef *ref = g_ptr_array_index(waiters, i);
		g_object_unref(ref->self);
		g_free(ref);
	}
	g_ptr_array_unref(waiters);
}

static void
sfl_pubsub_source_init(SflPubsubSource *self)
{
	self->topics = g_ptr_array_new_with_free_func(sfl_topic_free);
	self->schemas = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					      (GDestroyNotify)sfl_avro_schema_unref);
	self->schema_waiters =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, sfl_waiters_free);
	self->cancellable = g_cancellable_new();
	self->rand = g_rand_new();
	self->backoff_base = SFL_PUBSUB_BACKOFF_BASE;
	self->backoff_max = SFL_PUBSUB_BACKOFF_MAX;
	self->watchdog_usec = SFL_PUBSUB_WATCHDOG;
	self->record = sfl_record_new();
}

/**
 * sfl_pubsub_source_new:
 * @auth: the org's token provider
 * @rest: (nullable): the org's REST client, for "*" discovery
 * @config: sources.pubsub
 * @sources: the org's sources (overlap filtering of discovered topics)
 * @org_id: (nullable): the org id, or %NULL to ask @auth
 * @salt: (nullable): the transform salt
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the source, or %NULL with @error set
 */
SflPubsubSource *
sfl_pubsub_source_new(SflSfAuth *auth, SflSfRest *rest, const SflPubsubConfig *config,
		      const SflSourcesConfig *sources, const gchar *org_id, const gchar *salt,
		      GError **error)
{
	g_autoptr(SflPubsubSource) self = NULL;

	g_return_val_if_fail(SFL_IS_SF_AUTH(auth), NULL);
	g_return_val_if_fail(config != NULL && sources != NULL, NULL);

	if (config->default_num_requested < 1 || config->default_num_requested > 100) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "sources.pubsub.default_num_requested: %" G_GINT64_FORMAT
			    " is outside 1..100",
			    config->default_num_requested);
		return NULL;
	}
	self = g_object_new(SFL_TYPE_PUBSUB_SOURCE, "name", "pubsub", NULL);
	self->auth = g_object_ref(auth);
	self->rest = rest != NULL ? g_object_ref(rest) : NULL;
	self->config = config;
	self->sources = sources;
	self->org_id = g_strdup(org_id);
	if (config->transforms != NULL && config->transforms->len > 0) {
		self->transforms = sfl_transforms_new(config->transforms, salt, error);
		if (self->transforms == NULL) {
			g_prefix_error(error, "sources.pubsub.transforms: ");
			return NULL;
		}
	}
	return g_steal_pointer(&self);
}

const SflPubsubCounters *
sfl_pubsub_source_get_counters(SflPubsubSource *self)
{
	g_return_val_if_fail(SFL_IS_PUBSUB_SOURCE(self), NULL);
	return &self->counters;
}

GStrv
sfl_pubsub_source_dup_topics(SflPubsubSource *self)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();

	g_return_val_if_fail(SFL_IS_PUBSUB_SOURCE(self), NULL);
	for (guint i = 0; i < self->topics->len; i++)
		g_strv_builder_add(b, ((SflTopic *)g_ptr_array_index(self->topics, i))->name);
	return g_strv_builder_end(b);
}

void
sfl_pubsub_source_set_timing(SflPubsubSource *self, gint64 backoff_base_usec,
			     gint64 backoff_max_usec, gint64 watchdog_usec)
{
	g_return_if_fail(SFL_IS_PUBSUB_SOURCE(self));
	self->backoff_base = backoff_base_usec;
	self->backoff_max = backoff_max_usec;
	self->watchdog_usec = watchdog_usec;
}

/**
 * sfl_pubsub_source_describe_checkpoint:
 * @key: a committed key, without the multi-org prefix
 * @value: its value
 * @view: (out caller-allocates): filled when the key is this source's
 *
 * Returns: %TRUE when @key is a topic's replay position (shown as it is: an opaque id)
 */
gboolean
sfl_pubsub_source_describe_checkpoint(const gchar *key, const gchar *value, SflCheckpointView *view)
{
	if (!g_str_has_prefix(key, SFL_PUBSUB_KEY_PREFIX))
		return FALSE;
	view->topic = key + strlen(SFL_PUBSUB_KEY_PREFIX);
	return TRUE;
}
