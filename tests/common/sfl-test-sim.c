/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestSim"

#include "config.h"

#include "sfl-test-sim.h"

#include <string.h>

#include "sfl-http.h"

#define SFL_TEST_SIM_DEADLINE_SEC 30

static void
sfl_test_sim_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	GAsyncResult **out = user_data;
	*out = g_object_ref(result);
}

static gboolean
sfl_test_sim_expired_cb(gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
	return G_SOURCE_REMOVE;
}

/**
 * sfl_test_sim_control:
 * @loop: the curl loop of the test
 * @base: the simulator's base URL
 * @method: GET or POST
 * @path: e.g. "/control/fault"
 * @json: (nullable): the request body
 *
 * Returns: (transfer full): the answer; the call must succeed with 200 within a deadline
 */
json_t *
sfl_test_sim_control(SflCurlLoop *loop, const gchar *base, const gchar *method, const gchar *path,
		     const gchar *json)
{
	g_autoptr(GAsyncResult) result = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(SflHttpResponse) response = NULL;
	g_autoptr(GBytes) body = json != NULL ? g_bytes_new(json, strlen(json)) : NULL;
	g_autoptr(GSource) deadline = g_timeout_source_new_seconds(SFL_TEST_SIM_DEADLINE_SEC);
	g_autofree gchar *url = g_strconcat(base, path, NULL);
	const gchar *headers[] = { "Content-Type: application/json", NULL };
	gboolean expired = FALSE;
	json_error_t jerr;
	gsize len = 0;
	const gchar *data;
	json_t *doc;

	sfl_http_request_async(loop, method, url, headers, body, 10000, NULL, sfl_test_sim_done_cb,
			       &result);
	g_source_set_callback(deadline, sfl_test_sim_expired_cb, &expired, NULL);
	g_source_attach(deadline, NULL);
	while (result == NULL && !expired)
		g_main_context_iteration(NULL, TRUE);
	g_source_destroy(deadline);
	g_assert_false(expired);
	response = sfl_http_request_finish(result, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(sfl_http_response_get_status(response), ==, 200);
	data = g_bytes_get_data(sfl_http_response_get_body(response), &len);
	doc = json_loadb(data, len, 0, &jerr);
	g_assert_nonnull(doc);
	return doc;
}
