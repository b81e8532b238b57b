/*
 * The fields of a prediction: one table of { key, CSV column, unit,
 * description, accessor } that the JSON, CSV and text formatters read, so
 * that a value has one name and one way to get it in every format.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "io/format.h"

/** What a field holds, and so how each format writes it. */
enum field_type {
	FIELD_INT,  /**< an integer */
	FIELD_NUM,  /**< a real number; a formatter refuses one that is not finite */
	FIELD_BOOL,
	FIELD_NAME, /**< a keyword of a fixed set: bare in the CSV */
	FIELD_TEXT, /**< a profile's name: quoted in the CSV; NULL is JSON null */
};

/** One value of a field; the member that @type names is set. */
struct field_value {
	enum field_type type;
	long i;
	double d;
	bool b;
	const char *s;
};

/** Where the value lives: a member of struct estimate or struct plan, or a function. */
enum field_source {
	FIELD_SRC_ESTIMATE,
	FIELD_SRC_PLAN,
	FIELD_SRC_FUNC,
	FIELD_SRC_CHECKPOINT, /**< a member of the report's struct checkpoint_estimate */
};

/** The C type of a member (FIELD_SRC_ESTIMATE and FIELD_SRC_PLAN). */
enum field_ctype {
	FIELD_C_INT,
	FIELD_C_DOUBLE,
	FIELD_C_BOOL,
};

/** One field; field_table lists them in the order of the JSON object's keys. */
struct field {
	const char *key;        /**< JSON path ("plan.tp"); NULL: CSV only */
	const char *csv;        /**< CSV column; NULL: not in the CSV */
	const char *csv_format; /**< printf format of a FIELD_NUM in the CSV */
	const char *unit;       /**< "s", "bytes", ...; "" for a count or a name */
	const char *help;       /**< one line */
	enum field_type type;   /**< of the value (of each element of an array) */
	enum field_source source;
	size_t offset;          /**< of the member, in its struct */
	enum field_ctype ctype; /**< of the member */
	const char *const *names; /**< a member shown as names[value] (FIELD_NAME) */
	/** FIELD_SRC_FUNC: element @i (0 for a scalar) of @f in @r into @v. */
	void (*get)(const struct field *f, const struct report *r, int i, struct field_value *v);
	int (*count)(const struct report *r); /**< an array's length; NULL for a scalar */
	/** Whether the report has the field (JSON leaves it out when not); NULL: always
	 *  (checkpoint fields: with checkpoints; batching: with --seq-lengths). */
	bool (*present)(const struct report *r);
};

/** The fields, in JSON order; field_count entries. */
extern const struct field field_table[];
extern const size_t field_count;

/** The field with JSON path @key, or NULL. */
const struct field *field_find(const char *key);

/** The field of CSV column @name, or NULL. */
const struct field *field_find_csv(const char *name);

/** The last component of @f's JSON path ("compute" for "breakdown_s.compute"). */
const char *field_leaf(const struct field *f);

/** Elements of array field @f in report @r; -1 for a scalar field. */
int field_length(const struct field *f, const struct report *r);

/** Whether report @r has field @f (JSON leaves out the others; their value reads as 0). */
bool field_present(const struct field *f, const struct report *r);

/** The value of @f in report @r (element @i of an array, else 0) into @v. */
void field_get(const struct field *f, const struct report *r, int i, struct field_value *v);

/**
 * Whether every real number of report @r is finite. The core refuses an
 * estimate that is not (estimate_plan); the formatters check again rather
 * than print inf, NaN or a 0 in their place.
 */
bool field_report_finite(const struct report *r);
