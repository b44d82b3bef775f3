/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * SflClock: the two clocks and the timers everything time-dependent uses, so coordinator and
 * pipeline timing can be tested with a fake clock and no real sleeps.
 *
 * - monotonic: never goes backwards; judges staleness, deadlines, ttl since last confirmation;
 * - wall: UTC, for documents other hosts read (lease expires_at);
 * - timeout sources: GSources that dispatch once the clock's monotonic time reaches
 *   now + delay. The system clock uses g_timeout_source_new; the fake clock's fire only when
 *   the test advances it.
 *
 * Clocks are reference counted and used from the main thread.
 */

typedef struct _SflClock SflClock;

SflClock *sfl_clock_get_system(void);
SflClock *sfl_clock_ref(SflClock *clock);
void sfl_clock_unref(SflClock *clock);

gint64 sfl_clock_monotonic_usec(SflClock *clock);
gint64 sfl_clock_wall_usec(SflClock *clock);
GSource *sfl_clock_timeout_source_new(SflClock *clock, gint64 delay_usec) G_GNUC_WARN_UNUSED_RESULT;

/*
 * A one-shot timer kept in *slot: arming replaces the timer already there, and *slot is NULL
 * again before @func runs (which may arm the next one). Destroy it with sfl_clear_source().
 */
typedef void (*SflClockOnceFunc)(gpointer user_data);
void sfl_clock_once(SflClock *clock, GSource **slot, gint64 delay_usec, const gchar *name,
		    SflClockOnceFunc func, gpointer user_data, GMainContext *context);

/* test clocks: time moves only when told to */
SflClock *sfl_fake_clock_new(gint64 wall_start_usec);
void sfl_fake_clock_advance(SflClock *clock, gint64 usec);
void sfl_fake_clock_jump_wall(SflClock *clock, gint64 usec);
gboolean sfl_clock_is_fake(SflClock *clock);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflClock, sfl_clock_unref)

G_END_DECLS
