/* A loaded YAML document with source marks, and the checks libyaml skips. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "plan/error.h"

/** One YAML document loaded with libyaml's document API. */
struct ytree {
	yaml_document_t doc;
	bool loaded;
	char file[PLAN_ERROR_FILE_LEN]; /**< name used in error messages */
};

/**
 * Load the first document of @path, a regular file of at most
 * INFILE_MAX_YAML bytes (io/infile.h). Empty files, files with no root,
 * several documents, duplicate mapping keys, nesting deeper than 32
 * levels and more than 100,000 nodes are errors reported as
 * FILE:LINE:COL; the depth and the node count are checked while parsing.
 * On failure nothing needs releasing.
 */
bool ytree_load_file(struct ytree *t, const char *path, struct plan_error *err);

/** Same as ytree_load_file() from memory; @name is used in messages. */
bool ytree_load_string(struct ytree *t, const char *name, const char *text,
		       size_t len, struct plan_error *err);

/** Free the document. Safe on a zeroed or released tree. */
void ytree_release(struct ytree *t);

/** The root node (never NULL after a successful load). */
yaml_node_t *ytree_root(struct ytree *t);

/** Node by libyaml index, or NULL. */
yaml_node_t *ytree_node(struct ytree *t, int index);

/** Record an error at @node's start mark (1-based line and column). */
bool ytree_error(const struct ytree *t, const yaml_node_t *node,
		 struct plan_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/** The value of @key in mapping @map, or NULL. */
yaml_node_t *ytree_find(struct ytree *t, yaml_node_t *map, const char *key);

/**
 * The value at a dotted @path from the root ("moe.top_k"), or the root
 * when it is absent: where to point an error about that key.
 */
yaml_node_t *ytree_find_path(struct ytree *t, const char *path);

/** The scalar's text (NUL-terminated by libyaml), or NULL for non-scalars. */
const char *ytree_scalar(const yaml_node_t *node);
