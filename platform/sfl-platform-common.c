/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "sfl-platform-private.h"

#ifdef _WIN32
#include <windows.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SflPlatformStatus
sfl_platform_error_vset(SflPlatformError *error, SflPlatformStatus status, int os_code,
			bool access_denied, const char *fmt, va_list ap)
{
	if (error == NULL)
		return status;
	error->status = status;
	error->os_code = os_code;
	error->access_denied = access_denied;
	vsnprintf(error->message, sizeof(error->message), fmt, ap);
	return status;
}

SflPlatformStatus
sfl_platform_error_set(SflPlatformError *error, SflPlatformStatus status, int os_code,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	status = sfl_platform_error_vset(error, status, os_code, false, fmt, ap);
	va_end(ap);
	return status;
}

/* a hostname goes into file names: keep it to characters every file system accepts */
void
sfl_platform_sanitize_hostname(char *buf)
{
	for (char *p = buf; *p != '\0'; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.'))
			*p = '_';
	}
}

static bool
sfl_platform_host_equal(const char *a, size_t a_len, const char *b, bool ignore_case)
{
	if (a_len != strlen(b))
		return false;
	for (size_t i = 0; i < a_len; i++) {
		char x = a[i];
		char y = b[i];
		if (ignore_case) {
			x = (char)tolower((unsigned char)x);
			y = (char)tolower((unsigned char)y);
		}
		if (x != y)
			return false;
	}
	return true;
}

/*
 * Parses "<host>.<pid>.<random>" (the part of a temp name after the marker), from the right
 * so dotted hostnames work. Returns true and fills @pid when the host part is @host (Windows
 * host names compare case-insensitively).
 */
bool
sfl_platform_parse_temp_suffix(const char *rest, const char *host, bool ignore_case, int64_t *pid)
{
	const char *last = strrchr(rest, '.');
	const char *dot;
	int64_t value = 0;

	if (last == NULL || last == rest || last[1] == '\0')
		return false;
	dot = last - 1;
	while (dot > rest && *dot != '.')
		dot--;
	if (*dot != '.' || dot + 1 == last)
		return false;
	if (!sfl_platform_host_equal(rest, (size_t)(dot - rest), host, ignore_case))
		return false;
	for (const char *p = dot + 1; p < last; p++) {
		if (*p < '0' || *p > '9' || value > (INT64_MAX - 9) / 10)
			return false;
		value = value * 10 + (*p - '0');
	}
	*pid = value;
	return true;
}

/* the lock file's "<pid> <hostname>\n", as the holder wrote it; @text is modified */
bool
sfl_platform_parse_holder(char *text, int64_t *pid, char *host, size_t host_len)
{
	char *end;
	char *nl = strchr(text, '\n');
	long long value;

	if (nl == NULL)
		return false;
	*nl = '\0';
	errno = 0;
	value = strtoll(text, &end, 10);
	if (errno != 0 || end == text || value <= 0 || value == LLONG_MAX || *end != ' ' ||
	    end[1] == '\0')
		return false;
	*pid = value;
	snprintf(host, host_len, "%s", end + 1);
	return true;
}

/*
 * A lock call's failure: either the file system cannot lock at all (NFS without lockd answers
 * ENOLCK; some FUSE and SMB mounts EOPNOTSUPP or ENOSYS, Windows redirectors
 * ERROR_NOT_SUPPORTED or ERROR_INVALID_FUNCTION), which asking again will not change, or any
 * other I/O error.
 */
SflPlatformStatus
sfl_platform_lock_failure_status(int os_code)
{
#ifdef _WIN32
	if (os_code == (int)ERROR_NOT_SUPPORTED || os_code == (int)ERROR_INVALID_FUNCTION)
		return SFL_PLATFORM_ERR_UNSUPPORTED;
#else
	if (os_code == ENOLCK || os_code == EOPNOTSUPP || os_code == ENOSYS)
		return SFL_PLATFORM_ERR_UNSUPPORTED;
#ifdef ENOTSUP
	if (os_code == ENOTSUP)
		return SFL_PLATFORM_ERR_UNSUPPORTED;
#endif
#endif
	return SFL_PLATFORM_ERR_IO;
}
