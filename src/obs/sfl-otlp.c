/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflOtlp"

#include "config.h"

#include "sfl-otlp.h"

#include <string.h>

#include "sfl-error.h"
#include "sfl-http.h"
#include "sfl-redact.h"

/*
 * Field numbers of the OTLP protobuf messages we write, from open-telemetry/opentelemetry-proto:
 * opentelemetry/proto/collector/metrics/v1/metrics_service.proto,
 * opentelemetry/proto/metrics/v1/metrics.proto, opentelemetry/proto/common/v1/common.proto and
 * opentelemetry/proto/resource/v1/resource.proto (v1 packages, stable since proto 1.0).
 * ScopeMetrics kept the number 2 of the older InstrumentationLibraryMetrics, so the bytes are
 * the same for receivers of either vintage.
 */
enum {
	OTLP_REQUEST_RESOURCE_METRICS = 1, /* ExportMetricsServiceRequest */
	OTLP_RM_RESOURCE = 1,		   /* ResourceMetrics */
	OTLP_RM_SCOPE_METRICS = 2,
	OTLP_RESOURCE_ATTRIBUTES = 1, /* Resource */
	OTLP_KV_KEY = 1,	      /* KeyValue */
	OTLP_KV_VALUE = 2,
	OTLP_ANY_STRING = 1, /* AnyValue.string_value */
	OTLP_SM_SCOPE = 1,   /* ScopeMetrics */
	OTLP_SM_METRICS = 2,
	OTLP_SCOPE_NAME = 1, /* InstrumentationScope */
	OTLP_SCOPE_VERSION = 2,
	OTLP_METRIC_NAME = 1, /* Metric */
	OTLP_METRIC_DESCRIPTION = 2,
	OTLP_METRIC_GAUGE = 5,
	OTLP_METRIC_SUM = 7,
	OTLP_METRIC_HISTOGRAM = 9,
	OTLP_DATA_POINTS = 1, /* Gauge, Sum, Histogram */
	OTLP_AGGREGATION_TEMPORALITY = 2,
	OTLP_SUM_IS_MONOTONIC = 3,
	OTLP_NDP_START_TIME = 2, /* NumberDataPoint */
	OTLP_NDP_TIME = 3,
	OTLP_NDP_AS_DOUBLE = 4,
	OTLP_NDP_ATTRIBUTES = 7,
	OTLP_HDP_START_TIME = 2, /* HistogramDataPoint */
	OTLP_HDP_TIME = 3,
	OTLP_HDP_COUNT = 4,
	OTLP_HDP_SUM = 5,
	OTLP_HDP_BUCKET_COUNTS = 6,
	OTLP_HDP_EXPLICIT_BOUNDS = 7,
	OTLP_HDP_ATTRIBUTES = 9,
};

#define OTLP_TEMPORALITY_CUMULATIVE 2

enum {
	PB_WIRE_VARINT = 0,
	PB_WIRE_I64 = 1,
	PB_WIRE_LEN = 2,
};

/* the deadline of one export: a stuck collector costs one skipped tick, and shutdown waits
 * at most this long for the final export */
#define SFL_OTLP_TIMEOUT_MS (10 * 1000)
/* after the first failure of a streak, at most one summary line per this interval */
#define SFL_OTLP_FAILURE_LOG_USEC (5 * 60 * G_USEC_PER_SEC)

/* ---- protobuf writer ------------------------------------------------------------------------ */

static void
pb_varint(GByteArray *buf, guint64 value)
{
	guint8 out[10];
	guint n = 0;

	do {
		out[n] = (guint8)(value & 0x7f);
		value >>= 7;
		if (value != 0)
			out[n] |= 0x80;
		n++;
	} while (value != 0);
	g_byte_array_append(buf, out, n);
}

static void
pb_tag(GByteArray *buf, guint field, guint wire)
{
	pb_varint(buf, ((guint64)field << 3) | wire);
}

/* protobuf's fixed-width fields are little-endian whatever the host */
static void
pb_raw_fixed64(GByteArray *buf, guint64 value)
{
	guint64 le = GUINT64_TO_LE(value);
	g_byte_array_append(buf, (const guint8 *)&le, sizeof le);
}

static guint64
pb_double_bits(gdouble value)
{
	guint64 bits;
	memcpy(&bits, &value, sizeof bits);
	return bits;
}

static void
pb_fixed64(GByteArray *buf, guint field, guint64 value)
{
	pb_tag(buf, field, PB_WIRE_I64);
	pb_raw_fixed64(buf, value);
}

static void
pb_double(GByteArray *buf, guint field, gdouble value)
{
	pb_fixed64(buf, field, pb_double_bits(value));
}

static void
pb_uint(GByteArray *buf, guint field, guint64 value)
{
	pb_tag(buf, field, PB_WIRE_VARINT);
	pb_varint(buf, value);
}

static void
pb_bytes(GByteArray *buf, guint field, const guint8 *data, gsize len)
{
	pb_tag(buf, field, PB_WIRE_LEN);
	pb_varint(buf, len);
	if (len > 0)
		g_byte_array_append(buf, data, (guint)len);
}

static void
pb_string(GByteArray *buf, guint field, const gchar *text)
{
	pb_bytes(buf, field, (const guint8 *)text, strlen(text));
}

/* a nested message: the child is built apart, so its length is known before it is written */
static void
pb_message(GByteArray *buf, guint field, const GByteArray *child)
{
	pb_bytes(buf, field, child->data, child->len);
}

/* ---- OTLP messages -------------------------------------------------------------------------- */

/* KeyValue{key, value: AnyValue{string_value}} as field @field of the parent */
static void
otlp_attribute(GByteArray *buf, guint field, const gchar *key, const gchar *value)
{
	g_autoptr(GByteArray) any = g_byte_array_new();
	g_autoptr(GByteArray) kv = g_byte_array_new();

	pb_string(any, OTLP_ANY_STRING, value);
	pb_string(kv, OTLP_KV_KEY, key);
	pb_message(kv, OTLP_KV_VALUE, any);
	pb_message(buf, field, kv);
}

static void
otlp_series_attributes(GByteArray *point, guint field, SflMetricFamily *family, SflSeries *series)
{
	const gchar *const *names = sfl_metric_family_get_label_names(family);
	const gchar *const *values = sfl_series_get_label_values(series);

	for (guint i = 0; names != NULL && names[i] != NULL; i++)
		otlp_attribute(point, field, names[i], values[i]);
}

typedef struct {
	gint64 start_ns;
	gint64 now_ns;
	GByteArray *metrics; /* ScopeMetrics.metrics, one Metric each */
	SflMetricFamily *family;
	GByteArray *points; /* the data points of @family so far */
} SflOtlpEncoder;

/* gauges carry the start time too: receivers ignore it there, and it marks the process */
static void
otlp_number_point(SflOtlpEncoder *enc, SflSeries *series)
{
	g_autoptr(GByteArray) point = g_byte_array_new();

	otlp_series_attributes(point, OTLP_NDP_ATTRIBUTES, enc->family, series);
	pb_fixed64(point, OTLP_NDP_START_TIME, (guint64)enc->start_ns);
	pb_fixed64(point, OTLP_NDP_TIME, (guint64)enc->now_ns);
	pb_double(point, OTLP_NDP_AS_DOUBLE, sfl_series_get(series));
	pb_message(enc->points, OTLP_DATA_POINTS, point);
}

static void
otlp_histogram_point(SflOtlpEncoder *enc, SflSeries *series)
{
	g_autoptr(GByteArray) point = g_byte_array_new();
	g_autoptr(GByteArray) counts = g_byte_array_new();
	g_autoptr(GByteArray) bounds_buf = g_byte_array_new();
	guint n_bounds = 0;
	const gdouble *bounds = sfl_metric_family_get_bounds(enc->family, &n_bounds);
	guint64 count = 0;
	gdouble sum = sfl_series_get(series);

	/*
	 * The count is the sum of the buckets as read, not the series' own counter: observations
	 * land while we read, and OTLP requires the two to agree.
	 */
	for (guint i = 0; i <= n_bounds; i++) {
		guint64 n = sfl_series_get_bucket(series, i);
		count += n;
		pb_raw_fixed64(counts, n);
	}
	for (guint i = 0; i < n_bounds; i++)
		pb_raw_fixed64(bounds_buf, pb_double_bits(bounds[i]));

	otlp_series_attributes(point, OTLP_HDP_ATTRIBUTES, enc->family, series);
	pb_fixed64(point, OTLP_HDP_START_TIME, (guint64)enc->start_ns);
	pb_fixed64(point, OTLP_HDP_TIME, (guint64)enc->now_ns);
	pb_fixed64(point, OTLP_HDP_COUNT, count);
	pb_double(point, OTLP_HDP_SUM, sum);
	/* repeated scalars go packed, as proto3 writers do */
	pb_message(point, OTLP_HDP_BUCKET_COUNTS, counts);
	if (n_bounds > 0)
		pb_message(point, OTLP_HDP_EXPLICIT_BOUNDS, bounds_buf);
	pb_message(enc->points, OTLP_DATA_POINTS, point);
}

/* closes the Metric of the family whose points were collected */
static void
otlp_flush_family(SflOtlpEncoder *enc)
{
	g_autoptr(GByteArray) metric = g_byte_array_new();
	g_autoptr(GByteArray) data = NULL;
	const gchar *help;
	guint data_field;

	if (enc->family == NULL)
		return;
	data = g_steal_pointer(&enc->points);
	switch (sfl_metric_family_get_type(enc->family)) {
	case SFL_METRIC_COUNTER:
		pb_uint(data, OTLP_AGGREGATION_TEMPORALITY, OTLP_TEMPORALITY_CUMULATIVE);
		pb_uint(data, OTLP_SUM_IS_MONOTONIC, 1);
		data_field = OTLP_METRIC_SUM;
		break;
	case SFL_METRIC_HISTOGRAM:
		pb_uint(data, OTLP_AGGREGATION_TEMPORALITY, OTLP_TEMPORALITY_CUMULATIVE);
		data_field = OTLP_METRIC_HISTOGRAM;
		break;
	case SFL_METRIC_GAUGE:
	default:
		data_field = OTLP_METRIC_GAUGE;
		break;
	}
	/* the registry's names are already the unsuffixed OTLP names */
	pb_string(metric, OTLP_METRIC_NAME, sfl_metric_family_get_name(enc->family));
	help = sfl_metric_family_get_help(enc->family);
	if (help != NULL && help[0] != '\0')
		pb_string(metric, OTLP_METRIC_DESCRIPTION, help);
	pb_message(metric, data_field, data);
	pb_message(enc->metrics, OTLP_SM_METRICS, metric);
	enc->family = NULL;
}

static void
otlp_visit(SflMetricFamily *family, SflSeries *series, gpointer user_data)
{
	SflOtlpEncoder *enc = user_data;

	if (family != enc->family) {
		otlp_flush_family(enc);
		enc->family = family;
		enc->points = g_byte_array_new();
	}
	switch (sfl_metric_family_get_type(family)) {
	case SFL_METRIC_COUNTER:
	case SFL_METRIC_GAUGE:
		otlp_number_point(enc, series);
		break;
	case SFL_METRIC_HISTOGRAM:
		otlp_histogram_point(enc, series);
		break;
	default:
		g_assert_not_reached();
	}
}

/* service.name and service.version first; a configured key replaces the built-in one */
static void
otlp_resource(GByteArray *resource, const GPtrArray *extra)
{
	static const gchar *const builtin[][2] = {
		{ "service.name", "sf2loki" },
		{ "service.version", PACKAGE_VERSION },
	};

	for (guint i = 0; i < G_N_ELEMENTS(builtin); i++) {
		if (extra != NULL &&
		    sfl_config_map_lookup((GPtrArray *)extra, builtin[i][0]) != NULL)
			continue;
		otlp_attribute(resource, OTLP_RESOURCE_ATTRIBUTES, builtin[i][0], builtin[i][1]);
	}
	for (guint i = 0; extra != NULL && i < extra->len; i++) {
		const SflConfigPair *pair = g_ptr_array_index((GPtrArray *)extra, i);
		otlp_attribute(resource, OTLP_RESOURCE_ATTRIBUTES, pair->key,
			       pair->value != NULL ? pair->value : "");
	}
}

/**
 * sfl_otlp_encode:
 * @metrics: the registry
 * @resource_attributes: (nullable): SflConfigPair, service.telemetry.resource_attributes
 * @start_time_unix_nano: when the cumulative values started (process start)
 * @time_unix_nano: the time of every point
 *
 * Returns: (transfer full): a serialised ExportMetricsServiceRequest
 */
GBytes *
sfl_otlp_encode(SflMetrics *metrics, const GPtrArray *resource_attributes,
		gint64 start_time_unix_nano, gint64 time_unix_nano)
{
	g_autoptr(GByteArray) request = g_byte_array_new();
	g_autoptr(GByteArray) rm = g_byte_array_new();
	g_autoptr(GByteArray) resource = g_byte_array_new();
	g_autoptr(GByteArray) sm = g_byte_array_new();
	g_autoptr(GByteArray) scope = g_byte_array_new();
	SflOtlpEncoder enc = {
		.start_ns = start_time_unix_nano,
		.now_ns = time_unix_nano,
		.metrics = g_byte_array_new(),
	};

	g_return_val_if_fail(metrics != NULL, NULL);

	sfl_metrics_foreach(metrics, otlp_visit, &enc);
	otlp_flush_family(&enc);

	otlp_resource(resource, resource_attributes);
	pb_string(scope, OTLP_SCOPE_NAME, "sf2loki");
	pb_string(scope, OTLP_SCOPE_VERSION, PACKAGE_VERSION);
	pb_message(sm, OTLP_SM_SCOPE, scope);
	g_byte_array_append(sm, enc.metrics->data, enc.metrics->len);
	g_byte_array_unref(enc.metrics);

	pb_message(rm, OTLP_RM_RESOURCE, resource);
	pb_message(rm, OTLP_RM_SCOPE_METRICS, sm);
	pb_message(request, OTLP_REQUEST_RESOURCE_METRICS, rm);
	return g_byte_array_free_to_bytes(g_steal_pointer(&request));
}

/* ---- headers -------------------------------------------------------------------------------- */

/* the token: inline, else its file (when the configuration was not loaded through
 * sfl_config_load, which resolves it already), else the Loki token */
static gboolean
otlp_basic_token(const SflTelemetryConfig *telemetry, const SflLokiConfig *loki, gchar **token,
		 GError **error)
{
	g_autofree gchar *contents = NULL;
	g_autoptr(GError) local = NULL;

	if (!sfl_config_text_blank(telemetry->basic_auth_token)) {
		*token = g_strdup(telemetry->basic_auth_token);
		return TRUE;
	}
	if (!sfl_config_text_blank(telemetry->basic_auth_token_file)) {
		if (!g_file_get_contents(telemetry->basic_auth_token_file, &contents, NULL,
					 &local)) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "service.telemetry.basic_auth_token_file: cannot read %s: %s",
				    telemetry->basic_auth_token_file, local->message);
			return FALSE;
		}
		g_strstrip(contents);
		if (contents[0] != '\0') {
			*token = g_steal_pointer(&contents);
			return TRUE;
		}
	}
	*token = loki != NULL && !sfl_config_text_blank(loki->auth_token)
			 ? g_strdup(loki->auth_token)
			 : NULL;
	return TRUE;
}

/* removes a header of that name, case-insensitively */
static void
otlp_headers_remove(GPtrArray *headers, const gchar *name)
{
	gsize len = strlen(name);

	for (guint i = headers->len; i > 0; i--) {
		const gchar *line = g_ptr_array_index(headers, i - 1);
		if (g_ascii_strncasecmp(line, name, len) == 0 && line[len] == ':')
			g_ptr_array_remove_index(headers, i - 1);
	}
}

/**
 * sfl_otlp_headers:
 * @telemetry: service.telemetry
 * @loki: (nullable): sink.loki, for the inherited user and token
 * @error: return location for an error
 *
 * Returns: (transfer full) (element-type utf8): "Name: value" strings, or %NULL with @error
 */
GPtrArray *
sfl_otlp_headers(const SflTelemetryConfig *telemetry, const SflLokiConfig *loki, GError **error)
{
	g_autoptr(GPtrArray) headers = g_ptr_array_new_with_free_func(g_free);

	g_return_val_if_fail(telemetry != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (telemetry->auth == SFL_TELEMETRY_AUTH_BASIC) {
		const gchar *user = !sfl_config_text_blank(telemetry->basic_auth_user)
					    ? telemetry->basic_auth_user
				    : loki != NULL ? loki->tenant_id
						   : NULL;
		g_autofree gchar *token = NULL;

		if (!otlp_basic_token(telemetry, loki, &token, error))
			return NULL;
		if (!sfl_config_text_blank(user) && token != NULL) {
			g_autofree gchar *pair = g_strdup_printf("%s:%s", user, token);
			g_autofree gchar *b64 = g_base64_encode((const guchar *)pair, strlen(pair));

			sfl_redact_add_secret(token);
			sfl_redact_add_secret(b64);
			g_ptr_array_add(headers, g_strdup_printf("Authorization: Basic %s", b64));
		}
	}
	for (guint i = 0; telemetry->headers != NULL && i < telemetry->headers->len; i++) {
		const SflConfigPair *pair = g_ptr_array_index(telemetry->headers, i);
		const gchar *value = pair->value != NULL ? pair->value : "";

		/* a line break would smuggle a header (or a body) into the request */
		if (strpbrk(pair->key, "\r\n:") != NULL || strpbrk(value, "\r\n") != NULL) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "service.telemetry.headers.%s: names cannot hold ':' and "
				    "neither names nor values line breaks",
				    pair->key);
			return NULL;
		}
		if (sfl_redact_key_is_secret(pair->key))
			sfl_redact_add_secret(value);
		otlp_headers_remove(headers, pair->key);
		g_ptr_array_add(headers, g_strdup_printf("%s: %s", pair->key, value));
	}
	return g_steal_pointer(&headers);
}

/* ---- exporter ------------------------------------------------------------------------------- */

struct _SflOtlpExporter {
	gatomicrefcount ref;
	SflCurlLoop *loop;
	SflMetrics *metrics;
	SflClock *clock;
	gchar *endpoint;
	GStrv headers; /* with Content-Type, NULL-terminated for sfl_http */
	GPtrArray *resource_attributes;
	gint64 interval_usec;
	gint64 start_ns;
	GSource *timer;
	GCancellable *cancellable;
	gboolean in_flight;
	gboolean stopped;
	GTask *shutdown;     /* waiting for the final export */
	gboolean final_sent; /* the final export went out */
	SflOtlpExporterRefreshFunc refresh;
	gpointer refresh_data;
	guint64 successes;
	guint64 failures;
	guint64 streak;		 /* failures since the last success */
	gint64 streak_logged_at; /* monotonic; when the streak was last reported */
};

static SflOtlpExporter *
otlp_exporter_ref(SflOtlpExporter *self)
{
	g_atomic_ref_count_inc(&self->ref);
	return self;
}

static void
otlp_exporter_unref(SflOtlpExporter *self)
{
	if (!g_atomic_ref_count_dec(&self->ref))
		return;
	g_assert(self->timer == NULL);
	g_clear_object(&self->loop);
	g_clear_pointer(&self->metrics, sfl_metrics_unref);
	g_clear_pointer(&self->clock, sfl_clock_unref);
	g_free(self->endpoint);
	g_strfreev(self->headers);
	g_clear_pointer(&self->resource_attributes, g_ptr_array_unref);
	g_clear_object(&self->cancellable);
	g_free(self);
}

static void
otlp_pair_free(gpointer data)
{
	SflConfigPair *pair = data;
	g_free(pair->key);
	g_free(pair->value);
	g_free(pair);
}

static GPtrArray *
otlp_pairs_copy(const GPtrArray *pairs)
{
	GPtrArray *copy = g_ptr_array_new_with_free_func(otlp_pair_free);

	for (guint i = 0; pairs != NULL && i < pairs->len; i++) {
		const SflConfigPair *src = g_ptr_array_index((GPtrArray *)pairs, i);
		SflConfigPair *dst = g_new0(SflConfigPair, 1);
		dst->key = g_strdup(src->key);
		dst->value = g_strdup(src->value);
		dst->number = src->number;
		g_ptr_array_add(copy, dst);
	}
	return copy;
}

/**
 * sfl_otlp_exporter_new:
 *
 * Returns: (transfer full): an exporter, or %NULL with SFL_ERROR_INVALID_CONFIG when the
 * endpoint is empty or the token file cannot be read
 */
SflOtlpExporter *
sfl_otlp_exporter_new(SflCurlLoop *loop, SflMetrics *metrics, SflClock *clock,
		      const SflTelemetryConfig *telemetry, const SflLokiConfig *loki,
		      GError **error)
{
	g_autoptr(GPtrArray) headers = NULL;
	SflOtlpExporter *self;

	g_return_val_if_fail(SFL_IS_CURL_LOOP(loop), NULL);
	g_return_val_if_fail(metrics != NULL, NULL);
	g_return_val_if_fail(clock != NULL, NULL);
	g_return_val_if_fail(telemetry != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (sfl_config_text_blank(telemetry->endpoint)) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
				    "service.telemetry.endpoint is empty: set the full OTLP "
				    "metrics URL");
		return NULL;
	}
	headers = sfl_otlp_headers(telemetry, loki, error);
	if (headers == NULL)
		return NULL;
	g_ptr_array_add(headers, g_strdup("Content-Type: " SFL_OTLP_CONTENT_TYPE));
	g_ptr_array_add(headers, NULL);

	self = g_new0(SflOtlpExporter, 1);
	g_atomic_ref_count_init(&self->ref);
	self->loop = g_object_ref(loop);
	self->metrics = sfl_metrics_ref(metrics);
	self->clock = sfl_clock_ref(clock);
	self->endpoint = g_strdup(telemetry->endpoint);
	g_ptr_array_set_free_func(headers, NULL);
	self->headers = (GStrv)g_ptr_array_free(g_steal_pointer(&headers), FALSE);
	self->resource_attributes = otlp_pairs_copy(telemetry->resource_attributes);
	self->interval_usec = MAX(telemetry->export_interval, 1);
	self->start_ns = sfl_clock_wall_usec(clock) * 1000;
	self->cancellable = g_cancellable_new();
	return self;
}

/**
 * sfl_otlp_exporter_set_refresh:
 * @self: an exporter
 * @func: (nullable): called on the main thread right before each export
 * @user_data: for @func
 *
 * Lets the owner bring gauges that describe the present (leader, queue depth) up to date, as
 * a scrape of /metrics does.
 */
void
sfl_otlp_exporter_set_refresh(SflOtlpExporter *self, SflOtlpExporterRefreshFunc func,
			      gpointer user_data)
{
	g_return_if_fail(self != NULL);
	self->refresh = func;
	self->refresh_data = user_data;
}

static void otlp_export(SflOtlpExporter *self);

static void
otlp_finish_shutdown(SflOtlpExporter *self)
{
	g_autoptr(GTask) task = g_steal_pointer(&self->shutdown);

	if (task != NULL)
		g_task_return_boolean(task, TRUE);
}

static void
otlp_log_failure(SflOtlpExporter *self, const gchar *reason)
{
	gint64 now = sfl_clock_monotonic_usec(self->clock);
	g_autofree gchar *safe = sfl_redact(reason);

	self->failures++;
	self->streak++;
	if (self->streak == 1) {
		g_warning("OTLP metrics export to service.telemetry.endpoint failed: %s; retrying "
			  "at the next export",
			  safe);
		self->streak_logged_at = now;
	} else if (now - self->streak_logged_at >= SFL_OTLP_FAILURE_LOG_USEC) {
		g_warning("OTLP metrics export still failing: %" G_GUINT64_FORMAT
			  " consecutive failures, the last: %s",
			  self->streak, safe);
		self->streak_logged_at = now;
	}
}

static void
otlp_sent_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	SflOtlpExporter *self = user_data;
	g_autoptr(SflHttpResponse) response = NULL;
	g_autoptr(GError) error = NULL;

	self->in_flight = FALSE;
	response = sfl_http_request_finish(result, &error);
	if (response == NULL) {
		if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			otlp_log_failure(self, error->message);
	} else {
		guint status = sfl_http_response_get_status(response);
		SflHttpClass klass = sfl_http_status_class(status);

		if (klass == SFL_HTTP_CLASS_SUCCESS) {
			if (self->streak > 0)
				g_message("OTLP metrics export recovered after %" G_GUINT64_FORMAT
					  " failed attempt(s)",
					  self->streak);
			self->successes++;
			self->streak = 0;
		} else {
			g_autofree gchar *reason = g_strdup_printf(
				"HTTP %u%s", status,
				klass == SFL_HTTP_CLASS_AUTH
					? " (check the basic-auth user and token or the "
					  "Authorization header)"
					: "");
			otlp_log_failure(self, reason);
		}
	}
	if (self->shutdown != NULL) {
		/* the export that was in flight when shutdown began is done: now the final one */
		if (!g_cancellable_is_cancelled(self->cancellable) && !self->final_sent) {
			self->final_sent = TRUE;
			otlp_export(self);
		} else {
			otlp_finish_shutdown(self);
		}
	}
	otlp_exporter_unref(self);
}

static void
otlp_export(SflOtlpExporter *self)
{
	g_autoptr(GBytes) body = NULL;
	gint64 now_ns;

	if (self->in_flight) {
		/* a slow collector: skip this tick rather than pile requests up */
		g_debug("previous OTLP export still in flight; skipping this one");
		return;
	}
	if (self->refresh != NULL)
		self->refresh(self->refresh_data);
	now_ns = sfl_clock_wall_usec(self->clock) * 1000;
	body = sfl_otlp_encode(self->metrics, self->resource_attributes, self->start_ns,
			       MAX(now_ns, self->start_ns));
	self->in_flight = TRUE;
	sfl_http_request_async(self->loop, "POST", self->endpoint,
			       (const gchar *const *)self->headers, body, SFL_OTLP_TIMEOUT_MS,
			       self->cancellable, otlp_sent_cb, otlp_exporter_ref(self));
}

static void otlp_arm(SflOtlpExporter *self);

static void
otlp_tick_cb(gpointer user_data)
{
	SflOtlpExporter *self = user_data;

	otlp_export(self);
	otlp_arm(self);
}

/* one-shot timers re-armed after each tick, so the fake clock drives them one at a time */
static void
otlp_arm(SflOtlpExporter *self)
{
	if (self->stopped)
		return;
	sfl_clock_once(self->clock, &self->timer, self->interval_usec, NULL, otlp_tick_cb, self,
		       g_main_context_get_thread_default());
}

static void
otlp_disarm(SflOtlpExporter *self)
{
	if (self->timer == NULL)
		return;
	g_source_destroy(self->timer);
	g_clear_pointer(&self->timer, g_source_unref);
}

/* the endpoint for a log line: credentials in the user part or the query never shown */
static gchar *
otlp_display_url(const gchar *url)
{
	g_autoptr(GUri) uri = g_uri_parse(url, G_URI_FLAGS_NONE, NULL);

	if (uri == NULL)
		return g_strdup("service.telemetry.endpoint");
	return g_uri_to_string_partial(uri, G_URI_HIDE_USERINFO | G_URI_HIDE_QUERY |
						    G_URI_HIDE_FRAGMENT);
}

/**
 * sfl_otlp_exporter_start:
 * @self: an exporter
 */
void
sfl_otlp_exporter_start(SflOtlpExporter *self)
{
	g_return_if_fail(self != NULL);
	if (self->timer != NULL || self->stopped)
		return;
	otlp_arm(self);
	{
		g_autofree gchar *every = sfl_duration_format(self->interval_usec);
		g_autofree gchar *where = otlp_display_url(self->endpoint);
		g_message("OTLP metrics push to %s every %s", where, every);
	}
}

/**
 * sfl_otlp_exporter_shutdown_async:
 * @self: an exporter
 * @callback: called when the final export is answered or failed (within its 10 s deadline),
 *   or was abandoned by sfl_otlp_exporter_free()
 * @user_data: for @callback
 */
void
sfl_otlp_exporter_shutdown_async(SflOtlpExporter *self, GAsyncReadyCallback callback,
				 gpointer user_data)
{
	g_autoptr(GTask) task = NULL;

	g_return_if_fail(self != NULL);

	task = g_task_new(NULL, NULL, callback, user_data);
	g_task_set_source_tag(task, sfl_otlp_exporter_shutdown_async);
	self->stopped = TRUE;
	otlp_disarm(self);
	if (self->shutdown != NULL || g_cancellable_is_cancelled(self->cancellable)) {
		/* a second shutdown, or the exporter is being freed: nothing more to send */
		g_task_return_boolean(task, TRUE);
		return;
	}
	self->shutdown = g_steal_pointer(&task);
	if (self->in_flight)
		return; /* otlp_sent_cb sends the final export when this one is done */
	self->final_sent = TRUE;
	otlp_export(self);
}

void
sfl_otlp_exporter_shutdown_finish(SflOtlpExporter *self, GAsyncResult *result)
{
	g_return_if_fail(g_task_is_valid(result, NULL));
	g_task_propagate_boolean(G_TASK(result), NULL);
}

guint64
sfl_otlp_exporter_get_successes(SflOtlpExporter *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->successes;
}

guint64
sfl_otlp_exporter_get_failures(SflOtlpExporter *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->failures;
}

/**
 * sfl_otlp_exporter_free:
 * @self: an exporter
 *
 * Stops the timer and cancels an export in flight; a pending shutdown completes.
 */
void
sfl_otlp_exporter_free(SflOtlpExporter *self)
{
	if (self == NULL)
		return;
	self->stopped = TRUE;
	otlp_disarm(self);
	g_cancellable_cancel(self->cancellable);
	if (!self->in_flight)
		otlp_finish_shutdown(self);
	otlp_exporter_unref(self);
}
