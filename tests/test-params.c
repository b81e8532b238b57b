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

START_TEST(test_flops_eq3)
{
	struct model m;
	struct plan p;

	test_load_model(&m, GPT3_YAML);
	plan_init(&p);
	p.tp = 8;
	p.pp = 12;
	p.dp = 16;
	p.global_batch = 1536;
	p.seq_len = 2048;
	p.recompute = PLAN_RECOMPUTE_FULL;
	/* SC21 Eq. 3: 96 B s L h^2 (1 + s/(6h) + V/(16 L h)) with B 1536,
	 * s 2048, L 96, h 12288, V 51200 = 4.51097075e18 FLOPs. */
	ck_assert_rel(flops_narayanan_eq3(&m, 1536, 2048), 4.5109707533231063e18, 1e-12);
	/* Our hardware count with full recompute is the same expression. */
	ck_assert_rel(flops_hardware_per_iteration(&m, &p), 4.5109707533231063e18, 1e-12);
	/* Without recompute: 72 B s L h^2 (1 + s/(6h) + V/(12 L h)). */
	ck_assert_rel(flops_model_per_iteration(&m, &p),
		      72.0 * 1536 * 2048 * 96 * 12288.0 * 12288.0 *
		      (1 + 2048.0 / (6 * 12288) + 51200.0 / (12.0 * 96 * 12288)), 1e-12);
	/* Selective recompute adds only QK^T and scores x V: 4 s h L per token. */
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	ck_assert_rel(flops_hardware_per_iteration(&m, &p) - flops_model_per_iteration(&m, &p),
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
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(params_suite)
