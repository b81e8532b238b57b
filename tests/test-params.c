#include <math.h>

#include "plan/flops.h"
#include "plan/model.h"
#include "testutil.h"

START_TEST(test_gpt3_params)
{
	struct model m;

	test_load_model(&m, GPT3_YAML);
	/* Narayanan et al. SC21: Psi = 12 L h^2 (1 + 13/(12h) + (V+s)/(12 L h)).
	 * Per layer 12h^2 + 13h = 1,811,939,328 + 159,744 = 1,812,099,072;
	 * x 96 = 173,961,510,912; + V h = 629,145,600; + s h = 25,165,824;
	 * + final LayerNorm 2h = 24,576: 174,615,846,912 (the published 174.6 B). */
	ck_assert_rel(model_params_per_layer(&m), 1812099072.0, 1e-15);
	ck_assert_rel(model_params_total(&m), 174615846912.0, 1e-15);
}
END_TEST

START_TEST(test_llama2_70b_params)
{
	struct model m;

	test_load_model(&m, "name: l\nlayers: 80\nhidden: 8192\nheads: 64\nkv_heads: 8\n"
			    "ffn_hidden: 28672\ngated_mlp: true\nvocab: 32000\nseq_len: 4096\n"
			    "tied_embeddings: false\nbias: false\nnorm: rmsnorm\n"
			    "position_embedding: rotary\n");
	/* Attention: q and o 8192^2 each, k and v 8192 x 1024 each:
	 * 134,217,728 + 16,777,216 = 150,994,944. SwiGLU: 3 x 8192 x 28672
	 * = 704,643,072. Two RMSNorm scales: 16,384. Per layer 855,654,400,
	 * x 80 = 68,452,352,000; embedding 262,144,000; untied output
	 * 262,144,000 + final norm 8,192: 68,976,648,192 (Touvron et al.: 69 B). */
	ck_assert_rel(model_params_per_layer(&m), 855654400.0, 1e-15);
	ck_assert_rel(model_params_total(&m), 68976648192.0, 1e-15);
	ck_assert_int_eq(model_tensors_per_layer(&m), 7);
}
END_TEST

START_TEST(test_bert_large_params)
{
	struct model m;

	test_load_model(&m, "name: b\nlayers: 24\nhidden: 1024\nheads: 16\nvocab: 30522\nseq_len: 512\n");
	/* 24 x (12 x 1024^2 + 13 x 1024) = 302,309,376; embeddings
	 * 30522 x 1024 + 512 x 1024 = 31,778,816; final norm 2048. */
	ck_assert_rel(model_params_total(&m), 334090240.0, 1e-15);
}
END_TEST

/*
 * DeepSeek-V3 (arXiv:2412.19437; MLA from DeepSeek-V2, arXiv:2405.04434
 * Sec. 2.1), h 7168, a 128. One MLA layer's matrices:
 *   q down 7168 x 1536 = 11,010,048; q up 1536 x 128 x (128 + 64) = 37,748,736;
 *   kv down 7168 x (512 + 64) = 4,128,768; kv up 512 x 128 x (128 + 128) = 16,777,216;
 *   out 128 x 128 x 7168 = 117,440,512: 187,105,280, plus the norms of the
 *   two latents (1536 + 512) and two RMSNorms (2 x 7168): 187,121,664.
 * Dense layers (3): + 3 x 7168 x 18432 = 396,361,728 -> 583,483,392.
 * MoE layers (58): + router 7168 x 256 = 1,835,008 + (256 + 1) experts of
 *   3 x 7168 x 2048 = 44,040,192 each (11,318,329,344) -> 11,507,286,016.
 * Embedding and untied head 2 x 129280 x 7168 = 1,853,358,080, final norm
 * 7168: 3 x 583,483,392 + 58 x 11,507,286,016 + 1,853,365,248
 * = 671,026,404,352. Active: 8 + 1 experts per MoE layer:
 * 37,552,282,624.
 */
START_TEST(test_deepseek_v3_params)
{
	struct model m;

	test_load_model(&m, "name: ds\nlayers: 61\nhidden: 7168\nheads: 128\nffn_hidden: 18432\n"
			    "gated_mlp: true\nvocab: 129280\nseq_len: 4096\ntied_embeddings: false\n"
			    "bias: false\nnorm: rmsnorm\nposition_embedding: rotary\nattention: mla\n"
			    "mla: {q_lora_rank: 1536, kv_lora_rank: 512, qk_nope_head_dim: 128, "
			    "qk_rope_head_dim: 64, v_head_dim: 128}\n"
			    "moe: {experts: 256, top_k: 8, expert_ffn_hidden: 2048, shared_experts: 1, "
			    "first_dense_layers: 3}\n");
	ck_assert_double_eq(model_attention_matrix_params(&m), 187105280.0);
	ck_assert_double_eq(model_params_per_layer(&m), 583483392.0);
	ck_assert_int_eq(model_moe_layers(&m), 58);
	ck_assert(!model_layer_is_moe(&m, 3) && model_layer_is_moe(&m, 4));
	ck_assert_double_eq(model_params_moe_layer(&m), 11507286016.0);
	ck_assert_double_eq(model_params_total(&m), 671026404352.0);
	ck_assert_double_eq(model_params_active(&m), 37552282624.0);
	/* Attention FLOPs per token and layer: 2 s a (d_qk + d_v) = 2 x 4096 x
	 * 128 x 320 at s 4096, against MHA's 4 s h. */
	ck_assert_int_eq(model_qk_head_dim(&m) + model_v_head_dim(&m), 320);
}
END_TEST

/*
 * Kimi K2 (arXiv:2507.20534; models/kimi-k2.yaml, whose comment cites the
 * shape): DeepSeek-V3's MLA at h 7168 with a 64 heads. One MLA layer:
 *   q down 7168 x 1536 = 11,010,048; q up 1536 x 64 x (128 + 64) = 18,874,368;
 *   kv down 7168 x (512 + 64) = 4,128,768; kv up 512 x 64 x (128 + 128) = 8,388,608;
 *   out 64 x 128 x 7168 = 58,720,256: 101,122,048, plus the latents' norms
 *   (1536 + 512) and two RMSNorms (2 x 7168): 101,138,432.
 * Dense layer (1): + 3 x 7168 x 18432 = 396,361,728 -> 497,500,160.
 * MoE layers (60): + router 7168 x 384 = 2,752,512 + (384 + 1) experts of
 *   3 x 7168 x 2048 = 44,040,192 each (16,955,473,920) -> 17,059,364,864.
 * Embedding and untied head 2 x 163840 x 7168 = 2,348,810,240, final norm
 * 7168: 497,500,160 + 60 x 17,059,364,864 + 2,348,817,408
 * = 1,026,408,209,408 (1.03 T: the model card's "1T total").
 * Active: 8 + 1 experts per MoE layer, 101,138,432 + 2,752,512 + 9 x
 * 44,040,192 = 500,252,672 a layer: 497,500,160 + 60 x 500,252,672 +
 * 2,348,817,408 = 32,861,477,888 (the card's "32B activated").
 */
START_TEST(test_kimi_k2_params)
{
	struct model m;

	test_load_model(&m, "name: k\nlayers: 61\nhidden: 7168\nheads: 64\nffn_hidden: 18432\n"
			    "gated_mlp: true\nvocab: 163840\nseq_len: 4096\ntied_embeddings: false\n"
			    "bias: false\nnorm: rmsnorm\nposition_embedding: rotary\nattention: mla\n"
			    "mla: {q_lora_rank: 1536, kv_lora_rank: 512, qk_nope_head_dim: 128, "
			    "qk_rope_head_dim: 64, v_head_dim: 128}\n"
			    "moe: {experts: 384, top_k: 8, expert_ffn_hidden: 2048, shared_experts: 1, "
			    "first_dense_layers: 1}\n");
	ck_assert_double_eq(model_attention_matrix_params(&m), 101122048.0);
	ck_assert_double_eq(model_params_per_layer(&m), 497500160.0);
	ck_assert_int_eq(model_moe_layers(&m), 60);
	ck_assert(!model_layer_is_moe(&m, 1) && model_layer_is_moe(&m, 2));
	ck_assert_double_eq(model_params_moe_layer(&m), 17059364864.0);
	ck_assert_double_eq(model_params_total(&m), 1026408209408.0);
	ck_assert_double_eq(model_params_active(&m), 32861477888.0);
}
END_TEST

/*
 * Qwen3-30B-A3B (arXiv:2505.09388; HF Qwen/Qwen3-30B-A3B): h 2048, a 32,
 * kv 4, head_dim 128 (so Q is 2048 x 4096, not h x h). Attention: Q
 * 2048 x 4096 = 8,388,608, K and V 2 x 2048 x 512 = 2,097,152, O 4096 x
 * 2048 = 8,388,608: 18,874,368. Norms 2 x 2048 + QK-norm 2 x 128 = 4,352.
 * Router 2048 x 128 = 262,144; 128 experts of 3 x 2048 x 768 = 4,718,592:
 * 603,979,776. A layer: 623,120,640; 48 of them 29,909,790,720; embedding
 * and untied head 2 x 151936 x 2048 = 622,329,856, final norm 2048:
 * 30,532,122,624 (the card's 30.5B). Active, 8 experts: 56,889,600 per
 * layer, 3,353,032,704 in all (3.3B).
 */
START_TEST(test_qwen3_moe_params)
{
	struct model m;

	test_load_model(&m, "name: q\nlayers: 48\nhidden: 2048\nheads: 32\nkv_heads: 4\nhead_dim: 128\n"
			    "qk_norm: true\nffn_hidden: 6144\ngated_mlp: true\nvocab: 151936\nseq_len: 4096\n"
			    "tied_embeddings: false\nbias: false\nnorm: rmsnorm\nposition_embedding: rotary\n"
			    "moe: {experts: 128, top_k: 8, expert_ffn_hidden: 768}\n");
	ck_assert_double_eq(model_attention_matrix_params(&m), 18874368.0);
	ck_assert_double_eq(model_params_moe_layer(&m), 623120640.0);
	ck_assert_double_eq(model_params_total(&m), 30532122624.0);
	ck_assert_double_eq(model_params_active(&m), 3353032704.0);
}
END_TEST

/*
 * gpt-oss-120b (models/gpt-oss-120b.yaml; transformers' modeling_gpt_oss.py):
 * h 2880, a 64 of d 64, kv 8, biases on every linear layer, the router's
 * too, and one sink logit a head. Attention: q 2880 x 4096 + 4096, k and v
 * 2 x (2880 x 512 + 512), o 4096 x 2880 + 2880: 26,550,080, and 64 sinks:
 * 26,550,144. Norms 2 x 2880 = 5,760. Router 2880 x 128 + 128 = 368,768
 * (368,640 without its bias). An expert: gate_up 2880 x 5760 + 5760, down
 * 2880 x 2880 + 2880 = 24,891,840; 128 of them 3,186,155,520. A layer:
 * 3,213,080,192; 36 of them 115,670,886,912; embedding and untied head
 * 2 x 201088 x 2880 = 1,158,266,880, final norm 2880: 116,829,156,672
 * (the model card's 116.83 B). Active, 4 experts: a layer 26,550,144 +
 * 5,760 + 368,768 + 4 x 24,891,840 = 126,492,032, 36 of them
 * 4,553,713,152, with the embeddings and final norm 5,711,982,912.
 * Without biases or sinks a layer is 2880 x 5120 + 4096 x 2880 +
 * 5,760 + 368,640 + 128 x 24,883,200 = 3,211,966,080: 1,114,112 fewer, of
 * which 128 are the router's bias (attention 5,120 + 2,880, experts
 * 128 x (5,760 + 2,880), sinks 64).
 */
START_TEST(test_gpt_oss_params)
{
	struct model m;

	test_load_model(&m, "name: g\nlayers: 36\nhidden: 2880\nheads: 64\nkv_heads: 8\nhead_dim: 64\n"
			    "attention_sinks: true\nffn_hidden: 2880\ngated_mlp: true\nvocab: 201088\n"
			    "seq_len: 4096\ntied_embeddings: false\nbias: true\nnorm: rmsnorm\n"
			    "position_embedding: rotary\nmoe: {experts: 128, top_k: 4, expert_ffn_hidden: 2880}\n");
	ck_assert_double_eq(model_params_expert(&m), 24891840.0);
	ck_assert_double_eq(model_params_moe_layer(&m), 3213080192.0);
	ck_assert_double_eq(model_params_total(&m), 116829156672.0);
	ck_assert_double_eq(model_params_active(&m), 5711982912.0);
	/* without the sinks: 36 x 64 = 2,304 fewer */
	m.attention_sinks = false;
	ck_assert_double_eq(model_params_total(&m), 116829154368.0);
	m.bias = false;
	ck_assert_double_eq(model_params_moe_layer(&m), 3211966080.0);
}
END_TEST

START_TEST(test_flops_eq3)
{
	struct model m;
	struct plan p;

	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	/* SC21 Eq. 3: 96 B s L h^2 (1 + s/(6h) + V/(16 L h)) with B 1536,
	 * s 2048, L 96, h 12288, V 51200 = 4.51097075e18 FLOPs. */
	ck_assert_rel(flops_narayanan_eq3(&m, 1536, 2048), 4.5109707533231063e18, 1e-12);
	/* Our hardware count with full recompute is the same expression. */
	ck_assert_rel(flops_hardware_per_iteration(&m, &p, NULL), 4.5109707533231063e18, 1e-12);
	/* Without recompute: 72 B s L h^2 (1 + s/(6h) + V/(12 L h)). */
	ck_assert_rel(flops_model_per_iteration(&m, &p),
		      72.0 * 1536 * 2048 * 96 * 12288.0 * 12288.0 *
		      (1 + 2048.0 / (6 * 12288) + 51200.0 / (12.0 * 96 * 12288)), 1e-12);
	/* Selective recompute adds only QK^T and scores x V: 4 s h L per token. */
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	ck_assert_rel(flops_hardware_per_iteration(&m, &p, NULL) - flops_model_per_iteration(&m, &p),
		      1536.0 * 2048 * 96 * 4 * 2048 * 12288, 1e-9);
}
END_TEST

static Suite *
params_suite(void)
{
	Suite *s = suite_create("params");
	TCase *tc = tcase_create("params");

	tcase_add_test(tc, test_gpt3_params);
	tcase_add_test(tc, test_llama2_70b_params);
	tcase_add_test(tc, test_bert_large_params);
	tcase_add_test(tc, test_flops_eq3);
	tcase_add_test(tc, test_deepseek_v3_params);
	tcase_add_test(tc, test_kimi_k2_params);
	tcase_add_test(tc, test_qwen3_moe_params);
	tcase_add_test(tc, test_gpt_oss_params);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(params_suite)
