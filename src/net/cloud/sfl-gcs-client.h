/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-gcs-token.h"
#include "sfl-object-client.h"

G_BEGIN_DECLS

/*
 * SflObjectClient for one Cloud Storage bucket through the JSON API (docs/internals/wire-notes.md,
 * "Objects"): the
 * version is the object's generation; writes are simple media uploads with
 * ifGenerationMatch=0 (create-only) or =<generation>; 412 is SFL_ERROR_CONFLICT.
 *
 * A read fetches the metadata (generation) and then the media pinned to that generation, so
 * bytes and version always belong together; an object replaced in between is transient.
 *
 * The API base is https://storage.googleapis.com, or STORAGE_EMULATOR_HOST (the convention
 * Google's clients use for emulators); against an emulator without a key file no
 * Authorization is sent.
 */

#define SFL_TYPE_GCS_CLIENT (sfl_gcs_client_get_type())
G_DECLARE_FINAL_TYPE(SflGcsClient, sfl_gcs_client, SFL, GCS_CLIENT, SflObjectClient)

SflObjectClient *
sfl_gcs_client_new(const gchar *bucket, const gchar *service_file, const gchar *const *envp,
		   SflClock *clock, guint timeout_ms, GError **error);

G_END_DECLS
