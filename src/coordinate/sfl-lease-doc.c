/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflLeaseDoc"

#include "config.h"

#include "sfl-lease-doc.h"

#include <jansson.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-platform-glib.h"
#include "sfl-platform.h"
#include "sfl-pyjson.h"

/* lease files are tiny; anything bigger is not one */
#define SFL_LEASE_MAX_BYTES (64 * 1024)

/**
 * sfl_lease_doc_new:
 *
 * Returns: (transfer full): an empty (absent) document on the heap
 */
SflLeaseDoc *
sfl_lease_doc_new(void)
{
	return g_new0(SflLeaseDoc, 1);
}

void
sfl_lease_doc_free(SflLeaseDoc *doc)
{
	if (doc == NULL)
		return;
	sfl_lease_doc_clear(doc);
	g_free(doc);
}

void
sfl_lease_doc_clear(SflLeaseDoc *doc)
{
	g_clear_pointer(&doc->holder, g_free);
	doc->state = SFL_LEASE_ABSENT;
	doc->expires_at_usec = 0;
	doc->epoch = 0;
}

/**
 * sfl_lease_doc_parse:
 * @data: the file's bytes
 * @len: their length
 * @doc: (out caller-allocates): the result; SFL_LEASE_INVALID for anything not a lease
 *
 * A naive expires_at is UTC; a missing or non-integer epoch reads as 0 (as the original).
 */
void
sfl_lease_doc_parse(const gchar *data, gsize len, SflLeaseDoc *doc)
{
	json_error_t jerr = { 0 };
	g_autoptr(json_t) root = json_loadb(data, len, JSON_DECODE_ANY, &jerr);
	g_autoptr(GTimeZone) utc = g_time_zone_new_utc();
	g_autoptr(GDateTime) expires = NULL;
	json_t *holder;
	json_t *expires_at;
	json_t *epoch;

	sfl_lease_doc_clear(doc);
	doc->state = SFL_LEASE_INVALID;
	if (root == NULL || !json_is_object(root))
		return;
	holder = json_object_get(root, "holder");
	expires_at = json_object_get(root, "expires_at");
	if (!json_is_string(holder) || !json_is_string(expires_at))
		return;
	expires = g_date_time_new_from_iso8601(json_string_value(expires_at), utc);
	if (expires == NULL)
		return;
	doc->holder = g_strdup(json_string_value(holder));
	doc->expires_at_usec = g_date_time_to_unix(expires) * G_USEC_PER_SEC +
			       g_date_time_get_microsecond(expires);
	epoch = json_object_get(root, "epoch");
	if (json_is_integer(epoch) && json_integer_value(epoch) > 0)
		doc->epoch = (guint64)json_integer_value(epoch);
	doc->state = SFL_LEASE_VALID;
}

/**
 * sfl_lease_doc_read:
 * @path: the lease file
 * @doc: (out caller-allocates): the result
 * @error: return location for an error
 *
 * Returns: %FALSE when the file could not be read (permission, I/O): "cannot tell", which
 * callers must never take for "absent"
 */
gboolean
sfl_lease_doc_read(const gchar *path, SflLeaseDoc *doc, GError **error)
{
	SflPlatformError perr = { 0 };
	g_autofree gchar *data = NULL;
	gsize len = 0;
	SflPlatformStatus status;

	sfl_lease_doc_clear(doc);
	status = sfl_platform_read_file(path, SFL_LEASE_MAX_BYTES, &data, &len, &perr);
	if (status == SFL_PLATFORM_ERR_NOT_FOUND)
		return TRUE;
	if (status == SFL_PLATFORM_ERR_TOO_LARGE) {
		doc->state = SFL_LEASE_INVALID;
		return TRUE;
	}
	if (!sfl_platform_to_gerror(status, &perr, error))
		return FALSE;
	sfl_lease_doc_parse(data, len, doc);
	return TRUE;
}

gboolean
sfl_lease_doc_expired(const SflLeaseDoc *doc, gint64 now_usec)
{
	return doc->state != SFL_LEASE_VALID || now_usec >= doc->expires_at_usec;
}

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range python's datetime (and GDateTime) has */
#define SFL_LEASE_MIN_UNIX G_GINT64_CONSTANT(-62135596800)
#define SFL_LEASE_MAX_UNIX G_GINT64_CONSTANT(253402300799)

/* python's aware-UTC datetime.isoformat(): the fraction only when the microseconds are not 0 */
static void
sfl_lease_doc_append_isoformat(GString *out, gint64 usec)
{
	gint64 secs = usec / G_USEC_PER_SEC;
	gint64 micro = usec % G_USEC_PER_SEC;
	g_autoptr(GDateTime) dt = NULL;

	/* floor division: one microsecond before 1970 is 23:59:59.999999 of the day before */
	if (micro < 0) {
		micro += G_USEC_PER_SEC;
		secs--;
	}
	if (secs < SFL_LEASE_MIN_UNIX || secs > SFL_LEASE_MAX_UNIX) {
		secs = CLAMP(secs, SFL_LEASE_MIN_UNIX, SFL_LEASE_MAX_UNIX);
		micro = 0;
	}
	dt = g_date_time_new_from_unix_utc(secs);
	g_string_append_printf(out, "%04d-%02d-%02dT%02d:%02d:%02d", g_date_time_get_year(dt),
			       g_date_time_get_month(dt), g_date_time_get_day_of_month(dt),
			       g_date_time_get_hour(dt), g_date_time_get_minute(dt),
			       g_date_time_get_second(dt));
	if (micro != 0)
		g_string_append_printf(out, ".%06d", (gint)micro);
	g_string_append(out, "+00:00");
}

/**
 * sfl_lease_doc_serialize:
 * @holder: the holder id (UTF-8; invalid sequences become U+FFFD)
 * @expires_at_usec: wall clock, Unix microseconds (UTC)
 * @epoch: the fence token
 * @len: (out) (optional): the length of the text
 *
 * The lease as the Python original writes it, byte for byte:
 * json.dumps({"holder": h, "expires_at": dt.isoformat(), "epoch": e}), e.g.
 * {"holder": "h", "expires_at": "2026-11-30T03:00:00.123456+00:00", "epoch": 3}
 * with keys in that order, ", " and ": " separators, ASCII-only escapes and no trailing newline,
 * so replicas of both implementations can share one lease file during a migration.
 *
 * Returns: (transfer full): the JSON text
 */
gchar *
sfl_lease_doc_serialize(const gchar *holder, gint64 expires_at_usec, guint64 epoch, gsize *len)
{
	GString *out;

	g_return_val_if_fail(holder != NULL, NULL);

	out = g_string_sized_new(96);
	g_string_append(out, "{\"holder\": ");
	sfl_pyjson_append_string(out, holder);
	g_string_append(out, ", \"expires_at\": \"");
	sfl_lease_doc_append_isoformat(out, expires_at_usec);
	g_string_append_printf(out, "\", \"epoch\": %" G_GUINT64_FORMAT "}", epoch);
	if (len != NULL)
		*len = out->len;
	return g_string_free(out, FALSE);
}
