/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflObjectProbe"

#include "config.h"

#include "sfl-object-probe.h"

#include "sfl-error.h"

/*
 * The probe's steps, in order: read the live object, remove a probe object an interrupted run
 * left, create the probe object, try to create it again, delete it by version, try a
 * compare-and-swap write on the deleted version, and (when that wrongly landed) clean up.
 */
typedef enum {
	SFL_OBJECT_PROBE_READ_LIVE,
	SFL_OBJECT_PROBE_REMOVE_STALE,
	SFL_OBJECT_PROBE_CREATE,
	SFL_OBJECT_PROBE_CREATE_AGAIN,
	SFL_OBJECT_PROBE_DELETE,
	SFL_OBJECT_PROBE_WRITE_DELETED,
	SFL_OBJECT_PROBE_CLEAN_UP,
} SflObjectProbeStep;

typedef struct {
	gchar *live_key;
	gchar *probe_key;
	gchar *live; /* what the live read found */
	gchar *probe_version;
	GBytes *payload;
	SflObjectProbeStep step; /* the step whose request is in flight */
} SflObjectProbe;

static void
sfl_object_probe_free(SflObjectProbe *p)
{
	g_free(p->live_key);
	g_free(p->probe_key);
	g_free(p->live);
	g_free(p->probe_version);
	g_bytes_unref(p->payload);
	g_free(p);
}

static void
sfl_object_probe_fail(GTask *task, GError *error)
{
	SflObjectProbe *p = g_task_get_task_data(task);

	g_prefix_error(&error, "%s; probe %s: ", p->live, p->probe_key);
	g_task_return_error(task, error);
}

static void sfl_object_probe_cb(GObject *source, GAsyncResult *result, gpointer user_data);

/* the next step: a write of the probe object, or with @mode < 0 its deletion */
static void
sfl_object_probe_next(GTask *task, SflObjectProbeStep step, gint mode, const gchar *version)
{
	SflObjectClient *client = g_task_get_source_object(task);
	SflObjectProbe *p = g_task_get_task_data(task);

	p->step = step;
	if (mode < 0)
		sfl_object_client_delete_async(client, p->probe_key, version,
					       g_task_get_cancellable(task), sfl_object_probe_cb,
					       g_object_ref(task));
	else
		sfl_object_client_put_async(
			client, p->probe_key, p->payload, (SflObjectCondition)mode, version,
			g_task_get_cancellable(task), sfl_object_probe_cb, g_object_ref(task));
}

static gboolean
sfl_object_probe_read_live(GTask *task, GAsyncResult *result, GError **error)
{
	SflObjectClient *client = g_task_get_source_object(task);
	SflObjectProbe *p = g_task_get_task_data(task);
	g_autoptr(SflObject) object = sfl_object_client_get_finish(client, result, error);
	g_autofree gchar *where = sfl_object_client_describe(client, p->live_key);

	if (object == NULL && !g_error_matches(*error, SFL_ERROR, SFL_ERROR_NOT_FOUND))
		return FALSE;
	if (object == NULL) {
		g_clear_error(error);
		p->live = g_strdup_printf("%s absent (created on first use)", where);
	} else {
		p->live = g_strdup_printf("%s readable (%" G_GSIZE_FORMAT " bytes, version %s)",
					  where, g_bytes_get_size(object->data), object->version);
	}
	return TRUE;
}

static gboolean
sfl_object_probe_error_is(const GError *error, SflError code, SflError or_code)
{
	return g_error_matches(error, SFL_ERROR, code) ||
	       g_error_matches(error, SFL_ERROR, or_code);
}

static void
sfl_object_probe_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	SflObjectClient *client = SFL_OBJECT_CLIENT(source);
	SflObjectProbe *p = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *version = NULL;
	gboolean done;

	switch (p->step) {
	case SFL_OBJECT_PROBE_READ_LIVE:
		if (!sfl_object_probe_read_live(task, result, &error)) {
			g_task_return_error(task, g_steal_pointer(&error));
			return;
		}
		sfl_object_probe_next(task, SFL_OBJECT_PROBE_REMOVE_STALE, -1, NULL);
		return;
	case SFL_OBJECT_PROBE_REMOVE_STALE:
	case SFL_OBJECT_PROBE_DELETE:
	case SFL_OBJECT_PROBE_CLEAN_UP:
		done = sfl_object_client_delete_finish(client, result, &error);
		break;
	default:
		version = sfl_object_client_put_finish(client, result, &error);
		done = version != NULL;
		break;
	}

	switch (p->step) {
	case SFL_OBJECT_PROBE_REMOVE_STALE:
		/* a probe object left by an interrupted doctor run: removed, whatever its version
		 */
		if (!done && !g_error_matches(error, SFL_ERROR, SFL_ERROR_NOT_FOUND))
			break;
		sfl_object_probe_next(task, SFL_OBJECT_PROBE_CREATE, SFL_OBJECT_WRITE_CREATE_ONLY,
				      NULL);
		return;
	case SFL_OBJECT_PROBE_CREATE:
		if (!done)
			break;
		p->probe_version = g_steal_pointer(&version);
		sfl_object_probe_next(task, SFL_OBJECT_PROBE_CREATE_AGAIN,
				      SFL_OBJECT_WRITE_CREATE_ONLY, NULL);
		return;
	case SFL_OBJECT_PROBE_CREATE_AGAIN:
		if (done) {
			/* it landed: whoever races us would land too */
			g_free(p->probe_version);
			p->probe_version = g_steal_pointer(&version);
			sfl_object_probe_fail(
				task,
				g_error_new_literal(SFL_ERROR, SFL_ERROR_REJECTED,
						    "conditional writes unsupported: a create-only "
						    "write over an existing object succeeded (the "
						    "endpoint ignores If-None-Match / "
						    "ifGenerationMatch=0)"));
			return;
		}
		if (!g_error_matches(error, SFL_ERROR, SFL_ERROR_CONFLICT))
			break;
		sfl_object_probe_next(task, SFL_OBJECT_PROBE_DELETE, -1, p->probe_version);
		return;
	case SFL_OBJECT_PROBE_DELETE:
		if (!done)
			break;
		/* the version just deleted must not be writable again */
		sfl_object_probe_next(task, SFL_OBJECT_PROBE_WRITE_DELETED,
				      SFL_OBJECT_WRITE_IF_VERSION, p->probe_version);
		return;
	case SFL_OBJECT_PROBE_WRITE_DELETED:
		if (done) {
			sfl_object_probe_next(task, SFL_OBJECT_PROBE_CLEAN_UP, -1, NULL);
			return;
		}
		if (!sfl_object_probe_error_is(error, SFL_ERROR_CONFLICT, SFL_ERROR_NOT_FOUND))
			break;
		g_task_return_pointer(task,
				      g_strdup_printf("%s; conditional writes enforced (probe "
						      "object created, a second create refused, "
						      "deleted, a stale compare-and-swap refused)",
						      p->live),
				      g_free);
		return;
	case SFL_OBJECT_PROBE_CLEAN_UP:
		/* the clean-up is best effort: the verdict stands whatever it returned */
		sfl_object_probe_fail(
			task,
			g_error_new_literal(SFL_ERROR, SFL_ERROR_REJECTED,
					    "conditional writes unsupported: a compare-and-swap "
					    "write on a deleted object succeeded (the endpoint "
					    "ignores If-Match on missing keys, as old MinIO did)"));
		return;
	case SFL_OBJECT_PROBE_READ_LIVE:
	default:
		g_assert_not_reached();
	}
	sfl_object_probe_fail(task, g_steal_pointer(&error));
}

/**
 * sfl_object_probe_async:
 * @client: the bucket
 * @live_key: the object the daemon uses (read only)
 * @probe_key: a key nothing else uses (written and deleted)
 * @cancellable: (nullable): a cancellable
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_object_probe_async(SflObjectClient *client, const gchar *live_key, const gchar *probe_key,
		       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(client, cancellable, callback, user_data);
	SflObjectProbe *p = g_new0(SflObjectProbe, 1);
	static const gchar payload[] = "{\"sf2loki\": \"doctor probe\"}";

	g_return_if_fail(g_strcmp0(live_key, probe_key) != 0);
	p->live_key = g_strdup(live_key);
	p->probe_key = g_strdup(probe_key);
	p->payload = g_bytes_new_static(payload, sizeof(payload) - 1);
	g_task_set_source_tag(task, sfl_object_probe_async);
	g_task_set_task_data(task, p, (GDestroyNotify)sfl_object_probe_free);
	p->step = SFL_OBJECT_PROBE_READ_LIVE;
	sfl_object_client_get_async(client, live_key, cancellable, sfl_object_probe_cb,
				    g_steal_pointer(&task));
}

/**
 * sfl_object_probe_finish:
 * @client: the bucket
 * @result: the result
 * @detail: (out) (optional): what was found, for the report
 * @error: return location for an error
 *
 * Returns: %TRUE when the live object is readable (or absent) and conditional writes work
 */
gboolean
sfl_object_probe_finish(SflObjectClient *client, GAsyncResult *result, gchar **detail,
			GError **error)
{
	g_autofree gchar *text = NULL;

	g_return_val_if_fail(g_task_is_valid(result, client), FALSE);
	text = g_task_propagate_pointer(G_TASK(result), error);
	if (detail != NULL)
		*detail = g_steal_pointer(&text);
	return !g_task_had_error(G_TASK(result));
}
