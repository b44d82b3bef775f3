/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include <glib.h>

/* placeholder: the cases land with issue 7 */
int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	return g_test_run();
}
