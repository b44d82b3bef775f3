/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestLokiRejection"

#include "config.h"

#include <string.h>

#include "sfl-loki-rejection.h"
#include "sfl-loki-sink-private.h"

/* 2023-11-14T22:13:20.123456789Z, the entry the shapes in tests/data/loki-rejections name */
#define TS_NAMED  G_GINT64_CONSTANT(1700000000123456789)
#define TS_SECOND G_GINT64_CONSTANT(1700000000000000000)

static gchar *
read_shape(const gchar *name, gsize *len)
{
	g_autofree gchar *path =
		g_test_build_filename(G_TEST_DIST, "data", "loki-rejections", name, NULL);
	gchar *text = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_true(g_file_get_contents(path, &text, len, &error));
	g_assert_no_error(error);
	return text;
}

static SflLokiRejection *
parse_shape(const gchar *name)
{
	gsize len = 0;
	g_autofree gchar *text = read_shape(name, &len);

	return sfl_loki_rejection_parse(text, len);
}

static const SflLokiRejectedItem *
item_at(const SflLokiRejection *r, guint i)
{
	g_assert_cmpuint(i, <, r->items->len);
	return g_ptr_array_index(r->items, i);
}

static void
assert_stream(const SflLokiRejectedItem *item, const gchar *source)
{
	g_assert_cmpuint(item->n_labels, ==, 2);
	g_assert_cmpstr(item->names[0], ==, "job");
	g_assert_cmpstr(item->values[0], ==, "sf2loki");
	g_assert_cmpstr(item->names[1], ==, "source");
	g_assert_cmpstr(item->values[1], ==, source);
}

static void
test_distributor_too_old(void)
{
	g_autoptr(SflLokiRejection) r = parse_shape("distributor-too-old.txt");
	const SflLokiRejectedItem *item = NULL;

	g_assert_false(r->unparsed);
	g_assert_cmpuint(r->items->len, ==, 1);
	item = item_at(r, 0);
	assert_stream(item, "pubsub");
	g_assert_cmpstr(item->reason, ==, "greater_than_max_sample_age");
	g_assert_false(item->retryable);
	g_assert_cmpint(item->timestamp_ns, ==, TS_SECOND);
	g_assert_cmpint(item->precision_ns, ==, G_GINT64_CONSTANT(1000000000));
	g_assert_cmpint(item->line_bytes, ==, -1);
	g_assert_cmpuint(item->count, ==, 1);
	g_assert_cmpuint(r->n_summaries, ==, 0);
}

static void
test_distributor_grouped(void)
{
	g_autoptr(SflLokiRejection) r = parse_shape("distributor-grouped.txt");

	g_assert_false(r->unparsed);
	g_assert_cmpuint(r->items->len, ==, 2);
	assert_stream(item_at(r, 0), "pubsub");
	g_assert_cmpstr(item_at(r, 0)->reason, ==, "too_far_in_future");
	g_assert_cmpuint(item_at(r, 0)->count, ==, 2);
	g_assert_cmpint(item_at(r, 0)->timestamp_ns, ==, G_GINT64_CONSTANT(1893456000000000000));
	assert_stream(item_at(r, 1), "elf");
	g_assert_cmpstr(item_at(r, 1)->reason, ==, "line_too_long");
	g_assert_cmpint(item_at(r, 1)->line_bytes, ==, 300000);
	g_assert_cmpint(item_at(r, 1)->timestamp_ns, ==, -1);
	g_assert_false(item_at(r, 1)->retryable);
}

static void
test_mixed(void)
{
	g_autoptr(SflLokiRejection) r = parse_shape("mixed.txt");

	g_assert_false(r->unparsed);
	g_assert_cmpuint(r->items->len, ==, 3);
	g_assert_cmpstr(item_at(r, 0)->reason, ==, "greater_than_max_sample_age");
	g_assert_cmpstr(item_at(r, 1)->reason, ==, "max_label_names_per_series");
	g_assert_cmpuint(item_at(r, 1)->n_labels, ==, 3);
	g_assert_cmpstr(item_at(r, 1)->values[0], ==, "Login");
	g_assert_cmpint(item_at(r, 1)->timestamp_ns, ==, -1);
	g_assert_cmpstr(item_at(r, 2)->reason, ==, "too_far_in_future");
	assert_stream(item_at(r, 2), "api");
}

static void
test_ingester(void)
{
	g_autoptr(SflLokiRejection) r = parse_shape("ingester-too-far-behind.txt");
	g_autoptr(SflLokiRejection) legacy = parse_shape("ingester-legacy.txt");

	g_assert_false(r->unparsed);
	g_assert_cmpuint(r->items->len, ==, 1);
	assert_stream(item_at(r, 0), "pubsub");
	g_assert_cmpstr(item_at(r, 0)->reason, ==, "too_far_behind");
	g_assert_cmpint(item_at(r, 0)->timestamp_ns, ==, TS_NAMED);
	g_assert_cmpint(item_at(r, 0)->precision_ns, ==, 1);
	g_assert_cmpuint(r->n_summaries, ==, 1);
	g_assert_cmpuint(r->ignored, ==, 1);
	g_assert_cmpuint(r->total, ==, 3);
	g_assert_false(r->unlisted);

	g_assert_false(legacy->unparsed);
	g_assert_cmpuint(legacy->items->len, ==, 1);
	assert_stream(item_at(legacy, 0), "pubsub");
	g_assert_cmpstr(item_at(legacy, 0)->reason, ==, "out_of_order");
	g_assert_cmpint(item_at(legacy, 0)->timestamp_ns, ==, TS_NAMED);
	g_assert_cmpuint(legacy->ignored, ==, 1);
	g_assert_cmpuint(legacy->total, ==, 3);
}

static void
test_ingester_rpc_wrapped(void)
{
	g_autoptr(SflLokiRejection) r = parse_shape("ingester-rpc-wrapped.txt");

	g_assert_false(r->unparsed);
	g_assert_cmpuint(r->items->len, ==, 1);
	assert_stream(item_at(r, 0), "pubsub");
	g_assert_cmpstr(item_at(r, 0)->reason, ==, "out_of_order");
	g_assert_cmpint(item_at(r, 0)->timestamp_ns, ==, TS_NAMED);
	g_assert_cmpuint(r->ignored, ==, 1);
}

static void
test_ingester_rate_limited(void)
{
	g_autoptr(SflLokiRejection) r = parse_shape("ingester-rate-limited.txt");

	g_assert_false(r->unparsed);
	g_assert_cmpuint(r->items->len, ==, 1);
	g_assert_cmpstr(item_at(r, 0)->reason, ==, "per_stream_rate_limit");
	g_assert_true(item_at(r, 0)->retryable);
	assert_stream(item_at(r, 0), "pubsub");
}

static void
test_ingester_truncated(void)
{
	g_autoptr(SflLokiRejection) r = parse_shape("ingester-truncated.txt");

	g_assert_false(r->unparsed);
	g_assert_true(r->unlisted);
	g_assert_cmpuint(r->items->len, ==, 3);
	g_assert_cmpint(item_at(r, 1)->timestamp_ns, ==, G_GINT64_CONSTANT(1700000001500000000));
	g_assert_cmpint(item_at(r, 1)->precision_ns, ==, 100000000);
	/* the entries past the listed ones: a stream-wide item to retry */
	g_assert_cmpstr(item_at(r, 2)->reason, ==, "unlisted");
	g_assert_true(item_at(r, 2)->retryable);
	g_assert_cmpuint(item_at(r, 2)->count, ==, 1);
	g_assert_cmpint(item_at(r, 2)->timestamp_ns, ==, -1);
	assert_stream(item_at(r, 2), "pubsub");
}

static void
test_names_nothing(void)
{
	g_autoptr(SflLokiRejection) r = parse_shape("unparseable.txt");
	g_autoptr(SflLokiRejection) rate = parse_shape("tenant-rate-limited.txt");
	g_autoptr(SflLokiRejection) empty = sfl_loki_rejection_parse(NULL, 0);

	g_assert_cmpuint(r->items->len, ==, 0);
	g_assert_true(r->unparsed);
	g_assert_cmpuint(rate->items->len, ==, 0);
	g_assert_cmpuint(empty->items->len, ==, 0);
	g_assert_false(empty->unparsed);
}

static void
test_escapes_and_zones(void)
{
	static const gchar body[] = "entry for stream '{job=\"a\\\"b\\\\c\\nd\", k=\"\\u00e9\"}' "
				    "has timestamp too old: "
				    "2023-11-14T23:13:20+01:00, oldest acceptable timestamp is: x";
	g_autoptr(SflLokiRejection) r = sfl_loki_rejection_parse(body, strlen(body));

	g_assert_cmpuint(r->items->len, ==, 1);
	g_assert_cmpstr(item_at(r, 0)->values[0], ==, "a\"b\\c\nd");
	g_assert_cmpstr(item_at(r, 0)->values[1], ==, "\xc3\xa9");
	g_assert_cmpint(item_at(r, 0)->timestamp_ns, ==, TS_SECOND);
}

static void
test_garbage_is_bounded(void)
{
	/* truncated mid-message at every length: never more than one item, never a crash */
	gsize len = 0;
	g_autofree gchar *text = read_shape("mixed.txt", &len);

	for (gsize cut = 0; cut <= len; cut++) {
		g_autoptr(SflLokiRejection) r = sfl_loki_rejection_parse(text, cut);
		g_assert_cmpuint(r->items->len, <=, 3);
	}
}

static void
test_many_items_capped(void)
{
	g_autoptr(GString) body = g_string_new(NULL);
	g_autoptr(SflLokiRejection) r = NULL;

	for (guint i = 0; i < SFL_LOKI_REJECTION_MAX_ITEMS + 10; i++)
		g_string_append_printf(body, "%sstream '{j=\"x\"}' has 16 label names; limit 15",
				       i > 0 ? "; " : "");
	r = sfl_loki_rejection_parse(body->str, body->len);
	g_assert_cmpuint(r->items->len, ==, SFL_LOKI_REJECTION_MAX_ITEMS);
	g_assert_true(r->unparsed);
}

/* --- the sink's verdicts on a batch ------------------------------------------------------- */

typedef struct {
	SflLabelsInterner *interner;
	SflBatch *batch;
} Fixture;

static void
fixture_add(Fixture *fx, const gchar *source, gint64 ts, gsize line_len)
{
	const SflLabelPair pairs[] = { { "job", "sf2loki" }, { "source", source } };
	g_autoptr(SflLabels) labels = sfl_labels_intern(fx->interner, pairs, 2, NULL);
	g_autofree gchar *line = g_strnfill(line_len, 'x');

	sfl_batch_add(fx->batch,
		      sfl_entry_new(ts, labels, line, (gssize)line_len, NULL, 0, "k", "v"));
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	(void)data;
	fx->interner = sfl_labels_interner_new();
	fx->batch = sfl_batch_new();
	fixture_add(fx, "pubsub", TS_NAMED - 1000, 10);
	fixture_add(fx, "pubsub", TS_NAMED, 10);
	fixture_add(fx, "elf", TS_NAMED, 300000);
	fixture_add(fx, "pubsub", TS_NAMED + G_GINT64_CONSTANT(2000000000), 10);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	(void)data;
	sfl_batch_free(fx->batch);
	sfl_labels_interner_unref(fx->interner);
}

static GArray *
judge_shape(Fixture *fx, guint status, const gchar *name)
{
	gsize len = 0;
	g_autofree gchar *text = read_shape(name, &len);

	return sfl_loki_sink_judge(status, text, len, fx->batch);
}

static const SflSinkVerdict *
verdict(GArray *v, guint i)
{
	return &g_array_index(v, SflSinkVerdict, i);
}

static void
test_judge_distributor(Fixture *fx, gconstpointer data)
{
	g_autoptr(GArray) v = judge_shape(fx, 400, "distributor-too-old.txt");

	(void)data;
	g_assert_nonnull(v);
	g_assert_cmpuint(v->len, ==, 4);
	/* the same second as named: both pubsub entries in it; Go's format truncates */
	g_assert_cmpstr(verdict(v, 0)->reason, ==, "greater_than_max_sample_age");
	g_assert_cmpstr(verdict(v, 1)->reason, ==, "greater_than_max_sample_age");
	g_assert_null(verdict(v, 2)->reason);
	g_assert_null(verdict(v, 3)->reason);
}

static void
test_judge_ingester(Fixture *fx, gconstpointer data)
{
	g_autoptr(GArray) v = judge_shape(fx, 400, "ingester-too-far-behind.txt");
	g_autoptr(GArray) rate = judge_shape(fx, 429, "ingester-rate-limited.txt");
	g_autoptr(GArray) tenant = judge_shape(fx, 429, "tenant-rate-limited.txt");
	g_autoptr(GArray) bad = judge_shape(fx, 400, "unparseable.txt");

	(void)data;
	g_assert_nonnull(v);
	g_assert_null(verdict(v, 0)->reason);
	g_assert_cmpstr(verdict(v, 1)->reason, ==, "too_far_behind");
	g_assert_false(verdict(v, 1)->retryable);
	g_assert_null(verdict(v, 2)->reason);
	g_assert_null(verdict(v, 3)->reason);

	g_assert_nonnull(rate);
	g_assert_cmpstr(verdict(rate, 1)->reason, ==, "per_stream_rate_limit");
	g_assert_true(verdict(rate, 1)->retryable);
	g_assert_null(verdict(rate, 0)->reason);

	g_assert_null(tenant);
	g_assert_null(bad);
}

static void
test_judge_line_and_unlisted(Fixture *fx, gconstpointer data)
{
	g_autoptr(GArray) grouped = NULL;
	g_autoptr(GArray) truncated = judge_shape(fx, 400, "ingester-truncated.txt");
	static const gchar line_only[] =
		"Max entry size '262144' bytes exceeded for stream '{job=\"sf2loki\", "
		"source=\"elf\"}' while adding an entry with length '300000' bytes";

	(void)data;
	grouped = sfl_loki_sink_judge(400, line_only, strlen(line_only), fx->batch);
	g_assert_nonnull(grouped);
	g_assert_cmpstr(verdict(grouped, 2)->reason, ==, "line_too_long");
	g_assert_null(verdict(grouped, 0)->reason);
	g_assert_null(verdict(grouped, 1)->reason);

	/* 22:13:20.123456789 named, 22:13:21.5 not in the batch: we cannot place it */
	g_assert_null(truncated);
}

static void
test_judge_unlisted(Fixture *fx, gconstpointer data)
{
	/* two ignored, one listed: the stream's other entries are unknown, so they go again */
	static const gchar body[] =
		"entry with timestamp 2023-11-14 22:13:20.123456789 +0000 UTC ignored, reason: "
		"'entry out of order',\nuser 'fake', total ignored: 2 out of 3 for stream: "
		"{job=\"sf2loki\", source=\"pubsub\"}";
	g_autoptr(GArray) v = sfl_loki_sink_judge(400, body, strlen(body), fx->batch);

	(void)data;
	g_assert_nonnull(v);
	g_assert_cmpstr(verdict(v, 0)->reason, ==, "unlisted");
	g_assert_true(verdict(v, 0)->retryable);
	g_assert_cmpstr(verdict(v, 1)->reason, ==, "out_of_order");
	g_assert_false(verdict(v, 1)->retryable);
	g_assert_null(verdict(v, 2)->reason);
	g_assert_cmpstr(verdict(v, 3)->reason, ==, "unlisted");
}

static void
test_judge_unknown_stream(Fixture *fx, gconstpointer data)
{
	/* a name we did not send must not make everything else count as stored */
	static const gchar body[] = "entry for stream '{job=\"other\"}' has timestamp too old: "
				    "2023-11-14T22:13:20Z, oldest acceptable timestamp is: x";
	g_autoptr(GArray) v = sfl_loki_sink_judge(400, body, strlen(body), fx->batch);

	(void)data;
	g_assert_null(v);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/loki-rejection/distributor/too-old", test_distributor_too_old);
	g_test_add_func("/sfl/loki-rejection/distributor/grouped", test_distributor_grouped);
	g_test_add_func("/sfl/loki-rejection/distributor/mixed", test_mixed);
	g_test_add_func("/sfl/loki-rejection/ingester/summary", test_ingester);
	g_test_add_func("/sfl/loki-rejection/ingester/rpc-wrapped", test_ingester_rpc_wrapped);
	g_test_add_func("/sfl/loki-rejection/ingester/rate-limited", test_ingester_rate_limited);
	g_test_add_func("/sfl/loki-rejection/ingester/truncated", test_ingester_truncated);
	g_test_add_func("/sfl/loki-rejection/names-nothing", test_names_nothing);
	g_test_add_func("/sfl/loki-rejection/escapes-and-zones", test_escapes_and_zones);
	g_test_add_func("/sfl/loki-rejection/bounded/truncated", test_garbage_is_bounded);
	g_test_add_func("/sfl/loki-rejection/bounded/items", test_many_items_capped);
	g_test_add("/sfl/loki-rejection/judge/distributor", Fixture, NULL, fixture_setup,
		   test_judge_distributor, fixture_teardown);
	g_test_add("/sfl/loki-rejection/judge/ingester", Fixture, NULL, fixture_setup,
		   test_judge_ingester, fixture_teardown);
	g_test_add("/sfl/loki-rejection/judge/line-and-unlisted", Fixture, NULL, fixture_setup,
		   test_judge_line_and_unlisted, fixture_teardown);
	g_test_add("/sfl/loki-rejection/judge/unlisted", Fixture, NULL, fixture_setup,
		   test_judge_unlisted, fixture_teardown);
	g_test_add("/sfl/loki-rejection/judge/unknown-stream", Fixture, NULL, fixture_setup,
		   test_judge_unknown_stream, fixture_teardown);
	return g_test_run();
}
