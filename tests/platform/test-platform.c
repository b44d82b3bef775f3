/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The contract suite for sfl-platform.h: one plain-C program built natively and with mingw-w64
 * (run under wine), so both halves of the platform layer answer to the same cases. Prints TAP.
 * Invoked with "child-..." arguments it plays the other process of a multi-process case.
 */

#include "sfl-platform-private.h"
#include "sfl-platform.h"
#include "test-platform-proc.h"

#ifdef _WIN32
#include <windows.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* how long a multi-process case may wait for the other side before it fails */

/* child exit codes of the lock cases */
#define CHILD_BUSY_NAMED 10
#define CHILD_BUSY_WRONG 11
#define CHILD_GOT_LOCK	 12
#define CHILD_FAILED	 13

typedef enum {
	TP_PASS,
	TP_FAIL,
	TP_SKIP,
} TpResult;

/* the scratch directory of the running case, and the skip reason it may set */
static char *tp_dir;
static const char *tp_skip_reason;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static void
tp_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/* evaluates @cond; on failure reports where and makes the case fail */
#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			tp_diag("%s:%d: check failed: %s", __FILE__, __LINE__, #cond);             \
			return TP_FAIL;                                                            \
		}                                                                                  \
	} while (0)

/* as CHECK, for a status, also printing the error message */
#define CHECK_STATUS(status, expected, err)                                                        \
	do {                                                                                       \
		SflPlatformStatus s_ = (status);                                                   \
		if (s_ != (expected)) {                                                            \
			tp_diag("%s:%d: status %d, expected %d (%s): %s", __FILE__, __LINE__,      \
				(int)s_, (int)(expected), #expected,                               \
				s_ != SFL_PLATFORM_OK ? (err).message : "");                       \
			return TP_FAIL;                                                            \
		}                                                                                  \
	} while (0)

static TpResult
tp_skip(const char *reason)
{
	tp_skip_reason = reason;
	return TP_SKIP;
}

/* "<tp_dir><sep><name>" in a static rotation of buffers, so a case can hold a few at once */
static const char *
tp_path(const char *name)
{
	static char bufs[8][1024];
	static int next;
	char *buf = bufs[next++ % 8];

	snprintf(buf, sizeof(bufs[0]), "%s%s%s", tp_dir, TP_SEP, name);
	return buf;
}

static bool
tp_read_equals(const char *path, const char *expected, size_t expected_len)
{
	SflPlatformError err;
	char *data = NULL;
	size_t len = 0;
	bool same;

	if (sfl_platform_read_file(path, 1 << 20, &data, &len, &err) != SFL_PLATFORM_OK) {
		tp_diag("read %s: %s", path, err.message);
		return false;
	}
	same = len == expected_len && memcmp(data, expected, len) == 0 && data[len] == '\0';
	sfl_platform_free(data);
	return same;
}

/* the hostname as the implementations embed it in temp names (see sfl_file_hostname) */
static void
tp_file_hostname(char *buf, size_t len)
{
	SflPlatformError err;

	if (sfl_platform_hostname(buf, len, &err) != SFL_PLATFORM_OK)
		snprintf(buf, len, "localhost");
	for (char *p = buf; *p != '\0'; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.'))
			*p = '_';
	}
}

/* the pid of a child that ran and was reaped: certainly not alive */
static int64_t
tp_dead_pid(void)
{
	const char *args[] = { "child-exit", NULL };
	TpChild *child = tp_child_spawn(args);
	int64_t pid;

	if (child == NULL)
		return -1;
	pid = tp_child_pid(child);
	if (tp_child_wait(child) != 0)
		return -1;
	return pid;
}

/* --- replace ----------------------------------------------------------------------------- */

static TpResult
test_replace_existing(void)
{
	const char *path = tp_path("state.json");
	SflPlatformError err;

	CHECK_STATUS(sfl_platform_replace_file(path, "old contents, longer", 20, &err),
		     SFL_PLATFORM_OK, err);
	CHECK(tp_read_equals(path, "old contents, longer", 20));
	CHECK_STATUS(sfl_platform_replace_file(path, "new", 3, &err), SFL_PLATFORM_OK, err);
	CHECK(tp_read_equals(path, "new", 3));
	CHECK(tp_count_entries(tp_dir, ".sfl-tmp.") == 0);
	CHECK(tp_count_entries(tp_dir, "") == 1);
	/* empty contents are a version too */
	CHECK_STATUS(sfl_platform_replace_file(path, NULL, 0, &err), SFL_PLATFORM_OK, err);
	CHECK(tp_read_equals(path, "", 0));
	CHECK(tp_count_entries(tp_dir, "") == 1);
	return TP_PASS;
}

/* counts its calls; lets the replace land while *open is nonzero */
typedef struct {
	int open;
	int calls;
} TpGate;

static int
tp_gate(void *user_data)
{
	TpGate *gate = user_data;

	gate->calls++;
	return gate->open;
}

static TpResult
test_replace_gated(void)
{
	const char *path = tp_path("leader.lease");
	SflPlatformError err;
	TpGate gate = { 0, 0 };

	CHECK_STATUS(sfl_platform_replace_file(path, "epoch 2", 7, &err), SFL_PLATFORM_OK, err);
	/* a closed gate abandons the write after the temp file was written: nothing changes */
	CHECK_STATUS(sfl_platform_replace_file_gated(path, "epoch 1", 7, tp_gate, &gate, &err),
		     SFL_PLATFORM_ERR_ABANDONED, err);
	CHECK(gate.calls == 1);
	CHECK(strstr(err.message, "leader.lease") != NULL);
	CHECK(tp_read_equals(path, "epoch 2", 7));
	CHECK(tp_count_entries(tp_dir, ".sfl-tmp.") == 0);
	CHECK(tp_count_entries(tp_dir, "") == 1);
	/* an open gate lets it land, asked once */
	gate.open = 1;
	CHECK_STATUS(sfl_platform_replace_file_gated(path, "epoch 3", 7, tp_gate, &gate, &err),
		     SFL_PLATFORM_OK, err);
	CHECK(gate.calls == 2);
	CHECK(tp_read_equals(path, "epoch 3", 7));
	CHECK(tp_count_entries(tp_dir, ".sfl-tmp.") == 0);
	/* no gate: a plain replace */
	CHECK_STATUS(sfl_platform_replace_file_gated(path, "epoch 4", 7, NULL, NULL, &err),
		     SFL_PLATFORM_OK, err);
	CHECK(tp_read_equals(path, "epoch 4", 7));
	return TP_PASS;
}

static TpResult
test_replace_missing_dir(void)
{
	const char *missing = tp_path("missing");
	char path[1100];
	SflPlatformError err;

	snprintf(path, sizeof(path), "%s%sstate.json", missing, TP_SEP);
	CHECK_STATUS(sfl_platform_replace_file(path, "x", 1, &err), SFL_PLATFORM_ERR_NOT_FOUND,
		     err);
	CHECK(err.status == SFL_PLATFORM_ERR_NOT_FOUND);
	CHECK(err.os_code != 0);
	/* the message names the path and the reason */
	CHECK(strstr(err.message, path) != NULL);
	CHECK(strlen(err.message) > strlen(path) + 10);
	CHECK(!tp_exists(missing));
	CHECK(tp_count_entries(tp_dir, "") == 0);
	return TP_PASS;
}

static TpResult
test_replace_mode(void)
{
	const char *path = tp_path("secret");
	SflPlatformError err;
	int mode;

	CHECK_STATUS(sfl_platform_replace_file(path, "s", 1, &err), SFL_PLATFORM_OK, err);
	mode = tp_file_mode(path);
	if (mode < 0)
		return tp_skip("no POSIX permission bits on this OS");
	if (mode != 0600)
		tp_diag("mode %o", (unsigned)mode);
	CHECK(mode == 0600);
	return TP_PASS;
}

static TpResult
test_replace_stale_temps(void)
{
	const char *path = tp_path("state.json");
	char host[256];
	char name[512];
	const char *stale;
	const char *foreign;
	const char *own;
	int64_t dead;
	SflPlatformError err;

	tp_file_hostname(host, sizeof(host));
	dead = tp_dead_pid();
	CHECK(dead > 0);
	CHECK(!sfl_platform_pid_alive(dead));

	/* the stray files are created with the function under test: it makes any file */
	snprintf(name, sizeof(name), ".state.json.sfl-tmp.%s.%" PRId64 ".00000000deadbeef", host,
		 dead);
	stale = tp_path(name);
	CHECK_STATUS(sfl_platform_replace_file(stale, "half", 4, &err), SFL_PLATFORM_OK, err);
	/* another replica on a shared directory: its pids mean nothing here */
	snprintf(name, sizeof(name), ".state.json.sfl-tmp.%s-other.%" PRId64 ".00000000cafebabe",
		 host, dead);
	foreign = tp_path(name);
	CHECK_STATUS(sfl_platform_replace_file(foreign, "theirs", 6, &err), SFL_PLATFORM_OK, err);
	/* a live process of this host (here: ourselves) may be writing it right now */
	snprintf(name, sizeof(name), ".state.json.sfl-tmp.%s.%" PRId64 ".0000000012345678", host,
		 sfl_platform_pid());
	own = tp_path(name);
	CHECK_STATUS(sfl_platform_replace_file(own, "mine", 4, &err), SFL_PLATFORM_OK, err);
	CHECK(tp_count_entries(tp_dir, ".sfl-tmp.") == 3);

	CHECK_STATUS(sfl_platform_replace_file(path, "v1", 2, &err), SFL_PLATFORM_OK, err);
	CHECK(tp_read_equals(path, "v1", 2));
	CHECK(!tp_exists(stale));
	CHECK(tp_exists(foreign));
	CHECK(tp_exists(own));
	CHECK(tp_count_entries(tp_dir, ".sfl-tmp.") == 2);
	return TP_PASS;
}

/* --- read and remove --------------------------------------------------------------------- */

static TpResult
test_read_contents(void)
{
	/* binary data with an embedded NUL comes back whole, plus a terminator */
	static const char data[] = { 'a', '\0', 'b', '\n', (char)0xff };
	const char *path = tp_path("data.bin");
	SflPlatformError err;
	char *out = NULL;
	size_t len = 0;

	CHECK_STATUS(sfl_platform_replace_file(path, data, sizeof(data), &err), SFL_PLATFORM_OK,
		     err);
	CHECK_STATUS(sfl_platform_read_file(path, 100, &out, &len, &err), SFL_PLATFORM_OK, err);
	CHECK(out != NULL);
	CHECK(len == sizeof(data));
	CHECK(memcmp(out, data, len) == 0);
	CHECK(out[len] == '\0');
	sfl_platform_free(out);
	return TP_PASS;
}

static TpResult
test_read_not_found(void)
{
	const char *path = tp_path("absent.json");
	SflPlatformError err;
	char *out = (char *)"poison";
	size_t len = 7;

	CHECK_STATUS(sfl_platform_read_file(path, 100, &out, &len, &err),
		     SFL_PLATFORM_ERR_NOT_FOUND, err);
	CHECK(out == NULL);
	CHECK(len == 0);
	CHECK(strstr(err.message, path) != NULL);
	return TP_PASS;
}

static TpResult
test_read_missing_parent(void)
{
	char path[1100];
	SflPlatformError err;
	char *out = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s%sabsent.json", tp_path("no-such-dir"), TP_SEP);
	CHECK_STATUS(sfl_platform_read_file(path, 100, &out, &len, &err),
		     SFL_PLATFORM_ERR_NOT_FOUND, err);
	CHECK(out == NULL);
	return TP_PASS;
}

static TpResult
test_read_file_as_dir(void)
{
	char path[1100];
	SflPlatformError err;
	char *out = NULL;
	size_t len = 0;

	/* a file where a directory should be: the path cannot exist */
	CHECK_STATUS(sfl_platform_replace_file(tp_path("plain"), "x", 1, &err), SFL_PLATFORM_OK,
		     err);
	snprintf(path, sizeof(path), "%s%sstate.json", tp_path("plain"), TP_SEP);
	CHECK_STATUS(sfl_platform_read_file(path, 100, &out, &len, &err),
		     SFL_PLATFORM_ERR_NOT_FOUND, err);
	CHECK(out == NULL);
	return TP_PASS;
}

/* a directory where the file should be: an I/O error (EISDIR), not a denied permission */
static TpResult
test_replace_over_directory(void)
{
	const char *path = tp_path("a-directory");
	SflPlatformError err;

	CHECK(tp_make_dir(path));
	CHECK_STATUS(sfl_platform_replace_file(path, "x", 1, &err), SFL_PLATFORM_ERR_IO, err);
	CHECK(!err.access_denied);
	CHECK(strstr(err.message, path) != NULL);
	return TP_PASS;
}

static TpResult
test_read_directory(void)
{
	const char *path = tp_path("a-directory");
	SflPlatformError err;
	char *out = NULL;
	size_t len = 0;

	CHECK(tp_make_dir(path));
	CHECK_STATUS(sfl_platform_read_file(path, 100, &out, &len, &err), SFL_PLATFORM_ERR_IO, err);
	CHECK(out == NULL);
	CHECK(strstr(err.message, path) != NULL);
	CHECK(strstr(err.message, "directory") != NULL);
	return TP_PASS;
}

static TpResult
test_read_unreadable(void)
{
	const char *path = tp_path("unreadable");
	const char *reason = NULL;
	SflPlatformStatus status;
	SflPlatformError err;
	char *out = NULL;
	size_t len = 0;

	CHECK_STATUS(sfl_platform_replace_file(path, "secret", 6, &err), SFL_PLATFORM_OK, err);
	if (!tp_make_unreadable(path, &reason))
		return tp_skip(reason);
	status = sfl_platform_read_file(path, 100, &out, &len, &err);
	tp_restore_privileges();
	CHECK_STATUS(status, SFL_PLATFORM_ERR_IO, err);
	CHECK(out == NULL);
	CHECK(err.os_code != 0);
	CHECK(err.access_denied);
	CHECK(strstr(err.message, path) != NULL);
	return TP_PASS;
}

static TpResult
test_read_too_large(void)
{
	const char *path = tp_path("big");
	char data[100];
	SflPlatformError err;
	char *out = NULL;
	size_t len = 0;

	memset(data, 'x', sizeof(data));
	CHECK_STATUS(sfl_platform_replace_file(path, data, sizeof(data), &err), SFL_PLATFORM_OK,
		     err);
	CHECK_STATUS(sfl_platform_read_file(path, sizeof(data) - 1, &out, &len, &err),
		     SFL_PLATFORM_ERR_TOO_LARGE, err);
	CHECK(out == NULL);
	CHECK_STATUS(sfl_platform_read_file(path, sizeof(data), &out, &len, &err), SFL_PLATFORM_OK,
		     err);
	CHECK(len == sizeof(data));
	sfl_platform_free(out);
	return TP_PASS;
}

static TpResult
test_remove(void)
{
	const char *path = tp_path("doomed");
	SflPlatformError err;

	CHECK_STATUS(sfl_platform_replace_file(path, "x", 1, &err), SFL_PLATFORM_OK, err);
	CHECK_STATUS(sfl_platform_remove_file(path, &err), SFL_PLATFORM_OK, err);
	CHECK(!tp_exists(path));
	CHECK_STATUS(sfl_platform_remove_file(path, &err), SFL_PLATFORM_ERR_NOT_FOUND, err);
	return TP_PASS;
}

/* --- locks ------------------------------------------------------------------------------- */

static TpResult
test_lock_other_process(void)
{
	const char *path = tp_path("sf2loki.lock");
	char pid_text[32];
	const char *args[] = { "child-lock-try", path, pid_text, NULL };
	SflPlatformLock *lock = NULL;
	SflPlatformError err;
	char expected[64];
	TpChild *child;
	int code;

	CHECK_STATUS(sfl_platform_lock_acquire(path, &lock, NULL, &err), SFL_PLATFORM_OK, err);
	CHECK(lock != NULL);
	/* the file says who holds it */
	snprintf(expected, sizeof(expected), "%" PRId64 " ", sfl_platform_pid());
	{
		char *text = NULL;
		size_t len = 0;
		bool named;

		CHECK_STATUS(sfl_platform_read_file(path, 1024, &text, &len, &err), SFL_PLATFORM_OK,
			     err);
		named = strncmp(text, expected, strlen(expected)) == 0 && len > 0 &&
			text[len - 1] == '\n';
		if (!named)
			tp_diag("lock file holds \"%s\"", text);
		sfl_platform_free(text);
		if (!named) {
			sfl_platform_lock_release(lock);
			return TP_FAIL;
		}
	}

	snprintf(pid_text, sizeof(pid_text), "%" PRId64, sfl_platform_pid());
	child = tp_child_spawn(args);
	if (child == NULL) {
		sfl_platform_lock_release(lock);
		return TP_FAIL;
	}
	code = tp_child_wait(child);
	sfl_platform_lock_release(lock);
	if (code != CHILD_BUSY_NAMED)
		tp_diag("child exit code %d", code);
	CHECK(code == CHILD_BUSY_NAMED);
	return TP_PASS;
}

static TpResult
test_lock_same_process(void)
{
	const char *path = tp_path("sf2loki.lock");
	SflPlatformLock *first = NULL;
	SflPlatformLock *second = (SflPlatformLock *)&first;
	SflPlatformError err;
	int64_t holder = -1;
	SflPlatformStatus status;

	CHECK_STATUS(sfl_platform_lock_acquire(path, &first, &holder, &err), SFL_PLATFORM_OK, err);
	status = sfl_platform_lock_acquire(path, &second, &holder, &err);
	if (status == SFL_PLATFORM_OK)
		sfl_platform_lock_release(second);
	sfl_platform_lock_release(first);
	CHECK_STATUS(status, SFL_PLATFORM_ERR_BUSY, err);
	CHECK(second == NULL);
	CHECK(holder == sfl_platform_pid());
	CHECK(err.status == SFL_PLATFORM_ERR_BUSY);

	/* once released, it can be taken again */
	CHECK_STATUS(sfl_platform_lock_acquire(path, &first, &holder, &err), SFL_PLATFORM_OK, err);
	sfl_platform_lock_release(first);
	/* releasing keeps the file: unlinking a lock file races with the next holder */
	CHECK(tp_exists(path));
	sfl_platform_lock_release(NULL);
	return TP_PASS;
}

/* a file system that cannot lock (NFS without lockd) is told apart from other lock failures */
static TpResult
test_lock_unsupported_class(void)
{
#ifdef _WIN32
	CHECK(sfl_platform_lock_failure_status((int)ERROR_NOT_SUPPORTED) ==
	      SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK(sfl_platform_lock_failure_status((int)ERROR_INVALID_FUNCTION) ==
	      SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK(sfl_platform_lock_failure_status((int)ERROR_ACCESS_DENIED) == SFL_PLATFORM_ERR_IO);
	CHECK(sfl_platform_lock_failure_status((int)ERROR_LOCK_VIOLATION) == SFL_PLATFORM_ERR_IO);
#else
	CHECK(sfl_platform_lock_failure_status(ENOLCK) == SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK(sfl_platform_lock_failure_status(EOPNOTSUPP) == SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK(sfl_platform_lock_failure_status(ENOSYS) == SFL_PLATFORM_ERR_UNSUPPORTED);
	CHECK(sfl_platform_lock_failure_status(EACCES) == SFL_PLATFORM_ERR_IO);
	CHECK(sfl_platform_lock_failure_status(EIO) == SFL_PLATFORM_ERR_IO);
	CHECK(sfl_platform_lock_failure_status(EBADF) == SFL_PLATFORM_ERR_IO);
#endif
	return TP_PASS;
}

static TpResult
test_lock_holder_killed(void)
{
	const char *path = tp_path("sf2loki.lock");
	const char *args[] = { "child-lock-hold", path, NULL };
	SflPlatformLock *lock = NULL;
	SflPlatformError err;
	SflPlatformStatus status;
	int64_t holder = 0;
	int64_t child_pid;
	TpChild *child;
	int code;

	child = tp_child_spawn(args);
	CHECK(child != NULL);
	child_pid = tp_child_pid(child);
	/* blocks until the child reports the lock held (or its stdout closes) */
	if (tp_child_read(child) != 'R') {
		tp_child_kill(child);
		tp_child_wait(child);
		tp_diag("the child never signalled that it holds the lock");
		return TP_FAIL;
	}
	status = sfl_platform_lock_acquire(path, &lock, &holder, &err);
	if (status == SFL_PLATFORM_OK)
		sfl_platform_lock_release(lock);
	if (status != SFL_PLATFORM_ERR_BUSY || holder != child_pid)
		tp_diag("while the child holds it: status %d, holder %" PRId64 ", child %" PRId64,
			(int)status, holder, child_pid);
	if (!tp_child_kill(child)) {
		tp_child_wait(child);
		tp_diag("cannot kill the child");
		return TP_FAIL;
	}
	code = tp_child_wait(child);
	CHECK(status == SFL_PLATFORM_ERR_BUSY);
	CHECK(holder == child_pid);
	CHECK(code != 0);

	/* the child is reaped: the OS has dropped its lock */
	status = sfl_platform_lock_acquire(path, &lock, NULL, &err);
	CHECK_STATUS(status, SFL_PLATFORM_OK, err);
	sfl_platform_lock_release(lock);
	return TP_PASS;
}

/* --- identity, clocks, places ------------------------------------------------------------ */

static TpResult
test_identity(void)
{
	char host[256];
	char tiny[1];
	SflPlatformError err;

	CHECK_STATUS(sfl_platform_hostname(host, sizeof(host), &err), SFL_PLATFORM_OK, err);
	CHECK(host[0] != '\0');
	CHECK(strlen(host) < sizeof(host));
	CHECK(sfl_platform_hostname(tiny, sizeof(tiny), NULL) != SFL_PLATFORM_OK);
	CHECK(sfl_platform_pid() > 0);
	tp_diag("host %s, pid %" PRId64, host, sfl_platform_pid());
	return TP_PASS;
}

static TpResult
test_pid_alive(void)
{
	const char *args[] = { "child-exit", NULL };
	TpChild *child;
	int64_t pid;
	bool gone;
	int64_t dead;

	CHECK(sfl_platform_pid_alive(sfl_platform_pid()));

	/* exited but not yet reaped (a zombie; on Windows a handle still open) counts as gone */
	child = tp_child_spawn(args);
	CHECK(child != NULL);
	pid = tp_child_pid(child);
	CHECK(tp_child_wait_exited(child));
	gone = !sfl_platform_pid_alive(pid);
	CHECK(tp_child_wait(child) == 0);
	CHECK(gone);

	dead = tp_dead_pid();
	CHECK(dead > 0);
	CHECK(!sfl_platform_pid_alive(dead));
	CHECK(!sfl_platform_pid_alive(0));
	CHECK(!sfl_platform_pid_alive(-1));
#ifndef _WIN32
	/* init always runs; for a non-root caller this is the "exists, not ours" (EPERM) case */
	CHECK(sfl_platform_pid_alive(1));
#endif
	return TP_PASS;
}

static TpResult
test_monotonic(void)
{
	int64_t prev = sfl_platform_monotonic_ns();
	int64_t first = prev;

	CHECK(prev > 0);
	for (int i = 0; i < 1000000; i++) {
		int64_t now = sfl_platform_monotonic_ns();

		if (now < prev)
			tp_diag("read %d went back from %" PRId64 " to %" PRId64, i, prev, now);
		CHECK(now >= prev);
		prev = now;
	}
	CHECK(prev > first);
	return TP_PASS;
}

static TpResult
test_wall_clock(void)
{
	/* 2024-01-01T00:00:00Z and 2100-01-01T00:00:00Z */
	const int64_t min = INT64_C(1704067200) * 1000000000;
	const int64_t max = INT64_C(4102444800) * 1000000000;
	int64_t now = sfl_platform_wall_ns();

	tp_diag("wall clock %" PRId64 " ns", now);
	CHECK(now > min);
	CHECK(now < max);
	return TP_PASS;
}

#ifdef _WIN32
static bool
tp_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s);
	size_t b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}
#endif

static TpResult
test_default_dirs(void)
{
	char buf[1024];
	char tiny[4];
	SflPlatformError err;

#ifdef _WIN32
	CHECK_STATUS(sfl_platform_default_dir(SFL_PLATFORM_DIR_STATE, SFL_PLATFORM_SCOPE_SYSTEM,
					      buf, sizeof(buf), &err),
		     SFL_PLATFORM_OK, err);
	tp_diag("system state %s", buf);
	CHECK(buf[1] == ':' && buf[2] == '\\');
	CHECK(tp_ends_with(buf, "\\sf2loki"));
	CHECK_STATUS(sfl_platform_default_dir(SFL_PLATFORM_DIR_CONFIG, SFL_PLATFORM_SCOPE_SYSTEM,
					      buf, sizeof(buf), &err),
		     SFL_PLATFORM_OK, err);
	CHECK(tp_ends_with(buf, "\\sf2loki"));
	CHECK_STATUS(sfl_platform_default_dir(SFL_PLATFORM_DIR_STATE, SFL_PLATFORM_SCOPE_USER, buf,
					      sizeof(buf), &err),
		     SFL_PLATFORM_OK, err);
	tp_diag("user state %s", buf);
	CHECK(buf[1] == ':' && buf[2] == '\\');
	CHECK(tp_ends_with(buf, "\\sf2loki"));
#else
	CHECK_STATUS(sfl_platform_default_dir(SFL_PLATFORM_DIR_STATE, SFL_PLATFORM_SCOPE_SYSTEM,
					      buf, sizeof(buf), &err),
		     SFL_PLATFORM_OK, err);
	CHECK(strcmp(buf, "/var/lib/sf2loki") == 0);
	CHECK_STATUS(sfl_platform_default_dir(SFL_PLATFORM_DIR_CONFIG, SFL_PLATFORM_SCOPE_SYSTEM,
					      buf, sizeof(buf), &err),
		     SFL_PLATFORM_OK, err);
	CHECK(strcmp(buf, "/etc/sf2loki") == 0);

	CHECK(tp_set_env("HOME", "/home/tester"));
	CHECK(tp_set_env("XDG_STATE_HOME", NULL));
	CHECK(tp_set_env("XDG_CONFIG_HOME", "relative/ignored"));
	CHECK_STATUS(sfl_platform_default_dir(SFL_PLATFORM_DIR_STATE, SFL_PLATFORM_SCOPE_USER, buf,
					      sizeof(buf), &err),
		     SFL_PLATFORM_OK, err);
#ifdef __APPLE__
	CHECK(strcmp(buf, "/home/tester/Library/Application Support/sf2loki") == 0);
#else
	CHECK(strcmp(buf, "/home/tester/.local/state/sf2loki") == 0);
	CHECK_STATUS(sfl_platform_default_dir(SFL_PLATFORM_DIR_CONFIG, SFL_PLATFORM_SCOPE_USER, buf,
					      sizeof(buf), &err),
		     SFL_PLATFORM_OK, err);
	CHECK(strcmp(buf, "/home/tester/.config/sf2loki") == 0);
	CHECK(tp_set_env("XDG_STATE_HOME", "/xdg/state"));
	CHECK_STATUS(sfl_platform_default_dir(SFL_PLATFORM_DIR_STATE, SFL_PLATFORM_SCOPE_USER, buf,
					      sizeof(buf), &err),
		     SFL_PLATFORM_OK, err);
	CHECK(strcmp(buf, "/xdg/state/sf2loki") == 0);
#endif
	/* without a home there is no per-user directory; the working directory is no substitute */
	CHECK(tp_set_env("HOME", NULL));
	CHECK_STATUS(sfl_platform_default_dir(SFL_PLATFORM_DIR_CONFIG, SFL_PLATFORM_SCOPE_USER, buf,
					      sizeof(buf), &err),
		     SFL_PLATFORM_ERR_IO, err);
#endif
	CHECK(sfl_platform_default_dir(SFL_PLATFORM_DIR_STATE, SFL_PLATFORM_SCOPE_SYSTEM, tiny,
				       sizeof(tiny), &err) == SFL_PLATFORM_ERR_TOO_LARGE);
	return TP_PASS;
}

/* --- children ---------------------------------------------------------------------------- */

/* child-lock-try <path> <expected holder pid>: must be refused, naming the holder */
static int
child_lock_try(const char *path, const char *expected_pid)
{
	SflPlatformLock *lock = NULL;
	SflPlatformError err;
	int64_t holder = 0;
	char needle[64];
	SflPlatformStatus status;

	status = sfl_platform_lock_acquire(path, &lock, &holder, &err);
	if (status == SFL_PLATFORM_OK) {
		sfl_platform_lock_release(lock);
		return CHILD_GOT_LOCK;
	}
	if (status != SFL_PLATFORM_ERR_BUSY) {
		fprintf(stderr, "child: %s\n", err.message);
		return CHILD_FAILED;
	}
	snprintf(needle, sizeof(needle), "pid %s ", expected_pid);
	if (holder != strtoll(expected_pid, NULL, 10) || strstr(err.message, needle) == NULL) {
		fprintf(stderr, "child: holder %" PRId64 ", message \"%s\"\n", holder, err.message);
		return CHILD_BUSY_WRONG;
	}
	return CHILD_BUSY_NAMED;
}

/* child-lock-hold <path>: takes the lock, tells the parent, and holds it until killed */
static int
child_lock_hold(const char *path)
{
	SflPlatformLock *lock = NULL;
	SflPlatformError err;

	if (sfl_platform_lock_acquire(path, &lock, NULL, &err) != SFL_PLATFORM_OK) {
		fprintf(stderr, "child: %s\n", err.message);
		return CHILD_FAILED;
	}
	tp_tell_parent('R');
	/* returns only if the parent goes away first, so an orphan never lingers */
	tp_wait_for_parent();
	sfl_platform_lock_release(lock);
	return CHILD_FAILED;
}

static int
child_main(int argc, char **argv)
{
	if (strcmp(argv[1], "child-exit") == 0)
		return 0;
	if (strcmp(argv[1], "child-lock-try") == 0 && argc == 4)
		return child_lock_try(argv[2], argv[3]);
	if (strcmp(argv[1], "child-lock-hold") == 0 && argc == 3)
		return child_lock_hold(argv[2]);
	fprintf(stderr, "unknown child mode %s\n", argv[1]);
	return CHILD_FAILED;
}

/* --- harness ----------------------------------------------------------------------------- */

static const struct {
	const char *name;
	TpResult (*func)(void);
} cases[] = {
	{ "replace over an existing file", test_replace_existing },
	{ "a gated replace lands only through an open gate", test_replace_gated },
	{ "replace into a missing directory fails cleanly", test_replace_missing_dir },
	{ "replace leaves mode 0600", test_replace_mode },
	{ "replace removes this host's dead temps, keeps other hosts'", test_replace_stale_temps },
	{ "read returns the contents", test_read_contents },
	{ "read of a missing file is NOT_FOUND", test_read_not_found },
	{ "read under a missing directory is NOT_FOUND", test_read_missing_parent },
	{ "read under a file is NOT_FOUND", test_read_file_as_dir },
	{ "replace over a directory is IO, not access denied", test_replace_over_directory },
	{ "read of a directory is IO", test_read_directory },
	{ "read of an unreadable file is IO", test_read_unreadable },
	{ "read over the limit is TOO_LARGE", test_read_too_large },
	{ "remove, then NOT_FOUND", test_remove },
	{ "lock refused to another process, naming the holder", test_lock_other_process },
	{ "lock refused to a second acquire in the same process", test_lock_same_process },
	{ "lock released when the holder is killed", test_lock_holder_killed },
	{ "lock failures of a file system without locks are UNSUPPORTED",
	  test_lock_unsupported_class },
	{ "hostname and pid", test_identity },
	{ "pid_alive of self, an exited child and a reaped child", test_pid_alive },
	{ "monotonic clock never goes backwards", test_monotonic },
	{ "wall clock is sane", test_wall_clock },
	{ "default directories", test_default_dirs },
};

int
main(int argc, char **argv)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	int failed = 0;

	tp_proc_init(argc, argv);
	if (argc >= 2 && strncmp(argv[1], "child-", 6) == 0)
		return child_main(argc, argv);

	/* TAP lines must not interleave with a child's output */
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		TpResult result;

		tp_skip_reason = NULL;
		tp_dir = tp_make_temp_dir();
		if (tp_dir == NULL) {
			printf("not ok %zu - %s\n# cannot create a temp directory\n", i + 1,
			       cases[i].name);
			failed++;
			continue;
		}
		result = cases[i].func();
		if (!tp_remove_tree(tp_dir))
			tp_diag("cannot remove %s", tp_dir);
		free(tp_dir);
		tp_dir = NULL;
		if (result == TP_PASS)
			printf("ok %zu - %s\n", i + 1, cases[i].name);
		else if (result == TP_SKIP)
			printf("ok %zu - %s # SKIP %s\n", i + 1, cases[i].name, tp_skip_reason);
		else {
			printf("not ok %zu - %s\n", i + 1, cases[i].name);
			failed++;
		}
	}
	return failed == 0 ? 0 : 1;
}
