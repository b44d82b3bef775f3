/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>
#include <jansson.h>

G_BEGIN_DECLS

/*
 * SflRecord: one source payload (a CSV row, a SOQL record, an ApexLog's metadata) as an
 * ordered list of named fields, cheap to fill once per row and reusable across rows.
 *
 * Field names and string values are borrowed (the CSV header, the parser's record, the
 * jansson document) unless set through sfl_record_set_string(), which copies into the
 * record's own arena; sfl_record_reset() empties the record and the arena for the next row.
 * Borrowed string values must be NUL-terminated at str[len] (CSV fields and jansson strings
 * are), so sfl_record_lookup_string() can hand them out as C strings.
 *
 * Duplicate names (a CSV header naming a column twice) behave like the Python dict the
 * original built from the row: lookups and the JSON line see the last one only.
 *
 * Rendering follows the original's Python
 * (docs/differences-from-python.md, "Kept as in the original"):
 *  - sfl_record_append_json(): json.dumps(payload, sort_keys=True) — keys sorted by code
 *    point, ", " and ": " separators, ensure_ascii, floats in repr form, nested objects
 *    sorted too. Replays render identical bytes, which is what lets Loki collapse duplicates.
 *  - sfl_field_append_pystr(): Python str(value) — True/False, repr floats, Python repr of
 *    nested dicts and lists (single quotes).
 *
 * Threading: one record per thread.
 */

typedef enum {
	SFL_VALUE_NULL,
	SFL_VALUE_STRING,
	SFL_VALUE_INT,
	SFL_VALUE_REAL,
	SFL_VALUE_BOOL,
	SFL_VALUE_JSON, /* a nested object or array (borrowed jansson value) */
} SflValueType;

typedef struct {
	const gchar *name;
	SflValueType type;
	const gchar *str; /* STRING: valid UTF-8 */
	gsize len;	  /* STRING: bytes */
	gint64 i;	  /* INT */
	gdouble d;	  /* REAL */
	gboolean b;	  /* BOOL */
	json_t *json;	  /* JSON */
} SflField;

typedef struct _SflRecord SflRecord;

SflRecord *sfl_record_new(void) G_GNUC_WARN_UNUSED_RESULT;
void sfl_record_free(SflRecord *self);
void sfl_record_reset(SflRecord *self);

void sfl_record_add_string(SflRecord *self, const gchar *name, const gchar *value, gsize len);
/* any jansson value; objects and arrays become SFL_VALUE_JSON */
void sfl_record_add_json(SflRecord *self, const gchar *name, json_t *value);
/* typed values without a jansson document (e.g. decoded Avro) */
void sfl_record_add_int(SflRecord *self, const gchar *name, gint64 value);
void sfl_record_add_real(SflRecord *self, const gchar *name, gdouble value);
void sfl_record_add_bool(SflRecord *self, const gchar *name, gboolean value);
void sfl_record_add_null(SflRecord *self, const gchar *name);
/* every member of a jansson object, in the object's order */
void sfl_record_add_json_object(SflRecord *self, json_t *object);

guint sfl_record_get_n_fields(const SflRecord *self);
const SflField *sfl_record_get_field(const SflRecord *self, guint idx);
/* exact, case-sensitive; NULL when absent */
const SflField *sfl_record_lookup(const SflRecord *self, const gchar *name);
/* the field as text when it is a string, else NULL */
const gchar *sfl_record_lookup_string(const SflRecord *self, const gchar *name);

/*
 * replaces the value (or appends the field), copying @value into the record's arena; an
 * appended field's name is copied too
 */
void sfl_record_set_string(SflRecord *self, const gchar *name, const gchar *value, gssize len);
/* removes every field called @name */
gboolean sfl_record_remove(SflRecord *self, const gchar *name);
/* a copy in the record's arena, valid until the next reset */
const gchar *sfl_record_intern(SflRecord *self, const gchar *text, gssize len);

void sfl_record_append_json(const SflRecord *self, GString *out);
void sfl_field_append_pystr(const SflField *field, GString *out);
/* Python repr() of a float, e.g. 1.0, 1e-05, 1e+16, inf, nan */
void sfl_append_pyfloat(GString *out, gdouble value);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflRecord, sfl_record_free)

G_END_DECLS
