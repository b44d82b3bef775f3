/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestPubsub"

#include "config.h"

#include <string.h>

#include "pubsub_api.pb-c.h"
#include "sfl-autocleanups.h"
#include "sfl-checkpoint-store.h"
#include "sfl-config.h"
#include "sfl-error.h"
#include "sfl-grpc.h"
#include "sfl-memory-store.h"
#include "sfl-metrics.h"
#include "sfl-pipeline.h"
#include "sfl-pubsub-source.h"
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"
#include "sfl-sink.h"
#include "sfl-test-sim.h"

/*
 * The gRPC client and the Pub/Sub source against tests/sim/pubsub_sim.py, a python3-grpcio
 * server whose events are encoded by python3-avro. Tokens come from tests/sim/salesforce_sim.py.
 * The source runs through the real pipeline into a capturing sink with an in-memory store.
 * Every wait is on a condition with a deadline.
 */

#define TEST_DEADLINE_USEC (120 * G_USEC_PER_SEC)
#define TEST_TOPIC	   "/event/LoginEventStream"
#define TEST_ORG	   "00Dxx0000001gPFEAY"
#define REPLAY_BASE	   0x10DB00

/* --- the fixture ---------------------------------------------------------------------------- */

typedef struct {
	gchar *dir;
	gchar *key_path;
	gchar *pub_path;
	gchar *sf_base;
	SflTestSim *sf_proc;
	gchar *ps_ctl;
	SflTestSim *ps_proc;
	gchar *grpc_url;
	SflCurlLoop *loop;
	SflClock *system;
	SflConfig *config;
	SflSfAuth *auth;
	SflMemoryBacking *backing;
	SflCheckpointStore *store;
	SflTestCapture *sink;
	SflPipeline *pipeline;
	SflSource *source;
	SflLabelsInterner *interner;
	SflMetrics *metrics;
} Fx;

/* warnings and criticals of the source, for the tests that check what it says */
static GPtrArray *test_logged;

static gboolean
fx_logged(const gchar *needle)
{
	for (guint i = 0; i < test_logged->len; i++) {
		if (strstr(g_ptr_array_index(test_logged, i), needle) != NULL)
			return TRUE;
	}
	return FALSE;
}

/* conditions on the simulator's state are not signalled: they are re-checked now and then */
static void
fx_wait(Fx *fx, gboolean (*cond)(Fx *fx, gpointer data), gpointer data, const gchar *what)
{
	sfl_test_fixture_wait((SflTestFixtureCond)cond, fx, data, TEST_DEADLINE_USEC, what);
}

static json_t *
fx_ctl(Fx *fx, const gchar *method, const gchar *path, const gchar *body)
{
	return sfl_test_sim_control(fx->loop, fx->ps_ctl, method, path, body);
}

static void fx_ctl_post(Fx *fx, const gchar *path, const gchar *fmt, ...) G_GNUC_PRINTF(3, 4);

static void
fx_ctl_post(Fx *fx, const gchar *path, const gchar *fmt, ...)
{
	va_list ap;
	g_autofree gchar *body = NULL;
	json_t *answer = NULL;

	va_start(ap, fmt);
	body = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	answer = fx_ctl(fx, "POST", path, body);
	json_decref(answer);
}

static void
fx_publish(Fx *fx, const gchar *topic, guint count, const gchar *extra)
{
	fx_ctl_post(fx, "/control/publish", "{\"topic\": \"%s\", \"count\": %u%s%s}", topic, count,
		    extra != NULL ? ", " : "", extra != NULL ? extra : "");
}

/* a number from GET /control/stats: topics[@topic][@field] */
static gint64
fx_stat(Fx *fx, const gchar *topic, const gchar *field)
{
	json_t *doc = fx_ctl(fx, "GET", "/control/stats", NULL);
	json_t *t = json_object_get(json_object_get(doc, "topics"), topic);
	gint64 v = t != NULL ? json_integer_value(json_object_get(t, field)) : -1;

	json_decref(doc);
	return v;
}

static void fx_teardown(Fx *fx);

/*
 * Both simulators, tokens from the Salesforce one; the config is a salesforce section plus
 * a sources.pubsub section with @pubsub_yaml (indented 4) and the simulator's endpoint.
 * FALSE (torn down, the test skipped) when a simulator cannot run here.
 */
static gboolean
fx_setup(Fx *fx, const gchar *keepalive_ms, const gchar *pubsub_yaml, gint64 queue_maxsize)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *head = NULL;
	SflTestSims sims = { 0 };
	json_t *info = NULL;

	fx->dir = g_dir_make_tmp("sfl-pubsub-XXXXXX", &error);
	g_assert_no_error(error);
	fx->key_path = g_build_filename(fx->dir, "key.pem", NULL);
	fx->pub_path = g_build_filename(fx->dir, "pub.pem", NULL);
	sfl_test_write_rsa_key(fx->key_path, fx->pub_path);
	{
		const gchar *args[] = { "--public-key", fx->pub_path, NULL };
		fx->sf_base = sfl_test_sf_sim_start(args, &fx->sf_proc);
	}
	if (fx->sf_base == NULL) {
		fx_teardown(fx);
		return FALSE;
	}
	{
		const gchar *args[] = { "--keepalive-ms", keepalive_ms, NULL };
		fx->ps_ctl = sfl_test_pubsub_sim_start(args, &fx->ps_proc);
	}
	if (fx->ps_ctl == NULL) {
		fx_teardown(fx);
		return FALSE;
	}
	fx->loop = sfl_curl_loop_new();
	info = fx_ctl(fx, "GET", "/control/info", NULL);
	fx->grpc_url =
		g_strdup_printf("http://127.0.0.1:%" G_GINT64_FORMAT,
				(gint64)json_integer_value(json_object_get(info, "grpc_port")));
	json_decref(info);
	sims.sf_base = fx->sf_base;
	sims.key_path = fx->key_path;
	head = sfl_test_sims_config(&sims, NULL, "http://127.0.0.1:9");
	yaml = g_strdup_printf("%s"
			       "    batch:\n"
			       "      max_entries: 500\n"
			       "      flush_interval: 20ms\n"
			       "      queue_maxsize: %" G_GINT64_FORMAT "\n"
			       "sources:\n"
			       "  pubsub:\n"
			       "    endpoint: %s\n"
			       "%s",
			       head, queue_maxsize, fx->grpc_url, pubsub_yaml);
	fx->config = sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", NULL, &error);
	g_assert_no_error(error);
	fx->system = sfl_clock_get_system();
	fx->auth = sfl_sf_auth_new(fx->loop, fx->config->data.salesforce, fx->system, &error);
	g_assert_no_error(error);
	fx->backing = sfl_memory_backing_new();
	fx->store = sfl_memory_store_new(fx->backing);
	fx->sink = g_object_new(SFL_TEST_TYPE_CAPTURE, NULL);
	fx->interner = sfl_labels_interner_new();
	fx->metrics = sfl_metrics_new();
	g_ptr_array_set_size(test_logged, 0);
	return TRUE;
}

static void
fx_start(Fx *fx, gint64 watchdog_usec)
{
	const gchar *labels[] = { "job", "sf2loki", NULL };
	g_autoptr(SflLaneHandle) lane = NULL;
	SflSourceContext ctx = { 0 };
	g_autoptr(GError) error = NULL;
	SflPubsubSource *source =
		sfl_pubsub_source_new(fx->auth, NULL, &fx->config->data.sources.pubsub,
				      &fx->config->data.sources, TEST_ORG, NULL, &error);

	g_assert_no_error(error);
	/* reconnects within the test's patience; the watchdog as the test needs it */
	sfl_pubsub_source_set_timing(source, 20 * 1000, 200 * 1000, watchdog_usec);
	fx->pipeline = sfl_pipeline_new(&fx->config->data.sink.loki.batch, SFL_SINK(fx->sink),
					fx->store, fx->system);
	/* the lane wakes a parked source itself: no writable callback to forward */
	lane = sfl_pipeline_get_lane(fx->pipeline, SFL_LANE_STREAMING);
	fx->source = SFL_SOURCE(source);
	ctx.lane = lane;
	ctx.store = fx->store;
	ctx.interner = fx->interner;
	ctx.clock = fx->system;
	ctx.static_labels = labels;
	ctx.key_prefix = "";
	ctx.metrics = fx->metrics;
	sfl_source_start(fx->source, &ctx);
}

static void
fx_stopped_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
}

static gboolean
fx_flag(Fx *fx, gpointer data)
{
	return *(gboolean *)data;
}

static void
fx_stop_source(Fx *fx)
{
	if (fx->source != NULL)
		sfl_source_stop(fx->source);
	g_clear_object(&fx->source);
	sfl_test_pipeline_stop(&fx->pipeline, fx->sink, TEST_DEADLINE_USEC / G_USEC_PER_SEC);
}

static void
fx_teardown(Fx *fx)
{
	fx_stop_source(fx);
	g_clear_object(&fx->sink);
	g_clear_object(&fx->store);
	g_clear_pointer(&fx->backing, sfl_memory_backing_unref);
	g_clear_object(&fx->auth);
	g_clear_pointer(&fx->interner, sfl_labels_interner_unref);
	g_clear_pointer(&fx->metrics, sfl_metrics_unref);
	g_clear_pointer(&fx->system, sfl_clock_unref);
	g_clear_pointer(&fx->config, sfl_config_free);
	sfl_test_sim_stop(&fx->ps_proc);
	sfl_test_sim_stop(&fx->sf_proc);
	g_clear_object(&fx->loop);
	while (g_main_context_iteration(NULL, FALSE))
		;
	if (fx->dir != NULL)
		sfl_test_rmtree(fx->dir);
	g_free(fx->dir);
	g_free(fx->key_path);
	g_free(fx->pub_path);
	g_free(fx->sf_base);
	g_free(fx->ps_ctl);
	g_free(fx->grpc_url);
}

static gchar *
fx_replay_b64(guint64 seq)
{
	guint8 raw[8];
	guint64 v = REPLAY_BASE + seq;

	for (gint i = 7; i >= 0; i--) {
		raw[i] = (guint8)(v & 0xff);
		v >>= 8;
	}
	return g_base64_encode(raw, sizeof(raw));
}

static gchar *
fx_committed(Fx *fx, const gchar *key)
{
	g_autoptr(SflStateDoc) doc = sfl_memory_backing_dup_document(fx->backing);
	return g_strdup(doc != NULL ? sfl_state_doc_get(doc, key) : NULL);
}

static gboolean
fx_has_commit(Fx *fx, gpointer data)
{
	g_autofree gchar *value = fx_committed(fx, "pubsub:" TEST_TOPIC);
	return g_strcmp0(value, data) == 0;
}

static gboolean
fx_has_lines(Fx *fx, gpointer data)
{
	return fx->sink->rows->len >= GPOINTER_TO_UINT(data);
}

static void
fx_preload(Fx *fx, const gchar *key, const gchar *value)
{
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	gboolean done = FALSE;

	sfl_state_doc_set(doc, key, value);
	sfl_checkpoint_store_commit_many_async(fx->store, doc, 0, NULL, fx_stopped_cb, &done);
	fx_wait(fx, fx_flag, &done, "the preloaded checkpoint");
}

/* the "Sequence" of every captured line, in order */
static GArray *
fx_sequences(Fx *fx)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(gint64));

	for (guint i = 0; i < fx->sink->rows->len; i++) {
		const gchar *line = sfl_test_capture_line(fx->sink, i);
		json_t *doc = json_loads(line, 0, NULL);
		gint64 seq = 0;

		g_assert_nonnull(doc);
		seq = json_integer_value(json_object_get(doc, "Sequence"));
		g_array_append_val(out, seq);
		json_decref(doc);
	}
	return out;
}

/* every sequence from @first to @last exactly once, in order */
static void
fx_assert_sequences(Fx *fx, gint64 first, gint64 last)
{
	g_autoptr(GArray) seqs = fx_sequences(fx);

	g_assert_cmpuint(seqs->len, ==, (guint)(last - first + 1));
	for (guint i = 0; i < seqs->len; i++)
		g_assert_cmpint(g_array_index(seqs, gint64, i), ==, first + (gint64)i);
}

/* every sequence from @first to @last at least once, never going back past a gap */
static void
fx_assert_no_gap(Fx *fx, gint64 first, gint64 last)
{
	g_autoptr(GArray) seqs = fx_sequences(fx);
	g_autoptr(GHashTable) seen = g_hash_table_new(g_int64_hash, g_int64_equal);

	for (guint i = 0; i < seqs->len; i++)
		g_hash_table_add(seen, &g_array_index(seqs, gint64, i));
	for (gint64 s = first; s <= last; s++) {
		if (!g_hash_table_contains(seen, &s))
			g_error("event %" G_GINT64_FORMAT " is missing", s);
	}
}

static const SflPubsubCounters *
fx_counters(Fx *fx)
{
	return sfl_pubsub_source_get_counters(SFL_PUBSUB_SOURCE(fx->source));
}

/* --- the gRPC client on its own ------------------------------------------------------------- */

typedef struct {
	gboolean done;
	SflGrpcStatus status;
	guint messages;
	guint events;
	GArray *seqs;
	guint topup_until; /* ask for 100 more whenever the credit is spent, up to this */
	SflGrpcCall *call;
} CallState;

static void fetch_request(SflGrpcCall *call, const gchar *topic, gint preset, gint32 n);

static void
call_message_cb(SflGrpcCall *call, const guint8 *data, gsize len, gpointer user_data)
{
	CallState *st = user_data;
	Eventbus__V1__FetchResponse *r = eventbus__v1__fetch_response__unpack(NULL, len, data);

	g_assert_nonnull(r);
	st->messages++;
	st->events += r->n_events;
	for (gsize i = 0; i < r->n_events; i++) {
		const ProtobufCBinaryData *id = &r->events[i]->replay_id;
		guint64 v = 0;
		g_assert_cmpuint(id->len, ==, 8);
		for (guint k = 0; k < 8; k++)
			v = (v << 8) | id->data[k];
		v -= REPLAY_BASE;
		g_array_append_val(st->seqs, v);
	}
	if (r->pending_num_requested == 0 && st->events < st->topup_until)
		fetch_request(call, NULL, 0, 100);
	eventbus__v1__fetch_response__free_unpacked(r, NULL);
}

static void
call_done_cb(SflGrpcCall *call, const SflGrpcStatus *status, gpointer user_data)
{
	CallState *st = user_data;

	st->done = TRUE;
	st->status.code = status->code;
	st->status.message = g_strdup(status->message);
	st->status.error_code = g_strdup(status->error_code);
	st->status.has_trailers = status->has_trailers;
}

static void
fetch_request(SflGrpcCall *call, const gchar *topic, gint preset, gint32 n)
{
	Eventbus__V1__FetchRequest req = EVENTBUS__V1__FETCH_REQUEST__INIT;
	guint8 buf[256];
	gsize len = 0;

	req.topic_name = (gchar *)topic;
	req.replay_preset = preset;
	req.num_requested = n;
	len = eventbus__v1__fetch_request__pack(&req, buf);
	sfl_grpc_call_send(call, buf, len);
}

static const gchar *const test_metadata[] = { "accesstoken: test-token",
					      "instanceurl: https://example.my.salesforce.com",
					      "tenantid: " TEST_ORG, NULL };

static gboolean
call_done(Fx *fx, gpointer data)
{
	return ((CallState *)data)->done;
}

static gboolean
call_events(Fx *fx, gpointer data)
{
	CallState *st = data;
	return st->done || st->events >= 300;
}

/* a fixture with no topics for raw gRPC calls, and @st ready; FALSE (torn down) when skipped */
static gboolean
call_setup(Fx *fx, CallState *st)
{
	if (!fx_setup(fx, "100000", "    topics: []\n", 1000))
		return FALSE;
	st->seqs = g_array_new(FALSE, FALSE, sizeof(guint64));
	return TRUE;
}

/* a Subscribe call on TEST_TOPIC sending @metadata and a first FetchRequest of @n */
static void
call_subscribe(Fx *fx, CallState *st, const gchar *const *metadata, gint preset, gint32 n)
{
	st->call = sfl_grpc_call_new(fx->loop, fx->grpc_url, "/eventbus.v1.PubSub/Subscribe",
				     metadata, call_message_cb, call_done_cb, st);
	fetch_request(st->call, TEST_TOPIC, preset, n);
}

static void
call_teardown(Fx *fx, CallState *st)
{
	sfl_grpc_call_free(st->call);
	g_array_unref(st->seqs);
	sfl_grpc_status_clear(&st->status);
	fx_teardown(fx);
}

/* a GetSchema call for @schema_id, waited for; the answer's bytes, NULL on error. The caller
 * drops @w's result: the unary test keeps the first one while it makes the second call */
static GBytes *
get_schema(SflCurlLoop *loop, const gchar *url, const gchar *schema_id, SflTestWaiter *w,
	   SflGrpcStatus *status, GError **error)
{
	Eventbus__V1__SchemaRequest req = EVENTBUS__V1__SCHEMA_REQUEST__INIT;
	g_autoptr(GBytes) body = NULL;
	guint8 buf[128];

	req.schema_id = (gchar *)schema_id;
	body = g_bytes_new(buf, eventbus__v1__schema_request__pack(&req, buf));
	sfl_grpc_unary_async(loop, url, "/eventbus.v1.PubSub/GetSchema", test_metadata, body, NULL,
			     sfl_test_waiter_cb, w);
	sfl_test_wait_for(&w->done, 30);
	return sfl_grpc_unary_finish(w->result, status, error);
}

/* the SchemaInfo in @answer names @schema_id; returns its JSON */
static gchar *
schema_info_json(GBytes *answer, const gchar *schema_id)
{
	Eventbus__V1__SchemaInfo *info = eventbus__v1__schema_info__unpack(
		NULL, g_bytes_get_size(answer), g_bytes_get_data(answer, NULL));
	gchar *json;

	g_assert_nonnull(info);
	g_assert_cmpstr(info->schema_id, ==, schema_id);
	json = g_strdup(info->schema_json);
	eventbus__v1__schema_info__free_unpacked(info, NULL);
	return json;
}

/* 300 events in responses of up to 100 (about 70 KB each: several curl chunks per message) */
static void
test_grpc_framing(void)
{
	Fx fx = { 0 };
	CallState st = { 0 };

	if (!call_setup(&fx, &st))
		return;
	fx_publish(&fx, TEST_TOPIC, 300, NULL);
	call_subscribe(&fx, &st, test_metadata, EVENTBUS__V1__REPLAY_PRESET__EARLIEST, 100);
	st.topup_until = 300;
	g_assert_true(sfl_grpc_call_start(st.call, NULL));
	fx_wait(&fx, call_events, &st, "300 events");
	g_assert_false(st.done);
	g_assert_cmpuint(st.events, ==, 300);
	for (guint i = 0; i < st.seqs->len; i++)
		g_assert_cmpuint(g_array_index(st.seqs, guint64, i), ==, i + 1);
	g_assert_cmpint(fx_stat(&fx, TEST_TOPIC, "max_outstanding"), <=, 100);
	call_teardown(&fx, &st);
}

static gboolean
sim_stream_open(Fx *fx, gpointer data)
{
	CallState *st = data;
	return st->events >= 1 && fx_stat(fx, TEST_TOPIC, "open") == 1 &&
	       sfl_grpc_call_is_upload_paused(st->call);
}

/*
 * The server ends the call (grpc-status in trailers) while our upload is
 * paused. curl 7.88 would wait forever for the upload; the call must complete.
 */
static void
test_grpc_end_while_paused(void)
{
	Fx fx = { 0 };
	CallState st = { 0 };

	if (!call_setup(&fx, &st))
		return;
	fx_publish(&fx, TEST_TOPIC, 1, NULL);
	call_subscribe(&fx, &st, test_metadata, EVENTBUS__V1__REPLAY_PRESET__EARLIEST, 5);
	g_assert_true(sfl_grpc_call_start(st.call, NULL));
	/* an established stream: an event came, credit is left, nothing more to send */
	fx_wait(&fx, sim_stream_open, &st, "the stream to open with our upload paused");
	fx_ctl_post(&fx, "/control/fault", "{\"kind\": \"end\", \"scope\": \"open\"}");
	fx_wait(&fx, call_done, &st, "the call to complete after the server ended it");
	g_assert_cmpint(st.status.code, ==, SFL_GRPC_OK);
	g_assert_true(st.status.has_trailers);
	call_teardown(&fx, &st);
}

/* an immediate error comes as one HEADERS frame (Trailers-Only) with error-code metadata */
static void
test_grpc_trailers_only(void)
{
	Fx fx = { 0 };
	CallState st = { 0 };
	const gchar *no_token[] = { "instanceurl: https://x.my.salesforce.com", NULL };

	if (!call_setup(&fx, &st))
		return;
	call_subscribe(&fx, &st, no_token, EVENTBUS__V1__REPLAY_PRESET__LATEST, 5);
	/* half-closed: curl 7.88 only surfaces a Trailers-Only answer then (see sfl-grpc.h) */
	sfl_grpc_call_close_send(st.call);
	g_assert_true(sfl_grpc_call_start(st.call, NULL));
	fx_wait(&fx, call_done, &st, "the refused call");
	g_assert_cmpint(st.status.code, ==, SFL_GRPC_UNAUTHENTICATED);
	g_assert_cmpstr(st.status.error_code, ==, "sfdc.platform.eventbus.grpc.service.auth.error");
	g_assert_cmpstr(st.status.message, ==, "missing auth headers");
	g_assert_cmpuint(st.messages, ==, 0);
	call_teardown(&fx, &st);
}

/*
 * A bare HTTP/2 peer that refuses a call the way grpc servers do, without reading the body:
 * once it has the request's first DATA frame it answers Trailers-Only, followed (in the same
 * write) by RST_STREAM NO_ERROR when that frame left the client's side open
 * (docs/internals/wire-notes.md, "Half-close"). Frames are only split by their 9-byte headers, so
 * no HPACK decoder is needed.
 */
typedef struct {
	GSocket *listener;
	GThread *thread;
	guint16 port;
	gboolean got_data;
	guint8 data_flags;
	gboolean sent_rst;
} RefusingPeer;

static gboolean
peer_read(GSocket *sock, guint8 *buf, gsize len)
{
	gsize got = 0;

	while (got < len) {
		gssize n = g_socket_receive(sock, (gchar *)buf + got, len - got, NULL, NULL);
		if (n <= 0)
			return FALSE;
		got += (gsize)n;
	}
	return TRUE;
}

static void
peer_frame(GByteArray *out, guint8 type, guint8 flags, guint32 stream, const guint8 *payload,
	   gsize len)
{
	guint8 head[9] = { (guint8)(len >> 16),
			   (guint8)(len >> 8),
			   (guint8)len,
			   type,
			   flags,
			   (guint8)(stream >> 24),
			   (guint8)(stream >> 16),
			   (guint8)(stream >> 8),
			   (guint8)stream };

	g_byte_array_append(out, head, sizeof(head));
	if (len > 0)
		g_byte_array_append(out, payload, (guint)len);
}

/* an HPACK literal header field without indexing, new name, no Huffman coding */
static void
peer_field(GByteArray *block, const gchar *name, const gchar *value)
{
	guint8 n = (guint8)strlen(name);
	guint8 v = (guint8)strlen(value);

	g_assert_cmpuint(strlen(name), <, 127);
	g_assert_cmpuint(strlen(value), <, 127);
	g_byte_array_append(block, (const guint8 *)"\0", 1);
	g_byte_array_append(block, &n, 1);
	g_byte_array_append(block, (const guint8 *)name, n);
	g_byte_array_append(block, &v, 1);
	g_byte_array_append(block, (const guint8 *)value, v);
}

static gpointer
peer_thread(gpointer data)
{
	RefusingPeer *peer = data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocket) sock = g_socket_accept(peer->listener, NULL, &error);
	g_autoptr(GByteArray) out = g_byte_array_new();
	g_autoptr(GByteArray) block = g_byte_array_new();
	guint8 buf[16384];
	const guint8 status_200 = 0x88; /* :status 200, HPACK static table entry 8 */
	const guint8 no_error[4] = { 0 };

	g_assert_no_error(error);
	g_socket_set_timeout(sock, 60);
	g_assert_true(peer_read(sock, buf, 24)); /* the connection preface */
	while (!peer->got_data) {
		guint32 len = 0;
		guint32 stream = 0;

		g_assert_true(peer_read(sock, buf, 9));
		len = ((guint32)buf[0] << 16) | ((guint32)buf[1] << 8) | buf[2];
		stream = (((guint32)buf[5] << 24) | ((guint32)buf[6] << 16) |
			  ((guint32)buf[7] << 8) | buf[8]) &
			 0x7fffffff;
		g_assert_cmpuint(len, <=, sizeof(buf));
		if (buf[3] == 0x0 && stream == 1) {
			peer->got_data = TRUE;
			peer->data_flags = buf[4];
		}
		g_assert_true(peer_read(sock, buf, len));
	}
	g_byte_array_append(block, &status_200, 1);
	peer_field(block, "content-type", "application/grpc");
	peer_field(block, "grpc-status", "16");
	peer_field(block, "grpc-message", "missing auth headers");
	peer_field(block, "error-code", "sfdc.platform.eventbus.grpc.service.auth.error");
	peer_frame(out, 0x4, 0x0, 0, NULL, 0);		       /* SETTINGS */
	peer_frame(out, 0x4, 0x1, 0, NULL, 0);		       /* SETTINGS ACK */
	peer_frame(out, 0x1, 0x5, 1, block->data, block->len); /* END_STREAM | END_HEADERS */
	peer->sent_rst = (peer->data_flags & 0x1) == 0;
	if (peer->sent_rst)
		peer_frame(out, 0x3, 0x0, 1, no_error, sizeof(no_error));
	g_assert_cmpint(g_socket_send(sock, (const gchar *)out->data, out->len, NULL, NULL), ==,
			(gssize)out->len);
	/* until the client hangs up: closing with its bytes unread would reset the connection */
	while (g_socket_receive(sock, (gchar *)buf, sizeof(buf), NULL, NULL) > 0)
		;
	return NULL;
}

static void
peer_start(RefusingPeer *peer)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GInetAddress) lo = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
	g_autoptr(GSocketAddress) any = g_inet_socket_address_new(lo, 0);
	g_autoptr(GSocketAddress) bound = NULL;

	peer->listener = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
				      G_SOCKET_PROTOCOL_TCP, &error);
	g_assert_no_error(error);
	g_assert_true(g_socket_bind(peer->listener, any, FALSE, &error));
	g_assert_true(g_socket_listen(peer->listener, &error));
	g_socket_set_timeout(peer->listener, 60);
	bound = g_socket_get_local_address(peer->listener, &error);
	g_assert_no_error(error);
	peer->port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound));
	peer->thread = g_thread_new("refusing-peer", peer_thread, peer);
}

static gboolean
call_state_done(gpointer fixture, gpointer data)
{
	return ((CallState *)data)->done;
}

/*
 * A half-closed call's END_STREAM goes with its DATA frame (docs/internals/wire-notes.md,
 * "Half-close"). Sent later on its own, a server that refuses at once answers first, with
 * RST_STREAM after the trailers, and curl 7.88 lost that Trailers-Only status ("Empty reply from
 * server", UNAVAILABLE): the probe then never saw UNAUTHENTICATED and the token was never minted
 * again.
 */
static void
test_grpc_refused_at_once(void)
{
	RefusingPeer peer = { 0 };
	CallState st = { 0 };
	g_autoptr(SflCurlLoop) loop = sfl_curl_loop_new();
	g_autofree gchar *url = NULL;

	peer_start(&peer);
	url = g_strdup_printf("http://127.0.0.1:%u", peer.port);
	st.call = sfl_grpc_call_new(loop, url, "/eventbus.v1.PubSub/Subscribe", test_metadata,
				    call_message_cb, call_done_cb, &st);
	fetch_request(st.call, TEST_TOPIC, EVENTBUS__V1__REPLAY_PRESET__LATEST, 1);
	sfl_grpc_call_close_send(st.call);
	g_assert_true(sfl_grpc_call_start(st.call, NULL));
	sfl_test_fixture_wait(call_state_done, NULL, &st, TEST_DEADLINE_USEC, "the refused call");
	sfl_grpc_call_free(st.call);
	g_thread_join(peer.thread);
	g_object_unref(peer.listener);
	g_assert_true(peer.got_data);
	g_assert_cmphex(peer.data_flags & 0x1, ==, 0x1);
	g_assert_false(peer.sent_rst);
	g_assert_cmpint(st.status.code, ==, SFL_GRPC_UNAUTHENTICATED);
	g_assert_cmpstr(st.status.message, ==, "missing auth headers");
	g_assert_cmpstr(st.status.error_code, ==, "sfdc.platform.eventbus.grpc.service.auth.error");
	g_assert_cmpuint(st.messages, ==, 0);
	sfl_grpc_status_clear(&st.status);
}

static void
test_grpc_unary(void)
{
	Fx fx = { 0 };
	SflTestWaiter w1 = { 0 };
	SflTestWaiter w2 = { 0 };
	json_t *schemas = NULL;
	const gchar *id = NULL;
	g_autoptr(GBytes) unknown = NULL;
	g_autoptr(GBytes) answer = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *schema_json = NULL;
	SflGrpcStatus status = { 0 };

	if (!fx_setup(&fx, "100000", "    topics: []\n", 1000))
		return;
	schemas = fx_ctl(&fx, "GET", "/control/schemas", NULL);
	id = json_object_iter_key(json_object_iter(schemas));
	answer = get_schema(fx.loop, fx.grpc_url, id, &w1, NULL, &error);
	g_assert_no_error(error);
	schema_json = schema_info_json(answer, id);
	g_assert_cmpstr(schema_json, ==, json_string_value(json_object_get(schemas, id)));

	unknown = get_schema(fx.loop, fx.grpc_url, "no-such-schema", &w2, &status, &error);
	g_assert_null(unknown);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_NOT_FOUND);
	g_assert_nonnull(strstr(error->message, "GetSchema"));
	g_assert_nonnull(strstr(error->message, "no schema no-such-schema"));
	g_assert_cmpint(status.code, ==, SFL_GRPC_NOT_FOUND);
	sfl_grpc_status_clear(&status);
	g_clear_object(&w1.result);
	g_clear_object(&w2.result);
	json_decref(schemas);
	fx_teardown(&fx);
}

/* TLS with ALPN h2 against a self-signed simulator, trusted through the loop's CA file */
static void
test_grpc_tls(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dir = g_dir_make_tmp("sfl-pubsub-tls-XXXXXX", &error);
	const gchar *args[] = { "--tls", dir, NULL };
	SflTestSim *proc = NULL;
	g_autofree gchar *ctl = NULL;
	g_autoptr(SflCurlLoop) loop = NULL;
	g_autoptr(GBytes) answer = NULL;
	g_autofree gchar *url = NULL;
	SflTestWaiter w = { 0 };
	const gchar *id = NULL;
	json_t *doc = NULL;
	json_t *schemas = NULL;

	g_assert_no_error(error);
	ctl = sfl_test_pubsub_sim_start(args, &proc);
	if (ctl == NULL) {
		sfl_test_sim_stop(&proc);
		return;
	}
	loop = sfl_curl_loop_new();
	doc = sfl_test_sim_control(loop, ctl, "GET", "/control/info", NULL);
	g_assert_true(json_is_true(json_object_get(doc, "tls")));
	sfl_curl_loop_set_ca_file(loop, json_string_value(json_object_get(doc, "cert")));
	url = g_strdup_printf("https://127.0.0.1:%" G_GINT64_FORMAT,
			      (gint64)json_integer_value(json_object_get(doc, "grpc_port")));
	schemas = sfl_test_sim_control(loop, ctl, "GET", "/control/schemas", NULL);
	id = json_object_iter_key(json_object_iter(schemas));
	answer = get_schema(loop, url, id, &w, NULL, &error);
	g_assert_no_error(error);
	g_free(schema_info_json(answer, id));
	g_clear_object(&w.result);
	json_decref(schemas);
	json_decref(doc);
	sfl_test_sim_stop(&proc);
	sfl_test_rmtree(dir);
}

/* --- the source ----------------------------------------------------------------------------- */

#define ORDERED_EVENTS 50000

static void
test_source_ordered(void)
{
	Fx fx = { 0 };
	g_autofree gchar *last = fx_replay_b64(ORDERED_EVENTS);

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"" TEST_TOPIC "\"]\n    replay_preset: EARLIEST\n", 10000))
		return;
	fx_publish(&fx, TEST_TOPIC, ORDERED_EVENTS, NULL);
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_has_lines, GUINT_TO_POINTER(ORDERED_EVENTS), "every event");
	fx_wait(&fx, fx_has_commit, last, "the last replay id committed");
	fx_assert_sequences(&fx, 1, ORDERED_EVENTS);
	g_assert_cmpuint(fx_counters(&fx)->subscribes, ==, 1);
	g_assert_cmpuint(fx_counters(&fx)->decode_errors, ==, 0);
	/* one schema, fetched once */
	g_assert_cmpuint(fx_counters(&fx)->schema_fetches, ==, 1);
	/* the probe's one event comes on top (see sfl_topic_open()) */
	g_assert_cmpint(fx_stat(&fx, TEST_TOPIC, "sent"), <=, ORDERED_EVENTS + 1);
	g_assert_cmpint(fx_stat(&fx, TEST_TOPIC, "max_outstanding"), <=, 100);
	fx_teardown(&fx);
}

static gboolean
fx_other_topic_committed(Fx *fx, gpointer data)
{
	g_autofree gchar *value = fx_committed(fx, "pubsub:/event/ApiAnomalyEvent");
	return g_strcmp0(value, data) == 0;
}

/* two topics share the streaming lane; each keeps its own order and checkpoint */
static void
test_source_two_topics(void)
{
	Fx fx = { 0 };
	const gchar *other = "/event/ApiAnomalyEvent";
	g_autofree gchar *last = fx_replay_b64(1500);
	gint64 next[2] = { 1, 1 };

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"" TEST_TOPIC "\", \"/event/ApiAnomalyEvent\"]\n"
		      "    replay_preset: EARLIEST\n",
		      1000))
		return;
	fx_publish(&fx, TEST_TOPIC, 1500, NULL);
	fx_publish(&fx, other, 1500, NULL);
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_has_lines, GUINT_TO_POINTER(3000), "both topics");
	fx_wait(&fx, fx_has_commit, last, "the first topic's last replay id committed");
	/* the other topic's last batch may commit in a later flush: waited for, not assumed */
	fx_wait(&fx, fx_other_topic_committed, last, "the second topic's last replay id committed");
	for (guint i = 0; i < fx.sink->rows->len; i++) {
		json_t *doc = json_loads(sfl_test_capture_line(fx.sink, i), 0, NULL);
		const gchar *id = json_string_value(json_object_get(doc, "EventIdentifier"));
		guint which = g_str_has_prefix(id, "ApiAnomalyEvent-") ? 1 : 0;

		g_assert_cmpint(json_integer_value(json_object_get(doc, "Sequence")), ==,
				next[which]);
		next[which]++;
		json_decref(doc);
	}
	g_assert_cmpint(next[0], ==, 1501);
	g_assert_cmpint(next[1], ==, 1501);
	fx_teardown(&fx);
}

static gboolean
fx_sim_keepalives(Fx *fx, gpointer data)
{
	return fx_stat(fx, TEST_TOPIC, "keepalives") >= GPOINTER_TO_INT(data);
}

/* an idle topic: the keepalive's latest_replay_id becomes the committed position */
static void
test_source_keepalive(void)
{
	Fx fx = { 0 };
	g_autofree gchar *first = fx_replay_b64(3);
	g_autofree gchar *later = fx_replay_b64(3 + 40);

	if (!fx_setup(&fx, "200", "    topics: [\"" TEST_TOPIC "\"]\n", 1000))
		return;
	/* the bus moved on without events for this org */
	fx_ctl_post(&fx, "/control/latest", "{\"topic\": \"" TEST_TOPIC "\", \"advance\": 3}");
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_has_commit, first, "the keepalive position committed");
	fx_ctl_post(&fx, "/control/latest", "{\"topic\": \"" TEST_TOPIC "\", \"advance\": 40}");
	fx_wait(&fx, fx_has_commit, later, "the later keepalive position committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 0);
	/* repeated keepalives with an unchanged id add nothing */
	fx_wait(&fx, fx_sim_keepalives, GINT_TO_POINTER(fx_stat(&fx, TEST_TOPIC, "keepalives") + 2),
		"two more keepalives");
	g_assert_cmpuint(fx_counters(&fx)->keepalive_tokens, ==, 2);
	fx_teardown(&fx);
}

/*
 * The lane is full behind the held push and Salesforce owes nothing. The full lane is part of
 * the condition: the credit can run out while the last events are still on their way into
 * the lane, and a source that finds room then rightly asks for more.
 */
static gboolean
fx_credit_drained(Fx *fx, gpointer data)
{
	SflPipelineCounters counters;

	sfl_pipeline_get_counters(fx->pipeline, &counters);
	return fx->sink->held->len > 0 &&
	       counters.queue_depth[SFL_LANE_STREAMING] >= GPOINTER_TO_UINT(data) &&
	       fx_stat(fx, TEST_TOPIC, "outstanding") == 0;
}

/* a full streaming lane: no credit is asked for, so Salesforce stops; then it resumes */
static void
test_source_backpressure(void)
{
	Fx fx = { 0 };
	gint64 sent = 0;
	gint64 requests = 0;
	g_autofree gchar *last = fx_replay_b64(2000);

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"" TEST_TOPIC "\"]\n    replay_preset: EARLIEST\n", 100))
		return;
	fx.sink->hold = TRUE;
	fx_publish(&fx, TEST_TOPIC, 2000, NULL);
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_credit_drained, GUINT_TO_POINTER(100),
		"the credit to run out behind a full lane");
	sent = fx_stat(&fx, TEST_TOPIC, "sent");
	requests = fx_stat(&fx, TEST_TOPIC, "fetch_requests");
	/*
	 * What may be out of Salesforce: the lane's 100 entries, the held push and the batch
	 * filling behind it (500 each), the last 100 credits, and the probe's one event.
	 */
	g_assert_cmpint(sent, <, 2000);
	g_assert_cmpint(sent, <=, 100 + 2 * 500 + 100 + 1);
	/* a round trip to the simulator later, still nothing asked for */
	g_assert_cmpint(fx_stat(&fx, TEST_TOPIC, "outstanding"), ==, 0);
	g_assert_cmpint(fx_stat(&fx, TEST_TOPIC, "fetch_requests"), ==, requests);
	sfl_test_capture_release(fx.sink);
	fx_wait(&fx, fx_has_lines, GUINT_TO_POINTER(2000), "every event after the lane drained");
	fx_wait(&fx, fx_has_commit, last, "the last replay id committed");
	fx_assert_sequences(&fx, 1, 2000);
	fx_teardown(&fx);
}

static gboolean
fx_fallback(Fx *fx, gpointer data)
{
	return fx_counters(fx)->replay_fallbacks >= 1;
}

/* a stored id outside retention: replayid.corrupted → EARLIEST, counted */
static void
test_source_corrupted_replay(void)
{
	Fx fx = { 0 };
	g_autofree gchar *stale = fx_replay_b64(3);
	g_autofree gchar *last = fx_replay_b64(30);

	if (!fx_setup(&fx, "100000", "    topics: [\"" TEST_TOPIC "\"]\n", 1000))
		return;
	fx_publish(&fx, TEST_TOPIC, 30, NULL);
	fx_ctl_post(&fx, "/control/retention", "{\"topic\": \"" TEST_TOPIC "\", \"floor\": 10}");
	fx_preload(&fx, "pubsub:" TEST_TOPIC, stale);
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_fallback, NULL, "the replay fallback");
	fx_wait(&fx, fx_has_lines, GUINT_TO_POINTER(21), "events from the retention floor");
	fx_wait(&fx, fx_has_commit, last, "the last replay id committed");
	fx_assert_sequences(&fx, 10, 30);
	g_assert_cmpuint(fx_counters(&fx)->replay_fallbacks, ==, 1);
	fx_teardown(&fx);
}

static gboolean
fx_subscribes(Fx *fx, gpointer data)
{
	return fx_stat(fx, TEST_TOPIC, "subscribes") >= GPOINTER_TO_INT(data);
}

/* a refusal with another error-code keeps the stored position: no fallback */
static void
test_source_refused_replay_kept(void)
{
	Fx fx = { 0 };
	g_autofree gchar *stale = fx_replay_b64(3);

	if (!fx_setup(&fx, "100000", "    topics: [\"" TEST_TOPIC "\"]\n", 1000))
		return;
	fx_publish(&fx, TEST_TOPIC, 30, NULL);
	fx_ctl_post(&fx, "/control/retention",
		    "{\"topic\": \"" TEST_TOPIC "\", \"floor\": 10, \"error_code\": "
		    "\"sfdc.platform.eventbus.grpc.subscription.fetch.replayid.validation."
		    "failed\"}");
	fx_preload(&fx, "pubsub:" TEST_TOPIC, stale);
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_subscribes, GINT_TO_POINTER(3), "three refused subscriptions");
	g_assert_cmpuint(fx_counters(&fx)->replay_fallbacks, ==, 0);
	g_assert_cmpuint(fx.sink->rows->len, ==, 0);
	{
		json_t *doc = fx_ctl(&fx, "GET", "/control/stats", NULL);
		json_t *first =
			json_object_get(json_object_get(json_object_get(doc, "topics"), TEST_TOPIC),
					"last_first_request");
		g_assert_cmpstr(json_string_value(json_object_get(first, "preset")), ==, "CUSTOM");
		g_assert_cmpint(json_integer_value(json_object_get(first, "replay_seq")), ==, 3);
		json_decref(doc);
	}
	fx_teardown(&fx);
}

/* every first FetchRequest the simulator got for the test topic, in order (new reference) */
static json_t *
fx_first_requests(Fx *fx)
{
	json_t *doc = fx_ctl(fx, "GET", "/control/stats", NULL);
	json_t *list = json_object_get(json_object_get(json_object_get(doc, "topics"), TEST_TOPIC),
				       "first_requests");

	g_assert_true(json_is_array(list));
	json_incref(list);
	json_decref(doc);
	return list;
}

/* a subscription came after the refused one */
static gboolean
fx_resubscribed(Fx *fx, gpointer data)
{
	g_autoptr(json_t) list = fx_first_requests(fx);
	gsize n = json_array_size(list);

	for (gsize i = 0; i + 1 < n; i++) {
		if (json_is_true(json_object_get(json_array_get(list, i), "refused")))
			return TRUE;
	}
	return FALSE;
}

static const gchar *
fx_request_preset(json_t *list, gsize i)
{
	return json_string_value(json_object_get(json_array_get(list, i), "preset"));
}

/*
 * The refused subscription was CUSTOM at @seq; every one after it is EARLIEST (none LATEST,
 * whatever replay_preset says) and was accepted.
 */
static void
fx_assert_fell_back_to_earliest(Fx *fx, gint64 seq)
{
	g_autoptr(json_t) list = fx_first_requests(fx);
	gsize refused = G_MAXSIZE;

	for (gsize i = 0; i < json_array_size(list); i++) {
		json_t *r = json_array_get(list, i);
		if (json_is_true(json_object_get(r, "refused"))) {
			g_assert_cmpuint(refused, ==, G_MAXSIZE);
			refused = i;
			g_assert_cmpstr(fx_request_preset(list, i), ==, "CUSTOM");
			g_assert_cmpint(json_integer_value(json_object_get(r, "replay_seq")), ==,
					seq);
		} else if (refused != G_MAXSIZE) {
			g_assert_cmpstr(fx_request_preset(list, i), ==, "EARLIEST");
		}
	}
	g_assert_cmpuint(refused, !=, G_MAXSIZE);
	g_assert_cmpuint(json_array_size(list), >, refused + 1);
}

static void
fx_assert_fallback_metric(Fx *fx, guint n)
{
	g_autofree gchar *text = sfl_metrics_render_prometheus(fx->metrics);
	g_autofree gchar *want = g_strdup_printf(
		"\nsf2loki_pubsub_replay_fallbacks_total{topic=\"" TEST_TOPIC "\"} %u\n", n);

	if (strstr(text, want) == NULL)
		g_error("no \"%s\" in the metrics:\n%s", want + 1, text);
}

/*
 * replay_preset: LATEST and a stored id Salesforce refuses as replayid.corrupted (expired):
 * the resubscription is EARLIEST, never LATEST, so what the stream still holds, the events
 * from before the stored position included, is delivered (docs/sources/pubsub.md); the fallback is
 * counted and logged with what it means.
 */
static void
test_source_corrupted_replay_latest(void)
{
	Fx fx = { 0 };
	g_autofree gchar *stored = fx_replay_b64(20);
	g_autofree gchar *last = fx_replay_b64(30);

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"" TEST_TOPIC "\"]\n    replay_preset: LATEST\n", 1000))
		return;
	fx_publish(&fx, TEST_TOPIC, 30, NULL);
	fx_ctl_post(&fx, "/control/fault",
		    "{\"kind\": \"replay_corrupted\", \"scope\": \"next\", \"count\": 1}");
	fx_preload(&fx, "pubsub:" TEST_TOPIC, stored);
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_fallback, NULL, "the replay fallback");
	fx_wait(&fx, fx_resubscribed, NULL, "the resubscription");
	fx_assert_fell_back_to_earliest(&fx, 20);
	fx_wait(&fx, fx_has_lines, GUINT_TO_POINTER(30), "every event the stream holds");
	fx_wait(&fx, fx_has_commit, last, "the last replay id committed");
	fx_assert_sequences(&fx, 1, 30);
	fx_assert_fell_back_to_earliest(&fx, 20);
	g_assert_cmpuint(fx_counters(&fx)->replay_fallbacks, ==, 1);
	fx_assert_fallback_metric(&fx, 1);
	g_assert_true(fx_logged("Resubscribing from EARLIEST"));
	g_assert_true(fx_logged("72 h"));
	g_assert_true(fx_logged("age is unknown"));
	fx_teardown(&fx);
}

/*
 * The position refused is one the stream gave in this run (a reconnect after the stream
 * went away): the log says how long ago it was seen, and the topic again restarts at
 * EARLIEST although replay_preset is LATEST.
 */
static void
test_source_corrupted_replay_from_stream(void)
{
	Fx fx = { 0 };
	g_autofree gchar *last = fx_replay_b64(5);

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"" TEST_TOPIC "\"]\n    replay_preset: LATEST\n", 1000))
		return;
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	/* published once the simulator placed the LATEST stream (after the probe), so it
	 * sees them */
	fx_wait(&fx, fx_subscribes, GINT_TO_POINTER(2), "the first stream");
	fx_publish(&fx, TEST_TOPIC, 5, NULL);
	fx_wait(&fx, fx_has_commit, last, "the events committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 5);
	fx_ctl_post(&fx, "/control/fault",
		    "{\"kind\": \"replay_corrupted\", \"scope\": \"next\", \"count\": 1}");
	fx_ctl_post(&fx, "/control/fault", "{\"kind\": \"unavailable\", \"scope\": \"open\"}");
	fx_wait(&fx, fx_fallback, NULL, "the replay fallback");
	fx_wait(&fx, fx_resubscribed, NULL, "the resubscription");
	fx_assert_fell_back_to_earliest(&fx, 5);
	/* EARLIEST delivers the five again: duplicates, never a gap */
	fx_wait(&fx, fx_has_lines, GUINT_TO_POINTER(10), "the events again from EARLIEST");
	fx_assert_fell_back_to_earliest(&fx, 5);
	fx_assert_fallback_metric(&fx, 1);
	g_assert_true(fx_logged("last seen on the stream"));
	g_assert_false(fx_logged("age is unknown"));
	fx_teardown(&fx);
}

/* one payload that does not decode is skipped and counted; the stream goes on */
static void
test_source_decode_failure(void)
{
	Fx fx = { 0 };
	g_autofree gchar *last = fx_replay_b64(10);
	g_autoptr(GArray) seqs = NULL;

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"" TEST_TOPIC "\"]\n    replay_preset: EARLIEST\n", 1000))
		return;
	fx_publish(&fx, TEST_TOPIC, 10, "\"corrupt\": [4]");
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_has_commit, last, "the last replay id committed");
	g_assert_cmpuint(fx_counters(&fx)->decode_errors, ==, 1);
	seqs = fx_sequences(&fx);
	g_assert_cmpuint(seqs->len, ==, 9);
	for (guint i = 0; i < seqs->len; i++)
		g_assert_cmpint(g_array_index(seqs, gint64, i), ==, i < 4 ? i + 1 : i + 2);
	g_assert_cmpuint(fx_counters(&fx)->subscribes, ==, 1);
	fx_teardown(&fx);
}

static gboolean
fx_decode_errors(Fx *fx, gpointer data)
{
	return fx_counters(fx)->decode_errors >= GPOINTER_TO_UINT(data);
}

/* three responses in a row with nothing decodable: one stall for the streak, then a good
 * event ends it */
static void
test_source_decode_stall(void)
{
	Fx fx = { 0 };
	g_autofree gchar *last = fx_replay_b64(5);

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"" TEST_TOPIC "\"]\n    replay_preset: EARLIEST\n"
		      "    default_num_requested: 1\n",
		      1000))
		return;
	fx_publish(&fx, TEST_TOPIC, 4, "\"corrupt\": [0, 1, 2, 3]");
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_decode_errors, GUINT_TO_POINTER(4), "four undecodable events");
	g_assert_cmpuint(fx_counters(&fx)->decode_stalls, ==, 1);
	fx_publish(&fx, TEST_TOPIC, 1, NULL);
	fx_wait(&fx, fx_has_commit, last, "the good event committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 1);
	g_assert_cmpuint(fx_counters(&fx)->decode_stalls, ==, 1);
	fx_teardown(&fx);
}

/* the writer schema changes between events: both versions decode */
static void
test_source_schema_change(void)
{
	Fx fx = { 0 };
	g_autofree gchar *last = fx_replay_b64(10);

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"" TEST_TOPIC "\"]\n    replay_preset: EARLIEST\n", 1000))
		return;
	fx_publish(&fx, TEST_TOPIC, 5, "\"version\": 1");
	fx_publish(&fx, TEST_TOPIC, 5, "\"version\": 2");
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_has_commit, last, "the last replay id committed");
	fx_assert_sequences(&fx, 1, 10);
	for (guint i = 0; i < 10; i++) {
		const gchar *line = sfl_test_capture_line(fx.sink, i);
		gboolean v2 = strstr(line, "\"AuthMethodReference\": \"pwd\"") != NULL;
		g_assert_cmpint(v2, ==, i >= 5);
	}
	g_assert_cmpuint(fx_counters(&fx)->schema_fetches, ==, 2);
	g_assert_cmpuint(fx_counters(&fx)->decode_errors, ==, 0);
	fx_teardown(&fx);
}

/* the publish answer of the simulator (lines computed by Python), a new reference */
static json_t *
fx_publish_doc(Fx *fx, const gchar *topic, guint count, const gchar *extra)
{
	g_autofree gchar *body =
		g_strdup_printf("{\"topic\": \"%s\", \"count\": %u, %s}", topic, count, extra);
	return fx_ctl(fx, "POST", "/control/publish", body);
}

typedef struct {
	const gchar *mode; /* sources.pubsub.cdc_field_names, NULL: the default */
	gboolean in_line;
	gboolean in_metadata;
} CdcCase;

/*
 * CDC events through the source. The line is byte for byte the original's (what Python's
 * json.dumps(decoded, sort_keys=True, default=str) gives for the simulator's payload, bytes
 * and fixed as b'...' included) unless cdc_field_names is line; the names the bitmaps select
 * go to structured metadata by default, into ChangeEventHeader with line, nowhere with off.
 */
static void
test_source_cdc(gconstpointer data)
{
	const CdcCase *c = data;
	Fx fx = { 0 };
	g_autofree gchar *last = fx_replay_b64(2);
	g_autofree gchar *yaml = g_strdup_printf(
		"    topics: [\"" TEST_TOPIC "\"]\n    replay_preset: EARLIEST\n%s%s%s",
		c->mode != NULL ? "    cdc_field_names: " : "", c->mode != NULL ? c->mode : "",
		c->mode != NULL ? "\n" : "");
	g_autoptr(json_t) published = NULL;

	if (!fx_setup(&fx, "100000", yaml, 1000))
		return;
	/* bits 1, 5 and 7 of the top level; children 0 and 1 of field 4 (BillingAddress) */
	published = fx_publish_doc(&fx, TEST_TOPIC, 2,
				   "\"kind\": \"account\", \"changed\": [\"0xA2\", \"4-0x03\"], "
				   "\"lines\": true");
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_has_commit, last, "the events committed");
	g_assert_cmpuint(fx.sink->rows->len, ==, 2);
	for (guint i = 0; i < 2; i++) {
		SflTestRow *row = g_ptr_array_index(fx.sink->rows, i);
		const gchar *original =
			json_string_value(json_array_get(json_object_get(published, "lines"), i));
		g_autoptr(json_t) doc = json_loads(row->line, 0, NULL);
		json_t *header = json_object_get(doc, "ChangeEventHeader");

		g_test_message("line %s metadata %s", row->line, row->metadata);
		g_assert_nonnull(original);
		g_assert_true(json_is_object(header));
		/* the raw bitmaps stay as they came */
		g_assert_cmpstr(json_string_value(json_array_get(
					json_object_get(header, "changedFields"), 0)),
				==, "0xA2");
		if (!c->in_line) {
			g_assert_cmpstr(row->line, ==, original);
			g_assert_null(json_object_get(header, "changedFieldNames"));
		} else {
			g_autofree gchar *changed = json_dumps(
				json_object_get(header, "changedFieldNames"), JSON_COMPACT);
			g_autofree gchar *nulled = json_dumps(
				json_object_get(header, "nulledFieldNames"), JSON_COMPACT);

			g_assert_cmpstr(changed, ==,
					"[\"Name\",\"Phone\",\"AnnualRevenue\","
					"\"BillingAddress.Street\",\"BillingAddress.City\"]");
			/* the simulator nulls field 4: "0x10" */
			g_assert_cmpstr(nulled, ==, "[\"BillingAddress\"]");
			g_assert_cmpuint(json_array_size(json_object_get(header, "diffFieldNames")),
					 ==, 0);
			/* apart from the additions, the original's line */
			json_object_del(header, "changedFieldNames");
			json_object_del(header, "nulledFieldNames");
			json_object_del(header, "diffFieldNames");
			{
				g_autoptr(json_t) want = json_loads(original, 0, NULL);
				g_assert_true(json_equal(doc, want));
			}
		}
		if (c->in_metadata) {
			g_assert_nonnull(strstr(row->metadata,
						";changed_fields=Name,Phone,AnnualRevenue,"
						"BillingAddress.Street,BillingAddress.City;"
						"nulled_fields=BillingAddress"));
			/* diffFields is empty: no pair, as for a None */
			g_assert_null(strstr(row->metadata, "diff_fields"));
		} else {
			g_assert_null(strstr(row->metadata, "_fields="));
		}
	}
	fx_teardown(&fx);
}

typedef struct {
	const gchar *kind;
	guint64 min_mints;
} FaultCase;

/* a stream ended by the server mid-way: resubscribed from the last replay id, nothing lost */
static void
test_source_fault(gconstpointer data)
{
	const FaultCase *c = data;
	Fx fx = { 0 };
	g_autofree gchar *last = fx_replay_b64(400);

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"" TEST_TOPIC "\"]\n    replay_preset: EARLIEST\n", 1000))
		return;
	fx_publish(&fx, TEST_TOPIC, 200, NULL);
	fx_start(&fx, 300 * G_USEC_PER_SEC);
	fx_wait(&fx, fx_has_lines, GUINT_TO_POINTER(200), "the first events");
	fx_ctl_post(&fx, "/control/fault", "{\"kind\": \"%s\", \"scope\": \"open\"}", c->kind);
	fx_publish(&fx, TEST_TOPIC, 200, NULL);
	fx_wait(&fx, fx_has_commit, last, "the last replay id committed");
	fx_assert_no_gap(&fx, 1, 400);
	g_assert_cmpuint(fx_counters(&fx)->reconnects, >=, 1);
	g_assert_cmpuint(sfl_sf_auth_get_mints(fx.auth), >=, c->min_mints);
	if (g_str_equal(c->kind, "unauthenticated"))
		g_assert_cmpuint(fx_counters(&fx)->auth_rejections, >=, 1);
	fx_teardown(&fx);
}

static gboolean
fx_stalled(Fx *fx, gpointer data)
{
	return fx_counters(fx)->stalls >= 1 && fx_counters(fx)->subscribes >= 2;
}

/* no response at all (no keepalive either): the watchdog reconnects */
static void
test_source_watchdog(void)
{
	Fx fx = { 0 };

	if (!fx_setup(&fx, "1000000", "    topics: [\"" TEST_TOPIC "\"]\n", 1000))
		return;
	fx_start(&fx, 300 * 1000);
	fx_wait(&fx, fx_stalled, NULL, "a stall and a new subscription");
	g_assert_cmpuint(fx_counters(&fx)->reconnects, >=, 1);
	fx_teardown(&fx);
}

/* "*": describeGlobal names become topics by the SFL-0038 rule, then include/exclude */
static gboolean
fx_topics_at_least(Fx *fx, gpointer data)
{
	return fx_counters(fx)->discoveries >= 1;
}

static void
test_source_discovery(void)
{
	Fx fx = { 0 };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dataset_path = NULL;
	g_auto(GStrv) topics = NULL;
	SflSfRest *rest = NULL;
	SflPubsubSource *source = NULL;
	/* describeGlobal's objects: streams, <X>Event channels with and without a store, others */
	g_autofree gchar *dataset = sfl_test_data_render("pubsub/discovery.json", NULL);

	if (!fx_setup(&fx, "100000",
		      "    topics: [\"*\", \"/event/LoginEventStream\"]\n"
		      "    exclude: [\"/event/Report*\"]\n",
		      1000))
		return;
	/* a second Salesforce simulator with the dataset: the fixture's has none */
	sfl_test_sim_stop(&fx.sf_proc);
	g_free(fx.sf_base);
	dataset_path = g_build_filename(fx.dir, "dataset.json", NULL);
	g_assert_true(g_file_set_contents(dataset_path, dataset, -1, &error));
	{
		const gchar *args[] = { "--public-key",	 fx.pub_path, "--dataset", dataset_path,
					"--api-version", "64.0",      NULL };
		fx.sf_base = sfl_test_sf_sim_start(args, &fx.sf_proc);
	}
	g_clear_object(&fx.auth);
	g_free(fx.config->data.salesforce->login_url);
	fx.config->data.salesforce->login_url = g_strdup(fx.sf_base);
	fx.auth = sfl_sf_auth_new(fx.loop, fx.config->data.salesforce, fx.system, &error);
	g_assert_no_error(error);
	rest = sfl_sf_rest_new(fx.loop, fx.auth, "64.0");
	source = sfl_pubsub_source_new(fx.auth, rest, &fx.config->data.sources.pubsub,
				       &fx.config->data.sources, TEST_ORG, NULL, &error);
	g_assert_no_error(error);
	g_object_unref(rest);
	{
		const gchar *labels[] = { "job", "sf2loki", NULL };
		g_autoptr(SflLaneHandle) lane = NULL;
		SflSourceContext ctx = { 0 };

		fx.pipeline = sfl_pipeline_new(&fx.config->data.sink.loki.batch, SFL_SINK(fx.sink),
					       fx.store, fx.system);
		lane = sfl_pipeline_get_lane(fx.pipeline, SFL_LANE_STREAMING);
		fx.source = SFL_SOURCE(source);
		ctx.lane = lane;
		ctx.store = fx.store;
		ctx.interner = fx.interner;
		ctx.clock = fx.system;
		ctx.static_labels = labels;
		ctx.key_prefix = "";
		sfl_source_start(fx.source, &ctx);
	}
	fx_wait(&fx, fx_topics_at_least, NULL, "a discovery");
	topics = sfl_pubsub_source_dup_topics(source);
	/* the explicit topic first, then what discovery added; LoginEvent is storage, not a
	 * channel, and the exclude glob drops ReportAnomalyEvent */
	g_assert_cmpuint(g_strv_length(topics), ==, 2);
	g_assert_cmpstr(topics[0], ==, "/event/LoginEventStream");
	g_assert_cmpstr(topics[1], ==, "/event/ApiAnomalyEvent");
	fx_teardown(&fx);
}

/* --- the real binary: SIGKILL and restart lose nothing ------------------------------------- */

typedef struct {
	SflTestSims sims;
	gchar *ps_ctl;
	SflTestSim *ps_proc;
	gchar *config;
	SflTestDaemon *run;
	guint want;
} RunFx;

static gboolean
run_distinct_at_least(gpointer data)
{
	RunFx *fx = data;

	return sfl_test_sims_loki_stat(&fx->sims, "EventIdentifier", "distinct") >=
	       (json_int_t)fx->want;
}

static void
run_publish(RunFx *fx, guint count)
{
	g_autofree gchar *body =
		g_strdup_printf("{\"topic\": \"" TEST_TOPIC "\", \"count\": %u}", count);
	json_decref(
		sfl_test_sim_control(fx->sims.loop, fx->ps_ctl, "POST", "/control/publish", body));
}

static void
test_daemon_restart(void)
{
	RunFx fx = { 0 };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *head = NULL;
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *state = NULL;
	json_t *info = NULL;
	json_t *summary = NULL;
	const guint total = 6000;
	const gchar *args[] = { "--keepalive-ms", "500", NULL };

	if (!sfl_test_sims_start(&fx.sims, "sfl-pubsub-run-XXXXXX", "{}", NULL)) {
		sfl_test_sims_clear(&fx.sims);
		return;
	}
	fx.ps_ctl = sfl_test_pubsub_sim_start(args, &fx.ps_proc);
	if (fx.ps_ctl == NULL) {
		sfl_test_sims_clear(&fx.sims);
		return;
	}
	info = sfl_test_sim_control(fx.sims.loop, fx.ps_ctl, "GET", "/control/info", NULL);
	head = sfl_test_sims_config(&fx.sims, NULL, NULL);
	state = g_build_filename(fx.sims.dir, "state.json", NULL);
	fx.config = g_build_filename(fx.sims.dir, "config.yaml", NULL);
	yaml = g_strdup_printf("%s"
			       "    batch:\n"
			       "      flush_interval: 100ms\n"
			       "      max_entries: 500\n"
			       "state:\n"
			       "  file:\n"
			       "    path: %s\n"
			       "service:\n"
			       "  shutdown_grace: 20s\n"
			       "sources:\n"
			       "  pubsub:\n"
			       "    endpoint: http://127.0.0.1:%" G_GINT64_FORMAT "\n"
			       "    topics: [\"" TEST_TOPIC "\"]\n"
			       "    replay_preset: EARLIEST\n",
			       head, state,
			       (gint64)json_integer_value(json_object_get(info, "grpc_port")));
	json_decref(info);
	g_assert_true(g_file_set_contents(fx.config, yaml, -1, &error));

	run_publish(&fx, total / 2);
	fx.run = sfl_test_daemon_start(fx.config, NULL);
	fx.want = total / 4;
	sfl_test_poll_until(run_distinct_at_least, &fx, 120, "a quarter of the events in Loki");
	/* a crash mid-stream: nothing drained, nothing committed after this */
	sfl_test_proc_signal(fx.run->proc, SFL_TEST_SIGNAL_KILL);
	sfl_test_daemon_wait_exit(fx.run, 60);
	g_clear_pointer(&fx.run, sfl_test_daemon_free);

	run_publish(&fx, total / 2);
	fx.run = sfl_test_daemon_start(fx.config, NULL);
	fx.want = total;
	sfl_test_poll_until(run_distinct_at_least, &fx, 120, "every event in Loki");
	sfl_test_daemon_finish(fx.run, 60);

	summary = sfl_test_sim_control(fx.sims.loop, fx.sims.loki_base, "GET",
				       "/control/summary?field=EventIdentifier", NULL);
	g_assert_cmpint(json_integer_value(json_object_get(summary, "distinct")), ==, total);
	g_test_message("%" G_GINT64_FORMAT " entries for %u events",
		       (gint64)json_integer_value(json_object_get(summary, "entries")), total);
	json_decref(summary);
	g_clear_pointer(&fx.run, sfl_test_daemon_free);
	sfl_test_sim_stop(&fx.ps_proc);
	g_free(fx.ps_ctl);
	g_free(fx.config);
	sfl_test_sims_clear(&fx.sims);
}

static void
test_discovery_rule(void)
{
	const gchar *names[] = { "Account",
				 "LoginEventStream",
				 "LoginEvent",
				 "ApiAnomalyEvent",
				 "ApiAnomalyEventStore",
				 "CredentialStuffingEvent",
				 "CredentialStuffingEventStore",
				 "FileEvent",
				 "FileEventStore",
				 "MyPlatformEvent",
				 "LightningUriEventStream",
				 NULL };
	g_autoptr(GPtrArray) topics = sfl_pubsub_discover_topics(names);
	const gchar *want[] = { "/event/ApiAnomalyEvent", "/event/CredentialStuffingEvent",
				"/event/FileEvent", "/event/LightningUriEventStream",
				"/event/LoginEventStream" };

	g_assert_cmpuint(topics->len, ==, G_N_ELEMENTS(want));
	for (guint i = 0; i < G_N_ELEMENTS(want); i++)
		g_assert_cmpstr(g_ptr_array_index(topics, i), ==, want[i]);
}

static void
test_endpoint_url(void)
{
	g_autofree gchar *a = sfl_pubsub_endpoint_url("api.pubsub.salesforce.com:7443");
	g_autofree gchar *b = sfl_pubsub_endpoint_url("http://127.0.0.1:5000");

	g_assert_cmpstr(a, ==, "https://api.pubsub.salesforce.com:7443");
	g_assert_cmpstr(b, ==, "http://127.0.0.1:5000");
}

/* the source warns about what these tests provoke (refusals, bad payloads, stalls) */
static GLogWriterOutput
test_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	const gchar *domain = "";
	const gchar *message = "";

	for (gsize i = 0; i < n_fields; i++) {
		if (g_str_equal(fields[i].key, "GLIB_DOMAIN"))
			domain = fields[i].value;
		else if (g_str_equal(fields[i].key, "MESSAGE"))
			message = fields[i].value;
	}
	if (level & (G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO))
		return G_LOG_WRITER_HANDLED;
	g_printerr("# [%s] %s\n", domain, message);
	if (g_str_equal(domain, "SflPubsubSource"))
		g_ptr_array_add(test_logged, g_strdup(message));
	/* only the code under test may complain; anything else is a failure */
	if ((level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL)) &&
	    !g_str_equal(domain, "SflPubsubSource") && !g_str_equal(domain, "SflGrpc"))
		g_error("unexpected %s from %s",
			level & G_LOG_LEVEL_CRITICAL ? "critical" : "warning", domain);
	if (level & G_LOG_LEVEL_ERROR)
		g_abort();
	return G_LOG_WRITER_HANDLED;
}

int
main(int argc, char **argv)
{
	static const FaultCase unavailable = { "unavailable", 1 };
	static const FaultCase rst = { "rst", 1 };
	static const FaultCase end = { "end", 1 };
	static const FaultCase unauthenticated = { "unauthenticated", 2 };
	static const CdcCase cdc_default = { NULL, FALSE, TRUE };
	static const CdcCase cdc_metadata = { "metadata", FALSE, TRUE };
	static const CdcCase cdc_line = { "line", TRUE, FALSE };
	static const CdcCase cdc_off = { "off", FALSE, FALSE };
	gint rc = 0;

	g_test_init(&argc, &argv, NULL);
	test_logged = g_ptr_array_new_with_free_func(g_free);
	g_log_set_writer_func(test_log_writer, NULL, NULL);
	g_test_add_func("/pubsub/discovery-rule", test_discovery_rule);
	g_test_add_func("/pubsub/endpoint-url", test_endpoint_url);
	g_test_add_func("/pubsub/grpc/unary", test_grpc_unary);
	g_test_add_func("/pubsub/grpc/trailers-only", test_grpc_trailers_only);
	g_test_add_func("/pubsub/grpc/refused-at-once", test_grpc_refused_at_once);
	g_test_add_func("/pubsub/grpc/framing", test_grpc_framing);
	g_test_add_func("/pubsub/grpc/tls", test_grpc_tls);
	g_test_add_func("/pubsub/grpc/end-while-upload-paused", test_grpc_end_while_paused);
	g_test_add_func("/pubsub/source/ordered", test_source_ordered);
	g_test_add_func("/pubsub/source/keepalive", test_source_keepalive);
	g_test_add_func("/pubsub/source/two-topics", test_source_two_topics);
	g_test_add_func("/pubsub/source/backpressure", test_source_backpressure);
	g_test_add_func("/pubsub/source/corrupted-replay", test_source_corrupted_replay);
	g_test_add_func("/pubsub/source/corrupted-replay-latest",
			test_source_corrupted_replay_latest);
	g_test_add_func("/pubsub/source/corrupted-replay-from-stream",
			test_source_corrupted_replay_from_stream);
	g_test_add_func("/pubsub/source/refused-replay-kept", test_source_refused_replay_kept);
	g_test_add_func("/pubsub/source/decode-failure", test_source_decode_failure);
	g_test_add_func("/pubsub/source/schema-change", test_source_schema_change);
	g_test_add_data_func("/pubsub/source/cdc/default", &cdc_default, test_source_cdc);
	g_test_add_data_func("/pubsub/source/cdc/metadata", &cdc_metadata, test_source_cdc);
	g_test_add_data_func("/pubsub/source/cdc/line", &cdc_line, test_source_cdc);
	g_test_add_data_func("/pubsub/source/cdc/off", &cdc_off, test_source_cdc);
	g_test_add_func("/pubsub/source/decode-stall", test_source_decode_stall);
	g_test_add_data_func("/pubsub/source/fault/unavailable", &unavailable, test_source_fault);
	g_test_add_data_func("/pubsub/source/fault/rst", &rst, test_source_fault);
	g_test_add_data_func("/pubsub/source/fault/end", &end, test_source_fault);
	g_test_add_data_func("/pubsub/source/fault/unauthenticated", &unauthenticated,
			     test_source_fault);
	g_test_add_func("/pubsub/source/watchdog", test_source_watchdog);
	g_test_add_func("/pubsub/source/discovery", test_source_discovery);
	g_test_add_func("/pubsub/daemon/sigkill-restart", test_daemon_restart);
	rc = g_test_run();
	g_ptr_array_unref(test_logged);
	return rc;
}
