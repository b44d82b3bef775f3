/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflOverlap"

#include "config.h"

#include "sfl-shape.h"

#include <string.h>

#include "sfl-error.h"

/* the first that matches is stripped, so "EventStream" wins over "Event" */
static const gchar *const sfl_category_suffixes[] = { "EventStream", "EventStore", "Event" };

static gchar *
sfl_category_alias(gchar *category)
{
	if (g_strcmp0(category, "loginhistory") == 0) {
		g_free(category);
		return g_strdup("login");
	}
	return category;
}

static gchar *
sfl_category_strip_lower(const gchar *name, gsize len)
{
	for (guint i = 0; i < G_N_ELEMENTS(sfl_category_suffixes); i++) {
		gsize slen = strlen(sfl_category_suffixes[i]);
		if (len > slen && memcmp(name + len - slen, sfl_category_suffixes[i], slen) == 0) {
			len -= slen;
			break;
		}
	}
	return sfl_category_alias(g_utf8_strdown(name, (gssize)len));
}

/**
 * sfl_category_for_topic:
 * @topic: a Pub/Sub topic such as /event/LoginEventStream
 *
 * Returns: (transfer full): its overlap category ("login")
 */
gchar *
sfl_category_for_topic(const gchar *topic)
{
	const gchar *slash = strrchr(topic, '/');
	const gchar *name = slash != NULL ? slash + 1 : topic;
	return sfl_category_strip_lower(name, strlen(name));
}

/**
 * sfl_category_for_object:
 * @object: a polled object such as LoginEvent or ApiAnomalyEventStore
 *
 * Returns: (transfer full): its overlap category
 */
gchar *
sfl_category_for_object(const gchar *object)
{
	return sfl_category_strip_lower(object, strlen(object));
}

/**
 * sfl_category_for_elf_type:
 * @event_type: an EventLogFile EventType such as Login or "Lightning Page View"
 *
 * Returns: (transfer full): its overlap category: lower case, spaces removed
 */
gchar *
sfl_category_for_elf_type(const gchar *event_type)
{
	g_autofree gchar *lower = g_utf8_strdown(event_type, -1);
	GString *out = g_string_sized_new(strlen(lower));

	for (const gchar *p = lower; *p != '\0'; p++) {
		if (*p != ' ')
			g_string_append_c(out, *p);
	}
	return sfl_category_alias(g_string_free(out, FALSE));
}

/* --- the guard ------------------------------------------------------------------------------ */

typedef enum {
	SFL_CLAIM_PUBSUB,
	SFL_CLAIM_OBJECT,
	SFL_CLAIM_ELF,
} SflClaimKind;

static const gchar *const sfl_claim_kind_names[] = {
	"pubsub topic",
	"eventlog_objects object",
	"eventlogfile type",
};

typedef struct {
	gchar *category;
	SflClaimKind kind;
	const gchar *identifier; /* borrowed from the config */
} SflClaim;

static void
sfl_claim_free(SflClaim *claim)
{
	g_free(claim->category);
	g_free(claim);
}

static gboolean
sfl_topic_is_explicit(const gchar *topic)
{
	return topic != NULL && strpbrk(topic, "*?[") == NULL;
}

static void
sfl_claims_add(GPtrArray *claims, gchar *category, SflClaimKind kind, const gchar *identifier)
{
	SflClaim *claim = g_new0(SflClaim, 1);
	claim->category = category;
	claim->kind = kind;
	claim->identifier = identifier;
	g_ptr_array_add(claims, claim);
}

/* explicit identifiers of every enabled source, in config order */
static GPtrArray *
sfl_claims_collect(const SflSourcesConfig *sources)
{
	GPtrArray *claims = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_claim_free);

	if (sources->pubsub.enabled) {
		for (guint i = 0;
		     sources->pubsub.topics != NULL && sources->pubsub.topics[i] != NULL; i++) {
			const gchar *topic = sources->pubsub.topics[i];
			if (sfl_topic_is_explicit(topic))
				sfl_claims_add(claims, sfl_category_for_topic(topic),
					       SFL_CLAIM_PUBSUB, topic);
		}
	}
	if (sources->eventlog_objects.enabled && sources->eventlog_objects.objects != NULL) {
		for (guint i = 0; i < sources->eventlog_objects.objects->len; i++) {
			const SflEventLogObjectConfig *object =
				g_ptr_array_index(sources->eventlog_objects.objects, i);
			if (object->name != NULL)
				sfl_claims_add(claims, sfl_category_for_object(object->name),
					       SFL_CLAIM_OBJECT, object->name);
		}
	}
	if (sources->eventlogfile.enabled && sources->eventlogfile.event_types != NULL) {
		for (guint i = 0; i < sources->eventlogfile.event_types->len; i++) {
			const SflElfTypeConfig *type =
				g_ptr_array_index(sources->eventlogfile.event_types, i);
			if (type->name != NULL && strcmp(type->name, "*") != 0)
				sfl_claims_add(claims, sfl_category_for_elf_type(type->name),
					       SFL_CLAIM_ELF, type->name);
		}
	}
	return claims;
}

static gboolean
sfl_pubsub_has_wildcard(const SflSourcesConfig *sources)
{
	if (!sources->pubsub.enabled || sources->pubsub.topics == NULL)
		return FALSE;
	return g_strv_contains((const gchar *const *)sources->pubsub.topics, "*");
}

static gboolean
sfl_elf_has_wildcard(const SflSourcesConfig *sources)
{
	if (!sources->eventlogfile.enabled || sources->eventlogfile.event_types == NULL)
		return FALSE;
	for (guint i = 0; i < sources->eventlogfile.event_types->len; i++) {
		const SflElfTypeConfig *type =
			g_ptr_array_index(sources->eventlogfile.event_types, i);
		if (g_strcmp0(type->name, "*") == 0)
			return TRUE;
	}
	return FALSE;
}

/* "a", "a and b", "a, b and c" */
static void
sfl_append_claim_list(GString *out, GPtrArray *list)
{
	for (guint i = 0; i < list->len; i++) {
		const SflClaim *claim = g_ptr_array_index(list, i);
		if (i > 0)
			g_string_append(out, i + 1 == list->len ? " and " : ", ");
		g_string_append_printf(out, "%s %s", sfl_claim_kind_names[claim->kind],
				       claim->identifier);
	}
}

/**
 * sfl_overlap_check:
 * @sources: one org's sources
 * @org_name: (nullable): the org, named in the message in multi-org mode
 * @error: a #GError
 *
 * Returns: %FALSE with SFL_ERROR_INVALID_CONFIG when two source types would ingest the same
 * category (each collision listed with its identifiers), or when Pub/Sub and ELF both use
 * "*"; always %TRUE with sources.allow_overlap
 */
gboolean
sfl_overlap_check(const SflSourcesConfig *sources, const gchar *org_name, GError **error)
{
	g_autoptr(GPtrArray) claims = NULL;
	g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) done = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GString) msg = NULL;

	if (sources->allow_overlap)
		return TRUE;
	claims = sfl_claims_collect(sources);

	for (guint i = 0; i < claims->len; i++) {
		const SflClaim *first = g_ptr_array_index(claims, i);
		g_autoptr(GPtrArray) group = NULL;
		gboolean mixed = FALSE;

		if (g_hash_table_contains(done, first->category))
			continue;
		g_hash_table_add(done, first->category);
		group = g_ptr_array_new();
		for (guint k = i; k < claims->len; k++) {
			const SflClaim *claim = g_ptr_array_index(claims, k);
			if (strcmp(claim->category, first->category) != 0)
				continue;
			mixed |= claim->kind != first->kind;
			g_ptr_array_add(group, (gpointer)claim);
		}
		if (mixed) {
			GString *problem = g_string_new(NULL);
			g_string_append_printf(problem, "category '%s' is claimed by ",
					       first->category);
			sfl_append_claim_list(problem, group);
			g_ptr_array_add(problems, g_string_free(problem, FALSE));
		}
	}
	if (sfl_pubsub_has_wildcard(sources) && sfl_elf_has_wildcard(sources)) {
		g_ptr_array_add(
			problems,
			g_strdup("sources.pubsub.topics and sources.eventlogfile.event_types "
				 "both use \"*\", and neither discovery can see the other's "
				 "categories (SFL-0007)"));
	}
	if (problems->len == 0)
		return TRUE;

	msg = g_string_new(NULL);
	if (org_name != NULL && org_name[0] != '\0')
		g_string_append_printf(msg, "org '%s': ", org_name);
	g_string_append(msg, "sources overlap: ");
	for (guint i = 0; i < problems->len; i++) {
		if (i > 0)
			g_string_append(msg, "; ");
		g_string_append(msg, g_ptr_array_index(problems, i));
	}
	g_string_append(msg, "; set sources.allow_overlap: true to allow it");
	g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG, msg->str);
	return FALSE;
}

static gboolean
sfl_overlap_category_claimed(const SflSourcesConfig *sources, const gchar *category,
			     SflClaimKind except)
{
	g_autoptr(GPtrArray) claims = sfl_claims_collect(sources);

	for (guint i = 0; i < claims->len; i++) {
		const SflClaim *claim = g_ptr_array_index(claims, i);
		if (claim->kind != except && strcmp(claim->category, category) == 0)
			return TRUE;
	}
	return FALSE;
}

/**
 * sfl_overlap_elf_type_owned_elsewhere:
 * @sources: the org's sources
 * @event_type: an EventType found by wildcard discovery
 *
 * Independent of allow_overlap (the caller decides whether to filter at all).
 *
 * Returns: whether an explicit enabled Pub/Sub topic or an enabled polled object owns the
 * type's category
 */
gboolean
sfl_overlap_elf_type_owned_elsewhere(const SflSourcesConfig *sources, const gchar *event_type)
{
	g_autofree gchar *category = sfl_category_for_elf_type(event_type);
	return sfl_overlap_category_claimed(sources, category, SFL_CLAIM_ELF);
}

/**
 * sfl_overlap_topic_owned_elsewhere:
 * @sources: the org's sources
 * @topic: a topic found by wildcard discovery
 *
 * Independent of allow_overlap (the caller decides whether to filter at all).
 *
 * Returns: whether an enabled polled object or an explicit enabled ELF type owns the topic's
 * category
 */
gboolean
sfl_overlap_topic_owned_elsewhere(const SflSourcesConfig *sources, const gchar *topic)
{
	g_autofree gchar *category = sfl_category_for_topic(topic);
	return sfl_overlap_category_claimed(sources, category, SFL_CLAIM_PUBSUB);
}
