/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * SflHealthServer: /healthz, /readyz, /metrics and /statusz on service.health_addr
 * (docs/operations/health.md), served by libsoup on the main loop.
 *
 * - /healthz answers 200 from the loop itself: a wedged loop fails the probe.
 * - /readyz, /metrics and /statusz ask the run through callbacks at request time, so what
 *   they say is never older than the request.
 * - Only GET and HEAD are served (405 otherwise); other paths are 404. The one exception is
 *   the control path POST /-/reload (docs/configuration.md, "Live reload"): POST only (405
 *   otherwise), refused with 403 unless the peer is a loopback address, answered when the
 *   run has finished the reload.
 *
 * Threading: the thread-default main context of the creator.
 */

typedef struct _SflHealthServer SflHealthServer;

/* returns TRUE when ready; *reason (static or owned by the callee) explains a 503 */
typedef gboolean (*SflHealthReadyFunc)(gpointer user_data, gchar **reason);
/* returns the body (owned by the caller) */
typedef gchar *(*SflHealthTextFunc)(gpointer user_data);

/*
 * Answers a POST /-/reload: @status is the HTTP status, @body JSON. Called exactly once per
 * request, from the loop, possibly after the reload callback returned.
 */
typedef struct _SflHealthReply SflHealthReply;
void sfl_health_reply_finish(SflHealthReply *reply, guint status, const gchar *body);
/* starts a reload; @reply is the caller's to finish */
typedef void (*SflHealthReloadFunc)(gpointer user_data, SflHealthReply *reply);

typedef struct {
	SflHealthReadyFunc ready;
	SflHealthTextFunc metrics;  /* Prometheus text 0.0.4 */
	SflHealthTextFunc status;   /* JSON */
	SflHealthReloadFunc reload; /* (nullable): POST /-/reload; 404 without it */
} SflHealthCallbacks;

/* the control path's peer check: loopback addresses only (IPv4-mapped IPv6 included) */
gboolean sfl_health_peer_is_local(GSocketAddress *peer);

/* listens on @addr ("host:port", empty host = every interface, port 0 = ephemeral) */
SflHealthServer *
sfl_health_server_new(const gchar *addr, const SflHealthCallbacks *callbacks, gpointer user_data,
		      GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_health_server_free(SflHealthServer *self);
/* the port actually bound */
guint sfl_health_server_get_port(SflHealthServer *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflHealthServer, sfl_health_server_free)

G_END_DECLS
