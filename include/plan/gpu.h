/*
 * A GPU model: its spec sheet (peaks, memory) and what it really reaches
 * (GEMM efficiency by size and shape, attention kernels, element-wise
 * bandwidth, launch overhead). Bundled GPU profiles live in gpus/; a
 * cluster names one or describes its GPU inline.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "plan/curve.h"

/** GPU generations: the defaults of a GPU given only by its spec sheet. */
enum gpu_generation {
	GPU_GEN_UNSPECIFIED, /**< the defaults plan-cli always had (inline profiles) */
	GPU_GEN_VOLTA,
	GPU_GEN_AMPERE,
	GPU_GEN_HOPPER,
	GPU_GEN_BLACKWELL,
	GPU_GEN_CDNA3,
	GPU_GEN_COUNT,
};

/** Names of enum gpu_generation as written in profiles. */
extern const char *const gpu_generation_names[];

/**
 * The host link of a GPU whose generation is not given and of a GPU made
 * in code with none: PCIe Gen4 x16's effective rate (gpu.c's defaults).
 */
#define GPU_DEFAULT_PCIE_BPS 25e9

/** A value not given in a profile, to be filled from the generation. */
#define GPU_UNSET (-1.0)

struct gpu {
	char name[64];              /**< GPU model as printed ("H100-SXM5-80GB") */
	char description[256];
	char calibration[256];      /**< where the curves come from; "" for a spec-sheet GPU */
	int generation;             /**< enum gpu_generation */
	double peak_flops;          /**< dense 16-bit (bf16/fp16) tensor FLOP/s */
	double peak_flops_fp8;      /**< dense fp8 tensor FLOP/s; 0 when the GPU has none */
	double peak_flops_fp4;      /**< dense NVFP4 tensor FLOP/s; 0 when the GPU has none */
	double fp8_gemm_ratio;      /**< an fp8 GEMM's efficiency over a bf16 GEMM's of the same duration */
	double fp8_fast_accum_speedup; /**< an fp8 GEMM with fast accumulation over one promoting to fp32 */
	double memory_bytes;
	double memory_bw_Bps;       /**< HBM bandwidth */
	double memory_efficiency;   /**< achievable fraction of memory_bw_Bps */
	double pcie_bandwidth_Bps;  /**< GPU to host memory, effective, each way (PCIe or NVLink-C2C) */
	double gemm_efficiency_max; /**< large-GEMM fraction of peak (parametric model) */
	double gemm_overhead_s;     /**< fixed cost per GEMM kernel (parametric model) */
	struct curve gemm_efficiency;       /**< measured curve: GEMM FLOPs -> fraction of peak */
	struct curve gemm_shape_efficiency; /**< smallest GEMM dimension -> factor on the curve */
	double attention_fwd_efficiency;    /**< flash-attention forward, fraction of peak */
	double attention_bwd_efficiency;    /**< flash-attention backward, fraction of peak */
	double attention_overhead_s;        /**< fixed cost of one attention kernel (filling the GPU) */
	double fa2_attention_speed;         /**< FlashAttention-2's throughput here, as a fraction of the
					       attention efficiencies above (the GPU's best kernel's) */
	double launch_overhead_s;   /**< fixed cost of one non-GEMM kernel */
	double speed_variation;     /**< coefficient of variation of speed across GPUs of this model */
	double reserved_bytes;      /**< memory not available to the model (context, workspaces) */
	int flash_attention;        /**< 1: runs FlashAttention, so plans use it unless told not to;
				       0: it does not; GPU_FLASH_UNSET until gpu_fill_defaults */
	/* GEMM waves (cluster_gemm_wave_factor); 0 SMs: not modelled. */
	int sm_count;               /**< streaming multiprocessors (CUs on AMD) */
	int gemm_tile_m;            /**< rows of the largest CTA tile the GEMM library uses */
	int gemm_tile_n;            /**< columns of that tile */
	/* Clocks under a power limit (gpu_clock_factor); 0: not given. */
	double rated_power_W;       /**< board power at which the peaks and curves hold */
	double power_limit_W;       /**< the board's power set point; 0: rated_power */
};

/** An integer value not given in a profile (sm_count, gemm_tile_m, gemm_tile_n). */
#define GPU_INT_UNSET (-1)

#define GPU_FLASH_UNSET (-1)

/** Values of the flash_attention key, indexed by struct gpu's flash_attention. */
extern const char *const gpu_flash_names[];

/**
 * Fill every value left GPU_UNSET from the defaults of @g's generation
 * (a spec-sheet GPU still gets sensible efficiencies). Values that were
 * given are kept.
 */
void gpu_fill_defaults(struct gpu *g);

/** Mark the values that have generation defaults as not given (GPU_UNSET). */
void gpu_unset_defaults(struct gpu *g);

/**
 * Whether a plan on @g uses flash attention: @given when a user, a CSV
 * cell or a study said so (0 or 1), else (-1) the GPU's flash_attention.
 */
bool gpu_plan_flash_attention(const struct gpu *g, int given);

/**
 * What the slowest of @gpus GPUs of model @g costs a synchronous job: 1 +
 * speed_variation x the expected largest of @gpus standard normal
 * values (Blom's approximation). 1 for one GPU or no variation.
 */
double gpu_pace_factor(const struct gpu *g, int gpus);

/** The expected largest of @n independent standard normal values (Blom 1958). */
double gpu_expected_max_normal(double n);

/**
 * The sustained clock of compute-bound kernels at the board's power
 * limit over the clock at its rated power, the one the peaks and the
 * measured curves hold at: (power_limit / rated_power)^(1/3) below the
 * rated power, 1 at or above it and where either is not given.
 */
double gpu_clock_factor(const struct gpu *g);

/**
 * Hold @g at the board power limit @watts (predict's --power-limit,
 * sweep's power_limit): false, with @why saying so after the caller's
 * name for the value, where @g gives no rated_power or @watts is below a
 * fifth of it (the profiles' own bound, gpu_load.c gpu_check).
 */
bool gpu_set_power_limit(struct gpu *g, double watts, char *why, size_t size);

/** Whether @g carries measured curves or calibrated values (a calibration source). */
bool gpu_is_calibrated(const struct gpu *g);
