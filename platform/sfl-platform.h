/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

/*
 * The operating-system layer: the only API under which sf2loki touches files, locks, clocks,
 * process identity and service managers. Plain C11 without GLib, so the Windows half builds
 * with mingw-w64 and its contract tests run under wine.
 *
 * Conventions:
 *  - paths are UTF-8 (converted to UTF-16 on Windows);
 *  - functions return an SflPlatformStatus; on failure they fill the caller's SflPlatformError
 *    (may be NULL) with a message that names the path and the OS reason, and the OS code;
 *  - nothing here logs, allocates global state, or is tied to a main loop; every function is
 *    safe to call from a worker thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	SFL_PLATFORM_OK = 0,
	/* the path (or a directory on it) does not exist: a definite "absent" */
	SFL_PLATFORM_ERR_NOT_FOUND,
	/*
	 * anything else the OS reported: permission denied, is-a-directory, EIO, ESTALE, a full
	 * disk. Never to be read as "absent".
	 */
	SFL_PLATFORM_ERR_IO,
	/* a lock is held by another process (or handle) */
	SFL_PLATFORM_ERR_BUSY,
	/* the input is larger than the caller's limit */
	SFL_PLATFORM_ERR_TOO_LARGE,
	/* bad arguments (NULL path, empty buffer) */
	SFL_PLATFORM_ERR_INVALID,
	/* not available on this OS or in this process (e.g. not started by a service manager) */
	SFL_PLATFORM_ERR_UNSUPPORTED,
	/* the caller's gate refused the last step of a replace: nothing was changed */
	SFL_PLATFORM_ERR_ABANDONED,
} SflPlatformStatus;

typedef struct {
	SflPlatformStatus status;
	/* errno on POSIX, GetLastError() on Windows; 0 when not from the OS */
	int os_code;
	/* the OS refused access (EACCES/EPERM, ERROR_ACCESS_DENIED): callers can give advice */
	bool access_denied;
	char message[512];
} SflPlatformError;

/* --- files ------------------------------------------------------------------------------- */

/*
 * Durable atomic replace. Writes @data to a uniquely named temp file in the same directory as
 * @path (exclusive create, mode 0600 on POSIX), flushes and fsyncs it, renames it over @path,
 * then fsyncs the directory. On Windows: FlushFileBuffers, then
 * MoveFileExW(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH), retried for up to ~1 s on
 * sharing or access violations. Readers see either the old or the new contents, never a mix;
 * after a crash the file holds one complete version. The temp file is removed on every failure
 * path, and temp files left behind by dead processes of this host for the same target are
 * removed before a new one is created, so they never accumulate.
 */
SflPlatformStatus
sfl_platform_replace_file(const char *path, const void *data, size_t len, SflPlatformError *error);

/*
 * Asked once, right before the rename, in the thread doing the replace: nonzero lets it land,
 * zero abandons it (the temp file is removed, @path is untouched, SFL_PLATFORM_ERR_ABANDONED).
 * For writes that must not land late: a lease renewal that stalled in fsync (a frozen process,
 * a hung NFS server) past the point where its caller gave up on it.
 */
typedef int (*SflPlatformReplaceGate)(void *user_data);

/* sfl_platform_replace_file() with a @gate (may be NULL) before the rename */
SflPlatformStatus sfl_platform_replace_file_gated(const char *path, const void *data, size_t len,
						  SflPlatformReplaceGate gate, void *user_data,
						  SflPlatformError *error);

/*
 * Reads a whole file. On success *@out_data is a NUL-terminated malloc()ed buffer (free it
 * with sfl_platform_free) and *@out_len its length without the NUL. Three outcomes the caller
 * never has to guess between: SFL_PLATFORM_OK, SFL_PLATFORM_ERR_NOT_FOUND, or
 * SFL_PLATFORM_ERR_IO (also for a directory at @path). Files larger than @max_len give
 * SFL_PLATFORM_ERR_TOO_LARGE.
 */
SflPlatformStatus sfl_platform_read_file(const char *path, size_t max_len, char **out_data,
					 size_t *out_len, SflPlatformError *error);

/* removes a file; a missing file is SFL_PLATFORM_ERR_NOT_FOUND */
SflPlatformStatus sfl_platform_remove_file(const char *path, SflPlatformError *error);

void sfl_platform_free(void *ptr);

/* --- lock files -------------------------------------------------------------------------- */

typedef struct SflPlatformLock SflPlatformLock;

/*
 * Try-lock on @path (created 0600 if missing), held until sfl_platform_lock_release() or the
 * death of the process, whichever comes first: Linux uses open-file-description locks (falling
 * back to flock where F_OFD_SETLK is missing), macOS/BSD flock, Windows LockFileEx on a handle
 * kept open. Classic POSIX record locks are not used: they vanish when any descriptor of the
 * file is closed anywhere in the process. The holder writes its pid (and hostname) into the
 * file; a refused caller gets SFL_PLATFORM_ERR_BUSY with a message naming them, and
 * *@holder_pid set when known (else 0). The lock is per open handle: a second acquire in the
 * same process is refused too. A file system that cannot lock at all (NFS without lockd:
 * ENOLCK; EOPNOTSUPP, ENOSYS; on Windows ERROR_NOT_SUPPORTED, ERROR_INVALID_FUNCTION) gives
 * SFL_PLATFORM_ERR_UNSUPPORTED, which asking again does not change; any other failure
 * SFL_PLATFORM_ERR_IO.
 */
SflPlatformStatus sfl_platform_lock_acquire(const char *path, SflPlatformLock **out_lock,
					    int64_t *holder_pid, SflPlatformError *error);

void sfl_platform_lock_release(SflPlatformLock *lock);

/* --- clocks ------------------------------------------------------------------------------ */

/* nanoseconds on a clock that never goes backwards and keeps counting across suspend */
int64_t sfl_platform_monotonic_ns(void);

/* nanoseconds since 1970-01-01T00:00:00Z */
int64_t sfl_platform_wall_ns(void);

/* --- identity and places ----------------------------------------------------------------- */

SflPlatformStatus sfl_platform_hostname(char *buf, size_t len, SflPlatformError *error);

int64_t sfl_platform_pid(void);

/* true when a process with @pid exists on this host (a zombie counts as gone) */
bool sfl_platform_pid_alive(int64_t pid);

typedef enum {
	SFL_PLATFORM_DIR_STATE,
	SFL_PLATFORM_DIR_CONFIG,
} SflPlatformDirKind;

typedef enum {
	/* a system service: /var/lib/sf2loki, /etc/sf2loki; %ProgramData%\sf2loki */
	SFL_PLATFORM_SCOPE_SYSTEM,
	/* a per-user agent: ~/Library/Application Support/sf2loki on macOS, XDG dirs on Linux */
	SFL_PLATFORM_SCOPE_USER,
} SflPlatformScope;

/* absolute default directory; never the working directory (Windows services start in System32) */
SflPlatformStatus sfl_platform_default_dir(SflPlatformDirKind kind, SflPlatformScope scope,
					   char *buf, size_t len, SflPlatformError *error);

/* --- socket readiness -------------------------------------------------------------------- */

/* what a socket is ready for, and what a caller wants to know about */
enum {
	SFL_PLATFORM_SOCKET_IN = 1 << 0,
	SFL_PLATFORM_SOCKET_OUT = 1 << 1,
	/* an error or a hang-up: always reported, never needs asking for */
	SFL_PLATFORM_SOCKET_ERR = 1 << 2,
};

typedef struct SflPlatformSocketWatch SflPlatformSocketWatch;

/*
 * Prepares @sock (a file descriptor on POSIX, a SOCKET on Windows; not owned, not closed) for
 * a main loop's poll set. Two models, told apart by sfl_platform_socket_watch_is_level():
 *  - level (POSIX): the pollable is the socket itself; poll it for the readiness wanted and
 *    read the readiness from the poll result;
 *  - wakeup (Windows): the pollable is an event that WSAEventSelect signals on network events.
 *    Those events are edge-like (FD_WRITE re-arms only after a send that would have blocked,
 *    FD_READ only after a recv), so the event is a wakeup only: the readiness comes from
 *    sfl_platform_socket_watch_poll(), asked before every wait and after every wakeup.
 * On Windows the socket is switched to non-blocking mode (curl's sockets already are), and
 * only one watch may exist per socket.
 */
SflPlatformStatus sfl_platform_socket_watch_new(int64_t sock, SflPlatformSocketWatch **out_watch,
						SflPlatformError *error);

/* true when the pollable reports readiness itself (POSIX), false when it is a wakeup only */
bool sfl_platform_socket_watch_is_level(void);

/* what goes into the poll set (GLib's GPollFD.fd): the socket, or the event's HANDLE */
int64_t sfl_platform_socket_watch_pollable(const SflPlatformSocketWatch *watch);

/*
 * The socket's readiness now, as SFL_PLATFORM_SOCKET_* bits among @wanted plus ERR; never
 * blocks. Level-triggered in both models: data left unread is reported again. On Windows it
 * also resets the wakeup event, so the next network event signals it afresh.
 */
unsigned sfl_platform_socket_watch_poll(SflPlatformSocketWatch *watch, unsigned wanted);

/* undoes the association (on Windows the socket keeps no event selection); NULL is fine */
void sfl_platform_socket_watch_free(SflPlatformSocketWatch *watch);

/* --- TLS trust --------------------------------------------------------------------------- */

/*
 * True where the OS keeps its trusted CAs in a store of its own rather than in PEM files
 * (Windows): HTTP clients without a configured CA bundle should use that store (curl's
 * CURLSSLOPT_NATIVE_CA), because an OpenSSL build there has no default bundle at all.
 */
bool sfl_platform_tls_native_ca(void);

/* --- service manager --------------------------------------------------------------------- */

/*
 * Sends a state line to the service manager. On POSIX: the sd_notify datagram protocol over
 * $NOTIFY_SOCKET (a path, or "@name" for the abstract namespace), e.g. "READY=1",
 * "STATUS=leader", "STOPPING=1", "WATCHDOG=1"; without $NOTIFY_SOCKET it does nothing and
 * returns SFL_PLATFORM_OK. On Windows under the SCM, READY=1 reports SERVICE_RUNNING and
 * STOPPING=1 SERVICE_STOP_PENDING; other lines (STATUS=…, WATCHDOG=1) are ignored, so a
 * status change such as a demotion to standby never changes the service's state.
 */
SflPlatformStatus sfl_platform_notify(const char *state, SflPlatformError *error);

/*
 * The watchdog interval the service manager expects pings within, in microseconds, or 0 when
 * no watchdog is configured ($WATCHDOG_USEC unset, invalid, or $WATCHDOG_PID naming another
 * process).
 */
uint64_t sfl_platform_watchdog_usec(void);

/* called from an OS thread or signal context: it must only post a message to the main loop */
typedef void (*SflPlatformStopFunc)(void *user_data);

typedef int (*SflPlatformMainFunc)(int argc, char **argv, void *user_data);

/*
 * Runs @main_func as the service @name. POSIX: calls it directly. Windows: connects to the
 * SCM with StartServiceCtrlDispatcherW and runs @main_func in the service thread, reporting
 * START_PENDING with rising checkpoints until READY=1 is notified; when the process was not
 * started by the SCM, falls back to console mode and calls @main_func directly. Returns the
 * exit code.
 */
int sfl_platform_service_run(const char *name, SflPlatformMainFunc main_func, int argc, char **argv,
			     void *user_data);

/*
 * Installs @func to be called when the OS asks the service to stop: SCM STOP/SHUTDOWN/
 * PRESHUTDOWN and console Ctrl-C/Ctrl-Break/close on Windows. (POSIX signals are bridged by the
 * entry point through the main loop.) Passing NULL removes it.
 */
void sfl_platform_set_stop_handler(SflPlatformStopFunc func, void *user_data);

/* called from an OS thread: it must only post a message to the main loop */
typedef void (*SflPlatformReloadFunc)(void *user_data);

/*
 * Installs @func to be called when the OS asks the service to re-read its configuration: the
 * SCM's PARAMCHANGE control on Windows (accepted only while RUNNING), SIGHUP on POSIX (from a
 * thread of the platform layer, never the signal handler). Like the stop handler, once this
 * returns with NULL no callback runs or will run.
 */
void sfl_platform_set_reload_handler(SflPlatformReloadFunc func, void *user_data);

typedef struct {
	/* service.shutdown_grace in milliseconds: how long a stop may spend draining */
	uint64_t shutdown_grace_ms;
} SflPlatformServiceOptions;

/*
 * Tells the service manager what the daemon's configuration implies, once it is loaded.
 * Windows under the SCM: STOP_PENDING's wait hint and checkpoints then cover the grace (plus a
 * margin), and the service sets on itself with ChangeServiceConfig2W the preshutdown timeout
 * (the same grace plus margin) and its recovery actions (restart after 5 s, 10 s and 60 s,
 * failure count reset after a day, also on a clean exit with a nonzero code), which the MSI
 * cannot express. Every step is tried; a failure gives SFL_PLATFORM_ERR_IO naming the first
 * one that failed (a service account without SERVICE_CHANGE_CONFIG on itself is refused): the
 * service runs on without them. SFL_PLATFORM_ERR_UNSUPPORTED on POSIX and outside the SCM.
 */
SflPlatformStatus
sfl_platform_service_configure(const SflPlatformServiceOptions *options, SflPlatformError *error);

/* --- the system log ---------------------------------------------------------------------- */

typedef enum {
	SFL_PLATFORM_EVENT_ERROR,
	SFL_PLATFORM_EVENT_WARNING,
	SFL_PLATFORM_EVENT_INFO,
} SflPlatformEventType;

/*
 * Writes one already rendered and redacted log line (UTF-8) to the Windows Event Log, source
 * "sf2loki", event id 1 (whose message text is the line itself, from the message table linked
 * into the executable), while the process runs under the SCM. The source is registered by the
 * installer; the service only opens it (RegisterEventSourceW) when its service thread starts,
 * and never creates registry keys. Lines longer than the Event Log takes are cut. Safe from any
 * thread; it never logs. SFL_PLATFORM_ERR_UNSUPPORTED on POSIX (journald and launchd take
 * stderr) and outside the SCM.
 */
SflPlatformStatus
sfl_platform_event_log_write(SflPlatformEventType type, const char *text, SflPlatformError *error);

#ifdef __cplusplus
}
#endif
