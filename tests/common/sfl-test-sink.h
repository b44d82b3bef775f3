/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>

#include "sfl-clock.h"
#include "sfl-sink.h"

G_BEGIN_DECLS

/*
 * SflTestSink: the scripted fake sink of the pipeline and egress suites. It records every
 * push (its lines and the fake monotonic time), counts each line it accepted, and answers
 * OK unless the test scripts otherwise. The fields are the script: tests set them directly.
 * Answers are decided in this order: a line in @rejected or @retried, then @max_ok_len, then
 * the front of @script, else OK.
 */

typedef struct {
	GPtrArray *lines; /* gchar*, what the sink received */
	gint64 at_usec;	  /* fake monotonic time of the push */
} SflTestPush;

#define SFL_TEST_TYPE_SINK (sfl_test_sink_get_type())
G_DECLARE_FINAL_TYPE(SflTestSink, sfl_test_sink, SFL_TEST, SINK, SflSink)

struct _SflTestSink {
	SflSink parent_instance;
	SflClock *clock;
	GPtrArray *pushes;    /* SflTestPush */
	GArray *script;	      /* consumed from the front for pushes no other rule decides */
	GHashTable *rejected; /* line -> reason: any batch holding it is REJECTED */
	GHashTable *retried;  /* line -> unused: any batch holding it is RETRY */
	GHashTable *accepted; /* line -> times accepted */
	guint max_ok_len;     /* larger batches are REJECTED oversized_413; 0 = no limit */
	gboolean hold;	      /* keep pushes unanswered */
	gboolean late_ok;     /* answer a cancelled push anyway, as a request already sent may */
	gchar *hold_prefix;   /* keep pushes whose first line has this prefix unanswered */
	GPtrArray *held;      /* GTask */
};

/* a sink reading push times from @clock (a fake one) */
SflTestSink *sfl_test_sink_new(SflClock *clock) G_GNUC_WARN_UNUSED_RESULT;

/* appends one answer to the script: @outcome with @retry_after_usec (-1: none) */
void sfl_test_sink_script(SflTestSink *self, SflSinkOutcome outcome, gint64 retry_after_usec);

/* answers every held push (and stops holding) */
void sfl_test_sink_release(SflTestSink *self);

/* how many times @line was in a push answered OK */
guint sfl_test_sink_accepted(SflTestSink *self, const gchar *line);

G_END_DECLS
