/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestConfigGSettings"

#include "config.h"

#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gsettingsbackend.h>

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

#include "sfl-config-gsettings.h"
#include "sfl-config-leaves.h"
#include "sfl-config.h"
#include "sfl-redact.h"
#include "sfl-test-files.h"

/*
 * GSettings as a configuration layer (docs/configuration.md): the generated schema, the
 * keyfile backend between YAML and the environment, errors naming schema and key, the
 * `config dump --origin` output of the real binary, and a dconf database with a lock.
 */

typedef struct {
	gchar *tmpdir;
	gchar *keyfile;
	gchar **envp;
} Fixture;

static void
rm_rf(const gchar *path)
{
	if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
		g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
		const gchar *name;
		while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
			g_autofree gchar *child = g_build_filename(path, name, NULL);
			rm_rf(child);
		}
		g_rmdir(path);
	} else {
		g_unlink(path);
	}
}

static void
fixture_setup(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;
	const gchar *schemas = g_getenv("SFL_GSETTINGS_SCHEMA_DIR");

	g_assert_nonnull(schemas);
	fx->tmpdir = g_dir_make_tmp("sfl-test-gsettings-XXXXXX", &error);
	g_assert_no_error(error);
	fx->keyfile = g_build_filename(fx->tmpdir, "sf2loki.ini", NULL);
	/* an explicit environment: the developer's own SF2LOKI_* or DCONF_PROFILE never leak in */
	fx->envp = g_environ_setenv(NULL, "HOME", "/nonexistent", TRUE);
	fx->envp = g_environ_setenv(fx->envp, "GSETTINGS_SCHEMA_DIR", schemas, TRUE);
}

static void
fixture_teardown(Fixture *fx, gconstpointer user_data)
{
	rm_rf(fx->tmpdir);
	g_free(fx->tmpdir);
	g_free(fx->keyfile);
	g_strfreev(fx->envp);
	sfl_redact_clear_secrets();
}

/* YAML naming the fixture's keyfile, then @rest */
static gchar *
fixture_yaml(Fixture *fx, const gchar *rest)
{
	return g_strdup_printf(SFL_TEST_YAML_SF "service:\n  gsettings_keyfile: '%s'\n%s",
			       fx->keyfile, rest);
}

static GSettings *
fixture_settings(Fixture *fx, GSettingsBackend *backend, const gchar *id)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSettingsSchemaSource) source = g_settings_schema_source_new_from_directory(
		g_getenv("SFL_GSETTINGS_SCHEMA_DIR"), NULL, TRUE, &error);
	g_autoptr(GSettingsSchema) schema = NULL;

	g_assert_no_error(error);
	schema = g_settings_schema_source_lookup(source, id, FALSE);
	g_assert_nonnull(schema);
	return g_settings_new_full(schema, backend, NULL);
}

/* writes through GSettings itself, so the test proves the layer reads what GSettings wrote */
static void
fixture_set(Fixture *fx, const gchar *id, const gchar *key, GVariant *value)
{
	g_autoptr(GSettingsBackend) backend = g_keyfile_settings_backend_new(
		fx->keyfile, SFL_GSETTINGS_SCHEMA_PATH, SFL_GSETTINGS_KEYFILE_ROOT_GROUP);
	g_autoptr(GSettings) settings = fixture_settings(fx, backend, id);

	g_assert_true(g_settings_set_value(settings, key, value));
	g_settings_sync();
	g_assert_true(g_file_test(fx->keyfile, G_FILE_TEST_EXISTS));
}

static SflConfig *
load_ok(Fixture *fx, const gchar *yaml)
{
	g_autoptr(GError) error = NULL;
	SflConfig *config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", fx->envp, &error);
	g_assert_no_error(error);
	g_assert_nonnull(config);
	return config;
}

static gchar *
load_fail(Fixture *fx, const gchar *yaml)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", fx->envp, &error);
	g_assert_null(config);
	g_assert_nonnull(error);
	return g_strdup(error->message);
}

static void
test_gschema_drift(void)
{
	g_autofree gchar *committed = sfl_test_read_source_file("data/org.sf2loki.gschema.xml");
	g_autofree gchar *generated = sfl_config_render_gschema();
	if (g_strcmp0(committed, generated) != 0)
		g_error("data/org.sf2loki.gschema.xml has drifted from the schema tables; "
			"regenerate it with `make gen-config` (scripts/gen-config.sh)");
}

static void
test_gschema_compiles(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *xml = sfl_test_read_source_file("data/org.sf2loki.gschema.xml");
	g_autofree gchar *dir = g_build_filename(fx->tmpdir, "schemas", NULL);
	g_autofree gchar *path = g_build_filename(dir, "org.sf2loki.gschema.xml", NULL);
	g_autofree gchar *prog = g_find_program_in_path("glib-compile-schemas");
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_autoptr(GError) error = NULL;
	gint status = -1;

	g_assert_nonnull(prog); /* libglib2.0-bin, scripts/install-deps.sh */
	g_assert_cmpint(g_mkdir(dir, 0700), ==, 0);
	g_file_set_contents(path, xml, -1, &error);
	g_assert_no_error(error);
	{
		const gchar *argv[] = { prog, "--strict", "--dry-run", dir, NULL };
		g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
			     &status, &error);
	}
	g_assert_no_error(error);
	if (!g_spawn_check_wait_status(status, NULL))
		g_error("glib-compile-schemas --strict refused the schema: %s", err);
	/* --strict names nothing it would merely warn about either */
	g_assert_cmpstr(err, ==, "");
}

/* every key the schema declares is a table field, and no secret is a key */
static void
test_gschema_keys(Fixture *fx, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSettingsSchemaSource) source = g_settings_schema_source_new_from_directory(
		g_getenv("SFL_GSETTINGS_SCHEMA_DIR"), NULL, TRUE, &error);
	g_autoptr(GSettingsSchema) salesforce = NULL;
	g_autoptr(GSettingsSchema) loki = NULL;
	g_autoptr(GSettingsSchemaKey) url = NULL;
	g_autoptr(GVariant) range = NULL;
	g_autoptr(GSettingsSchema) root = NULL;

	g_assert_no_error(error);
	salesforce = g_settings_schema_source_lookup(source, "org.sf2loki.salesforce", FALSE);
	g_assert_nonnull(salesforce);
	g_assert_false(g_settings_schema_has_key(salesforce, "private-key"));
	g_assert_false(g_settings_schema_has_key(salesforce, "client-secret"));
	g_assert_true(g_settings_schema_has_key(salesforce, "private-key-file"));
	loki = g_settings_schema_source_lookup(source, "org.sf2loki.sink.loki", FALSE);
	g_assert_nonnull(loki);
	g_assert_cmpstr(g_settings_schema_get_path(loki), ==, "/org/sf2loki/sink/loki/");
	url = g_settings_schema_get_key(loki, "url");
	g_assert_true(g_variant_type_equal(g_settings_schema_key_get_value_type(url),
					   G_VARIANT_TYPE_STRING));
	g_assert_true(g_settings_schema_has_key(loki, "labels"));
	root = g_settings_schema_source_lookup(source, "org.sf2loki", FALSE);
	g_assert_nonnull(root);
	{
		g_auto(GStrv) children = g_settings_schema_list_children(root);
		g_assert_true(g_strv_contains((const gchar *const *)children, "sink"));
		g_assert_true(g_strv_contains((const gchar *const *)children, "service"));
	}
	{
		g_autoptr(GSettingsSchema) svc =
			g_settings_schema_source_lookup(source, "org.sf2loki.service", FALSE);
		g_autoptr(GSettingsSchemaKey) level = g_settings_schema_get_key(svc, "log-level");
		const gchar *kind = NULL;
		g_autoptr(GVariant) choices = NULL;
		range = g_settings_schema_key_get_range(level);
		g_variant_get(range, "(&sv)", &kind, &choices);
		g_assert_cmpstr(kind, ==, "enum");
		g_assert_cmpuint(g_variant_n_children(choices), ==, 6);
	}
}

static void
test_keyfile_layering(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *yaml =
		fixture_yaml(fx, "  log_level: debug\n"
				 "sink:\n"
				 "  loki:\n"
				 "    url: http://yaml.example:3100/loki/api/v1/push\n"
				 "    tenant_id: yaml-tenant\n"
				 "    labels: {job: yaml-job, environment: prod}\n");
	g_autoptr(SflConfig) config = NULL;
	const SflPubsubConfig *ps;
	const SflTransformRule *rule;
	g_autofree gchar *o_url = NULL;
	g_autofree gchar *o_tenant = NULL;
	g_autofree gchar *o_level = NULL;
	g_autofree gchar *o_default = NULL;
	g_autofree gchar *o_topics = NULL;
	g_autofree gchar *o_match = NULL;

	fixture_set(fx, "org.sf2loki.sink.loki", "url",
		    g_variant_new_string("http://gsettings.example:3100/loki/api/v1/push"));
	fixture_set(fx, "org.sf2loki.service", "log-level", g_variant_new_string("warning"));
	{
		const gchar *t[] = { "/event/LoginEventStream", "/event/ApiEventStream", NULL };
		fixture_set(fx, "org.sf2loki.sources.pubsub", "topics", g_variant_new_strv(t, -1));
	}
	fixture_set(fx, "org.sf2loki.sources.pubsub", "sample",
		    g_variant_new_parsed("{'LoginEvent': 0.25}"));
	fixture_set(fx, "org.sf2loki.sink.loki", "labels", g_variant_new_parsed("{'job': 'sec'}"));
	fixture_set(fx, "org.sf2loki.sources.pubsub", "transforms",
		    g_variant_new_parsed("[{'action': <'drop_row'>, "
					 "'match': <{'type': 'login'}>}, "
					 "{'action': <'hash'>, 'fields': <['USER_EMAIL']>}]"));
	fx->envp = g_environ_setenv(fx->envp, "SF2LOKI_SERVICE__LOG_LEVEL", "error", TRUE);

	config = load_ok(fx, yaml);
	ps = &config->data.sources.pubsub;
	/* GSettings over YAML */
	g_assert_cmpstr(config->data.sink.loki.url, ==,
			"http://gsettings.example:3100/loki/api/v1/push");
	/* unset keys fall through to YAML */
	g_assert_cmpstr(config->data.sink.loki.tenant_id, ==, "yaml-tenant");
	/* the environment over both */
	g_assert_cmpint(config->data.service.log_level, ==, SFL_CONFIG_LOG_LEVEL_ERROR);
	/* lists, maps and aa{sv} round-trip; a map replaces the file's whole */
	g_assert_cmpuint(g_strv_length(ps->topics), ==, 2);
	g_assert_cmpstr(ps->topics[1], ==, "/event/ApiEventStream");
	g_assert_cmpuint(ps->sample->len, ==, 1);
	g_assert_cmpfloat(((SflConfigPair *)g_ptr_array_index(ps->sample, 0))->number, ==, 0.25);
	g_assert_cmpuint(config->data.sink.loki.labels->len, ==, 1);
	g_assert_nonnull(sfl_config_map_lookup(config->data.sink.loki.labels, "job"));
	g_assert_null(sfl_config_map_lookup(config->data.sink.loki.labels, "environment"));
	g_assert_cmpuint(ps->transforms->len, ==, 2);
	rule = g_ptr_array_index(ps->transforms, 0);
	g_assert_cmpstr(sfl_config_map_lookup(rule->match, "type")->value, ==, "login");
	rule = g_ptr_array_index(ps->transforms, 1);
	g_assert_cmpstr(rule->fields[0], ==, "USER_EMAIL");

	o_url = sfl_config_dup_origin(config, "sink.loki.url");
	g_assert_cmpstr(o_url, ==, "gsettings:org.sf2loki.sink.loki url");
	o_tenant = sfl_config_dup_origin(config, "sink.loki.tenant_id");
	g_assert_cmpstr(o_tenant, ==, "file:test.yaml:11");
	o_level = sfl_config_dup_origin(config, "service.log_level");
	g_assert_cmpstr(o_level, ==, "env:SF2LOKI_SERVICE__LOG_LEVEL");
	o_default = sfl_config_dup_origin(config, "sink.loki.batch.max_entries");
	g_assert_cmpstr(o_default, ==, "default");
	o_topics = sfl_config_dup_origin(config, "sources.pubsub.topics");
	g_assert_cmpstr(o_topics, ==, "gsettings:org.sf2loki.sources.pubsub topics");
	o_match = sfl_config_dup_origin(config, "sources.pubsub.transforms[0].match");
	g_assert_cmpstr(o_match, ==, "gsettings:org.sf2loki.sources.pubsub transforms");
}

static void
test_keyfile_bad_values(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *yaml = fixture_yaml(fx, "sink:\n  loki:\n    url: http://l:3100/x\n");
	g_autofree gchar *kf = NULL;
	g_autofree gchar *p = NULL;

	kf = sfl_test_write_file(fx->tmpdir, "sf2loki.ini",
				 "[service]\n"
				 "shutdown-grace='abc'\n"
				 "log-level='loud'\n"
				 "no-such-key=1\n"
				 "[sink/nowhere]\n"
				 "x=1\n");
	p = load_fail(fx, yaml);
	/* the loader's own check, at the GSettings key */
	g_assert_nonnull(strstr(p, "service.shutdown_grace: "));
	g_assert_nonnull(strstr(p, "[gsettings:org.sf2loki.service shutdown-grace]"));
	/* what GSettings itself drops is an error too, never a silent fallback */
	g_assert_nonnull(strstr(p, "service.log_level: not a valid s value"));
	g_assert_nonnull(strstr(p, "'loud' [gsettings:org.sf2loki.service log-level]"));
	g_assert_nonnull(strstr(p, "unknown key 'no-such-key' in group [service]"));
	g_assert_nonnull(strstr(p, "unknown group [sink/nowhere]"));
}

static void
test_sources(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *yaml = NULL;
	g_autofree gchar *kf = NULL;
	g_autoptr(SflConfig) off = NULL;
	g_autoptr(SflConfig) on = NULL;
	g_autoptr(SflConfig) absent = NULL;
	g_autofree gchar *missing = NULL;

	kf = sfl_test_write_file(fx->tmpdir, "sf2loki.ini",
				 "[sink/loki]\nurl='http://gs.example:3100/x'\n");
	yaml = fixture_yaml(fx, "  config_sources: [file, env]\n"
				"sink:\n  loki:\n    url: http://yaml.example:3100/x\n");
	off = load_ok(fx, yaml);
	g_assert_cmpstr(off->data.sink.loki.url, ==, "http://yaml.example:3100/x");
	g_assert_null(off->gsettings);

	/* the pre-pass reads config_sources from the environment too */
	fx->envp = g_environ_setenv(fx->envp, "SF2LOKI_SERVICE__CONFIG_SOURCES",
				    "[\"file\", \"gsettings\"]", TRUE);
	on = load_ok(fx, yaml);
	g_assert_cmpstr(on->data.sink.loki.url, ==, "http://gs.example:3100/x");
	g_assert_nonnull(on->gsettings);
	fx->envp = g_environ_unsetenv(fx->envp, "SF2LOKI_SERVICE__CONFIG_SOURCES");

	/* no keyfile, no dconf: no layer, no error */
	g_unlink(fx->keyfile);
	absent = load_ok(fx, yaml);
	g_assert_null(absent->gsettings);

	/* a keyfile but no schema: an error naming the schema */
	g_file_set_contents(fx->keyfile, "[sink/loki]\nurl='x'\n", -1, NULL);
	{
		g_autofree gchar *empty = g_build_filename(fx->tmpdir, "noschemas", NULL);
		g_autofree gchar *other =
			g_build_filename(empty, "org.example.other.gschema.xml", NULL);
		g_autofree gchar *prog = g_find_program_in_path("glib-compile-schemas");
		const gchar *argv[] = { prog, empty, NULL };
		gint status = -1;
		g_autoptr(GError) error = NULL;
		g_autofree gchar *yaml2 = fixture_yaml(fx, "");

		g_assert_cmpint(g_mkdir(empty, 0700), ==, 0);
		g_file_set_contents(other,
				    "<schemalist><schema id=\"org.example.other\" "
				    "path=\"/org/example/other/\"/></schemalist>",
				    -1, &error);
		g_assert_no_error(error);
		g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
			     &status, &error);
		g_assert_no_error(error);
		g_assert_true(g_spawn_check_wait_status(status, NULL));
		fx->envp = g_environ_setenv(fx->envp, "GSETTINGS_SCHEMA_DIR", empty, TRUE);
		missing = load_fail(fx, yaml2);
	}
	g_assert_nonnull(strstr(missing, "the GSettings schema org.sf2loki is not installed"));
	g_assert_nonnull(strstr(missing, fx->keyfile));
}

static gboolean
wake_up(gpointer user_data)
{
	return G_SOURCE_REMOVE;
}

static void
count_change(gpointer user_data)
{
	guint *n = user_data;
	(*n)++;
}

static void
test_watch(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *yaml = fixture_yaml(fx, "sink:\n  loki:\n    url: http://l:3100/x\n");
	g_autoptr(GMainContext) ctx = g_main_context_new();
	g_autoptr(SflConfig) config = NULL;
	g_autoptr(SflConfigWatch) watch = NULL;
	guint fired = 0;
	gint64 deadline;

	fixture_set(fx, "org.sf2loki.service", "log-level", g_variant_new_string("debug"));
	config = load_ok(fx, yaml);
	g_assert_nonnull(config->gsettings);
	watch = sfl_config_watch_new(config, ctx, count_change, &fired);
	/* another writer (configuration management) rewrites the keyfile */
	fixture_set(fx, "org.sf2loki.service", "log-level", g_variant_new_string("error"));
	deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
	while (fired == 0 && g_get_monotonic_time() < deadline) {
		/* the file monitor's events arrive in @ctx; wake at least every 100 ms */
		GSource *timeout = g_timeout_source_new(100);
		g_source_set_callback(timeout, wake_up, NULL, NULL);
		g_source_attach(timeout, ctx);
		g_main_context_iteration(ctx, TRUE);
		g_source_destroy(timeout);
		g_source_unref(timeout);
	}
	g_assert_cmpuint(fired, >, 0);
}

/* --- the real binary: config dump --origin, and dconf -------------------------------- */

static gchar *
run_dump(Fixture *fx, gchar **envp, const gchar *config_path, gint *status_out)
{
	const gchar *bin = g_getenv("SF2LOKI_BIN");
	const gchar *argv[] = { bin, "config", "dump", "--origin", "--config", config_path, NULL };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *err = NULL;
	gchar *out = NULL;
	gint status = -1;

	g_assert_nonnull(bin);
	g_spawn_sync(NULL, (gchar **)argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
		     &error);
	g_assert_no_error(error);
	if (status_out != NULL)
		*status_out = status;
	else if (!g_spawn_check_wait_status(status, NULL))
		g_error("config dump failed: %s", err);
	return out;
}

/* the environment a child runs with: the sanitizer settings of the test, nothing of ours */
static gchar **
child_env(Fixture *fx)
{
	gchar **env = g_strdupv(fx->envp);
	const gchar *keep[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
				"PATH",		"LC_ALL",	 NULL };
	for (guint i = 0; keep[i] != NULL; i++) {
		const gchar *v = g_getenv(keep[i]);
		if (v != NULL)
			env = g_environ_setenv(env, keep[i], v, TRUE);
	}
	return env;
}

static void
test_dump_origins(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *yaml = fixture_yaml(fx, "sink:\n"
						  "  loki:\n"
						  "    url: http://yaml.example:3100/x\n"
						  "    tenant_id: yaml-tenant\n");
	g_autofree gchar *path = sfl_test_write_file(fx->tmpdir, "config.yaml", yaml);
	g_auto(GStrv) env = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *want_file = NULL;
	gint status = -1;

	fixture_set(fx, "org.sf2loki.sink.loki", "url",
		    g_variant_new_string("http://gs.example:3100/x"));
	fx->envp = g_environ_setenv(fx->envp, "SF2LOKI_SERVICE__LOG_LEVEL", "error", TRUE);
	env = child_env(fx);
	out = run_dump(fx, env, path, NULL);

	g_assert_nonnull(strstr(
		out, "\nsink.loki.url: \"http://gs.example:3100/x\"  # gsettings:org.sf2loki."
		     "sink.loki url\n"));
	want_file = g_strdup_printf("\nsink.loki.tenant_id: \"yaml-tenant\"  # file:%s:10\n", path);
	g_assert_nonnull(strstr(out, want_file));
	g_assert_nonnull(
		strstr(out, "\nservice.log_level: error  # env:SF2LOKI_SERVICE__LOG_LEVEL\n"));
	g_assert_nonnull(strstr(out, "\nservice.shutdown_grace: 25s  # default\n"));
	g_assert_nonnull(strstr(out, "\nsalesforce.private_key: <redacted>  # file:"));
	g_assert_null(strstr(out, "inline-key-material"));

	/* a bad GSettings value: exit 2, naming schema and key */
	fixture_set(fx, "org.sf2loki.service", "shutdown-grace", g_variant_new_string("abc"));
	g_free(out);
	out = run_dump(fx, env, path, &status);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 2);
}

static void
test_dconf_locked(Fixture *fx, gconstpointer user_data)
{
	g_autofree gchar *dconf = g_find_program_in_path("dconf");
	g_autofree gchar *kdir = g_build_filename(fx->tmpdir, "sf2loki.d", NULL);
	g_autofree gchar *ldir = g_build_filename(kdir, "locks", NULL);
	g_autofree gchar *db = g_build_filename(fx->tmpdir, "sf2loki.db", NULL);
	/* a user database makes locks meaningful; it need not exist (XDG_CONFIG_HOME/dconf/user) */
	g_autofree gchar *profile_text = g_strdup_printf("user-db:user\nfile-db:%s\n", db);
	g_autofree gchar *profile = sfl_test_write_file(fx->tmpdir, "profile", profile_text);
	g_autofree gchar *yaml =
		g_strdup(SFL_TEST_YAML_SF "sink:\n  loki:\n    url: http://yaml:3100/x\n");
	g_autofree gchar *path = sfl_test_write_file(fx->tmpdir, "config.yaml", yaml);
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) env = NULL;
	g_autofree gchar *out = NULL;
	gint status = -1;

	if (dconf == NULL) {
		g_test_skip("dconf (Debian dconf-cli) is not installed");
		return;
	}
	if (!g_file_test("/usr/lib/x86_64-linux-gnu/gio/modules/libdconfsettings.so",
			 G_FILE_TEST_EXISTS) &&
	    !g_file_test("/usr/lib/gio/modules/libdconfsettings.so", G_FILE_TEST_EXISTS)) {
		g_test_skip("the dconf GIO module (dconf-gsettings-backend) is not installed");
		return;
	}
	g_assert_cmpint(g_mkdir_with_parents(ldir, 0700), ==, 0);
	g_free(sfl_test_write_file(fx->tmpdir, "sf2loki.d/00-sf2loki",
				   "[org/sf2loki/sink/loki]\n"
				   "url='http://dconf.example:3100/x'\n"
				   "[org/sf2loki/service]\n"
				   "log-level='debug'\n"));
	g_free(sfl_test_write_file(fx->tmpdir, "sf2loki.d/locks/00-sf2loki",
				   "/org/sf2loki/sink/loki/url\n"));
	{
		const gchar *argv[] = { dconf, "compile", db, kdir, NULL };
		g_autofree gchar *err = NULL;
		g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, &err,
			     &status, &error);
		g_assert_no_error(error);
		if (!g_spawn_check_wait_status(status, NULL))
			g_error("dconf compile failed: %s", err);
	}
	fx->envp = g_environ_setenv(fx->envp, "DCONF_PROFILE", profile, TRUE);
	fx->envp = g_environ_setenv(fx->envp, "XDG_CONFIG_HOME", fx->tmpdir, TRUE);
	env = child_env(fx);
	{
		/*
		 * the dconf module leaks a watch record per GSettings object when it has no bus
		 * to subscribe on (tests/lsan.supp); full stacks let the suppression see it
		 */
		const gchar *asan = g_environ_getenv(env, "ASAN_OPTIONS");
		g_autofree gchar *opts =
			g_strconcat(asan != NULL ? asan : "", ":fast_unwind_on_malloc=0", NULL);
		env = g_environ_setenv(env, "ASAN_OPTIONS", opts, TRUE);
	}
	out = run_dump(fx, env, path, NULL);
	g_assert_nonnull(strstr(out, "\nsink.loki.url: \"http://dconf.example:3100/x\"  # "
				     "gsettings:org.sf2loki.sink.loki url (locked)\n"));
	g_assert_nonnull(strstr(
		out, "\nservice.log_level: debug  # gsettings:org.sf2loki.service log-level\n"));
}

int
main(int argc, char **argv)
{
	int rc;
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/config/gsettings/gschema/drift", test_gschema_drift);
	g_test_add("/sfl/config/gsettings/gschema/compiles", Fixture, NULL, fixture_setup,
		   test_gschema_compiles, fixture_teardown);
	g_test_add("/sfl/config/gsettings/gschema/keys", Fixture, NULL, fixture_setup,
		   test_gschema_keys, fixture_teardown);
	g_test_add("/sfl/config/gsettings/keyfile/layering", Fixture, NULL, fixture_setup,
		   test_keyfile_layering, fixture_teardown);
	g_test_add("/sfl/config/gsettings/keyfile/bad-values", Fixture, NULL, fixture_setup,
		   test_keyfile_bad_values, fixture_teardown);
	g_test_add("/sfl/config/gsettings/sources", Fixture, NULL, fixture_setup, test_sources,
		   fixture_teardown);
	g_test_add("/sfl/config/gsettings/watch", Fixture, NULL, fixture_setup, test_watch,
		   fixture_teardown);
	g_test_add("/sfl/config/gsettings/dump/origins", Fixture, NULL, fixture_setup,
		   test_dump_origins, fixture_teardown);
	g_test_add("/sfl/config/gsettings/dconf/locked", Fixture, NULL, fixture_setup,
		   test_dconf_locked, fixture_teardown);
	rc = g_test_run();
	sfl_redact_clear_secrets();
	return rc;
}
