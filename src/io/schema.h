/*
 * Profile schemas as data (tmux's options-table habit): each YAML key is
 * a row; one validator walks the rows and fills a struct through
 * offsetof, and the same rows print the documentation.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "plan/error.h"
#include "plan/units.h"
#include "io/yamltree.h"
#include "plan/curve.h"

enum schema_type {
	SCHEMA_INT,      /**< long, stored as int */
	SCHEMA_BOOL,     /**< true/false, stored as bool */
	SCHEMA_STRING,   /**< stored in a char array of .size bytes */
	SCHEMA_NUMBER,   /**< dimensionless double (a fraction, a ratio) */
	SCHEMA_QUANTITY, /**< double with a unit of kind .unit, stored in SI */
	SCHEMA_ENUM,     /**< one of .choices, stored as int index */
	SCHEMA_MAP,      /**< nested mapping described by .sub */
	SCHEMA_CURVE,    /**< sequence of [x, y] pairs, stored as struct curve */
	SCHEMA_CUSTOM,   /**< parsed by .parse (a profile reference, say) */
};

struct schema_key;

/** Parse @node into @field (the struct member at the key's offset). */
typedef bool (*schema_parse_fn)(const struct schema_key *k, struct ytree *t, yaml_node_t *node,
				void *field, struct plan_error *err);

/** One key of a profile. A table ends with a row whose key is NULL. */
struct schema_key {
	const char *key;
	enum schema_type type;
	bool required;
	size_t offset;               /**< where the value goes in the struct */
	size_t size;                 /**< SCHEMA_STRING: array size */
	enum unit_kind unit;         /**< SCHEMA_QUANTITY */
	double min, max;             /**< accepted range (inclusive) */
	bool min_exclusive;          /**< reject a value equal to min (sizes > 0) */
	const char *def;             /**< default, written as in YAML; NULL: none or derived */
	const char *const *choices;  /**< SCHEMA_ENUM: NULL-terminated */
	const struct schema_key *sub;/**< SCHEMA_MAP; SCHEMA_CUSTOM: documented as this table */
	schema_parse_fn parse;       /**< SCHEMA_CUSTOM */
	const char *help;            /**< one line for the documentation */
};

/**
 * Fill @obj from the mapping @node following @table. Missing optional
 * keys get their default; keys without a default are left as the caller
 * initialised them. Unknown keys, wrong types, missing units, values out
 * of range and missing required keys are errors with FILE:LINE:COL.
 */
bool schema_apply(const struct schema_key *table, struct ytree *t,
		  yaml_node_t *node, void *obj, struct plan_error *err);

/**
 * Overlay the keys present in the mapping @node on @obj, which already
 * holds values: no defaults, no required keys. A key named @skip (may be
 * NULL) is left to the caller.
 */
bool schema_apply_over(const struct schema_key *table, struct ytree *t, yaml_node_t *node,
		       void *obj, const char *skip, struct plan_error *err);

/** One kind of profile: its table, and hooks around applying it. */
struct schema_profile {
	const struct schema_key *table;
	size_t size;                                   /**< of the struct filled */
	void (*init)(void *obj);                       /**< after zeroing, before the table; may be NULL */
	bool (*finish)(void *obj, struct ytree *t, struct plan_error *err); /**< cross-key checks; may be NULL */
};

/**
 * Load @obj (zeroed first) from the file @name, or from @text (named
 * @name in messages) when @text is not NULL.
 */
bool schema_load(const struct schema_profile *kind, const char *name, const char *text,
		 void *obj, struct plan_error *err);

/** Print the table as documentation (one key per line, nested indented). */
void schema_print(const struct schema_key *table, FILE *out, int indent);

/** Edit distance used for "did you mean" hints. */
int schema_edit_distance(const char *a, const char *b);

/**
 * The name nearest to @name, within two edits, among the rows of a table
 * (@rows, each @stride bytes, its name a const char * at @name_offset;
 * the first row whose name is NULL ends it); NULL when none is that near.
 * Profile keys and command options suggest theirs with it.
 */
const char *schema_nearest(const char *name, const void *rows, size_t stride, size_t name_offset);

/**
 * Write @obj as YAML following @table, one key a line at @indent spaces:
 * every value the struct holds (numbers as the shortest text that reads
 * back as the same double, quantities in SI units), nested mappings and
 * custom keys with a table (an inline GPU) indented below their key;
 * empty strings and empty curves are left out. What schema_apply reads
 * back from it is @obj again.
 */
void schema_write(const struct schema_key *table, const void *obj, FILE *out, int indent);

/**
 * Set the key @key of @obj to @text, read as schema_apply reads that
 * key's scalar in YAML (types, units, enums, ranges): a command-line
 * overlay such as --framework-set KEY=VALUE. Errors name @where (the
 * option and its pair) and no line. Keys that take a mapping, a list or
 * a profile reference, and dotted paths, are refused.
 */
bool schema_set_text(const struct schema_key *table, const char *where, const char *key,
		     const char *text, void *obj, struct plan_error *err);
