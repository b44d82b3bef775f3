/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTest"

#include "sfl-test-files.h"

gchar *
sfl_test_read_source_file(const gchar *relative)
{
	/* G_TEST_DIST is tests/: the drift tests compare files at the root */
	g_autofree gchar *path = g_test_build_filename(G_TEST_DIST, "..", relative, NULL);
	g_autoptr(GError) error = NULL;
	gchar *contents = NULL;

	g_file_get_contents(path, &contents, NULL, &error);
	g_assert_no_error(error);
	return contents;
}

gchar *
sfl_test_write_file(const gchar *dir, const gchar *name, const gchar *contents)
{
	gchar *path = g_build_filename(dir, name, NULL);
	g_autoptr(GError) error = NULL;

	g_file_set_contents(path, contents, -1, &error);
	g_assert_no_error(error);
	return path;
}
