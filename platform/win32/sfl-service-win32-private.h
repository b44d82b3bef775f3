/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

/*
 * Seams of win32/sfl-service-win32.c for tests/platform/test-service-win32.c: they let a test
 * play the SCM (call the control handler, record what would reach SetServiceStatus) without
 * installing a service. Nothing in the daemon uses them.
 */

#include <windows.h>

#include "sfl-platform.h"

typedef BOOL(WINAPI *SflServiceSetStatusFunc)(SERVICE_STATUS_HANDLE handle,
					      LPSERVICE_STATUS status);

/* replaces SetServiceStatus; NULL restores it */
void sfl_service_win32_set_status_func(SflServiceSetStatusFunc func);

/*
 * Replaces ChangeServiceConfig2W on our own service (opened by name through the SCM); NULL
 * restores it. Sets the last error on failure, as the real one does.
 */
typedef BOOL (*SflServiceChangeConfigFunc)(DWORD level, LPVOID info);
void sfl_service_win32_set_change_config_func(SflServiceChangeConfigFunc func);

/* replaces ReportEventW (the event source is still opened with RegisterEventSourceW) */
typedef BOOL(WINAPI *SflServiceReportEventFunc)(HANDLE source, WORD type, WORD category,
						DWORD event_id, PSID user_sid, WORD n_strings,
						DWORD data_size, LPCWSTR *strings, LPVOID data);
void sfl_service_win32_set_report_event_func(SflServiceReportEventFunc func);

/* the interval of the pending-state ticker (SFL_SCM_TICK_MS unless a test changes it) */
void sfl_service_win32_set_tick_ms(DWORD tick_ms);

/*
 * The service thread's work once RegisterServiceCtrlHandlerExW gave @handle: opens the event
 * source, reports START_PENDING, runs @main_func with the ticker going, closes the event source
 * and reports STOPPED with its exit code.
 */
int sfl_service_win32_serve(SERVICE_STATUS_HANDLE handle, SflPlatformMainFunc main_func, int argc,
			    char **argv, void *user_data);

/* the HandlerEx registered with the SCM */
DWORD WINAPI sfl_service_win32_control_handler(DWORD control, DWORD event_type, LPVOID event_data,
					       LPVOID context);

/* the console control handler installed in console mode */
BOOL WINAPI sfl_service_win32_console_handler(DWORD ctrl_type);
