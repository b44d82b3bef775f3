/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The service-manager half of the POSIX platform layer: the sd_notify datagram protocol,
 * written here because it is a dozen lines and libsystemd is not on every target (macOS, the
 * BSDs, minimal containers). One datagram per call, newline-separated assignments, sent from
 * a fresh socket so nothing is shared between threads.
 */

#include "sfl-platform.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef MSG_NOSIGNAL
/* macOS has no MSG_NOSIGNAL; the daemon ignores SIGPIPE anyway */
#define MSG_NOSIGNAL 0
#endif

static void
sfl_notify_set_error(SflPlatformError *error, SflPlatformStatus status, int os_code,
		     const char *what, const char *socket_path)
{
	char reason[256] = "";

	if (error == NULL)
		return;
	error->status = status;
	error->os_code = os_code;
	if (os_code != 0) {
		/* strerror() is not thread-safe; the GNU strerror_r returns its own pointer */
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
		const char *text = strerror_r(os_code, reason, sizeof(reason));
		if (text != reason)
			snprintf(reason, sizeof(reason), "%s", text);
#else
		if (strerror_r(os_code, reason, sizeof(reason)) != 0)
			snprintf(reason, sizeof(reason), "error %d", os_code);
#endif
	}
	snprintf(error->message, sizeof(error->message), "NOTIFY_SOCKET %s: %s%s%s", socket_path,
		 what, os_code != 0 ? ": " : "", reason);
}

/* fills @addr from $NOTIFY_SOCKET: a path, or "@name" for the abstract namespace */
static SflPlatformStatus
sfl_notify_address(const char *socket_path, struct sockaddr_un *addr, socklen_t *addr_len,
		   SflPlatformError *error)
{
	size_t len = strlen(socket_path);

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (socket_path[0] == '@') {
		/* the leading NUL names the abstract namespace; the length excludes any trailing
		 * NUL */
		if (len < 2 || len > sizeof(addr->sun_path)) {
			sfl_notify_set_error(error, SFL_PLATFORM_ERR_INVALID, 0,
					     "abstract socket name empty or too long", socket_path);
			return SFL_PLATFORM_ERR_INVALID;
		}
		memcpy(addr->sun_path + 1, socket_path + 1, len - 1);
		*addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
		return SFL_PLATFORM_OK;
	}
	if (socket_path[0] != '/') {
		/* e.g. systemd's vsock:CID:PORT for virtual machines */
		sfl_notify_set_error(error, SFL_PLATFORM_ERR_UNSUPPORTED, 0,
				     "neither an absolute path nor @name", socket_path);
		return SFL_PLATFORM_ERR_UNSUPPORTED;
	}
	if (len >= sizeof(addr->sun_path)) {
		sfl_notify_set_error(error, SFL_PLATFORM_ERR_INVALID, 0, "path too long",
				     socket_path);
		return SFL_PLATFORM_ERR_INVALID;
	}
	memcpy(addr->sun_path, socket_path, len + 1);
	*addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	return SFL_PLATFORM_OK;
}

static int
sfl_notify_socket(void)
{
#ifdef SOCK_CLOEXEC
	return socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
#else
	/* no atomic close-on-exec here (macOS); the window is as short as it gets */
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd >= 0)
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
#endif
}

SflPlatformStatus
sfl_platform_notify(const char *state, SflPlatformError *error)
{
	const char *socket_path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un addr;
	socklen_t addr_len = 0;
	SflPlatformStatus status;
	size_t len;
	ssize_t sent;
	int saved;
	int fd;

	if (state == NULL || state[0] == '\0') {
		if (error != NULL) {
			error->status = SFL_PLATFORM_ERR_INVALID;
			error->os_code = 0;
			snprintf(error->message, sizeof(error->message),
				 "empty service-manager notification");
		}
		return SFL_PLATFORM_ERR_INVALID;
	}
	/* not started by a service manager that listens: nothing to do */
	if (socket_path == NULL || socket_path[0] == '\0')
		return SFL_PLATFORM_OK;

	status = sfl_notify_address(socket_path, &addr, &addr_len, error);
	if (status != SFL_PLATFORM_OK)
		return status;

	fd = sfl_notify_socket();
	if (fd < 0) {
		sfl_notify_set_error(error, SFL_PLATFORM_ERR_IO, errno, "cannot create a socket",
				     socket_path);
		return SFL_PLATFORM_ERR_IO;
	}
	len = strlen(state);
	do {
		sent = sendto(fd, state, len, MSG_NOSIGNAL, (const struct sockaddr *)&addr,
			      addr_len);
	} while (sent < 0 && errno == EINTR);
	saved = errno;
	close(fd);
	if (sent < 0) {
		sfl_notify_set_error(error, SFL_PLATFORM_ERR_IO, saved, "cannot send", socket_path);
		return SFL_PLATFORM_ERR_IO;
	}
	if ((size_t)sent != len) {
		sfl_notify_set_error(error, SFL_PLATFORM_ERR_IO, 0, "datagram truncated",
				     socket_path);
		return SFL_PLATFORM_ERR_IO;
	}
	return SFL_PLATFORM_OK;
}

/* a whole decimal number without sign or junk; false on anything else or overflow */
static bool
sfl_notify_parse_u64(const char *text, uint64_t *out)
{
	unsigned long long value;
	char *end = NULL;

	if (text == NULL || text[0] < '0' || text[0] > '9')
		return false;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0')
		return false;
	*out = (uint64_t)value;
	return true;
}

uint64_t
sfl_platform_watchdog_usec(void)
{
	const char *pid_text = getenv("WATCHDOG_PID");
	uint64_t usec = 0;
	uint64_t pid = 0;

	if (!sfl_notify_parse_u64(getenv("WATCHDOG_USEC"), &usec) || usec == 0)
		return 0;
	/* the variables are inherited by children; the watchdog belongs to the named process */
	if (pid_text != NULL) {
		if (!sfl_notify_parse_u64(pid_text, &pid) || pid == 0)
			return 0;
		if (pid != (uint64_t)getpid())
			return 0;
	}
	return usec;
}

int
sfl_platform_service_run(const char *name, SflPlatformMainFunc main_func, int argc, char **argv,
			 void *user_data)
{
	/* systemd and launchd start us as a plain process; there is no dispatcher to join */
	(void)name;
	return main_func(argc, argv, user_data);
}

void
sfl_platform_set_stop_handler(SflPlatformStopFunc func, void *user_data)
{
	/*
	 * nothing to install: on POSIX the only stop requests are signals, and the entry point
	 * already bridges those through the main loop
	 */
	(void)func;
	(void)user_data;
}

/*
 * SIGHUP asks for a reload. A signal handler may do almost nothing, so it writes one byte to
 * a pipe; a thread of ours reads it and calls the handler with the lock held, which is what
 * the Windows SCM thread does with PARAMCHANGE: the daemon sees one contract on every OS.
 * The signal stays handled (never the default, which ends the process) once a handler was
 * installed, so a SIGHUP between two runs of the daemon is merely dropped.
 */
static pthread_mutex_t sfl_reload_lock = PTHREAD_MUTEX_INITIALIZER;
static SflPlatformReloadFunc sfl_reload_func;
static void *sfl_reload_data;
static int sfl_reload_pipe[2] = { -1, -1 };

static void
sfl_reload_signal_handler(int signo)
{
	int saved = errno;
	char byte = 'H';
	ssize_t n;

	(void)signo;
	/* a full pipe already holds a wake-up: the requests coalesce anyway */
	n = write(sfl_reload_pipe[1], &byte, 1);
	(void)n;
	errno = saved;
}

static void *
sfl_reload_thread(void *arg)
{
	char buf[64];

	(void)arg;
	for (;;) {
		ssize_t n = read(sfl_reload_pipe[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		pthread_mutex_lock(&sfl_reload_lock);
		if (sfl_reload_func != NULL)
			sfl_reload_func(sfl_reload_data);
		pthread_mutex_unlock(&sfl_reload_lock);
	}
}

/* once per process: the pipe, the reader thread and the SIGHUP disposition */
static bool
sfl_reload_install(void)
{
	struct sigaction sa;
	sigset_t all, old;
	pthread_t thread;
	int rc;

	if (sfl_reload_pipe[0] >= 0)
		return true;
	if (pipe(sfl_reload_pipe) != 0)
		return false;
	(void)fcntl(sfl_reload_pipe[0], F_SETFD, FD_CLOEXEC);
	(void)fcntl(sfl_reload_pipe[1], F_SETFD, FD_CLOEXEC);
	(void)fcntl(sfl_reload_pipe[1], F_SETFL, O_NONBLOCK);
	/* the reader takes no signal of its own: they stay with the main loop's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&thread, NULL, sfl_reload_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		close(sfl_reload_pipe[0]);
		close(sfl_reload_pipe[1]);
		sfl_reload_pipe[0] = sfl_reload_pipe[1] = -1;
		return false;
	}
	pthread_detach(thread);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sfl_reload_signal_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGHUP, &sa, NULL);
	return true;
}

void
sfl_platform_set_reload_handler(SflPlatformReloadFunc func, void *user_data)
{
	if (func != NULL && !sfl_reload_install())
		return;
	/* returns once no callback runs: the reader holds the lock while it calls one */
	pthread_mutex_lock(&sfl_reload_lock);
	sfl_reload_func = func;
	sfl_reload_data = func != NULL ? user_data : NULL;
	pthread_mutex_unlock(&sfl_reload_lock);
}

static SflPlatformStatus
sfl_notify_unsupported(SflPlatformError *error, const char *what)
{
	if (error != NULL) {
		error->status = SFL_PLATFORM_ERR_UNSUPPORTED;
		error->os_code = 0;
		error->access_denied = false;
		snprintf(error->message, sizeof(error->message), "%s: not on this OS", what);
	}
	return SFL_PLATFORM_ERR_UNSUPPORTED;
}

SflPlatformStatus
sfl_platform_service_configure(const SflPlatformServiceOptions *options, SflPlatformError *error)
{
	/* systemd and launchd take these from the unit and the plist */
	(void)options;
	return sfl_notify_unsupported(error, "service options");
}

SflPlatformStatus
sfl_platform_event_log_write(SflPlatformEventType type, const char *text, SflPlatformError *error)
{
	/* journald and launchd capture stderr, where the log writer already prints */
	(void)type;
	(void)text;
	return sfl_notify_unsupported(error, "system event log");
}
