/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflSink"

#include "config.h"

#include "sfl-sink.h"

G_DEFINE_ABSTRACT_TYPE(SflSink, sfl_sink, G_TYPE_OBJECT)

SflSinkResult *
sfl_sink_result_new(SflSinkOutcome outcome)
{
	SflSinkResult *result = g_new0(SflSinkResult, 1);
	result->outcome = outcome;
	result->retry_after_usec = -1;
	return result;
}

void
sfl_sink_result_free(SflSinkResult *result)
{
	if (result == NULL)
		return;
	g_free(result->reason);
	g_free(result->detail);
	if (result->verdicts != NULL)
		g_array_unref(result->verdicts);
	g_free(result);
}

const gchar *
sfl_sink_outcome_to_string(SflSinkOutcome outcome)
{
	switch (outcome) {
	case SFL_SINK_OK:
		return "ok";
	case SFL_SINK_RETRY:
		return "retry";
	case SFL_SINK_REJECTED:
		return "rejected";
	case SFL_SINK_FATAL:
		return "fatal";
	case SFL_SINK_PARTIAL:
		return "partial";
	}
	return "unknown";
}

/**
 * sfl_sink_push_async:
 * @self: a sink
 * @batch: (transfer none): the entries; must stay alive until the push finishes
 * @cancellable: (nullable): aborts the request
 * @callback: completion
 * @user_data: for @callback
 */
void
sfl_sink_push_async(SflSink *self, SflBatch *batch, GCancellable *cancellable,
		    GAsyncReadyCallback callback, gpointer user_data)
{
	g_return_if_fail(SFL_IS_SINK(self));
	g_return_if_fail(batch != NULL);
	SFL_SINK_GET_CLASS(self)->push_async(self, batch, cancellable, callback, user_data);
}

/**
 * sfl_sink_push_finish:
 * @self: a sink
 * @result: the result
 * @error: return location for an error (only cancellation)
 *
 * Returns: (transfer full): the classified outcome, or %NULL when cancelled
 */
SflSinkResult *
sfl_sink_push_finish(SflSink *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(SFL_IS_SINK(self), NULL);
	return SFL_SINK_GET_CLASS(self)->push_finish(self, result, error);
}

static void
sfl_sink_class_init(SflSinkClass *klass)
{
}

static void
sfl_sink_init(SflSink *self)
{
}
