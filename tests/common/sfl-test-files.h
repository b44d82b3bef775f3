/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* the smallest configuration `sf2loki check` accepts: one org's credentials and a Loki URL */
#define SFL_TEST_YAML_SF                                                                           \
	"salesforce:\n"                                                                            \
	"  client_id: cid\n"                                                                       \
	"  username: integration@example.com\n"                                                    \
	"  private_key: inline-key-material\n"
#define SFL_TEST_YAML_SINK                                                                         \
	"sink:\n"                                                                                  \
	"  loki:\n"                                                                                \
	"    url: http://127.0.0.1:3100/loki/api/v1/push\n"
#define SFL_TEST_YAML_MINIMAL SFL_TEST_YAML_SF SFL_TEST_YAML_SINK

/* a file of the source tree (relative to its root), asserting it reads */
gchar *sfl_test_read_source_file(const gchar *relative);
/* @contents written to @dir/@name, asserting it writes; returns the path */
gchar *sfl_test_write_file(const gchar *dir, const gchar *name, const gchar *contents);

G_END_DECLS
