/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>
#include <jansson.h>

#include "sfl-curl-loop.h"

G_BEGIN_DECLS

/*
 * SflKubeClient: JSON requests to one Kubernetes API server (docs/internals/wire-notes.md,
 * "Reaching the API server").
 *
 *  - In-cluster: KUBERNETES_SERVICE_HOST/PORT, the service account's CA file and token file.
 *    The token is a projected token the kubelet rotates, so the file is read again for every
 *    request (it is a few hundred bytes on a local tmpfs) and a rotation takes effect at once.
 *  - kubeconfig: the current context's cluster (server, CA file or data) and user (token or
 *    token file, client certificate and key as files or data). Credential plugins (exec,
 *    auth-provider), basic auth and insecure-skip-tls-verify are refused with a clear error:
 *    TLS verification is never turned off.
 *
 * Responses: a 2xx answer is the decoded JSON object; any other status is an error whose code
 * says what to do (404 NOT_FOUND, 409 CONFLICT, 401/403 AUTH, 422 REJECTED, 429 THROTTLED,
 * anything else TRANSIENT) and whose message names the method, path, status and the API's
 * Status message. Transport failures are TRANSIENT. Tokens never appear in errors or logs.
 *
 * Threading: main thread only; requests run on an SflCurlLoop of the thread-default context.
 */

#define SFL_TYPE_KUBE_CLIENT (sfl_kube_client_get_type())
G_DECLARE_FINAL_TYPE(SflKubeClient, sfl_kube_client, SFL, KUBE_CLIENT, GObject)

/* where a pod finds its service account */
#define SFL_KUBE_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

SflKubeClient *sfl_kube_client_new_in_cluster(const gchar *const *envp, const gchar *sa_dir,
					      GError **error) G_GNUC_WARN_UNUSED_RESULT;
SflKubeClient *
sfl_kube_client_new_from_kubeconfig(const gchar *path, GError **error) G_GNUC_WARN_UNUSED_RESULT;

const gchar *sfl_kube_client_get_server(SflKubeClient *self);
/* the context's (or the pod's) namespace; NULL when none is known */
const gchar *sfl_kube_client_get_namespace(SflKubeClient *self);
void sfl_kube_client_set_curl_loop(SflKubeClient *self, SflCurlLoop *loop);

void sfl_kube_client_request_async(SflKubeClient *self, const gchar *method, const gchar *path,
				   json_t *body, guint timeout_ms, GCancellable *cancellable,
				   GAsyncReadyCallback callback, gpointer user_data);
json_t *sfl_kube_client_request_finish(SflKubeClient *self, GAsyncResult *result, guint *status,
				       GError **error) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
