/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-http.h"
#include "sfl-sink.h"

G_BEGIN_DECLS

/* test and fuzz hooks; nothing in the service includes this header */

SflSinkResult *sfl_loki_sink_classify(const SflHttpResponse *response) G_GNUC_WARN_UNUSED_RESULT;
GArray *sfl_loki_sink_judge(guint status, const gchar *body, gsize len,
			    const SflBatch *batch) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
