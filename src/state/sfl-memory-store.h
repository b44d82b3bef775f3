/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-checkpoint-store.h"

G_BEGIN_DECLS

/*
 * An in-memory store for tests. Several stores can share one backing to play several
 * replicas writing one document; each keeps its own cache, and writes follow the same
 * fresh-read, fence and merge rules as the file store in coordinated mode.
 */

#define SFL_TYPE_MEMORY_STORE (sfl_memory_store_get_type())
G_DECLARE_FINAL_TYPE(SflMemoryStore, sfl_memory_store, SFL, MEMORY_STORE, SflCheckpointStore)

typedef struct _SflMemoryBacking SflMemoryBacking;

SflMemoryBacking *sfl_memory_backing_new(void);
SflMemoryBacking *sfl_memory_backing_ref(SflMemoryBacking *backing);
void sfl_memory_backing_unref(SflMemoryBacking *backing);
guint sfl_memory_backing_get_write_count(SflMemoryBacking *backing);
void sfl_memory_backing_fail_writes(SflMemoryBacking *backing, guint count);
SflStateDoc *sfl_memory_backing_dup_document(SflMemoryBacking *backing);

SflCheckpointStore *sfl_memory_store_new(SflMemoryBacking *backing);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflMemoryBacking, sfl_memory_backing_unref)

G_END_DECLS
