/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflBenchAvro"

#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <avro.h>
#include <jansson.h>

#include "sfl-autocleanups.h"
#include "sfl-avro.h"
#include "sfl-record.h"

/*
 * Pub/Sub decode cost: 200,000 LoginEventStream-like payloads (31 fields, unions with null,
 * doubles, a float, non-ASCII strings, bytes; encoded by python3-avro through
 * tests/sim/avro_vectors.py, 2,000 distinct events cycled) decoded and rendered to the
 * original's JSON line by sfl_avro_render_json. For comparison: the same events shaped through
 * an SflRecord (parsed back from the line, or decoded into it), and read with avro-c's generic
 * value API (decode only, no rendering), the path the decoder did not take. Prints events/s
 * and CPU-seconds per million; nothing here asserts a time.
 */

#define BENCH_EVENTS	    200000
#define BENCH_DISTINCT	    2000
#define BENCH_TARGET_EVENTS 300000.0

static gdouble
bench_cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (gdouble)ru.ru_utime.tv_sec + (gdouble)ru.ru_utime.tv_usec / 1e6 +
	       (gdouble)ru.ru_stime.tv_sec + (gdouble)ru.ru_stime.tv_usec / 1e6;
}

static const gchar *
bench_source_root(void)
{
	const gchar *root = g_getenv("SF2LOKI_SOURCE_ROOT");

	return root != NULL ? root : SFL_BENCH_SOURCE_ROOT;
}

/* the schema text and the payloads, from the third-party encoder */
static json_t *
bench_load(void)
{
	g_autofree gchar *script =
		g_build_filename(bench_source_root(), "tests", "sim", "avro_vectors.py", NULL);
	g_autofree gchar *count = g_strdup_printf("%d", BENCH_DISTINCT);
	const gchar *argv[] = { "/usr/bin/python3", script, "--bench", count, NULL };
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_autoptr(GError) error = NULL;
	json_error_t jerr;
	json_t *doc;
	gint status = 0;

	if (!g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
			  &status, &error))
		g_error("bench-avro: %s", error->message);
	if (!g_spawn_check_wait_status(status, &error))
		g_error("bench-avro: %s: %s\n%s", script, error->message, err);
	doc = json_loads(out, 0, &jerr);
	if (doc == NULL)
		g_error("bench-avro: %s printed bad JSON: %s", script, jerr.text);
	return doc;
}

static GBytes *
bench_unhex(const gchar *hex)
{
	gsize n = strlen(hex) / 2;
	guint8 *buf = g_malloc(MAX(n, 1));

	for (gsize i = 0; i < n; i++)
		buf[i] = (guint8)(g_ascii_xdigit_value(hex[2 * i]) << 4 |
				  g_ascii_xdigit_value(hex[2 * i + 1]));
	return g_bytes_new_take(buf, n);
}

/* avro-c's generic values over the same payloads: decode only */
static gdouble
bench_avro_c(const gchar *schema_json, GPtrArray *payloads, guint64 *fields_read)
{
	avro_schema_t schema = NULL;
	avro_value_iface_t *iface;
	avro_value_t value;
	avro_reader_t reader;
	gdouble cpu0;
	gdouble cpu;

	if (avro_schema_from_json_length(schema_json, strlen(schema_json), &schema) != 0)
		g_error("bench-avro: avro-c: %s", avro_strerror());
	iface = avro_generic_class_from_schema(schema);
	avro_generic_value_new(iface, &value);
	reader = avro_reader_memory("", 0);
	*fields_read = 0;
	cpu0 = bench_cpu_seconds();
	for (guint i = 0; i < BENCH_EVENTS; i++) {
		GBytes *payload = g_ptr_array_index(payloads, i % payloads->len);
		gsize len = 0;
		const gchar *data = g_bytes_get_data(payload, &len);
		size_t n = 0;

		avro_reader_memory_set_source(reader, data, (int64_t)len);
		avro_value_reset(&value);
		if (avro_value_read(reader, &value) != 0)
			g_error("bench-avro: avro-c: %s", avro_strerror());
		avro_value_get_size(&value, &n);
		*fields_read += n;
	}
	cpu = bench_cpu_seconds() - cpu0;
	avro_reader_free(reader);
	avro_value_decref(&value);
	avro_value_iface_decref(iface);
	avro_schema_decref(schema);
	return cpu;
}

/*
 * The floor: the payload walked as the schema says and nothing produced. Every decoder pays at
 * least this (varints read, lengths skipped, union branches chosen); the ratio of decode+render
 * to it is what producing the line costs on top.
 */
typedef struct {
	const guint8 *p;
	const guint8 *end;
} BenchCursor;

static guint64
bench_varint(BenchCursor *c)
{
	guint64 v = 0;

	for (guint shift = 0; c->p < c->end && shift < 64; shift += 7) {
		guint8 b = *c->p++;

		v |= (guint64)(b & 0x7f) << shift;
		if ((b & 0x80) == 0)
			break;
	}
	return v;
}

static gint64
bench_zigzag(BenchCursor *c)
{
	guint64 v = bench_varint(c);

	return (gint64)(v >> 1) ^ -(gint64)(v & 1);
}

static void
bench_skip(BenchCursor *c, gsize n)
{
	c->p = (gsize)(c->end - c->p) < n ? c->end : c->p + n;
}

/* the schema as a tree of plain nodes, so the walk pays for the payload, not for lookups */
typedef struct BenchNode BenchNode;
struct BenchNode {
	avro_type_t type;
	gsize fixed; /* AVRO_FIXED: its size */
	guint n;     /* record fields, union branches, or 1 (array items, map values) */
	BenchNode **kids;
};

static BenchNode *
bench_compile(avro_schema_t schema)
{
	BenchNode *node = g_new0(BenchNode, 1);

	node->type = avro_typeof(schema);
	switch (node->type) {
	case AVRO_FIXED:
		node->fixed = (gsize)avro_schema_fixed_size(schema);
		break;
	case AVRO_UNION:
		node->n = (guint)avro_schema_union_size(schema);
		node->kids = g_new0(BenchNode *, node->n);
		for (guint i = 0; i < node->n; i++)
			node->kids[i] = bench_compile(avro_schema_union_branch(schema, (int)i));
		break;
	case AVRO_RECORD:
		node->n = (guint)avro_schema_record_size(schema);
		node->kids = g_new0(BenchNode *, node->n);
		for (guint i = 0; i < node->n; i++)
			node->kids[i] = bench_compile(
				avro_schema_record_field_get_by_index(schema, (int)i));
		break;
	case AVRO_ARRAY:
	case AVRO_MAP:
		node->n = 1;
		node->kids = g_new0(BenchNode *, 1);
		node->kids[0] =
			bench_compile(node->type == AVRO_MAP ? avro_schema_map_values(schema)
							     : avro_schema_array_items(schema));
		break;
	default:
		break;
	}
	return node;
}

static void
bench_node_free(BenchNode *node)
{
	for (guint i = 0; i < node->n; i++)
		bench_node_free(node->kids[i]);
	g_free(node->kids);
	g_free(node);
}

static void
bench_walk(const BenchNode *node, BenchCursor *c)
{
	switch (node->type) {
	case AVRO_NULL:
		return;
	case AVRO_BOOLEAN:
		bench_skip(c, 1);
		return;
	case AVRO_INT32:
	case AVRO_INT64:
	case AVRO_ENUM:
		(void)bench_zigzag(c);
		return;
	case AVRO_FLOAT:
		bench_skip(c, 4);
		return;
	case AVRO_DOUBLE:
		bench_skip(c, 8);
		return;
	case AVRO_STRING:
	case AVRO_BYTES:
		bench_skip(c, (gsize)bench_zigzag(c));
		return;
	case AVRO_FIXED:
		bench_skip(c, node->fixed);
		return;
	case AVRO_UNION: {
		gint64 branch = bench_zigzag(c);

		if (branch < 0 || (guint64)branch >= node->n)
			g_error("bench-avro: union branch %" G_GINT64_FORMAT " out of range",
				branch);
		bench_walk(node->kids[branch], c);
		return;
	}
	case AVRO_RECORD:
		for (guint i = 0; i < node->n; i++)
			bench_walk(node->kids[i], c);
		return;
	case AVRO_ARRAY:
	case AVRO_MAP:
		for (gint64 n = bench_zigzag(c); n != 0 && c->p < c->end; n = bench_zigzag(c)) {
			if (n < 0) {
				n = -n;
				(void)bench_zigzag(c); /* the block's byte size */
			}
			for (gint64 k = 0; k < n; k++) {
				if (node->type == AVRO_MAP)
					bench_skip(c, (gsize)bench_zigzag(c));
				bench_walk(node->kids[0], c);
			}
		}
		return;
	default:
		g_error("bench-avro: the floor does not walk Avro type %d", node->type);
	}
}

static gdouble
bench_floor(const gchar *schema_json, GPtrArray *payloads)
{
	avro_schema_t schema = NULL;
	gsize left_over = 0;
	gdouble cpu0;
	gdouble cpu;

	BenchNode *root;

	if (avro_schema_from_json_length(schema_json, strlen(schema_json), &schema) != 0)
		g_error("bench-avro: avro-c: %s", avro_strerror());
	root = bench_compile(schema);
	cpu0 = bench_cpu_seconds();
	for (guint i = 0; i < BENCH_EVENTS; i++) {
		GBytes *payload = g_ptr_array_index(payloads, i % payloads->len);
		gsize len = 0;
		const guint8 *data = g_bytes_get_data(payload, &len);
		BenchCursor c = { data, data + len };

		bench_walk(root, &c);
		left_over += (gsize)(c.end - c.p);
	}
	cpu = bench_cpu_seconds() - cpu0;
	/* a walk that ends early read nothing real: the floor would be too low */
	if (left_over != 0)
		g_error("bench-avro: the floor walk left %" G_GSIZE_FORMAT " bytes unread",
			left_over);
	bench_node_free(root);
	avro_schema_decref(schema);
	return cpu;
}

/*
 * The two ways a source can shape the event after decoding (transforms, metadata, timestamps
 * need fields, not text): parse the rendered line back with jansson, or decode straight into a
 * record; both end in sfl_record_append_json, the line the entry carries.
 */
static gdouble
bench_shaped(SflAvroSchema *schema, GPtrArray *payloads, gboolean reparse, guint64 *line_bytes)
{
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autoptr(GString) text = g_string_sized_new(2048);
	g_autoptr(GString) line = g_string_sized_new(2048);
	g_autoptr(GError) error = NULL;
	gdouble cpu0 = bench_cpu_seconds();

	*line_bytes = 0;
	for (guint i = 0; i < BENCH_EVENTS; i++) {
		GBytes *payload = g_ptr_array_index(payloads, i % payloads->len);
		gsize len = 0;
		const guint8 *data = g_bytes_get_data(payload, &len);
		g_autoptr(json_t) doc = NULL;

		sfl_record_reset(record);
		if (reparse) {
			g_string_truncate(text, 0);
			if (!sfl_avro_render_json(schema, data, len, text, &error))
				g_error("bench-avro: %s", error->message);
			doc = json_loadb(text->str, text->len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
					 NULL);
			if (doc == NULL)
				g_error("bench-avro: the line does not parse back");
			sfl_record_add_json_object(record, doc);
		} else if (!sfl_avro_decode_record(schema, data, len, record, &doc, &error)) {
			g_error("bench-avro: %s", error->message);
		}
		g_string_truncate(line, 0);
		sfl_record_append_json(record, line);
		*line_bytes += line->len;
		sfl_record_reset(record);
	}
	return bench_cpu_seconds() - cpu0;
}

int
main(int argc, char **argv)
{
	g_autoptr(json_t) doc = NULL;
	g_autoptr(SflAvroSchema) schema = NULL;
	g_autoptr(GPtrArray) payloads =
		g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	g_autoptr(GString) line = g_string_sized_new(2048);
	g_autoptr(GError) error = NULL;
	const gchar *schema_json;
	json_t *list;
	json_t *hex;
	gsize idx;
	guint64 payload_bytes = 0;
	guint64 line_bytes = 0;
	guint64 fields_read = 0;
	gdouble cpu0;
	gdouble cpu_s;
	gdouble avro_c_cpu_s;
	gdouble floor_cpu_s;
	gdouble reparse_cpu_s;
	gdouble record_cpu_s;
	guint64 reparse_bytes = 0;
	guint64 record_bytes = 0;
	gdouble events_s;
	gint64 t0;
	gdouble wall_s;

	doc = bench_load();
	schema_json = json_string_value(json_object_get(doc, "schema"));
	list = json_object_get(doc, "payloads");
	json_array_foreach (list, idx, hex)
		g_ptr_array_add(payloads, bench_unhex(json_string_value(hex)));
	if (schema_json == NULL || payloads->len == 0)
		g_error("bench-avro: no payloads");
	schema = sfl_avro_schema_new(schema_json, &error);
	if (schema == NULL)
		g_error("bench-avro: %s", error->message);

	cpu0 = bench_cpu_seconds();
	t0 = g_get_monotonic_time();
	for (guint i = 0; i < BENCH_EVENTS; i++) {
		GBytes *payload = g_ptr_array_index(payloads, i % payloads->len);
		gsize len = 0;
		const guint8 *data = g_bytes_get_data(payload, &len);

		g_string_truncate(line, 0);
		if (!sfl_avro_render_json(schema, data, len, line, &error))
			g_error("bench-avro: payload %u: %s", i % payloads->len, error->message);
		payload_bytes += len;
		line_bytes += line->len;
	}
	wall_s = (gdouble)(g_get_monotonic_time() - t0) / 1e6;
	cpu_s = bench_cpu_seconds() - cpu0;
	events_s = BENCH_EVENTS / cpu_s;

	reparse_cpu_s = bench_shaped(schema, payloads, TRUE, &reparse_bytes);
	record_cpu_s = bench_shaped(schema, payloads, FALSE, &record_bytes);
	if (reparse_bytes != line_bytes || record_bytes != line_bytes)
		g_error("bench-avro: the shaped lines differ from the rendered ones");
	avro_c_cpu_s = bench_avro_c(schema_json, payloads, &fields_read);
	floor_cpu_s = bench_floor(schema_json, payloads);
	/* a record's size is its field count: proof the values were really filled */
	if (fields_read % BENCH_EVENTS != 0 || fields_read == 0)
		g_error("bench-avro: avro-c read %" G_GUINT64_FORMAT " fields", fields_read);

	g_print("bench-avro: %d LoginEventStream-like events (%u distinct), mean payload %.0f "
		"bytes, mean line %.0f bytes\n",
		BENCH_EVENTS, payloads->len, (gdouble)payload_bytes / BENCH_EVENTS,
		(gdouble)line_bytes / BENCH_EVENTS);
	g_print("  decode+render: cpu %.3f s, wall %.3f s, %.0f events per CPU-second, %.2f "
		"CPU-s per 1M events\n",
		cpu_s, wall_s, events_s, cpu_s * 1e6 / BENCH_EVENTS);
	g_print("  render, parse back with jansson, re-render from a record: %.0f events per "
		"CPU-second, %.2f CPU-s per 1M events\n",
		BENCH_EVENTS / reparse_cpu_s, reparse_cpu_s * 1e6 / BENCH_EVENTS);
	g_print("  sfl_avro_decode_record, render from the record: %.0f events per CPU-second, "
		"%.2f CPU-s per 1M events\n",
		BENCH_EVENTS / record_cpu_s, record_cpu_s * 1e6 / BENCH_EVENTS);
	g_print("  avro-c generic values, decode only: cpu %.3f s, %.0f events per CPU-second, "
		"%.2f CPU-s per 1M events\n",
		avro_c_cpu_s, BENCH_EVENTS / avro_c_cpu_s, avro_c_cpu_s * 1e6 / BENCH_EVENTS);
	g_print("  floor, the payload walked by its schema, nothing produced: %.0f events per "
		"CPU-second, %.2f CPU-s per 1M events\n",
		BENCH_EVENTS / floor_cpu_s, floor_cpu_s * 1e6 / BENCH_EVENTS);
	g_print("  decode+render ratio to floor: %.2fx\n", cpu_s / floor_cpu_s);
	g_print("  throughput target %.0f events/s on one core: %s\n", BENCH_TARGET_EVENTS,
		events_s >= BENCH_TARGET_EVENTS ? "PASS" : "FAIL");
	return EXIT_SUCCESS;
}
