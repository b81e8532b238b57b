#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "io/profile_load.h"
#include "io/profile_path.h"

#define OFF(f) offsetof(struct gpu, f)

/* gemm_overhead's upper bound: a kernel's launch and wave tail are
 * microseconds; a second is a typo's range, not a GPU's. */
#define GPU_MAX_GEMM_OVERHEAD_S 1.0

/* One table for a GPU profile (gpus/NAME.yaml) and for a GPU described
 * inline in a cluster. The efficiencies without a default here take the
 * default of the GPU's generation (gpu_fill_defaults). */
const struct schema_key gpu_schema[] = {
	{ .key = "name", .type = SCHEMA_STRING, .required = true, .offset = OFF(name), .size = 64,
	  .help = "GPU model as printed, e.g. H100-SXM5-80GB" },
	{ .key = "description", .type = SCHEMA_STRING, .offset = OFF(description), .size = 256,
	  .help = "free text" },
	{ .key = "calibration", .type = SCHEMA_STRING, .offset = OFF(calibration), .size = 256,
	  .help = "where the measured values come from; absent: a spec-sheet GPU" },
	{ .key = "generation", .type = SCHEMA_ENUM, .offset = OFF(generation), .def = "unspecified",
	  .choices = gpu_generation_names,
	  .help = "architecture, whose defaults fill the efficiencies not given" },
	{ .key = "peak_flops", .type = SCHEMA_QUANTITY, .unit = UNIT_COMPUTE, .required = true,
	  .offset = OFF(peak_flops), .min = UNITS_MIN_COMPUTE_FLOPS, .max = 1e20,
	  .help = "dense 16-bit (bf16/fp16) tensor-core peak" },
	{ .key = "peak_flops_fp8", .type = SCHEMA_QUANTITY, .unit = UNIT_COMPUTE,
	  .offset = OFF(peak_flops_fp8), .min = 0, .max = 1e20, .def = "0 TFLOPS",
	  .help = "dense fp8 tensor-core peak; 0: no fp8, else at least peak_flops" },
	{ .key = "peak_flops_fp4", .type = SCHEMA_QUANTITY, .unit = UNIT_COMPUTE,
	  .offset = OFF(peak_flops_fp4), .min = 0, .max = 1e20, .def = "0 TFLOPS",
	  .help = "dense NVFP4 tensor-core peak (Blackwell); 0: no fp4, else at least peak_flops_fp8" },
	{ .key = "fp8_gemm_ratio", .type = SCHEMA_NUMBER, .offset = OFF(fp8_gemm_ratio),
	  .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .help = "efficiency of an fp8 GEMM over that of a bf16 GEMM of the same duration; "
		  "default by generation" },
	{ .key = "fp8_fast_accum_speedup", .type = SCHEMA_NUMBER, .offset = OFF(fp8_fast_accum_speedup),
	  .min = 1, .max = 2,
	  .help = "speed of an fp8 GEMM with fast accumulation (the forward's) over one that promotes its "
		  "partial sums to fp32 (the backward's); default by generation" },
	{ .key = "memory", .type = SCHEMA_QUANTITY, .unit = UNIT_SIZE, .required = true,
	  .offset = OFF(memory_bytes), .min = 0, .min_exclusive = true, .max = 1e18,
	  .help = "device memory" },
	{ .key = "memory_bandwidth", .type = SCHEMA_QUANTITY, .unit = UNIT_BANDWIDTH, .required = true,
	  .offset = OFF(memory_bw_Bps), .min = UNITS_MIN_BANDWIDTH_BPS, .max = UNITS_MAX_BANDWIDTH_BPS,
	  .help = "device memory bandwidth" },
	{ .key = "memory_efficiency", .type = SCHEMA_NUMBER,
	  .offset = OFF(memory_efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .help = "fraction of memory bandwidth that element-wise kernels reach (STREAM-like); "
		  "default by generation" },
	/* Default by generation (gpu.c): Gen3 x16 12 GB/s, Gen4 25, Gen5 50. */
	{ .key = "pcie_bandwidth", .type = SCHEMA_QUANTITY, .unit = UNIT_BANDWIDTH,
	  .offset = OFF(pcie_bandwidth_Bps), .min = UNITS_MIN_BANDWIDTH_BPS, .max = UNITS_MAX_BANDWIDTH_BPS,
	  .help = "GPU to host memory, effective, each way (PCIe, or NVLink-C2C on Grace superchips); "
		  "default by generation: Volta 12 GB/s (Gen3 x16), Ampere 25 (Gen4), Hopper, Blackwell "
		  "and CDNA3 50 (Gen5), 25 for an unspecified generation" },
	{ .key = "gemm_efficiency_max", .type = SCHEMA_NUMBER,
	  .offset = OFF(gemm_efficiency_max), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .help = "fraction of peak that large training GEMMs reach (parametric model); "
		  "default by generation" },
	{ .key = "gemm_overhead", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = OFF(gemm_overhead_s), .min = 0, .max = GPU_MAX_GEMM_OVERHEAD_S,
	  .help = "fixed cost per GEMM kernel: launch and wave tail (parametric model); "
		  "default by generation" },
	{ .key = "gemm_efficiency", .type = SCHEMA_CURVE,
	  .offset = OFF(gemm_efficiency), .min = 0, .min_exclusive = true, .max = 1,
	  .help = "measured curve [[GEMM FLOPs, fraction of peak], ...]; replaces the parametric model" },
	{ .key = "gemm_shape_efficiency", .type = SCHEMA_CURVE,
	  .offset = OFF(gemm_shape_efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .help = "measured factor by the smallest GEMM dimension [[elements, factor], ...]: "
		  "skinny GEMMs are slower than square ones of the same FLOPs" },
	{ .key = "attention_fwd_efficiency", .type = SCHEMA_NUMBER,
	  .offset = OFF(attention_fwd_efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .help = "fraction of peak that the flash-attention forward kernel reaches; default by generation" },
	{ .key = "attention_bwd_efficiency", .type = SCHEMA_NUMBER,
	  .offset = OFF(attention_bwd_efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .help = "fraction of peak that the flash-attention backward kernel reaches; default by generation" },
	{ .key = "flash_attention", .type = SCHEMA_ENUM, .offset = OFF(flash_attention),
	  .choices = gpu_flash_names,
	  .help = "whether plans on it use flash attention unless told otherwise (--flash-attention, "
		  "--no-flash-attention); default by generation: true from Ampere on, false on Volta" },
	{ .key = "attention_overhead", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = OFF(attention_overhead_s), .min = 0, .max = 1,
	  .help = "fixed cost of one attention kernel, the time to fill the GPU with tiles; "
		  "default by generation" },
	{ .key = "fa2_attention_speed", .type = SCHEMA_NUMBER,
	  .offset = OFF(fa2_attention_speed), .min = 0.05, .max = 1,
	  .help = "FlashAttention-2's throughput on this GPU as a fraction of the attention efficiencies "
		  "(its best kernel's), for frameworks that run FA2 (attention_kernel fa2, sdpa); default by "
		  "generation: 1 on Ampere, 0.52 on Hopper, 0.35 on Blackwell" },
	{ .key = "launch_overhead", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = OFF(launch_overhead_s), .min = 0, .max = 1,
	  .help = "fixed cost of one element-wise kernel (launch and tail); default by generation" },
	{ .key = "speed_variation", .type = SCHEMA_NUMBER,
	  .offset = OFF(speed_variation), .min = 0, .max = 0.5,
	  .help = "coefficient of variation of speed across GPUs of this model (silicon, power "
		  "management): a job waits for its slowest GPU; default by generation: 0.013 "
		  "(Sinha et al. SC22), 0 for an unspecified generation" },
	{ .key = "sm_count", .type = SCHEMA_INT, .offset = OFF(sm_count), .min = 0, .max = 4096,
	  .help = "streaming multiprocessors (compute units on AMD) that GEMM tiles run on, in waves: "
		  "a GEMM's partial last wave costs time; 0: waves not modelled; default by generation "
		  "(Volta 80, Ampere 108, Hopper 132, Blackwell 148, CDNA3 304)" },
	{ .key = "gemm_tile_m", .type = SCHEMA_INT, .offset = OFF(gemm_tile_m), .min = 16, .max = 1024,
	  .help = "rows of the largest CTA tile of the GEMM library (cuBLAS, CUTLASS); its transpose and "
		  "the square half tile are also tried; default 128" },
	{ .key = "gemm_tile_n", .type = SCHEMA_INT, .offset = OFF(gemm_tile_n), .min = 16, .max = 1024,
	  .help = "columns of that tile; default 256" },
	{ .key = "rated_power", .type = SCHEMA_QUANTITY, .unit = UNIT_POWER, .offset = OFF(rated_power_W),
	  .min = 0, .max = 1e5, .def = "0 W",
	  .help = "board power at which the peaks and the measured curves hold (the TDP); 0: not given, "
		  "no power model" },
	{ .key = "power_limit", .type = SCHEMA_QUANTITY, .unit = UNIT_POWER, .offset = OFF(power_limit_W),
	  .min = 0, .max = 1e5, .def = "0 W",
	  .help = "the board's power set point; below rated_power compute-bound kernels run at the "
		  "clock (power_limit / rated_power)^(1/3) of the rated one; 0: rated_power" },
	{ .key = "reserved_memory", .type = SCHEMA_QUANTITY, .unit = UNIT_SIZE,
	  .offset = OFF(reserved_bytes), .min = 0, .max = 1e18,
	  .def = "1 GiB", .help = "memory the model cannot use: CUDA context, NCCL and cuBLAS workspaces" },
	{ 0 },
};

static void
init_cb(void *obj)
{
	gpu_unset_defaults(obj);
}

/*
 * The floor of a measured gemm_efficiency point (x FLOPs, fraction y). A
 * flat UNITS_MIN_EFFICIENCY would refuse real data: a launch-bound 4 MFLOP
 * GEMM reaches 0.0002 of an H100's peak (gpus/h100-sxm5-80gb.yaml). The
 * curve replaces cluster_gemm_efficiency()'s parametric model, so it gets
 * that model's bounds: no point slower than the model at the lowest
 * gemm_efficiency_max and the highest gemm_overhead the schema accepts,
 *   y >= e t / (t + o),  t = x / (e peak),  e = UNITS_MIN_EFFICIENCY,
 *   o = GPU_MAX_GEMM_OVERHEAD_S;
 * i.e. the GEMM takes at most x / (e peak) + 1 s. A typo such as 1e-300
 * (10^298 s per GEMM) is refused at its own line and column.
 */
static bool
check_gemm_curve(const struct gpu *g, struct ytree *t, const char *prefix, struct plan_error *err)
{
	const struct curve *c = &g->gemm_efficiency;
	char path[64];

	snprintf(path, sizeof(path), "%sgemm_efficiency", prefix);
	for (int i = 0; i < c->n; i++) {
		double t_ideal = c->x[i] / (UNITS_MIN_EFFICIENCY * g->peak_flops);
		double floor_y = UNITS_MIN_EFFICIENCY * t_ideal / (t_ideal + GPU_MAX_GEMM_OVERHEAD_S);
		yaml_node_t *node;

		if (c->y[i] >= floor_y)
			continue;
		/* The point's own node; the curve may come from a base profile. */
		node = ytree_find_path(t, path);
		if (node && node->type == YAML_SEQUENCE_NODE &&
		    node->data.sequence.items.top - node->data.sequence.items.start > i)
			node = ytree_node(t, node->data.sequence.items.start[i]);
		return ytree_error(t, node, err,
				   "'%s': y at x = %g FLOPs must be at least %.3g (the parametric model at "
				   "gemm_efficiency_max %g and gemm_overhead %g s on this peak_flops), got %g",
				   path, c->x[i], floor_y, UNITS_MIN_EFFICIENCY, GPU_MAX_GEMM_OVERHEAD_S,
				   c->y[i]);
	}
	return true;
}

bool
gpu_check(const struct gpu *g, struct ytree *t, const char *prefix, struct plan_error *err)
{
	char path[64];

	if (!check_gemm_curve(g, t, prefix, err))
		return false;

	if (g->reserved_bytes >= g->memory_bytes) {
		snprintf(path, sizeof(path), "%sreserved_memory", prefix);
		return ytree_error(t, ytree_find_path(t, path), err,
				   "%s must be smaller than %smemory", path, prefix);
	}
	/* 0 means no fp8; a tiny rate would make fp8 times infinite. */
	if (g->peak_flops_fp8 > 0 && g->peak_flops_fp8 < UNITS_MIN_COMPUTE_FLOPS) {
		snprintf(path, sizeof(path), "%speak_flops_fp8", prefix);
		return ytree_error(t, ytree_find_path(t, path), err,
				   "'%s' must be 0 or at least %s, got %g FLOPS", path,
				   UNITS_MIN_COMPUTE_TEXT, g->peak_flops_fp8);
	}
	/* fp4 needs the fp8 path's casts and curve: a GPU with fp4 tensor
	 * cores has fp8 ones at no more than the fp4 rate (Blackwell: half). */
	if (g->peak_flops_fp4 > 0 && !(g->peak_flops_fp8 > 0 && g->peak_flops_fp4 >= g->peak_flops_fp8)) {
		snprintf(path, sizeof(path), "%speak_flops_fp4", prefix);
		return ytree_error(t, ytree_find_path(t, path), err,
				   "'%s' must be 0 or at least peak_flops_fp8 (%g TFLOPS), got %g TFLOPS", path,
				   g->peak_flops_fp8 / 1e12, g->peak_flops_fp4 / 1e12);
	}
	/* A power limit is a set point of the rated board: without the
	 * rated power it means nothing. */
	if (g->power_limit_W > 0 && !(g->rated_power_W > 0)) {
		snprintf(path, sizeof(path), "%spower_limit", prefix);
		return ytree_error(t, ytree_find_path(t, path), err,
				   "'%s' needs %srated_power, the power the peaks hold at", path, prefix);
	}
	if (g->power_limit_W > 0 && g->power_limit_W < 0.2 * g->rated_power_W) {
		snprintf(path, sizeof(path), "%spower_limit", prefix);
		return ytree_error(t, ytree_find_path(t, path), err,
				   "'%s' (%g W) is below a fifth of %srated_power (%g W): no GPU runs there", path,
				   g->power_limit_W, prefix, g->rated_power_W);
	}
	/* fp8 tensor cores are never slower than the 16-bit ones (twice as
	 * fast on Hopper, Blackwell and CDNA3). */
	if (g->peak_flops_fp8 > 0 && g->peak_flops_fp8 < g->peak_flops) {
		snprintf(path, sizeof(path), "%speak_flops_fp8", prefix);
		return ytree_error(t, ytree_find_path(t, path), err,
				   "'%s' must be 0 or at least peak_flops (%g TFLOPS), got %g TFLOPS", path,
				   g->peak_flops / 1e12, g->peak_flops_fp8 / 1e12);
	}
	return true;
}

static bool
finish_cb(void *obj, struct ytree *t, struct plan_error *err)
{
	gpu_fill_defaults(obj);
	return gpu_check(obj, t, "", err);
}

static const struct schema_profile gpu_profile = {
	gpu_schema, sizeof(struct gpu), init_cb, finish_cb,
};

bool
gpu_load_file(struct gpu *g, const char *path, struct plan_error *err)
{
	return schema_load(&gpu_profile, path, NULL, g, err);
}

bool
gpu_load_string(struct gpu *g, const char *name, const char *text, struct plan_error *err)
{
	return schema_load(&gpu_profile, name, text, g, err);
}

/* A GPU profile named at @node (a bundled name or a path), loaded into @g;
 * an error in the GPU file names that file, one in the name names @node. */
static bool
load_named(struct ytree *t, yaml_node_t *node, struct gpu *g, struct plan_error *err)
{
	const char *name = ytree_scalar(node);
	char path[PATH_MAX];
	struct plan_error why;

	if (!name || !name[0])
		return ytree_error(t, node, err, "'gpu' must name a GPU profile or be a mapping");
	plan_error_clear(&why);
	if (!profile_resolve(PROFILE_GPU, name, path, sizeof(path), &why))
		return ytree_error(t, node, err, "%s", why.message);
	return gpu_load_file(g, path, err);
}

bool
gpu_parse_ref(const struct schema_key *k, struct ytree *t, yaml_node_t *node, void *field,
	      struct plan_error *err)
{
	struct gpu *g = field;
	yaml_node_t *base;

	(void)k;
	if (node->type == YAML_SCALAR_NODE)
		return load_named(t, node, g, err);
	if (node->type != YAML_MAPPING_NODE)
		return ytree_error(t, node, err, "'gpu' must name a GPU profile or be a mapping");
	base = ytree_find(t, node, "base");
	if (base) {
		/* The base profile, then the keys given here over it. */
		return load_named(t, base, g, err) && schema_apply_over(gpu_schema, t, node, g, "base", err);
	}
	memset(g, 0, sizeof(*g));
	gpu_unset_defaults(g);
	if (!schema_apply(gpu_schema, t, node, g, err))
		return false;
	/* The cluster checks reserved_memory against memory (cluster_finish). */
	gpu_fill_defaults(g);
	return true;
}
