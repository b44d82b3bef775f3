/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestObjectLease"

#include "config.h"

#include <string.h>

#include "sfl-config.h"
#include "sfl-error.h"
#include "sfl-lease-doc.h"
#include "sfl-object-lease-coordinator.h"
#include "sfl-test-coordinator.h"

/*
 * The s3_lease / gcs_lease coordinator on a fake clock and an in-memory bucket with the
 * object stores' compare-and-swap rules (create-only, if-version) and scripted faults. Both
 * coordinate types share this code and this client seam, so one suite covers both; the S3 and
 * GCS clients are checked against their simulators elsewhere.
 */

#define WALL_START ((gint64)1796007600 * G_USEC_PER_SEC)
#define SEC	   G_USEC_PER_SEC
#define MSEC	   ((gint64)1000)
#define TTL	   (30 * SEC)
#define RENEW	   (10 * SEC)
#define STEP	   (100 * MSEC)
#define KEY	   "sf2loki/leader.json"
#define ME	   "replica-b"
#define OTHER	   "replica-a"

static GPtrArray *warnings; /* (element-type utf8) */

#define count_warnings sfl_test_warnings_count

/* --- a bucket in memory: the object stores' CAS rules plus scripted faults ---------------- */

typedef struct {
	SflObjectCondition condition;
	gchar *version; /* the precondition's version, NULL for create-only */
	gchar *holder;
	guint64 epoch;
	gboolean landed;
} FakeWrite;

static void
fake_write_clear(gpointer data)
{
	FakeWrite *w = data;
	g_free(w->version);
	g_free(w->holder);
}

#define FAKE_TYPE_BUCKET (fake_bucket_get_type())
G_DECLARE_FINAL_TYPE(FakeBucket, fake_bucket, FAKE, BUCKET, SflObjectClient)

struct _FakeBucket {
	SflObjectClient parent_instance;
	GBytes *data; /* NULL when the object does not exist */
	gchar *version;
	guint next_version;
	guint gets;
	GArray *writes;	     /* FakeWrite, every write that reached the "server" */
	guint fail_gets;     /* the next N reads fail with a 503 */
	guint fail_writes;   /* the next N writes fail with a 503 and do not land */
	guint conflict_next; /* the next N writes answer 412 */
	gboolean race_next;  /* another replica writes right before the next write */
	guint closes;
	SflClock *clock;
	gint64 slow_fail_write; /* the next write fails after this much fake time */
	gint64 slow_write;	/* the next write lands at once, its answer comes this much later */
};

G_DEFINE_TYPE(FakeBucket, fake_bucket, SFL_TYPE_OBJECT_CLIENT)

static void
bucket_store(FakeBucket *self, GBytes *data)
{
	g_clear_pointer(&self->data, g_bytes_unref);
	g_free(self->version);
	self->data = data != NULL ? g_bytes_ref(data) : NULL;
	self->version = data != NULL ? g_strdup_printf("\"v%u\"", ++self->next_version) : NULL;
}

/* another replica's lease, as the store would hold it */
static void
server_put(FakeBucket *bucket, const gchar *holder, gint64 expires_usec, guint64 epoch)
{
	gsize len = 0;
	gchar *text = sfl_lease_doc_serialize(holder, expires_usec, epoch, &len);
	g_autoptr(GBytes) data = g_bytes_new_take(text, len);
	bucket_store(bucket, data);
}

static void
server_put_raw(FakeBucket *bucket, const gchar *text)
{
	g_autoptr(GBytes) data = g_bytes_new(text, strlen(text));
	bucket_store(bucket, data);
}

static void
fake_bucket_get_async(SflObjectClient *client, const gchar *key, GCancellable *cancellable,
		      GAsyncReadyCallback callback, gpointer user_data)
{
	FakeBucket *self = FAKE_BUCKET(client);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);

	g_assert_cmpstr(key, ==, KEY);
	self->gets++;
	if (self->fail_gets > 0) {
		self->fail_gets--;
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"injected: answered 503");
		return;
	}
	if (self->data == NULL) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_NOT_FOUND,
					"injected: answered 404");
		return;
	}
	g_task_return_pointer(task, sfl_object_new(self->data, self->version),
			      (GDestroyNotify)sfl_object_free);
}

static gboolean
fake_bucket_slow_fail_cb(gpointer user_data)
{
	g_task_return_new_error(G_TASK(user_data), SFL_ERROR, SFL_ERROR_TRANSIENT,
				"injected: timed out");
	return G_SOURCE_REMOVE;
}

static gboolean
fake_bucket_slow_answer_cb(gpointer user_data)
{
	GTask *task = user_data;

	g_task_return_pointer(task, g_strdup(g_task_get_task_data(task)), g_free);
	return G_SOURCE_REMOVE;
}

static void
fake_bucket_put_async(SflObjectClient *client, const gchar *key, GBytes *data,
		      SflObjectCondition condition, const gchar *version, GCancellable *cancellable,
		      GAsyncReadyCallback callback, gpointer user_data)
{
	FakeBucket *self = FAKE_BUCKET(client);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
	g_auto(SflLeaseDoc) doc = { 0 };
	FakeWrite w = { condition, g_strdup(version), NULL, 0, FALSE };
	gsize len = 0;
	const gchar *text = g_bytes_get_data(data, &len);

	sfl_lease_doc_parse(text, len, &doc);
	g_assert_cmpint(doc.state, ==, SFL_LEASE_VALID);
	w.holder = g_strdup(doc.holder);
	w.epoch = doc.epoch;
	if (self->slow_fail_write > 0) {
		GSource *source = sfl_clock_timeout_source_new(self->clock, self->slow_fail_write);

		self->slow_fail_write = 0;
		g_array_append_val(self->writes, w);
		g_source_set_callback(source, fake_bucket_slow_fail_cb, g_steal_pointer(&task),
				      g_object_unref);
		g_source_attach(source, NULL);
		g_source_unref(source);
		return;
	}
	if (self->race_next) {
		self->race_next = FALSE;
		server_put(self, OTHER, WALL_START, 50);
	}
	if (self->fail_writes > 0) {
		self->fail_writes--;
		g_array_append_val(self->writes, w);
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"injected: answered 503");
		return;
	}
	if (self->conflict_next > 0 ||
	    (condition == SFL_OBJECT_WRITE_CREATE_ONLY && self->data != NULL) ||
	    (condition == SFL_OBJECT_WRITE_IF_VERSION && g_strcmp0(version, self->version) != 0)) {
		if (self->conflict_next > 0)
			self->conflict_next--;
		g_array_append_val(self->writes, w);
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_CONFLICT,
					"injected: answered 412");
		return;
	}
	w.landed = TRUE;
	g_array_append_val(self->writes, w);
	bucket_store(self, data);
	if (self->slow_write > 0) {
		GSource *source = sfl_clock_timeout_source_new(self->clock, self->slow_write);

		self->slow_write = 0;
		g_task_set_task_data(task, g_strdup(self->version), g_free);
		g_source_set_callback(source, fake_bucket_slow_answer_cb, g_steal_pointer(&task),
				      g_object_unref);
		g_source_attach(source, NULL);
		g_source_unref(source);
		return;
	}
	g_task_return_pointer(task, g_strdup(self->version), g_free);
}

static void
fake_bucket_delete_async(SflObjectClient *client, const gchar *key, const gchar *version,
			 GCancellable *cancellable, GAsyncReadyCallback callback,
			 gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(client, cancellable, callback, user_data);
	g_task_return_boolean(task, TRUE);
}

static gchar *
fake_bucket_describe(SflObjectClient *client, const gchar *key)
{
	return g_strdup_printf("fake://bucket/%s", key);
}

static void
fake_bucket_close(SflObjectClient *client)
{
	FAKE_BUCKET(client)->closes++;
}

static void
fake_bucket_finalize(GObject *object)
{
	FakeBucket *self = FAKE_BUCKET(object);
	g_clear_pointer(&self->data, g_bytes_unref);
	g_free(self->version);
	g_array_unref(self->writes);
	G_OBJECT_CLASS(fake_bucket_parent_class)->finalize(object);
}

static void
fake_bucket_class_init(FakeBucketClass *klass)
{
	SflObjectClientClass *client_class = SFL_OBJECT_CLIENT_CLASS(klass);

	G_OBJECT_CLASS(klass)->finalize = fake_bucket_finalize;
	client_class->get_async = fake_bucket_get_async;
	client_class->put_async = fake_bucket_put_async;
	client_class->delete_async = fake_bucket_delete_async;
	client_class->describe = fake_bucket_describe;
	client_class->close = fake_bucket_close;
}

static void
fake_bucket_init(FakeBucket *self)
{
	self->writes = g_array_new(FALSE, TRUE, sizeof(FakeWrite));
	g_array_set_clear_func(self->writes, fake_write_clear);
}

static const FakeWrite *
last_write(FakeBucket *bucket)
{
	g_assert_cmpuint(bucket->writes->len, >, 0);
	return &g_array_index(bucket->writes, FakeWrite, bucket->writes->len - 1);
}

static gchar *
stored_holder(FakeBucket *bucket, guint64 *epoch)
{
	g_auto(SflLeaseDoc) doc = { 0 };
	gsize len = 0;
	const gchar *text = g_bytes_get_data(bucket->data, &len);

	sfl_lease_doc_parse(text, len, &doc);
	g_assert_cmpint(doc.state, ==, SFL_LEASE_VALID);
	if (epoch != NULL)
		*epoch = doc.epoch;
	return g_strdup(doc.holder);
}

/* --- one replica -------------------------------------------------------------------------- */

typedef SflTestCoord Replica;

typedef struct {
	SflTestFakeTime time;
	SflClock *clock; /* time's */
	FakeBucket *bucket;
	Replica me;
	Replica other;
} Fixture;

#define drain(f)			 sfl_test_drain(NULL)
#define advance(f, usec)		 sfl_test_fake_time_advance(&(f)->time, (usec))
#define elapsed(f)			 sfl_test_fake_time_elapsed(&(f)->time)
#define advance_until(f, cond, max_usec) SFL_TEST_ADVANCE_UNTIL(&(f)->time, cond, max_usec)

static void
fixture_setup(Fixture *f, gconstpointer user_data)
{
	sfl_test_fake_time_init(&f->time, WALL_START, STEP, NULL, NULL);
	f->clock = f->time.clock;
	f->bucket = g_object_new(FAKE_TYPE_BUCKET, NULL);
	f->bucket->clock = f->clock;
	g_ptr_array_set_size(warnings, 0);
}

static void
replica_start(Fixture *f, Replica *r, const gchar *holder)
{
	SflCoordinator *coord = sfl_object_lease_coordinator_new(SFL_OBJECT_CLIENT(f->bucket), KEY,
								 TTL, RENEW, holder, f->clock);

	g_assert_nonnull(coord);
	sfl_test_coord_use_floor(r, coord);
	sfl_test_coord_start(r, coord);
}

#define replica_stop(f, r)  sfl_test_coord_stop(r)
#define replica_clear(f, r) sfl_test_coord_clear(r)

static void
fixture_teardown(Fixture *f, gconstpointer user_data)
{
	replica_clear(f, &f->me);
	replica_clear(f, &f->other);
	g_clear_object(&f->bucket);
	sfl_test_fake_time_clear(&f->time);
}

static gboolean
leads(Replica *r)
{
	return r->coord != NULL && sfl_coordinator_is_leader(r->coord);
}

static void
start_leading(Fixture *f)
{
	replica_start(f, &f->me, ME);
	advance_until(f, leads(&f->me), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 1);
}

/* --- acquire ------------------------------------------------------------------------------ */

static void
test_create_only_epoch_one(Fixture *f, gconstpointer user_data)
{
	g_autofree gchar *holder = NULL;
	guint64 epoch = 0;
	const FakeWrite *w;

	replica_start(f, &f->me, ME);
	advance_until(f, leads(&f->me), SEC);
	g_assert_cmpuint(f->me.acquired, ==, 1);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 1);
	g_assert_cmpuint(f->bucket->writes->len, ==, 1);
	w = last_write(f->bucket);
	g_assert_cmpint(w->condition, ==, SFL_OBJECT_WRITE_CREATE_ONLY);
	g_assert_null(w->version);
	holder = stored_holder(f->bucket, &epoch);
	g_assert_cmpstr(holder, ==, ME);
	g_assert_cmpuint(epoch, ==, 1);
	g_assert_true(sfl_coordinator_check_fence(f->me.coord));
	g_assert_cmpstr(sfl_coordinator_get_holder(f->me.coord), ==, ME);
	g_assert_cmpuint(f->me.floor_calls, ==, 1);
}

static void
test_renewals_keep_epoch(Fixture *f, gconstpointer user_data)
{
	guint writes;

	start_leading(f);
	writes = f->bucket->writes->len;
	for (guint i = 0; i < 5; i++) {
		g_autofree gchar *before = g_strdup(f->bucket->version);
		guint64 epoch = 0;
		g_autofree gchar *holder = NULL;
		const FakeWrite *w;

		advance(f, RENEW);
		g_assert_cmpuint(f->bucket->writes->len, ==, writes + i + 1);
		w = last_write(f->bucket);
		/* each renewal is conditional on the version the previous write produced */
		g_assert_cmpint(w->condition, ==, SFL_OBJECT_WRITE_IF_VERSION);
		g_assert_cmpstr(w->version, ==, before);
		g_assert_true(w->landed);
		holder = stored_holder(f->bucket, &epoch);
		g_assert_cmpstr(holder, ==, ME);
		g_assert_cmpuint(epoch, ==, 1);
	}
	g_assert_true(leads(&f->me));
	g_assert_cmpuint(f->me.acquired, ==, 1);
	/* renewals need no read: the compare-and-swap is the check */
	g_assert_cmpuint(f->bucket->gets, ==, 1);
	g_assert_cmpuint(warnings->len, ==, 0);
}

static void
test_takeover_after_staleness(Fixture *f, gconstpointer user_data)
{
	g_autofree gchar *stale_version = NULL;
	const FakeWrite *w;

	server_put(f->bucket, OTHER, WALL_START + TTL, 3);
	stale_version = g_strdup(f->bucket->version);
	replica_start(f, &f->me, ME);
	advance(f, TTL - STEP);
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(f->bucket->writes->len, ==, 0);
	advance_until(f, leads(&f->me), 2 * RENEW);
	/* the standby looks again exactly when the version turns stale, not a poll later */
	g_assert_cmpint(elapsed(f), >=, TTL);
	g_assert_cmpint(elapsed(f), <=, TTL + STEP);
	/* exactly one more than the lease's */
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 4);
	g_assert_cmpuint(f->bucket->writes->len, ==, 1);
	w = last_write(f->bucket);
	g_assert_cmpint(w->condition, ==, SFL_OBJECT_WRITE_IF_VERSION);
	g_assert_cmpstr(w->version, ==, stale_version);
	g_assert_cmpuint(w->epoch, ==, 4);
}

static void
test_live_holder_keeps_lease(Fixture *f, gconstpointer user_data)
{
	server_put(f->bucket, OTHER, WALL_START + TTL, 2);
	replica_start(f, &f->me, ME);
	/* the holder renews (a new version) more often than the ttl */
	for (guint i = 0; i < 6; i++) {
		advance(f, RENEW);
		server_put(f->bucket, OTHER, WALL_START + TTL, 2);
	}
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(f->bucket->writes->len, ==, 0);
}

/* the leader's wall clock is never compared: only version changes on ours matter */
static void
test_expires_at_ignored(Fixture *f, gconstpointer user_data)
{
	/* far in the past: not claimable at once */
	server_put(f->bucket, OTHER, WALL_START - (gint64)365 * 24 * 3600 * SEC, 2);
	replica_start(f, &f->me, ME);
	advance(f, TTL - STEP);
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(f->bucket->writes->len, ==, 0);
	advance_until(f, leads(&f->me), 2 * STEP);
	g_assert_cmpint(elapsed(f), >=, TTL);
	replica_clear(f, &f->me);

	/* far in the future: claimable once unchanged for a ttl all the same */
	server_put(f->bucket, OTHER, WALL_START + (gint64)365 * 24 * 3600 * SEC, 7);
	f->time.t0 = sfl_clock_monotonic_usec(f->clock);
	replica_start(f, &f->me, ME);
	advance(f, TTL - STEP);
	g_assert_false(leads(&f->me));
	advance_until(f, leads(&f->me), 2 * STEP);
	g_assert_cmpint(elapsed(f), >=, TTL);
	g_assert_cmpint(elapsed(f), <=, TTL + STEP);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 8);
}

static void
test_read_error_never_writes(Fixture *f, gconstpointer user_data)
{
	server_put(f->bucket, OTHER, WALL_START, 2);
	/* every read for well over a ttl fails: cannot tell is never claimable */
	f->bucket->fail_gets = 1000;
	replica_start(f, &f->me, ME);
	advance(f, 4 * TTL);
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(f->bucket->writes->len, ==, 0);
	g_assert_cmpuint(f->bucket->gets, >=, 4);
	g_assert_cmpuint(count_warnings("backing off without contesting"), >=, 4);
	/* once reads work, the staleness clock starts from that first successful read */
	f->bucket->fail_gets = 0;
	f->time.t0 = sfl_clock_monotonic_usec(f->clock);
	advance_until(f, leads(&f->me), TTL + 2 * RENEW);
	g_assert_cmpint(elapsed(f), >=, TTL);
}

static void
test_takeover_conflict_backs_off(Fixture *f, gconstpointer user_data)
{
	guint gets;

	server_put(f->bucket, OTHER, WALL_START, 2);
	f->bucket->race_next = TRUE;
	replica_start(f, &f->me, ME);
	advance_until(f, f->bucket->writes->len == 1, TTL + SEC);
	gets = f->bucket->gets;
	/* the 412: lost the race; no re-read right after, the next look is a renew_interval away */
	g_assert_false(leads(&f->me));
	g_assert_false(last_write(f->bucket)->landed);
	advance(f, RENEW - STEP);
	g_assert_cmpuint(f->bucket->gets, ==, gets);
	g_assert_cmpuint(f->me.acquired, ==, 0);
}

static void
test_create_conflict(Fixture *f, gconstpointer user_data)
{
	/* someone created it between our 404 and our create-only write */
	f->bucket->conflict_next = 1;
	replica_start(f, &f->me, ME);
	advance(f, STEP);
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(f->bucket->writes->len, ==, 1);
	g_assert_cmpint(last_write(f->bucket)->condition, ==, SFL_OBJECT_WRITE_CREATE_ONLY);
	advance_until(f, leads(&f->me), RENEW + SEC);
}

static void
test_acquire_write_error(Fixture *f, gconstpointer user_data)
{
	f->bucket->fail_writes = 1;
	replica_start(f, &f->me, ME);
	advance(f, STEP);
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(count_warnings("cannot claim"), ==, 1);
	advance_until(f, leads(&f->me), RENEW + SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 1);
}

static void
test_two_standbys_one_winner(Fixture *f, gconstpointer user_data)
{
	guint conflicts = 0;

	server_put(f->bucket, "dead-leader", WALL_START, 5);
	replica_start(f, &f->me, ME);
	replica_start(f, &f->other, OTHER);
	advance_until(f, leads(&f->me) || leads(&f->other), TTL + SEC);
	advance(f, 3 * RENEW);
	/* exactly one winner, with exactly one bump; the loser's write met a conflict */
	g_assert_true(leads(&f->me) != leads(&f->other));
	g_assert_cmpuint(f->me.acquired + f->other.acquired, ==, 1);
	g_assert_cmpuint(MAX(f->me.last_acquired_epoch, f->other.last_acquired_epoch), ==, 6);
	for (guint i = 0; i < f->bucket->writes->len; i++) {
		const FakeWrite *w = &g_array_index(f->bucket->writes, FakeWrite, i);
		if (!w->landed)
			conflicts++;
	}
	g_assert_cmpuint(conflicts, ==, 1);
	/* the loser does not unseat the winner later either */
	advance(f, 3 * TTL);
	g_assert_cmpuint(f->me.acquired + f->other.acquired, ==, 1);
}

static void
test_released_claimable_at_once(Fixture *f, gconstpointer user_data)
{
	server_put(f->bucket, "", WALL_START, 4);
	replica_start(f, &f->me, ME);
	advance_until(f, leads(&f->me), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 5);
}

static void
test_invalid_document_waits(Fixture *f, gconstpointer user_data)
{
	server_put_raw(f->bucket, "not a lease");
	replica_start(f, &f->me, ME);
	advance(f, TTL - STEP);
	g_assert_false(leads(&f->me));
	advance_until(f, leads(&f->me), 2 * STEP);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 1);
}

static void
test_floor(Fixture *f, gconstpointer user_data)
{
	/* the store remembers epoch 7 while the lease object was lost */
	f->me.floor = 7;
	replica_start(f, &f->me, ME);
	advance_until(f, leads(&f->me), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 8);
	g_assert_cmpuint(count_warnings("continuing from the store's epoch"), ==, 1);
}

/* a store floor at the largest epoch a JSON reader takes: never claimed, never wrapped */
static void
test_floor_exhausted(Fixture *f, gconstpointer user_data)
{
	f->me.floor = G_MAXINT64;
	replica_start(f, &f->me, ME);
	advance_until(f, count_warnings("the largest there is") >= 2, 2 * TTL);
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 0);
}

/* --- hold --------------------------------------------------------------------------------- */

static void
test_renew_conflict_demotes(Fixture *f, gconstpointer user_data)
{
	guint gets;

	start_leading(f);
	gets = f->bucket->gets;
	/* another writer took it over */
	server_put(f->bucket, OTHER, WALL_START + TTL, 2);
	advance(f, RENEW);
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(f->me.lost, ==, 1);
	/* lost is called with no re-read */
	g_assert_cmpuint(f->bucket->gets, ==, gets);
	g_assert_false(last_write(f->bucket)->landed);
	g_assert_false(sfl_coordinator_check_fence(f->me.coord) && leads(&f->me));
	/* demoted, it waits for the new holder's lease to go stale like any standby */
	advance(f, RENEW);
	g_assert_false(leads(&f->me));
}

/*
 * A work unit's lease (its contest can watch) that someone else wrote over is read again at
 * once, so a foreign document nobody renews is taken over a ttl after that read, within
 * ttl + renew_interval of the write; the single lease above waits a renew_interval first.
 */
static void
test_unit_conflict_rereads_at_once(Fixture *f, gconstpointer user_data)
{
	SflCoordinator *coord = sfl_object_lease_coordinator_new(SFL_OBJECT_CLIENT(f->bucket), KEY,
								 TTL, RENEW, ME, f->clock);
	gint64 written = 0;
	guint gets = 0;

	g_assert_true(sfl_coordinator_set_watching(coord, FALSE));
	sfl_test_coord_use_floor(&f->me, coord);
	sfl_test_coord_start(&f->me, coord);
	advance_until(f, leads(&f->me), SEC);
	gets = f->bucket->gets;
	/* a document nobody will renew, written over ours */
	server_put(f->bucket, OTHER, WALL_START + TTL, 2);
	written = elapsed(f);
	advance_until(f, !leads(&f->me), RENEW + SEC);
	g_assert_cmpuint(f->me.lost, ==, 1);
	/* the standby read follows the loss at once */
	advance(f, STEP);
	g_assert_cmpuint(f->bucket->gets, ==, gets + 1);
	advance_until(f, leads(&f->me), TTL + RENEW + SEC);
	g_assert_cmpint(elapsed(f) - written, <=, TTL + RENEW + STEP);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->me.coord), ==, 3);
}

static void
test_renew_transient_keeps(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	/* one failed renewal: still within the ttl of the last good one */
	f->bucket->fail_writes = 1;
	advance(f, RENEW);
	g_assert_true(leads(&f->me));
	g_assert_true(sfl_coordinator_check_fence(f->me.coord));
	g_assert_cmpuint(count_warnings("still leading"), ==, 1);
	g_assert_false(last_write(f->bucket)->landed);
	advance(f, RENEW);
	g_assert_true(last_write(f->bucket)->landed);
	g_assert_true(leads(&f->me));
}

static void
test_renew_unconfirmed_cap(Fixture *f, gconstpointer user_data)
{
	guint writes;

	start_leading(f);
	f->bucket->fail_writes = 1000;
	/* the fence drops a ttl after the last successful renewal, before the loop notices */
	advance(f, TTL - STEP);
	g_assert_true(sfl_coordinator_check_fence(f->me.coord));
	advance(f, STEP);
	g_assert_false(sfl_coordinator_check_fence(f->me.coord));
	advance_until(f, !leads(&f->me), RENEW);
	g_assert_cmpuint(f->me.lost, ==, 1);
	g_assert_cmpuint(count_warnings("giving up leadership"), ==, 1);
	writes = f->bucket->writes->len;
	/* standing by, it never writes while it cannot tell */
	f->bucket->fail_gets = 1000;
	advance(f, 2 * TTL);
	g_assert_cmpuint(f->bucket->writes->len, ==, writes);
}

static void
test_stalled_leader_surrenders(Fixture *f, gconstpointer user_data)
{
	guint writes;

	start_leading(f);
	writes = f->bucket->writes->len;
	/* the whole process froze past its ttl: it wakes and gives up without writing */
	sfl_fake_clock_advance(f->clock, TTL + RENEW);
	drain(f);
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(f->bucket->writes->len, ==, writes);
	g_assert_cmpuint(count_warnings("was this process stalled?"), ==, 1);
}

static void
test_renew_vanished(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	/* deleted under the leader: an if-version write meets a conflict (S3 404 / GCS 412) */
	bucket_store(f->bucket, NULL);
	advance(f, RENEW);
	g_assert_false(leads(&f->me));
	g_assert_false(last_write(f->bucket)->landed);
}

/* --- stop --------------------------------------------------------------------------------- */

static void
test_stop_releases_and_closes(Fixture *f, gconstpointer user_data)
{
	g_autofree gchar *holder = NULL;
	guint64 epoch = 0;

	start_leading(f);
	advance(f, RENEW);
	replica_stop(f, &f->me);
	g_assert_cmpuint(f->me.lost, ==, 1);
	/* released: an empty holder with the epoch kept, so the successor bumps it */
	holder = stored_holder(f->bucket, &epoch);
	g_assert_cmpstr(holder, ==, "");
	g_assert_cmpuint(epoch, ==, 1);
	g_assert_cmpuint(f->bucket->closes, ==, 1);
	/* a successor claims it at once */
	replica_start(f, &f->other, OTHER);
	advance_until(f, leads(&f->other), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->other.coord), ==, 2);
}

static void
test_stop_after_errors_closes(Fixture *f, gconstpointer user_data)
{
	server_put(f->bucket, OTHER, WALL_START, 2);
	f->bucket->fail_gets = 1000;
	replica_start(f, &f->me, ME);
	advance(f, 2 * RENEW);
	replica_stop(f, &f->me);
	g_assert_cmpuint(f->bucket->closes, ==, 1);
	g_assert_cmpuint(f->bucket->writes->len, ==, 0);
}

static void
test_stop_release_fails(Fixture *f, gconstpointer user_data)
{
	g_autofree gchar *holder = NULL;

	start_leading(f);
	f->bucket->conflict_next = 1;
	replica_stop(f, &f->me);
	drain(f);
	/* the release did not land: the lease goes stale on its own */
	holder = stored_holder(f->bucket, NULL);
	g_assert_cmpstr(holder, ==, ME);
	g_assert_cmpuint(f->bucket->closes, ==, 1);
}

/*
 * A stop while a renewal is out: the release waits for its answer and gives back the version
 * it returned. Skipping it left the lease to expire, and the successor waited a full ttl;
 * sharded handovers, decided by membership rounds in phase with the renewals, hit that often.
 */
static void
test_stop_during_renewal_releases(Fixture *f, gconstpointer user_data)
{
	g_autofree gchar *holder = NULL;
	guint64 epoch = 0;
	guint writes = 0;

	start_leading(f);
	writes = f->bucket->writes->len;
	f->bucket->slow_write = SEC;
	advance(f, RENEW + STEP);
	g_assert_cmpuint(f->bucket->writes->len, ==, writes + 1);
	writes = f->bucket->writes->len;
	g_assert_true(last_write(f->bucket)->landed);
	g_assert_cmpstr(last_write(f->bucket)->holder, ==, ME);
	replica_stop(f, &f->me);
	g_assert_false(leads(&f->me));
	/* nothing more is written until the renewal is answered */
	g_assert_cmpuint(f->bucket->writes->len, ==, writes);
	advance_until(f, f->bucket->writes->len > writes, 2 * SEC);
	/* the release is a compare-and-swap on the version the renewal returned */
	g_assert_true(last_write(f->bucket)->landed);
	g_assert_cmpstr(last_write(f->bucket)->holder, ==, "");
	holder = stored_holder(f->bucket, &epoch);
	g_assert_cmpstr(holder, ==, "");
	g_assert_cmpuint(epoch, ==, 1);
	drain(f);
	g_assert_cmpuint(f->bucket->closes, ==, 1);
	/* claimable at once: the successor takes it well inside one ttl */
	replica_start(f, &f->other, OTHER);
	advance_until(f, leads(&f->other), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->other.coord), ==, 2);
}

/* the renewal out at the stop was refused: nothing is ours to give back */
static void
test_stop_during_failed_renewal_keeps(Fixture *f, gconstpointer user_data)
{
	g_autofree gchar *holder = NULL;
	guint writes = 0;

	start_leading(f);
	writes = f->bucket->writes->len;
	f->bucket->slow_fail_write = SEC;
	advance(f, RENEW + STEP);
	g_assert_cmpuint(f->bucket->writes->len, ==, writes + 1);
	writes = f->bucket->writes->len;
	replica_stop(f, &f->me);
	advance(f, 2 * SEC);
	g_assert_cmpuint(f->bucket->writes->len, ==, writes);
	holder = stored_holder(f->bucket, NULL);
	g_assert_cmpstr(holder, ==, ME);
	g_assert_cmpuint(f->bucket->closes, ==, 1);
}

static void
test_renew_slow_write_cap(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	/* the renewal at RENEW hangs and fails only after the ttl of the last good one */
	f->bucket->slow_fail_write = TTL;
	advance(f, RENEW + TTL);
	g_assert_false(leads(&f->me));
	g_assert_cmpuint(count_warnings("not within its ttl"), ==, 1);
}

static void
test_accessors(Fixture *f, gconstpointer user_data)
{
	SflObjectLeaseCoordinator *lease;

	replica_start(f, &f->me, ME);
	lease = SFL_OBJECT_LEASE_COORDINATOR(f->me.coord);
	/* what the doctor probes: the bucket and the lease key, never the checkpoint object */
	g_assert_true(sfl_object_lease_coordinator_get_client(lease) ==
		      SFL_OBJECT_CLIENT(f->bucket));
	g_assert_cmpstr(sfl_object_lease_coordinator_get_key(lease), ==, KEY);
}

static void
test_lost_fence(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	g_assert_true(sfl_coordinator_check_fence(f->me.coord));
	server_put(f->bucket, OTHER, WALL_START, 2);
	advance(f, RENEW);
	g_assert_false(leads(&f->me));
	/* no successful renewal since: the fence closes a ttl after the last one */
	advance(f, TTL - RENEW);
	g_assert_false(sfl_coordinator_check_fence(f->me.coord));
}

/* --- configuration ------------------------------------------------------------------------ */

#define CONFIG_BASE                                                                                \
	"salesforce: {client_id: cid, username: u@example.com, private_key: key}\n"                \
	"sink: {loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}}\n"

static gchar *
config_problems(const gchar *tail)
{
	g_autofree gchar *yaml = g_strconcat(CONFIG_BASE, tail, NULL);
	g_auto(GStrv) envp = g_new0(gchar *, 1);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", envp, &error);

	if (config != NULL)
		return NULL;
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_test_message("%s", error->message);
	return g_strdup(error->message);
}

static void
test_config(void)
{
	g_autofree gchar *empty = NULL;
	g_autofree gchar *same_s3 = NULL;
	g_autofree gchar *same_gcs = NULL;
	g_autofree gchar *renew = NULL;
	g_autofree gchar *other_endpoint = NULL;
	g_autofree gchar *fine = NULL;

	empty = config_problems("coordinate: {type: s3_lease}\n");
	g_assert_nonnull(strstr(empty, "coordinate.s3_lease.bucket"));
	g_assert_nonnull(strstr(empty, "required when coordinate.type is s3_lease"));
	g_clear_pointer(&empty, g_free);
	empty = config_problems("coordinate: {type: gcs_lease, gcs_lease: {bucket: ' '}}\n");
	g_assert_nonnull(strstr(empty, "coordinate.gcs_lease.bucket"));

	same_s3 = config_problems(
		"state: {store: s3, s3: {bucket: b, key: k.json}}\n"
		"coordinate: {type: s3_lease, s3_lease: {bucket: b, key: k.json}}\n");
	g_assert_nonnull(strstr(same_s3, "coordinate.s3_lease.key"));
	g_assert_nonnull(strstr(same_s3, "must not be the checkpoint object"));
	same_gcs =
		config_problems("state: {store: gcs, gcs: {bucket: b}}\n"
				"coordinate: {type: gcs_lease, gcs_lease: {bucket: b, object_name: "
				"sf2loki/state.json}}\n");
	g_assert_nonnull(strstr(same_gcs, "coordinate.gcs_lease.object_name"));

	/* checked whatever type is selected, like the other leases */
	renew = config_problems("coordinate:\n  s3_lease: {ttl: 20s, renew_interval: 10s}\n"
				"  gcs_lease: {ttl: 30s, renew_interval: 15s}\n");
	g_assert_nonnull(strstr(renew, "coordinate.s3_lease.renew_interval"));
	g_assert_nonnull(strstr(renew, "2 x renew_interval (10s) must be less than ttl (20s)"));
	g_assert_nonnull(strstr(renew, "coordinate.gcs_lease.renew_interval"));

	/* the same key on another endpoint is another object */
	other_endpoint = config_problems(
		"state: {store: s3, s3: {bucket: b, key: k.json, endpoint_url: 'http://a:9000'}}\n"
		"coordinate: {type: s3_lease, s3_lease: {bucket: b, key: k.json}}\n");
	g_assert_null(other_endpoint);
	fine = config_problems("state: {store: s3, s3: {bucket: b}}\n"
			       "coordinate: {type: s3_lease, s3_lease: {bucket: b}}\n");
	g_assert_null(fine);
}

/* --- the coordinator contract (tests/common/sfl-test-coordinator.h) ---------------------- */

/* the first step of the run (the floor read) is under way once a step has passed */
static void
contract_start(gpointer fixture)
{
	Fixture *f = fixture;

	replica_start(f, &f->me, ME);
	advance(f, STEP);
}

static guint
contract_writes(gpointer fixture)
{
	return ((Fixture *)fixture)->bucket->writes->len;
}

/* no holder, expired at the start: claimable, and the next epoch is @epoch + 1 */
static void
contract_seed_claimable(gpointer fixture, guint64 epoch)
{
	server_put(((Fixture *)fixture)->bucket, "", WALL_START, epoch);
}

static const SflTestCoordContract contract = {
	.prefix = "/sfl/object-lease",
	.fixture_size = sizeof(Fixture),
	.setup = (void (*)(gpointer, gconstpointer))fixture_setup,
	.teardown = (void (*)(gpointer, gconstpointer))fixture_teardown,
	.coord_offset = G_STRUCT_OFFSET(Fixture, me),
	.time_offset = G_STRUCT_OFFSET(Fixture, time),
	.start = contract_start,
	.writes = contract_writes,
	.seed_claimable = contract_seed_claimable,
	.retake_usec = TTL + 2 * RENEW,
};

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	warnings = sfl_test_warnings_record(TRUE);
#define ADD(name, func)                                                                            \
	g_test_add("/sfl/object-lease/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)
	ADD("acquire/create-only-epoch-one", test_create_only_epoch_one);
	ADD("acquire/takeover-after-staleness", test_takeover_after_staleness);
	ADD("acquire/live-holder-keeps-lease", test_live_holder_keeps_lease);
	ADD("acquire/expires-at-ignored", test_expires_at_ignored);
	ADD("acquire/read-error-never-writes", test_read_error_never_writes);
	ADD("acquire/takeover-conflict-backs-off", test_takeover_conflict_backs_off);
	ADD("acquire/create-conflict", test_create_conflict);
	ADD("acquire/write-error", test_acquire_write_error);
	ADD("acquire/two-standbys-one-winner", test_two_standbys_one_winner);
	ADD("acquire/released-claimable-at-once", test_released_claimable_at_once);
	ADD("acquire/invalid-document-waits", test_invalid_document_waits);
	ADD("acquire/floor", test_floor);
	ADD("acquire/floor-exhausted", test_floor_exhausted);
	ADD("hold/renewals-keep-epoch", test_renewals_keep_epoch);
	ADD("hold/renew-conflict-demotes", test_renew_conflict_demotes);
	ADD("hold/unit-conflict-rereads-at-once", test_unit_conflict_rereads_at_once);
	ADD("hold/renew-transient-keeps", test_renew_transient_keeps);
	ADD("hold/renew-unconfirmed-cap", test_renew_unconfirmed_cap);
	ADD("hold/stalled-leader-surrenders", test_stalled_leader_surrenders);
	ADD("hold/renew-vanished", test_renew_vanished);
	ADD("hold/lost-fence", test_lost_fence);
	ADD("hold/renew-slow-write-cap", test_renew_slow_write_cap);
	ADD("accessors", test_accessors);
	ADD("stop/releases-and-closes", test_stop_releases_and_closes);
	ADD("stop/after-errors-closes", test_stop_after_errors_closes);
	ADD("stop/release-fails", test_stop_release_fails);
	ADD("stop/during-renewal-releases", test_stop_during_renewal_releases);
	ADD("stop/during-failed-renewal-keeps", test_stop_during_failed_renewal_keeps);
	sfl_test_coord_contract_add(&contract);
	g_test_add_func("/sfl/object-lease/config", test_config);
	return g_test_run();
}
