/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-config.h"
#include "sfl-k8s-lease-api.h"

G_BEGIN_DECLS

/*
 * What `sf2loki doctor` checks for coordinate.type: k8s_lease (docs/cli.md, the `coordinator` row):
 * the Lease can be read (404 is fine), and a server-side dry-run write (dryRun=All) of what the
 * coordinator would write — a create when the Lease is absent, else a replace of the object
 * just read — is authorized and valid. Nothing is stored.
 *
 * Success: TRUE and a one-line detail. Failure: FALSE and an error whose message says what
 * failed; a 401/403 (SFL_ERROR_AUTH) message ends with the RBAC the service account needs.
 */

SflKubeClient *sfl_kube_client_new_from_config(const SflK8sLeaseConfig *config, SflCurlLoop *loop,
					       GError **error) G_GNUC_WARN_UNUSED_RESULT;
SflK8sLeaseApi *
sfl_k8s_lease_api_new_from_config(const SflK8sLeaseConfig *config, SflCurlLoop *loop,
				  GError **error) G_GNUC_WARN_UNUSED_RESULT;

void sfl_k8s_lease_doctor_probe_async(SflK8sLeaseApi *api, GCancellable *cancellable,
				      GAsyncReadyCallback callback, gpointer user_data);
gboolean sfl_k8s_lease_doctor_probe_finish(SflK8sLeaseApi *api, GAsyncResult *result,
					   gchar **detail, GError **error);

/* the doctor row for k8s_lease + state.store: file; NULL for any other pairing */
const gchar *sfl_k8s_lease_doctor_store_note(const SflConfig *config);

G_END_DECLS
