/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBenchConfig"

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/resource.h>

#include "sfl-config.h"
#include "sfl-log.h"
#include "sfl-redact.h"

/*
 * Startup and logging costs: how long loading the example configuration takes, and how much
 * the redacting log writer costs per line. Numbers go to docs/performance.md; nothing here
 * asserts a time.
 */

static void
bench_report(const gchar *what, guint iterations, gint64 elapsed_usec, gsize bytes)
{
	gdouble per = (gdouble)elapsed_usec / iterations;
	if (bytes > 0)
		g_print("%-34s %8u iterations  %10.2f us/op  %8.1f MiB/s\n", what, iterations, per,
			(gdouble)bytes * iterations / (1024.0 * 1024.0) /
				((gdouble)elapsed_usec / G_USEC_PER_SEC));
	else
		g_print("%-34s %8u iterations  %10.2f us/op\n", what, iterations, per);
}

static void
bench_config_load(const gchar *example)
{
	g_autofree gchar *data = NULL;
	gsize len = 0;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *tmpdir = g_dir_make_tmp("sfl-bench-XXXXXX", NULL);
	g_autofree gchar *key = g_build_filename(tmpdir, "key.pem", NULL);
	g_auto(GStrv) envp = NULL;
	const guint n = 2000;
	gint64 start;

	if (!g_file_get_contents(example, &data, &len, &error))
		g_error("%s", error->message);
	g_file_set_contents(key, "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n", -1,
			    NULL);
	envp = g_environ_setenv(NULL, "SF_CLIENT_ID", "cid", TRUE);
	envp = g_environ_setenv(envp, "SF_USERNAME", "u@example.com", TRUE);
	envp = g_environ_setenv(envp, "SF_PRIVATE_KEY_FILE", key, TRUE);
	envp = g_environ_setenv(envp, "LOKI_URL", "http://127.0.0.1:3100/loki/api/v1/push", TRUE);

	start = g_get_monotonic_time();
	for (guint i = 0; i < n; i++) {
		g_autoptr(SflConfig) config =
			sfl_config_load_from_data(data, len, example, envp, &error);
		if (config == NULL)
			g_error("%s", error->message);
	}
	bench_report("config load (example, 1 file read)", n, g_get_monotonic_time() - start, len);
	g_unlink(key);
	g_rmdir(tmpdir);
}

static void
bench_redact(void)
{
	g_autoptr(GString) line = g_string_new(NULL);
	const guint n = 20000;
	gint64 start;

	while (line->len < 4096)
		g_string_append(line, "event=LoginEvent user=alice@example.com ip=203.0.113.7 "
				      "uri=/services/data/v60.0/query status=200 ");
	start = g_get_monotonic_time();
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *out = sfl_redact(line->str);
		g_assert(out != NULL);
	}
	bench_report("redact 4 KiB line, no secrets", n, g_get_monotonic_time() - start, line->len);
}

static void
bench_discard_line(const gchar *line, gpointer user_data)
{
	gsize *bytes = user_data;
	*bytes += strlen(line);
}

static void
bench_log_line(void)
{
	const guint n = 100000;
	gsize bytes = 0;
	gint64 start;

	sfl_log_setup(SFL_LOG_FORMAT_JSON, SFL_LOG_LEVEL_INFO);
	sfl_log_set_line_func(bench_discard_line, &bytes);
	start = g_get_monotonic_time();
	for (guint i = 0; i < n; i++)
		g_info("pushed batch of %u entries to loki in %u ms", i % 1000, i % 97);
	bench_report("log line (json, info, redacted)", n, g_get_monotonic_time() - start, 0);
	sfl_log_set_line_func(NULL, NULL);
}

int
main(int argc, char **argv)
{
	struct rusage usage = { 0 };

	if (argc < 2) {
		g_printerr("usage: %s config.example.yaml\n", argv[0]);
		return 2;
	}
	bench_config_load(argv[1]);
	bench_redact();
	bench_log_line();
	getrusage(RUSAGE_SELF, &usage);
	g_print("peak RSS: %ld KiB\n", usage.ru_maxrss);
	return 0;
}
