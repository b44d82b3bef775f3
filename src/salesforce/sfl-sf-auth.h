/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-clock.h"
#include "sfl-metrics.h"
#include "sfl-config.h"
#include "sfl-curl-loop.h"

G_BEGIN_DECLS

/*
 * SflSfAuth: the token provider of one org (docs/internals/wire-notes.md, "JWT bearer flow"),
 * shared by every client of that org.
 *
 * - jwt_bearer: an RS256 assertion (iss = client_id, sub = username, aud = login URL,
 *   exp = now + 180 s) signed with OpenSSL from the PEM key, posted to
 *   {login_url}/services/oauth2/token. client_credentials: client_id + client_secret.
 * - A token is reused until minted_at + token_ttl − 60 s. Concurrent callers share one mint.
 * - Mint failures: transport errors and 5xx are retried (4 attempts, 0.5 s .. 10 s jittered
 *   backoff on the injected clock); a 4xx is SFL_ERROR_AUTH at once, with Salesforce's
 *   `error` and `error_description` and never the assertion or secret.
 * - invalidate(rejected) drops the cached token only when it is the one that was rejected
 *   (SFL-0052), so a stale stream cannot throw away a fresh token others use.
 * - org id: salesforce.org_id, else GET {instance_url}/services/oauth2/userinfo →
 *   organization_id, cached; a 401 there invalidates the token and retries once (SFL-0025).
 *
 * Threading: the curl loop's thread.
 */

typedef struct {
	/*< private >*/
	gint ref_count;
	/*< public >*/
	gchar *access_token;
	gchar *instance_url; /* without a trailing slash */
	guint64 generation;  /* increases with every mint */
} SflSfToken;

SflSfToken *sfl_sf_token_ref(SflSfToken *token);
void sfl_sf_token_unref(SflSfToken *token);

#define SFL_TYPE_SF_AUTH (sfl_sf_auth_get_type())
G_DECLARE_FINAL_TYPE(SflSfAuth, sfl_sf_auth, SFL, SF_AUTH, GObject)

/* reads and checks the key (jwt_bearer) now: an unusable key is SFL_ERROR_INVALID_CONFIG */
SflSfAuth *sfl_sf_auth_new(SflCurlLoop *loop, const SflSalesforceConfig *config, SflClock *clock,
			   GError **error) G_GNUC_WARN_UNUSED_RESULT;

void sfl_sf_auth_get_token_async(SflSfAuth *self, GCancellable *cancellable,
				 GAsyncReadyCallback callback, gpointer user_data);
SflSfToken *sfl_sf_auth_get_token_finish(SflSfAuth *self, GAsyncResult *result,
					 GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_sf_auth_invalidate(SflSfAuth *self, const SflSfToken *rejected);
gboolean sfl_sf_auth_has_token(SflSfAuth *self);

void sfl_sf_auth_get_org_id_async(SflSfAuth *self, GCancellable *cancellable,
				  GAsyncReadyCallback callback, gpointer user_data);
gchar *sfl_sf_auth_get_org_id_finish(SflSfAuth *self, GAsyncResult *result,
				     GError **error) G_GNUC_WARN_UNUSED_RESULT;

/* counters for metrics and tests */
guint64 sfl_sf_auth_get_mints(SflSfAuth *self);
guint64 sfl_sf_auth_get_mint_failures(SflSfAuth *self);
void sfl_sf_auth_set_metrics(SflSfAuth *self, SflMetrics *metrics, const gchar *org);

/* what the org's REST clients share with it */
SflClock *sfl_sf_auth_get_clock(SflSfAuth *self);
SflCurlLoop *sfl_sf_auth_get_loop(SflSfAuth *self);
/* a mint (request or retry backoff) is in flight */
gboolean sfl_sf_auth_is_minting(SflSfAuth *self);

/* token endpoint and userinfo attempts for transport errors and 5xx */
#define SFL_SF_AUTH_ATTEMPTS 4

/* helpers shared by the Salesforce clients */
gchar *sfl_sf_excerpt(const gchar *data, gsize len) G_GNUC_WARN_UNUSED_RESULT;
gint64 sfl_sf_backoff_usec(GRand *rand, guint attempt);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflSfToken, sfl_sf_token_unref)

G_END_DECLS
