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

/* lease files are tiny; anything bigger is not one */
#define SFL_LEASE_MAX_BYTES (64 * 1024)

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
