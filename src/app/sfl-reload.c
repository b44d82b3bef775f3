/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
/* the run's log domain: reload lines belong with the lifecycle's (docs/configuration.md) */
#define G_LOG_DOMAIN "SflRun"

#include "config.h"

#include "sfl-reload.h"

#include <jansson.h>
#include <string.h>

#include "sfl-app.h"
#include "sfl-autocleanups.h"
#include "sfl-config-gsettings.h"
#include "sfl-config-leaves.h"
#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-orgs.h"
#include "sfl-redact.h"

struct _SflReload {
	SflReloadHooks hooks;
	gpointer user_data;
	GMainContext *context;
	/* what the restart-only parts were built from, and the configuration in force */
	const SflConfig *started;
	SflConfig *config;
	GPtrArray *configs;	 /* (element-type SflConfig): owned, the ones a reload brought in */
	gchar *config_path;	 /* (nullable): the file a reload reads again */
	gchar **envp;		 /* the environment a reload reads again */
	SflConfigWatch *watch;	 /* GSettings "changed" */
	GSource *rewatch_source; /* rebuilds @watch for the configuration in force */
	gboolean reloading;	 /* a reload waits for its term's drain */
	gboolean queued;	 /* another request came meanwhile: one more reload */
	GPtrArray *replies;	 /* (element-type SflHealthReply): answered by this reload */
	GPtrArray *queued_replies;  /* answered by the queued one */
	SflConfig *next;	    /* validated, applied when the drain ends */
	SflSink *sink;		    /* the sink rebuilt for it, or NULL */
	GPtrArray *changed;	    /* the paths it applies */
	GPtrArray *ignored;	    /* the restart-only paths it changed */
	gboolean egress;	    /* rebuild the governor */
	GPtrArray *pending_restart; /* restart-only paths differing from the start */
	gint64 loaded_at;	    /* wall clock, of the configuration in force */
	gchar *last_outcome;	    /* (nullable) */
	GStrv last_errors;	    /* (nullable): the last rejection's lines */
	SflMetricFamily *reloads_total;
	SflMetricFamily *config_info;
	SflSeries *config_info_series;
};

/* @path is @prefix or lies under it ("a.b" under "a", "a[0].b" under "a") */
static gboolean
sfl_reload_path_under(const gchar *path, const gchar *prefix)
{
	gsize n = strlen(prefix);

	return strncmp(path, prefix, n) == 0 &&
	       (path[n] == '\0' || path[n] == '.' || path[n] == '[');
}

/*
 * What a term cannot absorb: whatever the daemon built once at start-up and a term only
 * borrows (the store, the coordinator, the health server, the OTLP push, the token
 * providers and REST clients, the log format, the label guard, the degradation thresholds).
 */
static gboolean
sfl_reload_path_needs_restart(const gchar *path, gboolean same_orgs)
{
	static const gchar *const restart_only[] = {
		"state",
		"coordinate",
		"salesforce",
		"service.health_addr",
		"service.telemetry",
		"service.log_format",
		"service.config_sources",
		"service.gsettings_keyfile",
		"service.unready_after_sink_failing",
		"sink.loki.label_cardinality",
	};

	for (gsize i = 0; i < G_N_ELEMENTS(restart_only); i++)
		if (sfl_reload_path_under(path, restart_only[i]))
			return TRUE;
	if (!g_str_has_prefix(path, "orgs"))
		return FALSE;
	/* an org added, removed or renamed needs its token provider: a restart */
	if (!same_orgs)
		return TRUE;
	{
		const gchar *rest = strchr(path, ']');
		return rest != NULL &&
		       (g_str_has_prefix(rest, "].salesforce") || g_str_has_prefix(rest, "].name"));
	}
}

static void
sfl_reload_finish_replies(GPtrArray *replies, guint status, const gchar *body)
{
	for (guint i = 0; i < replies->len; i++)
		sfl_health_reply_finish(g_ptr_array_index(replies, i), status, body);
	g_ptr_array_set_size(replies, 0);
}

static json_t *
sfl_reload_strings_json(const GPtrArray *paths)
{
	json_t *array = json_array();

	for (guint i = 0; paths != NULL && i < paths->len; i++)
		json_array_append_new(array, json_string(g_ptr_array_index(paths, i)));
	return array;
}

static gchar *
sfl_reload_join_paths(const GPtrArray *paths)
{
	g_autoptr(GString) text = g_string_new(NULL);

	for (guint i = 0; paths != NULL && i < paths->len; i++)
		g_string_append_printf(text, "%s%s", i ? ", " : "",
				       (const gchar *)g_ptr_array_index(paths, i));
	if (text->len == 0)
		g_string_append(text, "none");
	return g_string_free(g_steal_pointer(&text), FALSE);
}

static void
sfl_reload_set_config_info(SflReload *self)
{
	g_autofree gchar *hash = sfl_config_dup_hash(self->config);

	/* one series at 1: the previous hash drops to 0 (the registry keeps its series) */
	if (self->config_info_series != NULL)
		sfl_series_set(self->config_info_series, 0);
	self->config_info_series =
		sfl_metric_family_series(self->config_info, (const gchar *[]){ hash });
	sfl_series_set(self->config_info_series, 1);
}

/*
 * One line per reload, and its answer to every `sf2loki reload` waiting on it. Paths only:
 * values, secrets included, never reach the log or the reply.
 */
static void
sfl_reload_done(SflReload *self, const gchar *outcome, const GPtrArray *changed,
		const GPtrArray *ignored, const GError *error)
{
	g_autofree gchar *changed_text = sfl_reload_join_paths(changed);
	g_autofree gchar *ignored_text = sfl_reload_join_paths(ignored);
	g_autofree gchar *body = NULL;
	g_autofree gchar *hash = sfl_config_dup_hash(self->config);
	json_t *doc = NULL;
	json_t *errors = json_array();

	sfl_series_inc(sfl_metric_family_series(self->reloads_total, (const gchar *[]){ outcome }));
	g_free(self->last_outcome);
	self->last_outcome = g_strdup(outcome);
	g_clear_pointer(&self->last_errors, g_strfreev);
	if (error != NULL) {
		g_autofree gchar *redacted = sfl_redact(error->message);

		self->last_errors = g_strsplit(redacted, "\n", -1);
		/* every line, so the operator sees each key that is wrong */
		for (guint i = 0; self->last_errors[i] != NULL; i++) {
			g_warning("configuration reload rejected: %s", self->last_errors[i]);
			json_array_append_new(errors, json_string(self->last_errors[i]));
		}
		g_log_structured(G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "RELOAD_OUTCOME", outcome,
				 "MESSAGE",
				 "configuration reload rejected; the running configuration stays "
				 "in force");
	} else {
		g_log_structured(G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "RELOAD_OUTCOME", outcome,
				 "CONFIG_HASH", hash, "MESSAGE",
				 "configuration reload %s: changed %s; ignored until restart %s",
				 outcome, changed_text, ignored_text);
	}
	doc = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "outcome", outcome, "hash", hash,
			"changed", sfl_reload_strings_json(changed), "ignored_until_restart",
			sfl_reload_strings_json(ignored), "pending_restart",
			sfl_reload_strings_json(self->pending_restart), "errors", errors);
	body = json_dumps(doc, JSON_SORT_KEYS);
	json_decref(doc);
	/* 422: the request was understood and the configuration is wrong */
	sfl_reload_finish_replies(self->replies, error != NULL ? 422 : 200, body);
}

static void sfl_reload_begin(SflReload *self);

/* the queued request, if any, is the next reload: its replies wait on it */
static void
sfl_reload_next(SflReload *self)
{
	if (!self->queued)
		return;
	self->queued = FALSE;
	g_ptr_array_extend_and_steal(self->replies, g_steal_pointer(&self->queued_replies));
	self->queued_replies = g_ptr_array_new();
	sfl_reload_begin(self);
}

static void
sfl_reload_gsettings_changed(gpointer user_data)
{
	sfl_reload_request(user_data, "GSettings changed", NULL);
}

/* the watch follows the configuration in force: a keyfile created since the start is watched */
static gboolean
sfl_reload_rewatch_cb(gpointer user_data)
{
	SflReload *self = user_data;

	sfl_clear_source(&self->rewatch_source);
	g_clear_pointer(&self->watch, sfl_config_watch_free);
	self->watch = sfl_config_watch_new(self->config, self->context,
					   sfl_reload_gsettings_changed, self);
	return G_SOURCE_REMOVE;
}

/* from the loop, never inside the watch's own signal, which a reload may be running in */
static void
sfl_reload_rewatch(SflReload *self)
{
	if (self->rewatch_source != NULL)
		return;
	self->rewatch_source = g_idle_source_new();
	g_source_set_callback(self->rewatch_source, sfl_reload_rewatch_cb, self, NULL);
	g_source_attach(self->rewatch_source, self->context);
}

/* between terms: swap in what the reload validated, then the leader's next term starts */
static void
sfl_reload_apply(SflReload *self)
{
	SflConfig *next = g_steal_pointer(&self->next);
	g_autoptr(GPtrArray) changed = g_steal_pointer(&self->changed);
	g_autoptr(GPtrArray) ignored = g_steal_pointer(&self->ignored);
	gboolean egress = self->egress;

	g_ptr_array_add(self->configs, next);
	self->config = next;
	self->loaded_at = g_get_real_time();
	self->egress = FALSE;
	self->reloading = FALSE;
	sfl_reload_rewatch(self);
	sfl_reload_set_config_info(self);
	/* same coordinator, same epoch: leadership never noticed the gap */
	self->hooks.apply(self->user_data, next, g_steal_pointer(&self->sink), egress);
	sfl_reload_done(self, "applied", changed, ignored, NULL);
	sfl_reload_next(self);
}

/* loads and validates everything offline; nothing of the running service changes yet */
static SflConfig *
sfl_reload_load(SflReload *self, GError **error)
{
	g_autoptr(SflConfig) next = sfl_config_load(self->config_path, self->envp, error);
	g_autofree gchar *no_source = NULL;

	if (next == NULL || !sfl_orgs_check_config(next, error))
		return NULL;
	no_source = sfl_app_dup_no_source_reason(next);
	if (no_source != NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "%s: a reload keeps the service running, so it needs a source",
			    no_source);
		return NULL;
	}
	return g_steal_pointer(&next);
}

static void
sfl_reload_reject(SflReload *self, const GError *error)
{
	sfl_reload_done(self, "rejected", NULL, NULL, error);
	sfl_reload_next(self);
}

static void
sfl_reload_begin(SflReload *self)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) next = sfl_reload_load(self, &error);
	g_autoptr(GPtrArray) diff = NULL;
	g_autoptr(GPtrArray) since_start = NULL;
	g_autoptr(GPtrArray) pending = NULL;
	g_autoptr(GPtrArray) changed = NULL;
	g_autoptr(GPtrArray) ignored = NULL;
	gboolean same_orgs = FALSE;
	gboolean rebuild_sink = FALSE;

	if (next == NULL) {
		sfl_reload_reject(self, error);
		return;
	}
	diff = sfl_config_diff(self->config, next);
	/* a keyfile that appeared, still empty, is a layer to watch from now on */
	if (diff->len == 0 && self->config->gsettings == NULL && next->gsettings != NULL) {
		g_ptr_array_add(self->configs, g_steal_pointer(&next));
		self->config = g_ptr_array_index(self->configs, self->configs->len - 1);
		sfl_reload_rewatch(self);
	}
	if (diff->len == 0) {
		sfl_reload_done(self, "unchanged", NULL, NULL, NULL);
		sfl_reload_next(self);
		return;
	}
	same_orgs = sfl_orgs_same_orgs(self->started, next);
	changed = g_ptr_array_new_with_free_func(g_free);
	ignored = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < diff->len; i++) {
		const gchar *path = g_ptr_array_index(diff, i);

		if (sfl_reload_path_needs_restart(path, same_orgs)) {
			g_ptr_array_add(ignored, g_strdup(path));
			continue;
		}
		g_ptr_array_add(changed, g_strdup(path));
		if (sfl_reload_path_under(path, "sink.loki.egress"))
			self->egress = TRUE;
		else if (sfl_reload_path_under(path, "sink"))
			rebuild_sink = TRUE;
	}
	/* against the start: a change reverted is no longer pending */
	since_start = sfl_config_diff(self->started, next);
	pending = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < since_start->len; i++)
		if (sfl_reload_path_needs_restart(g_ptr_array_index(since_start, i), same_orgs))
			g_ptr_array_add(pending, g_strdup(g_ptr_array_index(since_start, i)));
	if (rebuild_sink) {
		self->sink = self->hooks.build_sink(self->user_data, next, &error);
		if (self->sink == NULL) {
			g_prefix_error(&error, "sink.loki: ");
			self->egress = FALSE;
			sfl_reload_reject(self, error);
			return;
		}
	}
	g_ptr_array_unref(self->pending_restart);
	self->pending_restart = g_steal_pointer(&pending);
	self->next = g_steal_pointer(&next);
	self->changed = g_steal_pointer(&changed);
	self->ignored = g_steal_pointer(&ignored);
	self->reloading = TRUE;
	/*
	 * A leader drains and commits its term first, as a stop would, but keeps the lease: the
	 * coordinator's renewals go on, and the next term starts under the same epoch. With no
	 * term running (standby, or the epoch still being recorded) the swap is immediate and the
	 * next acquisition uses it.
	 */
	if (self->changed->len > 0 && self->hooks.drain(self->user_data)) {
		g_message("configuration reload: draining the current term before applying");
		return;
	}
	sfl_reload_apply(self);
}

/**
 * sfl_reload_request:
 * @self: the reload
 * @trigger: what asked, for the log (a signal, PARAMCHANGE, GSettings, POST /-/reload)
 * @reply: (nullable) (transfer full): the control path's request, answered with the outcome
 */
void
sfl_reload_request(SflReload *self, const gchar *trigger, SflHealthReply *reply)
{
	const gchar *why = NULL;

	if (!self->hooks.can_reload(self->user_data, &why)) {
		g_message("configuration reload requested (%s) while %s; ignored", trigger, why);
		if (reply != NULL) {
			/* the reason as the log gives it: "starting", "stopping", "sharded (…)" */
			g_autoptr(json_t) doc =
				json_pack("{s:s, s:[s]}", "outcome", "refused", "errors", why);
			g_autofree gchar *body = json_dumps(doc, JSON_COMPACT);

			sfl_health_reply_finish(reply, 503, body);
		}
		return;
	}
	g_message("configuration reload requested (%s)", trigger);
	if (self->reloading) {
		/* one more reload after this one reads whatever the file says by then */
		self->queued = TRUE;
		if (reply != NULL)
			g_ptr_array_add(self->queued_replies, reply);
		return;
	}
	if (reply != NULL)
		g_ptr_array_add(self->replies, reply);
	sfl_reload_begin(self);
}

gboolean
sfl_reload_is_busy(SflReload *self)
{
	return self != NULL && self->reloading;
}

void
sfl_reload_drained(SflReload *self)
{
	g_return_if_fail(self->reloading);
	sfl_reload_apply(self);
}

/* /statusz's "config": what is in force, since when, and what waits for a restart */
json_t *
sfl_reload_status(SflReload *self)
{
	g_autofree gchar *hash = sfl_config_dup_hash(self->config);
	g_autoptr(GDateTime) at = g_date_time_new_from_unix_utc(self->loaded_at / G_USEC_PER_SEC);
	g_autofree gchar *loaded_at = g_date_time_format_iso8601(at);
	json_t *errors = json_array();

	for (guint i = 0; self->last_errors != NULL && self->last_errors[i] != NULL; i++)
		json_array_append_new(errors, json_string(self->last_errors[i]));
	return json_pack("{s:s, s:s?, s:s, s:o, s:s?, s:o}", "hash", hash, "path",
			 self->config_path, "loaded_at", loaded_at, "pending_restart",
			 sfl_reload_strings_json(self->pending_restart), "last_reload",
			 self->last_outcome, "last_errors", errors);
}

void
sfl_reload_watch(SflReload *self)
{
	g_clear_pointer(&self->watch, sfl_config_watch_free);
	self->watch = sfl_config_watch_new(self->config, self->context,
					   sfl_reload_gsettings_changed, self);
}

/**
 * sfl_reload_new:
 * @started: the configuration the service started with; outlives the reload
 * @metrics: where sf2loki_config_reloads and sf2loki_config_info go
 * @context: the service's loop
 * @hooks: the daemon's side
 * @user_data: for @hooks
 *
 * Returns: (transfer full): the reload, reading the file and environment of this start
 */
SflReload *
sfl_reload_new(SflConfig *started, SflMetrics *metrics, GMainContext *context,
	       const SflReloadHooks *hooks, gpointer user_data)
{
	static const gchar *const outcomes[] = { "applied", "rejected", "unchanged" };
	SflReload *self = g_new0(SflReload, 1);

	self->hooks = *hooks;
	self->user_data = user_data;
	self->context = g_main_context_ref(context);
	self->started = started;
	self->config = started;
	self->configs = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_config_free);
	self->config_path = g_strdup(started->path);
	self->envp = g_get_environ();
	self->replies = g_ptr_array_new();
	self->queued_replies = g_ptr_array_new();
	self->pending_restart = g_ptr_array_new_with_free_func(g_free);
	self->loaded_at = g_get_real_time();
	self->reloads_total = sfl_metrics_counter(metrics, "sf2loki_config_reloads",
						  "Configuration reloads by outcome: applied, "
						  "rejected (the old one stays), unchanged.",
						  (const gchar *[]){ "outcome", NULL });
	/* every outcome at 0 from the start, so an alert on "rejected" has a series to watch */
	for (gsize i = 0; i < G_N_ELEMENTS(outcomes); i++)
		(void)sfl_metric_family_series(self->reloads_total,
					       (const gchar *[]){ outcomes[i] });
	self->config_info =
		sfl_metrics_gauge(metrics, "sf2loki_config_info",
				  "Always 1; the hash of the configuration in force is a label.",
				  (const gchar *[]){ "hash", NULL });
	sfl_reload_set_config_info(self);
	return self;
}

void
sfl_reload_shutdown(SflReload *self)
{
	const gchar *body = "{\"outcome\": \"refused\", \"errors\": [\"the service stopped\"]}";

	sfl_clear_source(&self->rewatch_source);
	g_clear_pointer(&self->watch, sfl_config_watch_free);
	/* nobody waits on a reload any more: the answer is that the service stopped */
	sfl_reload_finish_replies(self->replies, 503, body);
	sfl_reload_finish_replies(self->queued_replies, 503, body);
	g_clear_object(&self->sink);
}

/* last of the daemon's teardown: everything built from the configurations is gone */
void
sfl_reload_free(SflReload *self)
{
	if (self == NULL)
		return;
	sfl_reload_shutdown(self);
	g_ptr_array_unref(self->replies);
	g_ptr_array_unref(self->queued_replies);
	g_clear_pointer(&self->changed, g_ptr_array_unref);
	g_clear_pointer(&self->ignored, g_ptr_array_unref);
	g_ptr_array_unref(self->pending_restart);
	g_clear_pointer(&self->next, sfl_config_free);
	g_ptr_array_unref(self->configs);
	g_strfreev(self->last_errors);
	g_free(self->last_outcome);
	g_free(self->config_path);
	g_strfreev(self->envp);
	g_main_context_unref(self->context);
	g_free(self);
}
