/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-clock.h"
#include "sfl-kube-client.h"
#include "sfl-membership.h"

G_BEGIN_DECLS

/*
 * The membership records of a sharded group on k8s_lease: one coordination.k8s.io/v1 Lease per
 * member, named `<lease name>-m-<16 hex of the holder's hash>` and labelled
 * `sf2loki.io/member-of=<lease name>` (cut to a label value), so that one labelSelector list
 * reads every record of the group and nothing else. spec.holderIdentity names the member;
 * spec.renewTime and the annotation `sf2loki.io/seq` change at every renewal, so the Lease's
 * resourceVersion does too (the API server skips an update that changes nothing), and that
 * version is all the view needs. Renewals are replaces conditional on the version this replica
 * last wrote; a dead member's Lease is deleted only with the version the last listing saw as
 * a precondition. The RBAC this needs beyond the single lease's: list and delete on leases.
 */
SflMemberStore *
sfl_k8s_member_store_new(SflKubeClient *client, const gchar *namespace_, const gchar *lease_name,
			 gint64 members_ttl_usec, guint timeout_ms,
			 SflClock *clock) G_GNUC_WARN_UNUSED_RESULT;

#define SFL_K8S_MEMBER_LABEL "sf2loki.io/member-of"
#define SFL_K8S_MEMBER_SEQ   "sf2loki.io/seq"

G_END_DECLS
