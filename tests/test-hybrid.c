/* Hybrid Mamba-2/attention models (model hybrid_pattern: Megatron-Core's
 * hybrid layer pattern, megatron/core/models/hybrid/
 * hybrid_layer_allocation.py), priced kind by kind: parameters, the
 * layers each stage holds, the plan checks. Each value worked out by hand
 * in its comment. */
#include <math.h>
#include <string.h>

#include "plan/compute.h"
#include "plan/estimate.h"
#include "plan/flops.h"
#include "plan/framework.h"
#include "plan/host_time.h"
#include "plan/memory.h"
#include "plan/pipeline.h"
#include "plan/search.h"
#include "fixtures.h"
#include "testutil.h"

static void
nemotron8b(struct cluster *c, struct model *m, struct plan *p)
{
	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", c);
	test_load_profile(PROFILE_MODEL, "nemotron-h-8b", m);
	plan_init(p);
	p->tp = 2;
	p->pp = 1;
	p->dp = 4;
	p->micro_batch = 1;
	p->global_batch = 32;
	p->seq_len = 8192;
	p->flash_attention = true;
	p->sequence_parallel = true;
}

/*
 * Nemotron-H 8B (h 4096, V 131072, untied, no biases, RMSNorm):
 * - a Mamba layer: heads 128 x P 64, d_inner 8192; groups 8, N 128:
 *   in_proj 4096 x (2 x 8192 + 2 x 8 x 128 + 128 = 18560) = 76,021,760;
 *   conv1d (8192 + 2048 = 10240 channels) x (4 taps + bias) = 51,200;
 *   dt_bias, A_log, D 3 x 128 = 384; gated norm 8192; out_proj 8192 x
 *   4096 = 33,554,432: mixer 109,635,968, with its pre-norm (4096)
 *   109,640,064;
 * - an attention layer: Q and O 2 x 4096 x 4096 = 33,554,432, K and V
 *   2 x 4096 x (8 x 128) = 8,388,608, norm 4096: 41,947,136;
 * - an MLP layer (squared ReLU, two matrices): 2 x 4096 x 21504 =
 *   176,160,768, norm 4096: 176,164,864;
 * - 24 M, 4 *, 24 -: 2,631,361,536 + 167,788,544 + 4,227,956,736 =
 *   7,027,106,816;
 * - embedding 536,870,912, output layer 536,870,912 and final norm 4096:
 *   8,100,852,736 in all (the "8B" of arXiv:2504.03624).
 */
START_TEST(test_hybrid_params)
{
	struct cluster c;
	struct model m, km;
	struct plan p;

	nemotron8b(&c, &m, &p);
	ck_assert(model_is_hybrid(&m));
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_MAMBA), 24);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_ATTENTION), 4);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_MLP), 24);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_MOE), 0);
	ck_assert_double_eq(model_params_mamba_mixer(&m), 109635968.0);
	model_kind_model(&m, MODEL_KIND_MAMBA, &km);
	ck_assert_int_eq(km.layers, 24);
	ck_assert(!model_is_hybrid(&km) && model_has_part(&km, MODEL_PART_MAMBA));
	ck_assert(!model_has_part(&km, MODEL_PART_ATTENTION) && !model_has_part(&km, MODEL_PART_MLP));
	ck_assert_double_eq(model_params_per_layer(&km), 109640064.0);
	model_kind_model(&m, MODEL_KIND_ATTENTION, &km);
	ck_assert_double_eq(model_params_per_layer(&km), 41947136.0);
	model_kind_model(&m, MODEL_KIND_MLP, &km);
	ck_assert_double_eq(model_params_per_layer(&km), 176164864.0);
	ck_assert_double_eq(model_params_total(&m), 8100852736.0);
	ck_assert_double_eq(model_params_active(&m), 8100852736.0);
	/* The mean layer: 7,027,106,816 / 52. */
	ck_assert_double_eq_tol(model_params_per_layer(&m), 7027106816.0 / 52.0, 1e-3);
	ck_assert_int_eq(model_linears_per_layer(&m), 2);
	/* What is not a weight matrix (ZeRO-3's persistent small tensors): a
	 * Mamba layer's conv1d 51,200, dt_bias, A_log and D 384, gated norm
	 * 8192 and pre-norm 4096, 63,872; an attention or MLP layer's norm
	 * 4096. The mean layer: (24 x 63,872 + 28 x 4096) / 52 = 1,647,616 / 52. */
	ck_assert_double_eq_tol(model_params_per_layer(&m) - model_matrix_params_per_layer(&m), 1647616.0 / 52.0,
				1e-3);
	/* Tensors (the optimizer's multi-tensor launches): a Mamba layer
	 * in_proj, out_proj, its norm and six vectors (conv1d weight and
	 * bias, dt_bias, A_log, D, the gated norm) 9, of them small 7; an
	 * attention or MLP layer two weights and a norm, 3 and 1. The mean
	 * layer, rounded up: (24 x 9 + 28 x 3) / 52 = 300 / 52 -> 6 and
	 * (24 x 7 + 28) / 52 = 196 / 52 -> 4. */
	ck_assert_int_eq(model_tensors_per_layer(&m), 6);
	ck_assert_int_eq(model_small_tensors_per_layer(&m), 4);
	cluster_release(&c);
}
END_TEST

/* pp 2 of Nemotron-H 8B's 52 layers as --stage-layers 30,22. */
static void
split_30_22(struct plan *p)
{
	p->pp = 2;
	p->dp = 2;
	p->custom_layers = true;
	p->stage_layers_count = 2;
	p->stage_layers[0] = 30;
	p->stage_layers[1] = 22;
}

/*
 * The layers of each kind a stage holds. pp 2, --stage-layers 30,22:
 * stage 0 "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*" has 14 M, 3 *, 13 -; stage 1
 * "-M-M-M-M-M*-M-M-M-M-M-" 10 M, 1 *, 11 -. The first 3 layers of each:
 * "M-M" (2 M, 1 -) and "-M-" (1 M, 2 -). Even pp 4 (13 a stage): 6 M,
 * 1 *, 6 - each.
 */
START_TEST(test_hybrid_stage_kinds)
{
	struct cluster c;
	struct model m;
	struct plan p;
	static const int uneven[2][3] = { { 14, 3, 13 }, { 10, 1, 11 } };

	nemotron8b(&c, &m, &p);
	split_30_22(&p);
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 3; k++) {
			ck_assert_int_eq(pipeline_stage_kind_layers(&m, &p, s, k), uneven[s][k]);
			ck_assert_double_eq(pipeline_rank_kind_layers(&m, &p, s, k), uneven[s][k]);
		}
	ck_assert_int_eq(pipeline_prefix_kind_layers(&m, &p, 0, 3, MODEL_KIND_MAMBA), 2);
	ck_assert_int_eq(pipeline_prefix_kind_layers(&m, &p, 0, 3, MODEL_KIND_MLP), 1);
	ck_assert_int_eq(pipeline_prefix_kind_layers(&m, &p, 1, 3, MODEL_KIND_MAMBA), 1);
	ck_assert_int_eq(pipeline_prefix_kind_layers(&m, &p, 1, 3, MODEL_KIND_MLP), 2);
	p.custom_layers = false;
	p.stage_layers_count = 0;
	p.pp = 4;
	p.dp = 1;
	for (int s = 0; s < 4; s++) {
		ck_assert_int_eq(pipeline_stage_kind_layers(&m, &p, s, MODEL_KIND_MAMBA), 6);
		ck_assert_int_eq(pipeline_stage_kind_layers(&m, &p, s, MODEL_KIND_ATTENTION), 1);
		ck_assert_int_eq(pipeline_stage_kind_layers(&m, &p, s, MODEL_KIND_MLP), 6);
	}
	cluster_release(&c);
}
END_TEST

/* What the plan check refuses for a hybrid model: tp 16 does not divide
 * the 8 Mamba groups (MambaMixer's assertion); cp over Mamba layers,
 * bf16 layers, and activation offloading are not modelled. */
START_TEST(test_hybrid_refused)
{
	struct cluster c;
	struct model m;
	struct plan p, q;
	struct estimate e;
	struct plan_error err;

	nemotron8b(&c, &m, &p);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert(isfinite(e.iteration_time_s) && e.iteration_time_s > 0.0);
	q = p;
	q.tp = 16;
	q.dp = 1;
	q.global_batch = 8;
	ck_assert(!estimate_plan(&m, &c, &q, NULL, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "groups (8)"));
	q = p;
	q.cp = 2;
	q.dp = 2;
	ck_assert(!estimate_plan(&m, &c, &q, NULL, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "context parallelism"));
	q = p;
	q.precision = PLAN_PRECISION_FP8;
	q.fp8_recipe = PLAN_FP8_CURRENT;
	q.bf16_first_layers = 1;
	ck_assert(!estimate_plan(&m, &c, &q, NULL, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "hybrid"));
	q = p;
	q.activation_offload_layers = 2;
	ck_assert(!estimate_plan(&m, &c, &q, NULL, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "hybrid"));
	cluster_release(&c);
}
END_TEST

/*
 * The kind-by-kind sum against the transformer it spells out: Llama 3 8B
 * written as a hybrid model of 64 layers "*-*-...", each attention layer
 * followed by an MLP layer, is the same network (two norms, two residual
 * adds, two TP pairs a block; two fp8 linears a layer against four a
 * block) and must cost what the 32-layer transformer costs: time, its
 * breakdown and memory, on pp 1 and on pp 2 with vpp 2 (16 blocks a
 * stage, 32 layers), with sequence parallelism and full recomputation
 * on one stage. Parameters: the same, 8,030,261,248.
 */
static void
as_hybrid(const struct model *t, struct model *h)
{
	*h = *t;
	h->layers = 2 * t->layers;
	for (int l = 0; l < h->layers; l++)
		h->hybrid_pattern[l] = l % 2 ? '-' : '*';
	h->hybrid_pattern[h->layers] = '\0';
}

START_TEST(test_hybrid_spells_transformer)
{
	struct cluster c;
	struct model t, h;
	struct framework fw;
	struct plan p;
	struct estimate_options opt = { 0 };
	struct estimate et, eh;
	struct plan_error err;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_profile(PROFILE_MODEL, "llama3-8b", &t);
	test_load_profile(PROFILE_FRAMEWORK, "megatron-lm", &fw);
	as_hybrid(&t, &h);
	opt.framework = &fw;
	ck_assert_double_eq(model_params_total(&h), model_params_total(&t));
	/* Model FLOPs kind by kind (Megatron's hybrid_flops), the logits once:
	 * the same as the transformer's; a token at 8192: 2 x 6,979,321,856
	 * layer weights + 2 x 4096 x 128,256 logits + 32 layers x attention's
	 * 2 x 8192 x 32 x (128 + 128) = 13,958,643,712 + 1,050,673,152 +
	 * 4,294,967,296 = 19,304,284,160. */
	ck_assert_double_eq_tol(flops_forward_per_token(&h, 8192), flops_forward_per_token(&t, 8192), 1.0);
	ck_assert_double_eq_tol(flops_forward_per_token(&t, 8192), 19304284160.0, 1.0);
	for (int v = 0; v < 2; v++) {
		plan_init(&p);
		p.tp = 2;
		p.pp = v ? 2 : 1;
		p.vpp = v ? 2 : 1;
		p.dp = v ? 2 : 4;
		p.micro_batch = 1;
		p.global_batch = 32;
		p.seq_len = 8192;
		p.flash_attention = true;
		p.sequence_parallel = true;
		p.zero = 1;
		if (v) {
			p.custom_recompute = true;
			p.stage_recompute_count = 2;
			p.stage_recompute[0] = PLAN_RECOMPUTE_FULL;
			p.stage_recompute[1] = PLAN_RECOMPUTE_NONE;
		}
		ck_assert_msg(estimate_plan(&t, &c, &p, &opt, &et, &err), "%s", err.message);
		ck_assert_msg(estimate_plan(&h, &c, &p, &opt, &eh, &err), "%s", err.message);
		ck_assert_double_eq_tol(eh.iteration_time_s, et.iteration_time_s, 1e-9 * et.iteration_time_s);
		ck_assert_double_eq_tol(eh.breakdown.compute, et.breakdown.compute, 1e-9 * et.breakdown.compute);
		ck_assert_double_eq_tol(eh.breakdown.tp_comm, et.breakdown.tp_comm, 1e-9 * et.breakdown.tp_comm);
		ck_assert_double_eq_tol(eh.memory.total, et.memory.total, 1e-9 * et.memory.total);
		ck_assert_double_eq_tol(eh.memory.activations, et.memory.activations, 1e-9 * et.memory.activations);
	}
	/* ZB-H1's deferred weight gradients (review16): stage 1 of 2 keeps its
	 * linear layers' inputs and output gradients for one micro-batch, the
	 * same 16 attention and 16 MLP parts either way. */
	p.pp_schedule = PLAN_PP_ZB_H1;
	p.vpp = 1;
	p.custom_recompute = false;
	ck_assert(pipeline_deferred_w_bytes(&t, &p, 1) > 0.0);
	ck_assert_double_eq_tol(pipeline_deferred_w_bytes(&h, &p, 1), pipeline_deferred_w_bytes(&t, &p, 1), 1.0);
	p.pp_schedule = PLAN_PP_1F1B;
	/* --recompute-layers (review16): 2k hybrid layers save what k blocks
	 * save, less one more checkpointed input a block: each hybrid layer is
	 * its own checkpoint and keeps its 2 s b h / t input (SP), 2 x 8192
	 * x 4096 / 2 = 33,554,432 bytes. The differences between 8 and 2
	 * layers (4 and 1 blocks) cancel the layer re-materialised in the
	 * backward (a single kind's in the hybrid model) and leave 3 blocks:
	 * 3 x 33,554,432 = 100,663,296 bytes less saved. */
	p.pp = 1;
	p.vpp = 1;
	p.dp = 4;
	p.custom_recompute = false;
	p.recompute = PLAN_RECOMPUTE_NONE;
	ck_assert_double_eq_tol(memory_partial_recompute_bytes(&h, &p, &fw, 0, 8) -
					memory_partial_recompute_bytes(&h, &p, &fw, 0, 2),
				memory_partial_recompute_bytes(&t, &p, &fw, 0, 4) -
					memory_partial_recompute_bytes(&t, &p, &fw, 0, 1) + 100663296.0,
				1.0);
	ck_assert(memory_partial_recompute_bytes(&h, &p, &fw, 0, 2) <
		  memory_partial_recompute_bytes(&t, &p, &fw, 0, 1));
	cluster_release(&c);
}
END_TEST

/* optimize's pruning bound (search_lower_bound) stays under the estimate
 * for a hybrid model: kind by kind, not every layer as attention and MLP
 * (review16: 1.46x Nemotron-H 8B's time at tp 2 before). Nemotron-H 8B
 * at tp 2 SP on 64 H100s, pp 1 and 2, nemo: 0.87-0.90 of the estimate,
 * as Llama 3 8B's own bound is. */
START_TEST(test_hybrid_search_bound)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p;
	struct estimate e;
	struct plan_error err;
	struct estimate_options opt = { 0 };

	nemotron8b(&c, &m, &p);
	test_load_profile(PROFILE_FRAMEWORK, "nemo", &fw);
	opt.framework = &fw;
	p.zero = 1;
	p.global_batch = 192;
	for (int pp = 1; pp <= 2; pp++) {
		double bound;

		p.pp = pp;
		p.dp = 32 / pp;
		bound = search_lower_bound(&m, &c, &p, &fw, false);
		ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
		ck_assert(bound <= e.iteration_time_s);
		ck_assert(bound > 0.8 * e.iteration_time_s);
	}
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli hybridmean: ZeRO-3's gathered layers kind by kind, not two
 * mean layers. Nemotron-H 8B (a Mamba layer M 109,640,064 parameters, an
 * attention layer A 41,947,136, an MLP layer F 176,164,864; test_hybrid_params;
 * the mean 135,136,669.5), tp 2, on the one stage of
 * "M-M-M-M*-M-...-M-": what other grows by from ZeRO-1 to ZeRO-3.
 * - megatron-lm (one layer a unit, nothing else held): the forward's
 *   layer in use and the prefetched next one in 2 bytes; the largest
 *   pair M then F: 2 x (109,640,064 + 176,164,864) / 2 = 285,804,928
 *   (two mean layers: 270,273,339).
 * - pytorch-fsdp2 (reduce_bytes 4): in the backward layer i running
 *   (weights 2 + its gradients 2), i - 1 prefetched (2), i + 1's fp32
 *   reduce-scatter input held (4); the largest run F M F: (2 x F + 4 x M
 *   + 4 x F) / 2 = (352,329,728 + 438,560,256 + 704,659,456) / 2 =
 *   747,774,720 (mean: 10 x 135,136,669.5 / 2 = 675,683,347.5).
 * - megatron-fsdp (double buffers, reduce_bytes 2): the pool holds the
 *   most frequent units, M (24, tied with F's 24, M's first unit first),
 *   two for weights and two for gradients; the other units gathered when
 *   in use, the largest non-M pair A then F (41,947,136 + 176,164,864 =
 *   218,112,000): weights 2 x (2 M + 218,112,000) = 874,784,256, the
 *   bf16 gradients the same; together / 2 = 874,784,256 (mean: (4 + 4)
 *   x 135,136,669.5 / 2 = 540,546,678).
 */
START_TEST(test_hybrid_zero3_transient)
{
	static const struct {
		const char *fw;
		double bytes;
	} cases[] = {
		{ "megatron-lm", 285804928.0 },
		{ "pytorch-fsdp2", 747774720.0 },
		{ "megatron-fsdp", 874784256.0 },
	};
	struct cluster c;
	struct model m;
	struct plan p;

	nemotron8b(&c, &m, &p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct framework fw;
		struct memory_use z1, z3;

		test_load_profile(PROFILE_FRAMEWORK, cases[i].fw, &fw);
		p.zero = 1;
		memory_stage(&m, &p, &c, &fw, 0, model_params_total(&m), 0.0, &z1);
		p.zero = 3;
		memory_stage(&m, &p, &c, &fw, 0, model_params_total(&m), 0.0, &z3);
		ck_assert_msg(fabs(z3.other - z1.other - cases[i].bytes) < 1.0, "%s: %.1f", cases[i].fw,
			      z3.other - z1.other);
	}
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli hybridmean: the largest weight matrix over the kinds a hybrid
 * model has. Nemotron-H 56B (h 8192, 256 Mamba heads of 64, 8 groups, N
 * 256): in_proj 8192 x (2 x 16384 + 2 x 8 x 256 + 256 = 37120) =
 * 304,087,040, above an MLP matrix's 8192 x 32768 = 268,435,456 (the
 * transformer formula's answer) and QKV's 8192 x (8192 + 2 x 1024) =
 * 83,886,080. Nemotron-H 8B: its MLP matrix 4096 x 21504 = 88,080,384
 * over in_proj 4096 x 18560 = 76,021,760; its attention-only layer QKV
 * 4096 x (4096 + 2 x 1024) = 25,165,824, its MLP-only layer no K and V.
 */
START_TEST(test_hybrid_largest_matrix)
{
	struct cluster c;
	struct model m, km;
	struct plan p;

	nemotron8b(&c, &m, &p);
	ck_assert_double_eq(model_largest_matrix_params(&m), 88080384.0);
	model_kind_model(&m, MODEL_KIND_ATTENTION, &km);
	ck_assert_double_eq(model_largest_matrix_params(&km), 25165824.0);
	model_kind_model(&m, MODEL_KIND_MLP, &km);
	ck_assert_double_eq(model_largest_matrix_params(&km), 88080384.0);
	test_load_profile(PROFILE_MODEL, "nemotron-h-56b", &m);
	ck_assert_double_eq(model_largest_matrix_params(&m), 304087040.0);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli hybridmean: the optimizer's tensors kind by kind. A Mamba
 * layer 9 (pre-norm, in_proj, out_proj, conv1d weight and bias, dt_bias,
 * A_log, D, the gated norm), an attention layer 3 (norm, QKV, output
 * projection), an MLP layer 3 (norm, fc1, fc2). Nemotron-H 8B, pp 2 at
 * 30,22 (14 M, 3 *, 13 - and 10 M, 1 *, 11 -; test_hybrid_stage_kinds):
 * 14 x 9 + 16 x 3 = 174 and 10 x 9 + 12 x 3 = 126 (a transformer layer's
 * 6 each: 180 and 132); pp 1: 24 x 9 + 28 x 3 = 300 (not 312).
 */
START_TEST(test_hybrid_host_tensors)
{
	struct cluster c;
	struct model m;
	struct plan p;

	nemotron8b(&c, &m, &p);
	ck_assert_double_eq(host_rank_tensors(&m, &p, 0, 0.0), 300.0);
	split_30_22(&p);
	ck_assert_double_eq(host_rank_tensors(&m, &p, 0, 0.0), 174.0);
	ck_assert_double_eq(host_rank_tensors(&m, &p, 1, 0.0), 126.0);
	cluster_release(&c);
}
END_TEST

/*
 * Nemotron 3 Nano 30B-A3B (models/nemotron-3-nano-30b-a3b.yaml; shapes
 * from Megatron-Bridge's recipes/nemotronh/h100/nemotron_3_nano.py at
 * 067f987), by hand, h 2688:
 * - Mamba-2 (64 heads of 64: d_inner 4096; 8 groups of state 128):
 *   in_proj 2688 x (2 x 4096 + 2 x 8 x 128 + 64 = 10304) = 27,697,152;
 *   conv1d (4096 + 2048 = 6144 channels) 6144 x 4 + 6144 = 30,720;
 *   dt_bias, A_log, D 3 x 64 = 192; gated norm 4096; out_proj
 *   4096 x 2688 = 11,010,048; pre-norm 2688: 38,744,896 a layer, x 23 =
 *   891,132,608.
 * - attention (32 heads of 128, 2 groups): Q 2688 x 4096 = 11,010,048,
 *   K and V 2 x 2688 x 256 = 1,376,256, O 11,010,048, norm 2688:
 *   23,399,040, x 6 = 140,394,240.
 * - MoE: norm 2688, router 2688 x 128 = 344,064; an expert (squared
 *   ReLU, two matrices) 2 x 2688 x 1856 = 9,977,856; 128 routed
 *   1,277,165,568 and the shared 3712-wide MLP as 2 experts 19,955,712:
 *   1,297,468,032 a layer, x 23 = 29,841,764,736.
 * - embedding and untied head 2 x 131072 x 2688 = 704,643,072, final
 *   norm 2688.
 * Total 891,132,608 + 140,394,240 + 29,841,764,736 + 704,643,072 + 2688
 * = 31,577,937,344 (NVIDIA: 31.6 B). Active: an MoE layer's 6 routed
 * experts 59,867,136 instead of 1,277,165,568, 23 x 1,217,298,432 =
 * 27,997,863,936 fewer: 3,580,073,408 (3.58 B; without the input
 * embedding's 352,321,536, 3.23 B: NVIDIA's "3.2B active").
 */
START_TEST(test_hybrid_nemotron3_nano)
{
	struct model m;

	test_setup_paths();
	test_load_profile(PROFILE_MODEL, "nemotron-3-nano-30b-a3b", &m);
	ck_assert_double_eq(model_params_mamba_mixer(&m) + m.hidden, 38744896.0);
	ck_assert_double_eq(model_params_total(&m), 31577937344.0);
	ck_assert_double_eq(model_params_active(&m), 3580073408.0);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_MAMBA), 23);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_ATTENTION), 6);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_MOE), 23);
}
END_TEST

/*
 * Nemotron 3 Super 120B-A12B (models/nemotron-3-super-120b-a12b.yaml;
 * shapes from Megatron-LM's NVIDIA-Nemotron-3-Super-120B-A12B-BF16.sh at
 * d98e8a6, MTP from Megatron-Bridge's Super recipe at 067f987), by hand,
 * h 4096:
 * - Mamba-2 (128 heads of 64: d_inner 8192; 8 groups of state 128):
 *   in_proj 4096 x (2 x 8192 + 2 x 8 x 128 + 128 = 18560) = 76,021,760;
 *   conv1d (8192 + 2048 = 10240 channels) 10240 x 4 + 10240 = 51,200;
 *   dt_bias, A_log, D 3 x 128 = 384; gated norm 8192; out_proj
 *   8192 x 4096 = 33,554,432; pre-norm 4096: 109,640,064 a layer, x 40 =
 *   4,385,602,560.
 * - attention (32 heads of 128, 2 groups): Q 4096 x 4096 = 16,777,216,
 *   K and V 2 x 4096 x 256 = 2,097,152, O 16,777,216, norm 4096:
 *   35,655,680, x 8 = 285,245,440.
 * - latent MoE: norm 4096, router 4096 x 512 = 2,097,152,
 *   fc1_latent_proj and fc2_latent_proj 2 x 4096 x 1024 = 8,388,608; a
 *   routed expert (squared ReLU, two matrices, latent) 2 x 1024 x 2688 =
 *   5,505,024, 512 of them 2,818,572,288; the shared 5376-wide MLP on h
 *   as 2 experts 2 x 2 x 4096 x 2688 = 44,040,192: 2,873,102,336 a layer,
 *   x 40 = 114,924,093,440.
 * - embedding and untied head 2 x 131072 x 4096 = 1,073,741,824, final
 *   norm 4096.
 * Total 4,385,602,560 + 285,245,440 + 114,924,093,440 + 1,073,741,824 +
 * 4096 = 120,668,687,360 (NVIDIA's name: 120B; +0.56 %). Active: an MoE
 * layer's 22 routed experts 121,110,528 instead of 2,818,572,288, 40 x
 * 2,697,461,760 = 107,898,470,400 fewer: 12,770,216,960 (12.77 B; without
 * the input embedding's 536,870,912, 12.23 B; NVIDIA's name: 12B, +6.4 %
 * and +1.9 %). MTP (left out of the totals, as plan-cli leaves it out):
 * one depth, shared by the two (mtp_repeated), is an attention layer
 * 35,655,680, an MoE layer 2,873,102,336, eh_proj 2 x 4096 x 4096 =
 * 33,554,432 and three norms 12,288: 2,942,324,736 more on the one stage
 * at pp 1, of it routed 2,818,572,288.
 */
START_TEST(test_hybrid_nemotron3_super)
{
	struct model m, m0;
	struct plan p;
	double x, x0;

	test_setup_paths();
	test_load_profile(PROFILE_MODEL, "nemotron-3-super-120b-a12b", &m);
	ck_assert_double_eq(model_params_mamba_mixer(&m) + m.hidden, 109640064.0);
	ck_assert_double_eq(model_params_expert(&m), 5505024.0);
	ck_assert_double_eq(model_params_shared_expert(&m), 22020096.0);
	ck_assert_double_eq(model_params_moe_latent_proj(&m), 8388608.0);
	ck_assert_double_eq(model_params_total(&m), 120668687360.0);
	ck_assert_double_eq(model_params_active(&m), 12770216960.0);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_MAMBA), 40);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_ATTENTION), 8);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_MOE), 40);
	ck_assert_int_eq(model_mtp_param_depths(&m), 1);
	m0 = m;
	m0.mtp_layers = 0;
	m0.mtp_pattern[0] = '\0';
	m0.mtp_repeated = false;
	plan_init(&p);
	p.tp = p.pp = p.dp = 1;
	p.global_batch = 8;
	p.seq_len = 8192;
	ck_assert_double_eq_tol(estimate_stage_params(&m, &p, 0, &x) - estimate_stage_params(&m0, &p, 0, &x0),
				2942324736.0, 1e-3);
	ck_assert_double_eq_tol(x - x0, 2818572288.0, 1e-3);
}
END_TEST

/*
 * --recompute-modules on a hybrid model, layer kind by layer kind
 * (Megatron-Core at d98e8a6: hybrid_layer_specs.py builds the '*' and
 * '-' layers with their norm fused into linear_qkv / linear_fc1, the 'E'
 * layer with a pre_mlp_layernorm TENorm; transformer_layer.py recomputes
 * only a norm that is not IdentityOp; MambaLayer checkpoints nothing).
 * Nemotron-3 Nano, tp 1, micro-batch 1, seq 8192, bf16: "layernorm"
 * drops the MoE layer's norm output, 2 B x 8192 x 2688 = 44,040,192 B,
 * and nothing in a Mamba or attention layer. A hybrid model without MoE
 * layers (Nemotron-H 8B) under "layernorm" alone recomputes nothing and
 * keeps what no recomputation keeps (core_attn is not in the list): the
 * same iteration time and memory as --recompute none.
 */
START_TEST(test_hybrid_recompute_modules)
{
	struct cluster c;
	struct model m, km;
	struct plan p, q;
	struct estimate e, f;
	struct plan_error err;
	static const struct {
		int kind;
		double bytes;
	} rows[] = {
		{ MODEL_KIND_MOE, 44040192.0 },
		{ MODEL_KIND_MAMBA, 0.0 },
		{ MODEL_KIND_ATTENTION, 0.0 },
	};

	test_setup_paths();
	test_load_profile(PROFILE_MODEL, "nemotron-3-nano-30b-a3b", &m);
	plan_init(&p);
	p.micro_batch = 1;
	p.seq_len = 8192;
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		model_kind_model(&m, rows[i].kind, &km);
		ck_assert_double_eq_tol(memory_recompute_module_bytes(&km, &p, NULL, PLAN_RM_LAYERNORM),
					rows[i].bytes, 1e-6);
	}

	nemotron8b(&c, &m, &p);
	q = p;
	p.recompute = PLAN_RECOMPUTE_NONE;
	q.recompute = PLAN_RECOMPUTE_SELECTIVE;
	q.recompute_modules = 1 << PLAN_RM_LAYERNORM;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m, &c, &q, NULL, &f, &err), "%s", err.message);
	ck_assert_double_eq_tol(f.iteration_time_s, e.iteration_time_s, 1e-12 * e.iteration_time_s);
	ck_assert_double_eq_tol(f.memory.activations, e.memory.activations, 1e-6);
	/* mlp recomputes the '-' layers: slower, and fewer activations kept. */
	q.recompute_modules = 1 << PLAN_RM_MLP;
	ck_assert_msg(estimate_plan(&m, &c, &q, NULL, &f, &err), "%s", err.message);
	ck_assert(f.iteration_time_s > e.iteration_time_s);
	ck_assert(f.memory.activations < e.memory.activations);
	cluster_release(&c);
}
END_TEST

/* A small hybrid MoE model for multi-token prediction (plan-cli
 * hybridmtp): "*E*E", h 1024, 8 heads (MHA, d 128), V 32768, untied,
 * RMSNorm, no biases; 8 experts of ffn 512 (two matrices), top 2, no
 * shared expert. */
#define MTP_HYBRID_YAML                                                                                      \
	"name: mtp-toy\nlayers: 4\nhybrid_pattern: \"*E*E\"\nhidden: 1024\nheads: 8\nffn_hidden: 4096\n"   \
	"vocab: 32768\nseq_len: 2048\ntied_embeddings: false\ndropout: false\nbias: false\nnorm: rmsnorm\n" \
	"position_embedding: none\nmoe:\n  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 512\n"

/*
 * The MTP block's parameters (Megatron-Core's MultiTokenPredictionLayer,
 * multi_token_prediction.py at d98e8a6), pattern "*E":
 * - attention: Q, K, V, O 4 x 1024^2 = 4,194,304 and its norm 1024:
 *   4,195,328;
 * - MoE: its norm 1024 and router 1024 x 8 = 8192, 9,216; the routed
 *   experts 8 x 2 x 1024 x 512 = 8,388,608;
 * - eh_proj 2h x h = 2,097,152; enorm, hnorm, final_layernorm 3 x 1024:
 *   2,100,224;
 * one depth: 4,195,328 + 9,216 + 8,388,608 + 2,100,224 = 14,693,376,
 * of it routed 8,388,608. pp 1, tp 1, ep 1: mtp_layers 2 adds twice
 * that, 29,386,752 (routed 16,777,216); mtp_repeated once, 14,693,376.
 * pp 2, stage 1 (the output layer's, not the embedding's) adds the
 * untied embedding's copy too, 32768 x 1024 = 33,554,432; stage 0
 * nothing. ep 2 (tp 1): the routed 8 / 2 experts a depth, 4,194,304.
 */
START_TEST(test_hybrid_mtp_params)
{
	struct model m0, m2, mr;
	struct plan p;
	double x0, x2, xr;

	test_load_model(&m0, MTP_HYBRID_YAML);
	test_load_model(&m2, MTP_HYBRID_YAML "mtp_layers: 2\nmtp_pattern: \"*E\"\n");
	test_load_model(&mr, MTP_HYBRID_YAML "mtp_layers: 2\nmtp_pattern: \"*E\"\nmtp_repeated: true\n");
	ck_assert_int_eq(model_mtp_kind_layers(&m2, MODEL_KIND_ATTENTION), 1);
	ck_assert_int_eq(model_mtp_kind_layers(&m2, MODEL_KIND_MOE), 1);
	ck_assert_int_eq(model_mtp_param_depths(&m2), 2);
	ck_assert_int_eq(model_mtp_param_depths(&mr), 1);
	plan_init(&p);
	p.tp = p.pp = p.dp = 1;
	p.global_batch = 8;
	p.seq_len = 2048;
	ck_assert_double_eq_tol(estimate_stage_params(&m2, &p, 0, &x2) - estimate_stage_params(&m0, &p, 0, &x0),
				29386752.0, 1e-6);
	ck_assert_double_eq_tol(x2 - x0, 16777216.0, 1e-6);
	ck_assert_double_eq_tol(estimate_stage_params(&mr, &p, 0, &xr) - estimate_stage_params(&m0, &p, 0, &x0),
				14693376.0, 1e-6);
	ck_assert_double_eq_tol(xr - x0, 8388608.0, 1e-6);
	/* parameters and FLOPs leave MTP out (DeepSeek-V3's 671B; plan-cli's convention). */
	ck_assert_double_eq(model_params_total(&m2), model_params_total(&m0));
	ck_assert_double_eq(flops_forward_per_token(&m2, 2048), flops_forward_per_token(&m0, 2048));
	p.pp = 2;
	ck_assert_double_eq_tol(estimate_stage_params(&m2, &p, 1, NULL) - estimate_stage_params(&m0, &p, 1, NULL),
				29386752.0 + 33554432.0, 1e-6);
	ck_assert_double_eq_tol(estimate_stage_params(&m2, &p, 0, NULL), estimate_stage_params(&m0, &p, 0, NULL),
				1e-6);
	ck_assert_double_eq_tol(memory_stage_ends_params(&m2, &p, 1) - memory_stage_ends_params(&m0, &p, 1),
				33554432.0, 1e-6);
	p.pp = 1;
	p.ep = 2;
	p.dp = 2;
	estimate_stage_params(&m0, &p, 0, &x0);
	estimate_stage_params(&mr, &p, 0, &xr);
	ck_assert_double_eq_tol(xr - x0, 4194304.0, 1e-6);
}
END_TEST

/*
 * Activations of the MTP depths (plan-cli mtpmem), the toy "*E" depth on
 * one GPU, micro-batch 1 x 2048 tokens, bf16, flash attention, no
 * recomputation, no framework (loss_logit_memory 4, two routed copies),
 * in bytes a token (h 1024, 8 heads of 128, MHA, V 32768):
 * - the attention layer: its norm's input and QKV's input 4 h = 4096; Q,
 *   K, V and the projection's input 2 x 4 x 1024 = 8192: 12,288;
 * - the MoE layer: 4 h = 4096; its 2 routed copies in and out 2 x 2 x 2
 *   x 1024 = 8192; its experts' rows (top 2) 2 x 4 x 512 = 4096: 16,384;
 * - the head: the final norm's input and the output layer's 4 h = 4096,
 *   the logits and loss 4 V = 131,072: 135,168;
 * - Megatron-Core's MultiTokenPredictionLayer (multi_token_prediction.py
 *   at d98e8a6, _concat_embeddings): enorm's input (the embedding) 2 h,
 *   hnorm's input (the hidden states) 2 h, eh_proj's input (the two
 *   normed halves concatenated) 4 h: 8 h = 8192.
 * A depth 12,288 + 16,384 + 135,168 + 8192 = 172,032 a token, x 2048 =
 * 352,321,536; two depths 704,643,072 more than the model without MTP
 * (671,088,640 before eh_proj's and the norms' inputs were counted).
 * With sequence parallelism over tp 2 the 8 h a depth is the rank's
 * half: 2 x 2048 x 4096 = 16,777,216 fewer than without SP, where the
 * layers' 4 h terms and the head's (tp-split either way) also move by
 * 2 x 2048 x (4096 + 4096) / 2 = 16,777,216 for SP's replicated terms:
 * 33,554,432 in all.
 */
START_TEST(test_hybrid_mtp_activations)
{
	struct cluster c;
	struct model m0, m2;
	struct plan p;
	struct memory_use u0, u2;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_model(&m0, MTP_HYBRID_YAML);
	test_load_model(&m2, MTP_HYBRID_YAML "mtp_layers: 2\nmtp_pattern: \"*E\"\nmtp_repeated: true\n");
	fixture_one_gpu_plan(&p);
	p.global_batch = 8;
	p.seq_len = 2048;
	p.recompute = PLAN_RECOMPUTE_NONE;
	memory_stage(&m0, &p, &c, NULL, 0, 0.0, 0.0, &u0);
	memory_stage(&m2, &p, &c, NULL, 0, 0.0, 0.0, &u2);
	ck_assert_double_eq_tol(u2.activations - u0.activations, 704643072.0, 1e-3);
	/* tp 2 with and without SP: the depths' difference. */
	p.tp = 2;
	memory_stage(&m0, &p, &c, NULL, 0, 0.0, 0.0, &u0);
	memory_stage(&m2, &p, &c, NULL, 0, 0.0, 0.0, &u2);
	p.sequence_parallel = true;
	{
		struct memory_use s0, s2;

		memory_stage(&m0, &p, &c, NULL, 0, 0.0, 0.0, &s0);
		memory_stage(&m2, &p, &c, NULL, 0, 0.0, 0.0, &s2);
		ck_assert_double_eq_tol((u2.activations - u0.activations) - (s2.activations - s0.activations),
					33554432.0, 1e-3);
	}
	cluster_release(&c);
}
END_TEST

/*
 * What a finished MTP head keeps (plan-cli mtphead), the toy "*E" depths
 * on one GPU, micro-batch 1 x 2048 tokens, V 32768, the megatron-bridge
 * profile (TE 2.18's cross entropy: loss_logit_memory 6, the bf16 logits
 * beside the fp32 gradient; loss_kept_memory 4, the fp32 gradient that
 * CrossEntropyFunction saves, transformer_engine/pytorch/cross_entropy.py
 * l. 62 at v2.18). Megatron-Core's process_mtp_loss finishes each
 * depth's loss in the forward, so at the main head's peak a depth's head
 * is 4 bytes a logit, not 6: the two depths' heads are
 * 2 x (6 - 4) x 2048 x 32768 = 268,435,456 bytes below the old charge
 * (each depth at loss_logit_memory). The model without MTP is untouched
 * (its main head stays at 6). TE 2.17 (loss_logit_memory 2, the logits
 * holding the gradient in place, saved whole): a finished head keeps 2,
 * the cap, whatever loss_kept_memory says: (2, 4) as (2, 2).
 */
START_TEST(test_hybrid_mtp_head_kept)
{
	struct cluster c;
	struct framework fw;
	struct model m0, m2;
	struct plan p;
	struct memory_use k4, k6, n4, n6;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_profile(PROFILE_FRAMEWORK, "megatron-bridge", &fw);
	test_load_model(&m0, MTP_HYBRID_YAML);
	test_load_model(&m2, MTP_HYBRID_YAML "mtp_layers: 2\nmtp_pattern: \"*E\"\nmtp_repeated: true\n");
	ck_assert_double_eq(fw.loss_logit_memory, 6.0);
	ck_assert_double_eq(fw.loss_kept_memory, 4.0);
	fixture_one_gpu_plan(&p);
	p.global_batch = 8;
	p.seq_len = 2048;
	p.recompute = PLAN_RECOMPUTE_NONE;
	memory_stage(&m2, &p, &c, &fw, 0, 0.0, 0.0, &k4);
	memory_stage(&m0, &p, &c, &fw, 0, 0.0, 0.0, &n4);
	fw.loss_kept_memory = 6.0;
	memory_stage(&m2, &p, &c, &fw, 0, 0.0, 0.0, &k6);
	memory_stage(&m0, &p, &c, &fw, 0, 0.0, 0.0, &n6);
	ck_assert_double_eq_tol(k6.activations - k4.activations, 268435456.0, 1e-3);
	ck_assert_double_eq_tol(n6.activations, n4.activations, 1e-3);
	fw.loss_logit_memory = 2.0;
	fw.loss_kept_memory = 4.0;
	memory_stage(&m2, &p, &c, &fw, 0, 0.0, 0.0, &k4);
	fw.loss_kept_memory = 2.0;
	memory_stage(&m2, &p, &c, &fw, 0, 0.0, 0.0, &k6);
	ck_assert_double_eq_tol(k4.activations, k6.activations, 1e-3);
	cluster_release(&c);
}
END_TEST

/*
 * Megatron-FSDP's ZeRO-3 units of a hybrid MoE model under EP (plan-cli
 * mtphead): a rank's MoE unit holds its experts / ep, and none when the
 * expert-data-parallel group is one rank (param_and_grad_buffer.py at
 * Megatron-LM d98e8a6 l. 2655-2656, 2718: the expert buffers are not
 * distributed, and fetch_bucket hands back the local buffer). The toy
 * "*E*E" (no MTP), megatron-fsdp (double buffers, bf16 gradients): an
 * attention layer A = 4 x 1024^2 + 1024 = 4,195,328, an MoE layer's
 * norm and router 1024 + 8192 = 9,216 and an expert 2 x 1024 x 512 =
 * 1,048,576 (test_hybrid_mtp_params). The pool is A (two of each kind,
 * the first unit's kind on a tie); the E units are never adjacent, so
 * the gathered weights are 2 x 2 A + 2 E and the gradient buffers
 * 2 x (2 A + E): ZeRO-3's other less ZeRO-1's 8 A + 4 E, 8 A =
 * 33,562,624.
 * - ep 2, dp 2 (expert-DP 1): E = 9,216: 33,562,624 + 36,864 =
 *   33,599,488.
 * - ep 2, dp 4 (expert-DP 2): E = 9,216 + 4 x 1,048,576 = 4,203,520:
 *   33,562,624 + 16,814,080 = 50,376,704.
 * (Before: all 8 experts, E = 8,397,824, 67,153,920 in both.)
 */
START_TEST(test_hybrid_zero3_local_experts)
{
	static const struct {
		int dp;
		double bytes;
	} cases[] = { { 2, 33599488.0 }, { 4, 50376704.0 } };
	struct cluster c;
	struct framework fw;
	struct model m;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_profile(PROFILE_FRAMEWORK, "megatron-fsdp", &fw);
	test_load_model(&m, MTP_HYBRID_YAML);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct plan p;
		struct memory_use z1, z3;

		fixture_one_gpu_plan(&p);
		p.global_batch = 8;
		p.seq_len = 2048;
		p.dp = cases[i].dp;
		p.ep = 2;
		p.zero = 1;
		memory_stage(&m, &p, &c, &fw, 0, 0.0, 0.0, &z1);
		p.zero = 3;
		memory_stage(&m, &p, &c, &fw, 0, 0.0, 0.0, &z3);
		ck_assert_msg(fabs(z3.other - z1.other - cases[i].bytes) < 1.0, "dp %d: %.1f", cases[i].dp,
			      z3.other - z1.other);
	}
	cluster_release(&c);
}
END_TEST


/*
 * plan-cli litemem: Megatron-Bridge 067f987's
 * nemotron_3_5_lightning_pretrain_16gpu_h100_fp8cs_config, term by term
 * (docs/research/models/nemotron-3-5-lightning-30b-a3b.yaml: Nano and two
 * "*E" MTP depths sharing one set of parameters; 16 H100, tp 1, ep 8,
 * etp 1, dp 16, distributed optimizer, MBS 1 at 8192 tokens, fp8 current
 * scaling with fp8 parameters, selective recompute of layernorm), by
 * hand, h 2688, V 131072, shapes as test_hybrid_nemotron3_nano:
 * - A rank's parameters: the 23 main MoE layers and the one MTP MoE
 *   layer hold 128 / 8 = 16 experts of 9,977,856 each: 24 x 16 x
 *   9,977,856 = 3,831,496,704 expert parameters; dense: Nano's
 *   31,577,937,344 - 23 x 1,277,165,568 = 2,203,129,280 plus the MTP
 *   depth's eh_proj 2 x 2688^2 = 14,450,688, enorm, hnorm and final norm
 *   3 x 2688 = 8,064, attention layer 23,399,040 and MoE layer less its
 *   routed experts 2,688 + 344,064 + 19,955,712 = 20,302,464:
 *   2,261,289,536. In all 6,092,786,240.
 * - weights: 2 bytes each (the linears' fp8 data and, on Hopper, the
 *   transpose TE's post_all_gather_processing creates; the embedding,
 *   head and norms in bf16): 12,185,572,480. Gradients: the bf16 buffer
 *   (grad_reduce_in_fp32 False), whole at ZeRO 1: 12,185,572,480.
 * - optimizer: fp32 master and two fp32 moments, 12 bytes, the dense
 *   ones sharded over dp 16 and the experts over the expert-DP group of
 *   16 / 8 = 2: 12 x (2,261,289,536 / 16 + 3,831,496,704 / 2) =
 *   12 x (141,330,596 + 1,915,748,352) = 24,684,947,376.
 * - activations, bytes a token (q = 1, fp8 saved inputs):
 *   Mamba: norm input 2h, in_proj's quantised ln_out h (3h = 8,064),
 *   zxbcdt 2 x 10,304, out_x 8,192, gated norm input 8,192 and rstd
 *   32, out_proj's input 4,096: 49,184. Attention: 3h = 8,064, Q 8,192,
 *   K and V 1,024, output 8,192 (linear_proj keeps the original):
 *   25,472. MoE: the norm's input 2h = 5,376 (its output recomputed),
 *   routed fc1 input k h = 16,128, fc1 output 2 k f = 22,272, fc2 input
 *   k f = 11,136, shared fc1 output 2 x 3,712 = 7,424, shared fc2 input
 *   3,712: 66,048. Layers: 8192 x (23 x 49,184 + 6 x 25,472 + 23 x
 *   66,048) = 22,963,552,256. Main head: 8192 x (4h + 6 V) =
 *   6,530,531,328. Each depth: its layers 8192 x (25,472 + 66,048) =
 *   749,731,840, enorm and hnorm inputs and eh_proj's quantised input
 *   8192 x 6h = 132,120,576, its head 8192 x (4h + 4 V) = 4,383,047,680:
 *   5,264,900,096, two of them 10,529,800,192. In all 40,023,883,776.
 */
START_TEST(test_hybrid_lightning_h100_states)
{
	char path[PATH_MAX];
	struct cluster c;
	struct framework fw;
	struct model m;
	struct plan p;
	struct estimate e;
	struct estimate_options opt = { .framework = &fw };
	struct plan_error err;
	double params, expert;

	test_setup_paths();
	snprintf(path, sizeof(path), "%s/docs/research/models/nemotron-3-5-lightning-30b-a3b.yaml",
		 getenv("PLAN_TEST_SOURCE_ROOT"));
	test_load_profile(PROFILE_MODEL, path, &m);
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_profile(PROFILE_FRAMEWORK, "megatron-bridge", &fw);
	fw.moe_dispatcher = FRAMEWORK_MOE_DISPATCH_HYBRIDEP;
	plan_init(&p);
	p.tp = p.pp = p.cp = 1;
	p.dp = 16;
	p.ep = 8;
	p.etp = 1;
	p.micro_batch = 1;
	p.global_batch = 1024;
	p.seq_len = 8192;
	p.flash_attention = true;
	p.zero = 1;
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	p.recompute_modules = 1 << PLAN_RM_LAYERNORM;
	p.precision = PLAN_PRECISION_FP8;
	p.fp8_recipe = PLAN_FP8_CURRENT;
	params = estimate_stage_params(&m, &p, 0, &expert);
	ck_assert_rel(expert, 3831496704.0, 1e-12);
	ck_assert_rel(params, 6092786240.0, 1e-12);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	ck_assert_rel(e.memory.weights, 12185572480.0, 1e-9);
	ck_assert_rel(e.memory.gradients, 12185572480.0, 1e-9);
	ck_assert_rel(e.memory.optimizer, 24684947376.0, 1e-9);
	ck_assert_rel(e.memory.activations, 40023883776.0, 1e-9);
	cluster_release(&c);
}
END_TEST

/*
 * Time (plan-cli hybridmtp): a depth runs its layers, eh_proj and the
 * head again, D times whether or not it shares parameters. On one GPU
 * (no DP reduction) with mtp_repeated the optimizer steps over one
 * depth's parameters for 1 and 2 depths alike, so the second depth adds
 * what the first did less that step: t(2) - t(1) = t(1) - t(0) -
 * (opt(1) - opt(0)), to rounding. And a depth's compute is that of the two
 * layers "*E" added to the model ("*E*E*E" less "*E*E") plus the head's
 * forward and backward and three times eh_proj's forward GEMM (bs x h
 * by 2h x h: forward, dX and dW), as compute_ends_time and
 * compute_gemm_time give them: 8 micro-batches of 1 x 2048 tokens.
 */
START_TEST(test_hybrid_mtp_time)
{
	struct cluster c;
	struct model m[3], m6;
	struct plan p;
	struct estimate e[3], e6;
	struct compute_ends ce;
	struct plan_error err;
	double proj, depth;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_model(&m[0], MTP_HYBRID_YAML);
	test_load_model(&m[1], MTP_HYBRID_YAML "mtp_layers: 1\nmtp_pattern: \"*E\"\nmtp_repeated: true\n");
	test_load_model(&m[2], MTP_HYBRID_YAML "mtp_layers: 2\nmtp_pattern: \"*E\"\nmtp_repeated: true\n");
	test_load_model(&m6, "name: mtp-toy\nlayers: 6\nhybrid_pattern: \"*E*E*E\"\nhidden: 1024\nheads: 8\n"
			     "ffn_hidden: 4096\nvocab: 32768\nseq_len: 2048\ntied_embeddings: false\n"
			     "dropout: false\nbias: false\nnorm: rmsnorm\nposition_embedding: none\nmoe:\n"
			     "  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 512\n");
	fixture_one_gpu_plan(&p);
	p.global_batch = 8;
	p.seq_len = 2048;
	for (int d = 0; d < 3; d++)
		ck_assert_msg(estimate_plan(&m[d], &c, &p, NULL, &e[d], &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m6, &c, &p, NULL, &e6, &err), "%s", err.message);
	ck_assert(e[1].iteration_time_s > e[0].iteration_time_s);
	/* The shared depth's step is the same for 1 and 2 depths. */
	ck_assert_double_eq(e[2].breakdown.optimizer, e[1].breakdown.optimizer);
	ck_assert(e[1].breakdown.optimizer > e[0].breakdown.optimizer);
	ck_assert_double_eq_tol(e[2].iteration_time_s - e[1].iteration_time_s,
				e[1].iteration_time_s - e[0].iteration_time_s -
					(e[1].breakdown.optimizer - e[0].breakdown.optimizer),
				1e-9 * e[2].iteration_time_s);
	compute_ends_time(&m[0], &p, &c, NULL, &ce);
	proj = compute_gemm_time(&c, 2048.0, 1024.0, 2048.0, 1);
	depth = e6.breakdown.compute - e[0].breakdown.compute + 8.0 * (ce.head_fwd_s + ce.head_bwd_s + 3.0 * proj);
	ck_assert_double_eq_tol(e[1].breakdown.compute - e[0].breakdown.compute, depth, 1e-9 * depth);
	ck_assert_double_eq_tol(e[2].breakdown.compute - e[0].breakdown.compute, 2.0 * depth, 2e-9 * depth);
	cluster_release(&c);
}
END_TEST

/*
 * The kind-by-kind MTP against the transformer's (as
 * test_hybrid_spells_transformer): Llama 3 8B with mtp_layers 2 (a depth
 * one layer of its last layer's kind) and its hybrid spelling "*-*-..."
 * with mtp_pattern "*-" run the same modules: the same time, compute,
 * TP communication and activations, on pp 1 and pp 2, selective
 * recomputation (full recomputation keeps a checkpoint a hybrid layer,
 * two a block, in the decoder as in the MTP depth). Parameters differ
 * by Megatron-Core's third norm a depth (final_layernorm, which the
 * transformer's count, DeepSeek-V3's two RMSNorms, leaves out): 2 x 4096
 * on the last stage, tp 2 ways, 4096; the optimizer's step over them
 * moves the iteration by under 1e-6 of it.
 */
START_TEST(test_hybrid_mtp_spells_transformer)
{
	struct cluster c;
	struct model t, h;
	struct plan p;
	struct estimate et, eh;
	struct plan_error err;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_profile(PROFILE_MODEL, "llama3-8b", &t);
	t.mtp_layers = 2;
	as_hybrid(&t, &h);
	strcpy(h.mtp_pattern, "*-");
	for (int v = 0; v < 2; v++) {
		plan_init(&p);
		p.tp = 2;
		p.pp = v ? 2 : 1;
		p.dp = v ? 2 : 4;
		p.micro_batch = 1;
		p.global_batch = 32;
		p.seq_len = 8192;
		p.flash_attention = true;
		p.sequence_parallel = true;
		p.recompute = PLAN_RECOMPUTE_SELECTIVE;
		ck_assert_msg(estimate_plan(&t, &c, &p, NULL, &et, &err), "%s", err.message);
		ck_assert_msg(estimate_plan(&h, &c, &p, NULL, &eh, &err), "%s", err.message);
		ck_assert_double_eq_tol(eh.breakdown.compute, et.breakdown.compute, 1e-9 * et.breakdown.compute);
		ck_assert_double_eq_tol(eh.breakdown.tp_comm, et.breakdown.tp_comm, 1e-9 * et.breakdown.tp_comm);
		ck_assert_double_eq_tol(eh.iteration_time_s, et.iteration_time_s, 1e-6 * et.iteration_time_s);
		ck_assert_double_eq_tol(eh.memory.activations, et.memory.activations, 1e-9 * et.memory.activations);
		ck_assert_double_eq_tol(estimate_stage_params(&h, &p, p.pp - 1, NULL) -
						estimate_stage_params(&t, &p, p.pp - 1, NULL),
					4096.0, 1e-3);
	}
	/* mtp_repeated on the transformer (Megatron-Core's legacy repeated
	 * mode): one depth's parameters fewer, a Llama 3 8B layer (Q, O 2 x
	 * 4096^2, K, V 2 x 4096 x 1024, SwiGLU 3 x 4096 x 14336, two norms:
	 * 218,112,000) with M_k 2 x 4096^2 = 33,554,432 and two norms 8192:
	 * 251,674,624, tp 2 ways 125,837,312. */
	h = t;
	h.mtp_repeated = true;
	ck_assert_double_eq_tol(estimate_stage_params(&t, &p, 1, NULL) - estimate_stage_params(&h, &p, 1, NULL),
				125837312.0, 1e-3);
	cluster_release(&c);
}
END_TEST

static Suite *
hybrid_suite(void)
{
	Suite *s = suite_create("hybrid");
	TCase *tc = tcase_create("hybrid");

	tcase_add_test(tc, test_hybrid_params);
	tcase_add_test(tc, test_hybrid_stage_kinds);
	tcase_add_test(tc, test_hybrid_refused);
	tcase_add_test(tc, test_hybrid_spells_transformer);
	tcase_add_test(tc, test_hybrid_search_bound);
	tcase_add_test(tc, test_hybrid_zero3_transient);
	tcase_add_test(tc, test_hybrid_largest_matrix);
	tcase_add_test(tc, test_hybrid_host_tensors);
	tcase_add_test(tc, test_hybrid_nemotron3_nano);
	tcase_add_test(tc, test_hybrid_nemotron3_super);
	tcase_add_test(tc, test_hybrid_recompute_modules);
	tcase_add_test(tc, test_hybrid_mtp_params);
	tcase_add_test(tc, test_hybrid_mtp_activations);
	tcase_add_test(tc, test_hybrid_mtp_head_kept);
	tcase_add_test(tc, test_hybrid_zero3_local_experts);
	tcase_add_test(tc, test_hybrid_lightning_h100_states);
	tcase_add_test(tc, test_hybrid_mtp_time);
	tcase_add_test(tc, test_hybrid_mtp_spells_transformer);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(hybrid_suite)
