/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The Windows service state machine, in plain C so it runs natively under meson and, built
 * with mingw-w64, under wine. A tiny TAP harness: one line per case, diagnostics as comments.
 */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sfl-scm.h"

static bool test_case_ok;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("# %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);          \
			test_case_ok = false;                                                      \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		unsigned long long check_a_ = (unsigned long long)(a);                             \
		unsigned long long check_b_ = (unsigned long long)(b);                             \
		if (check_a_ != check_b_) {                                                        \
			printf("# %s:%d: %s == %s failed: %llu != %llu\n", __FILE__, __LINE__, #a, \
			       #b, check_a_, check_b_);                                            \
			test_case_ok = false;                                                      \
		}                                                                                  \
	} while (0)

static bool
test_same_status(const SflScmStatus *a, const SflScmStatus *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* a service that has reported START_PENDING and then RUNNING */
static void
test_running(SflScm *scm)
{
	SflScmStatus st;

	sfl_scm_start(scm, &st);
	CHECK(sfl_scm_ready(scm, &st));
	CHECK_EQ(st.state, SFL_SCM_STATE_RUNNING);
}

static void
test_start_pending(void)
{
	SflScm scm;
	SflScmStatus st;

	sfl_scm_start(&scm, &st);
	CHECK_EQ(st.state, SFL_SCM_STATE_START_PENDING);
	CHECK_EQ(st.checkpoint, 1);
	CHECK(st.wait_hint_ms > 0);
	/* nothing is accepted before the daemon is ready */
	CHECK_EQ(st.controls_accepted, 0);
	CHECK_EQ(st.win32_exit_code, SFL_SCM_NO_ERROR);
}

static void
test_start_checkpoints_rise(void)
{
	SflScm scm;
	SflScmStatus st;
	uint32_t last;

	sfl_scm_start(&scm, &st);
	last = st.checkpoint;
	for (int i = 0; i < 5; i++) {
		CHECK(sfl_scm_progress(&scm, &st));
		CHECK_EQ(st.state, SFL_SCM_STATE_START_PENDING);
		CHECK_EQ(st.checkpoint, last + 1);
		CHECK(st.wait_hint_ms > 0);
		CHECK_EQ(st.controls_accepted, 0);
		last = st.checkpoint;
	}
}

static void
test_progress_capped(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmStatus before;
	unsigned reported = 0;

	sfl_scm_start(&scm, &st);
	while (sfl_scm_progress(&scm, &st) && reported <= SFL_SCM_MAX_TICKS)
		reported++;
	CHECK_EQ(reported, SFL_SCM_MAX_TICKS);
	/* a hung start-up stops raising the checkpoint, so the SCM's wait hint can run out */
	before = scm.status;
	CHECK(!sfl_scm_progress(&scm, &st));
	CHECK(test_same_status(&before, &scm.status));
	/* the cap is per phase: READY still works, and the drain gets its own budget */
	CHECK(sfl_scm_ready(&scm, &st));
	CHECK(sfl_scm_stopping(&scm, &st));
	CHECK(sfl_scm_progress(&scm, &st));
}

static void
test_stop_before_running(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmStatus before;
	SflScmAction action;

	sfl_scm_start(&scm, &st);
	before = scm.status;
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_stop);
	CHECK(!action.report);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_SHUTDOWN, &action), SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_stop);
	CHECK(test_same_status(&before, &scm.status));
	/* the refused stop is not remembered: the first accepted one still asks */
	CHECK(sfl_scm_ready(&scm, &st));
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_HANDLED);
	CHECK(action.request_stop);
}

static void
test_ready_running(void)
{
	SflScm scm;
	SflScmStatus st;

	sfl_scm_start(&scm, &st);
	CHECK(sfl_scm_progress(&scm, &st));
	CHECK(sfl_scm_ready(&scm, &st));
	CHECK_EQ(st.state, SFL_SCM_STATE_RUNNING);
	CHECK_EQ(st.controls_accepted, SFL_SCM_ACCEPT_STOP | SFL_SCM_ACCEPT_SHUTDOWN |
					       SFL_SCM_ACCEPT_PRESHUTDOWN |
					       SFL_SCM_ACCEPT_PARAMCHANGE);
	/* Windows' own values, which the glue passes on unchanged */
	CHECK_EQ(st.controls_accepted, 0x1u | 0x4u | 0x8u | 0x100u);
	CHECK_EQ(st.checkpoint, 0);
	CHECK_EQ(st.wait_hint_ms, 0);
	/* no checkpoints while running, and READY is not repeated */
	CHECK(!sfl_scm_progress(&scm, &st));
	CHECK(!sfl_scm_ready(&scm, &st));
}

static void
test_interrogate(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmStatus before;
	SflScmAction action;

	sfl_scm_start(&scm, &st);
	CHECK(sfl_scm_progress(&scm, &st));
	before = scm.status;
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_INTERROGATE, &action),
		 SFL_SCM_CONTROL_HANDLED);
	CHECK(action.report);
	CHECK(!action.request_stop);
	CHECK(test_same_status(&action.status, &before));
	CHECK(test_same_status(&scm.status, &before));

	CHECK(sfl_scm_ready(&scm, &st));
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_INTERROGATE, &action),
		 SFL_SCM_CONTROL_HANDLED);
	CHECK(action.report);
	CHECK(test_same_status(&action.status, &st));
	CHECK(test_same_status(&scm.status, &st));
}

static void
test_stop_once(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmStatus pending;
	SflScmAction action;

	test_running(&scm);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_HANDLED);
	CHECK(action.report);
	CHECK(action.request_stop);
	CHECK_EQ(action.status.state, SFL_SCM_STATE_STOP_PENDING);
	CHECK_EQ(action.status.controls_accepted, 0);
	CHECK_EQ(action.status.checkpoint, 1);
	CHECK(action.status.wait_hint_ms > 0);
	pending = action.status;

	/* a second stop during the drain is ignored: no second callback, no status change */
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_stop);
	CHECK(!action.report);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_SHUTDOWN, &action), SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_stop);
	CHECK(test_same_status(&scm.status, &pending));

	/* the daemon's own STOPPING=1 and the ticker both raise the checkpoint */
	CHECK(sfl_scm_stopping(&scm, &st));
	CHECK_EQ(st.state, SFL_SCM_STATE_STOP_PENDING);
	CHECK_EQ(st.checkpoint, 2);
	CHECK(sfl_scm_progress(&scm, &st));
	CHECK_EQ(st.checkpoint, 3);
	CHECK(!sfl_scm_ready(&scm, &st));

	sfl_scm_exit(&scm, 0, &st);
	CHECK_EQ(st.state, SFL_SCM_STATE_STOPPED);
	CHECK_EQ(st.controls_accepted, 0);
	CHECK_EQ(st.checkpoint, 0);
	CHECK_EQ(st.wait_hint_ms, 0);
	CHECK_EQ(st.win32_exit_code, SFL_SCM_NO_ERROR);
	CHECK_EQ(st.service_exit_code, 0);
}

static void
test_shutdown_as_stop(void)
{
	SflScm scm;
	SflScmAction action;

	test_running(&scm);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_SHUTDOWN, &action), SFL_SCM_CONTROL_HANDLED);
	CHECK(action.report);
	CHECK(action.request_stop);
	CHECK_EQ(action.status.state, SFL_SCM_STATE_STOP_PENDING);
	CHECK_EQ(action.status.controls_accepted, 0);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_stop);
}

static void
test_stopping_without_control(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmAction action;

	test_running(&scm);
	CHECK(sfl_scm_stopping(&scm, &st));
	CHECK_EQ(st.state, SFL_SCM_STATE_STOP_PENDING);
	CHECK_EQ(st.controls_accepted, 0);
	CHECK_EQ(st.checkpoint, 1);
	/* the daemon is already on its way out; a late STOP must not ask it again */
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_stop);
}

static void
test_exit_code(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmAction action;

	/* a configuration error ends the start-up with exit 2 */
	sfl_scm_start(&scm, &st);
	sfl_scm_exit(&scm, 2, &st);
	CHECK_EQ(st.state, SFL_SCM_STATE_STOPPED);
	CHECK_EQ(st.win32_exit_code, SFL_SCM_ERROR_SERVICE_SPECIFIC);
	CHECK_EQ(st.service_exit_code, 2);
	CHECK_EQ(st.checkpoint, 0);
	CHECK(!sfl_scm_progress(&scm, &st));
	CHECK(!sfl_scm_stopping(&scm, &st));
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_REFUSED);

	test_running(&scm);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_HANDLED);
	sfl_scm_exit(&scm, 1, &st);
	CHECK_EQ(st.win32_exit_code, SFL_SCM_ERROR_SERVICE_SPECIFIC);
	CHECK_EQ(st.service_exit_code, 1);
}

static void
test_unknown_control(void)
{
	SflScm scm;
	SflScmAction action;
	SflScmStatus before;

	test_running(&scm);
	before = scm.status;
	/* SERVICE_CONTROL_PAUSE and a user-defined code */
	CHECK_EQ(sfl_scm_control(&scm, 2, &action), SFL_SCM_CONTROL_REFUSED);
	CHECK_EQ(sfl_scm_control(&scm, 200, &action), SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.report);
	CHECK(!action.request_stop);
	CHECK(test_same_status(&scm.status, &before));
}

static void
test_preshutdown_as_stop(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmAction action;

	/* refused while starting, like STOP: the start-up cannot drain yet */
	sfl_scm_start(&scm, &st);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_PRESHUTDOWN, &action),
		 SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_stop);

	test_running(&scm);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_PRESHUTDOWN, &action),
		 SFL_SCM_CONTROL_HANDLED);
	CHECK(action.report);
	CHECK(action.request_stop);
	CHECK(!action.request_reload);
	CHECK_EQ(action.status.state, SFL_SCM_STATE_STOP_PENDING);
	CHECK_EQ(action.status.controls_accepted, 0);
	CHECK_EQ(action.status.checkpoint, 1);
	/* the SHUTDOWN that follows a preshutdown (and any STOP) is not a second request */
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_SHUTDOWN, &action), SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_stop);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_PRESHUTDOWN, &action),
		 SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_stop);
	sfl_scm_exit(&scm, 0, &st);
	CHECK_EQ(st.win32_exit_code, SFL_SCM_NO_ERROR);
}

static void
test_paramchange(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmStatus before;
	SflScmAction action;

	sfl_scm_start(&scm, &st);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_PARAMCHANGE, &action),
		 SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_reload);

	test_running(&scm);
	before = scm.status;
	/* each one asks for a reload; nothing about the service changes */
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_PARAMCHANGE, &action),
			 SFL_SCM_CONTROL_HANDLED);
		CHECK(action.request_reload);
		CHECK(!action.request_stop);
		CHECK(!action.report);
		CHECK(test_same_status(&scm.status, &before));
	}
	/* a reload request is no stop: the first STOP still asks */
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_HANDLED);
	CHECK(action.request_stop);
	/* and once draining, a reload is refused */
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_PARAMCHANGE, &action),
		 SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_reload);
	sfl_scm_exit(&scm, 0, &st);
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_PARAMCHANGE, &action),
		 SFL_SCM_CONTROL_REFUSED);
	CHECK(!action.request_reload);
}

/* one line through the parser, as the glue hands it over */
static bool
test_line(SflScm *scm, const char *line, SflScmStatus *st)
{
	return sfl_scm_notify_line(scm, line, strlen(line), st);
}

static void
test_notify_lines(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmStatus before;
	static const char *const inert[] = {
		"STATUS=leader",
		/* what the daemon says after a fenced commit: it demotes and keeps running */
		"STATUS=standby",
		"WATCHDOG=1",
		"READY=10",
		"STOPPING=0",
		"MAINPID=42",
		"",
	};

	sfl_scm_start(&scm, &st);
	/* a line is exactly its @len bytes, neither more nor less */
	CHECK(!test_line(&scm, "READY=1\nSTATUS=x", &st));
	CHECK(!sfl_scm_notify_line(&scm, "READY=1", 6, &st));
	CHECK_EQ(scm.status.state, SFL_SCM_STATE_START_PENDING);
	CHECK(sfl_scm_notify_line(&scm, "READY=1\nSTATUS=x", 7, &st));
	CHECK_EQ(st.state, SFL_SCM_STATE_RUNNING);

	before = scm.status;
	for (unsigned i = 0; i < sizeof(inert) / sizeof(inert[0]); i++) {
		CHECK(!test_line(&scm, inert[i], &st));
		CHECK(test_same_status(&scm.status, &before));
	}
	/* READY=1 again is not a second RUNNING report */
	CHECK(!test_line(&scm, "READY=1", &st));
	CHECK(test_same_status(&scm.status, &before));

	CHECK(test_line(&scm, "STOPPING=1", &st));
	CHECK_EQ(st.state, SFL_SCM_STATE_STOP_PENDING);
	CHECK_EQ(st.checkpoint, 1);
	before = scm.status;
	CHECK(!test_line(&scm, "STATUS=stopping", &st));
	CHECK(!test_line(&scm, "WATCHDOG=1", &st));
	CHECK(test_same_status(&scm.status, &before));
}

static void
test_shutdown_grace_budget(void)
{
	SflScm scm;
	SflScmStatus st;
	SflScmAction action;
	unsigned reported = 0;

	/* before the daemon says its grace, the drain gets the defaults */
	test_running(&scm);
	CHECK(sfl_scm_stopping(&scm, &st));
	CHECK_EQ(st.wait_hint_ms, SFL_SCM_WAIT_HINT_MS);

	/* the default grace, 25 s: a 35 s hint, the default tick cap */
	sfl_scm_start(&scm, &st);
	CHECK_EQ(sfl_scm_set_shutdown_grace(&scm, 25000), 25000 + SFL_SCM_STOP_MARGIN_MS);
	/* starting is not draining: its hint stays */
	CHECK_EQ(scm.status.wait_hint_ms, SFL_SCM_WAIT_HINT_MS);
	CHECK(sfl_scm_progress(&scm, &st));
	CHECK_EQ(st.wait_hint_ms, SFL_SCM_WAIT_HINT_MS);
	CHECK(sfl_scm_ready(&scm, &st));
	CHECK_EQ(sfl_scm_control(&scm, SFL_SCM_CONTROL_STOP, &action), SFL_SCM_CONTROL_HANDLED);
	CHECK_EQ(action.status.wait_hint_ms, 25000 + SFL_SCM_STOP_MARGIN_MS);
	CHECK(sfl_scm_progress(&scm, &st));
	CHECK_EQ(st.wait_hint_ms, 25000 + SFL_SCM_STOP_MARGIN_MS);

	/* ten minutes of grace: the ticker keeps the checkpoint rising for all of it */
	sfl_scm_start(&scm, &st);
	CHECK_EQ(sfl_scm_set_shutdown_grace(&scm, 600000), 600000 + SFL_SCM_STOP_MARGIN_MS);
	CHECK(sfl_scm_ready(&scm, &st));
	CHECK(sfl_scm_stopping(&scm, &st));
	while (sfl_scm_progress(&scm, &st) && reported <= 1000)
		reported++;
	CHECK_EQ(reported,
		 (600000 + SFL_SCM_STOP_MARGIN_MS + SFL_SCM_TICK_MS - 1) / SFL_SCM_TICK_MS);
	CHECK((uint64_t)reported * SFL_SCM_TICK_MS >= 600000);

	/* set while already draining: the next report carries the longer hint */
	test_running(&scm);
	CHECK(sfl_scm_stopping(&scm, &st));
	sfl_scm_set_shutdown_grace(&scm, 120000);
	CHECK(sfl_scm_progress(&scm, &st));
	CHECK_EQ(st.wait_hint_ms, 120000 + SFL_SCM_STOP_MARGIN_MS);

	/* never below the defaults, never wrapped */
	sfl_scm_start(&scm, &st);
	CHECK_EQ(sfl_scm_set_shutdown_grace(&scm, 0), SFL_SCM_STOP_MARGIN_MS > SFL_SCM_WAIT_HINT_MS
							      ? SFL_SCM_STOP_MARGIN_MS
							      : SFL_SCM_WAIT_HINT_MS);
	CHECK_EQ(scm.stop_max_ticks, SFL_SCM_MAX_TICKS);
	CHECK_EQ(sfl_scm_set_shutdown_grace(&scm, UINT64_MAX), UINT32_MAX);
	CHECK_EQ(sfl_scm_set_shutdown_grace(&scm, (uint64_t)UINT32_MAX - 1), UINT32_MAX);
}

typedef struct {
	const char *name;
	void (*func)(void);
} TestCase;

int
main(void)
{
	static const TestCase cases[] = {
		{ "start reports START_PENDING accepting nothing", test_start_pending },
		{ "START_PENDING checkpoints rise with each progress event",
		  test_start_checkpoints_rise },
		{ "progress is capped per pending phase", test_progress_capped },
		{ "STOP and SHUTDOWN before RUNNING are not accepted", test_stop_before_running },
		{ "READY gives RUNNING accepting STOP and SHUTDOWN", test_ready_running },
		{ "INTERROGATE reports the current status unchanged", test_interrogate },
		{ "STOP gives STOP_PENDING and one stop request, then STOPPED", test_stop_once },
		{ "SHUTDOWN behaves as STOP", test_shutdown_as_stop },
		{ "STOPPING=1 without a control enters STOP_PENDING",
		  test_stopping_without_control },
		{ "STOPPED carries the exit code", test_exit_code },
		{ "unknown controls are refused", test_unknown_control },
		{ "PRESHUTDOWN behaves as STOP, once", test_preshutdown_as_stop },
		{ "PARAMCHANGE asks for a reload while RUNNING only", test_paramchange },
		{ "STATUS= and WATCHDOG=1 lines leave the state alone", test_notify_lines },
		{ "the drain's wait hint and checkpoints cover the shutdown grace",
		  test_shutdown_grace_budget },
	};
	/* unsigned and %u: msvcrt's printf under wine predates %zu */
	const unsigned n = (unsigned)(sizeof(cases) / sizeof(cases[0]));
	int failed = 0;

	printf("1..%u\n", n);
	for (unsigned i = 0; i < n; i++) {
		test_case_ok = true;
		cases[i].func();
		printf("%s %u - %s\n", test_case_ok ? "ok" : "not ok", i + 1, cases[i].name);
		failed += !test_case_ok;
	}
	fflush(stdout);
	return failed == 0 ? 0 : 1;
}
