/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflShard"

#include "config.h"

#include "sfl-membership.h"

#include <glib/gstdio.h>
#include <jansson.h>

#include "sfl-error.h"
#include "sfl-gsource.h"
#include "sfl-member-view.h"
#include "sfl-platform-glib.h"
#include "sfl-platform.h"

/* a record unchanged this many ttls belongs to a replica that is gone for good */
#define SFL_MEMBERSHIP_DEAD_TTLS 10

void
sfl_member_entry_free(SflMemberEntry *entry)
{
	if (entry == NULL)
		return;
	g_free(entry->holder);
	g_free(entry->version);
	g_free(entry);
}

/* --- the store seam ------------------------------------------------------------------------ */

G_DEFINE_TYPE(SflMemberStore, sfl_member_store, G_TYPE_OBJECT)

static void
sfl_member_store_class_init(SflMemberStoreClass *klass)
{
}

static void
sfl_member_store_init(SflMemberStore *self)
{
}

/* --- the file store: one record per member in a directory, written in worker threads -------- */

#define SFL_TYPE_FILE_MEMBER_STORE (sfl_file_member_store_get_type())
G_DECLARE_FINAL_TYPE(SflFileMemberStore, sfl_file_member_store, SFL, FILE_MEMBER_STORE,
		     SflMemberStore)

struct _SflFileMemberStore {
	SflMemberStore parent_instance;
	gchar *dir;
};

G_DEFINE_TYPE(SflFileMemberStore, sfl_file_member_store, SFL_TYPE_MEMBER_STORE)

typedef struct {
	gchar *dir;
	gchar *holder;
	guint64 seq;
} SflFileMemberJob;

static void
sfl_file_member_job_free(SflFileMemberJob *job)
{
	g_free(job->dir);
	g_free(job->holder);
	g_free(job);
}

/* the holder as a file name: anything but [A-Za-z0-9._-] as %XX, so names never collide */
static gchar *
sfl_file_member_path(const gchar *dir, const gchar *holder)
{
	g_autoptr(GString) name = g_string_new(NULL);

	for (const guchar *p = (const guchar *)holder; *p != '\0'; p++) {
		if (g_ascii_isalnum(*p) || *p == '.' || *p == '_' || *p == '-')
			g_string_append_c(name, (gchar)*p);
		else
			g_string_append_printf(name, "%%%02X", *p);
	}
	g_string_append(name, ".json");
	return g_build_filename(dir, name->str, NULL);
}

static GTask *
sfl_file_member_task(SflMemberStore *store, const gchar *holder, guint64 seq,
		     GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
	SflFileMemberStore *self = SFL_FILE_MEMBER_STORE(store);
	GTask *task = g_task_new(store, cancellable, callback, user_data);
	SflFileMemberJob *job = g_new0(SflFileMemberJob, 1);

	job->dir = g_strdup(self->dir);
	job->holder = g_strdup(holder);
	job->seq = seq;
	g_task_set_task_data(task, job, (GDestroyNotify)sfl_file_member_job_free);
	return task;
}

static void
sfl_file_member_publish_thread(GTask *task, gpointer source, gpointer data, GCancellable *c)
{
	SflFileMemberJob *job = data;
	g_autofree gchar *path = sfl_file_member_path(job->dir, job->holder);
	json_t *doc = json_pack("{s:s, s:I}", "holder", job->holder, "seq", (json_int_t)job->seq);
	g_autofree gchar *text = json_dumps(doc, JSON_SORT_KEYS);
	SflPlatformError perr = { 0 };
	SflPlatformStatus status;
	GError *error = NULL;

	json_decref(doc);
	if (g_mkdir_with_parents(job->dir, 0750) != 0) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"cannot create the membership directory %s: %s", job->dir,
					g_strerror(errno));
		return;
	}
	status = sfl_platform_replace_file(path, text, strlen(text), &perr);
	if (!sfl_platform_to_gerror(status, &perr, &error)) {
		g_task_return_error(task, error);
		return;
	}
	g_task_return_boolean(task, TRUE);
}

static void
sfl_file_member_publish_async(SflMemberStore *store, const gchar *holder, guint64 seq,
			      GCancellable *cancellable, GAsyncReadyCallback callback,
			      gpointer user_data)
{
	g_autoptr(GTask) task =
		sfl_file_member_task(store, holder, seq, cancellable, callback, user_data);
	g_task_run_in_thread(task, sfl_file_member_publish_thread);
}

static gboolean
sfl_file_member_boolean_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

/*
 * One record's text, read once. A peer renews by replacing its file, and where the replace is
 * not atomic for readers (wine deletes, then renames) the file is briefly missing: that reads
 * as NOT_FOUND and the record is left out of this listing only, which the view tolerates (it
 * forgets a member after two listings in a row without it), so no retry is needed to tell a
 * renewal from a clean leave.
 */
static SflPlatformStatus
sfl_file_member_read(const gchar *path, gchar **text, SflPlatformError *perr)
{
	char *data = NULL;
	size_t len = 0;
	SflPlatformStatus status = sfl_platform_read_file(path, 64 * 1024, &data, &len, perr);

	if (status == SFL_PLATFORM_OK) {
		*text = g_strndup(data, len);
		sfl_platform_free(data);
	}
	return status;
}

/* every `*.json` that reads as a record; anything else in the directory is not a member */
static void
sfl_file_member_list_thread(GTask *task, gpointer source, gpointer data, GCancellable *c)
{
	SflFileMemberJob *job = data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GDir) dir = g_dir_open(job->dir, 0, &error);
	GPtrArray *entries = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_member_entry_free);
	const gchar *name = NULL;

	if (dir == NULL) {
		/* no directory yet is an empty group; anything else is "cannot tell" */
		if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
			g_task_return_pointer(task, entries, (GDestroyNotify)g_ptr_array_unref);
			return;
		}
		g_ptr_array_unref(entries);
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"cannot list the membership directory %s: %s", job->dir,
					error->message);
		return;
	}
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *path = NULL;
		g_autofree gchar *text = NULL;
		SflPlatformError perr = { 0 };
		json_t *doc = NULL;
		const gchar *holder = NULL;
		json_int_t seq = 0;

		if (!g_str_has_suffix(name, ".json"))
			continue;
		path = g_build_filename(job->dir, name, NULL);
		switch (sfl_file_member_read(path, &text, &perr)) {
		case SFL_PLATFORM_OK:
			break;
		case SFL_PLATFORM_ERR_NOT_FOUND:
			continue; /* removed since the listing, or a renewal caught mid-replace */
		default:
			/* a record there but unreadable: this round cannot tell who is live */
			g_ptr_array_unref(entries);
			g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
						"cannot read the membership record: %s",
						perr.message);
			return;
		}
		doc = json_loads(text, 0, NULL);
		if (json_unpack(doc, "{s:s, s:I}", "holder", &holder, "seq", &seq) == 0) {
			SflMemberEntry *entry = g_new0(SflMemberEntry, 1);

			entry->holder = g_strdup(holder);
			entry->version = g_strdup_printf("%" G_GINT64_FORMAT, (gint64)seq);
			g_ptr_array_add(entries, entry);
		}
		json_decref(doc);
	}
	g_task_return_pointer(task, entries, (GDestroyNotify)g_ptr_array_unref);
}

static void
sfl_file_member_list_async(SflMemberStore *store, GCancellable *cancellable,
			   GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task =
		sfl_file_member_task(store, "", 0, cancellable, callback, user_data);
	g_task_run_in_thread(task, sfl_file_member_list_thread);
}

static GPtrArray *
sfl_file_member_list_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
sfl_file_member_remove_thread(GTask *task, gpointer source, gpointer data, GCancellable *c)
{
	SflFileMemberJob *job = data;
	g_autofree gchar *path = sfl_file_member_path(job->dir, job->holder);

	if (g_unlink(path) != 0 && errno != ENOENT) {
		g_task_return_new_error(task, SFL_ERROR, SFL_ERROR_TRANSIENT,
					"cannot remove %s: %s", path, g_strerror(errno));
		return;
	}
	g_task_return_boolean(task, TRUE);
}

static void
sfl_file_member_remove_async(SflMemberStore *store, const gchar *holder, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task =
		sfl_file_member_task(store, holder, 0, cancellable, callback, user_data);
	g_task_run_in_thread(task, sfl_file_member_remove_thread);
}

static void
sfl_file_member_store_finalize(GObject *object)
{
	g_free(SFL_FILE_MEMBER_STORE(object)->dir);
	G_OBJECT_CLASS(sfl_file_member_store_parent_class)->finalize(object);
}

static void
sfl_file_member_store_class_init(SflFileMemberStoreClass *klass)
{
	SflMemberStoreClass *store_class = SFL_MEMBER_STORE_CLASS(klass);

	G_OBJECT_CLASS(klass)->finalize = sfl_file_member_store_finalize;
	store_class->publish_async = sfl_file_member_publish_async;
	store_class->publish_finish = sfl_file_member_boolean_finish;
	store_class->list_async = sfl_file_member_list_async;
	store_class->list_finish = sfl_file_member_list_finish;
	store_class->remove_async = sfl_file_member_remove_async;
	store_class->remove_finish = sfl_file_member_boolean_finish;
}

static void
sfl_file_member_store_init(SflFileMemberStore *self)
{
}

SflMemberStore *
sfl_file_member_store_new(const gchar *dir)
{
	SflFileMemberStore *self = g_object_new(SFL_TYPE_FILE_MEMBER_STORE, NULL);

	self->dir = g_strdup(dir);
	return SFL_MEMBER_STORE(self);
}

/* --- the loop -------------------------------------------------------------------------------- */

struct _SflMembership {
	SflMemberStore *store;
	gchar *holder;
	SflClock *clock;
	gint64 ttl_usec;
	gint64 renew_usec;
	GMainContext *context;
	SflMemberView *view;
	GPtrArray *live; /* (element-type utf8) */
	guint64 seq;
	GSource *timer;
	GSource *watch; /* while a round waits on the store: the view judged again */
	gint64 round_start_usec;
	gint64 round_due_usec; /* when the round was due: rounds keep a fixed rate */
	gboolean warned_slow;
	GCancellable *cancellable; /* replaced by stop: late completions see it cancelled */
	GPtrArray *removals;	   /* dead holders still to remove this round */
	gboolean running;
	gboolean busy; /* a store operation of the round is in flight */
	SflMembershipChangedFunc changed;
	gpointer changed_data;
};

static void sfl_membership_round(gpointer user_data);
static void sfl_membership_remove_next(SflMembership *self);

/*
 * At a fixed rate from when each round was due, not renew_usec after it finished: a store that
 * takes d per round would otherwise stretch every period to renew + d, and a dead member's
 * absence (members_ttl unchanged over several listings) would be seen that many d later.
 */
static void
sfl_membership_schedule(SflMembership *self)
{
	gint64 delay = 0;

	if (!self->running)
		return;
	self->round_due_usec += self->renew_usec;
	delay = MAX(0, self->round_due_usec - sfl_clock_monotonic_usec(self->clock));
	sfl_clock_once(self->clock, &self->timer, delay, "sf2loki membership", sfl_membership_round,
		       self, self->context);
}

static gboolean
sfl_membership_same(const GPtrArray *a, const GPtrArray *b)
{
	if (a->len != b->len)
		return FALSE;
	for (guint i = 0; i < a->len; i++)
		if (g_strcmp0(a->pdata[i], b->pdata[i]) != 0)
			return FALSE;
	return TRUE;
}

static void
sfl_membership_update(SflMembership *self)
{
	GPtrArray *live = sfl_member_view_live(self->view, sfl_clock_monotonic_usec(self->clock));

	if (sfl_membership_same(live, self->live)) {
		g_ptr_array_unref(live);
		return;
	}
	g_ptr_array_unref(self->live);
	self->live = live;
	g_debug("membership: %u live", live->len);
	if (self->changed != NULL)
		self->changed(self, self->live, self->changed_data);
}

static void
sfl_membership_removed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflMembership *self = user_data;
	g_autoptr(GError) error = NULL;

	if (!SFL_MEMBER_STORE_GET_CLASS(source)->remove_finish(SFL_MEMBER_STORE(source), result,
							       &error) &&
	    g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	if (error != NULL)
		g_warning("membership: %s", error->message);
	sfl_membership_remove_next(self);
}

/* one at a time: the store's operations never overlap */
static void
sfl_membership_remove_next(SflMembership *self)
{
	g_autofree gchar *holder = NULL;

	if (self->removals->len == 0) {
		self->busy = FALSE;
		sfl_clear_source(&self->watch);
		if (self->warned_slow)
			g_message("membership: the store answers again");
		self->warned_slow = FALSE;
		sfl_membership_schedule(self);
		return;
	}
	holder = g_ptr_array_steal_index(self->removals, 0);
	g_message("membership: removing the record of %s, unchanged for %d ttls", holder,
		  SFL_MEMBERSHIP_DEAD_TTLS);
	SFL_MEMBER_STORE_GET_CLASS(self->store)
		->remove_async(self->store, holder, self->cancellable, sfl_membership_removed_cb,
			       self);
}

static void
sfl_membership_listed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflMembership *self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) entries = SFL_MEMBER_STORE_GET_CLASS(source)->list_finish(
		SFL_MEMBER_STORE(source), result, &error);
	g_autofree SflMemberRecord *records = NULL;

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	if (entries == NULL) {
		/* cannot tell: the view keeps judging at the last complete listing */
		g_warning("membership: %s; keeping the last view", error->message);
	} else {
		records = g_new0(SflMemberRecord, MAX(entries->len, 1));
		for (guint i = 0; i < entries->len; i++) {
			const SflMemberEntry *e = entries->pdata[i];
			records[i] = (SflMemberRecord){ e->holder, e->version };
		}
		/*
		 * Timed from when the round was due: the listings are then exactly renew_usec
		 * apart, so a record unchanged for members_ttl is dropped at the listing that
		 * makes it so, not one later for a store that answered faster than the last time.
		 * The view times liveness, never a fence, so being early by one answer is fine.
		 */
		sfl_member_view_observe(self->view, self->round_due_usec, records, entries->len);
		g_ptr_array_extend_and_steal(
			self->removals, sfl_member_view_dead(self->view, SFL_MEMBERSHIP_DEAD_TTLS *
										 self->ttl_usec));
	}
	sfl_membership_update(self);
	sfl_membership_remove_next(self);
}

static void
sfl_membership_published_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflMembership *self = user_data;
	g_autoptr(GError) error = NULL;

	if (!SFL_MEMBER_STORE_GET_CLASS(source)->publish_finish(SFL_MEMBER_STORE(source), result,
								&error)) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			return;
		/* unconfirmed: past one ttl of these this replica is no member in its own view */
		g_warning("membership: cannot write this replica's record: %s", error->message);
	} else {
		sfl_member_view_confirm_self(self->view, sfl_clock_monotonic_usec(self->clock));
	}
	SFL_MEMBER_STORE_GET_CLASS(self->store)
		->list_async(self->store, self->cancellable, sfl_membership_listed_cb, self);
}

/*
 * A store that hangs (a mount that blocks rather than fails) must not freeze this replica's
 * view: its own record counts only while written within a ttl, so judging again as time goes
 * makes it drop out of its own view (its units are handed back, /readyz turns 503) a ttl after
 * its last write, while the others stay as last listed.
 */
static void
sfl_membership_watch(gpointer user_data)
{
	SflMembership *self = user_data;
	gint64 waited = sfl_clock_monotonic_usec(self->clock) - self->round_start_usec;

	if (!self->busy)
		return;
	if (!self->warned_slow) {
		g_warning("membership: the store has not answered for %" G_GINT64_FORMAT
			  " ms; a ttl after its last write this replica counts as no member",
			  waited / 1000);
		self->warned_slow = TRUE;
	}
	sfl_membership_update(self);
	sfl_clock_once(self->clock, &self->watch, self->renew_usec, "sf2loki membership watch",
		       sfl_membership_watch, self, self->context);
}

static void
sfl_membership_round(gpointer user_data)
{
	SflMembership *self = user_data;

	self->seq++;
	self->busy = TRUE;
	self->round_start_usec = sfl_clock_monotonic_usec(self->clock);
	/* a round that starts more than a period late (a hung store) starts a new rate */
	if (self->round_due_usec == 0 ||
	    self->round_start_usec - self->round_due_usec >= self->renew_usec)
		self->round_due_usec = self->round_start_usec;
	sfl_clock_once(self->clock, &self->watch, self->renew_usec, "sf2loki membership watch",
		       sfl_membership_watch, self, self->context);
	SFL_MEMBER_STORE_GET_CLASS(self->store)
		->publish_async(self->store, self->holder, self->seq, self->cancellable,
				sfl_membership_published_cb, self);
}

SflMembership *
sfl_membership_new(SflMemberStore *store, const gchar *holder, SflClock *clock, gint64 ttl_usec,
		   gint64 renew_usec, GMainContext *context)
{
	SflMembership *self = g_new0(SflMembership, 1);

	g_return_val_if_fail(renew_usec > 0 && renew_usec < ttl_usec, NULL);
	self->store = g_object_ref(store);
	self->holder = g_strdup(holder);
	self->clock = sfl_clock_ref(clock);
	self->ttl_usec = ttl_usec;
	self->renew_usec = renew_usec;
	self->context = context != NULL ? g_main_context_ref(context) : NULL;
	self->view = sfl_member_view_new(holder, ttl_usec);
	self->live = g_ptr_array_new_with_free_func(g_free);
	self->removals = g_ptr_array_new_with_free_func(g_free);
	self->cancellable = g_cancellable_new();
	return self;
}

void
sfl_membership_set_changed_func(SflMembership *self, SflMembershipChangedFunc func,
				gpointer user_data)
{
	self->changed = func;
	self->changed_data = user_data;
}

void
sfl_membership_start(SflMembership *self)
{
	g_return_if_fail(!self->running);
	self->running = TRUE;
	sfl_membership_round(self);
}

const GPtrArray *
sfl_membership_get_live(SflMembership *self)
{
	return self->live;
}

gboolean
sfl_membership_is_busy(SflMembership *self)
{
	return self->busy;
}

static void
sfl_membership_left_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GError) error = NULL;

	if (!SFL_MEMBER_STORE_GET_CLASS(source)->remove_finish(SFL_MEMBER_STORE(source), result,
							       &error))
		g_warning("membership: cannot remove this replica's record on stop: %s",
			  error->message);
}

/* a clean leave: the others see the record gone at their next listing, not a ttl later */
void
sfl_membership_stop(SflMembership *self)
{
	if (!self->running)
		return;
	self->running = FALSE;
	g_cancellable_cancel(self->cancellable);
	g_clear_object(&self->cancellable);
	self->cancellable = g_cancellable_new();
	sfl_clear_source(&self->timer);
	sfl_clear_source(&self->watch);
	g_ptr_array_set_size(self->removals, 0);
	self->busy = FALSE;
	SFL_MEMBER_STORE_GET_CLASS(self->store)
		->remove_async(self->store, self->holder, NULL, sfl_membership_left_cb, NULL);
}

void
sfl_membership_free(SflMembership *self)
{
	if (self == NULL)
		return;
	sfl_membership_stop(self);
	g_cancellable_cancel(self->cancellable);
	g_clear_object(&self->cancellable);
	g_object_unref(self->store);
	g_free(self->holder);
	sfl_clock_unref(self->clock);
	g_clear_pointer(&self->context, g_main_context_unref);
	sfl_member_view_free(self->view);
	g_ptr_array_unref(self->live);
	g_ptr_array_unref(self->removals);
	g_free(self);
}
