/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "sfl-kinds.h"

G_BEGIN_DECLS

/*
 * The doctor probes of the kind records (sfl-probes.c), named in app.c's tables. Each checks
 * what the daemon would really use and reports through sfl_probe_env_add().
 */

void sfl_probe_file_store(const SflProbeEnv *env, const gchar *name);
void sfl_probe_object_store(const SflProbeEnv *env, const gchar *name);
void sfl_probe_noop_coordinator(const SflProbeEnv *env, const gchar *name);
void sfl_probe_file_lease(const SflProbeEnv *env, const gchar *name);
void sfl_probe_k8s_lease(const SflProbeEnv *env, const gchar *name);
void sfl_probe_object_lease(const SflProbeEnv *env, const gchar *name);
void sfl_probe_pubsub(const SflProbeEnv *env, const gchar *name);

G_END_DECLS
