/*
 * Data-parallel and ZeRO communication, worked out by hand on the toy
 * cluster (testutil.h): NVLink 1e11 B/s, alpha 1 us; one NIC share per
 * GPU of 2.5e9 B/s, alpha 10 us. Collectives follow the NCCL ring of
 * collective.c: 2(n-1) steps and a 2(n-1)/n bus factor for all-reduce,
 * n-1 and (n-1)/n for all-gather and reduce-scatter (nccl-tests
 * PERFORMANCE.md), the steps that cross nodes (2(k-1) or k-1) paying the
 * inter-node alpha, and the bytes leaving a node through its GPUs' NIC
 * shares (formulas.md: the alpha-beta ring of Sec. 3.1, ZeRO volumes of 4.3).
 */
#include <math.h>

#include "plan/data_par.h"
#include "plan/topology.h"
#include "testutil.h"

/* The toy GPT on the toy cluster on 1 x @pp x @dp GPUs, B 8 (m 1 with
 * dp 8: a DP group of 4 GPUs per node on k 2 nodes), and its layout. */
static void
toy_setup(struct cluster *c, struct model *m, struct plan *p, struct plan_layout *lay,
	  int pp, int dp, int zero)
{
	test_load_cluster(c, TOY_CLUSTER_YAML);
	test_load_model(m, TOY_MODEL_YAML);
	plan_init(p);
	p->tp = 1;
	p->pp = pp;
	p->dp = dp;
	p->global_batch = 8;
	p->seq_len = 1024;
	p->zero = zero;
	topology_plan(p, c, lay);
}

START_TEST(test_dp_allreduce)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dc;

	toy_setup(&c, &m, &p, &lay, 1, 8, 0);
	/*
	 * 1e8 parameters, 2e8 bytes of 16-bit gradients, ring all-reduce
	 * over 8 ranks on 2 nodes: 14 steps, 2 across nodes: 12 x 1 us + 2 x
	 * 10 us = 32 us; 1.75 x 2e8 B through 4 x 2.5e9 B/s = 3.5e-2 s
	 * (NVLink alone would take 3.5e-3): 3.5032e-2 s. Each GPU sends
	 * 2 (7/8) 2e8 = 3.5e8 B (Rajbhandari et al. 2020 Sec. 7: 2 Psi).
	 */
	dp_comm_time(&m, &p, &c, &lay, 1e8, 0.0, 0.0, 2.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.grad_bytes, 2e8, 1e-6);
	ck_assert_double_eq_tol(dc.reduce_s, 3.5032e-2, 1e-15);
	ck_assert_double_eq(dc.gather_s, 0.0);
	ck_assert_double_eq(dc.zero3_mb_s, 0.0);
	ck_assert_double_eq(dc.embed_sync_s, 0.0);
	ck_assert_double_eq_tol(dc.bytes, 3.5e8, 1e-6);
	/*
	 * Hierarchical (Thakur et al. 2005; the 2D all-reduce): reduce-scatter
	 * in the node (3 x 1 us + 3/4 x 2e8 / 1e11 = 1.503e-3 s), 4 parallel
	 * all-reduces of 5e7 B over the 2 nodes (2 x 10 us + 5e7 / 2.5e9 =
	 * 2.002e-2 s), all-gather in the node (1.503e-3 s): 2.3026e-2 s.
	 */
	dp_comm_time(&m, &p, &c, &lay, 1e8, 0.0, 0.0, 2.0, COLL_ALGO_HIERARCHICAL, &dc);
	ck_assert_double_eq_tol(dc.reduce_s, 2.3026e-2, 1e-15);
	cluster_release(&c);
}
END_TEST

START_TEST(test_zero12)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dc;

	for (int zero = 1; zero <= 2; zero++) {
		toy_setup(&c, &m, &p, &lay, 1, 8, zero);
		/*
		 * ZeRO-1/2 reduce-scatter the gradients and all-gather the
		 * updated weights (ZeRO Sec. 7: the same 2 Psi as an all-reduce).
		 * Each is 7 steps, 1 across nodes: 6 x 1 us + 10 us = 16 us,
		 * plus 7/8 x 2e8 / 1e10 = 1.75e-2 s: 1.7516e-2 s each.
		 */
		dp_comm_time(&m, &p, &c, &lay, 1e8, 0.0, 0.0, 2.0, COLL_ALGO_RING, &dc);
		ck_assert_double_eq_tol(dc.reduce_s, 1.7516e-2, 1e-15);
		ck_assert_double_eq_tol(dc.gather_s, 1.7516e-2, 1e-15);
		ck_assert_double_eq_tol(dc.bytes, 3.5e8, 1e-6);
		cluster_release(&c);
	}
}
END_TEST

START_TEST(test_zero3)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dc;

	toy_setup(&c, &m, &p, &lay, 1, 8, 3);
	/*
	 * A GPU with 1.3e7 parameters (2.6e7 B of gradients), of which 2
	 * layers of 6e6. The toy layer has 12 parameter tensors (4 weights,
	 * 4 biases, 2 LayerNorms of scale and shift), each gathered and
	 * reduced by its own collective (DeepSpeed), here 1.2e7 / 12 = 1e6 B.
	 * All-gather of 1e6 B over the 8 ranks: 16 us + 7/8 x 1e6 / 1e10 =
	 * 1.035e-4 s; reduce-scatter the same. Per micro-batch and layer: 12
	 * x (forward and backward gathers + one reduce-scatter) = 36 x
	 * 1.035e-4 = 3.726e-3 s; 2 layers: 7.452e-3 s. The other 2e6 B
	 * (embedding, final norm) go in one tensor: 3 x (16 us + 1.75e-4) =
	 * 5.73e-4 s. In all 8.025e-3 s per micro-batch, nothing after the step.
	 */
	dp_comm_time(&m, &p, &c, &lay, 1.3e7, 0.0, 6e6, 2.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.zero3_mb_s, 8.025e-3, 1e-15);
	ck_assert_double_eq(dc.reduce_s, 0.0);
	ck_assert_double_eq(dc.gather_s, 0.0);
	/* ZeRO Sec. 7: 3 Psi, 1.5 x DP: 3 x 7/8 x 2.6e7 = 6.825e7 B per micro-batch. */
	ck_assert_double_eq_tol(dc.bytes, 6.825e7, 1e-6);
	/* Full recomputation gathers once more (DeepSpeed releases the
	 * weights after every forward): 2 layers x 12 x 4 x 1.035e-4 +
	 * 4 x 1.91e-4 = 9.936e-3 + 7.64e-4 = 1.07e-2 s, and 4 x 7/8 x 2.6e7
	 * = 9.1e7 B. */
	p.recompute = PLAN_RECOMPUTE_FULL;
	dp_comm_time(&m, &p, &c, &lay, 1.3e7, 0.0, 6e6, 2.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.zero3_mb_s, 1.07e-2, 1e-15);
	ck_assert_double_eq_tol(dc.bytes, 9.1e7, 1e-6);
	cluster_release(&c);
}
END_TEST

START_TEST(test_tied_embedding_sync)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dc;

	toy_setup(&c, &m, &p, &lay, 2, 1, 0);
	/*
	 * Megatron all-reduces the tied word embedding's gradient between the
	 * first and the last stage (SC21 Sec. 4): 2 V h = 67,108,864 B over
	 * a pair on one node, 2 steps, factor 1: 2 us + 6.7108864e-4 s.
	 * dp 1: no other DP traffic.
	 */
	dp_comm_time(&m, &p, &c, &lay, 1e8, 0.0, 0.0, 1.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.embed_sync_s, 6.7308864e-4, 1e-15);
	ck_assert_double_eq(dc.reduce_s, 0.0);
	ck_assert_double_eq(dc.bytes, 0.0);
	cluster_release(&c);
}
END_TEST

static Suite *
data_par_suite(void)
{
	Suite *s = suite_create("data-par");
	TCase *tc = tcase_create("data-par");

	tcase_add_test(tc, test_dp_allreduce);
	tcase_add_test(tc, test_zero12);
	tcase_add_test(tc, test_zero3);
	tcase_add_test(tc, test_tied_embedding_sync);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(data_par_suite)
