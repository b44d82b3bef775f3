/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflK8sLease"

#include "config.h"

#include "sfl-k8s-lease-coordinator.h"

/* the algorithm is the compare-and-swap lease engine's; the Lease API is its backend */

struct _SflK8sLeaseCoordinator {
	SflCasLeaseCoordinator parent_instance;
};

G_DEFINE_TYPE(SflK8sLeaseCoordinator, sfl_k8s_lease_coordinator, SFL_TYPE_CAS_LEASE_COORDINATOR)

static void
sfl_k8s_lease_coordinator_class_init(SflK8sLeaseCoordinatorClass *klass)
{
}

static void
sfl_k8s_lease_coordinator_init(SflK8sLeaseCoordinator *self)
{
}

/**
 * sfl_k8s_lease_coordinator_new:
 * @api: the Lease to contest
 * @duration_usec: coordinate.k8s_lease.lease_duration
 * @renew_usec: coordinate.k8s_lease.renew_interval (config validation keeps 2 × renew <
 *   duration); also the retry period of a standby
 * @holder: this replica's identity, already resolved
 * @clock: the clocks and timers to run on
 *
 * Returns: (transfer full): a coordinator
 */
SflCoordinator *
sfl_k8s_lease_coordinator_new(SflK8sLeaseApi *api, gint64 duration_usec, gint64 renew_usec,
			      const gchar *holder, SflClock *clock)
{
	g_return_val_if_fail(SFL_IS_K8S_LEASE_API(api), NULL);
	return sfl_cas_lease_coordinator_new_full(SFL_TYPE_K8S_LEASE_COORDINATOR, G_LOG_DOMAIN,
						  SFL_CAS_LEASE_BACKEND(api), duration_usec,
						  renew_usec, holder, clock);
}
