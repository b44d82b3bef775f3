/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-aws-credentials.h"
#include "sfl-object-client.h"

G_BEGIN_DECLS

/*
 * SflObjectClient for one S3 bucket (docs/internals/wire-notes.md, "S3"): SigV4-signed requests,
 * If-None-Match: * for create-only writes and If-Match: <ETag> for compare-and-swap.
 *
 * Addressing: with an endpoint_url (MinIO, R2, Ceph) path-style <endpoint>/<bucket>/<key>;
 * without one virtual-hosted https://<bucket>.s3.<region>.amazonaws.com/<key>, or path-style
 * on s3.<region>.amazonaws.com when the bucket name has a dot (TLS wildcard certificates).
 * The region is the configured one, else AWS_REGION / AWS_DEFAULT_REGION, else us-east-1.
 *
 * S3-compatible differences mapped to SFL_ERROR_CONFLICT: 404 on an If-Match write (AWS),
 * 409 ConditionalRequestConflict, and 304 on an If-None-Match write (old MinIO). 501
 * NotImplemented, or a 400 naming the conditional header, is SFL_ERROR_REJECTED with a
 * message saying the endpoint lacks conditional writes.
 */

#define SFL_TYPE_S3_CLIENT (sfl_s3_client_get_type())
G_DECLARE_FINAL_TYPE(SflS3Client, sfl_s3_client, SFL, S3_CLIENT, SflObjectClient)

SflObjectClient *sfl_s3_client_new(const gchar *bucket, const gchar *region,
				   const gchar *endpoint_url, SflAwsCredentialProvider *credentials,
				   SflClock *clock, guint timeout_ms, GError **error);
const gchar *sfl_s3_client_get_region(SflS3Client *self);
/* the URL of @key and its canonical (SigV4) path */
gchar *sfl_s3_client_object_url(SflS3Client *self, const gchar *key,
				gchar **canonical_uri) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
