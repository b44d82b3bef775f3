/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-config.h"
#include "sfl-curl-loop.h"
#include "sfl-sink.h"

G_BEGIN_DECLS

/*
 * SflLokiSink: pushes batches to Loki's /loki/api/v1/push
 * (docs/internals/wire-notes.md, "Loki push").
 *
 * - Body from sfl_loki_encode() with the configured encoding and compression; a batch with no
 *   real entries finishes OK without a request.
 * - Headers (docs/deployment/network.md): Content-Type and Content-Encoding from the encoder; with
 * a token, Authorization Basic base64("<tenant or empty>:<token>") and no X-Scope-OrgID; else with
 * a tenant, X-Scope-OrgID; else nothing. Credentials in the URL (https://user:token@host/...)
 *   replace the computed Authorization (curl sends them as Basic).
 * - TLS: sink.loki.ca_file, when set, is the only CA trusted for Loki; without it the loop's
 *   default trust (SSL_CERT_FILE / SSL_CERT_DIR, else the system store).
 * - Classification: 2xx OK; 400 REJECTED "bad_request"; 413 REJECTED "oversized_413";
 *   everything else, 401/403/404 and transport failures included, RETRY (429 and 503 with the
 *   peer's Retry-After, seconds or HTTP-date, capped at 60 s). A 400, or a 429 worded as the
 *   ingester's list, whose body names entries of the batch (sfl-loki-rejection.h) and nothing
 *   unreadable is PARTIAL "partial" with a verdict per entry instead.
 * - The token is registered with sfl_redact and never appears in a log line or a result.
 */

#define SFL_TYPE_LOKI_SINK (sfl_loki_sink_get_type())
G_DECLARE_FINAL_TYPE(SflLokiSink, sfl_loki_sink, SFL, LOKI_SINK, SflSink)

#define SFL_LOKI_SINK_RETRY_AFTER_CAP_USEC (60 * G_USEC_PER_SEC)
#define SFL_LOKI_SINK_DETAIL_MAX	   512

SflSink *sfl_loki_sink_new(SflCurlLoop *loop, const SflLokiConfig *cfg,
			   GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_loki_sink_set_timeout(SflLokiSink *self, guint timeout_ms);
gint64 sfl_loki_sink_parse_retry_after(const gchar *value, gint64 now_usec);

G_END_DECLS
