/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The names of the per-unit leases of a sharded group. A unit id
 * is an arbitrary string (`pubsub:/event/LoginEventStream`, `org=prod:elf:Login`); the lead
 * builds each unit's coordinator with the existing object / k8s lease constructors and these
 * names. Pure functions, the same on every platform and release (peers must agree).
 */

/* `<lease key>.units/<unit, anything but [A-Za-z0-9._-] as %XX>` */
gchar *
sfl_unit_lease_object_key(const gchar *lease_key, const gchar *unit) G_GNUC_WARN_UNUSED_RESULT;
/* `<lease name>-u-<16 hex of the unit's hash>`, a DNS-1123 label (lowercase, <= 63 chars:
 * a long lease name is cut, and a name that ends not alphanumeric there stays valid) */
gchar *
sfl_unit_lease_k8s_name(const gchar *lease_name, const gchar *unit) G_GNUC_WARN_UNUSED_RESULT;
/* a member's record (k8s_lease sharding): `<lease name>-m-<16 hex of the holder's hash>` */
gchar *sfl_unit_lease_k8s_member_name(const gchar *lease_name,
				      const gchar *holder) G_GNUC_WARN_UNUSED_RESULT;
/* the value of the label every member record of the group carries: the lease name as a label
 * value (lowercase, <= 63 chars, ending alphanumeric) */
gchar *sfl_unit_lease_k8s_group_label(const gchar *lease_name) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
