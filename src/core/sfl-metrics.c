/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflMetrics"

#include "config.h"

#include "sfl-metrics.h"

#include <math.h>
#include <string.h>

/*
 * Values live in 64-bit words updated with the compiler's __atomic builtins (GLib 2.74 has no
 * 64-bit integer atomics). Counters and gauges keep a double's bits, so fractional counters
 * (seconds, bytes as doubles) need no scaling; a CAS loop turns "add" into one atomic step.
 * Integral counts stay exact up to 2^53, far beyond any process lifetime of increments.
 */

/* the key a series is indexed by; lookups build one on the stack from the caller's values */
typedef struct {
	guint hash;
	guint n_values;
	const gchar *const *values;
} SflSeriesKey;

struct _SflSeries {
	SflSeriesKey key; /* first, so the table can use &series->key as its key */
	SflMetricFamily *family;
	gchar **label_values; /* NULL-terminated, what key.values points at */
	guint64 value_bits;   /* counter/gauge value, histogram sum: a double's bits */
	guint64 count;	      /* histogram observations */
	guint64 buckets[];    /* histogram: n_bounds + 1, not cumulative; the last is +Inf */
};

struct _SflMetricFamily {
	SflMetrics *registry; /* not a reference: families die with the registry */
	SflMetricType type;
	gchar *name;
	gchar *help;
	gchar **label_names;
	guint n_labels;
	gdouble *bounds;
	guint n_bounds;
	/* guarded by the registry lock */
	GPtrArray *series; /* creation order */
	GHashTable *index; /* SflSeriesKey * → SflSeries * */
	guint n_regular;   /* series counted against SFL_METRICS_MAX_SERIES */
	SflSeries *overflow;
	SflSeries *only; /* the single series of a family without labels */
};

struct _SflMetrics {
	gint ref_count;
	GMutex lock;
	GPtrArray *families; /* registration order */
	GHashTable *by_name; /* name → family */
};

/* ---- atomic doubles ------------------------------------------------------------------- */

static inline guint64
sfl_metrics_bits(gdouble v)
{
	guint64 bits;
	memcpy(&bits, &v, sizeof bits);
	return bits;
}

static inline gdouble
sfl_metrics_double(guint64 bits)
{
	gdouble v;
	memcpy(&v, &bits, sizeof v);
	return v;
}

static inline gdouble
sfl_metrics_atomic_load(guint64 *word)
{
	return sfl_metrics_double(__atomic_load_n(word, __ATOMIC_RELAXED));
}

static inline void
sfl_metrics_atomic_add(guint64 *word, gdouble delta)
{
	guint64 old = __atomic_load_n(word, __ATOMIC_RELAXED);
	guint64 new;

	do {
		new = sfl_metrics_bits(sfl_metrics_double(old) + delta);
	} while (!__atomic_compare_exchange_n(word, &old, new, TRUE, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* ---- names ------------------------------------------------------------------------------ */

static gboolean
sfl_metrics_name_is_valid(const gchar *name)
{
	if (name == NULL || !(g_ascii_isalpha(name[0]) || name[0] == '_' || name[0] == ':'))
		return FALSE;
	for (const gchar *p = name + 1; *p != '\0'; p++) {
		if (!(g_ascii_isalnum(*p) || *p == '_' || *p == ':'))
			return FALSE;
	}
	return TRUE;
}

static gboolean
sfl_metrics_label_name_is_valid(const gchar *name)
{
	if (name == NULL || !(g_ascii_isalpha(name[0]) || name[0] == '_'))
		return FALSE;
	if (g_str_has_prefix(name, "__"))
		return FALSE;
	for (const gchar *p = name + 1; *p != '\0'; p++) {
		if (!(g_ascii_isalnum(*p) || *p == '_'))
			return FALSE;
	}
	return TRUE;
}

/* ---- series index ----------------------------------------------------------------------- */

/* FNV-1a over the values, each followed by a 0xff byte (never in UTF-8) so tuples that only
 * differ in where one value ends do not collide by construction */
static guint
sfl_metrics_tuple_hash(const gchar *const *values, guint n_values)
{
	guint32 h = 2166136261u;

	for (guint i = 0; i < n_values; i++) {
		for (const guchar *p = (const guchar *)values[i]; *p != '\0'; p++)
			h = (h ^ *p) * 16777619u;
		h = (h ^ 0xffu) * 16777619u;
	}
	return h;
}

static guint
sfl_series_key_hash(gconstpointer key)
{
	return ((const SflSeriesKey *)key)->hash;
}

static gboolean
sfl_series_key_equal(gconstpointer a, gconstpointer b)
{
	const SflSeriesKey *ka = a;
	const SflSeriesKey *kb = b;

	if (ka->hash != kb->hash || ka->n_values != kb->n_values)
		return FALSE;
	for (guint i = 0; i < ka->n_values; i++) {
		if (strcmp(ka->values[i], kb->values[i]) != 0)
			return FALSE;
	}
	return TRUE;
}

static void
sfl_series_free(SflSeries *series)
{
	g_strfreev(series->label_values);
	g_free(series);
}

static void
sfl_metric_family_free(SflMetricFamily *family)
{
	g_hash_table_unref(family->index);
	g_ptr_array_unref(family->series);
	g_strfreev(family->label_names);
	g_free(family->bounds);
	g_free(family->help);
	g_free(family->name);
	g_free(family);
}

/* called with the registry lock held; @values are valid UTF-8 */
static SflSeries *
sfl_metric_family_add_series(SflMetricFamily *family, const gchar *const *values, guint hash)
{
	gsize n_buckets = family->type == SFL_METRIC_HISTOGRAM ? family->n_bounds + 1 : 0;
	SflSeries *series = g_malloc0(sizeof(SflSeries) + n_buckets * sizeof(guint64));

	series->family = family;
	series->label_values = g_new0(gchar *, family->n_labels + 1);
	for (guint i = 0; i < family->n_labels; i++)
		series->label_values[i] = g_strdup(values[i]);
	series->key.hash = hash;
	series->key.n_values = family->n_labels;
	series->key.values = (const gchar *const *)series->label_values;
	g_ptr_array_add(family->series, series);
	g_hash_table_add(family->index, &series->key);
	return series;
}

/* called with the registry lock held */
static SflSeries *
sfl_metric_family_overflow(SflMetricFamily *family)
{
	g_autofree const gchar **others = NULL;
	SflSeriesKey probe = { 0 };
	SflSeries *found;

	if (family->overflow != NULL)
		return family->overflow;
	g_warning("metric %s has more than %u label sets; further ones are counted under the "
		  "label values \"other\"",
		  family->name, (guint)SFL_METRICS_MAX_SERIES);
	others = g_new0(const gchar *, family->n_labels + 1);
	for (guint i = 0; i < family->n_labels; i++)
		others[i] = "other";
	probe.n_values = family->n_labels;
	probe.values = others;
	probe.hash = sfl_metrics_tuple_hash(others, family->n_labels);
	/* a caller may have used "other" itself; then that series is the overflow too */
	found = g_hash_table_lookup(family->index, &probe);
	if (found == NULL)
		found = sfl_metric_family_add_series(family, others, probe.hash);
	family->overflow = found;
	return found;
}

/* ---- registry ---------------------------------------------------------------------------- */

/**
 * sfl_metrics_new:
 *
 * Returns: (transfer full): an empty registry
 */
SflMetrics *
sfl_metrics_new(void)
{
	SflMetrics *self = g_new0(SflMetrics, 1);

	self->ref_count = 1;
	g_mutex_init(&self->lock);
	self->families = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_metric_family_free);
	self->by_name = g_hash_table_new(g_str_hash, g_str_equal);
	return self;
}

/**
 * sfl_metrics_ref:
 * @self: a registry
 *
 * Returns: (transfer full): @self
 */
SflMetrics *
sfl_metrics_ref(SflMetrics *self)
{
	g_return_val_if_fail(self != NULL, NULL);
	g_atomic_int_inc(&self->ref_count);
	return self;
}

/**
 * sfl_metrics_unref:
 * @self: (nullable) (transfer full): a registry
 *
 * Frees the registry with every family and series when the last reference goes.
 */
void
sfl_metrics_unref(SflMetrics *self)
{
	if (self == NULL)
		return;
	if (!g_atomic_int_dec_and_test(&self->ref_count))
		return;
	g_hash_table_unref(self->by_name);
	g_ptr_array_unref(self->families);
	g_mutex_clear(&self->lock);
	g_free(self);
}

static gboolean
sfl_metrics_same_labels(SflMetricFamily *family, const gchar *const *label_names)
{
	guint n = label_names != NULL ? g_strv_length((gchar **)label_names) : 0;

	if (n != family->n_labels)
		return FALSE;
	for (guint i = 0; i < n; i++) {
		if (g_strcmp0(family->label_names[i], label_names[i]) != 0)
			return FALSE;
	}
	return TRUE;
}

static SflMetricFamily *
sfl_metrics_register(SflMetrics *self, SflMetricType type, const gchar *name, const gchar *help,
		     const gchar *const *label_names, const gdouble *bounds, guint n_bounds)
{
	g_autoptr(GMutexLocker) locker = NULL;
	SflMetricFamily *family;
	guint n_labels = label_names != NULL ? g_strv_length((gchar **)label_names) : 0;

	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(sfl_metrics_name_is_valid(name), NULL);
	/* the renderer adds the suffix, so a name that carries it would end up doubled */
	g_return_val_if_fail(type != SFL_METRIC_COUNTER || !g_str_has_suffix(name, "_total"), NULL);
	for (guint i = 0; i < n_labels; i++) {
		g_return_val_if_fail(sfl_metrics_label_name_is_valid(label_names[i]), NULL);
		/* histograms add le themselves */
		g_return_val_if_fail(
			type != SFL_METRIC_HISTOGRAM || g_strcmp0(label_names[i], "le") != 0, NULL);
		for (guint j = 0; j < i; j++)
			g_return_val_if_fail(g_strcmp0(label_names[i], label_names[j]) != 0, NULL);
	}
	for (guint i = 0; i < n_bounds; i++) {
		g_return_val_if_fail(isfinite(bounds[i]), NULL);
		g_return_val_if_fail(i == 0 || bounds[i - 1] < bounds[i], NULL);
	}

	locker = g_mutex_locker_new(&self->lock);
	family = g_hash_table_lookup(self->by_name, name);
	if (family != NULL) {
		g_return_val_if_fail(family->type == type, NULL);
		g_return_val_if_fail(sfl_metrics_same_labels(family, label_names), NULL);
		g_return_val_if_fail(
			family->n_bounds == n_bounds &&
				(n_bounds == 0 ||
				 memcmp(family->bounds, bounds, n_bounds * sizeof(gdouble)) == 0),
			NULL);
		return family;
	}

	family = g_new0(SflMetricFamily, 1);
	family->registry = self;
	family->type = type;
	family->name = g_strdup(name);
	family->help = g_strdup(help != NULL ? help : "");
	family->label_names = g_strdupv((gchar **)label_names);
	if (family->label_names == NULL)
		family->label_names = g_new0(gchar *, 1);
	family->n_labels = n_labels;
	if (n_bounds > 0)
		family->bounds = g_memdup2(bounds, n_bounds * sizeof(gdouble));
	family->n_bounds = n_bounds;
	family->series = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_series_free);
	family->index = g_hash_table_new(sfl_series_key_hash, sfl_series_key_equal);
	/* created now so the family is on the first scrape (a gauge at 0, SFL-0006) */
	if (n_labels == 0) {
		family->only =
			sfl_metric_family_add_series(family, NULL, sfl_metrics_tuple_hash(NULL, 0));
	}
	g_ptr_array_add(self->families, family);
	g_hash_table_insert(self->by_name, family->name, family);
	return family;
}

/**
 * sfl_metrics_counter:
 * @self: a registry
 * @name: the metric name without `_total`
 * @help: (nullable): one line of description
 * @label_names: (nullable) (array zero-terminated=1): the label names
 *
 * Registers a counter family, or returns the one registered under @name before.
 *
 * Returns: (transfer none): the family, alive as long as the registry
 */
SflMetricFamily *
sfl_metrics_counter(SflMetrics *self, const gchar *name, const gchar *help,
		    const gchar *const *label_names)
{
	return sfl_metrics_register(self, SFL_METRIC_COUNTER, name, help, label_names, NULL, 0);
}

/**
 * sfl_metrics_gauge:
 * @self: a registry
 * @name: the metric name
 * @help: (nullable): one line of description
 * @label_names: (nullable) (array zero-terminated=1): the label names
 *
 * Returns: (transfer none): the family, alive as long as the registry
 */
SflMetricFamily *
sfl_metrics_gauge(SflMetrics *self, const gchar *name, const gchar *help,
		  const gchar *const *label_names)
{
	return sfl_metrics_register(self, SFL_METRIC_GAUGE, name, help, label_names, NULL, 0);
}

/**
 * sfl_metrics_histogram:
 * @self: a registry
 * @name: the metric name without `_bucket`/`_sum`/`_count`
 * @help: (nullable): one line of description
 * @label_names: (nullable) (array zero-terminated=1): the label names (not `le`)
 * @bounds: (array length=n_bounds): strictly ascending finite upper bounds
 * @n_bounds: how many bounds
 *
 * Returns: (transfer none): the family, alive as long as the registry
 */
SflMetricFamily *
sfl_metrics_histogram(SflMetrics *self, const gchar *name, const gchar *help,
		      const gchar *const *label_names, const gdouble *bounds, guint n_bounds)
{
	g_return_val_if_fail(bounds != NULL || n_bounds == 0, NULL);
	return sfl_metrics_register(self, SFL_METRIC_HISTOGRAM, name, help, label_names, bounds,
				    n_bounds);
}

/**
 * sfl_metric_family_series:
 * @family: a family
 * @label_values: (nullable): one value per label name, in the same order
 *
 * Finds or creates the series for @label_values. Finding an existing series takes the
 * registry lock but allocates nothing; values that are not valid UTF-8 are repaired first
 * (that path allocates). Past %SFL_METRICS_MAX_SERIES series the shared overflow series is
 * returned.
 *
 * Returns: (transfer none): the series, alive as long as the registry
 */
SflSeries *
sfl_metric_family_series(SflMetricFamily *family, const gchar *const *label_values)
{
	g_autoptr(GMutexLocker) locker = NULL;
	g_autoptr(GPtrArray) repaired = NULL;
	SflSeriesKey probe = { 0 };
	SflSeries *series;

	g_return_val_if_fail(family != NULL, NULL);
	if (family->n_labels == 0)
		return family->only;
	g_return_val_if_fail(label_values != NULL, NULL);
	for (guint i = 0; i < family->n_labels; i++) {
		g_return_val_if_fail(label_values[i] != NULL, NULL);
		if (repaired == NULL && !g_utf8_validate(label_values[i], -1, NULL)) {
			repaired = g_ptr_array_new_with_free_func(g_free);
			for (guint j = 0; j < family->n_labels; j++)
				g_ptr_array_add(repaired, g_utf8_make_valid(label_values[j], -1));
		}
	}
	if (repaired != NULL)
		label_values = (const gchar *const *)repaired->pdata;

	probe.n_values = family->n_labels;
	probe.values = label_values;
	probe.hash = sfl_metrics_tuple_hash(label_values, family->n_labels);
	locker = g_mutex_locker_new(&family->registry->lock);
	series = g_hash_table_lookup(family->index, &probe);
	if (series != NULL)
		return series;
	if (family->n_regular >= SFL_METRICS_MAX_SERIES)
		return sfl_metric_family_overflow(family);
	family->n_regular++;
	return sfl_metric_family_add_series(family, label_values, probe.hash);
}

/* ---- updates: lock-free, allocation-free --------------------------------------------------- */

/**
 * sfl_series_add:
 * @series: (nullable): a counter or gauge series; %NULL (no registry) ignores the update
 * @value: the amount; not negative for counters
 */
void
sfl_series_add(SflSeries *series, gdouble value)
{
	/* components run without a registry in tests and tools: updates are then no-ops */
	if (series == NULL)
		return;
	g_return_if_fail(series->family->type != SFL_METRIC_HISTOGRAM);
	/* also refuses NaN, which would poison a counter for good */
	g_return_if_fail(series->family->type != SFL_METRIC_COUNTER || value >= 0);
	sfl_metrics_atomic_add(&series->value_bits, value);
}

/**
 * sfl_series_inc:
 * @series: (nullable): a counter or gauge series
 */
void
sfl_series_inc(SflSeries *series)
{
	sfl_series_add(series, 1.0);
}

/**
 * sfl_series_set:
 * @series: (nullable): a gauge series; %NULL ignores the update
 * @value: the new value
 */
void
sfl_series_set(SflSeries *series, gdouble value)
{
	if (series == NULL)
		return;
	g_return_if_fail(series->family->type == SFL_METRIC_GAUGE);
	__atomic_store_n(&series->value_bits, sfl_metrics_bits(value), __ATOMIC_RELAXED);
}

/**
 * sfl_series_observe:
 * @series: (nullable): a histogram series; %NULL ignores the update
 * @value: the observation; it lands in the first bucket whose bound is >= @value
 */
void
sfl_series_observe(SflSeries *series, gdouble value)
{
	SflMetricFamily *family;
	guint lo = 0;
	guint hi;

	if (series == NULL)
		return;
	family = series->family;
	g_return_if_fail(family->type == SFL_METRIC_HISTOGRAM);
	/* first bound >= value; NaN compares false everywhere and falls through to +Inf */
	hi = family->n_bounds;
	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		if (family->bounds[mid] >= value)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (isnan(value))
		lo = family->n_bounds;
	__atomic_fetch_add(&series->buckets[lo], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&series->count, 1, __ATOMIC_RELAXED);
	sfl_metrics_atomic_add(&series->value_bits, value);
}

/**
 * sfl_series_get:
 * @series: a series
 *
 * Returns: the counter or gauge value, or the histogram's sum of observations
 */
gdouble
sfl_series_get(SflSeries *series)
{
	g_return_val_if_fail(series != NULL, 0);
	return sfl_metrics_atomic_load(&series->value_bits);
}

/**
 * sfl_series_get_count:
 * @series: a histogram series
 *
 * Returns: how many observations were made
 */
guint64
sfl_series_get_count(SflSeries *series)
{
	g_return_val_if_fail(series != NULL, 0);
	g_return_val_if_fail(series->family->type == SFL_METRIC_HISTOGRAM, 0);
	return __atomic_load_n(&series->count, __ATOMIC_RELAXED);
}

/**
 * sfl_series_get_bucket:
 * @series: a histogram series
 * @index: 0 .. n_bounds; n_bounds is the +Inf bucket
 *
 * Returns: the observations in that bucket alone (not cumulative)
 */
guint64
sfl_series_get_bucket(SflSeries *series, guint index)
{
	g_return_val_if_fail(series != NULL, 0);
	g_return_val_if_fail(series->family->type == SFL_METRIC_HISTOGRAM, 0);
	g_return_val_if_fail(index <= series->family->n_bounds, 0);
	return __atomic_load_n(&series->buckets[index], __ATOMIC_RELAXED);
}

/* ---- accessors ---------------------------------------------------------------------------- */

/**
 * sfl_metric_family_get_name:
 * @family: a family
 *
 * Returns: (transfer none): the name as registered (without Prometheus suffixes)
 */
const gchar *
sfl_metric_family_get_name(SflMetricFamily *family)
{
	g_return_val_if_fail(family != NULL, NULL);
	return family->name;
}

/**
 * sfl_metric_family_get_help:
 * @family: a family
 *
 * Returns: (transfer none): the help text ("" when none was given)
 */
const gchar *
sfl_metric_family_get_help(SflMetricFamily *family)
{
	g_return_val_if_fail(family != NULL, NULL);
	return family->help;
}

/**
 * sfl_metric_family_get_type:
 * @family: a family
 *
 * Returns: the metric type
 */
SflMetricType
sfl_metric_family_get_type(SflMetricFamily *family)
{
	g_return_val_if_fail(family != NULL, SFL_METRIC_COUNTER);
	return family->type;
}

/**
 * sfl_metric_family_get_label_names:
 * @family: a family
 *
 * Returns: (transfer none) (array zero-terminated=1): the label names (empty, never NULL)
 */
const gchar *const *
sfl_metric_family_get_label_names(SflMetricFamily *family)
{
	g_return_val_if_fail(family != NULL, NULL);
	return (const gchar *const *)family->label_names;
}

/**
 * sfl_metric_family_get_bounds:
 * @family: a family
 * @n_bounds: (out) (optional): how many bounds
 *
 * Returns: (transfer none) (nullable): the histogram bounds without +Inf
 */
const gdouble *
sfl_metric_family_get_bounds(SflMetricFamily *family, guint *n_bounds)
{
	g_return_val_if_fail(family != NULL, NULL);
	if (n_bounds != NULL)
		*n_bounds = family->n_bounds;
	return family->bounds;
}

/**
 * sfl_series_get_label_values:
 * @series: a series
 *
 * Returns: (transfer none) (array zero-terminated=1): the label values, in label-name order
 */
const gchar *const *
sfl_series_get_label_values(SflSeries *series)
{
	g_return_val_if_fail(series != NULL, NULL);
	return (const gchar *const *)series->label_values;
}

/**
 * sfl_metrics_foreach:
 * @self: a registry
 * @func: called once per series, families in registration order, series in creation order
 * @user_data: for @func
 *
 * Families without any series are skipped. @func runs without the registry lock, so it may
 * look series up; series created meanwhile are not visited.
 */
void
sfl_metrics_foreach(SflMetrics *self, SflMetricsVisitFunc func, gpointer user_data)
{
	g_autoptr(GPtrArray) snapshot = g_ptr_array_new();

	g_return_if_fail(self != NULL);
	g_return_if_fail(func != NULL);
	g_mutex_lock(&self->lock);
	for (guint i = 0; i < self->families->len; i++) {
		SflMetricFamily *family = g_ptr_array_index(self->families, i);
		for (guint j = 0; j < family->series->len; j++)
			g_ptr_array_add(snapshot, g_ptr_array_index(family->series, j));
	}
	g_mutex_unlock(&self->lock);
	for (guint i = 0; i < snapshot->len; i++) {
		SflSeries *series = g_ptr_array_index(snapshot, i);
		func(series->family, series, user_data);
	}
}

/* ---- Prometheus text exposition 0.0.4 ------------------------------------------------------ */

/* integral values below 2^53 print as integers; others in the shortest text that reads back
 * to the same double; infinities and NaN as Prometheus spells them */
static void
sfl_metrics_append_number(GString *out, gdouble v)
{
	gchar buf[G_ASCII_DTOSTR_BUF_SIZE];

	if (isnan(v)) {
		g_string_append(out, "NaN");
		return;
	}
	if (isinf(v)) {
		g_string_append(out, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		g_string_append_printf(out, "%" G_GINT64_FORMAT, (gint64)v);
		return;
	}
	for (gint precision = 1; precision <= 17; precision++) {
		gchar format[8];

		g_snprintf(format, sizeof format, "%%.%dg", precision);
		g_ascii_formatd(buf, sizeof buf, format, v);
		if (g_ascii_strtod(buf, NULL) == v)
			break;
	}
	g_string_append(out, buf);
}

static void
sfl_metrics_append_escaped(GString *out, const gchar *s, gboolean quotes)
{
	for (const gchar *p = s; *p != '\0'; p++) {
		if (*p == '\\')
			g_string_append(out, "\\\\");
		else if (*p == '\n')
			g_string_append(out, "\\n");
		else if (*p == '"' && quotes)
			g_string_append(out, "\\\"");
		else
			g_string_append_c(out, *p);
	}
}

/* `name{a="x",b="y"}` with an optional extra `le` pair last; no braces when empty */
static void
sfl_metrics_append_sample_name(GString *out, SflSeries *series, const gchar *suffix,
			       const gchar *le)
{
	SflMetricFamily *family = series->family;

	g_string_append(out, family->name);
	g_string_append(out, suffix);
	if (family->n_labels == 0 && le == NULL)
		return;
	g_string_append_c(out, '{');
	for (guint i = 0; i < family->n_labels; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		g_string_append(out, family->label_names[i]);
		g_string_append(out, "=\"");
		sfl_metrics_append_escaped(out, series->label_values[i], TRUE);
		g_string_append_c(out, '"');
	}
	if (le != NULL) {
		if (family->n_labels > 0)
			g_string_append_c(out, ',');
		g_string_append(out, "le=\"");
		g_string_append(out, le);
		g_string_append_c(out, '"');
	}
	g_string_append_c(out, '}');
}

static void
sfl_metrics_render_histogram(GString *out, SflSeries *series)
{
	SflMetricFamily *family = series->family;
	g_autoptr(GString) le = g_string_new(NULL);
	guint64 cumulative = 0;

	for (guint b = 0; b <= family->n_bounds; b++) {
		cumulative += __atomic_load_n(&series->buckets[b], __ATOMIC_RELAXED);
		g_string_truncate(le, 0);
		if (b < family->n_bounds)
			sfl_metrics_append_number(le, family->bounds[b]);
		else
			g_string_append(le, "+Inf");
		sfl_metrics_append_sample_name(out, series, "_bucket", le->str);
		g_string_append_printf(out, " %" G_GUINT64_FORMAT "\n", cumulative);
	}
	sfl_metrics_append_sample_name(out, series, "_sum", NULL);
	g_string_append_c(out, ' ');
	sfl_metrics_append_number(out, sfl_metrics_atomic_load(&series->value_bits));
	g_string_append_c(out, '\n');
	/* the count is the buckets' total rather than the count word, so _count always equals
	 * the +Inf bucket even while other threads observe during the scrape */
	sfl_metrics_append_sample_name(out, series, "_count", NULL);
	g_string_append_printf(out, " %" G_GUINT64_FORMAT "\n", cumulative);
}

/**
 * sfl_metrics_render_prometheus:
 * @self: a registry
 *
 * Renders every family (HELP and TYPE lines, then each series) in the Prometheus text
 * exposition format 0.0.4. Counters get `_total`, which is part of the family name in that
 * format, so the HELP and TYPE lines carry it as well.
 *
 * Returns: (transfer full): the exposition text
 */
gchar *
sfl_metrics_render_prometheus(SflMetrics *self)
{
	g_autoptr(GString) out = NULL;
	g_autoptr(GMutexLocker) locker = NULL;

	g_return_val_if_fail(self != NULL, NULL);
	out = g_string_sized_new(4096);
	locker = g_mutex_locker_new(&self->lock);
	for (guint i = 0; i < self->families->len; i++) {
		SflMetricFamily *family = g_ptr_array_index(self->families, i);
		const gchar *suffix = family->type == SFL_METRIC_COUNTER ? "_total" : "";
		const gchar *type = family->type == SFL_METRIC_COUNTER ? "counter"
				    : family->type == SFL_METRIC_GAUGE ? "gauge"
								       : "histogram";

		if (family->help[0] != '\0') {
			g_string_append_printf(out, "# HELP %s%s ", family->name, suffix);
			sfl_metrics_append_escaped(out, family->help, FALSE);
			g_string_append_c(out, '\n');
		}
		g_string_append_printf(out, "# TYPE %s%s %s\n", family->name, suffix, type);
		for (guint j = 0; j < family->series->len; j++) {
			SflSeries *series = g_ptr_array_index(family->series, j);

			if (family->type == SFL_METRIC_HISTOGRAM) {
				sfl_metrics_render_histogram(out, series);
				continue;
			}
			sfl_metrics_append_sample_name(out, series, suffix, NULL);
			g_string_append_c(out, ' ');
			sfl_metrics_append_number(out,
						  sfl_metrics_atomic_load(&series->value_bits));
			g_string_append_c(out, '\n');
		}
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}
