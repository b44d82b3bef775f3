/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFileStore"

#include "config.h"

#include "sfl-file-store.h"

#include <errno.h>
#include <glib/gstdio.h>

#include "sfl-error.h"
#include "sfl-file-store-private.h"
#include "sfl-platform-glib.h"
#include "sfl-platform.h"
#include "sfl-store-merge.h"

struct _SflFileStore {
	SflCheckpointStore parent_instance;
	gchar *path;
	gboolean exclusive;
	SflPlatformLock *lock;
	SflFileStoreLockFunc lock_func;
	SflStateDoc *cache;  /* worker thread only */
	gboolean lockless;   /* worker thread only: the file system cannot lock */
	gboolean concurrent; /* several writers at once (sharding): the write lock is required */
	gboolean lock_unsupported; /* worker thread only: concurrent, and the lock cannot work */
	gint writes;		   /* atomic: read by tests from the main thread */
};

G_DEFINE_TYPE(SflFileStore, sfl_file_store, SFL_TYPE_CHECKPOINT_STORE)

/**
 * sfl_file_store_lock_path:
 * @path: a state file path
 *
 * Returns: (transfer full): the lock file guarding it in exclusive mode
 */
gchar *
sfl_file_store_lock_path(const gchar *path)
{
	return g_strconcat(path, ".lock", NULL);
}

/*
 * The SflError code of a failed platform call: access refused (EACCES, EPERM,
 * ERROR_ACCESS_DENIED) is AUTH, as a 403 of S3 or GCS is, so a lost permission is told apart
 * from a failing disk; an oversized file is corrupt; anything else is I/O, TRANSIENT.
 */
static SflError
sfl_file_store_error_code(SflPlatformStatus status, const SflPlatformError *perr)
{
	if (status == SFL_PLATFORM_ERR_TOO_LARGE)
		return SFL_ERROR_CORRUPT;
	if (perr->access_denied)
		return SFL_ERROR_AUTH;
	return SFL_ERROR_TRANSIENT;
}

/* absent is an empty document; unreadable or corrupt is an error, never an empty document */
static SflStateDoc *
sfl_file_store_read_fresh(SflFileStore *self, GError **error)
{
	SflPlatformError perr = { 0 };
	g_autofree gchar *data = NULL;
	gsize len = 0;
	SflPlatformStatus status;
	g_autoptr(GError) local = NULL;

	status = sfl_platform_read_file(self->path, SFL_FILE_STORE_MAX_BYTES, &data, &len, &perr);
	if (status == SFL_PLATFORM_ERR_NOT_FOUND)
		return sfl_state_doc_new();
	if (!sfl_platform_to_gerror(status, &perr, &local)) {
		g_set_error(error, SFL_ERROR, sfl_file_store_error_code(status, &perr),
			    "cannot read state file: %s", local->message);
		return NULL;
	}
	return sfl_store_parse(data, len, self->path, error);
}

static SflStateDoc *
sfl_file_store_cached(SflFileStore *self, GError **error)
{
	if (self->cache == NULL)
		self->cache = sfl_file_store_read_fresh(self, error);
	return self->cache;
}

static gboolean
sfl_file_store_write(SflFileStore *self, const SflStateDoc *doc, GError **error)
{
	SflPlatformError perr = { 0 };
	g_autofree gchar *text = NULL;
	gsize len = 0;
	g_autoptr(GError) local = NULL;
	SflPlatformStatus status;

	text = sfl_state_doc_serialize(doc, &len);
	status = sfl_platform_replace_file(self->path, text, len, &perr);
	if (!sfl_platform_to_gerror(status, &perr, &local)) {
		g_set_error(error, SFL_ERROR, sfl_file_store_error_code(status, &perr),
			    "cannot write state file: %s", local->message);
		return FALSE;
	}
	g_atomic_int_inc(&self->writes);
	return TRUE;
}

static gboolean
sfl_file_store_lock_for_write(SflFileStore *self, SflPlatformLock **lock, GError **error);

static gboolean
sfl_file_store_open(SflCheckpointStore *store, GCancellable *cancellable, GError **error)
{
	SflFileStore *self = SFL_FILE_STORE(store);
	g_autofree gchar *dir = g_path_get_dirname(self->path);

	if (g_mkdir_with_parents(dir, 0700) != 0) {
		int saved = errno;
		g_set_error(error, SFL_ERROR,
			    saved == EACCES || saved == EPERM ? SFL_ERROR_AUTH
							      : SFL_ERROR_TRANSIENT,
			    "cannot create state directory %s: %s", dir, g_strerror(saved));
		return FALSE;
	}
	if (self->exclusive && self->lock == NULL) {
		g_autofree gchar *lock_path = sfl_file_store_lock_path(self->path);
		SflPlatformError perr = { 0 };
		gint64 holder = 0;
		SflPlatformStatus status = self->lock_func(lock_path, &self->lock, &holder, &perr);
		if (status == SFL_PLATFORM_ERR_BUSY) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
				    "state file %s is in use by another sf2loki (%s); stop it, or "
				    "run replicas under a coordinator",
				    self->path, perr.message);
			return FALSE;
		}
		/* the instance lock is what keeps a second daemon out: without it, refuse */
		if (status == SFL_PLATFORM_ERR_UNSUPPORTED) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_TRANSIENT,
				    "%s; the file system of state.file.path cannot lock files "
				    "(NFS without lockd?): move the state to a local disk, or run "
				    "under a coordinator",
				    perr.message);
			return FALSE;
		}
		if (!sfl_platform_to_gerror(status, &perr, error))
			return FALSE;
	}
	if (self->concurrent && !self->exclusive) {
		/*
		 * A sharded group cannot commit here at all without locks: say so at start-up.
		 * Only that answer stops it; a busy or failing lock is the commits' business.
		 */
		SflPlatformLock *probe = NULL;
		g_autoptr(GError) local = NULL;

		if (!sfl_file_store_lock_for_write(self, &probe, &local) &&
		    self->lock_unsupported) {
			g_propagate_error(error, g_steal_pointer(&local));
			return FALSE;
		}
		sfl_platform_lock_release(probe);
	}
	/* a corrupt or unreadable file stops startup here, before any source runs */
	g_clear_pointer(&self->cache, sfl_state_doc_free);
	if (sfl_file_store_cached(self, error) == NULL)
		return FALSE;
	/* a standby may lead much later: under a coordinator, read again on first use */
	if (!self->exclusive)
		g_clear_pointer(&self->cache, sfl_state_doc_free);
	return TRUE;
}

static gchar *
sfl_file_store_load(SflCheckpointStore *store, const gchar *key, GCancellable *cancellable,
		    GError **error)
{
	SflFileStore *self = SFL_FILE_STORE(store);
	SflStateDoc *doc = sfl_file_store_cached(self, error);
	if (doc == NULL)
		return NULL;
	return g_strdup(sfl_state_doc_get(doc, key));
}

/*
 * The short write lock of shared mode; held until *@lock is released, which may be NULL: on a
 * file system that cannot lock at all (NFS without lockd) the write goes ahead without it.
 */
static gboolean
sfl_file_store_lock_for_write(SflFileStore *self, SflPlatformLock **lock, GError **error)
{
	/* not <path>.lock: a daemon without a coordinator holds that one for its whole life, and a
	 * forced `sf2loki state set` beside it must still be able to write */
	g_autofree gchar *lock_path = g_strconcat(self->path, ".write.lock", NULL);
	SflPlatformError perr = { 0 };
	gint64 holder = 0;
	SflPlatformStatus status;
	g_autoptr(GError) local = NULL;

	*lock = NULL;
	/* the file system said once it cannot lock; asking again would only wait on it again */
	if (self->lockless)
		return TRUE;
	status = self->lock_func(lock_path, lock, &holder, &perr);
	if (status == SFL_PLATFORM_ERR_BUSY) {
		/* a conflict: retried like any failed commit, and counted as one while it lasts */
		g_set_error(error, SFL_ERROR, SFL_ERROR_CONFLICT,
			    "state file %s is being written by another replica (%s); retrying",
			    self->path, perr.message);
		return FALSE;
	}
	self->lock_unsupported = status == SFL_PLATFORM_ERR_UNSUPPORTED && self->concurrent;
	if (self->lock_unsupported) {
		/* replicas commit at the same time: without the lock one's rename drops another's
		 */
		g_set_error(
			error, SFL_ERROR, SFL_ERROR_TRANSIENT,
			"state file %s: the file system cannot lock %s (%s), and a sharded group "
			"(coordinate.sharding.enabled) commits from several replicas at once: "
			"without the lock one replica's write would drop another's keys. Use a "
			"file system with working locks (NFS: run lockd, or NFSv4) or an object "
			"store (state.store: s3 or gcs)",
			self->path, lock_path, perr.message);
		return FALSE;
	}
	if (status == SFL_PLATFORM_ERR_UNSUPPORTED) {
		/*
		 * Retrying would never get it. What is left is what the original had
		 * (docs/deployment/state.md): the fresh read and the epoch fence, which still
		 * refuse a stale leader; only a writer frozen between its check and its rename can
		 * still land an older document.
		 */
		self->lockless = TRUE;
		g_warning("state file %s: the file system cannot lock %s (%s); committing without "
			  "the write lock from now on, protected by the fresh read and the epoch "
			  "fence only. Use a file system with working locks (NFS: run lockd, or "
			  "NFSv4) to also stop a frozen writer",
			  self->path, lock_path, perr.message);
		return TRUE;
	}
	if (!sfl_platform_to_gerror(status, &perr, &local)) {
		if (perr.access_denied)
			local->code = SFL_ERROR_AUTH;
		g_prefix_error(&local, "cannot lock state file %s for writing: ", self->path);
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	return TRUE;
}

/* exclusive mode owns the file and can trust its cache; otherwise only a fresh read counts */
static gboolean
sfl_file_store_apply_doc(SflFileStore *self, const SflStateDoc *items, const gchar *delete_key,
			 const SflStoreWriter *writer, GError **error)
{
	g_autoptr(SflStateDoc) doc = NULL;

	if (self->exclusive) {
		SflStateDoc *cached = sfl_file_store_cached(self, error);
		if (cached == NULL)
			return FALSE;
		doc = sfl_state_doc_copy(cached);
	} else {
		doc = sfl_file_store_read_fresh(self, error);
		if (doc == NULL)
			return FALSE;
	}
	if (sfl_store_write_needed(doc, items, delete_key, writer)) {
		if (!sfl_store_apply_write(doc, items, delete_key, writer, self->path, error))
			return FALSE;
		if (!sfl_file_store_write(self, doc, error))
			return FALSE;
	}
	g_clear_pointer(&self->cache, sfl_state_doc_free);
	self->cache = g_steal_pointer(&doc);
	return TRUE;
}

/*
 * Replicas share the file: the read, the fence check against it and the rename are one step
 * under <path>.write.lock. Without it, a writer frozen after its check (SIGSTOP, a paused VM)
 * renames its older document over the next leader's when it wakes (found by tests/ha). A busy lock
 * is a conflict, so the commit is retried; a frozen holder delays the others' writes until it
 * resumes or dies (the kernel drops the lock with the process).
 */
static gboolean
sfl_file_store_apply(SflFileStore *self, const SflStateDoc *items, const gchar *delete_key,
		     const SflStoreWriter *writer, GError **error)
{
	SflPlatformLock *lock = NULL;
	gboolean ok;

	if (self->exclusive)
		return sfl_file_store_apply_doc(self, items, delete_key, writer, error);
	if (!sfl_file_store_lock_for_write(self, &lock, error))
		return FALSE;
	ok = sfl_file_store_apply_doc(self, items, delete_key, writer, error);
	sfl_platform_lock_release(lock);
	return ok;
}

static gboolean
sfl_file_store_commit_many(SflCheckpointStore *store, const SflStateDoc *items,
			   const SflStoreWriter *writer, GCancellable *cancellable, GError **error)
{
	return sfl_file_store_apply(SFL_FILE_STORE(store), items, NULL, writer, error);
}

static gboolean
sfl_file_store_delete_key(SflCheckpointStore *store, const gchar *key, const SflStoreWriter *writer,
			  GCancellable *cancellable, GError **error)
{
	return sfl_file_store_apply(SFL_FILE_STORE(store), NULL, key, writer, error);
}

static SflStateDoc *
sfl_file_store_snapshot(SflCheckpointStore *store, GCancellable *cancellable, GError **error)
{
	SflFileStore *self = SFL_FILE_STORE(store);
	SflStateDoc *cached;

	if (!self->exclusive)
		return sfl_file_store_read_fresh(self, error);
	cached = sfl_file_store_cached(self, error);
	return cached != NULL ? sfl_state_doc_copy(cached) : NULL;
}

static gboolean
sfl_file_store_persisted_epoch(SflCheckpointStore *store, const gchar *unit, guint64 *epoch,
			       gboolean *present, GCancellable *cancellable, GError **error)
{
	g_autoptr(SflStateDoc) doc = sfl_file_store_read_fresh(SFL_FILE_STORE(store), error);

	return sfl_store_persisted_epoch(doc, unit, epoch, present, error);
}

static void
sfl_file_store_reset(SflCheckpointStore *store)
{
	SflFileStore *self = SFL_FILE_STORE(store);
	g_clear_pointer(&self->cache, sfl_state_doc_free);
}

static void
sfl_file_store_close(SflCheckpointStore *store)
{
	SflFileStore *self = SFL_FILE_STORE(store);
	g_clear_pointer(&self->lock, sfl_platform_lock_release);
}

static void
sfl_file_store_finalize(GObject *object)
{
	SflFileStore *self = SFL_FILE_STORE(object);
	G_OBJECT_CLASS(sfl_file_store_parent_class)->finalize(object);
	g_clear_pointer(&self->cache, sfl_state_doc_free);
	g_free(self->path);
}

static void
sfl_file_store_class_init(SflFileStoreClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	SflCheckpointStoreClass *store_class = SFL_CHECKPOINT_STORE_CLASS(klass);

	object_class->finalize = sfl_file_store_finalize;
	store_class->open = sfl_file_store_open;
	store_class->load = sfl_file_store_load;
	store_class->commit_many = sfl_file_store_commit_many;
	store_class->delete_key = sfl_file_store_delete_key;
	store_class->snapshot = sfl_file_store_snapshot;
	store_class->persisted_epoch = sfl_file_store_persisted_epoch;
	store_class->reset = sfl_file_store_reset;
	store_class->close = sfl_file_store_close;
}

static void
sfl_file_store_init(SflFileStore *self)
{
	self->lock_func = sfl_platform_lock_acquire;
}

/**
 * sfl_file_store_new:
 * @path: the state file
 * @exclusive: hold <path>.lock for the store's lifetime (no coordinator)
 *
 * Nothing touches the disk until sfl_checkpoint_store_open_async().
 *
 * Returns: (transfer full): the store
 */
SflCheckpointStore *
sfl_file_store_new(const gchar *path, gboolean exclusive)
{
	SflFileStore *self;

	g_return_val_if_fail(path != NULL && path[0] != '\0', NULL);
	self = g_object_new(SFL_TYPE_FILE_STORE, NULL);
	self->path = g_strdup(path);
	self->exclusive = exclusive;
	return SFL_CHECKPOINT_STORE(self);
}

const gchar *
sfl_file_store_get_path(SflFileStore *self)
{
	g_return_val_if_fail(SFL_IS_FILE_STORE(self), NULL);
	return self->path;
}

guint
sfl_file_store_get_write_count(SflFileStore *self)
{
	return (guint)g_atomic_int_get(&self->writes);
}

/**
 * sfl_file_store_set_concurrent:
 * @self: a store in shared mode, not yet opened
 * @concurrent: several writers commit at the same time (a sharded group)
 *
 * With several writers at once the short write lock is what serialises their read, merge and
 * rename; a file system that cannot lock then fails each commit instead of going ahead
 * without it.
 */
void
sfl_file_store_set_concurrent(SflFileStore *self, gboolean concurrent)
{
	g_return_if_fail(SFL_IS_FILE_STORE(self));
	self->concurrent = concurrent;
}

void
sfl_file_store_set_lock_func(SflFileStore *self, SflFileStoreLockFunc func)
{
	g_return_if_fail(SFL_IS_FILE_STORE(self));
	self->lock_func = func != NULL ? func : sfl_platform_lock_acquire;
}
