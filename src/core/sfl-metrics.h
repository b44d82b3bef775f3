/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * SflMetrics: the process's metrics registry (the names of docs/operations/metrics.md).
 *
 * A family is one metric name with a fixed list of label names; a series is one family with
 * one tuple of label values. Callers look a series up once (get-or-create, may allocate) and
 * keep the pointer: updating a series is lock-free and never allocates, from any thread.
 * Series per family are bounded: past SFL_METRICS_MAX_SERIES distinct tuples, lookups return
 * one shared overflow series whose label values are all "other" (and a warning is logged
 * once), so a runaway label can never grow memory without bound.
 *
 * Names are given without the Prometheus suffixes; the renderer adds `_total` to counters and
 * `_bucket`/`_sum`/`_count` to histograms. Every series ever created is rendered on every
 * scrape (no silent gauges, SFL-0006).
 */

#define SFL_METRICS_MAX_SERIES 1000

typedef struct _SflMetrics SflMetrics;
typedef struct _SflMetricFamily SflMetricFamily;
typedef struct _SflSeries SflSeries;

typedef enum {
	SFL_METRIC_COUNTER,
	SFL_METRIC_GAUGE,
	SFL_METRIC_HISTOGRAM,
} SflMetricType;

SflMetrics *sfl_metrics_new(void) G_GNUC_WARN_UNUSED_RESULT;
SflMetrics *sfl_metrics_ref(SflMetrics *self);
void sfl_metrics_unref(SflMetrics *self);

/* registering the same name twice returns the same family (same type and labels required) */
SflMetricFamily *sfl_metrics_counter(SflMetrics *self, const gchar *name, const gchar *help,
				     const gchar *const *label_names);
SflMetricFamily *sfl_metrics_gauge(SflMetrics *self, const gchar *name, const gchar *help,
				   const gchar *const *label_names);
/* @bounds: ascending upper bounds, without +Inf */
SflMetricFamily *
sfl_metrics_histogram(SflMetrics *self, const gchar *name, const gchar *help,
		      const gchar *const *label_names, const gdouble *bounds, guint n_bounds);

/* @label_values: as many as the family has label names (NULL when it has none) */
SflSeries *sfl_metric_family_series(SflMetricFamily *family, const gchar *const *label_values);

/* counters: @value >= 0; gauges: any finite or infinite @value (adds to the current value) */
void sfl_series_add(SflSeries *series, gdouble value);
void sfl_series_inc(SflSeries *series); /* counters and gauges */
/* gauges */
void sfl_series_set(SflSeries *series, gdouble value);
/* histograms */
void sfl_series_observe(SflSeries *series, gdouble value);
gdouble sfl_series_get(SflSeries *series);	 /* counter/gauge value; histogram sum */
guint64 sfl_series_get_count(SflSeries *series); /* histogram count */
/* histogram: observations in bucket @index alone (not cumulative); @index == n_bounds is the
 * bucket above the last bound (+Inf) */
guint64 sfl_series_get_bucket(SflSeries *series, guint index);

/* Prometheus text exposition format 0.0.4 */
gchar *sfl_metrics_render_prometheus(SflMetrics *self) G_GNUC_WARN_UNUSED_RESULT;

/* for exporters (OTLP): every family, then every series of it, in registration order */
typedef void (*SflMetricsVisitFunc)(SflMetricFamily *family, SflSeries *series, gpointer user_data);
void sfl_metrics_foreach(SflMetrics *self, SflMetricsVisitFunc func, gpointer user_data);
const gchar *sfl_metric_family_get_name(SflMetricFamily *family);
SflMetricType sfl_metric_family_get_type(SflMetricFamily *family);
const gchar *const *sfl_metric_family_get_label_names(SflMetricFamily *family);
const gchar *sfl_metric_family_get_help(SflMetricFamily *family);
/* histograms: the ascending bounds without +Inf (NULL and 0 for other types) */
const gdouble *sfl_metric_family_get_bounds(SflMetricFamily *family, guint *n_bounds);
const gchar *const *sfl_series_get_label_values(SflSeries *series);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflMetrics, sfl_metrics_unref)

G_END_DECLS
