/*
 * Checkpoints and failure recovery (plan/checkpoint.h): Gemini's group
 * placement, wasted time and traffic interleaving (Wang et al., SOSP
 * 2023), the Young-Daly interval, each worked out by hand; then the
 * issue's expected behaviours on the bundled p4d cluster.
 */
#include <math.h>

#include "plan/checkpoint.h"
#include "plan/estimate.h"
#include "testutil.h"

/* Plan @p: ZeRO-3 over dp @dp (tp 1, pp 1), @micro and @global
 * sequences of @seq tokens, with @gemini recomputation and flash
 * attention; estimated into @e. */
static void
zero3_estimate(const struct model *m, const struct cluster *c, struct plan *p, int dp, int micro, int global,
	       int seq, bool gemini, struct estimate *e)
{
	struct plan_error err;

	plan_init(p);
	p->tp = 1;
	p->pp = 1;
	p->dp = dp;
	p->zero = 3;
	p->micro_batch = micro;
	p->global_batch = global;
	p->seq_len = seq;
	if (gemini) { /* the big models: full recomputation, flash attention */
		p->recompute = PLAN_RECOMPUTE_FULL;
		p->flash_attention = true;
	}
	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(m, c, p, NULL, e, &err), "%s", err.message);
}

/* Group placement; the probability that k uniformly drawn failed
 * machines leave every machine a copy in CPU memory. */
START_TEST(test_recovery_probability)
{
	/* 16 machines in 8 pairs: one failure always leaves the partner's
	 * copy; two lose a copy only when they are a pair, 8 of the
	 * C(16, 2) = 120 pairs: 1 - 8/120 = 14/15. */
	ck_assert_double_eq(checkpoint_recovery_probability(16, 2, 1), 1.0);
	ck_assert_double_eq_tol(checkpoint_recovery_probability(16, 2, 2), 14.0 / 15.0, 1e-12);
	/* m = 1: the only copy is the failed machine's own. */
	ck_assert_double_eq(checkpoint_recovery_probability(16, 1, 1), 0.0);
	/* 6 machines in 2 groups of 3, 3 failures: the 2 whole groups of
	 * C(6, 3) = 20 triples: 1 - 2/20 = 0.9. */
	ck_assert_double_eq_tol(checkpoint_recovery_probability(6, 3, 3), 0.9, 1e-12);
	/* 7 machines, m 3: one group {0,1,2} and a ring of 3 + 7 mod 3 = 4.
	 * Of C(7, 3) = 35 triples the group is lost by 1 and the ring by its
	 * 4 windows of 3 consecutive machines: 1 - 5/35 = 6/7. */
	ck_assert_double_eq_tol(checkpoint_recovery_probability(7, 3, 3), 6.0 / 7.0, 1e-12);
	/* 5 machines, m 2: the pair {0,1} and a ring of 3 whose 3 pairs are
	 * all adjacent: 4 of C(5, 2) = 10 lose a copy, 0.6. */
	ck_assert_double_eq_tol(checkpoint_recovery_probability(5, 2, 2), 0.6, 1e-12);
	/* 8 machines, m 5: all in a ring of 5 + 3; 5 failures lose a copy
	 * only as one of the 8 windows of 5: 1 - 8/56 = 6/7. */
	ck_assert_double_eq_tol(checkpoint_recovery_probability(8, 5, 5), 6.0 / 7.0, 1e-12);
	ck_assert_double_eq(checkpoint_recovery_probability(8, 5, 4), 1.0);
	/* One group of all: any failure short of all of them. */
	ck_assert_double_eq(checkpoint_recovery_probability(4, 4, 3), 1.0);
	ck_assert_double_eq(checkpoint_recovery_probability(4, 4, 4), 0.0);
	ck_assert_double_eq(checkpoint_recovery_probability(4, 2, 0), 1.0);
}
END_TEST

/* Young (1974) / Daly (2006) and Gemini's Eq. 1. */
START_TEST(test_young_daly_and_waste)
{
	/* delta 100 s, two failures a day (MTBF 43,200 s):
	 * sqrt(2 x 100 x 43200) = sqrt(8.64e6) = 2939.3877 s. */
	ck_assert_double_eq_tol(checkpoint_young_daly_s(100.0, 43200.0), 2939.387691339814, 1e-9);
	/* t_ckpt 2 s + half of a 30 s interval + 3 s retrieval + 120 s
	 * restart = 140 s. */
	ck_assert_double_eq_tol(checkpoint_wasted_per_failure_s(2.0, 30.0, 3.0, 120.0), 140.0, 1e-12);
}
END_TEST

/* The network is idle for the iteration less the traffic of the groups
 * that cross nodes. */
START_TEST(test_network_idle)
{
	struct cluster c;
	struct plan p;
	struct estimate e = { .iteration_time_s = 10.0 };

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	plan_init(&p);
	p.tp = 4; /* a TP group per node, DP across the two */
	p.pp = 1;
	p.dp = 2;
	e.details.dp_inter_node = true;
	e.details.dp_total_s = 6.0;   /* counted before overlap */
	e.breakdown.dp_comm = 1.0;
	e.breakdown.tp_comm = 2.0;    /* TP inside a node: not the network's */
	e.details.pp_inter_node = true;
	e.breakdown.pp_comm = 1.0;
	/* 10 - 6 - 1 = 3 s. */
	ck_assert_double_eq_tol(checkpoint_network_idle_s(&p, &c, &e), 3.0, 1e-12);
	e.details.dp_total_s = 12.0;
	ck_assert_double_eq(checkpoint_network_idle_s(&p, &c, &e), 0.0);
	cluster_release(&c);
}
END_TEST

/* The toy GPT on the toy cluster (testutil.h), 8 GPUs of 2 machines,
 * ZeRO-3 over dp 8, and its estimate. */
struct toy {
	struct model m;
	struct cluster c;
	struct plan p;
	struct estimate e;
	struct checkpoint_options o;
	struct checkpoint_estimate k;
	struct plan_error err;
};

static void
toy(struct toy *x, int target)
{
	test_load_cluster(&x->c, TOY_CLUSTER_YAML);
	test_load_model(&x->m, TOY_MODEL_YAML);
	zero3_estimate(&x->m, &x->c, &x->p, 8, 1, 8, 1024, false, &x->e);
	checkpoint_options_init(&x->o);
	x->o.target = target;
	plan_error_clear(&x->err);
}

/* checkpoint_estimate of the toy under its options. */
static bool
toy_run(struct toy *x)
{
	plan_error_clear(&x->err);
	return checkpoint_estimate(&x->m, &x->c, &x->p, NULL, &x->e, &x->o, &x->k, &x->err);
}

/*
 * Sizes and times on the toy. P parameters, ZeRO-3 over 8: each GPU
 * keeps 14 P / 8 bytes (2 of weights, 12 of optimizer states), a machine
 * of 4 GPUs 7 P, the model 14 P. PCIe 25e9 B/s (the default), one NIC
 * of 12.5e9 B/s at 0.8 = 1e10 B/s per machine, storage 2.5e9 B/s
 * (20 Gbit/s, the default). Restart 120 s.
 */
START_TEST(test_toy_cpu)
{
	struct toy x;
	const struct checkpoint_estimate *k = &x.k;
	double P, T, idle, stall, w, useful;

	toy(&x, CHECKPOINT_CPU);
	P = x.e.parameters;
	T = x.e.iteration_time_s;
	x.o.failures_per_day = 4.0; /* MTBF 21,600 s */
	ck_assert_msg(toy_run(&x), "%s", x.err.message);
	ck_assert_int_eq(k->machines, 2);
	ck_assert_int_eq(k->replicas, 2);
	ck_assert_int_eq(k->every, 1);
	ck_assert_rel(k->bytes_per_gpu, 14.0 * P / 8.0, 1e-12);
	ck_assert_rel(k->bytes_per_machine, 7.0 * P, 1e-12);
	ck_assert_rel(k->bytes_total, 14.0 * P, 1e-12);
	ck_assert_rel(k->gpu_to_cpu_s, 14.0 * P / 8.0 / 25e9, 1e-12);
	/* One peer copy of 7 P over 1e10 B/s. */
	ck_assert_rel(k->to_peers_s, 7.0 * P / 1e10, 1e-12);
	ck_assert_rel(k->to_storage_s, 14.0 * P / 2.5e9, 1e-12);
	/* Recovery: 7 P from the peer (7e-10 P s) outlasts the local
	 * reload (7e-11 P s); from storage 14 P / 2.5e9 = 5.6e-9 P s. */
	ck_assert_rel(k->recovery_cpu_s, 7.0 * P / 1e10, 1e-12);
	ck_assert_rel(k->recovery_storage_s, 14.0 * P / 2.5e9, 1e-12);
	ck_assert_double_eq(k->cpu_recovery_probability, 1.0);
	/* Two machines, one pair: two failures are both of them. */
	ck_assert_double_eq(k->cpu_recovery_probability_two, 0.0);
	/* Interleaving: only what the iteration's idle network cannot hold
	 * stalls it; the checkpoint completes once the gaps carried it. */
	idle = k->network_idle_s;
	ck_assert_rel(idle, fmax(0.0, T - x.e.details.dp_total_s), 1e-12);
	stall = fmax(0.0, k->to_peers_s - idle);
	ck_assert_double_eq_tol(k->overhead_per_iteration_s, stall, 1e-15);
	ck_assert_rel(k->checkpoint_s,
		      fmax(k->gpu_to_cpu_s, (idle > 0 ? (k->to_peers_s - stall) * T / idle : 0) + stall), 1e-12);
	/* Gemini's Eq. 1 with the restart, and the first-order goodput. */
	w = k->checkpoint_s + 0.5 * (T + stall) + k->recovery_cpu_s + 120.0;
	ck_assert_rel(k->wasted_per_failure_s, w, 1e-12);
	useful = T / (T + stall) * (1.0 - w / 21600.0);
	ck_assert_rel(k->goodput_tokens_per_s, x.e.tokens_per_s * useful, 1e-12);
	ck_assert_rel(k->wasted_fraction, 1.0 - useful, 1e-9);
	cluster_release(&x.c);
}
END_TEST

/* Storage at the Young-Daly interval: every round(sqrt(2 delta MTBF) / T)
 * iterations, each stalled delta / every. */
START_TEST(test_toy_storage)
{
	struct toy x;
	const struct checkpoint_estimate *k = &x.k;
	double T, delta, yd, n, w;

	toy(&x, CHECKPOINT_STORAGE);
	T = x.e.iteration_time_s;
	x.o.gpu_mtbf_hours = 1000.0; /* 8 GPUs: 8 x 24 / 1000 = 0.192 failures a day */
	x.o.storage_bandwidth_Bps = 1e9;
	ck_assert_msg(toy_run(&x), "%s", x.err.message);
	ck_assert_double_eq_tol(k->failures_per_day, 0.192, 1e-12);
	delta = 14.0 * x.e.parameters / 1e9;
	ck_assert_rel(k->to_storage_s, delta, 1e-12);
	yd = sqrt(2.0 * delta * 86400.0 / 0.192);
	ck_assert_rel(k->optimal_interval_s, yd, 1e-12);
	n = fmax(1.0, round(yd / T));
	ck_assert_int_eq(k->every, (int)n);
	ck_assert_rel(k->overhead_per_iteration_s, delta / n, 1e-12);
	ck_assert_rel(k->interval_s, n * (T + delta / n), 1e-12);
	w = delta + 0.5 * k->interval_s + k->recovery_storage_s + 120.0;
	ck_assert_rel(k->wasted_per_failure_s, w, 1e-12);
	ck_assert_rel(k->goodput_tokens_per_s,
		      x.e.tokens_per_s * T / (T + delta / n) * (1.0 - w * 0.192 / 86400.0), 1e-12);
	cluster_release(&x.c);
}
END_TEST

/* Options that cannot apply are PLAN_ERR_PLAN errors that name the numbers. */
START_TEST(test_bad_options)
{
	struct toy x;

	toy(&x, CHECKPOINT_NONE);
	ck_assert(!toy_run(&x));
	ck_assert_int_eq(x.err.kind, PLAN_ERR_PLAN);
	x.o.target = CHECKPOINT_CPU;
	x.o.replicas = 3;
	ck_assert(!toy_run(&x));
	ck_assert_int_eq(x.err.kind, PLAN_ERR_PLAN);
	ck_assert_msg(strstr(x.err.message, "3 checkpoint replicas") && strstr(x.err.message, "uses 2"), "%s",
		      x.err.message);
	x.o.replicas = 2;
	x.o.failures_per_day = -1.0;
	ck_assert(!toy_run(&x));
	x.o.failures_per_day = 0.0;
	ck_assert(toy_run(&x));
	cluster_release(&x.c);
}
END_TEST

/*
 * The expected behaviours, in Gemini's setting: 16 p4d.24xlarge
 * (aws-p4d-16), ZeRO-3 as in its DeepSpeed runs, models either side of
 * 100B (gpt-76.1b and gpt-145.6b).
 */
static const char *const big_models[] = { "gpt-76.1b", "gpt-145.6b" };

static void
p4d_case(const char *name, struct model *m, struct cluster *c, struct plan *p, struct estimate *e)
{
	test_setup_paths();
	test_load_profile(PROFILE_MODEL, name, m);
	test_load_profile(PROFILE_CLUSTER, "aws-p4d-16", c);
	zero3_estimate(m, c, p, 128, 2, 256, m->seq_len, true, e);
	ck_assert_msg(e->fits, "%s does not fit", name);
}

static void
p4d_checkpoint(const struct model *m, const struct cluster *c, const struct plan *p, const struct estimate *e,
	       int target, double per_day, struct checkpoint_estimate *k)
{
	struct checkpoint_options o;
	struct plan_error err;

	checkpoint_options_init(&o);
	o.target = target;
	o.failures_per_day = per_day;
	o.storage_bandwidth_Bps = 20e9 / 8;
	plan_error_clear(&err);
	ck_assert_msg(checkpoint_estimate(m, c, p, NULL, e, &o, k, &err), "%s", err.message);
}

START_TEST(test_p4d_cpu_overhead_and_recovery)
{
	struct model m;
	struct cluster c;
	struct plan p;
	struct estimate e;
	struct checkpoint_estimate k;

	p4d_case(big_models[_i], &m, &c, &p, &e);
	p4d_checkpoint(&m, &c, &p, &e, CHECKPOINT_CPU, 1.0, &k);
	ck_assert_int_eq(k.every, 1);
	ck_assert_int_eq(k.machines, 16);
	/* In-memory checkpoints every iteration: at most 5 % of it. */
	ck_assert_msg(k.overhead_fraction <= 0.05, "%s: overhead %.4f", big_models[_i], k.overhead_fraction);
	/* Recovery from CPU memory at least 10x faster than from storage at 20 Gbit/s. */
	ck_assert_msg(k.recovery_storage_s >= 10.0 * k.recovery_cpu_s, "%s: %.2f s vs %.2f s", big_models[_i],
		      k.recovery_storage_s, k.recovery_cpu_s);
	cluster_release(&c);
}
END_TEST

START_TEST(test_p4d_goodput)
{
	static const double per_day[] = { 1.0, 1.01, 1.5, 2.0, 4.0, 8.0, 16.0, 24.0, 48.0 };
	struct model m;
	struct cluster c;
	struct plan p;
	struct estimate e;

	p4d_case(big_models[_i], &m, &c, &p, &e);
	for (size_t i = 0; i < sizeof(per_day) / sizeof(per_day[0]); i++) {
		struct checkpoint_estimate cpu, st;

		p4d_checkpoint(&m, &c, &p, &e, CHECKPOINT_CPU, per_day[i], &cpu);
		p4d_checkpoint(&m, &c, &p, &e, CHECKPOINT_STORAGE, per_day[i], &st);
		ck_assert_msg(cpu.goodput_tokens_per_s > st.goodput_tokens_per_s,
			      "%s, %g failures a day: cpu %.0f, storage %.0f tokens/s", big_models[_i], per_day[i],
			      cpu.goodput_tokens_per_s, st.goodput_tokens_per_s);
		ck_assert(cpu.goodput_tokens_per_s <= e.tokens_per_s);
	}
	cluster_release(&c);
}
END_TEST

static Suite *
checkpoint_suite(void)
{
	Suite *s = suite_create("checkpoint");
	TCase *tc = tcase_create("checkpoint");

	tcase_add_test(tc, test_recovery_probability);
	tcase_add_test(tc, test_young_daly_and_waste);
	tcase_add_test(tc, test_network_idle);
	tcase_add_test(tc, test_toy_cpu);
	tcase_add_test(tc, test_toy_storage);
	tcase_add_test(tc, test_bad_options);
	tcase_add_loop_test(tc, test_p4d_cpu_overhead_and_recovery, 0, 2);
	tcase_add_loop_test(tc, test_p4d_goodput, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(checkpoint_suite)
