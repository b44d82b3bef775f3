/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-coordinator.h"

G_BEGIN_DECLS

/* coordinate.type: noop — a single instance leads at once and forever */

#define SFL_TYPE_NOOP_COORDINATOR (sfl_noop_coordinator_get_type())
G_DECLARE_FINAL_TYPE(SflNoopCoordinator, sfl_noop_coordinator, SFL, NOOP_COORDINATOR,
		     SflCoordinator)

SflCoordinator *sfl_noop_coordinator_new(const gchar *holder);

G_END_DECLS
