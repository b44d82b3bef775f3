/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-clock.h"
#include "sfl-coordinator.h"

G_BEGIN_DECLS

/*
 * What the lease coordinators (file_lease and the compare-and-swap engine) share: the step
 * chain and the bookkeeping of the operations in flight.
 *
 * A chain is a sequence of steps, each started by a timer on the injected clock or by the
 * completion of the step before it, so exactly one step is pending. Stop and demote restart
 * the chain: its cancellable is replaced, and every late completion of the old one sees its
 * own (cancelled) cancellable and is ignored. Messages are logged in the owner's log domain.
 *
 * Main thread only; embedded by value in the coordinator that owns it.
 */
typedef struct {
	SflClock *clock;	   /* borrowed from the owner */
	const gchar *log_domain;   /* static */
	GCancellable *cancellable; /* the current chain */
	GSource *timer;
	guint pending; /* operations in flight, of any chain */
} SflLeaseChain;

void sfl_lease_chain_init(SflLeaseChain *chain, SflClock *clock, const gchar *log_domain);
void sfl_lease_chain_dispose(SflLeaseChain *chain);
void sfl_lease_chain_restart(SflLeaseChain *chain);
void sfl_lease_chain_detach(SflLeaseChain *chain);
void sfl_lease_chain_clear_timer(SflLeaseChain *chain);
void
sfl_lease_chain_schedule(SflLeaseChain *chain, gint64 delay_usec, GSourceFunc func, gpointer data);
gint64 sfl_lease_chain_now(SflLeaseChain *chain);

void sfl_lease_chain_log_standby(SflLeaseChain *chain, SflCoordinator *coordinator, guint64 epoch);
void sfl_lease_chain_log_demoted(SflLeaseChain *chain, guint64 epoch);
void sfl_lease_chain_log_acquired(SflLeaseChain *chain, const gchar *what, const gchar *holder,
				  guint64 epoch);
guint64 sfl_lease_chain_next_epoch(SflLeaseChain *chain, const GError *floor_error, guint64 floor,
				   guint64 lease_epoch, guint64 own_epoch, const gchar *what,
				   const gchar *why);

/* seconds, for messages */
gdouble sfl_lease_secs(gint64 usec);

/* one operation in flight: a strong ref on its owner, its chain, and when it was issued */
typedef struct {
	GObject *owner;
	SflLeaseChain *chain; /* inside owner */
	GCancellable *cancellable;
	gint64 issued;
	gboolean completed;
	/* for the owner: how to finish the operation and what to do next */
	GCallback finish;
	GCallback step;
} SflLeaseCall;

SflLeaseCall *sfl_lease_call_new(SflLeaseChain *chain, gpointer owner);
gboolean sfl_lease_call_completed(SflLeaseCall *call);
gboolean sfl_lease_call_is_current(SflLeaseCall *call);
void sfl_lease_call_free(SflLeaseCall *call);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflLeaseCall, sfl_lease_call_free)

G_END_DECLS
