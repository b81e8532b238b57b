#include <string.h>

#include "io/fields.h"
#include "io/format.h"
#include "io/utf8.h"

/* One element of a field as JSON. jansson refuses NaN and infinities
 * (json_real gives NULL), and so the object fails as a whole. */
static json_t *
json_value(const struct field_value *v)
{
	switch (v->type) {
	case FIELD_INT: return json_integer(v->i);
	case FIELD_NUM: return json_real(v->d);
	case FIELD_BOOL: return json_boolean(v->b);
	default: return v->s ? utf8_json_string(v->s) : json_null(); /* a run's id: any bytes */
	}
}

static json_t *
json_field(const struct field *f, const struct report *r)
{
	int n = field_length(f, r);
	struct field_value v;
	json_t *a;

	if (n < 0) {
		field_get(f, r, 0, &v);
		return json_value(&v);
	}
	a = json_array();
	for (int i = 0; a && i < n; i++) {
		field_get(f, r, i, &v);
		if (json_array_append_new(a, json_value(&v)) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The object that holds @key's last component, made where it is missing
 * (an object thus comes where its first key is); the leaf into *leaf. */
static json_t *
json_parent(json_t *root, const char *key, const char **leaf)
{
	const char *dot;
	json_t *obj = root;

	while (obj && (dot = strchr(key, '.'))) {
		char name[64];
		json_t *child;

		snprintf(name, sizeof(name), "%.*s", (int)(dot - key), key);
		child = json_object_get(obj, name);
		if (!child && (!(child = json_object()) || json_object_set_new(obj, name, child) != 0))
			return NULL;
		obj = child;
		key = dot + 1;
	}
	*leaf = key;
	return obj;
}

json_t *
format_json_object(const struct report *r)
{
	json_t *root = field_report_finite(r) ? json_object() : NULL;

	for (size_t i = 0; root && i < field_count; i++) {
		const struct field *f = &field_table[i];
		const char *leaf;
		json_t *parent;

		if (!f->key || !field_present(f, r))
			continue;
		parent = json_parent(root, f->key, &leaf);
		if (!parent || json_object_set_new(parent, leaf, json_field(f, r)) != 0) {
			json_decref(root);
			return NULL;
		}
	}
	return root;
}

bool
format_json(FILE *out, const struct report *r)
{
	json_t *obj = format_json_object(r);
	int rc;

	if (!obj)
		return false;
	rc = json_dumpf(obj, out, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	json_decref(obj);
	if (rc != 0)
		return false;
	fputc('\n', out);
	return !ferror(out);
}
