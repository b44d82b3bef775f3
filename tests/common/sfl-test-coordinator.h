/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-clock.h"
#include "sfl-coordinator.h"

G_BEGIN_DECLS

/*
 * Shared by the coordinator unit tests: recorded warnings, fake-clock driving and one
 * coordinator run whose callbacks check strict acquired/lost alternation and a growing epoch.
 */

/* installs a log writer that keeps every warning's message; @swallow: the warnings stop there
 * (otherwise they go on to the default writer too); returns the array the messages go to */
GPtrArray *sfl_test_warnings_record(gboolean swallow);

/* how many recorded warnings contain @needle */
guint sfl_test_warnings_count(const gchar *needle);

/* runs what is due on the thread-default context without blocking */
typedef void (*SflTestDrainFunc)(gpointer data);
void sfl_test_drain(gpointer unused);

/* moves @clock @usec forward in steps of at most @step, running @drain (NULL: sfl_test_drain)
 * after each, so timers fire in order, each at its own time */
void sfl_test_clock_advance(SflClock *clock, gint64 usec, gint64 step, SflTestDrainFunc drain,
			    gpointer drain_data);

/* a fake clock started at @wall_start, moved in steps of at most @step with @drain (NULL:
 * sfl_test_drain) after each, and the monotonic time it started at */
typedef struct {
	SflClock *clock;
	gint64 t0;
	gint64 step;
	SflTestDrainFunc drain;
	gpointer drain_data;
} SflTestFakeTime;

void sfl_test_fake_time_init(SflTestFakeTime *t, gint64 wall_start, gint64 step,
			     SflTestDrainFunc drain, gpointer drain_data);
void sfl_test_fake_time_clear(SflTestFakeTime *t);

/* moves the clock @usec forward (see sfl_test_clock_advance()) */
void sfl_test_fake_time_advance(SflTestFakeTime *t, gint64 usec);

/* fake time since sfl_test_fake_time_init() */
gint64 sfl_test_fake_time_elapsed(const SflTestFakeTime *t);

/* advances @t a step at a time until @cond holds; fails the test after @max_usec */
#define SFL_TEST_ADVANCE_UNTIL(t, cond, max_usec)                                                  \
	G_STMT_START                                                                               \
	{                                                                                          \
		gint64 waited_ = 0;                                                                \
		while (!(cond)) {                                                                  \
			if (waited_ >= (max_usec))                                                 \
				g_error("'%s' did not hold within %.3f s", #cond,                  \
					(gdouble)(max_usec) / G_USEC_PER_SEC);                     \
			sfl_test_fake_time_advance((t), (t)->step);                                \
			waited_ += (t)->step;                                                      \
		}                                                                                  \
	}                                                                                          \
	G_STMT_END

/* a GSourceFunc that sets the gboolean at @user_data and removes itself */
gboolean sfl_test_set_flag_cb(gpointer user_data);

/*
 * Iterates the thread-default context (blocking) until @cond holds, e.g. a store's worker
 * thread answering; 10 s of real time without it fails the test instead of hanging. Then runs
 * what is due.
 */
#define SFL_TEST_ITERATE_UNTIL(cond)                                                               \
	G_STMT_START                                                                               \
	{                                                                                          \
		gboolean expired_ = FALSE;                                                         \
		GSource *deadline_ = g_timeout_source_new_seconds(10);                             \
		g_source_set_callback(deadline_, sfl_test_set_flag_cb, &expired_, NULL);           \
		g_source_attach(deadline_, NULL);                                                  \
		while (!(cond) && !expired_)                                                       \
			g_main_context_iteration(NULL, TRUE);                                      \
		g_source_destroy(deadline_);                                                       \
		g_source_unref(deadline_);                                                         \
		if (!(cond))                                                                       \
			g_error("timed out waiting for %s", #cond);                                \
		sfl_test_drain(NULL);                                                              \
	}                                                                                          \
	G_STMT_END

/* one coordinator run as its callbacks report it, and a scripted epoch floor */
typedef struct {
	SflCoordinator *coord;
	GCancellable *run;
	gboolean running;
	gboolean leading;
	guint acquired;
	guint lost;
	guint64 last_acquired_epoch;
	gboolean stop_on_acquire; /* cancel the run from the acquired callback */
	/* the epoch floor, after sfl_test_coord_use_floor() */
	guint64 floor;
	gboolean floor_present; /* also present when @floor is not 0 */
	gboolean floor_fails;
	gboolean floor_hangs; /* the read never completes: it is kept in @floor_hung */
	GTask *floor_hung;
	guint floor_calls;
	/*< private >*/
	SflTestDrainFunc drain;
	gpointer drain_data;
} SflTestCoord;

/* @drain (NULL: sfl_test_drain) is what sfl_test_coord_stop() and _clear() run the loop with */
void sfl_test_coord_init(SflTestCoord *c, SflTestDrainFunc drain, gpointer drain_data);

/* the scripted floor of @c as @coord's epoch floor */
void sfl_test_coord_use_floor(SflTestCoord *c, SflCoordinator *coord);

/* starts a run of the coordinator @c holds (a new one, or again after a stop); no draining */
void sfl_test_coord_run(SflTestCoord *c);

/* takes @coord, starts its run and drains */
void sfl_test_coord_start(SflTestCoord *c, SflCoordinator *coord);

/* cancels the run, drains and checks it ended without leadership */
void sfl_test_coord_stop(SflTestCoord *c);

/* stops a running run, drains and drops the coordinator, checking nothing keeps it alive */
void sfl_test_coord_clear(SflTestCoord *c);

/* runs what is due with the drain @c was set up with */
void sfl_test_coord_drain(SflTestCoord *c);

/*
 * The coordinator contract: cases every lease coordinator must pass the same way, written
 * once here and added under <prefix>/contract/ by each kind's suite through these hooks.
 * @setup and @teardown are the suite's own fixture functions (they get the contract as their
 * data); the replica under test is the SflTestCoord at @coord_offset in the fixture, on
 * the fake time at @time_offset.
 */
typedef struct {
	const gchar *prefix; /* "/sfl/k8s-lease" */
	gsize fixture_size;
	void (*setup)(gpointer fixture, gconstpointer data);
	void (*teardown)(gpointer fixture, gconstpointer data);
	gsize coord_offset; /* G_STRUCT_OFFSET() of the replica's SflTestCoord in the fixture */
	gsize time_offset;  /* and of its SflTestFakeTime */
	/* builds the coordinator with the SflTestCoord's epoch floor (sfl_test_coord_use_floor())
	 * and starts its run */
	void (*start)(gpointer fixture);
	/* the lease writes the backend has seen */
	guint (*writes)(gpointer fixture);
	/* puts another holder's lease with @epoch in place, already claimable */
	void (*seed_claimable)(gpointer fixture, guint64 epoch);
	/* within how long a demoted leader leads again: its own lease must go stale first */
	gint64 retake_usec;
} SflTestCoordContract;

/* adds every contract case for @contract (which must outlive the test run) */
void sfl_test_coord_contract_add(const SflTestCoordContract *contract);

G_END_DECLS
