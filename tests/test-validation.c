/*
 * Whole-model checks against published measurements: the 66 runs of
 * tests/data/published-runs.csv (the shared validation file), each
 * predicted with its model, cluster (which names its GPU profile) and
 * framework profile, in four blocks: Narayanan et al. SC21 PTD-P
 * (Megatron-LM 2021 on Selene), the same paper's DeepSpeed ZeRO-3 rows,
 * MosaicML's llm-foundry FSDP runs on A100-40GB, and Megatron runs of a
 * 12-layer Llama-3-70B on one B200 node. The bounds are the accuracy
 * measured when this test was written (README, "Accuracy"), with a little
 * room: a change that makes a block worse fails here.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/profile_load.h"
#include "plan/estimate.h"
#include "io/profile_path.h"
#include "io/runs_csv.h"
#include "testutil.h"

static char root[PATH_MAX];

static void
setup(void)
{
	const char *r = getenv("PLAN_TEST_SOURCE_ROOT");

	ck_assert_msg(r != NULL, "PLAN_TEST_SOURCE_ROOT is not set (run through meson test)");
	snprintf(root, sizeof(root), "%s", r);
	setenv("PLAN_CLI_PATH", root, 1);
	profile_path_init(NULL);
}

static double
predict_error(struct run *run, bool *fits, double *memory_error)
{
	struct plan_error err;
	struct framework fw;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct model m;
	struct cluster c;
	struct estimate e;
	double measured;

	test_load_profile(PROFILE_MODEL, run->model, &m);
	test_load_profile(PROFILE_CLUSTER, run->cluster, &c);
	if (run->framework[0]) {
		test_load_profile(PROFILE_FRAMEWORK, run->framework, &fw);
		opt.framework = &fw;
	}
	if (run->plan.seq_len == 0)
		run->plan.seq_len = m.seq_len;
	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&m, &c, &run->plan, &opt, &e, &err), "%s: %s", run->id, err.message);
	measured = runs_measured_time_s(run, &m);
	*fits = e.fits;
	*memory_error = run->measured_memory_gib > 0 ?
			(e.memory.total / 1073741824.0 - run->measured_memory_gib) / run->measured_memory_gib : 0.0;
	cluster_release(&c);
	return (e.iteration_time_s - measured) / measured;
}

enum block { BLOCK_PTDP, BLOCK_ZERO3, BLOCK_MOSAIC, BLOCK_B200, BLOCK_COUNT };

static const struct {
	const char *name;
	double max_mape, max_worst; /* bounds: the measured figures (README) with room */
} blocks[BLOCK_COUNT] = {
	/* Measured: MAPE 2.5 %, worst 6.2 % (3.4 and 6.2 before GEMM waves,
	 * cluster_gemm_wave_factor; 6.6 and 9.4 before the slowest GPU's
	 * pace, gpu_pace_factor). */
	[BLOCK_PTDP] = { "Narayanan PTD-P", 0.040, 0.07 },
	/* Measured: MAPE 9.6 %, worst 19.4 % (the 175B run on 1,536 GPUs
	 * too slow, 529.6B 12-13 % too fast; see README); 11.5 and 22.7
	 * before the step's gather of the persistent tensors
	 * (persist_gather_copy), 11.5 and 22.9 before GEMM waves.
	 * 39.2 % and 57.3 % before deepspeed-2021's per-rank host loops
	 * and copies (gather_overhead_per_rank, gather_copy_passes); 21.4
	 * and 35.9 % before the network proxy's pace on Selene's AMD hosts
	 * (inter_node.net_overhead); 17.8 and 31.3 % before its gradient
	 * copies (reduce_copy_passes); 16.5 and 29.9 % before the small
	 * tensors' own reduce-scatters. The target is 12 %. */
	[BLOCK_ZERO3] = { "Narayanan ZeRO-3", 0.11, 0.22 },
	/* Measured: MAPE 4.1 %, worst 23.4 % (7.2 and 23.5 before Composer's
	 * training metrics, metric_logit_bytes; 7.3 before GEMM waves; 14.0
	 * and 30.2 before llm-foundry's Triton attention kernel was
	 * modelled: attention_speed). */
	[BLOCK_MOSAIC] = { "MosaicML FSDP", 0.06, 0.25 },
	/* Measured (sixth session, after simudense's sequence-parallel
	 * backward re-gather and simumoe's terms together): MAPE 3.0 %, worst
	 * 8.8 %. Measured (round 8, simumoe): MAPE 5.4 %, worst 15.4 % (6.3 and 16.4
	 * before Megatron-Core's embedding gradient, passes before the DP
	 * reduction and step copy: main_grad, grad_check_bytes,
	 * grad_scale_bytes, step_bytes). Earlier: MAPE 7.0 %, worst 17.0 % (7.8 and 18.5 before GEMM waves,
	 * cluster_gemm_wave_factor: the TP 8 rows' skinny GEMMs; 11.0 and
	 * 22.8 before the DGX B200's fixed 23 us a collective,
	 * collective_latency). */
	[BLOCK_B200] = { "B200 Megatron", 0.045, 0.11 },
};

static enum block
block_of(const struct run *r)
{
	if (strncmp(r->id, "MOSAIC", 6) == 0)
		return BLOCK_MOSAIC;
	if (strncmp(r->id, "SMX", 3) == 0)
		return BLOCK_B200;
	return r->plan.zero == 3 ? BLOCK_ZERO3 : BLOCK_PTDP;
}

START_TEST(test_published_runs)
{
	char path[PATH_MAX + 64];
	struct run_set set;
	struct plan_error err;
	double mape[BLOCK_COUNT] = { 0 }, worst[BLOCK_COUNT] = { 0 }, mape_all = 0, mem_mape = 0, mem_worst = 0;
	int n[BLOCK_COUNT] = { 0 }, n_mem = 0;

	setup();
	snprintf(path, sizeof(path), "%s/tests/data/published-runs.csv", root);
	ck_assert_msg(runs_csv_load(path, &set, &err), "%s", err.message);
	ck_assert_int_eq(set.n, 66);
	for (int i = 0; i < set.n; i++) {
		bool fits;
		double me, e = predict_error(&set.runs[i], &fits, &me);
		enum block k = block_of(&set.runs[i]);

		printf("%-44s %-17s %+6.1f %%\n", set.runs[i].id, blocks[k].name, 100 * e);
		mape_all += fabs(e) / set.n;
		if (set.runs[i].measured_memory_gib > 0) {
			mem_mape += fabs(me);
			mem_worst = fmax(mem_worst, fabs(me));
			n_mem++;
		}
		mape[k] += fabs(e);
		worst[k] = fmax(worst[k], fabs(e));
		n[k]++;
		/* Megatron ran these: the plan must fit in memory. */
		if (k == BLOCK_PTDP || k == BLOCK_B200)
			ck_assert_msg(fits, "%s does not fit", set.runs[i].id);
	}
	for (int k = 0; k < BLOCK_COUNT; k++) {
		ck_assert_int_gt(n[k], 0);
		mape[k] /= n[k];
		printf("%-17s %2d rows: MAPE %5.2f %%, worst %5.2f %%\n", blocks[k].name, n[k],
		       100 * mape[k], 100 * worst[k]);
	}
	printf("all %d rows: MAPE %.2f %%\n", set.n, 100 * mape_all);
	for (int k = 0; k < BLOCK_COUNT; k++) {
		ck_assert_msg(mape[k] < blocks[k].max_mape, "%s MAPE %.2f %%", blocks[k].name, 100 * mape[k]);
		ck_assert_msg(worst[k] < blocks[k].max_worst, "%s worst %.2f %%", blocks[k].name, 100 * worst[k]);
	}
	/*
	 * Memory against the peak a GPU allocated (the B200 runs: PyTorch's
	 * max_memory_allocated as SimuMax's data gives it), predicted with
	 * reserved_memory included. Measured: MAPE 0.89 %, worst 1.97 %.
	 */
	ck_assert_int_eq(n_mem, 12);
	ck_assert_msg(mem_mape / n_mem < 0.015, "memory MAPE %.2f %%", 100 * mem_mape / n_mem);
	ck_assert_msg(mem_worst < 0.03, "memory worst %.2f %%", 100 * mem_worst);
	/* Measured: 4.10 % (seventh session; 4.27 % before the ZeRO-3 step's
	 * gather of the persistent tensors; earlier 6.44 %, 6.83 % before GEMM waves, 9.36 % before the
	 * slowest GPU's pace, 7.73 % before the network proxy's, 7.40 %
	 * before ZeRO-3's gradient copies, 7.29 % before its small tensors'
	 * reductions); the target is 8 %. */
	ck_assert_msg(mape_all < 0.055, "all-row MAPE %.2f %%", 100 * mape_all);
	runs_csv_release(&set);
}
END_TEST

/*
 * A published TFLOP/s figure turned into a time, for a toy GPT: L 2,
 * h 1024, V 32768, s 1024, B 8 on 2 GPUs at 100 TFLOP/s each (2e14 FLOP/s).
 */
START_TEST(test_measured_time)
{
	struct model m;
	struct run run;

	test_load_model(&m, "name: toy\nlayers: 2\nhidden: 1024\nheads: 8\nvocab: 32768\nseq_len: 1024\n");
	memset(&run, 0, sizeof(run));
	plan_init(&run.plan);
	run.plan.tp = run.plan.pp = 1;
	run.plan.dp = 2;
	run.plan.global_batch = 8;
	run.plan.seq_len = 1024;
	run.plan.recompute = PLAN_RECOMPUTE_FULL;
	run.measured_tflops = 100.0;
	/* Narayanan et al. SC21 Eq. 3: 96 B s L h^2 (1 + s/(6h) + V/(16 L h))
	 * = 96 x 8 x 1024 x 2 x 1024^2 x (1 + 1/6 + 1) = 1.649267441664e12 x 13/6
	 * = 3.573412790272e12 FLOPs; / 2e14 = 17.86706395136 ms. */
	run.convention = RUN_CONV_MEGATRON_EQ3;
	ck_assert_double_eq_tol(runs_measured_time_s(&run, &m), 0.01786706395136, 1e-12);
	/* 3 x forward, no recompute (SC21 Sec. 5.1 without the 4th pass):
	 * 72 B s L h^2 (1 + s/(6h) + V/(12 L h)) = 1.236950581248e12 x 2.5
	 * = 3.09237645312e12; / 2e14 = 15.4618822656 ms. */
	run.convention = RUN_CONV_MODEL;
	ck_assert_double_eq_tol(runs_measured_time_s(&run, &m), 0.0154618822656, 1e-12);
	/* Hardware FLOPs add the recomputed forward of both layers: B s L
	 * (24 h^2 + 4 s h) = 8192 x 2 x 29,360,128 = 4.81036337152e11, giving
	 * Eq. 3's 3.573412790272e12 again (Eq. 3 counts 4 layer passes). */
	run.convention = RUN_CONV_HARDWARE;
	ck_assert_double_eq_tol(runs_measured_time_s(&run, &m), 0.01786706395136, 1e-12);
	/* A measured time wins over the TFLOP/s figure. */
	run.measured_time_s = 1.25;
	ck_assert_double_eq_tol(runs_measured_time_s(&run, &m), 1.25, 1e-15);
	/* Tokens/s per GPU alone: 8 x 1024 tokens over 2 GPUs at 4096 each = 1 s. */
	run.measured_time_s = run.measured_tflops = 0.0;
	run.measured_tokens_per_gpu = 4096.0;
	ck_assert_double_eq_tol(runs_measured_time_s(&run, &m), 1.0, 1e-15);
}
END_TEST

static Suite *
validation_suite(void)
{
	Suite *s = suite_create("validation");
	TCase *tc = tcase_create("validation");

	tcase_add_test(tc, test_published_runs);
	tcase_add_test(tc, test_measured_time);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(validation_suite)
