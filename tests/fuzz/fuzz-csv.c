/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzCsv"

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "sfl-csv.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
	GString *dump;
	gboolean stop_each;
} FuzzCsvCollect;

static gboolean
fuzz_csv_record_cb(const SflCsvRecord *record, gpointer user_data)
{
	FuzzCsvCollect *c = user_data;

	if (record->n_fields == 0)
		g_error("record at byte %" G_GUINT64_FORMAT " has no fields", record->offset);
	g_string_append_printf(c->dump, "%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ":%u\n",
			       record->line, record->offset, record->n_fields);
	for (guint i = 0; i < record->n_fields; i++) {
		const gchar *f = record->fields[i];
		if (strlen(f) != record->lens[i])
			g_error("field %u: length %" G_GSIZE_FORMAT ", strlen %" G_GSIZE_FORMAT, i,
				record->lens[i], strlen(f));
		if (!g_utf8_validate(f, (gssize)record->lens[i], NULL))
			g_error("field %u is not valid UTF-8", i);
		g_string_append_printf(c->dump, "%" G_GSIZE_FORMAT ":", record->lens[i]);
		g_string_append_len(c->dump, f, (gssize)record->lens[i]);
		g_string_append_c(c->dump, '\n');
	}
	return !c->stop_each;
}

/*
 * Feeds data in pieces cut at the given points; with stop_each the callback stops after every
 * record and the parse is resumed with empty feeds. Returns the records and the outcome.
 */
static gchar *
fuzz_csv_parse(const gchar *data, gsize size, gsize max_field, const gsize *cuts, guint n_cuts,
	       gboolean stop_each)
{
	g_autoptr(SflCsvParser) parser = sfl_csv_parser_new(max_field);
	g_autoptr(GError) error = NULL;
	FuzzCsvCollect c = { g_string_new(NULL), stop_each };
	gsize from = 0;
	gboolean ok = TRUE;
	guint64 guard = 0;

	for (guint i = 0; i <= n_cuts && ok; i++) {
		gsize to = i < n_cuts ? cuts[i] : size;
		ok = sfl_csv_parser_feed(parser, data + from, to - from, fuzz_csv_record_cb, &c,
					 &error);
		while (!ok && error == NULL) {
			if (++guard > size + 2)
				g_error("a stopped feed does not make progress");
			ok = sfl_csv_parser_feed(parser, NULL, 0, fuzz_csv_record_cb, &c, &error);
		}
		from = to;
	}
	while (ok) {
		if (sfl_csv_parser_finish(parser, fuzz_csv_record_cb, &c, &error))
			break;
		if (error != NULL)
			ok = FALSE;
		else if (++guard > size + 2)
			g_error("a stopped finish does not make progress");
	}
	if (ok) {
		if (sfl_csv_parser_get_bytes(parser) != size)
			g_error("parsed %" G_GUINT64_FORMAT " of %" G_GSIZE_FORMAT " bytes",
				sfl_csv_parser_get_bytes(parser), size);
		g_string_append(c.dump, "OK\n");
	} else {
		g_string_append_printf(c.dump, "ERROR %s\n", error->message);
	}
	return g_string_free(c.dump, FALSE);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init_logging();
	return 0;
}

/*
 * The CSV parser reads whatever Salesforce (or a proxy in between) sends. Any input must give
 * valid, NUL-free UTF-8 fields or an error, and where the chunks are cut, or whether the
 * callback pauses the parse, must not change the records or the outcome.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const gchar *text = (const gchar *)data;
	g_autofree gchar *whole = NULL;
	g_autofree gchar *split = NULL;
	g_autofree gchar *paused = NULL;
	gsize max_field;
	gsize cuts[3];
	guint32 h = 2166136261u;

	if (size < 1)
		return 0;
	/* a small limit now and then, so the too-long error is reached */
	max_field = data[0] < 32 ? (gsize)data[0] + 1 : SFL_CSV_DEFAULT_MAX_FIELD;
	for (gsize i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	cuts[0] = h % (size + 1);
	cuts[1] = cuts[0] + (h >> 16) % (size - cuts[0] + 1);
	cuts[2] = cuts[1] + (cuts[1] < size ? 1 : 0);

	whole = fuzz_csv_parse(text, size, max_field, NULL, 0, FALSE);
	split = fuzz_csv_parse(text, size, max_field, cuts, 3, FALSE);
	if (strcmp(whole, split) != 0)
		g_error("cut at %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT
			" differs:\n%s\n---\n%s",
			cuts[0], cuts[1], cuts[2], whole, split);
	paused = fuzz_csv_parse(text, size, max_field, cuts, 1, TRUE);
	if (strcmp(whole, paused) != 0)
		g_error("pausing after each record differs:\n%s\n---\n%s", whole, paused);
	return 0;
}
