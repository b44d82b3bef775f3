/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLog"

#include "config.h"

#include "sfl-log.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "sfl-autocleanups.h"
#include "sfl-platform.h"
#include "sfl-redact.h"

/* enough distinct failures for any outage, small enough that a storm cannot grow memory */
#define SFL_LOG_REPEAT_MAX_ENTRIES 256

#define SFL_LOG_DEFAULT_DOMAIN "sf2loki"

/*
 * one remembered warning; the fields are those of the latest suppressed occurrence, so a flush
 * can still say what was repeated; they are redacted when rendered, like any other line.
 */
typedef struct {
	gchar *key;
	GList link; /* in sfl_log_repeat_order, oldest print first */
	GLogLevelFlags log_level;
	GPtrArray *field_keys;	 /* (element-type utf8) */
	GPtrArray *field_values; /* (element-type utf8) */
	gint64 printed_usec;
	guint suppressed;
} SflLogRepeat;

/* one rendered line and the level it goes to the system log with */
typedef struct {
	SflLogLevel level;
	gchar *text;
} SflLogLine;

/* worker threads log too, so all of this is only touched under sfl_log_mutex */
static GMutex sfl_log_mutex;
static SflLogFormat sfl_log_format = SFL_LOG_FORMAT_JSON;
static SflLogLevel sfl_log_level = SFL_LOG_LEVEL_INFO;
static SflLogLineFunc sfl_log_line_func = NULL;
static gpointer sfl_log_line_data = NULL;
static SflLogClockFunc sfl_log_clock_func = NULL;
static gpointer sfl_log_clock_data = NULL;
static GHashTable *sfl_log_repeats = NULL; /* (owned): key → SflLogRepeat */
static GQueue sfl_log_repeat_order = G_QUEUE_INIT;

/* these describe the call site or duplicate the fixed columns, so they are not echoed */
static const gchar *const sfl_log_skipped_fields[] = {
	"MESSAGE",	    "PRIORITY",		 "GLIB_DOMAIN",
	"GLIB_OLD_LOG_API", "CODE_FILE",	 "CODE_LINE",
	"CODE_FUNC",	    "SYSLOG_IDENTIFIER", NULL,
};

/* an extra field must never overwrite one of the fixed keys */
static const gchar *const sfl_log_reserved_keys[] = {
	"timestamp", "level", "event", "logger", "repeated", NULL,
};

static const gchar *
sfl_log_level_to_string(SflLogLevel level)
{
	switch (level) {
	case SFL_LOG_LEVEL_DEBUG:
		return "debug";
	case SFL_LOG_LEVEL_INFO:
		return "info";
	case SFL_LOG_LEVEL_WARNING:
		return "warning";
	case SFL_LOG_LEVEL_ERROR:
		return "error";
	case SFL_LOG_LEVEL_CRITICAL:
		return "critical";
	}
	return "info";
}

/* GLib's names run one step hotter than ours: its critical is a failed check, an error */
static SflLogLevel
sfl_log_level_from_glib(GLogLevelFlags log_level)
{
	if (log_level & G_LOG_LEVEL_ERROR)
		return SFL_LOG_LEVEL_CRITICAL;
	if (log_level & G_LOG_LEVEL_CRITICAL)
		return SFL_LOG_LEVEL_ERROR;
	if (log_level & G_LOG_LEVEL_WARNING)
		return SFL_LOG_LEVEL_WARNING;
	if (log_level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO))
		return SFL_LOG_LEVEL_INFO;
	if (log_level & G_LOG_LEVEL_DEBUG)
		return SFL_LOG_LEVEL_DEBUG;
	return SFL_LOG_LEVEL_INFO;
}

/**
 * sfl_log_level_from_string:
 * @text: a level name from the config or command line, any case
 * @level: (out): set only on success
 *
 * Accepts debug, info, warning (or warn), error and critical.
 *
 * Returns: %TRUE if @text named a level
 */
gboolean
sfl_log_level_from_string(const gchar *text, SflLogLevel *level)
{
	g_return_val_if_fail(text != NULL, FALSE);
	g_return_val_if_fail(level != NULL, FALSE);

	if (g_ascii_strcasecmp(text, "warn") == 0) {
		*level = SFL_LOG_LEVEL_WARNING;
		return TRUE;
	}
	for (SflLogLevel i = SFL_LOG_LEVEL_DEBUG; i <= SFL_LOG_LEVEL_CRITICAL; i++) {
		if (g_ascii_strcasecmp(text, sfl_log_level_to_string(i)) == 0) {
			*level = i;
			return TRUE;
		}
	}
	return FALSE;
}

/**
 * sfl_log_format_from_string:
 * @text: "json" or "logfmt", any case
 * @format: (out): set only on success
 *
 * Returns: %TRUE if @text named a format
 */
gboolean
sfl_log_format_from_string(const gchar *text, SflLogFormat *format)
{
	g_return_val_if_fail(text != NULL, FALSE);
	g_return_val_if_fail(format != NULL, FALSE);

	if (g_ascii_strcasecmp(text, "json") == 0) {
		*format = SFL_LOG_FORMAT_JSON;
		return TRUE;
	}
	if (g_ascii_strcasecmp(text, "logfmt") == 0) {
		*format = SFL_LOG_FORMAT_LOGFMT;
		return TRUE;
	}
	return FALSE;
}

/**
 * sfl_log_setup:
 * @format: how lines are rendered
 * @level: the least severe level that is shown
 *
 * Installs sfl_log_writer() on the first call. GLib accepts a writer only once per process, so
 * later calls (a config reload, each test) only change @format and @level.
 */
void
sfl_log_setup(SflLogFormat format, SflLogLevel level)
{
	static gsize installed = 0;

	g_mutex_lock(&sfl_log_mutex);
	sfl_log_format = format;
	sfl_log_level = level;
	g_mutex_unlock(&sfl_log_mutex);

	/* outside our mutex: GLib may log while installing, and that would come back to us */
	if (g_once_init_enter(&installed)) {
		g_log_set_writer_func(sfl_log_writer, NULL, NULL);
		g_once_init_leave(&installed, 1);
	}
}

/**
 * sfl_log_set_line_func:
 * @func: (nullable): receives each line instead of stderr; %NULL restores stderr
 * @user_data: passed to @func
 *
 * @func may be called from any thread that logs, and must not log itself.
 */
void
sfl_log_set_line_func(SflLogLineFunc func, gpointer user_data)
{
	g_mutex_lock(&sfl_log_mutex);
	sfl_log_line_func = func;
	sfl_log_line_data = func != NULL ? user_data : NULL;
	g_mutex_unlock(&sfl_log_mutex);
}

/**
 * sfl_log_set_clock:
 * @func: (nullable): the time source for timestamps and repeat windows; %NULL restores
 *   g_get_real_time()
 * @user_data: passed to @func
 */
void
sfl_log_set_clock(SflLogClockFunc func, gpointer user_data)
{
	g_mutex_lock(&sfl_log_mutex);
	sfl_log_clock_func = func;
	sfl_log_clock_data = func != NULL ? user_data : NULL;
	g_mutex_unlock(&sfl_log_mutex);
}

static gint64
sfl_log_now(void)
{
	SflLogClockFunc func = NULL;
	gpointer user_data = NULL;

	/* called without the mutex held, so a clock that takes its own locks cannot deadlock */
	g_mutex_lock(&sfl_log_mutex);
	func = sfl_log_clock_func;
	user_data = sfl_log_clock_data;
	g_mutex_unlock(&sfl_log_mutex);
	return func != NULL ? func(user_data) : g_get_real_time();
}

static void
sfl_log_line_free(SflLogLine *line)
{
	g_free(line->text);
	g_free(line);
}

static GPtrArray *
sfl_log_lines_new(void)
{
	return g_ptr_array_new_with_free_func((GDestroyNotify)sfl_log_line_free);
}

/* takes @text */
static void
sfl_log_lines_add(GPtrArray *lines, GLogLevelFlags log_level, gchar *text)
{
	SflLogLine *line = g_new0(SflLogLine, 1);

	line->level = sfl_log_level_from_glib(log_level);
	line->text = text;
	g_ptr_array_add(lines, line);
}

static gchar *
sfl_log_format_timestamp(gint64 now_usec)
{
	g_autoptr(GDateTime) dt = NULL;
	g_autofree gchar *seconds = NULL;
	gint64 secs = now_usec / G_USEC_PER_SEC;
	gint64 usec = now_usec % G_USEC_PER_SEC;

	/* division truncates toward zero, but timestamps need the floor */
	if (usec < 0) {
		usec += G_USEC_PER_SEC;
		secs--;
	}
	dt = g_date_time_new_from_unix_utc(secs);
	/* a clock beyond year 9999 is broken; the epoch keeps the line parseable */
	if (dt == NULL) {
		dt = g_date_time_new_from_unix_utc(0);
		usec = 0;
	}
	seconds = g_date_time_format(dt, "%Y-%m-%dT%H:%M:%S");
	/* as Python's isoformat() writes it for the original: no fraction on a whole second */
	if (usec == 0)
		return g_strconcat(seconds, "Z", NULL);
	return g_strdup_printf("%s.%06" G_GINT64_FORMAT "Z", seconds, usec);
}

static gchar *
sfl_log_field_to_utf8(const GLogField *field)
{
	gssize len = field->length;

	if (field->value == NULL)
		return g_strdup("");
	if (len < 0)
		len = strlen(field->value);
	return g_utf8_make_valid(field->value, len);
}

static gboolean
sfl_log_field_is_skipped(const gchar *key)
{
	return g_strv_contains(sfl_log_skipped_fields, key);
}

/* the value as it may appear in output: valid UTF-8 with every secret masked */
static gchar *
sfl_log_field_to_safe(const gchar *key, const GLogField *field)
{
	g_autofree gchar *value = sfl_log_field_to_utf8(field);

	/* the key is rendered apart from the value, so the key=value rule cannot see it */
	if (key != NULL && value[0] != '\0' && sfl_redact_key_is_secret(key))
		return g_strdup(SFL_REDACTED);
	return sfl_redact(value);
}

static gchar *
sfl_log_field_key(const gchar *key)
{
	g_autofree gchar *valid = g_utf8_make_valid(key, -1);
	g_autofree gchar *lower = g_ascii_strdown(valid, -1);

	if (g_strv_contains(sfl_log_reserved_keys, lower))
		return g_strconcat("field_", lower, NULL);
	return g_steal_pointer(&lower);
}

static const GLogField *
sfl_log_find_field(const GLogField *fields, gsize n_fields, const gchar *key)
{
	for (gsize i = 0; i < n_fields; i++) {
		if (g_strcmp0(fields[i].key, key) == 0)
			return &fields[i];
	}
	return NULL;
}

static gchar *
sfl_log_find_safe(const GLogField *fields, gsize n_fields, const gchar *key, const gchar *fallback)
{
	const GLogField *field = sfl_log_find_field(fields, n_fields, key);

	if (field == NULL)
		return g_strdup(fallback);
	return sfl_log_field_to_safe(NULL, field);
}

static int
sfl_log_json_append(const char *buffer, size_t size, void *user_data)
{
	g_string_append_len(user_data, buffer, size);
	return 0;
}

static gchar *
sfl_log_render_json(const gchar *ts, const gchar *level, const gchar *domain, const gchar *msg,
		    const GLogField *fields, gsize n_fields, guint repeated)
{
	g_autoptr(json_t) root = json_object();
	g_autoptr(GString) out = g_string_new(NULL);

	json_object_set_new(root, "timestamp", json_string(ts));
	json_object_set_new(root, "level", json_string(level));
	json_object_set_new(root, "event", json_string(msg));
	json_object_set_new(root, "logger", json_string(domain));
	for (gsize i = 0; i < n_fields; i++) {
		g_autofree gchar *key = NULL;
		g_autofree gchar *value = NULL;

		if (fields[i].key == NULL || sfl_log_field_is_skipped(fields[i].key))
			continue;
		key = sfl_log_field_key(fields[i].key);
		value = sfl_log_field_to_safe(fields[i].key, &fields[i]);
		json_object_set_new(root, key, json_string(value));
	}
	if (repeated > 0)
		json_object_set_new(root, "repeated", json_integer(repeated));

	/* dumping into a GString keeps jansson's allocator out of our ownership rules */
	if (json_dump_callback(root, sfl_log_json_append, out,
			       JSON_COMPACT | JSON_PRESERVE_ORDER) != 0) {
		/* only allocation failure gets here; a bare line beats losing the event */
		g_string_printf(out, "{\"timestamp\":\"%s\",\"level\":\"%s\"}", ts, level);
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

static gboolean
sfl_log_logfmt_needs_quotes(const gchar *value)
{
	if (value[0] == '\0')
		return TRUE;
	for (const gchar *p = value; *p != '\0'; p++) {
		/* control bytes would break the one-event-per-line promise if left bare */
		if ((guchar)*p <= ' ' || *p == '=' || *p == '"' || *p == '\\' || *p == 0x7f)
			return TRUE;
	}
	return FALSE;
}

/**
 * sfl_log_append_quoted:
 *
 * Appends @value in double quotes with backslash escapes (\" \\ \n \r \t \uXXXX), a form
 * that logfmt readers and YAML's double-quoted scalars both read back as the same text.
 */
void
sfl_log_append_quoted(GString *out, const gchar *value)
{
	g_string_append_c(out, '"');
	for (const gchar *p = value; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			g_string_append(out, "\\\"");
			break;
		case '\\':
			g_string_append(out, "\\\\");
			break;
		case '\n':
			g_string_append(out, "\\n");
			break;
		case '\r':
			g_string_append(out, "\\r");
			break;
		case '\t':
			g_string_append(out, "\\t");
			break;
		default:
			if ((guchar)*p < ' ' || *p == 0x7f)
				g_string_append_printf(out, "\\u%04x", (guint)(guchar)*p);
			else
				g_string_append_c(out, *p);
			break;
		}
	}
	g_string_append_c(out, '"');
}

static void
sfl_log_logfmt_append_value(GString *out, const gchar *value)
{
	if (!sfl_log_logfmt_needs_quotes(value)) {
		g_string_append(out, value);
		return;
	}
	sfl_log_append_quoted(out, value);
}

static void
sfl_log_logfmt_append_pair(GString *out, const gchar *key, const gchar *value)
{
	if (out->len > 0)
		g_string_append_c(out, ' ');
	g_string_append(out, key);
	g_string_append_c(out, '=');
	sfl_log_logfmt_append_value(out, value);
}

/* logfmt keys cannot be quoted, so anything that would split the pair becomes '_' */
static gchar *
sfl_log_logfmt_key(const gchar *key)
{
	g_autofree gchar *safe = sfl_log_field_key(key);

	if (safe[0] == '\0')
		return g_strdup("_");
	for (gchar *p = safe; *p != '\0'; p++) {
		if (!g_ascii_isalnum(*p) && *p != '_' && *p != '.' && *p != '-')
			*p = '_';
	}
	return g_steal_pointer(&safe);
}

static gchar *
sfl_log_render_logfmt(const gchar *ts, const gchar *level, const gchar *domain, const gchar *msg,
		      const GLogField *fields, gsize n_fields, guint repeated)
{
	g_autoptr(GString) out = g_string_new(NULL);

	sfl_log_logfmt_append_pair(out, "timestamp", ts);
	sfl_log_logfmt_append_pair(out, "level", level);
	sfl_log_logfmt_append_pair(out, "event", msg);
	sfl_log_logfmt_append_pair(out, "logger", domain);
	for (gsize i = 0; i < n_fields; i++) {
		g_autofree gchar *key = NULL;
		g_autofree gchar *value = NULL;

		if (fields[i].key == NULL || sfl_log_field_is_skipped(fields[i].key))
			continue;
		key = sfl_log_logfmt_key(fields[i].key);
		value = sfl_log_field_to_safe(fields[i].key, &fields[i]);
		sfl_log_logfmt_append_pair(out, key, value);
	}
	if (repeated > 0)
		g_string_append_printf(out, " repeated=%u", repeated);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/**
 * sfl_log_render:
 * @format: JSON or logfmt
 * @log_level: the GLib level of the message
 * @fields: (array length=n_fields): the structured fields
 * @n_fields: number of @fields
 * @now_usec: the timestamp, in microseconds since the Unix epoch
 * @repeated: how many identical lines were suppressed before this one, or 0
 *
 * Renders one line with the original's keys first (timestamp, level, event = the message,
 * logger = the GLib log domain), then every other field under its lower-cased key, so queries
 * written against the Python original's own logs keep working. Every value is made valid UTF-8
 * and passed through sfl_redact(); fields whose key looks secret are masked whole.
 *
 * Returns: (transfer full): the line, without a trailing newline
 */
gchar *
sfl_log_render(SflLogFormat format, GLogLevelFlags log_level, const GLogField *fields,
	       gsize n_fields, gint64 now_usec, guint repeated)
{
	g_autofree gchar *ts = NULL;
	g_autofree gchar *domain = NULL;
	g_autofree gchar *msg = NULL;
	const gchar *level = sfl_log_level_to_string(sfl_log_level_from_glib(log_level));

	g_return_val_if_fail(fields != NULL || n_fields == 0, NULL);

	ts = sfl_log_format_timestamp(now_usec);
	domain = sfl_log_find_safe(fields, n_fields, "GLIB_DOMAIN", SFL_LOG_DEFAULT_DOMAIN);
	msg = sfl_log_find_safe(fields, n_fields, "MESSAGE", "");
	if (format == SFL_LOG_FORMAT_LOGFMT)
		return sfl_log_render_logfmt(ts, level, domain, msg, fields, n_fields, repeated);
	return sfl_log_render_json(ts, level, domain, msg, fields, n_fields, repeated);
}

static void
sfl_log_repeat_free(SflLogRepeat *repeat)
{
	g_free(repeat->key);
	g_ptr_array_unref(repeat->field_keys);
	g_ptr_array_unref(repeat->field_values);
	g_free(repeat);
}

/* the domain length makes the key unambiguous whatever either part contains */
static gchar *
sfl_log_repeat_key(const GLogField *fields, gsize n_fields)
{
	g_autofree gchar *domain =
		sfl_log_find_safe(fields, n_fields, "GLIB_DOMAIN", SFL_LOG_DEFAULT_DOMAIN);
	g_autofree gchar *msg = sfl_log_find_safe(fields, n_fields, "MESSAGE", "");

	return g_strdup_printf("%zu:%s:%s", strlen(domain), domain, msg);
}

static void
sfl_log_repeat_save_fields(SflLogRepeat *repeat, GLogLevelFlags log_level, const GLogField *fields,
			   gsize n_fields)
{
	repeat->log_level = log_level;
	g_ptr_array_set_size(repeat->field_keys, 0);
	g_ptr_array_set_size(repeat->field_values, 0);
	for (gsize i = 0; i < n_fields; i++) {
		if (fields[i].key == NULL)
			continue;
		g_ptr_array_add(repeat->field_keys, g_strdup(fields[i].key));
		g_ptr_array_add(repeat->field_values, sfl_log_field_to_utf8(&fields[i]));
	}
}

static gchar *
sfl_log_repeat_render(SflLogRepeat *repeat, SflLogFormat format, gint64 now_usec)
{
	g_autofree GLogField *fields = g_new0(GLogField, repeat->field_keys->len);

	for (guint i = 0; i < repeat->field_keys->len; i++) {
		fields[i].key = g_ptr_array_index(repeat->field_keys, i);
		fields[i].value = g_ptr_array_index(repeat->field_values, i);
		fields[i].length = -1;
	}
	return sfl_log_render(format, repeat->log_level, fields, repeat->field_keys->len, now_usec,
			      repeat->suppressed);
}

/* called with sfl_log_mutex held */
static void
sfl_log_repeat_evict_oldest(SflLogFormat format, gint64 now_usec, GPtrArray *lines)
{
	SflLogRepeat *oldest = g_queue_peek_head(&sfl_log_repeat_order);

	if (oldest == NULL)
		return;
	/* a count that is about to be forgotten is printed rather than lost */
	if (oldest->suppressed > 0)
		sfl_log_lines_add(lines, oldest->log_level,
				  sfl_log_repeat_render(oldest, format, now_usec));
	g_queue_unlink(&sfl_log_repeat_order, &oldest->link);
	g_hash_table_remove(sfl_log_repeats, oldest->key);
}

/*
 * decides whether a warning is printed, called with sfl_log_mutex held; returns FALSE when it
 * was suppressed; otherwise @repeated is the number suppressed since it was last printed.
 */
static gboolean
sfl_log_repeat_check(const gchar *key, GLogLevelFlags log_level, const GLogField *fields,
		     gsize n_fields, SflLogFormat format, gint64 now_usec, guint *repeated,
		     GPtrArray *lines)
{
	SflLogRepeat *repeat = NULL;

	if (sfl_log_repeats == NULL) {
		sfl_log_repeats = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
							(GDestroyNotify)sfl_log_repeat_free);
	}
	repeat = g_hash_table_lookup(sfl_log_repeats, key);
	if (repeat == NULL) {
		if (g_hash_table_size(sfl_log_repeats) >= SFL_LOG_REPEAT_MAX_ENTRIES)
			sfl_log_repeat_evict_oldest(format, now_usec, lines);
		repeat = g_new0(SflLogRepeat, 1);
		repeat->key = g_strdup(key);
		repeat->link.data = repeat;
		repeat->field_keys = g_ptr_array_new_with_free_func(g_free);
		repeat->field_values = g_ptr_array_new_with_free_func(g_free);
		repeat->printed_usec = now_usec;
		g_hash_table_insert(sfl_log_repeats, repeat->key, repeat);
		g_queue_push_tail_link(&sfl_log_repeat_order, &repeat->link);
		*repeated = 0;
		return TRUE;
	}

	/* a clock that stepped backwards ends the window rather than stretching it */
	if (now_usec >= repeat->printed_usec &&
	    now_usec - repeat->printed_usec < SFL_LOG_REPEAT_WINDOW_USEC) {
		repeat->suppressed++;
		sfl_log_repeat_save_fields(repeat, log_level, fields, n_fields);
		return FALSE;
	}

	*repeated = repeat->suppressed;
	repeat->suppressed = 0;
	repeat->printed_usec = now_usec;
	g_ptr_array_set_size(repeat->field_keys, 0);
	g_ptr_array_set_size(repeat->field_values, 0);
	g_queue_unlink(&sfl_log_repeat_order, &repeat->link);
	g_queue_push_tail_link(&sfl_log_repeat_order, &repeat->link);
	return TRUE;
}

/* error and critical are errors to the Event Log; debug lines never get there */
static SflPlatformEventType
sfl_log_event_type(SflLogLevel level)
{
	switch (level) {
	case SFL_LOG_LEVEL_CRITICAL:
	case SFL_LOG_LEVEL_ERROR:
		return SFL_PLATFORM_EVENT_ERROR;
	case SFL_LOG_LEVEL_WARNING:
		return SFL_PLATFORM_EVENT_WARNING;
	case SFL_LOG_LEVEL_INFO:
	case SFL_LOG_LEVEL_DEBUG:
		break;
	}
	return SFL_PLATFORM_EVENT_INFO;
}

static void
sfl_log_emit(GPtrArray *lines)
{
	SflLogLineFunc func = NULL;
	gpointer user_data = NULL;

	g_mutex_lock(&sfl_log_mutex);
	func = sfl_log_line_func;
	user_data = sfl_log_line_data;
	g_mutex_unlock(&sfl_log_mutex);

	for (guint i = 0; i < lines->len; i++) {
		const SflLogLine *line = g_ptr_array_index(lines, i);

		if (func != NULL) {
			func(line->text, user_data);
		} else {
			/* one fwrite per line, so lines from several threads never interleave */
			g_autofree gchar *buf = g_strconcat(line->text, "\n", NULL);

			fwrite(buf, 1, strlen(buf), stderr);
			fflush(stderr);
		}
		/*
		 * a Windows service has no console: the same redacted line goes to the Event Log
		 * (docs/internals/logging.md); elsewhere, and in console mode, this does nothing
		 */
		if (line->level != SFL_LOG_LEVEL_DEBUG)
			(void)sfl_platform_event_log_write(sfl_log_event_type(line->level),
							   line->text, NULL);
	}
}

/* G_DEBUG=fatal-criticals / fatal-warnings, read once */
static gboolean
sfl_log_debug_fatal(GLogLevelFlags level)
{
	static gsize once = 0;
	static guint flags = 0;
	if (g_once_init_enter(&once)) {
		const GDebugKey keys[] = { { "fatal-warnings",
					     G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL },
					   { "fatal-criticals", G_LOG_LEVEL_CRITICAL } };
		flags = g_parse_debug_string(g_getenv("G_DEBUG"), keys, G_N_ELEMENTS(keys));
		g_once_init_leave(&once, 1);
	}
	return (flags & level) != 0;
}

/**
 * sfl_log_writer:
 * @log_level: the GLib level, possibly with %G_LOG_FLAG_FATAL
 * @fields: (array length=n_fields): the structured fields
 * @n_fields: number of @fields
 * @user_data: unused
 *
 * The process-wide #GLogWriterFunc. Filters by the configured level (G_MESSAGES_DEBUG plays no
 * part), counts identical warnings instead of repeating them within
 * %SFL_LOG_REPEAT_WINDOW_USEC, and writes one redacted line. Fatal messages are always written
 * and never suppressed; GLib aborts after this returns.
 *
 * Returns: %G_LOG_WRITER_HANDLED
 */
GLogWriterOutput
sfl_log_writer(GLogLevelFlags log_level, const GLogField *fields, gsize n_fields,
	       gpointer user_data)
{
	g_autoptr(GPtrArray) lines = sfl_log_lines_new();
	SflLogLevel level = sfl_log_level_from_glib(log_level);
	gboolean fatal = (log_level & (G_LOG_FLAG_FATAL | G_LOG_LEVEL_ERROR)) != 0;
	SflLogLevel threshold = SFL_LOG_LEVEL_INFO;
	SflLogFormat format = SFL_LOG_FORMAT_JSON;
	guint repeated = 0;
	gint64 now_usec = 0;

	g_return_val_if_fail(fields != NULL || n_fields == 0, G_LOG_WRITER_UNHANDLED);

	g_mutex_lock(&sfl_log_mutex);
	threshold = sfl_log_level;
	format = sfl_log_format;
	g_mutex_unlock(&sfl_log_mutex);

	if (!fatal && level < threshold)
		return G_LOG_WRITER_HANDLED;
	now_usec = sfl_log_now();

	/* the last words before an abort are never swallowed */
	if (!fatal && level >= SFL_LOG_LEVEL_WARNING) {
		g_autofree gchar *key = sfl_log_repeat_key(fields, n_fields);
		gboolean print = FALSE;

		g_mutex_lock(&sfl_log_mutex);
		print = sfl_log_repeat_check(key, log_level, fields, n_fields, format, now_usec,
					     &repeated, lines);
		g_mutex_unlock(&sfl_log_mutex);
		if (!print)
			return G_LOG_WRITER_HANDLED;
	}

	sfl_log_lines_add(lines, log_level,
			  sfl_log_render(format, log_level, fields, n_fields, now_usec, repeated));
	sfl_log_emit(lines);
	/* a custom writer bypasses GLib's G_DEBUG handling; keep tests' fatal-criticals working */
	if ((log_level & G_LOG_LEVEL_CRITICAL) && sfl_log_debug_fatal(G_LOG_LEVEL_CRITICAL))
		g_abort();
	if ((log_level & G_LOG_LEVEL_WARNING) && sfl_log_debug_fatal(G_LOG_LEVEL_WARNING))
		g_abort();
	return G_LOG_WRITER_HANDLED;
}

/**
 * sfl_log_flush_repeats:
 *
 * Prints one line, with its count, for every warning that was suppressed since it was last
 * printed, then forgets all of them. Call it on shutdown so no count is lost.
 */
void
sfl_log_flush_repeats(void)
{
	g_autoptr(GPtrArray) lines = sfl_log_lines_new();
	gint64 now_usec = sfl_log_now();

	g_mutex_lock(&sfl_log_mutex);
	for (GList *l = sfl_log_repeat_order.head; l != NULL; l = l->next) {
		SflLogRepeat *repeat = l->data;

		if (repeat->suppressed > 0)
			sfl_log_lines_add(lines, repeat->log_level,
					  sfl_log_repeat_render(repeat, sfl_log_format, now_usec));
	}
	/* the queue links live inside the entries, so unhook them before the table frees them */
	g_queue_init(&sfl_log_repeat_order);
	g_clear_pointer(&sfl_log_repeats, g_hash_table_unref);
	g_mutex_unlock(&sfl_log_mutex);

	sfl_log_emit(lines);
}
