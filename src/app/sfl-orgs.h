/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>
#include <jansson.h>

#include "sfl-clock.h"
#include "sfl-config.h"
#include "sfl-curl-loop.h"
#include "sfl-pipeline.h"
#include "sfl-source.h"

G_BEGIN_DECLS

/*
 * SflOrgs: the Salesforce side of a run (docs/architecture.md "The daemon and its terms"). One
 * token provider and REST client per org live for the whole process; the sources are built anew for
 * every leadership term, so their cursors are always read from the store the term won.
 *
 * Single-org mode is one org without a name: no `org` label and unprefixed checkpoint keys.
 * Multi-org mode prefixes keys with `org=<name>:` and labels entries with the org.
 */

typedef struct _SflOrgs SflOrgs;

/* builds (no network): keys, transforms and the overlap guard are checked here */
SflOrgs *sfl_orgs_new(const SflConfig *config, SflCurlLoop *loop, SflClock *clock,
		      GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_orgs_free(SflOrgs *self);

/* a reload: whether @other names the same orgs, and the next term's configuration */
gboolean sfl_orgs_same_orgs(const SflConfig *config, const SflConfig *other);
void sfl_orgs_rebind(SflOrgs *self, const SflConfig *config);

/* offline validation shared with `sf2loki check`: overlap guard and transform rules */
gboolean sfl_orgs_check_config(const SflConfig *config, GError **error);

/*
 * The start-up probe: mints each org's token and resolves its org id. Single-org: any
 * failure fails the run (exit 1 before READY). Multi-org: a failing org is logged and runs
 * degraded; only all orgs failing fails the run.
 */
void sfl_orgs_probe_async(SflOrgs *self, GCancellable *cancellable, GAsyncReadyCallback callback,
			  gpointer user_data);
gboolean sfl_orgs_probe_finish(SflOrgs *self, GAsyncResult *result, GError **error);

/* builds and starts every enabled source of every org on @pipeline */
void sfl_orgs_start_sources(SflOrgs *self, SflPipeline *pipeline, SflCheckpointStore *store,
			    SflMetrics *metrics);
/* sharding (coordinate.sharding): every org's work units, and one unit's sources */
GPtrArray *sfl_orgs_dup_units(SflOrgs *self) G_GNUC_WARN_UNUSED_RESULT;
GPtrArray *
sfl_orgs_start_unit(SflOrgs *self, const gchar *unit, SflPipeline *pipeline,
		    SflCheckpointStore *store, SflMetrics *metrics) G_GNUC_WARN_UNUSED_RESULT;
void sfl_orgs_stop_unit(SflOrgs *self, GPtrArray *sources);
/* stops and drops the term's sources */
void sfl_orgs_stop_sources(SflOrgs *self);
guint sfl_orgs_get_n_sources(SflOrgs *self);

/*
 * A source of the term finished (nothing left to read, ever). @func may run inside the
 * source's own callback: defer any stop to the loop. Then sfl_orgs_all_finished() says
 * whether the whole term is done, which the original treats as a finite run
 * (docs/cli.md, "run").
 */
typedef void (*SflOrgsFinishedFunc)(gpointer user_data);
void sfl_orgs_set_finished_func(SflOrgs *self, SflOrgsFinishedFunc func, gpointer user_data);
gboolean sfl_orgs_all_finished(SflOrgs *self);

/* one object per running source: org, name and counters (for /statusz) */
json_t *sfl_orgs_status(SflOrgs *self) G_GNUC_WARN_UNUSED_RESULT;

void sfl_orgs_set_metrics(SflOrgs *self, SflMetrics *metrics);
/* the first org failing its start-up authentication that still has no token, or NULL */
const gchar *sfl_orgs_get_auth_failing(SflOrgs *self);

/* the deployment labels of one org's entries (name, value, ...), the daemon's and backfill's */
GStrv
sfl_orgs_identity_labels(const SflConfig *config, const SflSalesforceConfig *sf,
			 const gchar *org_name, const gchar *org_id) G_GNUC_WARN_UNUSED_RESULT;

/* totals over the running sources, for the progress line */
void sfl_orgs_get_totals(SflOrgs *self, SflSourceCounters *totals);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflOrgs, sfl_orgs_free)

G_END_DECLS
