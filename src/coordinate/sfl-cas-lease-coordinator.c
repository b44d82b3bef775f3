/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCasLease"

#include "config.h"

#include "sfl-cas-lease-coordinator.h"

#include "sfl-error.h"
#include "sfl-lease-common.h"

/*
 * Times (monotonic): last_ok is when the last successful write was *issued* (so the document
 * it stored cannot look stale to a standby before last_ok + duration), last_confirmed when the
 * last read or write that showed the lease ours was issued, observed_at when this replica first
 * saw the current version (the staleness clock).
 *
 * Messages go to the log domain of the kind of lease (SflK8sLease, ...), not this file's.
 */

/* --- the document ------------------------------------------------------------------------- */

/**
 * sfl_cas_lease_doc_new:
 *
 * Returns: (transfer full): a document with every field unset
 */
SflCasLeaseDoc *
sfl_cas_lease_doc_new(void)
{
	SflCasLeaseDoc *doc = g_new0(SflCasLeaseDoc, 1);

	doc->epoch = -1;
	return doc;
}

SflCasLeaseDoc *
sfl_cas_lease_doc_copy(const SflCasLeaseDoc *doc)
{
	SflCasLeaseDoc *copy = g_new0(SflCasLeaseDoc, 1);

	*copy = *doc;
	copy->version = g_strdup(doc->version);
	copy->holder = g_strdup(doc->holder);
	copy->tenure = g_strdup(doc->tenure);
	return copy;
}

void
sfl_cas_lease_doc_free(SflCasLeaseDoc *doc)
{
	if (doc == NULL)
		return;
	g_free(doc->version);
	g_free(doc->holder);
	g_free(doc->tenure);
	g_free(doc);
}

/* --- the backend -------------------------------------------------------------------------- */

G_DEFINE_INTERFACE(SflCasLeaseBackend, sfl_cas_lease_backend, G_TYPE_OBJECT)

static void
sfl_cas_lease_backend_default_init(SflCasLeaseBackendInterface *iface)
{
}

/* --- the engine --------------------------------------------------------------------------- */

typedef struct {
	gchar *holder;
	gint64 duration_usec;
	gint64 renew_usec;
	SflClock *clock;
	SflCasLeaseBackend *backend;
	gboolean renew_unread; /* the backend's SFL_CAS_LEASE_BACKEND_RENEW_UNREAD */
	gchar *what;	       /* the backend's description, for the renew policy's messages */
	SflLeaseChain chain;
	SflLeaseRenewPolicy renew;
	guint64 epoch;
	/* what this replica last saw */
	SflCasLeaseDoc *doc; /* NULL when absent or never read */
	gchar *observed_version;
	gint64 observed_at;
	/* acquire: the epoch the claim carries */
	guint64 claim_epoch;
	/* hold */
	gint64 last_ok;
	gint64 last_confirmed;
	gboolean last_read_ours;
	/* stopped while a renewal was in flight: its answer tells which version to give back */
	gboolean release_on_answer;
	/* observe only: a standby that times the holder's staleness but never claims */
	gboolean watching;
	/* a work unit's lease (its contest can watch): see sfl_cas_lease_coordinator_hold_written
	 */
	gboolean unit;
} SflCasLeaseCoordinatorPrivate;

G_DEFINE_TYPE_WITH_PRIVATE(SflCasLeaseCoordinator, sfl_cas_lease_coordinator, SFL_TYPE_COORDINATOR)

#define GET_PRIVATE(o)                                                                             \
	((SflCasLeaseCoordinatorPrivate *)sfl_cas_lease_coordinator_get_instance_private(          \
		SFL_CAS_LEASE_COORDINATOR(o)))
#define CAS_LOG(priv, level, ...) SFL_LEASE_LOG((priv)->chain.log_domain, (level), __VA_ARGS__)

static SflCasLeaseBackendInterface *
sfl_cas_lease_coordinator_iface(SflCasLeaseCoordinatorPrivate *priv)
{
	return SFL_CAS_LEASE_BACKEND_GET_IFACE(priv->backend);
}

static const gchar *
sfl_cas_lease_coordinator_name(SflCasLeaseCoordinatorPrivate *priv)
{
	return sfl_cas_lease_coordinator_iface(priv)->describe(priv->backend);
}

static SflLeaseCall *
sfl_cas_lease_coordinator_call_new(SflCasLeaseCoordinator *self)
{
	return sfl_lease_call_new(&GET_PRIVATE(self)->chain, self);
}

/* what happens when a read or write of the current chain completes: the document or @error */
typedef void (*SflCasLeaseStep)(SflCasLeaseCoordinator *self, SflLeaseCall *call,
				const SflCasLeaseDoc *doc, const GError *error);
typedef SflCasLeaseDoc *(*SflCasLeaseFinish)(SflCasLeaseBackend *backend, GAsyncResult *result,
					     GError **error);

static void
sfl_cas_lease_coordinator_release_answered(SflCasLeaseCoordinator *self, SflLeaseCall *call,
					   const SflCasLeaseDoc *doc);

/* every read and write completes here; completions of an abandoned chain are dropped */
static void
sfl_cas_lease_coordinator_doc_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflLeaseCall) call = user_data;
	SflCasLeaseCoordinator *self = SFL_CAS_LEASE_COORDINATOR(call->owner);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCasLeaseDoc) doc =
		((SflCasLeaseFinish)call->finish)(GET_PRIVATE(self)->backend, result, &error);

	/* finished: a stop inside the step below sees nothing of this chain in flight */
	if (!sfl_lease_call_completed(call))
		return;
	if (GET_PRIVATE(self)->release_on_answer) {
		sfl_cas_lease_coordinator_release_answered(self, call, doc);
		return;
	}
	((SflCasLeaseStep)call->step)(self, call, doc, error);
}

static SflLeaseCall *
sfl_cas_lease_coordinator_doc_call(SflCasLeaseCoordinator *self, SflCasLeaseFinish finish,
				   SflCasLeaseStep step)
{
	SflLeaseCall *call = sfl_cas_lease_coordinator_call_new(self);

	call->finish = (GCallback)finish;
	call->step = (GCallback)step;
	return call;
}

static void
sfl_cas_lease_coordinator_read(SflCasLeaseCoordinator *self, SflCasLeaseStep step)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);
	SflCasLeaseBackendInterface *iface = sfl_cas_lease_coordinator_iface(priv);

	iface->read_async(priv->backend, priv->chain.cancellable, sfl_cas_lease_coordinator_doc_cb,
			  sfl_cas_lease_coordinator_doc_call(self, iface->read_finish, step));
}

/* a document to write: ours (or nobody's with @holder ""), with the given epoch, renewed now */
static SflCasLeaseDoc *
sfl_cas_lease_coordinator_ours(SflCasLeaseCoordinatorPrivate *priv, const gchar *holder,
			       const gchar *tenure, guint64 epoch)
{
	SflCasLeaseDoc *doc = sfl_cas_lease_doc_new();

	doc->holder = g_strdup(holder);
	doc->epoch = (gint64)MIN(epoch, (guint64)G_MAXINT64);
	doc->duration_usec = priv->duration_usec;
	doc->tenure = g_strdup(tenure);
	doc->wall_usec = sfl_clock_wall_usec(priv->clock);
	return doc;
}

/* without @version a create-only write, else a compare-and-swap on it */
static void
sfl_cas_lease_coordinator_write(SflCasLeaseCoordinator *self, const SflCasLeaseDoc *doc,
				const gchar *version, SflCasLeaseStep step)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);
	SflCasLeaseBackendInterface *iface = sfl_cas_lease_coordinator_iface(priv);

	iface->write_async(priv->backend, doc,
			   version != NULL ? SFL_CAS_LEASE_IF_VERSION : SFL_CAS_LEASE_CREATE_ONLY,
			   version, priv->chain.cancellable, sfl_cas_lease_coordinator_doc_cb,
			   sfl_cas_lease_coordinator_doc_call(self, iface->write_finish, step));
}

/* remembers @doc (NULL: absent) and restarts the staleness clock when its version changed */
static void
sfl_cas_lease_coordinator_observe(SflCasLeaseCoordinatorPrivate *priv, const SflCasLeaseDoc *doc)
{
	const gchar *version = doc != NULL ? doc->version : NULL;

	g_clear_pointer(&priv->doc, sfl_cas_lease_doc_free);
	if (doc != NULL)
		priv->doc = sfl_cas_lease_doc_copy(doc);
	if (version != NULL && g_strcmp0(version, priv->observed_version) == 0)
		return;
	g_free(priv->observed_version);
	priv->observed_version = g_strdup(version);
	priv->observed_at = sfl_lease_chain_now(&priv->chain);
}

static const gchar *
sfl_cas_lease_coordinator_version(SflCasLeaseCoordinatorPrivate *priv)
{
	return priv->doc != NULL ? priv->doc->version : NULL;
}

static void sfl_cas_lease_coordinator_acquire_cb(gpointer user_data);
static void sfl_cas_lease_coordinator_hold_cb(gpointer user_data);

static void
sfl_cas_lease_coordinator_schedule(SflCasLeaseCoordinator *self, gint64 delay_usec,
				   SflClockOnceFunc func)
{
	sfl_lease_chain_schedule(&GET_PRIVATE(self)->chain, delay_usec, func, self);
}

static void
sfl_cas_lease_coordinator_back_off(SflCasLeaseCoordinator *self)
{
	sfl_cas_lease_coordinator_schedule(self, GET_PRIVATE(self)->renew_usec,
					   sfl_cas_lease_coordinator_acquire_cb);
}

static void
sfl_cas_lease_coordinator_surrender_in(SflCasLeaseCoordinator *self, gint64 delay_usec)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);

	priv->last_read_ours = FALSE;
	sfl_cas_lease_coordinator_schedule(self, delay_usec, sfl_cas_lease_coordinator_acquire_cb);
	sfl_lease_chain_log_standby(&priv->chain, SFL_COORDINATOR(self), priv->epoch);
}

static void
sfl_cas_lease_coordinator_surrender(SflCasLeaseCoordinator *self)
{
	sfl_cas_lease_coordinator_surrender_in(self, GET_PRIVATE(self)->renew_usec);
}

/* --- acquire (standby) -------------------------------------------------------------------- */

static void
sfl_cas_lease_coordinator_acquire_written(SflCasLeaseCoordinator *self, SflLeaseCall *call,
					  const SflCasLeaseDoc *stored, const GError *error)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);

	if (stored == NULL) {
		if (g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT)) {
			CAS_LOG(priv, G_LOG_LEVEL_MESSAGE, "lost the race for the %s: %s",
				sfl_cas_lease_coordinator_name(priv), error->message);
		} else {
			CAS_LOG(priv, G_LOG_LEVEL_WARNING,
				"cannot claim the %s: %s; retrying in %.1f s",
				sfl_cas_lease_coordinator_name(priv), error->message,
				sfl_lease_secs(priv->renew_usec));
		}
		sfl_cas_lease_coordinator_back_off(self);
		return;
	}
	sfl_cas_lease_coordinator_observe(priv, stored);
	priv->epoch = priv->claim_epoch;
	priv->last_ok = call->issued;
	priv->last_confirmed = call->issued;
	priv->last_read_ours = TRUE;
	sfl_lease_chain_log_acquired(&priv->chain, sfl_cas_lease_coordinator_name(priv),
				     priv->holder, priv->epoch);
	/* the timer first: the acquired callback may demote or stop us at once */
	sfl_cas_lease_coordinator_schedule(self, priv->renew_usec,
					   sfl_cas_lease_coordinator_hold_cb);
	sfl_coordinator_set_leader(SFL_COORDINATOR(self), TRUE);
}

static void
sfl_cas_lease_coordinator_acquire_floor_cb(GObject *source, GAsyncResult *result,
					   gpointer user_data)
{
	g_autoptr(SflLeaseCall) call = user_data;
	SflCasLeaseCoordinator *self = SFL_CAS_LEASE_COORDINATOR(call->owner);
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCasLeaseDoc) claim = NULL;
	guint64 floor = 0;
	gboolean ok =
		sfl_coordinator_epoch_floor_finish(SFL_COORDINATOR(self), result, &floor, &error);

	if (!sfl_lease_call_is_current(call))
		return;
	priv->claim_epoch = sfl_lease_chain_next_epoch(
		&priv->chain, ok ? NULL : error, floor, priv->claim_epoch, priv->epoch,
		sfl_cas_lease_coordinator_name(priv), " (was it deleted or recreated?)");
	if (priv->claim_epoch == 0) {
		sfl_cas_lease_coordinator_back_off(self);
		return;
	}
	/* replace the version we judged stale (a compare-and-swap), or create */
	claim = sfl_cas_lease_coordinator_ours(priv, priv->holder, NULL, priv->claim_epoch);
	sfl_cas_lease_coordinator_write(self, claim, sfl_cas_lease_coordinator_version(priv),
					sfl_cas_lease_coordinator_acquire_written);
}

static gboolean
sfl_cas_lease_coordinator_claimable(SflCasLeaseCoordinatorPrivate *priv, const SflCasLeaseDoc *doc,
				    gint64 *wait_usec)
{
	gint64 stale = 0;

	*wait_usec = 0;
	if (doc->holder == NULL || doc->holder[0] == '\0' || doc->duration_usec <= 0)
		return TRUE;
	stale = sfl_lease_chain_now(&priv->chain) - priv->observed_at;
	if (stale >= doc->duration_usec)
		return TRUE;
	*wait_usec = doc->duration_usec - stale;
	return FALSE;
}

static void
sfl_cas_lease_coordinator_acquire_read(SflCasLeaseCoordinator *self, SflLeaseCall *call,
				       const SflCasLeaseDoc *doc, const GError *error)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);
	gint64 wait_usec = 0;

	if (doc == NULL && !g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND)) {
		/* cannot tell is never absent: a create or replace now could unseat a live leader
		 */
		CAS_LOG(priv, G_LOG_LEVEL_WARNING,
			"cannot read the %s (%s); backing off without contesting",
			sfl_cas_lease_coordinator_name(priv), error->message);
		sfl_cas_lease_coordinator_back_off(self);
		return;
	}
	sfl_cas_lease_coordinator_observe(priv, doc);
	priv->claim_epoch = 0;
	if (priv->watching) {
		/* absent, released or stale: its assignee claims it, never a watcher */
		sfl_cas_lease_coordinator_schedule(self, priv->renew_usec,
						   sfl_cas_lease_coordinator_acquire_cb);
		return;
	}
	if (doc != NULL) {
		if (!sfl_cas_lease_coordinator_claimable(priv, doc, &wait_usec)) {
			CAS_LOG(priv, G_LOG_LEVEL_DEBUG,
				"the %s is held by %s (epoch %" G_GINT64_FORMAT
				"); claimable in %.1f s unless renewed",
				sfl_cas_lease_coordinator_name(priv), doc->holder, doc->epoch,
				sfl_lease_secs(wait_usec));
			/* look again when it would turn stale: failover within duration + renew */
			sfl_cas_lease_coordinator_schedule(self, MIN(priv->renew_usec, wait_usec),
							   sfl_cas_lease_coordinator_acquire_cb);
			return;
		}
		priv->claim_epoch = doc->epoch > 0 ? (guint64)doc->epoch : 0;
	}
	sfl_coordinator_epoch_floor_async(SFL_COORDINATOR(self), priv->chain.cancellable,
					  sfl_cas_lease_coordinator_acquire_floor_cb,
					  sfl_cas_lease_coordinator_call_new(self));
}

static void
sfl_cas_lease_coordinator_acquire_cb(gpointer user_data)
{
	sfl_cas_lease_coordinator_read(user_data, sfl_cas_lease_coordinator_acquire_read);
}

/* --- hold (leader) ------------------------------------------------------------------------ */

static void
sfl_cas_lease_coordinator_hold_written(SflCasLeaseCoordinator *self, SflLeaseCall *call,
				       const SflCasLeaseDoc *stored, const GError *error)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);

	if (stored != NULL) {
		sfl_cas_lease_coordinator_observe(priv, stored);
		priv->last_ok = call->issued;
		priv->last_confirmed = call->issued;
		priv->last_read_ours = TRUE;
		sfl_cas_lease_coordinator_schedule(self, priv->renew_usec,
						   sfl_cas_lease_coordinator_hold_cb);
		return;
	}
	/*
	 * A write that may have landed leaves the last read stale; without reads the last
	 * confirmation stands until a definite loss (the release is conditional all the same).
	 */
	if (!priv->renew_unread)
		priv->last_read_ours = FALSE;
	if (!sfl_lease_renew_write_failed(&priv->renew, error, priv->last_ok)) {
		/*
		 * A unit's lease that someone else wrote over is read again at once: its new
		 * document is timed from that read, and a foreign one nobody renews (garbage, a
		 * crashed writer's) is then taken over within ttl + renew_interval of the write,
		 * not one renew_interval later. The single lease keeps its back-off.
		 */
		sfl_cas_lease_coordinator_surrender_in(
			self, priv->unit && g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT)
				      ? 0
				      : priv->renew_usec);
		return;
	}
	sfl_cas_lease_coordinator_schedule(self, priv->renew_usec,
					   sfl_cas_lease_coordinator_hold_cb);
}

/* a compare-and-swap on the last version we know: it lands only if nobody wrote since */
static void
sfl_cas_lease_coordinator_renew(SflCasLeaseCoordinator *self)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);
	const gchar *version = sfl_cas_lease_coordinator_version(priv);
	g_autoptr(SflCasLeaseDoc) renewal = NULL;

	/* never a create: a lease deleted under the leader is a surrender, not a recreation */
	if (version == NULL) {
		CAS_LOG(priv, G_LOG_LEVEL_WARNING,
			"no known version of the %s to renew: giving up leadership",
			sfl_cas_lease_coordinator_name(priv));
		sfl_cas_lease_coordinator_surrender(self);
		return;
	}
	renewal =
		sfl_cas_lease_coordinator_ours(priv, priv->holder, priv->doc->tenure, priv->epoch);
	sfl_cas_lease_coordinator_write(self, renewal, version,
					sfl_cas_lease_coordinator_hold_written);
}

static void
sfl_cas_lease_coordinator_hold_read(SflCasLeaseCoordinator *self, SflLeaseCall *call,
				    const SflCasLeaseDoc *doc, const GError *error)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);

	if (doc == NULL && g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND)) {
		CAS_LOG(priv, G_LOG_LEVEL_WARNING, "the %s was deleted: giving up leadership",
			sfl_cas_lease_coordinator_name(priv));
		sfl_cas_lease_coordinator_observe(priv, NULL);
		sfl_cas_lease_coordinator_surrender(self);
		return;
	}
	if (doc == NULL) {
		priv->last_read_ours = FALSE;
		if (!sfl_lease_renew_read_failed(&priv->renew, error, priv->last_confirmed)) {
			sfl_cas_lease_coordinator_surrender(self);
			return;
		}
		CAS_LOG(priv, G_LOG_LEVEL_WARNING,
			"cannot read the %s (%s); renewing the version we last saw (last confirmed "
			"%.1f s ago)",
			sfl_cas_lease_coordinator_name(priv), error->message,
			sfl_lease_secs(sfl_lease_chain_now(&priv->chain) - priv->last_confirmed));
		sfl_cas_lease_coordinator_renew(self);
		return;
	}
	sfl_cas_lease_coordinator_observe(priv, doc);
	if (g_strcmp0(doc->holder, priv->holder) != 0 ||
	    (doc->epoch >= 0 && (guint64)doc->epoch > priv->epoch)) {
		CAS_LOG(priv, G_LOG_LEVEL_WARNING,
			"the %s is now held by %s (epoch %" G_GINT64_FORMAT
			", ours %" G_GUINT64_FORMAT "): giving up leadership",
			sfl_cas_lease_coordinator_name(priv),
			doc->holder != NULL && doc->holder[0] != '\0' ? doc->holder : "nobody",
			doc->epoch, priv->epoch);
		sfl_cas_lease_coordinator_surrender(self);
		return;
	}
	priv->last_confirmed = call->issued;
	priv->last_read_ours = TRUE;
	sfl_cas_lease_coordinator_renew(self);
}

static void
sfl_cas_lease_coordinator_hold_cb(gpointer user_data)
{
	SflCasLeaseCoordinator *self = user_data;
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);

	if (!sfl_lease_renew_awake(&priv->renew, priv->last_ok))
		sfl_cas_lease_coordinator_surrender(self);
	else if (priv->renew_unread)
		sfl_cas_lease_coordinator_renew(self);
	else
		sfl_cas_lease_coordinator_read(self, sfl_cas_lease_coordinator_hold_read);
}

/* --- SflCoordinator ----------------------------------------------------------------------- */

static void
sfl_cas_lease_coordinator_released(SflCasLeaseCoordinator *self, SflLeaseCall *call,
				   const SflCasLeaseDoc *stored, const GError *error)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);

	if (error != NULL) {
		CAS_LOG(priv, G_LOG_LEVEL_DEBUG,
			"cannot release the %s: %s; it goes stale on its own",
			sfl_cas_lease_coordinator_name(priv), error->message);
		return;
	}
	CAS_LOG(priv, G_LOG_LEVEL_DEBUG, "released the %s", sfl_cas_lease_coordinator_name(priv));
}

static void
sfl_cas_lease_coordinator_release_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflLeaseCall) call = user_data;
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(call->owner);
	g_autoptr(GError) error = NULL;
	gboolean ok = sfl_cas_lease_coordinator_iface(priv)->release_finish(priv->backend, result,
									    &error);

	sfl_cas_lease_coordinator_released(SFL_CAS_LEASE_COORDINATOR(call->owner), call, NULL,
					   ok ? NULL : error);
}

static void
sfl_cas_lease_coordinator_start(SflCoordinator *coordinator)
{
	SflCasLeaseCoordinator *self = SFL_CAS_LEASE_COORDINATOR(coordinator);
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);

	sfl_lease_chain_restart(&priv->chain);
	priv->last_read_ours = FALSE;
	priv->release_on_answer = FALSE;
	sfl_cas_lease_coordinator_schedule(self, 0, sfl_cas_lease_coordinator_acquire_cb);
}

/* gives the version in priv->doc back (holder ""); the chain is then left to run on its own */
static void
sfl_cas_lease_coordinator_give_back(SflCasLeaseCoordinator *self)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);
	SflCasLeaseBackendInterface *iface = sfl_cas_lease_coordinator_iface(priv);
	/* an unheld lease is claimable at once; the epoch stays so the successor bumps it */
	g_autoptr(SflCasLeaseDoc) release =
		sfl_cas_lease_coordinator_ours(priv, "", priv->doc->tenure, priv->epoch);

	sfl_lease_chain_restart(&priv->chain);
	/* on the new chain, which is then left to run: the run ends without waiting for it */
	if (iface->release_async != NULL) {
		iface->release_async(priv->backend, release, priv->doc->version,
				     priv->chain.cancellable, sfl_cas_lease_coordinator_release_cb,
				     sfl_cas_lease_coordinator_call_new(self));
	} else {
		sfl_cas_lease_coordinator_write(self, release, priv->doc->version,
						sfl_cas_lease_coordinator_released);
	}
	sfl_lease_chain_detach(&priv->chain);
}

/*
 * The answer to the renewal a stop found in flight. Without waiting for it a handover decided
 * while a renewal was out (membership rounds and renewals run in phase, so that is common)
 * left the lease to expire, and its successor waited a full ttl.
 */
static void
sfl_cas_lease_coordinator_release_answered(SflCasLeaseCoordinator *self, SflLeaseCall *call,
					   const SflCasLeaseDoc *doc)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);
	gboolean ours = FALSE;

	priv->release_on_answer = FALSE;
	/* a renewal that landed, or a read finding our own tenure: that version is ours */
	if (doc != NULL && call->step == (GCallback)sfl_cas_lease_coordinator_hold_written)
		ours = TRUE;
	else if (doc != NULL && call->step == (GCallback)sfl_cas_lease_coordinator_hold_read)
		ours = g_strcmp0(doc->holder, priv->holder) == 0 &&
		       (doc->epoch < 0 || (guint64)doc->epoch <= priv->epoch);
	if (!ours) {
		sfl_lease_chain_restart(&priv->chain);
		CAS_LOG(priv, G_LOG_LEVEL_DEBUG,
			"the renewal of the %s in flight at the stop did not confirm it; it goes "
			"stale on its own",
			sfl_cas_lease_coordinator_name(priv));
		return;
	}
	sfl_cas_lease_coordinator_observe(priv, doc);
	sfl_cas_lease_coordinator_give_back(self);
}

static void
sfl_cas_lease_coordinator_stop(SflCoordinator *coordinator)
{
	SflCasLeaseCoordinator *self = SFL_CAS_LEASE_COORDINATOR(coordinator);
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);
	/* hand over early only when provably ours: our last write still fresh */
	gboolean ours = sfl_coordinator_is_leader(coordinator) && priv->last_read_ours &&
			priv->doc != NULL && sfl_lease_renew_fresh(&priv->renew, priv->last_ok);

	/* a leader's chain waits on its timer or on one renewal: the answer decides */
	if (ours && priv->chain.timer == NULL) {
		priv->release_on_answer = TRUE;
		return;
	}
	if (!ours) {
		sfl_lease_chain_restart(&priv->chain);
		return;
	}
	sfl_cas_lease_coordinator_give_back(self);
}

static gboolean
sfl_cas_lease_coordinator_set_watching(SflCoordinator *coordinator, gboolean watching)
{
	SflCasLeaseCoordinator *self = SFL_CAS_LEASE_COORDINATOR(coordinator);
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);
	gboolean claim_now = priv->watching && !watching;

	priv->unit = TRUE;
	priv->watching = watching;
	/* a standby waiting on its timer looks again at once; a read in flight decides itself */
	if (claim_now && !sfl_coordinator_is_leader(coordinator) && priv->chain.timer != NULL &&
	    priv->chain.cancellable != NULL)
		sfl_cas_lease_coordinator_schedule(self, 0, sfl_cas_lease_coordinator_acquire_cb);
	return TRUE;
}

static void
sfl_cas_lease_coordinator_demote(SflCoordinator *coordinator)
{
	SflCasLeaseCoordinator *self = SFL_CAS_LEASE_COORDINATOR(coordinator);
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(self);

	sfl_lease_chain_log_demoted(&priv->chain, priv->epoch);
	sfl_lease_chain_restart(&priv->chain);
	priv->last_read_ours = FALSE;
	priv->release_on_answer = FALSE;
	sfl_cas_lease_coordinator_back_off(self);
}

/* the base class checks the leadership flag first */
static gboolean
sfl_cas_lease_coordinator_check_fence(SflCoordinator *coordinator)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(coordinator);
	return sfl_lease_renew_fresh(&priv->renew, priv->last_ok);
}

static guint64
sfl_cas_lease_coordinator_get_epoch(SflCoordinator *coordinator)
{
	return GET_PRIVATE(coordinator)->epoch;
}

static const gchar *
sfl_cas_lease_coordinator_get_holder(SflCoordinator *coordinator)
{
	return GET_PRIVATE(coordinator)->holder;
}

static void
sfl_cas_lease_coordinator_dispose(GObject *object)
{
	sfl_lease_chain_dispose(&GET_PRIVATE(object)->chain);
	G_OBJECT_CLASS(sfl_cas_lease_coordinator_parent_class)->dispose(object);
}

static void
sfl_cas_lease_coordinator_finalize(GObject *object)
{
	SflCasLeaseCoordinatorPrivate *priv = GET_PRIVATE(object);

	g_free(priv->holder);
	g_free(priv->what);
	g_free(priv->observed_version);
	g_clear_pointer(&priv->doc, sfl_cas_lease_doc_free);
	g_clear_object(&priv->backend);
	g_clear_pointer(&priv->clock, sfl_clock_unref);
	G_OBJECT_CLASS(sfl_cas_lease_coordinator_parent_class)->finalize(object);
}

static void
sfl_cas_lease_coordinator_class_init(SflCasLeaseCoordinatorClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflCoordinatorClass *coordinator_class = SFL_COORDINATOR_CLASS(klass);

	object_class->dispose = sfl_cas_lease_coordinator_dispose;
	object_class->finalize = sfl_cas_lease_coordinator_finalize;
	coordinator_class->start = sfl_cas_lease_coordinator_start;
	coordinator_class->stop = sfl_cas_lease_coordinator_stop;
	coordinator_class->demote = sfl_cas_lease_coordinator_demote;
	coordinator_class->set_watching = sfl_cas_lease_coordinator_set_watching;
	coordinator_class->check_fence = sfl_cas_lease_coordinator_check_fence;
	coordinator_class->get_epoch = sfl_cas_lease_coordinator_get_epoch;
	coordinator_class->get_holder = sfl_cas_lease_coordinator_get_holder;
}

static void
sfl_cas_lease_coordinator_init(SflCasLeaseCoordinator *self)
{
}

/**
 * sfl_cas_lease_coordinator_new_full:
 * @type: SFL_TYPE_CAS_LEASE_COORDINATOR or a subclass of it
 * @log_domain: (transfer none): a static string; the engine's messages are logged there
 * @backend: the lease to contest
 * @duration_usec: how long a lease lasts unrenewed (written into it; the failover bound)
 * @renew_usec: the leader's renewal period and a standby's retry period (configuration
 *   validation keeps 2 × renew < duration)
 * @holder: this replica's identity, already resolved
 * @clock: the clocks and timers to run on
 *
 * Returns: (transfer full): a coordinator
 */
SflCoordinator *
sfl_cas_lease_coordinator_new_full(GType type, const gchar *log_domain, SflCasLeaseBackend *backend,
				   gint64 duration_usec, gint64 renew_usec, const gchar *holder,
				   SflClock *clock)
{
	SflCasLeaseCoordinator *self;
	SflCasLeaseCoordinatorPrivate *priv;
	SflCasLeaseBackendInterface *iface;

	g_return_val_if_fail(g_type_is_a(type, SFL_TYPE_CAS_LEASE_COORDINATOR), NULL);
	g_return_val_if_fail(log_domain != NULL, NULL);
	g_return_val_if_fail(SFL_IS_CAS_LEASE_BACKEND(backend), NULL);
	g_return_val_if_fail(duration_usec > 0 && renew_usec > 0, NULL);
	g_return_val_if_fail(holder != NULL && holder[0] != '\0', NULL);
	g_return_val_if_fail(clock != NULL, NULL);

	self = g_object_new(type, NULL);
	priv = GET_PRIVATE(self);
	priv->holder = g_strdup(holder);
	priv->duration_usec = duration_usec;
	priv->renew_usec = renew_usec;
	priv->clock = sfl_clock_ref(clock);
	priv->backend = g_object_ref(backend);
	iface = SFL_CAS_LEASE_BACKEND_GET_IFACE(backend);
	priv->renew_unread = (iface->flags & SFL_CAS_LEASE_BACKEND_RENEW_UNREAD) != 0;
	priv->what = g_strdup(iface->describe(backend));
	sfl_lease_chain_init(&priv->chain, priv->clock, log_domain);
	priv->renew = (SflLeaseRenewPolicy){
		.clock = priv->clock,
		.log_domain = log_domain,
		.what = priv->what,
		.lifetime_name = iface->lifetime_name != NULL ? iface->lifetime_name : "duration",
		.lifetime_usec = duration_usec,
		.margin_usec = 0,
		.conditional = TRUE,
		.lost_how = priv->renew_unread ? "changed or vanished under us"
					       : "changed or was deleted under us",
	};
	return SFL_COORDINATOR(self);
}

/**
 * sfl_cas_lease_coordinator_new:
 * @backend: the lease to contest
 * @duration_usec: see sfl_cas_lease_coordinator_new_full()
 * @renew_usec: see sfl_cas_lease_coordinator_new_full()
 * @holder: this replica's identity, already resolved
 * @clock: the clocks and timers to run on
 *
 * Returns: (transfer full): a coordinator logging in the "SflCasLease" domain
 */
SflCoordinator *
sfl_cas_lease_coordinator_new(SflCasLeaseBackend *backend, gint64 duration_usec, gint64 renew_usec,
			      const gchar *holder, SflClock *clock)
{
	return sfl_cas_lease_coordinator_new_full(SFL_TYPE_CAS_LEASE_COORDINATOR, G_LOG_DOMAIN,
						  backend, duration_usec, renew_usec, holder,
						  clock);
}
