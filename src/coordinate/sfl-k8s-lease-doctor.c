/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflK8sLease"

#include "config.h"

#include "sfl-k8s-lease-doctor.h"

#include "sfl-error.h"

/**
 * sfl_kube_client_new_from_config:
 * @config: coordinate.k8s_lease
 * @loop: (nullable): the curl loop to share; %NULL: the client makes its own on first use
 * @error: return location for an error
 *
 * The client comes from coordinate.k8s_lease.kubeconfig when set, else from the pod's service
 * account.
 *
 * Returns: (transfer full): the client, or %NULL with SFL_ERROR_INVALID_CONFIG
 */
SflKubeClient *
sfl_kube_client_new_from_config(const SflK8sLeaseConfig *config, SflCurlLoop *loop, GError **error)
{
	SflKubeClient *client = NULL;

	g_return_val_if_fail(config != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (config->kubeconfig != NULL && config->kubeconfig[0] != '\0')
		client = sfl_kube_client_new_from_kubeconfig(config->kubeconfig, error);
	else
		client = sfl_kube_client_new_in_cluster(NULL, NULL, error);
	if (client != NULL && loop != NULL)
		sfl_kube_client_set_curl_loop(client, loop);
	return client;
}

/**
 * sfl_k8s_lease_api_new_from_config:
 * @config: coordinate.k8s_lease
 * @loop: (nullable): the curl loop to share; %NULL: the client makes its own on first use
 * @error: return location for an error
 *
 * The API of the Lease coordinate.k8s_lease.name (see sfl_kube_client_new_from_config()); each
 * request is bounded by renew_interval.
 *
 * Returns: (transfer full): the Lease API, or %NULL with SFL_ERROR_INVALID_CONFIG
 */
SflK8sLeaseApi *
sfl_k8s_lease_api_new_from_config(const SflK8sLeaseConfig *config, SflCurlLoop *loop,
				  GError **error)
{
	g_autoptr(SflKubeClient) client = sfl_kube_client_new_from_config(config, loop, error);

	if (client == NULL)
		return NULL;
	return sfl_k8s_lease_api_new(client, config->namespace_, config->name,
				     (guint)(config->renew_interval / 1000));
}

/* a 401/403 gets the fix appended: the RBAC the coordinator needs */
static GError *
sfl_k8s_lease_doctor_error(SflK8sLeaseApi *api, const gchar *what, const GError *error)
{
	if (g_error_matches(error, SFL_ERROR, SFL_ERROR_AUTH)) {
		return g_error_new(
			SFL_ERROR, SFL_ERROR_AUTH,
			"%s the %s: %s (grant the pod's service account get, create and "
			"update on leases in API group coordination.k8s.io, namespace %s: "
			"a Role and RoleBinding, as the Helm chart renders with "
			"ha.enabled)",
			what, sfl_k8s_lease_api_describe(api), error->message,
			sfl_k8s_lease_api_get_namespace(api));
	}
	return g_error_new(error->domain, error->code, "%s the %s: %s", what,
			   sfl_k8s_lease_api_describe(api), error->message);
}

static void
sfl_k8s_lease_doctor_write_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflK8sLeaseApi *api = SFL_K8S_LEASE_API(source);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflK8sLease) stored = sfl_k8s_lease_api_write_finish(api, result, &error);
	gboolean create = GPOINTER_TO_INT(g_task_get_task_data(task));

	if (stored == NULL) {
		g_task_return_error(task,
				    sfl_k8s_lease_doctor_error(api,
							       create ? "cannot create (dry run)"
								      : "cannot update (dry run)",
							       error));
		return;
	}
	g_task_return_pointer(task,
			      g_strdup_printf("the %s is readable and a dry-run %s was accepted",
					      sfl_k8s_lease_api_describe(api),
					      create ? "create" : "update"),
			      g_free);
}

static void
sfl_k8s_lease_doctor_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflK8sLeaseApi *api = SFL_K8S_LEASE_API(source);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflK8sLease) lease = sfl_k8s_lease_api_get_finish(api, result, &error);
	GCancellable *cancellable = g_task_get_cancellable(task);

	if (lease == NULL && !g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND)) {
		g_task_return_error(task, sfl_k8s_lease_doctor_error(api, "cannot read", error));
		return;
	}
	if (lease == NULL) {
		lease = sfl_k8s_lease_new();
		lease->holder = g_strdup("");
		lease->duration_s = 1;
	}
	g_task_set_task_data(task, GINT_TO_POINTER(lease->resource_version == NULL), NULL);
	/* exactly what a takeover would send, so validation and RBAC see the real request */
	sfl_k8s_lease_api_write_async(api, lease, TRUE, cancellable, sfl_k8s_lease_doctor_write_cb,
				      g_steal_pointer(&task));
}

/**
 * sfl_k8s_lease_doctor_probe_async:
 * @api: the Lease API (see sfl_k8s_lease_api_new_from_config())
 * @cancellable: (nullable): aborts the probe
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_k8s_lease_doctor_probe_async(SflK8sLeaseApi *api, GCancellable *cancellable,
				 GAsyncReadyCallback callback, gpointer user_data)
{
	GTask *task = NULL;

	g_return_if_fail(SFL_IS_K8S_LEASE_API(api));

	task = g_task_new(api, cancellable, callback, user_data);
	g_task_set_source_tag(task, sfl_k8s_lease_doctor_probe_async);
	sfl_k8s_lease_api_get_async(api, cancellable, sfl_k8s_lease_doctor_read_cb, task);
}

/**
 * sfl_k8s_lease_doctor_probe_finish:
 * @api: the Lease API
 * @result: the result
 * @detail: (out) (transfer full) (optional): the PASS detail
 * @error: return location for the FAIL reason
 *
 * Returns: %TRUE when the probe passed
 */
gboolean
sfl_k8s_lease_doctor_probe_finish(SflK8sLeaseApi *api, GAsyncResult *result, gchar **detail,
				  GError **error)
{
	g_autofree gchar *text = NULL;

	g_return_val_if_fail(g_task_is_valid(result, api), FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	text = g_task_propagate_pointer(G_TASK(result), error);
	if (text == NULL)
		return FALSE;
	if (detail != NULL)
		*detail = g_steal_pointer(&text);
	return TRUE;
}

/**
 * sfl_k8s_lease_doctor_store_note:
 * @config: the configuration
 *
 * Returns: (nullable): the WARN row text for k8s_lease with a file store, else %NULL
 */
const gchar *
sfl_k8s_lease_doctor_store_note(const SflConfig *config)
{
	g_return_val_if_fail(config != NULL, NULL);
	if (config->data.coordinate.type != SFL_COORDINATE_K8S_LEASE ||
	    config->data.state.store != SFL_STATE_STORE_FILE)
		return NULL;
	return "coordinate.type is k8s_lease with state.store: file: every replica must mount the "
	       "same state file (a shared ReadWriteMany volume); the epoch fence keeps a stale "
	       "leader from rewinding it. With a per-pod volume each replica keeps its own "
	       "checkpoints: use state.store s3 or gcs";
}
