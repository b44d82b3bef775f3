/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>
#include <jansson.h>

#include "sfl-curl-loop.h"

G_BEGIN_DECLS

/*
 * Starts `/usr/bin/python3 tests/sim/loki_sim.py ARGS...` and returns its base URL
 * ("http://127.0.0.1:PORT") once it listens. NULL when the simulator reported its
 * dependencies missing (exit 77): the test has been marked skipped.
 */
gchar *sfl_test_loki_sim_start(const gchar *const *args, GSubprocess **out_proc);

/*
 * Starts `/usr/bin/python3 tests/sim/salesforce_sim.py ARGS...` and returns its base URL, both
 * login URL and instance URL. NULL when the simulator reported its dependencies missing
 * (exit 77): the test has been marked skipped.
 */
gchar *sfl_test_sf_sim_start(const gchar *const *args, GSubprocess **out_proc);

/* a fresh 2048-bit RSA key: the private PEM at @priv_path, the public PEM at @pub_path
 * (optional), for the JWT flow against the Salesforce simulator */
void sfl_test_write_rsa_key(const gchar *priv_path, const gchar *pub_path);

/* iterates the thread-default context until *@flag is set; fails the test after @deadline_sec */
void sfl_test_wait_for(const gboolean *flag, guint deadline_sec);

/* the result of one async call, for sfl_test_wait_for(&waiter.done, …) */
typedef struct {
	gboolean done;
	GAsyncResult *result;
} SflTestWaiter;

/* a GAsyncReadyCallback filling the SflTestWaiter given as user data */
void sfl_test_waiter_cb(GObject *source, GAsyncResult *result, gpointer user_data);

/* one HTTP request (no body) to @url; returns the body, stores the status in *@status */
gchar *sfl_test_http_call(SflCurlLoop *loop, const gchar *method, const gchar *url,
			  guint *status) G_GNUC_WARN_UNUSED_RESULT;

/* a control call to a simulator at @base (e.g. http://127.0.0.1:PORT); the parsed answer */
json_t *sfl_test_sim_control(SflCurlLoop *loop, const gchar *base, const gchar *method,
			     const gchar *path, const gchar *json);

G_END_DECLS
