/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "TestDoctor"

#include "config.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <jansson.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-curl-loop.h"
#include "sfl-test-sim.h"

/*
 * `sf2loki doctor` (the real binary) against the Salesforce and Loki simulators: a healthy
 * setup, then one failure mode per case, each asserting its row's status and detail, the
 * documented SKIPs and the exit code. Every run uses --json and parses it.
 */

#define DAEMON_DEADLINE_SEC 60

static const gchar *const rows_in_order[] = {
	"config",      "org",	      "auth",	  "permissions", "pubsub",
	"entitlement", "traceflags",  "loki",	  "transforms",	 "telemetry",
	"state",       "coordinator", "sharding", "limits",	 NULL,
};

typedef struct {
	SflTestSims sims;
	gchar *config;
	gchar *state;
	gchar *lease;
	gboolean skip;
} Fx;

typedef struct {
	json_t *doc;
	int exit_code;
	gchar *out;
} Report;

static gchar *
iso(gint64 usec)
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(usec / G_USEC_PER_SEC);
	return g_date_time_format(dt, "%Y-%m-%dT%H:%M:%S.000Z");
}

static void
fx_setup(Fx *fx, gconstpointer data)
{
	g_autofree gchar *dataset = NULL;
	gint64 now = g_get_real_time();
	g_autofree gchar *created = iso(now - (gint64)2 * 3600 * G_USEC_PER_SEC);
	g_autofree gchar *log_date = iso(now - (gint64)3 * 3600 * G_USEC_PER_SEC);
	g_autofree gchar *expires = iso(now + (gint64)24 * 3600 * G_USEC_PER_SEC);

	dataset = sfl_test_data_render("doctor/dataset.json", "CREATED", created, "LOG_DATE",
				       log_date, "EXPIRES", expires, NULL);
	fx->skip = !sfl_test_sims_start(&fx->sims, "sfl-doctor-XXXXXX", dataset, NULL);
	fx->config = g_build_filename(fx->sims.dir, "config.yaml", NULL);
	fx->state = g_build_filename(fx->sims.dir, "state", "state.json", NULL);
	fx->lease = g_build_filename(fx->sims.dir, "leader.lease", NULL);
}

static void
fx_teardown(Fx *fx, gconstpointer data)
{
	sfl_test_sims_clear(&fx->sims);
	g_free(fx->config);
	g_free(fx->state);
	g_free(fx->lease);
}

/* the healthy sources: every Salesforce row has something to check */
static const gchar *const healthy_sources =
	"  pubsub: {enabled: false}\n"
	"  transform_salt: doctor-test-salt-0123\n"
	"  eventlogfile:\n"
	"    enabled: true\n"
	"    event_types: [Login, API]\n"
	"    transforms: [{action: hash, fields: [USER_ID], name: pseudonymise}]\n"
	"  eventlog_objects:\n"
	"    enabled: true\n"
	"    objects: [{name: SetupAuditTrail, timestamp_field: CreatedDate}]\n"
	"  apexlog: {enabled: true}\n";

/* the sources of the cases that check no Salesforce source */
#define NO_SOURCES "  pubsub: {enabled: false}\n  eventlogfile: {enabled: false}\n"
/* the cases that run a daemon beside the doctor: with no source `run` exits at once, so one
 * EventLogFile type keeps it up */
#define DAEMON_SOURCES                                                                             \
	"  pubsub: {enabled: false}\n  eventlogfile: {enabled: true, event_types: [API]}\n"

typedef struct {
	gboolean wrong_key;	/* the key the connected app does not know */
	const gchar *loki_base; /* NULL: the fixture's simulator */
	const gchar *sources;	/* NULL: healthy_sources */
	const gchar *extra;	/* more top-level YAML */
	const gchar *service;	/* more of the service section */
} Cfg;

static void
fx_write_config(Fx *fx, const Cfg *cfg)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *head = sfl_test_sims_config(
		&fx->sims, cfg->wrong_key ? fx->sims.wrong_key_path : NULL, cfg->loki_base);
	g_autofree gchar *yaml =
		g_strdup_printf("%s"
				"    labels: {environment: doctor-test}\n"
				"    structured_metadata_fields: [USER_ID]\n"
				"state:\n"
				"  file:\n"
				"    path: %s\n"
				"service:\n"
				"  log_format: json\n%s"
				"sources:\n%s%s",
				head, fx->state, cfg->service != NULL ? cfg->service : "",
				cfg->sources != NULL ? cfg->sources : healthy_sources,
				cfg->extra != NULL ? cfg->extra : "");

	g_assert_true(g_file_set_contents(fx->config, yaml, -1, &error));
}

/* the state file's directory, and the file with @content unless that is NULL */
static void
fx_write_state(Fx *fx, const gchar *content)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *state_dir = g_path_get_dirname(fx->state);

	g_assert_cmpint(g_mkdir_with_parents(state_dir, 0700), ==, 0);
	if (content != NULL)
		g_assert_true(g_file_set_contents(fx->state, content, -1, &error));
}

/* runs `sf2loki doctor --config <config> [args] [--json]` to completion */
static void
run_doctor_with(Fx *fx, const gchar *const *extra, gboolean json, Report *report)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GSubprocess) proc = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *err = NULL;
	json_error_t jerr;

	g_ptr_array_add(argv, (gpointer) "doctor");
	g_ptr_array_add(argv, (gpointer) "--config");
	g_ptr_array_add(argv, fx->config);
	for (guint i = 0; extra != NULL && extra[i] != NULL; i++)
		g_ptr_array_add(argv, (gpointer)extra[i]);
	if (json)
		g_ptr_array_add(argv, (gpointer) "--json");
	g_ptr_array_add(argv, NULL);
	proc = sfl_test_bin_spawn(G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
				  (const gchar *const *)argv->pdata, NULL);
	g_subprocess_communicate_utf8(proc, NULL, NULL, &report->out, &err, &error);
	g_assert_no_error(error);
	g_assert_true(g_subprocess_get_if_exited(proc));
	report->exit_code = g_subprocess_get_exit_status(proc);
	g_test_message("doctor exit %d\nstdout:\n%s\nstderr:\n%s", report->exit_code, report->out,
		       err);
	report->doc = NULL;
	if (!json)
		return;
	report->doc = json_loads(report->out, 0, &jerr);
	if (report->doc == NULL)
		g_error("doctor --json printed no JSON: %s\n%s", jerr.text, report->out);
	/* the exit code is part of the document and agrees with the process */
	g_assert_true(json_is_integer(json_object_get(report->doc, "exit_code")));
	g_assert_cmpint(json_integer_value(json_object_get(report->doc, "exit_code")), ==,
			report->exit_code);
}

static void
report_clear(Report *report)
{
	json_decref(report->doc);
	g_free(report->out);
}

static json_t *
row(const Report *report, const gchar *name)
{
	json_t *checks = json_object_get(report->doc, "checks");
	gsize i;
	json_t *r;

	json_array_foreach (checks, i, r) {
		if (g_strcmp0(json_string_value(json_object_get(r, "name")), name) == 0)
			return r;
	}
	g_error("no row '%s' in the report", name);
	return NULL;
}

/* asserts @name's status and that its detail contains @needle (when not NULL) */
static void
assert_row(const Report *report, const gchar *name, const gchar *status, const gchar *needle)
{
	json_t *r = row(report, name);
	const gchar *got = json_string_value(json_object_get(r, "status"));
	const gchar *detail = json_string_value(json_object_get(r, "detail"));

	if (g_strcmp0(got, status) != 0)
		g_error("row %s: status %s, expected %s (%s)", name, got, status, detail);
	g_assert_nonnull(detail);
	if (needle != NULL && strstr(detail, needle) == NULL)
		g_error("row %s: detail '%s' lacks '%s'", name, detail, needle);
}

static const gchar *
row_name(json_t *checks, gsize i)
{
	return json_string_value(json_object_get(json_array_get(checks, i), "name"));
}

/* the rows in the documented order, each with one of the four statuses; the pubsub row may
 * be one row per probed topic, pubsub:<topic> */
static void
assert_shape(const Report *report)
{
	json_t *checks = json_object_get(report->doc, "checks");
	gsize at = 0;

	for (guint i = 0; rows_in_order[i] != NULL; i++) {
		gsize first = at;

		if (g_str_equal(rows_in_order[i], "pubsub"))
			while (at < json_array_size(checks) &&
			       g_str_has_prefix(row_name(checks, at), "pubsub:"))
				at++;
		if (at == first) {
			g_assert_cmpuint(at, <, json_array_size(checks));
			g_assert_cmpstr(row_name(checks, at), ==, rows_in_order[i]);
			at++;
		}
	}
	g_assert_cmpuint(at, ==, json_array_size(checks));
	for (gsize i = 0; i < json_array_size(checks); i++) {
		const gchar *status =
			json_string_value(json_object_get(json_array_get(checks, i), "status"));
		g_assert_true(g_strv_contains(
			(const gchar *const[]){ "PASS", "WARN", "FAIL", "SKIP", NULL }, status));
	}
}

static void
assert_skipped_from(const Report *report, const gchar *first, const gchar *why)
{
	gboolean on = FALSE;

	for (guint i = 0; rows_in_order[i] != NULL; i++) {
		on = on || g_str_equal(rows_in_order[i], first);
		if (on)
			assert_row(report, rows_in_order[i], "SKIP", why);
	}
}

/* --- what one `doctor --json` run must report ------------------------------------------------ */

#define ANY_EXIT (-1) /* the run's exit code is not what the step is about */

typedef struct {
	const gchar *name;
	const gchar *status;
	const gchar *needle; /* (nullable) in the row's detail */
} Want;

typedef struct {
	const gchar *const *args;  /* (nullable) more doctor arguments */
	gboolean shape;		   /* every row, in the documented order */
	Want rows[18];		   /* up to the first without a name */
	const gchar *skipped_from; /* (nullable) this row and all after it are SKIP ... */
	const gchar *skipped_why;  /* ... with this detail */
	const gchar *absent;	   /* (nullable) never in the output */
	guint topic_rows;	   /* when not 0: this many pubsub:<topic> rows */
	int exit_code;		   /* or ANY_EXIT */
} Expect;

static void
expect_doctor(Fx *fx, const Expect *want)
{
	Report r = { 0 };

	run_doctor_with(fx, want->args, TRUE, &r);
	if (want->shape)
		assert_shape(&r);
	for (guint i = 0; i < G_N_ELEMENTS(want->rows) && want->rows[i].name != NULL; i++)
		assert_row(&r, want->rows[i].name, want->rows[i].status, want->rows[i].needle);
	if (want->skipped_from != NULL)
		assert_skipped_from(&r, want->skipped_from, want->skipped_why);
	if (want->absent != NULL)
		g_assert_null(strstr(r.out, want->absent));
	if (want->topic_rows > 0) {
		json_t *checks = json_object_get(r.doc, "checks");
		guint n = 0;

		for (gsize i = 0; i < json_array_size(checks); i++)
			n += g_str_has_prefix(row_name(checks, i), "pubsub:");
		g_assert_cmpuint(n, ==, want->topic_rows);
	}
	if (want->exit_code != ANY_EXIT)
		g_assert_cmpint(r.exit_code, ==, want->exit_code);
	report_clear(&r);
}

/* a case that is a configuration, maybe a state file, and doctor runs each after a control
 * call to the Salesforce simulator */
typedef struct {
	const gchar *control; /* (nullable) the path of a POST to the Salesforce simulator */
	const gchar *body;
	Expect expect;
} Step;

typedef struct {
	Cfg cfg;
	const gchar *state; /* (nullable) the state file's content */
	Step steps[2];	    /* up to the first without rows */
} Scenario;

static void
run_scenario(Fx *fx, gconstpointer data)
{
	const Scenario *sc = data;

	fx_write_config(fx, &sc->cfg);
	if (sc->state != NULL)
		fx_write_state(fx, sc->state);
	for (guint i = 0; i < G_N_ELEMENTS(sc->steps) && sc->steps[i].expect.rows[0].name != NULL;
	     i++) {
		if (sc->steps[i].control != NULL)
			json_decref(sfl_test_sim_control(fx->sims.loop, fx->sims.sf_base, "POST",
							 sc->steps[i].control, sc->steps[i].body));
		expect_doctor(fx, &sc->steps[i].expect);
	}
}

/* --- a daemon holding the state lock or the lease -------------------------------------------- */

/* `sf2loki run` with the fixture's config (as lease holder @holder), until it logs @wanted */
static SflTestDaemon *
daemon_start(Fx *fx, const gchar *holder, const gchar *wanted)
{
	const gchar *env[] = { holder != NULL ? "SF2LOKI_COORDINATE__FILE_LEASE__HOLDER_ID" : NULL,
			       holder, NULL };
	SflTestDaemon *d = sfl_test_daemon_start(fx->config, env);

	sfl_test_daemon_wait_logged(d, wanted, DAEMON_DEADLINE_SEC);
	return d;
}

static void
daemon_stop(SflTestDaemon *d)
{
	sfl_test_daemon_finish(d, DAEMON_DEADLINE_SEC);
	sfl_test_daemon_free(d);
}

/* --- cases ------------------------------------------------------------------------------------ */

#define URL_SECRET "url-secret-5d0c3b"

static const Expect healthy_report = {
	.shape = TRUE,
	.rows = {
		{ "config", "PASS", "enabled sources: eventlogfile, eventlog_objects, apexlog" },
		{ "org", "PASS", "single org" },
		{ "auth", "PASS", "flow=jwt_bearer" },
		{ "auth", "PASS", "org_id=00DSIM0000000001AA" },
		{ "permissions", "PASS", "SetupAuditTrail queryable" },
		{ "pubsub", "SKIP", "sources.pubsub is disabled" },
		{ "entitlement", "PASS", "2 event types with Hourly files" },
		{ "traceflags", "PASS", "1 active TraceFlag" },
		{ "loki", "PASS", "source=\"sf2loki-doctor\"" },
		{ "loki", "PASS", "1 structured metadata field" },
		{ "transforms", "PASS", "1 hash rule, salted" },
		{ "telemetry", "SKIP", "service.telemetry is disabled" },
		{ "state", "PASS", "2 keys" },
		{ "state", "PASS", ".lock taken and released" },
		{ "coordinator", "SKIP", "noop" },
		{ "sharding", "SKIP", "coordinate.sharding.enabled is false" },
		{ "limits", "PASS", "DailyApiRequests" },
		{ "loki", "PASS", "/loki/api/v1/push" },
	},
	/* credentials in the Loki URL must not reach the report (SFL-0041) */
	.absent = URL_SECRET,
	.exit_code = 0,
};

static const gchar *
label(json_t *stream, const gchar *name)
{
	return json_string_value(json_object_get(json_object_get(stream, "labels"), name));
}

static void
test_healthy(Fx *fx)
{
	Cfg cfg = { 0 };
	Report r = { 0 };
	g_autoptr(json_t) received = NULL;
	json_t *streams;
	json_t *stream;
	json_t *entry;
	g_autofree gchar *lock = NULL;
	g_autofree gchar *loki_with_userinfo = NULL;

	g_assert_true(g_str_has_prefix(fx->sims.loki_base, "http://"));
	loki_with_userinfo = g_strconcat("http://doctor:" URL_SECRET "@",
					 fx->sims.loki_base + strlen("http://"), NULL);
	cfg.loki_base = loki_with_userinfo;
	fx_write_config(fx, &cfg);
	fx_write_state(fx, "{\"eventlogfile:Login\": \"2026-11-01T00:00:00.000Z\", \"k2\": \"v\"}");
	expect_doctor(fx, &healthy_report);

	/* the real lock was released: the doctor left nothing behind but the lock file itself */
	lock = g_strconcat(fx->state, ".lock", NULL);
	g_assert_true(g_file_test(lock, G_FILE_TEST_EXISTS));
	{
		g_autofree gchar *probe = g_strconcat(fx->state, ".sf2loki-doctor-probe", NULL);
		g_assert_false(g_file_test(probe, G_FILE_TEST_EXISTS));
	}

	/* the Loki line is production-shaped: deployment labels and structured metadata */
	received = sfl_test_sim_control(fx->sims.loop, fx->sims.loki_base, "GET",
					"/control/received", NULL);
	streams = json_object_get(received, "streams");
	g_assert_cmpuint(json_array_size(streams), ==, 1);
	stream = json_array_get(streams, 0);
	g_assert_cmpstr(label(stream, "source"), ==, "sf2loki-doctor");
	g_assert_cmpstr(label(stream, "environment"), ==, "doctor-test");
	g_assert_cmpstr(label(stream, "sf_org_id"), ==, "00DSIM0000000001AA");
	g_assert_cmpstr(label(stream, "job"), ==, "sf2loki");
	entry = json_array_get(json_object_get(stream, "entries"), 0);
	g_assert_nonnull(json_object_get(json_object_get(entry, "metadata"), "USER_ID"));

	/* the table: one line per row, then the summary */
	run_doctor_with(fx, NULL, FALSE, &r);
	g_assert_cmpint(r.exit_code, ==, 0);
	g_assert_nonnull(strstr(r.out, "\n10 passed, 0 warnings, 0 failed, 4 skipped\n"));
	g_assert_true(g_regex_match_simple("^limits +PASS +DailyApiRequests", r.out,
					   G_REGEX_MULTILINE, 0));
	report_clear(&r);
}

static const Scenario bad_credentials = {
	.cfg = { .wrong_key = TRUE },
	.steps = { {
		.expect = {
			.shape = TRUE,
			.rows = {
				{ "config", "PASS", NULL },
				{ "auth", "FAIL", "invalid_grant" },
				{ "auth", "FAIL", "hint: the user is not pre-authorised" },
				{ "permissions", "SKIP", "skipped: auth failed" },
				{ "pubsub", "SKIP", "skipped: auth failed" },
				{ "entitlement", "SKIP", "skipped: auth failed" },
				{ "traceflags", "SKIP", "skipped: auth failed" },
				{ "limits", "SKIP", "skipped: auth failed" },
				/* the rows that do not need Salesforce still ran */
				{ "loki", "PASS", "pushed 1 line" },
				{ "state", "PASS", NULL },
			},
			.exit_code = 1,
		},
	} },
};

static void
test_loki_unauthorized(Fx *fx)
{
	Cfg cfg = { 0 };
	g_autoptr(SflTestSim) guarded = NULL;
	g_autofree gchar *guarded_base = NULL;
	const gchar *args[] = { "--token", "doctor-loki-token", NULL };
	const Expect want = {
		.rows = {
			{ "loki", "FAIL", "HTTP 401: credentials refused" },
			{ "loki", "FAIL", "sink.loki.auth_token" },
			{ "auth", "PASS", NULL },
			{ "limits", "PASS", NULL },
		},
		.exit_code = 1,
	};

	/* a Loki that wants a bearer token the configuration does not have */
	guarded_base = sfl_test_loki_sim_start(args, &guarded);
	g_assert_nonnull(guarded_base);
	cfg.loki_base = guarded_base;
	fx_write_config(fx, &cfg);
	expect_doctor(fx, &want);
	sfl_test_sim_stop(&guarded);
}

/* a type without files, no TraceFlag table, and a nearly spent API allowance: warnings; then
 * the describe refused: the permission is missing */
static const Scenario salesforce_faults = {
	.cfg = { .sources = "  pubsub: {enabled: false}\n"
			    "  eventlogfile: {enabled: true, event_types: [Login, ReportExport]}\n"
			    "  apexlog: {enabled: true}\n" },
	.steps = {
		{
			.control = "/control/fault",
			.body = "{\"match\": \"limits\", \"count\": 1, \"status\": 200, \"body\": "
				"{\"DailyApiRequests\": {\"Max\": 15000, \"Remaining\": 120}}}",
			.expect = {
				.rows = {
					{ "entitlement", "WARN",
					  "no Hourly EventLogFile for: ReportExport" },
					{ "limits", "WARN", "DailyApiRequests 120/15000 remaining" },
					{ "permissions", "PASS", "EventLogFile readable" },
					{ "transforms", "SKIP", "no hash rules" },
				},
				.exit_code = 0,
			},
		},
		{
			.control = "/control/fault",
			.body = "{\"match\": \"describe\", \"count\": 1, \"status\": 403, "
				"\"error_code\": \"INSUFFICIENT_ACCESS\", \"message\": \"no\"}",
			.expect = {
				.rows = {
					{ "permissions", "FAIL", "View Event Log Files" },
					{ "permissions", "FAIL", "HTTP 403" },
				},
				.exit_code = 1,
			},
		},
	},
};

/* every TraceFlag expired a year ago: nothing to ship */
static const Scenario traceflags_none = {
	.cfg = { .sources = "  pubsub: {enabled: false}\n"
			    "  apexlog: {enabled: true}\n"
			    "  eventlogfile:\n"
			    "    enabled: true\n"
			    "    event_types: [Login]\n"
			    "    transforms: [{action: hash, fields: [USER_ID]}]\n" },
	.steps = { {
		.control = "/control/add",
		.body = "{\"objects\": {\"TraceFlag\": {\"records\": [{\"Id\": "
			"\"7tfD00000000001\", \"ExpirationDate\": "
			"\"2025-01-01T00:00:00.000Z\"}]}}}",
		.expect = {
			.rows = {
				{ "traceflags", "WARN", "no active TraceFlag" },
				{ "transforms", "WARN",
				  "sources.eventlogfile.transforms[0]: hash without "
				  "sources.transform_salt" },
			},
			.exit_code = 0,
		},
	} },
};

static void
test_state_unreadable(Fx *fx)
{
	Cfg cfg = { 0 };
	g_autoptr(GError) error = NULL;
	const Expect want = {
		.rows = {
			{ "state", "FAIL", "cannot read state file" },
			{ "state", "FAIL", fx->state },
			{ "loki", "PASS", NULL },
		},
		.exit_code = 1,
	};

	fx_write_config(fx, &cfg);
	fx_write_state(fx, NULL);
	if (!sfl_test_proc_modes_enforced()) {
		/* root reads any mode (and wine has none): a directory where the file should be is
		 * unreadable too */
		g_assert_cmpint(g_mkdir_with_parents(fx->state, 0700), ==, 0);
	} else {
		g_assert_true(g_file_set_contents(fx->state, "{}", -1, &error));
		g_assert_cmpint(g_chmod(fx->state, 0), ==, 0);
	}
	expect_doctor(fx, &want);
}

static const Scenario state_corrupt = {
	.state = "{\"eventlogfile:Login\": ",
	.steps = { { .expect = {
			     .rows = { { "state", "FAIL", "is corrupt" } },
			     .exit_code = 1,
		     } } },
};

/* a running daemon holds the state lock: doctor reads the file anyway and names the holder */
static void
test_state_locked(Fx *fx)
{
	const Cfg cfg = { .sources = DAEMON_SOURCES };
	SflTestDaemon *d = NULL;
	g_autofree gchar *pid = NULL;

	fx_write_config(fx, &cfg);
	d = daemon_start(fx, NULL, "checkpoint store ready");
	pid = g_strdup_printf("pid %s", g_subprocess_get_identifier(d->proc));
	expect_doctor(fx, &(const Expect){
				  .rows = {
					  { "state", "PASS", "lock held by a running sf2loki" },
					  { "state", "PASS", pid },
				  },
				  .exit_code = 0,
			  });
	daemon_stop(d);
}

/* a live lease of another process: the coordinator row names it; the lock is not used */
static void
test_lease_live(Fx *fx)
{
	Cfg cfg = { .sources = DAEMON_SOURCES };
	SflTestDaemon *d = NULL;
	g_autofree gchar *extra = NULL;
	const Expect no_lease = {
		.rows = { { "coordinator", "PASS", "no lease yet" } },
		.exit_code = ANY_EXIT,
	};
	const Expect held = {
		.rows = {
			{ "coordinator", "WARN", "held by 'replica-a' (epoch 1" },
			{ "coordinator", "WARN", "standby" },
			{ "state", "PASS", "no lock under coordinate.type file_lease" },
		},
		.exit_code = 0,
	};

	extra = g_strdup_printf("coordinate:\n"
				"  type: file_lease\n"
				"  file_lease: {path: %s, ttl: 30s, renew_interval: 5s}\n",
				fx->lease);
	cfg.extra = extra;
	fx_write_config(fx, &cfg);

	/* before any replica ran: nothing to read, the directory is writable */
	expect_doctor(fx, &no_lease);

	d = daemon_start(fx, "replica-a", "acquired the lease");
	expect_doctor(fx, &held);
	daemon_stop(d);
}

/* a sharded group: its membership records listed (never written by the doctor) */
static void
test_sharding(Fx *fx)
{
	Cfg cfg = { .sources = DAEMON_SOURCES };
	SflTestDaemon *d = NULL;
	g_autofree gchar *extra = NULL;
	g_autofree gchar *members = g_strconcat(fx->lease, ".members", NULL);
	const Expect empty = {
		.rows = { { "sharding", "PASS", "0 membership records listed (none yet)" } },
		.exit_code = ANY_EXIT,
	};
	const Expect one = {
		.rows = { { "sharding", "PASS", "1 membership record listed (replica-a)" },
			  { "sharding", "PASS", "members_ttl 30.0 s" } },
		.exit_code = ANY_EXIT,
	};

	extra = g_strdup_printf("coordinate:\n"
				"  type: file_lease\n"
				"  file_lease: {path: %s, ttl: 30s, renew_interval: 5s}\n"
				"  sharding: {enabled: true}\n",
				fx->lease);
	cfg.extra = extra;
	fx_write_config(fx, &cfg);
	expect_doctor(fx, &empty);

	d = daemon_start(fx, "replica-a", "live member(s): replica-a");
	expect_doctor(fx, &one);
	daemon_stop(d);
	/* what the doctor listed it did not add to: only the daemon's record was ever there */
	g_assert_true(g_file_test(members, G_FILE_TEST_IS_DIR));
}

/* k8s_lease: the Lease read and a dry-run write against the Lease API stand-in */
static void
test_k8s_lease(Fx *fx)
{
	Cfg cfg = { .sources = NO_SOURCES };
	g_autofree gchar *simdir = NULL;
	g_autofree gchar *kubeconfig = NULL;
	g_autofree gchar *k8s_base = NULL;
	g_autofree gchar *extra = NULL;
	g_autoptr(SflTestSim) k8s = NULL;
	g_autoptr(json_t) fault = NULL;
	g_autoptr(json_t) state = NULL;
	json_t *writes;
	json_t *w;
	gsize i;
	guint dry = 0;
	const Expect dry_run = {
		.rows = {
			{ "coordinator", "PASS", NULL },
			/* the file store under k8s_lease: the shared-volume caveat rides along */
			{ "coordinator", "PASS", "ReadWriteMany" },
		},
		.exit_code = 0,
	};
	const Expect refused = {
		.rows = { { "coordinator", "FAIL", "403" } },
		.exit_code = 1,
	};

	simdir = g_build_filename(fx->sims.dir, "k8s", NULL);
	g_assert_cmpint(g_mkdir_with_parents(simdir, 0700), ==, 0);
	{
		const gchar *args[] = { "--dir", simdir, NULL };
		k8s_base = sfl_test_k8s_sim_start(args, &k8s);
	}
	if (k8s_base == NULL)
		return;
	kubeconfig = g_build_filename(simdir, "kubeconfig", NULL);
	extra = g_strdup_printf("coordinate:\n"
				"  type: k8s_lease\n"
				"  k8s_lease: {identity: doctor-pod, kubeconfig: '%s'}\n",
				kubeconfig);
	cfg.extra = extra;
	fx_write_config(fx, &cfg);

	expect_doctor(fx, &dry_run);
	/* only dry runs reached the API: the doctor stored nothing */
	state = sfl_test_sim_control(fx->sims.loop, k8s_base, "GET", "/control/state", NULL);
	g_assert_cmpuint(json_object_size(json_object_get(state, "leases")), ==, 0);
	writes = json_object_get(state, "writes");
	json_array_foreach (writes, i, w)
		dry += json_is_true(json_object_get(w, "dryRun")) ||
		       json_is_string(json_object_get(w, "dryRun"));
	g_assert_cmpuint(dry, >=, 1);
	g_assert_cmpuint(dry, ==, json_array_size(writes));

	/* RBAC refuses the read */
	fault = sfl_test_sim_control(fx->sims.loop, k8s_base, "POST", "/control/fault",
				     "{\"status\": 403, \"count\": 1, \"methods\": [\"GET\"]}");
	expect_doctor(fx, &refused);

	sfl_test_sim_stop(&k8s);
}

static const Scenario bad_config = {
	.cfg = { .extra = "batch: {max_entries: 5}\n" },
	.steps = { { .expect = {
			     .shape = TRUE,
			     .rows = { { "config", "FAIL", "batch" } },
			     .skipped_from = "org",
			     .skipped_why = "skipped: config failed",
			     .exit_code = 2,
		     } } },
};

static void
test_org_selection(Fx *fx)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *yaml = NULL;
	static const gchar *const unknown[] = { "--org", "gamma", NULL };
	static const gchar *const beta[] = { "--org", "beta", NULL };
	const Cfg cfg = { 0 };
	/* single-org: no org has a name to select */
	static const Expect single_unknown = {
		.args = unknown,
		.rows = {
			{ "config", "PASS", NULL },
			{ "org", "FAIL", "unknown org 'gamma'" },
		},
		.skipped_from = "auth",
		.skipped_why = "skipped: org selection failed",
		.exit_code = 2,
	};
	/* the same three runs against two orgs: alpha has the trusted key, beta the other one */
	static const Expect multi[] = {
		{
			.args = unknown,
			.rows = { { "org", "FAIL",
				    "unknown org 'gamma'; configured: alpha, beta" } },
			.skipped_from = "auth",
			.skipped_why = "skipped: org selection failed",
			.exit_code = 2,
		},
		/* the selected org's credentials are the ones checked: beta has the wrong key */
		{
			.args = beta,
			.rows = { { "org", "WARN", "checking 'beta'" },
				  { "auth", "FAIL", "invalid_grant" } },
			.exit_code = 1,
		},
		/* without --org the first org is checked, with a warning that there are more */
		{
			.rows = { { "org", "WARN", "checking 'alpha' only" },
				  { "auth", "PASS", NULL },
				  { "loki", "PASS", "org=\"alpha\"" } },
			.exit_code = 0,
		},
	};

	fx_write_config(fx, &cfg);
	expect_doctor(fx, &single_unknown);

	yaml = g_strdup_printf(
		"orgs:\n"
		"  - name: alpha\n"
		"    salesforce: {login_url: '%s', client_id: sim-client-id, username: "
		"sim@example.com, private_key_file: '%s'}\n"
		"    sources: {pubsub: {enabled: false}, eventlogfile: {enabled: true, "
		"event_types: [API]}}\n"
		"  - name: beta\n"
		"    salesforce: {login_url: '%s', client_id: sim-client-id, username: "
		"sim@example.com, private_key_file: '%s', environment: sandbox}\n"
		"    sources: {pubsub: {enabled: false}, eventlogfile: {enabled: true, "
		"event_types: [Login]}}\n"
		"sink:\n  loki:\n    url: %s/loki/api/v1/push\n"
		"state:\n  file:\n    path: %s\n",
		fx->sims.sf_base, fx->sims.key_path, fx->sims.sf_base, fx->sims.wrong_key_path,
		fx->sims.loki_base, fx->state);
	g_assert_true(g_file_set_contents(fx->config, yaml, -1, &error));
	for (guint i = 0; i < G_N_ELEMENTS(multi); i++)
		expect_doctor(fx, &multi[i]);
}

#define TELEMETRY_SECRET "doctor-otlp-secret-8c1f"

static void
test_telemetry(Fx *fx)
{
	Cfg cfg = { .sources = NO_SOURCES };
	g_autofree gchar *service = NULL;
	g_autofree gchar *otlp_base = NULL;
	g_autoptr(SflTestSim) otlp = NULL;
	g_autoptr(json_t) received = NULL;
	g_autoptr(json_t) fault = NULL;
	g_autofree gchar *want_auth = NULL;
	g_autofree gchar *b64 = NULL;
	json_t *export;
	/* an empty export with the exporter's own headers is accepted */
	static const Expect accepted = {
		.rows = { { "telemetry", "PASS", "HTTP 200" } },
		.absent = TELEMETRY_SECRET,
		.exit_code = 0,
	};
	/* the collector refuses the credentials */
	static const Expect refused = {
		.rows = {
			{ "telemetry", "FAIL", "HTTP 401" },
			{ "telemetry", "FAIL", "credentials refused" },
		},
		.exit_code = 1,
	};
	/* enabled without an endpoint: the loader already refuses it */
	static const Expect no_endpoint = {
		.rows = {
			{ "config", "FAIL", "service.telemetry.endpoint" },
			{ "telemetry", "SKIP", "skipped: config failed" },
		},
		.exit_code = 2,
	};

	otlp_base = sfl_test_otlp_sim_start(NULL, &otlp);
	if (otlp_base == NULL)
		return;
	service = g_strdup_printf("  telemetry: {enabled: true, endpoint: '%s/v1/metrics', "
				  "basic_auth_user: doctor, basic_auth_token: %s}\n",
				  otlp_base, TELEMETRY_SECRET);
	cfg.service = service;
	fx_write_config(fx, &cfg);

	expect_doctor(fx, &accepted);
	received = sfl_test_sim_control(fx->sims.loop, otlp_base, "GET", "/control/received", NULL);
	g_assert_cmpuint(json_array_size(json_object_get(received, "exports")), ==, 1);
	export = json_array_get(json_object_get(received, "exports"), 0);
	g_assert_cmpstr(json_string_value(json_object_get(export, "content_type")), ==,
			"application/x-protobuf");
	b64 = g_base64_encode((const guchar *)"doctor:" TELEMETRY_SECRET,
			      strlen("doctor:" TELEMETRY_SECRET));
	want_auth = g_strconcat("Basic ", b64, NULL);
	g_assert_cmpstr(json_string_value(json_object_get(export, "auth")), ==, want_auth);

	fault = sfl_test_sim_control(fx->sims.loop, otlp_base, "POST", "/control/fault",
				     "{\"count\": 1, \"status\": 401}");
	expect_doctor(fx, &refused);

	cfg.service = "  telemetry: {enabled: true, endpoint: ''}\n";
	fx_write_config(fx, &cfg);
	expect_doctor(fx, &no_endpoint);

	sfl_test_sim_stop(&otlp);
}

/* --- Pub/Sub: GetTopic per explicit topic, against the Pub/Sub simulator -----------------------
 */

#define PS_LOGIN   "/event/LoginEventStream"
#define PS_LOGOUT  "/event/LogoutEventStream"
#define PS_UNKNOWN "/event/NoSuchEventStream"
/* two topics to probe, one repeat (one probe) and one the exclude glob drops (no probe) */
#define PS_TOPICS                                                                                  \
	"topics: ['" PS_LOGIN "', '" PS_LOGOUT "', '" PS_LOGIN "', /event/SkippedEventStream], "   \
	"exclude: ['/event/Skipped*']"

typedef struct {
	const gchar *pubsub;  /* sources.pubsub keys besides the endpoint (YAML flow map) */
	const gchar *control; /* (nullable) a POST /control/topic to the simulator first */
	gboolean wrong_key;   /* the auth row fails */
	gboolean unreachable; /* the endpoint is a closed port */
	gboolean silent;      /* the endpoint takes the connection and never answers */
	/* GetTopic calls the run makes at least (the client asks again when curl 7.88 drops a
	 * message that came with the trailers); 0: none at all */
	guint get_topic_calls;
	Expect expect;
} PubsubStep;

static const PubsubStep pubsub_steps[] = {
	{
		.pubsub = PS_TOPICS,
		.get_topic_calls = 2,
		.expect = {
			.shape = TRUE,
			.rows = {
				{ "pubsub:" PS_LOGIN, "PASS", "topic reachable, can_subscribe=true" },
				{ "pubsub:" PS_LOGOUT, "PASS", "can_subscribe=true" },
			},
			.absent = "pubsub:/event/Skipped",
			.topic_rows = 2,
			.exit_code = 0,
		},
	},
	/* SFL-0035: the topic answers, but the user may not subscribe to it */
	{
		.pubsub = PS_TOPICS,
		.control = "{\"topic\": \"" PS_LOGOUT "\", \"can_subscribe\": false}",
		.get_topic_calls = 2,
		.expect = {
			.shape = TRUE,
			.rows = {
				{ "pubsub:" PS_LOGIN, "PASS", "can_subscribe=true" },
				{ "pubsub:" PS_LOGOUT, "FAIL",
				  PS_LOGOUT ": the user may not subscribe to this topic "
					    "(can_subscribe=false)" },
				{ "pubsub:" PS_LOGOUT, "FAIL", "permission set" },
			},
			.topic_rows = 2,
			.exit_code = 1,
		},
	},
	/* an unknown topic: the gRPC code, the details and Salesforce's error-code */
	{
		.pubsub = "topics: ['" PS_UNKNOWN "']",
		.get_topic_calls = 1,
		.expect = {
			.shape = TRUE,
			.rows = {
				{ "pubsub:" PS_UNKNOWN, "FAIL",
				  "NOT_FOUND: topic " PS_UNKNOWN " not found" },
				{ "pubsub:" PS_UNKNOWN, "FAIL",
				  "error-code sfdc.platform.eventbus.grpc.subscription.topic.notfound" },
			},
			.topic_rows = 1,
			.exit_code = 1,
		},
	},
	/* discovery only: nothing explicit to probe */
	{
		.pubsub = "topics: ['*']",
		.expect = {
			.shape = TRUE,
			.rows = { { "pubsub", "WARN", "topics is [\"*\"]: the discovered topics are "
						      "not probed" } },
			.exit_code = 0,
		},
	},
	/* include/exclude leave no explicit topic */
	{
		.pubsub = "topics: ['" PS_LOGIN "'], include: ['/data/*']",
		.expect = {
			.rows = { { "pubsub", "WARN", "no explicit topic" } },
			.exit_code = 0,
		},
	},
	/* the auth row failed: one pubsub row, SKIP, and no call */
	{
		.pubsub = PS_TOPICS,
		.wrong_key = TRUE,
		.expect = {
			.shape = TRUE,
			.rows = { { "auth", "FAIL", NULL },
				  { "pubsub", "SKIP", "skipped: auth failed" } },
			.exit_code = 1,
		},
	},
	/* nothing listens at the endpoint */
	{
		.pubsub = "topics: ['" PS_LOGIN "']",
		.unreachable = TRUE,
		.expect = {
			.rows = { { "pubsub:" PS_LOGIN, "FAIL", "UNAVAILABLE" },
				  { "pubsub:" PS_LOGIN, "FAIL", "sources.pubsub.endpoint" } },
			.exit_code = 1,
		},
	},
	/* a peer that never answers cannot hold the report: the call's own deadline ends it */
	{
		.pubsub = "topics: ['" PS_LOGIN "']",
		.silent = TRUE,
		.expect = {
			.rows = { { "pubsub:" PS_LOGIN, "FAIL", "DEADLINE_EXCEEDED" },
				  { "loki", "PASS", NULL } },
			.exit_code = 1,
		},
	},
};

static json_int_t
pubsub_get_topic_calls(Fx *fx, const gchar *ctl)
{
	g_autoptr(json_t) stats =
		sfl_test_sim_control(fx->sims.loop, ctl, "GET", "/control/stats", NULL);

	/* every call carried accesstoken, instanceurl and tenantid */
	g_assert_true(json_is_true(json_object_get(stats, "metadata_ok")));
	return json_integer_value(json_object_get(stats, "topic_requests"));
}

static void
test_pubsub(Fx *fx)
{
	g_autoptr(SflTestSim) proc = NULL;
	g_autofree gchar *ctl = NULL;
	g_autofree gchar *endpoint = NULL;
	g_autoptr(json_t) info = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocket) silent = NULL;
	g_autoptr(GInetAddress) lo = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
	g_autoptr(GSocketAddress) any = g_inet_socket_address_new(lo, 0);
	g_autoptr(GSocketAddress) bound = NULL;
	g_autofree gchar *silent_endpoint = NULL;

	ctl = sfl_test_pubsub_sim_start(NULL, &proc);
	if (ctl == NULL)
		return;
	/* listening, never accepting: the kernel completes the handshake, nobody reads */
	silent = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
			      &error);
	g_assert_no_error(error);
	g_assert_true(g_socket_bind(silent, any, FALSE, &error));
	g_assert_true(g_socket_listen(silent, &error));
	bound = g_socket_get_local_address(silent, &error);
	g_assert_no_error(error);
	silent_endpoint =
		g_strdup_printf("http://127.0.0.1:%u",
				g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound)));
	info = sfl_test_sim_control(fx->sims.loop, ctl, "GET", "/control/info", NULL);
	endpoint = g_strdup_printf("http://127.0.0.1:%" G_GINT64_FORMAT,
				   (gint64)json_integer_value(json_object_get(info, "grpc_port")));
	/* the simulator knows a topic once it is created */
	for (guint i = 0; i < 2; i++) {
		g_autofree gchar *body =
			g_strdup_printf("{\"topic\": \"%s\"}", i == 0 ? PS_LOGIN : PS_LOGOUT);
		json_decref(
			sfl_test_sim_control(fx->sims.loop, ctl, "POST", "/control/topic", body));
	}
	for (guint i = 0; i < G_N_ELEMENTS(pubsub_steps); i++) {
		const PubsubStep *step = &pubsub_steps[i];
		g_autofree gchar *sources = g_strdup_printf(
			"  pubsub: {endpoint: '%s', %s}\n  eventlogfile: {enabled: false}\n",
			step->unreachable ? "http://127.0.0.1:9"
			: step->silent	  ? silent_endpoint
					  : endpoint,
			step->pubsub);
		const Cfg cfg = { .wrong_key = step->wrong_key, .sources = sources };
		json_int_t before = pubsub_get_topic_calls(fx, ctl);

		g_test_message("pubsub step %u: %s", i, step->pubsub);
		if (step->control != NULL)
			json_decref(sfl_test_sim_control(fx->sims.loop, ctl, "POST",
							 "/control/topic", step->control));
		fx_write_config(fx, &cfg);
		expect_doctor(fx, &step->expect);
		if (step->get_topic_calls == 0)
			g_assert_cmpint(pubsub_get_topic_calls(fx, ctl), ==, before);
		else
			g_assert_cmpint(pubsub_get_topic_calls(fx, ctl) - before, >=,
					step->get_topic_calls);
	}
	sfl_test_sim_stop(&proc);
}

/* --- registration ------------------------------------------------------------------------------
 */

typedef struct {
	const gchar *path;
	void (*body)(Fx *fx); /* NULL: run_scenario(@scenario) */
	const Scenario *scenario;
} Case;

static const Case cases[] = {
	{ "/doctor/healthy", test_healthy, NULL },
	{ "/doctor/bad-credentials", NULL, &bad_credentials },
	{ "/doctor/loki-unauthorized", test_loki_unauthorized, NULL },
	{ "/doctor/salesforce-faults", NULL, &salesforce_faults },
	{ "/doctor/traceflags-none", NULL, &traceflags_none },
	{ "/doctor/state-unreadable", test_state_unreadable, NULL },
	{ "/doctor/state-corrupt", NULL, &state_corrupt },
	{ "/doctor/state-locked", test_state_locked, NULL },
	{ "/doctor/lease-live", test_lease_live, NULL },
	{ "/doctor/k8s-lease", test_k8s_lease, NULL },
	{ "/doctor/sharding", test_sharding, NULL },
	{ "/doctor/bad-config", NULL, &bad_config },
	{ "/doctor/org-selection", test_org_selection, NULL },
	{ "/doctor/telemetry", test_telemetry, NULL },
	{ "/doctor/pubsub", test_pubsub, NULL },
};

/* every case runs between fx_setup and fx_teardown, and not at all when the simulators skip */
static void
case_run(Fx *fx, gconstpointer data)
{
	const Case *c = data;

	if (fx->skip)
		return;
	if (c->body != NULL)
		c->body(fx);
	else
		run_scenario(fx, c->scenario);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
		g_test_add(cases[i].path, Fx, &cases[i], fx_setup, case_run, fx_teardown);
	return g_test_run();
}
