/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzConfig"

#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "fuzz-common.h"
#include "sfl-config.h"
#include "sfl-redact.h"

/*
 * libFuzzer target for the YAML configuration loader: parse, ${VAR} interpolation, env
 * overrides, schema load, secret resolution and cross-field validation. A crash, a sanitizer
 * report, a leak or a critical (made fatal below) is a finding.
 */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* a failed contract check inside the loader is a bug, not noise */
	fuzz_init_logging();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/*
	 * fixed, so runs are reproducible: one variable for ${VAR}, one JSON override that
	 * is merged over whatever shape the input gives the service section
	 */
	gchar *envp[] = {
		(gchar *)"SF_CLIENT_ID=x",
		(gchar *)"HOME=/tmp",
		(gchar *)"SF2LOKI_SERVICE__TELEMETRY__HEADERS={\"x-fuzz\":\"1\"}",
		NULL,
	};
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = NULL;

	config = sfl_config_load_from_data((const gchar *)data, size, "fuzz.yaml", envp, &error);
	/* exactly one of the two, whatever the input */
	g_assert((config == NULL) != (error == NULL));
	if (error != NULL)
		g_assert(error->message != NULL && error->message[0] != '\0');

	/* a successful load registers its secrets globally; keep every input independent */
	sfl_redact_clear_secrets();
	return 0;
}
