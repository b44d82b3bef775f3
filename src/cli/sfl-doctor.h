/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * `sf2loki doctor`: a live, ordered preflight (docs/cli.md "doctor", with SFL-0017,
 * SFL-0032 and SFL-0041 applied). Each check is one row (name, status, detail); a failed
 * prerequisite turns the checks that depend on it into SKIP rows naming why.
 *
 * Exit code: 2 when the configuration or the org selection failed, 1 when any row failed,
 * else 0 (warnings allowed).
 */

typedef enum {
	SFL_DOCTOR_PASS,
	SFL_DOCTOR_WARN,
	SFL_DOCTOR_FAIL,
	SFL_DOCTOR_SKIP,
} SflDoctorStatus;

typedef struct {
	const gchar *config_path; /* NULL: environment and defaults only */
	const gchar *org;	  /* NULL: the only org, or the first of several */
	gboolean json;
} SflDoctorOptions;

const gchar *sfl_doctor_status_to_string(SflDoctorStatus status);

/* runs every check on the thread-default main context, prints the report to stdout */
int sfl_doctor_main(const SflDoctorOptions *opts);

G_END_DECLS
