/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-clock.h"
#include "sfl-lease-doc.h"

G_BEGIN_DECLS

/*
 * SflLeaseIO: where the file-lease coordinator reads and writes its lease document.
 *
 * Contract
 *  - A read has three outcomes: absent (doc->state SFL_LEASE_ABSENT), a document (VALID, or
 *    INVALID for content that is not a lease, which is claimable), or an error. An error means
 *    "cannot tell" (permission, I/O, a stalled disk) and callers must never take it for absent.
 *  - A write replaces the whole document durably and atomically: readers see the old or the
 *    new version, never a mix. An error means the write may or may not have landed.
 *  - Deadline: with one set (sfl_lease_io_set_deadline), an operation the implementation has
 *    not completed in time fails with SFL_ERROR_TRANSIENT and its late result is dropped. Until
 *    that late operation has finished, new operations fail at once the same way, so a stalled
 *    NFS mount never piles up blocked worker threads.
 *  - Cancellation completes the operation at once with G_IO_ERROR_CANCELLED.
 *  - A write whose caller was answered (deadline or cancellation) never lands later: the file
 *    implementation abandons it right before the rename, and also once the deadline has passed
 *    in real time (a worker that woke up before the main loop did). Only a stall inside the
 *    rename call itself can still let a late write through.
 *
 * Implementations: the base class is the file implementation (durable atomic replace of
 * "path" with sfl_platform_replace_file_gated, reads with sfl_lease_doc_read, both in worker
 * threads). A subclass (the tests' fault-injecting fake) overrides all four vfuncs; they are
 * called only through the public wrappers, which add the deadline, and must complete on the
 * caller's thread-default main context, never from inside the _async call.
 *
 * Threading: one operation at a time, from the main thread.
 */

#define SFL_TYPE_LEASE_IO (sfl_lease_io_get_type())
G_DECLARE_DERIVABLE_TYPE(SflLeaseIO, sfl_lease_io, SFL, LEASE_IO, GObject)

struct _SflLeaseIOClass {
	GObjectClass parent_class;

	void (*read_async)(SflLeaseIO *self, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data);
	/* fills @doc (caller-allocated, cleared) or returns FALSE with "cannot tell" */
	gboolean (*read_finish)(SflLeaseIO *self, GAsyncResult *result, SflLeaseDoc *doc,
				GError **error);
	/* @data is the complete serialized document */
	void (*write_async)(SflLeaseIO *self, GBytes *data, GCancellable *cancellable,
			    GAsyncReadyCallback callback, gpointer user_data);
	gboolean (*write_finish)(SflLeaseIO *self, GAsyncResult *result, GError **error);

	gpointer padding[8];
};

SflLeaseIO *sfl_lease_io_new(const gchar *path);
const gchar *sfl_lease_io_get_path(SflLeaseIO *self);
void sfl_lease_io_set_deadline(SflLeaseIO *self, SflClock *clock, gint64 deadline_usec);

void sfl_lease_io_read_async(SflLeaseIO *self, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data);
gboolean
sfl_lease_io_read_finish(SflLeaseIO *self, GAsyncResult *result, SflLeaseDoc *doc, GError **error);

void sfl_lease_io_write_async(SflLeaseIO *self, const gchar *holder, gint64 expires_at_usec,
			      guint64 epoch, GCancellable *cancellable,
			      GAsyncReadyCallback callback, gpointer user_data);
gboolean sfl_lease_io_write_finish(SflLeaseIO *self, GAsyncResult *result, GError **error);

G_END_DECLS
