/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCli"

#include "config.h"

#include "sfl-cli.h"

#include <stdio.h>
#include <string.h>

#include "sfl-app.h"
#include "sfl-kinds.h"
#include "sfl-cli-backfill.h"
#include "sfl-cli-deadletter.h"
#include "sfl-cli-dump.h"
#include "sfl-cli-reload.h"
#include "sfl-cli-state.h"
#include "sfl-config.h"
#include "sfl-platform.h"
#include "sfl-doctor.h"
#include "sfl-error.h"
#include "sfl-orgs.h"
#include "sfl-log.h"
#include "sfl-redact.h"
#include "sfl-run.h"

/* one usage line per source line; the backfill's come from its header */
/* clang-format off */
static const gchar *const sfl_cli_usage =
	"Usage:\n"
	"  sf2loki [run] [--config PATH]     run the service until SIGTERM/SIGINT\n"
	"  sf2loki check --config PATH       validate the configuration offline (exit 0 or 2)\n"
	"  sf2loki config example            print an annotated example configuration\n"
	"  sf2loki config reference          print the configuration reference (Markdown)\n"
	"  sf2loki config schema             print the configuration's JSON Schema\n"
	"  sf2loki config helm-values        print the Helm chart's generated config: block\n"
	"  sf2loki config gschema            print the GSettings schema (org.sf2loki.gschema.xml)\n"
	"  sf2loki config dump [--origin] [--config PATH]\n"
	"                                    the effective configuration, redacted; --origin\n"
	"                                    says which layer gave each value\n"
	"  sf2loki doctor [--json] [--org NAME] [--config PATH]\n"
	"                                    live preflight: Salesforce, Loki, state, lease\n"
	"                                    (exit 0 ok, 1 a check failed, 2 config or org)\n"
	"  sf2loki reload [--config PATH]    ask the running service to reload its configuration\n"
	"                                    (exit 0 applied, 1 refused, 2 config or usage)\n"
	"  sf2loki state COMMAND ...         inspect or repair checkpoints (see: sf2loki state)\n"
	"  sf2loki deadletter list|show|replay|purge\n"
	"                                    entries Loki never accepted (see: sf2loki deadletter)\n"
	SFL_CLI_BACKFILL_USAGE
	"  sf2loki version                   print the version\n"
	"  sf2loki help                      print this help\n"
	"\n"
	"Options:\n"
	"  -c, --config PATH   YAML configuration file (environment and defaults apply without "
	"one)\n"
	"  --check             same as the check command\n"
	"  -V, --version       print the version\n"
	"\n"
	"Exit codes: 0 success, 1 runtime failure, 2 configuration or usage error.\n";
/* clang-format on */

static int sfl_cli_usage_error(const gchar *format, ...) G_GNUC_PRINTF(1, 2);

static int
sfl_cli_usage_error(const gchar *format, ...)
{
	va_list args;
	g_autofree gchar *msg = NULL;

	va_start(args, format);
	msg = g_strdup_vprintf(format, args);
	va_end(args);
	fprintf(stderr, "sf2loki: %s\n\n%s", msg, sfl_cli_usage);
	return SFL_EXIT_USAGE;
}

/* every line of a config error on stderr; the loader has already redacted them */
static void
sfl_cli_print_problems(const GError *error, const gchar *prefix)
{
	g_auto(GStrv) lines = g_strsplit(error->message, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++)
		fprintf(stderr, "%s%s\n", prefix, lines[i]);
}

/* the note `check` prints instead of building a coordinator it cannot build here, or NULL */
static const gchar *
sfl_cli_check_deferred_note(const SflConfig *config)
{
	const SflCoordinatorKind *kind = sfl_coordinator_kind_for_config(config, NULL);

	return kind != NULL && kind->check_deferred != NULL ? kind->check_deferred(config) : NULL;
}

static int
sfl_cli_check(const gchar *config_path)
{
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = NULL;
	g_autoptr(SflCheckpointStore) store = NULL;
	g_autoptr(SflCoordinator) coordinator = NULL;
	g_autofree gchar *no_source = NULL;
	const gchar *deferred = NULL;

	config = sfl_config_load(config_path, envp, &error);
	if (config == NULL) {
		guint n = 1;
		for (const gchar *p = error->message; *p != '\0'; p++)
			n += *p == '\n';
		sfl_cli_print_problems(error, "");
		fprintf(stderr, "config check FAILED: %u problem%s\n", n, n == 1 ? "" : "s");
		return sfl_error_to_exit_code(error);
	}
	/* wiring: build (never open or start) what `run` would, so unsupported choices show here */
	store = sfl_app_build_store(config, sfl_app_store_wants_exclusive(config), &error);
	deferred = store != NULL ? sfl_cli_check_deferred_note(config) : NULL;
	if (deferred != NULL)
		printf("note: %s\n", deferred);
	else if (store != NULL)
		coordinator = sfl_app_build_coordinator(config, NULL, &error);
	if (store == NULL || (coordinator == NULL && deferred == NULL) ||
	    !sfl_orgs_check_config(config, &error)) {
		sfl_cli_print_problems(error, "");
		fprintf(stderr, "config check FAILED: 1 problem\n");
		return sfl_error_to_exit_code(error);
	}
	no_source = sfl_app_dup_no_source_reason(config);
	if (no_source != NULL)
		/* valid, and still worth a word: `run` would exit 0 at once (docs/cli.md, "run") */
		fprintf(stderr, "warning: %s: `sf2loki run` has nothing to ingest and exits 0\n",
			no_source);
	printf("config check OK\n");
	return SFL_EXIT_OK;
}

static int
sfl_cli_config(gchar **args)
{
	g_autofree gchar *text = NULL;

	if (args[0] == NULL || args[1] != NULL)
		return sfl_cli_usage_error("config needs one of: example, reference, schema, "
					   "helm-values, gschema, dump");
	if (g_str_equal(args[0], "example"))
		text = sfl_config_render_example();
	else if (g_str_equal(args[0], "reference"))
		text = sfl_config_render_reference();
	else if (g_str_equal(args[0], "schema"))
		text = sfl_config_render_jsonschema();
	else if (g_str_equal(args[0], "helm-values"))
		text = sfl_config_render_helm_values();
	else if (g_str_equal(args[0], "gschema"))
		text = sfl_config_render_gschema();
	else
		return sfl_cli_usage_error("unknown config artifact '%s' (example, reference, "
					   "schema, helm-values, gschema, dump)",
					   args[0]);
	fputs(text, stdout);
	return fflush(stdout) == 0 ? SFL_EXIT_OK : SFL_EXIT_FAILURE;
}

/*
 * A Windows service has no console: why it could not run (a config error, a fatal start-up)
 * goes to the Event Log as well, or the operator would see only the exit code. Elsewhere this
 * does nothing (docs/internals/logging.md).
 */
static void
sfl_cli_report_fatal(const gchar *text)
{
	(void)sfl_platform_event_log_write(SFL_PLATFORM_EVENT_ERROR, text, NULL);
}

static int
sfl_cli_run(const gchar *config_path, const SflCliPlatform *platform)
{
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = NULL;

	config = sfl_config_load(config_path, envp, &error);
	if (config == NULL) {
		g_autofree gchar *text = g_strconcat("sf2loki: ", error->message, NULL);

		sfl_cli_print_problems(error, "sf2loki: ");
		sfl_cli_report_fatal(text);
		return sfl_error_to_exit_code(error);
	}
	if (!sfl_run(config, platform, &error)) {
		g_autofree gchar *msg = sfl_redact(error->message);
		g_autofree gchar *text = g_strconcat("sf2loki: ", msg, NULL);

		fprintf(stderr, "%s\n", text);
		sfl_cli_report_fatal(text);
		return sfl_error_to_exit_code(error);
	}
	return SFL_EXIT_OK;
}

/* the first argument that is no option (nor --config's value) is @command */
static gboolean
sfl_cli_is_command(int argc, char **argv, const gchar *command)
{
	for (int i = 1; i < argc; i++) {
		if (g_str_equal(argv[i], "-c") || g_str_equal(argv[i], "--config")) {
			i++;
			continue;
		}
		if (argv[i][0] == '-')
			continue;
		return g_str_equal(argv[i], command);
	}
	return FALSE;
}

/**
 * sfl_cli_main:
 * @argc: argument count
 * @argv: arguments
 * @platform: OS hooks from the entry point
 *
 * Returns: the process exit code
 */
int
sfl_cli_main(int argc, char **argv, const SflCliPlatform *platform)
{
	g_autofree gchar *config_path = NULL;
	gboolean check = FALSE;
	gboolean version = FALSE;
	g_autoptr(GError) error = NULL;
	g_autoptr(GOptionContext) context = NULL;
	g_auto(GStrv) args = NULL;
	gboolean json = FALSE;
	gboolean force = FALSE;
	gboolean merge = FALSE;
	g_autofree gchar *key_glob = NULL;
	g_autofree gchar *org = NULL;
	gboolean origin = FALSE;
	const GOptionEntry entries[] = {
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path, "YAML configuration file",
		  "PATH" },
		{ "check", 0, 0, G_OPTION_ARG_NONE, &check, "Validate the configuration and exit",
		  NULL },
		{ "version", 'V', 0, G_OPTION_ARG_NONE, &version, "Print the version", NULL },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &json, "state, doctor: machine-readable output",
		  NULL },
		{ "org", 0, 0, G_OPTION_ARG_STRING, &org, "doctor: check this org", "NAME" },
		{ "force", 0, 0, G_OPTION_ARG_NONE, &force, "state: skip the live-writer checks",
		  NULL },
		{ "merge", 0, 0, G_OPTION_ARG_NONE, &merge,
		  "state import: merge instead of replace", NULL },
		{ "key", 0, 0, G_OPTION_ARG_STRING, &key_glob, "state list: keys matching GLOB",
		  "GLOB" },
		{ "origin", 0, 0, G_OPTION_ARG_NONE, &origin,
		  "config dump: where each value came from", NULL },
		{ NULL }
	};
	const gchar *command;

	/* defaults until the configuration says otherwise */
	sfl_log_setup(SFL_LOG_FORMAT_JSON, SFL_LOG_LEVEL_INFO);

	/* backfill has flags of its own: it parses the whole command line itself */
	if (sfl_cli_is_command(argc, argv, "backfill"))
		return sfl_cli_backfill(argc, argv, platform);
	if (sfl_cli_is_command(argc, argv, "deadletter"))
		return sfl_cli_deadletter(argc, argv);

	args = g_new0(gchar *, argc + 1);
	for (int i = 0; i < argc; i++) {
		/* help is a command here, so GOption's own handling stays off */
		if (g_str_equal(argv[i], "--help") || g_str_equal(argv[i], "-h")) {
			fputs(sfl_cli_usage, stdout);
			return SFL_EXIT_OK;
		}
		args[i] = g_strdup(argv[i]);
	}

	context = g_option_context_new("[COMMAND]");
	g_option_context_set_help_enabled(context, FALSE);
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse_strv(context, &args, &error))
		return sfl_cli_usage_error("%s", error->message);

	if (version) {
		printf("sf2loki %s\n", PACKAGE_VERSION);
		return SFL_EXIT_OK;
	}

	command = args[1];
	if (origin && (g_strcmp0(command, "config") != 0 || g_strcmp0(args[2], "dump") != 0))
		return sfl_cli_usage_error("--origin goes with config dump");
	if (command != NULL && g_str_equal(command, "doctor")) {
		SflDoctorOptions opts = { .config_path = config_path, .org = org, .json = json };
		if (args[2] != NULL)
			return sfl_cli_usage_error("unexpected argument '%s'", args[2]);
		if (force || merge || key_glob != NULL || check)
			return sfl_cli_usage_error("doctor takes only --json, --org and --config");
		return sfl_doctor_main(&opts);
	}
	if (org != NULL)
		return sfl_cli_usage_error("--org goes with the doctor command");
	if ((json || force || merge || key_glob != NULL) &&
	    (command == NULL || !g_str_equal(command, "state")))
		return sfl_cli_usage_error("--json, --force, --merge and --key go with the state "
					   "command");
	if (command != NULL && g_str_equal(command, "state")) {
		SflCliStateOptions opts = {
			.json = json, .force = force, .merge = merge, .key_glob = key_glob
		};
		return sfl_cli_state(config_path, args + 2, &opts);
	}
	if (command == NULL || g_str_equal(command, "run")) {
		if (command != NULL && args[2] != NULL)
			return sfl_cli_usage_error("unexpected argument '%s'", args[2]);
		if (check)
			return sfl_cli_check(config_path);
		return sfl_cli_run(config_path, platform);
	}
	if (g_str_equal(command, "check")) {
		if (args[2] != NULL)
			return sfl_cli_usage_error("unexpected argument '%s'", args[2]);
		return sfl_cli_check(config_path);
	}
	if (g_str_equal(command, "config") && g_strcmp0(args[2], "dump") == 0) {
		if (args[3] != NULL)
			return sfl_cli_usage_error("unexpected argument '%s'", args[3]);
		return sfl_cli_config_dump(config_path, origin);
	}
	if (g_str_equal(command, "config"))
		return sfl_cli_config(args + 2);
	if (g_str_equal(command, "reload")) {
		if (args[2] != NULL)
			return sfl_cli_usage_error("unexpected argument '%s'", args[2]);
		if (check)
			return sfl_cli_usage_error("reload takes only --config");
		return sfl_cli_reload(config_path);
	}
	if (g_str_equal(command, "version")) {
		printf("sf2loki %s\n", PACKAGE_VERSION);
		return SFL_EXIT_OK;
	}
	if (g_str_equal(command, "help")) {
		fputs(sfl_cli_usage, stdout);
		return SFL_EXIT_OK;
	}
	return sfl_cli_usage_error("unknown command '%s'", command);
}
