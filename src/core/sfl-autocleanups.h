/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

/* every third-party cleanup is declared here once, so nobody calls the free functions by hand */

#include <glib.h>
#include <jansson.h>
#include <yaml.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(yaml_parser_t, yaml_parser_delete)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(yaml_event_t, yaml_event_delete)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(yaml_emitter_t, yaml_emitter_delete)
