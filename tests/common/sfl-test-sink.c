/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestSink"

#include "config.h"

#include "sfl-test-sink.h"

typedef struct {
	SflSinkOutcome outcome;
	gint64 retry_after_usec;
} SflTestOutcome;

G_DEFINE_TYPE(SflTestSink, sfl_test_sink, SFL_TYPE_SINK)

static void
sfl_test_push_free(SflTestPush *push)
{
	g_ptr_array_unref(push->lines);
	g_free(push);
}

static SflSinkResult *
sfl_test_sink_decide(SflTestSink *self, SflTestPush *push)
{
	SflSinkResult *result;

	for (guint i = 0; i < push->lines->len; i++) {
		const gchar *reason = g_hash_table_lookup(self->rejected, push->lines->pdata[i]);
		if (reason != NULL) {
			result = sfl_sink_result_new(SFL_SINK_REJECTED);
			result->reason = g_strdup(reason);
			return result;
		}
		if (g_hash_table_contains(self->retried, push->lines->pdata[i]))
			return sfl_sink_result_new(SFL_SINK_RETRY);
	}
	if (self->max_ok_len > 0 && push->lines->len > self->max_ok_len) {
		result = sfl_sink_result_new(SFL_SINK_REJECTED);
		result->reason = g_strdup("oversized_413");
		return result;
	}
	if (self->script->len > 0) {
		SflTestOutcome o = g_array_index(self->script, SflTestOutcome, 0);
		g_array_remove_index(self->script, 0);
		result = sfl_sink_result_new(o.outcome);
		result->retry_after_usec = o.retry_after_usec;
		if (o.outcome == SFL_SINK_FATAL)
			result->reason = g_strdup("scripted fatal");
		return result;
	}
	return sfl_sink_result_new(SFL_SINK_OK);
}

static void
sfl_test_sink_answer(SflTestSink *self, GTask *task_in)
{
	g_autoptr(GTask) task = task_in;
	SflTestPush *push = g_task_get_task_data(task);
	SflSinkResult *result;

	if (!self->late_ok && g_task_return_error_if_cancelled(task))
		return;
	g_task_set_check_cancellable(task, !self->late_ok);
	result = sfl_test_sink_decide(self, push);
	if (result->outcome == SFL_SINK_OK) {
		for (guint i = 0; i < push->lines->len; i++) {
			gpointer n = g_hash_table_lookup(self->accepted, push->lines->pdata[i]);
			g_hash_table_insert(self->accepted, g_strdup(push->lines->pdata[i]),
					    GUINT_TO_POINTER(GPOINTER_TO_UINT(n) + 1));
		}
	}
	g_task_return_pointer(task, result, (GDestroyNotify)sfl_sink_result_free);
}

static void
sfl_test_sink_push_async(SflSink *sink, SflBatch *batch, GCancellable *cancellable,
			 GAsyncReadyCallback callback, gpointer user_data)
{
	SflTestSink *self = SFL_TEST_SINK(sink);
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
	SflTestPush *push = g_new0(SflTestPush, 1);

	push->lines = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < sfl_batch_get_length(batch); i++)
		g_ptr_array_add(push->lines, g_strdup(sfl_batch_get(batch, i)->line));
	push->at_usec = sfl_clock_monotonic_usec(self->clock);
	g_ptr_array_add(self->pushes, push);
	g_task_set_task_data(task, push, NULL);
	if (self->hold || (self->hold_prefix != NULL && push->lines->len > 0 &&
			   g_str_has_prefix(push->lines->pdata[0], self->hold_prefix))) {
		g_ptr_array_add(self->held, g_steal_pointer(&task));
		return;
	}
	sfl_test_sink_answer(self, g_steal_pointer(&task));
}

static SflSinkResult *
sfl_test_sink_push_finish(SflSink *sink, GAsyncResult *result, GError **error)
{
	return g_task_propagate_pointer(G_TASK(result), error);
}

void
sfl_test_sink_release(SflTestSink *self)
{
	g_autoptr(GPtrArray) held = g_steal_pointer(&self->held);

	self->held = g_ptr_array_new();
	self->hold = FALSE;
	g_clear_pointer(&self->hold_prefix, g_free);
	for (guint i = 0; i < held->len; i++)
		sfl_test_sink_answer(self, held->pdata[i]);
}

guint
sfl_test_sink_accepted(SflTestSink *self, const gchar *line)
{
	return GPOINTER_TO_UINT(g_hash_table_lookup(self->accepted, line));
}

void
sfl_test_sink_script(SflTestSink *self, SflSinkOutcome outcome, gint64 retry_after_usec)
{
	SflTestOutcome o = { outcome, retry_after_usec };
	g_array_append_val(self->script, o);
}

static void
sfl_test_sink_finalize(GObject *object)
{
	SflTestSink *self = SFL_TEST_SINK(object);

	/* a push left unanswered would be a test that forgot to release it */
	g_assert_cmpuint(self->held->len, ==, 0);
	g_ptr_array_unref(self->held);
	g_ptr_array_unref(self->pushes);
	g_array_unref(self->script);
	g_hash_table_unref(self->rejected);
	g_hash_table_unref(self->retried);
	g_hash_table_unref(self->accepted);
	g_free(self->hold_prefix);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	G_OBJECT_CLASS(sfl_test_sink_parent_class)->finalize(object);
}

static void
sfl_test_sink_class_init(SflTestSinkClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = sfl_test_sink_finalize;
	SFL_SINK_CLASS(klass)->push_async = sfl_test_sink_push_async;
	SFL_SINK_CLASS(klass)->push_finish = sfl_test_sink_push_finish;
}

static void
sfl_test_sink_init(SflTestSink *self)
{
	self->pushes = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_test_push_free);
	self->script = g_array_new(FALSE, FALSE, sizeof(SflTestOutcome));
	self->rejected = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	self->retried = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	self->accepted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	self->held = g_ptr_array_new();
}

SflTestSink *
sfl_test_sink_new(SflClock *clock)
{
	SflTestSink *self = g_object_new(SFL_TEST_TYPE_SINK, NULL);

	self->clock = sfl_clock_ref(clock);
	return self;
}
