/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflConfig"

#include "config.h"

#include <string.h>

#include "sfl-config.h"

/*
 * The chart's `config:` block is the annotated example (so it lists every key the tables
 * know, with the same comments), indented under `config:`, with the few values the chart's
 * templates depend on replaced. A unit test compares the marker region of
 * deploy/helm/values.yaml with this output (docs/deployment/kubernetes.md).
 */

#define SFL_HELM_BEGIN                                                                             \
	"# >>> BEGIN generated config — do not edit by hand; run `sf2loki config helm-values` "  \
	"<<<\n"
#define SFL_HELM_END "# >>> END generated config <<<\n"

typedef struct {
	const gchar *path;
	/* YAML flow text */
	const gchar *value;
} SflHelmOverride;

/* what deploy/helm/templates/deployment.yaml mounts, sets and probes */
static const SflHelmOverride sfl_helm_overrides[] = {
	/* secrets.existingSecret is mounted at /etc/sf2loki/secrets */
	{ "salesforce.private_key_file", "/etc/sf2loki/secrets/private_key.pem" },
	/* the state volume is mounted at stateDir (/var/lib/sf2loki) */
	{ "state.file.path", "/var/lib/sf2loki/state.json" },
	{ "coordinate.file_lease.path", "/var/lib/sf2loki/leader.lease" },
	/* the pod's namespace, from the downward API */
	{ "coordinate.k8s_lease.namespace", "${POD_NAMESPACE}" },
	/* the container port the probes and the Service use */
	{ "service.health_addr", "\":8080\"" },
	{ "service.log_format", "json" },
};

/* an active `key: value  # comment` line of the example, or a `key:` opening a section */
static gboolean
sfl_helm_parse_line(const gchar *line, guint *depth, gchar **key, const gchar **value_start,
		    const gchar **value_end)
{
	const gchar *p = line;
	const gchar *colon;
	guint spaces = 0;

	while (*p == ' ') {
		spaces++;
		p++;
	}
	if (!g_ascii_islower(*p) || spaces % 2 != 0)
		return FALSE;
	colon = strchr(p, ':');
	if (colon == NULL || (colon[1] != ' ' && colon[1] != '\0'))
		return FALSE;
	*depth = spaces / 2;
	*key = g_strndup(p, colon - p);
	*value_start = colon[1] == '\0' ? colon + 1 : colon + 2;
	*value_end = strstr(*value_start, "  # ");
	if (*value_end == NULL)
		*value_end = *value_start + strlen(*value_start);
	return TRUE;
}

static const SflHelmOverride *
sfl_helm_override_for(const gchar *path, gboolean *used)
{
	for (gsize i = 0; i < G_N_ELEMENTS(sfl_helm_overrides); i++) {
		if (g_str_equal(sfl_helm_overrides[i].path, path)) {
			used[i] = TRUE;
			return &sfl_helm_overrides[i];
		}
	}
	return NULL;
}

/**
 * sfl_config_render_helm_values:
 *
 * Returns: (transfer full): the generated region of deploy/helm/values.yaml, from the BEGIN
 * marker line to the END marker line inclusive
 */
gchar *
sfl_config_render_helm_values(void)
{
	g_autofree gchar *example = sfl_config_render_example();
	g_auto(GStrv) lines = g_strsplit(example, "\n", -1);
	g_autoptr(GPtrArray) stack = g_ptr_array_new_with_free_func(g_free);
	gboolean used[G_N_ELEMENTS(sfl_helm_overrides)] = { FALSE };
	GString *out = g_string_new(SFL_HELM_BEGIN);
	guint i = 0;

	g_string_append(out,
			"# The sf2loki configuration, rendered as /etc/sf2loki/config.yaml: every "
			"key with its\n"
			"# default, and the chart's mount paths. For several orgs set `salesforce: "
			"null` and\n"
			"# give `orgs`. ${VAR} is replaced from the container's environment (env, "
			"extraEnvFrom).\n"
			"config:\n");
	/* the example's header ends at its first blank line */
	while (lines[i] != NULL && lines[i][0] != '\0')
		i++;
	for (; lines[i] != NULL; i++) {
		const gchar *line = lines[i];
		g_autofree gchar *key = NULL;
		const gchar *value_start = NULL;
		const gchar *value_end = NULL;
		guint depth = 0;

		if (line[0] == '\0') {
			/* one blank line between sections, none before the first or at the end */
			if (out->str[out->len - 2] != ':' && lines[i + 1] != NULL &&
			    lines[i + 1][0] != '\0')
				g_string_append_c(out, '\n');
			continue;
		}
		g_string_append(out, "  ");
		if (!sfl_helm_parse_line(line, &depth, &key, &value_start, &value_end)) {
			g_string_append(out, line);
			g_string_append_c(out, '\n');
			continue;
		}
		g_ptr_array_set_size(stack, MIN(stack->len, depth));
		if (stack->len == depth) {
			g_ptr_array_add(stack, g_strdup(key));
			g_ptr_array_add(stack, NULL);
			{
				g_autofree gchar *path = g_strjoinv(".", (gchar **)stack->pdata);
				const SflHelmOverride *o = sfl_helm_override_for(path, used);
				g_ptr_array_set_size(stack, stack->len - 1);
				if (o != NULL) {
					g_string_append_len(out, line, value_start - line);
					g_string_append(out, o->value);
					g_string_append(out, value_end);
					g_string_append_c(out, '\n');
					continue;
				}
			}
		}
		g_string_append(out, line);
		g_string_append_c(out, '\n');
	}
	for (gsize j = 0; j < G_N_ELEMENTS(sfl_helm_overrides); j++) {
		/* a key the tables renamed must not leave the chart with a stale value */
		if (!used[j])
			g_critical("helm values: no key %s in the example",
				   sfl_helm_overrides[j].path);
	}
	g_string_append(out, SFL_HELM_END);
	return g_string_free(out, FALSE);
}
