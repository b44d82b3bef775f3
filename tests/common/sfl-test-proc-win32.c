/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestProc"

#include "config.h"

#include "sfl-test-proc.h"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

/*
 * GSubprocess on Windows has no child setup and no signals; TerminateProcess (force_exit) is
 * the one thing it can do to a child. An orderly stop of sf2loki.exe would be a console
 * control event, which needs the child in its own process group: GSubprocess cannot ask for
 * that, so the tests that need it skip (sfl_test_proc_has_signals()).
 */

void
sfl_test_proc_launcher_tie(GSubprocessLauncher *launcher)
{
}

/*
 * What PR_SET_PDEATHSIG does on Linux, after the fact: the child joins a job that kills its
 * members when its last handle closes, which is when the test ends, however it ends (a daemon
 * left running would hold meson's pipes through wine). The test itself stays out of the job:
 * wine's own services, started by the first process of a prefix, must outlive it.
 */
void
sfl_test_proc_adopt(GSubprocess *proc)
{
	static HANDLE job = NULL;
	const gchar *id = g_subprocess_get_identifier(proc);
	HANDLE child;

	if (job == NULL) {
		JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = { 0 };

		job = CreateJobObjectW(NULL, NULL);
		limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
		if (job != NULL)
			SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits,
						sizeof(limits));
	}
	if (job == NULL || id == NULL)
		return;
	child = OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, FALSE,
			    (DWORD)g_ascii_strtoull(id, NULL, 10));
	if (child == NULL || !AssignProcessToJobObject(job, child))
		g_warning("sf2loki pid %s is not tied to the test (error %lu)", id,
			  (unsigned long)GetLastError());
	if (child != NULL)
		CloseHandle(child);
}

gboolean
sfl_test_proc_signal(GSubprocess *proc, SflTestSignal sig)
{
	if (sig != SFL_TEST_SIGNAL_KILL)
		return FALSE;
	g_subprocess_force_exit(proc);
	return TRUE;
}

gboolean
sfl_test_proc_has_signals(void)
{
	return FALSE;
}

gboolean
sfl_test_proc_modes_enforced(void)
{
	return FALSE;
}

const gchar *const *
sfl_test_proc_needed_env(void)
{
	static const gchar *const names[] = {
		"PATH",	   "SystemRoot",   "windir",	  "TEMP",    "TMP",	   "USERPROFILE",
		"APPDATA", "LOCALAPPDATA", "ProgramData", "COMSPEC", "WINEPREFIX", NULL,
	};

	return names;
}
