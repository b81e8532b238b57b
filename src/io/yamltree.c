#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yamltree.h"

static bool
parser_error(const char *name, const yaml_parser_t *p, struct plan_error *err)
{
	const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->context_mark;

	return plan_error_set(err, PLAN_ERR_INPUT, name, (int)m->line + 1,
			      (int)m->column + 1, "invalid YAML: %s%s%s",
			      p->problem ? p->problem : "syntax error",
			      p->context ? " " : "", p->context ? p->context : "");
}

/*
 * libyaml accepts duplicate keys silently; a profile must not. Aliases
 * make the document a graph: each node is checked once (@seen), or a
 * kilobyte of nested aliases would take hours (a "billion laughs").
 */
static bool
check_duplicates(struct ytree *t, yaml_node_t *node, int depth, unsigned char *seen,
		 struct plan_error *err)
{
	ptrdiff_t index = node - t->doc.nodes.start;

	if (depth > 32)
		return ytree_error(t, node, err, "document nested too deeply");
	if (seen[index])
		return true;
	seen[index] = 1;
	if (node->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *i = node->data.sequence.items.start;
		     i < node->data.sequence.items.top; i++)
			if (!check_duplicates(t, ytree_node(t, *i), depth + 1, seen, err))
				return false;
	} else if (node->type == YAML_MAPPING_NODE) {
		yaml_node_pair_t *start = node->data.mapping.pairs.start;
		yaml_node_pair_t *top = node->data.mapping.pairs.top;

		for (yaml_node_pair_t *a = start; a < top; a++) {
			yaml_node_t *ka = ytree_node(t, a->key);
			const char *sa = ytree_scalar(ka);

			if (!sa)
				return ytree_error(t, ka, err, "mapping keys must be plain scalars");
			for (yaml_node_pair_t *b = start; b < a; b++) {
				const char *sb = ytree_scalar(ytree_node(t, b->key));

				if (sb && strcmp(sa, sb) == 0)
					return ytree_error(t, ka, err, "duplicate key '%s'", sa);
			}
			if (!check_duplicates(t, ytree_node(t, a->value), depth + 1, seen, err))
				return false;
		}
	}
	return true;
}

static bool
load(struct ytree *t, yaml_parser_t *p, struct plan_error *err)
{
	yaml_document_t extra;
	yaml_node_t *root;

	if (!yaml_parser_load(p, &t->doc))
		return parser_error(t->file, p, err);
	t->loaded = true;
	root = yaml_document_get_root_node(&t->doc);
	if (!root) {
		ytree_release(t);
		return plan_error_set(err, PLAN_ERR_INPUT, t->file, 1, 1,
				      "empty document: expected a mapping of keys");
	}
	if (!yaml_parser_load(p, &extra)) {
		ytree_release(t);
		return parser_error(t->file, p, err);
	}
	if (yaml_document_get_root_node(&extra)) {
		int line = (int)extra.start_mark.line + 1;

		yaml_document_delete(&extra);
		ytree_release(t);
		return plan_error_set(err, PLAN_ERR_INPUT, t->file, line, 1,
				      "only one YAML document is allowed per profile");
	}
	yaml_document_delete(&extra);
	{
		size_t n = (size_t)(t->doc.nodes.top - t->doc.nodes.start);
		unsigned char *seen = calloc(n ? n : 1, 1);
		bool ok;

		if (!seen) {
			ytree_release(t);
			return plan_error_set(err, PLAN_ERR_NOMEM, t->file, 0, 0, "out of memory");
		}
		ok = check_duplicates(t, root, 0, seen, err);
		free(seen);
		if (!ok) {
			ytree_release(t);
			return false;
		}
	}
	return true;
}

bool
ytree_load_string(struct ytree *t, const char *name, const char *text,
		  size_t len, struct plan_error *err)
{
	yaml_parser_t p;
	bool ok;

	memset(t, 0, sizeof(*t));
	snprintf(t->file, sizeof(t->file), "%s", name);
	if (!yaml_parser_initialize(&p))
		return plan_error_set(err, PLAN_ERR_NOMEM, name, 0, 0, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	ok = load(t, &p, err);
	yaml_parser_delete(&p);
	return ok;
}

bool
ytree_load_file(struct ytree *t, const char *path, struct plan_error *err)
{
	yaml_parser_t p;
	FILE *f;
	bool ok;

	memset(t, 0, sizeof(*t));
	snprintf(t->file, sizeof(t->file), "%s", path);
	f = fopen(path, "rb");
	if (!f)
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "cannot open: %s",
				      strerror(errno));
	if (!yaml_parser_initialize(&p)) {
		fclose(f);
		return plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
	}
	yaml_parser_set_input_file(&p, f);
	ok = load(t, &p, err);
	yaml_parser_delete(&p);
	if (ferror(f) && ok) {
		ytree_release(t);
		ok = plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "read error");
	}
	fclose(f);
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
