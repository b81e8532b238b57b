/*
 * predict --seq-lengths on any bytes: the distribution parser, then the
 * statistics predict takes of it (means, the expected longest of a batch,
 * a packed row), which must be finite for a distribution that loads.
 */
#include <stdio.h>
#include <stdlib.h>

#include "io/seqlen_load.h"
#include "plan/seqlen.h"
#include "fuzz.h"

void
fuzz_target_init(void)
{
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seqlen_dist d;
	struct seqlen_pack_row row;
	struct plan_error err;

	seqlen_dist_init(&d);
	plan_error_clear(&err);
	if (seqlen_parse("lengths.txt", (const char *)data, size, &d, &err)) {
		double emax, emax_sq, v[8];
		int nv = 0;

		v[nv++] = seqlen_mean(&d);
		v[nv++] = seqlen_mean_sq(&d);
		/* A batch of 1 and of 4096 samples, as small and large global batches. */
		seqlen_expected_max(&d, 1, &emax, &emax_sq, NULL);
		v[nv++] = emax;
		v[nv++] = emax_sq;
		seqlen_expected_max(&d, 4096, &emax, &emax_sq, NULL);
		v[nv++] = emax;
		v[nv++] = emax_sq;
		if (seqlen_pack(&d, 4096, &row, &err)) {
			v[nv++] = row.tokens;
			v[nv++] = row.sum_sq;
		}
		fuzz_check_finite("fuzz-seqlen", v, (size_t)nv);
	}
	seqlen_dist_release(&d);
	return 0;
}
