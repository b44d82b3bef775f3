/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflJwt"

#include "config.h"

#include "sfl-jwt.h"

#include <string.h>

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"

/* OpenSSL cleanups used only here (candidates for sfl-autocleanups.h) */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EVP_PKEY, EVP_PKEY_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EVP_MD_CTX, EVP_MD_CTX_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(BIO, BIO_free)

struct _SflJwtSigner {
	EVP_PKEY *pkey;
};

/* the library's reason for the last failure, with the queue cleared; never key material */
static gchar *
sfl_jwt_openssl_reason(void)
{
	unsigned long code = ERR_peek_last_error();
	const gchar *reason = code != 0 ? ERR_reason_error_string(code) : NULL;
	gchar *text = g_strdup(reason != NULL ? reason : "unknown OpenSSL error");

	ERR_clear_error();
	return text;
}

/**
 * sfl_base64url_encode:
 * @data: bytes
 * @len: their length
 *
 * Returns: (transfer full): base64url (RFC 4648 §5) without padding
 */
gchar *
sfl_base64url_encode(const guint8 *data, gsize len)
{
	gchar *text = g_base64_encode(data, len);
	gsize out = 0;

	for (gsize i = 0; text[i] != '\0'; i++) {
		if (text[i] == '=')
			break;
		text[out++] = text[i] == '+' ? '-' : text[i] == '/' ? '_' : text[i];
	}
	text[out] = '\0';
	return text;
}

/**
 * sfl_jwt_signer_new_from_pem:
 * @pem: a PEM private key (PKCS#1 "RSA PRIVATE KEY" or PKCS#8 "PRIVATE KEY")
 * @len: its length, or -1 for NUL-terminated text
 * @error: return location for an error
 *
 * The key for Salesforce, which wants at least 2048 bits.
 *
 * Returns: (transfer full) (nullable): a signer, or %NULL with SFL_ERROR_INVALID_CONFIG
 */
SflJwtSigner *
sfl_jwt_signer_new_from_pem(const gchar *pem, gssize len, GError **error)
{
	return sfl_jwt_signer_new_rsa_pem(pem, len, 2048, error);
}

/**
 * sfl_jwt_signer_new_rsa_pem:
 * @pem: a PEM private key (PKCS#1 "RSA PRIVATE KEY" or PKCS#8 "PRIVATE KEY")
 * @len: its length, or -1 for NUL-terminated text
 * @min_bits: the smallest RSA modulus the peer accepts, 0 for no check
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): a signer, or %NULL with SFL_ERROR_INVALID_CONFIG
 */
SflJwtSigner *
sfl_jwt_signer_new_rsa_pem(const gchar *pem, gssize len, guint min_bits, GError **error)
{
	g_autoptr(BIO) bio = NULL;
	g_autoptr(EVP_PKEY) pkey = NULL;
	SflJwtSigner *self = NULL;

	g_return_val_if_fail(pem != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (len < 0)
		len = (gssize)strlen(pem);
	if (len > G_MAXINT) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "private key: too large to be a PEM key");
		return NULL;
	}
	ERR_clear_error();
	bio = BIO_new_mem_buf(pem, (int)len);
	if (bio == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "private key: out of memory");
		return NULL;
	}
	/* an empty passphrase callback: an encrypted key fails instead of prompting */
	pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, (void *)"");
	if (pkey == NULL) {
		g_autofree gchar *reason = sfl_jwt_openssl_reason();

		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "private key: not an unencrypted PEM private key (%s)", reason);
		return NULL;
	}
	if (!EVP_PKEY_is_a(pkey, "RSA")) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "private key: RS256 needs an RSA key, this is %s",
			    EVP_PKEY_get0_type_name(pkey));
		return NULL;
	}
	if (min_bits > 0 && EVP_PKEY_get_bits(pkey) < (int)min_bits) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "private key: RSA key of %d bits, Salesforce needs at least 2048",
			    EVP_PKEY_get_bits(pkey));
		return NULL;
	}
	self = g_new0(SflJwtSigner, 1);
	self->pkey = g_steal_pointer(&pkey);
	return self;
}

/**
 * sfl_jwt_signer_new_from_file:
 * @path: a PEM private key file
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): a signer, or %NULL with SFL_ERROR_INVALID_CONFIG
 */
SflJwtSigner *
sfl_jwt_signer_new_from_file(const gchar *path, GError **error)
{
	g_autoptr(GError) local = NULL;
	g_autofree gchar *pem = NULL;
	gsize len = 0;
	SflJwtSigner *self = NULL;

	g_return_val_if_fail(path != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (!g_file_get_contents(path, &pem, &len, &local)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG, "private key file %s: %s",
			    path, local->message);
		return NULL;
	}
	self = sfl_jwt_signer_new_from_pem(pem, (gssize)len, error);
	/* the PEM text is a secret: do not leave it in freed heap memory */
	memset(pem, 0, len);
	if (self == NULL) {
		g_prefix_error(error, "%s: ", path);
		return NULL;
	}
	return self;
}

/**
 * sfl_jwt_signer_sign_parts:
 * @self: a signer
 * @header: the JOSE header as JSON text, {"alg":"RS256",...}
 * @claims: the claims as JSON text
 * @error: return location for an error
 *
 * The one RS256 signer: each part base64url without padding, then the signature over
 * "header.claims". Callers build their own JSON because peers differ in the claims and in the
 * header's "kid".
 *
 * Returns: (transfer full) (nullable): the compact JWT "header.claims.signature"
 */
gchar *
sfl_jwt_signer_sign_parts(SflJwtSigner *self, const gchar *header, const gchar *claims,
			  GError **error)
{
	g_autoptr(EVP_MD_CTX) md = NULL;
	g_autofree gchar *header_b64 = NULL;
	g_autofree gchar *claims_b64 = NULL;
	g_autofree gchar *signing_input = NULL;
	g_autofree guint8 *sig = NULL;
	g_autofree gchar *sig_b64 = NULL;
	size_t sig_len = 0;

	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(header != NULL && claims != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	header_b64 = sfl_base64url_encode((const guint8 *)header, strlen(header));
	claims_b64 = sfl_base64url_encode((const guint8 *)claims, strlen(claims));
	signing_input = g_strconcat(header_b64, ".", claims_b64, NULL);

	ERR_clear_error();
	md = EVP_MD_CTX_new();
	if (md == NULL || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, self->pkey) != 1 ||
	    EVP_DigestSign(md, NULL, &sig_len, (const guint8 *)signing_input,
			   strlen(signing_input)) != 1) {
		g_autofree gchar *reason = sfl_jwt_openssl_reason();

		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "JWT signing failed: %s", reason);
		return NULL;
	}
	sig = g_malloc(sig_len);
	if (EVP_DigestSign(md, sig, &sig_len, (const guint8 *)signing_input,
			   strlen(signing_input)) != 1) {
		g_autofree gchar *reason = sfl_jwt_openssl_reason();

		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "JWT signing failed: %s", reason);
		return NULL;
	}
	sig_b64 = sfl_base64url_encode(sig, sig_len);
	return g_strconcat(signing_input, ".", sig_b64, NULL);
}

/**
 * sfl_jwt_signer_sign:
 * @self: a signer
 * @iss: the issuer (consumer key)
 * @sub: the subject (username)
 * @aud: the audience (login URL)
 * @exp: the expiry, seconds since the epoch
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the compact JWT "header.claims.signature"
 */
gchar *
sfl_jwt_signer_sign(SflJwtSigner *self, const gchar *iss, const gchar *sub, const gchar *aud,
		    gint64 exp, GError **error)
{
	static const gchar header[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
	g_autoptr(json_t) claims = NULL;
	g_autofree gchar *claims_text = NULL;

	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(iss != NULL && sub != NULL && aud != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	claims = json_pack("{s:s, s:s, s:s, s:I}", "iss", iss, "sub", sub, "aud", aud, "exp",
			   (json_int_t)exp);
	if (claims == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "JWT claims: client_id, username and login_url must be UTF-8");
		return NULL;
	}
	claims_text = json_dumps(claims, JSON_COMPACT | JSON_SORT_KEYS);
	return sfl_jwt_signer_sign_parts(self, header, claims_text, error);
}

void
sfl_jwt_signer_free(SflJwtSigner *self)
{
	if (self == NULL)
		return;
	EVP_PKEY_free(self->pkey);
	g_free(self);
}
