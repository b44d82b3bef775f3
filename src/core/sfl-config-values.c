/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

#include <math.h>
#include <string.h>

#include "sfl-config-schema.h"
#include "sfl-error.h"

/* a century is more than any interval means; it keeps every sum far from overflow */
#define SFL_DURATION_MAX_USEC ((gdouble)100 * 365 * 24 * 3600 * G_USEC_PER_SEC)

typedef struct {
	const gchar *suffix;
	gint64 usec;
} SflDurationUnit;

/* longest suffix first so "ms" is not read as "m" followed by garbage */
static const SflDurationUnit sfl_duration_units[] = {
	{ "us", 1 },
	{ "ms", 1000 },
	{ "s", G_USEC_PER_SEC },
	{ "m", G_GINT64_CONSTANT(60) * G_USEC_PER_SEC },
	{ "h", G_GINT64_CONSTANT(3600) * G_USEC_PER_SEC },
	{ "d", G_GINT64_CONSTANT(86400) * G_USEC_PER_SEC },
	{ "w", G_GINT64_CONSTANT(7) * 86400 * G_USEC_PER_SEC },
};

static gboolean
sfl_duration_read_number(const gchar **p, gdouble *out)
{
	const gchar *start = *p;
	gchar *end = NULL;

	/* no signs, no exponents, no spaces: just digits with an optional fraction */
	if (!g_ascii_isdigit(**p) && **p != '.')
		return FALSE;
	while (g_ascii_isdigit(**p) || **p == '.')
		(*p)++;
	*out = g_ascii_strtod(start, &end);
	return end == *p && isfinite(*out);
}

static gboolean
sfl_duration_parse_go(const gchar *text, gdouble *usec)
{
	const gchar *p = text;
	gdouble total = 0;

	if (*p == '\0')
		return FALSE;
	while (*p != '\0') {
		gdouble n;
		const SflDurationUnit *unit = NULL;

		if (!sfl_duration_read_number(&p, &n))
			return FALSE;
		if (g_str_has_prefix(p, "us"))
			unit = &sfl_duration_units[0];
		else if (g_str_has_prefix(p, "ms"))
			unit = &sfl_duration_units[1];
		else {
			for (guint i = 2; i < G_N_ELEMENTS(sfl_duration_units); i++) {
				if (*p == sfl_duration_units[i].suffix[0]) {
					unit = &sfl_duration_units[i];
					break;
				}
			}
		}
		if (unit == NULL)
			return FALSE;
		p += strlen(unit->suffix);
		total += n * (gdouble)unit->usec;
	}
	*usec = total;
	return TRUE;
}

/* ISO-8601 durations without calendar units: PnW, PnD, PTnHnMnS and combinations */
static gboolean
sfl_duration_parse_iso(const gchar *text, gdouble *usec)
{
	const gchar *p = text;
	gboolean in_time = FALSE;
	gboolean any = FALSE;
	gdouble total = 0;

	if (*p != 'P' && *p != 'p')
		return FALSE;
	p++;
	while (*p != '\0') {
		gdouble n;
		gchar unit;
		if (!in_time && (*p == 'T' || *p == 't')) {
			in_time = TRUE;
			p++;
			continue;
		}
		if (!sfl_duration_read_number(&p, &n))
			return FALSE;
		unit = g_ascii_toupper(*p);
		p++;
		if (!in_time && unit == 'W')
			total += n * 7 * 86400;
		else if (!in_time && unit == 'D')
			total += n * 86400;
		else if (in_time && unit == 'H')
			total += n * 3600;
		else if (in_time && unit == 'M')
			total += n * 60;
		else if (in_time && unit == 'S')
			total += n;
		else
			return FALSE;
		any = TRUE;
	}
	if (!any)
		return FALSE;
	*usec = total * G_USEC_PER_SEC;
	return TRUE;
}

/* [H]H:MM:SS[.ffffff], as Python's timedelta parsing accepts */
static gboolean
sfl_duration_parse_clock(const gchar *text, gdouble *usec)
{
	g_auto(GStrv) parts = g_strsplit(text, ":", -1);
	gdouble h, m, s;
	const gchar *p;

	if (g_strv_length(parts) != 3)
		return FALSE;
	p = parts[0];
	if (!sfl_duration_read_number(&p, &h) || *p != '\0' || strchr(parts[0], '.') != NULL)
		return FALSE;
	p = parts[1];
	if (!sfl_duration_read_number(&p, &m) || *p != '\0' || strchr(parts[1], '.') != NULL ||
	    m >= 60)
		return FALSE;
	p = parts[2];
	if (!sfl_duration_read_number(&p, &s) || *p != '\0' || s >= 60)
		return FALSE;
	*usec = (h * 3600 + m * 60 + s) * G_USEC_PER_SEC;
	return TRUE;
}

/**
 * sfl_duration_parse:
 * @text: e.g. "500ms", "30s", "1h30m", "1.5h", "2d", "1w", "PT5M", "01:30:00"
 * @out: (out): microseconds
 * @error: return location for an error
 *
 * Bare numbers are handled by the caller (YAML numbers are seconds); here they are an error.
 *
 * Returns: %TRUE on success
 */
gboolean
sfl_duration_parse(const gchar *text, SflDuration *out, GError **error)
{
	gdouble usec = 0;

	g_return_val_if_fail(text != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (!sfl_duration_parse_go(text, &usec) && !sfl_duration_parse_iso(text, &usec) &&
	    !sfl_duration_parse_clock(text, &usec)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "invalid duration '%s': expected e.g. 500ms, 30s, 5m, 1h30m, 2d, 1w, "
			    "ISO-8601 PT5M or HH:MM:SS",
			    text);
		return FALSE;
	}
	if (usec > SFL_DURATION_MAX_USEC) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "invalid duration '%s': longer than 100 years", text);
		return FALSE;
	}
	*out = (SflDuration)llround(usec);
	return TRUE;
}

/**
 * sfl_duration_format:
 * @duration: microseconds
 *
 * Renders in the largest unit that divides exactly, as the generated docs show it:
 * 24h is "1d", 90 minutes is "90m", zero is "0s".
 *
 * Returns: (transfer full): the text
 */
gchar *
sfl_duration_format(SflDuration duration)
{
	if (duration == 0)
		return g_strdup("0s");
	if (duration < 0)
		return g_strdup("unset");
	for (gint i = G_N_ELEMENTS(sfl_duration_units) - 1; i >= 0; i--) {
		if (duration % sfl_duration_units[i].usec == 0)
			return g_strdup_printf("%" G_GINT64_FORMAT "%s",
					       duration / sfl_duration_units[i].usec,
					       sfl_duration_units[i].suffix);
	}
	return g_strdup_printf("%" G_GINT64_FORMAT "us", duration);
}

typedef struct {
	const gchar *suffix;
	gint64 factor;
} SflSizeUnit;

static const SflSizeUnit sfl_size_units[] = {
	{ "b", 1 },
	{ "kb", 1000 },
	{ "mb", 1000 * 1000 },
	{ "gb", 1000 * 1000 * 1000 },
	{ "tb", G_GINT64_CONSTANT(1000) * 1000 * 1000 * 1000 },
	{ "kib", 1024 },
	{ "mib", 1024 * 1024 },
	{ "gib", 1024 * 1024 * 1024 },
	{ "tib", G_GINT64_CONSTANT(1024) * 1024 * 1024 * 1024 },
};

/**
 * sfl_size_parse:
 * @text: e.g. "512", "256KiB", "4MiB", "1.5GB" (units are case-insensitive)
 * @out: (out): bytes
 * @error: return location for an error
 *
 * Returns: %TRUE on success
 */
gboolean
sfl_size_parse(const gchar *text, gint64 *out, GError **error)
{
	const gchar *p = text;
	gdouble n;
	g_autofree gchar *unit = NULL;

	g_return_val_if_fail(text != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (sfl_duration_read_number(&p, &n)) {
		while (*p == ' ')
			p++;
		unit = g_ascii_strdown(p, -1);
		if (unit[0] == '\0') {
			if (n == floor(n) && n < 9e18) {
				*out = (gint64)n;
				return TRUE;
			}
		}
		for (guint i = 0; i < G_N_ELEMENTS(sfl_size_units); i++) {
			gdouble bytes = n * (gdouble)sfl_size_units[i].factor;
			if (!g_str_equal(unit, sfl_size_units[i].suffix))
				continue;
			if (bytes >= 9e18)
				break;
			*out = (gint64)floor(bytes);
			return TRUE;
		}
	}
	g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
		    "invalid size '%s': expected a number of bytes or e.g. 256KiB, 4MiB, 1GB",
		    text);
	return FALSE;
}
