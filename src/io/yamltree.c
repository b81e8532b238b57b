#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yamltree.h"

#include "io/infile.h"

/* Deeper than any profile or study nests, and shallow enough that
 * libyaml's scanner (which rescans its stack of possible keys at each
 * token) stays fast. */
#define YTREE_MAX_DEPTH 32
/* Nodes (scalars, lists, mappings, aliases) in one file. */
#define YTREE_MAX_NODES 100000

/* The 1-based line and column of byte @offset of @text: libyaml gives a
 * reader error (a NUL or another control character, bad UTF-8) only as
 * an offset. Columns count characters, as libyaml's marks do. */
static void
offset_mark(const char *text, size_t len, size_t offset, int *line, int *column)
{
	*line = 1;
	*column = 1;
	for (size_t i = 0; i < offset && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*column = 1;
		} else if (((unsigned char)text[i] & 0xC0) != 0x80) {
			(*column)++;
		}
	}
}

static bool
parser_error(const char *name, const yaml_parser_t *p, const char *text, size_t len,
	     struct plan_error *err)
{
	const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->context_mark;
	int line = (int)m->line + 1, column = (int)m->column + 1;

	if (p->error == YAML_READER_ERROR)
		offset_mark(text, len, p->problem_offset, &line, &column);
	return plan_error_set(err, PLAN_ERR_INPUT, name, line, column, "invalid YAML: %s%s%s",
			      p->problem ? p->problem : "syntax error",
			      p->context ? " " : "", p->context ? p->context : "");
}

/* One event of the pre-pass: false (with @err) past the depth or node cap. */
static bool
prescan_event(const char *name, const yaml_event_t *ev, int *depth, long *nodes, struct plan_error *err)
{
	int line = (int)ev->start_mark.line + 1, column = (int)ev->start_mark.column + 1;

	switch (ev->type) {
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (++*depth > YTREE_MAX_DEPTH + 1)
			return plan_error_set(err, PLAN_ERR_INPUT, name, line, column,
					      "document nested more than %d levels deep", YTREE_MAX_DEPTH);
		/* fallthrough */
	case YAML_SCALAR_EVENT:
	case YAML_ALIAS_EVENT:
		if (++*nodes > YTREE_MAX_NODES)
			return plan_error_set(err, PLAN_ERR_INPUT, name, line, column,
					      "more than %d values in one file", YTREE_MAX_NODES);
		return true;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		--*depth;
		return true;
	default:
		return true;
	}
}

/*
 * Walk the events before libyaml builds the document: the depth and the
 * number of nodes are checked as they are parsed, so that a file of
 * 50,000 nested brackets fails at the 33rd, not after a quadratic load.
 */
static bool
prescan(const char *name, const char *text, size_t len, struct plan_error *err)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0;
	long nodes = 0;
	bool ok = true, end = false;

	if (!yaml_parser_initialize(&p))
		return plan_error_set(err, PLAN_ERR_NOMEM, name, 0, 0, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (ok && !end) {
		if (!yaml_parser_parse(&p, &ev)) {
			ok = parser_error(name, &p, text, len, err);
			break;
		}
		end = ev.type == YAML_STREAM_END_EVENT;
		ok = prescan_event(name, &ev, &depth, &nodes, err);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return ok;
}

/* A key and the index of its pair, sorted by key then index. */
struct key_ref {
	const char *key;
	size_t pair;
};

static int
cmp_key_ref(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->pair > y->pair) - (x->pair < y->pair);
}

/*
 * Mark in @dup the pairs of @map whose key an earlier pair has: by
 * sorting the keys, so that a mapping of 40,000 keys is not compared
 * pair by pair. Keys that are not scalars are left unmarked.
 */
static bool
mark_duplicates(struct ytree *t, const yaml_node_t *map, unsigned char *dup, struct plan_error *err)
{
	yaml_node_pair_t *start = map->data.mapping.pairs.start;
	size_t n = (size_t)(map->data.mapping.pairs.top - start), m = 0;
	struct key_ref *refs = malloc((n ? n : 1) * sizeof(*refs));

	if (!refs)
		return plan_error_set(err, PLAN_ERR_NOMEM, t->file, 0, 0, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const char *k = ytree_scalar(ytree_node(t, start[i].key));

		dup[i] = 0;
		if (k)
			refs[m++] = (struct key_ref){ k, i };
	}
	qsort(refs, m, sizeof(*refs), cmp_key_ref);
	for (size_t i = 1; i < m; i++)
		if (strcmp(refs[i].key, refs[i - 1].key) == 0)
			dup[refs[i].pair] = 1;
	free(refs);
	return true;
}

/* "\0" in a quoted scalar: C strings would end there ("2\0abc" read as 2). */
static bool
has_nul(const yaml_node_t *node)
{
	return node->type == YAML_SCALAR_NODE &&
	       strlen((const char *)node->data.scalar.value) != node->data.scalar.length;
}

/*
 * libyaml accepts duplicate keys silently; a profile must not. Aliases
 * make the document a graph: each node is checked once (@seen), or a
 * kilobyte of nested aliases would take hours (a "billion laughs").
 */
static bool
check_duplicates(struct ytree *t, yaml_node_t *node, int depth, unsigned char *seen,
		 struct plan_error *err);

static bool
check_mapping(struct ytree *t, yaml_node_t *node, int depth, unsigned char *seen, struct plan_error *err)
{
	yaml_node_pair_t *start = node->data.mapping.pairs.start;
	size_t n = (size_t)(node->data.mapping.pairs.top - start);
	unsigned char *dup = malloc(n ? n : 1);
	bool ok = dup && mark_duplicates(t, node, dup, err);

	if (!dup)
		return plan_error_set(err, PLAN_ERR_NOMEM, t->file, 0, 0, "out of memory");
	/* In file order: the first problem in the file is the one reported. */
	for (size_t i = 0; ok && i < n; i++) {
		yaml_node_t *k = ytree_node(t, start[i].key);

		if (!ytree_scalar(k))
			ok = ytree_error(t, k, err, "mapping keys must be plain scalars");
		else if (has_nul(k))
			ok = ytree_error(t, k, err, "a key contains a NUL character");
		else if (dup[i])
			ok = ytree_error(t, k, err, "duplicate key '%s'", ytree_scalar(k));
		else
			ok = check_duplicates(t, ytree_node(t, start[i].value), depth + 1, seen, err);
	}
	free(dup);
	return ok;
}

static bool
check_duplicates(struct ytree *t, yaml_node_t *node, int depth, unsigned char *seen,
		 struct plan_error *err)
{
	ptrdiff_t index = node - t->doc.nodes.start;

	if (depth > YTREE_MAX_DEPTH)
		return ytree_error(t, node, err, "document nested more than %d levels deep", YTREE_MAX_DEPTH);
	if (seen[index])
		return true;
	seen[index] = 1;
	if (has_nul(node))
		return ytree_error(t, node, err, "a value contains a NUL character");
	if (node->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *i = node->data.sequence.items.start;
		     i < node->data.sequence.items.top; i++)
			if (!check_duplicates(t, ytree_node(t, *i), depth + 1, seen, err))
				return false;
	} else if (node->type == YAML_MAPPING_NODE) {
		return check_mapping(t, node, depth, seen, err);
	}
	return true;
}

/* The one document of @p, or an error; @text for the marks of reader errors. */
static bool
load_document(struct ytree *t, yaml_parser_t *p, const char *text, size_t len, struct plan_error *err)
{
	yaml_document_t extra;

	if (!yaml_parser_load(p, &t->doc))
		return parser_error(t->file, p, text, len, err);
	t->loaded = true;
	if (!yaml_document_get_root_node(&t->doc)) {
		ytree_release(t);
		return plan_error_set(err, PLAN_ERR_INPUT, t->file, 1, 1,
				      "empty document: expected a mapping of keys");
	}
	if (!yaml_parser_load(p, &extra)) {
		ytree_release(t);
		return parser_error(t->file, p, text, len, err);
	}
	if (yaml_document_get_root_node(&extra)) {
		int line = (int)extra.start_mark.line + 1;

		yaml_document_delete(&extra);
		ytree_release(t);
		return plan_error_set(err, PLAN_ERR_INPUT, t->file, line, 1,
				      "only one YAML document is allowed per profile");
	}
	yaml_document_delete(&extra);
	return true;
}

static bool
load(struct ytree *t, yaml_parser_t *p, const char *text, size_t len, struct plan_error *err)
{
	size_t n;
	unsigned char *seen;
	bool ok;

	if (!load_document(t, p, text, len, err))
		return false;
	n = (size_t)(t->doc.nodes.top - t->doc.nodes.start);
	seen = calloc(n ? n : 1, 1);
	if (!seen) {
		ytree_release(t);
		return plan_error_set(err, PLAN_ERR_NOMEM, t->file, 0, 0, "out of memory");
	}
	ok = check_duplicates(t, ytree_root(t), 0, seen, err);
	free(seen);
	if (!ok)
		ytree_release(t);
	return ok;
}

bool
ytree_load_string(struct ytree *t, const char *name, const char *text,
		  size_t len, struct plan_error *err)
{
	yaml_parser_t p;
	bool ok;

	memset(t, 0, sizeof(*t));
	snprintf(t->file, sizeof(t->file), "%s", name);
	if (len > (size_t)INFILE_MAX_YAML)
		return plan_error_set(err, PLAN_ERR_INPUT, name, 0, 0, "larger than %ld MiB",
				      INFILE_MAX_YAML >> 20);
	if (!prescan(name, text, len, err))
		return false;
	if (!yaml_parser_initialize(&p))
		return plan_error_set(err, PLAN_ERR_NOMEM, name, 0, 0, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	ok = load(t, &p, text, len, err);
	yaml_parser_delete(&p);
	return ok;
}

bool
ytree_load_file(struct ytree *t, const char *path, struct plan_error *err)
{
	char *text;
	size_t len;
	bool ok;

	memset(t, 0, sizeof(*t));
	snprintf(t->file, sizeof(t->file), "%s", path);
	if (!infile_read(path, INFILE_MAX_YAML, &text, &len, err))
		return false;
	ok = ytree_load_string(t, path, text, len, err);
	free(text);
	return ok;
}

void
ytree_release(struct ytree *t)
{
	if (t && t->loaded) {
		yaml_document_delete(&t->doc);
		t->loaded = false;
	}
}

yaml_node_t *
ytree_root(struct ytree *t)
{
	return yaml_document_get_root_node(&t->doc);
}

yaml_node_t *
ytree_node(struct ytree *t, int index)
{
	return yaml_document_get_node(&t->doc, index);
}

const char *
ytree_scalar(const yaml_node_t *node)
{
	if (!node || node->type != YAML_SCALAR_NODE)
		return NULL;
	return (const char *)node->data.scalar.value;
}

bool
ytree_error(const struct ytree *t, const yaml_node_t *node,
	    struct plan_error *err, const char *fmt, ...)
{
	char msg[sizeof(err->message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return plan_error_set(err, PLAN_ERR_INPUT, t->file,
			      node ? (int)node->start_mark.line + 1 : 0,
			      node ? (int)node->start_mark.column + 1 : 0, "%s", msg);
}

yaml_node_t *
ytree_find(struct ytree *t, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = ytree_scalar(ytree_node(t, p->key));

		if (k && strcmp(k, key) == 0)
			return ytree_node(t, p->value);
	}
	return NULL;
}

yaml_node_t *
ytree_find_path(struct ytree *t, const char *path)
{
	char buf[128];
	char *save = NULL;
	yaml_node_t *node = ytree_root(t);

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *tok = strtok_r(buf, ".", &save); tok && node; tok = strtok_r(NULL, ".", &save))
		node = ytree_find(t, node, tok);
	return node ? node : ytree_root(t);
}
