#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "plan/numparse.h"

static const char *
skip_blank(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

enum num_status
num_parse_prefix_status(const char *s, double *out, const char **end)
{
	char *e;
	double v;

	s = skip_blank(s);
	/* strtod accepts "nan", "inf" and hex floats; profiles never mean those. */
	if (!(isdigit((unsigned char)*s) || *s == '.' || *s == '-' || *s == '+'))
		return NUM_NOT_A_NUMBER;
	if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ||
	    ((s[0] == '-' || s[0] == '+') && s[1] == '0' && (s[2] == 'x' || s[2] == 'X')))
		return NUM_NOT_A_NUMBER;
	errno = 0;
	v = strtod(s, &e);
	if (e == s || isnan(v))
		return NUM_NOT_A_NUMBER;
	*end = e;
	/* An overflow is a number too (1e400: strtod's ERANGE with
	 * +-HUGE_VAL): +-HUGE_VAL for the caller's range check to name the
	 * bound it is past, where "not a number" would mislead. No text
	 * without "inf" reads as an infinity otherwise. An underflow (1e-320,
	 * 1e-400) is the subnormal or 0 it rounds to: NUM_OK. */
	if (errno == ERANGE && fabs(v) > DBL_MAX) {
		*out = v < 0 ? -HUGE_VAL : HUGE_VAL;
		return NUM_OUT_OF_RANGE;
	}
	if (!isfinite(v))
		return NUM_NOT_A_NUMBER;
	*out = v;
	return NUM_OK;
}

bool
num_parse_prefix(const char *s, double *out, const char **end)
{
	double v;
	const char *e;

	if (num_parse_prefix_status(s, &v, &e) != NUM_OK)
		return false;
	*out = v;
	*end = e;
	return true;
}

enum num_status
num_parse_double_status(const char *s, double *out)
{
	enum num_status st;
	const char *end;
	double v;

	if (!s)
		return NUM_NOT_A_NUMBER;
	st = num_parse_prefix_status(s, &v, &end);
	/* "1e400x" is no number at all: trailing garbage before range. */
	if (st == NUM_NOT_A_NUMBER || *skip_blank(end) != '\0')
		return NUM_NOT_A_NUMBER;
	*out = v;
	return st;
}

bool
num_parse_double(const char *s, double *out)
{
	double v;

	if (num_parse_double_status(s, &v) != NUM_OK)
		return false;
	*out = v;
	return true;
}

bool
num_parse_long(const char *s, long min, long max, long *out)
{
	char *e;
	long v;

	if (!s)
		return false;
	s = skip_blank(s);
	if (!(isdigit((unsigned char)*s) || *s == '-' || *s == '+'))
		return false;
	errno = 0;
	v = strtol(s, &e, 10);
	if (e == s || errno == ERANGE)
		return false;
	if (*skip_blank(e) != '\0')
		return false;
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}
