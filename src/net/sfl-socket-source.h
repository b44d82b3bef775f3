/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* called with the readiness seen (G_IO_IN, G_IO_OUT, G_IO_ERR); returns G_SOURCE_CONTINUE */
typedef gboolean (*SflSocketSourceFunc)(GIOCondition ready, gpointer user_data);

GSource *sfl_socket_source_new(gint64 sock, GIOCondition condition, GError **error);
void sfl_socket_source_set_condition(GSource *source, GIOCondition condition);

G_END_DECLS
