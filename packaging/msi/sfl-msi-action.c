/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The MSI's custom actions (packaging/msi/sf2loki.wxs.in), one program installed beside
 * sf2loki.exe: wixl runs an installed file as a custom action (type 18) but not a program from
 * the Binary table. What Windows Installer and wixl cannot express (docs/deployment/windows.md,
 * "Installing with the MSI"):
 *
 *   sfl-msi-action configure SERVICE EXE DATA_DIR EXAMPLE
 *       after InstallServices: quotes the service's image path when the installer wrote EXE
 *       unquoted (wine's msi does; an unquoted path under "C:\Program Files" is the classic
 *       unquoted-service-path hole); sets the recovery actions (restart after 5 s, 10 s and
 *       60 s, also after a nonzero exit) with the installer's rights, which a LocalService
 *       account lacks for its own service (best effort: wine 8.0 refuses those levels); creates
 * DATA_DIR with a DACL of its own (SYSTEM and Administrators full control, LocalService modify,
 * nothing inherited from ProgramData, where every user may read) when it does not exist yet; and
 * copies EXAMPLE to DATA_DIR\config.yaml when there is no config.yaml. The operator's config.yaml
 * and the state are not components: upgrades and uninstalls never touch them.
 *
 *   sfl-msi-action wait-stopped SERVICE SECONDS
 *       before DeleteServices and before any file is replaced or removed: asks a running
 *       service to stop and waits until the SCM reports it STOPPED. StopServices only sends
 *       the control (this package's ServiceControl does not wait; wine's never does), and a
 *       service still draining when DeleteServices runs stays "marked for deletion", so the
 *       upgrade's InstallServices could not create it again. Exits 1 when it has not stopped
 *       within SECONDS, failing the step rather than replacing a running binary.
 *
 * Plain Win32 without GLib, so it needs none of the DLLs it is installed with. Messages go to
 * stderr, which the installer does not keep; each failure is also the non-zero exit code that
 * fails the custom action and shows in the verbose log (msiexec /l*v).
 */

#include <windows.h>

#include <sddl.h>

#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

/* SYSTEM and Administrators: full control; LocalService (the service's account): modify;
 * P: not inherited from %ProgramData%, whose default lets every user read */
#define SFL_DATA_DIR_SDDL L"D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1301bf;;;LS)"

#define SFL_POLL_MS 250

static int
fail(const char *what, const wchar_t *name)
{
	fprintf(stderr, "sfl-msi-action: %s %ls: Win32 error %lu\n", what,
		name != NULL ? name : L"", (unsigned long)GetLastError());
	return 1;
}

/* "\"EXE\" ARGS" when @path is "EXE ARGS" with EXE unquoted; NULL when nothing is to change */
static wchar_t *
quoted_image_path(const wchar_t *path, const wchar_t *exe)
{
	size_t exe_len = wcslen(exe);
	size_t len;
	wchar_t *out;

	if (path[0] == L'"' || _wcsnicmp(path, exe, exe_len) != 0 ||
	    (path[exe_len] != L'\0' && path[exe_len] != L' '))
		return NULL;
	len = wcslen(path) + 3;
	out = calloc(len, sizeof *out);
	if (out != NULL)
		swprintf(out, len, L"\"%ls\"%ls", exe, path + exe_len);
	return out;
}

/*
 * The same recovery the service asks for at each start (platform/win32/sfl-service-win32.c);
 * set here too because changing a service's configuration needs rights the installer has and
 * LocalService may not. Never fails the install: the service runs without recovery rather
 * than not at all.
 */
static void
set_recovery(SC_HANDLE service, const wchar_t *name)
{
	SC_ACTION actions[3] = {
		{ SC_ACTION_RESTART, 5000 },
		{ SC_ACTION_RESTART, 10000 },
		{ SC_ACTION_RESTART, 60000 },
	};
	SERVICE_FAILURE_ACTIONSW failure_actions = { 0 };
	SERVICE_FAILURE_ACTIONS_FLAG failure_flag = { 0 };

	failure_actions.dwResetPeriod = 86400;
	failure_actions.cActions = 3;
	failure_actions.lpsaActions = actions;
	if (!ChangeServiceConfig2W(service, SERVICE_CONFIG_FAILURE_ACTIONS, &failure_actions))
		(void)fail("ChangeServiceConfig2W(failure actions), continuing:", name);
	failure_flag.fFailureActionsOnNonCrashFailures = TRUE;
	if (!ChangeServiceConfig2W(service, SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, &failure_flag))
		(void)fail("ChangeServiceConfig2W(failure actions flag), continuing:", name);
}

static int
quote_image_path(SC_HANDLE scm, const wchar_t *name, const wchar_t *exe)
{
	QUERY_SERVICE_CONFIGW *cfg = NULL;
	SC_HANDLE service;
	DWORD needed = 0;
	wchar_t *quoted = NULL;
	int rc = 1;

	/* SERVICE_START too: the SCM wants it of whoever sets a restart action */
	service = OpenServiceW(scm, name,
			       SERVICE_QUERY_CONFIG | SERVICE_CHANGE_CONFIG | SERVICE_START);
	if (service == NULL)
		return fail("OpenServiceW", name);
	if (!QueryServiceConfigW(service, NULL, 0, &needed) &&
	    GetLastError() != ERROR_INSUFFICIENT_BUFFER) {
		fail("QueryServiceConfigW", name);
		goto out;
	}
	cfg = calloc(1, needed);
	if (cfg == NULL || !QueryServiceConfigW(service, cfg, needed, &needed)) {
		fail("QueryServiceConfigW", name);
		goto out;
	}
	quoted = quoted_image_path(cfg->lpBinaryPathName, exe);
	if (quoted != NULL &&
	    !ChangeServiceConfigW(service, SERVICE_NO_CHANGE, SERVICE_NO_CHANGE, SERVICE_NO_CHANGE,
				  quoted, NULL, NULL, NULL, NULL, NULL, NULL)) {
		fail("ChangeServiceConfigW", name);
		goto out;
	}
	set_recovery(service, name);
	rc = 0;
out:
	free(quoted);
	free(cfg);
	CloseServiceHandle(service);
	return rc;
}

static int
create_data_dir(const wchar_t *dir)
{
	PSECURITY_DESCRIPTOR sd = NULL;
	SECURITY_ATTRIBUTES sa = { sizeof sa, NULL, FALSE };

	if (GetFileAttributesW(dir) != INVALID_FILE_ATTRIBUTES)
		return 0; /* the operator's: its ACL stays as they left it */
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(SFL_DATA_DIR_SDDL,
								  SDDL_REVISION_1, &sd, NULL))
		return fail("ConvertStringSecurityDescriptorToSecurityDescriptorW", dir);
	sa.lpSecurityDescriptor = sd;
	if (!CreateDirectoryW(dir, &sa) && GetLastError() != ERROR_ALREADY_EXISTS) {
		LocalFree(sd);
		return fail("CreateDirectoryW", dir);
	}
	LocalFree(sd);
	return 0;
}

static int
configure(const wchar_t *name, const wchar_t *exe, const wchar_t *dir, const wchar_t *example)
{
	SC_HANDLE scm;
	wchar_t config[MAX_PATH];
	int rc;

	scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
	if (scm == NULL)
		return fail("OpenSCManagerW", NULL);
	rc = quote_image_path(scm, name, exe);
	CloseServiceHandle(scm);
	if (rc != 0)
		return rc;
	if (create_data_dir(dir) != 0)
		return 1;
	if (swprintf(config, MAX_PATH, L"%ls\\config.yaml", dir) < 0)
		return fail("path too long:", dir);
	/* FALSE: an existing config.yaml is the operator's and is never replaced */
	if (!CopyFileW(example, config, TRUE) && GetLastError() != ERROR_FILE_EXISTS)
		return fail("CopyFileW", config);
	return 0;
}

static int
wait_stopped(const wchar_t *name, DWORD seconds)
{
	SERVICE_STATUS_PROCESS st = { 0 };
	SERVICE_STATUS ignored;
	SC_HANDLE scm;
	SC_HANDLE service;
	ULONGLONG deadline = GetTickCount64() + (ULONGLONG)seconds * 1000;
	DWORD needed;
	BOOL asked = FALSE;
	int rc = 1;

	scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
	if (scm == NULL)
		return fail("OpenSCManagerW", NULL);
	service = OpenServiceW(scm, name, SERVICE_QUERY_STATUS | SERVICE_STOP);
	if (service == NULL) {
		rc = GetLastError() == ERROR_SERVICE_DOES_NOT_EXIST ? 0
								    : fail("OpenServiceW", name);
		CloseServiceHandle(scm);
		return rc;
	}
	for (;;) {
		if (!QueryServiceStatusEx(service, SC_STATUS_PROCESS_INFO, (BYTE *)&st, sizeof st,
					  &needed)) {
			fail("QueryServiceStatusEx", name);
			break;
		}
		if (st.dwCurrentState == SERVICE_STOPPED) {
			rc = 0;
			break;
		}
		/* once: a STOP repeated while it drains would end the drain
		 * (docs/deployment/service.md) */
		if (!asked && st.dwCurrentState != SERVICE_STOP_PENDING) {
			/* refused while it starts: asked again on the next turn */
			asked = ControlService(service, SERVICE_CONTROL_STOP, &ignored) ||
				GetLastError() != ERROR_SERVICE_CANNOT_ACCEPT_CTRL;
		}
		if (GetTickCount64() >= deadline) {
			fprintf(stderr,
				"sfl-msi-action: %ls did not stop within %lu s (state %lu)\n", name,
				(unsigned long)seconds, (unsigned long)st.dwCurrentState);
			break;
		}
		Sleep(SFL_POLL_MS);
	}
	CloseServiceHandle(service);
	CloseServiceHandle(scm);
	return rc;
}

/* -municode: the C runtime calls wmain with the UTF-16 command line */
int wmain(int argc, wchar_t **argv);

int
wmain(int argc, wchar_t **argv)
{
	if (argc == 6 && wcscmp(argv[1], L"configure") == 0)
		return configure(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 4 && wcscmp(argv[1], L"wait-stopped") == 0)
		return wait_stopped(argv[2], (DWORD)wcstoul(argv[3], NULL, 10));
	fputs("usage: sfl-msi-action configure SERVICE EXE DATA_DIR EXAMPLE\n"
	      "       sfl-msi-action wait-stopped SERVICE SECONDS\n",
	      stderr);
	return 2;
}
