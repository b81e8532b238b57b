/*
 * Fused attention by shape (plan/attn_shape.h): head-dim padding from the
 * kernels' dispatch tables, the exponentials' share of a score from the
 * tensor-core and special-function rates, whole diagonal tiles of a causal
 * kernel, each against the profiles' reference shape (hdim 128, seq
 * 4096). Every expected value is worked out by hand in the comment above
 * its test.
 */
#include <math.h>

#include "plan/attn_shape.h"
#include "plan/compute.h"
#include "fixtures.h"
#include "testutil.h"

/*
 * Padding. FlashAttention-2 (flash_api.cpp: multiples of 32 up to 192,
 * then 256): 16 -> 32, 64 -> 64, 80 -> 96, 96 -> 96, 100 -> 128, 160 ->
 * 160, 200 -> 256; 300 has no kernel and stays 300. FlashAttention-3 (64,
 * 96, 128, 192, 256): 48 -> 64, 80 -> 96, 112 -> 128, 160 -> 192, 200 ->
 * 256. cuDNN (the MMA's K step of 16): 72 -> 80, 64 -> 64, 192 -> 192.
 * SDPA: FA2's on Hopper (80 -> 96), cuDNN's on Blackwell (72 -> 80). The
 * profile's own kernel: FA2 on Ampere (80 -> 96), FA3 on Hopper (112 ->
 * 128), cuDNN's on Blackwell (72 -> 80).
 */
START_TEST(test_padding)
{
	const enum gpu_generation a = GPU_GEN_AMPERE, h = GPU_GEN_HOPPER, b = GPU_GEN_BLACKWELL;

	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA2, a, 16), 32);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA2, a, 64), 64);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA2, a, 80), 96);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA2, a, 96), 96);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA2, a, 100), 128);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA2, a, 160), 160);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA2, a, 200), 256);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA2, a, 300), 300);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA3, h, 48), 64);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA3, h, 80), 96);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA3, h, 112), 128);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA3, h, 160), 192);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_FA3, h, 200), 256);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_CUDNN, h, 72), 80);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_CUDNN, b, 64), 64);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_CUDNN, b, 192), 192);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_SDPA, h, 80), 96);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_SDPA, b, 72), 80);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_PROFILE, a, 80), 96);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_PROFILE, h, 112), 128);
	ck_assert_double_eq(attn_shape_padded_head_dim(PLAN_ATTN_PROFILE, b, 72), 80);
}
END_TEST

/*
 * Tensor FLOPs in one exponential's time: dense bf16 FLOPs per SM a clock
 * over the 16 exponentials: A100 2048 / 16 = 128, H100 4096 / 16 = 256,
 * B200 8192 / 16 = 512; none cited for Volta, CDNA3 or an inline GPU.
 * Score cost (executed + r) / counted: 256 FLOPs executed of 256 counted
 * at r 256: 512 / 256 = 2.
 */
START_TEST(test_flops_per_exp)
{
	ck_assert_double_eq(attn_shape_flops_per_exp(GPU_GEN_AMPERE), 128);
	ck_assert_double_eq(attn_shape_flops_per_exp(GPU_GEN_HOPPER), 256);
	ck_assert_double_eq(attn_shape_flops_per_exp(GPU_GEN_BLACKWELL), 512);
	ck_assert_double_eq(attn_shape_flops_per_exp(GPU_GEN_VOLTA), 0);
	ck_assert_double_eq(attn_shape_flops_per_exp(GPU_GEN_CDNA3), 0);
	ck_assert_double_eq(attn_shape_flops_per_exp(GPU_GEN_UNSPECIFIED), 0);
	ck_assert_double_eq_tol(attn_shape_score_cost(256, 256, 256), 2.0, 1e-12);
}
END_TEST

/*
 * Causal diagonal tiles, 1 + tile / s: 4096 in tiles of 128 computes
 * 1 + 1/32 = 1.03125 of the triangle, 2048 1 + 1/16 = 1.0625; 64 tokens
 * fit one tile, whose whole square is twice the triangle: 2; no sequence:
 * 1.
 */
START_TEST(test_causal_tiles)
{
	ck_assert_double_eq_tol(attn_shape_causal_tiles(4096, 128), 1.03125, 1e-12);
	ck_assert_double_eq_tol(attn_shape_causal_tiles(2048, 128), 1.0625, 1e-12);
	ck_assert_double_eq_tol(attn_shape_causal_tiles(64, 128), 2.0, 1e-12);
	ck_assert_double_eq_tol(attn_shape_causal_tiles(0, 128), 1.0, 1e-12);
}
END_TEST

/*
 * attnseq: the causal span by kernel and generation (attn_shape.c's fit):
 * Hopper forward 128 for every kernel; backward 416 (FA3, cuDNN, the
 * profile's FA3) and 1184 (FA2, SDPA's FA2 on Hopper); Blackwell cuDNN
 * (the profile's, SDPA's) 704 / 1344, FA2 1072 / 1264; Ampere 128 both.
 * The cost with a span: 1 + 416 / 8192 = 1.05078125 (diagonal 1/64 plus
 * rows 288 / 8192); 1 + 1344 / 16384 = 1.08203125; 64 tokens, span 1344:
 * one whole tile, 2, plus (1344 - 128) / 128 = 9.5 for its one row: 11.5;
 * no sequence: 1. Rows of a 4096-key ring step on a diagonal of 8192,
 * span 416: 1 + 128/8192 + 288/4096 = 1.0859375.
 */
START_TEST(test_causal_span)
{
	const enum gpu_generation a = GPU_GEN_AMPERE, h = GPU_GEN_HOPPER, b = GPU_GEN_BLACKWELL;
	const struct {
		int kernel;
		enum gpu_generation gen;
		bool bwd;
		double span;
	} cases[] = {
		{ PLAN_ATTN_FA3, h, false, 128 },      { PLAN_ATTN_FA2, h, false, 128 },
		{ PLAN_ATTN_FA3, h, true, 416 },       { PLAN_ATTN_CUDNN, h, true, 416 },
		{ PLAN_ATTN_PROFILE, h, true, 416 },   { PLAN_ATTN_FA2, h, true, 1184 },
		{ PLAN_ATTN_SDPA, h, true, 1184 },     { PLAN_ATTN_PROFILE, b, false, 704 },
		{ PLAN_ATTN_SDPA, b, true, 1344 },     { PLAN_ATTN_FA2, b, false, 1072 },
		{ PLAN_ATTN_FA2, b, true, 1264 },      { PLAN_ATTN_FA2, a, true, 128 },
		{ PLAN_ATTN_PROFILE, a, false, 128 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double got = attn_shape_causal_span(cases[i].kernel, cases[i].gen, cases[i].bwd);

		ck_assert_msg(got == cases[i].span, "case %zu: span %g, expected %g", i, got, cases[i].span);
	}
	ck_assert_double_eq_tol(attn_shape_causal_cost(8192, 128, 416), 1.05078125, 1e-12);
	ck_assert_double_eq_tol(attn_shape_causal_cost(16384, 128, 1344), 1.08203125, 1e-12);
	ck_assert_double_eq_tol(attn_shape_causal_cost(64, 128, 1344), 11.5, 1e-12);
	ck_assert_double_eq_tol(attn_shape_causal_cost(0, 128, 1344), 1.0, 1e-12);
	ck_assert_double_eq_tol(attn_shape_causal_cost(2048, 128, 128), attn_shape_causal_tiles(2048, 128), 1e-12);
	ck_assert_double_eq_tol(attn_shape_causal_cost_rows(8192, 4096, 128, 416), 1.0859375, 1e-12);
}
END_TEST

static struct gpu
gpu_of(enum gpu_generation gen)
{
	struct gpu g = { .generation = gen };

	return g;
}

/*
 * Factors against hdim 128, seq 4096 (forward: 4 x 128 = 512 FLOPs a
 * score; backward 10 x 128 = 1280):
 * - H100, FA3, hdim 64, seq 4096, causal: forward 256 executed of 256,
 *   r 256: (512 / 256) / (768 / 512) = 2 / 1.5 = 1.33333 (the FA3 paper's
 *   hdim 64 forward at 0.75 of hdim 128's); backward (896 / 640) /
 *   (1536 / 1280) = 1.4 / 1.2 = 1.16667; tiles at the reference seq: 1.
 * - A100, FA2 (llm-foundry), hdim 64, seq 2048, causal (MPT-125m/350m):
 *   forward (384 / 256) / (640 / 512) = 1.5 / 1.25 = 1.2, tiles 1.0625 /
 *   1.03125 = 34 / 33: 1.2 x 34 / 33 = 1.236364; backward (768 / 640) /
 *   (1408 / 1280) = 1.2 / 1.1 = 1.090909, x 34 / 33 = 1.123967.
 * - A100, FA2, hdim 80 (padded to 96), seq 4096, causal: forward 384
 *   executed of 320 counted: (384 + 128) / 320 = 1.6, / 1.25 = 1.28;
 *   backward 6 x 96 + 4 x 96 = 960 of 5 x 160 = 800: (960 + 128) / 800
 *   = 1.36, / 1.1 = 1.236364.
 * - H100, FA3, hdim 128, seq 8192, causal: forward (span 128) 1 x (1 +
 *   1/64) / (1 + 1/32) = 1.015625 / 1.03125 = 0.984848; backward (span
 *   416) (1 + 416/8192) / (1 + 416/4096) = 1.05078125 / 1.1015625 =
 *   0.953901.
 * - B200, the profile's (cuDNN), hdim 128, seq 16384, causal: forward
 *   (1 + 704/16384) / (1 + 704/4096) = 1.04296875 / 1.171875 = 0.89;
 *   backward (1 + 1344/16384) / (1 + 1344/4096) = 1.08203125 / 1.328125
 *   = 0.814706.
 * - H100, SDPA (FA2), hdim 128, seq 2048, causal: forward (1 + 1/16) /
 *   (1 + 1/32) = 34/33 = 1.030303; backward (1 + 1184/2048) / (1 +
 *   1184/4096) = (101/64) / (165/128) = 202/165 = 1.224242.
 * - H100, FA3, hdim 128, 8192 tokens over a CP ring of 2 (rows of 4096
 *   keys a step), causal: forward 1.015625 / 1.03125 = 0.984848 (span
 *   128: no row term); backward the diagonal of 8192 and the rows of
 *   4096: (1 + 128/8192 + 288/4096) / (1 + 416/4096) = 1.0859375 /
 *   1.1015625 = 0.985816.
 * - H100, FA3, hdim 256, seq 512, not causal: 1024 FLOPs a score, above
 *   the reference's 512: the reference efficiency, no padding: 1, 1.
 * - B200, the profile's (cuDNN), MLA's 192 / 128, seq 4096, causal:
 *   forward 2 (192 + 128) = 640 of 640, above 512: 1; backward 6 x 192 +
 *   4 x 128 = 1664 executed of 5 x 320 = 1600 counted, above 1280: 1664
 *   / 1600 = 1.04.
 * - An inline GPU (no generation), hdim 64, seq 512: 1, 1.
 */
START_TEST(test_factors)
{
	struct gpu a = gpu_of(GPU_GEN_AMPERE), h = gpu_of(GPU_GEN_HOPPER), b = gpu_of(GPU_GEN_BLACKWELL);
	struct gpu u = gpu_of(GPU_GEN_UNSPECIFIED);
	struct attn_shape f;

	f = attn_shape_factors(&h, PLAN_ATTN_FA3, 64, 64, 4096, 4096, true);
	ck_assert_double_eq_tol(f.fwd, 4.0 / 3.0, 1e-9);
	ck_assert_double_eq_tol(f.bwd, 7.0 / 6.0, 1e-9);
	f = attn_shape_factors(&a, PLAN_ATTN_FA2, 64, 64, 2048, 2048, true);
	ck_assert_double_eq_tol(f.fwd, 1.2 * 34.0 / 33.0, 1e-9);
	ck_assert_double_eq_tol(f.bwd, 12.0 / 11.0 * 34.0 / 33.0, 1e-9);
	f = attn_shape_factors(&a, PLAN_ATTN_FA2, 80, 80, 4096, 4096, true);
	ck_assert_double_eq_tol(f.fwd, 1.28, 1e-9);
	ck_assert_double_eq_tol(f.bwd, 1.36 / 1.1, 1e-9);
	f = attn_shape_factors(&h, PLAN_ATTN_FA3, 128, 128, 8192, 8192, true);
	ck_assert_double_eq_tol(f.fwd, 1.015625 / 1.03125, 1e-9);
	ck_assert_double_eq_tol(f.bwd, 1.05078125 / 1.1015625, 1e-9);
	f = attn_shape_factors(&b, PLAN_ATTN_PROFILE, 128, 128, 16384, 16384, true);
	ck_assert_double_eq_tol(f.fwd, 0.89, 1e-9);
	ck_assert_double_eq_tol(f.bwd, 1.08203125 / 1.328125, 1e-9);
	f = attn_shape_factors(&h, PLAN_ATTN_FA3, 128, 128, 8192, 4096, true);
	ck_assert_double_eq_tol(f.fwd, 1.015625 / 1.03125, 1e-9);
	ck_assert_double_eq_tol(f.bwd, 1.0859375 / 1.1015625, 1e-9);
	f = attn_shape_factors(&h, PLAN_ATTN_SDPA, 128, 128, 2048, 2048, true);
	ck_assert_double_eq_tol(f.fwd, 34.0 / 33.0, 1e-9);
	ck_assert_double_eq_tol(f.bwd, 202.0 / 165.0, 1e-9);
	f = attn_shape_factors(&h, PLAN_ATTN_FA3, 256, 256, 512, 512, false);
	ck_assert_double_eq_tol(f.fwd, 1.0, 1e-12);
	ck_assert_double_eq_tol(f.bwd, 1.0, 1e-12);
	f = attn_shape_factors(&b, PLAN_ATTN_PROFILE, 192, 128, 4096, 4096, true);
	ck_assert_double_eq_tol(f.fwd, 1.0, 1e-12);
	ck_assert_double_eq_tol(f.bwd, 1.04, 1e-9);
	f = attn_shape_factors(&u, PLAN_ATTN_FA2, 64, 64, 512, 512, true);
	ck_assert_double_eq_tol(f.fwd, 1.0, 1e-12);
	ck_assert_double_eq_tol(f.bwd, 1.0, 1e-12);
}
END_TEST

/*
 * End to end through compute_flash_attention on an Ampere GPU of 100
 * TFLOPS (forward 0.5, backward 0.25, 10 us a call, the flash fixture),
 * hidden 512 over 8 heads (hdim 64), one sequence of 2048 tokens, causal,
 * the profile's kernel (FA2 on Ampere, no padding at 64):
 *   FLOPs 2 x 2048^2 x 128 x 8 x 0.5 = 4294967296; forward 4294967296 /
 *   (100e12 x 0.5) = 8.589934592e-5 s x 1.2 x 34/33 = 1.0620282768e-4,
 *   + 10 us = 1.1620282768e-4 s (the traffic, 2 x 256 x 2048 x 8 =
 *   8.4 MB, 8.4 us, is less);
 *   backward 2.5 x 4294967296 / (100e12 x 0.25) = 4.294967296e-4 x
 *   12/11 x 34/33 = 4.8274012583e-4, + 10 us = 4.9274012583e-4 s.
 * The same model on the fixture's inline GPU (no generation) keeps the
 * plain 8.589934592e-5 + 1e-5 = 9.589934592e-5 s.
 */
START_TEST(test_flash_end_to_end)
{
	struct cluster c, plain;
	struct model m;
	struct plan p;
	double fwd, bwd;

	test_load_cluster(&plain, FIXTURE_FLASH_CLUSTER_YAML);
	test_load_cluster(&c, FIXTURE_FLASH_CLUSTER_YAML);
	c.gpu.generation = GPU_GEN_AMPERE; /* its efficiencies as given, the shape model on */
	test_load_model(&m, "name: toy\nlayers: 2\nhidden: 512\nheads: 8\nvocab: 32768\nseq_len: 2048\n");
	fixture_one_gpu_plan(&p);
	p.seq_len = 2048;
	compute_flash_attention(&m, &p, &c, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd, 1.1620282768e-4, 1e-13);
	ck_assert_double_eq_tol(bwd, 4.9274012583e-4, 1e-13);
	compute_flash_attention(&m, &p, &plain, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd, 9.589934592e-5, 1e-15);
	cluster_release(&c);
	cluster_release(&plain);
}
END_TEST

static Suite *
attn_shape_suite(void)
{
	Suite *s = suite_create("attn-shape");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_padding);
	tcase_add_test(tc, test_flops_per_exp);
	tcase_add_test(tc, test_causal_tiles);
	tcase_add_test(tc, test_causal_span);
	tcase_add_test(tc, test_factors);
	tcase_add_test(tc, test_flash_end_to_end);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(attn_shape_suite)
