/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflPubsubClient"

#include "config.h"

#include "sfl-pubsub-client.h"

#include <string.h>

#include "pubsub_api.pb-c.h"
#include "sfl-error.h"

#define SFL_PUBSUB_PATH_SUBSCRIBE  "/eventbus.v1.PubSub/Subscribe"
#define SFL_PUBSUB_PATH_GET_SCHEMA "/eventbus.v1.PubSub/GetSchema"
#define SFL_PUBSUB_PATH_GET_TOPIC  "/eventbus.v1.PubSub/GetTopic"

struct _SflPubsubClient {
	GObject parent_instance;
	SflCurlLoop *loop;
	gchar *base_url;
	gchar *org_id;
};

G_DEFINE_FINAL_TYPE(SflPubsubClient, sfl_pubsub_client, G_TYPE_OBJECT)

gchar *
sfl_pubsub_endpoint_url(const gchar *endpoint)
{
	g_return_val_if_fail(endpoint != NULL, NULL);

	if (g_str_has_prefix(endpoint, "https://") || g_str_has_prefix(endpoint, "http://"))
		return g_strdup(endpoint);
	return g_strconcat("https://", endpoint, NULL);
}

/* the one place the call metadata is built (docs/internals/wire-notes.md, "Call metadata") */
static GStrv
sfl_pubsub_client_metadata(SflPubsubClient *self, const SflSfToken *token)
{
	GStrv md = g_new0(gchar *, 4);

	md[0] = g_strdup_printf("accesstoken: %s", token->access_token);
	md[1] = g_strdup_printf("instanceurl: %s", token->instance_url);
	md[2] = g_strdup_printf("tenantid: %s", self->org_id);
	return md;
}

static void
sfl_pubsub_status_free(gpointer data)
{
	SflGrpcStatus *status = data;

	sfl_grpc_status_clear(status);
	g_free(status);
}

static void
sfl_pubsub_status_copy(const SflGrpcStatus *from, SflGrpcStatus *to)
{
	*to = *from;
	to->message = g_strdup(from->message);
	to->error_code = g_strdup(from->error_code);
}

/* one unary call with @request as its body; the task's data becomes the call's status */
static void
sfl_pubsub_client_unary(SflPubsubClient *self, const SflSfToken *token, const gchar *path,
			const ProtobufCMessage *request, gpointer source_tag,
			GAsyncReadyCallback done, GCancellable *cancellable,
			GAsyncReadyCallback callback, gpointer user_data)
{
	g_auto(GStrv) metadata = sfl_pubsub_client_metadata(self, token);
	gsize len = protobuf_c_message_get_packed_size(request);
	guint8 *buf = g_malloc(MAX(len, 1));
	g_autoptr(GBytes) body = NULL;
	GTask *task = g_task_new(self, cancellable, callback, user_data);

	protobuf_c_message_pack(request, buf);
	body = g_bytes_new_take(buf, len);
	g_task_set_source_tag(task, source_tag);
	g_task_set_task_data(task, g_new0(SflGrpcStatus, 1), sfl_pubsub_status_free);
	sfl_grpc_unary_async(self->loop, self->base_url, path, (const gchar *const *)metadata, body,
			     cancellable, done, task);
}

/* the answer of a unary call, and a copy of its status into @status_out (optional) */
static gpointer
sfl_pubsub_client_unary_finish(SflPubsubClient *self, GAsyncResult *result,
			       SflGrpcStatus *status_out, GError **error)
{
	const SflGrpcStatus *status = NULL;

	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);
	status = g_task_get_task_data(G_TASK(result));
	if (status_out != NULL) {
		memset(status_out, 0, sizeof(*status_out));
		if (status != NULL)
			sfl_pubsub_status_copy(status, status_out);
	}
	return g_task_propagate_pointer(G_TASK(result), error);
}

/* the answer decoded as @descriptor's message, or NULL with the task returned: a refusal keeps
 * its peer code; an answer that does not parse leaves the status OK, since the server answered
 * and the answer is what is wrong */
static ProtobufCMessage *
sfl_pubsub_client_unary_answer(GTask *task, GAsyncResult *result,
			       const ProtobufCMessageDescriptor *descriptor, const gchar *call)
{
	SflGrpcStatus *status = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) answer = sfl_grpc_unary_finish(result, status, &error);
	ProtobufCMessage *msg = NULL;
	const guint8 *data = NULL;
	gsize len = 0;

	if (answer == NULL) {
		sfl_error_set_peer_code(error, status->error_code);
		g_task_return_error(task, g_steal_pointer(&error));
		return NULL;
	}
	data = g_bytes_get_data(answer, &len);
	msg = protobuf_c_message_unpack(descriptor, NULL, len, data);
	if (msg == NULL)
		g_task_return_new_error(
			task, SFL_ERROR, SFL_ERROR_TRANSIENT,
			"%s answered with a message that is not a %s (%" G_GSIZE_FORMAT " bytes)",
			call, descriptor->short_name, len);
	return msg;
}

static void
sfl_pubsub_client_topic_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	Eventbus__V1__TopicInfo *msg = (Eventbus__V1__TopicInfo *)sfl_pubsub_client_unary_answer(
		task, result, &eventbus__v1__topic_info__descriptor, "GetTopic");
	const gchar *name = NULL;
	const gchar *schema = NULL;
	gsize name_size = 0;
	gsize schema_size = 0;
	SflPubsubTopicInfo *info = NULL;
	gchar *strings = NULL;

	if (msg == NULL)
		return;
	name = msg->topic_name != NULL ? msg->topic_name : "";
	schema = msg->schema_id != NULL ? msg->schema_id : "";
	name_size = strlen(name) + 1;
	schema_size = strlen(schema) + 1;
	info = g_malloc0(sizeof(*info) + name_size + schema_size);
	strings = (gchar *)(info + 1);
	info->topic_name = memcpy(strings, name, name_size);
	info->schema_id = memcpy(strings + name_size, schema, schema_size);
	info->can_subscribe = msg->can_subscribe;
	info->can_publish = msg->can_publish;
	eventbus__v1__topic_info__free_unpacked(msg, NULL);
	g_task_return_pointer(task, info, g_free);
}

/* GetTopic on @topic (e.g. /event/LoginEventStream): whether it exists and what the token's
 * user may do with it; the unary pair's contract is in the header */
void
sfl_pubsub_client_get_topic_async(SflPubsubClient *self, const SflSfToken *token,
				  const gchar *topic, GCancellable *cancellable,
				  GAsyncReadyCallback callback, gpointer user_data)
{
	Eventbus__V1__TopicRequest req = EVENTBUS__V1__TOPIC_REQUEST__INIT;

	g_return_if_fail(SFL_IS_PUBSUB_CLIENT(self));
	g_return_if_fail(token != NULL && topic != NULL);
	req.topic_name = (gchar *)topic;
	sfl_pubsub_client_unary(self, token, SFL_PUBSUB_PATH_GET_TOPIC, &req.base,
				sfl_pubsub_client_get_topic_async, sfl_pubsub_client_topic_cb,
				cancellable, callback, user_data);
}

/* the topic's description; see the header */
SflPubsubTopicInfo *
sfl_pubsub_client_get_topic_finish(SflPubsubClient *self, GAsyncResult *result,
				   SflGrpcStatus *status_out, GError **error)
{
	return sfl_pubsub_client_unary_finish(self, result, status_out, error);
}

static void
sfl_pubsub_client_schema_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	Eventbus__V1__SchemaInfo *msg = (Eventbus__V1__SchemaInfo *)sfl_pubsub_client_unary_answer(
		task, result, &eventbus__v1__schema_info__descriptor, "GetSchema");

	if (msg == NULL)
		return;
	g_task_return_pointer(task, g_strdup(msg->schema_json != NULL ? msg->schema_json : ""),
			      g_free);
	eventbus__v1__schema_info__free_unpacked(msg, NULL);
}

/* GetSchema: the Avro writer schema of @schema_id (from an event or GetTopic) */
void
sfl_pubsub_client_get_schema_async(SflPubsubClient *self, const SflSfToken *token,
				   const gchar *schema_id, GCancellable *cancellable,
				   GAsyncReadyCallback callback, gpointer user_data)
{
	Eventbus__V1__SchemaRequest req = EVENTBUS__V1__SCHEMA_REQUEST__INIT;

	g_return_if_fail(SFL_IS_PUBSUB_CLIENT(self));
	g_return_if_fail(token != NULL && schema_id != NULL);
	req.schema_id = (gchar *)schema_id;
	sfl_pubsub_client_unary(self, token, SFL_PUBSUB_PATH_GET_SCHEMA, &req.base,
				sfl_pubsub_client_get_schema_async, sfl_pubsub_client_schema_cb,
				cancellable, callback, user_data);
}

/* the schema's JSON; see the header */
gchar *
sfl_pubsub_client_get_schema_finish(SflPubsubClient *self, GAsyncResult *result,
				    SflGrpcStatus *status_out, GError **error)
{
	return sfl_pubsub_client_unary_finish(self, result, status_out, error);
}

/**
 * sfl_pubsub_client_subscribe_new:
 * @self: a client
 * @token: the token whose metadata the stream carries
 * @message: called with each FetchResponse's bytes
 * @done: called once with the call's status
 * @user_data: for both
 *
 * Returns: (transfer full): the Subscribe call, for the caller to feed and start
 */
SflGrpcCall *
sfl_pubsub_client_subscribe_new(SflPubsubClient *self, const SflSfToken *token,
				SflGrpcMessageFunc message, SflGrpcDoneFunc done,
				gpointer user_data)
{
	g_auto(GStrv) metadata = NULL;

	g_return_val_if_fail(SFL_IS_PUBSUB_CLIENT(self), NULL);
	g_return_val_if_fail(token != NULL, NULL);

	metadata = sfl_pubsub_client_metadata(self, token);
	return sfl_grpc_call_new(self->loop, self->base_url, SFL_PUBSUB_PATH_SUBSCRIBE,
				 (const gchar *const *)metadata, message, done, user_data);
}

const gchar *
sfl_pubsub_client_get_base_url(SflPubsubClient *self)
{
	g_return_val_if_fail(SFL_IS_PUBSUB_CLIENT(self), NULL);
	return self->base_url;
}

static void
sfl_pubsub_client_finalize(GObject *object)
{
	SflPubsubClient *self = SFL_PUBSUB_CLIENT(object);

	g_clear_object(&self->loop);
	g_free(self->base_url);
	g_free(self->org_id);
	G_OBJECT_CLASS(sfl_pubsub_client_parent_class)->finalize(object);
}

static void
sfl_pubsub_client_class_init(SflPubsubClientClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_pubsub_client_finalize;
}

static void
sfl_pubsub_client_init(SflPubsubClient *self)
{
}

/**
 * sfl_pubsub_client_new:
 * @loop: the curl loop the calls run on
 * @endpoint: sources.pubsub.endpoint (host:port or a URL)
 * @org_id: the org id, sent as tenantid
 *
 * Returns: (transfer full): the client
 */
SflPubsubClient *
sfl_pubsub_client_new(SflCurlLoop *loop, const gchar *endpoint, const gchar *org_id)
{
	SflPubsubClient *self = NULL;

	g_return_val_if_fail(loop != NULL && endpoint != NULL && org_id != NULL, NULL);

	self = g_object_new(SFL_TYPE_PUBSUB_CLIENT, NULL);
	self->loop = g_object_ref(loop);
	self->base_url = sfl_pubsub_endpoint_url(endpoint);
	self->org_id = g_strdup(org_id);
	return self;
}
