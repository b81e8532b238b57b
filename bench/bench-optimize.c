/*
 * Seconds to find the best plan (a benchmark, not a test):
 *   GPT-3 175B on 1,024 GPUs of selene, global batch 1,536;
 *   GPT 1T on 3,072 GPUs of selene, global batch 3,072;
 *   a 1.2T-parameter MoE on 2,048 GPUs of selene with two compressors;
 * each with the MILP and with --exhaustive, and how many MILPs the
 * lower bound and the cutoff spared; and GPT 1.7B on 16 GPUs of selene
 * under megatron-lm with its launches at 1 ms a kernel, searched as
 * usual and with nothing pruned (search_options.unpruned, which drops
 * the cutoff too: a little more than the bound without the host's time
 * cost, which pruned 2 of 1,362 shapes), the ratio of the two times in
 * one run. `meson test -C build --benchmark`.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "io/profile_load.h"
#include "io/profile_path.h"
#include "plan/search.h"

/* 1.2 T parameters: 64 layers of h 8192, every other layer 64 experts top-2. */
static const char moe_yaml[] =
	"name: moe-1.2t\nlayers: 64\nhidden: 8192\nheads: 64\nvocab: 51200\nseq_len: 2048\n"
	"moe:\n  experts: 64\n  top_k: 2\n  every: 2\n";

static bool
load(const char *model, struct model *m, struct cluster *c, struct plan_error *err)
{
	char mp[PATH_MAX], cp[PATH_MAX];

	if (strcmp(model, "moe-1.2t") == 0) {
		if (!model_load_string(m, "moe-1.2t", moe_yaml, err))
			return false;
	} else if (!profile_resolve(PROFILE_MODEL, model, mp, sizeof(mp), err) ||
		   !model_load_file(m, mp, err)) {
		return false;
	}
	return profile_resolve(PROFILE_CLUSTER, "selene", cp, sizeof(cp), err) &&
	       cluster_load_file(c, cp, err);
}

/* plan-cli optbound: a launch-bound framework, pruned and unpruned. */
static bool
launch_bound(void)
{
	struct search_candidate *top = calloc(SEARCH_MAX_TOP, sizeof(*top));
	struct framework fw;
	struct model m;
	struct cluster c;
	struct plan_error err;
	char path[PATH_MAX];
	double seconds[2];
	bool ok = top && load("gpt-1.7b", &m, &c, &err) &&
		  profile_resolve(PROFILE_FRAMEWORK, "megatron-lm", path, sizeof(path), &err) &&
		  framework_load_file(&fw, path, &err);

	fw.host_launch_s = 1e-3;
	for (int unpruned = 0; ok && unpruned < 2; unpruned++) {
		struct search_options o;
		struct search_stats st;
		int ntop;

		search_options_init(&o);
		o.gpus = 16;
		o.global_batch = 64;
		o.framework = &fw;
		o.search_dp_algo = true;
		o.unpruned = unpruned;
		ok = search_run(&m, &c, &o, top, &ntop, &st, &err);
		if (ok)
			printf("gpt-1.7b 16 GPUs, launches 1 ms, %-9s %8.3f s %6ld shapes %6ld pruned %8ld evals  %.4f\n",
			       unpruned ? "unpruned:" : "pruned:", st.seconds, st.shapes, st.pruned, st.evaluations,
			       ntop ? top[0].est.iteration_time_s : 0.0);
		seconds[unpruned] = st.seconds;
	}
	if (ok)
		printf("launch-bound search: %.0fx faster with the host's time in the bound\n", seconds[1] / seconds[0]);
	else
		fprintf(stderr, "bench-optimize: %s\n", err.message);
	if (ok)
		cluster_release(&c);
	free(top);
	return ok;
}

int
main(int argc, char **argv)
{
	static const struct { const char *model; int gpus, batch; bool compress; } cases[] = {
		{ "gpt3-175b", 1024, 1536, false },
		{ "gpt-1t", 3072, 3072, false },
		{ "moe-1.2t", 2048, 2048, true },
	};
	struct search_candidate *top = calloc(SEARCH_MAX_TOP, sizeof(*top));
	struct compressor cmp[2];
	struct plan_error err;
	char path[PATH_MAX];

	gsl_set_error_handler_off();
	profile_path_init(argc > 0 ? argv[0] : NULL);
	if (!top)
		return 1;
	if (!profile_resolve(PROFILE_COMPRESSOR, "ae-100", path, sizeof(path), &err) ||
	    !compressor_load_file(&cmp[0], path, &err) ||
	    !profile_resolve(PROFILE_COMPRESSOR, "topk-1", path, sizeof(path), &err) ||
	    !compressor_load_file(&cmp[1], path, &err)) {
		fprintf(stderr, "bench-optimize: %s (set PLAN_CLI_PATH to the source tree)\n", err.message);
		return 1;
	}
	printf("%-10s %6s  %-10s %8s %8s %7s %6s %6s %8s  %s\n", "model", "GPUs", "inner", "seconds",
	       "shapes", "pruned", "MILPs", "cut", "evals", "best s/iter");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model m;
		struct cluster c;

		if (!load(cases[i].model, &m, &c, &err)) {
			fprintf(stderr, "bench-optimize: %s\n", err.message);
			return 1;
		}
		for (int ex = 0; ex < 2; ex++) {
			struct search_options o;
			struct search_stats st;
			int ntop;

			memset(&o, 0, sizeof(o));
			o.gpus = cases[i].gpus;
			o.global_batch = cases[i].batch;
			o.max_compressed_layers = -1;
			o.time_limit_s = 2.0;
			o.top = 5;
			o.max_zero = -1;
			o.exhaustive = ex;
			o.search_dp_algo = getenv("BENCH_RING") == NULL;
			if (cases[i].compress) {
				o.compressors[0] = &cmp[0];
				o.compressors[1] = &cmp[1];
				o.ncompressors = 2;
			}
			if (!search_run(&m, &c, &o, top, &ntop, &st, &err)) {
				fprintf(stderr, "bench-optimize: %s\n", err.message);
				return 1;
			}
			printf("%-10s %6d  %-10s %8.3f %8ld %7ld %6ld %6ld %8ld  %.3f%s%s\n", cases[i].model,
			       cases[i].gpus, ex ? "exhaustive" : "MILP/DP", st.seconds, st.shapes, st.pruned,
			       st.milps, st.cut, st.evaluations, ntop ? top[0].est.iteration_time_s : 0.0,
			       ex && st.truncated ? " (some shapes too large: even layers)" : "",
			       ex && st.exhaustive_timeouts ? " (some shapes stopped by the time limit)" : "");
			fflush(stdout);
		}
		cluster_release(&c);
	}
	free(top);
	return launch_bound() ? 0 : 1;
}
