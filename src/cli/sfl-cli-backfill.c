/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCli"

#include "config.h"

#include "sfl-cli-backfill.h"

#include <stdio.h>
#include <string.h>

#include "sfl-backfill.h"
#include "sfl-config.h"
#include "sfl-error.h"
#include "sfl-log.h"
#include "sfl-app.h"
#include "sfl-redact.h"

/* the original's warnings: typical EventLogFile retention, Loki's default sample age limit */
#define SFL_BACKFILL_RETENTION_DAYS    30
#define SFL_BACKFILL_LOKI_MAX_AGE_DAYS 7
#define SFL_BACKFILL_MAX_CONCURRENCY   32
/* without a terminal: one progress line this often (or service.progress_interval, if less) */
#define SFL_BACKFILL_LINE_EVERY_USEC (10 * G_USEC_PER_SEC)

typedef struct {
	gboolean bar; /* stderr is a terminal: one line, redrawn */
	gboolean dry_run;
	gint64 line_every_usec;
	gint64 last_line_usec;
	gboolean drawn;
} SflCliProgress;

static int sfl_cli_backfill_usage_error(const gchar *format, ...) G_GNUC_PRINTF(1, 2);

static int
sfl_cli_backfill_usage_error(const gchar *format, ...)
{
	va_list args;
	g_autofree gchar *msg = NULL;

	va_start(args, format);
	msg = g_strdup_vprintf(format, args);
	va_end(args);
	fprintf(stderr, "sf2loki: %s\n\nUsage:\n%s", msg, SFL_CLI_BACKFILL_USAGE);
	return SFL_EXIT_USAGE;
}

/* YYYY-MM-DD as UTC midnight; FALSE for anything else */
static gboolean
sfl_cli_backfill_parse_date(const gchar *text, gint64 *usec)
{
	guint y = 0;
	guint m = 0;
	guint d = 0;
	gchar tail = 0;
	g_autoptr(GDateTime) dt = NULL;

	if (strlen(text) != 10 || sscanf(text, "%4u-%2u-%2u%c", &y, &m, &d, &tail) != 3 ||
	    text[4] != '-' || text[7] != '-' ||
	    !g_date_valid_dmy((GDateDay)d, (GDateMonth)m, (GDateYear)y))
		return FALSE;
	dt = g_date_time_new_utc((gint)y, (gint)m, (gint)d, 0, 0, 0);
	if (dt == NULL)
		return FALSE;
	*usec = g_date_time_to_unix(dt) * G_USEC_PER_SEC;
	return TRUE;
}

/* an EventType name is an identifier; anything else would be spliced into the SOQL */
static gboolean
sfl_cli_backfill_is_identifier(const gchar *name)
{
	if (!g_ascii_isalpha(name[0]))
		return FALSE;
	for (const gchar *p = name; *p != '\0'; p++) {
		if (!g_ascii_isalnum(*p) && *p != '_')
			return FALSE;
	}
	return TRUE;
}

/*
 * --event-types: comma-separated, whitespace-stripped, each an identifier or `*` (discovery,
 * SFL-0050); NULL with @bad set to the first offending item (SFL-0066: quotes and the like
 * never reach a query)
 */
static GStrv
sfl_cli_backfill_parse_types(const gchar *text, gchar **bad)
{
	g_auto(GStrv) parts = g_strsplit(text, ",", -1);
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = 0; parts[i] != NULL; i++) {
		gchar *name = g_strstrip(parts[i]);
		if (!g_str_equal(name, "*") && !sfl_cli_backfill_is_identifier(name)) {
			*bad = g_strdup(name);
			return NULL;
		}
		if (g_hash_table_add(seen, name))
			g_strv_builder_add(b, name);
	}
	return g_strv_builder_end(b);
}

/* 12.3 MiB: plain ASCII (g_format_size() puts a no-break space before the unit) */
static gchar *
sfl_cli_backfill_bytes(guint64 n)
{
	const gchar *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	gdouble v = (gdouble)n;
	guint u = 0;

	while (v >= 1024.0 && u + 1 < G_N_ELEMENTS(units)) {
		v /= 1024.0;
		u++;
	}
	return u == 0 ? g_strdup_printf("%" G_GUINT64_FORMAT " B", n)
		      : g_strdup_printf("%.1f %s", v, units[u]);
}

static gchar *
sfl_cli_backfill_eta(const SflBackfillStats *st)
{
	gdouble rate =
		st->elapsed_seconds > 0 ? (gdouble)st->bytes_downloaded / st->elapsed_seconds : 0.0;
	guint64 left = st->bytes_listed > st->bytes_downloaded
			       ? st->bytes_listed - st->bytes_downloaded
			       : 0;
	guint64 secs = 0;

	if (rate <= 0.0)
		return g_strdup("--:--:--");
	secs = (guint64)((gdouble)left / rate);
	return g_strdup_printf("%" G_GUINT64_FORMAT ":%02u:%02u", secs / 3600,
			       (guint)(secs / 60 % 60), (guint)(secs % 60));
}

/* the bar on a terminal (at most four times a second: the run's tick), else a log line now
 * and then; the last call, at the end, finishes the bar's line */
static void
sfl_cli_backfill_progress_cb(const SflBackfillStats *st, gpointer user_data)
{
	SflCliProgress *p = user_data;
	g_autofree gchar *done = sfl_cli_backfill_bytes(st->bytes_downloaded);
	g_autofree gchar *listed = sfl_cli_backfill_bytes(st->bytes_listed);
	g_autofree gchar *eta = sfl_cli_backfill_eta(st);
	gdouble rate =
		st->elapsed_seconds > 0 ? (gdouble)st->bytes_downloaded / st->elapsed_seconds : 0.0;
	g_autofree gchar *per_sec = sfl_cli_backfill_bytes((guint64)rate);
	gint64 now = g_get_monotonic_time();

	if (p->dry_run)
		return;
	if (p->bar) {
		guint width = 20;
		guint filled =
			st->bytes_listed > 0
				? (guint)MIN(width, st->bytes_downloaded * width / st->bytes_listed)
				: 0;
		g_autofree gchar *bar = g_strnfill(filled, '#');
		g_autofree gchar *rest = g_strnfill(width - filled, '.');

		fprintf(stderr,
			"\r\033[K[%s%s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
			" files  %" G_GUINT64_FORMAT " rows  %s/%s  %s/s  ETA %s",
			bar, rest, st->files, st->files_listed, st->rows_pushed, done, listed,
			per_sec, eta);
		fflush(stderr);
		p->drawn = TRUE;
		return;
	}
	if (p->last_line_usec != 0 && now - p->last_line_usec < p->line_every_usec)
		return;
	if (p->last_line_usec != 0)
		g_message("backfill progress: files=%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
			  " rows_read=%" G_GUINT64_FORMAT " rows_pushed=%" G_GUINT64_FORMAT
			  " bytes=%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " rate=%s/s eta=%s",
			  st->files, st->files_listed, st->rows_read, st->rows_pushed,
			  st->bytes_downloaded, st->bytes_listed, per_sec, eta);
	p->last_line_usec = now;
}

/* the original's warnings, logged and on stderr */
static void
sfl_cli_backfill_warn_age(gint64 since_usec, gboolean ingest_timestamps)
{
	gint64 age_days = (g_get_real_time() - since_usec) / ((gint64)G_USEC_PER_SEC * 86400);

	if (age_days > SFL_BACKFILL_RETENTION_DAYS) {
		g_warning("backfill: --since is %" G_GINT64_FORMAT " days ago, beyond the typical "
			  "EventLogFile retention of %d days; older files may be gone",
			  age_days, SFL_BACKFILL_RETENTION_DAYS);
		fprintf(stderr,
			"warning: --since is more than %d days ago, beyond the typical "
			"EventLogFile retention\n",
			SFL_BACKFILL_RETENTION_DAYS);
	}
	if (!ingest_timestamps && age_days > SFL_BACKFILL_LOKI_MAX_AGE_DAYS) {
		g_warning("backfill: --since is %" G_GINT64_FORMAT " days ago and entries keep "
			  "their own times; Loki's default reject_old_samples_max_age (168h) "
			  "refuses entries older than %d days (see --ingest-timestamps)",
			  age_days, SFL_BACKFILL_LOKI_MAX_AGE_DAYS);
		fprintf(stderr,
			"warning: --since is more than %d days ago; Loki's default "
			"reject_old_samples_max_age (168h) refuses older entries; consider "
			"--ingest-timestamps\n",
			SFL_BACKFILL_LOKI_MAX_AGE_DAYS);
	}
}

/**
 * sfl_cli_backfill:
 * @argc: argument count
 * @argv: the process's arguments, `backfill` among them
 * @platform: OS hooks from the entry point
 *
 * Returns: the process exit code
 */
int
sfl_cli_backfill(int argc, char **argv, const SflCliPlatform *platform)
{
	g_autofree gchar *config_path = NULL;
	g_autofree gchar *since = NULL;
	g_autofree gchar *until = NULL;
	g_autofree gchar *types_text = NULL;
	g_autofree gchar *interval = NULL;
	g_autofree gchar *org = NULL;
	g_autofree gchar *bad = NULL;
	gboolean ingest = FALSE;
	gboolean dry_run = FALSE;
	gint concurrency = 2;
	const GOptionEntry entries[] = {
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path, "YAML configuration file",
		  "PATH" },
		{ "since", 0, 0, G_OPTION_ARG_STRING, &since, "window start (UTC midnight)",
		  "YYYY-MM-DD" },
		{ "until", 0, 0, G_OPTION_ARG_STRING, &until, "window end, exclusive",
		  "YYYY-MM-DD" },
		{ "event-types", 0, 0, G_OPTION_ARG_STRING, &types_text, "EventTypes, or *",
		  "A,B" },
		{ "interval", 0, 0, G_OPTION_ARG_STRING, &interval, "Daily or Hourly", "I" },
		{ "ingest-timestamps", 0, 0, G_OPTION_ARG_NONE, &ingest,
		  "time entries by ingestion, not by event", NULL },
		{ "concurrency", 0, 0, G_OPTION_ARG_INT, &concurrency, "concurrent downloads",
		  "N" },
		{ "org", 0, 0, G_OPTION_ARG_STRING, &org, "the org (multi-org)", "NAME" },
		{ "dry-run", 0, 0, G_OPTION_ARG_NONE, &dry_run, "list only", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) context = g_option_context_new("backfill");
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) args = g_new0(gchar *, argc + 1);
	g_auto(GStrv) types = NULL;
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(SflConfig) config = NULL;
	SflBackfillOptions opts = { 0 };
	SflBackfillStats st = { 0 };
	SflCliProgress progress = { 0 };
	gint64 until_usec = 0;
	gboolean ok = FALSE;

	for (int i = 0; i < argc; i++) {
		if (g_str_equal(argv[i], "--help") || g_str_equal(argv[i], "-h")) {
			printf("Usage:\n%s", SFL_CLI_BACKFILL_USAGE);
			return SFL_EXIT_OK;
		}
		args[i] = g_strdup(argv[i]);
	}
	g_option_context_set_help_enabled(context, FALSE);
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse_strv(context, &args, &error))
		return sfl_cli_backfill_usage_error("%s", error->message);
	/* what is left: the program and the command */
	for (guint i = 1; args[i] != NULL; i++) {
		if (!g_str_equal(args[i], "backfill") || i != 1)
			return sfl_cli_backfill_usage_error("unexpected argument '%s'", args[i]);
	}

	if (since == NULL)
		return sfl_cli_backfill_usage_error("--since YYYY-MM-DD is required");
	if (!sfl_cli_backfill_parse_date(since, &opts.since_usec))
		return sfl_cli_backfill_usage_error("--since %s: not a date (YYYY-MM-DD)", since);
	if (until != NULL && !sfl_cli_backfill_parse_date(until, &until_usec))
		return sfl_cli_backfill_usage_error("--until %s: not a date (YYYY-MM-DD)", until);
	opts.until_usec = until != NULL ? until_usec : g_get_real_time();
	if (opts.until_usec <= opts.since_usec)
		return sfl_cli_backfill_usage_error("--until must be after --since");
	if (types_text != NULL) {
		types = sfl_cli_backfill_parse_types(types_text, &bad);
		if (types == NULL)
			return sfl_cli_backfill_usage_error(
				"--event-types: '%s' is not an EventType name (letters, digits and "
				"underscores, starting with a letter) or * (discover the types)",
				bad);
		if (types[0] == NULL)
			return sfl_cli_backfill_usage_error("--event-types: no EventType given");
	}
	if (interval == NULL || g_ascii_strcasecmp(interval, "daily") == 0)
		opts.interval = SFL_ELF_INTERVAL_DAILY;
	else if (g_ascii_strcasecmp(interval, "hourly") == 0)
		opts.interval = SFL_ELF_INTERVAL_HOURLY;
	else
		return sfl_cli_backfill_usage_error("--interval %s: Daily or Hourly", interval);
	if (concurrency < 1 || concurrency > SFL_BACKFILL_MAX_CONCURRENCY)
		return sfl_cli_backfill_usage_error("--concurrency %d: from 1 to %d", concurrency,
						    SFL_BACKFILL_MAX_CONCURRENCY);

	config = sfl_config_load(config_path, envp, &error);
	if (config == NULL) {
		g_auto(GStrv) lines = g_strsplit(error->message, "\n", -1);
		for (guint i = 0; lines[i] != NULL; i++)
			fprintf(stderr, "sf2loki: %s\n", lines[i]);
		return sfl_error_to_exit_code(error);
	}
	sfl_log_setup((SflLogFormat)config->data.service.log_format, sfl_app_log_level(config));
	if (org == NULL && config->data.orgs->len > 1) {
		const SflOrgConfig *first = g_ptr_array_index(config->data.orgs, 0);
		fprintf(stderr,
			"note: %u orgs are configured; backfilling the first (%s); choose one "
			"with --org\n",
			config->data.orgs->len, first->name);
	}
	sfl_cli_backfill_warn_age(opts.since_usec, ingest);

	opts.org = org;
	opts.event_types = (const gchar *const *)types;
	opts.ingest_timestamps = ingest;
	opts.concurrency = (guint)concurrency;
	opts.dry_run = dry_run;
	opts.install_stop_handlers = platform != NULL ? platform->install_stop_handlers : NULL;
	/* a terminal that takes escape sequences: GLib's own test for one, on every platform */
	progress.bar = g_log_writer_supports_color(fileno(stderr));
	progress.dry_run = dry_run;
	progress.line_every_usec = SFL_BACKFILL_LINE_EVERY_USEC;
	if (config->data.service.progress_interval > 0)
		progress.line_every_usec =
			MIN(progress.line_every_usec, config->data.service.progress_interval);
	opts.progress = sfl_cli_backfill_progress_cb;
	opts.progress_data = &progress;

	ok = sfl_backfill_run(config, &opts, &st, &error);
	if (progress.drawn)
		fputc('\n', stderr);
	if (dry_run) {
		printf("sf2loki backfill dry run: files=%" G_GUINT64_FORMAT
		       " bytes=%" G_GUINT64_FORMAT " api_calls=%" G_GUINT64_FORMAT
		       " (listings=%" G_GUINT64_FORMAT " downloads=%" G_GUINT64_FORMAT ")\n",
		       st.files, st.bytes_listed, st.listing_calls + st.downloads, st.listing_calls,
		       st.downloads);
	} else if (ok || sfl_error_to_exit_code(error) != SFL_EXIT_USAGE) {
		printf("sf2loki backfill summary: files=%" G_GUINT64_FORMAT
		       " rows_pushed=%" G_GUINT64_FORMAT " rows_dropped=%" G_GUINT64_FORMAT
		       " bytes_pushed=%" G_GUINT64_FORMAT " api_calls=%" G_GUINT64_FORMAT
		       " elapsed=%.1fs\n",
		       st.files, st.rows_pushed, st.rows_dropped, st.bytes_pushed, st.downloads,
		       st.elapsed_seconds);
	}
	fflush(stdout);
	if (!ok) {
		g_autofree gchar *msg = sfl_redact(error->message);
		fprintf(stderr, "sf2loki: %s\n", msg);
		return sfl_error_to_exit_code(error);
	}
	if (st.types_failed > 0)
		fprintf(stderr,
			"sf2loki: %" G_GUINT64_FORMAT " event type(s) stopped early (see the log); "
			"rerun the same command to resume them\n",
			st.types_failed);
	if (st.interrupted)
		fprintf(stderr,
			"sf2loki: backfill interrupted; rerun the same command to resume\n");
	return SFL_EXIT_OK;
}
