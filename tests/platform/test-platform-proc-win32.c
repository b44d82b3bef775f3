/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/* Windows helpers for the platform contract tests (built with mingw-w64, run under wine) */

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include "test-platform-proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* what TerminateProcess makes the child exit with: the POSIX 128 + SIGKILL convention */
#define TP_KILLED_EXIT_CODE 137

struct TpChild {
	HANDLE process;
	DWORD pid;
	HANDLE to_child;   /* the child's stdin */
	HANDLE from_child; /* the child's stdout */
};

void
tp_proc_init(int argc, char **argv)
{
	/* GetModuleFileNameW finds this executable; argv[0] is not needed */
	(void)argc;
	(void)argv;
}

static wchar_t *
tp_wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0)
		return NULL;
	w = malloc((size_t)n * sizeof(wchar_t));
	if (w != NULL && MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n) <= 0) {
		free(w);
		return NULL;
	}
	return w;
}

static char *
tp_utf8(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	char *s;

	if (n <= 0)
		return NULL;
	s = malloc((size_t)n);
	if (s != NULL && WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) <= 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* appends @arg quoted the way CommandLineToArgvW and the C runtime split it back */
static void
tp_append_arg(wchar_t *cmd, size_t cap, const wchar_t *arg)
{
	size_t len = wcslen(cmd);

	if (len > 0 && len + 1 < cap)
		cmd[len++] = L' ';
	if (len + 1 < cap)
		cmd[len++] = L'"';
	for (const wchar_t *p = arg;; p++) {
		size_t backslashes = 0;

		while (*p == L'\\') {
			backslashes++;
			p++;
		}
		/* backslashes are literal unless they precede a quote (or the closing quote) */
		if (*p == L'\0' || *p == L'"')
			backslashes = backslashes * 2 + (*p == L'"');
		while (backslashes-- > 0 && len + 1 < cap)
			cmd[len++] = L'\\';
		if (*p == L'\0')
			break;
		if (len + 1 < cap)
			cmd[len++] = *p;
	}
	if (len + 1 < cap)
		cmd[len++] = L'"';
	cmd[len] = L'\0';
}

TpChild *
tp_child_spawn(const char *const *args)
{
	wchar_t exe[MAX_PATH];
	wchar_t cmd[4096];
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	SECURITY_ATTRIBUTES sa;
	HANDLE in_read, in_write, out_read, out_write;
	TpChild *child;
	DWORD n;

	n = GetModuleFileNameW(NULL, exe, MAX_PATH);
	if (n == 0 || n >= MAX_PATH)
		return NULL;
	cmd[0] = L'\0';
	tp_append_arg(cmd, sizeof(cmd) / sizeof(cmd[0]), exe);
	for (size_t i = 0; args[i] != NULL; i++) {
		wchar_t *w = tp_wide(args[i]);

		if (w == NULL)
			return NULL;
		tp_append_arg(cmd, sizeof(cmd) / sizeof(cmd[0]), w);
		free(w);
	}
	memset(&sa, 0, sizeof(sa));
	sa.nLength = sizeof(sa);
	sa.bInheritHandle = TRUE;
	if (!CreatePipe(&in_read, &in_write, &sa, 0) || !CreatePipe(&out_read, &out_write, &sa, 0))
		return NULL;
	/* only the child's ends are inherited */
	SetHandleInformation(in_write, HANDLE_FLAG_INHERIT, 0);
	SetHandleInformation(out_read, HANDLE_FLAG_INHERIT, 0);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdInput = in_read;
	si.hStdOutput = out_write;
	si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
	if (!CreateProcessW(exe, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
		fprintf(stderr, "# CreateProcessW failed: error %lu\n", GetLastError());
		return NULL;
	}
	CloseHandle(pi.hThread);
	CloseHandle(in_read);
	CloseHandle(out_write);
	child = calloc(1, sizeof(*child));
	if (child == NULL) {
		TerminateProcess(pi.hProcess, TP_KILLED_EXIT_CODE);
		CloseHandle(pi.hProcess);
		return NULL;
	}
	child->process = pi.hProcess;
	child->pid = pi.dwProcessId;
	child->to_child = in_write;
	child->from_child = out_read;
	return child;
}

int64_t
tp_child_pid(const TpChild *child)
{
	return (int64_t)child->pid;
}

int
tp_child_read(TpChild *child)
{
	unsigned char byte;
	DWORD got = 0;

	if (!ReadFile(child->from_child, &byte, 1, &got, NULL) || got != 1)
		return -1;
	return byte;
}

void
tp_tell_parent(char byte)
{
	DWORD done = 0;

	WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), &byte, 1, &done, NULL);
}

void
tp_wait_for_parent(void)
{
	char byte;
	DWORD got = 0;

	/* until the pipe breaks: the parent closed it or died */
	while (ReadFile(GetStdHandle(STD_INPUT_HANDLE), &byte, 1, &got, NULL) && got != 0)
		;
}

bool
tp_child_wait_exited(TpChild *child)
{
	/* the handle stays open, so the process object (and its id) outlive the exit */
	return WaitForSingleObject(child->process, INFINITE) == WAIT_OBJECT_0;
}

bool
tp_child_kill(TpChild *child)
{
	return TerminateProcess(child->process, TP_KILLED_EXIT_CODE) != 0;
}

int
tp_child_wait(TpChild *child)
{
	DWORD code = 0;
	int result = -1;

	if (WaitForSingleObject(child->process, INFINITE) == WAIT_OBJECT_0 &&
	    GetExitCodeProcess(child->process, &code))
		result = (int)code;
	/* closing the last handle lets the process object (and its id) go */
	CloseHandle(child->process);
	CloseHandle(child->to_child);
	CloseHandle(child->from_child);
	free(child);
	return result;
}

char *
tp_make_temp_dir(void)
{
	static LONG counter;
	wchar_t base[MAX_PATH];
	wchar_t path[MAX_PATH + 64];
	DWORD n;

	n = GetTempPathW(MAX_PATH, base);
	if (n == 0 || n >= MAX_PATH)
		return NULL;
	for (int attempt = 0; attempt < 100; attempt++) {
		_snwprintf(path, sizeof(path) / sizeof(path[0]),
			   L"%lssfl-test-platform.%lu.%lu.%ld", base, GetCurrentProcessId(),
			   GetTickCount(), InterlockedIncrement(&counter));
		path[sizeof(path) / sizeof(path[0]) - 1] = L'\0';
		if (CreateDirectoryW(path, NULL))
			return tp_utf8(path);
		if (GetLastError() != ERROR_ALREADY_EXISTS)
			return NULL;
	}
	return NULL;
}

static bool
tp_remove_tree_w(const wchar_t *path)
{
	DWORD attrs = GetFileAttributesW(path);
	WIN32_FIND_DATAW fd;
	wchar_t pattern[MAX_PATH * 2];
	HANDLE find;
	bool ok = true;

	if (attrs == INVALID_FILE_ATTRIBUTES)
		return GetLastError() == ERROR_FILE_NOT_FOUND ||
		       GetLastError() == ERROR_PATH_NOT_FOUND;
	if (!(attrs & FILE_ATTRIBUTE_DIRECTORY)) {
		SetFileAttributesW(path, FILE_ATTRIBUTE_NORMAL);
		return DeleteFileW(path) != 0;
	}
	_snwprintf(pattern, sizeof(pattern) / sizeof(pattern[0]), L"%ls\\*", path);
	pattern[sizeof(pattern) / sizeof(pattern[0]) - 1] = L'\0';
	find = FindFirstFileW(pattern, &fd);
	if (find != INVALID_HANDLE_VALUE) {
		do {
			wchar_t child[MAX_PATH * 2];

			if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
				continue;
			_snwprintf(child, sizeof(child) / sizeof(child[0]), L"%ls\\%ls", path,
				   fd.cFileName);
			child[sizeof(child) / sizeof(child[0]) - 1] = L'\0';
			ok = tp_remove_tree_w(child) && ok;
		} while (FindNextFileW(find, &fd));
		FindClose(find);
	}
	return RemoveDirectoryW(path) != 0 && ok;
}

bool
tp_remove_tree(const char *path)
{
	wchar_t *w = tp_wide(path);
	bool ok;

	if (w == NULL)
		return false;
	ok = tp_remove_tree_w(w);
	free(w);
	return ok;
}

bool
tp_make_dir(const char *path)
{
	wchar_t *w = tp_wide(path);
	bool ok;

	if (w == NULL)
		return false;
	ok = CreateDirectoryW(w, NULL) != 0;
	free(w);
	return ok;
}

bool
tp_exists(const char *path)
{
	wchar_t *w = tp_wide(path);
	bool ok;

	if (w == NULL)
		return false;
	ok = GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES;
	free(w);
	return ok;
}

int
tp_count_entries(const char *dir, const char *substring)
{
	wchar_t *w = tp_wide(dir);
	wchar_t pattern[MAX_PATH * 2];
	WIN32_FIND_DATAW fd;
	HANDLE find;
	int count = 0;

	if (w == NULL)
		return -1;
	_snwprintf(pattern, sizeof(pattern) / sizeof(pattern[0]), L"%ls\\*", w);
	pattern[sizeof(pattern) / sizeof(pattern[0]) - 1] = L'\0';
	free(w);
	find = FindFirstFileW(pattern, &fd);
	if (find == INVALID_HANDLE_VALUE)
		return -1;
	do {
		char *name;

		if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
			continue;
		name = tp_utf8(fd.cFileName);
		if (name != NULL && strstr(name, substring) != NULL)
			count++;
		free(name);
	} while (FindNextFileW(find, &fd));
	FindClose(find);
	return count;
}

int
tp_file_mode(const char *path)
{
	(void)path;
	return -1;
}

static bool
tp_running_under_wine(void)
{
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");

	return ntdll != NULL && GetProcAddress(ntdll, "wine_get_version") != NULL;
}

void
tp_restore_privileges(void)
{
	/* nothing to restore: the Windows helper changes the file's ACL, not the caller */
}

bool
tp_make_unreadable(const char *path, const char **skip_reason)
{
	SECURITY_DESCRIPTOR sd;
	/* an ACL without entries: with a protected DACL, nobody is granted anything */
	union {
		ACL acl;
		char room[64];
	} empty;
	wchar_t *w;
	bool ok;

	if (tp_running_under_wine()) {
		*skip_reason = "wine does not enforce file ACLs";
		return false;
	}
	if (!InitializeSecurityDescriptor(&sd, SECURITY_DESCRIPTOR_REVISION) ||
	    !InitializeAcl(&empty.acl, sizeof(empty), ACL_REVISION) ||
	    !SetSecurityDescriptorDacl(&sd, TRUE, &empty.acl, FALSE) ||
	    !SetSecurityDescriptorControl(&sd, SE_DACL_PROTECTED, SE_DACL_PROTECTED)) {
		*skip_reason = "cannot build an empty DACL";
		return false;
	}
	w = tp_wide(path);
	if (w == NULL) {
		*skip_reason = "bad path";
		return false;
	}
	ok = SetFileSecurityW(w, DACL_SECURITY_INFORMATION, &sd) != 0;
	free(w);
	if (!ok)
		*skip_reason = "SetFileSecurityW failed";
	return ok;
}

bool
tp_set_env(const char *name, const char *value)
{
	return _putenv_s(name, value != NULL ? value : "") == 0;
}
