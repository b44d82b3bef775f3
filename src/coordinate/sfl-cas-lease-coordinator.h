/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-coordinator.h"

G_BEGIN_DECLS

/*
 * A lease document as the compare-and-swap engine sees it, whatever the store.
 *
 * What a backend reads: @version (opaque, compared for equality only), @holder (NULL or ""
 * when nobody holds it), @epoch (-1 when unset), @duration_usec (how long a reader waits
 * after the last change before it may claim; <= 0 means claimable at once, e.g. when the
 * store's record lacks a renewal time), @tenure (opaque text the backend wants carried from a
 * claim through its renewals and the release, e.g. a Lease's acquireTime).
 *
 * What the engine asks a backend to write: @holder ("" to release), @epoch, @duration_usec
 * (the engine's), @tenure (NULL on a claim: a new tenure starts), @wall_usec (the writer's
 * wall clock when the write is issued, for renewal or expiry times); @version is ignored.
 */
typedef struct {
	gchar *version;
	gchar *holder;
	gint64 epoch;
	gint64 duration_usec;
	gchar *tenure;
	gint64 wall_usec;
} SflCasLeaseDoc;

SflCasLeaseDoc *sfl_cas_lease_doc_new(void);
SflCasLeaseDoc *sfl_cas_lease_doc_copy(const SflCasLeaseDoc *doc);
void sfl_cas_lease_doc_free(SflCasLeaseDoc *doc);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflCasLeaseDoc, sfl_cas_lease_doc_free)

typedef enum {
	SFL_CAS_LEASE_CREATE_ONLY, /* fails with SFL_ERROR_CONFLICT when the document exists */
	SFL_CAS_LEASE_IF_VERSION,  /* fails with SFL_ERROR_CONFLICT when it changed since */
} SflCasLeasePrecondition;

/*
 * SflCasLeaseBackend: one lease document in a store with conditional writes.
 *
 *  - read: the document, or SFL_ERROR_NOT_FOUND when it does not exist; any other error means
 *    "cannot tell" (the engine never writes on it).
 *  - write: @precondition CREATE_ONLY or IF_VERSION(@version). Success returns what was stored
 *    with its new version; SFL_ERROR_CONFLICT a lost race; SFL_ERROR_NOT_FOUND (IF_VERSION
 *    only) that the document is gone; anything else a failure the engine retries.
 *  - release (optional): gives a held lease up, IF_VERSION(@version); without it the engine
 *    writes @doc (holder "") like any other write. The engine never waits for it.
 *  - describe: "Lease ns/name", "lease s3://bucket/key", for messages.
 *  - flags and lifetime_name (data, set by the implementation's interface init): how the
 *    engine drives this store and what its duration is called in messages ("ttl"; NULL:
 *    "duration", the Kubernetes word).
 *  - Completions run on the caller's main context, never from inside the _async call; each
 *    operation is bounded by the backend's own deadline.
 */
typedef enum {
	SFL_CAS_LEASE_BACKEND_NONE = 0,
	/*
	 * The leader renews with a write conditional on the version its last write produced and
	 * reads nothing first: the precondition is the whole check (object stores, where a read
	 * is one more billed request that tells nothing the write does not). A failed renewal
	 * then says the lease "changed or vanished under us".
	 */
	SFL_CAS_LEASE_BACKEND_RENEW_UNREAD = 1 << 0,
} SflCasLeaseBackendFlags;

#define SFL_TYPE_CAS_LEASE_BACKEND (sfl_cas_lease_backend_get_type())
G_DECLARE_INTERFACE(SflCasLeaseBackend, sfl_cas_lease_backend, SFL, CAS_LEASE_BACKEND, GObject)

struct _SflCasLeaseBackendInterface {
	GTypeInterface parent_iface;

	const gchar *(*describe)(SflCasLeaseBackend *self);
	void (*read_async)(SflCasLeaseBackend *self, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data);
	SflCasLeaseDoc *(*read_finish)(SflCasLeaseBackend *self, GAsyncResult *result,
				       GError **error);
	void (*write_async)(SflCasLeaseBackend *self, const SflCasLeaseDoc *doc,
			    SflCasLeasePrecondition precondition, const gchar *version,
			    GCancellable *cancellable, GAsyncReadyCallback callback,
			    gpointer user_data);
	SflCasLeaseDoc *(*write_finish)(SflCasLeaseBackend *self, GAsyncResult *result,
					GError **error);
	void (*release_async)(SflCasLeaseBackend *self, const SflCasLeaseDoc *doc,
			      const gchar *version, GCancellable *cancellable,
			      GAsyncReadyCallback callback, gpointer user_data);
	gboolean (*release_finish)(SflCasLeaseBackend *self, GAsyncResult *result, GError **error);

	SflCasLeaseBackendFlags flags;
	const gchar *lifetime_name; /* static */
};

/*
 * SflCasLeaseCoordinator: leadership through one lease document with compare-and-swap writes
 * (k8s_lease, s3_lease and gcs_lease).
 *
 *  - Staleness is judged on this replica's monotonic clock since the document's version last
 *    changed (never the writer's clock). A lease is claimable when absent, unheld, without a
 *    duration, or unchanged for its duration.
 *  - Standby: absent → CREATE_ONLY; claimable → IF_VERSION(the version judged stale); a
 *    conflict is a lost race. A read that cannot tell backs off without writing.
 *  - Epoch: a winning write carries max(lease, store floor, own) + 1; renewals keep it.
 *  - Leader: every renew interval, read then IF_VERSION(the freshest version), or with
 *    RENEW_UNREAD only the write, on the version the last write produced. Another holder, a
 *    higher epoch, a conflict or a vanished document surrender at once. Other failures are
 *    tolerated until a duration has passed since the last successful renewal (writes) or the
 *    last confirming read or write (reads); a process that wakes up a duration after its last
 *    renewal surrenders without writing (the renew-failure policy of sfl-lease-common.h).
 *  - check_fence() turns FALSE a duration after the last successful renewal.
 *  - Stop while leading releases the lease (holder cleared, epoch kept) when provably ours.
 */
#define SFL_TYPE_CAS_LEASE_COORDINATOR (sfl_cas_lease_coordinator_get_type())
G_DECLARE_DERIVABLE_TYPE(SflCasLeaseCoordinator, sfl_cas_lease_coordinator, SFL,
			 CAS_LEASE_COORDINATOR, SflCoordinator)

struct _SflCasLeaseCoordinatorClass {
	SflCoordinatorClass parent_class;

	gpointer padding[4];
};

SflCoordinator *
sfl_cas_lease_coordinator_new(SflCasLeaseBackend *backend, gint64 duration_usec, gint64 renew_usec,
			      const gchar *holder, SflClock *clock);
/* for subclasses: @type derives from SFL_TYPE_CAS_LEASE_COORDINATOR; @log_domain is static */
SflCoordinator *
sfl_cas_lease_coordinator_new_full(GType type, const gchar *log_domain, SflCasLeaseBackend *backend,
				   gint64 duration_usec, gint64 renew_usec, const gchar *holder,
				   SflClock *clock);

G_END_DECLS
