/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestLokiEncode"

#include "config.h"

#include <string.h>

#include <jansson.h>
#include <snappy-c.h>
#include <zlib.h>

#include "logproto.pb-c.h"
#include "sfl-autocleanups.h"
#include "sfl-entry.h"
#include "sfl-error.h"
#include "sfl-loki-encode.h"

/* the tests unpack what the encoder packed, so they own this one cleanup */
static void
test_push_request_free(Logproto__PushRequest *req)
{
	logproto__push_request__free_unpacked(req, NULL);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Logproto__PushRequest, test_push_request_free)

static SflLabels *
test_labels(SflLabelsInterner *interner, const gchar *first_name, ...) G_GNUC_NULL_TERMINATED;

/* name, value, ..., NULL */
static SflLabels *
test_labels(SflLabelsInterner *interner, const gchar *first_name, ...)
{
	g_autoptr(GArray) pairs = g_array_new(FALSE, FALSE, sizeof(SflLabelPair));
	g_autoptr(GError) error = NULL;
	SflLabels *labels;
	va_list ap;

	va_start(ap, first_name);
	for (const gchar *name = first_name; name != NULL; name = va_arg(ap, const gchar *)) {
		SflLabelPair pair = { name, va_arg(ap, const gchar *) };

		g_array_append_val(pairs, pair);
	}
	va_end(ap);
	labels = sfl_labels_intern(interner, (const SflLabelPair *)(gpointer)pairs->data,
				   pairs->len, &error);
	g_assert_no_error(error);
	return labels;
}

static gchar *
test_render(const SflLabelPair *pairs, guint n_pairs)
{
	g_autoptr(GError) error = NULL;
	gsize len = 0;
	gchar *text = sfl_loki_label_string(pairs, n_pairs, &len, &error);

	g_assert_no_error(error);
	g_assert_cmpuint(len, ==, strlen(text));
	return text;
}

static void
test_label_string_format(void)
{
	const SflLabelPair unsorted[] = { { "source", "pubsub" }, { "job", "sf2loki" } };
	const SflLabelPair tricky[] = {
		{ "a", "say \"hi\"" },
		{ "b", "C:\\path\\" },
		{ "c", "two\nlines\ttab" },
		{ "d", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" },
		{ "e", "" },
	};
	g_autofree gchar *plain = test_render(unsorted, G_N_ELEMENTS(unsorted));
	g_autofree gchar *escaped = test_render(tricky, G_N_ELEMENTS(tricky));
	g_autofree gchar *empty = test_render(NULL, 0);

	g_assert_cmpstr(plain, ==, "{job=\"sf2loki\",source=\"pubsub\"}");
	/* only backslash, quote and newline are escaped; tabs and non-ASCII go verbatim */
	g_assert_cmpstr(escaped, ==,
			"{a=\"say \\\"hi\\\"\",b=\"C:\\\\path\\\\\",c=\"two\\nlines\ttab\","
			"d=\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",e=\"\"}");
	g_assert_cmpstr(empty, ==, "{}");
}

static void
test_label_string_names(void)
{
	const gchar *good[] = { "a", "_", "__name__", "A_9", "service_name" };
	const gchar *bad[] = { "", "9a", "a-b", "a.b", "a b", "\xc3\xa9", "a=" };

	for (guint i = 0; i < G_N_ELEMENTS(good); i++)
		g_assert_true(sfl_loki_label_name_is_valid(good[i]));
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		SflLabelPair pair = { bad[i], "v" };
		g_autoptr(GError) error = NULL;
		g_autofree gchar *text = NULL;

		g_assert_false(sfl_loki_label_name_is_valid(bad[i]));
		text = sfl_loki_label_string(&pair, 1, NULL, &error);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_assert_null(text);
	}
}

static void
test_label_string_duplicate(void)
{
	const SflLabelPair dup[] = { { "job", "a" }, { "org", "x" }, { "job", "b" } };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *text = sfl_loki_label_string(dup, G_N_ELEMENTS(dup), NULL, &error);

	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_null(text);
}

static void
test_intern(void)
{
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflLabels) a = test_labels(interner, "job", "sf2loki", "source", "elf", NULL);
	g_autoptr(SflLabels) b = test_labels(interner, "source", "elf", "job", "sf2loki", NULL);
	g_autoptr(SflLabels) c = test_labels(interner, "job", "sf2loki", "source", "pubsub", NULL);
	g_autoptr(SflLabels) again = NULL;
	g_autoptr(GError) error = NULL;
	const SflLabelPair bad = { "no-dash", "x" };
	SflLabels *failed;
	const SflLabels *first = a;
	gsize len = 0;

	/* equal sets in any order are one object, rendered once */
	g_assert_true(a == b);
	g_assert_true(a != c);
	g_assert_cmpuint(sfl_labels_interner_size(interner), ==, 2);
	g_assert_cmpstr(sfl_labels_get_string(a, &len), ==, "{job=\"sf2loki\",source=\"elf\"}");
	g_assert_cmpuint(len, ==, strlen(sfl_labels_get_string(a, NULL)));
	g_assert_cmpuint(sfl_labels_get_n_pairs(a), ==, 2);
	g_assert_cmpstr(sfl_labels_get_pair(a, 0)->name, ==, "job");
	g_assert_cmpstr(sfl_labels_get_pair(a, 1)->value, ==, "elf");
	g_assert_cmpstr(sfl_labels_lookup(a, "source"), ==, "elf");
	g_assert_null(sfl_labels_lookup(a, "org"));

	/* the last reference takes the set out of the table */
	g_clear_pointer(&c, sfl_labels_unref);
	g_assert_cmpuint(sfl_labels_interner_size(interner), ==, 1);
	g_clear_pointer(&b, sfl_labels_unref);
	g_assert_cmpuint(sfl_labels_interner_size(interner), ==, 1);
	again = test_labels(interner, "source", "elf", "job", "sf2loki", NULL);
	g_assert_true(again == first);

	failed = sfl_labels_intern(interner, &bad, 1, &error);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_null(failed);
}

static void
test_intern_outlives_interner(void)
{
	SflLabelsInterner *interner = sfl_labels_interner_new();
	g_autoptr(SflLabels) labels = test_labels(interner, "job", "x", NULL);
	const SflLabelPair broken[] = { { "job", "bad\xff" } };
	g_autoptr(SflLabels) repaired = NULL;
	g_autoptr(GError) error = NULL;

	repaired = sfl_labels_intern(interner, broken, 1, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(sfl_labels_get_string(repaired, NULL), ==, "{job=\"bad\xef\xbf\xbd\"}");
	/* label sets keep their interner alive; ASan checks the rest */
	sfl_labels_interner_unref(interner);
	g_assert_cmpstr(sfl_labels_get_string(labels, NULL), ==, "{job=\"x\"}");
}

static void
test_entry_model(void)
{
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflLabels) labels = test_labels(interner, "job", "sf2loki", NULL);
	const SflLabelPair md[] = { { "level", "info" }, { "absent", NULL }, { "bad", "x\xc0y" } };
	const gchar raw[] = "nul\0inside";
	g_autoptr(SflEntry) entry = NULL;
	g_autoptr(SflEntry) repaired = NULL;
	g_autoptr(SflEntry) marker = NULL;

	entry = sfl_entry_new(42, labels, "hello", -1, md, G_N_ELEMENTS(md), "ckey", "cval");
	g_assert_cmpint(entry->timestamp_ns, ==, 42);
	g_assert_true(entry->labels == labels);
	g_assert_false(entry->checkpoint_only);
	g_assert_cmpstr(entry->line, ==, "hello");
	g_assert_cmpuint(entry->line_len, ==, 5);
	/* a NULL value is dropped, as the original drops None fields; bad UTF-8 is repaired */
	g_assert_cmpuint(entry->n_metadata, ==, 2);
	g_assert_cmpstr(entry->metadata[0].name, ==, "level");
	g_assert_cmpstr(entry->metadata[1].value, ==, "x\xef\xbf\xbdy");
	g_assert_cmpstr(sfl_entry_lookup_metadata(entry, "level"), ==, "info");
	g_assert_null(sfl_entry_lookup_metadata(entry, "absent"));
	g_assert_cmpstr(entry->checkpoint_key, ==, "ckey");
	g_assert_cmpstr(entry->checkpoint_value, ==, "cval");

	/* a NUL inside a line would cut a protobuf string short, so it is replaced */
	repaired = sfl_entry_new(1, labels, raw, sizeof(raw) - 1, NULL, 0, NULL, NULL);
	g_assert_cmpstr(repaired->line, ==, "nul\xef\xbf\xbdinside");
	g_assert_cmpuint(repaired->line_len, ==, strlen(repaired->line));
	g_assert_null(repaired->checkpoint_key);
	g_assert_null(repaired->checkpoint_value);

	marker = sfl_entry_new_checkpoint_only(7, "k", NULL);
	g_assert_true(marker->checkpoint_only);
	g_assert_null(marker->labels);
	g_assert_cmpstr(marker->line, ==, "");
	g_assert_cmpuint(marker->line_len, ==, 0);
	g_assert_cmpuint(marker->n_metadata, ==, 0);
	g_assert_cmpstr(marker->checkpoint_key, ==, "k");
	g_assert_null(marker->checkpoint_value);
}

/* the longest prefix the original keeps, computed the slow way */
static gsize
test_floor_boundary(const gchar *s, gsize limit)
{
	gsize best = 0;

	for (const gchar *p = s; (gsize)(p - s) <= limit && *p != '\0'; p = g_utf8_next_char(p))
		best = (gsize)(p - s);
	if (strlen(s) <= limit)
		best = strlen(s);
	return best;
}

static void
test_truncate_exact(void)
{
	gchar line[101];
	gsize len;

	for (guint i = 0; i < 100; i++)
		line[i] = (gchar)('a' + i % 10);
	line[100] = '\0';
	/* the marker is 34 bytes here, so a 40-byte cap keeps 6 bytes of text */
	len = sfl_loki_truncate_line(line, 100, 40);
	g_assert_cmpuint(len, ==, 40);
	g_assert_cmpstr(line, ==, "abcdef\xe2\x80\xa6[truncated, original 100 bytes]");
}

static void
test_truncate_utf8_boundary(void)
{
	/* the caps below the length put the cut inside 3- and 4-byte characters as well as between
	 */
	const gchar *src = "ab\xe2\x82\xac\xe2\x82\xac\xf0\x9f\x98\x80xyz\xe2\x82\xac"
			   "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xe2\x82\xac\xe2\x82\xac"
			   "0123456789\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac";
	gsize src_len = strlen(src);

	for (gsize cap = 34; cap < src_len; cap++) {
		g_autofree gchar *line = g_strdup(src);
		g_autofree gchar *marker = g_strdup_printf(SFL_LOKI_TRUNCATION_MARKER_FMT, src_len);
		gsize marker_len = strlen(marker);
		gsize keep = test_floor_boundary(src, cap - marker_len);
		gsize len = sfl_loki_truncate_line(line, src_len, cap);

		g_assert_cmpuint(len, <=, cap);
		g_assert_cmpuint(len, ==, keep + marker_len);
		g_assert_cmpuint(strlen(line), ==, len);
		g_assert_true(g_utf8_validate(line, (gssize)len, NULL));
		g_assert_cmpmem(line, keep, src, keep);
		g_assert_cmpstr(line + keep, ==, marker);
	}
}

static void
test_truncate_marker_too_big(void)
{
	/* a cap below the marker's size hard-cuts on a character boundary, no marker */
	gchar line[] = "0123456\xe2\x82\xac"
		       "0123456789012345678901234567890123456789";
	gsize len = sfl_loki_truncate_line(line, strlen(line), 9);

	g_assert_cmpuint(len, ==, 7);
	g_assert_cmpstr(line, ==, "0123456");
}

static void
test_truncate_idempotent_and_disabled(void)
{
	g_autoptr(GString) big = g_string_new(NULL);
	g_autofree gchar *once = NULL;
	gsize len;
	gsize len2;

	for (guint i = 0; i < 1000; i++)
		g_string_append(big, "\xc3\xa9x");
	len = sfl_loki_truncate_line(big->str, big->len, 257);
	g_assert_cmpuint(len, <=, 257);
	once = g_strndup(big->str, len);
	len2 = sfl_loki_truncate_line(big->str, len, 257);
	g_assert_cmpuint(len2, ==, len);
	g_assert_cmpstr(big->str, ==, once);
	/* 0 disables the cap; a line exactly at the cap is left alone */
	g_assert_cmpuint(sfl_loki_truncate_line(big->str, len, 0), ==, len);
	g_assert_cmpuint(sfl_loki_truncate_line(big->str, len, len), ==, len);
	g_assert_cmpstr(big->str, ==, once);
}

static void
test_batch_cap_lines(void)
{
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflLabels) labels = test_labels(interner, "job", "sf2loki", NULL);
	g_autoptr(SflBatch) batch = sfl_batch_new();
	g_autofree gchar *long_line = g_strnfill(1000, 'z');
	g_autoptr(SflBatch) slice = NULL;

	sfl_batch_add(batch, sfl_entry_new(1, labels, "short", -1, NULL, 0, NULL, NULL));
	sfl_batch_add(batch, sfl_entry_new(2, labels, long_line, -1, NULL, 0, NULL, NULL));
	sfl_batch_add(batch, sfl_entry_new_checkpoint_only(3, "k", "v"));
	g_assert_cmpuint(sfl_batch_get_length(batch), ==, 3);
	g_assert_cmpuint(sfl_batch_get_line_bytes(batch), ==, 1005);

	g_assert_cmpuint(sfl_batch_cap_lines(batch, 100), ==, 1);
	g_assert_cmpuint(sfl_batch_get(batch, 1)->line_len, ==, 100);
	g_assert_cmpuint(sfl_batch_get_line_bytes(batch), ==, 105);
	g_assert_true(g_str_has_suffix(sfl_batch_get(batch, 1)->line,
				       "\xe2\x80\xa6[truncated, original 1000 bytes]"));
	g_assert_cmpuint(sfl_batch_cap_lines(batch, 100), ==, 0);
	g_assert_cmpuint(sfl_batch_cap_lines(batch, 0), ==, 0);

	slice = sfl_batch_slice(batch, 1, 2);
	g_assert_cmpuint(sfl_batch_get_length(slice), ==, 2);
	g_assert_true(sfl_batch_get(slice, 0) == sfl_batch_get(batch, 1));
	g_assert_cmpuint(sfl_batch_get_line_bytes(slice), ==, 100);
}

/*
 * one batch that exercises everything: two label sets interleaved, timestamps out of order
 * and equal, checkpoint-only markers, unsorted metadata, escapes and non-ASCII; the sim
 * oracle decodes the same batch with third-party code
 */
static SflBatch *
test_sample_batch(SflLabelsInterner *interner)
{
	g_autoptr(SflLabels) a = test_labels(interner, "source", "pubsub", "job", "sf2loki", NULL);
	g_autoptr(SflLabels) b = test_labels(interner, "job", "sf2loki", "event_type",
					     "Login \"x\"\\y\nz \xc3\xa9", NULL);
	const SflLabelPair md0[] = { { "replay_id", "AAA" }, { "level", "info" } };
	const SflLabelPair md3[] = { { "level", "debug" } };
	const SflLabelPair md5[] = { { "user_id", "005xx" },
				     { "detail", "a \"b\" \\ \xe2\x82\xac" } };
	SflBatch *batch = sfl_batch_new();

	sfl_batch_add(batch, sfl_entry_new(1700000000000000300, a, "third by time", -1, md0,
					   G_N_ELEMENTS(md0), "pubsub:/event/A", "r1"));
	sfl_batch_add(batch,
		      sfl_entry_new(1700000000000000100, b, "b-one", -1, NULL, 0, NULL, NULL));
	sfl_batch_add(batch,
		      sfl_entry_new_checkpoint_only(1700000000000000500, "pubsub:/event/A", "r2"));
	sfl_batch_add(batch,
		      sfl_entry_new(1700000000000000100, a,
				    "first by time \xc3\xa9\xf0\x9f\x98\x80 \"q\" \\ \n\tend", -1,
				    md3, G_N_ELEMENTS(md3), NULL, NULL));
	sfl_batch_add(batch, sfl_entry_new(1700000000000000300, a, "equal ts, later in batch", -1,
					   NULL, 0, NULL, NULL));
	sfl_batch_add(batch, sfl_entry_new(1699999999999999999, b, "b-zero", -1, md5,
					   G_N_ELEMENTS(md5), NULL, NULL));
	sfl_batch_add(batch, sfl_entry_new(1700000000000000200, a, "ctl \x01 and \x1f", -1, NULL, 0,
					   NULL, NULL));
	return batch;
}

/* what test_sample_batch must decode to, as the JSON push body */
static const gchar *test_sample_expected_json =
	"{\"streams\": ["
	" {\"stream\": {\"job\": \"sf2loki\", \"source\": \"pubsub\"}, \"values\": ["
	"  [\"1700000000000000100\", \"first by time \\u00e9\\ud83d\\ude00 \\\"q\\\" \\\\ "
	"\\n\\tend\","
	"   {\"level\": \"debug\"}],"
	"  [\"1700000000000000200\", \"ctl \\u0001 and \\u001f\"],"
	"  [\"1700000000000000300\", \"third by time\", {\"replay_id\": \"AAA\", \"level\": "
	"\"info\"}],"
	"  [\"1700000000000000300\", \"equal ts, later in batch\"]]},"
	" {\"stream\": {\"event_type\": \"Login \\\"x\\\"\\\\y\\nz \\u00e9\", \"job\": "
	"\"sf2loki\"},"
	"  \"values\": ["
	"  [\"1699999999999999999\", \"b-zero\", {\"user_id\": \"005xx\", \"detail\": \"a "
	"\\\"b\\\" "
	"\\\\ \\u20ac\"}],"
	"  [\"1700000000000000100\", \"b-one\"]]}]}";

static void
test_json_body(void)
{
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflBatch) batch = test_sample_batch(interner);
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) got = NULL;
	g_autoptr(json_t) want = NULL;
	json_error_t jerr;
	json_t *first_values;
	gsize len = 0;
	const gchar *data;

	body = sfl_loki_encode_json(batch, SFL_LOKI_COMPRESSION_NONE, &error);
	g_assert_no_error(error);
	data = g_bytes_get_data(body, &len);
	got = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (got == NULL)
		g_error("body is not JSON: %s", jerr.text);
	want = json_loads(test_sample_expected_json, 0, &jerr);
	if (want == NULL)
		g_error("expected text is not JSON: %s", jerr.text);
	g_assert_true(json_equal(got, want));

	/* json_equal ignores object key order; arrays and the metadata order are checked here */
	first_values =
		json_object_get(json_array_get(json_object_get(got, "streams"), 0), "values");
	g_assert_cmpuint(json_array_size(json_array_get(first_values, 1)), ==, 2);
	g_assert_true(json_is_string(json_array_get(json_array_get(first_values, 0), 0)));
	g_assert_cmpstr(json_string_value(json_array_get(json_array_get(first_values, 3), 1)), ==,
			"equal ts, later in batch");
}

static GBytes *
test_gunzip(GBytes *gz)
{
	g_autoptr(GByteArray) out = g_byte_array_new();
	z_stream zs = { 0 };
	gsize len = 0;
	const guint8 *data = g_bytes_get_data(gz, &len);
	guint8 chunk[4096];
	gint rc;

	/* 15 + 16: gzip only, so a zlib or raw deflate body would fail here */
	g_assert_cmpint(inflateInit2(&zs, 15 + 16), ==, Z_OK);
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		rc = inflate(&zs, Z_NO_FLUSH);
		g_assert_true(rc == Z_OK || rc == Z_STREAM_END);
		g_byte_array_append(out, chunk, (guint)(sizeof(chunk) - zs.avail_out));
	} while (rc != Z_STREAM_END);
	g_assert_cmpuint(zs.avail_in, ==, 0);
	inflateEnd(&zs);
	return g_byte_array_free_to_bytes(g_steal_pointer(&out));
}

static void
test_json_gzip(void)
{
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflBatch) batch = test_sample_batch(interner);
	g_autoptr(GBytes) plain = NULL;
	g_autoptr(GBytes) gz = NULL;
	g_autoptr(GBytes) inflated = NULL;
	g_autoptr(GError) error = NULL;
	const guint8 *magic;

	plain = sfl_loki_encode(batch, SFL_LOKI_ENCODING_JSON, SFL_LOKI_COMPRESSION_NONE, &error);
	g_assert_no_error(error);
	gz = sfl_loki_encode(batch, SFL_LOKI_ENCODING_JSON, SFL_LOKI_COMPRESSION_GZIP, &error);
	g_assert_no_error(error);
	magic = g_bytes_get_data(gz, NULL);
	g_assert_cmpuint(magic[0], ==, 0x1f);
	g_assert_cmpuint(magic[1], ==, 0x8b);
	inflated = test_gunzip(gz);
	g_assert_true(g_bytes_equal(inflated, plain));
}

static GBytes *
test_unsnappy(GBytes *block)
{
	gsize len = 0;
	const gchar *data = g_bytes_get_data(block, &len);
	size_t out_len = 0;
	g_autofree gchar *out = NULL;

	g_assert_cmpint(snappy_validate_compressed_buffer(data, len), ==, SNAPPY_OK);
	g_assert_cmpint(snappy_uncompressed_length(data, len, &out_len), ==, SNAPPY_OK);
	out = g_malloc(out_len + 1);
	g_assert_cmpint(snappy_uncompress(data, len, out, &out_len), ==, SNAPPY_OK);
	return g_bytes_new_take(g_steal_pointer(&out), out_len);
}

static Logproto__PushRequest *
test_decode_protobuf(GBytes *body)
{
	g_autoptr(GBytes) raw = test_unsnappy(body);
	gsize len = 0;
	const guint8 *data = g_bytes_get_data(raw, &len);
	Logproto__PushRequest *req = logproto__push_request__unpack(NULL, len, data);

	g_assert_nonnull(req);
	return req;
}

static void
test_assert_entry(const Logproto__EntryAdapter *ea, gint64 seconds, gint32 nanos, const gchar *line,
		  guint n_metadata)
{
	g_assert_nonnull(ea->timestamp);
	g_assert_cmpint(ea->timestamp->seconds, ==, seconds);
	g_assert_cmpint(ea->timestamp->nanos, ==, nanos);
	g_assert_cmpuint(ea->line.len, ==, strlen(line));
	g_assert_cmpmem(ea->line.data, ea->line.len, line, strlen(line));
	g_assert_cmpuint(ea->n_structured_metadata, ==, n_metadata);
	g_assert_cmpuint(ea->n_parsed, ==, 0);
}

static void
test_protobuf_roundtrip(void)
{
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflBatch) batch = test_sample_batch(interner);
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(Logproto__PushRequest) req = NULL;
	Logproto__StreamAdapter *a;
	Logproto__StreamAdapter *b;

	body = sfl_loki_encode(batch, SFL_LOKI_ENCODING_PROTOBUF, SFL_LOKI_COMPRESSION_GZIP,
			       &error);
	g_assert_no_error(error);
	req = test_decode_protobuf(body);
	g_assert_cmpstr(req->format, ==, "");
	g_assert_cmpuint(req->n_streams, ==, 2);

	/* streams in order of first appearance, entries by time, batch order among ties */
	a = req->streams[0];
	g_assert_cmpstr(a->labels, ==, "{job=\"sf2loki\",source=\"pubsub\"}");
	g_assert_cmpuint(a->hash, ==, 0);
	g_assert_cmpuint(a->n_entries, ==, 4);
	test_assert_entry(a->entries[0], 1700000000, 100,
			  "first by time \xc3\xa9\xf0\x9f\x98\x80 \"q\" \\ \n\tend", 1);
	test_assert_entry(a->entries[1], 1700000000, 200, "ctl \x01 and \x1f", 0);
	test_assert_entry(a->entries[2], 1700000000, 300, "third by time", 2);
	test_assert_entry(a->entries[3], 1700000000, 300, "equal ts, later in batch", 0);
	/* structured metadata goes out sorted by name */
	g_assert_cmpstr(a->entries[2]->structured_metadata[0]->name, ==, "level");
	g_assert_cmpstr(a->entries[2]->structured_metadata[0]->value, ==, "info");
	g_assert_cmpstr(a->entries[2]->structured_metadata[1]->name, ==, "replay_id");
	g_assert_cmpstr(a->entries[2]->structured_metadata[1]->value, ==, "AAA");

	b = req->streams[1];
	g_assert_cmpstr(b->labels, ==,
			"{event_type=\"Login \\\"x\\\"\\\\y\\nz \xc3\xa9\",job=\"sf2loki\"}");
	g_assert_cmpuint(b->n_entries, ==, 2);
	test_assert_entry(b->entries[0], 1699999999, 999999999, "b-zero", 2);
	test_assert_entry(b->entries[1], 1700000000, 100, "b-one", 0);
	g_assert_cmpstr(b->entries[0]->structured_metadata[0]->name, ==, "detail");
	g_assert_cmpstr(b->entries[0]->structured_metadata[1]->name, ==, "user_id");
}

static void
test_protobuf_negative_time(void)
{
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflLabels) labels = test_labels(interner, "job", "x", NULL);
	g_autoptr(SflBatch) batch = sfl_batch_new();
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(Logproto__PushRequest) req = NULL;

	/* nanos stay in 0..999999999 before 1970, as google.protobuf.Timestamp requires */
	sfl_batch_add(batch, sfl_entry_new(-1, labels, "x", -1, NULL, 0, NULL, NULL));
	sfl_batch_add(batch, sfl_entry_new(0, labels, "", -1, NULL, 0, NULL, NULL));
	body = sfl_loki_encode_protobuf(batch, &error);
	g_assert_no_error(error);
	req = test_decode_protobuf(body);
	g_assert_cmpuint(req->n_streams, ==, 1);
	test_assert_entry(req->streams[0]->entries[0], -1, 999999999, "x", 0);
	test_assert_entry(req->streams[0]->entries[1], 0, 0, "", 0);
}

static GBytes *
test_hex(const gchar *hex)
{
	gsize n = strlen(hex) / 2;
	guint8 *out = g_malloc(n + 1);

	for (gsize i = 0; i < n; i++)
		out[i] = (guint8)(g_ascii_xdigit_value(hex[2 * i]) * 16 +
				  g_ascii_xdigit_value(hex[2 * i + 1]));
	return g_bytes_new_take(out, n);
}

static void
test_protobuf_vector(void)
{
	/* docs/internals/wire-notes.md "Test vector": encoded with protoc against Loki's own
	 * push.proto */
	const gchar *vector = "0a2f0a0f7b6a6f623d227366326c6f6b69227d121c0a0b0880e2cfaa0610959aef"
			      "3a120568656c6c6f1a060a016b120176";
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflLabels) labels = test_labels(interner, "job", "sf2loki", NULL);
	g_autoptr(SflBatch) batch = sfl_batch_new();
	const SflLabelPair md[] = { { "k", "v" } };
	g_autoptr(GBytes) want = test_hex(vector);
	g_autoptr(GBytes) want_block = NULL;
	g_autoptr(GBytes) raw = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GBytes) back = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *literal_hex = g_strconcat("31c0", vector, NULL);

	sfl_batch_add(batch,
		      sfl_entry_new(1700000000123456789, labels, "hello", -1, md, 1, NULL, NULL));
	raw = sfl_loki_encode_push_request(batch, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(g_bytes_get_size(raw), ==, 49);
	g_assert_true(g_bytes_equal(raw, want));

	/* libsnappy finds no repeats in 49 bytes, so it writes the all-literal block */
	body = sfl_loki_encode_protobuf(batch, &error);
	g_assert_no_error(error);
	want_block = test_hex(literal_hex);
	g_assert_true(g_bytes_equal(body, want_block));
	back = test_unsnappy(body);
	g_assert_true(g_bytes_equal(back, want));
}

static void
test_checkpoint_only_skipped(void)
{
	g_autoptr(SflBatch) batch = sfl_batch_new();
	g_autoptr(GBytes) raw = NULL;
	g_autoptr(GBytes) json = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GBytes) back = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) got = NULL;
	g_autoptr(json_t) want = json_pack("{s:[]}", "streams");
	gsize len = 0;
	const gchar *data;

	sfl_batch_add(batch, sfl_entry_new_checkpoint_only(1, "a", "1"));
	sfl_batch_add(batch, sfl_entry_new_checkpoint_only(2, "b", NULL));
	raw = sfl_loki_encode_push_request(batch, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(g_bytes_get_size(raw), ==, 0);
	body = sfl_loki_encode_protobuf(batch, &error);
	g_assert_no_error(error);
	back = test_unsnappy(body);
	g_assert_cmpuint(g_bytes_get_size(back), ==, 0);

	json = sfl_loki_encode_json(batch, SFL_LOKI_COMPRESSION_NONE, &error);
	g_assert_no_error(error);
	data = g_bytes_get_data(json, &len);
	got = json_loadb(data, len, 0, NULL);
	g_assert_nonnull(got);
	g_assert_true(json_equal(got, want));
}

static void
test_headers(void)
{
	g_assert_cmpstr(sfl_loki_content_type(SFL_LOKI_ENCODING_PROTOBUF), ==,
			"application/x-protobuf");
	g_assert_cmpstr(sfl_loki_content_type(SFL_LOKI_ENCODING_JSON), ==, "application/json");
	g_assert_cmpstr(
		sfl_loki_content_encoding(SFL_LOKI_ENCODING_PROTOBUF, SFL_LOKI_COMPRESSION_NONE),
		==, "snappy");
	g_assert_cmpstr(
		sfl_loki_content_encoding(SFL_LOKI_ENCODING_PROTOBUF, SFL_LOKI_COMPRESSION_GZIP),
		==, "snappy");
	g_assert_cmpstr(
		sfl_loki_content_encoding(SFL_LOKI_ENCODING_JSON, SFL_LOKI_COMPRESSION_GZIP), ==,
		"gzip");
	g_assert_null(sfl_loki_content_encoding(SFL_LOKI_ENCODING_JSON, SFL_LOKI_COMPRESSION_NONE));
}

/* --write-sample DIR: the bodies tests/sim/check_loki_decode.py hands to a third-party decoder */
static gint
test_write_samples(const gchar *dir)
{
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflBatch) batch = test_sample_batch(interner);
	const struct {
		const gchar *name;
		SflLokiEncoding encoding;
		SflLokiCompression compression;
	} samples[] = {
		{ "sample.pb.snappy", SFL_LOKI_ENCODING_PROTOBUF, SFL_LOKI_COMPRESSION_NONE },
		{ "sample.json", SFL_LOKI_ENCODING_JSON, SFL_LOKI_COMPRESSION_NONE },
		{ "sample.json.gz", SFL_LOKI_ENCODING_JSON, SFL_LOKI_COMPRESSION_GZIP },
	};

	for (guint i = 0; i < G_N_ELEMENTS(samples); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(GBytes) body = NULL;
		g_autofree gchar *path = g_build_filename(dir, samples[i].name, NULL);
		gsize len = 0;
		const gchar *data;

		body = sfl_loki_encode(batch, samples[i].encoding, samples[i].compression, &error);
		if (body == NULL) {
			g_printerr("encode %s: %s\n", samples[i].name, error->message);
			return 1;
		}
		data = g_bytes_get_data(body, &len);
		if (!g_file_set_contents(path, data, (gssize)len, &error)) {
			g_printerr("%s\n", error->message);
			return 1;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && g_strcmp0(argv[1], "--write-sample") == 0)
		return test_write_samples(argv[2]);

	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/loki-encode/label-string/format", test_label_string_format);
	g_test_add_func("/sfl/loki-encode/label-string/names", test_label_string_names);
	g_test_add_func("/sfl/loki-encode/label-string/duplicate", test_label_string_duplicate);
	g_test_add_func("/sfl/loki-encode/labels/intern", test_intern);
	g_test_add_func("/sfl/loki-encode/labels/outlive-interner", test_intern_outlives_interner);
	g_test_add_func("/sfl/loki-encode/entry/model", test_entry_model);
	g_test_add_func("/sfl/loki-encode/truncate/exact", test_truncate_exact);
	g_test_add_func("/sfl/loki-encode/truncate/utf8-boundary", test_truncate_utf8_boundary);
	g_test_add_func("/sfl/loki-encode/truncate/marker-too-big", test_truncate_marker_too_big);
	g_test_add_func("/sfl/loki-encode/truncate/idempotent",
			test_truncate_idempotent_and_disabled);
	g_test_add_func("/sfl/loki-encode/batch/cap-lines", test_batch_cap_lines);
	g_test_add_func("/sfl/loki-encode/json/body", test_json_body);
	g_test_add_func("/sfl/loki-encode/json/gzip", test_json_gzip);
	g_test_add_func("/sfl/loki-encode/protobuf/roundtrip", test_protobuf_roundtrip);
	g_test_add_func("/sfl/loki-encode/protobuf/negative-time", test_protobuf_negative_time);
	g_test_add_func("/sfl/loki-encode/protobuf/vector", test_protobuf_vector);
	g_test_add_func("/sfl/loki-encode/checkpoint-only-skipped", test_checkpoint_only_skipped);
	g_test_add_func("/sfl/loki-encode/headers", test_headers);
	return g_test_run();
}
