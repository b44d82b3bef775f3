/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib-object.h>

#include "sfl-config.h"

G_BEGIN_DECLS

/*
 * SflDaemon: the service's lifecycle on the thread-default main context. It builds, in order,
 * the health server, the checkpoint store, the curl loop, the coordinator, the sink, the OTLP
 * push and the per-org side, then contests leadership; a term starts the pipeline and the
 * sources. Stop requests (from the OS hooks or a second request) drain within
 * service.shutdown_grace. Dropping the last reference releases whatever was built, newest
 * first, however far start-up got.
 */

#define SFL_TYPE_DAEMON (sfl_daemon_get_type())
G_DECLARE_FINAL_TYPE(SflDaemon, sfl_daemon, SFL, DAEMON, GObject)

/*
 * Attaches sources to @context that call @func(@user_data) when the OS asks the service to
 * stop (SIGTERM/SIGINT, an SCM stop); returns them, transfer full.
 */
typedef GPtrArray *(*SflDaemonStopHandlersFunc)(GMainContext *context, GSourceFunc func,
						gpointer user_data);

SflDaemon *
sfl_daemon_new(SflConfig *config,
	       SflDaemonStopHandlersFunc install_stop_handlers) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_daemon_run(SflDaemon *self, GError **error) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
