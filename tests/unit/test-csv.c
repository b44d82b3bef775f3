/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestCsv"

#include "config.h"

#include <string.h>

#include "sfl-csv.h"
#include "sfl-error.h"

/* what the callback saw, in one comparable text, plus the fields for direct checks */
typedef struct {
	GString *dump;
	GPtrArray *rows; /* of GStrv */
	GArray *lines;	 /* guint64 */
	GArray *offsets; /* guint64 */
	gboolean stop_each;
} Collect;

static Collect *
collect_new(void)
{
	Collect *c = g_new0(Collect, 1);
	c->dump = g_string_new(NULL);
	c->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
	c->lines = g_array_new(FALSE, FALSE, sizeof(guint64));
	c->offsets = g_array_new(FALSE, FALSE, sizeof(guint64));
	return c;
}

static void
collect_free(Collect *c)
{
	g_string_free(c->dump, TRUE);
	g_ptr_array_unref(c->rows);
	g_array_unref(c->lines);
	g_array_unref(c->offsets);
	g_free(c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Collect, collect_free)

static gboolean
collect_cb(const SflCsvRecord *record, gpointer user_data)
{
	Collect *c = user_data;
	GStrv row = g_new0(gchar *, record->n_fields + 1);

	g_assert_cmpuint(record->n_fields, >, 0);
	g_string_append_printf(c->dump,
			       "line %" G_GUINT64_FORMAT " byte %" G_GUINT64_FORMAT " fields %u\n",
			       record->line, record->offset, record->n_fields);
	for (guint i = 0; i < record->n_fields; i++) {
		const gchar *f = record->fields[i];
		g_assert_nonnull(f);
		g_assert_cmpuint(strlen(f), ==, record->lens[i]);
		g_assert_true(g_utf8_validate(f, -1, NULL));
		g_string_append_printf(c->dump, "  [%" G_GSIZE_FORMAT "] ", record->lens[i]);
		g_string_append_len(c->dump, f, (gssize)record->lens[i]);
		g_string_append_c(c->dump, '\n');
		row[i] = g_strdup(f);
	}
	g_ptr_array_add(c->rows, row);
	g_array_append_val(c->lines, record->line);
	g_array_append_val(c->offsets, record->offset);
	return !c->stop_each;
}

static const gchar *
collect_field(Collect *c, guint row, guint field)
{
	GStrv r;
	g_assert_cmpuint(row, <, c->rows->len);
	r = g_ptr_array_index(c->rows, row);
	g_assert_cmpuint(field, <, g_strv_length(r));
	return r[field];
}

static guint
collect_width(Collect *c, guint row)
{
	g_assert_cmpuint(row, <, c->rows->len);
	return g_strv_length(g_ptr_array_index(c->rows, row));
}

/*
 * Parses input in chunks cut at the given positions (ascending, within len). Returns the
 * collected records; on bad input, the error too (the records before it are kept).
 */
static Collect *
parse_split(const gchar *input, gsize len, const gsize *cuts, guint n_cuts, gsize max_field,
	    GError **error)
{
	g_autoptr(SflCsvParser) parser = sfl_csv_parser_new(max_field);
	Collect *c = collect_new();
	gsize from = 0;

	for (guint i = 0; i <= n_cuts; i++) {
		gsize to = i < n_cuts ? cuts[i] : len;
		g_assert_cmpuint(to, >=, from);
		if (!sfl_csv_parser_feed(parser, input + from, to - from, collect_cb, c, error)) {
			g_assert_true(error == NULL || *error != NULL);
			return c;
		}
		from = to;
	}
	if (sfl_csv_parser_finish(parser, collect_cb, c, error)) {
		g_assert_cmpuint(sfl_csv_parser_get_records(parser), ==, c->rows->len);
		g_assert_cmpuint(sfl_csv_parser_get_bytes(parser), ==, len);
	}
	return c;
}

static Collect *
parse_whole(const gchar *input, gssize len, GError **error)
{
	return parse_split(input, len < 0 ? strlen(input) : (gsize)len, NULL, 0, 0, error);
}

/* parses input that must be good */
static Collect *
parse_ok(const gchar *input, gssize len)
{
	g_autoptr(GError) error = NULL;
	Collect *c = parse_whole(input, len, &error);
	g_assert_no_error(error);
	return c;
}

static void
assert_row(Collect *c, guint row, const gchar *const *expected)
{
	guint n = g_strv_length((gchar **)expected);
	g_assert_cmpuint(collect_width(c, row), ==, n);
	for (guint i = 0; i < n; i++)
		g_assert_cmpstr(collect_field(c, row, i), ==, expected[i]);
}

static guint64
collect_line(Collect *c, guint row)
{
	return g_array_index(c->lines, guint64, row);
}

static guint64
collect_offset(Collect *c, guint row)
{
	return g_array_index(c->offsets, guint64, row);
}

static void
test_csv_simple(void)
{
	g_autoptr(Collect) c = parse_ok("a,b,c\n1,22,333\n", -1);
	const gchar *r0[] = { "a", "b", "c", NULL };
	const gchar *r1[] = { "1", "22", "333", NULL };

	g_assert_cmpuint(c->rows->len, ==, 2);
	assert_row(c, 0, r0);
	assert_row(c, 1, r1);
	g_assert_cmpuint(collect_line(c, 0), ==, 1);
	g_assert_cmpuint(collect_offset(c, 0), ==, 0);
	g_assert_cmpuint(collect_line(c, 1), ==, 2);
	g_assert_cmpuint(collect_offset(c, 1), ==, 6);
}

static void
test_csv_event_log_file(void)
{
	const gchar *input =
		"\"EVENT_TYPE\",\"TIMESTAMP\",\"REQUEST_ID\",\"USER_ID\",\"TIMESTAMP_DERIVED\"\n"
		"\"API\",\"20240101000000.000\",\"4abcDEF\",\"005000000000001\","
		"\"2024-01-01T00:00:00.000Z\"\n"
		"\"API\",\"20240101000001.123\",\"\",\"005000000000002\",\"2024-01-01T00:00:01."
		"123Z\"\n";
	g_autoptr(Collect) c = parse_ok(input, -1);
	const gchar *h[] = { "EVENT_TYPE", "TIMESTAMP",		"REQUEST_ID",
			     "USER_ID",	   "TIMESTAMP_DERIVED", NULL };
	const gchar *r1[] = { "API",
			      "20240101000000.000",
			      "4abcDEF",
			      "005000000000001",
			      "2024-01-01T00:00:00.000Z",
			      NULL };
	const gchar *r2[] = {
		"API", "20240101000001.123", "", "005000000000002", "2024-01-01T00:00:01.123Z", NULL
	};

	g_assert_cmpuint(c->rows->len, ==, 3);
	assert_row(c, 0, h);
	assert_row(c, 1, r1);
	assert_row(c, 2, r2);
	g_assert_cmpuint(collect_line(c, 2), ==, 3);
}

static void
test_csv_embedded(void)
{
	g_autoptr(Collect) c = parse_ok("\"a,b\",\"say \"\"hi\"\"\",\"x\ry\",\"x\ny\",\"x\r\ny\","
					"\"\"\"\"\n"
					"\"q,\",\",\"\n",
					-1);
	const gchar *r0[] = { "a,b", "say \"hi\"", "x\ry", "x\ny", "x\r\ny", "\"", NULL };
	const gchar *r1[] = { "q,", ",", NULL };

	g_assert_cmpuint(c->rows->len, ==, 2);
	assert_row(c, 0, r0);
	assert_row(c, 1, r1);
}

static void
test_csv_empty_fields(void)
{
	g_autoptr(Collect) c = parse_ok("\"\",,\"\"\n,\n\n\r\n\ra\n,\n", -1);
	const gchar *r0[] = { "", "", "", NULL };
	const gchar *r1[] = { "", "", NULL };
	const gchar *r2[] = { "a", NULL };

	/* the empty lines in between give no records */
	g_assert_cmpuint(c->rows->len, ==, 4);
	assert_row(c, 0, r0);
	assert_row(c, 1, r1);
	assert_row(c, 2, r2);
	assert_row(c, 3, r1);
	g_assert_cmpuint(collect_line(c, 2), ==, 6);
	g_assert_cmpuint(collect_offset(c, 2), ==, 13);
}

/*
 * One short field then the most empty fields a record may have: each empty field is one NUL
 * with no bytes of its own, and the run ends past the parser's first 4 KiB buffer (a write
 * past it until the NUL got its own reservation; fuzz finding csv-empty-field-nul-past-buffer)
 */
static void
test_csv_many_empty_fields(void)
{
	g_autoptr(GString) input = g_string_new("x");
	g_autoptr(Collect) c = NULL;

	for (guint i = 1; i < 4096; i++)
		g_string_append_c(input, ',');
	g_string_append(input, "\ny\n");
	c = parse_ok(input->str, (gssize)input->len);
	g_assert_cmpuint(c->rows->len, ==, 2);
	g_assert_cmpuint(collect_width(c, 0), ==, 4096);
	g_assert_cmpstr(collect_field(c, 0, 0), ==, "x");
	g_assert_cmpstr(collect_field(c, 0, 4095), ==, "");
	g_assert_cmpstr(collect_field(c, 1, 0), ==, "y");
}

static void
test_csv_bom(void)
{
	g_autoptr(Collect) quoted = parse_ok("\xef\xbb\xbf\"EVENT_TYPE\",\"X\"\n\"a\",\"b\"\n", -1);
	g_autoptr(Collect) plain = parse_ok("\xef\xbb\xbf"
					    "EVENT_TYPE,X\na,b\n",
					    -1);
	g_autoptr(GError) error = NULL;
	g_autoptr(Collect) later = NULL;

	g_assert_cmpstr(collect_field(quoted, 0, 0), ==,
			"\xef\xbb\xbf"
			"EVENT_TYPE");
	g_assert_cmpstr(collect_field(quoted, 0, 1), ==, "X");
	g_assert_cmpstr(collect_field(quoted, 1, 0), ==, "a");
	g_assert_cmpstr(collect_field(plain, 0, 0), ==,
			"\xef\xbb\xbf"
			"EVENT_TYPE");

	/* only the input's first bytes are a BOM */
	later = parse_whole("a,b\n\xef\xbb\xbf\"x\"\n", -1, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
}

static void
test_csv_line_ends(void)
{
	g_autoptr(Collect) lf = parse_ok("a,\"b\"\nc,d\n", -1);
	g_autoptr(Collect) crlf = parse_ok("a,\"b\"\r\nc,d\r\n", -1);
	g_autoptr(Collect) cr = parse_ok("a,\"b\"\rc,d\r", -1);
	const gchar *r0[] = { "a", "b", NULL };
	const gchar *r1[] = { "c", "d", NULL };
	Collect *all[] = { lf, crlf, cr };

	for (guint i = 0; i < G_N_ELEMENTS(all); i++) {
		g_assert_cmpuint(all[i]->rows->len, ==, 2);
		assert_row(all[i], 0, r0);
		assert_row(all[i], 1, r1);
		g_assert_cmpuint(collect_line(all[i], 1), ==, 2);
	}
	g_assert_cmpuint(collect_offset(lf, 1), ==, 6);
	g_assert_cmpuint(collect_offset(crlf, 1), ==, 7);
	g_assert_cmpuint(collect_offset(cr, 1), ==, 6);
}

static void
test_csv_trailing_newline(void)
{
	const gchar *cases[][2] = {
		{ "a,b", "a|b|" },	   { "a,b\n", "a|b|" },	  { "a,\"b\"", "a|b|" },
		{ "a,\"b\"\r\n", "a|b|" }, { "a,", "a||" },	  { "a,\"\"", "a||" },
		{ "\"\"", "|" },	   { "x\n\n\n", "x|" },	  { "", "" },
		{ "\n\r\n", "" },	   { "a,b\nc", "a|b|c|" }
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(Collect) c = parse_ok(cases[i][0], -1);
		g_autoptr(GString) flat = g_string_new(NULL);
		for (guint r = 0; r < c->rows->len; r++) {
			GStrv row = g_ptr_array_index(c->rows, r);
			for (guint f = 0; row[f] != NULL; f++)
				g_string_append_printf(flat, "%s|", row[f]);
		}
		g_assert_cmpstr(flat->str, ==, cases[i][1]);
	}
}

/* everything at once: BOM, quoting, all line ends, multibyte and invalid UTF-8, NUL */
static const gchar tricky[] = "\xef\xbb\xbf\"H1\",H2,\"H\"\"3\"\r\n"
			      "\"a,b\",\"x\r\ny\",\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n"
			      "\n"
			      "plain,\"\",\r"
			      "\"q\"\"\"\"\",bad\xff\xe2\x82,\"nul\0here\"\r\n"
			      "\"multi\nline\rfield\",\xf0\x9f\x98,last";

static void
test_csv_every_split(void)
{
	gsize len = sizeof tricky - 1;
	g_autoptr(Collect) whole = parse_ok(tricky, (gssize)len);
	g_autoptr(GArray) bytewise = g_array_new(FALSE, FALSE, sizeof(gsize));

	g_assert_cmpuint(whole->rows->len, ==, 5);
	g_assert_cmpstr(collect_field(whole, 1, 2), ==,
			"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	g_assert_cmpstr(collect_field(whole, 3, 0), ==, "q\"\"");
	g_assert_cmpstr(collect_field(whole, 3, 2), ==, "nul\xef\xbf\xbdhere");

	for (gsize cut = 0; cut <= len; cut++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(Collect) two = parse_split(tricky, len, &cut, 1, 0, &error);
		g_assert_no_error(error);
		g_assert_cmpstr(two->dump->str, ==, whole->dump->str);
	}
	for (gsize a = 1; a < len; a += 3) {
		for (gsize b = a; b <= len; b++) {
			gsize cuts[] = { a, b };
			g_autoptr(GError) error = NULL;
			g_autoptr(Collect) three = parse_split(tricky, len, cuts, 2, 0, &error);
			g_assert_no_error(error);
			g_assert_cmpstr(three->dump->str, ==, whole->dump->str);
		}
	}
	for (gsize i = 1; i < len; i++)
		g_array_append_val(bytewise, i);
	{
		g_autoptr(GError) error = NULL;
		g_autoptr(Collect) one = parse_split(
			tricky, len, &g_array_index(bytewise, gsize, 0), bytewise->len, 0, &error);
		g_assert_no_error(error);
		g_assert_cmpstr(one->dump->str, ==, whole->dump->str);
	}
}

static void
test_csv_invalid_utf8(void)
{
	const gchar input[] = "\"a\xff"
			      "b\",c\0d,\xe2\x82\n"
			      "\xc0\xaf,\"\xed\xa0\x80\",\xf4\x90\x80\x80,ok\xc3\xa9\n";
	g_autoptr(Collect) c = parse_ok(input, sizeof input - 1);
	const gchar *raw[] = { "a\377b",    "c\0d",	    "\xe2\x82",
			       "\xc0\xaf",  "\xed\xa0\x80", "\xf4\x90\x80\x80",
			       "ok\xc3\xa9" };
	const gsize raw_len[] = { 3, 3, 2, 2, 3, 4, 4 };

	g_assert_cmpuint(c->rows->len, ==, 2);
	g_assert_cmpstr(collect_field(c, 0, 0), ==,
			"a\xef\xbf\xbd"
			"b");
	g_assert_cmpstr(collect_field(c, 0, 1), ==,
			"c\xef\xbf\xbd"
			"d");
	g_assert_cmpstr(collect_field(c, 0, 2), ==, "\xef\xbf\xbd\xef\xbf\xbd");
	g_assert_cmpstr(collect_field(c, 1, 3), ==, "ok\xc3\xa9");
	/* the same replacement as GLib's */
	for (guint i = 0; i < G_N_ELEMENTS(raw); i++) {
		g_autofree gchar *valid = g_utf8_make_valid(raw[i], (gssize)raw_len[i]);
		guint row = i < 3 ? 0 : 1;
		guint field = i < 3 ? i : i - 3;
		g_assert_cmpstr(collect_field(c, row, field), ==, valid);
	}
}

static void
test_csv_field_limit(void)
{
	const gchar *input = "a,b\n\"12345678\",1234\n\"x\ny\",\"123456789\"\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(Collect) c = parse_split(input, strlen(input), NULL, 0, 8, &error);
	gsize cuts[] = { 20, 31 };
	g_autoptr(GError) error2 = NULL;
	g_autoptr(Collect) c2 = parse_split(input, strlen(input), cuts, 2, 8, &error2);
	g_autoptr(GError) error3 = NULL;
	g_autoptr(Collect) c3 = NULL;

	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_cmpstr(error->message, ==, "CSV line 3 (byte 20): field 2 longer than 8 bytes");
	/* the records before the bad one were handed out */
	g_assert_cmpuint(c->rows->len, ==, 2);
	g_assert_cmpstr(collect_field(c, 1, 0), ==, "12345678");
	g_assert_error(error2, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_cmpstr(error2->message, ==, error->message);
	g_assert_cmpstr(c2->dump->str, ==, c->dump->str);

	/* unquoted, with the default limit */
	{
		gsize big = SFL_CSV_DEFAULT_MAX_FIELD + 1;
		g_autofree gchar *text = g_malloc(big + 3);
		memcpy(text, "a\n", 2);
		memset(text + 2, 'z', big);
		text[big + 2] = '\0';
		c3 = parse_whole(text, -1, &error3);
		g_assert_error(error3, SFL_ERROR, SFL_ERROR_CORRUPT);
		g_assert_cmpstr(error3->message, ==,
				"CSV line 2 (byte 2): field 1 longer than 1048576 bytes");
	}
}

static void
test_csv_unterminated_quote(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Collect) c = parse_whole("a,b\nc,\"open\nstill open\n", -1, &error);

	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_cmpstr(error->message, ==,
			"CSV line 2 (byte 4): quote of field 2 not closed at the end of input");
	g_assert_cmpuint(c->rows->len, ==, 1);
}

static void
test_csv_stray_quote(void)
{
	const struct {
		const gchar *input;
		const gchar *message;
		guint records_before;
	} cases[] = {
		{ "a,b\nc,d\"e\n", "CSV line 2 (byte 4): quote inside unquoted field 2", 1 },
		{ "ab\"\n", "CSV line 1 (byte 0): quote inside unquoted field 1", 0 },
		{ "x\n\n\"a\"b,c\n",
		  "CSV line 3 (byte 3): unexpected byte 0x62 after the closing quote of field 1",
		  1 },
		{ "\"a\" ,c\n",
		  "CSV line 1 (byte 0): unexpected byte 0x20 after the closing quote of field 1",
		  0 },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(Collect) c = parse_whole(cases[i].input, -1, &error);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
		g_assert_cmpstr(error->message, ==, cases[i].message);
		g_assert_cmpuint(c->rows->len, ==, cases[i].records_before);
	}
}

static void
test_csv_error_sticks(void)
{
	g_autoptr(SflCsvParser) parser = sfl_csv_parser_new(0);
	g_autoptr(Collect) c = collect_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) again = NULL;
	g_autoptr(GError) at_end = NULL;

	g_assert_false(sfl_csv_parser_feed(parser, "a\"\n", 3, collect_cb, c, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_false(sfl_csv_parser_feed(parser, "b\n", 2, collect_cb, c, &again));
	g_assert_error(again, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_cmpstr(again->message, ==, error->message);
	g_assert_false(sfl_csv_parser_finish(parser, collect_cb, c, &at_end));
	g_assert_error(at_end, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_cmpuint(c->rows->len, ==, 0);
}

static void
test_csv_too_many_fields(void)
{
	g_autoptr(GString) ok = g_string_new(NULL);
	g_autoptr(GString) wide = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(Collect) c = NULL;
	g_autoptr(Collect) bad = NULL;

	for (guint i = 0; i < 4096; i++)
		g_string_append(ok, i == 0 ? "\"f\"" : ",\"f\"");
	wide = g_string_new(ok->str);
	g_string_append_c(ok, '\n');
	c = parse_ok(ok->str, -1);
	g_assert_cmpuint(collect_width(c, 0), ==, 4096);

	/* one more, empty field after a trailing comma at the very end */
	g_string_append_c(wide, ',');
	bad = parse_whole(wide->str, -1, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_CORRUPT);
	g_assert_cmpstr(error->message, ==, "CSV line 1 (byte 0): more than 4096 fields");
	g_assert_cmpuint(bad->rows->len, ==, 0);
}

static void
test_csv_stop_and_resume(void)
{
	const gchar *first = "h1,h2\n\"a\",1\n\"b\",2\n\"c";
	const gchar *second = "\",3\n\"d\",4\ne,5";
	g_autofree gchar *both = g_strconcat(first, second, NULL);
	g_autoptr(Collect) expected = parse_ok(both, -1);
	g_autoptr(SflCsvParser) parser = sfl_csv_parser_new(0);
	g_autoptr(Collect) c = collect_new();
	g_autoptr(GError) error = NULL;
	guint rounds = 0;

	c->stop_each = TRUE;
	/* stops after the header with the rest of the chunk still to parse */
	g_assert_false(sfl_csv_parser_feed(parser, first, strlen(first), collect_cb, c, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(c->rows->len, ==, 1);
	g_assert_cmpuint(sfl_csv_parser_get_records(parser), ==, 1);
	g_assert_cmpuint(sfl_csv_parser_get_bytes(parser), ==, 6);

	/* resuming with nothing new hands out one buffered record at a time */
	g_assert_false(sfl_csv_parser_feed(parser, NULL, 0, collect_cb, c, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(c->rows->len, ==, 2);

	/* new data while stopped queues behind what is left */
	g_assert_false(sfl_csv_parser_feed(parser, second, strlen(second), collect_cb, c, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(c->rows->len, ==, 3);

	while (!sfl_csv_parser_feed(parser, NULL, 0, collect_cb, c, &error)) {
		g_assert_no_error(error);
		g_assert_cmpuint(++rounds, <, 10);
	}
	g_assert_cmpuint(c->rows->len, ==, 5);
	/* the last record has no newline: finish stops after it, then ends */
	g_assert_false(sfl_csv_parser_finish(parser, collect_cb, c, &error));
	g_assert_no_error(error);
	g_assert_true(sfl_csv_parser_finish(parser, collect_cb, c, &error));
	g_assert_no_error(error);
	g_assert_cmpstr(c->dump->str, ==, expected->dump->str);
	g_assert_cmpuint(sfl_csv_parser_get_records(parser), ==, 6);
	g_assert_cmpuint(sfl_csv_parser_get_bytes(parser), ==, strlen(both));
}

/* a stopped parse that is resumed by finish() alone */
static void
test_csv_stop_then_finish(void)
{
	const gchar *input = "1\n2\n3";
	g_autoptr(SflCsvParser) parser = sfl_csv_parser_new(0);
	g_autoptr(Collect) c = collect_new();
	g_autoptr(GError) error = NULL;
	guint rounds = 0;

	c->stop_each = TRUE;
	g_assert_false(sfl_csv_parser_feed(parser, input, strlen(input), collect_cb, c, &error));
	while (!sfl_csv_parser_finish(parser, collect_cb, c, &error)) {
		g_assert_no_error(error);
		g_assert_cmpuint(++rounds, <, 10);
	}
	g_assert_no_error(error);
	g_assert_cmpuint(c->rows->len, ==, 3);
	g_assert_cmpstr(collect_field(c, 2, 0), ==, "3");
}

static void
test_csv_embedded_newline_positions(void)
{
	const gchar *input = "\"a\nb\",c\r\n\"x\r\ny\"\n\"p\rq\"\n\nlast";
	g_autoptr(Collect) c = parse_ok(input, -1);

	g_assert_cmpuint(c->rows->len, ==, 4);
	g_assert_cmpuint(collect_line(c, 0), ==, 1);
	g_assert_cmpuint(collect_offset(c, 0), ==, 0);
	g_assert_cmpuint(collect_line(c, 1), ==, 3);
	g_assert_cmpuint(collect_offset(c, 1), ==, 9);
	g_assert_cmpuint(collect_line(c, 2), ==, 5);
	g_assert_cmpuint(collect_offset(c, 2), ==, 16);
	g_assert_cmpuint(collect_line(c, 3), ==, 8);
	g_assert_cmpuint(collect_offset(c, 3), ==, 23);
	g_assert_cmpstr(collect_field(c, 3, 0), ==, "last");
}

/* one generated value: plain, or one that needs quoting, sometimes long or non-ASCII */
static gchar *
gen_value(guint row, guint col)
{
	switch (g_test_rand_int_range(0, 10)) {
	case 0:
		return g_strdup("");
	case 1:
		return g_strdup_printf("say \"%u\", then, %u", row, col);
	case 2:
		return g_strdup_printf("line one\nline two %u\r\nthree", row);
	case 3:
		return g_strdup_printf("caf\xc3\xa9 \xe2\x82\xac%u \xf0\x9f\x98\x80", col);
	case 4: {
		gsize n = (gsize)g_test_rand_int_range(100, 3000);
		gchar *s = g_malloc(n + 1);
		for (gsize i = 0; i < n; i++)
			s[i] = (gchar)('a' + (i + row) % 26);
		s[n] = '\0';
		return s;
	}
	default:
		return g_strdup_printf("%u-%u", row, col);
	}
}

static void
test_csv_generated(void)
{
	const guint n_rows = 10000;
	const guint n_cols = 7;
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GPtrArray) expected = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) cuts = g_array_new(FALSE, FALSE, sizeof(gsize));
	g_autoptr(GError) error = NULL;
	g_autoptr(Collect) c = NULL;
	gsize at = 0;

	for (guint r = 0; r < n_rows; r++) {
		gboolean quote_all = g_test_rand_bit();
		for (guint col = 0; col < n_cols; col++) {
			g_autofree gchar *v = gen_value(r, col);
			gboolean special = strpbrk(v, ",\"\r\n") != NULL;
			if (col > 0)
				g_string_append_c(text, ',');
			if (quote_all || special) {
				g_autofree gchar *esc = NULL;
				g_auto(GStrv) parts = g_strsplit(v, "\"", -1);
				esc = g_strjoinv("\"\"", parts);
				g_string_append_printf(text, "\"%s\"", esc);
			} else {
				g_string_append(text, v);
			}
			g_ptr_array_add(expected, g_steal_pointer(&v));
		}
		g_string_append(text, g_test_rand_bit() ? "\n" : "\r\n");
	}
	while (TRUE) {
		/* tiny chunks as well as ones that hold many records */
		at += (gsize)(g_test_rand_bit() ? g_test_rand_int_range(1, 64)
						: g_test_rand_int_range(1, 70000));
		if (at >= text->len)
			break;
		g_array_append_val(cuts, at);
	}
	c = parse_split(text->str, text->len, &g_array_index(cuts, gsize, 0), cuts->len, 0, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(c->rows->len, ==, n_rows);
	for (guint r = 0; r < n_rows; r++) {
		g_assert_cmpuint(collect_width(c, r), ==, n_cols);
		for (guint col = 0; col < n_cols; col++)
			g_assert_cmpstr(collect_field(c, r, col), ==,
					g_ptr_array_index(expected, r * n_cols + col));
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/csv/simple", test_csv_simple);
	g_test_add_func("/csv/event-log-file", test_csv_event_log_file);
	g_test_add_func("/csv/embedded", test_csv_embedded);
	g_test_add_func("/csv/empty-fields", test_csv_empty_fields);
	g_test_add_func("/csv/many-empty-fields", test_csv_many_empty_fields);
	g_test_add_func("/csv/bom", test_csv_bom);
	g_test_add_func("/csv/line-ends", test_csv_line_ends);
	g_test_add_func("/csv/trailing-newline", test_csv_trailing_newline);
	g_test_add_func("/csv/every-split", test_csv_every_split);
	g_test_add_func("/csv/invalid-utf8", test_csv_invalid_utf8);
	g_test_add_func("/csv/field-limit", test_csv_field_limit);
	g_test_add_func("/csv/unterminated-quote", test_csv_unterminated_quote);
	g_test_add_func("/csv/stray-quote", test_csv_stray_quote);
	g_test_add_func("/csv/error-sticks", test_csv_error_sticks);
	g_test_add_func("/csv/too-many-fields", test_csv_too_many_fields);
	g_test_add_func("/csv/stop-and-resume", test_csv_stop_and_resume);
	g_test_add_func("/csv/stop-then-finish", test_csv_stop_then_finish);
	g_test_add_func("/csv/embedded-newline-positions", test_csv_embedded_newline_positions);
	g_test_add_func("/csv/generated", test_csv_generated);
	return g_test_run();
}
