/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "sf2loki-run"

#include "config.h"

#include "sfl-run-obs.h"

#include <string.h>

#include "sfl-kinds.h"
#include "sfl-shape.h"

/* a position longer than this is cut in /statusz: an id window can be kilobytes */
#define SFL_RUN_OBS_POSITION_MAX 160

typedef struct {
	gchar *value;
	gint64 committed_at; /* wall clock, microseconds */
} SflCommitted;

struct _SflRunObs {
	const SflConfig *config;
	SflMetrics *metrics;
	gboolean multi_org;
	GHashTable *committed; /* key -> SflCommitted */
	SflMetricFamily *watermark;
	SflMetricFamily *replay_commit;
};

static void
sfl_committed_free(gpointer data)
{
	SflCommitted *c = data;
	g_free(c->value);
	g_free(c);
}

/**
 * sfl_run_obs_new:
 * @config: the run's configuration (must outlive the object)
 * @metrics: the registry
 *
 * Returns: (transfer full): a new tracker
 */
SflRunObs *
sfl_run_obs_new(const SflConfig *config, SflMetrics *metrics)
{
	SflRunObs *self = g_new0(SflRunObs, 1);
	const gchar *single[] = { "source", "object", NULL };
	const gchar *multi[] = { "source", "object", "org", NULL };
	const gchar *topic[] = { "topic", NULL };
	const gchar *topic_org[] = { "topic", "org", NULL };

	self->config = config;
	self->metrics = sfl_metrics_ref(metrics);
	self->multi_org = config->data.orgs != NULL && config->data.orgs->len > 0;
	self->committed =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, sfl_committed_free);
	/* SFL-0016: multi-org keys get the gauges too, with their org as a label */
	self->watermark =
		sfl_metrics_gauge(metrics, "sf2loki_watermark_timestamp_seconds",
				  "The committed cursor's timestamp, per source and object.",
				  self->multi_org ? multi : single);
	self->replay_commit =
		sfl_metrics_gauge(metrics, "sf2loki_last_replay_commit_timestamp_seconds",
				  "Unix time of the last Pub/Sub replay id commit, per topic.",
				  self->multi_org ? topic_org : topic);
	return self;
}

void
sfl_run_obs_free(SflRunObs *self)
{
	if (self == NULL)
		return;
	g_hash_table_unref(self->committed);
	sfl_metrics_unref(self->metrics);
	g_free(self);
}

/* splits off the multi-org prefix "org=<name>:"; FALSE for a malformed one */
static gboolean
sfl_run_obs_split_key(const gchar *key, gchar **org, const gchar **rest)
{
	const gchar *colon = NULL;

	*org = NULL;
	*rest = key;
	if (!g_str_has_prefix(key, "org="))
		return TRUE;
	colon = strchr(key + 4, ':');
	if (colon == NULL)
		return FALSE;
	*org = g_strndup(key + 4, (gsize)(colon - key - 4));
	*rest = colon + 1;
	return TRUE;
}

/* the source that wrote @key (unprefixed) describes it; FALSE when none claims it */
static gboolean
sfl_run_obs_describe(const gchar *key, const gchar *value, SflCheckpointView *view)
{
	guint n = 0;
	const SflSourceKind *kinds = sfl_source_kinds(&n);

	for (guint i = 0; i < n; i++) {
		if (kinds[i].describe_checkpoint != NULL &&
		    kinds[i].describe_checkpoint(key, value, view))
			return TRUE;
	}
	return FALSE;
}

/* the commit-derived gauges of docs/operations/metrics.md, multi-org keys included (SFL-0016) */
static void
sfl_run_obs_gauges(SflRunObs *self, const gchar *key, const gchar *value, gint64 now)
{
	g_autofree gchar *org = NULL;
	const gchar *rest = NULL;
	SflCheckpointView view = { 0 };
	gdouble seconds = (gdouble)now / G_USEC_PER_SEC;

	if (!sfl_run_obs_split_key(key, &org, &rest))
		return;
	/* a label set is fixed per family: a key of the other mode cannot be shown */
	if ((org != NULL) != self->multi_org)
		return;
	if (!sfl_run_obs_describe(rest, value, &view))
		return;
	if (view.topic != NULL) {
		const gchar *values[] = { view.topic, org, NULL };
		sfl_series_set(sfl_metric_family_series(self->replay_commit, values), seconds);
	} else if (view.source != NULL && view.object != NULL) {
		const gchar *values[] = { view.source, view.object, org, NULL };
		/* a cursor without its time still proves progress: the commit time stands in */
		sfl_series_set(sfl_metric_family_series(self->watermark, values),
			       view.has_time ? view.time_seconds : seconds);
	}
	sfl_checkpoint_view_clear(&view);
}

/**
 * sfl_run_obs_committed:
 * @self: the tracker
 * @doc: the keys and values just written
 * @now_wall_usec: the wall clock
 */
void
sfl_run_obs_committed(SflRunObs *self, const SflStateDoc *doc, gint64 now_wall_usec)
{
	for (guint i = 0; i < sfl_state_doc_size(doc); i++) {
		const gchar *key = sfl_state_doc_key_at(doc, i);
		const gchar *value = sfl_state_doc_get(doc, key);
		SflCommitted *c = NULL;

		if (value == NULL || sfl_state_key_is_reserved(key))
			continue;
		c = g_new0(SflCommitted, 1);
		c->value = g_strdup(value);
		c->committed_at = now_wall_usec;
		g_hash_table_replace(self->committed, g_strdup(key), c);
		sfl_run_obs_gauges(self, key, value, now_wall_usec);
	}
}

/* the part of a cursor a person reads, as its source says; else the value itself (cut) */
static json_t *
sfl_run_obs_position(const gchar *key, const gchar *value)
{
	g_autofree gchar *org = NULL;
	const gchar *rest = NULL;
	SflCheckpointView view = { 0 };

	if (sfl_run_obs_split_key(key, &org, &rest) && sfl_run_obs_describe(rest, value, &view) &&
	    view.position != NULL)
		return g_steal_pointer(&view.position);
	sfl_checkpoint_view_clear(&view);
	if (strlen(value) <= SFL_RUN_OBS_POSITION_MAX)
		return json_string(value);
	{
		/* cut on a character boundary, and say so */
		const gchar *end = g_utf8_find_prev_char(value, value + SFL_RUN_OBS_POSITION_MAX);
		g_autofree gchar *cut = g_strndup(value, (gsize)(end - value));
		g_autofree gchar *text = g_strconcat(cut, "…", NULL);
		return json_string(text);
	}
}

static gint
sfl_run_obs_strcmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const gchar *const *)a, *(const gchar *const *)b);
}

/**
 * sfl_run_obs_checkpoints:
 * @self: the tracker
 * @now_wall_usec: the wall clock
 *
 * Returns: (transfer full): the positions committed by this process, for /statusz
 */
json_t *
sfl_run_obs_checkpoints(SflRunObs *self, gint64 now_wall_usec)
{
	json_t *out = json_array();
	g_autofree gpointer *keys = NULL;
	guint n = 0;

	keys = g_hash_table_get_keys_as_array(self->committed, &n);
	qsort(keys, n, sizeof(gpointer), sfl_run_obs_strcmp);
	for (guint i = 0; i < n; i++) {
		const SflCommitted *c = g_hash_table_lookup(self->committed, keys[i]);
		g_autofree gchar *iso = sfl_format_iso_seconds(c->committed_at);

		json_array_append_new(
			out,
			json_pack("{s:s, s:o, s:s?, s:f}", "key", (const gchar *)keys[i],
				  "position", sfl_run_obs_position(keys[i], c->value),
				  "committed_at", iso, "age_seconds",
				  (gdouble)(now_wall_usec - c->committed_at) / G_USEC_PER_SEC));
	}
	return out;
}

/* "45s" under a minute, else "3m": whole units, truncated (docs/operations/health.md) */
static gchar *
sfl_run_obs_format_for(gint64 usec)
{
	gint64 secs = usec / G_USEC_PER_SEC;

	if (secs < 60)
		return g_strdup_printf("%" G_GINT64_FORMAT "s", secs);
	return g_strdup_printf("%" G_GINT64_FORMAT "m", secs / 60);
}

/**
 * sfl_run_obs_degraded:
 * @self: the tracker
 * @auth_failing_org: (nullable): the first org whose authentication is failing
 * @failing_since: the monotonic start of the longest Loki failure streak, or 0
 * @commit_failing_since: the monotonic start of the longest checkpoint-commit failure streak,
 *   or 0
 * @now_mono_usec: the monotonic clock
 *
 * Returns: (transfer full) (nullable): `degraded: …`, or %NULL when nothing degrades readiness
 */
gchar *
sfl_run_obs_degraded(SflRunObs *self, const gchar *auth_failing_org, gint64 failing_since,
		     gint64 commit_failing_since, gint64 now_mono_usec)
{
	SflDuration threshold = self->config->data.service.unready_after_sink_failing;

	if (auth_failing_org != NULL)
		return g_strdup_printf("degraded: org %s auth failing", auth_failing_org);
	if (threshold > 0 && failing_since > 0 && now_mono_usec - failing_since > threshold) {
		g_autofree gchar *for_ = sfl_run_obs_format_for(now_mono_usec - failing_since);
		return g_strdup_printf("degraded: loki pushes failing for %s", for_);
	}
	/* the data still reaches Loki, but a restart would send it all again */
	if (threshold > 0 && commit_failing_since > 0 &&
	    now_mono_usec - commit_failing_since > threshold) {
		g_autofree gchar *for_ =
			sfl_run_obs_format_for(now_mono_usec - commit_failing_since);
		return g_strdup_printf("degraded: checkpoint commits failing for %s", for_);
	}
	return NULL;
}
