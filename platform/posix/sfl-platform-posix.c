/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The POSIX half of sfl-platform.h (files, lock files, clocks, identity, default directories).
 * The service-manager functions live in sfl-notify-posix.c.
 */

#include "sfl-platform.h"
#include "sfl-platform-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef __APPLE__
#include <sys/sysctl.h>
#endif

/* room for any hostname (POSIX caps it at HOST_NAME_MAX, 255 at most in practice) */
#define SFL_HOSTNAME_MAX 256

/* <dir>/.<basename>.sfl-tmp.<host>.<pid>.<random> */
#define SFL_TMP_FORMAT "%s/.%s" SFL_TMP_MARKER "%s.%" PRId64 ".%016" PRIx64

/* a holder's "pid hostname\n" line is short; anything longer is not ours */
#define SFL_LOCK_TEXT_MAX 320

struct SflPlatformLock {
	int fd;
};

/* --- errors ------------------------------------------------------------------------------ */

/* strerror() may use a shared buffer; the header promises thread safety */
static const char *
sfl_strerror(int code, char *buf, size_t len)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
	return strerror_r(code, buf, len);
#else
	if (strerror_r(code, buf, len) != 0)
		snprintf(buf, len, "error %d", code);
	return buf;
#endif
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
static SflPlatformStatus
sfl_set_error(SflPlatformError *error, SflPlatformStatus status, int os_code, const char *fmt, ...)
{
	va_list ap;
	SflPlatformStatus result;

	va_start(ap, fmt);
	result = sfl_platform_error_vset(error, status, os_code,
					 os_code == EACCES || os_code == EPERM, fmt, ap);
	va_end(ap);
	return result;
}

/* "cannot <verb> <path>: <strerror>" */
static SflPlatformStatus
sfl_set_errno_as(SflPlatformError *error, SflPlatformStatus status, int code, const char *verb,
		 const char *path)
{
	char buf[256];

	return sfl_set_error(error, status, code, "cannot %s %s: %s", verb, path,
			     sfl_strerror(code, buf, sizeof(buf)));
}

/* as above, with the status derived from errno */
static SflPlatformStatus
sfl_set_errno(SflPlatformError *error, int code, const char *verb, const char *path)
{
	/* ENOTDIR: a component of the path is a file, so the path cannot exist either */
	if (code == ENOENT || code == ENOTDIR)
		return sfl_set_errno_as(error, SFL_PLATFORM_ERR_NOT_FOUND, code, verb, path);
	return sfl_set_errno_as(error, SFL_PLATFORM_ERR_IO, code, verb, path);
}

/* --- small helpers ----------------------------------------------------------------------- */

static int
sfl_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			/* no progress and no error: treat as a full device rather than spin */
			errno = ENOSPC;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
sfl_fsync(int fd)
{
#ifdef __APPLE__
	/* plain fsync on macOS only reaches the drive's cache; F_FULLFSYNC asks it to flush */
	if (fcntl(fd, F_FULLFSYNC) == 0)
		return 0;
#endif
	while (fsync(fd) != 0) {
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/* gethostname() with a guaranteed terminator; a failure leaves "localhost" */
static void
sfl_raw_hostname(char *buf, size_t len)
{
	if (gethostname(buf, len - 1) != 0 || buf[0] == '\0')
		snprintf(buf, len, "localhost");
	buf[len - 1] = '\0';
}

/*
 * The hostname as it appears in temp file names: bytes that are not safe in a file name (or
 * that would make the name ambiguous to parse) become '_'. Dots stay; parsing works from the
 * right-hand end of the name.
 */
static void
sfl_file_hostname(char *buf, size_t len)
{
	sfl_raw_hostname(buf, len);
	sfl_platform_sanitize_hostname(buf);
}

/* a fresh 64-bit value per call: only needs to differ between attempts, O_EXCL does the rest */
static uint64_t
sfl_random64(void)
{
	static _Atomic uint64_t counter;
	uint64_t x;

	x = (uint64_t)sfl_platform_wall_ns() ^ ((uint64_t)getpid() << 32) ^
	    (atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15ULL);
	/* splitmix64 finaliser spreads the bits so names do not look sequential */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * Splits @path into a malloc()ed directory ("." when there is no slash) and a pointer to the
 * final component inside @path.
 */
static char *
sfl_split_path(const char *path, const char **out_base)
{
	const char *slash = strrchr(path, '/');
	char *dir;

	if (slash == NULL) {
		*out_base = path;
		return strdup(".");
	}
	*out_base = slash + 1;
	if (slash == path)
		return strdup("/");
	dir = malloc((size_t)(slash - path) + 1);
	if (dir == NULL)
		return NULL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return dir;
}

/*
 * Parses "<host>.<pid>.<random>" (the part of a temp name after the marker). Returns true and
 * fills @pid when the host part equals @host exactly.
 */
static bool
sfl_parse_temp_suffix(const char *rest, const char *host, int64_t *pid)
{
	return sfl_platform_parse_temp_suffix(rest, host, false, pid);
}

/*
 * Removes temp files for the same target left by processes of this host that no longer run.
 * Other hosts' temps are never touched: the directory may be shared, and their pids mean
 * nothing here. Best effort: a failure only means a stale file stays a little longer.
 */
static void
sfl_remove_stale_temps(const char *dir, const char *base, const char *host)
{
	int64_t self = (int64_t)getpid();
	size_t base_len = strlen(base);
	size_t marker_len = strlen(SFL_TMP_MARKER);
	struct dirent *ent;
	DIR *d;

	d = opendir(dir);
	if (d == NULL)
		return;
	while ((ent = readdir(d)) != NULL) {
		const char *name = ent->d_name;
		int64_t pid;

		if (name[0] != '.' || strncmp(name + 1, base, base_len) != 0 ||
		    strncmp(name + 1 + base_len, SFL_TMP_MARKER, marker_len) != 0)
			continue;
		if (!sfl_parse_temp_suffix(name + 1 + base_len + marker_len, host, &pid))
			continue;
		/* our own pid may be another thread replacing the same file right now */
		if (pid == self || sfl_platform_pid_alive(pid))
			continue;
		unlinkat(dirfd(d), name, 0);
	}
	closedir(d);
}

/* --- files ------------------------------------------------------------------------------- */

/* creates the temp file exclusively; returns the descriptor and the malloc()ed name */
static int
sfl_create_temp(const char *dir, const char *base, const char *host, char **out_tmp)
{
	int saved = EEXIST;

	/* a collision needs the same host, pid and random value: retrying a few times is plenty */
	for (int attempt = 0; attempt < 16; attempt++) {
		uint64_t rnd = sfl_random64();
		int n = snprintf(NULL, 0, SFL_TMP_FORMAT, dir, base, host, (int64_t)getpid(), rnd);
		char *tmp;
		int fd;

		if (n < 0) {
			errno = EINVAL;
			return -1;
		}
		tmp = malloc((size_t)n + 1);
		if (tmp == NULL) {
			errno = ENOMEM;
			return -1;
		}
		snprintf(tmp, (size_t)n + 1, SFL_TMP_FORMAT, dir, base, host, (int64_t)getpid(),
			 rnd);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd >= 0) {
			*out_tmp = tmp;
			return fd;
		}
		saved = errno;
		free(tmp);
		if (saved != EEXIST && saved != EINTR)
			break;
	}
	errno = saved;
	return -1;
}

/* fsyncs @dir so the rename itself survives a power loss */
static int
sfl_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int saved;

	if (fd < 0)
		return -1;
	if (sfl_fsync(fd) != 0) {
		saved = errno;
		close(fd);
		/* some file systems cannot sync a directory; the rename is all they offer */
		if (saved == EINVAL || saved == ENOTSUP || saved == EBADF)
			return 0;
		errno = saved;
		return -1;
	}
	close(fd);
	return 0;
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
	const char *base;
	char *dir = NULL;
	char *tmp = NULL;
	SflPlatformStatus status = SFL_PLATFORM_OK;
	int fd;
	int saved;

	if (path == NULL || path[0] == '\0' || (data == NULL && len > 0))
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot replace a file: invalid arguments");
	dir = sfl_split_path(path, &base);
	if (dir == NULL)
		return sfl_set_errno(error, ENOMEM, "replace", path);
	if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		free(dir);
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot replace %s: not a file name", path);
	}

	sfl_file_hostname(host, sizeof(host));
	sfl_remove_stale_temps(dir, base, host);

	fd = sfl_create_temp(dir, base, host, &tmp);
	if (fd < 0) {
		status = sfl_set_errno(error, errno, "replace", path);
		goto out;
	}
	/* the mode must not depend on the caller's umask: state files may hold secrets */
	(void)fchmod(fd, 0600);
	if (sfl_write_all(fd, data, len) != 0 || sfl_fsync(fd) != 0) {
		saved = errno;
		close(fd);
		goto fail;
	}
	/* NFS reports deferred write errors at close */
	if (close(fd) != 0 && errno != EINTR) {
		saved = errno;
		goto fail;
	}
	if (gate != NULL && !gate(user_data)) {
		unlink(tmp);
		status = sfl_set_error(error, SFL_PLATFORM_ERR_ABANDONED, 0,
				       "the replace of %s was abandoned before its rename", path);
		goto out;
	}
	if (rename(tmp, path) != 0) {
		saved = errno;
		goto fail;
	}
	/* the rename happened either way; never report NOT_FOUND for a file we just wrote */
	if (sfl_sync_dir(dir) != 0)
		status = sfl_set_errno_as(error, SFL_PLATFORM_ERR_IO, errno,
					  "sync the directory of", path);
	goto out;

fail:
	unlink(tmp);
	status = sfl_set_errno(error, saved, "replace", path);
out:
	free(tmp);
	free(dir);
	return status;
}

SflPlatformStatus
sfl_platform_read_file(const char *path, size_t max_len, char **out_data, size_t *out_len,
		       SflPlatformError *error)
{
	/* the buffer never needs more than max_len + 1 bytes: one extra proves "too large" */
	size_t limit = max_len < SIZE_MAX - 1 ? max_len + 1 : SIZE_MAX - 1;
	size_t cap;
	size_t used = 0;
	struct stat st;
	char *buf;
	int fd;
	int saved;

	if (out_data != NULL)
		*out_data = NULL;
	if (out_len != NULL)
		*out_len = 0;
	if (path == NULL || path[0] == '\0' || out_data == NULL)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot read a file: invalid arguments");

	/* non-blocking open: a FIFO at the path must fail, not hang the caller forever */
	do {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return sfl_set_errno(error, errno, "read", path);
	/* open(O_RDONLY) succeeds on a directory; a directory is an error, never "absent" */
	if (fstat(fd, &st) != 0) {
		saved = errno;
		close(fd);
		return sfl_set_errno(error, saved, "read", path);
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return sfl_set_error(error, SFL_PLATFORM_ERR_IO, EISDIR,
				     "cannot read %s: it is a directory", path);
	}
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		close(fd);
		return sfl_set_error(error, SFL_PLATFORM_ERR_IO, EINVAL,
				     "cannot read %s: it is a pipe or socket, not a file", path);
	}
	{
		int flags = fcntl(fd, F_GETFL);
		if (flags >= 0)
			(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	}
	if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > (uintmax_t)max_len) {
		close(fd);
		return sfl_set_error(error, SFL_PLATFORM_ERR_TOO_LARGE, 0,
				     "cannot read %s: %jd bytes, larger than the limit of %zu",
				     path, (intmax_t)st.st_size, max_len);
	}

	/* st_size is only a hint (procfs reports 0, the file may grow): read until EOF */
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	if (cap > limit)
		cap = limit;
	buf = malloc(cap + 1);
	if (buf == NULL) {
		close(fd);
		return sfl_set_errno(error, ENOMEM, "read", path);
	}
	for (;;) {
		ssize_t n;

		if (used == cap) {
			size_t new_cap = cap < limit / 2 ? cap * 2 : limit;
			char *grown;

			if (cap >= limit)
				break;
			grown = realloc(buf, new_cap + 1);
			if (grown == NULL) {
				free(buf);
				close(fd);
				return sfl_set_errno(error, ENOMEM, "read", path);
			}
			buf = grown;
			cap = new_cap;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			free(buf);
			close(fd);
			/* a read error on an open file is never "absent" */
			return sfl_set_errno_as(error, SFL_PLATFORM_ERR_IO, saved, "read", path);
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
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
	if (path == NULL || path[0] == '\0')
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot remove a file: invalid arguments");
	if (unlink(path) != 0)
		return sfl_set_errno(error, errno, "remove", path);
	return SFL_PLATFORM_OK;
}

void
sfl_platform_free(void *ptr)
{
	free(ptr);
}

/* --- lock files -------------------------------------------------------------------------- */

/*
 * Takes the lock on @fd without blocking. Returns 0, or -1 with errno: EWOULDBLOCK when
 * another open file description holds it.
 */
static int
sfl_try_lock(int fd)
{
#ifdef F_OFD_SETLK
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = 0;
	fl.l_len = 0;
	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno == EAGAIN || errno == EACCES) {
		errno = EWOULDBLOCK;
		return -1;
	}
	/* kernels before 3.15 reject the command: fall back to flock, which is also per handle */
	if (errno != EINVAL)
		return -1;
#endif
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EINTR)
			break;
	}
	if (errno == EAGAIN)
		errno = EWOULDBLOCK;
	return -1;
}

/* reads the holder's "pid hostname\n"; false when it is missing or half-written */
static bool
sfl_read_holder(int fd, int64_t *pid, char *host, size_t host_len)
{
	char text[SFL_LOCK_TEXT_MAX];
	ssize_t n;

	do {
		n = pread(fd, text, sizeof(text) - 1, 0);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return false;
	text[n] = '\0';
	return sfl_platform_parse_holder(text, pid, host, host_len);
}

SflPlatformStatus
sfl_platform_lock_acquire(const char *path, SflPlatformLock **out_lock, int64_t *holder_pid,
			  SflPlatformError *error)
{
	char host[SFL_HOSTNAME_MAX];
	char text[SFL_LOCK_TEXT_MAX];
	SflPlatformLock *lock;
	int fd;
	int n;
	int saved;

	if (holder_pid != NULL)
		*holder_pid = 0;
	if (out_lock != NULL)
		*out_lock = NULL;
	if (path == NULL || path[0] == '\0' || out_lock == NULL)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot lock a file: invalid arguments");

	do {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return sfl_set_errno(error, errno, "lock", path);

	if (sfl_try_lock(fd) != 0) {
		int64_t pid = 0;

		saved = errno;
		if (saved != EWOULDBLOCK) {
			close(fd);
			return sfl_set_errno_as(error, sfl_platform_lock_failure_status(saved),
						saved, "lock", path);
		}
		/* the holder may not have written its line yet: then it is simply unknown */
		if (sfl_read_holder(fd, &pid, host, sizeof(host))) {
			if (holder_pid != NULL)
				*holder_pid = pid;
			sfl_set_error(error, SFL_PLATFORM_ERR_BUSY, saved,
				      "cannot lock %s: held by pid %" PRId64 " on host %s", path,
				      pid, host);
		} else {
			sfl_set_error(error, SFL_PLATFORM_ERR_BUSY, saved,
				      "cannot lock %s: held by another process", path);
		}
		close(fd);
		return SFL_PLATFORM_ERR_BUSY;
	}

	sfl_raw_hostname(host, sizeof(host));
	n = snprintf(text, sizeof(text), "%" PRId64 " %s\n", (int64_t)getpid(), host);
	if (n < 0 || (size_t)n >= sizeof(text))
		n = snprintf(text, sizeof(text), "%" PRId64 " ?\n", (int64_t)getpid());
	/* the text is what a refused caller reports, so a lock we cannot describe is refused */
	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0 ||
	    sfl_write_all(fd, text, (size_t)n) != 0 || sfl_fsync(fd) != 0) {
		saved = errno;
		close(fd);
		return sfl_set_errno_as(error, SFL_PLATFORM_ERR_IO, saved, "write the lock file",
					path);
	}

	lock = malloc(sizeof(*lock));
	if (lock == NULL) {
		close(fd);
		return sfl_set_errno_as(error, SFL_PLATFORM_ERR_IO, ENOMEM, "lock", path);
	}
	lock->fd = fd;
	*out_lock = lock;
	return SFL_PLATFORM_OK;
}

void
sfl_platform_lock_release(SflPlatformLock *lock)
{
	if (lock == NULL)
		return;
	/* closing drops the lock; unlinking the file would let two processes lock two inodes */
	close(lock->fd);
	free(lock);
}

/* --- clocks ------------------------------------------------------------------------------ */

static int64_t
sfl_timespec_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + (int64_t)ts->tv_nsec;
}

int64_t
sfl_platform_monotonic_ns(void)
{
	struct timespec ts;

#ifdef CLOCK_BOOTTIME
	/* CLOCK_MONOTONIC stops during suspend on Linux; leases must age while asleep */
	if (clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
		return sfl_timespec_ns(&ts);
#endif
	/* on macOS CLOCK_MONOTONIC already counts sleep */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return sfl_timespec_ns(&ts);
}

int64_t
sfl_platform_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return sfl_timespec_ns(&ts);
}

/* --- identity and places ----------------------------------------------------------------- */

SflPlatformStatus
sfl_platform_hostname(char *buf, size_t len, SflPlatformError *error)
{
	char host[SFL_HOSTNAME_MAX];
	size_t host_len;

	if (buf == NULL || len == 0)
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot get the hostname: invalid arguments");
	buf[0] = '\0';
	if (gethostname(host, sizeof(host) - 1) != 0) {
		char msg[256];
		int saved = errno;

		return sfl_set_error(error, SFL_PLATFORM_ERR_IO, saved,
				     "cannot get the hostname: %s",
				     sfl_strerror(saved, msg, sizeof(msg)));
	}
	host[sizeof(host) - 1] = '\0';
	host_len = strlen(host);
	if (host_len == 0)
		return sfl_set_error(error, SFL_PLATFORM_ERR_IO, 0,
				     "cannot get the hostname: it is empty");
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
	return (int64_t)getpid();
}

/* whether @pid is a zombie (exited, not yet reaped): it no longer runs anything */
static bool
sfl_pid_is_zombie(pid_t pid)
{
#if defined(__linux__)
	char path[64];
	char text[512];
	ssize_t n;
	char *paren;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	/* "pid (comm) S ...": comm may hold spaces and parentheses, so find the last ')' */
	paren = strrchr(text, ')');
	return paren != NULL && paren[1] == ' ' && paren[2] == 'Z';
#elif defined(__APPLE__)
	int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_PID, (int)pid };
	struct kinfo_proc info;
	size_t size = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (sysctl(mib, 4, &info, &size, NULL, 0) != 0 || size == 0)
		return false;
	return info.kp_proc.p_stat == SZOMB;
#else
	(void)pid;
	return false;
#endif
}

bool
sfl_platform_pid_alive(int64_t pid)
{
	/* 0 and negative values address process groups in kill(); they are never a process */
	if (pid <= 0 || pid != (int64_t)(pid_t)pid)
		return false;
	/* EPERM: it exists but belongs to someone else */
	if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
		return false;
	return !sfl_pid_is_zombie((pid_t)pid);
}

/* copies "<prefix><suffix>" into @buf, or fails with TOO_LARGE */
static SflPlatformStatus
sfl_join_dir(char *buf, size_t len, const char *prefix, const char *suffix, SflPlatformError *error)
{
	int n = snprintf(buf, len, "%s%s", prefix, suffix);

	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return sfl_set_error(
			error, SFL_PLATFORM_ERR_TOO_LARGE, 0,
			"cannot build the default directory %s%s: longer than %zu bytes", prefix,
			suffix, len - 1);
	}
	return SFL_PLATFORM_OK;
}

/* an absolute $HOME; a relative one would silently mean the working directory */
static const char *
sfl_home(SflPlatformError *error)
{
	const char *home = getenv("HOME");

	if (home == NULL || home[0] != '/') {
		sfl_set_error(error, SFL_PLATFORM_ERR_IO, 0,
			      "cannot find the per-user directory: $HOME is %s",
			      home == NULL ? "not set" : "not an absolute path");
		return NULL;
	}
	return home;
}

SflPlatformStatus
sfl_platform_default_dir(SflPlatformDirKind kind, SflPlatformScope scope, char *buf, size_t len,
			 SflPlatformError *error)
{
	const char *home;

	if (buf == NULL || len == 0 ||
	    (kind != SFL_PLATFORM_DIR_STATE && kind != SFL_PLATFORM_DIR_CONFIG) ||
	    (scope != SFL_PLATFORM_SCOPE_SYSTEM && scope != SFL_PLATFORM_SCOPE_USER))
		return sfl_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
				     "cannot build the default directory: invalid arguments");
	buf[0] = '\0';

	if (scope == SFL_PLATFORM_SCOPE_SYSTEM)
		return sfl_join_dir(buf, len, kind == SFL_PLATFORM_DIR_STATE ? "/var/lib" : "/etc",
				    "/sf2loki", error);

	home = sfl_home(error);
	if (home == NULL)
		return SFL_PLATFORM_ERR_IO;
#ifdef __APPLE__
	return sfl_join_dir(buf, len, home, "/Library/Application Support/sf2loki", error);
#else
	{
		const char *xdg_var =
			kind == SFL_PLATFORM_DIR_STATE ? "XDG_STATE_HOME" : "XDG_CONFIG_HOME";
		const char *xdg = getenv(xdg_var);
		char prefix[PATH_MAX];
		int n;

		/* the XDG spec says a relative value is invalid and must be ignored */
		if (xdg != NULL && xdg[0] == '/')
			return sfl_join_dir(buf, len, xdg, "/sf2loki", error);
		n = snprintf(prefix, sizeof(prefix), "%s%s", home,
			     kind == SFL_PLATFORM_DIR_STATE ? "/.local/state" : "/.config");
		if (n < 0 || (size_t)n >= sizeof(prefix))
			return sfl_set_error(
				error, SFL_PLATFORM_ERR_TOO_LARGE, 0,
				"cannot build the default directory: $HOME is too long");
		return sfl_join_dir(buf, len, prefix, "/sf2loki", error);
	}
#endif
}
