/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestLokiSink"

#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-test-sim.h"
#include "sfl-error.h"
#include "sfl-http.h"
#include "sfl-loki-sink.h"

/*
 * The Loki sink against tests/sim/loki_sim.py: the simulator decodes our bodies with
 * python3-protobuf, python3-snappy and gzip, so what is read back here was checked by code that
 * is not ours. Everything runs on the default main context; waits iterate it under a deadline.
 */

#define TEST_TOKEN	  "tok-9f8e7d6c5b4a-secret"
#define TEST_WRONG_TOKEN  "tok-wrong-0a1b2c3d4e5f"
#define TEST_TENANT	  "acme"
#define TEST_DEADLINE_SEC 30

static GMutex test_log_lock;
static GString *test_log;

typedef struct {
	const gchar *tenant;
	const gchar *token;
	gboolean tls;
} SimArgs;

static const SimArgs sim_plain = { NULL, NULL, FALSE };
static const SimArgs sim_tenant_token = { TEST_TENANT, TEST_TOKEN, FALSE };
static const SimArgs sim_token_only = { NULL, TEST_TOKEN, FALSE };
static const SimArgs sim_tenant_only = { TEST_TENANT, NULL, FALSE };
static const SimArgs sim_tls = { NULL, NULL, TRUE };

typedef struct {
	SflTestSim *sim;
	gchar *base;
	gchar *push_url;
	SflCurlLoop *loop;
	SflLabelsInterner *interner;
	gchar *tls_dir; /* the simulator's cert.pem (its own CA), with sim_tls */
	gboolean skip;
} Fixture;

static GLogWriterOutput
test_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	for (gsize i = 0; i < n_fields; i++) {
		if (g_strcmp0(fields[i].key, "MESSAGE") != 0)
			continue;
		g_mutex_lock(&test_log_lock);
		g_string_append_len(test_log, fields[i].value,
				    fields[i].length < 0 ? (gssize)strlen(fields[i].value)
							 : fields[i].length);
		g_string_append_c(test_log, '\n');
		g_mutex_unlock(&test_log_lock);
	}
	if (level & G_LOG_LEVEL_DEBUG)
		return G_LOG_WRITER_HANDLED;
	return g_log_writer_default(level, fields, n_fields, user_data);
}

/* iterates the default context until *flag is set; fails the test at the deadline */
/* a control call to the simulator; returns the parsed JSON answer */
static json_t *
test_control(Fixture *fx, const gchar *method, const gchar *path, const gchar *json)
{
	return sfl_test_sim_control(fx->loop, fx->base, method, path, json);
}

static json_t *
test_received(Fixture *fx)
{
	return test_control(fx, "GET", "/control/received", NULL);
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	const SimArgs *args = data;
	const gchar *argv[7] = { NULL };
	guint n = 0;

	if (args->tenant != NULL) {
		argv[n++] = "--tenant";
		argv[n++] = args->tenant;
	}
	if (args->token != NULL) {
		argv[n++] = "--token";
		argv[n++] = args->token;
	}
	if (args->tls) {
		g_autoptr(GError) error = NULL;

		fx->tls_dir = g_dir_make_tmp("sfl-loki-tls-XXXXXX", &error);
		g_assert_no_error(error);
		argv[n++] = "--tls";
		argv[n++] = fx->tls_dir;
	}
	fx->base = sfl_test_loki_sim_start(argv, &fx->sim);
	if (fx->base == NULL) {
		fx->skip = TRUE;
		return;
	}
	fx->loop = sfl_curl_loop_new();
	if (args->tls) {
		/* the helper names the plain scheme; the control calls trust the simulator's CA */
		g_autofree gchar *cert = g_build_filename(fx->tls_dir, "cert.pem", NULL);
		g_autofree gchar *https =
			g_strconcat("https://", fx->base + strlen("http://"), NULL);

		g_free(fx->base);
		fx->base = g_steal_pointer(&https);
		sfl_curl_loop_set_ca_file(fx->loop, cert);
	}
	fx->push_url = g_strconcat(fx->base, "/loki/api/v1/push", NULL);
	fx->interner = sfl_labels_interner_new();
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	(void)data;
	if (fx->loop != NULL)
		g_assert_cmpuint(sfl_curl_loop_get_n_transfers(fx->loop), ==, 0);
	g_clear_object(&fx->loop);
	g_clear_pointer(&fx->interner, sfl_labels_interner_unref);
	if (fx->sim != NULL) {
		sfl_test_sim_kill(fx->sim);
	}
	g_clear_object(&fx->sim);
	g_free(fx->base);
	g_free(fx->push_url);
	/* let sources destroyed above release their data */
	while (g_main_context_iteration(NULL, FALSE))
		;
	if (fx->tls_dir != NULL)
		sfl_test_rmtree(fx->tls_dir);
	g_free(fx->tls_dir);
}

static SflSink *
test_sink_new(Fixture *fx, gint encoding, gint compression, const gchar *tenant, const gchar *token)
{
	SflLokiConfig cfg = { 0 };
	g_autoptr(GError) error = NULL;
	SflSink *sink = NULL;

	cfg.url = fx->push_url;
	cfg.tenant_id = (gchar *)tenant;
	cfg.auth_token = (gchar *)token;
	cfg.encoding = encoding;
	cfg.compression = compression;
	sink = sfl_loki_sink_new(fx->loop, &cfg, &error);
	g_assert_no_error(error);
	g_assert_nonnull(sink);
	return sink;
}

static SflSinkResult *
test_push(SflSink *sink, SflBatch *batch, GCancellable *cancellable, GError **error)
{
	SflTestWaiter waiter = { 0 };
	SflSinkResult *result = NULL;

	sfl_sink_push_async(sink, batch, cancellable, sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, TEST_DEADLINE_SEC);
	result = sfl_sink_push_finish(sink, waiter.result, error);
	g_object_unref(waiter.result);
	return result;
}

static SflLabels *
test_labels(Fixture *fx, const SflLabelPair *pairs, guint n_pairs)
{
	g_autoptr(GError) error = NULL;
	SflLabels *labels = sfl_labels_intern(fx->interner, pairs, n_pairs, &error);

	g_assert_no_error(error);
	return labels;
}

static const SflLabelPair test_labels_a[] = {
	{ "job", "sf2loki" },
	{ "path", "C:\\dir \"quoted\"\nnext" },
};
static const SflLabelPair test_labels_b[] = { { "job", "other" } };
static const SflLabelPair test_md_1[] = { { "user", "u1" }, { "trace_id", "abc" } };
static const SflLabelPair test_md_3[] = { { "z", "1" } };

/* two streams; stream a's entries arrive out of timestamp order */
static SflBatch *
test_batch(Fixture *fx)
{
	g_autoptr(SflLabels) a = test_labels(fx, test_labels_a, G_N_ELEMENTS(test_labels_a));
	g_autoptr(SflLabels) b = test_labels(fx, test_labels_b, G_N_ELEMENTS(test_labels_b));
	SflBatch *batch = sfl_batch_new();

	sfl_batch_add(batch, sfl_entry_new(G_GINT64_CONSTANT(1700000000123456789), a, "hello", -1,
					   test_md_1, G_N_ELEMENTS(test_md_1), "k", "1"));
	sfl_batch_add(batch, sfl_entry_new(G_GINT64_CONSTANT(1700000000123456790), b, "world", -1,
					   NULL, 0, "k", "2"));
	sfl_batch_add(batch,
		      sfl_entry_new(G_GINT64_CONSTANT(1700000000000000001), a, "second \xc3\xbc",
				    -1, test_md_3, G_N_ELEMENTS(test_md_3), "k", "3"));
	return batch;
}

static SflBatch *
test_batch_one_line(Fixture *fx, gsize line_len)
{
	g_autoptr(SflLabels) b = test_labels(fx, test_labels_b, G_N_ELEMENTS(test_labels_b));
	g_autofree gchar *line = g_strnfill(line_len, 'x');
	SflBatch *batch = sfl_batch_new();

	sfl_batch_add(batch, sfl_entry_new(G_GINT64_CONSTANT(1700000000000000000), b, line, -1,
					   NULL, 0, NULL, NULL));
	return batch;
}

static json_t *
test_find_stream(json_t *received, const gchar *job)
{
	json_t *streams = json_object_get(received, "streams");
	json_t *stream = NULL;
	gsize i = 0;

	json_array_foreach (streams, i, stream) {
		json_t *labels = json_object_get(stream, "labels");

		if (g_strcmp0(json_string_value(json_object_get(labels, "job")), job) == 0)
			return stream;
	}
	g_assert_not_reached();
	return NULL;
}

static void
test_check_entry(json_t *entries, gsize idx, const gchar *ts, const gchar *line, json_t *md)
{
	json_t *entry = json_array_get(entries, idx);

	g_assert_nonnull(entry);
	g_assert_cmpstr(json_string_value(json_object_get(entry, "ts")), ==, ts);
	g_assert_cmpstr(json_string_value(json_object_get(entry, "line")), ==, line);
	if (md == NULL)
		g_assert_null(json_object_get(entry, "metadata"));
	else
		g_assert_true(json_equal(json_object_get(entry, "metadata"), md));
}

static void
test_check_delivered(Fixture *fx, const gchar *content_type, const gchar *content_encoding)
{
	g_autoptr(json_t) received = test_received(fx);
	g_autoptr(json_t) labels_a =
		json_pack("{s:s, s:s}", "job", "sf2loki", "path", "C:\\dir \"quoted\"\nnext");
	g_autoptr(json_t) labels_b = json_pack("{s:s}", "job", "other");
	g_autoptr(json_t) md_1 = json_pack("{s:s, s:s}", "user", "u1", "trace_id", "abc");
	g_autoptr(json_t) md_3 = json_pack("{s:s}", "z", "1");
	json_t *pushes = json_object_get(received, "pushes");
	json_t *push = json_array_get(pushes, 0);
	json_t *a = NULL;
	json_t *b = NULL;

	g_assert_cmpuint(json_array_size(pushes), ==, 1);
	g_assert_cmpstr(json_string_value(json_object_get(push, "content_type")), ==, content_type);
	g_assert_cmpstr(json_string_value(json_object_get(push, "content_encoding")), ==,
			content_encoding);
	g_assert_true(g_str_has_prefix(json_string_value(json_object_get(push, "user_agent")),
				       "sf2loki/" PACKAGE_VERSION));
	g_assert_cmpint(json_integer_value(json_object_get(push, "entries")), ==, 3);
	g_assert_cmpuint(json_array_size(json_object_get(received, "streams")), ==, 2);

	a = test_find_stream(received, "sf2loki");
	g_assert_true(json_equal(json_object_get(a, "labels"), labels_a));
	g_assert_cmpuint(json_array_size(json_object_get(a, "entries")), ==, 2);
	test_check_entry(json_object_get(a, "entries"), 0, "1700000000000000001", "second \xc3\xbc",
			 md_3);
	test_check_entry(json_object_get(a, "entries"), 1, "1700000000123456789", "hello", md_1);

	b = test_find_stream(received, "other");
	g_assert_true(json_equal(json_object_get(b, "labels"), labels_b));
	g_assert_cmpuint(json_array_size(json_object_get(b, "entries")), ==, 1);
	test_check_entry(json_object_get(b, "entries"), 0, "1700000000123456790", "world", NULL);
}

static void
test_ok(Fixture *fx, gint encoding, gint compression, const gchar *ctype, const gchar *cenc)
{
	g_autoptr(SflSink) sink = test_sink_new(fx, encoding, compression, NULL, NULL);
	g_autoptr(SflBatch) batch = test_batch(fx);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSinkResult) result = test_push(sink, batch, NULL, &error);

	g_assert_no_error(error);
	g_assert_cmpint(result->outcome, ==, SFL_SINK_OK);
	g_assert_cmpuint(result->status, ==, 204);
	test_check_delivered(fx, ctype, cenc);
}

static void
test_protobuf(Fixture *fx, gconstpointer data)
{
	(void)data;
	if (fx->skip)
		return;
	test_ok(fx, SFL_LOKI_ENCODING_PROTOBUF, SFL_LOKI_COMPRESSION_SNAPPY,
		"application/x-protobuf", "snappy");
}

static void
test_json_gzip(Fixture *fx, gconstpointer data)
{
	(void)data;
	if (fx->skip)
		return;
	test_ok(fx, SFL_LOKI_ENCODING_JSON, SFL_LOKI_COMPRESSION_GZIP, "application/json", "gzip");
}

static void
test_json_plain(Fixture *fx, gconstpointer data)
{
	(void)data;
	if (fx->skip)
		return;
	test_ok(fx, SFL_LOKI_ENCODING_JSON, SFL_LOKI_COMPRESSION_NONE, "application/json", "");
}

/* one push after a control call; returns the result */
static SflSinkResult *
test_push_with_fault(Fixture *fx, const gchar *fault, SflBatch *batch, const gchar *tenant,
		     const gchar *token)
{
	g_autoptr(SflSink) sink = test_sink_new(fx, SFL_LOKI_ENCODING_PROTOBUF,
						SFL_LOKI_COMPRESSION_SNAPPY, tenant, token);
	g_autoptr(GError) error = NULL;
	SflSinkResult *result = NULL;

	if (fault != NULL) {
		g_autoptr(json_t) answer = test_control(fx, "POST", "/control/fault", fault);

		g_assert_true(json_is_object(answer));
	}
	result = test_push(sink, batch, NULL, &error);
	g_assert_no_error(error);
	g_assert_nonnull(result);
	return result;
}

static void
test_retry_after_429(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(SflSinkResult) result = NULL;

	(void)data;
	if (fx->skip)
		return;
	batch = test_batch(fx);
	result = test_push_with_fault(fx, "{\"count\": 1, \"status\": 429, \"retry_after\": \"2\"}",
				      batch, NULL, NULL);
	g_assert_cmpint(result->outcome, ==, SFL_SINK_RETRY);
	g_assert_cmpuint(result->status, ==, 429);
	g_assert_cmpint(result->retry_after_usec, ==, 2 * G_USEC_PER_SEC);
}

static void
test_server_error_500(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(SflSinkResult) result = NULL;
	g_autoptr(json_t) received = NULL;

	(void)data;
	if (fx->skip)
		return;
	batch = test_batch(fx);
	result = test_push_with_fault(fx, "{\"count\": 1, \"status\": 500}", batch, NULL, NULL);
	g_assert_cmpint(result->outcome, ==, SFL_SINK_RETRY);
	g_assert_cmpuint(result->status, ==, 500);
	g_assert_cmpint(result->retry_after_usec, ==, -1);
	g_assert_cmpstr(result->detail, ==, "fault injected");
	received = test_received(fx);
	g_assert_cmpuint(json_array_size(json_object_get(received, "pushes")), ==, 0);
}

static void
test_connection_reset(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(SflSinkResult) result = NULL;

	(void)data;
	if (fx->skip)
		return;
	batch = test_batch(fx);
	/* curl retries a request once on a reused connection that died: reset more than once */
	result = test_push_with_fault(fx, "{\"reset\": 3}", batch, NULL, NULL);
	g_assert_cmpint(result->outcome, ==, SFL_SINK_RETRY);
	g_assert_cmpuint(result->status, ==, 0);
	g_assert_nonnull(result->detail);
	g_assert_cmpstr(result->detail, !=, "");
}

/* the source port of every push the simulator stored, in arrival order */
static GArray *
test_push_ports(Fixture *fx)
{
	g_autoptr(json_t) received = test_received(fx);
	GArray *ports = g_array_new(FALSE, FALSE, sizeof(gint64));
	json_t *push = NULL;
	gsize i = 0;

	json_array_foreach (json_object_get(received, "pushes"), i, push) {
		gint64 port = json_integer_value(json_object_get(push, "peer_port"));

		g_assert_cmpint(port, >, 0);
		g_array_append_val(ports, port);
	}
	return ports;
}

static void
test_push_expect(SflSink *sink, SflBatch *batch, SflSinkOutcome outcome, guint status)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSinkResult) result = test_push(sink, batch, NULL, &error);

	g_assert_no_error(error);
	g_assert_nonnull(result);
	g_assert_cmpint(result->outcome, ==, outcome);
	g_assert_cmpuint(result->status, ==, status);
}

/* two good pushes share one keep-alive connection; returns its source port */
static gint64
test_reused_port(Fixture *fx, SflSink *sink, SflBatch *batch)
{
	g_autoptr(GArray) ports = NULL;

	test_push_expect(sink, batch, SFL_SINK_OK, 204);
	test_push_expect(sink, batch, SFL_SINK_OK, 204);
	ports = test_push_ports(fx);
	g_assert_cmpuint(ports->len, ==, 2);
	g_assert_cmpint(g_array_index(ports, gint64, 0), ==, g_array_index(ports, gint64, 1));
	return g_array_index(ports, gint64, 0);
}

/* after a failed push, the next good one (the third stored) came on another connection */
static void
test_check_new_port(Fixture *fx, SflSink *sink, SflBatch *batch, gint64 old_port)
{
	g_autoptr(GArray) ports = NULL;

	test_push_expect(sink, batch, SFL_SINK_OK, 204);
	ports = test_push_ports(fx);
	g_assert_cmpuint(ports->len, ==, 3);
	g_assert_cmpint(g_array_index(ports, gint64, 2), !=, old_port);
}

/*
 * Two pushes share a connection, @fault breaks the third (RETRY with @status), and the next
 * push must come from a new connection. @timeout_ms > 0 shortens the sink's deadline for the
 * failing push (a hung answer).
 */
static void
test_reconnect_after(Fixture *fx, const gchar *fault, guint status, guint timeout_ms)
{
	g_autoptr(SflSink) sink = NULL;
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(json_t) answer = NULL;
	g_autoptr(json_t) cleared = NULL;
	gint64 port = 0;

	if (fx->skip)
		return;
	sink = test_sink_new(fx, SFL_LOKI_ENCODING_PROTOBUF, SFL_LOKI_COMPRESSION_SNAPPY, NULL,
			     NULL);
	batch = test_batch(fx);
	port = test_reused_port(fx, sink, batch);
	answer = test_control(fx, "POST", "/control/fault", fault);
	if (timeout_ms > 0)
		sfl_loki_sink_set_timeout(SFL_LOKI_SINK(sink), timeout_ms);
	test_push_expect(sink, batch, SFL_SINK_RETRY, status);
	if (timeout_ms > 0)
		sfl_loki_sink_set_timeout(SFL_LOKI_SINK(sink), TEST_DEADLINE_SEC * 1000);
	test_check_new_port(fx, sink, batch, port);
	cleared = test_control(fx, "POST", "/control/clear", "{}");
}

static void
test_reconnect_after_500(Fixture *fx, gconstpointer data)
{
	/* the simulator keeps the connection open after its 500: only the client can drop it */
	test_reconnect_after(fx, "{\"count\": 1, \"status\": 500}", 500, 0);
}

static void
test_reconnect_after_reset(Fixture *fx, gconstpointer data)
{
	/*
	 * curl replays a request once, on a new connection, when a reused one dies before any
	 * answer: the second reset is the one the sink sees
	 */
	test_reconnect_after(fx, "{\"reset\": 2}", 0, 0);
}

static void
test_reconnect_after_timeout(Fixture *fx, gconstpointer data)
{
	/* the simulator holds the request and the connection open; the client's deadline ends it */
	test_reconnect_after(fx, "{\"hang\": 1}", 0, 300);
}

static void
test_unauthorized_401(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(SflSinkResult) result = NULL;

	(void)data;
	if (fx->skip)
		return;
	batch = test_batch(fx);
	result = test_push_with_fault(fx, NULL, batch, TEST_TENANT, TEST_WRONG_TOKEN);
	g_assert_cmpint(result->outcome, ==, SFL_SINK_RETRY);
	g_assert_cmpuint(result->status, ==, 401);
	/* the simulator echoes the Authorization header it got: it must come back masked */
	g_test_message("401 detail: %s", result->detail);
	g_assert_nonnull(strstr(result->detail, "invalid credentials"));
	g_assert_null(strstr(result->detail, TEST_WRONG_TOKEN));
	g_assert_null(strstr(result->detail, "YWNtZTp0b2std3Jvbmct"));
	g_assert_null(strstr(result->reason, TEST_WRONG_TOKEN));
}

static void
test_unauthorized_token_only(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(SflSinkResult) result = NULL;

	(void)data;
	if (fx->skip)
		return;
	batch = test_batch(fx);
	result = test_push_with_fault(fx, NULL, batch, NULL, TEST_WRONG_TOKEN);
	g_assert_cmpint(result->outcome, ==, SFL_SINK_RETRY);
	g_assert_cmpuint(result->status, ==, 401);
	g_assert_null(strstr(result->detail, TEST_WRONG_TOKEN));
}

/*
 * The headers the simulator received with one push, against docs/deployment/network.md. The
 * expected Authorization values were computed by Python's base64.b64encode, not by this code base.
 */
typedef struct {
	const gchar *url_userinfo; /* put into the push URL, or NULL */
	const gchar *tenant;
	const gchar *token;
	const gchar *authorization; /* the whole value, or NULL for no header */
	const gchar *org_id;	    /* X-Scope-OrgID, or NULL for no header */
	const gchar *names;	    /* every header name, sorted, lower case */
} AuthCase;

static const AuthCase auth_tenant_token = {
	NULL,
	TEST_TENANT,
	TEST_TOKEN,
	/* base64("acme:tok-9f8e7d6c5b4a-secret") */
	"Basic YWNtZTp0b2stOWY4ZTdkNmM1YjRhLXNlY3JldA==",
	NULL,
	"accept authorization content-encoding content-length content-type host user-agent",
};
static const AuthCase auth_token_only = {
	NULL,
	NULL,
	TEST_TOKEN,
	/* base64(":tok-9f8e7d6c5b4a-secret"): an empty user, never Bearer */
	"Basic OnRvay05ZjhlN2Q2YzViNGEtc2VjcmV0",
	NULL,
	"accept authorization content-encoding content-length content-type host user-agent",
};
static const AuthCase auth_tenant_only = {
	NULL,
	TEST_TENANT,
	NULL,
	NULL,
	TEST_TENANT,
	"accept content-encoding content-length content-type host user-agent x-scope-orgid",
};
static const AuthCase auth_none = {
	NULL, NULL, NULL,
	NULL, NULL, "accept content-encoding content-length content-type host user-agent",
};
static const AuthCase auth_url_userinfo = {
	"url-user:url-pass-7c1e",
	NULL,
	TEST_TOKEN,
	/* base64("url-user:url-pass-7c1e"): the URL's credentials win over the token */
	"Basic dXJsLXVzZXI6dXJsLXBhc3MtN2MxZQ==",
	NULL,
	"accept authorization content-encoding content-length content-type host user-agent",
};

static gchar *
test_header_names(json_t *push)
{
	json_t *names = json_object_get(push, "header_names");
	g_autoptr(GPtrArray) parts = g_ptr_array_new();
	json_t *name = NULL;
	gsize i = 0;

	g_assert_true(json_is_array(names));
	json_array_foreach (names, i, name)
		g_ptr_array_add(parts, (gpointer)json_string_value(name));
	g_ptr_array_add(parts, NULL);
	return g_strjoinv(" ", (gchar **)parts->pdata);
}

static void
test_auth_headers(Fixture *fx, gconstpointer data)
{
	const AuthCase *c = data;
	SflLokiConfig cfg = { 0 };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSink) sink = NULL;
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(SflSinkResult) result = NULL;
	g_autoptr(json_t) received = NULL;
	g_autofree gchar *url = NULL;
	g_autofree gchar *names = NULL;
	json_t *pushes = NULL;
	json_t *push = NULL;

	if (fx->skip)
		return;
	url = c->url_userinfo != NULL ? g_strdup_printf("http://%s@%s", c->url_userinfo,
							fx->push_url + strlen("http://"))
				      : g_strdup(fx->push_url);
	cfg.url = url;
	cfg.tenant_id = (gchar *)c->tenant;
	cfg.auth_token = (gchar *)c->token;
	cfg.encoding = SFL_LOKI_ENCODING_PROTOBUF;
	cfg.compression = SFL_LOKI_COMPRESSION_SNAPPY;
	sink = sfl_loki_sink_new(fx->loop, &cfg, &error);
	g_assert_no_error(error);
	batch = test_batch(fx);
	result = test_push(sink, batch, NULL, &error);
	g_assert_no_error(error);
	/* the simulator enforces the same rule when it was given the tenant and token */
	g_assert_cmpint(result->outcome, ==, SFL_SINK_OK);
	received = test_received(fx);
	pushes = json_object_get(received, "pushes");
	g_assert_cmpuint(json_array_size(pushes), ==, 1);
	push = json_array_get(pushes, 0);
	g_assert_cmpstr(json_string_value(json_object_get(push, "authorization")), ==,
			c->authorization);
	g_assert_cmpstr(json_string_value(json_object_get(push, "org_id")), ==, c->org_id);
	names = test_header_names(push);
	g_assert_cmpstr(names, ==, c->names);
}

typedef struct {
	const SimArgs *sim;
	const AuthCase *auth;
} AuthTest;

static const AuthTest auth_test_tenant_token = { &sim_tenant_token, &auth_tenant_token };
static const AuthTest auth_test_token_only = { &sim_token_only, &auth_token_only };
static const AuthTest auth_test_tenant_only = { &sim_tenant_only, &auth_tenant_only };
static const AuthTest auth_test_none = { &sim_plain, &auth_none };
static const AuthTest auth_test_url_userinfo = { &sim_plain, &auth_url_userinfo };

static void
auth_fixture_setup(Fixture *fx, gconstpointer data)
{
	fixture_setup(fx, ((const AuthTest *)data)->sim);
}

static void
auth_fixture_teardown(Fixture *fx, gconstpointer data)
{
	fixture_teardown(fx, ((const AuthTest *)data)->sim);
}

static void
test_auth_case(Fixture *fx, gconstpointer data)
{
	test_auth_headers(fx, ((const AuthTest *)data)->auth);
}

/*
 * sink.loki.ca_file is Loki's trust and only Loki's: with it the sink reaches a Loki whose
 * CA no default knows, and without it the same Loki is refused even though the loop's default
 * trust (what SSL_CERT_FILE sets) holds that CA only when asked for.
 */
static void
test_tls_ca_file(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *cert = NULL;
	g_autofree gchar *other_dir = NULL;
	g_autofree gchar *other_cert = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCurlLoop) bare = NULL;
	g_autofree gchar *endpoint = NULL;

	(void)data;
	if (fx->skip)
		return;
	cert = g_build_filename(fx->tls_dir, "cert.pem", NULL);
	endpoint = g_strdup(fx->base + strlen("https://"));

	/* sink.loki.ca_file: trusted, on a loop whose default trust does not know the CA */
	bare = sfl_curl_loop_new();
	sfl_curl_loop_set_ca_file(bare, NULL);
	{
		SflLokiConfig cfg = { .url = fx->push_url, .ca_file = cert };
		g_autoptr(SflSink) sink = sfl_loki_sink_new(bare, &cfg, &error);
		g_autoptr(SflBatch) batch = test_batch(fx);
		g_autoptr(SflSinkResult) result = NULL;

		g_assert_no_error(error);
		result = test_push(sink, batch, NULL, &error);
		g_assert_no_error(error);
		g_assert_cmpint(result->outcome, ==, SFL_SINK_OK);
	}
	/* no ca_file: the system store does not know a self-signed CA; the error names Loki */
	{
		SflLokiConfig cfg = { .url = fx->push_url };
		g_autoptr(SflSink) sink = sfl_loki_sink_new(bare, &cfg, &error);
		g_autoptr(SflBatch) batch = test_batch(fx);
		g_autoptr(SflSinkResult) result = NULL;

		g_assert_no_error(error);
		result = test_push(sink, batch, NULL, &error);
		g_assert_no_error(error);
		g_assert_cmpint(result->outcome, ==, SFL_SINK_RETRY);
		g_assert_cmpuint(result->status, ==, 0);
		g_test_message("untrusted: %s", result->detail);
		g_assert_nonnull(strstr(result->detail, endpoint));
		g_assert_nonnull(strstr(result->detail, "certificate"));
	}
	/*
	 * ca_file set to another CA while the loop's default trusts Loki's: the sink's own CA is
	 * all it trusts, so the push is refused
	 */
	other_dir = g_dir_make_tmp("sfl-loki-tls-other-XXXXXX", &error);
	g_assert_no_error(error);
	other_cert = g_build_filename(other_dir, "ca.pem", NULL);
	sfl_test_write_self_signed_ca(other_cert, "other-ca");
	{
		SflLokiConfig cfg = { .url = fx->push_url, .ca_file = other_cert };
		g_autoptr(SflSink) sink = sfl_loki_sink_new(fx->loop, &cfg, &error);
		g_autoptr(SflBatch) batch = test_batch(fx);
		g_autoptr(SflSinkResult) result = NULL;

		g_assert_no_error(error);
		result = test_push(sink, batch, NULL, &error);
		g_assert_no_error(error);
		g_assert_cmpint(result->outcome, ==, SFL_SINK_RETRY);
		g_assert_nonnull(strstr(result->detail, endpoint));
	}
	/* and without ca_file the loop's default (here the simulator's CA) is used */
	{
		SflLokiConfig cfg = { .url = fx->push_url };
		g_autoptr(SflSink) sink = sfl_loki_sink_new(fx->loop, &cfg, &error);
		g_autoptr(SflBatch) batch = test_batch(fx);
		g_autoptr(SflSinkResult) result = NULL;

		g_assert_no_error(error);
		result = test_push(sink, batch, NULL, &error);
		g_assert_no_error(error);
		g_assert_cmpint(result->outcome, ==, SFL_SINK_OK);
	}
	g_clear_object(&bare);
	while (g_main_context_iteration(NULL, FALSE))
		;
	sfl_test_rmtree(other_dir);
}

static void
test_bad_request_400(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(SflSinkResult) result = NULL;

	(void)data;
	if (fx->skip)
		return;
	batch = test_batch_one_line(fx, 200);
	result = test_push_with_fault(fx, "{\"reject_line_over\": 100}", batch, NULL, NULL);
	g_assert_cmpint(result->outcome, ==, SFL_SINK_REJECTED);
	g_assert_cmpuint(result->status, ==, 400);
	g_assert_cmpstr(result->reason, ==, "bad_request");
	g_assert_true(g_str_has_prefix(result->detail, "Max entry size exceeded"));
	g_assert_cmpuint(strlen(result->detail), <=, SFL_LOKI_SINK_DETAIL_MAX);
}

static void
test_oversized_413(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(SflSinkResult) result = NULL;

	(void)data;
	if (fx->skip)
		return;
	batch = test_batch_one_line(fx, 4096);
	result = test_push_with_fault(fx, "{\"max_body\": 64}", batch, NULL, NULL);
	g_assert_cmpint(result->outcome, ==, SFL_SINK_REJECTED);
	g_assert_cmpuint(result->status, ==, 413);
	g_assert_cmpstr(result->reason, ==, "oversized_413");
}

static void
test_checkpoint_only(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflSink) sink = NULL;
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSinkResult) result = NULL;
	g_autoptr(json_t) received = NULL;

	(void)data;
	if (fx->skip)
		return;
	sink = test_sink_new(fx, SFL_LOKI_ENCODING_PROTOBUF, SFL_LOKI_COMPRESSION_SNAPPY, NULL,
			     NULL);
	batch = sfl_batch_new();
	sfl_batch_add(batch, sfl_entry_new_checkpoint_only(1, "k", "1"));
	sfl_batch_add(batch, sfl_entry_new_checkpoint_only(2, "k", "2"));
	result = test_push(sink, batch, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpint(result->outcome, ==, SFL_SINK_OK);
	g_assert_cmpuint(result->status, ==, 0);
	received = test_received(fx);
	g_assert_cmpuint(json_array_size(json_object_get(received, "pushes")), ==, 0);
}

static gboolean
test_cancel_cb(gpointer user_data)
{
	g_cancellable_cancel(G_CANCELLABLE(user_data));
	return G_SOURCE_REMOVE;
}

static void
test_cancel(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflSink) sink = NULL;
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSinkResult) result = NULL;
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	g_autoptr(GSource) later = NULL;
	g_autoptr(json_t) ignored = NULL;
	g_autoptr(json_t) cleared = NULL;

	(void)data;
	if (fx->skip)
		return;
	sink = test_sink_new(fx, SFL_LOKI_ENCODING_PROTOBUF, SFL_LOKI_COMPRESSION_SNAPPY, NULL,
			     NULL);
	batch = test_batch(fx);
	ignored = test_control(fx, "POST", "/control/fault", "{\"hang\": 1}");
	/*
	 * cancel from the loop once the request is in flight; the simulator never answers it, so
	 * only the cancellation can end the push
	 */
	later = g_idle_source_new();
	g_source_set_callback(later, test_cancel_cb, cancellable, NULL);
	g_source_attach(later, NULL);
	result = test_push(sink, batch, cancellable, &error);
	g_source_destroy(later);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_assert_null(result);
	g_assert_cmpuint(sfl_curl_loop_get_n_transfers(fx->loop), ==, 0);
	cleared = test_control(fx, "POST", "/control/clear", "{}");
}

static void
test_invalid_url(void)
{
	const gchar *bad[] = { "", "not a url", "ftp://example.com/loki/api/v1/push",
			       "http:///loki/api/v1/push" };
	g_autoptr(SflCurlLoop) loop = sfl_curl_loop_new();

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		SflLokiConfig cfg = { 0 };
		g_autoptr(GError) error = NULL;
		g_autoptr(SflSink) sink = NULL;

		cfg.url = (gchar *)bad[i];
		sink = sfl_loki_sink_new(loop, &cfg, &error);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_assert_null(sink);
	}
}

static void
test_retry_after_parse(void)
{
	gint64 now = G_GINT64_CONSTANT(1700000000) * G_USEC_PER_SEC;

	g_assert_cmpint(sfl_loki_sink_parse_retry_after(NULL, now), ==, -1);
	g_assert_cmpint(sfl_loki_sink_parse_retry_after("2", now), ==, 2 * G_USEC_PER_SEC);
	g_assert_cmpint(sfl_loki_sink_parse_retry_after(" 0 ", now), ==, 0);
	g_assert_cmpint(sfl_loki_sink_parse_retry_after("120", now), ==, 60 * G_USEC_PER_SEC);
	g_assert_cmpint(sfl_loki_sink_parse_retry_after("soon", now), ==, -1);
	g_assert_cmpint(sfl_loki_sink_parse_retry_after("-3", now), ==, -1);
	/* 1700000000 is Tue, 14 Nov 2023 22:13:20 GMT */
	g_assert_cmpint(sfl_loki_sink_parse_retry_after("Tue, 14 Nov 2023 22:13:30 GMT", now), ==,
			10 * G_USEC_PER_SEC);
	g_assert_cmpint(sfl_loki_sink_parse_retry_after("Tue, 14 Nov 2023 22:00:00 GMT", now), ==,
			0);
	g_assert_cmpint(sfl_loki_sink_parse_retry_after("Wed, 15 Nov 2023 22:13:20 GMT", now), ==,
			60 * G_USEC_PER_SEC);
}

/* runs last: nothing any case logged may contain a token */
static void
test_no_secret_in_logs(void)
{
	g_mutex_lock(&test_log_lock);
	/* the capture saw the sink's own debug lines */
	g_assert_nonnull(strstr(test_log->str, "push answered HTTP 401"));
	g_assert_null(strstr(test_log->str, TEST_TOKEN));
	g_assert_null(strstr(test_log->str, TEST_WRONG_TOKEN));
	g_assert_null(strstr(test_log->str, "url-pass-7c1e"));
	g_mutex_unlock(&test_log_lock);
}

#define ADD(path, args, func) g_test_add(path, Fixture, args, fixture_setup, func, fixture_teardown)
#define AUTH(path, test)                                                                           \
	g_test_add(path, Fixture, test, auth_fixture_setup, test_auth_case, auth_fixture_teardown)

int
main(int argc, char **argv)
{
	test_log = g_string_new(NULL);
	g_log_set_writer_func(test_log_writer, NULL, NULL);
	g_test_init(&argc, &argv, NULL);

	ADD("/sfl/loki-sink/protobuf", &sim_plain, test_protobuf);
	ADD("/sfl/loki-sink/json-gzip", &sim_plain, test_json_gzip);
	ADD("/sfl/loki-sink/json-plain", &sim_plain, test_json_plain);
	ADD("/sfl/loki-sink/retry-after-429", &sim_plain, test_retry_after_429);
	ADD("/sfl/loki-sink/server-error-500", &sim_plain, test_server_error_500);
	ADD("/sfl/loki-sink/connection-reset", &sim_plain, test_connection_reset);
	ADD("/sfl/loki-sink/reconnect-after-500", &sim_plain, test_reconnect_after_500);
	ADD("/sfl/loki-sink/reconnect-after-reset", &sim_plain, test_reconnect_after_reset);
	ADD("/sfl/loki-sink/reconnect-after-timeout", &sim_plain, test_reconnect_after_timeout);
	ADD("/sfl/loki-sink/unauthorized-401", &sim_tenant_token, test_unauthorized_401);
	ADD("/sfl/loki-sink/unauthorized-token-only", &sim_token_only,
	    test_unauthorized_token_only);
	AUTH("/sfl/loki-sink/auth-tenant-and-token", &auth_test_tenant_token);
	AUTH("/sfl/loki-sink/auth-token-only", &auth_test_token_only);
	AUTH("/sfl/loki-sink/auth-tenant-only", &auth_test_tenant_only);
	AUTH("/sfl/loki-sink/auth-none", &auth_test_none);
	AUTH("/sfl/loki-sink/auth-url-userinfo", &auth_test_url_userinfo);
	ADD("/sfl/loki-sink/tls-ca-file", &sim_tls, test_tls_ca_file);
	ADD("/sfl/loki-sink/bad-request-400", &sim_plain, test_bad_request_400);
	ADD("/sfl/loki-sink/oversized-413", &sim_plain, test_oversized_413);
	ADD("/sfl/loki-sink/checkpoint-only", &sim_plain, test_checkpoint_only);
	ADD("/sfl/loki-sink/cancel", &sim_plain, test_cancel);
	g_test_add_func("/sfl/loki-sink/invalid-url", test_invalid_url);
	g_test_add_func("/sfl/loki-sink/retry-after-parse", test_retry_after_parse);
	g_test_add_func("/sfl/loki-sink/no-secret-in-logs", test_no_secret_in_logs);
	return g_test_run();
}
