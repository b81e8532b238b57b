/* The terms of the iteration time by index, for the surfaces that list
 * them all: ESTIMATE_BREAKDOWN_TERMS is the one list of them. */
#include <math.h>
#include <stddef.h>

#include "plan/estimate.h"

#define BREAKDOWN_TERM(member, text_row, text_when, help) \
	{ #member, offsetof(struct estimate_breakdown, member) },
static const struct {
	const char *name;
	size_t offset;
} breakdown_terms[] = {
	ESTIMATE_BREAKDOWN_TERMS(BREAKDOWN_TERM)
};
#undef BREAKDOWN_TERM

_Static_assert(sizeof(breakdown_terms) / sizeof(breakdown_terms[0]) == ESTIMATE_BREAKDOWN_COUNT,
	       "one row a term");

const char *
estimate_breakdown_name(int i)
{
	return breakdown_terms[i].name;
}

double
estimate_breakdown_get(const struct estimate_breakdown *b, int i)
{
	return *(const double *)((const char *)b + breakdown_terms[i].offset);
}

double *
estimate_breakdown_at(struct estimate_breakdown *b, int i)
{
	return (double *)((char *)b + breakdown_terms[i].offset);
}

/* The framework's fixed costs first, then the rest in list order: the
 * order the iteration time was summed in before there was a list. Another
 * order changes its last bits, and that is enough to move calibrate's fit
 * of framework.layer_overhead in its sixth digit. */
double
estimate_breakdown_sum(const struct estimate_breakdown *b)
{
	double sum = b->overhead;

	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++)
		if (breakdown_terms[i].offset != offsetof(struct estimate_breakdown, overhead))
			sum += estimate_breakdown_get(b, i);
	return sum;
}

bool
estimate_breakdown_finite(const struct estimate_breakdown *b, const char **bad)
{
	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++)
		if (!isfinite(estimate_breakdown_get(b, i))) {
			if (bad)
				*bad = breakdown_terms[i].name;
			return false;
		}
	return true;
}
