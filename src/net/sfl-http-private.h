/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-http.h"

G_BEGIN_DECLS

/* test and fuzz hooks; nothing in the service includes this header */

SflHttpResponse *
sfl_http_response_new_parsed(guint status, const gchar *header_block, gsize len, GBytes *body,
			     gboolean truncated) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
