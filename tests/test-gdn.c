/*
 * The Gated DeltaNet mixer of a hybrid model's 'G' layers (plan/gdn.h).
 * Qwen3-Next-80B-A3B's shapes (models/qwen3-next-80b-a3b.yaml; Megatron's
 * TransformerConfig defaults): hidden 2048, 16 key heads and 32 value
 * heads of 128, conv kernel 4, FLA's chunk 64; one sequence of 4096
 * tokens a micro-batch, on the bundled dgx-h100 (H100 SXM5: 989 TFLOP/s,
 * attention efficiency 0.57 forward and 0.54 backward, FlashAttention-2
 * at 0.52 of it, 3 us a launch). Every expected value is worked out by
 * hand in the comment above its test.
 */
#include <math.h>
#include <string.h>

#include "plan/estimate.h"
#include "plan/framework.h"
#include "plan/gdn.h"
#include "plan/host_time.h"
#include "plan/memory.h"
#include "plan/mixer.h"
#include "plan/search.h"
#include "fixtures.h"
#include "testutil.h"

/* A cut-down Qwen3-Next: its shapes, eight layers of the pattern. */
#define QWEN3_NEXT_YAML \
	"name: qn\nlayers: 8\nhidden: 2048\nheads: 16\nkv_heads: 2\nhead_dim: 256\nqk_norm: true\n" \
	"ffn_hidden: 5120\ngated_mlp: true\nnorm: rmsnorm\nposition_embedding: rotary\nvocab: 151936\n" \
	"seq_len: 4096\ndropout: false\nbias: false\ntied_embeddings: false\nhybrid_pattern: 'GEGEGE*E'\n" \
	"gdn:\n  key_head_dim: 128\n  value_head_dim: 128\n  key_heads: 16\n  value_heads: 32\n  conv_kernel: 4\n" \
	"moe:\n  experts: 512\n  top_k: 10\n  every: 1\n  expert_ffn_hidden: 512\n  shared_experts: 1\n"

static void
setup(struct model *whole, struct model *gdn, struct plan *p, int tp)
{
	test_load_model(whole, QWEN3_NEXT_YAML);
	model_kind_model(whole, MODEL_KIND_GDN, gdn);
	plan_init(p);
	p->tp = tp;
	p->pp = p->dp = 1;
	p->micro_batch = 1;
	p->global_batch = 1;
	p->seq_len = 4096;
	p->flash_attention = true;
}

/*
 * Parameters. qk = 16 x 128 = 2048, v = 32 x 128 = 4096; in_proj 2048 ->
 * 2 x 2048 + 2 x 4096 + 2 x 32 = 12352: 25,296,896; conv1d (2 x 2048 +
 * 4096) x 4 = 32,768; dt_bias and A_log 64; out_norm 128; out_proj 4096
 * x 2048 = 8,388,608: 33,718,464 a mixer. The whole cut-down model:
 * embeddings 2 x 151936 x 2048 = 622,329,856; each 'G' layer the mixer
 * and its norm, 33,720,512 (x 3); the '*' layer QKV 2048 x (16 x 256 + 2
 * x 2 x 256) = 10,485,760, projection 4096 x 2048 = 8,388,608, q and k
 * norms 512, its norm 2048: 18,876,928; each 'E' layer 512 experts of 3
 * x 2048 x 512 = 1,610,612,736, the shared expert 3,145,728, the router
 * 2048 x 512 = 1,048,576 and its norm: 1,614,809,088 (x 4); the final
 * norm 2048. In all 622,329,856 + 101,161,536 + 18,876,928 +
 * 6,459,236,352 + 2048 = 7,201,606,720.
 */
START_TEST(test_gdn_params)
{
	struct model m, g;
	struct plan p;

	setup(&m, &g, &p, 1);
	ck_assert_double_eq(model_gdn_in_proj_dim(&m), 12352.0);
	ck_assert_double_eq(model_gdn_conv_dim(&m), 8192.0);
	ck_assert_double_eq(model_params_gdn_mixer(&m), 33718464.0);
	ck_assert_double_eq(model_params_total(&m), 7201606720.0);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_GDN), 3);
	ck_assert(model_has_part(&g, MODEL_PART_GDN) && !model_has_part(&g, MODEL_PART_MAMBA));
}
END_TEST

/*
 * The rule's FLOPs a token and value head (C 64, dk = dv = 128): K K^T
 * 2 C dk = 16,384; solve 2 C^2 / 3 = 2,730.667; w and u 2 C (dk + dv) =
 * 32,768; states 4 dk dv = 65,536; output 2 dk dv + 2 C (dk + dv) =
 * 65,536: 182,954.667, x 4096 tokens x 32 heads = 23,980,234,069.33.
 * Backward 2 x 182,954.667 + 32,768 + 65,536 = 464,213.333 a token and
 * head: 60,845,370,026.67. At tp 2 (16 value heads) half of each.
 * Megatron's gdn_layer_flops for one token: 2 (2048 x 12352 + 4 x 8192 +
 * 32 x 128^2 x 4 + 2048 x 4096) = 2 x 35,815,424 = 71,630,848.
 */
START_TEST(test_gdn_flops)
{
	struct model m, g;
	struct plan p;

	setup(&m, &g, &p, 1);
	ck_assert_double_eq_tol(gdn_rule_flops(&g, 4096, 32, false), 23980234069.333, 1e-2);
	ck_assert_double_eq_tol(gdn_rule_flops(&g, 4096, 32, true), 60845370026.667, 1e-2);
	ck_assert_double_eq_tol(gdn_layer_model_flops(&g, 1.0), 71630848.0, 1e-6);
	ck_assert_double_eq_tol(mixer_model_flops(&g, 1.0), 71630848.0, 1e-6);
	setup(&m, &g, &p, 2);
	struct cluster c;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	struct mixer_cost mx;

	mixer_cost(&g, &p, &c, NULL, &mx);
	ck_assert_double_eq_tol(mx.scan_fwd_flops, 11990117034.667, 1e-2);
	/* in_proj 2 x 4096 x 6176 x 2048 and out_proj 2 x 4096 x 2048 x 2048 */
	ck_assert_double_eq(mx.in_proj_flops, 103616086016.0);
	ck_assert_double_eq(mx.out_proj_flops, 34359738368.0);
	cluster_release(&c);
}
END_TEST

/*
 * The rule's time at tp 1: forward at the SSD's efficiency 0.57 x 0.52 /
 * 8 = 0.03705 of 989 TFLOP/s = 36.64245 TFLOP/s: 23,980,234,069.33 /
 * 36.64245e12 = 0.654437 ms, plus 6 launches of 3 us: 0.672437 ms.
 * Backward 0.54 x 0.52 / 8 = 0.0351: 34.7139 TFLOP/s; 60,845,370,026.67
 * / 34.7139e12 = 1.752767 ms, plus 8 launches: 1.776767 ms. Both above
 * their traffic: forward 4096 x (2 x 12288 + 192 + 8192 + 32768 + 16384
 * + 8192) + the states 4 x 64 chunks x 32 x 128 x 128 = 504,102,912
 * bytes, 0.167 ms at 0.9 x 3.35 TB/s. Kernels: forward conv1d 1,
 * _prepare_input 7, the rule 6, norm and gate 2: 16; backward 2 + 6 + 8
 * + 3 = 19.
 */
START_TEST(test_gdn_time)
{
	struct model m, g;
	struct plan p;
	struct cluster c;
	struct mixer_cost mx;
	int f, b;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	setup(&m, &g, &p, 1);
	gdn_mixer_cost(&g, &p, &c, NULL, &mx);
	ck_assert_double_eq_tol(mx.scan_fwd_s, 0.672437e-3, 1e-8);
	ck_assert_double_eq_tol(mx.scan_bwd_s, 1.776767e-3, 1e-8);
	ck_assert_double_eq_tol(mx.fwd_s, mx.gemm_fwd_s + mx.scan_fwd_s + mx.mem_fwd_s, 1e-15);
	ck_assert_double_eq_tol(mx.bwd_s, 2.0 * mx.gemm_fwd_s + mx.scan_bwd_s + mx.mem_bwd_s, 1e-15);
	mixer_kernels(&g, &p, &f, &b);
	ck_assert_int_eq(f, 16);
	ck_assert_int_eq(b, 19);
	ck_assert_int_eq(mx.fwd_kernels, 16);
	cluster_release(&c);
}
END_TEST

/*
 * Activations kept, 4096 tokens, a token at tp 1: in_proj's output 2 x
 * 12352 = 24,704; the conv1d's output 2 x 8192 = 16,384; the rule's q and
 * k repeated to 32 heads, v and beta 2 x (2 x 4096 + 4096 + 32) = 24,640;
 * A 2 x 64 x 32 = 4,096; g and softplus's input 4 x 32 each = 256; the
 * norm's input and z 4 x 4096 = 16,384 and its rstd 4 x 32 = 128;
 * out_proj's input 2 x 4096 = 8,192: 94,784 bytes, x 4096 =
 * 388,235,264; at tp 2 half, 194,117,632. The layer adds its norm's input
 * and in_proj's input, 4 s b h = 33,554,432 (no dropout, no SP):
 * 421,789,696 at tp 1.
 */
START_TEST(test_gdn_activations)
{
	struct model m, g;
	struct plan p;

	setup(&m, &g, &p, 1);
	ck_assert_double_eq(gdn_mixer_activation_bytes(&g, &p), 388235264.0);
	ck_assert_double_eq(memory_layer_activations(&g, &p, NULL), 421789696.0);
	setup(&m, &g, &p, 2);
	ck_assert_double_eq(mixer_activation_bytes(&g, &p), 194117632.0);
}
END_TEST

/* cp is refused (GDN's all-to-alls are not priced), and a tp that does not
 * divide the 16 key heads (tp 32) or the 32 value heads; tp 8 runs. */
START_TEST(test_gdn_plan_check)
{
	struct model m, g;
	struct plan p;
	struct plan_error err;

	setup(&m, &g, &p, 8);
	plan_error_clear(&err);
	ck_assert(gdn_plan_check(&m, &p, &err));
	ck_assert(mixer_plan_check(&m, &p, &err));
	p.cp = 2;
	ck_assert(!mixer_plan_check(&m, &p, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "Gated DeltaNet"));
	p.cp = 1;
	p.tp = 32;
	ck_assert(!gdn_plan_check(&m, &p, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "key heads (16)"));
}
END_TEST

/*
 * The bundled qwen3-next-80b-a3b, by its kinds: embeddings and output
 * head 2 x 151936 x 2048 = 622,329,856; 36 'G' layers of 33,720,512 =
 * 1,213,938,432; 12 '*' layers with the output gate, QKV 2048 x (4096 +
 * 4096 + 1024) = 18,874,368, projection 8,388,608, q and k norms 512,
 * norm 2048: 27,265,536, x 12 = 327,186,432; 48 'E' layers of
 * 1,614,809,088 (above) = 77,510,836,224; the final norm 2048. In all
 * 79,674,292,992 (Qwen's card: 80B). Its largest matrix is a GDN
 * in_proj, 2048 x 12352 = 25,296,896 (the gated QKV 2048 x 9216 =
 * 18,874,368). A GDN layer's optimizer tensors: its norm, in_proj,
 * out_proj, conv1d weight, dt_bias, A_log and out_norm: 7.
 */
START_TEST(test_bundled_qwen3_next)
{
	struct model m;

	test_setup_paths();
	test_load_profile(PROFILE_MODEL, "qwen3-next-80b-a3b", &m);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_GDN), 36);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_ATTENTION), 12);
	ck_assert_int_eq(model_kind_layers(&m, MODEL_KIND_MOE), 48);
	ck_assert_double_eq(model_params_total(&m), 79674292992.0);
	ck_assert_double_eq(model_largest_matrix_params(&m), 25296896.0);

	struct model g;

	model_kind_model(&m, MODEL_KIND_GDN, &g);
	ck_assert_double_eq(host_layer_tensors(&g, false, 0.0), 7.0);
}
END_TEST

/* optimize's pruning bound (search_lower_bound) stays under the estimate
 * for a GDN hybrid, kind by kind: the bundled Qwen3-Next on 128 H100s,
 * ep 8 and pp 1 or 2, nemo: 0.72 and 0.81 of the estimate (Qwen3-30B-A3B,
 * a transformer MoE, on the same plans: 0.81 and 0.84). */
START_TEST(test_gdn_search_bound)
{
	struct cluster c;
	struct model m;
	struct framework fw;
	struct plan p;
	struct estimate e;
	struct plan_error err;
	struct estimate_options opt = { 0 };

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_profile(PROFILE_MODEL, "qwen3-next-80b-a3b", &m);
	test_load_profile(PROFILE_FRAMEWORK, "nemo", &fw);
	opt.framework = &fw;
	plan_init(&p);
	p.tp = 1;
	p.ep = 8;
	p.micro_batch = 1;
	p.seq_len = 4096;
	p.flash_attention = true;
	p.zero = 1;
	p.global_batch = 1024;
	for (int pp = 1; pp <= 2; pp++) {
		double bound;

		p.pp = pp;
		p.dp = 128 / pp;
		bound = search_lower_bound(&m, &c, &p, &fw, false);
		ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
		ck_assert(bound <= e.iteration_time_s);
		ck_assert(bound > 0.5 * e.iteration_time_s);
	}
	cluster_release(&c);
}
END_TEST

/* hybrid_group 2 (review17): Qwen3-Next's 96 symbols are 48 Megatron
 * layers, and a virtual stage holds whole ones: pp 4 x vpp 8 (96 / 32 = 3
 * symbols a stage) is refused, vpp 6 (4) and pp 4 with --stage-layers
 * 26,22,24,24 run, 25,23,24,24 is refused. */
START_TEST(test_gdn_hybrid_group)
{
	struct model m;
	struct plan p;
	struct cluster c;
	struct plan_error err;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_profile(PROFILE_MODEL, "qwen3-next-80b-a3b", &m);
	ck_assert_int_eq(m.hybrid_group, 2);
	plan_init(&p);
	p.tp = 1;
	p.pp = 4;
	p.dp = 32;
	p.ep = 8;
	p.micro_batch = 1;
	p.global_batch = 1024;
	p.seq_len = 4096;
	p.vpp = 8;
	plan_error_clear(&err);
	ck_assert(!plan_validate(&p, &m, &c, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "hybrid_group"));
	p.vpp = 6;
	ck_assert_msg(plan_validate(&p, &m, &c, &err), "%s", err.message);
	p.vpp = 1;
	p.custom_layers = true;
	p.stage_layers_count = 4;
	p.stage_layers[0] = 26;
	p.stage_layers[1] = 22;
	p.stage_layers[2] = p.stage_layers[3] = 24;
	ck_assert_msg(plan_validate(&p, &m, &c, &err), "%s", err.message);
	p.stage_layers[0] = 25;
	p.stage_layers[1] = 23;
	ck_assert(!plan_validate(&p, &m, &c, &err));
	cluster_release(&c);
}
END_TEST

static Suite *
gdn_suite(void)
{
	Suite *s = suite_create("gdn");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_gdn_params);
	tcase_add_test(tc, test_gdn_flops);
	tcase_add_test(tc, test_gdn_time);
	tcase_add_test(tc, test_gdn_activations);
	tcase_add_test(tc, test_gdn_plan_check);
	tcase_add_test(tc, test_bundled_qwen3_next);
	tcase_add_test(tc, test_gdn_search_bound);
	tcase_add_test(tc, test_gdn_hybrid_group);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(gdn_suite)
