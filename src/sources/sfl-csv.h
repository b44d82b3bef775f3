/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * A push parser for EventLogFile CSV (RFC 4180, docs/sources/eventlogfile.md "CSV parsing"): the
 * download is fed to it chunk by chunk as curl hands it over, and it calls back once per complete
 * record, so a file of any size costs one record's worth of memory.
 *
 * - Quoted fields may hold commas, doubled quotes, CR and LF; unquoted fields end at a comma,
 *   LF or CRLF. A lone CR outside quotes also ends a record. A trailing newline is optional;
 *   an empty line is skipped. A BOM is kept (it is part of the first header name, as in the
 *   original); a quote right after it still opens a quoted field, so `\xEF\xBB\xBF"NAME",...`
 *   gives U+FEFF NAME, where Python's csv module would also have kept the two quotes.
 * - Invalid UTF-8 is replaced with U+FFFD and NUL bytes with U+FFFD, so every field handed out
 *   is valid, NUL-terminated UTF-8.
 * - A field longer than max_field_bytes, a quote inside an unquoted field or after a closing
 *   quote, and an unterminated quote at end of input are errors (SFL_ERROR_CORRUPT) naming the
 *   record's 1-based line number and byte offset.
 * - The record callback gets borrowed pointers valid only during the call. It returns FALSE to
 *   stop the parse: feed() then returns FALSE with no error set, and nothing more is called
 *   until the next feed(). Bytes after the stopping record stay buffered and are parsed on the
 *   next feed() (which may be given len 0) or finish(); data given to a feed() that stops again
 *   before reaching it queues up behind them. The callback must not feed the same parser.
 * - Memory: one partial record (at most 4096 fields of max_field_bytes each; more fields are
 *   an error) plus what a stop left buffered. Buffers are reused from record to record.
 * - After an error every later feed() or finish() fails with the same error.
 *
 * Threading: one parser per thread.
 */

typedef struct {
	guint n_fields;
	const gchar *const *fields; /* NUL-terminated UTF-8 */
	const gsize *lens;	    /* byte length of each field */
	guint64 line;		    /* 1-based line number where the record starts */
	guint64 offset;		    /* byte offset in the input where the record starts */
} SflCsvRecord;

/* returns FALSE to stop parsing after this record */
typedef gboolean (*SflCsvRecordFunc)(const SflCsvRecord *record, gpointer user_data);

typedef struct _SflCsvParser SflCsvParser;

#define SFL_CSV_DEFAULT_MAX_FIELD (1024 * 1024)

/* max_field_bytes counts a field's bytes after unquoting; 0 means SFL_CSV_DEFAULT_MAX_FIELD */
SflCsvParser *sfl_csv_parser_new(gsize max_field_bytes) G_GNUC_WARN_UNUSED_RESULT;
void sfl_csv_parser_free(SflCsvParser *self);
/* TRUE: all input parsed; FALSE + error: bad input; FALSE, no error: the callback stopped */
gboolean sfl_csv_parser_feed(SflCsvParser *self, const gchar *data, gsize len,
			     SflCsvRecordFunc func, gpointer user_data, GError **error);
/* end of input: flushes a last record without a trailing newline; after a stop, call again */
gboolean sfl_csv_parser_finish(SflCsvParser *self, SflCsvRecordFunc func, gpointer user_data,
			       GError **error);
/* records handed to the callback, the header row included */
guint64 sfl_csv_parser_get_records(const SflCsvParser *self);
/* input bytes parsed so far; bytes a stop left buffered count once they are parsed */
guint64 sfl_csv_parser_get_bytes(const SflCsvParser *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflCsvParser, sfl_csv_parser_free)

G_END_DECLS
