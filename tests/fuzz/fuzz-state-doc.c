/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzStateDoc"

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "sfl-state-doc.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init_logging();
	return 0;
}

/*
 * The checkpoint document parser reads whatever is on disk (or in a bucket). Any input must
 * either parse or fail with an error; what parses must serialise and parse back to the same
 * document, which is what lets the file move between the Python and C implementations.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = NULL;
	g_autoptr(SflStateDoc) back = NULL;
	g_autofree gchar *text = NULL;
	gsize len = 0;
	guint64 epoch = 0;

	doc = sfl_state_doc_parse((const gchar *)data, size, "fuzz.json", &error);
	if (doc == NULL) {
		g_assert(error != NULL);
		return 0;
	}
	g_clear_error(&error);
	(void)sfl_state_doc_get_epoch(doc, &epoch, &error);
	g_clear_error(&error);
	text = sfl_state_doc_serialize(doc, &len);
	back = sfl_state_doc_parse(text, len, "roundtrip", &error);
	if (back == NULL || !sfl_state_doc_equal(doc, back))
		g_error("serialised document does not parse back: %s",
			error != NULL ? error->message : "different contents");
	return 0;
}
