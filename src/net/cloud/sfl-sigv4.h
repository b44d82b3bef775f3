/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * AWS Signature Version 4, header form (docs/internals/wire-notes.md, "SigV4"), with GLib's
 * HMAC-SHA256.
 *
 * The caller chooses what is signed: every header in @headers goes into SignedHeaders, so a
 * request must send exactly those headers with exactly those values. The canonical URI is
 * taken as given (already percent-encoded once per segment, S3's rule); query parameters
 * are given raw and encoded here.
 */

typedef struct {
	const gchar *method;
	const gchar *canonical_uri;  /* percent-encoded path, "/" at least */
	const gchar *const *query;   /* raw NAME, VALUE pairs (VALUE may be ""), NULL-terminated */
	const gchar *const *headers; /* NAME, VALUE pairs, NULL-terminated; any case */
	const gchar *payload_hash;   /* hex SHA-256 of the body, or UNSIGNED-PAYLOAD */
	const gchar *amz_date;	     /* YYYYMMDD'T'HHMMSS'Z' */
	const gchar *region;
	const gchar *service;
	const gchar *access_key_id;
	const gchar *secret_access_key;
} SflSigV4Request;

typedef struct {
	gchar *canonical_request;
	gchar *canonical_request_hash;
	gchar *string_to_sign;
	gchar *signing_key_hex;
	gchar *signed_headers;
	gchar *signature;
	gchar *authorization; /* the Authorization header value */
} SflSigV4Result;

void sfl_sigv4_sign(const SflSigV4Request *request, SflSigV4Result *result);
void sfl_sigv4_result_clear(SflSigV4Result *result);

gchar *sfl_sigv4_hex_sha256(const guint8 *data, gsize len) G_GNUC_WARN_UNUSED_RESULT;
/* RFC 3986 encoding: unreserved A-Z a-z 0-9 - _ . ~ kept; "/" kept when @keep_slash */
gchar *sfl_sigv4_uri_encode(const gchar *text, gboolean keep_slash) G_GNUC_WARN_UNUSED_RESULT;
/* x-amz-date for a Unix time in microseconds */
gchar *sfl_sigv4_amz_date(gint64 wall_usec) G_GNUC_WARN_UNUSED_RESULT;

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(SflSigV4Result, sfl_sigv4_result_clear)

G_END_DECLS
