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

bool
num_parse_prefix(const char *s, double *out, const char **end)
{
	char *e;
	double v;

	s = skip_blank(s);
	/* strtod accepts "nan", "inf" and hex floats; profiles never mean those. */
	if (!(isdigit((unsigned char)*s) || *s == '.' || *s == '-' || *s == '+'))
		return false;
	if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ||
	    ((s[0] == '-' || s[0] == '+') && s[1] == '0' && (s[2] == 'x' || s[2] == 'X')))
		return false;
	errno = 0;
	v = strtod(s, &e);
	/* An underflow (1e-320, 1e-400) is a number, subnormal or 0: the
	 * caller's range check refuses it with the range, where "not a
	 * number" would mislead; an overflow is not (strtod's HUGE_VAL). */
	if (e == s || (errno == ERANGE && fabs(v) > DBL_MIN) || !isfinite(v))
		return false;
	*out = v;
	*end = e;
	return true;
}

bool
num_parse_double(const char *s, double *out)
{
	const char *end;
	double v;

	if (!s || !num_parse_prefix(s, &v, &end))
		return false;
	if (*skip_blank(end) != '\0')
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
