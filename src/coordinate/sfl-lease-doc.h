/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The file lease document, {"holder": "<id>", "expires_at": "<ISO-8601>", "epoch": <int>},
 * as the Python original writes it. Reading it is shared by the file-lease coordinator and the
 * state CLI (which refuses to write under a live leader).
 */

typedef enum {
	/* no lease file: claimable */
	SFL_LEASE_ABSENT,
	/* present but not a lease (bad JSON, wrong types): claimable, like the original */
	SFL_LEASE_INVALID,
	SFL_LEASE_VALID,
} SflLeaseState;

typedef struct {
	SflLeaseState state;
	gchar *holder;
	gint64 expires_at_usec; /* wall clock, UTC */
	guint64 epoch;		/* 0 when missing or not an integer */
} SflLeaseDoc;

SflLeaseDoc *sfl_lease_doc_new(void);
void sfl_lease_doc_free(SflLeaseDoc *doc);
void sfl_lease_doc_clear(SflLeaseDoc *doc);
void sfl_lease_doc_parse(const gchar *data, gsize len, SflLeaseDoc *doc);
gboolean sfl_lease_doc_read(const gchar *path, SflLeaseDoc *doc, GError **error);
gboolean sfl_lease_doc_expired(const SflLeaseDoc *doc, gint64 now_usec);
gchar *sfl_lease_doc_serialize(const gchar *holder, gint64 expires_at_usec, guint64 epoch,
			       gsize *len) G_GNUC_WARN_UNUSED_RESULT;

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(SflLeaseDoc, sfl_lease_doc_clear)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflLeaseDoc, sfl_lease_doc_free)

G_END_DECLS
