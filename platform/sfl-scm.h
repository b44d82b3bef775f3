/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

/*
 * The Windows service-control state machine, without Windows headers so the same rules are
 * unit-tested natively and under wine. It decides which status the service reports after each
 * event; win32/sfl-service-win32.c feeds it SCM controls and sfl_platform_notify() lines and
 * hands the resulting status to SetServiceStatus.
 *
 *   start ──► START_PENDING (checkpoint 1, 2, 3… per progress event, nothing accepted)
 *   READY=1 ──► RUNNING (accepts STOP | SHUTDOWN | PRESHUTDOWN | PARAMCHANGE)
 *   PARAMCHANGE control while RUNNING ──► RUNNING unchanged; asks the daemon to reload
 *   STATUS=…, WATCHDOG=1 and any other line ──► no change (a fenced commit demotes to standby
 *       and says so in STATUS=: the service keeps running)
 *   STOP / SHUTDOWN / PRESHUTDOWN control, or STOPPING=1 ──► STOP_PENDING (rising checkpoints,
 *       nothing accepted; a control asks the daemon to stop exactly once)
 *   main function returned ──► STOPPED with its exit code (nonzero: ERROR_SERVICE_SPECIFIC_ERROR
 *       with the code as the service-specific exit code, which is what recovery actions and
 *       `sc query` show)
 *
 * Progress events come from a ticker while a pending state lasts. They are capped at
 * SFL_SCM_MAX_TICKS so a start-up or drain that hangs stops raising the checkpoint and the
 * SCM's wait hint runs out, instead of a ticker hiding the hang forever. The drain's budget
 * (wait hint and tick cap) grows to cover service.shutdown_grace once the daemon has told it
 * (sfl_scm_set_shutdown_grace()), because the daemon may legitimately drain that long.
 *
 * Not thread-safe: the caller serialises access (the SCM calls the control handler on the
 * dispatcher thread while the service thread notifies).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the values are Windows' own (SERVICE_STOPPED…), checked at compile time by the glue */
typedef enum {
	SFL_SCM_STATE_STOPPED = 1,
	SFL_SCM_STATE_START_PENDING = 2,
	SFL_SCM_STATE_STOP_PENDING = 3,
	SFL_SCM_STATE_RUNNING = 4,
} SflScmState;

/* SERVICE_ACCEPT_STOP, …_SHUTDOWN, …_PARAMCHANGE, …_PRESHUTDOWN */
#define SFL_SCM_ACCEPT_STOP	   0x00000001u
#define SFL_SCM_ACCEPT_SHUTDOWN	   0x00000004u
#define SFL_SCM_ACCEPT_PARAMCHANGE 0x00000008u
#define SFL_SCM_ACCEPT_PRESHUTDOWN 0x00000100u

/* what RUNNING accepts */
#define SFL_SCM_ACCEPT_RUNNING                                                                     \
	(SFL_SCM_ACCEPT_STOP | SFL_SCM_ACCEPT_SHUTDOWN | SFL_SCM_ACCEPT_PARAMCHANGE |              \
	 SFL_SCM_ACCEPT_PRESHUTDOWN)

/* SERVICE_CONTROL_STOP, …_INTERROGATE, …_SHUTDOWN, …_PARAMCHANGE, …_PRESHUTDOWN */
#define SFL_SCM_CONTROL_STOP	    1u
#define SFL_SCM_CONTROL_INTERROGATE 4u
#define SFL_SCM_CONTROL_SHUTDOWN    5u
#define SFL_SCM_CONTROL_PARAMCHANGE 6u
#define SFL_SCM_CONTROL_PRESHUTDOWN 0x0000000Fu

/* NO_ERROR and ERROR_SERVICE_SPECIFIC_ERROR, for the win32 exit code */
#define SFL_SCM_NO_ERROR	       0u
#define SFL_SCM_ERROR_SERVICE_SPECIFIC 1066u

/* how long the SCM should wait for the next checkpoint */
#define SFL_SCM_WAIT_HINT_MS 10000u
/* how often the glue reports progress while pending: well inside the wait hint */
#define SFL_SCM_TICK_MS 2000u
/* progress reports per pending phase, i.e. about two minutes of start-up or drain */
#define SFL_SCM_MAX_TICKS 60u
/*
 * what a stop needs beyond service.shutdown_grace: the last commit's fsync after the drain,
 * the teardown, the final STOPPED report; added to the drain's wait hint and to the
 * preshutdown timeout the service asks for
 */
#define SFL_SCM_STOP_MARGIN_MS 10000u

/* the fields of SERVICE_STATUS the service decides (the service type is the glue's) */
typedef struct {
	uint32_t state;		    /* an SflScmState */
	uint32_t controls_accepted; /* SFL_SCM_ACCEPT_* */
	uint32_t win32_exit_code;
	uint32_t service_exit_code;
	uint32_t checkpoint;
	uint32_t wait_hint_ms;
} SflScmStatus;

typedef struct {
	SflScmStatus status;
	uint32_t ticks;	     /* progress events in the current pending phase */
	bool stop_requested; /* the stop callback was asked for already */
	/* the drain's budget: SFL_SCM_WAIT_HINT_MS and SFL_SCM_MAX_TICKS until the grace is set */
	uint32_t stop_wait_hint_ms;
	uint32_t stop_max_ticks;
} SflScm;

typedef enum {
	/* the control was handled: NO_ERROR */
	SFL_SCM_CONTROL_HANDLED,
	/* not accepted in this state, or not a control we know: ERROR_CALL_NOT_IMPLEMENTED */
	SFL_SCM_CONTROL_REFUSED,
} SflScmControlResult;

/* what the glue must do after a control */
typedef struct {
	bool report;	     /* call SetServiceStatus with @status */
	bool request_stop;   /* call the stop callback (at most once per service run) */
	bool request_reload; /* call the reload callback (PARAMCHANGE) */
	SflScmStatus status;
} SflScmAction;

/* the service thread began: START_PENDING, checkpoint 1; always to be reported */
void sfl_scm_start(SflScm *scm, SflScmStatus *report);

/*
 * The daemon's service.shutdown_grace, in milliseconds (after sfl_scm_start): from now on
 * STOP_PENDING asks for a wait hint of @grace_ms + SFL_SCM_STOP_MARGIN_MS and keeps raising its
 * checkpoint for at least that long (never less than the defaults). Returns the wait hint.
 */
uint32_t sfl_scm_set_shutdown_grace(SflScm *scm, uint64_t grace_ms);

/*
 * Time passed in a pending state: the checkpoint rises. Returns false (nothing to report)
 * outside pending states and once SFL_SCM_MAX_TICKS progress events were reported.
 */
bool sfl_scm_progress(SflScm *scm, SflScmStatus *report);

/* READY=1: START_PENDING becomes RUNNING. Returns false in any other state. */
bool sfl_scm_ready(SflScm *scm, SflScmStatus *report);

/*
 * STOPPING=1: the daemon began its shutdown on its own or after a control. Enters
 * STOP_PENDING, or counts as progress when already there. Returns false once stopped.
 */
bool sfl_scm_stopping(SflScm *scm, SflScmStatus *report);

/*
 * One line of a notification (sfl_platform_notify(), sd_notify's syntax), @len bytes without
 * the newline. READY=1 acts as sfl_scm_ready(), STOPPING=1 as sfl_scm_stopping(); every other
 * line (STATUS=…, WATCHDOG=1, unknown ones) changes nothing. Returns true when @report is to
 * be sent.
 */
bool sfl_scm_notify_line(SflScm *scm, const char *line, size_t len, SflScmStatus *report);

/*
 * A control from the SCM. STOP, SHUTDOWN and PRESHUTDOWN are accepted only while RUNNING; the
 * first one enters STOP_PENDING and sets @action->request_stop. PARAMCHANGE is accepted only
 * while RUNNING and sets @action->request_reload, changing nothing. INTERROGATE reports the
 * current status unchanged.
 */
SflScmControlResult sfl_scm_control(SflScm *scm, uint32_t control, SflScmAction *action);

/* the main function returned @exit_code: STOPPED; always to be reported */
void sfl_scm_exit(SflScm *scm, int exit_code, SflScmStatus *report);

#ifdef __cplusplus
}
#endif
