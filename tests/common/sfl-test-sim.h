/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <jansson.h>

#include "sfl-curl-loop.h"

G_BEGIN_DECLS

/* a control call to a simulator at @base (e.g. http://127.0.0.1:PORT); the parsed answer */
json_t *sfl_test_sim_control(SflCurlLoop *loop, const gchar *base, const gchar *method,
			     const gchar *path, const gchar *json);

G_END_DECLS
