/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflOrgs"

#include "config.h"

#include "sfl-orgs.h"

#include "sfl-error.h"
#include "sfl-kinds.h"
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"
#include "sfl-sf-limits.h"
#include "sfl-shape.h"

typedef struct {
	gchar *name; /* "" in single-org mode */
	const SflSalesforceConfig *sf;
	const SflSourcesConfig *sources;
	SflSfAuth *auth;
	SflSfRest *rest;
	gchar *org_id;
	gboolean failed;     /* the start-up probe failed: degraded */
	SflSfLimits *limits; /* the term's limits poller, if enabled */
} SflOrg;

struct _SflOrgs {
	const SflConfig *config;
	SflClock *clock;
	GPtrArray *orgs;    /* SflOrg */
	GPtrArray *running; /* SflSource of the current term */
	SflLabelsInterner *interner;
	/* promoted-label windows outlive terms: a new term on this replica keeps them */
	SflLabelGuard *label_guard;
	/* the probe */
	GTask *probe;
	guint probing;
	GError *first_failure;
	/* a running source finished (sfl_source_finish()) */
	SflOrgsFinishedFunc finished_func;
	gpointer finished_data;
};

static void
sfl_org_free(gpointer data)
{
	SflOrg *org = data;
	g_clear_pointer(&org->limits, sfl_sf_limits_free);
	g_free(org->name);
	g_clear_object(&org->rest);
	g_clear_object(&org->auth);
	g_free(org->org_id);
	g_free(org);
}

void
sfl_orgs_free(SflOrgs *self)
{
	if (self == NULL)
		return;
	sfl_orgs_stop_sources(self);
	g_ptr_array_unref(self->running);
	g_ptr_array_unref(self->orgs);
	sfl_labels_interner_unref(self->interner);
	g_clear_pointer(&self->label_guard, sfl_label_guard_unref);
	sfl_clock_unref(self->clock);
	g_free(self);
}

static const gchar *
sfl_orgs_salt(const SflSourcesConfig *sources)
{
	return sources->transform_salt != NULL ? sources->transform_salt : "";
}

/* one org's sources, checked without building anything that talks to the network */
static gboolean
sfl_orgs_check_sources(const SflSourcesConfig *sources, const gchar *org_name, GError **error)
{
	const SflEventLogFileConfig *elf = &sources->eventlogfile;
	GPtrArray *lists[] = { sources->eventlogfile.transforms,
			       sources->eventlog_objects.transforms, sources->apexlog.transforms,
			       sources->pubsub.transforms };
	const gchar *names[] = { "eventlogfile", "eventlog_objects", "apexlog", "pubsub" };

	if (!sfl_overlap_check(sources, org_name, error))
		return FALSE;

	for (guint i = 0; i < G_N_ELEMENTS(lists); i++) {
		g_autoptr(SflTransforms) t = NULL;
		if (lists[i] == NULL || lists[i]->len == 0)
			continue;
		t = sfl_transforms_new(lists[i], sfl_orgs_salt(sources), error);
		if (t == NULL) {
			g_prefix_error(error, "sources.%s.transforms: ", names[i]);
			return FALSE;
		}
		if (sfl_transforms_get_n_hash_rules(t) > 0 && sources->transform_salt == NULL)
			g_warning("sources.%s.transforms: %u hash rule(s) without "
				  "sources.transform_salt; unsalted hashes of short values can be "
				  "reversed by lookup",
				  names[i], sfl_transforms_get_n_hash_rules(t));
	}
	if (elf->enabled && elf->event_types->len == 0) {
		g_set_error(
			error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			"sources.eventlogfile.event_types: must not be empty when the source is "
			"enabled");
		return FALSE;
	}
	return TRUE;
}

/**
 * sfl_orgs_check_config:
 * @config: a loaded configuration
 * @error: return location for an error
 *
 * Returns: %TRUE when every org's sources pass the checks config loading cannot do alone
 */
gboolean
sfl_orgs_check_config(const SflConfig *config, GError **error)
{
	const SflConfigData *d = &config->data;

	if (d->orgs->len == 0)
		return sfl_orgs_check_sources(&d->sources, NULL, error);
	for (guint i = 0; i < d->orgs->len; i++) {
		SflOrgConfig *oc = g_ptr_array_index(d->orgs, i);
		if (!sfl_orgs_check_sources(&oc->sources, oc->name, error)) {
			g_prefix_error(error, "orgs[%u] (%s): ", i, oc->name);
			return FALSE;
		}
	}
	return TRUE;
}

static gboolean
sfl_orgs_has_sources(SflOrg *org)
{
	guint n = 0;
	const SflSourceKind *kinds = sfl_source_kinds(&n);

	for (guint i = 0; i < n; i++) {
		if (kinds[i].wanted(org->sources))
			return TRUE;
	}
	return FALSE;
}

static SflOrg *
sfl_orgs_add(SflOrgs *self, SflCurlLoop *loop, const gchar *name, const SflSalesforceConfig *sf,
	     const SflSourcesConfig *sources, GError **error)
{
	SflOrg *org = g_new0(SflOrg, 1);

	org->name = g_strdup(name);
	org->sf = sf;
	org->sources = sources;
	g_ptr_array_add(self->orgs, org);
	/* an org without sources needs no token, so its key is not even read */
	if (!sfl_orgs_has_sources(org))
		return org;
	org->auth = sfl_sf_auth_new(loop, sf, self->clock, error);
	if (org->auth == NULL)
		return NULL;
	org->rest = sfl_sf_rest_new(loop, org->auth, sf->api_version);
	return org;
}

/**
 * sfl_orgs_new:
 * @config: the configuration; must outlive the result
 * @loop: the shared curl loop
 * @clock: the clock
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the orgs, or %NULL with @error set
 */
SflOrgs *
sfl_orgs_new(const SflConfig *config, SflCurlLoop *loop, SflClock *clock, GError **error)
{
	g_autoptr(SflOrgs) self = g_new0(SflOrgs, 1);
	const SflConfigData *d = &config->data;

	self->config = config;
	self->clock = sfl_clock_ref(clock);
	self->orgs = g_ptr_array_new_with_free_func(sfl_org_free);
	self->running = g_ptr_array_new_with_free_func(g_object_unref);
	self->interner = sfl_labels_interner_new();
	if (!sfl_orgs_check_config(config, error))
		return NULL;
	if (d->orgs->len == 0) {
		if (sfl_orgs_add(self, loop, "", d->salesforce, &d->sources, error) == NULL)
			return NULL;
		return g_steal_pointer(&self);
	}
	for (guint i = 0; i < d->orgs->len; i++) {
		SflOrgConfig *oc = g_ptr_array_index(d->orgs, i);
		if (sfl_orgs_add(self, loop, oc->name, &oc->salesforce, &oc->sources, error) ==
		    NULL) {
			g_prefix_error(error, "orgs[%u] (%s): ", i, oc->name);
			return NULL;
		}
	}
	return g_steal_pointer(&self);
}

/**
 * sfl_orgs_same_orgs:
 * @config: one configuration
 * @other: another
 *
 * Returns: %TRUE when both name the same orgs in the same order (single-org counts as one)
 */
gboolean
sfl_orgs_same_orgs(const SflConfig *config, const SflConfig *other)
{
	const GPtrArray *a = config->data.orgs;
	const GPtrArray *b = other->data.orgs;

	if (a->len != b->len)
		return FALSE;
	for (guint i = 0; i < a->len; i++) {
		const SflOrgConfig *x = g_ptr_array_index(a, i);
		const SflOrgConfig *y = g_ptr_array_index(b, i);
		if (g_strcmp0(x->name, y->name) != 0)
			return FALSE;
	}
	return TRUE;
}

/**
 * sfl_orgs_rebind:
 * @self: the orgs, between terms
 * @config: a configuration naming the same orgs (sfl_orgs_same_orgs()); must outlive @self
 *
 * The next term's sources, labels and metadata come from @config. The token providers and
 * REST clients stay as built: salesforce.* needs a restart (docs/configuration.md, "Live
 * reload"), so they keep reading the configuration they were built from.
 */
void
sfl_orgs_rebind(SflOrgs *self, const SflConfig *config)
{
	const SflConfigData *d = &config->data;

	/*
	 * A reload that changed nothing a term reads applies without a drain, so sources may be
	 * running: they keep the section they were built from (the reload keeps every
	 * configuration alive until the teardown) and the next term reads @config's.
	 */
	g_return_if_fail(sfl_orgs_same_orgs(self->config, config));
	self->config = config;
	if (d->orgs->len == 0) {
		SflOrg *org = g_ptr_array_index(self->orgs, 0);
		org->sources = &d->sources;
		return;
	}
	for (guint i = 0; i < d->orgs->len; i++) {
		SflOrgConfig *oc = g_ptr_array_index(d->orgs, i);
		SflOrg *org = g_ptr_array_index(self->orgs, i);
		org->sources = &oc->sources;
	}
}

/* --- the start-up probe --------------------------------------------------------------------- */

typedef struct {
	SflOrgs *self;
	SflOrg *org;
} SflProbe;

static void
sfl_orgs_probe_one_done(SflOrgs *self, SflOrg *org, GError *error)
{
	if (error != NULL) {
		org->failed = TRUE;
		if (org->name[0] != '\0')
			g_critical("org %s: Salesforce authentication failed: %s", org->name,
				   error->message);
		if (self->first_failure == NULL)
			self->first_failure = g_error_copy(error);
	} else {
		g_message("%s%s%sauthenticated to Salesforce (org id %s)",
			  org->name[0] != '\0' ? "org " : "", org->name,
			  org->name[0] != '\0' ? ": " : "", org->org_id);
	}
	self->probing--;
	if (self->probing > 0)
		return;
	{
		g_autoptr(GTask) task = g_steal_pointer(&self->probe);
		gboolean all_failed = TRUE;
		for (guint i = 0; i < self->orgs->len; i++) {
			SflOrg *o = g_ptr_array_index(self->orgs, i);
			if (sfl_orgs_has_sources(o))
				all_failed &= o->failed;
		}
		if (all_failed && self->first_failure != NULL)
			g_task_return_error(task, g_steal_pointer(&self->first_failure));
		else
			g_task_return_boolean(task, TRUE);
		g_clear_error(&self->first_failure);
	}
}

static void
sfl_orgs_org_id_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	g_autofree SflProbe *probe = user_data;
	GError *error = NULL;

	probe->org->org_id = sfl_sf_auth_get_org_id_finish(SFL_SF_AUTH(object), result, &error);
	sfl_orgs_probe_one_done(probe->self, probe->org, error);
	g_clear_error(&error);
}

static void
sfl_orgs_token_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	SflProbe *probe = user_data;
	GError *error = NULL;
	g_autoptr(SflSfToken) token =
		sfl_sf_auth_get_token_finish(SFL_SF_AUTH(object), result, &error);

	if (token == NULL) {
		sfl_orgs_probe_one_done(probe->self, probe->org, error);
		g_clear_error(&error);
		g_free(probe);
		return;
	}
	sfl_sf_auth_get_org_id_async(probe->org->auth, g_task_get_cancellable(probe->self->probe),
				     sfl_orgs_org_id_cb, probe);
}

void
sfl_orgs_probe_async(SflOrgs *self, GCancellable *cancellable, GAsyncReadyCallback callback,
		     gpointer user_data)
{
	g_return_if_fail(self->probe == NULL);
	self->probe = g_task_new(NULL, cancellable, callback, user_data);
	g_task_set_source_tag(self->probe, sfl_orgs_probe_async);
	self->probing = 0;
	for (guint i = 0; i < self->orgs->len; i++)
		self->probing += sfl_orgs_has_sources(g_ptr_array_index(self->orgs, i));
	if (self->probing == 0) {
		/* `run` has exited before this: see sfl_app_dup_no_source_reason() */
		g_warning("no source needs a Salesforce token; nothing will be read");
		g_task_return_boolean(g_steal_pointer(&self->probe), TRUE);
		return;
	}
	for (guint i = 0; i < self->orgs->len; i++) {
		SflProbe *probe = NULL;
		if (!sfl_orgs_has_sources(g_ptr_array_index(self->orgs, i)))
			continue;
		probe = g_new0(SflProbe, 1);
		probe->self = self;
		probe->org = g_ptr_array_index(self->orgs, i);
		sfl_sf_auth_get_token_async(probe->org->auth, cancellable, sfl_orgs_token_cb,
					    probe);
	}
}

gboolean
sfl_orgs_probe_finish(SflOrgs *self, GAsyncResult *result, GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

/* --- sources per term ----------------------------------------------------------------------- */

/**
 * sfl_orgs_identity_labels:
 * @config: the configuration
 * @sf: the org's salesforce section
 * @org_name: the org's name, "" in single-org mode
 * @org_id: (nullable): its org id, as the start-up probe found it
 *
 * The deployment labels of one org's entries (docs/sources/README.md), for the daemon's terms
 * and `backfill` alike: sink.loki.labels, then job, service_name, environment, sf_org_id and
 * org; operator labels win over ours.
 *
 * Returns: (transfer full): name, value, ... (NULL-terminated)
 */
GStrv
sfl_orgs_identity_labels(const SflConfig *config, const SflSalesforceConfig *sf,
			 const gchar *org_name, const gchar *org_id)
{
	const SflConfigData *d = &config->data;
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	g_autoptr(GHashTable) set = g_hash_table_new(g_str_hash, g_str_equal);
	const gchar *env = sfl_config_enum_name("salesforce.environment", sf->environment);
	const gchar *org = org_name[0] != '\0' ? org_name : NULL;
	const gchar *ours[] = { "job", "sf2loki",   "service_name", "sf2loki", "environment",
				env,   "sf_org_id", org_id,	    "org",     org };

	for (guint i = 0; d->sink.loki.labels != NULL && i < d->sink.loki.labels->len; i++) {
		SflConfigPair *p = g_ptr_array_index(d->sink.loki.labels, i);
		g_strv_builder_add(b, p->key);
		g_strv_builder_add(b, p->value);
		g_hash_table_add(set, p->key);
	}
	for (guint i = 0; i < G_N_ELEMENTS(ours); i += 2) {
		if (ours[i + 1] == NULL || ours[i + 1][0] == '\0' ||
		    g_hash_table_contains(set, ours[i]))
			continue;
		g_strv_builder_add(b, ours[i]);
		g_strv_builder_add(b, ours[i + 1]);
	}
	return g_strv_builder_end(b);
}

static GStrv
sfl_orgs_static_labels(SflOrgs *self, SflOrg *org)
{
	return sfl_orgs_identity_labels(self->config, org->sf, org->name, org->org_id);
}

static void
sfl_orgs_source_finished_cb(SflSource *source, gpointer user_data)
{
	SflOrgs *self = user_data;

	g_debug("%s: nothing left to read in this term", sfl_source_get_name(source));
	if (self->finished_func != NULL)
		self->finished_func(self->finished_data);
}

/* "org=<name>:" in multi-org mode, "" for the one unnamed org */
static gchar *
sfl_orgs_key_prefix(SflOrg *org)
{
	return org->name[0] != '\0' ? g_strdup_printf("org=%s:", org->name) : g_strdup("");
}

static void
sfl_orgs_start_one(SflOrgs *self, SflSource *source, SflOrg *org, SflPipeline *pipeline,
		   SflCheckpointStore *store, SflMetrics *metrics)
{
	const SflConfigData *d = &self->config->data;
	g_auto(GStrv) labels = sfl_orgs_static_labels(self, org);
	g_autofree gchar *prefix = sfl_orgs_key_prefix(org);
	/* classified by name, as the original does (docs/sources/README.md, Lane) */
	g_autoptr(SflLaneHandle) lane = sfl_pipeline_get_lane(
		pipeline, g_str_equal(sfl_source_get_name(source), "pubsub") ? SFL_LANE_STREAMING
									     : SFL_LANE_BULK);
	SflSourceContext ctx = {
		.lane = lane,
		.store = store,
		.interner = self->interner,
		.clock = self->clock,
		.static_labels = (const gchar *const *)labels,
		.key_prefix = prefix,
		.metadata_fields = (const gchar *const *)d->sink.loki.structured_metadata_fields,
		.metrics = metrics,
		.org = org->name[0] != '\0' ? org->name : NULL,
		.legacy_keys = org->name[0] != '\0' && org == g_ptr_array_index(self->orgs, 0),
		.label_guard = self->label_guard,
	};

	g_object_set_data_full(G_OBJECT(source), "sfl-org", g_strdup(org->name), g_free);
	g_ptr_array_add(self->running, source);
	g_signal_connect(source, "finished", G_CALLBACK(sfl_orgs_source_finished_cb), self);
	sfl_source_start(source, &ctx);
}

static void
sfl_orgs_ensure_guards(SflOrgs *self, SflOrg *org, SflMetrics *metrics)
{
	const SflLokiLabelCardinalityConfig *lc = &self->config->data.sink.loki.label_cardinality;

	if (self->label_guard == NULL && lc->max_values > 0 && lc->window > 0)
		self->label_guard = sfl_label_guard_new((guint)MIN(lc->max_values, G_MAXUINT),
							lc->window, self->clock, metrics);
	if (org != NULL && org->sf->limits.enabled && metrics != NULL && org->limits == NULL)
		org->limits =
			sfl_sf_limits_new(org->rest, self->clock, org->sf->limits.poll_interval,
					  metrics, org->name[0] != '\0' ? org->name : NULL);
}

/* builds one source of @kind for @org (@unit: NULL for the whole kind) and starts it */
static SflSource *
sfl_orgs_build_one(SflOrgs *self, SflOrg *org, const SflSourceKind *kind, const gchar *unit,
		   SflPipeline *pipeline, SflCheckpointStore *store, SflMetrics *metrics)
{
	const SflSourceBuildArgs args = {
		.auth = org->auth,
		.rest = org->rest,
		.sources = org->sources,
		.org_id = org->org_id,
		.salt = sfl_orgs_salt(org->sources),
		.unit = unit,
	};
	g_autoptr(GError) error = NULL;
	SflSource *source = kind->build(&args, &error);

	/* checked at start-up already */
	if (source == NULL) {
		g_critical("%s: %s", kind->name, error->message);
		return NULL;
	}
	sfl_orgs_start_one(self, source, org, pipeline, store, metrics);
	return source;
}

void
sfl_orgs_start_sources(SflOrgs *self, SflPipeline *pipeline, SflCheckpointStore *store,
		       SflMetrics *metrics)
{
	guint n_kinds = 0;
	const SflSourceKind *kinds = sfl_source_kinds(&n_kinds);

	sfl_orgs_ensure_guards(self, NULL, metrics);
	for (guint i = 0; i < self->orgs->len; i++) {
		SflOrg *org = g_ptr_array_index(self->orgs, i);

		if (org->rest == NULL)
			continue;
		sfl_orgs_ensure_guards(self, org, metrics);
		for (guint k = 0; k < n_kinds; k++) {
			if (kinds[k].wanted(org->sources))
				(void)sfl_orgs_build_one(self, org, &kinds[k], NULL, pipeline,
							 store, metrics);
		}
	}
}

/**
 * sfl_orgs_dup_units:
 * @self: the orgs
 *
 * The work units of a sharded group: every wanted source kind's units, for every configured
 * org whether or not its probe succeeded (every replica must list the same units), each named
 * by the checkpoint key it writes.
 *
 * Returns: (transfer full) (element-type utf8): the units, in configuration order
 */
GPtrArray *
sfl_orgs_dup_units(SflOrgs *self)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	guint n_kinds = 0;
	const SflSourceKind *kinds = sfl_source_kinds(&n_kinds);

	for (guint i = 0; i < self->orgs->len; i++) {
		SflOrg *org = g_ptr_array_index(self->orgs, i);
		g_autofree gchar *prefix = sfl_orgs_key_prefix(org);

		for (guint k = 0; k < n_kinds; k++) {
			g_autoptr(GPtrArray) units = g_ptr_array_new_with_free_func(g_free);

			if (!kinds[k].wanted(org->sources) || kinds[k].units == NULL)
				continue;
			kinds[k].units(org->sources, units);
			for (guint u = 0; u < units->len; u++)
				g_ptr_array_add(out, g_strconcat(prefix, units->pdata[u], NULL));
		}
	}
	return out;
}

/**
 * sfl_orgs_start_unit:
 * @self: the orgs
 * @unit: one of sfl_orgs_dup_units()
 * @pipeline: the unit's pipeline
 * @store: the checkpoint store
 * @metrics: the registry
 *
 * Builds and starts the source that reads @unit alone.
 *
 * Returns: (transfer full) (element-type SflSource): the sources started (borrowed from the
 * running set; none when the unit's org failed its probe), for sfl_orgs_stop_unit()
 */
GPtrArray *
sfl_orgs_start_unit(SflOrgs *self, const gchar *unit, SflPipeline *pipeline,
		    SflCheckpointStore *store, SflMetrics *metrics)
{
	GPtrArray *started = g_ptr_array_new();
	guint n_kinds = 0;
	const SflSourceKind *kinds = sfl_source_kinds(&n_kinds);

	sfl_orgs_ensure_guards(self, NULL, metrics);
	for (guint i = 0; i < self->orgs->len; i++) {
		SflOrg *org = g_ptr_array_index(self->orgs, i);
		g_autofree gchar *prefix = sfl_orgs_key_prefix(org);
		const gchar *rest = NULL;

		/* the unnamed org's prefix "" matches everything: multi-org names never do */
		if (!g_str_has_prefix(unit, prefix))
			continue;
		rest = unit + strlen(prefix);
		for (guint k = 0; k < n_kinds; k++) {
			g_autoptr(GPtrArray) units = g_ptr_array_new_with_free_func(g_free);
			SflSource *source = NULL;

			if (!kinds[k].wanted(org->sources) || kinds[k].units == NULL)
				continue;
			kinds[k].units(org->sources, units);
			if (!g_ptr_array_find_with_equal_func(units, rest, g_str_equal, NULL))
				continue;
			if (org->rest == NULL) {
				g_warning("%s: org '%s' failed its start-up probe; the unit stays "
					  "idle here",
					  unit, org->name);
				return started;
			}
			sfl_orgs_ensure_guards(self, org, metrics);
			source = sfl_orgs_build_one(self, org, &kinds[k], rest, pipeline, store,
						    metrics);
			if (source != NULL)
				g_ptr_array_add(started, source);
			return started;
		}
	}
	return started;
}

/* stops the sources sfl_orgs_start_unit() started and drops them from the running set */
void
sfl_orgs_stop_unit(SflOrgs *self, GPtrArray *sources)
{
	for (guint i = 0; sources != NULL && i < sources->len; i++) {
		SflSource *source = g_ptr_array_index(sources, i);

		sfl_source_stop(source);
		g_ptr_array_remove_fast(self->running, source);
	}
	if (sources != NULL)
		g_ptr_array_set_size(sources, 0);
}

void
sfl_orgs_stop_sources(SflOrgs *self)
{
	/* the poller follows the term, as in the original (docs/operations/metrics.md) */
	for (guint i = 0; i < self->orgs->len; i++) {
		SflOrg *org = g_ptr_array_index(self->orgs, i);
		g_clear_pointer(&org->limits, sfl_sf_limits_free);
	}
	for (guint i = 0; i < self->running->len; i++)
		sfl_source_stop(g_ptr_array_index(self->running, i));
	g_ptr_array_set_size(self->running, 0);
}

guint
sfl_orgs_get_n_sources(SflOrgs *self)
{
	return self->running->len;
}

/**
 * sfl_orgs_set_finished_func:
 * @self: the orgs
 * @func: (nullable): called, maybe from inside a source's callback, when one finishes
 * @user_data: for @func
 */
void
sfl_orgs_set_finished_func(SflOrgs *self, SflOrgsFinishedFunc func, gpointer user_data)
{
	self->finished_func = func;
	self->finished_data = user_data;
}

/* every source of the term finished: the run is finite (docs/cli.md, "run") */
gboolean
sfl_orgs_all_finished(SflOrgs *self)
{
	for (guint i = 0; i < self->running->len; i++) {
		if (!sfl_source_is_finished(g_ptr_array_index(self->running, i)))
			return FALSE;
	}
	return self->running->len > 0;
}

void
sfl_orgs_get_totals(SflOrgs *self, SflSourceCounters *totals)
{
	memset(totals, 0, sizeof(*totals));
	for (guint i = 0; i < self->running->len; i++) {
		SflSourceCounters *c = sfl_source_counters(g_ptr_array_index(self->running, i));
		totals->rows_read += c->rows_read;
		totals->entries_offered += c->entries_offered;
		totals->checkpoint_tokens += c->checkpoint_tokens;
		totals->rows_filtered += c->rows_filtered;
		totals->rows_sampled_out += c->rows_sampled_out;
		totals->timestamp_fallbacks += c->timestamp_fallbacks;
		totals->errors += c->errors;
		totals->throttled += c->throttled;
	}
}

/**
 * sfl_orgs_status:
 * @self: the orgs
 *
 * Returns: (transfer full): a JSON array, one object per running source
 */
json_t *
sfl_orgs_status(SflOrgs *self)
{
	json_t *out = json_array();

	for (guint i = 0; i < self->running->len; i++) {
		SflSource *source = g_ptr_array_index(self->running, i);
		SflSourceCounters *c = sfl_source_counters(source);
		const gchar *org = g_object_get_data(G_OBJECT(source), "sfl-org");

		json_array_append_new(
			out,
			json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "org",
				  org != NULL ? org : "", "source", sfl_source_get_name(source),
				  "rows_read", (json_int_t)c->rows_read, "entries_offered",
				  (json_int_t)c->entries_offered, "checkpoint_tokens",
				  (json_int_t)c->checkpoint_tokens, "rows_filtered",
				  (json_int_t)c->rows_filtered, "rows_sampled_out",
				  (json_int_t)c->rows_sampled_out, "timestamp_fallbacks",
				  (json_int_t)c->timestamp_fallbacks, "errors",
				  (json_int_t)c->errors, "throttled", (json_int_t)c->throttled));
	}
	return out;
}

/**
 * sfl_orgs_set_metrics:
 * @self: the orgs
 * @metrics: the registry
 *
 * Token mints and failures are counted from now on (the start-up probe included).
 */
void
sfl_orgs_set_metrics(SflOrgs *self, SflMetrics *metrics)
{
	for (guint i = 0; i < self->orgs->len; i++) {
		SflOrg *org = g_ptr_array_index(self->orgs, i);
		if (org->auth != NULL)
			sfl_sf_auth_set_metrics(org->auth, metrics,
						org->name[0] != '\0' ? org->name : NULL);
	}
}

/**
 * sfl_orgs_get_auth_failing:
 * @self: the orgs
 *
 * Multi-org readiness (docs/operations/health.md): the first org whose start-up probe failed and
 * that has not minted a token since. Single-org runs never get here: a failing probe fails the
 * start.
 *
 * Returns: (nullable) (transfer none): the org's name, or %NULL
 */
const gchar *
sfl_orgs_get_auth_failing(SflOrgs *self)
{
	for (guint i = 0; i < self->orgs->len; i++) {
		SflOrg *org = g_ptr_array_index(self->orgs, i);
		if (org->failed && org->auth != NULL && !sfl_sf_auth_has_token(org->auth))
			return org->name;
	}
	return NULL;
}
