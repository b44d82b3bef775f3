/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

/*
 * Pure helpers both OS halves share (platform/sfl-platform-common.c), so the temp-file and
 * lock-file formats cannot drift between POSIX and Windows. Not for use outside platform/.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sfl-platform.h"

/* what makes a temp file recognisable as ours: ".<basename>.sfl-tmp.<host>.<pid>.<random>" */
#define SFL_TMP_MARKER ".sfl-tmp."

#if defined(__GNUC__) || defined(__clang__)
#define SFL_PLATFORM_VPRINTF(fmt_idx) __attribute__((format(printf, fmt_idx, 0)))
#else
#define SFL_PLATFORM_VPRINTF(fmt_idx)
#endif

SflPlatformStatus
sfl_platform_error_vset(SflPlatformError *error, SflPlatformStatus status, int os_code,
			bool access_denied, const char *fmt, va_list ap) SFL_PLATFORM_VPRINTF(5);
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
SflPlatformStatus
sfl_platform_error_set(SflPlatformError *error, SflPlatformStatus status, int os_code,
		       const char *fmt, ...);
void sfl_platform_sanitize_hostname(char *buf);
bool
sfl_platform_parse_temp_suffix(const char *rest, const char *host, bool ignore_case, int64_t *pid);
bool sfl_platform_parse_holder(char *text, int64_t *pid, char *host, size_t host_len);

/* SFL_PLATFORM_ERR_UNSUPPORTED when the OS code of a failed lock call says the file system
 * cannot lock at all, else SFL_PLATFORM_ERR_IO */
SflPlatformStatus sfl_platform_lock_failure_status(int os_code);
