/*
 * Copyright 2026 sf2loki contributors
 * SPDX-License-Identifier: Apache-2.0
 */
#define G_LOG_DOMAIN "SflAvro"

#include "config.h"

#include "sfl-avro.h"

#include <math.h>
#include <string.h>

#include <avro.h>

#include "sfl-autocleanups.h"
#include "sfl-error.h"
#include "sfl-pyjson.h"
#include "sfl-record.h"

/*
 * avro-c parses and validates the writer schema (names, references, recursion); the schema is
 * then compiled into the node graph below, and a hand-written reader walks it over the payload,
 * writing JSON as it goes. avro-c's generic value API builds a value tree per event (its
 * decode alone costs about what this decode plus rendering does, see bench/bench-avro.c) and
 * allocates whatever length a corrupt payload claims; this reader allocates nothing per value,
 * bounds every read, and renders in the original's order (json.dumps with sort_keys) by laying
 * each record out in schema order and then permuting the finished members.
 */

/* records, arrays and maps nested deeper than this are refused: only a recursive schema gets
 * there, and the limit keeps a hostile payload from exhausting the stack */
#define SFL_AVRO_MAX_DEPTH 64

/* schema JSON nested deeper than this is refused while compiling */
#define SFL_AVRO_MAX_SCHEMA_DEPTH 256

/* array and map items that may take no payload bytes (nulls, empty records) are rationed per
 * datum, or eight bytes could claim 2^63 of them */
#define SFL_AVRO_MAX_EMPTY_ITEMS (1u << 16)

/* a rendering longer than this is refused: Pub/Sub events are at most 1 MB, and a few bytes of
 * arrays of wide all-null records must not render gigabytes */
#define SFL_AVRO_MAX_LINE (64u << 20)

#define SFL_AVRO_N_BITMAPS 3

typedef enum {
	SFL_AVRO_NULL,
	SFL_AVRO_BOOLEAN,
	SFL_AVRO_INT,
	SFL_AVRO_LONG,
	SFL_AVRO_FLOAT,
	SFL_AVRO_DOUBLE,
	SFL_AVRO_BYTES,
	SFL_AVRO_STRING,
	SFL_AVRO_RECORD,
	SFL_AVRO_ENUM,
	SFL_AVRO_ARRAY,
	SFL_AVRO_MAP,
	SFL_AVRO_UNION,
	SFL_AVRO_FIXED,
} SflAvroKind;

typedef struct _SflAvroNode SflAvroNode;

/*
 * A member of a rendered record: a field of the schema, or (CDC headers only) the field-name
 * list decoded from the bitmap field at index @source.
 */
typedef struct {
	gchar *name;
	gchar *key_json; /* the quoted name plus ": ", ready to append */
	gsize key_len;
	SflAvroNode *type; /* NULL for a bitmap expansion */
	guint source;
} SflAvroMember;

struct _SflAvroNode {
	SflAvroKind kind;
	gchar *name; /* records, enums and fixed: the short name, for error messages */

	/* record: n_fields schema fields, then n_members - n_fields bitmap expansions */
	SflAvroMember *members;
	guint n_fields;
	guint n_members;
	guint *order; /* member indexes by key code point, as sort_keys orders them */

	/* enum */
	gchar **symbols_json;
	gchar **symbols;
	guint n_symbols;

	/* array and map */
	SflAvroNode *items;

	/* union */
	SflAvroNode **branches;
	guint n_branches;

	/* fixed */
	gsize size;

	/* the fewest payload bytes a value takes (0 while a recursive record is being sized) */
	gsize min_size;
	gboolean sizing;
};

/* a compound top-level field of a CDC event: the "Parent.Child" names of its record, plain
 * and quoted */
typedef struct {
	gchar **child_names;
	gchar **child_json;
	guint n_children;
} SflAvroCompound;

struct _SflAvroSchema {
	gatomicrefcount ref;
	GPtrArray *nodes; /* every node, owned here; the graph may have cycles */
	SflAvroNode *root;

	SflAvroSchemaFlags flags;

	/* CDC bitmaps index the root record's fields; the plain names are the members' */
	gchar **root_field_names;
	gchar **root_field_json;
	SflAvroCompound *compounds;
	guint n_root_fields;
};

typedef struct {
	const guint8 *key;
	gsize key_len;
	guint seq;
	gsize start; /* of "key": value, from the start of the map */
	gsize len;
} SflAvroMapItem;

typedef struct {
	const SflAvroSchema *schema;
	const guint8 *begin;
	const guint8 *p;
	const guint8 *end;
	GString *out;
	GString *scratch;
	GArray *ends;	   /* gsize member end offsets, a stack shared by nested records */
	GArray *map_items; /* SflAvroMapItem, a stack shared by nested maps */
	guint depth;
	guint empty_items;
	gsize out_start;
	gchar *failure;	  /* the first error, without its location */
	GPtrArray *trail; /* field names from the failure outwards */
} SflAvroReader;

/* --- schema ---------------------------------------------------------------------------------- */

static void
sfl_avro_node_free(gpointer data)
{
	SflAvroNode *node = data;

	for (guint i = 0; i < node->n_members; i++) {
		g_free(node->members[i].name);
		g_free(node->members[i].key_json);
	}
	g_free(node->members);
	g_free(node->order);
	if (node->symbols_json != NULL) {
		for (guint i = 0; i < node->n_symbols; i++)
			g_free(node->symbols_json[i]);
		g_free(node->symbols_json);
	}
	if (node->symbols != NULL) {
		for (guint i = 0; i < node->n_symbols; i++)
			g_free(node->symbols[i]);
		g_free(node->symbols);
	}
	g_free(node->branches);
	g_free(node->name);
	g_free(node);
}

static SflAvroNode *
sfl_avro_node_new(SflAvroSchema *self, SflAvroKind kind)
{
	SflAvroNode *node = g_new0(SflAvroNode, 1);

	node->kind = kind;
	g_ptr_array_add(self->nodes, node);
	return node;
}

static gchar *
sfl_avro_json_string(const gchar *text, const gchar *suffix)
{
	GString *s = g_string_new(NULL);

	sfl_pyjson_append_string(s, text);
	if (suffix != NULL)
		g_string_append(s, suffix);
	return g_string_free(s, FALSE);
}

static gint
sfl_avro_member_cmp(gconstpointer a, gconstpointer b, gpointer user_data)
{
	const SflAvroMember *members = user_data;
	guint ia = *(const guint *)a;
	guint ib = *(const guint *)b;

	/* UTF-8 byte order is code point order, the order Python sorts keys in */
	return strcmp(members[ia].name, members[ib].name);
}

static void
sfl_avro_member_set(SflAvroMember *member, const gchar *name, SflAvroNode *type, guint source)
{
	member->name = g_strdup(name);
	member->key_json = sfl_avro_json_string(name, ": ");
	member->key_len = strlen(member->key_json);
	member->type = type;
	member->source = source;
}

/* array<string>, alone or in a union with null: the shape of the ChangeEventHeader bitmaps */
static gboolean
sfl_avro_is_bitmap_type(const SflAvroNode *type)
{
	if (type->kind == SFL_AVRO_UNION) {
		const SflAvroNode *array = NULL;
		for (guint i = 0; i < type->n_branches; i++) {
			const SflAvroNode *b = type->branches[i];
			if (b->kind == SFL_AVRO_ARRAY && array == NULL)
				array = b;
			else if (b->kind != SFL_AVRO_NULL)
				return FALSE;
		}
		type = array;
	}
	return type != NULL && type->kind == SFL_AVRO_ARRAY && type->items->kind == SFL_AVRO_STRING;
}

static gboolean
sfl_avro_has_member(const SflAvroNode *record, const gchar *name)
{
	for (guint i = 0; i < record->n_members; i++) {
		if (strcmp(record->members[i].name, name) == 0)
			return TRUE;
	}
	return FALSE;
}

/* the ChangeEventHeader bitmap fields, and the field-name lists rendered beside them */
static const gchar *const sfl_avro_bitmaps[SFL_AVRO_N_BITMAPS][2] = {
	{ "changedFields", "changedFieldNames" },
	{ "nulledFields", "nulledFieldNames" },
	{ "diffFields", "diffFieldNames" },
};

/*
 * A CDC ChangeEventHeader gets a field-name list beside each bitmap field: changedFields is
 * joined by changedFieldNames, and so on. A schema that already has such a field keeps its
 * own.
 */
static void
sfl_avro_add_bitmap_members(SflAvroNode *record)
{
	guint sources[SFL_AVRO_N_BITMAPS];
	const gchar *names[SFL_AVRO_N_BITMAPS];
	guint n_extra = 0;

	for (guint b = 0; b < SFL_AVRO_N_BITMAPS; b++) {
		if (sfl_avro_has_member(record, sfl_avro_bitmaps[b][1]))
			continue;
		for (guint i = 0; i < record->n_fields; i++) {
			const SflAvroMember *m = &record->members[i];
			if (strcmp(m->name, sfl_avro_bitmaps[b][0]) == 0 &&
			    sfl_avro_is_bitmap_type(m->type)) {
				sources[n_extra] = i;
				names[n_extra] = sfl_avro_bitmaps[b][1];
				n_extra++;
				break;
			}
		}
	}
	if (n_extra == 0)
		return;
	record->members = g_renew(SflAvroMember, record->members, record->n_members + n_extra);
	for (guint e = 0; e < n_extra; e++)
		sfl_avro_member_set(&record->members[record->n_members + e], names[e], NULL,
				    sources[e]);
	record->n_members += n_extra;
}

/* the primitive types, which compile to a node with nothing but its kind */
static const struct {
	avro_type_t avro;
	SflAvroKind kind;
} sfl_avro_primitives[] = {
	{ AVRO_NULL, SFL_AVRO_NULL },	{ AVRO_BOOLEAN, SFL_AVRO_BOOLEAN },
	{ AVRO_INT32, SFL_AVRO_INT },	{ AVRO_INT64, SFL_AVRO_LONG },
	{ AVRO_FLOAT, SFL_AVRO_FLOAT }, { AVRO_DOUBLE, SFL_AVRO_DOUBLE },
	{ AVRO_BYTES, SFL_AVRO_BYTES }, { AVRO_STRING, SFL_AVRO_STRING },
};

static SflAvroNode *sfl_avro_compile(SflAvroSchema *self, avro_schema_t s, GHashTable *named,
				     guint depth, GError **error);

static SflAvroNode *
sfl_avro_compile_record(SflAvroSchema *self, avro_schema_t s, GHashTable *named, guint depth,
			GError **error)
{
	SflAvroNode *node = sfl_avro_node_new(self, SFL_AVRO_RECORD);
	gsize n = avro_schema_record_size(s);

	node->name = g_strdup(avro_schema_name(s));
	/* before the fields, so a field that refers back to this record finds it */
	g_hash_table_insert(named, s, node);
	node->members = g_new0(SflAvroMember, n);
	for (gsize i = 0; i < n; i++) {
		const gchar *fname = avro_schema_record_field_name(s, (int)i);
		avro_schema_t ftype = avro_schema_record_field_get_by_index(s, (int)i);
		SflAvroNode *type;

		if (fname == NULL || ftype == NULL) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
				    "Avro schema: record %s has no field %" G_GSIZE_FORMAT,
				    node->name, i);
			return NULL;
		}
		type = sfl_avro_compile(self, ftype, named, depth + 1, error);
		if (type == NULL) {
			g_prefix_error(error, "field %s.%s: ", node->name, fname);
			return NULL;
		}
		sfl_avro_member_set(&node->members[i], fname, type, 0);
		node->n_fields = node->n_members = (guint)i + 1;
	}
	if ((self->flags & SFL_AVRO_SCHEMA_CDC_NAMES_IN_LINE) != 0 &&
	    g_strcmp0(node->name, "ChangeEventHeader") == 0)
		sfl_avro_add_bitmap_members(node);
	node->order = g_new(guint, node->n_members);
	for (guint i = 0; i < node->n_members; i++)
		node->order[i] = i;
	g_qsort_with_data(node->order, (gint)node->n_members, sizeof(guint), sfl_avro_member_cmp,
			  node->members);
	/* avro-c accepts a repeated field name; the JSON object could not hold both */
	for (guint k = 1; k < node->n_members; k++) {
		const gchar *name = node->members[node->order[k]].name;
		if (strcmp(node->members[node->order[k - 1]].name, name) == 0) {
			g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
				    "Avro schema: record %s has two fields named %s", node->name,
				    name);
			return NULL;
		}
	}
	return node;
}

static SflAvroNode *
sfl_avro_compile(SflAvroSchema *self, avro_schema_t s, GHashTable *named, guint depth,
		 GError **error)
{
	SflAvroNode *node;

	while (is_avro_link(s))
		s = avro_schema_link_target(s);
	if (s == NULL) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_CORRUPT,
				    "Avro schema: dangling type reference");
		return NULL;
	}
	if (depth > SFL_AVRO_MAX_SCHEMA_DEPTH) {
		g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
			    "Avro schema: types nested more than %d deep",
			    SFL_AVRO_MAX_SCHEMA_DEPTH);
		return NULL;
	}
	node = g_hash_table_lookup(named, s);
	if (node != NULL)
		return node;

	for (gsize i = 0; i < G_N_ELEMENTS(sfl_avro_primitives); i++) {
		if (sfl_avro_primitives[i].avro == avro_typeof(s))
			return sfl_avro_node_new(self, sfl_avro_primitives[i].kind);
	}
	switch (avro_typeof(s)) {
	case AVRO_RECORD:
		return sfl_avro_compile_record(self, s, named, depth, error);
	case AVRO_ENUM:
		node = sfl_avro_node_new(self, SFL_AVRO_ENUM);
		node->name = g_strdup(avro_schema_name(s));
		g_hash_table_insert(named, s, node);
		node->n_symbols = (guint)MAX(avro_schema_enum_number_of_symbols(s), 0);
		node->symbols_json = g_new0(gchar *, node->n_symbols);
		node->symbols = g_new0(gchar *, node->n_symbols);
		for (guint i = 0; i < node->n_symbols; i++) {
			const gchar *symbol = avro_schema_enum_get(s, (int)i);
			node->symbols[i] = g_strdup(symbol != NULL ? symbol : "");
			node->symbols_json[i] = sfl_avro_json_string(node->symbols[i], NULL);
		}
		return node;
	case AVRO_FIXED:
		node = sfl_avro_node_new(self, SFL_AVRO_FIXED);
		node->name = g_strdup(avro_schema_name(s));
		g_hash_table_insert(named, s, node);
		node->size = (gsize)MAX(avro_schema_fixed_size(s), 0);
		return node;
	case AVRO_ARRAY:
	case AVRO_MAP: {
		gboolean is_array = avro_typeof(s) == AVRO_ARRAY;
		avro_schema_t items =
			is_array ? avro_schema_array_items(s) : avro_schema_map_values(s);
		node = sfl_avro_node_new(self, is_array ? SFL_AVRO_ARRAY : SFL_AVRO_MAP);
		node->items = sfl_avro_compile(self, items, named, depth + 1, error);
		return node->items != NULL ? node : NULL;
	}
	case AVRO_UNION:
		node = sfl_avro_node_new(self, SFL_AVRO_UNION);
		node->n_branches = (guint)avro_schema_union_size(s);
		node->branches = g_new0(SflAvroNode *, node->n_branches);
		for (guint i = 0; i < node->n_branches; i++) {
			node->branches[i] = sfl_avro_compile(
				self, avro_schema_union_branch(s, (int)i), named, depth + 1, error);
			if (node->branches[i] == NULL)
				return NULL;
		}
		return node;
	case AVRO_LINK:
	default:
		g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT, "Avro schema: unsupported type %d",
			    (gint)avro_typeof(s));
		return NULL;
	}
}

static gsize
sfl_avro_min_size(SflAvroNode *node)
{
	gsize total = 0;

	switch (node->kind) {
	case SFL_AVRO_NULL:
		node->min_size = 0;
		break;
	case SFL_AVRO_FLOAT:
		node->min_size = 4;
		break;
	case SFL_AVRO_DOUBLE:
		node->min_size = 8;
		break;
	case SFL_AVRO_FIXED:
		node->min_size = node->size;
		break;
	case SFL_AVRO_RECORD:
		/* a record reached again while it is being sized is recursive: count it as
		 * empty, which only makes the item check more careful */
		if (node->sizing)
			return 0;
		if (node->min_size != G_MAXSIZE)
			return node->min_size;
		node->sizing = TRUE;
		for (guint i = 0; i < node->n_fields; i++)
			total = MIN(total + sfl_avro_min_size(node->members[i].type), G_MAXUINT32);
		node->sizing = FALSE;
		node->min_size = total;
		break;
	default:
		/* a varint, a length, a count or a branch index: at least one byte */
		node->min_size = 1;
		break;
	}
	return node->min_size;
}

/* the names a CDC bitmap maps to: top-level fields, and the fields of compound ones */
static void
sfl_avro_index_root(SflAvroSchema *self)
{
	const SflAvroNode *root = self->root;

	if (root->kind != SFL_AVRO_RECORD)
		return;
	self->n_root_fields = root->n_fields;
	self->root_field_names = g_new0(gchar *, root->n_fields);
	self->root_field_json = g_new0(gchar *, root->n_fields);
	self->compounds = g_new0(SflAvroCompound, root->n_fields);
	for (guint i = 0; i < root->n_fields; i++) {
		const SflAvroMember *m = &root->members[i];
		const SflAvroNode *type = m->type;

		self->root_field_names[i] = m->name;
		self->root_field_json[i] = sfl_avro_json_string(m->name, NULL);
		/* [null, X], [string, X] and [null, string, X] all stand for X */
		if (type->kind == SFL_AVRO_UNION) {
			const SflAvroNode *inner = NULL;
			for (guint b = 0; b < type->n_branches; b++) {
				SflAvroKind k = type->branches[b]->kind;
				if (k != SFL_AVRO_NULL && k != SFL_AVRO_STRING)
					inner = type->branches[b];
			}
			type = inner;
		}
		if (type == NULL || type->kind != SFL_AVRO_RECORD)
			continue;
		self->compounds[i].n_children = type->n_fields;
		self->compounds[i].child_names = g_new0(gchar *, type->n_fields);
		self->compounds[i].child_json = g_new0(gchar *, type->n_fields);
		for (guint c = 0; c < type->n_fields; c++) {
			gchar *path = g_strconcat(m->name, ".", type->members[c].name, NULL);
			self->compounds[i].child_names[c] = path;
			self->compounds[i].child_json[c] = sfl_avro_json_string(path, NULL);
		}
	}
}

/**
 * sfl_avro_schema_new_full:
 * @schema_json: an Avro schema in its JSON form
 * @flags: how its datums render
 * @error: where a parse failure goes (%SFL_ERROR_CORRUPT)
 *
 * Returns: (transfer full) (nullable): the compiled schema, or %NULL with @error set
 */
SflAvroSchema *
sfl_avro_schema_new_full(const gchar *schema_json, SflAvroSchemaFlags flags, GError **error)
{
	g_autoptr(SflAvroSchema) self = NULL;
	g_autoptr(GHashTable) named = NULL;
	avro_schema_t parsed = NULL;
	GError *compile_error = NULL;

	g_return_val_if_fail(schema_json != NULL, NULL);

	if (avro_schema_from_json_length(schema_json, strlen(schema_json), &parsed) != 0) {
		g_autofree gchar *why = g_strdup(avro_strerror());
		g_strchomp(why);
		g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT, "Avro schema does not parse: %s",
			    why);
		return NULL;
	}
	self = g_new0(SflAvroSchema, 1);
	g_atomic_ref_count_init(&self->ref);
	self->flags = flags;
	self->nodes = g_ptr_array_new_with_free_func(sfl_avro_node_free);
	named = g_hash_table_new(g_direct_hash, g_direct_equal);
	self->root = sfl_avro_compile(self, parsed, named, 0, &compile_error);
	avro_schema_decref(parsed);
	if (self->root == NULL) {
		g_propagate_error(error, compile_error);
		return NULL;
	}
	for (guint i = 0; i < self->nodes->len; i++) {
		SflAvroNode *node = g_ptr_array_index(self->nodes, i);
		node->min_size = G_MAXSIZE;
	}
	for (guint i = 0; i < self->nodes->len; i++)
		sfl_avro_min_size(g_ptr_array_index(self->nodes, i));
	sfl_avro_index_root(self);
	return g_steal_pointer(&self);
}

/**
 * sfl_avro_schema_new:
 * @schema_json: an Avro schema in its JSON form
 * @error: where a parse failure goes (%SFL_ERROR_CORRUPT)
 *
 * Returns: (transfer full) (nullable): the compiled schema rendering the original's line, or
 *   %NULL with @error set
 */
SflAvroSchema *
sfl_avro_schema_new(const gchar *schema_json, GError **error)
{
	return sfl_avro_schema_new_full(schema_json, SFL_AVRO_SCHEMA_DEFAULT, error);
}

/**
 * sfl_avro_schema_ref:
 * @schema: a schema
 *
 * Returns: (transfer full): @schema
 */
SflAvroSchema *
sfl_avro_schema_ref(SflAvroSchema *schema)
{
	g_return_val_if_fail(schema != NULL, NULL);
	g_atomic_ref_count_inc(&schema->ref);
	return schema;
}

/**
 * sfl_avro_schema_unref:
 * @schema: (transfer full): a schema
 */
void
sfl_avro_schema_unref(SflAvroSchema *schema)
{
	g_return_if_fail(schema != NULL);
	if (!g_atomic_ref_count_dec(&schema->ref))
		return;
	if (schema->compounds != NULL) {
		for (guint i = 0; i < schema->n_root_fields; i++) {
			for (guint c = 0; c < schema->compounds[i].n_children; c++) {
				g_free(schema->compounds[i].child_names[c]);
				g_free(schema->compounds[i].child_json[c]);
			}
			g_free(schema->compounds[i].child_names);
			g_free(schema->compounds[i].child_json);
		}
	}
	g_free(schema->compounds);
	if (schema->root_field_json != NULL) {
		for (guint i = 0; i < schema->n_root_fields; i++)
			g_free(schema->root_field_json[i]);
	}
	g_free(schema->root_field_json);
	g_free(schema->root_field_names);
	if (schema->nodes != NULL)
		g_ptr_array_unref(schema->nodes);
	g_free(schema);
}

/* --- reading --------------------------------------------------------------------------------- */

static gboolean G_GNUC_PRINTF(2, 3) sfl_avro_fail(SflAvroReader *r, const gchar *format, ...)
{
	va_list args;

	if (r->failure != NULL)
		return FALSE;
	va_start(args, format);
	r->failure = g_strdup_vprintf(format, args);
	va_end(args);
	return FALSE;
}

static inline gsize
sfl_avro_left(const SflAvroReader *r)
{
	return (gsize)(r->end - r->p);
}

/* zig-zag base-128 varint, at most ten bytes for 64 bits */
static inline gboolean
sfl_avro_read_long(SflAvroReader *r, gint64 *value)
{
	const guint8 *p = r->p;
	guint64 v = 0;
	guint shift = 0;

	if (G_LIKELY(p < r->end && (*p & 0x80) == 0)) {
		v = *p;
		r->p = p + 1;
		*value = (gint64)((v >> 1) ^ (~(v & 1) + 1));
		return TRUE;
	}
	for (;;) {
		guint8 b;

		if (p >= r->end)
			return sfl_avro_fail(r,
					     "varint at byte %" G_GSIZE_FORMAT
					     " runs past the end of the payload",
					     (gsize)(r->p - r->begin));
		b = *p++;
		if (shift == 63 && (b & 0xfe) != 0)
			return sfl_avro_fail(
				r, "varint at byte %" G_GSIZE_FORMAT " does not fit in 64 bits",
				(gsize)(r->p - r->begin));
		v |= (guint64)(b & 0x7f) << shift;
		if ((b & 0x80) == 0)
			break;
		shift += 7;
	}
	r->p = p;
	*value = (gint64)((v >> 1) ^ (~(v & 1) + 1));
	return TRUE;
}

/* a string or bytes length: not negative, and no longer than what is left */
static gboolean
sfl_avro_read_length(SflAvroReader *r, const gchar *what, gsize *len)
{
	gsize at = (gsize)(r->p - r->begin);
	gint64 v = 0;

	if (!sfl_avro_read_long(r, &v))
		return FALSE;
	if (v < 0)
		return sfl_avro_fail(r,
				     "%s length at byte %" G_GSIZE_FORMAT
				     " is negative (%" G_GINT64_FORMAT ")",
				     what, at, v);
	if ((guint64)v > sfl_avro_left(r))
		return sfl_avro_fail(r,
				     "%s length %" G_GINT64_FORMAT " at byte %" G_GSIZE_FORMAT
				     " runs past the end of the payload (%" G_GSIZE_FORMAT
				     " bytes left)",
				     what, v, at, sfl_avro_left(r));
	*len = (gsize)v;
	return TRUE;
}

/* json.dumps of a double: repr() digits, with the non-finite values spelled like JavaScript */
static void
sfl_avro_append_double(GString *out, gdouble value)
{
	if (isnan(value))
		g_string_append_len(out, "NaN", 3);
	else if (isinf(value))
		g_string_append(out, value < 0 ? "-Infinity" : "Infinity");
	else
		sfl_append_pyfloat(out, value);
}

static const gchar sfl_avro_hex[] = "0123456789abcdef";

/* printable ASCII other than the quote and the backslash is copied as is */
static inline gboolean
sfl_avro_plain(guint8 c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/*
 * One UTF-8 sequence as Python's strict decoder accepts it (no overlong forms, no surrogates,
 * nothing past U+10FFFF); returns its length, or 0 when invalid.
 */
static guint
sfl_avro_utf8_char(const guint8 *s, gsize left, gunichar *out)
{
	guint8 c = s[0];
	guint8 lo = 0x80;
	guint8 hi = 0xbf;
	guint n;
	gunichar u;

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		u = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		u = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		u = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	u = (u << 6) | (s[1] & 0x3f);
	for (guint i = 2; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		u = (u << 6) | (s[i] & 0x3f);
	}
	*out = u;
	return n;
}

/* a quoted ensure_ascii JSON string (json.dumps); FALSE when @s is not valid UTF-8 */
static gboolean
sfl_avro_append_string(SflAvroReader *r, const guint8 *s, gsize len)
{
	GString *out = r->out;
	gsize run = 0;
	gsize i = 0;

	g_string_append_c(out, '"');
	while (i < len) {
		guint8 c = s[i];
		gunichar u;
		guint n;

		if (G_LIKELY(sfl_avro_plain(c))) {
			i++;
			continue;
		}
		g_string_append_len(out, (const gchar *)s + run, (gssize)(i - run));
		if (c < 0x80) {
			u = c;
			n = 1;
		} else {
			/* stricter than the shared escaper: a bad event fails instead of changing
			 */
			n = sfl_avro_utf8_char(s + i, len - i, &u);
			if (n == 0)
				return sfl_avro_fail(
					r, "string at byte %" G_GSIZE_FORMAT " is not valid UTF-8",
					(gsize)(s - r->begin));
		}
		sfl_pyjson_append_char(out, u);
		i += n;
		run = i;
	}
	g_string_append_len(out, (const gchar *)s + run, (gssize)(len - run));
	g_string_append_c(out, '"');
	return TRUE;
}

/*
 * bytes and fixed as Python's str() of them, the b'...' literal json.dumps(default=str) puts
 * in the original's line: single quotes unless the bytes hold a single quote and no double
 * one, the quote in use and the backslash escaped, \t \n \r, \xNN for the rest outside
 * printable ASCII. Replays must render identical bytes for Loki to collapse them, whichever
 * implementation sent them.
 */
static void
sfl_avro_append_pybytes(GString *out, const guint8 *s, gsize len)
{
	gboolean squote = len > 0 && memchr(s, '\'', len) != NULL;
	gboolean dquote = len > 0 && memchr(s, '"', len) != NULL;
	gchar quote = squote && !dquote ? '"' : '\'';

	g_string_append_c(out, 'b');
	g_string_append_c(out, quote);
	for (gsize i = 0; i < len; i++) {
		guint8 c = s[i];

		if (c == (guint8)quote || c == '\\') {
			g_string_append_c(out, '\\');
			g_string_append_c(out, (gchar)c);
		} else if (c == '\t') {
			g_string_append_len(out, "\\t", 2);
		} else if (c == '\n') {
			g_string_append_len(out, "\\n", 2);
		} else if (c == '\r') {
			g_string_append_len(out, "\\r", 2);
		} else if (c < 0x20 || c >= 0x7f) {
			gchar esc[4] = { '\\', 'x', sfl_avro_hex[c >> 4], sfl_avro_hex[c & 0xf] };
			g_string_append_len(out, esc, 4);
		} else {
			g_string_append_c(out, (gchar)c);
		}
	}
	g_string_append_c(out, quote);
}

/*
 * bytes and fixed in the line: the b'...' text as a JSON string; it is printable ASCII, so
 * only its quotes and backslashes need escaping. Uses the scratch buffer, which only record
 * and map assembly use otherwise, after their values are read.
 */
static void
sfl_avro_append_bytes(SflAvroReader *r, const guint8 *s, gsize len)
{
	g_string_truncate(r->scratch, 0);
	sfl_avro_append_pybytes(r->scratch, s, len);
	g_string_append_c(r->out, '"');
	for (gsize i = 0; i < r->scratch->len; i++) {
		gchar c = r->scratch->str[i];
		if (c == '\\' || c == '"')
			g_string_append_c(r->out, '\\');
		g_string_append_c(r->out, c);
	}
	g_string_append_c(r->out, '"');
}

static gboolean sfl_avro_read_value(SflAvroReader *r, const SflAvroNode *node);

/*
 * The count of the next array or map block; a negative count is followed by the block's byte
 * size, which the reader does not need. Checks the items can fit in what is left.
 */
static gboolean
sfl_avro_read_block(SflAvroReader *r, const SflAvroNode *node, guint64 *count)
{
	gsize at = (gsize)(r->p - r->begin);
	gsize item_min =
		node->kind == SFL_AVRO_MAP ? 1 + node->items->min_size : node->items->min_size;
	gint64 v = 0;

	if (!sfl_avro_read_long(r, &v))
		return FALSE;
	if (v < 0) {
		gint64 size = 0;
		if (v == G_MININT64)
			return sfl_avro_fail(
				r, "block count at byte %" G_GSIZE_FORMAT " is invalid", at);
		v = -v;
		if (!sfl_avro_read_long(r, &size))
			return FALSE;
	}
	if (item_min > 0 && (guint64)v > sfl_avro_left(r) / item_min)
		return sfl_avro_fail(r,
				     "block of %" G_GINT64_FORMAT " items at byte %" G_GSIZE_FORMAT
				     " needs more than the %" G_GSIZE_FORMAT " bytes left",
				     v, at, sfl_avro_left(r));
	if (item_min == 0) {
		if ((guint64)v > SFL_AVRO_MAX_EMPTY_ITEMS - r->empty_items)
			return sfl_avro_fail(r,
					     "block of %" G_GINT64_FORMAT
					     " items at byte %" G_GSIZE_FORMAT
					     " exceeds the limit of %u empty items",
					     v, at, SFL_AVRO_MAX_EMPTY_ITEMS);
		r->empty_items += (guint)v;
	}
	*count = (guint64)v;
	return TRUE;
}

static inline gboolean
sfl_avro_check_line(SflAvroReader *r)
{
	if (G_UNLIKELY(r->out->len - r->out_start > SFL_AVRO_MAX_LINE))
		return sfl_avro_fail(r,
				     "rendering passes %u bytes at payload byte %" G_GSIZE_FORMAT,
				     SFL_AVRO_MAX_LINE, (gsize)(r->p - r->begin));
	return TRUE;
}

/* reads the items of an array or map, block by block, through @item */
static gboolean
sfl_avro_read_items(SflAvroReader *r, const SflAvroNode *node,
		    gboolean (*item)(SflAvroReader *r, const SflAvroNode *node, gpointer data),
		    gpointer data)
{
	for (;;) {
		guint64 count = 0;

		if (!sfl_avro_read_block(r, node, &count))
			return FALSE;
		if (count == 0)
			return TRUE;
		for (guint64 i = 0; i < count; i++) {
			if (!item(r, node, data))
				return FALSE;
		}
	}
}

static gboolean
sfl_avro_read_array_item(SflAvroReader *r, const SflAvroNode *node, gpointer data)
{
	gboolean *first = data;

	if (!*first)
		g_string_append_len(r->out, ", ", 2);
	*first = FALSE;
	return sfl_avro_read_value(r, node->items) && sfl_avro_check_line(r);
}

static gboolean
sfl_avro_read_array(SflAvroReader *r, const SflAvroNode *node)
{
	gboolean first = TRUE;

	g_string_append_c(r->out, '[');
	if (!sfl_avro_read_items(r, node, sfl_avro_read_array_item, &first))
		return FALSE;
	g_string_append_c(r->out, ']');
	return TRUE;
}

static gint
sfl_avro_map_item_cmp(gconstpointer a, gconstpointer b)
{
	const SflAvroMapItem *ia = a;
	const SflAvroMapItem *ib = b;
	gint c = memcmp(ia->key, ib->key, MIN(ia->key_len, ib->key_len));

	if (c != 0)
		return c;
	if (ia->key_len != ib->key_len)
		return ia->key_len < ib->key_len ? -1 : 1;
	return ia->seq < ib->seq ? -1 : ia->seq > ib->seq;
}

/* one key and value, laid out at the end of r->out and indexed in r->map_items */
static gboolean
sfl_avro_read_map_item(SflAvroReader *r, const SflAvroNode *node, gpointer data)
{
	const gsize *offsets = data; /* where the map starts in r->out and in r->map_items */
	SflAvroMapItem item = { 0 };
	gsize key_len = 0;

	item.start = r->out->len - offsets[0];
	if (!sfl_avro_read_length(r, "map key", &key_len))
		return FALSE;
	item.key = r->p;
	item.key_len = key_len;
	r->p += key_len;
	if (!sfl_avro_append_string(r, item.key, key_len))
		return FALSE;
	g_string_append_len(r->out, ": ", 2);
	if (!sfl_avro_read_value(r, node->items) || !sfl_avro_check_line(r))
		return FALSE;
	item.len = r->out->len - offsets[0] - item.start;
	item.seq = r->map_items->len - (guint)offsets[1];
	g_array_append_val(r->map_items, item);
	return TRUE;
}

/*
 * The original decodes a map into a dict (a repeated key keeps its last value) and json.dumps
 * sorts the keys; UTF-8 byte order is code point order, so the raw keys sort as Python's do.
 */
static gboolean
sfl_avro_read_map(SflAvroReader *r, const SflAvroNode *node)
{
	guint base = r->map_items->len;
	gsize start = r->out->len;
	guint n;
	gboolean first = TRUE;
	gsize offsets[2] = { start, base };

	if (!sfl_avro_read_items(r, node, sfl_avro_read_map_item, offsets))
		return FALSE;
	n = r->map_items->len - base;
	if (n > 1) {
		SflAvroMapItem *items = &g_array_index(r->map_items, SflAvroMapItem, base);
		qsort(items, n, sizeof(SflAvroMapItem), sfl_avro_map_item_cmp);
	}
	g_string_truncate(r->scratch, 0);
	g_string_append_len(r->scratch, r->out->str + start, (gssize)(r->out->len - start));
	g_string_truncate(r->out, start);
	g_string_append_c(r->out, '{');
	for (guint i = 0; i < n; i++) {
		const SflAvroMapItem *item = &g_array_index(r->map_items, SflAvroMapItem, base + i);
		const SflAvroMapItem *next =
			i + 1 < n ? &g_array_index(r->map_items, SflAvroMapItem, base + i + 1)
				  : NULL;

		/* of equal keys only the last one written survives */
		if (next != NULL && next->key_len == item->key_len &&
		    memcmp(next->key, item->key, item->key_len) == 0)
			continue;
		if (!first)
			g_string_append_len(r->out, ", ", 2);
		first = FALSE;
		g_string_append_len(r->out, r->scratch->str + item->start, (gssize)item->len);
	}
	g_string_append_c(r->out, '}');
	g_array_set_size(r->map_items, base);
	return TRUE;
}

/*
 * The names of the set bits of a hex number, lowest bit first, each after @sep but the first;
 * bits past @n_names name nothing
 */
static void
sfl_avro_append_bitmap_names(GString *out, const gchar *sep, const guint8 *hex, gsize len,
			     gchar *const *names, guint n_names, gboolean *first)
{
	for (gsize k = 0; k < len; k++) {
		guint8 c = hex[len - 1 - k];
		guint digit = g_ascii_xdigit_value((gchar)c);

		for (guint bit = 0; bit < 4; bit++) {
			guint64 index = (guint64)k * 4 + bit;
			if ((digit & (1u << bit)) == 0 || index >= n_names)
				continue;
			if (!*first)
				g_string_append(out, sep);
			*first = FALSE;
			g_string_append(out, names[index]);
		}
	}
}

static gboolean
sfl_avro_all_hex(const guint8 *s, gsize len)
{
	if (len == 0)
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (!g_ascii_isxdigit((gchar)s[i]))
			return FALSE;
	}
	return TRUE;
}

/*
 * One CDC bitmap element: "0x<hex>" over the event's top-level fields, or "<pos>-0x<hex>" over
 * the fields of the compound top-level field at <pos> ("Parent.Child"). Bit i (the value's
 * 2^i, reading the hex as one big-endian number) names field i. Elements of any other shape,
 * and bits past the last field, name nothing. @plain: the bare names, comma-separated (for
 * structured metadata), else quoted JSON strings separated as json.dumps separates a list.
 */
static void
sfl_avro_append_bitmap(const SflAvroSchema *schema, gboolean plain, const guint8 *s, gsize len,
		       GString *out, gboolean *first)
{
	const gchar *sep = plain ? "," : ", ";
	guint64 parent = 0;
	gsize i = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (sfl_avro_all_hex(s + 2, len - 2))
			sfl_avro_append_bitmap_names(out, sep, s + 2, len - 2,
						     plain ? schema->root_field_names
							   : schema->root_field_json,
						     schema->n_root_fields, first);
		return;
	}
	while (i < len && g_ascii_isdigit((gchar)s[i]) && parent <= G_MAXUINT32) {
		parent = parent * 10 + (guint64)(s[i] - '0');
		i++;
	}
	if (i == 0 || i + 3 > len || s[i] != '-' || s[i + 1] != '0' ||
	    (s[i + 2] != 'x' && s[i + 2] != 'X') || parent >= schema->n_root_fields)
		return;
	if (!sfl_avro_all_hex(s + i + 3, len - i - 3))
		return;
	sfl_avro_append_bitmap_names(out, sep, s + i + 3, len - i - 3,
				     plain ? schema->compounds[parent].child_names
					   : schema->compounds[parent].child_json,
				     schema->compounds[parent].n_children, first);
}

/*
 * Renders the field names of a bitmap field that was already read (and checked) from
 * [@from, @to): a list of names, or null when the field was null.
 */
static void
sfl_avro_expand_bitmaps(SflAvroReader *r, const SflAvroNode *type, const guint8 *from,
			const guint8 *to)
{
	SflAvroReader sub = *r;
	gboolean first = TRUE;
	gint64 v = 0;

	sub.p = from;
	sub.end = to;
	sub.failure = NULL;
	if (type->kind == SFL_AVRO_UNION) {
		/* the value was read once already, so these reads cannot fail */
		if (!sfl_avro_read_long(&sub, &v) || v < 0 || (guint64)v >= type->n_branches ||
		    type->branches[v]->kind != SFL_AVRO_ARRAY) {
			g_string_append(r->out, "null");
			return;
		}
	}
	g_string_append_c(r->out, '[');
	for (;;) {
		gint64 count = 0;
		if (!sfl_avro_read_long(&sub, &count) || count == 0)
			break;
		if (count < 0) {
			gint64 size = 0;
			count = -count;
			if (!sfl_avro_read_long(&sub, &size))
				break;
		}
		for (gint64 i = 0; i < count; i++) {
			gsize len = 0;
			if (!sfl_avro_read_length(&sub, "string", &len))
				break;
			sfl_avro_append_bitmap(r->schema, FALSE, sub.p, len, r->out, &first);
			sub.p += len;
		}
	}
	g_string_append_c(r->out, ']');
	g_free(sub.failure);
}

/*
 * A scalar read off the payload: the node it was read as (unions resolved) and its value. Both
 * outputs, the JSON line and the record, take their values from this one reader, so the two
 * cannot disagree on what a payload holds or which payloads are refused.
 */
typedef struct {
	const SflAvroNode *node;
	gint64 i;	 /* boolean, int, long and enum index */
	gdouble d;	 /* float and double */
	const guint8 *s; /* string, bytes and fixed, @len bytes, not yet checked as UTF-8 */
	gsize len;
} SflAvroScalar;

static gboolean
sfl_avro_read_fixed_width(SflAvroReader *r, const gchar *what, gsize width, guint8 *buf)
{
	if (sfl_avro_left(r) < width)
		return sfl_avro_fail(
			r, "%s at byte %" G_GSIZE_FORMAT " runs past the end of the payload", what,
			(gsize)(r->p - r->begin));
	memcpy(buf, r->p, width);
	r->p += width;
	return TRUE;
}

/*
 * Reads the value of @node into @value, following union branches. Records, arrays and maps are
 * not read: @value->node is then the compound node, for the caller to walk.
 */
static gboolean
sfl_avro_read_scalar(SflAvroReader *r, const SflAvroNode *node, SflAvroScalar *value)
{
	gsize at = (gsize)(r->p - r->begin);
	gint64 v = 0;

	while (node->kind == SFL_AVRO_UNION) {
		if (!sfl_avro_read_long(r, &v))
			return FALSE;
		if (v < 0 || (guint64)v >= node->n_branches)
			return sfl_avro_fail(r,
					     "union branch %" G_GINT64_FORMAT
					     " at byte %" G_GSIZE_FORMAT
					     " is not one of its %u branches",
					     v, at, node->n_branches);
		node = node->branches[v];
		at = (gsize)(r->p - r->begin);
	}
	value->node = node;
	switch (node->kind) {
	case SFL_AVRO_BOOLEAN:
		if (r->p >= r->end)
			return sfl_avro_fail(r,
					     "boolean at byte %" G_GSIZE_FORMAT
					     " runs past the end of the payload",
					     at);
		if (*r->p > 1)
			return sfl_avro_fail(r, "boolean at byte %" G_GSIZE_FORMAT " is 0x%02x", at,
					     *r->p);
		value->i = *r->p++;
		return TRUE;
	case SFL_AVRO_INT:
	case SFL_AVRO_LONG:
		return sfl_avro_read_long(r, &value->i);
	case SFL_AVRO_FLOAT: {
		guint32 bits = 0;
		gfloat f;
		if (!sfl_avro_read_fixed_width(r, "float", 4, (guint8 *)&bits))
			return FALSE;
		bits = GUINT32_FROM_LE(bits);
		memcpy(&f, &bits, 4);
		value->d = (gdouble)f;
		return TRUE;
	}
	case SFL_AVRO_DOUBLE: {
		guint64 bits = 0;
		if (!sfl_avro_read_fixed_width(r, "double", 8, (guint8 *)&bits))
			return FALSE;
		bits = GUINT64_FROM_LE(bits);
		memcpy(&value->d, &bits, 8);
		return TRUE;
	}
	case SFL_AVRO_STRING:
	case SFL_AVRO_BYTES:
		if (!sfl_avro_read_length(r, node->kind == SFL_AVRO_STRING ? "string" : "bytes",
					  &value->len))
			return FALSE;
		value->s = r->p;
		r->p += value->len;
		return TRUE;
	case SFL_AVRO_FIXED:
		if (sfl_avro_left(r) < node->size)
			return sfl_avro_fail(r,
					     "fixed %s of %" G_GSIZE_FORMAT
					     " bytes at byte %" G_GSIZE_FORMAT
					     " runs past the end of the payload",
					     node->name, node->size, at);
		value->s = r->p;
		value->len = node->size;
		r->p += node->size;
		return TRUE;
	case SFL_AVRO_ENUM:
		if (!sfl_avro_read_long(r, &value->i))
			return FALSE;
		if (value->i < 0 || (guint64)value->i >= node->n_symbols)
			return sfl_avro_fail(r,
					     "enum %s index %" G_GINT64_FORMAT
					     " at byte %" G_GSIZE_FORMAT
					     " is not one of its %u symbols",
					     node->name, value->i, at, node->n_symbols);
		return TRUE;
	case SFL_AVRO_NULL:
	case SFL_AVRO_RECORD:
	case SFL_AVRO_ARRAY:
	case SFL_AVRO_MAP:
		return TRUE;
	default:
		g_assert_not_reached();
	}
}

/* the start and end in the payload of each bitmap field of a record, once it is read */
typedef struct {
	const guint8 *from[SFL_AVRO_N_BITMAPS];
	const guint8 *to[SFL_AVRO_N_BITMAPS];
} SflAvroBitmapSpans;

/* reads field @m of a record; on failure the walk names the field in the error */
typedef gboolean (*SflAvroFieldReader)(SflAvroReader *r, const SflAvroMember *m, gpointer data);

/* member @i of a record (a field, or a bitmap expansion) has been written to r->out */
typedef void (*SflAvroMemberDone)(SflAvroReader *r, const SflAvroNode *record, guint i,
				  gpointer data);

/*
 * The one walk over a record for both outputs: its fields in payload order, then the field-name
 * lists of its CDC bitmap fields, rendered into r->out from the spans the fields took.
 */
static inline gboolean
sfl_avro_walk_record(SflAvroReader *r, const SflAvroNode *node, SflAvroFieldReader read_field,
		     SflAvroMemberDone member_done, gpointer data)
{
	SflAvroBitmapSpans spans = { { NULL }, { NULL } };

	for (guint i = 0; i < node->n_fields; i++) {
		const SflAvroMember *m = &node->members[i];
		const guint8 *from = r->p;

		if (!read_field(r, m, data)) {
			g_ptr_array_add(r->trail, m->name);
			return FALSE;
		}
		member_done(r, node, i, data);
		for (guint e = node->n_fields; e < node->n_members; e++) {
			if (node->members[e].source == i) {
				spans.from[e - node->n_fields] = from;
				spans.to[e - node->n_fields] = r->p;
			}
		}
	}
	for (guint e = node->n_fields; e < node->n_members; e++) {
		const SflAvroMember *m = &node->members[e];

		sfl_avro_expand_bitmaps(r, node->members[m->source].type,
					spans.from[e - node->n_fields],
					spans.to[e - node->n_fields]);
		member_done(r, node, e, data);
	}
	return TRUE;
}

/* where a record being rendered starts in r->out and in r->ends */
typedef struct {
	guint base;
	gsize start;
} SflAvroRecordLayout;

static gboolean
sfl_avro_render_field(SflAvroReader *r, const SflAvroMember *m, gpointer data)
{
	(void)data;
	return sfl_avro_read_value(r, m->type);
}

static void
sfl_avro_render_member_done(SflAvroReader *r, const SflAvroNode *record, guint i, gpointer data)
{
	const SflAvroRecordLayout *layout = data;

	(void)record;
	/* indexed only now: nested records grow the stack above this record's slots */
	g_array_index(r->ends, gsize, layout->base + i) = r->out->len - layout->start;
}

/*
 * A record is laid out field by field in schema order (the payload order), then its members
 * are moved into key order, as json.dumps(sort_keys=True) writes a dict.
 */
static gboolean
sfl_avro_read_record(SflAvroReader *r, const SflAvroNode *node)
{
	SflAvroRecordLayout layout = { r->ends->len, r->out->len };
	guint base = layout.base;
	gsize start = layout.start;

	g_array_set_size(r->ends, base + node->n_members);
	if (!sfl_avro_walk_record(r, node, sfl_avro_render_field, sfl_avro_render_member_done,
				  &layout))
		return FALSE;

	g_string_truncate(r->scratch, 0);
	g_string_append_len(r->scratch, r->out->str + start, (gssize)(r->out->len - start));
	g_string_truncate(r->out, start);
	g_string_append_c(r->out, '{');
	for (guint k = 0; k < node->n_members; k++) {
		guint i = node->order[k];
		const SflAvroMember *m = &node->members[i];
		gsize from = i == 0 ? 0 : g_array_index(r->ends, gsize, base + i - 1);
		gsize to = g_array_index(r->ends, gsize, base + i);

		if (k > 0)
			g_string_append_len(r->out, ", ", 2);
		g_string_append_len(r->out, m->key_json, (gssize)m->key_len);
		g_string_append_len(r->out, r->scratch->str + from, (gssize)(to - from));
	}
	g_string_append_c(r->out, '}');
	g_array_set_size(r->ends, base);
	return TRUE;
}

/* records, arrays and maps: one level deeper, within the limit */
static gboolean
sfl_avro_read_compound(SflAvroReader *r, const SflAvroNode *node)
{
	gboolean ok;

	if (r->depth >= SFL_AVRO_MAX_DEPTH)
		return sfl_avro_fail(r, "values nested more than %d deep at byte %" G_GSIZE_FORMAT,
				     SFL_AVRO_MAX_DEPTH, (gsize)(r->p - r->begin));
	r->depth++;
	if (node->kind == SFL_AVRO_RECORD)
		ok = sfl_avro_read_record(r, node);
	else if (node->kind == SFL_AVRO_ARRAY)
		ok = sfl_avro_read_array(r, node);
	else
		ok = sfl_avro_read_map(r, node);
	r->depth--;
	return ok;
}

static gboolean
sfl_avro_read_value(SflAvroReader *r, const SflAvroNode *node)
{
	SflAvroScalar v;

	if (!sfl_avro_read_scalar(r, node, &v))
		return FALSE;
	switch (v.node->kind) {
	case SFL_AVRO_NULL:
		g_string_append_len(r->out, "null", 4);
		return TRUE;
	case SFL_AVRO_BOOLEAN:
		g_string_append(r->out, v.i != 0 ? "true" : "false");
		return TRUE;
	case SFL_AVRO_INT:
	case SFL_AVRO_LONG:
		sfl_pyjson_append_int64(r->out, v.i);
		return TRUE;
	case SFL_AVRO_FLOAT:
	case SFL_AVRO_DOUBLE:
		sfl_avro_append_double(r->out, v.d);
		return TRUE;
	case SFL_AVRO_STRING:
		return sfl_avro_append_string(r, v.s, v.len);
	case SFL_AVRO_BYTES:
	case SFL_AVRO_FIXED:
		sfl_avro_append_bytes(r, v.s, v.len);
		return TRUE;
	case SFL_AVRO_ENUM:
		g_string_append(r->out, v.node->symbols_json[v.i]);
		return TRUE;
	case SFL_AVRO_RECORD:
	case SFL_AVRO_ARRAY:
	case SFL_AVRO_MAP:
		return sfl_avro_read_compound(r, v.node);
	default:
		g_assert_not_reached();
	}
}

/* the per-call state: the stacks and the scratch buffer live for one datum */
static void
sfl_avro_reader_init(SflAvroReader *r, SflAvroSchema *schema, const guint8 *data, gsize len,
		     GString *out)
{
	memset(r, 0, sizeof(*r));
	r->schema = schema;
	r->begin = r->p = data;
	r->end = data + len;
	r->out = out;
	r->out_start = out->len;
	r->scratch = g_string_sized_new(256);
	r->ends = g_array_sized_new(FALSE, FALSE, sizeof(gsize), 64);
	r->map_items = g_array_new(FALSE, FALSE, sizeof(SflAvroMapItem));
	r->trail = g_ptr_array_new();
}

/* frees the reader's state; with @error, reports its failure and where it happened */
static void
sfl_avro_reader_finish(SflAvroReader *r, gsize len, GError **error)
{
	if (error != NULL && r->failure != NULL) {
		if (r->trail->len > 0) {
			g_autoptr(GString) path = g_string_new(NULL);
			for (guint i = r->trail->len; i > 0; i--) {
				if (path->len > 0)
					g_string_append_c(path, '.');
				g_string_append(path, g_ptr_array_index(r->trail, i - 1));
			}
			g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
				    "Avro payload of %" G_GSIZE_FORMAT " bytes, field %s: %s", len,
				    path->str, r->failure);
		} else {
			g_set_error(error, SFL_ERROR, SFL_ERROR_CORRUPT,
				    "Avro payload of %" G_GSIZE_FORMAT " bytes: %s", len,
				    r->failure);
		}
	}
	g_string_free(r->scratch, TRUE);
	g_array_unref(r->ends);
	g_array_unref(r->map_items);
	g_ptr_array_unref(r->trail);
	g_free(r->failure);
}

/**
 * sfl_avro_render_json:
 * @schema: the writer schema of the payload
 * @data: (array length=len): one schemaless Avro binary datum
 * @len: its size; bytes after the datum are ignored, as the original's reader ignores them
 * @out: where the JSON line is appended
 * @error: where a decode failure goes (%SFL_ERROR_CORRUPT)
 *
 * Returns: %TRUE when @out got the whole rendering; %FALSE with @out unchanged otherwise
 */
gboolean
sfl_avro_render_json(SflAvroSchema *schema, const guint8 *data, gsize len, GString *out,
		     GError **error)
{
	SflAvroReader r;
	gsize start;
	gboolean ok;

	g_return_val_if_fail(schema != NULL, FALSE);
	g_return_val_if_fail(data != NULL || len == 0, FALSE);
	g_return_val_if_fail(out != NULL, FALSE);

	start = out->len;
	sfl_avro_reader_init(&r, schema, data, len, out);
	ok = sfl_avro_read_value(&r, schema->root);
	if (!ok)
		g_string_truncate(out, start);
	sfl_avro_reader_finish(&r, len, error);
	return ok;
}

/* --- decoding into a record ----------------------------------------------------------------- */

/* UTF-8 as Python's strict decoder takes it, without rendering anything */
static gboolean
sfl_avro_check_utf8(SflAvroReader *r, const guint8 *s, gsize len)
{
	for (gsize i = 0; i < len;) {
		gunichar u;
		guint n;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		n = sfl_avro_utf8_char(s + i, len - i, &u);
		if (n == 0)
			return sfl_avro_fail(
				r, "string at byte %" G_GSIZE_FORMAT " is not valid UTF-8",
				(gsize)(s - r->begin));
		i += n;
	}
	return TRUE;
}

/* what a top-level field walk adds to: the record, and the jansson values it borrows */
typedef struct {
	SflRecord *record;
	json_t *holder;
} SflAvroDecodeTarget;

/*
 * One top-level field into the record. Compound values go through the JSON renderer and
 * jansson, which keeps one code path for their rendering rules (CDC names included); they are
 * rare outside CDC headers, so the parse costs little.
 */
static gboolean
sfl_avro_decode_field(SflAvroReader *r, const SflAvroMember *m, gpointer data)
{
	SflAvroDecodeTarget *target = data;
	SflRecord *record = target->record;
	SflAvroScalar v;
	json_t *nested;
	gsize at;

	if (!sfl_avro_read_scalar(r, m->type, &v))
		return FALSE;
	switch (v.node->kind) {
	case SFL_AVRO_NULL:
		sfl_record_add_null(record, m->name);
		return TRUE;
	case SFL_AVRO_BOOLEAN:
		sfl_record_add_bool(record, m->name, v.i != 0);
		return TRUE;
	case SFL_AVRO_INT:
	case SFL_AVRO_LONG:
		sfl_record_add_int(record, m->name, v.i);
		return TRUE;
	case SFL_AVRO_FLOAT:
	case SFL_AVRO_DOUBLE:
		sfl_record_add_real(record, m->name, v.d);
		return TRUE;
	case SFL_AVRO_STRING:
		if (!sfl_avro_check_utf8(r, v.s, v.len))
			return FALSE;
		sfl_record_add_string(record, m->name,
				      sfl_record_intern(record, (const gchar *)v.s, (gssize)v.len),
				      v.len);
		return TRUE;
	case SFL_AVRO_BYTES:
	case SFL_AVRO_FIXED:
		g_string_truncate(r->scratch, 0);
		sfl_avro_append_pybytes(r->scratch, v.s, v.len);
		sfl_record_add_string(
			record, m->name,
			sfl_record_intern(record, r->scratch->str, (gssize)r->scratch->len),
			r->scratch->len);
		return TRUE;
	case SFL_AVRO_ENUM:
		sfl_record_add_string(record, m->name, v.node->symbols[v.i],
				      strlen(v.node->symbols[v.i]));
		return TRUE;
	case SFL_AVRO_RECORD:
	case SFL_AVRO_ARRAY:
	case SFL_AVRO_MAP:
		at = (gsize)(r->p - r->begin);
		g_string_truncate(r->out, 0);
		r->out_start = 0;
		if (!sfl_avro_read_compound(r, v.node))
			return FALSE;
		nested = json_loadb(r->out->str, r->out->len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
				    NULL);
		if (nested == NULL)
			return sfl_avro_fail(r,
					     "the value at byte %" G_GSIZE_FORMAT
					     " cannot be held as a jansson value (NaN, Infinity or "
					     "a NUL in a map key)",
					     at);
		json_array_append_new(target->holder, nested);
		sfl_record_add_json(record, m->name, nested);
		return TRUE;
	default:
		g_assert_not_reached();
	}
}

/* a bitmap expansion of a top-level ChangeEventHeader: its name list joins the record too */
static void
sfl_avro_decode_member_done(SflAvroReader *r, const SflAvroNode *record, guint i, gpointer data)
{
	SflAvroDecodeTarget *target = data;

	if (i >= record->n_fields) {
		json_t *names = json_loadb(r->out->str, r->out->len, JSON_DECODE_ANY, NULL);

		g_assert(names != NULL);
		json_array_append_new(target->holder, names);
		sfl_record_add_json(target->record, record->members[i].name, names);
	}
	g_string_truncate(r->out, 0);
}

/**
 * sfl_avro_decode_record:
 * @schema: the writer schema of the payload; its top level must be a record
 * @data: (array length=len): one schemaless Avro binary datum
 * @len: its size; bytes after the datum are ignored
 * @record: where the top-level fields are added (normally just reset)
 * @holder: (out) (transfer full): the jansson values @record borrows; free it after @record is
 *   reset
 * @error: where a decode failure goes (%SFL_ERROR_CORRUPT)
 *
 * Returns: %TRUE with every field in @record; %FALSE with @error set, @record then holds a
 *   partial event to be reset and *@holder is %NULL
 */
gboolean
sfl_avro_decode_record(SflAvroSchema *schema, const guint8 *data, gsize len, SflRecord *record,
		       json_t **holder, GError **error)
{
	g_autoptr(GString) nested = NULL;
	g_autoptr(json_t) values = NULL;
	const SflAvroNode *root;
	SflAvroDecodeTarget target;
	SflAvroReader r;
	gboolean ok;

	g_return_val_if_fail(schema != NULL, FALSE);
	g_return_val_if_fail(data != NULL || len == 0, FALSE);
	g_return_val_if_fail(record != NULL, FALSE);
	g_return_val_if_fail(holder != NULL, FALSE);

	*holder = NULL;
	root = schema->root;
	if (root->kind != SFL_AVRO_RECORD) {
		g_set_error_literal(error, SFL_ERROR, SFL_ERROR_CORRUPT,
				    "Avro schema: the top level is not a record");
		return FALSE;
	}
	nested = g_string_sized_new(256);
	target.record = record;
	target.holder = values = json_array();
	sfl_avro_reader_init(&r, schema, data, len, nested);
	/* the top-level record is a level, as it is when rendering */
	r.depth = 1;
	ok = sfl_avro_walk_record(&r, root, sfl_avro_decode_field, sfl_avro_decode_member_done,
				  &target);
	sfl_avro_reader_finish(&r, len, error);
	if (ok)
		*holder = g_steal_pointer(&values);
	return ok;
}

/**
 * sfl_avro_schema_append_cdc_names:
 * @schema: the writer schema of the CDC event
 * @bitmaps: (nullable): the value of a ChangeEventHeader bitmap field as decoded (an array of
 *   "0x<hex>" / "<pos>-0x<hex>" strings); anything else names nothing
 * @out: where the names are appended, comma-separated
 *
 * The field names the bitmaps select, in the order sfl_avro_schema_new_full() with
 * %SFL_AVRO_SCHEMA_CDC_NAMES_IN_LINE lists them in the line (docs/internals/wire-notes.md,
 * "Change Data Capture bitmap fields").
 *
 * Returns: %TRUE when at least one name was appended
 */
gboolean
sfl_avro_schema_append_cdc_names(SflAvroSchema *schema, const json_t *bitmaps, GString *out)
{
	gboolean first = TRUE;
	gsize i;
	const json_t *element;

	g_return_val_if_fail(schema != NULL, FALSE);
	g_return_val_if_fail(out != NULL, FALSE);

	if (!json_is_array(bitmaps))
		return FALSE;
	json_array_foreach (bitmaps, i, element) {
		if (!json_is_string(element))
			continue;
		sfl_avro_append_bitmap(schema, TRUE, (const guint8 *)json_string_value(element),
				       json_string_length(element), out, &first);
	}
	return !first;
}
