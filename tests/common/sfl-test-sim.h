/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gio/gio.h>
#include <jansson.h>

#include "sfl-curl-loop.h"
#include "sfl-pipeline.h"
#include "sfl-sink.h"
#include "sfl-test-proc.h"

G_BEGIN_DECLS

/*
 * A running simulator (a script of tests/sim/). Two backends, chosen at run time: natively a child
 * process of the test; when SFL_TEST_SIM_BROKER is set (the Windows build under wine, whose
 * processes cannot start or signal Linux ones) a process of tests/sim/sim_broker.py, the test
 * wrapper that serves that URL. Paths the test hands a simulator are its own (Windows paths
 * under wine); the broker turns them into Linux paths.
 */
#define SFL_TEST_TYPE_SIM (sfl_test_sim_get_type())
G_DECLARE_FINAL_TYPE(SflTestSim, sfl_test_sim, SFL_TEST, SIM, GObject)

/* sends @sig to the simulator (STOP, CONT, TERM or KILL; a simulator that ended is fine) */
void sfl_test_sim_signal(SflTestSim *sim, SflTestSignal sig);

/* waits for the end of the simulator: its exit status, or minus the signal that ended it;
 * fails the test after 30 s */
gint sfl_test_sim_wait(SflTestSim *sim);

/* kills the simulator (frozen or not) and waits for its end */
void sfl_test_sim_kill(SflTestSim *sim);

/* sfl_test_sim_kill() and clears *@sim; NULL is fine */
void sfl_test_sim_stop(SflTestSim **sim);

/* removes @dir and everything under it, whatever the modes a test left on them */
void sfl_test_rmtree(const gchar *dir);

/* FALSE; or, where the platform cannot stop, freeze or thaw a child (Windows), marks the test
 * skipped naming the reason and returns TRUE */
gboolean sfl_test_skip_without_signals(void);

/*
 * Starts `/usr/bin/python3 tests/sim/loki_sim.py ARGS...` and returns its base URL
 * ("http://127.0.0.1:PORT") once it listens. NULL when the simulator reported its
 * dependencies missing (exit 77): the test has been marked skipped.
 */
gchar *sfl_test_loki_sim_start(const gchar *const *args, SflTestSim **out_proc);

/*
 * Starts `/usr/bin/python3 tests/sim/salesforce_sim.py ARGS...` and returns its base URL, both
 * login URL and instance URL. NULL when the simulator reported its dependencies missing
 * (exit 77): the test has been marked skipped.
 */
gchar *sfl_test_sf_sim_start(const gchar *const *args, SflTestSim **out_proc);

/*
 * For daemons that only need a source to exist (with none, `run` exits 0 at once,
 * docs/cli.md): a `salesforce:` section whose one %s is the base URL of a Salesforce simulator
 * started without arguments (client credentials, the simulator's defaults), and a source that
 * only needs the token: one EventLogFile type the simulator has no files for.
 */
#define SFL_TEST_SF_SIM_SALESFORCE                                                                 \
	"salesforce:\n"                                                                            \
	"  login_url: %s\n"                                                                        \
	"  auth_mode: client_credentials\n"                                                        \
	"  client_id: sim-client-id\n"                                                             \
	"  client_secret: sim-secret\n"
#define SFL_TEST_IDLE_SOURCES "sources:\n  eventlogfile: {enabled: true, event_types: [API]}\n"

/*
 * Starts `/usr/bin/python3 tests/sim/otlp_collector.py ARGS...` (an OTLP/HTTP metrics collector
 * stand-in; exports go to BASE/v1/metrics) and returns its base URL. NULL when it reported its
 * dependencies missing (exit 77): the test has been marked skipped.
 */
gchar *sfl_test_otlp_sim_start(const gchar *const *args, SflTestSim **out_proc);

/*
 * Starts `/usr/bin/python3 tests/sim/connect_proxy.py` (an HTTP CONNECT proxy that counts its
 * tunnels, GET /control/stats) and returns its URL ("http://127.0.0.1:PORT").
 */
gchar *sfl_test_proxy_sim_start(SflTestSim **out_proc);

/* `$SF2LOKI_BIN run --config @config`, stderr piped, an ephemeral health port, sanitizer
 * options passed on, @env (NAME, VALUE, ..., NULL) on top; dies with the test */
GSubprocess *sfl_test_daemon_spawn(const gchar *config, const gchar *const *env);

/* re-checks @cond at least every 100 ms until it holds; fails the test after @deadline_sec */
typedef gboolean (*SflTestCondFunc)(gpointer data);
void
sfl_test_poll_until(SflTestCondFunc cond, gpointer data, guint deadline_sec, const gchar *what);

/*
 * Starts `/usr/bin/python3 tests/sim/k8s_sim.py ARGS...` (a Lease API over HTTPS; ARGS must
 * include --dir DIR, which receives ca.crt, token, namespace, api_port and kubeconfig) and
 * returns its plain-HTTP control URL. NULL when it reported its dependencies missing (exit 77):
 * the test has been marked skipped.
 */
gchar *sfl_test_k8s_sim_start(const gchar *const *args, SflTestSim **out_proc);

/*
 * Starts `/usr/bin/python3 tests/sim/pubsub_sim.py ARGS...` (a gRPC Pub/Sub API server) and
 * returns its plain-HTTP control URL; GET /control/info names the gRPC port. NULL when it
 * reported its dependencies missing (exit 77): the test has been marked skipped.
 */
gchar *sfl_test_pubsub_sim_start(const gchar *const *args, SflTestSim **out_proc);

/*
 * Starts `/usr/bin/python3 tests/sim/s3_sim.py ARGS...` (path-style S3 with SigV4 checked by
 * python3-botocore) and returns its base URL, the endpoint_url and the control URL at once.
 * NULL when it reported its dependencies missing (exit 77): the test has been marked skipped.
 */
gchar *sfl_test_s3_sim_start(const gchar *const *args, SflTestSim **out_proc);

/*
 * Starts `/usr/bin/python3 tests/sim/gcs_sim.py ARGS...` (the JSON API with generations, its
 * token endpoint at BASE/token checked by python3-jwt, and a metadata server) and returns its
 * base URL. NULL when it reported its dependencies missing (exit 77): the test was skipped.
 */
gchar *sfl_test_gcs_sim_start(const gchar *const *args, SflTestSim **out_proc);
/*
 * The GCS simulator checking JWT grants for a fresh service account whose key file
 * (`service_file` of the gcs store and lease) is written to @out_sa_path in @dir.
 * Returns the simulator's base URL, or NULL after g_test_skip().
 */
gchar *
sfl_test_gcs_sim_start_with_account(const gchar *dir, SflTestSim **out_proc, gchar **out_sa_path);

/* a fresh 2048-bit RSA key: the private PEM at @priv_path, the public PEM at @pub_path
 * (optional), for the JWT flow against the Salesforce simulator */
void sfl_test_write_rsa_key(const gchar *priv_path, const gchar *pub_path);

/* a self-signed CA certificate (PEM) for subject CN=@cn at @cert_path, valid for two days;
 * its key is thrown away (a CA nothing chains to) */
void sfl_test_write_self_signed_ca(const gchar *cert_path, const gchar *cn);

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

/* `$SF2LOKI_BIN ARGS...` with the environment of sfl_test_daemon_spawn() and the pipes of
 * @flags; dies with the test */
GSubprocess *
sfl_test_bin_spawn(GSubprocessFlags flags, const gchar *const *args, const gchar *const *env);

/*
 * A running `sf2loki run` (sfl_test_daemon_spawn) whose stderr is read line by line while the
 * main context runs: every line is kept in @lines and echoed with g_test_message().
 */
typedef struct {
	GSubprocess *proc;
	GPtrArray *lines; /* (element-type utf8) */
	gboolean eof;	  /* stderr closed: the process ended or is ending */
	/*< private >*/
	GDataInputStream *err;
	gchar *pid;
} SflTestDaemon;

SflTestDaemon *sfl_test_daemon_start(const gchar *config, const gchar *const *env);

/* whether some line so far contains @needle */
gboolean sfl_test_daemon_logged(const SflTestDaemon *daemon, const gchar *needle);

/* waits for a line containing @needle; fails the test after @deadline_sec */
void sfl_test_daemon_wait_logged(SflTestDaemon *daemon, const gchar *needle, guint deadline_sec);

/* the port of the "health server listening on … (port N)" line; fails the test without one */
guint sfl_test_daemon_health_port(const SflTestDaemon *daemon);

/* waits for the end of stderr, reaps the process and returns its exit status (-1 when a
 * signal ended it); fails the test after @deadline_sec */
gint sfl_test_daemon_wait_exit(SflTestDaemon *daemon, guint deadline_sec);

/* SIGTERM, then sfl_test_daemon_wait_exit(); only where sfl_test_skip_without_signals() is
 * FALSE */
gint sfl_test_daemon_stop(SflTestDaemon *daemon, guint deadline_sec);

/* for cases whose point is not the stop: sfl_test_daemon_stop() expecting exit 0 where the
 * platform can stop a child in order, else (Windows) a kill and the wait for its end */
void sfl_test_daemon_finish(SflTestDaemon *daemon, guint deadline_sec);

/* kills the process if it still runs, reads stderr to its end, frees */
void sfl_test_daemon_free(SflTestDaemon *daemon);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflTestDaemon, sfl_test_daemon_free)

/*
 * The Salesforce and Loki simulators of a test, with a fresh temporary directory holding a key
 * pair the simulated connected app trusts, a key it does not know and the simulator's dataset.
 */
typedef struct {
	gchar *dir;
	gchar *key_path;       /* private key, trusted */
	gchar *pub_path;       /* its public key, given to the Salesforce simulator */
	gchar *wrong_key_path; /* private key the simulator does not know */
	gchar *sf_base;	       /* login and instance URL */
	gchar *loki_base;
	SflTestSim *sf_proc;
	SflTestSim *loki_proc;
	SflCurlLoop *loop; /* for control calls */
} SflTestSims;

/* makes the directory (g_dir_make_tmp(@dir_template)), writes the keys and @dataset (the
 * Salesforce simulator's --dataset JSON), starts both simulators (@loki_args for Loki's);
 * FALSE when one of them needs a missing dependency: the test has been marked skipped */
gboolean sfl_test_sims_start(SflTestSims *sims, const gchar *dir_template, const gchar *dataset,
			     const gchar *const *loki_args);

/* stops the simulators, removes the directory (whatever its modes), frees; a zeroed or partly
 * started fixture is fine */
void sfl_test_sims_clear(SflTestSims *sims);

/* the start of a config against the simulators: the `salesforce:` section signing with
 * @key_path (NULL: the trusted key), then `sink:`, `loki:` and the push `url:` of @loki_base
 * (NULL: the simulator); more `sink.loki` keys (four spaces) or sections may follow */
gchar *sfl_test_sims_config(const SflTestSims *sims, const gchar *key_path, const gchar *loki_base);

/* one figure of the Loki simulator's /control/summary?field=@field ("entries", "distinct") */
json_int_t sfl_test_sims_loki_stat(const SflTestSims *sims, const gchar *field, const gchar *stat);

/* force-exits and reaps the child *@proc (when not NULL) and clears it; for simulators see
 * sfl_test_sim_stop() */
void sfl_test_proc_stop(GSubprocess **proc);

/* clears *@loop, runs what its last callbacks left, then removes *@dir (whatever its modes)
 * and clears it; either may be NULL already */
void sfl_test_loop_dir_clear(SflCurlLoop **loop, gchar **dir);

/* @usec (whole seconds) as Salesforce writes a datetime: 2026-11-30T08:00:00.000+0000 */
gchar *sfl_test_sf_datetime(gint64 usec);

/* the Salesforce simulator's --dataset document with one hourly API EventLogFile @id, created
 * @hours_ago, of @rows generated rows from @seed */
gchar *sfl_test_elf_dataset(const gchar *id, gint hours_ago, guint rows, guint seed);

/* one file of such a dataset: an hourly EventLogFile @id of @type (also the generator's kind)
 * logged and created at @created (sfl_test_sf_datetime()), of @rows rows from @seed */
gchar *
sfl_test_elf_file(const gchar *id, const gchar *type, const gchar *created, guint rows, guint seed);

/*
 * A fixture file: the text of tests/data/@relpath with every "@NAME@" replaced, for the
 * NULL-terminated NAME, VALUE pairs that follow. Each name must occur in the file and no
 * placeholder may be left unfilled, so a test and its fixture cannot drift apart silently.
 */
gchar *sfl_test_data_render(const gchar *relpath, ...) G_GNUC_NULL_TERMINATED;

/*
 * One replica of `sf2loki run` under a lease coordinator (HA tests): sfl_test_daemon_spawn()
 * with @env, stderr read line by line while the main context runs (echoed with
 * g_test_message()), leadership counted from the JSON log lines.
 */
typedef struct {
	gchar *name;
	GSubprocess *proc;
	GPtrArray *lines; /* (element-type utf8) every stderr line */
	guint acquired;	  /* "leadership acquired" lines */
	guint lost;	  /* "leadership lost; standing by" lines */
	guint64 epoch;	  /* of the last acquisition */
	gboolean eof;
	/*< private >*/
	GDataInputStream *err;
} SflTestReplica;

/* an array that frees its replicas with sfl_test_replica_free() */
GPtrArray *sfl_test_replicas_new(void);

/* starts `run --config @config` as replica @name and adds it to @replicas */
SflTestReplica *sfl_test_replica_start(GPtrArray *replicas, const gchar *name, const gchar *config,
				       const gchar *const *env);

/* whether some line so far contains @needle */
gboolean sfl_test_replica_logged(const SflTestReplica *r, const gchar *needle);

/* leads now: more acquisitions than losses logged */
gboolean sfl_test_replica_leads(const SflTestReplica *r);

/* has lost leadership and not regained it */
gboolean sfl_test_replica_has_lost(const SflTestReplica *r);

/* the one replica that leads, or NULL; fails the test when two do */
SflTestReplica *sfl_test_replicas_leader(GPtrArray *replicas);

/* the port of the replica's "health server listening on … (port N)" line; 0 before it */
guint sfl_test_replica_health_port(const SflTestReplica *r);

/* SIGCONT (it may be frozen), SIGKILL and reaps: its pipe then reaches EOF */
void sfl_test_replica_kill(SflTestReplica *r);

/* kills the replica, reads its stderr to EOF (the pending read points at it), frees */
void sfl_test_replica_free(SflTestReplica *r);

/* a condition on a test's fixture, for sfl_test_wait_fixture() */
typedef gboolean (*SflTestFixtureCond)(gpointer fixture, gpointer data);

/* conditions: @replica leads; @replica has lost leadership; one of @replicas leads */
gboolean sfl_test_replica_leads_cond(gpointer fixture, gpointer replica);
gboolean sfl_test_replica_lost_cond(gpointer fixture, gpointer replica);
gboolean sfl_test_replicas_lead_cond(gpointer fixture, gpointer replicas);

/* re-checks @cond every 50 ms while the main context runs; FALSE after @timeout_us */
gboolean
sfl_test_wait_fixture(SflTestFixtureCond cond, gpointer fixture, gpointer data, gint64 timeout_us);

/* sfl_test_wait_fixture() that fails the test, naming @what, at the timeout */
void sfl_test_fixture_wait(SflTestFixtureCond cond, gpointer fixture, gpointer data,
			   gint64 timeout_us, const gchar *what);

/* one entry a capturing sink was given */
typedef struct {
	gchar *line;
	gchar *labels;
	gchar *metadata; /* "k=v;k=v" */
	gint64 ts_ns;
} SflTestRow;

/* a sink that records every entry it is given (in order), optionally parking pushes */
#define SFL_TEST_TYPE_CAPTURE (sfl_test_capture_get_type())
G_DECLARE_FINAL_TYPE(SflTestCapture, sfl_test_capture, SFL_TEST, CAPTURE, SflSink)

struct _SflTestCapture {
	SflSink parent_instance;
	GPtrArray *rows; /* (element-type SflTestRow) */
	gboolean hold;	 /* park pushes until sfl_test_capture_release() */
	GPtrArray *held; /* (element-type GTask) */
	guint pushes;	 /* pushes answered */
};

/* the line of row @i */
const gchar *sfl_test_capture_line(SflTestCapture *self, guint i);

/* answers the parked pushes, in order, and stops holding */
void sfl_test_capture_release(SflTestCapture *self);

/* stops *@pipeline (when not NULL) with a second of grace, first answering the pushes @sink
 * parks, and clears it; fails the test when the stop takes more than @deadline_sec */
void sfl_test_pipeline_stop(SflPipeline **pipeline, SflTestCapture *sink, guint deadline_sec);

G_END_DECLS
