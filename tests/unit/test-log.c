/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLogTest"

#include "config.h"

#include "sfl-log.h"

#include <jansson.h>

#include "sfl-autocleanups.h"
#include "sfl-redact.h"

/* 2026-11-30T03:00:00.123456Z */
#define SFL_LOG_TEST_NOW ((gint64)1796007600 * G_USEC_PER_SEC + 123456)

typedef struct {
	GMutex mutex;
	GPtrArray *lines; /* (element-type utf8) */
	gint64 now_usec;
} SflLogFixture;

static void
sfl_log_fixture_capture(const gchar *line, gpointer user_data)
{
	SflLogFixture *fixture = user_data;
	g_mutex_lock(&fixture->mutex);
	g_ptr_array_add(fixture->lines, g_strdup(line));
	g_mutex_unlock(&fixture->mutex);
}

static gint64
sfl_log_fixture_clock(gpointer user_data)
{
	SflLogFixture *fixture = user_data;

	return fixture->now_usec;
}

static void
sfl_log_fixture_setup(SflLogFixture *fixture, gconstpointer user_data)
{
	g_mutex_init(&fixture->mutex);
	fixture->lines = g_ptr_array_new_with_free_func(g_free);
	fixture->now_usec = SFL_LOG_TEST_NOW;
	sfl_log_set_line_func(sfl_log_fixture_capture, fixture);
	sfl_log_set_clock(sfl_log_fixture_clock, fixture);
	sfl_log_setup(SFL_LOG_FORMAT_JSON, SFL_LOG_LEVEL_INFO);
}

static void
sfl_log_fixture_teardown(SflLogFixture *fixture, gconstpointer user_data)
{
	/* leftover counts belong to this test; drain them before the capture goes away */
	sfl_log_flush_repeats();
	sfl_log_set_line_func(NULL, NULL);
	sfl_log_set_clock(NULL, NULL);
	sfl_redact_clear_secrets();
	g_ptr_array_unref(fixture->lines);
	g_mutex_clear(&fixture->mutex);
}

static json_t *
sfl_log_test_parse(const gchar *line)
{
	json_error_t error = { 0 };
	json_t *json = json_loads(line, JSON_REJECT_DUPLICATES, &error);

	if (json == NULL)
		g_error("not JSON (%s): %s", error.text, line);
	g_assert_true(json_is_object(json));
	return json;
}

static json_t *
sfl_log_test_line(SflLogFixture *fixture, guint index)
{
	g_assert_cmpuint(index, <, fixture->lines->len);
	return sfl_log_test_parse(g_ptr_array_index(fixture->lines, index));
}

static const gchar *
sfl_log_test_get(json_t *json, const gchar *key)
{
	json_t *value = json_object_get(json, key);

	g_assert_nonnull(value);
	g_assert_true(json_is_string(value));
	return json_string_value(value);
}

static void
sfl_log_test_level_from_string(void)
{
	const struct {
		const gchar *text;
		SflLogLevel level;
	} cases[] = {
		{ "debug", SFL_LOG_LEVEL_DEBUG },	{ "INFO", SFL_LOG_LEVEL_INFO },
		{ "Warning", SFL_LOG_LEVEL_WARNING },	{ "warn", SFL_LOG_LEVEL_WARNING },
		{ "WARN", SFL_LOG_LEVEL_WARNING },	{ "error", SFL_LOG_LEVEL_ERROR },
		{ "critical", SFL_LOG_LEVEL_CRITICAL },
	};
	SflLogLevel level = SFL_LOG_LEVEL_ERROR;
	SflLogFormat format = SFL_LOG_FORMAT_JSON;

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_assert_true(sfl_log_level_from_string(cases[i].text, &level));
		g_assert_cmpint(level, ==, cases[i].level);
	}
	level = SFL_LOG_LEVEL_ERROR;
	g_assert_false(sfl_log_level_from_string("verbose", &level));
	g_assert_false(sfl_log_level_from_string("", &level));
	g_assert_cmpint(level, ==, SFL_LOG_LEVEL_ERROR);

	g_assert_true(sfl_log_format_from_string("JSON", &format));
	g_assert_cmpint(format, ==, SFL_LOG_FORMAT_JSON);
	g_assert_true(sfl_log_format_from_string("logfmt", &format));
	g_assert_cmpint(format, ==, SFL_LOG_FORMAT_LOGFMT);
	g_assert_false(sfl_log_format_from_string("text", &format));
	g_assert_cmpint(format, ==, SFL_LOG_FORMAT_LOGFMT);
}

static void
sfl_log_test_render_json(void)
{
	const GLogField fields[] = {
		{ "MESSAGE", "sink pushed 3 streams", -1 },
		{ "PRIORITY", "6", -1 },
		{ "GLIB_DOMAIN", "SflSinkLoki", -1 },
		{ "CODE_FILE", "sfl-sink-loki.c", -1 },
		{ "CODE_LINE", "42", -1 },
		{ "CODE_FUNC", "sfl_sink_loki_push", -1 },
		{ "SYSLOG_IDENTIFIER", "sf2loki", -1 },
		{ "SFL_SINK", "loki-main", -1 },
		{ "SFL_BYTES", "1234xx", 4 },
		{ NULL, "ignored", -1 },
	};
	const gchar *expected_keys[] = { "timestamp", "level",	   "event",   "logger",
					 "sfl_sink",  "sfl_bytes", "repeated" };
	g_autofree gchar *line = sfl_log_render(SFL_LOG_FORMAT_JSON, G_LOG_LEVEL_INFO, fields,
						G_N_ELEMENTS(fields), SFL_LOG_TEST_NOW, 2);
	g_autoptr(json_t) json = sfl_log_test_parse(line);
	const gchar *key = NULL;
	json_t *value = NULL;
	gsize n_keys = 0;

	g_assert_null(strchr(line, '\n'));
	g_assert_cmpstr(sfl_log_test_get(json, "timestamp"), ==, "2026-11-30T03:00:00.123456Z");
	g_assert_cmpstr(sfl_log_test_get(json, "level"), ==, "info");
	g_assert_cmpstr(sfl_log_test_get(json, "logger"), ==, "SflSinkLoki");
	g_assert_cmpstr(sfl_log_test_get(json, "event"), ==, "sink pushed 3 streams");
	g_assert_cmpstr(sfl_log_test_get(json, "sfl_sink"), ==, "loki-main");
	g_assert_cmpstr(sfl_log_test_get(json, "sfl_bytes"), ==, "1234");
	g_assert_true(json_is_integer(json_object_get(json, "repeated")));
	g_assert_cmpint(json_integer_value(json_object_get(json, "repeated")), ==, 2);

	json_object_foreach (json, key, value) {
		g_assert_cmpuint(n_keys, <, G_N_ELEMENTS(expected_keys));
		g_assert_cmpstr(key, ==, expected_keys[n_keys]);
		n_keys++;
	}
	g_assert_cmpuint(n_keys, ==, G_N_ELEMENTS(expected_keys));
}

static void
sfl_log_test_render_json_defaults(void)
{
	const GLogField fields[] = {
		{ "MESSAGE", "bad \xff byte and \"quotes\"\n", -1 },
		{ "LEVEL", "not the real level", -1 },
	};
	g_autofree gchar *line = sfl_log_render(SFL_LOG_FORMAT_JSON, G_LOG_LEVEL_CRITICAL, fields,
						G_N_ELEMENTS(fields), 0, 0);
	g_autoptr(json_t) json = sfl_log_test_parse(line);

	g_assert_cmpstr(sfl_log_test_get(json, "timestamp"), ==, "1970-01-01T00:00:00Z");
	/* glib criticals are failed checks, reported as errors */
	g_assert_cmpstr(sfl_log_test_get(json, "level"), ==, "error");
	g_assert_cmpstr(sfl_log_test_get(json, "logger"), ==, "sf2loki");
	g_assert_cmpstr(sfl_log_test_get(json, "event"), ==,
			"bad \xef\xbf\xbd byte and \"quotes\"\n");
	g_assert_cmpstr(sfl_log_test_get(json, "field_level"), ==, "not the real level");
	g_assert_null(json_object_get(json, "repeated"));
}

/*
 * Python's own rendering of the original's stamp (tests/sim/iso_timestamps.py) for each of
 * @cases, as a table usec → stamp. With $SFL_LOG_TIMESTAMPS_FILE set (the Windows build, run
 * under wine, which cannot start a Linux python3) the script ran on the build machine with the
 * same cases (tests/meson.build passes them) and this is its output; otherwise it runs now.
 * NULL (after a skip) when python3 is not there.
 */
static GHashTable *
sfl_log_test_python_iso(const gint64 *cases, gsize n_cases)
{
	const gchar *made = g_getenv("SFL_LOG_TIMESTAMPS_FILE");
	g_autoptr(GHashTable) stamps =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *out = NULL;
	g_auto(GStrv) lines = NULL;

	if (made != NULL) {
		g_file_get_contents(made, &out, NULL, &error);
		g_assert_no_error(error);
	} else {
		g_autofree gchar *script =
			g_test_build_filename(G_TEST_DIST, "sim", "iso_timestamps.py", NULL);
		g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
		gint status = 0;

		if (!g_file_test("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE)) {
			g_test_skip("/usr/bin/python3 is needed for the expected timestamps");
			return NULL;
		}
		g_ptr_array_add(argv, g_strdup("/usr/bin/python3"));
		g_ptr_array_add(argv, g_steal_pointer(&script));
		for (gsize i = 0; i < n_cases; i++)
			g_ptr_array_add(argv, g_strdup_printf("%" G_GINT64_FORMAT, cases[i]));
		g_ptr_array_add(argv, NULL);
		g_spawn_sync(NULL, (gchar **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
			     NULL, &status, &error);
		g_assert_no_error(error);
		g_assert_true(g_spawn_check_wait_status(status, NULL));
	}
	lines = g_strsplit(out, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_auto(GStrv) parts = g_strsplit(g_strstrip(lines[i]), " ", 2);

		if (parts[0] == NULL || parts[0][0] == '\0')
			continue;
		g_assert_nonnull(parts[1]);
		g_hash_table_insert(stamps, g_strdup(parts[0]), g_strdup(parts[1]));
	}
	return g_steal_pointer(&stamps);
}

static void
sfl_log_test_render_timestamp(void)
{
	/* the Windows build's oracle gets the same list from tests/meson.build */
	const gint64 cases[] = {
		SFL_LOG_TEST_NOW,
		/* a whole second: isoformat() leaves the fraction out */
		(gint64)1796007600 * G_USEC_PER_SEC,
		(gint64)1796007600 * G_USEC_PER_SEC + 1,
		0,
		/* before the epoch the fraction counts up from the earlier second */
		-1,
	};
	const GLogField fields[] = { { "MESSAGE", "m", -1 } };
	g_autoptr(GHashTable) stamps = sfl_log_test_python_iso(cases, G_N_ELEMENTS(cases));

	if (stamps == NULL)
		return;
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *key = g_strdup_printf("%" G_GINT64_FORMAT, cases[i]);
		const gchar *expected = g_hash_table_lookup(stamps, key);
		g_autofree gchar *json_line =
			sfl_log_render(SFL_LOG_FORMAT_JSON, G_LOG_LEVEL_INFO, fields,
				       G_N_ELEMENTS(fields), cases[i], 0);
		g_autofree gchar *logfmt_line =
			sfl_log_render(SFL_LOG_FORMAT_LOGFMT, G_LOG_LEVEL_INFO, fields,
				       G_N_ELEMENTS(fields), cases[i], 0);
		g_autofree gchar *logfmt_prefix = NULL;
		g_autoptr(json_t) json = sfl_log_test_parse(json_line);

		if (expected == NULL)
			g_error("the oracle has no stamp for %s", key);
		logfmt_prefix = g_strdup_printf("timestamp=%s ", expected);
		g_assert_cmpstr(sfl_log_test_get(json, "timestamp"), ==, expected);
		g_assert_true(g_str_has_prefix(logfmt_line, logfmt_prefix));
	}
}

/* a structured field named like one of the fixed keys must not replace it */
static void
sfl_log_test_render_reserved(void)
{
	const GLogField fields[] = {
		{ "MESSAGE", "the message", -1 }, { "GLIB_DOMAIN", "SflRun", -1 },
		{ "EVENT", "a field", -1 },	  { "LOGGER", "another", -1 },
		{ "TIMESTAMP", "yesterday", -1 }, { "REPEATED", "7", -1 },
	};
	g_autofree gchar *line = sfl_log_render(SFL_LOG_FORMAT_JSON, G_LOG_LEVEL_WARNING, fields,
						G_N_ELEMENTS(fields), 0, 0);
	g_autofree gchar *logfmt = sfl_log_render(SFL_LOG_FORMAT_LOGFMT, G_LOG_LEVEL_WARNING,
						  fields, G_N_ELEMENTS(fields), 0, 0);
	g_autoptr(json_t) json = sfl_log_test_parse(line);

	g_assert_cmpstr(sfl_log_test_get(json, "event"), ==, "the message");
	g_assert_cmpstr(sfl_log_test_get(json, "logger"), ==, "SflRun");
	g_assert_cmpstr(sfl_log_test_get(json, "timestamp"), ==, "1970-01-01T00:00:00Z");
	g_assert_cmpstr(sfl_log_test_get(json, "field_event"), ==, "a field");
	g_assert_cmpstr(sfl_log_test_get(json, "field_logger"), ==, "another");
	g_assert_cmpstr(sfl_log_test_get(json, "field_timestamp"), ==, "yesterday");
	g_assert_cmpstr(sfl_log_test_get(json, "field_repeated"), ==, "7");
	g_assert_null(json_object_get(json, "repeated"));
	g_assert_null(json_object_get(json, "msg"));
	g_assert_null(json_object_get(json, "ts"));
	g_assert_null(json_object_get(json, "domain"));
	g_assert_cmpstr(logfmt, ==,
			"timestamp=1970-01-01T00:00:00Z level=warning event=\"the message\" "
			"logger=SflRun field_event=\"a field\" field_logger=another "
			"field_timestamp=yesterday field_repeated=7");
}

static void
sfl_log_test_render_levels(void)
{
	const struct {
		GLogLevelFlags glib;
		const gchar *name;
	} cases[] = {
		{ G_LOG_LEVEL_DEBUG, "debug" },
		{ G_LOG_LEVEL_INFO, "info" },
		{ G_LOG_LEVEL_MESSAGE, "info" },
		{ G_LOG_LEVEL_WARNING, "warning" },
		{ G_LOG_LEVEL_CRITICAL, "error" },
		{ G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL, "critical" },
	};
	const GLogField fields[] = { { "MESSAGE", "m", -1 } };

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *line = sfl_log_render(SFL_LOG_FORMAT_JSON, cases[i].glib, fields,
							G_N_ELEMENTS(fields), 0, 0);
		g_autoptr(json_t) json = sfl_log_test_parse(line);

		g_assert_cmpstr(sfl_log_test_get(json, "level"), ==, cases[i].name);
	}
}

static void
sfl_log_test_render_logfmt(void)
{
	const GLogField fields[] = {
		{ "GLIB_DOMAIN", "Sfl", -1 },
		{ "MESSAGE", "text with spaces", -1 },
		{ "KEY", "value", -1 },
		{ "EMPTY", "", -1 },
		{ "TRICKY", "a=b \"q\" back\\slash\nnew", -1 },
		{ "WEIRD KEY", "x", -1 },
	};
	g_autofree gchar *line = sfl_log_render(SFL_LOG_FORMAT_LOGFMT, G_LOG_LEVEL_MESSAGE, fields,
						G_N_ELEMENTS(fields), SFL_LOG_TEST_NOW, 3);

	g_assert_cmpstr(line, ==,
			"timestamp=2026-11-30T03:00:00.123456Z level=info "
			"event=\"text with spaces\" logger=Sfl key=value empty=\"\" "
			"tricky=\"a=b \\\"q\\\" back\\\\slash\\nnew\" weird_key=x repeated=3");
}

static void
sfl_log_test_render_redacts(void)
{
	const GLogField fields[] = {
		{ "MESSAGE", "login with password=hunter2 via https://bob:pw@host/", -1 },
		{ "SFL_URL", "https://u:s3@example.com/x", -1 },
		{ "SFL_HEADER", "Authorization: Bearer abc.def", -1 },
		/* the key alone marks the value as secret */
		{ "SFL_ACCESS_TOKEN", "00D!plain", -1 },
		{ "SFL_TOKEN_TTL", "3600", -1 },
	};
	g_autofree gchar *json_line = sfl_log_render(SFL_LOG_FORMAT_JSON, G_LOG_LEVEL_INFO, fields,
						     G_N_ELEMENTS(fields), 0, 0);
	g_autofree gchar *logfmt_line = sfl_log_render(SFL_LOG_FORMAT_LOGFMT, G_LOG_LEVEL_INFO,
						       fields, G_N_ELEMENTS(fields), 0, 0);
	g_autoptr(json_t) json = sfl_log_test_parse(json_line);

	g_assert_cmpstr(sfl_log_test_get(json, "event"), ==,
			"login with password=*** via https://bob:***@host/");
	g_assert_cmpstr(sfl_log_test_get(json, "sfl_url"), ==, "https://u:***@example.com/x");
	g_assert_cmpstr(sfl_log_test_get(json, "sfl_header"), ==, "Authorization: Bearer ***");
	g_assert_cmpstr(sfl_log_test_get(json, "sfl_access_token"), ==, SFL_REDACTED);
	g_assert_cmpstr(sfl_log_test_get(json, "sfl_token_ttl"), ==, "3600");
	g_assert_cmpstr(
		logfmt_line, ==,
		"timestamp=1970-01-01T00:00:00Z level=info "
		"event=\"login with password=*** via https://bob:***@host/\" logger=sf2loki "
		"sfl_url=https://u:***@example.com/x "
		"sfl_header=\"Authorization: Bearer ***\" sfl_access_token=*** "
		"sfl_token_ttl=3600");
}

static void
sfl_log_test_writer_json(SflLogFixture *fixture, gconstpointer user_data)
{
	g_autoptr(json_t) json = NULL;

	g_log_structured("SflSinkLoki", G_LOG_LEVEL_MESSAGE, "SFL_SINK", "loki-main", "MESSAGE",
			 "started %d workers", 4);
	g_assert_cmpuint(fixture->lines->len, ==, 1);
	json = sfl_log_test_line(fixture, 0);
	g_assert_cmpstr(sfl_log_test_get(json, "timestamp"), ==, "2026-11-30T03:00:00.123456Z");
	g_assert_cmpstr(sfl_log_test_get(json, "level"), ==, "info");
	g_assert_cmpstr(sfl_log_test_get(json, "logger"), ==, "SflSinkLoki");
	g_assert_cmpstr(sfl_log_test_get(json, "event"), ==, "started 4 workers");
	g_assert_cmpstr(sfl_log_test_get(json, "sfl_sink"), ==, "loki-main");
	g_assert_null(json_object_get(json, "code_file"));
	g_assert_null(json_object_get(json, "priority"));
}

static void
sfl_log_test_writer_logfmt(SflLogFixture *fixture, gconstpointer user_data)
{
	sfl_log_setup(SFL_LOG_FORMAT_LOGFMT, SFL_LOG_LEVEL_INFO);
	g_info("hello");
	g_assert_cmpuint(fixture->lines->len, ==, 1);
	g_assert_cmpstr(g_ptr_array_index(fixture->lines, 0), ==,
			"timestamp=2026-11-30T03:00:00.123456Z level=info event=hello "
			"logger=SflLogTest");
}

static void
sfl_log_test_filter(SflLogFixture *fixture, gconstpointer user_data)
{
	g_autoptr(json_t) json = NULL;

	/* what G_MESSAGES_DEBUG=all turns on plays no part: only the configured level counts */
	g_log_set_debug_enabled(TRUE);
	g_debug("hidden at info");
	g_log_set_debug_enabled(FALSE);
	g_assert_cmpuint(fixture->lines->len, ==, 0);

	sfl_log_setup(SFL_LOG_FORMAT_JSON, SFL_LOG_LEVEL_DEBUG);
	g_debug("shown at debug");
	g_assert_cmpuint(fixture->lines->len, ==, 1);
	json = sfl_log_test_line(fixture, 0);
	g_assert_cmpstr(sfl_log_test_get(json, "level"), ==, "debug");
	g_assert_cmpstr(sfl_log_test_get(json, "event"), ==, "shown at debug");
}

static void
sfl_log_test_filter_warn(SflLogFixture *fixture, gconstpointer user_data)
{
	SflLogLevel level = SFL_LOG_LEVEL_DEBUG;
	g_autoptr(json_t) json = NULL;

	g_assert_true(sfl_log_level_from_string("warn", &level));
	sfl_log_setup(SFL_LOG_FORMAT_JSON, level);
	g_info("info is below warn");
	g_message("so is message");
	g_warning("warning passes");
	g_assert_cmpuint(fixture->lines->len, ==, 1);
	json = sfl_log_test_line(fixture, 0);
	g_assert_cmpstr(sfl_log_test_get(json, "level"), ==, "warning");
	g_assert_cmpstr(sfl_log_test_get(json, "event"), ==, "warning passes");

	sfl_log_setup(SFL_LOG_FORMAT_JSON, SFL_LOG_LEVEL_CRITICAL);
	g_warning("below critical");
	g_assert_cmpuint(fixture->lines->len, ==, 1);
}

static void
sfl_log_test_writer_redacts(SflLogFixture *fixture, gconstpointer user_data)
{
	g_autoptr(json_t) first = NULL;
	g_autoptr(json_t) second = NULL;
	g_autoptr(json_t) third = NULL;

	sfl_redact_add_secret("00DminteD!token");
	g_log_structured(G_LOG_DOMAIN, G_LOG_LEVEL_INFO, "SFL_URL", "https://u:pw@host/",
			 "CLIENT_SECRET", "plain-value", "MESSAGE",
			 "minted 00DminteD!token for client_secret=abc");
	g_warning("push failed: Authorization: Bearer abc.def");
	g_message("{\"access_token\":\"xyz\",\"token_ttl\":\"1h\"}");

	g_assert_cmpuint(fixture->lines->len, ==, 3);
	for (guint i = 0; i < fixture->lines->len; i++) {
		const gchar *line = g_ptr_array_index(fixture->lines, i);
		const gchar *secrets[] = { "00DminteD", "plain-value", "abc.def", "xyz", ":pw@" };

		/* a raw search over the whole line is the point here: nothing may survive */
		for (gsize j = 0; j < G_N_ELEMENTS(secrets); j++)
			g_assert_null(strstr(line, secrets[j]));
	}
	first = sfl_log_test_line(fixture, 0);
	g_assert_cmpstr(sfl_log_test_get(first, "event"), ==, "minted *** for client_secret=***");
	g_assert_cmpstr(sfl_log_test_get(first, "sfl_url"), ==, "https://u:***@host/");
	g_assert_cmpstr(sfl_log_test_get(first, "client_secret"), ==, SFL_REDACTED);
	second = sfl_log_test_line(fixture, 1);
	g_assert_cmpstr(sfl_log_test_get(second, "event"), ==,
			"push failed: Authorization: Bearer ***");
	third = sfl_log_test_line(fixture, 2);
	g_assert_cmpstr(sfl_log_test_get(third, "event"), ==,
			"{\"access_token\":\"***\",\"token_ttl\":\"1h\"}");
}

static void
sfl_log_test_rate_limit_boundary(SflLogFixture *fixture, gconstpointer user_data)
{
	g_autoptr(json_t) first = NULL;
	g_autoptr(json_t) second = NULL;

	for (guint i = 0; i < 3; i++) {
		g_warning("loki unreachable: connection refused");
		fixture->now_usec += G_USEC_PER_SEC;
	}
	g_assert_cmpuint(fixture->lines->len, ==, 1);
	first = sfl_log_test_line(fixture, 0);
	g_assert_cmpstr(sfl_log_test_get(first, "event"), ==,
			"loki unreachable: connection refused");
	g_assert_null(json_object_get(first, "repeated"));

	/* the window runs from the last print, not from the last suppressed copy */
	fixture->now_usec = SFL_LOG_TEST_NOW + SFL_LOG_REPEAT_WINDOW_USEC - 1;
	g_warning("loki unreachable: connection refused");
	g_assert_cmpuint(fixture->lines->len, ==, 1);

	fixture->now_usec = SFL_LOG_TEST_NOW + SFL_LOG_REPEAT_WINDOW_USEC;
	g_warning("loki unreachable: connection refused");
	g_assert_cmpuint(fixture->lines->len, ==, 2);
	second = sfl_log_test_line(fixture, 1);
	g_assert_cmpstr(sfl_log_test_get(second, "event"), ==,
			"loki unreachable: connection refused");
	g_assert_cmpint(json_integer_value(json_object_get(second, "repeated")), ==, 3);

	/* nothing pending after a print, so a flush stays quiet */
	sfl_log_flush_repeats();
	g_assert_cmpuint(fixture->lines->len, ==, 2);
}

static void
sfl_log_test_rate_limit_window(SflLogFixture *fixture, gconstpointer user_data)
{
	g_autoptr(json_t) second = NULL;

	g_warning("same failure");
	g_warning("same failure");
	g_warning("same failure");
	g_assert_cmpuint(fixture->lines->len, ==, 1);

	fixture->now_usec += SFL_LOG_REPEAT_WINDOW_USEC + 1;
	g_warning("same failure");
	g_assert_cmpuint(fixture->lines->len, ==, 2);
	second = sfl_log_test_line(fixture, 1);
	g_assert_cmpint(json_integer_value(json_object_get(second, "repeated")), ==, 2);
}

static void
sfl_log_test_rate_limit_flush(SflLogFixture *fixture, gconstpointer user_data)
{
	g_autoptr(json_t) flushed_a = NULL;
	g_autoptr(json_t) flushed_b = NULL;

	g_warning("failure a");
	g_warning("failure a");
	g_warning("failure a");
	g_critical("failure b");
	g_critical("failure b");
	g_warning("failure c");
	g_assert_cmpuint(fixture->lines->len, ==, 3);

	fixture->now_usec += 5 * G_USEC_PER_SEC;
	sfl_log_flush_repeats();
	g_assert_cmpuint(fixture->lines->len, ==, 5);
	flushed_a = sfl_log_test_line(fixture, 3);
	g_assert_cmpstr(sfl_log_test_get(flushed_a, "event"), ==, "failure a");
	g_assert_cmpstr(sfl_log_test_get(flushed_a, "level"), ==, "warning");
	g_assert_cmpstr(sfl_log_test_get(flushed_a, "timestamp"), ==,
			"2026-11-30T03:00:05.123456Z");
	g_assert_cmpint(json_integer_value(json_object_get(flushed_a, "repeated")), ==, 2);
	flushed_b = sfl_log_test_line(fixture, 4);
	g_assert_cmpstr(sfl_log_test_get(flushed_b, "event"), ==, "failure b");
	g_assert_cmpstr(sfl_log_test_get(flushed_b, "level"), ==, "error");
	g_assert_cmpint(json_integer_value(json_object_get(flushed_b, "repeated")), ==, 1);

	/* the flush forgot everything, so the next copy prints at once */
	g_warning("failure a");
	g_assert_cmpuint(fixture->lines->len, ==, 6);
}

static void
sfl_log_test_rate_limit_distinct(SflLogFixture *fixture, gconstpointer user_data)
{
	g_autoptr(json_t) other_domain = NULL;

	g_warning("retrying in 1 s");
	g_warning("retrying in 2 s");
	g_log_structured("SflSourceSalesforce", G_LOG_LEVEL_WARNING, "MESSAGE", "retrying in 1 s");
	g_assert_cmpuint(fixture->lines->len, ==, 3);
	other_domain = sfl_log_test_line(fixture, 2);
	g_assert_cmpstr(sfl_log_test_get(other_domain, "logger"), ==, "SflSourceSalesforce");
}

static void
sfl_log_test_rate_limit_redacted(SflLogFixture *fixture, gconstpointer user_data)
{
	/* differing secrets redact to one message, so they must count as one */
	g_warning("auth failed for password=one");
	g_warning("auth failed for password=two");
	g_assert_cmpuint(fixture->lines->len, ==, 1);
}

static void
sfl_log_test_rate_limit_info(SflLogFixture *fixture, gconstpointer user_data)
{
	sfl_log_setup(SFL_LOG_FORMAT_JSON, SFL_LOG_LEVEL_DEBUG);
	for (guint i = 0; i < 5; i++) {
		g_info("batch sent");
		g_message("batch sent");
		g_debug("batch sent");
	}
	g_assert_cmpuint(fixture->lines->len, ==, 15);
	sfl_log_flush_repeats();
	g_assert_cmpuint(fixture->lines->len, ==, 15);
}

static void
sfl_log_test_rate_limit_bounded(SflLogFixture *fixture, gconstpointer user_data)
{
	g_autoptr(json_t) evicted = NULL;

	g_warning("first failure");
	g_warning("first failure");
	g_assert_cmpuint(fixture->lines->len, ==, 1);

	/* flooding with distinct messages pushes the oldest out, printing its count */
	for (guint i = 0; i < 300; i++)
		g_warning("distinct failure %u", i);
	g_assert_cmpuint(fixture->lines->len, ==, 302);
	evicted = sfl_log_test_line(fixture, 256);
	g_assert_cmpstr(sfl_log_test_get(evicted, "event"), ==, "first failure");
	g_assert_cmpint(json_integer_value(json_object_get(evicted, "repeated")), ==, 1);

	/* "first failure" was forgotten, so it prints again */
	g_warning("first failure");
	g_assert_cmpuint(fixture->lines->len, ==, 303);
}

static void
sfl_log_test_fatal_not_suppressed(SflLogFixture *fixture, gconstpointer user_data)
{
	const GLogField fields[] = { { "MESSAGE", "about to abort", -1 } };

	sfl_log_setup(SFL_LOG_FORMAT_JSON, SFL_LOG_LEVEL_CRITICAL);
	/* called directly, as GLib would abort right after a real fatal message */
	for (guint i = 0; i < 2; i++) {
		g_assert_cmpint(sfl_log_writer(G_LOG_LEVEL_WARNING | G_LOG_FLAG_FATAL, fields,
					       G_N_ELEMENTS(fields), NULL),
				==, G_LOG_WRITER_HANDLED);
	}
	g_assert_cmpuint(fixture->lines->len, ==, 2);
}

static gpointer
sfl_log_test_thread(gpointer user_data)
{
	for (guint i = 0; i < 200; i++) {
		g_info("worker line %u", i);
		g_warning("worker warning");
	}
	return NULL;
}

static void
sfl_log_test_threads(SflLogFixture *fixture, gconstpointer user_data)
{
	GThread *threads[4] = { NULL };

	for (guint i = 0; i < G_N_ELEMENTS(threads); i++)
		threads[i] = g_thread_new("sfl-log-test", sfl_log_test_thread, NULL);
	for (guint i = 0; i < G_N_ELEMENTS(threads); i++)
		g_thread_join(threads[i]);
	/* every info line, and the shared warning once */
	g_assert_cmpuint(fixture->lines->len, ==, 4 * 200 + 1);
	sfl_log_flush_repeats();
	g_assert_cmpuint(fixture->lines->len, ==, 4 * 200 + 2);
}

static void
sfl_log_test_writer_stderr(void)
{
	const GLogField fields[] = { { "MESSAGE", "to stderr with password=hunter2", -1 } };

	/* no setup and no capture: the defaults must hold on their own */
	if (g_test_subprocess()) {
		sfl_log_set_clock(NULL, NULL);
		sfl_log_writer(G_LOG_LEVEL_DEBUG, fields, G_N_ELEMENTS(fields), NULL);
		sfl_log_writer(G_LOG_LEVEL_INFO, fields, G_N_ELEMENTS(fields), NULL);
		return;
	}
	g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
	g_test_trap_assert_passed();
	g_test_trap_assert_stdout("");
	g_test_trap_assert_stderr(
		"{\"timestamp\":\"*\",\"level\":\"info\","
		"\"event\":\"to stderr with password=***\",\"logger\":\"sf2loki\"}\n");
}

#define SFL_LOG_ADD(path, func)                                                                    \
	g_test_add(path, SflLogFixture, NULL, sfl_log_fixture_setup, func, sfl_log_fixture_teardown)

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/*
	 * g_test_init() makes warnings and criticals fatal for the old g_log() API; these tests
	 * log them on purpose and must not abort, whichever API the macros expand to
	 */
	g_log_set_always_fatal(G_LOG_FATAL_MASK);
	/* likewise the writer's own G_DEBUG=fatal-criticals check, which is read on first use */
	g_unsetenv("G_DEBUG");

	g_test_add_func("/sfl/log/level-from-string", sfl_log_test_level_from_string);
	g_test_add_func("/sfl/log/render/json", sfl_log_test_render_json);
	g_test_add_func("/sfl/log/render/json-defaults", sfl_log_test_render_json_defaults);
	g_test_add_func("/sfl/log/render/timestamp", sfl_log_test_render_timestamp);
	g_test_add_func("/sfl/log/render/reserved", sfl_log_test_render_reserved);
	g_test_add_func("/sfl/log/render/levels", sfl_log_test_render_levels);
	g_test_add_func("/sfl/log/render/logfmt", sfl_log_test_render_logfmt);
	g_test_add_func("/sfl/log/render/redacts", sfl_log_test_render_redacts);
	g_test_add_func("/sfl/log/writer/stderr", sfl_log_test_writer_stderr);
	SFL_LOG_ADD("/sfl/log/writer/json", sfl_log_test_writer_json);
	SFL_LOG_ADD("/sfl/log/writer/logfmt", sfl_log_test_writer_logfmt);
	SFL_LOG_ADD("/sfl/log/writer/redacts", sfl_log_test_writer_redacts);
	SFL_LOG_ADD("/sfl/log/filter/debug", sfl_log_test_filter);
	SFL_LOG_ADD("/sfl/log/filter/warn", sfl_log_test_filter_warn);
	SFL_LOG_ADD("/sfl/log/rate-limit/window", sfl_log_test_rate_limit_window);
	SFL_LOG_ADD("/sfl/log/rate-limit/boundary", sfl_log_test_rate_limit_boundary);
	SFL_LOG_ADD("/sfl/log/rate-limit/flush", sfl_log_test_rate_limit_flush);
	SFL_LOG_ADD("/sfl/log/rate-limit/distinct", sfl_log_test_rate_limit_distinct);
	SFL_LOG_ADD("/sfl/log/rate-limit/redacted", sfl_log_test_rate_limit_redacted);
	SFL_LOG_ADD("/sfl/log/rate-limit/info", sfl_log_test_rate_limit_info);
	SFL_LOG_ADD("/sfl/log/rate-limit/bounded", sfl_log_test_rate_limit_bounded);
	SFL_LOG_ADD("/sfl/log/rate-limit/fatal", sfl_log_test_fatal_not_suppressed);
	SFL_LOG_ADD("/sfl/log/threads", sfl_log_test_threads);

	return g_test_run();
}
