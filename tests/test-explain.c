/*
 * optimize --explain: each runner-up is the exact optimum of the space
 * without the best plan's value of its dimension, never faster than the
 * best, and a dimension without another value says so.
 */
#include <math.h>

#include "io/profile_load.h"
#include "io/profile_path.h"
#include "plan/explain.h"
#include "testutil.h"

#define SMALL_CLUSTER \
	"name: small\nnodes: 4\ngpus_per_node: 4\ngpu:\n  name: g\n  peak_flops: 312 TFLOPS\n" \
	"  memory: %s\n  memory_bandwidth: 2039 GB/s\nintra_node:\n  bandwidth: 300 GB/s\n" \
	"inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n"
/* 12 layers (test-search's small model); and 5 heads, so that no TP
 * degree above 1 splits them. */
#define SMALL_MODEL "name: small\nlayers: 12\nhidden: 4096\nheads: 32\nvocab: 51200\nseq_len: 2048\n"
#define ODD_MODEL "name: odd\nlayers: 12\nhidden: 2560\nheads: 5\nvocab: 51200\nseq_len: 2048\n"

static void
small_cluster(struct cluster *c, const char *mem)
{
	char yaml[1024];

	snprintf(yaml, sizeof(yaml), SMALL_CLUSTER, mem);
	test_load_cluster(c, yaml);
}

/* The entry of dimension @d, or NULL. */
static const struct explanation *
entry(const struct explanation *x, int n, enum search_dim d)
{
	for (int i = 0; i < n; i++)
		if (x[i].dim == d)
			return &x[i];
	return NULL;
}

/* The best plan of @o (into top[0]) and its runner-ups; their number. */
static int
best_and_runner_ups(const struct model *m, const struct cluster *c, const struct search_options *o,
		    struct search_candidate *top, struct explanation *x)
{
	struct search_stats st;
	struct plan_error err;
	int ntop, n;

	ck_assert_msg(search_run(m, c, o, top, &ntop, &st, &err), "%s", err.message);
	ck_assert_int_ge(ntop, 1);
	ck_assert_msg(explain_run(m, c, o, &top[0], x, &n, &err), "%s", err.message);
	return n;
}

START_TEST(test_runner_ups)
{
	static const enum search_dim first[] = { SEARCH_DIM_TP, SEARCH_DIM_PP, SEARCH_DIM_MICRO_BATCH,
						 SEARCH_DIM_RECOMPUTE, SEARCH_DIM_ZERO };
	struct model m;
	struct cluster c;
	struct search_options o;
	struct search_candidate top[SEARCH_MAX_TOP];
	struct search_stats st;
	struct explanation x[EXPLAIN_MAX];
	struct plan_error err;
	const struct explanation *tp, *rc;
	double best;
	int ntop, n;

	test_setup_paths();
	test_load_profile(PROFILE_MODEL, "gpt-1.7b", &m);
	test_load_profile(PROFILE_CLUSTER, "selene", &c);
	search_options_init(&o);
	o.time_limit_s = TEST_NO_TIME_LIMIT_S;
	o.gpus = 32;
	o.global_batch = 512;
	n = best_and_runner_ups(&m, &c, &o, top, x);
	best = top[0].est.iteration_time_s;
	/* 1.7 B parameters fit one A100 with ZeRO-3: TP would only add its
	 * collectives, PP its bubble, so the best is TP 1, PP 1 and recomputes
	 * nothing. */
	ck_assert_int_eq(top[0].plan.tp, 1);
	ck_assert_int_eq(top[0].plan.pp, 1);
	ck_assert_int_eq(explain_recompute_level(&m, &top[0].plan), PLAN_RECOMPUTE_NONE);
	ck_assert_int_ge(n, 5);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(x[i].dim, first[i]);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(x[i].best_value, explain_dim_value(&m, &top[0].plan, x[i].dim));
		ck_assert_msg(x[i].status == EXPLAIN_FOUND, "%s: status %d", search_dim_names[x[i].dim], x[i].status);
		ck_assert(x[i].have_plan && x[i].cand.est.fits);
		ck_assert_int_ne(x[i].value, x[i].best_value);
		ck_assert_int_eq(x[i].value, explain_dim_value(&m, &x[i].cand.plan, x[i].dim));
		ck_assert_msg(x[i].cand.est.iteration_time_s >= best * (1 - 1e-12), "%s: %.9g < best %.9g",
			      search_dim_names[x[i].dim], x[i].cand.est.iteration_time_s, best);
	}
	/* TP: the next degree, 2, within the node. */
	tp = entry(x, n, SEARCH_DIM_TP);
	ck_assert_int_eq(tp->value, 2);
	ck_assert(tp->cand.est.breakdown.tp_comm > top[0].est.breakdown.tp_comm);
	/* Recompute: nothing recomputes in the best, so every stage of the
	 * runner-up recomputes in full, and pays for it. */
	rc = entry(x, n, SEARCH_DIM_RECOMPUTE);
	ck_assert_int_eq(rc->value, PLAN_RECOMPUTE_FULL);
	for (int s = 0; s < rc->cand.plan.pp; s++)
		ck_assert_int_eq(plan_stage_mode(&rc->cand.plan, &m, s), PLAN_RECOMPUTE_FULL);
	ck_assert(rc->cand.est.breakdown.recompute > 0 && top[0].est.breakdown.recompute == 0);
	/* The runner-up is the optimum of the space without TP 1, whatever
	 * the size of the top list: none of that search's plans has TP 1. */
	o.exclude_dim = SEARCH_DIM_TP;
	o.exclude_value = 1;
	ck_assert(search_run(&m, &c, &o, top, &ntop, &st, &err));
	ck_assert_int_ge(ntop, 2);
	ck_assert_rel(top[0].est.iteration_time_s, tp->cand.est.iteration_time_s, 1e-12);
	for (int i = 0; i < ntop; i++)
		ck_assert_int_ne(top[i].plan.tp, 1);
	cluster_release(&c);
}
END_TEST

START_TEST(test_no_alternative)
{
	struct model m;
	struct cluster c;
	struct search_options o;
	struct search_candidate top[SEARCH_MAX_TOP];
	struct explanation x[EXPLAIN_MAX];
	const struct explanation *tp;
	int n;

	test_load_model(&m, ODD_MODEL);
	small_cluster(&c, "80 GiB");
	search_options_init(&o);
	o.time_limit_s = TEST_NO_TIME_LIMIT_S;
	o.global_batch = 64;
	n = best_and_runner_ups(&m, &c, &o, top, x);
	ck_assert_int_eq(top[0].plan.tp, 1);
	/* 5 heads: TP 1 only; none invented, and no sequence parallelism,
	 * which needs TP (an optional dimension: not listed). */
	tp = entry(x, n, SEARCH_DIM_TP);
	ck_assert_ptr_nonnull(tp);
	ck_assert_int_eq(tp->status, EXPLAIN_NONE);
	ck_assert(!tp->have_plan);
	ck_assert_ptr_null(entry(x, n, SEARCH_DIM_SP));
	ck_assert_ptr_null(entry(x, n, SEARCH_DIM_EP));
	ck_assert_int_eq(entry(x, n, SEARCH_DIM_PP)->status, EXPLAIN_FOUND);
	cluster_release(&c);
}
END_TEST

/* One shape under a recompute mask, by MILP and by enumeration: the same
 * optimum, within the mask. */
static void
masked_shape(const char *mem, unsigned mask, bool flash, bool *found)
{
	struct model m;
	struct cluster c;
	struct search_options o;
	struct search_candidate milp, exh;
	struct search_stats st;
	struct plan_error err;
	struct plan p;
	bool f2;

	test_load_model(&m, SMALL_MODEL);
	small_cluster(&c, mem);
	search_options_init(&o);
	o.time_limit_s = TEST_NO_TIME_LIMIT_S;
	o.recompute_modes = mask;
	plan_init(&p);
	p.tp = 2;
	p.pp = 3;
	p.dp = 2;
	p.micro_batch = 2;
	p.global_batch = 8 * p.dp * p.micro_batch;
	p.seq_len = 2048;
	p.flash_attention = flash;
	memset(&st, 0, sizeof(st));
	ck_assert_msg(search_shape(&m, &c, &p, NULL, &o, false, &milp, found, &st, &err), "%s", err.message);
	ck_assert(search_shape(&m, &c, &p, NULL, &o, true, &exh, &f2, &st, &err));
	ck_assert_int_eq(*found, f2);
	if (*found) {
		ck_assert_rel(milp.est.iteration_time_s, exh.est.iteration_time_s, 1e-9);
		for (int s = 0; s < p.pp; s++) {
			int mode = plan_stage_mode(&milp.plan, &m, s);

			ck_assert_msg(mask & (1u << mode), "stage %d mode %d outside mask %u", s, mode, mask);
			if (!(mask & (1u << PLAN_RECOMPUTE_FULL)))
				ck_assert_int_eq(plan_stage_recompute_layers(&milp.plan, &m, s), 0);
		}
	}
	cluster_release(&c);
}

START_TEST(test_recompute_modes)
{
	unsigned light = 1u << PLAN_RECOMPUTE_NONE | 1u << PLAN_RECOMPUTE_SELECTIVE;
	bool found;

	/* Tight memory: the unrestricted optimum recomputes (test-search's
	 * 16 GiB case); without full recomputation, and with full only. */
	masked_shape("16 GiB", light, false, &found);
	ck_assert(found);
	masked_shape("16 GiB", 1u << PLAN_RECOMPUTE_FULL, false, &found);
	ck_assert(found);
	masked_shape("80 GiB", 1u << PLAN_RECOMPUTE_NONE, false, &found);
	ck_assert(found);
	/* Selective alone: a mode of its own without fused attention; with
	 * it, the same as none, which is not tried: no mode, no layout. */
	masked_shape("80 GiB", 1u << PLAN_RECOMPUTE_SELECTIVE, false, &found);
	ck_assert(found);
	masked_shape("80 GiB", 1u << PLAN_RECOMPUTE_SELECTIVE, true, &found);
	ck_assert(!found);
	/* The levels and the masks explain_run uses. */
	ck_assert_uint_eq(explain_recompute_modes(PLAN_RECOMPUTE_FULL), light);
	ck_assert_uint_eq(explain_recompute_modes(PLAN_RECOMPUTE_SELECTIVE), 1u << PLAN_RECOMPUTE_NONE);
	ck_assert_uint_eq(explain_recompute_modes(PLAN_RECOMPUTE_NONE), 1u << PLAN_RECOMPUTE_FULL);
}
END_TEST

static Suite *
explain_suite(void)
{
	Suite *s = suite_create("explain");
	TCase *tc = tcase_create("explain");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_runner_ups);
	tcase_add_test(tc, test_no_alternative);
	tcase_add_test(tc, test_recompute_modes);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(explain_suite)
