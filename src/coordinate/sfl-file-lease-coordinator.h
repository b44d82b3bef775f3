/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-coordinator.h"
#include "sfl-lease-io.h"

G_BEGIN_DECLS

/*
 * coordinate.type: file_lease — leadership through a lease document on storage all replicas
 * share ({"holder", "expires_at", "epoch"}, docs/deployment/high-availability.md
 * "The file lease", with the SFL-0012 and SFL-0015 fixes).
 *
 *  - Standby: a lease that is absent, not a lease, or expired on this host's wall clock is
 *    claimed with epoch max(lease epoch, store floor, own epoch) + 1, then confirmed by a
 *    re-read after a short pause; a read that cannot tell never counts as absent.
 *  - Leader: every renew_interval, read, then rewrite the lease with the same epoch. The
 *    leader surrenders without writing when another holder or a higher epoch shows up, when it
 *    has not confirmed the lease for a whole ttl (incumbency bias capped at one ttl), or when
 *    it wakes up a ttl after its last successful renewal (a stalled process).
 *  - check_fence() turns FALSE a ttl after the last successful renewal, even before the loop
 *    notices, so a leader that cannot renew stops writing before a standby may take over.
 *
 * All I/O goes through @io in worker threads, each operation limited to renew_interval; all
 * waits are timeout sources of @clock on the thread-default main context.
 */

#define SFL_TYPE_FILE_LEASE_COORDINATOR (sfl_file_lease_coordinator_get_type())
G_DECLARE_FINAL_TYPE(SflFileLeaseCoordinator, sfl_file_lease_coordinator, SFL,
		     FILE_LEASE_COORDINATOR, SflCoordinator)

SflCoordinator *
sfl_file_lease_coordinator_new(const gchar *path, gint64 ttl_usec, gint64 renew_usec,
			       const gchar *holder, SflClock *clock, SflLeaseIO *io);

G_END_DECLS
