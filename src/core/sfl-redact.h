/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SFL_REDACTED "***"

gchar *sfl_redact(const gchar *text) G_GNUC_WARN_UNUSED_RESULT;
gboolean sfl_redact_key_is_secret(const gchar *key);
void sfl_redact_add_secret(const gchar *secret);
void sfl_redact_clear_secrets(void);

G_END_DECLS
