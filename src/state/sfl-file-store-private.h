/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-file-store.h"

G_BEGIN_DECLS

/* test hook: durable writes made by this instance */
guint sfl_file_store_get_write_count(SflFileStore *self);

G_END_DECLS
