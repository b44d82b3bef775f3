/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflObjectClient"

#include "config.h"

#include "sfl-object-client.h"

#include "sfl-error.h"

G_DEFINE_ABSTRACT_TYPE(SflObjectClient, sfl_object_client, G_TYPE_OBJECT)

/**
 * sfl_object_new:
 * @data: the object's bytes
 * @version: its version
 *
 * Returns: (transfer full): a record holding references to both
 */
SflObject *
sfl_object_new(GBytes *data, const gchar *version)
{
	SflObject *object = g_new0(SflObject, 1);
	object->data = g_bytes_ref(data);
	object->version = g_strdup(version);
	return object;
}

void
sfl_object_free(SflObject *object)
{
	if (object == NULL)
		return;
	g_bytes_unref(object->data);
	g_free(object->version);
	g_free(object);
}

void
sfl_object_entry_free(SflObjectEntry *entry)
{
	if (entry == NULL)
		return;
	g_free(entry->key);
	g_free(entry->version);
	g_free(entry);
}

/**
 * sfl_object_client_get_async:
 * @self: a client
 * @key: the object key (name)
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Reads one object with its version.
 */
void
sfl_object_client_get_async(SflObjectClient *self, const gchar *key, GCancellable *cancellable,
			    GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_OBJECT_CLIENT(self));
	g_return_if_fail(key != NULL);
	SFL_OBJECT_CLIENT_GET_CLASS(self)->get_async(self, key, cancellable, callback, user_data);
}

/**
 * sfl_object_client_get_finish:
 * @self: a client
 * @result: the result
 * @error: return location for an error; SFL_ERROR_NOT_FOUND when absent
 *
 * Returns: (transfer full) (nullable): the object
 */
SflObject *
sfl_object_client_get_finish(SflObjectClient *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_object_client_put_async:
 * @self: a client
 * @key: the object key (name)
 * @data: the new content
 * @condition: create-only, or compare-and-swap on @version
 * @version: (nullable): the expected current version for %SFL_OBJECT_WRITE_IF_VERSION
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * One conditional write; there is no unconditional one on purpose.
 */
void
sfl_object_client_put_async(SflObjectClient *self, const gchar *key, GBytes *data,
			    SflObjectCondition condition, const gchar *version,
			    GCancellable *cancellable, GAsyncReadyCallback callback,
			    gpointer user_data)
{
	g_return_if_fail(SFL_IS_OBJECT_CLIENT(self));
	g_return_if_fail(key != NULL && data != NULL);
	g_return_if_fail(condition == SFL_OBJECT_WRITE_CREATE_ONLY || version != NULL);
	SFL_OBJECT_CLIENT_GET_CLASS(self)->put_async(self, key, data, condition, version,
						     cancellable, callback, user_data);
}

/**
 * sfl_object_client_put_finish:
 * @self: a client
 * @result: the result
 * @error: return location for an error; SFL_ERROR_CONFLICT when the condition failed
 *
 * Returns: (transfer full) (nullable): the version just written
 */
gchar *
sfl_object_client_put_finish(SflObjectClient *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_object_client_delete_async:
 * @self: a client
 * @key: the object key (name)
 * @version: (nullable): delete only this version
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_object_client_delete_async(SflObjectClient *self, const gchar *key, const gchar *version,
			       GCancellable *cancellable, GAsyncReadyCallback callback,
			       gpointer user_data)
{
	g_return_if_fail(SFL_IS_OBJECT_CLIENT(self));
	g_return_if_fail(key != NULL);
	SFL_OBJECT_CLIENT_GET_CLASS(self)->delete_async(self, key, version, cancellable, callback,
							user_data);
}

gboolean
sfl_object_client_delete_finish(SflObjectClient *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/**
 * sfl_object_client_list_async:
 * @self: a client
 * @prefix: the key prefix ("" for the whole bucket)
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Lists the objects under @prefix, every page; one request per page.
 */
void
sfl_object_client_list_async(SflObjectClient *self, const gchar *prefix, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_OBJECT_CLIENT(self));
	g_return_if_fail(prefix != NULL);
	SFL_OBJECT_CLIENT_GET_CLASS(self)->list_async(self, prefix, cancellable, callback,
						      user_data);
}

/**
 * sfl_object_client_list_finish:
 * @self: a client
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (element-type SflObjectEntry) (nullable): the objects, in the
 *   service's (lexicographic) order
 */
GPtrArray *
sfl_object_client_list_finish(SflObjectClient *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_object_client_describe:
 * @self: a client
 * @key: an object key
 *
 * Returns: (transfer full): a URL-like name for messages, never with credentials
 */
gchar *
sfl_object_client_describe(SflObjectClient *self, const gchar *key)
{
	g_return_val_if_fail(SFL_IS_OBJECT_CLIENT(self), NULL);
	return SFL_OBJECT_CLIENT_GET_CLASS(self)->describe(self, key);
}

/**
 * sfl_object_client_close:
 * @self: a client
 *
 * Releases connections; the next request opens new ones. Call it with no request in flight.
 */
void
sfl_object_client_close(SflObjectClient *self)
{
	SflObjectClientClass *klass;

	g_return_if_fail(SFL_IS_OBJECT_CLIENT(self));
	klass = SFL_OBJECT_CLIENT_GET_CLASS(self);
	if (klass->close != NULL)
		klass->close(self);
}

/**
 * sfl_object_client_is_retryable:
 * @error: an error from this interface
 *
 * Returns: whether the same request may be sent again
 */
gboolean
sfl_object_client_is_retryable(const GError *error)
{
	return g_error_matches(error, SFL_ERROR, SFL_ERROR_TRANSIENT) ||
	       g_error_matches(error, SFL_ERROR, SFL_ERROR_THROTTLED);
}

/* --- the HTTP backends' shared request handling ----------------------------------------- */

static void
sfl_object_request_free(SflObjectRequest *request)
{
	g_free(request->key);
	g_clear_pointer(&request->body, g_bytes_unref);
	g_free(request->version);
	g_free(request->token);
	g_free(request->page_token);
	g_clear_pointer(&request->listing, g_ptr_array_unref);
	g_free(request);
}

/* @op on @key handed to the backend's start, as a task carrying the request */
static void
sfl_object_client_start(SflObjectClient *self, SflObjectOp op, const gchar *key, GBytes *body,
			gboolean create_only, const gchar *version, GCancellable *cancellable,
			GAsyncReadyCallback callback, gpointer user_data, gpointer tag)
{
	GTask *task = g_task_new(self, cancellable, callback, user_data);
	SflObjectRequest *request = g_new0(SflObjectRequest, 1);

	request->op = op;
	request->key = g_strdup(key);
	request->body = body != NULL ? g_bytes_ref(body) : NULL;
	request->create_only = create_only;
	request->version = create_only ? NULL : g_strdup(version);
	g_task_set_source_tag(task, tag);
	g_task_set_task_data(task, request, (GDestroyNotify)sfl_object_request_free);
	SFL_OBJECT_CLIENT_GET_CLASS(self)->start(self, task);
}

static void
sfl_object_client_real_get_async(SflObjectClient *self, const gchar *key, GCancellable *cancellable,
				 GAsyncReadyCallback callback, gpointer user_data)
{
	sfl_object_client_start(self, SFL_OBJECT_OP_GET, key, NULL, FALSE, NULL, cancellable,
				callback, user_data, sfl_object_client_get_async);
}

static void
sfl_object_client_real_put_async(SflObjectClient *self, const gchar *key, GBytes *data,
				 SflObjectCondition condition, const gchar *version,
				 GCancellable *cancellable, GAsyncReadyCallback callback,
				 gpointer user_data)
{
	sfl_object_client_start(self, SFL_OBJECT_OP_PUT, key, data,
				condition == SFL_OBJECT_WRITE_CREATE_ONLY, version, cancellable,
				callback, user_data, sfl_object_client_put_async);
}

static void
sfl_object_client_real_delete_async(SflObjectClient *self, const gchar *key, const gchar *version,
				    GCancellable *cancellable, GAsyncReadyCallback callback,
				    gpointer user_data)
{
	sfl_object_client_start(self, SFL_OBJECT_OP_DELETE, key, NULL, FALSE, version, cancellable,
				callback, user_data, sfl_object_client_delete_async);
}

static void
sfl_object_client_real_list_async(SflObjectClient *self, const gchar *prefix,
				  GCancellable *cancellable, GAsyncReadyCallback callback,
				  gpointer user_data)
{
	if (SFL_OBJECT_CLIENT_GET_CLASS(self)->start == NULL) {
		g_task_report_new_error(self, callback, user_data, sfl_object_client_list_async,
					G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
					"this object client cannot list");
		return;
	}
	sfl_object_client_start(self, SFL_OBJECT_OP_LIST, prefix, NULL, FALSE, NULL, cancellable,
				callback, user_data, sfl_object_client_list_async);
}

/* a listing of more pages than this is refused rather than held: no group is that large */
#define SFL_OBJECT_LIST_MAX_PAGES 1000

void
sfl_object_client_list_continue(GTask *task, const gchar *next_page)
{
	SflObjectClient *self = g_task_get_source_object(task);
	SflObjectRequest *request = g_task_get_task_data(task);

	request->pages++;
	g_clear_pointer(&request->page_token, g_free);
	if (next_page == NULL || next_page[0] == '\0') {
		GPtrArray *listing = g_steal_pointer(&request->listing);

		if (listing == NULL)
			listing = g_ptr_array_new_with_free_func(
				(GDestroyNotify)sfl_object_entry_free);
		g_task_return_pointer(task, listing, (GDestroyNotify)g_ptr_array_unref);
		return;
	}
	if (request->pages >= SFL_OBJECT_LIST_MAX_PAGES) {
		g_autofree gchar *what = sfl_object_client_describe(self, request->key);
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_REJECTED,
					"listing %s*: more than %u pages", what,
					(guint)SFL_OBJECT_LIST_MAX_PAGES);
		return;
	}
	request->page_token = g_strdup(next_page);
	/* the next page starts afresh (credentials, token) and completes this same task */
	SFL_OBJECT_CLIENT_GET_CLASS(self)->start(self, g_object_ref(task));
}

const gchar *
sfl_object_request_method(const SflObjectRequest *request)
{
	static const gchar *const methods[] = { "GET", "PUT", "DELETE", "GET" };

	return methods[request->op];
}

/**
 * sfl_object_client_response_cb:
 * @source: unused
 * @result: the HTTP exchange's result
 * @user_data: (transfer full): the operation's task (source object: the client; task data:
 *   its request)
 *
 * Where the HTTP backends' requests complete: transport failures are named after the object,
 * statuses go through the backend's classify, successes to its complete.
 */
void
sfl_object_client_response_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflObjectClient *self = g_task_get_source_object(task);
	SflObjectClientClass *klass = SFL_OBJECT_CLIENT_GET_CLASS(self);
	SflObjectRequest *request = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflHttpResponse) response = sfl_http_request_finish(result, &error);

	if (response == NULL) {
		g_autofree gchar *what = sfl_object_client_describe(self, request->key);
		g_prefix_error(&error, "%s: ", what);
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	if (!klass->classify(self, request, response, &error)) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	klass->complete(self, task, request, response);
}

/* completes a get with the body of @response, unless it was cut at SFL_OBJECT_MAX_BYTES */
void
sfl_object_client_return_object(GTask *task, SflHttpResponse *response, const gchar *version)
{
	const SflObjectRequest *request = g_task_get_task_data(task);

	if (sfl_http_response_get_body_truncated(response)) {
		g_autofree gchar *what =
			sfl_object_client_describe(g_task_get_source_object(task), request->key);
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_CORRUPT,
					"%s is larger than %u bytes", what,
					(guint)SFL_OBJECT_MAX_BYTES);
		return;
	}
	g_task_return_pointer(task, sfl_object_new(sfl_http_response_get_body(response), version),
			      (GDestroyNotify)sfl_object_free);
}

gboolean
sfl_object_waiters_join(GPtrArray **waiting, GTask *task)
{
	gboolean first = *waiting == NULL;

	if (first)
		*waiting = g_ptr_array_new_with_free_func(g_object_unref);
	g_ptr_array_add(*waiting, task);
	return first;
}

void
sfl_object_waiters_deliver(GPtrArray **waiting, gconstpointer value, GBoxedCopyFunc copy,
			   GDestroyNotify value_free, const GError *error)
{
	g_autoptr(GPtrArray) tasks = g_steal_pointer(waiting);

	for (guint i = 0; tasks != NULL && i < tasks->len; i++) {
		GTask *task = g_ptr_array_index(tasks, i);
		if (value != NULL)
			g_task_return_pointer(task, copy((gpointer)value), value_free);
		else
			g_task_return_error(task, g_error_copy(error));
	}
}

static void
sfl_object_client_class_init(SflObjectClientClass *klass)
{
	klass->get_async = sfl_object_client_real_get_async;
	klass->put_async = sfl_object_client_real_put_async;
	klass->delete_async = sfl_object_client_real_delete_async;
	klass->list_async = sfl_object_client_real_list_async;
}

static void
sfl_object_client_init(SflObjectClient *self)
{
}
