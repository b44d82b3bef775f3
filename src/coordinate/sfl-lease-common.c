/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLease"

#include "config.h"

#include "sfl-lease-common.h"

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
	if (chain->timer == NULL)
		return;
	g_source_destroy(chain->timer);
	g_clear_pointer(&chain->timer, g_source_unref);
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

/* the one timer of the chain: @func runs once after @delay_usec on the chain's clock */
void
sfl_lease_chain_schedule(SflLeaseChain *chain, gint64 delay_usec, GSourceFunc func, gpointer data)
{
	sfl_lease_chain_clear_timer(chain);
	chain->timer = sfl_clock_timeout_source_new(chain->clock, delay_usec);
	g_source_set_callback(chain->timer, func, data, NULL);
	g_source_attach(chain->timer, g_main_context_get_thread_default());
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
	g_log(chain->log_domain, G_LOG_LEVEL_MESSAGE,
	      "no longer leading (epoch %" G_GUINT64_FORMAT "); standing by", epoch);
	sfl_coordinator_set_leader(coordinator, FALSE);
}

void
sfl_lease_chain_log_demoted(SflLeaseChain *chain, guint64 epoch)
{
	g_log(chain->log_domain, G_LOG_LEVEL_MESSAGE,
	      "demoted: a commit was fenced; standing by (epoch %" G_GUINT64_FORMAT ")", epoch);
}

void
sfl_lease_chain_log_acquired(SflLeaseChain *chain, const gchar *what, const gchar *holder,
			     guint64 epoch)
{
	g_log(chain->log_domain, G_LOG_LEVEL_MESSAGE,
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
 * Returns: the epoch to claim
 */
guint64
sfl_lease_chain_next_epoch(SflLeaseChain *chain, const GError *floor_error, guint64 floor,
			   guint64 lease_epoch, guint64 own_epoch, const gchar *what,
			   const gchar *why)
{
	if (floor_error != NULL) {
		g_log(chain->log_domain, G_LOG_LEVEL_WARNING,
		      "cannot read the epoch floor from the checkpoint store (%s); deriving the "
		      "epoch from the %s alone",
		      floor_error->message, what);
		floor = 0;
	}
	if (floor > lease_epoch) {
		g_log(chain->log_domain, G_LOG_LEVEL_WARNING,
		      "the checkpoint store recorded epoch %" G_GUINT64_FORMAT
		      " but the %s says %" G_GUINT64_FORMAT "%s; continuing from the store's epoch",
		      floor, what, lease_epoch, why);
	}
	return MAX(MAX(lease_epoch, floor), own_epoch) + 1;
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
