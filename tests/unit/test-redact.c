/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflRedact"

#include "config.h"

#include "sfl-redact.h"
#include "sfl-sf-auth.h"

#include <string.h>

typedef struct {
	const gchar *in;
	const gchar *out;
} SflRedactCase;

static void
sfl_redact_assert_cases(const SflRedactCase *cases, gsize n_cases)
{
	for (gsize i = 0; i < n_cases; i++) {
		g_autofree gchar *got = sfl_redact(cases[i].in);
		g_assert_cmpstr(got, ==, cases[i].out);
	}
}

static void
sfl_redact_test_null(void)
{
	g_autofree gchar *got = sfl_redact(NULL);
	g_autofree gchar *empty = sfl_redact("");

	g_assert_null(got);
	g_assert_cmpstr(empty, ==, "");
}

static void
sfl_redact_test_plain(void)
{
	const SflRedactCase cases[] = {
		{ "polling EventLogFile since 2026-11-30T03:00:00Z, 42 records",
		  "polling EventLogFile since 2026-11-30T03:00:00Z, 42 records" },
		{ "pushed to https://loki.example.com/loki/api/v1/push in 12 ms",
		  "pushed to https://loki.example.com/loki/api/v1/push in 12 ms" },
		{ "failed to refresh token: HTTP 401", "failed to refresh token: HTTP 401" },
		{ "token != NULL", "token != NULL" },
		{ "{\"level\":\"info\",\"count\":3}", "{\"level\":\"info\",\"count\":3}" },
		{ "Ünïcödé stays as it is", "Ünïcödé stays as it is" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
}

static void
sfl_redact_test_bearer(void)
{
	const SflRedactCase cases[] = {
		{ "Bearer abc.def", "Bearer ***" },
		{ "sending bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl now", "sending bearer *** now" },
		/* salesforce session ids contain '!', which must not end the token */
		{ "Bearer 00D5g000004BCDe!AQ8AQFakeToken", "Bearer ***" },
		{ "BEARER abc", "BEARER ***" },
		{ "\"token_type\":\"Bearer\"", "\"token_type\":\"Bearer\"" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
}

static void
sfl_redact_test_basic(void)
{
	const SflRedactCase cases[] = {
		{ "Authorization: Basic dXNlcjpw", "Authorization: Basic ***" },
		{ "authorization: basic dXNlcjpwYXNz==", "authorization: basic ***" },
		{ "> Authorization: Bearer abc.def\r\n> Host: x",
		  "> Authorization: Bearer ***\r\n> Host: x" },
		{ "Authorization: SSWS 00abcdef more", "Authorization: SSWS ***" },
		{ "Authorization: 00abcdef", "Authorization: ***" },
		{ "{\"Authorization\":\"Bearer abc def\",\"x\":1}",
		  "{\"Authorization\":\"Bearer ***\",\"x\":1}" },
		{ "Proxy-Authorization: Basic Zm9vOmJhcg==", "Proxy-Authorization: Basic ***" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
}

static void
sfl_redact_test_userinfo(void)
{
	const SflRedactCase cases[] = {
		{ "https://user:secret@host/p", "https://user:***@host/p" },
		{ "https://tokenonly@host", "https://***@host" },
		{ "GET http://bob:pw@example.com:8080/x?y=1 failed",
		  "GET http://bob:***@example.com:8080/x?y=1 failed" },
		{ "s3://AKIAFAKE:wJalrFAKE@bucket/key", "s3://AKIAFAKE:***@bucket/key" },
		{ "redis://:p@ss@cache:6379", "redis://:***@cache:6379" },
		{ "https://host/path?email=a@b.c", "https://host/path?email=a@b.c" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
}

static void
sfl_redact_test_pem(void)
{
	const gchar *rsa = "key: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabcd\n"
			   "-----END RSA PRIVATE KEY-----\nnext line";
	const gchar *json = "{\"pem\":\"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADAN\\n"
			    "-----END PRIVATE KEY-----\\n\"}";
	const gchar *cut = "loaded -----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHzBJ\nQWERT";
	const gchar *cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
	g_autofree gchar *got_rsa = sfl_redact(rsa);
	g_autofree gchar *got_json = sfl_redact(json);
	g_autofree gchar *got_cut = sfl_redact(cut);
	g_autofree gchar *got_cert = sfl_redact(cert);

	g_assert_cmpstr(got_rsa, ==,
			"key: -----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----\n"
			"next line");
	g_assert_cmpstr(got_json, ==,
			"{\"pem\":\"-----BEGIN PRIVATE KEY-----***-----END PRIVATE KEY-----\\n\"}");
	/* without an END line everything after BEGIN is key material */
	g_assert_cmpstr(got_cut, ==,
			"loaded -----BEGIN ENCRYPTED PRIVATE KEY-----***"
			"-----END ENCRYPTED PRIVATE KEY-----");
	g_assert_null(strstr(got_cut, "QWERT"));
	/* certificates are public */
	g_assert_cmpstr(got_cert, ==, cert);
}

static void
sfl_redact_test_keyvalue(void)
{
	const SflRedactCase cases[] = {
		{ "password=hunter2", "password=***" },
		{ "user=bob password=hunter2 retry=3", "user=bob password=*** retry=3" },
		{ "PASSWORD = hunter2", "PASSWORD = ***" },
		{ "db_passwd=x1 api_key=k1 apikey=k2 x-api-key=k3",
		  "db_passwd=*** api_key=*** apikey=*** x-api-key=***" },
		{ "auth_token=abc;Path=/", "auth_token=***;Path=/" },
		{ "assertion=eyJh.eyJz.sig&grant_type=jwt", "assertion=***&grant_type=jwt" },
		{ "refresh_token=\"a b c\" next", "refresh_token=\"***\" next" },
		{ "secret='x y' next", "secret='***' next" },
		{ "password=\"unterminated value", "password=\"***" },
		{ "password=\"\"", "password=\"\"" },
		{ "access_token=00D5g!AQ8xyz", "access_token=***" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
}

static void
sfl_redact_test_json(void)
{
	const SflRedactCase cases[] = {
		{ "\"access_token\": \"abc\"", "\"access_token\": \"***\"" },
		{ "{\"access_token\":\"00D!AQ\",\"instance_url\":\"https://x.my.salesforce.com\","
		  "\"token_type\":\"Bearer\"}",
		  "{\"access_token\":\"***\",\"instance_url\":\"https://x.my.salesforce.com\","
		  "\"token_type\":\"Bearer\"}" },
		{ "{\"client_secret\":\"a\\\"b\",\"n\":1}", "{\"client_secret\":\"***\",\"n\":1}" },
		{ "{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE "
		  "KEY-----\\n\"}",
		  "{\"private_key\": \"***\"}" },
		{ "{\"expires_in\":7200,\"token\":12345}", "{\"expires_in\":7200,\"token\":***}" },
		/* JSON logged inside JSON arrives with escaped quotes */
		{ "body={\\\"password\\\":\\\"hunter2\\\"}",
		  "body={\\\"password\\\":\\\"***\\\"}" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
}

static void
sfl_redact_test_yaml(void)
{
	const SflRedactCase cases[] = {
		{ "client_secret: xyz", "client_secret: ***" },
		{ "salesforce:\n  client_id: abc\n  client_secret: xyz\n  password: hunter2\n",
		  "salesforce:\n  client_id: abc\n  client_secret: ***\n  password: ***\n" },
		{ "- token: t0k3n", "- token: ***" },
		{ "{password: a1, user: b}", "{password: ***, user: b}" },
		{ "key: 'private_key': 'xx'", "key: 'private_key': '***'" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
}

static void
sfl_redact_test_query(void)
{
	const SflRedactCase cases[] = {
		{ "?token=abc&x=1", "?token=***&x=1" },
		{ "https://h/cb?code=1&access_token=abc&state=2#frag",
		  "https://h/cb?code=1&access_token=***&state=2#frag" },
		{ "POST /services/oauth2/token grant_type=password&client_secret=s3&password=p4",
		  "POST /services/oauth2/token "
		  "grant_type=password&client_secret=***&password=***" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
}

static void
sfl_redact_test_not_secret(void)
{
	const SflRedactCase cases[] = {
		{ "token_ttl=1h", "token_ttl=1h" },
		{ "token_ttl: 1h", "token_ttl: 1h" },
		{ "password_min_length=12 secretary=alice tokens=5",
		  "password_min_length=12 secretary=alice tokens=5" },
		{ "token_ttl=1h auth_token=abc", "token_ttl=1h auth_token=***" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
}

static void
sfl_redact_test_registered(void)
{
	g_autofree gchar *got = NULL;
	g_autofree gchar *short_one = NULL;
	g_autofree gchar *after_clear = NULL;

	sfl_redact_add_secret(NULL);
	sfl_redact_add_secret("abc");
	sfl_redact_add_secret("s3cr3t");
	sfl_redact_add_secret("s3cr3t-and-more");
	sfl_redact_add_secret("s3cr3t");

	got = sfl_redact("a s3cr3t-and-more b s3cr3t c s3cr3ts3cr3t");
	g_assert_cmpstr(got, ==, "a *** b *** c ******");
	/* shorter than four bytes would shred ordinary text */
	short_one = sfl_redact("abc abc");
	g_assert_cmpstr(short_one, ==, "abc abc");

	sfl_redact_clear_secrets();
	after_clear = sfl_redact("s3cr3t");
	g_assert_cmpstr(after_clear, ==, "s3cr3t");
}

static void
sfl_redact_test_key_is_secret(void)
{
	g_assert_true(sfl_redact_key_is_secret("PASSWORD"));
	g_assert_true(sfl_redact_key_is_secret("client_secret"));
	g_assert_true(sfl_redact_key_is_secret("SFL_ACCESS_TOKEN"));
	g_assert_true(sfl_redact_key_is_secret("Authorization"));
	g_assert_false(sfl_redact_key_is_secret("TOKEN_TTL"));
	g_assert_false(sfl_redact_key_is_secret("SFL_SINK"));
}

static void
sfl_redact_test_idempotent(void)
{
	const gchar *inputs[] = {
		"Authorization: Bearer abc password=x https://u:p@h/ \"token\": \"t\"",
		"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
	};

	for (gsize i = 0; i < G_N_ELEMENTS(inputs); i++) {
		g_autofree gchar *once = sfl_redact(inputs[i]);
		g_autofree gchar *twice = sfl_redact(once);
		g_assert_cmpstr(once, ==, twice);
	}
}

static void
sfl_redact_test_invalid_utf8(void)
{
	g_autofree gchar *got = sfl_redact("\xff\xfe password=hunter2 \xc3");

	g_assert_cmpstr(got, ==, "\xff\xfe password=*** \xc3");
}

/*
 * Found by fuzz-sf-rest-error: values holding a character whose UTF-8 has the byte 0x85 or
 * 0xa0 (U+00C5 is c3 85, U+00E0 c3 a0, U+4F60 e4 bd a0) were cut inside it, which left the rest
 * of the secret in the clear and the text invalid UTF-8.
 */
static void
sfl_redact_test_non_ascii_value(void)
{
	const SflRedactCase cases[] = {
		{ "token=abc\xc3\x85secret ok", "token=*** ok" },
		{ "password: \xe4\xbd\xa0\xe5\xa5\xbdsecret", "password: ***" },
		{ "Bearer abc\xc3\xa0secret, next", "Bearer ***, next" },
		{ "https://user:p\xc3\xa0ss@host/", "https://user:***@host/" },
		/* real white space still ends a value */
		{ "token=abc\tnext", "token=***\tnext" },
		{ "token=abc\x0bnext", "token=***\x0bnext" },
	};

	sfl_redact_assert_cases(cases, G_N_ELEMENTS(cases));
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *got = sfl_redact(cases[i].in);
		g_assert_true(g_utf8_validate(got, -1, NULL));
	}
}

/*
 * A Salesforce error excerpt is cut after redaction: a private key early in the body shrinks to
 * its marker and pulls a registered secret far behind it into the first 300 bytes, where it must
 * show as redacted, not as the unmatched half a cut before redaction would leave.
 */
static void
sfl_redact_test_excerpt(void)
{
	g_autoptr(GString) body = g_string_new("error -----BEGIN PRIVATE KEY-----\n");
	g_autofree gchar *secret = g_strnfill(100, 'Q');
	g_autofree gchar *excerpt = NULL;

	while (body->len < 1100)
		g_string_append(body, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n");
	g_string_append(body, "-----END PRIVATE KEY-----\n");
	while (body->len < 1150)
		g_string_append_c(body, '.');
	g_string_append_printf(body, " the org said %s tail", secret);
	sfl_redact_add_secret(secret);
	excerpt = sfl_sf_excerpt(body->str, body->len);
	g_assert_null(strstr(excerpt, "QQQQ"));
	g_assert_null(strstr(excerpt, "MIIEvQ"));
	g_assert_nonnull(strstr(excerpt, "tail"));
	g_assert_cmpuint(strlen(excerpt), <=, 300);
	sfl_redact_clear_secrets();
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/sfl/redact/null", sfl_redact_test_null);
	g_test_add_func("/sfl/redact/plain", sfl_redact_test_plain);
	g_test_add_func("/sfl/redact/bearer", sfl_redact_test_bearer);
	g_test_add_func("/sfl/redact/basic", sfl_redact_test_basic);
	g_test_add_func("/sfl/redact/userinfo", sfl_redact_test_userinfo);
	g_test_add_func("/sfl/redact/pem", sfl_redact_test_pem);
	g_test_add_func("/sfl/redact/keyvalue", sfl_redact_test_keyvalue);
	g_test_add_func("/sfl/redact/json", sfl_redact_test_json);
	g_test_add_func("/sfl/redact/yaml", sfl_redact_test_yaml);
	g_test_add_func("/sfl/redact/query", sfl_redact_test_query);
	g_test_add_func("/sfl/redact/not-secret", sfl_redact_test_not_secret);
	g_test_add_func("/sfl/redact/registered", sfl_redact_test_registered);
	g_test_add_func("/sfl/redact/key-is-secret", sfl_redact_test_key_is_secret);
	g_test_add_func("/sfl/redact/idempotent", sfl_redact_test_idempotent);
	g_test_add_func("/sfl/redact/invalid-utf8", sfl_redact_test_invalid_utf8);
	g_test_add_func("/sfl/redact/non-ascii-value", sfl_redact_test_non_ascii_value);
	g_test_add_func("/sfl/redact/excerpt", sfl_redact_test_excerpt);

	return g_test_run();
}
