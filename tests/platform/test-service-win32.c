/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The Windows service glue (platform/win32/sfl-service-win32.c) with the test playing the
 * SCM: a fake daemon runs in a service thread, the test calls the control handler from its
 * own thread as the dispatcher would, and SetServiceStatus is replaced by a recorder. Waits
 * are on events with deadlines. Plain C and TAP, built with mingw-w64 and run under wine.
 */

#include <windows.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sfl-platform.h"
#include "sfl-scm.h"
#include "win32/sfl-service-win32-private.h"

/* generous: wine starts threads slowly on a loaded machine */
#define TEST_TIMEOUT_MS 20000

#define TEST_FAKE_HANDLE ((SERVICE_STATUS_HANDLE)(uintptr_t)0x5f1)

/* what RUNNING accepts, in Windows' own names */
#define TEST_ACCEPT_RUNNING                                                                        \
	(SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN | SERVICE_ACCEPT_PRESHUTDOWN |              \
	 SERVICE_ACCEPT_PARAMCHANGE)

static bool test_case_ok;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("# %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);          \
			test_case_ok = false;                                                      \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		unsigned long long check_a_ = (unsigned long long)(a);                             \
		unsigned long long check_b_ = (unsigned long long)(b);                             \
		if (check_a_ != check_b_) {                                                        \
			printf("# %s:%d: %s == %s failed: %llu != %llu\n", __FILE__, __LINE__, #a, \
			       #b, check_a_, check_b_);                                            \
			test_case_ok = false;                                                      \
		}                                                                                  \
	} while (0)

/* --- the SetServiceStatus recorder ---------------------------------------------------------- */

#define TEST_MAX_RECORDS 256

static CRITICAL_SECTION test_rec_lock;
static HANDLE test_rec_changed; /* auto-reset: set after every record */
static SERVICE_STATUS test_rec[TEST_MAX_RECORDS];
static unsigned test_rec_len;
static bool test_rec_foreign_handle; /* a report went to a handle we never gave out */
static bool test_rec_fail;	     /* make the next reports fail like a dead handle would */

static BOOL WINAPI
test_rec_set_status(SERVICE_STATUS_HANDLE handle, LPSERVICE_STATUS status)
{
	BOOL ok = TRUE;

	EnterCriticalSection(&test_rec_lock);
	if (handle != TEST_FAKE_HANDLE)
		test_rec_foreign_handle = true;
	if (test_rec_fail) {
		ok = FALSE;
	} else if (test_rec_len < TEST_MAX_RECORDS) {
		test_rec[test_rec_len++] = *status;
	}
	LeaveCriticalSection(&test_rec_lock);
	SetEvent(test_rec_changed);
	if (!ok)
		SetLastError(ERROR_INVALID_HANDLE);
	return ok;
}

static void
test_rec_reset(void)
{
	EnterCriticalSection(&test_rec_lock);
	test_rec_len = 0;
	test_rec_foreign_handle = false;
	test_rec_fail = false;
	LeaveCriticalSection(&test_rec_lock);
}

static unsigned
test_rec_count_state(DWORD state)
{
	unsigned n = 0;

	EnterCriticalSection(&test_rec_lock);
	for (unsigned i = 0; i < test_rec_len; i++)
		n += test_rec[i].dwCurrentState == state;
	LeaveCriticalSection(&test_rec_lock);
	return n;
}

/* waits until @state was reported at least @count times, or the deadline passes */
static bool
test_rec_wait_state(DWORD state, unsigned count)
{
	ULONGLONG deadline = GetTickCount64() + TEST_TIMEOUT_MS;

	for (;;) {
		ULONGLONG now;

		if (test_rec_count_state(state) >= count)
			return true;
		now = GetTickCount64();
		if (now >= deadline)
			return false;
		WaitForSingleObject(test_rec_changed, (DWORD)(deadline - now));
	}
}

static void
test_rec_dump(void)
{
	EnterCriticalSection(&test_rec_lock);
	for (unsigned i = 0; i < test_rec_len; i++)
		printf("# report %u: state %lu accepted %#lx checkpoint %lu hint %lu exit "
		       "%lu/%lu\n",
		       i, (unsigned long)test_rec[i].dwCurrentState,
		       (unsigned long)test_rec[i].dwControlsAccepted,
		       (unsigned long)test_rec[i].dwCheckPoint,
		       (unsigned long)test_rec[i].dwWaitHint,
		       (unsigned long)test_rec[i].dwWin32ExitCode,
		       (unsigned long)test_rec[i].dwServiceSpecificExitCode);
	LeaveCriticalSection(&test_rec_lock);
}

/* --- a fake daemon in a service thread ------------------------------------------------------- */

typedef struct {
	HANDLE stop_event;    /* set by the stop callback */
	HANDLE proceed_event; /* when not NULL: READY waits for it */
	HANDLE ready_done;    /* set once READY=1 was notified */
	volatile LONG stop_calls;
	int exit_code;
	/* when not NULL: called in the service thread before READY=1 */
	void (*before_ready)(void *data);
	void *before_ready_data;
	volatile LONG reload_calls;
	bool fail_ready; /* the READY report fails */
	SflPlatformStatus ready_status;
	int ready_os_code;
	SflPlatformStatus stopping_status;
	bool stop_seen;
	int served; /* what sfl_service_win32_serve returned */
} TestDaemon;

static void
test_daemon_stop_cb(void *user_data)
{
	TestDaemon *daemon = user_data;

	/* like the real one: only post a message */
	InterlockedIncrement(&daemon->stop_calls);
	SetEvent(daemon->stop_event);
}

static void
test_daemon_reload_cb(void *user_data)
{
	TestDaemon *daemon = user_data;

	InterlockedIncrement(&daemon->reload_calls);
}

static int
test_daemon_main(int argc, char **argv, void *user_data)
{
	TestDaemon *daemon = user_data;
	SflPlatformError error;

	(void)argc;
	(void)argv;
	sfl_platform_set_stop_handler(test_daemon_stop_cb, daemon);
	sfl_platform_set_reload_handler(test_daemon_reload_cb, daemon);
	if (daemon->before_ready != NULL)
		daemon->before_ready(daemon->before_ready_data);
	if (daemon->proceed_event != NULL)
		WaitForSingleObject(daemon->proceed_event, TEST_TIMEOUT_MS);

	memset(&error, 0, sizeof(error));
	if (daemon->fail_ready) {
		EnterCriticalSection(&test_rec_lock);
		test_rec_fail = true;
		LeaveCriticalSection(&test_rec_lock);
	}
	daemon->ready_status = sfl_platform_notify("READY=1\nSTATUS=running", &error);
	daemon->ready_os_code = error.os_code;
	EnterCriticalSection(&test_rec_lock);
	test_rec_fail = false;
	LeaveCriticalSection(&test_rec_lock);
	SetEvent(daemon->ready_done);

	daemon->stop_seen =
		WaitForSingleObject(daemon->stop_event, TEST_TIMEOUT_MS) == WAIT_OBJECT_0;
	daemon->stopping_status = sfl_platform_notify("STATUS=stopping\nSTOPPING=1", NULL);
	sfl_platform_set_reload_handler(NULL, NULL);
	sfl_platform_set_stop_handler(NULL, NULL);
	return daemon->exit_code;
}

static DWORD WINAPI
test_daemon_thread(LPVOID param)
{
	TestDaemon *daemon = param;

	daemon->served =
		sfl_service_win32_serve(TEST_FAKE_HANDLE, test_daemon_main, 0, NULL, daemon);
	return 0;
}

static void
test_daemon_init(TestDaemon *daemon, int exit_code, bool hold_ready)
{
	memset(daemon, 0, sizeof(*daemon));
	daemon->exit_code = exit_code;
	daemon->served = -1;
	daemon->stop_event = CreateEventW(NULL, TRUE, FALSE, NULL);
	daemon->ready_done = CreateEventW(NULL, TRUE, FALSE, NULL);
	if (hold_ready)
		daemon->proceed_event = CreateEventW(NULL, TRUE, FALSE, NULL);
}

/* starts the service thread, as the SCM's dispatcher would */
static HANDLE
test_daemon_launch(TestDaemon *daemon)
{
	test_rec_reset();
	return CreateThread(NULL, 0, test_daemon_thread, daemon, 0, NULL);
}

/* joins the service thread; false when it outlives the deadline */
static bool
test_daemon_join(TestDaemon *daemon, HANDLE thread)
{
	bool joined = WaitForSingleObject(thread, TEST_TIMEOUT_MS) == WAIT_OBJECT_0;

	if (joined)
		CloseHandle(thread);
	CloseHandle(daemon->stop_event);
	CloseHandle(daemon->ready_done);
	if (daemon->proceed_event != NULL)
		CloseHandle(daemon->proceed_event);
	return joined;
}

static void
test_check_status(const SERVICE_STATUS *st, DWORD state, DWORD accepted)
{
	CHECK_EQ(st->dwServiceType, SERVICE_WIN32_OWN_PROCESS);
	CHECK_EQ(st->dwCurrentState, state);
	CHECK_EQ(st->dwControlsAccepted, accepted);
}

/* --- cases ------------------------------------------------------------------------------------ */

static void
test_lifecycle(void)
{
	TestDaemon daemon;
	HANDLE thread;
	SERVICE_STATUS *r = test_rec;

	/* no ticks in this case, so the sequence is exact */
	sfl_service_win32_set_tick_ms(INFINITE);
	test_daemon_init(&daemon, 3, false);
	thread = test_daemon_launch(&daemon);
	CHECK(thread != NULL);
	CHECK(test_rec_wait_state(SERVICE_RUNNING, 1));

	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_INTERROGATE, 0, NULL, NULL),
		 NO_ERROR);
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_STOP, 0, NULL, NULL), NO_ERROR);
	/* a second STOP is refused whether the daemon is still draining or already gone */
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_STOP, 0, NULL, NULL),
		 ERROR_CALL_NOT_IMPLEMENTED);
	CHECK(test_daemon_join(&daemon, thread));

	CHECK(daemon.stop_seen);
	CHECK_EQ(daemon.stop_calls, 1);
	CHECK_EQ(daemon.served, 3);
	CHECK_EQ(daemon.ready_status, SFL_PLATFORM_OK);
	CHECK_EQ(daemon.stopping_status, SFL_PLATFORM_OK);
	CHECK(!test_rec_foreign_handle);

	CHECK_EQ(test_rec_len, 6);
	if (test_rec_len != 6) {
		test_rec_dump();
		return;
	}
	test_check_status(&r[0], SERVICE_START_PENDING, 0);
	CHECK_EQ(r[0].dwCheckPoint, 1);
	CHECK(r[0].dwWaitHint > 0);
	test_check_status(&r[1], SERVICE_RUNNING, TEST_ACCEPT_RUNNING);
	CHECK_EQ(r[1].dwCheckPoint, 0);
	CHECK_EQ(r[1].dwWaitHint, 0);
	/* INTERROGATE: the same status again */
	CHECK(memcmp(&r[2], &r[1], sizeof(r[1])) == 0);
	test_check_status(&r[3], SERVICE_STOP_PENDING, 0);
	CHECK_EQ(r[3].dwCheckPoint, 1);
	CHECK(r[3].dwWaitHint > 0);
	/* the daemon's STOPPING=1 raises the checkpoint */
	test_check_status(&r[4], SERVICE_STOP_PENDING, 0);
	CHECK_EQ(r[4].dwCheckPoint, 2);
	test_check_status(&r[5], SERVICE_STOPPED, 0);
	CHECK_EQ(r[5].dwWin32ExitCode, ERROR_SERVICE_SPECIFIC_ERROR);
	CHECK_EQ(r[5].dwServiceSpecificExitCode, 3);
	CHECK_EQ(r[5].dwCheckPoint, 0);
}

static void
test_start_pending_and_shutdown(void)
{
	TestDaemon daemon;
	HANDLE thread;
	unsigned last = 0;
	DWORD prev_checkpoint = 0;

	sfl_service_win32_set_tick_ms(20);
	test_daemon_init(&daemon, 0, true);
	thread = test_daemon_launch(&daemon);
	CHECK(thread != NULL);
	/* the ticker raises the checkpoint while the start-up has not said READY=1 */
	CHECK(test_rec_wait_state(SERVICE_START_PENDING, 4));

	/* not accepted before RUNNING: refused, and the daemon is not asked to stop */
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_STOP, 0, NULL, NULL),
		 ERROR_CALL_NOT_IMPLEMENTED);
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_SHUTDOWN, 0, NULL, NULL),
		 ERROR_CALL_NOT_IMPLEMENTED);
	CHECK_EQ(daemon.stop_calls, 0);

	SetEvent(daemon.proceed_event);
	CHECK(test_rec_wait_state(SERVICE_RUNNING, 1));
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_SHUTDOWN, 0, NULL, NULL),
		 NO_ERROR);
	CHECK(test_daemon_join(&daemon, thread));
	sfl_service_win32_set_tick_ms(SFL_SCM_TICK_MS);

	CHECK(daemon.stop_seen);
	CHECK_EQ(daemon.stop_calls, 1);
	CHECK_EQ(daemon.served, 0);
	CHECK(test_rec_len >= 6);
	if (test_rec_len < 6) {
		test_rec_dump();
		return;
	}
	/* START_PENDING with rising checkpoints and wait hints, then RUNNING */
	while (last < test_rec_len && test_rec[last].dwCurrentState == SERVICE_START_PENDING) {
		test_check_status(&test_rec[last], SERVICE_START_PENDING, 0);
		CHECK(test_rec[last].dwCheckPoint > prev_checkpoint);
		CHECK(test_rec[last].dwWaitHint > 0);
		prev_checkpoint = test_rec[last].dwCheckPoint;
		last++;
	}
	CHECK(last >= 4);
	CHECK(last < test_rec_len);
	if (last >= test_rec_len)
		return;
	test_check_status(&test_rec[last], SERVICE_RUNNING, TEST_ACCEPT_RUNNING);
	/* SHUTDOWN behaves as STOP: STOP_PENDING (maybe ticked), then STOPPED with NO_ERROR */
	for (last++; last + 1 < test_rec_len; last++)
		test_check_status(&test_rec[last], SERVICE_STOP_PENDING, 0);
	test_check_status(&test_rec[test_rec_len - 1], SERVICE_STOPPED, 0);
	CHECK_EQ(test_rec[test_rec_len - 1].dwWin32ExitCode, NO_ERROR);
	CHECK_EQ(test_rec[test_rec_len - 1].dwServiceSpecificExitCode, 0);
	if (!test_case_ok)
		test_rec_dump();
}

static void
test_failed_report(void)
{
	TestDaemon daemon;
	HANDLE thread;

	sfl_service_win32_set_tick_ms(INFINITE);
	test_daemon_init(&daemon, 0, false);
	daemon.fail_ready = true;
	thread = test_daemon_launch(&daemon);
	CHECK(thread != NULL);
	CHECK(WaitForSingleObject(daemon.ready_done, TEST_TIMEOUT_MS) == WAIT_OBJECT_0);
	/* the RUNNING report was lost, yet the service is running and takes a STOP */
	CHECK_EQ(test_rec_count_state(SERVICE_RUNNING), 0);
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_STOP, 0, NULL, NULL), NO_ERROR);
	CHECK(test_daemon_join(&daemon, thread));
	CHECK_EQ(daemon.ready_status, SFL_PLATFORM_ERR_IO);
	CHECK_EQ(daemon.ready_os_code, ERROR_INVALID_HANDLE);
	CHECK_EQ(daemon.stop_calls, 1);
	CHECK_EQ(daemon.served, 0);
}

static void
test_preshutdown(void)
{
	TestDaemon daemon;
	HANDLE thread;

	sfl_service_win32_set_tick_ms(INFINITE);
	test_daemon_init(&daemon, 0, false);
	thread = test_daemon_launch(&daemon);
	CHECK(thread != NULL);
	CHECK(test_rec_wait_state(SERVICE_RUNNING, 1));
	/* the system going down: a stop, once; the SHUTDOWN that may follow is not a second one */
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_PRESHUTDOWN, 0, NULL, NULL),
		 NO_ERROR);
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_SHUTDOWN, 0, NULL, NULL),
		 ERROR_CALL_NOT_IMPLEMENTED);
	CHECK(test_daemon_join(&daemon, thread));
	CHECK(daemon.stop_seen);
	CHECK_EQ(daemon.stop_calls, 1);
	CHECK_EQ(daemon.served, 0);
	CHECK(test_rec_len >= 4);
	if (test_rec_len < 4) {
		test_rec_dump();
		return;
	}
	test_check_status(&test_rec[2], SERVICE_STOP_PENDING, 0);
	test_check_status(&test_rec[test_rec_len - 1], SERVICE_STOPPED, 0);
	CHECK_EQ(test_rec[test_rec_len - 1].dwWin32ExitCode, NO_ERROR);
}

static void
test_paramchange(void)
{
	TestDaemon daemon;
	HANDLE thread;
	unsigned reports;

	sfl_service_win32_set_tick_ms(INFINITE);
	test_daemon_init(&daemon, 0, true);
	thread = test_daemon_launch(&daemon);
	CHECK(thread != NULL);
	CHECK(test_rec_wait_state(SERVICE_START_PENDING, 1));
	/* not yet running: refused, and no reload */
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_PARAMCHANGE, 0, NULL, NULL),
		 ERROR_CALL_NOT_IMPLEMENTED);
	CHECK_EQ(daemon.reload_calls, 0);

	SetEvent(daemon.proceed_event);
	CHECK(test_rec_wait_state(SERVICE_RUNNING, 1));
	reports = test_rec_len;
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_PARAMCHANGE, 0, NULL, NULL),
		 NO_ERROR);
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_PARAMCHANGE, 0, NULL, NULL),
		 NO_ERROR);
	/* the callback ran in the handler, and the service stays as it was */
	CHECK_EQ(daemon.reload_calls, 2);
	CHECK_EQ(daemon.stop_calls, 0);
	CHECK_EQ(test_rec_len, reports);

	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_STOP, 0, NULL, NULL), NO_ERROR);
	/* draining: refused */
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_PARAMCHANGE, 0, NULL, NULL),
		 ERROR_CALL_NOT_IMPLEMENTED);
	CHECK(test_daemon_join(&daemon, thread));
	CHECK_EQ(daemon.reload_calls, 2);
	CHECK_EQ(daemon.stop_calls, 1);
	/* the daemon removed its handler: a late control reaches nobody */
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_PARAMCHANGE, 0, NULL, NULL),
		 ERROR_CALL_NOT_IMPLEMENTED);
}

/* --- the ChangeServiceConfig2W recorder ------------------------------------------------------ */

typedef struct {
	unsigned calls;
	bool preshutdown_seen;
	DWORD preshutdown_ms;
	bool actions_seen;
	DWORD reset_period;
	DWORD n_actions;
	SC_ACTION actions[4];
	bool command_or_reboot; /* lpCommand or lpRebootMsg set: would change what we do not own */
	bool flag_seen;
	BOOL non_crash;
	DWORD fail_with; /* nonzero: every call fails with this error */
	/* results of the daemon's call */
	SflPlatformStatus status;
	SflPlatformError error;
} TestConfigRec;

static TestConfigRec test_config;

static BOOL
test_config_change(DWORD level, LPVOID info)
{
	test_config.calls++;
	switch (level) {
	case SERVICE_CONFIG_PRESHUTDOWN_INFO:
		test_config.preshutdown_seen = true;
		test_config.preshutdown_ms =
			((SERVICE_PRESHUTDOWN_INFO *)info)->dwPreshutdownTimeout;
		break;
	case SERVICE_CONFIG_FAILURE_ACTIONS: {
		SERVICE_FAILURE_ACTIONSW *fa = info;

		test_config.actions_seen = true;
		test_config.reset_period = fa->dwResetPeriod;
		test_config.n_actions = fa->cActions;
		test_config.command_or_reboot = fa->lpCommand != NULL || fa->lpRebootMsg != NULL;
		for (DWORD i = 0; i < fa->cActions && i < 4; i++)
			test_config.actions[i] = fa->lpsaActions[i];
		break;
	}
	case SERVICE_CONFIG_FAILURE_ACTIONS_FLAG:
		test_config.flag_seen = true;
		test_config.non_crash =
			((SERVICE_FAILURE_ACTIONS_FLAG *)info)->fFailureActionsOnNonCrashFailures;
		break;
	default:
		break;
	}
	if (test_config.fail_with != 0) {
		SetLastError(test_config.fail_with);
		return FALSE;
	}
	return TRUE;
}

static void
test_config_before_ready(void *data)
{
	const SflPlatformServiceOptions *options = data;

	memset(&test_config.error, 0, sizeof(test_config.error));
	test_config.status = sfl_platform_service_configure(options, &test_config.error);
}

static void
test_configure(void)
{
	SflPlatformServiceOptions options = { .shutdown_grace_ms = 25000 };
	SflPlatformError error;
	TestDaemon daemon;
	HANDLE thread;
	DWORD fail_with;

	/* not under the SCM: nothing is asked of it */
	memset(&test_config, 0, sizeof(test_config));
	sfl_service_win32_set_change_config_func(test_config_change);
	memset(&error, 0, sizeof(error));
	CHECK_EQ(sfl_platform_service_configure(&options, &error), SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK_EQ(error.status, SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK_EQ(test_config.calls, 0);
	CHECK_EQ(sfl_platform_service_configure(NULL, NULL), SFL_PLATFORM_ERR_INVALID);

	sfl_service_win32_set_tick_ms(INFINITE);
	test_daemon_init(&daemon, 0, false);
	daemon.before_ready = test_config_before_ready;
	daemon.before_ready_data = &options;
	thread = test_daemon_launch(&daemon);
	CHECK(thread != NULL);
	CHECK(test_rec_wait_state(SERVICE_RUNNING, 1));
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_STOP, 0, NULL, NULL), NO_ERROR);
	CHECK(test_daemon_join(&daemon, thread));

	CHECK_EQ(test_config.status, SFL_PLATFORM_OK);
	CHECK_EQ(test_config.calls, 3);
	/* the system waits the grace plus the margin at shutdown */
	CHECK(test_config.preshutdown_seen);
	CHECK_EQ(test_config.preshutdown_ms, 25000 + SFL_SCM_STOP_MARGIN_MS);
	/* restart after 5 s, 10 s, 60 s; the count resets after a day */
	CHECK(test_config.actions_seen);
	CHECK_EQ(test_config.reset_period, 86400);
	CHECK_EQ(test_config.n_actions, 3);
	CHECK_EQ(test_config.actions[0].Type, SC_ACTION_RESTART);
	CHECK_EQ(test_config.actions[0].Delay, 5000);
	CHECK_EQ(test_config.actions[1].Type, SC_ACTION_RESTART);
	CHECK_EQ(test_config.actions[1].Delay, 10000);
	CHECK_EQ(test_config.actions[2].Type, SC_ACTION_RESTART);
	CHECK_EQ(test_config.actions[2].Delay, 60000);
	CHECK(!test_config.command_or_reboot);
	/* and on a clean exit with an error code too, which is how a fatal error ends */
	CHECK(test_config.flag_seen);
	CHECK(test_config.non_crash);
	/* the drain's wait hint covers the grace as well */
	CHECK(test_rec_len >= 3);
	if (test_rec_len >= 3) {
		test_check_status(&test_rec[2], SERVICE_STOP_PENDING, 0);
		CHECK_EQ(test_rec[2].dwWaitHint, 25000 + SFL_SCM_STOP_MARGIN_MS);
	}

	/* a service account that may not change its own config: told, every step still tried */
	fail_with = ERROR_ACCESS_DENIED;
	memset(&test_config, 0, sizeof(test_config));
	test_config.fail_with = fail_with;
	test_daemon_init(&daemon, 0, false);
	daemon.before_ready = test_config_before_ready;
	daemon.before_ready_data = &options;
	thread = test_daemon_launch(&daemon);
	CHECK(thread != NULL);
	CHECK(test_rec_wait_state(SERVICE_RUNNING, 1));
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_STOP, 0, NULL, NULL), NO_ERROR);
	CHECK(test_daemon_join(&daemon, thread));
	CHECK_EQ(test_config.status, SFL_PLATFORM_ERR_IO);
	CHECK_EQ(test_config.error.os_code, ERROR_ACCESS_DENIED);
	CHECK(test_config.error.access_denied);
	CHECK(strstr(test_config.error.message, "preshutdown") != NULL);
	CHECK_EQ(test_config.calls, 3);
	/* the service ran and stopped as usual */
	CHECK_EQ(daemon.served, 0);
	sfl_service_win32_set_change_config_func(NULL);
}

/* --- the ReportEventW recorder ---------------------------------------------------------------- */

#define TEST_MAX_EVENTS 8

typedef struct {
	HANDLE source;
	WORD type;
	WORD category;
	DWORD id;
	WORD n_strings;
	wchar_t *text; /* malloc()ed copy of the first string */
} TestEvent;

static TestEvent test_events[TEST_MAX_EVENTS];
static unsigned test_events_len;

static BOOL WINAPI
test_report_event(HANDLE source, WORD type, WORD category, DWORD event_id, PSID user_sid,
		  WORD n_strings, DWORD data_size, LPCWSTR *strings, LPVOID data)
{
	TestEvent *ev;

	(void)user_sid;
	(void)data_size;
	(void)data;
	if (test_events_len >= TEST_MAX_EVENTS)
		return TRUE;
	ev = &test_events[test_events_len++];
	ev->source = source;
	ev->type = type;
	ev->category = category;
	ev->id = event_id;
	ev->n_strings = n_strings;
	ev->text = n_strings > 0 && strings != NULL ? _wcsdup(strings[0]) : NULL;
	return TRUE;
}

static void
test_events_reset(void)
{
	for (unsigned i = 0; i < test_events_len; i++)
		free(test_events[i].text);
	memset(test_events, 0, sizeof(test_events));
	test_events_len = 0;
}

typedef struct {
	SflPlatformStatus status[4];
	char *long_text;
} TestEventWrites;

static void
test_event_before_ready(void *data)
{
	TestEventWrites *w = data;

	w->status[0] = sfl_platform_event_log_write(SFL_PLATFORM_EVENT_ERROR, "an error", NULL);
	w->status[1] = sfl_platform_event_log_write(SFL_PLATFORM_EVENT_WARNING,
						    "level=warning event=\"caf\xc3\xa9\"", NULL);
	w->status[2] = sfl_platform_event_log_write(SFL_PLATFORM_EVENT_INFO, "info", NULL);
	w->status[3] = sfl_platform_event_log_write(SFL_PLATFORM_EVENT_INFO, w->long_text, NULL);
}

static void
test_event_log(void)
{
	TestEventWrites writes;
	SflPlatformError error;
	TestDaemon daemon;
	HANDLE thread;
	const size_t long_len = 40000;

	test_events_reset();
	sfl_service_win32_set_report_event_func(test_report_event);
	/* console mode: stderr is the log */
	memset(&error, 0, sizeof(error));
	CHECK_EQ(sfl_platform_event_log_write(SFL_PLATFORM_EVENT_ERROR, "x", &error),
		 SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK_EQ(error.status, SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK_EQ(test_events_len, 0);

	memset(&writes, 0, sizeof(writes));
	writes.long_text = malloc(long_len + 1);
	CHECK(writes.long_text != NULL);
	if (writes.long_text == NULL)
		return;
	memset(writes.long_text, 'a', long_len);
	writes.long_text[long_len] = '\0';
	sfl_service_win32_set_tick_ms(INFINITE);
	test_daemon_init(&daemon, 0, false);
	daemon.before_ready = test_event_before_ready;
	daemon.before_ready_data = &writes;
	thread = test_daemon_launch(&daemon);
	CHECK(thread != NULL);
	CHECK(test_rec_wait_state(SERVICE_RUNNING, 1));
	CHECK_EQ(sfl_service_win32_control_handler(SERVICE_CONTROL_STOP, 0, NULL, NULL), NO_ERROR);
	CHECK(test_daemon_join(&daemon, thread));
	free(writes.long_text);

	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(writes.status[i], SFL_PLATFORM_OK);
	CHECK_EQ(test_events_len, 4);
	if (test_events_len == 4) {
		static const WORD types[] = { EVENTLOG_ERROR_TYPE, EVENTLOG_WARNING_TYPE,
					      EVENTLOG_INFORMATION_TYPE,
					      EVENTLOG_INFORMATION_TYPE };

		for (unsigned i = 0; i < 4; i++) {
			/* the source RegisterEventSourceW opened; one string for message id 1 */
			CHECK(test_events[i].source != NULL);
			CHECK_EQ(test_events[i].type, types[i]);
			CHECK_EQ(test_events[i].category, 0);
			CHECK_EQ(test_events[i].id, 1);
			CHECK_EQ(test_events[i].n_strings, 1);
			CHECK(test_events[i].text != NULL);
		}
		CHECK(test_events[0].text != NULL && wcscmp(test_events[0].text, L"an error") == 0);
		/* UTF-8 in, UTF-16 out */
		CHECK(test_events[1].text != NULL &&
		      wcscmp(test_events[1].text, L"level=warning event=\"caf\u00e9\"") == 0);
		/* cut to what ReportEventW takes */
		CHECK(test_events[3].text != NULL && wcslen(test_events[3].text) == 31000);
	}

	/* the service run is over: the source is closed */
	test_events_reset();
	CHECK_EQ(sfl_platform_event_log_write(SFL_PLATFORM_EVENT_ERROR, "late", NULL),
		 SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK_EQ(test_events_len, 0);
	CHECK_EQ(sfl_platform_event_log_write(SFL_PLATFORM_EVENT_ERROR, NULL, NULL),
		 SFL_PLATFORM_ERR_INVALID);
	sfl_service_win32_set_report_event_func(NULL);
	test_events_reset();
}

static volatile LONG test_console_calls;

static void
test_console_stop_cb(void *user_data)
{
	(void)user_data;
	InterlockedIncrement(&test_console_calls);
}

static void
test_console_handler(void)
{
	test_console_calls = 0;
	/* no stop handler yet: the default handler (process exit) must run */
	CHECK(!sfl_service_win32_console_handler(CTRL_C_EVENT));

	sfl_platform_set_stop_handler(test_console_stop_cb, NULL);
	CHECK(sfl_service_win32_console_handler(CTRL_C_EVENT));
	CHECK(sfl_service_win32_console_handler(CTRL_BREAK_EVENT));
	CHECK(sfl_service_win32_console_handler(CTRL_CLOSE_EVENT));
	CHECK_EQ(test_console_calls, 3);
	/* not a stop request */
	CHECK(!sfl_service_win32_console_handler(0x77));
	CHECK_EQ(test_console_calls, 3);

	sfl_platform_set_stop_handler(NULL, NULL);
	CHECK(!sfl_service_win32_console_handler(CTRL_BREAK_EVENT));
	CHECK_EQ(test_console_calls, 3);
}

static void
test_outside_scm(void)
{
	SflPlatformError error;

	test_rec_reset();
	/* not under the SCM: notifications are accepted and go nowhere */
	CHECK_EQ(sfl_platform_notify("READY=1\nSTATUS=running", NULL), SFL_PLATFORM_OK);
	CHECK_EQ(sfl_platform_notify("WATCHDOG=1", NULL), SFL_PLATFORM_OK);
	CHECK_EQ(sfl_platform_notify("STOPPING=1", NULL), SFL_PLATFORM_OK);
	CHECK_EQ(test_rec_len, 0);
	memset(&error, 0, sizeof(error));
	CHECK_EQ(sfl_platform_notify(NULL, &error), SFL_PLATFORM_ERR_INVALID);
	CHECK_EQ(error.status, SFL_PLATFORM_ERR_INVALID);
	CHECK(error.message[0] != '\0');
	/* the SCM has no watchdog */
	CHECK_EQ(sfl_platform_watchdog_usec(), 0);
}

static DWORD test_console_main_thread;

static int
test_console_main(int argc, char **argv, void *user_data)
{
	(void)argc;
	(void)argv;
	test_console_main_thread = GetCurrentThreadId();
	return *(int *)user_data;
}

static void
test_console_fallback(void)
{
	int code = 7;
	char arg0[] = "sf2loki";
	char *argv[] = { arg0, NULL };

	test_console_main_thread = 0;
	test_rec_reset();
	/* this process was not started by the SCM, so the dispatcher refuses and we run inline */
	CHECK_EQ(sfl_platform_service_run("sf2loki-test", test_console_main, 1, argv, &code), 7);
	CHECK_EQ(test_console_main_thread, GetCurrentThreadId());
	CHECK_EQ(test_rec_len, 0);
}

typedef struct {
	const char *name;
	void (*func)(void);
} TestCase;

int
main(void)
{
	static const TestCase cases[] = {
		{ "START_PENDING, RUNNING, INTERROGATE, one STOP, STOPPED with the exit code",
		  test_lifecycle },
		{ "checkpoints rise while starting, early STOP refused, SHUTDOWN stops",
		  test_start_pending_and_shutdown },
		{ "a failed SetServiceStatus is reported by notify", test_failed_report },
		{ "console Ctrl-C, Ctrl-Break and close reach the stop callback",
		  test_console_handler },
		{ "outside the SCM notify goes nowhere and there is no watchdog",
		  test_outside_scm },
		{ "console mode when not started by the SCM", test_console_fallback },
		{ "PRESHUTDOWN stops like STOP, exit 0", test_preshutdown },
		{ "PARAMCHANGE calls the reload handler while RUNNING only", test_paramchange },
		{ "preshutdown timeout and recovery actions set on the service; refusal reported",
		  test_configure },
		{ "Event Log: types, event id 1, UTF-16 text, cut, only under the SCM",
		  test_event_log },
	};
	const unsigned n = (unsigned)(sizeof(cases) / sizeof(cases[0]));
	int failed = 0;

	InitializeCriticalSection(&test_rec_lock);
	test_rec_changed = CreateEventW(NULL, FALSE, FALSE, NULL);
	sfl_service_win32_set_status_func(test_rec_set_status);

	printf("1..%u\n", n);
	for (unsigned i = 0; i < n; i++) {
		test_case_ok = true;
		cases[i].func();
		printf("%s %u - %s\n", test_case_ok ? "ok" : "not ok", i + 1, cases[i].name);
		fflush(stdout);
		failed += !test_case_ok;
	}
	sfl_service_win32_set_status_func(NULL);
	CloseHandle(test_rec_changed);
	DeleteCriticalSection(&test_rec_lock);
	return failed == 0 ? 0 : 1;
}
