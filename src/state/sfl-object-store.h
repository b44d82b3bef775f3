/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-checkpoint-store.h"
#include "sfl-object-client.h"

G_BEGIN_DECLS

/*
 * The object store (state.store: s3 | gcs): the whole checkpoint document in one object of
 * a bucket, written only with compare-and-swap (docs/deployment/state.md "Object stores",
 * with the SFL-0045 and SFL-0046 fixes).
 *
 *  - Every commit and delete reads the object fresh, applies the epoch fence and merges only
 *    the written keys (sfl_store_apply_write, as the file store does under a coordinator),
 *    then writes it create-only (absent) or on the version just read. A lost compare-and-swap
 *    is SFL_ERROR_CONFLICT and is never retried blindly.
 *  - Each request is retried on SFL_ERROR_TRANSIENT (5xx, throttling, timeouts, resets, a body
 *    that did not arrive whole) up to four attempts with jittered exponential backoff. A write
 *    that meets a conflict may be a retry whose first attempt landed with the response lost
 *    (SFL-0045; curl itself resends a request whose reused connection died, so this is checked
 *    after every conflict): the object is read again and the write counts as done when it
 *    holds exactly the bytes written.
 *  - A body that is not a checkpoint document is SFL_ERROR_CORRUPT and is never overwritten.
 *  - load() serves a cache filled on first use; reset() drops it.
 *
 * The client runs on the main context the store was created on; the base class's worker
 * thread hands each request over to it and waits for the answer.
 */

#define SFL_TYPE_OBJECT_STORE (sfl_object_store_get_type())
G_DECLARE_FINAL_TYPE(SflObjectStore, sfl_object_store, SFL, OBJECT_STORE, SflCheckpointStore)

#define SFL_OBJECT_STORE_ATTEMPTS 4

SflCheckpointStore *sfl_object_store_new(SflObjectClient *client, const gchar *key);
SflObjectClient *sfl_object_store_get_client(SflObjectStore *self);
const gchar *sfl_object_store_get_key(SflObjectStore *self);

G_END_DECLS
