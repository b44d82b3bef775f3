/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* the run's log domain: these lines were the daemon's before terms were objects */
#define G_LOG_DOMAIN "SflRun"

#include "config.h"

#include "sfl-term.h"

#include "sfl-gsource.h"
#include "sfl-kinds.h"
#include "sfl-source.h"

struct _SflTerm {
	SflOrgs *orgs; /* (unowned): the daemon's, which outlives every term */
	SflPipeline *pipeline;
	SflClock *clock;
	GMainContext *context;
	gint64 progress_interval_usec; /* 0: no progress lines */
	GSource *progress_source;
	gint64 progress_at;    /* monotonic time of the last progress line */
	guint64 progress_rows; /* rows read at the last progress line */
	gboolean sources_running;
	GPtrArray *unit_sources;    /* a unit's term: the sources it started (else NULL) */
	SflTermStoppedFunc stopped; /* set by sfl_term_stop() until the drain ends */
	gpointer stopped_data;
	gboolean draining; /* the pipeline's stop has not answered yet */
	gboolean orphaned; /* freed while draining: the drain's end frees it */
};

static void sfl_term_progress_cb(gpointer user_data);

static void
sfl_term_arm_progress(SflTerm *self)
{
	sfl_clock_once(self->clock, &self->progress_source, self->progress_interval_usec,
		       "sf2loki progress line", sfl_term_progress_cb, self, self->context);
}

/* one line now and then, so an operator (or `make run`) sees the data move */
static void
sfl_term_progress_cb(gpointer user_data)
{
	SflTerm *self = user_data;
	SflSourceCounters totals = { 0 };
	SflPipelineCounters counters = { 0 };
	gint64 now = sfl_clock_monotonic_usec(self->clock);
	gdouble secs = (gdouble)(now - self->progress_at) / G_USEC_PER_SEC;

	sfl_orgs_get_totals(self->orgs, &totals);
	sfl_pipeline_get_counters(self->pipeline, &counters);
	g_message("progress: %" G_GUINT64_FORMAT " rows read, %" G_GUINT64_FORMAT
		  " entries pushed, %" G_GUINT64_FORMAT " commits, %u queued, %.0f rows/s, "
		  "%" G_GUINT64_FORMAT " source errors",
		  totals.rows_read, counters.pushed_entries, counters.commits,
		  counters.queue_depth[SFL_LANE_BULK] + counters.queue_depth[SFL_LANE_STREAMING],
		  secs > 0 ? (gdouble)(totals.rows_read - self->progress_rows) / secs : 0.0,
		  totals.errors);
	self->progress_at = now;
	self->progress_rows = totals.rows_read;
	sfl_term_arm_progress(self);
}

/* where the store keeps its document, for the pipeline's log lines (never a credential) */
static gchar *
sfl_term_store_location(const SflConfig *config)
{
	const SflStoreKind *kind = sfl_store_kind_for_config(config, NULL);

	return kind != NULL ? kind->dup_location(config) : NULL;
}

/**
 * sfl_term_start:
 * @args: what the term borrows from the daemon
 *
 * Returns: (transfer full): the running term
 */
SflTerm *
sfl_term_start(const SflTermArgs *args)
{
	SflTerm *self = g_new0(SflTerm, 1);
	const SflConfigData *d = &args->config->data;
	g_autofree gchar *location = sfl_term_store_location(args->config);

	self->orgs = args->orgs;
	self->clock = sfl_clock_ref(args->clock);
	self->context = args->context != NULL ? g_main_context_ref(args->context) : NULL;
	self->pipeline =
		sfl_pipeline_new(&d->sink.loki.batch, args->sink, args->store, args->clock);
	sfl_pipeline_set_callbacks(self->pipeline, args->callbacks, args->callback_data);
	sfl_pipeline_set_store_label(self->pipeline,
				     sfl_config_enum_name("state.store", d->state.store), location);
	sfl_pipeline_set_metrics(self->pipeline, args->metrics);
	sfl_pipeline_set_egress(self->pipeline, args->egress);
	sfl_pipeline_set_deadletter(self->pipeline, args->deadletter);
	self->sources_running = TRUE;
	if (args->unit != NULL) {
		sfl_pipeline_set_unit(self->pipeline, args->unit, args->unit_epoch,
				      args->unit_fence, args->unit_fence_data,
				      args->unit_fence_destroy);
		self->unit_sources = sfl_orgs_start_unit(self->orgs, args->unit, self->pipeline,
							 args->store, args->metrics);
		g_message("unit %s: pipeline run started (epoch %" G_GUINT64_FORMAT ")", args->unit,
			  args->unit_epoch);
		return self;
	}
	sfl_orgs_start_sources(self->orgs, self->pipeline, args->store, args->metrics);
	g_message("leader: pipeline run started with %u source(s)",
		  sfl_orgs_get_n_sources(self->orgs));

	self->progress_at = sfl_clock_monotonic_usec(self->clock);
	self->progress_rows = 0;
	/* durations are microseconds; a tiny one still leaves the loop a millisecond */
	self->progress_interval_usec =
		d->service.progress_interval > 0 ? MAX(d->service.progress_interval, 1000) : 0;
	if (self->progress_interval_usec > 0)
		sfl_term_arm_progress(self);
	return self;
}

SflPipeline *
sfl_term_get_pipeline(SflTerm *self)
{
	return self->pipeline;
}

static void
sfl_term_stop_sources(SflTerm *self)
{
	if (self->sources_running && self->unit_sources != NULL)
		sfl_orgs_stop_unit(self->orgs, self->unit_sources);
	else if (self->sources_running)
		sfl_orgs_stop_sources(self->orgs);
	self->sources_running = FALSE;
	sfl_clear_source(&self->progress_source);
}

static void
sfl_term_pipeline_stopped_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflTerm *self = user_data;
	SflPipelineCounters counters = { 0 };

	sfl_pipeline_stop_finish(SFL_PIPELINE(source), result, NULL);
	self->draining = FALSE;
	if (self->orphaned) {
		sfl_term_free(self);
		return;
	}
	sfl_pipeline_get_counters(self->pipeline, &counters);
	/* may free the term */
	self->stopped(self, &counters, self->stopped_data);
}

void
sfl_term_stop(SflTerm *self, gint64 grace_usec, SflTermStoppedFunc func, gpointer user_data)
{
	g_return_if_fail(self != NULL && func != NULL && self->stopped == NULL);
	self->stopped = func;
	self->stopped_data = user_data;
	self->draining = TRUE;
	/* nothing new enters; what the lanes hold drains within the grace */
	sfl_term_stop_sources(self);
	sfl_pipeline_stop_async(self->pipeline, grace_usec, NULL, sfl_term_pipeline_stopped_cb,
				self);
}

void
sfl_term_free(SflTerm *self)
{
	if (self == NULL)
		return;
	sfl_term_stop_sources(self);
	/* the pipeline's stop still holds the term: it ends the term when it answers */
	if (self->draining) {
		self->orphaned = TRUE;
		return;
	}
	g_clear_object(&self->pipeline);
	g_clear_pointer(&self->unit_sources, g_ptr_array_unref);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_clear_pointer(&self->context, g_main_context_unref);
	g_free(self);
}
