/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * SflMemberView: which replicas are live members of a sharded group, judged from what this
 * replica read of their membership records (coordinate.sharding). A record
 * carries an opaque version that its owner changes at every renewal; a member is live while
 * its version changed within one ttl on *this* replica's monotonic clock, never by comparing
 * another host's wall clock (docs/architecture.md, the HA rules). A record seen for the first
 * time counts as just changed, so a replica that starts does not declare the others dead
 * before it watched them for a ttl. A failed listing is "cannot tell", never "gone": the caller
 * does not observe, and the others' ages are judged at the last complete listing, so an outage
 * of this replica's reads declares nobody dead. This replica is live while its own last
 * confirmed publish is within the ttl. Pure bookkeeping: times are arguments.
 */
typedef struct _SflMemberView SflMemberView;

typedef struct {
	const gchar *holder;
	const gchar *version;
} SflMemberRecord;

SflMemberView *
sfl_member_view_new(const gchar *self_holder, gint64 ttl_usec) G_GNUC_WARN_UNUSED_RESULT;
void sfl_member_view_free(SflMemberView *view);

/* one complete listing read at @now_usec: records missing from it are forgotten */
void sfl_member_view_observe(SflMemberView *view, gint64 now_usec, const SflMemberRecord *records,
			     guint n_records);
/* this replica's own record was written (and so is current) at @now_usec */
void sfl_member_view_confirm_self(SflMemberView *view, gint64 now_usec);

/* the live members at @now_usec, sorted (transfer full; element-type utf8) */
GPtrArray *sfl_member_view_live(SflMemberView *view, gint64 now_usec) G_GNUC_WARN_UNUSED_RESULT;
/* the other holders whose record had not changed for @stale_usec at the last listing (a
 * cleanup may remove their records) */
GPtrArray *sfl_member_view_dead(SflMemberView *view, gint64 stale_usec) G_GNUC_WARN_UNUSED_RESULT;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflMemberView, sfl_member_view_free)

G_END_DECLS
