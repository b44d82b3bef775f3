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
 * A message in the owner's log domain, through the structured API as g_warning() and friends
 * log (a test's writer may swallow it instead of aborting on a fatal warning).
 */
#define SFL_LEASE_LOG(domain, level, ...)                                                          \
	g_log_structured_standard((domain), (level), __FILE__, G_STRINGIFY(__LINE__), G_STRFUNC,   \
				  __VA_ARGS__)

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
void sfl_lease_chain_schedule(SflLeaseChain *chain, gint64 delay_usec, SflClockOnceFunc func,
			      gpointer data);
gint64 sfl_lease_chain_now(SflLeaseChain *chain);

void sfl_lease_chain_log_standby(SflLeaseChain *chain, SflCoordinator *coordinator, guint64 epoch);
void sfl_lease_chain_log_demoted(SflLeaseChain *chain, guint64 epoch);
void sfl_lease_chain_log_acquired(SflLeaseChain *chain, const gchar *what, const gchar *holder,
				  guint64 epoch);
guint64 sfl_lease_chain_next_epoch(SflLeaseChain *chain, const GError *floor_error, guint64 floor,
				   guint64 lease_epoch, guint64 own_epoch, const gchar *what,
				   const gchar *why);

/*
 * The renew-failure policy every lease coordinator shares: what a leader does when it cannot
 * renew, read, or was not scheduled for a while.
 *
 *  - A definite loss surrenders at once: on a store with compare-and-swap writes
 *    (@conditional), a write answered with SFL_ERROR_CONFLICT or SFL_ERROR_NOT_FOUND; someone
 *    else wrote or removed the lease.
 *  - Anything else cannot tell: the leader keeps leading while the lease it last confirmed
 *    cannot have expired yet, that is until @lifetime_usec minus @margin_usec has passed since
 *    that confirmation (monotonic, taken when the operation was issued), then surrenders
 *    without writing: a successor may hold it by now.
 *  - A read that cannot tell is never a definite loss (the caller handles a document it
 *    could read and found changed).
 *
 * Messages go to @log_domain and name the lease as "the <what>" and its lifetime by
 * @lifetime_name. Embedded by value; the strings are borrowed from the owner.
 */
typedef enum {
	SFL_LEASE_RENEW_KEEP,	 /* cannot tell, still within the lifetime: keep leading, retry */
	SFL_LEASE_RENEW_LOST,	 /* definitely someone else's: surrender now */
	SFL_LEASE_RENEW_EXPIRED, /* cannot tell, and the lease may have expired: surrender */
} SflLeaseRenewVerdict;

typedef struct {
	SflClock *clock;	    /* borrowed from the owner */
	const gchar *log_domain;    /* static */
	const gchar *what;	    /* "lease /path", "Lease ns/name"; borrowed */
	const gchar *lifetime_name; /* "ttl", "duration"; static */
	gint64 lifetime_usec;
	gint64 margin_usec;    /* surrender this much before the lifetime ends; 0: at its end */
	gboolean conditional;  /* writes are compare-and-swaps: a conflict is a definite loss */
	const gchar *lost_how; /* with @conditional: "changed or was deleted under us"; static */
} SflLeaseRenewPolicy;

SflLeaseRenewVerdict
sfl_lease_renew_judge(const SflLeaseRenewPolicy *policy, const GError *error, gint64 last_usec);
gboolean sfl_lease_renew_fresh(const SflLeaseRenewPolicy *policy, gint64 last_usec);
gboolean sfl_lease_renew_awake(const SflLeaseRenewPolicy *policy, gint64 last_ok_usec);
gboolean sfl_lease_renew_write_failed(const SflLeaseRenewPolicy *policy, const GError *error,
				      gint64 last_ok_usec);
gboolean sfl_lease_renew_read_failed(const SflLeaseRenewPolicy *policy, const GError *error,
				     gint64 last_confirmed_usec);

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
