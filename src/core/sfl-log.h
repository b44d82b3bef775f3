/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
	SFL_LOG_FORMAT_JSON,
	SFL_LOG_FORMAT_LOGFMT,
} SflLogFormat;

/* ordered: a configured level shows itself and everything after it */
typedef enum {
	SFL_LOG_LEVEL_DEBUG,
	SFL_LOG_LEVEL_INFO,
	SFL_LOG_LEVEL_WARNING,
	SFL_LOG_LEVEL_ERROR,
	SFL_LOG_LEVEL_CRITICAL,
} SflLogLevel;

/* identical warnings inside this window are counted instead of printed */
#define SFL_LOG_REPEAT_WINDOW_USEC (60 * G_USEC_PER_SEC)

/**
 * SflLogLineFunc:
 * @line: one complete rendered line, without the trailing newline
 * @user_data: as given to sfl_log_set_line_func()
 *
 * Receives every line the writer emits; tests use it to capture output.
 */
typedef void (*SflLogLineFunc)(const gchar *line, gpointer user_data);

/* returns wall-clock microseconds since the Unix epoch */
typedef gint64 (*SflLogClockFunc)(gpointer user_data);

gboolean sfl_log_level_from_string(const gchar *text, SflLogLevel *level);
gboolean sfl_log_format_from_string(const gchar *text, SflLogFormat *format);

void sfl_log_setup(SflLogFormat format, SflLogLevel level);
void sfl_log_set_line_func(SflLogLineFunc func, gpointer user_data);
void sfl_log_set_clock(SflLogClockFunc func, gpointer user_data);
void sfl_log_flush_repeats(void);
void sfl_log_append_quoted(GString *out, const gchar *value);

gchar *sfl_log_render(SflLogFormat format, GLogLevelFlags log_level, const GLogField *fields,
		      gsize n_fields, gint64 now_usec, guint repeated) G_GNUC_WARN_UNUSED_RESULT;

GLogWriterOutput sfl_log_writer(GLogLevelFlags log_level, const GLogField *fields, gsize n_fields,
				gpointer user_data);

G_END_DECLS
