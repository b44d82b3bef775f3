/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-cas-lease-coordinator.h"
#include "sfl-object-client.h"

G_BEGIN_DECLS

/*
 * coordinate.type: s3_lease | gcs_lease — leadership through one object with conditional
 * writes (docs/deployment/high-availability.md "The object-store leases"), the lease document
 * {"holder", "expires_at", "epoch"} of the file lease. The algorithm is the compare-and-swap lease
 * engine's (sfl-cas-lease-coordinator.h); the object is its backend:
 *
 *  - The version is the object's ETag (S3) or generation (GCS). Staleness is judged on this
 *    replica's monotonic clock since it last changed; the leader-written expires_at is for
 *    humans and is never compared. A lease is claimable when it is absent (404), released
 *    (empty holder), or its version has not changed for a whole ttl; a document that is not
 *    a lease waits out the ttl like a held one. A read that fails otherwise cannot tell:
 *    back off, never write.
 *  - Standby: absent → create-only write; stale → a write conditional on the version judged
 *    stale. A conflict is the contention signal: lost the race, back off, no re-read.
 *  - Leader: every renew_interval a write conditional on the version it last wrote, no read
 *    (SFL_CAS_LEASE_BACKEND_RENEW_UNREAD). A conflict or a vanished object surrenders at
 *    once; other failures are tolerated until ttl has passed since the last successful
 *    renewal, and a process that wakes up a ttl after it surrenders without writing.
 *  - Stop while leading releases the lease (empty holder, epoch kept) when provably ours; the
 *    client is closed once nothing is in flight.
 */

#define SFL_TYPE_OBJECT_LEASE_COORDINATOR (sfl_object_lease_coordinator_get_type())
G_DECLARE_FINAL_TYPE(SflObjectLeaseCoordinator, sfl_object_lease_coordinator, SFL,
		     OBJECT_LEASE_COORDINATOR, SflCasLeaseCoordinator)

SflCoordinator *
sfl_object_lease_coordinator_new(SflObjectClient *client, const gchar *key, gint64 ttl_usec,
				 gint64 renew_usec, const gchar *holder, SflClock *clock);
SflObjectClient *sfl_object_lease_coordinator_get_client(SflObjectLeaseCoordinator *self);
const gchar *sfl_object_lease_coordinator_get_key(SflObjectLeaseCoordinator *self);

G_END_DECLS
