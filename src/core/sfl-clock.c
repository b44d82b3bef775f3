/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflClock"

#include "config.h"

#include "sfl-clock.h"

#include "sfl-gsource.h"
#include "sfl-platform.h"

struct _SflClock {
	gint refcount;
	gboolean fake;
	/* fake clocks only */
	gint64 monotonic_usec;
	gint64 wall_usec;
};

static SflClock sfl_system_clock = { .refcount = 1, .fake = FALSE };

/**
 * sfl_clock_get_system:
 *
 * Returns: (transfer full): the real clocks; unref when done (the object is static)
 */
SflClock *
sfl_clock_get_system(void)
{
	return &sfl_system_clock;
}

SflClock *
sfl_clock_ref(SflClock *clock)
{
	if (clock->fake)
		g_atomic_int_inc(&clock->refcount);
	return clock;
}

void
sfl_clock_unref(SflClock *clock)
{
	if (clock == NULL || !clock->fake)
		return;
	if (g_atomic_int_dec_and_test(&clock->refcount))
		g_free(clock);
}

gboolean
sfl_clock_is_fake(SflClock *clock)
{
	return clock->fake;
}

gint64
sfl_clock_monotonic_usec(SflClock *clock)
{
	if (clock->fake)
		return clock->monotonic_usec;
	return sfl_platform_monotonic_ns() / 1000;
}

gint64
sfl_clock_wall_usec(SflClock *clock)
{
	if (clock->fake)
		return clock->wall_usec;
	return sfl_platform_wall_ns() / 1000;
}

/* --- fake timeouts -------------------------------------------------------------------------- */

typedef struct {
	GSource source;
	SflClock *clock;
	gint64 deadline_usec;
} SflFakeTimeout;

static gboolean
sfl_fake_timeout_prepare(GSource *source, gint *timeout)
{
	SflFakeTimeout *t = (SflFakeTimeout *)source;
	/* never wake by real time: only sfl_fake_clock_advance() moves this clock */
	*timeout = -1;
	return t->clock->monotonic_usec >= t->deadline_usec;
}

static gboolean
sfl_fake_timeout_check(GSource *source)
{
	SflFakeTimeout *t = (SflFakeTimeout *)source;
	return t->clock->monotonic_usec >= t->deadline_usec;
}

static gboolean
sfl_fake_timeout_dispatch(GSource *source, GSourceFunc callback, gpointer user_data)
{
	/* one-shot like g_timeout_source_new with G_SOURCE_REMOVE callers */
	gboolean again = callback != NULL ? callback(user_data) : G_SOURCE_REMOVE;
	SflFakeTimeout *t = (SflFakeTimeout *)source;
	if (again)
		t->deadline_usec = G_MAXINT64;
	return again;
}

static void
sfl_fake_timeout_finalize(GSource *source)
{
	SflFakeTimeout *t = (SflFakeTimeout *)source;
	sfl_clock_unref(t->clock);
}

static GSourceFuncs sfl_fake_timeout_funcs = {
	.prepare = sfl_fake_timeout_prepare,
	.check = sfl_fake_timeout_check,
	.dispatch = sfl_fake_timeout_dispatch,
	.finalize = sfl_fake_timeout_finalize,
};

/**
 * sfl_clock_timeout_source_new:
 * @clock: a clock
 * @delay_usec: microseconds from now on @clock's monotonic time; negative is zero
 *
 * The callback should return %G_SOURCE_REMOVE: repeating fake timeouts are not supported.
 *
 * Returns: (transfer full): an unattached source
 */
GSource *
sfl_clock_timeout_source_new(SflClock *clock, gint64 delay_usec)
{
	SflFakeTimeout *t;

	if (delay_usec < 0)
		delay_usec = 0;
	if (!clock->fake) {
		/* round up: firing early would break "at least this long" */
		return g_timeout_source_new((guint)MIN((delay_usec + 999) / 1000, G_MAXUINT));
	}
	t = (SflFakeTimeout *)g_source_new(&sfl_fake_timeout_funcs, sizeof(SflFakeTimeout));
	t->clock = sfl_clock_ref(clock);
	t->deadline_usec = clock->monotonic_usec + delay_usec;
	g_source_set_name((GSource *)t, "sfl-fake-timeout");
	return (GSource *)t;
}

typedef struct {
	GSource **slot;
	SflClockOnceFunc func;
	gpointer user_data;
} SflClockOnce;

static gboolean
sfl_clock_once_cb(gpointer data)
{
	SflClockOnce *once = data;

	/* the source stays alive (and @once with it) until this returns */
	g_clear_pointer(once->slot, g_source_unref);
	once->func(once->user_data);
	return G_SOURCE_REMOVE;
}

/**
 * sfl_clock_once:
 * @clock: a clock
 * @slot: where the armed source is kept; a timer already there is destroyed first
 * @delay_usec: microseconds from now on @clock's monotonic time
 * @name: (nullable): the source's name, for debugging
 * @func: run once when the delay has passed, after *@slot was cleared
 * @user_data: for @func; must outlive the timer (destroy it with sfl_clear_source())
 * @context: (nullable): where it runs, %NULL for the global default context
 */
void
sfl_clock_once(SflClock *clock, GSource **slot, gint64 delay_usec, const gchar *name,
	       SflClockOnceFunc func, gpointer user_data, GMainContext *context)
{
	SflClockOnce *once = NULL;

	g_return_if_fail(clock != NULL && slot != NULL && func != NULL);

	sfl_clear_source(slot);
	once = g_new0(SflClockOnce, 1);
	once->slot = slot;
	once->func = func;
	once->user_data = user_data;
	*slot = sfl_clock_timeout_source_new(clock, delay_usec);
	if (name != NULL)
		g_source_set_name(*slot, name);
	g_source_set_callback(*slot, sfl_clock_once_cb, once, g_free);
	g_source_attach(*slot, context);
}

/**
 * sfl_fake_clock_new:
 * @wall_start_usec: the wall clock's first reading (Unix microseconds)
 *
 * Returns: (transfer full): a clock whose time stands still until advanced
 */
SflClock *
sfl_fake_clock_new(gint64 wall_start_usec)
{
	SflClock *clock = g_new0(SflClock, 1);
	clock->refcount = 1;
	clock->fake = TRUE;
	clock->monotonic_usec = 1000 * G_USEC_PER_SEC;
	clock->wall_usec = wall_start_usec;
	return clock;
}

/**
 * sfl_fake_clock_advance:
 * @clock: a fake clock
 * @usec: how far both clocks move
 *
 * Timeouts that became due dispatch on the next main-context iteration.
 */
void
sfl_fake_clock_advance(SflClock *clock, gint64 usec)
{
	g_return_if_fail(clock->fake && usec >= 0);
	clock->monotonic_usec += usec;
	clock->wall_usec += usec;
	g_main_context_wakeup(NULL);
}

/**
 * sfl_fake_clock_jump_wall:
 * @clock: a fake clock
 * @usec: how far the wall clock alone moves (may be negative: NTP stepping back)
 */
void
sfl_fake_clock_jump_wall(SflClock *clock, gint64 usec)
{
	g_return_if_fail(clock->fake);
	clock->wall_usec += usec;
}
