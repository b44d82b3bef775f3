/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflSigV4"

#include "config.h"

#include "sfl-sigv4.h"

#include <string.h>

/**
 * sfl_sigv4_hex_sha256:
 * @data: bytes
 * @len: their length
 *
 * Returns: (transfer full): the lowercase hex SHA-256
 */
gchar *
sfl_sigv4_hex_sha256(const guint8 *data, gsize len)
{
	return g_compute_checksum_for_data(G_CHECKSUM_SHA256,
					   data != NULL ? data : (const guint8 *)"", len);
}

/**
 * sfl_sigv4_uri_encode:
 * @text: raw text
 * @keep_slash: leave "/" alone (object keys in a path)
 *
 * Returns: (transfer full): the encoded text, uppercase hex
 */
gchar *
sfl_sigv4_uri_encode(const gchar *text, gboolean keep_slash)
{
	GString *out = g_string_sized_new(strlen(text) + 8);

	for (const guchar *p = (const guchar *)text; *p != '\0'; p++) {
		if (g_ascii_isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~' ||
		    (keep_slash && *p == '/'))
			g_string_append_c(out, (gchar)*p);
		else
			g_string_append_printf(out, "%%%02X", *p);
	}
	return g_string_free(out, FALSE);
}

/**
 * sfl_sigv4_amz_date:
 * @wall_usec: Unix time in microseconds
 *
 * Returns: (transfer full): e.g. "20130524T000000Z"
 */
gchar *
sfl_sigv4_amz_date(gint64 wall_usec)
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(wall_usec / G_USEC_PER_SEC);
	return g_date_time_format(dt, "%Y%m%dT%H%M%SZ");
}

static void
sfl_sigv4_hmac(const guint8 *key, gsize key_len, const gchar *data, guint8 out[32])
{
	g_autoptr(GHmac) hmac = g_hmac_new(G_CHECKSUM_SHA256, key, key_len);
	gsize len = 32;

	g_hmac_update(hmac, (const guchar *)data, (gssize)strlen(data));
	g_hmac_get_digest(hmac, out, &len);
}

static gchar *
sfl_sigv4_hex(const guint8 *data, gsize len)
{
	GString *out = g_string_sized_new(len * 2);
	for (gsize i = 0; i < len; i++)
		g_string_append_printf(out, "%02x", data[i]);
	return g_string_free(out, FALSE);
}

typedef struct {
	gchar *name;
	gchar *value;
} SflSigV4Pair;

static void
sfl_sigv4_pair_clear(gpointer data)
{
	SflSigV4Pair *pair = data;
	g_free(pair->name);
	g_free(pair->value);
}

static gint
sfl_sigv4_pair_cmp(gconstpointer a, gconstpointer b)
{
	const SflSigV4Pair *pa = a;
	const SflSigV4Pair *pb = b;
	gint c = strcmp(pa->name, pb->name);
	return c != 0 ? c : strcmp(pa->value, pb->value);
}

/* trimmed, with inner runs of spaces collapsed to one (docs/internals/wire-notes.md, "SigV4") */
static gchar *
sfl_sigv4_header_value(const gchar *value)
{
	g_autofree gchar *trimmed = g_strstrip(g_strdup(value));
	GString *out = g_string_sized_new(strlen(trimmed));
	gboolean space = FALSE;

	for (const gchar *p = trimmed; *p != '\0'; p++) {
		if (*p == ' ' || *p == '\t') {
			space = TRUE;
			continue;
		}
		if (space)
			g_string_append_c(out, ' ');
		space = FALSE;
		g_string_append_c(out, *p);
	}
	return g_string_free(out, FALSE);
}

static gchar *
sfl_sigv4_canonical_query(const gchar *const *query)
{
	g_autoptr(GArray) pairs = g_array_new(FALSE, TRUE, sizeof(SflSigV4Pair));
	GString *out = g_string_new(NULL);

	g_array_set_clear_func(pairs, sfl_sigv4_pair_clear);
	for (guint i = 0; query != NULL && query[i] != NULL && query[i + 1] != NULL; i += 2) {
		SflSigV4Pair pair = { sfl_sigv4_uri_encode(query[i], FALSE),
				      sfl_sigv4_uri_encode(query[i + 1], FALSE) };
		g_array_append_val(pairs, pair);
	}
	g_array_sort(pairs, sfl_sigv4_pair_cmp);
	for (guint i = 0; i < pairs->len; i++) {
		const SflSigV4Pair *pair = &g_array_index(pairs, SflSigV4Pair, i);
		g_string_append_printf(out, "%s%s=%s", i > 0 ? "&" : "", pair->name, pair->value);
	}
	return g_string_free(out, FALSE);
}

/**
 * sfl_sigv4_sign:
 * @request: what to sign
 * @result: (out caller-allocates): every intermediate, for tests and debugging
 *
 * Fills @result; free its members with sfl_sigv4_result_clear().
 */
void
sfl_sigv4_sign(const SflSigV4Request *request, SflSigV4Result *result)
{
	g_autoptr(GArray) headers = g_array_new(FALSE, TRUE, sizeof(SflSigV4Pair));
	g_autoptr(GString) canonical_headers = g_string_new(NULL);
	g_autoptr(GString) signed_headers = g_string_new(NULL);
	g_autofree gchar *query = sfl_sigv4_canonical_query(request->query);
	g_autofree gchar *date = g_strndup(request->amz_date, 8);
	g_autofree gchar *scope = NULL;
	g_autofree gchar *secret_key = NULL;
	guint8 k_date[32], k_region[32], k_service[32], k_signing[32], sig[32];

	g_array_set_clear_func(headers, sfl_sigv4_pair_clear);
	for (guint i = 0; request->headers[i] != NULL && request->headers[i + 1] != NULL; i += 2) {
		SflSigV4Pair pair = { g_ascii_strdown(request->headers[i], -1),
				      sfl_sigv4_header_value(request->headers[i + 1]) };
		g_array_append_val(headers, pair);
	}
	g_array_sort(headers, sfl_sigv4_pair_cmp);
	for (guint i = 0; i < headers->len; i++) {
		const SflSigV4Pair *pair = &g_array_index(headers, SflSigV4Pair, i);
		g_string_append_printf(canonical_headers, "%s:%s\n", pair->name, pair->value);
		g_string_append_printf(signed_headers, "%s%s", i > 0 ? ";" : "", pair->name);
	}

	memset(result, 0, sizeof(*result));
	result->signed_headers = g_strdup(signed_headers->str);
	result->canonical_request = g_strdup_printf(
		"%s\n%s\n%s\n%s\n%s\n%s", request->method, request->canonical_uri, query,
		canonical_headers->str, signed_headers->str, request->payload_hash);
	result->canonical_request_hash = sfl_sigv4_hex_sha256(
		(const guint8 *)result->canonical_request, strlen(result->canonical_request));
	scope = g_strdup_printf("%s/%s/%s/aws4_request", date, request->region, request->service);
	result->string_to_sign = g_strdup_printf("AWS4-HMAC-SHA256\n%s\n%s\n%s", request->amz_date,
						 scope, result->canonical_request_hash);

	secret_key = g_strconcat("AWS4", request->secret_access_key, NULL);
	sfl_sigv4_hmac((const guint8 *)secret_key, strlen(secret_key), date, k_date);
	sfl_sigv4_hmac(k_date, sizeof(k_date), request->region, k_region);
	sfl_sigv4_hmac(k_region, sizeof(k_region), request->service, k_service);
	sfl_sigv4_hmac(k_service, sizeof(k_service), "aws4_request", k_signing);
	sfl_sigv4_hmac(k_signing, sizeof(k_signing), result->string_to_sign, sig);
	result->signing_key_hex = sfl_sigv4_hex(k_signing, sizeof(k_signing));
	result->signature = sfl_sigv4_hex(sig, sizeof(sig));
	result->authorization = g_strdup_printf(
		"AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s",
		request->access_key_id, scope, signed_headers->str, result->signature);
	/* the derived keys are as good as the secret for a day */
	memset(secret_key, 0, strlen(secret_key));
	memset(k_date, 0, sizeof(k_date));
	memset(k_region, 0, sizeof(k_region));
	memset(k_service, 0, sizeof(k_service));
	memset(k_signing, 0, sizeof(k_signing));
}

void
sfl_sigv4_result_clear(SflSigV4Result *result)
{
	g_clear_pointer(&result->canonical_request, g_free);
	g_clear_pointer(&result->canonical_request_hash, g_free);
	g_clear_pointer(&result->string_to_sign, g_free);
	g_clear_pointer(&result->signing_key_hex, g_free);
	g_clear_pointer(&result->signed_headers, g_free);
	g_clear_pointer(&result->signature, g_free);
	g_clear_pointer(&result->authorization, g_free);
}
