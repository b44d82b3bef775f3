/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-sf-rest.h"

G_BEGIN_DECLS

/* test and fuzz hooks; nothing outside sfl-sf-rest.c in the service includes this header */

/* keeps the Date (clock skew) and Sforce-Limit-Info (api-usage) of a response; NULL: absent */
void sfl_sf_rest_note_headers(SflSfRest *self, const gchar *date, const gchar *limit_info);
/* the error for a non-2xx answer with body @data, as the class comment of sfl-sf-rest.h maps it */
GError *sfl_sf_rest_http_error(SflSfRest *self, const gchar *what, guint status, const gchar *data,
			       gsize len) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
