/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

#include "sfl-config-schema.h"

G_BEGIN_DECLS

/*
 * The typed configuration. Every member is described by a table in sfl-config-sections.c;
 * the comments there are the documentation (they generate docs/config-reference.md).
 * Secrets hold their resolved value (inline or read from the *_file), or NULL when absent.
 */

typedef enum {
	SFL_SF_ENVIRONMENT_PRODUCTION,
	SFL_SF_ENVIRONMENT_SANDBOX,
} SflSfEnvironment;

typedef enum {
	SFL_SF_AUTH_JWT_BEARER,
	SFL_SF_AUTH_CLIENT_CREDENTIALS,
} SflSfAuthMode;

typedef struct {
	gboolean enabled;
	SflDuration poll_interval;
} SflSalesforceLimitsConfig;

typedef struct {
	gchar *login_url; /* derived from environment when left empty */
	gint environment; /* SflSfEnvironment */
	gint auth_mode;	  /* SflSfAuthMode */
	gchar *client_id;
	gchar *client_secret;
	gchar *client_secret_file;
	gchar *username;
	gchar *private_key_file;
	gchar *private_key;
	gchar *api_version;
	gchar *org_id;
	SflDuration token_ttl;
	SflSalesforceLimitsConfig limits;
} SflSalesforceConfig;

typedef enum {
	SFL_TRANSFORM_HASH,
	SFL_TRANSFORM_MASK,
	SFL_TRANSFORM_DROP_FIELD,
	SFL_TRANSFORM_DROP_ROW,
	SFL_TRANSFORM_REGEX_REPLACE,
} SflTransformAction;

typedef struct {
	gint action; /* SflTransformAction */
	GStrv fields;
	GPtrArray *match; /* SflConfigPair: field → glob */
	gchar *pattern;
	gchar *replacement;
	gchar *name;
} SflTransformRule;

typedef enum {
	SFL_REPLAY_LATEST,
	SFL_REPLAY_EARLIEST,
	SFL_REPLAY_CUSTOM,
} SflReplayPreset;

/* where the field names decoded from CDC bitmaps go */
typedef enum {
	SFL_CDC_NAMES_METADATA,
	SFL_CDC_NAMES_LINE,
	SFL_CDC_NAMES_OFF,
} SflCdcFieldNames;

typedef struct {
	gboolean enabled;
	gchar *endpoint;
	gint64 default_num_requested;
	gint replay_preset;   /* SflReplayPreset */
	gint cdc_field_names; /* SflCdcFieldNames */
	GStrv topics;
	GStrv include;
	GStrv exclude;
	SflDuration rediscovery_interval;
	GPtrArray *sample;     /* SflConfigPair: glob → fraction */
	GPtrArray *transforms; /* SflTransformRule */
	gint64 bridge_max_bytes;
} SflPubsubConfig;

typedef enum {
	SFL_ELF_INTERVAL_HOURLY,
	SFL_ELF_INTERVAL_DAILY,
} SflElfInterval;

typedef struct {
	gchar *name;
	GStrv structured_metadata_fields; /* NULL = inherit sink.loki's list */
	GStrv labels;
	gdouble sample;
} SflElfTypeConfig;

typedef struct {
	gboolean enabled;
	gint interval;		/* SflElfInterval */
	GPtrArray *event_types; /* SflElfTypeConfig */
	GStrv exclude;
	SflDuration poll_interval;
	SflDuration lookback;
	gchar *timestamp_column;
	gint64 page_size;
	SflDuration settle_window; /* resolved: 5m for Hourly when unset, else 0 */
	SflDuration download_max_age;
	GPtrArray *transforms;
	gint64 concurrency;
} SflEventLogFileConfig;

typedef struct {
	gchar *name;
	gchar *timestamp_field;
	SflDuration poll_interval;
	SflDuration lookback;
	gdouble sample;
	gboolean big_object;
	gint64 max_catchup_records;
	SflDuration settle_window;
} SflEventLogObjectConfig;

typedef struct {
	gboolean enabled;
	GPtrArray *objects; /* SflEventLogObjectConfig */
	GPtrArray *transforms;
} SflEventLogObjectsConfig;

typedef struct {
	gboolean enabled;
	SflDuration poll_interval;
	SflDuration lookback;
	GStrv users;
	gint64 max_body_bytes;
	gdouble sample;
	GPtrArray *transforms;
	SflDuration download_max_age;
} SflApexLogConfig;

typedef struct {
	SflPubsubConfig pubsub;
	SflEventLogObjectsConfig eventlog_objects;
	SflEventLogFileConfig eventlogfile;
	SflApexLogConfig apexlog;
	gboolean allow_overlap;
	gchar *transform_salt;
	gchar *transform_salt_file;
} SflSourcesConfig;

typedef struct {
	gchar *name;
	SflSalesforceConfig salesforce;
	SflSourcesConfig sources;
} SflOrgConfig;

typedef struct {
	gint64 max_entries;
	gint64 max_bytes;
	SflDuration flush_interval;
	gint64 max_line_bytes;
	gint64 queue_maxsize;
	gint64 queue_max_bytes;
} SflLokiBatchConfig;

typedef enum {
	SFL_BUDGET_ACTION_PAUSE,
	SFL_BUDGET_ACTION_DROP,
} SflBudgetAction;

typedef struct {
	gdouble max_lines_per_second;
	gdouble max_bytes_per_second;
	gint64 daily_byte_budget;
	gint budget_action; /* SflBudgetAction */
} SflLokiEgressConfig;

/* sink.loki.label_cardinality: the runtime guard on promoted labels (SFL-0034) */
typedef struct {
	gint64 max_values; /* distinct values per label per window; 0 disables */
	SflDuration window;
} SflLokiLabelCardinalityConfig;

typedef enum {
	SFL_LOKI_ENCODING_PROTOBUF,
	SFL_LOKI_ENCODING_JSON,
} SflLokiEncoding;

typedef enum {
	SFL_LOKI_COMPRESSION_SNAPPY,
	SFL_LOKI_COMPRESSION_GZIP,
	SFL_LOKI_COMPRESSION_NONE,
} SflLokiCompression;

typedef struct {
	gchar *url;
	gchar *tenant_id;
	gchar *auth_token_file;
	gchar *auth_token;
	gint encoding;	  /* SflLokiEncoding */
	gint compression; /* SflLokiCompression */
	SflLokiBatchConfig batch;
	SflLokiEgressConfig egress;
	GPtrArray *labels; /* SflConfigPair */
	SflLokiLabelCardinalityConfig label_cardinality;
	GStrv structured_metadata_fields;
	gchar *ca_file; /* NULL: the system trust store */
} SflLokiConfig;

typedef struct {
	SflLokiConfig loki;
} SflSinkConfig;

typedef enum {
	SFL_STATE_STORE_FILE,
	SFL_STATE_STORE_S3,
	SFL_STATE_STORE_GCS,
} SflStateStoreKind;

typedef struct {
	gchar *path;
} SflStateFileConfig;

typedef struct {
	gchar *bucket;
	gchar *key;
	gchar *region;
	gchar *endpoint_url;
} SflStateS3Config;

typedef struct {
	gchar *bucket;
	gchar *object_name;
	gchar *service_file;
} SflStateGcsConfig;

typedef struct {
	gboolean enabled;
	gchar *path; /* NULL: deadletter/ next to state.file.path */
	gint64 max_bytes;
	SflDuration max_age;
} SflStateDeadletterConfig;

typedef struct {
	gint store; /* SflStateStoreKind */
	SflStateFileConfig file;
	SflStateS3Config s3;
	SflStateGcsConfig gcs;
	SflStateDeadletterConfig deadletter;
} SflStateConfig;

typedef enum {
	SFL_COORDINATE_NOOP,
	SFL_COORDINATE_FILE_LEASE,
	SFL_COORDINATE_K8S_LEASE,
	SFL_COORDINATE_S3_LEASE,
	SFL_COORDINATE_GCS_LEASE,
} SflCoordinateKind;

typedef struct {
	gchar *path;
	SflDuration ttl;
	SflDuration renew_interval;
	gchar *holder_id;
} SflFileLeaseConfig;

typedef struct {
	gchar *namespace_;
	gchar *name;
	gchar *identity;
	SflDuration lease_duration;
	SflDuration renew_interval;
	gchar *kubeconfig;
} SflK8sLeaseConfig;

typedef struct {
	gchar *bucket;
	gchar *key;
	gchar *region;
	gchar *endpoint_url;
	SflDuration ttl;
	SflDuration renew_interval;
	gchar *holder_id;
} SflS3LeaseConfig;

typedef struct {
	gchar *bucket;
	gchar *object_name;
	gchar *service_file;
	SflDuration ttl;
	SflDuration renew_interval;
	gchar *holder_id;
} SflGcsLeaseConfig;

typedef struct {
	gboolean enabled;
	SflDuration members_ttl;
} SflShardingConfig;

typedef struct {
	gint type; /* SflCoordinateKind */
	SflShardingConfig sharding;
	SflFileLeaseConfig file_lease;
	SflK8sLeaseConfig k8s_lease;
	SflS3LeaseConfig s3_lease;
	SflGcsLeaseConfig gcs_lease;
} SflCoordinateConfig;

typedef enum {
	SFL_TELEMETRY_AUTH_BASIC,
	SFL_TELEMETRY_AUTH_NONE,
} SflTelemetryAuth;

typedef struct {
	gboolean enabled;
	gchar *endpoint;
	gint auth; /* SflTelemetryAuth */
	gchar *basic_auth_user;
	gchar *basic_auth_token;
	gchar *basic_auth_token_file;
	GPtrArray *headers; /* SflConfigPair */
	SflDuration export_interval;
	GPtrArray *resource_attributes; /* SflConfigPair */
} SflTelemetryConfig;

/* the order of the table's choices; "warn" is an alias of "warning" */
typedef enum {
	SFL_CONFIG_LOG_LEVEL_DEBUG,
	SFL_CONFIG_LOG_LEVEL_INFO,
	SFL_CONFIG_LOG_LEVEL_WARNING,
	SFL_CONFIG_LOG_LEVEL_WARN,
	SFL_CONFIG_LOG_LEVEL_ERROR,
	SFL_CONFIG_LOG_LEVEL_CRITICAL,
} SflConfigLogLevel;

typedef struct {
	gint log_level;	 /* SflConfigLogLevel */
	gint log_format; /* SflLogFormat */
	gchar *health_addr;
	SflDuration shutdown_grace;
	SflDuration unready_after_sink_failing;
	SflDuration progress_interval;
	SflTelemetryConfig telemetry;
	GStrv config_sources;	  /* "file", "gsettings", "env" (docs/configuration.md) */
	gchar *gsettings_keyfile; /* NULL = the platform's default */
} SflServiceConfig;

typedef struct {
	SflSalesforceConfig *salesforce; /* NULL in multi-org mode */
	GPtrArray *orgs;		 /* SflOrgConfig; empty in single-org mode */
	SflSourcesConfig sources;
	SflSinkConfig sink;
	SflStateConfig state;
	SflCoordinateConfig coordinate;
	SflServiceConfig service;
} SflConfigData;

typedef struct _SflConfig SflConfig;

struct _SflConfig {
	SflConfigData data;
	gchar *path; /* the file it came from, or NULL */
	/* the merged document (file, GSettings, environment): where each value came from */
	SflConfigNode *root;
	/* the GSettings layer read, or NULL (sfl-config-gsettings.h) */
	struct _SflConfigGSettings *gsettings;
};

extern const SflConfigSchema sfl_config_root_schema;

SflConfig *
sfl_config_load(const gchar *path, gchar **envp, GError **error) G_GNUC_WARN_UNUSED_RESULT;
SflConfig *sfl_config_load_from_data(const gchar *data, gsize len, const gchar *origin,
				     gchar **envp, GError **error) G_GNUC_WARN_UNUSED_RESULT;
void sfl_config_free(SflConfig *config);

const SflConfigField *sfl_config_field_at(const gchar *path);
const gchar *sfl_config_enum_name(const gchar *path, gint value);
gchar *sfl_config_render_example(void) G_GNUC_WARN_UNUSED_RESULT;
gchar *sfl_config_render_reference(void) G_GNUC_WARN_UNUSED_RESULT;
/* data/org.sf2loki.gschema.xml: the GSettings schema (sfl-config-gschema.c) */
gchar *sfl_config_render_gschema(void) G_GNUC_WARN_UNUSED_RESULT;
/* config.schema.json: JSON Schema draft 2020-12 (sfl-config-jsonschema.c) */
gchar *sfl_config_render_jsonschema(void) G_GNUC_WARN_UNUSED_RESULT;
/* the generated config: block of deploy/helm/values.yaml, markers included (sfl-config-helm.c) */
gchar *sfl_config_render_helm_values(void) G_GNUC_WARN_UNUSED_RESULT;
/* a value left unset: NULL, empty or only whitespace */
gboolean sfl_config_text_blank(const gchar *text);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflConfig, sfl_config_free)

G_END_DECLS
