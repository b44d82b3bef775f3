/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestPubsubClient"

#include "config.h"

#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-pubsub-client.h"
#include "sfl-test-sim.h"

/*
 * The Pub/Sub client against tests/sim/pubsub_sim.py (python3-grpcio): GetTopic and GetSchema
 * answered, and refused with the structured error a caller decides on (the SflError code, the
 * Salesforce error-code as the peer code, the gRPC status). Every wait has a deadline.
 */

#define TEST_DEADLINE_SEC 60
#define TEST_ORG	  "00Dxx0000001gPFEAY"
#define TEST_TOPIC	  "/event/LoginEventStream"
#define TEST_DENIED	  "/event/ApiEventStream"
#define TEST_UNKNOWN	  "/event/NoSuchEventStream"
#define ERR_TOPIC	  "sfdc.platform.eventbus.grpc.subscription.topic.notfound"
#define ERR_AUTH	  "sfdc.platform.eventbus.grpc.service.auth.error"

/* the simulator checks that the metadata is there, not what the token is */
static const SflSfToken test_token = {
	.access_token = (gchar *)"test-token",
	.instance_url = (gchar *)"https://example.my.salesforce.com",
};

typedef struct {
	SflCurlLoop *loop;
	gchar *ctl;
	SflTestSim *proc;
	gchar *endpoint;
} Fx;

static void
fx_post(Fx *fx, const gchar *path, const gchar *body)
{
	json_t *answer = sfl_test_sim_control(fx->loop, fx->ctl, "POST", path, body);
	json_decref(answer);
}

static void
fx_setup(Fx *fx, gconstpointer data)
{
	json_t *info = NULL;

	fx->loop = sfl_curl_loop_new();
	fx->ctl = sfl_test_pubsub_sim_start(NULL, &fx->proc);
	if (fx->ctl == NULL)
		return;
	info = sfl_test_sim_control(fx->loop, fx->ctl, "GET", "/control/info", NULL);
	fx->endpoint =
		g_strdup_printf("http://127.0.0.1:%" G_GINT64_FORMAT,
				(gint64)json_integer_value(json_object_get(info, "grpc_port")));
	json_decref(info);
	fx_post(fx, "/control/topic", "{\"topic\": \"" TEST_TOPIC "\"}");
	fx_post(fx, "/control/topic", "{\"topic\": \"" TEST_DENIED "\", \"can_subscribe\": false}");
}

static void
fx_teardown(Fx *fx, gconstpointer data)
{
	sfl_test_sim_stop(&fx->proc);
	g_free(fx->ctl);
	g_free(fx->endpoint);
	g_clear_object(&fx->loop);
}

/* one GetTopic, waited for */
static SflPubsubTopicInfo *
get_topic(SflPubsubClient *client, const gchar *topic, GCancellable *cancellable,
	  SflGrpcStatus *status, GError **error)
{
	SflTestWaiter w = { 0 };
	SflPubsubTopicInfo *info = NULL;

	sfl_pubsub_client_get_topic_async(client, &test_token, topic, cancellable,
					  sfl_test_waiter_cb, &w);
	sfl_test_wait_for(&w.done, TEST_DEADLINE_SEC);
	info = sfl_pubsub_client_get_topic_finish(client, w.result, status, error);
	g_clear_object(&w.result);
	return info;
}

static gchar *
get_schema(SflPubsubClient *client, const gchar *schema_id, SflGrpcStatus *status, GError **error)
{
	SflTestWaiter w = { 0 };
	gchar *json = NULL;

	sfl_pubsub_client_get_schema_async(client, &test_token, schema_id, NULL, sfl_test_waiter_cb,
					   &w);
	sfl_test_wait_for(&w.done, TEST_DEADLINE_SEC);
	json = sfl_pubsub_client_get_schema_finish(client, w.result, status, error);
	g_clear_object(&w.result);
	return json;
}

static void
test_get_topic(Fx *fx, gconstpointer data)
{
	g_autoptr(SflPubsubClient) client = NULL;
	g_autoptr(SflPubsubTopicInfo) info = NULL;
	g_autoptr(SflPubsubTopicInfo) denied = NULL;
	g_autoptr(GError) error = NULL;
	SflGrpcStatus status = { 0 };

	if (fx->ctl == NULL)
		return;
	client = sfl_pubsub_client_new(fx->loop, fx->endpoint, TEST_ORG);
	info = get_topic(client, TEST_TOPIC, NULL, &status, &error);
	g_assert_no_error(error);
	g_assert_nonnull(info);
	g_assert_cmpint(status.code, ==, SFL_GRPC_OK);
	g_assert_cmpstr(info->topic_name, ==, TEST_TOPIC);
	g_assert_cmpstr(info->schema_id, !=, "");
	g_assert_true(info->can_subscribe);
	sfl_grpc_status_clear(&status);

	/* a topic the user may not read is an answer, not an error */
	denied = get_topic(client, TEST_DENIED, NULL, &status, &error);
	g_assert_no_error(error);
	g_assert_nonnull(denied);
	g_assert_false(denied->can_subscribe);
	sfl_grpc_status_clear(&status);
}

static void
test_unknown_topic(Fx *fx, gconstpointer data)
{
	g_autoptr(SflPubsubClient) client = NULL;
	g_autoptr(SflPubsubTopicInfo) info = NULL;
	g_autoptr(GError) error = NULL;
	SflGrpcStatus status = { 0 };

	if (fx->ctl == NULL)
		return;
	client = sfl_pubsub_client_new(fx->loop, fx->endpoint, TEST_ORG);
	info = get_topic(client, TEST_UNKNOWN, NULL, &status, &error);
	g_assert_null(info);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_NOT_FOUND);
	g_assert_cmpstr(sfl_error_get_peer_code(error), ==, ERR_TOPIC);
	g_assert_cmpint(status.code, ==, SFL_GRPC_NOT_FOUND);
	g_assert_true(status.has_trailers);
	g_assert_false(status.transport);
	g_assert_cmpstr(status.error_code, ==, ERR_TOPIC);
	sfl_grpc_status_clear(&status);
}

/* without a tenantid the API refuses the session: the caller learns it is about auth */
static void
test_unauthenticated(Fx *fx, gconstpointer data)
{
	g_autoptr(SflPubsubClient) client = NULL;
	g_autoptr(SflPubsubTopicInfo) info = NULL;
	g_autoptr(GError) error = NULL;
	SflGrpcStatus status = { 0 };

	if (fx->ctl == NULL)
		return;
	client = sfl_pubsub_client_new(fx->loop, fx->endpoint, "");
	info = get_topic(client, TEST_TOPIC, NULL, &status, &error);
	g_assert_null(info);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_cmpstr(sfl_error_get_peer_code(error), ==, ERR_AUTH);
	g_assert_cmpint(status.code, ==, SFL_GRPC_UNAUTHENTICATED);
	sfl_grpc_status_clear(&status);
}

static void
test_get_schema(Fx *fx, gconstpointer data)
{
	g_autoptr(SflPubsubClient) client = NULL;
	g_autoptr(SflPubsubTopicInfo) info = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *json = NULL;
	g_autofree gchar *missing = NULL;
	g_autoptr(json_t) got = NULL;
	g_autoptr(json_t) schemas = NULL;
	g_autoptr(json_t) want = NULL;
	SflGrpcStatus status = { 0 };

	if (fx->ctl == NULL)
		return;
	client = sfl_pubsub_client_new(fx->loop, fx->endpoint, TEST_ORG);
	info = get_topic(client, TEST_TOPIC, NULL, NULL, &error);
	g_assert_no_error(error);
	json = get_schema(client, info->schema_id, &status, &error);
	g_assert_no_error(error);
	g_assert_cmpint(status.code, ==, SFL_GRPC_OK);
	sfl_grpc_status_clear(&status);
	/* the writer schema as the simulator keeps it, compared as JSON */
	schemas = sfl_test_sim_control(fx->loop, fx->ctl, "GET", "/control/schemas", NULL);
	want = json_loads(json_string_value(json_object_get(schemas, info->schema_id)), 0, NULL);
	got = json_loads(json, 0, NULL);
	g_assert_nonnull(want);
	g_assert_nonnull(got);
	g_assert_true(json_equal(got, want));

	missing = get_schema(client, "no-such-schema", &status, &error);
	g_assert_null(missing);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_NOT_FOUND);
	/* the simulator sends no error-code here: none is made up */
	g_assert_null(sfl_error_get_peer_code(error));
	g_assert_cmpint(status.code, ==, SFL_GRPC_NOT_FOUND);
	sfl_grpc_status_clear(&status);
}

/* nothing listens: a transport failure, UNAVAILABLE, which callers retry */
static void
test_unreachable(void)
{
	g_autoptr(SflCurlLoop) loop = sfl_curl_loop_new();
	g_autoptr(SflPubsubClient) client =
		sfl_pubsub_client_new(loop, "http://127.0.0.1:9", TEST_ORG);
	g_autoptr(SflPubsubTopicInfo) info = NULL;
	g_autoptr(GError) error = NULL;
	SflGrpcStatus status = { 0 };

	g_assert_cmpstr(sfl_pubsub_client_get_base_url(client), ==, "http://127.0.0.1:9");
	info = get_topic(client, TEST_TOPIC, NULL, &status, &error);
	g_assert_null(info);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_cmpint(status.code, ==, SFL_GRPC_UNAVAILABLE);
	g_assert_true(status.transport);
	sfl_grpc_status_clear(&status);
}

static void
test_cancelled(void)
{
	g_autoptr(SflCurlLoop) loop = sfl_curl_loop_new();
	g_autoptr(SflPubsubClient) client = sfl_pubsub_client_new(loop, "127.0.0.1:9", TEST_ORG);
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	g_autoptr(SflPubsubTopicInfo) info = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_cmpstr(sfl_pubsub_client_get_base_url(client), ==, "https://127.0.0.1:9");
	g_cancellable_cancel(cancellable);
	info = get_topic(client, TEST_TOPIC, cancellable, NULL, &error);
	g_assert_null(info);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/pubsub-client/get-topic", Fx, NULL, fx_setup, test_get_topic, fx_teardown);
	g_test_add("/pubsub-client/unknown-topic", Fx, NULL, fx_setup, test_unknown_topic,
		   fx_teardown);
	g_test_add("/pubsub-client/unauthenticated", Fx, NULL, fx_setup, test_unauthenticated,
		   fx_teardown);
	g_test_add("/pubsub-client/get-schema", Fx, NULL, fx_setup, test_get_schema, fx_teardown);
	g_test_add_func("/pubsub-client/unreachable", test_unreachable);
	g_test_add_func("/pubsub-client/cancelled", test_cancelled);
	return g_test_run();
}
