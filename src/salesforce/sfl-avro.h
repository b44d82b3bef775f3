/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <glib.h>
#include <jansson.h>

#include "sfl-record.h"

G_BEGIN_DECLS

/*
 * Pub/Sub event payloads are Avro binary datums written with a schema fetched once per schema
 * id (GetSchema). The decoder renders each datum straight into the JSON line the original
 * printed (docs/differences-from-python.md, "Kept as in the original"), so there is no intermediate
 * value tree per event.
 */

typedef struct _SflAvroSchema SflAvroSchema;

typedef enum {
	SFL_AVRO_SCHEMA_DEFAULT = 0,
	/* sources.pubsub.cdc_field_names: line — each CDC bitmap field of a record named
	 * ChangeEventHeader (changedFields, nulledFields, diffFields: arrays of strings) gets a
	 * sibling changedFieldNames / nulledFieldNames / diffFieldNames in the line, the
	 * field names its bitmaps select (a schema field of that name keeps its own) */
	SFL_AVRO_SCHEMA_CDC_NAMES_IN_LINE = 1 << 0,
} SflAvroSchemaFlags;

/* a parsed writer schema (Avro JSON text as GetSchema returns it) rendering the original's
 * line; _full() with @flags for the additions above */
SflAvroSchema *sfl_avro_schema_new(const gchar *schema_json, GError **error);
SflAvroSchema *
sfl_avro_schema_new_full(const gchar *schema_json, SflAvroSchemaFlags flags, GError **error);
SflAvroSchema *sfl_avro_schema_ref(SflAvroSchema *schema);
void sfl_avro_schema_unref(SflAvroSchema *schema);

/*
 * Decodes one binary-encoded datum and appends its JSON rendering (the original's rules,
 * docs/differences-from-python.md) to
 * @out. On a bad payload returns FALSE with %SFL_ERROR_CORRUPT naming what was wrong and
 * leaves @out as it was. Never reads past @len; bytes after the datum are ignored, as the
 * original's reader ignores them.
 *
 * The line is json.dumps(event, sort_keys=True, default=str) of the original's decoded event:
 * records as objects, unions unwrapped, enums as symbols, bytes and fixed as Python's str() of
 * them (b'...', then escaped as any JSON string), floats in repr form (NaN/Infinity bare),
 * ensure_ascii. CDC bitmap fields stay as they came, unless the schema was made with
 * %SFL_AVRO_SCHEMA_CDC_NAMES_IN_LINE.
 *
 * Thread-safe: a schema is immutable once made.
 */
gboolean sfl_avro_render_json(SflAvroSchema *schema, const guint8 *data, gsize len, GString *out,
			      GError **error);

/*
 * The same event as typed fields, for a source that shapes it (transforms, metadata,
 * timestamps) without parsing the line back: the top-level fields of a record schema go into
 * @record as the original's dict held them (strings, ints, floats, bools, nulls; enums as
 * their symbol, bytes and fixed as their str() text b'...', which is also what the original's
 * transforms and metadata saw), nested records, arrays and maps as jansson values that *@holder
 * keeps alive (free it after resetting @record). Field names are borrowed from @schema.
 * sfl_record_append_json() on the result writes exactly the sfl_avro_render_json() line. A
 * NaN or Infinity inside a nested value cannot be held by jansson and fails the decode.
 */
gboolean sfl_avro_decode_record(SflAvroSchema *schema, const guint8 *data, gsize len,
				SflRecord *record, json_t **holder, GError **error);

/*
 * The field names a decoded CDC bitmap field (changedFields, nulledFields or diffFields of the
 * event's ChangeEventHeader) selects: top-level field names, "Parent.Child" for the fields of
 * compound ones (docs/internals/wire-notes.md, "Change Data Capture bitmap fields"), appended to
 * @out separated by ",". FALSE when it names none (or is not an array of strings).
 */
gboolean
sfl_avro_schema_append_cdc_names(SflAvroSchema *schema, const json_t *bitmaps, GString *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SflAvroSchema, sfl_avro_schema_unref)

G_END_DECLS
