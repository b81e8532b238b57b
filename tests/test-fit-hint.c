/* What predict suggests when a plan does not fit (src/core/fit_hint.c). */
#include <math.h>
#include <stdio.h>

#include "plan/estimate.h"
#include "plan/fit_hint.h"
#include "testutil.h"

static struct model gpt3;
static struct cluster selene;

static void
setup(void)
{
	const char *root = getenv("PLAN_TEST_SOURCE_ROOT");

	ck_assert_ptr_nonnull(root);
	setenv("PLAN_CLI_PATH", root, 1);
	profile_path_init(NULL);
	test_load_profile(PROFILE_MODEL, "gpt3-175b", &gpt3);
	test_load_profile(PROFILE_CLUSTER, "selene", &selene);
}

static struct plan
plan_of(int tp, int pp, int dp)
{
	struct plan p;

	plan_init(&p);
	p.tp = tp;
	p.pp = pp;
	p.dp = dp;
	p.vpp = 1;
	p.micro_batch = 1;
	p.global_batch = 64;
	p.seq_len = gpt3.seq_len;
	p.recompute = PLAN_RECOMPUTE_NONE;
	return p;
}

static struct estimate
estimate_of(const struct plan *p)
{
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct plan_error err;
	struct estimate e;

	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&gpt3, &selene, p, &opt, &e, &err), "%s", err.message);
	return e;
}

/* Every hint is what it says: its plan fits when predicted afresh, with
 * the time and memory it reports; the list is sorted, fastest first. */
static void
check_hints(const struct fit_hint *h, int n)
{
	for (int i = 0; i < n; i++) {
		struct estimate e = estimate_of(&h[i].plan);

		ck_assert_msg(e.fits, "hint '%s' does not fit", h[i].change);
		ck_assert_rel(h[i].iteration_time_s, e.iteration_time_s, 1e-12);
		ck_assert_rel(h[i].memory_bytes, e.memory.total, 1e-12);
		if (i > 0)
			ck_assert(h[i - 1].iteration_time_s <= h[i].iteration_time_s);
	}
}

/* GPT-3 175B at TP 8 x PP 8 without recomputation needs 99.9 GiB of
 * Selene's 80: 52 GiB of it activations (Korthikanti et al. 2022: 34sbh
 * + 5as^2b per layer, 12 layers a stage, 8 micro-batches in flight on
 * stage 0). Sequence parallelism divides the 10sbh of norms and dropout
 * by TP, flash attention drops the 5as^2b term, selective recompute the
 * same, full recompute all but 2sbh: each fits alone. The ZeRO
 * stages need data parallelism, TP 16 leaves the node, and PP 16 and a
 * halved micro-batch are not possible (dp 1, micro-batch 1). */
START_TEST(test_single_changes)
{
	struct plan p = plan_of(8, 8, 1);
	struct fit_hint h[FIT_HINTS_MAX];
	int n;

	ck_assert(!estimate_of(&p).fits);
	n = fit_hints(&gpt3, &selene, &p, &(struct estimate_options){ COLL_ALGO_RING, NULL, NULL }, h,
		      FIT_HINTS_MAX);
	ck_assert_int_eq(n, 4);
	/* Flash attention and sequence parallelism also save time (the
	 * latter less: its backward gathers each column-parallel input
	 * again, tensor_par.c); selective recomputation costs the attention
	 * core's forward, full recomputation one more forward (about a third
	 * of the iteration). */
	ck_assert_str_eq(h[0].change, "--flash-attention");
	ck_assert_str_eq(h[1].change, "--sequence-parallel");
	ck_assert_str_eq(h[2].change, "--recompute selective");
	ck_assert_str_eq(h[3].change, "--recompute full");
	ck_assert(h[1].plan.sequence_parallel && !h[1].plan.flash_attention);
	ck_assert(h[0].plan.flash_attention && h[0].plan.recompute == PLAN_RECOMPUTE_NONE);
	ck_assert_int_eq(h[3].plan.recompute, PLAN_RECOMPUTE_FULL);
	ck_assert(h[3].iteration_time_s > 1.3 * h[0].iteration_time_s);
	check_hints(h, n);
	/* @max keeps the fastest. */
	ck_assert_int_eq(fit_hints(&gpt3, &selene, &p, &(struct estimate_options){ COLL_ALGO_RING, NULL, NULL },
				   h, 1), 1);
	ck_assert_str_eq(h[0].change, "--flash-attention");
}
END_TEST

/* TP 1 x PP 1 x DP 64: 175 B parameters with mixed-precision Adam are 16
 * bytes each (Rajbhandari et al. 2020), 2.6 TiB, on one GPU. No single
 * change fits; ZeRO 3 shards the 16 bytes 64 ways (41 GiB) and needs
 * full recomputation beside it for the activations of 96 layers. */
START_TEST(test_pairs_when_no_single_change_fits)
{
	struct plan p = plan_of(1, 1, 64);
	struct fit_hint h[FIT_HINTS_MAX];
	int n = fit_hints(&gpt3, &selene, &p, &(struct estimate_options){ COLL_ALGO_RING, NULL, NULL }, h,
			  FIT_HINTS_MAX);

	ck_assert_int_ge(n, 1);
	ck_assert_str_eq(h[0].change, "--recompute full --zero 3");
	ck_assert_int_eq(h[0].plan.zero, 3);
	check_hints(h, n);
	for (int i = 0; i < n; i++)
		ck_assert_msg(strchr(h[i].change, ' ') && strstr(h[i].change, "--zero 3"),
			      "'%s' is not a pair with ZeRO 3", h[i].change);
}
END_TEST

/* Nothing fits when even two changes are not enough: 175 B on 8 GPUs. */
START_TEST(test_nothing_fits)
{
	struct plan p = plan_of(1, 1, 8);
	struct fit_hint h[FIT_HINTS_MAX];

	p.global_batch = 8;
	ck_assert_int_eq(fit_hints(&gpt3, &selene, &p, &(struct estimate_options){ COLL_ALGO_RING, NULL, NULL },
				   h, FIT_HINTS_MAX), 0);
}
END_TEST

START_TEST(test_largest_term)
{
	struct memory_use mu = { 0 };
	double bytes = 0;

	mu.weights = 10;
	mu.gradients = 20;
	mu.optimizer = 30;
	mu.activations = 25;
	mu.other = 5;
	ck_assert_str_eq(fit_largest_term(&mu, &bytes), "optimizer");
	ck_assert(bytes == 30);
	mu.compression = 31;
	ck_assert_str_eq(fit_largest_term(&mu, &bytes), "compression");
	ck_assert(bytes == 31);
	/* A tie keeps the first term in the report's order. */
	mu.weights = 31;
	ck_assert_str_eq(fit_largest_term(&mu, &bytes), "weights");
}
END_TEST

static Suite *
fit_hint_suite(void)
{
	Suite *s = suite_create("fit_hint");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_single_changes);
	tcase_add_test(tc, test_pairs_when_no_single_change_fits);
	tcase_add_test(tc, test_nothing_fits);
	tcase_add_test(tc, test_largest_term);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(fit_hint_suite)
