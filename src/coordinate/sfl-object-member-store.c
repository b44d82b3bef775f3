/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflShard"

#include "config.h"

#include "sfl-object-member-store.h"

#include <jansson.h>
#include <string.h>

#include "sfl-error.h"

struct _SflObjectMemberStore {
	SflMemberStore parent_instance;
	SflObjectClient *client;
	gchar *prefix;
	gchar *own_holder;  /* the holder this replica publishes as */
	gchar *own_version; /* what its last publish produced; NULL: unknown */
	GHashTable *listed; /* holder -> the version the last listing saw */
};

#define SFL_TYPE_OBJECT_MEMBER_STORE (sfl_object_member_store_get_type())
G_DECLARE_FINAL_TYPE(SflObjectMemberStore, sfl_object_member_store, SFL, OBJECT_MEMBER_STORE,
		     SflMemberStore)
G_DEFINE_TYPE(SflObjectMemberStore, sfl_object_member_store, SFL_TYPE_MEMBER_STORE)

gchar *
sfl_object_member_key(const gchar *prefix, const gchar *holder)
{
	GString *key = g_string_new(prefix);

	for (const guchar *p = (const guchar *)holder; *p != '\0'; p++) {
		if (g_ascii_isalnum(*p) || *p == '.' || *p == '_' || *p == '-')
			g_string_append_c(key, (gchar)*p);
		else
			g_string_append_printf(key, "%%%02X", *p);
	}
	g_string_append(key, ".json");
	return g_string_free(key, FALSE);
}

/* the holder a listed key names, or NULL for a key that is not a member record */
static gchar *
sfl_object_member_holder(const gchar *prefix, const gchar *key)
{
	gsize plen = strlen(prefix);
	g_autofree gchar *name = NULL;

	if (!g_str_has_prefix(key, prefix) || !g_str_has_suffix(key, ".json") ||
	    strlen(key) <= plen + strlen(".json"))
		return NULL;
	name = g_strndup(key + plen, strlen(key) - plen - strlen(".json"));
	if (strchr(name, '/') != NULL)
		return NULL; /* something in a folder below the members', not ours */
	return g_uri_unescape_string(name, NULL);
}

/* --- publish: a conditional write, re-learning the version once when it is not ours ------- */

typedef enum {
	SFL_OBJECT_MEMBER_RENEW, /* IF_VERSION(the version our last write produced) */
	SFL_OBJECT_MEMBER_CREATE,
	SFL_OBJECT_MEMBER_READ, /* it exists (a previous run of this holder): learn its version */
	SFL_OBJECT_MEMBER_REPLACE, /* IF_VERSION(what the read returned) */
} SflObjectMemberStep;

typedef struct {
	gchar *key;
	GBytes *body;
	SflObjectMemberStep step;
} SflObjectMemberPublish;

static void
sfl_object_member_publish_free(SflObjectMemberPublish *job)
{
	g_free(job->key);
	g_bytes_unref(job->body);
	g_free(job);
}

static void sfl_object_member_publish_step(GTask *task, const gchar *version);

static void
sfl_object_member_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflObjectMemberPublish *job = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflObject) object =
		sfl_object_client_get_finish(SFL_OBJECT_CLIENT(source), result, &error);

	if (object == NULL && g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND)) {
		/* removed between the create and the read: create again, once */
		job->step = SFL_OBJECT_MEMBER_CREATE;
		sfl_object_member_publish_step(g_steal_pointer(&task), NULL);
		return;
	}
	if (object == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	job->step = SFL_OBJECT_MEMBER_REPLACE;
	sfl_object_member_publish_step(g_steal_pointer(&task), object->version);
}

static void
sfl_object_member_written_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflObjectMemberStore *self = g_task_get_source_object(task);
	SflObjectMemberPublish *job = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *version =
		sfl_object_client_put_finish(SFL_OBJECT_CLIENT(source), result, &error);
	gboolean lost = g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT) ||
			g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND);

	if (version != NULL) {
		g_free(self->own_version);
		self->own_version = g_steal_pointer(&version);
		g_task_return_boolean(task, TRUE);
		return;
	}
	g_clear_pointer(&self->own_version, g_free);
	/* our record changed under us (a cleanup removed it, a restart of this holder wrote it):
	 * take it over once; a second race in one round is left to the next round */
	if (lost && job->step == SFL_OBJECT_MEMBER_RENEW) {
		job->step = SFL_OBJECT_MEMBER_CREATE;
		sfl_object_member_publish_step(g_steal_pointer(&task), NULL);
		return;
	}
	if (lost && job->step == SFL_OBJECT_MEMBER_CREATE) {
		job->step = SFL_OBJECT_MEMBER_READ;
		sfl_object_member_publish_step(g_steal_pointer(&task), NULL);
		return;
	}
	g_task_return_error(task, g_steal_pointer(&error));
}

static void
sfl_object_member_publish_step(GTask *task, const gchar *version)
{
	SflObjectMemberStore *self = g_task_get_source_object(task);
	SflObjectMemberPublish *job = g_task_get_task_data(task);
	GCancellable *cancellable = g_task_get_cancellable(task);

	switch (job->step) {
	case SFL_OBJECT_MEMBER_READ:
		sfl_object_client_get_async(self->client, job->key, cancellable,
					    sfl_object_member_read_cb, task);
		return;
	case SFL_OBJECT_MEMBER_CREATE:
		sfl_object_client_put_async(self->client, job->key, job->body,
					    SFL_OBJECT_WRITE_CREATE_ONLY, NULL, cancellable,
					    sfl_object_member_written_cb, task);
		return;
	case SFL_OBJECT_MEMBER_RENEW:
	case SFL_OBJECT_MEMBER_REPLACE:
		sfl_object_client_put_async(self->client, job->key, job->body,
					    SFL_OBJECT_WRITE_IF_VERSION, version, cancellable,
					    sfl_object_member_written_cb, task);
		return;
	}
}

static void
sfl_object_member_publish_async(SflMemberStore *store, const gchar *holder, guint64 seq,
				GCancellable *cancellable, GAsyncReadyCallback callback,
				gpointer user_data)
{
	SflObjectMemberStore *self = SFL_OBJECT_MEMBER_STORE(store);
	GTask *task = g_task_new(store, cancellable, callback, user_data);
	SflObjectMemberPublish *job = g_new0(SflObjectMemberPublish, 1);
	json_t *doc = json_pack("{s:s, s:I}", "holder", holder, "seq", (json_int_t)seq);
	gchar *text = json_dumps(doc, JSON_SORT_KEYS);

	json_decref(doc);
	if (g_strcmp0(self->own_holder, holder) != 0) {
		g_free(self->own_holder);
		self->own_holder = g_strdup(holder);
		g_clear_pointer(&self->own_version, g_free);
	}
	job->key = sfl_object_member_key(self->prefix, holder);
	job->body = g_bytes_new_take(text, strlen(text));
	job->step = self->own_version != NULL ? SFL_OBJECT_MEMBER_RENEW : SFL_OBJECT_MEMBER_CREATE;
	g_task_set_task_data(task, job, (GDestroyNotify)sfl_object_member_publish_free);
	sfl_object_member_publish_step(task, self->own_version);
}

static gboolean
sfl_object_member_boolean_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

/* --- list: the index only --------------------------------------------------------------- */

static void
sfl_object_member_listed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflObjectMemberStore *self = g_task_get_source_object(task);
	GError *error = NULL;
	g_autoptr(GPtrArray) listing =
		sfl_object_client_list_finish(SFL_OBJECT_CLIENT(source), result, &error);
	GPtrArray *entries = NULL;

	if (listing == NULL) {
		g_prefix_error(&error, "cannot list the membership records: ");
		g_task_return_error(task, error);
		return;
	}
	entries = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_member_entry_free);
	g_hash_table_remove_all(self->listed);
	for (guint i = 0; i < listing->len; i++) {
		const SflObjectEntry *object = listing->pdata[i];
		gchar *holder = sfl_object_member_holder(self->prefix, object->key);
		SflMemberEntry *entry = NULL;

		if (holder == NULL || object->version == NULL) {
			g_free(holder);
			continue;
		}
		entry = g_new0(SflMemberEntry, 1);
		entry->holder = holder;
		entry->version = g_strdup(object->version);
		g_hash_table_insert(self->listed, g_strdup(holder), g_strdup(object->version));
		g_ptr_array_add(entries, entry);
	}
	g_task_return_pointer(task, entries, (GDestroyNotify)g_ptr_array_unref);
}

static void
sfl_object_member_list_async(SflMemberStore *store, GCancellable *cancellable,
			     GAsyncReadyCallback callback, gpointer user_data)
{
	SflObjectMemberStore *self = SFL_OBJECT_MEMBER_STORE(store);
	GTask *task = g_task_new(store, cancellable, callback, user_data);

	sfl_object_client_list_async(self->client, self->prefix, cancellable,
				     sfl_object_member_listed_cb, task);
}

static GPtrArray *
sfl_object_member_list_finish(SflMemberStore *store, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

/* --- remove: gone already, or renewed since the listing, is not a failure ----------------- */

static void
sfl_object_member_removed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	GError *error = NULL;

	if (!sfl_object_client_delete_finish(SFL_OBJECT_CLIENT(source), result, &error) &&
	    !g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND) &&
	    !g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT)) {
		g_task_return_error(task, error);
		return;
	}
	g_clear_error(&error);
	g_task_return_boolean(task, TRUE);
}

static void
sfl_object_member_remove_async(SflMemberStore *store, const gchar *holder,
			       GCancellable *cancellable, GAsyncReadyCallback callback,
			       gpointer user_data)
{
	SflObjectMemberStore *self = SFL_OBJECT_MEMBER_STORE(store);
	GTask *task = g_task_new(store, cancellable, callback, user_data);
	g_autofree gchar *key = sfl_object_member_key(self->prefix, holder);
	/* our own record: the version we wrote; another's: what the listing judged dead */
	const gchar *version = g_strcmp0(holder, self->own_holder) == 0
				       ? self->own_version
				       : g_hash_table_lookup(self->listed, holder);

	sfl_object_client_delete_async(self->client, key, version, cancellable,
				       sfl_object_member_removed_cb, task);
}

/* --- the object ----------------------------------------------------------------------------- */

static void
sfl_object_member_store_finalize(GObject *object)
{
	SflObjectMemberStore *self = SFL_OBJECT_MEMBER_STORE(object);

	g_clear_object(&self->client);
	g_free(self->prefix);
	g_free(self->own_holder);
	g_free(self->own_version);
	g_hash_table_unref(self->listed);
	G_OBJECT_CLASS(sfl_object_member_store_parent_class)->finalize(object);
}

static void
sfl_object_member_store_class_init(SflObjectMemberStoreClass *klass)
{
	SflMemberStoreClass *store_class = SFL_MEMBER_STORE_CLASS(klass);

	G_OBJECT_CLASS(klass)->finalize = sfl_object_member_store_finalize;
	store_class->publish_async = sfl_object_member_publish_async;
	store_class->publish_finish = sfl_object_member_boolean_finish;
	store_class->list_async = sfl_object_member_list_async;
	store_class->list_finish = sfl_object_member_list_finish;
	store_class->remove_async = sfl_object_member_remove_async;
	store_class->remove_finish = sfl_object_member_boolean_finish;
}

static void
sfl_object_member_store_init(SflObjectMemberStore *self)
{
	self->listed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

SflMemberStore *
sfl_object_member_store_new(SflObjectClient *client, const gchar *prefix)
{
	SflObjectMemberStore *self = g_object_new(SFL_TYPE_OBJECT_MEMBER_STORE, NULL);

	self->client = g_object_ref(client);
	self->prefix = g_strdup(prefix);
	return SFL_MEMBER_STORE(self);
}
