/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBenchElf"

#include "config.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <glib/gstdio.h>
#include <jansson.h>
#include <snappy-c.h>

#include "sfl-config.h"
#include "sfl-csv.h"
#include "sfl-elf-source.h"
#include "sfl-loki-encode.h"
#include "sfl-memory-store.h"
#include "sfl-pipeline.h"
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"
#include "sfl-sink.h"

/*
 * EventLogFile end to end: one API LogFile of N rows (default 1,000,000), written here in C
 * (the simulator's own generator is slower than what it would measure) and served from disk
 * by tests/sim/salesforce_sim.py, read by the real EventLogFile source through the real
 * pipeline (config defaults for every batch and queue size) into a sink that encodes each
 * batch as the Loki sink does (protobuf + snappy) and discards the body. The run ends when
 * the file's checkpoint is committed. Only this process is measured (getrusage RUSAGE_SELF):
 * the simulator is another process. Prints PASS/FAIL against the targets of issue 7
 * (500,000 rows/s on one core, peak RSS under 64 MiB); never exits non-zero for them.
 *
 * Usage: bench-elf [--rows N] [--keep-file PATH]
 *   --keep-file writes the CSV to PATH and leaves it there (to serve it again by hand)
 * SF2LOKI_SOURCE_ROOT overrides where tests/sim/salesforce_sim.py is looked for.
 */

#define BENCH_DEFAULT_ROWS     1000000
#define BENCH_FILE_ID	       "0ATSIMBENCH0000001"
#define BENCH_TARGET_ROWS_S    500000.0
#define BENCH_RSS_LIMIT_KIB    (64 * 1024)
#define BENCH_MIN_DEADLINE_SEC 120
#define BENCH_EXIT_SKIP	       77

/* --- a sink that encodes like the Loki sink, then discards ----------------------------------- */

#define BENCH_TYPE_SINK (bench_sink_get_type())
G_DECLARE_FINAL_TYPE(BenchSink, bench_sink, BENCH, SINK, SflSink)

struct _BenchSink {
	SflSink parent_instance;
	SflLokiEncoding encoding;
	SflLokiCompression compression;
	guint64 pushes;
	guint64 entries;
	guint64 line_bytes;
	guint64 body_bytes;
};

G_DEFINE_TYPE(BenchSink, bench_sink, SFL_TYPE_SINK)

static void
bench_sink_encoded_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	BenchSink *self = g_task_get_source_object(task);
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body = sfl_loki_encode_finish(result, &error);

	if (body == NULL)
		g_error("encode: %s", error->message);
	self->body_bytes += g_bytes_get_size(body);
	/* the body is discarded where the real sink would hand it to curl */
	g_task_return_pointer(task, sfl_sink_result_new(SFL_SINK_OK),
			      (GDestroyNotify)sfl_sink_result_free);
}

static gboolean
bench_sink_answer_cb(gpointer user_data)
{
	GTask *task = user_data;

	g_task_return_pointer(task, sfl_sink_result_new(SFL_SINK_OK),
			      (GDestroyNotify)sfl_sink_result_free);
	return G_SOURCE_REMOVE;
}

static void
bench_sink_push_async(SflSink *sink, SflBatch *batch, GCancellable *cancellable,
		      GAsyncReadyCallback callback, gpointer user_data)
{
	BenchSink *self = BENCH_SINK(sink);
	GTask *task = g_task_new(self, cancellable, callback, user_data);
	guint n = 0;

	self->pushes++;
	for (guint i = 0; i < sfl_batch_get_length(batch); i++)
		n += sfl_batch_get(batch, i)->checkpoint_only ? 0 : 1;
	/* a batch of checkpoint tokens only is answered without a request, as the sink does */
	if (n > 0) {
		self->entries += n;
		self->line_bytes += sfl_batch_get_line_bytes(batch);
		/* as SflLokiSink does: large batches are encoded in a worker thread */
		sfl_loki_encode_async(batch, self->encoding, self->compression, cancellable,
				      bench_sink_encoded_cb, task);
		return;
	}
	/* the real sink answers from the curl loop, never inside push_async */
	g_idle_add_full(G_PRIORITY_DEFAULT, bench_sink_answer_cb, task, g_object_unref);
}

static SflSinkResult *
bench_sink_push_finish(SflSink *sink, GAsyncResult *result, GError **error)
{
	(void)sink;
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
bench_sink_class_init(BenchSinkClass *klass)
{
	SFL_SINK_CLASS(klass)->push_async = bench_sink_push_async;
	SFL_SINK_CLASS(klass)->push_finish = bench_sink_push_finish;
}

static void
bench_sink_init(BenchSink *self)
{
	(void)self;
}

/* --- the LogFile ---------------------------------------------------------------------------- */

static guint64
bench_next(guint64 *state)
{
	/* splitmix64: cheap, and the file is the same on every run */
	guint64 z = (*state += G_GUINT64_CONSTANT(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static const gchar *const bench_uris[] = {
	"/services/data/v64.0/query",	  "/services/data/v64.0/sobjects/Account",
	"/services/data/v64.0/composite", "/services/apexrest/orders/v2/sync",
	"/services/data/v64.0/limits",	  "/services/data/v64.0/sobjects/Contact/describe",
	"/services/data/v64.0/queryAll",  "/services/async/64.0/job",
};
static const gchar *const bench_entities[] = {
	"Account", "Contact", "Opportunity", "Case", "Lead", "Order__c", "Task", "CustomObj__c"
};
static const gchar *const bench_methods[] = {
	"query", "create", "update", "upsert", "describeSObject", "retrieve", "delete", "queryMore"
};
static const gchar *const bench_clients[] = {
	"sfdx-cli/2.61.8",	    "",
	"DataLoader Bulk v61",	    "Workbench/64.0",
	"MuleSoft-Connector/10.20", "simple-salesforce/1.12.6"
};

static const gchar bench_header[] =
	"\"EVENT_TYPE\",\"TIMESTAMP\",\"REQUEST_ID\",\"ORGANIZATION_ID\",\"USER_ID\","
	"\"RUN_TIME\",\"CPU_TIME\",\"URI\",\"SESSION_KEY\",\"LOGIN_KEY\",\"USER_TYPE\","
	"\"REQUEST_STATUS\",\"DB_TOTAL_TIME\",\"API_TYPE\",\"API_VERSION\",\"METHOD_NAME\","
	"\"ENTITY_NAME\",\"ROWS_PROCESSED\",\"REQUEST_SIZE\",\"RESPONSE_SIZE\",\"CLIENT_IP\","
	"\"TIMESTAMP_DERIVED\",\"USER_ID_DERIVED\",\"CLIENT_NAME\",\"QUERY\"\n";

/*
 * An API-type EventLogFile as Salesforce writes it: every cell quoted, 25 columns, ~370 bytes
 * a row, REQUEST_ID unique, the rows spread over the LogDate hour in order. Every 50th QUERY
 * holds doubled quotes and a comma, every 500th a newline, so the parser's slow paths are
 * there in a realistic share.
 */
static gboolean
bench_write_csv(const gchar *path, guint64 rows, GDateTime *hour, guint64 *out_bytes,
		GError **error)
{
	g_autofree gchar *day_compact = g_date_time_format(hour, "%Y%m%d%H");
	g_autofree gchar *day_iso = g_date_time_format(hour, "%Y-%m-%dT%H");
	FILE *f = fopen(path, "wb");
	guint64 state = 20261130;
	gchar row[1024];
	gchar query[160];

	if (f == NULL) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", path,
			    g_strerror(errno));
		return FALSE;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	fputs(bench_header, f);
	for (guint64 i = 0; i < rows; i++) {
		guint64 r = bench_next(&state);
		guint64 r2 = bench_next(&state);
		guint64 ms = i * G_GUINT64_CONSTANT(3600000) / rows;
		guint mi = (guint)(ms / 60000 % 60);
		guint s = (guint)(ms / 1000 % 60);
		guint msec = (guint)(ms % 1000);
		guint user = (guint)(r % 997);
		const gchar *entity = bench_entities[(r >> 10) % G_N_ELEMENTS(bench_entities)];
		gint n;

		if (i % 500 == 499)
			g_snprintf(query, sizeof(query),
				   "SELECT Id, Name FROM %s\nWHERE CreatedDate = LAST_N_DAYS:%u "
				   "LIMIT 200",
				   entity, (guint)(r2 % 90));
		else if (i % 50 == 49)
			g_snprintf(query, sizeof(query),
				   "SELECT Id, Name FROM %s WHERE Name = 'Acme, \"\"Inc\"\"' "
				   "LIMIT %u",
				   entity, (guint)(1 + r2 % 200));
		else
			g_snprintf(query, sizeof(query),
				   "SELECT Id, Name FROM %s WHERE "
				   "IsDeleted = false LIMIT %u",
				   entity, (guint)(1 + r2 % 2000));
		n = g_snprintf(row, sizeof(row),
			       "\"API\",\"%s%02u%02u.%03u\",\"4%08x%05x-%07" G_GUINT64_FORMAT
			       "\",\"00DSIM000000001\",\"005SIM000000%04u\",\"%u\",\"%u\",\"%s\","
			       "\"%016" G_GINT64_MODIFIER "x\",\"%08x\",\"Standard\",\"%s\",\"%u\","
			       "\"R\",\"64.0\",\"%s\",\"%s\",\"%u\",\"%u\",\"%u\",\"10.%u.%u.%u\","
			       "\"%s:%02u:%02u.%03uZ\",\"005SIM000000%04uAAA\",\"%s\",\"%s\"\n",
			       day_compact, mi, s, msec, (guint)(r >> 32), (guint)(r2 & 0xfffff), i,
			       user, (guint)(10 + r2 % 4990), (guint)(r2 >> 40) % 1500,
			       bench_uris[(r >> 20) % G_N_ELEMENTS(bench_uris)], r2 ^ (guint64)user,
			       (guint)(user * 2654435761u), (r & 0xff) == 0 ? "F" : "S",
			       (guint)(100000 + (r >> 24) % 90000000),
			       bench_methods[(r >> 16) % G_N_ELEMENTS(bench_methods)], entity,
			       (guint)((r2 >> 8) % 2000), (guint)(200 + (r2 >> 20) % 4000),
			       (guint)(1000 + (r2 >> 32) % 900000), (guint)(user % 256),
			       (guint)(r >> 56), (guint)((r >> 48) & 0xff), day_iso, mi, s, msec,
			       user, bench_clients[(r >> 28) % G_N_ELEMENTS(bench_clients)], query);
		g_assert(n > 0 && (gsize)n < sizeof(row));
		fwrite(row, 1, (gsize)n, f);
	}
	if (fflush(f) != 0 || ferror(f)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", path,
			    g_strerror(errno));
		fclose(f);
		return FALSE;
	}
	*out_bytes = (guint64)ftell(f);
	fclose(f);
	return TRUE;
}

/* --- the run -------------------------------------------------------------------------------- */

typedef struct {
	gchar *dir;
	gchar *csv_path;
	gchar *key_path;
	gchar *pub_path;
	gchar *dataset_path;
	gchar *log_path;
	gchar *base;
	GSubprocess *sim;
	SflCurlLoop *loop;
	SflClock *fake;
	SflClock *system;
	SflConfig *config;
	SflSfAuth *auth;
	SflSfRest *rest;
	SflMemoryBacking *backing;
	SflCheckpointStore *store;
	BenchSink *sink;
	SflPipeline *pipeline;
	SflSource *source;
	SflLabelsInterner *interner;
	gboolean committed;
	gboolean failed;
	gboolean stopped;
} Bench;

static gdouble
bench_cpu_seconds(gdouble *user, gdouble *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (gdouble)ru.ru_utime.tv_sec + (gdouble)ru.ru_utime.tv_usec / 1e6;
	*sys = (gdouble)ru.ru_stime.tv_sec + (gdouble)ru.ru_stime.tv_usec / 1e6;
	return *user + *sys;
}

static glong
bench_peak_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void
bench_write_keys(Bench *bench)
{
	EVP_PKEY *key = EVP_RSA_gen(2048);
	FILE *f = NULL;

	if (key == NULL)
		g_error("EVP_RSA_gen failed");
	bench->key_path = g_build_filename(bench->dir, "key.pem", NULL);
	bench->pub_path = g_build_filename(bench->dir, "pub.pem", NULL);
	f = fopen(bench->key_path, "w");
	if (f == NULL || PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) != 1)
		g_error("cannot write %s", bench->key_path);
	fclose(f);
	f = fopen(bench->pub_path, "w");
	if (f == NULL || PEM_write_PUBKEY(f, key) != 1)
		g_error("cannot write %s", bench->pub_path);
	fclose(f);
	EVP_PKEY_free(key);
}

/* the simulator's base URL, or NULL when it exited 77 (python3-jwt/cryptography missing) */
static gchar *
bench_start_sim(Bench *bench)
{
	const gchar *root = g_getenv("SF2LOKI_SOURCE_ROOT");
	g_autofree gchar *script = g_build_filename(root != NULL ? root : SFL_BENCH_SOURCE_ROOT,
						    "tests", "sim", "salesforce_sim.py", NULL);
	g_autoptr(GSubprocessLauncher) launcher =
		g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE);
	g_autoptr(GDataInputStream) out = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *line = NULL;

	/* one log line per request: kept out of the result, shown if the run fails */
	bench->log_path = g_build_filename(bench->dir, "salesforce_sim.log", NULL);
	g_subprocess_launcher_set_stderr_file_path(launcher, bench->log_path);
	bench->sim = g_subprocess_launcher_spawn(launcher, &error, "/usr/bin/python3", script,
						 "--public-key", bench->pub_path, "--dataset",
						 bench->dataset_path, NULL);
	if (bench->sim == NULL)
		g_error("cannot start %s: %s", script, error->message);
	out = g_data_input_stream_new(g_subprocess_get_stdout_pipe(bench->sim));
	line = g_data_input_stream_read_line(out, NULL, NULL, &error);
	if (line == NULL || !g_str_has_prefix(line, "PORT ")) {
		g_subprocess_wait(bench->sim, NULL, NULL);
		if (g_subprocess_get_if_exited(bench->sim) &&
		    g_subprocess_get_exit_status(bench->sim) == BENCH_EXIT_SKIP)
			return NULL;
		g_error("the Salesforce simulator did not start (see %s)", bench->log_path);
	}
	return g_strdup_printf("http://127.0.0.1:%s", line + 5);
}

static void
bench_lane_error(SflPipeline *pipeline, SflLane lane, const GError *error, gpointer user_data)
{
	Bench *bench = user_data;

	(void)pipeline;
	g_printerr("bench-elf: %s lane stopped: %s\n", sfl_lane_to_string(lane), error->message);
	bench->failed = TRUE;
}

/* polled, not per iteration: duplicating the state document is not free */
static gboolean
bench_check_cb(gpointer user_data)
{
	Bench *bench = user_data;
	g_autoptr(SflStateDoc) doc = sfl_memory_backing_dup_document(bench->backing);
	const gchar *value = doc != NULL ? sfl_state_doc_get(doc, "eventlogfile:API") : NULL;

	/* among the done ids, not the mark a file in flight carries (`in_flight`) */
	if (value != NULL && strstr(value, "[\"" BENCH_FILE_ID "\"") != NULL)
		bench->committed = TRUE;
	if (bench->source != NULL && sfl_source_counters(bench->source)->errors > 0) {
		g_printerr("bench-elf: the source reported an error\n");
		bench->failed = TRUE;
	}
	return G_SOURCE_CONTINUE;
}

static void
bench_stopped_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Bench *bench = user_data;
	g_autoptr(GError) error = NULL;

	if (!sfl_pipeline_stop_finish(SFL_PIPELINE(source), result, &error))
		g_printerr("bench-elf: stop: %s\n", error->message);
	bench->stopped = TRUE;
}

static void
bench_setup(Bench *bench)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *yaml = NULL;

	yaml = g_strdup_printf("salesforce:\n"
			       "  login_url: %s\n"
			       "  client_id: sim-client-id\n"
			       "  username: sim@example.com\n"
			       "  private_key_file: %s\n"
			       "sink:\n"
			       "  loki:\n"
			       "    url: http://127.0.0.1:9/loki/api/v1/push\n"
			       "    structured_metadata_fields: [USER_ID]\n"
			       "sources:\n"
			       "  eventlogfile:\n"
			       "    enabled: true\n"
			       "    event_types: [API]\n",
			       bench->base, bench->key_path);
	bench->config =
		sfl_config_load_from_data(yaml, strlen(yaml), "bench-elf.yaml", NULL, &error);
	if (bench->config == NULL)
		g_error("config: %s", error->message);
	bench->loop = sfl_curl_loop_new();
	/* the source's poll timer never fires on its own: one cycle, one file */
	bench->fake = sfl_fake_clock_new(g_get_real_time());
	bench->system = sfl_clock_get_system();
	/* the JWT's exp must be real time: the simulator checks it against its own clock */
	bench->auth =
		sfl_sf_auth_new(bench->loop, bench->config->data.salesforce, bench->system, &error);
	if (bench->auth == NULL)
		g_error("auth: %s", error->message);
	bench->rest = sfl_sf_rest_new(bench->loop, bench->auth,
				      bench->config->data.salesforce->api_version);
	bench->backing = sfl_memory_backing_new();
	bench->store = sfl_memory_store_new(bench->backing);
	bench->sink = g_object_new(BENCH_TYPE_SINK, NULL);
	bench->sink->encoding = bench->config->data.sink.loki.encoding;
	bench->sink->compression = bench->config->data.sink.loki.compression;
	bench->interner = sfl_labels_interner_new();
}

static void
bench_start(Bench *bench)
{
	static const gchar *const labels[] = { "job", "sf2loki", NULL };
	/* the lane wakes the parked source itself */
	SflPipelineCallbacks callbacks = { NULL, bench_lane_error, bench_lane_error };
	g_autoptr(SflLaneHandle) lane = NULL;
	SflSourceContext ctx = { 0 };
	g_autoptr(GError) error = NULL;

	bench->pipeline = sfl_pipeline_new(&bench->config->data.sink.loki.batch,
					   SFL_SINK(bench->sink), bench->store, bench->system);
	sfl_pipeline_set_callbacks(bench->pipeline, &callbacks, bench);
	bench->source = SFL_SOURCE(sfl_elf_source_new(bench->rest,
						      &bench->config->data.sources.eventlogfile,
						      &bench->config->data.sources, NULL, &error));
	if (bench->source == NULL)
		g_error("source: %s", error->message);
	lane = sfl_pipeline_get_lane(bench->pipeline, SFL_LANE_BULK);
	ctx.lane = lane;
	ctx.store = bench->store;
	ctx.interner = bench->interner;
	ctx.clock = bench->fake;
	ctx.static_labels = labels;
	ctx.key_prefix = "";
	ctx.metadata_fields =
		(const gchar *const *)bench->config->data.sink.loki.structured_metadata_fields;
	sfl_source_start(bench->source, &ctx);
}

static void
bench_teardown(Bench *bench, gboolean keep_csv)
{
	if (bench->source != NULL)
		sfl_source_stop(bench->source);
	g_clear_object(&bench->source);
	if (bench->pipeline != NULL) {
		sfl_pipeline_stop_async(bench->pipeline, G_USEC_PER_SEC, NULL, bench_stopped_cb,
					bench);
		while (!bench->stopped)
			g_main_context_iteration(NULL, TRUE);
	}
	g_clear_object(&bench->pipeline);
	g_clear_object(&bench->sink);
	g_clear_object(&bench->store);
	g_clear_pointer(&bench->backing, sfl_memory_backing_unref);
	g_clear_object(&bench->rest);
	g_clear_object(&bench->auth);
	g_clear_object(&bench->loop);
	g_clear_pointer(&bench->interner, sfl_labels_interner_unref);
	g_clear_pointer(&bench->fake, sfl_clock_unref);
	g_clear_pointer(&bench->system, sfl_clock_unref);
	g_clear_pointer(&bench->config, sfl_config_free);
	if (bench->sim != NULL) {
		g_subprocess_force_exit(bench->sim);
		g_subprocess_wait(bench->sim, NULL, NULL);
		g_clear_object(&bench->sim);
	}
	while (g_main_context_iteration(NULL, FALSE))
		;
	if (!keep_csv && bench->csv_path != NULL)
		g_unlink(bench->csv_path);
	if (bench->key_path != NULL)
		g_unlink(bench->key_path);
	if (bench->pub_path != NULL)
		g_unlink(bench->pub_path);
	if (bench->dataset_path != NULL)
		g_unlink(bench->dataset_path);
	if (bench->log_path != NULL)
		g_unlink(bench->log_path);
	g_rmdir(bench->dir);
	g_free(bench->dir);
	g_free(bench->csv_path);
	g_free(bench->key_path);
	g_free(bench->pub_path);
	g_free(bench->dataset_path);
	g_free(bench->log_path);
	g_free(bench->base);
}

static void
bench_show_sim_log(Bench *bench)
{
	g_autofree gchar *log = NULL;
	gsize len = 0;

	if (bench->log_path != NULL && g_file_get_contents(bench->log_path, &log, &len, NULL))
		g_printerr("--- simulator log (last 4 KiB) ---\n%s\n",
			   len > 4096 ? log + len - 4096 : log);
}

static gboolean
bench_floor_row(const SflCsvRecord *record, gpointer user_data)
{
	*(guint64 *)user_data += record->n_fields;
	return TRUE;
}

/*
 * The floor any shipper of this file pays, in this process: the CSV read from disk in the
 * source's 256 KiB reads and parsed by the same parser, and every read snappy-compressed as
 * it is (the compression Loki's protocol demands). No JSON, no entries, no pipeline.
 */
static gdouble
bench_floor(const gchar *path, guint64 rows)
{
	g_autoptr(SflCsvParser) parser = sfl_csv_parser_new(0);
	g_autoptr(GError) error = NULL;
	gsize chunk = 256 * 1024;
	g_autofree gchar *buf = g_malloc(chunk);
	g_autofree gchar *out = g_malloc(snappy_max_compressed_length(chunk));
	guint64 fields = 0;
	gdouble user = 0, sys = 0;
	gdouble cpu0 = bench_cpu_seconds(&user, &sys);
	FILE *f = fopen(path, "rb");
	gsize n;

	if (f == NULL)
		g_error("bench-elf: floor: cannot open %s: %s", path, g_strerror(errno));
	while ((n = fread(buf, 1, chunk, f)) > 0) {
		size_t out_len = snappy_max_compressed_length(chunk);

		if (!sfl_csv_parser_feed(parser, buf, n, bench_floor_row, &fields, &error))
			g_error("bench-elf: floor: %s", error->message);
		if (snappy_compress(buf, n, out, &out_len) != SNAPPY_OK)
			g_error("bench-elf: floor: snappy failed");
	}
	fclose(f);
	if (!sfl_csv_parser_finish(parser, bench_floor_row, &fields, &error))
		g_error("bench-elf: floor: %s", error->message);
	/* the header row and every data row, or the floor read something else */
	if (sfl_csv_parser_get_records(parser) != rows + 1)
		g_error("bench-elf: floor: %" G_GUINT64_FORMAT " records, not %" G_GUINT64_FORMAT,
			sfl_csv_parser_get_records(parser), rows + 1);
	return bench_cpu_seconds(&user, &sys) - cpu0;
}

int
main(int argc, char **argv)
{
	Bench bench = { 0 };
	g_autoptr(GError) error = NULL;
	g_autoptr(GOptionContext) options = g_option_context_new("- EventLogFile end to end");
	gint64 rows_opt = BENCH_DEFAULT_ROWS;
	g_autofree gchar *keep_file = NULL;
	GOptionEntry entries[] = {
		{ "rows", 0, 0, G_OPTION_ARG_INT64, &rows_opt, "rows in the LogFile", "N" },
		{ "keep-file", 0, 0, G_OPTION_ARG_FILENAME, &keep_file,
		  "write the CSV to PATH and keep it", "PATH" },
		{ NULL, 0, 0, 0, NULL, NULL, NULL },
	};
	gint64 now = g_get_real_time();
	g_autoptr(GDateTime) created = NULL;
	g_autoptr(GDateTime) log_hour = NULL;
	g_autofree gchar *created_iso = NULL;
	g_autofree gchar *log_date_iso = NULL;
	g_autofree gchar *dataset = NULL;
	g_autofree gchar *csv_json = NULL;
	guint64 rows;
	guint64 csv_bytes = 0;
	gint64 t0;
	gint64 deadline;
	gdouble gen_s;
	gdouble wall_s;
	gdouble cpu0;
	gdouble cpu_s;
	gdouble floor_s;
	gdouble user0;
	gdouble sys0;
	gdouble user1;
	gdouble sys1;
	glong rss_kib;
	gdouble rows_s;
	const SflSourceCounters *sc;
	SflPipelineCounters pc;
	guint check;
	json_t *path_json;

	g_option_context_add_main_entries(options, entries, NULL);
	if (!g_option_context_parse(options, &argc, &argv, &error) || rows_opt < 1) {
		g_printerr("bench-elf: %s\n",
			   error != NULL ? error->message : "--rows must be >= 1");
		return EXIT_FAILURE;
	}
	rows = (guint64)rows_opt;

	bench.dir = g_dir_make_tmp("sfl-bench-elf-XXXXXX", &error);
	if (bench.dir == NULL)
		g_error("%s", error->message);
	bench.csv_path = keep_file != NULL ? g_strdup(keep_file)
					   : g_build_filename(bench.dir, "api.csv", NULL);

	/* an Hourly file created two hours ago: settled, and well inside the 1 d lookback */
	created = g_date_time_new_from_unix_utc(now / G_USEC_PER_SEC - 2 * 3600);
	log_hour = g_date_time_add_hours(created, -1);
	{
		g_autoptr(GDateTime) h = g_date_time_new_utc(g_date_time_get_year(log_hour),
							     g_date_time_get_month(log_hour),
							     g_date_time_get_day_of_month(log_hour),
							     g_date_time_get_hour(log_hour), 0, 0);

		g_date_time_unref(log_hour);
		log_hour = g_steal_pointer(&h);
	}
	created_iso = g_date_time_format(created, "%Y-%m-%dT%H:%M:%S.000+0000");
	log_date_iso = g_date_time_format(log_hour, "%Y-%m-%dT%H:%M:%S.000+0000");

	t0 = g_get_monotonic_time();
	if (!bench_write_csv(bench.csv_path, rows, log_hour, &csv_bytes, &error))
		g_error("%s", error->message);
	gen_s = (gdouble)(g_get_monotonic_time() - t0) / 1e6;

	bench_write_keys(&bench);
	path_json = json_string(bench.csv_path);
	csv_json = json_dumps(path_json, JSON_ENCODE_ANY);
	json_decref(path_json);
	dataset = g_strdup_printf("{\"eventlogfiles\": [{\"Id\": \"%s\", \"EventType\": \"API\", "
				  "\"Interval\": \"Hourly\", \"LogDate\": \"%s\", "
				  "\"CreatedDate\": \"%s\", \"Sequence\": 0, \"path\": %s}]}",
				  BENCH_FILE_ID, log_date_iso, created_iso, csv_json);
	bench.dataset_path = g_build_filename(bench.dir, "dataset.json", NULL);
	if (!g_file_set_contents(bench.dataset_path, dataset, -1, &error))
		g_error("%s", error->message);
	bench.base = bench_start_sim(&bench);
	if (bench.base == NULL) {
		g_print("bench-elf: skipped, the Salesforce simulator needs python3-jwt and "
			"python3-cryptography\n");
		bench_teardown(&bench, keep_file != NULL);
		return BENCH_EXIT_SKIP;
	}
	bench_setup(&bench);

	cpu0 = bench_cpu_seconds(&user0, &sys0);
	t0 = g_get_monotonic_time();
	/* generous: a 1 GiB file at a tenth of the target still finishes */
	deadline = t0 + MAX(BENCH_MIN_DEADLINE_SEC, (gint64)(rows / 50000)) * G_USEC_PER_SEC;
	bench_start(&bench);
	check = g_timeout_add(20, bench_check_cb, &bench);
	while (!bench.committed && !bench.failed) {
		if (g_get_monotonic_time() > deadline) {
			g_printerr("bench-elf: timed out waiting for the file's checkpoint\n");
			bench.failed = TRUE;
			break;
		}
		g_main_context_iteration(NULL, TRUE);
	}
	wall_s = (gdouble)(g_get_monotonic_time() - t0) / 1e6;
	cpu_s = bench_cpu_seconds(&user1, &sys1) - cpu0;
	rss_kib = bench_peak_rss_kib();
	g_source_remove(check);

	sc = sfl_source_counters(bench.source);
	sfl_pipeline_get_counters(bench.pipeline, &pc);
	if (bench.failed || bench.sink->entries != rows) {
		g_printerr("bench-elf: FAILED after %.1f s: %" G_GUINT64_FORMAT
			   " rows read, %" G_GUINT64_FORMAT " entries encoded of %" G_GUINT64_FORMAT
			   "\n",
			   wall_s, sc->rows_read, bench.sink->entries, rows);
		bench_show_sim_log(&bench);
		bench_teardown(&bench, keep_file != NULL);
		return EXIT_FAILURE;
	}
	rows_s = (gdouble)rows / wall_s;

	g_print("bench-elf: %" G_GUINT64_FORMAT " rows in one API LogFile, %.1f MiB, "
		"mean row %.0f bytes (written in %.2f s)\n",
		rows, (gdouble)csv_bytes / (1024.0 * 1024.0), (gdouble)csv_bytes / (gdouble)rows,
		gen_s);
	g_print("  wall %.2f s, %.0f rows/s, %.1f MiB/s of CSV\n", wall_s, rows_s,
		(gdouble)csv_bytes / (1024.0 * 1024.0) / wall_s);
	g_print("  cpu %.2f s (user %.2f, sys %.2f), %.2f CPU-s per 1M rows, %.0f rows per "
		"CPU-second\n",
		cpu_s, user1 - user0, sys1 - sys0, cpu_s * 1e6 / (gdouble)rows,
		(gdouble)rows / cpu_s);
	g_print("  pushes %" G_GUINT64_FORMAT ", entries %" G_GUINT64_FORMAT
		", %.1f MiB of lines -> %.1f MiB of %s bodies, commits %" G_GUINT64_FORMAT "\n",
		bench.sink->pushes, bench.sink->entries,
		(gdouble)bench.sink->line_bytes / (1024.0 * 1024.0),
		(gdouble)bench.sink->body_bytes / (1024.0 * 1024.0),
		sfl_loki_content_type(bench.sink->encoding), pc.commits);
	floor_s = bench_floor(bench.csv_path, rows);
	g_print("  floor (the CSV read and parsed, snappy over its bytes): cpu %.2f s, %.2f CPU-s "
		"per 1M rows; ratio to floor %.2fx\n",
		floor_s, floor_s * 1e6 / (gdouble)rows, cpu_s / floor_s);
	g_print("  throughput target %.0f rows/s: %s\n", BENCH_TARGET_ROWS_S,
		rows_s >= BENCH_TARGET_ROWS_S ? "PASS" : "FAIL");
	g_print("  peak RSS %.1f MiB (limit %d MiB): %s\n", (gdouble)rss_kib / 1024,
		BENCH_RSS_LIMIT_KIB / 1024, rss_kib < BENCH_RSS_LIMIT_KIB ? "PASS" : "FAIL");

	bench_teardown(&bench, keep_file != NULL);
	return EXIT_SUCCESS;
}
