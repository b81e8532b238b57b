/*
 * Predictions per second for a fixed set of plans (GPT-3 175B on Selene,
 * 64 plans: tp x pp x micro-batch x recompute). A benchmark, not a test:
 * `meson test -C build --benchmark` or run it directly.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "io/profile_load.h"
#include "plan/estimate.h"
#include "io/profile_path.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	static const int tps[] = { 1, 2, 4, 8 }, pps[] = { 1, 4, 8, 16 }, mbs[] = { 1, 2 };
	char mpath[PATH_MAX], cpath[PATH_MAX];
	struct plan plans[64];
	struct plan_error err;
	struct model m;
	struct cluster c;
	struct estimate e;
	double t0, t, sink = 0;
	long n = 0, rounds;
	int np = 0;

	gsl_set_error_handler_off();
	profile_path_init(argc > 0 ? argv[0] : NULL);
	if (!profile_resolve(PROFILE_MODEL, "gpt3-175b", mpath, sizeof(mpath), &err) ||
	    !profile_resolve(PROFILE_CLUSTER, "selene", cpath, sizeof(cpath), &err) ||
	    !model_load_file(&m, mpath, &err) || !cluster_load_file(&c, cpath, &err)) {
		fprintf(stderr, "bench-predict: %s (set PLAN_CLI_PATH to the source tree)\n", err.message);
		return 1;
	}
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			for (int k = 0; k < 2; k++)
				for (int r = 0; r < 2; r++) {
					struct plan *p = &plans[np++];

					plan_init(p);
					p->tp = tps[a];
					p->pp = pps[b];
					p->micro_batch = mbs[k];
					p->recompute = r ? PLAN_RECOMPUTE_FULL : PLAN_RECOMPUTE_SELECTIVE;
					p->sequence_parallel = r == 0 && p->tp > 1;
					p->dp = 1536 / (p->tp * p->pp) > 0 ? 1536 / (p->tp * p->pp) : 1;
					while (1536 % (p->dp * p->micro_batch) != 0)
						p->dp--;
					p->global_batch = 1536;
					p->seq_len = 2048;
				}
	rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	t0 = now();
	for (long i = 0; i < rounds; i++)
		for (int j = 0; j < np; j++) {
			if (estimate_plan(&m, &c, &plans[j], NULL, &e, &err))
				sink += e.iteration_time_s;
			n++;
		}
	t = now() - t0;
	printf("%ld predictions in %.3f s: %.0f predictions/s, %.2f us each (checksum %.6g)\n",
	       n, t, n / t, 1e6 * t / n, sink);
	cluster_release(&c);
	return 0;
}
