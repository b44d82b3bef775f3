/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-clock.h"
#include "sfl-curl-loop.h"

G_BEGIN_DECLS

/*
 * OAuth access tokens for Cloud Storage (docs/internals/wire-notes.md, "Tokens"), scope
 * devstorage.read_write:
 *  - a service-account JSON key (state.gcs.service_file, else GOOGLE_APPLICATION_CREDENTIALS):
 *    an RS256 JWT {iss, scope, aud, iat, exp ≤ 1 h} exchanged at the key's token_uri;
 *  - otherwise the metadata server (GCE_METADATA_HOST, else metadata.google.internal) with
 *    Metadata-Flavor: Google.
 * A token is cached until five minutes before it expires. The key and the tokens never
 * appear in messages.
 */

#define SFL_TYPE_GCS_TOKEN_PROVIDER (sfl_gcs_token_provider_get_type())
G_DECLARE_FINAL_TYPE(SflGcsTokenProvider, sfl_gcs_token_provider, SFL, GCS_TOKEN_PROVIDER, GObject)

#define SFL_GCS_SCOPE "https://www.googleapis.com/auth/devstorage.read_write"

/* @key_file: (nullable): a service-account key; NULL for GOOGLE_APPLICATION_CREDENTIALS or
 * the metadata server. Fails when the key file is unreadable or not a service-account key. */
SflGcsTokenProvider *sfl_gcs_token_provider_new(const gchar *key_file, const gchar *const *envp,
						SflClock *clock, GError **error);
gboolean sfl_gcs_token_provider_has_key(SflGcsTokenProvider *self);
void sfl_gcs_token_provider_get_async(SflGcsTokenProvider *self, GCancellable *cancellable,
				      GAsyncReadyCallback callback, gpointer user_data);
gchar *sfl_gcs_token_provider_get_finish(SflGcsTokenProvider *self, GAsyncResult *result,
					 GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_gcs_token_provider_close(SflGcsTokenProvider *self);

G_END_DECLS
