/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestLeadership"

#include "config.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-leadership.h"
#include "sfl-memory-store.h"
#include "sfl-noop-coordinator.h"

/*
 * The leadership lifecycle with a coordinator the test drives by hand, on a memory store.
 */

/* warnings are part of the contract here: record them instead of aborting */
static GPtrArray *warnings;

static GLogWriterOutput
test_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	if (level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR)) {
		for (gsize i = 0; i < n_fields; i++) {
			if (g_str_equal(fields[i].key, "MESSAGE"))
				g_ptr_array_add(warnings, g_strdup(fields[i].value));
		}
		/* anything but the expected fence and epoch-retry warnings still fails the test */
		if (!(level & G_LOG_LEVEL_WARNING) || warnings->len == 0 ||
		    (!g_str_has_prefix(g_ptr_array_index(warnings, warnings->len - 1),
				       "checkpoint commit fenced") &&
		     !g_str_has_prefix(g_ptr_array_index(warnings, warnings->len - 1),
				       "cannot record the new epoch")))
			g_error("unexpected warning or worse");
		return G_LOG_WRITER_HANDLED;
	}
	return g_log_writer_default(level, fields, n_fields, user_data);
}

/* --- a coordinator whose leadership the test sets ------------------------------------------- */

#define TEST_TYPE_MANUAL (test_manual_get_type())
G_DECLARE_FINAL_TYPE(TestManual, test_manual, TEST, MANUAL, SflCoordinator)

struct _TestManual {
	SflCoordinator parent_instance;
	guint64 epoch;
	guint demotes;
	guint stops;
};

G_DEFINE_TYPE(TestManual, test_manual, SFL_TYPE_COORDINATOR)

static void
test_manual_start(SflCoordinator *c)
{
}

static void
test_manual_stop(SflCoordinator *c)
{
	TEST_MANUAL(c)->stops++;
}

static guint64
test_manual_get_epoch(SflCoordinator *c)
{
	return TEST_MANUAL(c)->epoch;
}

static const gchar *
test_manual_get_holder(SflCoordinator *c)
{
	return "manual-1";
}

static void
test_manual_demote(SflCoordinator *c)
{
	TEST_MANUAL(c)->demotes++;
}

static void
test_manual_class_init(TestManualClass *klass)
{
	SflCoordinatorClass *c = SFL_COORDINATOR_CLASS(klass);
	c->start = test_manual_start;
	c->stop = test_manual_stop;
	c->get_epoch = test_manual_get_epoch;
	c->get_holder = test_manual_get_holder;
	c->demote = test_manual_demote;
}

static void
test_manual_init(TestManual *self)
{
}

/* --- fixture -------------------------------------------------------------------------------- */

typedef struct {
	SflMemoryBacking *backing;
	SflCheckpointStore *store;
	SflCheckpointStore *other; /* another replica's view of the same storage */
	TestManual *coordinator;
	SflLeadership *leadership;
	guint starts;
	guint stops;
	GPtrArray *statuses;
} Fixture;

static void
hook_start(SflLeadership *l, gpointer user_data)
{
	((Fixture *)user_data)->starts++;
}

static void
hook_stop(SflLeadership *l, gpointer user_data)
{
	((Fixture *)user_data)->stops++;
}

static void
hook_status(SflLeadership *l, const gchar *status, gpointer user_data)
{
	g_ptr_array_add(((Fixture *)user_data)->statuses, g_strdup(status));
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	fx->backing = sfl_memory_backing_new();
	fx->store = sfl_memory_store_new(fx->backing);
	fx->other = sfl_memory_store_new(fx->backing);
	fx->coordinator = g_object_new(TEST_TYPE_MANUAL, NULL);
	fx->leadership = sfl_leadership_new(fx->store, SFL_COORDINATOR(fx->coordinator), TRUE);
	fx->statuses = g_ptr_array_new_with_free_func(g_free);
	sfl_leadership_set_hooks(fx->leadership, hook_start, hook_stop, hook_status, fx);
}

static void
drain(void)
{
	while (g_main_context_iteration(NULL, FALSE))
		;
}

typedef struct {
	GAsyncResult *result;
} Wait;

static void
wait_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	((Wait *)user_data)->result = g_object_ref(result);
}

static GAsyncResult *
wait_for(Wait *w)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
	while (w->result == NULL) {
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_main_context_iteration(NULL, TRUE);
	}
	return w->result;
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;

	sfl_leadership_stop_async(fx->leadership, wait_cb, &w);
	r = wait_for(&w);
	g_assert_true(sfl_leadership_stop_finish(fx->leadership, r, NULL));
	drain();
	g_clear_object(&fx->leadership);
	g_clear_object(&fx->coordinator);
	g_clear_object(&fx->store);
	g_clear_object(&fx->other);
	drain();
	sfl_memory_backing_unref(fx->backing);
	g_ptr_array_unref(fx->statuses);
}

static gboolean
commit(SflCheckpointStore *store, const gchar *key, const gchar *value, GError **error)
{
	g_autoptr(SflStateDoc) items = sfl_state_doc_new();
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;

	sfl_state_doc_set(items, key, value);
	sfl_checkpoint_store_commit_many_async(store, items, SFL_CHECKPOINT_STORE_FORCE, NULL,
					       wait_cb, &w);
	r = wait_for(&w);
	return sfl_checkpoint_store_commit_many_finish(store, r, error);
}

static gchar *
load(SflCheckpointStore *store, const gchar *key)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	sfl_checkpoint_store_load_async(store, key, NULL, wait_cb, &w);
	r = wait_for(&w);
	return sfl_checkpoint_store_load_finish(store, r, NULL);
}

static const gchar *
last_status(Fixture *fx)
{
	g_assert_cmpuint(fx->statuses->len, >, 0);
	return g_ptr_array_index(fx->statuses, fx->statuses->len - 1);
}

/* a fenced term's run starts once its epoch is recorded (a store write on the worker thread) */
static void
wait_starts(Fixture *fx, guint n)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	while (fx->starts < n) {
		if (g_get_monotonic_time() > deadline)
			g_error("the run did not start (%u of %u starts)", fx->starts, n);
		g_main_context_iteration(NULL, TRUE);
	}
}

/* --- cases ---------------------------------------------------------------------------------- */

static void
test_acquire_and_lose(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = NULL;
	g_autofree gchar *before = NULL;
	g_autofree gchar *after = NULL;

	sfl_leadership_start(fx->leadership);
	g_assert_cmpint(sfl_leadership_get_readiness(fx->leadership), ==, SFL_READINESS_STANDBY);
	g_assert_cmpstr(last_status(fx), ==, "standby");

	fx->coordinator->epoch = 5;
	sfl_coordinator_set_leader(SFL_COORDINATOR(fx->coordinator), TRUE);
	g_assert_cmpint(sfl_leadership_get_readiness(fx->leadership), ==, SFL_READINESS_READY);
	/* the sources start after the epoch is in the store, not before */
	g_assert_cmpuint(fx->starts, ==, 0);
	wait_starts(fx, 1);
	g_assert_cmpstr(last_status(fx), ==, "leader (epoch 5)");

	/* the store is fenced by this coordinator: its commits record epoch 5 */
	g_assert_true(commit(fx->store, "k", "mine", &error));
	g_assert_no_error(error);
	doc = sfl_memory_backing_dup_document(fx->backing);
	g_assert_cmpstr(sfl_state_doc_get(doc, SFL_STATE_KEY_FENCE_EPOCH), ==, "5");
	before = load(fx->store, "k");

	sfl_coordinator_set_leader(SFL_COORDINATOR(fx->coordinator), FALSE);
	g_assert_cmpint(sfl_leadership_get_readiness(fx->leadership), ==, SFL_READINESS_STANDBY);
	g_assert_cmpuint(fx->stops, ==, 1);
	g_assert_cmpstr(last_status(fx), ==, "standby");

	/* the winner writes; this replica's next term must see it (the cache was reset) */
	g_assert_true(commit(fx->other, "k", "winner's", &error));
	after = load(fx->store, "k");
	g_assert_cmpstr(before, ==, "mine");
	g_assert_cmpstr(after, ==, "winner's");
}

static void
wait_warnings(guint n)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	while (warnings->len < n) {
		if (g_get_monotonic_time() > deadline)
			g_error("no warning after %u of %u", warnings->len, n);
		g_main_context_iteration(NULL, TRUE);
	}
}

/*
 * A store that cannot take the new epoch yet holds the sources back, and the next attempt
 * waits on the injected clock: not a moment before 250 ms of it have passed.
 */
static void
test_epoch_retry_waits_on_clock(Fixture *fx, gconstpointer data)
{
	g_autoptr(SflClock) clock = sfl_fake_clock_new((gint64)1700000000 * G_USEC_PER_SEC);
	g_autoptr(SflStateDoc) doc = NULL;

	sfl_leadership_set_clock(fx->leadership, clock);
	sfl_memory_backing_fail_writes(fx->backing, 1);
	g_ptr_array_set_size(warnings, 0);
	sfl_leadership_start(fx->leadership);
	fx->coordinator->epoch = 7;
	sfl_coordinator_set_leader(SFL_COORDINATOR(fx->coordinator), TRUE);

	wait_warnings(1);
	g_assert_true(
		g_str_has_prefix(g_ptr_array_index(warnings, 0), "cannot record the new epoch"));
	g_assert_cmpuint(sfl_memory_backing_get_write_count(fx->backing), ==, 0);

	/* the failed write's retry is armed: nothing starts while the clock stands still */
	sfl_fake_clock_advance(clock, 249 * 1000);
	drain();
	g_assert_cmpuint(fx->starts, ==, 0);
	g_assert_cmpuint(sfl_memory_backing_get_write_count(fx->backing), ==, 0);

	sfl_fake_clock_advance(clock, 1000);
	wait_starts(fx, 1);
	g_assert_cmpuint(sfl_memory_backing_get_write_count(fx->backing), ==, 1);
	doc = sfl_memory_backing_dup_document(fx->backing);
	g_assert_cmpstr(sfl_state_doc_get(doc, SFL_STATE_KEY_FENCE_EPOCH), ==, "7");
	/* one warning for the whole wait, not one per attempt */
	g_assert_cmpuint(warnings->len, ==, 1);
	g_assert_cmpstr(last_status(fx), ==, "leader (epoch 7)");
}

static void
test_fenced_commit_demotes(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) other = NULL;

	sfl_leadership_start(fx->leadership);
	fx->coordinator->epoch = 5;
	sfl_coordinator_set_leader(SFL_COORDINATOR(fx->coordinator), TRUE);
	/* the epoch is recorded before the sources start: the stop below needs them started */
	wait_starts(fx, 1);

	/* a newer leader got in while this one still thinks it leads */
	g_assert_true(commit(fx->other, SFL_STATE_KEY_FENCE_EPOCH, "9", NULL));
	g_assert_false(commit(fx->store, "k", "stale", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);

	g_ptr_array_set_size(warnings, 0);
	g_assert_true(sfl_leadership_handle_commit_error(fx->leadership, error));
	g_assert_cmpuint(warnings->len, ==, 1);
	g_assert_true(g_str_has_prefix(g_ptr_array_index(warnings, 0), "checkpoint commit fenced"));
	g_assert_nonnull(strstr(g_ptr_array_index(warnings, 0), "demoting to standby"));
	/* demoted in place: standby, not exited; the coordinator goes on contesting */
	g_assert_cmpuint(fx->coordinator->demotes, ==, 1);
	g_assert_false(sfl_coordinator_is_leader(SFL_COORDINATOR(fx->coordinator)));
	g_assert_cmpint(sfl_leadership_get_readiness(fx->leadership), ==, SFL_READINESS_STANDBY);
	g_assert_cmpuint(fx->stops, ==, 1);

	/* other errors are not leadership problems */
	other = g_error_new_literal(SFL_ERROR, SFL_ERROR_TRANSIENT, "disk hiccup");
	g_assert_false(sfl_leadership_handle_commit_error(fx->leadership, other));

	/* later the lease allows it again, with a higher epoch */
	fx->coordinator->epoch = 10;
	sfl_coordinator_set_leader(SFL_COORDINATOR(fx->coordinator), TRUE);
	g_assert_cmpint(sfl_leadership_get_readiness(fx->leadership), ==, SFL_READINESS_READY);
	g_assert_cmpuint(sfl_leadership_get_terms(fx->leadership), ==, 2);
	g_clear_error(&error);
	g_assert_true(commit(fx->store, "k", "ten", &error));
	g_assert_no_error(error);
}

static void
test_fence_check_blocks_writes(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	sfl_leadership_start(fx->leadership);
	fx->coordinator->epoch = 3;
	/* not leading: the store refuses before reading anything */
	g_assert_false(commit(fx->store, "k", "v", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_FENCED);
	g_assert_cmpuint(sfl_memory_backing_get_write_count(fx->backing), ==, 0);
}

static void
floor_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	guint64 *out = user_data;
	g_autoptr(GError) error = NULL;
	g_assert_true(
		sfl_coordinator_epoch_floor_finish(SFL_COORDINATOR(source), result, out, &error));
	g_assert_no_error(error);
}

static void
test_epoch_floor_is_store_epoch(Fixture *fx, gconstpointer data)
{
	guint64 floor = G_MAXUINT64;

	g_assert_true(commit(fx->other, SFL_STATE_KEY_FENCE_EPOCH, "7", NULL));
	sfl_coordinator_epoch_floor_async(SFL_COORDINATOR(fx->coordinator), NULL, floor_cb, &floor);
	while (floor == G_MAXUINT64)
		g_main_context_iteration(NULL, TRUE);
	g_assert_cmpuint(floor, ==, 7);
}

/*
 * Found by the HA harness (tests/ha): a leader whose first commit had not landed yet (Loki was
 * answering 429) lost its lease file; the next replica floored its epoch on the store, which
 * still showed the previous term, and won the same epoch again. The epoch must reach the store
 * when it is won, before any checkpoint.
 */
static void
test_acquisition_records_epoch(Fixture *fx, gconstpointer data)
{
	guint64 floor = G_MAXUINT64;
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	g_assert_true(commit(fx->other, SFL_STATE_KEY_FENCE_EPOCH, "3", NULL));
	sfl_leadership_start(fx->leadership);
	fx->coordinator->epoch = 4;
	sfl_coordinator_set_leader(SFL_COORDINATOR(fx->coordinator), TRUE);
	/* no checkpoint is committed by anyone: the acquisition alone records epoch 4 */
	for (;;) {
		g_autoptr(SflStateDoc) doc = sfl_memory_backing_dup_document(fx->backing);
		if (g_strcmp0(sfl_state_doc_get(doc, SFL_STATE_KEY_FENCE_EPOCH), "4") == 0)
			break;
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_main_context_iteration(NULL, TRUE);
	}
	/* so the floor another replica reads is this term's epoch, never the one before it */
	sfl_coordinator_epoch_floor_async(SFL_COORDINATOR(fx->coordinator), NULL, floor_cb, &floor);
	while (floor == G_MAXUINT64)
		g_main_context_iteration(NULL, TRUE);
	g_assert_cmpuint(floor, ==, 4);
	g_assert_cmpint(sfl_leadership_get_readiness(fx->leadership), ==, SFL_READINESS_READY);
}

/* a term whose epoch is already behind the store's is demoted at once, before its sources */
static void
test_acquisition_behind_store_demotes(Fixture *fx, gconstpointer data)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

	g_assert_true(commit(fx->other, SFL_STATE_KEY_FENCE_EPOCH, "9", NULL));
	sfl_leadership_start(fx->leadership);
	fx->coordinator->epoch = 5;
	g_ptr_array_set_size(warnings, 0);
	sfl_coordinator_set_leader(SFL_COORDINATOR(fx->coordinator), TRUE);
	while (fx->coordinator->demotes == 0) {
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_main_context_iteration(NULL, TRUE);
	}
	/* its sources never started: nothing read a store a newer leader owns */
	g_assert_cmpuint(fx->starts, ==, 0);
	g_assert_cmpuint(fx->stops, ==, 0);
	g_assert_cmpint(sfl_leadership_get_readiness(fx->leadership), ==, SFL_READINESS_STANDBY);
	g_assert_cmpuint(warnings->len, ==, 1);
}

static void
test_alternation(Fixture *fx, gconstpointer data)
{
	SflCoordinator *c = SFL_COORDINATOR(fx->coordinator);

	sfl_leadership_start(fx->leadership);
	/* repeated reports of the same state reach the lifecycle once */
	sfl_coordinator_set_leader(c, TRUE);
	sfl_coordinator_set_leader(c, TRUE);
	wait_starts(fx, 1);
	sfl_coordinator_set_leader(c, FALSE);
	sfl_coordinator_set_leader(c, FALSE);
	sfl_coordinator_set_leader(c, TRUE);
	wait_starts(fx, 2);
	g_assert_cmpuint(fx->starts, ==, 2);
	g_assert_cmpuint(fx->stops, ==, 1);
	/* a term lost before its epoch was recorded never started: it has nothing to stop */
	sfl_coordinator_set_leader(c, FALSE);
	sfl_coordinator_set_leader(c, TRUE);
	sfl_coordinator_set_leader(c, FALSE);
	g_assert_cmpuint(fx->stops, ==, 2);
	sfl_coordinator_set_leader(c, TRUE);
	wait_starts(fx, 3);
	g_assert_cmpuint(fx->stops, ==, 2);
}

static void
test_stop_while_leading(Fixture *fx, gconstpointer data)
{
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;

	sfl_leadership_start(fx->leadership);
	sfl_coordinator_set_leader(SFL_COORDINATOR(fx->coordinator), TRUE);
	wait_starts(fx, 1);
	sfl_leadership_stop_async(fx->leadership, wait_cb, &w);
	r = wait_for(&w);
	g_assert_true(sfl_leadership_stop_finish(fx->leadership, r, NULL));
	g_assert_cmpuint(fx->stops, ==, 1);
	g_assert_cmpuint(fx->coordinator->stops, ==, 1);
	g_assert_false(sfl_coordinator_is_leader(SFL_COORDINATOR(fx->coordinator)));
	/* no leadership after the stop */
	sfl_coordinator_set_leader(SFL_COORDINATOR(fx->coordinator), TRUE);
	g_assert_cmpuint(fx->starts, ==, 1);
}

static void
test_noop_leads_at_once(void)
{
	g_autoptr(SflMemoryBacking) backing = sfl_memory_backing_new();
	g_autoptr(SflCheckpointStore) store = sfl_memory_store_new(backing);
	g_autoptr(SflCoordinator) noop = sfl_noop_coordinator_new("host-1");
	g_autoptr(SflLeadership) l = sfl_leadership_new(store, noop, FALSE);
	g_autoptr(SflStateDoc) doc = NULL;
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;

	sfl_leadership_start(l);
	while (sfl_leadership_get_readiness(l) != SFL_READINESS_READY)
		g_main_context_iteration(NULL, TRUE);
	g_assert_true(commit(store, "k", "v", NULL));
	/* no coordinator epoch: nothing fenced, nothing recorded */
	doc = sfl_memory_backing_dup_document(backing);
	g_assert_null(sfl_state_doc_get(doc, SFL_STATE_KEY_FENCE_EPOCH));
	g_assert_cmpstr(sfl_coordinator_get_holder(noop), ==, "host-1");

	sfl_leadership_stop_async(l, wait_cb, &w);
	r = wait_for(&w);
	g_assert_cmpint(sfl_leadership_get_readiness(l), ==, SFL_READINESS_STANDBY);
	drain();
}

static void
floor_fail_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	gboolean *done = user_data;
	g_autoptr(GError) error = NULL;
	guint64 floor = 99;
	g_assert_false(sfl_coordinator_epoch_floor_finish(SFL_COORDINATOR(source), result, &floor,
							  &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_cmpuint(floor, ==, 0);
	*done = TRUE;
}

static void
count_destroy(gpointer data)
{
	(*(guint *)data)++;
}

static void
test_floor_edges(void)
{
	g_autoptr(TestManual) bare = g_object_new(TEST_TYPE_MANUAL, NULL);
	g_autoptr(SflMemoryBacking) backing = sfl_memory_backing_new();
	g_autoptr(SflCheckpointStore) store = sfl_memory_store_new(backing);
	g_autoptr(TestManual) c = g_object_new(TEST_TYPE_MANUAL, NULL);
	g_autoptr(SflLeadership) l = NULL;
	guint64 floor = G_MAXUINT64;
	gboolean done = FALSE;
	guint destroyed = 0;

	/* no floor installed: 0 */
	sfl_coordinator_epoch_floor_async(SFL_COORDINATOR(bare), NULL, floor_cb, &floor);
	while (floor == G_MAXUINT64)
		g_main_context_iteration(NULL, TRUE);
	g_assert_cmpuint(floor, ==, 0);

	/* a store that cannot say: the read fails and the floor is 0 */
	g_assert_true(commit(store, SFL_STATE_KEY_FENCE_EPOCH, "garbage", NULL));
	l = sfl_leadership_new(store, SFL_COORDINATOR(c), TRUE);
	sfl_coordinator_epoch_floor_async(SFL_COORDINATOR(c), NULL, floor_fail_cb, &done);
	while (!done)
		g_main_context_iteration(NULL, TRUE);

	/* replacing a floor releases the previous one */
	sfl_coordinator_set_epoch_floor(SFL_COORDINATOR(bare), NULL, NULL, &destroyed,
					count_destroy);
	sfl_coordinator_set_epoch_floor(SFL_COORDINATOR(bare), NULL, NULL, NULL, NULL);
	g_assert_cmpuint(destroyed, ==, 1);
	drain();
}

static void
test_noop_demote_and_early_stop(void)
{
	g_autoptr(SflMemoryBacking) backing = sfl_memory_backing_new();
	g_autoptr(SflCheckpointStore) store = sfl_memory_store_new(backing);
	g_autoptr(SflCoordinator) noop = sfl_noop_coordinator_new("host-1");
	g_autoptr(SflLeadership) l = sfl_leadership_new(store, noop, FALSE);
	g_autoptr(SflCoordinator) early = sfl_noop_coordinator_new("host-2");
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	Wait w = { 0 };
	g_autoptr(GAsyncResult) r = NULL;
	g_autoptr(GError) fenced = g_error_new_literal(SFL_ERROR, SFL_ERROR_FENCED, "test");

	sfl_leadership_start(l);
	while (sfl_leadership_get_readiness(l) != SFL_READINESS_READY)
		g_main_context_iteration(NULL, TRUE);
	/* a lone instance has nobody to yield to: it leads again, in a new term */
	g_ptr_array_set_size(warnings, 0);
	g_assert_true(sfl_leadership_handle_commit_error(l, fenced));
	g_assert_cmpint(sfl_leadership_get_readiness(l), ==, SFL_READINESS_STANDBY);
	while (sfl_leadership_get_readiness(l) != SFL_READINESS_READY)
		g_main_context_iteration(NULL, TRUE);
	g_assert_cmpuint(sfl_leadership_get_terms(l), ==, 2);
	sfl_leadership_stop_async(l, wait_cb, &w);
	g_object_unref(wait_for(&w));

	/* stopped before it ever led: no acquired callback, the run still completes */
	w.result = NULL;
	sfl_coordinator_run_async(early, NULL, NULL, NULL, cancellable, wait_cb, &w);
	g_cancellable_cancel(cancellable);
	r = wait_for(&w);
	g_assert_true(sfl_coordinator_run_finish(early, r, NULL));
	g_assert_false(sfl_coordinator_is_leader(early));
	drain();
}

int
main(int argc, char **argv)
{
	int rc;

	g_test_init(&argc, &argv, NULL);
	warnings = g_ptr_array_new_with_free_func(g_free);
	g_log_set_writer_func(test_writer, NULL, NULL);
#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_setup, func, fixture_teardown)
	ADD("/sfl/leadership/acquire-and-lose", test_acquire_and_lose);
	ADD("/sfl/leadership/fenced-commit-demotes", test_fenced_commit_demotes);
	ADD("/sfl/leadership/epoch-retry-waits-on-clock", test_epoch_retry_waits_on_clock);
	ADD("/sfl/leadership/fence-check-blocks-writes", test_fence_check_blocks_writes);
	ADD("/sfl/leadership/epoch-floor", test_epoch_floor_is_store_epoch);
	ADD("/sfl/leadership/acquisition-records-epoch", test_acquisition_records_epoch);
	ADD("/sfl/leadership/acquisition-behind-store-demotes",
	    test_acquisition_behind_store_demotes);
	ADD("/sfl/leadership/alternation", test_alternation);
	ADD("/sfl/leadership/stop-while-leading", test_stop_while_leading);
	g_test_add_func("/sfl/leadership/noop", test_noop_leads_at_once);
	g_test_add_func("/sfl/leadership/floor-edges", test_floor_edges);
	g_test_add_func("/sfl/leadership/noop-demote", test_noop_demote_and_early_stop);
	rc = g_test_run();
	g_ptr_array_unref(warnings);
	return rc;
}
