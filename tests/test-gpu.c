/*
 * GPU profiles (gpus/): loading by name, overriding a named GPU from a
 * cluster, the defaults of a spec-sheet GPU by generation, and that a
 * cluster naming a GPU predicts exactly what the same GPU written inline
 * predicts.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/profile_load.h"
#include "io/profile_path.h"
#include "plan/compute.h"
#include "plan/estimate.h"
#include "plan/gpu.h"
#include "fixtures.h"
#include "testutil.h"

#define LINKS \
	"intra_node:\n  bandwidth: 450 GB/s\n" \
	"inter_node:\n  nics_per_node: 8\n  nic_bandwidth: 400 Gbit/s\n"

START_TEST(test_named_gpu)
{
	struct cluster c;

	test_setup_paths();
	test_load_cluster(&c, "name: x\nnodes: 2\ngpus_per_node: 8\ngpu: h100-sxm5-80gb\n" LINKS);
	ck_assert_str_eq(c.gpu.name, "H100-SXM5-80GB");
	ck_assert_int_eq(c.gpu.generation, GPU_GEN_HOPPER);
	/* "989 TFLOPS" and "3.35 TB/s" in SI; "81559 MiB" (nvidia-smi's total,
	 * helper capdrop; was 80 GiB) is 81559 * 2^20 = 85,520,809,984 bytes. */
	ck_assert_double_eq_tol(c.gpu.peak_flops, 989e12, 1);
	ck_assert_double_eq_tol(c.gpu.peak_flops_fp8, 1979e12, 1);
	ck_assert_double_eq_tol(c.gpu.memory_bw_Bps, 3.35e12, 1);
	ck_assert_double_eq_tol(c.gpu.memory_bytes, 85520809984.0, 1);
	cluster_release(&c);
}
END_TEST

START_TEST(test_base_override)
{
	struct cluster c;

	test_setup_paths();
	/* The H200 with 96 GB: only memory changes; the peaks stay the base's. */
	test_load_cluster(&c, "name: x\nnodes: 2\ngpus_per_node: 8\n"
			  "gpu:\n  base: h200-sxm-141gb\n  memory: 96 GB\n  name: H200-96\n" LINKS);
	ck_assert_str_eq(c.gpu.name, "H200-96");
	ck_assert_double_eq_tol(c.gpu.memory_bytes, 96e9, 1);
	ck_assert_double_eq_tol(c.gpu.peak_flops, 989e12, 1);
	ck_assert_double_eq_tol(c.gpu.memory_bw_Bps, 4.8e12, 1);
	cluster_release(&c);
}
END_TEST

/*
 * The Hopper profiles' small GEMMs are GPU time (CUDA-graph replay on an
 * H200, docs/measured/h200-2026-12-04/gemm.csv), not an eager loop's
 * launch-bound time. By hand: 1024^3 is 2 x 1024^3 = 2.147e9 FLOPs,
 * measured 5.81 us, so 2.147e9 / (989e12 x 5.81e-6) = 0.374, the point
 * at 2.15e9; its time back is 2.147e9 / (989e12 x 0.374) = 5.80 us. The
 * 1024^3 tiles (8 x 8 of 128 x 128, the profile's half tile) fill 64 of
 * 132 SMs, as the square GEMM of the same FLOPs does: no wave charge.
 * The eager loop read 11.5 us; the curve before read 19.7 us (0.110).
 */
START_TEST(test_hopper_small_gemm_gpu_time)
{
	static const char *const gpus[] = { "h200-sxm-141gb", "h100-sxm5-80gb", "h800-sxm5-80gb" };
	struct cluster c;
	char yaml[256];

	test_setup_paths();
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
		snprintf(yaml, sizeof yaml, "name: x\nnodes: 1\ngpus_per_node: 8\ngpu: %s\n" LINKS, gpus[i]);
		test_load_cluster(&c, yaml);
		ck_assert_double_eq_tol(cluster_gemm_efficiency(&c, 2.147e9), 0.374, 0.002);
		ck_assert_double_eq_tol(compute_gemm_time(&c, 1024, 1024, 1024, 1), 5.80e-6, 0.06e-6);
		/* The plateau is kept: 4096^3 (1.37e11) at 0.696. */
		ck_assert_double_eq_tol(cluster_gemm_efficiency(&c, 1.37e11), 0.696, 1e-6);
		cluster_release(&c);
	}
}
END_TEST

/*
 * Hopper's fp8_gemm_ratio (gpu.c): fp8 GEMMs held at an H200's 700 W cap
 * ran at 0.584 of the fp8 peak against bf16's 0.665 of its own,
 * 0.584 / 0.665 = 0.878, and the median of 11 training shapes 0.600
 * against 0.680, 0.882 (docs/measured/h200-2026-12-04): 0.88, in every
 * Hopper profile that does not set its own; Blackwell keeps 0.97.
 */
START_TEST(test_hopper_fp8_gemm_ratio)
{
	static const char *const gpus[] = { "h200-sxm-141gb", "h100-sxm5-80gb", "h800-sxm5-80gb" };
	struct gpu g = { 0 };
	struct cluster c;
	char yaml[256];

	gpu_unset_defaults(&g);
	g.generation = GPU_GEN_HOPPER;
	gpu_fill_defaults(&g);
	ck_assert_double_eq_tol(g.fp8_gemm_ratio, 0.88, 1e-12);
	ck_assert_double_eq_tol(0.584 / 0.665, 0.88, 0.003);
	ck_assert_double_eq_tol(0.600 / 0.680, 0.88, 0.003);
	gpu_unset_defaults(&g);
	g.generation = GPU_GEN_BLACKWELL;
	gpu_fill_defaults(&g);
	ck_assert_double_eq_tol(g.fp8_gemm_ratio, 0.97, 1e-12);
	test_setup_paths();
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
		snprintf(yaml, sizeof yaml, "name: x\nnodes: 1\ngpus_per_node: 8\ngpu: %s\n" LINKS, gpus[i]);
		test_load_cluster(&c, yaml);
		ck_assert_double_eq_tol(c.gpu.fp8_gemm_ratio, 0.88, 1e-12);
		cluster_release(&c);
	}
}
END_TEST

START_TEST(test_spec_sheet_defaults)
{
	struct gpu g = { 0 };

	/* Nothing given: the Ampere row of gpu.c's table; given values stay. */
	gpu_unset_defaults(&g);
	g.generation = GPU_GEN_AMPERE;
	g.attention_fwd_efficiency = 0.5;
	gpu_fill_defaults(&g);
	ck_assert_double_eq_tol(g.attention_fwd_efficiency, 0.5, 1e-12);
	ck_assert(g.memory_efficiency > 0 && g.memory_efficiency <= 1);
	ck_assert(g.gemm_efficiency_max > 0 && g.gemm_efficiency_max <= 1);
	ck_assert(g.attention_bwd_efficiency > 0 && g.attention_bwd_efficiency <= 1);
	ck_assert(g.launch_overhead_s > 0 && g.launch_overhead_s < 1e-4);
	ck_assert(!gpu_is_calibrated(&g));
	/* The "unspecified" generation keeps plan-cli's old inline defaults:
	 * memory_efficiency 0.8, gemm_efficiency_max 0.75, gemm_overhead 5 us. */
	gpu_unset_defaults(&g);
	g.generation = GPU_GEN_UNSPECIFIED;
	gpu_fill_defaults(&g);
	ck_assert_double_eq_tol(g.memory_efficiency, 0.8, 1e-12);
	ck_assert_double_eq_tol(g.gemm_efficiency_max, 0.75, 1e-12);
	ck_assert_double_eq_tol(g.gemm_overhead_s, 5e-6, 1e-15);
}
END_TEST

/* Flash attention by default from Ampere on (FlashAttention needs
 * Ampere or newer), not on Volta nor on a GPU of no stated generation;
 * a profile's flash_attention wins over its generation. */
START_TEST(test_flash_attention_default)
{
	static const struct {
		int generation, want;
	} rows[] = {
		{ GPU_GEN_UNSPECIFIED, 0 }, { GPU_GEN_VOLTA, 0 }, { GPU_GEN_AMPERE, 1 },
		{ GPU_GEN_HOPPER, 1 }, { GPU_GEN_BLACKWELL, 1 }, { GPU_GEN_CDNA3, 1 },
	};
	struct gpu g = { 0 };
	struct cluster c;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		gpu_unset_defaults(&g);
		ck_assert_int_eq(g.flash_attention, GPU_FLASH_UNSET);
		g.generation = rows[i].generation;
		gpu_fill_defaults(&g);
		ck_assert_int_eq(g.flash_attention, rows[i].want);
	}
	gpu_unset_defaults(&g);
	g.generation = GPU_GEN_VOLTA;
	g.flash_attention = 1;
	gpu_fill_defaults(&g);
	ck_assert_int_eq(g.flash_attention, 1);
	/* What a plan uses: as given, else the GPU's. */
	ck_assert(gpu_plan_flash_attention(&g, -1));
	ck_assert(!gpu_plan_flash_attention(&g, 0));
	g.flash_attention = 0;
	ck_assert(!gpu_plan_flash_attention(&g, -1));
	ck_assert(gpu_plan_flash_attention(&g, 1));

	test_setup_paths();
	test_load_cluster(&c, "name: x\nnodes: 2\ngpus_per_node: 8\ngpu: v100-sxm2-32gb\n" LINKS);
	ck_assert_int_eq(c.gpu.flash_attention, 0);
	cluster_release(&c);
	test_load_cluster(&c, "name: x\nnodes: 2\ngpus_per_node: 8\ngpu: a100-sxm4-80gb\n" LINKS);
	ck_assert_int_eq(c.gpu.flash_attention, 1);
	cluster_release(&c);
	test_load_cluster(&c, "name: x\nnodes: 2\ngpus_per_node: 8\n"
			  "gpu:\n  base: h100-sxm5-80gb\n  flash_attention: false\n" LINKS);
	ck_assert_int_eq(c.gpu.flash_attention, 0);
	cluster_release(&c);
}
END_TEST

/*
 * The expected largest of n standard normals (Blom 1958) against the
 * exact values tabulated by Harter (1961): 0.5642 for n = 2, 1.5388 for
 * 10, 2.5076 for 100, 3.2414 for 1000; Blom's formula is 4.5 % high at
 * n = 2 and within 0.6 % from n = 10 on.
 * By hand for n = 10: Phi^-1(9.625 / 10.25) = Phi^-1(0.939024) = 1.5466.
 */
START_TEST(test_expected_max_normal)
{
	ck_assert_double_eq_tol(gpu_expected_max_normal(1), 0.0, 1e-12);
	ck_assert_double_eq_tol(gpu_expected_max_normal(0), 0.0, 1e-12);
	ck_assert_double_eq_tol(gpu_expected_max_normal(10), 1.5466, 1e-3);
	ck_assert_double_eq_tol(gpu_expected_max_normal(2), 0.5642, 0.03);
	ck_assert_double_eq_tol(gpu_expected_max_normal(10), 1.5388, 0.01);
	ck_assert_double_eq_tol(gpu_expected_max_normal(100), 2.5076, 0.015);
	ck_assert_double_eq_tol(gpu_expected_max_normal(1000), 3.2414, 0.02);
}
END_TEST

/*
 * The slowest GPU's pace: 1 + 0.013 x E[max of N]. By hand, N = 8:
 * Phi^-1(7.625 / 8.25) = Phi^-1(0.924242) = 1.4342, so 1.018645; N =
 * 1536: Phi^-1(1535.625 / 1536.25) = Phi^-1(0.999593) = 3.3481, so
 * 1.043525. One GPU, or no variation (the unspecified generation): 1.
 */
START_TEST(test_pace_factor)
{
	struct gpu g = { 0 };

	gpu_unset_defaults(&g);
	g.generation = GPU_GEN_AMPERE;
	gpu_fill_defaults(&g);
	ck_assert_double_eq_tol(g.speed_variation, 0.013, 1e-12);
	ck_assert_double_eq_tol(gpu_pace_factor(&g, 1), 1.0, 1e-12);
	ck_assert_double_eq_tol(gpu_pace_factor(&g, 8), 1.018645, 1e-5);
	ck_assert_double_eq_tol(gpu_pace_factor(&g, 1536), 1.043525, 1e-5);
	ck_assert(gpu_pace_factor(&g, 3072) > gpu_pace_factor(&g, 1536));
	gpu_unset_defaults(&g);
	g.generation = GPU_GEN_UNSPECIFIED;
	gpu_fill_defaults(&g);
	ck_assert_double_eq_tol(gpu_pace_factor(&g, 1536), 1.0, 1e-12);
}
END_TEST

/*
 * A plan's GPU time grows by the pace factor and its network time does
 * not: GPT-3 175B on 1536 A100s (TP 8, PP 12) with speed_variation 0
 * and 0.013, everything else the same: compute x 1.043525; TP and PP
 * times and the DP traffic equal.
 */
START_TEST(test_pace_in_estimate)
{
	struct model m;
	struct cluster c0, c1;
	struct estimate e0, e1;
	struct plan p;
	struct plan_error err;
	const char *yaml = "name: x\nnodes: 192\ngpus_per_node: 8\n"
			   "gpu:\n  base: a100-sxm4-80gb\n  speed_variation: %s\n" LINKS;
	char buf[512];

	test_setup_paths();
	test_load_model(&m, GPT3_YAML);
	snprintf(buf, sizeof(buf), yaml, "0");
	test_load_cluster(&c0, buf);
	snprintf(buf, sizeof(buf), yaml, "0.013");
	test_load_cluster(&c1, buf);
	gpt3_plan(&p);
	plan_error_clear(&err);
	ck_assert(estimate_plan(&m, &c0, &p, NULL, &e0, &err));
	ck_assert(estimate_plan(&m, &c1, &p, NULL, &e1, &err));
	ck_assert_double_eq_tol(e0.details.pace_factor, 1.0, 1e-12);
	ck_assert_double_eq_tol(e1.details.pace_factor, 1.043525, 1e-5);
	ck_assert_double_eq_tol(e1.breakdown.compute / e0.breakdown.compute, e1.details.pace_factor, 1e-9);
	ck_assert_double_eq_tol(e1.breakdown.recompute / e0.breakdown.recompute, e1.details.pace_factor, 1e-9);
	ck_assert_double_eq_tol(e1.breakdown.optimizer / e0.breakdown.optimizer, e1.details.pace_factor, 1e-9);
	ck_assert_double_eq_tol(e1.breakdown.tp_comm, e0.breakdown.tp_comm, 1e-12);
	ck_assert_double_eq_tol(e1.breakdown.pp_comm, e0.breakdown.pp_comm, 1e-12);
	/* The DP traffic is the same; how much of it the (slower) backward
	 * hides is not. */
	ck_assert_double_eq_tol(e1.details.dp_total_s, e0.details.dp_total_s, 1e-12);
	ck_assert(e0.breakdown.pp_comm > 0 && e0.details.dp_total_s > 0);
	ck_assert(e1.iteration_time_s > e0.iteration_time_s);
	cluster_release(&c0);
	cluster_release(&c1);
}
END_TEST

/* The same GPU inline and by name must give the same prediction. */
START_TEST(test_inline_equals_named)
{
	char path[PATH_MAX], text[8192];
	struct plan_error err;
	struct cluster named, inl;
	struct model m;
	struct plan p;
	struct estimate a, b;
	FILE *f;
	size_t n;

	test_setup_paths();
	plan_error_clear(&err);
	ck_assert(profile_resolve(PROFILE_GPU, "a100-sxm4-80gb", path, sizeof(path), &err));
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	{
		/* Indent the GPU file under "gpu:" to make the inline cluster. */
		char inline_yaml[16384] = "name: x\nnodes: 64\ngpus_per_node: 8\ngpu:\n";
		char *line = text, *next;

		for (; line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			if (line[0] == '#' || line[0] == '\0')
				continue;
			strcat(inline_yaml, "  ");
			strcat(inline_yaml, line);
			strcat(inline_yaml, "\n");
		}
		strcat(inline_yaml, LINKS);
		test_load_cluster(&inl, inline_yaml);
	}
	test_load_cluster(&named, "name: x\nnodes: 64\ngpus_per_node: 8\ngpu: a100-sxm4-80gb\n" LINKS);
	test_load_model(&m, GPT3_YAML);
	plan_init(&p);
	p.tp = 8;
	p.pp = 8;
	p.dp = 8;
	p.micro_batch = 1;
	p.global_batch = 512;
	p.seq_len = 2048;
	p.recompute = PLAN_RECOMPUTE_FULL;
	ck_assert_msg(estimate_plan(&m, &named, &p, NULL, &a, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m, &inl, &p, NULL, &b, &err), "%s", err.message);
	ck_assert_double_eq_tol(a.iteration_time_s, b.iteration_time_s, 1e-12 * b.iteration_time_s);
	ck_assert_double_eq_tol(a.memory.total, b.memory.total, 1.0);
	cluster_release(&named);
	cluster_release(&inl);
}
END_TEST

/* A cluster around a bare GPU: 1000 TFLOPS at a flat 0.5 of peak. */
static void
bare_cluster(struct cluster *c, int sms)
{
	memset(c, 0, sizeof(*c));
	c->nodes = c->gpus_per_node = 1;
	c->gpu.peak_flops = 1000e12;
	c->gpu.memory_bw_Bps = 1e18; /* never memory-bound here */
	c->gpu.memory_efficiency = 1.0;
	c->gpu.gemm_efficiency_max = 0.5;
	c->gpu.gemm_overhead_s = 0.0;
	c->gpu.sm_count = sms;
	c->gpu.gemm_tile_m = 128;
	c->gpu.gemm_tile_n = 256;
}

START_TEST(test_wave_factor)
{
	struct cluster c;

	/*
	 * M = 4096, N = 1280, K = 8192 (Llama-3-70B's QKV at TP 8, 4096
	 * tokens) on 132 SMs (H100 SXM5):
	 * - 128 x 256 tiles: 32 x 5 = 160 tiles, ceil(160/132) = 2 waves,
	 *   fill 160 / 264 = 0.6061; 256 x 128 the same 16 x 10 = 160;
	 * - the 128 x 128 half tile: 32 x 10 = 320 tiles, 3 waves, fill
	 *   320 / 396 = 0.8081, the best.
	 * The square GEMM of the same FLOPs: side cbrt(4096 1280 8192) =
	 * 3502.03; 128 x 256: 28 x 14 = 392 tiles, 3 waves, fill 392/396 =
	 * 0.9899 (128 x 128: 28 x 28 = 784, 6 waves, 784/792 the same).
	 * Factor 0.8081 / 0.9899 = 320/392 = 0.81633.
	 */
	bare_cluster(&c, 132);
	ck_assert_double_eq_tol(cluster_gemm_wave_factor(&c, 4096, 1280, 8192, 1), 320.0 / 392.0, 1e-12);
	/* The compute time carries it: 2 M N K / (1000 T x 0.5 x 0.81633). */
	ck_assert_double_eq_tol(compute_gemm_time(&c, 4096, 1280, 8192, 1),
				2.0 * 4096 * 1280 * 8192 / (1000e12 * 0.5 * 320.0 / 392.0), 1e-15);
	/* M = 2048 (micro-batch of 2048 tokens): 128 x 128 gives 16 x 10 =
	 * 160 tiles, 2 waves, 160/264 = 0.6061 (128 x 256: 80 tiles, 80/132
	 * the same); square side cbrt(2048 1280 8192) = 2779.6: 128 x 256
	 * 22 x 11 = 242 tiles, 2 waves, 242/264 = 0.9167; factor 0.66116. */
	ck_assert_double_eq_tol(cluster_gemm_wave_factor(&c, 2048, 1280, 8192, 1), (160.0 / 264) / (242.0 / 264),
				1e-12);
	/* A square 8192^3 GEMM is its own reference: 1. */
	ck_assert_double_eq_tol(cluster_gemm_wave_factor(&c, 8192, 8192, 8192, 1), 1.0, 1e-12);
	/* B200, 148 SMs, fc1 of Llama-3-70B at TP 8 (M 4096, N 7168, K 8192):
	 * 128 x 256 gives 32 x 28 = 896 tiles, 7 waves, 896/1036 = 0.8649;
	 * 128 x 128 32 x 56 = 1792, 13 waves, 1792/1924 = 0.93139. Square
	 * side 6218.93: 128 x 128 49 x 49 = 2401, 17 waves, 2401/2516 =
	 * 0.95429 (128 x 256: 1225 tiles, 9 waves, 0.9197). Factor 0.97600. */
	bare_cluster(&c, 148);
	ck_assert_double_eq_tol(cluster_gemm_wave_factor(&c, 4096, 7168, 8192, 1),
				(1792.0 / 1924) / (2401.0 / 2516), 1e-12);
	/* A profile tile of 256 x 128 (m > n: the half tile is n x n) is
	 * the same tiles transposed: the same counts and factors as above,
	 * 160 full / 320 half tiles against the square's 392 (bench2: the
	 * square reference counts the tile and its half only). */
	c.gpu.gemm_tile_m = 256;
	c.gpu.gemm_tile_n = 128;
	ck_assert_double_eq_tol(cluster_gemm_wave_factor(&c, 4096, 7168, 8192, 1),
				(1792.0 / 1924) / (2401.0 / 2516), 1e-12);
	bare_cluster(&c, 132);
	c.gpu.gemm_tile_m = 256;
	c.gpu.gemm_tile_n = 128;
	ck_assert_double_eq_tol(cluster_gemm_wave_factor(&c, 4096, 1280, 8192, 1), 320.0 / 392.0, 1e-12);
	/* Tiles an exact multiple of the SMs (reciprocals must not round a
	 * count up): 4224 x 2048 on 132 SMs is 33 x 8 = 264 tiles of 128 x
	 * 256, two full waves: 1. */
	bare_cluster(&c, 132);
	ck_assert_double_eq(cluster_gemm_wave_factor(&c, 4224, 2048, 4096, 1), 1.0);
	/* Counts beyond 2^52 stay finite and at most 1. */
	ck_assert(cluster_gemm_wave_factor(&c, 1e12, 1e12, 1e3, 1e6) <= 1.0);
	ck_assert(cluster_gemm_wave_factor(&c, 1e12, 1e12, 1e3, 1e6) > 0.0);
	/* No SM count: no wave model. */
	bare_cluster(&c, 0);
	ck_assert_double_eq(cluster_gemm_wave_factor(&c, 4096, 1280, 8192, 1), 1.0);
}
END_TEST

/*
 * gpu_set_power_limit, the check predict's --power-limit and sweep's
 * power_limit share: a GPU without rated_power takes none; 700 W rated
 * takes 140 W (a fifth, 0.2 x 700) and not 139 W; a taken limit is set.
 */
START_TEST(test_set_power_limit)
{
	struct gpu g;
	char why[256];

	memset(&g, 0, sizeof(g));
	snprintf(g.name, sizeof(g.name), "toy");
	ck_assert(!gpu_set_power_limit(&g, 500, why, sizeof(why)));
	ck_assert_str_eq(why, "needs the GPU's rated_power, the power its peaks hold at: GPU profile 'toy' sets none");
	g.rated_power_W = 700;
	ck_assert(!gpu_set_power_limit(&g, 139, why, sizeof(why)));
	ck_assert_str_eq(why, "139 W is below a fifth of GPU 'toy''s rated_power (700 W): no GPU runs there");
	ck_assert_double_eq(g.power_limit_W, 0.0);
	ck_assert(gpu_set_power_limit(&g, 140, why, sizeof(why)));
	ck_assert_double_eq(g.power_limit_W, 140.0);
	ck_assert(gpu_set_power_limit(&g, 500, why, sizeof(why)));
	ck_assert_double_eq_tol(gpu_clock_factor(&g), 0.89390, 1e-5);
}
END_TEST

START_TEST(test_clock_factor)
{
	struct gpu g;
	struct cluster c;

	memset(&g, 0, sizeof(g));
	/* Not given: 1. */
	ck_assert_double_eq(gpu_clock_factor(&g), 1.0);
	g.rated_power_W = 700;
	ck_assert_double_eq(gpu_clock_factor(&g), 1.0);
	/* torchtitan's H100s at 500 W of 700: (5/7)^(1/3) = 0.89390. */
	g.power_limit_W = 500;
	ck_assert_double_eq_tol(gpu_clock_factor(&g), 0.89390, 1e-5);
	/* The H100 NVL's 400 W: 0.82983 (NVIDIA's spec 835/989 = 0.844). */
	g.power_limit_W = 400;
	ck_assert_double_eq_tol(gpu_clock_factor(&g), 0.82983, 1e-5);
	/* At or above the rated power: the rated clock. */
	g.power_limit_W = 700;
	ck_assert_double_eq(gpu_clock_factor(&g), 1.0);
	g.power_limit_W = 900;
	ck_assert_double_eq(gpu_clock_factor(&g), 1.0);
	/* A compute-bound GEMM takes 1/0.89390 as long at 500 W. */
	bare_cluster(&c, 0);
	c.gpu.rated_power_W = 700;
	c.gpu.power_limit_W = 500;
	ck_assert_double_eq_tol(compute_gemm_time(&c, 8192, 8192, 8192, 1),
				2.0 * 8192.0 * 8192 * 8192 / (1000e12 * 0.5 * cbrt(5.0 / 7.0)), 1e-12);
}
END_TEST

START_TEST(test_new_profiles)
{
	struct cluster c;

	test_setup_paths();
	/* GB200 NVL72: 72 GPUs in one NVLink domain, a NIC each; GB200 at
	 * 2.5 PFLOPS bf16 dense, 1200 W, 148 SMs. */
	test_load_profile(PROFILE_CLUSTER, "gb200-nvl72", &c);
	ck_assert_int_eq(c.gpus_per_node, 72);
	ck_assert_int_eq(c.inter.nics_per_node, 72);
	ck_assert_double_eq_tol(c.intra.bandwidth_Bps, 900e9, 1);
	ck_assert_double_eq_tol(c.gpu.peak_flops, 2500e12, 1);
	ck_assert_double_eq_tol(c.gpu.rated_power_W, 1200, 1e-9);
	ck_assert_int_eq(c.gpu.sm_count, 148);
	ck_assert_double_eq(gpu_clock_factor(&c.gpu), 1.0);
	cluster_release(&c);
	/* GB300 NVL72: the same rack with Blackwell Ultra GPUs and one
	 * 800 Gbit/s ConnectX-8 a GPU: 800e9 / 8 = 100e9 B/s a NIC, twice
	 * GB200 NVL72's 400 Gbit/s = 50e9 B/s; memory nvidia-smi's 284208 MiB
	 * (helper capdrop; was "288 GB" = 288e9 B) = 284208 * 2^20 =
	 * 298,013,687,808 B. */
	test_load_profile(PROFILE_CLUSTER, "gb300-nvl72", &c);
	ck_assert_str_eq(c.gpu.name, "GB300");
	ck_assert_int_eq(c.gpus_per_node, 72);
	ck_assert_int_eq(c.inter.nics_per_node, 72);
	ck_assert_double_eq_tol(c.inter.nic_bandwidth_Bps, 100e9, 1);
	ck_assert_double_eq_tol(c.intra.bandwidth_Bps, 900e9, 1);
	ck_assert_double_eq_tol(c.gpu.memory_bytes, 298013687808.0, 1);
	cluster_release(&c);
	/* H800 nodes as FlagPerf ran them: 400 GB/s bidirectional NVLink. */
	test_load_profile(PROFILE_CLUSTER, "dgx-h800", &c);
	ck_assert_str_eq(c.gpu.name, "H800-SXM5-80GB");
	ck_assert_double_eq_tol(c.intra.bandwidth_Bps, 200e9, 1);
	ck_assert_int_eq(c.gpu.sm_count, 132);
	cluster_release(&c);
	test_load_profile(PROFILE_CLUSTER, "dgx-a800", &c);
	ck_assert_str_eq(c.gpu.name, "A800-SXM4-80GB");
	ck_assert_double_eq_tol(c.intra.bandwidth_Bps, 200e9, 1);
	ck_assert_int_eq(c.gpu.sm_count, 108);
	cluster_release(&c);
	/* torchtitan's H100 at 500 W, 2.4 TB/s; GB300 160 SMs; H100 PCIe 114. */
	test_load_cluster(&c, "name: x\nnodes: 1\ngpus_per_node: 8\ngpu: h100-sxm5-96gb-hbm2e\n" LINKS);
	ck_assert_double_eq_tol(c.gpu.memory_bw_Bps, 2.4e12, 1);
	ck_assert_double_eq_tol(gpu_clock_factor(&c.gpu), 0.89390, 1e-5);
	cluster_release(&c);
	test_load_cluster(&c, "name: x\nnodes: 1\ngpus_per_node: 8\ngpu: gb300\n" LINKS);
	ck_assert_int_eq(c.gpu.sm_count, 160);
	ck_assert_double_eq_tol(c.gpu.peak_flops_fp8, 5000e12, 1);
	cluster_release(&c);
	test_load_cluster(&c, "name: x\nnodes: 1\ngpus_per_node: 8\ngpu: h100-pcie-80gb\n" LINKS);
	ck_assert_int_eq(c.gpu.sm_count, 114);
	ck_assert_double_eq_tol(c.gpu.peak_flops, 756e12, 1);
	cluster_release(&c);
	test_load_cluster(&c, "name: x\nnodes: 1\ngpus_per_node: 8\ngpu: h100-nvl-94gb\n" LINKS);
	ck_assert_double_eq_tol(c.gpu.rated_power_W, 400, 1e-9);
	cluster_release(&c);
	/* "This H100 at 500 W": a cluster overrides the power limit. */
	test_load_cluster(&c, "name: x\nnodes: 1\ngpus_per_node: 8\n"
			  "gpu: {base: h100-sxm5-80gb, power_limit: 0.5 kW}\n" LINKS);
	ck_assert_double_eq_tol(c.gpu.power_limit_W, 500, 1e-9);
	ck_assert_double_eq_tol(gpu_clock_factor(&c.gpu), 0.89390, 1e-5);
	cluster_release(&c);
}
END_TEST

/*
 * The host link (framework-data.md Sec. 34): a GPU without pcie_bandwidth
 * takes its generation's, by hand: Volta PCIe Gen3 x16 measured 12 GB/s =
 * 12e9 B/s; Ampere Gen4 25e9; Hopper, Blackwell and CDNA3 Gen5 50e9; an
 * unspecified generation 25e9 (what every cluster defaulted to before).
 */
START_TEST(test_pcie_defaults)
{
	static const struct {
		int generation;
		double Bps;
	} rows[] = {
		{ GPU_GEN_UNSPECIFIED, 25e9 }, { GPU_GEN_VOLTA, 12e9 }, { GPU_GEN_AMPERE, 25e9 },
		{ GPU_GEN_HOPPER, 50e9 }, { GPU_GEN_BLACKWELL, 50e9 }, { GPU_GEN_CDNA3, 50e9 },
	};
	_Static_assert(sizeof(rows) / sizeof(rows[0]) == GPU_GEN_COUNT, "a row per generation");

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct gpu g = { 0 };

		gpu_unset_defaults(&g);
		g.generation = rows[i].generation;
		gpu_fill_defaults(&g);
		ck_assert_double_eq_tol(g.pcie_bandwidth_Bps, rows[i].Bps, 1e-3);
		/* A value given is kept. */
		gpu_unset_defaults(&g);
		g.pcie_bandwidth_Bps = 7e9;
		gpu_fill_defaults(&g);
		ck_assert_double_eq_tol(g.pcie_bandwidth_Bps, 7e9, 1e-3);
	}
}
END_TEST

/*
 * Which bandwidth a host copy uses: the cluster's pcie_bandwidth over the
 * GPU's over the generation's. h100-sxm5-80gb sets 50 GB/s = 5e10 B/s;
 * gb200 150 GB/s = 1.5e11 (NVLink-C2C); a cluster's 12 GB/s = 1.2e10
 * wins over both; an inline Hopper GPU without the key gets 5e10; a base
 * GPU overridden with 20 GB/s gets 2e10; a GPU made in code with 0 gets
 * GPU_DEFAULT_PCIE_BPS, 2.5e10. Units: "400 Gbit/s" is 400e9 / 8 = 5e10
 * B/s, the same as "50 GB/s"; "50 Gbit/s" is 6.25e9.
 */
START_TEST(test_pcie_precedence)
{
	static const struct {
		const char *head; /* the cluster's lines before its links */
		double Bps;
	} rows[] = {
		{ "gpus_per_node: 8\ngpu: h100-sxm5-80gb\n", 5e10 },
		{ "gpus_per_node: 4\ngpu: gb200\n", 1.5e11 },
		{ "gpus_per_node: 8\ngpu: h100-sxm5-80gb\npcie_bandwidth: 12 GB/s\n", 1.2e10 },
		{ "gpus_per_node: 8\ngpu: {base: h100-sxm5-80gb, pcie_bandwidth: 20 GB/s}\n", 2e10 },
		{ "gpus_per_node: 8\ngpu: {name: G, generation: hopper, peak_flops: 989 TFLOPS, memory: 80 GB, "
		  "memory_bandwidth: 3 TB/s}\n", 5e10 },
		{ "gpus_per_node: 8\ngpu: {base: h100-sxm5-80gb, pcie_bandwidth: 400 Gbit/s}\n", 5e10 },
		{ "gpus_per_node: 8\ngpu: h100-sxm5-80gb\npcie_bandwidth: 50 Gbit/s\n", 6.25e9 },
	};
	char yaml[512];

	test_setup_paths();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct cluster c;

		snprintf(yaml, sizeof(yaml), "name: x\nnodes: 1\n%s" LINKS, rows[i].head);
		test_load_cluster(&c, yaml);
		ck_assert_msg(fabs(cluster_pcie_bandwidth_Bps(&c) - rows[i].Bps) <= 1e-3, "row %zu: %g", i,
			      cluster_pcie_bandwidth_Bps(&c));
		/* The cluster's value overrides, leaving the GPU's as it is. */
		if (i == 0 || i == 2) {
			ck_assert(i == 2 || c.pcie_bandwidth_Bps == 0.0);
			ck_assert_double_eq_tol(c.gpu.pcie_bandwidth_Bps, 5e10, 1e-3);
		}
		cluster_release(&c);
	}
	{
		struct cluster z = { 0 };

		ck_assert_double_eq_tol(cluster_pcie_bandwidth_Bps(&z), GPU_DEFAULT_PCIE_BPS, 1e-3);
		ck_assert_double_eq_tol(GPU_DEFAULT_PCIE_BPS, 2.5e10, 1e-3);
	}
}
END_TEST

START_TEST(test_power_and_wave_errors)
{
	static const struct {
		const char *yaml, *message;
		int line, column;
	} cases[] = {
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  peak_flops: 1 TFLOPS\n"
		  "  memory: 10 GiB\n  memory_bandwidth: 1 TB/s\n  power_limit: 300 W\n" LINKS,
		  "'gpu.power_limit' needs gpu.rated_power", 9, 16 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  peak_flops: 1 TFLOPS\n"
		  "  memory: 10 GiB\n  memory_bandwidth: 1 TB/s\n  rated_power: 700 W\n  power_limit: 100 W\n" LINKS,
		  "below a fifth of gpu.rated_power", 10, 16 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  rated_power: 700 GB\n",
		  "'rated_power': 'GB' is a size unit, expected a power", 6, 16 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  rated_power: 700\n",
		  "missing unit in '700'", 6, 16 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  sm_count: -1\n",
		  "'sm_count' must be at least 0", 6, 13 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  gemm_tile_m: 8\n",
		  "'gemm_tile_m' must be at least 16", 6, 16 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  gemm_tile_n: 4096\n",
		  "'gemm_tile_n' must be at most 1024", 6, 16 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fixture_cluster_refused(i, cases[i].yaml, cases[i].message, cases[i].line, cases[i].column);
}
END_TEST

static Suite *
gpu_suite(void)
{
	Suite *s = suite_create("gpu");
	TCase *tc = tcase_create("gpu");

	tcase_add_test(tc, test_named_gpu);
	tcase_add_test(tc, test_base_override);
	tcase_add_test(tc, test_hopper_small_gemm_gpu_time);
	tcase_add_test(tc, test_hopper_fp8_gemm_ratio);
	tcase_add_test(tc, test_spec_sheet_defaults);
	tcase_add_test(tc, test_pcie_defaults);
	tcase_add_test(tc, test_pcie_precedence);
	tcase_add_test(tc, test_inline_equals_named);
	tcase_add_test(tc, test_flash_attention_default);
	tcase_add_test(tc, test_expected_max_normal);
	tcase_add_test(tc, test_pace_factor);
	tcase_add_test(tc, test_pace_in_estimate);
	tcase_add_test(tc, test_wave_factor);
	tcase_add_test(tc, test_clock_factor);
	tcase_add_test(tc, test_new_profiles);
	tcase_add_test(tc, test_power_and_wave_errors);
	tcase_add_test(tc, test_set_power_limit);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(gpu_suite)
