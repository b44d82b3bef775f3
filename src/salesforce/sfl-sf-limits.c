/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflSfLimits"

#include "config.h"

#include "sfl-sf-limits.h"

#include <jansson.h>

#include "sfl-gsource.h"

/* while polls keep failing, one summary line this often after the first WARNING */
#define SFL_SF_LIMITS_LOG_USEC (10 * 60 * G_USEC_PER_SEC)

struct _SflSfLimits {
	SflSfRest *rest;
	SflClock *clock;
	gint64 interval;
	gchar *org;
	SflMetricFamily *max;
	SflMetricFamily *remaining;
	SflSeries *errors;
	GCancellable *cancellable;
	GSource *timer;
	guint64 polls;
	guint64 failures;	  /* consecutive */
	gint64 failure_logged_at; /* monotonic */
};

static void sfl_sf_limits_schedule(SflSfLimits *self, gint64 delay);

static void
sfl_sf_limits_record(SflSfLimits *self, json_t *doc)
{
	const gchar *name = NULL;
	json_t *limit = NULL;

	json_object_foreach (doc, name, limit) {
		json_t *max = json_object_get(limit, "Max");
		json_t *remaining = json_object_get(limit, "Remaining");
		const gchar *values[] = { name, self->org, NULL };

		if (!json_is_integer(max) || !json_is_integer(remaining))
			continue;
		sfl_series_set(sfl_metric_family_series(self->max, values),
			       (gdouble)json_integer_value(max));
		sfl_series_set(sfl_metric_family_series(self->remaining, values),
			       (gdouble)json_integer_value(remaining));
	}
}

static void
sfl_sf_limits_failed(SflSfLimits *self, const GError *error)
{
	gint64 now = sfl_clock_monotonic_usec(self->clock);

	sfl_series_inc(self->errors);
	self->failures++;
	if (self->failures == 1) {
		self->failure_logged_at = now;
		g_warning("%s%s%sSalesforce limits poll failed; retrying every interval: %s",
			  self->org != NULL ? "org " : "", self->org != NULL ? self->org : "",
			  self->org != NULL ? ": " : "", error->message);
	} else if (now - self->failure_logged_at >= SFL_SF_LIMITS_LOG_USEC) {
		self->failure_logged_at = now;
		g_warning("%s%s%sSalesforce limits polls still failing (%" G_GUINT64_FORMAT
			  " in a row): %s",
			  self->org != NULL ? "org " : "", self->org != NULL ? self->org : "",
			  self->org != NULL ? ": " : "", self->failures, error->message);
	}
}

static void
sfl_sf_limits_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflSfLimits *self = user_data;
	g_autoptr(GError) error = NULL;
	json_t *doc = sfl_sf_rest_get_finish(SFL_SF_REST(source), result, &error);

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return; /* freed: self is gone */
	self->polls++;
	if (doc == NULL) {
		sfl_sf_limits_failed(self, error);
	} else {
		if (self->failures > 0)
			g_message("Salesforce limits poll recovered after %" G_GUINT64_FORMAT
				  " failure(s)",
				  self->failures);
		self->failures = 0;
		sfl_sf_limits_record(self, doc);
		json_decref(doc);
	}
	sfl_sf_limits_schedule(self, self->interval);
}

static void
sfl_sf_limits_timer_cb(gpointer user_data)
{
	SflSfLimits *self = user_data;

	sfl_sf_rest_get_async(self->rest, "/limits", self->cancellable, sfl_sf_limits_done_cb,
			      self);
}

static void
sfl_sf_limits_schedule(SflSfLimits *self, gint64 delay)
{
	sfl_clock_once(self->clock, &self->timer, delay, NULL, sfl_sf_limits_timer_cb, self, NULL);
}

/**
 * sfl_sf_limits_new:
 * @rest: the org's REST client
 * @clock: the clock the interval runs on
 * @interval_usec: salesforce.limits.poll_interval
 * @metrics: the registry
 * @org: (nullable): the org's name in multi-org mode
 *
 * Returns: (transfer full): a running poller; the first poll is due at once
 */
SflSfLimits *
sfl_sf_limits_new(SflSfRest *rest, SflClock *clock, gint64 interval_usec, SflMetrics *metrics,
		  const gchar *org)
{
	SflSfLimits *self = g_new0(SflSfLimits, 1);
	const gchar *labels[] = { "limit_name", org != NULL ? "org" : NULL, NULL };
	const gchar *org_label[] = { org != NULL ? "org" : NULL, NULL };
	const gchar *org_value[] = { org, NULL };

	self->rest = g_object_ref(rest);
	self->clock = sfl_clock_ref(clock);
	self->interval = MAX(interval_usec, G_USEC_PER_SEC);
	self->org = g_strdup(org);
	self->cancellable = g_cancellable_new();
	self->max = sfl_metrics_gauge(metrics, "sf2loki_salesforce_limit_max",
				      "An org limit's maximum, from /limits.", labels);
	self->remaining =
		sfl_metrics_gauge(metrics, "sf2loki_salesforce_limit_remaining",
				  "An org limit's remaining amount, from /limits.", labels);
	self->errors = sfl_metric_family_series(
		sfl_metrics_counter(metrics, "sf2loki_salesforce_limits_poll_errors",
				    "Failed /limits polls.", org_label),
		org != NULL ? org_value : NULL);
	sfl_sf_limits_schedule(self, 0);
	return self;
}

void
sfl_sf_limits_free(SflSfLimits *self)
{
	if (self == NULL)
		return;
	/* the call in flight completes with CANCELLED and must not touch us */
	g_cancellable_cancel(self->cancellable);
	sfl_clear_source(&self->timer);
	g_clear_object(&self->cancellable);
	g_clear_object(&self->rest);
	sfl_clock_unref(self->clock);
	g_free(self->org);
	g_free(self);
}

guint64
sfl_sf_limits_get_polls(SflSfLimits *self)
{
	return self->polls;
}
