/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestObjectStore"

#include "config.h"

#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-object-store-private.h"
#include "sfl-gcs-client.h"
#include "sfl-s3-client.h"
#include "sfl-test-sim.h"

/*
 * The object store's own duties against tests/sim/s3_sim.py (SigV4 recomputed by
 * python3-botocore): a real conflict versus a retried write whose first response was lost
 * (SFL-0045), bodies cut short (SFL-0046), the transient retry bound, a corrupt object that is
 * never overwritten, the S3-compatible variants, refused signatures; and `sf2loki state`
 * (including export/import between file and s3) against the simulator.
 */

#define BUCKET "ckpt"
#define KEY    "sf2loki/state.json"

typedef struct {
	gchar *base;
	SflTestSim *proc;
	SflCurlLoop *loop;
	gchar *dir;
	gboolean gcs;
	gchar *sa_path; /* gcs: the service-account key */
} Fixture;

static void
fixture_setup_args(Fixture *fx, const gchar *const *args)
{
	g_autoptr(GError) error = NULL;

	fx->loop = sfl_curl_loop_new();
	fx->base = sfl_test_s3_sim_start(args, &fx->proc);
	fx->dir = g_dir_make_tmp("sfl-test-object-store-XXXXXX", &error);
	g_assert_no_error(error);
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	const gchar *args[] = { "--variant", data != NULL ? data : "aws", NULL };

	fixture_setup_args(fx, args);
}

static void
fixture_setup_session(Fixture *fx, gconstpointer data)
{
	const gchar *args[] = { "--session-token", "sim-session-token", NULL };

	fixture_setup_args(fx, args);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	sfl_test_sim_stop(&fx->proc);
	sfl_test_loop_dir_clear(&fx->loop, &fx->dir);
	g_free(fx->base);
	g_free(fx->sa_path);
}

static SflObjectClient *
make_client(Fixture *fx, const gchar *secret)
{
	g_autofree gchar *secret_env = g_strdup_printf("AWS_SECRET_ACCESS_KEY=%s", secret);
	const gchar *env[] = { "AWS_ACCESS_KEY_ID=AKIDSIMULATOR", secret_env, "HOME=/nonexistent",
			       NULL };
	g_autoptr(SflAwsCredentialProvider) creds =
		sfl_aws_credential_provider_new(env, NULL, NULL);
	g_autoptr(GError) error = NULL;
	SflObjectClient *client =
		sfl_s3_client_new(BUCKET, "us-east-1", fx->base, creds, NULL, 5000, &error);

	g_assert_no_error(error);
	return client;
}

static SflCheckpointStore *
make_store(Fixture *fx)
{
	g_autoptr(SflObjectClient) client = make_client(fx, "sim/secret+key");
	SflCheckpointStore *store = sfl_object_store_new(client, KEY);

	/* the retry bound is what is tested, not the waits */
	sfl_object_store_set_backoff(SFL_OBJECT_STORE(store), 1000, 4000);
	return store;
}

static void
control(Fixture *fx, const gchar *path, const gchar *json)
{
	json_decref(sfl_test_sim_control(fx->loop, fx->base, "POST", path, json));
}

static json_t *
sim_state(Fixture *fx)
{
	return sfl_test_sim_control(fx->loop, fx->base, "GET", "/control/state", NULL);
}

static gchar *
stored_body(Fixture *fx)
{
	g_autoptr(json_t) state = sim_state(fx);
	json_t *obj = json_object_get(json_object_get(state, "objects"), BUCKET "/" KEY);
	return obj != NULL ? g_strdup(json_string_value(json_object_get(obj, "body"))) : NULL;
}

/* writes that reached the simulator with this status */
static guint
writes_with_status(Fixture *fx, gint status)
{
	g_autoptr(json_t) state = sim_state(fx);
	json_t *writes = json_object_get(state, "writes");
	guint n = 0;

	for (gsize i = 0; i < json_array_size(writes); i++) {
		json_t *w = json_array_get(writes, i);
		if (json_integer_value(json_object_get(w, "status")) == status &&
		    json_object_get(w, "intruder") == NULL)
			n++;
	}
	return n;
}

static gboolean
commit(SflCheckpointStore *store, const gchar *key, const gchar *value, GError **error)
{
	SflTestWaiter w = { 0 };
	g_autoptr(SflStateDoc) items = sfl_state_doc_new();
	gboolean ok;

	sfl_state_doc_set(items, key, value);
	sfl_checkpoint_store_commit_many_async(store, items, SFL_CHECKPOINT_STORE_NONE, NULL,
					       sfl_test_waiter_cb, &w);
	sfl_test_wait_for(&w.done, 60);
	ok = sfl_checkpoint_store_commit_many_finish(store, w.result, error);
	g_object_unref(w.result);
	if (!ok)
		g_test_message("commit %s=%s: %s", key, value, (*error)->message);
	return ok;
}

static gchar *
load(SflCheckpointStore *store, const gchar *key, GError **error)
{
	SflTestWaiter w = { 0 };
	gchar *value;

	sfl_checkpoint_store_load_async(store, key, NULL, sfl_test_waiter_cb, &w);
	sfl_test_wait_for(&w.done, 60);
	value = sfl_checkpoint_store_load_finish(store, w.result, error);
	g_object_unref(w.result);
	return value;
}

static gboolean
open_store(SflCheckpointStore *store, GError **error)
{
	SflTestWaiter w = { 0 };
	gboolean ok;

	sfl_checkpoint_store_open_async(store, NULL, sfl_test_waiter_cb, &w);
	sfl_test_wait_for(&w.done, 60);
	ok = sfl_checkpoint_store_open_finish(store, w.result, error);
	g_object_unref(w.result);
	return ok;
}

/* --- SFL-0045: a real conflict versus a lost response -------------------------------------- */

static void
test_lost_response_is_success(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *body = NULL;

	if (fx->base == NULL)
		return;
	store = make_store(fx);
	g_assert_true(commit(store, "a", "1", &error));
	g_assert_no_error(error);
	/* the write lands, its answer is lost: the retry meets 412 against our own bytes */
	control(fx, "/control/fault", "{\"action\": \"drop\", \"methods\": [\"PUT\"]}");
	g_assert_true(commit(store, "a", "2", &error));
	g_assert_no_error(error);
	body = stored_body(fx);
	g_assert_cmpstr(body, ==, "{\"a\": \"2\"}");
	/* one applied write, one retry answered 412, no third write */
	g_assert_cmpuint(writes_with_status(fx, 412), ==, 1);
	g_assert_cmpuint(writes_with_status(fx, 200), ==, 2);
	g_assert_cmpuint(sfl_object_store_get_write_count(SFL_OBJECT_STORE(store)), ==, 2);
}

static void
test_lost_response_on_create(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;

	if (fx->base == NULL)
		return;
	store = make_store(fx);
	control(fx, "/control/fault", "{\"action\": \"drop\", \"methods\": [\"PUT\"]}");
	g_assert_true(commit(store, "a", "1", &error));
	g_assert_no_error(error);
	g_assert_cmpuint(writes_with_status(fx, 412), ==, 1);
}

static void
test_real_conflict(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *body = NULL;
	guint before;

	if (fx->base == NULL)
		return;
	store = make_store(fx);
	g_assert_true(commit(store, "a", "1", &error));
	/* another writer lands between our read and our write */
	control(fx, "/control/race", "{\"body\": \"{\\\"intruder\\\": \\\"x\\\"}\"}");
	before = writes_with_status(fx, 412);
	g_assert_false(commit(store, "a", "2", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
	g_assert_nonnull(strstr(error->message, "s3://" BUCKET "/" KEY));
	/* never retried blindly: exactly one conditional write met the 412 */
	g_assert_cmpuint(writes_with_status(fx, 412), ==, before + 1);
	body = stored_body(fx);
	g_assert_cmpstr(body, ==, "{\"intruder\": \"x\"}");
}

/* a conflict on a retry whose bytes differ is a real conflict */
static void
test_lost_response_then_overwritten(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;

	if (fx->base == NULL)
		return;
	store = make_store(fx);
	g_assert_true(commit(store, "a", "1", &error));
	control(fx, "/control/fault",
		"{\"action\": \"status\", \"status\": 503, \"code\": "
		"\"SlowDown\", \"methods\": [\"PUT\"]}");
	control(fx, "/control/race", "{\"body\": \"{\\\"other\\\": \\\"y\\\"}\"}");
	g_assert_false(commit(store, "a", "2", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
}

/* --- transient failures -------------------------------------------------------------------- */

static void
test_transient_retried(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *v = NULL;

	if (fx->base == NULL)
		return;
	store = make_store(fx);
	g_assert_true(commit(store, "a", "1", &error));
	/* three failures of three kinds, then success: within the bound of four attempts */
	control(fx, "/control/fault",
		"{\"action\": \"status\", \"status\": 500, \"methods\": "
		"[\"PUT\"]}");
	control(fx, "/control/fault", "{\"action\": \"reset\", \"methods\": [\"PUT\"]}");
	control(fx, "/control/fault",
		"{\"action\": \"status\", \"status\": 503, \"code\": "
		"\"SlowDown\", \"methods\": [\"PUT\"]}");
	g_assert_true(commit(store, "a", "2", &error));
	g_assert_no_error(error);
	sfl_checkpoint_store_reset(store);
	v = load(store, "a", &error);
	g_assert_cmpstr(v, ==, "2");
}

static void
test_transient_bound(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) state = NULL;
	guint before;

	if (fx->base == NULL)
		return;
	store = make_store(fx);
	g_assert_true(commit(store, "a", "1", &error));
	state = sim_state(fx);
	before = (guint)json_integer_value(json_object_get(state, "requests"));
	control(fx, "/control/fault",
		"{\"action\": \"status\", \"status\": 500, \"count\": 100, "
		"\"methods\": [\"PUT\"]}");
	g_assert_false(commit(store, "a", "2", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "after 4 attempts"));
	g_clear_pointer(&state, json_decref);
	state = sim_state(fx);
	/* one read, then exactly four writes */
	g_assert_cmpuint((guint)json_integer_value(json_object_get(state, "requests")) - before, ==,
			 5);
}

/* SFL-0046: a body cut short is retried like any transient failure */
static void
test_truncated_body_retried(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) writer = NULL;
	g_autoptr(SflCheckpointStore) reader = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *v = NULL;

	if (fx->base == NULL)
		return;
	writer = make_store(fx);
	g_assert_true(commit(writer, "pubsub:/event/LoginEventStream", "AAAAAAAAAA==", &error));
	reader = make_store(fx);
	control(fx, "/control/fault", "{\"action\": \"truncate\", \"methods\": [\"GET\"]}");
	control(fx, "/control/fault", "{\"action\": \"reset\", \"methods\": [\"GET\"]}");
	v = load(reader, "pubsub:/event/LoginEventStream", &error);
	g_assert_no_error(error);
	g_assert_cmpstr(v, ==, "AAAAAAAAAA==");
}

/* --- corrupt objects and refusals ----------------------------------------------------------- */

static void
test_corrupt_never_overwritten(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *body = NULL;

	if (fx->base == NULL)
		return;
	control(fx, "/control/object",
		"{\"bucket\": \"" BUCKET "\", \"key\": \"" KEY "\", \"body\": \"[1, 2\"}");
	store = make_store(fx);
	g_assert_false(open_store(store, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_nonnull(strstr(error->message, "s3://" BUCKET "/" KEY));
	g_clear_error(&error);
	g_assert_false(commit(store, "a", "1", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	body = stored_body(fx);
	g_assert_cmpstr(body, ==, "[1, 2");
	g_assert_cmpuint(writes_with_status(fx, 200), ==, 0);
}

static void
test_bad_signature_is_auth(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflObjectClient) client = NULL;
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) state = NULL;

	if (fx->base == NULL)
		return;
	client = make_client(fx, "not-the-secret");
	store = sfl_object_store_new(client, KEY);
	g_assert_false(open_store(store, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message, "SignatureDoesNotMatch"));
	/* never the secret in a message */
	g_assert_null(strstr(error->message, "not-the-secret"));
	state = sim_state(fx);
	/* not retried: one request */
	g_assert_cmpint(json_integer_value(json_object_get(state, "auth_failures")), ==, 1);
}

/* --- S3-compatible variants ----------------------------------------------------------------- */

static void
test_variant_conflicts(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) a = NULL;
	g_autoptr(SflCheckpointStore) b = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *v = NULL;

	if (fx->base == NULL)
		return;
	/* two writers that both saw "absent": the second create-only write must lose */
	a = make_store(fx);
	b = make_store(fx);
	control(fx, "/control/race", "{\"body\": \"{\\\"a\\\": \\\"raced\\\"}\"}");
	g_assert_false(commit(b, "b", "1", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
	g_clear_error(&error);
	/* and an If-Match write on a key deleted meanwhile loses too (AWS 404, Ceph 412) */
	g_assert_true(commit(a, "a", "1", &error));
	g_assert_no_error(error);
	control(fx, "/control/object",
		"{\"bucket\": \"" BUCKET "\", \"key\": \"" KEY "\", "
		"\"body\": null}");
	control(fx, "/control/race", "{\"body\": null}");
	v = load(a, "a", &error);
	g_assert_cmpstr(v, ==, "1");
}

static void
test_if_match_on_missing_key(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflObjectClient) client = NULL;
	g_autoptr(GBytes) body = g_bytes_new_static("{}", 2);
	SflTestWaiter w = { 0 };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *version = NULL;

	if (fx->base == NULL)
		return;
	client = make_client(fx, "sim/secret+key");
	sfl_object_client_put_async(client, KEY, body, SFL_OBJECT_WRITE_IF_VERSION,
				    "\"0123456789abcdef0123456789abcdef\"", NULL,
				    sfl_test_waiter_cb, &w);
	sfl_test_wait_for(&w.done, 30);
	version = sfl_object_client_put_finish(client, w.result, &error);
	g_object_unref(w.result);
	/* aws answers 404 NoSuchKey, ceph 412: both are a lost race */
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
	g_assert_null(version);
}

static void
test_no_conditional_writes(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;

	if (fx->base == NULL)
		return;
	store = make_store(fx);
	g_assert_false(commit(store, "a", "1", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_REJECTED);
	g_assert_nonnull(strstr(error->message, "does not support conditional writes"));
}

/* --- `sf2loki state` against s3 -------------------------------------------------------------- */

static gchar *
write_config(Fixture *fx, const gchar *name, const gchar *state_yaml)
{
	g_autofree gchar *file = g_strdup_printf("%s.yaml", name);
	gchar *path = g_build_filename(fx->dir, file, NULL);
	g_autofree gchar *yaml =
		g_strdup_printf("salesforce:\n"
				"  client_id: cid\n"
				"  username: u@example.com\n"
				"  private_key: key\n"
				"sink:\n"
				"  loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}\n"
				"state:\n%s",
				state_yaml);
	g_autoptr(GError) error = NULL;

	g_file_set_contents(path, yaml, -1, &error);
	g_assert_no_error(error);
	return path;
}

static gchar *
run_cli(Fixture *fx, gint expect_status, ...)
{
	g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(
		G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE);
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GError) error = NULL;
	gchar *out = NULL;
	const gchar *arg;
	va_list args;

	if (fx->gcs) {
		g_subprocess_launcher_setenv(l, "STORAGE_EMULATOR_HOST", fx->base, TRUE);
	} else {
		g_subprocess_launcher_setenv(l, "AWS_ACCESS_KEY_ID", "AKIDSIMULATOR", TRUE);
		g_subprocess_launcher_setenv(l, "AWS_SECRET_ACCESS_KEY", "sim/secret+key", TRUE);
		g_subprocess_launcher_setenv(l, "AWS_EC2_METADATA_DISABLED", "true", TRUE);
	}
	g_subprocess_launcher_setenv(l, "HOME", fx->dir, TRUE);
	g_ptr_array_add(argv, (gpointer)g_getenv("SF2LOKI_BIN"));
	va_start(args, expect_status);
	while ((arg = va_arg(args, const gchar *)) != NULL)
		g_ptr_array_add(argv, (gpointer)arg);
	va_end(args);
	g_ptr_array_add(argv, NULL);
	proc = g_subprocess_launcher_spawnv(l, (const gchar *const *)argv->pdata, &error);
	g_assert_no_error(error);
	g_subprocess_communicate_utf8(proc, NULL, NULL, &out, NULL, &error);
	g_assert_no_error(error);
	g_test_message("%s", out);
	g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, expect_status);
	return out;
}

static void
test_state_cli(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *s3_state = NULL;
	g_autofree gchar *s3_config = NULL;
	g_autofree gchar *file_config = NULL;
	g_autofree gchar *file_path = NULL;
	g_autofree gchar *file_state = NULL;
	g_autofree gchar *export_path = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *body = NULL;

	if (fx->base == NULL)
		return;
	s3_state = g_strdup_printf("  store: s3\n  s3: {bucket: " BUCKET ", key: " KEY
				   ", endpoint_url: '%s', region: us-east-1}\n",
				   fx->base);
	s3_config = write_config(fx, "s3", s3_state);
	file_path = g_build_filename(fx->dir, "state.json", NULL);
	file_state = g_strdup_printf("  file: {path: '%s'}\n", file_path);
	file_config = write_config(fx, "file", file_state);
	export_path = g_build_filename(fx->dir, "export.json", NULL);

	g_free(run_cli(fx, 0, "state", "set", "eventlogfile:API", "{\"ids\": []}", "--config",
		       s3_config, NULL));
	out = run_cli(fx, 0, "state", "get", "eventlogfile:API", "--config", s3_config, NULL);
	g_assert_nonnull(strstr(out, "{\"ids\": []}"));
	body = stored_body(fx);
	g_assert_cmpstr(body, ==, "{\"eventlogfile:API\": \"{\\\"ids\\\": []}\"}");

	/* file → s3 and s3 → file through export/import */
	g_free(run_cli(fx, 0, "state", "set", "pubsub:/event/A", "AAA=", "--config", file_config,
		       NULL));
	g_free(run_cli(fx, 0, "state", "export", export_path, "--config", file_config, NULL));
	g_free(run_cli(fx, 0, "state", "import", export_path, "--merge", "--config", s3_config,
		       NULL));
	g_clear_pointer(&out, g_free);
	out = run_cli(fx, 0, "state", "list", "--config", s3_config, NULL);
	g_assert_nonnull(strstr(out, "pubsub:/event/A"));
	g_assert_nonnull(strstr(out, "eventlogfile:API"));
	g_free(run_cli(fx, 0, "state", "export", export_path, "--config", s3_config, NULL));
	g_free(run_cli(fx, 0, "state", "import", export_path, "--config", file_config, NULL));
	g_clear_pointer(&out, g_free);
	out = run_cli(fx, 0, "state", "get", "eventlogfile:API", "--config", file_config, NULL);
	g_assert_nonnull(strstr(out, "{\"ids\": []}"));
	g_free(run_cli(fx, 0, "state", "delete", "pubsub:/event/A", "--config", s3_config, NULL));
	g_clear_pointer(&body, g_free);
	body = stored_body(fx);
	g_assert_null(strstr(body, "pubsub"));
}

/* temporary credentials: the session token is sent and signed */
static void
test_session_token(Fixture *fx, gconstpointer data)
{
	const gchar *with[] = { "AWS_ACCESS_KEY_ID=AKIDSIMULATOR",
				"AWS_SECRET_ACCESS_KEY=sim/secret+key",
				"AWS_SESSION_TOKEN=sim-session-token", "HOME=/nonexistent", NULL };
	const gchar *without[] = { "AWS_ACCESS_KEY_ID=AKIDSIMULATOR",
				   "AWS_SECRET_ACCESS_KEY=sim/secret+key", "HOME=/nonexistent",
				   NULL };
	const gchar *const *envs[] = { with, without };

	if (fx->base == NULL)
		return;
	for (guint i = 0; i < G_N_ELEMENTS(envs); i++) {
		g_autoptr(SflAwsCredentialProvider) creds =
			sfl_aws_credential_provider_new(envs[i], NULL, NULL);
		g_autoptr(GError) error = NULL;
		g_autoptr(SflObjectClient) client =
			sfl_s3_client_new(BUCKET, "us-east-1", fx->base, creds, NULL, 5000, &error);
		g_autoptr(SflCheckpointStore) store = sfl_object_store_new(client, KEY);
		gboolean ok = commit(store, "a", "1", &error);

		if (i == 0) {
			g_assert_no_error(error);
			g_assert_true(ok);
		} else {
			g_assert_false(ok);
			g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
			g_assert_nonnull(strstr(error->message, "InvalidToken"));
		}
	}
}

/* --- `sf2loki doctor` probes ---------------------------------------------------------------- */

static const gchar *
doctor_row(json_t *report, const gchar *name, const gchar **detail)
{
	json_t *checks = json_object_get(report, "checks");

	for (gsize i = 0; i < json_array_size(checks); i++) {
		json_t *row = json_array_get(checks, i);
		if (g_strcmp0(json_string_value(json_object_get(row, "name")), name) == 0) {
			*detail = json_string_value(json_object_get(row, "detail"));
			return json_string_value(json_object_get(row, "status"));
		}
	}
	g_error("no doctor row %s", name);
}

static void
test_doctor(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *state = NULL;
	g_autofree gchar *config = NULL;
	g_autofree gchar *out = NULL;
	g_autoptr(json_t) report = NULL;
	json_error_t jerr;
	const gchar *detail = NULL;
	gboolean enforced = data == NULL || g_str_equal(data, "aws");

	if (fx->base == NULL)
		return;
	state = g_strdup_printf("  store: s3\n  s3: {bucket: " BUCKET ", key: " KEY
				", endpoint_url: '%s', region: us-east-1}\n"
				"coordinate:\n  type: s3_lease\n"
				"  s3_lease: {bucket: " BUCKET ", endpoint_url: '%s', "
				"region: us-east-1}\n",
				fx->base, fx->base);
	config = write_config(fx, "doctor", state);
	/* a live lease: the probe reads it and never writes it */
	control(fx, "/control/object",
		"{\"bucket\": \"" BUCKET "\", \"key\": "
		"\"sf2loki/leader.json\", \"body\": \"{\\\"holder\\\": "
		"\\\"x\\\"}\"}");
	/* Salesforce and Loki are unreachable here: doctor exits 1 whatever the stores say */
	out = run_cli(fx, 1, "doctor", "--json", "--config", config, NULL);
	report = json_loads(out, 0, &jerr);
	g_assert_nonnull(report);
	g_assert_cmpstr(doctor_row(report, "state", &detail), ==, enforced ? "PASS" : "FAIL");
	g_assert_nonnull(strstr(detail, "s3://" BUCKET "/" KEY));
	if (!enforced)
		g_assert_nonnull(strstr(detail, "conditional writes"));
	g_assert_cmpstr(doctor_row(report, "coordinator", &detail), ==, enforced ? "PASS" : "FAIL");
	g_assert_nonnull(strstr(detail, "s3://" BUCKET "/sf2loki/leader.json readable"));
	{
		g_autoptr(json_t) st = sim_state(fx);
		json_t *objects = json_object_get(st, "objects");
		/* the live lease is untouched and no probe object is left behind */
		g_assert_cmpstr(
			json_string_value(json_object_get(
				json_object_get(objects, BUCKET "/sf2loki/leader.json"), "body")),
			==, "{\"holder\": \"x\"}");
		if (enforced)
			g_assert_cmpuint(json_object_size(objects), ==, 1);
	}
}

/* --- Cloud Storage ------------------------------------------------------------------------- */

static void
gcs_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *pub = NULL;
	g_autofree gchar *priv = NULL;
	g_autofree gchar *pem = NULL;
	g_autofree gchar *token_uri = NULL;
	g_autofree gchar *text = NULL;
	g_autoptr(json_t) sa = json_object();
	const gchar *args[] = { "--public-key", NULL, "--metadata", NULL };

	fx->gcs = TRUE;
	fx->loop = sfl_curl_loop_new();
	fx->dir = g_dir_make_tmp("sfl-test-gcs-XXXXXX", &error);
	g_assert_no_error(error);
	pub = g_build_filename(fx->dir, "pub.pem", NULL);
	priv = g_build_filename(fx->dir, "key.pem", NULL);
	sfl_test_write_rsa_key(priv, pub);
	args[1] = pub;
	fx->base = sfl_test_gcs_sim_start(args, &fx->proc);
	if (fx->base == NULL)
		return;
	g_assert_true(g_file_get_contents(priv, &pem, NULL, NULL));
	token_uri = g_strconcat(fx->base, "/token", NULL);
	json_object_set_new(sa, "type", json_string("service_account"));
	json_object_set_new(sa, "private_key_id", json_string("k1"));
	json_object_set_new(sa, "private_key", json_string(pem));
	json_object_set_new(sa, "client_email",
			    json_string("sf2loki@sim-project.iam.gserviceaccount.com"));
	json_object_set_new(sa, "token_uri", json_string(token_uri));
	text = json_dumps(sa, 0);
	fx->sa_path = g_build_filename(fx->dir, "sa.json", NULL);
	g_assert_true(g_file_set_contents(fx->sa_path, text, -1, NULL));
}

/* a store on the simulator; @key_file NULL uses the metadata server */
static SflCheckpointStore *
gcs_store(Fixture *fx, const gchar *key_file)
{
	g_autofree gchar *emulator = g_strdup_printf("STORAGE_EMULATOR_HOST=%s", fx->base);
	g_autofree gchar *metadata = g_strdup_printf("GCE_METADATA_HOST=%s", fx->base + 7);
	const gchar *env[] = { emulator, metadata, NULL };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflObjectClient) client = NULL;
	SflCheckpointStore *store;

	/* an emulator with a key file still authenticates, which is what is tested here */
	client = sfl_gcs_client_new(BUCKET, key_file != NULL ? key_file : "", env, NULL, 5000,
				    &error);
	g_assert_no_error(error);
	store = sfl_object_store_new(client, KEY);
	sfl_object_store_set_backoff(SFL_OBJECT_STORE(store), 1000, 4000);
	return store;
}

static void
test_gcs_service_account(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) state = NULL;
	g_autofree gchar *v = NULL;
	json_t *writes;

	if (fx->base == NULL)
		return;
	store = gcs_store(fx, fx->sa_path);
	g_assert_true(commit(store, "a", "1", &error));
	g_assert_no_error(error);
	g_assert_true(commit(store, "a", "2", &error));
	sfl_checkpoint_store_reset(store);
	v = load(store, "a", &error);
	g_assert_cmpstr(v, ==, "2");
	state = sim_state(fx);
	/* one token for every request: cached, not fetched per call */
	g_assert_cmpint(json_integer_value(json_object_get(state, "tokens_issued")), ==, 1);
	g_assert_cmpint(json_integer_value(json_object_get(state, "auth_failures")), ==, 0);
	writes = json_object_get(state, "writes");
	/* create-only first, then the generation just read */
	g_assert_cmpstr(
		json_string_value(json_object_get(json_array_get(writes, 0), "ifGenerationMatch")),
		==, "0");
	g_assert_cmpstr(
		json_string_value(json_object_get(json_array_get(writes, 1), "ifGenerationMatch")),
		!=, "0");
}

static void
test_gcs_emulator_anonymous(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) state = NULL;

	if (fx->base == NULL)
		return;
	store = gcs_store(fx, NULL);
	/* no key file and an emulator: anonymous, as Google's clients do against emulators */
	g_assert_false(commit(store, "a", "1", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	state = sim_state(fx);
	g_assert_cmpint(json_integer_value(json_object_get(state, "tokens_issued")), ==, 0);
}

static void
test_gcs_metadata_server(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *metadata = NULL;
	g_autoptr(SflGcsTokenProvider) tokens = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *token = NULL;
	g_autofree gchar *again = NULL;
	g_autofree gchar *renewed = NULL;
	g_autoptr(SflClock) clock = sfl_fake_clock_new(g_get_real_time());
	SflTestWaiter w = { 0 };
	SflTestWaiter w2 = { 0 };
	SflTestWaiter w3 = { 0 };

	if (fx->base == NULL)
		return;
	metadata = g_strdup_printf("GCE_METADATA_HOST=%s", fx->base + strlen("http://"));
	{
		const gchar *env[] = { metadata, NULL };
		tokens = sfl_gcs_token_provider_new(NULL, env, clock, &error);
	}
	g_assert_no_error(error);
	g_assert_false(sfl_gcs_token_provider_has_key(tokens));
	sfl_gcs_token_provider_get_async(tokens, NULL, sfl_test_waiter_cb, &w);
	sfl_test_wait_for(&w.done, 30);
	token = sfl_gcs_token_provider_get_finish(tokens, w.result, &error);
	g_object_unref(w.result);
	g_assert_no_error(error);
	/* the simulator hands tokens only to requests with Metadata-Flavor: Google */
	g_assert_cmpstr(token, ==, "sim-gcs-token-1");
	sfl_gcs_token_provider_get_async(tokens, NULL, sfl_test_waiter_cb, &w2);
	sfl_test_wait_for(&w2.done, 30);
	again = sfl_gcs_token_provider_get_finish(tokens, w2.result, &error);
	g_object_unref(w2.result);
	g_assert_cmpstr(again, ==, token);
	/* the simulator's tokens live 3599 s: four minutes before that, a new one is fetched */
	sfl_fake_clock_advance(clock, (gint64)(3599 - 240) * G_USEC_PER_SEC);
	sfl_gcs_token_provider_get_async(tokens, NULL, sfl_test_waiter_cb, &w3);
	sfl_test_wait_for(&w3.done, 30);
	renewed = sfl_gcs_token_provider_get_finish(tokens, w3.result, &error);
	g_object_unref(w3.result);
	g_assert_no_error(error);
	g_assert_cmpstr(renewed, ==, "sim-gcs-token-2");
}

static void
test_gcs_lost_response_and_conflict(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(GError) error = NULL;

	if (fx->base == NULL)
		return;
	store = gcs_store(fx, fx->sa_path);
	g_assert_true(commit(store, "a", "1", &error));
	json_decref(sfl_test_sim_control(fx->loop, fx->base, "POST", "/control/fault",
					 "{\"action\": \"drop\", \"methods\": [\"POST\"]}"));
	g_assert_true(commit(store, "a", "2", &error));
	g_assert_no_error(error);
	json_decref(sfl_test_sim_control(fx->loop, fx->base, "POST", "/control/race",
					 "{\"body\": \"{}\"}"));
	g_assert_false(commit(store, "a", "3", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
	g_assert_nonnull(strstr(error->message, "gs://" BUCKET "/" KEY));
	g_clear_error(&error);
	/* 503s and a cut body are retried */
	json_decref(sfl_test_sim_control(fx->loop, fx->base, "POST", "/control/fault",
					 "{\"action\": \"status\", \"status\": 503}"));
	json_decref(sfl_test_sim_control(fx->loop, fx->base, "POST", "/control/fault",
					 "{\"action\": \"truncate\", \"methods\": [\"GET\"]}"));
	g_assert_true(commit(store, "a", "4", &error));
	g_assert_no_error(error);
}

/* `sf2loki state` against gcs, and export/import between gcs and file */
static void
test_gcs_state_cli(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *gcs_state = NULL;
	g_autofree gchar *gcs = NULL;
	g_autofree gchar *file_state = NULL;
	g_autofree gchar *file = NULL;
	g_autofree gchar *state_path = NULL;
	g_autofree gchar *export_path = NULL;
	g_autofree gchar *out = NULL;

	if (fx->base == NULL)
		return;
	gcs_state = g_strdup_printf("  store: gcs\n  gcs: {bucket: " BUCKET ", object_name: " KEY
				    ", service_file: '%s'}\n",
				    fx->sa_path);
	gcs = write_config(fx, "gcs", gcs_state);
	state_path = g_build_filename(fx->dir, "state.json", NULL);
	file_state = g_strdup_printf("  file: {path: '%s'}\n", state_path);
	file = write_config(fx, "file", file_state);
	export_path = g_build_filename(fx->dir, "export.json", NULL);

	g_free(run_cli(fx, 0, "state", "set", "apexlog", "{\"ids\": [], \"last_ts\": \"x\"}",
		       "--config", gcs, NULL));
	g_free(run_cli(fx, 0, "state", "set", "pubsub:/event/B", "BBB=", "--config", file, NULL));
	g_free(run_cli(fx, 0, "state", "export", export_path, "--config", file, NULL));
	g_free(run_cli(fx, 0, "state", "import", export_path, "--merge", "--config", gcs, NULL));
	out = run_cli(fx, 0, "state", "list", "--config", gcs, NULL);
	g_assert_nonnull(strstr(out, "apexlog"));
	g_assert_nonnull(strstr(out, "pubsub:/event/B\tBBB="));
	g_free(run_cli(fx, 0, "state", "export", export_path, "--config", gcs, NULL));
	g_free(run_cli(fx, 0, "state", "import", export_path, "--config", file, NULL));
	g_clear_pointer(&out, g_free);
	out = run_cli(fx, 0, "state", "get", "apexlog", "--config", file, NULL);
	g_assert_nonnull(strstr(out, "last_ts"));
}

static void
test_gcs_bad_key(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *bad = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflObjectClient) client = NULL;

	if (fx->base == NULL)
		return;
	bad = g_build_filename(fx->dir, "bad.json", NULL);
	g_assert_true(g_file_set_contents(bad, "{\"type\": \"authorized_user\"}", -1, NULL));
	client = sfl_gcs_client_new(BUCKET, bad, NULL, NULL, 5000, &error);
	g_assert_null(client);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "service-account"));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
#define ADD(name, variant, func)                                                                   \
	g_test_add("/sfl/object-store/s3/" name, Fixture, variant, fixture_setup, func,            \
		   fixture_teardown)
	ADD("lost-response-is-success", NULL, test_lost_response_is_success);
	ADD("lost-response-on-create", NULL, test_lost_response_on_create);
	ADD("real-conflict", NULL, test_real_conflict);
	ADD("lost-response-then-overwritten", NULL, test_lost_response_then_overwritten);
	ADD("transient-retried", NULL, test_transient_retried);
	ADD("transient-bound", NULL, test_transient_bound);
	ADD("truncated-body-retried", NULL, test_truncated_body_retried);
	ADD("corrupt-never-overwritten", NULL, test_corrupt_never_overwritten);
	ADD("bad-signature-is-auth", NULL, test_bad_signature_is_auth);
	ADD("variant/aws/conflicts", "aws", test_variant_conflicts);
	ADD("variant/ceph/conflicts", "ceph", test_variant_conflicts);
	ADD("variant/aws/if-match-missing", "aws", test_if_match_on_missing_key);
	ADD("variant/ceph/if-match-missing", "ceph", test_if_match_on_missing_key);
	ADD("variant/minio-old/conflicts", "minio-old", test_variant_conflicts);
	ADD("variant/no-conditional", "no-conditional", test_no_conditional_writes);
	ADD("state-cli", NULL, test_state_cli);
	g_test_add("/sfl/object-store/s3/session-token", Fixture, NULL, fixture_setup_session,
		   test_session_token, fixture_teardown);
	ADD("doctor/aws", "aws", test_doctor);
	ADD("doctor/minio-old", "minio-old", test_doctor);
	ADD("doctor/no-conditional", "no-conditional", test_doctor);
#define ADD_GCS(name, func)                                                                        \
	g_test_add("/sfl/object-store/gcs/" name, Fixture, NULL, gcs_setup, func, fixture_teardown)
	ADD_GCS("service-account", test_gcs_service_account);
	ADD_GCS("emulator-anonymous", test_gcs_emulator_anonymous);
	ADD_GCS("metadata-server", test_gcs_metadata_server);
	ADD_GCS("lost-response-and-conflict", test_gcs_lost_response_and_conflict);
	ADD_GCS("bad-key", test_gcs_bad_key);
	ADD_GCS("state-cli", test_gcs_state_cli);
	return g_test_run();
}
