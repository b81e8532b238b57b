/*
 * fit-logs --gemm on any bytes: the GEMM CSV reader (it reads a path, so
 * each input goes to a temporary file) and the fit on the bundled
 * h100-sxm5-80gb. A fit that succeeds must give finite numbers.
 */
#include <stdio.h>
#include <stdlib.h>

#include "io/gemm_log.h"
#include "io/profile_load.h"
#include "plan/fit_gemm.h"
#include "fuzz.h"

static const char *path;
static struct gpu gpu;

void
fuzz_target_init(void)
{
	path = fuzz_temp_file("gemm");
	fuzz_load_bundled(NULL, &gpu);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fit_gemm_point *pts = NULL;
	struct fit_gemm_result f;
	struct plan_error err;
	int n = 0;

	fuzz_write_file(path, data, size);
	plan_error_clear(&err);
	if (gemm_log_load(path, &pts, &n, &err) && fit_gemm(pts, n, &gpu, &f, &err)) {
		const double v[] = { f.efficiency_max, f.efficiency_max_se, f.overhead_s, f.overhead_se,
				     f.fp8_ratio, f.fp8_ratio_se, f.mape, f.max_abs_error };

		fuzz_check_finite("fuzz-gemm", v, sizeof(v) / sizeof(v[0]));
	}
	free(pts);
	return 0;
}
