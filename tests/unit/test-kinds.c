/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestKinds"

#include "config.h"

#include <string.h>

#include "sfl-app.h"
#include "sfl-config-schema.h"
#include "sfl-error.h"
#include "sfl-kinds.h"

/*
 * The kind tables of src/app/: every record complete and uniquely named, one record for every
 * choice the configuration accepts, lookups by name, and an unknown name refused with the
 * configuration key in the message.
 */

/* the choices of an ENUM key, in the loader's order */
static const gchar *const *
test_choices(const gchar *path)
{
	const SflConfigField *field = sfl_config_field_at(path);

	g_assert_nonnull(field);
	g_assert_cmpint(field->type, ==, SFL_CONFIG_TYPE_ENUM);
	g_assert_nonnull(field->choices);
	return field->choices;
}

static void
test_names_unique(const gchar *const *names, guint n)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = 0; i < n; i++) {
		g_assert_nonnull(names[i]);
		g_assert_cmpstr(names[i], !=, "");
		g_assert_true(g_hash_table_add(seen, (gpointer)names[i]));
	}
}

static void
test_store_table(void)
{
	guint n = 0;
	const SflStoreKind *kinds = sfl_store_kinds(&n);
	const gchar *const *choices = test_choices("state.store");
	g_autofree const gchar **names = g_new0(const gchar *, n + 1);

	g_assert_cmpuint(n, ==, g_strv_length((gchar **)choices));
	for (guint i = 0; i < n; i++) {
		names[i] = kinds[i].name;
		g_assert_true(g_str_has_prefix(kinds[i].section, "state."));
		g_assert_nonnull(kinds[i].build);
		g_assert_nonnull(kinds[i].dup_location);
		g_assert_nonnull(kinds[i].doctor_probe);
		g_assert_true(sfl_store_kind_lookup(kinds[i].name, NULL) == &kinds[i]);
	}
	test_names_unique(names, n);
	/* every name the loader accepts has its record */
	for (guint i = 0; choices[i] != NULL; i++)
		g_assert_nonnull(sfl_store_kind_lookup(choices[i], NULL));
}

static void
test_coordinator_table(void)
{
	guint n = 0;
	const SflCoordinatorKind *kinds = sfl_coordinator_kinds(&n);
	const gchar *const *choices = test_choices("coordinate.type");
	g_autofree const gchar **names = g_new0(const gchar *, n + 1);
	guint unfenced = 0;

	g_assert_cmpuint(n, ==, g_strv_length((gchar **)choices));
	for (guint i = 0; i < n; i++) {
		names[i] = kinds[i].name;
		g_assert_true(g_str_has_prefix(kinds[i].section, "coordinate"));
		g_assert_nonnull(kinds[i].build);
		g_assert_nonnull(kinds[i].check_no_writer);
		g_assert_nonnull(kinds[i].doctor_probe);
		g_assert_true(sfl_coordinator_kind_lookup(kinds[i].name, NULL) == &kinds[i]);
		unfenced += !kinds[i].fenced;
	}
	test_names_unique(names, n);
	for (guint i = 0; choices[i] != NULL; i++)
		g_assert_nonnull(sfl_coordinator_kind_lookup(choices[i], NULL));
	/* only noop hands out no epochs */
	g_assert_cmpuint(unfenced, ==, 1);
	g_assert_false(sfl_coordinator_kind_lookup("noop", NULL)->fenced);
}

static void
test_source_table(void)
{
	guint n = 0;
	const SflSourceKind *kinds = sfl_source_kinds(&n);
	g_autofree const gchar **names = g_new0(const gchar *, n + 1);

	g_assert_cmpuint(n, >, 0);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *section = g_strconcat("sources.", kinds[i].name, NULL);
		g_autofree gchar *enabled = g_strconcat(section, ".enabled", NULL);
		names[i] = kinds[i].name;
		g_assert_cmpstr(kinds[i].section, ==, section);
		/* a section the loader knows */
		g_assert_nonnull(sfl_config_field_at(enabled));
		g_assert_nonnull(kinds[i].enabled);
		g_assert_nonnull(kinds[i].wanted);
		g_assert_nonnull(kinds[i].idle_reason);
		g_assert_nonnull(kinds[i].build);
		/* /statusz and the commit gauges learn a source's keys from the source */
		g_assert_nonnull(kinds[i].describe_checkpoint);
		g_assert_true(sfl_source_kind_lookup(kinds[i].name, NULL) == &kinds[i]);
	}
	test_names_unique(names, n);
	g_assert_nonnull(sfl_source_kind_lookup("pubsub", NULL)->doctor_probe);
}

/* each record reads its own sources.<name>.enabled and no other (the doctor lists by it) */
static void
test_source_enabled(void)
{
	guint n = 0;
	const SflSourceKind *kinds = sfl_source_kinds(&n);
	SflSourcesConfig s;
	const struct {
		const gchar *name;
		gboolean *flag;
	} flags[] = {
		{ "eventlogfile", &s.eventlogfile.enabled },
		{ "eventlog_objects", &s.eventlog_objects.enabled },
		{ "apexlog", &s.apexlog.enabled },
		{ "pubsub", &s.pubsub.enabled },
	};

	memset(&s, 0, sizeof(s));
	g_assert_cmpuint(n, ==, G_N_ELEMENTS(flags));
	for (guint i = 0; i < n; i++)
		g_assert_false(kinds[i].enabled(&s));
	for (guint f = 0; f < G_N_ELEMENTS(flags); f++) {
		memset(&s, 0, sizeof(s));
		*flags[f].flag = TRUE;
		for (guint i = 0; i < n; i++)
			g_assert_cmpint(kinds[i].enabled(&s), ==,
					g_str_equal(kinds[i].name, flags[f].name));
	}
}

static void
test_unknown_names(void)
{
	g_autoptr(GError) error = NULL;

	g_assert_null(sfl_store_kind_lookup("etcd", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "state.store"));
	g_assert_nonnull(strstr(error->message, "'etcd'"));
	/* the names that would have worked */
	g_assert_nonnull(strstr(error->message, "file, s3, gcs"));
	g_clear_error(&error);

	g_assert_null(sfl_coordinator_kind_lookup("etcd_lease", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "coordinate.type"));
	g_assert_nonnull(strstr(error->message, "'etcd_lease'"));
	g_clear_error(&error);

	g_assert_null(sfl_source_kind_lookup("etcd", &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "sources"));
	g_clear_error(&error);

	/* NULL is a name nobody has, not a crash */
	g_assert_null(sfl_store_kind_lookup(NULL, &error));
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
}

/* the configured kind is the record of the configured name, and drives the derived answers */
static void
test_for_config(void)
{
	static const gchar yaml[] = "salesforce:\n"
				    "  client_id: cid\n"
				    "  username: integration@example.com\n"
				    "  private_key: inline-key-material\n"
				    "sink:\n"
				    "  loki:\n"
				    "    url: http://127.0.0.1:3100/loki/api/v1/push\n"
				    "state:\n"
				    "  store: s3\n"
				    "  s3:\n"
				    "    bucket: b\n"
				    "    key: sf2loki/state.json\n"
				    "coordinate:\n"
				    "  type: file_lease\n"
				    "  file_lease:\n"
				    "    path: /tmp/sf2loki-test-kinds.lease\n";
	gchar *envp[] = { NULL };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", envp, &error);
	g_autofree gchar *location = NULL;
	const SflStoreKind *store;
	const SflCoordinatorKind *coordinator;

	g_assert_no_error(error);
	store = sfl_store_kind_for_config(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(store->name, ==, "s3");
	location = store->dup_location(config);
	g_assert_cmpstr(location, ==, "s3://b/sf2loki/state.json");
	coordinator = sfl_coordinator_kind_for_config(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(coordinator->name, ==, "file_lease");
	g_assert_true(sfl_app_coordinator_is_fenced(config));
	/* the lease keeps a second instance away, not the (lockless) object store */
	g_assert_false(sfl_app_store_wants_exclusive(config));
}

/* the units of every source kind a sharded group splits its work into, as it lists them */
static GPtrArray *
test_units_of(const gchar *yaml)
{
	gchar *envp[] = { NULL };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", envp, &error);
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	guint n = 0;
	const SflSourceKind *kinds = sfl_source_kinds(&n);

	g_assert_no_error(error);
	for (guint k = 0; k < n; k++) {
		g_assert_nonnull(kinds[k].units);
		if (kinds[k].wanted(&config->data.sources))
			kinds[k].units(&config->data.sources, out);
	}
	return out;
}

static gchar *
test_join(GPtrArray *units)
{
	g_ptr_array_add(units, NULL);
	return g_strjoinv(" ", (gchar **)units->pdata);
}

#define TEST_UNITS_HEAD                                                                            \
	"salesforce: {client_id: c, username: u, private_key: inline-key-material}\n"              \
	"sink: {loki: {url: 'http://127.0.0.1:3100/loki/api/v1/push'}}\n"

static void
test_source_units(void)
{
	/* one unit per listed type (an excluded one is none), object and explicit topic after
	 * include/exclude, one for ApexLog; each named by the checkpoint key it writes */
	g_autoptr(GPtrArray) listed = test_units_of(
		TEST_UNITS_HEAD "sources:\n"
				"  eventlogfile: {enabled: true, event_types: [API, URI, Login], "
				"exclude: [URI]}\n"
				"  eventlog_objects: {enabled: true, objects: [{name: LoginEvent}, "
				"{name: ApiAnomalyEventStore}]}\n"
				"  apexlog: {enabled: true}\n"
				"  pubsub: {enabled: true, topics: [/event/A__e, /event/B__e, "
				"/event/C__e], exclude: [/event/B__e]}\n"
				"  allow_overlap: true\n");
	/* what is only known at run time is one unit: every type, every discovered topic */
	g_autoptr(GPtrArray) discovered = test_units_of(
		TEST_UNITS_HEAD "sources:\n"
				"  eventlogfile: {enabled: true, event_types: ['*', API]}\n"
				"  pubsub: {enabled: true, topics: ['*']}\n"
				"  allow_overlap: true\n");
	g_autofree gchar *a = test_join(listed);
	g_autofree gchar *b = test_join(discovered);

	g_assert_cmpstr(a, ==,
			"eventlogfile:API eventlogfile:Login eventlog_objects:LoginEvent "
			"eventlog_objects:ApiAnomalyEventStore apexlog pubsub:/event/A__e "
			"pubsub:/event/C__e");
	g_assert_cmpstr(b, ==, "eventlogfile:* pubsub:*");
}

/* sharding needs a lease; only the kinds with a member store and unit leases can shard */
static void
test_sharding_kinds(void)
{
	const gchar *yaml = TEST_UNITS_HEAD "coordinate: {sharding: {enabled: true}}\n";
	gchar *envp[] = { NULL };
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config =
		sfl_config_load_from_data(yaml, strlen(yaml), "test.yaml", envp, &error);
	guint n = 0;
	const SflCoordinatorKind *kinds = sfl_coordinator_kinds(&n);

	g_assert_null(config);
	g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "coordinate.sharding.enabled"));
	for (guint i = 0; i < n; i++) {
		/* both or neither */
		g_assert_true((kinds[i].build_members == NULL) ==
			      (kinds[i].build_unit_lease == NULL));
		if (g_str_equal(kinds[i].name, "file_lease"))
			g_assert_nonnull(kinds[i].build_members);
		if (g_str_equal(kinds[i].name, "noop"))
			g_assert_null(kinds[i].build_members);
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sfl/kinds/stores", test_store_table);
	g_test_add_func("/sfl/kinds/coordinators", test_coordinator_table);
	g_test_add_func("/sfl/kinds/sources", test_source_table);
	g_test_add_func("/sfl/kinds/source-enabled", test_source_enabled);
	g_test_add_func("/sfl/kinds/unknown", test_unknown_names);
	g_test_add_func("/sfl/kinds/for-config", test_for_config);
	g_test_add_func("/sfl/kinds/source-units", test_source_units);
	g_test_add_func("/sfl/kinds/sharding", test_sharding_kinds);
	return g_test_run();
}
