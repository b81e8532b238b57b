/* Host and launch time (plan/host_time.h): kernel counts, the larger of
 * GPU and host time, the optimizer's multi-tensor launches. */
#include <check.h>
#include <string.h>

#include "plan/estimate.h"
#include "plan/framework.h"
#include "plan/host_time.h"
#include "testutil.h"

/*
 * The toy GPT (LayerNorm, GeLU, learned positions, biases) at tp 1
 * without flash attention: 4 GEMMs forward (QKV, projection, fc1, fc2),
 * the attention's two batched GEMMs, and 7 element-wise kernels (two
 * norms, two bias-dropout-adds, GeLU, softmax, dropout): 13 forward;
 * backward 2 x 4 GEMMs + 4 attention GEMMs + 2 x 7 = 26.
 */
START_TEST(test_layer_kernels)
{
	struct model m;
	struct plan p;
	struct host_kernels k;
	struct framework fw;

	test_load_model(&m, TOY_MODEL_YAML);
	plan_init(&p);
	p.flash_attention = false;
	host_layer_kernels(&m, &p, NULL, false, 7.0, &k);
	ck_assert_double_eq(k.fwd, 13.0);
	ck_assert_double_eq(k.bwd, 26.0);
	ck_assert_double_eq(k.recompute, 0.0);
	/* tp 4 with sequence parallelism, flash attention (one kernel
	 * forward, FA2's three backward), 5 element-wise kernels, full
	 * recomputation: forward 4 + 1 + 5 + 4 collectives (2 AG, 2 RS) =
	 * 14; backward 8 + 3 + 10 + 6 collectives (the wgrad re-gathers) =
	 * 27; recomputed: the forward's 14. */
	p.tp = 4;
	p.sequence_parallel = true;
	p.flash_attention = true;
	p.recompute = PLAN_RECOMPUTE_FULL;
	host_layer_kernels(&m, &p, NULL, false, 5.0, &k);
	ck_assert_double_eq(k.fwd, 14.0);
	ck_assert_double_eq(k.bwd, 27.0);
	ck_assert_double_eq(k.recompute, 14.0);
	/* Overlapped, each of the four sites a pass launches 2 tp = 8 for 2:
	 * 4 x 6 = 24 more each way. */
	p.tp_overlap = true;
	host_layer_kernels(&m, &p, NULL, false, 5.0, &k);
	ck_assert_double_eq(k.fwd, 38.0);
	ck_assert_double_eq(k.bwd, 51.0);
	/* Ring attention over cp 4, no TP, flash, no recomputation: 4
	 * attention kernels and 3 exchanges of K and V forward (4 + 4 + 5 +
	 * 6 = 19), 4 x 3 backward kernels and 3 x 4 exchanges (8 + 12 + 10
	 * + 12 = 42); Transformer Engine's p2p ring adds its copies and
	 * merges (context_par.c), 3 x 4 = 12 forward and 6 x 4 = 24
	 * backward: 31 and 66. */
	p.tp = 1;
	p.sequence_parallel = p.tp_overlap = false;
	p.recompute = PLAN_RECOMPUTE_NONE;
	p.cp = 4;
	host_layer_kernels(&m, &p, NULL, false, 5.0, &k);
	ck_assert_double_eq(k.fwd, 31.0);
	ck_assert_double_eq(k.bwd, 66.0);
	p.cp = 1;
	/* Eager modules (torchtitan): Q, K, V apart, 6 GEMMs; per-op
	 * selective recomputation: every second one (3) and the 5
	 * element-wise kernels. */
	framework_init_default(&fw);
	fw.elementwise = FRAMEWORK_EW_EAGER;
	fw.selective_recompute = FRAMEWORK_SAC_OP;
	p.tp = 1;
	p.sequence_parallel = p.tp_overlap = false;
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	host_layer_kernels(&m, &p, &fw, false, 5.0, &k);
	ck_assert_double_eq(k.fwd, 6.0 + 1.0 + 5.0);
	ck_assert_double_eq(k.recompute, 3.0 + 5.0);
	/* Compiled (torch.compile): the GEMMs as fused, 4 (QKV, projection,
	 * fc1, fc2): forward 4 + 1 + 5 = 10; backward 2 x 4 + 3 + 2 x 5 and
	 * each of the toy layer's two norms' dweight kernel: 23. */
	fw.elementwise = FRAMEWORK_EW_COMPILED;
	host_layer_kernels(&m, &p, &fw, false, 5.0, &k);
	ck_assert_double_eq(k.fwd, 4.0 + 1.0 + 5.0);
	ck_assert_double_eq(k.bwd, 2.0 * 4.0 + 3.0 + 2.0 * 5.0 + 2.0);
}
END_TEST

/* 10 us a launch: a pass of 13 kernels 130 us, one graph launch 10 us
 * with per-layer graphs, nothing in a whole-step graph; a stretch shows
 * what its host time exceeds its GPU time by. */
START_TEST(test_launch_time)
{
	struct framework fw;

	framework_init_default(&fw);
	ck_assert_double_eq(host_layer_pass_s(&fw, 13.0), 0.0); /* built-in: not modelled */
	fw.host_launch_s = 10e-6;
	ck_assert_double_eq_tol(host_layer_pass_s(&fw, 13.0), 130e-6, 1e-15);
	ck_assert_double_eq_tol(host_eager_s(&fw, 13.0), 130e-6, 1e-15);
	fw.cuda_graphs = FRAMEWORK_GRAPHS_LAYER;
	ck_assert_double_eq_tol(host_layer_pass_s(&fw, 13.0), 10e-6, 1e-15);
	ck_assert_double_eq_tol(host_eager_s(&fw, 13.0), 130e-6, 1e-15);
	fw.cuda_graphs = FRAMEWORK_GRAPHS_FULL;
	ck_assert_double_eq(host_layer_pass_s(&fw, 13.0), 0.0);
	ck_assert_double_eq(host_eager_s(&fw, 13.0), 0.0);
	ck_assert_double_eq_tol(host_exposed_s(1e-3, 1.3e-3), 0.3e-3, 1e-15);
	ck_assert_double_eq(host_exposed_s(2e-3, 1e-3), 0.0);
}
END_TEST

/*
 * multi_tensor_apply: 30 tensors or 320 x 65,536 = 20,971,520 elements a
 * launch. 100 tensors of 1e9 elements in all: ceil(100/30) = 4 against
 * ceil(1e9 / 20,971,520) = ceil(47.68) = 48 launches a pass, 4 passes
 * 192; 1,000 small tensors (1e6 elements): ceil(1000/30) = 34.
 * The toy GPT layer's tensors: two LayerNorms with shifts (4), QKV and
 * the projection with biases (4), fc1 and fc2 with biases (4): 12.
 */
START_TEST(test_optimizer_launches)
{
	struct model m;

	ck_assert_double_eq(host_optimizer_launches(100.0, 1e9, 4.0), 192.0);
	ck_assert_double_eq(host_optimizer_launches(1000.0, 1e6, 1.0), 34.0);
	ck_assert_double_eq(host_optimizer_launches(1000.0, 1e6, 0.0), 0.0);
	test_load_model(&m, TOY_MODEL_YAML);
	ck_assert_double_eq(host_layer_tensors(&m, false, 0.0), 12.0);
}
END_TEST

/*
 * The toy GPT at tp 1, two micro-batches, 1 ms a launch (launch-bound on
 * purpose). Per micro-batch the host issues 2 layers x (13 + 26) = 78
 * layer kernels and the ends' 25 (embedding 1 forward, 3 backward;
 * final norm, logits GEMM, ten cross-entropy kernels and the loss's two
 * forward, 3 + 2 + 2 backward): 103 ms. The GPU's micro-batch is the
 * slot without host time, so each micro-batch adds 0.103 - slot and the
 * launch term is twice that; nothing else changes (no optimizer passes,
 * no host synchronisations).
 */
START_TEST(test_estimate_launch_bound)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct estimate_options opt = { .dp_algo = COLL_ALGO_RING, .compressor = NULL, .framework = &fw };
	struct estimate e0, e1;
	struct plan_error err;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML);
	plan_init(&p);
	p.tp = p.pp = p.dp = 1;
	p.global_batch = 2;
	p.seq_len = 1024;
	p.flash_attention = false;
	framework_init_default(&fw);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e0, &err), "%s", err.message);
	ck_assert_double_eq(e0.breakdown.launch, 0.0);
	fw.host_launch_s = 1e-3;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e1, &err), "%s", err.message);
	ck_assert(e0.details.slot_s < 0.103);
	ck_assert_double_eq_tol(e1.breakdown.launch, 2.0 * (0.103 - e0.details.slot_s), 1e-12);
	ck_assert_double_eq_tol(e1.iteration_time_s, e0.iteration_time_s + e1.breakdown.launch, 1e-12);
	ck_assert_double_eq_tol(e1.details.slot_s, 0.103, 1e-12);
	/* Per-layer CUDA graphs: 2 layers x 2 passes x 1 ms + the ends' 25
	 * ms eager = 29 ms a micro-batch. */
	fw.cuda_graphs = FRAMEWORK_GRAPHS_LAYER;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e1, &err), "%s", err.message);
	ck_assert_double_eq_tol(e1.breakdown.launch, 2.0 * fmax(0.0, 0.029 - e0.details.slot_s), 1e-12);
	/* Two stages of one layer each: the first issues 39 + 4 (the
	 * embedding) = 43 launches a micro-batch, the last 39 + 21 (logits
	 * and loss) = 60; at 1 ms each both are launch-bound on the toy GPU,
	 * so the bottleneck's slot is 60 ms and the bubble, the first
	 * stage's slot, 43 ms. */
	fw.cuda_graphs = FRAMEWORK_GRAPHS_NONE;
	p.pp = 2;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e1, &err), "%s", err.message);
	ck_assert_int_eq(e1.details.bottleneck_stage, 1);
	ck_assert_double_eq_tol(e1.details.slot_s, 0.060, 1e-12);
	ck_assert_double_eq_tol(e1.breakdown.pp_bubble, 0.043, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * Issue 25: the routed experts' GEMM launches as a line of their own
 * (details.moe_expert_launch_s), what the launch term loses without
 * them. The toy GPT with 8 experts (top-2) in both layers, tp 1, ep 1,
 * two micro-batches, 1 ms a launch: launch-bound with and without them,
 * so the difference is their host time alone. Megatron-Core with
 * Transformer Engine (the default, te_streams) launches a GEMM per local
 * expert and matrix: 2 x 8 = 16 forward, a dgrad and a wgrad each
 * backward, 32: 48 launches a layer, 96 ms a micro-batch, 0.192 s for
 * the two. torch._grouped_mm (moe_grouped_gemm single) launches one a
 * matrix: 2 forward, 4 backward, 12 a micro-batch, 0.024 s. The
 * routed-expert launches are taken out of the launch term's host time,
 * never added: the iteration is what it was. A dense model, and a
 * framework without a host model, show 0.
 */
START_TEST(test_estimate_expert_launches)
{
	struct cluster c;
	struct model m, dense;
	struct plan p;
	struct framework fw;
	struct estimate_options opt = { .dp_algo = COLL_ALGO_RING, .compressor = NULL, .framework = &fw };
	struct estimate e, e0;
	struct plan_error err;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML "moe:\n  experts: 8\n  top_k: 2\n");
	test_load_model(&dense, TOY_MODEL_YAML);
	plan_init(&p);
	p.tp = p.pp = p.dp = p.ep = 1;
	p.global_batch = 2;
	p.seq_len = 1024;
	p.flash_attention = false;
	framework_init_default(&fw);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e0, &err), "%s", err.message);
	ck_assert_double_eq(e0.details.moe_expert_launch_s, 0.0);
	fw.host_launch_s = 1e-3;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	/* launch-bound without the 96 ms too: the micro-batch's GPU time
	 * (e0's slot) is under its launches less those */
	ck_assert(e.details.slot_s - 0.096 > e0.details.slot_s);
	ck_assert_double_eq_tol(e.details.moe_expert_launch_s, 0.192, 1e-12);
	ck_assert(e.details.moe_expert_launch_s <= e.breakdown.launch);
	fw.moe_grouped_gemm = FRAMEWORK_MOE_GEMM_SINGLE;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.details.moe_expert_launch_s, 0.024, 1e-12);
	ck_assert_msg(estimate_plan(&dense, &c, &p, &opt, &e, &err), "%s", err.message);
	ck_assert_double_eq(e.details.moe_expert_launch_s, 0.0);
	cluster_release(&c);
}
END_TEST

/* plan-cli hostsync: the toy GPT on the toy cluster at tp 1, pp 1, dp @dp,
 * seq 1024, @gb sequences an iteration, the built-in framework. */
struct toy_run {
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct estimate_options opt;
	struct plan_error err;
};

static void
toy_run_init(struct toy_run *t, int dp, int gb)
{
	test_load_cluster(&t->c, TOY_CLUSTER_YAML);
	test_load_model(&t->m, TOY_MODEL_YAML);
	plan_init(&t->p);
	t->p.tp = t->p.pp = 1;
	t->p.dp = dp;
	t->p.global_batch = gb;
	t->p.seq_len = 1024;
	framework_init_default(&t->fw);
	t->opt = (struct estimate_options){ .dp_algo = COLL_ALGO_RING, .compressor = NULL, .framework = &t->fw };
}

static void
toy_estimate(struct toy_run *t, const struct model *m, struct estimate *e)
{
	ck_assert_msg(estimate_plan(m, &t->c, &t->p, &t->opt, e, &t->err), "%s", t->err.message);
}

/*
 * plan-cli hostsync: the training script's work per micro-batch. The toy
 * GPT on the toy cluster, 12 us a launch, two micro-batches (global
 * batch 2 at dp 1).
 * Syncs: 2 on every stage (microbatch_syncs) and 1 on the loss stage
 * (loss_syncs), each one launch: 3 x 12 us a micro-batch, 72 us more on
 * the launch line and the iteration, whatever else the host exposes.
 * p2p_syncs 1 at pp 2 (plain 1F1B): each end stage exchanges once a
 * micro-batch, 12 us on each slot: the pacing stage's two slots and the
 * other stage's share, 36 us; interleaved (vpp 2), none.
 */
START_TEST(test_estimate_microbatch_syncs)
{
	struct toy_run t;
	struct model m4;
	struct estimate e0, e1;

	toy_run_init(&t, 1, 2);
	test_load_model(&m4, "name: toy\nlayers: 4\nhidden: 1024\nheads: 8\nvocab: 32768\nseq_len: 1024\n");
	t.fw.host_launch_s = 12e-6;
	toy_estimate(&t, &t.m, &e0);
	ck_assert_double_eq(e0.details.mb_syncs, 0.0);
	t.fw.microbatch_syncs = 2.0;
	t.fw.loss_syncs = 1.0;
	toy_estimate(&t, &t.m, &e1);
	ck_assert_double_eq(e1.details.mb_syncs, 3.0);
	ck_assert_double_eq_tol(e1.details.mb_sync_s, 72e-6, 1e-15);
	ck_assert_double_eq_tol(e1.breakdown.launch - e0.breakdown.launch, 72e-6, 1e-12);
	ck_assert_double_eq_tol(e1.iteration_time_s - e0.iteration_time_s, 72e-6, 1e-12);
	/* Without a host model the syncs are not priced. */
	t.fw.host_launch_s = 0.0;
	toy_estimate(&t, &t.m, &e1);
	ck_assert_double_eq(e1.details.mb_syncs, 0.0);
	ck_assert_double_eq(e1.breakdown.launch, 0.0);

	t.fw.host_launch_s = 12e-6;
	t.fw.microbatch_syncs = t.fw.loss_syncs = 0.0;
	t.p.pp = 2;
	toy_estimate(&t, &t.m, &e0);
	t.fw.p2p_syncs = 1.0;
	toy_estimate(&t, &t.m, &e1);
	ck_assert_int_eq(e1.details.bottleneck_stage, e0.details.bottleneck_stage);
	ck_assert_double_eq(e1.details.mb_syncs, 1.0);
	ck_assert_double_eq_tol(e1.iteration_time_s - e0.iteration_time_s, 36e-6, 1e-12);
	t.p.global_batch = 4;
	t.p.vpp = 2;
	toy_estimate(&t, &m4, &e1);
	ck_assert_double_eq(e1.details.mb_syncs, 0.0);
	/* The zero-bubble and DualPipe runtimes wait on their requests
	 * without a host synchronisation: none at pp 2 either. */
	t.p.vpp = 1;
	t.p.pp_schedule = PLAN_PP_ZB_H1;
	toy_estimate(&t, &m4, &e1);
	ck_assert_double_eq(e1.details.mb_syncs, 0.0);
	t.p.pp_schedule = PLAN_PP_DUALPIPE;
	toy_estimate(&t, &m4, &e1);
	ck_assert_double_eq(e1.details.mb_syncs, 0.0);
	t.p.pp_schedule = PLAN_PP_1F1B;
	toy_estimate(&t, &m4, &e1);
	ck_assert_double_eq(e1.details.mb_syncs, 1.0);
	cluster_release(&t.c);
}
END_TEST

/*
 * plan-cli hostsync: the loss's all-reduce over DP and the data loader's
 * attention mask, per micro-batch, in overhead. The toy cluster (2 nodes
 * of 4, NVLink 1e11 B/s and 1 us, 10 us across nodes, no net overhead,
 * no base latency), priced as NCCL's LL protocol (collective.c): NVLink
 * steps 1 x 0.6/3.4 = 3/17 us, network steps 10 x 2.7/9.6 = 2.8125 us for
 * the ring and 10 x 5.0/9.6 = 125/24 us for the tree. dp 8 over both
 * nodes: ring 12 x 3/17 + 2 x 2.8125 = 36/17 + 5.625 = 7.7426 us and
 * 2 x 7/8 x 4 B at half of 1e11 B/s, 1.4e-10 s; tree 2 x (3 x 3/17 +
 * log2i(2) x 125/24) = 11.4755 us: the ring, twice for the two
 * micro-batches of a global batch of 16.
 * The mask at tp 2, micro-batch 1, seq 1024: 1024^2 = 1,048,576 B at the
 * default 25e9 B/s host link, 41.94304 us, and its broadcast over the two
 * TP ranks of a node, 2 x 1 us + 1,048,576 / 1e11 = 12.48576 us: 54.4288
 * us a micro-batch, 108.8576 us for two (pp 1: one stage, first and loss).
 */
START_TEST(test_estimate_loss_allreduce_and_mask)
{
	struct toy_run t;
	struct estimate e0, e1;
	double ring = (36.0 / 17 + 5.625) * 1e-6 + 1.4e-10;

	toy_run_init(&t, 8, 16);
	toy_estimate(&t, &t.m, &e0);
	t.fw.loss_allreduces = 1.0;
	toy_estimate(&t, &t.m, &e1);
	ck_assert_double_eq_tol(e1.details.loss_allreduce_s, 2.0 * ring, 1e-15);
	ck_assert_double_eq_tol(e1.breakdown.overhead - e0.breakdown.overhead, 2.0 * ring, 1e-15);
	ck_assert_double_eq_tol(e1.iteration_time_s - e0.iteration_time_s, 2.0 * ring, 1e-12);

	t.fw.loss_allreduces = 0.0;
	t.p.tp = 2;
	t.p.dp = 1;
	t.p.global_batch = 2;
	toy_estimate(&t, &t.m, &e0);
	ck_assert_double_eq(e0.details.batch_copy_s, 0.0);
	t.fw.dataloader_mask = true;
	toy_estimate(&t, &t.m, &e1);
	ck_assert_double_eq_tol(e1.details.batch_copy_s, 2.0 * (41.94304e-6 + 12.48576e-6), 1e-15);
	ck_assert_double_eq_tol(e1.breakdown.overhead - e0.breakdown.overhead, 108.8576e-6, 1e-15);
	cluster_release(&t.c);
}
END_TEST

/* The bundled profiles' values (their comments cite the code). */
static const struct {
	const char *name;
	double microbatch_syncs, loss_syncs, p2p_syncs, loss_allreduces;
	bool dataloader_mask;
} profile_work[] = {
	/* plan-cli mlm2021 (Sec. 35): the timers count too; syncs_per_chunk
	 * in test_estimate_sc21_syncs */
	{ "megatron-lm-2021", 9, 0, 3, 1, false },
	{ "megatron-core-0.6", 0, 1, 1, 1, true },
	{ "megatron-lm", 0, 2, 1, 0, false },
	{ "nemo-24.07", 0, 0, 1, 1, false },
	/* plan-cli llsync (Sec. 32): NeMo v2.3.0's MaskedTokenLossReduction */
	{ "nemo", 0, 2, 1, 0, false },
	/* plan-cli hostsync2 (docs/research/framework-data.md Sec. 31) */
	{ "deepspeed", 3, 1, 0, 0, false },
	{ "deepspeed-2021", 16, 0, 0, 1, false },
	{ "deepspeed-0.5", 1, 0, 0, 0, false },
	{ "llm-foundry", 1, 0, 0, 0, false },
	{ "internevo", 1, 0, 0, 0, false },
	{ "megatron-core-0.6-sequential", 0, 1, 1, 1, true },
	{ "megatron-fsdp", 0, 2, 1, 0, false },
	{ "pytorch-fsdp", 0, 0, 0, 0, false },
	{ "pytorch-fsdp2", 2, 0, 0, 0, false },
	{ "pytorch-fsdp2-compile", 2, 0, 0, 0, false },
};

START_TEST(test_profiles_microbatch_work)
{
	struct framework fw;

	test_setup_paths();
	for (size_t i = 0; i < sizeof(profile_work) / sizeof(profile_work[0]); i++) {
		test_load_profile(PROFILE_FRAMEWORK, profile_work[i].name, &fw);
		ck_assert_double_eq(fw.microbatch_syncs, profile_work[i].microbatch_syncs);
		ck_assert_double_eq(fw.loss_syncs, profile_work[i].loss_syncs);
		ck_assert_double_eq(fw.p2p_syncs, profile_work[i].p2p_syncs);
		ck_assert_double_eq(fw.loss_allreduces, profile_work[i].loss_allreduces);
		ck_assert(fw.dataloader_mask == profile_work[i].dataloader_mask);
		/* only SC21's schedule synchronises per model chunk */
		ck_assert(fw.syncs_per_chunk == (strcmp(profile_work[i].name, "megatron-lm-2021") == 0));
	}
}
END_TEST

/*
 * plan-cli hostsync2: the bundled profiles' syncs priced on the toy GPT
 * (pp 1: one stage, every stage's and the loss stage's syncs both), two
 * micro-batches (global batch 2 at dp 1), at each profile's own launch
 * cost (10 us for the first four, 12 us for megatron-lm-2021 and nemo):
 *   deepspeed       3 + 1 = 4 a micro-batch:  4 x 10 us x 2 =  80 us;
 *   deepspeed-2021 16 + 0 = 16:              16 x 10 us x 2 = 320 us;
 *   llm-foundry     1 + 0 = 1:                1 x 10 us x 2 =  20 us;
 *   pytorch-fsdp2   2 + 0 = 2:                2 x 10 us x 2 =  40 us;
 *   megatron-lm-2021 9 + 0 = 9:               9 x 12 us x 2 = 216 us;
 *   nemo            0 + 2 = 2, at 12 us:      2 x 12 us x 2 =  48 us.
 */
static const struct {
	const char *name;
	double syncs, sync_s;
} profile_sync_time[] = {
	{ "deepspeed", 4, 80e-6 },
	{ "deepspeed-2021", 16, 320e-6 },
	{ "llm-foundry", 1, 20e-6 },
	{ "pytorch-fsdp2", 2, 40e-6 },
	{ "megatron-lm-2021", 9, 216e-6 },
	{ "nemo", 2, 48e-6 },
};

START_TEST(test_profiles_microbatch_sync_time)
{
	struct framework fw;
	struct toy_run t;
	struct estimate e;

	test_setup_paths();
	for (size_t i = 0; i < sizeof(profile_sync_time) / sizeof(profile_sync_time[0]); i++) {
		test_load_profile(PROFILE_FRAMEWORK, profile_sync_time[i].name, &fw);
		toy_run_init(&t, 1, 2);
		t.fw.host_launch_s = fw.host_launch_s;
		t.fw.microbatch_syncs = fw.microbatch_syncs;
		t.fw.loss_syncs = fw.loss_syncs;
		t.fw.p2p_syncs = fw.p2p_syncs;
		toy_estimate(&t, &t.m, &e);
		ck_assert_double_eq(e.details.mb_syncs, profile_sync_time[i].syncs);
		ck_assert_double_eq_tol(e.details.mb_sync_s, profile_sync_time[i].sync_s, 1e-15);
		cluster_release(&t.c);
	}
}
END_TEST

/*
 * plan-cli mlm2021: SC21 Megatron-LM's syncs (docs/research/
 * framework-data.md Sec. 35), its profile's values on the toy GPT at 12 us
 * a launch.
 * Per iteration: 8 optimizer-timer syncs, found_inf 1, the norm's 2, 4
 * train_step-timer syncs, the loss scale 1, training_log's FloatTensor 1,
 * and 4 every 5th iteration (0.8): host_syncs 17.8, 17.8 x 12 us = 213.6
 * us on the launch line.
 * Per micro-batch: pp 2 plain 1F1B, two micro-batches (global batch 2):
 * each stage is an end stage, 9 + 3 x 1 = 12 syncs a micro-batch, 144 us:
 * the pacing stage's two slots and the other stage's share, 3 x 144 =
 * 432 us more an iteration.
 * Interleaved, pp 2 and vpp 2 on the 4-layer GPT, four micro-batches
 * (global batch 4): per chunk 2 x (9 + 3) = 24 syncs a micro-batch on
 * either stage, 288 us: 4 x 288 = 1152 us of mb_sync_s, and the other
 * stage's share 288 / 2 = 144 us, 1296 us more an iteration. Without
 * syncs_per_chunk: 9 a micro-batch (microbatch_syncs once, no p2p), 4 x 9
 * x 12 us = 432 us.
 */
START_TEST(test_estimate_sc21_syncs)
{
	struct framework fw;
	struct toy_run t;
	struct model m4;
	struct estimate e0, e1;

	test_setup_paths();
	test_load_profile(PROFILE_FRAMEWORK, "megatron-lm-2021", &fw);
	ck_assert_double_eq(fw.host_syncs, 17.8);
	ck_assert(fw.syncs_per_chunk);
	ck_assert_double_eq_tol(fw.host_launch_s, 12e-6, 1e-18);

	toy_run_init(&t, 1, 2);
	test_load_model(&m4, "name: toy\nlayers: 4\nhidden: 1024\nheads: 8\nvocab: 32768\nseq_len: 1024\n");
	t.fw.host_launch_s = fw.host_launch_s;
	toy_estimate(&t, &t.m, &e0);
	t.fw.host_syncs = fw.host_syncs;
	toy_estimate(&t, &t.m, &e1);
	ck_assert_double_eq_tol(e1.breakdown.launch - e0.breakdown.launch, 213.6e-6, 1e-12);
	t.fw.host_syncs = 0.0;

	t.p.pp = 2;
	toy_estimate(&t, &t.m, &e0);
	t.fw.microbatch_syncs = fw.microbatch_syncs;
	t.fw.p2p_syncs = fw.p2p_syncs;
	t.fw.syncs_per_chunk = fw.syncs_per_chunk;
	toy_estimate(&t, &t.m, &e1);
	ck_assert_int_eq(e1.details.bottleneck_stage, e0.details.bottleneck_stage);
	ck_assert_double_eq(e1.details.mb_syncs, 12.0);
	ck_assert_double_eq_tol(e1.iteration_time_s - e0.iteration_time_s, 432e-6, 1e-12);

	t.p.global_batch = 4;
	t.p.vpp = 2;
	t.fw.microbatch_syncs = t.fw.p2p_syncs = 0.0;
	toy_estimate(&t, &m4, &e0);
	t.fw.microbatch_syncs = fw.microbatch_syncs;
	t.fw.p2p_syncs = fw.p2p_syncs;
	toy_estimate(&t, &m4, &e1);
	ck_assert_int_eq(e1.details.bottleneck_stage, e0.details.bottleneck_stage);
	ck_assert_double_eq(e1.details.mb_syncs, 24.0);
	ck_assert_double_eq_tol(e1.details.mb_sync_s, 1152e-6, 1e-15);
	ck_assert_double_eq_tol(e1.iteration_time_s - e0.iteration_time_s, 1296e-6, 1e-12);
	t.fw.syncs_per_chunk = false;
	toy_estimate(&t, &m4, &e1);
	ck_assert_double_eq(e1.details.mb_syncs, 9.0);
	ck_assert_double_eq_tol(e1.details.mb_sync_s, 432e-6, 1e-15);
	cluster_release(&t.c);
}
END_TEST

static Suite *
host_time_suite(void)
{
	Suite *s = suite_create("host_time");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_layer_kernels);
	tcase_add_test(tc, test_launch_time);
	tcase_add_test(tc, test_optimizer_launches);
	tcase_add_test(tc, test_estimate_launch_bound);
	tcase_add_test(tc, test_estimate_expert_launches);
	tcase_add_test(tc, test_estimate_microbatch_syncs);
	tcase_add_test(tc, test_estimate_loss_allreduce_and_mask);
	tcase_add_test(tc, test_profiles_microbatch_sync_time);
	tcase_add_test(tc, test_profiles_microbatch_work);
	tcase_add_test(tc, test_estimate_sc21_syncs);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(host_time_suite)
