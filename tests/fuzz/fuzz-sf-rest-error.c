/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzSfRestError"

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "sfl-clock.h"
#include "sfl-error.h"
#include "fuzz-common.h"
#include "fuzz-http-frame.h"
#include "sfl-http-private.h"
#include "sfl-redact.h"
#include "sfl-sf-rest-private.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* an access token the provider would have registered; it must never reach an error */
#define FUZZ_SF_SECRET "00DxFuzzOrg!AQ4AQFuzzAccessToken"
/* "what: HTTP 403 " before the excerpt, which sfl_sf_excerpt() caps at 300 bytes */
#define FUZZ_SF_MESSAGE_MAX (64 + 300)

static SflSfRest *fuzz_rest;
static const guint fuzz_sf_statuses[] = { 400, 401, 403, 404, 408, 429, 500, 503, 302 };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	SflSalesforceConfig cfg = { 0 };
	g_autoptr(SflCurlLoop) loop = NULL;
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(GError) error = NULL;
	SflClock *clock = NULL;

	(void)argc;
	(void)argv;
	fuzz_init_logging();
	sfl_redact_add_secret(FUZZ_SF_SECRET);
	/* nothing is ever sent: the client is only there to classify answers */
	loop = sfl_curl_loop_new();
	clock = sfl_fake_clock_new(G_GINT64_CONSTANT(1767225600) * G_USEC_PER_SEC);
	cfg.login_url = (gchar *)"https://login.invalid";
	cfg.auth_mode = SFL_SF_AUTH_CLIENT_CREDENTIALS;
	cfg.client_id = (gchar *)"fuzz-client";
	cfg.client_secret = (gchar *)"fuzz-client-secret";
	cfg.token_ttl = (gint64)3600 * G_USEC_PER_SEC;
	auth = sfl_sf_auth_new(loop, &cfg, clock, &error);
	if (auth == NULL)
		g_error("fuzz auth: %s", error->message);
	fuzz_rest = sfl_sf_rest_new(loop, auth, "64.0");
	sfl_clock_unref(clock);
	return 0;
}

/* the error code the REST client's contract (sfl-sf-rest.h) gives this answer */
static gint
fuzz_sf_expected_code(guint status, const gchar *body, gsize len)
{
	gboolean limit = FALSE;

	/* the body is searched as text: up to its first NUL, which no JSON body holds */
	for (gsize i = 0; i + 22 <= len && body[i] != '\0' && !limit; i++)
		limit = memcmp(body + i, "REQUEST_LIMIT_EXCEEDED", 22) == 0;
	if ((status == 403 && limit) || status == 429)
		return SFL_ERROR_THROTTLED;
	if (status >= 500 || status == 408)
		return SFL_ERROR_TRANSIENT;
	if (status == 401)
		return SFL_ERROR_AUTH;
	return SFL_ERROR_REJECTED;
}

/*
 * A Salesforce REST error answer as it comes off the wire (status line, headers, blank line,
 * body: usually [{"message": ..., "errorCode": ...}], an OAuth {"error", "error_description"},
 * or a proxy's HTML). Whatever it holds, the error maps as documented, counts throttling once,
 * and its message is bounded, one line of valid UTF-8, and free of the token.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const gchar *text = (const gchar *)data;
	FuzzHttpFrame frame = fuzz_http_frame(text, size);
	g_autoptr(GBytes) body = NULL;
	g_autoptr(SflHttpResponse) response = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *prefix = NULL;
	const gchar *body_data = NULL;
	gsize body_len = 0;
	guint64 throttled = sfl_sf_rest_get_throttled(fuzz_rest);
	gint64 used = 0, max = 0, skew = 0;
	guint status = frame.status;
	gint expected;

	if (frame.head_len == size) {
		/* no header block: the whole input is the body, under a status the client meets */
		frame.head_len = frame.body_from = 0;
		status = fuzz_sf_statuses[size % G_N_ELEMENTS(fuzz_sf_statuses)];
	}
	body = g_bytes_new(text + frame.body_from, size - frame.body_from);
	response = sfl_http_response_new_parsed(status, text, frame.head_len, body, FALSE);
	body_data = g_bytes_get_data(sfl_http_response_get_body(response), &body_len);

	sfl_sf_rest_note_headers(fuzz_rest, sfl_http_response_get_header(response, "Date"),
				 sfl_http_response_get_header(response, "Sforce-Limit-Info"));
	if (sfl_sf_rest_get_api_usage(fuzz_rest, &used, &max) && (used < 0 || max < 0))
		g_error("api usage %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, used, max);
	(void)sfl_sf_rest_get_clock_skew(fuzz_rest, &skew);

	error = sfl_sf_rest_http_error(fuzz_rest, "Salesforce query", status, body_data, body_len);
	expected = fuzz_sf_expected_code(status, body_data, body_len);
	if (error == NULL || error->domain != SFL_ERROR || error->code != expected)
		g_error("HTTP %u: error code %d, expected %d", status,
			error != NULL ? error->code : -1, expected);
	if (sfl_sf_rest_get_throttled(fuzz_rest) !=
	    throttled + (expected == SFL_ERROR_THROTTLED ? 1 : 0))
		g_error("HTTP %u: throttling counted wrong", status);
	prefix = g_strdup_printf("Salesforce query: HTTP %u ", status);
	if (!g_str_has_prefix(error->message, prefix))
		g_error("message does not name the status: %s", error->message);
	if (strlen(error->message) > FUZZ_SF_MESSAGE_MAX)
		g_error("message of %" G_GSIZE_FORMAT " bytes", strlen(error->message));
	if (!g_utf8_validate(error->message, -1, NULL))
		g_error("message is not valid UTF-8");
	if (strpbrk(error->message, "\r\n") != NULL)
		g_error("message is not one line: %s", error->message);
	if (strstr(error->message, FUZZ_SF_SECRET) != NULL)
		g_error("the access token reached the error");
	return 0;
}
