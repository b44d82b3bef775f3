/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestK8sLease"

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-cas-lease-coordinator.h"
#include "sfl-error.h"
#include "sfl-config.h"
#include "sfl-k8s-lease-coordinator.h"
#include "sfl-k8s-lease-doctor.h"
#include "sfl-kube-client.h"
#include "sfl-test-coordinator.h"

/*
 * The k8s_lease coordinator on a fake clock and an in-memory Lease API with the API server's
 * compare-and-swap rules and scripted faults (no network, no real timers), the Lease JSON, and
 * the Kubernetes client's configuration loading (in-cluster and kubeconfig).
 */

#define WALL_START ((gint64)1796007600 * G_USEC_PER_SEC)
#define SEC	   G_USEC_PER_SEC
#define MSEC	   ((gint64)1000)
#define DURATION   (30 * SEC)
#define RENEW	   (10 * SEC)
#define STEP	   (100 * MSEC)
#define ME	   "pod-b"
#define OTHER	   "pod-a"

static GPtrArray *warnings; /* (element-type utf8) */

#define count_warnings sfl_test_warnings_count

/* --- a Lease API in memory: the API server's CAS rules plus scripted faults ---------------- */

#define FAKE_TYPE_LEASE_API (fake_lease_api_get_type())
G_DECLARE_FINAL_TYPE(FakeLeaseApi, fake_lease_api, FAKE, LEASE_API, SflK8sLeaseApi)

struct _FakeLeaseApi {
	SflK8sLeaseApi parent_instance;
	SflK8sLease *stored; /* NULL when the Lease does not exist */
	guint64 next_rv;
	guint gets;
	guint writes;		   /* write attempts that reached the "server" */
	guint fail_gets;	   /* the next N reads fail with a 500 */
	guint fail_writes;	   /* the next N writes fail with a 500 and do not land */
	guint conflict_writes;	   /* the next N writes answer 409 */
	gboolean delete_on_put;	   /* the Lease disappears right before the next replace */
	gboolean appear_after_404; /* another replica creates it right after a 404 */
	gboolean omit_rv;	   /* the next write's answer lacks metadata.resourceVersion */
	SflClock *clock;
	gint64 slow_fail_get;	/* the next read fails after this much fake time */
	gint64 slow_fail_write; /* the next write fails after this much fake time */
};

G_DEFINE_TYPE(FakeLeaseApi, fake_lease_api, SFL_TYPE_K8S_LEASE_API)

static void server_put(FakeLeaseApi *api, const gchar *holder, gint64 duration_s,
		       gint64 transitions, gboolean with_renew);

static gboolean
fake_lease_api_slow_fail_cb(gpointer user_data)
{
	g_task_return_new_error(G_TASK(user_data), SFL_ERROR, SFL_ERROR_TRANSIENT,
				"injected: timed out");
	return G_SOURCE_REMOVE;
}

static void
fake_lease_api_get_async(SflK8sLeaseApi *api, GCancellable *cancellable,
			 GAsyncReadyCallback callback, gpointer user_data)
{
	FakeLeaseApi *self = FAKE_LEASE_API(api);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);

	self->gets++;
	if (self->slow_fail_get > 0) {
		GSource *source = sfl_clock_timeout_source_new(self->clock, self->slow_fail_get);

		self->slow_fail_get = 0;
		g_source_set_callback(source, fake_lease_api_slow_fail_cb, g_steal_pointer(&task),
				      g_object_unref);
		g_source_attach(source, NULL);
		g_source_unref(source);
		return;
	}
	if (self->fail_gets > 0) {
		self->fail_gets--;
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"injected: answered 500");
		return;
	}
	if (self->stored == NULL) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_NOT_FOUND,
					"injected: answered 404");
		if (self->appear_after_404) {
			self->appear_after_404 = FALSE;
			server_put(self, OTHER, 30, 1, TRUE);
		}
		return;
	}
	g_task_return_pointer(task, sfl_k8s_lease_copy(self->stored),
			      (GDestroyNotify)sfl_k8s_lease_free);
}

static SflK8sLease *
fake_lease_api_finish(SflK8sLeaseApi *api, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
fake_lease_api_store(FakeLeaseApi *self, const SflK8sLease *lease)
{
	sfl_k8s_lease_free(self->stored);
	self->stored = sfl_k8s_lease_copy(lease);
	g_free(self->stored->resource_version);
	self->stored->resource_version = g_strdup_printf("%" G_GUINT64_FORMAT, ++self->next_rv);
}

static void
fake_lease_api_write_async(SflK8sLeaseApi *api, const SflK8sLease *lease, gboolean dry_run,
			   GCancellable *cancellable, GAsyncReadyCallback callback,
			   gpointer user_data)
{
	FakeLeaseApi *self = FAKE_LEASE_API(api);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
	SflK8sLease *answer = NULL;

	g_assert_false(dry_run);
	self->writes++;
	if (self->slow_fail_write > 0) {
		GSource *source = sfl_clock_timeout_source_new(self->clock, self->slow_fail_write);

		self->slow_fail_write = 0;
		g_source_set_callback(source, fake_lease_api_slow_fail_cb, g_steal_pointer(&task),
				      g_object_unref);
		g_source_attach(source, NULL);
		g_source_unref(source);
		return;
	}
	if (self->fail_writes > 0) {
		self->fail_writes--;
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"injected: answered 500");
		return;
	}
	if (self->conflict_writes > 0) {
		self->conflict_writes--;
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_CONFLICT,
					"injected: answered 409");
		return;
	}
	if (lease->resource_version == NULL) {
		if (self->stored != NULL) {
			g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_CONFLICT,
						"answered 409: already exists");
			return;
		}
	} else {
		if (self->delete_on_put) {
			self->delete_on_put = FALSE;
			g_clear_pointer(&self->stored, sfl_k8s_lease_free);
		}
		if (self->stored == NULL) {
			g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_NOT_FOUND,
						"answered 404");
			return;
		}
		if (g_strcmp0(self->stored->resource_version, lease->resource_version) != 0) {
			g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_CONFLICT,
						"answered 409: the object has been modified");
			return;
		}
	}
	fake_lease_api_store(self, lease);
	answer = sfl_k8s_lease_copy(self->stored);
	if (self->omit_rv) {
		self->omit_rv = FALSE;
		g_clear_pointer(&answer->resource_version, g_free);
	}
	g_task_return_pointer(task, answer, (GDestroyNotify)sfl_k8s_lease_free);
}

static void
fake_lease_api_finalize(GObject *object)
{
	sfl_k8s_lease_free(FAKE_LEASE_API(object)->stored);
	G_OBJECT_CLASS(fake_lease_api_parent_class)->finalize(object);
}

static void
fake_lease_api_class_init(FakeLeaseApiClass *klass)
{
	SflK8sLeaseApiClass *api_class = SFL_K8S_LEASE_API_CLASS(klass);

	G_OBJECT_CLASS(klass)->finalize = fake_lease_api_finalize;
	api_class->get_async = fake_lease_api_get_async;
	api_class->get_finish = fake_lease_api_finish;
	api_class->write_async = fake_lease_api_write_async;
	api_class->write_finish = fake_lease_api_finish;
}

static void
fake_lease_api_init(FakeLeaseApi *self)
{
}

/* another replica's write, as the API server would store it */
static void
server_put(FakeLeaseApi *api, const gchar *holder, gint64 duration_s, gint64 transitions,
	   gboolean with_renew)
{
	g_autoptr(SflK8sLease) lease = sfl_k8s_lease_new();

	lease->holder = g_strdup(holder);
	lease->duration_s = duration_s;
	lease->transitions = transitions;
	if (with_renew)
		lease->renew_time = g_strdup("2020-01-01T00:00:00.000000Z");
	fake_lease_api_store(api, lease);
}

/* --- the fixture -------------------------------------------------------------------------- */

typedef struct {
	SflTestFakeTime time;
	SflClock *clock; /* time's */
	FakeLeaseApi *api;
	SflTestCoord c; /* the coordinator's run and the store's epoch floor */
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
	f->api = g_object_new(FAKE_TYPE_LEASE_API, NULL);
	f->api->clock = f->clock;
	g_ptr_array_set_size(warnings, 0);
}

static void
fixture_start(Fixture *f)
{
	SflCoordinator *coord = sfl_k8s_lease_coordinator_new(SFL_K8S_LEASE_API(f->api), DURATION,
							      RENEW, ME, f->clock);

	g_assert_nonnull(coord);
	sfl_test_coord_use_floor(&f->c, coord);
	sfl_test_coord_start(&f->c, coord);
}

static void
fixture_stop(Fixture *f)
{
	sfl_test_coord_stop(&f->c);
}

static void
fixture_teardown(Fixture *f, gconstpointer user_data)
{
	sfl_test_coord_clear(&f->c);
	g_clear_object(&f->api);
	sfl_test_fake_time_clear(&f->time);
}

static gboolean
is_leader(Fixture *f)
{
	return sfl_coordinator_is_leader(f->c.coord);
}

/* the fixture leading with epoch 1 on a Lease it created */
static void
start_leading(Fixture *f)
{
	fixture_start(f);
	advance_until(f, is_leader(f), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
}

/* --- acquire ------------------------------------------------------------------------------ */

static void
test_create_epoch_one(Fixture *f, gconstpointer user_data)
{
	g_autofree gchar *now = sfl_k8s_micro_time(WALL_START);

	fixture_start(f);
	advance_until(f, is_leader(f), SEC);
	g_assert_cmpuint(f->c.acquired, ==, 1);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
	g_assert_nonnull(f->api->stored);
	g_assert_cmpstr(f->api->stored->holder, ==, ME);
	g_assert_cmpint(f->api->stored->transitions, ==, 1);
	g_assert_cmpint(f->api->stored->duration_s, ==, 30);
	g_assert_cmpstr(f->api->stored->acquire_time, ==, now);
	g_assert_cmpstr(f->api->stored->renew_time, ==, now);
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
	g_assert_cmpuint(f->c.floor_calls, ==, 1);
	g_assert_cmpstr(sfl_coordinator_get_holder(f->c.coord), ==, ME);
}

static void
test_renewals_keep_epoch(Fixture *f, gconstpointer user_data)
{
	g_autofree gchar *acquired_at = NULL;
	g_autofree gchar *renewed_at = NULL;
	guint writes = 0;

	start_leading(f);
	acquired_at = g_strdup(f->api->stored->acquire_time);
	writes = f->api->writes;
	advance(f, 5 * RENEW + STEP);
	g_assert_cmpuint(f->api->writes, ==, writes + 5);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(f->c.acquired, ==, 1);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
	g_assert_cmpint(f->api->stored->transitions, ==, 1);
	/* acquireTime stays, renewTime moves */
	g_assert_cmpstr(f->api->stored->acquire_time, ==, acquired_at);
	renewed_at = sfl_k8s_micro_time(WALL_START + 5 * RENEW);
	g_assert_cmpstr(f->api->stored->renew_time, ==, renewed_at);
	g_assert_cmpuint(warnings->len, ==, 0);
}

static void
test_takeover_bumps_transitions(Fixture *f, gconstpointer user_data)
{
	server_put(f->api, OTHER, 30, 3, TRUE);
	fixture_start(f);
	/* the holder went silent: claimable only a full duration after we first saw this version */
	advance(f, DURATION - RENEW);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->api->writes, ==, 0);
	advance_until(f, is_leader(f), 2 * RENEW);
	/* the standby looks again exactly when the version turns stale, not a poll later */
	g_assert_cmpint(elapsed(f), >=, DURATION);
	g_assert_cmpint(elapsed(f), <=, DURATION + STEP);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 4);
	g_assert_cmpstr(f->api->stored->holder, ==, ME);
	g_assert_cmpint(f->api->stored->transitions, ==, 4);
	/* takeover sets acquireTime to now */
	g_assert_cmpstr(f->api->stored->acquire_time, ==, f->api->stored->renew_time);
}

static void
test_live_holder_keeps_lease(Fixture *f, gconstpointer user_data)
{
	server_put(f->api, OTHER, 30, 2, TRUE);
	fixture_start(f);
	/* the holder renews (a new resourceVersion) more often than its duration */
	for (guint i = 0; i < 6; i++) {
		advance(f, RENEW);
		server_put(f->api, OTHER, 30, 2, TRUE);
	}
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->api->writes, ==, 0);
}

static void
test_unset_transitions(Fixture *f, gconstpointer user_data)
{
	/* no renewTime: claimable at once; no leaseTransitions: epoch 1 */
	server_put(f->api, OTHER, 30, -1, FALSE);
	fixture_start(f);
	advance_until(f, is_leader(f), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
	g_assert_cmpint(f->api->stored->transitions, ==, 1);
}

static void
test_unset_transitions_floor(Fixture *f, gconstpointer user_data)
{
	server_put(f->api, NULL, -1, -1, FALSE);
	f->c.floor = 7;
	f->c.floor_present = TRUE;
	fixture_start(f);
	advance_until(f, is_leader(f), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 8);
	g_assert_cmpint(f->api->stored->transitions, ==, 8);
	g_assert_cmpuint(count_warnings("recorded epoch 7"), ==, 1);
}

static void
test_recreated_lease_floor(Fixture *f, gconstpointer user_data)
{
	/* the Lease was deleted; the store remembers epoch 5: the create writes 6, not 1 */
	f->c.floor = 5;
	f->c.floor_present = TRUE;
	fixture_start(f);
	advance_until(f, is_leader(f), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 6);
	g_assert_cmpint(f->api->stored->transitions, ==, 6);
}

static void
test_acquire_write_error_backs_off(Fixture *f, gconstpointer user_data)
{
	f->api->fail_writes = 1;
	fixture_start(f);
	advance(f, STEP);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->api->writes, ==, 1);
	g_assert_cmpuint(count_warnings("cannot claim"), ==, 1);
	/* no retry before renew_interval */
	advance(f, RENEW - 2 * STEP);
	g_assert_cmpuint(f->api->writes, ==, 1);
	advance_until(f, is_leader(f), 2 * STEP);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 1);
}

static void
test_acquire_lost_race(Fixture *f, gconstpointer user_data)
{
	f->api->conflict_writes = 1;
	fixture_start(f);
	advance(f, STEP);
	g_assert_false(is_leader(f));
	/* a lost race is expected contention, not a warning */
	g_assert_cmpuint(warnings->len, ==, 0);
	/* someone else created it meanwhile and keeps renewing */
	server_put(f->api, OTHER, 30, 1, TRUE);
	advance(f, RENEW);
	g_assert_false(is_leader(f));
	g_assert_cmpstr(f->api->stored->holder, ==, OTHER);
}

static void
test_acquire_create_conflict(Fixture *f, gconstpointer user_data)
{
	/* absent at our read, created by another replica before our create: 409 AlreadyExists */
	f->api->appear_after_404 = TRUE;
	fixture_start(f);
	advance(f, STEP);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->api->writes, ==, 1);
	g_assert_cmpstr(f->api->stored->holder, ==, OTHER);
	g_assert_cmpuint(warnings->len, ==, 0);
}

static void
test_acquire_read_error_never_writes(Fixture *f, gconstpointer user_data)
{
	f->api->fail_gets = 1000;
	fixture_start(f);
	advance(f, 3 * DURATION);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->api->writes, ==, 0);
	g_assert_null(f->api->stored);
	g_assert_cmpuint(count_warnings("backing off without contesting"), >=, 9);
	/* the API answers again: now it can tell, and creates */
	f->api->fail_gets = 0;
	advance_until(f, is_leader(f), RENEW + STEP);
}

static void
test_own_stale_identity_waits(Fixture *f, gconstpointer user_data)
{
	/* a previous incarnation with our identity: waited out like any holder */
	server_put(f->api, ME, 30, 2, TRUE);
	fixture_start(f);
	advance(f, DURATION - RENEW);
	g_assert_false(is_leader(f));
	advance_until(f, is_leader(f), 2 * RENEW);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 3);
}

/* --- hold --------------------------------------------------------------------------------- */

static void
test_renew_conflict_surrenders(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	f->api->conflict_writes = 1;
	advance(f, RENEW + STEP);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->c.lost, ==, 1);
	g_assert_cmpuint(count_warnings("giving up leadership"), ==, 1);
	g_assert_false(sfl_coordinator_check_fence(f->c.coord));
}

static void
test_renew_transient_keeps(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	f->api->fail_writes = 1;
	advance(f, RENEW + STEP);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(count_warnings("still leading"), ==, 1);
	advance(f, RENEW);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(f->c.lost, ==, 0);
	/* failing for a whole duration since the last success: surrender */
	f->api->fail_writes = 1000;
	advance_until(f, !is_leader(f), DURATION + RENEW);
	g_assert_cmpuint(count_warnings("not within its duration"), ==, 1);
	g_assert_cmpuint(f->c.lost, ==, 1);
}

static void
test_renew_lease_deleted(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	g_clear_pointer(&f->api->stored, sfl_k8s_lease_free);
	advance(f, RENEW + STEP);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(count_warnings("was deleted"), ==, 1);
	/* as a standby it recreates the Lease with a higher epoch, never a lower one */
	advance_until(f, is_leader(f), RENEW + STEP);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 2);
	g_assert_cmpint(f->api->stored->transitions, ==, 2);
}

static void
test_renew_put_not_found(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	f->api->delete_on_put = TRUE;
	advance(f, RENEW + STEP);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(count_warnings("changed or was deleted"), ==, 1);
}

static void
test_renew_foreign_holder(Fixture *f, gconstpointer user_data)
{
	guint writes = 0;

	start_leading(f);
	server_put(f->api, OTHER, 30, 2, TRUE);
	writes = f->api->writes;
	advance(f, RENEW + STEP);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->api->writes, ==, writes);
	g_assert_cmpuint(count_warnings("is now held by pod-a"), ==, 1);
}

static void
test_renew_higher_epoch_same_identity(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	/* our identity, but a takeover happened (a replica with a duplicated identity) */
	server_put(f->api, ME, 30, 5, TRUE);
	advance(f, RENEW + STEP);
	g_assert_false(is_leader(f));
}

static void
test_renew_read_error(Fixture *f, gconstpointer user_data)
{
	guint writes = 0;

	start_leading(f);
	/* a failed read still renews by compare-and-swap on the version we know */
	f->api->fail_gets = 1;
	writes = f->api->writes;
	advance(f, RENEW + STEP);
	g_assert_true(is_leader(f));
	g_assert_cmpuint(f->api->writes, ==, writes + 1);
	g_assert_cmpuint(count_warnings("renewing the version we last saw"), ==, 1);
	/* the CAS is the confirmation: a foreign write in between makes it a 409 */
	f->api->fail_gets = 1;
	server_put(f->api, OTHER, 30, 2, TRUE);
	advance(f, RENEW);
	g_assert_false(is_leader(f));
	g_assert_cmpstr(f->api->stored->holder, ==, OTHER);
}

static void
test_renew_unconfirmed_cap(Fixture *f, gconstpointer user_data)
{
	guint writes = 0;

	start_leading(f);
	/* reads fail and writes fail: after one duration unconfirmed, surrender without writing */
	f->api->fail_gets = 1000;
	f->api->fail_writes = 1000;
	advance_until(f, !is_leader(f), DURATION + RENEW + STEP);
	writes = f->api->writes;
	g_assert_cmpuint(count_warnings("giving up leadership"), ==, 1);
	advance(f, RENEW);
	/* back to a standby that cannot read: no writes at all */
	g_assert_cmpuint(f->api->writes, ==, writes);
}

static void
test_renew_slow_read_cap(Fixture *f, gconstpointer user_data)
{
	guint writes = 0;

	start_leading(f);
	/* a renewal fails, then the next read hangs past the duration and fails: no write */
	f->api->fail_writes = 1;
	advance(f, RENEW + STEP);
	f->api->slow_fail_get = DURATION;
	writes = f->api->writes;
	advance_until(f, !is_leader(f), DURATION + RENEW);
	g_assert_cmpuint(f->api->writes, ==, writes);
	g_assert_cmpuint(count_warnings("without writing"), ==, 1);
	g_assert_cmpuint(count_warnings("last confirmed ours"), ==, 1);
}

static void
test_renew_without_version(Fixture *f, gconstpointer user_data)
{
	guint writes = 0;

	/* the create's answer lacks a resourceVersion; the read that would refresh it fails */
	f->api->omit_rv = TRUE;
	start_leading(f);
	f->api->fail_gets = 1;
	writes = f->api->writes;
	advance(f, RENEW + STEP);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->api->writes, ==, writes);
	g_assert_cmpuint(count_warnings("no known version"), ==, 1);
}

static void
test_renew_slow_write_cap(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	/* a renewal issued in time fails only after the duration has passed */
	f->api->fail_writes = 1;
	advance(f, RENEW + STEP);
	f->api->slow_fail_write = DURATION;
	advance_until(f, !is_leader(f), DURATION + RENEW);
	g_assert_cmpuint(count_warnings("cannot renew the Lease (injected: timed out) and the last "
					"renewal was"),
			 ==, 1);
}

static void
test_renew_unconfirmed_reads(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	/* every read fails, every CAS lands: still confirmed by the writes */
	f->api->fail_gets = 1000;
	advance(f, 2 * DURATION);
	g_assert_true(is_leader(f));
	f->api->fail_gets = 0;
}

static void
test_stalled_process(Fixture *f, gconstpointer user_data)
{
	guint writes = 0;

	start_leading(f);
	writes = f->api->writes;
	/* frozen (SIGSTOP) past the duration: the first step after waking writes nothing */
	sfl_fake_clock_advance(f->clock, DURATION + RENEW);
	g_assert_false(sfl_coordinator_check_fence(f->c.coord));
	drain(f);
	g_assert_false(is_leader(f));
	g_assert_cmpuint(f->api->writes, ==, writes);
	g_assert_cmpuint(count_warnings("was this process stalled"), ==, 1);
}

static void
test_fence_lapses(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	f->api->fail_writes = 1000;
	advance(f, DURATION - STEP);
	g_assert_true(sfl_coordinator_check_fence(f->c.coord));
	advance(f, 2 * STEP);
	g_assert_false(sfl_coordinator_check_fence(f->c.coord));
}

/* a read of the abandoned chain that completes after a demote changes nothing */
static void
test_demote_during_read(Fixture *f, gconstpointer user_data)
{
	guint writes = 0;

	start_leading(f);
	f->api->slow_fail_get = 5 * SEC;
	advance(f, RENEW + STEP);
	g_assert_true(is_leader(f));
	sfl_coordinator_demote(f->c.coord);
	drain(f);
	g_assert_false(is_leader(f));
	writes = f->api->writes;
	advance(f, 6 * SEC);
	g_assert_cmpuint(count_warnings("cannot read"), ==, 0);
	g_assert_cmpuint(f->api->writes, ==, writes);
	g_assert_cmpuint(f->c.lost, ==, 1);
	advance_until(f, is_leader(f), DURATION + 2 * RENEW);
	g_assert_cmpuint(sfl_coordinator_get_epoch(f->c.coord), ==, 2);
}

static void
test_stop_releases(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	fixture_stop(f);
	g_assert_cmpstr(f->api->stored->holder, ==, "");
	/* the epoch stays for the successor to bump */
	g_assert_cmpint(f->api->stored->transitions, ==, 1);
}

static void
test_stop_release_fails(Fixture *f, gconstpointer user_data)
{
	start_leading(f);
	f->api->fail_writes = 1;
	fixture_stop(f);
	g_assert_cmpstr(f->api->stored->holder, ==, ME);
}

static void
test_stop_standby_no_write(Fixture *f, gconstpointer user_data)
{
	server_put(f->api, OTHER, 30, 1, TRUE);
	fixture_start(f);
	advance(f, RENEW);
	fixture_stop(f);
	g_assert_cmpuint(f->api->writes, ==, 0);
}

/* --- Lease JSON ---------------------------------------------------------------------------- */

static void
test_json(void)
{
	g_autoptr(SflK8sLease) lease = sfl_k8s_lease_new();
	g_autoptr(SflK8sLease) back = NULL;
	g_autoptr(SflK8sLease) odd = NULL;
	g_autoptr(json_t) object = NULL;
	g_autoptr(json_t) bad = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *t1 = sfl_k8s_micro_time((gint64)1767323045 * SEC + 123456);
	g_autofree gchar *t2 = sfl_k8s_micro_time((gint64)1767323045 * SEC + 7);

	/* exactly six fractional digits, zero-padded */
	g_assert_cmpstr(t1, ==, "2026-01-02T03:04:05.123456Z");
	g_assert_cmpstr(t2, ==, "2026-01-02T03:04:05.000007Z");
	{
		/* out of GDateTime's range: still a MicroTime the server parses */
		g_autofree gchar *t3 = sfl_k8s_micro_time(G_MAXINT64);
		g_assert_cmpstr(t3, ==, "1970-01-01T00:00:00.000000Z");
	}

	/* a create carries no resourceVersion and no unset fields */
	lease->holder = g_strdup("pod-a");
	lease->duration_s = 30;
	object = sfl_k8s_lease_to_json(lease, "ns", "sf2loki");
	text = json_dumps(object, JSON_COMPACT | JSON_SORT_KEYS);
	g_assert_cmpstr(text, ==,
			"{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			"\"metadata\":{\"name\":\"sf2loki\",\"namespace\":\"ns\"},"
			"\"spec\":{\"holderIdentity\":\"pod-a\",\"leaseDurationSeconds\":30}}");
	g_clear_pointer(&object, json_decref);

	lease->resource_version = g_strdup("42");
	lease->transitions = 3;
	lease->acquire_time = g_strdup(t1);
	lease->renew_time = g_strdup(t2);
	object = sfl_k8s_lease_to_json(lease, "ns", "sf2loki");
	back = sfl_k8s_lease_from_json(object);
	g_assert_cmpstr(back->resource_version, ==, "42");
	g_assert_cmpstr(back->holder, ==, "pod-a");
	g_assert_cmpint(back->duration_s, ==, 30);
	g_assert_cmpint(back->transitions, ==, 3);
	g_assert_cmpstr(back->acquire_time, ==, t1);
	g_assert_cmpstr(back->renew_time, ==, t2);

	/* optional and mistyped fields read as unset */
	bad = json_loads("{\"metadata\":{\"resourceVersion\":7},\"spec\":{\"holderIdentity\":null,"
			 "\"leaseDurationSeconds\":\"30\",\"leaseTransitions\":-2,"
			 "\"preferredHolder\":\"x\"}}",
			 0, NULL);
	odd = sfl_k8s_lease_from_json(bad);
	g_assert_null(odd->resource_version);
	g_assert_null(odd->holder);
	g_assert_cmpint(odd->duration_s, ==, -1);
	g_assert_cmpint(odd->transitions, ==, -1);
	g_assert_null(odd->renew_time);
}

/* --- the Kubernetes client's configuration ------------------------------------------------- */

typedef struct {
	gchar *dir;
} Dir;

static void
dir_setup(Dir *d, gconstpointer user_data)
{
	d->dir = g_dir_make_tmp("sfl-k8s-XXXXXX", NULL);
	g_assert_nonnull(d->dir);
}

static void
dir_teardown(Dir *d, gconstpointer user_data)
{
	g_autoptr(GDir) dir = g_dir_open(d->dir, 0, NULL);
	const gchar *name = NULL;

	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *path = g_build_filename(d->dir, name, NULL);
		g_remove(path);
	}
	g_rmdir(d->dir);
	g_free(d->dir);
}

static gchar *
dir_write(Dir *d, const gchar *name, const gchar *text)
{
	gchar *path = g_build_filename(d->dir, name, NULL);
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

static void
test_in_cluster(Dir *d, gconstpointer user_data)
{
	const gchar *env[] = { "KUBERNETES_SERVICE_HOST=10.0.0.1", "KUBERNETES_SERVICE_PORT=443",
			       NULL };
	const gchar *env6[] = { "KUBERNETES_SERVICE_HOST=fd00::1", "KUBERNETES_SERVICE_PORT=6443",
				NULL };
	const gchar *no_env[] = { "KUBERNETES_SERVICE_HOST=10.0.0.1", NULL };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflKubeClient) client = NULL;
	g_autofree gchar *ca = NULL;
	g_autofree gchar *token = NULL;
	g_autofree gchar *ns = NULL;

	/* the process's environment (no Kubernetes here) and the default directory */
	if (g_getenv("KUBERNETES_SERVICE_HOST") == NULL) {
		client = sfl_kube_client_new_in_cluster(NULL, NULL, &error);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_clear_error(&error);
	}
	client = sfl_kube_client_new_in_cluster(no_env, d->dir, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "KUBERNETES_SERVICE_HOST"));
	g_clear_error(&error);

	client = sfl_kube_client_new_in_cluster(env, d->dir, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "ca.crt"));
	g_clear_error(&error);

	ca = dir_write(d, "ca.crt", "not checked here");
	token = dir_write(d, "token", " \n");
	client = sfl_kube_client_new_in_cluster(env, d->dir, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_AUTH);
	g_assert_nonnull(strstr(error->message, "empty"));
	g_clear_error(&error);

	g_free(dir_write(d, "token", "secret-token-value\n"));
	ns = dir_write(d, "namespace", "team-a\n");
	client = sfl_kube_client_new_in_cluster(env, d->dir, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(sfl_kube_client_get_server(client), ==, "https://10.0.0.1:443");
	g_assert_cmpstr(sfl_kube_client_get_namespace(client), ==, "team-a");
	g_clear_object(&client);

	client = sfl_kube_client_new_in_cluster(env6, d->dir, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(sfl_kube_client_get_server(client), ==, "https://[fd00::1]:6443");
}

static const gchar *kubeconfig_head = "apiVersion: v1\n"
				      "kind: Config\n"
				      "current-context: dev\n"
				      "contexts:\n"
				      "- name: other\n"
				      "  context: {cluster: nowhere, user: nobody}\n"
				      "- name: dev\n"
				      "  context: {cluster: c1, user: u1, namespace: ops}\n"
				      "clusters:\n"
				      "- name: c1\n"
				      "  cluster:\n";

typedef struct {
	const gchar *cluster;
	const gchar *user;  /* NULL: no users list */
	const gchar *error; /* NULL: loads */
} KubeconfigCase;

static const KubeconfigCase kubeconfig_cases[] = {
	{ "    server: https://127.0.0.1:6443/\n    certificate-authority: ca.pem\n",
	  "    token: abcdefgh\n", NULL },
	{ "    server: https://127.0.0.1:6443\n    certificate-authority-data: "
	  "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n",
	  "    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
	  "    client-key-data: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCg==\n",
	  NULL },
	{ "    server: https://127.0.0.1:6443\n", "    tokenFile: token\n", NULL },
	{ "    server: https://127.0.0.1:6443\n",
	  "    client-certificate: c.pem\n    client-key: /abs/k.pem\n", NULL },
	{ "    server: http://127.0.0.1:8080\n", "    token: abcdefgh\n", "https://" },
	{ "    server: https://127.0.0.1:6443\n    insecure-skip-tls-verify: true\n",
	  "    token: abcdefgh\n", "insecure-skip-tls-verify" },
	{ "    server: https://127.0.0.1:6443\n    certificate-authority-data: '!!!'\n",
	  "    token: abcdefgh\n", "certificate-authority-data" },
	{ "    server: https://127.0.0.1:6443\n", "    exec:\n      command: aws\n",
	  "'exec' is not supported" },
	{ "    server: https://127.0.0.1:6443\n", "    client-certificate: c.pem\n",
	  "needs its client key" },
	{ "    server: https://127.0.0.1:6443\n", NULL, "no users named 'u1'" },
};

static void
test_kubeconfig(Dir *d, gconstpointer user_data)
{
	for (guint i = 0; i < G_N_ELEMENTS(kubeconfig_cases); i++) {
		const KubeconfigCase *c = &kubeconfig_cases[i];
		g_autoptr(GError) error = NULL;
		g_autoptr(SflKubeClient) client = NULL;
		g_autofree gchar *text = NULL;
		g_autofree gchar *path = NULL;

		text = g_strconcat(kubeconfig_head, c->cluster,
				   c->user != NULL ? "users:\n- name: u1\n  user:\n" : "",
				   c->user != NULL ? c->user : "", NULL);
		path = dir_write(d, "kubeconfig", text);
		client = sfl_kube_client_new_from_kubeconfig(path, &error);
		if (c->error == NULL) {
			g_assert_no_error(error);
			g_assert_cmpstr(sfl_kube_client_get_server(client), ==,
					"https://127.0.0.1:6443");
			g_assert_cmpstr(sfl_kube_client_get_namespace(client), ==, "ops");
		} else {
			g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
			if (strstr(error->message, c->error) == NULL)
				g_error("case %u: '%s' lacks '%s'", i, error->message, c->error);
			/* never the token */
			g_assert_null(strstr(error->message, "abcdefgh"));
		}
	}
}

static void
test_kubeconfig_broken(Dir *d, gconstpointer user_data)
{
	static const struct {
		const gchar *text;
		const gchar *error;
	} cases[] = {
		{ "- a list\n", "not a mapping" },
		{ "clusters: []\n", "current-context is not set" },
		{ "current-context: x\ncontexts: []\n", "no contexts named 'x'" },
		{ "current-context: x\ncontexts:\n- name: x\n  context: {user: u}\n",
		  "no clusters named ''" },
		{ "current-context: [\n", "" },
	};
	g_autoptr(GError) error = NULL;
	g_autoptr(SflKubeClient) client = NULL;
	g_autofree gchar *missing = g_build_filename(d->dir, "missing", NULL);

	client = sfl_kube_client_new_from_kubeconfig(missing, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, missing));
	g_clear_error(&error);
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *path = dir_write(d, "kubeconfig", cases[i].text);

		client = sfl_kube_client_new_from_kubeconfig(path, &error);
		g_assert_null(client);
		g_assert_nonnull(error);
		if (strstr(error->message, cases[i].error) == NULL)
			g_error("case %u: '%s' lacks '%s'", i, error->message, cases[i].error);
		g_clear_error(&error);
	}
}

static void
test_api_from_config(Dir *d, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflK8sLeaseApi) api = NULL;
	g_autofree gchar *kube =
		dir_write(d, "kubeconfig",
			  "current-context: c\n"
			  "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
			  "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
			  "users: [{name: u, user: {token: abcdefgh}}]\n");
	SflK8sLeaseConfig config = { .namespace_ = (gchar *)"ops",
				     .name = (gchar *)"lead",
				     .lease_duration = DURATION,
				     .renew_interval = RENEW,
				     .kubeconfig = kube };

	api = sfl_k8s_lease_api_new_from_config(&config, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(sfl_k8s_lease_api_describe(api), ==, "Lease ops/lead");
	g_assert_cmpstr(sfl_k8s_lease_api_get_namespace(api), ==, "ops");
	g_clear_object(&api);
	if (g_getenv("KUBERNETES_SERVICE_HOST") == NULL) {
		config.kubeconfig = NULL;
		api = sfl_k8s_lease_api_new_from_config(&config, NULL, &error);
		g_assert_null(api);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_assert_nonnull(strstr(error->message, "coordinate.k8s_lease.kubeconfig"));
	}
}

static void
test_store_note(Dir *d, gconstpointer user_data)
{
	static const struct {
		const gchar *yaml;
		gboolean note;
	} cases[] = {
		{ "coordinate: {type: k8s_lease}\n", TRUE },
		{ "coordinate: {type: file_lease}\n", FALSE },
		{ "coordinate: {type: k8s_lease}\nstate: {store: s3, s3: {bucket: b}}\n", FALSE },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *text =
			g_strconcat("salesforce: {client_id: c, username: u, private_key: k}\n"
				    "sink: {loki: {url: 'http://127.0.0.1:9/loki/api/v1/push'}}\n",
				    cases[i].yaml, NULL);
		g_autofree gchar *path = dir_write(d, "config.yaml", text);
		g_auto(GStrv) envp = g_new0(gchar *, 1);
		g_autoptr(GError) error = NULL;
		g_autoptr(SflConfig) config = sfl_config_load(path, envp, &error);
		const gchar *note = NULL;

		g_assert_no_error(error);
		note = sfl_k8s_lease_doctor_store_note(config);
		g_assert_true((note != NULL) == cases[i].note);
		if (note != NULL)
			g_assert_nonnull(strstr(note, "ReadWriteMany"));
	}
}

/* --- the engine on an object-store-shaped backend ------------------------------------------ */

/*
 * An object store as s3_lease / gcs_lease see one: the document {holder, expires_at, epoch},
 * a generation that changes on every write, create-only and if-generation-matches writes, and
 * a release of its own. It proves the engine needs nothing Lease-specific.
 */
#define FAKE_TYPE_OBJECT_BACKEND (fake_object_backend_get_type())
G_DECLARE_FINAL_TYPE(FakeObjectBackend, fake_object_backend, FAKE, OBJECT_BACKEND, GObject)

struct _FakeObjectBackend {
	GObject parent_instance;
	gboolean exists;
	gchar *holder;
	gint64 expires_at;
	gint64 epoch;
	guint64 generation;
	gint64 ttl_usec; /* the document has no duration: the backend's configuration is it */
	guint writes;
	guint creates;
	guint releases;
};

static void fake_object_backend_iface_init(SflCasLeaseBackendInterface *iface);

G_DEFINE_TYPE_WITH_CODE(FakeObjectBackend, fake_object_backend, G_TYPE_OBJECT,
			G_IMPLEMENT_INTERFACE(SFL_TYPE_CAS_LEASE_BACKEND,
					      fake_object_backend_iface_init))

static SflCasLeaseDoc *
fake_object_backend_doc(FakeObjectBackend *self)
{
	SflCasLeaseDoc *doc = sfl_cas_lease_doc_new();

	doc->version = g_strdup_printf("%" G_GUINT64_FORMAT, self->generation);
	doc->holder = g_strdup(self->holder);
	doc->epoch = self->epoch;
	doc->duration_usec = self->ttl_usec;
	return doc;
}

static const gchar *
fake_object_backend_describe(SflCasLeaseBackend *backend)
{
	return "lease mem://bucket/leader";
}

static void
fake_object_backend_read_async(SflCasLeaseBackend *backend, GCancellable *cancellable,
			       GAsyncReadyCallback callback, gpointer user_data)
{
	FakeObjectBackend *self = FAKE_OBJECT_BACKEND(backend);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);

	if (!self->exists)
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_NOT_FOUND, "no such key");
	else
		g_task_return_pointer(task, fake_object_backend_doc(self),
				      (GDestroyNotify)sfl_cas_lease_doc_free);
}

static SflCasLeaseDoc *
fake_object_backend_finish(SflCasLeaseBackend *backend, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

static gboolean
fake_object_backend_store(FakeObjectBackend *self, const SflCasLeaseDoc *doc,
			  SflCasLeasePrecondition precondition, const gchar *version,
			  GError **error)
{
	g_autofree gchar *current = g_strdup_printf("%" G_GUINT64_FORMAT, self->generation);

	self->writes++;
	if (precondition == SFL_CAS_LEASE_CREATE_ONLY && self->exists) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT, "412 the key exists");
		return FALSE;
	}
	if (precondition == SFL_CAS_LEASE_IF_VERSION && !self->exists) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_NOT_FOUND, "404 no such key");
		return FALSE;
	}
	if (precondition == SFL_CAS_LEASE_IF_VERSION && g_strcmp0(version, current) != 0) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT, "412 generation mismatch");
		return FALSE;
	}
	if (!self->exists)
		self->creates++;
	self->exists = TRUE;
	g_free(self->holder);
	self->holder = g_strdup(doc->holder);
	self->expires_at = doc->wall_usec + doc->duration_usec;
	self->epoch = doc->epoch;
	self->generation++;
	return TRUE;
}

static void
fake_object_backend_write_async(SflCasLeaseBackend *backend, const SflCasLeaseDoc *doc,
				SflCasLeasePrecondition precondition, const gchar *version,
				GCancellable *cancellable, GAsyncReadyCallback callback,
				gpointer user_data)
{
	FakeObjectBackend *self = FAKE_OBJECT_BACKEND(backend);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
	GError *error = NULL;

	if (!fake_object_backend_store(self, doc, precondition, version, &error))
		g_task_return_error(task, error);
	else
		g_task_return_pointer(task, fake_object_backend_doc(self),
				      (GDestroyNotify)sfl_cas_lease_doc_free);
}

static void
fake_object_backend_release_async(SflCasLeaseBackend *backend, const SflCasLeaseDoc *doc,
				  const gchar *version, GCancellable *cancellable,
				  GAsyncReadyCallback callback, gpointer user_data)
{
	FakeObjectBackend *self = FAKE_OBJECT_BACKEND(backend);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
	GError *error = NULL;

	self->releases++;
	if (!fake_object_backend_store(self, doc, SFL_CAS_LEASE_IF_VERSION, version, &error))
		g_task_return_error(task, error);
	else
		g_task_return_boolean(task, TRUE);
}

static gboolean
fake_object_backend_release_finish(SflCasLeaseBackend *backend, GAsyncResult *result,
				   GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

static void
fake_object_backend_iface_init(SflCasLeaseBackendInterface *iface)
{
	iface->describe = fake_object_backend_describe;
	iface->read_async = fake_object_backend_read_async;
	iface->read_finish = fake_object_backend_finish;
	iface->write_async = fake_object_backend_write_async;
	iface->write_finish = fake_object_backend_finish;
	iface->release_async = fake_object_backend_release_async;
	iface->release_finish = fake_object_backend_release_finish;
}

static void
fake_object_backend_finalize(GObject *object)
{
	g_free(FAKE_OBJECT_BACKEND(object)->holder);
	G_OBJECT_CLASS(fake_object_backend_parent_class)->finalize(object);
}

static void
fake_object_backend_class_init(FakeObjectBackendClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = fake_object_backend_finalize;
}

static void
fake_object_backend_init(FakeObjectBackend *self)
{
}

typedef SflTestCoord CasReplica;

static void
cas_replica_start(CasReplica *r, FakeObjectBackend *backend, const gchar *holder, SflClock *clock)
{
	r->coord = sfl_cas_lease_coordinator_new(SFL_CAS_LEASE_BACKEND(backend), DURATION, RENEW,
						 holder, clock);
	g_assert_nonnull(r->coord);
	sfl_test_coord_run(r);
}

static void
cas_replica_stop(CasReplica *r, Fixture *f)
{
	sfl_test_coord_stop(r);
}

/* two replicas on one object: create, renew, stand by, release on stop, prompt takeover */
static void
test_cas_object_backend(Fixture *f, gconstpointer user_data)
{
	g_autoptr(FakeObjectBackend) backend = g_object_new(FAKE_TYPE_OBJECT_BACKEND, NULL);
	CasReplica a = { 0 };
	CasReplica b = { 0 };
	guint64 generation = 0;

	backend->ttl_usec = DURATION;
	cas_replica_start(&a, backend, ME, f->clock);
	advance_until(f, sfl_coordinator_is_leader(a.coord), SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(a.coord), ==, 1);
	g_assert_cmpuint(backend->creates, ==, 1);
	g_assert_cmpstr(backend->holder, ==, ME);
	g_assert_cmpint(backend->epoch, ==, 1);
	/* expires_at is the writer's wall clock at the write plus the lease duration */
	g_assert_cmpint(backend->expires_at, >=, WALL_START + DURATION);
	g_assert_cmpint(backend->expires_at, <=, sfl_clock_wall_usec(f->clock) + DURATION);

	/* a live holder: the standby reads and waits, its clock restarting at every renewal */
	cas_replica_start(&b, backend, OTHER, f->clock);
	generation = backend->generation;
	advance(f, 3 * DURATION);
	g_assert_cmpuint(backend->generation, >, generation);
	g_assert_true(sfl_coordinator_is_leader(a.coord));
	g_assert_cmpuint(b.acquired, ==, 0);
	g_assert_cmpuint(sfl_coordinator_get_epoch(a.coord), ==, 1);
	g_assert_cmpint(backend->epoch, ==, 1);

	/* a clean stop releases through the backend's own release; the standby needs no stale wait
	 */
	cas_replica_stop(&a, f);
	g_assert_cmpuint(a.lost, ==, 1);
	g_assert_cmpuint(backend->releases, ==, 1);
	g_assert_cmpstr(backend->holder, ==, "");
	g_assert_cmpint(backend->epoch, ==, 1);
	advance_until(f, sfl_coordinator_is_leader(b.coord), RENEW + SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(b.coord), ==, 2);
	g_assert_cmpstr(backend->holder, ==, OTHER);
	g_assert_cmpint(backend->epoch, ==, 2);
	g_assert_cmpuint(backend->creates, ==, 1);

	cas_replica_stop(&b, f);
	g_assert_cmpuint(backend->releases, ==, 2);
	g_assert_cmpstr(backend->holder, ==, "");
	g_clear_object(&a.coord);
	g_clear_object(&b.coord);
}

/* --- the coordinator contract (tests/common/sfl-test-coordinator.h) ---------------------- */

static void
contract_start(gpointer fixture)
{
	fixture_start(fixture);
}

static guint
contract_writes(gpointer fixture)
{
	return ((Fixture *)fixture)->api->writes;
}

/* no holder and a renewal long ago: claimable, and the next epoch is @epoch + 1 */
static void
contract_seed_claimable(gpointer fixture, guint64 epoch)
{
	server_put(((Fixture *)fixture)->api, "", 30, (gint64)epoch, TRUE);
}

static const SflTestCoordContract contract = {
	.prefix = "/sfl/k8s-lease",
	.fixture_size = sizeof(Fixture),
	.setup = (void (*)(gpointer, gconstpointer))fixture_setup,
	.teardown = (void (*)(gpointer, gconstpointer))fixture_teardown,
	.coord_offset = G_STRUCT_OFFSET(Fixture, c),
	.time_offset = G_STRUCT_OFFSET(Fixture, time),
	.start = contract_start,
	.writes = contract_writes,
	.seed_claimable = contract_seed_claimable,
	.retake_usec = DURATION + 2 * RENEW,
};

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	warnings = sfl_test_warnings_record(FALSE);

#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_setup, func, fixture_teardown)
	ADD("/sfl/k8s-lease/acquire/create-epoch-1", test_create_epoch_one);
	ADD("/sfl/k8s-lease/acquire/takeover-transitions-3", test_takeover_bumps_transitions);
	ADD("/sfl/k8s-lease/acquire/live-holder", test_live_holder_keeps_lease);
	ADD("/sfl/k8s-lease/acquire/unset-transitions", test_unset_transitions);
	ADD("/sfl/k8s-lease/acquire/unset-transitions-floor", test_unset_transitions_floor);
	ADD("/sfl/k8s-lease/acquire/recreated-lease-floor", test_recreated_lease_floor);
	ADD("/sfl/k8s-lease/acquire/write-error-backs-off", test_acquire_write_error_backs_off);
	ADD("/sfl/k8s-lease/acquire/lost-race", test_acquire_lost_race);
	ADD("/sfl/k8s-lease/acquire/create-conflict", test_acquire_create_conflict);
	ADD("/sfl/k8s-lease/acquire/read-error-never-writes", test_acquire_read_error_never_writes);
	ADD("/sfl/k8s-lease/acquire/own-stale-identity", test_own_stale_identity_waits);
	ADD("/sfl/k8s-lease/hold/renewals-keep-epoch", test_renewals_keep_epoch);
	ADD("/sfl/k8s-lease/hold/renew-409-surrenders", test_renew_conflict_surrenders);
	ADD("/sfl/k8s-lease/hold/renew-transient-keeps", test_renew_transient_keeps);
	ADD("/sfl/k8s-lease/hold/lease-deleted", test_renew_lease_deleted);
	ADD("/sfl/k8s-lease/hold/put-404", test_renew_put_not_found);
	ADD("/sfl/k8s-lease/hold/foreign-holder", test_renew_foreign_holder);
	ADD("/sfl/k8s-lease/hold/higher-epoch", test_renew_higher_epoch_same_identity);
	ADD("/sfl/k8s-lease/hold/read-error", test_renew_read_error);
	ADD("/sfl/k8s-lease/hold/unconfirmed-cap", test_renew_unconfirmed_cap);
	ADD("/sfl/k8s-lease/hold/unconfirmed-reads", test_renew_unconfirmed_reads);
	ADD("/sfl/k8s-lease/hold/slow-read-cap", test_renew_slow_read_cap);
	ADD("/sfl/k8s-lease/hold/without-version", test_renew_without_version);
	ADD("/sfl/k8s-lease/hold/slow-write-cap", test_renew_slow_write_cap);
	ADD("/sfl/k8s-lease/hold/stalled", test_stalled_process);
	ADD("/sfl/k8s-lease/hold/fence-lapses", test_fence_lapses);
	ADD("/sfl/k8s-lease/demote-during-read", test_demote_during_read);
	ADD("/sfl/k8s-lease/stop/releases", test_stop_releases);
	ADD("/sfl/k8s-lease/stop/release-fails", test_stop_release_fails);
	ADD("/sfl/k8s-lease/stop/standby", test_stop_standby_no_write);
	ADD("/sfl/cas-lease/object-backend", test_cas_object_backend);
#undef ADD
	sfl_test_coord_contract_add(&contract);
	g_test_add_func("/sfl/k8s-lease/json", test_json);
	g_test_add("/sfl/k8s-lease/client/in-cluster", Dir, NULL, dir_setup, test_in_cluster,
		   dir_teardown);
	g_test_add("/sfl/k8s-lease/client/kubeconfig", Dir, NULL, dir_setup, test_kubeconfig,
		   dir_teardown);
	g_test_add("/sfl/k8s-lease/client/kubeconfig-broken", Dir, NULL, dir_setup,
		   test_kubeconfig_broken, dir_teardown);
	g_test_add("/sfl/k8s-lease/client/api-from-config", Dir, NULL, dir_setup,
		   test_api_from_config, dir_teardown);
	g_test_add("/sfl/k8s-lease/doctor/store-note", Dir, NULL, dir_setup, test_store_note,
		   dir_teardown);
	return g_test_run();
}
