/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

/*
 * The process control the simulator and daemon helpers need, once per OS
 * (sfl-test-proc-posix.c, sfl-test-proc-win32.c, chosen by meson), so sfl-test-sim.c stays
 * portable C: signals by name, tying a child's life to the test's, and the environment a
 * child needs from the test to start at all.
 */

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
	SFL_TEST_SIGNAL_STOP, /* freeze */
	SFL_TEST_SIGNAL_CONT, /* thaw */
	SFL_TEST_SIGNAL_TERM, /* an orderly stop */
	SFL_TEST_SIGNAL_KILL, /* no clean-up at all */
	SFL_TEST_SIGNAL_HUP,  /* reload the configuration */
} SflTestSignal;

/* children of @launcher die with the test where the OS ties them at the start (Linux) */
void sfl_test_proc_launcher_tie(GSubprocessLauncher *launcher);

/* @proc, just started, dies with the test where the OS ties a child after the start
 * (Windows: a kill-on-close job object) */
void sfl_test_proc_adopt(GSubprocess *proc);

/* sends @sig; FALSE when the OS has no such thing for a GSubprocess (Windows: all but KILL) */
gboolean sfl_test_proc_signal(GSubprocess *proc, SflTestSignal sig);

/* whether sfl_test_proc_signal() can send STOP, CONT and TERM here */
gboolean sfl_test_proc_has_signals(void);

/* whether file modes keep this process out (POSIX and not root; never under wine, which has
 * no mode bits and ignores ACLs) */
gboolean sfl_test_proc_modes_enforced(void);

/* the variables of the test's environment a child cannot start without (NULL-terminated;
 * POSIX: none; Windows: PATH for the DLLs, SystemRoot for Winsock, the profile folders) */
const gchar *const *sfl_test_proc_needed_env(void);

G_END_DECLS
