/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflError"

#include "config.h"

#include "sfl-error.h"

/* clang-format off */
G_DEFINE_QUARK(sfl-error-quark, sfl_error)
/* clang-format on */

/**
 * sfl_error_code_to_string:
 * @code: an #SflError
 *
 * Returns: (transfer none): a stable lower-case name, used in logs and metrics
 */
const gchar *
sfl_error_code_to_string(SflError code)
{
	switch (code) {
	case SFL_ERROR_INVALID_CONFIG:
		return "invalid_config";
	case SFL_ERROR_AUTH:
		return "auth";
	case SFL_ERROR_TRANSIENT:
		return "transient";
	case SFL_ERROR_THROTTLED:
		return "throttled";
	case SFL_ERROR_REJECTED:
		return "rejected";
	case SFL_ERROR_CONFLICT:
		return "conflict";
	case SFL_ERROR_FENCED:
		return "fenced";
	case SFL_ERROR_CORRUPT:
		return "corrupt";
	case SFL_ERROR_NOT_FOUND:
		return "not_found";
	case SFL_ERROR_INTERNAL:
		return "internal";
	}
	return "unknown";
}

/**
 * sfl_error_to_exit_code:
 * @error: (nullable): the error that ended a command
 *
 * Configuration and wiring problems are the operator's to fix and exit 2 so a service manager
 * does not restart-loop on them blindly; everything else is a runtime failure.
 *
 * Returns: the process exit code
 */
SflExitCode
sfl_error_to_exit_code(const GError *error)
{
	if (error == NULL)
		return SFL_EXIT_OK;
	if (error->domain == SFL_ERROR && error->code == SFL_ERROR_INVALID_CONFIG)
		return SFL_EXIT_USAGE;
	if (error->domain == G_OPTION_ERROR)
		return SFL_EXIT_USAGE;
	return SFL_EXIT_FAILURE;
}
