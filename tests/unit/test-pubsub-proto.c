/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestPubsubProto"

#include "config.h"

#include <string.h>

#include "pubsub_api.pb-c.h"
#include "sfl-grpc.h"

/*
 * proto/pubsub_api.proto as compiled by protoc-c against the vectors of
 * docs/internals/wire-notes.md "Protobuf test vectors" (made with protoc --encode), plus the pure
 * helpers of the gRPC client: HTTP status mapping and grpc-message decoding
 * (docs/internals/wire-notes.md, "Status").
 */

static gchar *
hex(const guint8 *data, gsize len)
{
	GString *out = g_string_new(NULL);
	for (gsize i = 0; i < len; i++)
		g_string_append_printf(out, "%02x", data[i]);
	return g_string_free(out, FALSE);
}

static GBytes *
unhex(const gchar *text)
{
	gsize n = strlen(text) / 2;
	guint8 *buf = g_malloc(n);
	for (gsize i = 0; i < n; i++)
		buf[i] = (guint8)((g_ascii_xdigit_value(text[2 * i]) << 4) |
				  g_ascii_xdigit_value(text[2 * i + 1]));
	return g_bytes_new_take(buf, n);
}

static gchar *
pack_hex(const ProtobufCMessage *msg)
{
	gsize len = protobuf_c_message_get_packed_size(msg);
	g_autofree guint8 *buf = g_malloc(MAX(len, 1));
	g_assert_cmpuint(protobuf_c_message_pack(msg, buf), ==, len);
	return hex(buf, len);
}

static const guint8 replay_vec[] = { 0, 0, 0, 0, 0, 0x10, 0xdb, 0x4d };

static void
test_vectors_requests(void)
{
	Eventbus__V1__TopicRequest topic = EVENTBUS__V1__TOPIC_REQUEST__INIT;
	Eventbus__V1__SchemaRequest schema = EVENTBUS__V1__SCHEMA_REQUEST__INIT;
	Eventbus__V1__FetchRequest topup = EVENTBUS__V1__FETCH_REQUEST__INIT;
	Eventbus__V1__FetchRequest first = EVENTBUS__V1__FETCH_REQUEST__INIT;
	g_autofree gchar *h1 = NULL;
	g_autofree gchar *h2 = NULL;
	g_autofree gchar *h3 = NULL;
	g_autofree gchar *h4 = NULL;

	topic.topic_name = (gchar *)"/event/LoginEventStream";
	h1 = pack_hex(&topic.base);
	g_assert_cmpstr(h1, ==, "0a172f6576656e742f4c6f67696e4576656e7453747265616d");

	schema.schema_id = (gchar *)"Cj6--yRyVY72q2Wfo0Fs1w";
	h2 = pack_hex(&schema.base);
	g_assert_cmpstr(h2, ==, "0a16436a362d2d79527956593732713257666f3046733177");

	topup.num_requested = 100;
	h3 = pack_hex(&topup.base);
	g_assert_cmpstr(h3, ==, "2064");

	first.topic_name = (gchar *)"/event/LoginEventStream";
	first.replay_preset = EVENTBUS__V1__REPLAY_PRESET__CUSTOM;
	first.replay_id.data = (guint8 *)replay_vec;
	first.replay_id.len = sizeof(replay_vec);
	first.num_requested = 100;
	h4 = pack_hex(&first.base);
	g_assert_cmpuint(strlen(h4), ==, 39 * 2);
	g_assert_cmpstr(h4, ==,
			"0a172f6576656e742f4c6f67696e4576656e7453747265616d10021a08000000000010"
			"db4d2064");
}

static void
test_vectors_managed(void)
{
	Eventbus__V1__ManagedFetchRequest a = EVENTBUS__V1__MANAGED_FETCH_REQUEST__INIT;
	Eventbus__V1__ManagedFetchRequest b = EVENTBUS__V1__MANAGED_FETCH_REQUEST__INIT;
	Eventbus__V1__CommitReplayRequest commit = EVENTBUS__V1__COMMIT_REPLAY_REQUEST__INIT;
	static const guint8 rid[] = { 1, 2 };
	g_autofree gchar *ha = NULL;
	g_autofree gchar *hb = NULL;

	a.subscription_id = (gchar *)"0XYxx0000000001";
	a.num_requested = 100;
	ha = pack_hex(&a.base);
	g_assert_cmpstr(ha, ==, "0a0f3058597878303030303030303030311864");

	commit.commit_request_id = (gchar *)"c1";
	commit.replay_id.data = (guint8 *)rid;
	commit.replay_id.len = sizeof(rid);
	b.commit_replay_id_request = &commit;
	hb = pack_hex(&b.base);
	g_assert_cmpstr(hb, ==, "2a080a02633112020102");
}

static void
test_vectors_response(void)
{
	g_autoptr(GBytes) wire = unhex("1208000000000010db4d1a036162632064");
	Eventbus__V1__FetchResponse *r = NULL;
	gsize len = 0;
	const guint8 *data = g_bytes_get_data(wire, &len);
	g_autofree gchar *again = NULL;

	r = eventbus__v1__fetch_response__unpack(NULL, len, data);
	g_assert_nonnull(r);
	g_assert_cmpuint(r->n_events, ==, 0);
	g_assert_cmpmem(r->latest_replay_id.data, r->latest_replay_id.len, replay_vec,
			sizeof(replay_vec));
	g_assert_cmpstr(r->rpc_id, ==, "abc");
	g_assert_cmpint(r->pending_num_requested, ==, 100);
	again = pack_hex(&r->base);
	g_assert_cmpstr(again, ==, "1208000000000010db4d1a036162632064");
	eventbus__v1__fetch_response__free_unpacked(r, NULL);
}

/* fields Salesforce may add later are skipped, not fatal */
static void
test_unknown_fields(void)
{
	/* field 9 varint 7, field 10 bytes "xy", then pending_num_requested 5 */
	g_autoptr(GBytes) wire = unhex("4807520278792005");
	gsize len = 0;
	const guint8 *data = g_bytes_get_data(wire, &len);
	Eventbus__V1__FetchResponse *r = eventbus__v1__fetch_response__unpack(NULL, len, data);

	g_assert_nonnull(r);
	g_assert_cmpint(r->pending_num_requested, ==, 5);
	eventbus__v1__fetch_response__free_unpacked(r, NULL);
}

static void
test_http_mapping(void)
{
	g_assert_cmpint(sfl_grpc_code_from_http(400), ==, SFL_GRPC_INTERNAL);
	g_assert_cmpint(sfl_grpc_code_from_http(401), ==, SFL_GRPC_UNAUTHENTICATED);
	g_assert_cmpint(sfl_grpc_code_from_http(403), ==, SFL_GRPC_PERMISSION_DENIED);
	g_assert_cmpint(sfl_grpc_code_from_http(404), ==, SFL_GRPC_UNIMPLEMENTED);
	g_assert_cmpint(sfl_grpc_code_from_http(429), ==, SFL_GRPC_UNAVAILABLE);
	g_assert_cmpint(sfl_grpc_code_from_http(502), ==, SFL_GRPC_UNAVAILABLE);
	g_assert_cmpint(sfl_grpc_code_from_http(503), ==, SFL_GRPC_UNAVAILABLE);
	g_assert_cmpint(sfl_grpc_code_from_http(504), ==, SFL_GRPC_UNAVAILABLE);
	g_assert_cmpint(sfl_grpc_code_from_http(431), ==, SFL_GRPC_INTERNAL);
	g_assert_cmpint(sfl_grpc_code_from_http(200), ==, SFL_GRPC_UNKNOWN);
	g_assert_cmpint(sfl_grpc_code_from_http(500), ==, SFL_GRPC_UNKNOWN);
	g_assert_cmpstr(sfl_grpc_code_name(SFL_GRPC_UNAUTHENTICATED), ==, "UNAUTHENTICATED");
	g_assert_cmpstr(sfl_grpc_code_name((SflGrpcCode)99), ==, "UNKNOWN");
}

static void
test_message_decoding(void)
{
	g_autofree gchar *a = sfl_grpc_decode_message("replay id %25 bad%0Ainvalid");
	g_autofree gchar *b = sfl_grpc_decode_message("caf%C3%A9");
	/* a bad escape passes through */
	g_autofree gchar *c = sfl_grpc_decode_message("50%zz done %");

	g_assert_cmpstr(a, ==, "replay id % bad\ninvalid");
	g_assert_cmpstr(b, ==, "caf\xc3\xa9");
	g_assert_cmpstr(c, ==, "50%zz done %");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/pubsub/proto/vectors-requests", test_vectors_requests);
	g_test_add_func("/pubsub/proto/vectors-managed", test_vectors_managed);
	g_test_add_func("/pubsub/proto/vectors-response", test_vectors_response);
	g_test_add_func("/pubsub/proto/unknown-fields", test_unknown_fields);
	g_test_add_func("/pubsub/grpc/http-mapping", test_http_mapping);
	g_test_add_func("/pubsub/grpc/message-decoding", test_message_decoding);
	return g_test_run();
}
