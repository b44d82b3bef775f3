/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestCoordinator"

#include "config.h"

#include "sfl-test-coordinator.h"

#include <string.h>

#include "sfl-error.h"

static GPtrArray *sfl_test_warnings; /* (element-type utf8) */

static GLogWriterOutput
sfl_test_warnings_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
			 gpointer user_data)
{
	gboolean swallow = GPOINTER_TO_INT(user_data);

	if (level & G_LOG_LEVEL_WARNING) {
		for (gsize i = 0; i < n_fields; i++) {
			if (g_str_equal(fields[i].key, "MESSAGE"))
				g_ptr_array_add(sfl_test_warnings, g_strdup(fields[i].value));
		}
		if (swallow)
			return G_LOG_WRITER_HANDLED;
	}
	return g_log_writer_default(level, fields, n_fields, NULL);
}

/**
 * sfl_test_warnings_record:
 * @swallow: whether recorded warnings stop at this writer
 *
 * Warnings are part of the coordinators' contract: tests count them instead of aborting on
 * them. Call once, after g_test_init().
 *
 * Returns: (transfer none): the recorded messages; tests empty it between cases
 */
GPtrArray *
sfl_test_warnings_record(gboolean swallow)
{
	g_assert_null(sfl_test_warnings);
	sfl_test_warnings = g_ptr_array_new_with_free_func(g_free);
	g_log_set_writer_func(sfl_test_warnings_writer, GINT_TO_POINTER(swallow), NULL);
	return sfl_test_warnings;
}

guint
sfl_test_warnings_count(const gchar *needle)
{
	guint n = 0;

	for (guint i = 0; i < sfl_test_warnings->len; i++) {
		if (strstr(g_ptr_array_index(sfl_test_warnings, i), needle) != NULL)
			n++;
	}
	return n;
}

void
sfl_test_drain(gpointer unused)
{
	while (g_main_context_iteration(NULL, FALSE))
		;
}

gboolean
sfl_test_set_flag_cb(gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
	return G_SOURCE_REMOVE;
}

void
sfl_test_clock_advance(SflClock *clock, gint64 usec, gint64 step, SflTestDrainFunc drain,
		       gpointer drain_data)
{
	if (drain == NULL)
		drain = sfl_test_drain;
	while (usec > 0) {
		gint64 now = MIN(step, usec);

		sfl_fake_clock_advance(clock, now);
		usec -= now;
		drain(drain_data);
	}
}

void
sfl_test_fake_time_init(SflTestFakeTime *t, gint64 wall_start, gint64 step, SflTestDrainFunc drain,
			gpointer drain_data)
{
	t->clock = sfl_fake_clock_new(wall_start);
	t->t0 = sfl_clock_monotonic_usec(t->clock);
	t->step = step;
	t->drain = drain;
	t->drain_data = drain_data;
}

void
sfl_test_fake_time_clear(SflTestFakeTime *t)
{
	g_clear_pointer(&t->clock, sfl_clock_unref);
}

void
sfl_test_fake_time_advance(SflTestFakeTime *t, gint64 usec)
{
	sfl_test_clock_advance(t->clock, usec, t->step, t->drain, t->drain_data);
}

gint64
sfl_test_fake_time_elapsed(const SflTestFakeTime *t)
{
	return sfl_clock_monotonic_usec(t->clock) - t->t0;
}

void
sfl_test_coord_init(SflTestCoord *c, SflTestDrainFunc drain, gpointer drain_data)
{
	c->drain = drain != NULL ? drain : sfl_test_drain;
	c->drain_data = drain_data;
}

static void
sfl_test_coord_acquired_cb(SflCoordinator *coord, gpointer user_data)
{
	SflTestCoord *c = user_data;

	/* strict alternation, and the fence token only grows from one leadership to the next */
	g_assert_false(c->leading);
	g_assert_true(sfl_coordinator_is_leader(coord));
	g_assert_cmpuint(sfl_coordinator_get_epoch(coord), >, c->last_acquired_epoch);
	c->last_acquired_epoch = sfl_coordinator_get_epoch(coord);
	c->leading = TRUE;
	c->acquired++;
	if (c->stop_on_acquire)
		g_cancellable_cancel(c->run);
}

static void
sfl_test_coord_lost_cb(SflCoordinator *coord, gpointer user_data)
{
	SflTestCoord *c = user_data;

	g_assert_true(c->leading);
	c->leading = FALSE;
	c->lost++;
}

static void
sfl_test_coord_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflTestCoord *c = user_data;
	g_autoptr(GError) error = NULL;

	g_assert_true(sfl_coordinator_run_finish(SFL_COORDINATOR(source), result, &error));
	g_assert_no_error(error);
	c->running = FALSE;
}

static void
sfl_test_coord_floor_func(gpointer user_data, GCancellable *cancellable,
			  GAsyncReadyCallback callback, gpointer callback_data)
{
	SflTestCoord *c = user_data;
	g_autoptr(GTask) task = g_task_new(NULL, cancellable, callback, callback_data);

	c->floor_calls++;
	if (c->floor_hangs) {
		c->floor_hung = g_steal_pointer(&task);
		return;
	}
	if (c->floor_fails)
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"injected floor error");
	else
		g_task_return_boolean(task, TRUE);
}

static gboolean
sfl_test_coord_floor_finish(gpointer user_data, GAsyncResult *result, guint64 *floor,
			    gboolean *present, GError **error)
{
	SflTestCoord *c = user_data;

	if (!g_task_propagate_boolean(G_TASK(result), error))
		return FALSE;
	*floor = c->floor;
	*present = c->floor_present || c->floor > 0;
	return TRUE;
}

void
sfl_test_coord_use_floor(SflTestCoord *c, SflCoordinator *coord)
{
	sfl_coordinator_set_epoch_floor(coord, sfl_test_coord_floor_func,
					sfl_test_coord_floor_finish, c, NULL);
}

void
sfl_test_coord_run(SflTestCoord *c)
{
	g_assert_nonnull(c->coord);
	g_assert_null(c->run);
	if (c->drain == NULL)
		sfl_test_coord_init(c, NULL, NULL);
	c->run = g_cancellable_new();
	c->running = TRUE;
	sfl_coordinator_run_async(c->coord, sfl_test_coord_acquired_cb, sfl_test_coord_lost_cb, c,
				  c->run, sfl_test_coord_done_cb, c);
}

void
sfl_test_coord_start(SflTestCoord *c, SflCoordinator *coord)
{
	g_assert_nonnull(coord);
	g_assert_null(c->coord);
	c->coord = coord;
	sfl_test_coord_run(c);
	c->drain(c->drain_data);
}

void
sfl_test_coord_stop(SflTestCoord *c)
{
	g_cancellable_cancel(c->run);
	c->drain(c->drain_data);
	g_assert_false(c->running);
	g_assert_false(c->leading);
	g_clear_object(&c->run);
}

void
sfl_test_coord_clear(SflTestCoord *c)
{
	SflCoordinator *weak = c->coord;

	if (c->coord == NULL)
		return;
	if (c->running)
		sfl_test_coord_stop(c);
	g_clear_object(&c->run);
	c->drain(c->drain_data);
	g_object_add_weak_pointer(G_OBJECT(weak), (gpointer *)&weak);
	g_clear_object(&c->coord);
	g_assert_null(weak);
}

void
sfl_test_coord_drain(SflTestCoord *c)
{
	if (c->drain == NULL)
		sfl_test_coord_init(c, NULL, NULL);
	c->drain(c->drain_data);
}

/* --- the coordinator contract ----------------------------------------------------------- */

static gboolean
sfl_test_contract_leads(SflTestCoord *c)
{
	return c->coord != NULL && sfl_coordinator_is_leader(c->coord);
}

/* a stop while the epoch floor is being read: the late answer claims nothing */
static void
sfl_test_contract_stop_during_floor(gpointer fixture, gconstpointer data)
{
	const SflTestCoordContract *k = data;
	SflTestCoord *c = G_STRUCT_MEMBER_P(fixture, k->coord_offset);

	c->floor_hangs = TRUE;
	k->start(fixture);
	g_assert_nonnull(c->floor_hung);
	sfl_test_coord_stop(c);
	/* the store answers after the stop: ignored, nothing written */
	g_task_return_boolean(c->floor_hung, TRUE);
	g_clear_object(&c->floor_hung);
	sfl_test_coord_drain(c);
	g_assert_cmpuint(k->writes(fixture), ==, 0);
	g_assert_cmpuint(c->acquired, ==, 0);
}

/* a floor that cannot be read is warned about, and the lease's own epoch still grows */
static void
sfl_test_contract_failing_floor(gpointer fixture, gconstpointer data)
{
	const SflTestCoordContract *k = data;
	SflTestCoord *c = G_STRUCT_MEMBER_P(fixture, k->coord_offset);
	SflTestFakeTime *t = G_STRUCT_MEMBER_P(fixture, k->time_offset);

	k->seed_claimable(fixture, 4);
	c->floor_fails = TRUE;
	k->start(fixture);
	SFL_TEST_ADVANCE_UNTIL(t, sfl_test_contract_leads(c), G_USEC_PER_SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(c->coord), ==, 5);
	g_assert_cmpuint(sfl_test_warnings_count("cannot read the epoch floor"), ==, 1);
}

/* demote gives leadership up at once; the replica contests again and wins a higher epoch */
static void
sfl_test_contract_demote(gpointer fixture, gconstpointer data)
{
	const SflTestCoordContract *k = data;
	SflTestCoord *c = G_STRUCT_MEMBER_P(fixture, k->coord_offset);
	SflTestFakeTime *t = G_STRUCT_MEMBER_P(fixture, k->time_offset);

	k->start(fixture);
	SFL_TEST_ADVANCE_UNTIL(t, sfl_test_contract_leads(c), G_USEC_PER_SEC);
	g_assert_cmpuint(sfl_coordinator_get_epoch(c->coord), ==, 1);
	sfl_coordinator_demote(c->coord);
	sfl_test_coord_drain(c);
	g_assert_false(sfl_test_contract_leads(c));
	g_assert_cmpuint(c->lost, ==, 1);
	/* our own lease is still fresh: it goes stale like anyone's, then we take over */
	SFL_TEST_ADVANCE_UNTIL(t, sfl_test_contract_leads(c), k->retake_usec);
	g_assert_cmpuint(sfl_coordinator_get_epoch(c->coord), ==, 2);
}

void
sfl_test_coord_contract_add(const SflTestCoordContract *contract)
{
	static const struct {
		const gchar *name;
		void (*func)(gpointer fixture, gconstpointer data);
	} cases[] = {
		{ "stop-during-floor", sfl_test_contract_stop_during_floor },
		{ "failing-floor", sfl_test_contract_failing_floor },
		{ "demote", sfl_test_contract_demote },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *path =
			g_strdup_printf("%s/contract/%s", contract->prefix, cases[i].name);

		g_test_add_vtable(path, contract->fixture_size, contract, contract->setup,
				  cases[i].func, contract->teardown);
	}
}
