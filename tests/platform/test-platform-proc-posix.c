/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/* POSIX helpers for the platform contract tests */

#include "test-platform-proc.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct TpChild {
	pid_t pid;
	int to_child;	/* the child's stdin */
	int from_child; /* the child's stdout */
};

static char tp_self[PATH_MAX];

void
tp_proc_init(int argc, char **argv)
{
	/* resolve now: a relative argv[0] would break if a test changed directory later */
	if (argc < 1 || realpath(argv[0], tp_self) == NULL)
		snprintf(tp_self, sizeof(tp_self), "%s", argc >= 1 ? argv[0] : "");
}

TpChild *
tp_child_spawn(const char *const *args)
{
	char *argv[32];
	size_t n = 0;
	TpChild *child;
	int in[2];
	int out[2];

	argv[n++] = tp_self;
	while (args[n - 1] != NULL && n < sizeof(argv) / sizeof(argv[0]) - 1) {
		/* execv's prototype predates const; the strings are not modified */
		argv[n] = (char *)args[n - 1];
		n++;
	}
	argv[n] = NULL;
	child = calloc(1, sizeof(*child));
	if (child == NULL)
		return NULL;
	if (pipe(in) != 0 || pipe(out) != 0) {
		fprintf(stderr, "# pipe: %s\n", strerror(errno));
		free(child);
		return NULL;
	}
	/* the suite is single-threaded, so fork + exec is safe and inherits the environment */
	fflush(NULL);
	child->pid = fork();
	if (child->pid < 0) {
		fprintf(stderr, "# fork: %s\n", strerror(errno));
		free(child);
		return NULL;
	}
	if (child->pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execv(tp_self, argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	child->to_child = in[1];
	child->from_child = out[0];
	return child;
}

int
tp_child_read(TpChild *child)
{
	unsigned char byte;
	ssize_t n;

	do {
		n = read(child->from_child, &byte, 1);
	} while (n < 0 && errno == EINTR);
	return n == 1 ? byte : -1;
}

void
tp_tell_parent(char byte)
{
	ssize_t n;

	do {
		n = write(STDOUT_FILENO, &byte, 1);
	} while (n < 0 && errno == EINTR);
}

void
tp_wait_for_parent(void)
{
	char byte;

	/* until end of file (the parent closed the pipe or died) or a real error */
	for (;;) {
		ssize_t n = read(STDIN_FILENO, &byte, 1);
		if (n == 0 || (n < 0 && errno != EINTR))
			return;
	}
}

bool
tp_child_wait_exited(TpChild *child)
{
	siginfo_t info;
	int rc;

	do {
		rc = waitid(P_PID, (id_t)child->pid, &info, WEXITED | WNOWAIT);
	} while (rc < 0 && errno == EINTR);
	return rc == 0;
}

int64_t
tp_child_pid(const TpChild *child)
{
	return (int64_t)child->pid;
}

bool
tp_child_kill(TpChild *child)
{
	return kill(child->pid, SIGKILL) == 0;
}

int
tp_child_wait(TpChild *child)
{
	int status = 0;
	pid_t rc;

	do {
		rc = waitpid(child->pid, &status, 0);
	} while (rc < 0 && errno == EINTR);
	close(child->to_child);
	close(child->from_child);
	free(child);
	if (rc < 0)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

char *
tp_make_temp_dir(void)
{
	const char *base = getenv("TMPDIR");
	char path[PATH_MAX];

	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	snprintf(path, sizeof(path), "%s/sfl-test-platform.XXXXXX", base);
	if (mkdtemp(path) == NULL)
		return NULL;
	return strdup(path);
}

bool
tp_remove_tree(const char *path)
{
	struct stat st;
	struct dirent *ent;
	bool ok = true;
	DIR *d;

	if (lstat(path, &st) != 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) == 0;
	/* a test may have removed our own permissions on the directory */
	chmod(path, 0700);
	d = opendir(path);
	if (d == NULL)
		return false;
	while ((ent = readdir(d)) != NULL) {
		char child[PATH_MAX];

		if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, ent->d_name);
		ok = tp_remove_tree(child) && ok;
	}
	closedir(d);
	return rmdir(path) == 0 && ok;
}

bool
tp_make_dir(const char *path)
{
	return mkdir(path, 0700) == 0;
}

bool
tp_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int
tp_count_entries(const char *dir, const char *substring)
{
	struct dirent *ent;
	int count = 0;
	DIR *d;

	d = opendir(dir);
	if (d == NULL)
		return -1;
	while ((ent = readdir(d)) != NULL) {
		if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
			continue;
		if (strstr(ent->d_name, substring) != NULL)
			count++;
	}
	closedir(d);
	return count;
}

int
tp_file_mode(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	return (int)(st.st_mode & 07777);
}

static bool tp_dropped_root;

bool
tp_make_unreadable(const char *path, const char **skip_reason)
{
	if (chmod(path, 0) != 0) {
		*skip_reason = "chmod failed";
		return false;
	}
	if (geteuid() == 0) {
		/*
		 * root ignores permission bits: act as nobody until tp_restore_privileges(); only
		 * the effective uid changes, so root can come back. The parent directory must be
		 * traversable for the file's own bits to be what refuses.
		 */
		char *dir = strdup(path);
		char *slash = dir != NULL ? strrchr(dir, '/') : NULL;
		if (slash != NULL) {
			*slash = '\0';
			chmod(dir, 0711);
		}
		free(dir);
		if (seteuid(65534) != 0) {
			*skip_reason = "running as root and cannot drop to uid 65534";
			return false;
		}
		tp_dropped_root = true;
	}
	return true;
}

void
tp_restore_privileges(void)
{
	if (tp_dropped_root && seteuid(0) == 0)
		tp_dropped_root = false;
}

bool
tp_set_env(const char *name, const char *value)
{
	if (value == NULL)
		return unsetenv(name) == 0;
	return setenv(name, value, 1) == 0;
}
