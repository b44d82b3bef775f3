/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>
#include <jansson.h>

#include "sfl-kube-client.h"

G_BEGIN_DECLS

/*
 * A coordination.k8s.io/v1 Lease as the k8s_lease coordinator sees it
 * (docs/internals/wire-notes.md, "The Lease body"). Every spec field is optional in the API; an
 * unset one reads as NULL / -1.
 */
typedef struct {
	gchar *resource_version; /* opaque, compared for equality only; NULL on a create */
	gchar *holder;		 /* spec.holderIdentity */
	gint64 duration_s;	 /* spec.leaseDurationSeconds */
	gchar *acquire_time;	 /* spec.acquireTime, MicroTime text */
	gchar *renew_time;	 /* spec.renewTime, MicroTime text */
	gint64 transitions;	 /* spec.leaseTransitions: the epoch */
} SflK8sLease;

SflK8sLease *sfl_k8s_lease_new(void);
SflK8sLease *sfl_k8s_lease_copy(const SflK8sLease *lease);
void sfl_k8s_lease_free(SflK8sLease *lease);
SflK8sLease *sfl_k8s_lease_from_json(json_t *object);
json_t *sfl_k8s_lease_to_json(const SflK8sLease *lease, const gchar *namespace_,
			      const gchar *name) G_GNUC_WARN_UNUSED_RESULT;
/* a MicroTime: UTC with exactly six fractional digits, as the API server parses it */
gchar *sfl_k8s_micro_time(gint64 wall_usec) G_GNUC_WARN_UNUSED_RESULT;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflK8sLease, sfl_k8s_lease_free)

/*
 * SflK8sLeaseApi: reads and writes one named Lease.
 *
 * Contract
 *  - get: the Lease, or SFL_ERROR_NOT_FOUND when it does not exist; any other error means
 *    "cannot tell".
 *  - write: a lease without resource_version is a create (POST; SFL_ERROR_CONFLICT when it
 *    exists already), one with it a compare-and-swap replace (PUT; SFL_ERROR_CONFLICT when the
 *    version is stale, SFL_ERROR_NOT_FOUND when the Lease is gone). Success returns the stored
 *    object with its new resource_version. With @dry_run the server validates and authorizes
 *    the write without storing it (doctor).
 *  - Each request is bounded by the timeout given at construction; cancellation completes
 *    with G_IO_ERROR_CANCELLED.
 *
 * The base class talks to the API through an SflKubeClient; tests subclass it with a fake that
 * overrides all four vfuncs and completes on the caller's main context, never from inside
 * the _async call.
 */

#define SFL_TYPE_K8S_LEASE_API (sfl_k8s_lease_api_get_type())
G_DECLARE_DERIVABLE_TYPE(SflK8sLeaseApi, sfl_k8s_lease_api, SFL, K8S_LEASE_API, GObject)

struct _SflK8sLeaseApiClass {
	GObjectClass parent_class;

	void (*get_async)(SflK8sLeaseApi *self, GCancellable *cancellable,
			  GAsyncReadyCallback callback, gpointer user_data);
	SflK8sLease *(*get_finish)(SflK8sLeaseApi *self, GAsyncResult *result, GError **error);
	void (*write_async)(SflK8sLeaseApi *self, const SflK8sLease *lease, gboolean dry_run,
			    GCancellable *cancellable, GAsyncReadyCallback callback,
			    gpointer user_data);
	SflK8sLease *(*write_finish)(SflK8sLeaseApi *self, GAsyncResult *result, GError **error);

	gpointer padding[8];
};

SflK8sLeaseApi *sfl_k8s_lease_api_new(SflKubeClient *client, const gchar *namespace_,
				      const gchar *name, guint timeout_ms);
const gchar *sfl_k8s_lease_api_describe(SflK8sLeaseApi *self);
const gchar *sfl_k8s_lease_api_get_namespace(SflK8sLeaseApi *self);

void sfl_k8s_lease_api_get_async(SflK8sLeaseApi *self, GCancellable *cancellable,
				 GAsyncReadyCallback callback, gpointer user_data);
SflK8sLease *sfl_k8s_lease_api_get_finish(SflK8sLeaseApi *self, GAsyncResult *result,
					  GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_k8s_lease_api_write_async(SflK8sLeaseApi *self, const SflK8sLease *lease, gboolean dry_run,
				   GCancellable *cancellable, GAsyncReadyCallback callback,
				   gpointer user_data);
SflK8sLease *sfl_k8s_lease_api_write_finish(SflK8sLeaseApi *self, GAsyncResult *result,
					    GError **error) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
