/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestConfig"

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sfl-config.h"
#include "sfl-error.h"
#include "sfl-redact.h"
#include "sfl-test-files.h"

#define SEC G_GINT64_CONSTANT(1000000)

/* the smallest configuration that loads; tests append to it */
typedef struct {
	gchar *tmpdir;
	gchar **envp;
} Fixture;

static void
fixture_setup(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;
	fx->tmpdir = g_dir_make_tmp("sfl-test-config-XXXXXX", &error);
	g_assert_no_error(error);
	/* an explicit environment: the developer's own SF2LOKI_* must never leak in */
	fx->envp = g_environ_setenv(NULL, "HOME", "/nonexistent", TRUE);
}

static void
fixture_teardown(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(GDir) dir = g_dir_open(fx->tmpdir, 0, NULL);
	const gchar *name;
	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *path = g_build_filename(fx->tmpdir, name, NULL);
		if (g_file_test(path, G_FILE_TEST_IS_DIR))
			g_rmdir(path);
		else
			g_unlink(path);
	}
	g_rmdir(fx->tmpdir);
	g_free(fx->tmpdir);
	g_strfreev(fx->envp);
	sfl_redact_clear_secrets();
}

static void
fixture_setenv(Fixture *fx, const gchar *name, const gchar *value)
{
	fx->envp = g_environ_setenv(fx->envp, name, value, TRUE);
}

static SflConfig *
load_ok(Fixture *fx, const gchar *yaml)
{
	g_autoptr(GError) error = NULL;
	SflConfig *config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", fx->envp, &error);
	if (error != NULL)
		g_test_message("unexpected problems:\n%s", error->message);
	g_assert_no_error(error);
	g_assert_nonnull(config);
	return config;
}

/* loads, expects failure, returns the problem text */
static gchar *
load_fail(Fixture *fx, const gchar *yaml)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", fx->envp, &error);
	g_assert_null(config);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_test_message("problems:\n%s", error->message);
	return g_strdup(error->message);
}

/* one problem line starting with @path and containing @needle */
static void
assert_problem(const gchar *problems, const gchar *path, const gchar *needle)
{
	g_auto(GStrv) lines = g_strsplit(problems, "\n", -1);
	g_autofree gchar *prefix = g_strdup_printf("%s: ", path);
	for (guint i = 0; lines[i] != NULL; i++) {
		if (g_str_has_prefix(lines[i], prefix) && strstr(lines[i], needle) != NULL)
			return;
	}
	g_error("no problem '%s' mentioning '%s' in:\n%s", path, needle, problems);
}

static guint
count_lines(const gchar *text)
{
	guint n = 1;
	for (const gchar *p = text; *p != '\0'; p++)
		n += *p == '\n';
	return n;
}

/* --- defaults and the original's full shape ------------------------------------------------- */

static void
test_defaults(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(SflConfig) config = load_ok(fx, SFL_TEST_YAML_MINIMAL);
	SflConfigData *d = &config->data;

	g_assert_nonnull(d->salesforce);
	g_assert_cmpuint(d->orgs->len, ==, 0);
	g_assert_cmpstr(d->salesforce->login_url, ==, "https://login.salesforce.com");
	g_assert_cmpint(d->salesforce->environment, ==, SFL_SF_ENVIRONMENT_PRODUCTION);
	g_assert_cmpint(d->salesforce->auth_mode, ==, SFL_SF_AUTH_JWT_BEARER);
	g_assert_cmpstr(d->salesforce->api_version, ==, "60.0");
	g_assert_null(d->salesforce->org_id);
	g_assert_cmpint(d->salesforce->token_ttl, ==, 3600 * SEC);
	g_assert_false(d->salesforce->limits.enabled);
	g_assert_cmpint(d->salesforce->limits.poll_interval, ==, 300 * SEC);

	g_assert_true(d->sources.pubsub.enabled);
	g_assert_cmpstr(d->sources.pubsub.endpoint, ==, "api.pubsub.salesforce.com:7443");
	g_assert_cmpint(d->sources.pubsub.default_num_requested, ==, 100);
	g_assert_cmpint(d->sources.pubsub.replay_preset, ==, SFL_REPLAY_CUSTOM);
	g_assert_cmpuint(g_strv_length(d->sources.pubsub.topics), ==, 0);
	g_assert_cmpuint(g_strv_length(d->sources.pubsub.include), ==, 1);
	g_assert_cmpstr(d->sources.pubsub.include[0], ==, "*");
	g_assert_cmpint(d->sources.pubsub.rediscovery_interval, ==, 3600 * SEC);
	g_assert_cmpint(d->sources.pubsub.bridge_max_bytes, ==, 134217728);
	g_assert_cmpuint(d->sources.pubsub.transforms->len, ==, 0);

	g_assert_false(d->sources.eventlogfile.enabled);
	g_assert_cmpint(d->sources.eventlogfile.interval, ==, SFL_ELF_INTERVAL_HOURLY);
	g_assert_cmpint(d->sources.eventlogfile.settle_window, ==, 300 * SEC);
	g_assert_cmpint(d->sources.eventlogfile.lookback, ==, 86400 * SEC);
	g_assert_cmpint(d->sources.eventlogfile.page_size, ==, 1000);
	g_assert_cmpint(d->sources.eventlogfile.concurrency, ==, 4);
	g_assert_cmpstr(d->sources.eventlogfile.timestamp_column, ==, "TIMESTAMP_DERIVED");
	g_assert_cmpint(d->sources.apexlog.max_body_bytes, ==, 5242880);
	g_assert_cmpint(d->sources.apexlog.poll_interval, ==, 60 * SEC);
	g_assert_false(d->sources.allow_overlap);
	g_assert_null(d->sources.transform_salt);

	g_assert_cmpint(d->sink.loki.encoding, ==, SFL_LOKI_ENCODING_PROTOBUF);
	g_assert_cmpint(d->sink.loki.compression, ==, SFL_LOKI_COMPRESSION_SNAPPY);
	g_assert_null(d->sink.loki.tenant_id);
	g_assert_null(d->sink.loki.auth_token);
	g_assert_null(d->sink.loki.ca_file);
	g_assert_cmpint(d->sink.loki.batch.max_entries, ==, 1000);
	g_assert_cmpint(d->sink.loki.batch.max_bytes, ==, 1048576);
	g_assert_cmpint(d->sink.loki.batch.flush_interval, ==, SEC);
	g_assert_cmpint(d->sink.loki.batch.max_line_bytes, ==, 262144);
	g_assert_cmpint(d->sink.loki.batch.queue_maxsize, ==, 10000);
	g_assert_cmpint(d->sink.loki.batch.queue_max_bytes, ==, 268435456);
	g_assert_cmpfloat(d->sink.loki.egress.max_lines_per_second, ==, 0);
	g_assert_cmpint(d->sink.loki.egress.budget_action, ==, SFL_BUDGET_ACTION_PAUSE);

	g_assert_cmpint(d->state.store, ==, SFL_STATE_STORE_FILE);
	g_assert_cmpstr(d->state.file.path, ==, "/var/lib/sf2loki/state.json");
	g_assert_cmpstr(d->state.s3.key, ==, "sf2loki/state.json");
	g_assert_null(d->state.s3.region);
	g_assert_cmpstr(d->state.gcs.object_name, ==, "sf2loki/state.json");

	g_assert_cmpint(d->coordinate.type, ==, SFL_COORDINATE_NOOP);
	g_assert_cmpstr(d->coordinate.file_lease.path, ==, "/var/lib/sf2loki/leader.lease");
	g_assert_cmpint(d->coordinate.file_lease.ttl, ==, 30 * SEC);
	g_assert_cmpint(d->coordinate.file_lease.renew_interval, ==, 10 * SEC);
	g_assert_cmpstr(d->coordinate.k8s_lease.namespace_, ==, "default");
	g_assert_cmpstr(d->coordinate.k8s_lease.name, ==, "sf2loki-leader");

	g_assert_cmpint(d->service.log_level, ==, SFL_CONFIG_LOG_LEVEL_INFO);
	g_assert_cmpint(d->service.log_format, ==, 0);
	g_assert_cmpstr(d->service.health_addr, ==, ":8080");
	g_assert_cmpint(d->service.shutdown_grace, ==, 25 * SEC);
	g_assert_cmpint(d->service.unready_after_sink_failing, ==, 900 * SEC);
	g_assert_false(d->service.telemetry.enabled);
	g_assert_cmpint(d->service.telemetry.export_interval, ==, 60 * SEC);
}

static void
test_original_shape(Fixture *fx, gconstpointer user_data)
{
	/* every key of the original (docs/config-reference.md), as a deployment's file sets them */
	g_autofree gchar *path =
		g_test_build_filename(G_TEST_DIST, "data", "config", "original-shape.yaml", NULL);
	g_autofree gchar *original_shape = NULL;
	g_autoptr(SflConfig) config = NULL;
	SflConfigData *d = NULL;
	SflElfTypeConfig *login, *api;
	SflTransformRule *rule;
	const SflConfigPair *pair;

	g_assert_true(g_file_get_contents(path, &original_shape, NULL, NULL));
	config = load_ok(fx, original_shape);
	d = &config->data;

	/* trailing slash dropped; My Domain kept for client_credentials */
	g_assert_cmpstr(d->salesforce->login_url, ==, "https://acme.my.salesforce.com");
	g_assert_cmpint(d->salesforce->auth_mode, ==, SFL_SF_AUTH_CLIENT_CREDENTIALS);
	g_assert_cmpstr(d->salesforce->client_secret, ==, "cs-inline");
	g_assert_cmpint(d->salesforce->token_ttl, ==, 1800 * SEC);
	g_assert_cmpstr(d->salesforce->org_id, ==, "00D000000000001AAA");

	g_assert_cmpint(d->sources.pubsub.replay_preset, ==, SFL_REPLAY_EARLIEST);
	g_assert_cmpuint(g_strv_length(d->sources.pubsub.topics), ==, 2);
	g_assert_cmpint(d->sources.pubsub.bridge_max_bytes, ==, 64 * 1024 * 1024);
	g_assert_cmpuint(d->sources.pubsub.sample->len, ==, 2);
	pair = g_ptr_array_index(d->sources.pubsub.sample, 0);
	g_assert_cmpstr(pair->key, ==, "/event/Login*");
	g_assert_cmpfloat(pair->number, ==, 0.5);
	g_assert_cmpuint(d->sources.pubsub.transforms->len, ==, 5);
	rule = g_ptr_array_index(d->sources.pubsub.transforms, 4);
	g_assert_cmpint(rule->action, ==, SFL_TRANSFORM_REGEX_REPLACE);
	g_assert_cmpstr(rule->pattern, ==, "id=\\d+");
	rule = g_ptr_array_index(d->sources.pubsub.transforms, 3);
	g_assert_cmpint(rule->action, ==, SFL_TRANSFORM_DROP_ROW);
	g_assert_cmpstr(sfl_config_map_lookup(rule->match, "USER_TYPE")->value, ==, "Automated*");

	g_assert_cmpuint(d->sources.eventlog_objects.objects->len, ==, 2);
	g_assert_true(((SflEventLogObjectConfig *)g_ptr_array_index(
			       d->sources.eventlog_objects.objects, 1))
			      ->big_object);

	/* a bare string is {name: <string>} */
	g_assert_cmpuint(d->sources.eventlogfile.event_types->len, ==, 3);
	login = g_ptr_array_index(d->sources.eventlogfile.event_types, 0);
	g_assert_cmpstr(login->name, ==, "Login");
	g_assert_null(login->structured_metadata_fields);
	g_assert_cmpfloat(login->sample, ==, 1.0);
	api = g_ptr_array_index(d->sources.eventlogfile.event_types, 1);
	g_assert_cmpstr(api->structured_metadata_fields[0], ==, "USER_ID");
	g_assert_cmpstr(api->labels[0], ==, "USER_TYPE");
	/* Daily: no settle window unless set */
	g_assert_cmpint(d->sources.eventlogfile.settle_window, ==, 0);
	g_assert_cmpint(d->sources.eventlogfile.lookback, ==, 2 * 86400 * SEC);

	g_assert_cmpstr(d->sink.loki.tenant_id, ==, "123456");
	g_assert_cmpint(d->sink.loki.encoding, ==, SFL_LOKI_ENCODING_JSON);
	g_assert_cmpint(d->sink.loki.batch.flush_interval, ==, 500000);
	g_assert_cmpint(d->sink.loki.egress.daily_byte_budget, ==, G_GINT64_CONSTANT(10737418240));
	g_assert_cmpfloat(d->sink.loki.egress.max_lines_per_second, ==, 100.5);
	g_assert_cmpstr(sfl_config_map_lookup(d->sink.loki.labels, "job")->value, ==, "sf2loki");

	g_assert_cmpint(d->state.store, ==, SFL_STATE_STORE_S3);
	g_assert_cmpstr(d->state.s3.region, ==, "eu-west-1");
	g_assert_cmpint(d->coordinate.type, ==, SFL_COORDINATE_K8S_LEASE);
	g_assert_cmpint(d->coordinate.k8s_lease.lease_duration, ==, 45 * SEC);
	g_assert_cmpint(d->service.log_level, ==, SFL_CONFIG_LOG_LEVEL_WARN);
	g_assert_cmpint(d->service.unready_after_sink_failing, ==, 0);
	g_assert_cmpstr(sfl_config_map_lookup(d->service.telemetry.resource_attributes,
					      "deployment.environment")
				->value,
			==, "prod");
	g_assert_cmpstr(sfl_config_enum_name("coordinate.type", d->coordinate.type), ==,
			"k8s_lease");
}

/* --- types ---------------------------------------------------------------------------------- */

static void
test_types(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(SflConfig) c2 = NULL;
	const gchar *yaml =
		SFL_TEST_YAML_SF "sink:\n"
				 "  loki:\n"
				 "    url: http://x/push\n"
				 "    batch:\n"
				 "      flush_interval: 2\n"	   /* YAML number = seconds */
				 "      max_bytes: 4MiB\n"	   /* size string */
				 "      max_line_bytes: '1_024'\n" /* quoted int is lax */
				 "      max_entries: 2_000\n"	   /* YAML 1.1 separators */
				 "    egress: {max_bytes_per_second: 1e3}\n"
				 "    encoding: json\n"
				 "    ca_file: /etc/ssl/certs/ca-certificates.crt\n"
				 "sources:\n"
				 "  pubsub:\n"
				 "    enabled: 'off'\n"
				 "    rediscovery_interval: 1.5\n"
				 "  apexlog: {enabled: yes, users: [a.b@c.d]}\n"
				 "service:\n"
				 "  log_level: DEBUG\n"
				 "  shutdown_grace: PT1M\n";

	c2 = load_ok(fx, yaml);
	g_assert_cmpint(c2->data.sink.loki.batch.flush_interval, ==, 2 * SEC);
	g_assert_cmpstr(c2->data.sink.loki.ca_file, ==, "/etc/ssl/certs/ca-certificates.crt");
	g_assert_cmpint(c2->data.sink.loki.batch.max_bytes, ==, 4 * 1024 * 1024);
	g_assert_cmpint(c2->data.sink.loki.batch.max_line_bytes, ==, 1024);
	g_assert_cmpint(c2->data.sink.loki.batch.max_entries, ==, 2000);
	g_assert_cmpfloat(c2->data.sink.loki.egress.max_bytes_per_second, ==, 1000.0);
	g_assert_false(c2->data.sources.pubsub.enabled);
	g_assert_cmpint(c2->data.sources.pubsub.rediscovery_interval, ==, 1500000);
	g_assert_true(c2->data.sources.apexlog.enabled);
	g_assert_cmpint(c2->data.service.log_level, ==, SFL_CONFIG_LOG_LEVEL_DEBUG);
	g_assert_cmpint(c2->data.service.shutdown_grace, ==, 60 * SEC);
}

static void
test_yaml_anchors(Fixture *fx, gconstpointer user_data)
{
	const gchar *yaml = SFL_TEST_YAML_MINIMAL
		"sources:\n"
		"  eventlog_objects:\n"
		"    enabled: true\n"
		"    objects:\n"
		"      - &base {name: LoginEvent, poll_interval: 2m, lookback: 3h}\n"
		"      - <<: *base\n"
		"        name: ApiEvent\n";
	g_autoptr(SflConfig) config = load_ok(fx, yaml);
	GPtrArray *objects = config->data.sources.eventlog_objects.objects;
	SflEventLogObjectConfig *second;

	g_assert_cmpuint(objects->len, ==, 2);
	second = g_ptr_array_index(objects, 1);
	g_assert_cmpstr(second->name, ==, "ApiEvent");
	g_assert_cmpint(second->poll_interval, ==, 120 * SEC);
	g_assert_cmpint(second->lookback, ==, 3 * 3600 * SEC);
}

/* --- error shapes --------------------------------------------------------------------------- */

static void
test_unknown_key(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p = load_fail(fx, SFL_TEST_YAML_MINIMAL "    batch:\n"
								  "      max_entires: 5\n"
								  "bogus_section: {}\n");
	assert_problem(p, "sink.loki.batch.max_entires", "unknown configuration key");
	assert_problem(p, "sink.loki.batch.max_entires", "[test.yaml:9:7]");
	assert_problem(p, "bogus_section", "[test.yaml:10:1]");
}

static void
test_wrong_type(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p = load_fail(fx, SFL_TEST_YAML_MINIMAL
					"    batch: {max_entries: lots}\n"
					"    labels: [job]\n"
					"    tenant_id: [a, b]\n"
					"sources:\n"
					"  pubsub: {topics: /event/A, enabled: maybe}\n");
	assert_problem(p, "sink.loki.batch.max_entries", "expected an integer, got 'lots'");
	assert_problem(p, "sink.loki.labels", "expected a mapping of strings");
	assert_problem(p, "sink.loki.tenant_id", "expected a string");
	assert_problem(p, "sources.pubsub.topics", "expected a list of strings");
	assert_problem(p, "sources.pubsub.enabled", "expected a boolean");
	g_assert_cmpuint(count_lines(p), ==, 5);
}

static void
test_bad_duration(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p =
		load_fail(fx, SFL_TEST_YAML_MINIMAL "    batch: {flush_interval: soon}\n"
						    "service:\n"
						    "  shutdown_grace: '30'\n"
						    "  unready_after_sink_failing: -5\n");
	assert_problem(p, "sink.loki.batch.flush_interval", "invalid duration 'soon'");
	assert_problem(p, "service.shutdown_grace", "needs a unit, e.g. '30s'");
	assert_problem(p, "service.unready_after_sink_failing", "must not be negative");
}

static void
test_bad_enum(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p =
		load_fail(fx, SFL_TEST_YAML_MINIMAL "    encoding: xml\n"
						    "coordinate: {type: etcd}\n"
						    "sources: {pubsub: {replay_preset: latest}}\n");
	assert_problem(p, "sink.loki.encoding", "must be one of: protobuf, json (got 'xml')");
	assert_problem(p, "coordinate.type", "got 'etcd'");
	/* the original's Literal is case-sensitive here */
	assert_problem(p, "sources.pubsub.replay_preset", "got 'latest'");
}

static void
test_out_of_range(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p =
		load_fail(fx, SFL_TEST_YAML_MINIMAL "    batch: {queue_maxsize: 99}\n"
						    "sources:\n"
						    "  pubsub:\n"
						    "    default_num_requested: 101\n"
						    "    sample: {'*': 1.5}\n"
						    "  apexlog: {sample: 0, max_body_bytes: 0}\n"
						    "  eventlogfile: {concurrency: 0}\n");
	assert_problem(p, "sink.loki.batch.queue_maxsize", "must be at least 100 (got 99)");
	assert_problem(p, "sources.pubsub.default_num_requested", "must be at most 100 (got 101)");
	assert_problem(p, "sources.pubsub.sample.*", "must be at most 1");
	assert_problem(p, "sources.apexlog.sample", "must be greater than 0");
	assert_problem(p, "sources.apexlog.max_body_bytes", "must be greater than 0");
	assert_problem(p, "sources.eventlogfile.concurrency", "must be at least 1");
}

static void
test_token_ttl_lower_bound(Fixture *fx, gconstpointer user_data)
{
	/* below the 60 s refresh skew a token would be refreshed forever (SFL-0053) */
	g_autofree gchar *p =
		load_fail(fx, SFL_TEST_YAML_SF "  token_ttl: 60s\n" SFL_TEST_YAML_SINK);
	g_autoptr(SflConfig) ok =
		load_ok(fx, SFL_TEST_YAML_SF "  token_ttl: 2m\n" SFL_TEST_YAML_SINK);
	assert_problem(p, "salesforce.token_ttl", "must be at least 120");
	g_assert_cmpint(ok->data.salesforce->token_ttl, ==, 120 * SEC);
}

static void
test_interpolation(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(SflConfig) config = NULL;
	g_autofree gchar *p = NULL;
	const gchar *yaml = SFL_TEST_YAML_SF "sink:\n"
					     "  loki:\n"
					     "    url: ${LOKI_SCHEME}://${LOKI_HOST}/push\n"
					     "    tenant_id: '${EMPTY}'\n"
					     "    labels: {job: '${JOB}'}\n"
					     "    batch: {max_entries: '${N}'}\n";

	fixture_setenv(fx, "LOKI_SCHEME", "https");
	fixture_setenv(fx, "LOKI_HOST", "loki.example.com");
	fixture_setenv(fx, "EMPTY", "");
	fixture_setenv(fx, "JOB", "sfl");
	fixture_setenv(fx, "N", "250");
	config = load_ok(fx, yaml);
	g_assert_cmpstr(config->data.sink.loki.url, ==, "https://loki.example.com/push");
	/* set but empty interpolates to "" */
	g_assert_cmpstr(config->data.sink.loki.tenant_id, ==, "");
	g_assert_cmpstr(sfl_config_map_lookup(config->data.sink.loki.labels, "job")->value, ==,
			"sfl");
	g_assert_cmpint(config->data.sink.loki.batch.max_entries, ==, 250);

	fx->envp = g_environ_unsetenv(fx->envp, "LOKI_HOST");
	p = load_fail(fx, yaml);
	assert_problem(p, "sink.loki.url",
		       "config references undefined environment variable ${LOKI_HOST}");
	assert_problem(p, "sink.loki.url", "[test.yaml:7:10]");
}

static void
test_interpolation_not_in_env_values(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(SflConfig) config = NULL;

	/* environment override values are taken literally */
	fixture_setenv(fx, "SF2LOKI_SINK__LOKI__TENANT_ID", "${NOT_SET}");
	config = load_ok(fx, SFL_TEST_YAML_MINIMAL);
	g_assert_cmpstr(config->data.sink.loki.tenant_id, ==, "${NOT_SET}");
}

/* --- secrets -------------------------------------------------------------------------------- */

static void
test_secret_file(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *key =
		sfl_test_write_file(fx->tmpdir, "key.pem", "\n  -----KEY-----  \n\n");
	g_autofree gchar *yaml = g_strdup_printf("salesforce:\n"
						 "  client_id: cid\n"
						 "  username: u\n"
						 "  private_key_file: %s\n" SFL_TEST_YAML_SINK,
						 key);
	g_autoptr(SflConfig) config = load_ok(fx, yaml);
	g_autofree gchar *masked = NULL;

	/* read and stripped */
	g_assert_cmpstr(config->data.salesforce->private_key, ==, "-----KEY-----");
	/* and from now on masked wherever it might be logged */
	masked = sfl_redact("key is -----KEY----- here");
	g_assert_null(strstr(masked, "-----KEY-----"));
}

static void
test_secret_file_unreadable(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *missing = g_build_filename(fx->tmpdir, "missing.pem", NULL);
	g_autofree gchar *yaml = g_strdup_printf("salesforce:\n"
						 "  client_id: cid\n"
						 "  username: u\n"
						 "  private_key_file: %s\n" SFL_TEST_YAML_SINK
						 "    auth_token_file: %s\n",
						 missing, fx->tmpdir);
	g_autofree gchar *p = load_fail(fx, yaml);

	assert_problem(p, "salesforce.private_key_file", missing);
	assert_problem(p, "salesforce.private_key_file", "No such file or directory");
	assert_problem(p, "salesforce.private_key_file", "[test.yaml:4:21]");
	/* a directory is an I/O error too, not "absent" */
	assert_problem(p, "sink.loki.auth_token_file", fx->tmpdir);
	/* the read error is the one problem; "required" is not piled on top */
	g_assert_cmpuint(count_lines(p), ==, 2);
}

static void
test_secret_file_permission(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *key = sfl_test_write_file(fx->tmpdir, "key.pem", "secret");
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *p = NULL;

	gboolean was_root = geteuid() == 0;

	g_chmod(key, 0);
	/* root reads anything: act as nobody (effective uid only, so cleanup can return) */
	g_chmod(fx->tmpdir, 0711);
	if (was_root && seteuid(65534) != 0) {
		g_test_skip("cannot drop to uid 65534 to provoke a permission error");
		return;
	}
	yaml = g_strdup_printf(SFL_TEST_YAML_SINK "salesforce:\n"
						  "  client_id: cid\n"
						  "  username: u\n"
						  "  private_key_file: %s\n",
			       key);
	p = load_fail(fx, yaml);
	if (was_root)
		g_assert_cmpint(seteuid(0), ==, 0);
	assert_problem(p, "salesforce.private_key_file", "permission denied");
	assert_problem(p, "salesforce.private_key_file", "group-readable");
}

static void
test_secret_blank_file(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *key = sfl_test_write_file(fx->tmpdir, "blank.pem", " \n\t\n");
	g_autofree gchar *yaml = g_strdup_printf("salesforce:\n"
						 "  client_id: cid\n"
						 "  username: u\n"
						 "  private_key_file: %s\n" SFL_TEST_YAML_SINK,
						 key);
	g_autofree gchar *p = load_fail(fx, yaml);
	assert_problem(p, "salesforce.private_key", "required for auth_mode jwt_bearer");
	assert_problem(p, "salesforce.private_key", "count as absent");
}

static void
test_secret_blank_inline_shadowing(Fixture *fx, gconstpointer user_data)
{
	/* a blank inline value must not hide a good file (SFL-0047) */
	g_autofree gchar *key = sfl_test_write_file(fx->tmpdir, "key.pem", "real-key");
	g_autofree gchar *yaml = g_strdup_printf("salesforce:\n"
						 "  client_id: cid\n"
						 "  username: u\n"
						 "  private_key: '   '\n"
						 "  private_key_file: %s\n" SFL_TEST_YAML_SINK,
						 key);
	g_autoptr(SflConfig) config = load_ok(fx, yaml);
	g_autofree gchar *p = NULL;

	g_assert_cmpstr(config->data.salesforce->private_key, ==, "real-key");

	/* blank from the environment counts as absent too */
	fixture_setenv(fx, "SF2LOKI_SALESFORCE__PRIVATE_KEY", "");
	{
		g_autoptr(SflConfig) again = load_ok(fx, yaml);
		g_assert_cmpstr(again->data.salesforce->private_key, ==, "real-key");
	}
	/* and with no file behind it, a blank required secret is fatal */
	p = load_fail(fx, "salesforce:\n"
			  "  client_id: cid\n"
			  "  username: u\n"
			  "  private_key: ''\n" SFL_TEST_YAML_SINK);
	assert_problem(p, "salesforce.private_key", "required");
}

static void
test_secret_inline_wins(Fixture *fx, gconstpointer user_data)
{
	/* the inline value wins and the file is never read, so a missing file is no error */
	g_autoptr(SflConfig) config =
		load_ok(fx, SFL_TEST_YAML_MINIMAL "    auth_token: tok-inline\n"
						  "    auth_token_file: /nonexistent/tok\n");
	g_assert_cmpstr(config->data.sink.loki.auth_token, ==, "tok-inline");
}

static void
test_secret_required_by_mode(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p =
		load_fail(fx, "salesforce:\n"
			      "  client_id: cid\n"
			      "  auth_mode: client_credentials\n" SFL_TEST_YAML_SINK "orgs: []\n");
	assert_problem(p, "salesforce.client_secret", "required for auth_mode client_credentials");
	assert_problem(p, "salesforce.login_url", "My Domain");
}

static void
test_secrets_never_echoed(Fixture *fx, gconstpointer user_data)
{
	const gchar *marker = "Zq9-S3cr3t-Marker";
	g_autofree gchar *yaml =
		g_strdup_printf("salesforce:\n"
				"  client_id: cid\n"
				"  username: u\n"
				"  private_key: %s-pk\n"
				"sink:\n"
				"  loki:\n"
				"    url: https://user:%s-url@loki.example.com/push\n"
				"    auth_token: [%s-wrongtype]\n"
				"    batch: {max_entries: x}\n"
				"service: {health_addr: 'https://user:%s-addr@host'}\n",
				marker, marker, marker, marker);
	g_autofree gchar *p = load_fail(fx, yaml);

	g_assert_null(strstr(p, marker));
	assert_problem(p, "sink.loki.auth_token", "expected a string");
	assert_problem(p, "service.health_addr", "expected host:port");
}

/* --- environment overrides ------------------------------------------------------------------ */

static void
test_env_precedence(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(SflConfig) config = NULL;

	fixture_setenv(fx, "SF2LOKI_SINK__LOKI__URL", "https://env.example.com/push");
	/* names are case-insensitive after the prefix */
	fixture_setenv(fx, "SF2LOKI_Sink__Loki__Batch__Max_Entries", "42");
	fixture_setenv(fx, "SF2LOKI_SERVICE__SHUTDOWN_GRACE", "5s");
	/* not ours: an unknown top-level variable is ignored */
	fixture_setenv(fx, "SF2LOKI_CONFIG", "/etc/whatever.yaml");
	config =
		load_ok(fx, SFL_TEST_YAML_MINIMAL "    batch: {max_entries: 7, max_bytes: 2048}\n");

	g_assert_cmpstr(config->data.sink.loki.url, ==, "https://env.example.com/push");
	g_assert_cmpint(config->data.sink.loki.batch.max_entries, ==, 42);
	/* env wins per leaf: the file's sibling survives */
	g_assert_cmpint(config->data.sink.loki.batch.max_bytes, ==, 2048);
	g_assert_cmpint(config->data.service.shutdown_grace, ==, 5 * SEC);
}

static void
test_env_json(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(SflConfig) config = NULL;
	g_autofree gchar *p = NULL;

	fixture_setenv(fx, "SF2LOKI_SOURCES__PUBSUB__TOPICS", "[\"/event/A\", \"/event/B\"]");
	fixture_setenv(fx, "SF2LOKI_SINK__LOKI__LABELS", "{\"job\": \"from-env\"}");
	fixture_setenv(fx, "SF2LOKI_SOURCES__EVENTLOGFILE",
		       "{\"enabled\": true, \"event_types\": [\"Login\"]}");
	config = load_ok(fx, SFL_TEST_YAML_MINIMAL "sources: {pubsub: {topics: [/event/File]}}\n");
	g_assert_cmpuint(g_strv_length(config->data.sources.pubsub.topics), ==, 2);
	g_assert_cmpstr(config->data.sources.pubsub.topics[1], ==, "/event/B");
	g_assert_cmpstr(sfl_config_map_lookup(config->data.sink.loki.labels, "job")->value, ==,
			"from-env");
	g_assert_true(config->data.sources.eventlogfile.enabled);

	fixture_setenv(fx, "SF2LOKI_SOURCES__PUBSUB__TOPICS", "[\"/event/A\"");
	p = load_fail(fx, SFL_TEST_YAML_MINIMAL);
	assert_problem(p, "sources.pubsub.topics", "env SF2LOKI_SOURCES__PUBSUB__TOPICS");
	assert_problem(p, "sources.pubsub.topics", "invalid JSON");
}

static void
test_env_unknown_nested(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p = NULL;

	fixture_setenv(fx, "SF2LOKI_SINK__LOKI__URLL", "http://typo");
	fixture_setenv(fx, "SF2LOKI_SINK__LOKI__URL__HOST", "x");
	p = load_fail(fx, SFL_TEST_YAML_MINIMAL);
	assert_problem(p, "sink.loki.urll", "unknown configuration key");
	assert_problem(p, "sink.loki.urll", "env SF2LOKI_SINK__LOKI__URLL");
	assert_problem(p, "sink.loki.url", "not a mapping");
}

static void
test_env_type_error_names_variable(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p = NULL;
	fixture_setenv(fx, "SF2LOKI_SINK__LOKI__BATCH__FLUSH_INTERVAL", "30");
	p = load_fail(fx, SFL_TEST_YAML_MINIMAL);
	assert_problem(p, "sink.loki.batch.flush_interval", "needs a unit");
	assert_problem(p, "sink.loki.batch.flush_interval",
		       "[env SF2LOKI_SINK__LOKI__BATCH__FLUSH_INTERVAL]");
}

/* --- cross-field rules ---------------------------------------------------------------------- */

static void
test_cross_field(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p =
		load_fail(fx, SFL_TEST_YAML_MINIMAL
			  "    labels: {job: a, source: b, team: c}\n"
			  "coordinate:\n"
			  "  file_lease: {ttl: 20s, renew_interval: 10s}\n"
			  "  k8s_lease: {lease_duration: 15s}\n"
			  "state: {store: gcs}\n"
			  "service:\n"
			  "  telemetry: {enabled: true, endpoint: 'https://otlp/v1/metrics'}\n"
			  "sources:\n"
			  "  eventlogfile:\n"
			  "    enabled: true\n"
			  "    event_types: [{name: Login, labels: [USER_TYPE, org]}]\n"
			  "    transforms: [{action: drop_field, fields: [USER_TYPE]}]\n"
			  "  pubsub:\n"
			  "    transforms:\n"
			  "      - {action: regex_replace, fields: [A], pattern: '(unclosed'}\n"
			  "      - {action: drop_row, fields: [A]}\n"
			  "      - {action: hash}\n"
			  "      - {action: mask, fields: [A], pattern: x}\n");

	/* checked whatever coordinator is selected */
	assert_problem(p, "coordinate.file_lease.renew_interval",
		       "2 x renew_interval (10s) must be less than ttl (20s)");
	assert_problem(p, "coordinate.k8s_lease.renew_interval",
		       "must be less than lease_duration (15s)");
	assert_problem(p, "state.gcs.bucket", "required when state.store is gcs");
	assert_problem(p, "sink.loki.labels", "disallowed label keys: source, team");
	assert_problem(p, "service.telemetry", "with auth 'basic' needs a user and a token");
	assert_problem(p, "sources.eventlogfile.event_types[0].labels[1]", "reserved label");
	assert_problem(p, "sources.eventlogfile.transforms[0]", "drop_field removes 'USER_TYPE'");
	assert_problem(p, "sources.pubsub.transforms[0].pattern", "does not compile");
	assert_problem(p, "sources.pubsub.transforms[1]", "drop_row needs a non-empty match");
	assert_problem(p, "sources.pubsub.transforms[1]", "drop_row takes match, not fields");
	assert_problem(p, "sources.pubsub.transforms[2]", "hash needs a non-empty fields list");
	assert_problem(p, "sources.pubsub.transforms[3]", "only allowed with regex_replace");
}

static void
test_telemetry_inherits_loki_credentials(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(SflConfig) config =
		load_ok(fx, SFL_TEST_YAML_MINIMAL
			"    tenant_id: '42'\n"
			"    auth_token: tok\n"
			"service:\n"
			"  telemetry: {enabled: true, endpoint: 'https://otlp/v1/metrics'}\n");
	g_assert_true(config->data.service.telemetry.enabled);
}

static void
test_elf_requires_types(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p =
		load_fail(fx, SFL_TEST_YAML_MINIMAL
			  "sources: {eventlogfile: {enabled: true, event_types: [Bad-Name]}}\n");
	assert_problem(p, "sources.eventlogfile.event_types[0].name", "does not match");
	g_free(g_steal_pointer(&p));
	p = load_fail(fx, SFL_TEST_YAML_MINIMAL "sources: {eventlogfile: {enabled: true}}\n");
	assert_problem(p, "sources.eventlogfile.event_types", "at least one EventType");
}

static void
test_topology(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *both =
		load_fail(fx, SFL_TEST_YAML_MINIMAL "orgs:\n"
						    "  - name: a\n"
						    "    salesforce: {client_id: c, username: u, "
						    "private_key: k}\n");
	g_autofree gchar *neither = load_fail(fx, SFL_TEST_YAML_SINK);
	g_autofree gchar *multi_bad = load_fail(
		fx, SFL_TEST_YAML_SINK "    labels: {org: x}\n"
				       "sources: {allow_overlap: true}\n"
				       "orgs:\n"
				       "  - {name: a, salesforce: {client_id: c, username: u, "
				       "private_key: k}}\n"
				       "  - {name: a, salesforce: {client_id: c, username: u, "
				       "private_key: k}}\n"
				       "  - {name: 'b c', salesforce: {client_id: c}}\n");
	g_autoptr(SflConfig) multi = NULL;

	assert_problem(both, "salesforce", "not both");
	assert_problem(neither, "salesforce", "field required");
	assert_problem(multi_bad, "orgs[1].name", "duplicate org name 'a'");
	assert_problem(multi_bad, "orgs[2].name", "does not match");
	assert_problem(multi_bad, "orgs[2].salesforce.username", "required");
	assert_problem(multi_bad, "sources", "per org");
	assert_problem(multi_bad, "sink.loki.labels", "'org' is set per org");

	multi = load_ok(fx, SFL_TEST_YAML_SINK
			"orgs:\n"
			"  - name: prod\n"
			"    salesforce: {client_id: c, username: u, private_key: k}\n"
			"    sources: {pubsub: {topics: ['/event/LoginEventStream']}}\n"
			"  - name: sandbox\n"
			"    salesforce:\n"
			"      {client_id: c, username: u, private_key: k, "
			"environment: sandbox}\n");
	g_assert_null(multi->data.salesforce);
	g_assert_cmpuint(multi->data.orgs->len, ==, 2);
	g_assert_cmpstr(
		((SflOrgConfig *)g_ptr_array_index(multi->data.orgs, 1))->salesforce.login_url, ==,
		"https://test.salesforce.com");
}

/* --- YAML problems -------------------------------------------------------------------------- */

static void
test_yaml_errors(Fixture *fx, gconstpointer user_data)
{
	const struct {
		const gchar *yaml;
		const gchar *needle;
	} cases[] = {
		{ "salesforce:\n  client_id: [unclosed\n", "test.yaml:3:1: invalid YAML" },
		{ "a: 1\nb: 2\na: 3\n", "test.yaml:3:1: duplicate key 'a'" },
		{ "- just\n- a list\n", "top level of the configuration must be a mapping" },
		{ "a: 1\n---\nb: 2\n", "only one YAML document" },
		{ "a: *nowhere\n", "unknown alias" },
		{ "salesforce:\n\tclient_id: x\n", "invalid YAML" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *p = load_fail(fx, cases[i].yaml);
		if (strstr(p, cases[i].needle) == NULL)
			g_error("case %" G_GSIZE_FORMAT ": '%s' not in '%s'", i, cases[i].needle,
				p);
	}
}

static void
test_yaml_limits(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(GString) deep = g_string_new(NULL);
	g_autofree gchar *p1 = NULL;
	g_autofree gchar *p2 = NULL;

	for (guint i = 0; i < 200; i++)
		g_string_append_c(deep, '[');
	p1 = load_fail(fx, deep->str);
	g_assert_nonnull(strstr(p1, "nesting deeper than"));

	/* exponential alias expansion is refused, not followed */
	{
		g_autoptr(GString) bomb = g_string_new("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
		for (guint i = 1; i < 12; i++)
			g_string_append_printf(bomb,
					       "l%u: &l%u [*l%u, *l%u, *l%u, *l%u, *l%u, *l%u, "
					       "*l%u, *l%u, *l%u, *l%u]\n",
					       i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
					       i - 1, i - 1, i - 1, i - 1);
		p2 = load_fail(fx, bomb->str);
		g_assert_nonnull(strstr(p2, "alias expansion"));
	}
}

/* the inputs the fuzzer (or a review) once broke the loader with, replayed on every run */
static void
test_fuzz_regressions(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *dir = g_test_build_filename(G_TEST_DIST, "fuzz", "crashes", NULL);
	g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
	const gchar *name;
	guint replayed = 0;

	g_assert_nonnull(listing);
	while ((name = g_dir_read_name(listing)) != NULL) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		g_autofree gchar *data = NULL;
		gsize len = 0;
		g_autoptr(GError) error = NULL;
		g_autoptr(SflConfig) config = NULL;

		if (!g_str_has_prefix(name, "config-"))
			continue;
		g_assert_true(g_file_get_contents(path, &data, &len, NULL));
		/* a verdict either way is fine; a crash or a hang is not */
		config = sfl_config_load_from_data(data, len, name, fx->envp, &error);
		g_assert_true(config != NULL || error != NULL);
		replayed++;
	}
	g_assert_cmpuint(replayed, >, 0);
}

static void
test_yaml_large_merge(Fixture *fx, gconstpointer user_data)
{
	/* 6000 keys merged 30 times: linear work, not keys squared per alias */
	g_autoptr(GString) yaml = g_string_new("big: &a {");
	g_autofree gchar *p = NULL;

	for (guint i = 0; i < 6000; i++)
		g_string_append_printf(yaml, "%sk%u: %u", i ? ", " : "", i, i);
	g_string_append(yaml, "}\nmerged:\n  <<: [");
	for (guint i = 0; i < 30; i++)
		g_string_append_printf(yaml, "%s*a", i ? ", " : "");
	g_string_append(yaml, "]\n");
	p = load_fail(fx, yaml->str);
	assert_problem(p, "big", "unknown configuration key");
	assert_problem(p, "merged", "unknown configuration key");
}

static void
test_secret_file_fifo(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *fifo = g_build_filename(fx->tmpdir, "key.fifo", NULL);
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *p = NULL;

	/* reading a pipe nobody writes would hang `check` forever */
	g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
	yaml = g_strdup_printf("salesforce:\n"
			       "  client_id: cid\n"
			       "  username: u\n"
			       "  private_key_file: %s\n" SFL_TEST_YAML_SINK,
			       fifo);
	p = load_fail(fx, yaml);
	assert_problem(p, "salesforce.private_key_file", "pipe or socket");
}

static void
test_empty_document(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *p = load_fail(fx, "");
	assert_problem(p, "sink", "field required");
	assert_problem(p, "salesforce", "field required");
}

static void
test_load_file(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *path = sfl_test_write_file(fx->tmpdir, "c.yaml", SFL_TEST_YAML_MINIMAL);
	g_autofree gchar *missing = g_build_filename(fx->tmpdir, "nope.yaml", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = sfl_config_load(path, fx->envp, &error);
	g_autoptr(SflConfig) none = NULL;

	g_assert_no_error(error);
	g_assert_cmpstr(config->path, ==, path);
	none = sfl_config_load(missing, fx->envp, &error);
	g_assert_null(none);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "cannot read config file"));
	g_assert_nonnull(strstr(error->message, missing));
}

/* --- generated artifacts -------------------------------------------------------------------- */

static void
assert_same_text(const gchar *committed, const gchar *generated, const gchar *what)
{
	if (g_strcmp0(committed, generated) == 0)
		return;
	g_error("%s has drifted from the schema tables; regenerate it with "
		"`sf2loki config %s` (see README)",
		what, g_str_has_suffix(what, ".md") ? "reference" : "example");
}

static void
test_example_drift(void)
{
	g_autofree gchar *committed = sfl_test_read_source_file("config.example.yaml");
	g_autofree gchar *generated = sfl_config_render_example();
	assert_same_text(committed, generated, "config.example.yaml");
}

static void
test_reference_drift(void)
{
	g_autofree gchar *committed = sfl_test_read_source_file("docs/config-reference.md");
	g_autofree gchar *generated = sfl_config_render_reference();
	assert_same_text(committed, generated, "docs/config-reference.md");
}

static void
test_example_loads(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *example = sfl_config_render_example();
	g_autofree gchar *key = sfl_test_write_file(fx->tmpdir, "key.pem", "key-material");
	g_autoptr(SflConfig) config = NULL;
	g_autofree gchar *p = NULL;

	p = load_fail(fx, example);
	assert_problem(p, "salesforce.client_id", "${SF_CLIENT_ID}");

	fixture_setenv(fx, "SF_CLIENT_ID", "cid");
	fixture_setenv(fx, "SF_USERNAME", "integration@example.com");
	fixture_setenv(fx, "SF_PRIVATE_KEY_FILE", key);
	fixture_setenv(fx, "LOKI_URL", "http://127.0.0.1:3100/loki/api/v1/push");
	config = load_ok(fx, example);
	g_assert_cmpstr(config->data.salesforce->private_key, ==, "key-material");
	g_assert_cmpuint(g_strv_length(config->data.sources.pubsub.topics), ==, 2);
	/* the example's commented alternatives stay inactive */
	g_assert_cmpuint(config->data.orgs->len, ==, 0);
	g_assert_cmpuint(config->data.sources.pubsub.transforms->len, ==, 0);
}

static void
test_reference_mentions_every_key(void)
{
	g_autofree gchar *reference = sfl_config_render_reference();
	const gchar *keys[] = { "`login_url`",
				"`token_ttl`",
				"`default_num_requested`",
				"`max_catchup_records`",
				"`settle_window`",
				"`queue_max_bytes`",
				"`budget_action`",
				"`endpoint_url`",
				"`lease_duration`",
				"`unready_after_sink_failing`",
				"`resource_attributes`",
				"*(secret)*",
				"## TransformRule" };
	for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
		if (strstr(reference, keys[i]) == NULL)
			g_error("reference lacks %s", keys[i]);
	}
}

#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_setup, func, fixture_teardown)

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	ADD("/sfl/config/defaults", test_defaults);
	ADD("/sfl/config/original-shape", test_original_shape);
	ADD("/sfl/config/types", test_types);
	ADD("/sfl/config/yaml-anchors", test_yaml_anchors);
	ADD("/sfl/config/error/unknown-key", test_unknown_key);
	ADD("/sfl/config/error/wrong-type", test_wrong_type);
	ADD("/sfl/config/error/bad-duration", test_bad_duration);
	ADD("/sfl/config/error/bad-enum", test_bad_enum);
	ADD("/sfl/config/error/out-of-range", test_out_of_range);
	ADD("/sfl/config/error/token-ttl", test_token_ttl_lower_bound);
	ADD("/sfl/config/interpolation", test_interpolation);
	ADD("/sfl/config/interpolation/not-env", test_interpolation_not_in_env_values);
	ADD("/sfl/config/secret/file", test_secret_file);
	ADD("/sfl/config/secret/unreadable", test_secret_file_unreadable);
	ADD("/sfl/config/secret/permission", test_secret_file_permission);
	ADD("/sfl/config/secret/blank-file", test_secret_blank_file);
	ADD("/sfl/config/secret/blank-inline", test_secret_blank_inline_shadowing);
	ADD("/sfl/config/secret/inline-wins", test_secret_inline_wins);
	ADD("/sfl/config/secret/required-by-mode", test_secret_required_by_mode);
	ADD("/sfl/config/secret/never-echoed", test_secrets_never_echoed);
	ADD("/sfl/config/env/precedence", test_env_precedence);
	ADD("/sfl/config/env/json", test_env_json);
	ADD("/sfl/config/env/unknown-nested", test_env_unknown_nested);
	ADD("/sfl/config/env/type-error", test_env_type_error_names_variable);
	ADD("/sfl/config/cross-field", test_cross_field);
	ADD("/sfl/config/telemetry-inherits", test_telemetry_inherits_loki_credentials);
	ADD("/sfl/config/elf-types", test_elf_requires_types);
	ADD("/sfl/config/topology", test_topology);
	ADD("/sfl/config/yaml/errors", test_yaml_errors);
	ADD("/sfl/config/yaml/limits", test_yaml_limits);
	ADD("/sfl/config/yaml/empty", test_empty_document);
	ADD("/sfl/config/yaml/large-merge", test_yaml_large_merge);
	ADD("/sfl/config/yaml/fuzz-regressions", test_fuzz_regressions);
	ADD("/sfl/config/secret/fifo", test_secret_file_fifo);
	ADD("/sfl/config/file", test_load_file);
	ADD("/sfl/config/example/loads", test_example_loads);
	g_test_add_func("/sfl/config/example/drift", test_example_drift);
	g_test_add_func("/sfl/config/reference/drift", test_reference_drift);
	g_test_add_func("/sfl/config/reference/keys", test_reference_mentions_every_key);
	return g_test_run();
}
