/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * RS256 JWT compact signing (RFC 7515/7519) with OpenSSL 3 EVP, for the Salesforce JWT bearer
 * flow (docs/internals/wire-notes.md, "JWT bearer flow"): header {"alg":"RS256","typ":"JWT"},
 * claims iss/sub/aud and exp as a NumericDate, each part base64url without padding.
 * sfl_jwt_signer_sign_parts() signs any header and claims (the Cloud Storage service-account
 * assertion).
 *
 * Errors never quote the key or the assertion.
 */

typedef struct _SflJwtSigner SflJwtSigner;

SflJwtSigner *
sfl_jwt_signer_new_from_pem(const gchar *pem, gssize len, GError **error) G_GNUC_WARN_UNUSED_RESULT;
SflJwtSigner *sfl_jwt_signer_new_rsa_pem(const gchar *pem, gssize len, guint min_bits,
					 GError **error) G_GNUC_WARN_UNUSED_RESULT;
SflJwtSigner *
sfl_jwt_signer_new_from_file(const gchar *path, GError **error) G_GNUC_WARN_UNUSED_RESULT;
gchar *sfl_jwt_signer_sign(SflJwtSigner *self, const gchar *iss, const gchar *sub, const gchar *aud,
			   gint64 exp, GError **error) G_GNUC_WARN_UNUSED_RESULT;
gchar *sfl_jwt_signer_sign_parts(SflJwtSigner *self, const gchar *header, const gchar *claims,
				 GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_jwt_signer_free(SflJwtSigner *self);

gchar *sfl_base64url_encode(const guint8 *data, gsize len) G_GNUC_WARN_UNUSED_RESULT;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflJwtSigner, sfl_jwt_signer_free)

G_END_DECLS
