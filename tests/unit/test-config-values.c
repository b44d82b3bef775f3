/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestConfigValues"

#include "config.h"

#include <string.h>

#include "sfl-config.h"
#include "sfl-error.h"
#include "sfl-redact.h"
#include "sfl-test-files.h"

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

/* --- the platform's default paths (this suite also runs under wine) --------------------- */

/* where a system service keeps its state on the OS this test was built for */
static gchar *
expected_state_file(const gchar *name)
{
#ifdef G_OS_WIN32
	/* the documented %ProgramData%\sf2loki, read from the environment the platform layer
	 * does not consult (it asks SHGetKnownFolderPath), so the two are checked against each
	 * other */
	const gchar *program_data = g_getenv("ProgramData");

	g_assert_nonnull(program_data);
	return g_strdup_printf("%s\\sf2loki\\%s", program_data, name);
#else
	return g_strdup_printf("/var/lib/sf2loki/%s", name);
#endif
}

static SflConfig *
load_with_empty_env(const gchar *yaml, GError **error)
{
	g_auto(GStrv) envp = g_new0(gchar *, 1);

	return sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", envp, error);
}

static void
test_default_state_paths(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = load_with_empty_env(SFL_TEST_YAML_MINIMAL, &error);
	g_autofree gchar *state = expected_state_file("state.json");
	g_autofree gchar *lease = expected_state_file("leader.lease");
	g_autofree gchar *direct = NULL;

	g_assert_no_error(error);
	g_assert_nonnull(config);
	g_assert_cmpstr(config->data.state.file.path, ==, state);
	g_assert_cmpstr(config->data.coordinate.file_lease.path, ==, lease);
	g_assert_true(g_path_is_absolute(config->data.state.file.path));

	direct = sfl_config_default_state_file("x.json", &error);
	g_assert_no_error(error);
	g_assert_true(g_str_has_suffix(direct, G_DIR_SEPARATOR_S "x.json"));
	sfl_redact_clear_secrets();
}

/* a path given in the file wins over the platform's default, on every platform */
static void
test_default_state_path_overridden(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config =
		load_with_empty_env(SFL_TEST_YAML_MINIMAL "state:\n"
							  "  file:\n"
							  "    path: C:\\sf\\st.json\n",
				    &error);

	g_assert_no_error(error);
	g_assert_cmpstr(config->data.state.file.path, ==, "C:\\sf\\st.json");
	sfl_redact_clear_secrets();
}

/* null is not "use the default": the key must go for that, as for any other default */
static void
test_default_state_path_null(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = load_with_empty_env(SFL_TEST_YAML_MINIMAL "state:\n"
										"  file:\n"
										"    path: null\n",
							  &error);

	g_assert_null(config);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "state.file.path: expected a file path, got null"));
	sfl_redact_clear_secrets();
}

/*
 * The example shows this platform's default (so it loads to what it shows) and names the
 * Windows one; the reference, identical wherever it is rendered, names both.
 */
static void
test_default_state_paths_rendered(void)
{
	g_autofree gchar *example = sfl_config_render_example();
	g_autofree gchar *reference = sfl_config_render_reference();
	g_autofree gchar *state = expected_state_file("state.json");
	g_autofree gchar *shown = g_strdup_printf("    path: %s  # Checkpoint file", state);
	const gchar *doc = "On Windows the default is %ProgramData%\\sf2loki\\state.json.";

	g_assert_nonnull(strstr(example, shown));
	g_assert_nonnull(strstr(example, doc));
	g_assert_nonnull(strstr(reference, "| `/var/lib/sf2loki/state.json`; on Windows "
					   "`%ProgramData%\\sf2loki\\state.json` |"));
	g_assert_nonnull(strstr(reference, "| `/var/lib/sf2loki/leader.lease`; on Windows "
					   "`%ProgramData%\\sf2loki\\leader.lease` |"));
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
	g_test_add_func("/sfl/config-values/default-paths/state", test_default_state_paths);
	g_test_add_func("/sfl/config-values/default-paths/overridden",
			test_default_state_path_overridden);
	g_test_add_func("/sfl/config-values/default-paths/null", test_default_state_path_null);
	g_test_add_func("/sfl/config-values/default-paths/rendered",
			test_default_state_paths_rendered);
	return g_test_run();
}
