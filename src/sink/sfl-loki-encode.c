/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLokiEncode"

#include "config.h"

#include "sfl-loki-encode.h"

#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>
#include <zlib.h>

#include "logproto.pb-c.h"
#include "sfl-error.h"
#include "sfl-pyjson.h"

#define SFL_LOKI_NS_PER_SECOND G_GINT64_CONSTANT(1000000000)

/* one stream of the request: a run of layout->order */
typedef struct {
	SflLabels *labels;
	guint start;
	guint n;
} SflLokiStream;

/* the stream layout both encoders share: which entries, grouped how, in what order */
typedef struct {
	GArray *streams;
	guint *order;
	guint n_entries;
	guint n_metadata;
} SflLokiLayout;

static void
sfl_loki_layout_free(SflLokiLayout *self)
{
	if (self == NULL)
		return;
	if (self->streams != NULL)
		g_array_unref(self->streams);
	g_free(self->order);
	g_free(self);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflLokiLayout, sfl_loki_layout_free)

static gint
sfl_loki_order_cmp(gconstpointer a, gconstpointer b, gpointer user_data)
{
	const SflBatch *batch = user_data;
	gint64 ta = sfl_batch_get(batch, *(const guint *)a)->timestamp_ns;
	gint64 tb = sfl_batch_get(batch, *(const guint *)b)->timestamp_ns;

	return ta < tb ? -1 : ta > tb ? 1 : 0;
}

/*
 * groups the real entries by label set, streams in order of first appearance, each stream in
 * timestamp order; g_qsort_with_data is a stable merge sort, so equal timestamps keep batch
 * order
 */
static SflLokiLayout *
sfl_loki_layout_new(const SflBatch *batch)
{
	g_autoptr(SflLokiLayout) self = g_new0(SflLokiLayout, 1);
	g_autoptr(GHashTable) by_ptr = g_hash_table_new(g_direct_hash, g_direct_equal);
	g_autoptr(GHashTable) by_string = g_hash_table_new(g_str_hash, g_str_equal);
	g_autofree guint *stream_of = NULL;
	g_autofree guint *fill = NULL;
	guint n = sfl_batch_get_length(batch);
	SflLabels *last_labels = NULL;
	guint last_stream = 0;

	self->streams = g_array_new(FALSE, FALSE, sizeof(SflLokiStream));
	stream_of = g_new(guint, n + 1);
	for (guint i = 0; i < n; i++) {
		SflEntry *entry = sfl_batch_get(batch, i);
		gpointer hit;

		stream_of[i] = G_MAXUINT;
		if (entry->checkpoint_only || entry->labels == NULL)
			continue;
		self->n_entries++;
		self->n_metadata += entry->n_metadata;
		/* batches come in runs of one label set: skip the lookups for a run */
		if (entry->labels != last_labels) {
			hit = g_hash_table_lookup(by_ptr, entry->labels);
			/* equal sets from two interners are two pointers with one string */
			if (hit == NULL) {
				hit = g_hash_table_lookup(
					by_string, sfl_labels_get_string(entry->labels, NULL));
				if (hit == NULL) {
					SflLokiStream stream = { entry->labels, 0, 0 };

					g_array_append_val(self->streams, stream);
					hit = GUINT_TO_POINTER(self->streams->len);
					g_hash_table_insert(by_string,
							    (gpointer)sfl_labels_get_string(
								    entry->labels, NULL),
							    hit);
				}
				g_hash_table_insert(by_ptr, entry->labels, hit);
			}
			last_labels = entry->labels;
			last_stream = GPOINTER_TO_UINT(hit) - 1;
		}
		stream_of[i] = last_stream;
		g_array_index(self->streams, SflLokiStream, last_stream).n++;
	}

	/* counting sort into one index array keeps batch order inside each stream */
	fill = g_new0(guint, self->streams->len + 1);
	for (guint s = 0, start = 0; s < self->streams->len; s++) {
		SflLokiStream *stream = &g_array_index(self->streams, SflLokiStream, s);

		stream->start = start;
		fill[s] = start;
		start += stream->n;
	}
	self->order = g_new(guint, self->n_entries + 1);
	for (guint i = 0; i < n; i++) {
		if (stream_of[i] != G_MAXUINT)
			self->order[fill[stream_of[i]]++] = i;
	}
	for (guint s = 0; s < self->streams->len; s++) {
		SflLokiStream *stream = &g_array_index(self->streams, SflLokiStream, s);
		guint *run = self->order + stream->start;
		gboolean sorted = TRUE;

		for (guint k = 1; k < stream->n && sorted; k++)
			sorted = sfl_batch_get(batch, run[k - 1])->timestamp_ns <=
				 sfl_batch_get(batch, run[k])->timestamp_ns;
		if (!sorted)
			g_qsort_with_data(run, (gint)stream->n, sizeof(guint), sfl_loki_order_cmp,
					  (gpointer)batch);
	}
	return g_steal_pointer(&self);
}

static gint
sfl_loki_pb_pair_cmp(const Logproto__LabelPairAdapter *a, const Logproto__LabelPairAdapter *b)
{
	gint rc = strcmp(a->name, b->name);

	return rc != 0 ? rc : strcmp(a->value, b->value);
}

/* the original sends structured metadata sorted by name; lists are short, so insertion sort */
static void
sfl_loki_pb_sort_pairs(Logproto__LabelPairAdapter **pairs, gsize n)
{
	for (gsize i = 1; i < n; i++) {
		Logproto__LabelPairAdapter *cur = pairs[i];
		gsize j = i;

		while (j > 0 && sfl_loki_pb_pair_cmp(pairs[j - 1], cur) > 0) {
			pairs[j] = pairs[j - 1];
			j--;
		}
		pairs[j] = cur;
	}
}

/**
 * sfl_loki_encode_push_request:
 * @batch: the entries to send
 * @error: (nullable): unused today; kept so the signature can grow limits
 *
 * The serialised, uncompressed logproto.PushRequest (see the header for its shape). The
 * message tree borrows every string from the batch; only the arrays are allocated.
 *
 * Returns: (transfer full): the protobuf bytes
 */
GBytes *
sfl_loki_encode_push_request(const SflBatch *batch, GError **error)
{
	g_autoptr(SflLokiLayout) layout = NULL;
	g_autofree Logproto__StreamAdapter *streams = NULL;
	g_autofree Logproto__StreamAdapter **stream_ptrs = NULL;
	g_autofree Logproto__EntryAdapter *entries = NULL;
	g_autofree Logproto__EntryAdapter **entry_ptrs = NULL;
	g_autofree Logproto__Timestamp *stamps = NULL;
	g_autofree Logproto__LabelPairAdapter *pairs = NULL;
	g_autofree Logproto__LabelPairAdapter **pair_ptrs = NULL;
	Logproto__PushRequest request = LOGPROTO__PUSH_REQUEST__INIT;
	guint n_streams;
	gsize next_entry = 0;
	gsize next_pair = 0;
	gsize size;
	guint8 *buf;

	g_return_val_if_fail(batch != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	layout = sfl_loki_layout_new(batch);
	n_streams = layout->streams->len;
	streams = g_new(Logproto__StreamAdapter, n_streams + 1);
	stream_ptrs = g_new(Logproto__StreamAdapter *, n_streams + 1);
	entries = g_new(Logproto__EntryAdapter, layout->n_entries + 1);
	entry_ptrs = g_new(Logproto__EntryAdapter *, layout->n_entries + 1);
	stamps = g_new(Logproto__Timestamp, layout->n_entries + 1);
	pairs = g_new(Logproto__LabelPairAdapter, layout->n_metadata + 1);
	pair_ptrs = g_new(Logproto__LabelPairAdapter *, layout->n_metadata + 1);

	for (guint s = 0; s < n_streams; s++) {
		const SflLokiStream *stream = &g_array_index(layout->streams, SflLokiStream, s);
		Logproto__StreamAdapter *sa = &streams[s];

		logproto__stream_adapter__init(sa);
		sa->labels = (gchar *)sfl_labels_get_string(stream->labels, NULL);
		sa->n_entries = stream->n;
		sa->entries = &entry_ptrs[next_entry];
		stream_ptrs[s] = sa;
		for (guint k = 0; k < stream->n; k++) {
			const SflEntry *entry =
				sfl_batch_get(batch, layout->order[stream->start + k]);
			Logproto__EntryAdapter *ea = &entries[next_entry];
			Logproto__Timestamp *ts = &stamps[next_entry];
			gint64 seconds = entry->timestamp_ns / SFL_LOKI_NS_PER_SECOND;
			gint64 nanos = entry->timestamp_ns % SFL_LOKI_NS_PER_SECOND;

			/* Timestamp.nanos is never negative, also before 1970 */
			if (nanos < 0) {
				nanos += SFL_LOKI_NS_PER_SECOND;
				seconds--;
			}
			logproto__timestamp__init(ts);
			ts->seconds = seconds;
			ts->nanos = (gint32)nanos;
			logproto__entry_adapter__init(ea);
			ea->timestamp = ts;
			ea->line.data = (guint8 *)entry->line;
			ea->line.len = entry->line_len;
			ea->n_structured_metadata = entry->n_metadata;
			ea->structured_metadata = &pair_ptrs[next_pair];
			for (guint m = 0; m < entry->n_metadata; m++) {
				Logproto__LabelPairAdapter *lp = &pairs[next_pair + m];

				logproto__label_pair_adapter__init(lp);
				lp->name = (gchar *)entry->metadata[m].name;
				lp->value = (gchar *)entry->metadata[m].value;
				pair_ptrs[next_pair + m] = lp;
			}
			sfl_loki_pb_sort_pairs(ea->structured_metadata, entry->n_metadata);
			next_pair += entry->n_metadata;
			entry_ptrs[next_entry++] = ea;
		}
	}
	request.n_streams = n_streams;
	request.streams = stream_ptrs;

	size = logproto__push_request__get_packed_size(&request);
	buf = g_malloc(size + 1);
	logproto__push_request__pack(&request, buf);
	return g_bytes_new_take(buf, size);
}

/**
 * sfl_loki_snappy_compress:
 * @data: (array length=len): bytes to compress
 * @len: their length
 * @error: (nullable): %SFL_ERROR_INTERNAL when snappy fails or the input is too large
 *
 * One snappy raw block (uncompressed length as a varint, then elements): what Loki's
 * RawSnappy decoder reads. Not the framing format.
 *
 * Returns: (transfer full) (nullable): the block, or %NULL with @error set
 */
GBytes *
sfl_loki_snappy_compress(const guint8 *data, gsize len, GError **error)
{
	g_autofree gchar *out = NULL;
	size_t out_len;
	snappy_status status;

	g_return_val_if_fail(data != NULL || len == 0, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	/* the block preamble stores the length in 32 bits */
	if (len > G_MAXUINT32) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL,
			    "push body of %" G_GSIZE_FORMAT " bytes is too large for snappy", len);
		return NULL;
	}
	out_len = snappy_max_compressed_length(len);
	out = g_malloc(out_len);
	status = snappy_compress((const gchar *)(data != NULL ? data : (const guint8 *)""), len,
				 out, &out_len);
	if (status != SNAPPY_OK) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL,
			    "snappy compression failed with status %d", (gint)status);
		return NULL;
	}
	/* the bound is ~17% above the input; give the slack back before the body is queued */
	out = g_realloc(g_steal_pointer(&out), out_len);
	return g_bytes_new_take(g_steal_pointer(&out), out_len);
}

/**
 * sfl_loki_encode_protobuf:
 * @batch: the entries to send
 * @error: (nullable): %SFL_ERROR_INTERNAL when compression fails
 *
 * Returns: (transfer full) (nullable): the snappy-compressed PushRequest
 */
GBytes *
sfl_loki_encode_protobuf(const SflBatch *batch, GError **error)
{
	g_autoptr(GBytes) raw = NULL;
	gsize len = 0;
	const guint8 *data;

	g_return_val_if_fail(batch != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	raw = sfl_loki_encode_push_request(batch, error);
	if (raw == NULL)
		return NULL;
	data = g_bytes_get_data(raw, &len);
	return sfl_loki_snappy_compress(data, len, error);
}

static GString *
sfl_loki_json_render(const SflBatch *batch)
{
	g_autoptr(SflLokiLayout) layout = sfl_loki_layout_new(batch);
	GString *out;

	/* lines dominate; the rest is roughly 64 bytes of framing per entry */
	out = g_string_sized_new(sfl_batch_get_line_bytes(batch) + 64 * (gsize)layout->n_entries +
				 64);
	g_string_append(out, "{\"streams\":[");
	for (guint s = 0; s < layout->streams->len; s++) {
		const SflLokiStream *stream = &g_array_index(layout->streams, SflLokiStream, s);
		guint n_labels = sfl_labels_get_n_pairs(stream->labels);

		if (s > 0)
			g_string_append_c(out, ',');
		g_string_append(out, "{\"stream\":{");
		for (guint l = 0; l < n_labels; l++) {
			const SflLabelPair *pair = sfl_labels_get_pair(stream->labels, l);

			if (l > 0)
				g_string_append_c(out, ',');
			sfl_json_append_utf8(out, pair->name, strlen(pair->name));
			g_string_append_c(out, ':');
			sfl_json_append_utf8(out, pair->value, strlen(pair->value));
		}
		g_string_append(out, "},\"values\":[");
		for (guint k = 0; k < stream->n; k++) {
			const SflEntry *entry =
				sfl_batch_get(batch, layout->order[stream->start + k]);

			if (k > 0)
				g_string_append_c(out, ',');
			/* a string: Loki answers a JSON number with 400 */
			g_string_append_printf(out, "[\"%" G_GINT64_FORMAT "\",",
					       entry->timestamp_ns);
			sfl_json_append_utf8(out, entry->line, entry->line_len);
			if (entry->n_metadata > 0) {
				g_string_append(out, ",{");
				for (guint m = 0; m < entry->n_metadata; m++) {
					const SflLabelPair *md = &entry->metadata[m];

					if (m > 0)
						g_string_append_c(out, ',');
					sfl_json_append_utf8(out, md->name, strlen(md->name));
					g_string_append_c(out, ':');
					sfl_json_append_utf8(out, md->value, strlen(md->value));
				}
				g_string_append_c(out, '}');
			}
			g_string_append_c(out, ']');
		}
		g_string_append(out, "]}");
	}
	g_string_append(out, "]}");
	return out;
}

static GBytes *
sfl_loki_gzip(const gchar *data, gsize len, GError **error)
{
	g_autofree guint8 *out = NULL;
	z_stream zs = { 0 };
	uLong bound;
	gint rc;

	/* one deflate call takes at most a uInt of input; bodies are capped far below that */
	if (len > G_MAXUINT) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL,
			    "push body of %" G_GSIZE_FORMAT " bytes is too large for gzip", len);
		return NULL;
	}
	/* 15 + 16: the largest window, wrapped in a gzip header and trailer */
	rc = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (rc != Z_OK) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "gzip init failed: %s",
			    zs.msg != NULL ? zs.msg : zError(rc));
		return NULL;
	}
	bound = deflateBound(&zs, (uLong)len);
	out = g_malloc(bound);
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)bound;
	rc = deflate(&zs, Z_FINISH);
	if (rc != Z_STREAM_END) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INTERNAL, "gzip failed: %s",
			    zs.msg != NULL ? zs.msg : zError(rc));
		deflateEnd(&zs);
		return NULL;
	}
	deflateEnd(&zs);
	return g_bytes_new_take(g_steal_pointer(&out), zs.total_out);
}

/**
 * sfl_loki_encode_json:
 * @batch: the entries to send
 * @compression: %SFL_LOKI_COMPRESSION_GZIP to gzip the body
 * @error: (nullable): %SFL_ERROR_INTERNAL when compression fails
 *
 * Compact JSON with raw UTF-8 (Loki parses it; only the values matter), timestamps as
 * decimal nanosecond strings.
 *
 * Returns: (transfer full) (nullable): the body, or %NULL with @error set
 */
GBytes *
sfl_loki_encode_json(const SflBatch *batch, SflLokiCompression compression, GError **error)
{
	g_autoptr(GString) text = NULL;

	g_return_val_if_fail(batch != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	text = sfl_loki_json_render(batch);
	if (compression == SFL_LOKI_COMPRESSION_GZIP)
		return sfl_loki_gzip(text->str, text->len, error);
	return g_string_free_to_bytes(g_steal_pointer(&text));
}

/**
 * sfl_loki_encode:
 * @batch: the entries to send
 * @encoding: protobuf or JSON
 * @compression: gzip for JSON; protobuf is always snappy and ignores it
 * @error: (nullable): %SFL_ERROR_INTERNAL when compression fails
 *
 * Returns: (transfer full) (nullable): the push body, or %NULL with @error set
 */
GBytes *
sfl_loki_encode(const SflBatch *batch, SflLokiEncoding encoding, SflLokiCompression compression,
		GError **error)
{
	g_return_val_if_fail(batch != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (encoding == SFL_LOKI_ENCODING_JSON)
		return sfl_loki_encode_json(batch, compression, error);
	return sfl_loki_encode_protobuf(batch, error);
}

typedef struct {
	SflBatch *batch; /* a slice holding its own entry references */
	SflLokiEncoding encoding;
	SflLokiCompression compression;
} SflEncodeJob;

static void
sfl_encode_job_free(gpointer data)
{
	SflEncodeJob *job = data;
	sfl_batch_free(job->batch);
	g_free(job);
}

static void
sfl_loki_encode_thread(GTask *task, gpointer source_object, gpointer task_data,
		       GCancellable *cancellable)
{
	SflEncodeJob *job = task_data;
	GError *error = NULL;
	GBytes *body = sfl_loki_encode(job->batch, job->encoding, job->compression, &error);

	if (body == NULL)
		g_task_return_error(task, error);
	else
		g_task_return_pointer(task, body, (GDestroyNotify)g_bytes_unref);
}

/**
 * sfl_loki_encode_async:
 * @batch: the entries
 * @encoding: protobuf or JSON
 * @compression: JSON's compression
 * @cancellable: (nullable): a cancellable
 * @callback: called with the body
 * @user_data: for @callback
 *
 * Encodes @batch, in a worker thread when it is large.
 */
void
sfl_loki_encode_async(const SflBatch *batch, SflLokiEncoding encoding,
		      SflLokiCompression compression, GCancellable *cancellable,
		      GAsyncReadyCallback callback, gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(NULL, cancellable, callback, user_data);
	SflEncodeJob *job = NULL;

	g_task_set_source_tag(task, sfl_loki_encode_async);
	if (sfl_batch_get_line_bytes(batch) < SFL_LOKI_ENCODE_THREAD_BYTES) {
		GError *error = NULL;
		GBytes *body = sfl_loki_encode(batch, encoding, compression, &error);
		if (body == NULL)
			g_task_return_error(task, error);
		else
			g_task_return_pointer(task, body, (GDestroyNotify)g_bytes_unref);
		return;
	}
	job = g_new0(SflEncodeJob, 1);
	job->batch = sfl_batch_slice(batch, 0, sfl_batch_get_length(batch));
	job->encoding = encoding;
	job->compression = compression;
	g_task_set_task_data(task, job, sfl_encode_job_free);
	g_task_run_in_thread(task, sfl_loki_encode_thread);
}

/**
 * sfl_loki_encode_finish:
 * @result: the result
 * @error: return location for an error
 *
 * Returns: (transfer full) (nullable): the body
 */
GBytes *
sfl_loki_encode_finish(GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * sfl_loki_content_type:
 * @encoding: the body's encoding
 *
 * Returns: (transfer none): the Content-Type header value
 */
const gchar *
sfl_loki_content_type(SflLokiEncoding encoding)
{
	if (encoding == SFL_LOKI_ENCODING_JSON)
		return "application/json";
	return "application/x-protobuf";
}

/**
 * sfl_loki_content_encoding:
 * @encoding: the body's encoding
 * @compression: the configured compression
 *
 * Loki snappy-decodes protobuf whatever this says; the original still sends `snappy`.
 *
 * Returns: (transfer none) (nullable): the Content-Encoding header value, or %NULL for none
 */
const gchar *
sfl_loki_content_encoding(SflLokiEncoding encoding, SflLokiCompression compression)
{
	if (encoding == SFL_LOKI_ENCODING_PROTOBUF)
		return "snappy";
	if (compression == SFL_LOKI_COMPRESSION_GZIP)
		return "gzip";
	return NULL;
}
