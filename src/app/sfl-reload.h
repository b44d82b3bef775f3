/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <jansson.h>

#include "sfl-config.h"
#include "sfl-health-server.h"
#include "sfl-metrics.h"
#include "sfl-sink.h"

G_BEGIN_DECLS

/*
 * SflReload: live reload of the configuration (docs/configuration.md, "Live reload"). It reads
 * the file and the environment the service started with, validates everything offline, diffs
 * the leaves against the configuration in force, and hands what a term can absorb to the
 * daemon between two terms; restart-only paths are only reported. Requests during a reload
 * are coalesced into one more. It owns every configuration a reload brought in force, so it is
 * freed after whatever was built from them.
 */
typedef struct _SflReload SflReload;

/**
 * SflReloadHooks:
 * @can_reload: whether the daemon takes a reload now; else @why says what it is doing
 * @build_sink: a sink for @next's sink section (a sink path changed)
 * @drain: drain the running term (the lease stays) and call sfl_reload_drained() when it
 *   ended; %FALSE when no term runs, and the swap is immediate
 * @apply: swap @next in (borrowed; it lives as long as the reload): @sink (transfer full,
 *   nullable) replaces the sink, @egress says the governor's limits changed; then start the
 *   term leadership wants, if any
 */
typedef struct {
	gboolean (*can_reload)(gpointer user_data, const gchar **why);
	SflSink *(*build_sink)(gpointer user_data, const SflConfig *next, GError **error);
	gboolean (*drain)(gpointer user_data);
	void (*apply)(gpointer user_data, SflConfig *next, SflSink *sink, gboolean egress);
} SflReloadHooks;

SflReload *
sfl_reload_new(SflConfig *started, SflMetrics *metrics, GMainContext *context,
	       const SflReloadHooks *hooks, gpointer user_data) G_GNUC_WARN_UNUSED_RESULT;
/* answers every waiting `sf2loki reload` with "the service stopped" and stops watching */
void sfl_reload_shutdown(SflReload *self);
void sfl_reload_free(SflReload *self);

/* watches GSettings for the configuration in force from now on */
void sfl_reload_watch(SflReload *self);
/* every trigger ends here, on the loop; @reply (nullable, transfer full) gets the outcome */
void sfl_reload_request(SflReload *self, const gchar *trigger, SflHealthReply *reply);
/* a reload waits for its term's drain: leadership's term changes wait for it too */
gboolean sfl_reload_is_busy(SflReload *self);
/* the term sfl_reload_hooks.drain stopped has ended */
void sfl_reload_drained(SflReload *self);
/* /statusz's "config" */
json_t *sfl_reload_status(SflReload *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflReload, sfl_reload_free)

G_END_DECLS
