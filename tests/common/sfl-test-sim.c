/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestSim"

#include "config.h"

#include "sfl-test-sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "sfl-autocleanups.h"
#include "sfl-http.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

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

struct _SflTestSim {
	GObject parent_instance;
	GSubprocess *proc; /* the native backend: the child */
	gint64 broker_id;  /* the broker backend: its id for the process */
	gboolean ended;
	gint status; /* once @ended: exit status, or minus the signal */
};

G_DEFINE_TYPE(SflTestSim, sfl_test_sim, G_TYPE_OBJECT)

static void
sfl_test_sim_finalize(GObject *object)
{
	SflTestSim *self = SFL_TEST_SIM(object);

	/* as a GSubprocess: dropping the last reference leaves the process alone; it dies with
	 * the test (PR_SET_PDEATHSIG natively, the broker's exit otherwise) */
	g_clear_object(&self->proc);
	G_OBJECT_CLASS(sfl_test_sim_parent_class)->finalize(object);
}

static void
sfl_test_sim_class_init(SflTestSimClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_test_sim_finalize;
}

static void
sfl_test_sim_init(SflTestSim *self)
{
}

#define SFL_TEST_SIM_BROKER_ENV "SFL_TEST_SIM_BROKER"

/*
 * One call to tests/sim/sim_broker.py: POST @path with @request, HTTP/1.0 so the answer ends
 * at EOF. Blocking on purpose: a simulator start blocks natively too (on its first line), and
 * nothing of the test's main context may run in between.
 */
static json_t *
sfl_test_broker_call(const gchar *path, json_t *request)
{
	g_autoptr(GSocketClient) client = g_socket_client_new();
	g_autoptr(GSocketConnection) conn = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GByteArray) answer = g_byte_array_new();
	g_autofree gchar *body = json_dumps(request, JSON_COMPACT);
	g_autofree gchar *head = NULL;
	const gchar *base = g_getenv(SFL_TEST_SIM_BROKER_ENV);
	GOutputStream *out;
	const gchar *split;
	json_error_t jerr;
	json_t *doc;
	gchar buf[4096];
	gssize n;

	/* a wait asks for up to SFL_TEST_SIM_DEADLINE_SEC, the answer comes right after */
	g_socket_client_set_timeout(client, 2 * SFL_TEST_SIM_DEADLINE_SEC);
	conn = g_socket_client_connect_to_uri(client, base, 80, NULL, &error);
	if (conn == NULL)
		g_error("simulator broker %s: %s", base, error->message);
	out = g_io_stream_get_output_stream(G_IO_STREAM(conn));
	head = g_strdup_printf("POST %s HTTP/1.0\r\nContent-Type: application/json\r\n"
			       "Content-Length: %" G_GSIZE_FORMAT "\r\n\r\n",
			       path, strlen(body));
	if (!g_output_stream_write_all(out, head, strlen(head), NULL, NULL, &error) ||
	    !g_output_stream_write_all(out, body, strlen(body), NULL, NULL, &error))
		g_error("simulator broker %s%s: %s", base, path, error->message);
	while ((n = g_input_stream_read(g_io_stream_get_input_stream(G_IO_STREAM(conn)), buf,
					sizeof(buf), NULL, &error)) > 0)
		g_byte_array_append(answer, (const guint8 *)buf, (guint)n);
	if (n < 0)
		g_error("simulator broker %s%s: %s", base, path, error->message);
	g_byte_array_append(answer, (const guint8 *)"", 1);
	split = strstr((const gchar *)answer->data, "\r\n\r\n");
	if (split == NULL)
		g_error("simulator broker %s%s: no HTTP answer", base, path);
	doc = json_loads(split + 4, 0, &jerr);
	if (doc == NULL || !g_str_has_prefix((const gchar *)answer->data, "HTTP/1.0 200"))
		g_error("simulator broker %s%s: %s", base, path, split + 4);
	return doc;
}

/* the broker backend: the first stdout line, NULL when the simulator ended first */
static gchar *
sfl_test_sim_broker_spawn(SflTestSim *sim, const gchar *script_name, const gchar *const *args)
{
	g_autoptr(json_t) request = json_object();
	g_autoptr(json_t) answer = NULL;
	json_t *argv = json_array();
	const gchar *prefix = g_getenv("WINEPREFIX");

	json_object_set_new(request, "script", json_string(script_name));
	for (guint i = 0; args != NULL && args[i] != NULL; i++)
		json_array_append_new(argv, json_string(args[i]));
	json_object_set_new(request, "args", argv);
	/* the broker turns our paths into its own through this prefix's drive links */
	if (prefix != NULL)
		json_object_set_new(request, "wineprefix", json_string(prefix));
	answer = sfl_test_broker_call("/spawn", request);
	sim->broker_id = json_integer_value(json_object_get(answer, "id"));
	g_assert_cmpint(sim->broker_id, >, 0);
	return g_strdup(json_string_value(json_object_get(answer, "line")));
}

/* the native backend: /usr/bin/python3 SCRIPT ARGS as a child, its first stdout line */
static gchar *
sfl_test_sim_native_spawn(SflTestSim *sim, const gchar *script_name, const gchar *const *args)
{
	g_autofree gchar *script = g_test_build_filename(G_TEST_DIST, "sim", script_name, NULL);
	g_autoptr(GSubprocessLauncher) launcher =
		g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GDataInputStream) out = NULL;
	g_autoptr(GError) error = NULL;
	gchar *line;

	g_ptr_array_add(argv, (gpointer) "/usr/bin/python3");
	g_ptr_array_add(argv, script);
	for (guint i = 0; args != NULL && args[i] != NULL; i++)
		g_ptr_array_add(argv, (gpointer)args[i]);
	g_ptr_array_add(argv, NULL);
	sfl_test_proc_launcher_tie(launcher);
	sim->proc =
		g_subprocess_launcher_spawnv(launcher, (const gchar *const *)argv->pdata, &error);
	g_assert_no_error(error);
	out = g_data_input_stream_new(g_subprocess_get_stdout_pipe(sim->proc));
	/* blocks until the simulator listens or exits */
	line = g_data_input_stream_read_line(out, NULL, NULL, &error);
	g_assert_no_error(error);
	return line;
}

/**
 * sfl_test_sim_signal:
 * @sim: a simulator
 * @sig: what to send; a simulator that ended already is left alone
 */
void
sfl_test_sim_signal(SflTestSim *sim, SflTestSignal sig)
{
	static const gchar *const names[] = {
		[SFL_TEST_SIGNAL_STOP] = "STOP",
		[SFL_TEST_SIGNAL_CONT] = "CONT",
		[SFL_TEST_SIGNAL_TERM] = "TERM",
		[SFL_TEST_SIGNAL_KILL] = "KILL",
	};

	g_return_if_fail(SFL_TEST_IS_SIM(sim));
	g_return_if_fail((guint)sig < G_N_ELEMENTS(names));
	if (sim->ended)
		return;
	if (sim->proc != NULL) {
		if (!sfl_test_proc_signal(sim->proc, sig))
			g_error("no SIG%s for a child on this platform", names[sig]);
	} else {
		g_autoptr(json_t) request =
			json_pack("{sIss}", "id", (json_int_t)sim->broker_id, "signal", names[sig]);
		g_autoptr(json_t) answer = sfl_test_broker_call("/signal", request);

		g_assert_nonnull(answer);
	}
}

/**
 * sfl_test_sim_wait:
 * @sim: a simulator
 *
 * Returns: its exit status, or minus the signal that ended it
 */
gint
sfl_test_sim_wait(SflTestSim *sim)
{
	g_return_val_if_fail(SFL_TEST_IS_SIM(sim), -1);
	if (sim->ended)
		return sim->status;
	if (sim->proc != NULL) {
		g_subprocess_wait(sim->proc, NULL, NULL);
		sim->status = g_subprocess_get_if_exited(sim->proc)
				      ? g_subprocess_get_exit_status(sim->proc)
				      : -g_subprocess_get_term_sig(sim->proc);
	} else {
		g_autoptr(json_t) request = json_pack("{sIsi}", "id", (json_int_t)sim->broker_id,
						      "timeout", SFL_TEST_SIM_DEADLINE_SEC);
		g_autoptr(json_t) answer = sfl_test_broker_call("/wait", request);

		if (!json_is_true(json_object_get(answer, "exited")))
			g_error("simulator %" G_GINT64_FORMAT " still runs after %d s",
				sim->broker_id, SFL_TEST_SIM_DEADLINE_SEC);
		sim->status = (gint)json_integer_value(json_object_get(answer, "status"));
	}
	sim->ended = TRUE;
	return sim->status;
}

/**
 * sfl_test_sim_kill:
 * @sim: a simulator, frozen or not; one that ended already is fine
 */
void
sfl_test_sim_kill(SflTestSim *sim)
{
	g_return_if_fail(SFL_TEST_IS_SIM(sim));
	if (sim->ended)
		return;
	if (sim->proc != NULL)
		g_subprocess_force_exit(sim->proc);
	else
		sfl_test_sim_signal(sim, SFL_TEST_SIGNAL_KILL);
	sfl_test_sim_wait(sim);
}

/**
 * sfl_test_sim_stop:
 * @sim: (inout) (nullable): a simulator, %NULL on return
 */
void
sfl_test_sim_stop(SflTestSim **sim)
{
	if (*sim == NULL)
		return;
	sfl_test_sim_kill(*sim);
	g_clear_object(sim);
}

/* starts tests/sim/@script and waits for its "PORT <n>" line; NULL after g_test_skip() */
static gchar *
sfl_test_sim_start(const gchar *script_name, const gchar *what, const gchar *needs,
		   const gchar *const *args, SflTestSim **out_proc)
{
	SflTestSim *sim = g_object_new(SFL_TEST_TYPE_SIM, NULL);
	g_autofree gchar *line = NULL;

	*out_proc = sim;
	if (g_getenv(SFL_TEST_SIM_BROKER_ENV) != NULL)
		line = sfl_test_sim_broker_spawn(sim, script_name, args);
	else
		line = sfl_test_sim_native_spawn(sim, script_name, args);
	if (line == NULL || !g_str_has_prefix(line, "PORT ")) {
		if (sfl_test_sim_wait(sim) == 77) {
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
sfl_test_loki_sim_start(const gchar *const *args, SflTestSim **out_proc)
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
sfl_test_sf_sim_start(const gchar *const *args, SflTestSim **out_proc)
{
	return sfl_test_sim_start("salesforce_sim.py", "Salesforce",
				  "python3-jwt and python3-cryptography", args, out_proc);
}

/**
 * sfl_test_daemon_spawn:
 * @config: the configuration file
 * @env: (nullable): NAME, VALUE pairs, NULL-terminated, set on top of the defaults
 *
 * Starts `$SF2LOKI_BIN run --config @config` with stderr piped, LC_ALL=C.UTF-8, an ephemeral
 * health port (SF2LOKI_SERVICE__HEALTH_ADDR=127.0.0.1:0) and the sanitizer options passed on.
 * The daemon dies with the test process.
 *
 * Returns: (transfer full): the process
 */
GSubprocess *
sfl_test_daemon_spawn(const gchar *config, const gchar *const *env)
{
	const gchar *args[] = { "run", "--config", config, NULL };

	return sfl_test_bin_spawn(G_SUBPROCESS_FLAGS_STDERR_PIPE, args, env);
}

/**
 * sfl_test_bin_spawn:
 * @flags: the pipes wanted
 * @args: the arguments after the program name
 * @env: (nullable): NAME, VALUE pairs, NULL-terminated, set on top of the defaults
 *
 * Starts `$SF2LOKI_BIN @args` with the environment sfl_test_daemon_spawn() documents and
 * nothing else of the test's: the daemon never picks up the developer's SF2LOKI_* settings.
 *
 * Returns: (transfer full): the process
 */
GSubprocess *
sfl_test_bin_spawn(GSubprocessFlags flags, const gchar *const *args, const gchar *const *env)
{
	g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(flags);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) error = NULL;
	const gchar *passed[] = { "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", NULL };
	g_auto(GStrv) envp = g_new0(gchar *, 1);
	GSubprocess *proc = NULL;

	envp = g_environ_setenv(envp, "LC_ALL", "C.UTF-8", TRUE);
	envp = g_environ_setenv(envp, "SF2LOKI_SERVICE__HEALTH_ADDR", "127.0.0.1:0", TRUE);
	for (guint i = 0; passed[i] != NULL; i++) {
		if (g_getenv(passed[i]) != NULL)
			envp = g_environ_setenv(envp, passed[i], g_getenv(passed[i]), TRUE);
	}
	for (const gchar *const *name = sfl_test_proc_needed_env(); *name != NULL; name++) {
		if (g_getenv(*name) != NULL)
			envp = g_environ_setenv(envp, *name, g_getenv(*name), TRUE);
	}
	for (guint i = 0; env != NULL && env[i] != NULL && env[i + 1] != NULL; i += 2)
		envp = g_environ_setenv(envp, env[i], env[i + 1], TRUE);
	g_subprocess_launcher_set_environ(l, envp);
	sfl_test_proc_launcher_tie(l);
	g_ptr_array_add(argv, (gpointer)g_getenv("SF2LOKI_BIN"));
	for (guint i = 0; args[i] != NULL; i++)
		g_ptr_array_add(argv, (gpointer)args[i]);
	g_ptr_array_add(argv, NULL);
	/*
	 * Under wine the spawn helper now and then fails to start (EINVAL from the C runtime, seen
	 * in CI's test-doctor with the daemon of the same test running): nothing ran, so trying
	 * again starts the one process the test asked for.
	 */
	for (guint attempt = 1; proc == NULL; attempt++) {
		g_clear_error(&error);
		proc = g_subprocess_launcher_spawnv(l, (const gchar *const *)argv->pdata, &error);
		if (proc != NULL || attempt == 3 ||
		    !g_error_matches(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED))
			break;
		g_test_message("spawning %s failed (%s); trying again",
			       (const gchar *)argv->pdata[0], error->message);
	}
	g_assert_no_error(error);
	sfl_test_proc_adopt(proc);
	return proc;
}

static gboolean
sfl_test_poll_tick_cb(gpointer user_data)
{
	return G_SOURCE_REMOVE;
}

/**
 * sfl_test_poll_until:
 * @cond: checked now and then again after every wake-up, at least every 100 ms
 * @data: for @cond
 * @deadline_sec: how long it may take before the test fails
 * @what: what is awaited, for the failure message
 *
 * For conditions nothing signals (a simulator's state, a daemon's answers): the tick only
 * bounds how late a change is noticed, the deadline is what fails the test.
 */
void
sfl_test_poll_until(SflTestCondFunc cond, gpointer data, guint deadline_sec, const gchar *what)
{
	gint64 deadline = g_get_monotonic_time() + (gint64)deadline_sec * G_USEC_PER_SEC;

	while (!cond(data)) {
		g_autoptr(GSource) tick = NULL;
		if (g_get_monotonic_time() > deadline)
			g_error("timed out waiting for %s", what);
		tick = g_timeout_source_new(100);
		g_source_set_callback(tick, sfl_test_poll_tick_cb, NULL, NULL);
		g_source_attach(tick, NULL);
		g_main_context_iteration(NULL, TRUE);
		g_source_destroy(tick);
	}
}

/**
 * sfl_test_otlp_sim_start:
 * @args: (nullable): extra arguments for tests/sim/otlp_collector.py
 * @out_proc: (out): the collector process (also set when it was skipped)
 *
 * Returns: (transfer full) (nullable): the base URL, or %NULL after g_test_skip()
 */
gchar *
sfl_test_otlp_sim_start(const gchar *const *args, SflTestSim **out_proc)
{
	return sfl_test_sim_start("otlp_collector.py", "OTLP collector",
				  "protoc and python3-protobuf", args, out_proc);
}

/**
 * sfl_test_proxy_sim_start:
 * @out_proc: (out): the proxy process
 *
 * Returns: (transfer full): the proxy's URL, for HTTPS_PROXY (it needs only the standard
 *   library, so it never skips)
 */
gchar *
sfl_test_proxy_sim_start(SflTestSim **out_proc)
{
	return sfl_test_sim_start("connect_proxy.py", "CONNECT proxy", "nothing", NULL, out_proc);
}

/**
 * sfl_test_s3_sim_start:
 * @args: (nullable): arguments for tests/sim/s3_sim.py
 * @out_proc: (out): the simulator process (also set when it was skipped)
 *
 * Returns: (transfer full) (nullable): the base URL, both the path-style S3 endpoint and the
 *   control URL, or %NULL after g_test_skip()
 */
gchar *
sfl_test_s3_sim_start(const gchar *const *args, SflTestSim **out_proc)
{
	return sfl_test_sim_start("s3_sim.py", "S3", "python3-botocore", args, out_proc);
}

/**
 * sfl_test_gcs_sim_start:
 * @args: (nullable): arguments for tests/sim/gcs_sim.py
 * @out_proc: (out): the simulator process (also set when it was skipped)
 *
 * Returns: (transfer full) (nullable): the base URL (API, token endpoint, metadata server and
 *   control), or %NULL after g_test_skip()
 */
gchar *
sfl_test_gcs_sim_start(const gchar *const *args, SflTestSim **out_proc)
{
	return sfl_test_sim_start("gcs_sim.py", "Cloud Storage", "python3-jwt", args, out_proc);
}

/**
 * sfl_test_gcs_sim_start_with_account:
 * @dir: where the account's keys go
 * @out_proc: (out): the simulator process (also set when it was skipped)
 * @out_sa_path: (out): the service-account key file, when started
 *
 * Returns: (transfer full) (nullable): the simulator's base URL, or %NULL after g_test_skip()
 */
gchar *
sfl_test_gcs_sim_start_with_account(const gchar *dir, SflTestSim **out_proc, gchar **out_sa_path)
{
	g_autofree gchar *sa_pub = g_build_filename(dir, "sa-pub.pem", NULL);
	g_autofree gchar *sa_priv = g_build_filename(dir, "sa-key.pem", NULL);
	g_autofree gchar *pem = NULL;
	g_autofree gchar *sa_text = NULL;
	g_autofree gchar *token_uri = NULL;
	g_autoptr(json_t) sa = json_object();
	const gchar *args[] = { "--public-key", sa_pub, NULL };
	gchar *base = NULL;

	sfl_test_write_rsa_key(sa_priv, sa_pub);
	base = sfl_test_gcs_sim_start(args, out_proc);
	if (base == NULL)
		return NULL;
	g_assert_true(g_file_get_contents(sa_priv, &pem, NULL, NULL));
	json_object_set_new(sa, "type", json_string("service_account"));
	json_object_set_new(sa, "project_id", json_string("sim-project"));
	json_object_set_new(sa, "private_key_id", json_string("sim-key-1"));
	json_object_set_new(sa, "private_key", json_string(pem));
	json_object_set_new(sa, "client_email",
			    json_string("sf2loki@sim-project.iam.gserviceaccount.com"));
	token_uri = g_strconcat(base, "/token", NULL);
	json_object_set_new(sa, "token_uri", json_string(token_uri));
	sa_text = json_dumps(sa, JSON_INDENT(2));
	*out_sa_path = g_build_filename(dir, "service-account.json", NULL);
	g_assert_true(g_file_set_contents(*out_sa_path, sa_text, -1, NULL));
	return base;
}

/**
 * sfl_test_k8s_sim_start:
 * @args: (nullable): arguments for tests/sim/k8s_sim.py (--dir DIR is required)
 * @out_proc: (out): the simulator process (also set when it was skipped)
 *
 * Returns: (transfer full) (nullable): the control base URL (plain HTTP), or %NULL after
 *   g_test_skip(); the HTTPS API's CA, token and kubeconfig are in the --dir directory
 */
gchar *
sfl_test_k8s_sim_start(const gchar *const *args, SflTestSim **out_proc)
{
	return sfl_test_sim_start("k8s_sim.py", "Kubernetes API", "python3-cryptography", args,
				  out_proc);
}

/**
 * sfl_test_pubsub_sim_start:
 * @args: (nullable): arguments for tests/sim/pubsub_sim.py
 * @out_proc: (out): the simulator process (also set when it was skipped)
 *
 * Returns: (transfer full) (nullable): the control base URL, or %NULL after g_test_skip()
 */
gchar *
sfl_test_pubsub_sim_start(const gchar *const *args, SflTestSim **out_proc)
{
	return sfl_test_sim_start("pubsub_sim.py", "Pub/Sub",
				  "protoc, python3-grpcio, python3-protobuf and python3-avro", args,
				  out_proc);
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

/**
 * sfl_test_write_self_signed_ca:
 * @cert_path: where the certificate goes (PEM)
 * @cn: its subject and issuer common name
 *
 * In process rather than through the openssl command, which a Windows test cannot run.
 */
void
sfl_test_write_self_signed_ca(const gchar *cert_path, const gchar *cn)
{
	EVP_PKEY *key = EVP_RSA_gen(2048);
	X509 *cert = X509_new();
	X509_NAME *name = X509_get_subject_name(cert);
	BASIC_CONSTRAINTS *bc = BASIC_CONSTRAINTS_new();
	FILE *f = NULL;

	g_assert_nonnull(key);
	g_assert_cmpint(X509_set_version(cert, 2), ==, 1);
	g_assert_cmpint(ASN1_INTEGER_set(X509_get_serialNumber(cert), g_random_int() >> 1), ==, 1);
	g_assert_nonnull(X509_gmtime_adj(X509_getm_notBefore(cert), -3600));
	g_assert_nonnull(X509_gmtime_adj(X509_getm_notAfter(cert), 2 * 24 * 3600));
	g_assert_cmpint(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
						   (const unsigned char *)cn, -1, -1, 0),
			==, 1);
	g_assert_cmpint(X509_set_issuer_name(cert, name), ==, 1);
	g_assert_cmpint(X509_set_pubkey(cert, key), ==, 1);
	bc->ca = 1;
	g_assert_cmpint(X509_add1_ext_i2d(cert, NID_basic_constraints, bc, 1, 0), ==, 1);
	g_assert_cmpint(X509_sign(cert, key, EVP_sha256()), >, 0);
	f = fopen(cert_path, "w");
	g_assert_nonnull(f);
	g_assert_cmpint(PEM_write_X509(f, cert), ==, 1);
	fclose(f);
	BASIC_CONSTRAINTS_free(bc);
	X509_free(cert);
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

static void sfl_test_daemon_read_next(SflTestDaemon *daemon);

static void
sfl_test_daemon_line_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflTestDaemon *daemon = user_data;
	gchar *line = g_data_input_stream_read_line_finish_utf8(G_DATA_INPUT_STREAM(source), result,
								NULL, NULL);

	if (line == NULL) {
		daemon->eof = TRUE;
		return;
	}
	g_test_message("[sf2loki %s] %s", daemon->pid, line);
	g_ptr_array_add(daemon->lines, line);
	sfl_test_daemon_read_next(daemon);
}

static void
sfl_test_daemon_read_next(SflTestDaemon *daemon)
{
	g_data_input_stream_read_line_async(daemon->err, G_PRIORITY_DEFAULT, NULL,
					    sfl_test_daemon_line_cb, daemon);
}

/**
 * sfl_test_daemon_start:
 * @config: the configuration file
 * @env: (nullable): NAME, VALUE pairs for sfl_test_daemon_spawn()
 *
 * Returns: (transfer full): the daemon; its lines arrive while the main context runs
 */
SflTestDaemon *
sfl_test_daemon_start(const gchar *config, const gchar *const *env)
{
	SflTestDaemon *daemon = g_new0(SflTestDaemon, 1);

	daemon->proc = sfl_test_daemon_spawn(config, env);
	daemon->pid = g_strdup(g_subprocess_get_identifier(daemon->proc));
	daemon->lines = g_ptr_array_new_with_free_func(g_free);
	daemon->err = g_data_input_stream_new(g_subprocess_get_stderr_pipe(daemon->proc));
	sfl_test_daemon_read_next(daemon);
	return daemon;
}

/**
 * sfl_test_daemon_logged:
 * @daemon: the daemon
 * @needle: a substring
 *
 * Returns: whether a line read so far contains @needle
 */
gboolean
sfl_test_daemon_logged(const SflTestDaemon *daemon, const gchar *needle)
{
	for (guint i = 0; i < daemon->lines->len; i++) {
		if (strstr(g_ptr_array_index(daemon->lines, i), needle) != NULL)
			return TRUE;
	}
	return FALSE;
}

typedef struct {
	SflTestDaemon *daemon;
	const gchar *needle;
} SflTestDaemonNeedle;

static gboolean
sfl_test_daemon_needle_cb(gpointer data)
{
	SflTestDaemonNeedle *want = data;

	return sfl_test_daemon_logged(want->daemon, want->needle);
}

/**
 * sfl_test_daemon_wait_logged:
 * @daemon: the daemon
 * @needle: a substring
 * @deadline_sec: how long it may take before the test fails
 */
void
sfl_test_daemon_wait_logged(SflTestDaemon *daemon, const gchar *needle, guint deadline_sec)
{
	SflTestDaemonNeedle want = { daemon, needle };
	g_autofree gchar *what = g_strdup_printf("sf2loki to log '%s'", needle);

	sfl_test_poll_until(sfl_test_daemon_needle_cb, &want, deadline_sec, what);
}

/**
 * sfl_test_daemon_health_port:
 * @daemon: the daemon
 *
 * Returns: the port its health server logged; the test fails when no such line was read yet
 */
guint
sfl_test_daemon_health_port(const SflTestDaemon *daemon)
{
	for (guint i = 0; i < daemon->lines->len; i++) {
		const gchar *at =
			strstr(g_ptr_array_index(daemon->lines, i), "health server listening on ");
		const gchar *port = at != NULL ? strstr(at, "(port ") : NULL;

		if (at != NULL && port == NULL)
			g_error("a health server line without its port: %s", at);
		if (port != NULL)
			return (guint)g_ascii_strtoull(port + strlen("(port "), NULL, 10);
	}
	g_error("no health server line from sf2loki %s", daemon->pid);
	return 0;
}

/**
 * sfl_test_daemon_wait_exit:
 * @daemon: the daemon
 * @deadline_sec: how long it may take before the test fails
 *
 * Returns: the exit status, or -1 when a signal ended the process
 */
gint
sfl_test_daemon_wait_exit(SflTestDaemon *daemon, guint deadline_sec)
{
	/* stderr closes when the process ends: an event to wait on, unlike the exit itself */
	sfl_test_wait_for(&daemon->eof, deadline_sec);
	g_assert_true(g_subprocess_wait(daemon->proc, NULL, NULL));
	return g_subprocess_get_if_exited(daemon->proc) ? g_subprocess_get_exit_status(daemon->proc)
							: -1;
}

/**
 * sfl_test_daemon_stop:
 * @daemon: the daemon
 * @deadline_sec: how long the orderly stop may take before the test fails
 *
 * Returns: the exit status, or -1 when a signal ended the process
 */
gint
sfl_test_daemon_stop(SflTestDaemon *daemon, guint deadline_sec)
{
	if (!sfl_test_proc_signal(daemon->proc, SFL_TEST_SIGNAL_TERM))
		g_error("no orderly stop of a child here: check sfl_test_skip_without_signals()");
	return sfl_test_daemon_wait_exit(daemon, deadline_sec);
}

/**
 * sfl_test_daemon_finish:
 * @daemon: the daemon
 * @deadline_sec: how long the end may take before the test fails
 */
void
sfl_test_daemon_finish(SflTestDaemon *daemon, guint deadline_sec)
{
	if (sfl_test_proc_has_signals()) {
		g_assert_cmpint(sfl_test_daemon_stop(daemon, deadline_sec), ==, 0);
		return;
	}
	g_test_message("no orderly stop of a child on this platform: sf2loki %s is killed",
		       daemon->pid);
	g_subprocess_force_exit(daemon->proc);
	sfl_test_daemon_wait_exit(daemon, deadline_sec);
}

/**
 * sfl_test_daemon_free:
 * @daemon: (nullable): the daemon
 */
void
sfl_test_daemon_free(SflTestDaemon *daemon)
{
	if (daemon == NULL)
		return;
	if (g_subprocess_get_identifier(daemon->proc) != NULL) {
		g_subprocess_force_exit(daemon->proc);
		g_subprocess_wait(daemon->proc, NULL, NULL);
	}
	/* the pending read holds @daemon: it must have seen the end before the memory goes */
	sfl_test_wait_for(&daemon->eof, SFL_TEST_SIM_DEADLINE_SEC);
	g_clear_object(&daemon->err);
	g_clear_object(&daemon->proc);
	g_clear_pointer(&daemon->lines, g_ptr_array_unref);
	g_free(daemon->pid);
	g_free(daemon);
}

/**
 * sfl_test_sims_start:
 * @sims: a zeroed fixture
 * @dir_template: for g_dir_make_tmp(), e.g. "sfl-doctor-XXXXXX"
 * @dataset: the Salesforce simulator's dataset (JSON)
 * @loki_args: (nullable): extra arguments for the Loki simulator
 *
 * Returns: %FALSE after g_test_skip() when a simulator lacks a dependency
 */
gboolean
sfl_test_sims_start(SflTestSims *sims, const gchar *dir_template, const gchar *dataset,
		    const gchar *const *loki_args)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dataset_path = NULL;

	sims->dir = g_dir_make_tmp(dir_template, &error);
	g_assert_no_error(error);
	sims->key_path = g_build_filename(sims->dir, "key.pem", NULL);
	sims->pub_path = g_build_filename(sims->dir, "pub.pem", NULL);
	sims->wrong_key_path = g_build_filename(sims->dir, "wrong.pem", NULL);
	sfl_test_write_rsa_key(sims->key_path, sims->pub_path);
	sfl_test_write_rsa_key(sims->wrong_key_path, NULL);
	dataset_path = g_build_filename(sims->dir, "dataset.json", NULL);
	g_assert_true(g_file_set_contents(dataset_path, dataset, -1, &error));
	{
		const gchar *args[] = { "--public-key", sims->pub_path, "--dataset", dataset_path,
					NULL };
		sims->sf_base = sfl_test_sf_sim_start(args, &sims->sf_proc);
	}
	if (sims->sf_base == NULL)
		return FALSE;
	sims->loki_base = sfl_test_loki_sim_start(loki_args, &sims->loki_proc);
	if (sims->loki_base == NULL)
		return FALSE;
	sims->loop = sfl_curl_loop_new();
	return TRUE;
}

/**
 * sfl_test_proc_stop:
 * @proc: (inout) (nullable): a process started by the test, %NULL on return
 */
void
sfl_test_proc_stop(GSubprocess **proc)
{
	if (*proc == NULL)
		return;
	g_subprocess_force_exit(*proc);
	g_subprocess_wait(*proc, NULL, NULL);
	g_clear_object(proc);
}

/**
 * sfl_test_rmtree:
 * @dir: a directory
 *
 * A test may have taken the permissions off a file to make it unreadable: each directory gets
 * its owner's rights back before it is read, and the test fails when anything stays.
 */
void
sfl_test_rmtree(const gchar *dir)
{
	g_autoptr(GDir) d = NULL;
	const gchar *name;

	g_chmod(dir, 0700);
	d = g_dir_open(dir, 0, NULL);
	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);

		if (g_file_test(path, G_FILE_TEST_IS_DIR) &&
		    !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
			sfl_test_rmtree(path);
		} else if (g_remove(path) != 0) {
			g_chmod(path, 0600);
			if (g_remove(path) != 0)
				g_error("cannot remove %s: %s", path, g_strerror(errno));
		}
	}
	if (g_rmdir(dir) != 0 && errno != ENOENT)
		g_error("cannot remove %s: %s", dir, g_strerror(errno));
}

/**
 * sfl_test_skip_without_signals:
 *
 * Returns: %TRUE after g_test_skip() where a child cannot be stopped in order, frozen or
 *   thawed (Windows: GSubprocess sends no console control event and has no SIGSTOP)
 */
gboolean
sfl_test_skip_without_signals(void)
{
	if (sfl_test_proc_has_signals())
		return FALSE;
	g_test_skip("needs an orderly stop (SIGTERM) or a freeze (SIGSTOP) of a child process, "
		    "which GSubprocess cannot send on Windows");
	return TRUE;
}

/**
 * sfl_test_sims_clear:
 * @sims: the fixture, zeroed again on return
 */
void
sfl_test_sims_clear(SflTestSims *sims)
{
	sfl_test_sim_stop(&sims->sf_proc);
	sfl_test_sim_stop(&sims->loki_proc);
	g_clear_object(&sims->loop);
	/* the loop's last callbacks run before the directory they may name goes */
	while (g_main_context_iteration(NULL, FALSE))
		;
	if (sims->dir != NULL)
		sfl_test_rmtree(sims->dir);
	g_free(sims->dir);
	g_free(sims->key_path);
	g_free(sims->pub_path);
	g_free(sims->wrong_key_path);
	g_free(sims->sf_base);
	g_free(sims->loki_base);
	memset(sims, 0, sizeof(*sims));
}

/**
 * sfl_test_sims_config:
 * @sims: started simulators
 * @key_path: (nullable): the private key to sign with; %NULL: the trusted one
 * @loki_base: (nullable): the Loki to push to; %NULL: the simulator
 *
 * Returns: (transfer full): the `salesforce:` section (JWT bearer) and `sink:` / `loki:` /
 *   `url:`, to be continued with more `sink.loki` keys (four spaces) or other sections
 */
json_int_t
sfl_test_sims_loki_stat(const SflTestSims *sims, const gchar *field, const gchar *stat)
{
	g_autofree gchar *path = g_strdup_printf("/control/summary?field=%s", field);
	json_t *summary = sfl_test_sim_control(sims->loop, sims->loki_base, "GET", path, NULL);
	json_int_t value = json_integer_value(json_object_get(summary, stat));

	json_decref(summary);
	return value;
}

gchar *
sfl_test_sims_config(const SflTestSims *sims, const gchar *key_path, const gchar *loki_base)
{
	return g_strdup_printf("salesforce:\n"
			       "  login_url: %s\n"
			       "  client_id: sim-client-id\n"
			       "  username: sim@example.com\n"
			       "  private_key_file: %s\n"
			       "sink:\n"
			       "  loki:\n"
			       "    url: %s/loki/api/v1/push\n",
			       sims->sf_base, key_path != NULL ? key_path : sims->key_path,
			       loki_base != NULL ? loki_base : sims->loki_base);
}

/**
 * sfl_test_sf_datetime:
 * @usec: a Unix time in microseconds (the fraction is dropped)
 *
 * Returns: (transfer full): the time as Salesforce's REST API writes a datetime
 *   ("2026-11-30T08:00:00.000+0000")
 */
gchar *
sfl_test_sf_datetime(gint64 usec)
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(usec / G_USEC_PER_SEC);

	return g_date_time_format(dt, "%Y-%m-%dT%H:%M:%S.000+0000");
}

static void sfl_test_replica_read_next(SflTestReplica *r);

/* counts the leadership changes a JSON log line reports */
static void
sfl_test_replica_parse(SflTestReplica *r, const gchar *line)
{
	json_error_t jerr;
	g_autoptr(json_t) obj = json_loads(line, 0, &jerr);
	const gchar *msg;

	if (obj == NULL)
		return;
	msg = json_string_value(json_object_get(obj, "event"));
	if (g_strcmp0(msg, "leadership acquired") == 0) {
		r->acquired++;
		r->epoch = g_ascii_strtoull(json_string_value(json_object_get(obj, "epoch")), NULL,
					    10);
	} else if (g_strcmp0(msg, "leadership lost; standing by") == 0) {
		r->lost++;
	}
}

static void
sfl_test_replica_line_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflTestReplica *r = user_data;
	gchar *line = g_data_input_stream_read_line_finish_utf8(G_DATA_INPUT_STREAM(source), result,
								NULL, NULL);

	if (line == NULL) {
		r->eof = TRUE;
		return;
	}
	g_test_message("[%s] %s", r->name, line);
	sfl_test_replica_parse(r, line);
	g_ptr_array_add(r->lines, line);
	sfl_test_replica_read_next(r);
}

static void
sfl_test_replica_read_next(SflTestReplica *r)
{
	g_data_input_stream_read_line_async(r->err, G_PRIORITY_DEFAULT, NULL,
					    sfl_test_replica_line_cb, r);
}

GPtrArray *
sfl_test_replicas_new(void)
{
	return g_ptr_array_new_with_free_func((GDestroyNotify)sfl_test_replica_free);
}

/**
 * sfl_test_replica_start:
 * @replicas: from sfl_test_replicas_new(); receives the replica
 * @name: for the echoed lines
 * @config: the configuration file
 * @env: (nullable): NAME, VALUE pairs for sfl_test_daemon_spawn()
 *
 * Returns: (transfer none): the replica, owned by @replicas
 */
SflTestReplica *
sfl_test_replica_start(GPtrArray *replicas, const gchar *name, const gchar *config,
		       const gchar *const *env)
{
	SflTestReplica *r = g_new0(SflTestReplica, 1);

	r->name = g_strdup(name);
	r->lines = g_ptr_array_new_with_free_func(g_free);
	r->proc = sfl_test_daemon_spawn(config, env);
	r->err = g_data_input_stream_new(g_subprocess_get_stderr_pipe(r->proc));
	sfl_test_replica_read_next(r);
	g_ptr_array_add(replicas, r);
	return r;
}

gboolean
sfl_test_replica_logged(const SflTestReplica *r, const gchar *needle)
{
	for (guint i = 0; i < r->lines->len; i++) {
		if (strstr(g_ptr_array_index(r->lines, i), needle) != NULL)
			return TRUE;
	}
	return FALSE;
}

gboolean
sfl_test_replica_leads(const SflTestReplica *r)
{
	return r->acquired > r->lost;
}

gboolean
sfl_test_replica_has_lost(const SflTestReplica *r)
{
	return r->lost > 0 && r->lost >= r->acquired;
}

SflTestReplica *
sfl_test_replicas_leader(GPtrArray *replicas)
{
	SflTestReplica *leader = NULL;

	for (guint i = 0; i < replicas->len; i++) {
		SflTestReplica *r = g_ptr_array_index(replicas, i);

		if (sfl_test_replica_leads(r)) {
			g_assert_null(leader); /* never two at once */
			leader = r;
		}
	}
	return leader;
}

guint
sfl_test_replica_health_port(const SflTestReplica *r)
{
	for (guint i = 0; i < r->lines->len; i++) {
		const gchar *at =
			strstr(g_ptr_array_index(r->lines, i), "health server listening on ");
		const gchar *port = at != NULL ? strstr(at, "(port ") : NULL;

		if (port != NULL)
			return (guint)g_ascii_strtoull(port + strlen("(port "), NULL, 10);
	}
	return 0;
}

void
sfl_test_replica_kill(SflTestReplica *r)
{
	if (r->proc != NULL && g_subprocess_get_identifier(r->proc) != NULL) {
		sfl_test_proc_signal(r->proc, SFL_TEST_SIGNAL_CONT);
		g_subprocess_force_exit(r->proc);
		g_subprocess_wait(r->proc, NULL, NULL);
	}
}

void
sfl_test_replica_free(SflTestReplica *r)
{
	sfl_test_replica_kill(r);
	while (!r->eof)
		g_main_context_iteration(NULL, TRUE);
	g_clear_object(&r->err);
	g_clear_object(&r->proc);
	g_ptr_array_unref(r->lines);
	g_free(r->name);
	g_free(r);
}

gboolean
sfl_test_replica_leads_cond(gpointer fixture, gpointer replica)
{
	return sfl_test_replica_leads(replica);
}

gboolean
sfl_test_replica_lost_cond(gpointer fixture, gpointer replica)
{
	return sfl_test_replica_has_lost(replica);
}

gboolean
sfl_test_replicas_lead_cond(gpointer fixture, gpointer replicas)
{
	GPtrArray *all = replicas;

	/* no never-two check here: the lines of two processes arrive in no set order */
	for (guint i = 0; i < all->len; i++) {
		if (sfl_test_replica_leads(g_ptr_array_index(all, i)))
			return TRUE;
	}
	return FALSE;
}

static gboolean
sfl_test_wait_tick_cb(gpointer data)
{
	return G_SOURCE_REMOVE;
}

/**
 * sfl_test_wait_fixture:
 * @cond: checked now and after every wake-up
 * @fixture: its first argument
 * @data: its second argument
 * @timeout_us: how long it may take
 *
 * Lines arrive from pipes, but files and simulators change without an event: the tick only
 * bounds how late a change is noticed.
 *
 * Returns: whether @cond held before the timeout
 */
gboolean
sfl_test_wait_fixture(SflTestFixtureCond cond, gpointer fixture, gpointer data, gint64 timeout_us)
{
	gint64 deadline = g_get_monotonic_time() + timeout_us;

	while (!cond(fixture, data)) {
		g_autoptr(GSource) tick = NULL;

		if (g_get_monotonic_time() > deadline)
			return FALSE;
		tick = g_timeout_source_new(50);
		g_source_set_callback(tick, sfl_test_wait_tick_cb, NULL, NULL);
		g_source_attach(tick, NULL);
		g_main_context_iteration(NULL, TRUE);
		g_source_destroy(tick);
	}
	return TRUE;
}

void
sfl_test_fixture_wait(SflTestFixtureCond cond, gpointer fixture, gpointer data, gint64 timeout_us,
		      const gchar *what)
{
	if (!sfl_test_wait_fixture(cond, fixture, data, timeout_us))
		g_error("timed out waiting for %s", what);
}

G_DEFINE_TYPE(SflTestCapture, sfl_test_capture, SFL_TYPE_SINK)

static void
sfl_test_row_free(gpointer data)
{
	SflTestRow *row = data;

	g_free(row->line);
	g_free(row->labels);
	g_free(row->metadata);
	g_free(row);
}

static void
sfl_test_capture_answer(SflTestCapture *self, GTask *task)
{
	SflBatch *batch = g_task_get_task_data(task);
	SflSinkResult *result = g_new0(SflSinkResult, 1);

	for (guint i = 0; i < sfl_batch_get_length(batch); i++) {
		SflEntry *e = sfl_batch_get(batch, i);
		SflTestRow *row = g_new0(SflTestRow, 1);
		GString *md = g_string_new(NULL);

		row->line = g_strndup(e->line, e->line_len);
		row->labels = g_strdup(sfl_labels_get_string(e->labels, NULL));
		for (guint k = 0; k < e->n_metadata; k++)
			g_string_append_printf(md, "%s%s=%s", k > 0 ? ";" : "", e->metadata[k].name,
					       e->metadata[k].value);
		row->metadata = g_string_free(md, FALSE);
		row->ts_ns = e->timestamp_ns;
		g_ptr_array_add(self->rows, row);
	}
	self->pushes++;
	result->outcome = SFL_SINK_OK;
	g_task_return_pointer(task, result, (GDestroyNotify)sfl_sink_result_free);
}

static void
sfl_test_capture_push_async(SflSink *sink, SflBatch *batch, GCancellable *cancellable,
			    GAsyncReadyCallback callback, gpointer user_data)
{
	SflTestCapture *self = SFL_TEST_CAPTURE(sink);
	GTask *task = g_task_new(self, cancellable, callback, user_data);

	g_task_set_task_data(task, batch, NULL);
	if (self->hold) {
		g_ptr_array_add(self->held, task);
		return;
	}
	sfl_test_capture_answer(self, task);
	g_object_unref(task);
}

static SflSinkResult *
sfl_test_capture_push_finish(SflSink *sink, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

const gchar *
sfl_test_capture_line(SflTestCapture *self, guint i)
{
	return ((SflTestRow *)g_ptr_array_index(self->rows, i))->line;
}

void
sfl_test_capture_release(SflTestCapture *self)
{
	g_autoptr(GPtrArray) held = g_steal_pointer(&self->held);

	self->held = g_ptr_array_new();
	self->hold = FALSE;
	for (guint i = 0; i < held->len; i++) {
		GTask *task = g_ptr_array_index(held, i);

		sfl_test_capture_answer(self, task);
		g_object_unref(task);
	}
}

static void
sfl_test_capture_finalize(GObject *object)
{
	SflTestCapture *self = SFL_TEST_CAPTURE(object);

	g_ptr_array_unref(self->rows);
	g_ptr_array_unref(self->held);
	G_OBJECT_CLASS(sfl_test_capture_parent_class)->finalize(object);
}

static void
sfl_test_capture_class_init(SflTestCaptureClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_test_capture_finalize;
	SFL_SINK_CLASS(klass)->push_async = sfl_test_capture_push_async;
	SFL_SINK_CLASS(klass)->push_finish = sfl_test_capture_push_finish;
}

static void
sfl_test_capture_init(SflTestCapture *self)
{
	self->rows = g_ptr_array_new_with_free_func(sfl_test_row_free);
	self->held = g_ptr_array_new();
}

gchar *
sfl_test_elf_dataset(const gchar *id, gint hours_ago, guint rows, guint seed)
{
	g_autofree gchar *created =
		sfl_test_sf_datetime(g_get_real_time() - (gint64)hours_ago * G_TIME_SPAN_HOUR);

	g_autofree gchar *file = sfl_test_elf_file(id, "API", created, rows, seed);

	return g_strdup_printf("{\"eventlogfiles\": [%s]}", file);
}

gchar *
sfl_test_elf_file(const gchar *id, const gchar *type, const gchar *created, guint rows, guint seed)
{
	return g_strdup_printf("{\"Id\": \"%s\", \"EventType\": \"%s\", \"Interval\": \"Hourly\", "
			       "\"LogDate\": \"%s\", \"CreatedDate\": \"%s\", \"Sequence\": 0, "
			       "\"generate\": {\"rows\": %u, \"kind\": \"%s\", \"seed\": %u}}",
			       id, type, created, created, rows, type, seed);
}

gchar *
sfl_test_data_render(const gchar *relpath, ...)
{
	g_autofree gchar *path = g_test_build_filename(G_TEST_DIST, "data", relpath, NULL);
	g_autofree gchar *text = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GRegex) left = NULL;
	g_autoptr(GMatchInfo) match = NULL;
	GString *out = NULL;
	const gchar *name = NULL;
	va_list ap;

	g_file_get_contents(path, &text, NULL, &error);
	g_assert_no_error(error);
	out = g_string_new(text);
	va_start(ap, relpath);
	while ((name = va_arg(ap, const gchar *)) != NULL) {
		const gchar *value = va_arg(ap, const gchar *);
		g_autofree gchar *token = g_strdup_printf("@%s@", name);

		/* a name the file never uses means the test and its fixture drifted apart */
		if (g_string_replace(out, token, value, 0) == 0)
			g_error("%s: no %s to fill", relpath, token);
	}
	va_end(ap);
	left = g_regex_new("@[A-Z_]+@", 0, 0, NULL);
	if (g_regex_match(left, out->str, 0, &match))
		g_error("%s: %s was not filled", relpath, g_match_info_fetch(match, 0));
	return g_string_free(out, FALSE);
}

static void
sfl_test_pipeline_stopped_cb(GObject *object, GAsyncResult *result, gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
}

void
sfl_test_pipeline_stop(SflPipeline **pipeline, SflTestCapture *sink, guint deadline_sec)
{
	gboolean done = FALSE;

	if (*pipeline == NULL)
		return;
	if (sink->hold)
		sfl_test_capture_release(sink);
	sfl_pipeline_stop_async(*pipeline, G_USEC_PER_SEC, NULL, sfl_test_pipeline_stopped_cb,
				&done);
	sfl_test_wait_for(&done, deadline_sec);
	g_clear_object(pipeline);
}

void
sfl_test_loop_dir_clear(SflCurlLoop **loop, gchar **dir)
{
	g_clear_object(loop);
	/* the loop's last callbacks run before the directory they may name goes */
	while (g_main_context_iteration(NULL, FALSE))
		;
	if (*dir != NULL)
		sfl_test_rmtree(*dir);
	g_clear_pointer(dir, g_free);
}
