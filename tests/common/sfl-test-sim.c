/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestSim"

#include "config.h"

#include "sfl-test-sim.h"

#include <string.h>

#include "sfl-http.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#ifdef __linux__
#include <signal.h>
#include <sys/prctl.h>
#endif

/* a simulator must not outlive a test that aborted: meson would wait on its pipes */
static void
sfl_test_sim_child_setup(gpointer user_data)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

static GSubprocess *
sfl_test_sim_spawn(const gchar *const *argv, GError **error)
{
	g_autoptr(GSubprocessLauncher) launcher =
		g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE);

	g_subprocess_launcher_set_child_setup(launcher, sfl_test_sim_child_setup, NULL, NULL);
	return g_subprocess_launcher_spawnv(launcher, argv, error);
}

#define SFL_TEST_SIM_DEADLINE_SEC 30

/**
 * sfl_test_sim_control:
 * @loop: the curl loop of the test
 * @base: the simulator's base URL
 * @method: GET or POST
 * @path: e.g. "/control/fault"
 * @json: (nullable): the request body
 *
 * Returns: (transfer full): the answer; the call must succeed with 200 within a deadline
 */
json_t *
sfl_test_sim_control(SflCurlLoop *loop, const gchar *base, const gchar *method, const gchar *path,
		     const gchar *json)
{
	SflTestWaiter waiter = { 0 };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflHttpResponse) response = NULL;
	g_autoptr(GBytes) body = json != NULL ? g_bytes_new(json, strlen(json)) : NULL;
	g_autofree gchar *url = g_strconcat(base, path, NULL);
	const gchar *headers[] = { "Content-Type: application/json", NULL };
	json_error_t jerr;
	gsize len = 0;
	const gchar *data;
	json_t *doc;

	/* /control/received of a large test is tens of MB */
	sfl_http_request_bounded_async(loop, method, url, headers, body, 60000, 256 * 1024 * 1024,
				       NULL, sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, SFL_TEST_SIM_DEADLINE_SEC);
	response = sfl_http_request_finish(waiter.result, &error);
	g_clear_object(&waiter.result);
	g_assert_no_error(error);
	g_assert_cmpuint(sfl_http_response_get_status(response), ==, 200);
	data = g_bytes_get_data(sfl_http_response_get_body(response), &len);
	doc = json_loadb(data, len, 0, &jerr);
	g_assert_nonnull(doc);
	return doc;
}

/* starts tests/sim/@script and waits for its "PORT <n>" line; NULL after g_test_skip() */
static gchar *
sfl_test_sim_start(const gchar *script_name, const gchar *what, const gchar *needs,
		   const gchar *const *args, GSubprocess **out_proc)
{
	g_autofree gchar *script = g_test_build_filename(G_TEST_DIST, "sim", script_name, NULL);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GDataInputStream) out = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *line = NULL;
	GSubprocess *proc;

	g_ptr_array_add(argv, (gpointer) "/usr/bin/python3");
	g_ptr_array_add(argv, script);
	for (guint i = 0; args != NULL && args[i] != NULL; i++)
		g_ptr_array_add(argv, (gpointer)args[i]);
	g_ptr_array_add(argv, NULL);
	proc = sfl_test_sim_spawn((const gchar *const *)argv->pdata, &error);
	g_assert_no_error(error);
	*out_proc = proc;
	out = g_data_input_stream_new(g_subprocess_get_stdout_pipe(proc));
	/* blocks until the simulator listens or exits */
	line = g_data_input_stream_read_line(out, NULL, NULL, &error);
	g_assert_no_error(error);
	if (line == NULL || !g_str_has_prefix(line, "PORT ")) {
		g_subprocess_wait(proc, NULL, NULL);
		if (g_subprocess_get_if_exited(proc) && g_subprocess_get_exit_status(proc) == 77) {
			g_autofree gchar *why =
				g_strdup_printf("the %s simulator needs %s", what, needs);
			g_test_skip(why);
			return NULL;
		}
		g_error("the %s simulator did not start", what);
	}
	return g_strdup_printf("http://127.0.0.1:%s", line + 5);
}

/**
 * sfl_test_loki_sim_start:
 * @args: (nullable): extra arguments for the simulator
 * @out_proc: (out): the simulator process (also set when it was skipped)
 *
 * Returns: (transfer full) (nullable): the base URL, or %NULL after g_test_skip()
 */
gchar *
sfl_test_loki_sim_start(const gchar *const *args, GSubprocess **out_proc)
{
	return sfl_test_sim_start("loki_sim.py", "Loki",
				  "protoc, python3-snappy and python3-protobuf", args, out_proc);
}

/**
 * sfl_test_sf_sim_start:
 * @args: (nullable): extra arguments for tests/sim/salesforce_sim.py
 * @out_proc: (out): the simulator process (also set when it was skipped)
 *
 * Returns: (transfer full) (nullable): the base URL, which is both the login URL and the
 *   instance URL, or %NULL after g_test_skip()
 */
gchar *
sfl_test_sf_sim_start(const gchar *const *args, GSubprocess **out_proc)
{
	return sfl_test_sim_start("salesforce_sim.py", "Salesforce",
				  "python3-jwt and python3-cryptography", args, out_proc);
}

/**
 * sfl_test_write_rsa_key:
 * @priv_path: where the private key goes (PEM)
 * @pub_path: (nullable): where the public key goes (PEM)
 */
void
sfl_test_write_rsa_key(const gchar *priv_path, const gchar *pub_path)
{
	EVP_PKEY *key = EVP_RSA_gen(2048);
	FILE *f = NULL;

	g_assert_nonnull(key);
	f = fopen(priv_path, "w");
	g_assert_nonnull(f);
	g_assert_cmpint(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL), ==, 1);
	fclose(f);
	if (pub_path != NULL) {
		f = fopen(pub_path, "w");
		g_assert_nonnull(f);
		g_assert_cmpint(PEM_write_PUBKEY(f, key), ==, 1);
		fclose(f);
	}
	EVP_PKEY_free(key);
}

static gboolean
sfl_test_wait_expired_cb(gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
	return G_SOURCE_REMOVE;
}

/**
 * sfl_test_wait_for:
 * @flag: set by a callback when the awaited thing happened
 * @deadline_sec: how long it may take before the test fails
 */
void
sfl_test_wait_for(const gboolean *flag, guint deadline_sec)
{
	gboolean expired = FALSE;
	g_autoptr(GSource) deadline = g_timeout_source_new_seconds(deadline_sec);

	g_source_set_callback(deadline, sfl_test_wait_expired_cb, &expired, NULL);
	g_source_attach(deadline, NULL);
	while (!*flag && !expired)
		g_main_context_iteration(NULL, TRUE);
	g_source_destroy(deadline);
	g_assert_false(expired);
}

/**
 * sfl_test_waiter_cb:
 * @source: the source object
 * @result: the result, kept in the waiter
 * @user_data: an #SflTestWaiter
 */
void
sfl_test_waiter_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflTestWaiter *waiter = user_data;

	waiter->result = g_object_ref(result);
	waiter->done = TRUE;
}

/**
 * sfl_test_http_call:
 * @loop: the curl loop
 * @method: GET, HEAD, POST, ...
 * @url: the URL
 * @status: (out): the HTTP status
 *
 * Returns: (transfer full): the response body (up to 4 MiB)
 */
gchar *
sfl_test_http_call(SflCurlLoop *loop, const gchar *method, const gchar *url, guint *status)
{
	SflTestWaiter waiter = { 0 };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflHttpResponse) response = NULL;
	GBytes *body = NULL;

	sfl_http_request_bounded_async(loop, method, url, NULL, NULL, 10000, 4 * 1024 * 1024, NULL,
				       sfl_test_waiter_cb, &waiter);
	sfl_test_wait_for(&waiter.done, SFL_TEST_SIM_DEADLINE_SEC);
	response = sfl_http_request_finish(waiter.result, &error);
	g_clear_object(&waiter.result);
	g_assert_no_error(error);
	*status = sfl_http_response_get_status(response);
	body = sfl_http_response_get_body(response);
	return g_strndup(g_bytes_get_data(body, NULL), g_bytes_get_size(body));
}
