/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-curl-loop.h"
#include "sfl-error.h"

G_BEGIN_DECLS

/*
 * One asynchronous HTTP request on an SflCurlLoop. Connections are reused through the loop's
 * shared multi handle; TLS peer and host verification are always on (the request's own CA, else
 * the loop's default trust: SSL_CERT_FILE / SSL_CERT_DIR over the system store); proxies come
 * from the environment (curl reads HTTPS_PROXY and NO_PROXY); no redirects are followed; the
 * User-Agent is sf2loki/<version>.
 *
 * A transport failure finishes with SFL_ERROR_TRANSIENT, the peer's host:port and curl's
 * description (never the URL, which may hold credentials); any HTTP status, 4xx and 5xx
 * included, is a response. A 5xx response or a transport failure (reset, timeout) closes its
 * connection instead of returning it to the pool, so a retry connects anew.
 * Cancellation finishes with G_IO_ERROR_CANCELLED. The body kept is bounded by SFL_HTTP_MAX_BODY.
 *
 * Threading: the loop's thread.
 */

#define SFL_HTTP_MAX_BODY (64 * 1024)

/*
 * the connect timeout of sfl_http_request_bounded_async(): the original's 10 s
 * (docs/differences-from-python.md, "Kept as in the original")
 */
#define SFL_HTTP_CONNECT_TIMEOUT_MS (10 * 1000)

typedef struct _SflHttpResponse SflHttpResponse;

/* how to run one request with sfl_http_request_full_async(); zero fields mean the defaults */
typedef struct {
	guint timeout_ms;	  /* the whole request's deadline; 0 for none */
	guint connect_timeout_ms; /* 0: curl's default */
	gsize max_body;		  /* 0: SFL_HTTP_MAX_BODY */
	gboolean https_only;   /* refuse plain http (a bearer token must never travel in clear) */
	const SflHttpTls *tls; /* NULL: the loop's default trust, no client certificate */
} SflHttpOptions;

/*
 * What an HTTP status means to a client (sfl_http_status_class()). The classes are fine enough
 * that each protocol keeps its own policy (S3 retries only server errors, Salesforce REST also
 * timeouts, Cloud Storage also throttling) while the status → class mapping is written once.
 */
typedef enum {
	SFL_HTTP_CLASS_SUCCESS,	  /* 2xx */
	SFL_HTTP_CLASS_AUTH,	  /* 401, 403: the credentials were refused */
	SFL_HTTP_CLASS_NOT_FOUND, /* 404 */
	SFL_HTTP_CLASS_CONFLICT,  /* 409, 412: a precondition or a concurrent write lost */
	SFL_HTTP_CLASS_THROTTLED, /* 429 */
	SFL_HTTP_CLASS_TIMEOUT,	  /* 408: the server gave up waiting for the request */
	SFL_HTTP_CLASS_SERVER,	  /* 5xx and anything above */
	SFL_HTTP_CLASS_REJECTED,  /* any other status */
} SflHttpClass;

SflHttpClass sfl_http_status_class(guint status);
gboolean sfl_http_class_is_retryable(SflHttpClass klass);
SflError sfl_http_class_error_code(SflHttpClass klass);

void
sfl_http_request_async(SflCurlLoop *loop, const gchar *method, const gchar *url,
		       const gchar *const *headers, GBytes *body, guint timeout_ms,
		       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
/* the same with a body cap of @max_body bytes and a connect timeout of 10 s */
void sfl_http_request_bounded_async(SflCurlLoop *loop, const gchar *method, const gchar *url,
				    const gchar *const *headers, GBytes *body, guint timeout_ms,
				    gsize max_body, GCancellable *cancellable,
				    GAsyncReadyCallback callback, gpointer user_data);
void sfl_http_request_full_async(SflCurlLoop *loop, const gchar *method, const gchar *url,
				 const gchar *const *headers, GBytes *body,
				 const SflHttpOptions *options, GCancellable *cancellable,
				 GAsyncReadyCallback callback, gpointer user_data);
SflHttpResponse *
sfl_http_request_finish(GAsyncResult *result, GError **error) G_GNUC_WARN_UNUSED_RESULT;

gchar *sfl_http_url_endpoint(const gchar *url) G_GNUC_WARN_UNUSED_RESULT;

/* an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") as Unix microseconds; -1 otherwise */
gint64 sfl_http_parse_date(const gchar *value);

guint sfl_http_response_get_status(const SflHttpResponse *self);
const gchar *sfl_http_response_get_header(const SflHttpResponse *self, const gchar *name);
GBytes *sfl_http_response_get_body(const SflHttpResponse *self);
gboolean sfl_http_response_get_body_truncated(const SflHttpResponse *self);
void sfl_http_response_free(SflHttpResponse *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflHttpResponse, sfl_http_response_free)

G_END_DECLS
