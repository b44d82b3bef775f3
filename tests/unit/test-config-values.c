/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestConfigValues"

#include "config.h"

#include <string.h>

#include "sfl-config-schema.h"
#include "sfl-error.h"

#define SEC    G_GINT64_CONSTANT(1000000)
#define MINUTE (60 * SEC)
#define HOUR   (60 * MINUTE)
#define DAY    (24 * HOUR)

static void
test_duration_parse_good(void)
{
	const struct {
		const gchar *text;
		SflDuration usec;
	} cases[] = {
		{ "500ms", 500000 },
		{ "30s", 30 * SEC },
		{ "5m", 5 * MINUTE },
		{ "1h", HOUR },
		{ "1h30m", HOUR + 30 * MINUTE },
		{ "1.5h", HOUR + 30 * MINUTE },
		{ "2d", 2 * DAY },
		{ "1w", 7 * DAY },
		{ "1m30s500ms", MINUTE + 30 * SEC + 500000 },
		{ "250us", 250 },
		{ "PT5M", 5 * MINUTE },
		{ "PT1H30M", HOUR + 30 * MINUTE },
		{ "P1D", DAY },
		{ "P1DT2H", DAY + 2 * HOUR },
		{ "P2W", 14 * DAY },
		{ "PT0.5S", 500000 },
		{ "01:30:00", HOUR + 30 * MINUTE },
		{ "00:00:02.5", 2500000 },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		SflDuration d = -1;
		g_autoptr(GError) error = NULL;
		g_assert_true(sfl_duration_parse(cases[i].text, &d, &error));
		g_assert_no_error(error);
		g_assert_cmpint(d, ==, cases[i].usec);
	}
}

static void
test_duration_parse_bad(void)
{
	const gchar *bad[] = { "",    "30",	  "abc",  "5 m",
			       "-5s", "1y",	  "P1M",  "PT",
			       "P",   "1h30",	  "h",	  "1.2.3s",
			       "10x", "25:61:00", "1e3s", "1000000000000000000w" };
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		SflDuration d = 0;
		g_autoptr(GError) error = NULL;
		g_assert_false(sfl_duration_parse(bad[i], &d, &error));
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_assert_nonnull(strstr(error->message, "invalid duration"));
	}
}

static void
test_duration_format(void)
{
	const struct {
		SflDuration usec;
		const gchar *text;
	} cases[] = {
		{ 0, "0s" },	   { DAY, "1d" },	{ 24 * HOUR, "1d" }, { 90 * MINUTE, "90m" },
		{ 7 * DAY, "1w" }, { 500000, "500ms" }, { 30 * SEC, "30s" }, { 250, "250us" },
		{ HOUR, "1h" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *text = sfl_duration_format(cases[i].usec);
		g_assert_cmpstr(text, ==, cases[i].text);
	}
}

static void
test_duration_roundtrip(void)
{
	/* what we render must parse back to the same value */
	const SflDuration values[] = {
		1, 999, 1000, SEC, 61 * SEC, 36 * HOUR, 3 * DAY, 5 * 7 * DAY
	};
	for (gsize i = 0; i < G_N_ELEMENTS(values); i++) {
		g_autofree gchar *text = sfl_duration_format(values[i]);
		SflDuration back = -1;
		g_assert_true(sfl_duration_parse(text, &back, NULL));
		g_assert_cmpint(back, ==, values[i]);
	}
}

static void
test_size_parse(void)
{
	const struct {
		const gchar *text;
		gint64 bytes;
	} cases[] = {
		{ "512", 512 },
		{ "256KiB", 256 * 1024 },
		{ "4MiB", 4 * 1024 * 1024 },
		{ "1GiB", G_GINT64_CONSTANT(1024) * 1024 * 1024 },
		{ "1GB", 1000000000 },
		{ "500kB", 500000 },
		{ "1.5MiB", 1572864 },
		{ "10 MiB", 10 * 1024 * 1024 },
		{ "7b", 7 },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		gint64 v = -1;
		g_autoptr(GError) error = NULL;
		g_assert_true(sfl_size_parse(cases[i].text, &v, &error));
		g_assert_no_error(error);
		g_assert_cmpint(v, ==, cases[i].bytes);
	}
}

static void
test_size_parse_bad(void)
{
	const gchar *bad[] = { "", "MiB", "4XB", "-1", "1.5", "4 M iB", "99999999999TiB" };
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		gint64 v = 0;
		g_autoptr(GError) error = NULL;
		g_assert_false(sfl_size_parse(bad[i], &v, &error));
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_assert_nonnull(strstr(error->message, "invalid size"));
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/config-values/duration/parse", test_duration_parse_good);
	g_test_add_func("/sfl/config-values/duration/parse-bad", test_duration_parse_bad);
	g_test_add_func("/sfl/config-values/duration/format", test_duration_format);
	g_test_add_func("/sfl/config-values/duration/roundtrip", test_duration_roundtrip);
	g_test_add_func("/sfl/config-values/size/parse", test_size_parse);
	g_test_add_func("/sfl/config-values/size/parse-bad", test_size_parse_bad);
	return g_test_run();
}
