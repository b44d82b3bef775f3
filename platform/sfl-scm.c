/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "sfl-scm.h"

#include <string.h>

static void
sfl_scm_enter(SflScm *scm, SflScmState state, uint32_t accepted)
{
	scm->status.state = (uint32_t)state;
	scm->status.controls_accepted = accepted;
	scm->ticks = 0;
	if (state == SFL_SCM_STATE_START_PENDING) {
		scm->status.checkpoint = 1;
		scm->status.wait_hint_ms = SFL_SCM_WAIT_HINT_MS;
	} else if (state == SFL_SCM_STATE_STOP_PENDING) {
		scm->status.checkpoint = 1;
		scm->status.wait_hint_ms = scm->stop_wait_hint_ms;
	} else {
		/* the SCM wants both at zero outside pending states */
		scm->status.checkpoint = 0;
		scm->status.wait_hint_ms = 0;
	}
}

void
sfl_scm_start(SflScm *scm, SflScmStatus *report)
{
	memset(scm, 0, sizeof(*scm));
	scm->stop_wait_hint_ms = SFL_SCM_WAIT_HINT_MS;
	scm->stop_max_ticks = SFL_SCM_MAX_TICKS;
	sfl_scm_enter(scm, SFL_SCM_STATE_START_PENDING, 0);
	*report = scm->status;
}

uint32_t
sfl_scm_set_shutdown_grace(SflScm *scm, uint64_t grace_ms)
{
	uint64_t hint = grace_ms + SFL_SCM_STOP_MARGIN_MS;
	uint64_t ticks;

	/* an absurd grace must not wrap into a short hint */
	if (grace_ms > UINT32_MAX || hint > UINT32_MAX)
		hint = UINT32_MAX;
	if (hint < SFL_SCM_WAIT_HINT_MS)
		hint = SFL_SCM_WAIT_HINT_MS;
	ticks = (hint + SFL_SCM_TICK_MS - 1) / SFL_SCM_TICK_MS;
	if (ticks < SFL_SCM_MAX_TICKS)
		ticks = SFL_SCM_MAX_TICKS;
	scm->stop_wait_hint_ms = (uint32_t)hint;
	scm->stop_max_ticks = (uint32_t)ticks;
	/* a drain already under way gets the longer budget at its next report */
	if (scm->status.state == SFL_SCM_STATE_STOP_PENDING)
		scm->status.wait_hint_ms = scm->stop_wait_hint_ms;
	return scm->stop_wait_hint_ms;
}

bool
sfl_scm_progress(SflScm *scm, SflScmStatus *report)
{
	if (scm->status.state != SFL_SCM_STATE_START_PENDING &&
	    scm->status.state != SFL_SCM_STATE_STOP_PENDING)
		return false;
	if (scm->ticks >= (scm->status.state == SFL_SCM_STATE_STOP_PENDING ? scm->stop_max_ticks
									   : SFL_SCM_MAX_TICKS))
		return false;
	scm->ticks++;
	scm->status.checkpoint++;
	*report = scm->status;
	return true;
}

bool
sfl_scm_ready(SflScm *scm, SflScmStatus *report)
{
	if (scm->status.state != SFL_SCM_STATE_START_PENDING)
		return false;
	sfl_scm_enter(scm, SFL_SCM_STATE_RUNNING, SFL_SCM_ACCEPT_RUNNING);
	*report = scm->status;
	return true;
}

bool
sfl_scm_stopping(SflScm *scm, SflScmStatus *report)
{
	switch ((SflScmState)scm->status.state) {
	case SFL_SCM_STATE_START_PENDING:
	case SFL_SCM_STATE_RUNNING:
		sfl_scm_enter(scm, SFL_SCM_STATE_STOP_PENDING, 0);
		*report = scm->status;
		return true;
	case SFL_SCM_STATE_STOP_PENDING:
		/* usually the echo of a STOP control: the drain has begun, which is progress */
		return sfl_scm_progress(scm, report);
	case SFL_SCM_STATE_STOPPED:
		break;
	}
	return false;
}

static bool
sfl_scm_line_is(const char *line, size_t len, const char *what)
{
	return len == strlen(what) && strncmp(line, what, len) == 0;
}

bool
sfl_scm_notify_line(SflScm *scm, const char *line, size_t len, SflScmStatus *report)
{
	if (sfl_scm_line_is(line, len, "READY=1"))
		return sfl_scm_ready(scm, report);
	if (sfl_scm_line_is(line, len, "STOPPING=1"))
		return sfl_scm_stopping(scm, report);
	/* STATUS= (leader, standby after a fenced commit…) and WATCHDOG=1 mean nothing here */
	return false;
}

SflScmControlResult
sfl_scm_control(SflScm *scm, uint32_t control, SflScmAction *action)
{
	uint32_t needed;

	memset(action, 0, sizeof(*action));
	switch (control) {
	case SFL_SCM_CONTROL_INTERROGATE:
		action->report = true;
		action->status = scm->status;
		return SFL_SCM_CONTROL_HANDLED;
	case SFL_SCM_CONTROL_STOP:
		needed = SFL_SCM_ACCEPT_STOP;
		break;
	case SFL_SCM_CONTROL_SHUTDOWN:
		needed = SFL_SCM_ACCEPT_SHUTDOWN;
		break;
	case SFL_SCM_CONTROL_PRESHUTDOWN:
		/* the system is going down and waits the preshutdown timeout for us: a STOP */
		needed = SFL_SCM_ACCEPT_PRESHUTDOWN;
		break;
	case SFL_SCM_CONTROL_PARAMCHANGE:
		if ((scm->status.controls_accepted & SFL_SCM_ACCEPT_PARAMCHANGE) == 0)
			return SFL_SCM_CONTROL_REFUSED;
		/* the state stays as it is; the SCM needs no report for this one */
		action->request_reload = true;
		return SFL_SCM_CONTROL_HANDLED;
	default:
		return SFL_SCM_CONTROL_REFUSED;
	}

	/* only RUNNING accepts them, so a repeat during the drain is refused, not re-delivered */
	if ((scm->status.controls_accepted & needed) == 0)
		return SFL_SCM_CONTROL_REFUSED;
	sfl_scm_enter(scm, SFL_SCM_STATE_STOP_PENDING, 0);
	action->report = true;
	action->status = scm->status;
	if (!scm->stop_requested) {
		scm->stop_requested = true;
		action->request_stop = true;
	}
	return SFL_SCM_CONTROL_HANDLED;
}

void
sfl_scm_exit(SflScm *scm, int exit_code, SflScmStatus *report)
{
	sfl_scm_enter(scm, SFL_SCM_STATE_STOPPED, 0);
	if (exit_code == 0) {
		scm->status.win32_exit_code = SFL_SCM_NO_ERROR;
		scm->status.service_exit_code = 0;
	} else {
		scm->status.win32_exit_code = SFL_SCM_ERROR_SERVICE_SPECIFIC;
		scm->status.service_exit_code = (uint32_t)exit_code;
	}
	*report = scm->status;
}
