/* Strict number parsing: the only place text becomes a number. */
#pragma once

#include <stdbool.h>

/** What a text holds, as the num_parse_*_status functions read it. */
enum num_status {
	NUM_OK,           /**< a finite number (an underflow: the subnormal or 0 it rounds to) */
	NUM_NOT_A_NUMBER, /**< empty, trailing garbage, NaN, an infinity, hexadecimal */
	NUM_OUT_OF_RANGE, /**< a decimal number past the largest double (1e400, -1e400) */
};

/**
 * Parse all of @s as a finite double. Leading/trailing blanks are
 * allowed; empty strings, trailing garbage, an overflow (1e400), NaN
 * and infinities are rejected; an underflow (1e-400) reads as the
 * subnormal or 0 it rounds to. Locale-independent for '.' as the decimal point since
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

/**
 * num_parse_double(), saying why it refused @s. NUM_OUT_OF_RANGE stores
 * +HUGE_VAL or -HUGE_VAL (by the sign of @s) in *@out, so that the
 * caller's range check refuses it with the bound it is past; a caller
 * whose range has no upper bound must refuse it itself. Nothing is
 * stored for NUM_NOT_A_NUMBER.
 */
enum num_status num_parse_double_status(const char *s, double *out);

/** num_parse_prefix(), saying why it refused @s, as num_parse_double_status(). */
enum num_status num_parse_prefix_status(const char *s, double *out, const char **end);
