/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The Windows service-manager half of the platform layer: the SCM dispatcher with a console
 * fallback, the control handler, sfl_platform_notify() mapped onto SetServiceStatus, the
 * options the service sets on itself (preshutdown timeout, recovery actions) and the Event Log.
 * Which status follows which event is decided by sfl-scm.c; this file only moves events in
 * and statuses out, under one lock, because the SCM calls the control handler on the
 * dispatcher thread while the daemon notifies from its service thread.
 *
 * The stop and reload callbacks are called with the lock held, so once
 * sfl_platform_set_stop_handler(NULL) (or …_reload_…) returns no callback is running or will
 * run: the daemon may free what it passed as user data.
 *
 * The Event Log has a lock of its own: any thread logs, and a slow ReportEventW must not hold
 * up the control handler. docs/deployment/windows.md says what the installer registers.
 */

#include "sfl-platform.h"

#include <windows.h>

#include <tlhelp32.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sfl-scm.h"
#include "win32/sfl-service-win32-private.h"

_Static_assert(SFL_SCM_STATE_STOPPED == SERVICE_STOPPED, "SCM state values");
_Static_assert(SFL_SCM_STATE_START_PENDING == SERVICE_START_PENDING, "SCM state values");
_Static_assert(SFL_SCM_STATE_STOP_PENDING == SERVICE_STOP_PENDING, "SCM state values");
_Static_assert(SFL_SCM_STATE_RUNNING == SERVICE_RUNNING, "SCM state values");
_Static_assert(SFL_SCM_ACCEPT_STOP == SERVICE_ACCEPT_STOP, "SCM accept values");
_Static_assert(SFL_SCM_ACCEPT_SHUTDOWN == SERVICE_ACCEPT_SHUTDOWN, "SCM accept values");
_Static_assert(SFL_SCM_ACCEPT_PARAMCHANGE == SERVICE_ACCEPT_PARAMCHANGE, "SCM accept values");
_Static_assert(SFL_SCM_ACCEPT_PRESHUTDOWN == SERVICE_ACCEPT_PRESHUTDOWN, "SCM accept values");
_Static_assert(SFL_SCM_CONTROL_STOP == SERVICE_CONTROL_STOP, "SCM control values");
_Static_assert(SFL_SCM_CONTROL_INTERROGATE == SERVICE_CONTROL_INTERROGATE, "SCM control values");
_Static_assert(SFL_SCM_CONTROL_SHUTDOWN == SERVICE_CONTROL_SHUTDOWN, "SCM control values");
_Static_assert(SFL_SCM_CONTROL_PARAMCHANGE == SERVICE_CONTROL_PARAMCHANGE, "SCM control values");
_Static_assert(SFL_SCM_CONTROL_PRESHUTDOWN == SERVICE_CONTROL_PRESHUTDOWN, "SCM control values");
_Static_assert(SFL_SCM_NO_ERROR == NO_ERROR, "SCM exit code values");
_Static_assert(SFL_SCM_ERROR_SERVICE_SPECIFIC == ERROR_SERVICE_SPECIFIC_ERROR,
	       "SCM exit code values");

/*
 * a console close, logoff or shutdown ends the process when the handler returns; Windows
 * allows about five seconds, so the orderly stop gets a little less than that
 */
#define SFL_SERVICE_CONSOLE_CLOSE_WAIT_MS 4500

/* service names are at most 256 characters */
#define SFL_SERVICE_NAME_MAX 257

/* the source the installer registers under EventLog\Application */
#define SFL_SERVICE_EVENT_SOURCE L"sf2loki"
/* SFL_MSG_LINE in win32/sfl-messages.mc, whose text is the line itself (%1) */
#define SFL_SERVICE_EVENT_ID 1
/* ReportEventW refuses strings longer than 31,839 characters; leave room */
#define SFL_SERVICE_EVENT_MAX_CHARS 31000

/* the recovery actions: restart after 5 s, 10 s, then every 60 s; a day without failing resets */
#define SFL_SERVICE_RESTART_1_MS    5000
#define SFL_SERVICE_RESTART_2_MS    10000
#define SFL_SERVICE_RESTART_3_MS    60000
#define SFL_SERVICE_FAILURE_RESET_S 86400

static SRWLOCK sfl_service_lock = SRWLOCK_INIT;

/* all guarded by sfl_service_lock */
static SflScm sfl_service_scm;
static SERVICE_STATUS_HANDLE sfl_service_handle; /* NULL unless running under the SCM */
static SflPlatformStopFunc sfl_service_stop_func;
static void *sfl_service_stop_data;
static SflPlatformReloadFunc sfl_service_reload_func;
static void *sfl_service_reload_data;
static SflServiceSetStatusFunc sfl_service_set_status;	     /* NULL means SetServiceStatus */
static SflServiceChangeConfigFunc sfl_service_change_config; /* NULL means the real SCM */
static DWORD sfl_service_tick_ms = SFL_SCM_TICK_MS;

static SRWLOCK sfl_service_event_lock = SRWLOCK_INIT;

/* guarded by sfl_service_event_lock */
static HANDLE sfl_service_event_source;			   /* NULL unless running under the SCM */
static SflServiceReportEventFunc sfl_service_report_event; /* NULL means ReportEventW */

/* what the dispatcher's service thread runs; written before the dispatcher starts */
static wchar_t sfl_service_name[SFL_SERVICE_NAME_MAX];
static SflPlatformMainFunc sfl_service_main_func;
static int sfl_service_argc;
static char **sfl_service_argv;
static void *sfl_service_user_data;
static int sfl_service_exit_code;

/* set when the console-mode main function has returned */
static HANDLE sfl_service_console_done;

void
sfl_service_win32_set_status_func(SflServiceSetStatusFunc func)
{
	AcquireSRWLockExclusive(&sfl_service_lock);
	sfl_service_set_status = func;
	ReleaseSRWLockExclusive(&sfl_service_lock);
}

void
sfl_service_win32_set_change_config_func(SflServiceChangeConfigFunc func)
{
	AcquireSRWLockExclusive(&sfl_service_lock);
	sfl_service_change_config = func;
	ReleaseSRWLockExclusive(&sfl_service_lock);
}

void
sfl_service_win32_set_report_event_func(SflServiceReportEventFunc func)
{
	AcquireSRWLockExclusive(&sfl_service_event_lock);
	sfl_service_report_event = func;
	ReleaseSRWLockExclusive(&sfl_service_event_lock);
}

void
sfl_service_win32_set_tick_ms(DWORD tick_ms)
{
	AcquireSRWLockExclusive(&sfl_service_lock);
	sfl_service_tick_ms = tick_ms;
	ReleaseSRWLockExclusive(&sfl_service_lock);
}

/* with the lock held; returns FALSE with the OS error left in GetLastError() */
static BOOL
sfl_service_report_locked(const SflScmStatus *st)
{
	SERVICE_STATUS status;

	if (sfl_service_handle == NULL)
		return TRUE;
	memset(&status, 0, sizeof(status));
	status.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
	status.dwCurrentState = st->state;
	status.dwControlsAccepted = st->controls_accepted;
	status.dwWin32ExitCode = st->win32_exit_code;
	status.dwServiceSpecificExitCode = st->service_exit_code;
	status.dwCheckPoint = st->checkpoint;
	status.dwWaitHint = st->wait_hint_ms;
	if (sfl_service_set_status != NULL)
		return sfl_service_set_status(sfl_service_handle, &status);
	return SetServiceStatus(sfl_service_handle, &status);
}

/* with the lock held: the callback may only post a message, so holding it here is cheap */
static BOOL
sfl_service_request_stop_locked(void)
{
	if (sfl_service_stop_func == NULL)
		return FALSE;
	sfl_service_stop_func(sfl_service_stop_data);
	return TRUE;
}

DWORD WINAPI
sfl_service_win32_control_handler(DWORD control, DWORD event_type, LPVOID event_data,
				  LPVOID context)
{
	SflScmAction action;
	SflScmControlResult result;

	(void)event_type;
	(void)event_data;
	(void)context;
	AcquireSRWLockExclusive(&sfl_service_lock);
	result = sfl_scm_control(&sfl_service_scm, control, &action);
	if (action.report)
		(void)sfl_service_report_locked(&action.status);
	if (action.request_stop)
		(void)sfl_service_request_stop_locked();
	/* like a stop: the callback only posts a message */
	if (action.request_reload && sfl_service_reload_func != NULL)
		sfl_service_reload_func(sfl_service_reload_data);
	ReleaseSRWLockExclusive(&sfl_service_lock);
	return result == SFL_SCM_CONTROL_HANDLED ? NO_ERROR : ERROR_CALL_NOT_IMPLEMENTED;
}

BOOL WINAPI
sfl_service_win32_console_handler(DWORD ctrl_type)
{
	BOOL delivered;

	switch (ctrl_type) {
	case CTRL_C_EVENT:
	case CTRL_BREAK_EVENT:
	case CTRL_CLOSE_EVENT:
	case CTRL_LOGOFF_EVENT:
	case CTRL_SHUTDOWN_EVENT:
		break;
	default:
		return FALSE;
	}
	AcquireSRWLockExclusive(&sfl_service_lock);
	delivered = sfl_service_request_stop_locked();
	ReleaseSRWLockExclusive(&sfl_service_lock);
	/* nobody listening yet (start-up) or any more: the default handler ends the process */
	if (!delivered)
		return FALSE;
	if (ctrl_type != CTRL_C_EVENT && ctrl_type != CTRL_BREAK_EVENT &&
	    sfl_service_console_done != NULL)
		(void)WaitForSingleObject(sfl_service_console_done,
					  SFL_SERVICE_CONSOLE_CLOSE_WAIT_MS);
	return TRUE;
}

/* raises the checkpoint while a pending state lasts; ends when @param (an event) is set */
static DWORD WINAPI
sfl_service_ticker(LPVOID param)
{
	HANDLE quit = param;
	DWORD tick_ms;

	for (;;) {
		SflScmStatus st;

		AcquireSRWLockShared(&sfl_service_lock);
		tick_ms = sfl_service_tick_ms;
		ReleaseSRWLockShared(&sfl_service_lock);
		if (WaitForSingleObject(quit, tick_ms) != WAIT_TIMEOUT)
			return 0;
		AcquireSRWLockExclusive(&sfl_service_lock);
		if (sfl_scm_progress(&sfl_service_scm, &st))
			(void)sfl_service_report_locked(&st);
		ReleaseSRWLockExclusive(&sfl_service_lock);
	}
}

/* opened once per service run; the installer registered the source, we never touch the registry */
static void
sfl_service_event_log_open(void)
{
	HANDLE source = RegisterEventSourceW(NULL, SFL_SERVICE_EVENT_SOURCE);

	AcquireSRWLockExclusive(&sfl_service_event_lock);
	sfl_service_event_source = source;
	ReleaseSRWLockExclusive(&sfl_service_event_lock);
}

/* waits for writes in flight, so the handle is never used once closed */
static void
sfl_service_event_log_close(void)
{
	HANDLE source;

	AcquireSRWLockExclusive(&sfl_service_event_lock);
	source = sfl_service_event_source;
	sfl_service_event_source = NULL;
	ReleaseSRWLockExclusive(&sfl_service_event_lock);
	if (source != NULL)
		(void)DeregisterEventSource(source);
}

int
sfl_service_win32_serve(SERVICE_STATUS_HANDLE handle, SflPlatformMainFunc main_func, int argc,
			char **argv, void *user_data)
{
	SflScmStatus st;
	HANDLE quit;
	HANDLE ticker = NULL;
	int exit_code;

	sfl_service_event_log_open();
	AcquireSRWLockExclusive(&sfl_service_lock);
	sfl_service_handle = handle;
	sfl_scm_start(&sfl_service_scm, &st);
	(void)sfl_service_report_locked(&st);
	ReleaseSRWLockExclusive(&sfl_service_lock);

	/* without a ticker the start-up must finish within one wait hint, which still works */
	quit = CreateEventW(NULL, TRUE, FALSE, NULL);
	if (quit != NULL)
		ticker = CreateThread(NULL, 0, sfl_service_ticker, quit, 0, NULL);

	exit_code = main_func(argc, argv, user_data);

	if (ticker != NULL) {
		SetEvent(quit);
		WaitForSingleObject(ticker, INFINITE);
		CloseHandle(ticker);
	}
	if (quit != NULL)
		CloseHandle(quit);
	sfl_service_event_log_close();

	AcquireSRWLockExclusive(&sfl_service_lock);
	sfl_scm_exit(&sfl_service_scm, exit_code, &st);
	(void)sfl_service_report_locked(&st);
	/* the handle is invalid once STOPPED is reported */
	sfl_service_handle = NULL;
	ReleaseSRWLockExclusive(&sfl_service_lock);
	return exit_code;
}

static void WINAPI
sfl_service_main(DWORD argc, LPWSTR *argv)
{
	SERVICE_STATUS_HANDLE handle;

	/* start parameters from the SCM are ignored: the command line in ImagePath configures us */
	(void)argc;
	(void)argv;
	handle = RegisterServiceCtrlHandlerExW(sfl_service_name, sfl_service_win32_control_handler,
					       NULL);
	if (handle == NULL) {
		sfl_service_exit_code = 1;
		return;
	}
	sfl_service_exit_code =
		sfl_service_win32_serve(handle, sfl_service_main_func, sfl_service_argc,
					sfl_service_argv, sfl_service_user_data);
}

static int
sfl_service_run_console(SflPlatformMainFunc main_func, int argc, char **argv, void *user_data)
{
	BOOL installed;
	int exit_code;

	sfl_service_console_done = CreateEventW(NULL, TRUE, FALSE, NULL);
	installed = SetConsoleCtrlHandler(sfl_service_win32_console_handler, TRUE);
	exit_code = main_func(argc, argv, user_data);
	if (sfl_service_console_done != NULL)
		SetEvent(sfl_service_console_done);
	if (installed)
		SetConsoleCtrlHandler(sfl_service_win32_console_handler, FALSE);
	/* a close handler may still be waiting on the event; the process exit reclaims it */
	return exit_code;
}

/*
 * Whether services.exe started this process, the only case in which the dispatcher can
 * connect: the SCM creates every service process itself. Windows refuses a console process's
 * StartServiceCtrlDispatcherW at once, but wine waits 10 s for a control pipe that never comes
 * (measured: every `sf2loki version` took 10.2 s under wine 8.0). When no snapshot can be
 * taken the dispatcher is asked, as before.
 */
static BOOL
sfl_service_started_by_scm(void)
{
	PROCESSENTRY32W entry;
	DWORD self = GetCurrentProcessId();
	DWORD parent = 0;
	BOOL by_scm = FALSE;
	BOOL more;
	HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);

	if (snap == INVALID_HANDLE_VALUE)
		return TRUE;
	entry.dwSize = sizeof(entry);
	for (more = Process32FirstW(snap, &entry); more; more = Process32NextW(snap, &entry)) {
		if (entry.th32ProcessID == self) {
			parent = entry.th32ParentProcessID;
			break;
		}
	}
	/*
	 * no parent (what wine reports for a program started from a Unix shell) or one that is
	 * gone: not services.exe, which lives as long as the system
	 */
	if (parent == 0) {
		CloseHandle(snap);
		return FALSE;
	}
	entry.dwSize = sizeof(entry);
	for (more = Process32FirstW(snap, &entry); more; more = Process32NextW(snap, &entry)) {
		if (entry.th32ProcessID == parent) {
			by_scm = _wcsicmp(entry.szExeFile, L"services.exe") == 0;
			break;
		}
	}
	CloseHandle(snap);
	return by_scm;
}

int
sfl_platform_service_run(const char *name, SflPlatformMainFunc main_func, int argc, char **argv,
			 void *user_data)
{
	SERVICE_TABLE_ENTRYW table[2];

	if (name == NULL || main_func == NULL)
		return 1;
	if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, name, -1, sfl_service_name,
				SFL_SERVICE_NAME_MAX) == 0)
		return 1;
	sfl_service_main_func = main_func;
	sfl_service_argc = argc;
	sfl_service_argv = argv;
	sfl_service_user_data = user_data;
	sfl_service_exit_code = 1;

	if (!sfl_service_started_by_scm())
		return sfl_service_run_console(main_func, argc, argv, user_data);
	memset(table, 0, sizeof(table));
	table[0].lpServiceName = sfl_service_name;
	table[0].lpServiceProc = sfl_service_main;
	if (StartServiceCtrlDispatcherW(table))
		return sfl_service_exit_code;
	/* started from a console, a script or a test rather than by the SCM */
	if (GetLastError() == ERROR_FAILED_SERVICE_CONTROLLER_CONNECT)
		return sfl_service_run_console(main_func, argc, argv, user_data);
	return 1;
}

void
sfl_platform_set_stop_handler(SflPlatformStopFunc func, void *user_data)
{
	AcquireSRWLockExclusive(&sfl_service_lock);
	sfl_service_stop_func = func;
	sfl_service_stop_data = func != NULL ? user_data : NULL;
	ReleaseSRWLockExclusive(&sfl_service_lock);
}

void
sfl_platform_set_reload_handler(SflPlatformReloadFunc func, void *user_data)
{
	AcquireSRWLockExclusive(&sfl_service_lock);
	sfl_service_reload_func = func;
	sfl_service_reload_data = func != NULL ? user_data : NULL;
	ReleaseSRWLockExclusive(&sfl_service_lock);
}

/* one line of a notification; only READY=1 and STOPPING=1 mean anything to the SCM */
static BOOL
sfl_service_notify_line_locked(const char *line, size_t len)
{
	SflScmStatus st;

	if (!sfl_scm_notify_line(&sfl_service_scm, line, len, &st))
		return TRUE;
	return sfl_service_report_locked(&st);
}

SflPlatformStatus
sfl_platform_notify(const char *state, SflPlatformError *error)
{
	const char *line;
	bool failed = false;
	DWORD failure = 0;

	if (state == NULL || state[0] == '\0') {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_INVALID;
			error->os_code = 0;
			snprintf(error->message, sizeof(error->message),
				 "empty service-manager notification");
		}
		return SFL_PLATFORM_ERR_INVALID;
	}

	AcquireSRWLockExclusive(&sfl_service_lock);
	/* console mode: nobody to tell, like POSIX without $NOTIFY_SOCKET */
	if (sfl_service_handle != NULL) {
		line = state;
		while (*line != '\0') {
			const char *end = strchr(line, '\n');
			size_t len = end != NULL ? (size_t)(end - line) : strlen(line);

			if (!sfl_service_notify_line_locked(line, len) && !failed) {
				failure = GetLastError();
				failed = true;
			}
			line += len;
			if (*line == '\n')
				line++;
		}
	}
	ReleaseSRWLockExclusive(&sfl_service_lock);

	if (failed) {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_IO;
			error->os_code = (int)failure;
			snprintf(error->message, sizeof(error->message),
				 "SetServiceStatus failed: error %lu", (unsigned long)failure);
		}
		return SFL_PLATFORM_ERR_IO;
	}
	return SFL_PLATFORM_OK;
}

uint64_t
sfl_platform_watchdog_usec(void)
{
	/* the SCM has no watchdog; recovery actions cover a crashed service */
	return 0;
}

/* ChangeServiceConfig2W on our own service; the last error is kept for the caller */
static BOOL
sfl_service_change_config_scm(DWORD level, LPVOID info)
{
	SC_HANDLE manager;
	SC_HANDLE service;
	BOOL ok;
	DWORD failure;

	manager = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
	if (manager == NULL)
		return FALSE;
	/* SERVICE_START too: the SCM wants it of whoever sets a restart action */
	service = OpenServiceW(manager, sfl_service_name, SERVICE_CHANGE_CONFIG | SERVICE_START);
	if (service == NULL) {
		failure = GetLastError();
		CloseServiceHandle(manager);
		SetLastError(failure);
		return FALSE;
	}
	ok = ChangeServiceConfig2W(service, level, info);
	failure = GetLastError();
	CloseServiceHandle(service);
	CloseServiceHandle(manager);
	SetLastError(failure);
	return ok;
}

/* one option; the first failure is the one the caller hears about */
static void
sfl_service_apply_config(SflServiceChangeConfigFunc change, DWORD level, LPVOID info,
			 const char *what, SflPlatformError *error, bool *failed)
{
	DWORD failure;

	if (change(level, info))
		return;
	failure = GetLastError();
	if (*failed)
		return;
	*failed = true;
	if (error != NULL) {
		error->status = SFL_PLATFORM_ERR_IO;
		error->os_code = (int)failure;
		error->access_denied = failure == ERROR_ACCESS_DENIED;
		snprintf(error->message, sizeof(error->message),
			 "cannot set the service's %s: error %lu%s", what, (unsigned long)failure,
			 failure == ERROR_ACCESS_DENIED ? " (access denied)" : "");
	}
}

SflPlatformStatus
sfl_platform_service_configure(const SflPlatformServiceOptions *options, SflPlatformError *error)
{
	SC_ACTION actions[3] = {
		{ SC_ACTION_RESTART, SFL_SERVICE_RESTART_1_MS },
		{ SC_ACTION_RESTART, SFL_SERVICE_RESTART_2_MS },
		{ SC_ACTION_RESTART, SFL_SERVICE_RESTART_3_MS },
	};
	SERVICE_FAILURE_ACTIONSW failure_actions;
	SERVICE_FAILURE_ACTIONS_FLAG failure_flag;
	SERVICE_PRESHUTDOWN_INFO preshutdown;
	SflServiceChangeConfigFunc change;
	bool under_scm;
	bool failed = false;
	uint32_t stop_budget_ms = 0;

	if (options == NULL) {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_INVALID;
			error->os_code = 0;
			snprintf(error->message, sizeof(error->message), "no service options");
		}
		return SFL_PLATFORM_ERR_INVALID;
	}
	AcquireSRWLockExclusive(&sfl_service_lock);
	under_scm = sfl_service_handle != NULL;
	if (under_scm)
		stop_budget_ms =
			sfl_scm_set_shutdown_grace(&sfl_service_scm, options->shutdown_grace_ms);
	change = sfl_service_change_config != NULL ? sfl_service_change_config
						   : sfl_service_change_config_scm;
	ReleaseSRWLockExclusive(&sfl_service_lock);
	if (!under_scm) {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_UNSUPPORTED;
			error->os_code = 0;
			snprintf(error->message, sizeof(error->message),
				 "service options: not running under the SCM");
		}
		return SFL_PLATFORM_ERR_UNSUPPORTED;
	}

	/*
	 * outside the lock: these are calls into services.exe, which may be delivering a control
	 * to our handler meanwhile. The system waits this long at shutdown before it stops waiting
	 * for our drain: the same budget as STOP_PENDING's wait hint.
	 */
	memset(&preshutdown, 0, sizeof(preshutdown));
	preshutdown.dwPreshutdownTimeout = stop_budget_ms;
	sfl_service_apply_config(change, SERVICE_CONFIG_PRESHUTDOWN_INFO, &preshutdown,
				 "preshutdown timeout", error, &failed);

	/* wixl has no ServiceConfigFailureActions, so the service sets its own recovery */
	memset(&failure_actions, 0, sizeof(failure_actions));
	failure_actions.dwResetPeriod = SFL_SERVICE_FAILURE_RESET_S;
	failure_actions.cActions = (DWORD)(sizeof(actions) / sizeof(actions[0]));
	failure_actions.lpsaActions = actions;
	sfl_service_apply_config(change, SERVICE_CONFIG_FAILURE_ACTIONS, &failure_actions,
				 "recovery actions", error, &failed);

	/* a fatal error exits cleanly with a code (STOPPED, ERROR_SERVICE_SPECIFIC_ERROR): restart
	 */
	memset(&failure_flag, 0, sizeof(failure_flag));
	failure_flag.fFailureActionsOnNonCrashFailures = TRUE;
	sfl_service_apply_config(change, SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, &failure_flag,
				 "recovery on a nonzero exit", error, &failed);
	return failed ? SFL_PLATFORM_ERR_IO : SFL_PLATFORM_OK;
}

/* the Event Log's type for our level */
static WORD
sfl_service_event_type(SflPlatformEventType type)
{
	switch (type) {
	case SFL_PLATFORM_EVENT_ERROR:
		return EVENTLOG_ERROR_TYPE;
	case SFL_PLATFORM_EVENT_WARNING:
		return EVENTLOG_WARNING_TYPE;
	case SFL_PLATFORM_EVENT_INFO:
		break;
	}
	return EVENTLOG_INFORMATION_TYPE;
}

static bool
sfl_service_event_log_open_now(void)
{
	bool open;

	AcquireSRWLockShared(&sfl_service_event_lock);
	open = sfl_service_event_source != NULL;
	ReleaseSRWLockShared(&sfl_service_event_lock);
	return open;
}

/* UTF-8 to a malloc()ed UTF-16 string, cut to what the Event Log takes; NULL on failure */
static wchar_t *
sfl_service_event_text(const char *text)
{
	int len = MultiByteToWideChar(CP_UTF8, 0, text, -1, NULL, 0);
	wchar_t *wide;

	if (len <= 0)
		return NULL;
	wide = malloc((size_t)len * sizeof(wchar_t));
	if (wide == NULL)
		return NULL;
	if (MultiByteToWideChar(CP_UTF8, 0, text, -1, wide, len) != len) {
		free(wide);
		return NULL;
	}
	if (len - 1 > SFL_SERVICE_EVENT_MAX_CHARS) {
		int cut = SFL_SERVICE_EVENT_MAX_CHARS;

		/* never half a surrogate pair */
		if (wide[cut - 1] >= 0xD800 && wide[cut - 1] <= 0xDBFF)
			cut--;
		wide[cut] = L'\0';
	}
	return wide;
}

SflPlatformStatus
sfl_platform_event_log_write(SflPlatformEventType type, const char *text, SflPlatformError *error)
{
	SflServiceReportEventFunc report;
	LPCWSTR strings[1];
	wchar_t *wide;
	BOOL ok = FALSE;
	DWORD failure = 0;
	bool open;

	if (text == NULL) {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_INVALID;
			error->os_code = 0;
			snprintf(error->message, sizeof(error->message), "no event log text");
		}
		return SFL_PLATFORM_ERR_INVALID;
	}
	/* console mode: stderr is the log, and converting every line would be wasted */
	if (!sfl_service_event_log_open_now()) {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_UNSUPPORTED;
			error->os_code = 0;
			snprintf(error->message, sizeof(error->message),
				 "event log: not running under the SCM");
		}
		return SFL_PLATFORM_ERR_UNSUPPORTED;
	}
	wide = sfl_service_event_text(text);
	if (wide == NULL) {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_IO;
			error->os_code = (int)GetLastError();
			snprintf(error->message, sizeof(error->message),
				 "event log: cannot convert the text");
		}
		return SFL_PLATFORM_ERR_IO;
	}
	strings[0] = wide;

	/* shared: writers run side by side; closing the source waits for them */
	AcquireSRWLockShared(&sfl_service_event_lock);
	open = sfl_service_event_source != NULL;
	if (open) {
		report = sfl_service_report_event != NULL ? sfl_service_report_event : ReportEventW;
		ok = report(sfl_service_event_source, sfl_service_event_type(type), 0,
			    SFL_SERVICE_EVENT_ID, NULL, 1, 0, strings, NULL);
		failure = GetLastError();
	}
	ReleaseSRWLockShared(&sfl_service_event_lock);
	free(wide);

	if (!open) {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_UNSUPPORTED;
			error->os_code = 0;
			snprintf(error->message, sizeof(error->message),
				 "event log: not running under the SCM");
		}
		return SFL_PLATFORM_ERR_UNSUPPORTED;
	}
	if (!ok) {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_IO;
			error->os_code = (int)failure;
			snprintf(error->message, sizeof(error->message),
				 "ReportEventW failed: error %lu", (unsigned long)failure);
		}
		return SFL_PLATFORM_ERR_IO;
	}
	return SFL_PLATFORM_OK;
}
