/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestProc"

#include "config.h"

#include "sfl-test-proc.h"

#include <signal.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

/* a child must not outlive a test that aborted: meson would wait on its pipes */
static void
sfl_test_proc_child_setup(gpointer user_data)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

void
sfl_test_proc_launcher_tie(GSubprocessLauncher *launcher)
{
	g_subprocess_launcher_set_child_setup(launcher, sfl_test_proc_child_setup, NULL, NULL);
}

void
sfl_test_proc_adopt(GSubprocess *proc)
{
	/* the child setup of sfl_test_proc_launcher_tie() did it already */
}

gboolean
sfl_test_proc_signal(GSubprocess *proc, SflTestSignal sig)
{
	static const int signums[] = {
		[SFL_TEST_SIGNAL_STOP] = SIGSTOP, [SFL_TEST_SIGNAL_CONT] = SIGCONT,
		[SFL_TEST_SIGNAL_TERM] = SIGTERM, [SFL_TEST_SIGNAL_KILL] = SIGKILL,
		[SFL_TEST_SIGNAL_HUP] = SIGHUP,
	};

	g_return_val_if_fail((guint)sig < G_N_ELEMENTS(signums), FALSE);
	g_subprocess_send_signal(proc, signums[sig]);
	return TRUE;
}

gboolean
sfl_test_proc_has_signals(void)
{
	return TRUE;
}

gboolean
sfl_test_proc_modes_enforced(void)
{
	return geteuid() != 0;
}

const gchar *const *
sfl_test_proc_needed_env(void)
{
	static const gchar *const none[] = { NULL };

	return none;
}
