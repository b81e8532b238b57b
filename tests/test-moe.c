#include <math.h>

#include "io/profile_load.h"
#include "plan/collective.h"
#include "plan/compute.h"
#include "plan/estimate.h"
#include "plan/expert_par.h"
#include "plan/flops.h"
#include "plan/host_time.h"
#include "plan/memory.h"
#include "plan/pipeline.h"
#include "plan/tensor_par.h"
#include "plan/topology.h"
#include "fixtures.h"
#include "testutil.h"

#define MIXTRAL_YAML \
	"name: mixtral\nlayers: 32\nhidden: 4096\nheads: 32\nkv_heads: 8\nffn_hidden: 14336\n" \
	"gated_mlp: true\nvocab: 32000\nseq_len: 4096\ntied_embeddings: false\nbias: false\n" \
	"norm: rmsnorm\nposition_embedding: rotary\nmoe:\n  experts: 8\n  top_k: 2\n"

/*
 * Mixtral on the test cluster (testutil.h's Selene-like A100s) and a plan
 * of tp @tp, pp 1, dp @dp, ep @ep, one micro-batch of 4096 tokens per DP
 * rank (global batch @dp); tests change the rest.
 */
static void
mixtral_fixture(struct cluster *c, struct model *m, struct plan *p, int tp, int dp, int ep)
{
	test_load_cluster(c, TEST_CLUSTER_YAML);
	test_load_model(m, MIXTRAL_YAML);
	plan_init(p);
	p->tp = tp;
	p->pp = 1;
	p->dp = dp;
	p->ep = ep;
	p->global_batch = dp;
	p->seq_len = 4096;
}

/*
 * The toy GPT (testutil.h: h 1024, s 1024) with @moe as its moe: block on
 * the cluster @cluster_yaml, and a plan of tp = pp = 1, dp = ep = @dp,
 * one micro-batch of 1024 tokens per DP rank (global batch @dp).
 */
static void
moe_toy_fixture(struct cluster *c, struct model *m, struct plan *p, const char *cluster_yaml, const char *moe,
		int dp)
{
	char myaml[256];

	snprintf(myaml, sizeof(myaml), TOY_MODEL_YAML "moe:\n%s", moe);
	test_load_cluster(c, cluster_yaml);
	test_load_model(m, myaml);
	plan_init(p);
	p->tp = p->pp = 1;
	p->dp = p->ep = dp;
	p->global_batch = dp;
	p->seq_len = 1024;
}

/* One node of 1000 GB/s GPUs at memory efficiency 1, 1 us a kernel
 * launch: test_moe_permute_passes' permutation traffic by hand. */
#define PERMUTE_CLUSTER_YAML \
	"name: t\nnodes: 1\ngpus_per_node: 8\n" \
	"gpu:\n  name: t\n  peak_flops: 100 TFLOPS\n  memory: 80 GiB\n" \
	"  memory_bandwidth: 1000 GB/s\n  memory_efficiency: 1.0\n  launch_overhead: 1 us\n" \
	"intra_node:\n  bandwidth: 100 GB/s\n" \
	"inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n"

/* A framework with Megatron-Core core_v0.5-v0.6's allgather dispatcher. */
#define ALLGATHER_MASK_YAML "name: ag\nmoe_dispatcher: allgather_mask\n"

/* What a layer keeps under @fw beyond what it keeps under the default
 * framework (NULL: the all-to-all dispatcher, two routed copies). */
static double
activations_beyond_default(const struct model *m, const struct plan *p, const struct framework *fw)
{
	return memory_layer_activations(m, p, fw) - memory_layer_activations(m, p, NULL);
}

START_TEST(test_mixtral_params)
{
	struct model m;

	test_load_model(&m, MIXTRAL_YAML);
	ck_assert(model_is_moe(&m));
	ck_assert_int_eq(model_moe_layers(&m), 32);
	ck_assert_int_eq(m.moe.expert_ffn_hidden, 14336); /* default: ffn_hidden */
	/* Per layer: attention 4096 (4096 + 2 x 1024) + 4096^2 = 41,943,040;
	 * 8 experts x 3 x 4096 x 14336 = 1,409,286,144; router 4096 x 8 =
	 * 32,768; two RMSNorm 8,192: 1,451,270,144 x 32 = 46,440,644,608;
	 * + 2 x 32000 x 4096 (untied) + final norm 4096 = 46,702,792,704
	 * (Jiang et al. 2024: 46.7 B). Active: 2 experts (352,321,536) in place
	 * of 8: 394,305,536 x 32 + 262,148,096 = 12,879,925,248 (12.9 B). */
	ck_assert_rel(model_params_total(&m), 46702792704.0, 1e-15);
	ck_assert_rel(model_params_active(&m), 12879925248.0, 1e-15);
	/* FLOPs per token count the active matrices: 2 x (41,943,040 + 32,768
	 * + 352,321,536) + 4 s h per layer, x 32, + 2 h V = 27,644,657,664. */
	ck_assert_rel(flops_forward_per_token(&m, 4096), 27644657664.0, 1e-15);
}
END_TEST

START_TEST(test_moe_profile_errors)
{
	struct model m;
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert(!model_load_string(&m, "m.yaml", GPT3_YAML "moe:\n  experts: 4\n  top_k: 8\n", &err));
	ck_assert_ptr_nonnull(strstr(err.message, "moe.top_k (8) is more than moe.experts (4)"));
	ck_assert(!model_load_string(&m, "m.yaml", GPT3_YAML "moe:\n  top_k: 1\n", &err));
	ck_assert_ptr_nonnull(strstr(err.message, "missing required key 'experts'"));
	/* A dense model leaves the block zeroed. */
	test_load_model(&m, GPT3_YAML);
	ck_assert(!model_is_moe(&m));
	ck_assert_rel(model_params_active(&m), model_params_total(&m), 1e-15);
}
END_TEST

START_TEST(test_alltoall_flat_bilevel)
{
	struct cluster c;
	struct group_layout g = { 16, 8, 2 }, across = { 2, 1, 2 }, inside = { 8, 8, 1 };
	double d = 16777216.0;

	test_load_cluster(&c, TEST_CLUSTER_YAML); /* message_half_size 0 */
	/* Flat, 16 ranks on 2 nodes, 16 MiB per rank: 8 messages leave the
	 * node (8 x 5 us), 7 stay (7 x 3 us); 8 MiB at 21.25e9 B/s bounds it:
	 * 61 us + 394.76 us = 455.76 us. */
	ck_assert_rel(collective_time(&c, &g, COLL_ALLTOALL, COLL_ALGO_RING, d), 0.00045575802352941177, 1e-12);
	/* Bi-level (SMILE): across the 2 nodes, 5 us + 8 MiB / 21.25e9 =
	 * 399.76 us; inside the node 7 x 3 us + 7/8 x 16 MiB / 225e9 = 86.24 us.
	 * With a flat per-byte cost and 2 nodes, bi-level does not win. */
	ck_assert_rel(collective_time(&c, &across, COLL_ALLTOALL, COLL_ALGO_RING, d) +
		      collective_time(&c, &inside, COLL_ALLTOALL, COLL_ALGO_RING, d),
		      0.00048600275241830065, 1e-12);
	cluster_release(&c);
}
END_TEST

static double
moe_time(const struct cluster *c, const struct model *m, int nodes, int routing, int overlap,
	 struct estimate *e)
{
	struct plan p;
	struct plan_error err;
	int gpus = 8 * nodes;

	plan_init(&p);
	p.tp = p.pp = 1;
	p.dp = gpus;
	p.ep = gpus < m->moe.experts ? gpus : m->moe.experts;
	p.micro_batch = 16;
	p.global_batch = 16 * gpus;
	p.seq_len = 512;
	p.moe_routing = routing;
	p.moe_overlap = overlap;
	ck_assert_msg(estimate_plan(m, c, &p, NULL, e, &err), "%s", err.message);
	return e->iteration_time_s;
}

START_TEST(test_bilevel_scaling)
{
	struct cluster c;
	struct model m;
	struct estimate e;
	double last = 1.0;
	const struct estimate_breakdown *b = &e.breakdown;

	/* SMILE's setting: p4d-like nodes (8 A100, 4 x 100 Gbit/s), Switch-Base-128. */
	test_load_cluster(&c, "name: p4d\nnodes: 32\ngpus_per_node: 8\ngpu:\n  name: A100\n"
			      "  peak_flops: 312 TFLOPS\n  memory: 40 GiB\n  memory_bandwidth: 1555 GB/s\n"
			      "intra_node:\n  bandwidth: 300 GB/s\ninter_node:\n  nics_per_node: 4\n"
			      "  nic_bandwidth: 100 Gbit/s\n  latency: 15 us\n");
	test_load_model(&m, "name: switch\nlayers: 24\nhidden: 768\nheads: 12\nvocab: 32128\nseq_len: 512\n"
			    "bias: false\nnorm: rmsnorm\nposition_embedding: rotary\n"
			    "moe:\n  experts: 128\n  top_k: 1\n  every: 2\n  capacity_factor: 1.25\n");
	/* Bi-level beats flat more as the node count grows. */
	for (int nodes = 2; nodes <= 16; nodes *= 2) {
		double flat = moe_time(&c, &m, nodes, PLAN_MOE_FLAT, PLAN_MOE_OVERLAP_NONE, &e);
		double bi = moe_time(&c, &m, nodes, PLAN_MOE_BILEVEL, PLAN_MOE_OVERLAP_NONE, &e);

		ck_assert(e.details.ep_inter_s > 0 && e.details.ep_intra_s > 0);
		ck_assert_msg(flat / bi > last, "%d nodes: %.3f after %.3f", nodes, flat / bi, last);
		last = flat / bi;
	}
	ck_assert(last > 1.3);
	/* Lancet hides part of the all-to-all. */
	moe_time(&c, &m, 16, PLAN_MOE_FLAT, PLAN_MOE_OVERLAP_NONE, &e);
	{
		double exposed = b->ep_comm;

		moe_time(&c, &m, 16, PLAN_MOE_FLAT, PLAN_MOE_OVERLAP_LANCET, &e);
		ck_assert(b->ep_comm < exposed);
		ck_assert(b->ep_comm > 0.0);
	}
	cluster_release(&c);
}
END_TEST

START_TEST(test_ep_errors)
{
	struct cluster c;
	struct model m, dense;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	mixtral_fixture(&c, &m, &p, 8, 12, 8);
	test_load_model(&dense, GPT3_YAML);
	ck_assert(!estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "ep x etp (8 x 8) must divide tp x cp x dp (8 x 1 x 12)"));
	p.dp = 16;
	p.ep = 16;
	p.global_batch = 16;
	ck_assert(!estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "experts (8) are not divisible by ep (16)"));
	p.ep = 2;
	ck_assert(!estimate_plan(&dense, &c, &p, NULL, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "needs an MoE model"));
	/* Local experts: ep 8 holds 1 of 8 experts per GPU, 1/8 of ep 1's. */
	p.ep = 8;
	{
		double e8, e1;

		estimate_stage_params(&m, &p, 0, &e8);
		p.ep = 1;
		estimate_stage_params(&m, &p, 0, &e1);
		ck_assert_rel(e8 * 8.0, e1, 1e-12);
	}
	cluster_release(&c);
}
END_TEST

/*
 * MoE parallel folding (Liu et al. arXiv:2504.14960; Megatron-Core
 * core_r0.12 parallel_state.py): ep x etp divides tp x cp x dp, the
 * experts split etp ways, expert-DP = tp x cp x dp / (ep x etp).
 * Mixtral (8 experts of 3 x 4096 x 14336 = 176,160,768 parameters, 32
 * MoE layers) on tp 2 x dp 4.
 */
START_TEST(test_etp_folding)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;
	struct plan_layout lay;
	struct memory_use u;
	double expert;

	/* etp unset is tp: ep 8 x etp 2 = 16 does not divide 2 x 1 x 4 = 8
	 * (before folding, "ep (8) must divide dp (4)"). */
	mixtral_fixture(&c, &m, &p, 2, 4, 8);
	p.sequence_parallel = true;
	ck_assert_int_eq(plan_etp(&p), 2);
	ck_assert(!estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "ep x etp (8 x 2) must divide tp x cp x dp (2 x 1 x 4)"));
	/* etp 1: EP takes the TP ranks too; one whole expert per GPU, no
	 * expert-DP: 32 x 176,160,768 = 5,637,144,576 expert parameters. */
	p.etp = 1;
	ck_assert_int_eq(plan_edp(&p), 1);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	estimate_stage_params(&m, &p, 0, &expert);
	ck_assert_rel(expert, 5637144576.0, 1e-12);
	/* ep 4, etp 1: two whole experts per GPU (11,274,289,152), shared by
	 * edp = 8 / 4 = 2 ranks, which halve their 12 optimizer bytes (ZeRO-1:
	 * 67,645,734,912 bytes); the 2-byte gradients stay whole. */
	p.ep = 4;
	p.zero = 1;
	ck_assert_int_eq(plan_edp(&p), 2);
	estimate_stage_params(&m, &p, 0, &expert);
	ck_assert_rel(expert, 11274289152.0, 1e-12);
	memory_stage(&m, &p, &c, NULL, 0, expert, expert, &u);
	ck_assert_rel(u.optimizer, 12.0 * 11274289152.0 / 2.0, 1e-12);
	ck_assert_rel(u.gradients, 2.0 * 11274289152.0, 1e-12);
	/* The groups: EP 4 consecutive ranks (stride etp 1), expert-DP 2
	 * ranks striding by ep x etp = 4, both inside one 8-GPU node. */
	topology_plan(&p, &c, &lay);
	ck_assert_int_eq(lay.ep.size, 4);
	ck_assert_int_eq(lay.ep.per_node, 4);
	ck_assert_int_eq(lay.edp.size, 2);
	ck_assert_int_eq(lay.edp.nodes, 1);
	/* etp = tp is the old layout: ep 2 strides by tp 2, edp 2 by 4. */
	p.etp = 0;
	p.ep = 2;
	ck_assert_int_eq(plan_edp(&p), 2);
	topology_plan(&p, &c, &lay);
	ck_assert_int_eq(lay.ep.size, 2);
	ck_assert_int_eq(lay.edp.size, 2);
	/* Experts split 3 ways do not divide 14336. */
	p.etp = 3;
	p.ep = 1;
	p.dp = 3;
	p.global_batch = 3;
	ck_assert(!estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "not divisible by etp (3)"));
	cluster_release(&c);
}
END_TEST

/*
 * framework moe_weighted_activation (Megatron-Core core_v0.13.0 on: the
 * router's probabilities scale the experts' activation, and the
 * un-permutation, a plain permutation, keeps nothing): an MoE layer keeps
 * one routed copy of its tokens, fc1's input, instead of two. Mixtral,
 * every layer MoE, top-2, capacity factor 1 (dropless), tp = etp = 1, one
 * micro-batch of 4096 tokens: the copy is k s b h x 2 bytes = 2 x 4096 x
 * 4096 x 2 = 67,108,864 bytes a layer; over the 32 layers of the one
 * stage, with the one micro-batch 1F1B keeps there, 2,147,483,648 bytes.
 * Selective recomputation of the moe module drops the whole MoE term, so
 * the flag changes nothing there.
 */
START_TEST(test_moe_weighted_activation)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct memory_use two, one;
	double expert, params;

	mixtral_fixture(&c, &m, &p, 1, 8, 8);
	p.global_batch = 8;
	ck_assert_double_eq(m.moe.capacity_factor, 1.0);
	test_load_framework(&fw, "name: mw\n");
	ck_assert(!fw.moe_weighted_activation);
	ck_assert_rel(activations_beyond_default(&m, &p, &fw), 0.0, 1e-12);
	params = estimate_stage_params(&m, &p, 0, &expert);
	memory_stage(&m, &p, &c, &fw, 0, params, expert, &two);
	test_load_framework(&fw, "name: mw\nmoe_weighted_activation: true\n");
	ck_assert(fw.moe_weighted_activation);
	memory_stage(&m, &p, &c, &fw, 0, params, expert, &one);
	ck_assert_rel(two.activations - one.activations, 2147483648.0, 1e-9);
	ck_assert_rel(two.weights + two.gradients + two.optimizer, one.weights + one.gradients + one.optimizer, 1e-12);
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	p.recompute_modules = 1 << PLAN_RM_MOE;
	fw.moe_weighted_activation = false;
	double a = memory_layer_activations(&m, &p, &fw);
	fw.moe_weighted_activation = true;
	ck_assert_rel(memory_layer_activations(&m, &p, &fw), a, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * fp8mem: what an fp8 layer's linears save against the 16-bit count, by
 * recipe class (memory.c fp8_saved_bytes; Megatron-LM d98e8a6, TE v2.6).
 * A toy: h 1024, 8 heads of 256 (a d_v 2048), gated, one micro-batch of
 * 1024 tokens, tp 1, no SP, flash attention; bytes a token below, x 1024.
 * MoE (every layer: 8 experts, top 2, expert_ffn_hidden 512, one shared
 * expert of 512), q = 1 (current, mxfp8), d = 2 - q = 1:
 *  - no original input saved (TE < 2.6, or delayed scaling): QKV's input
 *    d h = 1024, the projection's d a d_v = 2048, the routed fc1 input
 *    d k h = 2048, fc2's d k f = 1024, the shared fc2's d f_s = 512, less
 *    the shared fc1's copy beside the router's bf16 input, q h = 1024:
 *    5632, 5,767,168 bytes;
 *  - fp8_save_original_input, current: the projection and shared fc1
 *    keep the bf16 input: 1024 + 0 + 3584 = 4608, 4,718,592 bytes;
 *    mxfp8 saves its E8M0 scales too, q = 1 + 1/32, d = 0.96875 (TE
 *    v2.18 mxfp8_tensor.py get_scale_shape): 0.96875 x 4608 = 4464,
 *    4,571,136 bytes; delayed as the first; rowwise (torchao, q 2): 0;
 *  - with moe_act recomputed fc2 keeps the original, discarded: q k f =
 *    1024 more, 5632; with shared_experts the shared fc1 copy is back
 *    (set_save_original_input skipped) and the module drops its fc1
 *    output 4 f_s, fc2 input q f_s and that copy: 4608 - 1024 + 2560 +
 *    1024 = 7168; layernorm (Megatron spec) drops the router's 2 h:
 *    4608 + 2048 = 6656.
 * Dense (ffn 4096): QKV d h, fc1 d h, the projection d a d_v, fc2 d f:
 * 1024 + 1024 + 2048 + 4096 = 8192 (8,388,608 bytes) without the original,
 * 6144 with it (current; mxfp8 0.96875 x 6144 = 5952, 6,094,848 bytes);
 * fp4 (NVFP4, q = 0.5625, d = 1.4375) with it: 1.4375 x 6144 = 8832,
 * 9,043,968 bytes.
 */
#define FP8MEM_MODEL "name: toy\nlayers: 2\nhidden: 1024\nheads: 8\nhead_dim: 256\nvocab: 32768\n" \
		     "seq_len: 1024\nffn_hidden: 4096\ngated_mlp: true\n"

/* Megatron-LM's TE spec before (@old) and from TE 2.6 (@te26: the
 * linears beside a module that keeps their input save it in bf16). */
static void
fp8mem_frameworks(struct framework *old, struct framework *te26)
{
	test_load_framework(old, "name: old\nmoe_weighted_activation: true\nselective_recompute: core_attn\n");
	test_load_framework(te26, "name: new\nmoe_weighted_activation: true\nselective_recompute: core_attn\n"
				  "fp8_save_original_input: true\n");
}

static double
fp8mem_saved(const struct model *m, const struct plan *p0, const struct framework *fw, int precision, int recipe,
	     unsigned modules)
{
	struct plan p = *p0, b = *p0;

	b.precision = PLAN_PRECISION_BF16;
	b.recompute = PLAN_RECOMPUTE_NONE;
	b.recompute_modules = 0;
	p.precision = precision;
	p.fp8_recipe = recipe;
	if (modules) {
		p.recompute = PLAN_RECOMPUTE_SELECTIVE;
		p.recompute_modules = (int)modules;
	}
	return memory_layer_activations(m, &b, fw) - memory_layer_activations(m, &p, fw);
}

START_TEST(test_fp8_saved_inputs)
{
	struct model moe, dense;
	struct plan p;
	struct framework old, te26;
	const int fp8 = PLAN_PRECISION_FP8;

	test_load_model(&moe, FP8MEM_MODEL "moe:\n  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 512\n"
					   "  shared_experts: 1\n");
	test_load_model(&dense, FP8MEM_MODEL);
	plan_init(&p);
	p.tp = p.pp = p.dp = p.ep = 1;
	p.seq_len = 1024;
	p.global_batch = 1;
	p.flash_attention = true;
	fp8mem_frameworks(&old, &te26);
	ck_assert(te26.fp8_save_original_input && !old.fp8_save_original_input);
	ck_assert_rel(fp8mem_saved(&moe, &p, &old, fp8, PLAN_FP8_CURRENT, 0), 5767168.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_CURRENT, 0), 4718592.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_MXFP8, 0), 4571136.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_DELAYED, 0), 5767168.0, 1e-12);
	ck_assert_double_eq(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_ROWWISE, 0), 0.0);
	ck_assert_rel(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_CURRENT, 1u << PLAN_RM_MOE_ACT), 5767168.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_CURRENT, 1u << PLAN_RM_SHARED_EXPERTS), 7340032.0,
		      1e-12);
	ck_assert_rel(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_CURRENT, 1u << PLAN_RM_LAYERNORM), 6815744.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&dense, &p, &old, fp8, PLAN_FP8_CURRENT, 0), 8388608.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&dense, &p, &te26, fp8, PLAN_FP8_CURRENT, 0), 6291456.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&dense, &p, &te26, fp8, PLAN_FP8_MXFP8, 0), 6094848.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&dense, &p, &te26, fp8, PLAN_FP8_DELAYED, 0), 8388608.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&dense, &p, &te26, PLAN_PRECISION_FP4, PLAN_FP8_FRAMEWORK, 0), 9043968.0, 1e-12);
}
END_TEST

/*
 * fp8mem under TP 2 with SP, expert TP 2 and capacity factor 1.25
 * (fp8_saved_bytes, fp8_moe_saved: the routed rows cf k a token, gathered
 * over etp, f split by etp, as layer_activations_full counts them), the
 * toy MoE layer above; bytes a token, x 1024 tokens. Blockwise with
 * fp8_save_original_input: q = 1 + 4/128 = 1.03125 (fp32 scale a 1 x 128
 * block, TE v2.18 float8_blockwise_tensor.py), d = 2 - q = 0.96875:
 *  - QKV d h / sp = 0.96875 x 512 = 496; projection 0 (original);
 *  - routed fc1 d cf k h etp / tp = 0.96875 x 1.25 x 2 x 1024 x 2 / 2 =
 *    0.96875 x 2560 = 2480; routed fc2 d cf k f / tp = 0.96875 x 640 =
 *    620; shared fc2 d f_s / tp = 0.96875 x 256 = 248; shared fc1 0:
 *    3844 a token, 3,936,256 bytes;
 *  - moe_act also drops fc2's input, saved as the discarded original:
 *    q cf k f / tp = 1.03125 x 640 = 660 more, 4504, 4,612,096 bytes;
 *  - moe drops the whole 16-bit MoE term, (6 (cf k + 1) f + 2 cf k h etp)
 *    / tp = (6 x 3.5 x 512 + 2 x 2.5 x 2048) / 2 = 10496 (weighted
 *    activation: one routed copy), QKV's 496 left: 10992, 11,255,808 bytes.
 * Delayed without the original (q = d = 1): QKV 512, projection 2048 / 2 =
 * 1024, routed 2560 + 640, shared fc2 256, less the shared fc1's copy
 * q h / sp = 512: 4480, 4,587,520 bytes.
 */
START_TEST(test_fp8_saved_inputs_etp)
{
	struct model moe;
	struct plan p;
	struct framework old, te26;
	const int fp8 = PLAN_PRECISION_FP8;

	test_load_model(&moe, FP8MEM_MODEL "moe:\n  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 512\n"
					   "  shared_experts: 1\n  capacity_factor: 1.25\n");
	plan_init(&p);
	p.pp = p.dp = 1;
	p.tp = p.etp = p.ep = 2;
	p.sequence_parallel = true;
	p.seq_len = 1024;
	p.global_batch = 1;
	p.flash_attention = true;
	fp8mem_frameworks(&old, &te26);
	ck_assert_rel(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_BLOCKWISE, 0), 3936256.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_BLOCKWISE, 1u << PLAN_RM_MOE_ACT), 4612096.0,
		      1e-12);
	ck_assert_rel(fp8mem_saved(&moe, &p, &te26, fp8, PLAN_FP8_BLOCKWISE, 1u << PLAN_RM_MOE), 11255808.0, 1e-12);
	ck_assert_rel(fp8mem_saved(&moe, &p, &old, fp8, PLAN_FP8_DELAYED, 0), 4587520.0, 1e-12);
}
END_TEST

/*
 * Context parallelism with an MoE model: a CP rank routes its s/cp
 * tokens, so the all-to-all buffer halves with cp 2 (cf k (b s / cp) h x
 * 2 / t = 1 x 2 x 2048 x 4096 x 2 = 33,554,432 bytes), and EP may take
 * the CP ranks (ep 4 over cp 2 x dp 2).
 */
START_TEST(test_cp_with_moe)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	mixtral_fixture(&c, &m, &p, 1, 2, 4);
	p.cp = 2;
	p.flash_attention = true;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert_rel(e.details.ep_bytes, 33554432.0, 1e-12);
	ck_assert_int_eq(plan_edp(&p), 1);
	cluster_release(&c);
}
END_TEST

/*
 * The MoE fixed costs (Megatron-Core router.py / token_dispatcher.py at
 * 005742f): the toy GPT with both layers MoE (8 experts, top-1) on the
 * toy cluster (1000 GB/s at efficiency 1, 2 us a kernel), dp = ep = 8,
 * b 1, s 1024: T x E = 1024 x 8 = 8192 (token, expert) pairs. Router
 * forward 20 x 2 us + 48 x 8192 B / 1e12 B/s = 4.0393216e-5 s, backward
 * 8 x 2 us + 36 x 8192 / 1e12 = 1.6294912e-5 s: 5.6688128e-5 s a layer,
 * 1.13376256e-4 s for the 2 layers of the one micro-batch.
 */
START_TEST(test_moe_fixed_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct estimate e;
	struct plan_error err;
	double padded;

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML_LAUNCH("2 us"), "  experts: 8\n  top_k: 1\n", 8);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.breakdown.moe_fixed, 1.13376256e-4, 1e-15);
	padded = e.breakdown.moe_fixed;
	/*
	 * Issue 25: the fixed costs by kind, each its own line. The router's
	 * GEMM, T x E x h = 1024 x 8 x 1024, is memory-bound: 2 x (1024 x
	 * 1024 + 2 x 1024 x 8) = 2,129,920 B, 2.12992e-6 s (its 16,777,216
	 * FLOPs take 3.36e-7 s); forward, dX and dW 6.38976e-6 s a layer,
	 * with the kernels 6.3077888e-5, 1.26155776e-4 s for the 2 layers.
	 * The permutations, one local expert (ep 8): two passes, read and
	 * write 2 bytes of the T cf k h = 1,048,576 routed elements each,
	 * 8,388,608 B (8.388608e-6 s) and two launches (4e-6 s):
	 * 1.2388608e-5 s forward, twice that backward, 7.4331648e-5 s for
	 * the 2 layers. Not dropless: no synchronisation.
	 */
	ck_assert_double_eq_tol(e.details.moe_router_s, 1.26155776e-4, 1e-15);
	ck_assert_double_eq_tol(e.details.moe_permute_s, 7.4331648e-5, 1e-15);
	ck_assert_double_eq(e.details.moe_sync_s, 0.0);
	/* Dropless: each layer's forward also stalls for the host, two
	 * kernel costs (4 us), after all-gathering the 8 x 8-byte counts of
	 * the 8 EP ranks (512 bytes; the collective model's time). */
	test_load_model(&m, TOY_MODEL_YAML "moe:\n  experts: 8\n  top_k: 1\n  dropless: true\n");
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	topology_plan(&p, &c, &lay);
	ck_assert_double_eq_tol(e.breakdown.moe_fixed - padded,
				2.0 * (4e-6 + collective_time(&c, &lay.ep, COLL_ALLGATHER, COLL_ALGO_RING, 512.0)),
				1e-15);
	/* ... all of it the synchronisation's line. */
	ck_assert_double_eq_tol(e.details.moe_sync_s, e.breakdown.moe_fixed - padded, 1e-15);
	/* Full recomputation repeats the forward part. */
	p.recompute = PLAN_RECOMPUTE_FULL;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_double_eq_tol(e.breakdown.moe_fixed,
				2.0 * (2.0 * (4.0393216e-5 + 4e-6 +
					      collective_time(&c, &lay.ep, COLL_ALLGATHER, COLL_ALGO_RING, 512.0)) +
				       1.6294912e-5), 1e-15);
	/* The router's GEMM and kernels run their forward again (4 x
	 * 2.12992e-6 + 2 x 4.0393216e-5 + 1.6294912e-5 a layer), the
	 * permutations theirs (4 x 1.2388608e-5), the synchronisation too. */
	ck_assert_double_eq_tol(e.details.moe_router_s, 2.0 * (4.0 * 2.12992e-6 + 2.0 * 4.0393216e-5 + 1.6294912e-5),
				1e-15);
	ck_assert_double_eq_tol(e.details.moe_permute_s, 2.0 * 4.0 * 1.2388608e-5, 1e-15);
	ck_assert_double_eq_tol(e.details.moe_sync_s,
				4.0 * (4e-6 + collective_time(&c, &lay.ep, COLL_ALLGATHER, COLL_ALGO_RING, 512.0)), 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * Node-limited routing (DeepSeek-V3, arXiv:2412.19437, Sec. 3.2.2): the
 * toy GPT with 8 experts, top-4, on the toy cluster's 2 nodes of 4 GPUs,
 * dp = ep = 8, b 1, s 1024, two-hop dispatch. Each rank's buffer is cf k
 * b s h x 2 = 4 x 1024 x 1024 x 2 = 8,388,608 B. Without a limit the hop
 * across the 2 nodes carries it all: 10 us + M/2 / 2.5e9 B/s =
 * 1.6877216e-3 s. With max_nodes 1 a token crosses to one node once:
 * min(1, 2, 4) / 4 of it, 10 us + M/8 / 2.5e9 = 4.294304e-4 s; the hop
 * inside the node is unchanged.
 */
START_TEST(test_node_limited_routing)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;
	double intra;

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML, "  experts: 8\n  top_k: 4\n", 8);
	p.moe_routing = PLAN_MOE_BILEVEL;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.details.ep_bytes, 8388608.0, 1e-6);
	ck_assert_double_eq_tol(e.details.ep_inter_s, 1.6877216e-3, 1e-15);
	intra = e.details.ep_intra_s;
	test_load_model(&m, TOY_MODEL_YAML "moe:\n  experts: 8\n  top_k: 4\n  max_nodes: 1\n");
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_double_eq_tol(e.details.ep_inter_s, 4.294304e-4, 1e-15);
	ck_assert_double_eq_tol(e.details.ep_intra_s, intra, 1e-15);
	/* A flat all-to-all sends every copy on its own: no gain. */
	p.moe_routing = PLAN_MOE_FLAT;
	{
		double limited;

		ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
		limited = e.breakdown.ep_comm;
		test_load_model(&m, TOY_MODEL_YAML "moe:\n  experts: 8\n  top_k: 4\n");
		ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
		ck_assert_double_eq_tol(e.breakdown.ep_comm, limited, 1e-15);
	}
	cluster_release(&c);
}
END_TEST

/*
 * Multi-token prediction (DeepSeek-V3, arXiv:2412.19437, Sec. 2.2;
 * Megatron-Core's MTP block on the last stage). Parameters: Mixtral with
 * one MTP module on pp 2 adds to the last stage an MoE layer
 * (1,451,270,144, test_mixtral_params; its experts 1,409,286,144), the
 * projection and norms (2 x 4096^2 + 2 x 4096 = 33,562,624) and a copy of
 * the untied embedding (32000 x 4096 = 131,072,000): 1,615,904,768.
 * Memory: the toy GPT (dense, s 1024, b 1, h 1024, flash attention) on
 * one stage adds one layer's 34 s b h = 35,651,584 bytes (Korthikanti et
 * al. 2022), its logits and loss, 4 s b h (1 + V/h) = 4 x 1,048,576 x
 * 33 = 138,412,032, and (plan-cli mtpmem) enorm's, hnorm's and eh_proj's
 * inputs, 2 + 2 + 4 bytes x h a token (Megatron-Core's
 * MultiTokenPredictionLayer._concat_embeddings at d98e8a6), 8 s b h =
 * 8,388,608: 182,452,224 bytes.
 */
START_TEST(test_mtp)
{
	struct cluster c;
	struct model m, mtp;
	struct plan p;
	struct estimate e0, e1;
	struct plan_error err;
	double x0, x1, p0, p1;

	mixtral_fixture(&c, &m, &p, 1, 8, 8);
	test_load_model(&mtp, MIXTRAL_YAML "mtp_layers: 1\n");
	p.pp = 2;
	p.global_batch = 16;
	p0 = estimate_stage_params(&m, &p, 1, &x0);
	p1 = estimate_stage_params(&mtp, &p, 1, &x1);
	ck_assert_rel(p1 - p0, 1451270144.0 - 1409286144.0 * 7.0 / 8.0 + 33562624.0 + 131072000.0, 1e-12);
	ck_assert_rel(x1 - x0, 1409286144.0 / 8.0, 1e-12);
	/* The first stage is untouched. */
	ck_assert_rel(estimate_stage_params(&mtp, &p, 0, NULL), estimate_stage_params(&m, &p, 0, NULL), 1e-15);
	/* The last stage's ends (what fp8_params' gathers and the fp8 copies
	 * leave in 16 bits) hold the module's copy of the untied embedding,
	 * 32000 x 4096 = 131,072,000, as its parameters above do. */
	ck_assert_rel(memory_stage_ends_params(&mtp, &p, 1) - memory_stage_ends_params(&m, &p, 1), 131072000.0, 1e-12);
	ck_assert_rel(memory_stage_ends_params(&mtp, &p, 0), memory_stage_ends_params(&m, &p, 0), 1e-15);
	/* The last stage runs the module: it takes longer. */
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e0, &err));
	ck_assert(estimate_plan(&mtp, &c, &p, NULL, &e1, &err));
	ck_assert(e1.iteration_time_s > e0.iteration_time_s);

	test_load_model(&m, TOY_MODEL_YAML);
	test_load_model(&mtp, TOY_MODEL_YAML "mtp_layers: 1\n");
	plan_init(&p);
	p.tp = p.pp = 1;
	p.dp = 1;
	p.global_batch = 1;
	p.seq_len = 1024;
	p.flash_attention = true;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e0, &err), "%s", err.message);
	ck_assert(estimate_plan(&mtp, &c, &p, NULL, &e1, &err));
	ck_assert_rel(e1.memory.activations - e0.memory.activations, 182452224.0, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * Expert TP's token all-gather and reduce-scatter (Megatron-Core's
 * all-to-all dispatcher): the toy GPT, 8 experts top-1, on the toy
 * cluster with tp 2 (etp = tp), dp 4, ep 4, b 1, s 1024. A rank's
 * all-to-all buffer is cf k (b s / t) h x 2 = 1,048,576 B; its etp 2
 * ranks (one node, 100 GB/s, 1 us) gather 2,097,152 B: a ring step of 1
 * us + 1/2 x 2,097,152 / 1e11 = 1.148576e-5 s, the same for the
 * reduce-scatter: 2.297152e-5 s, once in the forward and once in the
 * backward. With etp 1 there is none.
 */
/* test_etp_comm_by_hand's plan: the toy GPT, 8 experts top-1, tp 2 with
 * SP, dp 4, ep 4, on the toy cluster. */
static void
etp_toy_fixture(struct cluster *c, struct model *m, struct plan *p)
{
	moe_toy_fixture(c, m, p, TOY_CLUSTER_YAML, "  experts: 8\n  top_k: 1\n", 4);
	p->tp = 2;
	p->sequence_parallel = true;
}

/*
 * --moe-overlap combined-1f1b (expert_par.c ep_combined_1f1b), by hand in
 * units of the toy's all-to-all a (dispatch = combine = a, flat): 4
 * micro-batches (global batch 16 over dp 4), pp 1: a share 1 - 1/4 = 0.75
 * of each pass overlaps. A layer of experts 0.5a (mlp_fwd_s), fp32
 * gradient traffic 0.25a, forward 2.5a (attention block 2a), backward
 * 0.5 + 0.75 + 0.2 = 1.45a (attention block 0.2a). Phases:
 *   A: a beside the 2a attention block: 0;  B: a beside 0.5a dgrad: 0.5a;
 *   C: a beside 0.75a wgrad + 0.5a experts: 0;  D: a beside 0.2a: 0.8a.
 * forward 0.25 x 2a + 0.75 x (0.5 + 0.8)a = 1.475a; backward 0.25 x 2a +
 * 0.75 x 0 = 0.5a. With overlap_slowdown 1.2 each phase adds 0.2 x
 * min(comm, comp): A 0.2a, B 0.1a, C 0.2a, D 0.04a: forward 0.5a + 0.75 x
 * 1.44a = 1.58a, backward 0.5a + 0.75 x 0.4a = 0.8a. With pp 2 (vpp 2)
 * the share is 1 - 2/4 = 0.5: forward 1a + 0.5 x 1.3a = 1.65a, backward 1a.
 */
START_TEST(test_combined_1f1b_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct ep_layer_comm none, ec;
	struct framework fw;
	struct plan_error err;
	double a;

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML, "  experts: 8\n  top_k: 1\n", 4);
	p.global_batch = 16;
	topology_plan(&p, &c, &lay);
	memset(&cl, 0, sizeof(cl));
	ep_layer_comm(&m, &p, &c, NULL, &lay, &cl, &none);
	a = none.a2a_s;
	ck_assert(a > 0.0);
	ck_assert_double_eq_tol(none.fwd_s, 2.0 * a, 1e-15);
	cl.mlp_fwd_s = 0.5 * a;
	cl.moe_wgrad_mem_s = 0.25 * a;
	cl.fwd_s = 2.5 * a;
	cl.bwd_s = 1.45 * a;
	p.moe_overlap = PLAN_MOE_OVERLAP_COMBINED_1F1B;
	ck_assert(plan_validate(&p, &m, &c, &err));
	ep_layer_comm(&m, &p, &c, NULL, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.fwd_s, 1.475 * a, 1e-12 * a);
	ck_assert_double_eq_tol(ec.bwd_s, 0.5 * a, 1e-12 * a);
	ck_assert_double_eq_tol(ec.a2a_s, a, 1e-15);
	framework_init_default(&fw);
	fw.overlap_slowdown = 1.2;
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.fwd_s, 1.58 * a, 1e-12 * a);
	ck_assert_double_eq_tol(ec.bwd_s, 0.8 * a, 1e-12 * a);
	p.pp = 2;
	ep_layer_comm(&m, &p, &c, NULL, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.fwd_s, 1.65 * a, 1e-12 * a);
	ck_assert_double_eq_tol(ec.bwd_s, 1.0 * a, 1e-12 * a);
	/* HybridEP holding 33 of 132 SMs: the compute beside it runs
	 * 132 / 99 = 4/3 as long. With every phase's compute far longer
	 * than its all-to-all each phase adds (4/3 - 1) x its all-to-all:
	 * pp 1, share 0.75: forward 0.25 (d + k) + 0.75 x (d + k) / 3 =
	 * 0.5 (d + k), the backward the same, d + k the dispatch and combine
	 * without the overlap; without the SM count (overlap_slowdown 1)
	 * 0.25 (d + k). */
	p.pp = 1;
	fw.overlap_slowdown = 1.0;
	fw.moe_dispatcher = FRAMEWORK_MOE_DISPATCH_HYBRIDEP;
	c.gpu.sm_count = 132;
	cl.mlp_fwd_s = 1.0; /* experts 1 s, attention blocks 1 s each way */
	cl.fwd_s = 2.0;
	cl.bwd_s = 3.0;
	cl.moe_wgrad_mem_s = 0.0;
	p.moe_overlap = PLAN_MOE_OVERLAP_NONE;
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &none);
	ck_assert(none.fwd_s > 0.0 && none.fwd_s < 1e-3);
	p.moe_overlap = PLAN_MOE_OVERLAP_COMBINED_1F1B;
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.fwd_s, 0.25 * none.fwd_s, 1e-12 * none.fwd_s);
	fw.moe_dispatcher_sms = 33;
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.fwd_s, 0.5 * none.fwd_s, 1e-12 * none.fwd_s);
	ck_assert_double_eq_tol(ec.bwd_s, 0.5 * none.bwd_s, 1e-12 * none.bwd_s);
	cluster_release(&c);
}
END_TEST

/* What Megatron-Core asserts of overlap_moe_expert_parallel_comm
 * (transformer_config.py, d98e8a6 l. 3002-3046), refused with why. */
START_TEST(test_combined_1f1b_refusals)
{
	static const struct {
		int ep, pp, vpp, recompute, modules;
		const char *want;
	} cases[] = {
		{ 1, 1, 1, PLAN_RECOMPUTE_NONE, 0, "needs an MoE model and ep > 1" },
		{ 2, 2, 1, PLAN_RECOMPUTE_NONE, 0, "needs --vpp 2 or more" },
		{ 4, 1, 1, PLAN_RECOMPUTE_FULL, 0, "full recomputation" },
		{ 4, 1, 1, PLAN_RECOMPUTE_SELECTIVE, 1 << PLAN_RM_MOE, "--recompute-modules moe" },
	};
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_error err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML, "  experts: 8\n  top_k: 1\n", 4);
		m.layers = 8;
		p.global_batch = 16;
		p.moe_overlap = PLAN_MOE_OVERLAP_COMBINED_1F1B;
		p.ep = cases[i].ep;
		p.pp = cases[i].pp;
		p.dp = 4 / p.pp;
		p.global_batch = 4 * p.dp;
		p.vpp = cases[i].vpp;
		p.recompute = cases[i].recompute;
		p.recompute_modules = cases[i].modules;
		ck_assert_msg(!plan_validate(&p, &m, &c, &err), "case %zu passed", i);
		ck_assert_msg(strstr(err.message, cases[i].want), "case %zu: %s", i, err.message);
		cluster_release(&c);
	}
}
END_TEST

/* plan-cli moeovl: an overlap with nothing to hide, or on a dispatcher
 * it is not priced on, is refused rather than ignored: Lancet without an
 * MoE model or with ep 1 (no all-to-all), Lancet on DeepEP/HybridEP
 * (expert_par.c prices it on the alltoall dispatcher only), either on the
 * allgather dispatcher (Megatron-Core: alltoall or flex only,
 * transformer_config.py l. 3016-3019). */
START_TEST(test_moe_overlap_refusals)
{
	static const struct {
		int overlap, ep;
		bool dense;
		const char *fw, *want;
	} cases[] = {
		{ PLAN_MOE_OVERLAP_LANCET, 1, false, NULL, "--moe-overlap lancet overlaps the expert all-to-alls" },
		{ PLAN_MOE_OVERLAP_LANCET, 1, true, NULL, "needs an MoE model and ep > 1" },
		{ PLAN_MOE_OVERLAP_LANCET, 4, false, "name: d\nmoe_dispatcher: deepep\n", "use combined-1f1b or none" },
		{ PLAN_MOE_OVERLAP_LANCET, 4, false, "name: h\nmoe_dispatcher: hybridep\n",
		  "'h', whose token dispatcher is hybridep" },
		{ PLAN_MOE_OVERLAP_LANCET, 4, false, "name: g\nmoe_dispatcher: allgather_mask\n", "no all-to-all" },
		{ PLAN_MOE_OVERLAP_COMBINED_1F1B, 4, false, "name: g\nmoe_dispatcher: allgather_mask\n",
		  "--moe-overlap combined-1f1b is not modelled with framework 'g', whose token dispatcher is allgather_mask" },
	};
	struct cluster c;
	struct model m, dense;
	struct plan p;
	struct framework fw;
	struct estimate e;
	struct plan_error err;

	test_load_model(&dense, GPT3_YAML);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct estimate_options opt = { 0 };

		mixtral_fixture(&c, &m, &p, 1, 8, cases[i].ep);
		p.global_batch = 8;
		p.seq_len = 1024;
		p.moe_overlap = cases[i].overlap;
		if (cases[i].fw) {
			test_load_framework(&fw, cases[i].fw);
			opt.framework = &fw;
		}
		ck_assert_msg(!estimate_plan(cases[i].dense ? &dense : &m, &c, &p, &opt, &e, &err), "case %zu passed", i);
		ck_assert_msg(strstr(err.message, cases[i].want), "case %zu: %s", i, err.message);
		/* The same plan without the overlap runs. */
		p.moe_overlap = PLAN_MOE_OVERLAP_NONE;
		if (!cases[i].dense)
			ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "case %zu: %s", i, err.message);
		cluster_release(&c);
	}
}
END_TEST

START_TEST(test_etp_comm_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct ep_layer_comm ec;

	etp_toy_fixture(&c, &m, &p);
	topology_plan(&p, &c, &lay);
	ck_assert_int_eq(lay.etp.size, 2);
	memset(&cl, 0, sizeof(cl));
	ep_layer_comm(&m, &p, &c, NULL, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.bytes, 1048576.0, 1e-6);
	ck_assert_double_eq_tol(ec.etp_s, 2.297152e-5, 1e-15);
	ck_assert_double_eq_tol(ec.fwd_s, 2.0 * ec.a2a_s + 2.297152e-5, 1e-15);
	ck_assert_double_eq_tol(ec.bwd_s, ec.fwd_s, 1e-15);
	/* On the wire (review6, issue 25): the dispatch and the combine
	 * each send 3/4 of the buffer over ep 4, the etp pair 1/2 of the
	 * 2,097,152 gathered each: 2 x 786,432 + 2 x 1,048,576 = 3,670,016 B
	 * a pass, forward and backward alike. */
	ck_assert_double_eq_tol(ec.fwd_bytes, 3670016.0, 1e-6);
	ck_assert_double_eq_tol(ec.bwd_bytes, 3670016.0, 1e-6);
	p.etp = 1;
	p.ep = 8;
	topology_plan(&p, &c, &lay);
	ep_layer_comm(&m, &p, &c, NULL, &lay, &cl, &ec);
	ck_assert_double_eq(ec.etp_s, 0.0);
	/* ep 8, etp 1: 2 x 7/8 x 1,048,576 = 1,835,008 B a pass. */
	ck_assert_double_eq_tol(ec.fwd_bytes, 1835008.0, 1e-6);
	ck_assert_double_eq_tol(ec.bwd_bytes, 1835008.0, 1e-6);
	cluster_release(&c);
}
END_TEST

/*
 * bytes_per_iteration.ep counts what the time on the ep line sends
 * (review6, issue 25; it counted the all-to-all dispatcher's all-to-alls
 * only, under full recomputation only). test_etp_comm_by_hand's plan
 * (toy GPT, 2 layers both MoE, 8 experts top-1, tp 2 = etp, dp 4, ep 4,
 * global batch 4: one micro-batch): 3,670,016 B a pass and layer, so
 * 2 layers x 2 passes = 14,680,064 B; recomputing the moe module
 * (selective, --recompute-modules moe) repeats the forward's:
 * 22,020,096 B, as full recomputation does.
 */
START_TEST(test_ep_bytes_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	etp_toy_fixture(&c, &m, &p);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.bytes.ep, 14680064.0, 1e-3);
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	p.recompute_modules = 1 << PLAN_RM_MOE;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.bytes.ep, 22020096.0, 1e-3);
	p.recompute = PLAN_RECOMPUTE_FULL;
	p.recompute_modules = 0;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.bytes.ep, 22020096.0, 1e-3);
	cluster_release(&c);
}
END_TEST

/*
 * Megatron-Core core_v0.5-v0.6's allgather dispatcher (framework
 * moe_dispatcher allgather_mask; token_dispatcher.py): the toy GPT, 8
 * experts top-2, b 1, s 1024, tp 2 with SP, ep 1, on the toy cluster (2
 * ranks of one node, 100 GB/s, 1 us a ring step, launch 2 us). Every
 * rank gathers ep x b s = 1024 tokens: hidden states 1024 x 1024 x 2 =
 * 2,097,152 B, indices 8 x 2 x 1024 = 16,384 B, probs 2 x 2 x 1024 =
 * 4,096 B. A 2-rank ring gather or reduce-scatter is one step of 1 us +
 * N/2 / 1e11: 11.48576 us, 1.08192 us, 1.02048 us. Forward: the three
 * gathers and the output's reduce-scatter, 25.07392 us; backward: the
 * hidden states' reduce-scatter and all-gather and the probs'
 * reduce-scatter, 23.992 us. No all-to-all. The host: four
 * synchronisations (two masked_select, nonzero, .cpu()), two launches
 * each: 16 us, whatever dropless says. Without SP (and ep 1) no
 * collective.
 */
START_TEST(test_allgather_mask_comm_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct ep_layer_comm ec;
	struct ep_layer_fixed ef;
	struct framework fw;

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML_LAUNCH("2 us"), "  experts: 8\n  top_k: 2\n", 4);
	test_load_framework(&fw, ALLGATHER_MASK_YAML);
	p.tp = 2;
	p.ep = 1;
	p.sequence_parallel = true;
	topology_plan(&p, &c, &lay);
	memset(&cl, 0, sizeof(cl));
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.fwd_s, 25.07392e-6, 1e-15);
	ck_assert_double_eq_tol(ec.bwd_s, 23.992e-6, 1e-15);
	ck_assert_double_eq(ec.a2a_s, 0.0);
	ck_assert_double_eq_tol(ec.total_s, 49.06592e-6, 1e-15);
	ep_layer_fixed(&m, &p, &c, &fw, &lay, &ef);
	ck_assert_double_eq_tol(ef.sync_s, 16e-6, 1e-15);
	/* On the wire (review6, issue 25), half of each 2-rank buffer:
	 * forward (2 x 2,097,152 + 16,384 + 4,096) / 2 = 2,107,392 B,
	 * backward (2 x 2,097,152 + 4,096) / 2 = 2,099,200 B. */
	ck_assert_double_eq_tol(ec.fwd_bytes, 2107392.0, 1e-6);
	ck_assert_double_eq_tol(ec.bwd_bytes, 2099200.0, 1e-6);
	/* Top-1: the probs are not masked_select-ed, three (12 us). */
	m.moe.top_k = 1;
	ep_layer_fixed(&m, &p, &c, &fw, &lay, &ef);
	ck_assert_double_eq_tol(ef.sync_s, 12e-6, 1e-15);
	m.moe.top_k = 2;
	p.sequence_parallel = false;
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq(ec.total_s, 0.0);
	ck_assert_double_eq(ec.fwd_bytes + ec.bwd_bytes, 0.0);
	cluster_release(&c);
}
END_TEST

/* A framework with Megatron-Core's flex dispatcher on DeepEP. */
#define DEEPEP_YAML "name: dp\nmoe_dispatcher: deepep\n"

/*
 * DeepEP's dispatch and combine (framework moe_dispatcher deepep;
 * expert_par.c deepep_time) by hand: the toy GPT (h 1024), 8 experts
 * top-2, b 1, s 1024, tp 1, ep 8 over the toy cluster's 2 nodes of 4
 * (NVLink 100 GB/s, 1 us; one 100 Gbit/s NIC a node: 3.125 GB/s a GPU,
 * 10 us). DeepEP's fractions: 153 / 200 of NVLink = 76.5 GB/s, 43 / 50
 * of the NIC share = 2.6875 GB/s. A token: 2 x 1024 B bf16, plus 2 x
 * (8 + 4) B of indices and probs in the dispatch: 2,072 B.
 * Distinct ranks of a token: 8 (1 - 7/8 x 6/7) = 2; distinct nodes:
 * 2 (1 - 4/8 x 3/7) = 11/7. Dispatch: RDMA 1024 x 2072 x 11/7 x 1/2 =
 * 1,667,072 B / 2.6875e9 = 620.3059 us + 10 us = 630.3059 us; NVLink
 * 1024 x 2072 x 2 x 3/4 = 3,182,592 B / 76.5e9 + 1 us = 42.6025 us; at
 * once: 630.3059 us. Combine: RDMA 1024 x 2048 x 11/14 = 1,647,762.29 B:
 * 613.1209 + 10 = 623.1209 us. Forward and backward each 1253.4267 us.
 * With max_nodes 1 a token crosses once: 1,060,864 B (404.7401 us) and
 * 1,048,576 B (400.1678 us), 804.9079 us. The host: one wait a forward
 * dispatch, two launches (2 us each): 4 us, no gathered counts.
 */
START_TEST(test_deepep_comm_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct ep_layer_comm ec;
	struct ep_layer_fixed ef;
	struct framework fw;

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML_LAUNCH("2 us"), "  experts: 8\n  top_k: 2\n", 8);
	test_load_framework(&fw, DEEPEP_YAML);
	topology_plan(&p, &c, &lay);
	ck_assert_int_eq(lay.ep.nodes, 2);
	memset(&cl, 0, sizeof(cl));
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.a2a_s, 630.3059e-6, 1e-10);
	ck_assert_double_eq_tol(ec.intra_s, 42.6025e-6, 1e-10);
	ck_assert_double_eq_tol(ec.fwd_s, 1253.4267e-6, 1e-10);
	ck_assert_double_eq_tol(ec.bwd_s, ec.fwd_s, 1e-15);
	ck_assert_double_eq_tol(ec.total_s, 2.0 * ec.fwd_s, 1e-15);
	ck_assert_double_eq(ec.etp_s, 0.0);
	/* Two copies of 2,048 B a token: 4,194,304 B, 7/8 of it sent twice. */
	ck_assert_double_eq_tol(ec.bytes, 4194304.0, 1e-6);
	ck_assert_double_eq_tol(ec.fwd_bytes, 7340032.0, 1e-6);
	ep_layer_fixed(&m, &p, &c, &fw, &lay, &ef);
	ck_assert_double_eq_tol(ef.sync_s, 4e-6, 1e-15);
	m.moe.max_nodes = 1;
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.fwd_s, 804.9079e-6, 1e-10);
	/* No EP: nothing to dispatch. */
	p.ep = 1;
	topology_plan(&p, &c, &lay);
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq(ec.total_s, 0.0);
	cluster_release(&c);
}
END_TEST

/* A framework with Megatron-Core's flex dispatcher on HybridEP. */
#define HYBRIDEP_YAML "name: hp\nmoe_dispatcher: hybridep\n"

/*
 * HybridEP (moe_dispatcher hybridep; expert_par.c deepep_time with its
 * own NVLink fractions) by hand: test_deepep_comm_by_hand's toy, ep 4 on
 * one node of 4 (NVLink 100 GB/s, 1 us). Distinct ranks of a token:
 * 4 (1 - 6/8 x 5/7) = 13/7. Dispatch: 1024 x 2072 x 13/7 x 3/4 =
 * 2,955,264 B at 764.03 / 900 x 100 GB/s = 84.8922 GB/s: 34.8120 us +
 * 1 us = 35.8120 us. Combine: 1024 x 2048 x 13/7 x 3/4 = 2,921,033.14 B
 * at 737.13 / 900 x 100 GB/s = 81.9033 GB/s: 35.6644 + 1 = 36.6644 us.
 * Forward 72.4764 us, the backward the same (DeepEP at 76.5 GB/s both
 * ways: 78.8143 us). The host, dropless only: one wait a forward, 2 x
 * 2 us. Across the
 * toy's 2 nodes (ep 8) RDMA sets the time: test_deepep_comm_by_hand's
 * 1253.4267 us. Latent MoE (moe.latent_size 512): tokens cross at width
 * 512, 1,024 B + 24 B a dispatched token: dispatch 1024 x 1048 x 13/7 x
 * 3/4 = 1,494,747.43 B / 84.8922 GB/s + 1 us = 18.6076 us, combine
 * 1024 x 1024 x 13/7 x 3/4 = 1,460,516.57 B / 81.9033 GB/s + 1 us =
 * 18.8322 us: forward 37.4398 us.
 */
START_TEST(test_hybridep_comm_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct ep_layer_comm ec;
	struct ep_layer_fixed ef;
	struct framework fw, dfw;

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML_LAUNCH("2 us"), "  experts: 8\n  top_k: 2\n", 4);
	test_load_framework(&fw, HYBRIDEP_YAML);
	test_load_framework(&dfw, DEEPEP_YAML);
	topology_plan(&p, &c, &lay);
	ck_assert_int_eq(lay.ep.nodes, 1);
	memset(&cl, 0, sizeof(cl));
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.a2a_s, 35.8120e-6, 1e-10);
	ck_assert_double_eq_tol(ec.intra_s, 35.8120e-6, 1e-10);
	ck_assert_double_eq(ec.inter_s, 0.0);
	ck_assert_double_eq_tol(ec.fwd_s, 72.4764e-6, 1e-10);
	ck_assert_double_eq_tol(ec.bwd_s, ec.fwd_s, 1e-15);
	ck_assert_double_eq_tol(ec.total_s, 2.0 * ec.fwd_s, 1e-15);
	ep_layer_comm(&m, &p, &c, &dfw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.fwd_s, 78.8143e-6, 1e-10);
	m.moe.latent_size = 512;
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.a2a_s, 18.6076e-6, 1e-10);
	ck_assert_double_eq_tol(ec.fwd_s, 37.4398e-6, 1e-10);
	m.moe.latent_size = 0;
	/* Dropped and padded (the toy is not dropless): the size is known
	 * on the host, no wait; dropless, one wait a forward. */
	ep_layer_fixed(&m, &p, &c, &fw, &lay, &ef);
	ck_assert_double_eq(ef.sync_s, 0.0);
	m.moe.dropless = true;
	ep_layer_fixed(&m, &p, &c, &fw, &lay, &ef);
	ck_assert_double_eq_tol(ef.sync_s, 4e-6, 1e-15);
	m.moe.dropless = false;
	/* The dispatcher carries the TP gather, as DeepEP's (a shared-expert-free MoE). */
	p.tp = 2;
	p.sequence_parallel = true;
	ck_assert(ep_dispatcher_carries_tp(&m, &p, &fw));
	p.tp = 1;
	p.sequence_parallel = false;
	p.ep = p.dp = 8;
	topology_plan(&p, &c, &lay);
	ep_layer_comm(&m, &p, &c, &fw, &lay, &cl, &ec);
	ck_assert_double_eq_tol(ec.fwd_s, 1253.4267e-6, 1e-10);
	cluster_release(&c);
}
END_TEST

/*
 * The flex dispatcher's buffers (expert_par.c ep_dispatcher_buffer_bytes)
 * by hand on the toy (h 1024: 2,048-byte bf16 tokens), 8 experts, b 1,
 * s 1024, tp 1.
 * DeepEP, 10 channels; a token's payload 2048 + 8 (SourceMeta) + 128 x 8
 * (indices) + 128 x 4 (weights) + 128 x 4 (scales) = 4,104 B. EP 8: 8
 * NVLink peers, 1 RDMA rank, 256 receive tokens: 10 x 8 x (2 + 3) x 4 =
 * 1,600 B of counters + 10 x 8 x 256 x 4104 = 84,049,920 B, rounded up
 * to 128: 84,051,584 B; no RDMA buffer at 8 ranks. EP 16: 2 RDMA ranks,
 * 288 NVLink and 140 RDMA receive tokens (128 aligned up to the dispatch's
 * 20-token chunks): NVLink 10 x 8 x 7 x 4 = 2,240 + 10 x 8 x 288 x 4104 =
 * 94,556,160 -> 94,558,464; RDMA 10 x 2 x 18 x 2 x 4 = 2,880 + 10 x 2 x
 * 140 x 2 x (4104 + 16) = 23,072,000 -> 23,074,944; 117,633,408 B.
 * HybridEP, ep 4 in one node of 4 (R 4, N 1, 2 local experts): M = 1024
 * x 4 = 4,096 tokens of 2048 + 4 x (2 x 4) probabilities + 4 x 8 scales
 * = 2,112 B: 8,650,752 B. ep 8 over the 2 nodes (R 4, N 2, 1 local
 * expert, 4 probabilities a token): M = 8,192 x (2048 + 16 + 32) =
 * 17,170,432; the dispatch's inputs 1024 x (2048 + 4 x 4 x 2 + 32) =
 * 2,162,688 and its 1024 tokens to the other node 1024 x (2048 + 16 +
 * 32) = 2,146,304; the combine's two 1024 x (2048 + 16) = 4,227,072:
 * 25,706,496 B. The all-to-all dispatcher has none; a stage's memory
 * "other" grows by exactly these bytes.
 */
START_TEST(test_dispatcher_buffers_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework deepep, hybrid;
	struct estimate plain, with;
	struct plan_error err;
	struct estimate_options opt = { .dp_algo = COLL_ALGO_RING, .compressor = NULL, .framework = &hybrid };

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML, "  experts: 8\n  top_k: 2\n", 8);
	test_load_framework(&deepep, DEEPEP_YAML);
	test_load_framework(&hybrid, HYBRIDEP_YAML);
	ck_assert_double_eq_tol(ep_dispatcher_buffer_bytes(&m, &p, &c, &deepep), 84051584.0, 0.5);
	ck_assert_double_eq(ep_dispatcher_buffer_bytes(&m, &p, &c, NULL), 0.0);
	ck_assert_double_eq_tol(ep_dispatcher_buffer_bytes(&m, &p, &c, &hybrid), 25706496.0, 0.5);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &plain, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &with, &err), "%s", err.message);
	ck_assert_double_eq_tol(with.memory.other - plain.memory.other, 25706496.0, 0.5);
	p.ep = p.dp = 16;
	ck_assert_double_eq_tol(ep_dispatcher_buffer_bytes(&m, &p, &c, &deepep), 117633408.0, 0.5);
	p.ep = p.dp = 4;
	ck_assert_double_eq_tol(ep_dispatcher_buffer_bytes(&m, &p, &c, &hybrid), 8650752.0, 0.5);
	p.ep = 1;
	ck_assert_double_eq(ep_dispatcher_buffer_bytes(&m, &p, &c, &hybrid), 0.0);
	cluster_release(&c);
}
END_TEST

/*
 * MoEFlexTokenDispatcher permutes once after DeepEP's dispatch and
 * unpermutes once before its combine; the all-to-all dispatcher also
 * permutes before and sorts the chunks after (four passes with more than
 * one local expert). test_moe_permute_passes' case at ep 2 (4 local
 * experts, top-2, 1024 tokens, h 1024, 1000 GB/s, 1 us a kernel): two
 * passes of 4 x 1024 x 2 x 1024 = 8,388,608 B fewer, 16.777216 us, and
 * two kernels, 2 us: 18.777216 us less forward memory time. HybridEP
 * permutes inside its dispatch and combine, one pass each way: the same.
 * One case a dispatcher (_i: DEEPEP_YAML, HYBRIDEP_YAML).
 */
static const char *const flex_dispatcher_yaml[] = { DEEPEP_YAML, HYBRIDEP_YAML };

START_TEST(test_flex_permute_passes)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct compute_layer a2a, flex;

	moe_toy_fixture(&c, &m, &p, PERMUTE_CLUSTER_YAML, "  experts: 8\n  top_k: 2\n  capacity_factor: 1.0\n", 2);
	test_load_framework(&fw, flex_dispatcher_yaml[_i]);
	compute_layer_time(&m, &p, &c, NULL, true, &a2a);
	compute_layer_time(&m, &p, &c, &fw, true, &flex);
	ck_assert_double_eq_tol(a2a.fwd_mem_s - flex.fwd_mem_s, 18.777216e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * The allgather_mask dispatcher's gather and reduce-scatter over TP x EP
 * are an MoE layer's sequence-parallel pair (Megatron-Core core_v0.6.0
 * moe_layer.py: router, dispatcher, experts, nothing else): the TP line
 * does not count the MLP's pair as well (plan-cli review6). The toy GPT
 * (2 layers, both MoE), 8 experts top-2, b 1, s 1024, tp 2 with SP, ep 1,
 * one micro-batch, on the toy cluster: one AG or RS of b s h x 2 =
 * 2,097,152 B over 2 ranks is 1 us + 1,048,576 / 1e11 = 11.48576 us, a
 * pair 22.97152 us. Each layer's MLP pair runs once forward and once
 * backward: the TP line is 2 x 2 x 22.97152 = 91.88608 us shorter than
 * with an all-to-all dispatcher around which the layer gathers and
 * reduce-scatters its tokens (moe_tp_in_dispatcher false: torchtitan),
 * and the pair's bytes, 2 x 2 x 2 x (2 - 1) / 2 x 2,097,152 =
 * 8,388,608 B, leave the TP traffic. A shared expert is an MLP that
 * gathers and reduces its input itself: no change then.
 */
START_TEST(test_allgather_mask_tp_pair_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct tp_layer_comm tc;
	struct framework ag, a2a;
	struct plan_error err;
	struct estimate e_ag, e_a2a;
	struct estimate_options o_ag = { .framework = &ag }, o_a2a = { .framework = &a2a };

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML, "  experts: 8\n  top_k: 2\n", 1);
	ck_assert_msg(framework_load_string(&ag, "ag.yaml", "name: ag\nmoe_dispatcher: allgather_mask\n", &err),
		      "%s", err.message);
	ck_assert_msg(framework_load_string(&a2a, "a2a.yaml", "name: a2a\nmoe_tp_in_dispatcher: false\n", &err),
		      "%s", err.message);
	p.tp = 2;
	p.sequence_parallel = true;
	topology_plan(&p, &c, &lay);
	compute_layer_time(&m, &p, &c, NULL, false, &cl);
	tp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &tc);
	ck_assert_double_eq_tol(tc.mlp_fwd_s, 22.97152e-6, 1e-12);
	ck_assert_double_eq_tol(tc.mlp_bwd_s, 22.97152e-6, 1e-12);
	ck_assert(ep_dispatcher_carries_tp(&m, &p, &ag));
	ck_assert(!ep_dispatcher_carries_tp(&m, &p, &a2a));
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_ag, &e_ag, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_a2a, &e_a2a, &err), "%s", err.message);
	ck_assert_double_eq_tol(e_a2a.breakdown.tp_comm - e_ag.breakdown.tp_comm, 91.88608e-6, 1e-12);
	ck_assert_double_eq_tol(e_a2a.bytes.tp - e_ag.bytes.tp, 8388608.0, 1e-3);
	/* They go to the EP traffic (review6): per layer the forward's
	 * 2,107,392 and the backward's 2,099,200 B of
	 * test_allgather_mask_comm_by_hand, 2 layers: 8,413,184 B; full
	 * recomputation gathers again: + 2 x 2,107,392 = 12,627,968 B. No
	 * all-to-all, so no per-all-to-all figure. */
	ck_assert_double_eq_tol(e_ag.bytes.ep, 8413184.0, 1e-3);
	ck_assert_double_eq(e_ag.details.ep_bytes, 0.0);
	p.recompute = PLAN_RECOMPUTE_FULL;
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_ag, &e_ag, &err), "%s", err.message);
	ck_assert_double_eq_tol(e_ag.bytes.ep, 12627968.0, 1e-3);
	p.recompute = PLAN_RECOMPUTE_NONE;
	m.moe.shared_experts = 1;
	ck_assert(!ep_dispatcher_carries_tp(&m, &p, &ag));
	p.sequence_parallel = false;
	m.moe.shared_experts = 0;
	ck_assert(!ep_dispatcher_carries_tp(&m, &p, &ag));
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli a2apair: Megatron-Core's all-to-all dispatcher (core_v0.10.0-
 * core_v0.14.0 token_dispatcher.py, MoEAlltoAllTokenDispatcher) takes the
 * MoE layer's s/t shard and gathers and reduce-scatters the routed tokens
 * over expert TP itself, so the layer's MLP runs no SP pair over TP
 * (framework moe_tp_in_dispatcher, default true); false (torchtitan's
 * PrepareModuleInputOutput) keeps the pair. The toy GPT (2 layers, both
 * MoE), 8 experts top-2 (capacity factor 1), b 1, s 1024, tp 2 with SP
 * (etp = tp), ep 1, dp 1, one micro-batch, on the toy cluster (100 GB/s
 * in a node, 1 us a ring step). The MLP's pair, as in
 * test_allgather_mask_tp_pair_by_hand, is 22.97152 us a pass: the TP line
 * is 2 layers x 2 passes x 22.97152 = 91.88608 us shorter with the key
 * than without, and the TP bytes 8,388,608 B fewer. The expert-TP
 * collectives stay on the ep line either way: a rank's all-to-all buffer
 * is k (b s / t) h x 2 = 2 x 512 x 1024 x 2 = 2,097,152 B, its 2 etp
 * ranks gather 4,194,304 B: 1 us + 2,097,152 / 1e11 = 21.97152 us, the
 * reduce-scatter the same, 43.94304 us forward and again backward, no
 * all-to-all over ep 1: ep_comm 2 x 2 x 43.94304 = 175.77216 us under
 * both. With etp 1 the layer has no collective over TP at all: the TP
 * line as with etp 2, ep_comm 0. No SP, a shared expert, a parallel
 * block, or the key false: the MLP keeps its pair. fw NULL (the built-in
 * framework) is Megatron-Core's.
 */
START_TEST(test_alltoall_tp_pair_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework mc, tt;
	struct plan_error err;
	struct estimate e_mc, e_tt, e_etp1;
	struct estimate_options o_mc = { .framework = &mc }, o_tt = { .framework = &tt };

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML, "  experts: 8\n  top_k: 2\n", 1);
	ck_assert_msg(framework_load_string(&mc, "mc.yaml", "name: mc\n", &err), "%s", err.message);
	ck_assert(mc.moe_tp_in_dispatcher);
	ck_assert_msg(framework_load_string(&tt, "tt.yaml", "name: tt\nmoe_tp_in_dispatcher: false\n", &err),
		      "%s", err.message);
	ck_assert(!tt.moe_tp_in_dispatcher);
	p.tp = 2;
	p.sequence_parallel = true;
	ck_assert(ep_dispatcher_carries_tp(&m, &p, &mc));
	ck_assert(ep_dispatcher_carries_tp(&m, &p, NULL));
	ck_assert(!ep_dispatcher_carries_tp(&m, &p, &tt));
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_mc, &e_mc, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_tt, &e_tt, &err), "%s", err.message);
	ck_assert_double_eq_tol(e_tt.breakdown.tp_comm - e_mc.breakdown.tp_comm, 91.88608e-6, 1e-12);
	ck_assert_double_eq_tol(e_tt.bytes.tp - e_mc.bytes.tp, 8388608.0, 1e-3);
	ck_assert_double_eq_tol(e_mc.breakdown.ep_comm, 175.77216e-6, 1e-12);
	ck_assert_double_eq_tol(e_tt.breakdown.ep_comm, 175.77216e-6, 1e-12);
	p.etp = 1;
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_mc, &e_etp1, &err), "%s", err.message);
	ck_assert_double_eq_tol(e_etp1.breakdown.tp_comm, e_mc.breakdown.tp_comm, 1e-15);
	ck_assert_double_eq(e_etp1.breakdown.ep_comm, 0.0);
	p.etp = 0;
	m.moe.shared_experts = 1;
	ck_assert(!ep_dispatcher_carries_tp(&m, &p, &mc));
	m.moe.shared_experts = 0;
	m.parallel_block = true;
	ck_assert(!ep_dispatcher_carries_tp(&m, &p, &mc));
	m.parallel_block = false;
	p.sequence_parallel = false;
	ck_assert(!ep_dispatcher_carries_tp(&m, &p, &mc));
	ck_assert(!ep_dispatcher_carries_tp(&m, &p, NULL));
	cluster_release(&c);
}
END_TEST

/*
 * TP compression where the dispatcher runs an MoE layer's MLP pair
 * (plan-cli review6, issue 25; ep_dispatcher_carries_tp): the layer has
 * one TP site left, the attention's; its MLP output is reduced by the
 * dispatcher's reduce-scatter (over TP x EP for allgather_mask, over
 * expert TP for Megatron-Core's all-to-all), on the ep line, which no TP
 * compressor replaces. The toy GPT (2 layers, both MoE, 8 experts top-2),
 * tp 2 with SP, ep 1, one micro-batch of 1024, Top-K keeping 5 % as in
 * test_topk_tp_by_hand (test-compression.c): layer 2 is compressed
 * (above half the layers). X = b s h = 1,048,576. A site's encode and
 * decode: 10 us + 8 x 2X / 1e12 and 10 us + 2 x 2 x 2X / 1e12, 4.5165824e-5
 * s. Its collectives: the uncompressed AG + RS, 2 x (1 us + 2X / 2 / 1e11)
 * = 2.297152e-5 s, become the Top-K all-gather of t x 52,429 x 10 B (1 us
 * + 1,048,580 / 2 / 1e11 = 6.2429e-6 s) and the next block's uncompressed
 * all-gather (1.148576e-5 s): 1.772866e-5 s, 5.24286e-6 s less a site.
 * Bytes a site: 2,097,152 sent before, 524,290 + 1,048,576 after:
 * 524,286 B less. So the allgather dispatcher's TP line drops by one
 * site's 5.24286e-6 s and its compression line is one site's
 * 4.5165824e-5 s; so does Megatron-Core's all-to-all's (moe_tp_in_dispatcher
 * true); with moe_tp_in_dispatcher false (torchtitan: the MLP's own pair)
 * two sites: 1.048572e-5 s and 9.0331648e-5 s.
 */
START_TEST(test_allgather_mask_tp_compression_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework ag, a2a, tt;
	struct compressor cmp;
	struct plan_error err;
	struct estimate on, off;
	struct estimate_options o_ag = { .compressor = &cmp, .framework = &ag };
	struct estimate_options o_a2a = { .compressor = &cmp, .framework = &a2a };
	struct estimate_options o_tt = { .compressor = &cmp, .framework = &tt };

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML, "  experts: 8\n  top_k: 2\n", 1);
	test_load_framework(&ag, ALLGATHER_MASK_YAML);
	test_load_framework(&a2a, "name: a2a\n");
	test_load_framework(&tt, "name: tt\nmoe_tp_in_dispatcher: false\n");
	ck_assert_msg(compressor_load_string(&cmp, "c.yaml", "name: t\nmethod: topk\nfraction: 0.05\n"
					     "encode_passes: 8\ndecode_passes: 2\nencode_latency: 10 us\n"
					     "decode_latency: 10 us\n", &err), "%s", err.message);
	p.tp = 2;
	p.sequence_parallel = true;
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_ag, &off, &err), "%s", err.message);
	p.compress.tp = true;
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_ag, &on, &err), "%s", err.message);
	ck_assert_int_eq(on.details.compressed_layers, 1);
	ck_assert_double_eq_tol(off.breakdown.tp_comm - on.breakdown.tp_comm, 5.24286e-6, 1e-15);
	ck_assert_double_eq_tol(on.breakdown.compression, 4.5165824e-5, 1e-15);
	ck_assert_double_eq_tol(off.bytes.tp - on.bytes.tp, 524286.0, 1e-3);
	ck_assert_double_eq_tol(on.bytes.ep, off.bytes.ep, 1e-3);
	p.compress.tp = false;
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_a2a, &off, &err), "%s", err.message);
	p.compress.tp = true;
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_a2a, &on, &err), "%s", err.message);
	ck_assert_double_eq_tol(off.breakdown.tp_comm - on.breakdown.tp_comm, 5.24286e-6, 1e-15);
	ck_assert_double_eq_tol(on.breakdown.compression, 4.5165824e-5, 1e-15);
	ck_assert_double_eq_tol(off.bytes.tp - on.bytes.tp, 524286.0, 1e-3);
	p.compress.tp = false;
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_tt, &off, &err), "%s", err.message);
	p.compress.tp = true;
	ck_assert_msg(estimate_plan(&m, &c, &p, &o_tt, &on, &err), "%s", err.message);
	ck_assert_double_eq_tol(off.breakdown.tp_comm - on.breakdown.tp_comm, 2.0 * 5.24286e-6, 1e-15);
	ck_assert_double_eq_tol(on.breakdown.compression, 9.0331648e-5, 1e-15);
	ck_assert_double_eq_tol(off.bytes.tp - on.bytes.tp, 1048572.0, 1e-3);
	cluster_release(&c);
}
END_TEST

/*
 * The allgather_mask dispatcher's permutations (compute.c,
 * allgather_mask_permute_bytes), on the 1000 GB/s GPU of
 * test_moe_permute_passes (efficiency 1, launch 1 us): the toy GPT, 8
 * experts top-2, b 1, s 1024, tp 1, ep 8. Gathered over EP: G = 8 x 1024
 * = 8192 tokens; one local expert's rows R = 2 x 8192 / 8 = 2048.
 * Forward (28 R + 6 G) h = (57,344 + 49,152) x 1024 = 109,051,904 B and
 * 26 launches: 135.051904 us. Backward (34 R + 2 G) h = 86,016 x 1024 =
 * 88,080,384 B and 12 launches: 100.080384 us. The all-to-all
 * dispatcher's two passes of 4 bytes over the k b s h = 2,097,152
 * routed elements and two launches: 18.777216 us forward, twice that
 * backward. So the layer's backward differs by 100.080384 - 37.554432 =
 * 62.525952 us, not twice the forward's difference.
 */
START_TEST(test_allgather_mask_permute_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_layer a2a, ag;
	struct framework fw;

	moe_toy_fixture(&c, &m, &p, PERMUTE_CLUSTER_YAML, "  experts: 8\n  top_k: 2\n  capacity_factor: 1.0\n", 8);
	test_load_framework(&fw, ALLGATHER_MASK_YAML);
	compute_layer_time(&m, &p, &c, NULL, true, &a2a);
	compute_layer_time(&m, &p, &c, &fw, true, &ag);
	ck_assert_double_eq_tol(a2a.moe_permute_s, 18.777216e-6, 1e-12);
	ck_assert_double_eq_tol(a2a.moe_permute_bwd_s, 2.0 * 18.777216e-6, 1e-12);
	ck_assert_double_eq_tol(ag.moe_permute_s, 135.051904e-6, 1e-12);
	ck_assert_double_eq_tol(ag.moe_permute_bwd_s, 100.080384e-6, 1e-12);
	ck_assert_double_eq_tol(ag.fwd_s - a2a.fwd_s, 135.051904e-6 - 18.777216e-6, 1e-12);
	ck_assert_double_eq_tol(ag.bwd_s - a2a.bwd_s, 62.525952e-6, 1e-12);
	/* Top-1 without SP or EP takes no gathering path: the sort's
	 * gather (4 R), zeros_like and the scatter back (2 + 8 R) forward,
	 * 14 x 1024 x 1024 = 14,680,064 B and 10 launches, 24.680064 us; the
	 * scatter's gather and the sort's zeros + scatter_add (4 + 8 R)
	 * backward, 12,582,912 B and 3 launches, 15.582912 us. */
	test_load_model(&m, TOY_MODEL_YAML "moe:\n  experts: 8\n  top_k: 1\n  capacity_factor: 1.0\n");
	p.dp = p.ep = 1;
	p.global_batch = 1;
	compute_layer_time(&m, &p, &c, &fw, true, &ag);
	ck_assert_double_eq_tol(ag.moe_permute_s, 24.680064e-6, 1e-12);
	ck_assert_double_eq_tol(ag.moe_permute_bwd_s, 15.582912e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * What the allgather_mask dispatcher keeps for the backward beyond the
 * routed copies in and out (memory.c, allgather_mask_saved_bytes;
 * token_dispatcher.py at core_v0.6.0): the toy GPT (h 1024, s 1024), 8
 * experts top-2, capacity factor 1, b 1, every layer MoE, so the
 * difference from the all-to-all dispatcher is the term itself.
 * tp 2 with SP, ep 1: G = 1 x 1024 = 1024 gathered tokens, R = 2 x 1024
 * = 2048 local rows. The gathered hidden states 2 G h = 2,097,152, the
 * rows before the sort 2 R h = 4,194,304, the index maps 16 R + 8 R =
 * 49,152, the probs and mask 3 k G = 6,144, the scores 2 R = 4,096:
 * 6,350,848 bytes. tp 1, ep 1 (no collective): no gathered states,
 * 6,350,848 - 2,097,152 = 4,253,696. tp 1, ep 8: G = 8 x 1024 = 8192,
 * R = 2 x 8192 / 8 = 2048: 2 G h = 16,777,216, 2 R h = 4,194,304, maps
 * 49,152, 3 k G = 49,152, 2 R = 4,096: 21,073,920. Top-1 on tp 1, ep 1
 * takes no gathering path: argsort's map 8 R = 8 x 1024 = 8,192, and no
 * product keeps the scattered output, 2 R h = 2,097,152 fewer:
 * -2,088,960. Mixtral on FlagPerf's plan (tp 8 with SP, ep 1, b 3, s
 * 4096, top-2, h 4096): G = 12,288, R = 24,576: 100,663,296 +
 * 201,326,592 + 589,824 + 73,728 + 49,152 = 302,702,592 bytes a layer
 * and micro-batch.
 */
START_TEST(test_allgather_mask_memory_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML_LAUNCH("2 us"),
			"  experts: 8\n  top_k: 2\n  capacity_factor: 1.0\n", 1);
	test_load_framework(&fw, ALLGATHER_MASK_YAML);
	p.tp = 2;
	p.sequence_parallel = true;
	ck_assert_double_eq_tol(activations_beyond_default(&m, &p, &fw), 6350848.0, 1e-6);
	/* Checkpointing the MoE layer drops it with the rest of the layer. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&m, &p, &fw, PLAN_RM_MOE) -
					memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_MOE),
				6350848.0, 1e-6);
	p.tp = 1;
	p.sequence_parallel = false;
	ck_assert_double_eq_tol(activations_beyond_default(&m, &p, &fw), 4253696.0, 1e-6);
	p.dp = p.ep = 8;
	p.global_batch = 8;
	ck_assert_double_eq_tol(activations_beyond_default(&m, &p, &fw), 21073920.0, 1e-6);
	p.dp = p.ep = 1;
	p.global_batch = 1;
	m.moe.top_k = 1;
	ck_assert_double_eq_tol(activations_beyond_default(&m, &p, &fw), -2088960.0, 1e-6);
	cluster_release(&c);

	mixtral_fixture(&c, &m, &p, 8, 2, 1);
	p.sequence_parallel = true;
	p.micro_batch = 3;
	p.global_batch = 6;
	ck_assert_double_eq_tol(activations_beyond_default(&m, &p, &fw), 302702592.0, 1e-6);
	cluster_release(&c);
}
END_TEST

START_TEST(test_mics_two_hop)
{
	struct cluster c;
	struct group_layout g = { 16, 8, 2 };

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* Flat ring all-gather of 1 GB over 16 ranks on 2 nodes: 14 x 3 us +
	 * 1 x 5 us, and 15/16 GB through 8 NIC shares (170e9 B/s): 5.5617 ms. */
	ck_assert_rel(collective_time(&c, &g, COLL_ALLGATHER, COLL_ALGO_RING, 1e9), 0.005561705882352942, 1e-12);
	/* MiCS 2-hop: hop 1 gathers 1/8 GB across 2 nodes per NIC share
	 * (5 us + 0.5 x 125e6 / 21.25e9 = 2.9462 ms: half the cross-node
	 * volume, 1 slow step instead of 15 ring steps); hop 2 gathers 1 GB
	 * over NVLink (21 us + 3.8889 ms): 6.8561 ms in all. For a large
	 * buffer the flat ring, on all 8 NICs at once, is faster. */
	ck_assert_rel(collective_two_hop_allgather(&c, &g, 1e9), 0.002946176470588235 + 0.003909888888888889,
		      1e-12);
	/* For small buffers the latency dominates, and 2 hops win: 1 MB. */
	ck_assert(collective_two_hop_allgather(&c, &(struct group_layout){ 64, 8, 8 }, 1e6) <
		  collective_time(&c, &(struct group_layout){ 64, 8, 8 }, COLL_ALLGATHER, COLL_ALGO_RING, 1e6));
	cluster_release(&c);
}
END_TEST

START_TEST(test_mics_memory)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct memory_use u;

	fixture_gpt3_dp64(&c, &m, &p, 3);
	p.mics_group = 8;
	/* MiCS: 16 Psi / G = 16 x 7.5e9 / 8 = 15e9 bytes of model states. */
	memory_stage(&m, &p, &c, NULL, 0, 7.5e9, 0.0, &u);
	ck_assert_rel(u.weights + u.gradients + u.optimizer, 15e9, 1e-12);
	/* ZeRO-3 is the special case G = dp: 16 x 7.5e9 / 64. */
	p.mics_group = 0;
	memory_stage(&m, &p, &c, NULL, 0, 7.5e9, 0.0, &u);
	ck_assert_rel(u.weights + u.gradients + u.optimizer, 1.875e9, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_mics_beats_zero3)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate z3, mics;
	struct plan_error err;
	struct framework ds;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, &ds };
	double last = 1.0;

	/* MiCS's setting: p3dn-like nodes (8 x V100 32GB, 100 Gbit/s), a
	 * 7.5 B model, weak scaling with 8 sequences per GPU per iteration. */
	test_load_cluster(&c, "name: p3dn\nnodes: 64\ngpus_per_node: 8\ngpu:\n  name: V100\n"
			      "  peak_flops: 125 TFLOPS\n  memory: 32 GiB\n  memory_bandwidth: 900 GB/s\n"
			      "intra_node:\n  bandwidth: 150 GB/s\ninter_node:\n  nics_per_node: 1\n"
			      "  nic_bandwidth: 100 Gbit/s\n  latency: 15 us\n");
	test_load_model(&m, "name: g\nlayers: 36\nhidden: 4096\nheads: 32\nvocab: 51200\nseq_len: 2048\n");
	/* MiCS measured against DeepSpeed's ZeRO-3 of its time, which issued
	 * a collective per parameter tensor and gathered again for the
	 * recomputed forward (frameworks/deepspeed-2021.yaml, without its
	 * host synchronisation). */
	framework_init_default(&ds);
	ds.gather_unit = FRAMEWORK_GATHER_TENSOR;
	ds.recompute_regather = true;
	for (int gpus = 64; gpus <= 512; gpus *= 2) {
		plan_init(&p);
		p.tp = p.pp = 1;
		p.dp = gpus;
		p.zero = 3;
		p.micro_batch = 4;
		p.global_batch = 8 * gpus;
		p.seq_len = 2048;
		p.recompute = PLAN_RECOMPUTE_FULL;
		ck_assert(estimate_plan(&m, &c, &p, &opt, &z3, &err));
		p.mics_group = 8;
		ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &mics, &err), "%s", err.message);
		ck_assert(mics.fits);
		/* MiCS is at most a little slower (its optimizer steps 1/G of the
		 * states, ZeRO-3's 1/dp), and its lead grows with scale. */
		ck_assert(z3.iteration_time_s / mics.iteration_time_s >= 0.99);
		ck_assert(z3.iteration_time_s / mics.iteration_time_s >= last - 0.01);
		last = z3.iteration_time_s / mics.iteration_time_s;
	}
	ck_assert_msg(last > 1.5, "MiCS over ZeRO-3 at 512 GPUs: %.3f", last);
	cluster_release(&c);
}
END_TEST

/* By the predicate, for the cross-check of the closed form. */
static bool
is_moe(int layer, const void *arg)
{
	return model_layer_is_moe(arg, layer);
}

/*
 * MoE layers per stage in closed form: 2 dense layers, then every 3rd of
 * 26 is an MoE layer (layers 5, 8, ..., 26: 8 of them). pp 2 of 13
 * layers: stage 0 holds 5, 8, 11 (3), stage 1 the other 5. By hand and
 * against the layer-by-layer count, for even, interleaved and uneven
 * pipelines.
 */
START_TEST(test_stage_moe_layers)
{
	struct model m;
	struct plan p;

	test_load_model(&m, "name: m\nlayers: 26\nhidden: 1024\nheads: 16\nvocab: 32000\nseq_len: 2048\n"
			    "moe:\n  experts: 8\n  top_k: 2\n  every: 3\n  first_dense_layers: 2\n");
	ck_assert_int_eq(model_moe_layers(&m), 8);
	ck_assert_int_eq(model_moe_layers_between(&m, 1, 26), 8);
	ck_assert_int_eq(model_moe_layers_between(&m, 1, 4), 0);
	ck_assert_int_eq(model_moe_layers_between(&m, 5, 5), 1);
	ck_assert_int_eq(model_moe_layers_between(&m, 6, 7), 0);
	plan_init(&p);
	p.pp = 2;
	ck_assert_int_eq(pipeline_stage_moe_layers(&m, &p, 0), 3);
	ck_assert_int_eq(pipeline_stage_moe_layers(&m, &p, 1), 5);
	for (int pp = 1; pp <= 13; pp++)
		for (int vpp = 1; vpp <= 13; vpp++) {
			if (26 % (pp * vpp))
				continue;
			p.pp = pp;
			p.vpp = vpp;
			for (int s = 0; s < pp; s++)
				ck_assert_int_eq(pipeline_stage_moe_layers(&m, &p, s),
						 pipeline_count_layers(&m, &p, s, is_moe, &m));
		}
	p.pp = 3;
	p.vpp = 1;
	p.custom_layers = true;
	p.stage_layers[0] = 4;
	p.stage_layers[1] = 12;
	p.stage_layers[2] = 10;
	for (int s = 0; s < 3; s++)
		ck_assert_int_eq(pipeline_stage_moe_layers(&m, &p, s), pipeline_count_layers(&m, &p, s, is_moe, &m));
	ck_assert_int_eq(pipeline_stage_moe_layers(&m, &p, 0), 0);
}
END_TEST

START_TEST(test_ep_comm_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	/* The toy GPT with both layers MoE (8 experts, top-1, capacity 1.0)
	 * on the toy cluster's 8 GPUs: dp = ep = 8 over 2 nodes, b 1, s 1024, m 1. */
	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML, "  experts: 8\n  top_k: 1\n  capacity_factor: 1.0\n", 8);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	/*
	 * Each rank dispatches cf k b s h 16-bit values, M = 2,097,152 B
	 * (Switch, Fedus et al. 2021), M/8 to each rank. Flat all-to-all
	 * (formulas.md Sec. 2, T_1, with the intra-node alpha for the
	 * messages that stay): 4 messages leave the node (4 x 10 us), 3 stay
	 * (3 x 1 us); M/2 through the NIC share, 2.5e9 B/s (4.194304e-4
	 * s), 3M/8 over NVLink (7.86e-6 s), in parallel: 4.624304e-4 s.
	 * Dispatch and combine, forward and backward, 2 layers: 8 of them,
	 * 3.6994432e-3 s.
	 */
	ck_assert_double_eq_tol(e.details.ep_bytes, 2097152.0, 1e-6);
	ck_assert_double_eq_tol(e.details.ep_a2a_s, 4.624304e-4, 1e-16);
	ck_assert_double_eq_tol(e.breakdown.ep_comm, 3.6994432e-3, 1e-15);
	/*
	 * SMILE's bi-level routing (T_2): among the 2 GPUs of equal local
	 * rank, 10 us + M/2 / 2.5e9 = 4.294304e-4 s; then inside the node
	 * over 4 GPUs, 3 x 1 us + 3/4 M / 1e11 = 1.872864e-5 s: 4.4815904e-4
	 * s, 8 of them 3.58527232e-3 s.
	 */
	p.moe_routing = PLAN_MOE_BILEVEL;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_double_eq_tol(e.details.ep_inter_s, 4.294304e-4, 1e-16);
	ck_assert_double_eq_tol(e.details.ep_intra_s, 1.872864e-5, 1e-16);
	ck_assert_double_eq_tol(e.breakdown.ep_comm, 3.58527232e-3, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * The routed tokens' permutations (Megatron-Core's all-to-all token
 * dispatcher): permute by destination rank, and with more than one local
 * expert sort the received chunks by expert (sort_chunks_by_idxs); both
 * undone around the combine. Toy MoE layer: 8 experts, top-2, capacity
 * 1.0, h 1024, b 1, s 1024, on a GPU at 1000 GB/s exactly and 1 us a
 * launch. One pass reads and writes cf k b s h 16-bit values: 4 x 2 x
 * 1024 x 1024 = 8,388,608 B, 8.388608 us, plus a launch. With 4 local
 * experts (ep 2) four passes, with one (ep 8) two: the forward's
 * memory-bound time differs by 2 x 9.388608 = 18.777216 us.
 */
START_TEST(test_moe_permute_passes)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_layer one, four;

	moe_toy_fixture(&c, &m, &p, PERMUTE_CLUSTER_YAML, "  experts: 8\n  top_k: 2\n  capacity_factor: 1.0\n", 8);
	compute_layer_time(&m, &p, &c, NULL, true, &one);
	p.dp = p.ep = 2;
	p.global_batch = 2;
	compute_layer_time(&m, &p, &c, NULL, true, &four);
	ck_assert_double_eq_tol(four.fwd_mem_s - one.fwd_mem_s, 18.777216e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * A fixture for the expert GEMM tests: the toy GPU (GEMMs at 0.5 x 1e14
 * FLOP/s, 1e12 B/s) with @gemm_overhead per GEMM (the parametric curve:
 * a GEMM of F FLOPs takes F / 5e13 + overhead), the toy model (h 1024, a
 * plain two-matrix MLP) with @moe as its moe: block, and a plan of tp 1,
 * ep 1, micro-batch 1 of 1024 tokens. A Hopper (its TMA epilogue: the
 * fused main_grad traffic is a roofline) with no wave model (sm_count 0);
 * @gpu_extra adds GPU keys (the fp8 tests' peaks and speed-ups).
 */
static void
moe_gpu_fixture(struct cluster *c, struct model *m, struct plan *p, const char *gpu_extra, const char *gemm_overhead,
		const char *moe)
{
	char cyaml[640];

	snprintf(cyaml, sizeof(cyaml),
		 "name: t\nnodes: 1\ngpus_per_node: 8\n"
		 "gpu:\n  name: t\n  peak_flops: 100 TFLOPS\n%s  memory: 80 GiB\n  memory_bandwidth: 1000 GB/s\n"
		 "  memory_efficiency: 1.0\n  gemm_efficiency_max: 0.5\n  gemm_overhead: %s\n"
		 "  launch_overhead: 0 s\n  generation: hopper\n  sm_count: 0\n"
		 "intra_node:\n  bandwidth: 100 GB/s\n"
		 "inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n",
		 gpu_extra, gemm_overhead);
	moe_toy_fixture(c, m, p, cyaml, moe, 1);
}

static void
moe_gemm_fixture(struct cluster *c, struct model *m, struct plan *p, const char *gemm_overhead, const char *moe)
{
	moe_gpu_fixture(c, m, p, "", gemm_overhead, moe);
}

/*
 * The experts' weight-gradient GEMMs accumulate into Megatron's fp32
 * main_grad (main_grad fused: 8 bytes an element read and written)
 * besides reading their 16-bit operands: with few rows an expert, that
 * traffic bounds them (Hopper's roofline).
 * 64 experts, top-1, expert FFN 1024, 1024 tokens: 16 rows an expert.
 * fc1 (1024 x 1024 a expert) forward as one grouped GEMM: 2 x 16 x 1024 x
 * 1024 x 64 = 2,147,483,648 FLOPs, 42.95 us at 5e13; its roofline's
 * bytes 2 x 64 x (16 x 1024 + 1024 x 1024 + 16 x 1024) = 138,412,032 B,
 * 138.412032 us at 1e12 B/s: 138.412032 us. Its wgrad moves 64 x (2 x 16
 * x (1024 + 1024) + 8 x 1024 x 1024) = 541,065,216 B, 541.065216 us:
 * 402.653184 us beyond the GEMM. fc2 (1024 x 1024) the same: 805.306368
 * us in all, in the backward. With 4 experts of 256 rows the wgrad's
 * 4 x (2 x 256 x 2048 + 8 x 1024^2) = 37,748,736 B (37.75 us) stay under
 * the GEMM's 2^32 / 5e13 = 85.9 us: nothing.
 */
START_TEST(test_moe_wgrad_traffic)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_layer l;

	struct framework fw;

	test_load_framework(&fw, "name: mg\nmain_grad: fused\n");
	moe_gemm_fixture(&c, &m, &p, "0 s", "  experts: 64\n  top_k: 1\n  expert_ffn_hidden: 1024\n");
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq_tol(l.moe_wgrad_mem_s, 805.306368e-6, 1e-12);
	/* A dense layer has none; the MoE layer's backward carries it. */
	{
		struct compute_layer d;

		compute_layer_time(&m, &p, &c, &fw, false, &d);
		ck_assert_double_eq(d.moe_wgrad_mem_s, 0.0);
	}
	cluster_release(&c);
	moe_gemm_fixture(&c, &m, &p, "0 s", "  experts: 4\n  top_k: 1\n  expert_ffn_hidden: 1024\n");
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq(l.moe_wgrad_mem_s, 0.0);
	cluster_release(&c);
}
END_TEST

/*
 * SequentialMLP (framework moe_sequential_mlp; Megatron-Core experts.py):
 * a GEMM per local expert, each paying the GPU's fixed GEMM cost. 8
 * experts, top-2, expert FFN 1024, 1024 tokens: 256 rows an expert. fc1
 * per expert: 2 x 256 x 1024^2 = 536,870,912 FLOPs, 10.73741824 us at
 * 5e13, + 10 us; the 8: 165.89934592 us. Grouped: 8 x those FLOPs,
 * 85.89934592 us + 10 us once. fc2 the same: the sequential MLP takes
 * 2 x 7 x 10 us = 140 us more in the forward (twice that backward); the
 * host launches as many GEMMs either way, one per expert (Transformer
 * Engine's GroupedLinear issues a cuBLAS GEMM per expert). Neither hits the wgrad
 * traffic bound (8 x (2 x 256 x 2048 + 8 x 1024^2) B = 75.5 us).
 */
START_TEST(test_moe_sequential_mlp)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct compute_layer grouped, seq;
	struct host_kernels kg, ks;

	moe_gemm_fixture(&c, &m, &p, "10 us", "  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 1024\n");
	test_load_framework(&fw, "name: seq\nmoe_sequential_mlp: true\n");
	ck_assert(fw.moe_sequential_mlp);
	compute_layer_time(&m, &p, &c, NULL, true, &grouped);
	compute_layer_time(&m, &p, &c, &fw, true, &seq);
	ck_assert_double_eq_tol(seq.mlp_fwd_s - grouped.mlp_fwd_s, 140e-6, 1e-12);
	ck_assert_double_eq_tol(seq.bwd_s - grouped.bwd_s, 280e-6, 1e-12);
	ck_assert_double_eq(seq.moe_wgrad_mem_s, 0.0);
	ck_assert_double_eq(grouped.moe_wgrad_mem_s, 0.0);
	host_layer_kernels(&m, &p, NULL, true, 10.0, &kg);
	host_layer_kernels(&m, &p, &fw, true, 10.0, &ks);
	ck_assert_double_eq(ks.fwd - kg.fwd, 0.0);
	ck_assert_double_eq(ks.bwd - kg.bwd, 0.0);
	cluster_release(&c);
}
END_TEST

/*
 * SequentialMLP's copies as core_v0.5-r0.8 write the loop (framework
 * moe_sequential_slices; experts.py, autograd's CopySlices and
 * slice_backward): the fixture of test_moe_sequential_mlp, 8 local
 * experts, R = 2 x 1024 = 2048 routed rows of h 1024, 1e12 B/s, no
 * launch cost. Forward zeros_like and the copies, 6 R h = 12,582,912 B:
 * 12.582912 us; backward (12 x 8 + 8) R h = 218,103,808 B: 218.103808
 * us, in the permutations' lines. Without moe_sequential_mlp it is
 * nothing.
 */
START_TEST(test_moe_sequential_slices)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw, sl;
	struct compute_layer seq, cut;

	moe_gemm_fixture(&c, &m, &p, "10 us", "  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 1024\n");
	test_load_framework(&fw, "name: seq\nmoe_sequential_mlp: true\n");
	test_load_framework(&sl, "name: sl\nmoe_sequential_mlp: true\nmoe_sequential_slices: true\n");
	compute_layer_time(&m, &p, &c, &fw, true, &seq);
	compute_layer_time(&m, &p, &c, &sl, true, &cut);
	ck_assert_double_eq_tol(cut.moe_permute_s - seq.moe_permute_s, 12.582912e-6, 1e-12);
	ck_assert_double_eq_tol(cut.moe_permute_bwd_s - seq.moe_permute_bwd_s, 218.103808e-6, 1e-12);
	ck_assert_double_eq_tol(cut.fwd_s - seq.fwd_s, 12.582912e-6, 1e-12);
	ck_assert_double_eq_tol(cut.bwd_s - seq.bwd_s, 218.103808e-6, 1e-12);
	sl.moe_sequential_mlp = false;
	fw.moe_sequential_mlp = false;
	compute_layer_time(&m, &p, &c, &fw, true, &seq);
	compute_layer_time(&m, &p, &c, &sl, true, &cut);
	ck_assert_double_eq(cut.bwd_s, seq.bwd_s);
	cluster_release(&c);
}
END_TEST

/*
 * Transformer Engine's GroupedLinear issues one cuBLAS GEMM per expert
 * over four side streams (nvte_multi_stream_cublas_gemm, num_streams = 4),
 * so a group of small experts takes at least their own GEMMs four at a
 * time. 64 experts, top-1, expert FFN 1024, 1024 tokens: 16 rows an
 * expert; toy GPU 5e13 FLOP/s at the curve's top, + 10 us a GEMM, 1e12
 * B/s. fc1 of one expert, 16 x 1024 x 1024: 33,554,432 FLOPs, 0.67108864
 * us + 10 us = 10.67108864 us (its 2,162,688 bytes take 2.16 us); the 64
 * four at a time: 16 x 10.67108864 = 170.73741824 us. As one group: 64 x
 * those FLOPs, 42.94967296 + 10 us, but its 138,412,032 bytes take
 * 138.412032 us. The streams bind: 170.73741824 us, fc2 the same. The
 * router GEMM, 1024 x 64 x 1024: 134,217,728 FLOPs, 2.68435456 + 10 =
 * 12.68435456 us. MLP forward: 12.68435456 + 2 x 170.73741824 =
 * 354.15919104 us. The wgrad traffic, 64 x (2 x 16 x 2048 + 8 x 1024^2) =
 * 541,065,216 B a matrix (main_grad fused), 541.065216 us, exceeds the
 * GEMM's 170.73741824 us by 370.32779776 us: 740.65559552 us for the two.
 */
START_TEST(test_moe_grouped_gemm_streams)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_layer l;
	struct framework fw;

	test_load_framework(&fw, "name: mg\nmain_grad: fused\n");
	moe_gemm_fixture(&c, &m, &p, "10 us", "  experts: 64\n  top_k: 1\n  expert_ffn_hidden: 1024\n");
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq_tol(l.mlp_fwd_s, 354.15919104e-6, 1e-12);
	ck_assert_double_eq_tol(l.moe_wgrad_mem_s, 740.65559552e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * The host's launches of an MoE layer (host_time.c), counted by hand.
 * Toy model (standard attention, plain MLP), fused element-wise, flash
 * attention, tp 1, 10 element-wise kernels; 8 experts, no shared ones.
 * ep 1: GEMMs QKV, projection, the router and 2 per local expert = 2 + 1
 * + 16 = 19; forward 19 + 1 (attention) + 10 + the router's 20 = 50;
 * backward 2 x 19 + 3 (flash backward) + 2 x 10 + the router's 8 = 69.
 * ep 2: 4 local experts, 11 GEMMs, and the dispatch and combine
 * all-to-alls each pass: forward 11 + 1 + 10 + 2 + 20 = 44, backward
 * 22 + 3 + 20 + 2 + 8 = 55.
 */
START_TEST(test_moe_host_kernels_by_hand)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct host_kernels k;

	moe_gemm_fixture(&c, &m, &p, "0 s", "  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 1024\n");
	p.flash_attention = true;
	host_layer_kernels(&m, &p, NULL, true, 10.0, &k);
	ck_assert_double_eq(k.fwd, 50.0);
	ck_assert_double_eq(k.bwd, 69.0);
	ck_assert_double_eq(k.recompute, 0.0);
	p.ep = 2;
	host_layer_kernels(&m, &p, NULL, true, 10.0, &k);
	ck_assert_double_eq(k.fwd, 44.0);
	ck_assert_double_eq(k.bwd, 55.0);
	cluster_release(&c);
}
END_TEST

/*
 * A dropless MoE layer's host synchronisation empties the GPU's queue:
 * each synchronised stretch pays its own launches' excess. GPU 10 ms and
 * launches 8 ms for the micro-batch, two synchronised stretches of 1 ms
 * on the GPU and 3 ms of launches: 2 x (3 - 1) = 4 ms, and the rest (GPU
 * 8 ms, launches 2 ms) none, where the whole micro-batch would hide them
 * (0). With stretches of 1 ms and 0.5 ms of launches and 12 ms of
 * launches in all: the stretches none, the rest 11 - 8 = 3 ms, not the
 * whole's 12 - 10 = 2 (their slack cannot hide the others' launches).
 * Without a synchronisation: host_exposed_s's 12 - 10 = 2 ms.
 */
START_TEST(test_moe_host_synced_stretches)
{
	ck_assert_double_eq_tol(host_exposed_synced_s(10e-3, 8e-3, 2.0, 1e-3, 3e-3), 4e-3, 1e-15);
	ck_assert_double_eq_tol(host_exposed_synced_s(10e-3, 12e-3, 2.0, 1e-3, 0.5e-3), 3e-3, 1e-15);
	ck_assert_double_eq_tol(host_exposed_synced_s(10e-3, 12e-3, 0.0, 1e-3, 0.5e-3), 2e-3, 1e-15);
}
END_TEST

/*
 * moe_grouped_gemm single (torchtitan's torch._grouped_mm, models/moe/
 * moe.py): one grouped kernel, no four-streams bound. The case of
 * test_moe_grouped_gemm_streams (64 experts of 16 rows, toy GPU 5e13
 * FLOP/s, + 10 us a GEMM, 1e12 B/s): te_streams 170.73741824 us a
 * matrix, the experts four at a time. Single: the group alone, max(64 x
 * 0.67108864 + 10 = 52.94967296 us of FLOPs, 2 x 64 x (16 x 1024 + 1024^2
 * + 16 x 1024) = 138,412,032 B = 138.412032 us) = 138.412032 us. MLP
 * forward 12.68435456 + 2 x 138.412032 = 289.50841856 us; with main_grad
 * fused the wgrad traffic's 541.065216 us a matrix exceeds it by
 * 402.653184 us: 805.306368 us for the two. Host (as test_moe_host_kernels_by_hand, 8 experts, ep
 * 1, fused element-wise, plain MLP): GEMMs QKV, projection, the router and
 * one per grouped matrix = 5; forward 5 + 1 + 10 + 20 = 36, backward 10 +
 * 3 + 20 + 8 = 41 (te_streams: 50 and 69).
 */
START_TEST(test_moe_grouped_gemm_single)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct compute_layer te, one;
	struct host_kernels k;

	moe_gemm_fixture(&c, &m, &p, "10 us", "  experts: 64\n  top_k: 1\n  expert_ffn_hidden: 1024\n");
	test_load_framework(&fw, "name: one\nmoe_grouped_gemm: single\nmain_grad: fused\n");
	ck_assert_int_eq(fw.moe_grouped_gemm, FRAMEWORK_MOE_GEMM_SINGLE);
	compute_layer_time(&m, &p, &c, NULL, true, &te);
	compute_layer_time(&m, &p, &c, &fw, true, &one);
	ck_assert_double_eq_tol(te.mlp_fwd_s, 354.15919104e-6, 1e-12);
	ck_assert_double_eq_tol(one.mlp_fwd_s, 289.50841856e-6, 1e-12);
	ck_assert_double_eq_tol(one.moe_wgrad_mem_s, 805.306368e-6, 1e-12);
	cluster_release(&c);

	moe_gemm_fixture(&c, &m, &p, "0 s", "  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 1024\n");
	p.flash_attention = true;
	host_layer_kernels(&m, &p, &fw, true, 10.0, &k);
	ck_assert_double_eq(k.fwd, 36.0);
	ck_assert_double_eq(k.bwd, 41.0);
	host_layer_kernels(&m, &p, NULL, true, 10.0, &k);
	ck_assert_double_eq(k.fwd, 50.0);
	ck_assert_double_eq(k.bwd, 69.0);
	cluster_release(&c);
}
END_TEST

/* expertgrad: begin */
/*
 * The experts' fp32 main_grad traffic as the framework's main_grad key
 * says, the dense weights' rule (main_grad_traffic in compute.c). The
 * case of test_moe_wgrad_traffic: 64 experts of 16 rows, fc1 and fc2
 * 1024 x 1024 each, toy Hopper at 1e12 B/s, fused 805.306368 us.
 * - none (the default; torchtitan's pytorch-fsdp2 profile): the wgrad
 *   GEMM writes a 16-bit gradient, bytes the forward's roofline already
 *   holds: 0.
 * - unfused (main_grad.add_ after the backward): 10 bytes a weight
 *   element, 2 x 64 x 10 x 1024^2 = 1,342,177,280 B = 1342.17728 us, and
 *   one launch a weight, 2 x 64 x 2 us = 256 us: 1598.17728 us.
 * - fused on an Ampere (the source tile's 4 bytes an element added, not a
 *   roofline): 2 x 64 x 4 x 1024^2 = 536,870,912 B = 536.870912 us.
 */
START_TEST(test_moe_wgrad_main_grad_kinds)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_layer l;
	struct framework fw;
	struct plan_error err;
	char path[4096];
	const char *root = getenv("PLAN_TEST_SOURCE_ROOT");

	moe_gemm_fixture(&c, &m, &p, "0 s", "  experts: 64\n  top_k: 1\n  expert_ffn_hidden: 1024\n");
	compute_layer_time(&m, &p, &c, NULL, true, &l);
	ck_assert_double_eq(l.moe_wgrad_mem_s, 0.0);
	ck_assert_msg(root != NULL, "PLAN_TEST_SOURCE_ROOT is not set (run through meson test)");
	snprintf(path, sizeof(path), "%s/frameworks/pytorch-fsdp2.yaml", root);
	ck_assert_msg(framework_load_file(&fw, path, &err), "%s", err.message);
	ck_assert_int_eq(fw.main_grad, FRAMEWORK_MG_NONE);
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq(l.moe_wgrad_mem_s, 0.0);
	test_load_framework(&fw, "name: mg\nmain_grad: unfused\n");
	c.gpu.launch_overhead_s = 2e-6;
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq_tol(l.moe_wgrad_mem_s, 1598.17728e-6, 1e-12);
	/* gmm (the grouped_gemm package, Megatron-Core core_v0.6's
	 * GroupedMLP): the bf16 gradient added by DDP's hook, unfused
	 * whatever main_grad says, one launch a matrix, not an expert: the
	 * 1342.17728 us of the 10 bytes and 2 x 2 us. */
	test_load_framework(&fw, "name: mg\nmain_grad: fused\nmoe_grouped_gemm: gmm\n");
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq_tol(l.moe_wgrad_mem_s, 1346.17728e-6, 1e-12);
	c.gpu.launch_overhead_s = 0.0;
	test_load_framework(&fw, "name: mg\nmain_grad: fused\n");
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq_tol(l.moe_wgrad_mem_s, 805.306368e-6, 1e-12);
	c.gpu.generation = GPU_GEN_AMPERE;
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq_tol(l.moe_wgrad_mem_s, 536.870912e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * fp8 experts on a Hopper (delayed scaling: a fast-accumulating forward,
 * dgrad and wgrad promoting to fp32; fp8_recipe.c). The toy GPU: 1e14
 * bf16 and 2e14 fp8 FLOP/s at the curve's 0.5, fp8_gemm_ratio 1, fast
 * accumulation 1.25 times as fast, + @overhead a GEMM (the parametric
 * curve's, taken at the equal-duration point F / 2: an fp8 GEMM of F
 * FLOPs promoting takes F / 1e14 + overhead, fast that over 1.25),
 * 1e12 B/s; operands 1 byte, results 2 (m k + k n + 2 m n bytes).
 * Main_grad fused: the wgrad traffic is 1 byte an element of X and dY and
 * 8 of the fp32 main_grad, weighed against the promoting GEMM.
 * (a) 8 experts, top-1, 1024 tokens: 128 rows an expert, fc1 and fc2
 * 1024 x 1024, no overhead. The group: 2 x 128 x 1024^2 x 8 =
 * 2,147,483,648 FLOPs, promoting 21.47483648 us, fast 17.179869184 us;
 * its 8 x (131,072 + 1,048,576 + 262,144) = 11,534,336 B take 11.53 us:
 * compute-bound. The experts four at a time, 2 x an expert's
 * 2.68435456 us promoting: 5.37 us, under the group. The wgrad traffic,
 * 8 x 128 x 2048 x 1 + 8 x 8 x 1024^2 = 69,206,016 B = 69.206016 us,
 * exceeds the promoting 21.47483648 us by 47.73117952 us: 95.46235904 us
 * for the two matrices (against the fast forward with 2-byte operands it
 * would be 2 x (71.303168 - 17.179869184) = 108.246597632 us).
 * (b) 16 experts, 64 rows each, 10 us a GEMM: an expert's 134,217,728
 * FLOPs promote in 1.34217728 + 10 = 11.34217728 us (its 1,245,184 B
 * take 1.25 us), fast 9.073741824 us; four at a time, 4 x those:
 * 45.36870912 and 36.294967296 us. The group, 21.47483648 + 10 =
 * 31.47483648 promoting, 25.179869184 fast (19,922,944 B, 19.92 us). The
 * streams bind both ways: forward 36.294967296 us, each backward GEMM
 * 45.36870912 us (not the forward's time plus the group's promoting
 * difference, 42.589934592). The wgrad traffic, 16 x 64 x 2048 + 8 x 16
 * x 1024^2 = 136,314,880 B = 136.31488 us, exceeds it by 90.94617088 us:
 * 181.89234176 us for the two.
 */
static void
moe_fp8_fixture(struct cluster *c, struct model *m, struct plan *p, const char *overhead, const char *moe)
{
	moe_gpu_fixture(c, m, p,
			"  peak_flops_fp8: 200 TFLOPS\n  fp8_gemm_ratio: 1.0\n  fp8_fast_accum_speedup: 1.25\n",
			overhead, moe);
	p->precision = PLAN_PRECISION_FP8;
}

START_TEST(test_moe_fp8_wgrad_promoting)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_layer l;
	struct framework fw;

	test_load_framework(&fw, "name: mg\nmain_grad: fused\n");
	moe_fp8_fixture(&c, &m, &p, "0 s", "  experts: 8\n  top_k: 1\n  expert_ffn_hidden: 1024\n");
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq_tol(l.mlp_fwd_s - l.moe_router_gemm_s, 2.0 * 17.179869184e-6, 1e-12);
	ck_assert_double_eq_tol(l.moe_wgrad_mem_s, 95.46235904e-6, 1e-12);
	cluster_release(&c);
	moe_fp8_fixture(&c, &m, &p, "10 us", "  experts: 16\n  top_k: 1\n  expert_ffn_hidden: 1024\n");
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq_tol(l.mlp_fwd_s - l.moe_router_gemm_s, 2.0 * 36.294967296e-6, 1e-12);
	ck_assert_double_eq_tol(l.moe_wgrad_mem_s, 181.89234176e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * End to end through estimate (core_host, estimate.c): a dropless MoE
 * layer's forward starts after a host synchronisation (the split sizes'
 * .to("cpu"), Megatron-Core token_dispatcher.py), so its stretch cannot
 * borrow the rest of the micro-batch's GPU time to hide its launches,
 * nor lend its own. The toy GPT, both layers MoE (8 experts, top-1,
 * dropless), one GPU (ep 1, 8 local experts: the sync is two kernel
 * costs, 2 x 2 us = 4 us, no all-gather), one micro-batch of 1024
 * tokens; per-layer CUDA graphs so that a layer pass costs the host one
 * launch, H = 0.5 ms, and the ends their 25 eager kernels (as
 * test-host-time's test_estimate_launch_bound): 2 x 2 x H + 25 H = 29 H
 * = 14.5 ms a micro-batch. A synced stretch: one MoE forward, host H,
 * GPU g1 = the layer's forward (compute_layer_time) + the router's 20
 * kernels and 48 x 1024 x 8 B (40.393216 us) + the sync's 4 us, about
 * 0.80 ms: GPU-bound, nothing exposed. The rest: host 27 H = 13.5 ms
 * against the GPU's G - 2 g1, G the micro-batch's GPU time (the slot
 * without host time, 9.47 ms): host-bound, 27 H - (G - 2 g1) exposed,
 * about 5.63 ms, where the whole micro-batch without the syncs would
 * expose 29 H - G, about 5.03 ms (2 (g1 - H) less).
 */
START_TEST(test_moe_synced_stretches_estimate)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct estimate_options opt = { .dp_algo = COLL_ALGO_RING, .compressor = NULL, .framework = &fw };
	struct estimate e0, e1;
	struct plan_error err;
	struct compute_layer cl;
	double h = 0.5e-3, g1, gpu, want;

	moe_toy_fixture(&c, &m, &p, TOY_CLUSTER_YAML_LAUNCH("2 us"), "  experts: 8\n  top_k: 1\n  dropless: true\n",
			1);
	framework_init_default(&fw);
	fw.cuda_graphs = FRAMEWORK_GRAPHS_LAYER;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e0, &err), "%s", err.message);
	ck_assert_double_eq(e0.breakdown.launch, 0.0);
	ck_assert_double_eq_tol(e0.details.moe_sync_s, 2.0 * 4e-6, 1e-15);
	compute_layer_time(&m, &p, &c, &fw, true, &cl);
	g1 = cl.fwd_s + 40.393216e-6 + 4e-6;
	gpu = e0.details.slot_s;
	/* The case the comment works out: synced stretches GPU-bound, the
	 * rest host-bound. */
	ck_assert(h < g1 && 27.0 * h > gpu - 2.0 * g1);
	want = 27.0 * h - (gpu - 2.0 * g1);
	fw.host_launch_s = h;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e1, &err), "%s", err.message);
	ck_assert_double_eq_tol(e1.breakdown.launch, want, 1e-12);
	ck_assert_double_eq_tol(e1.breakdown.launch - (29.0 * h - gpu), 2.0 * (g1 - h), 1e-12);
	ck_assert_double_eq_tol(e1.iteration_time_s, e0.iteration_time_s + want, 1e-12);
	/* Padded (not dropless): no sync, the whole micro-batch's 29 H - G'
	 * (G' without the syncs' 8 us). */
	test_load_model(&m, TOY_MODEL_YAML "moe:\n  experts: 8\n  top_k: 1\n");
	fw.host_launch_s = 0.0;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e0, &err), "%s", err.message);
	ck_assert_double_eq_tol(gpu - e0.details.slot_s, 8e-6, 1e-15);
	fw.host_launch_s = h;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e1, &err), "%s", err.message);
	ck_assert_double_eq_tol(e1.breakdown.launch, 29.0 * h - e0.details.slot_s, 1e-12);
	cluster_release(&c);
}
END_TEST
/* expertgrad: end */

static Suite *
moe_suite(void)
{
	Suite *s = suite_create("moe");
	TCase *tc = tcase_create("moe");

	tcase_add_test(tc, test_mixtral_params);
	tcase_add_test(tc, test_moe_profile_errors);
	tcase_add_test(tc, test_alltoall_flat_bilevel);
	tcase_add_test(tc, test_bilevel_scaling);
	tcase_add_test(tc, test_ep_comm_by_hand);
	tcase_add_test(tc, test_moe_permute_passes);
	tcase_add_test(tc, test_moe_wgrad_traffic);
	tcase_add_test(tc, test_moe_sequential_mlp);
	tcase_add_test(tc, test_stage_moe_layers);
	tcase_add_test(tc, test_ep_errors);
	tcase_add_test(tc, test_etp_folding);
	tcase_add_test(tc, test_cp_with_moe);
	tcase_add_test(tc, test_moe_fixed_by_hand);
	tcase_add_test(tc, test_node_limited_routing);
	tcase_add_test(tc, test_mtp);
	tcase_add_test(tc, test_etp_comm_by_hand);
	tcase_add_test(tc, test_deepep_comm_by_hand);
	tcase_add_test(tc, test_dispatcher_buffers_by_hand);
	tcase_add_loop_test(tc, test_flex_permute_passes, 0, 2);
	tcase_add_test(tc, test_hybridep_comm_by_hand);
	tcase_add_test(tc, test_mics_two_hop);
	tcase_add_test(tc, test_mics_memory);
	tcase_add_test(tc, test_mics_beats_zero3);
	tcase_add_test(tc, test_moe_grouped_gemm_streams);
	tcase_add_test(tc, test_moe_host_kernels_by_hand);
	tcase_add_test(tc, test_moe_host_synced_stretches);
	tcase_add_test(tc, test_moe_grouped_gemm_single);
	tcase_add_test(tc, test_moe_wgrad_main_grad_kinds); /* expertgrad */
	tcase_add_test(tc, test_moe_fp8_wgrad_promoting);
	tcase_add_test(tc, test_moe_synced_stretches_estimate);
	tcase_add_test(tc, test_ep_bytes_by_hand);
	tcase_add_test(tc, test_allgather_mask_comm_by_hand);
	tcase_add_test(tc, test_allgather_mask_tp_pair_by_hand);
	tcase_add_test(tc, test_alltoall_tp_pair_by_hand); /* a2apair */
	tcase_add_test(tc, test_allgather_mask_tp_compression_by_hand);
	tcase_add_test(tc, test_allgather_mask_permute_by_hand);
	tcase_add_test(tc, test_allgather_mask_memory_by_hand);
	tcase_add_test(tc, test_moe_sequential_slices);
	tcase_add_test(tc, test_moe_weighted_activation);
	tcase_add_test(tc, test_fp8_saved_inputs);
	tcase_add_test(tc, test_fp8_saved_inputs_etp);
	tcase_add_test(tc, test_combined_1f1b_by_hand);
	tcase_add_test(tc, test_combined_1f1b_refusals);
	tcase_add_test(tc, test_moe_overlap_refusals);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(moe_suite)
