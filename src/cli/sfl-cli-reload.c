/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflCli"

#include "config.h"

#include "sfl-cli-reload.h"

#include <jansson.h>
#include <libsoup/soup.h>
#include <stdio.h>
#include <string.h>

#include "sfl-config.h"
#include "sfl-error.h"

/*
 * The daemon answers once the reload is done, which for a leader includes draining its term
 * within service.shutdown_grace; the request waits that long and a margin for the load itself.
 */
#define SFL_CLI_RELOAD_MARGIN_S 30

gchar *
sfl_cli_reload_url(const gchar *health_addr, GError **error)
{
	const gchar *colon = strrchr(health_addr, ':');
	g_autofree gchar *host = NULL;
	guint64 port = 0;

	if (colon == NULL || !g_ascii_string_to_unsigned(colon + 1, 10, 1, 65535, &port, NULL)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "service.health_addr: expected host:port with a fixed port, got '%s'",
			    health_addr);
		return NULL;
	}
	host = g_strndup(health_addr, colon - health_addr);
	if (host[0] == '[' && g_str_has_suffix(host, "]")) {
		gchar *inner = g_strndup(host + 1, strlen(host) - 2);
		g_free(host);
		host = inner;
	}
	/* the control path answers loopback peers only: a wildcard listener is reached there */
	if (host[0] == '\0' || g_str_equal(host, "0.0.0.0")) {
		g_free(host);
		host = g_strdup("127.0.0.1");
	} else if (g_str_equal(host, "::")) {
		g_free(host);
		host = g_strdup("::1");
	}
	return strchr(host, ':') != NULL
		       ? g_strdup_printf("http://[%s]:%" G_GUINT64_FORMAT "/-/reload", host, port)
		       : g_strdup_printf("http://%s:%" G_GUINT64_FORMAT "/-/reload", host, port);
}

static void
sfl_cli_reload_print_list(json_t *doc, const gchar *key, const gchar *title, FILE *out)
{
	json_t *list = json_object_get(doc, key);
	gsize i = 0;
	json_t *item = NULL;

	if (!json_is_array(list) || json_array_size(list) == 0)
		return;
	fprintf(out, "%s:\n", title);
	json_array_foreach (list, i, item)
		if (json_is_string(item))
			fprintf(out, "  %s\n", json_string_value(item));
}

int
sfl_cli_reload(const gchar *config_path)
{
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) error = NULL;
	g_autoptr(SflConfig) config = sfl_config_load(config_path, envp, &error);
	g_autofree gchar *url = NULL;
	g_autoptr(SoupSession) session = NULL;
	g_autoptr(SoupMessage) msg = NULL;
	g_autoptr(GBytes) body = NULL;
	json_t *doc = NULL;
	const gchar *outcome = NULL;
	guint status = 0;
	gint64 grace_s = 0;

	if (config == NULL) {
		fprintf(stderr, "sf2loki: %s\n", error->message);
		return SFL_EXIT_USAGE;
	}
	url = sfl_cli_reload_url(config->data.service.health_addr, &error);
	if (url == NULL) {
		fprintf(stderr, "sf2loki: %s\n", error->message);
		return SFL_EXIT_USAGE;
	}
	grace_s = config->data.service.shutdown_grace / G_USEC_PER_SEC;
	session = soup_session_new_with_options(
		"timeout", (guint)CLAMP(grace_s + SFL_CLI_RELOAD_MARGIN_S, 1, G_MAXUINT), NULL);
	msg = soup_message_new("POST", url);
	body = soup_session_send_and_read(session, msg, NULL, &error);
	if (body == NULL) {
		fprintf(stderr, "sf2loki: cannot reach the daemon at %s: %s\n", url,
			error->message);
		return SFL_EXIT_FAILURE;
	}
	status = soup_message_get_status(msg);
	doc = json_loadb(g_bytes_get_data(body, NULL), g_bytes_get_size(body), 0, NULL);
	outcome = doc != NULL ? json_string_value(json_object_get(doc, "outcome")) : NULL;
	if (status == SOUP_STATUS_OK && outcome != NULL) {
		printf("configuration reload %s (hash %s)\n", outcome,
		       json_string_value(json_object_get(doc, "hash")) ?: "?");
		sfl_cli_reload_print_list(doc, "changed", "applied", stdout);
		sfl_cli_reload_print_list(doc, "pending_restart", "ignored until restart", stdout);
		json_decref(doc);
		return SFL_EXIT_OK;
	}
	if (outcome != NULL) {
		fprintf(stderr, "sf2loki: the daemon refused the reload (%s):\n", outcome);
		sfl_cli_reload_print_list(doc, "errors", "errors", stderr);
	} else {
		g_autofree gchar *text =
			g_strndup(g_bytes_get_data(body, NULL), MIN(g_bytes_get_size(body), 512));
		fprintf(stderr, "sf2loki: %s answered HTTP %u: %s\n", url, status,
			g_strstrip(text));
	}
	json_decref(doc);
	return SFL_EXIT_FAILURE;
}
