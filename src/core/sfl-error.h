/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SFL_ERROR (sfl_error_quark())

/**
 * SflError:
 * @SFL_ERROR_INVALID_CONFIG: configuration or wiring is wrong; fix the config (exit 2)
 * @SFL_ERROR_AUTH: credentials were refused; re-mint once, then give up
 * @SFL_ERROR_TRANSIENT: network or server hiccup; retry with backoff
 * @SFL_ERROR_THROTTLED: the peer asked us to slow down; retry after its delay
 * @SFL_ERROR_REJECTED: the peer refused this data permanently; count and drop it
 * @SFL_ERROR_CONFLICT: a compare-and-swap lost; re-read before deciding
 * @SFL_ERROR_FENCED: a newer leader owns the store; demote to standby
 * @SFL_ERROR_CORRUPT: stored data cannot be parsed; stop and keep it for an operator
 * @SFL_ERROR_NOT_FOUND: the object does not exist
 * @SFL_ERROR_INTERNAL: a bug or an unexpected library failure
 *
 * The codes say what the caller should do next, not which library failed.
 * Cancellation is reported as %G_IO_ERROR_CANCELLED, never with this domain.
 */
typedef enum {
	SFL_ERROR_INVALID_CONFIG,
	SFL_ERROR_AUTH,
	SFL_ERROR_TRANSIENT,
	SFL_ERROR_THROTTLED,
	SFL_ERROR_REJECTED,
	SFL_ERROR_CONFLICT,
	SFL_ERROR_FENCED,
	SFL_ERROR_CORRUPT,
	SFL_ERROR_NOT_FOUND,
	SFL_ERROR_INTERNAL,
} SflError;

/**
 * SflExitCode:
 * @SFL_EXIT_OK: clean stop
 * @SFL_EXIT_FAILURE: runtime failure
 * @SFL_EXIT_USAGE: configuration, wiring or command-line error
 */
typedef enum {
	SFL_EXIT_OK = 0,
	SFL_EXIT_FAILURE = 1,
	SFL_EXIT_USAGE = 2,
} SflExitCode;

GQuark sfl_error_quark(void);
const gchar *sfl_error_code_to_string(SflError code);
SflExitCode sfl_error_to_exit_code(const GError *error);

/*
 * Details a caller decides on, carried by every SFL_ERROR error (an extended GError domain)
 * so that no decision parses error->message: the HTTP status of the answer that failed and
 * the peer's own error code (a Salesforce errorCode, an OAuth "error"). They survive
 * g_prefix_error(), g_propagate_error() and g_error_copy(); errors of other domains have none.
 */
void sfl_error_set_http_status(GError *error, guint status);
guint sfl_error_get_http_status(const GError *error);
void sfl_error_set_peer_code(GError *error, const gchar *code);
const gchar *sfl_error_get_peer_code(const GError *error);

G_END_DECLS
