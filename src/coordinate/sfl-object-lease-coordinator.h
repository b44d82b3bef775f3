/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-coordinator.h"
#include "sfl-object-client.h"

G_BEGIN_DECLS

/*
 * coordinate.type: s3_lease | gcs_lease — leadership through one object with conditional
 * writes (original-behaviour §5.7e), the lease document {"holder", "expires_at", "epoch"} of
 * the file lease.
 *
 *  - Staleness is judged on this replica's monotonic clock since the object's version (ETag,
 *    generation) last changed; the leader-written expires_at is for humans and is never
 *    compared. A lease is claimable when it is absent (404), released (empty holder), or its
 *    version has not changed for a whole ttl. A read that fails otherwise cannot tell: back
 *    off, never write.
 *  - Standby: absent → create-only write; stale → a write conditional on the version judged
 *    stale. A conflict is the contention signal: lost the race, back off, no re-read.
 *  - Epoch: a winning write carries max(lease epoch, store floor, own) + 1; renewals keep it.
 *  - Leader: every renew_interval a write conditional on the version it last wrote. A conflict
 *    or a vanished object surrenders at once; other failures are tolerated until ttl has passed
 *    since the last successful renewal, and a process that wakes up a ttl after it surrenders
 *    without writing (the ttl cap on unconfirmed renewals).
 *  - check_fence() turns FALSE a ttl after the last successful renewal.
 *  - Stop while leading releases the lease (empty holder, epoch kept) when provably ours; the
 *    client is closed once nothing is in flight.
 */

#define SFL_TYPE_OBJECT_LEASE_COORDINATOR (sfl_object_lease_coordinator_get_type())
G_DECLARE_FINAL_TYPE(SflObjectLeaseCoordinator, sfl_object_lease_coordinator, SFL,
		     OBJECT_LEASE_COORDINATOR, SflCoordinator)

SflCoordinator *
sfl_object_lease_coordinator_new(SflObjectClient *client, const gchar *key, gint64 ttl_usec,
				 gint64 renew_usec, const gchar *holder, SflClock *clock);
SflObjectClient *sfl_object_lease_coordinator_get_client(SflObjectLeaseCoordinator *self);
const gchar *sfl_object_lease_coordinator_get_key(SflObjectLeaseCoordinator *self);

G_END_DECLS
