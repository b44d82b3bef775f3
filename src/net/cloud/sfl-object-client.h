/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-http.h"

G_BEGIN_DECLS

/*
 * SflObjectClient: one bucket of an object store with compare-and-swap writes, the one
 * abstraction the object checkpoint store and the object lease coordinator are written
 * against (S3 and GCS implement it; tests fake it).
 *
 * Contract
 *  - get: the object's bytes and version, or SFL_ERROR_NOT_FOUND when it does not exist.
 *  - put: CREATE_ONLY lands only when no object exists; IF_VERSION only when the stored
 *    version equals the given one. A precondition that does not hold is SFL_ERROR_CONFLICT
 *    (S3: 412, 409 ConditionalRequestConflict, 404 on If-Match; GCS: 412). Success yields
 *    the new version.
 *  - delete: with a version, only when it still matches (SFL_ERROR_CONFLICT otherwise);
 *    deleting a missing object is SFL_ERROR_NOT_FOUND.
 *  - The version is opaque (an S3 ETag with its quotes, a GCS generation); compare it only.
 *  - SFL_ERROR_TRANSIENT: 5xx, throttling, timeouts, resets and bodies that did not arrive
 *    whole; the caller may retry. SFL_ERROR_AUTH: credentials refused. SFL_ERROR_REJECTED:
 *    any other refusal, with the status and the service's error code in the message.
 *  - Nothing here retries: each call is one request (plus credential refreshes).
 *
 * Implementations complete through a GTask whose source object is the client: get returns
 * an SflObject pointer, put a version string, delete a boolean.
 *
 * Threading: the thread-default main context of the thread that created the client.
 */

#define SFL_TYPE_OBJECT_CLIENT (sfl_object_client_get_type())
G_DECLARE_DERIVABLE_TYPE(SflObjectClient, sfl_object_client, SFL, OBJECT_CLIENT, GObject)

/* object bodies beyond this are refused as corrupt rather than held in memory */
#define SFL_OBJECT_MAX_BYTES (64 * 1024 * 1024)

typedef enum {
	SFL_OBJECT_WRITE_CREATE_ONLY,
	SFL_OBJECT_WRITE_IF_VERSION,
} SflObjectCondition;

typedef struct {
	GBytes *data;
	gchar *version;
} SflObject;

SflObject *sfl_object_new(GBytes *data, const gchar *version);
void sfl_object_free(SflObject *object);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflObject, sfl_object_free)

typedef enum {
	SFL_OBJECT_OP_GET,
	SFL_OBJECT_OP_PUT,
	SFL_OBJECT_OP_DELETE,
	SFL_OBJECT_OP_LIST,
} SflObjectOp;

/* one object of a listing */
typedef struct {
	gchar *key;
	gchar *version;
} SflObjectEntry;

void sfl_object_entry_free(SflObjectEntry *entry);

/* one get, put, delete or list as a backend carries it through its requests */
typedef struct {
	SflObjectOp op;
	gchar *key;   /* a list's prefix */
	GBytes *body; /* what a put writes */
	gboolean create_only;
	gchar *version;	    /* the version the request is conditional on; a GET learns it */
	gchar *token;	    /* a bearer token, for a backend that needs one */
	gchar *page_token;  /* a list's next page (S3 continuation-token, GCS pageToken) */
	GPtrArray *listing; /* a list's entries so far (element-type SflObjectEntry) */
	guint pages;	    /* a list's pages read so far */
} SflObjectRequest;

struct _SflObjectClientClass {
	GObjectClass parent_class;

	void (*get_async)(SflObjectClient *self, const gchar *key, GCancellable *cancellable,
			  GAsyncReadyCallback callback, gpointer user_data);
	void (*put_async)(SflObjectClient *self, const gchar *key, GBytes *data,
			  SflObjectCondition condition, const gchar *version,
			  GCancellable *cancellable, GAsyncReadyCallback callback,
			  gpointer user_data);
	void (*delete_async)(SflObjectClient *self, const gchar *key, const gchar *version,
			     GCancellable *cancellable, GAsyncReadyCallback callback,
			     gpointer user_data);
	/* "s3://bucket/key", "gs://bucket/name" */
	gchar *(*describe)(SflObjectClient *self, const gchar *key);
	/* optional: release connections and cached tokens; called with nothing in flight */
	void (*close)(SflObjectClient *self);
	/*
	 * The HTTP backends implement this instead of the three above: send the request that
	 * is @task's task data (an SflObjectRequest) and complete @task as the contract says.
	 */
	void (*start)(SflObjectClient *self, GTask *task);
	/* with start: a response's status into the contract's errors; TRUE for a success */
	gboolean (*classify)(SflObjectClient *self, const SflObjectRequest *request,
			     SflHttpResponse *response, GError **error);
	/* with start: completes (or continues) @task from a successful response */
	void (*complete)(SflObjectClient *self, GTask *task, SflObjectRequest *request,
			 SflHttpResponse *response);

	/*
	 * optional, default through start: every object whose key starts with @prefix, all
	 * pages, completing with a GPtrArray of SflObjectEntry (without start:
	 * G_IO_ERROR_NOT_SUPPORTED)
	 */
	void (*list_async)(SflObjectClient *self, const gchar *prefix, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data);

	gpointer padding[4];
};

void sfl_object_client_get_async(SflObjectClient *self, const gchar *key, GCancellable *cancellable,
				 GAsyncReadyCallback callback, gpointer user_data);
SflObject *sfl_object_client_get_finish(SflObjectClient *self, GAsyncResult *result,
					GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_object_client_put_async(SflObjectClient *self, const gchar *key, GBytes *data,
				 SflObjectCondition condition, const gchar *version,
				 GCancellable *cancellable, GAsyncReadyCallback callback,
				 gpointer user_data);
gchar *sfl_object_client_put_finish(SflObjectClient *self, GAsyncResult *result,
				    GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_object_client_delete_async(SflObjectClient *self, const gchar *key, const gchar *version,
				    GCancellable *cancellable, GAsyncReadyCallback callback,
				    gpointer user_data);
gboolean
sfl_object_client_delete_finish(SflObjectClient *self, GAsyncResult *result, GError **error);
/*
 * list: the keys starting with @prefix and their versions (the same versions get returns),
 * every page read; an error (any, never a partial listing) means "cannot tell".
 */
void
sfl_object_client_list_async(SflObjectClient *self, const gchar *prefix, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data);
GPtrArray *sfl_object_client_list_finish(SflObjectClient *self, GAsyncResult *result,
					 GError **error) G_GNUC_WARN_UNUSED_RESULT;
gchar *
sfl_object_client_describe(SflObjectClient *self, const gchar *key) G_GNUC_WARN_UNUSED_RESULT;
void sfl_object_client_close(SflObjectClient *self);

/* --- for the HTTP backends ---------------------------------------------------------------- */

const gchar *sfl_object_request_method(const SflObjectRequest *request);
void sfl_object_client_response_cb(GObject *source, GAsyncResult *result, gpointer user_data);
void sfl_object_client_return_object(GTask *task, SflHttpResponse *response, const gchar *version);
/*
 * a list's page was read into request->listing: with @next_page (the service's token) the
 * next page is requested through start, else @task completes with the listing
 */
void sfl_object_client_list_continue(GTask *task, const gchar *next_page);

/*
 * Callers that ask a credential provider while its refresh is in flight share that refresh:
 * join() queues @task (taken) and says whether the caller starts the refresh; deliver()
 * completes every queued task with a @copy of @value, or with @error when @value is NULL.
 */
gboolean sfl_object_waiters_join(GPtrArray **waiting, GTask *task);
void sfl_object_waiters_deliver(GPtrArray **waiting, gconstpointer value, GBoxedCopyFunc copy,
				GDestroyNotify value_free, const GError *error);

/* whether the same request may be sent again */
gboolean sfl_object_client_is_retryable(const GError *error);

G_END_DECLS
