/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestFileLease"

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "sfl-error.h"
#include "sfl-file-lease-coordinator.h"
#include "sfl-lease-io-private.h"
#include "sfl-memory-store.h"
#include "sfl-test-coordinator.h"

/*
 * The file-lease coordinator on a fake clock and a fault-injecting in-memory lease (no real
 * timers, no sleeps), the lease I/O seam on real files, and a two-replica race on a real file
 * with the real clock (waiting on conditions with deadlines).
 */

/* 2026-11-30T03:00:00Z */
#define WALL_START ((gint64)1796007600 * G_USEC_PER_SEC)
#define SEC	   G_USEC_PER_SEC
#define MSEC	   ((gint64)1000)
#define TTL	   (30 * SEC)
#define RENEW	   (10 * SEC)
#define STEP	   (10 * MSEC)
#define ME	   "replica-b"
#define OTHER	   "replica-a"

/* --- warnings are part of the contract: record them instead of aborting ------------------- */

static GPtrArray *warnings; /* (element-type utf8) */

#define count_warnings sfl_test_warnings_count

/* --- a lease "file" in memory with scripted faults ------------------------------------------ */

#define FAKE_TYPE_LEASE_IO (fake_lease_io_get_type())
G_DECLARE_FINAL_TYPE(FakeLeaseIO, fake_lease_io, FAKE, LEASE_IO, SflLeaseIO)

struct _FakeLeaseIO {
	SflLeaseIO parent_instance;
	GBytes *bytes;	    /* the file; NULL when absent */
	guint reads;	    /* read attempts that reached the "disk" */
	guint writes;	    /* write attempts that reached the "disk" */
	guint fail_reads;   /* the next N reads cannot tell */
	guint fail_writes;  /* the next N writes fail */
	guint hang_reads;   /* the next N reads never complete until released */
	guint hang_writes;  /* the next N writes never complete (nor land) until released */
	GBytes *land;	    /* a competitor's write that lands right after ... */
	guint land_after;   /* ... this many more reads (0: none pending) */
	GPtrArray *hung;    /* (element-type GTask) */
	guint delay_writes; /* the next N writes land at once, their answer waits for ... */
	GPtrArray *delayed; /* ... fake_lease_io_answer() (element-type GTask) */
};

G_DEFINE_TYPE(FakeLeaseIO, fake_lease_io, SFL_TYPE_LEASE_IO)

static void
fake_lease_io_read_async(SflLeaseIO *io, GCancellable *cancellable, GAsyncReadyCallback callback,
			 gpointer user_data)
{
	FakeLeaseIO *self = FAKE_LEASE_IO(io);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
	g_autoptr(SflLeaseDoc) doc = sfl_lease_doc_new();

	self->reads++;
	if (self->hang_reads > 0) {
		self->hang_reads--;
		g_ptr_array_add(self->hung, g_steal_pointer(&task));
		return;
	}
	if (self->fail_reads > 0) {
		self->fail_reads--;
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"injected read error");
		return;
	}
	if (self->bytes != NULL) {
		gsize len = 0;
		const gchar *data = g_bytes_get_data(self->bytes, &len);
		sfl_lease_doc_parse(data, len, doc);
	}
	if (self->land_after > 0 && --self->land_after == 0) {
		g_clear_pointer(&self->bytes, g_bytes_unref);
		self->bytes = g_steal_pointer(&self->land);
	}
	g_task_return_pointer(task, g_steal_pointer(&doc), (GDestroyNotify)sfl_lease_doc_free);
}

static gboolean
fake_lease_io_read_finish(SflLeaseIO *io, GAsyncResult *result, SflLeaseDoc *doc, GError **error)
{
	g_autoptr(SflLeaseDoc) got = g_task_propagate_pointer(G_TASK(result), error);

	sfl_lease_doc_clear(doc);
	if (got == NULL)
		return FALSE;
	*doc = *got;
	got->holder = NULL;
	return TRUE;
}

static void
fake_lease_io_write_async(SflLeaseIO *io, GBytes *data, GCancellable *cancellable,
			  GAsyncReadyCallback callback, gpointer user_data)
{
	FakeLeaseIO *self = FAKE_LEASE_IO(io);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);

	self->writes++;
	if (self->hang_writes > 0) {
		self->hang_writes--;
		g_ptr_array_add(self->hung, g_steal_pointer(&task));
		return;
	}
	if (self->fail_writes > 0) {
		self->fail_writes--;
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"injected write error");
		return;
	}
	g_clear_pointer(&self->bytes, g_bytes_unref);
	self->bytes = g_bytes_ref(data);
	if (self->delay_writes > 0) {
		self->delay_writes--;
		g_ptr_array_add(self->delayed, g_steal_pointer(&task));
		return;
	}
	g_task_return_boolean(task, TRUE);
}

/* the answers of the delayed writes, which landed when they were issued */
static void
fake_lease_io_answer(FakeLeaseIO *self)
{
	g_autoptr(GPtrArray) delayed = g_steal_pointer(&self->delayed);

	self->delayed = g_ptr_array_new_with_free_func(g_object_unref);
	for (guint i = 0; i < delayed->len; i++)
		g_task_return_boolean(g_ptr_array_index(delayed, i), TRUE);
}

static gboolean
fake_lease_io_write_finish(SflLeaseIO *io, GAsyncResult *result, GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

/* completes every hung operation, late, with an error */
static void
fake_lease_io_release(FakeLeaseIO *self)
{
	g_autoptr(GPtrArray) hung = g_steal_pointer(&self->hung);

	self->hung = g_ptr_array_new_with_free_func(g_object_unref);
	for (guint i = 0; i < hung->len; i++) {
		g_task_return_new_error(g_ptr_array_index(hung, i), SFL_ERROR, SFL_ERROR_TRANSIENT,
					"released late");
	}
}

static void
fake_lease_io_finalize(GObject *object)
{
	FakeLeaseIO *self = FAKE_LEASE_IO(object);

	g_assert_cmpuint(self->hung->len, ==, 0);
	g_assert_cmpuint(self->delayed->len, ==, 0);
	g_ptr_array_unref(self->hung);
	g_ptr_array_unref(self->delayed);
	g_clear_pointer(&self->bytes, g_bytes_unref);
	g_clear_pointer(&self->land, g_bytes_unref);
	G_OBJECT_CLASS(fake_lease_io_parent_class)->finalize(object);
}

static void
fake_lease_io_class_init(FakeLeaseIOClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflLeaseIOClass *io_class = SFL_LEASE_IO_CLASS(klass);

	object_class->finalize = fake_lease_io_finalize;
	io_class->read_async = fake_lease_io_read_async;
	io_class->read_finish = fake_lease_io_read_finish;
	io_class->write_async = fake_lease_io_write_async;
	io_class->write_finish = fake_lease_io_write_finish;
}

static void
fake_lease_io_init(FakeLeaseIO *self)
{
	self->hung = g_ptr_array_new_with_free_func(g_object_unref);
	self->delayed = g_ptr_array_new_with_free_func(g_object_unref);
}

/* --- the fixture: one coordinator on the fake clock and the fake lease --------------------- */

typedef struct {
	SflTestFakeTime time;
	SflClock *clock; /* time's */ /* monotonic at setup: test times are relative to it */
	FakeLeaseIO *io;
	SflTestCoord c; /* the run as the callbacks reported it */
	/* epoch floor */
	SflMemoryBacking *backing;
	SflCheckpointStore *store;
	guint floor_pending; /* store reads in worker threads */
	guint floor_calls;
} Fixture;

#define advance(f, usec)		 sfl_test_fake_time_advance(&(f)->time, (usec))
#define elapsed(f)			 sfl_test_fake_time_elapsed(&(f)->time)
#define advance_until(f, cond, max_usec) SFL_TEST_ADVANCE_UNTIL(&(f)->time, cond, max_usec)

static void drain_cb(gpointer data);

static void
fixture_setup(Fixture *f, gconstpointer user_data)
{
	sfl_test_fake_time_init(&f->time, WALL_START, STEP, drain_cb, f);
	f->clock = f->time.clock;
	f->io = g_object_new(FAKE_TYPE_LEASE_IO, NULL);
	f->backing = sfl_memory_backing_new();
	f->store = sfl_memory_store_new(f->backing);
	g_ptr_array_set_size(warnings, 0);
	sfl_test_coord_init(&f->c, drain_cb, f);
}

/* runs everything that is due now, and waits for worker threads the loop is waiting on */
static void
drain(Fixture *f)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	for (;;) {
		while (g_main_context_iteration(NULL, FALSE))
			;
		if (f->floor_pending == 0)
			return;
		if (g_get_monotonic_time() > deadline)
			g_error("a store read did not complete within 30 s");
		g_main_context_iteration(NULL, TRUE);
	}
}

static void
drain_cb(gpointer data)
{
	drain(data);
}

/* advances to @t after the fixture's start */
static void
advance_to(Fixture *f, gint64 t)
{
	g_assert_cmpint(t, >=, elapsed(f));
	advance(f, t - elapsed(f));
}

static void
fixture_start_with(Fixture *f, gint64 ttl, gint64 renew)
{
	sfl_test_coord_start(&f->c, sfl_file_lease_coordinator_new(NULL, ttl, renew, ME, f->clock,
								   SFL_LEASE_IO(f->io)));
}

static void
fixture_start(Fixture *f)
{
	fixture_start_with(f, TTL, RENEW);
}

static void
fixture_stop(Fixture *f)
{
	sfl_test_coord_stop(&f->c);
}

/* stops the run and drops the coordinator, checking that nothing keeps it alive */
static void
fixture_finish(Fixture *f)
{
	SflCoordinator *weak = f->c.coord;

	if (f->c.coord == NULL)
		return;
	if (f->c.running)
		fixture_stop(f);
	g_clear_object(&f->c.run);
	fake_lease_io_release(f->io);
	drain(f);
	g_object_add_weak_pointer(G_OBJECT(weak), (gpointer *)&weak);
	g_clear_object(&f->c.coord);
	g_assert_null(weak);
	f->c.leading = FALSE;
	f->c.last_acquired_epoch = 0;
}

static void
fixture_teardown(Fixture *f, gconstpointer user_data)
{
	fixture_finish(f);
	g_clear_object(&f->io);
	g_clear_object(&f->store);
	g_clear_pointer(&f->backing, sfl_memory_backing_unref);
	sfl_test_fake_time_clear(&f->time);
}

static gboolean
is_leader(Fixture *f)
{
	return sfl_coordinator_is_leader(f->c.coord);
}

/* the fake's file, as text and as a lease */

static void
disk_set_raw(Fixture *f, const gchar *text)
{
	g_clear_pointer(&f->io->bytes, g_bytes_unref);
	if (text != NULL)
		f->io->bytes = g_bytes_new(text, strlen(text));
}

static void
disk_set(Fixture *f, const gchar *holder, gint64 expires_usec, guint64 epoch)
{
	g_autofree gchar *text = sfl_lease_doc_serialize(holder, expires_usec, epoch, NULL);
	disk_set_raw(f, text);
}

static void
disk_get(Fixture *f, SflLeaseDoc *doc)
{
	gsize len = 0;
	const gchar *data;

	sfl_lease_doc_clear(doc);
	if (f->io->bytes == NULL)
		return;
	data = g_bytes_get_data(f->io->bytes, &len);
	sfl_lease_doc_parse(data, len, doc);
}

static void
assert_disk(Fixture *f, const gchar *holder, gint64 expires_usec, guint64 epoch)
{
	g_auto(SflLeaseDoc) doc = { 0 };

	disk_get(f, &doc);
	g_assert_cmpint(doc.state, ==, SFL_LEASE_VALID);
	g_assert_cmpstr(doc.holder, ==, holder);
	g_assert_cmpint(doc.expires_at_usec, ==, expires_usec);
	g_assert_cmpuint(doc.epoch, ==, epoch);
}

/* starts with no lease file and waits for the first win: claim at t=0, confirmed at t=1 s */
static void
start_leader(Fixture *f)
{
	fixture_start(f);
	advance_until(f, f->c.leading, 2 * SEC);
	g_assert_cmpint(elapsed(f), ==, 1 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
}

/* --- epoch floor from the memory store ---------------------------------------------------- */

typedef struct {
	Fixture *f;
	GAsyncReadyCallback callback;
	gpointer callback_data;
} FloorCall;

static void
floor_store_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	FloorCall *call = user_data;

	call->f->floor_pending--;
	call->callback(source, result, call->callback_data);
	g_free(call);
}

static void
floor_store(gpointer user_data, GCancellable *cancellable, GAsyncReadyCallback callback,
	    gpointer callback_data)
{
	Fixture *f = user_data;
	FloorCall *call = g_new0(FloorCall, 1);

	call->f = f;
	call->callback = callback;
	call->callback_data = callback_data;
	f->floor_pending++;
	f->floor_calls++;
	sfl_checkpoint_store_persisted_epoch_async(f->store, cancellable, floor_store_done_cb,
						   call);
}

static gboolean
floor_store_finish(gpointer user_data, GAsyncResult *result, guint64 *floor, gboolean *present,
		   GError **error)
{
	Fixture *f = user_data;
	return sfl_checkpoint_store_persisted_epoch_finish(f->store, result, floor, present, error);
}

static void
floor_fail(gpointer user_data, GCancellable *cancellable, GAsyncReadyCallback callback,
	   gpointer callback_data)
{
	Fixture *f = user_data;
	g_autoptr(GTask) task = g_task_new(NULL, cancellable, callback, callback_data);

	f->floor_calls++;
	g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT, "injected floor error");
}

static gboolean
floor_fail_finish(gpointer user_data, GAsyncResult *result, guint64 *floor, gboolean *present,
		  GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

typedef struct {
	GAsyncResult *result;
} Wait;

static void
wait_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Wait *w = user_data;
	w->result = g_object_ref(result);
}

/* real worker threads: iterate until the callback ran, or fail after a generous deadline */
static GAsyncResult *
wait_result(Wait *w)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	while (w->result == NULL) {
		if (g_get_monotonic_time() > deadline)
			g_error("operation did not complete within 30 s");
		g_main_context_iteration(NULL, TRUE);
	}
	return w->result;
}

static gboolean
store_commit(Fixture *f, SflCheckpointStoreFlags flags, const gchar *key, const gchar *value,
	     GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	g_autoptr(SflStateDoc) items = sfl_state_doc_new();

	sfl_state_doc_set(items, key, value);
	sfl_checkpoint_store_commit_many_async(f->store, items, flags, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_checkpoint_store_commit_many_finish(f->store, r, error);
}

static void
store_seed_epoch(Fixture *f, const gchar *epoch)
{
	g_autoptr(GError) error = NULL;
	g_assert_true(store_commit(f, SFL_CHECKPOINT_STORE_FORCE, SFL_STATE_KEY_FENCE_EPOCH, epoch,
				   &error));
	g_assert_no_error(error);
}

static gboolean
fence_cb(gpointer user_data)
{
	return sfl_coordinator_check_fence(SFL_COORDINATOR(user_data));
}

static gboolean
epoch_cb(gpointer user_data, guint64 *epoch)
{
	*epoch = sfl_coordinator_get_epoch(SFL_COORDINATOR(user_data));
	return *epoch > 0;
}

/* the app's wiring: the store checks this coordinator's fence and records its epoch */
static void
wire_store(Fixture *f)
{
	sfl_checkpoint_store_set_fence(f->store, fence_cb, f->c.coord, NULL);
	sfl_checkpoint_store_set_epoch(f->store, epoch_cb, f->c.coord, NULL);
}

static void
install_store_floor(Fixture *f)
{
	sfl_coordinator_set_epoch_floor(f->c.coord, floor_store, floor_store_finish, f, NULL);
}

/* creates the coordinator without starting it, so a floor can be installed first */
static void
fixture_create(Fixture *f)
{
	f->c.coord =
		sfl_file_lease_coordinator_new(NULL, TTL, RENEW, ME, f->clock, SFL_LEASE_IO(f->io));
}

static void
fixture_run(Fixture *f)
{
	sfl_test_coord_run(&f->c);
	drain(f);
}

/* --- serialization ------------------------------------------------------------------------ */

static void
assert_serialized(const gchar *holder, gint64 expires, guint64 epoch, const gchar *expected)
{
	gsize len = 0;
	g_autofree gchar *text = sfl_lease_doc_serialize(holder, expires, epoch, &len);

	g_assert_cmpstr(text, ==, expected);
	g_assert_cmpuint(len, ==, strlen(expected));
}

static void
test_serialize(void)
{
	g_auto(SflLeaseDoc) doc = { 0 };
	g_autofree gchar *text = NULL;

	/* the outputs are python 3.11's json.dumps({...}) with dt.isoformat() */
	assert_serialized(
		"h", WALL_START + 123456, 3,
		"{\"holder\": \"h\", \"expires_at\": \"2026-11-30T03:00:00.123456+00:00\", "
		"\"epoch\": 3}");
	assert_serialized("h", WALL_START, 0,
			  "{\"holder\": \"h\", \"expires_at\": \"2026-11-30T03:00:00+00:00\", "
			  "\"epoch\": 0}");
	assert_serialized(
		"h", WALL_START + 100, 18446744073709551615ULL,
		"{\"holder\": \"h\", \"expires_at\": \"2026-11-30T03:00:00.000100+00:00\", "
		"\"epoch\": 18446744073709551615}");
	assert_serialized("a\"b\\c\x01\x7f\xc3\xa9\xf0\x9f\x98\x80\n\t\r\b\f/", WALL_START, 1,
			  "{\"holder\": \"a\\\"b\\\\c\\u0001\\u007f\\u00e9\\ud83d\\ude00"
			  "\\n\\t\\r\\b\\f/\", \"expires_at\": \"2026-11-30T03:00:00+00:00\", "
			  "\"epoch\": 1}");
	/* invalid UTF-8 cannot come from python; it is repaired, never emitted raw */
	assert_serialized("a\xff"
			  "b",
			  WALL_START, 1,
			  "{\"holder\": \"a\\ufffdb\", \"expires_at\": "
			  "\"2026-11-30T03:00:00+00:00\", \"epoch\": 1}");
	assert_serialized(
		"h", -1, 1,
		"{\"holder\": \"h\", \"expires_at\": \"1969-12-31T23:59:59.999999+00:00\", "
		"\"epoch\": 1}");
	assert_serialized("h", G_MAXINT64, 1,
			  "{\"holder\": \"h\", \"expires_at\": \"9999-12-31T23:59:59+00:00\", "
			  "\"epoch\": 1}");
	assert_serialized("h", G_MININT64, 1,
			  "{\"holder\": \"h\", \"expires_at\": \"0001-01-01T00:00:00+00:00\", "
			  "\"epoch\": 1}");

	/* and it reads back */
	text = sfl_lease_doc_serialize("h\xc3\xa9", WALL_START + 5, 9, NULL);
	sfl_lease_doc_parse(text, strlen(text), &doc);
	g_assert_cmpint(doc.state, ==, SFL_LEASE_VALID);
	g_assert_cmpstr(doc.holder, ==, "h\xc3\xa9");
	g_assert_cmpint(doc.expires_at_usec, ==, WALL_START + 5);
	g_assert_cmpuint(doc.epoch, ==, 9);
}

/* --- acquire ------------------------------------------------------------------------------ */

static void
test_acquire_absent(Fixture *f, gconstpointer user_data)
{
	fixture_start(f);
	/* claimed at once, but not leading before the verify pause and re-read */
	g_assert_cmpuint(f->io->reads, ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 1);
	assert_disk(f, ME, WALL_START + TTL, 1);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 0);
	advance(f, 990 * MSEC);
	g_assert_false(is_leader(f));
	g_assert_false(sfl_coordinator_check_fence(f->c.coord));
	advance(f, STEP);
	g_assert_true(is_leader(f));
	g_assert_true(f->c.leading);
	g_assert_cmpuint(f->io->reads, ==, 2);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
	g_assert_cmpstr(sfl_coordinator_get_holder(f->c.coord), ==, ME);
	g_assert_cmpuint(warnings->len, ==, 0);
}

static void
test_verify_delay(Fixture *f, gconstpointer user_data)
{
	/* min(1 s, max(50 ms, renew_interval / 10)) */
	const struct {
		gint64 renew;
		gint64 verify;
	} cases[] = {
		{ 100 * MSEC, 50 * MSEC },
		{ 2 * SEC, 200 * MSEC },
		{ 10 * SEC, 1 * SEC },
		{ 60 * SEC, 1 * SEC },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		gint64 claimed;

		disk_set_raw(f, NULL);
		fixture_start_with(f, 3 * cases[i].renew, cases[i].renew);
		claimed = elapsed(f);
		g_assert_cmpuint(f->io->writes, ==, 2 * i + 1);
		advance_until(f, f->c.leading, 2 * SEC);
		g_assert_cmpint(elapsed(f) - claimed, ==, cases[i].verify);
		fixture_finish(f);
	}
}

static void
test_acquire_held(Fixture *f, gconstpointer user_data)
{
	disk_set(f, OTHER, WALL_START + 25 * SEC, 4);
	fixture_start(f);
	g_assert_cmpuint(f->io->reads, ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 0);
	advance_to(f, 20 * SEC);
	g_assert_cmpuint(f->io->reads, ==, 3);
	g_assert_cmpuint(f->io->writes, ==, 0);
	/* expired at 25 s on our wall clock: the attempt at 30 s claims epoch 5 */
	advance_to(f, 30 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 1);
	assert_disk(f, ME, WALL_START + 30 * SEC + TTL, 5);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 5);
}

static void
test_acquire_own_stale_lease(Fixture *f, gconstpointer user_data)
{
	/* our own holder string from an earlier life is honoured until it expires */
	disk_set(f, ME, WALL_START + 10 * SEC, 2);
	fixture_start(f);
	g_assert_cmpuint(f->io->writes, ==, 0);
	g_assert_false(is_leader(f));
	/* now >= expires_at is expired: the attempt at exactly 10 s claims */
	advance_to(f, 10 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 1);
	assert_disk(f, ME, WALL_START + 10 * SEC + TTL, 3);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 3);
}

static void
test_acquire_wall_clock_judges_expiry(Fixture *f, gconstpointer user_data)
{
	/* expiry is judged on this host's wall clock, which may step while monotonic does not */
	disk_set(f, OTHER, WALL_START + 60 * SEC, 4);
	fixture_start(f);
	g_assert_cmpuint(f->io->writes, ==, 0);
	sfl_fake_clock_jump_wall(f->clock, 120 * SEC);
	advance_to(f, 10 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 1);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 5);
}

static void
test_acquire_lost_race(Fixture *f, gconstpointer user_data)
{
	fixture_start(f);
	g_assert_cmpuint(f->io->writes, ==, 1);
	/* a competitor's rename lands after ours */
	disk_set(f, OTHER, WALL_START + TTL, 1);
	advance(f, 1 * SEC);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 0);
	/* it tries again after the verify pause, sees the winner's lease and waits */
	advance(f, 1 * SEC);
	g_assert_cmpuint(f->io->reads, ==, 3);
	advance_to(f, 29 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 1);
	g_assert_cmpuint(f->c.acquired, ==, 0);
}

static void
test_acquire_twin_same_holder(Fixture *f, gconstpointer user_data)
{
	fixture_start(f);
	g_assert_cmpuint(f->io->writes, ==, 1);
	/* a misconfigured twin with our holder string claims concurrently with another epoch */
	disk_set(f, ME, WALL_START + TTL, 7);
	advance(f, 1 * SEC);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 0);
	/* its lease is waited out; then the epoch continues above it */
	advance_to(f, 30 * SEC);
	g_assert_false(is_leader(f));
	advance_until(f, f->c.leading, 15 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 8);
}

static void
test_acquire_read_error_backs_off(Fixture *f, gconstpointer user_data)
{
	/* the lease expired long ago, but we cannot tell: never contest */
	disk_set(f, OTHER, WALL_START - 60 * SEC, 4);
	f->io->fail_reads = 3;
	fixture_start(f);
	g_assert_cmpuint(count_warnings("backing off without contesting"), ==, 1);
	advance_to(f, 29 * SEC);
	g_assert_cmpuint(f->io->reads, ==, 3);
	g_assert_cmpuint(f->io->writes, ==, 0);
	advance_to(f, 30 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 1);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 5);
}

/* --- lease write and read errors, corrupt lease content (SFL-0057) --------------------------- */

static void
test_write_error_acquire_retries(Fixture *f, gconstpointer user_data)
{
	f->io->fail_writes = 1;
	fixture_start(f);
	g_assert_cmpuint(f->io->writes, ==, 1);
	g_assert_null(f->io->bytes);
	g_assert_cmpuint(count_warnings("cannot write the lease"), ==, 1);
	advance_to(f, RENEW - STEP);
	g_assert_cmpuint(f->io->writes, ==, 1);
	g_assert_false(is_leader(f));
	/* the retry after renew_interval wins */
	advance_to(f, RENEW);
	g_assert_cmpuint(f->io->writes, ==, 2);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
	assert_disk(f, ME, WALL_START + RENEW + TTL, 1);
}

static void
test_read_error_acquire_verify_is_lost_race(Fixture *f, gconstpointer user_data)
{
	fixture_start(f);
	g_assert_cmpuint(f->io->writes, ==, 1);
	f->io->fail_reads = 1;
	advance(f, 1 * SEC);
	/* a claim we could not confirm is a lost race: no leadership, epoch stays 0 */
	g_assert_cmpuint(f->io->reads, ==, 2);
	g_assert_cmpuint(count_warnings("treating it as a lost race"), ==, 1);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->c.acquired, ==, 0);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 0);
	/* our unconfirmed claim is on disk; it is waited out like anyone's */
	advance_to(f, 30 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 1);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 0);
	advance_to(f, 31 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 2);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 2);
}

static void
test_read_error_hold_verify_recontests(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	/* the lease vanished and the verify read cannot tell: nothing of ours is left to renew */
	disk_set_raw(f, NULL);
	advance_to(f, 11 * SEC);
	g_assert_cmpuint(count_warnings("missing or not a lease"), ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 1);
	f->io->fail_reads = 1;
	advance_to(f, 12 * SEC);
	g_assert_cmpuint(count_warnings("cannot be re-read"), ==, 1);
	g_assert_cmpuint(f->c.lost, ==, 1);
	/* contested at once with a new epoch, never a rewrite of epoch 1 */
	g_assert_cmpuint(f->io->writes, ==, 2);
	assert_disk(f, ME, WALL_START + 12 * SEC + TTL, 2);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 2);

	/* a failed pre-renew read confirmed by a good verify read renews quietly */
	f->io->fail_reads = 1;
	advance_to(f, 23 * SEC);
	g_assert_cmpuint(count_warnings("error); reading it again"), ==, 1);
	advance_to(f, 24 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 3);
	assert_disk(f, ME, WALL_START + 24 * SEC + TTL, 2);
	g_assert_cmpuint(count_warnings("two consecutive"), ==, 0);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(f->c.acquired, ==, 2);
}

static void
test_write_error_hold_keeps_leadership(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	f->io->fail_writes = 2;
	advance_to(f, 11 * SEC);
	g_assert_cmpuint(count_warnings("still leading"), ==, 1);
	g_assert_true(is_leader(f));
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
	advance_to(f, 21 * SEC);
	g_assert_cmpuint(count_warnings("still leading"), ==, 2);
	g_assert_true(is_leader(f));
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
	/* the disk still has the claim: a successful renewal at 31 s moves it on */
	assert_disk(f, ME, WALL_START + TTL, 1);
	advance_to(f, 29 * SEC + 990 * MSEC);
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
	/* the claim was written at 0: a standby may take over from 30 s, so the fence closes */
	advance_to(f, 30 * SEC);
	g_assert_false(sfl_coordinator_check_fence(f->c.coord));
	g_assert_true(is_leader(f));
	/* the loop then wakes at 31 s, a ttl after the last success, and surrenders unwritten */
	advance_to(f, 31 * SEC);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->io->writes, ==, 3);
	assert_disk(f, ME, WALL_START + TTL, 1);
}

static void
test_write_error_hold_ends_only_on_stop(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	f->io->fail_writes = 1;
	advance_to(f, 11 * SEC);
	g_assert_cmpuint(count_warnings("still leading"), ==, 1);
	advance(f, 5 * 60 * SEC);
	g_assert_true(is_leader(f));
	g_assert_true(f->c.running);
	g_assert_cmpuint(f->c.acquired, ==, 1);
	g_assert_cmpuint(f->c.lost, ==, 0);
	fixture_stop(f);
	g_assert_cmpuint(f->c.lost, ==, 1);
}

typedef struct {
	const gchar *name;
	const gchar *content;
	gint64 claim_at; /* when the first claim happens */
	guint64 epoch;	 /* the epoch won */
} CorruptCase;

static const CorruptCase corrupt_cases[] = {
	{ "json-array", "[1, 2]", 0, 1 },
	{ "not-json", "{\"holder\": ", 0, 1 },
	{ "empty", "", 0, 1 },
	{ "not-utf8",
	  "{\"holder\": \"\xff\", \"expires_at\": \"2099-01-01T00:00:00+00:00\", "
	  "\"epoch\": 3}",
	  0, 1 },
	{ "holder-not-string",
	  "{\"holder\": 5, \"expires_at\": \"2099-01-01T00:00:00+00:00\", \"epoch\": 3}", 0, 1 },
	{ "expires-not-string",
	  "{\"holder\": \"replica-a\", \"expires_at\": 4102444800, \"epoch\": 3}", 0, 1 },
	{ "expires-unparseable",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"tomorrow\", \"epoch\": 3}", 0, 1 },
	{ "epoch-string",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"2026-11-30T02:00:00+00:00\", "
	  "\"epoch\": \"6\"}",
	  0, 1 },
	{ "epoch-float",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"2026-11-30T02:00:00+00:00\", "
	  "\"epoch\": 6.5}",
	  0, 1 },
	{ "epoch-negative",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"2026-11-30T02:00:00+00:00\", "
	  "\"epoch\": -6}",
	  0, 1 },
	{ "epoch-missing",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"2026-11-30T02:00:00+00:00\"}", 0, 1 },
	/* a non-integer epoch does not make a live lease claimable: it is read as 0 */
	{ "epoch-string-live",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"2026-11-30T03:00:15+00:00\", "
	  "\"epoch\": \"6\"}",
	  20 * SEC, 1 },
	/* naive means UTC (the test runs with TZ=EST5): held at 03:00:00, claimable at 10 s */
	{ "naive-timestamp",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"2026-11-30T03:00:05\", \"epoch\": 4}",
	  10 * SEC, 5 },
	{ "zulu-timestamp",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"2026-11-30T03:00:05Z\", \"epoch\": 4}",
	  10 * SEC, 5 },
	{ "offset-timestamp",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"2026-11-30T04:00:05+01:00\", \"epoch\": "
	  "4}",
	  10 * SEC, 5 },
	{ "valid-expired",
	  "{\"holder\": \"replica-a\", \"expires_at\": \"2026-11-30T02:00:00+00:00\", "
	  "\"epoch\": 6}",
	  0, 7 },
};

static void
test_corrupt_content(Fixture *f, gconstpointer user_data)
{
	const CorruptCase *c = user_data;

	disk_set_raw(f, c->content);
	fixture_start(f);
	if (c->claim_at > 0) {
		g_assert_cmpuint(f->io->writes, ==, 0);
		advance_to(f, c->claim_at - STEP);
		g_assert_cmpuint(f->io->writes, ==, 0);
		advance_to(f, c->claim_at);
	}
	g_assert_cmpuint(f->io->writes, ==, 1);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, c->epoch);
	assert_disk(f, ME, WALL_START + c->claim_at + TTL, c->epoch);
}

/* --- unreadable lease: no blind rewrite of a lease we cannot confirm (SFL-0012) -------------- */

static void
test_read_error_past_ttl_surrenders_unwritten(Fixture *f, gconstpointer user_data)
{
	g_autoptr(GBytes) foreign = NULL;
	guint writes;

	/* ttl 21.5 s so the pre-renew read falls within it and the verify read beyond it */
	fixture_start_with(f, 21500 * MSEC, RENEW);
	advance_until(f, f->c.leading, 2 * SEC);
	f->io->fail_reads = G_MAXUINT;
	/* 11 s and 12 s: both reads fail within the ttl, so we renew, with a warning */
	advance_to(f, 12 * SEC);
	g_assert_cmpuint(count_warnings("two consecutive reads of the lease"), ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 2);
	g_assert_true(is_leader(f));

	/* meanwhile another replica took over with the next epoch */
	disk_set(f, OTHER, WALL_START + 100 * SEC, 2);
	foreign = g_bytes_ref(f->io->bytes);
	writes = f->io->writes;
	/* 22 s: the read fails 21 s after the last confirmation; 23 s: so does the verify read */
	advance_to(f, 22 * SEC);
	g_assert_true(is_leader(f));
	advance_to(f, 23 * SEC);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->c.lost, ==, 1);
	g_assert_cmpuint(count_warnings("giving up leadership without writing"), ==, 1);
	g_assert_cmpuint(f->io->writes, ==, writes);
	g_assert_true(g_bytes_equal(f->io->bytes, foreign));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);

	/* as a standby that cannot read, it never contests */
	advance(f, 60 * SEC);
	g_assert_cmpuint(f->io->writes, ==, writes);
	g_assert_true(g_bytes_equal(f->io->bytes, foreign));
	g_assert_cmpuint(f->c.acquired, ==, 1);
}

static void
test_read_error_past_ttl_skips_verify(Fixture *f, gconstpointer user_data)
{
	guint reads;
	guint writes;

	start_leader(f);
	f->io->fail_reads = G_MAXUINT;
	/* 11+12 s and 22+23 s renew blind within the ttl (confirmed last at 1 s) */
	advance_to(f, 23 * SEC);
	g_assert_cmpuint(count_warnings("two consecutive reads"), ==, 2);
	g_assert_true(is_leader(f));
	reads = f->io->reads;
	writes = f->io->writes;
	/* 33 s: 32 s since the last confirmation: surrender on this read, no pause, no write */
	advance_to(f, 33 * SEC);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->io->reads, ==, reads + 1);
	advance_to(f, 35 * SEC);
	g_assert_cmpuint(f->io->reads, ==, reads + 1);
	g_assert_cmpuint(f->io->writes, ==, writes);
}

static void
test_read_error_frozen_past_ttl(Fixture *f, gconstpointer user_data)
{
	guint reads;
	guint writes;

	start_leader(f);
	f->io->fail_reads = G_MAXUINT;
	reads = f->io->reads;
	writes = f->io->writes;
	/* SIGSTOP: no timer ran while the clock moved a whole ttl */
	sfl_fake_clock_advance(f->clock, TTL);
	g_assert_false(sfl_coordinator_check_fence(f->c.coord));
	drain(f);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->c.lost, ==, 1);
	g_assert_cmpuint(f->io->reads, ==, reads);
	g_assert_cmpuint(f->io->writes, ==, writes);
	g_assert_cmpuint(count_warnings("was this process stalled"), ==, 1);
}

static void
test_read_error_two_within_ttl_renew(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	f->io->fail_reads = 2;
	advance_to(f, 11 * SEC);
	g_assert_cmpuint(count_warnings("error); reading it again"), ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 1);
	advance_to(f, 12 * SEC);
	g_assert_cmpuint(count_warnings("two consecutive reads of the lease"), ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 2);
	assert_disk(f, ME, WALL_START + 12 * SEC + TTL, 1);
	g_assert_true(is_leader(f));
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
}

/* --- epoch floor: never below what the store recorded (SFL-0015) ----------------------------- */

static void
test_epoch_floor_store_7_absent_lease(Fixture *f, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = NULL;

	store_seed_epoch(f, "7");
	fixture_create(f);
	install_store_floor(f);
	wire_store(f);
	fixture_run(f);
	advance_until(f, f->c.leading, 2 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 8);
	assert_disk(f, ME, WALL_START + TTL, 8);
	g_assert_cmpuint(count_warnings("the lease file was lost or rewritten"), ==, 1);

	/* the sole leader's first commit goes through and records its epoch */
	g_assert_true(store_commit(f, SFL_CHECKPOINT_STORE_NONE, "k", "v", &error));
	g_assert_no_error(error);
	doc = sfl_memory_backing_dup_document(f->backing);
	g_assert_cmpstr(sfl_state_doc_get(doc, SFL_STATE_KEY_FENCE_EPOCH), ==, "8");
	g_assert_cmpstr(sfl_state_doc_get(doc, "k"), ==, "v");
}

static void
test_epoch_floor_without_floor_is_fenced(Fixture *f, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;

	/* the failure the floor fixes: epoch 1 under a store at 7 */
	store_seed_epoch(f, "7");
	fixture_create(f);
	wire_store(f);
	fixture_run(f);
	advance_until(f, f->c.leading, 2 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
	g_assert_false(store_commit(f, SFL_CHECKPOINT_STORE_NONE, "k", "v", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
}

/* a lease at the largest epoch a JSON reader takes: no claim (one past it would wrap or make
 * the lease unreadable to every replica), a warning that says what to reset */
static void
test_epoch_floor_exhausted(Fixture *f, gconstpointer user_data)
{
	disk_set_raw(f, "{\"holder\": \"replica-b\", \"expires_at\": "
			"\"2020-01-01T00:00:00+00:00\", \"epoch\": 9223372036854775807}");
	fixture_create(f);
	install_store_floor(f);
	fixture_run(f);
	advance_until(f, count_warnings("the largest there is") >= 2, 2 * TTL);
	g_assert_false(f->c.leading);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 0);
}

static void
test_epoch_floor_store_7_corrupt_lease(Fixture *f, gconstpointer user_data)
{
	store_seed_epoch(f, "7");
	disk_set_raw(f, "{\"holder\": \"replica-a\", \"expires_at\": ");
	fixture_create(f);
	install_store_floor(f);
	fixture_run(f);
	advance_until(f, f->c.leading, 2 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 8);
	g_assert_cmpuint(count_warnings("the lease file was lost or rewritten"), ==, 1);
}

static void
test_epoch_floor_lease_9_store_3(Fixture *f, gconstpointer user_data)
{
	store_seed_epoch(f, "3");
	disk_set(f, OTHER, WALL_START - SEC, 9);
	fixture_create(f);
	install_store_floor(f);
	fixture_run(f);
	advance_until(f, f->c.leading, 2 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 10);
	g_assert_cmpuint(warnings->len, ==, 0);
}

static void
test_epoch_floor_failing_floor(Fixture *f, gconstpointer user_data)
{
	disk_set(f, OTHER, WALL_START - SEC, 9);
	fixture_create(f);
	sfl_coordinator_set_epoch_floor(f->c.coord, floor_fail, floor_fail_finish, f, NULL);
	fixture_run(f);
	advance_until(f, f->c.leading, 2 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 10);
	g_assert_cmpuint(f->floor_calls, ==, 1);
	g_assert_cmpuint(count_warnings("cannot read the epoch floor"), ==, 1);
}

static void
test_epoch_floor_no_floor(Fixture *f, gconstpointer user_data)
{
	disk_set(f, OTHER, WALL_START - SEC, 9);
	fixture_start(f);
	advance_until(f, f->c.leading, 2 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 10);
	g_assert_cmpuint(warnings->len, ==, 0);
}

static void
test_epoch_floor_floor_every_attempt(Fixture *f, gconstpointer user_data)
{
	store_seed_epoch(f, "7");
	f->io->fail_writes = 1;
	fixture_create(f);
	install_store_floor(f);
	fixture_run(f);
	g_assert_cmpuint(f->floor_calls, ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 1);
	/* another leader committed in between: the next attempt reads the floor afresh */
	store_seed_epoch(f, "12");
	advance_until(f, f->c.leading, RENEW + 2 * SEC);
	g_assert_cmpuint(f->floor_calls, ==, 2);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 13);
}

static void
test_epoch_never_lowered(Fixture *f, gconstpointer user_data)
{
	disk_set(f, OTHER, WALL_START - SEC, 4);
	fixture_start(f);
	advance_until(f, f->c.leading, 2 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 5);
	/* fenced, then the lease file is deleted and no floor is known */
	sfl_coordinator_demote(f->c.coord);
	disk_set_raw(f, NULL);
	advance_until(f, f->c.leading, RENEW + 2 * SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 6);
}

/* --- hold ---------------------------------------------------------------------------------- */

static void
test_hold_renews(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	advance_to(f, 11 * SEC);
	g_assert_cmpuint(f->io->reads, ==, 3);
	g_assert_cmpuint(f->io->writes, ==, 2);
	assert_disk(f, ME, WALL_START + 11 * SEC + TTL, 1);
	advance_to(f, 21 * SEC);
	g_assert_cmpuint(f->io->reads, ==, 4);
	g_assert_cmpuint(f->io->writes, ==, 3);
	assert_disk(f, ME, WALL_START + 21 * SEC + TTL, 1);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(warnings->len, ==, 0);
}

static void
test_hold_foreign_holder(Fixture *f, gconstpointer user_data)
{
	g_autoptr(GBytes) foreign = NULL;

	start_leader(f);
	disk_set(f, OTHER, WALL_START + 100 * SEC, 2);
	foreign = g_bytes_ref(f->io->bytes);
	advance_to(f, 11 * SEC);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->c.lost, ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 1);
	g_assert_true(g_bytes_equal(f->io->bytes, foreign));
	g_assert_cmpuint(count_warnings("is now held by replica-a"), ==, 1);
	/* a standby again, waiting for the new holder's lease to expire */
	advance_to(f, 60 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 1);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
}

static void
test_hold_own_holder_higher_epoch(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	/* our holder string with a newer epoch: a restarted twin, not us */
	disk_set(f, ME, WALL_START + 100 * SEC, 2);
	advance_to(f, 11 * SEC);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->io->writes, ==, 1);
	assert_disk(f, ME, WALL_START + 100 * SEC, 2);
}

static void
test_hold_own_holder_lower_epoch(Fixture *f, gconstpointer user_data)
{
	disk_set(f, OTHER, WALL_START - SEC, 4);
	fixture_start(f);
	advance_until(f, f->c.leading, 2 * SEC);
	/* our holder with an older epoch is ours (a late write of an earlier life): renew up */
	disk_set(f, ME, WALL_START + 100 * SEC, 3);
	advance_to(f, 11 * SEC);
	g_assert_true(is_leader(f));
	assert_disk(f, ME, WALL_START + 11 * SEC + TTL, 5);
}

static void
test_hold_absent_then_foreign(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	disk_set_raw(f, "[]");
	advance_to(f, 11 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(f->io->writes, ==, 1);
	disk_set(f, OTHER, WALL_START + 100 * SEC, 2);
	advance_to(f, 12 * SEC);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->io->writes, ==, 1);
}

static void
test_hold_absent_twice_recontests(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	disk_set_raw(f, NULL);
	advance_to(f, 12 * SEC);
	/* the term ends; the claim carries epoch 2, not a rewrite of 1 */
	g_assert_cmpuint(count_warnings("still missing or not a lease"), ==, 1);
	g_assert_cmpuint(f->c.lost, ==, 1);
	g_assert_cmpuint(f->io->reads, ==, 5);
	g_assert_cmpuint(f->io->writes, ==, 2);
	assert_disk(f, ME, WALL_START + 12 * SEC + TTL, 2);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(f->c.acquired, ==, 2);
	g_assert_cmpuint(f->c.last_acquired_epoch, ==, 2);
}

/*
 * Found by the 30-minute soak (docs/reliability.md): the lease file was deleted under the
 * leader (epoch 1), a standby claimed the missing lease with epoch 2 right after the leader's
 * verify read, and the leader's renewal then wrote epoch 1 over it: the lease went 2 → 1.
 */
static void
test_hold_absent_never_rewrites_old_epoch(Fixture *f, gconstpointer user_data)
{
	g_autofree gchar *claim = sfl_lease_doc_serialize(OTHER, WALL_START + 100 * SEC, 2, NULL);
	g_auto(SflLeaseDoc) doc = { 0 };

	start_leader(f);
	disk_set_raw(f, NULL);
	/* the competitor's claim lands right after our second (verify) read */
	f->io->land = g_bytes_new(claim, strlen(claim));
	f->io->land_after = 2;
	advance_to(f, 12 * SEC);
	g_assert_cmpuint(f->io->land_after, ==, 0);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->io->writes, ==, 1);
	disk_get(f, &doc);
	g_assert_cmpstr(doc.holder, ==, OTHER);
	g_assert_cmpuint(doc.epoch, ==, 2);
	/* a standby waiting on the competitor's live lease */
	advance_to(f, 60 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 1);
	g_assert_false(is_leader(f));
}

static void
test_hold_freeze(Fixture *f, gconstpointer user_data)
{
	guint reads;
	guint writes;

	start_leader(f);
	/* just short of the ttl since the claim (issued at 0): still renews */
	sfl_fake_clock_advance(f->clock, 28 * SEC);
	drain(f);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(f->io->writes, ==, 2);
	reads = f->io->reads;
	writes = f->io->writes;
	/* a whole ttl without any timer running: surrender before any read or write */
	sfl_fake_clock_advance(f->clock, TTL);
	drain(f);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->io->reads, ==, reads);
	g_assert_cmpuint(f->io->writes, ==, writes);
	g_assert_cmpuint(f->c.lost, ==, 1);
}

static void
test_hold_check_fence(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
	/* the last successful write was issued at 0; nothing runs while time passes */
	sfl_fake_clock_advance(f->clock, 29 * SEC - MSEC);
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
	sfl_fake_clock_advance(f->clock, MSEC);
	g_assert_false(sfl_coordinator_check_fence(f->c.coord));
	g_assert_true(is_leader(f));
	drain(f);
	g_assert_false(is_leader(f));
	g_assert_false(sfl_coordinator_check_fence(f->c.coord));
}

static void
test_hold_write_hangs_past_ttl(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	advance_to(f, 21 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 3);
	/* renewed at 21 s; the write at 31 s fails, the one at 41 s hangs until 51 s */
	f->io->fail_writes = 1;
	advance_to(f, 31 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 4);
	f->io->hang_writes = 1;
	advance_to(f, 41 * SEC);
	g_assert_cmpuint(f->io->writes, ==, 5);
	g_assert_true(is_leader(f));
	advance_to(f, 51 * SEC - STEP);
	g_assert_true(is_leader(f));
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
	/* the deadline answers the write as failed, a ttl after the last renewal */
	advance_to(f, 51 * SEC);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(count_warnings("did not complete within 10.000 s"), ==, 1);
	g_assert_cmpuint(count_warnings("not within its ttl"), ==, 1);
	g_assert_cmpuint(sfl_lease_io_get_busy(SFL_LEASE_IO(f->io)), ==, 1);
}

/* --- demote, stop, alternation -------------------------------------------------------------- */

static void
test_demote(Fixture *f, gconstpointer user_data)
{
	guint writes;

	start_leader(f);
	advance_to(f, 11 * SEC);
	writes = f->io->writes;
	sfl_coordinator_demote(f->c.coord);
	g_assert_cmpuint(f->c.lost, ==, 1);
	g_assert_false(is_leader(f));
	g_assert_false(sfl_coordinator_check_fence(f->c.coord));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
	/* a standby demote is nothing */
	sfl_coordinator_demote(f->c.coord);
	g_assert_cmpuint(f->c.lost, ==, 1);
	/* our own lease, renewed at 11 s, is waited out like anyone's: it expires at 41 s */
	advance_to(f, 40 * SEC + 990 * MSEC);
	g_assert_cmpuint(f->io->writes, ==, writes);
	g_assert_cmpuint(f->c.acquired, ==, 1);
	advance_to(f, 41 * SEC);
	g_assert_cmpuint(f->io->writes, ==, writes + 1);
	assert_disk(f, ME, WALL_START + 41 * SEC + TTL, 2);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(f->c.acquired, ==, 2);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 2);
}

static void
test_stop_releases(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	advance_to(f, 11 * SEC);
	fixture_stop(f);
	g_assert_cmpuint(f->c.lost, ==, 1);
	/* handed over early: an already-expired lease with our epoch */
	g_assert_cmpuint(f->io->writes, ==, 3);
	assert_disk(f, ME, WALL_START + 11 * SEC, 1);

	/* a second run of the same coordinator claims the released lease at once */
	sfl_test_coord_run(&f->c);
	drain(f);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 2);
}

static void
test_stop_release_fails(Fixture *f, gconstpointer user_data)
{
	start_leader(f);
	/* the best-effort release fails: the run ends anyway, the lease expires on its own */
	f->io->fail_writes = 1;
	fixture_stop(f);
	g_assert_cmpuint(f->c.lost, ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 2);
	assert_disk(f, ME, WALL_START + TTL, 1);
	g_assert_cmpuint(warnings->len, ==, 0);
}

static void
test_stop_during_floor_read(Fixture *f, gconstpointer user_data)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	store_seed_epoch(f, "7");
	fixture_create(f);
	install_store_floor(f);
	sfl_test_coord_run(&f->c);
	while (f->floor_calls == 0) {
		if (g_get_monotonic_time() > deadline)
			g_error("the floor was not read within 30 s");
		g_main_context_iteration(NULL, TRUE);
	}
	/* stopped while the store is being read: the late floor claims nothing */
	g_cancellable_cancel(f->c.run);
	drain(f);
	g_assert_false(f->c.running);
	g_assert_cmpuint(f->io->writes, ==, 0);
	g_assert_cmpuint(f->c.acquired, ==, 0);
}

static void
test_stop_unconfirmed_writes_nothing(Fixture *f, gconstpointer user_data)
{
	guint writes;

	start_leader(f);
	f->io->fail_reads = 2;
	advance_to(f, 12 * SEC);
	g_assert_true(is_leader(f));
	writes = f->io->writes;
	fixture_stop(f);
	g_assert_cmpuint(f->io->writes, ==, writes);
	assert_disk(f, ME, WALL_START + 12 * SEC + TTL, 1);
}

static void
test_stop_in_flight_writes_nothing(Fixture *f, gconstpointer user_data)
{
	guint writes;

	start_leader(f);
	f->io->hang_reads = 1;
	advance_to(f, 11 * SEC);
	writes = f->io->writes;
	fixture_stop(f);
	g_assert_cmpuint(f->c.lost, ==, 1);
	g_assert_cmpuint(f->io->writes, ==, writes);
	fake_lease_io_release(f->io);
	drain(f);
	g_assert_cmpuint(f->io->writes, ==, writes);
}

/*
 * A stop while a renewal's write is out: the release waits for its answer, then hands the
 * lease over. Skipping it made a sharded unit's next owner wait out the ttl, and the member
 * rounds that decide handovers run in phase with the renewals.
 */
static void
test_stop_during_renewal_releases(Fixture *f, gconstpointer user_data)
{
	guint writes;

	start_leader(f);
	writes = f->io->writes;
	f->io->delay_writes = 1;
	advance_to(f, 12 * SEC);
	g_assert_cmpuint(f->io->writes, ==, writes + 1);
	fixture_stop(f);
	g_assert_cmpuint(f->c.lost, ==, 1);
	/* nothing is written over the renewal until it answered */
	g_assert_cmpuint(f->io->writes, ==, writes + 1);
	fake_lease_io_answer(f->io);
	drain(f);
	g_assert_cmpuint(f->io->writes, ==, writes + 2);
	/* an already-expired lease with our epoch: claimable at once */
	assert_disk(f, ME, WALL_START + 12 * SEC, 1);
}

/* the renewal out at the stop failed: the lease is not provably ours, nothing is written */
static void
test_stop_during_failed_renewal_writes_nothing(Fixture *f, gconstpointer user_data)
{
	guint writes;

	start_leader(f);
	f->io->hang_writes = 1;
	advance_to(f, 12 * SEC);
	writes = f->io->writes;
	fixture_stop(f);
	fake_lease_io_release(f->io);
	drain(f);
	g_assert_cmpuint(f->io->writes, ==, writes);
}

static void
test_stop_standby(Fixture *f, gconstpointer user_data)
{
	disk_set(f, OTHER, WALL_START + 100 * SEC, 2);
	fixture_start(f);
	advance_to(f, 15 * SEC);
	fixture_stop(f);
	g_assert_cmpuint(f->io->writes, ==, 0);
	g_assert_cmpuint(f->c.lost, ==, 0);
	/* nothing runs after the stop */
	advance(f, 60 * SEC);
	g_assert_cmpuint(f->io->reads, ==, 2);
}

static void
test_stop_from_acquired(Fixture *f, gconstpointer user_data)
{
	f->c.stop_on_acquire = TRUE;
	fixture_start(f);
	advance(f, 1 * SEC);
	g_assert_cmpuint(f->c.acquired, ==, 1);
	g_assert_cmpuint(f->c.lost, ==, 1);
	g_assert_false(f->c.running);
	g_assert_cmpuint(f->io->writes, ==, 2);
	advance(f, 60 * SEC);
	g_assert_cmpuint(f->io->reads, ==, 2);
	g_assert_cmpuint(f->io->writes, ==, 2);
}

static void
test_alternation(Fixture *f, gconstpointer user_data)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(4711);
	guint64 disk_epoch = 0;

	fixture_start(f);
	for (guint i = 0; i < 1500; i++) {
		g_auto(SflLeaseDoc) doc = { 0 };
		gint64 wall = sfl_clock_wall_usec(f->clock);

		disk_get(f, &doc);
		disk_epoch = MAX(disk_epoch, doc.epoch);
		switch (g_rand_int_range(rand, 0, 40)) {
		case 0:
			disk_set(f, OTHER, wall + g_rand_int_range(rand, 1, 60) * SEC,
				 ++disk_epoch);
			break;
		case 1:
			disk_set_raw(f, NULL);
			break;
		case 2:
			disk_set_raw(f, "{]");
			break;
		case 3:
			f->io->fail_reads = g_rand_int_range(rand, 1, 5);
			break;
		case 4:
			f->io->fail_writes = g_rand_int_range(rand, 1, 5);
			break;
		case 5:
			sfl_fake_clock_advance(f->clock, TTL);
			break;
		case 6:
			sfl_coordinator_demote(f->c.coord);
			break;
		default:
			break;
		}
		advance(f, 1 * SEC);
		g_assert_true(f->c.leading == is_leader(f));
	}
	g_assert_cmpuint(f->c.acquired, >=, 10);
	fixture_stop(f);
	g_assert_cmpuint(f->c.acquired, ==, f->c.lost);
}

/* --- the lease I/O seam ---------------------------------------------------------------------- */

static void
test_io_deadline(Fixture *f, gconstpointer user_data)
{
	/* a read that never completes is "cannot tell" after renew_interval, not a hang */
	f->io->hang_reads = 1;
	disk_set(f, OTHER, WALL_START - SEC, 2);
	fixture_start(f);
	g_assert_cmpuint(f->io->reads, ==, 1);
	advance_to(f, RENEW - STEP);
	g_assert_cmpuint(warnings->len, ==, 0);
	advance_to(f, RENEW);
	g_assert_cmpuint(count_warnings("did not complete within 10.000 s"), ==, 1);
	g_assert_cmpuint(count_warnings("backing off without contesting"), ==, 1);
	g_assert_cmpuint(sfl_lease_io_get_busy(SFL_LEASE_IO(f->io)), ==, 1);
	/* while the late read is still stuck, the next one fails at once without a new thread */
	advance_to(f, 2 * RENEW);
	g_assert_cmpuint(count_warnings("has not finished"), ==, 1);
	g_assert_cmpuint(f->io->reads, ==, 1);
	g_assert_cmpuint(f->io->writes, ==, 0);
	/* its late answer is dropped */
	fake_lease_io_release(f->io);
	drain(f);
	g_assert_cmpuint(sfl_lease_io_get_busy(SFL_LEASE_IO(f->io)), ==, 0);
	g_assert_false(is_leader(f));
	advance_to(f, 3 * RENEW);
	g_assert_cmpuint(f->io->reads, ==, 2);
	g_assert_cmpuint(f->io->writes, ==, 1);
	advance(f, 1 * SEC);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 3);
}

static void
test_io_cancel(Fixture *f, gconstpointer user_data)
{
	SflLeaseIO *io = SFL_LEASE_IO(f->io);
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	g_autoptr(GError) error = NULL;
	g_auto(SflLeaseDoc) doc = { 0 };
	Wait w = { 0 };
	Wait w2 = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	g_autoptr(GAsyncResult) r2 = NULL;

	/* cancelling answers at once; the hung operation still counts until it finishes */
	f->io->hang_reads = 1;
	sfl_lease_io_read_async(io, cancellable, wait_cb, &w);
	drain(f);
	g_assert_null(w.result);
	g_cancellable_cancel(cancellable);
	drain(f);
	g_assert_nonnull(w.result);
	r = g_steal_pointer(&w.result);
	g_assert_false(sfl_lease_io_read_finish(io, r, &doc, &error));
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_assert_cmpuint(sfl_lease_io_get_busy(io), ==, 1);
	fake_lease_io_release(f->io);
	drain(f);
	g_assert_cmpuint(sfl_lease_io_get_busy(io), ==, 0);

	/* already cancelled: the implementation is never asked */
	g_clear_error(&error);
	sfl_lease_io_write_async(io, ME, WALL_START, 1, cancellable, wait_cb, &w2);
	drain(f);
	r2 = g_steal_pointer(&w2.result);
	g_assert_false(sfl_lease_io_write_finish(io, r2, &error));
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_assert_cmpuint(f->io->writes, ==, 0);
}

typedef struct {
	gchar *dir;
	gchar *path;
} FileFixture;

static void
file_fixture_setup(FileFixture *ff, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;

	ff->dir = g_dir_make_tmp("sfl-lease-XXXXXX", &error);
	g_assert_no_error(error);
	ff->path = g_build_filename(ff->dir, "leader.lease", NULL);
	g_ptr_array_set_size(warnings, 0);
}

static void
file_fixture_teardown(FileFixture *ff, gconstpointer user_data)
{
	g_autoptr(GDir) dir = g_dir_open(ff->dir, 0, NULL);
	const gchar *name;

	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *child = g_build_filename(ff->dir, name, NULL);
		if (g_rmdir(child) != 0)
			g_assert_cmpint(g_unlink(child), ==, 0);
	}
	g_assert_cmpint(g_rmdir(ff->dir), ==, 0);
	g_free(ff->path);
	g_free(ff->dir);
}

static gboolean
io_read(SflLeaseIO *io, SflLeaseDoc *doc, GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;

	sfl_lease_io_read_async(io, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_lease_io_read_finish(io, r, doc, error);
}

static gboolean
io_write(SflLeaseIO *io, const gchar *holder, gint64 expires, guint64 epoch, GError **error)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;

	sfl_lease_io_write_async(io, holder, expires, epoch, NULL, wait_cb, &w);
	r = wait_result(&w);
	return sfl_lease_io_write_finish(io, r, error);
}

static void
test_io_file_roundtrip(FileFixture *ff, gconstpointer user_data)
{
	g_autoptr(SflLeaseIO) io = sfl_lease_io_new(ff->path);
	g_autoptr(SflLeaseIO) bare = g_object_new(SFL_TYPE_LEASE_IO, NULL);
	g_autoptr(SflLeaseIO) missing = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *contents = NULL;
	g_autofree gchar *expected = NULL;
	g_autofree gchar *prop = NULL;
	g_auto(SflLeaseDoc) doc = { 0 };
	g_autofree gchar *nodir = g_build_filename(ff->dir, "nodir", "leader.lease", NULL);
	g_autofree gchar *dirpath = g_build_filename(ff->dir, "adir", NULL);
	g_autoptr(SflLeaseIO) dirio = NULL;
	g_autofree gchar *big = NULL;

	g_assert_cmpstr(sfl_lease_io_get_path(io), ==, ff->path);
	g_object_get(io, "path", &prop, NULL);
	g_assert_cmpstr(prop, ==, ff->path);

	/* absent is a definite answer */
	g_assert_true(io_read(io, &doc, &error));
	g_assert_no_error(error);
	g_assert_cmpint(doc.state, ==, SFL_LEASE_ABSENT);

	/* the file holds exactly the python-compatible text */
	g_assert_true(io_write(io, ME, WALL_START + 123456, 3, &error));
	g_assert_no_error(error);
	g_assert_true(g_file_get_contents(ff->path, &contents, NULL, &error));
	expected = sfl_lease_doc_serialize(ME, WALL_START + 123456, 3, NULL);
	g_assert_cmpstr(contents, ==, expected);
	g_assert_true(io_read(io, &doc, &error));
	g_assert_cmpint(doc.state, ==, SFL_LEASE_VALID);
	g_assert_cmpstr(doc.holder, ==, ME);
	g_assert_cmpint(doc.expires_at_usec, ==, WALL_START + 123456);
	g_assert_cmpuint(doc.epoch, ==, 3);

	/* anything larger than a lease is not one: claimable, like other bad content */
	big = g_malloc(128 * 1024 + 1);
	memset(big, ' ', 128 * 1024);
	big[128 * 1024] = '\0';
	g_assert_true(g_file_set_contents(ff->path, big, -1, &error));
	g_assert_true(io_read(io, &doc, &error));
	g_assert_no_error(error);
	g_assert_cmpint(doc.state, ==, SFL_LEASE_INVALID);

	/* a write into a missing directory fails; the lease is untouched */
	missing = sfl_lease_io_new(nodir);
	g_assert_false(io_write(missing, ME, WALL_START, 4, &error));
	g_assert_nonnull(error);
	g_clear_error(&error);
	/* a read that fails (a directory where the file should be) cannot tell */
	g_assert_cmpint(g_mkdir(dirpath, 0700), ==, 0);
	dirio = sfl_lease_io_new(dirpath);
	g_assert_false(io_read(dirio, &doc, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_clear_error(&error);

	/* a lease I/O without a path is a wiring bug, reported, never "absent" */
	g_assert_null(sfl_lease_io_get_path(bare));
	g_assert_false(io_read(bare, &doc, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INTERNAL);
	g_clear_error(&error);
	g_assert_false(io_write(bare, ME, WALL_START, 1, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INTERNAL);
}

/* a worker stalled like a hung NFS mount, released by the test */
typedef struct {
	GMutex mutex;
	GCond cond;
	gboolean open;
	guint entered;
} Gate;

static void
gate_hook(gpointer user_data)
{
	Gate *gate = user_data;

	g_mutex_lock(&gate->mutex);
	gate->entered++;
	g_cond_broadcast(&gate->cond);
	while (!gate->open)
		g_cond_wait(&gate->cond, &gate->mutex);
	g_mutex_unlock(&gate->mutex);
}

static void
gate_wait_entered(Gate *gate, guint n)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	g_mutex_lock(&gate->mutex);
	while (gate->entered < n) {
		if (!g_cond_wait_until(&gate->cond, &gate->mutex, deadline))
			g_error("the worker did not start within 30 s");
	}
	g_mutex_unlock(&gate->mutex);
}

static void
gate_open(Gate *gate)
{
	g_mutex_lock(&gate->mutex);
	gate->open = TRUE;
	g_cond_broadcast(&gate->cond);
	g_mutex_unlock(&gate->mutex);
}

static void
test_io_file_deadline(FileFixture *ff, gconstpointer user_data)
{
	g_autoptr(SflLeaseIO) io = sfl_lease_io_new(ff->path);
	g_autoptr(SflClock) clock = sfl_fake_clock_new(WALL_START);
	g_autoptr(GError) error = NULL;
	g_auto(SflLeaseDoc) doc = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	Wait w = { 0 };
	Gate gate = { 0 };
	gint64 deadline;

	g_mutex_init(&gate.mutex);
	g_cond_init(&gate.cond);
	sfl_lease_io_set_worker_hook(io, gate_hook, &gate);
	sfl_lease_io_set_deadline(io, clock, RENEW);

	sfl_lease_io_read_async(io, NULL, wait_cb, &w);
	gate_wait_entered(&gate, 1);
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_assert_null(w.result);
	/* the deadline passes on the fake clock while the worker is stuck */
	sfl_fake_clock_advance(clock, RENEW);
	r = wait_result(&w);
	g_assert_false(sfl_lease_io_read_finish(io, r, &doc, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "did not complete"));
	g_clear_error(&error);
	g_assert_cmpuint(sfl_lease_io_get_busy(io), ==, 1);

	/* no second thread joins the stuck one */
	g_assert_false(io_write(io, ME, WALL_START, 1, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_clear_error(&error);
	g_assert_cmpuint(gate.entered, ==, 1);
	g_assert_false(g_file_test(ff->path, G_FILE_TEST_EXISTS));

	/* the worker finishes late; its answer is dropped, and the I/O works again */
	gate_open(&gate);
	deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
	while (sfl_lease_io_get_busy(io) > 0) {
		if (g_get_monotonic_time() > deadline)
			g_error("the late worker did not finish within 30 s");
		g_main_context_iteration(NULL, TRUE);
	}
	g_assert_true(io_write(io, ME, WALL_START, 1, &error));
	g_assert_no_error(error);
	g_assert_true(io_read(io, &doc, &error));
	g_assert_cmpint(doc.state, ==, SFL_LEASE_VALID);
	g_assert_cmpuint(gate.entered, ==, 3);

	sfl_lease_io_set_worker_hook(io, NULL, NULL);
	g_mutex_clear(&gate.mutex);
	g_cond_clear(&gate.cond);
}

/* counts the files in @dir, the lease file and any temp file a write left behind */
static guint
count_dir_entries(const gchar *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	guint n = 0;

	g_assert_nonnull(d);
	while (g_dir_read_name(d) != NULL)
		n++;
	return n;
}

/*
 * A renewal stalled in its worker (a frozen process, a hung NFS server) until after its
 * caller was told it failed must not land: by then a successor may have claimed the lease,
 * and the late rename would put the old epoch back (the lease-file TOCTOU the soak watches).
 */
static void
test_io_file_late_write_abandoned(FileFixture *ff, gconstpointer user_data)
{
	g_autoptr(SflLeaseIO) io = sfl_lease_io_new(ff->path);
	g_autoptr(SflClock) clock = sfl_fake_clock_new(WALL_START);
	g_autoptr(GError) error = NULL;
	g_auto(SflLeaseDoc) doc = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	Wait w = { 0 };
	Gate gate = { 0 };
	gint64 deadline;

	g_assert_true(io_write(io, OTHER, WALL_START + TTL, 8, &error));
	g_assert_no_error(error);
	g_mutex_init(&gate.mutex);
	g_cond_init(&gate.cond);
	sfl_lease_io_set_worker_hook(io, gate_hook, &gate);
	sfl_lease_io_set_deadline(io, clock, RENEW);

	sfl_lease_io_write_async(io, ME, WALL_START + TTL, 7, NULL, wait_cb, &w);
	gate_wait_entered(&gate, 1);
	/* the deadline passes on the caller's clock while the worker is stuck */
	sfl_fake_clock_advance(clock, RENEW);
	r = wait_result(&w);
	g_assert_false(sfl_lease_io_write_finish(io, r, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_clear_error(&error);
	/* the worker wakes up: its write is abandoned before the rename */
	gate_open(&gate);
	deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
	while (sfl_lease_io_get_busy(io) > 0) {
		if (g_get_monotonic_time() > deadline)
			g_error("the late worker did not finish within 30 s");
		g_main_context_iteration(NULL, TRUE);
	}
	sfl_lease_io_set_worker_hook(io, NULL, NULL);
	g_assert_true(io_read(io, &doc, &error));
	g_assert_cmpstr(doc.holder, ==, OTHER);
	g_assert_cmpuint(doc.epoch, ==, 8);
	g_assert_cmpuint(count_dir_entries(ff->dir), ==, 1);

	/*
	 * Stalled in real time while the caller's clock stood still (the main loop was frozen
	 * too): the worker's own real-clock bound abandons it. A 1 µs deadline is always past
	 * by the time the temp file is written and synced.
	 */
	sfl_lease_io_set_deadline(io, clock, 1);
	g_assert_false(io_write(io, ME, WALL_START + TTL, 7, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT);
	g_assert_nonnull(strstr(error->message, "abandoned"));
	g_clear_error(&error);
	g_assert_true(io_read(io, &doc, &error));
	g_assert_cmpuint(doc.epoch, ==, 8);
	g_assert_cmpuint(count_dir_entries(ff->dir), ==, 1);

	/* within its deadline a write lands as always */
	sfl_lease_io_set_deadline(io, clock, RENEW);
	g_assert_true(io_write(io, ME, WALL_START + TTL, 9, &error));
	g_assert_no_error(error);
	g_assert_true(io_read(io, &doc, &error));
	g_assert_cmpuint(doc.epoch, ==, 9);
	g_mutex_clear(&gate.mutex);
	g_cond_clear(&gate.cond);
}

/* --- two replicas, one real file, the real clock ------------------------------------------ */

#define COUNTING_TYPE_LEASE_IO (counting_lease_io_get_type())
G_DECLARE_FINAL_TYPE(CountingLeaseIO, counting_lease_io, COUNTING, LEASE_IO, SflLeaseIO)

struct _CountingLeaseIO {
	SflLeaseIO parent_instance;
	guint reads;
};

G_DEFINE_TYPE(CountingLeaseIO, counting_lease_io, SFL_TYPE_LEASE_IO)

static void
counting_lease_io_read_async(SflLeaseIO *io, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data)
{
	COUNTING_LEASE_IO(io)->reads++;
	SFL_LEASE_IO_CLASS(counting_lease_io_parent_class)
		->read_async(io, cancellable, callback, user_data);
}

static void
counting_lease_io_class_init(CountingLeaseIOClass *klass)
{
	SFL_LEASE_IO_CLASS(klass)->read_async = counting_lease_io_read_async;
}

static void
counting_lease_io_init(CountingLeaseIO *self)
{
}

typedef struct {
	SflCoordinator *coord;
	CountingLeaseIO *io;
	GCancellable *run;
	gboolean running;
	guint acquired;
	guint lost;
	gint *leaders; /* shared by both replicas */
} Replica;

static void
replica_acquired(SflCoordinator *coord, gpointer user_data)
{
	Replica *r = user_data;

	(*r->leaders)++;
	g_assert_cmpint(*r->leaders, ==, 1);
	r->acquired++;
}

static void
replica_lost(SflCoordinator *coord, gpointer user_data)
{
	Replica *r = user_data;

	(*r->leaders)--;
	r->lost++;
}

static void
replica_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Replica *r = user_data;

	g_assert_true(sfl_coordinator_run_finish(SFL_COORDINATOR(source), result, NULL));
	r->running = FALSE;
}

static void
test_race_real_file(FileFixture *ff, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *stale = NULL;
	g_auto(SflLeaseDoc) doc = { 0 };
	Replica replicas[2] = { { 0 } };
	const gchar *holders[2] = { OTHER, ME };
	gint leaders = 0;
	Replica *winner;
	Replica *loser;
	guint loser_reads;
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	/* an expired lease both replicas see at once */
	stale = sfl_lease_doc_serialize("replica-old", g_get_real_time() - 60 * SEC, 4, NULL);
	g_assert_true(g_file_set_contents(ff->path, stale, -1, &error));
	for (guint i = 0; i < 2; i++) {
		replicas[i].io = g_object_new(COUNTING_TYPE_LEASE_IO, "path", ff->path, NULL);
		/*
		 * a 1 s renewal gives a 100 ms verify pause: the file lease has no
		 * compare-and-swap, so two writes landing within one pause of each other could both
		 * read back as their own (the known limit in docs/deployment/high-availability.md);
		 * 50 ms was within reach of a loaded machine's thread scheduling under wine
		 */
		replicas[i].coord = sfl_file_lease_coordinator_new(
			ff->path, 3000 * MSEC, 1000 * MSEC, holders[i], sfl_clock_get_system(),
			SFL_LEASE_IO(replicas[i].io));
		replicas[i].run = g_cancellable_new();
		replicas[i].running = TRUE;
		replicas[i].leaders = &leaders;
	}
	for (guint i = 0; i < 2; i++) {
		sfl_coordinator_run_async(replicas[i].coord, replica_acquired, replica_lost,
					  &replicas[i], replicas[i].run, replica_done_cb,
					  &replicas[i]);
	}
	while (leaders == 0) {
		if (g_get_monotonic_time() > deadline)
			g_error("nobody acquired the lease within 30 s");
		g_main_context_iteration(NULL, TRUE);
	}
	winner = replicas[0].acquired > 0 ? &replicas[0] : &replicas[1];
	loser = winner == &replicas[0] ? &replicas[1] : &replicas[0];
	/* let the loser look at the winner's lease a few times, across renewals */
	loser_reads = loser->io->reads;
	while (loser->io->reads < loser_reads + 3) {
		if (g_get_monotonic_time() > deadline)
			g_error("the standby did not keep polling");
		g_main_context_iteration(NULL, TRUE);
	}
	g_assert_cmpuint(winner->acquired, ==, 1);
	g_assert_cmpuint(winner->lost, ==, 0);
	g_assert_cmpuint(loser->acquired, ==, 0);
	g_assert_cmpuint(sfl_coordinator_get_epoch(winner->coord), ==, 5);
	g_assert_cmpuint(sfl_coordinator_get_epoch(loser->coord), ==, 0);
	g_assert_true(sfl_lease_doc_read(ff->path, &doc, &error));
	g_assert_cmpint(doc.state, ==, SFL_LEASE_VALID);
	g_assert_cmpstr(doc.holder, ==, sfl_coordinator_get_holder(winner->coord));
	g_assert_cmpuint(doc.epoch, ==, 5);

	for (guint i = 0; i < 2; i++)
		g_cancellable_cancel(replicas[i].run);
	while (replicas[0].running || replicas[1].running ||
	       sfl_lease_io_get_busy(SFL_LEASE_IO(replicas[0].io)) > 0 ||
	       sfl_lease_io_get_busy(SFL_LEASE_IO(replicas[1].io)) > 0) {
		if (g_get_monotonic_time() > deadline)
			g_error("the replicas did not stop");
		g_main_context_iteration(NULL, TRUE);
	}
	g_assert_cmpint(leaders, ==, 0);
	for (guint i = 0; i < 2; i++) {
		g_object_unref(replicas[i].run);
		g_object_unref(replicas[i].coord);
		g_object_unref(replicas[i].io);
	}
}

/* --- the coordinator contract (tests/common/sfl-test-coordinator.h) ---------------------- */

static void
contract_start(gpointer fixture)
{
	Fixture *f = fixture;
	SflCoordinator *coord =
		sfl_file_lease_coordinator_new(NULL, TTL, RENEW, ME, f->clock, SFL_LEASE_IO(f->io));

	sfl_test_coord_use_floor(&f->c, coord);
	sfl_test_coord_start(&f->c, coord);
}

static guint
contract_writes(gpointer fixture)
{
	return ((Fixture *)fixture)->io->writes;
}

/* another replica's lease, expired a second before the start */
static void
contract_seed_claimable(gpointer fixture, guint64 epoch)
{
	disk_set(fixture, OTHER, WALL_START - SEC, epoch);
}

static const SflTestCoordContract contract = {
	.prefix = "/sfl/file-lease",
	.fixture_size = sizeof(Fixture),
	.setup = (void (*)(gpointer, gconstpointer))fixture_setup,
	.teardown = (void (*)(gpointer, gconstpointer))fixture_teardown,
	.coord_offset = G_STRUCT_OFFSET(Fixture, c),
	.time_offset = G_STRUCT_OFFSET(Fixture, time),
	.start = contract_start,
	.writes = contract_writes,
	.seed_claimable = contract_seed_claimable,
	.retake_usec = TTL + 2 * RENEW,
};

int
main(int argc, char **argv)
{
	int rc;

	/* a local zone off UTC, so a naive timestamp read as local time would show */
	g_setenv("TZ", "EST5", TRUE);
	g_test_init(&argc, &argv, NULL);
	/* warnings are asserted through the writer; criticals stay fatal */
	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	warnings = sfl_test_warnings_record(FALSE);

#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_setup, func, fixture_teardown)
	g_test_add_func("/sfl/file-lease/serialize", test_serialize);
	ADD("/sfl/file-lease/acquire/absent", test_acquire_absent);
	ADD("/sfl/file-lease/acquire/verify-delay", test_verify_delay);
	ADD("/sfl/file-lease/acquire/held-by-other", test_acquire_held);
	ADD("/sfl/file-lease/acquire/own-stale-lease", test_acquire_own_stale_lease);
	ADD("/sfl/file-lease/acquire/wall-clock-expiry", test_acquire_wall_clock_judges_expiry);
	ADD("/sfl/file-lease/acquire/lost-race", test_acquire_lost_race);
	ADD("/sfl/file-lease/acquire/twin-same-holder", test_acquire_twin_same_holder);
	ADD("/sfl/file-lease/acquire/read-error-backs-off", test_acquire_read_error_backs_off);
	ADD("/sfl/file-lease/write-errors/acquire-retries", test_write_error_acquire_retries);
	ADD("/sfl/file-lease/read-errors/acquire-verify-is-lost-race",
	    test_read_error_acquire_verify_is_lost_race);
	ADD("/sfl/file-lease/read-errors/hold-verify-recontests",
	    test_read_error_hold_verify_recontests);
	ADD("/sfl/file-lease/write-errors/hold-keeps-leadership",
	    test_write_error_hold_keeps_leadership);
	ADD("/sfl/file-lease/write-errors/hold-ends-only-on-stop",
	    test_write_error_hold_ends_only_on_stop);
	for (guint i = 0; i < G_N_ELEMENTS(corrupt_cases); i++) {
		g_autofree gchar *path = g_strdup_printf("/sfl/file-lease/corrupt-content/%s",
							 corrupt_cases[i].name);
		g_test_add(path, Fixture, &corrupt_cases[i], fixture_setup, test_corrupt_content,
			   fixture_teardown);
	}
	ADD("/sfl/file-lease/read-errors/past-ttl-surrenders-unwritten",
	    test_read_error_past_ttl_surrenders_unwritten);
	ADD("/sfl/file-lease/read-errors/past-ttl-skips-verify",
	    test_read_error_past_ttl_skips_verify);
	ADD("/sfl/file-lease/read-errors/frozen-past-ttl", test_read_error_frozen_past_ttl);
	ADD("/sfl/file-lease/read-errors/two-within-ttl-renew",
	    test_read_error_two_within_ttl_renew);
	ADD("/sfl/file-lease/epoch-floor/store-7-absent-lease",
	    test_epoch_floor_store_7_absent_lease);
	ADD("/sfl/file-lease/epoch-floor/without-floor-is-fenced",
	    test_epoch_floor_without_floor_is_fenced);
	ADD("/sfl/file-lease/epoch-floor/exhausted", test_epoch_floor_exhausted);
	ADD("/sfl/file-lease/epoch-floor/store-7-corrupt-lease",
	    test_epoch_floor_store_7_corrupt_lease);
	ADD("/sfl/file-lease/epoch-floor/lease-9-store-3", test_epoch_floor_lease_9_store_3);
	ADD("/sfl/file-lease/epoch-floor/failing-floor", test_epoch_floor_failing_floor);
	ADD("/sfl/file-lease/epoch-floor/no-floor", test_epoch_floor_no_floor);
	ADD("/sfl/file-lease/epoch-floor/floor-every-attempt",
	    test_epoch_floor_floor_every_attempt);
	ADD("/sfl/file-lease/epoch/never-lowered", test_epoch_never_lowered);
	ADD("/sfl/file-lease/hold/renews", test_hold_renews);
	ADD("/sfl/file-lease/hold/foreign-holder", test_hold_foreign_holder);
	ADD("/sfl/file-lease/hold/own-holder-higher-epoch", test_hold_own_holder_higher_epoch);
	ADD("/sfl/file-lease/hold/own-holder-lower-epoch", test_hold_own_holder_lower_epoch);
	ADD("/sfl/file-lease/hold/absent-then-foreign", test_hold_absent_then_foreign);
	ADD("/sfl/file-lease/hold/absent-twice-recontests", test_hold_absent_twice_recontests);
	ADD("/sfl/file-lease/hold/absent-never-rewrites-old-epoch",
	    test_hold_absent_never_rewrites_old_epoch);
	ADD("/sfl/file-lease/hold/freeze", test_hold_freeze);
	ADD("/sfl/file-lease/hold/check-fence", test_hold_check_fence);
	ADD("/sfl/file-lease/hold/write-hangs-past-ttl", test_hold_write_hangs_past_ttl);
	ADD("/sfl/file-lease/demote", test_demote);
	ADD("/sfl/file-lease/stop/releases", test_stop_releases);
	ADD("/sfl/file-lease/stop/release-fails", test_stop_release_fails);
	ADD("/sfl/file-lease/stop/during-renewal-releases", test_stop_during_renewal_releases);
	ADD("/sfl/file-lease/stop/during-failed-renewal-writes-nothing",
	    test_stop_during_failed_renewal_writes_nothing);
	ADD("/sfl/file-lease/stop/during-floor-read", test_stop_during_floor_read);
	ADD("/sfl/file-lease/stop/unconfirmed-writes-nothing",
	    test_stop_unconfirmed_writes_nothing);
	ADD("/sfl/file-lease/stop/in-flight-writes-nothing", test_stop_in_flight_writes_nothing);
	ADD("/sfl/file-lease/stop/standby", test_stop_standby);
	ADD("/sfl/file-lease/stop/from-acquired", test_stop_from_acquired);
	ADD("/sfl/file-lease/alternation", test_alternation);
	ADD("/sfl/file-lease/io/deadline", test_io_deadline);
	ADD("/sfl/file-lease/io/cancel", test_io_cancel);
#undef ADD
	sfl_test_coord_contract_add(&contract);
	g_test_add("/sfl/file-lease/io/file-roundtrip", FileFixture, NULL, file_fixture_setup,
		   test_io_file_roundtrip, file_fixture_teardown);
	g_test_add("/sfl/file-lease/io/file-deadline", FileFixture, NULL, file_fixture_setup,
		   test_io_file_deadline, file_fixture_teardown);
	g_test_add("/sfl/file-lease/io/file-late-write-abandoned", FileFixture, NULL,
		   file_fixture_setup, test_io_file_late_write_abandoned, file_fixture_teardown);
	g_test_add("/sfl/file-lease/race/real-file", FileFixture, NULL, file_fixture_setup,
		   test_race_real_file, file_fixture_teardown);
	rc = g_test_run();
	g_ptr_array_unref(warnings);
	return rc;
}
