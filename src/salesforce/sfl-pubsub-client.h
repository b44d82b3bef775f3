/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-curl-loop.h"
#include "sfl-grpc.h"
#include "sfl-sf-auth.h"

G_BEGIN_DECLS

/*
 * SflPubsubClient: the Salesforce Pub/Sub API (eventbus.v1.PubSub) of one org over the gRPC
 * transport (net/sfl-grpc.h; the protocol: docs/internals/wire-notes.md, "Salesforce Pub/Sub
 * API").
 *
 * - One endpoint and one org id. Every call carries the call metadata (accesstoken,
 *   instanceurl, tenantid; docs/internals/wire-notes.md, "Call metadata") built here and
 *   nowhere else, from the token the caller passes: a caller that is refused knows which
 *   token to invalidate. The metadata values are secrets and are never logged.
 * - GetTopic and GetSchema are unary calls: the request is packed and the answer decoded
 *   here. A refused call fails with the SflError code of its gRPC status
 *   (sfl_grpc_status_to_sfl_error()) and Salesforce's `error-code` as the error's peer code
 *   (sfl_error_get_peer_code()); the whole status is offered through @status_out. An answer
 *   that does not decode is SFL_ERROR_TRANSIENT with an OK status.
 * - Subscribe is only opened here (the same metadata); its flow control, keepalives and
 *   reconnects belong to the source (sources/sfl-pubsub-source.c).
 * - No call has a deadline of its own: a caller bounds it with its cancellable.
 *
 * Threading: the loop's thread.
 */

#define SFL_TYPE_PUBSUB_CLIENT (sfl_pubsub_client_get_type())
G_DECLARE_FINAL_TYPE(SflPubsubClient, sfl_pubsub_client, SFL, PUBSUB_CLIENT, GObject)

/* the endpoint as a URL: host:port becomes https://host:port; a URL is kept */
gchar *sfl_pubsub_endpoint_url(const gchar *endpoint) G_GNUC_WARN_UNUSED_RESULT;

SflPubsubClient *sfl_pubsub_client_new(SflCurlLoop *loop, const gchar *endpoint,
				       const gchar *org_id) G_GNUC_WARN_UNUSED_RESULT;
/* "https://host:port", for messages */
const gchar *sfl_pubsub_client_get_base_url(SflPubsubClient *self);

/* a Subscribe call, not started: see sfl_grpc_call_new() for the callbacks */
SflGrpcCall *sfl_pubsub_client_subscribe_new(SflPubsubClient *self, const SflSfToken *token,
					     SflGrpcMessageFunc message, SflGrpcDoneFunc done,
					     gpointer user_data) G_GNUC_WARN_UNUSED_RESULT;

/**
 * SflPubsubTopicInfo:
 * @topic_name: the topic as the server names it
 * @schema_id: the id of its current schema, "" when the answer named none
 * @can_subscribe: the user may subscribe to it
 * @can_publish: the user may publish to it
 */
typedef struct {
	const gchar *topic_name;
	const gchar *schema_id;
	gboolean can_subscribe;
	gboolean can_publish;
} SflPubsubTopicInfo;

/* one allocation holds the record and its strings: g_free() releases it all */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflPubsubTopicInfo, g_free)

/*
 * The unary calls, one pair each: _async() sends the call with @token's metadata, bounded by
 * @cancellable, and calls @callback once; _finish() returns the answer (transfer full), or NULL
 * with @error set, and copies the call's status into @status_out (optional, caller-allocated;
 * clear it after use) either way.
 */
void sfl_pubsub_client_get_topic_async(SflPubsubClient *self, const SflSfToken *token,
				       const gchar *topic, GCancellable *cancellable,
				       GAsyncReadyCallback callback, gpointer user_data);
SflPubsubTopicInfo *sfl_pubsub_client_get_topic_finish(SflPubsubClient *self, GAsyncResult *result,
						       SflGrpcStatus *status_out,
						       GError **error) G_GNUC_WARN_UNUSED_RESULT;

void sfl_pubsub_client_get_schema_async(SflPubsubClient *self, const SflSfToken *token,
					const gchar *schema_id, GCancellable *cancellable,
					GAsyncReadyCallback callback, gpointer user_data);
/* the writer schema's Avro JSON */
gchar *sfl_pubsub_client_get_schema_finish(SflPubsubClient *self, GAsyncResult *result,
					   SflGrpcStatus *status_out,
					   GError **error) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
