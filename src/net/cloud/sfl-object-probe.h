/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-object-client.h"

G_BEGIN_DECLS

/*
 * The doctor's probe of an object store (issue 11, item 6): read the live object (never
 * written), then on a separate probe key: a create-only write, a second create-only write that
 * must be refused (an endpoint that ignores the precondition would let two leaders in), and a
 * conditional delete. FAILS with a message saying "conditional writes unsupported" when the
 * endpoint refuses or ignores the preconditions.
 */

void
sfl_object_probe_async(SflObjectClient *client, const gchar *live_key, const gchar *probe_key,
		       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
/* @detail: what was found, for a PASS row; also set on failure when the live read worked */
gboolean sfl_object_probe_finish(SflObjectClient *client, GAsyncResult *result, gchar **detail,
				 GError **error);

G_END_DECLS
