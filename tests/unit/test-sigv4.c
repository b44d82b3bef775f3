/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestSigV4"

#include "config.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-s3-client.h"
#include "sfl-sigv4.h"

/* the three published vectors of docs/internals/wire-notes.md "SigV4", byte for byte */

#define S3_AKID	  "AKIAIOSFODNN7EXAMPLE"
#define S3_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* signs the request these pieces make into @res */
static void
sign(SflSigV4Result *res, const gchar *method, const gchar *uri, const gchar *const *query,
     const gchar *const *headers, const gchar *payload_hash, const gchar *amz_date,
     const gchar *region, const gchar *service, const gchar *akid, const gchar *secret)
{
	SflSigV4Request req = { .method = method,
				.canonical_uri = uri,
				.query = query,
				.headers = headers,
				.payload_hash = payload_hash,
				.amz_date = amz_date,
				.region = region,
				.service = service,
				.access_key_id = akid,
				.secret_access_key = secret };

	sfl_sigv4_sign(&req, res);
}

static void
test_s3_get_object(void)
{
	const gchar *headers[] = { "Host",
				   "examplebucket.s3.amazonaws.com",
				   "Range",
				   "bytes=0-9",
				   "x-amz-content-sha256",
				   EMPTY_SHA,
				   "x-amz-date",
				   "20130524T000000Z",
				   NULL };
	g_auto(SflSigV4Result) res = { 0 };
	g_autofree gchar *empty = sfl_sigv4_hex_sha256(NULL, 0);

	g_assert_cmpstr(empty, ==, EMPTY_SHA);
	sign(&res, "GET", "/test.txt", NULL, headers, EMPTY_SHA, "20130524T000000Z", "us-east-1",
	     "s3", S3_AKID, S3_SECRET);
	g_assert_cmpstr(res.signed_headers, ==, "host;range;x-amz-content-sha256;x-amz-date");
	g_assert_cmpstr(res.canonical_request_hash, ==,
			"7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
	g_assert_cmpstr(res.signing_key_hex, ==,
			"dbb893acc010964918f1fd433add87c70e8b0db6be30c1fbeafefa5ec6ba8378");
	g_assert_cmpstr(res.signature, ==,
			"f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
	g_assert_cmpstr(
		res.authorization, ==,
		"AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
		"aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
		"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

static void
test_s3_put_object(void)
{
	const gchar *body = "Welcome to Amazon S3.";
	g_autofree gchar *payload = sfl_sigv4_hex_sha256((const guint8 *)body, strlen(body));
	g_autofree gchar *uri = NULL;
	const gchar *headers[] = { "date",
				   "Fri, 24 May 2013 00:00:00 GMT",
				   "host",
				   "examplebucket.s3.amazonaws.com",
				   "x-amz-content-sha256",
				   payload,
				   "x-amz-date",
				   "20130524T000000Z",
				   "x-amz-storage-class",
				   "REDUCED_REDUNDANCY",
				   NULL };
	g_auto(SflSigV4Result) res = { 0 };

	g_assert_cmpstr(payload, ==,
			"44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
	/* S3 encodes each segment once: "$" becomes %24, "/" stays */
	uri = sfl_sigv4_uri_encode("/test$file.text", TRUE);
	g_assert_cmpstr(uri, ==, "/test%24file.text");
	sign(&res, "PUT", uri, NULL, headers, payload, "20130524T000000Z", "us-east-1", "s3",
	     S3_AKID, S3_SECRET);
	g_assert_cmpstr(res.signed_headers, ==,
			"date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
	g_assert_cmpstr(res.canonical_request_hash, ==,
			"9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d");
	g_assert_cmpstr(res.signature, ==,
			"98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

static void
test_get_vanilla(void)
{
	const gchar *headers[] = { "Host", "example.amazonaws.com", "X-Amz-Date",
				   "20150830T123600Z", NULL };
	g_auto(SflSigV4Result) res = { 0 };

	sign(&res, "GET", "/", NULL, headers, EMPTY_SHA, "20150830T123600Z", "us-east-1", "service",
	     "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
	g_assert_cmpstr(res.signed_headers, ==, "host;x-amz-date");
	g_assert_cmpstr(res.canonical_request_hash, ==,
			"bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
	g_assert_cmpstr(res.signature, ==,
			"5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

static void
test_canonical_pieces(void)
{
	const gchar *query[] = { "uploadType", "media", "name", "a b/c", "empty", "", NULL };
	const gchar *headers[] = { "Host", "h", "X-Amz-Meta-Spaces", "  a   b  c ", NULL };
	g_auto(SflSigV4Result) res = { 0 };
	g_autofree gchar *date = sfl_sigv4_amz_date(G_GINT64_CONSTANT(1369353600) * G_USEC_PER_SEC);

	g_assert_cmpstr(date, ==, "20130524T000000Z");
	sign(&res, "POST", "/", query, headers, "UNSIGNED-PAYLOAD", "20260101T000000Z", "eu-west-1",
	     "s3", "AK", "SK");
	/* sorted by encoded name, RFC 3986 values, empty value as "name=" */
	g_assert_cmpstr(res.canonical_request, ==,
			"POST\n/\nempty=&name=a%20b%2Fc&uploadType=media\nhost:h\n"
			"x-amz-meta-spaces:a b c\n\nhost;x-amz-meta-spaces\nUNSIGNED-PAYLOAD");
}

/*
 * virtual-hosted for AWS, path-style for dotted buckets and custom endpoints
 * (docs/internals/wire-notes.md, "S3-compatible stores")
 */
static void
test_s3_urls(void)
{
	const gchar *env[] = { "AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK", NULL };
	g_autoptr(SflAwsCredentialProvider) creds =
		sfl_aws_credential_provider_new(env, NULL, NULL);
	const struct {
		const gchar *bucket;
		const gchar *region;
		const gchar *endpoint;
		const gchar *url;
		const gchar *canonical;
	} cases[] = {
		{ "acme", "eu-west-1", NULL,
		  "https://acme.s3.eu-west-1.amazonaws.com/a%20b/c%2Bd.json", "/a%20b/c%2Bd.json" },
		{ "acme.logs", "us-east-1", NULL,
		  "https://s3.us-east-1.amazonaws.com/acme.logs/a%20b/c%2Bd.json",
		  "/acme.logs/a%20b/c%2Bd.json" },
		{ "acme", NULL, "http://127.0.0.1:9000/",
		  "http://127.0.0.1:9000/acme/a%20b/c%2Bd.json", "/acme/a%20b/c%2Bd.json" },
		{ "acme", NULL, "https://minio.example:443/s3",
		  "https://minio.example/s3/acme/a%20b/c%2Bd.json", "/s3/acme/a%20b/c%2Bd.json" },
		{ "acme", NULL, "http://[::1]:9000", "http://[::1]:9000/acme/a%20b/c%2Bd.json",
		  "/acme/a%20b/c%2Bd.json" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(SflObjectClient) client =
			sfl_s3_client_new(cases[i].bucket, cases[i].region, cases[i].endpoint,
					  creds, NULL, 1000, &error);
		g_autofree gchar *canonical = NULL;
		g_autofree gchar *url = NULL;

		g_assert_no_error(error);
		url = sfl_s3_client_object_url(SFL_S3_CLIENT(client), "a b/c+d.json", &canonical);
		g_assert_cmpstr(url, ==, cases[i].url);
		g_assert_cmpstr(canonical, ==, cases[i].canonical);
	}
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(SflObjectClient) bad = sfl_s3_client_new(
			"acme", NULL, "http://user:pw@minio:9000", creds, NULL, 1000, &error);
		g_assert_null(bad);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_assert_null(strstr(error->message, "pw"));
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/sigv4/s3-get-object", test_s3_get_object);
	g_test_add_func("/sfl/sigv4/s3-put-object", test_s3_put_object);
	g_test_add_func("/sfl/sigv4/get-vanilla", test_get_vanilla);
	g_test_add_func("/sfl/sigv4/canonical-pieces", test_canonical_pieces);
	g_test_add_func("/sfl/sigv4/s3-urls", test_s3_urls);
	return g_test_run();
}
