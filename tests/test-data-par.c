/*
 * Data-parallel and ZeRO communication, worked out by hand on the toy
 * cluster (testutil.h): NVLink 1e11 B/s, alpha 1 us; one NIC share per
 * GPU of 2.5e9 B/s, alpha 10 us. Collectives follow the NCCL ring of
 * collective.c: 2(n-1) steps and a 2(n-1)/n bus factor for all-reduce,
 * n-1 and (n-1)/n for all-gather and reduce-scatter (nccl-tests
 * PERFORMANCE.md), the steps that cross nodes (2(k-1) or k-1) paying the
 * inter-node alpha, and the bytes leaving a node through its GPUs' NIC
 * shares (formulas.md: the alpha-beta ring of Sec. 3.1, ZeRO volumes of 4.3);
 * an all-reduce across nodes has its latency multiplied by NCCL's plateau
 * factor, the schema's 1.9 (collective_ring_plateau(); NCCL 2.7-2.16).
 */
#include <math.h>
#include <string.h>

#include "plan/compute.h"
#include "plan/data_par.h"
#include "plan/estimate.h"
#include "plan/framework.h"
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

/* The toy GPT of test_zero3 on 8 ranks (toy_setup 1, 8, ZeRO-3) with
 * HBM at 1e12 B/s x 0.5 = 5e11 B/s, the rate the copy and host terms
 * below are worked out at, and no GPU speed variation. */
static void
z3_hbm_setup(struct cluster *c, struct model *m, struct plan *p, struct plan_layout *lay)
{
	toy_setup(c, m, p, lay, 1, 8, 3);
	c->gpu.memory_bw_Bps = 1e12;
	c->gpu.memory_efficiency = 0.5;
	c->gpu.speed_variation = 0.0;
}

/* The time of @bytes of memory traffic on the toy cluster with HBM at
 * 1e12 B/s x 0.5 = 5e11 B/s. */
static double
hbm_time(double bytes)
{
	struct cluster c;
	double t;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	c.gpu.memory_bw_Bps = 1e12;
	c.gpu.memory_efficiency = 0.5;
	t = compute_memory_time(&c, bytes);
	cluster_release(&c);
	return t;
}

/* The bundled framework profiles @a, @b and @c (@b, @c may be NULL) into
 * @fa, @fb, @fc, profiles resolving from the source tree. */
static void
load_frameworks(const char *a, struct framework *fa, const char *b, struct framework *fb, const char *c,
		struct framework *fc)
{
	test_setup_paths();
	test_load_profile(PROFILE_FRAMEWORK, a, fa);
	if (b)
		test_load_profile(PROFILE_FRAMEWORK, b, fb);
	if (c)
		test_load_profile(PROFILE_FRAMEWORK, c, fc);
}

/* A plan of dp 8 at ZeRO stage @zero, the rest plan_init's. */
static void
dp8_plan(struct plan *p, int zero)
{
	plan_init(p);
	p->dp = 8;
	p->zero = zero;
}

/* The ZeRO-3 overlap case of test_zero3_exposure: four micro-batches, each
 * layer's gather and reduce 1 ms, 0.2 ms outside the layers, a 1.2x
 * slowdown of overlapped computation. */
static void
z3_exposed_fixture(struct dp_comm *dc, struct plan *p, struct framework *fw)
{
	plan_init(p);
	framework_init_default(fw);
	fw->overlap_slowdown = 1.2;
	dc->z3_gather_layer_s = 1e-3;
	dc->z3_reduce_layer_s = 1e-3;
	dc->z3_rest_s = 2e-4;
	dc->zero3_mb_s = 4 * 3e-3 + 2e-4;
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
	 * 10 us = 32 us, x 1.9 (plateau) = 60.8 us; 1.75 x 2e8 B through 4 x
	 * 2.5e9 B/s = 3.5e-2 s (NVLink alone would take 3.5e-3): 3.50608e-2 s.
	 * Each GPU sends
	 * 2 (7/8) 2e8 = 3.5e8 B (Rajbhandari et al. 2020 Sec. 7: 2 Psi).
	 */
	dp_comm_time(&m, &p, &c, &lay, NULL, 1e8, 0.0, 0.0, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.grad_bytes, 2e8, 1e-6);
	ck_assert_double_eq_tol(dc.reduce_s, 3.50608e-2, 1e-15);
	ck_assert_double_eq(dc.gather_s, 0.0);
	ck_assert_double_eq(dc.zero3_mb_s, 0.0);
	ck_assert_double_eq(dc.embed_sync_s, 0.0);
	ck_assert_double_eq_tol(dc.bytes, 3.5e8, 1e-6);
	/*
	 * Hierarchical (Thakur et al. 2005; the 2D all-reduce): reduce-scatter
	 * in the node (3 x 1 us + 3/4 x 2e8 / 1e11 = 1.503e-3 s), 4 parallel
	 * all-reduces of 5e7 B over the 2 nodes (2 x 10 us x 1.9 = 38 us +
	 * 5e7 / 2.5e9 = 2.0038e-2 s), all-gather in the node (1.503e-3 s):
	 * 2.3044e-2 s.
	 */
	dp_comm_time(&m, &p, &c, &lay, NULL, 1e8, 0.0, 0.0, 2.0, 0.0, COLL_ALGO_HIERARCHICAL, &dc);
	ck_assert_double_eq_tol(dc.reduce_s, 2.3044e-2, 1e-15);
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
		dp_comm_time(&m, &p, &c, &lay, NULL, 1e8, 0.0, 0.0, 2.0, 0.0, COLL_ALGO_RING, &dc);
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
	 * A GPU with 1.3e7 parameters, of which 2 layers of 6e6 (1.2e7 B in
	 * 16-bit each). The built-in framework gathers a layer in one
	 * collective (FSDP's flat parameter per block): all-gather of 1.2e7 B
	 * over the 8 ranks, 16 us + 7/8 x 1.2e7 / 1e10 = 1.066e-3 s, and the
	 * reduce-scatter the same. Per micro-batch and layer: forward and
	 * backward gathers + one reduce-scatter = 3.198e-3 s; 2 layers:
	 * 6.396e-3 s. The other 1e6 parameters (2e6 B: embedding, final norm,
	 * FSDP's root unit) are gathered once and reduced once: 2 x (16 us +
	 * 1.75e-4) = 3.82e-4 s. In all 6.778e-3 s per micro-batch.
	 */
	dp_comm_time(&m, &p, &c, &lay, NULL, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.zero3_mb_s, 6.778e-3, 1e-15);
	ck_assert_double_eq_tol(dc.z3_gather_layer_s, 1.066e-3, 1e-15);
	ck_assert_double_eq_tol(dc.z3_reduce_layer_s, 1.066e-3, 1e-15);
	ck_assert_double_eq_tol(dc.z3_rest_s, 3.82e-4, 1e-15);
	ck_assert_double_eq(dc.reduce_s, 0.0);
	ck_assert_double_eq(dc.gather_s, 0.0);
	/* ZeRO Sec. 7: 3 Psi for the layers, 2 Psi for the root unit:
	 * 7/8 x (3 x 2.4e7 + 2 x 2e6) = 6.65e7 B per micro-batch. */
	ck_assert_double_eq_tol(dc.bytes, 6.65e7, 1e-6);
	/* Recomputation gathers nothing more (FSDP: the weights are there
	 * for the backward anyway). */
	p.recompute = PLAN_RECOMPUTE_FULL;
	dp_comm_time(&m, &p, &c, &lay, NULL, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.zero3_mb_s, 6.778e-3, 1e-15);
	p.recompute = PLAN_RECOMPUTE_NONE;
	/* fp8 all-gathers (torchao's enable_fsdp_float8_all_gather): a layer's
	 * 6e6 parameters in 1 byte, 16 us + 7/8 x 6e6 / 1e10 = 5.41e-4 s; the
	 * reduce-scatter and the root unit unchanged. Per micro-batch
	 * 2 x (2 x 5.41e-4 + 1.066e-3) + 3.82e-4 = 4.678e-3 s; bytes
	 * 7/8 x ((2 x 1 + 2) x 1.2e7 + 2 x 2e6) = 4.55e7. */
	p.precision = PLAN_PRECISION_FP8;
	p.fp8_gather = true;
	dp_comm_time(&m, &p, &c, &lay, NULL, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.z3_gather_layer_s, 5.41e-4, 1e-15);
	ck_assert_double_eq_tol(dc.z3_reduce_layer_s, 1.066e-3, 1e-15);
	ck_assert_double_eq_tol(dc.zero3_mb_s, 4.678e-3, 1e-15);
	ck_assert_double_eq_tol(dc.bytes, 4.55e7, 1e-6);
	{
		/* torchao (fp8_weight_recast) casts each rank's shard before
		 * every gather (fsdp_pre_all_gather in eager: 27 bytes an
		 * element; fp8_recipe.c): 27 x 6e6 / 8 = 2.025e7 B at 1 TB/s,
		 * 2.025e-5 s, on the gather's stream: 5.41e-4 + 2.025e-5 =
		 * 5.6125e-4 s a gather. Per micro-batch 2 x (2 x 5.6125e-4 +
		 * 1.066e-3) + 3.82e-4 = 4.759e-3 s; the wire bytes as above. */
		struct framework ao;

		framework_init_default(&ao);
		ao.fp8_weight_recast = true;
		dp_comm_time(&m, &p, &c, &lay, &ao, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
		ck_assert_double_eq_tol(dc.z3_gather_layer_s, 5.6125e-4, 1e-15);
		ck_assert_double_eq_tol(dc.zero3_mb_s, 4.759e-3, 1e-15);
		ck_assert_double_eq_tol(dc.bytes, 4.55e7, 1e-6);
	}
	p.fp8_gather = false;
	p.precision = PLAN_PRECISION_BF16;
	{
		/* DeepSpeed's 2021 ZeRO-3: every one of the layer's 12 tensors
		 * (4 weights, 4 biases, 2 LayerNorms of scale and shift) by its
		 * own collective, 1e6 B each: 16 us + 7/8 x 1e6 / 1e10 = 1.035e-4
		 * s, plus 0.5 ms of host synchronisation per gather. Per layer:
		 * 12 x (2 x (1.035e-4 + 5e-4) + 1.035e-4) = 1.57260e-2 s; 2
		 * layers 3.14520e-2; the embedding as one tensor: 1.75e-4 + 16 us
		 * + 5e-4 + 1.91e-4 = 8.82e-4. In all 3.23340e-2 s. With full
		 * recomputation it gathers once more: + 2 x 12 x 6.035e-4 =
		 * 1.44840e-2, so 4.68180e-2 s. */
		struct framework ds;

		framework_init_default(&ds);
		ds.gather_unit = FRAMEWORK_GATHER_TENSOR;
		ds.recompute_regather = true;
		ds.gather_overhead_s = 5e-4;
		dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
		ck_assert_double_eq_tol(dc.zero3_mb_s, 3.23340e-2, 1e-12);
		p.recompute = PLAN_RECOMPUTE_FULL;
		dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
		ck_assert_double_eq_tol(dc.zero3_mb_s, 4.68180e-2, 1e-12);
		p.recompute = PLAN_RECOMPUTE_NONE;
		/* Its per-rank host loops, 10 us for each of the 8 ranks, and
		 * three passes over each gathered tensor at 0.5 x 1e12 B/s:
		 * a weight's gather costs 5e-4 + 8e-5 + 3 x 1e6 / 5e11 =
		 * 5.86e-4 s besides the collective, the embedding's 5e-4 + 8e-5
		 * + 1.2e-5 = 5.92e-4. Per layer 12 x (2 x (1.035e-4 + 5.86e-4)
		 * + 1.035e-4) = 1.7790e-2, 2 layers 3.5580e-2; the embedding
		 * 1.91e-4 + 5.92e-4 + 1.91e-4 = 9.74e-4: 3.6554e-2 s. The
		 * reduce-scatters pay none of it. */
		ds.gather_rank_overhead_s = 1e-5;
		ds.gather_copy_passes = 3.0;
		c.gpu.memory_bw_Bps = 1e12;
		c.gpu.memory_efficiency = 0.5;
		dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
		ck_assert_double_eq_tol(dc.zero3_mb_s, 3.6554e-2, 1e-12);
		ck_assert_double_eq_tol(dc.z3_reduce_layer_s, 12 * 1.035e-4, 1e-12);
		/* The copies are GPU work, at the pace of the slowest of the
		 * plan's 8 GPUs (gpu_pace_factor: 1 + 0.013 x 1.4342 =
		 * 1.0186446): of the copies' 2 x 2 x 12 x 6e-6 + 1.2e-5 = 3.0e-4
		 * s, 1.0186446 x 3.0e-4 - 3.0e-4 = 5.5934e-6 s more, 3.65596e-2
		 * s; the collectives and host loops do not move. */
		ck_assert_int_eq(plan_gpus(&p), 8);
		c.gpu.speed_variation = 0.013;
		dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
		ck_assert_double_eq_tol(dc.zero3_mb_s, 3.6554e-2 + 5.5934e-6, 1e-10);
		c.gpu.speed_variation = 0.0;
		/* Its reduce-scatters' copies: the division by the group size
		 * and the list reduce_scatter's flat buffer, 4 passes over each
		 * gradient at 5e11 B/s: 4 x 1e6 / 5e11 = 8e-6 s for each of a
		 * layer's 12 tensors, 1.035e-4 + 8e-6 = 1.115e-4 a reduction,
		 * 1.338e-3 a layer; 2 layers 1.92e-4 s more and the
		 * embedding's 4 x 2e6 / 5e11 = 1.6e-5: 3.6554e-2 + 2.08e-4 =
		 * 3.6762e-2 s. The gathers do not move. */
		ds.reduce_copy_passes = 4.0;
		dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
		ck_assert_double_eq_tol(dc.z3_reduce_layer_s, 1.338e-3, 1e-12);
		ck_assert_double_eq_tol(dc.zero3_mb_s, 3.6762e-2, 1e-12);
		/* DeepSpeed's persistence threshold, 1e5 elements: the 8 biases
		 * and LayerNorm tensors are never gathered, so a layer's 1.2e7
		 * B are gathered as its 4 weights of 3e6 B, 16 us + 7/8 x 3e6 /
		 * 1e10 = 2.785e-4 s each, plus 5e-4 + 8e-5 + 3 x 3e6 / 5e11 =
		 * 5.98e-4 s: 3.506e-3 s a gather of the layer. Every one of the
		 * 12 gradients is still reduce-scattered on its own, 1.338e-3
		 * s a layer as above. 2 layers of 2 x 3.506e-3 + 1.338e-3, and
		 * the embedding's 9.74e-4 + 1.6e-5: 1.7690e-2 s. */
		ds.persistence_threshold = 1e5;
		dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
		ck_assert_double_eq_tol(dc.z3_gather_layer_s, 3.506e-3, 1e-12);
		ck_assert_double_eq_tol(dc.z3_reduce_layer_s, 1.338e-3, 1e-12);
		ck_assert_double_eq_tol(dc.zero3_mb_s, 1.7690e-2, 1e-12);
		ds.persistence_threshold = 0.0;
		/* One rank: nothing is reduced, so nothing is copied. */
		{
			struct group_layout one = lay.mics;

			lay.mics = (struct group_layout){ 1, 1, 1 };
			dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
			ck_assert_double_eq(dc.z3_reduce_layer_s, 0.0);
			lay.mics = one;
		}
	}
	cluster_release(&c);
}
END_TEST

/*
 * FSDP's layer-by-layer exposure (dp_zero3_exposed): 4 layers, gather and
 * reduce-scatter 1 ms each per layer, the root unit 0.2 ms, forward 0.5
 * ms and backward 1.5 ms per layer, overlap slowdown 1.2.
 *   Forward: the first gather waits (1 ms); each of the other 3 outlasts
 *   the layer before by 0.5 ms: 1.5 ms; overlapped 3 x 0.5 = 1.5 ms.
 *   Backward (BACKWARD_PRE): the first gather and the last reduce wait
 *   (2 ms); each other layer moves 2 ms against 1.5 ms of compute: 3 x 0.5
 *   = 1.5 ms; overlapped 3 x 1.5 = 4.5 ms.
 *   Exposed 0.2 + 1 + 1.5 + 2 + 1.5 = 6.2 ms; slowdown 0.2 x 6 = 1.2 ms.
 * BACKWARD_POST gathers after each layer's backward: 4 x 1 ms wait, and
 * the reduce-scatters (1 ms) hide behind 1.5 ms: exposed 0.2 + 2.5 + 4 +
 * 1 = 7.7 ms, overlapped 1.5 + 3 = 4.5 ms, slowdown 0.9 ms. Without
 * overlap everything waits: zero3_mb_s.
 */
/*
 * DeepSpeed's 2021 per-tensor ZeRO-3 on an MoE layer: the toy GPT with 4
 * experts (each fc1 and fc2 of 1024 x 4096 with their biases, 8,393,728
 * parameters), 2 of them on this GPU in each of its 2 layers. The
 * experts' 4 weight matrices of a layer are gathered, 2 x 8,393,728 x 2
 * B / 4 = 8,393,728 B each over the 8 ranks: 16 us + 7/8 x 8,393,728 /
 * 1e10 = 7.504512e-4 s, 3.0018048e-3 s a layer; the biases persist. All
 * 8 tensors are reduced: 4,196,864 B each, 16 us + 3.672256e-4 =
 * 3.832256e-4 s, 3.0658048e-3 s a layer. (The attention's tensors are
 * the dense call's, not the experts'.)
 */
START_TEST(test_zero3_experts_per_tensor)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dense, moe;
	struct framework ds;
	double one;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML "moe:\n  experts: 4\n  top_k: 1\n");
	plan_init(&p);
	p.tp = p.pp = 1;
	p.dp = 8;
	p.global_batch = 8;
	p.seq_len = 1024;
	p.zero = 3;
	topology_plan(&p, &c, &lay);
	one = model_params_expert(&m);
	ck_assert_double_eq_tol(one, 8393728.0, 1e-6);
	framework_init_default(&ds);
	ds.gather_unit = FRAMEWORK_GATHER_TENSOR;
	ds.persistence_threshold = 1e5;
	dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dense);
	dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7 + 4 * one, 4 * one, 6e6, 2.0, 0.0, COLL_ALGO_RING, &moe);
	ck_assert_double_eq_tol(moe.z3_gather_layer_s - dense.z3_gather_layer_s, 3.0018048e-3, 1e-12);
	ck_assert_double_eq_tol(moe.z3_reduce_layer_s - dense.z3_reduce_layer_s, 3.0658048e-3, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_zero3_exposure)
{
	struct dp_comm dc = { 0 };
	struct framework fw;
	struct plan p;
	double slow, e;

	z3_exposed_fixture(&dc, &p, &fw);
	e = dp_zero3_exposed(&dc, &p, &fw, 4, 0.5e-3, 1.5e-3, 0.0, &slow);
	ck_assert_double_eq_tol(e, 6.2e-3, 1e-15);
	ck_assert_double_eq_tol(slow, 1.2e-3, 1e-15);
	fw.prefetch = FRAMEWORK_PREFETCH_POST;
	e = dp_zero3_exposed(&dc, &p, &fw, 4, 0.5e-3, 1.5e-3, 0.0, &slow);
	ck_assert_double_eq_tol(e, 7.7e-3, 1e-15);
	ck_assert_double_eq_tol(slow, 0.9e-3, 1e-15);
	p.dp_overlap = false;
	e = dp_zero3_exposed(&dc, &p, &fw, 4, 0.5e-3, 1.5e-3, 0.0, &slow);
	ck_assert_double_eq_tol(e, dc.zero3_mb_s, 1e-15);
	ck_assert_double_eq(slow, 0.0);
}
END_TEST

/* The gradient reduction's overlap: the plan's switch when given, else the
 * framework profile's grad_reduce_overlap (megatron-lm: off, Megatron's
 * --overlap-grad-reduce default; nemo: on, its recipes' overlap_grad_reduce). */
START_TEST(test_grad_reduce_overlap_switch)
{
	struct framework on, off;
	struct plan p;

	plan_init(&p);
	framework_init_default(&on);
	framework_init_default(&off);
	off.grad_reduce_overlap = false;
	ck_assert_int_eq(p.dp_overlap, -1);
	ck_assert(dp_grad_reduce_overlapped(&p, &on));
	ck_assert(!dp_grad_reduce_overlapped(&p, &off));
	p.dp_overlap = 1;
	ck_assert(dp_grad_reduce_overlapped(&p, &on));
	ck_assert(dp_grad_reduce_overlapped(&p, &off));
	p.dp_overlap = 0;
	ck_assert(!dp_grad_reduce_overlapped(&p, &on));
	ck_assert(!dp_grad_reduce_overlapped(&p, &off));
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
	dp_comm_time(&m, &p, &c, &lay, NULL, 1e8, 0.0, 0.0, 1.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.embed_sync_s, 6.7308864e-4, 1e-15);
	ck_assert_double_eq(dc.reduce_s, 0.0);
	ck_assert_double_eq(dc.bytes, 0.0);
	cluster_release(&c);
}
END_TEST

/* InternEvo's HybridZeroOptimizer (frameworks/internevo.yaml): ZeRO-1
 * with the gradients all-reduced over every DP rank and the updated
 * weights broadcast by each owner. */
START_TEST(test_zero1_internevo)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dc;
	struct framework fw;

	toy_setup(&c, &m, &p, &lay, 1, 8, 1);
	framework_init_default(&fw);
	fw.zero_grad_reduce = FRAMEWORK_ZR_ALL_REDUCE;
	fw.zero_param_sync = FRAMEWORK_ZS_BROADCAST;
	/*
	 * Gradients: the all-reduce of test_dp_allreduce, 3.50608e-2 s.
	 * Weights: the toy model has 2 x 12 + 3 = 27 tensors, more than the
	 * 8 ranks, so 8 owners broadcast 2e8 / 8 = 2.5e7 B each over the 8
	 * ranks on 2 nodes: 6 x 1 us + 2 x 10 us = 26 us, and 2.5e7 B through
	 * the node's 4 x 2.5e9 B/s = 2.5e-3 s: 2.526e-3 s; 8 of them
	 * 2.0208e-2 s (an all-gather: 1.7516e-2 s). Bytes: 2 (7/8) 2e8 +
	 * (7/8) 2e8 = 5.25e8.
	 */
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 0.0, 5e7, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.reduce_s, 3.50608e-2, 1e-15);
	ck_assert_double_eq_tol(dc.gather_s, 2.0208e-2, 1e-15);
	ck_assert_double_eq_tol(dc.bytes, 5.25e8, 1e-6);
	/*
	 * Buckets of 2.5e7 elements: 4 all-reduces of 5e7 B (over 8 x 4096 B:
	 * the plateau applies), each 60.8 us + 1.75 x 5e7 / 1e10 = 8.8108e-3 s:
	 * 3.52432e-2 s, three latencies (182.4 us) more than one all-reduce of
	 * the lot.
	 */
	fw.grad_bucket = 2.5e7;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 0.0, 5e7, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.reduce_s, 3.52432e-2, 1e-15);
	fw.grad_bucket = 0.0;
	/*
	 * zero1 = 4 (mics_group 4 with --zero 1): the group is one node's 4
	 * GPUs. The all-reduce still spans all 8 ranks; 4 broadcasts of
	 * 5e7 B inside the node: 4 x 1 us + 5e7 / 1e11 = 5.04e-4 s each,
	 * 2.016e-3 s.
	 */
	p.mics_group = 4;
	topology_plan(&p, &c, &lay);
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 0.0, 5e7, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.reduce_s, 3.50608e-2, 1e-15);
	ck_assert_double_eq_tol(dc.gather_s, 2.016e-3, 1e-15);
	/*
	 * The built-in reduce-scatter framework in the same groups: reduce-
	 * scatter in the node (3 x 1 us + 3/4 x 2e8 / 1e11 = 1.503e-3 s),
	 * then each 5e7 B shard all-reduced over the 2 replicas, one a node
	 * (2 x 10 us x 1.9 = 38 us + 5e7 / 2.5e9 = 2.0038e-2 s): 2.1541e-2 s;
	 * the all-gather in the node 1.503e-3 s.
	 */
	framework_init_default(&fw);
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 0.0, 5e7, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.reduce_s, 2.1541e-2, 1e-15);
	ck_assert_double_eq_tol(dc.gather_s, 1.503e-3, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * Megatron-Core's --fp8-param-gather (framework fp8_params): the ZeRO-1
 * all-gather after the step moves the linear weights' fp8 bytes (1 a
 * weight; NVFP4 packed, 0.5) and the ends (embedding, head) in 16 bits.
 * zero1 in groups of 4 (one node of test_zero1_internevo's toy cluster):
 * an all-gather of B bytes is 3 x 1 us + 3/4 B / 1e11 B/s. 1e8
 * parameters of which 2e7 are the ends:
 * - bf16 (or fp8 without fp8_params): 2 x 1e8 = 2e8 B, 1.503e-3 s;
 * - fp8: 2 x 2e7 + 1 x 8e7 = 1.2e8 B, 3e-6 + 9e-4 = 9.03e-4 s;
 * - fp4: 2 x 2e7 + 0.5 x 8e7 = 8e7 B, 3e-6 + 6e-4 = 6.03e-4 s.
 * The gradients' reduction is the same in all three: 2.1541e-2 s.
 */
START_TEST(test_zero1_fp8_param_gather)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dc;
	struct framework fw;

	toy_setup(&c, &m, &p, &lay, 1, 8, 1);
	p.mics_group = 4;
	topology_plan(&p, &c, &lay);
	framework_init_default(&fw);
	fw.fp8_params = true;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 0.0, 5e7, 2.0, 2e7, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.gather_s, 1.503e-3, 1e-15);
	p.precision = PLAN_PRECISION_FP8;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 0.0, 5e7, 2.0, 2e7, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.gather_s, 9.03e-4, 1e-15);
	ck_assert_double_eq_tol(dc.reduce_s, 2.1541e-2, 1e-15);
	p.precision = PLAN_PRECISION_FP4;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 0.0, 5e7, 2.0, 2e7, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.gather_s, 6.03e-4, 1e-15);
	fw.fp8_params = false;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 0.0, 5e7, 2.0, 2e7, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.gather_s, 1.503e-3, 1e-15);
	cluster_release(&c);
}
END_TEST

/* dp_comm_time_ends: the routed experts of layers in bf16 (plan
 * bf16_first_layers) are gathered in the framework's 2 bytes under
 * fp8_params, the others in 1. A shard of experts alone (1e8 of 1e8):
 * all of them in bf16 gathers as fp8_params off does; none as
 * dp_comm_time does; half of them in between. */
START_TEST(test_zero1_fp8_expert_ends)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm off, low, all, none, half;
	struct framework fw;

	toy_setup(&c, &m, &p, &lay, 1, 8, 1);
	framework_init_default(&fw);
	p.precision = PLAN_PRECISION_FP8;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 1e8, 5e7, 2.0, 0.0, COLL_ALGO_RING, &off);
	fw.fp8_params = true;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 1e8, 5e7, 2.0, 0.0, COLL_ALGO_RING, &low);
	dp_comm_time_ends(&m, &p, &c, &lay, &fw, 1e8, 1e8, 5e7, 2.0, 0.0, 1e8, COLL_ALGO_RING, &all);
	dp_comm_time_ends(&m, &p, &c, &lay, &fw, 1e8, 1e8, 5e7, 2.0, 0.0, 0.0, COLL_ALGO_RING, &none);
	dp_comm_time_ends(&m, &p, &c, &lay, &fw, 1e8, 1e8, 5e7, 2.0, 0.0, 5e7, COLL_ALGO_RING, &half);
	ck_assert(low.gather_s < off.gather_s);
	ck_assert_double_eq_tol(all.gather_s, off.gather_s, 1e-15);
	ck_assert_double_eq_tol(none.gather_s, low.gather_s, 1e-15);
	ck_assert(half.gather_s > low.gather_s && half.gather_s < off.gather_s);
	ck_assert_double_eq_tol(all.reduce_s, low.reduce_s, 1e-15);
	cluster_release(&c);
}
END_TEST

/* Buckets of a fraction f of the gradients (InternEvo's
 * reduce_bucket_size): R 1 s, backward 2 s, f 0.1: the reductions start
 * 0.2 s into the backward, a 1.8 s window; the last bucket's 0.1 s
 * waits. f above 1 is one bucket, reduced after the backward. */
START_TEST(test_bucket_tail)
{
	double window;

	ck_assert_double_eq_tol(dp_bucket_tail(1.0, 2.0, 0.1, &window), 0.1, 1e-15);
	ck_assert_double_eq_tol(window, 1.8, 1e-15);
	ck_assert_double_eq_tol(dp_bucket_tail(1.0, 2.0, 2.0, &window), 1.0, 1e-15);
	ck_assert_double_eq(window, 0.0);
}
END_TEST

/*
 * The reduction's exposed part and the slowdown of the backward that
 * hides the rest (R 1 s, the last bucket 0.1 s, slowdown 1.15):
 *   window 1.8 s: E = max(0.1, -0.8) = 0.1, hidden 0.9: 0.1 + 0.15 x 0.9
 *   = 0.235 s (charged on min(R, window) = 1 it was 0.25);
 *   window 0.95 s: E = max(0.1, 0.05) = 0.1: still 0.235 s (it was
 *   0.1 + 0.15 x 0.95 = 0.2425: less for a shorter backward);
 *   window 0.5 s: E = 0.5, hidden 0.5: 0.5 + 0.075 = 0.575 s;
 *   no bucket, window 0: E = R = 1 s, nothing hidden: 1 s.
 */
START_TEST(test_reduce_exposed)
{
	ck_assert_double_eq_tol(dp_reduce_exposed(1.0, 1.8, 0.1, 1.15), 0.235, 1e-15);
	ck_assert_double_eq_tol(dp_reduce_exposed(1.0, 0.95, 0.1, 1.15), 0.235, 1e-15);
	ck_assert_double_eq_tol(dp_reduce_exposed(1.0, 0.5, 0.1, 1.15), 0.575, 1e-15);
	ck_assert_double_eq_tol(dp_reduce_exposed(1.0, 0.0, 0.0, 1.15), 1.0, 1e-15);
}
END_TEST

/* The estimate of @p under the bundled @model, @cluster and @framework,
 * the framework's kernels slower (as test-property.c's
 * test_slower_kernels_never_faster makes them) where @slow, 20 us more a
 * collective where @lat. */
static double
window_case(const char *model, const char *cluster, const char *framework, const struct plan *p, bool slow,
	    bool lat)
{
	struct model m;
	struct cluster c, cl;
	struct framework fw;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, &fw };
	struct estimate e;
	struct plan_error err;

	test_setup_paths();
	test_load_profile(PROFILE_MODEL, model, &m);
	test_load_profile(PROFILE_CLUSTER, cluster, &c);
	test_load_profile(PROFILE_FRAMEWORK, framework, &fw);
	fw.elementwise = slow ? FRAMEWORK_EW_EAGER : FRAMEWORK_EW_FUSED;
	fw.attention_kernel = slow ? FRAMEWORK_ATTN_FA2 : FRAMEWORK_ATTN_PROFILE;
	fw.selective_recompute = slow ? FRAMEWORK_SAC_OP : FRAMEWORK_SAC_ATTENTION;
	cl = c;
	if (lat)
		cl.intra.collective_latency_s += 2e-5;
	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&m, &cl, p, &opt, &e, &err), "%s", err.message);
	cluster_release(&c);
	return e.iteration_time_s;
}

/*
 * The DP window is the backward's time, its waits included (estimate.c's
 * stage_tail), so that neither a slower kernel nor a slower collective
 * shortens the iteration (issue 25, test-property.c's seeds 20, 34, 134).
 * GPT-3 175B on DGX H100 under Megatron-LM, tp 2, cp 8 (ring), dp 11,
 * micro-batch 8, 176 sequences of 256, ZeRO 2, overlapped: FA2 and eager
 * element-wise kernels add compute and hide more of the ring's P2P
 * (cp_comm 0.598 -> 0.558 s); with a window of backward compute alone the
 * reduction hid more too and the iteration fell, 4.28001 -> 4.27699 s.
 * Llama 2 7B on MosaicML's A100 40 GB under PyTorch FSDP (ZeRO 0), tp 4,
 * cp 4 (all-to-all), dp 7, selective recomputation: host-bound, so 20 us
 * more a collective leaves the micro-batch as long (the launches' wait
 * shrinks as much); a window with the all-to-alls' waits but not the
 * launches' grew, and the iteration fell, 0.37536 -> 0.37434 s.
 * Gemma 2 9B on DGX H100 under FSDP2, tp 8, dp 12 in MiCS groups of 4
 * (ZeRO-3), full recomputation: slower kernels hide more of the
 * layer-by-layer gathers and reduce-scatters, and a window of backward
 * compute alone hid more of MiCS's all-reduce across the replicas too:
 * 0.204685 -> 0.204472 s (test-property.c's seed 134).
 * The same for ZeRO-3's own per-layer windows (estimate.c's stage_z3_s):
 * GPT-J 6B on DGX H100 under llm-foundry, tp 16, cp 8 (ring), dp 6,
 * micro-batch 4, 144 sequences of 2048: slower kernels hid more of the
 * ring (cp_comm 0.080 -> 0.038 s) and, with a layer's compute alone as
 * the gathers' window, more of the gathers too: 0.709367 -> 0.702556 s
 * (seed 261).
 */
START_TEST(test_window_monotone)
{
	struct plan p;

	plan_init(&p);
	p.tp = 2;
	p.pp = 1;
	p.cp = 8;
	p.cp_method = PLAN_CP_RING;
	p.dp = 11;
	p.micro_batch = 8;
	p.global_batch = 176;
	p.seq_len = 256;
	p.recompute = PLAN_RECOMPUTE_NONE;
	p.sequence_parallel = true;
	p.flash_attention = true;
	p.zero = 2;
	p.dp_overlap = 1;
	ck_assert(window_case("gpt3-175b", "dgx-h100", "megatron-lm", &p, true, false) >=
		  window_case("gpt3-175b", "dgx-h100", "megatron-lm", &p, false, false));
	p.tp = 4;
	p.cp = 4;
	p.cp_method = PLAN_CP_ALLTOALL;
	p.dp = 7;
	p.micro_batch = 1;
	p.global_batch = 28;
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	p.zero = 0;
	ck_assert(window_case("llama2-7b", "mosaicml-a100-40gb", "pytorch-fsdp", &p, true, true) >=
		  window_case("llama2-7b", "mosaicml-a100-40gb", "pytorch-fsdp", &p, true, false));
	p.tp = 8;
	p.cp = 1;
	p.dp = 12;
	p.global_batch = 12;
	p.recompute = PLAN_RECOMPUTE_FULL;
	p.sequence_parallel = false;
	p.zero = 3;
	p.mics_group = 4;
	ck_assert(window_case("gemma-2-9b", "dgx-h100", "pytorch-fsdp2", &p, true, false) >=
		  window_case("gemma-2-9b", "dgx-h100", "pytorch-fsdp2", &p, false, false));
	p.tp = 16;
	p.cp = 8;
	p.cp_method = PLAN_CP_RING;
	p.dp = 6;
	p.micro_batch = 4;
	p.global_batch = 144;
	p.seq_len = 2048;
	p.recompute = PLAN_RECOMPUTE_NONE;
	p.mics_group = 0;
	ck_assert(window_case("gpt-j-6b", "dgx-h100", "llm-foundry", &p, true, false) >=
		  window_case("gpt-j-6b", "dgx-h100", "llm-foundry", &p, false, false));
}
END_TEST

/*
 * ZeRO-3 reduction buckets (DeepSpeed's stage 3 reduce_bucket_size, 5e8
 * elements: z3_tail_layers()). On the toy plan of test_zero3 (2 layers of
 * 6e6 parameters): no bucket leaves 1 layer as the tail; a bucket of 9e6
 * elements holds 9e6 / 6e6 = 1.5 layers; one of 5e8 would hold 83 layers,
 * capped at the 2 there are.
 * dp_zero3_exposed with 4 layers, gather and reduce-scatter 1 ms each a
 * layer, the root unit 0.2 ms, forward 0.5 ms and backward 1.5 ms a
 * layer, slowdown 1.2, and a last bucket of 3 layers:
 *   Forward as in test_zero3_exposure: 1 + 3 x 0.5 = 2.5 ms exposed,
 *   3 x 0.5 = 1.5 ms overlapped.
 *   Backward: the first gather (1 ms) and the last bucket's 3
 *   reduce-scatters (3 ms) wait; the one other layer's reduce-scatter is
 *   spread over the 3 layers after the first, 1/3 ms each, so each moves
 *   1 + 1/3 ms against 1.5 ms of compute: nothing more waits, and 3 x
 *   4/3 = 4 ms is overlapped.
 *   Exposed 0.2 + 2.5 + 4 = 6.7 ms (6.2 ms with the last layer as the
 *   tail); slowdown 0.2 x (1.5 + 4) = 1.1 ms.
 */
START_TEST(test_zero3_reduce_bucket_tail)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dc = { 0 };
	struct framework fw;
	double slow, e;

	toy_setup(&c, &m, &p, &lay, 1, 8, 3);
	framework_init_default(&fw);
	dp_comm_time(&m, &p, &c, &lay, &fw, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.z3_tail_layers, 1.0, 1e-15);
	fw.grad_bucket = 9e6;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.z3_tail_layers, 1.5, 1e-15);
	fw.grad_bucket = 5e8;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.z3_tail_layers, 2.0, 1e-15);
	cluster_release(&c);

	memset(&dc, 0, sizeof(dc));
	z3_exposed_fixture(&dc, &p, &fw);
	dc.z3_tail_layers = 3.0;
	e = dp_zero3_exposed(&dc, &p, &fw, 4, 0.5e-3, 1.5e-3, 0.0, &slow);
	ck_assert_double_eq_tol(e, 6.7e-3, 1e-15);
	ck_assert_double_eq_tol(slow, 1.1e-3, 1e-15);
	/* A tail of one layer is the layer-by-layer model of test_zero3_exposure. */
	dc.z3_tail_layers = 1.0;
	e = dp_zero3_exposed(&dc, &p, &fw, 4, 0.5e-3, 1.5e-3, 0.0, &slow);
	ck_assert_double_eq_tol(e, 6.2e-3, 1e-15);
	ck_assert_double_eq_tol(slow, 1.2e-3, 1e-15);
}
END_TEST

/*
 * frameworks/deepspeed-0.5.yaml (DeepSpeed v0.5.6-v0.5.10) is
 * deepspeed-2021 with the gather's costs of PR #1188 and #1548 (v0.5.10's
 * partition_parameters.py): one _all_gather_base into a torch.empty flat
 * tensor, so no per-rank host loop (10 us -> 0), one pass over the gathered
 * tensor left of three (the debug norm of fetch_sub_module; the zero fill
 * and the copy out are gone), and a fixed cost of 0.28 ms for 0.42 ms (the
 * list all-gather's launch replaced by one). Everything else, per-tensor
 * gathers without prefetch included, is the same code.
 */
/*
 * plan-cli zero3: DeepSpeed's 2021 optimizer step gathers the persistent
 * tensors again (stage3.py _post_step, partition_parameters.py
 * _allgather_params): one list all_gather of them all, then a copy a
 * chunk a tensor. The toy GPT (h 1024, a 8, ffn 4096, biases, two
 * LayerNorms) over 8 ranks: the QKV bias of 3,072 elements in chunks of
 * 384, the 1,024-element biases and norm tensors in chunks of 128, the
 * fc1 bias of 4,096 in chunks of 512: 8 chunks each, 8 tensors, 64 a
 * layer; 2 layers and the final norm's 2 tensors: 144 copies at 10 us,
 * 1.44e-3 s. The collective: 2 x 13 h + 2 h = 28,672 elements, 57,344
 * B: 16 us + 7/8 x 57,344 / 1e10 = 2.10176e-5 s, and as a gather
 * 4.2e-4 + 8 x 1e-5 + 3 x 57,344 / 5e11 = 5.00344064e-4: 1.961361664e-3
 * s in gather_s, once an iteration, not in the micro-batch's collectives.
 * Chunks when the ranks outnumber the elements: at 2,048 ranks the
 * 1,024-element tensors are 1,024 chunks of 1, the QKV bias 1,536 of 2,
 * the fc1 bias 2,048 of 2: 1,536 + 6 x 1,024 + 2,048 = 9,728 a layer.
 * GPT-3 (h 12,288) over 2,240 ranks: chunks of 17 of the QKV bias's
 * 36,864, 2,169; of 6 of 12,288, 2,048; of 22 of fc1's 49,152, 2,235:
 * 2,169 + 6 x 2,048 + 2,235 = 16,692.
 */
START_TEST(test_zero3_persist_gather)
{
	struct cluster c;
	struct model m, gpt3;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dc, none;
	struct framework ds;

	z3_hbm_setup(&c, &m, &p, &lay);
	framework_init_default(&ds);
	ds.gather_unit = FRAMEWORK_GATHER_TENSOR;
	ds.persistence_threshold = 1e5;
	ds.gather_overhead_s = 4.2e-4;
	ds.gather_rank_overhead_s = 1e-5;
	ds.gather_copy_passes = 3.0;
	dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &none);
	ck_assert_double_eq(none.gather_s, 0.0);
	ck_assert_double_eq_tol(dp_zero3_persist_copies(&m, 8.0), 64.0, 1e-12);
	ds.persist_gather_copy_s = 1e-5;
	dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.gather_s, 1.961361664e-3, 1e-12);
	ck_assert_double_eq_tol(dc.zero3_mb_s, none.zero3_mb_s, 1e-15);
	ck_assert_double_eq_tol(dp_zero3_persist_copies(&m, 2048.0), 9728.0, 1e-12);
	test_load_model(&gpt3, GPT3_YAML);
	ck_assert_double_eq_tol(dp_zero3_persist_copies(&gpt3, 2240.0), 16692.0, 1e-12);
	/* Without the persistence threshold nothing persists: no gather. */
	ds.persistence_threshold = 0.0;
	dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq(dc.gather_s, 0.0);
	cluster_release(&c);
}
END_TEST

START_TEST(test_zero3_deepspeed05)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm d21, d05, d21r, d05r;
	struct framework ds21, ds05, same;

	load_frameworks("deepspeed-2021", &ds21, "deepspeed-0.5", &ds05, NULL, NULL);
	ck_assert_str_eq(ds05.name, "deepspeed-0.5");
	ck_assert_double_eq_tol(ds05.gather_overhead_s, 2.8e-4, 1e-15);
	ck_assert_double_eq(ds05.gather_rank_overhead_s, 0.0);
	ck_assert_double_eq(ds05.gather_copy_passes, 1.0);
	ck_assert_double_eq_tol(ds21.gather_overhead_s, 4.2e-4, 1e-15);
	ck_assert_double_eq_tol(ds21.gather_rank_overhead_s, 1e-5, 1e-15);
	ck_assert_double_eq(ds21.gather_copy_passes, 3.0);
	/* Those three keys (and the names) apart, the two profiles are one, */
	same = ds05;
	memcpy(same.name, ds21.name, sizeof(same.name));
	memcpy(same.description, ds21.description, sizeof(same.description));
	same.gather_overhead_s = ds21.gather_overhead_s;
	same.gather_rank_overhead_s = ds21.gather_rank_overhead_s;
	same.gather_copy_passes = ds21.gather_copy_passes;
	/* and the step's gather of the persistent tensors, which v0.5.10
	 * does another way (one _all_gather_base a tensor), not priced. */
	ck_assert_double_eq(ds05.persist_gather_copy_s, 0.0);
	same.persist_gather_copy_s = ds21.persist_gather_copy_s;
	/* and the training script around them (plan-cli hostsync2): the
	 * ZeRO-3 epilogue's sync is both versions'; deepspeed-2021 adds the
	 * 15 syncs and the loss's all-reduce of DeepSpeedExamples' Megatron
	 * v1.1.5 script, MiCS's baseline script is not published. */
	ck_assert_double_eq(ds05.microbatch_syncs, 1.0);
	ck_assert_double_eq(ds21.microbatch_syncs, 16.0);
	same.microbatch_syncs = ds21.microbatch_syncs;
	same.loss_allreduces = ds21.loss_allreduces;
	/* and the IPG buffers (plan-cli reviewmem): contiguous_gradients
	 * and stage 3's overlap_comm on by default from v0.5, off in
	 * v0.3.13's constants.py: two buffers against none. */
	ck_assert_double_eq(ds05.grad_bucket_buffers, 2.0);
	ck_assert_double_eq(ds21.grad_bucket_buffers, 0.0);
	same.grad_bucket_buffers = ds21.grad_bucket_buffers;
	ck_assert_int_eq(memcmp(&same, &ds21, sizeof(same)), 0);

	/*
	 * The toy GPT of test_zero3 on 8 ranks (2 layers of 6e6 parameters,
	 * 1e6 in the embedding), HBM 1e12 B/s at 0.5. Both persist the
	 * biases and norms (1e5 elements), so a layer is gathered as 4
	 * weights of 3e6 B: 16 us + 7/8 x 3e6 / 1e10 = 2.785e-4 s each.
	 *   deepspeed-2021: + 4.2e-4 + 8 x 1e-5 + 3 x 3e6 / 5e11 = 5.18e-4,
	 *     a layer's gather 4 x 7.965e-4 = 3.186e-3 s;
	 *   deepspeed-0.5: + 2.8e-4 + 0 + 1 x 3e6 / 5e11 = 2.86e-4,
	 *     a layer's gather 4 x 5.645e-4 = 2.258e-3 s.
	 * The embedding, one tensor of 2e6 B (collective 1.91e-4 s):
	 * 4.2e-4 + 8e-5 + 1.2e-5 = 5.12e-4 against 2.8e-4 + 4e-6 = 2.84e-4.
	 * The reduce-scatters are the same. Per micro-batch, forward and
	 * backward gathers of 2 layers: 2 x 2 x (3.186e-3 - 2.258e-3) +
	 * (5.12e-4 - 2.84e-4) = 3.712e-3 + 2.28e-4 = 3.940e-3 s less; with
	 * full recomputation (gathered once more) 2 x 3 x 9.28e-4 + 2.28e-4
	 * = 5.796e-3 s less.
	 */
	z3_hbm_setup(&c, &m, &p, &lay);
	dp_comm_time(&m, &p, &c, &lay, &ds21, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &d21);
	dp_comm_time(&m, &p, &c, &lay, &ds05, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &d05);
	ck_assert_double_eq_tol(d21.z3_gather_layer_s, 3.186e-3, 1e-12);
	ck_assert_double_eq_tol(d05.z3_gather_layer_s, 2.258e-3, 1e-12);
	ck_assert_double_eq_tol(d05.z3_reduce_layer_s, d21.z3_reduce_layer_s, 1e-15);
	ck_assert_double_eq_tol(d21.zero3_mb_s - d05.zero3_mb_s, 3.940e-3, 1e-12);
	p.recompute = PLAN_RECOMPUTE_FULL;
	dp_comm_time(&m, &p, &c, &lay, &ds21, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &d21r);
	dp_comm_time(&m, &p, &c, &lay, &ds05, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &d05r);
	ck_assert_double_eq_tol(d21r.zero3_mb_s - d05r.zero3_mb_s, 5.796e-3, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli simumoe: with experts, Megatron-Core from core_v0.9.0 steps a
 * dense and an expert distributed optimizer (ChainedOptimizer), each
 * all-gathering every bucket of the model after its step
 * (distrib_optimizer.py step_with_ready_grads -> DDP start_param_sync):
 * the weights are gathered twice (moe_param_gathers 2; megatron-lm.yaml).
 * Toy cluster, ZeRO-1, dp 8 (ep 1: the expert-DP group is the DP group),
 * 1e8 parameters of which 5e7 expert, 16-bit: each half reduce-scatters
 * and all-gathers 1e8 B in 7 steps, 1 across nodes: 16 us + 7/8 x 1e8 /
 * 1e10 = 8.766e-3 s. Reductions 2 x 8.766e-3 = 1.7532e-2 s; gathers the
 * same once, 3.5064e-2 s twice; bytes 7/8 x 1e8 x 4 = 3.5e8 once,
 * 1.75e8 more for the second gathers: 5.25e8. Without experts one gather
 * whatever the key: test_zero12's 1.7516e-2 s.
 */
START_TEST(test_moe_param_gathers)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm dc;
	struct framework fw, mg;

	load_frameworks("megatron-lm", &mg, NULL, NULL, NULL, NULL);
	ck_assert_double_eq(mg.moe_param_gathers, 2.0);
	framework_init_default(&fw);
	ck_assert_double_eq(fw.moe_param_gathers, 1.0);
	toy_setup(&c, &m, &p, &lay, 1, 8, 1);
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 5e7, 0.0, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.reduce_s, 1.7532e-2, 1e-15);
	ck_assert_double_eq_tol(dc.gather_s, 1.7532e-2, 1e-15);
	ck_assert_double_eq_tol(dc.bytes, 3.5e8, 1e-6);
	fw.moe_param_gathers = 2.0;
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 5e7, 0.0, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.reduce_s, 1.7532e-2, 1e-15);
	ck_assert_double_eq_tol(dc.gather_s, 3.5064e-2, 1e-15);
	ck_assert_double_eq_tol(dc.bytes, 5.25e8, 1e-6);
	dp_comm_time(&m, &p, &c, &lay, &fw, 1e8, 0.0, 0.0, 2.0, 0.0, COLL_ALGO_RING, &dc);
	ck_assert_double_eq_tol(dc.gather_s, 1.7516e-2, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli simumoe: Megatron-Core's step with ZeRO 0-2 moves 34 bytes per
 * owned parameter (FusedAdam on the fp32 main gradient 4 + 12 + 12, the
 * copy of the master into the bf16 weight 4 + 2) where the generic step
 * counts 28: step_bytes 6. DeepSeek-V2 cut to 4 layers, ep 8, dp 8: the
 * GPU owns 1.98e9 / 8 dense and its 1.415e9 expert parameters (the
 * expert-DP group is itself), 1.6625e9: 6 x 1.6625e9 = 9.975e9 B. Under
 * ZeRO-3 the framework's zero3_step_bytes counts the step instead; nemo
 * (Megatron-Core's optimizer) alike, DeepSpeed none.
 */
START_TEST(test_megatron_step_bytes)
{
	struct plan p;
	struct framework mg, nemo, ds;

	load_frameworks("megatron-lm", &mg, "nemo", &nemo, "deepspeed", &ds);
	ck_assert_double_eq(mg.step_bytes, 4.0 + 12.0 + 12.0 + 4.0 + 2.0 - 28.0);
	ck_assert_double_eq(nemo.step_bytes, 6.0);
	ck_assert_double_eq(ds.step_bytes, 0.0);
	dp8_plan(&p, 1);
	ck_assert_double_eq_tol(dp_step_bytes(&p, &mg, 1.6625e9), 9.975e9, 1.0);
	p.zero = 0;
	ck_assert_double_eq_tol(dp_step_bytes(&p, &mg, 1.6625e9), 9.975e9, 1.0);
	ck_assert_double_eq(dp_step_bytes(&p, &ds, 1.6625e9), 0.0);
	ck_assert_double_eq(dp_step_bytes(&p, NULL, 1.6625e9), 0.0);
	p.zero = 3;
	ck_assert_double_eq(dp_step_bytes(&p, &mg, 1.6625e9), 0.0);
}
END_TEST

/*
 * plan-cli simumoe: Megatron-Core's DDP before each bucket's reduction
 * (param_and_grad_buffer.py start_grad_sync, core_v0.6.0 to
 * core_r0.14.0): the NaN check's norm reads the fp32 gradient (4 bytes an
 * element) and the scaling by 1/(dp x cp) reads and writes it (8).
 * DeepSeek-V2 cut to 4 layers on 8 B200s, ep 8, dp 8 (SimuMax's row): the
 * GPU's gradient buffer is its 1.98e9 dense parameters and its 20 of 160
 * experts' 1.415e9, 3.395e9 elements; (4 + 8) x 3.395e9 = 4.074e10 B; at
 * 1e12 B/s x 0.5, 0.08148 s. With dp x cp = 1 the factor is 1 and only
 * the norm runs: 4 x 3.395e9 = 1.358e10 B. From ZeRO-2 on (not
 * Megatron's DDP) and for profiles without the keys: nothing. NeMo's
 * recipes average in the collective: the norm alone.
 */
START_TEST(test_megatron_grad_prereduce)
{
	struct plan p;
	struct framework mg, nemo, ds;

	load_frameworks("megatron-lm", &mg, "nemo", &nemo, "deepspeed", &ds);
	ck_assert_double_eq(mg.grad_check_bytes, 4.0);
	ck_assert_double_eq(mg.grad_scale_bytes, 8.0);
	ck_assert_double_eq(nemo.grad_check_bytes, 4.0);
	ck_assert_double_eq(nemo.grad_scale_bytes, 0.0);
	ck_assert_double_eq(ds.grad_check_bytes, 0.0);
	ck_assert_double_eq(ds.grad_scale_bytes, 0.0);

	dp8_plan(&p, 1);
	ck_assert_double_eq_tol(dp_grad_prereduce_bytes(&p, &mg, 3.395e9), 4.074e10, 1.0);
	ck_assert_double_eq_tol(hbm_time(dp_grad_prereduce_bytes(&p, &mg, 3.395e9)), 0.08148, 1e-9);
	ck_assert_double_eq_tol(dp_grad_prereduce_bytes(&p, &nemo, 3.395e9), 1.358e10, 1.0);
	ck_assert_double_eq(dp_grad_prereduce_bytes(&p, &ds, 3.395e9), 0.0);
	ck_assert_double_eq(dp_grad_prereduce_bytes(&p, NULL, 3.395e9), 0.0);
	p.zero = 0;
	ck_assert_double_eq_tol(dp_grad_prereduce_bytes(&p, &mg, 3.395e9), 4.074e10, 1.0);
	p.dp = 1;
	ck_assert_double_eq_tol(dp_grad_prereduce_bytes(&p, &mg, 3.395e9), 1.358e10, 1.0);
	p.cp = 2;
	ck_assert_double_eq_tol(dp_grad_prereduce_bytes(&p, &mg, 3.395e9), 4.074e10, 1.0);
	p.zero = 2;
	ck_assert_double_eq(dp_grad_prereduce_bytes(&p, &mg, 3.395e9), 0.0);
}
END_TEST

/*
 * plan-cli review6: core_v0.6.0's NaN check is `assert not norm.isnan()`
 * per bucket (param_and_grad_buffer.py Bucket.start_grad_sync), a host
 * synchronisation each; DistributedDataParallel keeps a dense and an
 * expert buffer per model chunk, one bucket each without
 * --overlap-grad-reduce. DeepSeek-V2 cut to 4 layers as above (1.98e9
 * dense, 1.415e9 expert elements): 2 syncs; a dense model 1; vpp 2: a
 * buffer pair a chunk, 4. With the reduction overlapped and 4e7-element
 * buckets: ceil(1.98e9 / 4e7) = ceil(49.5) = 50 and ceil(1.415e9 / 4e7)
 * = ceil(35.375) = 36, 86; with vpp 2 each chunk's half, ceil(24.75) +
 * ceil(17.6875) = 25 + 18 = 43 a chunk, 86. From ZeRO-2 on, or without
 * the key (megatron-lm: not set), none. In an estimate each exposes one
 * host launch: the toy GPT on 8 toy GPUs at ZeRO 1 with a 12 us launch,
 * one dense buffer: the launch line and the iteration 12 us longer.
 */
START_TEST(test_megatron_grad_check_syncs)
{
	struct plan p;
	struct framework mc, mg, fw;
	struct cluster c;
	struct model m;
	struct estimate with, without;
	struct plan_error err;
	struct estimate_options o = { .framework = &fw };

	load_frameworks("megatron-core-0.6", &mc, "megatron-lm", &mg, NULL, NULL);
	ck_assert_double_eq(mc.grad_check_syncs, 1.0);
	ck_assert_double_eq(mg.grad_check_syncs, 0.0);
	dp8_plan(&p, 1);
	ck_assert_double_eq(dp_grad_check_syncs(&p, &mc, 1.98e9, 1.415e9), 2.0);
	ck_assert_double_eq(dp_grad_check_syncs(&p, &mc, 1.98e9, 0.0), 1.0);
	ck_assert_double_eq(dp_grad_check_syncs(&p, &mg, 1.98e9, 1.415e9), 0.0);
	ck_assert_double_eq(dp_grad_check_syncs(&p, NULL, 1.98e9, 1.415e9), 0.0);
	p.vpp = 2;
	ck_assert_double_eq(dp_grad_check_syncs(&p, &mc, 1.98e9, 1.415e9), 4.0);
	p.vpp = 1;
	p.dp_overlap = 1;
	mc.grad_bucket = 4e7;
	ck_assert_double_eq(dp_grad_check_syncs(&p, &mc, 1.98e9, 1.415e9), 86.0);
	p.vpp = 2;
	ck_assert_double_eq(dp_grad_check_syncs(&p, &mc, 1.98e9, 1.415e9), 86.0);
	p.zero = 2;
	ck_assert_double_eq(dp_grad_check_syncs(&p, &mc, 1.98e9, 1.415e9), 0.0);

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML);
	dp8_plan(&p, 1);
	p.tp = p.pp = 1;
	p.global_batch = 8;
	p.seq_len = 1024;
	test_load_framework(&fw, "name: a\nhost_launch_overhead: 12 us\n");
	ck_assert_msg(estimate_plan(&m, &c, &p, &o, &without, &err), "%s", err.message);
	test_load_framework(&fw, "name: a\nhost_launch_overhead: 12 us\ngrad_check_syncs: 1\n");
	ck_assert_msg(estimate_plan(&m, &c, &p, &o, &with, &err), "%s", err.message);
	ck_assert_double_eq_tol(with.breakdown.launch - without.breakdown.launch, 12e-6, 1e-12);
	ck_assert_double_eq_tol(with.iteration_time_s - without.iteration_time_s, 12e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * InternEvo (frameworks/internevo.yaml, InternLM@c18bec9): host_syncs 21
 * an iteration (12 timer synchronisations, 4 blocking batch copies, 5 in
 * the step: the synchronize after the last bucket, the overflow flag's
 * .item(), compute_norm's torch.cuda.IntTensor([0]) and total_norm
 * .item(), the loss scale's .item(); 12 + 4 + 5 = 21, at the profile's
 * 10 us a launch 210 us an iteration; plan-cli review11 added the
 * IntTensor) and grad_check_syncs 1, _reduce_and_copy's synchronize per
 * bucket of 512 Mi elements with the reduction overlapped. InternLM-7B's
 * 7.32e9 gradients at ZeRO 1, overlapped: ceil(7.32e9 / 536870912) =
 * ceil(13.63) = 14 syncs; without the overlap (--no-dp-overlap) the
 * flat buffer is one bucket: 1.
 */
START_TEST(test_internevo_syncs)
{
	struct plan p;
	struct framework ie;

	load_frameworks("internevo", &ie, NULL, NULL, NULL, NULL);
	ck_assert_double_eq(ie.host_syncs, 21.0);
	ck_assert_double_eq_tol(ie.host_syncs * ie.host_launch_s, 210e-6, 1e-12);
	ck_assert_double_eq(ie.grad_check_syncs, 1.0);
	ck_assert_double_eq(ie.grad_bucket, 536870912.0);
	dp8_plan(&p, 1);
	p.dp_overlap = 1;
	ck_assert_double_eq(dp_grad_check_syncs(&p, &ie, 7.32e9, 0.0), 14.0);
	p.dp_overlap = 0;
	ck_assert_double_eq(dp_grad_check_syncs(&p, &ie, 7.32e9, 0.0), 1.0);
}
END_TEST

/*
 * plan-cli dsz3host: DeepSpeed's ZeRO-3 step (stage3.py step(), v0.11.1,
 * bf16, no offload), per element a GPU owns: the overflow check
 * isinf(buf).any() and isnan(buf).any() over the bf16 buffer
 * 2 x (2 + 1 + 1) = 8 B; the norm g.double() (2 + 8) and .norm(2) (8)
 * = 18 B; flatten (2 + 2) and .to(fp32) (2 + 4) = 10 B; unscale mul_
 * (4 + 4) = 8 B; FusedAdam on fp32 weights and gradient 4 x 4 + 3 x 4
 * = 28 B; the bf16 copy (4 + 2) = 6 B: 78 B, less the 36 that
 * compute_optimizer_time() prices (28 + 4 + 4) = 42 B.
 * Llama 2 7B on 8 GPUs (FlagPerf's case): 6.738e9 / 8 = 8.4225e8 owned,
 * 42 x 8.4225e8 = 3.53745e10 B; at 1e12 B/s x 0.5, 0.070749 s.
 * Its tensors (Hugging Face LlamaForCausalLM): 32 layers x (q, k, v, o,
 * gate, up, down, two norms) + embedding, final norm, lm_head = 291;
 * the norm's two launches each: 582.
 */
START_TEST(test_zero3_deepspeed_step)
{
	struct plan p;
	struct framework ds, ds05, ds21;

	load_frameworks("deepspeed", &ds, "deepspeed-0.5", &ds05, "deepspeed-2021", &ds21);
	ck_assert_double_eq(ds.zero3_step_bytes, 8.0 + 18.0 + 10.0 + 8.0 + 28.0 + 6.0 - 36.0);
	ck_assert_double_eq(ds.zero3_tensor_launches, 2.0);
	/* The overflow check and the norm; the backward epilogue's sync is
	 * per micro-batch (plan-cli hostsync2: microbatch_syncs). */
	ck_assert_double_eq(ds.host_syncs, 2.0);
	/* The older profiles keep the generic step (their code differs). */
	ck_assert_double_eq(ds05.zero3_step_bytes, 0.0);
	ck_assert_double_eq(ds21.zero3_step_bytes, 0.0);
	ck_assert_double_eq(ds05.zero3_tensor_launches, 0.0);
	ck_assert_double_eq(ds21.zero3_tensor_launches, 0.0);

	dp8_plan(&p, 3);
	ck_assert_double_eq_tol(dp_zero3_step_bytes(&p, &ds, 6.738e9 / 8.0), 3.53745e10, 1.0);
	ck_assert_double_eq(dp_zero3_step_launches(&p, &ds, 291.0), 582.0);
	ck_assert_double_eq_tol(hbm_time(dp_zero3_step_bytes(&p, &ds, 6.738e9 / 8.0)), 0.070749, 1e-6);
	/* Below stage 3 (stage_1_and_2.py is other code) and for profiles
	 * without the keys: nothing. */
	p.zero = 2;
	ck_assert_double_eq(dp_zero3_step_bytes(&p, &ds, 6.738e9 / 8.0), 0.0);
	ck_assert_double_eq(dp_zero3_step_launches(&p, &ds, 291.0), 0.0);
	p.zero = 3;
	ck_assert_double_eq(dp_zero3_step_bytes(&p, &ds05, 6.738e9 / 8.0), 0.0);
	ck_assert_double_eq(dp_zero3_step_launches(&p, &ds21, 291.0), 0.0);
}
END_TEST

/*
 * plan-cli dshost: the current DeepSpeed's stage 3 reduce-scatters each
 * bucket with reduce_scatter_coalesced (comm/coalesced_collectives.py,
 * v0.6.0 to v0.16.4), which first divides the whole gradient by the
 * group size in place (div_(world_sz): a read and a write),
 * reduce_copy_passes 2 in frameworks/deepspeed.yaml. The toy GPT of
 * test_zero3 on 8 ranks (2 layers of 6e6 parameters, 1e6 in the rest),
 * HBM 1e12 B/s at 0.5, gathers and reductions of the layer in 2 bytes:
 * a layer's reduction moves 2 x 2 x 6e6 / 5e11 = 4.8e-5 s more, the
 * rest's 2 x 2 x 1e6 / 5e11 = 8e-6 s more; a micro-batch 2 x 4.8e-5 +
 * 8e-6 = 1.04e-4 s. The gathers do not move.
 */
START_TEST(test_zero3_deepspeed_predivide)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct dp_comm with, without;
	struct framework ds, none;

	load_frameworks("deepspeed", &ds, NULL, NULL, NULL, NULL);
	ck_assert_double_eq(ds.reduce_copy_passes, 2.0);
	ck_assert_double_eq(ds.gather_copy_passes, 0.0);
	none = ds;
	none.reduce_copy_passes = 0.0;
	z3_hbm_setup(&c, &m, &p, &lay);
	dp_comm_time(&m, &p, &c, &lay, &ds, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &with);
	dp_comm_time(&m, &p, &c, &lay, &none, 1.3e7, 0.0, 6e6, 2.0, 0.0, COLL_ALGO_RING, &without);
	ck_assert_double_eq_tol(with.z3_reduce_layer_s - without.z3_reduce_layer_s, 4.8e-5, 1e-12);
	ck_assert_double_eq_tol(with.z3_gather_layer_s, without.z3_gather_layer_s, 1e-15);
	ck_assert_double_eq_tol(with.zero3_mb_s - without.zero3_mb_s, 1.04e-4, 1e-12);
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
	tcase_add_test(tc, test_grad_reduce_overlap_switch);
	tcase_add_test(tc, test_zero3_exposure);
	tcase_add_test(tc, test_zero3_experts_per_tensor);
	tcase_add_test(tc, test_zero1_internevo);
	tcase_add_test(tc, test_zero1_fp8_param_gather);
	tcase_add_test(tc, test_zero1_fp8_expert_ends);
	tcase_add_test(tc, test_bucket_tail);
	tcase_add_test(tc, test_zero3_reduce_bucket_tail);
	tcase_add_test(tc, test_zero3_persist_gather);
	tcase_add_test(tc, test_zero3_deepspeed05);
	tcase_add_test(tc, test_zero3_deepspeed_step);
	tcase_add_test(tc, test_zero3_deepspeed_predivide);
	tcase_add_test(tc, test_megatron_grad_prereduce);
	tcase_add_test(tc, test_megatron_grad_check_syncs);
	tcase_add_test(tc, test_internevo_syncs);
	tcase_add_test(tc, test_moe_param_gathers);
	tcase_add_test(tc, test_megatron_step_bytes);
	tcase_add_test(tc, test_reduce_exposed);
	tcase_add_test(tc, test_window_monotone);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(data_par_suite)
