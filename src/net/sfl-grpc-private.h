/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-grpc.h"

G_BEGIN_DECLS

/* test and fuzz hooks: the response side of a call without a transfer; nothing else uses them */

/* what the write callback does with a piece of the response body (messages reach @message) */
gsize sfl_grpc_call_receive(SflGrpcCall *self, const guint8 *data, gsize len);
const gchar *sfl_grpc_call_get_protocol_error(SflGrpcCall *self);

G_END_DECLS
