/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCsv"

#include "config.h"

#include "sfl-csv.h"

#include <string.h>

#include "sfl-error.h"

/* a record wider than this is not a log file, and would let one line pin a lot of memory */
#define SFL_CSV_MAX_FIELDS 4096

typedef enum {
	SFL_CSV_STATE_RECORD_START, /* between records: empty lines are skipped here */
	SFL_CSV_STATE_FIELD_START,  /* after a comma, before the field's first byte */
	SFL_CSV_STATE_UNQUOTED,
	SFL_CSV_STATE_QUOTED,
	SFL_CSV_STATE_QUOTE_IN_QUOTED, /* a quote inside quotes: doubled or closing */
} SflCsvState;

typedef enum {
	SFL_CSV_PARSE_DONE,
	SFL_CSV_PARSE_STOPPED,
	SFL_CSV_PARSE_FAILED,
} SflCsvParseResult;

struct _SflCsvParser {
	gsize max_field;
	SflCsvState state;

	/* the record being built: fields back to back, each NUL-terminated */
	gchar *buf;
	gsize buf_len;
	gsize buf_cap;
	gsize *starts;
	gsize *lens;
	const gchar **ptrs;
	guint n_fields;
	guint fields_cap;

	/* the field being built */
	gsize field_start;
	gboolean field_dirty; /* holds a NUL or a byte >= 0x80: validate it when it ends */

	/* input positions */
	guint64 offset; /* bytes parsed so far */
	guint64 line;	/* 1-based line of the next byte */
	gboolean prev_cr;
	guint64 rec_line;
	guint64 rec_offset;

	guint64 records;

	/* what a stopping callback left of its chunk */
	GByteArray *pending;
	gsize pending_pos;

	/* scratch copy of a field while invalid UTF-8 in it is replaced */
	GByteArray *scratch;

	gchar *error_msg; /* set once the input failed; every later call reports it again */
};

/* stops the unquoted scan: 1 ends the field, 2 needs UTF-8 validation */
static const guint8 sfl_csv_unquoted_class[256] = {
	[0] = 2, [','] = 1, ['"'] = 1, ['\r'] = 1, ['\n'] = 1, [0x80 ... 0xff] = 2,
};

/**
 * sfl_csv_parser_new:
 * @max_field_bytes: the longest field accepted, in bytes after unquoting; 0 for
 *   %SFL_CSV_DEFAULT_MAX_FIELD
 *
 * Returns: (transfer full): a parser at the start of its input
 */
SflCsvParser *
sfl_csv_parser_new(gsize max_field_bytes)
{
	SflCsvParser *self = g_new0(SflCsvParser, 1);

	self->max_field = max_field_bytes != 0 ? max_field_bytes : SFL_CSV_DEFAULT_MAX_FIELD;
	self->state = SFL_CSV_STATE_RECORD_START;
	self->line = 1;
	self->buf_cap = 4096;
	self->buf = g_malloc(self->buf_cap);
	self->fields_cap = 32;
	self->starts = g_new(gsize, self->fields_cap);
	self->lens = g_new(gsize, self->fields_cap);
	self->ptrs = g_new(const gchar *, self->fields_cap);
	self->pending = g_byte_array_new();
	self->scratch = g_byte_array_new();
	return self;
}

/**
 * sfl_csv_parser_free:
 * @self: (nullable) (transfer full): a parser
 */
void
sfl_csv_parser_free(SflCsvParser *self)
{
	if (self == NULL)
		return;
	g_free(self->buf);
	g_free(self->starts);
	g_free(self->lens);
	g_free(self->ptrs);
	g_byte_array_unref(self->pending);
	g_byte_array_unref(self->scratch);
	g_free(self->error_msg);
	g_free(self);
}

static gboolean sfl_csv_parser_fail(SflCsvParser *self, GError **error, const gchar *format, ...)
	G_GNUC_PRINTF(3, 4);

static gboolean
sfl_csv_parser_fail(SflCsvParser *self, GError **error, const gchar *format, ...)
{
	va_list args;
	g_autofree gchar *what = NULL;

	va_start(args, format);
	what = g_strdup_vprintf(format, args);
	va_end(args);
	g_free(self->error_msg);
	self->error_msg =
		g_strdup_printf("CSV line %" G_GUINT64_FORMAT " (byte %" G_GUINT64_FORMAT "): %s",
				self->rec_line, self->rec_offset, what);
	g_set_error_literal(error, SFL_ERROR, SFL_ERROR_CORRUPT, self->error_msg);
	return FALSE;
}

/* room for extra more bytes and a NUL after them */
static inline void
sfl_csv_parser_reserve(SflCsvParser *self, gsize extra)
{
	gsize need = self->buf_len + extra + 1;

	if (G_LIKELY(need <= self->buf_cap))
		return;
	while (self->buf_cap < need)
		self->buf_cap *= 2;
	self->buf = g_realloc(self->buf, self->buf_cap);
}

static inline void
sfl_csv_parser_put(SflCsvParser *self, const guchar *data, gsize len)
{
	sfl_csv_parser_reserve(self, len);
	memcpy(self->buf + self->buf_len, data, len);
	self->buf_len += len;
}

/* appends to the field being built, unless that makes it longer than allowed */
static inline gboolean
sfl_csv_parser_append(SflCsvParser *self, const guchar *data, gsize len, GError **error)
{
	if (len == 0)
		return TRUE;
	if (G_UNLIKELY(self->buf_len - self->field_start + len > self->max_field))
		return sfl_csv_parser_fail(self, error,
					   "field %u longer than %" G_GSIZE_FORMAT " bytes",
					   self->n_fields + 1, self->max_field);
	sfl_csv_parser_put(self, data, len);
	return TRUE;
}

static inline gboolean
sfl_csv_parser_begin_field(SflCsvParser *self, GError **error)
{
	if (G_UNLIKELY(self->n_fields >= SFL_CSV_MAX_FIELDS))
		return sfl_csv_parser_fail(self, error, "more than %u fields", SFL_CSV_MAX_FIELDS);
	self->field_start = self->buf_len;
	self->field_dirty = FALSE;
	return TRUE;
}

/* the same replacement as g_utf8_make_valid(): one U+FFFD for each byte that does not fit */
static void
sfl_csv_parser_make_valid(SflCsvParser *self)
{
	const gchar *field = self->buf + self->field_start;
	gsize len = self->buf_len - self->field_start;
	const gchar *rest;
	gsize left;

	if (g_utf8_validate_len(field, len, NULL))
		return;
	g_byte_array_set_size(self->scratch, 0);
	g_byte_array_append(self->scratch, (const guint8 *)field, (guint)len);
	self->buf_len = self->field_start;
	rest = (const gchar *)self->scratch->data;
	left = len;
	while (left > 0) {
		const gchar *bad = NULL;
		gsize good;

		if (g_utf8_validate_len(rest, left, &bad)) {
			sfl_csv_parser_put(self, (const guchar *)rest, left);
			break;
		}
		good = (gsize)(bad - rest);
		sfl_csv_parser_put(self, (const guchar *)rest, good);
		sfl_csv_parser_put(self, (const guchar *)"\xef\xbf\xbd", 3);
		rest = bad + 1;
		left -= good + 1;
	}
}

static inline void
sfl_csv_parser_end_field(SflCsvParser *self)
{
	guint n = self->n_fields;

	if (G_UNLIKELY(self->field_dirty))
		sfl_csv_parser_make_valid(self);
	if (G_UNLIKELY(n == self->fields_cap)) {
		self->fields_cap *= 2;
		self->starts = g_renew(gsize, self->starts, self->fields_cap);
		self->lens = g_renew(gsize, self->lens, self->fields_cap);
		self->ptrs = g_renew(const gchar *, self->ptrs, self->fields_cap);
	}
	self->starts[n] = self->field_start;
	self->lens[n] = self->buf_len - self->field_start;
	/*
	 * a field that added no bytes (empty, or ended right after a previous NUL) got no
	 * reservation of its own: a run of them would write past the buffer
	 */
	sfl_csv_parser_reserve(self, 0);
	self->buf[self->buf_len++] = '\0';
	self->n_fields = n + 1;
}

/* hands the finished record over; FALSE if the callback asked to stop */
static gboolean
sfl_csv_parser_emit(SflCsvParser *self, SflCsvRecordFunc func, gpointer user_data)
{
	SflCsvRecord record;

	for (guint i = 0; i < self->n_fields; i++)
		self->ptrs[i] = self->buf + self->starts[i];
	record.n_fields = self->n_fields;
	record.fields = self->ptrs;
	record.lens = self->lens;
	record.line = self->rec_line;
	record.offset = self->rec_offset;
	self->records++;
	self->state = SFL_CSV_STATE_RECORD_START;
	self->n_fields = 0;
	self->buf_len = 0;
	return func(&record, user_data);
}

static inline void
sfl_csv_parser_newline(SflCsvParser *self, guchar c)
{
	/* CRLF, LF and a lone CR each end one line */
	if (c == '\r' || !self->prev_cr)
		self->line++;
	self->prev_cr = c == '\r';
}

/* TRUE if any byte is below 0x20 or above 0x7f: only those need a closer look in quotes */
static inline gboolean
sfl_csv_run_is_special(const guchar *p, gsize len)
{
	const guint64 low = G_GUINT64_CONSTANT(0x2020202020202020);
	const guint64 high = G_GUINT64_CONSTANT(0x8080808080808080);
	gsize i = 0;

	for (; i + 8 <= len; i += 8) {
		guint64 w;
		memcpy(&w, p + i, sizeof w);
		/* a byte >= 0x80 sets its top bit in w; one < 0x20 makes w - low borrow into it */
		if (((w - low) | w) & high)
			return TRUE;
	}
	for (; i < len; i++) {
		if (p[i] < 0x20 || p[i] >= 0x80)
			return TRUE;
	}
	return FALSE;
}

/* a run of quoted bytes: counts the lines in it and notes bytes that need validation */
static void
sfl_csv_parser_scan_quoted(SflCsvParser *self, const guchar *p, gsize len)
{
	if (len == 0)
		return;
	if (G_LIKELY(!sfl_csv_run_is_special(p, len))) {
		self->prev_cr = FALSE;
		return;
	}
	for (gsize i = 0; i < len; i++) {
		guchar c = p[i];
		if (c == '\n' || c == '\r') {
			sfl_csv_parser_newline(self, c);
			continue;
		}
		self->prev_cr = FALSE;
		if (c == 0 || c >= 0x80)
			self->field_dirty = TRUE;
	}
}

/* the field so far is a BOM that starts the input */
static gboolean
sfl_csv_parser_at_bom(const SflCsvParser *self)
{
	return self->rec_offset == 0 && self->n_fields == 0 &&
	       self->buf_len - self->field_start == 3 &&
	       memcmp(self->buf + self->field_start, "\xef\xbb\xbf", 3) == 0;
}

/*
 * Parses data from where the last call left off. On STOPPED, *consumed says how far it got;
 * the caller keeps the rest.
 */
static SflCsvParseResult
sfl_csv_parser_parse(SflCsvParser *self, const guchar *data, gsize len, gsize *consumed,
		     SflCsvRecordFunc func, gpointer user_data, GError **error)
{
	const guchar *p = data;
	const guchar *end = data + len;
	gboolean go_on = TRUE;

	while (p < end && go_on) {
		switch (self->state) {
		case SFL_CSV_STATE_RECORD_START:
			if (*p == '\n' || *p == '\r') {
				/* an empty line, or the LF of a CRLF that ended the last record */
				sfl_csv_parser_newline(self, *p);
				p++;
				break;
			}
			self->rec_line = self->line;
			self->rec_offset = self->offset + (guint64)(p - data);
			self->state = SFL_CSV_STATE_FIELD_START;
			G_GNUC_FALLTHROUGH;
		case SFL_CSV_STATE_FIELD_START:
			if (!sfl_csv_parser_begin_field(self, error))
				return SFL_CSV_PARSE_FAILED;
			if (*p == '"') {
				self->prev_cr = FALSE;
				self->state = SFL_CSV_STATE_QUOTED;
				p++;
				break;
			}
			self->state = SFL_CSV_STATE_UNQUOTED;
			G_GNUC_FALLTHROUGH;
		case SFL_CSV_STATE_UNQUOTED: {
			const guchar *q = p;

			while (q < end) {
				guint8 cls = sfl_csv_unquoted_class[*q];
				if (G_LIKELY(cls == 0)) {
					q++;
					continue;
				}
				if (cls == 1)
					break;
				self->field_dirty = TRUE;
				q++;
			}
			if (!sfl_csv_parser_append(self, p, (gsize)(q - p), error))
				return SFL_CSV_PARSE_FAILED;
			if (q > p)
				self->prev_cr = FALSE;
			p = q;
			if (p == end)
				break;
			if (*p == ',') {
				sfl_csv_parser_end_field(self);
				self->prev_cr = FALSE;
				self->state = SFL_CSV_STATE_FIELD_START;
				p++;
				break;
			}
			if (*p == '"' && sfl_csv_parser_at_bom(self)) {
				/* a BOM, then a quoted first header name */
				self->state = SFL_CSV_STATE_QUOTED;
				p++;
				break;
			}
			if (*p == '"') {
				sfl_csv_parser_fail(self, error, "quote inside unquoted field %u",
						    self->n_fields + 1);
				return SFL_CSV_PARSE_FAILED;
			}
			sfl_csv_parser_end_field(self);
			sfl_csv_parser_newline(self, *p);
			p++;
			go_on = sfl_csv_parser_emit(self, func, user_data);
			break;
		}
		case SFL_CSV_STATE_QUOTED: {
			const guchar *q = memchr(p, '"', (gsize)(end - p));
			const guchar *run_end = q != NULL ? q : end;
			gsize run = (gsize)(run_end - p);

			if (!sfl_csv_parser_append(self, p, run, error))
				return SFL_CSV_PARSE_FAILED;
			sfl_csv_parser_scan_quoted(self, p, run);
			p = run_end;
			if (q != NULL) {
				self->prev_cr = FALSE;
				self->state = SFL_CSV_STATE_QUOTE_IN_QUOTED;
				p++;
			}
			break;
		}
		case SFL_CSV_STATE_QUOTE_IN_QUOTED:
			if (*p == '"') {
				if (!sfl_csv_parser_append(self, p, 1, error))
					return SFL_CSV_PARSE_FAILED;
				self->state = SFL_CSV_STATE_QUOTED;
				p++;
				break;
			}
			if (*p == ',') {
				sfl_csv_parser_end_field(self);
				self->state = SFL_CSV_STATE_FIELD_START;
				p++;
				break;
			}
			if (*p == '\n' || *p == '\r') {
				sfl_csv_parser_end_field(self);
				sfl_csv_parser_newline(self, *p);
				p++;
				go_on = sfl_csv_parser_emit(self, func, user_data);
				break;
			}
			sfl_csv_parser_fail(self, error,
					    "unexpected byte 0x%02x after the closing "
					    "quote of field %u",
					    *p, self->n_fields + 1);
			return SFL_CSV_PARSE_FAILED;
		}
	}
	*consumed = (gsize)(p - data);
	self->offset += *consumed;
	return p == end && go_on ? SFL_CSV_PARSE_DONE : SFL_CSV_PARSE_STOPPED;
}

/* parses what a stopping callback left over; FALSE (maybe with an error) if not all of it */
static gboolean
sfl_csv_parser_drain(SflCsvParser *self, SflCsvRecordFunc func, gpointer user_data, GError **error)
{
	SflCsvParseResult result;
	gsize consumed = 0;

	if (self->pending_pos == self->pending->len)
		return TRUE;
	result = sfl_csv_parser_parse(self, self->pending->data + self->pending_pos,
				      self->pending->len - self->pending_pos, &consumed, func,
				      user_data, error);
	if (result == SFL_CSV_PARSE_FAILED)
		return FALSE;
	self->pending_pos += consumed;
	if (result == SFL_CSV_PARSE_STOPPED)
		return FALSE;
	g_byte_array_set_size(self->pending, 0);
	self->pending_pos = 0;
	return TRUE;
}

static gboolean
sfl_csv_parser_check_failed(SflCsvParser *self, GError **error)
{
	if (self->error_msg == NULL)
		return TRUE;
	g_set_error_literal(error, SFL_ERROR, SFL_ERROR_CORRUPT, self->error_msg);
	return FALSE;
}

/**
 * sfl_csv_parser_feed:
 * @self: a parser
 * @data: (nullable): the next bytes of input; may be NULL when @len is 0
 * @len: how many
 * @func: called for each complete record
 * @user_data: for @func
 * @error: set on bad input
 *
 * Parses what a stopped call left over, then @data. Not re-entrant: @func must not feed the
 * same parser.
 *
 * Returns: TRUE when all input so far is parsed; FALSE with @error set on bad input (and for
 *   every later call); FALSE with no error when @func stopped the parse
 */
gboolean
sfl_csv_parser_feed(SflCsvParser *self, const gchar *data, gsize len, SflCsvRecordFunc func,
		    gpointer user_data, GError **error)
{
	SflCsvParseResult result;
	gsize consumed = 0;
	g_autoptr(GError) error_local = NULL;

	g_return_val_if_fail(self != NULL, FALSE);
	g_return_val_if_fail(data != NULL || len == 0, FALSE);
	g_return_val_if_fail(func != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (!sfl_csv_parser_check_failed(self, error))
		return FALSE;
	if (!sfl_csv_parser_drain(self, func, user_data, &error_local)) {
		if (error_local != NULL) {
			g_propagate_error(error, g_steal_pointer(&error_local));
			return FALSE;
		}
		/* still stopped: the new bytes queue up behind the old ones */
		g_byte_array_remove_range(self->pending, 0, (guint)self->pending_pos);
		self->pending_pos = 0;
		if (len > 0)
			g_byte_array_append(self->pending, (const guint8 *)data, (guint)len);
		return FALSE;
	}
	if (len == 0)
		return TRUE;
	result = sfl_csv_parser_parse(self, (const guchar *)data, len, &consumed, func, user_data,
				      error);
	if (result == SFL_CSV_PARSE_FAILED)
		return FALSE;
	if (result == SFL_CSV_PARSE_STOPPED) {
		g_byte_array_append(self->pending, (const guint8 *)data + consumed,
				    (guint)(len - consumed));
		return FALSE;
	}
	return TRUE;
}

/**
 * sfl_csv_parser_finish:
 * @self: a parser
 * @func: called for each remaining record
 * @user_data: for @func
 * @error: set on bad input, such as a quote left open
 *
 * Ends the input: parses what a stopped call left over, then hands out a last record that has
 * no trailing newline. If @func stops the parse, call this again to go on.
 *
 * Returns: TRUE when the input ended cleanly; FALSE with @error on bad input; FALSE with no
 *   error when @func stopped the parse
 */
gboolean
sfl_csv_parser_finish(SflCsvParser *self, SflCsvRecordFunc func, gpointer user_data, GError **error)
{
	g_return_val_if_fail(self != NULL, FALSE);
	g_return_val_if_fail(func != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (!sfl_csv_parser_check_failed(self, error))
		return FALSE;
	if (!sfl_csv_parser_drain(self, func, user_data, error))
		return FALSE;
	switch (self->state) {
	case SFL_CSV_STATE_RECORD_START:
		return TRUE;
	case SFL_CSV_STATE_QUOTED:
		return sfl_csv_parser_fail(self, error,
					   "quote of field %u not closed at the end "
					   "of input",
					   self->n_fields + 1);
	case SFL_CSV_STATE_FIELD_START:
		/* a comma just before the end: one more, empty field */
		if (!sfl_csv_parser_begin_field(self, error))
			return FALSE;
		break;
	case SFL_CSV_STATE_UNQUOTED:
	case SFL_CSV_STATE_QUOTE_IN_QUOTED:
		break;
	}
	sfl_csv_parser_end_field(self);
	return sfl_csv_parser_emit(self, func, user_data);
}

/**
 * sfl_csv_parser_get_records:
 * @self: a parser
 *
 * Returns: how many records were handed to callbacks, the header row included
 */
guint64
sfl_csv_parser_get_records(const SflCsvParser *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->records;
}

/**
 * sfl_csv_parser_get_bytes:
 * @self: a parser
 *
 * Returns: how many input bytes were parsed; bytes a stop left buffered are not counted yet
 */
guint64
sfl_csv_parser_get_bytes(const SflCsvParser *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->offset;
}
