/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Crash safety of sfl_platform_replace_file (POSIX). A forked child rewrites one file in a
 * tight loop, alternating between two complete versions of different sizes, and is killed with
 * SIGKILL at a random moment, again and again. After every kill the file must read back as
 * exactly one of the two versions, and at most one temp file (the one the dead child was
 * writing) may be left; the next replace must clean that up. Prints TAP.
 */

#include "sfl-platform.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KILLS  250
#define SIZE_A (64 * 1024)
#define SIZE_B (128 * 1024)
/* the kill lands 0-3 ms after the fork */
/* completed replaces a child may report before it is killed */
#define MAX_STEPS    3
#define CHILD_FAILED 3

static char version_a[SIZE_A];
static char version_b[SIZE_B];

/* two complete versions: a torn write would lose the trailer or mix the fill bytes */
static void
make_versions(void)
{
	memset(version_a, 'A', SIZE_A);
	memcpy(version_a + SIZE_A - 5, "A-END", 5);
	memset(version_b, 'B', SIZE_B);
	memcpy(version_b + SIZE_B - 5, "B-END", 5);
}

/* xorshift64*: reproducible from the printed seed */
static uint64_t
next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

static int
count_temps(const char *dir)
{
	struct dirent *ent;
	int count = 0;
	DIR *d = opendir(dir);

	if (d == NULL)
		return -1;
	while ((ent = readdir(d)) != NULL) {
		if (strstr(ent->d_name, ".sfl-tmp.") != NULL)
			count++;
	}
	closedir(d);
	return count;
}

static void
remove_dir(const char *dir)
{
	struct dirent *ent;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((ent = readdir(d)) != NULL) {
		char path[4096];

		if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/*
 * The child: rewrites forever until SIGKILL, starting with the version not there now, and
 * reports each step on a pipe. The parent kills it after a random number of completed
 * replaces: zero interrupts the first rewrite (which also removes the last child's temp), more
 * make every kill follow at least one rename.
 */
static void
rewrite_loop(const char *path, char current, int progress_fd)
{
	const char *first = current == 'A' ? version_b : version_a;
	const char *second = current == 'A' ? version_a : version_b;
	size_t first_len = current == 'A' ? SIZE_B : SIZE_A;
	size_t second_len = current == 'A' ? SIZE_A : SIZE_B;
	SflPlatformError err;

	/* one byte when running, then one per completed replace: the parent kills on a count */
	if (write(progress_fd, "r", 1) != 1)
		_exit(CHILD_FAILED);
	for (;;) {
		if (sfl_platform_replace_file(path, first, first_len, &err) != SFL_PLATFORM_OK) {
			fprintf(stderr, "# child: %s\n", err.message);
			_exit(CHILD_FAILED);
		}
		if (write(progress_fd, "p", 1) != 1)
			_exit(CHILD_FAILED);
		if (sfl_platform_replace_file(path, second, second_len, &err) != SFL_PLATFORM_OK) {
			fprintf(stderr, "# child: %s\n", err.message);
			_exit(CHILD_FAILED);
		}
		if (write(progress_fd, "p", 1) != 1)
			_exit(CHILD_FAILED);
	}
}

/* 'A' or 'B' for a complete version, 0 for anything else */
static char
classify(const char *path)
{
	SflPlatformError err;
	char *data = NULL;
	size_t len = 0;
	char which = 0;

	if (sfl_platform_read_file(path, 1 << 20, &data, &len, &err) != SFL_PLATFORM_OK) {
		printf("# read %s: %s\n", path, err.message);
		return 0;
	}
	if (len == SIZE_A && memcmp(data, version_a, SIZE_A) == 0)
		which = 'A';
	else if (len == SIZE_B && memcmp(data, version_b, SIZE_B) == 0)
		which = 'B';
	else
		printf("# torn file: %zu bytes, starting with '%c'\n", len,
		       len > 0 ? data[0] : '?');
	sfl_platform_free(data);
	return which;
}

int
main(void)
{
	const char *base = getenv("TMPDIR");
	char dir[4096];
	char path[4200];
	SflPlatformError err;
	uint64_t seed = (uint64_t)sfl_platform_wall_ns() ^ ((uint64_t)getpid() << 32);
	uint64_t state = seed | 1;
	int64_t start = sfl_platform_monotonic_ns();
	int kills = 0;
	int not_killed = 0;
	int torn = 0;
	int changes = 0;
	int temp_violations = 0;
	int max_temps = 0;
	int seen_a = 0;
	int seen_b = 0;
	int final_temps;
	char previous = 'A';
	bool final_ok;
	bool passed;

	setvbuf(stdout, NULL, _IONBF, 0);
	make_versions();
	snprintf(dir, sizeof(dir), "%s/sfl-test-crash.XXXXXX",
		 base != NULL && base[0] != '\0' ? base : "/tmp");
	printf("1..5\n");
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! cannot create a temp directory: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/checkpoint.bin", dir);
	if (sfl_platform_replace_file(path, version_a, SIZE_A, &err) != SFL_PLATFORM_OK) {
		printf("Bail out! %s\n", err.message);
		remove_dir(dir);
		return 1;
	}
	printf("# seed %" PRIu64 ", directory %s\n", seed, dir);

	for (int i = 0; i < KILLS; i++) {
		/* kill after a random number of completed replaces: 0 lands in the very first one
		 */
		int steps = (int)(next_random(&state) % (MAX_STEPS + 1));
		int status = 0;
		int ready[2];
		char byte;
		char which;
		int temps;
		pid_t pid;

		fflush(stdout);
		if (pipe(ready) != 0 || (pid = fork()) < 0) {
			printf("Bail out! pipe/fork: %s\n", strerror(errno));
			remove_dir(dir);
			return 1;
		}
		if (pid == 0) {
			close(ready[0]);
			rewrite_loop(path, previous, ready[1]);
		}
		close(ready[1]);
		/*
		 * block on the child's own progress reports; SIGKILL then races with whatever it
		 * does next, so kills land inside temp writes, fsyncs and renames alike. EOF means
		 * it died first, which the status shows.
		 */
		for (int seen = 0; seen <= steps;) {
			ssize_t n = read(ready[0], &byte, 1);
			if (n == 1)
				seen++;
			else if (n == 0 || errno != EINTR)
				break;
		}
		kill(pid, SIGKILL);
		close(ready[0]);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
		}
		kills++;
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			not_killed++;

		which = classify(path);
		if (which == 0)
			torn++;
		else {
			seen_a += which == 'A';
			seen_b += which == 'B';
			changes += which != previous;
			previous = which;
		}
		temps = count_temps(dir);
		if (temps > max_temps)
			max_temps = temps;
		if (temps < 0 || temps > 1) {
			printf("# after kill %d: %d temp files\n", kills, temps);
			temp_violations++;
		}
	}

	/* the last child's temp (if any) belongs to a dead pid of this host */
	final_ok = sfl_platform_replace_file(path, version_b, SIZE_B, &err) == SFL_PLATFORM_OK;
	if (!final_ok)
		printf("# final replace: %s\n", err.message);
	final_temps = count_temps(dir);

	printf("# %d kills in %.2f s: %d times A, %d times B, %d changes, at most %d temps\n",
	       kills, (double)(sfl_platform_monotonic_ns() - start) / 1e9, seen_a, seen_b, changes,
	       max_temps);
	printf("%s 1 - %d kills: every child died of SIGKILL, none failed\n",
	       not_killed == 0 ? "ok" : "not ok", kills);
	printf("%s 2 - %d kills: the file was one complete version every time (%d torn)\n",
	       torn == 0 ? "ok" : "not ok", kills, torn);
	printf("%s 3 - %d kills: at most one temp file left after each (max %d)\n",
	       temp_violations == 0 ? "ok" : "not ok", kills, max_temps);
	/* without changes no kill followed a rename, and the renames went untested */
	printf("%s 4 - %d kills: the children rewrote the file between kills (%d changes)\n",
	       changes > 0 ? "ok" : "not ok", kills, changes);
	printf("%s 5 - after %d kills the next replace left no temp file (%d)\n",
	       final_ok && final_temps == 0 ? "ok" : "not ok", kills, final_temps);

	remove_dir(dir);
	passed = not_killed == 0 && torn == 0 && temp_violations == 0 && changes > 0 && final_ok &&
		 final_temps == 0;
	return passed ? 0 : 1;
}
