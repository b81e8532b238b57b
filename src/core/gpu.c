#include <stddef.h>

#include "plan/gpu.h"

const char *const gpu_generation_names[] = {
	"unspecified", "volta", "ampere", "hopper", "blackwell", "cdna3", NULL,
};

/*
 * What a GPU of each generation reaches when its profile gives only the
 * spec sheet. The "unspecified" row keeps the defaults that inline
 * cluster descriptions always had. The sources of the other rows are in
 * docs/research/gpu-data.md and in the bundled profiles under gpus/.
 */
struct gpu_defaults {
	double memory_efficiency;
	double gemm_efficiency_max;
	double gemm_overhead_s;
	double attention_fwd_efficiency;
	double attention_bwd_efficiency;
	double launch_overhead_s;
};

static const struct gpu_defaults defaults[GPU_GEN_COUNT] = {
	[GPU_GEN_UNSPECIFIED] = { 0.80, 0.75, 5e-6, 0.50, 0.40, 4e-6 },
	[GPU_GEN_VOLTA] = { 0.80, 0.75, 5e-6, 0.40, 0.30, 5e-6 },
	[GPU_GEN_AMPERE] = { 0.85, 0.75, 5e-6, 0.60, 0.45, 4e-6 },
	[GPU_GEN_HOPPER] = { 0.85, 0.70, 5e-6, 0.55, 0.40, 4e-6 },
	[GPU_GEN_BLACKWELL] = { 0.85, 0.65, 5e-6, 0.50, 0.35, 4e-6 },
	[GPU_GEN_CDNA3] = { 0.80, 0.55, 6e-6, 0.40, 0.25, 5e-6 },
};

static void
fill(double *v, double def)
{
	if (*v == GPU_UNSET)
		*v = def;
}

void
gpu_unset_defaults(struct gpu *g)
{
	g->memory_efficiency = g->gemm_efficiency_max = g->gemm_overhead_s = GPU_UNSET;
	g->attention_fwd_efficiency = g->attention_bwd_efficiency = GPU_UNSET;
	g->launch_overhead_s = GPU_UNSET;
}

void
gpu_fill_defaults(struct gpu *g)
{
	const struct gpu_defaults *d = &defaults[g->generation >= 0 && g->generation < GPU_GEN_COUNT ?
						 g->generation : GPU_GEN_UNSPECIFIED];

	fill(&g->memory_efficiency, d->memory_efficiency);
	fill(&g->gemm_efficiency_max, d->gemm_efficiency_max);
	fill(&g->gemm_overhead_s, d->gemm_overhead_s);
	fill(&g->attention_fwd_efficiency, d->attention_fwd_efficiency);
	fill(&g->attention_bwd_efficiency, d->attention_bwd_efficiency);
	fill(&g->launch_overhead_s, d->launch_overhead_s);
}

bool
gpu_is_calibrated(const struct gpu *g)
{
	return g->calibration[0] != '\0';
}
