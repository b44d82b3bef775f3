/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * sfl-svc-query NAME: what the SCM holds about one service, as one JSON document on stdout,
 * for scripts/msi-test.py. sc.exe's text differs between Windows and wine and leaves out
 * the preshutdown timeout, so the test asks the SCM itself:
 *
 *   {"name": ..., "exists": true,
 *    "status": {state, win32_exit_code, service_exit_code, pid, checkpoint, wait_hint,
 *               controls_accepted},
 *    "config": {service_type, start_type, error_control, binary_path, account, display_name},
 *    "delayed_auto_start": bool|null, "description": str|null,
 *    "failure_actions": {reset_period, reboot_msg, command, actions: [{type, delay_ms}]}|null,
 *    "failure_actions_on_non_crash": bool|null, "preshutdown_timeout_ms": n|null}
 *
 * `sfl-svc-query NAME paramchange` sends SERVICE_CONTROL_PARAMCHANGE instead (what
 * `sc control NAME paramchange` does on Windows; wine's sc.exe has no `control`) and prints the
 * status the service answered with.
 *
 * A service that does not exist prints {"name": ..., "exists": false} and exits 0, so the
 * test can assert an uninstall; any other failure exits 1 with the Win32 error on stderr.
 * A QueryServiceConfig2W level the SCM does not answer (wine lacks some) is null.
 *
 * Plain Win32 with no GLib and no DLL of the build: it runs in a wine prefix that holds only
 * what the MSI installed. Built only by the Windows build (tests/win32/meson.build).
 */

#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

static void
json_string(const wchar_t *text)
{
	char *utf8;
	int len;

	if (text == NULL) {
		fputs("null", stdout);
		return;
	}
	len = WideCharToMultiByte(CP_UTF8, 0, text, -1, NULL, 0, NULL, NULL);
	utf8 = len > 0 ? malloc((size_t)len) : NULL;
	if (utf8 == NULL || WideCharToMultiByte(CP_UTF8, 0, text, -1, utf8, len, NULL, NULL) <= 0) {
		free(utf8);
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)utf8; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
	free(utf8);
}

/* QueryServiceConfig2W into a fresh buffer; NULL when the level is not answered */
static void *
query_config2(SC_HANDLE service, DWORD level)
{
	DWORD needed = 0;
	void *buf;

	if (!QueryServiceConfig2W(service, level, NULL, 0, &needed) &&
	    GetLastError() != ERROR_INSUFFICIENT_BUFFER)
		return NULL;
	if (needed == 0)
		return NULL;
	buf = calloc(1, needed);
	if (buf == NULL)
		return NULL;
	if (!QueryServiceConfig2W(service, level, buf, needed, &needed)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int
fail(const char *what)
{
	fprintf(stderr, "sfl-svc-query: %s failed: Win32 error %lu\n", what,
		(unsigned long)GetLastError());
	return 1;
}

static void
print_status(SC_HANDLE service)
{
	SERVICE_STATUS_PROCESS st = { 0 };
	DWORD needed = 0;

	if (!QueryServiceStatusEx(service, SC_STATUS_PROCESS_INFO, (BYTE *)&st, sizeof st,
				  &needed)) {
		fputs("null", stdout);
		return;
	}
	printf("{\"state\": %lu, \"win32_exit_code\": %lu, \"service_exit_code\": %lu, "
	       "\"pid\": %lu, \"checkpoint\": %lu, \"wait_hint\": %lu, "
	       "\"controls_accepted\": %lu}",
	       (unsigned long)st.dwCurrentState, (unsigned long)st.dwWin32ExitCode,
	       (unsigned long)st.dwServiceSpecificExitCode, (unsigned long)st.dwProcessId,
	       (unsigned long)st.dwCheckPoint, (unsigned long)st.dwWaitHint,
	       (unsigned long)st.dwControlsAccepted);
}

static int
print_config(SC_HANDLE service)
{
	QUERY_SERVICE_CONFIGW *cfg;
	DWORD needed = 0;

	if (!QueryServiceConfigW(service, NULL, 0, &needed) &&
	    GetLastError() != ERROR_INSUFFICIENT_BUFFER)
		return fail("QueryServiceConfigW");
	cfg = calloc(1, needed > 0 ? needed : sizeof *cfg);
	if (cfg == NULL || !QueryServiceConfigW(service, cfg, needed, &needed)) {
		free(cfg);
		return fail("QueryServiceConfigW");
	}
	printf("{\"service_type\": %lu, \"start_type\": %lu, \"error_control\": %lu, "
	       "\"binary_path\": ",
	       (unsigned long)cfg->dwServiceType, (unsigned long)cfg->dwStartType,
	       (unsigned long)cfg->dwErrorControl);
	json_string(cfg->lpBinaryPathName);
	fputs(", \"account\": ", stdout);
	json_string(cfg->lpServiceStartName);
	fputs(", \"display_name\": ", stdout);
	json_string(cfg->lpDisplayName);
	putchar('}');
	free(cfg);
	return 0;
}

static void
print_config2(SC_HANDLE service)
{
	SERVICE_DELAYED_AUTO_START_INFO *delayed;
	SERVICE_DESCRIPTIONW *desc;
	SERVICE_FAILURE_ACTIONSW *fa;
	SERVICE_FAILURE_ACTIONS_FLAG *flag;
	SERVICE_PRESHUTDOWN_INFO *pre;

	delayed = query_config2(service, SERVICE_CONFIG_DELAYED_AUTO_START_INFO);
	fputs(", \"delayed_auto_start\": ", stdout);
	fputs(delayed == NULL ? "null" : (delayed->fDelayedAutostart ? "true" : "false"), stdout);
	free(delayed);

	desc = query_config2(service, SERVICE_CONFIG_DESCRIPTION);
	fputs(", \"description\": ", stdout);
	json_string(desc != NULL ? desc->lpDescription : NULL);
	free(desc);

	fa = query_config2(service, SERVICE_CONFIG_FAILURE_ACTIONS);
	fputs(", \"failure_actions\": ", stdout);
	if (fa == NULL) {
		fputs("null", stdout);
	} else {
		printf("{\"reset_period\": %lu, \"reboot_msg\": ",
		       (unsigned long)fa->dwResetPeriod);
		json_string(fa->lpRebootMsg);
		fputs(", \"command\": ", stdout);
		json_string(fa->lpCommand);
		fputs(", \"actions\": [", stdout);
		for (DWORD i = 0; fa->lpsaActions != NULL && i < fa->cActions; i++)
			printf("%s{\"type\": %d, \"delay_ms\": %lu}", i > 0 ? ", " : "",
			       (int)fa->lpsaActions[i].Type,
			       (unsigned long)fa->lpsaActions[i].Delay);
		fputs("]}", stdout);
	}
	free(fa);

	flag = query_config2(service, SERVICE_CONFIG_FAILURE_ACTIONS_FLAG);
	fputs(", \"failure_actions_on_non_crash\": ", stdout);
	fputs(flag == NULL ? "null" : (flag->fFailureActionsOnNonCrashFailures ? "true" : "false"),
	      stdout);
	free(flag);

	pre = query_config2(service, SERVICE_CONFIG_PRESHUTDOWN_INFO);
	fputs(", \"preshutdown_timeout_ms\": ", stdout);
	if (pre == NULL)
		fputs("null", stdout);
	else
		printf("%lu", (unsigned long)pre->dwPreshutdownTimeout);
	free(pre);
}

/* -municode: the C runtime calls wmain with the UTF-16 command line */
int wmain(int argc, wchar_t **argv);

int
wmain(int argc, wchar_t **argv)
{
	SC_HANDLE scm;
	SC_HANDLE service;
	int rc;

	if (argc != 2 && !(argc == 3 && wcscmp(argv[2], L"paramchange") == 0)) {
		fputs("usage: sfl-svc-query NAME [paramchange]\n", stderr);
		return 2;
	}
	scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
	if (scm == NULL)
		return fail("OpenSCManagerW");
	service = OpenServiceW(
		scm, argv[1], SERVICE_QUERY_STATUS | SERVICE_QUERY_CONFIG | SERVICE_PAUSE_CONTINUE);
	if (service == NULL) {
		if (GetLastError() != ERROR_SERVICE_DOES_NOT_EXIST) {
			CloseServiceHandle(scm);
			return fail("OpenServiceW");
		}
		fputs("{\"name\": ", stdout);
		json_string(argv[1]);
		fputs(", \"exists\": false}\n", stdout);
		CloseServiceHandle(scm);
		return 0;
	}
	if (argc == 3) {
		SERVICE_STATUS status;
		/* PARAMCHANGE needs SERVICE_PAUSE_CONTINUE access */
		if (!ControlService(service, SERVICE_CONTROL_PARAMCHANGE, &status)) {
			CloseServiceHandle(service);
			CloseServiceHandle(scm);
			return fail("ControlService(PARAMCHANGE)");
		}
		fputs("{\"name\": ", stdout);
		json_string(argv[1]);
		fputs(", \"exists\": true, \"status\": ", stdout);
		print_status(service);
		fputs("}\n", stdout);
		CloseServiceHandle(service);
		CloseServiceHandle(scm);
		return 0;
	}
	fputs("{\"name\": ", stdout);
	json_string(argv[1]);
	fputs(", \"exists\": true, \"status\": ", stdout);
	print_status(service);
	fputs(", \"config\": ", stdout);
	rc = print_config(service);
	if (rc == 0) {
		print_config2(service);
		fputs("}\n", stdout);
	}
	CloseServiceHandle(service);
	CloseServiceHandle(scm);
	return rc;
}
