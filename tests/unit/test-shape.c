/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflTestShape"

#include "config.h"

#include <math.h>
#include <string.h>

#include "sfl-autocleanups.h"
#include "sfl-entry.h"
#include "sfl-error.h"
#include "sfl-shape.h"

/*
 * Expected values come from /usr/bin/python3 (3.11): hashlib, re.sub, fnmatch.fnmatchcase,
 * datetime.fromisoformat and str(); the original ran on those, so they are the oracle.
 */

/* --- helpers -------------------------------------------------------------------------------- */

static void
rule_free(SflTransformRule *rule)
{
	g_strfreev(rule->fields);
	if (rule->match != NULL)
		g_ptr_array_unref(rule->match);
	g_free(rule->pattern);
	g_free(rule->replacement);
	g_free(rule->name);
	g_free(rule);
}

static GPtrArray *
rules_new(void)
{
	return g_ptr_array_new_with_free_func((GDestroyNotify)rule_free);
}

static SflTransformRule *
rules_add(GPtrArray *rules, SflTransformAction action, const gchar *fields, const gchar *name)
{
	SflTransformRule *rule = g_new0(SflTransformRule, 1);
	rule->action = action;
	rule->fields = fields != NULL ? g_strsplit(fields, ",", -1) : g_new0(gchar *, 1);
	rule->match = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_config_pair_free);
	rule->replacement = g_strdup("");
	rule->name = g_strdup(name != NULL ? name : "");
	g_ptr_array_add(rules, rule);
	return rule;
}

static void
rule_match(SflTransformRule *rule, const gchar *field, const gchar *glob)
{
	g_ptr_array_add(rule->match, sfl_config_pair_new(field, glob, 0));
}

/* --- transforms ----------------------------------------------------------------------------- */

typedef struct {
	const gchar *salt;
	const gchar *value;
	const gchar *hash;
} HashCase;

static void
test_transform_hash(void)
{
	/* hashlib.sha256((salt + str(v)).encode()).hexdigest()[:16] */
	static const HashCase cases[] = {
		{ "pepper", "user@example.com", "c516822ded3d43b4" },
		{ "pepper", "42", "93ca73bec2907ec8" },
		{ "pepper", "True", "256f061303d9e462" },
		{ "pepper", "caf\303\251", "9d1aa170259171c2" },
		{ "pepper", "", "8cbbcf29d9cef896" },
		{ "", "user@example.com", "b4c9a289323b21a0" },
		{ "", "42", "73475cb40a568e8d" },
		{ "", "True", "3cbc87c7681f34db" },
		{ "", "caf\303\251", "850f7dc43910ff89" },
		{ "", "", "e3b0c44298fc1c14" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) rules = rules_new();
		g_autoptr(SflTransforms) transforms = NULL;
		g_autoptr(SflRecord) record = sfl_record_new();
		g_autoptr(GError) error = NULL;

		rules_add(rules, SFL_TRANSFORM_HASH, "V,MISSING,NULLED", NULL);
		transforms = sfl_transforms_new(rules, cases[i].salt, &error);
		g_assert_no_error(error);
		g_assert_cmpuint(sfl_transforms_get_n_rules(transforms), ==, 1);
		g_assert_cmpuint(sfl_transforms_get_n_hash_rules(transforms), ==, 1);

		sfl_record_add_string(record, "V", cases[i].value, strlen(cases[i].value));
		sfl_record_add_null(record, "NULLED");
		g_assert_true(sfl_transforms_apply(transforms, record, NULL));
		g_assert_cmpstr(sfl_record_lookup_string(record, "V"), ==, cases[i].hash);
		/* absent fields stay absent, null stays null */
		g_assert_null(sfl_record_lookup(record, "MISSING"));
		g_assert_cmpint(sfl_record_lookup(record, "NULLED")->type, ==, SFL_VALUE_NULL);
	}
}

static void
test_transform_hash_typed(void)
{
	g_autoptr(GPtrArray) rules = rules_new();
	g_autoptr(SflTransforms) transforms = NULL;
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autoptr(GError) error = NULL;

	/* non-strings are hashed as str(value) and come back as strings */
	rules_add(rules, SFL_TRANSFORM_HASH, "N,B", NULL);
	transforms = sfl_transforms_new(rules, "pepper", &error);
	g_assert_no_error(error);
	sfl_record_add_int(record, "N", 42);
	sfl_record_add_bool(record, "B", TRUE);
	g_assert_true(sfl_transforms_apply(transforms, record, NULL));
	g_assert_cmpstr(sfl_record_lookup_string(record, "N"), ==, "93ca73bec2907ec8");
	g_assert_cmpstr(sfl_record_lookup_string(record, "B"), ==, "256f061303d9e462");
}

static void
test_transform_mask(void)
{
	static const struct {
		const gchar *in;
		const gchar *out;
	} cases[] = {
		{ "user@example.com", "***@example.com" },
		{ "a@b@c", "***@b@c" },
		{ "@", "***@" },
		{ "10.1.2.3", "10.1.2.x" },
		{ "255.255.255.255", "255.255.255.x" },
		{ "0.0.0.0", "0.0.0.x" },
		{ "256.1.1.1", "***" },
		{ "01.2.3.4", "***" },
		{ "1.2.3.04", "***" },
		{ "1.2.3", "***" },
		{ "1.2.3.4.5", "***" },
		{ "1.2.3.", "***" },
		{ "1..2.3", "***" },
		{ " 1.2.3.4", "***" },
		{ "1234.1.1.1", "***" },
		{ "", "***" },
		{ "Standard", "***" },
	};
	g_autoptr(GPtrArray) rules = rules_new();
	g_autoptr(SflTransforms) transforms = NULL;
	g_autoptr(GError) error = NULL;

	rules_add(rules, SFL_TRANSFORM_MASK, "V", NULL);
	transforms = sfl_transforms_new(rules, NULL, &error);
	g_assert_no_error(error);
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(SflRecord) record = sfl_record_new();
		sfl_record_add_string(record, "V", cases[i].in, strlen(cases[i].in));
		g_assert_true(sfl_transforms_apply(transforms, record, NULL));
		g_assert_cmpstr(sfl_record_lookup_string(record, "V"), ==, cases[i].out);
	}
}

static void
test_transform_drop_field(void)
{
	g_autoptr(GPtrArray) rules = rules_new();
	g_autoptr(SflTransforms) transforms = NULL;
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) line = g_string_new(NULL);

	rules_add(rules, SFL_TRANSFORM_DROP_FIELD, "SESSION_KEY,MISSING,LOGIN_KEY", NULL);
	transforms = sfl_transforms_new(rules, NULL, &error);
	g_assert_no_error(error);
	sfl_record_add_string(record, "USER_ID", "005", 3);
	sfl_record_add_string(record, "SESSION_KEY", "s", 1);
	sfl_record_add_null(record, "LOGIN_KEY");
	sfl_record_add_string(record, "URI", "/x", 2);
	g_assert_true(sfl_transforms_apply(transforms, record, NULL));
	sfl_record_append_json(record, line);
	g_assert_cmpstr(line->str, ==, "{\"URI\": \"/x\", \"USER_ID\": \"005\"}");
}

typedef struct {
	const gchar *pattern;
	const gchar *replacement;
	const gchar *in;
	const gchar *out;
} RegexCase;

static void
test_transform_regex(void)
{
	/* re.sub(pattern, replacement, value) */
	static const RegexCase cases[] = {
		{ "\\d", "#", "a1b22c333", "a#b##c###" },
		{ "x*", "-", "abxd", "-a-b--d-" },
		{ "(\\w+)@(\\w+)\\.com", "\\2 at \\1", "mail bob@example.com now",
		  "mail example at bob now" },
		{ "(?P<user>[^@]+)@(?P<dom>.+)", "\\g<dom>/\\g<user>/\\g<0>", "u@d.org",
		  "d.org/u/u@d.org" },
		{ "^", ">", "line1\nline2", ">line1\nline2" },
		{ "a|", "-", "ab", "--b-" },
		{ "|a", "-", "ab", "---b-" },
		{ "", "-", "h\303\251llo", "-h-\303\251-l-l-o-" },
		{ "\\s+", " ", "a \t\n b\r\nc", "a b c" },
		{ "(a)|b", "[\\1]", "ab", "[a][]" },
		{ "\\\\", "\\\\\\\\", "a\\b", "a\\\\b" },
		{ "o", "\\n\\t\\\\", "foo", "f\n\t\\\n\t\\" },
		{ "\\u00e9", "e", "caf\303\251", "cafe" },
		{ "end\\Z", "END", "the end\n", "the end\n" },
		{ "end\\Z", "END", "the end", "the END" },
		{ ".", "x", "a\rb", "xxx" },
		{ "(\\d{,2})", "<\\1>", "12345", "<12><34><5><>" },
		{ "\\d+", "\\g<0>0", "7 and 42", "70 and 420" },
		{ "[.]", "\\.", "a.b", "a\\.b" },
		{ "(?i)SECRET", "***", "my secret Secret", "my *** ***" },
		{ "\\bfoo\\b", "bar", "foo food foo", "bar food bar" },
		{ "a", "\\101", "xa", "xA" },
		{ "(?<=@)\\w+", "host", "me@server.org", "me@host.org" },
		{ "\\d", "#", "\331\243 3", "# #" },
		{ "$", "!", "ab\n", "ab!\n!" },
		{ "(x)(y)?", "\\2\\1\\g<2>", "xx", "xx" },
		{ "[\\u00e0-\\u00ff]+", "?", "fa\303\247ade \360\237\230\200",
		  "fa?ade \360\237\230\200" },
		{ "\\w", "_", "\360\237\230\200a", "\360\237\230\200_" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) rules = rules_new();
		g_autoptr(SflTransforms) transforms = NULL;
		g_autoptr(SflRecord) record = sfl_record_new();
		g_autoptr(GError) error = NULL;
		SflTransformRule *rule = rules_add(rules, SFL_TRANSFORM_REGEX_REPLACE, "V", NULL);

		rule->pattern = g_strdup(cases[i].pattern);
		g_free(rule->replacement);
		rule->replacement = g_strdup(cases[i].replacement);
		transforms = sfl_transforms_new(rules, NULL, &error);
		g_assert_no_error(error);
		sfl_record_add_string(record, "V", cases[i].in, strlen(cases[i].in));
		g_assert_true(sfl_transforms_apply(transforms, record, NULL));
		g_assert_cmpstr(sfl_record_lookup_string(record, "V"), ==, cases[i].out);
	}
}

static void
test_transform_regex_typed(void)
{
	g_autoptr(GPtrArray) rules = rules_new();
	g_autoptr(SflTransforms) transforms = NULL;
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(json_t) nested = json_pack("{s:i,s:s}", "a", 1, "b", "x");
	SflTransformRule *rule = rules_add(rules, SFL_TRANSFORM_REGEX_REPLACE, "N,J", NULL);

	/* the substitution runs over str(value): repr for nested values */
	rule->pattern = g_strdup("'");
	g_free(rule->replacement);
	rule->replacement = g_strdup("\"");
	transforms = sfl_transforms_new(rules, NULL, &error);
	g_assert_no_error(error);
	sfl_record_add_real(record, "N", 1e16);
	sfl_record_add_json(record, "J", nested);
	g_assert_true(sfl_transforms_apply(transforms, record, NULL));
	g_assert_cmpstr(sfl_record_lookup_string(record, "N"), ==, "1e+16");
	g_assert_cmpstr(sfl_record_lookup_string(record, "J"), ==, "{\"a\": 1, \"b\": \"x\"}");
}

static void
test_transform_errors(void)
{
	/* each of these makes re.sub raise */
	static const struct {
		const gchar *pattern;
		const gchar *replacement;
	} cases[] = {
		{ "(", "x" },	      /* missing ), unterminated subpattern at position 0 */
		{ "a", "\\g<nope>" }, /* unknown group name 'nope' */
		{ "(a)", "\\2" },     /* invalid group reference 2 at position 1 */
		{ "a", "\\q" },	      /* bad escape \q at position 0 */
		{ "a", "x\\" },	      /* bad escape (end of pattern) at position 1 */
		{ "a", "\\g<1" },     /* missing >, unterminated name at position 3 */
		{ "[z-a]", "x" },     /* bad character range z-a at position 1 */
		{ "a{2,1}", "x" },    /* min repeat greater than max repeat at position 2 */
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) rules = rules_new();
		g_autoptr(SflTransforms) transforms = NULL;
		g_autoptr(GError) error = NULL;
		SflTransformRule *rule;

		rules_add(rules, SFL_TRANSFORM_MASK, "A", NULL);
		rule = rules_add(rules, SFL_TRANSFORM_REGEX_REPLACE, "V", i % 2 ? "scrub" : NULL);
		rule->pattern = g_strdup(cases[i].pattern);
		g_free(rule->replacement);
		rule->replacement = g_strdup(cases[i].replacement);
		transforms = sfl_transforms_new(rules, NULL, &error);
		g_assert_null(transforms);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		/* the message names the rule */
		g_assert_nonnull(strstr(error->message, i % 2 ? "scrub" : "regex_replace-1"));
	}
}

static void
test_transform_drop_row(void)
{
	g_autoptr(GPtrArray) rules = rules_new();
	g_autoptr(SflTransforms) transforms = NULL;
	g_autoptr(GError) error = NULL;
	SflTransformRule *rule;
	static const struct {
		const gchar *event_type;
		const gchar *user_type;
		const gchar *agent;
		const gchar *dropped_by;
	} rows[] = {
		{ "LoginAs", "Guest", "curl", "drop_row-2" },
		{ "LoginAs", "Standard", "curl", NULL },
		{ "Login", "[", "curl", "drop_row-2" },
		{ "API", "Guest", "googlebot/2.1", "bots" },
		{ "API", "Guest", "Bot", NULL },
		{ NULL, "Guest", "curl", NULL },
	};

	/* a rule without fields touches nothing; rules run in order, so the mask comes first */
	rules_add(rules, SFL_TRANSFORM_HASH, NULL, NULL);
	rules_add(rules, SFL_TRANSFORM_MASK, "AGENT", NULL);
	rule = rules_add(rules, SFL_TRANSFORM_DROP_ROW, NULL, NULL);
	rule_match(rule, "EVENT_TYPE", "Login*");
	rule_match(rule, "USER_TYPE", "[!S]*");
	rule = rules_add(rules, SFL_TRANSFORM_DROP_ROW, NULL, "bots");
	rule_match(rule, "AGENT_RAW", "*bot*");
	/* match with no pairs drops nothing */
	rules_add(rules, SFL_TRANSFORM_DROP_ROW, NULL, NULL);
	transforms = sfl_transforms_new(rules, "", &error);
	g_assert_no_error(error);
	g_assert_cmpuint(sfl_transforms_get_n_rules(transforms), ==, 5);
	g_assert_cmpuint(sfl_transforms_get_n_hash_rules(transforms), ==, 1);

	for (gsize i = 0; i < G_N_ELEMENTS(rows); i++) {
		g_autoptr(SflRecord) record = sfl_record_new();
		const gchar *dropped_by = "unset";
		gboolean kept;

		if (rows[i].event_type != NULL)
			sfl_record_add_string(record, "EVENT_TYPE", rows[i].event_type,
					      strlen(rows[i].event_type));
		sfl_record_add_string(record, "USER_TYPE", rows[i].user_type,
				      strlen(rows[i].user_type));
		sfl_record_add_string(record, "AGENT", rows[i].agent, strlen(rows[i].agent));
		sfl_record_add_string(record, "AGENT_RAW", rows[i].agent, strlen(rows[i].agent));
		kept = sfl_transforms_apply(transforms, record, &dropped_by);
		g_assert_cmpint(kept, ==, rows[i].dropped_by == NULL);
		g_assert_cmpstr(dropped_by, ==, rows[i].dropped_by);
		g_assert_cmpstr(sfl_record_lookup_string(record, "AGENT"), ==, "***");
	}
}

static void
test_transform_drop_row_missing(void)
{
	static const struct {
		const gchar *field;
		const gchar *glob;
		gboolean dropped;
	} cases[] = {
		/* str(payload.get(field, "")): missing is "", null is "None" */
		{ "MISSING", "", TRUE },    { "MISSING", "*", TRUE },  { "MISSING", "?*", FALSE },
		{ "NULLED", "None", TRUE }, { "NULLED", "", FALSE },   { "NUM", "4?", TRUE },
		{ "FLAG", "True", TRUE },   { "FLAG", "true", FALSE }, { "REAL", "1.0", TRUE },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) rules = rules_new();
		g_autoptr(SflTransforms) transforms = NULL;
		g_autoptr(SflRecord) record = sfl_record_new();
		g_autoptr(GError) error = NULL;
		const gchar *dropped_by = NULL;

		rule_match(rules_add(rules, SFL_TRANSFORM_DROP_ROW, NULL, NULL), cases[i].field,
			   cases[i].glob);
		transforms = sfl_transforms_new(rules, NULL, &error);
		g_assert_no_error(error);
		sfl_record_add_null(record, "NULLED");
		sfl_record_add_int(record, "NUM", 42);
		sfl_record_add_bool(record, "FLAG", TRUE);
		sfl_record_add_real(record, "REAL", 1.0);
		g_assert_cmpint(sfl_transforms_apply(transforms, record, &dropped_by), ==,
				!cases[i].dropped);
		if (cases[i].dropped)
			g_assert_cmpstr(dropped_by, ==, "drop_row-0");
	}
}

static void
test_transform_none(void)
{
	g_autoptr(SflTransforms) transforms = sfl_transforms_new(NULL, NULL, NULL);
	g_autoptr(SflRecord) record = sfl_record_new();
	const gchar *dropped_by = "unset";

	g_assert_nonnull(transforms);
	g_assert_cmpuint(sfl_transforms_get_n_rules(transforms), ==, 0);
	g_assert_true(sfl_transforms_apply(transforms, record, &dropped_by));
	g_assert_null(dropped_by);
}

/* --- sampling ------------------------------------------------------------------------------- */

typedef struct {
	const gchar *key;
	guint bucket;
	gboolean keep_half;
	gboolean keep_tenth;
} SampleCase;

static void
test_sample(void)
{
	/* int.from_bytes(sha256(key).digest()[:8], "big") % 10000, and should_keep at .5, .1 */
	static const SampleCase cases[] = {
		{ "0Yw5e00000AbCd00", 3292, TRUE, FALSE },
		{ "0Yw5e00000AbCd01", 999, TRUE, TRUE },
		{ "0Yw5e00000AbCd02", 4753, TRUE, FALSE },
		{ "0Yw5e00000AbCd03", 12, TRUE, TRUE },
		{ "0Yw5e00000AbCd04", 6782, FALSE, FALSE },
		{ "0Yw5e00000AbCd05", 5881, FALSE, FALSE },
		{ "0Yw5e00000AbCd06", 6931, FALSE, FALSE },
		{ "0Yw5e00000AbCd07", 2225, TRUE, FALSE },
		{ "0Yw5e00000AbCd08", 9655, FALSE, FALSE },
		{ "0Yw5e00000AbCd09", 6604, FALSE, FALSE },
		{ "4exLFFQZ0", 7766, FALSE, FALSE },
		{ "4exLFFQZ1", 8772, FALSE, FALSE },
		{ "4exLFFQZ2", 130, TRUE, TRUE },
		{ "4exLFFQZ3", 9780, FALSE, FALSE },
		{ "4exLFFQZ4", 8690, FALSE, FALSE },
		{ "4exLFFQZ5", 782, TRUE, TRUE },
		{ "0a1b2c3d", 3917, TRUE, FALSE },
		{ "", 1652, TRUE, FALSE },
		{ "caf\303\251", 2649, TRUE, FALSE },
		{ "{\"a\": \"1\"}", 7046, FALSE, FALSE },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		const gchar *key = cases[i].key;
		gsize len = strlen(key);

		g_assert_cmpint(sfl_sample_keep(key, len, 0.5), ==, cases[i].keep_half);
		g_assert_cmpint(sfl_sample_keep(key, len, 0.1), ==, cases[i].keep_tenth);
		/* the bucket itself, from both sides */
		g_assert_true(sfl_sample_keep(key, len, (cases[i].bucket + 0.5) / 10000.0));
		g_assert_false(sfl_sample_keep(key, len, (cases[i].bucket - 0.5) / 10000.0));
		g_assert_true(sfl_sample_keep(key, len, 1.0));
		g_assert_true(sfl_sample_keep(key, len, 2.5));
		g_assert_false(sfl_sample_keep(key, len, 0.0));
	}
}

/* --- timestamps ----------------------------------------------------------------------------- */

typedef struct {
	const gchar *text;
	gboolean ok;
	gint64 usec;
} TimeCase;

static void
test_timestamp_iso(void)
{
	/* datetime.fromisoformat(text.replace("Z", "+00:00")), naive as UTC, in µs */
	static const TimeCase cases[] = {
		{ "2026-06-30", TRUE, G_GINT64_CONSTANT(1782777600000000) },
		{ "2026-06-30T01", TRUE, G_GINT64_CONSTANT(1782781200000000) },
		{ "2026-06-30T01:02", TRUE, G_GINT64_CONSTANT(1782781320000000) },
		{ "2026-06-30T01:02:03", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "2026-06-30T01:02:03.1", TRUE, G_GINT64_CONSTANT(1782781323100000) },
		{ "2026-06-30T01:02:03.1234567", TRUE, G_GINT64_CONSTANT(1782781323123456) },
		{ "2026-06-30 01:02:03", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "2026-06-30x01:02:03", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "2026-06-30T0102", TRUE, G_GINT64_CONSTANT(1782781320000000) },
		{ "2026-06-30T010203", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "2026-06-30T01.5", TRUE, G_GINT64_CONSTANT(1782781200500000) },
		{ "2026-06-30T01020345", TRUE, G_GINT64_CONSTANT(1782781323450000) },
		{ "20260630", TRUE, G_GINT64_CONSTANT(1782777600000000) },
		{ "20260630T010203", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "2026-06-30T01:02:03.", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03.+01:00", TRUE, G_GINT64_CONSTANT(1782777723000000) },
		{ "2026-06-30T01:02:03+0100", TRUE, G_GINT64_CONSTANT(1782777723000000) },
		{ "2026-06-30T01:02:03+01", TRUE, G_GINT64_CONSTANT(1782777723000000) },
		{ "2026-06-30T01:02:03+01:00:30", TRUE, G_GINT64_CONSTANT(1782777693000000) },
		{ "2026-06-30T01:02:03+01:00:30.5", TRUE, G_GINT64_CONSTANT(1782777692500000) },
		{ "2026-06-30T00:00+00:99", TRUE, G_GINT64_CONSTANT(1782771660000000) },
		{ "2026-06-30T00:00+24:00", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T00:00+23:59:59.999999", TRUE, G_GINT64_CONSTANT(1782691200000001) },
		{ "2026-02-30", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-13-01", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T24:00", FALSE, G_GINT64_CONSTANT(0) },
		{ "99999-01-01", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-W01", TRUE, G_GINT64_CONSTANT(1766966400000000) },
		{ "2026-W01-1", TRUE, G_GINT64_CONSTANT(1766966400000000) },
		{ "2026W011", TRUE, G_GINT64_CONSTANT(1766966400000000) },
		{ "2026W01", TRUE, G_GINT64_CONSTANT(1766966400000000) },
		{ "2026-06-30T", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-3", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03,5", TRUE, G_GINT64_CONSTANT(1782781323500000) },
		{ "2026-06-30T01:02:03-00:00", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "2026-06-30T1", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:0", FALSE, G_GINT64_CONSTANT(0) },
		{ "0000-01-01", FALSE, G_GINT64_CONSTANT(0) },
		{ "0001-01-01T00:00+01:00", TRUE, G_GINT64_CONSTANT(-62135600400000000) },
		{ "2026-06-30T01:02:03.000+0000", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "2026-06-30T01:02:03+00:00x", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03x", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03xy", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03Z", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "2026-06-30\303\25101:02", TRUE, G_GINT64_CONSTANT(1782781320000000) },
		{ "2026-06-30\360\237\230\20001:02", TRUE, G_GINT64_CONSTANT(1782781320000000) },
		{ "2026-06-30T01:02:60", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-W53", TRUE, G_GINT64_CONSTANT(1798416000000000) },
		{ "2020-W53", TRUE, G_GINT64_CONSTANT(1609113600000000) },
		{ "2025-W53", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-W00", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03.5Z", TRUE, G_GINT64_CONSTANT(1782781323500000) },
		{ "2026-06-30T+01:00", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01+01:00", TRUE, G_GINT64_CONSTANT(1782777600000000) },
		{ "2026-06-30T01:02+", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03.12a", FALSE, G_GINT64_CONSTANT(0) },
		{ " 2026-06-30", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30 ", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-1-01", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03+01:00+01:00", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03x+01:00", TRUE, G_GINT64_CONSTANT(1782777723000000) },
		{ "2026-W01-1T01", TRUE, G_GINT64_CONSTANT(1766970000000000) },
		{ "2026-W011", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-W01-8", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30TZ", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01Z", TRUE, G_GINT64_CONSTANT(1782781200000000) },
		{ "2026-06-30T01:02:03.123456789Z", TRUE, G_GINT64_CONSTANT(1782781323123456) },
		{ "9999-12-31T23:59:59.999999-01:00", TRUE, G_GINT64_CONSTANT(253402304399999999) },
		{ "2024-02-29", TRUE, G_GINT64_CONSTANT(1709164800000000) },
		{ "2023-02-29", FALSE, G_GINT64_CONSTANT(0) },
		{ "1900-02-29", FALSE, G_GINT64_CONSTANT(0) },
		{ "2000-02-29", TRUE, G_GINT64_CONSTANT(951782400000000) },
		{ "1970-01-01T00:00:00Z", TRUE, G_GINT64_CONSTANT(0) },
		{ "1969-12-31T23:59:59.999999Z", TRUE, G_GINT64_CONSTANT(-1) },
		{ "9999-12-31T23:59:59.999999", TRUE, G_GINT64_CONSTANT(253402300799999999) },
		{ "0001-01-01", TRUE, G_GINT64_CONSTANT(-62135596800000000) },
		{ "", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03ZZ", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03.1234567890123456789012345678901234567890Z", TRUE,
		  G_GINT64_CONSTANT(1782781323123456) },
		{ "2026-06-30T12:30\303\251", FALSE, G_GINT64_CONSTANT(0) },
		{ "20260630010203", FALSE, G_GINT64_CONSTANT(0) },
		{ "2026-06-30T01:02:03+01:00:60", TRUE, G_GINT64_CONSTANT(1782777663000000) },
		{ "2026-06-30T01:02:03-23:59", TRUE, G_GINT64_CONSTANT(1782867663000000) },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		gint64 usec = 42;
		gboolean ok = sfl_parse_iso_datetime(cases[i].text, &usec);
		if (ok != cases[i].ok)
			g_error("%s: expected %s", cases[i].text,
				cases[i].ok ? "valid" : "invalid");
		if (ok)
			g_assert_cmpint(usec, ==, cases[i].usec);
	}
	/* years far out of range and absurd digits fail cleanly */
	{
		gint64 usec = 0;
		g_assert_false(sfl_parse_iso_datetime("99999999999999999999-01-01", &usec));
		g_assert_false(sfl_parse_iso_datetime("2026-06-30T99:99:99", &usec));
		g_assert_false(sfl_parse_iso_datetime("2026-06-30T01:02:03+99:99", &usec));
		g_assert_false(sfl_parse_iso_datetime("2026-06-30T01:02:03.9999999999999999999"
						      "99999999+00:00:00.99999999999",
						      &usec) &&
			       usec == 0);
		g_assert_false(sfl_parse_iso_datetime(NULL, &usec));
		g_assert_false(sfl_parse_timestamp_text("99999999999999.999999", &usec));
	}
}

static void
test_timestamp_text(void)
{
	/* ISO first, then the compact form through strptime */
	static const TimeCase cases[] = {
		{ "20260630010203.123", TRUE, G_GINT64_CONSTANT(1782781323123000) },
		{ "20260630010203", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "20260630010203.1234567", FALSE, G_GINT64_CONSTANT(0) },
		{ "20260630010203.", FALSE, G_GINT64_CONSTANT(0) },
		{ "20260631010203", FALSE, G_GINT64_CONSTANT(0) },
		{ "20260630240000", FALSE, G_GINT64_CONSTANT(0) },
		{ "20260630010203.000001", TRUE, G_GINT64_CONSTANT(1782781323000001) },
		{ "20260630T010203", TRUE, G_GINT64_CONSTANT(1782781323000000) },
		{ "19700101000000.5", TRUE, G_GINT64_CONSTANT(500000) },
		{ "20260630010203.12x", FALSE, G_GINT64_CONSTANT(0) },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		gint64 usec = 42;
		gboolean ok = sfl_parse_timestamp_text(cases[i].text, &usec);
		if (ok != cases[i].ok)
			g_error("%s: expected %s", cases[i].text,
				cases[i].ok ? "valid" : "invalid");
		if (ok)
			g_assert_cmpint(usec, ==, cases[i].usec);
	}
}

static void
test_timestamp_field(void)
{
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autoptr(json_t) obj = json_object();
	gint64 usec = 0;

	sfl_record_add_int(record, "ms", G_GINT64_CONSTANT(1782781323123));
	sfl_record_add_real(record, "real", 1782781323123.5);
	sfl_record_add_string(record, "iso", "2026-06-30T01:02:03.123Z", 24);
	sfl_record_add_string(record, "compact", "20260630010203.123", 18);
	sfl_record_add_string(record, "junk", "yesterday", 9);
	sfl_record_add_null(record, "null");
	sfl_record_add_json(record, "obj", obj);
	sfl_record_add_int(record, "huge", G_MAXINT64);
	sfl_record_add_int(record, "neg", -1000);
	sfl_record_add_real(record, "nan", NAN);
	sfl_record_add_real(record, "far", 1e300);

	g_assert_true(sfl_parse_timestamp_field(sfl_record_lookup(record, "ms"), &usec));
	g_assert_cmpint(usec, ==, G_GINT64_CONSTANT(1782781323123000));
	g_assert_true(sfl_parse_timestamp_field(sfl_record_lookup(record, "real"), &usec));
	g_assert_cmpint(usec, ==, G_GINT64_CONSTANT(1782781323123500));
	g_assert_true(sfl_parse_timestamp_field(sfl_record_lookup(record, "iso"), &usec));
	g_assert_cmpint(usec, ==, G_GINT64_CONSTANT(1782781323123000));
	g_assert_true(sfl_parse_timestamp_field(sfl_record_lookup(record, "compact"), &usec));
	g_assert_cmpint(usec, ==, G_GINT64_CONSTANT(1782781323123000));
	g_assert_true(sfl_parse_timestamp_field(sfl_record_lookup(record, "neg"), &usec));
	g_assert_cmpint(usec, ==, -1000000);
	usec = 7;
	g_assert_false(sfl_parse_timestamp_field(sfl_record_lookup(record, "junk"), &usec));
	g_assert_false(sfl_parse_timestamp_field(sfl_record_lookup(record, "null"), &usec));
	g_assert_false(sfl_parse_timestamp_field(sfl_record_lookup(record, "obj"), &usec));
	g_assert_false(sfl_parse_timestamp_field(sfl_record_lookup(record, "huge"), &usec));
	g_assert_false(sfl_parse_timestamp_field(sfl_record_lookup(record, "nan"), &usec));
	g_assert_false(sfl_parse_timestamp_field(sfl_record_lookup(record, "far"), &usec));
	g_assert_false(sfl_parse_timestamp_field(NULL, &usec));
	g_assert_cmpint(usec, ==, 7);
}

static void
test_timestamp_fallback(void)
{
	const gint64 now = G_GINT64_CONSTANT(1782781323000000);
	const gint64 hour = G_GINT64_CONSTANT(3600000000);

	g_assert_cmpint(sfl_timestamp_fallback(FALSE, 0, now), ==, now);
	g_assert_cmpint(sfl_timestamp_fallback(TRUE, now - 10, now), ==, now - 10);
	g_assert_cmpint(sfl_timestamp_fallback(TRUE, now - hour, now), ==, now - hour);
	g_assert_cmpint(sfl_timestamp_fallback(TRUE, now - hour - 1, now), ==,
			now - G_GINT64_CONSTANT(300000000));
	g_assert_cmpint(sfl_timestamp_fallback(TRUE, now + hour, now), ==, now + hour);
}

static void
test_timestamp_format(void)
{
	static const struct {
		const gchar *in;
		const gchar *out;
	} literals[] = {
		{ "2026-06-30T01:00:00.000+0000", "2026-06-30T01:00:00.000Z" },
		{ "2026-06-30T01:00:00Z", "2026-06-30T01:00:00.000Z" },
		{ "2026-06-30T03:00:00.123456+02:00", "2026-06-30T01:00:00.123Z" },
		{ "2026-06-30", "2026-06-30T00:00:00.000Z" },
		{ "2026-06-29T23:30:00-01:00", "2026-06-30T00:30:00.000Z" },
		{ "garbage", "garbage" },
		{ "2026-06-30T01:00:00.9999+00:00", "2026-06-30T01:00:00.999Z" },
		{ "1970-01-01T00:00:00.000Z", "1970-01-01T00:00:00.000Z" },
	};
	g_autofree gchar *epoch = sfl_format_iso_seconds(0);
	g_autofree gchar *before = sfl_format_iso_seconds(-1);
	g_autofree gchar *now = sfl_format_iso_seconds(G_GINT64_CONSTANT(1782781323999999));
	g_autofree gchar *first = sfl_format_iso_seconds(G_GINT64_CONSTANT(-62135596800000000));
	g_autofree gchar *escaped = sfl_soql_escape("O'Brien\\x");
	g_autofree gchar *beyond = sfl_soql_datetime_literal("9999-12-31T23:59:59-01:00");

	g_assert_cmpstr(epoch, ==, "1970-01-01T00:00:00Z");
	g_assert_cmpstr(before, ==, "1969-12-31T23:59:59Z");
	g_assert_cmpstr(now, ==, "2026-06-30T01:02:03Z");
	g_assert_cmpstr(first, ==, "0001-01-01T00:00:00Z");
	g_assert_cmpstr(escaped, ==, "O\\'Brien\\\\x");
	/* Python's astimezone overflows there; the text goes out as it came */
	g_assert_cmpstr(beyond, ==, "9999-12-31T23:59:59-01:00");
	for (gsize i = 0; i < G_N_ELEMENTS(literals); i++) {
		g_autofree gchar *got = sfl_soql_datetime_literal(literals[i].in);
		g_assert_cmpstr(got, ==, literals[i].out);
	}
}

/* --- level and metadata --------------------------------------------------------------------- */

typedef struct {
	const gchar *fields; /* NAME=value;...  "NAME=" is empty, "NAME" alone is null */
	const gchar *level;
} LevelCase;

static void
level_record_fill(SflRecord *record, const gchar *spec)
{
	g_auto(GStrv) parts = g_strsplit(spec, ";", -1);
	for (guint i = 0; parts[i] != NULL; i++) {
		const gchar *eq = strchr(parts[i], '=');
		if (parts[i][0] == '\0')
			continue;
		if (eq == NULL) {
			sfl_record_add_null(record, sfl_record_intern(record, parts[i], -1));
		} else {
			const gchar *name = sfl_record_intern(record, parts[i], eq - parts[i]);
			const gchar *value = sfl_record_intern(record, eq + 1, -1);
			sfl_record_add_string(record, name, value, strlen(value));
		}
	}
}

static void
test_level(void)
{
	static const LevelCase cases[] = {
		{ "", "info" },
		{ "USER_ID=005", "info" },
		{ "EXCEPTION_MESSAGE=boom", "error" },
		{ "EXCEPTION_TYPE=System.NullPointerException", "error" },
		{ "ERROR_MESSAGE=x;STATUS_CODE=200", "error" },
		{ "ERROR_CODE=E1", "error" },
		/* absent-ish values do not count */
		{ "EXCEPTION_MESSAGE= n/a ", "info" },
		{ "ERROR_CODE=NULL", "info" },
		{ "ERROR_CODE=0", "info" },
		{ "ERROR_CODE=None", "info" },
		{ "ERROR_CODE=NA", "info" },
		{ "ERROR_CODE=", "info" },
		{ "ERROR_CODE=\t\n", "info" },
		{ "ERROR_CODE", "info" },
		{ "ERROR_CODE=\302\240None\343\200\200", "info" },
		{ "ERROR_CODE=00", "error" },
		/* status codes */
		{ "STATUS_CODE=503", "error" },
		{ "STATUS_CODE=500", "error" },
		{ "STATUS_CODE=600", "error" },
		{ "STATUS_CODE=499", "warn" },
		{ "STATUS_CODE=404", "warn" },
		{ "STATUS_CODE=400", "warn" },
		{ "STATUS_CODE=399", "info" },
		{ "STATUS_CODE= 302 ", "info" },
		{ "STATUS_CODE=100", "info" },
		{ "STATUS_CODE=99;REQUEST_STATUS=F", "warn" },
		{ "STATUS_CODE=abc;REQUEST_STATUS=Success", "info" },
		{ "STATUS_CODE=-500", "info" },
		{ "STATUS_CODE=99999999999999999999999", "error" },
		/* request status */
		{ "REQUEST_STATUS=Success", "info" },
		{ "REQUEST_STATUS=S", "info" },
		{ "REQUEST_STATUS=COMPLETED", "info" },
		{ "REQUEST_STATUS= ok ", "info" },
		{ "REQUEST_STATUS=TRUE", "info" },
		{ "REQUEST_STATUS=failed", "warn" },
		{ "REQUEST_STATUS=U", "warn" },
		{ "REQUEST_STATUS=O\342\204\252", "info" },
		{ "REQUEST_STATUS=;LOGIN_STATUS=LOGIN_ERROR_INVALID_PASSWORD", "warn" },
		/* login status */
		{ "LOGIN_STATUS=LOGIN_NO_ERROR", "info" },
		{ "LOGIN_STATUS=login_no_error", "info" },
		{ "LOGIN_STATUS=LOGIN_ERROR_INVALID_PASSWORD", "warn" },
		/* operation status, then Status */
		{ "OPERATION_STATUS=ok", "info" },
		{ "OPERATION_STATUS=FAILURE", "warn" },
		{ "OPERATION_STATUS=none;Status=Failed", "warn" },
		{ "Status=true", "info" },
		{ "Status=Failed", "warn" },
		{ "status=Failed", "info" },
		{ "OPERATION_STATUS=Success;Status=Failed", "info" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(SflRecord) record = sfl_record_new();
		const gchar *level;
		level_record_fill(record, cases[i].fields);
		level = sfl_shape_level(record);
		if (g_strcmp0(level, cases[i].level) != 0)
			g_error("%s: level %s, expected %s", cases[i].fields, level,
				cases[i].level);
	}
}

static void
test_level_typed(void)
{
	g_autoptr(SflRecord) a = sfl_record_new();
	g_autoptr(SflRecord) b = sfl_record_new();
	g_autoptr(SflRecord) c = sfl_record_new();
	g_autoptr(SflRecord) d = sfl_record_new();

	/* str() of non-strings: 404 is a status, 0 is absent, True is a success word */
	sfl_record_add_int(a, "STATUS_CODE", 404);
	sfl_record_add_int(b, "ERROR_CODE", 0);
	sfl_record_add_bool(c, "REQUEST_STATUS", TRUE);
	sfl_record_add_real(d, "STATUS_CODE", 500.0);
	g_assert_cmpstr(sfl_shape_level(a), ==, "warn");
	g_assert_cmpstr(sfl_shape_level(b), ==, "info");
	g_assert_cmpstr(sfl_shape_level(c), ==, "info");
	g_assert_cmpstr(sfl_shape_level(d), ==, "info");
}

static void
test_metadata(void)
{
	static const gchar *const fields[] = { "USER_ID", "MISSING", "NULLED", "level", "NUM",
					       "USER_ID", "NESTED",  "FLAG",   NULL };
	static const gchar *const no_level[] = { "CLIENT_IP", "level", NULL };
	g_autoptr(SflRecord) record = sfl_record_new();
	g_autoptr(SflRecord) other = sfl_record_new();
	g_autoptr(GArray) pairs = g_array_new(FALSE, FALSE, sizeof(SflLabelPair));
	g_autoptr(json_t) nested = json_pack("{s:i,s:[s,n]}", "b", 1, "a", "x");
	SflLabelPair existing = { "source", "eventlogfile" };
	gchar value[] = "005xx";

	g_array_append_val(pairs, existing);
	sfl_record_add_string(record, "USER_ID", value, 3);
	sfl_record_add_null(record, "NULLED");
	sfl_record_add_string(record, "level", "custom", 6);
	sfl_record_add_int(record, "NUM", 7);
	sfl_record_add_json(record, "NESTED", nested);
	sfl_record_add_bool(record, "FLAG", FALSE);
	sfl_record_add_string(record, "STATUS_CODE", "503", 3);
	sfl_shape_metadata(record, fields, pairs);

	/*
	 * meta = {f: str(p[f]) for f in fields if p.get(f) is not None}; meta["level"] = level
	 * → {'USER_ID': '005', 'level': 'error', 'NUM': '7', 'NESTED': "{'b': 1, 'a': ['x',
	 * None]}", 'FLAG': 'False'}
	 */
	g_assert_cmpuint(pairs->len, ==, 6);
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 0).name, ==, "source");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 1).name, ==, "USER_ID");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 1).value, ==, "005");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 2).name, ==, "level");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 2).value, ==, "error");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 3).name, ==, "NUM");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 3).value, ==, "7");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 4).name, ==, "NESTED");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 4).value, ==,
			"{'b': 1, 'a': ['x', None]}");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 5).name, ==, "FLAG");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 5).value, ==, "False");
	/* the values are the record's own copies */
	value[0] = 'X';
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 1).value, ==, "005");

	/* "level" listed but not in the payload: appended last */
	g_array_set_size(pairs, 0);
	sfl_record_add_string(other, "CLIENT_IP", "10.0.0.1", 8);
	sfl_shape_metadata(other, no_level, pairs);
	g_assert_cmpuint(pairs->len, ==, 2);
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 0).value, ==, "10.0.0.1");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 1).name, ==, "level");
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 1).value, ==, "info");

	g_array_set_size(pairs, 0);
	sfl_shape_metadata(other, NULL, pairs);
	g_assert_cmpuint(pairs->len, ==, 1);
	g_assert_cmpstr(g_array_index(pairs, SflLabelPair, 0).name, ==, "level");
}

/* --- fnmatch -------------------------------------------------------------------------------- */

typedef struct {
	const gchar *pattern;
	const gchar *name;
	gboolean match;
} GlobCase;

/* fnmatch.fnmatchcase(name, pattern) for every pair of the two lists */
static const GlobCase glob_cases[] = {
	{ "*", "", TRUE },
	{ "*", "a", TRUE },
	{ "*", "b", TRUE },
	{ "*", "abc", TRUE },
	{ "*", "ab", TRUE },
	{ "*", "x.log", TRUE },
	{ "*", "a/b", TRUE },
	{ "*", "/event/LoginEventStream", TRUE },
	{ "*", "*", TRUE },
	{ "*", "\\", TRUE },
	{ "*", "\303\251x", TRUE },
	{ "*", "\360\237\230\200", TRUE },
	{ "*", "^", TRUE },
	{ "*", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", TRUE },
	{ "*", "[", TRUE },
	{ "*", "]", TRUE },
	{ "*", "-", TRUE },
	{ "*", "d", TRUE },
	{ "*", "z", TRUE },
	{ "*", "[!]", TRUE },
	{ "*", "Login", TRUE },
	{ "*", "Standard", TRUE },
	{ "*", "ApiAnomalyEventStore", TRUE },
	{ "*", "bx", TRUE },
	{ "*", "x[", TRUE },
	{ "*", "a-", TRUE },
	{ "", "", TRUE },
	{ "", "a", FALSE },
	{ "", "b", FALSE },
	{ "", "abc", FALSE },
	{ "", "ab", FALSE },
	{ "", "x.log", FALSE },
	{ "", "a/b", FALSE },
	{ "", "/event/LoginEventStream", FALSE },
	{ "", "*", FALSE },
	{ "", "\\", FALSE },
	{ "", "\303\251x", FALSE },
	{ "", "\360\237\230\200", FALSE },
	{ "", "^", FALSE },
	{ "", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "", "[", FALSE },
	{ "", "]", FALSE },
	{ "", "-", FALSE },
	{ "", "d", FALSE },
	{ "", "z", FALSE },
	{ "", "[!]", FALSE },
	{ "", "Login", FALSE },
	{ "", "Standard", FALSE },
	{ "", "ApiAnomalyEventStore", FALSE },
	{ "", "bx", FALSE },
	{ "", "x[", FALSE },
	{ "", "a-", FALSE },
	{ "?", "", FALSE },
	{ "?", "a", TRUE },
	{ "?", "b", TRUE },
	{ "?", "abc", FALSE },
	{ "?", "ab", FALSE },
	{ "?", "x.log", FALSE },
	{ "?", "a/b", FALSE },
	{ "?", "/event/LoginEventStream", FALSE },
	{ "?", "*", TRUE },
	{ "?", "\\", TRUE },
	{ "?", "\303\251x", FALSE },
	{ "?", "\360\237\230\200", TRUE },
	{ "?", "^", TRUE },
	{ "?", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "?", "[", TRUE },
	{ "?", "]", TRUE },
	{ "?", "-", TRUE },
	{ "?", "d", TRUE },
	{ "?", "z", TRUE },
	{ "?", "[!]", FALSE },
	{ "?", "Login", FALSE },
	{ "?", "Standard", FALSE },
	{ "?", "ApiAnomalyEventStore", FALSE },
	{ "?", "bx", FALSE },
	{ "?", "x[", FALSE },
	{ "?", "a-", FALSE },
	{ "a*b", "", FALSE },
	{ "a*b", "a", FALSE },
	{ "a*b", "b", FALSE },
	{ "a*b", "abc", FALSE },
	{ "a*b", "ab", TRUE },
	{ "a*b", "x.log", FALSE },
	{ "a*b", "a/b", TRUE },
	{ "a*b", "/event/LoginEventStream", FALSE },
	{ "a*b", "*", FALSE },
	{ "a*b", "\\", FALSE },
	{ "a*b", "\303\251x", FALSE },
	{ "a*b", "\360\237\230\200", FALSE },
	{ "a*b", "^", FALSE },
	{ "a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "a*b", "[", FALSE },
	{ "a*b", "]", FALSE },
	{ "a*b", "-", FALSE },
	{ "a*b", "d", FALSE },
	{ "a*b", "z", FALSE },
	{ "a*b", "[!]", FALSE },
	{ "a*b", "Login", FALSE },
	{ "a*b", "Standard", FALSE },
	{ "a*b", "ApiAnomalyEventStore", FALSE },
	{ "a*b", "bx", FALSE },
	{ "a*b", "x[", FALSE },
	{ "a*b", "a-", FALSE },
	{ "*.log", "", FALSE },
	{ "*.log", "a", FALSE },
	{ "*.log", "b", FALSE },
	{ "*.log", "abc", FALSE },
	{ "*.log", "ab", FALSE },
	{ "*.log", "x.log", TRUE },
	{ "*.log", "a/b", FALSE },
	{ "*.log", "/event/LoginEventStream", FALSE },
	{ "*.log", "*", FALSE },
	{ "*.log", "\\", FALSE },
	{ "*.log", "\303\251x", FALSE },
	{ "*.log", "\360\237\230\200", FALSE },
	{ "*.log", "^", FALSE },
	{ "*.log", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "*.log", "[", FALSE },
	{ "*.log", "]", FALSE },
	{ "*.log", "-", FALSE },
	{ "*.log", "d", FALSE },
	{ "*.log", "z", FALSE },
	{ "*.log", "[!]", FALSE },
	{ "*.log", "Login", FALSE },
	{ "*.log", "Standard", FALSE },
	{ "*.log", "ApiAnomalyEventStore", FALSE },
	{ "*.log", "bx", FALSE },
	{ "*.log", "x[", FALSE },
	{ "*.log", "a-", FALSE },
	{ "[abc]", "", FALSE },
	{ "[abc]", "a", TRUE },
	{ "[abc]", "b", TRUE },
	{ "[abc]", "abc", FALSE },
	{ "[abc]", "ab", FALSE },
	{ "[abc]", "x.log", FALSE },
	{ "[abc]", "a/b", FALSE },
	{ "[abc]", "/event/LoginEventStream", FALSE },
	{ "[abc]", "*", FALSE },
	{ "[abc]", "\\", FALSE },
	{ "[abc]", "\303\251x", FALSE },
	{ "[abc]", "\360\237\230\200", FALSE },
	{ "[abc]", "^", FALSE },
	{ "[abc]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[abc]", "[", FALSE },
	{ "[abc]", "]", FALSE },
	{ "[abc]", "-", FALSE },
	{ "[abc]", "d", FALSE },
	{ "[abc]", "z", FALSE },
	{ "[abc]", "[!]", FALSE },
	{ "[abc]", "Login", FALSE },
	{ "[abc]", "Standard", FALSE },
	{ "[abc]", "ApiAnomalyEventStore", FALSE },
	{ "[abc]", "bx", FALSE },
	{ "[abc]", "x[", FALSE },
	{ "[abc]", "a-", FALSE },
	{ "[!abc]", "", FALSE },
	{ "[!abc]", "a", FALSE },
	{ "[!abc]", "b", FALSE },
	{ "[!abc]", "abc", FALSE },
	{ "[!abc]", "ab", FALSE },
	{ "[!abc]", "x.log", FALSE },
	{ "[!abc]", "a/b", FALSE },
	{ "[!abc]", "/event/LoginEventStream", FALSE },
	{ "[!abc]", "*", TRUE },
	{ "[!abc]", "\\", TRUE },
	{ "[!abc]", "\303\251x", FALSE },
	{ "[!abc]", "\360\237\230\200", TRUE },
	{ "[!abc]", "^", TRUE },
	{ "[!abc]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[!abc]", "[", TRUE },
	{ "[!abc]", "]", TRUE },
	{ "[!abc]", "-", TRUE },
	{ "[!abc]", "d", TRUE },
	{ "[!abc]", "z", TRUE },
	{ "[!abc]", "[!]", FALSE },
	{ "[!abc]", "Login", FALSE },
	{ "[!abc]", "Standard", FALSE },
	{ "[!abc]", "ApiAnomalyEventStore", FALSE },
	{ "[!abc]", "bx", FALSE },
	{ "[!abc]", "x[", FALSE },
	{ "[!abc]", "a-", FALSE },
	{ "[a-c]x", "", FALSE },
	{ "[a-c]x", "a", FALSE },
	{ "[a-c]x", "b", FALSE },
	{ "[a-c]x", "abc", FALSE },
	{ "[a-c]x", "ab", FALSE },
	{ "[a-c]x", "x.log", FALSE },
	{ "[a-c]x", "a/b", FALSE },
	{ "[a-c]x", "/event/LoginEventStream", FALSE },
	{ "[a-c]x", "*", FALSE },
	{ "[a-c]x", "\\", FALSE },
	{ "[a-c]x", "\303\251x", FALSE },
	{ "[a-c]x", "\360\237\230\200", FALSE },
	{ "[a-c]x", "^", FALSE },
	{ "[a-c]x", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[a-c]x", "[", FALSE },
	{ "[a-c]x", "]", FALSE },
	{ "[a-c]x", "-", FALSE },
	{ "[a-c]x", "d", FALSE },
	{ "[a-c]x", "z", FALSE },
	{ "[a-c]x", "[!]", FALSE },
	{ "[a-c]x", "Login", FALSE },
	{ "[a-c]x", "Standard", FALSE },
	{ "[a-c]x", "ApiAnomalyEventStore", FALSE },
	{ "[a-c]x", "bx", TRUE },
	{ "[a-c]x", "x[", FALSE },
	{ "[a-c]x", "a-", FALSE },
	{ "[z-a]", "", FALSE },
	{ "[z-a]", "a", FALSE },
	{ "[z-a]", "b", FALSE },
	{ "[z-a]", "abc", FALSE },
	{ "[z-a]", "ab", FALSE },
	{ "[z-a]", "x.log", FALSE },
	{ "[z-a]", "a/b", FALSE },
	{ "[z-a]", "/event/LoginEventStream", FALSE },
	{ "[z-a]", "*", FALSE },
	{ "[z-a]", "\\", FALSE },
	{ "[z-a]", "\303\251x", FALSE },
	{ "[z-a]", "\360\237\230\200", FALSE },
	{ "[z-a]", "^", FALSE },
	{ "[z-a]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[z-a]", "[", FALSE },
	{ "[z-a]", "]", FALSE },
	{ "[z-a]", "-", FALSE },
	{ "[z-a]", "d", FALSE },
	{ "[z-a]", "z", FALSE },
	{ "[z-a]", "[!]", FALSE },
	{ "[z-a]", "Login", FALSE },
	{ "[z-a]", "Standard", FALSE },
	{ "[z-a]", "ApiAnomalyEventStore", FALSE },
	{ "[z-a]", "bx", FALSE },
	{ "[z-a]", "x[", FALSE },
	{ "[z-a]", "a-", FALSE },
	{ "[!z-a]", "", FALSE },
	{ "[!z-a]", "a", TRUE },
	{ "[!z-a]", "b", TRUE },
	{ "[!z-a]", "abc", FALSE },
	{ "[!z-a]", "ab", FALSE },
	{ "[!z-a]", "x.log", FALSE },
	{ "[!z-a]", "a/b", FALSE },
	{ "[!z-a]", "/event/LoginEventStream", FALSE },
	{ "[!z-a]", "*", TRUE },
	{ "[!z-a]", "\\", TRUE },
	{ "[!z-a]", "\303\251x", FALSE },
	{ "[!z-a]", "\360\237\230\200", TRUE },
	{ "[!z-a]", "^", TRUE },
	{ "[!z-a]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[!z-a]", "[", TRUE },
	{ "[!z-a]", "]", TRUE },
	{ "[!z-a]", "-", TRUE },
	{ "[!z-a]", "d", TRUE },
	{ "[!z-a]", "z", TRUE },
	{ "[!z-a]", "[!]", FALSE },
	{ "[!z-a]", "Login", FALSE },
	{ "[!z-a]", "Standard", FALSE },
	{ "[!z-a]", "ApiAnomalyEventStore", FALSE },
	{ "[!z-a]", "bx", FALSE },
	{ "[!z-a]", "x[", FALSE },
	{ "[!z-a]", "a-", FALSE },
	{ "[]]", "", FALSE },
	{ "[]]", "a", FALSE },
	{ "[]]", "b", FALSE },
	{ "[]]", "abc", FALSE },
	{ "[]]", "ab", FALSE },
	{ "[]]", "x.log", FALSE },
	{ "[]]", "a/b", FALSE },
	{ "[]]", "/event/LoginEventStream", FALSE },
	{ "[]]", "*", FALSE },
	{ "[]]", "\\", FALSE },
	{ "[]]", "\303\251x", FALSE },
	{ "[]]", "\360\237\230\200", FALSE },
	{ "[]]", "^", FALSE },
	{ "[]]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[]]", "[", FALSE },
	{ "[]]", "]", TRUE },
	{ "[]]", "-", FALSE },
	{ "[]]", "d", FALSE },
	{ "[]]", "z", FALSE },
	{ "[]]", "[!]", FALSE },
	{ "[]]", "Login", FALSE },
	{ "[]]", "Standard", FALSE },
	{ "[]]", "ApiAnomalyEventStore", FALSE },
	{ "[]]", "bx", FALSE },
	{ "[]]", "x[", FALSE },
	{ "[]]", "a-", FALSE },
	{ "[!]]", "", FALSE },
	{ "[!]]", "a", TRUE },
	{ "[!]]", "b", TRUE },
	{ "[!]]", "abc", FALSE },
	{ "[!]]", "ab", FALSE },
	{ "[!]]", "x.log", FALSE },
	{ "[!]]", "a/b", FALSE },
	{ "[!]]", "/event/LoginEventStream", FALSE },
	{ "[!]]", "*", TRUE },
	{ "[!]]", "\\", TRUE },
	{ "[!]]", "\303\251x", FALSE },
	{ "[!]]", "\360\237\230\200", TRUE },
	{ "[!]]", "^", TRUE },
	{ "[!]]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[!]]", "[", TRUE },
	{ "[!]]", "]", FALSE },
	{ "[!]]", "-", TRUE },
	{ "[!]]", "d", TRUE },
	{ "[!]]", "z", TRUE },
	{ "[!]]", "[!]", FALSE },
	{ "[!]]", "Login", FALSE },
	{ "[!]]", "Standard", FALSE },
	{ "[!]]", "ApiAnomalyEventStore", FALSE },
	{ "[!]]", "bx", FALSE },
	{ "[!]]", "x[", FALSE },
	{ "[!]]", "a-", FALSE },
	{ "[", "", FALSE },
	{ "[", "a", FALSE },
	{ "[", "b", FALSE },
	{ "[", "abc", FALSE },
	{ "[", "ab", FALSE },
	{ "[", "x.log", FALSE },
	{ "[", "a/b", FALSE },
	{ "[", "/event/LoginEventStream", FALSE },
	{ "[", "*", FALSE },
	{ "[", "\\", FALSE },
	{ "[", "\303\251x", FALSE },
	{ "[", "\360\237\230\200", FALSE },
	{ "[", "^", FALSE },
	{ "[", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[", "[", TRUE },
	{ "[", "]", FALSE },
	{ "[", "-", FALSE },
	{ "[", "d", FALSE },
	{ "[", "z", FALSE },
	{ "[", "[!]", FALSE },
	{ "[", "Login", FALSE },
	{ "[", "Standard", FALSE },
	{ "[", "ApiAnomalyEventStore", FALSE },
	{ "[", "bx", FALSE },
	{ "[", "x[", FALSE },
	{ "[", "a-", FALSE },
	{ "[abc", "", FALSE },
	{ "[abc", "a", FALSE },
	{ "[abc", "b", FALSE },
	{ "[abc", "abc", FALSE },
	{ "[abc", "ab", FALSE },
	{ "[abc", "x.log", FALSE },
	{ "[abc", "a/b", FALSE },
	{ "[abc", "/event/LoginEventStream", FALSE },
	{ "[abc", "*", FALSE },
	{ "[abc", "\\", FALSE },
	{ "[abc", "\303\251x", FALSE },
	{ "[abc", "\360\237\230\200", FALSE },
	{ "[abc", "^", FALSE },
	{ "[abc", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[abc", "[", FALSE },
	{ "[abc", "]", FALSE },
	{ "[abc", "-", FALSE },
	{ "[abc", "d", FALSE },
	{ "[abc", "z", FALSE },
	{ "[abc", "[!]", FALSE },
	{ "[abc", "Login", FALSE },
	{ "[abc", "Standard", FALSE },
	{ "[abc", "ApiAnomalyEventStore", FALSE },
	{ "[abc", "bx", FALSE },
	{ "[abc", "x[", FALSE },
	{ "[abc", "a-", FALSE },
	{ "a[", "", FALSE },
	{ "a[", "a", FALSE },
	{ "a[", "b", FALSE },
	{ "a[", "abc", FALSE },
	{ "a[", "ab", FALSE },
	{ "a[", "x.log", FALSE },
	{ "a[", "a/b", FALSE },
	{ "a[", "/event/LoginEventStream", FALSE },
	{ "a[", "*", FALSE },
	{ "a[", "\\", FALSE },
	{ "a[", "\303\251x", FALSE },
	{ "a[", "\360\237\230\200", FALSE },
	{ "a[", "^", FALSE },
	{ "a[", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "a[", "[", FALSE },
	{ "a[", "]", FALSE },
	{ "a[", "-", FALSE },
	{ "a[", "d", FALSE },
	{ "a[", "z", FALSE },
	{ "a[", "[!]", FALSE },
	{ "a[", "Login", FALSE },
	{ "a[", "Standard", FALSE },
	{ "a[", "ApiAnomalyEventStore", FALSE },
	{ "a[", "bx", FALSE },
	{ "a[", "x[", FALSE },
	{ "a[", "a-", FALSE },
	{ "[a-]", "", FALSE },
	{ "[a-]", "a", TRUE },
	{ "[a-]", "b", FALSE },
	{ "[a-]", "abc", FALSE },
	{ "[a-]", "ab", FALSE },
	{ "[a-]", "x.log", FALSE },
	{ "[a-]", "a/b", FALSE },
	{ "[a-]", "/event/LoginEventStream", FALSE },
	{ "[a-]", "*", FALSE },
	{ "[a-]", "\\", FALSE },
	{ "[a-]", "\303\251x", FALSE },
	{ "[a-]", "\360\237\230\200", FALSE },
	{ "[a-]", "^", FALSE },
	{ "[a-]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[a-]", "[", FALSE },
	{ "[a-]", "]", FALSE },
	{ "[a-]", "-", TRUE },
	{ "[a-]", "d", FALSE },
	{ "[a-]", "z", FALSE },
	{ "[a-]", "[!]", FALSE },
	{ "[a-]", "Login", FALSE },
	{ "[a-]", "Standard", FALSE },
	{ "[a-]", "ApiAnomalyEventStore", FALSE },
	{ "[a-]", "bx", FALSE },
	{ "[a-]", "x[", FALSE },
	{ "[a-]", "a-", FALSE },
	{ "[-a]", "", FALSE },
	{ "[-a]", "a", TRUE },
	{ "[-a]", "b", FALSE },
	{ "[-a]", "abc", FALSE },
	{ "[-a]", "ab", FALSE },
	{ "[-a]", "x.log", FALSE },
	{ "[-a]", "a/b", FALSE },
	{ "[-a]", "/event/LoginEventStream", FALSE },
	{ "[-a]", "*", FALSE },
	{ "[-a]", "\\", FALSE },
	{ "[-a]", "\303\251x", FALSE },
	{ "[-a]", "\360\237\230\200", FALSE },
	{ "[-a]", "^", FALSE },
	{ "[-a]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[-a]", "[", FALSE },
	{ "[-a]", "]", FALSE },
	{ "[-a]", "-", TRUE },
	{ "[-a]", "d", FALSE },
	{ "[-a]", "z", FALSE },
	{ "[-a]", "[!]", FALSE },
	{ "[-a]", "Login", FALSE },
	{ "[-a]", "Standard", FALSE },
	{ "[-a]", "ApiAnomalyEventStore", FALSE },
	{ "[-a]", "bx", FALSE },
	{ "[-a]", "x[", FALSE },
	{ "[-a]", "a-", FALSE },
	{ "[!]", "", FALSE },
	{ "[!]", "a", FALSE },
	{ "[!]", "b", FALSE },
	{ "[!]", "abc", FALSE },
	{ "[!]", "ab", FALSE },
	{ "[!]", "x.log", FALSE },
	{ "[!]", "a/b", FALSE },
	{ "[!]", "/event/LoginEventStream", FALSE },
	{ "[!]", "*", FALSE },
	{ "[!]", "\\", FALSE },
	{ "[!]", "\303\251x", FALSE },
	{ "[!]", "\360\237\230\200", FALSE },
	{ "[!]", "^", FALSE },
	{ "[!]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[!]", "[", FALSE },
	{ "[!]", "]", FALSE },
	{ "[!]", "-", FALSE },
	{ "[!]", "d", FALSE },
	{ "[!]", "z", FALSE },
	{ "[!]", "[!]", TRUE },
	{ "[!]", "Login", FALSE },
	{ "[!]", "Standard", FALSE },
	{ "[!]", "ApiAnomalyEventStore", FALSE },
	{ "[!]", "bx", FALSE },
	{ "[!]", "x[", FALSE },
	{ "[!]", "a-", FALSE },
	{ "[a-c-e]", "", FALSE },
	{ "[a-c-e]", "a", TRUE },
	{ "[a-c-e]", "b", TRUE },
	{ "[a-c-e]", "abc", FALSE },
	{ "[a-c-e]", "ab", FALSE },
	{ "[a-c-e]", "x.log", FALSE },
	{ "[a-c-e]", "a/b", FALSE },
	{ "[a-c-e]", "/event/LoginEventStream", FALSE },
	{ "[a-c-e]", "*", FALSE },
	{ "[a-c-e]", "\\", FALSE },
	{ "[a-c-e]", "\303\251x", FALSE },
	{ "[a-c-e]", "\360\237\230\200", FALSE },
	{ "[a-c-e]", "^", FALSE },
	{ "[a-c-e]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[a-c-e]", "[", FALSE },
	{ "[a-c-e]", "]", FALSE },
	{ "[a-c-e]", "-", TRUE },
	{ "[a-c-e]", "d", FALSE },
	{ "[a-c-e]", "z", FALSE },
	{ "[a-c-e]", "[!]", FALSE },
	{ "[a-c-e]", "Login", FALSE },
	{ "[a-c-e]", "Standard", FALSE },
	{ "[a-c-e]", "ApiAnomalyEventStore", FALSE },
	{ "[a-c-e]", "bx", FALSE },
	{ "[a-c-e]", "x[", FALSE },
	{ "[a-c-e]", "a-", FALSE },
	{ "[b-az]", "", FALSE },
	{ "[b-az]", "a", FALSE },
	{ "[b-az]", "b", FALSE },
	{ "[b-az]", "abc", FALSE },
	{ "[b-az]", "ab", FALSE },
	{ "[b-az]", "x.log", FALSE },
	{ "[b-az]", "a/b", FALSE },
	{ "[b-az]", "/event/LoginEventStream", FALSE },
	{ "[b-az]", "*", FALSE },
	{ "[b-az]", "\\", FALSE },
	{ "[b-az]", "\303\251x", FALSE },
	{ "[b-az]", "\360\237\230\200", FALSE },
	{ "[b-az]", "^", FALSE },
	{ "[b-az]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[b-az]", "[", FALSE },
	{ "[b-az]", "]", FALSE },
	{ "[b-az]", "-", FALSE },
	{ "[b-az]", "d", FALSE },
	{ "[b-az]", "z", TRUE },
	{ "[b-az]", "[!]", FALSE },
	{ "[b-az]", "Login", FALSE },
	{ "[b-az]", "Standard", FALSE },
	{ "[b-az]", "ApiAnomalyEventStore", FALSE },
	{ "[b-az]", "bx", FALSE },
	{ "[b-az]", "x[", FALSE },
	{ "[b-az]", "a-", FALSE },
	{ "*/*", "", FALSE },
	{ "*/*", "a", FALSE },
	{ "*/*", "b", FALSE },
	{ "*/*", "abc", FALSE },
	{ "*/*", "ab", FALSE },
	{ "*/*", "x.log", FALSE },
	{ "*/*", "a/b", TRUE },
	{ "*/*", "/event/LoginEventStream", TRUE },
	{ "*/*", "*", FALSE },
	{ "*/*", "\\", FALSE },
	{ "*/*", "\303\251x", FALSE },
	{ "*/*", "\360\237\230\200", FALSE },
	{ "*/*", "^", FALSE },
	{ "*/*", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "*/*", "[", FALSE },
	{ "*/*", "]", FALSE },
	{ "*/*", "-", FALSE },
	{ "*/*", "d", FALSE },
	{ "*/*", "z", FALSE },
	{ "*/*", "[!]", FALSE },
	{ "*/*", "Login", FALSE },
	{ "*/*", "Standard", FALSE },
	{ "*/*", "ApiAnomalyEventStore", FALSE },
	{ "*/*", "bx", FALSE },
	{ "*/*", "x[", FALSE },
	{ "*/*", "a-", FALSE },
	{ "/event/*", "", FALSE },
	{ "/event/*", "a", FALSE },
	{ "/event/*", "b", FALSE },
	{ "/event/*", "abc", FALSE },
	{ "/event/*", "ab", FALSE },
	{ "/event/*", "x.log", FALSE },
	{ "/event/*", "a/b", FALSE },
	{ "/event/*", "/event/LoginEventStream", TRUE },
	{ "/event/*", "*", FALSE },
	{ "/event/*", "\\", FALSE },
	{ "/event/*", "\303\251x", FALSE },
	{ "/event/*", "\360\237\230\200", FALSE },
	{ "/event/*", "^", FALSE },
	{ "/event/*", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "/event/*", "[", FALSE },
	{ "/event/*", "]", FALSE },
	{ "/event/*", "-", FALSE },
	{ "/event/*", "d", FALSE },
	{ "/event/*", "z", FALSE },
	{ "/event/*", "[!]", FALSE },
	{ "/event/*", "Login", FALSE },
	{ "/event/*", "Standard", FALSE },
	{ "/event/*", "ApiAnomalyEventStore", FALSE },
	{ "/event/*", "bx", FALSE },
	{ "/event/*", "x[", FALSE },
	{ "/event/*", "a-", FALSE },
	{ "\\*", "", FALSE },
	{ "\\*", "a", FALSE },
	{ "\\*", "b", FALSE },
	{ "\\*", "abc", FALSE },
	{ "\\*", "ab", FALSE },
	{ "\\*", "x.log", FALSE },
	{ "\\*", "a/b", FALSE },
	{ "\\*", "/event/LoginEventStream", FALSE },
	{ "\\*", "*", FALSE },
	{ "\\*", "\\", TRUE },
	{ "\\*", "\303\251x", FALSE },
	{ "\\*", "\360\237\230\200", FALSE },
	{ "\\*", "^", FALSE },
	{ "\\*", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "\\*", "[", FALSE },
	{ "\\*", "]", FALSE },
	{ "\\*", "-", FALSE },
	{ "\\*", "d", FALSE },
	{ "\\*", "z", FALSE },
	{ "\\*", "[!]", FALSE },
	{ "\\*", "Login", FALSE },
	{ "\\*", "Standard", FALSE },
	{ "\\*", "ApiAnomalyEventStore", FALSE },
	{ "\\*", "bx", FALSE },
	{ "\\*", "x[", FALSE },
	{ "\\*", "a-", FALSE },
	{ "[\\]", "", FALSE },
	{ "[\\]", "a", FALSE },
	{ "[\\]", "b", FALSE },
	{ "[\\]", "abc", FALSE },
	{ "[\\]", "ab", FALSE },
	{ "[\\]", "x.log", FALSE },
	{ "[\\]", "a/b", FALSE },
	{ "[\\]", "/event/LoginEventStream", FALSE },
	{ "[\\]", "*", FALSE },
	{ "[\\]", "\\", TRUE },
	{ "[\\]", "\303\251x", FALSE },
	{ "[\\]", "\360\237\230\200", FALSE },
	{ "[\\]", "^", FALSE },
	{ "[\\]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[\\]", "[", FALSE },
	{ "[\\]", "]", FALSE },
	{ "[\\]", "-", FALSE },
	{ "[\\]", "d", FALSE },
	{ "[\\]", "z", FALSE },
	{ "[\\]", "[!]", FALSE },
	{ "[\\]", "Login", FALSE },
	{ "[\\]", "Standard", FALSE },
	{ "[\\]", "ApiAnomalyEventStore", FALSE },
	{ "[\\]", "bx", FALSE },
	{ "[\\]", "x[", FALSE },
	{ "[\\]", "a-", FALSE },
	{ "\303\251?", "", FALSE },
	{ "\303\251?", "a", FALSE },
	{ "\303\251?", "b", FALSE },
	{ "\303\251?", "abc", FALSE },
	{ "\303\251?", "ab", FALSE },
	{ "\303\251?", "x.log", FALSE },
	{ "\303\251?", "a/b", FALSE },
	{ "\303\251?", "/event/LoginEventStream", FALSE },
	{ "\303\251?", "*", FALSE },
	{ "\303\251?", "\\", FALSE },
	{ "\303\251?", "\303\251x", TRUE },
	{ "\303\251?", "\360\237\230\200", FALSE },
	{ "\303\251?", "^", FALSE },
	{ "\303\251?", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "\303\251?", "[", FALSE },
	{ "\303\251?", "]", FALSE },
	{ "\303\251?", "-", FALSE },
	{ "\303\251?", "d", FALSE },
	{ "\303\251?", "z", FALSE },
	{ "\303\251?", "[!]", FALSE },
	{ "\303\251?", "Login", FALSE },
	{ "\303\251?", "Standard", FALSE },
	{ "\303\251?", "ApiAnomalyEventStore", FALSE },
	{ "\303\251?", "bx", FALSE },
	{ "\303\251?", "x[", FALSE },
	{ "\303\251?", "a-", FALSE },
	{ "?", "", FALSE },
	{ "?", "a", TRUE },
	{ "?", "b", TRUE },
	{ "?", "abc", FALSE },
	{ "?", "ab", FALSE },
	{ "?", "x.log", FALSE },
	{ "?", "a/b", FALSE },
	{ "?", "/event/LoginEventStream", FALSE },
	{ "?", "*", TRUE },
	{ "?", "\\", TRUE },
	{ "?", "\303\251x", FALSE },
	{ "?", "\360\237\230\200", TRUE },
	{ "?", "^", TRUE },
	{ "?", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "?", "[", TRUE },
	{ "?", "]", TRUE },
	{ "?", "-", TRUE },
	{ "?", "d", TRUE },
	{ "?", "z", TRUE },
	{ "?", "[!]", FALSE },
	{ "?", "Login", FALSE },
	{ "?", "Standard", FALSE },
	{ "?", "ApiAnomalyEventStore", FALSE },
	{ "?", "bx", FALSE },
	{ "?", "x[", FALSE },
	{ "?", "a-", FALSE },
	{ "[^a]", "", FALSE },
	{ "[^a]", "a", TRUE },
	{ "[^a]", "b", FALSE },
	{ "[^a]", "abc", FALSE },
	{ "[^a]", "ab", FALSE },
	{ "[^a]", "x.log", FALSE },
	{ "[^a]", "a/b", FALSE },
	{ "[^a]", "/event/LoginEventStream", FALSE },
	{ "[^a]", "*", FALSE },
	{ "[^a]", "\\", FALSE },
	{ "[^a]", "\303\251x", FALSE },
	{ "[^a]", "\360\237\230\200", FALSE },
	{ "[^a]", "^", TRUE },
	{ "[^a]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[^a]", "[", FALSE },
	{ "[^a]", "]", FALSE },
	{ "[^a]", "-", FALSE },
	{ "[^a]", "d", FALSE },
	{ "[^a]", "z", FALSE },
	{ "[^a]", "[!]", FALSE },
	{ "[^a]", "Login", FALSE },
	{ "[^a]", "Standard", FALSE },
	{ "[^a]", "ApiAnomalyEventStore", FALSE },
	{ "[^a]", "bx", FALSE },
	{ "[^a]", "x[", FALSE },
	{ "[^a]", "a-", FALSE },
	{ "**a", "", FALSE },
	{ "**a", "a", TRUE },
	{ "**a", "b", FALSE },
	{ "**a", "abc", FALSE },
	{ "**a", "ab", FALSE },
	{ "**a", "x.log", FALSE },
	{ "**a", "a/b", FALSE },
	{ "**a", "/event/LoginEventStream", FALSE },
	{ "**a", "*", FALSE },
	{ "**a", "\\", FALSE },
	{ "**a", "\303\251x", FALSE },
	{ "**a", "\360\237\230\200", FALSE },
	{ "**a", "^", FALSE },
	{ "**a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "**a", "[", FALSE },
	{ "**a", "]", FALSE },
	{ "**a", "-", FALSE },
	{ "**a", "d", FALSE },
	{ "**a", "z", FALSE },
	{ "**a", "[!]", FALSE },
	{ "**a", "Login", FALSE },
	{ "**a", "Standard", FALSE },
	{ "**a", "ApiAnomalyEventStore", FALSE },
	{ "**a", "bx", FALSE },
	{ "**a", "x[", FALSE },
	{ "**a", "a-", FALSE },
	{ "a*a*a*a*b", "", FALSE },
	{ "a*a*a*a*b", "a", FALSE },
	{ "a*a*a*a*b", "b", FALSE },
	{ "a*a*a*a*b", "abc", FALSE },
	{ "a*a*a*a*b", "ab", FALSE },
	{ "a*a*a*a*b", "x.log", FALSE },
	{ "a*a*a*a*b", "a/b", FALSE },
	{ "a*a*a*a*b", "/event/LoginEventStream", FALSE },
	{ "a*a*a*a*b", "*", FALSE },
	{ "a*a*a*a*b", "\\", FALSE },
	{ "a*a*a*a*b", "\303\251x", FALSE },
	{ "a*a*a*a*b", "\360\237\230\200", FALSE },
	{ "a*a*a*a*b", "^", FALSE },
	{ "a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "a*a*a*a*b", "[", FALSE },
	{ "a*a*a*a*b", "]", FALSE },
	{ "a*a*a*a*b", "-", FALSE },
	{ "a*a*a*a*b", "d", FALSE },
	{ "a*a*a*a*b", "z", FALSE },
	{ "a*a*a*a*b", "[!]", FALSE },
	{ "a*a*a*a*b", "Login", FALSE },
	{ "a*a*a*a*b", "Standard", FALSE },
	{ "a*a*a*a*b", "ApiAnomalyEventStore", FALSE },
	{ "a*a*a*a*b", "bx", FALSE },
	{ "a*a*a*a*b", "x[", FALSE },
	{ "a*a*a*a*b", "a-", FALSE },
	{ "Login*", "", FALSE },
	{ "Login*", "a", FALSE },
	{ "Login*", "b", FALSE },
	{ "Login*", "abc", FALSE },
	{ "Login*", "ab", FALSE },
	{ "Login*", "x.log", FALSE },
	{ "Login*", "a/b", FALSE },
	{ "Login*", "/event/LoginEventStream", FALSE },
	{ "Login*", "*", FALSE },
	{ "Login*", "\\", FALSE },
	{ "Login*", "\303\251x", FALSE },
	{ "Login*", "\360\237\230\200", FALSE },
	{ "Login*", "^", FALSE },
	{ "Login*", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "Login*", "[", FALSE },
	{ "Login*", "]", FALSE },
	{ "Login*", "-", FALSE },
	{ "Login*", "d", FALSE },
	{ "Login*", "z", FALSE },
	{ "Login*", "[!]", FALSE },
	{ "Login*", "Login", TRUE },
	{ "Login*", "Standard", FALSE },
	{ "Login*", "ApiAnomalyEventStore", FALSE },
	{ "Login*", "bx", FALSE },
	{ "Login*", "x[", FALSE },
	{ "Login*", "a-", FALSE },
	{ "[!S]*", "", FALSE },
	{ "[!S]*", "a", TRUE },
	{ "[!S]*", "b", TRUE },
	{ "[!S]*", "abc", TRUE },
	{ "[!S]*", "ab", TRUE },
	{ "[!S]*", "x.log", TRUE },
	{ "[!S]*", "a/b", TRUE },
	{ "[!S]*", "/event/LoginEventStream", TRUE },
	{ "[!S]*", "*", TRUE },
	{ "[!S]*", "\\", TRUE },
	{ "[!S]*", "\303\251x", TRUE },
	{ "[!S]*", "\360\237\230\200", TRUE },
	{ "[!S]*", "^", TRUE },
	{ "[!S]*", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", TRUE },
	{ "[!S]*", "[", TRUE },
	{ "[!S]*", "]", TRUE },
	{ "[!S]*", "-", TRUE },
	{ "[!S]*", "d", TRUE },
	{ "[!S]*", "z", TRUE },
	{ "[!S]*", "[!]", TRUE },
	{ "[!S]*", "Login", TRUE },
	{ "[!S]*", "Standard", FALSE },
	{ "[!S]*", "ApiAnomalyEventStore", TRUE },
	{ "[!S]*", "bx", TRUE },
	{ "[!S]*", "x[", TRUE },
	{ "[!S]*", "a-", TRUE },
	{ "*Event*", "", FALSE },
	{ "*Event*", "a", FALSE },
	{ "*Event*", "b", FALSE },
	{ "*Event*", "abc", FALSE },
	{ "*Event*", "ab", FALSE },
	{ "*Event*", "x.log", FALSE },
	{ "*Event*", "a/b", FALSE },
	{ "*Event*", "/event/LoginEventStream", TRUE },
	{ "*Event*", "*", FALSE },
	{ "*Event*", "\\", FALSE },
	{ "*Event*", "\303\251x", FALSE },
	{ "*Event*", "\360\237\230\200", FALSE },
	{ "*Event*", "^", FALSE },
	{ "*Event*", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "*Event*", "[", FALSE },
	{ "*Event*", "]", FALSE },
	{ "*Event*", "-", FALSE },
	{ "*Event*", "d", FALSE },
	{ "*Event*", "z", FALSE },
	{ "*Event*", "[!]", FALSE },
	{ "*Event*", "Login", FALSE },
	{ "*Event*", "Standard", FALSE },
	{ "*Event*", "ApiAnomalyEventStore", TRUE },
	{ "*Event*", "bx", FALSE },
	{ "*Event*", "x[", FALSE },
	{ "*Event*", "a-", FALSE },
	{ "[[]", "", FALSE },
	{ "[[]", "a", FALSE },
	{ "[[]", "b", FALSE },
	{ "[[]", "abc", FALSE },
	{ "[[]", "ab", FALSE },
	{ "[[]", "x.log", FALSE },
	{ "[[]", "a/b", FALSE },
	{ "[[]", "/event/LoginEventStream", FALSE },
	{ "[[]", "*", FALSE },
	{ "[[]", "\\", FALSE },
	{ "[[]", "\303\251x", FALSE },
	{ "[[]", "\360\237\230\200", FALSE },
	{ "[[]", "^", FALSE },
	{ "[[]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[[]", "[", TRUE },
	{ "[[]", "]", FALSE },
	{ "[[]", "-", FALSE },
	{ "[[]", "d", FALSE },
	{ "[[]", "z", FALSE },
	{ "[[]", "[!]", FALSE },
	{ "[[]", "Login", FALSE },
	{ "[[]", "Standard", FALSE },
	{ "[[]", "ApiAnomalyEventStore", FALSE },
	{ "[[]", "bx", FALSE },
	{ "[[]", "x[", FALSE },
	{ "[[]", "a-", FALSE },
	{ "[a-c-]", "", FALSE },
	{ "[a-c-]", "a", TRUE },
	{ "[a-c-]", "b", TRUE },
	{ "[a-c-]", "abc", FALSE },
	{ "[a-c-]", "ab", FALSE },
	{ "[a-c-]", "x.log", FALSE },
	{ "[a-c-]", "a/b", FALSE },
	{ "[a-c-]", "/event/LoginEventStream", FALSE },
	{ "[a-c-]", "*", FALSE },
	{ "[a-c-]", "\\", FALSE },
	{ "[a-c-]", "\303\251x", FALSE },
	{ "[a-c-]", "\360\237\230\200", FALSE },
	{ "[a-c-]", "^", FALSE },
	{ "[a-c-]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[a-c-]", "[", FALSE },
	{ "[a-c-]", "]", FALSE },
	{ "[a-c-]", "-", TRUE },
	{ "[a-c-]", "d", FALSE },
	{ "[a-c-]", "z", FALSE },
	{ "[a-c-]", "[!]", FALSE },
	{ "[a-c-]", "Login", FALSE },
	{ "[a-c-]", "Standard", FALSE },
	{ "[a-c-]", "ApiAnomalyEventStore", FALSE },
	{ "[a-c-]", "bx", FALSE },
	{ "[a-c-]", "x[", FALSE },
	{ "[a-c-]", "a-", FALSE },
	{ "[!a-c]*", "", FALSE },
	{ "[!a-c]*", "a", FALSE },
	{ "[!a-c]*", "b", FALSE },
	{ "[!a-c]*", "abc", FALSE },
	{ "[!a-c]*", "ab", FALSE },
	{ "[!a-c]*", "x.log", TRUE },
	{ "[!a-c]*", "a/b", FALSE },
	{ "[!a-c]*", "/event/LoginEventStream", TRUE },
	{ "[!a-c]*", "*", TRUE },
	{ "[!a-c]*", "\\", TRUE },
	{ "[!a-c]*", "\303\251x", TRUE },
	{ "[!a-c]*", "\360\237\230\200", TRUE },
	{ "[!a-c]*", "^", TRUE },
	{ "[!a-c]*", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[!a-c]*", "[", TRUE },
	{ "[!a-c]*", "]", TRUE },
	{ "[!a-c]*", "-", TRUE },
	{ "[!a-c]*", "d", TRUE },
	{ "[!a-c]*", "z", TRUE },
	{ "[!a-c]*", "[!]", TRUE },
	{ "[!a-c]*", "Login", TRUE },
	{ "[!a-c]*", "Standard", TRUE },
	{ "[!a-c]*", "ApiAnomalyEventStore", TRUE },
	{ "[!a-c]*", "bx", FALSE },
	{ "[!a-c]*", "x[", TRUE },
	{ "[!a-c]*", "a-", FALSE },
	{ "x[", "", FALSE },
	{ "x[", "a", FALSE },
	{ "x[", "b", FALSE },
	{ "x[", "abc", FALSE },
	{ "x[", "ab", FALSE },
	{ "x[", "x.log", FALSE },
	{ "x[", "a/b", FALSE },
	{ "x[", "/event/LoginEventStream", FALSE },
	{ "x[", "*", FALSE },
	{ "x[", "\\", FALSE },
	{ "x[", "\303\251x", FALSE },
	{ "x[", "\360\237\230\200", FALSE },
	{ "x[", "^", FALSE },
	{ "x[", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "x[", "[", FALSE },
	{ "x[", "]", FALSE },
	{ "x[", "-", FALSE },
	{ "x[", "d", FALSE },
	{ "x[", "z", FALSE },
	{ "x[", "[!]", FALSE },
	{ "x[", "Login", FALSE },
	{ "x[", "Standard", FALSE },
	{ "x[", "ApiAnomalyEventStore", FALSE },
	{ "x[", "bx", FALSE },
	{ "x[", "x[", TRUE },
	{ "x[", "a-", FALSE },
	{ "[x", "", FALSE },
	{ "[x", "a", FALSE },
	{ "[x", "b", FALSE },
	{ "[x", "abc", FALSE },
	{ "[x", "ab", FALSE },
	{ "[x", "x.log", FALSE },
	{ "[x", "a/b", FALSE },
	{ "[x", "/event/LoginEventStream", FALSE },
	{ "[x", "*", FALSE },
	{ "[x", "\\", FALSE },
	{ "[x", "\303\251x", FALSE },
	{ "[x", "\360\237\230\200", FALSE },
	{ "[x", "^", FALSE },
	{ "[x", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[x", "[", FALSE },
	{ "[x", "]", FALSE },
	{ "[x", "-", FALSE },
	{ "[x", "d", FALSE },
	{ "[x", "z", FALSE },
	{ "[x", "[!]", FALSE },
	{ "[x", "Login", FALSE },
	{ "[x", "Standard", FALSE },
	{ "[x", "ApiAnomalyEventStore", FALSE },
	{ "[x", "bx", FALSE },
	{ "[x", "x[", FALSE },
	{ "[x", "a-", FALSE },
	{ "*[", "", FALSE },
	{ "*[", "a", FALSE },
	{ "*[", "b", FALSE },
	{ "*[", "abc", FALSE },
	{ "*[", "ab", FALSE },
	{ "*[", "x.log", FALSE },
	{ "*[", "a/b", FALSE },
	{ "*[", "/event/LoginEventStream", FALSE },
	{ "*[", "*", FALSE },
	{ "*[", "\\", FALSE },
	{ "*[", "\303\251x", FALSE },
	{ "*[", "\360\237\230\200", FALSE },
	{ "*[", "^", FALSE },
	{ "*[", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "*[", "[", TRUE },
	{ "*[", "]", FALSE },
	{ "*[", "-", FALSE },
	{ "*[", "d", FALSE },
	{ "*[", "z", FALSE },
	{ "*[", "[!]", FALSE },
	{ "*[", "Login", FALSE },
	{ "*[", "Standard", FALSE },
	{ "*[", "ApiAnomalyEventStore", FALSE },
	{ "*[", "bx", FALSE },
	{ "*[", "x[", TRUE },
	{ "*[", "a-", FALSE },
	{ "[]-a]", "", FALSE },
	{ "[]-a]", "a", TRUE },
	{ "[]-a]", "b", FALSE },
	{ "[]-a]", "abc", FALSE },
	{ "[]-a]", "ab", FALSE },
	{ "[]-a]", "x.log", FALSE },
	{ "[]-a]", "a/b", FALSE },
	{ "[]-a]", "/event/LoginEventStream", FALSE },
	{ "[]-a]", "*", FALSE },
	{ "[]-a]", "\\", FALSE },
	{ "[]-a]", "\303\251x", FALSE },
	{ "[]-a]", "\360\237\230\200", FALSE },
	{ "[]-a]", "^", TRUE },
	{ "[]-a]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[]-a]", "[", FALSE },
	{ "[]-a]", "]", TRUE },
	{ "[]-a]", "-", FALSE },
	{ "[]-a]", "d", FALSE },
	{ "[]-a]", "z", FALSE },
	{ "[]-a]", "[!]", FALSE },
	{ "[]-a]", "Login", FALSE },
	{ "[]-a]", "Standard", FALSE },
	{ "[]-a]", "ApiAnomalyEventStore", FALSE },
	{ "[]-a]", "bx", FALSE },
	{ "[]-a]", "x[", FALSE },
	{ "[]-a]", "a-", FALSE },
	{ "[!--a]", "", FALSE },
	{ "[!--a]", "a", FALSE },
	{ "[!--a]", "b", TRUE },
	{ "[!--a]", "abc", FALSE },
	{ "[!--a]", "ab", FALSE },
	{ "[!--a]", "x.log", FALSE },
	{ "[!--a]", "a/b", FALSE },
	{ "[!--a]", "/event/LoginEventStream", FALSE },
	{ "[!--a]", "*", TRUE },
	{ "[!--a]", "\\", FALSE },
	{ "[!--a]", "\303\251x", FALSE },
	{ "[!--a]", "\360\237\230\200", TRUE },
	{ "[!--a]", "^", FALSE },
	{ "[!--a]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[!--a]", "[", FALSE },
	{ "[!--a]", "]", FALSE },
	{ "[!--a]", "-", FALSE },
	{ "[!--a]", "d", TRUE },
	{ "[!--a]", "z", TRUE },
	{ "[!--a]", "[!]", FALSE },
	{ "[!--a]", "Login", FALSE },
	{ "[!--a]", "Standard", FALSE },
	{ "[!--a]", "ApiAnomalyEventStore", FALSE },
	{ "[!--a]", "bx", FALSE },
	{ "[!--a]", "x[", FALSE },
	{ "[!--a]", "a-", FALSE },
	{ "[a-a]", "", FALSE },
	{ "[a-a]", "a", TRUE },
	{ "[a-a]", "b", FALSE },
	{ "[a-a]", "abc", FALSE },
	{ "[a-a]", "ab", FALSE },
	{ "[a-a]", "x.log", FALSE },
	{ "[a-a]", "a/b", FALSE },
	{ "[a-a]", "/event/LoginEventStream", FALSE },
	{ "[a-a]", "*", FALSE },
	{ "[a-a]", "\\", FALSE },
	{ "[a-a]", "\303\251x", FALSE },
	{ "[a-a]", "\360\237\230\200", FALSE },
	{ "[a-a]", "^", FALSE },
	{ "[a-a]", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaac", FALSE },
	{ "[a-a]", "[", FALSE },
	{ "[a-a]", "]", FALSE },
	{ "[a-a]", "-", FALSE },
	{ "[a-a]", "d", FALSE },
	{ "[a-a]", "z", FALSE },
	{ "[a-a]", "[!]", FALSE },
	{ "[a-a]", "Login", FALSE },
	{ "[a-a]", "Standard", FALSE },
	{ "[a-a]", "ApiAnomalyEventStore", FALSE },
	{ "[a-a]", "bx", FALSE },
	{ "[a-a]", "x[", FALSE },
	{ "[a-a]", "a-", FALSE },
};

static void
test_fnmatch(void)
{
	for (gsize i = 0; i < G_N_ELEMENTS(glob_cases); i++) {
		gboolean got = sfl_fnmatch(glob_cases[i].pattern, glob_cases[i].name);
		if (got != glob_cases[i].match)
			g_error("fnmatch(%s, %s) = %d", glob_cases[i].name, glob_cases[i].pattern,
				got);
	}
}

/* --- categories and the overlap guard ------------------------------------------------------- */

static void
test_categories(void)
{
	static const struct {
		gchar *(*func)(const gchar *);
		const gchar *in;
		const gchar *out;
	} cases[] = {
		{ sfl_category_for_topic, "/event/LoginEventStream", "login" },
		{ sfl_category_for_topic, "/event/ApiAnomalyEvent", "apianomaly" },
		{ sfl_category_for_topic, "/data/AccountChangeEvent", "accountchange" },
		{ sfl_category_for_topic, "/event/Order_Shipped__e", "order_shipped__e" },
		{ sfl_category_for_topic, "/event/Event", "event" },
		{ sfl_category_for_topic, "/event/EventStream", "eventstream" },
		{ sfl_category_for_topic, "/event/LoginHistory", "login" },
		{ sfl_category_for_topic, "LoginEventStream", "login" },
		{ sfl_category_for_object, "LoginEvent", "login" },
		{ sfl_category_for_object, "LoginHistory", "login" },
		{ sfl_category_for_object, "ApiAnomalyEventStore", "apianomaly" },
		{ sfl_category_for_object, "ReportEventStreamEvent", "reporteventstream" },
		{ sfl_category_for_elf_type, "Login", "login" },
		{ sfl_category_for_elf_type, "API", "api" },
		{ sfl_category_for_elf_type, "LoginHistory", "login" },
		{ sfl_category_for_elf_type, "Lightning Page View", "lightningpageview" },
		{ sfl_category_for_elf_type, "LoginEvent", "loginevent" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *got = cases[i].func(cases[i].in);
		g_assert_cmpstr(got, ==, cases[i].out);
	}
}

typedef struct {
	SflSourcesConfig sources;
} Sources;

static void
sources_free(Sources *s)
{
	g_strfreev(s->sources.pubsub.topics);
	g_ptr_array_unref(s->sources.eventlog_objects.objects);
	g_ptr_array_unref(s->sources.eventlogfile.event_types);
	g_free(s);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Sources, sources_free)

/* "a,b" for each list; NULL disables that source */
static Sources *
sources_new(const gchar *topics, const gchar *objects, const gchar *elf_types)
{
	Sources *s = g_new0(Sources, 1);
	g_auto(GStrv) objs = g_strsplit(objects != NULL ? objects : "", ",", -1);
	g_auto(GStrv) types = g_strsplit(elf_types != NULL ? elf_types : "", ",", -1);

	s->sources.pubsub.enabled = topics != NULL;
	s->sources.pubsub.topics = g_strsplit(topics != NULL ? topics : "", ",", -1);
	s->sources.eventlog_objects.enabled = objects != NULL;
	s->sources.eventlog_objects.objects = g_ptr_array_new_with_free_func(g_free);
	s->sources.eventlogfile.enabled = elf_types != NULL;
	s->sources.eventlogfile.event_types = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; objs[i] != NULL; i++) {
		SflEventLogObjectConfig *o = g_new0(SflEventLogObjectConfig, 1);
		o->name = (gchar *)g_intern_string(objs[i]);
		g_ptr_array_add(s->sources.eventlog_objects.objects, o);
	}
	for (guint i = 0; types[i] != NULL; i++) {
		SflElfTypeConfig *t = g_new0(SflElfTypeConfig, 1);
		t->name = (gchar *)g_intern_string(types[i]);
		g_ptr_array_add(s->sources.eventlogfile.event_types, t);
	}
	return s;
}

static void
assert_overlap(const gchar *topics, const gchar *objects, const gchar *elf_types, const gchar *org,
	       const gchar *message)
{
	g_autoptr(Sources) s = sources_new(topics, objects, elf_types);
	g_autoptr(GError) error = NULL;
	gboolean ok = sfl_overlap_check(&s->sources, org, &error);

	if (message == NULL) {
		g_assert_no_error(error);
		g_assert_true(ok);
	} else {
		g_assert_false(ok);
		g_assert_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG);
		g_assert_cmpstr(error->message, ==, message);
		/* the operator's way out works */
		s->sources.allow_overlap = TRUE;
		g_assert_true(sfl_overlap_check(&s->sources, org, NULL));
	}
}

static void
test_overlap(void)
{
	assert_overlap("/event/LoginEventStream", NULL, "Login", NULL,
		       "sources overlap: category 'login' is claimed by pubsub topic "
		       "/event/LoginEventStream and eventlogfile type Login; set "
		       "sources.allow_overlap: true to allow it");
	assert_overlap("/event/LoginEventStream", NULL, "Login", "prod",
		       "org 'prod': sources overlap: category 'login' is claimed by pubsub topic "
		       "/event/LoginEventStream and eventlogfile type Login; set "
		       "sources.allow_overlap: true to allow it");
	assert_overlap("/event/LoginEventStream,/event/ApiAnomalyEvent,/event/LoginEvent",
		       "LoginHistory,ApiAnomalyEventStore,ReportEvent", "Login,API", "",
		       "sources overlap: category 'login' is claimed by pubsub topic "
		       "/event/LoginEventStream, pubsub topic /event/LoginEvent, eventlog_objects "
		       "object LoginHistory and eventlogfile type Login; category 'apianomaly' is "
		       "claimed by pubsub topic /event/ApiAnomalyEvent and eventlog_objects object "
		       "ApiAnomalyEventStore; set sources.allow_overlap: true to allow it");
	/* one source type may claim a category twice */
	assert_overlap("/event/LoginEventStream,/event/LoginEvent", NULL, "API", NULL, NULL);
	/* disabled sources and wildcards claim nothing at startup */
	assert_overlap(NULL, "LoginEvent", "Login,API", NULL,
		       "sources overlap: category 'login' is claimed by eventlog_objects object "
		       "LoginEvent and eventlogfile type Login; set sources.allow_overlap: true "
		       "to allow it");
	assert_overlap("/event/Login*,/event/?ogin,/event/[L]ogin", "ApiAnomalyEventStore",
		       "Login,*", NULL, NULL);
	assert_overlap("*", NULL, "Login", NULL, NULL);
	assert_overlap("*", "LoginEvent", NULL, NULL, NULL);
	/* SFL-0007: both wildcards cannot see each other */
	assert_overlap("*", NULL, "*", NULL,
		       "sources overlap: sources.pubsub.topics and "
		       "sources.eventlogfile.event_types both use \"*\", and neither discovery "
		       "can see the other's categories (SFL-0007); set sources.allow_overlap: "
		       "true to allow it");
	assert_overlap(NULL, NULL, NULL, NULL, NULL);
}

static void
test_overlap_runtime(void)
{
	g_autoptr(Sources) s =
		sources_new("/event/LoginEventStream,/event/Api*", "ApiAnomalyEventStore", "API,*");

	g_assert_true(sfl_overlap_elf_type_owned_elsewhere(&s->sources, "Login"));
	g_assert_true(sfl_overlap_elf_type_owned_elsewhere(&s->sources, "LoginHistory"));
	g_assert_true(sfl_overlap_elf_type_owned_elsewhere(&s->sources, "ApiAnomaly"));
	g_assert_false(sfl_overlap_elf_type_owned_elsewhere(&s->sources, "API"));
	g_assert_false(sfl_overlap_elf_type_owned_elsewhere(&s->sources, "Report"));

	g_assert_true(sfl_overlap_topic_owned_elsewhere(&s->sources, "/event/ApiEventStream"));
	g_assert_true(sfl_overlap_topic_owned_elsewhere(&s->sources, "/event/ApiAnomalyEvent"));
	g_assert_false(sfl_overlap_topic_owned_elsewhere(&s->sources, "/event/LoginEventStream"));
	g_assert_false(sfl_overlap_topic_owned_elsewhere(&s->sources, "/event/ReportEvent"));

	/* a disabled source owns nothing */
	s->sources.pubsub.enabled = FALSE;
	s->sources.eventlog_objects.enabled = FALSE;
	g_assert_false(sfl_overlap_elf_type_owned_elsewhere(&s->sources, "Login"));
	g_assert_false(sfl_overlap_elf_type_owned_elsewhere(&s->sources, "ApiAnomaly"));
}

/* --- the promoted-label cardinality guard (SFL-0034) ----------------------------------------- */

/* the guard's warning is part of its contract; the build logs structured, so it is recorded
 * here (g_test_expect_message() does not see structured messages) */
static GPtrArray *test_warnings; /* (element-type utf8) */

static GLogWriterOutput
test_shape_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer user_data)
{
	if ((level & G_LOG_LEVEL_WARNING) && test_warnings != NULL) {
		for (gsize i = 0; i < n_fields; i++) {
			if (g_str_equal(fields[i].key, "MESSAGE")) {
				g_ptr_array_add(test_warnings, g_strdup(fields[i].value));
				return G_LOG_WRITER_HANDLED;
			}
		}
	}
	return g_log_writer_default(level, fields, n_fields, user_data);
}

static guint
warnings_naming(const gchar *needle)
{
	guint n = 0;

	for (guint i = 0; i < test_warnings->len; i++)
		n += strstr(test_warnings->pdata[i], needle) != NULL;
	return n;
}

static gdouble
guard_metric(SflMetrics *metrics, gboolean folded, const gchar *label)
{
	const gchar *names[] = { "label", NULL };
	const gchar *values[] = { label, NULL };

	return sfl_series_get(sfl_metric_family_series(
		folded ? sfl_metrics_counter(metrics, "sf2loki_label_values_folded", "", names)
		       : sfl_metrics_gauge(metrics, "sf2loki_label_values", "", names),
		values));
}

#define HOUR_USEC (G_GINT64_CONSTANT(3600) * G_USEC_PER_SEC)

/* N admitted, the N+1-th folded and counted; admitted values stay admitted; labels apart */
static void
test_label_guard_fold(void)
{
	g_autoptr(SflClock) clock =
		sfl_fake_clock_new(G_GINT64_CONSTANT(1700000000) * G_USEC_PER_SEC);
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflLabelGuard) guard = sfl_label_guard_new(3, HOUR_USEC, clock, metrics);
	g_autofree gchar *text = NULL;

	g_ptr_array_set_size(test_warnings, 0);
	g_assert_cmpstr(sfl_label_guard_admit(guard, "USER_TYPE", "Standard"), ==, "Standard");
	g_assert_cmpstr(sfl_label_guard_admit(guard, "USER_TYPE", "Automated"), ==, "Automated");
	g_assert_cmpstr(sfl_label_guard_admit(guard, "USER_TYPE", "Guest"), ==, "Guest");
	g_assert_cmpfloat(guard_metric(metrics, TRUE, "USER_TYPE"), ==, 0);
	g_assert_cmpuint(test_warnings->len, ==, 0);
	/* the fourth distinct value */
	g_assert_cmpstr(sfl_label_guard_admit(guard, "USER_TYPE", "PowerPartner"), ==,
			SFL_LABEL_OTHER);
	g_assert_cmpfloat(guard_metric(metrics, TRUE, "USER_TYPE"), ==, 1);
	g_assert_cmpfloat(guard_metric(metrics, FALSE, "USER_TYPE"), ==, 3);
	/* an admitted value keeps its label, a folded one stays folded */
	g_assert_cmpstr(sfl_label_guard_admit(guard, "USER_TYPE", "Automated"), ==, "Automated");
	g_assert_cmpstr(sfl_label_guard_admit(guard, "USER_TYPE", "PowerPartner"), ==,
			SFL_LABEL_OTHER);
	g_assert_cmpstr(sfl_label_guard_admit(guard, "USER_TYPE", "CspLitePortal"), ==,
			SFL_LABEL_OTHER);
	g_assert_cmpfloat(guard_metric(metrics, TRUE, "USER_TYPE"), ==, 3);
	/* one warning for the label in this window, naming it and not the values */
	g_assert_cmpuint(test_warnings->len, ==, 1);
	g_assert_cmpuint(warnings_naming("label USER_TYPE "), ==, 1);
	g_assert_cmpuint(warnings_naming("PowerPartner"), ==, 0);
	/* another label has its own budget */
	g_assert_cmpstr(sfl_label_guard_admit(guard, "CLIENT_NAME", "x"), ==, "x");
	g_assert_cmpfloat(guard_metric(metrics, TRUE, "CLIENT_NAME"), ==, 0);

	text = sfl_metrics_render_prometheus(metrics);
	g_assert_nonnull(
		strstr(text, "\nsf2loki_label_values_folded_total{label=\"USER_TYPE\"} 3\n"));
	g_assert_nonnull(strstr(text, "\nsf2loki_label_values{label=\"USER_TYPE\"} 3\n"));
	g_assert_nonnull(strstr(text, "\nsf2loki_label_values{label=\"CLIENT_NAME\"} 1\n"));
}

/* the window ends: values start afresh, a folded value is admitted again, the warning repeats */
static void
test_label_guard_window(void)
{
	g_autoptr(SflClock) clock =
		sfl_fake_clock_new(G_GINT64_CONSTANT(1700000000) * G_USEC_PER_SEC);
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflLabelGuard) guard = sfl_label_guard_new(2, HOUR_USEC, clock, metrics);

	g_ptr_array_set_size(test_warnings, 0);
	g_assert_cmpstr(sfl_label_guard_admit(guard, "L", "a"), ==, "a");
	g_assert_cmpstr(sfl_label_guard_admit(guard, "L", "b"), ==, "b");
	g_assert_cmpstr(sfl_label_guard_admit(guard, "L", "c"), ==, SFL_LABEL_OTHER);
	/* still the same window one microsecond before its end */
	sfl_fake_clock_advance(clock, HOUR_USEC - 1);
	g_assert_cmpstr(sfl_label_guard_admit(guard, "L", "c"), ==, SFL_LABEL_OTHER);
	g_assert_cmpuint(warnings_naming("label L "), ==, 1);
	sfl_fake_clock_advance(clock, 1);
	/* a new window: the first two distinct values of it are the admitted ones */
	g_assert_cmpstr(sfl_label_guard_admit(guard, "L", "c"), ==, "c");
	g_assert_cmpfloat(guard_metric(metrics, FALSE, "L"), ==, 1);
	g_assert_cmpstr(sfl_label_guard_admit(guard, "L", "a"), ==, "a");
	g_assert_cmpstr(sfl_label_guard_admit(guard, "L", "b"), ==, SFL_LABEL_OTHER);
	g_assert_cmpfloat(guard_metric(metrics, TRUE, "L"), ==, 3);
	g_assert_cmpuint(warnings_naming("label L "), ==, 2);
}

/* max_values 0, or no guard at all: every value passes, nothing is recorded */
static void
test_label_guard_off(void)
{
	g_autoptr(SflClock) clock = sfl_fake_clock_new(0);
	g_autoptr(SflMetrics) metrics = sfl_metrics_new();
	g_autoptr(SflLabelGuard) guard = sfl_label_guard_new(0, HOUR_USEC, clock, metrics);
	g_autofree gchar *text = NULL;

	for (guint i = 0; i < 500; i++) {
		g_autofree gchar *v = g_strdup_printf("v%u", i);
		g_assert_cmpstr(sfl_label_guard_admit(guard, "L", v), ==, v);
		g_assert_cmpstr(sfl_label_guard_admit(NULL, "L", v), ==, v);
	}
	text = sfl_metrics_render_prometheus(metrics);
	g_assert_null(strstr(text, "sf2loki_label_values"));
}

int
main(int argc, char **argv)
{
	g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);

	test_warnings = warnings;
	g_log_set_writer_func(test_shape_writer, NULL, NULL);
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/shape/transform/hash", test_transform_hash);
	g_test_add_func("/shape/transform/hash-typed", test_transform_hash_typed);
	g_test_add_func("/shape/transform/mask", test_transform_mask);
	g_test_add_func("/shape/transform/drop-field", test_transform_drop_field);
	g_test_add_func("/shape/transform/regex", test_transform_regex);
	g_test_add_func("/shape/transform/regex-typed", test_transform_regex_typed);
	g_test_add_func("/shape/transform/errors", test_transform_errors);
	g_test_add_func("/shape/transform/drop-row", test_transform_drop_row);
	g_test_add_func("/shape/transform/drop-row-missing", test_transform_drop_row_missing);
	g_test_add_func("/shape/transform/none", test_transform_none);
	g_test_add_func("/shape/sample", test_sample);
	g_test_add_func("/shape/timestamp/iso", test_timestamp_iso);
	g_test_add_func("/shape/timestamp/text", test_timestamp_text);
	g_test_add_func("/shape/timestamp/field", test_timestamp_field);
	g_test_add_func("/shape/timestamp/fallback", test_timestamp_fallback);
	g_test_add_func("/shape/timestamp/format", test_timestamp_format);
	g_test_add_func("/shape/level", test_level);
	g_test_add_func("/shape/level-typed", test_level_typed);
	g_test_add_func("/shape/metadata", test_metadata);
	g_test_add_func("/shape/fnmatch", test_fnmatch);
	g_test_add_func("/shape/categories", test_categories);
	g_test_add_func("/shape/overlap", test_overlap);
	g_test_add_func("/shape/overlap-runtime", test_overlap_runtime);
	g_test_add_func("/shape/label-guard/fold", test_label_guard_fold);
	g_test_add_func("/shape/label-guard/window", test_label_guard_window);
	g_test_add_func("/shape/label-guard/off", test_label_guard_off);
	return g_test_run();
}
