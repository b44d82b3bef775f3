/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLease"

#include "config.h"

#include "sfl-lease-common.h"

#include "sfl-error.h"
#include "sfl-gsource.h"

/**
 * sfl_lease_chain_init:
 * @chain: a chain embedded in its owner
 * @clock: (transfer none): the owner's clock; it must outlive @chain
 * @log_domain: (transfer none): a static string, the owner's log domain
 */
void
sfl_lease_chain_init(SflLeaseChain *chain, SflClock *clock, const gchar *log_domain)
{
	chain->clock = clock;
	chain->log_domain = log_domain;
	chain->cancellable = NULL;
	chain->timer = NULL;
	chain->pending = 0;
}

/* from the owner's dispose: nothing in flight may act on a disposed owner */
void
sfl_lease_chain_dispose(SflLeaseChain *chain)
{
	sfl_lease_chain_clear_timer(chain);
	if (chain->cancellable != NULL)
		g_cancellable_cancel(chain->cancellable);
	g_clear_object(&chain->cancellable);
}

void
sfl_lease_chain_clear_timer(SflLeaseChain *chain)
{
	sfl_clear_source(&chain->timer);
}

/* a new chain: whatever the old one still has in flight is ignored when it completes */
void
sfl_lease_chain_restart(SflLeaseChain *chain)
{
	sfl_lease_chain_clear_timer(chain);
	if (chain->cancellable != NULL)
		g_cancellable_cancel(chain->cancellable);
	g_clear_object(&chain->cancellable);
	chain->cancellable = g_cancellable_new();
}

/*
 * A new chain that leaves the old one running: an operation already issued on it (a release
 * on stop) completes on its own, nobody waits for it.
 */
void
sfl_lease_chain_detach(SflLeaseChain *chain)
{
	g_clear_object(&chain->cancellable);
	chain->cancellable = g_cancellable_new();
}

/*
 * the one timer of the chain: @func runs once after @delay_usec on the chain's clock, with the
 * timer already cleared (it may schedule the next step)
 */
void
sfl_lease_chain_schedule(SflLeaseChain *chain, gint64 delay_usec, SflClockOnceFunc func,
			 gpointer data)
{
	sfl_clock_once(chain->clock, &chain->timer, delay_usec, NULL, func, data,
		       g_main_context_get_thread_default());
}

gint64
sfl_lease_chain_now(SflLeaseChain *chain)
{
	return sfl_clock_monotonic_usec(chain->clock);
}

gdouble
sfl_lease_secs(gint64 usec)
{
	return (gdouble)usec / G_USEC_PER_SEC;
}

/* after the owner has scheduled its next attempt: the callback may start it at once */
void
sfl_lease_chain_log_standby(SflLeaseChain *chain, SflCoordinator *coordinator, guint64 epoch)
{
	SFL_LEASE_LOG(chain->log_domain, G_LOG_LEVEL_MESSAGE,
		      "no longer leading (epoch %" G_GUINT64_FORMAT "); standing by", epoch);
	sfl_coordinator_set_leader(coordinator, FALSE);
}

void
sfl_lease_chain_log_demoted(SflLeaseChain *chain, guint64 epoch)
{
	SFL_LEASE_LOG(chain->log_domain, G_LOG_LEVEL_MESSAGE,
		      "demoted: a commit was fenced; standing by (epoch %" G_GUINT64_FORMAT ")",
		      epoch);
}

void
sfl_lease_chain_log_acquired(SflLeaseChain *chain, const gchar *what, const gchar *holder,
			     guint64 epoch)
{
	SFL_LEASE_LOG(chain->log_domain, G_LOG_LEVEL_MESSAGE,
		      "acquired the %s as %s (epoch %" G_GUINT64_FORMAT ")", what, holder, epoch);
}

/**
 * sfl_lease_chain_next_epoch:
 * @chain: the chain, for its log domain
 * @floor_error: (nullable): why the floor could not be read; @floor is ignored then
 * @floor: the store's persisted epoch
 * @lease_epoch: the epoch the lease we claim carries
 * @own_epoch: the epoch this replica held last
 * @what: "lease /path", "Lease ns/name": the lease, for messages
 * @why: what a floor above the lease means for this kind of lease, for messages
 *
 * The epoch a winning claim writes: one above the lease, the store's floor and our own, so it
 * never goes backwards even when the lease was lost or recreated.
 *
 * Returns: the epoch to claim, or 0 when none is left (do not claim; back off)
 */
guint64
sfl_lease_chain_next_epoch(SflLeaseChain *chain, const GError *floor_error, guint64 floor,
			   guint64 lease_epoch, guint64 own_epoch, const gchar *what,
			   const gchar *why)
{
	guint64 highest = 0;

	if (floor_error != NULL) {
		SFL_LEASE_LOG(
			chain->log_domain, G_LOG_LEVEL_WARNING,
			"cannot read the epoch floor from the checkpoint store (%s); deriving the "
			"epoch from the %s alone",
			floor_error->message, what);
		floor = 0;
	}
	if (floor > lease_epoch) {
		SFL_LEASE_LOG(chain->log_domain, G_LOG_LEVEL_WARNING,
			      "the checkpoint store recorded epoch %" G_GUINT64_FORMAT
			      " but the %s says %" G_GUINT64_FORMAT
			      "%s; continuing from the store's epoch",
			      floor, what, lease_epoch, why);
	}
	highest = MAX(MAX(lease_epoch, floor), own_epoch);
	/* every reader parses the epoch as a signed 64-bit JSON integer: one past it would make
	 * the lease unreadable to all, so the claim is refused instead of wrapping */
	if (highest >= (guint64)G_MAXINT64) {
		SFL_LEASE_LOG(
			chain->log_domain, G_LOG_LEVEL_WARNING,
			"the %s or the checkpoint store carries epoch %" G_GUINT64_FORMAT
			", the largest there is; not contesting. Delete the lease and reset "
			"__fence_epoch__ with `sf2loki state set` while every replica is stopped",
			what, highest);
		return 0;
	}
	return highest + 1;
}

/* --- the renew-failure policy ------------------------------------------------------------ */

/**
 * sfl_lease_renew_judge:
 * @policy: the coordinator's policy
 * @error: (nullable): why a renewal write failed; %NULL for a read that could not tell or a
 *   timer that fired late: only the time counts then
 * @last_usec: (monotonic) when the last operation that confirmed the lease ours was issued
 *
 * Returns: what the leader does now
 */
SflLeaseRenewVerdict
sfl_lease_renew_judge(const SflLeaseRenewPolicy *policy, const GError *error, gint64 last_usec)
{
	if (policy->conditional && error != NULL &&
	    (g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT) ||
	     g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND)))
		return SFL_LEASE_RENEW_LOST;
	return sfl_lease_renew_fresh(policy, last_usec) ? SFL_LEASE_RENEW_KEEP
							: SFL_LEASE_RENEW_EXPIRED;
}

static gint64
sfl_lease_renew_since(const SflLeaseRenewPolicy *policy, gint64 last_usec)
{
	return sfl_clock_monotonic_usec(policy->clock) - last_usec;
}

/* the lease confirmed at @last_usec cannot have expired yet (the fence and the release ask) */
gboolean
sfl_lease_renew_fresh(const SflLeaseRenewPolicy *policy, gint64 last_usec)
{
	return sfl_lease_renew_since(policy, last_usec) <
	       policy->lifetime_usec - policy->margin_usec;
}

/**
 * sfl_lease_renew_awake:
 * @policy: the coordinator's policy
 * @last_ok_usec: when the last successful renewal was issued
 *
 * Before any I/O of a renewal: a process that slept through the lifetime (stalled, frozen)
 * may already have a successor, so it must not write.
 *
 * Returns: %TRUE to go on renewing; %FALSE (logged) to surrender without writing
 */
gboolean
sfl_lease_renew_awake(const SflLeaseRenewPolicy *policy, gint64 last_ok_usec)
{
	if (sfl_lease_renew_fresh(policy, last_ok_usec))
		return TRUE;
	SFL_LEASE_LOG(
		policy->log_domain, G_LOG_LEVEL_WARNING,
		"woke up %.1f s after the last renewal of the %s, not within its %s of %.1f s (was "
		"this process stalled?): giving up leadership without writing",
		sfl_lease_secs(sfl_lease_renew_since(policy, last_ok_usec)), policy->what,
		policy->lifetime_name, sfl_lease_secs(policy->lifetime_usec));
	return FALSE;
}

/**
 * sfl_lease_renew_write_failed:
 * @policy: the coordinator's policy
 * @error: why the renewal write failed
 * @last_ok_usec: when the last successful renewal was issued
 *
 * Returns: %TRUE (logged) to keep leading and renew at the next interval; %FALSE (logged) to
 *   surrender
 */
gboolean
sfl_lease_renew_write_failed(const SflLeaseRenewPolicy *policy, const GError *error,
			     gint64 last_ok_usec)
{
	gint64 since = sfl_lease_renew_since(policy, last_ok_usec);

	switch (sfl_lease_renew_judge(policy, error, last_ok_usec)) {
	case SFL_LEASE_RENEW_LOST:
		SFL_LEASE_LOG(policy->log_domain, G_LOG_LEVEL_WARNING,
			      "the %s %s (%s): giving up leadership", policy->what,
			      policy->lost_how, error->message);
		return FALSE;
	case SFL_LEASE_RENEW_EXPIRED:
		SFL_LEASE_LOG(
			policy->log_domain, G_LOG_LEVEL_WARNING,
			"cannot renew the %s (%s) and the last renewal was %.1f s ago, not within "
			"its %s of %.1f s: giving up leadership",
			policy->what, error->message, sfl_lease_secs(since), policy->lifetime_name,
			sfl_lease_secs(policy->lifetime_usec));
		return FALSE;
	case SFL_LEASE_RENEW_KEEP:
	default:
		SFL_LEASE_LOG(
			policy->log_domain, G_LOG_LEVEL_WARNING,
			"cannot renew the %s (%s); still leading, last renewed %.1f s ago (%s %.1f "
			"s)",
			policy->what, error->message, sfl_lease_secs(since), policy->lifetime_name,
			sfl_lease_secs(policy->lifetime_usec));
		return TRUE;
	}
}

/**
 * sfl_lease_renew_read_failed:
 * @policy: the coordinator's policy
 * @error: why the read could not tell
 * @last_confirmed_usec: when the last read or write that showed the lease ours was issued
 *
 * The incumbency bias, capped: a lease not confirmed ours is never rewritten past one
 * lifetime.
 *
 * Returns: %TRUE to go on (the caller says how); %FALSE (logged) to surrender without writing
 */
gboolean
sfl_lease_renew_read_failed(const SflLeaseRenewPolicy *policy, const GError *error,
			    gint64 last_confirmed_usec)
{
	if (sfl_lease_renew_judge(policy, NULL, last_confirmed_usec) == SFL_LEASE_RENEW_KEEP)
		return TRUE;
	SFL_LEASE_LOG(
		policy->log_domain, G_LOG_LEVEL_WARNING,
		"cannot read the %s (%s) and it was last confirmed ours %.1f s ago, not within its "
		"%s of %.1f s: giving up leadership without writing",
		policy->what, error->message,
		sfl_lease_secs(sfl_lease_renew_since(policy, last_confirmed_usec)),
		policy->lifetime_name, sfl_lease_secs(policy->lifetime_usec));
	return FALSE;
}

/**
 * sfl_lease_call_new:
 * @chain: the chain the operation belongs to
 * @owner: (type GObject): the coordinator embedding @chain; kept alive until the call is freed
 *
 * Returns: (transfer full): the call, counted in @chain's pending operations
 */
SflLeaseCall *
sfl_lease_call_new(SflLeaseChain *chain, gpointer owner)
{
	SflLeaseCall *call = g_new0(SflLeaseCall, 1);

	call->owner = g_object_ref(owner);
	call->chain = chain;
	call->cancellable = g_object_ref(chain->cancellable);
	call->issued = sfl_lease_chain_now(chain);
	chain->pending++;
	return call;
}

/**
 * sfl_lease_call_completed:
 * @call: a call whose operation has just finished
 *
 * Marks the operation as no longer in flight (it cannot land after what the owner does next);
 * without this the call counts as pending until it is freed.
 *
 * Returns: %TRUE when the call belongs to the current chain and the owner should act on it
 */
gboolean
sfl_lease_call_completed(SflLeaseCall *call)
{
	if (!call->completed) {
		call->completed = TRUE;
		call->chain->pending--;
	}
	return sfl_lease_call_is_current(call);
}

gboolean
sfl_lease_call_is_current(SflLeaseCall *call)
{
	return !g_cancellable_is_cancelled(call->cancellable);
}

void
sfl_lease_call_free(SflLeaseCall *call)
{
	if (!call->completed)
		call->chain->pending--;
	g_object_unref(call->cancellable);
	g_object_unref(call->owner);
	g_free(call);
}
