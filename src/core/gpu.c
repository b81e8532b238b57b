#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include <gsl/gsl_cdf.h>

#include "plan/gpu.h"

const char *const gpu_generation_names[] = {
	"unspecified", "volta", "ampere", "hopper", "blackwell", "cdna3", NULL,
};

const char *const gpu_flash_names[] = { "false", "true", NULL };

/*
 * What a GPU of each generation reaches when its profile gives only the
 * spec sheet. The "unspecified" row keeps the defaults that inline
 * cluster descriptions always had. The sources of the other rows are in
 * docs/research/gpu-data.md and in the bundled profiles under gpus/.
 */
struct gpu_defaults {
	double memory_efficiency;
	double pcie_bandwidth_Bps;
	double gemm_efficiency_max;
	double gemm_overhead_s;
	double attention_fwd_efficiency;
	double attention_bwd_efficiency;
	double attention_overhead_s;
	double launch_overhead_s;
	double fp8_gemm_ratio;
	double fp8_fast_accum_speedup;
	int flash_attention;
	double fa2_attention_speed;
	double speed_variation;
	int sm_count;
	int gemm_tile_m, gemm_tile_n;
};

/*
 * Rows: memory efficiency, GEMM plateau, GEMM overhead, causal flash
 * attention forward and backward (fractions of peak on the FLOPs the
 * kernel executes), attention fixed cost, element-wise launch cost.
 * - Element-wise bandwidth: 0.86-0.90 measured on V100, 0.82-0.84 on
 *   A100, 0.89-0.92 on H100/H200; B200 0.67 (SimuMax's B200 table);
 *   MI300X 0.75 (BabelStream on MI300A, weak).
 * - GEMM plateaus on training shapes: A100 0.75, H100/H200 0.69 (this
 *   project's H200 measurement), B200 0.48 on the largest (SimuMax's B200
 *   table; 0.63 at 4096^3 in XLA's), MI300X 0.50 (Bekman's MAMF best
 *   shape 0.51); Volta 0.73 derived (V100 PCIe 8192^3: 0.90 of peak, x
 *   0.82, the ratio of training shapes to the best shape on the H200).
 * - Attention: FlashAttention-2 on A100 (0.55/0.47 causal), FlashAttention-3
 *   on H100 (0.57/0.54), the B200 as measured by SimuMax (0.59/0.37); Volta
 *   has no flash kernel (plan-cli then times the unfused GEMMs anyway);
 *   MI300X not sourced (0.40/0.30, an estimate). The 75 us fixed cost per
 *   attention call was fitted on the B200's 8-128 head points; it is the
 *   time to fill the GPU with tiles and scales little with the GPU's speed.
 *   The Blackwell row is the B200 under cuDNN 9.10: NVIDIA's cudnn-frontend
 *   benchmark (cuDNN 9.10.2, B200, 128 heads, head dim 128, causal): the
 *   predicted time is 0.89-1.02 of the measured forward and 1.01-1.34 of
 *   the backward at seq 4k-16k (the backward's gain with the sequence is
 *   not modelled); the GB200 and GB300 under cuDNN 9.17 run faster and
 *   set their own (gpus/).
 * - Launch: 2-5 us per kernel on the GPU (torchao's roofline, XLA's table).
 * - fp8 against bf16 GEMMs (best shapes, Bekman's MAMF table): H100 0.71
 *   against 0.80, H200 0.73 against 0.80 (0.9, Hopper's value until the
 *   measurement below); B200 0.763 against 0.776,
 *   and XLA's sm_100 table 0.614 against 0.630 at 4096^3 (0.97). Volta and
 *   Ampere have no fp8; MI300X not sourced (0.9, Hopper's former value). Those fp8
 *   figures are torch._scaled_mm's default, use_fast_accum=False
 *   (mamf-finder.py), the split accumulator that promotes partial sums
 *   to fp32. Hopper 0.88: held at the 700 W cap on an H200 (2026-12-04,
 *   docs/measured/h200-2026-12-04), fp8 draws more power than bf16 and
 *   the clock drops further (1351 against 1424 MHz): 8192 x 14336 x 4096
 *   held 35 s at 0.584 of 1979 TFLOPS against bf16's 0.665 of 989
 *   (0.878), and the median of 11 training shapes 0.600 against 0.680
 *   (0.882); MAMF's short best-shape bursts gave 0.89 (H100) and 0.91
 *   (H200).
 * - fp8 fast accumulation (cuBLASLt CUBLASLT_MATMUL_DESC_FAST_ACCUM: "might
 *   be faster ... intermediate results will not periodically be promoted
 *   to a higher precision"): on Hopper 1.1x to 1.2x over the split
 *   accumulator (pytorch/ao#2377, H100) - 1.1, the band's lower end;
 *   Blackwell's tcgen05 has no fast-accumulation mode ("there is no
 *   fastAccuMode for sm100", NVIDIA/TransformerEngine#2748): 1.0; the
 *   others have no fp8 or are not sourced (1.0).
 * - Flash attention by default: FlashAttention needs Ampere or newer
 *   ("FlashAttention-2 currently supports Ampere, Ada, or Hopper GPUs";
 *   FlashAttention-1 ran on Turing and Ampere, never on Volta: Dao et
 *   al., flash-attention README), FlashAttention-3 targets Hopper, FA4 and
 *   cuDNN's fused attention Blackwell, and ROCm's CK/Triton flash
 *   attention MI300X; Volta has none. A GPU whose generation is not
 *   given is not assumed to have it.
 * - FlashAttention-2 against the profile's kernel (frameworks that run FA2
 *   everywhere: attention_kernel fa2 or sdpa): the same kernel on Ampere
 *   (1); on Hopper PyTorch SDPA's FA2 backend reached 329 TFLOP/s where
 *   cuDNN reached 631 and FA3 632 on one H100, (1, 24, 4608, 128)
 *   (pytorch/pytorch#142132): 0.52; on the B200 flash-attn 2.7.4 took
 *   1.589 + 4.774 ms forward and backward at head dim 128, seq 4096, 128
 *   heads, causal, where the B200 profile's kernel takes 0.489 + 1.726 ms
 *   (NVIDIA/cudnn-frontend@9793df5, B200 bf16 results; cuDNN 9.10.2 itself
 *   0.552 + 1.715): 0.35; Volta has no FA2, and on CDNA3 the profile is
 *   ROCm's own flash kernel (1).
 * - Speed variation across GPUs of one model (manufacturing variability
 *   and power management): Sinha et al., "Not All GPUs Are Created
 *   Equal", SC22 (arXiv:2208.11035), measured over 90 % of the GPUs of
 *   Summit, Vortex, Frontera, Longhorn and Corona (V100 on Summit, Vortex
 *   and Longhorn, AMD MI60 on Corona) on SGEMM, ResNet-50, BERT and
 *   other applications: "8 % (max
 *   22 %) average performance variation" with the SKU the same, outliers
 *   up to 1.5x slower than the median. Read as the +-3 sigma spread of a
 *   normal distribution, outliers aside: sigma = 8 % / 6 = 1.3 %. Only
 *   Volta and CDNA-class GPUs were measured; the same value is taken for
 *   every generation (no fleet study of A100, H100 or B200 was found).
 *   The unspecified row keeps 0, as inline clusters always had.
 * - SMs (GEMM waves, cluster_gemm_wave_factor): V100 80 (Tesla V100
 *   whitepaper), A100 108 (A100 whitepaper), H100 SXM5 132 (H100
 *   whitepaper; the PCIe card has 114), B200 148 (the multiprocessor
 *   count CUDA reports on a B200), MI300X 304 CUs (AMD CDNA3 whitepaper).
 *   The unspecified row has none: no waves, as inline clusters always had.
 * - CTA tile: 128 x 256 (and 256 x 128, and the 128 x 128 half tile)
 *   on every generation: NVIDIA's Matrix Multiplication Background
 *   User's Guide (DU-09799-001, Sec. 2.3 "Typical tile dimensions in
 *   cuBLAS": 256x128 and 128x256 the most efficient, 128x128 next) and
 *   CUTLASS 3's Hopper/Blackwell defaults (128x256x64 warp-specialised
 *   kernels; Blackwell's 2-SM 256x256 UMMA tile is 128x256 per SM).
 *   CDNA3 not sourced (the same, an estimate).
 * - Host link (GPU to host memory, each way, effective: checkpoint copies,
 *   activation offloading, the data loader's mask; framework-data.md Sec.
 *   34): Volta PCIe Gen3 x16 (15.75 GB/s raw), 12 GB/s measured on V100
 *   (BaM's authors, ZaidQureshi/bam#54); Ampere Gen4 x16 (31.5 raw), A100
 *   host to device 25.13 GB/s (nvbandwidth v0.8, NVIDIA/nvbandwidth#42):
 *   25; Hopper Gen5 x16 (63 raw), H100 device to host 52.77 GB/s on all
 *   eight GPUs of a node (nvbandwidth device_to_host_memcpy_sm,
 *   NVIDIA/nvbandwidth#24): 50; Blackwell B200 and CDNA3 MI300X are Gen5
 *   x16 hosts too (DGX B200 and MI300X datasheets), not measured here: 50,
 *   as Hopper. The Grace-Blackwell GPUs' NVLink-C2C sets its own
 *   (gpus/gb200.yaml). The unspecified row keeps the 25 GB/s clusters
 *   always defaulted to.
 */
static const struct gpu_defaults defaults[GPU_GEN_COUNT] = {
	[GPU_GEN_UNSPECIFIED] = {
		.pcie_bandwidth_Bps = GPU_DEFAULT_PCIE_BPS,
		.memory_efficiency = 0.8, .gemm_efficiency_max = 0.75, .gemm_overhead_s = 5e-6,
		.attention_fwd_efficiency = 0.5, .attention_bwd_efficiency = 0.4,
		.attention_overhead_s = 75e-6, .launch_overhead_s = 3e-6, .fp8_gemm_ratio = 0.9,
		.fp8_fast_accum_speedup = 1.0,
		.flash_attention = 0, .fa2_attention_speed = 1.0, .speed_variation = 0.0,
		.sm_count = 0, .gemm_tile_m = 128, .gemm_tile_n = 256,
	},
	[GPU_GEN_VOLTA] = {
		.pcie_bandwidth_Bps = 12e9,
		.memory_efficiency = 0.88, .gemm_efficiency_max = 0.73, .gemm_overhead_s = 5e-6,
		.attention_fwd_efficiency = 0.4, .attention_bwd_efficiency = 0.3,
		.attention_overhead_s = 75e-6, .launch_overhead_s = 3e-6, .fp8_gemm_ratio = 0.9,
		.fp8_fast_accum_speedup = 1.0,
		.flash_attention = 0, .fa2_attention_speed = 1.0, .speed_variation = 0.013,
		.sm_count = 80, .gemm_tile_m = 128, .gemm_tile_n = 256,
	},
	[GPU_GEN_AMPERE] = {
		.pcie_bandwidth_Bps = 25e9,
		.memory_efficiency = 0.84, .gemm_efficiency_max = 0.75, .gemm_overhead_s = 5e-6,
		.attention_fwd_efficiency = 0.55, .attention_bwd_efficiency = 0.47,
		.attention_overhead_s = 75e-6, .launch_overhead_s = 3e-6, .fp8_gemm_ratio = 0.9,
		.fp8_fast_accum_speedup = 1.0,
		.flash_attention = 1, .fa2_attention_speed = 1.0, .speed_variation = 0.013,
		.sm_count = 108, .gemm_tile_m = 128, .gemm_tile_n = 256,
	},
	[GPU_GEN_HOPPER] = {
		.pcie_bandwidth_Bps = 50e9,
		.memory_efficiency = 0.9, .gemm_efficiency_max = 0.69, .gemm_overhead_s = 5e-6,
		.attention_fwd_efficiency = 0.57, .attention_bwd_efficiency = 0.54,
		.attention_overhead_s = 75e-6, .launch_overhead_s = 3e-6, .fp8_gemm_ratio = 0.88,
		.fp8_fast_accum_speedup = 1.1,
		.flash_attention = 1, .fa2_attention_speed = 0.52, .speed_variation = 0.013,
		.sm_count = 132, .gemm_tile_m = 128, .gemm_tile_n = 256,
	},
	[GPU_GEN_BLACKWELL] = {
		.pcie_bandwidth_Bps = 50e9,
		.memory_efficiency = 0.67, .gemm_efficiency_max = 0.48, .gemm_overhead_s = 5e-6,
		.attention_fwd_efficiency = 0.59, .attention_bwd_efficiency = 0.37,
		.attention_overhead_s = 75e-6, .launch_overhead_s = 3e-6, .fp8_gemm_ratio = 0.97,
		.fp8_fast_accum_speedup = 1.0,
		.flash_attention = 1, .fa2_attention_speed = 0.35, .speed_variation = 0.013,
		.sm_count = 148, .gemm_tile_m = 128, .gemm_tile_n = 256,
	},
	[GPU_GEN_CDNA3] = {
		.pcie_bandwidth_Bps = 50e9,
		.memory_efficiency = 0.75, .gemm_efficiency_max = 0.5, .gemm_overhead_s = 5e-6,
		.attention_fwd_efficiency = 0.4, .attention_bwd_efficiency = 0.3,
		.attention_overhead_s = 75e-6, .launch_overhead_s = 3e-6, .fp8_gemm_ratio = 0.9,
		.fp8_fast_accum_speedup = 1.0,
		.flash_attention = 1, .fa2_attention_speed = 1.0, .speed_variation = 0.013,
		.sm_count = 304, .gemm_tile_m = 128, .gemm_tile_n = 256,
	},
};
_Static_assert(sizeof(defaults) / sizeof(defaults[0]) == GPU_GEN_COUNT, "a defaults row per generation");

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
	g->pcie_bandwidth_Bps = GPU_UNSET;
	g->attention_fwd_efficiency = g->attention_bwd_efficiency = GPU_UNSET;
	g->attention_overhead_s = GPU_UNSET;
	g->fa2_attention_speed = GPU_UNSET;
	g->fp8_gemm_ratio = GPU_UNSET;
	g->fp8_fast_accum_speedup = GPU_UNSET;
	g->launch_overhead_s = GPU_UNSET;
	g->speed_variation = GPU_UNSET;
	g->flash_attention = GPU_FLASH_UNSET;
	g->sm_count = g->gemm_tile_m = g->gemm_tile_n = GPU_INT_UNSET;
}

void
gpu_fill_defaults(struct gpu *g)
{
	const struct gpu_defaults *d = &defaults[g->generation >= 0 && g->generation < GPU_GEN_COUNT ?
						 g->generation : GPU_GEN_UNSPECIFIED];

	fill(&g->memory_efficiency, d->memory_efficiency);
	fill(&g->pcie_bandwidth_Bps, d->pcie_bandwidth_Bps);
	fill(&g->gemm_efficiency_max, d->gemm_efficiency_max);
	fill(&g->gemm_overhead_s, d->gemm_overhead_s);
	fill(&g->attention_fwd_efficiency, d->attention_fwd_efficiency);
	fill(&g->attention_bwd_efficiency, d->attention_bwd_efficiency);
	fill(&g->attention_overhead_s, d->attention_overhead_s);
	fill(&g->fa2_attention_speed, d->fa2_attention_speed);
	fill(&g->fp8_gemm_ratio, d->fp8_gemm_ratio);
	fill(&g->fp8_fast_accum_speedup, d->fp8_fast_accum_speedup);
	fill(&g->launch_overhead_s, d->launch_overhead_s);
	fill(&g->speed_variation, d->speed_variation);
	if (g->flash_attention == GPU_FLASH_UNSET)
		g->flash_attention = d->flash_attention;
	if (g->sm_count == GPU_INT_UNSET)
		g->sm_count = d->sm_count;
	if (g->gemm_tile_m == GPU_INT_UNSET)
		g->gemm_tile_m = d->gemm_tile_m;
	if (g->gemm_tile_n == GPU_INT_UNSET)
		g->gemm_tile_n = d->gemm_tile_n;
}

/*
 * A GPU held under its rated board power runs its compute-bound kernels
 * at a lower sustained clock. CMOS dynamic power is C V^2 f, and across
 * the DVFS range the voltage rises about linearly with the clock, so the
 * power of a kernel that keeps the tensor cores busy grows about as f^3
 * and the clock the limit allows as the cube root of the power (static
 * power and memory power neglected). Checked against NVIDIA's own
 * variants of one die: the H100 NVL (400 W, 132 SMs) is specified at 835
 * dense bf16 TFLOPS against the SXM5's 989 at 700 W, 0.844 where
 * (400/700)^(1/3) gives 0.830. Above the rated power the clock stays the
 * rated one (boost headroom is not modelled: a faster part has its own
 * profile, as the GB200 at 1200 W). The spec-sheet peak (MFU's
 * denominator) is unchanged; the time of compute-bound work is scaled.
 */
double
gpu_clock_factor(const struct gpu *g)
{
	if (!(g->rated_power_W > 0) || !(g->power_limit_W > 0) || g->power_limit_W >= g->rated_power_W)
		return 1.0;
	return cbrt(g->power_limit_W / g->rated_power_W);
}

bool
gpu_set_power_limit(struct gpu *g, double watts, char *why, size_t size)
{
	if (!(g->rated_power_W > 0)) {
		snprintf(why, size, "needs the GPU's rated_power, the power its peaks hold at: GPU profile '%s' sets none",
			 g->name);
		return false;
	}
	if (watts < 0.2 * g->rated_power_W) {
		snprintf(why, size, "%g W is below a fifth of GPU '%s''s rated_power (%g W): no GPU runs there", watts,
			 g->name, g->rated_power_W);
		return false;
	}
	g->power_limit_W = watts;
	return true;
}

/*
 * Blom's approximation (G. Blom, Statistical Estimates and Transformed
 * Beta-Variables, 1958) of the expected largest of n standard normal
 * values: Phi^-1((n - 0.375) / (n + 0.25)). Against the exact values
 * (Harter 1961: 0.5642 for n = 2, 1.5388 for 10, 2.5076 for 100, 3.2414
 * for 1000) it is 4.5 % high at n = 2, 0.5 % at 10 and 0.4 % low at 100
 * and 1000: at most 3e-4 on the pace factor; 0 for n = 1.
 */
double
gpu_expected_max_normal(double n)
{
	if (!(n > 1.0))
		return 0.0;
	return gsl_cdf_ugaussian_Pinv((n - 0.375) / (n + 0.25));
}

/*
 * A synchronous job waits for its slowest GPU at every collective, and
 * a GPU that is slow from its silicon or its power management stays
 * slow: each iteration's GPU work takes about the expected largest of
 * the GPUs' times, not the typical one a single-GPU benchmark measures.
 */
double
gpu_pace_factor(const struct gpu *g, int gpus)
{
	if (g->speed_variation <= 0.0 || gpus <= 1)
		return 1.0;
	return 1.0 + g->speed_variation * gpu_expected_max_normal(gpus);
}

bool
gpu_plan_flash_attention(const struct gpu *g, int given)
{
	return given >= 0 ? given != 0 : g->flash_attention == 1;
}

bool
gpu_is_calibrated(const struct gpu *g)
{
	return g->calibration[0] != '\0';
}
