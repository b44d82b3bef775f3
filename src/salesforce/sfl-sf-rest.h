/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>
#include <jansson.h>

#include "sfl-curl-loop.h"
#include "sfl-sf-auth.h"

G_BEGIN_DECLS

/*
 * SflSfRest: Salesforce REST for one org (docs/internals/wire-notes.md, "Queries and errors").
 *
 * Every call takes a token from the org's SflSfAuth; a 401 invalidates that token, re-mints
 * and retries the call once. Errors, each naming the HTTP status and Salesforce's errorCode
 * and message (bounded, redacted):
 *   - 403 with REQUEST_LIMIT_EXCEEDED          → SFL_ERROR_THROTTLED
 *   - 5xx, transport errors, timeouts, a 2xx whose body is not the expected JSON (SFL-0010)
 *                                              → SFL_ERROR_TRANSIENT
 *   - 400 (MALFORMED_QUERY, INVALID_FIELD, INVALID_TYPE, BIG_OBJECT_UNSUPPORTED_OPERATION, …),
 *     403 without REQUEST_LIMIT_EXCEEDED, 404  → SFL_ERROR_REJECTED
 *   - 401 again after the re-mint, or a token that cannot be minted → SFL_ERROR_AUTH
 * Sforce-Limit-Info (api-usage=used/max) and the Date header (clock skew) of the last
 * response are kept.
 *
 * Threading: the curl loop's thread.
 */

#define SFL_TYPE_SF_REST (sfl_sf_rest_get_type())
G_DECLARE_FINAL_TYPE(SflSfRest, sfl_sf_rest, SFL, SF_REST, GObject)

SflSfRest *sfl_sf_rest_new(SflCurlLoop *loop, SflSfAuth *auth,
			   const gchar *api_version) G_GNUC_WARN_UNUSED_RESULT;
const gchar *sfl_sf_rest_get_api_version(SflSfRest *self);

/*
 * A SOQL query with every page (nextRecordsUrl) fetched: the result is a new JSON array of
 * all records, in order, each with its `attributes`. @tooling uses /tooling/query.
 */
void sfl_sf_rest_query_async(SflSfRest *self, const gchar *soql, gboolean tooling,
			     GCancellable *cancellable, GAsyncReadyCallback callback,
			     gpointer user_data);
json_t *sfl_sf_rest_query_finish(SflSfRest *self, GAsyncResult *result,
				 GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_sf_rest_get_async(SflSfRest *self, const gchar *path, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data);
json_t *sfl_sf_rest_get_finish(SflSfRest *self, GAsyncResult *result,
			       GError **error) G_GNUC_WARN_UNUSED_RESULT;

/*
 * A streamed GET of @path (relative to the instance URL, e.g.
 * /services/data/v64.0/sobjects/EventLogFile/<Id>/LogFile). @data is called with each body
 * chunk (at most 64 KiB) of a 2xx response, in order; it must take the whole chunk. @done is
 * called exactly once: error NULL after the last byte, else the mapped error (a failure
 * after some data, e.g. a reset, is SFL_ERROR_TRANSIENT). A 401 before any data re-mints and
 * restarts once. No callback runs after sfl_sf_download_free().
 */
typedef struct _SflSfDownload SflSfDownload;
typedef void (*SflSfDownloadDataFunc)(const gchar *data, gsize len, gpointer user_data);
typedef void (*SflSfDownloadDoneFunc)(const GError *error, gpointer user_data);

SflSfDownload *
sfl_sf_rest_download(SflSfRest *self, const gchar *path, SflSfDownloadDataFunc data,
		     SflSfDownloadDoneFunc done, gpointer user_data) G_GNUC_WARN_UNUSED_RESULT;
/* no @data call after pause() returns until resume(); resume() delivers from an idle, never
 * from inside the call */
void sfl_sf_download_pause(SflSfDownload *self);
void sfl_sf_download_resume(SflSfDownload *self);
guint64 sfl_sf_download_get_bytes(SflSfDownload *self);
/* cancels a running transfer */
void sfl_sf_download_free(SflSfDownload *self);

/* server time − local time from the last response's Date header; FALSE before any */
gboolean sfl_sf_rest_get_clock_skew(SflSfRest *self, gint64 *skew_usec);
/* the last Sforce-Limit-Info api-usage; FALSE before any */
gboolean sfl_sf_rest_get_api_usage(SflSfRest *self, gint64 *used, gint64 *max);
guint64 sfl_sf_rest_get_throttled(SflSfRest *self);
SflSfAuth *sfl_sf_rest_get_auth(SflSfRest *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflSfDownload, sfl_sf_download_free)

G_END_DECLS
