/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestStateDoc"

#include "config.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-pyjson.h"
#include "sfl-state-doc.h"

static void
test_serialize_python_compatible(void)
{
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	g_autofree gchar *text = NULL;
	gsize len = 0;

	/* the exact bytes Python's json.dumps({...}) gives for the same dict */
	sfl_state_doc_set(doc, "z", "last in order, first inserted");
	sfl_state_doc_set(doc, "a", "tab\there \\ \"quoted\" \x01 \x7f");
	sfl_state_doc_set(doc, "\xc3\xa9", "\xe2\x82\xac \xf0\x9f\x98\x80");
	text = sfl_state_doc_serialize(doc, &len);
	g_assert_cmpstr(text, ==,
			"{\"z\": \"last in order, first inserted\", "
			"\"a\": \"tab\\there \\\\ \\\"quoted\\\" \\u0001 \\u007f\", "
			"\"\\u00e9\": \"\\u20ac \\ud83d\\ude00\"}");
	g_assert_cmpuint(len, ==, strlen(text));
}

static void
test_empty(void)
{
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	g_autofree gchar *text = sfl_state_doc_serialize(doc, NULL);
	g_autoptr(SflStateDoc) back = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_cmpstr(text, ==, "{}");
	back = sfl_state_doc_parse(text, strlen(text), "t", &error);
	g_assert_no_error(error);
	g_assert_cmpuint(sfl_state_doc_size(back), ==, 0);
}

static void
test_roundtrip_and_order(void)
{
	const gchar *in = "{\"b\": \"2\", \"a\": \"1\", \"c\": \"\\u00e9\\n\"}";
	g_autoptr(GError) error = NULL;
	g_autoptr(SflStateDoc) doc = sfl_state_doc_parse(in, strlen(in), "t", &error);
	g_autofree gchar *out = NULL;

	g_assert_no_error(error);
	g_assert_cmpstr(sfl_state_doc_key_at(doc, 0), ==, "b");
	g_assert_cmpstr(sfl_state_doc_get(doc, "c"), ==, "\xc3\xa9\n");
	/* an existing key keeps its place, a new key goes last */
	sfl_state_doc_set(doc, "b", "22");
	sfl_state_doc_set(doc, "d", "4");
	out = sfl_state_doc_serialize(doc, NULL);
	g_assert_cmpstr(out, ==,
			"{\"b\": \"22\", \"a\": \"1\", \"c\": \"\\u00e9\\n\", \"d\": \"4\"}");
	g_assert_true(sfl_state_doc_remove(doc, "a"));
	g_assert_false(sfl_state_doc_remove(doc, "a"));
	g_assert_cmpuint(sfl_state_doc_size(doc), ==, 3);
}

static void
test_parse_errors(void)
{
	const struct {
		const gchar *text;
		const gchar *needle;
	} cases[] = {
		{ "", "invalid JSON at byte 0" },
		{ "{\"a\": \"1\",", "invalid JSON at byte" },
		{ "{\"a\": \"1\"} trailing", "invalid JSON" },
		{ "42", "a number, not a JSON object" },
		{ "null", "null, not a JSON object" },
		{ "{\"a\": [\"x\"]}", "key 'a' is an array, not a string" },
		{ "{\"a\": null}", "key 'a' is null, not a string" },
		{ "{\"a\": \"\\u0000\"}", "invalid JSON" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(SflStateDoc) doc = sfl_state_doc_parse(
			cases[i].text, strlen(cases[i].text), "/x/state.json", &error);
		g_assert_null(doc);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
		g_assert_true(g_str_has_prefix(error->message, "/x/state.json is corrupt"));
		if (strstr(error->message, cases[i].needle) == NULL)
			g_error("case %" G_GSIZE_FORMAT ": '%s' not in '%s'", i, cases[i].needle,
				error->message);
	}
}

static void
test_epoch(void)
{
	g_autoptr(SflStateDoc) doc = sfl_state_doc_new();
	g_autoptr(GError) error = NULL;
	guint64 epoch = 0;

	g_assert_false(sfl_state_doc_get_epoch(doc, &epoch, &error));
	g_assert_no_error(error);
	sfl_state_doc_set(doc, SFL_STATE_KEY_FENCE_EPOCH, "18446744073709551615");
	g_assert_true(sfl_state_doc_get_epoch(doc, &epoch, &error));
	g_assert_cmpuint(epoch, ==, G_MAXUINT64);
	sfl_state_doc_set(doc, SFL_STATE_KEY_FENCE_EPOCH, "-1");
	g_assert_false(sfl_state_doc_get_epoch(doc, &epoch, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
}

static void
test_reserved(void)
{
	g_assert_true(sfl_state_key_is_reserved("__fence_epoch__"));
	g_assert_true(sfl_state_key_is_reserved("__x__"));
	g_assert_false(sfl_state_key_is_reserved("____"));
	g_assert_false(sfl_state_key_is_reserved("__x"));
	g_assert_false(sfl_state_key_is_reserved("pubsub:/event/__A__"));
}

/* the one escaper: short forms, \u00XX, surrogate pairs, and a stray byte as \ufffd */
static void
test_pyjson_escapes(void)
{
	static const gchar text[] = "a\"\\\n\x01\x7f\xc3\xa9\xf0\x9f\x98\x80\xff.";
	g_autoptr(GString) out = g_string_new(NULL);

	sfl_pyjson_append_escaped(out, text, sizeof text - 1);
	g_assert_cmpstr(out->str, ==, "a\\\"\\\\\\n\\u0001\\u007f\\u00e9\\ud83d\\ude00\\ufffd.");
	g_string_truncate(out, 0);
	sfl_pyjson_append_string(out, text);
	g_assert_cmpstr(out->str, ==,
			"\"a\\\"\\\\\\n\\u0001\\u007f\\u00e9\\ud83d\\ude00\\ufffd.\"");
	g_string_truncate(out, 0);
	sfl_pyjson_append_char(out, 0x1f600);
	g_assert_cmpstr(out->str, ==, "\\ud83d\\ude00");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/state-doc/serialize-python", test_serialize_python_compatible);
	g_test_add_func("/sfl/state-doc/empty", test_empty);
	g_test_add_func("/sfl/state-doc/roundtrip-order", test_roundtrip_and_order);
	g_test_add_func("/sfl/state-doc/parse-errors", test_parse_errors);
	g_test_add_func("/sfl/state-doc/epoch", test_epoch);
	g_test_add_func("/sfl/state-doc/reserved", test_reserved);
	g_test_add_func("/sfl/state-doc/pyjson-escapes", test_pyjson_escapes);
	return g_test_run();
}
