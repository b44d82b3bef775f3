/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestSfRest"

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
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"
#include "sfl-test-sim.h"

/*
 * SflSfRest against tests/sim/salesforce_sim.py over real HTTP: SOQL paging, the 401 re-mint,
 * error mapping, and streamed EventLogFile downloads with pause and resume. Waits iterate the
 * main context until a condition holds, under a real deadline; nothing sleeps.
 */

#define TEST_DEADLINE_SEC 60
#define TEST_API	  "64.0"
#define TEST_ELF_ID	  "0ATSIM0000000001AA"
#define TEST_ELF_PATH	  "/services/data/v" TEST_API "/sobjects/EventLogFile/" TEST_ELF_ID "/LogFile"
#define TEST_ELF_ROWS	  10000
#define TEST_SOQL	  "SELECT Id, Name FROM TestEvent WHERE Name != 'a&b+c' ORDER BY EventDate"

static gchar *test_dir;
static gchar *test_key_file;
static gchar *test_pub_file;

typedef struct {
	SflTestSim *sim;
	gchar *base;
	SflCurlLoop *loop;
	SflClock *clock;
	SflSfAuth *auth;
	SflSfRest *rest;
	gboolean skip;
} Fixture;

static gboolean
test_deadline_cb(gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
	return G_SOURCE_REMOVE;
}

static json_t *
test_control(Fixture *fx, const gchar *method, const gchar *path, const gchar *json)
{
	return sfl_test_sim_control(fx->loop, fx->base, method, path, json);
}

static void
test_control_ok(Fixture *fx, const gchar *path, const gchar *json)
{
	g_autoptr(json_t) answer = test_control(fx, "POST", path, json);

	(void)answer;
}

static json_int_t
test_stat(Fixture *fx, const gchar *name)
{
	g_autoptr(json_t) stats = test_control(fx, "GET", "/control/stats", NULL);
	json_t *value = json_object_get(stats, name);

	g_assert_true(json_is_integer(value));
	return json_integer_value(value);
}

static json_int_t
test_download_bytes(Fixture *fx, const gchar *id)
{
	g_autoptr(json_t) stats = test_control(fx, "GET", "/control/stats", NULL);

	return json_integer_value(json_object_get(json_object_get(stats, "download_bytes"), id));
}

/* requests the simulator saw whose path contains @part */
static guint
test_count_requests(Fixture *fx, const gchar *part)
{
	g_autoptr(json_t) stats = test_control(fx, "GET", "/control/stats", NULL);
	json_t *request = NULL;
	gsize i = 0;
	guint n = 0;

	json_array_foreach (json_object_get(stats, "requests"), i, request) {
		const gchar *path = json_string_value(json_object_get(request, "path"));

		if (path != NULL && strstr(path, part) != NULL)
			n++;
	}
	return n;
}

static void
test_keys_create(void)
{
	EVP_PKEY *key = EVP_RSA_gen(2048);
	g_autoptr(GError) error = NULL;
	BIO *bio = NULL;

	g_assert_nonnull(key);
	test_dir = g_dir_make_tmp("sfl-sf-rest-XXXXXX", &error);
	g_assert_no_error(error);
	test_key_file = g_build_filename(test_dir, "key.pem", NULL);
	test_pub_file = g_build_filename(test_dir, "pub.pem", NULL);
	bio = BIO_new_file(test_key_file, "w");
	g_assert_cmpint(PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL), ==, 1);
	BIO_free(bio);
	bio = BIO_new_file(test_pub_file, "w");
	g_assert_cmpint(PEM_write_bio_PUBKEY(bio, key), ==, 1);
	BIO_free(bio);
	EVP_PKEY_free(key);
}

static void
test_keys_remove(void)
{
	g_unlink(test_key_file);
	g_unlink(test_pub_file);
	g_rmdir(test_dir);
	g_free(test_key_file);
	g_free(test_pub_file);
	g_free(test_dir);
}

static const gchar test_dataset[] =
	"{\"objects\": {\"TestEvent\": {\"records\": ["
	"{\"Id\": \"a00SIM000000000001\", \"Name\": \"one\", \"EventDate\": "
	"\"2026-01-01T00:00:01.000Z\"},"
	"{\"Id\": \"a00SIM000000000002\", \"Name\": \"two\", \"EventDate\": "
	"\"2026-01-01T00:00:02.000Z\"},"
	"{\"Id\": \"a00SIM000000000003\", \"Name\": \"three\", \"EventDate\": "
	"\"2026-01-01T00:00:03.000Z\"},"
	"{\"Id\": \"a00SIM000000000004\", \"Name\": \"four\", \"EventDate\": "
	"\"2026-01-01T00:00:04.000Z\"},"
	"{\"Id\": \"a00SIM000000000005\", \"Name\": \"five\", \"EventDate\": "
	"\"2026-01-01T00:00:05.000Z\"},"
	"{\"Id\": \"a00SIM000000000006\", \"Name\": \"a&b+c\", \"EventDate\": "
	"\"2026-01-01T00:00:06.000Z\"}"
	"]}},"
	"\"eventlogfiles\": [{\"Id\": \"" TEST_ELF_ID "\", \"EventType\": \"API\", "
	"\"Interval\": \"Hourly\", \"LogDate\": \"2026-01-01T10:00:00.000Z\", "
	"\"CreatedDate\": \"2026-01-01T13:00:00.000Z\", \"Sequence\": 1, "
	"\"generate\": {\"rows\": 10000, \"kind\": \"API\", \"seed\": 1}}]}";

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	const gchar *argv[] = { "--public-key", test_pub_file, NULL };
	SflSalesforceConfig cfg = { 0 };
	g_autoptr(GError) error = NULL;

	(void)data;
	fx->base = sfl_test_sf_sim_start(argv, &fx->sim);
	if (fx->base == NULL) {
		fx->skip = TRUE;
		return;
	}
	fx->loop = sfl_curl_loop_new();
	fx->clock = sfl_fake_clock_new(g_get_real_time());
	cfg.login_url = fx->base;
	cfg.auth_mode = SFL_SF_AUTH_JWT_BEARER;
	cfg.client_id = (gchar *)"sim-client-id";
	cfg.username = (gchar *)"sim@example.com";
	cfg.private_key_file = test_key_file;
	cfg.token_ttl = (gint64)3600 * G_USEC_PER_SEC;
	fx->auth = sfl_sf_auth_new(fx->loop, &cfg, fx->clock, &error);
	g_assert_no_error(error);
	fx->rest = sfl_sf_rest_new(fx->loop, fx->auth, TEST_API);
	g_assert_cmpstr(sfl_sf_rest_get_api_version(fx->rest), ==, TEST_API);
	test_control_ok(fx, "/control/add", test_dataset);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	(void)data;
	g_clear_object(&fx->rest);
	g_clear_object(&fx->auth);
	/* let sources destroyed above release their data */
	while (g_main_context_iteration(NULL, FALSE))
		;
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

static json_t *
test_query(Fixture *fx, const gchar *soql, gboolean tooling, GError **error)
{
	SflTestWaiter waiter = { 0 };
	json_t *records = NULL;

	sfl_sf_rest_query_async(fx->rest, soql, tooling, NULL, sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, TEST_DEADLINE_SEC);
	records = sfl_sf_rest_query_finish(fx->rest, waiter.result, error);
	g_object_unref(waiter.result);
	return records;
}

/* --- queries --------------------------------------------------------------------------------- */

static void
test_query_paging(Fixture *fx, gconstpointer data)
{
	static const gchar *const names[] = { "one", "two", "three", "four", "five" };
	g_autoptr(json_t) records = NULL;
	g_autoptr(GError) error = NULL;
	json_t *record = NULL;
	gsize i = 0;
	gint64 used = 0, max = 0;

	(void)data;
	if (fx->skip)
		return;
	test_control_ok(fx, "/control/batch_size", "{\"size\": 2}");
	g_assert_false(sfl_sf_rest_get_api_usage(fx->rest, &used, &max));
	records = test_query(fx, TEST_SOQL, FALSE, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(json_array_size(records), ==, G_N_ELEMENTS(names));
	json_array_foreach (records, i, record) {
		json_t *attributes = json_object_get(record, "attributes");

		g_assert_cmpstr(json_string_value(json_object_get(record, "Name")), ==, names[i]);
		g_assert_cmpstr(json_string_value(json_object_get(attributes, "type")), ==,
				"TestEvent");
	}
	/* the first page, then two nextRecordsUrl pages */
	g_assert_cmpuint(test_count_requests(fx, "/query"), ==, 3);
	g_assert_cmpuint(test_count_requests(fx, "/query/01gSIM"), ==, 2);
	g_assert_true(sfl_sf_rest_get_api_usage(fx->rest, &used, &max));
	g_assert_cmpint(used, >, 0);
	g_assert_cmpint(max, ==, 15000);
}

static void
test_query_escaping(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) records = NULL;
	g_autoptr(json_t) stats = NULL;
	g_autoptr(GError) error = NULL;
	json_t *request = NULL;
	gsize i = 0;
	gboolean seen = FALSE;

	(void)data;
	if (fx->skip)
		return;
	records = test_query(fx, "SELECT Id FROM TestEvent WHERE Name = 'a&b+c'", TRUE, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(json_array_size(records), ==, 1);
	stats = test_control(fx, "GET", "/control/stats", NULL);
	json_array_foreach (json_object_get(stats, "requests"), i, request) {
		if (g_strcmp0(json_string_value(json_object_get(request, "path")),
			      "/services/data/v" TEST_API "/tooling/query") != 0)
			continue;
		/* '&' and '+' arrived as data, not as separators or spaces */
		g_assert_cmpstr(json_string_value(json_object_get(request, "q")), ==,
				"SELECT Id FROM TestEvent WHERE Name = 'a&b+c'");
		seen = TRUE;
	}
	g_assert_true(seen);
}

static void
test_query_401_remint(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) first = NULL;
	g_autoptr(json_t) second = NULL;
	g_autoptr(GError) error = NULL;

	(void)data;
	if (fx->skip)
		return;
	first = test_query(fx, TEST_SOQL, FALSE, &error);
	g_assert_no_error(error);
	test_control_ok(fx, "/control/expire_tokens", NULL);
	second = test_query(fx, TEST_SOQL, FALSE, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(json_array_size(second), ==, 5);
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 2);
	g_assert_cmpuint(sfl_sf_auth_get_mints(fx->auth), ==, 2);
}

static void
test_query_concurrent_401(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) warmup = NULL;
	g_autoptr(GError) error = NULL;
	SflTestWaiter waiters[3] = { 0 };

	(void)data;
	if (fx->skip)
		return;
	warmup = test_query(fx, TEST_SOQL, FALSE, &error);
	g_assert_no_error(error);
	test_control_ok(fx, "/control/expire_tokens", NULL);
	for (guint i = 0; i < G_N_ELEMENTS(waiters); i++)
		sfl_sf_rest_query_async(fx->rest, TEST_SOQL, FALSE, NULL, sfl_test_waiter_cb,
					&waiters[i]);
	for (guint i = 0; i < G_N_ELEMENTS(waiters); i++) {
		g_autoptr(json_t) records = NULL;

		sfl_test_wait_for(&waiters[i].done, TEST_DEADLINE_SEC);
		records = sfl_sf_rest_query_finish(fx->rest, waiters[i].result, &error);
		g_object_unref(waiters[i].result);
		g_assert_no_error(error);
		g_assert_cmpuint(json_array_size(records), ==, 5);
	}
	/* three 401s, one re-mint */
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 2);
}

static void
test_query_401_twice(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) records = NULL;
	g_autoptr(GError) error = NULL;

	(void)data;
	if (fx->skip)
		return;
	test_control_ok(
		fx, "/control/fault",
		"{\"match\": \"query\", \"count\": 2, \"status\": 401, "
		"\"error_code\": \"INVALID_SESSION_ID\", \"message\": \"Session expired\"}");
	records = test_query(fx, TEST_SOQL, FALSE, &error);
	g_assert_null(records);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message, "HTTP 401 INVALID_SESSION_ID"));
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 2);
}

typedef struct {
	const gchar *fault;
	const gchar *soql;
	SflError code;
	const gchar *needle;
} ErrorCase;

static const ErrorCase case_throttled = {
	"{\"match\": \"query\", \"status\": 403, \"error_code\": \"REQUEST_LIMIT_EXCEEDED\", "
	"\"message\": \"TotalRequests Limit exceeded.\"}",
	TEST_SOQL, SFL_ERROR_THROTTLED, "HTTP 403 REQUEST_LIMIT_EXCEEDED: TotalRequests"
};
static const ErrorCase case_forbidden = {
	"{\"match\": \"query\", \"status\": 403, \"error_code\": \"INSUFFICIENT_ACCESS\", "
	"\"message\": \"no View Event Log Files\"}",
	TEST_SOQL, SFL_ERROR_REJECTED, "HTTP 403 INSUFFICIENT_ACCESS"
};
static const ErrorCase case_500 = { "{\"match\": \"query\", \"status\": 500}", TEST_SOQL,
				    SFL_ERROR_TRANSIENT, "HTTP 500" };
static const ErrorCase case_malformed = { NULL, "SELEKT Id FROM TestEvent", SFL_ERROR_REJECTED,
					  "HTTP 400 MALFORMED_QUERY" };
static const ErrorCase case_invalid_field = { NULL, "SELECT Nope FROM TestEvent",
					      SFL_ERROR_REJECTED, "HTTP 400 INVALID_FIELD" };
static const ErrorCase case_non_json = { "{\"match\": \"query\", \"non_json\": true}", TEST_SOQL,
					 SFL_ERROR_TRANSIENT,
					 "HTTP 200 body is not a query result: <html>maintenance" };
static const ErrorCase case_array = { "{\"match\": \"query\", \"status\": 200, \"body\": [1, 2]}",
				      TEST_SOQL, SFL_ERROR_TRANSIENT,
				      "HTTP 200 body is not a query result: [1, 2]" };

static void
test_query_error(Fixture *fx, gconstpointer data)
{
	const ErrorCase *c = data;
	g_autoptr(json_t) records = NULL;
	g_autoptr(GError) error = NULL;

	if (fx->skip)
		return;
	if (c->fault != NULL)
		test_control_ok(fx, "/control/fault", c->fault);
	records = test_query(fx, c->soql, FALSE, &error);
	g_assert_null(records);
	g_assert_error(error, SFL_ERROR, (gint)c->code);
	if (strstr(error->message, c->needle) == NULL)
		g_error("'%s' not in '%s'", c->needle, error->message);
	g_assert_cmpuint(sfl_sf_rest_get_throttled(fx->rest), ==,
			 c->code == SFL_ERROR_THROTTLED ? 1 : 0);
	/* one request: errors other than 401 are not retried here */
	g_assert_cmpuint(test_count_requests(fx, "/query"), ==, 1);
}

static void
test_clock_skew(Fixture *fx, gconstpointer data)
{
	g_autoptr(json_t) records = NULL;
	g_autoptr(GError) error = NULL;
	gint64 skew = 0;

	(void)data;
	if (fx->skip)
		return;
	g_assert_false(sfl_sf_rest_get_clock_skew(fx->rest, &skew));
	/* mint first: the JWT's exp is signed from the same wall clock */
	records = test_query(fx, TEST_SOQL, FALSE, &error);
	g_assert_no_error(error);
	g_clear_pointer(&records, json_decref);
	/* our wall clock an hour behind the server's */
	sfl_fake_clock_jump_wall(fx->clock, -(gint64)3600 * G_USEC_PER_SEC);
	records = test_query(fx, TEST_SOQL, FALSE, &error);
	g_assert_no_error(error);
	g_assert_true(sfl_sf_rest_get_clock_skew(fx->rest, &skew));
	g_assert_cmpint(skew, >, (gint64)3500 * G_USEC_PER_SEC);
	g_assert_cmpint(skew, <, (gint64)3700 * G_USEC_PER_SEC);
}

/* --- downloads ------------------------------------------------------------------------------- */

typedef enum {
	PAUSE_NEVER,
	PAUSE_AFTER_FIRST,
	PAUSE_EVERY_CHUNK,
} PauseMode;

typedef struct {
	SflSfDownload *dl;
	PauseMode mode;
	gboolean paused;
	gboolean done;
	GError *error;
	guint64 received;
	guint chunks;
	gsize max_chunk;
	GString *head; /* the first bytes */
	gchar last;
} DlState;

static void
test_dl_data(const gchar *data, gsize len, gpointer user_data)
{
	DlState *st = user_data;

	g_assert_false(st->paused);
	g_assert_false(st->done);
	g_assert_cmpuint(len, >, 0);
	st->received += len;
	st->chunks++;
	st->max_chunk = MAX(st->max_chunk, len);
	if (st->head->len < 64)
		g_string_append_len(st->head, data, (gssize)MIN(len, 64 - st->head->len));
	st->last = data[len - 1];
	if (st->mode == PAUSE_EVERY_CHUNK || (st->mode == PAUSE_AFTER_FIRST && st->chunks == 1)) {
		sfl_sf_download_pause(st->dl);
		st->paused = TRUE;
	}
}

static void
test_dl_done(const GError *error, gpointer user_data)
{
	DlState *st = user_data;

	g_assert_false(st->done);
	st->done = TRUE;
	st->error = error != NULL ? g_error_copy(error) : NULL;
}

static void
test_dl_state_clear(DlState *st)
{
	g_clear_pointer(&st->dl, sfl_sf_download_free);
	g_clear_error(&st->error);
	g_string_free(st->head, TRUE);
}

static void
test_dl_start(Fixture *fx, DlState *st, const gchar *path, PauseMode mode)
{
	st->mode = mode;
	st->head = g_string_new(NULL);
	st->dl = sfl_sf_rest_download(fx->rest, path, test_dl_data, test_dl_done, st);
	g_assert_nonnull(st->dl);
}

/* the file's size as the listing reports it */
static guint64
test_elf_length(Fixture *fx)
{
	g_autoptr(json_t) records = NULL;
	g_autoptr(GError) error = NULL;
	json_t *length = NULL;

	records = test_query(
		fx, "SELECT Id, LogFileLength FROM EventLogFile WHERE Id = '" TEST_ELF_ID "'",
		FALSE, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(json_array_size(records), ==, 1);
	length = json_object_get(json_array_get(records, 0), "LogFileLength");
	g_assert_true(json_is_number(length));
	return (guint64)json_number_value(length);
}

static void
test_download_whole(Fixture *fx, gconstpointer data)
{
	DlState st = { 0 };
	guint64 expected = 0;

	(void)data;
	if (fx->skip)
		return;
	expected = test_elf_length(fx);
	g_assert_cmpuint(expected, >, 1000000);
	test_dl_start(fx, &st, TEST_ELF_PATH, PAUSE_NEVER);
	sfl_test_wait_for(&st.done, TEST_DEADLINE_SEC);
	g_assert_no_error(st.error);
	g_assert_cmpuint(st.received, ==, expected);
	g_assert_cmpuint(sfl_sf_download_get_bytes(st.dl), ==, expected);
	g_assert_cmpuint(st.max_chunk, <=, 64 * 1024);
	g_assert_true(g_str_has_prefix(st.head->str, "\"EVENT_TYPE\",\"TIMESTAMP\","));
	g_assert_cmpint(st.last, ==, '\n');
	g_assert_cmpint(test_download_bytes(fx, TEST_ELF_ID), ==, (json_int_t)expected);
	test_dl_state_clear(&st);
}

static void
test_download_pause_resume(Fixture *fx, gconstpointer data)
{
	DlState st = { 0 };
	guint64 expected = 0;
	guint64 held = 0;
	guint rounds = 0;

	(void)data;
	if (fx->skip)
		return;
	expected = test_elf_length(fx);
	test_dl_start(fx, &st, TEST_ELF_PATH, PAUSE_AFTER_FIRST);
	sfl_test_wait_for(&st.paused, TEST_DEADLINE_SEC);
	held = st.received;
	g_assert_cmpuint(held, <, expected);
	/*
	 * Round trips to the simulator run the loop's sockets, timers and idles; go on until the
	 * simulator has sent more than we took, so data is really waiting behind the pause.
	 */
	while (test_download_bytes(fx, TEST_ELF_ID) <= (json_int_t)held) {
		g_assert_cmpuint(++rounds, <, 1000);
	}
	for (guint i = 0; i < 5; i++) {
		g_autoptr(json_t) stats = test_control(fx, "GET", "/control/stats", NULL);

		(void)stats;
		while (g_main_context_iteration(NULL, FALSE))
			;
	}
	g_assert_cmpuint(st.received, ==, held);
	g_assert_cmpuint(sfl_sf_download_get_bytes(st.dl), ==, held);
	g_assert_false(st.done);

	st.paused = FALSE;
	sfl_sf_download_resume(st.dl);
	/* nothing from inside resume() */
	g_assert_cmpuint(st.received, ==, held);
	sfl_test_wait_for(&st.done, TEST_DEADLINE_SEC);
	g_assert_no_error(st.error);
	g_assert_cmpuint(st.received, ==, expected);
	test_dl_state_clear(&st);
}

static void
test_download_pause_every_chunk(Fixture *fx, gconstpointer data)
{
	DlState st = { 0 };
	guint64 expected = 0;
	gboolean expired = FALSE;
	g_autoptr(GSource) deadline = g_timeout_source_new_seconds(TEST_DEADLINE_SEC);

	(void)data;
	if (fx->skip)
		return;
	expected = test_elf_length(fx);
	test_dl_start(fx, &st, TEST_ELF_PATH, PAUSE_EVERY_CHUNK);
	g_source_set_callback(deadline, test_deadline_cb, &expired, NULL);
	g_source_attach(deadline, NULL);
	while (!st.done && !expired) {
		if (st.paused) {
			st.paused = FALSE;
			sfl_sf_download_resume(st.dl);
		}
		g_main_context_iteration(NULL, TRUE);
	}
	g_source_destroy(deadline);
	g_assert_false(expired);
	g_assert_no_error(st.error);
	g_assert_cmpuint(st.received, ==, expected);
	g_assert_cmpuint(st.chunks, >, 10);
	test_dl_state_clear(&st);
}

static void
test_download_reset(Fixture *fx, gconstpointer data)
{
	DlState st = { 0 };

	(void)data;
	if (fx->skip)
		return;
	test_control_ok(fx, "/control/fault",
			"{\"match\": \"logfile\", \"reset_after_bytes\": 100000}");
	test_dl_start(fx, &st, TEST_ELF_PATH, PAUSE_NEVER);
	sfl_test_wait_for(&st.done, TEST_DEADLINE_SEC);
	g_assert_error(st.error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(st.error->message, "Salesforce download " TEST_ELF_PATH));
	g_assert_cmpuint(st.received, >, 0);
	g_assert_cmpuint(st.received, <=, 100000);
	test_dl_state_clear(&st);
}

static void
test_download_401_before_data(Fixture *fx, gconstpointer data)
{
	DlState st = { 0 };
	guint64 expected = 0;

	(void)data;
	if (fx->skip)
		return;
	expected = test_elf_length(fx);
	test_control_ok(fx, "/control/expire_tokens", NULL);
	test_dl_start(fx, &st, TEST_ELF_PATH, PAUSE_NEVER);
	sfl_test_wait_for(&st.done, TEST_DEADLINE_SEC);
	g_assert_no_error(st.error);
	g_assert_cmpuint(st.received, ==, expected);
	g_assert_cmpint(test_stat(fx, "tokens_minted"), ==, 2);
	g_assert_cmpuint(test_count_requests(fx, "/LogFile"), ==, 2);
	test_dl_state_clear(&st);
}

static void
test_download_404(Fixture *fx, gconstpointer data)
{
	DlState st = { 0 };

	(void)data;
	if (fx->skip)
		return;
	test_dl_start(fx, &st,
		      "/services/data/v" TEST_API "/sobjects/EventLogFile/0ATSIMNOPE/LogFile",
		      PAUSE_NEVER);
	sfl_test_wait_for(&st.done, TEST_DEADLINE_SEC);
	g_assert_error(st.error, SFL_ERROR, SFL_ERROR_REJECTED);
	g_assert_nonnull(strstr(st.error->message, "HTTP 404 NOT_FOUND"));
	g_assert_cmpuint(st.received, ==, 0);
	test_dl_state_clear(&st);
}

static void
test_download_throttled(Fixture *fx, gconstpointer data)
{
	DlState st = { 0 };

	(void)data;
	if (fx->skip)
		return;
	test_control_ok(
		fx, "/control/fault",
		"{\"match\": \"logfile\", \"status\": 403, \"error_code\": "
		"\"REQUEST_LIMIT_EXCEEDED\", \"message\": \"TotalRequests Limit exceeded.\"}");
	test_dl_start(fx, &st, TEST_ELF_PATH, PAUSE_NEVER);
	sfl_test_wait_for(&st.done, TEST_DEADLINE_SEC);
	g_assert_error(st.error, SFL_ERROR, SFL_ERROR_THROTTLED);
	g_assert_nonnull(strstr(st.error->message, "HTTP 403 REQUEST_LIMIT_EXCEEDED"));
	g_assert_cmpuint(st.received, ==, 0);
	g_assert_cmpuint(sfl_sf_rest_get_throttled(fx->rest), ==, 1);
	test_dl_state_clear(&st);
}

static void
test_dl_free_in_data(const gchar *data, gsize len, gpointer user_data)
{
	DlState *st = user_data;

	(void)data;
	st->received += len;
	st->chunks++;
	/* the consumer gives up from inside the callback */
	g_clear_pointer(&st->dl, sfl_sf_download_free);
	st->paused = TRUE;
}

static void
test_download_free_in_callback(Fixture *fx, gconstpointer data)
{
	DlState st = { 0 };

	(void)data;
	if (fx->skip)
		return;
	st.head = g_string_new(NULL);
	st.dl = sfl_sf_rest_download(fx->rest, TEST_ELF_PATH, test_dl_free_in_data, test_dl_done,
				     &st);
	sfl_test_wait_for(&st.paused, TEST_DEADLINE_SEC);
	/* a few more turns: no callback may run for the freed download */
	for (guint i = 0; i < 3; i++) {
		g_autoptr(json_t) stats = test_control(fx, "GET", "/control/stats", NULL);

		(void)stats;
	}
	g_assert_cmpuint(st.chunks, ==, 1);
	g_assert_false(st.done);
	test_dl_state_clear(&st);
}

static void
test_download_free_while_minting(Fixture *fx, gconstpointer data)
{
	DlState st = { 0 };

	(void)data;
	if (fx->skip)
		return;
	test_dl_start(fx, &st, TEST_ELF_PATH, PAUSE_NEVER);
	/* freed before its token arrived */
	g_clear_pointer(&st.dl, sfl_sf_download_free);
	while (sfl_sf_auth_is_minting(fx->auth))
		g_main_context_iteration(NULL, TRUE);
	for (guint i = 0; i < 3; i++) {
		g_autoptr(json_t) stats = test_control(fx, "GET", "/control/stats", NULL);

		(void)stats;
	}
	g_assert_false(st.done);
	g_assert_cmpuint(st.chunks, ==, 0);
	g_assert_cmpuint(test_count_requests(fx, "/LogFile"), ==, 0);
	test_dl_state_clear(&st);
}

#define ADD(path, data, func) g_test_add(path, Fixture, data, fixture_setup, func, fixture_teardown)

int
main(int argc, char **argv)
{
	int rc = 0;

	g_test_init(&argc, &argv, NULL);
	test_keys_create();
	ADD("/sfl/sf-rest/query/paging", NULL, test_query_paging);
	ADD("/sfl/sf-rest/query/escaping-tooling", NULL, test_query_escaping);
	ADD("/sfl/sf-rest/query/401-remint", NULL, test_query_401_remint);
	ADD("/sfl/sf-rest/query/concurrent-401", NULL, test_query_concurrent_401);
	ADD("/sfl/sf-rest/query/401-twice", NULL, test_query_401_twice);
	ADD("/sfl/sf-rest/query/throttled", &case_throttled, test_query_error);
	ADD("/sfl/sf-rest/query/forbidden", &case_forbidden, test_query_error);
	ADD("/sfl/sf-rest/query/500", &case_500, test_query_error);
	ADD("/sfl/sf-rest/query/malformed", &case_malformed, test_query_error);
	ADD("/sfl/sf-rest/query/invalid-field", &case_invalid_field, test_query_error);
	ADD("/sfl/sf-rest/query/non-json", &case_non_json, test_query_error);
	ADD("/sfl/sf-rest/query/json-array", &case_array, test_query_error);
	ADD("/sfl/sf-rest/clock-skew", NULL, test_clock_skew);
	ADD("/sfl/sf-rest/download/whole", NULL, test_download_whole);
	ADD("/sfl/sf-rest/download/pause-resume", NULL, test_download_pause_resume);
	ADD("/sfl/sf-rest/download/pause-every-chunk", NULL, test_download_pause_every_chunk);
	ADD("/sfl/sf-rest/download/reset", NULL, test_download_reset);
	ADD("/sfl/sf-rest/download/401-before-data", NULL, test_download_401_before_data);
	ADD("/sfl/sf-rest/download/404", NULL, test_download_404);
	ADD("/sfl/sf-rest/download/throttled", NULL, test_download_throttled);
	ADD("/sfl/sf-rest/download/free-in-callback", NULL, test_download_free_in_callback);
	ADD("/sfl/sf-rest/download/free-while-minting", NULL, test_download_free_while_minting);
	rc = g_test_run();
	test_keys_remove();
	return rc;
}
