#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/numparse.h"
#include "io/schema.h"
#include "io/utf8.h"

int
schema_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[64];

	if (la > 62 || lb > 62)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = a[i - 1] == b[j - 1] ? 0 : 1;
			int best = diag + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *
schema_nearest(const char *name, const void *rows, size_t stride, size_t name_offset)
{
	const char *best = NULL;
	int best_d = 3;

	for (const char *row = rows;; row += stride) {
		const char *candidate;
		int d;

		memcpy(&candidate, row + name_offset, sizeof(candidate));
		if (!candidate)
			return best;
		d = schema_edit_distance(name, candidate);
		if (d < best_d) {
			best_d = d;
			best = candidate;
		}
	}
}

/* The tail of a key list cut short; sized for up to 999 keys left out. */
#define SCHEMA_KEYS_MORE ", and %d more: see plan-cli-profiles(5)"

/*
 * The keys of @table, ", "-separated, into @buf in table order. A table
 * longer than @buf (the framework's 65 keys) ends at the last whole key
 * with SCHEMA_KEYS_MORE, never silently short: a key skipped without a
 * word read as not valid (issue 25, hostile11).
 */
static void
schema_key_names(const struct schema_key *table, char *buf, size_t size)
{
	const size_t reserve = sizeof(SCHEMA_KEYS_MORE) + 1; /* "%d" as up to 3 digits */
	size_t len = 0;
	int left = 0;

	buf[0] = '\0';
	for (const struct schema_key *k = table; k->key; k++) {
		const char *sep = len ? ", " : "";
		size_t need = strlen(sep) + strlen(k->key);

		if (left || len + need + reserve > size) {
			left++;
			continue;
		}
		len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, k->key);
	}
	if (left)
		snprintf(buf + len, size - len, SCHEMA_KEYS_MORE, left);
}

static bool
unknown_key(const struct schema_key *table, struct ytree *t, yaml_node_t *key,
	    struct plan_error *err)
{
	const char *name = ytree_scalar(key);
	const char *best = schema_nearest(name, table, sizeof(*table), offsetof(struct schema_key, key));
	char valid[512];

	if (best)
		return ytree_error(t, key, err, "unknown key '%s'; did you mean '%s'?", name, best);
	schema_key_names(table, valid, sizeof(valid));
	return ytree_error(t, key, err, "unknown key '%s' (valid keys: %s)", name, valid);
}

static bool
check_range(const struct schema_key *k, struct ytree *t, yaml_node_t *node,
	    double v, const char *text, struct plan_error *err)
{
	/* A quantity's bounds are in SI: say which unit. */
	const char *unit = k->type == SCHEMA_QUANTITY ? units_si_symbol(k->unit) : "";
	const char *sep = unit[0] ? " " : "";

	if (v < k->min || (k->min_exclusive && v == k->min))
		return ytree_error(t, node, err, "'%s' must be %s %g%s%s, got '%s'", k->key,
				   k->min_exclusive ? "greater than" : "at least",
				   k->min, sep, unit, text);
	if (v > k->max)
		return ytree_error(t, node, err, "'%s' must be at most %g%s%s, got '%s'",
				   k->key, k->max, sep, unit, text);
	return true;
}

static bool
parse_curve(const struct schema_key *k, struct ytree *t, yaml_node_t *node,
	    struct curve *c, struct plan_error *err)
{
	if (node->type != YAML_SEQUENCE_NODE)
		return ytree_error(t, node, err,
				   "'%s' must be a list of [x, y] pairs, e.g. [[1e9, 0.4], [1e12, 0.8]]",
				   k->key);
	c->n = 0;
	for (yaml_node_item_t *i = node->data.sequence.items.start;
	     i < node->data.sequence.items.top; i++) {
		yaml_node_t *pair = ytree_node(t, *i);
		const char *text[2];
		double xy[2];
		int m = 0;

		if (pair->type != YAML_SEQUENCE_NODE ||
		    pair->data.sequence.items.top - pair->data.sequence.items.start != 2)
			return ytree_error(t, pair, err, "each point of '%s' must be a pair [x, y]", k->key);
		for (yaml_node_item_t *j = pair->data.sequence.items.start;
		     j < pair->data.sequence.items.top; j++, m++) {
			yaml_node_t *v = ytree_node(t, *j);

			/* 1e400 reads as HUGE_VAL: refused below with the range. */
			text[m] = ytree_scalar(v);
			if (num_parse_double_status(text[m], &xy[m]) == NUM_NOT_A_NUMBER)
				return ytree_error(t, v, err, "expected a number in '%s', got '%s'",
						   k->key, text[m] ? text[m] : "a collection");
		}
		if (c->n >= CURVE_MAX_POINTS)
			return ytree_error(t, pair, err, "'%s' has more than %d points",
					   k->key, CURVE_MAX_POINTS);
		if (xy[0] <= 0 || (c->n > 0 && xy[0] <= c->x[c->n - 1]))
			return ytree_error(t, pair, err,
					   "'%s': x values must be positive and strictly increasing", k->key);
		if (isinf(xy[0]))
			return ytree_error(t, pair, err, "'%s': x must be at most %g, got '%s'", k->key, DBL_MAX,
					   text[0]);
		/* Every curve's y scales a time: 0 (or a NaN) is refused even
		 * when the key gives no floor of its own. */
		if (!(xy[1] >= k->min && xy[1] <= k->max) || xy[1] <= 0 ||
		    (k->min_exclusive && xy[1] <= k->min))
			return ytree_error(t, pair, err, "'%s': y must be in %c%g, %g], got '%s'", k->key,
					   k->min > 0 && !k->min_exclusive ? '[' : '(', k->min, k->max, text[1]);
		c->x[c->n] = xy[0];
		c->y[c->n] = xy[1];
		c->n++;
	}
	if (c->n < 2)
		return ytree_error(t, node, err, "'%s' needs at least two points", k->key);
	return true;
}

/* The setters of set_scalar, one per scalar type: parse @text, check it
 * against @k's range or choices, store it at @dst. */
static bool
scalar_int(const struct schema_key *k, struct ytree *t, yaml_node_t *node, const char *text, char *dst,
	   struct plan_error *err)
{
	double d = 0.0;
	long l;

	if (!num_parse_long(text, LONG_MIN, LONG_MAX, &l)) {
		/* A whole number past LONG_MAX (it still reads as a double) is
		 * too large, and so is one past the largest double (1e309, read
		 * as +-HUGE_VAL); '2.0' and '1e3' are whole but not written as one. */
		enum num_status st = num_parse_double_status(text, &d);

		if ((st == NUM_OUT_OF_RANGE || (st == NUM_OK && d == floor(d))) && fabs(d) > (double)LONG_MAX)
			/* The side it is past: '-1e308' was "must be at most". */
			return d < 0 ? ytree_error(t, node, err, "'%s' must be at least %g, got '%s'", k->key, k->min,
						   text)
				     : ytree_error(t, node, err, "'%s' must be at most %g, got '%s'", k->key, k->max,
						   text);
		return ytree_error(t, node, err, "'%s' must be a whole number, got '%s'",
				   k->key, text);
	}
	if (!check_range(k, t, node, (double)l, text, err))
		return false;
	*(int *)dst = (int)l;
	return true;
}

static bool
scalar_bool(const struct schema_key *k, struct ytree *t, yaml_node_t *node, const char *text, char *dst,
	    struct plan_error *err)
{
	if (strcmp(text, "true") == 0)
		*(bool *)dst = true;
	else if (strcmp(text, "false") == 0)
		*(bool *)dst = false;
	else
		return ytree_error(t, node, err, "'%s' must be true or false, got '%s'",
				   k->key, text);
	return true;
}

static bool
scalar_string(const struct schema_key *k, struct ytree *t, yaml_node_t *node, const char *text, char *dst,
	      struct plan_error *err)
{
	if (text[0] == '\0')
		return ytree_error(t, node, err, "'%s' must not be empty", k->key);
	if (strlen(text) >= k->size)
		return ytree_error(t, node, err, "'%s' is longer than %zu characters",
				   k->key, k->size - 1);
	/* A profile's name is printed on one line of the text report and in
	 * a CSV cell: a newline or another control character ("a\nb", or
	 * --framework-set name=...) split the report's lines (issue 25,
	 * twenty-third session). Patterns name the bad character themselves;
	 * the free-text description may hold them. */
	if (strcmp(k->key, "name") == 0)
		for (const char *c = text; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return ytree_error(t, node, err, "'%s' holds a control character (a newline, a tab): "
						   "write it on one line", k->key);
	memcpy(dst, text, strlen(text) + 1);
	return true;
}

/* SCHEMA_NUMBER (dimensionless) and SCHEMA_QUANTITY (with a unit, to SI). */
static bool
scalar_double(const struct schema_key *k, struct ytree *t, yaml_node_t *node, const char *text, char *dst,
	      struct plan_error *err)
{
	char why[256];
	double d = 0.0;

	/* A number past the largest double (1e400, or '1e306 PFLOPS' in SI)
	 * reads as +-HUGE_VAL: out of the key's range, which check_range
	 * names, not "not a number". */
	if (k->type == SCHEMA_QUANTITY) {
		if (!units_parse(text, k->unit, &d, why, sizeof(why)) && !isinf(d))
			return ytree_error(t, node, err, "'%s': %s", k->key, why);
	} else if (num_parse_double_status(text, &d) == NUM_NOT_A_NUMBER) {
		return ytree_error(t, node, err, "'%s' must be a number, got '%s'", k->key, text);
	}
	if (!check_range(k, t, node, d, text, err))
		return false;
	/* For a row whose max is infinite: +-HUGE_VAL passed check_range. */
	if (!isfinite(d))
		return ytree_error(t, node, err, "'%s' is too large for a number, got '%s'", k->key, text);
	*(double *)dst = d;
	return true;
}

static bool
scalar_enum(const struct schema_key *k, struct ytree *t, yaml_node_t *node, const char *text, char *dst,
	    struct plan_error *err)
{
	char valid[256] = "";

	for (int i = 0; k->choices[i]; i++) {
		if (strcmp(k->choices[i], text) == 0) {
			*(int *)dst = i;
			return true;
		}
		if (strlen(valid) + strlen(k->choices[i]) + 3 < sizeof(valid)) {
			if (valid[0])
				strcat(valid, ", ");
			strcat(valid, k->choices[i]);
		}
	}
	return ytree_error(t, node, err, "unknown value '%s' for '%s' (valid: %s)",
			   text, k->key, valid);
}

static bool
set_scalar(const struct schema_key *k, struct ytree *t, yaml_node_t *node,
	   const char *text, void *obj, struct plan_error *err)
{
	char *dst = (char *)obj + k->offset;

	switch (k->type) {
	case SCHEMA_INT:
		return scalar_int(k, t, node, text, dst, err);
	case SCHEMA_BOOL:
		return scalar_bool(k, t, node, text, dst, err);
	case SCHEMA_STRING:
		return scalar_string(k, t, node, text, dst, err);
	case SCHEMA_NUMBER:
	case SCHEMA_QUANTITY:
		return scalar_double(k, t, node, text, dst, err);
	case SCHEMA_ENUM:
		return scalar_enum(k, t, node, text, dst, err);
	case SCHEMA_MAP:
	case SCHEMA_CURVE:
	case SCHEMA_CUSTOM:
		break;
	}
	return ytree_error(t, node, err, "'%s' must be a mapping", k->key);
}

static bool
set_default(const struct schema_key *k, void *obj, struct plan_error *err)
{
	struct ytree none = { 0 };

	snprintf(none.file, sizeof(none.file), "<default of %s>", k->key);
	return set_scalar(k, &none, NULL, k->def, obj, err);
}

/* Set every key present in the mapping @node; @skip (may be NULL) is not ours. */
static bool
apply_present(const struct schema_key *table, struct ytree *t, yaml_node_t *node,
	      void *obj, const char *skip, struct plan_error *err)
{
	if (node->type != YAML_MAPPING_NODE)
		return ytree_error(t, node, err, "expected a mapping of keys");

	for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
	     p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *key = ytree_node(t, p->key);
		yaml_node_t *val = ytree_node(t, p->value);
		const char *name = ytree_scalar(key);
		const struct schema_key *k = table;

		if (skip && strcmp(name, skip) == 0)
			continue;
		while (k->key && strcmp(k->key, name) != 0)
			k++;
		if (!k->key)
			return unknown_key(table, t, key, err);
		if (k->type == SCHEMA_CUSTOM) {
			if (!k->parse(k, t, val, (char *)obj + k->offset, err))
				return false;
			continue;
		}
		if (k->type == SCHEMA_MAP) {
			if (!schema_apply(k->sub, t, val, (char *)obj + k->offset, err))
				return false;
			continue;
		}
		if (k->type == SCHEMA_CURVE) {
			if (!parse_curve(k, t, val, (struct curve *)((char *)obj + k->offset), err))
				return false;
			continue;
		}
		if (val->type != YAML_SCALAR_NODE)
			return ytree_error(t, val, err, "'%s' must be a single value, not a %s",
					   name, val->type == YAML_MAPPING_NODE ? "mapping" : "list");
		if (ytree_scalar(val)[0] == '\0' && val->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			return ytree_error(t, val, err, "'%s' has no value", name);
		if (!set_scalar(k, t, val, ytree_scalar(val), obj, err))
			return false;
	}
	return true;
}

bool
schema_apply_over(const struct schema_key *table, struct ytree *t, yaml_node_t *node,
		  void *obj, const char *skip, struct plan_error *err)
{
	return apply_present(table, t, node, obj, skip, err);
}

bool
schema_apply(const struct schema_key *table, struct ytree *t,
	     yaml_node_t *node, void *obj, struct plan_error *err)
{
	if (!apply_present(table, t, node, obj, NULL, err))
		return false;

	/* Second pass: required keys and defaults. */
	for (const struct schema_key *k = table; k->key; k++) {
		bool present = false;

		for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
		     p < node->data.mapping.pairs.top; p++)
			if (strcmp(ytree_scalar(ytree_node(t, p->key)), k->key) == 0)
				present = true;
		if (present)
			continue;
		if (k->required)
			return ytree_error(t, node, err, "missing required key '%s'", k->key);
		if (k->type == SCHEMA_MAP) {
			/* An absent optional block still gets its defaults, unless
			 * it has required keys: then it stays zeroed ("not given"). */
			struct ytree empty;
			bool has_required = false;

			for (const struct schema_key *s = k->sub; s->key; s++)
				has_required |= s->required;
			if (has_required)
				continue;

			if (!ytree_load_string(&empty, t->file, "{}", 2, err))
				return false;
			if (!schema_apply(k->sub, &empty, ytree_root(&empty),
					  (char *)obj + k->offset, err)) {
				ytree_release(&empty);
				return false;
			}
			ytree_release(&empty);
			continue;
		}
		if (k->def && !set_default(k, obj, err))
			return false;
	}
	return true;
}

static const char *
type_name(const struct schema_key *k)
{
	switch (k->type) {
	case SCHEMA_INT: return "integer";
	case SCHEMA_BOOL: return "true|false";
	case SCHEMA_STRING: return "string";
	case SCHEMA_NUMBER: return "number";
	case SCHEMA_QUANTITY: return units_kind_name(k->unit);
	case SCHEMA_ENUM: return "enum";
	case SCHEMA_MAP: return "mapping";
	case SCHEMA_CURVE: return "[[x, y], ...]";
	case SCHEMA_CUSTOM: return "name or mapping";
	}
	return "?";
}

void
schema_print(const struct schema_key *table, FILE *out, int indent)
{
	for (const struct schema_key *k = table; k->key; k++) {
		fprintf(out, "%*s%s: %s%s", indent, "", k->key, type_name(k),
			k->required ? ", required" : "");
		if (k->type == SCHEMA_ENUM) {
			fprintf(out, " (");
			for (int i = 0; k->choices[i]; i++)
				fprintf(out, "%s%s", i ? "|" : "", k->choices[i]);
			fprintf(out, ")");
		}
		if (k->def)
			fprintf(out, ", default %s", k->def);
		fprintf(out, "\n%*s    %s\n", indent, "", k->help);
		if ((k->type == SCHEMA_MAP || k->type == SCHEMA_CUSTOM) && k->sub)
			schema_print(k->sub, out, indent + 2);
	}
}

bool
schema_load(const struct schema_profile *kind, const char *name, const char *text,
	    void *obj, struct plan_error *err)
{
	struct ytree t;
	bool ok;

	memset(obj, 0, kind->size);
	if (text ? !ytree_load_string(&t, name, text, strlen(text), err) : !ytree_load_file(&t, name, err))
		return false;
	if (kind->init)
		kind->init(obj);
	ok = schema_apply(kind->table, &t, ytree_root(&t), obj, err) &&
	     (!kind->finish || kind->finish(obj, &t, err));
	ytree_release(&t);
	return ok;
}

/* The shortest of %.15g, %.16g, %.17g that strtod reads back as @v. */
static void
write_double(FILE *out, double v)
{
	char buf[40];

	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, out);
}

/*
 * A YAML double-quoted scalar: quotes and backslashes escaped, control
 * characters as \xHH. YAML must be UTF-8: bytes that are not (a file name
 * in a calibration note) become the text \xHH (utf8.h), written with its
 * backslash escaped so that it reads back as that text, not as U+00HH.
 */
static void
write_string(FILE *out, const char *s)
{
	static const char special[] = "\"\\\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
				      "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f";
	char *escaped = NULL;

	if (!utf8_valid(s)) {
		size_t need = utf8_escape(NULL, 0, s, false) + 1;

		if ((escaped = malloc(need)))
			utf8_escape(escaped, need, s, false);
		s = escaped ? escaped : "";
	}
	fputc('"', out);
	while (*s) {
		size_t plain = strcspn(s, special);

		fwrite(s, 1, plain, out);
		s += plain;
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s++);
		else if (*s)
			fprintf(out, "\\x%02x", (unsigned char)*s++);
	}
	fputc('"', out);
	free(escaped);
}

static void
write_curve(FILE *out, const struct curve *c)
{
	fputc('[', out);
	for (int i = 0; i < c->n; i++) {
		fputs(i ? ", [" : "[", out);
		write_double(out, c->x[i]);
		fputs(", ", out);
		write_double(out, c->y[i]);
		fputc(']', out);
	}
	fputs("]\n", out);
}

void
schema_write(const struct schema_key *table, const void *obj, FILE *out, int indent)
{
	for (const struct schema_key *k = table; k->key; k++) {
		const char *v = (const char *)obj + k->offset;

		if ((k->type == SCHEMA_STRING && !v[0]) ||
		    (k->type == SCHEMA_CURVE && ((const struct curve *)(const void *)v)->n == 0) ||
		    (k->type == SCHEMA_CUSTOM && !k->sub))
			continue;
		/* An optional number without a default reads 0 when absent; where
		 * 0 is out of its range it stands for "absent" (a cluster's
		 * all_to_all_efficiency: the link's efficiency), and writing it
		 * would give a file that does not load. */
		if ((k->type == SCHEMA_NUMBER || k->type == SCHEMA_QUANTITY) && !k->def && !k->required &&
		    k->min > 0 && *(const double *)(const void *)v == 0.0)
			continue;
		fprintf(out, "%*s%s:", indent, "", k->key);
		switch (k->type) {
		case SCHEMA_INT: fprintf(out, " %d\n", *(const int *)(const void *)v); break;
		case SCHEMA_BOOL: fprintf(out, " %s\n", *(const bool *)(const void *)v ? "true" : "false"); break;
		case SCHEMA_ENUM: fprintf(out, " %s\n", k->choices[*(const int *)(const void *)v]); break;
		case SCHEMA_STRING: fputc(' ', out); write_string(out, v); fputc('\n', out); break;
		case SCHEMA_NUMBER:
		case SCHEMA_QUANTITY:
			fputc(' ', out);
			write_double(out, *(const double *)(const void *)v);
			fprintf(out, "%s%s\n", k->type == SCHEMA_QUANTITY ? " " : "",
				k->type == SCHEMA_QUANTITY ? units_si_symbol(k->unit) : "");
			break;
		case SCHEMA_CURVE: fputc(' ', out); write_curve(out, (const struct curve *)(const void *)v); break;
		case SCHEMA_MAP:
		case SCHEMA_CUSTOM:
			fputc('\n', out);
			schema_write(k->sub, v, out, indent + 2);
			break;
		}
	}
}

/* An unknown key of a command-line overlay: the nearest key, else the valid ones. */
static bool
set_text_unknown(const struct schema_key *table, struct ytree *t, const char *key, struct plan_error *err)
{
	const char *best = schema_nearest(key, table, sizeof(*table), offsetof(struct schema_key, key));
	char valid[512];

	if (strchr(key, '.'))
		return ytree_error(t, NULL, err, "unknown key '%.64s': this profile has no nested keys", key);
	if (best)
		return ytree_error(t, NULL, err, "unknown key '%.64s'; did you mean '%s'?", key, best);
	schema_key_names(table, valid, sizeof(valid));
	return ytree_error(t, NULL, err, "unknown key '%.64s' (valid keys: %s)", key, valid);
}

bool
schema_set_text(const struct schema_key *table, const char *where, const char *key,
		const char *text, void *obj, struct plan_error *err)
{
	struct ytree t = { 0 };
	const struct schema_key *k = table;

	snprintf(t.file, sizeof(t.file), "%s", where);
	while (k->key && strcmp(k->key, key) != 0)
		k++;
	if (!k->key)
		return set_text_unknown(table, &t, key, err);
	if (k->type == SCHEMA_MAP || k->type == SCHEMA_CURVE || k->type == SCHEMA_CUSTOM)
		return ytree_error(&t, NULL, err, "'%s' is not a single value: set it in a profile file", key);
	if (text[0] == '\0')
		return ytree_error(&t, NULL, err, "'%s' has no value", key);
	return set_scalar(k, &t, NULL, text, obj, err);
}
