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
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(gpu_suite)
