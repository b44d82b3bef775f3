/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-membership.h"
#include "sfl-object-client.h"

G_BEGIN_DECLS

/*
 * The membership records of a sharded group in an object store (s3_lease, gcs_lease): one
 * object per member, `<prefix><holder, anything but [A-Za-z0-9._-] as %XX>.json`, holding
 * {"holder", "seq"}. A listing reads only the bucket's index (keys and versions, no bodies):
 * every renewal rewrites the body with a new sequence number, so the object's version (an S3
 * ETag, a GCS generation) changes with it, and that is all the view needs. Writes are
 * conditional on the version this replica last wrote, so no unconditional put is needed; a
 * dead member's record is removed only if it is still the version the last listing saw.
 * Each request is bounded by the client's own timeout.
 */
SflMemberStore *
sfl_object_member_store_new(SflObjectClient *client, const gchar *prefix) G_GNUC_WARN_UNUSED_RESULT;

/* `<prefix><holder, escaped>.json` */
gchar *sfl_object_member_key(const gchar *prefix, const gchar *holder) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
