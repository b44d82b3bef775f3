/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflFuzzLeaseDoc"

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "sfl-lease-doc.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: what the writer clamps to */
#define FUZZ_LEASE_MIN_USEC (G_GINT64_CONSTANT(-62135596800) * G_USEC_PER_SEC)
#define FUZZ_LEASE_MAX_USEC (G_GINT64_CONSTANT(253402300799) * G_USEC_PER_SEC)

static void
fuzz_lease_check_written(const gchar *text, gsize len, const gchar *holder, gint64 expires_usec,
			 guint64 epoch)
{
	g_auto(SflLeaseDoc) back = { 0 };

	for (gsize i = 0; i < len; i++) {
		if ((guchar)text[i] < 0x20 || (guchar)text[i] > 0x7e)
			g_error("written byte %" G_GSIZE_FORMAT " is 0x%02x, not printable ASCII",
				i, (guchar)text[i]);
	}
	sfl_lease_doc_parse(text, len, &back);
	if (back.state != SFL_LEASE_VALID)
		g_error("our own lease does not read back: %s", text);
	if (holder != NULL && strcmp(back.holder, holder) != 0)
		g_error("holder changed on the way back: %s", text);
	if (!g_utf8_validate(back.holder, -1, NULL))
		g_error("holder read back is not UTF-8: %s", text);
	if (back.expires_at_usec != expires_usec)
		g_error("expires_at %" G_GINT64_FORMAT " reads back as %" G_GINT64_FORMAT ": %s",
			expires_usec, back.expires_at_usec, text);
	if (back.epoch != epoch)
		g_error("epoch %" G_GUINT64_FORMAT " reads back as %" G_GUINT64_FORMAT ": %s",
			epoch, back.epoch, text);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init_logging();
	return 0;
}

/*
 * The lease file (or object) is written by every replica, of both implementations, and read by
 * all of them, so any bytes must read as a lease or as "not a lease" (claimable), never crash;
 * what reads as a lease must be written back byte-compatible and read back the same. The
 * input is also taken as a holder id and a time, so the writer sees every kind of string.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_auto(SflLeaseDoc) doc = { 0 };
	g_autofree gchar *holder = g_strndup((const gchar *)data, size);
	g_autofree gchar *text = NULL;
	gint64 expires = 0;
	guint64 epoch = 0;
	gsize len = 0;

	sfl_lease_doc_parse((const gchar *)data, size, &doc);
	if (doc.state != SFL_LEASE_VALID && doc.state != SFL_LEASE_INVALID)
		g_error("parse left state %d", doc.state);
	if (doc.state == SFL_LEASE_INVALID) {
		if (doc.holder != NULL || doc.epoch != 0)
			g_error("an invalid lease kept a holder or an epoch");
		if (!sfl_lease_doc_expired(&doc, G_MININT64))
			g_error("an invalid lease is not claimable");
	} else {
		(void)sfl_lease_doc_expired(&doc, g_get_real_time());
		if (doc.holder == NULL)
			g_error("a valid lease has no holder");
		text = sfl_lease_doc_serialize(doc.holder, doc.expires_at_usec, doc.epoch, &len);
		/* an offset can move a time just past year 1 or 9999; the writer clamps those */
		if (doc.expires_at_usec >= FUZZ_LEASE_MIN_USEC &&
		    doc.expires_at_usec <= FUZZ_LEASE_MAX_USEC + G_USEC_PER_SEC - 1)
			fuzz_lease_check_written(text, len, doc.holder, doc.expires_at_usec,
						 doc.epoch);
		g_clear_pointer(&text, g_free);
	}

	/* the same bytes as a holder id, with a time and epoch taken from the first bytes */
	for (gsize i = 0; i < MIN(size, 8); i++) {
		expires = (gint64)(((guint64)expires << 8) | data[i]);
		epoch = (epoch << 8) | data[size - 1 - i];
	}
	/*
	 * epochs come from a read lease plus one, and jansson (like the reader) holds signed
	 * 64-bit integers: a written epoch past G_MAXINT64 would not read back
	 */
	epoch &= G_MAXINT64;
	text = sfl_lease_doc_serialize(holder, expires, epoch, &len);
	if (len != strlen(text))
		g_error("serialised length %" G_GSIZE_FORMAT " is not the text's", len);
	if (expires >= FUZZ_LEASE_MIN_USEC && expires <= FUZZ_LEASE_MAX_USEC)
		fuzz_lease_check_written(text, len,
					 g_utf8_validate(holder, -1, NULL) ? holder : NULL, expires,
					 epoch);
	return 0;
}
