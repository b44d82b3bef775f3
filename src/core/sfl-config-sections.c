/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

#include <string.h>

#include "sfl-config.h"

/*
 * The schema of every section: keys, types and defaults are those of the Python original
 * (docs/config-reference.md lists them) so its config files load unchanged. Help texts are what the
 * generated example and reference show; their first sentence goes into the example.
 */

#define FIELD(st, k, t, m) .key = k, .type = t, .offset = G_STRUCT_OFFSET(st, m)

#define SFL_GENERIC_LOGIN_PRODUCTION "https://login.salesforce.com"
#define SFL_GENERIC_LOGIN_SANDBOX    "https://test.salesforce.com"

static const gchar *const sfl_choices_environment[] = { "production", "sandbox", NULL };
static const gchar *const sfl_choices_auth_mode[] = { "jwt_bearer", "client_credentials", NULL };
static const gchar *const sfl_choices_transform[] = { "hash",	  "mask",	   "drop_field",
						      "drop_row", "regex_replace", NULL };
static const gchar *const sfl_choices_replay[] = { "LATEST", "EARLIEST", "CUSTOM", NULL };
static const gchar *const sfl_choices_cdc_names[] = { "metadata", "line", "off", NULL };
static const gchar *const sfl_choices_interval[] = { "Hourly", "Daily", NULL };
static const gchar *const sfl_choices_budget[] = { "pause", "drop", NULL };
static const gchar *const sfl_choices_encoding[] = { "protobuf", "json", NULL };
static const gchar *const sfl_choices_compression[] = { "snappy", "gzip", "none", NULL };
static const gchar *const sfl_choices_store[] = { "file", "s3", "gcs", NULL };
static const gchar *const sfl_choices_coordinate[] = { "noop",	   "file_lease", "k8s_lease",
						       "s3_lease", "gcs_lease",	 NULL };
static const gchar *const sfl_choices_tel_auth[] = { "basic", "none", NULL };
static const gchar *const sfl_choices_log_level[] = { "debug", "info",	   "warning", "warn",
						      "error", "critical", NULL };
static const gchar *const sfl_choices_log_format[] = { "json", "logfmt", NULL };

/* stream labels the sink may carry; anything else belongs in structured metadata */
static const gchar *const sfl_label_allowlist[] = {
	"job", "service_name", "source", "event_type", "sf_org_id", "environment", "org", NULL
};
/* columns that ELF label promotion may not shadow */
static const gchar *const sfl_label_reserved[] = { "source",	  "event_type", "job", "sf_org_id",
						   "environment", "org",	NULL };

/* a *_file that failed to read was already reported; do not add "required" on top */
static gboolean
sfl_config_has_error_for(SflConfigContext *ctx, const gchar *path)
{
	g_autofree gchar *prefix = g_strdup_printf("%s:", path);
	for (guint i = 0; i < ctx->errors->len; i++) {
		if (g_str_has_prefix(g_ptr_array_index(ctx->errors, i), prefix))
			return TRUE;
	}
	return FALSE;
}

static void
sfl_config_require_secret(SflConfigContext *ctx, const SflConfigNode *node, const gchar *path,
			  const gchar *key, const gchar *value, const gchar *why)
{
	g_autofree gchar *kpath = sfl_config_path_join(path, key);
	g_autofree gchar *fpath = g_strdup_printf("%s_file", kpath);

	if (value != NULL || sfl_config_has_error_for(ctx, fpath))
		return;
	sfl_config_error(ctx, kpath, node,
			 "required %s: set %s_file (or %s); empty or whitespace-only values count "
			 "as absent",
			 why, key, key);
}

/* --- salesforce ----------------------------------------------------------------------------- */

static const SflConfigField sfl_limits_fields[] = {
	{ FIELD(SflSalesforceLimitsConfig, "enabled", SFL_CONFIG_TYPE_BOOL, enabled),
	  .def = "false", .help = "Poll /limits and export org-limit gauges." },
	{ FIELD(SflSalesforceLimitsConfig, "poll_interval", SFL_CONFIG_TYPE_DURATION,
		poll_interval),
	  .def = "5m", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "How often the limits are fetched." },
	{ NULL }
};

static const SflConfigSchema sfl_limits_schema = {
	.name = "LimitsConfig",
	.doc = "Org limits polling (DailyApiRequests and friends) exported as gauges.",
	.struct_size = sizeof(SflSalesforceLimitsConfig),
	.fields = sfl_limits_fields,
};

static void
sfl_salesforce_validate(gpointer obj, const SflConfigNode *node, const gchar *path,
			SflConfigContext *ctx)
{
	SflSalesforceConfig *sf = obj;

	if (sfl_config_text_blank(sf->login_url)) {
		g_free(sf->login_url);
		sf->login_url = g_strdup(sf->environment == SFL_SF_ENVIRONMENT_SANDBOX
						 ? SFL_GENERIC_LOGIN_SANDBOX
						 : SFL_GENERIC_LOGIN_PRODUCTION);
	} else {
		gsize len = strlen(sf->login_url);
		while (len > 0 && sf->login_url[len - 1] == '/')
			sf->login_url[--len] = '\0';
		if (!g_str_has_prefix(sf->login_url, "https://") &&
		    !g_str_has_prefix(sf->login_url, "http://")) {
			g_autofree gchar *kpath = sfl_config_path_join(path, "login_url");
			sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "login_url"),
					 "must be an http(s) URL such as "
					 "https://example.my.salesforce.com");
		}
	}
	if (sf->client_id != NULL && sfl_config_text_blank(sf->client_id)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "client_id");
		sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "client_id"),
				 "must not be empty");
	}
	if (sf->auth_mode == SFL_SF_AUTH_JWT_BEARER) {
		g_autofree gchar *upath = sfl_config_path_join(path, "username");
		if (sfl_config_text_blank(sf->username) && !sfl_config_has_error_for(ctx, upath)) {
			g_autofree gchar *kpath = sfl_config_path_join(path, "username");
			sfl_config_error(ctx, kpath, node,
					 "required for auth_mode jwt_bearer (the JWT subject)");
		}
		sfl_config_require_secret(ctx, node, path, "private_key", sf->private_key,
					  "for auth_mode jwt_bearer");
	} else {
		sfl_config_require_secret(ctx, node, path, "client_secret", sf->client_secret,
					  "for auth_mode client_credentials");
		if (g_str_equal(sf->login_url, SFL_GENERIC_LOGIN_PRODUCTION) ||
		    g_str_equal(sf->login_url, SFL_GENERIC_LOGIN_SANDBOX)) {
			g_autofree gchar *kpath = sfl_config_path_join(path, "login_url");
			sfl_config_error(ctx, kpath, node,
					 "auth_mode client_credentials needs your My Domain URL "
					 "(e.g. https://example.my.salesforce.com), not %s",
					 sf->login_url);
		}
	}
}

static const SflConfigField sfl_salesforce_fields[] = {
	{ FIELD(SflSalesforceConfig, "login_url", SFL_CONFIG_TYPE_STRING, login_url), .def = "\"\"",
	  .def_doc = "derived from environment",
	  .help = "OAuth login host; leave empty to derive it from environment "
		  "(https://login.salesforce.com or https://test.salesforce.com). Set your My "
		  "Domain "
		  "URL for client_credentials." },
	{ FIELD(SflSalesforceConfig, "environment", SFL_CONFIG_TYPE_ENUM, environment),
	  .def = "production", .choices = sfl_choices_environment,
	  .help = "Org kind; also the environment label on every stream." },
	{ FIELD(SflSalesforceConfig, "auth_mode", SFL_CONFIG_TYPE_ENUM, auth_mode),
	  .def = "jwt_bearer", .choices = sfl_choices_auth_mode,
	  .help = "OAuth flow: jwt_bearer (username + private key) or client_credentials "
		  "(client secret, My Domain login_url)." },
	{ FIELD(SflSalesforceConfig, "client_id", SFL_CONFIG_TYPE_STRING, client_id),
	  .flags = SFL_CONFIG_FIELD_REQUIRED, .example = "${SF_CLIENT_ID}",
	  .help = "Connected app consumer key." },
	{ FIELD(SflSalesforceConfig, "client_secret", SFL_CONFIG_TYPE_SECRET, client_secret),
	  .help = "Connected app consumer secret for client_credentials. Prefer "
		  "client_secret_file; "
		  "an inline value wins over the file." },
	{ FIELD(SflSalesforceConfig, "client_secret_file", SFL_CONFIG_TYPE_PATH,
		client_secret_file),
	  .flags = SFL_CONFIG_FIELD_SECRET_FILE,
	  .help = "File holding the consumer secret (surrounding whitespace is stripped)." },
	{ FIELD(SflSalesforceConfig, "username", SFL_CONFIG_TYPE_STRING, username), .def = "\"\"",
	  .example = "${SF_USERNAME}",
	  .help = "Integration user for jwt_bearer (the JWT subject)." },
	{ FIELD(SflSalesforceConfig, "private_key_file", SFL_CONFIG_TYPE_PATH, private_key_file),
	  .flags = SFL_CONFIG_FIELD_SECRET_FILE, .example = "${SF_PRIVATE_KEY_FILE}",
	  .help = "PEM RSA private key for jwt_bearer, e.g. /etc/sf2loki/secrets/private-key." },
	{ FIELD(SflSalesforceConfig, "private_key", SFL_CONFIG_TYPE_SECRET, private_key),
	  .help = "Inline PEM private key; wins over private_key_file when set." },
	{ FIELD(SflSalesforceConfig, "api_version", SFL_CONFIG_TYPE_STRING, api_version),
	  .def = "\"60.0\"", .pattern = "[0-9]+\\.[0-9]+$",
	  .help = "REST API version used as v<api_version> in request paths." },
	{ FIELD(SflSalesforceConfig, "org_id", SFL_CONFIG_TYPE_STRING, org_id),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .help = "18-character org id; set it to skip the userinfo lookup and the openid scope." },
	{ FIELD(SflSalesforceConfig, "token_ttl", SFL_CONFIG_TYPE_DURATION, token_ttl), .def = "1h",
	  .flags = SFL_CONFIG_FIELD_MIN, .min = 120,
	  .help = "Assumed access-token lifetime; tokens are refreshed 60s before it ends, so it "
		  "must be at least 2m." },
	{ FIELD(SflSalesforceConfig, "limits", SFL_CONFIG_TYPE_OBJECT, limits),
	  .schema = &sfl_limits_schema, .help = "Org limits polling." },
	{ NULL }
};

static const SflConfigSchema sfl_salesforce_schema = {
	.name = "SalesforceConfig",
	.doc = "Salesforce org connection and OAuth credentials. Use either this section "
	       "(single org) or orgs (several orgs), never both.",
	.struct_size = sizeof(SflSalesforceConfig),
	.fields = sfl_salesforce_fields,
	.validate = sfl_salesforce_validate,
};

/* --- transforms ----------------------------------------------------------------------------- */

static void
sfl_transform_validate(gpointer obj, const SflConfigNode *node, const gchar *path,
		       SflConfigContext *ctx)
{
	SflTransformRule *rule = obj;
	gboolean has_fields = rule->fields != NULL && rule->fields[0] != NULL;
	gboolean has_match = rule->match != NULL && rule->match->len > 0;

	if (rule->action == SFL_TRANSFORM_DROP_ROW) {
		if (!has_match)
			sfl_config_error(ctx, path, node, "drop_row needs a non-empty match");
		if (has_fields)
			sfl_config_error(ctx, path, node, "drop_row takes match, not fields");
	} else if (!has_fields) {
		sfl_config_error(ctx, path, node, "%s needs a non-empty fields list",
				 sfl_choices_transform[rule->action]);
	}
	if (rule->action == SFL_TRANSFORM_REGEX_REPLACE) {
		g_autoptr(GRegex) re = NULL;
		g_autoptr(GError) error = NULL;
		if (rule->pattern == NULL) {
			sfl_config_error(ctx, path, node, "regex_replace needs a pattern");
		} else if ((re = g_regex_new(rule->pattern, 0, 0, &error)) == NULL) {
			g_autofree gchar *kpath = sfl_config_path_join(path, "pattern");
			sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "pattern"),
					 "pattern does not compile: %s", error->message);
		}
	} else if (rule->pattern != NULL) {
		sfl_config_error(ctx, path, node, "pattern is only allowed with regex_replace");
	}
}

static const SflConfigField sfl_transform_fields[] = {
	{ FIELD(SflTransformRule, "action", SFL_CONFIG_TYPE_ENUM, action),
	  .flags = SFL_CONFIG_FIELD_REQUIRED, .choices = sfl_choices_transform, .example = "hash",
	  .help = "What to do: hash, mask, drop_field, drop_row or regex_replace." },
	{ FIELD(SflTransformRule, "fields", SFL_CONFIG_TYPE_STRING_LIST, fields), .def = "[]",
	  .example = "[USER_EMAIL]",
	  .help = "Payload fields the rule rewrites (every action but drop_row)." },
	{ FIELD(SflTransformRule, "match", SFL_CONFIG_TYPE_STRING_MAP, match), .def = "{}",
	  .help = "drop_row: field to glob; the row is dropped when every glob matches." },
	{ FIELD(SflTransformRule, "pattern", SFL_CONFIG_TYPE_STRING, pattern),
	  .flags = SFL_CONFIG_FIELD_NULLABLE, .help = "regex_replace: the regular expression." },
	{ FIELD(SflTransformRule, "replacement", SFL_CONFIG_TYPE_STRING, replacement),
	  .def = "\"\"",
	  .help = "regex_replace: the replacement (\\1 and \\g<name> back-references)." },
	{ FIELD(SflTransformRule, "name", SFL_CONFIG_TYPE_STRING, name), .def = "\"\"",
	  .help = "Rule name for metrics; defaults to <action>-<index>." },
	{ NULL }
};

static const SflConfigSchema sfl_transform_schema = {
	.name = "TransformRule",
	.doc = "One payload transform, applied in list order before sampling and shaping.",
	.struct_size = sizeof(SflTransformRule),
	.fields = sfl_transform_fields,
	.validate = sfl_transform_validate,
};

/* --- sources -------------------------------------------------------------------------------- */

static const SflConfigField sfl_pubsub_fields[] = {
	{ FIELD(SflPubsubConfig, "enabled", SFL_CONFIG_TYPE_BOOL, enabled), .def = "true",
	  .help = "Stream real-time events over the Pub/Sub API." },
	{ FIELD(SflPubsubConfig, "endpoint", SFL_CONFIG_TYPE_STRING, endpoint),
	  .def = "api.pubsub.salesforce.com:7443",
	  .help = "Pub/Sub API gRPC endpoint (host:port, TLS)." },
	{ FIELD(SflPubsubConfig, "default_num_requested", SFL_CONFIG_TYPE_INT,
		default_num_requested),
	  .def = "100", .flags = SFL_CONFIG_FIELD_MIN | SFL_CONFIG_FIELD_MAX, .min = 1, .max = 100,
	  .help = "Events requested per flow-control round (1 to 100)." },
	{ FIELD(SflPubsubConfig, "replay_preset", SFL_CONFIG_TYPE_ENUM, replay_preset),
	  .def = "CUSTOM", .choices = sfl_choices_replay,
	  .help = "Start position without a stored replay id; CUSTOM resumes from the checkpoint "
		  "and starts at LATEST when there is none. A stored id Salesforce refuses always "
		  "restarts at EARLIEST." },
	{ FIELD(SflPubsubConfig, "cdc_field_names", SFL_CONFIG_TYPE_ENUM, cdc_field_names),
	  .def = "metadata", .choices = sfl_choices_cdc_names,
	  .help = "Where the field names of CDC bitmaps go: metadata (changed_fields, "
		  "nulled_fields, diff_fields), line (changedFieldNames, nulledFieldNames and "
		  "diffFieldNames inside ChangeEventHeader, unlike the original's line) or off." },
	{ FIELD(SflPubsubConfig, "topics", SFL_CONFIG_TYPE_STRING_LIST, topics), .def = "[]",
	  .example = "[/event/LoginEventStream, /event/ApiAnomalyEvent]",
	  .help = "Topics to subscribe; \"*\" discovers the real-time event monitoring channels." },
	{ FIELD(SflPubsubConfig, "include", SFL_CONFIG_TYPE_STRING_LIST, include), .def = "[\"*\"]",
	  .help = "Globs a topic must match at least one of." },
	{ FIELD(SflPubsubConfig, "exclude", SFL_CONFIG_TYPE_STRING_LIST, exclude), .def = "[]",
	  .help = "Globs that drop a topic." },
	{ FIELD(SflPubsubConfig, "rediscovery_interval", SFL_CONFIG_TYPE_DURATION,
		rediscovery_interval),
	  .def = "1h",
	  .help = "How often \"*\" is re-discovered; 0 only at the start of each run." },
	{ FIELD(SflPubsubConfig, "sample", SFL_CONFIG_TYPE_FLOAT_MAP, sample), .def = "{}",
	  .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE | SFL_CONFIG_FIELD_MAX, .min = 0, .max = 1,
	  .help = "Topic glob to kept fraction in (0, 1]; the first matching glob wins." },
	{ FIELD(SflPubsubConfig, "transforms", SFL_CONFIG_TYPE_OBJECT_LIST, transforms),
	  .schema = &sfl_transform_schema, .help = "Transforms applied to each decoded event." },
	{ FIELD(SflPubsubConfig, "bridge_max_bytes", SFL_CONFIG_TYPE_SIZE, bridge_max_bytes),
	  .def = "134217728",
	  .help = "Byte budget of the internal topic bridge; 0 disables byte accounting." },
	{ NULL }
};

static const SflConfigSchema sfl_pubsub_schema = {
	.name = "PubSubConfig",
	.doc = "Pub/Sub API streaming source (real-time event monitoring).",
	.struct_size = sizeof(SflPubsubConfig),
	.fields = sfl_pubsub_fields,
};

static void
sfl_elf_type_validate(gpointer obj, const SflConfigNode *node, const gchar *path,
		      SflConfigContext *ctx)
{
	SflElfTypeConfig *t = obj;
	for (guint i = 0; t->labels != NULL && t->labels[i] != NULL; i++) {
		if (g_strv_contains(sfl_label_reserved, t->labels[i])) {
			g_autofree gchar *kpath = g_strdup_printf("%s.labels[%u]", path, i);
			sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "labels"),
					 "'%s' is a reserved label and cannot be promoted",
					 t->labels[i]);
		}
	}
}

static const SflConfigField sfl_elf_type_fields[] = {
	{ FIELD(SflElfTypeConfig, "name", SFL_CONFIG_TYPE_STRING, name),
	  .flags = SFL_CONFIG_FIELD_REQUIRED, .pattern = "(?:[A-Za-z0-9_]+|\\*)$",
	  .example = "Login",
	  .help = "EventType name, or \"*\" to discover every type the org produces." },
	{ FIELD(SflElfTypeConfig, "structured_metadata_fields", SFL_CONFIG_TYPE_STRING_LIST,
		structured_metadata_fields),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .help = "Columns sent as structured metadata; null inherits sink.loki's list, [] none." },
	{ FIELD(SflElfTypeConfig, "labels", SFL_CONFIG_TYPE_STRING_LIST, labels), .def = "[]",
	  .pattern = "[A-Za-z_][A-Za-z0-9_]*$",
	  .help = "Columns promoted to stream labels (keep their cardinality low)." },
	{ FIELD(SflElfTypeConfig, "sample", SFL_CONFIG_TYPE_FLOAT, sample), .def = "1.0",
	  .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE | SFL_CONFIG_FIELD_MAX, .min = 0, .max = 1,
	  .help = "Kept fraction of rows in (0, 1]." },
	{ NULL }
};

static const SflConfigSchema sfl_elf_type_schema = {
	.name = "EventLogFileTypeConfig",
	.doc = "One EventType; a bare string is shorthand for {name: <string>}.",
	.struct_size = sizeof(SflElfTypeConfig),
	.fields = sfl_elf_type_fields,
	.validate = sfl_elf_type_validate,
	.scalar_key = "name",
};

static void
sfl_elf_validate(gpointer obj, const SflConfigNode *node, const gchar *path, SflConfigContext *ctx)
{
	SflEventLogFileConfig *elf = obj;

	if (elf->settle_window == SFL_DURATION_UNSET)
		elf->settle_window =
			elf->interval == SFL_ELF_INTERVAL_HOURLY ? 5 * 60 * G_USEC_PER_SEC : 0;
	if (elf->enabled && elf->event_types->len == 0) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "event_types");
		sfl_config_error(ctx, kpath, node,
				 "must list at least one EventType (or \"*\") when the source is "
				 "enabled");
	}
	/* a dropped column cannot also be a label */
	for (guint r = 0; r < elf->transforms->len; r++) {
		SflTransformRule *rule = g_ptr_array_index(elf->transforms, r);
		if (rule->action != SFL_TRANSFORM_DROP_FIELD || rule->fields == NULL)
			continue;
		for (guint t = 0; t < elf->event_types->len; t++) {
			SflElfTypeConfig *type = g_ptr_array_index(elf->event_types, t);
			for (guint f = 0; rule->fields[f] != NULL; f++) {
				if (type->labels != NULL &&
				    g_strv_contains((const gchar *const *)type->labels,
						    rule->fields[f])) {
					g_autofree gchar *kpath =
						g_strdup_printf("%s.transforms[%u]", path, r);
					sfl_config_error(ctx, kpath, node,
							 "drop_field removes '%s', which event "
							 "type '%s' promotes to a label",
							 rule->fields[f], type->name);
				}
			}
		}
	}
}

static const SflConfigField sfl_elf_fields[] = {
	{ FIELD(SflEventLogFileConfig, "enabled", SFL_CONFIG_TYPE_BOOL, enabled), .def = "false",
	  .help = "Download EventLogFile CSVs." },
	{ FIELD(SflEventLogFileConfig, "interval", SFL_CONFIG_TYPE_ENUM, interval), .def = "Hourly",
	  .choices = sfl_choices_interval,
	  .help = "Which file family to ingest, Hourly or Daily (they are redundant copies)." },
	{ FIELD(SflEventLogFileConfig, "event_types", SFL_CONFIG_TYPE_OBJECT_LIST, event_types),
	  .schema = &sfl_elf_type_schema, .help = "EventTypes to ingest (required when enabled)." },
	{ FIELD(SflEventLogFileConfig, "exclude", SFL_CONFIG_TYPE_STRING_LIST, exclude),
	  .def = "[]", .help = "Discovered EventTypes to skip (only with \"*\")." },
	{ FIELD(SflEventLogFileConfig, "poll_interval", SFL_CONFIG_TYPE_DURATION, poll_interval),
	  .def = "1h", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "Cycle period (with +/-10% jitter)." },
	{ FIELD(SflEventLogFileConfig, "lookback", SFL_CONFIG_TYPE_DURATION, lookback),
	  .def = "24h", .help = "Window read on the first run, before any checkpoint exists." },
	{ FIELD(SflEventLogFileConfig, "timestamp_column", SFL_CONFIG_TYPE_STRING,
		timestamp_column),
	  .def = "TIMESTAMP_DERIVED",
	  .help = "Row time column; TIMESTAMP is always tried second." },
	{ FIELD(SflEventLogFileConfig, "page_size", SFL_CONFIG_TYPE_INT, page_size), .def = "1000",
	  .flags = SFL_CONFIG_FIELD_MIN | SFL_CONFIG_FIELD_MAX, .min = 1, .max = 2000,
	  .help = "SOQL LIMIT of the per-type file listing." },
	{ FIELD(SflEventLogFileConfig, "settle_window", SFL_CONFIG_TYPE_DURATION, settle_window),
	  .flags = SFL_CONFIG_FIELD_NULLABLE, .def_doc = "5m for Hourly, else 0s",
	  .help = "Files younger than this are left for the next cycle; unset means 5m for Hourly "
		  "and 0s for Daily." },
	{ FIELD(SflEventLogFileConfig, "download_max_age", SFL_CONFIG_TYPE_DURATION,
		download_max_age),
	  .def = "24h", .help = "A file that keeps failing and is older than this is abandoned." },
	{ FIELD(SflEventLogFileConfig, "transforms", SFL_CONFIG_TYPE_OBJECT_LIST, transforms),
	  .schema = &sfl_transform_schema, .help = "Transforms applied to each CSV row." },
	{ FIELD(SflEventLogFileConfig, "concurrency", SFL_CONFIG_TYPE_INT, concurrency), .def = "4",
	  .flags = SFL_CONFIG_FIELD_MIN | SFL_CONFIG_FIELD_MAX, .min = 1, .max = 64,
	  .help = "EventTypes processed at once per cycle." },
	{ NULL }
};

static const SflConfigSchema sfl_elf_schema = {
	.name = "EventLogFileConfig",
	.doc = "EventLogFile CSV source (hourly or daily log files).",
	.struct_size = sizeof(SflEventLogFileConfig),
	.fields = sfl_elf_fields,
	.validate = sfl_elf_validate,
};

static const SflConfigField sfl_object_fields[] = {
	{ FIELD(SflEventLogObjectConfig, "name", SFL_CONFIG_TYPE_STRING, name),
	  .flags = SFL_CONFIG_FIELD_REQUIRED, .pattern = "[A-Za-z0-9_]+$", .example = "LoginEvent",
	  .help = "sObject API name (standard, custom __c, or big object)." },
	{ FIELD(SflEventLogObjectConfig, "timestamp_field", SFL_CONFIG_TYPE_STRING,
		timestamp_field),
	  .def = "EventDate", .pattern = "[A-Za-z0-9_]+$",
	  .help = "Watermark field the poll cursor follows." },
	{ FIELD(SflEventLogObjectConfig, "poll_interval", SFL_CONFIG_TYPE_DURATION, poll_interval),
	  .def = "5m", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "Poll period for this object." },
	{ FIELD(SflEventLogObjectConfig, "lookback", SFL_CONFIG_TYPE_DURATION, lookback),
	  .def = "1h",
	  .help = "Window read on the first run or when the stored watermark is invalid." },
	{ FIELD(SflEventLogObjectConfig, "sample", SFL_CONFIG_TYPE_FLOAT, sample), .def = "1.0",
	  .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE | SFL_CONFIG_FIELD_MAX, .min = 0, .max = 1,
	  .help = "Kept fraction of records in (0, 1]." },
	{ FIELD(SflEventLogObjectConfig, "big_object", SFL_CONFIG_TYPE_BOOL, big_object),
	  .def = "false", .help = "Use the newest-first drain that big objects need." },
	{ FIELD(SflEventLogObjectConfig, "max_catchup_records", SFL_CONFIG_TYPE_INT,
		max_catchup_records),
	  .def = "200000", .flags = SFL_CONFIG_FIELD_MIN, .min = 0,
	  .help = "Records kept per big-object drain cycle; 0 is unbounded." },
	{ FIELD(SflEventLogObjectConfig, "settle_window", SFL_CONFIG_TYPE_DURATION, settle_window),
	  .def = "1m", .flags = SFL_CONFIG_FIELD_MIN, .min = 0,
	  .help = "Records newer than this are left for a later poll, so rows that become "
		  "queryable a little after their timestamp are not skipped (not in the Python "
		  "original; 0 reads up to now)." },
	{ NULL }
};

static const SflConfigSchema sfl_object_schema = {
	.name = "EventLogObjectConfig",
	.doc = "One polled object.",
	.struct_size = sizeof(SflEventLogObjectConfig),
	.fields = sfl_object_fields,
};

static const SflConfigField sfl_objects_fields[] = {
	{ FIELD(SflEventLogObjectsConfig, "enabled", SFL_CONFIG_TYPE_BOOL, enabled), .def = "false",
	  .help = "Poll event objects with SOQL." },
	{ FIELD(SflEventLogObjectsConfig, "objects", SFL_CONFIG_TYPE_OBJECT_LIST, objects),
	  .schema = &sfl_object_schema, .help = "Objects to poll." },
	{ FIELD(SflEventLogObjectsConfig, "transforms", SFL_CONFIG_TYPE_OBJECT_LIST, transforms),
	  .schema = &sfl_transform_schema,
	  .help = "Transforms applied to every record of every object." },
	{ NULL }
};

static const SflConfigSchema sfl_objects_schema = {
	.name = "EventLogObjectsConfig",
	.doc = "SOQL-polled event objects (stored events and big objects).",
	.struct_size = sizeof(SflEventLogObjectsConfig),
	.fields = sfl_objects_fields,
};

static const SflConfigField sfl_apexlog_fields[] = {
	{ FIELD(SflApexLogConfig, "enabled", SFL_CONFIG_TYPE_BOOL, enabled), .def = "false",
	  .help = "Ingest Apex debug logs (opt-in; needs active TraceFlags)." },
	{ FIELD(SflApexLogConfig, "poll_interval", SFL_CONFIG_TYPE_DURATION, poll_interval),
	  .def = "1m", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "Poll period (with +/-10% jitter)." },
	{ FIELD(SflApexLogConfig, "lookback", SFL_CONFIG_TYPE_DURATION, lookback), .def = "1h",
	  .help = "Window read on the first run or when the watermark is invalid." },
	{ FIELD(SflApexLogConfig, "users", SFL_CONFIG_TYPE_STRING_LIST, users), .def = "[]",
	  .pattern = "[A-Za-z0-9._%+\\-@]+$",
	  .help = "Only logs of these usernames; empty means every visible log." },
	{ FIELD(SflApexLogConfig, "max_body_bytes", SFL_CONFIG_TYPE_SIZE, max_body_bytes),
	  .def = "5242880", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "Logs larger than this ship metadata only." },
	{ FIELD(SflApexLogConfig, "sample", SFL_CONFIG_TYPE_FLOAT, sample), .def = "1.0",
	  .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE | SFL_CONFIG_FIELD_MAX, .min = 0, .max = 1,
	  .help = "Kept fraction of logs in (0, 1]." },
	{ FIELD(SflApexLogConfig, "transforms", SFL_CONFIG_TYPE_OBJECT_LIST, transforms),
	  .schema = &sfl_transform_schema,
	  .help = "Transforms applied to the log metadata (never the body)." },
	{ FIELD(SflApexLogConfig, "download_max_age", SFL_CONFIG_TYPE_DURATION, download_max_age),
	  .def = "24h",
	  .help = "A log whose body keeps failing to download and is older than this ships "
		  "metadata only (not in the Python original, SFL-0009)." },
	{ NULL }
};

static const SflConfigSchema sfl_apexlog_schema = {
	.name = "ApexLogConfig",
	.doc = "ApexLog source (Tooling API debug logs).",
	.struct_size = sizeof(SflApexLogConfig),
	.fields = sfl_apexlog_fields,
};

static const SflConfigField sfl_sources_fields[] = {
	{ FIELD(SflSourcesConfig, "pubsub", SFL_CONFIG_TYPE_OBJECT, pubsub),
	  .schema = &sfl_pubsub_schema, .help = "Pub/Sub API streaming." },
	{ FIELD(SflSourcesConfig, "eventlog_objects", SFL_CONFIG_TYPE_OBJECT, eventlog_objects),
	  .schema = &sfl_objects_schema, .help = "SOQL-polled objects." },
	{ FIELD(SflSourcesConfig, "eventlogfile", SFL_CONFIG_TYPE_OBJECT, eventlogfile),
	  .schema = &sfl_elf_schema, .help = "EventLogFile CSVs." },
	{ FIELD(SflSourcesConfig, "apexlog", SFL_CONFIG_TYPE_OBJECT, apexlog),
	  .schema = &sfl_apexlog_schema, .help = "Apex debug logs." },
	{ FIELD(SflSourcesConfig, "allow_overlap", SFL_CONFIG_TYPE_BOOL, allow_overlap),
	  .def = "false",
	  .help = "Allow one event category from several sources (ingests it twice)." },
	{ FIELD(SflSourcesConfig, "transform_salt", SFL_CONFIG_TYPE_SECRET, transform_salt),
	  .help = "Salt for hash transforms; prefer transform_salt_file." },
	{ FIELD(SflSourcesConfig, "transform_salt_file", SFL_CONFIG_TYPE_PATH, transform_salt_file),
	  .flags = SFL_CONFIG_FIELD_SECRET_FILE, .help = "File holding the hash salt." },
	{ NULL }
};

static const SflConfigSchema sfl_sources_schema = {
	.name = "SourcesConfig",
	.doc = "What to read from the org.",
	.struct_size = sizeof(SflSourcesConfig),
	.fields = sfl_sources_fields,
};

/* --- orgs ----------------------------------------------------------------------------------- */

static const SflConfigField sfl_org_fields[] = {
	{ FIELD(SflOrgConfig, "name", SFL_CONFIG_TYPE_STRING, name),
	  .flags = SFL_CONFIG_FIELD_REQUIRED, .pattern = "[A-Za-z0-9_-]+$", .example = "prod",
	  .help = "Org name: the org label and the org=<name>: checkpoint prefix." },
	{ FIELD(SflOrgConfig, "salesforce", SFL_CONFIG_TYPE_OBJECT, salesforce),
	  .flags = SFL_CONFIG_FIELD_REQUIRED, .schema = &sfl_salesforce_schema,
	  .help = "This org's connection (as the top-level salesforce section)." },
	{ FIELD(SflOrgConfig, "sources", SFL_CONFIG_TYPE_OBJECT, sources),
	  .schema = &sfl_sources_schema,
	  .help = "This org's sources (as the top-level sources section)." },
	{ NULL }
};

static const SflConfigSchema sfl_org_schema = {
	.name = "OrgConfig",
	.doc = "One org of a multi-org deployment.",
	.struct_size = sizeof(SflOrgConfig),
	.fields = sfl_org_fields,
};

/* --- sink ----------------------------------------------------------------------------------- */

static const SflConfigField sfl_batch_fields[] = {
	{ FIELD(SflLokiBatchConfig, "max_entries", SFL_CONFIG_TYPE_INT, max_entries), .def = "1000",
	  .flags = SFL_CONFIG_FIELD_MIN, .min = 1, .help = "Entries per push." },
	{ FIELD(SflLokiBatchConfig, "max_bytes", SFL_CONFIG_TYPE_SIZE, max_bytes), .def = "1048576",
	  .flags = SFL_CONFIG_FIELD_MIN, .min = 1, .help = "Line bytes per push." },
	{ FIELD(SflLokiBatchConfig, "flush_interval", SFL_CONFIG_TYPE_DURATION, flush_interval),
	  .def = "1s", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "Longest time an entry waits for its batch to fill." },
	{ FIELD(SflLokiBatchConfig, "max_line_bytes", SFL_CONFIG_TYPE_SIZE, max_line_bytes),
	  .def = "262144",
	  .help = "Lines longer than this are truncated with a marker; 0 disables." },
	{ FIELD(SflLokiBatchConfig, "queue_maxsize", SFL_CONFIG_TYPE_INT, queue_maxsize),
	  .def = "10000", .flags = SFL_CONFIG_FIELD_MIN, .min = 100,
	  .help = "Entries queued per lane before sources are paused (at least 100)." },
	{ FIELD(SflLokiBatchConfig, "queue_max_bytes", SFL_CONFIG_TYPE_SIZE, queue_max_bytes),
	  .def = "268435456",
	  .help = "Bytes queued per lane before sources are paused; 0 disables." },
	{ NULL }
};

static const SflConfigSchema sfl_batch_schema = {
	.name = "BatchConfig",
	.doc = "Batching and the bounded per-lane queues.",
	.struct_size = sizeof(SflLokiBatchConfig),
	.fields = sfl_batch_fields,
};

static const SflConfigField sfl_egress_fields[] = {
	{ FIELD(SflLokiEgressConfig, "max_lines_per_second", SFL_CONFIG_TYPE_FLOAT,
		max_lines_per_second),
	  .def = "0", .flags = SFL_CONFIG_FIELD_MIN, .min = 0, .help = "Line rate cap; 0 is off." },
	{ FIELD(SflLokiEgressConfig, "max_bytes_per_second", SFL_CONFIG_TYPE_FLOAT,
		max_bytes_per_second),
	  .def = "0", .flags = SFL_CONFIG_FIELD_MIN, .min = 0, .help = "Byte rate cap; 0 is off." },
	{ FIELD(SflLokiEgressConfig, "daily_byte_budget", SFL_CONFIG_TYPE_SIZE, daily_byte_budget),
	  .def = "0", .help = "Bytes per UTC day; 0 is off." },
	{ FIELD(SflLokiEgressConfig, "budget_action", SFL_CONFIG_TYPE_ENUM, budget_action),
	  .def = "pause", .choices = sfl_choices_budget,
	  .help = "When the budget is spent: pause until midnight UTC, or drop (counted)." },
	{ NULL }
};

static const SflConfigSchema sfl_egress_schema = {
	.name = "EgressConfig",
	.doc = "Cost controls; all off by default.",
	.struct_size = sizeof(SflLokiEgressConfig),
	.fields = sfl_egress_fields,
};

static const SflConfigField sfl_label_cardinality_fields[] = {
	{ FIELD(SflLokiLabelCardinalityConfig, "max_values", SFL_CONFIG_TYPE_INT, max_values),
	  .def = "100", .flags = SFL_CONFIG_FIELD_MIN, .min = 0,
	  .help = "Distinct values a promoted label may take per window; later ones are sent as "
		  "`__other__`. 0 disables the guard." },
	{ FIELD(SflLokiLabelCardinalityConfig, "window", SFL_CONFIG_TYPE_DURATION, window),
	  .def = "1h", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "How long admitted values stay admitted; then every label starts afresh." },
	{ NULL }
};

static const SflConfigSchema sfl_label_cardinality_schema = {
	.name = "LabelCardinalityConfig",
	.doc = "Cardinality guard on labels promoted from data (eventlogfile types' labels).",
	.struct_size = sizeof(SflLokiLabelCardinalityConfig),
	.fields = sfl_label_cardinality_fields,
};

static gint
sfl_config_cmp_strptr(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

static void
sfl_loki_validate(gpointer obj, const SflConfigNode *node, const gchar *path, SflConfigContext *ctx)
{
	SflLokiConfig *loki = obj;
	g_autoptr(GPtrArray) bad = g_ptr_array_new();

	if (loki->url != NULL) {
		if (sfl_config_text_blank(loki->url)) {
			g_autofree gchar *kpath = sfl_config_path_join(path, "url");
			sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "url"),
					 "must not be empty");
		} else if (!g_str_has_prefix(loki->url, "http://") &&
			   !g_str_has_prefix(loki->url, "https://")) {
			g_autofree gchar *kpath = sfl_config_path_join(path, "url");
			sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "url"),
					 "must be an http(s) URL such as "
					 "https://loki.example.com/loki/api/v1/push");
		}
	}
	for (guint i = 0; i < loki->labels->len; i++) {
		SflConfigPair *pair = g_ptr_array_index(loki->labels, i);
		if (!g_strv_contains(sfl_label_allowlist, pair->key) ||
		    g_str_equal(pair->key, "source") || g_str_equal(pair->key, "event_type"))
			g_ptr_array_add(bad, pair->key);
	}
	if (bad->len > 0) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "labels");
		g_autoptr(GString) names = g_string_new(NULL);
		g_ptr_array_sort(bad, sfl_config_cmp_strptr);
		for (guint i = 0; i < bad->len; i++)
			g_string_append_printf(names, "%s%s", i ? ", " : "",
					       (const gchar *)g_ptr_array_index(bad, i));
		sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "labels"),
				 "disallowed label keys: %s (static labels may only be job, "
				 "service_name, sf_org_id, environment, org)",
				 names->str);
	}
}

static const SflConfigField sfl_loki_fields[] = {
	{ FIELD(SflLokiConfig, "url", SFL_CONFIG_TYPE_STRING, url),
	  .flags = SFL_CONFIG_FIELD_REQUIRED, .example = "${LOKI_URL}",
	  .help = "Loki push URL, e.g. https://loki.example.com/loki/api/v1/push." },
	{ FIELD(SflLokiConfig, "tenant_id", SFL_CONFIG_TYPE_STRING, tenant_id),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .help = "Tenant: sent as X-Scope-OrgID when there is no auth_token, else the basic-auth "
		  "user (Grafana Cloud: the numeric user)." },
	{ FIELD(SflLokiConfig, "auth_token_file", SFL_CONFIG_TYPE_PATH, auth_token_file),
	  .flags = SFL_CONFIG_FIELD_SECRET_FILE, .help = "File holding the Loki token." },
	{ FIELD(SflLokiConfig, "auth_token", SFL_CONFIG_TYPE_SECRET, auth_token),
	  .help = "Loki token, sent as basic auth with tenant_id (or an empty user) as the user "
		  "and no X-Scope-OrgID; prefer auth_token_file." },
	{ FIELD(SflLokiConfig, "encoding", SFL_CONFIG_TYPE_ENUM, encoding), .def = "protobuf",
	  .choices = sfl_choices_encoding, .help = "Push encoding: protobuf (snappy) or json." },
	{ FIELD(SflLokiConfig, "compression", SFL_CONFIG_TYPE_ENUM, compression), .def = "snappy",
	  .choices = sfl_choices_compression,
	  .help = "JSON body compression: gzip or none (protobuf is always snappy)." },
	{ FIELD(SflLokiConfig, "batch", SFL_CONFIG_TYPE_OBJECT, batch), .schema = &sfl_batch_schema,
	  .help = "Batching." },
	{ FIELD(SflLokiConfig, "egress", SFL_CONFIG_TYPE_OBJECT, egress),
	  .schema = &sfl_egress_schema, .help = "Cost controls." },
	{ FIELD(SflLokiConfig, "labels", SFL_CONFIG_TYPE_STRING_MAP, labels), .def = "{}",
	  .example = "{job: sf2loki}",
	  .help = "Static stream labels (job, service_name, sf_org_id, environment, org)." },
	{ FIELD(SflLokiConfig, "label_cardinality", SFL_CONFIG_TYPE_OBJECT, label_cardinality),
	  .schema = &sfl_label_cardinality_schema,
	  .help = "Runtime limit on distinct values of promoted labels." },
	{ FIELD(SflLokiConfig, "structured_metadata_fields", SFL_CONFIG_TYPE_STRING_LIST,
		structured_metadata_fields),
	  .def = "[]", .help = "Payload fields promoted to structured metadata." },
	{ FIELD(SflLokiConfig, "ca_file", SFL_CONFIG_TYPE_PATH, ca_file),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .help = "PEM bundle of the only CAs trusted for the Loki endpoint (no other client uses "
		  "it); null uses SSL_CERT_FILE / SSL_CERT_DIR, else the system store. "
		  "Certificates are always verified." },
	{ NULL }
};

static const SflConfigSchema sfl_loki_schema = {
	.name = "LokiConfig",
	.doc = "Grafana Loki push endpoint.",
	.struct_size = sizeof(SflLokiConfig),
	.fields = sfl_loki_fields,
	.validate = sfl_loki_validate,
};

static const SflConfigField sfl_sink_fields[] = {
	{ FIELD(SflSinkConfig, "loki", SFL_CONFIG_TYPE_OBJECT, loki),
	  .flags = SFL_CONFIG_FIELD_REQUIRED, .schema = &sfl_loki_schema, .help = "Loki." },
	{ NULL }
};

static const SflConfigSchema sfl_sink_schema = {
	.name = "SinkConfig",
	.doc = "Where entries go.",
	.struct_size = sizeof(SflSinkConfig),
	.fields = sfl_sink_fields,
};

/* --- state ---------------------------------------------------------------------------------- */

static const SflConfigField sfl_state_file_fields[] = {
	{ FIELD(SflStateFileConfig, "path", SFL_CONFIG_TYPE_PATH, path),
	  .def_state_file = "state.json",
	  .help = "Checkpoint file (written atomically; keep it on local disk or NFS)." },
	{ NULL }
};

static const SflConfigSchema sfl_state_file_schema = {
	.name = "FileStoreConfig",
	.doc = "Local checkpoint file.",
	.struct_size = sizeof(SflStateFileConfig),
	.fields = sfl_state_file_fields,
};

static const SflConfigField sfl_state_s3_fields[] = {
	{ FIELD(SflStateS3Config, "bucket", SFL_CONFIG_TYPE_STRING, bucket), .def = "\"\"",
	  .help = "Bucket (required when store is s3)." },
	{ FIELD(SflStateS3Config, "key", SFL_CONFIG_TYPE_STRING, key), .def = "sf2loki/state.json",
	  .help = "Object key of the checkpoint document." },
	{ FIELD(SflStateS3Config, "region", SFL_CONFIG_TYPE_STRING, region),
	  .flags = SFL_CONFIG_FIELD_NULLABLE, .help = "Region; null uses the credential chain's." },
	{ FIELD(SflStateS3Config, "endpoint_url", SFL_CONFIG_TYPE_STRING, endpoint_url),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .help = "S3-compatible endpoint (MinIO, R2); null for AWS." },
	{ NULL }
};

static const SflConfigSchema sfl_state_s3_schema = {
	.name = "S3StoreConfig",
	.doc = "Checkpoints in one S3 object (conditional writes).",
	.struct_size = sizeof(SflStateS3Config),
	.fields = sfl_state_s3_fields,
};

static const SflConfigField sfl_state_gcs_fields[] = {
	{ FIELD(SflStateGcsConfig, "bucket", SFL_CONFIG_TYPE_STRING, bucket), .def = "\"\"",
	  .help = "Bucket (required when store is gcs)." },
	{ FIELD(SflStateGcsConfig, "object_name", SFL_CONFIG_TYPE_STRING, object_name),
	  .def = "sf2loki/state.json", .help = "Object name of the checkpoint document." },
	{ FIELD(SflStateGcsConfig, "service_file", SFL_CONFIG_TYPE_PATH, service_file),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .help = "Service-account JSON; null uses application default credentials." },
	{ NULL }
};

static const SflConfigSchema sfl_state_gcs_schema = {
	.name = "GcsStoreConfig",
	.doc = "Checkpoints in one GCS object (generation preconditions).",
	.struct_size = sizeof(SflStateGcsConfig),
	.fields = sfl_state_gcs_fields,
};

static const SflConfigField sfl_state_deadletter_fields[] = {
	{ FIELD(SflStateDeadletterConfig, "enabled", SFL_CONFIG_TYPE_BOOL, enabled), .def = "true",
	  .help = "Keep entries Loki refused for good, and budget drops, for `sf2loki deadletter` "
		  "(not in the Python original)." },
	{ FIELD(SflStateDeadletterConfig, "path", SFL_CONFIG_TYPE_PATH, path),
	  .flags = SFL_CONFIG_FIELD_NULLABLE, .def_doc = "deadletter/ next to state.file.path",
	  .help = "Directory of the dead-letter segments (local disk, mode 0700)." },
	{ FIELD(SflStateDeadletterConfig, "max_bytes", SFL_CONFIG_TYPE_SIZE, max_bytes),
	  .def = "67108864", .flags = SFL_CONFIG_FIELD_MIN, .min = 65536,
	  .help = "Size bound (at least 64 KiB): the oldest segments go first beyond it." },
	{ FIELD(SflStateDeadletterConfig, "max_age", SFL_CONFIG_TYPE_DURATION, max_age),
	  .def = "168h",
	  .help = "Segments whose newest entry is older than this go; 0s keeps "
		  "them until max_bytes." },
	{ NULL }
};

static const SflConfigSchema sfl_state_deadletter_schema = {
	.name = "DeadletterConfig",
	.doc = "Entries that will never reach Loki as sent, kept for list, replay and purge.",
	.struct_size = sizeof(SflStateDeadletterConfig),
	.fields = sfl_state_deadletter_fields,
};

static void
sfl_state_validate(gpointer obj, const SflConfigNode *node, const gchar *path,
		   SflConfigContext *ctx)
{
	SflStateConfig *state = obj;
	if (state->store == SFL_STATE_STORE_S3 && sfl_config_text_blank(state->s3.bucket)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "s3.bucket");
		sfl_config_error(ctx, kpath, node, "required when state.store is s3");
	}
	if (state->store == SFL_STATE_STORE_GCS && sfl_config_text_blank(state->gcs.bucket)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "gcs.bucket");
		sfl_config_error(ctx, kpath, node, "required when state.store is gcs");
	}
	if (state->store == SFL_STATE_STORE_FILE && sfl_config_text_blank(state->file.path)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "file.path");
		sfl_config_error(ctx, kpath, node, "must not be empty");
	}
}

static const SflConfigField sfl_state_fields[] = {
	{ FIELD(SflStateConfig, "store", SFL_CONFIG_TYPE_ENUM, store), .def = "file",
	  .choices = sfl_choices_store, .help = "Checkpoint backend: file, s3 or gcs." },
	{ FIELD(SflStateConfig, "file", SFL_CONFIG_TYPE_OBJECT, file),
	  .schema = &sfl_state_file_schema, .help = "File store." },
	{ FIELD(SflStateConfig, "s3", SFL_CONFIG_TYPE_OBJECT, s3), .schema = &sfl_state_s3_schema,
	  .help = "S3 store." },
	{ FIELD(SflStateConfig, "gcs", SFL_CONFIG_TYPE_OBJECT, gcs),
	  .schema = &sfl_state_gcs_schema, .help = "GCS store." },
	{ FIELD(SflStateConfig, "deadletter", SFL_CONFIG_TYPE_OBJECT, deadletter),
	  .schema = &sfl_state_deadletter_schema, .help = "Dead-letter store." },
	{ NULL }
};

static const SflConfigSchema sfl_state_schema = {
	.name = "StateConfig",
	.doc = "Where checkpoints live. They are committed only after Loki accepted the data.",
	.struct_size = sizeof(SflStateConfig),
	.fields = sfl_state_fields,
	.validate = sfl_state_validate,
};

/* --- coordinate ----------------------------------------------------------------------------- */

static const SflConfigField sfl_file_lease_fields[] = {
	{ FIELD(SflFileLeaseConfig, "path", SFL_CONFIG_TYPE_PATH, path),
	  .def_state_file = "leader.lease", .help = "Lease file on storage every replica shares." },
	{ FIELD(SflFileLeaseConfig, "ttl", SFL_CONFIG_TYPE_DURATION, ttl), .def = "30s",
	  .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "A lease not renewed for this long may be taken over." },
	{ FIELD(SflFileLeaseConfig, "renew_interval", SFL_CONFIG_TYPE_DURATION, renew_interval),
	  .def = "10s", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "How often the leader renews; 2 x renew_interval must be below ttl." },
	{ FIELD(SflFileLeaseConfig, "holder_id", SFL_CONFIG_TYPE_STRING, holder_id), .def = "\"\"",
	  .def_doc = "hostname-pid", .help = "This replica's identity; empty means hostname-pid." },
	{ NULL }
};

static const SflConfigSchema sfl_file_lease_schema = {
	.name = "FileLeaseConfig",
	.doc = "Lease file on shared storage.",
	.struct_size = sizeof(SflFileLeaseConfig),
	.fields = sfl_file_lease_fields,
};

static const SflConfigField sfl_k8s_lease_fields[] = {
	{ FIELD(SflK8sLeaseConfig, "namespace", SFL_CONFIG_TYPE_STRING, namespace_),
	  .def = "default", .help = "Namespace of the Lease." },
	{ FIELD(SflK8sLeaseConfig, "name", SFL_CONFIG_TYPE_STRING, name), .def = "sf2loki-leader",
	  .help = "Name of the coordination.k8s.io/v1 Lease." },
	{ FIELD(SflK8sLeaseConfig, "identity", SFL_CONFIG_TYPE_STRING, identity), .def = "\"\"",
	  .def_doc = "pod hostname",
	  .help = "Holder identity; empty means the hostname (the pod name)." },
	{ FIELD(SflK8sLeaseConfig, "lease_duration", SFL_CONFIG_TYPE_DURATION, lease_duration),
	  .def = "30s", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "A lease unchanged for this long may be taken over." },
	{ FIELD(SflK8sLeaseConfig, "renew_interval", SFL_CONFIG_TYPE_DURATION, renew_interval),
	  .def = "10s", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "How often the leader renews; 2 x renew_interval must be below lease_duration." },
	{ FIELD(SflK8sLeaseConfig, "kubeconfig", SFL_CONFIG_TYPE_PATH, kubeconfig),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .help = "Kubeconfig for out-of-cluster runs; null uses the in-cluster service account." },
	{ NULL }
};

static const SflConfigSchema sfl_k8s_lease_schema = {
	.name = "K8sLeaseConfig",
	.doc = "Kubernetes Lease object.",
	.struct_size = sizeof(SflK8sLeaseConfig),
	.fields = sfl_k8s_lease_fields,
};

static const SflConfigField sfl_s3_lease_fields[] = {
	{ FIELD(SflS3LeaseConfig, "bucket", SFL_CONFIG_TYPE_STRING, bucket), .def = "\"\"",
	  .help = "Bucket (required when type is s3_lease)." },
	{ FIELD(SflS3LeaseConfig, "key", SFL_CONFIG_TYPE_STRING, key), .def = "sf2loki/leader.json",
	  .help = "Object key of the lease; never the checkpoint object." },
	{ FIELD(SflS3LeaseConfig, "region", SFL_CONFIG_TYPE_STRING, region),
	  .flags = SFL_CONFIG_FIELD_NULLABLE, .help = "Region; null uses the credential chain's." },
	{ FIELD(SflS3LeaseConfig, "endpoint_url", SFL_CONFIG_TYPE_STRING, endpoint_url),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .help = "S3-compatible endpoint (MinIO, R2); null for AWS." },
	{ FIELD(SflS3LeaseConfig, "ttl", SFL_CONFIG_TYPE_DURATION, ttl), .def = "30s",
	  .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "A lease object unchanged for this long may be taken over." },
	{ FIELD(SflS3LeaseConfig, "renew_interval", SFL_CONFIG_TYPE_DURATION, renew_interval),
	  .def = "10s", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "How often the leader renews; 2 x renew_interval must be below ttl." },
	{ FIELD(SflS3LeaseConfig, "holder_id", SFL_CONFIG_TYPE_STRING, holder_id), .def = "\"\"",
	  .def_doc = "hostname-pid", .help = "This replica's identity; empty means hostname-pid." },
	{ NULL }
};

static const SflConfigSchema sfl_s3_lease_schema = {
	.name = "S3LeaseConfig",
	.doc = "Lease object in S3 (conditional writes; for stateless platforms).",
	.struct_size = sizeof(SflS3LeaseConfig),
	.fields = sfl_s3_lease_fields,
};

static const SflConfigField sfl_gcs_lease_fields[] = {
	{ FIELD(SflGcsLeaseConfig, "bucket", SFL_CONFIG_TYPE_STRING, bucket), .def = "\"\"",
	  .help = "Bucket (required when type is gcs_lease)." },
	{ FIELD(SflGcsLeaseConfig, "object_name", SFL_CONFIG_TYPE_STRING, object_name),
	  .def = "sf2loki/leader.json",
	  .help = "Object name of the lease; never the checkpoint object." },
	{ FIELD(SflGcsLeaseConfig, "service_file", SFL_CONFIG_TYPE_PATH, service_file),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .help = "Service-account JSON; null uses application default credentials." },
	{ FIELD(SflGcsLeaseConfig, "ttl", SFL_CONFIG_TYPE_DURATION, ttl), .def = "30s",
	  .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "A lease object unchanged for this long may be taken over." },
	{ FIELD(SflGcsLeaseConfig, "renew_interval", SFL_CONFIG_TYPE_DURATION, renew_interval),
	  .def = "10s", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "How often the leader renews; 2 x renew_interval must be below ttl." },
	{ FIELD(SflGcsLeaseConfig, "holder_id", SFL_CONFIG_TYPE_STRING, holder_id), .def = "\"\"",
	  .def_doc = "hostname-pid", .help = "This replica's identity; empty means hostname-pid." },
	{ NULL }
};

static const SflConfigSchema sfl_gcs_lease_schema = {
	.name = "GcsLeaseConfig",
	.doc = "Lease object in GCS (generation preconditions; for stateless platforms).",
	.struct_size = sizeof(SflGcsLeaseConfig),
	.fields = sfl_gcs_lease_fields,
};

static const SflConfigField sfl_sharding_fields[] = {
	{ FIELD(SflShardingConfig, "enabled", SFL_CONFIG_TYPE_BOOL, enabled), .def = "false",
	  .help = "Shard the work units (topics, event types, objects) across every replica, "
		  "each unit under its own fenced lease." },
	{ FIELD(SflShardingConfig, "members_ttl", SFL_CONFIG_TYPE_DURATION, members_ttl),
	  .def = "30s", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0,
	  .help = "A replica whose membership record did not change for this long is no longer "
		  "a member; its units are reassigned." },
	{ NULL }
};

static const SflConfigSchema sfl_sharding_schema = {
	.name = "ShardingConfig",
	.doc = "Scale-out: work units shared across replicas (docs/deployment/scale-out.md).",
	.struct_size = sizeof(SflShardingConfig),
	.fields = sfl_sharding_fields,
};

static void
sfl_coordinate_check_renew(SflConfigContext *ctx, const SflConfigNode *node, const gchar *path,
			   const gchar *section, SflDuration renew, SflDuration ttl)
{
	g_autofree gchar *key = NULL;
	g_autofree gchar *kpath = NULL;
	g_autofree gchar *r = NULL;
	g_autofree gchar *t = NULL;

	if (renew <= 0 || ttl <= 0 || 2 * renew < ttl)
		return;
	key = g_strdup_printf("%s.renew_interval", section);
	kpath = sfl_config_path_join(path, key);
	r = sfl_duration_format(renew);
	t = sfl_duration_format(ttl);
	sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, section),
			 "2 x renew_interval (%s) must be less than ttl (%s)", r, t);
}

/*
 * The lease object must never be the checkpoint object: each would overwrite the other.
 * Called from the root validation, which sees both sections.
 */
static void
sfl_coordinate_validate_against_state(const SflConfigData *cfg, const SflConfigNode *root,
				      SflConfigContext *ctx)
{
	const SflCoordinateConfig *c = &cfg->coordinate;
	const SflStateConfig *state = &cfg->state;
	const SflConfigNode *node = sfl_config_node_lookup(root, "coordinate");

	if (c->type == SFL_COORDINATE_S3_LEASE && state->store == SFL_STATE_STORE_S3 &&
	    g_strcmp0(c->s3_lease.bucket, state->s3.bucket) == 0 &&
	    g_strcmp0(c->s3_lease.key, state->s3.key) == 0 &&
	    g_strcmp0(c->s3_lease.endpoint_url, state->s3.endpoint_url) == 0)
		sfl_config_error(ctx, "coordinate.s3_lease.key", node,
				 "the lease object must not be the checkpoint object "
				 "(state.s3.bucket/key); choose another key");
	if (c->type == SFL_COORDINATE_GCS_LEASE && state->store == SFL_STATE_STORE_GCS &&
	    g_strcmp0(c->gcs_lease.bucket, state->gcs.bucket) == 0 &&
	    g_strcmp0(c->gcs_lease.object_name, state->gcs.object_name) == 0)
		sfl_config_error(ctx, "coordinate.gcs_lease.object_name", node,
				 "the lease object must not be the checkpoint object "
				 "(state.gcs.bucket/object_name); choose another name");
}

static void
sfl_coordinate_validate(gpointer obj, const SflConfigNode *node, const gchar *path,
			SflConfigContext *ctx)
{
	SflCoordinateConfig *c = obj;

	/* checked whatever type is selected, as the original does */
	if (c->file_lease.renew_interval > 0 && c->file_lease.ttl > 0 &&
	    2 * c->file_lease.renew_interval >= c->file_lease.ttl) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "file_lease.renew_interval");
		g_autofree gchar *r = sfl_duration_format(c->file_lease.renew_interval);
		g_autofree gchar *t = sfl_duration_format(c->file_lease.ttl);
		sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "file_lease"),
				 "2 x renew_interval (%s) must be less than ttl (%s)", r, t);
	}
	if (c->k8s_lease.renew_interval > 0 && c->k8s_lease.lease_duration > 0 &&
	    2 * c->k8s_lease.renew_interval >= c->k8s_lease.lease_duration) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "k8s_lease.renew_interval");
		g_autofree gchar *r = sfl_duration_format(c->k8s_lease.renew_interval);
		g_autofree gchar *t = sfl_duration_format(c->k8s_lease.lease_duration);
		sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "k8s_lease"),
				 "2 x renew_interval (%s) must be less than lease_duration (%s)", r,
				 t);
	}
	sfl_coordinate_check_renew(ctx, node, path, "s3_lease", c->s3_lease.renew_interval,
				   c->s3_lease.ttl);
	sfl_coordinate_check_renew(ctx, node, path, "gcs_lease", c->gcs_lease.renew_interval,
				   c->gcs_lease.ttl);
	if (c->sharding.members_ttl > 0 && c->sharding.members_ttl < 300 * 1000) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "sharding.members_ttl");
		sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "sharding"),
				 "must be at least 300ms (records are renewed every third of it)");
	}
	if (c->sharding.enabled && c->type == SFL_COORDINATE_NOOP) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "sharding.enabled");
		sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "sharding"),
				 "sharding needs a lease: set coordinate.type to file_lease, "
				 "k8s_lease, s3_lease or gcs_lease");
	}
	if (c->type == SFL_COORDINATE_S3_LEASE && sfl_config_text_blank(c->s3_lease.bucket)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "s3_lease.bucket");
		sfl_config_error(ctx, kpath, node, "required when coordinate.type is s3_lease");
	}
	if (c->type == SFL_COORDINATE_S3_LEASE && sfl_config_text_blank(c->s3_lease.key)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "s3_lease.key");
		sfl_config_error(ctx, kpath, node, "must not be empty");
	}
	if (c->type == SFL_COORDINATE_GCS_LEASE && sfl_config_text_blank(c->gcs_lease.bucket)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "gcs_lease.bucket");
		sfl_config_error(ctx, kpath, node, "required when coordinate.type is gcs_lease");
	}
	if (c->type == SFL_COORDINATE_GCS_LEASE &&
	    sfl_config_text_blank(c->gcs_lease.object_name)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "gcs_lease.object_name");
		sfl_config_error(ctx, kpath, node, "must not be empty");
	}
}

static const SflConfigField sfl_coordinate_fields[] = {
	{ FIELD(SflCoordinateConfig, "type", SFL_CONFIG_TYPE_ENUM, type), .def = "noop",
	  .choices = sfl_choices_coordinate,
	  .help = "HA coordinator: noop (single instance), file_lease, k8s_lease, s3_lease or "
		  "gcs_lease." },
	{ FIELD(SflCoordinateConfig, "sharding", SFL_CONFIG_TYPE_OBJECT, sharding),
	  .schema = &sfl_sharding_schema, .help = "Sharding across replicas." },
	{ FIELD(SflCoordinateConfig, "file_lease", SFL_CONFIG_TYPE_OBJECT, file_lease),
	  .schema = &sfl_file_lease_schema, .help = "File lease." },
	{ FIELD(SflCoordinateConfig, "k8s_lease", SFL_CONFIG_TYPE_OBJECT, k8s_lease),
	  .schema = &sfl_k8s_lease_schema, .help = "Kubernetes Lease." },
	{ FIELD(SflCoordinateConfig, "s3_lease", SFL_CONFIG_TYPE_OBJECT, s3_lease),
	  .schema = &sfl_s3_lease_schema, .help = "S3 lease object." },
	{ FIELD(SflCoordinateConfig, "gcs_lease", SFL_CONFIG_TYPE_OBJECT, gcs_lease),
	  .schema = &sfl_gcs_lease_schema, .help = "GCS lease object." },
	{ NULL }
};

static const SflConfigSchema sfl_coordinate_schema = {
	.name = "CoordinateConfig",
	.doc = "Active-passive high availability. Only the leader runs the pipeline; a replica "
	       "that loses the lease can never rewind the winner's checkpoints.",
	.struct_size = sizeof(SflCoordinateConfig),
	.fields = sfl_coordinate_fields,
	.validate = sfl_coordinate_validate,
};

/* --- service -------------------------------------------------------------------------------- */

static const SflConfigField sfl_telemetry_fields[] = {
	{ FIELD(SflTelemetryConfig, "enabled", SFL_CONFIG_TYPE_BOOL, enabled), .def = "false",
	  .help = "Push metrics over OTLP/HTTP." },
	{ FIELD(SflTelemetryConfig, "endpoint", SFL_CONFIG_TYPE_STRING, endpoint), .def = "\"\"",
	  .help = "Full OTLP metrics URL, e.g. https://otlp.example.com/otlp/v1/metrics." },
	{ FIELD(SflTelemetryConfig, "auth", SFL_CONFIG_TYPE_ENUM, auth), .def = "basic",
	  .choices = sfl_choices_tel_auth, .help = "basic or none." },
	{ FIELD(SflTelemetryConfig, "basic_auth_user", SFL_CONFIG_TYPE_STRING, basic_auth_user),
	  .def = "\"\"", .def_doc = "sink.loki.tenant_id",
	  .help = "Basic-auth user; empty inherits sink.loki.tenant_id." },
	{ FIELD(SflTelemetryConfig, "basic_auth_token", SFL_CONFIG_TYPE_SECRET, basic_auth_token),
	  .def_doc = "sink.loki.auth_token",
	  .help = "Basic-auth token; unset inherits sink.loki.auth_token." },
	{ FIELD(SflTelemetryConfig, "basic_auth_token_file", SFL_CONFIG_TYPE_PATH,
		basic_auth_token_file),
	  .flags = SFL_CONFIG_FIELD_SECRET_FILE, .help = "File holding the basic-auth token." },
	{ FIELD(SflTelemetryConfig, "headers", SFL_CONFIG_TYPE_STRING_MAP, headers), .def = "{}",
	  .help = "Extra request headers, merged over the Authorization header." },
	{ FIELD(SflTelemetryConfig, "export_interval", SFL_CONFIG_TYPE_DURATION, export_interval),
	  .def = "60s", .flags = SFL_CONFIG_FIELD_MIN_EXCLUSIVE, .min = 0, .help = "Push period." },
	{ FIELD(SflTelemetryConfig, "resource_attributes", SFL_CONFIG_TYPE_STRING_MAP,
		resource_attributes),
	  .def = "{}",
	  .help = "Resource attributes merged over service.name and service.version." },
	{ NULL }
};

static const SflConfigSchema sfl_telemetry_schema = {
	.name = "TelemetryConfig",
	.doc = "OTLP/HTTP metrics push (the /metrics endpoint is always served).",
	.struct_size = sizeof(SflTelemetryConfig),
	.fields = sfl_telemetry_fields,
};

static gboolean
sfl_config_health_addr_valid(const gchar *addr)
{
	const gchar *colon = strrchr(addr, ':');
	gint64 port = 0;
	g_autofree gchar *host = NULL;

	if (colon == NULL)
		return FALSE;
	if (!g_ascii_string_to_signed(colon + 1, 10, 0, 65535, &port, NULL))
		return FALSE;
	host = g_strndup(addr, colon - addr);
	if (host[0] == '[') {
		g_autofree gchar *inner = NULL;
		if (!g_str_has_suffix(host, "]"))
			return FALSE;
		inner = g_strndup(host + 1, strlen(host) - 2);
		return g_hostname_is_ip_address(inner);
	}
	return strchr(host, ':') == NULL && strchr(host, ' ') == NULL;
}

static void
sfl_service_validate(gpointer obj, const SflConfigNode *node, const gchar *path,
		     SflConfigContext *ctx)
{
	SflServiceConfig *svc = obj;
	if (svc->health_addr != NULL && !sfl_config_health_addr_valid(svc->health_addr)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "health_addr");
		sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "health_addr"),
				 "expected host:port (e.g. :8080, 127.0.0.1:8080, [::1]:8080), got "
				 "'%s'",
				 svc->health_addr);
	}
	if (svc->telemetry.enabled && sfl_config_text_blank(svc->telemetry.endpoint)) {
		g_autofree gchar *kpath = sfl_config_path_join(path, "telemetry.endpoint");
		sfl_config_error(ctx, kpath, node, "required when telemetry is enabled");
	}
}

static const SflConfigField sfl_service_fields[] = {
	{ FIELD(SflServiceConfig, "log_level", SFL_CONFIG_TYPE_ENUM, log_level), .def = "info",
	  .choices = sfl_choices_log_level, .flags = SFL_CONFIG_FIELD_CASE_INSENSITIVE,
	  .help = "debug, info, warning (warn), error or critical." },
	{ FIELD(SflServiceConfig, "log_format", SFL_CONFIG_TYPE_ENUM, log_format), .def = "json",
	  .choices = sfl_choices_log_format, .help = "json (one object per line) or logfmt." },
	{ FIELD(SflServiceConfig, "health_addr", SFL_CONFIG_TYPE_STRING, health_addr),
	  .def = "\":8080\"",
	  .help = "host:port of /healthz, /readyz, /metrics and /statusz; empty host is every "
		  "interface, port 0 an ephemeral one." },
	{ FIELD(SflServiceConfig, "shutdown_grace", SFL_CONFIG_TYPE_DURATION, shutdown_grace),
	  .def = "25s", .help = "How long a stop may spend draining to Loki and committing." },
	{ FIELD(SflServiceConfig, "unready_after_sink_failing", SFL_CONFIG_TYPE_DURATION,
		unready_after_sink_failing),
	  .def = "15m",
	  .help = "/readyz fails once Loki pushes have failed this long; 0 disables." },
	{ FIELD(SflServiceConfig, "progress_interval", SFL_CONFIG_TYPE_DURATION, progress_interval),
	  .def = "1m", .flags = SFL_CONFIG_FIELD_MIN, .min = 0,
	  .help = "How often the leader logs a progress line (rows read, entries pushed, rows/s); "
		  "0 disables (not in the Python original)." },
	{ FIELD(SflServiceConfig, "telemetry", SFL_CONFIG_TYPE_OBJECT, telemetry),
	  .schema = &sfl_telemetry_schema, .help = "OTLP metrics push." },
	{ FIELD(SflServiceConfig, "config_sources", SFL_CONFIG_TYPE_STRING_LIST, config_sources),
	  .def = "[file, gsettings, env]", .pattern = "(file|gsettings|env)$",
	  .help = "Which layers are read over the built-in defaults, lowest first: the YAML file, "
		  "GSettings (when a backend exists) and SF2LOKI_* environment variables. Read "
		  "from the file and the environment only (docs/configuration.md)." },
	{ FIELD(SflServiceConfig, "gsettings_keyfile", SFL_CONFIG_TYPE_PATH, gsettings_keyfile),
	  .flags = SFL_CONFIG_FIELD_NULLABLE,
	  .def_doc = "`/etc/sf2loki/gsettings/sf2loki.ini`; on Windows "
		     "`%ProgramData%\\sf2loki\\gsettings\\sf2loki.ini`",
	  .help = "The GSettings keyfile read when it exists and DCONF_PROFILE is not set; null "
		  "is the platform's default. Read from the file and the environment only." },
	{ NULL }
};

static const SflConfigSchema sfl_service_schema = {
	.name = "ServiceConfig",
	.doc = "Process settings: logging, health server, shutdown, telemetry.",
	.struct_size = sizeof(SflServiceConfig),
	.fields = sfl_service_fields,
	.validate = sfl_service_validate,
};

/* --- root ----------------------------------------------------------------------------------- */

static void
sfl_root_validate(gpointer obj, const SflConfigNode *node, const gchar *path, SflConfigContext *ctx)
{
	SflConfigData *cfg = obj;
	gboolean multi = cfg->orgs->len > 0;
	g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
	SflTelemetryConfig *tel = &cfg->service.telemetry;

	if (cfg->salesforce != NULL && multi)
		sfl_config_error(ctx, "salesforce", sfl_config_node_lookup(node, "salesforce"),
				 "set either salesforce (one org) or orgs (several), not both");
	if (cfg->salesforce == NULL && !multi)
		sfl_config_error(ctx, "salesforce", node,
				 "field required: set salesforce (one org) or a non-empty orgs "
				 "list");
	if (multi && sfl_config_node_lookup(node, "sources") != NULL)
		sfl_config_error(ctx, "sources", sfl_config_node_lookup(node, "sources"),
				 "with orgs, configure sources per org (orgs[].sources)");

	for (guint i = 0; i < cfg->orgs->len; i++) {
		SflOrgConfig *org = g_ptr_array_index(cfg->orgs, i);
		g_autofree gchar *kpath = g_strdup_printf("orgs[%u].name", i);
		if (org->name == NULL)
			continue;
		if (g_hash_table_contains(names, org->name))
			sfl_config_error(ctx, kpath, sfl_config_node_lookup(node, "orgs"),
					 "duplicate org name '%s'", org->name);
		g_hash_table_add(names, org->name);
	}

	/* per-org values would be silently overwritten by static ones (SFL-0044) */
	if (multi) {
		static const gchar *const per_org[] = { "org", "sf_org_id", "environment", NULL };
		for (guint i = 0; per_org[i] != NULL; i++) {
			if (sfl_config_map_lookup(cfg->sink.loki.labels, per_org[i]) != NULL)
				sfl_config_error(ctx, "sink.loki.labels",
						 sfl_config_node_lookup(node, "sink"),
						 "'%s' is set per org in multi-org mode and cannot "
						 "be a static label",
						 per_org[i]);
		}
	}

	sfl_coordinate_validate_against_state(cfg, node, ctx);

	if (tel->enabled && tel->auth == SFL_TELEMETRY_AUTH_BASIC) {
		const gchar *user = sfl_config_text_blank(tel->basic_auth_user)
					    ? cfg->sink.loki.tenant_id
					    : tel->basic_auth_user;
		const gchar *token = tel->basic_auth_token != NULL ? tel->basic_auth_token
								   : cfg->sink.loki.auth_token;
		if (sfl_config_text_blank(user) || token == NULL)
			sfl_config_error(
				ctx, "service.telemetry", node,
				"telemetry with auth 'basic' needs a user and a token: set "
				"basic_auth_user and basic_auth_token(_file), or "
				"sink.loki.tenant_id and auth_token(_file) to inherit them");
	}
}

static const SflConfigField sfl_root_fields[] = {
	{ FIELD(SflConfigData, "salesforce", SFL_CONFIG_TYPE_OBJECT, salesforce),
	  .flags = SFL_CONFIG_FIELD_NULLABLE, .schema = &sfl_salesforce_schema,
	  .help = "Single-org connection." },
	{ FIELD(SflConfigData, "orgs", SFL_CONFIG_TYPE_OBJECT_LIST, orgs),
	  .schema = &sfl_org_schema, .flags = SFL_CONFIG_FIELD_EXAMPLE_COMMENTED,
	  .help = "Multi-org alternative to salesforce: one entry per org." },
	{ FIELD(SflConfigData, "sources", SFL_CONFIG_TYPE_OBJECT, sources),
	  .schema = &sfl_sources_schema, .help = "Single-org sources." },
	{ FIELD(SflConfigData, "sink", SFL_CONFIG_TYPE_OBJECT, sink),
	  .flags = SFL_CONFIG_FIELD_REQUIRED, .schema = &sfl_sink_schema, .help = "Loki sink." },
	{ FIELD(SflConfigData, "state", SFL_CONFIG_TYPE_OBJECT, state), .schema = &sfl_state_schema,
	  .help = "Checkpoint store." },
	{ FIELD(SflConfigData, "coordinate", SFL_CONFIG_TYPE_OBJECT, coordinate),
	  .schema = &sfl_coordinate_schema, .help = "HA coordinator." },
	{ FIELD(SflConfigData, "service", SFL_CONFIG_TYPE_OBJECT, service),
	  .schema = &sfl_service_schema, .help = "Process settings." },
	{ NULL }
};

const SflConfigSchema sfl_config_root_schema = {
	.name = "Config",
	.doc = "sf2loki configuration.",
	.struct_size = sizeof(SflConfigData),
	.fields = sfl_root_fields,
	.validate = sfl_root_validate,
};
