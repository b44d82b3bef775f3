/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflRecord"

#include "config.h"

#include "sfl-record.h"

#include "sfl-pyjson.h"

#include <math.h>
#include <string.h>

/* the first arena block; rows of ELF CSV rarely need more than this for rewritten values */
#define SFL_ARENA_MIN_BLOCK (4 * 1024)
/* blocks this large were made for one oversized value: give them back on reset */
#define SFL_ARENA_KEEP_MAX (1024 * 1024)

/* nested objects with at most this many keys are sorted without a heap allocation */
#define SFL_JSON_STACK_KEYS 32

typedef struct {
	gchar *data;
	gsize size;
} SflArenaBlock;

struct _SflRecord {
	SflField *fields;
	guint n_fields;
	guint cap_fields;

	/* bump allocator: blocks survive reset so a steady stream of rows allocates nothing */
	GArray *blocks; /* SflArenaBlock */
	guint cur_block;
	gsize cur_used;

	/*
	 * the sorted order of the last rendered row: rows of one file or query share their
	 * names, so the order is checked in n-1 comparisons instead of sorted each time
	 */
	guint *perm;
	guint perm_n;
	guint perm_cap;
};

/* --- lifecycle ------------------------------------------------------------------------------ */

/**
 * sfl_record_new:
 *
 * Returns: (transfer full): an empty record
 */
SflRecord *
sfl_record_new(void)
{
	SflRecord *self = g_new0(SflRecord, 1);
	self->blocks = g_array_new(FALSE, FALSE, sizeof(SflArenaBlock));
	return self;
}

/**
 * sfl_record_free:
 * @self: (nullable): a record
 */
void
sfl_record_free(SflRecord *self)
{
	if (self == NULL)
		return;
	for (guint i = 0; i < self->blocks->len; i++)
		g_free(g_array_index(self->blocks, SflArenaBlock, i).data);
	g_array_unref(self->blocks);
	g_free(self->fields);
	g_free(self->perm);
	g_free(self);
}

/**
 * sfl_record_reset:
 * @self: a record
 *
 * Forgets every field and every interned string; the capacity stays for the next row.
 */
void
sfl_record_reset(SflRecord *self)
{
	self->n_fields = 0;
	self->cur_block = 0;
	self->cur_used = 0;
	for (guint i = self->blocks->len; i > 1; i--) {
		SflArenaBlock *block = &g_array_index(self->blocks, SflArenaBlock, i - 1);
		if (block->size > SFL_ARENA_KEEP_MAX) {
			g_free(block->data);
			g_array_remove_index(self->blocks, i - 1);
		}
	}
}

/* --- arena ---------------------------------------------------------------------------------- */

static gchar *
sfl_record_arena_alloc(SflRecord *self, gsize size)
{
	SflArenaBlock fresh = { NULL, 0 };

	while (self->cur_block < self->blocks->len) {
		SflArenaBlock *block = &g_array_index(self->blocks, SflArenaBlock, self->cur_block);
		if (block->size - self->cur_used >= size) {
			gchar *p = block->data + self->cur_used;
			self->cur_used += size;
			return p;
		}
		self->cur_block++;
		self->cur_used = 0;
	}

	fresh.size = SFL_ARENA_MIN_BLOCK;
	if (self->blocks->len > 0) {
		SflArenaBlock *last =
			&g_array_index(self->blocks, SflArenaBlock, self->blocks->len - 1);
		fresh.size = MIN(MAX(last->size * 2, SFL_ARENA_MIN_BLOCK), SFL_ARENA_KEEP_MAX);
	}
	fresh.size = MAX(fresh.size, size);
	fresh.data = g_malloc(fresh.size);
	g_array_append_val(self->blocks, fresh);
	self->cur_block = self->blocks->len - 1;
	self->cur_used = size;
	return fresh.data;
}

/**
 * sfl_record_intern:
 * @self: a record
 * @text: the bytes to copy
 * @len: their length, or -1 when NUL-terminated
 *
 * Returns: (transfer none): a NUL-terminated copy valid until the next reset or free
 */
const gchar *
sfl_record_intern(SflRecord *self, const gchar *text, gssize len)
{
	gsize n = len < 0 ? strlen(text) : (gsize)len;
	gchar *copy = sfl_record_arena_alloc(self, n + 1);
	if (n > 0)
		memcpy(copy, text, n);
	copy[n] = '\0';
	return copy;
}

/* --- fields --------------------------------------------------------------------------------- */

static SflField *
sfl_record_push(SflRecord *self, const gchar *name)
{
	SflField *field;

	if (self->n_fields == self->cap_fields) {
		self->cap_fields = MAX(self->cap_fields * 2, 32);
		self->fields = g_renew(SflField, self->fields, self->cap_fields);
	}
	field = &self->fields[self->n_fields++];
	memset(field, 0, sizeof(*field));
	field->name = name;
	return field;
}

/**
 * sfl_record_add_string:
 * @self: a record
 * @name: (transfer none): the field name, borrowed until the next reset
 * @value: (transfer none): valid UTF-8, NUL-terminated at @value[@len], borrowed too
 * @len: bytes in @value
 */
void
sfl_record_add_string(SflRecord *self, const gchar *name, const gchar *value, gsize len)
{
	SflField *field = sfl_record_push(self, name);
	field->type = SFL_VALUE_STRING;
	field->str = value != NULL ? value : "";
	field->len = value != NULL ? len : 0;
}

void
sfl_record_add_int(SflRecord *self, const gchar *name, gint64 value)
{
	SflField *field = sfl_record_push(self, name);
	field->type = SFL_VALUE_INT;
	field->i = value;
}

/* non-finite values render as Python does: Infinity/NaN in JSON, inf/nan in str() */
void
sfl_record_add_real(SflRecord *self, const gchar *name, gdouble value)
{
	SflField *field = sfl_record_push(self, name);
	field->type = SFL_VALUE_REAL;
	field->d = value;
}

void
sfl_record_add_bool(SflRecord *self, const gchar *name, gboolean value)
{
	SflField *field = sfl_record_push(self, name);
	field->type = SFL_VALUE_BOOL;
	field->b = value ? TRUE : FALSE;
}

void
sfl_record_add_null(SflRecord *self, const gchar *name)
{
	sfl_record_push(self, name)->type = SFL_VALUE_NULL;
}

static void
sfl_record_fill_json(SflField *field, json_t *value)
{
	switch (value == NULL ? JSON_NULL : json_typeof(value)) {
	case JSON_STRING:
		field->type = SFL_VALUE_STRING;
		field->str = json_string_value(value);
		field->len = json_string_length(value);
		break;
	case JSON_INTEGER:
		field->type = SFL_VALUE_INT;
		field->i = (gint64)json_integer_value(value);
		break;
	case JSON_REAL:
		field->type = SFL_VALUE_REAL;
		field->d = json_real_value(value);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		field->type = SFL_VALUE_BOOL;
		field->b = json_is_true(value);
		break;
	case JSON_OBJECT:
	case JSON_ARRAY:
		field->type = SFL_VALUE_JSON;
		field->json = value;
		break;
	case JSON_NULL:
	default:
		field->type = SFL_VALUE_NULL;
		break;
	}
}

/**
 * sfl_record_add_json:
 * @self: a record
 * @name: (transfer none): the field name, borrowed
 * @value: (transfer none) (nullable): the value, borrowed; %NULL is a JSON null
 */
void
sfl_record_add_json(SflRecord *self, const gchar *name, json_t *value)
{
	sfl_record_fill_json(sfl_record_push(self, name), value);
}

/**
 * sfl_record_add_json_object:
 * @self: a record
 * @object: (transfer none): a jansson object whose members are borrowed
 */
void
sfl_record_add_json_object(SflRecord *self, json_t *object)
{
	const char *key;
	json_t *value;

	if (!json_is_object(object))
		return;
	json_object_foreach (object, key, value)
		sfl_record_add_json(self, key, value);
}

guint
sfl_record_get_n_fields(const SflRecord *self)
{
	return self->n_fields;
}

/**
 * sfl_record_get_field:
 * @self: a record
 * @idx: below sfl_record_get_n_fields()
 *
 * Returns: (transfer none): the field
 */
const SflField *
sfl_record_get_field(const SflRecord *self, guint idx)
{
	g_return_val_if_fail(idx < self->n_fields, NULL);
	return &self->fields[idx];
}

/* the last of duplicate names wins, as in the dict the original built from the same row */
static gint
sfl_record_find(const SflRecord *self, const gchar *name)
{
	for (guint i = self->n_fields; i > 0; i--) {
		const gchar *n = self->fields[i - 1].name;
		/* the first byte settles most misses without a call; level probes ~10 names */
		if (n == name || (n[0] == name[0] && strcmp(n, name) == 0))
			return (gint)(i - 1);
	}
	return -1;
}

/**
 * sfl_record_lookup:
 * @self: a record
 * @name: the exact, case-sensitive name
 *
 * With duplicate names (a CSV header naming a column twice) the last one is the field, as
 * in a Python dict built from the row.
 *
 * Returns: (transfer none) (nullable): the field
 */
const SflField *
sfl_record_lookup(const SflRecord *self, const gchar *name)
{
	gint idx = sfl_record_find(self, name);
	return idx < 0 ? NULL : &self->fields[idx];
}

/**
 * sfl_record_lookup_string:
 * @self: a record
 * @name: the exact name
 *
 * Returns: (transfer none) (nullable): the NUL-terminated value of a string field
 */
const gchar *
sfl_record_lookup_string(const SflRecord *self, const gchar *name)
{
	const SflField *field = sfl_record_lookup(self, name);
	if (field == NULL || field->type != SFL_VALUE_STRING)
		return NULL;
	return field->str;
}

/**
 * sfl_record_set_string:
 * @self: a record
 * @name: the field name; copied into the arena when the field is appended
 * @value: the new value, copied into the arena
 * @len: bytes in @value, or -1 when NUL-terminated
 *
 * Replaces the value of the field (the last one of duplicates) keeping its position, or
 * appends the field.
 */
void
sfl_record_set_string(SflRecord *self, const gchar *name, const gchar *value, gssize len)
{
	gint idx = sfl_record_find(self, name);
	gsize n = len < 0 ? strlen(value) : (gsize)len;
	const gchar *copy = sfl_record_intern(self, value, (gssize)n);
	SflField *field;

	if (idx < 0)
		field = sfl_record_push(self, sfl_record_intern(self, name, -1));
	else
		field = &self->fields[idx];
	field->type = SFL_VALUE_STRING;
	field->str = copy;
	field->len = n;
	field->json = NULL;
}

/**
 * sfl_record_remove:
 * @self: a record
 * @name: the exact name
 *
 * Removes every field called @name, keeping the order of the others.
 *
 * Returns: whether anything was removed
 */
gboolean
sfl_record_remove(SflRecord *self, const gchar *name)
{
	guint kept = 0;
	guint n = self->n_fields;

	for (guint i = 0; i < n; i++) {
		if (strcmp(self->fields[i].name, name) == 0)
			continue;
		if (kept != i)
			self->fields[kept] = self->fields[i];
		kept++;
	}
	self->n_fields = kept;
	return kept != n;
}

/* --- numbers -------------------------------------------------------------------------------- */

/*
 * Splits a "d.ddde±XX" string into its digits and exponent; FALSE for anything else.
 */
static gboolean
sfl_float_split(const gchar *text, gchar *digits, guint *n_digits, gint *exponent)
{
	guint n = 0;
	const gchar *p = text;

	for (; *p != '\0' && *p != 'e' && *p != 'E'; p++) {
		if (g_ascii_isdigit(*p) && n < 24)
			digits[n++] = *p;
	}
	if (*p == '\0' || n == 0)
		return FALSE;
	*exponent = (gint)g_ascii_strtoll(p + 1, NULL, 10);
	*n_digits = n;
	return TRUE;
}

/* d.ddd × 10^exponent back into a double, with the C locale */
static gdouble
sfl_float_join(const gchar *digits, guint n_digits, gint exponent)
{
	gchar buf[64];
	gchar *p = buf;

	*p++ = digits[0];
	if (n_digits > 1) {
		*p++ = '.';
		memcpy(p, digits + 1, n_digits - 1);
		p += n_digits - 1;
	}
	g_snprintf(p, sizeof(buf) - (gsize)(p - buf), "e%d", exponent);
	return g_ascii_strtod(buf, NULL);
}

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 SflU128;

/*
 * The shortest digits that read back as @value, nearest to it among equals: what repr() prints
 * (David Gay's mode 0). The generic path below formats and re-parses up to 17 times, which
 * made doubles the main cost of a Pub/Sub event; this one does it exactly in 128-bit integers
 * for normal values from about 1e-4 to 2^53, where value * 10^k stays below 2^126 for the
 * k <= 21 that 17 digits need. FALSE sends anything else (and exact ties) to the generic path.
 *
 * value = f * 2^e with e < 0, so value * 10^k = X / 2^s with X = f * 10^k and s = -e. The
 * decimals that read back as value are those inside its rounding interval, half an ulp either
 * side (a quarter below at the bottom of a binade), ends included when f is even (ties round
 * to even). Scaled by 2^(s+2) everything is an integer: the interval is 4X - lo .. 4X + hi.
 */
static gboolean
sfl_float_shortest_fast(gdouble value, gchar *digits, guint *n_digits, gint *decpt)
{
	guint64 bits;
	guint64 frac;
	gint biased;
	guint64 f;
	gint e;
	guint s;
	gboolean even;
	SflU128 pow10 = 1;

	memcpy(&bits, &value, sizeof(bits));
	frac = bits & ((G_GUINT64_CONSTANT(1) << 52) - 1);
	biased = (gint)((bits >> 52) & 0x7ff);
	if (biased == 0 || biased == 0x7ff || (bits >> 63) != 0)
		return FALSE;
	f = frac | (G_GUINT64_CONSTANT(1) << 52);
	e = biased - 1075;
	if (e > 0 || e < -120)
		return FALSE;
	s = (guint)-e;
	even = (f & 1) == 0;

	for (guint k = 0; k <= 21; k++, pow10 *= 10) {
		SflU128 x4 = ((SflU128)f * pow10) << 2;
		SflU128 hi = pow10 << 1;
		SflU128 lo = frac == 0 && biased > 1 ? pow10 : pow10 << 1;
		SflU128 floor_m = ((SflU128)f * pow10) >> s;
		SflU128 best = 0;
		SflU128 best_dist = 0;
		gboolean found = FALSE;
		gboolean tie = FALSE;
		gchar buf[24];
		guint n = 0;
		guint64 m;

		for (SflU128 c = floor_m; c <= floor_m + 1; c++) {
			SflU128 scaled = c << (s + 2);
			SflU128 dist = scaled >= x4 ? scaled - x4 : x4 - scaled;
			gboolean inside = scaled >= x4 ? (even ? dist <= hi : dist < hi)
						       : (even ? dist <= lo : dist < lo);

			if (!inside || c == 0)
				continue;
			if (found && dist == best_dist)
				tie = TRUE;
			if (!found || dist < best_dist) {
				best = c;
				best_dist = dist;
			}
			found = TRUE;
		}
		if (!found)
			continue;
		if (tie || best >= G_GUINT64_CONSTANT(10000000000000000000))
			return FALSE;
		m = (guint64)best;
		while (m != 0) {
			buf[n++] = (gchar)('0' + m % 10);
			m /= 10;
		}
		*decpt = (gint)n - (gint)k;
		/* the digits are reversed: drop trailing zeros, then turn them around */
		{
			guint skip = 0;
			while (skip + 1 < n && buf[skip] == '0')
				skip++;
			*n_digits = n - skip;
			for (guint i = 0; i < n - skip; i++)
				digits[i] = buf[n - 1 - i];
		}
		return TRUE;
	}
	return FALSE;
}
#else
static gboolean
sfl_float_shortest_fast(gdouble value, gchar *digits, guint *n_digits, gint *decpt)
{
	return FALSE;
}
#endif

/*
 * The shortest digit string that reads back as @value (> 0, finite), as David Gay's dtoa
 * mode 0 gives Python: the correctly rounded p digits for the smallest p that round-trips.
 * Near a power of two the interval that rounds to @value is lopsided, so when the nearest
 * p-digit number misses it the neighbour on the other side may still hit it.
 */
static void
sfl_float_shortest(gdouble value, gchar *digits, guint *n_digits, gint *decpt)
{
	if (sfl_float_shortest_fast(value, digits, n_digits, decpt))
		return;
	for (gint prec = 1; prec <= 17; prec++) {
		gchar buf[64];
		gchar fmt[8];
		guint n = 0;
		gint exponent = 0;
		gdouble back;

		g_snprintf(fmt, sizeof(fmt), "%%.%de", prec - 1);
		g_ascii_formatd(buf, sizeof(buf), fmt, value);
		if (!sfl_float_split(buf, digits, &n, &exponent))
			break;
		back = g_ascii_strtod(buf, NULL);
		if (back != value && prec < 17) {
			gchar alt[24];
			gint alt_exp = exponent;
			guint alt_n = n;
			gint i;

			memcpy(alt, digits, n);
			if (back < value) {
				for (i = (gint)n - 1; i >= 0 && alt[i] == '9'; i--)
					alt[i] = '0';
				if (i < 0) {
					memmove(alt + 1, alt, n);
					alt[0] = '1';
					alt_exp++;
				} else {
					alt[i]++;
				}
			} else {
				for (i = (gint)n - 1; i >= 0 && alt[i] == '0'; i--)
					alt[i] = '9';
				if (i >= 0)
					alt[i]--;
				if (alt[0] == '0' && alt_n > 1) {
					memmove(alt, alt + 1, alt_n - 1);
					alt_n--;
					alt_exp--;
				}
			}
			if (alt[0] != '0' && sfl_float_join(alt, alt_n, alt_exp) == value) {
				memcpy(digits, alt, alt_n);
				n = alt_n;
				exponent = alt_exp;
				back = value;
			}
		}
		if (back == value || prec == 17) {
			while (n > 1 && digits[n - 1] == '0')
				n--;
			*n_digits = n;
			*decpt = exponent + 1;
			return;
		}
	}
	/* unreachable for finite values: 17 significant digits always round-trip */
	digits[0] = '0';
	*n_digits = 1;
	*decpt = 1;
}

/**
 * sfl_append_pyfloat:
 * @out: where to append
 * @value: any double
 *
 * Appends Python's repr(float): the shortest round-trip digits, positional between 1e-4 and
 * 1e16 with at least one decimal ("1.0"), else scientific with a two-digit exponent
 * ("1e-05", "1.5e+300"); "inf", "-inf", "nan".
 */
void
sfl_append_pyfloat(GString *out, gdouble value)
{
	gchar digits[24];
	guint n = 0;
	gint decpt = 0;

	if (isnan(value)) {
		g_string_append(out, "nan");
		return;
	}
	if (isinf(value)) {
		g_string_append(out, value < 0 ? "-inf" : "inf");
		return;
	}
	if (signbit(value))
		g_string_append_c(out, '-');
	if (value == 0) {
		g_string_append(out, "0.0");
		return;
	}
	sfl_float_shortest(fabs(value), digits, &n, &decpt);

	if (decpt <= -4 || decpt > 16) {
		gint exponent = decpt - 1;
		g_string_append_c(out, digits[0]);
		if (n > 1) {
			g_string_append_c(out, '.');
			g_string_append_len(out, digits + 1, (gssize)n - 1);
		}
		g_string_append_printf(out, "e%c%02d", exponent < 0 ? '-' : '+', ABS(exponent));
	} else if (decpt <= 0) {
		g_string_append(out, "0.");
		for (gint i = decpt; i < 0; i++)
			g_string_append_c(out, '0');
		g_string_append_len(out, digits, (gssize)n);
	} else if ((guint)decpt >= n) {
		g_string_append_len(out, digits, (gssize)n);
		for (guint i = n; i < (guint)decpt; i++)
			g_string_append_c(out, '0');
		g_string_append(out, ".0");
	} else {
		g_string_append_len(out, digits, decpt);
		g_string_append_c(out, '.');
		g_string_append_len(out, digits + decpt, (gssize)n - decpt);
	}
}

/* --- canonical JSON ------------------------------------------------------------------------- */

/* grows @out so @extra more bytes fit, and returns where they go; the caller sets len */
static inline gchar *
sfl_json_reserve(GString *out, gsize extra)
{
	gsize len = out->len;
	if (out->allocated_len <= len + extra) {
		g_string_set_size(out, len + extra);
		out->len = len;
	}
	return out->str + len;
}

#define SFL_ONES  G_GUINT64_CONSTANT(0x0101010101010101)
#define SFL_HIGHS G_GUINT64_CONSTANT(0x8080808080808080)

/* eight bytes at a time: no byte below 0x20, none from 0x7f up, no quote, no backslash */
static inline gboolean
sfl_json_all_plain(const gchar *s, gsize len)
{
	gsize i = 0;

	for (; i + 8 <= len; i += 8) {
		guint64 w;
		guint64 q;
		guint64 b;
		guint64 d;

		memcpy(&w, s + i, 8);
		q = w ^ (SFL_ONES * '"');
		b = w ^ (SFL_ONES * '\\');
		d = w ^ (SFL_ONES * 0x7f);
		if (((w & SFL_HIGHS) | ((w - SFL_ONES * 0x20) & ~w & SFL_HIGHS) |
		     ((q - SFL_ONES) & ~q & SFL_HIGHS) | ((b - SFL_ONES) & ~b & SFL_HIGHS) |
		     ((d - SFL_ONES) & ~d & SFL_HIGHS)) != 0)
			return FALSE;
	}
	for (; i < len; i++) {
		if (!sfl_pyjson_plain[(guchar)s[i]])
			return FALSE;
	}
	return TRUE;
}

/* a quoted ensure_ascii JSON string; plain printable ASCII is one scan and one copy */
static inline void
sfl_json_append_str(GString *out, const gchar *s, gsize len)
{
	const guchar *u = (const guchar *)s;
	gsize i = 0;
	gchar *dst;

	if (sfl_json_all_plain(s, len)) {
		dst = sfl_json_reserve(out, len + 2);
		dst[0] = '"';
		memcpy(dst + 1, s, len);
		dst[len + 1] = '"';
		out->len += len + 2;
		out->str[out->len] = '\0';
		return;
	}
	while (i < len && sfl_pyjson_plain[u[i]])
		i++;
	g_string_append_c(out, '"');
	g_string_append_len(out, s, (gssize)i);
	sfl_pyjson_append_escaped(out, s + i, len - i);
	g_string_append_c(out, '"');
}

static void
sfl_json_append_pyfloat(GString *out, gdouble value)
{
	if (isnan(value))
		g_string_append(out, "NaN");
	else if (isinf(value))
		g_string_append(out, value < 0 ? "-Infinity" : "Infinity");
	else
		sfl_append_pyfloat(out, value);
}

static gint
sfl_json_key_cmp(gconstpointer a, gconstpointer b)
{
	const gchar *ka = *(const gchar *const *)a;
	const gchar *kb = *(const gchar *const *)b;
	return strcmp(ka, kb);
}

static void sfl_json_append_value(GString *out, json_t *value);

static void
sfl_json_append_object(GString *out, json_t *object)
{
	const gchar *stack_keys[SFL_JSON_STACK_KEYS];
	g_autofree const gchar **heap_keys = NULL;
	const gchar **keys = stack_keys;
	gsize n = json_object_size(object);
	gsize i = 0;
	const char *key;
	json_t *value;

	if (n > SFL_JSON_STACK_KEYS)
		keys = heap_keys = g_new(const gchar *, n);
	json_object_foreach (object, key, value) {
		if (i < n)
			keys[i++] = key;
	}
	n = i;
	qsort(keys, n, sizeof(*keys), sfl_json_key_cmp);

	g_string_append_c(out, '{');
	for (i = 0; i < n; i++) {
		if (i > 0)
			g_string_append_len(out, ", ", 2);
		sfl_json_append_str(out, keys[i], strlen(keys[i]));
		g_string_append_len(out, ": ", 2);
		sfl_json_append_value(out, json_object_get(object, keys[i]));
	}
	g_string_append_c(out, '}');
}

static void
sfl_json_append_value(GString *out, json_t *value)
{
	switch (value == NULL ? JSON_NULL : json_typeof(value)) {
	case JSON_OBJECT:
		sfl_json_append_object(out, value);
		break;
	case JSON_ARRAY:
		g_string_append_c(out, '[');
		for (gsize i = 0; i < json_array_size(value); i++) {
			if (i > 0)
				g_string_append_len(out, ", ", 2);
			sfl_json_append_value(out, json_array_get(value, i));
		}
		g_string_append_c(out, ']');
		break;
	case JSON_STRING:
		sfl_json_append_str(out, json_string_value(value), json_string_length(value));
		break;
	case JSON_INTEGER:
		sfl_pyjson_append_int64(out, (gint64)json_integer_value(value));
		break;
	case JSON_REAL:
		sfl_json_append_pyfloat(out, json_real_value(value));
		break;
	case JSON_TRUE:
		g_string_append_len(out, "true", 4);
		break;
	case JSON_FALSE:
		g_string_append_len(out, "false", 5);
		break;
	case JSON_NULL:
	default:
		g_string_append_len(out, "null", 4);
		break;
	}
}

static void
sfl_json_append_field(GString *out, const SflField *field)
{
	switch (field->type) {
	case SFL_VALUE_STRING:
		sfl_json_append_str(out, field->str, field->len);
		break;
	case SFL_VALUE_INT:
		sfl_pyjson_append_int64(out, field->i);
		break;
	case SFL_VALUE_REAL:
		sfl_json_append_pyfloat(out, field->d);
		break;
	case SFL_VALUE_BOOL:
		if (field->b)
			g_string_append_len(out, "true", 4);
		else
			g_string_append_len(out, "false", 5);
		break;
	case SFL_VALUE_JSON:
		sfl_json_append_value(out, field->json);
		break;
	case SFL_VALUE_NULL:
	default:
		g_string_append_len(out, "null", 4);
		break;
	}
}

/* names by code point (strcmp on UTF-8), equal names by position so the last one is known */
static gint
sfl_record_perm_cmp(gconstpointer a, gconstpointer b, gpointer user_data)
{
	const SflRecord *self = user_data;
	guint ia = *(const guint *)a;
	guint ib = *(const guint *)b;
	gint c = strcmp(self->fields[ia].name, self->fields[ib].name);
	if (c != 0)
		return c;
	return ia < ib ? -1 : (ia > ib ? 1 : 0);
}

/* whether the cached order still sorts the names; notes equal neighbours on the way */
static gboolean
sfl_record_perm_valid(const SflRecord *self, gboolean *has_dups)
{
	gboolean dups = FALSE;

	if (self->perm_n != self->n_fields)
		return FALSE;
	for (guint i = 1; i < self->n_fields; i++) {
		guint a = self->perm[i - 1];
		guint b = self->perm[i];
		gint c = strcmp(self->fields[a].name, self->fields[b].name);
		if (c > 0 || (c == 0 && a > b))
			return FALSE;
		dups |= c == 0;
	}
	*has_dups = dups;
	return TRUE;
}

/*
 * The permutation that sorts the names. Only the order of the previous row is kept and
 * checked, never trusted by pointer: a header freed and another allocated at the same
 * address, or arena names of the previous row, may hold other text. The cache is the
 * record's own scratch, so rendering stays logically const.
 */
static const guint *
sfl_record_sorted(const SflRecord *cself, gboolean *has_dups)
{
	SflRecord *self = (SflRecord *)cself;

	if (sfl_record_perm_valid(self, has_dups))
		return self->perm;
	if (self->perm_cap < self->n_fields) {
		self->perm_cap = MAX(self->n_fields, 32);
		self->perm = g_renew(guint, self->perm, self->perm_cap);
	}
	for (guint i = 0; i < self->n_fields; i++)
		self->perm[i] = i;
	self->perm_n = self->n_fields;
	g_qsort_with_data(self->perm, (gint)self->n_fields, sizeof(guint), sfl_record_perm_cmp,
			  self);
	if (!sfl_record_perm_valid(self, has_dups))
		g_assert_not_reached();
	return self->perm;
}

/*
 * One member, ", " first unless @first. A string member whose name and value need no
 * escaping (nearly every ELF cell) is written with one reservation and two copies.
 */
static inline void
sfl_json_append_member(GString *out, const SflField *field, gboolean first)
{
	gsize name_len = strlen(field->name);

	if (field->type == SFL_VALUE_STRING && sfl_json_all_plain(field->name, name_len) &&
	    sfl_json_all_plain(field->str, field->len)) {
		gchar *dst = sfl_json_reserve(out, name_len + field->len + 8);
		gchar *p = dst;
		if (!first) {
			*p++ = ',';
			*p++ = ' ';
		}
		*p++ = '"';
		memcpy(p, field->name, name_len);
		p += name_len;
		memcpy(p, "\": \"", 4);
		p += 4;
		memcpy(p, field->str, field->len);
		p += field->len;
		*p++ = '"';
		out->len += (gsize)(p - dst);
		out->str[out->len] = '\0';
		return;
	}
	if (!first)
		g_string_append_len(out, ", ", 2);
	sfl_json_append_str(out, field->name, name_len);
	g_string_append_len(out, ": ", 2);
	sfl_json_append_field(out, field);
}

/**
 * sfl_record_append_json:
 * @self: a record
 * @out: where to append
 *
 * Appends json.dumps(payload, sort_keys=True) of the record. Of duplicate names only the
 * last field is written, as the dict the original built from the row held only that one.
 */
void
sfl_record_append_json(const SflRecord *self, GString *out)
{
	const guint *perm;
	gboolean has_dups = FALSE;
	gboolean first = TRUE;

	if (self->n_fields == 0) {
		g_string_append_len(out, "{}", 2);
		return;
	}
	perm = sfl_record_sorted(self, &has_dups);
	g_string_append_c(out, '{');
	for (guint i = 0; i < self->n_fields; i++) {
		const SflField *field = &self->fields[perm[i]];
		if (has_dups && i + 1 < self->n_fields &&
		    strcmp(field->name, self->fields[perm[i + 1]].name) == 0)
			continue;
		sfl_json_append_member(out, field, first);
		first = FALSE;
	}
	g_string_append_c(out, '}');
}

/* --- Python str() and repr() ---------------------------------------------------------------- */

/* str.isprintable(): everything but Other and Separator categories, the space excepted */
static gboolean
sfl_py_isprintable(gunichar c)
{
	if (c == ' ')
		return TRUE;
	switch (g_unichar_type(c)) {
	case G_UNICODE_CONTROL:
	case G_UNICODE_FORMAT:
	case G_UNICODE_UNASSIGNED:
	case G_UNICODE_PRIVATE_USE:
	case G_UNICODE_SURROGATE:
	case G_UNICODE_LINE_SEPARATOR:
	case G_UNICODE_PARAGRAPH_SEPARATOR:
	case G_UNICODE_SPACE_SEPARATOR:
		return FALSE;
	default:
		return TRUE;
	}
}

static void
sfl_py_append_repr_str(GString *out, const gchar *s, gsize len)
{
	const gchar *end = s + len;
	gboolean has_single = memchr(s, '\'', len) != NULL;
	gboolean has_double = memchr(s, '"', len) != NULL;
	gchar quote = has_single && !has_double ? '"' : '\'';

	g_string_append_c(out, quote);
	for (const gchar *p = s; p < end;) {
		gunichar c = g_utf8_get_char_validated(p, end - p);
		const gchar *next;

		if (c == (gunichar)-1 || c == (gunichar)-2) {
			c = 0xfffd;
			next = p + 1;
		} else {
			next = g_utf8_next_char(p);
		}
		if (c == (gunichar)quote || c == '\\') {
			g_string_append_c(out, '\\');
			g_string_append_c(out, (gchar)c);
		} else if (c == '\t') {
			g_string_append(out, "\\t");
		} else if (c == '\n') {
			g_string_append(out, "\\n");
		} else if (c == '\r') {
			g_string_append(out, "\\r");
		} else if (c < 0x20 || c == 0x7f) {
			g_string_append_printf(out, "\\x%02x", c);
		} else if (c < 0x7f) {
			g_string_append_c(out, (gchar)c);
		} else if (sfl_py_isprintable(c)) {
			g_string_append_len(out, p, next - p);
		} else if (c <= 0xff) {
			g_string_append_printf(out, "\\x%02x", c);
		} else if (c <= 0xffff) {
			g_string_append_printf(out, "\\u%04x", c);
		} else {
			g_string_append_printf(out, "\\U%08x", c);
		}
		p = next;
	}
	g_string_append_c(out, quote);
}

static void
sfl_py_append_repr_json(GString *out, json_t *value)
{
	const char *key;
	json_t *member;
	gboolean first = TRUE;

	switch (value == NULL ? JSON_NULL : json_typeof(value)) {
	case JSON_OBJECT:
		g_string_append_c(out, '{');
		json_object_foreach (value, key, member) {
			if (!first)
				g_string_append(out, ", ");
			first = FALSE;
			sfl_py_append_repr_str(out, key, strlen(key));
			g_string_append(out, ": ");
			sfl_py_append_repr_json(out, member);
		}
		g_string_append_c(out, '}');
		break;
	case JSON_ARRAY:
		g_string_append_c(out, '[');
		for (gsize i = 0; i < json_array_size(value); i++) {
			if (i > 0)
				g_string_append(out, ", ");
			sfl_py_append_repr_json(out, json_array_get(value, i));
		}
		g_string_append_c(out, ']');
		break;
	case JSON_STRING:
		sfl_py_append_repr_str(out, json_string_value(value), json_string_length(value));
		break;
	case JSON_INTEGER:
		sfl_pyjson_append_int64(out, (gint64)json_integer_value(value));
		break;
	case JSON_REAL:
		sfl_append_pyfloat(out, json_real_value(value));
		break;
	case JSON_TRUE:
		g_string_append(out, "True");
		break;
	case JSON_FALSE:
		g_string_append(out, "False");
		break;
	case JSON_NULL:
	default:
		g_string_append(out, "None");
		break;
	}
}

/**
 * sfl_field_append_pystr:
 * @field: a field
 * @out: where to append
 *
 * Appends Python's str(value): strings as they are, "True"/"False", "None" for null (callers
 * that route metadata skip nulls before), repr floats, and the repr of nested dicts and lists
 * with their members in their own order.
 */
void
sfl_field_append_pystr(const SflField *field, GString *out)
{
	switch (field->type) {
	case SFL_VALUE_STRING:
		g_string_append_len(out, field->str, (gssize)field->len);
		break;
	case SFL_VALUE_INT:
		sfl_pyjson_append_int64(out, field->i);
		break;
	case SFL_VALUE_REAL:
		sfl_append_pyfloat(out, field->d);
		break;
	case SFL_VALUE_BOOL:
		g_string_append(out, field->b ? "True" : "False");
		break;
	case SFL_VALUE_JSON:
		sfl_py_append_repr_json(out, field->json);
		break;
	case SFL_VALUE_NULL:
	default:
		g_string_append(out, "None");
		break;
	}
}
