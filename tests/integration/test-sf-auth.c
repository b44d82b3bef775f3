/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestSfAuth"

#include "config.h"

#include <jansson.h>
#include <string.h>

#include <glib/gstdio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "sfl-autocleanups.h"
#include "sfl-clock.h"
#include "sfl-error.h"
#include "sfl-jwt.h"
#include "sfl-sf-auth.h"
#include "sfl-test-sim.h"

/*
 * SflSfAuth against tests/sim/salesforce_sim.py: the simulator checks our RS256 assertions with
 * python3-jwt against a public key generated here, so a signature we got wrong is refused by
 * code that is not ours. Time-dependent paths (token lifetime, retry backoff) run on a fake
 * clock that the tests advance; waits iterate the main context under a real deadline.
 */

#define TEST_DEADLINE_SEC 30
#define TEST_CLIENT_ID	  "sim-client-id"
#define TEST_USERNAME	  "sim@example.com"
#define TEST_SECRET	  "sim-secret"
#define TEST_ORG_ID	  "00DSIM0000000001AA"
#define TEST_TTL_SEC	  3600

static gchar *test_dir;
static gchar *test_key_file;
static gchar *test_pub_file;
static gchar *test_wrong_key_file;

/* retry loops warn once, on their first failure: kept here, not fatal */
static GPtrArray *test_warnings;

static GLogWriterOutput
test_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	if ((level & G_LOG_LEVEL_WARNING) != 0) {
		for (gsize i = 0; i < n_fields; i++) {
			if (g_str_equal(fields[i].key, "MESSAGE"))
				g_ptr_array_add(test_warnings, g_strdup(fields[i].value));
		}
		return G_LOG_WRITER_HANDLED;
	}
	return g_log_writer_default(level, fields, n_fields, user_data);
}

static guint
test_count_warnings(const gchar *needle)
{
	guint n = 0;
	for (guint i = 0; i < test_warnings->len; i++)
		n += strstr(g_ptr_array_index(test_warnings, i), needle) != NULL;
	return n;
}

typedef struct {
	SflTestSim *sim;
	gchar *base;
	SflCurlLoop *loop;
	SflClock *clock;
	gboolean skip;
} Fixture;

static gboolean
test_deadline_cb(gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
	return G_SOURCE_REMOVE;
}

/* iterates the default context until *flag is set; fails the test at the deadline */
/*
 * Like test_wait_for(), and whenever nothing is in flight (no transfer, no ready source) the
 * provider can only be waiting on a fake-clock backoff: move the clock past any backoff.
 */
static void
test_wait_advancing(Fixture *fx, SflSfAuth *auth, const gboolean *flag, guint *advances)
{
	gboolean expired = FALSE;
	g_autoptr(GSource) deadline = g_timeout_source_new_seconds(TEST_DEADLINE_SEC);

	g_source_set_callback(deadline, test_deadline_cb, &expired, NULL);
	g_source_attach(deadline, NULL);
	while (!*flag && !expired) {
		if (g_main_context_pending(NULL)) {
			g_main_context_iteration(NULL, FALSE);
		} else if (sfl_curl_loop_get_n_transfers(fx->loop) == 0 &&
			   sfl_sf_auth_is_minting(auth)) {
			sfl_fake_clock_advance(fx->clock, 11 * G_USEC_PER_SEC);
			/* the wall clock signs the JWT: keep it on real time */
			sfl_fake_clock_jump_wall(fx->clock, -11 * G_USEC_PER_SEC);
			(*advances)++;
		} else {
			g_main_context_iteration(NULL, TRUE);
		}
	}
	g_source_destroy(deadline);
	g_assert_false(expired);
}

static json_t *
test_control(Fixture *fx, const gchar *method, const gchar *path, const gchar *json)
{
	return sfl_test_sim_control(fx->loop, fx->base, method, path, json);
}

static json_int_t
test_stat(Fixture *fx, const gchar *name)
{
	g_autoptr(json_t) stats = test_control(fx, "GET", "/control/stats", NULL);
	json_t *value = json_object_get(stats, name);

	g_assert_true(json_is_integer(value));
	return json_integer_value(value);
}

/* requests the simulator saw for @path, faulted ones included */
static guint
test_count_requests(Fixture *fx, const gchar *path)
{
	g_autoptr(json_t) stats = test_control(fx, "GET", "/control/stats", NULL);
	json_t *requests = json_object_get(stats, "requests");
	json_t *request = NULL;
	gsize i = 0;
	guint n = 0;

	json_array_foreach (requests, i, request) {
		if (g_strcmp0(json_string_value(json_object_get(request, "path")), path) == 0)
			n++;
	}
	return n;
}

#define TOKEN_PATH    "/services/oauth2/token"
#define USERINFO_PATH "/services/oauth2/userinfo"

static void
test_write_key(EVP_PKEY *pkey, const gchar *private_path, const gchar *public_path)
{
	BIO *bio = BIO_new_file(private_path, "w");

	g_assert_nonnull(bio);
	g_assert_cmpint(PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL), ==, 1);
	BIO_free(bio);
	if (public_path == NULL)
		return;
	bio = BIO_new_file(public_path, "w");
	g_assert_nonnull(bio);
	g_assert_cmpint(PEM_write_bio_PUBKEY(bio, pkey), ==, 1);
	BIO_free(bio);
}

static void
test_keys_create(void)
{
	EVP_PKEY *good = EVP_RSA_gen(2048);
	EVP_PKEY *wrong = EVP_RSA_gen(2048);
	g_autoptr(GError) error = NULL;

	g_assert_nonnull(good);
	g_assert_nonnull(wrong);
	test_dir = g_dir_make_tmp("sfl-sf-auth-XXXXXX", &error);
	g_assert_no_error(error);
	test_key_file = g_build_filename(test_dir, "key.pem", NULL);
	test_pub_file = g_build_filename(test_dir, "pub.pem", NULL);
	test_wrong_key_file = g_build_filename(test_dir, "wrong.pem", NULL);
	test_write_key(good, test_key_file, test_pub_file);
	test_write_key(wrong, test_wrong_key_file, NULL);
	EVP_PKEY_free(good);
	EVP_PKEY_free(wrong);
}

static void
test_keys_remove(void)
{
	g_unlink(test_key_file);
	g_unlink(test_pub_file);
	g_unlink(test_wrong_key_file);
	g_rmdir(test_dir);
	g_free(test_key_file);
	g_free(test_pub_file);
	g_free(test_wrong_key_file);
	g_free(test_dir);
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	const gchar *argv[] = { "--public-key", test_pub_file, NULL };

	(void)data;
	fx->base = sfl_test_sf_sim_start(argv, &fx->sim);
	if (fx->base == NULL) {
		fx->skip = TRUE;
		return;
	}
	fx->loop = sfl_curl_loop_new();
	/* the wall clock signs exp and the simulator checks it against real time */
	fx->clock = sfl_fake_clock_new(g_get_real_time());
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	(void)data;
	if (fx->loop != NULL)
		g_assert_cmpuint(sfl_curl_loop_get_n_transfers(fx->loop), ==, 0);
	g_clear_object(&fx->loop);
	g_clear_pointer(&fx->clock, sfl_clock_unref);
	if (fx->sim != NULL) {
		sfl_test_sim_kill(fx->sim);
	}
	g_clear_object(&fx->sim);
	g_free(fx->base);
	while (g_main_context_iteration(NULL, FALSE))
		;
}

static SflSalesforceConfig
test_config(Fixture *fx, gint mode)
{
	SflSalesforceConfig cfg = { 0 };

	cfg.login_url = fx->base;
	cfg.auth_mode = mode;
	cfg.client_id = (gchar *)TEST_CLIENT_ID;
	cfg.username = (gchar *)TEST_USERNAME;
	cfg.private_key_file = test_key_file;
	cfg.client_secret = (gchar *)TEST_SECRET;
	cfg.api_version = (gchar *)"64.0";
	cfg.token_ttl = (gint64)TEST_TTL_SEC * G_USEC_PER_SEC;
	return cfg;
}

static SflSfAuth *
test_auth_new(Fixture *fx, const SflSalesforceConfig *cfg)
{
	g_autoptr(GError) error = NULL;
	SflSfAuth *auth = sfl_sf_auth_new(fx->loop, cfg, fx->clock, &error);

	g_assert_no_error(error);
	g_assert_nonnull(auth);
	return auth;
}

static SflSfToken *
test_get_token(Fixture *fx, SflSfAuth *auth, GError **error)
{
	SflTestWaiter waiter = { 0 };
	SflSfToken *token = NULL;

	(void)fx;
	sfl_sf_auth_get_token_async(auth, NULL, sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, TEST_DEADLINE_SEC);
	token = sfl_sf_auth_get_token_finish(auth, waiter.result, error);
	g_object_unref(waiter.result);
	return token;
}

static gchar *
test_get_org_id(SflSfAuth *auth, GError **error)
{
	SflTestWaiter waiter = { 0 };
	gchar *org_id = NULL;

	sfl_sf_auth_get_org_id_async(auth, NULL, sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, TEST_DEADLINE_SEC);
	org_id = sfl_sf_auth_get_org_id_finish(auth, waiter.result, error);
	g_object_unref(waiter.result);
	return org_id;
}

/* the simulator verified our signature; the claims are the ones the flow prescribes */
static void
test_jwt_claims(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(SflSfToken) token = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) stats = NULL;
	json_t *claims = NULL;
	json_int_t exp = 0;
	gint64 now = 0;

	(void)data;
	if (fx->skip)
		return;
	auth = test_auth_new(fx, &cfg);
	g_assert_false(sfl_sf_auth_has_token(auth));
	token = test_get_token(fx, auth, &error);
	g_assert_no_error(error);
	g_assert_nonnull(token);
	g_assert_true(g_str_has_prefix(token->access_token, "SIM-"));
	g_assert_cmpstr(token->instance_url, ==, fx->base);
	g_assert_cmpuint(token->generation, ==, 1);
	g_assert_true(sfl_sf_auth_has_token(auth));
	g_assert_cmpuint(sfl_sf_auth_get_mints(auth), ==, 1);
	g_assert_cmpuint(sfl_sf_auth_get_mint_failures(auth), ==, 0);

	stats = test_control(fx, "GET", "/control/stats", NULL);
	now = g_get_real_time() / G_USEC_PER_SEC;
	g_assert_cmpint(json_integer_value(json_object_get(stats, "tokens_minted")), ==, 1);
	g_assert_cmpuint(json_array_size(json_object_get(stats, "jwt_claims")), ==, 1);
	claims = json_array_get(json_object_get(stats, "jwt_claims"), 0);
	g_assert_cmpstr(json_string_value(json_object_get(claims, "iss")), ==, TEST_CLIENT_ID);
	g_assert_cmpstr(json_string_value(json_object_get(claims, "sub")), ==, TEST_USERNAME);
	g_assert_cmpstr(json_string_value(json_object_get(claims, "aud")), ==, fx->base);
	/* a number, not a string (docs/internals/wire-notes.md, "JWT bearer flow") */
	g_assert_true(json_is_integer(json_object_get(claims, "exp")));
	exp = json_integer_value(json_object_get(claims, "exp"));
	g_assert_cmpint(exp - now, <=, 180);
	/* signed from the injected clock, which stood still */
	g_assert_cmpint(exp, ==, sfl_clock_wall_usec(fx->clock) / G_USEC_PER_SEC + 180);
}

static void
test_wrong_key(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(SflSfToken) token = NULL;
	g_autoptr(GError) error = NULL;

	(void)data;
	if (fx->skip)
		return;
	cfg.private_key_file = test_wrong_key_file;
	auth = test_auth_new(fx, &cfg);
	token = test_get_token(fx, auth, &error);
	g_assert_null(token);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message,
				"Salesforce token endpoint: HTTP 400 invalid_grant: "
				"invalid assertion"));
	/* every JWT starts with base64url('{"'): no assertion text in the message */
	g_assert_null(strstr(error->message, "eyJ"));
	g_assert_false(sfl_sf_auth_has_token(auth));
	g_assert_cmpuint(sfl_sf_auth_get_mint_failures(auth), ==, 1);
	g_assert_cmpuint(sfl_sf_auth_get_mints(auth), ==, 0);
	/* a 4xx is not retried */
	g_assert_cmpuint(test_count_requests(fx, TOKEN_PATH), ==, 1);
}

static void
test_inline_key(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(SflSfToken) token = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *pem = NULL;

	(void)data;
	if (fx->skip)
		return;
	g_assert_true(g_file_get_contents(test_key_file, &pem, NULL, NULL));
	/* the inline key wins over the file */
	cfg.private_key = pem;
	cfg.private_key_file = test_wrong_key_file;
	auth = test_auth_new(fx, &cfg);
	token = test_get_token(fx, auth, &error);
	g_assert_no_error(error);
	g_assert_nonnull(token);
}

static void
test_client_credentials(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_CLIENT_CREDENTIALS);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(SflSfAuth) wrong = NULL;
	g_autoptr(SflSfToken) token = NULL;
	g_autoptr(GError) error = NULL;

	(void)data;
	if (fx->skip)
		return;
	cfg.private_key_file = NULL;
	auth = test_auth_new(fx, &cfg);
	token = test_get_token(fx, auth, &error);
	g_assert_no_error(error);
	g_assert_nonnull(token);
	g_assert_cmpstr(token->instance_url, ==, fx->base);
	g_clear_pointer(&token, sfl_sf_token_unref);

	cfg.client_secret = (gchar *)"not-the-secret-4711";
	wrong = test_auth_new(fx, &cfg);
	token = test_get_token(fx, wrong, &error);
	g_assert_null(token);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message, "HTTP 400 invalid_client: "));
	g_assert_null(strstr(error->message, "not-the-secret-4711"));
	g_assert_cmpuint(test_count_requests(fx, TOKEN_PATH), ==, 2);
}

static void
test_reuse_and_expiry(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(GError) error = NULL;
	guint64 first_generation = 0;
	gint64 almost = ((gint64)TEST_TTL_SEC - 61) * G_USEC_PER_SEC;

	(void)data;
	if (fx->skip)
		return;
	auth = test_auth_new(fx, &cfg);
	for (guint i = 0; i < 4; i++) {
		g_autoptr(SflSfToken) token = test_get_token(fx, auth, &error);

		g_assert_no_error(error);
		if (i == 0)
			first_generation = token->generation;
		g_assert_cmpuint(token->generation, ==, first_generation);
	}
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 1);

	/* just inside ttl − 60 s: still reused */
	sfl_fake_clock_advance(fx->clock, almost);
	sfl_fake_clock_jump_wall(fx->clock, -almost);
	g_assert_true(sfl_sf_auth_has_token(auth));
	{
		g_autoptr(SflSfToken) token = test_get_token(fx, auth, &error);

		g_assert_no_error(error);
		g_assert_cmpuint(token->generation, ==, first_generation);
	}
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 1);

	/* past it: refreshed proactively */
	sfl_fake_clock_advance(fx->clock, 2 * G_USEC_PER_SEC);
	sfl_fake_clock_jump_wall(fx->clock, -2 * G_USEC_PER_SEC);
	g_assert_false(sfl_sf_auth_has_token(auth));
	{
		g_autoptr(SflSfToken) token = test_get_token(fx, auth, &error);

		g_assert_no_error(error);
		g_assert_cmpuint(token->generation, ==, first_generation + 1);
	}
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 2);
	g_assert_cmpuint(sfl_sf_auth_get_mints(auth), ==, 2);
}

static void
test_retry_5xx(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(SflSfToken) token = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) answer = NULL;
	SflTestWaiter waiter = { 0 };
	guint advances = 0;

	(void)data;
	if (fx->skip)
		return;
	answer = test_control(fx, "POST", "/control/fault",
			      "{\"match\": \"token\", \"count\": 2, \"status\": 503, "
			      "\"error_code\": \"server_busy\", \"message\": \"try later\"}");
	auth = test_auth_new(fx, &cfg);
	sfl_sf_auth_get_token_async(auth, NULL, sfl_test_waiter_cb, &waiter);
	test_wait_advancing(fx, auth, &waiter.done, &advances);
	token = sfl_sf_auth_get_token_finish(auth, waiter.result, &error);
	g_object_unref(waiter.result);
	g_assert_no_error(error);
	g_assert_nonnull(token);
	/* each backoff waited on the fake clock, never in real time */
	g_assert_cmpuint(advances, ==, 2);
	g_assert_cmpuint(test_count_requests(fx, TOKEN_PATH), ==, 3);
	/* two failed attempts, one WARNING */
	g_assert_cmpuint(test_count_warnings("HTTP 503"), ==, 1);
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 1);
	g_assert_cmpuint(sfl_sf_auth_get_mints(auth), ==, 1);
	g_assert_cmpuint(sfl_sf_auth_get_mint_failures(auth), ==, 0);
}

static void
test_retry_exhausted(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(SflSfToken) token = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) answer = NULL;
	SflTestWaiter waiter = { 0 };
	guint advances = 0;

	(void)data;
	if (fx->skip)
		return;
	answer = test_control(fx, "POST", "/control/fault",
			      "{\"match\": \"token\", \"count\": 10, \"status\": 500}");
	auth = test_auth_new(fx, &cfg);
	sfl_sf_auth_get_token_async(auth, NULL, sfl_test_waiter_cb, &waiter);
	test_wait_advancing(fx, auth, &waiter.done, &advances);
	token = sfl_sf_auth_get_token_finish(auth, waiter.result, &error);
	g_object_unref(waiter.result);
	g_assert_null(token);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "after 4 attempts"));
	g_assert_nonnull(strstr(error->message, "HTTP 500"));
	g_assert_cmpuint(advances, ==, 3);
	g_assert_cmpuint(test_count_requests(fx, TOKEN_PATH), ==, 4);
	g_assert_cmpuint(sfl_sf_auth_get_mint_failures(auth), ==, 1);
}

static void
test_concurrent(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	SflTestWaiter waiters[5] = { 0 };

	(void)data;
	if (fx->skip)
		return;
	auth = test_auth_new(fx, &cfg);
	for (guint i = 0; i < G_N_ELEMENTS(waiters); i++)
		sfl_sf_auth_get_token_async(auth, NULL, sfl_test_waiter_cb, &waiters[i]);
	for (guint i = 0; i < G_N_ELEMENTS(waiters); i++) {
		g_autoptr(SflSfToken) token = NULL;
		g_autoptr(GError) error = NULL;

		sfl_test_wait_for(&waiters[i].done, TEST_DEADLINE_SEC);
		token = sfl_sf_auth_get_token_finish(auth, waiters[i].result, &error);
		g_object_unref(waiters[i].result);
		g_assert_no_error(error);
		g_assert_cmpuint(token->generation, ==, 1);
	}
	g_assert_cmpuint(test_count_requests(fx, TOKEN_PATH), ==, 1);
	g_assert_cmpuint(sfl_sf_auth_get_mints(auth), ==, 1);
}

static void
test_cancel_one_waiter(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	g_autoptr(SflSfToken) kept = NULL;
	g_autoptr(SflSfToken) dropped = NULL;
	g_autoptr(GError) error = NULL;
	SflTestWaiter a = { 0 };
	SflTestWaiter b = { 0 };

	(void)data;
	if (fx->skip)
		return;
	auth = test_auth_new(fx, &cfg);
	sfl_sf_auth_get_token_async(auth, cancellable, sfl_test_waiter_cb, &a);
	sfl_sf_auth_get_token_async(auth, NULL, sfl_test_waiter_cb, &b);
	g_cancellable_cancel(cancellable);
	sfl_test_wait_for(&a.done, TEST_DEADLINE_SEC);
	dropped = sfl_sf_auth_get_token_finish(auth, a.result, &error);
	g_object_unref(a.result);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_clear_error(&error);
	/* the shared mint went on for the other caller */
	sfl_test_wait_for(&b.done, TEST_DEADLINE_SEC);
	kept = sfl_sf_auth_get_token_finish(auth, b.result, &error);
	g_object_unref(b.result);
	g_assert_no_error(error);
	g_assert_nonnull(kept);
	g_assert_cmpuint(test_count_requests(fx, TOKEN_PATH), ==, 1);
}

static void
test_invalidate_stale(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(SflSfToken) old = NULL;
	g_autoptr(SflSfToken) fresh = NULL;
	g_autoptr(SflSfToken) again = NULL;
	g_autoptr(GError) error = NULL;

	(void)data;
	if (fx->skip)
		return;
	auth = test_auth_new(fx, &cfg);
	old = test_get_token(fx, auth, &error);
	g_assert_no_error(error);
	sfl_sf_auth_invalidate(auth, old);
	g_assert_false(sfl_sf_auth_has_token(auth));
	fresh = test_get_token(fx, auth, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(fresh->generation, >, old->generation);
	g_assert_cmpstr(fresh->access_token, !=, old->access_token);

	/* SFL-0052: a late complaint about the old token keeps the fresh one */
	sfl_sf_auth_invalidate(auth, old);
	g_assert_true(sfl_sf_auth_has_token(auth));
	again = test_get_token(fx, auth, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(again->generation, ==, fresh->generation);
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 2);
}

static void
test_org_id_userinfo(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(GError) error = NULL;

	(void)data;
	if (fx->skip)
		return;
	auth = test_auth_new(fx, &cfg);
	for (guint i = 0; i < 2; i++) {
		g_autofree gchar *org_id = test_get_org_id(auth, &error);

		g_assert_no_error(error);
		g_assert_cmpstr(org_id, ==, TEST_ORG_ID);
	}
	/* cached after the first answer */
	g_assert_cmpint(test_stat(fx, "userinfo_calls"), ==, 1);
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 1);
}

static void
test_org_id_config(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *org_id = NULL;

	(void)data;
	if (fx->skip)
		return;
	cfg.org_id = (gchar *)"00DCONFIG000000XYZ";
	auth = test_auth_new(fx, &cfg);
	org_id = test_get_org_id(auth, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(org_id, ==, "00DCONFIG000000XYZ");
	g_assert_cmpuint(test_count_requests(fx, TOKEN_PATH), ==, 0);
	g_assert_cmpint(test_stat(fx, "userinfo_calls"), ==, 0);
}

static void
test_org_id_401(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(SflSfToken) token = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) answer = NULL;
	g_autofree gchar *org_id = NULL;

	(void)data;
	if (fx->skip)
		return;
	auth = test_auth_new(fx, &cfg);
	token = test_get_token(fx, auth, &error);
	g_assert_no_error(error);
	/* the cached token dies on the server side */
	answer = test_control(fx, "POST", "/control/expire_tokens", NULL);
	org_id = test_get_org_id(auth, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(org_id, ==, TEST_ORG_ID);
	/* SFL-0025: invalidated and re-minted, then retried once */
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 2);
	g_assert_cmpint(test_stat(fx, "userinfo_calls"), ==, 1);
	g_assert_cmpuint(test_count_requests(fx, USERINFO_PATH), ==, 2);
	g_assert_true(sfl_sf_auth_has_token(auth));
}

static void
test_org_id_403(Fixture *fx, gconstpointer data)
{
	SflSalesforceConfig cfg = test_config(fx, SFL_SF_AUTH_JWT_BEARER);
	g_autoptr(SflSfAuth) auth = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) answer = NULL;
	g_autofree gchar *org_id = NULL;

	(void)data;
	if (fx->skip)
		return;
	answer = test_control(fx, "POST", "/control/fault",
			      "{\"match\": \"userinfo\", \"status\": 403, \"error_code\": "
			      "\"INSUFFICIENT_ACCESS\", \"message\": \"needs the openid scope\"}");
	auth = test_auth_new(fx, &cfg);
	org_id = test_get_org_id(auth, &error);
	g_assert_null(org_id);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message, "Salesforce userinfo: HTTP 403"));
	g_assert_nonnull(strstr(error->message, "openid"));
}

static void
test_bad_key(void)
{
	g_autoptr(SflCurlLoop) loop = sfl_curl_loop_new();
	g_autoptr(SflClock) clock = sfl_fake_clock_new(0);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSfAuth) auth = NULL;
	g_autofree gchar *garbage = g_build_filename(test_dir, "garbage.pem", NULL);
	SflSalesforceConfig cfg = { 0 };

	g_assert_true(
		g_file_set_contents(garbage, "-----BEGIN PRIVATE KEY-----\nnope\n", -1, NULL));
	cfg.login_url = (gchar *)"https://example.my.salesforce.com";
	cfg.auth_mode = SFL_SF_AUTH_JWT_BEARER;
	cfg.client_id = (gchar *)TEST_CLIENT_ID;
	cfg.username = (gchar *)TEST_USERNAME;
	cfg.private_key_file = garbage;
	cfg.token_ttl = (gint64)TEST_TTL_SEC * G_USEC_PER_SEC;
	auth = sfl_sf_auth_new(loop, &cfg, clock, &error);
	g_assert_null(auth);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, garbage));
	g_clear_error(&error);

	cfg.private_key_file = (gchar *)"/nonexistent/key.pem";
	auth = sfl_sf_auth_new(loop, &cfg, clock, &error);
	g_assert_null(auth);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_clear_error(&error);

	/* SFL-0053: a ttl inside the refresh skew would re-mint on every call */
	cfg.private_key_file = test_key_file;
	cfg.token_ttl = 60 * G_USEC_PER_SEC;
	auth = sfl_sf_auth_new(loop, &cfg, clock, &error);
	g_assert_null(auth);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_unlink(garbage);
}

static void
test_base64url(void)
{
	g_autofree gchar *a = sfl_base64url_encode((const guint8 *)"\xfb\xff", 2);
	g_autofree gchar *b = sfl_base64url_encode((const guint8 *)"{\"", 2);

	g_assert_cmpstr(a, ==, "-_8");
	g_assert_cmpstr(b, ==, "eyI");
}

#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_setup, func, fixture_teardown)

int
main(int argc, char **argv)
{
	int rc = 0;

	test_warnings = g_ptr_array_new_with_free_func(g_free);
	g_log_set_writer_func(test_log_writer, NULL, NULL);
	g_test_init(&argc, &argv, NULL);
	test_keys_create();
	g_test_add_func("/sfl/sf-auth/base64url", test_base64url);
	g_test_add_func("/sfl/sf-auth/bad-key", test_bad_key);
	ADD("/sfl/sf-auth/jwt-claims", test_jwt_claims);
	ADD("/sfl/sf-auth/wrong-key", test_wrong_key);
	ADD("/sfl/sf-auth/inline-key", test_inline_key);
	ADD("/sfl/sf-auth/client-credentials", test_client_credentials);
	ADD("/sfl/sf-auth/reuse-and-expiry", test_reuse_and_expiry);
	ADD("/sfl/sf-auth/retry-5xx", test_retry_5xx);
	ADD("/sfl/sf-auth/retry-exhausted", test_retry_exhausted);
	ADD("/sfl/sf-auth/concurrent", test_concurrent);
	ADD("/sfl/sf-auth/cancel-one-waiter", test_cancel_one_waiter);
	ADD("/sfl/sf-auth/invalidate-stale", test_invalidate_stale);
	ADD("/sfl/sf-auth/org-id-userinfo", test_org_id_userinfo);
	ADD("/sfl/sf-auth/org-id-config", test_org_id_config);
	ADD("/sfl/sf-auth/org-id-401", test_org_id_401);
	ADD("/sfl/sf-auth/org-id-403", test_org_id_403);
	rc = g_test_run();
	test_keys_remove();
	g_ptr_array_unref(test_warnings);
	return rc;
}
