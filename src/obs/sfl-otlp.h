/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-clock.h"
#include "sfl-config.h"
#include "sfl-curl-loop.h"
#include "sfl-metrics.h"

G_BEGIN_DECLS

/*
 * OTLP/HTTP metrics push (`service.telemetry.*`, docs/operations/metrics.md "OTLP push").
 *
 * The registry is sent as one opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest
 * (protobuf, encoded by hand) to `endpoint` exactly as configured (it is the full metrics URL,
 * nothing is appended), with Content-Type application/x-protobuf, every `export_interval`
 * and once more on orderly shutdown. Temporality is cumulative: every point covers the time
 * since the process started. Names are the registry's, unsuffixed (`sf2loki_loki_push`); an
 * OTLP→Prometheus translation adds `_total`, `_bucket`/`_sum`/`_count`. The version appears
 * only as the resource attribute service.version and on sf2loki_build_info (SFL-0001).
 */

#define SFL_OTLP_CONTENT_TYPE "application/x-protobuf"

/*
 * The request headers as "Name: value" strings (element free: g_free), Content-Type not
 * included: for auth basic, `Authorization: Basic base64(user:token)` with user =
 * basic_auth_user or else the Loki tenant_id and token = basic_auth_token, else the contents
 * of basic_auth_token_file, else the Loki auth_token (omitted when either is empty); then
 * `headers`, each replacing a computed header of the same name (case-insensitive). The token
 * and its base64 form are registered with the log redactor.
 *
 * Fails (SFL_ERROR_INVALID_CONFIG, naming the key) when basic_auth_token_file must be read and
 * cannot be, or a `headers` entry has a line break (or a ':' in its name).
 */
GPtrArray *sfl_otlp_headers(const SflTelemetryConfig *telemetry, const SflLokiConfig *loki,
			    GError **error) G_GNUC_WARN_UNUSED_RESULT;

/*
 * The request body for the registry's current values: one ResourceMetrics (service.name =
 * sf2loki, service.version = the build's version, then @resource_attributes, a configured
 * key replacing a built-in one), one ScopeMetrics (scope "sf2loki"), one Metric per family with a
 * data point per series. Counters are monotonic cumulative Sums, gauges Gauges, histograms
 * cumulative explicit-bounds Histograms. Safe to call while other threads update series.
 */
GBytes *
sfl_otlp_encode(SflMetrics *metrics, const GPtrArray *resource_attributes,
		gint64 start_time_unix_nano, gint64 time_unix_nano) G_GNUC_WARN_UNUSED_RESULT;

typedef struct _SflOtlpExporter SflOtlpExporter;

/*
 * An exporter pushing @metrics with the configuration @telemetry (copied; @loki only for the
 * inherited credentials). Timing uses @clock: the start time is the clock's wall time at
 * creation, each point's time the wall time of its export. Nothing is sent before
 * sfl_otlp_exporter_start(). Main-thread object; requests run on @loop and never block.
 */
SflOtlpExporter *
sfl_otlp_exporter_new(SflCurlLoop *loop, SflMetrics *metrics, SflClock *clock,
		      const SflTelemetryConfig *telemetry, const SflLokiConfig *loki,
		      GError **error) G_GNUC_WARN_UNUSED_RESULT;
/* called on the main thread right before each export, so the owner can bring the gauges that
 * describe the present (leader, queue depth) up to date as a scrape of /metrics does */
typedef void (*SflOtlpExporterRefreshFunc)(gpointer user_data);
void sfl_otlp_exporter_set_refresh(SflOtlpExporter *self, SflOtlpExporterRefreshFunc func,
				   gpointer user_data);
/* schedules an export every export_interval from now */
void sfl_otlp_exporter_start(SflOtlpExporter *self);
/* stops the timer and sends one last export, finishing when it is answered or fails (an export
 * still in flight is waited for first); never fails: a failure is logged */
void sfl_otlp_exporter_shutdown_async(SflOtlpExporter *self, GAsyncReadyCallback callback,
				      gpointer user_data);
void sfl_otlp_exporter_shutdown_finish(SflOtlpExporter *self, GAsyncResult *result);
/* exports completed with a 2xx answer and exports that failed, for tests and /statusz */
guint64 sfl_otlp_exporter_get_successes(SflOtlpExporter *self);
guint64 sfl_otlp_exporter_get_failures(SflOtlpExporter *self);
/* cancels a request in flight without waiting for it */
void sfl_otlp_exporter_free(SflOtlpExporter *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflOtlpExporter, sfl_otlp_exporter_free)

G_END_DECLS
