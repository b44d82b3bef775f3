/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCliState"

#include "config.h"

#include "sfl-cli-state.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "sfl-app.h"
#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-kinds.h"
#include "sfl-platform-glib.h"
#include "sfl-platform.h"

/*
 * `sf2loki state`: inspect and repair checkpoints with the store the daemon would build.
 * Reads never lock. Writes refuse to race a live daemon: under no coordinator the state
 * file's lock tells, under file_lease the lease file does; --force overrides with a warning,
 * because the daemon may then overwrite the repair.
 */

typedef struct {
	GAsyncResult *result;
} SflCliWait;

static void
sfl_cli_wait_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflCliWait *w = user_data;
	w->result = g_object_ref(result);
}

/* the CLI has no loop of its own: run the default context until the operation finished */
static GAsyncResult *
sfl_cli_wait(SflCliWait *w)
{
	while (w->result == NULL)
		g_main_context_iteration(NULL, TRUE);
	return w->result;
}

static int
sfl_cli_state_fail(const GError *error)
{
	fprintf(stderr, "sf2loki: %s\n", error->message);
	return error->domain == SFL_ERROR && error->code == SFL_ERROR_INVALID_CONFIG ? 2 : 1;
}

static int
sfl_cli_state_usage(const gchar *msg)
{
	fprintf(stderr,
		"sf2loki: %s\n\n"
		"Usage:\n"
		"  sf2loki state list [--key GLOB] [--json]\n"
		"  sf2loki state get KEY [--json]\n"
		"  sf2loki state set KEY VALUE [--force] [--json]\n"
		"  sf2loki state delete KEY [--force] [--json]\n"
		"  sf2loki state export [FILE|-] [--force]\n"
		"  sf2loki state import FILE [--merge] [--force]\n"
		"All take --config PATH and build the store exactly as the daemon would.\n",
		msg);
	return 2;
}

static void
sfl_cli_print_json(json_t *value)
{
	g_autofree gchar *text = json_dumps(value, JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("%s\n", text);
}

/* is a live daemon writing this store? FALSE with @error naming who, when it is */
static gboolean
sfl_cli_state_check_writer(const SflConfig *config, GError **error)
{
	const SflCoordinatorKind *kind = sfl_coordinator_kind_for_config(config, error);

	return kind != NULL && kind->check_no_writer(config, error);
}

static SflCheckpointStore *
sfl_cli_state_open(const SflConfig *config, gboolean write, gboolean force, GError **error)
{
	gboolean exclusive = write && !force && sfl_app_store_wants_exclusive(config);
	g_autoptr(SflCheckpointStore) store = NULL;
	SflCliWait w = { 0 };
	g_autoptr(GAsyncResult) result = NULL;
	g_autoptr(GError) local = NULL;

	if (write && !force && !sfl_cli_state_check_writer(config, error))
		return NULL;
	if (write && force)
		fprintf(stderr, "sf2loki: warning: --force: a running sf2loki may overwrite this "
				"change\n");
	store = sfl_app_build_store(config, exclusive, error);
	if (store == NULL)
		return NULL;
	sfl_checkpoint_store_open_async(store, NULL, sfl_cli_wait_cb, &w);
	result = sfl_cli_wait(&w);
	if (!sfl_checkpoint_store_open_finish(store, result, &local)) {
		if (g_error_matches(local, SFL_ERROR, SFL_ERROR_CONFLICT))
			g_prefix_error(&local, "refusing to write: ");
		if (g_error_matches(local, SFL_ERROR, SFL_ERROR_CONFLICT))
			g_prefix_error(&local, "(pass --force to write anyway) ");
		g_propagate_error(error, g_steal_pointer(&local));
		return NULL;
	}
	return g_steal_pointer(&store);
}

static SflStateDoc *
sfl_cli_state_snapshot(SflCheckpointStore *store, GError **error)
{
	SflCliWait w = { 0 };
	g_autoptr(GAsyncResult) result = NULL;
	sfl_checkpoint_store_snapshot_async(store, NULL, sfl_cli_wait_cb, &w);
	result = sfl_cli_wait(&w);
	return sfl_checkpoint_store_snapshot_finish(store, result, error);
}

/* a commit of @items, or without them a delete of @key */
static gboolean
sfl_cli_state_write(SflCheckpointStore *store, const SflStateDoc *items, const gchar *key,
		    gboolean force, GError **error)
{
	SflCliWait w = { 0 };
	g_autoptr(GAsyncResult) result = NULL;
	SflCheckpointStoreFlags flags =
		force ? SFL_CHECKPOINT_STORE_FORCE : SFL_CHECKPOINT_STORE_NONE;

	if (items != NULL)
		sfl_checkpoint_store_commit_many_async(store, items, flags, NULL, sfl_cli_wait_cb,
						       &w);
	else
		sfl_checkpoint_store_delete_async(store, key, flags, NULL, sfl_cli_wait_cb, &w);
	result = sfl_cli_wait(&w);
	if (items != NULL)
		return sfl_checkpoint_store_commit_many_finish(store, result, error);
	return sfl_checkpoint_store_delete_finish(store, result, error);
}

static gint
sfl_cli_cmp_str(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

/* the visible keys, sorted, optionally filtered by a glob */
static GPtrArray *
sfl_cli_state_keys(const SflStateDoc *doc, const gchar *glob, gboolean with_reserved)
{
	GPtrArray *keys = g_ptr_array_new();
	g_autoptr(GPatternSpec) spec = glob != NULL ? g_pattern_spec_new(glob) : NULL;

	for (guint i = 0; i < sfl_state_doc_size(doc); i++) {
		const gchar *key = sfl_state_doc_key_at(doc, i);
		if (!with_reserved && sfl_state_key_is_reserved(key))
			continue;
		if (spec != NULL && !g_pattern_spec_match_string(spec, key))
			continue;
		g_ptr_array_add(keys, (gpointer)key);
	}
	g_ptr_array_sort(keys, sfl_cli_cmp_str);
	return keys;
}

static int
sfl_cli_state_list(SflCheckpointStore *store, const SflCliStateOptions *opts)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = sfl_cli_state_snapshot(store, &error);
	g_autoptr(GPtrArray) keys = NULL;

	if (doc == NULL)
		return sfl_cli_state_fail(error);
	keys = sfl_cli_state_keys(doc, opts->key_glob, FALSE);
	if (opts->json) {
		g_autoptr(json_t) root = json_object();
		json_t *map = json_object();
		for (guint i = 0; i < keys->len; i++) {
			const gchar *key = g_ptr_array_index(keys, i);
			json_object_set_new(map, key, json_string(sfl_state_doc_get(doc, key)));
		}
		json_object_set_new(root, "checkpoints", map);
		json_object_set_new(root, "count", json_integer(keys->len));
		sfl_cli_print_json(root);
		return 0;
	}
	for (guint i = 0; i < keys->len; i++) {
		const gchar *key = g_ptr_array_index(keys, i);
		printf("%s\t%s\n", key, sfl_state_doc_get(doc, key));
	}
	if (keys->len == 0 && opts->key_glob != NULL)
		printf("(no checkpoints match '%s')\n", opts->key_glob);
	else
		printf("\n%u checkpoint%s%s%s%s\n", keys->len, keys->len == 1 ? "" : "s",
		       opts->key_glob != NULL ? " matching '" : "",
		       opts->key_glob != NULL ? opts->key_glob : "",
		       opts->key_glob != NULL ? "'" : "");
	return 0;
}

static int
sfl_cli_state_get(SflCheckpointStore *store, const gchar *key, const SflCliStateOptions *opts)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = sfl_cli_state_snapshot(store, &error);
	const gchar *value;

	if (doc == NULL)
		return sfl_cli_state_fail(error);
	value = sfl_state_doc_get(doc, key);
	if (sfl_state_key_is_reserved(key) && !opts->force)
		value = NULL;
	if (opts->json) {
		g_autoptr(json_t) root = json_object();
		json_object_set_new(root, "key", json_string(key));
		json_object_set_new(root, "value",
				    value != NULL ? json_string(value) : json_null());
		sfl_cli_print_json(root);
	} else if (value != NULL) {
		printf("%s\n", value);
	}
	if (value == NULL) {
		fprintf(stderr, "sf2loki: no checkpoint '%s'\n", key);
		return 1;
	}
	return 0;
}

static int
sfl_cli_state_set(SflCheckpointStore *store, const gchar *key, const gchar *value,
		  const SflCliStateOptions *opts)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) items = sfl_state_doc_new();

	if (!g_utf8_validate(value, -1, NULL)) {
		fprintf(stderr, "sf2loki: the value must be UTF-8\n");
		return 2;
	}
	sfl_state_doc_set(items, key, value);
	if (!sfl_cli_state_write(store, items, NULL, opts->force, &error))
		return sfl_cli_state_fail(error);
	if (opts->json) {
		g_autoptr(json_t) root = json_object();
		json_object_set_new(root, "key", json_string(key));
		json_object_set_new(root, "value", json_string(value));
		json_object_set_new(root, "action", json_string("set"));
		sfl_cli_print_json(root);
	} else {
		printf("sf2loki: set %s = %s\n", key, value);
	}
	return 0;
}

static int
sfl_cli_state_remove(SflCheckpointStore *store, const gchar *key, const SflCliStateOptions *opts)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = sfl_cli_state_snapshot(store, &error);
	gboolean existed;

	if (doc == NULL)
		return sfl_cli_state_fail(error);
	existed = sfl_state_doc_get(doc, key) != NULL;
	if (!sfl_cli_state_write(store, NULL, key, opts->force, &error))
		return sfl_cli_state_fail(error);
	if (opts->json) {
		g_autoptr(json_t) root = json_object();
		json_object_set_new(root, "key", json_string(key));
		json_object_set_new(root, "action", json_string("delete"));
		json_object_set_new(root, "existed", json_boolean(existed));
		sfl_cli_print_json(root);
	} else if (existed) {
		printf("sf2loki: deleted %s (its source restarts from its preset or lookback on "
		       "the next run)\n",
		       key);
	} else {
		printf("sf2loki: %s was not set; nothing to delete\n", key);
	}
	return 0;
}

static int
sfl_cli_state_export(SflCheckpointStore *store, const gchar *target, const SflCliStateOptions *opts)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = sfl_cli_state_snapshot(store, &error);
	g_autoptr(SflStateDoc) out = sfl_state_doc_new();
	g_autoptr(GPtrArray) keys = NULL;
	g_autofree gchar *text = NULL;
	gsize len = 0;

	if (doc == NULL)
		return sfl_cli_state_fail(error);
	/* the fence epoch belongs to one backend; it moves only when asked */
	keys = sfl_cli_state_keys(doc, NULL, opts->force);
	for (guint i = 0; i < keys->len; i++) {
		const gchar *key = g_ptr_array_index(keys, i);
		sfl_state_doc_set(out, key, sfl_state_doc_get(doc, key));
	}
	text = sfl_state_doc_serialize(out, &len);
	if (target == NULL || g_str_equal(target, "-")) {
		fwrite(text, 1, len, stdout);
		fputc('\n', stdout);
	} else {
		SflPlatformError perr = { 0 };
		if (!sfl_platform_to_gerror(sfl_platform_replace_file(target, text, len, &perr),
					    &perr, &error))
			return sfl_cli_state_fail(error);
	}
	fprintf(stderr, "sf2loki: exported %u checkpoint%s%s%s\n", keys->len,
		keys->len == 1 ? "" : "s", target != NULL ? " to " : "",
		target != NULL ? target : "");
	return 0;
}

static int
sfl_cli_state_import(SflCheckpointStore *store, const gchar *source, const SflCliStateOptions *opts)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *data = NULL;
	gsize len = 0;
	SflPlatformError perr = { 0 };
	g_autoptr(SflStateDoc) incoming = NULL;
	g_autoptr(SflStateDoc) current = NULL;
	guint removed = 0;

	if (!sfl_platform_to_gerror(
		    sfl_platform_read_file(source, 256 * 1024 * 1024, &data, &len, &perr), &perr,
		    &error))
		return sfl_cli_state_fail(error);
	incoming = sfl_state_doc_parse(data, len, source, &error);
	if (incoming == NULL)
		return sfl_cli_state_fail(error);
	for (guint i = 0; i < sfl_state_doc_size(incoming); i++) {
		const gchar *key = sfl_state_doc_key_at(incoming, i);
		if (sfl_state_key_is_reserved(key) && !opts->force) {
			fprintf(stderr,
				"sf2loki: %s holds the reserved key '%s'; remove it or pass "
				"--force\n",
				source, key);
			return 1;
		}
	}
	current = sfl_cli_state_snapshot(store, &error);
	if (current == NULL)
		return sfl_cli_state_fail(error);
	if (!sfl_cli_state_write(store, incoming, NULL, opts->force, &error))
		return sfl_cli_state_fail(error);
	if (!opts->merge) {
		for (guint i = 0; i < sfl_state_doc_size(current); i++) {
			const gchar *key = sfl_state_doc_key_at(current, i);
			if (sfl_state_key_is_reserved(key) ||
			    sfl_state_doc_get(incoming, key) != NULL)
				continue;
			if (!sfl_cli_state_write(store, NULL, key, FALSE, &error))
				return sfl_cli_state_fail(error);
			removed++;
		}
	}
	printf("sf2loki: imported %u checkpoint%s from %s (%s)", sfl_state_doc_size(incoming),
	       sfl_state_doc_size(incoming) == 1 ? "" : "s", source,
	       opts->merge ? "merged" : "replaced");
	if (!opts->merge)
		printf(", removed %u\n", removed);
	else
		printf("\n");
	return 0;
}

/**
 * sfl_cli_state:
 * @config_path: (nullable): --config
 * @args: the words after "state"
 * @opts: the state options
 *
 * Returns: the exit code: 0, 1 runtime failure or refusal, 2 usage or configuration
 */
int
sfl_cli_state(const gchar *config_path, gchar **args, const SflCliStateOptions *opts)
{
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = NULL;
	g_autoptr(SflCheckpointStore) store = NULL;
	const gchar *cmd = args[0];
	guint nargs = cmd != NULL ? g_strv_length(args) - 1 : 0;
	gboolean write;
	int rc;

	if (cmd == NULL)
		return sfl_cli_state_usage("state needs a subcommand");
	if (g_str_equal(cmd, "show"))
		cmd = "list";
	if ((g_str_equal(cmd, "list") && nargs != 0) || (g_str_equal(cmd, "get") && nargs != 1) ||
	    (g_str_equal(cmd, "set") && nargs != 2) || (g_str_equal(cmd, "delete") && nargs != 1) ||
	    (g_str_equal(cmd, "export") && nargs > 1) || (g_str_equal(cmd, "import") && nargs != 1))
		return sfl_cli_state_usage("wrong number of arguments");
	if (!g_strv_contains((const gchar *const[]){ "list", "get", "set", "delete", "export",
						     "import", NULL },
			     cmd)) {
		g_autofree gchar *msg = g_strdup_printf("unknown state command '%s'", cmd);
		return sfl_cli_state_usage(msg);
	}
	write = g_str_equal(cmd, "set") || g_str_equal(cmd, "delete") || g_str_equal(cmd, "import");
	if ((g_str_equal(cmd, "set") || g_str_equal(cmd, "delete")) &&
	    sfl_state_key_is_reserved(args[1]) && !opts->force) {
		fprintf(stderr,
			"sf2loki: '%s' is reserved for the store's fence; it can only be changed "
			"with --force (see docs/deployment/state.md)\n",
			args[1]);
		return 1;
	}

	config = sfl_config_load(config_path, envp, &error);
	if (config == NULL) {
		g_auto(GStrv) lines = g_strsplit(error->message, "\n", -1);
		for (guint i = 0; lines[i] != NULL; i++)
			fprintf(stderr, "sf2loki: %s\n", lines[i]);
		return 2;
	}
	store = sfl_cli_state_open(config, write, opts->force, &error);
	if (store == NULL)
		return sfl_cli_state_fail(error);

	if (g_str_equal(cmd, "list"))
		rc = sfl_cli_state_list(store, opts);
	else if (g_str_equal(cmd, "get"))
		rc = sfl_cli_state_get(store, args[1], opts);
	else if (g_str_equal(cmd, "set"))
		rc = sfl_cli_state_set(store, args[1], args[2], opts);
	else if (g_str_equal(cmd, "delete"))
		rc = sfl_cli_state_remove(store, args[1], opts);
	else if (g_str_equal(cmd, "export"))
		rc = sfl_cli_state_export(store, args[1], opts);
	else
		rc = sfl_cli_state_import(store, args[1], opts);

	/* finish the store's worker tasks before the process exits */
	g_clear_object(&store);
	while (g_main_context_iteration(NULL, FALSE))
		;
	return rc;
}
