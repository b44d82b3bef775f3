/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-file-store.h"
#include "sfl-platform.h"

G_BEGIN_DECLS

/* test hook: durable writes made by this instance */
guint sfl_file_store_get_write_count(SflFileStore *self);

/* how the store takes its lock files: sfl_platform_lock_acquire() unless a test swaps it */
typedef SflPlatformStatus (*SflFileStoreLockFunc)(const char *path, SflPlatformLock **out_lock,
						  int64_t *holder_pid, SflPlatformError *error);

/* test hook: takes effect for the next lock; call before the store's first operation */
void sfl_file_store_set_lock_func(SflFileStore *self, SflFileStoreLockFunc func);

G_END_DECLS
