/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-clock.h"

G_BEGIN_DECLS

/*
 * The membership of a sharded group (coordinate.sharding): every replica
 * keeps a record of its own, rewritten every renew interval with a new sequence number, and
 * lists everyone's; sfl-member-view.c judges who is live from what it read.
 */

/* one listed record: the version is opaque, changed by its owner at every renewal */
typedef struct {
	gchar *holder;
	gchar *version;
} SflMemberEntry;

void sfl_member_entry_free(SflMemberEntry *entry);

/*
 * SflMemberStore: where the records live. publish writes this replica's record (whole);
 * list returns every record (element-type SflMemberEntry) or an error meaning "cannot tell";
 * remove deletes a record (a clean stop's own, or a long-dead one's). The operations of one
 * store never overlap: the driver waits for each.
 */
#define SFL_TYPE_MEMBER_STORE (sfl_member_store_get_type())
G_DECLARE_DERIVABLE_TYPE(SflMemberStore, sfl_member_store, SFL, MEMBER_STORE, GObject)

struct _SflMemberStoreClass {
	GObjectClass parent_class;

	void (*publish_async)(SflMemberStore *self, const gchar *holder, guint64 seq,
			      GCancellable *cancellable, GAsyncReadyCallback callback,
			      gpointer user_data);
	gboolean (*publish_finish)(SflMemberStore *self, GAsyncResult *result, GError **error);
	void (*list_async)(SflMemberStore *self, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data);
	GPtrArray *(*list_finish)(SflMemberStore *self, GAsyncResult *result, GError **error);
	void (*remove_async)(SflMemberStore *self, const gchar *holder, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data);
	gboolean (*remove_finish)(SflMemberStore *self, GAsyncResult *result, GError **error);

	gpointer padding[8];
};

/* a directory on shared storage, one `<holder, escaped>.json` per member */
SflMemberStore *sfl_file_member_store_new(const gchar *dir) G_GNUC_WARN_UNUSED_RESULT;

/*
 * SflMembership: the loop. Every @renew_usec on @clock: publish the own record, list, observe;
 * when the live set changed, @changed runs with it (sorted holders). Records not changed for
 * 10 ttls are removed. stop() removes the own record, best effort.
 */
typedef struct _SflMembership SflMembership;
typedef void (*SflMembershipChangedFunc)(SflMembership *membership, const GPtrArray *live,
					 gpointer user_data);

SflMembership *
sfl_membership_new(SflMemberStore *store, const gchar *holder, SflClock *clock, gint64 ttl_usec,
		   gint64 renew_usec, GMainContext *context) G_GNUC_WARN_UNUSED_RESULT;
void sfl_membership_set_changed_func(SflMembership *self, SflMembershipChangedFunc func,
				     gpointer user_data);
void sfl_membership_start(SflMembership *self);
/* the live members as of the last round (transfer none) */
const GPtrArray *sfl_membership_get_live(SflMembership *self);
/* a round's store operation is in flight (worker threads finish in real time) */
gboolean sfl_membership_is_busy(SflMembership *self);
void sfl_membership_stop(SflMembership *self);
void sfl_membership_free(SflMembership *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflMembership, sfl_membership_free)

G_END_DECLS
