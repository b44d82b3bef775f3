/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBenchSinkEncode"

#include "config.h"

#include <string.h>
#include <sys/resource.h>

#include <snappy-c.h>

#include "sfl-entry.h"
#include "sfl-loki-encode.h"

/*
 * The Loki sink's CPU cost per entry: 1,000,000 realistic entries (~600-byte sorted-key JSON
 * lines, two label sets picked at random, two structured-metadata pairs) encoded as protobuf +
 * snappy in batches of 1000, the sink's default max_entries. The baseline is snappy alone on
 * the same line bytes in the same chunks, so the ratio shows what grouping and protobuf add on
 * top of the compression we cannot avoid. Nothing here asserts a time.
 */

#define BENCH_BATCH_ENTRIES    1000
#define BENCH_DISTINCT_BATCHES 20
#define BENCH_TOTAL_ENTRIES    1000000

typedef struct {
	gdouble wall_s;
	gdouble cpu_s;
} BenchTimes;

static gdouble
bench_cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (gdouble)ru.ru_utime.tv_sec + (gdouble)ru.ru_utime.tv_usec / 1e6 +
	       (gdouble)ru.ru_stime.tv_sec + (gdouble)ru.ru_stime.tv_usec / 1e6;
}

static glong
bench_peak_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* an EventLogFile-like row as the original renders it: sorted keys, ", " and ": " */
static void
bench_line(GString *out, GRand *rand, guint seq)
{
	g_string_printf(out,
			"{\"API_TYPE\": \"REST\", \"CLIENT_IP\": \"10.%u.%u.%u\", \"CPU_TIME\": "
			"\"%u\", \"DB_TOTAL_TIME\": \"%u\", \"EVENT_TYPE\": \"API\", "
			"\"LOGIN_KEY\": \"%08x%08x\", \"METHOD_NAME\": \"query\", "
			"\"ORGANIZATION_ID\": \"00D5j00000AbCdE\", \"REQUEST_ID\": "
			"\"4%013u-%06x\", \"REQUEST_SIZE\": \"%u\", \"REQUEST_STATUS\": \"S\", "
			"\"RESPONSE_SIZE\": \"%u\", \"ROWS_PROCESSED\": \"%u\", \"RUN_TIME\": "
			"\"%u\", \"SESSION_KEY\": \"%08x%08x%08x\", \"TIMESTAMP\": "
			"\"20260101%06u.%03u\", \"TIMESTAMP_DERIVED\": "
			"\"2026-01-01T%02u:%02u:%02u.%03uZ\", \"URI\": "
			"\"/services/data/v59.0/query\", \"USER_AGENT\": \"%u\", \"USER_ID\": "
			"\"0055j00000%05u\", "
			"\"ENTITY_NAME\": \"Account\"}",
			g_rand_int_range(rand, 0, 255), g_rand_int_range(rand, 0, 255),
			g_rand_int_range(rand, 0, 255), g_rand_int_range(rand, 1, 500),
			g_rand_int_range(rand, 1, 90000000), g_rand_int(rand), g_rand_int(rand),
			seq, g_rand_int_range(rand, 0, 0xffffff), g_rand_int_range(rand, 0, 4096),
			g_rand_int_range(rand, 0, 1 << 20), g_rand_int_range(rand, 0, 2000),
			g_rand_int_range(rand, 1, 3000), g_rand_int(rand), g_rand_int(rand),
			g_rand_int(rand), seq % 1000000, seq % 1000, (seq / 3600000) % 24,
			(seq / 60000) % 60, (seq / 1000) % 60, seq % 1000,
			g_rand_int_range(rand, 1000, 9999), g_rand_int_range(rand, 0, 99999));
}

static GPtrArray *
bench_build_batches(SflLabelsInterner *interner, guint64 *line_bytes)
{
	const SflLabelPair set_a[] = { { "job", "sf2loki" },
				       { "service_name", "salesforce" },
				       { "source", "eventlogfile" },
				       { "event_type", "API" } };
	const SflLabelPair set_b[] = { { "job", "sf2loki" },
				       { "service_name", "salesforce" },
				       { "source", "pubsub" },
				       { "event_type", "LoginEventStream" } };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflLabels) a = sfl_labels_intern(interner, set_a, G_N_ELEMENTS(set_a), &error);
	g_autoptr(SflLabels) b = sfl_labels_intern(interner, set_b, G_N_ELEMENTS(set_b), &error);
	g_autoptr(GRand) rand = g_rand_new_with_seed(20260101);
	g_autoptr(GString) line = g_string_new(NULL);
	GPtrArray *batches = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_batch_free);
	gint64 ts = G_GINT64_CONSTANT(1767225600000000000);
	guint seq = 0;

	g_assert_no_error(error);
	*line_bytes = 0;
	for (guint n = 0; n < BENCH_DISTINCT_BATCHES; n++) {
		SflBatch *batch = sfl_batch_new();

		for (guint i = 0; i < BENCH_BATCH_ENTRIES; i++) {
			g_autofree gchar *user = g_strdup_printf("0055j00000%05u", seq % 99991);
			const SflLabelPair md[] = { { "user_id", user }, { "level", "info" } };

			bench_line(line, rand, seq++);
			ts += g_rand_int_range(rand, 1000, 5000000);
			/* level is on every real entry in the original, plus one source field */
			sfl_batch_add(batch, sfl_entry_new(ts, g_rand_boolean(rand) ? a : b,
							   line->str, (gssize)line->len, md,
							   G_N_ELEMENTS(md), "elf:API", "cursor"));
		}
		*line_bytes += sfl_batch_get_line_bytes(batch);
		g_ptr_array_add(batches, batch);
	}
	return batches;
}

static BenchTimes
bench_encode(GPtrArray *batches, gboolean compress, guint64 *out_bytes)
{
	gdouble cpu0 = bench_cpu_seconds();
	gint64 wall0 = g_get_monotonic_time();
	BenchTimes t;

	*out_bytes = 0;
	for (guint n = 0; n < BENCH_TOTAL_ENTRIES / BENCH_BATCH_ENTRIES; n++) {
		const SflBatch *batch = g_ptr_array_index(batches, n % batches->len);
		g_autoptr(GError) error = NULL;
		g_autoptr(GBytes) body = compress ? sfl_loki_encode_protobuf(batch, &error)
						  : sfl_loki_encode_push_request(batch, &error);

		g_assert_no_error(error);
		*out_bytes += g_bytes_get_size(body);
	}
	t.cpu_s = bench_cpu_seconds() - cpu0;
	t.wall_s = (gdouble)(g_get_monotonic_time() - wall0) / G_USEC_PER_SEC;
	return t;
}

/* the floor: snappy on the same line bytes, chunked the same way, nothing else */
static BenchTimes
bench_snappy_only(GPtrArray *batches, guint64 *out_bytes)
{
	g_autoptr(GPtrArray) joined = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	g_autofree gchar *scratch = NULL;
	gsize scratch_len = 0;
	gdouble cpu0;
	gint64 wall0;
	BenchTimes t;

	for (guint n = 0; n < batches->len; n++) {
		const SflBatch *batch = g_ptr_array_index(batches, n);
		GString *all = g_string_sized_new(sfl_batch_get_line_bytes(batch));

		for (guint i = 0; i < sfl_batch_get_length(batch); i++)
			g_string_append_len(all, sfl_batch_get(batch, i)->line,
					    (gssize)sfl_batch_get(batch, i)->line_len);
		scratch_len = MAX(scratch_len, snappy_max_compressed_length(all->len));
		g_ptr_array_add(joined, g_string_free_to_bytes(all));
	}
	scratch = g_malloc(scratch_len);

	*out_bytes = 0;
	cpu0 = bench_cpu_seconds();
	wall0 = g_get_monotonic_time();
	for (guint n = 0; n < BENCH_TOTAL_ENTRIES / BENCH_BATCH_ENTRIES; n++) {
		GBytes *in = g_ptr_array_index(joined, n % joined->len);
		size_t out_len = scratch_len;
		gsize in_len = 0;
		const gchar *data = g_bytes_get_data(in, &in_len);

		if (snappy_compress(data, in_len, scratch, &out_len) != SNAPPY_OK)
			g_error("snappy_compress failed");
		*out_bytes += out_len;
	}
	t.cpu_s = bench_cpu_seconds() - cpu0;
	t.wall_s = (gdouble)(g_get_monotonic_time() - wall0) / G_USEC_PER_SEC;
	return t;
}

static void
bench_report(const gchar *what, BenchTimes t, guint64 in_bytes, guint64 out_bytes)
{
	gdouble mib = 1024.0 * 1024.0;

	g_print("%-28s %10.0f entries/s  in %7.1f MiB/s  out %7.1f MiB/s  "
		"%6.3f CPU-s/M entries  out/in %.3f\n",
		what, BENCH_TOTAL_ENTRIES / t.wall_s, (gdouble)in_bytes / mib / t.wall_s,
		(gdouble)out_bytes / mib / t.wall_s, t.cpu_s * 1e6 / BENCH_TOTAL_ENTRIES,
		(gdouble)out_bytes / (gdouble)in_bytes);
}

int
main(int argc, char **argv)
{
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(GPtrArray) batches = NULL;
	guint64 sample_line_bytes = 0;
	guint64 line_bytes;
	guint64 pb_bytes = 0;
	guint64 body_bytes = 0;
	guint64 snappy_bytes = 0;
	BenchTimes pb;
	BenchTimes body;
	BenchTimes baseline;

	batches = bench_build_batches(interner, &sample_line_bytes);
	/* the distinct batches are cycled to reach the total; scale the byte count the same way */
	line_bytes = sample_line_bytes * (BENCH_TOTAL_ENTRIES / BENCH_BATCH_ENTRIES) /
		     BENCH_DISTINCT_BATCHES;
	g_print("%u entries in batches of %u (%u distinct), mean line %.0f bytes, "
		"%.1f MiB of lines\n",
		BENCH_TOTAL_ENTRIES, BENCH_BATCH_ENTRIES, BENCH_DISTINCT_BATCHES,
		(gdouble)line_bytes / BENCH_TOTAL_ENTRIES, (gdouble)line_bytes / (1024.0 * 1024.0));

	/* one untimed pass warms caches and the allocator */
	bench_encode(batches, TRUE, &body_bytes);
	pb = bench_encode(batches, FALSE, &pb_bytes);
	body = bench_encode(batches, TRUE, &body_bytes);
	baseline = bench_snappy_only(batches, &snappy_bytes);

	bench_report("protobuf only", pb, line_bytes, pb_bytes);
	bench_report("protobuf + snappy (sink)", body, line_bytes, body_bytes);
	bench_report("snappy on lines alone", baseline, line_bytes, snappy_bytes);
	g_print("sink CPU / snappy-alone CPU: %.2fx; peak RSS %ld KiB\n",
		body.cpu_s / baseline.cpu_s, bench_peak_rss_kib());
	return 0;
}
