/* The first and last layers in bf16 under an fp8 or fp4 plan (plan
 * bf16_first_layers, bf16_last_layers: Megatron-Core's
 * --first-last-layers-bf16, megatron/core/fp8_utils.py
 * is_first_last_bf16_layer), each value worked out by hand in its
 * comment. */
#include <math.h>
#include <string.h>

#include "plan/compute.h"
#include "plan/estimate.h"
#include "plan/framework.h"
#include "plan/memory.h"
#include "plan/pipeline.h"
#include "fixtures.h"
#include "testutil.h"

/* Llama 3 8B (32 layers) on DGX H100s, tp 1, one sequence of 8192
 * tokens a micro-batch, fp8 with current scaling (delayed scaling does
 * not go with bf16 layers), Megatron-LM. */
static void
llama8b_fp8(struct cluster *c, struct model *m, struct framework *fw, struct plan *p, int pp)
{
	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", c);
	test_load_profile(PROFILE_MODEL, "llama3-8b", m);
	test_load_profile(PROFILE_FRAMEWORK, "megatron-lm", fw);
	plan_init(p);
	p->tp = 1;
	p->pp = pp;
	p->dp = 2;
	p->micro_batch = 1;
	p->global_batch = 16; /* 8 micro-batches a pipeline */
	p->seq_len = 8192;
	p->flash_attention = true;
	p->precision = PLAN_PRECISION_FP8;
	p->fp8_recipe = PLAN_FP8_CURRENT;
}

/* Which stage holds which bf16 layer (layers numbered from 1; Megatron's
 * global layer_no from 0: layer_no < start or >= 32 - end).
 * - pp 4, 8 layers a stage, first 3 and last 2: layers 1-3 on stage 0,
 *   31-32 on stage 3: 3, 0, 0, 2.
 * - pp 4 x vpp 2, chunks of 4, chunk j*4 + i on stage i, first 5 and
 *   last 2: stage 0 holds 1-4 and 17-20 (4 in bf16), stage 1 5-8 and
 *   21-24 (layer 5: 1), stage 2 9-12 and 25-28 (0), stage 3 13-16 and
 *   29-32 (31, 32: 2).
 * - DualPipe, pp 4, first 3 and last 2: rank 0 runs stages 0 and 3, half
 *   the micro-batches each: (3 + 2) / 2 = 2.5; rank 1 stages 1 and 2: 0. */
START_TEST(test_bf16_layer_count)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p;
	int moe;
	double rmoe;
	static const int even[4] = { 3, 0, 0, 2 }, interleaved[4] = { 4, 1, 0, 2 };

	llama8b_fp8(&c, &m, &fw, &p, 4);
	ck_assert_int_eq(pipeline_stage_bf16_layers(&m, &p, 0, &moe), 0); /* none asked */
	p.bf16_first_layers = 3;
	p.bf16_last_layers = 2;
	for (int s = 0; s < 4; s++) {
		ck_assert_int_eq(pipeline_stage_bf16_layers(&m, &p, s, &moe), even[s]);
		ck_assert_int_eq(moe, 0); /* a dense model */
	}
	p.vpp = 2;
	p.bf16_first_layers = 5;
	for (int s = 0; s < 4; s++)
		ck_assert_int_eq(pipeline_stage_bf16_layers(&m, &p, s, &moe), interleaved[s]);
	p.vpp = 1;
	p.bf16_first_layers = 3;
	p.pp_schedule = PLAN_PP_DUALPIPE;
	ck_assert_double_eq_tol(pipeline_rank_bf16_layers(&m, &p, 0, &rmoe), 2.5, 1e-15);
	ck_assert_double_eq_tol(pipeline_rank_bf16_layers(&m, &p, 1, &rmoe), 0.0, 1e-15);
	cluster_release(&c);
}
END_TEST

/* Memory of stage 0 (pp 4, 1F1B, 8 micro-batches) with its first 3
 * layers in bf16:
 * - weights: a layer is 2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336
 *   + 2 x 4096 = 218,112,000 parameters, whose fp8 copies under current
 *   scaling on Hopper take 1 + 1 bytes (the copy and its transpose,
 *   fp8_recipe.c): 3 x 218,112,000 x 2 = 1,308,672,000 bytes fewer;
 * - activations: the stage keeps min(8, 4 - 0) = 4 micro-batches of
 *   each layer (Narayanan et al. SC21, Sec. 2.2), and a bf16 layer keeps
 *   its linear inputs in 2 bytes where current scaling keeps 1: (2 - 1) x
 *   8192 x (2 x 4096 + 14336) = 184,549,376 bytes more a layer and
 *   micro-batch, 3 x 4 x that = 2,214,592,512 (the projection's input
 *   the same either way: megatron-lm's fp8_save_original_input keeps it
 *   in bf16, as the fused attention does, under current scaling);
 * - stage 1 holds none of them: unchanged. */
START_TEST(test_bf16_layer_memory)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p, b;
	struct memory_use u0, u1;
	double expert, params;

	llama8b_fp8(&c, &m, &fw, &p, 4);
	b = p;
	b.bf16_first_layers = 3;
	b.bf16_last_layers = 2;
	ck_assert_rel(memory_stage_bf16_params(&m, &b, 0, &expert), 3.0 * 218112000.0, 1e-12);
	ck_assert_double_eq(expert, 0.0);
	params = estimate_stage_params(&m, &p, 0, &expert);
	memory_stage(&m, &p, &c, &fw, 0, params, expert, &u0);
	memory_stage(&m, &b, &c, &fw, 0, params, expert, &u1);
	ck_assert_rel(u0.weights - u1.weights, 1308672000.0, 1e-9);
	ck_assert_rel(u1.activations - u0.activations, 2214592512.0, 1e-9);
	ck_assert_rel(u1.gradients, u0.gradients, 1e-15);
	ck_assert_rel(u1.optimizer, u0.optimizer, 1e-15);
	params = estimate_stage_params(&m, &p, 1, &expert);
	memory_stage(&m, &p, &c, &fw, 1, params, expert, &u0);
	memory_stage(&m, &b, &c, &fw, 1, params, expert, &u1);
	ck_assert_rel(u1.total, u0.total, 1e-15);
	cluster_release(&c);
}
END_TEST

/* plan-cli review15: --recompute-layers 2 on pp 4 (1F1B, 8 micro-batches):
 * stage 0's layers 1 and 2 recompute in full and keep their 2sbh input
 * alone (memory_partial_recompute_bytes), bf16 or not, so with the first
 * 2 layers in bf16 its activations stay as they were; with the first 3,
 * layer 3 (no recomputation) keeps its linear inputs in 2 bytes where
 * current scaling keeps 1: 4 micro-batches in flight x 184,549,376
 * (test_bf16_layer_memory) = 738,197,504 bytes more. The weights lose
 * the layers' fp8 copies either way (2 x 218,112,000 x 2 bytes). */
START_TEST(test_bf16_layer_memory_recompute_layers)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p, b;
	struct memory_use u0, u1;
	double expert, params;

	llama8b_fp8(&c, &m, &fw, &p, 4);
	p.custom_recompute_layers = true;
	p.stage_recompute_layers_count = 4;
	for (int s = 0; s < 4; s++)
		p.stage_recompute_layers[s] = 2;
	b = p;
	b.bf16_first_layers = 2;
	params = estimate_stage_params(&m, &p, 0, &expert);
	memory_stage(&m, &p, &c, &fw, 0, params, expert, &u0);
	memory_stage(&m, &b, &c, &fw, 0, params, expert, &u1);
	ck_assert_rel(u1.activations, u0.activations, 1e-15);
	ck_assert_rel(u0.weights - u1.weights, 872448000.0, 1e-9);
	b.bf16_first_layers = 3;
	memory_stage(&m, &b, &c, &fw, 0, params, expert, &u1);
	ck_assert_rel(u1.activations - u0.activations, 738197504.0, 1e-9);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli review22: --recompute-modules apply to the bf16 layers too
 * (Megatron-Core sets recompute_mlp on every dense layer,
 * transformer_layer.py l. 537-539 at d98e8a6), so what a module drops a
 * bf16 layer keeps in neither precision. Stage 0 of test_bf16_layer_memory
 * (first 3 layers in bf16, 4 micro-batches in flight; h 4096, f 14336,
 * gated, sb 8192, tp 1, no SP, current scaling q = 1, megatron-lm's TE
 * spec):
 * - core_attn + layernorm (flash attention, both norms fused: nothing
 *   dropped in either layer): as without modules, 2,214,592,512 bytes;
 * - mlp: the fp8 layer drops (6 - (2 - 1)) sbf + 1 sbh (fc1's output, the
 *   activation's, fc2's copy; fc1's ln_out copy), the bf16 layer 6 sbf +
 *   2 sbh, so of the fp8 recipe's saving sb (2h + f) = 184,549,376 a
 *   layer only QKV's input, sb h = 33,554,432, is left: 3 x 4 x that =
 *   402,653,184 (the fp8 layers' count, 2,214,592,512, before).
 */
START_TEST(test_bf16_layer_memory_modules)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p, b;
	struct memory_use u0, u1;
	double expert, params;

	llama8b_fp8(&c, &m, &fw, &p, 4);
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	p.recompute_modules = 1 << PLAN_RM_CORE_ATTN | 1 << PLAN_RM_LAYERNORM;
	b = p;
	b.bf16_first_layers = 3;
	params = estimate_stage_params(&m, &p, 0, &expert);
	memory_stage(&m, &p, &c, &fw, 0, params, expert, &u0);
	memory_stage(&m, &b, &c, &fw, 0, params, expert, &u1);
	ck_assert_rel(u1.activations - u0.activations, 2214592512.0, 1e-9);
	p.recompute_modules = b.recompute_modules = 1 << PLAN_RM_MLP;
	memory_stage(&m, &p, &c, &fw, 0, params, expert, &u0);
	memory_stage(&m, &b, &c, &fw, 0, params, expert, &u1);
	ck_assert_rel(u1.activations - u0.activations, 402653184.0, 1e-9);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli nvfp4: Llama 3 8B under NVFP4 as Megatron-Bridge 067f987's
 * llama3_8b_pretrain_8gpu_b200_nvfp4_config runs it (bf16_with_nvfp4_mixed:
 * fp4 e2m1, fp4_param_gather, no bf16 layers, no recompute; TE 2.18,
 * Megatron-LM d98e8a6), one 8192-token sequence, tp 1, pp 1, dp 1.
 * Weights (fp8_params: the fp4 copies stand for the bf16 weight):
 * the embedding and the output layer, 2 x 128256 x 4096, and the final
 * norm's 4,096: 1,050,677,248 parameters, in bf16: 2,101,354,496 bytes;
 * the layers' 8,030,261,248 - 1,050,677,248 = 6,979,584,000 (32 x
 * 218,112,000, their norms counted with the linears) as NVFP4 with both
 * copies, each 0.5 + 1/16 bytes (the 16 x 16 weight scales stored a byte
 * per 1 x 16, TE v2.18 quantizer.cpp get_scale_shape): 1.125 x
 * 6,979,584,000 = 7,852,032,000; 9,953,386,496 in all (with 1/256 a
 * copy, 1.0078125 x: 9,135,466,496).
 * A layer's saved activations a token (TE 2.18 LayerNormLinear and
 * Linear keep the column-wise NVFP4 copy of the linear's input,
 * update_usage(rowwise_usage=False); attention.py l. 428-444 sets
 * linear_proj to save its bf16 input, the flash kernel's output): the two
 * norm inputs 4h (no dropout masks: the profile's dropout false), the
 * QKV and fc1 copies 2 x 0.5625h, q 2h, k and v 2 x 2 x 1024 = 1h, the
 * attention output 2h; fc1's output 2 x 2 x 14336 = 4f (bias_swiglu's
 * saved input), fc2's copy 0.5625f: 10.125 x 4096 + 4.5625 x 14336 =
 * 41,472 + 65,408 = 106,880 bytes, x 8192 = 875,560,960. bf16 keeps
 * (2 - 0.5625)(2h + f) = 1.4375 x 22,528 = 32,384 bytes a token a layer
 * more: x 8192 x 32 = 8,489,271,296 over the stage; fp8 with current
 * scaling (1 byte a copy) (1 - 0.5625) x 22,528 = 9,856 more:
 * 2,583,691,264.
 */
START_TEST(test_nvfp4_llama8b_memory)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p, b, f8;
	struct memory_use u, ub, u8;
	double expert, params;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-b200", &c);
	test_load_profile(PROFILE_MODEL, "llama3-8b", &m);
	test_load_profile(PROFILE_FRAMEWORK, "megatron-bridge", &fw);
	fixture_one_gpu_plan(&p);
	p.seq_len = 8192;
	b = f8 = p;
	p.precision = PLAN_PRECISION_FP4;
	f8.precision = PLAN_PRECISION_FP8;
	f8.fp8_recipe = PLAN_FP8_CURRENT;
	params = estimate_stage_params(&m, &p, 0, &expert);
	ck_assert_rel(params, 8030261248.0, 1e-15);
	memory_stage(&m, &p, &c, &fw, 0, params, expert, &u);
	memory_stage(&m, &b, &c, &fw, 0, params, expert, &ub);
	memory_stage(&m, &f8, &c, &fw, 0, params, expert, &u8);
	ck_assert_rel(u.weights, 9953386496.0, 1e-12);
	ck_assert_rel(memory_layer_activations(&m, &p, &fw), 875560960.0, 1e-12);
	ck_assert_rel(ub.activations - u.activations, 8489271296.0, 1e-9);
	ck_assert_rel(u8.activations - u.activations, 2583691264.0, 1e-9);
	cluster_release(&c);
}
END_TEST

/* Time on one pipeline stage (pp 1, 8 micro-batches): the first 3 and
 * last 2 layers cost a bf16 layer's forward and backward in place of an
 * fp8 one's, so the compute line grows by 8 x 5 x (bf16 layer - fp8
 * layer), each layer's time from compute_layer_time on its plan (at
 * the slowest of the 16 GPUs' pace), and the fp8 layer is the faster. */
START_TEST(test_bf16_layer_time)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p, b, p16;
	struct compute_layer l8, l16;
	struct estimate e0, e1;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct plan_error err;
	double pace, want;

	llama8b_fp8(&c, &m, &fw, &p, 1);
	b = p;
	b.bf16_first_layers = 3;
	b.bf16_last_layers = 2;
	p16 = plan_bf16_layers_plan(&b);
	ck_assert_int_eq(p16.precision, PLAN_PRECISION_BF16);
	ck_assert_int_eq(p16.bf16_first_layers + p16.bf16_last_layers, 0);
	compute_layer_time(&m, &p, &c, &fw, false, &l8);
	compute_layer_time(&m, &p16, &c, &fw, false, &l16);
	ck_assert(l16.fwd_s + l16.bwd_s > l8.fwd_s + l8.bwd_s);
	opt.framework = &fw;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e0, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m, &c, &b, &opt, &e1, &err), "%s", err.message);
	pace = gpu_pace_factor(&c.gpu, 2);
	want = 8.0 * 5.0 * pace * ((l16.fwd_s + l16.bwd_s) - (l8.fwd_s + l8.bwd_s));
	ck_assert_rel(e1.breakdown.compute - e0.breakdown.compute, want, 1e-9);
	ck_assert(e1.iteration_time_s > e0.iteration_time_s);
	cluster_release(&c);
}
END_TEST

/* Megatron-Core's own refusals, and plan-cli's: delayed scaling
 * ("Delayed scaling does not support first / last layer in BF16"), a
 * bf16 plan, and no layer left in fp8. */
START_TEST(test_bf16_layer_refused)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p;
	struct estimate e;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct plan_error err;

	llama8b_fp8(&c, &m, &fw, &p, 1);
	opt.framework = &fw;
	p.bf16_first_layers = 1;
	p.fp8_recipe = PLAN_FP8_DELAYED;
	ck_assert(!estimate_plan(&m, &c, &p, &opt, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "delayed scaling"));
	p.fp8_recipe = PLAN_FP8_CURRENT;
	p.precision = PLAN_PRECISION_BF16;
	ck_assert(!estimate_plan(&m, &c, &p, &opt, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "apply to --precision fp8 or fp4"));
	p.precision = PLAN_PRECISION_FP8;
	p.bf16_first_layers = 16;
	p.bf16_last_layers = 16;
	ck_assert(!estimate_plan(&m, &c, &p, &opt, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "leave none of the model's 32 layers"));
	p.bf16_last_layers = 15;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	cluster_release(&c);
}
END_TEST

/* An fp8 recipe on a 16-bit plan (issue 25, twenty-third session): it was
 * accepted and ignored; it is refused as --fp8-gather and the bf16 layers
 * are, for bf16 and fp16, and the framework's recipe (none given) runs. */
START_TEST(test_fp8_recipe_needs_fp8)
{
	static const int sixteen[] = { PLAN_PRECISION_BF16, PLAN_PRECISION_FP16 };
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p;
	struct estimate e;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct plan_error err;

	llama8b_fp8(&c, &m, &fw, &p, 1);
	opt.framework = &fw;
	for (int i = 0; i < 2; i++) {
		p.precision = sixteen[i];
		p.fp8_recipe = PLAN_FP8_CURRENT;
		plan_error_clear(&err);
		ck_assert(!estimate_plan(&m, &c, &p, &opt, &e, &err));
		ck_assert_msg(strstr(err.message, "fp8 recipe current applies to precision fp8; precision ") &&
			      strstr(err.message, " has no fp8 tensors to scale"), "%s", err.message);
		p.fp8_recipe = PLAN_FP8_FRAMEWORK;
		ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	}
	cluster_release(&c);
}
END_TEST

/* The layers a stage recomputes in full, chunk by chunk (review15):
 * pp 4 x vpp 2, chunks of 4 layers, Megatron's block method with 2: stage
 * 1 holds layers 5-8 and 21-24 and recomputes 5, 6, 21 and 22 (4 in
 * all). With the first 5 layers in bf16, one of them (layer 5) is in
 * bf16; layers 9-12, which the stage does not hold, were counted before.
 * Stage 0 (layers 1-4, 17-20) recomputes 1, 2, 17, 18: two in bf16.
 * With the last 12 in bf16 (21-32), stage 1's are 21 and 22: two. */
START_TEST(test_bf16_layer_block_prefix)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p;
	int moe;

	llama8b_fp8(&c, &m, &fw, &p, 4);
	p.vpp = 2;
	p.recompute = PLAN_RECOMPUTE_FULL;
	p.recompute_method = PLAN_RECOMPUTE_BLOCK;
	p.recompute_num_layers = 2;
	p.bf16_first_layers = 5;
	ck_assert_int_eq(pipeline_prefix_bf16_layers(&m, &p, 1, 4, &moe), 1);
	ck_assert_int_eq(pipeline_prefix_bf16_layers(&m, &p, 0, 4, &moe), 2);
	ck_assert_int_eq(moe, 0);
	p.bf16_first_layers = 0;
	p.bf16_last_layers = 12;
	ck_assert_int_eq(pipeline_prefix_bf16_layers(&m, &p, 1, 4, &moe), 2);
	cluster_release(&c);
}
END_TEST

/* DualPipe with --recompute-layers (review15): the stage's own layers
 * are priced on that path, its own bf16 ones with them (pp 8, 4 layers
 * a stage, the first 3 in bf16, stage 0 recomputing its first 3): the
 * iteration is finite and slower than with every layer in fp8. */
START_TEST(test_bf16_layer_dualpipe_recompute_layers)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p, b;
	struct estimate e0, e1;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct plan_error err;

	llama8b_fp8(&c, &m, &fw, &p, 8);
	opt.framework = &fw;
	p.pp_schedule = PLAN_PP_DUALPIPE;
	p.global_batch = 32;
	p.custom_recompute_layers = true;
	p.stage_recompute_layers_count = 8;
	for (int s = 0; s < 8; s++)
		p.stage_recompute_layers[s] = 3;
	b = p;
	b.bf16_first_layers = 3;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e0, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m, &c, &b, &opt, &e1, &err), "%s", err.message);
	ck_assert(isfinite(e1.iteration_time_s));
	ck_assert(e1.iteration_time_s > e0.iteration_time_s);
	ck_assert(e1.breakdown.compute > e0.breakdown.compute);
	cluster_release(&c);
}
END_TEST

static Suite *
bf16_layers_suite(void)
{
	Suite *s = suite_create("bf16-layers");
	TCase *tc = tcase_create("bf16-layers");

	tcase_add_test(tc, test_bf16_layer_count);
	tcase_add_test(tc, test_bf16_layer_memory);
	tcase_add_test(tc, test_bf16_layer_memory_recompute_layers);
	tcase_add_test(tc, test_bf16_layer_memory_modules);
	tcase_add_test(tc, test_bf16_layer_time);
	tcase_add_test(tc, test_bf16_layer_refused);
	tcase_add_test(tc, test_bf16_layer_block_prefix);
	tcase_add_test(tc, test_bf16_layer_dualpipe_recompute_layers);
	tcase_add_test(tc, test_nvfp4_llama8b_memory);
	tcase_add_test(tc, test_fp8_recipe_needs_fp8);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(bf16_layers_suite)
