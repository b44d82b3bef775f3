/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflRedact"

#include "config.h"

#include "sfl-redact.h"

#include <string.h>

/*
 * this module must never log: the log writer calls it for every line, so a message from here
 * would re-enter the writer while the regex g_once or the secrets mutex is held.
 */

/*
 * a key is secret when its name ends in one of these, so "client_secret", "access_token" and
 * "auth_token" match while "token_ttl" does not; authorization has its own rule because its
 * value carries a scheme worth keeping
 */
/* clang-format off */
static const gchar *const sfl_redact_secret_words[] = {
	"password", "passwd", "passphrase",
	"secret",
	"token",
	"api_key", "api-key", "apikey",
	"assertion",
	"private_key", "private-key", "privatekey",
	NULL,
};
/* clang-format on */

#define SFL_REDACT_AUTHORIZATION "authorization"

/* secrets shorter than this would mask ordinary words and numbers everywhere */
#define SFL_REDACT_SECRET_MIN_LEN 4

/* a key starts where no identifier character precedes it, so "xtoken" is not split up */
#define SFL_REDACT_KEY_START "(?<![A-Za-z0-9_.-])"

/*
 * ASCII white space, for use inside a character class. Not \s: GLib turns on Unicode
 * properties even for raw patterns, so \s also takes the bytes 0x85 and 0xa0, which are
 * continuation bytes in UTF-8 (U+00E0 is c3 a0, U+4F60 e4 bd a0). A value would end inside a
 * character, leaving the rest of the value unmasked and the text invalid UTF-8.
 */
#define SFL_REDACT_SPACE "\\t\\n\\x0b\\f\\r "

/*
 * json-escaped strings (\"...\") appear when a JSON body is itself logged inside JSON; an
 * unterminated quote masks to the end of the line because a truncated value is still secret
 */
#define SFL_REDACT_QUOTED_VALUE                                                                    \
	"\\\\\"(?<eq>.*?)\\\\\""                                                                   \
	"|\"(?<dq>(?:[^\"\\\\]++|\\\\.)*+)\""                                                      \
	"|'(?<sq>[^']*+)'"                                                                         \
	"|(?<oq>\\\\?[\"'])(?<uq>[^\\r\\n]*+)"

/* the groups that may hold a value, in the order the alternatives above try them */
static const gchar *const sfl_redact_value_groups[] = { "eq", "dq", "sq", "uq", "bare", NULL };

typedef struct {
	gboolean ok;
	GRegex *pem;
	GRegex *userinfo;
	GRegex *scheme;
	GRegex *authorization;
	GRegex *keyvalue;
} SflRedactRegexes;

static GMutex sfl_redact_mutex;
static GPtrArray *sfl_redact_secrets = NULL; /* (element-type utf8): longest first */

/* returns TRUE when it appended the replacement for the whole match to @out */
typedef gboolean (*SflRedactRewriteFunc)(const gchar *text, const GMatchInfo *match, GString *out);

static GRegex *
sfl_redact_regex_new(const gchar *pattern, GRegexCompileFlags extra)
{
	/* raw bytes: log text may be invalid UTF-8 and every pattern here is ASCII */
	return g_regex_new(pattern, G_REGEX_RAW | G_REGEX_OPTIMIZE | extra, 0, NULL);
}

static gchar *
sfl_redact_keyvalue_pattern(void)
{
	g_autoptr(GString) words = g_string_new(NULL);

	for (guint i = 0; sfl_redact_secret_words[i] != NULL; i++) {
		g_autofree gchar *escaped = g_regex_escape_string(sfl_redact_secret_words[i], -1);
		if (words->len > 0)
			g_string_append_c(words, '|');
		g_string_append(words, escaped);
	}
	return g_strdup_printf(SFL_REDACT_KEY_START
			       "(?<key>[A-Za-z0-9_.-]*?(?<word>%s))(?<kq>\\\\?[\"'])?[ \\t]*"
			       "(?<sep>[:=])[ \\t]*(?:" SFL_REDACT_QUOTED_VALUE
			       "|(?<bare>[^" SFL_REDACT_SPACE "&,;\"'}=][^" SFL_REDACT_SPACE
			       "&,;\"'}]*+))",
			       words->str);
}

static const SflRedactRegexes *
sfl_redact_regexes(void)
{
	static gsize once = 0;
	static SflRedactRegexes regexes = { 0 };

	if (g_once_init_enter(&once)) {
		g_autofree gchar *keyvalue = sfl_redact_keyvalue_pattern();

		/* the label is kept so the reader still knows what kind of key was there */
		regexes.pem =
			sfl_redact_regex_new("-----BEGIN (?<label>[A-Z0-9 ]*?)PRIVATE KEY-----"
					     ".*?(?:-----END [A-Z0-9 ]*?PRIVATE KEY-----|\\z)",
					     G_REGEX_DOTALL);
		/* greedy up to the last '@' of the authority, as passwords may hold a raw '@' */
		regexes.userinfo = sfl_redact_regex_new(
			"(?<![A-Za-z0-9+.-])(?<scheme>[A-Za-z][A-Za-z0-9+.-]*://)"
			"(?<info>[^/?#" SFL_REDACT_SPACE "\"'<>\\\\]+)@",
			0);
		/* salesforce access tokens contain '!', so the token runs to a delimiter */
		regexes.scheme = sfl_redact_regex_new(
			"(?<![A-Za-z0-9_-])(?:bearer|basic)[ \\t]+(?<token>[^" SFL_REDACT_SPACE
			"\"'\\\\<>,;]+)",
			G_REGEX_CASELESS);
		/* an unquoted header value runs to the end of the line, whatever its scheme */
		regexes.authorization = sfl_redact_regex_new(
			SFL_REDACT_KEY_START
			"(?:proxy-)?" SFL_REDACT_AUTHORIZATION
			"(?:\\\\?[\"'])?[ \\t]*[:=][ \\t]*(?:" SFL_REDACT_QUOTED_VALUE
			"|(?<bare>[^\\r\\n]+))",
			G_REGEX_CASELESS);
		regexes.keyvalue = sfl_redact_regex_new(keyvalue, G_REGEX_CASELESS);
		regexes.ok = regexes.pem != NULL && regexes.userinfo != NULL &&
			     regexes.scheme != NULL && regexes.authorization != NULL &&
			     regexes.keyvalue != NULL;
		g_once_init_leave(&once, 1);
	}
	return &regexes;
}

static gchar *
sfl_redact_rewrite(const GRegex *regex, const gchar *text, SflRedactRewriteFunc func)
{
	g_autoptr(GString) out = g_string_new(NULL);
	gsize len = strlen(text);
	gsize copied = 0;
	gsize pos = 0;

	while (pos < len) {
		g_autoptr(GMatchInfo) match = NULL;
		gint start = -1;
		gint end = -1;

		if (!g_regex_match_full(regex, text, len, pos, 0, &match, NULL))
			break;
		if (!g_match_info_fetch_pos(match, 0, &start, &end) || start < 0)
			break;
		g_string_append_len(out, text + copied, start - copied);
		copied = start;
		if (end > start && func(text, match, out)) {
			copied = end;
			pos = end;
		} else {
			/* not a secret after all: look again from the next byte */
			pos = start + 1;
		}
	}
	g_string_append_len(out, text + copied, len - copied);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

static gboolean
sfl_redact_group_pos(const GMatchInfo *match, const gchar *name, gint *start, gint *end)
{
	*start = -1;
	*end = -1;
	return g_match_info_fetch_named_pos(match, name, start, end) && *start >= 0;
}

static gboolean
sfl_redact_value_pos(const GMatchInfo *match, gint *start, gint *end)
{
	for (guint i = 0; sfl_redact_value_groups[i] != NULL; i++) {
		if (sfl_redact_group_pos(match, sfl_redact_value_groups[i], start, end))
			return TRUE;
	}
	return FALSE;
}

/* replaces text[start, end) inside the match, keeping whatever surrounds it */
static void
sfl_redact_mask_span(const gchar *text, const GMatchInfo *match, gint start, gint end, GString *out)
{
	gint match_start = -1;
	gint match_end = -1;

	g_match_info_fetch_pos(match, 0, &match_start, &match_end);
	g_string_append_len(out, text + match_start, start - match_start);
	g_string_append(out, SFL_REDACTED);
	g_string_append_len(out, text + end, match_end - end);
}

static gboolean
sfl_redact_rewrite_pem(const gchar *text, const GMatchInfo *match, GString *out)
{
	g_autofree gchar *label = g_match_info_fetch_named(match, "label");
	const gchar *kind = label != NULL ? label : "";

	g_string_append_printf(
		out, "-----BEGIN %sPRIVATE KEY-----" SFL_REDACTED "-----END %sPRIVATE KEY-----",
		kind, kind);
	return TRUE;
}

static gboolean
sfl_redact_rewrite_userinfo(const gchar *text, const GMatchInfo *match, GString *out)
{
	g_autofree gchar *scheme = g_match_info_fetch_named(match, "scheme");
	g_autofree gchar *info = g_match_info_fetch_named(match, "info");
	const gchar *colon = NULL;

	if (scheme == NULL || info == NULL)
		return FALSE;
	g_string_append(out, scheme);
	/* the user name helps debugging and is not a credential on its own */
	colon = strchr(info, ':');
	if (colon != NULL)
		g_string_append_len(out, info, colon - info + 1);
	g_string_append(out, SFL_REDACTED "@");
	return TRUE;
}

static gboolean
sfl_redact_rewrite_scheme(const gchar *text, const GMatchInfo *match, GString *out)
{
	gint start = -1;
	gint end = -1;

	if (!sfl_redact_group_pos(match, "token", &start, &end))
		return FALSE;
	sfl_redact_mask_span(text, match, start, end, out);
	return TRUE;
}

static gboolean
sfl_redact_is_token_char(gchar c)
{
	return g_ascii_isalnum(c) || strchr("-._~+/", c) != NULL;
}

/* length of a leading "Scheme " that is followed by credentials, or 0 */
static gint
sfl_redact_scheme_len(const gchar *value, gint len)
{
	gint i = 0;
	gint j = 0;

	if (len == 0 || !g_ascii_isalpha(value[0]))
		return 0;
	while (i < len && value[i] != '\0' && sfl_redact_is_token_char(value[i]))
		i++;
	j = i;
	while (j < len && (value[j] == ' ' || value[j] == '\t'))
		j++;
	if (j == i || j >= len)
		return 0;
	return j;
}

static gboolean
sfl_redact_is_blank(const gchar *text, gint start, gint end)
{
	for (gint i = start; i < end; i++) {
		if (!g_ascii_isspace(text[i]))
			return FALSE;
	}
	return TRUE;
}

static gboolean
sfl_redact_rewrite_authorization(const gchar *text, const GMatchInfo *match, GString *out)
{
	gint start = -1;
	gint end = -1;

	if (!sfl_redact_value_pos(match, &start, &end) || sfl_redact_is_blank(text, start, end))
		return FALSE;
	/* keep the scheme so operators can still tell which kind of credential was sent */
	start += sfl_redact_scheme_len(text + start, end - start);
	sfl_redact_mask_span(text, match, start, end, out);
	return TRUE;
}

/* YAML keys sit at the start of a line, after indentation, a list dash or a flow bracket */
static gboolean
sfl_redact_at_line_start(const gchar *text, gint pos)
{
	while (pos > 0 && (text[pos - 1] == ' ' || text[pos - 1] == '\t'))
		pos--;
	if (pos > 0 && text[pos - 1] == '-') {
		pos--;
		while (pos > 0 && (text[pos - 1] == ' ' || text[pos - 1] == '\t'))
			pos--;
	}
	return pos == 0 || strchr("\n\r{[,", text[pos - 1]) != NULL;
}

static gboolean
sfl_redact_rewrite_keyvalue(const gchar *text, const GMatchInfo *match, GString *out)
{
	gint key_start = -1;
	gint key_end = -1;
	gint word_start = -1;
	gint word_end = -1;
	gint sep_start = -1;
	gint sep_end = -1;
	gint kq_start = -1;
	gint kq_end = -1;
	gint start = -1;
	gint end = -1;
	gboolean quoted = FALSE;

	if (!sfl_redact_group_pos(match, "key", &key_start, &key_end) ||
	    !sfl_redact_group_pos(match, "word", &word_start, &word_end) ||
	    !sfl_redact_group_pos(match, "sep", &sep_start, &sep_end) ||
	    !sfl_redact_value_pos(match, &start, &end))
		return FALSE;
	quoted = sfl_redact_group_pos(match, "kq", &kq_start, &kq_end) ||
		 (key_start > 0 && strchr("\"'", text[key_start - 1]) != NULL);

	/*
	 * "failed to refresh token: HTTP 401" is prose, not a mapping: a bare secret word
	 * followed by ':' only counts as a key where a YAML key could start
	 */
	if (text[sep_start] == ':' && !quoted && key_start == word_start &&
	    !sfl_redact_at_line_start(text, key_start))
		return FALSE;

	/* an empty value hides nothing and tells the operator the setting is unset */
	if (start == end) {
		gint match_start = -1;
		gint match_end = -1;

		g_match_info_fetch_pos(match, 0, &match_start, &match_end);
		g_string_append_len(out, text + match_start, match_end - match_start);
		return TRUE;
	}
	sfl_redact_mask_span(text, match, start, end, out);
	return TRUE;
}

static gchar *
sfl_redact_registered(const gchar *text)
{
	g_autoptr(GString) out = g_string_new(text);

	g_mutex_lock(&sfl_redact_mutex);
	/* the array is sorted longest first, so a secret containing another goes whole */
	for (guint i = 0; sfl_redact_secrets != NULL && i < sfl_redact_secrets->len; i++)
		g_string_replace(out, g_ptr_array_index(sfl_redact_secrets, i), SFL_REDACTED, 0);
	g_mutex_unlock(&sfl_redact_mutex);
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/**
 * sfl_redact:
 * @text: (nullable): text that may contain credentials
 *
 * Masks registered secrets, PEM private keys, URL passwords, Bearer/Basic credentials,
 * Authorization headers and the values of secret-looking keys in key=value, JSON and YAML
 * forms. The rules err on the side of masking too much.
 *
 * Returns: (transfer full) (nullable): the masked copy, or %NULL for %NULL
 */
gchar *
sfl_redact(const gchar *text)
{
	const SflRedactRegexes *regexes = NULL;
	g_autofree gchar *registered = NULL;
	g_autofree gchar *pem = NULL;
	g_autofree gchar *userinfo = NULL;
	g_autofree gchar *scheme = NULL;
	g_autofree gchar *authorization = NULL;

	if (text == NULL)
		return NULL;
	regexes = sfl_redact_regexes();
	/* fail closed: without the rules nothing about the text can be trusted */
	if (!regexes->ok)
		return g_strdup(SFL_REDACTED);

	/* registered values go first, before any rule can split them */
	registered = sfl_redact_registered(text);
	pem = sfl_redact_rewrite(regexes->pem, registered, sfl_redact_rewrite_pem);
	userinfo = sfl_redact_rewrite(regexes->userinfo, pem, sfl_redact_rewrite_userinfo);
	scheme = sfl_redact_rewrite(regexes->scheme, userinfo, sfl_redact_rewrite_scheme);
	authorization = sfl_redact_rewrite(regexes->authorization, scheme,
					   sfl_redact_rewrite_authorization);
	return sfl_redact_rewrite(regexes->keyvalue, authorization, sfl_redact_rewrite_keyvalue);
}

/**
 * sfl_redact_key_is_secret:
 * @key: a field or setting name, any case
 *
 * Uses the same names as the key=value rule, for callers that hold the key and the value
 * apart, such as structured log fields.
 *
 * Returns: %TRUE if a value stored under @key must never be shown
 */
gboolean
sfl_redact_key_is_secret(const gchar *key)
{
	g_autofree gchar *lower = NULL;

	g_return_val_if_fail(key != NULL, FALSE);

	lower = g_ascii_strdown(key, -1);
	for (guint i = 0; sfl_redact_secret_words[i] != NULL; i++) {
		if (g_str_has_suffix(lower, sfl_redact_secret_words[i]))
			return TRUE;
	}
	return g_str_has_suffix(lower, SFL_REDACT_AUTHORIZATION);
}

static gint
sfl_redact_secret_cmp(gconstpointer a, gconstpointer b)
{
	gsize len_a = strlen(*(const gchar *const *)a);
	gsize len_b = strlen(*(const gchar *const *)b);

	if (len_a == len_b)
		return 0;
	return len_a > len_b ? -1 : 1;
}

/**
 * sfl_redact_add_secret:
 * @secret: (nullable): a literal credential, e.g. a minted access token
 *
 * Every later sfl_redact() replaces each occurrence of @secret. Values shorter than four bytes
 * are ignored because masking them would shred ordinary text.
 */
void
sfl_redact_add_secret(const gchar *secret)
{
	if (secret == NULL || strlen(secret) < SFL_REDACT_SECRET_MIN_LEN)
		return;
	g_mutex_lock(&sfl_redact_mutex);
	if (sfl_redact_secrets == NULL)
		sfl_redact_secrets = g_ptr_array_new_with_free_func(g_free);
	if (!g_ptr_array_find_with_equal_func(sfl_redact_secrets, secret, g_str_equal, NULL)) {
		g_ptr_array_add(sfl_redact_secrets, g_strdup(secret));
		g_ptr_array_sort(sfl_redact_secrets, sfl_redact_secret_cmp);
	}
	g_mutex_unlock(&sfl_redact_mutex);
}

/**
 * sfl_redact_clear_secrets:
 *
 * Forgets every registered secret; meant for tests.
 */
void
sfl_redact_clear_secrets(void)
{
	g_mutex_lock(&sfl_redact_mutex);
	g_clear_pointer(&sfl_redact_secrets, g_ptr_array_unref);
	g_mutex_unlock(&sfl_redact_mutex);
}
