/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFileLease"

#include "config.h"

#include "sfl-file-lease-coordinator.h"

#include "sfl-error.h"
#include "sfl-lease-common.h"

/*
 * The loop is a chain of steps, each started by a timeout or by the completion of the step
 * before it; exactly one step is pending at any time. Stop and demote cancel the chain's
 * cancellable (so every late completion is ignored) and start a new one.
 *
 * Times: last_ok and last_confirmed are monotonic and taken when the operation was *issued*:
 * the expires_at a renewal writes is computed then, so "now - last_ok < ttl" implies the lease
 * we last wrote has not expired yet (up to wall-clock skew between hosts, which ttl must cover).
 */

/* the next step once a read completes: the document, or NULL and @error */
typedef void (*SflFileLeaseReadStep)(SflFileLeaseCoordinator *self, SflLeaseCall *call,
				     const SflLeaseDoc *doc, const GError *error);
/* ... once a write completes: @error is NULL when it landed */
typedef void (*SflFileLeaseWriteStep)(SflFileLeaseCoordinator *self, SflLeaseCall *call,
				      const GError *error);

struct _SflFileLeaseCoordinator {
	SflCoordinator parent_instance;
	gchar *holder;
	gint64 ttl_usec;
	gint64 renew_usec;
	gint64 verify_usec;
	SflClock *clock;
	SflLeaseIO *io;
	gchar *what; /* "lease /path", for messages */
	SflLeaseChain chain;
	SflLeaseRenewPolicy renew;
	guint64 epoch;
	/* acquire: the lease's epoch before our claim, then the epoch we claim */
	guint64 claim_epoch;
	gint64 claim_issued;
	/* hold */
	gint64 last_ok;
	gint64 last_confirmed;
	gboolean last_read_ours;	/* the latest read showed our own lease */
	gboolean verifying;		/* this read is the re-read after the verify pause */
	gboolean release_on_answer;	/* stopped during a renewal: release once it answers */
	gboolean first_failed;		/* ... and the read before it could not tell */
	SflFileLeaseReadStep next_read; /* what the armed read timer completes in */
};

G_DEFINE_TYPE(SflFileLeaseCoordinator, sfl_file_lease_coordinator, SFL_TYPE_COORDINATOR)

static SflLeaseCall *
sfl_file_lease_coordinator_call_new(SflFileLeaseCoordinator *self)
{
	return sfl_lease_call_new(&self->chain, self);
}

static const gchar *
sfl_file_lease_coordinator_path(SflFileLeaseCoordinator *self)
{
	const gchar *path = sfl_lease_io_get_path(self->io);
	return path != NULL ? path : "(lease)";
}

static gint64
sfl_file_lease_coordinator_now(SflFileLeaseCoordinator *self)
{
	return sfl_lease_chain_now(&self->chain);
}

static void sfl_file_lease_coordinator_release_answered(SflFileLeaseCoordinator *self,
							SflLeaseCall *call, gboolean ours);
static void sfl_file_lease_coordinator_hold_read(SflFileLeaseCoordinator *self, SflLeaseCall *call,
						 const SflLeaseDoc *doc, const GError *error);
static void sfl_file_lease_coordinator_hold_written(SflFileLeaseCoordinator *self,
						    SflLeaseCall *call, const GError *error);

/* what happens when an operation of the current chain completes */
static void
sfl_file_lease_coordinator_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflLeaseCall) call = user_data;
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(call->owner);
	g_auto(SflLeaseDoc) doc = { 0 };
	g_autoptr(GError) error = NULL;
	gboolean ok = sfl_lease_io_read_finish(self->io, result, &doc, &error);

	if (!sfl_lease_call_completed(call))
		return;
	if (self->release_on_answer) {
		/* a renewal's read that still shows our lease: nothing else was written since */
		sfl_file_lease_coordinator_release_answered(
			self, call,
			ok && call->step == (GCallback)sfl_file_lease_coordinator_hold_read &&
				doc.state == SFL_LEASE_VALID &&
				g_strcmp0(doc.holder, self->holder) == 0 &&
				doc.epoch <= self->epoch);
		return;
	}
	((SflFileLeaseReadStep)call->step)(self, call, ok ? &doc : NULL, error);
}

static void
sfl_file_lease_coordinator_write_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflLeaseCall) call = user_data;
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(call->owner);
	g_autoptr(GError) error = NULL;
	gboolean ok = sfl_lease_io_write_finish(self->io, result, &error);

	if (!sfl_lease_call_completed(call))
		return;
	if (self->release_on_answer) {
		sfl_file_lease_coordinator_release_answered(
			self, call,
			ok && call->step == (GCallback)sfl_file_lease_coordinator_hold_written);
		return;
	}
	((SflFileLeaseWriteStep)call->step)(self, call, ok ? NULL : error);
}

static void
sfl_file_lease_coordinator_read(SflFileLeaseCoordinator *self, SflFileLeaseReadStep step)
{
	SflLeaseCall *call = sfl_file_lease_coordinator_call_new(self);

	call->step = (GCallback)step;
	sfl_lease_io_read_async(self->io, self->chain.cancellable,
				sfl_file_lease_coordinator_read_cb, call);
}

static void
sfl_file_lease_coordinator_write(SflFileLeaseCoordinator *self, guint64 epoch,
				 SflFileLeaseWriteStep step)
{
	SflLeaseCall *call = sfl_file_lease_coordinator_call_new(self);
	gint64 expires = sfl_clock_wall_usec(self->clock) + self->ttl_usec;

	call->step = (GCallback)step;
	sfl_lease_io_write_async(self->io, self->holder, expires, epoch, call->cancellable,
				 sfl_file_lease_coordinator_write_cb, call);
}

static void
sfl_file_lease_coordinator_read_timer_cb(gpointer user_data)
{
	SflFileLeaseCoordinator *self = user_data;

	sfl_file_lease_coordinator_read(self, self->next_read);
}

/* the chain's next step: a read after @delay_usec that completes in @step */
static void
sfl_file_lease_coordinator_read_in(SflFileLeaseCoordinator *self, gint64 delay_usec,
				   SflFileLeaseReadStep step)
{
	self->next_read = step;
	sfl_lease_chain_schedule(&self->chain, delay_usec, sfl_file_lease_coordinator_read_timer_cb,
				 self);
}

static void
sfl_file_lease_coordinator_acquire_read(SflFileLeaseCoordinator *self, SflLeaseCall *call,
					const SflLeaseDoc *doc, const GError *error);
static void sfl_file_lease_coordinator_hold_cb(gpointer user_data);

/* contest the lease (again) after @delay_usec */
static void
sfl_file_lease_coordinator_contest(SflFileLeaseCoordinator *self, gint64 delay_usec)
{
	sfl_file_lease_coordinator_read_in(self, delay_usec,
					   sfl_file_lease_coordinator_acquire_read);
}

/*
 * Stop leading and contest again: after renew_interval (a surrender; the lease file is left
 * alone) or at once (@now).
 *
 * At once is for a lease gone or garbled under us, confirmed by a second read. Writing our old
 * epoch back could land after a standby's fresh claim and step the lease's epoch down, so the
 * term ends here and we contest like any standby: the claim carries a new epoch above ours and
 * the store's floor, and the write-pause-verify decides between us and a competitor.
 */
static void
sfl_file_lease_coordinator_stand_by(SflFileLeaseCoordinator *self, gboolean now)
{
	self->last_read_ours = FALSE;
	sfl_file_lease_coordinator_contest(self, now ? 0 : self->renew_usec);
	sfl_lease_chain_log_standby(&self->chain, SFL_COORDINATOR(self), self->epoch);
}

/* --- acquire (standby) -------------------------------------------------------------------- */

static void
sfl_file_lease_coordinator_acquire_verify(SflFileLeaseCoordinator *self, SflLeaseCall *call,
					  const SflLeaseDoc *doc, const GError *error)
{
	if (doc == NULL) {
		/* our claim may or may not stand: never adopt what we could not confirm */
		g_warning("cannot re-read the lease %s to confirm our claim (%s); treating it as a "
			  "lost race",
			  sfl_file_lease_coordinator_path(self), error->message);
		sfl_file_lease_coordinator_contest(self, self->renew_usec);
		return;
	}
	if (doc->state != SFL_LEASE_VALID || g_strcmp0(doc->holder, self->holder) != 0 ||
	    doc->epoch != self->claim_epoch ||
	    sfl_lease_doc_expired(doc, sfl_clock_wall_usec(self->clock))) {
		g_message("lost the race for the lease %s to %s",
			  sfl_file_lease_coordinator_path(self),
			  doc->holder != NULL ? doc->holder : "nobody");
		sfl_file_lease_coordinator_contest(self, self->verify_usec);
		return;
	}
	self->epoch = self->claim_epoch;
	self->last_ok = self->claim_issued;
	self->last_confirmed = call->issued;
	self->last_read_ours = TRUE;
	sfl_lease_chain_log_acquired(&self->chain, self->what, self->holder, self->epoch);
	/* the timer first: the acquired callback may demote or stop us at once */
	sfl_lease_chain_schedule(&self->chain, self->renew_usec, sfl_file_lease_coordinator_hold_cb,
				 self);
	sfl_coordinator_set_leader(SFL_COORDINATOR(self), TRUE);
}

static void
sfl_file_lease_coordinator_acquire_written(SflFileLeaseCoordinator *self, SflLeaseCall *call,
					   const GError *error)
{
	if (error != NULL) {
		g_warning("cannot write the lease %s: %s; retrying in %.1f s",
			  sfl_file_lease_coordinator_path(self), error->message,
			  sfl_lease_secs(self->renew_usec));
		sfl_file_lease_coordinator_contest(self, self->renew_usec);
		return;
	}
	self->claim_issued = call->issued;
	/* let a competitor's concurrent claim land, then see whose rename won */
	sfl_file_lease_coordinator_read_in(self, self->verify_usec,
					   sfl_file_lease_coordinator_acquire_verify);
}

static void
sfl_file_lease_coordinator_acquire_floor_cb(GObject *source, GAsyncResult *result,
					    gpointer user_data)
{
	g_autoptr(SflLeaseCall) call = user_data;
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(call->owner);
	g_autoptr(GError) error = NULL;
	guint64 floor = 0;
	gboolean ok =
		sfl_coordinator_epoch_floor_finish(SFL_COORDINATOR(self), result, &floor, &error);

	if (!sfl_lease_call_completed(call))
		return;
	self->claim_epoch = sfl_lease_chain_next_epoch(&self->chain, ok ? NULL : error, floor,
						       self->claim_epoch, self->epoch, self->what,
						       ": the lease file was lost or rewritten");
	if (self->claim_epoch == 0) {
		sfl_file_lease_coordinator_contest(self, self->renew_usec);
		return;
	}
	sfl_file_lease_coordinator_write(self, self->claim_epoch,
					 sfl_file_lease_coordinator_acquire_written);
}

static void
sfl_file_lease_coordinator_acquire_read(SflFileLeaseCoordinator *self, SflLeaseCall *call,
					const SflLeaseDoc *doc, const GError *error)
{
	if (doc == NULL) {
		/* cannot tell is never absent: contesting now could overwrite a live leader */
		g_warning("cannot read the lease %s (%s); backing off without contesting",
			  sfl_file_lease_coordinator_path(self), error->message);
		sfl_file_lease_coordinator_contest(self, self->renew_usec);
		return;
	}
	/* held by anyone, a stale lease with our own holder string included: wait it out */
	if (!sfl_lease_doc_expired(doc, sfl_clock_wall_usec(self->clock))) {
		g_debug("the lease %s is held by %s (epoch %" G_GUINT64_FORMAT ")",
			sfl_file_lease_coordinator_path(self), doc->holder, doc->epoch);
		sfl_file_lease_coordinator_contest(self, self->renew_usec);
		return;
	}
	self->claim_epoch = doc->epoch;
	sfl_coordinator_epoch_floor_async(SFL_COORDINATOR(self), self->chain.cancellable,
					  sfl_file_lease_coordinator_acquire_floor_cb,
					  sfl_file_lease_coordinator_call_new(self));
}

/* --- hold (leader) ------------------------------------------------------------------------ */

static void
sfl_file_lease_coordinator_hold_written(SflFileLeaseCoordinator *self, SflLeaseCall *call,
					const GError *error)
{
	if (error == NULL)
		self->last_ok = call->issued;
	else if (!sfl_lease_renew_write_failed(&self->renew, error, self->last_ok)) {
		sfl_file_lease_coordinator_stand_by(self, FALSE);
		return;
	}
	sfl_lease_chain_schedule(&self->chain, self->renew_usec, sfl_file_lease_coordinator_hold_cb,
				 self);
}

/* renewals keep the epoch: a higher one on disk was foreign and we surrendered already */
static void
sfl_file_lease_coordinator_renew(SflFileLeaseCoordinator *self)
{
	sfl_file_lease_coordinator_write(self, self->epoch,
					 sfl_file_lease_coordinator_hold_written);
}

static void
sfl_file_lease_coordinator_hold_read(SflFileLeaseCoordinator *self, SflLeaseCall *call,
				     const SflLeaseDoc *doc, const GError *error)
{
	gint64 since_confirmed = sfl_file_lease_coordinator_now(self) - self->last_confirmed;

	if (doc == NULL) {
		self->last_read_ours = FALSE;
		if (!sfl_lease_renew_read_failed(&self->renew, error, self->last_confirmed)) {
			sfl_file_lease_coordinator_stand_by(self, FALSE);
			return;
		}
		if (!self->verifying) {
			g_warning("cannot read the lease %s (%s); reading it again in %.3f s",
				  sfl_file_lease_coordinator_path(self), error->message,
				  sfl_lease_secs(self->verify_usec));
			self->verifying = TRUE;
			self->first_failed = TRUE;
			sfl_file_lease_coordinator_read_in(self, self->verify_usec,
							   sfl_file_lease_coordinator_hold_read);
			return;
		}
		if (!self->first_failed) {
			/* the read before showed no lease of ours: nothing left to renew */
			g_warning("the lease %s was missing or not a lease and cannot be re-read "
				  "(%s): giving up leadership without writing",
				  sfl_file_lease_coordinator_path(self), error->message);
			sfl_file_lease_coordinator_stand_by(self, TRUE);
			return;
		}
		g_warning("two consecutive reads of the lease %s failed (%s); renewing within "
			  "ttl (last confirmed %.1f s ago)",
			  sfl_file_lease_coordinator_path(self), error->message,
			  sfl_lease_secs(since_confirmed));
		sfl_file_lease_coordinator_renew(self);
		return;
	}
	if (doc->state == SFL_LEASE_VALID &&
	    (g_strcmp0(doc->holder, self->holder) != 0 || doc->epoch > self->epoch)) {
		g_warning("the lease %s is now held by %s (epoch %" G_GUINT64_FORMAT
			  ", ours %" G_GUINT64_FORMAT "): giving up leadership",
			  sfl_file_lease_coordinator_path(self), doc->holder, doc->epoch,
			  self->epoch);
		sfl_file_lease_coordinator_stand_by(self, FALSE);
		return;
	}
	self->last_confirmed = call->issued;
	self->last_read_ours = doc->state == SFL_LEASE_VALID;
	if (doc->state != SFL_LEASE_VALID && !self->verifying) {
		g_warning("the lease %s is missing or not a lease; reading it again in %.3f s "
			  "before renewing",
			  sfl_file_lease_coordinator_path(self), sfl_lease_secs(self->verify_usec));
		self->verifying = TRUE;
		self->first_failed = FALSE;
		sfl_file_lease_coordinator_read_in(self, self->verify_usec,
						   sfl_file_lease_coordinator_hold_read);
		return;
	}
	if (doc->state != SFL_LEASE_VALID) {
		g_warning("the lease %s is still missing or not a lease: giving up leadership "
			  "(epoch %" G_GUINT64_FORMAT ") and contesting it with a new epoch",
			  sfl_file_lease_coordinator_path(self), self->epoch);
		sfl_file_lease_coordinator_stand_by(self, TRUE);
		return;
	}
	sfl_file_lease_coordinator_renew(self);
}

static void
sfl_file_lease_coordinator_hold_cb(gpointer user_data)
{
	SflFileLeaseCoordinator *self = user_data;

	if (!sfl_lease_renew_awake(&self->renew, self->last_ok)) {
		sfl_file_lease_coordinator_stand_by(self, FALSE);
		return;
	}
	self->verifying = FALSE;
	self->first_failed = FALSE;
	sfl_file_lease_coordinator_read(self, sfl_file_lease_coordinator_hold_read);
}

/* --- SflCoordinator ----------------------------------------------------------------------- */

static void
sfl_file_lease_coordinator_release_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(SflLeaseCall) call = user_data;
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(call->owner);
	g_autoptr(GError) error = NULL;

	sfl_lease_call_completed(call);
	if (!sfl_lease_io_write_finish(self->io, result, &error)) {
		g_debug("cannot release the lease %s: %s; it expires on its own",
			sfl_file_lease_coordinator_path(self), error->message);
		return;
	}
	g_debug("released the lease %s", sfl_file_lease_coordinator_path(self));
}

static void
sfl_file_lease_coordinator_start(SflCoordinator *coordinator)
{
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(coordinator);

	sfl_lease_chain_restart(&self->chain);
	self->last_read_ours = FALSE;
	self->release_on_answer = FALSE;
	/* from the loop, never inside the caller's run_async() */
	sfl_file_lease_coordinator_contest(self, 0);
}

/* its own chain, never cancelled: the run ends without waiting for it */
static void
sfl_file_lease_coordinator_give_back(SflFileLeaseCoordinator *self)
{
	SflLeaseCall *call = NULL;

	sfl_lease_chain_restart(&self->chain);
	call = sfl_file_lease_coordinator_call_new(self);
	sfl_lease_io_write_async(self->io, self->holder, sfl_clock_wall_usec(self->clock),
				 self->epoch, call->cancellable,
				 sfl_file_lease_coordinator_release_cb, call);
}

/*
 * The answer to the renewal a stop found in flight. A sharded handover is decided by a
 * membership round that runs in phase with the renewals, so it often finds one out; leaving
 * the lease to expire made the unit's next owner wait a whole ttl.
 */
static void
sfl_file_lease_coordinator_release_answered(SflFileLeaseCoordinator *self, SflLeaseCall *call,
					    gboolean ours)
{
	self->release_on_answer = FALSE;
	/* nothing else of ours may land after the release, an older chain's write included */
	if (!ours || self->chain.pending != 0 ||
	    !sfl_lease_renew_fresh(&self->renew, self->last_ok)) {
		sfl_lease_chain_restart(&self->chain);
		g_debug("the renewal of the lease %s in flight at the stop did not confirm it; it "
			"expires on its own",
			sfl_file_lease_coordinator_path(self));
		return;
	}
	if (call->step == (GCallback)sfl_file_lease_coordinator_hold_written)
		self->last_ok = call->issued;
	sfl_file_lease_coordinator_give_back(self);
}

static void
sfl_file_lease_coordinator_stop(SflCoordinator *coordinator)
{
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(coordinator);
	/*
	 * hand over early only when it is provably ours: the last read showed our lease, nothing
	 * is in flight that could land after the release, and our lease has not expired (else a
	 * successor may hold it already). One renewal of the current chain in flight (no timer
	 * armed) is waited for instead.
	 */
	gboolean ours = sfl_coordinator_is_leader(coordinator) && self->last_read_ours &&
			sfl_lease_renew_fresh(&self->renew, self->last_ok);

	if (ours && self->chain.timer == NULL && self->chain.pending == 1) {
		self->release_on_answer = TRUE;
		return;
	}
	if (!ours || self->chain.pending != 0) {
		sfl_lease_chain_restart(&self->chain);
		return;
	}
	sfl_file_lease_coordinator_give_back(self);
}

static void
sfl_file_lease_coordinator_demote(SflCoordinator *coordinator)
{
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(coordinator);

	sfl_lease_chain_log_demoted(&self->chain, self->epoch);
	sfl_lease_chain_restart(&self->chain);
	self->last_read_ours = FALSE;
	self->release_on_answer = FALSE;
	sfl_file_lease_coordinator_contest(self, self->renew_usec);
}

/* the base class checks the leadership flag first */
static gboolean
sfl_file_lease_coordinator_check_fence(SflCoordinator *coordinator)
{
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(coordinator);
	return sfl_lease_renew_fresh(&self->renew, self->last_ok);
}

static guint64
sfl_file_lease_coordinator_get_epoch(SflCoordinator *coordinator)
{
	return SFL_FILE_LEASE_COORDINATOR(coordinator)->epoch;
}

static const gchar *
sfl_file_lease_coordinator_get_holder(SflCoordinator *coordinator)
{
	return SFL_FILE_LEASE_COORDINATOR(coordinator)->holder;
}

static void
sfl_file_lease_coordinator_dispose(GObject *object)
{
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(object);

	sfl_lease_chain_dispose(&self->chain);
	G_OBJECT_CLASS(sfl_file_lease_coordinator_parent_class)->dispose(object);
}

static void
sfl_file_lease_coordinator_finalize(GObject *object)
{
	SflFileLeaseCoordinator *self = SFL_FILE_LEASE_COORDINATOR(object);

	g_free(self->holder);
	g_free(self->what);
	g_clear_object(&self->io);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	G_OBJECT_CLASS(sfl_file_lease_coordinator_parent_class)->finalize(object);
}

static void
sfl_file_lease_coordinator_class_init(SflFileLeaseCoordinatorClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflCoordinatorClass *coordinator_class = SFL_COORDINATOR_CLASS(klass);

	object_class->dispose = sfl_file_lease_coordinator_dispose;
	object_class->finalize = sfl_file_lease_coordinator_finalize;
	coordinator_class->start = sfl_file_lease_coordinator_start;
	coordinator_class->stop = sfl_file_lease_coordinator_stop;
	coordinator_class->demote = sfl_file_lease_coordinator_demote;
	coordinator_class->check_fence = sfl_file_lease_coordinator_check_fence;
	coordinator_class->get_epoch = sfl_file_lease_coordinator_get_epoch;
	coordinator_class->get_holder = sfl_file_lease_coordinator_get_holder;
}

static void
sfl_file_lease_coordinator_init(SflFileLeaseCoordinator *self)
{
}

/**
 * sfl_file_lease_coordinator_new:
 * @path: (nullable): the lease file; may be %NULL when @io is given
 * @ttl_usec: how long a written lease lasts (coordinate.file_lease.ttl)
 * @renew_usec: the loop period and the deadline of each lease operation
 *   (coordinate.file_lease.renew_interval; config validation keeps 2 × renew < ttl)
 * @holder: this replica's id, already resolved (a blank holder_id becomes <hostname>-<pid>
 *   in the caller)
 * @clock: the clocks and timers to run on
 * @io: (nullable): where the lease lives; %NULL for the file at @path
 *
 * The coordinator sets its deadline (renew_interval on @clock) on @io.
 *
 * Returns: (transfer full): a coordinator
 */
SflCoordinator *
sfl_file_lease_coordinator_new(const gchar *path, gint64 ttl_usec, gint64 renew_usec,
			       const gchar *holder, SflClock *clock, SflLeaseIO *io)
{
	SflFileLeaseCoordinator *self;

	g_return_val_if_fail(path != NULL || io != NULL, NULL);
	g_return_val_if_fail(ttl_usec > 0 && renew_usec > 0, NULL);
	g_return_val_if_fail(holder != NULL && holder[0] != '\0', NULL);
	g_return_val_if_fail(clock != NULL, NULL);
	g_return_val_if_fail(io == NULL || SFL_IS_LEASE_IO(io), NULL);

	self = g_object_new(SFL_TYPE_FILE_LEASE_COORDINATOR, NULL);
	self->holder = g_strdup(holder);
	self->ttl_usec = ttl_usec;
	self->renew_usec = renew_usec;
	/* long enough for a concurrent claim to land, short against the ttl */
	self->verify_usec = MIN(G_USEC_PER_SEC, MAX(50 * 1000, renew_usec / 10));
	self->clock = sfl_clock_ref(clock);
	sfl_lease_chain_init(&self->chain, self->clock, G_LOG_DOMAIN);
	self->io = io != NULL ? g_object_ref(io) : sfl_lease_io_new(path);
	sfl_lease_io_set_deadline(self->io, self->clock, renew_usec);
	self->what = g_strdup_printf("lease %s", sfl_file_lease_coordinator_path(self));
	/* a write replaces the file whatever it held: only a read can show the lease lost */
	self->renew = (SflLeaseRenewPolicy){
		.clock = self->clock,
		.log_domain = G_LOG_DOMAIN,
		.what = self->what,
		.lifetime_name = "ttl",
		.lifetime_usec = ttl_usec,
		.margin_usec = 0,
		.conditional = FALSE,
		.lost_how = NULL,
	};
	return SFL_COORDINATOR(self);
}
