/* Quantities with units: "200 Gbit/s", "80 GiB", "5 us", "312 TFLOPS". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/** The dimension of a quantity; each has its own unit table. */
enum unit_kind {
	UNIT_BANDWIDTH, /**< stored in bytes per second */
	UNIT_SIZE,      /**< stored in bytes */
	UNIT_TIME,      /**< stored in seconds */
	UNIT_COMPUTE,   /**< stored in FLOP per second */
};

/**
 * Parse "NUMBER UNIT" into SI (bytes, seconds, bytes/s, FLOP/s).
 * A bare number, an unknown unit or a unit of another kind is an error;
 * on error @why (if not NULL) receives a message naming the valid units.
 * Negative values are accepted here; callers range-check.
 */
bool units_parse(const char *text, enum unit_kind kind, double *out,
		 char *why, size_t why_size);

/** Space-separated list of the units accepted for @kind (static string). */
const char *units_list(enum unit_kind kind);

/** Human name of the kind ("bandwidth", "size", ...). */
const char *units_kind_name(enum unit_kind kind);

/** Format @bytes as "12.3 GiB" into @buf (binary prefixes). */
void units_format_size(double bytes, char *buf, size_t size);

/** Format @seconds as "1.23 s", "45.6 ms", "7.8 us". */
void units_format_time(double seconds, char *buf, size_t size);
