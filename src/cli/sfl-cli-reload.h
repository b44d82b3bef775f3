/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * `sf2loki reload [--config PATH]`: asks the daemon listening on the configuration's
 * service.health_addr to reload, through its loopback-only control path (POST /-/reload), and
 * waits for the answer (docs/cli.md). Exit 0 when the daemon applied the configuration (or
 * found nothing changed), 1 when it refused it (its reasons on stderr) or cannot be reached,
 * 2 for a usage or configuration error here.
 */
int sfl_cli_reload(const gchar *config_path);

/* the address to reach a server bound to @health_addr from this host: a wildcard is loopback */
gchar *sfl_cli_reload_url(const gchar *health_addr, GError **error) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
