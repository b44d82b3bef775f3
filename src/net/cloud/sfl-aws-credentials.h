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
 * AWS credentials and the default chain (docs/internals/wire-notes.md,
 * "Credentials"), in botocore's order for the
 * providers we support:
 *   1. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN or the
 *      legacy AWS_SECURITY_TOKEN, AWS_CREDENTIAL_EXPIRATION);
 *   2. the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, ~/.aws/credentials), then
 *      the config file (AWS_CONFIG_FILE, ~/.aws/config), profile AWS_PROFILE, else
 *      AWS_DEFAULT_PROFILE, else "default";
 *   3. the container endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI on 169.254.170.2, or
 *      AWS_CONTAINER_CREDENTIALS_FULL_URI on an allowed host), with the authorization token
 *      from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or AWS_CONTAINER_AUTHORIZATION_TOKEN;
 *   4. EC2 instance metadata, IMDSv2 (AWS_EC2_METADATA_SERVICE_ENDPOINT overrides the
 *      address; AWS_EC2_METADATA_DISABLED=true skips it).
 * Assume-role, web identity, SSO and credential_process are not supported.
 *
 * Credentials with an expiry are cached until five minutes before it and then fetched again;
 * static ones are cached for the provider's lifetime. Secrets never appear in messages.
 */

typedef struct {
	gchar *access_key_id;
	gchar *secret_access_key;
	gchar *session_token; /* nullable */
	gint64 expires_usec;  /* wall clock; 0 when they do not expire */
	gchar *source;	      /* where they came from, for messages */
} SflAwsCredentials;

SflAwsCredentials *
sfl_aws_credentials_new(const gchar *access_key_id, const gchar *secret_access_key,
			const gchar *session_token, gint64 expires_usec, const gchar *source);
SflAwsCredentials *sfl_aws_credentials_copy(const SflAwsCredentials *creds);
void sfl_aws_credentials_free(SflAwsCredentials *creds);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflAwsCredentials, sfl_aws_credentials_free)

#define SFL_TYPE_AWS_CREDENTIAL_PROVIDER (sfl_aws_credential_provider_get_type())
G_DECLARE_FINAL_TYPE(SflAwsCredentialProvider, sfl_aws_credential_provider, SFL,
		     AWS_CREDENTIAL_PROVIDER, GObject)

/* @envp: the environment to read (NULL: the process's); @loop: (nullable): for HTTP */
SflAwsCredentialProvider *
sfl_aws_credential_provider_new(const gchar *const *envp, SflCurlLoop *loop, SflClock *clock);
void
sfl_aws_credential_provider_get_async(SflAwsCredentialProvider *self, GCancellable *cancellable,
				      GAsyncReadyCallback callback, gpointer user_data);
SflAwsCredentials *
sfl_aws_credential_provider_get_finish(SflAwsCredentialProvider *self, GAsyncResult *result,
				       GError **error) G_GNUC_WARN_UNUSED_RESULT;
/* tests: the bases that stand for http://169.254.170.2 and http://169.254.169.254 */
void
sfl_aws_credential_provider_set_link_local(SflAwsCredentialProvider *self,
					   const gchar *container_base, const gchar *imds_base);

/* AWS_REGION, else AWS_DEFAULT_REGION, else NULL */
const gchar *sfl_aws_region_from_env(const gchar *const *envp);

G_END_DECLS
