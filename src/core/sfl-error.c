/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflError"

#include "config.h"

#include "sfl-error.h"

typedef struct {
	guint http_status; /* 0: not an HTTP answer */
	gchar *peer_code;
} SflErrorPrivate;

/*
 * GLib's accessor keeps a NULL path (a g_return_val_if_fail()), which -Wnull-dereference flags
 * in optimised builds; each use below checks for it.
 */
static void
sfl_error_private_init(SflErrorPrivate *priv)
{
	if (priv == NULL)
		return;
	priv->http_status = 0;
	priv->peer_code = NULL;
}

static void
sfl_error_private_copy(const SflErrorPrivate *src, SflErrorPrivate *dest)
{
	if (src == NULL || dest == NULL)
		return;
	dest->http_status = src->http_status;
	dest->peer_code = g_strdup(src->peer_code);
}

static void
sfl_error_private_clear(SflErrorPrivate *priv)
{
	if (priv != NULL)
		g_clear_pointer(&priv->peer_code, g_free);
}

/*
 * GLib finds the private part by stepping back from the GError through a byte pointer; the
 * allocation is aligned for it, but clang's -Wcast-align cannot see that
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-align"
G_DEFINE_EXTENDED_ERROR(SflError, sfl_error)
#pragma GCC diagnostic pop

/**
 * sfl_error_set_http_status:
 * @error: an error; other domains than SFL_ERROR are left alone
 * @status: the HTTP status of the answer that failed
 */
void
sfl_error_set_http_status(GError *error, guint status)
{
	SflErrorPrivate *priv = NULL;

	if (error == NULL || error->domain != SFL_ERROR)
		return;
	priv = sfl_error_get_private(error);
	if (priv != NULL)
		priv->http_status = status;
}

/**
 * sfl_error_get_http_status:
 * @error: (nullable): an error
 *
 * Returns: the HTTP status set on @error, 0 for none
 */
guint
sfl_error_get_http_status(const GError *error)
{
	const SflErrorPrivate *priv = NULL;

	if (error == NULL || error->domain != SFL_ERROR)
		return 0;
	priv = sfl_error_get_private(error);
	return priv != NULL ? priv->http_status : 0;
}

/**
 * sfl_error_set_peer_code:
 * @error: an error; other domains than SFL_ERROR are left alone
 * @code: (nullable): the peer's own error code, never a secret
 */
void
sfl_error_set_peer_code(GError *error, const gchar *code)
{
	SflErrorPrivate *priv = NULL;

	if (error == NULL || error->domain != SFL_ERROR)
		return;
	priv = sfl_error_get_private(error);
	if (priv == NULL)
		return;
	g_free(priv->peer_code);
	priv->peer_code = g_strdup(code);
}

/**
 * sfl_error_get_peer_code:
 * @error: (nullable): an error
 *
 * Returns: (transfer none) (nullable): the peer's error code set on @error
 */
const gchar *
sfl_error_get_peer_code(const GError *error)
{
	const SflErrorPrivate *priv = NULL;

	if (error == NULL || error->domain != SFL_ERROR)
		return NULL;
	priv = sfl_error_get_private(error);
	return priv != NULL ? priv->peer_code : NULL;
}

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
