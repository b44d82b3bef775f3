/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-cas-lease-coordinator.h"
#include "sfl-k8s-lease-api.h"

G_BEGIN_DECLS

/*
 * coordinate.type: k8s_lease — leadership through a coordination.k8s.io/v1 Lease
 * (docs/deployment/high-availability.md "The Kubernetes Lease", fenced by
 * leaseTransitions: SFL-0014): the compare-and-swap lease
 * engine (sfl-cas-lease-coordinator.h) with the Lease API as its backend.
 *
 *  - Staleness is judged on this replica's monotonic clock since the Lease's resourceVersion
 *    last changed (never the writer's renewTime). A Lease is claimable when its holder, renewTime
 *    or leaseDurationSeconds is unset, or it has not changed for leaseDurationSeconds.
 *  - Standby: 404 → create; claimable → replace with the observed resourceVersion; 409 is a lost
 *    race. A read that fails otherwise cannot tell: back off, never create or replace.
 *  - Epoch = spec.leaseTransitions: a winning write carries max(lease, store floor, own) + 1
 *    (so a create writes 1 unless the store remembers more); renewals keep it; acquireTime is
 *    set on takeover and kept on renewal.
 *  - Leader: every renew_interval, GET then PUT with the freshest resourceVersion. Another
 *    holder, a higher leaseTransitions, a 409 or a 404 surrender at once. Other failures are
 *    tolerated until lease_duration has passed since the last successful renewal (writes) or
 *    the last confirming read or write (reads: the same incumbency cap as file_lease); a
 *    process that wakes up a lease_duration after its last renewal surrenders without writing.
 *  - check_fence() turns FALSE a lease_duration after the last successful renewal.
 *  - Stop while leading releases the Lease (holder cleared, epoch kept) when it is provably ours.
 */

#define SFL_TYPE_K8S_LEASE_COORDINATOR (sfl_k8s_lease_coordinator_get_type())
G_DECLARE_FINAL_TYPE(SflK8sLeaseCoordinator, sfl_k8s_lease_coordinator, SFL, K8S_LEASE_COORDINATOR,
		     SflCasLeaseCoordinator)

SflCoordinator *
sfl_k8s_lease_coordinator_new(SflK8sLeaseApi *api, gint64 duration_usec, gint64 renew_usec,
			      const gchar *holder, SflClock *clock);

G_END_DECLS
