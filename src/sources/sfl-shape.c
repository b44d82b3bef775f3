/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflShape"

#include "config.h"

#include "sfl-shape.h"

#include <math.h>
#include <string.h>

#include "sfl-error.h"

/* ============================================================================================
 * globbing: Python fnmatch.fnmatchcase
 * ========================================================================================== */

typedef enum {
	SFL_GLOB_LITERAL,
	SFL_GLOB_ANY,	/* ? or a bracket that matches every character */
	SFL_GLOB_NEVER, /* a bracket that matches nothing */
	SFL_GLOB_SET,
	SFL_GLOB_STAR,
} SflGlobKind;

typedef struct {
	SflGlobKind kind;
	gunichar c;	   /* LITERAL */
	gboolean negate;   /* SET */
	guint first_range; /* SET: index into ranges */
	guint n_ranges;
} SflGlobElem;

typedef struct {
	GArray *elems;	/* SflGlobElem */
	GArray *ranges; /* gunichar pairs: lo, hi */
} SflGlob;

static void
sfl_glob_free(SflGlob *self)
{
	if (self == NULL)
		return;
	g_array_unref(self->elems);
	g_array_unref(self->ranges);
	g_free(self);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflGlob, sfl_glob_free)

/* a bracket character: a literal, or the '-' that joins two chunks into a range */
typedef struct {
	gunichar c;
	gboolean range;
} SflGlobTok;

static void
sfl_glob_push(SflGlob *self, SflGlobKind kind, gunichar c)
{
	SflGlobElem elem = { kind, c, FALSE, 0, 0 };
	g_array_append_val(self->elems, elem);
}

/*
 * One bracket expression, built the way fnmatch.translate() builds its regex set: chunks
 * split at the range hyphens, reversed ranges dropped with their ends, everything else a
 * literal; then read back as sre would read the set.
 */
static void
sfl_glob_add_bracket(SflGlob *self, const gunichar *pat, gsize i, gsize j)
{
	g_autoptr(GArray) toks = g_array_new(FALSE, FALSE, sizeof(SflGlobTok));
	SflGlobElem elem = { SFL_GLOB_SET, 0, FALSE, self->ranges->len, 0 };
	gboolean has_hyphen = FALSE;
	guint t = 0;

	for (gsize k = i; k < j; k++)
		has_hyphen |= pat[k] == '-';

	if (!has_hyphen) {
		for (gsize k = i; k < j; k++) {
			SflGlobTok tok = { pat[k], FALSE };
			g_array_append_val(toks, tok);
		}
	} else {
		g_autoptr(GPtrArray) chunks = g_ptr_array_new_with_free_func(
			(GDestroyNotify)g_array_unref); /* GArray of gunichar */
		gsize k = pat[i] == '!' ? i + 2 : i + 1;
		gsize start = i;

		for (;;) {
			gsize f = k;
			GArray *chunk;
			while (f < j && pat[f] != '-')
				f++;
			if (k >= j || f >= j)
				break;
			chunk = g_array_new(FALSE, FALSE, sizeof(gunichar));
			g_array_append_vals(chunk, pat + start, (guint)(f - start));
			g_ptr_array_add(chunks, chunk);
			start = f + 1;
			k = f + 3;
		}
		if (start < j) {
			GArray *chunk = g_array_new(FALSE, FALSE, sizeof(gunichar));
			g_array_append_vals(chunk, pat + start, (guint)(j - start));
			g_ptr_array_add(chunks, chunk);
		} else if (chunks->len > 0) {
			gunichar hyphen = '-';
			g_array_append_val((GArray *)g_ptr_array_index(chunks, chunks->len - 1),
					   hyphen);
		}
		for (guint c = chunks->len; c > 1; c--) {
			GArray *prev = g_ptr_array_index(chunks, c - 2);
			GArray *cur = g_ptr_array_index(chunks, c - 1);
			if (prev->len == 0 || cur->len == 0)
				continue;
			if (g_array_index(prev, gunichar, prev->len - 1) >
			    g_array_index(cur, gunichar, 0)) {
				g_array_set_size(prev, prev->len - 1);
				g_array_append_vals(prev, &g_array_index(cur, gunichar, 1),
						    cur->len - 1);
				g_ptr_array_remove_index(chunks, c - 1);
			}
		}
		for (guint c = 0; c < chunks->len; c++) {
			GArray *chunk = g_ptr_array_index(chunks, c);
			if (c > 0) {
				SflGlobTok tok = { '-', TRUE };
				g_array_append_val(toks, tok);
			}
			for (guint m = 0; m < chunk->len; m++) {
				SflGlobTok tok = { g_array_index(chunk, gunichar, m), FALSE };
				g_array_append_val(toks, tok);
			}
		}
	}

	if (toks->len == 0) {
		sfl_glob_push(self, SFL_GLOB_NEVER, 0);
		return;
	}
	if (toks->len == 1 && g_array_index(toks, SflGlobTok, 0).c == '!' &&
	    !g_array_index(toks, SflGlobTok, 0).range) {
		sfl_glob_push(self, SFL_GLOB_ANY, 0);
		return;
	}
	if (g_array_index(toks, SflGlobTok, 0).c == '!' &&
	    !g_array_index(toks, SflGlobTok, 0).range) {
		elem.negate = TRUE;
		t = 1;
	}
	while (t < toks->len) {
		SflGlobTok *tok = &g_array_index(toks, SflGlobTok, t);
		gunichar lo = tok->c;
		gunichar hi = tok->c;

		if (!tok->range && t + 2 < toks->len &&
		    g_array_index(toks, SflGlobTok, t + 1).range) {
			hi = g_array_index(toks, SflGlobTok, t + 2).c;
			t += 3;
			if (lo > hi) {
				/* re.compile refuses it, so fnmatch never matches */
				sfl_glob_push(self, SFL_GLOB_NEVER, 0);
				self->ranges->len = elem.first_range;
				return;
			}
		} else {
			t++;
		}
		g_array_append_val(self->ranges, lo);
		g_array_append_val(self->ranges, hi);
		elem.n_ranges++;
	}
	g_array_append_val(self->elems, elem);
}

static SflGlob *
sfl_glob_compile(const gchar *pattern)
{
	g_autoptr(SflGlob) self = g_new0(SflGlob, 1);
	g_autofree gunichar *pat = NULL;
	glong n = 0;
	gsize i = 0;

	self->elems = g_array_new(FALSE, FALSE, sizeof(SflGlobElem));
	self->ranges = g_array_new(FALSE, FALSE, sizeof(gunichar));
	pat = g_utf8_to_ucs4_fast(pattern, -1, &n);

	while (i < (gsize)n) {
		gunichar c = pat[i++];
		if (c == '*') {
			if (self->elems->len == 0 ||
			    g_array_index(self->elems, SflGlobElem, self->elems->len - 1).kind !=
				    SFL_GLOB_STAR)
				sfl_glob_push(self, SFL_GLOB_STAR, 0);
		} else if (c == '?') {
			sfl_glob_push(self, SFL_GLOB_ANY, 0);
		} else if (c == '[') {
			gsize j = i;
			if (j < (gsize)n && pat[j] == '!')
				j++;
			if (j < (gsize)n && pat[j] == ']')
				j++;
			while (j < (gsize)n && pat[j] != ']')
				j++;
			if (j >= (gsize)n) {
				sfl_glob_push(self, SFL_GLOB_LITERAL, '[');
			} else {
				sfl_glob_add_bracket(self, pat, i, j);
				i = j + 1;
			}
		} else {
			sfl_glob_push(self, SFL_GLOB_LITERAL, c);
		}
	}
	return g_steal_pointer(&self);
}

static gboolean
sfl_glob_elem_matches(const SflGlob *self, const SflGlobElem *elem, gunichar c)
{
	gboolean in = FALSE;

	switch (elem->kind) {
	case SFL_GLOB_LITERAL:
		return elem->c == c;
	case SFL_GLOB_ANY:
		return TRUE;
	case SFL_GLOB_SET:
		for (guint r = 0; r < elem->n_ranges && !in; r++) {
			gunichar lo =
				g_array_index(self->ranges, gunichar, elem->first_range + 2 * r);
			gunichar hi = g_array_index(self->ranges, gunichar,
						    elem->first_range + 2 * r + 1);
			in = c >= lo && c <= hi;
		}
		return in != elem->negate;
	case SFL_GLOB_NEVER:
	case SFL_GLOB_STAR:
	default:
		return FALSE;
	}
}

/* every element but the star takes exactly one character, so one backtrack point suffices */
static gboolean
sfl_glob_match(const SflGlob *self, const gchar *name)
{
	g_autofree gunichar *text = NULL;
	glong n = 0;
	guint p = 0;
	glong s = 0;
	guint star_p = G_MAXUINT;
	glong star_s = 0;
	guint n_elems = self->elems->len;

	if (g_utf8_validate(name, -1, NULL))
		text = g_utf8_to_ucs4_fast(name, -1, &n);
	else {
		g_autofree gchar *valid = g_utf8_make_valid(name, -1);
		text = g_utf8_to_ucs4_fast(valid, -1, &n);
	}

	while (s < n) {
		if (p < n_elems) {
			const SflGlobElem *elem = &g_array_index(self->elems, SflGlobElem, p);
			if (elem->kind == SFL_GLOB_STAR) {
				star_p = ++p;
				star_s = s;
				continue;
			}
			if (sfl_glob_elem_matches(self, elem, text[s])) {
				p++;
				s++;
				continue;
			}
		}
		if (star_p == G_MAXUINT)
			return FALSE;
		p = star_p;
		s = ++star_s;
	}
	while (p < n_elems && g_array_index(self->elems, SflGlobElem, p).kind == SFL_GLOB_STAR)
		p++;
	return p == n_elems;
}

/**
 * sfl_fnmatch:
 * @pattern: a glob
 * @name: the text to test
 *
 * Returns: whether @name matches @pattern as fnmatch.fnmatchcase() decides
 */
gboolean
sfl_fnmatch(const gchar *pattern, const gchar *name)
{
	g_autoptr(SflGlob) glob = NULL;

	g_return_val_if_fail(pattern != NULL && name != NULL, FALSE);
	if (strcmp(pattern, "*") == 0)
		return TRUE;
	glob = sfl_glob_compile(pattern);
	return sfl_glob_match(glob, name);
}

/* ============================================================================================
 * transforms
 * ========================================================================================== */

static const gchar *const sfl_transform_action_names[] = {
	"hash", "mask", "drop_field", "drop_row", "regex_replace",
};

typedef struct {
	gint group; /* -1: the literal */
	gsize offset;
	gsize len;
} SflTemplatePiece;

typedef struct {
	gint action;
	GStrv fields;
	gchar *metric_name;
	/* drop_row */
	GPtrArray *match_fields; /* gchar* */
	GPtrArray *match_globs;	 /* SflGlob */
	/* regex_replace */
	GRegex *regex;
	GArray *pieces; /* SflTemplatePiece */
	GString *literals;
} SflTransformCompiled;

struct _SflTransforms {
	GPtrArray *rules; /* SflTransformCompiled */
	gchar *salt;
	guint n_hash;
};

static void
sfl_transform_compiled_free(SflTransformCompiled *rule)
{
	g_strfreev(rule->fields);
	g_free(rule->metric_name);
	if (rule->match_fields != NULL)
		g_ptr_array_unref(rule->match_fields);
	if (rule->match_globs != NULL)
		g_ptr_array_unref(rule->match_globs);
	if (rule->regex != NULL)
		g_regex_unref(rule->regex);
	if (rule->pieces != NULL)
		g_array_unref(rule->pieces);
	if (rule->literals != NULL)
		g_string_free(rule->literals, TRUE);
	g_free(rule);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflTransformCompiled, sfl_transform_compiled_free)

/*
 * Python re and PCRE agree on nearly everything; these spellings differ: \Z is PCRE's \z,
 * \uXXXX and \UXXXXXXXX are \x{...}, and "{,n}" means "{0,n}".
 */
static gchar *
sfl_regex_from_python(const gchar *pattern)
{
	GString *out = g_string_sized_new(strlen(pattern) + 8);

	for (const gchar *p = pattern; *p != '\0'; p++) {
		if (*p == '\\' && p[1] != '\0') {
			if (p[1] == 'Z') {
				g_string_append(out, "\\z");
				p++;
				continue;
			}
			if (p[1] == 'u' || p[1] == 'U') {
				guint width = p[1] == 'u' ? 4 : 8;
				guint k = 0;
				while (k < width && g_ascii_isxdigit(p[2 + k]))
					k++;
				if (k == width) {
					g_string_append(out, "\\x{");
					g_string_append_len(out, p + 2, width);
					g_string_append_c(out, '}');
					p += 1 + width;
					continue;
				}
			}
			g_string_append_c(out, p[0]);
			g_string_append_c(out, p[1]);
			p++;
			continue;
		}
		if (*p == '{' && p[1] == ',') {
			const gchar *q = p + 2;
			while (g_ascii_isdigit(*q))
				q++;
			if (q > p + 2 && *q == '}') {
				g_string_append(out, "{0");
				continue;
			}
		}
		g_string_append_c(out, *p);
	}
	return g_string_free(out, FALSE);
}

static gboolean
sfl_template_is_identifier(const gchar *name, gsize len)
{
	if (len == 0 || g_ascii_isdigit(name[0]))
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (!g_ascii_isalnum(name[i]) && name[i] != '_' && (guchar)name[i] < 0x80)
			return FALSE;
	}
	return TRUE;
}

static void
sfl_template_add_literal(SflTransformCompiled *rule, const gchar *text, gsize len)
{
	SflTemplatePiece *last = NULL;

	if (rule->pieces->len > 0)
		last = &g_array_index(rule->pieces, SflTemplatePiece, rule->pieces->len - 1);
	if (last != NULL && last->group < 0 && last->offset + last->len == rule->literals->len) {
		last->len += len;
	} else {
		SflTemplatePiece piece = { -1, rule->literals->len, len };
		g_array_append_val(rule->pieces, piece);
	}
	g_string_append_len(rule->literals, text, (gssize)len);
}

static gboolean
sfl_template_add_group(SflTransformCompiled *rule, gint group, GError **error)
{
	SflTemplatePiece piece = { group, 0, 0 };

	if (group < 0 || group > g_regex_get_capture_count(rule->regex)) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
			    "invalid group reference %d", group);
		return FALSE;
	}
	g_array_append_val(rule->pieces, piece);
	return TRUE;
}

/* the replacement as re.sub() reads it: \1, \g<1>, \g<name>, \n-style and octal escapes */
static gboolean
sfl_template_parse(SflTransformCompiled *rule, const gchar *text, GError **error)
{
	rule->pieces = g_array_new(FALSE, FALSE, sizeof(SflTemplatePiece));
	rule->literals = g_string_new(NULL);

	for (const gchar *p = text; *p != '\0';) {
		gchar c;

		if (*p != '\\') {
			const gchar *q = p;
			while (*q != '\0' && *q != '\\')
				q++;
			sfl_template_add_literal(rule, p, (gsize)(q - p));
			p = q;
			continue;
		}
		c = p[1];
		if (c == '\0') {
			g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
					    "bad escape (end of pattern)");
			return FALSE;
		}
		p += 2;
		if (c == 'g') {
			const gchar *close;
			gsize len;
			gint group;

			if (*p != '<' || (close = strchr(p + 1, '>')) == NULL) {
				g_set_error_literal(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
						    "missing group name in \\g<...>");
				return FALSE;
			}
			len = (gsize)(close - (p + 1));
			if (sfl_template_is_identifier(p + 1, len)) {
				g_autofree gchar *name = g_strndup(p + 1, len);
				group = g_regex_get_string_number(rule->regex, name);
				if (group < 0) {
					g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
						    "unknown group name '%s'", name);
					return FALSE;
				}
			} else {
				gsize k = 0;
				group = 0;
				while (k < len && g_ascii_isdigit(p[1 + k]) && group < 100000)
					group = group * 10 + (p[1 + k++] - '0');
				if (len == 0 || k != len) {
					g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
						    "bad character in group name '%.*s'", (gint)len,
						    p + 1);
					return FALSE;
				}
			}
			if (!sfl_template_add_group(rule, group, error))
				return FALSE;
			p = close + 1;
		} else if (c == '0') {
			gint value = 0;
			for (gint k = 0; k < 2 && *p >= '0' && *p <= '7'; k++)
				value = value * 8 + (*p++ - '0');
			/* chr(value & 0xff): a code point below 256, written as UTF-8 */
			{
				gchar utf8[6];
				gint n = g_unichar_to_utf8((gunichar)(value & 0xff), utf8);
				sfl_template_add_literal(rule, utf8, (gsize)n);
			}
		} else if (g_ascii_isdigit(c)) {
			gint group = c - '0';
			if (g_ascii_isdigit(*p)) {
				gchar d2 = *p++;
				if (c <= '7' && d2 <= '7' && *p >= '0' && *p <= '7') {
					gint value = (c - '0') * 64 + (d2 - '0') * 8 + (*p++ - '0');
					gchar utf8[6];
					gint n;
					if (value > 0377) {
						g_set_error(error, SFL_ERROR,
							    SFL_ERROR_INVALID_CONFIG,
							    "octal escape value \\%o outside of "
							    "range 0-0o377",
							    value);
						return FALSE;
					}
					n = g_unichar_to_utf8((gunichar)value, utf8);
					sfl_template_add_literal(rule, utf8, (gsize)n);
					continue;
				}
				group = group * 10 + (d2 - '0');
			}
			if (!sfl_template_add_group(rule, group, error))
				return FALSE;
		} else {
			static const gchar escapes[] = "a\ab\bf\fn\nr\rt\tv\v\\\\";
			const gchar *e = NULL;
			for (gsize k = 0; k + 1 < sizeof(escapes); k += 2) {
				if (escapes[k] == c) {
					e = &escapes[k + 1];
					break;
				}
			}
			if (e != NULL) {
				sfl_template_add_literal(rule, e, 1);
			} else if (g_ascii_isalpha(c)) {
				g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
					    "bad escape \\%c", c);
				return FALSE;
			} else {
				/* unknown escapes of anything but a letter stay as written */
				sfl_template_add_literal(rule, p - 2, 2);
			}
		}
	}
	return TRUE;
}

/**
 * sfl_transforms_new:
 * @rules: (element-type SflTransformRule) (nullable): the configured rules, in order
 * @salt: (nullable): prefix of every hashed value
 * @error: a #GError
 *
 * Returns: (transfer full): the compiled rules, or %NULL with SFL_ERROR_INVALID_CONFIG when a
 * pattern or a replacement does not compile
 */
SflTransforms *
sfl_transforms_new(GPtrArray *rules, const gchar *salt, GError **error)
{
	SflTransforms *self = g_new0(SflTransforms, 1);
	g_autoptr(SflTransforms) guard = self;

	self->rules = g_ptr_array_new_with_free_func((GDestroyNotify)sfl_transform_compiled_free);
	self->salt = g_strdup(salt != NULL ? salt : "");

	for (guint i = 0; rules != NULL && i < rules->len; i++) {
		const SflTransformRule *src = g_ptr_array_index(rules, i);
		g_autoptr(SflTransformCompiled) rule = g_new0(SflTransformCompiled, 1);
		const gchar *action = "?";

		if (src->action >= 0 &&
		    src->action < (gint)G_N_ELEMENTS(sfl_transform_action_names))
			action = sfl_transform_action_names[src->action];
		rule->action = src->action;
		rule->fields = g_strdupv(src->fields);
		rule->metric_name = src->name != NULL && src->name[0] != '\0'
					    ? g_strdup(src->name)
					    : g_strdup_printf("%s-%u", action, i);
		if (rule->action == SFL_TRANSFORM_HASH)
			self->n_hash++;

		if (rule->action == SFL_TRANSFORM_DROP_ROW) {
			rule->match_fields = g_ptr_array_new_with_free_func(g_free);
			rule->match_globs =
				g_ptr_array_new_with_free_func((GDestroyNotify)sfl_glob_free);
			for (guint m = 0; src->match != NULL && m < src->match->len; m++) {
				const SflConfigPair *pair = g_ptr_array_index(src->match, m);
				g_ptr_array_add(rule->match_fields, g_strdup(pair->key));
				g_ptr_array_add(
					rule->match_globs,
					sfl_glob_compile(pair->value != NULL ? pair->value : ""));
			}
		}

		if (rule->action == SFL_TRANSFORM_REGEX_REPLACE) {
			g_autofree gchar *pcre = NULL;
			g_autoptr(GError) local = NULL;

			if (src->pattern == NULL) {
				g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
					    "transform rule %s: regex_replace needs a pattern",
					    rule->metric_name);
				return NULL;
			}
			pcre = sfl_regex_from_python(src->pattern);
			rule->regex =
				g_regex_new(pcre, G_REGEX_OPTIMIZE | G_REGEX_NEWLINE_LF, 0, &local);
			if (rule->regex == NULL) {
				g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
					    "transform rule %s: pattern does not compile: %s",
					    rule->metric_name, local->message);
				return NULL;
			}
			if (!sfl_template_parse(rule,
						src->replacement != NULL ? src->replacement : "",
						&local)) {
				g_set_error(error, SFL_ERROR, SFL_ERROR_INVALID_CONFIG,
					    "transform rule %s: bad replacement: %s",
					    rule->metric_name, local->message);
				return NULL;
			}
		}
		g_ptr_array_add(self->rules, g_steal_pointer(&rule));
	}
	return g_steal_pointer(&guard);
}

/**
 * sfl_transforms_free:
 * @self: (nullable): compiled rules
 */
void
sfl_transforms_free(SflTransforms *self)
{
	if (self == NULL)
		return;
	g_ptr_array_unref(self->rules);
	g_free(self->salt);
	g_free(self);
}

guint
sfl_transforms_get_n_rules(const SflTransforms *self)
{
	return self->rules->len;
}

guint
sfl_transforms_get_n_hash_rules(const SflTransforms *self)
{
	return self->n_hash;
}

static void
sfl_transform_hash(const SflTransforms *self, const GString *value, GString *out)
{
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);

	g_checksum_update(sum, (const guchar *)self->salt, (gssize)strlen(self->salt));
	g_checksum_update(sum, (const guchar *)value->str, (gssize)value->len);
	g_string_append_len(out, g_checksum_get_string(sum), 16);
}

/* dotted quad, each octet 0-255 written without a leading zero */
static gboolean
sfl_is_strict_ipv4(const gchar *s, gsize len, gsize *third_dot)
{
	guint octets = 0;
	gsize i = 0;

	while (octets < 4) {
		gsize start = i;
		guint value = 0;
		while (i < len && g_ascii_isdigit(s[i]) && i - start < 3)
			value = value * 10 + (guint)(s[i++] - '0');
		if (i == start || value > 255 || (s[start] == '0' && i - start > 1))
			return FALSE;
		octets++;
		if (octets == 4)
			break;
		if (i >= len || s[i] != '.')
			return FALSE;
		if (octets == 3)
			*third_dot = i;
		i++;
	}
	return i == len;
}

static void
sfl_transform_mask(const GString *value, GString *out)
{
	const gchar *at = memchr(value->str, '@', value->len);
	gsize third_dot = 0;

	if (at != NULL) {
		g_string_append(out, "***@");
		g_string_append_len(out, at + 1,
				    (gssize)(value->len - (gsize)(at + 1 - value->str)));
	} else if (sfl_is_strict_ipv4(value->str, value->len, &third_dot)) {
		g_string_append_len(out, value->str, (gssize)third_dot);
		g_string_append(out, ".x");
	} else {
		g_string_append(out, "***");
	}
}

/* re.sub(): every match, and an empty match right after a non-empty one still counts */
static void
sfl_transform_regex(const SflTransformCompiled *rule, const GString *value, GString *out)
{
	gint pos = 0;
	gint last = 0;
	gboolean must_advance = FALSE;
	gint len = (gint)value->len;

	while (pos <= len) {
		g_autoptr(GMatchInfo) info = NULL;
		gint start = 0;
		gint end = 0;
		GRegexMatchFlags flags = must_advance ? G_REGEX_MATCH_NOTEMPTY_ATSTART : 0;

		if (!g_regex_match_full(rule->regex, value->str, value->len, pos, flags, &info,
					NULL))
			break;
		g_match_info_fetch_pos(info, 0, &start, &end);
		g_string_append_len(out, value->str + last, start - last);
		for (guint k = 0; k < rule->pieces->len; k++) {
			const SflTemplatePiece *piece =
				&g_array_index(rule->pieces, SflTemplatePiece, k);
			gint gs = -1;
			gint ge = -1;
			if (piece->group < 0) {
				g_string_append_len(out, rule->literals->str + piece->offset,
						    (gssize)piece->len);
			} else if (g_match_info_fetch_pos(info, piece->group, &gs, &ge) &&
				   gs >= 0) {
				g_string_append_len(out, value->str + gs, ge - gs);
			}
		}
		last = end;
		must_advance = start == end;
		pos = end;
	}
	g_string_append_len(out, value->str + last, len - last);
}

static gboolean
sfl_transform_drop_row(const SflTransformCompiled *rule, const SflRecord *record, GString *scratch)
{
	if (rule->match_fields->len == 0)
		return FALSE;
	for (guint m = 0; m < rule->match_fields->len; m++) {
		const SflField *field =
			sfl_record_lookup(record, g_ptr_array_index(rule->match_fields, m));
		g_string_truncate(scratch, 0);
		if (field != NULL)
			sfl_field_append_pystr(field, scratch);
		if (!sfl_glob_match(g_ptr_array_index(rule->match_globs, m), scratch->str))
			return FALSE;
	}
	return TRUE;
}

/**
 * sfl_transforms_apply:
 * @self: compiled rules
 * @record: the payload, rewritten in place
 * @dropped_by: (out) (optional) (transfer none): the metric name of the rule that dropped
 *   the row
 *
 * Rewritten values are strings (str(value) rewritten). Absent and null fields are left
 * alone; drop_row sees a missing field as "" and a null one as "None", like str(p.get(f, "")).
 * A drop_row rule without match pairs drops nothing.
 *
 * Returns: %FALSE when a drop_row rule matched
 */
gboolean
sfl_transforms_apply(const SflTransforms *self, SflRecord *record, const gchar **dropped_by)
{
	g_autoptr(GString) value = NULL;
	g_autoptr(GString) result = NULL;

	if (dropped_by != NULL)
		*dropped_by = NULL;
	if (self == NULL || self->rules->len == 0)
		return TRUE;

	for (guint r = 0; r < self->rules->len; r++) {
		const SflTransformCompiled *rule = g_ptr_array_index(self->rules, r);

		if (rule->action == SFL_TRANSFORM_DROP_ROW) {
			if (value == NULL)
				value = g_string_new(NULL);
			if (sfl_transform_drop_row(rule, record, value)) {
				if (dropped_by != NULL)
					*dropped_by = rule->metric_name;
				return FALSE;
			}
			continue;
		}
		for (guint f = 0; rule->fields != NULL && rule->fields[f] != NULL; f++) {
			const gchar *name = rule->fields[f];
			const SflField *field;

			if (rule->action == SFL_TRANSFORM_DROP_FIELD) {
				sfl_record_remove(record, name);
				continue;
			}
			field = sfl_record_lookup(record, name);
			if (field == NULL || field->type == SFL_VALUE_NULL)
				continue;
			if (value == NULL)
				value = g_string_new(NULL);
			if (result == NULL)
				result = g_string_new(NULL);
			g_string_truncate(value, 0);
			g_string_truncate(result, 0);
			sfl_field_append_pystr(field, value);
			switch (rule->action) {
			case SFL_TRANSFORM_HASH:
				sfl_transform_hash(self, value, result);
				break;
			case SFL_TRANSFORM_MASK:
				sfl_transform_mask(value, result);
				break;
			case SFL_TRANSFORM_REGEX_REPLACE:
				sfl_transform_regex(rule, value, result);
				break;
			default:
				continue;
			}
			sfl_record_set_string(record, name, result->str, (gssize)result->len);
		}
	}
	return TRUE;
}

/* ============================================================================================
 * sampling
 * ========================================================================================== */

/**
 * sfl_sample_keep:
 * @key: the sampling key (UTF-8)
 * @len: its length in bytes
 * @rate: the fraction to keep
 *
 * Returns: whether the row stays; the same key always gets the same answer
 */
gboolean
sfl_sample_keep(const gchar *key, gsize len, gdouble rate)
{
	g_autoptr(GChecksum) sum = NULL;
	guint8 digest[32];
	gsize digest_len = sizeof(digest);
	guint64 head = 0;

	if (rate >= 1.0)
		return TRUE;
	sum = g_checksum_new(G_CHECKSUM_SHA256);
	g_checksum_update(sum, (const guchar *)key, (gssize)len);
	g_checksum_get_digest(sum, digest, &digest_len);
	for (guint i = 0; i < 8; i++)
		head = (head << 8) | digest[i];
	return (gdouble)(head % 10000) < rate * 10000.0;
}

/* ============================================================================================
 * timestamps: a port of CPython 3.11's datetime.fromisoformat
 * ========================================================================================== */

#define SFL_USEC_PER_SEC G_GINT64_CONSTANT(1000000)
#define SFL_USEC_PER_DAY (G_GINT64_CONSTANT(86400) * SFL_USEC_PER_SEC)
/* 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z, the ends of Python's datetime range */
#define SFL_USEC_MIN (G_GINT64_CONSTANT(-62135596800) * SFL_USEC_PER_SEC)
#define SFL_USEC_END (G_GINT64_CONSTANT(253402300800) * SFL_USEC_PER_SEC)

static gboolean
sfl_is_leap(gint year)
{
	return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
}

static gint
sfl_days_in_month(gint year, gint month)
{
	static const gint days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	return month == 2 && sfl_is_leap(year) ? 29 : days[month - 1];
}

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil) */
static gint64
sfl_days_from_civil(gint64 y, gint m, gint d)
{
	gint64 era;
	gint64 yoe;
	gint64 doy;
	gint64 doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
sfl_civil_from_days(gint64 z, gint64 *year, gint *month, gint *day)
{
	gint64 era;
	gint64 doe;
	gint64 yoe;
	gint64 doy;
	gint64 mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*day = (gint)(doy - (153 * mp + 2) / 5 + 1);
	*month = (gint)(mp < 10 ? mp + 3 : mp - 9);
	*year = yoe + era * 400 + (*month <= 2);
}

static const gchar *
sfl_iso_digits(const gchar *p, gint *var, gsize n)
{
	for (gsize i = 0; i < n; i++) {
		guint digit = (guint)(guchar)*p++ - (guint)'0';
		if (digit > 9)
			return NULL;
		*var = *var * 10 + (gint)digit;
	}
	return p;
}

static gssize
sfl_iso_separator(const gchar *s, gsize len)
{
	if (len == 7)
		return 7;
	if (s[4] == '-') {
		if (s[5] == 'W') {
			if (len < 8)
				return -1;
			if (len > 8 && s[8] == '-') {
				if (len == 9)
					return -1;
				if (len > 10 && g_ascii_isdigit(s[10]))
					return 8;
				return 10;
			}
			return 8;
		}
		return 10;
	}
	if (s[4] == 'W') {
		gsize idx = 7;
		while (idx < len && g_ascii_isdigit(s[idx]))
			idx++;
		if (idx < 9)
			return (gssize)idx;
		return idx % 2 == 0 ? 7 : 8;
	}
	return 8;
}

static gboolean
sfl_iso_week_to_ymd(gint iso_year, gint week, gint weekday, gint *year, gint *month, gint *day)
{
	gint64 jan1 = sfl_days_from_civil(iso_year, 1, 1);
	/* Monday = 0; 1970-01-01 was a Thursday */
	gint first_weekday = (gint)(((jan1 % 7) + 7 + 3) % 7);
	gint64 week1_monday;
	gint64 y;

	if (week <= 0 || week >= 53) {
		if (week != 53 ||
		    !(first_weekday == 3 || (first_weekday == 2 && sfl_is_leap(iso_year))))
			return FALSE;
	}
	if (weekday <= 0 || weekday >= 8)
		return FALSE;
	week1_monday = jan1 - first_weekday;
	if (first_weekday > 3)
		week1_monday += 7;
	sfl_civil_from_days(week1_monday + (week - 1) * 7 + weekday - 1, &y, month, day);
	if (y < 1 || y > 9999)
		return FALSE;
	*year = (gint)y;
	return TRUE;
}

static gboolean
sfl_iso_date(const gchar *s, gsize len, gint *year, gint *month, gint *day)
{
	const gchar *p = sfl_iso_digits(s, year, 4);
	gboolean uses_separator;

	if (p == NULL)
		return FALSE;
	uses_separator = *p == '-';
	if (uses_separator)
		p++;
	if (*p == 'W') {
		gint week = 0;
		gint weekday = 0;
		p = sfl_iso_digits(p + 1, &week, 2);
		if (p == NULL)
			return FALSE;
		if ((gsize)(p - s) < len) {
			if (uses_separator && *(p++) != '-')
				return FALSE;
			if (sfl_iso_digits(p, &weekday, 1) == NULL)
				return FALSE;
		} else {
			weekday = 1;
		}
		return sfl_iso_week_to_ymd(*year, week, weekday, year, month, day);
	}
	p = sfl_iso_digits(p, month, 2);
	if (p == NULL)
		return FALSE;
	if (uses_separator && *(p++) != '-')
		return FALSE;
	return sfl_iso_digits(p, day, 2) != NULL;
}

/* 0: parsed to the end; 1: something follows (a time zone, or junk); < 0: invalid */
static gint
sfl_iso_hms(const gchar *s, const gchar *end, gint *hour, gint *minute, gint *second, gint *usec)
{
	gint *vals[3] = { hour, minute, second };
	const gchar *p = s;
	gboolean has_separator = TRUE;
	gsize remains;
	gsize to_parse;

	*hour = *minute = *second = *usec = 0;
	for (guint i = 0; i < 3; i++) {
		gchar c;
		p = sfl_iso_digits(p, vals[i], 2);
		if (p == NULL)
			return -3;
		c = *(p++);
		if (i == 0)
			has_separator = c == ':';
		if (p >= end)
			return c != '\0';
		if (has_separator && c == ':')
			continue;
		if (c == '.' || c == ',')
			break;
		if (!has_separator)
			p--;
		else
			return -4;
	}
	remains = (gsize)(end - p);
	to_parse = MIN(remains, 6);
	p = sfl_iso_digits(p, usec, to_parse);
	if (p == NULL)
		return -3;
	for (gsize i = to_parse; i < 6; i++)
		*usec *= 10;
	while (g_ascii_isdigit(*p))
		p++;
	return *p != '\0';
}

/* 0 naive, 1 with an offset (µs east of UTC in *offset), < 0 invalid */
static gint
sfl_iso_time(const gchar *s, gsize len, gint *hour, gint *minute, gint *second, gint *usec,
	     gint64 *offset)
{
	const gchar *end = s + len;
	const gchar *tz = s;
	gint rv;
	gint sign;
	gint tzh = 0;
	gint tzm = 0;
	gint tzs = 0;
	gint tzus = 0;

	do {
		if (*tz == 'Z' || *tz == '+' || *tz == '-')
			break;
	} while (++tz < end);

	rv = sfl_iso_hms(s, tz, hour, minute, second, usec);
	if (rv < 0)
		return rv;
	if (tz >= end)
		return rv == 1 ? -5 : 0;
	if (*tz == 'Z') {
		*offset = 0;
		return tz[1] != '\0' ? -5 : 1;
	}
	sign = *tz == '-' ? -1 : 1;
	rv = sfl_iso_hms(tz + 1, end, &tzh, &tzm, &tzs, &tzus);
	*offset = sign * (((gint64)tzh * 3600 + tzm * 60 + tzs) * SFL_USEC_PER_SEC + tzus);
	return rv != 0 ? -5 : 1;
}

static gboolean
sfl_civil_to_usec(gint year, gint month, gint day, gint hour, gint minute, gint second, gint usec,
		  gint64 offset, gint64 *unix_usec)
{
	if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 ||
	    day > sfl_days_in_month(year, month) || hour < 0 || hour > 23 || minute < 0 ||
	    minute > 59 || second < 0 || second > 59 || usec < 0 || usec > 999999)
		return FALSE;
	*unix_usec = sfl_days_from_civil(year, month, day) * SFL_USEC_PER_DAY +
		     ((gint64)hour * 3600 + minute * 60 + second) * SFL_USEC_PER_SEC + usec -
		     offset;
	return TRUE;
}

static gboolean
sfl_iso_parse(const gchar *s, gsize len, gint64 *unix_usec)
{
	gint year = 0;
	gint month = 0;
	gint day = 0;
	gint hour = 0;
	gint minute = 0;
	gint second = 0;
	gint usec = 0;
	gint64 offset = 0;
	gssize sep;

	if (len < 7)
		return FALSE;
	sep = sfl_iso_separator(s, len);
	if (sep < 0 || !sfl_iso_date(s, (gsize)sep, &year, &month, &day))
		return FALSE;
	if (len > (gsize)sep) {
		const gchar *p = s + sep;
		gint rv;
		guchar lead = (guchar)*p;

		if ((lead & 0x80) == 0)
			p += 1;
		else if ((lead & 0xf0) == 0xe0)
			p += 3;
		else if ((lead & 0xf0) == 0xf0)
			p += 4;
		else
			p += 2;
		if (p > s + len)
			return FALSE;
		rv = sfl_iso_time(p, len - (gsize)(p - s), &hour, &minute, &second, &usec, &offset);
		if (rv < 0)
			return FALSE;
		if (rv == 1 && (offset <= -SFL_USEC_PER_DAY || offset >= SFL_USEC_PER_DAY))
			return FALSE;
	}
	return sfl_civil_to_usec(year, month, day, hour, minute, second, usec, offset, unix_usec);
}

/**
 * sfl_parse_iso_datetime:
 * @text: the text
 * @unix_usec: (out): microseconds since the Unix epoch, UTC
 *
 * Every "Z" is first replaced with "+00:00", as the original did. Accepted as Python 3.11
 * accepts: YYYY-MM-DD, YYYYMMDD and ISO week dates; any single separator; HH, HH:MM,
 * HH:MM:SS, HHMM, HHMMSS with a fraction after '.' or ',' of any length (truncated to µs);
 * offsets ±HH, ±HH:MM, ±HHMM, ±HH:MM:SS[.ffffff] below 24 h. No offset means UTC.
 *
 * Returns: whether @text parsed
 */
gboolean
sfl_parse_iso_datetime(const gchar *text, gint64 *unix_usec)
{
	g_autoptr(GString) clean = NULL;

	if (text == NULL)
		return FALSE;
	if (strchr(text, 'Z') == NULL)
		return sfl_iso_parse(text, strlen(text), unix_usec);
	clean = g_string_new(NULL);
	for (const gchar *p = text; *p != '\0'; p++) {
		if (*p == 'Z')
			g_string_append(clean, "+00:00");
		else
			g_string_append_c(clean, *p);
	}
	return sfl_iso_parse(clean->str, clean->len, unix_usec);
}

/* YYYYMMDDHHMMSS with an optional .f to .ffffff, the ELF TIMESTAMP column */
static gboolean
sfl_parse_compact(const gchar *text, gint64 *unix_usec)
{
	gint v[6] = { 0 };
	static const gsize widths[6] = { 4, 2, 2, 2, 2, 2 };
	const gchar *p = text;
	gint usec = 0;

	for (guint i = 0; i < 6; i++) {
		p = sfl_iso_digits(p, &v[i], widths[i]);
		if (p == NULL)
			return FALSE;
	}
	if (*p == '.') {
		gsize n = 0;
		p++;
		while (g_ascii_isdigit(p[n]) && n < 7)
			n++;
		if (n == 0 || n > 6 || p[n] != '\0')
			return FALSE;
		sfl_iso_digits(p, &usec, n);
		for (gsize i = n; i < 6; i++)
			usec *= 10;
	} else if (*p != '\0') {
		return FALSE;
	}
	return sfl_civil_to_usec(v[0], v[1], v[2], v[3], v[4], v[5], usec, 0, unix_usec);
}

/**
 * sfl_parse_timestamp_text:
 * @text: the text
 * @unix_usec: (out): microseconds since the Unix epoch
 *
 * Returns: whether @text is an ISO datetime or the compact YYYYMMDDHHMMSS[.ffffff] form
 */
gboolean
sfl_parse_timestamp_text(const gchar *text, gint64 *unix_usec)
{
	if (text == NULL)
		return FALSE;
	return sfl_parse_iso_datetime(text, unix_usec) || sfl_parse_compact(text, unix_usec);
}

/**
 * sfl_parse_timestamp_field:
 * @field: a field
 * @unix_usec: (out): microseconds since the Unix epoch
 *
 * Integers and floats are epoch milliseconds (booleans too, as Python's isinstance(v, int)
 * holds for them); strings as sfl_parse_timestamp_text(). Values outside years 1-9999 fail.
 *
 * Returns: whether the field holds a timestamp
 */
gboolean
sfl_parse_timestamp_field(const SflField *field, gint64 *unix_usec)
{
	gint64 ms;
	gdouble usec;

	if (field == NULL)
		return FALSE;
	switch (field->type) {
	case SFL_VALUE_STRING:
		return sfl_parse_timestamp_text(field->str, unix_usec);
	case SFL_VALUE_INT:
	case SFL_VALUE_BOOL:
		ms = field->type == SFL_VALUE_INT ? field->i : (field->b ? 1 : 0);
		if (ms < SFL_USEC_MIN / 1000 || ms >= SFL_USEC_END / 1000)
			return FALSE;
		*unix_usec = ms * 1000;
		return TRUE;
	case SFL_VALUE_REAL:
		if (!isfinite(field->d))
			return FALSE;
		usec = nearbyint(field->d * 1000.0);
		if (usec < (gdouble)SFL_USEC_MIN || usec >= (gdouble)SFL_USEC_END)
			return FALSE;
		*unix_usec = (gint64)usec;
		return TRUE;
	case SFL_VALUE_NULL:
	case SFL_VALUE_JSON:
	default:
		return FALSE;
	}
}

/**
 * sfl_timestamp_fallback:
 * @has_candidate: whether the source has a fallback candidate
 * @candidate_usec: the candidate
 * @now_usec: the current time
 *
 * Returns: the timestamp for an entry whose fields held none
 */
gint64
sfl_timestamp_fallback(gboolean has_candidate, gint64 candidate_usec, gint64 now_usec)
{
	if (!has_candidate)
		return now_usec;
	if (candidate_usec < now_usec - SFL_USEC_PER_SEC * 3600)
		return now_usec - SFL_USEC_PER_SEC * 300;
	return candidate_usec;
}

/* seconds of @unix_usec, rounded down, as calendar fields */
static void
sfl_usec_to_civil(gint64 unix_usec, gint64 *year, gint *month, gint *day, gint *hour, gint *minute,
		  gint *second, gint *usec)
{
	gint64 days = unix_usec / SFL_USEC_PER_DAY;
	gint64 rem = unix_usec % SFL_USEC_PER_DAY;

	if (rem < 0) {
		rem += SFL_USEC_PER_DAY;
		days--;
	}
	sfl_civil_from_days(days, year, month, day);
	*hour = (gint)(rem / (3600 * SFL_USEC_PER_SEC));
	*minute = (gint)(rem / (60 * SFL_USEC_PER_SEC) % 60);
	*second = (gint)(rem / SFL_USEC_PER_SEC % 60);
	*usec = (gint)(rem % SFL_USEC_PER_SEC);
}

/**
 * sfl_format_iso_seconds:
 * @unix_usec: microseconds since the Unix epoch
 *
 * Returns: (transfer full): YYYY-MM-DDTHH:MM:SSZ in UTC
 */
gchar *
sfl_format_iso_seconds(gint64 unix_usec)
{
	gint64 year;
	gint month;
	gint day;
	gint hour;
	gint minute;
	gint second;
	gint usec;

	sfl_usec_to_civil(unix_usec, &year, &month, &day, &hour, &minute, &second, &usec);
	return g_strdup_printf("%04" G_GINT64_FORMAT "-%02d-%02dT%02d:%02d:%02dZ", year, month, day,
			       hour, minute, second);
}

/**
 * sfl_soql_datetime_literal:
 * @text: an ISO datetime, e.g. Salesforce's 2026-06-30T01:00:00.000+0000
 *
 * Returns: (transfer full): the instant as YYYY-MM-DDTHH:MM:SS.mmmZ in UTC, or a copy of
 * @text when it does not parse (or lands outside years 1-9999 in UTC)
 */
gchar *
sfl_soql_datetime_literal(const gchar *text)
{
	gint64 unix_usec = 0;
	gint64 year;
	gint month;
	gint day;
	gint hour;
	gint minute;
	gint second;
	gint usec;

	if (text == NULL)
		return NULL;
	if (!sfl_parse_iso_datetime(text, &unix_usec) || unix_usec < SFL_USEC_MIN ||
	    unix_usec >= SFL_USEC_END)
		return g_strdup(text);
	sfl_usec_to_civil(unix_usec, &year, &month, &day, &hour, &minute, &second, &usec);
	return g_strdup_printf("%04" G_GINT64_FORMAT "-%02d-%02dT%02d:%02d:%02d.%03dZ", year, month,
			       day, hour, minute, second, usec / 1000);
}

/**
 * sfl_soql_escape:
 * @text: the literal's content
 *
 * Returns: (transfer full): @text with backslashes and single quotes escaped
 */
gchar *
sfl_soql_escape(const gchar *text)
{
	GString *out;

	if (text == NULL)
		return NULL;
	out = g_string_sized_new(strlen(text) + 4);
	for (const gchar *p = text; *p != '\0'; p++) {
		if (*p == '\\' || *p == '\'')
			g_string_append_c(out, '\\');
		g_string_append_c(out, *p);
	}
	return g_string_free(out, FALSE);
}

/* ============================================================================================
 * routing: level and structured metadata
 * ========================================================================================== */

/* str.isspace(): Unicode White_Space plus the ASCII information separators */
static gboolean
sfl_py_isspace(gunichar c)
{
	return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
	       c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
	       c == 0x202f || c == 0x205f || c == 0x3000;
}

/* str(value).strip() of a field, pointing into the field or @scratch (made on demand) */
static void
sfl_field_stripped(const SflField *field, GString **scratch, const gchar **text, gsize *len)
{
	const gchar *s;
	const gchar *end;

	if (field->type == SFL_VALUE_STRING) {
		s = field->str;
		end = field->str + field->len;
	} else {
		if (*scratch == NULL)
			*scratch = g_string_new(NULL);
		g_string_truncate(*scratch, 0);
		sfl_field_append_pystr(field, *scratch);
		s = (*scratch)->str;
		end = (*scratch)->str + (*scratch)->len;
	}
	while (s < end) {
		if ((guchar)*s < 0x80) {
			if (!sfl_py_isspace((guchar)*s))
				break;
			s++;
		} else {
			gunichar c = g_utf8_get_char_validated(s, end - s);
			if (c == (gunichar)-1 || c == (gunichar)-2 || !sfl_py_isspace(c))
				break;
			s = g_utf8_next_char(s);
		}
	}
	while (end > s) {
		const gchar *prev = g_utf8_find_prev_char(s, end);
		gunichar c;
		if (prev == NULL)
			prev = s;
		c = g_utf8_get_char_validated(prev, end - prev);
		if (c == (gunichar)-1 || c == (gunichar)-2 || !sfl_py_isspace(c))
			break;
		end = prev;
	}
	*text = s;
	*len = (gsize)(end - s);
}

static gboolean
sfl_is_ascii(const gchar *s, gsize len)
{
	for (gsize i = 0; i < len; i++) {
		if ((guchar)s[i] >= 0x80)
			return FALSE;
	}
	return TRUE;
}

/* str.lower() (or upper()) equals one of @words, which are ASCII in that case */
static gboolean
sfl_case_in(const gchar *s, gsize len, gboolean upper, const gchar *const *words)
{
	g_autofree gchar *folded = NULL;

	if (!sfl_is_ascii(s, len)) {
		folded = upper ? g_utf8_strup(s, (gssize)len) : g_utf8_strdown(s, (gssize)len);
		s = folded;
		len = strlen(folded);
	}
	for (guint i = 0; words[i] != NULL; i++) {
		if (strlen(words[i]) != len)
			continue;
		if (folded != NULL ? memcmp(s, words[i], len) == 0
				   : g_ascii_strncasecmp(s, words[i], len) == 0)
			return TRUE;
	}
	return FALSE;
}

static const gchar *const sfl_absent_words[] = { "", "0", "none", "null", "na", "n/a", NULL };
static const gchar *const sfl_success_words[] = {
	"s", "success", "successful", "ok", "complete", "completed", "true", NULL,
};
static const gchar *const sfl_login_ok_words[] = { "LOGIN_NO_ERROR", NULL };

/* "present": not null and, stripped, not an empty-ish word; the stripped text when it is */
static gboolean
sfl_level_present(const SflRecord *record, const gchar *name, GString **scratch, const gchar **text,
		  gsize *len)
{
	const SflField *field = sfl_record_lookup(record, name);

	if (field == NULL || field->type == SFL_VALUE_NULL)
		return FALSE;
	sfl_field_stripped(field, scratch, text, len);
	return !sfl_case_in(*text, *len, FALSE, sfl_absent_words);
}

/**
 * sfl_shape_level:
 * @record: the payload after transforms
 *
 * Returns: (transfer none): "error", "warn" or "info" by the rules of
 * docs/sources/eventlogfile.md "Shaping, in order"
 */
const gchar *
sfl_shape_level(const SflRecord *record)
{
	static const gchar *const error_fields[] = { "EXCEPTION_MESSAGE", "EXCEPTION_TYPE",
						     "ERROR_MESSAGE", "ERROR_CODE" };
	g_autoptr(GString) scratch_owned = NULL;
	GString **scratch = &scratch_owned;
	const gchar *text = NULL;
	gsize len = 0;

	for (guint i = 0; i < G_N_ELEMENTS(error_fields); i++) {
		if (sfl_level_present(record, error_fields[i], scratch, &text, &len))
			return "error";
	}
	if (sfl_level_present(record, "STATUS_CODE", scratch, &text, &len)) {
		gboolean digits = len > 0;
		guint64 code = 0;
		for (gsize i = 0; i < len && digits; i++) {
			digits = g_ascii_isdigit(text[i]);
			if (code < 1000000)
				code = code * 10 + (guint64)(text[i] - '0');
		}
		if (digits) {
			if (code >= 500)
				return "error";
			if (code >= 400)
				return "warn";
			if (code >= 100)
				return "info";
		}
	}
	if (sfl_level_present(record, "REQUEST_STATUS", scratch, &text, &len))
		return sfl_case_in(text, len, FALSE, sfl_success_words) ? "info" : "warn";
	if (sfl_level_present(record, "LOGIN_STATUS", scratch, &text, &len))
		return sfl_case_in(text, len, TRUE, sfl_login_ok_words) ? "info" : "warn";
	if (sfl_level_present(record, "OPERATION_STATUS", scratch, &text, &len) ||
	    sfl_level_present(record, "Status", scratch, &text, &len))
		return sfl_case_in(text, len, FALSE, sfl_success_words) ? "info" : "warn";
	return "info";
}

/**
 * sfl_shape_metadata:
 * @record: the payload after transforms
 * @fields: (array zero-terminated=1) (nullable): the names to promote
 * @pairs: (element-type SflLabelPair): where the pairs are appended
 *
 * Names come from @fields, values are interned in @record. Like the dict the original
 * built, a name listed twice appears once, and "level" keeps its listed position when the
 * payload has a non-null "level", else it comes last.
 */
void
sfl_shape_metadata(SflRecord *record, const gchar *const *fields, GArray *pairs)
{
	const gchar *level = sfl_shape_level(record);
	g_autoptr(GString) scratch = NULL;
	guint start = pairs->len;
	gint level_idx = -1;

	for (guint i = 0; fields != NULL && fields[i] != NULL; i++) {
		const gchar *name = fields[i];
		const SflField *field = sfl_record_lookup(record, name);
		SflLabelPair pair = { name, NULL };
		gboolean seen = FALSE;

		if (field == NULL || field->type == SFL_VALUE_NULL)
			continue;
		for (guint k = start; k < pairs->len && !seen; k++)
			seen = strcmp(g_array_index(pairs, SflLabelPair, k).name, name) == 0;
		if (seen)
			continue;
		if (strcmp(name, "level") == 0) {
			level_idx = (gint)pairs->len;
			pair.value = level;
		} else if (field->type == SFL_VALUE_STRING) {
			pair.value = sfl_record_intern(record, field->str, (gssize)field->len);
		} else {
			if (scratch == NULL)
				scratch = g_string_new(NULL);
			g_string_truncate(scratch, 0);
			sfl_field_append_pystr(field, scratch);
			pair.value = sfl_record_intern(record, scratch->str, (gssize)scratch->len);
		}
		g_array_append_val(pairs, pair);
	}
	if (level_idx < 0) {
		SflLabelPair pair = { "level", level };
		g_array_append_val(pairs, pair);
	}
}

/* ============================================================================================
 * the promoted-label cardinality guard (SFL-0034)
 * ========================================================================================== */

/* one promoted label's window */
typedef struct {
	gchar *name;
	GHashTable *values;  /* admitted this window: owned strings, set semantics */
	gint64 window_start; /* monotonic */
	gboolean warned;     /* this window */
	SflSeries *folded;   /* (nullable) */
	SflSeries *distinct; /* (nullable) */
} SflLabelWindow;

struct _SflLabelGuard {
	gint ref_count;
	guint max_values;
	gint64 window_usec;
	SflClock *clock;
	SflMetrics *metrics; /* (nullable) */
	GHashTable *labels;  /* name → SflLabelWindow */
};

static void
sfl_label_window_free(gpointer data)
{
	SflLabelWindow *w = data;

	g_free(w->name);
	g_hash_table_unref(w->values);
	g_free(w);
}

/**
 * sfl_label_guard_new:
 * @max_values: distinct values admitted per label per window; 0 admits everything
 * @window_usec: the window's length (> 0)
 * @clock: the clock windows are measured on (monotonic)
 * @metrics: (nullable): where `sf2loki_label_values_folded` and `sf2loki_label_values` go
 *
 * Returns: (transfer full): a guard shared by every source of the run
 */
SflLabelGuard *
sfl_label_guard_new(guint max_values, gint64 window_usec, SflClock *clock, SflMetrics *metrics)
{
	SflLabelGuard *self = NULL;

	g_return_val_if_fail(clock != NULL, NULL);
	g_return_val_if_fail(window_usec > 0, NULL);
	self = g_new0(SflLabelGuard, 1);
	self->ref_count = 1;
	self->max_values = max_values;
	self->window_usec = window_usec;
	self->clock = sfl_clock_ref(clock);
	self->metrics = metrics != NULL ? sfl_metrics_ref(metrics) : NULL;
	self->labels = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, sfl_label_window_free);
	return self;
}

SflLabelGuard *
sfl_label_guard_ref(SflLabelGuard *self)
{
	g_return_val_if_fail(self != NULL, NULL);
	self->ref_count++;
	return self;
}

void
sfl_label_guard_unref(SflLabelGuard *self)
{
	if (self == NULL || --self->ref_count > 0)
		return;
	g_hash_table_unref(self->labels);
	sfl_clock_unref(self->clock);
	g_clear_pointer(&self->metrics, sfl_metrics_unref);
	g_free(self);
}

static SflLabelWindow *
sfl_label_guard_window(SflLabelGuard *self, const gchar *label, gint64 now)
{
	SflLabelWindow *w = g_hash_table_lookup(self->labels, label);
	const gchar *names[] = { "label", NULL };
	const gchar *values[] = { label, NULL };

	if (w != NULL)
		return w;
	w = g_new0(SflLabelWindow, 1);
	w->name = g_strdup(label);
	w->values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	w->window_start = now;
	if (self->metrics != NULL) {
		w->folded = sfl_metric_family_series(
			sfl_metrics_counter(self->metrics, "sf2loki_label_values_folded",
					    "Promoted label values sent as __other__ because the "
					    "label had too many distinct values in its window.",
					    names),
			values);
		w->distinct = sfl_metric_family_series(
			sfl_metrics_gauge(self->metrics, "sf2loki_label_values",
					  "Distinct values a promoted label has taken in its "
					  "current window.",
					  names),
			values);
	}
	g_hash_table_insert(self->labels, w->name, w);
	return w;
}

/**
 * sfl_label_guard_admit:
 * @self: (nullable): the guard; %NULL admits everything
 * @label: a promoted label's name
 * @value: its value in this entry
 *
 * Within one window a value once admitted stays admitted and the first @max_values distinct
 * values are the admitted ones, so the same data in the same window always gets the same
 * labels. A window starts at the label's first value after the previous one ended.
 *
 * Returns: (transfer none): @value, or %SFL_LABEL_OTHER when the label is full this window
 */
const gchar *
sfl_label_guard_admit(SflLabelGuard *self, const gchar *label, const gchar *value)
{
	SflLabelWindow *w = NULL;
	gint64 now = 0;

	g_return_val_if_fail(label != NULL && value != NULL, value);
	if (self == NULL || self->max_values == 0)
		return value;
	now = sfl_clock_monotonic_usec(self->clock);
	w = sfl_label_guard_window(self, label, now);
	if (now - w->window_start >= self->window_usec) {
		g_hash_table_remove_all(w->values);
		w->window_start = now;
		w->warned = FALSE;
	}
	if (g_hash_table_contains(w->values, value))
		return value;
	if (g_hash_table_size(w->values) < self->max_values) {
		g_hash_table_add(w->values, g_strdup(value));
		if (w->distinct != NULL)
			sfl_series_set(w->distinct, g_hash_table_size(w->values));
		return value;
	}
	if (w->folded != NULL)
		sfl_series_inc(w->folded);
	if (!w->warned) {
		w->warned = TRUE;
		/* values of promoted labels are not secrets, but naming the label is enough */
		g_warning("label %s took more than %u distinct values within %" G_GINT64_FORMAT
			  " s; further new values are sent as %s until its window ends (the "
			  "value stays in the line)",
			  label, self->max_values, self->window_usec / G_USEC_PER_SEC,
			  SFL_LABEL_OTHER);
	}
	return SFL_LABEL_OTHER;
}
