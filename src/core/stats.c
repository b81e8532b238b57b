#include <math.h>

#include "plan/stats.h"

/* Merge sort of the indices @idx[0..n) by @v, stable; @tmp holds n. */
static void
sort_indices(const double *v, int *idx, int *tmp, int n)
{
	for (int width = 1; width < n; width *= 2) {
		for (int lo = 0; lo < n; lo += 2 * width) {
			int mid = lo + width < n ? lo + width : n;
			int hi = lo + 2 * width < n ? lo + 2 * width : n;
			int a = lo, b = mid, k = lo;

			while (a < mid && b < hi)
				tmp[k++] = v[idx[b]] < v[idx[a]] ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[k++] = idx[a++];
			while (b < hi)
				tmp[k++] = idx[b++];
		}
		for (int i = 0; i < n; i++)
			idx[i] = tmp[i];
	}
}

void
stats_ranks(const double *v, int n, int *work, double *ranks)
{
	int *idx = work, *tmp = work + n;

	for (int i = 0; i < n; i++)
		idx[i] = i;
	sort_indices(v, idx, tmp, n);
	for (int i = 0; i < n;) {
		int j = i;

		while (j + 1 < n && v[idx[j + 1]] == v[idx[i]])
			j++;
		/* Positions i..j (0-based) hold equal values: ranks i+1..j+1. */
		for (int k = i; k <= j; k++)
			ranks[idx[k]] = 0.5 * (i + j) + 1.0;
		i = j + 1;
	}
}

bool
stats_spearman(const double *x, const double *y, int n, int *work, double *rx, double *ry, double *rho)
{
	double mean = 0.5 * (n + 1), sxy = 0.0, sxx = 0.0, syy = 0.0;

	*rho = 0.0;
	if (n < 3)
		return false;
	stats_ranks(x, n, work, rx);
	stats_ranks(y, n, work, ry);
	/* Both rank vectors average (n + 1) / 2, ties or not. */
	for (int i = 0; i < n; i++) {
		sxy += (rx[i] - mean) * (ry[i] - mean);
		sxx += (rx[i] - mean) * (rx[i] - mean);
		syy += (ry[i] - mean) * (ry[i] - mean);
	}
	if (!(sxx > 0.0) || !(syy > 0.0))
		return false;
	*rho = sxy / sqrt(sxx * syy);
	return true;
}
