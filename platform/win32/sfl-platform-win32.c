/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The Windows half of sfl-platform.h (files, lock files, clocks, identity, default
 * directories), built with mingw-w64. The service-manager functions live in sfl-scm.c. Paths
 * arrive as UTF-8 and are converted to UTF-16 for the W APIs; the ANSI code page is never
 * involved.
 */

/* GetSystemTimePreciseAsFileTime needs Windows 8 */
#if !defined(_WIN32_WINNT) || _WIN32_WINNT < 0x0602
#undef _WIN32_WINNT
#define _WIN32_WINNT 0x0602
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <knownfolders.h>
#include <shlobj.h>

#include "sfl-platform.h"
#include "sfl-platform-private.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* DNS hostnames are at most 255 bytes; UTF-8 of a NetBIOS fallback fits as well */
#define SFL_HOSTNAME_MAX 256

/* a holder's "pid hostname\n" line is short; anything longer is not ours */
#define SFL_LOCK_TEXT_MAX 320

/*
 * The locked byte lies far beyond the pid text: Windows locks are mandatory, so locking the
 * text itself would stop a refused caller from reading who holds the lock.
 */
#define SFL_LOCK_OFFSET 0x7fffffffUL

/* MoveFileExW is retried while scanners or indexers briefly hold the target: 20 x 50 ms */
#define SFL_MOVE_ATTEMPTS 20
#define SFL_MOVE_PAUSE_MS 50

/* FILETIME counts 100 ns ticks from 1601-01-01; this many lie before 1970-01-01 */
#define SFL_FILETIME_UNIX_EPOCH 116444736000000000LL

struct SflPlatformLock {
	HANDLE handle;
};

/* --- errors ------------------------------------------------------------------------------ */

/* the system's text for @code in UTF-8, without the trailing period and line break */
static void
sfl_win_strerror(DWORD code, char *buf, size_t len)
{
	wchar_t wbuf[256];
	DWORD n;
	int m;

	n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code,
			   0, wbuf, sizeof(wbuf) / sizeof(wbuf[0]), NULL);
	while (n > 0 && (wbuf[n - 1] == L'\r' || wbuf[n - 1] == L'\n' || wbuf[n - 1] == L' ' ||
			 wbuf[n - 1] == L'.'))
		n--;
	if (n == 0) {
		snprintf(buf, len, "error %lu", (unsigned long)code);
		return;
	}
	m = WideCharToMultiByte(CP_UTF8, 0, wbuf, (int)n, buf, (int)len - 1, NULL, NULL);
	if (m <= 0) {
		snprintf(buf, len, "error %lu", (unsigned long)code);
		return;
	}
	buf[m] = '\0';
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(gnu_printf, 4, 5)))
#endif
static SflPlatformStatus
sfl_set_error(SflPlatformError *error, SflPlatformStatus status, int os_code, const char *fmt, ...)
{
	va_list ap;
	SflPlatformStatus result;

	va_start(ap, fmt);
	result = sfl_platform_error_vset(error, status, os_code, os_code == ERROR_ACCESS_DENIED,
					 fmt, ap);
	va_end(ap);
	return result;
}

/* "cannot <verb> <path>: <system text>" */
static SflPlatformStatus
sfl_set_win_as(SflPlatformError *error, SflPlatformStatus status, DWORD code, const char *verb,
	       const char *path)
{
	char buf[512];

	sfl_win_strerror(code, buf, sizeof(buf));
	return sfl_set_error(error, status, (int)code, "cannot %s %s: %s", verb, path, buf);
}

static bool
sfl_win_is_not_found(DWORD code)
{
	/* ERROR_PATH_NOT_FOUND covers a missing directory and a file used as one */
	return code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND;
}

/* as above, with the status derived from the code */
static SflPlatformStatus
sfl_set_win(SflPlatformError *error, DWORD code, const char *verb, const char *path)
{
	return sfl_set_win_as(error,
			      sfl_win_is_not_found(code) ? SFL_PLATFORM_ERR_NOT_FOUND
							 : SFL_PLATFORM_ERR_IO,
			      code, verb, path);
}

/* --- strings ----------------------------------------------------------------------------- */

/* UTF-8 to a malloc()ed UTF-16 string; NULL (with the last error set) when invalid */
static wchar_t *
sfl_wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0)
		return NULL;
	w = malloc((size_t)n * sizeof(wchar_t));
	if (w == NULL) {
		SetLastError(ERROR_NOT_ENOUGH_MEMORY);
		return NULL;
	}
	if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) <= 0) {
		free(w);
		return NULL;
	}
	return w;
}

/* UTF-16 to UTF-8 into @buf; false when it does not fit */
static bool
sfl_utf8_into(const wchar_t *w, char *buf, size_t len)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);

	if (n <= 0 || (size_t)n > len)
		return false;
	return WideCharToMultiByte(CP_UTF8, 0, w, -1, buf, n, NULL, NULL) > 0;
}

/* the DNS hostname in UTF-8; false with the last error set */
static bool
sfl_raw_hostname(char *buf, size_t len)
{
	wchar_t w[SFL_HOSTNAME_MAX];
	DWORD size = sizeof(w) / sizeof(w[0]);

	if (!GetComputerNameExW(ComputerNameDnsHostname, w, &size))
		return false;
	if (size == 0) {
		SetLastError(ERROR_INVALID_DATA);
		return false;
	}
	if (!sfl_utf8_into(w, buf, len)) {
		SetLastError(ERROR_INSUFFICIENT_BUFFER);
		return false;
	}
	return true;
}

/*
 * The hostname as it appears in temp file names: bytes that are not safe in a file name (or
 * that would make the name ambiguous to parse) become '_'. Same rule as on POSIX, so replicas
 * on different OSes sharing a directory recognise each other's temps as foreign.
 */
static void
sfl_file_hostname(char *buf, size_t len)
{
	if (!sfl_raw_hostname(buf, len) || buf[0] == '\0')
		snprintf(buf, len, "localhost");
	sfl_platform_sanitize_hostname(buf);
}

/* a fresh 64-bit value per call: only needs to differ between attempts, CREATE_NEW does the rest */
static uint64_t
sfl_random64(void)
{
	static volatile LONG64 counter;
	LARGE_INTEGER qpc;
	uint64_t x;

	QueryPerformanceCounter(&qpc);
	x = (uint64_t)qpc.QuadPart ^ ((uint64_t)GetCurrentProcessId() << 32) ^
	    ((uint64_t)InterlockedIncrement64(&counter) * 0x9e3779b97f4a7c15ULL);
	/* splitmix64 finaliser spreads the bits so names do not look sequential */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * The length of the directory prefix of @path including its separator ("" when there is none),
 * so that prefix + name is a sibling of @path. Both separators count, and so does the colon of
 * a drive-relative "C:name".
 */
static size_t
sfl_dir_prefix_len(const char *path)
{
	size_t prefix = 0;

	for (size_t i = 0; path[i] != '\0'; i++) {
		if (path[i] == '/' || path[i] == '\\' || (i == 1 && path[i] == ':'))
			prefix = i + 1;
	}
	return prefix;
}

/*
 * Parses "<host>.<pid>.<random>" (the part of a temp name after the marker). Returns true and
 * fills @pid when the host part equals @host exactly (hostnames compare case-insensitively).
 */
static bool
sfl_parse_temp_suffix(const char *rest, const char *host, int64_t *pid)
{
	return sfl_platform_parse_temp_suffix(rest, host, true, pid);
}

/* builds "<prefix><name>" as a malloc()ed UTF-16 path */
static wchar_t *
sfl_wide_join(const char *path, size_t prefix_len, const char *name)
{
	size_t name_len = strlen(name);
	char *joined = malloc(prefix_len + name_len + 1);
	wchar_t *w;

	if (joined == NULL) {
		SetLastError(ERROR_NOT_ENOUGH_MEMORY);
		return NULL;
	}
	memcpy(joined, path, prefix_len);
	memcpy(joined + prefix_len, name, name_len + 1);
	w = sfl_wide(joined);
	free(joined);
	return w;
}

/*
 * Removes temp files for the same target left by processes of this host that no longer run.
 * Other hosts' temps are never touched: the directory may be shared, and their pids mean
 * nothing here. Best effort: a failure only means a stale file stays a little longer.
 */
static void
sfl_remove_stale_temps(const char *path, size_t prefix_len, const char *base, const char *host)
{
	int64_t self = (int64_t)GetCurrentProcessId();
	size_t base_len = strlen(base);
	size_t marker_len = strlen(SFL_TMP_MARKER);
	WIN32_FIND_DATAW fd;
	char pattern_name[MAX_PATH * 4];
	wchar_t *pattern;
	HANDLE find;

	snprintf(pattern_name, sizeof(pattern_name), ".%s%s*", base, SFL_TMP_MARKER);
	pattern = sfl_wide_join(path, prefix_len, pattern_name);
	if (pattern == NULL)
		return;
	find = FindFirstFileW(pattern, &fd);
	free(pattern);
	if (find == INVALID_HANDLE_VALUE)
		return;
	do {
		char name[MAX_PATH * 4];
		int64_t pid;
		wchar_t *victim;

		/* the wildcard may also match 8.3 short names: check the real name again */
		if (!sfl_utf8_into(fd.cFileName, name, sizeof(name)) || name[0] != '.' ||
		    _strnicmp(name + 1, base, base_len) != 0 ||
		    strncmp(name + 1 + base_len, SFL_TMP_MARKER, marker_len) != 0)
			continue;
		if (!sfl_parse_temp_suffix(name + 1 + base_len + marker_len, host, &pid))
			continue;
		/* our own pid may be another thread replacing the same file right now */
		if (pid == self || sfl_platform_pid_alive(pid))
			continue;
		victim = sfl_wide_join(path, prefix_len, name);
		if (victim != NULL)
			DeleteFileW(victim);
		free(victim);
	} while (FindNextFileW(find, &fd));
	FindClose(find);
}

/* --- files ------------------------------------------------------------------------------- */

static bool
sfl_write_all(HANDLE h, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		/* WriteFile takes a DWORD: write big buffers in 1 GiB slices */
		DWORD chunk = len > 0x40000000 ? 0x40000000 : (DWORD)len;
		DWORD written = 0;

		if (!WriteFile(h, p, chunk, &written, NULL))
			return false;
		if (written == 0) {
			SetLastError(ERROR_DISK_FULL);
			return false;
		}
		p += written;
		len -= written;
	}
	return true;
}

/* creates the temp file exclusively; returns the handle and the malloc()ed UTF-16 name */
static HANDLE
sfl_create_temp(const char *path, size_t prefix_len, const char *base, const char *host,
		wchar_t **out_tmp)
{
	DWORD saved = ERROR_FILE_EXISTS;

	/* a collision needs the same host, pid and random value: retrying a few times is plenty */
	for (int attempt = 0; attempt < 16; attempt++) {
		char name[MAX_PATH * 4];
		wchar_t *tmp;
		HANDLE h;

		snprintf(name, sizeof(name), ".%s%s%s.%" PRId64 ".%016" PRIx64, base,
			 SFL_TMP_MARKER, host, (int64_t)GetCurrentProcessId(), sfl_random64());
		tmp = sfl_wide_join(path, prefix_len, name);
		if (tmp == NULL)
			return INVALID_HANDLE_VALUE;
		/* not FILE_ATTRIBUTE_TEMPORARY: that asks the cache to keep it off the disk */
		h = CreateFileW(tmp, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL,
				NULL);
		if (h != INVALID_HANDLE_VALUE) {
			*out_tmp = tmp;
			return h;
		}
		saved = GetLastError();
		free(tmp);
		if (saved != ERROR_FILE_EXISTS && saved != ERROR_ALREADY_EXISTS)
			break;
	}
	SetLastError(saved);
	return INVALID_HANDLE_VALUE;
}

/* MoveFileExW, waiting out the short-lived opens of scanners and indexers */
static bool
sfl_move_replace(const wchar_t *from, const wchar_t *to)
{
	for (int attempt = 0;; attempt++) {
		DWORD code;

		if (MoveFileExW(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
			return true;
		code = GetLastError();
		if ((code != ERROR_SHARING_VIOLATION && code != ERROR_ACCESS_DENIED) ||
		    attempt + 1 >= SFL_MOVE_ATTEMPTS)
			return false;
		Sleep(SFL_MOVE_PAUSE_MS);
		SetLastError(code);
	}
}

SflPlatformStatus
sfl_platform_replace_file(const char *path, const void *data, size_t len, SflPlatformError *error)
{
	return sfl_platform_replace_file_gated(path, data, len, NULL, NULL, error);
}

SflPlatformStatus
sfl_platform_replace_file_gated(const char *path, const void *data, size_t len,
				SflPlatformReplaceGate gate, void *user_data,
				SflPlatformError *error)
{
	char host[SFL_HOSTNAME_MAX];
	size_t prefix_len;
	const char *base;
	wchar_t *wpath = NULL;
	wchar_t *tmp = NULL;
	SflPlatformStatus status = SFL_PLATFORM_OK;
	HANDLE h;
	DWORD code;

	if (path == NULL || path[0] == '\0' || (data == NULL && len > 0))
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot replace a file: invalid arguments");
	prefix_len = sfl_dir_prefix_len(path);
	base = path + prefix_len;
	if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot replace %s: not a file name", path);
	wpath = sfl_wide(path);
	if (wpath == NULL)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, (int)GetLastError(),
				     "cannot replace %s: the path is not valid UTF-8", path);

	sfl_file_hostname(host, sizeof(host));
	sfl_remove_stale_temps(path, prefix_len, base, host);

	h = sfl_create_temp(path, prefix_len, base, host, &tmp);
	if (h == INVALID_HANDLE_VALUE) {
		status = sfl_set_win(error, GetLastError(), "replace", path);
		goto out;
	}
	if (!sfl_write_all(h, data, len) || !FlushFileBuffers(h)) {
		code = GetLastError();
		CloseHandle(h);
		goto fail;
	}
	if (!CloseHandle(h)) {
		code = GetLastError();
		goto fail;
	}
	if (gate != NULL && !gate(user_data)) {
		DeleteFileW(tmp);
		status = sfl_set_error(error, SFL_PLATFORM_ERR_ABANDONED, 0,
				       "the replace of %s was abandoned before its rename", path);
		goto out;
	}
	/* MOVEFILE_WRITE_THROUGH returns once the rename is on disk: no directory flush needed */
	if (!sfl_move_replace(tmp, wpath)) {
		code = GetLastError();
		goto fail;
	}
	goto out;

fail:
	DeleteFileW(tmp);
	/* MoveFileExW answers a directory in the way with ERROR_ACCESS_DENIED: that is what POSIX
	 * calls EISDIR, an I/O error, not a permission the operator could grant */
	if (code == ERROR_ACCESS_DENIED) {
		DWORD attrs = GetFileAttributesW(wpath);

		if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY) != 0) {
			status = sfl_set_error(error, SFL_PLATFORM_ERR_IO, ERROR_DIRECTORY,
					       "cannot replace %s: it is a directory", path);
			goto out;
		}
	}
	status = sfl_set_win(error, code, "replace", path);
out:
	free(tmp);
	free(wpath);
	return status;
}

SflPlatformStatus
sfl_platform_read_file(const char *path, size_t max_len, char **out_data, size_t *out_len,
		       SflPlatformError *error)
{
	/* the buffer never needs more than max_len + 1 bytes: one extra proves "too large" */
	size_t limit = max_len < SIZE_MAX - 1 ? max_len + 1 : SIZE_MAX - 1;
	BY_HANDLE_FILE_INFORMATION info;
	LARGE_INTEGER size;
	size_t cap;
	size_t used = 0;
	wchar_t *wpath;
	char *buf;
	HANDLE h;
	DWORD code;

	if (out_data != NULL)
		*out_data = NULL;
	if (out_len != NULL)
		*out_len = 0;
	if (path == NULL || path[0] == '\0' || out_data == NULL)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot read a file: invalid arguments");
	wpath = sfl_wide(path);
	if (wpath == NULL)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, (int)GetLastError(),
				     "cannot read %s: the path is not valid UTF-8", path);

	/* FILE_SHARE_DELETE: a reader must not make a concurrent replace fail */
	h = CreateFileW(wpath, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
			NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		DWORD attrs;

		code = GetLastError();
		/* opening a directory fails with "access denied": say what it really is */
		attrs = GetFileAttributesW(wpath);
		free(wpath);
		if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY))
			return sfl_set_error(error, SFL_PLATFORM_ERR_IO, (int)code,
					     "cannot read %s: it is a directory", path);
		return sfl_set_win(error, code, "read", path);
	}
	free(wpath);
	if (GetFileInformationByHandle(h, &info) &&
	    (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
		CloseHandle(h);
		return sfl_set_error(error, SFL_PLATFORM_ERR_IO, ERROR_ACCESS_DENIED,
				     "cannot read %s: it is a directory", path);
	}
	if (!GetFileSizeEx(h, &size)) {
		code = GetLastError();
		CloseHandle(h);
		return sfl_set_win_as(error, SFL_PLATFORM_ERR_IO, code, "read", path);
	}
	if ((uint64_t)size.QuadPart > (uint64_t)max_len) {
		CloseHandle(h);
		return sfl_set_error(error, SFL_PLATFORM_ERR_TOO_LARGE, 0,
				     "cannot read %s: %" PRId64
				     " bytes, larger than the limit of %zu",
				     path, (int64_t)size.QuadPart, max_len);
	}

	/* the size is only a hint (the file may grow): read until end of file */
	cap = size.QuadPart > 0 ? (size_t)size.QuadPart + 1 : 4096;
	if (cap > limit)
		cap = limit;
	buf = malloc(cap + 1);
	if (buf == NULL) {
		CloseHandle(h);
		return sfl_set_win_as(error, SFL_PLATFORM_ERR_IO, ERROR_NOT_ENOUGH_MEMORY, "read",
				      path);
	}
	for (;;) {
		DWORD want;
		DWORD got = 0;

		if (used == cap) {
			size_t new_cap = cap < limit / 2 ? cap * 2 : limit;
			char *grown;

			if (cap >= limit)
				break;
			grown = realloc(buf, new_cap + 1);
			if (grown == NULL) {
				free(buf);
				CloseHandle(h);
				return sfl_set_win_as(error, SFL_PLATFORM_ERR_IO,
						      ERROR_NOT_ENOUGH_MEMORY, "read", path);
			}
			buf = grown;
			cap = new_cap;
		}
		want = cap - used > 0x40000000 ? 0x40000000 : (DWORD)(cap - used);
		if (!ReadFile(h, buf + used, want, &got, NULL)) {
			code = GetLastError();
			free(buf);
			CloseHandle(h);
			/* a read error on an open file is never "absent" */
			return sfl_set_win_as(error, SFL_PLATFORM_ERR_IO, code, "read", path);
		}
		if (got == 0)
			break;
		used += got;
	}
	CloseHandle(h);
	if (used > max_len) {
		free(buf);
		return sfl_set_error(error, SFL_PLATFORM_ERR_TOO_LARGE, 0,
				     "cannot read %s: larger than the limit of %zu bytes", path,
				     max_len);
	}
	buf[used] = '\0';
	*out_data = buf;
	if (out_len != NULL)
		*out_len = used;
	return SFL_PLATFORM_OK;
}

SflPlatformStatus
sfl_platform_remove_file(const char *path, SflPlatformError *error)
{
	wchar_t *wpath;
	DWORD code;

	if (path == NULL || path[0] == '\0')
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot remove a file: invalid arguments");
	wpath = sfl_wide(path);
	if (wpath == NULL)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, (int)GetLastError(),
				     "cannot remove %s: the path is not valid UTF-8", path);
	if (DeleteFileW(wpath)) {
		free(wpath);
		return SFL_PLATFORM_OK;
	}
	code = GetLastError();
	free(wpath);
	return sfl_set_win(error, code, "remove", path);
}

void
sfl_platform_free(void *ptr)
{
	free(ptr);
}

/* --- lock files -------------------------------------------------------------------------- */

/* reads the holder's "pid hostname\n"; false when it is missing or half-written */
static bool
sfl_read_holder(HANDLE h, int64_t *pid, char *host, size_t host_len)
{
	char text[SFL_LOCK_TEXT_MAX];
	OVERLAPPED ov;
	DWORD got = 0;

	memset(&ov, 0, sizeof(ov));
	if (!ReadFile(h, text, sizeof(text) - 1, &got, &ov) || got == 0)
		return false;
	text[got] = '\0';
	return sfl_platform_parse_holder(text, pid, host, host_len);
}

SflPlatformStatus
sfl_platform_lock_acquire(const char *path, SflPlatformLock **out_lock, int64_t *holder_pid,
			  SflPlatformError *error)
{
	char host[SFL_HOSTNAME_MAX];
	char text[SFL_LOCK_TEXT_MAX];
	SflPlatformLock *lock;
	OVERLAPPED ov;
	wchar_t *wpath;
	HANDLE h;
	DWORD code;
	int n;

	if (holder_pid != NULL)
		*holder_pid = 0;
	if (out_lock != NULL)
		*out_lock = NULL;
	if (path == NULL || path[0] == '\0' || out_lock == NULL)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot lock a file: invalid arguments");
	wpath = sfl_wide(path);
	if (wpath == NULL)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, (int)GetLastError(),
				     "cannot lock %s: the path is not valid UTF-8", path);

	/* share everything: exclusion comes from the byte-range lock, not from the open */
	h = CreateFileW(wpath, GENERIC_READ | GENERIC_WRITE,
			FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_ALWAYS,
			FILE_ATTRIBUTE_NORMAL, NULL);
	code = GetLastError();
	free(wpath);
	if (h == INVALID_HANDLE_VALUE)
		return sfl_set_win(error, code, "lock", path);

	memset(&ov, 0, sizeof(ov));
	ov.Offset = SFL_LOCK_OFFSET;
	if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) {
		int64_t pid = 0;

		code = GetLastError();
		if (code != ERROR_LOCK_VIOLATION) {
			CloseHandle(h);
			return sfl_set_win_as(error, sfl_platform_lock_failure_status((int)code),
					      code, "lock", path);
		}
		/* the holder may not have written its line yet: then it is simply unknown */
		if (sfl_read_holder(h, &pid, host, sizeof(host))) {
			if (holder_pid != NULL)
				*holder_pid = pid;
			sfl_set_error(error, SFL_PLATFORM_ERR_BUSY, (int)code,
				      "cannot lock %s: held by pid %" PRId64 " on host %s", path,
				      pid, host);
		} else {
			sfl_set_error(error, SFL_PLATFORM_ERR_BUSY, (int)code,
				      "cannot lock %s: held by another process", path);
		}
		CloseHandle(h);
		return SFL_PLATFORM_ERR_BUSY;
	}

	if (!sfl_raw_hostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "?");
	n = snprintf(text, sizeof(text), "%" PRId64 " %s\n", (int64_t)GetCurrentProcessId(), host);
	if (n < 0 || (size_t)n >= sizeof(text))
		n = snprintf(text, sizeof(text), "%" PRId64 " ?\n", (int64_t)GetCurrentProcessId());
	/* the text is what a refused caller reports, so a lock we cannot describe is refused */
	if (SetFilePointer(h, 0, NULL, FILE_BEGIN) == INVALID_SET_FILE_POINTER ||
	    !SetEndOfFile(h) || !sfl_write_all(h, text, (size_t)n) || !FlushFileBuffers(h)) {
		code = GetLastError();
		CloseHandle(h);
		return sfl_set_win_as(error, SFL_PLATFORM_ERR_IO, code, "write the lock file",
				      path);
	}

	lock = malloc(sizeof(*lock));
	if (lock == NULL) {
		CloseHandle(h);
		return sfl_set_win_as(error, SFL_PLATFORM_ERR_IO, ERROR_NOT_ENOUGH_MEMORY, "lock",
				      path);
	}
	lock->handle = h;
	*out_lock = lock;
	return SFL_PLATFORM_OK;
}

void
sfl_platform_lock_release(SflPlatformLock *lock)
{
	OVERLAPPED ov;

	if (lock == NULL)
		return;
	/* unlock explicitly: closing alone releases the range only "eventually" */
	memset(&ov, 0, sizeof(ov));
	ov.Offset = SFL_LOCK_OFFSET;
	UnlockFileEx(lock->handle, 0, 1, 0, &ov);
	/* the file stays: deleting it would let two processes lock two different files */
	CloseHandle(lock->handle);
	free(lock);
}

/* --- clocks ------------------------------------------------------------------------------ */

int64_t
sfl_platform_monotonic_ns(void)
{
	static volatile LONG64 frequency;
	LARGE_INTEGER counter;
	LONG64 freq = frequency;

	if (freq == 0) {
		LARGE_INTEGER f;

		/* constant since boot; caching it is only an optimisation, so races are harmless */
		QueryPerformanceFrequency(&f);
		freq = f.QuadPart;
		frequency = freq;
	}
	/* QueryPerformanceCounter keeps counting across sleep and hibernation */
	QueryPerformanceCounter(&counter);
	/* split to avoid overflowing counter * 1e9 */
	return (int64_t)(counter.QuadPart / freq) * 1000000000 +
	       (int64_t)(counter.QuadPart % freq) * 1000000000 / freq;
}

int64_t
sfl_platform_wall_ns(void)
{
	FILETIME ft;
	ULARGE_INTEGER ticks;

	GetSystemTimePreciseAsFileTime(&ft);
	ticks.LowPart = ft.dwLowDateTime;
	ticks.HighPart = ft.dwHighDateTime;
	return ((int64_t)ticks.QuadPart - SFL_FILETIME_UNIX_EPOCH) * 100;
}

/* --- identity and places ----------------------------------------------------------------- */

SflPlatformStatus
sfl_platform_hostname(char *buf, size_t len, SflPlatformError *error)
{
	char host[SFL_HOSTNAME_MAX * 3];
	char reason[512];
	size_t host_len;

	if (buf == NULL || len == 0)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot get the hostname: invalid arguments");
	buf[0] = '\0';
	if (!sfl_raw_hostname(host, sizeof(host))) {
		DWORD code = GetLastError();

		sfl_win_strerror(code, reason, sizeof(reason));
		return sfl_set_error(error, SFL_PLATFORM_ERR_IO, (int)code,
				     "cannot get the hostname: %s", reason);
	}
	host_len = strlen(host);
	if (host_len >= len)
		return sfl_set_error(error, SFL_PLATFORM_ERR_TOO_LARGE, 0,
				     "cannot get the hostname: %zu bytes do not fit in %zu",
				     host_len + 1, len);
	memcpy(buf, host, host_len + 1);
	return SFL_PLATFORM_OK;
}

int64_t
sfl_platform_pid(void)
{
	return (int64_t)GetCurrentProcessId();
}

bool
sfl_platform_pid_alive(int64_t pid)
{
	HANDLE h;
	DWORD code = 0;
	bool alive;

	if (pid <= 0 || pid > (int64_t)UINT32_MAX)
		return false;
	h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
	if (h == NULL)
		/* access denied: it exists, it just belongs to someone more privileged */
		return GetLastError() == ERROR_ACCESS_DENIED;
	/* a process that exited but whose handle someone still holds is gone */
	alive = GetExitCodeProcess(h, &code) && code == STILL_ACTIVE;
	CloseHandle(h);
	return alive;
}

SflPlatformStatus
sfl_platform_default_dir(SflPlatformDirKind kind, SflPlatformScope scope, char *buf, size_t len,
			 SflPlatformError *error)
{
	const char *suffix;
	wchar_t *folder = NULL;
	char base[MAX_PATH * 4];
	HRESULT hr;
	int n;

	if (buf == NULL || len == 0 ||
	    (kind != SFL_PLATFORM_DIR_STATE && kind != SFL_PLATFORM_DIR_CONFIG) ||
	    (scope != SFL_PLATFORM_SCOPE_SYSTEM && scope != SFL_PLATFORM_SCOPE_USER))
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot build the default directory: invalid arguments");
	buf[0] = '\0';

	/* known folders, never the working directory: services start in System32 */
	hr = SHGetKnownFolderPath(scope == SFL_PLATFORM_SCOPE_SYSTEM ? &FOLDERID_ProgramData
								     : &FOLDERID_LocalAppData,
				  0, NULL, &folder);
	if (FAILED(hr)) {
		char reason[512];

		CoTaskMemFree(folder);
		sfl_win_strerror((DWORD)hr, reason, sizeof(reason));
		return sfl_set_error(
			error, SFL_PLATFORM_ERR_IO, (int)hr, "cannot find the %s folder: %s",
			scope == SFL_PLATFORM_SCOPE_SYSTEM ? "ProgramData" : "LocalAppData",
			reason);
	}
	if (!sfl_utf8_into(folder, base, sizeof(base))) {
		CoTaskMemFree(folder);
		return sfl_set_error(error, SFL_PLATFORM_ERR_TOO_LARGE, 0,
				     "cannot build the default directory: the folder path is too "
				     "long");
	}
	CoTaskMemFree(folder);

	/*
	 * one folder for both, as docs/deployment/service.md promises: config.yaml and the state
	 * side by side under %ProgramData%\sf2loki (or %LOCALAPPDATA%\sf2loki for a user)
	 */
	(void)kind;
	suffix = "\\sf2loki";
	n = snprintf(buf, len, "%s%s", base, suffix);
	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return sfl_set_error(
			error, SFL_PLATFORM_ERR_TOO_LARGE, 0,
			"cannot build the default directory %s%s: longer than %zu bytes", base,
			suffix, len - 1);
	}
	return SFL_PLATFORM_OK;
}
