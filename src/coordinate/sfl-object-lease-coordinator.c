/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflObjectLease"

#include "config.h"

#include "sfl-object-lease-coordinator.h"

#include "sfl-error.h"
#include "sfl-lease-doc.h"

/*
 * The step chain of the k8s lease: each step is started by a timeout or by the completion
 * of the step before it, exactly one is pending, and stop/demote replace the chain's
 * cancellable so late completions are ignored.
 *
 * Times (monotonic): last_ok is when the last successful write was *issued* (the object it
 * stored cannot look stale to a standby before last_ok + ttl), observed_at when this replica
 * first saw the current version (the staleness clock).
 */

struct _SflObjectLeaseCoordinator {
	SflCoordinator parent_instance;
	gchar *holder;
	gint64 ttl_usec;
	gint64 renew_usec;
	SflClock *clock;
	SflObjectClient *client;
	gchar *key;
	gchar *name;		   /* "the lease s3://bucket/key", for messages */
	GCancellable *cancellable; /* the current chain */
	GSource *timer;
	guint pending;	/* operations in flight, of any chain */
	gboolean close; /* close the client once nothing is in flight */
	guint64 epoch;
	/* what this replica last saw */
	gchar *observed_version; /* NULL when absent or never read */
	gint64 observed_at;
	gboolean observed_released;
	guint64 observed_epoch;
	/* acquire: the epoch the claim carries */
	guint64 claim_epoch;
	/* hold */
	gint64 last_ok;
};

G_DEFINE_TYPE(SflObjectLeaseCoordinator, sfl_object_lease_coordinator, SFL_TYPE_COORDINATOR)

typedef struct {
	SflObjectLeaseCoordinator *self;
	GCancellable *cancellable;
	gint64 issued;
} SflObjectLeaseCall;

static SflObjectLeaseCall *
sfl_object_lease_call_new(SflObjectLeaseCoordinator *self)
{
	SflObjectLeaseCall *call = g_new0(SflObjectLeaseCall, 1);

	call->self = g_object_ref(self);
	call->cancellable = g_object_ref(self->cancellable);
	call->issued = sfl_clock_monotonic_usec(self->clock);
	self->pending++;
	return call;
}

static void
sfl_object_lease_call_free(SflObjectLeaseCall *call)
{
	SflObjectLeaseCoordinator *self = call->self;

	if (--self->pending == 0 && self->close) {
		self->close = FALSE;
		sfl_object_client_close(self->client);
	}
	g_object_unref(call->self);
	g_object_unref(call->cancellable);
	g_free(call);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflObjectLeaseCall, sfl_object_lease_call_free)

static gdouble
sfl_object_lease_secs(gint64 usec)
{
	return (gdouble)usec / G_USEC_PER_SEC;
}

static gint64
sfl_object_lease_now(SflObjectLeaseCoordinator *self)
{
	return sfl_clock_monotonic_usec(self->clock);
}

static void
sfl_object_lease_clear_timer(SflObjectLeaseCoordinator *self)
{
	if (self->timer == NULL)
		return;
	g_source_destroy(self->timer);
	g_clear_pointer(&self->timer, g_source_unref);
}

static void
sfl_object_lease_schedule(SflObjectLeaseCoordinator *self, gint64 delay_usec, GSourceFunc func)
{
	sfl_object_lease_clear_timer(self);
	self->timer = sfl_clock_timeout_source_new(self->clock, delay_usec);
	g_source_set_callback(self->timer, func, self, NULL);
	g_source_attach(self->timer, g_main_context_get_thread_default());
}

static void
sfl_object_lease_new_chain(SflObjectLeaseCoordinator *self)
{
	sfl_object_lease_clear_timer(self);
	if (self->cancellable != NULL)
		g_cancellable_cancel(self->cancellable);
	g_clear_object(&self->cancellable);
	self->cancellable = g_cancellable_new();
}

/* remembers @version (NULL: absent) and restarts the staleness clock when it changed */
static void
sfl_object_lease_observe(SflObjectLeaseCoordinator *self, const gchar *version)
{
	if (version != NULL && g_strcmp0(version, self->observed_version) == 0)
		return;
	g_free(self->observed_version);
	self->observed_version = g_strdup(version);
	self->observed_at = sfl_object_lease_now(self);
}

/* our lease document, expiring a ttl from now on this host's wall clock (for humans) */
static GBytes *
sfl_object_lease_document(SflObjectLeaseCoordinator *self, const gchar *holder, guint64 epoch)
{
	gsize len = 0;
	gchar *text = sfl_lease_doc_serialize(
		holder, sfl_clock_wall_usec(self->clock) + self->ttl_usec, epoch, &len);
	return g_bytes_new_take(text, len);
}

static gboolean sfl_object_lease_acquire_cb(gpointer user_data);
static gboolean sfl_object_lease_hold_cb(gpointer user_data);

static void
sfl_object_lease_back_off(SflObjectLeaseCoordinator *self)
{
	sfl_object_lease_schedule(self, self->renew_usec, sfl_object_lease_acquire_cb);
}

static void
sfl_object_lease_surrender(SflObjectLeaseCoordinator *self)
{
	sfl_object_lease_back_off(self);
	g_message("no longer leading (epoch %" G_GUINT64_FORMAT "); standing by", self->epoch);
	sfl_coordinator_set_leader(SFL_COORDINATOR(self), FALSE);
}

/* --- acquire (standby) -------------------------------------------------------------------- */

static void
sfl_object_lease_acquire_write_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflObjectLeaseCall) call = user_data;
	SflObjectLeaseCoordinator *self = call->self;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *version = sfl_object_client_put_finish(self->client, result, &error);

	if (g_cancellable_is_cancelled(call->cancellable))
		return;
	if (version == NULL) {
		/* a conflict is the contention signal: someone else wrote first; no re-read */
		if (g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT))
			g_message("lost the race for %s: %s", self->name, error->message);
		else
			g_warning("cannot claim %s: %s; retrying in %.1f s", self->name,
				  error->message, sfl_object_lease_secs(self->renew_usec));
		sfl_object_lease_back_off(self);
		return;
	}
	sfl_object_lease_observe(self, version);
	self->epoch = self->claim_epoch;
	self->last_ok = call->issued;
	g_message("acquired %s as %s (epoch %" G_GUINT64_FORMAT ")", self->name, self->holder,
		  self->epoch);
	/* the timer first: the acquired callback may demote or stop us at once */
	sfl_object_lease_schedule(self, self->renew_usec, sfl_object_lease_hold_cb);
	sfl_coordinator_set_leader(SFL_COORDINATOR(self), TRUE);
}

static void
sfl_object_lease_acquire_floor_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflObjectLeaseCall) call = user_data;
	SflObjectLeaseCoordinator *self = call->self;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) claim = NULL;
	guint64 floor = 0;
	guint64 lease_epoch = self->claim_epoch;
	gboolean ok =
		sfl_coordinator_epoch_floor_finish(SFL_COORDINATOR(self), result, &floor, &error);

	if (g_cancellable_is_cancelled(call->cancellable))
		return;
	if (!ok) {
		g_warning("cannot read the epoch floor from the checkpoint store (%s); deriving "
			  "the epoch from the lease alone",
			  error->message);
		floor = 0;
	}
	if (floor > lease_epoch) {
		g_warning("the checkpoint store recorded epoch %" G_GUINT64_FORMAT
			  " but %s says %" G_GUINT64_FORMAT
			  " (was it deleted or recreated?); continuing from the store's epoch",
			  floor, self->name, lease_epoch);
	}
	/* the epoch never goes backwards: not below the lease, the store, or our own */
	self->claim_epoch = MAX(MAX(lease_epoch, floor), self->epoch) + 1;
	claim = sfl_object_lease_document(self, self->holder, self->claim_epoch);
	sfl_object_client_put_async(self->client, self->key, claim,
				    self->observed_version != NULL ? SFL_OBJECT_WRITE_IF_VERSION
								   : SFL_OBJECT_WRITE_CREATE_ONLY,
				    self->observed_version, self->cancellable,
				    sfl_object_lease_acquire_write_cb,
				    sfl_object_lease_call_new(self));
}

static void
sfl_object_lease_acquire_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflObjectLeaseCall) call = user_data;
	SflObjectLeaseCoordinator *self = call->self;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflObject) object = sfl_object_client_get_finish(self->client, result, &error);
	g_auto(SflLeaseDoc) doc = { 0 };
	gint64 stale;
	gsize len = 0;
	const gchar *data;

	if (g_cancellable_is_cancelled(call->cancellable))
		return;
	if (object == NULL && !g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND)) {
		/* cannot tell is never absent: a write now could unseat a live leader */
		g_warning("cannot read %s (%s); backing off without contesting", self->name,
			  error->message);
		sfl_object_lease_back_off(self);
		return;
	}
	if (object == NULL) {
		sfl_object_lease_observe(self, NULL);
		self->claim_epoch = 0;
	} else {
		sfl_object_lease_observe(self, object->version);
		data = g_bytes_get_data(object->data, &len);
		sfl_lease_doc_parse(data != NULL ? data : "", len, &doc);
		self->claim_epoch = doc.state == SFL_LEASE_VALID ? doc.epoch : 0;
		stale = sfl_object_lease_now(self) - self->observed_at;
		/* released by its holder: claimable at once; otherwise only once it went stale */
		if (!(doc.state == SFL_LEASE_VALID && doc.holder[0] == '\0') &&
		    stale < self->ttl_usec) {
			g_debug("%s is held by %s (epoch %" G_GUINT64_FORMAT
				"); claimable in %.1f s unless renewed",
				self->name,
				doc.state == SFL_LEASE_VALID ? doc.holder : "(unreadable)",
				doc.epoch, sfl_object_lease_secs(self->ttl_usec - stale));
			/* look again when it would turn stale: failover within ttl + renew */
			sfl_object_lease_schedule(self,
						  MIN(self->renew_usec, self->ttl_usec - stale),
						  sfl_object_lease_acquire_cb);
			return;
		}
	}
	sfl_coordinator_epoch_floor_async(SFL_COORDINATOR(self), self->cancellable,
					  sfl_object_lease_acquire_floor_cb,
					  sfl_object_lease_call_new(self));
}

static gboolean
sfl_object_lease_acquire_cb(gpointer user_data)
{
	SflObjectLeaseCoordinator *self = user_data;

	sfl_object_lease_clear_timer(self);
	sfl_object_client_get_async(self->client, self->key, self->cancellable,
				    sfl_object_lease_acquire_read_cb,
				    sfl_object_lease_call_new(self));
	return G_SOURCE_REMOVE;
}

/* --- hold (leader) ------------------------------------------------------------------------ */

static void
sfl_object_lease_hold_write_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflObjectLeaseCall) call = user_data;
	SflObjectLeaseCoordinator *self = call->self;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *version = sfl_object_client_put_finish(self->client, result, &error);
	gint64 since_ok;

	if (g_cancellable_is_cancelled(call->cancellable))
		return;
	if (version != NULL) {
		sfl_object_lease_observe(self, version);
		self->last_ok = call->issued;
		sfl_object_lease_schedule(self, self->renew_usec, sfl_object_lease_hold_cb);
		return;
	}
	if (g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT) ||
	    g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND)) {
		g_warning("%s changed or vanished under us (%s): giving up leadership", self->name,
			  error->message);
		sfl_object_lease_surrender(self);
		return;
	}
	since_ok = sfl_object_lease_now(self) - self->last_ok;
	if (since_ok >= self->ttl_usec) {
		g_warning("cannot renew %s (%s) and the last renewal was %.1f s ago, not within "
			  "its ttl of %.1f s: giving up leadership",
			  self->name, error->message, sfl_object_lease_secs(since_ok),
			  sfl_object_lease_secs(self->ttl_usec));
		sfl_object_lease_surrender(self);
		return;
	}
	g_warning("cannot renew %s (%s); still leading, last renewed %.1f s ago (ttl %.1f s)",
		  self->name, error->message, sfl_object_lease_secs(since_ok),
		  sfl_object_lease_secs(self->ttl_usec));
	sfl_object_lease_schedule(self, self->renew_usec, sfl_object_lease_hold_cb);
}

static gboolean
sfl_object_lease_hold_cb(gpointer user_data)
{
	SflObjectLeaseCoordinator *self = user_data;
	gint64 since_ok = sfl_object_lease_now(self) - self->last_ok;
	g_autoptr(GBytes) renewal = NULL;

	sfl_object_lease_clear_timer(self);
	/* before any I/O: a process that slept through its ttl may already have a successor */
	if (since_ok >= self->ttl_usec) {
		g_warning("woke up %.1f s after the last renewal of %s, not within its ttl of "
			  "%.1f s (was this process stalled?): giving up leadership without "
			  "writing",
			  sfl_object_lease_secs(since_ok), self->name,
			  sfl_object_lease_secs(self->ttl_usec));
		sfl_object_lease_surrender(self);
		return G_SOURCE_REMOVE;
	}
	/* a compare-and-swap on the version we wrote last: it lands only if nobody wrote since,
	 * so no read is needed to know the lease is still ours */
	renewal = sfl_object_lease_document(self, self->holder, self->epoch);
	sfl_object_client_put_async(self->client, self->key, renewal, SFL_OBJECT_WRITE_IF_VERSION,
				    self->observed_version, self->cancellable,
				    sfl_object_lease_hold_write_cb,
				    sfl_object_lease_call_new(self));
	return G_SOURCE_REMOVE;
}

/* --- SflCoordinator ----------------------------------------------------------------------- */

static void
sfl_object_lease_release_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflObjectLeaseCall) call = user_data;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *version =
		sfl_object_client_put_finish(call->self->client, result, &error);

	if (version == NULL) {
		g_debug("cannot release %s: %s; it goes stale on its own", call->self->name,
			error->message);
		return;
	}
	g_debug("released %s", call->self->name);
}

static void
sfl_object_lease_start(SflCoordinator *coordinator)
{
	SflObjectLeaseCoordinator *self = SFL_OBJECT_LEASE_COORDINATOR(coordinator);

	self->close = FALSE;
	sfl_object_lease_new_chain(self);
	sfl_object_lease_schedule(self, 0, sfl_object_lease_acquire_cb);
}

static void
sfl_object_lease_stop(SflCoordinator *coordinator)
{
	SflObjectLeaseCoordinator *self = SFL_OBJECT_LEASE_COORDINATOR(coordinator);
	g_autoptr(GBytes) release = NULL;
	/* hand over early only when provably ours: nothing in flight, our last write still fresh */
	gboolean ours = sfl_coordinator_is_leader(coordinator) && self->pending == 0 &&
			self->observed_version != NULL &&
			sfl_object_lease_now(self) - self->last_ok < self->ttl_usec;

	sfl_object_lease_new_chain(self);
	if (ours) {
		/* an empty holder is claimable at once; the epoch stays so the successor bumps it
		 */
		release = sfl_object_lease_document(self, "", self->epoch);
		/* its own chain, never cancelled: the run ends without waiting for it */
		sfl_object_client_put_async(self->client, self->key, release,
					    SFL_OBJECT_WRITE_IF_VERSION, self->observed_version,
					    self->cancellable, sfl_object_lease_release_cb,
					    sfl_object_lease_call_new(self));
		g_clear_object(&self->cancellable);
		self->cancellable = g_cancellable_new();
	}
	/* the run owns the client's connections: close them once nothing is in flight */
	if (self->pending == 0)
		sfl_object_client_close(self->client);
	else
		self->close = TRUE;
}

static void
sfl_object_lease_demote(SflCoordinator *coordinator)
{
	SflObjectLeaseCoordinator *self = SFL_OBJECT_LEASE_COORDINATOR(coordinator);

	g_message("demoted: a commit was fenced; standing by (epoch %" G_GUINT64_FORMAT ")",
		  self->epoch);
	sfl_object_lease_new_chain(self);
	sfl_object_lease_back_off(self);
}

static gboolean
sfl_object_lease_check_fence(SflCoordinator *coordinator)
{
	SflObjectLeaseCoordinator *self = SFL_OBJECT_LEASE_COORDINATOR(coordinator);
	return sfl_object_lease_now(self) - self->last_ok < self->ttl_usec;
}

static guint64
sfl_object_lease_get_epoch(SflCoordinator *coordinator)
{
	return SFL_OBJECT_LEASE_COORDINATOR(coordinator)->epoch;
}

static const gchar *
sfl_object_lease_get_holder(SflCoordinator *coordinator)
{
	return SFL_OBJECT_LEASE_COORDINATOR(coordinator)->holder;
}

static void
sfl_object_lease_coordinator_dispose(GObject *object)
{
	SflObjectLeaseCoordinator *self = SFL_OBJECT_LEASE_COORDINATOR(object);

	sfl_object_lease_clear_timer(self);
	if (self->cancellable != NULL)
		g_cancellable_cancel(self->cancellable);
	g_clear_object(&self->cancellable);
	G_OBJECT_CLASS(sfl_object_lease_coordinator_parent_class)->dispose(object);
}

static void
sfl_object_lease_coordinator_finalize(GObject *object)
{
	SflObjectLeaseCoordinator *self = SFL_OBJECT_LEASE_COORDINATOR(object);

	g_free(self->holder);
	g_free(self->key);
	g_free(self->name);
	g_free(self->observed_version);
	g_clear_object(&self->client);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	G_OBJECT_CLASS(sfl_object_lease_coordinator_parent_class)->finalize(object);
}

static void
sfl_object_lease_coordinator_class_init(SflObjectLeaseCoordinatorClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflCoordinatorClass *coordinator_class = SFL_COORDINATOR_CLASS(klass);

	object_class->dispose = sfl_object_lease_coordinator_dispose;
	object_class->finalize = sfl_object_lease_coordinator_finalize;
	coordinator_class->start = sfl_object_lease_start;
	coordinator_class->stop = sfl_object_lease_stop;
	coordinator_class->demote = sfl_object_lease_demote;
	coordinator_class->check_fence = sfl_object_lease_check_fence;
	coordinator_class->get_epoch = sfl_object_lease_get_epoch;
	coordinator_class->get_holder = sfl_object_lease_get_holder;
}

static void
sfl_object_lease_coordinator_init(SflObjectLeaseCoordinator *self)
{
}

/**
 * sfl_object_lease_coordinator_new:
 * @client: the bucket holding the lease object
 * @key: the lease object's key (name)
 * @ttl_usec: a lease unchanged for this long may be taken over
 * @renew_usec: how often the leader renews (config validation keeps 2 × renew < ttl); also
 *   the retry period of a standby
 * @holder: this replica's identity, already resolved
 * @clock: the clocks and timers to run on
 *
 * Returns: (transfer full): a coordinator
 */
SflCoordinator *
sfl_object_lease_coordinator_new(SflObjectClient *client, const gchar *key, gint64 ttl_usec,
				 gint64 renew_usec, const gchar *holder, SflClock *clock)
{
	SflObjectLeaseCoordinator *self;
	g_autofree gchar *where = NULL;

	g_return_val_if_fail(SFL_IS_OBJECT_CLIENT(client), NULL);
	g_return_val_if_fail(key != NULL && key[0] != '\0', NULL);
	g_return_val_if_fail(ttl_usec > 0 && renew_usec > 0, NULL);
	g_return_val_if_fail(holder != NULL && holder[0] != '\0', NULL);
	g_return_val_if_fail(clock != NULL, NULL);

	self = g_object_new(SFL_TYPE_OBJECT_LEASE_COORDINATOR, NULL);
	self->holder = g_strdup(holder);
	self->ttl_usec = ttl_usec;
	self->renew_usec = renew_usec;
	self->clock = sfl_clock_ref(clock);
	self->client = g_object_ref(client);
	self->key = g_strdup(key);
	where = sfl_object_client_describe(client, key);
	self->name = g_strdup_printf("the lease %s", where);
	return SFL_COORDINATOR(self);
}

SflObjectClient *
sfl_object_lease_coordinator_get_client(SflObjectLeaseCoordinator *self)
{
	g_return_val_if_fail(SFL_IS_OBJECT_LEASE_COORDINATOR(self), NULL);
	return self->client;
}

const gchar *
sfl_object_lease_coordinator_get_key(SflObjectLeaseCoordinator *self)
{
	g_return_val_if_fail(SFL_IS_OBJECT_LEASE_COORDINATOR(self), NULL);
	return self->key;
}
