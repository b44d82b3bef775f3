/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzAvro"

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "sfl-autocleanups.h"
#include "sfl-avro.h"
#include "sfl-error.h"
#include "sfl-record.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * One writer schema with every Avro type the decoder handles: unions with null, a CDC
 * ChangeEventHeader (so bitmap strings reach the field-name expansion), compound fields, a
 * recursive record, arrays, maps, an enum, fixed, bytes, float and double. The seed corpus
 * (tests/fuzz/corpus/avro) holds datums python3-avro encoded with this exact text.
 */
static const gchar fuzz_avro_schema[] =
	"{\"type\": \"record\", \"name\": \"FuzzChangeEvent\", \"namespace\": \"test.fuzz\", "
	"\"fields\": ["
	"{\"name\": \"ChangeEventHeader\", \"type\": {\"type\": \"record\", \"name\": "
	"\"ChangeEventHeader\", \"fields\": ["
	"{\"name\": \"entityName\", \"type\": \"string\"}, "
	"{\"name\": \"changeType\", \"type\": {\"type\": \"enum\", \"name\": \"ChangeType\", "
	"\"symbols\": [\"CREATE\", \"UPDATE\", \"DELETE\"]}}, "
	"{\"name\": \"changedFields\", \"type\": {\"type\": \"array\", \"items\": \"string\"}}, "
	"{\"name\": \"nulledFields\", \"type\": [\"null\", {\"type\": \"array\", \"items\": "
	"\"string\"}]}, "
	"{\"name\": \"diffFields\", \"type\": {\"type\": \"array\", \"items\": \"string\"}}]}}, "
	"{\"name\": \"Name\", \"type\": [\"null\", \"string\"]}, "
	"{\"name\": \"Address\", \"type\": [\"null\", \"string\", {\"type\": \"record\", "
	"\"name\": \"Address\", \"fields\": [{\"name\": \"Street\", \"type\": [\"null\", "
	"\"string\"]}, {\"name\": \"City\", \"type\": [\"null\", \"string\"]}]}]}, "
	"{\"name\": \"Revenue\", \"type\": [\"null\", \"double\"]}, "
	"{\"name\": \"Ratio\", \"type\": \"float\"}, "
	"{\"name\": \"Count\", \"type\": [\"null\", \"int\", \"long\"]}, "
	"{\"name\": \"Active\", \"type\": \"boolean\"}, "
	"{\"name\": \"Token\", \"type\": [\"null\", \"bytes\"]}, "
	"{\"name\": \"Digest\", \"type\": {\"type\": \"fixed\", \"name\": \"Digest\", \"size\": "
	"4}}, "
	"{\"name\": \"Tags\", \"type\": {\"type\": \"map\", \"values\": [\"null\", \"string\"]}}, "
	"{\"name\": \"Empty\", \"type\": {\"type\": \"array\", \"items\": \"null\"}}, "
	"{\"name\": \"Chain\", \"type\": [\"null\", {\"type\": \"record\", \"name\": \"Node\", "
	"\"fields\": [{\"name\": \"value\", \"type\": \"long\"}, {\"name\": \"next\", \"type\": "
	"[\"null\", \"Node\"]}]}]}"
	"]}";

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init_logging();
	return 0;
}

/*
 * Any payload either renders a whole JSON line, ASCII only as json.dumps writes it with
 * ensure_ascii, identically on every run, or fails with SFL_ERROR_CORRUPT leaving the output
 * as it was. The typed decode into an SflRecord accepts exactly the same payloads (bar values
 * jansson cannot hold) and renders the same line. ASan, run on an exact-size copy, catches any
 * read past the payload.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static SflAvroSchema *schema;
	g_autofree guint8 *copy = g_memdup2(data, MAX(size, 1));
	g_autoptr(GString) out = g_string_new("#");
	g_autoptr(GString) again = g_string_new("#");
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) error_again = NULL;
	g_autoptr(GError) record_error = NULL;
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autoptr(json_t) holder = NULL;
	g_autoptr(GString) line = g_string_new(NULL);
	gboolean ok;
	gboolean record_ok;

	if (schema == NULL) {
		schema = sfl_avro_schema_new(fuzz_avro_schema, &error);
		if (schema == NULL)
			g_error("fuzz schema: %s", error->message);
	}
	ok = sfl_avro_render_json(schema, copy, size, out, &error);
	if (ok != sfl_avro_render_json(schema, copy, size, again, &error_again))
		g_error("two runs disagree");
	record_ok = sfl_avro_decode_record(schema, copy, size, record, &holder, &record_error);
	if (!ok) {
		if (record_ok)
			g_error("the record decode took what the renderer refused: %s",
				error->message);
		if (!g_error_matches(error, SFL_ERROR, SFL_ERROR_CORRUPT))
			g_error("failed without a CORRUPT error");
		if (!g_str_equal(error->message, error_again->message))
			g_error("errors differ: %s / %s", error->message, error_again->message);
		if (!g_str_equal(out->str, "#") || !g_str_equal(again->str, "#"))
			g_error("a failed render changed the output: %s", out->str);
		return 0;
	}
	if (!g_str_equal(out->str, again->str))
		g_error("renders differ:\n%s\n%s", out->str, again->str);
	if (out->len < 3 || out->str[1] != '{' || out->str[out->len - 1] != '}')
		g_error("not an object: %s", out->str);
	for (gsize i = 0; i < out->len; i++) {
		if ((guchar)out->str[i] >= 0x80 || out->str[i] == '\0')
			g_error("byte %" G_GSIZE_FORMAT " of the line is 0x%02x", i,
				(guchar)out->str[i]);
	}
	if (!record_ok) {
		if (strstr(record_error->message, "cannot be held") == NULL)
			g_error("the record decode refused a line the renderer wrote: %s",
				record_error->message);
		return 0;
	}
	/* the typed decode, rendered by sfl-record, is the same line */
	sfl_record_append_json(record, line);
	if (!g_str_equal(line->str, out->str + 1))
		g_error("record line differs:\n%s\n%s", line->str, out->str + 1);
	return 0;
}
