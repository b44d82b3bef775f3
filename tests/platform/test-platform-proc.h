/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

/*
 * The few OS-specific helpers the platform contract tests need: running a child copy of the
 * test executable, killing it hard, and scratch directories. Implemented once per OS so the
 * test cases themselves stay portable C.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef _WIN32
#define TP_SEP "\\"
#else
#define TP_SEP "/"
#endif

typedef struct TpChild TpChild;

/* remembers how this executable was started, so children can run the same file */
void tp_proc_init(int argc, char **argv);

/* starts this executable with @args (NULL-terminated, not including argv[0]); NULL on error */
TpChild *tp_child_spawn(const char *const *args);

int64_t tp_child_pid(const TpChild *child);

/*
 * Every child's stdin and stdout are pipes to the parent, so the two can hand over without
 * anyone polling: the child reports with tp_tell_parent(), the parent blocks in
 * tp_child_read() until that byte arrives (or the child's stdout closes: -1). A child that
 * waits in tp_wait_for_parent() returns when the parent closes its stdin or dies.
 */
int tp_child_read(TpChild *child);
void tp_tell_parent(char byte);
void tp_wait_for_parent(void);

/* blocks until the child has exited, without reaping it (a zombie; a handle still open) */
bool tp_child_wait_exited(TpChild *child);

/* kills without giving the child a chance to clean up: SIGKILL, TerminateProcess */
bool tp_child_kill(TpChild *child);

/*
 * Waits for the child, reaps it and frees @child. Returns its exit code, 128 + the signal
 * number when a signal killed it, or -1 when waiting failed.
 */
int tp_child_wait(TpChild *child);

/* a new, empty directory in the system temp location (malloc()ed path), or NULL */
char *tp_make_temp_dir(void);

/* removes @path and everything below it */
bool tp_remove_tree(const char *path);

bool tp_make_dir(const char *path);

/* whether anything (file or directory) exists at @path */
bool tp_exists(const char *path);

/* entries of @dir whose name contains @substring ("" counts all), or -1 on error */
int tp_count_entries(const char *dir, const char *substring);

/* permission bits of @path, or -1 where the OS has none (Windows) or on error */
int tp_file_mode(const char *path);

/*
 * Makes @path unreadable for this process. Returns false and sets *@skip_reason when that
 * cannot be meaningful here (root ignores permission bits, wine ignores ACLs).
 */
bool tp_make_unreadable(const char *path, const char **skip_reason);
/* undoes what tp_make_unreadable() did to the caller (the privileges it dropped) */
void tp_restore_privileges(void);

/* sets (or with NULL unsets) an environment variable */
bool tp_set_env(const char *name, const char *value);
