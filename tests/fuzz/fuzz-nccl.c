/*
 * fit-logs --nccl-tests on any bytes: the nccl-tests log parser, its fit
 * points and the link fit on the bundled dgx-h100 (the level the log's
 * nodes call for, as fit-logs picks it). A fit that succeeds must give
 * finite numbers: the target aborts on the first that is not.
 */
#include <stdio.h>
#include <stdlib.h>

#include "io/nccl_log.h"
#include "io/profile_load.h"
#include "plan/fit_link.h"
#include "fuzz.h"

static struct cluster base;

void
fuzz_target_init(void)
{
	fuzz_load_bundled(&base, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct nccl_log log = { 0 };
	struct fit_link_point *pts = NULL;
	struct fit_link_result f;
	struct plan_error err;
	int n = 0, cap = 0;

	plan_error_clear(&err);
	if (nccl_log_parse("all_reduce_perf.log", text, &log, &err) &&
	    nccl_log_points(&log, 0, &pts, &n, &cap, &err) && n > 0 &&
	    fit_link(pts, n, pts[0].nodes > 1 ? FIT_LINK_INTER : FIT_LINK_INTRA, &base, &f, &err)) {
		const double v[] = { f.bandwidth_Bps, f.bandwidth_se, f.latency_s, f.latency_se,
				     f.half_size_bytes, f.half_size_se, f.mape, f.max_abs_error };

		fuzz_check_finite("fuzz-nccl", v, sizeof(v) / sizeof(v[0]));
	}
	free(pts);
	nccl_log_release(&log);
	free(text);
	return 0;
}
