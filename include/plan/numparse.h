/* Strict number parsing: the only place text becomes a number. */
#pragma once

#include <stdbool.h>

/**
 * Parse all of @s as a finite double. Leading/trailing blanks are
 * allowed; empty strings, trailing garbage, ERANGE, NaN and infinities
 * are rejected. Locale-independent for '.' as the decimal point since
 * plan-cli never calls setlocale(LC_NUMERIC).
 */
bool num_parse_double(const char *s, double *out);

/** Parse all of @s as a base-10 long within [min, max]. */
bool num_parse_long(const char *s, long min, long max, long *out);

/**
 * Parse the leading number of @s (a double), storing in @end the first
 * character after it. Returns false when no number starts @s or it is
 * not finite.
 */
bool num_parse_prefix(const char *s, double *out, const char **end);
