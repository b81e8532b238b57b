/*
 * GPU profiles (gpus/): loading by name, overriding a named GPU from a
 * cluster, the defaults of a spec-sheet GPU by generation, and that a
 * cluster naming a GPU predicts exactly what the same GPU written inline
 * predicts.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "io/profile_path.h"
#include "plan/estimate.h"
#include "plan/gpu.h"
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
	/* "989 TFLOPS" and "3.35 TB/s" in SI; "80 GiB" is 80 * 2^30 bytes. */
	ck_assert_double_eq_tol(c.gpu.peak_flops, 989e12, 1);
	ck_assert_double_eq_tol(c.gpu.peak_flops_fp8, 1979e12, 1);
	ck_assert_double_eq_tol(c.gpu.memory_bw_Bps, 3.35e12, 1);
	ck_assert_double_eq_tol(c.gpu.memory_bytes, 80.0 * 1073741824.0, 1);
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

static Suite *
gpu_suite(void)
{
	Suite *s = suite_create("gpu");
	TCase *tc = tcase_create("gpu");

	tcase_add_test(tc, test_named_gpu);
	tcase_add_test(tc, test_base_override);
	tcase_add_test(tc, test_spec_sheet_defaults);
	tcase_add_test(tc, test_inline_equals_named);
	tcase_add_test(tc, test_flash_attention_default);
	tcase_add_test(tc, test_expected_max_normal);
	tcase_add_test(tc, test_pace_factor);
	tcase_add_test(tc, test_pace_in_estimate);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(gpu_suite)
