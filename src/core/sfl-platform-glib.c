/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflPlatform"

#include "config.h"

#include "sfl-platform-glib.h"

#include "sfl-error.h"

/**
 * sfl_platform_to_gerror:
 * @status: what a platform call returned
 * @perr: its error details
 * @error: return location for an error
 *
 * The one place the platform layer's codes become SFL_ERROR codes: an absent file is
 * NOT_FOUND, any other OS failure TRANSIENT (the caller decides whether retrying makes sense),
 * a held lock CONFLICT.
 *
 * Returns: %TRUE when @status is %SFL_PLATFORM_OK
 */
gboolean
sfl_platform_to_gerror(SflPlatformStatus status, const SflPlatformError *perr, GError **error)
{
	SflError code;

	switch (status) {
	case SFL_PLATFORM_OK:
		return TRUE;
	case SFL_PLATFORM_ERR_NOT_FOUND:
		code = SFL_ERROR_NOT_FOUND;
		break;
	case SFL_PLATFORM_ERR_IO:
	case SFL_PLATFORM_ERR_ABANDONED:
		code = SFL_ERROR_TRANSIENT;
		break;
	case SFL_PLATFORM_ERR_BUSY:
		code = SFL_ERROR_CONFLICT;
		break;
	case SFL_PLATFORM_ERR_TOO_LARGE:
		code = SFL_ERROR_CORRUPT;
		break;
	case SFL_PLATFORM_ERR_INVALID:
	case SFL_PLATFORM_ERR_UNSUPPORTED:
	default:
		code = SFL_ERROR_INTERNAL;
		break;
	}
	g_set_error_literal(error, SFL_ERROR, code,
			    perr != NULL && perr->message[0] != '\0' ? perr->message
								     : "operating system error");
	return FALSE;
}
