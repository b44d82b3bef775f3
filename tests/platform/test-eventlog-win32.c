/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestEventLog"

/*
 * The log writer (src/core/sfl-log.c) and the Windows Event Log (platform/win32/
 * sfl-service-win32.c) together, under wine: a service run (the test plays the SCM through
 * sfl_service_win32_serve with a fake handle) logs at every level, ReportEventW is replaced by
 * a recorder, and each event must be the very line the console writer printed, redacted, with
 * the type its level maps to. Outside the service run nothing reaches the Event Log.
 */

#include <windows.h>

#include <glib.h>
#include <string.h>

#include "sfl-log.h"
#include "sfl-platform.h"
#include "sfl-redact.h"
#include "sfl-scm.h"
#include "win32/sfl-service-win32-private.h"

#define TEST_FAKE_HANDLE ((SERVICE_STATUS_HANDLE)(uintptr_t)0x5f1)

/* a token shape the redactor masks after "Bearer " */
#define TEST_SECRET "00D5g000004BCDe!AQ8AQFakeToken"

typedef struct {
	WORD type;
	DWORD id;
	gchar *text; /* UTF-8 */
} TestEvent;

static GPtrArray *test_lines;  /* (element-type utf8): what the console writer printed */
static GPtrArray *test_events; /* (element-type TestEvent) */

static void
test_event_free(TestEvent *ev)
{
	g_free(ev->text);
	g_free(ev);
}

static void
test_capture_line(const gchar *line, gpointer user_data)
{
	g_ptr_array_add(test_lines, g_strdup(line));
}

static BOOL WINAPI
test_report_event(HANDLE source, WORD type, WORD category, DWORD event_id, PSID user_sid,
		  WORD n_strings, DWORD data_size, LPCWSTR *strings, LPVOID data)
{
	TestEvent *ev = g_new0(TestEvent, 1);

	ev->type = type;
	ev->id = event_id;
	if (n_strings == 1 && strings != NULL)
		ev->text = g_utf16_to_utf8((const gunichar2 *)strings[0], -1, NULL, NULL, NULL);
	g_ptr_array_add(test_events, ev);
	return TRUE;
}

static BOOL WINAPI
test_set_status(SERVICE_STATUS_HANDLE handle, LPSERVICE_STATUS status)
{
	return TRUE;
}

/* the last words of g_error(), which would abort if it went through g_log */
static void
test_log_error_level(void)
{
	const GLogField fields[] = {
		{ "MESSAGE", "fatal: cannot open the store", -1 },
		{ "GLIB_DOMAIN", G_LOG_DOMAIN, -1 },
	};

	(void)sfl_log_writer(G_LOG_LEVEL_ERROR, fields, G_N_ELEMENTS(fields), NULL);
}

static int
test_service_main(int argc, char **argv, void *user_data)
{
	g_debug("debug lines stay out of the Event Log");
	g_info("an info line");
	g_message("a message line");
	g_warning("refreshing with Authorization: Bearer " TEST_SECRET);
	g_critical("a failed check");
	test_log_error_level();
	/* the configured format is what goes out, JSON or logfmt */
	sfl_log_setup(SFL_LOG_FORMAT_LOGFMT, SFL_LOG_LEVEL_DEBUG);
	g_message("a logfmt line");
	sfl_log_setup(SFL_LOG_FORMAT_JSON, SFL_LOG_LEVEL_DEBUG);
	return 0;
}

static void
test_eventlog_levels_and_text(void)
{
	static const struct {
		const gchar *event; /* the message, as rendered */
		WORD type;
	} want[] = {
		{ "an info line", EVENTLOG_INFORMATION_TYPE },
		{ "a message line", EVENTLOG_INFORMATION_TYPE },
		{ "refreshing with Authorization: Bearer " SFL_REDACTED, EVENTLOG_WARNING_TYPE },
		{ "a failed check", EVENTLOG_ERROR_TYPE },
		{ "fatal: cannot open the store", EVENTLOG_ERROR_TYPE },
		{ "a logfmt line", EVENTLOG_INFORMATION_TYPE },
	};

	test_lines = g_ptr_array_new_with_free_func(g_free);
	test_events = g_ptr_array_new_with_free_func((GDestroyNotify)test_event_free);
	sfl_log_setup(SFL_LOG_FORMAT_JSON, SFL_LOG_LEVEL_DEBUG);
	sfl_log_set_line_func(test_capture_line, NULL);
	sfl_service_win32_set_status_func(test_set_status);
	sfl_service_win32_set_report_event_func(test_report_event);
	sfl_service_win32_set_tick_ms(INFINITE);

	/* console mode: the line is printed, the Event Log hears nothing */
	g_message("before the service run");
	g_assert_cmpuint(test_lines->len, ==, 1);
	g_assert_cmpuint(test_events->len, ==, 0);
	g_ptr_array_set_size(test_lines, 0);

	g_assert_cmpint(sfl_service_win32_serve(TEST_FAKE_HANDLE, test_service_main, 0, NULL, NULL),
			==, 0);

	/* the debug line was printed but not reported */
	g_assert_cmpuint(test_lines->len, ==, G_N_ELEMENTS(want) + 1);
	g_assert_nonnull(strstr(g_ptr_array_index(test_lines, 0), "debug lines stay out"));
	g_assert_cmpuint(test_events->len, ==, G_N_ELEMENTS(want));
	for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
		const TestEvent *ev = g_ptr_array_index(test_events, i);
		const gchar *line = g_ptr_array_index(test_lines, i + 1);

		g_assert_cmpuint(ev->type, ==, want[i].type);
		g_assert_cmpuint(ev->id, ==, 1);
		/* the very line the console got: same format, same redaction */
		g_assert_cmpstr(ev->text, ==, line);
		g_assert_nonnull(strstr(ev->text, want[i].event));
		g_assert_null(strstr(ev->text, TEST_SECRET));
	}
	g_assert_true(g_str_has_prefix(((TestEvent *)g_ptr_array_index(test_events, 0))->text,
				       "{\"timestamp\":"));
	g_assert_true(g_str_has_prefix(((TestEvent *)g_ptr_array_index(test_events, 5))->text,
				       "timestamp="));

	/* the run is over: printed, not reported */
	g_message("after the service run");
	g_assert_cmpuint(test_events->len, ==, G_N_ELEMENTS(want));
	g_assert_cmpuint(test_lines->len, ==, G_N_ELEMENTS(want) + 2);

	sfl_log_set_line_func(NULL, NULL);
	sfl_service_win32_set_report_event_func(NULL);
	sfl_service_win32_set_status_func(NULL);
	sfl_service_win32_set_tick_ms(SFL_SCM_TICK_MS);
	g_clear_pointer(&test_events, g_ptr_array_unref);
	g_clear_pointer(&test_lines, g_ptr_array_unref);
}

int
main(int argc, char **argv)
{
	/*
	 * the g_warning() and g_critical() this test maps must not abort: G_DEBUG=fatal-criticals
	 * (the suites' environment) is read by the writer on its first line, and g_test_init()
	 * makes both levels fatal
	 */
	g_unsetenv("G_DEBUG");
	g_test_init(&argc, &argv, NULL);
	g_log_set_always_fatal(G_LOG_FATAL_MASK);
	g_test_add_func("/sfl/eventlog/levels-and-text", test_eventlog_levels_and_text);
	return g_test_run();
}
