/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTest"

#include "config.h"

#include <glib/gstdio.h>

#include "sfl-clock.h"
#include "sfl-membership.h"
#include "sfl-test-coordinator.h"
#include "sfl-test-files.h"

/*
 * Membership over the file store: real files in a temporary directory written by worker
 * threads, timers on a fake clock. After each fake-time step the drain waits for the rounds'
 * file operations, which finish in real time, so every round completes before time moves on.
 */

#define TTL   (3 * G_USEC_PER_SEC)
#define RENEW G_USEC_PER_SEC
#define STEP  (100 * 1000)

typedef struct {
	SflTestFakeTime time;
	gchar *dir;
	GPtrArray *members; /* SflMembership */
	guint changes;
	GPtrArray *held;     /* GTask: operations of a hung store, never answered while hung */
	SflMembership *hung; /* the member on that store */
	guint slow_pending;  /* listings of a slow store waiting out their fake-time delay */
} Fixture;

/* --- a store that hangs: the file store until told to stop answering ---------------------- */

#define TEST_TYPE_HANG_STORE (test_hang_store_get_type())
G_DECLARE_FINAL_TYPE(TestHangStore, test_hang_store, TEST, HANG_STORE, SflMemberStore)

struct _TestHangStore {
	SflMemberStore parent_instance;
	SflMemberStore *inner;
	Fixture *fx;
	gboolean hung;
	gint64 list_delay_usec; /* fake time each listing takes to answer */
};

G_DEFINE_TYPE(TestHangStore, test_hang_store, SFL_TYPE_MEMBER_STORE)

static void
test_hang_publish_async(SflMemberStore *store, const gchar *holder, guint64 seq,
			GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
	TestHangStore *self = TEST_HANG_STORE(store);

	if (self->hung) {
		/* a blocked write: the callback waits for the test's release */
		g_ptr_array_add(self->fx->held,
				g_task_new(store, cancellable, callback, user_data));
		return;
	}
	SFL_MEMBER_STORE_GET_CLASS(self->inner)
		->publish_async(self->inner, holder, seq, cancellable, callback, user_data);
}

static gboolean
test_hang_publish_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	TestHangStore *self = TEST_HANG_STORE(store);

	if (G_IS_TASK(result) && g_task_get_source_object(G_TASK(result)) == store)
		return g_task_propagate_boolean(G_TASK(result), error);
	return SFL_MEMBER_STORE_GET_CLASS(self->inner)->publish_finish(self->inner, result, error);
}

/* a listing answered list_delay_usec of fake time after the file store answered it */
typedef struct {
	TestHangStore *store;
	GAsyncReadyCallback callback;
	gpointer user_data;
	GAsyncResult *result;
	GSource *timer;
} TestSlowList;

static void
test_slow_list_answer(gpointer data)
{
	TestSlowList *call = data;

	call->store->fx->slow_pending--;
	call->callback(G_OBJECT(call->store), call->result, call->user_data);
	g_object_unref(call->result);
	g_clear_pointer(&call->timer, g_source_unref);
	g_object_unref(call->store);
	g_free(call);
}

static void
test_slow_list_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	TestSlowList *call = user_data;

	call->result = g_object_ref(result);
	call->store->fx->slow_pending++;
	sfl_clock_once(call->store->fx->time.clock, &call->timer, call->store->list_delay_usec,
		       "test slow listing", test_slow_list_answer, call, NULL);
}

static void
test_hang_list_async(SflMemberStore *store, GCancellable *cancellable, GAsyncReadyCallback callback,
		     gpointer user_data)
{
	TestHangStore *self = TEST_HANG_STORE(store);
	TestSlowList *call = NULL;

	if (self->list_delay_usec == 0) {
		SFL_MEMBER_STORE_GET_CLASS(self->inner)
			->list_async(self->inner, cancellable, callback, user_data);
		return;
	}
	call = g_new0(TestSlowList, 1);
	call->store = g_object_ref(self);
	call->callback = callback;
	call->user_data = user_data;
	SFL_MEMBER_STORE_GET_CLASS(self->inner)
		->list_async(self->inner, cancellable, test_slow_list_cb, call);
}

static GPtrArray *
test_hang_list_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	TestHangStore *self = TEST_HANG_STORE(store);

	return SFL_MEMBER_STORE_GET_CLASS(self->inner)->list_finish(self->inner, result, error);
}

static void
test_hang_remove_async(SflMemberStore *store, const gchar *holder, GCancellable *cancellable,
		       GAsyncReadyCallback callback, gpointer user_data)
{
	TestHangStore *self = TEST_HANG_STORE(store);

	SFL_MEMBER_STORE_GET_CLASS(self->inner)
		->remove_async(self->inner, holder, cancellable, callback, user_data);
}

static gboolean
test_hang_remove_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	TestHangStore *self = TEST_HANG_STORE(store);

	return SFL_MEMBER_STORE_GET_CLASS(self->inner)->remove_finish(self->inner, result, error);
}

static void
test_hang_store_finalize(GObject *object)
{
	g_clear_object(&TEST_HANG_STORE(object)->inner);
	G_OBJECT_CLASS(test_hang_store_parent_class)->finalize(object);
}

static void
test_hang_store_class_init(TestHangStoreClass *klass)
{
	SflMemberStoreClass *store_class = SFL_MEMBER_STORE_CLASS(klass);

	G_OBJECT_CLASS(klass)->finalize = test_hang_store_finalize;
	store_class->publish_async = test_hang_publish_async;
	store_class->publish_finish = test_hang_publish_finish;
	store_class->list_async = test_hang_list_async;
	store_class->list_finish = test_hang_list_finish;
	store_class->remove_async = test_hang_remove_async;
	store_class->remove_finish = test_hang_remove_finish;
}

static void
test_hang_store_init(TestHangStore *self)
{
}

static void
drain(gpointer data)
{
	Fixture *fx = data;
	g_autoptr(GTimer) waited = g_timer_new();

	for (;;) {
		gboolean busy = FALSE;

		/* a hung store's round stays busy on purpose, a slow one until fake time passes */
		for (guint i = 0; i < fx->members->len; i++)
			if (fx->members->pdata[i] != fx->hung ||
			    (fx->held->len == 0 && fx->slow_pending == 0))
				busy |= sfl_membership_is_busy(fx->members->pdata[i]);
		if (!busy)
			break;
		if (g_timer_elapsed(waited, NULL) > 30)
			g_error("a membership round's file operation did not finish in 30 s");
		g_main_context_iteration(NULL, TRUE);
	}
	while (g_main_context_iteration(NULL, FALSE))
		;
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *tmp = g_dir_make_tmp("sfl-test-membership-XXXXXX", &error);

	g_assert_no_error(error);
	fx->dir = g_build_filename(tmp, "sf2loki.lease.members", NULL);
	sfl_test_fake_time_init(&fx->time, G_GINT64_CONSTANT(1800000000) * G_USEC_PER_SEC, STEP,
				drain, fx);
	fx->members = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_membership_free);
	fx->held = g_ptr_array_new_with_free_func(g_object_unref);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *parent = g_path_get_dirname(fx->dir);
	g_autoptr(GDir) dir = NULL;
	const gchar *name = NULL;

	g_ptr_array_unref(fx->members);
	g_ptr_array_unref(fx->held);
	/* the stops' removals run in worker threads: let them land before the directory goes */
	while (g_main_context_iteration(NULL, FALSE))
		;
	sfl_test_fake_time_clear(&fx->time);
	dir = g_dir_open(fx->dir, 0, NULL);
	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *path = g_build_filename(fx->dir, name, NULL);
		g_unlink(path);
	}
	g_rmdir(fx->dir);
	g_unlink(fx->dir); /* the case that turned it into a file */
	g_rmdir(parent);
	g_free(fx->dir);
}

static void
changed_cb(SflMembership *membership, const GPtrArray *live, gpointer user_data)
{
	Fixture *fx = user_data;

	fx->changes++;
}

static SflMembership *
fixture_member(Fixture *fx, const gchar *holder)
{
	g_autoptr(SflMemberStore) store = sfl_file_member_store_new(fx->dir);
	SflMembership *m = sfl_membership_new(store, holder, fx->time.clock, TTL, RENEW, NULL);

	sfl_membership_set_changed_func(m, changed_cb, fx);
	g_ptr_array_add(fx->members, m);
	sfl_membership_start(m);
	return m;
}

static gchar *
live_text(SflMembership *m)
{
	const GPtrArray *live = sfl_membership_get_live(m);
	g_autoptr(GString) out = g_string_new(NULL);

	for (guint i = 0; i < live->len; i++)
		g_string_append_printf(out, "%s%s", i ? "," : "", (const gchar *)live->pdata[i]);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

static gboolean
sees(SflMembership *m, const gchar *want)
{
	g_autofree gchar *got = live_text(m);
	return g_str_equal(got, want);
}

/* replicas started one after another all see each other within a renew interval */
static void
test_join(Fixture *fx, gconstpointer data)
{
	SflMembership *a = fixture_member(fx, "replica-a");
	SflMembership *b = NULL;
	SflMembership *c = NULL;

	drain(fx);
	g_assert_true(sees(a, "replica-a"));
	b = fixture_member(fx, "replica-b");
	c = fixture_member(fx, "replica-c");
	SFL_TEST_ADVANCE_UNTIL(&fx->time,
			       sees(a, "replica-a,replica-b,replica-c") &&
				       sees(b, "replica-a,replica-b,replica-c") &&
				       sees(c, "replica-a,replica-b,replica-c"),
			       2 * RENEW);
	/* steady state: renewals change versions, not the live set */
	fx->changes = 0;
	sfl_test_fake_time_advance(&fx->time, 5 * TTL);
	g_assert_cmpuint(fx->changes, ==, 0);
	g_assert_true(sees(a, "replica-a,replica-b,replica-c"));
}

/* a clean stop removes the record: the others drop it within two rounds, not a ttl later */
static void
test_clean_leave(Fixture *fx, gconstpointer data)
{
	SflMembership *a = fixture_member(fx, "replica-a");
	SflMembership *b = fixture_member(fx, "replica-b");
	g_autofree gchar *b_path = g_build_filename(fx->dir, "replica-b.json", NULL);
	g_autoptr(GTimer) waited = g_timer_new();

	SFL_TEST_ADVANCE_UNTIL(&fx->time, sees(a, "replica-a,replica-b"), 2 * RENEW);
	g_assert_true(g_file_test(b_path, G_FILE_TEST_EXISTS));
	sfl_membership_stop(b);
	while (g_file_test(b_path, G_FILE_TEST_EXISTS)) {
		if (g_timer_elapsed(waited, NULL) > 30)
			g_error("the stopped replica's record was not removed");
		g_main_context_iteration(NULL, TRUE);
	}
	SFL_TEST_ADVANCE_UNTIL(&fx->time, sees(a, "replica-a"), 3 * RENEW);
}

/* a crashed replica's record stops changing: dropped after a ttl, removed after ten */
static void
test_crash_ages_out_and_is_removed(Fixture *fx, gconstpointer data)
{
	SflMembership *a = NULL;
	g_autofree gchar *ghost = NULL;
	gint64 t0 = 0;

	g_assert_cmpint(g_mkdir_with_parents(fx->dir, 0750), ==, 0);
	ghost = sfl_test_write_file(fx->dir, "ghost.json", "{\"holder\": \"ghost\", \"seq\": 41}");
	a = fixture_member(fx, "replica-a");
	drain(fx);
	/* first sight counts as fresh: a starting replica does not declare the others dead */
	g_assert_true(sees(a, "ghost,replica-a"));
	t0 = sfl_test_fake_time_elapsed(&fx->time);
	SFL_TEST_ADVANCE_UNTIL(&fx->time, sees(a, "replica-a"), TTL + 2 * RENEW);
	g_assert_cmpint(sfl_test_fake_time_elapsed(&fx->time) - t0, >=, TTL);
	SFL_TEST_ADVANCE_UNTIL(&fx->time, !g_file_test(ghost, G_FILE_TEST_EXISTS),
			       10 * TTL + 2 * RENEW);
	g_assert_true(sees(a, "replica-a"));
}

/*
 * A store that takes its time to answer does not stretch the rounds: they keep their rate
 * from when each was due, so a crashed member is dropped at the listing due members_ttl after
 * the one that first showed its record, not one slow round per listing later.
 */
static void
test_slow_store_keeps_rate(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflMemberStore) file = sfl_file_member_store_new(fx->dir);
	TestHangStore *slow = g_object_new(TEST_TYPE_HANG_STORE, NULL);
	SflMembership *a = NULL;
	g_autofree gchar *ghost = NULL;
	const gint64 delay = 3 * STEP;
	gint64 t0 = 0;

	g_assert_cmpint(g_mkdir_with_parents(fx->dir, 0750), ==, 0);
	ghost = sfl_test_write_file(fx->dir, "ghost.json", "{\"holder\": \"ghost\", \"seq\": 7}");
	slow->inner = g_object_ref(file);
	slow->fx = fx;
	slow->list_delay_usec = delay;
	a = sfl_membership_new(SFL_MEMBER_STORE(slow), "replica-a", fx->time.clock, TTL, RENEW,
			       NULL);
	g_ptr_array_add(fx->members, a);
	fx->hung = a;
	t0 = sfl_test_fake_time_elapsed(&fx->time);
	sfl_membership_start(a);
	SFL_TEST_ADVANCE_UNTIL(&fx->time, sees(a, "ghost,replica-a"), delay + STEP);
	SFL_TEST_ADVANCE_UNTIL(&fx->time, sees(a, "replica-a"), TTL + 2 * RENEW);
	/* a rate stretched by the delay drops it at 4 x (RENEW + delay) after the first answer */
	g_assert_cmpint(sfl_test_fake_time_elapsed(&fx->time) - t0, >=, TTL);
	g_assert_cmpint(sfl_test_fake_time_elapsed(&fx->time) - t0, <=, TTL + delay + STEP);
	g_object_unref(slow);
}

/* cannot read or write the directory: the others stay as last seen, this replica drops out */
static void
test_unreadable_keeps_others(Fixture *fx, gconstpointer data)
{
	SflMembership *a = fixture_member(fx, "replica-a");
	SflMembership *b = fixture_member(fx, "replica-b");
	g_autofree gchar *parent = g_path_get_dirname(fx->dir);
	g_autofree gchar *file = NULL;
	g_autoptr(GDir) dir = NULL;
	const gchar *name = NULL;

	SFL_TEST_ADVANCE_UNTIL(&fx->time,
			       sees(a, "replica-a,replica-b") && sees(b, "replica-a,replica-b"),
			       2 * RENEW);
	/* the directory becomes a plain file: every write and every listing fails from here */
	dir = g_dir_open(fx->dir, 0, NULL);
	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *path = g_build_filename(fx->dir, name, NULL);
		g_unlink(path);
	}
	g_assert_cmpint(g_rmdir(fx->dir), ==, 0);
	file = sfl_test_write_file(parent, "sf2loki.lease.members", "not a directory");
	fx->changes = 0;
	sfl_test_fake_time_advance(&fx->time, 2 * TTL);
	/* each still sees the other as last listed, and no longer counts itself */
	g_assert_true(sees(a, "replica-b"));
	g_assert_true(sees(b, "replica-a"));
	g_assert_cmpuint(fx->changes, ==, 2);
}

/*
 * The store stops answering (a hung mount): a ttl after its last write this replica is no
 * member in its own view, while the other stays as last seen; once the store answers (with a
 * failure here) and writes land again, it is a member again.
 */
static void
test_hung_store_drops_self(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflMemberStore) file = sfl_file_member_store_new(fx->dir);
	TestHangStore *hang = g_object_new(TEST_TYPE_HANG_STORE, NULL);
	SflMembership *a = NULL;
	SflMembership *b = fixture_member(fx, "replica-b");

	hang->inner = g_object_ref(file);
	hang->fx = fx;
	a = sfl_membership_new(SFL_MEMBER_STORE(hang), "replica-a", fx->time.clock, TTL, RENEW,
			       NULL);
	g_ptr_array_add(fx->members, a);
	fx->hung = a;
	sfl_membership_start(a);
	SFL_TEST_ADVANCE_UNTIL(&fx->time,
			       sees(a, "replica-a,replica-b") && sees(b, "replica-a,replica-b"),
			       2 * RENEW);
	hang->hung = TRUE;
	SFL_TEST_ADVANCE_UNTIL(&fx->time, fx->held->len == 1, 2 * RENEW);
	/* one round in flight, never answered; only the passing time judges */
	SFL_TEST_ADVANCE_UNTIL(&fx->time, sees(a, "replica-b"), TTL + 2 * RENEW);
	g_assert_true(sfl_membership_is_busy(a));
	g_assert_cmpuint(fx->held->len, ==, 1);
	g_assert_cmpuint(sfl_test_warnings_count("has not answered"), >, 0);
	/* b, whose store answers, saw a's record stop changing and let it go too */
	SFL_TEST_ADVANCE_UNTIL(&fx->time, sees(b, "replica-b"), TTL + 2 * RENEW);

	/* the blocked write finally fails; the next rounds write again */
	hang->hung = FALSE;
	{
		g_autoptr(GTask) task = g_ptr_array_steal_index(fx->held, 0);
		g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "mount timed out");
	}
	SFL_TEST_ADVANCE_UNTIL(&fx->time,
			       sees(a, "replica-a,replica-b") && sees(b, "replica-a,replica-b"),
			       3 * RENEW);
	g_assert_false(sfl_membership_is_busy(a) && fx->held->len > 0);
	g_object_unref(hang);
}

/* a holder with characters a file name cannot carry lists back as itself */
static void
test_holder_escaped(Fixture *fx, gconstpointer data)
{
	SflMembership *a = fixture_member(fx, "pod/sf2loki-0:ns x");
	g_autofree gchar *path = g_build_filename(fx->dir, "pod%2Fsf2loki-0%3Ans%20x.json", NULL);

	drain(fx);
	g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
	g_assert_true(sees(a, "pod/sf2loki-0:ns x"));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	(void)sfl_test_warnings_record(TRUE);
#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_setup, func, fixture_teardown)
	ADD("/sfl/membership/join", test_join);
	ADD("/sfl/membership/clean-leave", test_clean_leave);
	ADD("/sfl/membership/crash-ages-out-and-is-removed", test_crash_ages_out_and_is_removed);
	ADD("/sfl/membership/unreadable-keeps-others", test_unreadable_keeps_others);
	ADD("/sfl/membership/holder-escaped", test_holder_escaped);
	ADD("/sfl/membership/hung-store-drops-self", test_hung_store_drops_self);
	ADD("/sfl/membership/slow-store-keeps-rate", test_slow_store_keeps_rate);
#undef ADD
	return g_test_run();
}
