/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestAvro"

#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "sfl-autocleanups.h"
#include "sfl-avro.h"
#include "sfl-error.h"
#include "sfl-record.h"

/*
 * The vectors come from tests/sim/avro_vectors.py: payloads encoded by python3-avro, expected
 * lines from python3-avro's decoder and json.dumps(event, sort_keys=True, default=str) as the
 * original writes them (bytes and fixed as Python's str(), b'...'), CDC field names from
 * the Salesforce samples' rule written out in Python.
 */
/*
 * The JSON output of tests/sim/avro_vectors.py with @arg/@value (NULL: the vector cases). With
 * $SFL_AVRO_VECTORS_DIR set (the Windows build, whose tests run under wine, which cannot start
 * a Linux python3) the same script's output was made on the build machine into
 * avro-vectors[-ARG-VALUE].json there; otherwise it runs now, as a child.
 */
static json_t *
run_vectors_script(const gchar *arg, const gchar *value)
{
	g_autofree gchar *script =
		g_test_build_filename(G_TEST_DIST, "sim", "avro_vectors.py", NULL);
	const gchar *made_dir = g_getenv("SFL_AVRO_VECTORS_DIR");
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_autoptr(GError) error = NULL;
	const gchar *argv[] = { "/usr/bin/python3", script, arg, value, NULL };
	json_error_t jerr;
	json_t *doc;
	gint status = 0;

	if (made_dir != NULL) {
		g_autofree gchar *name =
			arg == NULL ? g_strdup("avro-vectors.json")
				    : g_strdup_printf("avro-vectors-%s-%s.json", arg + 2, value);
		g_autofree gchar *path = g_build_filename(made_dir, name, NULL);

		g_file_get_contents(path, &out, NULL, &error);
		g_assert_no_error(error);
	} else {
		g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
			     &status, &error);
		g_assert_no_error(error);
		if (!g_spawn_check_wait_status(status, NULL))
			g_error("%s failed: %s", script, err);
	}
	doc = json_loads(out, 0, &jerr);
	if (doc == NULL)
		g_error("%s printed bad JSON: %s", script, jerr.text);
	return doc;
}

static json_t *
load_cases(void)
{
	static json_t *cases;
	json_t *doc;

	if (cases != NULL)
		return cases;
	doc = run_vectors_script(NULL, NULL);
	cases = json_incref(json_object_get(doc, "cases"));
	json_decref(doc);
	g_assert_true(json_is_array(cases));
	g_assert_cmpuint(json_array_size(cases), >=, 40);
	return cases;
}

static GBytes *
case_payload(json_t *c)
{
	const gchar *hex = json_string_value(json_object_get(c, "payload_hex"));
	gsize n = strlen(hex) / 2;
	/* its own allocation of exactly n bytes, so ASan sees any read past the end */
	guint8 *buf = g_malloc(MAX(n, 1));

	for (gsize i = 0; i < n; i++)
		buf[i] = (guint8)(g_ascii_xdigit_value(hex[2 * i]) << 4 |
				  g_ascii_xdigit_value(hex[2 * i + 1]));
	return g_bytes_new_take(buf, n);
}

static SflAvroSchema *
case_schema_full(json_t *c, SflAvroSchemaFlags flags)
{
	g_autoptr(GError) error = NULL;
	SflAvroSchema *schema = sfl_avro_schema_new_full(
		json_string_value(json_object_get(c, "schema")), flags, &error);

	g_assert_no_error(error);
	g_assert_nonnull(schema);
	return schema;
}

static SflAvroSchema *
case_schema(json_t *c)
{
	return case_schema_full(c, SFL_AVRO_SCHEMA_DEFAULT);
}

static json_t *
find_case(const gchar *name)
{
	json_t *cases = load_cases();
	gsize i;
	json_t *c;

	json_array_foreach (cases, i, c) {
		if (g_strcmp0(json_string_value(json_object_get(c, "name")), name) == 0)
			return c;
	}
	g_error("no vector called %s", name);
}

/* the prefix already in @out must survive both outcomes */
#define PREFIX "line before|"

static void
test_avro_vectors(void)
{
	json_t *cases = load_cases();
	guint good = 0;
	guint bad = 0;
	guint hostile = 0;
	gsize i;
	json_t *c;

	json_array_foreach (cases, i, c) {
		const gchar *name = json_string_value(json_object_get(c, "name"));

		if (g_str_has_prefix(name, "bytes-") || g_str_has_prefix(name, "fixed-") ||
		    g_str_has_prefix(name, "scalars-"))
			hostile++;
	}
	json_array_foreach (cases, i, c) {
		const gchar *name = json_string_value(json_object_get(c, "name"));
		const gchar *expected = json_string_value(json_object_get(c, "expected"));
		const gchar *want_error = json_string_value(json_object_get(c, "error"));
		g_autoptr(SflAvroSchema) schema = case_schema(c);
		g_autoptr(GBytes) payload = case_payload(c);
		g_autoptr(GString) out = g_string_new(PREFIX);
		g_autoptr(GError) error = NULL;
		gsize len = 0;
		const guint8 *data = g_bytes_get_data(payload, &len);
		gboolean ok = sfl_avro_render_json(schema, data, len, out, &error);

		g_test_message("vector %s", name);
		if (expected != NULL) {
			g_assert_no_error(error);
			g_assert_true(ok);
			g_assert_true(g_str_has_prefix(out->str, PREFIX));
			g_assert_cmpstr(out->str + strlen(PREFIX), ==, expected);
			good++;
		} else {
			g_assert_nonnull(want_error);
			g_assert_false(ok);
			g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
			if (strstr(error->message, want_error) == NULL)
				g_error("vector %s: error \"%s\" does not mention \"%s\"", name,
					error->message, want_error);
			g_assert_cmpstr(out->str, ==, PREFIX);
			bad++;
		}
	}
	g_assert_cmpuint(good, >=, 20);
	g_assert_cmpuint(bad, >=, 20);
	/* the table of hostile bytes, fixed, floats, longs and strings is there */
	g_assert_cmpuint(hostile, >=, 40);
}

/* a datum cut anywhere short of its end cannot decode: each read it needs is bounded */
static void
test_avro_truncated_prefixes(void)
{
	json_t *cases = load_cases();
	g_autoptr(SflRecord) record = sfl_record_new();
	gsize i;
	json_t *c;

	json_array_foreach (cases, i, c) {
		g_autoptr(SflAvroSchema) schema = NULL;
		g_autoptr(GBytes) payload = NULL;
		gsize len = 0;
		const guint8 *data;

		if (json_object_get(c, "expected") == NULL)
			continue;
		schema = case_schema(c);
		payload = case_payload(c);
		data = g_bytes_get_data(payload, &len);
		for (gsize cut = 0; cut < len; cut++) {
			g_autofree guint8 *copy = g_memdup2(data, MAX(cut, 1));
			g_autoptr(GString) out = g_string_new(PREFIX);
			g_autoptr(GError) error = NULL;
			json_t *holder = NULL;

			if (sfl_avro_render_json(schema, copy, cut, out, &error))
				g_error("vector %s cut to %" G_GSIZE_FORMAT " bytes decoded: %s",
					json_string_value(json_object_get(c, "name")), cut,
					out->str);
			g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
			g_assert_cmpstr(out->str, ==, PREFIX);
			g_clear_error(&error);
			if (sfl_avro_decode_record(schema, copy, cut, record, &holder, &error))
				g_error("vector %s cut to %" G_GSIZE_FORMAT " bytes decoded",
					json_string_value(json_object_get(c, "name")), cut);
			g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
			g_assert_null(holder);
			sfl_record_reset(record);
		}
	}
}

/* docs/internals/wire-notes.md "Change Data Capture bitmap fields": 0x650004E0 = bits 5 6 7 10 24
 * 26 29 30; 4-0x10 = field 4 child 4; 7-0x06 = field 7 children 1 and 2, mapped onto the
 * AccountChangeEvent-like schema of the vectors. The original's line carries only the raw bitmaps;
 * the names go beside them only with SFL_AVRO_SCHEMA_CDC_NAMES_IN_LINE, and to metadata through
 * append_cdc_names(). */
static void
test_avro_cdc_worked_example(void)
{
	static const gchar *const want[] = {
		"Phone",
		"Fax",
		"ShippingAddress",
		"Sic",
		"Jigsaw",
		"CleanStatus",
		"Tradestyle",
		"NaicsCode",
		"BillingAddress.Country",
		"ShippingAddress.City",
		"ShippingAddress.State",
	};
	json_t *c = find_case("cdc-worked-example");
	g_autoptr(SflAvroSchema) plain = case_schema(c);
	g_autoptr(SflAvroSchema) schema = case_schema_full(c, SFL_AVRO_SCHEMA_CDC_NAMES_IN_LINE);
	g_autoptr(GBytes) payload = case_payload(c);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GString) joined = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) line = NULL;
	g_autoptr(json_t) original = NULL;
	json_t *header;
	json_t *names;
	json_t *raw;
	gsize len = 0;
	const guint8 *data = g_bytes_get_data(payload, &len);

	g_assert_true(sfl_avro_render_json(plain, data, len, out, &error));
	g_assert_no_error(error);
	original = json_loads(out->str, 0, NULL);
	header = json_object_get(original, "ChangeEventHeader");
	g_assert_true(json_is_array(json_object_get(header, "changedFields")));
	g_assert_null(json_object_get(header, "changedFieldNames"));
	g_assert_null(json_object_get(header, "nulledFieldNames"));
	g_assert_null(json_object_get(header, "diffFieldNames"));
	g_assert_true(sfl_avro_schema_append_cdc_names(
		plain, json_object_get(header, "changedFields"), joined));
	{
		g_autofree gchar *want_joined = g_strjoinv(",", (gchar **)want);
		g_assert_cmpstr(joined->str, ==, want_joined);
	}
	g_string_truncate(joined, 0);
	g_assert_false(sfl_avro_schema_append_cdc_names(
		plain, json_object_get(header, "nulledFields"), joined));
	g_assert_false(sfl_avro_schema_append_cdc_names(plain, NULL, joined));
	g_assert_cmpstr(joined->str, ==, "");

	g_string_truncate(out, 0);
	g_assert_true(sfl_avro_render_json(schema, data, len, out, &error));
	g_assert_no_error(error);
	line = json_loads(out->str, 0, NULL);
	g_assert_nonnull(line);
	header = json_object_get(line, "ChangeEventHeader");
	names = json_object_get(header, "changedFieldNames");
	g_assert_cmpuint(json_array_size(names), ==, G_N_ELEMENTS(want));
	for (guint i = 0; i < G_N_ELEMENTS(want); i++)
		g_assert_cmpstr(json_string_value(json_array_get(names, i)), ==, want[i]);
	/* the raw bitmaps stay beside the names */
	raw = json_object_get(header, "changedFields");
	g_assert_cmpuint(json_array_size(raw), ==, 3);
	g_assert_cmpstr(json_string_value(json_array_get(raw, 0)), ==, "0x650004E0");
	g_assert_cmpuint(json_array_size(json_object_get(header, "nulledFieldNames")), ==, 0);
	g_assert_true(json_is_array(json_object_get(header, "diffFieldNames")));
}

/* docs/internals/wire-notes.md "Avro payloads": {a: long 27, b: string "foo"} is 36 06 66 6f 6f;
 * trailing bytes are ignored as the original's schemaless reader ignores them */
static void
test_avro_spec_vector(void)
{
	static const guint8 payload[] = { 0x36, 0x06, 0x66, 0x6f, 0x6f, 0xff };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflAvroSchema) schema = sfl_avro_schema_new(
		"{\"type\": \"record\", \"name\": \"T\", \"fields\": ["
		"{\"name\": \"b\", \"type\": \"string\"}, {\"name\": \"a\", \"type\": \"long\"}]}",
		&error);
	g_autoptr(SflAvroSchema) spec = sfl_avro_schema_new(
		"{\"type\": \"record\", \"name\": \"T\", \"fields\": ["
		"{\"name\": \"a\", \"type\": \"long\"}, {\"name\": \"b\", \"type\": \"string\"}]}",
		&error);
	g_autoptr(GString) out = g_string_new(NULL);

	g_assert_no_error(error);
	g_assert_true(sfl_avro_render_json(spec, payload, 5, out, &error));
	g_assert_cmpstr(out->str, ==, "{\"a\": 27, \"b\": \"foo\"}");
	g_string_truncate(out, 0);
	g_assert_true(sfl_avro_render_json(spec, payload, sizeof(payload), out, &error));
	g_assert_cmpstr(out->str, ==, "{\"a\": 27, \"b\": \"foo\"}");

	/* the same bytes under a schema with the fields swapped read differently: the decoder
	 * follows the writer schema's order */
	g_string_truncate(out, 0);
	g_assert_false(sfl_avro_render_json(schema, payload, 5, out, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_nonnull(strstr(error->message, "field b"));
}

static void
test_avro_bad_schema(void)
{
	static const gchar *const bad[] = {
		"not json",
		"{\"type\": \"no-such-type\"}",
		"{\"type\": \"record\", \"name\": \"R\", \"fields\": [{\"type\": \"long\"}]}",
		("{\"type\": \"record\", \"name\": \"R\", \"fields\": [{\"name\": \"x\", "
		 "\"type\": \"Undefined\"}]}"),
		"{\"type\": \"enum\", \"name\": \"E\"}",
		("{\"type\": \"record\", \"name\": \"R\", \"fields\": [{\"name\": \"a\", "
		 "\"type\": \"long\"}, {\"name\": \"a\", \"type\": \"string\"}]}"),
	};

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(SflAvroSchema) schema = sfl_avro_schema_new(bad[i], &error);

		g_assert_null(schema);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
		g_assert_true(g_str_has_prefix(error->message, "Avro schema"));
	}
}

/* a schema outlives the caller's reference while a decoder still holds one */
static void
test_avro_ref(void)
{
	static const guint8 payload[] = { 0x02, 0x06, 0x66, 0x6f, 0x6f };
	static const guint8 none[] = { 0x00 };
	g_autoptr(GError) error = NULL;
	SflAvroSchema *schema = sfl_avro_schema_new("[\"null\", \"string\"]", &error);
	g_autoptr(SflAvroSchema) held = NULL;
	g_autoptr(GString) out = g_string_new(NULL);

	g_assert_no_error(error);
	held = sfl_avro_schema_ref(schema);
	g_assert_true(held == schema);
	sfl_avro_schema_unref(schema);
	g_assert_true(sfl_avro_render_json(held, payload, sizeof(payload), out, &error));
	g_assert_cmpstr(out->str, ==, "\"foo\"");
	g_string_truncate(out, 0);
	g_assert_true(sfl_avro_render_json(held, none, sizeof(none), out, &error));
	g_assert_cmpstr(out->str, ==, "null");
}

/*
 * Random damage to real payloads: every outcome is either a whole rendering in valid UTF-8 or
 * a CORRUPT error with @out untouched (ASan catches any read past the copy).
 */
static void
test_avro_random_damage(void)
{
	json_t *cases = load_cases();
	g_autoptr(GRand) rand = g_rand_new_with_seed(8);
	guint failed = 0;
	guint decoded = 0;
	gsize i;
	json_t *c;

	json_array_foreach (cases, i, c) {
		g_autoptr(SflAvroSchema) schema = NULL;
		g_autoptr(GBytes) payload = NULL;
		gsize len = 0;
		const guint8 *data;

		if (json_object_get(c, "expected") == NULL)
			continue;
		schema = case_schema(c);
		payload = case_payload(c);
		data = g_bytes_get_data(payload, &len);
		for (guint round = 0; round < 200 && len > 0; round++) {
			g_autofree guint8 *copy = g_memdup2(data, len);
			g_autoptr(GString) out = g_string_new(PREFIX);
			g_autoptr(GError) error = NULL;
			guint flips = (guint)g_rand_int_range(rand, 1, 4);

			for (guint f = 0; f < flips; f++)
				copy[g_rand_int_range(rand, 0, (gint32)len)] =
					(guint8)g_rand_int_range(rand, 0, 256);
			if (sfl_avro_render_json(schema, copy, len, out, &error)) {
				g_assert_true(g_utf8_validate(out->str, (gssize)out->len, NULL));
				g_assert_true(g_str_has_prefix(out->str, PREFIX));
				g_assert_cmpuint(out->len, >, strlen(PREFIX));
				decoded++;
			} else {
				g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
				g_assert_cmpstr(out->str, ==, PREFIX);
				failed++;
			}
		}
	}
	g_test_message("damaged payloads: %u decoded, %u refused", decoded, failed);
	g_assert_cmpuint(failed, >, 0);
	g_assert_cmpuint(decoded, >, 0);
}

/*
 * The typed decode feeds the shaping code; rendered by sfl-record it must give the very line
 * the vectors expect, and it must refuse what the renderer refuses.
 */
static void
test_avro_decode_record(void)
{
	json_t *cases = load_cases();
	g_autoptr(SflRecord) record = sfl_record_new();
	guint checked = 0;
	gsize i;
	json_t *c;

	json_array_foreach (cases, i, c) {
		const gchar *name = json_string_value(json_object_get(c, "name"));
		const gchar *expected = json_string_value(json_object_get(c, "expected"));
		g_autoptr(SflAvroSchema) schema = case_schema(c);
		g_autoptr(GBytes) payload = case_payload(c);
		g_autoptr(GString) line = g_string_new(NULL);
		g_autoptr(GError) error = NULL;
		g_autoptr(json_t) holder = NULL;
		gsize len = 0;
		const guint8 *data = g_bytes_get_data(payload, &len);
		gboolean ok;

		g_test_message("vector %s", name);
		sfl_record_reset(record);
		ok = sfl_avro_decode_record(schema, data, len, record, &holder, &error);
		if (g_str_has_prefix(name, "top-level-")) {
			g_assert_false(ok);
			g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
			g_assert_nonnull(strstr(error->message, "not a record"));
			continue;
		}
		if (expected == NULL) {
			g_assert_false(ok);
			g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
			g_assert_null(holder);
			continue;
		}
		g_assert_no_error(error);
		g_assert_true(ok);
		g_assert_nonnull(holder);
		sfl_record_append_json(record, line);
		g_assert_cmpstr(line->str, ==, expected);
		checked++;
		/* the record is shaped without the line: typed fields are there by name */
		if (g_str_has_prefix(name, "login-") && !g_str_equal(name, "login-all-null")) {
			const SflField *f = sfl_record_lookup(record, "EventDate");
			g_assert_nonnull(f);
			g_assert_cmpint(f->type, ==, SFL_VALUE_INT);
			g_assert_cmpint(f->i, >=, G_GINT64_CONSTANT(1767225600000));
			f = sfl_record_lookup(record, "LoginLatitude");
			g_assert_cmpint(f->type, ==, SFL_VALUE_REAL);
			g_assert_nonnull(sfl_record_lookup_string(record, "City"));
		}
		if (g_str_has_prefix(name, "cdc-")) {
			const SflField *f = sfl_record_lookup(record, "ChangeEventHeader");
			g_assert_cmpint(f->type, ==, SFL_VALUE_JSON);
			g_assert_true(json_is_integer(json_object_get(f->json, "commitTimestamp")));
			g_assert_true(json_is_array(json_object_get(f->json, "changedFields")));
			g_assert_null(json_object_get(f->json, "changedFieldNames"));
		}
		sfl_record_reset(record);
	}
	g_assert_cmpuint(checked, >=, 20);
}

/*
 * CDC cases against Python: with SFL_AVRO_SCHEMA_CDC_NAMES_IN_LINE both outputs give the line
 * with the name lists beside the bitmaps (cdc_field_names: line); without it, the names the
 * decoded header's bitmaps select, comma-joined, are the metadata Python computed
 * (cdc_field_names: metadata), absent where Python has none.
 */
static void
test_avro_cdc_names(void)
{
	static const gchar *const fields[][2] = {
		{ "changedFields", "changed_fields" },
		{ "nulledFields", "nulled_fields" },
		{ "diffFields", "diff_fields" },
	};
	json_t *cases = load_cases();
	g_autoptr(SflRecord) record = sfl_record_new();
	guint checked = 0;
	gsize i;
	json_t *c;

	json_array_foreach (cases, i, c) {
		const gchar *want_line = json_string_value(json_object_get(c, "expected_cdc_line"));
		json_t *want_metadata = json_object_get(c, "cdc_metadata");
		g_autoptr(SflAvroSchema) in_line = NULL;
		g_autoptr(SflAvroSchema) plain = NULL;
		g_autoptr(GBytes) payload = NULL;
		g_autoptr(GString) out = g_string_new(NULL);
		g_autoptr(GError) error = NULL;
		g_autoptr(json_t) holder = NULL;
		const SflField *header = NULL;
		gsize len = 0;
		const guint8 *data;

		if (want_line == NULL)
			continue;
		g_test_message("vector %s", json_string_value(json_object_get(c, "name")));
		in_line = case_schema_full(c, SFL_AVRO_SCHEMA_CDC_NAMES_IN_LINE);
		plain = case_schema(c);
		payload = case_payload(c);
		data = g_bytes_get_data(payload, &len);
		g_assert_true(sfl_avro_render_json(in_line, data, len, out, &error));
		g_assert_no_error(error);
		g_assert_cmpstr(out->str, ==, want_line);
		g_string_truncate(out, 0);
		sfl_record_reset(record);
		g_assert_true(sfl_avro_decode_record(in_line, data, len, record, &holder, &error));
		sfl_record_append_json(record, out);
		g_assert_cmpstr(out->str, ==, want_line);
		sfl_record_reset(record);
		g_clear_pointer(&holder, json_decref);

		g_assert_true(sfl_avro_decode_record(plain, data, len, record, &holder, &error));
		header = sfl_record_lookup(record, "ChangeEventHeader");
		g_assert_nonnull(header);
		g_assert_cmpint(header->type, ==, SFL_VALUE_JSON);
		for (guint f = 0; f < G_N_ELEMENTS(fields); f++) {
			const gchar *want =
				json_string_value(json_object_get(want_metadata, fields[f][1]));
			gboolean any;

			g_string_truncate(out, 0);
			any = sfl_avro_schema_append_cdc_names(
				plain, json_object_get(header->json, fields[f][0]), out);
			g_assert_cmpint(any, ==, want != NULL);
			g_assert_cmpstr(out->str, ==, want != NULL ? want : "");
		}
		sfl_record_reset(record);
		checked++;
	}
	g_assert_cmpuint(checked, >=, 2);
}

static void
render_double(SflAvroSchema *schema, gdouble value, GString *out)
{
	guint64 bits;
	guint8 payload[8];
	g_autoptr(GError) error = NULL;

	memcpy(&bits, &value, 8);
	bits = GUINT64_TO_LE(bits);
	memcpy(payload, &bits, 8);
	g_string_truncate(out, 0);
	g_assert_true(sfl_avro_render_json(schema, payload, sizeof(payload), out, &error));
	g_assert_no_error(error);
}

/*
 * Doubles take a 128-bit integer shortcut to repr()'s shortest digits; it must agree with the
 * generic repr (sfl_append_pyfloat, checked against Python elsewhere) everywhere, including
 * decimals of every length, float32 values, binade edges and random bit patterns.
 */
static void
test_avro_double_repr(void)
{
	static const struct {
		gdouble value;
		const gchar *repr;
	} known[] = {
		{ 0.1, "0.1" },
		{ 1e16, "1e+16" },
		{ 1e-05, "1e-05" },
		{ 0.0001, "0.0001" },
		{ 123456789.123, "123456789.123" },
		{ 9007199254740992.0, "9007199254740992.0" },
		{ 2251799813685248.5, "2251799813685248.5" },
		{ 5e-324, "5e-324" },
		{ -0.0, "-0.0" },
		{ 0.30000000000000004, "0.30000000000000004" },
		{ 2.2250738585072014e-308, "2.2250738585072014e-308" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 37.800200000000004, "37.800200000000004" },
		{ (gdouble)0.1f, "0.10000000149011612" },
	};
	g_autoptr(GError) error = NULL;
	g_autoptr(SflAvroSchema) schema = sfl_avro_schema_new("\"double\"", &error);
	g_autoptr(GString) out = g_string_new(NULL);
	json_t *floats = NULL;
	json_t *item = NULL;
	gsize idx = 0;

	g_assert_no_error(error);
	for (guint i = 0; i < G_N_ELEMENTS(known); i++) {
		render_double(schema, known[i].value, out);
		g_assert_cmpstr(out->str, ==, known[i].repr);
	}
	/* Python's own repr is the oracle for 100,000 more: both formatting paths are ours */
	floats = run_vectors_script("--floats", "100000");
	json_array_foreach (json_object_get(floats, "floats"), idx, item) {
		const gchar *hex = json_string_value(json_array_get(item, 0));
		guint8 raw[8];
		gdouble v;

		for (guint b = 0; b < 8; b++)
			raw[b] = (guint8)g_ascii_strtoull(
				(const gchar[]){ hex[2 * b], hex[2 * b + 1], 0 }, NULL, 16);
		memcpy(&v, raw, 8);
		render_double(schema, v, out);
		if (!g_str_equal(out->str, json_string_value(json_array_get(item, 1))))
			g_error("%.17g: rendered %s, Python says %s", v, out->str,
				json_string_value(json_array_get(item, 1)));
	}
	g_assert_cmpuint(json_array_size(json_object_get(floats, "floats")), ==, 100000);
	json_decref(floats);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/avro/vectors", test_avro_vectors);
	g_test_add_func("/avro/truncated-prefixes", test_avro_truncated_prefixes);
	g_test_add_func("/avro/cdc-worked-example", test_avro_cdc_worked_example);
	g_test_add_func("/avro/cdc-names", test_avro_cdc_names);
	g_test_add_func("/avro/spec-vector", test_avro_spec_vector);
	g_test_add_func("/avro/bad-schema", test_avro_bad_schema);
	g_test_add_func("/avro/ref", test_avro_ref);
	g_test_add_func("/avro/random-damage", test_avro_random_damage);
	g_test_add_func("/avro/double-repr", test_avro_double_repr);
	g_test_add_func("/avro/decode-record", test_avro_decode_record);
	return g_test_run();
}
