/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-lease-io.h"

G_BEGIN_DECLS

/* test hooks for the file implementation; nothing else includes this header */

/* called in the worker thread right before each blocking read or write, e.g. to stall it */
typedef void (*SflLeaseIOWorkerHook)(gpointer user_data);

void sfl_lease_io_set_worker_hook(SflLeaseIO *self, SflLeaseIOWorkerHook hook, gpointer user_data);

/* implementation operations not finished yet, late (timed-out) ones included */
guint sfl_lease_io_get_busy(SflLeaseIO *self);

G_END_DECLS
