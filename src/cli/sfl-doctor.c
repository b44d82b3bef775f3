/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflDoctor"

#include "config.h"

#include "sfl-doctor.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "sfl-app.h"
#include "sfl-autocleanups.h"
#include "sfl-clock.h"
#include "sfl-config.h"
#include "sfl-curl-loop.h"
#include "sfl-error.h"
#include "sfl-http.h"
#include "sfl-kinds.h"
#include "sfl-log.h"
#include "sfl-orgs.h"
#include "sfl-otlp.h"
#include "sfl-redact.h"
#include "sfl-sf-auth.h"
#include "sfl-sf-rest.h"
#include "sfl-shape.h"

/*
 * Every check runs against what the daemon would really use: the same configuration loader and
 * composition root, the same token provider and REST client, the same Loki sink and encoder,
 * the real state file with its lock and the real lease file (SFL-0017). The only writes are one
 * Loki line, an empty OTLP export and two probe files that are removed again.
 *
 * The network clients are asynchronous on the curl loop; the checks are a fixed sequence, so
 * each one waits for its own operation by iterating the thread-default main context.
 */

/* transfers and probes: bounded so a hung peer cannot hold the preflight forever */
#define SFL_DOCTOR_HTTP_TIMEOUT_MS (15 * 1000)
/* under this share of DailyApiRequests left, the sources may soon be throttled */
#define SFL_DOCTOR_LIMITS_LOW 0.2

typedef struct {
	gchar *name;
	SflDoctorStatus status;
	gchar *detail;
} SflDoctorRow;

typedef struct {
	const SflDoctorOptions *opts;
	GMainContext *context;
	GPtrArray *rows; /* SflDoctorRow */
	SflConfig *config;
	SflClock *clock;
	SflCurlLoop *loop;
	SflSink *sink;
	/* the org under check */
	const gchar *org_name; /* NULL in single-org mode */
	const SflSalesforceConfig *sf;
	const SflSourcesConfig *sources;
	SflSfAuth *auth;
	SflSfRest *rest;
	gchar *org_id;
	/* why every later row is skipped (config or org selection failed) */
	const gchar *skip_all;
	/* why the rows that need Salesforce are skipped */
	const gchar *skip_salesforce;
} SflDoctor;

static const gchar *const sfl_doctor_status_names[] = { "PASS", "WARN", "FAIL", "SKIP" };

/**
 * sfl_doctor_status_to_string:
 * @status: a row status
 *
 * Returns: its name as printed
 */
const gchar *
sfl_doctor_status_to_string(SflDoctorStatus status)
{
	g_return_val_if_fail(status <= SFL_DOCTOR_SKIP, "FAIL");
	return sfl_doctor_status_names[status];
}

static void
sfl_doctor_row_free(gpointer data)
{
	SflDoctorRow *row = data;
	g_free(row->name);
	g_free(row->detail);
	g_free(row);
}

static void sfl_doctor_add(SflDoctor *d, const gchar *name, SflDoctorStatus status,
			   const gchar *format, ...) G_GNUC_PRINTF(4, 5);

/* details are redacted here, once: URLs with credentials and every configured secret */
static void
sfl_doctor_add(SflDoctor *d, const gchar *name, SflDoctorStatus status, const gchar *format, ...)
{
	SflDoctorRow *row = g_new0(SflDoctorRow, 1);
	g_autofree gchar *text = NULL;
	va_list args;

	va_start(args, format);
	text = g_strdup_vprintf(format, args);
	va_end(args);
	g_strdelimit(text, "\r\n", ' ');
	row->name = g_strdup(name);
	row->status = status;
	row->detail = sfl_redact(text);
	g_ptr_array_add(d->rows, row);
}

/* a row from a kind record's probe, redacted like every other */
static void
sfl_doctor_probe_add_cb(gpointer user_data, const gchar *name, SflProbeStatus status,
			const gchar *detail)
{
	G_STATIC_ASSERT((gint)SFL_PROBE_PASS == (gint)SFL_DOCTOR_PASS);
	G_STATIC_ASSERT((gint)SFL_PROBE_WARN == (gint)SFL_DOCTOR_WARN);
	G_STATIC_ASSERT((gint)SFL_PROBE_FAIL == (gint)SFL_DOCTOR_FAIL);
	G_STATIC_ASSERT((gint)SFL_PROBE_SKIP == (gint)SFL_DOCTOR_SKIP);
	sfl_doctor_add(user_data, name, (SflDoctorStatus)status, "%s", detail);
}

/* what a kind record's probe sees: the doctor's context, curl loop, clock and org */
static void
sfl_doctor_probe_env(SflDoctor *d, SflProbeEnv *env)
{
	env->config = d->config;
	env->context = d->context;
	env->loop = d->loop;
	env->clock = d->clock;
	env->sources = d->sources;
	env->auth = d->auth;
	env->org_id = d->org_id;
	env->add = sfl_doctor_probe_add_cb;
	env->add_data = d;
}

/* @path: under the versioned REST root, e.g. "/limits" */
static json_t *
sfl_doctor_sf_get(SflDoctor *d, const gchar *path, GError **error)
{
	SflProbeOp op = { 0 };
	json_t *doc = NULL;

	sfl_sf_rest_get_async(d->rest, path, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(d->context, &op);
	doc = sfl_sf_rest_get_finish(d->rest, op.result, error);
	sfl_probe_op_clear(&op);
	return doc;
}

static json_t *
sfl_doctor_sf_query(SflDoctor *d, const gchar *soql, gboolean tooling, GError **error)
{
	SflProbeOp op = { 0 };
	json_t *records = NULL;

	sfl_sf_rest_query_async(d->rest, soql, tooling, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(d->context, &op);
	records = sfl_sf_rest_query_finish(d->rest, op.result, error);
	sfl_probe_op_clear(&op);
	return records;
}

/* --- config and org ------------------------------------------------------------------------- */

static GString *
sfl_doctor_enabled_sources(const SflSourcesConfig *s)
{
	GString *out = g_string_new(NULL);
	guint n = 0;
	const SflSourceKind *kinds = sfl_source_kinds(&n);

	for (guint i = 0; i < n; i++) {
		if (!kinds[i].enabled(s))
			continue;
		if (out->len > 0)
			g_string_append(out, ", ");
		g_string_append(out, kinds[i].name);
	}
	if (out->len == 0)
		g_string_append(out, "none");
	return out;
}

/* load, then build what `run` builds (no network); the whole file is validated here */
static void
sfl_doctor_check_config(SflDoctor *d, const gchar *name)
{
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) error = NULL;
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(SflCoordinator) coordinator = NULL;
	g_autoptr(SflOrgs) orgs = NULL;
	const SflConfigData *cd = NULL;
	g_autoptr(GString) sources = NULL;

	d->config = sfl_config_load(d->opts->config_path, envp, &error);
	if (d->config != NULL) {
		cd = &d->config->data;
		store = sfl_app_build_store(d->config, sfl_app_store_wants_exclusive(d->config),
					    &error);
	}
	if (store != NULL)
		coordinator = sfl_app_build_coordinator(d->config, d->loop, &error);
	/* the sink carries sink.loki.ca_file on its own requests, as in `run` */
	if (coordinator != NULL && sfl_orgs_check_config(d->config, &error))
		d->sink =
			sfl_app_build_sink(d->config, d->loop, SFL_DOCTOR_HTTP_TIMEOUT_MS, &error);
	if (d->sink != NULL)
		orgs = sfl_orgs_new(d->config, d->loop, d->clock, &error);
	if (orgs == NULL) {
		/* a loader report has one problem per line; a row has one line */
		g_auto(GStrv) problems = g_strsplit(error->message, "\n", -1);
		g_autofree gchar *text = g_strjoinv("; ", problems);
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "%s", text);
		d->skip_all = "skipped: config failed";
		return;
	}
	sources = sfl_doctor_enabled_sources(&cd->sources);
	if (cd->orgs->len > 0)
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "%s: %u orgs",
			       d->config->path != NULL ? d->config->path : "(no file)",
			       cd->orgs->len);
	else
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "%s: enabled sources: %s",
			       d->config->path != NULL ? d->config->path : "(no file)",
			       sources->str);
}

static void
sfl_doctor_check_org(SflDoctor *d, const gchar *name)
{
	const SflConfigData *cd = &d->config->data;
	const SflOrgConfig *chosen = NULL;
	g_autoptr(GString) names = g_string_new(NULL);

	if (cd->orgs->len == 0) {
		if (d->opts->org != NULL) {
			sfl_doctor_add(d, name, SFL_DOCTOR_FAIL,
				       "unknown org '%s': this configuration has one unnamed org "
				       "(the salesforce section); drop --org",
				       d->opts->org);
			d->skip_all = "skipped: org selection failed";
			return;
		}
		d->sf = cd->salesforce;
		d->sources = &cd->sources;
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "single org");
		return;
	}
	for (guint i = 0; i < cd->orgs->len; i++) {
		const SflOrgConfig *org = g_ptr_array_index(cd->orgs, i);
		if (names->len > 0)
			g_string_append(names, ", ");
		g_string_append(names, org->name);
		if (chosen == NULL &&
		    (d->opts->org == NULL || g_str_equal(org->name, d->opts->org)))
			chosen = org;
	}
	if (chosen == NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "unknown org '%s'; configured: %s",
			       d->opts->org, names->str);
		d->skip_all = "skipped: org selection failed";
		return;
	}
	d->org_name = chosen->name;
	d->sf = &chosen->salesforce;
	d->sources = &chosen->sources;
	if (cd->orgs->len > 1)
		sfl_doctor_add(d, name, SFL_DOCTOR_WARN,
			       "%u orgs configured (%s); checking '%s' only%s", cd->orgs->len,
			       names->str, chosen->name,
			       d->opts->org == NULL ? " (--org NAME checks another)" : "");
	else
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "checking '%s'", chosen->name);
}

/* --- Salesforce ----------------------------------------------------------------------------- */

static const gchar *
sfl_doctor_auth_hint(const SflSalesforceConfig *sf, const GError *error)
{
	const gchar *url = sf->login_url != NULL ? sf->login_url : "";

	if (sf->auth_mode == SFL_SF_AUTH_CLIENT_CREDENTIALS &&
	    (strstr(url, "://login.salesforce.com") != NULL ||
	     strstr(url, "://test.salesforce.com") != NULL))
		return "client_credentials needs the org's My Domain URL as salesforce.login_url, "
		       "not the generic login host";
	if (sf->auth_mode == SFL_SF_AUTH_JWT_BEARER &&
	    g_strcmp0(sfl_error_get_peer_code(error), "invalid_grant") == 0)
		return "the user is not pre-authorised for the connected app, or the certificate "
		       "uploaded to it does not match salesforce.private_key";
	return NULL;
}

static void
sfl_doctor_auth_failed(SflDoctor *d, const gchar *name, const GError *error)
{
	const gchar *hint = sfl_doctor_auth_hint(d->sf, error);

	sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "%s%s%s", error->message, hint ? "; hint: " : "",
		       hint ? hint : "");
	d->skip_salesforce = "skipped: auth failed";
}

static void
sfl_doctor_check_auth(SflDoctor *d, const gchar *name)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflSfToken) token = NULL;
	SflProbeOp op = { 0 };
	const gchar *flow = sfl_config_enum_name("salesforce.auth_mode", d->sf->auth_mode);

	d->auth = sfl_sf_auth_new(d->loop, d->sf, d->clock, &error);
	if (d->auth == NULL) {
		sfl_doctor_auth_failed(d, name, error);
		return;
	}
	sfl_sf_auth_get_token_async(d->auth, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(d->context, &op);
	token = sfl_sf_auth_get_token_finish(d->auth, op.result, &error);
	sfl_probe_op_clear(&op);
	op.done = FALSE;
	if (token == NULL) {
		sfl_doctor_auth_failed(d, name, error);
		return;
	}
	sfl_sf_auth_get_org_id_async(d->auth, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(d->context, &op);
	d->org_id = sfl_sf_auth_get_org_id_finish(d->auth, op.result, &error);
	sfl_probe_op_clear(&op);
	if (d->org_id == NULL) {
		sfl_doctor_auth_failed(d, name, error);
		return;
	}
	d->rest = sfl_sf_rest_new(d->loop, d->auth, d->sf->api_version);
	sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "flow=%s instance_url=%s org_id=%s", flow,
		       token->instance_url, d->org_id);
}

static void
sfl_doctor_check_permissions(SflDoctor *d, const gchar *name)
{
	const SflEventLogObjectsConfig *objs = &d->sources->eventlog_objects;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) describe =
		sfl_doctor_sf_get(d, "/sobjects/EventLogFile/describe", &error);
	const SflEventLogObjectConfig *first = NULL;
	g_autofree gchar *soql = NULL;
	g_autoptr(json_t) records = NULL;

	if (describe == NULL) {
		if (sfl_error_get_http_status(error) == 403)
			sfl_doctor_add(d, name, SFL_DOCTOR_FAIL,
				       "EventLogFile describe refused (%s): the user lacks the "
				       "\"View Event Log Files\" permission",
				       error->message);
		else
			sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "EventLogFile describe: %s",
				       error->message);
		return;
	}
	if (!objs->enabled || objs->objects == NULL || objs->objects->len == 0) {
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "EventLogFile readable");
		return;
	}
	first = g_ptr_array_index(objs->objects, 0);
	soql = g_strdup_printf("SELECT Id FROM %s LIMIT 1", first->name);
	records = sfl_doctor_sf_query(d, soql, FALSE, &error);
	if (records == NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "%s not queryable: %s", first->name,
			       error->message);
		return;
	}
	sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "EventLogFile readable, %s queryable",
		       first->name);
}

/* the source kinds' own probes, run in their doctor row (Pub/Sub: one GetTopic per topic) */
static void
sfl_doctor_check_source(SflDoctor *d, const gchar *name)
{
	const SflSourceKind *kind = sfl_source_kind_lookup(name, NULL);
	SflProbeEnv env = { 0 };

	sfl_doctor_probe_env(d, &env);
	if (kind != NULL && kind->doctor_probe != NULL)
		kind->doctor_probe(&env, name);
	else
		sfl_doctor_add(d, name, SFL_DOCTOR_SKIP, "no probe for sources.%s", name);
}

static void
sfl_doctor_check_entitlement(SflDoctor *d, const gchar *name)
{
	const SflEventLogFileConfig *elf = &d->sources->eventlogfile;
	const gchar *interval = elf->interval == SFL_ELF_INTERVAL_DAILY ? "Daily" : "Hourly";
	g_autofree gchar *soql = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) records = NULL;
	g_autoptr(GHashTable) found = NULL;
	g_autoptr(GString) missing = g_string_new(NULL);
	gsize i;
	json_t *rec;

	if (!elf->enabled) {
		sfl_doctor_add(d, name, SFL_DOCTOR_SKIP, "sources.eventlogfile is disabled");
		return;
	}
	/* the daemon's own discovery query: what it lists is what it can ingest */
	soql = g_strdup_printf(
		"SELECT EventType FROM EventLogFile WHERE Interval='%s' GROUP BY EventType",
		interval);
	records = sfl_doctor_sf_query(d, soql, FALSE, &error);
	if (records == NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "EventType discovery failed: %s",
			       error->message);
		return;
	}
	found = g_hash_table_new(g_str_hash, g_str_equal);
	json_array_foreach (records, i, rec) {
		const gchar *type = json_string_value(json_object_get(rec, "EventType"));
		if (type != NULL && type[0] != '\0')
			g_hash_table_add(found, (gpointer)type);
	}
	for (guint t = 0; t < elf->event_types->len; t++) {
		const SflElfTypeConfig *tc = g_ptr_array_index(elf->event_types, t);
		if (g_str_equal(tc->name, "*") || g_hash_table_contains(found, tc->name))
			continue;
		if (missing->len > 0)
			g_string_append(missing, ", ");
		g_string_append(missing, tc->name);
	}
	if (missing->len > 0)
		sfl_doctor_add(d, name, SFL_DOCTOR_WARN,
			       "no %s EventLogFile for: %s (%u type%s with files; check the Event "
			       "Monitoring licence and the interval)",
			       interval, missing->str, g_hash_table_size(found),
			       g_hash_table_size(found) == 1 ? "" : "s");
	else if (g_hash_table_size(found) == 0)
		sfl_doctor_add(d, name, SFL_DOCTOR_WARN,
			       "no %s EventLogFile of any type: check the Event Monitoring licence "
			       "and sources.eventlogfile.interval",
			       interval);
	else
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "%u event type%s with %s files",
			       g_hash_table_size(found), g_hash_table_size(found) == 1 ? "" : "s",
			       interval);
}

static void
sfl_doctor_check_traceflags(SflDoctor *d, const gchar *name)
{
	g_autoptr(GDateTime) now = NULL;
	g_autofree gchar *literal = NULL;
	g_autofree gchar *soql = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) records = NULL;
	gsize n;

	if (!d->sources->apexlog.enabled) {
		sfl_doctor_add(d, name, SFL_DOCTOR_SKIP, "sources.apexlog is disabled");
		return;
	}
	now = g_date_time_new_from_unix_utc(sfl_clock_wall_usec(d->clock) / G_USEC_PER_SEC);
	literal = g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
	soql = g_strdup_printf("SELECT Id FROM TraceFlag WHERE ExpirationDate > %s LIMIT 200",
			       literal);
	records = sfl_doctor_sf_query(d, soql, TRUE, &error);
	if (records == NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_WARN, "cannot list TraceFlags: %s",
			       error->message);
		return;
	}
	n = json_array_size(records);
	if (n == 0)
		sfl_doctor_add(d, name, SFL_DOCTOR_WARN,
			       "no active TraceFlag: Salesforce writes no debug logs to ship");
	else
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "%zu active TraceFlag%s%s", n,
			       n == 1 ? "" : "s", n >= 200 ? " (or more)" : "");
}

static gboolean
sfl_doctor_json_int(json_t *value, gint64 *out)
{
	if (json_is_integer(value))
		*out = json_integer_value(value);
	else if (json_is_real(value))
		*out = (gint64)json_real_value(value);
	else
		return FALSE;
	return TRUE;
}

static void
sfl_doctor_check_limits(SflDoctor *d, const gchar *name)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) doc = sfl_doctor_sf_get(d, "/limits", &error);
	json_t *daily;
	gint64 max = 0;
	gint64 remaining = 0;

	if (doc == NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "%s", error->message);
		return;
	}
	daily = json_object_get(doc, "DailyApiRequests");
	if (!sfl_doctor_json_int(json_object_get(daily, "Max"), &max) ||
	    !sfl_doctor_json_int(json_object_get(daily, "Remaining"), &remaining) || max <= 0) {
		sfl_doctor_add(d, name, SFL_DOCTOR_WARN, "no DailyApiRequests in /limits");
		return;
	}
	if ((gdouble)remaining / (gdouble)max < SFL_DOCTOR_LIMITS_LOW)
		sfl_doctor_add(d, name, SFL_DOCTOR_WARN,
			       "DailyApiRequests %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT
			       " remaining (under %.0f%%): the sources may be throttled",
			       remaining, max, SFL_DOCTOR_LIMITS_LOW * 100);
	else
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS,
			       "DailyApiRequests %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT
			       " remaining",
			       remaining, max);
}

/* --- Loki ------------------------------------------------------------------------------------ */

static void
sfl_doctor_label_put(GArray *pairs, const gchar *name, const gchar *value)
{
	SflLabelPair pair = { name, value };

	if (value == NULL || value[0] == '\0')
		return;
	for (guint i = 0; i < pairs->len; i++) {
		if (g_str_equal(g_array_index(pairs, SflLabelPair, i).name, name))
			return;
	}
	g_array_append_val(pairs, pair);
}

/*
 * The deployment's stream labels (sink.loki.labels first, so the operator's values win, then
 * job/service_name/environment/sf_org_id/org as the sources add them) plus source, so the
 * test line is easy to find and to tell apart from data.
 */
static GArray *
sfl_doctor_loki_labels(SflDoctor *d)
{
	const SflLokiConfig *loki = &d->config->data.sink.loki;
	GArray *pairs = g_array_new(FALSE, FALSE, sizeof(SflLabelPair));
	const gchar *org_id = d->org_id != NULL ? d->org_id : d->sf->org_id;

	for (guint i = 0; loki->labels != NULL && i < loki->labels->len; i++) {
		const SflConfigPair *p = g_ptr_array_index(loki->labels, i);
		sfl_doctor_label_put(pairs, p->key, p->value);
	}
	sfl_doctor_label_put(pairs, "job", "sf2loki");
	sfl_doctor_label_put(pairs, "service_name", "sf2loki");
	sfl_doctor_label_put(pairs, "environment",
			     sfl_config_enum_name("salesforce.environment", d->sf->environment));
	sfl_doctor_label_put(pairs, "sf_org_id", org_id);
	sfl_doctor_label_put(pairs, "org", d->org_name);
	sfl_doctor_label_put(pairs, "source", "sf2loki-doctor");
	return pairs;
}

static void
sfl_doctor_loki_failed(SflDoctor *d, const gchar *name, const SflSinkResult *result,
		       guint n_metadata)
{
	const gchar *detail = result->detail != NULL ? result->detail : "";

	if (sfl_http_status_class(result->status) == SFL_HTTP_CLASS_AUTH)
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL,
			       "HTTP %u: credentials refused (%s); check sink.loki.auth_token and "
			       "sink.loki.tenant_id (the basic-auth user with a token, else "
			       "X-Scope-OrgID), and that the token may write logs (logs:write)",
			       result->status, detail);
	else if (result->status == 0)
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "cannot reach %s: %s",
			       d->config->data.sink.loki.url,
			       result->reason != NULL ? result->reason : detail);
	else if ((result->outcome == SFL_SINK_REJECTED || result->outcome == SFL_SINK_PARTIAL) &&
		 n_metadata > 0)
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL,
			       "HTTP %u: the line was refused (%s); production lines carry "
			       "structured metadata: does this Loki accept it "
			       "(allow_structured_metadata)?",
			       result->status, detail);
	else
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "HTTP %u %s: %s", result->status,
			       result->outcome == SFL_SINK_RETRY ? "(retryable)" : "(permanent)",
			       detail);
}

static void
sfl_doctor_check_loki(SflDoctor *d, const gchar *name)
{
	const SflLokiConfig *loki = &d->config->data.sink.loki;
	g_autoptr(GArray) pairs = sfl_doctor_loki_labels(d);
	g_autoptr(GArray) metadata = g_array_new(FALSE, FALSE, sizeof(SflLabelPair));
	g_autoptr(SflLabelsInterner) interner = sfl_labels_interner_new();
	g_autoptr(SflLabels) labels = NULL;
	g_autoptr(SflBatch) batch = NULL;
	g_autoptr(SflSinkResult) result = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) line = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *stamp = NULL;
	gint64 now_usec = sfl_clock_wall_usec(d->clock);
	gint64 started;
	SflProbeOp op = { 0 };
	const gchar *labels_text;

	labels = sfl_labels_intern(interner, (const SflLabelPair *)(const void *)pairs->data,
				   pairs->len, &error);
	if (labels == NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "%s", error->message);
		return;
	}
	/* the fields production lines carry as structured metadata (SFL-0032) */
	for (guint i = 0; loki->structured_metadata_fields != NULL &&
			  loki->structured_metadata_fields[i] != NULL;
	     i++) {
		SflLabelPair pair = { loki->structured_metadata_fields[i], "sf2loki-doctor" };
		g_array_append_val(metadata, pair);
	}
	stamp = sfl_format_iso_seconds(now_usec);
	line = json_pack("{s:s, s:s, s:s}", "message", "sf2loki doctor test line", "timestamp",
			 stamp, "level", "INFO");
	text = json_dumps(line, JSON_COMPACT);
	batch = sfl_batch_new();
	sfl_batch_add(batch, sfl_entry_new(now_usec * 1000, labels, text, -1,
					   (const SflLabelPair *)(const void *)metadata->data,
					   metadata->len, NULL, NULL));
	started = g_get_monotonic_time();
	sfl_sink_push_async(d->sink, batch, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(d->context, &op);
	result = sfl_sink_push_finish(d->sink, op.result, &error);
	sfl_probe_op_clear(&op);
	if (result == NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "%s", error->message);
		return;
	}
	if (result->outcome != SFL_SINK_OK) {
		sfl_doctor_loki_failed(d, name, result, metadata->len);
		return;
	}
	labels_text = sfl_labels_get_string(labels, NULL);
	sfl_doctor_add(d, name, SFL_DOCTOR_PASS,
		       "pushed 1 line in %" G_GINT64_FORMAT " ms to %s: %s, %u structured "
		       "metadata field%s",
		       (g_get_monotonic_time() - started) / 1000, loki->url, labels_text,
		       metadata->len, metadata->len == 1 ? "" : "s");
}

/* --- transforms and telemetry ---------------------------------------------------------------- */

static void
sfl_doctor_check_transforms(SflDoctor *d, const gchar *name)
{
	const SflSourcesConfig *s = d->sources;
	const struct {
		const gchar *source;
		GPtrArray *rules;
	} lists[] = {
		{ "pubsub", s->pubsub.transforms },
		{ "eventlogfile", s->eventlogfile.transforms },
		{ "eventlog_objects", s->eventlog_objects.transforms },
		{ "apexlog", s->apexlog.transforms },
	};
	g_autoptr(GString) unsalted = g_string_new(NULL);
	guint n_hash = 0;

	for (guint l = 0; l < G_N_ELEMENTS(lists); l++) {
		for (guint i = 0; lists[l].rules != NULL && i < lists[l].rules->len; i++) {
			const SflTransformRule *rule = g_ptr_array_index(lists[l].rules, i);
			gboolean named = rule->name != NULL && rule->name[0] != '\0';
			if (rule->action != SFL_TRANSFORM_HASH)
				continue;
			n_hash++;
			if (s->transform_salt != NULL && s->transform_salt[0] != '\0')
				continue;
			g_string_append_printf(unsalted,
					       "%ssources.%s.transforms[%u]%s%s%s: hash "
					       "without sources.transform_salt",
					       unsalted->len > 0 ? "; " : "", lists[l].source, i,
					       named ? " (" : "", named ? rule->name : "",
					       named ? ")" : "");
		}
	}
	if (n_hash == 0)
		sfl_doctor_add(d, name, SFL_DOCTOR_SKIP, "no hash rules");
	else if (unsalted->len > 0)
		sfl_doctor_add(d, name, SFL_DOCTOR_WARN,
			       "%s (unsalted hashes of short values can be reversed by lookup)",
			       unsalted->str);
	else
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS, "%u hash rule%s, salted", n_hash,
			       n_hash == 1 ? "" : "s");
}

static void
sfl_doctor_check_telemetry(SflDoctor *d, const gchar *name)
{
	const SflTelemetryConfig *t = &d->config->data.service.telemetry;
	g_autoptr(GPtrArray) headers = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) computed = NULL;
	g_autoptr(SflMetrics) none = sfl_metrics_new();
	g_autoptr(GBytes) body = NULL;
	gint64 now_ns = sfl_clock_wall_usec(d->clock) * 1000;
	g_autoptr(SflHttpResponse) response = NULL;
	g_autoptr(GError) error = NULL;
	SflProbeOp op = { 0 };
	gint64 started;
	guint status;

	if (!t->enabled) {
		sfl_doctor_add(d, name, SFL_DOCTOR_SKIP, "service.telemetry is disabled");
		return;
	}
	if (t->endpoint == NULL || t->endpoint[0] == '\0') {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL,
			       "service.telemetry.enabled is true but service.telemetry.endpoint "
			       "is empty");
		return;
	}
	/* the exporter's own header computation, basic-auth fallbacks to the Loki credentials too
	 */
	computed = sfl_otlp_headers(t, &d->config->data.sink.loki, &error);
	if (computed == NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "%s", error->message);
		return;
	}
	g_ptr_array_add(headers, g_strdup("Content-Type: " SFL_OTLP_CONTENT_TYPE));
	for (guint i = 0; i < computed->len; i++)
		g_ptr_array_add(headers, g_strdup(g_ptr_array_index(computed, i)));
	g_ptr_array_add(headers, NULL);
	/* an export shaped like the daemon's (its resource, no series), so the collector parses
	 * what it will get rather than an empty body */
	body = sfl_otlp_encode(none, t->resource_attributes, now_ns, now_ns);
	started = g_get_monotonic_time();
	sfl_http_request_async(d->loop, "POST", t->endpoint, (const gchar *const *)headers->pdata,
			       body, SFL_DOCTOR_HTTP_TIMEOUT_MS, NULL, sfl_probe_op_cb, &op);
	sfl_probe_op_wait(d->context, &op);
	response = sfl_http_request_finish(op.result, &error);
	sfl_probe_op_clear(&op);
	if (response == NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "cannot reach %s: %s", t->endpoint,
			       error->message);
		return;
	}
	status = sfl_http_response_get_status(response);
	if (sfl_http_status_class(status) == SFL_HTTP_CLASS_AUTH)
		sfl_doctor_add(
			d, name, SFL_DOCTOR_FAIL,
			"HTTP %u from %s: credentials refused; check "
			"service.telemetry.basic_auth_user/basic_auth_token (they default to "
			"the Loki tenant_id/auth_token) and service.telemetry.headers",
			status, t->endpoint);
	else if (sfl_http_status_class(status) != SFL_HTTP_CLASS_SUCCESS)
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "HTTP %u from %s", status, t->endpoint);
	else
		sfl_doctor_add(d, name, SFL_DOCTOR_PASS,
			       "HTTP %u from %s in %" G_GINT64_FORMAT
			       " ms (an export without series)",
			       status, t->endpoint, (g_get_monotonic_time() - started) / 1000);
}

/* --- state and coordinator: the kind records' probes ------------------------------------------ */

/* the configured kind's @probe, or @error: why the configuration names no kind */
static void
sfl_doctor_run_probe(SflDoctor *d, const gchar *name, SflProbeFunc probe, const GError *error)
{
	SflProbeEnv env = { 0 };

	if (error != NULL) {
		sfl_doctor_add(d, name, SFL_DOCTOR_FAIL, "%s", error->message);
		return;
	}
	sfl_doctor_probe_env(d, &env);
	if (probe != NULL)
		probe(&env, name);
}

static void
sfl_doctor_check_state(SflDoctor *d, const gchar *name)
{
	g_autoptr(GError) error = NULL;
	const SflStoreKind *kind = sfl_store_kind_for_config(d->config, &error);

	sfl_doctor_run_probe(d, name, kind != NULL ? kind->doctor_probe : NULL, error);
}

static void
sfl_doctor_check_coordinator(SflDoctor *d, const gchar *name)
{
	g_autoptr(GError) error = NULL;
	const SflCoordinatorKind *kind = sfl_coordinator_kind_for_config(d->config, &error);

	sfl_doctor_run_probe(d, name, kind != NULL ? kind->doctor_probe : NULL, error);
}

static void
sfl_doctor_check_sharding(SflDoctor *d, const gchar *name)
{
	sfl_doctor_run_probe(d, name, sfl_probe_sharding, NULL);
}

/* --- the sequence and the report ---------------------------------------------------------------
 */

typedef void (*SflDoctorCheckFunc)(SflDoctor *d, const gchar *name);

typedef struct {
	const gchar *name;
	SflDoctorCheckFunc func;
	gboolean needs_salesforce; /* skipped when auth failed */
} SflDoctorCheck;

static const SflDoctorCheck sfl_doctor_checks[] = {
	{ "config", sfl_doctor_check_config, FALSE },
	{ "org", sfl_doctor_check_org, FALSE },
	{ "auth", sfl_doctor_check_auth, FALSE },
	{ "permissions", sfl_doctor_check_permissions, TRUE },
	{ "pubsub", sfl_doctor_check_source, TRUE },
	{ "entitlement", sfl_doctor_check_entitlement, TRUE },
	{ "traceflags", sfl_doctor_check_traceflags, TRUE },
	{ "loki", sfl_doctor_check_loki, FALSE },
	{ "transforms", sfl_doctor_check_transforms, FALSE },
	{ "telemetry", sfl_doctor_check_telemetry, FALSE },
	{ "state", sfl_doctor_check_state, FALSE },
	{ "coordinator", sfl_doctor_check_coordinator, FALSE },
	{ "sharding", sfl_doctor_check_sharding, FALSE },
	{ "limits", sfl_doctor_check_limits, TRUE },
};

static int
sfl_doctor_exit_code(const SflDoctor *d, guint counts[4])
{
	for (guint i = 0; i < d->rows->len; i++) {
		const SflDoctorRow *row = g_ptr_array_index(d->rows, i);
		counts[row->status]++;
	}
	/* the configuration or the org selection failed: the checks never ran */
	if (d->skip_all != NULL)
		return 2;
	return counts[SFL_DOCTOR_FAIL] > 0 ? 1 : 0;
}

static void
sfl_doctor_print_json(const SflDoctor *d, int exit_code, const guint counts[4])
{
	g_autoptr(json_t) root = json_object();
	json_t *checks = json_array();
	g_autofree gchar *text = NULL;

	for (guint i = 0; i < d->rows->len; i++) {
		const SflDoctorRow *row = g_ptr_array_index(d->rows, i);
		json_array_append_new(checks,
				      json_pack("{s:s, s:s, s:s}", "name", row->name, "status",
						sfl_doctor_status_to_string(row->status), "detail",
						row->detail));
	}
	json_object_set_new(root, "checks", checks);
	json_object_set_new(root, "summary",
			    json_pack("{s:i, s:i, s:i, s:i}", "passed", counts[SFL_DOCTOR_PASS],
				      "warnings", counts[SFL_DOCTOR_WARN], "failed",
				      counts[SFL_DOCTOR_FAIL], "skipped", counts[SFL_DOCTOR_SKIP]));
	json_object_set_new(root, "exit_code", json_integer(exit_code));
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("%s\n", text);
}

static void
sfl_doctor_print_table(const SflDoctor *d, const guint counts[4])
{
	gint width = (gint)strlen("CHECK");

	for (guint i = 0; i < d->rows->len; i++) {
		const SflDoctorRow *row = g_ptr_array_index(d->rows, i);
		width = MAX(width, (gint)strlen(row->name));
	}
	printf("%-*s  %-6s  %s\n", width, "CHECK", "STATUS", "DETAIL");
	for (guint i = 0; i < d->rows->len; i++) {
		const SflDoctorRow *row = g_ptr_array_index(d->rows, i);
		printf("%-*s  %-6s  %s\n", width, row->name,
		       sfl_doctor_status_to_string(row->status), row->detail);
	}
	printf("\n%u passed, %u warnings, %u failed, %u skipped\n", counts[SFL_DOCTOR_PASS],
	       counts[SFL_DOCTOR_WARN], counts[SFL_DOCTOR_FAIL], counts[SFL_DOCTOR_SKIP]);
}

/**
 * sfl_doctor_main:
 * @opts: what to check and how to report it
 *
 * Returns: the exit code: 2 configuration or org selection failed, 1 a check failed, else 0
 */
int
sfl_doctor_main(const SflDoctorOptions *opts)
{
	SflDoctor d = { 0 };
	guint counts[4] = { 0 };
	int exit_code;

	g_return_val_if_fail(opts != NULL, 2);

	/* the report is the output: the clients' own warnings would only repeat it */
	sfl_log_setup(SFL_LOG_FORMAT_LOGFMT, SFL_LOG_LEVEL_ERROR);
	d.opts = opts;
	d.context = g_main_context_ref_thread_default();
	d.rows = g_ptr_array_new_with_free_func(sfl_doctor_row_free);
	d.clock = sfl_clock_get_system();
	d.loop = sfl_curl_loop_new();

	for (guint i = 0; i < G_N_ELEMENTS(sfl_doctor_checks); i++) {
		const SflDoctorCheck *check = &sfl_doctor_checks[i];
		if (d.skip_all != NULL)
			sfl_doctor_add(&d, check->name, SFL_DOCTOR_SKIP, "%s", d.skip_all);
		else if (check->needs_salesforce && d.skip_salesforce != NULL)
			sfl_doctor_add(&d, check->name, SFL_DOCTOR_SKIP, "%s", d.skip_salesforce);
		else
			check->func(&d, check->name);
	}

	exit_code = sfl_doctor_exit_code(&d, counts);
	if (opts->json)
		sfl_doctor_print_json(&d, exit_code, counts);
	else
		sfl_doctor_print_table(&d, counts);
	fflush(stdout);

	g_clear_object(&d.rest);
	g_clear_object(&d.auth);
	g_clear_object(&d.sink);
	g_free(d.org_id);
	/* let cancelled transfers and finished tasks release what they hold */
	while (g_main_context_iteration(d.context, FALSE))
		;
	g_clear_object(&d.loop);
	g_clear_pointer(&d.config, sfl_config_free);
	sfl_clock_unref(d.clock);
	g_ptr_array_unref(d.rows);
	g_main_context_unref(d.context);
	return exit_code;
}
