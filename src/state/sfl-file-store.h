/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-checkpoint-store.h"

G_BEGIN_DECLS

/*
 * The file store (state.store: file). One JSON document written with the platform layer's
 * durable atomic replace (mode 0600, directory 0700).
 *
 * Exclusive mode (the noop coordinator): <path>.lock is held from open() until the store is
 * finalized, so a second process fails at startup naming the lock and its holder.
 *
 * Coordinated mode (a real coordinator): no instance lock; every commit and delete takes the
 * short <path>.write.lock, re-reads the file, applies the fence (sfl_store_apply_write) and
 * merges only the written keys. On a file system that cannot lock (NFS without lockd) the
 * write lock is skipped after one warning; the fresh read and the fence remain.
 *
 * Error codes: SFL_ERROR_AUTH when the OS refused access, SFL_ERROR_CORRUPT for bad content,
 * SFL_ERROR_CONFLICT for a lock another process holds, SFL_ERROR_TRANSIENT for other I/O.
 */

#define SFL_TYPE_FILE_STORE (sfl_file_store_get_type())
G_DECLARE_FINAL_TYPE(SflFileStore, sfl_file_store, SFL, FILE_STORE, SflCheckpointStore)

/* state files beyond this are refused as corrupt rather than read into memory */
#define SFL_FILE_STORE_MAX_BYTES (256 * 1024 * 1024)

SflCheckpointStore *sfl_file_store_new(const gchar *path, gboolean exclusive);
const gchar *sfl_file_store_get_path(SflFileStore *self);
gchar *sfl_file_store_lock_path(const gchar *path);
void sfl_file_store_set_concurrent(SflFileStore *self, gboolean concurrent);

G_END_DECLS
