/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLokiRejection"

#include "config.h"

#include "sfl-loki-rejection.h"

#include <string.h>

/* a cursor over [p, end): every read checks end, nothing needs a NUL */
typedef struct {
	const gchar *p;
	const gchar *end;
} SflScan;

static gboolean
sfl_scan_lit(SflScan *s, const gchar *lit)
{
	gsize n = strlen(lit);

	if ((gsize)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0)
		return FALSE;
	s->p += n;
	return TRUE;
}

static const gchar *
sfl_scan_find(const gchar *p, const gchar *end, const gchar *needle)
{
	gsize n = strlen(needle);

	for (; p != NULL && (gsize)(end - p) >= n; p++) {
		if (memcmp(p, needle, n) == 0)
			return p;
	}
	return NULL;
}

/* up to @max_digits decimal digits, at least one */
static gboolean
sfl_scan_uint(SflScan *s, guint max_digits, guint64 *out)
{
	guint64 v = 0;
	guint n = 0;

	while (s->p < s->end && g_ascii_isdigit(*s->p) && n < max_digits) {
		v = v * 10 + (guint64)(*s->p - '0');
		s->p++;
		n++;
	}
	if (n == 0 || (s->p < s->end && g_ascii_isdigit(*s->p)))
		return FALSE;
	*out = v;
	return TRUE;
}

static gboolean
sfl_scan_fixed(SflScan *s, guint digits, guint64 *out)
{
	guint64 v = 0;

	if ((gsize)(s->end - s->p) < digits)
		return FALSE;
	for (guint i = 0; i < digits; i++) {
		if (!g_ascii_isdigit(s->p[i]))
			return FALSE;
		v = v * 10 + (guint64)(s->p[i] - '0');
	}
	s->p += digits;
	*out = v;
	return TRUE;
}

/* days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil algorithm) */
static gint64
sfl_days_from_civil(gint64 y, guint m, guint d)
{
	gint64 era;
	guint yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (guint)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (gint64)doe - 719468;
}

/*
 * "2006-01-02T15:04:05Z07:00" (RFC 3339, the distributor) or "2006-01-02 15:04:05.999999999
 * -0700 MST" (Go's time.String, the ingester); the zone abbreviation is not read. Years are
 * bounded to what nanoseconds since 1970 hold.
 */
static gboolean
sfl_scan_time(SflScan *s, gint64 *ns, gint64 *precision)
{
	guint64 y, mo, d, h, mi, sec, frac = 0, zh = 0, zm = 0;
	gint64 scale = G_GINT64_CONSTANT(1000000000);
	gint64 frac_ns = 0;
	gint sign = 0;
	guint frac_digits = 0;

	if (!sfl_scan_fixed(s, 4, &y) || !sfl_scan_lit(s, "-") || !sfl_scan_fixed(s, 2, &mo) ||
	    !sfl_scan_lit(s, "-") || !sfl_scan_fixed(s, 2, &d))
		return FALSE;
	if (s->p >= s->end || (*s->p != 'T' && *s->p != ' '))
		return FALSE;
	s->p++;
	if (!sfl_scan_fixed(s, 2, &h) || !sfl_scan_lit(s, ":") || !sfl_scan_fixed(s, 2, &mi) ||
	    !sfl_scan_lit(s, ":") || !sfl_scan_fixed(s, 2, &sec))
		return FALSE;
	if (y < 1970 || y > 2261 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return FALSE;
	if (sfl_scan_lit(s, ".")) {
		while (s->p < s->end && g_ascii_isdigit(*s->p)) {
			if (frac_digits < 9) {
				frac = frac * 10 + (guint64)(*s->p - '0');
				frac_digits++;
			}
			s->p++;
		}
		if (frac_digits == 0)
			return FALSE;
		for (guint i = 0; i < frac_digits; i++)
			scale /= 10;
		frac_ns = (gint64)frac * scale;
	}
	/* the zone: Z, +hh:mm, or " +hhmm" */
	if (sfl_scan_lit(s, "Z")) {
		sign = 0;
	} else {
		(void)sfl_scan_lit(s, " ");
		if (s->p >= s->end || (*s->p != '+' && *s->p != '-'))
			return FALSE;
		sign = *s->p == '-' ? -1 : 1;
		s->p++;
		if (!sfl_scan_fixed(s, 2, &zh))
			return FALSE;
		(void)sfl_scan_lit(s, ":");
		if (!sfl_scan_fixed(s, 2, &zm) || zh > 23 || zm > 59)
			return FALSE;
	}
	*ns = ((sfl_days_from_civil((gint64)y, (guint)mo, (guint)d) * 86400 + (gint64)h * 3600 +
		(gint64)mi * 60 + (gint64)sec) -
	       sign * (gint64)(zh * 3600 + zm * 60)) *
		      G_GINT64_CONSTANT(1000000000) +
	      frac_ns;
	*precision = scale;
	return *ns >= 0;
}

static void
sfl_loki_rejected_item_free(gpointer data)
{
	SflLokiRejectedItem *item = data;

	g_strfreev(item->names);
	g_strfreev(item->values);
	g_free(item);
}

/* a Go-quoted label value; returns FALSE on anything unexpected */
static gboolean
sfl_scan_quoted(SflScan *s, GString *out)
{
	if (!sfl_scan_lit(s, "\""))
		return FALSE;
	while (s->p < s->end && *s->p != '"') {
		gchar c = *s->p++;
		guint64 code = 0;

		if (c != '\\') {
			g_string_append_c(out, c);
			continue;
		}
		if (s->p >= s->end)
			return FALSE;
		c = *s->p++;
		switch (c) {
		case 'n':
			g_string_append_c(out, '\n');
			break;
		case 't':
			g_string_append_c(out, '\t');
			break;
		case 'r':
			g_string_append_c(out, '\r');
			break;
		case '\\':
		case '"':
		case '\'':
			g_string_append_c(out, c);
			break;
		case 'x':
		case 'u':
		case 'U': {
			guint digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;

			if ((gsize)(s->end - s->p) < digits)
				return FALSE;
			for (guint i = 0; i < digits; i++) {
				if (!g_ascii_isxdigit(s->p[i]))
					return FALSE;
				code = code * 16 + (guint64)g_ascii_xdigit_value(s->p[i]);
			}
			s->p += digits;
			if (c == 'x')
				g_string_append_c(out, (gchar)code);
			else if (code <= 0x10FFFF)
				g_string_append_unichar(out, (gunichar)code);
			else
				return FALSE;
			break;
		}
		default:
			return FALSE;
		}
	}
	return sfl_scan_lit(s, "\"");
}

/* '{a="b", c="d"}' as Prometheus prints a label set */
static gboolean
sfl_scan_stream(SflScan *s, SflLokiRejectedItem *item)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new_null_terminated(4, g_free, TRUE);
	g_autoptr(GPtrArray) values = g_ptr_array_new_null_terminated(4, g_free, TRUE);

	if (!sfl_scan_lit(s, "{"))
		return FALSE;
	while (!sfl_scan_lit(s, "}")) {
		const gchar *start = s->p;
		g_autoptr(GString) value = g_string_new(NULL);

		if (names->len > 0 && !sfl_scan_lit(s, ","))
			return FALSE;
		(void)sfl_scan_lit(s, " ");
		start = s->p;
		while (s->p < s->end && (g_ascii_isalnum(*s->p) || *s->p == '_'))
			s->p++;
		if (s->p == start || !sfl_scan_lit(s, "=") ||
		    names->len >= SFL_LOKI_REJECTION_MAX_LABELS)
			return FALSE;
		g_ptr_array_add(names, g_strndup(start, (gsize)(s->p - start - 1)));
		if (!sfl_scan_quoted(s, value))
			return FALSE;
		g_ptr_array_add(values, g_string_free(g_steal_pointer(&value), FALSE));
	}
	if (names->len == 0)
		return FALSE;
	item->n_labels = names->len;
	item->names = (gchar **)g_ptr_array_free(g_steal_pointer(&names), FALSE);
	item->values = (gchar **)g_ptr_array_free(g_steal_pointer(&values), FALSE);
	return TRUE;
}

/**
 * sfl_loki_rejection_classify:
 * @message: (nullable): one rejection message, or the ingester's reason
 * @retryable: (out) (optional): whether Loki may accept the entry later
 *
 * Returns: (transfer none): Loki's reason label for the message (validation's and the
 *   ingester's names), "other" when no known phrase is in it
 */
const gchar *
sfl_loki_rejection_classify(const gchar *message, gboolean *retryable)
{
	/* first match wins: the rate phrases before "stream", "too old" before the rest */
	static const struct {
		const gchar *phrase;
		const gchar *reason;
		gboolean retryable;
	} table[] = {
		{ "Per stream rate limit exceeded", "per_stream_rate_limit", TRUE },
		{ "Ingestion rate limit exceeded", "rate_limited", TRUE },
		{ "Maximum active stream limit exceeded", "stream_limit", TRUE },
		{ "timestamp too old", "greater_than_max_sample_age", FALSE },
		{ "timestamp too new", "too_far_in_future", FALSE },
		{ "Max entry size", "line_too_long", FALSE },
		{ "too far behind", "too_far_behind", FALSE },
		{ "out of order", "out_of_order", FALSE },
		{ "duplicate label", "duplicate_label_names", FALSE },
		{ "duplicate", "duplicate", FALSE },
		{ "label names; limit", "max_label_names_per_series", FALSE },
		{ "label name too long", "label_name_too_long", FALSE },
		{ "label value too long", "label_value_too_long", FALSE },
		{ "feature is disallowed", "disallowed_structured_metadata", FALSE },
		{ "structured metadata size", "structured_metadata_too_large", FALSE },
		{ "structured metadata entries", "structured_metadata_too_many", FALSE },
		{ "at least one label pair", "missing_labels", FALSE },
		{ "rror parsing labels", "invalid_labels", FALSE },
	};

	if (retryable != NULL)
		*retryable = FALSE;
	for (gsize i = 0; message != NULL && i < G_N_ELEMENTS(table); i++) {
		if (strstr(message, table[i].phrase) != NULL) {
			if (retryable != NULL)
				*retryable = table[i].retryable;
			return table[i].reason;
		}
	}
	return "other";
}

typedef struct {
	SflLokiRejection *out;
	guint pending_from; /* the first ingester line not yet claimed by a summary */
} SflParse;

static SflLokiRejectedItem *
sfl_parse_item_new(void)
{
	SflLokiRejectedItem *item = g_new0(SflLokiRejectedItem, 1);

	item->timestamp_ns = -1;
	item->precision_ns = 1;
	item->line_bytes = -1;
	item->count = 1;
	return item;
}

static gboolean
sfl_parse_add(SflParse *st, SflLokiRejectedItem *item)
{
	if (st->out->items->len >= SFL_LOKI_REJECTION_MAX_ITEMS) {
		sfl_loki_rejected_item_free(item);
		st->out->unparsed = TRUE;
		return FALSE;
	}
	g_ptr_array_add(st->out->items, item);
	return TRUE;
}

static void
sfl_copy_stream(SflLokiRejectedItem *to, const SflLokiRejectedItem *from)
{
	to->n_labels = from->n_labels;
	to->names = g_strdupv(from->names);
	to->values = g_strdupv(from->values);
}

/* "entry with timestamp <t> ignored, reason: '<why>'[ for stream: <s>]," */
static gboolean
sfl_parse_ingester_line(SflParse *st, SflScan s)
{
	SflLokiRejectedItem *item = sfl_parse_item_new();
	const gchar *why = NULL;
	const gchar *why_end = NULL;
	const gchar *for_stream = NULL;
	g_autofree gchar *reason = NULL;

	if (!sfl_scan_lit(&s, "entry with timestamp ") ||
	    !sfl_scan_time(&s, &item->timestamp_ns, &item->precision_ns))
		goto fail;
	/* Go's time.String may add a zone name: skip to the reason */
	why = sfl_scan_find(s.p, s.end, " ignored, reason: '");
	if (why == NULL)
		goto fail;
	why += strlen(" ignored, reason: '");
	for_stream = sfl_scan_find(why, s.end, "' for stream: ");
	if (for_stream != NULL) {
		SflScan ss = { for_stream + strlen("' for stream: "), s.end };
		why_end = for_stream;
		if (!sfl_scan_stream(&ss, item))
			goto fail;
	} else {
		why_end = s.end;
		while (why_end > why && why_end[-1] != '\'')
			why_end--;
		if (why_end == why)
			goto fail;
		why_end--;
	}
	reason = g_strndup(why, (gsize)(why_end - why));
	item->reason = sfl_loki_rejection_classify(reason, &item->retryable);
	return sfl_parse_add(st, item);
fail:
	sfl_loki_rejected_item_free(item);
	return FALSE;
}

/* "[user 'T', ]total ignored: N out of M[ for stream: <s>]" */
static gboolean
sfl_parse_summary(SflParse *st, const gchar *at, const gchar *end)
{
	SflScan s = { at + strlen("total ignored: "), end };
	SflLokiRejectedItem stream = { 0 };
	guint64 ignored = 0, total = 0;
	guint listed = 0;
	gboolean named = FALSE;

	if (!sfl_scan_uint(&s, 12, &ignored) || !sfl_scan_lit(&s, " out of ") ||
	    !sfl_scan_uint(&s, 12, &total) || ignored > total)
		return FALSE;
	if (sfl_scan_lit(&s, " for stream: ")) {
		if (!sfl_scan_stream(&s, &stream))
			return FALSE;
		named = TRUE;
	}
	st->out->ignored += ignored;
	st->out->total += total;
	st->out->n_summaries++;
	for (guint i = st->pending_from; i < st->out->items->len; i++) {
		SflLokiRejectedItem *item = g_ptr_array_index(st->out->items, i);

		if (named && item->n_labels == 0)
			sfl_copy_stream(item, &stream);
		listed++;
	}
	st->pending_from = st->out->items->len;
	if (ignored > listed) {
		st->out->unlisted = TRUE;
		if (named) {
			/* the rest of this stream is unknown: a stream-wide item the sink retries
			 */
			SflLokiRejectedItem *rest = sfl_parse_item_new();

			sfl_copy_stream(rest, &stream);
			rest->reason = "unlisted";
			rest->retryable = TRUE;
			rest->count = (guint)MIN(ignored - listed, G_MAXUINT);
			if (sfl_parse_add(st, rest))
				st->pending_from = st->out->items->len;
		}
	}
	g_strfreev(stream.names);
	g_strfreev(stream.values);
	return TRUE;
}

/* a distributor message naming a stream: "... stream '<s>' ..." */
static gboolean
sfl_parse_validation(SflParse *st, const gchar *start, const gchar *end, guint count)
{
	const gchar *at = sfl_scan_find(start, end, "stream '");
	g_autofree gchar *text = g_strndup(start, (gsize)(end - start));
	SflLokiRejectedItem *item = NULL;
	SflScan s;
	const gchar *mark = NULL;

	if (at == NULL)
		return FALSE;
	item = sfl_parse_item_new();
	item->count = count;
	item->reason = sfl_loki_rejection_classify(text, &item->retryable);
	s = (SflScan){ at + strlen("stream '"), end };
	if (!sfl_scan_stream(&s, item) || !sfl_scan_lit(&s, "'"))
		goto fail;
	mark = sfl_scan_find(s.p, end, "timestamp too old: ");
	if (mark == NULL)
		mark = sfl_scan_find(s.p, end, "timestamp too new: ");
	if (mark != NULL) {
		SflScan ts = { mark + strlen("timestamp too old: "), end };
		if (!sfl_scan_time(&ts, &item->timestamp_ns, &item->precision_ns))
			goto fail;
	}
	mark = sfl_scan_find(s.p, end, "with length '");
	if (mark != NULL && g_strcmp0(item->reason, "line_too_long") == 0) {
		SflScan ls = { mark + strlen("with length '"), end };
		guint64 n = 0;
		if (!sfl_scan_uint(&ls, 12, &n))
			goto fail;
		item->line_bytes = (gint64)n;
	}
	return sfl_parse_add(st, item);
fail:
	sfl_loki_rejected_item_free(item);
	return FALSE;
}

static void
sfl_parse_segment(SflParse *st, const gchar *start, const gchar *end)
{
	SflScan s = { start, end };
	const gchar *summary = NULL;
	guint64 count = 1;
	gboolean ok = FALSE;

	while (s.p < s.end && g_ascii_isspace(*s.p))
		s.p++;
	while (s.end > s.p && (g_ascii_isspace(s.end[-1]) || s.end[-1] == ','))
		s.end--;
	if (s.p == s.end)
		return;
	/* Loki 2.x distributors passed an ingester's error on as gRPC had worded it */
	if (sfl_scan_lit(&s, "rpc error: ")) {
		const gchar *desc = sfl_scan_find(s.p, s.end, " desc = ");
		if (desc == NULL) {
			st->out->unparsed = TRUE;
			return;
		}
		s.p = desc + strlen(" desc = ");
	}
	if (g_ascii_isdigit(*s.p)) {
		SflScan c = s;
		if (sfl_scan_uint(&c, 9, &count) && sfl_scan_lit(&c, " errors like: ") && count > 0)
			s = c;
		else
			count = 1;
	}
	summary = sfl_scan_find(s.p, s.end, "total ignored: ");
	if (summary != NULL)
		ok = sfl_parse_summary(st, summary, s.end);
	else if ((gsize)(s.end - s.p) >= 21 && memcmp(s.p, "entry with timestamp ", 21) == 0)
		ok = sfl_parse_ingester_line(st, s);
	else
		ok = sfl_parse_validation(st, s.p, s.end, (guint)count);
	if (!ok)
		st->out->unparsed = TRUE;
}

/* "; " separates the distributor's messages only where a known message starts after it */
static gboolean
sfl_parse_starts_message(const gchar *p, const gchar *end)
{
	static const gchar *const starts[] = { "entry ", "Max entry size", "stream '",
					       "total ignored", "user '" };
	const gchar *q = p;

	while (q < end && g_ascii_isdigit(*q))
		q++;
	if (q > p && (gsize)(end - q) >= 14 && memcmp(q, " errors like: ", 14) == 0)
		return TRUE;
	for (gsize i = 0; i < G_N_ELEMENTS(starts); i++) {
		gsize n = strlen(starts[i]);
		if ((gsize)(end - p) >= n && memcmp(p, starts[i], n) == 0)
			return TRUE;
	}
	return FALSE;
}

/**
 * sfl_loki_rejection_parse:
 * @body: (nullable): a Loki answer's body, not NUL-terminated
 * @len: its length
 *
 * Returns: (transfer full): what the body says; never %NULL, empty when it names nothing
 */
SflLokiRejection *
sfl_loki_rejection_parse(const gchar *body, gsize len)
{
	SflLokiRejection *out = g_new0(SflLokiRejection, 1);
	SflParse st = { out, 0 };
	const gchar *end = NULL;
	const gchar *seg = NULL;

	out->items = g_ptr_array_new_with_free_func(sfl_loki_rejected_item_free);
	if (body == NULL)
		return out;
	if (len > SFL_LOKI_REJECTION_MAX_BODY) {
		len = SFL_LOKI_REJECTION_MAX_BODY;
		out->unparsed = TRUE;
	}
	end = body + len;
	seg = body;
	for (const gchar *p = body; p <= end; p++) {
		if (p == end || *p == '\n') {
			sfl_parse_segment(&st, seg, p);
			seg = p + 1;
		} else if (*p == ';' && p + 1 < end && p[1] == ' ' &&
			   sfl_parse_starts_message(p + 2, end)) {
			sfl_parse_segment(&st, seg, p);
			seg = p + 2;
			p++;
		}
	}
	return out;
}

void
sfl_loki_rejection_free(SflLokiRejection *self)
{
	if (self == NULL)
		return;
	g_ptr_array_unref(self->items);
	g_free(self);
}

/**
 * sfl_loki_rejected_item_same_stream:
 * @item: a rejected item
 * @labels: (nullable): an entry's labels
 *
 * Returns: whether @item names exactly the label set @labels
 */
gboolean
sfl_loki_rejected_item_same_stream(const SflLokiRejectedItem *item, const SflLabels *labels)
{
	if (labels == NULL || item->n_labels == 0 ||
	    item->n_labels != sfl_labels_get_n_pairs(labels))
		return FALSE;
	for (guint i = 0; i < item->n_labels; i++) {
		if (g_strcmp0(sfl_labels_lookup(labels, item->names[i]), item->values[i]) != 0)
			return FALSE;
	}
	return TRUE;
}

/**
 * sfl_loki_rejected_item_matches:
 * @item: a rejected item
 * @entry: an entry of the pushed batch (its line as sent)
 *
 * Returns: whether @item names @entry: the same stream, and the timestamp (to the message's
 *   precision: Go's formatting truncates) and length where the message gives them
 */
gboolean
sfl_loki_rejected_item_matches(const SflLokiRejectedItem *item, const SflEntry *entry)
{
	if (!sfl_loki_rejected_item_same_stream(item, entry->labels))
		return FALSE;
	if (item->timestamp_ns >= 0 &&
	    (entry->timestamp_ns < item->timestamp_ns ||
	     entry->timestamp_ns - item->timestamp_ns >= item->precision_ns))
		return FALSE;
	if (item->line_bytes >= 0 && (gint64)entry->line_len != item->line_bytes)
		return FALSE;
	return TRUE;
}
