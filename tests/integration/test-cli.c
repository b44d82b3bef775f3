/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestCli"

#include <glib.h>

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	return g_test_run();
}
