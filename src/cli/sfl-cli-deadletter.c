/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCliDeadletter"

#include "config.h"

#include "sfl-cli-deadletter.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "sfl-app.h"
#include "sfl-autocleanups.h"
#include "sfl-config-schema.h"
#include "sfl-curl-loop.h"
#include "sfl-deadletter.h"
#include "sfl-error.h"
#include "sfl-sink.h"

/*
 * `sf2loki deadletter`: what the daemon kept of the entries Loki never accepted
 * (docs/operations/dead-letter.md). list and show only read; replay and purge claim the
 * segments first, so a running daemon keeps appending beside them and nothing it writes
 * meanwhile is touched.
 */

/* a push that keeps failing gives up after this many tries, leaving everything kept */
#define SFL_DEADLETTER_REPLAY_TRIES 5

typedef struct {
	const gchar *config_path;
	gboolean json;
	gboolean all;
	gboolean dry_run;
	gboolean ingest_timestamps;
	const gchar *reason;
	SflDuration older_than; /* 0: no age filter */
} SflDeadletterOptions;

static const gchar sfl_deadletter_usage[] =
	"Usage:\n"
	"  sf2loki deadletter list [--reason R] [--older-than DUR] [--json]\n"
	"  sf2loki deadletter show INDEX\n"
	"  sf2loki deadletter replay [--reason R] [--older-than DUR] [--ingest-timestamps] "
	"[--dry-run]\n"
	"  sf2loki deadletter purge (--all | --reason R | --older-than DUR) [--dry-run]\n"
	"All take --config PATH; INDEX is the number `list` prints.\n";

static int
sfl_deadletter_usage_error(const gchar *msg)
{
	fprintf(stderr, "sf2loki: %s\n\n%s", msg, sfl_deadletter_usage);
	return 2;
}

static int
sfl_deadletter_fail(const GError *error)
{
	fprintf(stderr, "sf2loki: %s\n", error->message);
	return error->domain == SFL_ERROR && error->code == SFL_ERROR_INVALID_CONFIG ? 2 : 1;
}

static const gchar *
record_str(json_t *record, const gchar *field)
{
	return json_string_value(json_object_get(record, field));
}

static gboolean
record_matches(json_t *record, const SflDeadletterOptions *opts, gint64 now_usec)
{
	if (opts->reason != NULL && g_strcmp0(record_str(record, "reason"), opts->reason) != 0)
		return FALSE;
	if (opts->older_than > 0) {
		gint64 captured = json_integer_value(json_object_get(record, "captured_usec"));
		if (now_usec - captured < opts->older_than)
			return FALSE;
	}
	return TRUE;
}

static gchar *
format_time_ns(gint64 ns)
{
	g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc(ns / 1000000000);
	if (t == NULL)
		return g_strdup("?");
	t = g_date_time_add(t, (ns % 1000000000) / 1000);
	return g_date_time_format(t, "%Y-%m-%dT%H:%M:%S.%fZ");
}

static gchar *
labels_text(json_t *labels)
{
	GString *out = g_string_new("{");
	const gchar *name;
	json_t *value;

	json_object_foreach (labels, name, value) {
		g_string_append_printf(out, "%s%s=\"%s\"", out->len > 1 ? ", " : "", name,
				       json_string_value(value) != NULL ? json_string_value(value)
									: "");
	}
	g_string_append_c(out, '}');
	return g_string_free(out, FALSE);
}

static int
sfl_deadletter_list(GPtrArray *records, const SflDeadletterOptions *opts, SflDeadletter *dl)
{
	gint64 now = g_get_real_time();
	g_autoptr(GHashTable) by_reason = g_hash_table_new(g_str_hash, g_str_equal);
	json_t *out = opts->json ? json_array() : NULL;
	guint shown = 0;

	for (guint i = 0; i < records->len; i++) {
		json_t *r = g_ptr_array_index(records, i);
		const gchar *reason = record_str(r, "reason");
		const gchar *line = record_str(r, "line");
		g_autofree gchar *when = NULL;
		g_autofree gchar *labels = NULL;

		if (!record_matches(r, opts, now))
			continue;
		shown++;
		reason = reason != NULL ? reason : "unknown";
		g_hash_table_insert(
			by_reason, (gpointer)reason,
			GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(by_reason, reason)) +
					 1));
		if (out != NULL) {
			json_t *copy = json_deep_copy(r);
			json_object_set_new(copy, "index", json_integer(i));
			json_array_append_new(out, copy);
			continue;
		}
		when = format_time_ns(json_integer_value(json_object_get(r, "timestamp_ns")));
		labels = labels_text(json_object_get(r, "labels"));
		printf("%u\t%s\t%s\t%s\t%zu bytes\t%.60s%s\n", i, when, reason, labels,
		       line != NULL ? strlen(line) : 0, line != NULL ? line : "",
		       line != NULL && strlen(line) > 60 ? "…" : "");
	}
	if (out != NULL) {
		g_autofree gchar *text = json_dumps(out, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("%s\n", text);
		json_decref(out);
		return 0;
	}
	{
		GHashTableIter iter;
		gpointer key, value;
		GString *summary = g_string_new(NULL);

		g_hash_table_iter_init(&iter, by_reason);
		while (g_hash_table_iter_next(&iter, &key, &value))
			g_string_append_printf(summary, " %s=%u", (const gchar *)key,
					       GPOINTER_TO_UINT(value));
		printf("sf2loki deadletter: %u of %u entries%s; %" G_GUINT64_FORMAT
		       " bytes in %s (max %" G_GUINT64_FORMAT ")\n",
		       shown, records->len, summary->str, sfl_deadletter_get_bytes(dl),
		       sfl_deadletter_get_dir(dl), sfl_deadletter_get_max_bytes(dl));
		g_string_free(summary, TRUE);
	}
	return 0;
}

static int
sfl_deadletter_show(GPtrArray *records, const gchar *arg)
{
	gchar *end = NULL;
	guint64 idx = g_ascii_strtoull(arg, &end, 10);
	g_autofree gchar *text = NULL;

	if (end == arg || *end != '\0')
		return sfl_deadletter_usage_error("show takes the INDEX that list prints");
	if (idx >= records->len) {
		fprintf(stderr, "sf2loki: no dead-letter entry %" G_GUINT64_FORMAT " (%u kept)\n",
			idx, records->len);
		return 1;
	}
	text = json_dumps(g_ptr_array_index(records, idx), JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("%s\n", text);
	return 0;
}

/* --- replay ---------------------------------------------------------------------------- */

typedef struct {
	GAsyncResult *result;
} SflWait;

static void
sfl_wait_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	((SflWait *)user_data)->result = g_object_ref(result);
}

/* one record as the entry it was, or with a replay-time timestamp (--ingest-timestamps) */
static SflEntry *
record_to_entry(json_t *record, SflLabelsInterner *interner, gint64 ingest_ns, GError **error)
{
	json_t *labels = json_object_get(record, "labels");
	json_t *metadata = json_object_get(record, "metadata");
	const gchar *line = record_str(record, "line");
	gint64 ts = json_integer_value(json_object_get(record, "timestamp_ns"));
	g_autoptr(GArray) pairs = g_array_new(FALSE, FALSE, sizeof(SflLabelPair));
	g_autoptr(GArray) md = g_array_new(FALSE, FALSE, sizeof(SflLabelPair));
	g_autoptr(SflLabels) set = NULL;
	g_autofree gchar *event_time = NULL;
	const gchar *name;
	json_t *value;
	size_t i;

	if (!json_is_object(labels) || json_object_size(labels) == 0 || line == NULL) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT, "a record without labels or line");
		return NULL;
	}
	json_object_foreach (labels, name, value) {
		SflLabelPair p = { name, json_string_value(value) != NULL ? json_string_value(value)
									  : "" };
		g_array_append_val(pairs, p);
	}
	json_array_foreach (metadata, i, value) {
		SflLabelPair p = { json_string_value(json_array_get(value, 0)),
				   json_string_value(json_array_get(value, 1)) };
		if (p.name != NULL && p.value != NULL)
			g_array_append_val(md, p);
	}
	if (ingest_ns > 0) {
		SflLabelPair p = { "event_time", NULL };
		event_time = format_time_ns(ts);
		p.value = event_time;
		g_array_append_val(md, p);
		ts = ingest_ns;
	}
	set = sfl_labels_intern(interner, (SflLabelPair *)(void *)pairs->data, pairs->len, error);
	if (set == NULL)
		return NULL;
	return sfl_entry_new(ts, set, line, -1, (SflLabelPair *)(void *)md->data, md->len, NULL,
			     NULL);
}

typedef struct {
	guint accepted;
	guint refused;
	guint skipped;
	gboolean failed;
	GError *error;
} SflReplayCounts;

/*
 * Pushes @records[start, start+n) as one batch and sorts each into accepted (dropped from the
 * store) or kept. A whole-batch rejection is retried entry by entry so one bad entry keeps
 * only itself; a retryable failure is tried again with backoff, then stops the replay.
 */
static gboolean
replay_backoff_cb(gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
	return G_SOURCE_REMOVE;
}

/* waits on the main context, not in a sleep: the curl loop and its timers keep running */
static void
replay_backoff(gint64 delay_usec)
{
	gboolean fired = FALSE;
	GSource *timer = g_timeout_source_new((guint)(delay_usec / 1000));

	g_source_set_callback(timer, replay_backoff_cb, &fired, NULL);
	g_source_attach(timer, NULL);
	while (!fired)
		g_main_context_iteration(NULL, TRUE);
	g_source_unref(timer);
}

static void
replay_part(SflSink *sink, GPtrArray *records, guint start, guint n,
	    const SflDeadletterOptions *opts, SflLabelsInterner *interner, GPtrArray *keep,
	    SflReplayCounts *counts)
{
	g_autoptr(SflBatch) batch = sfl_batch_new();
	g_autoptr(GPtrArray) pushed = g_ptr_array_new();
	g_autoptr(SflSinkResult) result = NULL;
	gint64 base_ns = g_get_real_time() * 1000;

	for (guint i = start; i < start + n; i++) {
		json_t *r = g_ptr_array_index(records, i);
		g_autoptr(GError) error = NULL;
		SflEntry *entry = record_to_entry(
			r, interner, opts->ingest_timestamps ? base_ns + (i - start) * 1000 : 0,
			&error);
		if (entry == NULL) {
			g_warning("dead-letter entry kept: %s", error->message);
			g_ptr_array_add(keep, r);
			counts->skipped++;
			continue;
		}
		sfl_batch_add(batch, entry);
		g_ptr_array_add(pushed, r);
	}
	if (pushed->len == 0)
		return;
	for (guint attempt = 0; attempt < SFL_DEADLETTER_REPLAY_TRIES; attempt++) {
		SflWait w = { 0 };
		g_autoptr(GError) error = NULL;

		g_clear_pointer(&result, sfl_sink_result_free);
		sfl_sink_push_async(sink, batch, NULL, sfl_wait_cb, &w);
		while (w.result == NULL)
			g_main_context_iteration(NULL, TRUE);
		result = sfl_sink_push_finish(sink, w.result, &error);
		g_object_unref(w.result);
		if (result == NULL) {
			counts->failed = TRUE;
			g_propagate_error(&counts->error, g_steal_pointer(&error));
			break;
		}
		if (result->outcome != SFL_SINK_RETRY)
			break;
		fprintf(stderr, "sf2loki: Loki answered %u (%s); trying again\n", result->status,
			result->reason != NULL ? result->reason : "retry");
		if (attempt + 1 < SFL_DEADLETTER_REPLAY_TRIES)
			replay_backoff(MIN(G_USEC_PER_SEC << attempt, 16 * G_USEC_PER_SEC));
	}
	if (result == NULL || result->outcome == SFL_SINK_RETRY ||
	    result->outcome == SFL_SINK_FATAL) {
		if (result != NULL && counts->error == NULL)
			g_set_error(&counts->error, SFL_ERROR, SFL_ERROR_TRANSIENT,
				    "Loki push failed (%s%s%s)",
				    sfl_sink_outcome_to_string(result->outcome),
				    result->reason != NULL ? ": " : "",
				    result->reason != NULL ? result->reason : "");
		counts->failed = TRUE;
		for (guint i = 0; i < pushed->len; i++)
			g_ptr_array_add(keep, g_ptr_array_index(pushed, i));
		return;
	}
	if (result->outcome == SFL_SINK_OK) {
		counts->accepted += pushed->len;
		return;
	}
	if (result->outcome == SFL_SINK_PARTIAL && result->verdicts != NULL &&
	    result->verdicts->len == pushed->len) {
		for (guint i = 0; i < pushed->len; i++) {
			const SflSinkVerdict *v =
				&g_array_index(result->verdicts, SflSinkVerdict, i);
			json_t *r = g_ptr_array_index(pushed, i);
			if (v->reason == NULL) {
				counts->accepted++;
				continue;
			}
			json_object_set_new(r, "reason", json_string(v->reason));
			g_ptr_array_add(keep, r);
			counts->refused++;
		}
		return;
	}
	/* REJECTED (or a partial answer that names nothing usable) */
	if (pushed->len > 1) {
		for (guint i = start; i < start + n; i++) {
			json_t *r = g_ptr_array_index(records, i);

			/* one not pushed was unreadable, and kept already */
			if (!g_ptr_array_find(pushed, r, NULL))
				continue;
			/* the replay gave up: what it did not get to stays in the store */
			if (counts->failed)
				g_ptr_array_add(keep, r);
			else
				replay_part(sink, records, i, 1, opts, interner, keep, counts);
		}
		return;
	}
	json_object_set_new(g_ptr_array_index(pushed, 0), "reason",
			    json_string(result->reason != NULL ? result->reason : "rejected"));
	g_ptr_array_add(keep, g_ptr_array_index(pushed, 0));
	counts->refused++;
}

static int
sfl_deadletter_replay(const SflConfig *config, GPtrArray *records, const SflDeadletterOptions *opts,
		      GPtrArray *keep)
{
	const SflLokiBatchConfig *batch = &config->data.sink.loki.batch;
	g_autoptr(GPtrArray) selected = g_ptr_array_new();
	g_autoptr(SflCurlLoop) loop = NULL;
	g_autoptr(SflSink) sink = NULL;
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(GError) error = NULL;
	SflReplayCounts counts = { 0 };
	gint64 now = g_get_real_time();
	gint64 started = g_get_monotonic_time();

	for (guint i = 0; i < records->len; i++) {
		json_t *r = g_ptr_array_index(records, i);
		g_ptr_array_add(record_matches(r, opts, now) ? selected : keep, r);
	}
	if (opts->dry_run) {
		printf("sf2loki deadletter replay (dry run): would push %u entries, keep %u\n",
		       selected->len, keep->len);
		return 0;
	}
	loop = sfl_curl_loop_new();
	sink = sfl_app_build_sink(config, loop, 0, &error);
	if (sink == NULL) {
		g_prefix_error(&error, "cannot set up the Loki sink: ");
		return sfl_deadletter_fail(error);
	}
	for (guint i = 0; i < selected->len;) {
		guint n = 0;
		gsize bytes = 0;

		while (i + n < selected->len && n < (guint)batch->max_entries &&
		       (n == 0 || bytes < (gsize)batch->max_bytes)) {
			const gchar *line = record_str(g_ptr_array_index(selected, i + n), "line");
			bytes += line != NULL ? strlen(line) : 0;
			n++;
		}
		if (counts.failed) {
			for (guint j = i; j < i + n; j++)
				g_ptr_array_add(keep, g_ptr_array_index(selected, j));
		} else {
			replay_part(sink, selected, i, n, opts, interner, keep, &counts);
		}
		i += n;
	}
	printf("sf2loki deadletter replay: entries=%u accepted=%u refused_again=%u unreadable=%u "
	       "kept=%u elapsed=%.1fs\n",
	       selected->len, counts.accepted, counts.refused, counts.skipped, keep->len,
	       (gdouble)(g_get_monotonic_time() - started) / G_USEC_PER_SEC);
	if (counts.failed) {
		fprintf(stderr, "sf2loki: replay stopped, the rest is kept: %s\n",
			counts.error != NULL ? counts.error->message : "Loki push failed");
		g_clear_error(&counts.error);
		return 1;
	}
	return 0;
}

static int
sfl_deadletter_purge(GPtrArray *records, const SflDeadletterOptions *opts, GPtrArray *keep)
{
	gint64 now = g_get_real_time();
	guint removed = 0;

	for (guint i = 0; i < records->len; i++) {
		json_t *r = g_ptr_array_index(records, i);
		if (opts->all || record_matches(r, opts, now))
			removed++;
		else
			g_ptr_array_add(keep, r);
	}
	printf("sf2loki deadletter purge%s: removed=%u kept=%u\n",
	       opts->dry_run ? " (dry run)" : "", removed, keep->len);
	return 0;
}

/**
 * sfl_cli_deadletter:
 * @argc: argument count
 * @argv: the whole command line (`sf2loki [--config PATH] deadletter CMD …`)
 *
 * Returns: the exit code: 0, 1 runtime failure (a replay that stopped, a claim another run
 * holds), 2 usage or configuration
 */
int
sfl_cli_deadletter(int argc, char **argv)
{
	g_autofree gchar *config_path = NULL;
	g_autofree gchar *reason = NULL;
	g_autofree gchar *older_than = NULL;
	gboolean json = FALSE, all = FALSE, dry_run = FALSE, ingest = FALSE;
	const GOptionEntry entries[] = {
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path, "YAML configuration file",
		  "PATH" },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &json, "list: machine-readable output", NULL },
		{ "reason", 0, 0, G_OPTION_ARG_STRING, &reason, "only entries with this reason",
		  "R" },
		{ "older-than", 0, 0, G_OPTION_ARG_STRING, &older_than,
		  "only entries captured longer ago than this", "DUR" },
		{ "all", 0, 0, G_OPTION_ARG_NONE, &all, "purge: every entry", NULL },
		{ "dry-run", 0, 0, G_OPTION_ARG_NONE, &dry_run,
		  "replay, purge: say what would happen", NULL },
		{ "ingest-timestamps", 0, 0, G_OPTION_ARG_NONE, &ingest,
		  "replay: stamp entries now, the original time in event_time", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) context = g_option_context_new("deadletter COMMAND");
	g_auto(GStrv) args = g_new0(gchar *, argc + 1);
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = NULL;
	g_autoptr(SflClock) clock = sfl_clock_get_system();
	g_autoptr(SflDeadletter) dl = NULL;
	g_autoptr(GPtrArray) records = NULL;
	g_autoptr(GPtrArray) keep = g_ptr_array_new();
	SflDeadletterOptions opts = { 0 };
	const gchar *cmd;
	guint nargs;
	gboolean claims;
	int rc;

	for (int i = 0; i < argc; i++)
		args[i] = g_strdup(argv[i]);
	g_option_context_set_help_enabled(context, FALSE);
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse_strv(context, &args, &error))
		return sfl_deadletter_usage_error(error->message);
	/* args: sf2loki deadletter CMD [ARG] */
	cmd = args[1] != NULL ? args[2] : NULL;
	if (cmd == NULL)
		return sfl_deadletter_usage_error("deadletter needs a command");
	nargs = g_strv_length(args) - 3;
	if (!g_strv_contains((const gchar *const[]){ "list", "show", "replay", "purge", NULL },
			     cmd)) {
		g_autofree gchar *msg = g_strdup_printf("unknown deadletter command '%s'", cmd);
		return sfl_deadletter_usage_error(msg);
	}
	if ((g_str_equal(cmd, "show") && nargs != 1) || (!g_str_equal(cmd, "show") && nargs != 0))
		return sfl_deadletter_usage_error("wrong number of arguments");
	if (json && !g_str_equal(cmd, "list"))
		return sfl_deadletter_usage_error("--json goes with list");
	if (all && !g_str_equal(cmd, "purge"))
		return sfl_deadletter_usage_error("--all goes with purge");
	if (ingest && !g_str_equal(cmd, "replay"))
		return sfl_deadletter_usage_error("--ingest-timestamps goes with replay");
	if (dry_run && !g_str_equal(cmd, "replay") && !g_str_equal(cmd, "purge"))
		return sfl_deadletter_usage_error("--dry-run goes with replay and purge");
	if (g_str_equal(cmd, "purge") && !all && reason == NULL && older_than == NULL)
		return sfl_deadletter_usage_error("purge removes entries for good: say which "
						  "(--reason, --older-than) or --all");
	if (older_than != NULL) {
		if (!sfl_duration_parse(older_than, &opts.older_than, &error)) {
			g_autofree gchar *msg = g_strdup_printf("--older-than: %s", error->message);
			return sfl_deadletter_usage_error(msg);
		}
	}
	opts.config_path = config_path;
	opts.json = json;
	opts.all = all;
	opts.dry_run = dry_run;
	opts.ingest_timestamps = ingest;
	opts.reason = reason;

	config = sfl_config_load(config_path, envp, &error);
	if (config == NULL) {
		g_auto(GStrv) lines = g_strsplit(error->message, "\n", -1);
		for (guint i = 0; lines[i] != NULL; i++)
			fprintf(stderr, "sf2loki: %s\n", lines[i]);
		return 2;
	}
	dl = sfl_app_open_deadletter(config, clock, &error);
	if (dl == NULL)
		return sfl_deadletter_fail(error);
	claims = (g_str_equal(cmd, "replay") || g_str_equal(cmd, "purge")) && !dry_run;
	records =
		claims ? sfl_deadletter_claim(dl, NULL, &error) : sfl_deadletter_read_all(dl, NULL);
	if (records == NULL)
		return sfl_deadletter_fail(error);

	if (g_str_equal(cmd, "list"))
		return sfl_deadletter_list(records, &opts, dl);
	if (g_str_equal(cmd, "show"))
		return sfl_deadletter_show(records, args[3]);
	if (g_str_equal(cmd, "replay"))
		rc = sfl_deadletter_replay(config, records, &opts, keep);
	else
		rc = sfl_deadletter_purge(records, &opts, keep);
	if (!claims)
		return rc;
	if (!sfl_deadletter_settle_claim(dl, keep, &error)) {
		fprintf(stderr, "sf2loki: the dead-letter store is unchanged: %s\n",
			error->message);
		return 1;
	}
	return rc;
}
