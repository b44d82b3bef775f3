/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestStore"

#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <signal.h>
#include <sys/prctl.h>
#endif

#include "sfl-error.h"
#include "sfl-file-store-private.h"
#include "sfl-memory-store.h"
#include "sfl-platform.h"
#include "sfl-object-store-private.h"
#include "sfl-gcs-client.h"
#include "sfl-s3-client.h"

/*
 * The checkpoint-store contract, run against every implementation, then the file store's own
 * duties (lock, corrupt and unreadable files, format, crash safety).
 */

typedef enum {
	KIND_MEMORY,
	KIND_FILE,
	KIND_S3,  /* the object store against tests/sim/s3_sim.py */
	KIND_GCS, /* the object store against tests/sim/gcs_sim.py (emulator mode) */
} StoreKind;

typedef struct {
	StoreKind kind;
	gchar *tmpdir;
	gchar *path;
	SflMemoryBacking *backing;
	GPtrArray *stores; /* opened by fixture_store(), unreffed in teardown */
	GSubprocess *s3_sim;
	gchar *s3_endpoint;
} Fixture;

/* --- running async calls to completion ----------------------------------------------------- */

typedef struct {
	GAsyncResult *result;
} Wait;

static void
wait_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Wait *w = user_data;
	w->result = g_object_ref(result);
}

/* iterate the loop until the callback ran, or fail after a generous deadline */
static GAsyncResult *
wait_result(Wait *w)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
	while (w->result == NULL) {
		if (g_get_monotonic_time() > deadline)
			g_error("store operation did not complete within 30 s");
		g_main_context_iteration(NULL, TRUE);
	}
	return w->result;
}

static gboolean
store_open(SflCheckpointStore *store, GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	sfl_checkpoint_store_open_async(store, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_open_finish(store, r, error);
}

static gchar *
store_load(SflCheckpointStore *store, const gchar *key, GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	sfl_checkpoint_store_load_async(store, key, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_load_finish(store, r, error);
}

static gboolean
store_commit_flags(SflCheckpointStore *store, SflCheckpointStoreFlags flags, GError **error, ...)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	g_autoptr(SflStateDoc) items = sfl_state_doc_new();
	va_list args;
	const gchar *key;

	va_start(args, error);
	while ((key = va_arg(args, const gchar *)) != NULL)
		sfl_state_doc_set(items, key, va_arg(args, const gchar *));
	va_end(args);
	sfl_checkpoint_store_commit_many_async(store, items, flags, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_commit_many_finish(store, r, error);
}

#define store_commit(store, error, ...)                                                            \
	store_commit_flags(store, SFL_CHECKPOINT_STORE_NONE, error, __VA_ARGS__, NULL)

static gboolean
store_delete(SflCheckpointStore *store, const gchar *key, GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	sfl_checkpoint_store_delete_async(store, key, SFL_CHECKPOINT_STORE_NONE, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_delete_finish(store, r, error);
}

static GPtrArray *
store_list(SflCheckpointStore *store, GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	sfl_checkpoint_store_list_async(store, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_list_finish(store, r, error);
}

static SflStateDoc *
store_snapshot(SflCheckpointStore *store, GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	sfl_checkpoint_store_snapshot_async(store, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_snapshot_finish(store, r, error);
}

static gboolean
store_epoch(SflCheckpointStore *store, guint64 *epoch, gboolean *present, GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	sfl_checkpoint_store_persisted_epoch_async(store, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_persisted_epoch_finish(store, r, epoch, present, error);
}

static gboolean
store_commit_unit(SflCheckpointStore *store, const gchar *unit, guint64 epoch, GError **error,
		  const gchar *key, const gchar *value)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	g_autoptr(SflStateDoc) items = sfl_state_doc_new();

	sfl_state_doc_set(items, key, value);
	sfl_checkpoint_store_commit_unit_async(store, unit, epoch, items, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_commit_many_finish(store, r, error);
}

static gboolean
store_unit_epoch(SflCheckpointStore *store, const gchar *unit, guint64 *epoch, gboolean *present,
		 GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	sfl_checkpoint_store_persisted_unit_epoch_async(store, unit, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_persisted_epoch_finish(store, r, epoch, present, error);
}

/* --- fixture ------------------------------------------------------------------------------- */

/* a simulator must not outlive a test that aborted: meson would wait on its pipes */
static void
s3_sim_child_setup(gpointer user_data)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

/* tests/sim/@name (s3_sim.py, gcs_sim.py) on an ephemeral port; its endpoint URL */
static gchar *
s3_sim_start(const gchar *name, GSubprocess **out)
{
	g_autofree gchar *script = g_test_build_filename(G_TEST_DIST, "sim", name, NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GDataInputStream) stdout_lines = NULL;
	g_autofree gchar *line = NULL;

	g_autoptr(GSubprocessLauncher) launcher =
		g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE);

	g_subprocess_launcher_set_child_setup(launcher, s3_sim_child_setup, NULL, NULL);
	*out = g_subprocess_launcher_spawn(launcher, &error, "/usr/bin/python3", script, NULL);
	g_assert_no_error(error);
	stdout_lines = g_data_input_stream_new(g_subprocess_get_stdout_pipe(*out));
	/* blocks until the simulator listens or exits */
	line = g_data_input_stream_read_line(stdout_lines, NULL, NULL, &error);
	g_assert_no_error(error);
	if (line == NULL || !g_str_has_prefix(line, "PORT "))
		g_error("the %s simulator did not start (python3-botocore/jwt missing?)", name);
	return g_strdup_printf("http://127.0.0.1:%s", line + 5);
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	fx->kind = GPOINTER_TO_INT(data);
	fx->tmpdir = g_dir_make_tmp("sfl-test-store-XXXXXX", &error);
	g_assert_no_error(error);
	fx->path = g_build_filename(fx->tmpdir, "state", "state.json", NULL);
	fx->backing = sfl_memory_backing_new();
	fx->stores = g_ptr_array_new_with_free_func(g_object_unref);
	if (fx->kind == KIND_S3)
		fx->s3_endpoint = s3_sim_start("s3_sim.py", &fx->s3_sim);
	if (fx->kind == KIND_GCS)
		fx->s3_endpoint = s3_sim_start("gcs_sim.py", &fx->s3_sim);
}

static void
rm_rf(const gchar *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const gchar *name;
	if (dir == NULL) {
		g_unlink(path);
		return;
	}
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *child = g_build_filename(path, name, NULL);
		g_chmod(child, 0700);
		rm_rf(child);
	}
	g_rmdir(path);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	g_ptr_array_unref(fx->stores);
	/* let finished worker tasks drop their references */
	while (g_main_context_iteration(NULL, FALSE))
		;
	sfl_memory_backing_unref(fx->backing);
	if (fx->s3_sim != NULL) {
		g_subprocess_force_exit(fx->s3_sim);
		g_subprocess_wait(fx->s3_sim, NULL, NULL);
		g_clear_object(&fx->s3_sim);
	}
	g_free(fx->s3_endpoint);
	rm_rf(fx->tmpdir);
	g_free(fx->tmpdir);
	g_free(fx->path);
}

/* a coordinated-mode store on the fixture's storage (a second call plays a second replica) */
static SflCheckpointStore *
fixture_store(Fixture *fx)
{
	g_autoptr(GError) error = NULL;
	SflCheckpointStore *store = NULL;

	if (fx->kind == KIND_S3) {
		const gchar *env[] = { "AWS_ACCESS_KEY_ID=AKIDSIMULATOR",
				       "AWS_SECRET_ACCESS_KEY=sim/secret+key", "HOME=/nonexistent",
				       NULL };
		g_autoptr(SflAwsCredentialProvider) creds =
			sfl_aws_credential_provider_new(env, NULL, NULL);
		g_autoptr(SflObjectClient) client = sfl_s3_client_new(
			"ckpt", "us-east-1", fx->s3_endpoint, creds, NULL, 10000, &error);
		g_assert_no_error(error);
		store = sfl_object_store_new(client, "sf2loki/state.json");
	} else if (fx->kind == KIND_GCS) {
		g_autofree gchar *emulator =
			g_strdup_printf("STORAGE_EMULATOR_HOST=%s", fx->s3_endpoint);
		const gchar *env[] = { emulator, NULL };
		g_autoptr(SflObjectClient) client =
			sfl_gcs_client_new("ckpt", NULL, env, NULL, 10000, &error);
		g_assert_no_error(error);
		store = sfl_object_store_new(client, "sf2loki/state.json");
	} else if (fx->kind == KIND_FILE) {
		store = sfl_file_store_new(fx->path, FALSE);
	} else {
		store = sfl_memory_store_new(fx->backing);
	}
	g_assert_true(store_open(store, &error));
	g_assert_no_error(error);
	g_ptr_array_add(fx->stores, store);
	return store;
}

static guint
fixture_writes(Fixture *fx, SflCheckpointStore *store)
{
	if (fx->kind == KIND_FILE)
		return sfl_file_store_get_write_count(SFL_FILE_STORE(store));
	if (fx->kind == KIND_S3 || fx->kind == KIND_GCS)
		return sfl_object_store_get_write_count(SFL_OBJECT_STORE(store));
	return sfl_memory_backing_get_write_count(fx->backing);
}

static gboolean
epoch_is(gpointer user_data, guint64 *epoch)
{
	*epoch = *(guint64 *)user_data;
	return TRUE;
}

static gboolean
fence_is(gpointer user_data)
{
	return *(gboolean *)user_data;
}

/* --- the contract --------------------------------------------------------------------------- */

static void
test_basic(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *absent = store_load(store, "pubsub:/event/A", &error);
	g_autofree gchar *a = NULL;
	g_autofree gchar *gone = NULL;
	g_autoptr(GPtrArray) keys = NULL;
	g_autoptr(GPtrArray) keys2 = NULL;

	g_assert_no_error(error);
	g_assert_null(absent);
	g_assert_true(store_commit(store, &error, "pubsub:/event/A", "AAA=", "eventlogfile:Login",
				   "{\"ids\": []}"));
	g_assert_no_error(error);
	a = store_load(store, "pubsub:/event/A", &error);
	g_assert_cmpstr(a, ==, "AAA=");
	keys = store_list(store, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(keys->len, ==, 2);
	g_assert_cmpstr(g_ptr_array_index(keys, 0), ==, "eventlogfile:Login");
	g_assert_true(store_delete(store, "pubsub:/event/A", &error));
	g_assert_no_error(error);
	gone = store_load(store, "pubsub:/event/A", &error);
	g_assert_null(gone);
	/* deleting what is not there succeeds */
	g_assert_true(store_delete(store, "pubsub:/event/A", &error));
	keys2 = store_list(store, &error);
	g_assert_cmpuint(keys2->len, ==, 1);
}

static void
test_one_write_per_commit(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	g_autoptr(SflStateDoc) items = sfl_state_doc_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) keys = NULL;
	g_autofree gchar *v = NULL;
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	guint before = fixture_writes(fx, store);

	for (guint i = 0; i < 10000; i++) {
		g_autofree gchar *key = g_strdup_printf("eventlog_objects:Obj%05u", i);
		g_autofree gchar *value = g_strdup_printf("2026-11-30T00:00:%02u.000Z", i % 60);
		sfl_state_doc_set(items, key, value);
	}
	sfl_checkpoint_store_commit_many_async(store, items, SFL_CHECKPOINT_STORE_NONE, NULL,
					       wait_cb, &w);
	r = wait_result(&w);
	g_assert_true(sfl_checkpoint_store_commit_many_finish(store, r, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(fixture_writes(fx, store) - before, ==, 1);
	keys = store_list(store, &error);
	g_assert_cmpuint(keys->len, ==, 10000);
	v = store_load(store, "eventlog_objects:Obj09999", &error);
	g_assert_cmpstr(v, ==, "2026-11-30T00:00:39.000Z");
}

static void
test_reserved_hidden(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *v = NULL;
	g_autoptr(GPtrArray) keys = NULL;
	g_autoptr(SflStateDoc) snap = NULL;
	guint before = fixture_writes(fx, store);

	v = store_load(store, SFL_STATE_KEY_FENCE_EPOCH, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INTERNAL);
	g_assert_null(v);
	g_clear_error(&error);
	g_assert_false(store_commit(store, &error, "a", "1", SFL_STATE_KEY_FENCE_EPOCH, "99"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INTERNAL);
	g_clear_error(&error);
	g_assert_cmpuint(fixture_writes(fx, store), ==, before);

	g_assert_true(store_commit_flags(store, SFL_CHECKPOINT_STORE_FORCE, &error, "a", "1",
					 SFL_STATE_KEY_FENCE_EPOCH, "3", NULL));
	g_assert_no_error(error);
	keys = store_list(store, &error);
	g_assert_cmpuint(keys->len, ==, 1);
	g_assert_cmpstr(g_ptr_array_index(keys, 0), ==, "a");
	snap = store_snapshot(store, &error);
	g_assert_cmpstr(sfl_state_doc_get(snap, SFL_STATE_KEY_FENCE_EPOCH), ==, "3");
}

static void
test_epoch_fence(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	SflCheckpointStore *other = fixture_store(fx);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) before_doc = NULL;
	g_autoptr(SflStateDoc) after_doc = NULL;
	g_autofree gchar *k = NULL;
	guint64 mine = 6;
	guint64 stored = 0;
	gboolean present = FALSE;
	guint writes;

	/* the newer leader recorded epoch 7 */
	g_assert_true(store_commit_flags(other, SFL_CHECKPOINT_STORE_FORCE, &error, "k", "new",
					 SFL_STATE_KEY_FENCE_EPOCH, "7", NULL));
	g_assert_no_error(error);
	before_doc = store_snapshot(other, &error);

	sfl_checkpoint_store_set_epoch(store, epoch_is, &mine, NULL);
	writes = fixture_writes(fx, store);
	g_assert_false(store_commit(store, &error, "k", "stale"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
	g_assert_nonnull(strstr(error->message, "epoch 6"));
	g_assert_nonnull(strstr(error->message, "epoch 7"));
	g_clear_error(&error);
	/* delete is fenced the same way */
	g_assert_false(store_delete(store, "k", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
	g_clear_error(&error);
	g_assert_cmpuint(fixture_writes(fx, store), ==, writes);
	after_doc = store_snapshot(other, &error);
	g_assert_true(sfl_state_doc_equal(before_doc, after_doc));

	/* a newer writer wins and its epoch is recorded */
	mine = 8;
	g_assert_true(store_commit(store, &error, "k", "eight"));
	g_assert_no_error(error);
	g_assert_true(store_epoch(other, &stored, &present, &error));
	g_assert_true(present);
	g_assert_cmpuint(stored, ==, 8);
	k = store_load(store, "k", &error);
	g_assert_cmpstr(k, ==, "eight");
}

/*
 * Sharding: each work unit is fenced by its own epoch. A stale owner of one unit is refused
 * and changes nothing, the other unit and the store's own epoch are untouched by it, and the
 * store's single-leader hooks do not apply to a unit's commit.
 */
static void
test_unit_fence(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	SflCheckpointStore *other = fixture_store(fx);
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) keys = NULL;
	g_autofree gchar *api = NULL;
	g_autofree gchar *uri = NULL;
	gboolean leader = FALSE;
	guint64 epoch = 0;
	gboolean present = FALSE;
	guint writes;

	/* the single-leader fence says "not leading": a unit's commit does not ask it */
	sfl_checkpoint_store_set_fence(store, fence_is, &leader, NULL);
	g_assert_true(store_commit_unit(other, "eventlogfile:API", 4, &error, "eventlogfile:API",
					"new owner"));
	g_assert_no_error(error);
	g_assert_true(store_commit_unit(store, "eventlogfile:URI", 1, &error, "eventlogfile:URI",
					"uri at 1"));
	g_assert_no_error(error);
	writes = fixture_writes(fx, store);
	g_assert_false(store_commit_unit(store, "eventlogfile:API", 3, &error, "eventlogfile:API",
					 "stale owner"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
	g_assert_nonnull(strstr(error->message, "unit eventlogfile:API"));
	g_assert_nonnull(strstr(error->message, "epoch 4"));
	g_clear_error(&error);
	g_assert_cmpuint(fixture_writes(fx, store), ==, writes);
	/* the same owner again, and a newer one, go through */
	g_assert_true(store_commit_unit(store, "eventlogfile:URI", 1, &error, "eventlogfile:URI",
					"uri again"));
	g_assert_true(store_commit_unit(store, "eventlogfile:API", 5, &error, "eventlogfile:API",
					"newest owner"));
	g_assert_no_error(error);
	sfl_checkpoint_store_reset(other);
	api = store_load(other, "eventlogfile:API", &error);
	uri = store_load(other, "eventlogfile:URI", &error);
	g_assert_cmpstr(api, ==, "newest owner");
	g_assert_cmpstr(uri, ==, "uri again");
	/* per-unit epochs, read fresh; the store's own epoch was never written */
	g_assert_true(store_unit_epoch(other, "eventlogfile:API", &epoch, &present, &error));
	g_assert_true(present);
	g_assert_cmpuint(epoch, ==, 5);
	g_assert_true(store_unit_epoch(other, "eventlogfile:URI", &epoch, &present, &error));
	g_assert_cmpuint(epoch, ==, 1);
	g_assert_true(store_unit_epoch(other, "pubsub:/event/X", &epoch, &present, &error));
	g_assert_false(present);
	g_assert_true(store_epoch(other, &epoch, &present, &error));
	g_assert_false(present);
	/* the unit epochs are the store's own keys: hidden from listings, refused to sources */
	keys = store_list(other, &error);
	g_assert_cmpuint(keys->len, ==, 2);
	g_assert_false(store_commit(store, &error, SFL_STATE_KEY_UNIT_EPOCH_PREFIX "x", "1"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INTERNAL);
	g_assert_nonnull(strstr(error->message, "reserved key"));
}

/* a garbled unit epoch refuses that unit's commits, not the store */
static void
test_unit_fence_corrupt(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	g_autoptr(GError) error = NULL;

	g_assert_true(store_commit_flags(store, SFL_CHECKPOINT_STORE_FORCE, &error,
					 SFL_STATE_KEY_UNIT_EPOCH_PREFIX "apexlog", "seven", NULL));
	g_assert_no_error(error);
	g_assert_false(store_commit_unit(store, "apexlog", 9, &error, "apexlog", "v"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_nonnull(strstr(error->message, "__fence_epoch__:apexlog"));
	g_clear_error(&error);
	g_assert_true(store_commit(store, &error, "other", "fine"));
	g_assert_no_error(error);
	g_assert_true(store_commit_unit(store, "pubsub:/event/A", 2, &error, "pubsub:/event/A",
					"fine too"));
	g_assert_no_error(error);
}

static void
test_fence_check(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	g_autoptr(GError) error = NULL;
	gboolean leader = TRUE;
	guint writes;

	sfl_checkpoint_store_set_fence(store, fence_is, &leader, NULL);
	g_assert_true(store_commit(store, &error, "k", "1"));
	leader = FALSE;
	writes = fixture_writes(fx, store);
	g_assert_false(store_commit(store, &error, "k", "2"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
	g_clear_error(&error);
	g_assert_false(store_delete(store, "k", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
	g_assert_cmpuint(fixture_writes(fx, store), ==, writes);
}

static void
test_persisted_epoch_fresh(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *reader = fixture_store(fx);
	SflCheckpointStore *writer = fixture_store(fx);
	g_autoptr(GError) error = NULL;
	guint64 epoch = 99;
	gboolean present = TRUE;
	guint64 w_epoch = 5;

	g_assert_true(store_epoch(reader, &epoch, &present, &error));
	g_assert_false(present);
	sfl_checkpoint_store_set_epoch(writer, epoch_is, &w_epoch, NULL);
	g_assert_true(store_commit(writer, &error, "x", "1"));
	/* no reset in between: the epoch is read from storage, not a cache */
	g_assert_true(store_epoch(reader, &epoch, &present, &error));
	g_assert_true(present);
	g_assert_cmpuint(epoch, ==, 5);
}

static void
test_stale_writer_never_reverts(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *stale = fixture_store(fx);
	SflCheckpointStore *leader = fixture_store(fx);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = NULL;
	g_autofree gchar *warm = NULL;
	guint64 stale_epoch = 1;
	guint64 leader_epoch = 2;

	/* both replicas have read the document, so both caches hold A=old, B=old */
	g_assert_true(store_commit(stale, &error, "A", "old", "B", "old"));
	warm = store_load(stale, "A", &error);
	g_free(store_load(leader, "A", &error));

	sfl_checkpoint_store_set_epoch(leader, epoch_is, &leader_epoch, NULL);
	g_assert_true(store_commit(leader, &error, "A", "new", "B", "new"));
	g_assert_no_error(error);

	/* with its epoch, the stale replica is fenced */
	sfl_checkpoint_store_set_epoch(stale, epoch_is, &stale_epoch, NULL);
	g_assert_false(store_commit(stale, &error, "C", "stale"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
	g_clear_error(&error);

	/* without any epoch, its write still merges into the fresh document */
	sfl_checkpoint_store_set_epoch(stale, NULL, NULL, NULL);
	g_assert_true(store_commit(stale, &error, "C", "stale"));
	g_assert_no_error(error);

	doc = store_snapshot(leader, &error);
	g_assert_cmpstr(sfl_state_doc_get(doc, "A"), ==, "new");
	g_assert_cmpstr(sfl_state_doc_get(doc, "B"), ==, "new");
	g_assert_cmpstr(sfl_state_doc_get(doc, "C"), ==, "stale");
	g_assert_cmpstr(sfl_state_doc_get(doc, SFL_STATE_KEY_FENCE_EPOCH), ==, "2");
}

static void
test_reset_rereads(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *a = fixture_store(fx);
	SflCheckpointStore *b = fixture_store(fx);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *v1 = NULL;
	g_autofree gchar *v2 = NULL;
	g_autofree gchar *v3 = NULL;

	g_assert_true(store_commit(a, &error, "k", "1"));
	v1 = store_load(b, "k", &error);
	g_assert_cmpstr(v1, ==, "1");
	g_assert_true(store_commit(a, &error, "k", "2"));
	/* b serves its cache until reset, as the demotion path relies on */
	v2 = store_load(b, "k", &error);
	g_assert_cmpstr(v2, ==, "1");
	sfl_checkpoint_store_reset(b);
	v3 = store_load(b, "k", &error);
	g_assert_cmpstr(v3, ==, "2");
}

static void
test_call_order(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	g_autoptr(SflStateDoc) items = sfl_state_doc_new();
	Wait wc = { 0 };
	Wait wl = { 0 };
	g_autoptr(GAsyncResult) rc = NULL;
	g_autoptr(GAsyncResult) rl = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *v = NULL;

	/* a load queued behind a commit sees the commit */
	sfl_state_doc_set(items, "k", "queued");
	sfl_checkpoint_store_commit_many_async(store, items, SFL_CHECKPOINT_STORE_NONE, NULL,
					       wait_cb, &wc);
	sfl_checkpoint_store_load_async(store, "k", NULL, wait_cb, &wl);
	rl = wait_result(&wl);
	rc = wait_result(&wc);
	g_assert_true(sfl_checkpoint_store_commit_many_finish(store, rc, &error));
	v = sfl_checkpoint_store_load_finish(store, rl, &error);
	g_assert_cmpstr(v, ==, "queued");
}

static void
test_cancelled(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *v = NULL;

	g_cancellable_cancel(cancellable);
	sfl_checkpoint_store_load_async(store, "k", cancellable, wait_cb, &w);
	r = wait_result(&w);
	v = sfl_checkpoint_store_load_finish(store, r, &error);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* --- the file store's own duties ------------------------------------------------------------ */

static gchar *
read_text(const gchar *path)
{
	gchar *text = NULL;
	g_autoptr(GError) error = NULL;
	g_file_get_contents(path, &text, NULL, &error);
	g_assert_no_error(error);
	return text;
}

static void
test_file_format(Fixture *fx, gconstpointer data)
{
	SflCheckpointStore *store = fixture_store(fx);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *dir = g_path_get_dirname(fx->path);
	GStatBuf st;

	g_assert_true(
		store_commit(store, &error, "b", "1", "a", "caf\xc3\xa9 \"q\"\n\xf0\x9f\x98\x80"));
	text = read_text(fx->path);
	/* byte for byte what Python's json.dumps writes: insertion order, ASCII escapes */
	g_assert_cmpstr(text, ==,
			"{\"b\": \"1\", \"a\": \"caf\\u00e9 \\\"q\\\"\\n\\ud83d\\ude00\"}");
	g_assert_cmpint(g_stat(fx->path, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 0777, ==, 0600);
	g_assert_cmpint(g_stat(dir, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 0777, ==, 0700);
}

static void
test_file_reads_python_document(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *dir = g_path_get_dirname(fx->path);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *v = NULL;
	SflCheckpointStore *store;

	/* a document the original wrote, with an escaped non-ASCII value */
	g_mkdir_with_parents(dir, 0700);
	g_file_set_contents(
		fx->path,
		"{\"pubsub:/event/LoginEventStream\": \"AAAAAAAtR2A=\", "
		"\"eventlog_objects:LoginEvent\": \"{\\\"ids\\\": [\\\"0Yw\\\"], "
		"\\\"last_ts\\\": \\\"2026-11-29T10:00:00.000Z\\\"}\", \"x\": \"\\u00e9\"}",
		-1, &error);
	store = fixture_store(fx);
	v = store_load(store, "x", &error);
	g_assert_no_error(error);
	g_assert_cmpstr(v, ==, "\xc3\xa9");
}

static void
corrupt_case(Fixture *fx, const gchar *contents, const gchar *needle)
{
	g_autofree gchar *dir = g_path_get_dirname(fx->path);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autofree gchar *after = NULL;
	gboolean ok;

	g_mkdir_with_parents(dir, 0700);
	g_file_set_contents(fx->path, contents, -1, &error);
	store = sfl_file_store_new(fx->path, FALSE);
	ok = store_open(store, &error);
	g_assert_false(ok);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_nonnull(strstr(error->message, fx->path));
	if (strstr(error->message, needle) == NULL)
		g_error("'%s' not in '%s'", needle, error->message);
	g_clear_error(&error);
	/* a write on top is refused too, and the file is left exactly as it was */
	g_assert_false(store_commit(store, &error, "k", "v"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	after = read_text(fx->path);
	g_assert_cmpstr(after, ==, contents);
}

static void
test_file_corrupt(Fixture *fx, gconstpointer data)
{
	corrupt_case(fx, "{\"a\": \"1\", \"b\": ", "at byte");
	corrupt_case(fx, "[\"a\", \"b\"]", "an array, not a JSON object");
	corrupt_case(fx, "{\"a\": 1}", "key 'a' is a number, not a string");
	corrupt_case(fx, "{\"a\": \"\xff\"}", "invalid JSON");
	corrupt_case(fx, "{\"__fence_epoch__\": \"seven\", \"a\": \"1\"}", "not a decimal integer");
}

static void
test_file_directory_at_path(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCheckpointStore) store = NULL;

	g_mkdir_with_parents(fx->path, 0700);
	store = sfl_file_store_new(fx->path, FALSE);
	g_assert_false(store_open(store, &error));
	/* an I/O error, never an empty document */
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, fx->path));
	g_assert_true(g_file_test(fx->path, G_FILE_TEST_IS_DIR));
}

static void
test_file_unreadable(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *dir = g_path_get_dirname(fx->path);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCheckpointStore) store = NULL;

	gboolean was_root = geteuid() == 0;
	gboolean opened;

	g_mkdir_with_parents(dir, 0711);
	g_chmod(fx->tmpdir, 0711);
	g_file_set_contents(fx->path, "{\"a\": \"1\"}", -1, NULL);
	g_chmod(fx->path, 0);
	/* root reads anything: act as nobody (effective uid only, so cleanup can return) */
	if (was_root && seteuid(65534) != 0) {
		g_test_skip("cannot drop to uid 65534 to provoke a permission error");
		return;
	}
	store = sfl_file_store_new(fx->path, FALSE);
	opened = store_open(store, &error);
	if (was_root)
		g_assert_cmpint(seteuid(0), ==, 0);
	g_assert_false(opened);
	/* access refused is told apart from other I/O errors, as a 403 of a bucket is */
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message, fx->path));
}

static void
test_file_exclusive_lock(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCheckpointStore) first = sfl_file_store_new(fx->path, TRUE);
	g_autoptr(SflCheckpointStore) second = sfl_file_store_new(fx->path, TRUE);
	g_autoptr(SflCheckpointStore) third = NULL;
	g_autofree gchar *pid = g_strdup_printf("%d", (int)getpid());
	gpointer gone = NULL;
	gint64 deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

	g_assert_true(store_open(first, &error));
	g_assert_no_error(error);
	g_assert_false(store_open(second, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
	g_assert_nonnull(strstr(error->message, "state.json.lock"));
	g_assert_nonnull(strstr(error->message, pid));
	g_clear_error(&error);

	/* the lock goes with the store; its last reference may be a worker's, dropped a bit later
	 */
	g_object_add_weak_pointer(G_OBJECT(first), (gpointer *)&gone);
	gone = first;
	g_clear_object(&first);
	while (gone != NULL) {
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_main_context_iteration(NULL, FALSE);
		g_thread_yield();
	}
	third = sfl_file_store_new(fx->path, TRUE);
	g_assert_true(store_open(third, &error));
	g_assert_no_error(error);
}

/*
 * Replicas under a coordinator share the file (found by tests/ha): a writer frozen between its
 * fence check and its rename must not be able to rename an older document over a newer
 * leader's when it wakes. The read, the check and the rename happen under <path>.write.lock;
 * another writer meanwhile gets a transient error and the document stays as it was.
 */
static void
test_file_shared_write_lock(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCheckpointStore) a = sfl_file_store_new(fx->path, FALSE);
	g_autoptr(SflCheckpointStore) b = sfl_file_store_new(fx->path, FALSE);
	g_autofree gchar *lock_path = g_strconcat(fx->path, ".write.lock", NULL);
	g_autofree gchar *value = NULL;
	SflPlatformLock *frozen = NULL;
	SflPlatformError perr = { 0 };
	int64_t holder = 0;

	g_assert_true(store_open(a, &error));
	g_assert_true(store_open(b, &error));
	g_assert_true(store_commit(a, &error, "k", "1"));
	g_assert_no_error(error);

	/* a writer in the middle of its step (here: a handle of our own on the lock) */
	g_assert_cmpint(sfl_platform_lock_acquire(lock_path, &frozen, &holder, &perr), ==,
			SFL_PLATFORM_OK);
	g_assert_false(store_commit(b, &error, "k", "2"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
	g_assert_nonnull(strstr(error->message, "being written by another replica"));
	g_clear_error(&error);
	value = store_load(a, "k", &error);
	g_assert_cmpstr(value, ==, "1");
	g_clear_pointer(&value, g_free);

	/* it finished: the retry goes through */
	sfl_platform_lock_release(frozen);
	g_assert_true(store_commit(b, &error, "k", "2"));
	g_assert_no_error(error);
	sfl_checkpoint_store_reset(a);
	value = store_load(a, "k", &error);
	g_assert_cmpstr(value, ==, "2");

	/* an exclusive daemon's <path>.lock does not stop a shared (forced) writer */
	{
		g_autoptr(SflCheckpointStore) daemon = NULL;
		g_autoptr(SflCheckpointStore) shared = sfl_file_store_new(fx->path, FALSE);

		g_clear_object(&a);
		g_clear_object(&b);
		daemon = sfl_file_store_new(fx->path, TRUE);
		while (!store_open(daemon, &error)) {
			/* the shared stores' workers may still hold their references a moment */
			g_assert_error(error, SFL_ERROR, SFL_ERROR_CONFLICT);
			g_clear_error(&error);
			g_main_context_iteration(NULL, FALSE);
			g_thread_yield();
		}
		g_assert_true(store_open(shared, &error));
		g_assert_true(store_commit(shared, &error, "k", "3"));
		g_assert_no_error(error);
	}
}

/* the child of the crash test: commit ten keys per write, forever, until killed */
static int
crash_child(const gchar *path)
{
	g_autoptr(SflCheckpointStore) store = sfl_file_store_new(path, TRUE);
	g_autoptr(GError) error = NULL;

	if (!store_open(store, &error)) {
		g_printerr("child: %s\n", error->message);
		return 3;
	}
	for (guint64 i = 0;; i++) {
		g_autoptr(SflStateDoc) items = sfl_state_doc_new();
		Wait w = { 0 };
		g_autoptr(GAsyncResult) r = NULL;
		g_autofree gchar *value = g_strdup_printf("v%" G_GUINT64_FORMAT, i);

		for (guint k = 0; k < 10; k++) {
			g_autofree gchar *key = g_strdup_printf("key%u", k);
			sfl_state_doc_set(items, key, value);
		}
		sfl_checkpoint_store_commit_many_async(store, items, SFL_CHECKPOINT_STORE_NONE,
						       NULL, wait_cb, &w);
		r = wait_result(&w);
		if (!sfl_checkpoint_store_commit_many_finish(store, r, &error)) {
			g_printerr("child: %s\n", error->message);
			return 4;
		}
		/* one byte per durable commit: the parent kills after a count, not a delay */
		fputs("C", stdout);
		fflush(stdout);
	}
	return 0;
}

static const gchar *self_exe;

static void
test_file_crash_safety(Fixture *fx, gconstpointer data)
{
	const guint kills = 60;
	g_autoptr(GRand) rand = g_rand_new_with_seed(42);
	g_autofree gchar *last_seen = NULL;

	for (guint n = 0; n < kills; n++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(GSubprocess) child = NULL;
		g_autoptr(SflStateDoc) doc = NULL;
		g_autofree gchar *text = NULL;
		gchar started = 0;
		gint steps;
		gsize len = 0;
		const gchar *first;

		child = g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, self_exe,
					 "--crash-child", fx->path, NULL);
		g_assert_no_error(error);
		/*
		 * block until the child reports 1–4 durable commits (EOF: it died), then kill it:
		 * SIGKILL races with its next commit, so it lands in the middle of writes
		 */
		steps = g_rand_int_range(rand, 1, 5);
		for (gint k = 0; k < steps; k++) {
			g_input_stream_read_all(g_subprocess_get_stdout_pipe(child), &started, 1,
						&len, NULL, &error);
			g_assert_no_error(error);
			g_assert_cmpint(started, ==, 'C');
		}
		g_subprocess_force_exit(child);
		g_subprocess_wait(child, NULL, &error);
		g_assert_no_error(error);
		g_assert_true(g_subprocess_get_if_signaled(child));

		g_assert_true(g_file_get_contents(fx->path, &text, &len, &error));
		doc = sfl_state_doc_parse(text, len, fx->path, &error);
		g_assert_no_error(error);
		g_assert_cmpuint(sfl_state_doc_size(doc), ==, 10);
		/* one commit_many is one write: every key carries the same committed value */
		first = sfl_state_doc_get(doc, "key0");
		g_assert_true(g_str_has_prefix(first, "v"));
		for (guint k = 0; k < 10; k++) {
			g_autofree gchar *key = g_strdup_printf("key%u", k);
			g_assert_cmpstr(sfl_state_doc_get(doc, key), ==, first);
		}
		g_free(last_seen);
		last_seen = g_strdup(first);
	}
	g_test_message("%u kills, last value %s", kills, last_seen);
}

/*
 * A file system without working locks (NFS without lockd): the lock call itself fails with
 * ENOLCK, EOPNOTSUPP or ENOSYS. The platform layer's contract for that is played by a fake
 * lock function; the store must commit all the same, warn once naming the path, stop asking,
 * and still refuse a stale epoch (docs/deployment/state.md). Any other lock error stays an error.
 */
static gint fake_lock_errno;
static gint fake_lock_calls;
static GMutex warnings_lock;
static GPtrArray *warnings; /* (element-type utf8): the file store's warnings */

static SflPlatformStatus
fake_lock_acquire(const char *path, SflPlatformLock **out_lock, int64_t *holder_pid,
		  SflPlatformError *error)
{
	gint code = g_atomic_int_get(&fake_lock_errno);
	SflPlatformStatus status = code == ENOLCK || code == EOPNOTSUPP || code == ENOSYS
					   ? SFL_PLATFORM_ERR_UNSUPPORTED
					   : SFL_PLATFORM_ERR_IO;

	/* 0: the file system locks after all */
	if (code == 0)
		return sfl_platform_lock_acquire(path, out_lock, holder_pid, error);
	g_atomic_int_inc(&fake_lock_calls);
	*out_lock = NULL;
	if (holder_pid != NULL)
		*holder_pid = 0;
	error->status = status;
	error->os_code = code;
	error->access_denied = code == EACCES;
	g_snprintf(error->message, sizeof(error->message), "cannot lock %s: %s", path,
		   g_strerror(code));
	return status;
}

static guint
warnings_count(void)
{
	guint n;

	g_mutex_lock(&warnings_lock);
	n = warnings->len;
	g_mutex_unlock(&warnings_lock);
	return n;
}

static gchar *
warnings_last(void)
{
	gchar *last = NULL;

	g_mutex_lock(&warnings_lock);
	if (warnings->len > 0)
		last = g_strdup(g_ptr_array_index(warnings, warnings->len - 1));
	g_mutex_unlock(&warnings_lock);
	return last;
}

/* the store warns from its worker thread; anything else still goes the default (fatal) way */
static GLogWriterOutput
test_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	const gchar *domain = NULL;
	const gchar *message = NULL;

	for (gsize i = 0; i < n_fields; i++) {
		if (g_str_equal(fields[i].key, "GLIB_DOMAIN"))
			domain = fields[i].value;
		else if (g_str_equal(fields[i].key, "MESSAGE"))
			message = fields[i].value;
	}
	if ((level & G_LOG_LEVEL_WARNING) && g_strcmp0(domain, "SflFileStore") == 0 &&
	    message != NULL) {
		g_mutex_lock(&warnings_lock);
		g_ptr_array_add(warnings, g_strdup(message));
		g_mutex_unlock(&warnings_lock);
		return G_LOG_WRITER_HANDLED;
	}
	return g_log_writer_default(level, fields, n_fields, user_data);
}

static SflCheckpointStore *
lockless_store(const gchar *path, gboolean exclusive)
{
	SflCheckpointStore *store = sfl_file_store_new(path, exclusive);

	sfl_file_store_set_lock_func(SFL_FILE_STORE(store), fake_lock_acquire);
	return store;
}

static void
test_file_lockless(Fixture *fx, gconstpointer data)
{
	const gint codes[] = { ENOLCK, EOPNOTSUPP, ENOSYS };

	for (gsize i = 0; i < G_N_ELEMENTS(codes); i++) {
		g_autofree gchar *path =
			g_strdup_printf("%s/lockless-%d/state.json", fx->tmpdir, codes[i]);
		g_autoptr(SflCheckpointStore) store = lockless_store(path, FALSE);
		g_autoptr(SflCheckpointStore) leader = lockless_store(path, FALSE);
		g_autoptr(SflCheckpointStore) exclusive = lockless_store(path, TRUE);
		g_autoptr(SflStateDoc) doc = NULL;
		g_autoptr(GError) error = NULL;
		g_autofree gchar *warning = NULL;
		guint64 stale_epoch = 6;
		guint64 leader_epoch = 7;
		guint before = warnings_count();

		g_test_message("lock failing with %s", g_strerror(codes[i]));
		g_atomic_int_set(&fake_lock_errno, codes[i]);
		g_atomic_int_set(&fake_lock_calls, 0);
		g_assert_true(store_open(store, &error));
		g_assert_no_error(error);
		/* commits land; the lock is asked for once and the warning comes once */
		g_assert_true(store_commit(store, &error, "k", "1"));
		g_assert_no_error(error);
		g_assert_true(store_commit(store, &error, "k", "2", "j", "1"));
		g_assert_no_error(error);
		g_assert_cmpint(g_atomic_int_get(&fake_lock_calls), ==, 1);
		g_assert_cmpuint(warnings_count(), ==, before + 1);
		warning = warnings_last();
		g_assert_nonnull(strstr(warning, path));
		g_assert_nonnull(strstr(warning, "without the write lock"));
		g_assert_cmpuint(sfl_file_store_get_write_count(SFL_FILE_STORE(store)), ==, 2);

		/* the fence still holds without the lock: a newer leader's epoch refuses ours */
		g_assert_true(store_open(leader, &error));
		sfl_checkpoint_store_set_epoch(leader, epoch_is, &leader_epoch, NULL);
		g_assert_true(store_commit(leader, &error, "k", "leader"));
		g_assert_no_error(error);
		sfl_checkpoint_store_set_epoch(store, epoch_is, &stale_epoch, NULL);
		g_assert_false(store_commit(store, &error, "k", "stale"));
		g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
		g_clear_error(&error);
		doc = store_snapshot(leader, &error);
		g_assert_cmpstr(sfl_state_doc_get(doc, "k"), ==, "leader");
		g_assert_cmpstr(sfl_state_doc_get(doc, "j"), ==, "1");
		g_assert_cmpstr(sfl_state_doc_get(doc, SFL_STATE_KEY_FENCE_EPOCH), ==, "7");

		/* the lifetime lock of exclusive mode is what keeps a second daemon out: refused */
		g_assert_false(store_open(exclusive, &error));
		g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
		g_assert_nonnull(strstr(error->message, "cannot lock files"));
	}
}

/* a sharded group's replicas commit at once: without locks a commit fails, it never races */
static void
test_file_lockless_concurrent(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = lockless_store(fx->path, FALSE);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = NULL;

	sfl_file_store_set_concurrent(SFL_FILE_STORE(store), TRUE);
	/* opened on a file system that locks, which stops locking later (a remount) */
	g_atomic_int_set(&fake_lock_errno, 0);
	g_assert_true(store_open(store, &error));
	g_assert_no_error(error);
	g_atomic_int_set(&fake_lock_errno, ENOLCK);
	g_atomic_int_set(&fake_lock_calls, 0);
	g_assert_false(store_commit(store, &error, "k", "1"));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "coordinate.sharding.enabled"));
	g_assert_nonnull(strstr(error->message, fx->path));
	g_clear_error(&error);
	/* asked again at the next commit, and refused again: nothing was written */
	g_assert_false(store_commit(store, &error, "k", "2"));
	g_clear_error(&error);
	g_assert_cmpint(g_atomic_int_get(&fake_lock_calls), ==, 2);
	/* and a start-up there is refused at once, naming why */
	{
		g_autoptr(SflCheckpointStore) fresh = lockless_store(fx->path, FALSE);

		sfl_file_store_set_concurrent(SFL_FILE_STORE(fresh), TRUE);
		g_assert_false(store_open(fresh, &error));
		g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
		g_assert_nonnull(strstr(error->message, "sharded group"));
		g_clear_error(&error);
	}
	g_assert_cmpuint(sfl_file_store_get_write_count(SFL_FILE_STORE(store)), ==, 0);
	doc = store_snapshot(store, &error);
	g_assert_no_error(error);
	g_assert_null(sfl_state_doc_get(doc, "k"));
}

static void
test_file_lock_denied(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflCheckpointStore) store = lockless_store(fx->path, FALSE);
	g_autoptr(GError) error = NULL;
	guint before = warnings_count();

	g_atomic_int_set(&fake_lock_errno, EACCES);
	g_atomic_int_set(&fake_lock_calls, 0);
	g_assert_true(store_open(store, &error));
	/* every commit asks again, and fails: access refused is no missing lock support */
	for (guint i = 1; i <= 2; i++) {
		g_assert_false(store_commit(store, &error, "k", "1"));
		g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
		g_assert_nonnull(strstr(error->message, fx->path));
		g_clear_error(&error);
		g_assert_cmpint(g_atomic_int_get(&fake_lock_calls), ==, (gint)i);
	}
	g_assert_cmpuint(sfl_file_store_get_write_count(SFL_FILE_STORE(store)), ==, 0);
	g_assert_false(g_file_test(fx->path, G_FILE_TEST_EXISTS));
	g_assert_cmpuint(warnings_count(), ==, before);
}

int
main(int argc, char **argv)
{
	const struct {
		const gchar *name;
		StoreKind kind;
	} kinds[] = { { "memory", KIND_MEMORY },
		      { "file", KIND_FILE },
		      { "s3", KIND_S3 },
		      { "gcs", KIND_GCS } };
	const struct {
		const gchar *name;
		void (*func)(Fixture *, gconstpointer);
	} contract[] = {
		{ "basic", test_basic },
		{ "one-write-per-commit", test_one_write_per_commit },
		{ "reserved-hidden", test_reserved_hidden },
		{ "epoch-fence", test_epoch_fence },
		{ "fence-check", test_fence_check },
		{ "unit-fence", test_unit_fence },
		{ "unit-fence-corrupt", test_unit_fence_corrupt },
		{ "persisted-epoch-fresh", test_persisted_epoch_fresh },
		{ "stale-writer-never-reverts", test_stale_writer_never_reverts },
		{ "reset-rereads", test_reset_rereads },
		{ "call-order", test_call_order },
		{ "cancelled", test_cancelled },
	};

	if (argc == 3 && g_str_equal(argv[1], "--crash-child"))
		return crash_child(argv[2]);
	self_exe = argv[0];

	g_test_init(&argc, &argv, NULL);
	warnings = g_ptr_array_new_with_free_func(g_free);
	g_log_set_writer_func(test_writer, NULL, NULL);
	for (gsize k = 0; k < G_N_ELEMENTS(kinds); k++) {
		for (gsize c = 0; c < G_N_ELEMENTS(contract); c++) {
			g_autofree gchar *path = g_strdup_printf("/sfl/store/%s/%s", kinds[k].name,
								 contract[c].name);
			g_test_add(path, Fixture, GINT_TO_POINTER(kinds[k].kind), fixture_setup,
				   contract[c].func, fixture_teardown);
		}
	}
#define FILE_TEST(name, func)                                                                      \
	g_test_add("/sfl/store/file-only/" name, Fixture, GINT_TO_POINTER(KIND_FILE),              \
		   fixture_setup, func, fixture_teardown)
	FILE_TEST("format", test_file_format);
	FILE_TEST("reads-python-document", test_file_reads_python_document);
	FILE_TEST("corrupt", test_file_corrupt);
	FILE_TEST("directory-at-path", test_file_directory_at_path);
	FILE_TEST("unreadable", test_file_unreadable);
	FILE_TEST("exclusive-lock", test_file_exclusive_lock);
	FILE_TEST("shared-write-lock", test_file_shared_write_lock);
	FILE_TEST("lockless-file-system", test_file_lockless);
	FILE_TEST("lockless-file-system-concurrent", test_file_lockless_concurrent);
	FILE_TEST("lock-denied", test_file_lock_denied);
	FILE_TEST("crash-safety", test_file_crash_safety);
	return g_test_run();
}
