/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

/* placeholder: the implementation lands with issue 7 */
typedef int sfl_placeholder_unit;
