/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLeaseIO"

#include "config.h"

#include "sfl-lease-io.h"

#include "sfl-error.h"
#include "sfl-lease-io-private.h"
#include "sfl-platform-glib.h"
#include "sfl-platform.h"

typedef struct {
	gchar *path;
	SflClock *clock; /* for the deadline; NULL: none */
	gint64 deadline_usec;
	guint busy; /* implementation operations not finished, late ones included */
	SflLeaseIOWorkerHook hook;
	gpointer hook_data;
} SflLeaseIOPrivate;

G_DEFINE_TYPE_WITH_PRIVATE(SflLeaseIO, sfl_lease_io, G_TYPE_OBJECT)

#define GET_PRIVATE(o) ((SflLeaseIOPrivate *)sfl_lease_io_get_instance_private(o))

enum {
	PROP_0,
	PROP_PATH,
	N_PROPS,
};

static GParamSpec *sfl_lease_io_props[N_PROPS];

/* --- the file implementation (worker threads) ---------------------------------------------- */

/* what a worker needs, copied on the main thread so the worker never touches the object */
typedef struct {
	gchar *path;
	GBytes *data; /* writes only */
	/* writes: the rename must not happen after this (sfl_platform_monotonic_ns) */
	gint64 not_after_ns;
	GCancellable *cancellable; /* fired when the caller was answered (deadline, cancel) */
	SflLeaseIOWorkerHook hook;
	gpointer hook_data;
} SflLeaseIOJob;

static void
sfl_lease_io_job_free(SflLeaseIOJob *job)
{
	g_free(job->path);
	g_clear_pointer(&job->data, g_bytes_unref);
	g_clear_object(&job->cancellable);
	g_free(job);
}

static GTask *
sfl_lease_io_file_task_new(SflLeaseIO *self, GBytes *data, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data, gpointer tag)
{
	SflLeaseIOPrivate *priv = GET_PRIVATE(self);
	GTask *task = g_task_new(self, cancellable, callback, user_data);
	SflLeaseIOJob *job = g_new0(SflLeaseIOJob, 1);

	g_task_set_source_tag(task, tag);
	job->path = g_strdup(priv->path);
	job->data = data != NULL ? g_bytes_ref(data) : NULL;
	/*
	 * On the real clock, whatever clock the deadline runs on: a worker that was stalled (a
	 * frozen process, a hung NFS server) wakes up in real time, and the deadline source on the
	 * main thread may not have fired yet when it reaches the rename.
	 */
	job->not_after_ns = priv->deadline_usec > 0
				    ? sfl_platform_monotonic_ns() + priv->deadline_usec * 1000
				    : G_MAXINT64;
	job->cancellable = cancellable != NULL ? g_object_ref(cancellable) : NULL;
	job->hook = priv->hook;
	job->hook_data = priv->hook_data;
	g_task_set_task_data(task, job, (GDestroyNotify)sfl_lease_io_job_free);
	return task;
}

/* where a job's thread begins: FALSE when @task was completed already */
static gboolean
sfl_lease_io_job_begin(SflLeaseIOJob *job, GTask *task)
{
	if (job->hook != NULL)
		job->hook(job->hook_data);
	if (job->path == NULL) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_INTERNAL, "no lease path");
		return FALSE;
	}
	return TRUE;
}

static void
sfl_lease_io_file_read_thread(GTask *task, gpointer source, gpointer task_data,
			      GCancellable *cancellable)
{
	SflLeaseIOJob *job = task_data;
	g_autoptr(SflLeaseDoc) doc = sfl_lease_doc_new();
	g_autoptr(GError) error = NULL;

	if (!sfl_lease_io_job_begin(job, task))
		return;
	if (!sfl_lease_doc_read(job->path, doc, &error)) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	g_task_return_pointer(task, g_steal_pointer(&doc), (GDestroyNotify)sfl_lease_doc_free);
}

static void
sfl_lease_io_file_read_async(SflLeaseIO *self, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = sfl_lease_io_file_task_new(self, NULL, cancellable, callback,
							   user_data, sfl_lease_io_file_read_async);
	g_task_run_in_thread(task, sfl_lease_io_file_read_thread);
}

/* moves a heap document returned by a task into the caller's */
static gboolean
sfl_lease_io_take_doc(GTask *task, SflLeaseDoc *doc, GError **error)
{
	g_autoptr(SflLeaseDoc) got = g_task_propagate_pointer(task, error);

	sfl_lease_doc_clear(doc);
	if (got == NULL)
		return FALSE;
	*doc = *got;
	got->holder = NULL;
	return TRUE;
}

static gboolean
sfl_lease_io_file_read_finish(SflLeaseIO *self, GAsyncResult *result, SflLeaseDoc *doc,
			      GError **error)
{
	return sfl_lease_io_take_doc(G_TASK(result), doc, error);
}

/*
 * A renewal that lands after its caller was told it failed could overwrite a successor's
 * claim with an older epoch; past the deadline the write is abandoned instead. The check sits
 * right before the rename, so only a stall inside the rename call itself can still slip by.
 */
static int
sfl_lease_io_write_gate(void *user_data)
{
	SflLeaseIOJob *job = user_data;

	if (job->cancellable != NULL && g_cancellable_is_cancelled(job->cancellable))
		return 0;
	return sfl_platform_monotonic_ns() <= job->not_after_ns;
}

static void
sfl_lease_io_file_write_thread(GTask *task, gpointer source, gpointer task_data,
			       GCancellable *cancellable)
{
	SflLeaseIOJob *job = task_data;
	SflPlatformError perr = { 0 };
	SflPlatformStatus status;
	gsize len = 0;
	const gchar *data = g_bytes_get_data(job->data, &len);
	g_autoptr(GError) error = NULL;

	if (!sfl_lease_io_job_begin(job, task))
		return;
	status = sfl_platform_replace_file_gated(job->path, data, len, sfl_lease_io_write_gate, job,
						 &perr);
	if (!sfl_platform_to_gerror(status, &perr, &error)) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	g_task_return_boolean(task, TRUE);
}

static void
sfl_lease_io_file_write_async(SflLeaseIO *self, GBytes *data, GCancellable *cancellable,
			      GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = sfl_lease_io_file_task_new(
		self, data, cancellable, callback, user_data, sfl_lease_io_file_write_async);
	g_task_run_in_thread(task, sfl_lease_io_file_write_thread);
}

static gboolean
sfl_lease_io_file_write_finish(SflLeaseIO *self, GAsyncResult *result, GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

/* --- the public wrappers: deadline, cancellation, one operation at a time ------------------ */

typedef struct {
	const gchar *what;   /* "read" or "write", for messages */
	GCancellable *inner; /* handed to the implementation; fired at the deadline */
	GSource *deadline;
	GSource *cancelled;
	gboolean answered; /* the caller has its result: a late one is dropped */
} SflLeaseIOCall;

static void
sfl_lease_io_call_disarm(SflLeaseIOCall *call)
{
	call->answered = TRUE;
	if (call->deadline != NULL) {
		g_source_destroy(call->deadline);
		g_clear_pointer(&call->deadline, g_source_unref);
	}
	if (call->cancelled != NULL) {
		g_source_destroy(call->cancelled);
		g_clear_pointer(&call->cancelled, g_source_unref);
	}
	/* an implementation that honours cancellation can stop a late operation early */
	if (call->inner != NULL)
		g_cancellable_cancel(call->inner);
}

static void
sfl_lease_io_call_free(SflLeaseIOCall *call)
{
	sfl_lease_io_call_disarm(call);
	g_clear_object(&call->inner);
	g_free(call);
}

static gboolean
sfl_lease_io_deadline_cb(gpointer user_data)
{
	GTask *task = G_TASK(user_data);
	SflLeaseIO *self = g_task_get_source_object(task);
	SflLeaseIOPrivate *priv = GET_PRIVATE(self);
	SflLeaseIOCall *call = g_task_get_task_data(task);

	sfl_lease_io_call_disarm(call);
	g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
				"lease %s of %s did not complete within %.3f s", call->what,
				priv->path != NULL ? priv->path : "(lease)",
				(gdouble)priv->deadline_usec / G_USEC_PER_SEC);
	return G_SOURCE_REMOVE;
}

static gboolean
sfl_lease_io_cancelled_cb(GCancellable *cancellable, gpointer user_data)
{
	GTask *task = G_TASK(user_data);
	SflLeaseIOCall *call = g_task_get_task_data(task);

	sfl_lease_io_call_disarm(call);
	g_task_return_error_if_cancelled(task);
	return G_SOURCE_REMOVE;
}

/*
 * Starts the wrapper task. Returns NULL when it already completed (cancelled, or an earlier
 * operation still runs); otherwise (transfer full) a task to hand to the implementation as its
 * callback data, completed by sfl_lease_io_inner_done().
 */
static GTask *
sfl_lease_io_begin(SflLeaseIO *self, const gchar *what, GCancellable *cancellable,
		   GAsyncReadyCallback callback, gpointer user_data, gpointer tag)
{
	SflLeaseIOPrivate *priv = GET_PRIVATE(self);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
	SflLeaseIOCall *call = g_new0(SflLeaseIOCall, 1);
	GMainContext *context = g_task_get_context(task);

	call->what = what;
	g_task_set_source_tag(task, tag);
	g_task_set_task_data(task, call, (GDestroyNotify)sfl_lease_io_call_free);
	if (g_task_return_error_if_cancelled(task))
		return NULL;
	if (priv->busy > 0) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"cannot %s the lease %s: an earlier operation on it has "
					"not finished",
					what, priv->path != NULL ? priv->path : "");
		return NULL;
	}
	call->inner = g_cancellable_new();
	if (priv->clock != NULL && priv->deadline_usec > 0) {
		call->deadline = sfl_clock_timeout_source_new(priv->clock, priv->deadline_usec);
		g_source_set_callback(call->deadline, sfl_lease_io_deadline_cb, task, NULL);
		g_source_attach(call->deadline, context);
	}
	if (cancellable != NULL) {
		call->cancelled = g_cancellable_source_new(cancellable);
		g_source_set_callback(call->cancelled, G_SOURCE_FUNC(sfl_lease_io_cancelled_cb),
				      task, NULL);
		g_source_attach(call->cancelled, context);
	}
	priv->busy++;
	return g_steal_pointer(&task);
}

/*
 * Bookkeeping when the implementation finished. Returns FALSE when the caller was already
 * answered (deadline or cancellation) and the result is to be dropped.
 */
static gboolean
sfl_lease_io_inner_done(GTask *task)
{
	SflLeaseIO *self = g_task_get_source_object(task);
	SflLeaseIOPrivate *priv = GET_PRIVATE(self);
	SflLeaseIOCall *call = g_task_get_task_data(task);

	priv->busy--;
	if (call->answered) {
		g_debug("dropping the late result of a lease %s", call->what);
		return FALSE;
	}
	sfl_lease_io_call_disarm(call);
	return TRUE;
}

static void
sfl_lease_io_read_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflLeaseIO *self = g_task_get_source_object(task);
	g_autoptr(SflLeaseDoc) doc = sfl_lease_doc_new();
	g_autoptr(GError) error = NULL;
	gboolean ok = SFL_LEASE_IO_GET_CLASS(self)->read_finish(self, result, doc, &error);

	if (!sfl_lease_io_inner_done(task))
		return;
	if (!ok) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	g_task_return_pointer(task, g_steal_pointer(&doc), (GDestroyNotify)sfl_lease_doc_free);
}

/**
 * sfl_lease_io_read_async:
 * @self: a lease I/O
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Reads the lease document, within the deadline.
 */
void
sfl_lease_io_read_async(SflLeaseIO *self, GCancellable *cancellable, GAsyncReadyCallback callback,
			gpointer user_data)
{
	GTask *task;
	GCancellable *inner;

	g_return_if_fail(SFL_IS_LEASE_IO(self));
	task = sfl_lease_io_begin(self, "read", cancellable, callback, user_data,
				  sfl_lease_io_read_async);
	if (task == NULL)
		return;
	inner = ((SflLeaseIOCall *)g_task_get_task_data(task))->inner;
	SFL_LEASE_IO_GET_CLASS(self)->read_async(self, inner, sfl_lease_io_read_done_cb, task);
}

/**
 * sfl_lease_io_read_finish:
 * @self: a lease I/O
 * @result: the result
 * @doc: (out caller-allocates): the lease; cleared first
 * @error: return location for an error
 *
 * Returns: %FALSE when it cannot tell (I/O error, deadline passed, cancelled); never take that
 * for absent
 */
gboolean
sfl_lease_io_read_finish(SflLeaseIO *self, GAsyncResult *result, SflLeaseDoc *doc, GError **error)
{
	g_return_val_if_fail(SFL_IS_LEASE_IO(self), FALSE);
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(doc != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
	return sfl_lease_io_take_doc(G_TASK(result), doc, error);
}

static void
sfl_lease_io_write_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	SflLeaseIO *self = g_task_get_source_object(task);
	g_autoptr(GError) error = NULL;
	gboolean ok = SFL_LEASE_IO_GET_CLASS(self)->write_finish(self, result, &error);

	if (!sfl_lease_io_inner_done(task))
		return;
	if (!ok) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	g_task_return_boolean(task, TRUE);
}

/**
 * sfl_lease_io_write_async:
 * @self: a lease I/O
 * @holder: the holder id
 * @expires_at_usec: wall clock, Unix microseconds
 * @epoch: the fence token
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 *
 * Replaces the lease with {holder, expires_at, epoch} (sfl_lease_doc_serialize), within the
 * deadline.
 */
void
sfl_lease_io_write_async(SflLeaseIO *self, const gchar *holder, gint64 expires_at_usec,
			 guint64 epoch, GCancellable *cancellable, GAsyncReadyCallback callback,
			 gpointer user_data)
{
	g_autoptr(GBytes) data = NULL;
	GTask *task;
	GCancellable *inner;
	gchar *text;
	gsize len = 0;

	g_return_if_fail(SFL_IS_LEASE_IO(self));
	g_return_if_fail(holder != NULL);
	task = sfl_lease_io_begin(self, "write", cancellable, callback, user_data,
				  sfl_lease_io_write_async);
	if (task == NULL)
		return;
	text = sfl_lease_doc_serialize(holder, expires_at_usec, epoch, &len);
	data = g_bytes_new_take(text, len);
	inner = ((SflLeaseIOCall *)g_task_get_task_data(task))->inner;
	SFL_LEASE_IO_GET_CLASS(self)->write_async(self, data, inner, sfl_lease_io_write_done_cb,
						  task);
}

/**
 * sfl_lease_io_write_finish:
 * @self: a lease I/O
 * @result: the result
 * @error: return location for an error
 *
 * Returns: %FALSE when the write failed, timed out or was cancelled; it may still have landed
 */
gboolean
sfl_lease_io_write_finish(SflLeaseIO *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(SFL_IS_LEASE_IO(self), FALSE);
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/**
 * sfl_lease_io_set_deadline:
 * @self: a lease I/O
 * @clock: (nullable): the clock the deadline runs on; %NULL for none
 * @deadline_usec: how long an operation may take; 0 for no limit
 *
 * The file-lease coordinator sets its renew_interval here: an answer later than that is no
 * answer, because the lease loop must go on deciding.
 */
void
sfl_lease_io_set_deadline(SflLeaseIO *self, SflClock *clock, gint64 deadline_usec)
{
	SflLeaseIOPrivate *priv = GET_PRIVATE(self);

	g_return_if_fail(SFL_IS_LEASE_IO(self));
	g_return_if_fail(deadline_usec >= 0);
	if (clock != NULL)
		sfl_clock_ref(clock);
	g_clear_pointer(&priv->clock, sfl_clock_unref);
	priv->clock = clock;
	priv->deadline_usec = deadline_usec;
}

/**
 * sfl_lease_io_get_path:
 * @self: a lease I/O
 *
 * Returns: (nullable): the lease file, for messages; %NULL for implementations without one
 */
const gchar *
sfl_lease_io_get_path(SflLeaseIO *self)
{
	g_return_val_if_fail(SFL_IS_LEASE_IO(self), NULL);
	return GET_PRIVATE(self)->path;
}

/**
 * sfl_lease_io_set_worker_hook:
 * @self: a lease I/O (file implementation)
 * @hook: (nullable): called in the worker thread before each blocking operation
 * @user_data: for @hook
 *
 * For tests: stall a worker to play a hung disk.
 */
void
sfl_lease_io_set_worker_hook(SflLeaseIO *self, SflLeaseIOWorkerHook hook, gpointer user_data)
{
	SflLeaseIOPrivate *priv = GET_PRIVATE(self);

	g_return_if_fail(SFL_IS_LEASE_IO(self));
	priv->hook = hook;
	priv->hook_data = user_data;
}

guint
sfl_lease_io_get_busy(SflLeaseIO *self)
{
	g_return_val_if_fail(SFL_IS_LEASE_IO(self), 0);
	return GET_PRIVATE(self)->busy;
}

/* --- GObject ------------------------------------------------------------------------------ */

static void
sfl_lease_io_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
	SflLeaseIOPrivate *priv = GET_PRIVATE(SFL_LEASE_IO(object));

	switch (prop_id) {
	case PROP_PATH:
		g_free(priv->path);
		priv->path = g_value_dup_string(value);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
		break;
	}
}

static void
sfl_lease_io_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	SflLeaseIOPrivate *priv = GET_PRIVATE(SFL_LEASE_IO(object));

	switch (prop_id) {
	case PROP_PATH:
		g_value_set_string(value, priv->path);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
		break;
	}
}

static void
sfl_lease_io_finalize(GObject *object)
{
	SflLeaseIOPrivate *priv = GET_PRIVATE(SFL_LEASE_IO(object));

	g_free(priv->path);
	g_clear_pointer(&priv->clock, sfl_clock_unref);
	G_OBJECT_CLASS(sfl_lease_io_parent_class)->finalize(object);
}

static void
sfl_lease_io_class_init(SflLeaseIOClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->set_property = sfl_lease_io_set_property;
	object_class->get_property = sfl_lease_io_get_property;
	object_class->finalize = sfl_lease_io_finalize;
	klass->read_async = sfl_lease_io_file_read_async;
	klass->read_finish = sfl_lease_io_file_read_finish;
	klass->write_async = sfl_lease_io_file_write_async;
	klass->write_finish = sfl_lease_io_file_write_finish;

	/* the lease file; subclasses that keep the lease elsewhere leave it unset */
	sfl_lease_io_props[PROP_PATH] = g_param_spec_string(
		"path", NULL, NULL, NULL,
		G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
	g_object_class_install_properties(object_class, N_PROPS, sfl_lease_io_props);
}

static void
sfl_lease_io_init(SflLeaseIO *self)
{
}

/**
 * sfl_lease_io_new:
 * @path: the lease file, on storage every replica shares
 *
 * Returns: (transfer full): lease I/O on a file, without a deadline until one is set
 */
SflLeaseIO *
sfl_lease_io_new(const gchar *path)
{
	g_return_val_if_fail(path != NULL, NULL);
	return g_object_new(SFL_TYPE_LEASE_IO, "path", path, NULL);
}
