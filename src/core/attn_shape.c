#include <math.h>
#include <stddef.h>

#include "plan/attn_shape.h"
#include "plan/plan.h"

/*
 * Head-dim padding: a flash kernel is compiled for a few head dims and a
 * call runs the smallest one that holds its own, the extra columns zero
 * but multiplied all the same.
 * - FlashAttention-2 (csrc/flash_attn/flash_api.cpp, v2.x: head_size_rounded
 *   = head_size <= 192 ? round_multiple(head_size, 32) : 256; the
 *   HEADDIM_SWITCH of static_switch.h dispatches 32, 64, 96, 128, 160,
 *   192, 256): multiples of 32 up to 192, then 256.
 * - FlashAttention-3 (hopper/, Shah et al. 2024): 64, 96, 128, 192, 256.
 * - cuDNN's fused attention (and what runs on Blackwell and CDNA3): no
 *   table of sizes is published; Transformer Engine only asks for a head
 *   dim that is a multiple of 8. Taken as padded to the bf16 MMA's K step,
 *   16 (PTX mma.m16n8k16), the least any tensor-core kernel can do.
 * - llm-foundry's Triton kernel (flash_attn_triton.py: BLOCK_HEADDIM =
 *   max(next_power_of_2(d), 16)) is declared fa2 by its framework profile;
 *   it pads further than FA2 at 96, 160 and 192 (to 128, 256, 256), which
 *   no MPT model has (64 and 128): not modelled apart.
 * Above 256 no kernel exists; the head dim is taken as it is.
 */
static double
pad_fa2(double d)
{
	if (d > 256.0)
		return d;
	if (d > 192.0)
		return 256.0;
	return fmax(32.0, ceil(d / 32.0) * 32.0);
}

static double
pad_fa3(double d)
{
	static const double sizes[] = { 64.0, 96.0, 128.0, 192.0, 256.0 };

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (d <= sizes[i])
			return sizes[i];
	return d;
}

static double
pad_mma(double d)
{
	return ceil(d / 16.0) * 16.0;
}

double
attn_shape_padded_head_dim(int kernel, enum gpu_generation gen, double d)
{
	switch (kernel) {
	case PLAN_ATTN_FA2:
		return pad_fa2(d);
	case PLAN_ATTN_FA3:
		return pad_fa3(d);
	case PLAN_ATTN_CUDNN:
		return pad_mma(d);
	case PLAN_ATTN_SDPA: /* torchtitan's SDPA: cuDNN's on Blackwell, FA2 elsewhere (compute.c) */
		return gen == GPU_GEN_BLACKWELL ? pad_mma(d) : pad_fa2(d);
	default: /* the profile's own: FA2 on Ampere, FA3 on Hopper, cuDNN's on Blackwell (gpus/) */
		return gen == GPU_GEN_AMPERE ? pad_fa2(d) : gen == GPU_GEN_HOPPER ? pad_fa3(d) : pad_mma(d);
	}
}

/*
 * Every score costs one exponential (the forward's softmax; the backward
 * recomputes P = exp(S - LSE)) on the special-function units: 16 a clock
 * per SM on compute capability 8.0 and 9.0 (CUDA C++ Programming Guide,
 * "Arithmetic Instructions" throughput table: exp2), and on Blackwell
 * (FlashAttention-4, Zadouri et al. 2025, and Together AI's write-up: the
 * exponential units did not grow while the tensor cores doubled). Dense
 * bf16 tensor-core FLOPs per SM a clock: A100 1024 FMA (4 tensor cores of
 * 256: A100 whitepaper; 108 SMs x 2048 x 1.41 GHz = 312 TFLOPS), H100
 * twice that (989 TFLOPS at 1.83 GHz over 132 SMs; the FlashAttention-3
 * paper, Sec. 3: "989 TFLOPS of FP16 matmul but only 3.9 TFLOPS of
 * special functions", 254 to 1), B200 twice again (2250 TFLOPS over 148
 * SMs at 1.86 GHz: 8180). So the tensor cores do 128, 256 and 512 FLOPs
 * in one exponential's time. No figure for Volta (no flash kernel) or
 * CDNA3 was found.
 */
double
attn_shape_flops_per_exp(enum gpu_generation gen)
{
	switch (gen) {
	case GPU_GEN_AMPERE:
		return 2048.0 / 16.0;
	case GPU_GEN_HOPPER:
		return 4096.0 / 16.0;
	case GPU_GEN_BLACKWELL:
		return 8192.0 / 16.0;
	default:
		return 0.0;
	}
}

/*
 * A tile's matrix products and its exponentials are taken as serialised
 * (the product needs the exponentials of the previous tile; FA3's
 * ping-pong overlaps them only across warpgroups): a score costs its
 * executed tensor FLOPs plus r FLOPs' time for its exponential. Checked
 * against the papers' head-dim pairs: H100 FA3 forward, non-causal, hdim
 * 64 / hdim 128 at seq 2k-8k = 460 / 625, 476 / 638, 496 / 646 TFLOP/s
 * (0.74-0.77; docs/research/gpu-data.md, S-fa3), predicted (512 + 256) /
 * 512 over (256 + 256) / 256 = 0.75; FA4 on Blackwell, hdim 64 / 128 at
 * 2k-8k, 1167 / 1706, 1213 / 1796, 1229 / 1837 (0.67-0.68;
 * Dao-AILab/flash-attention#2605), predicted (512 + 512) / 512 over
 * (256 + 512) / 256 = 0.67. A100: predicted 0.83 (no transcribed figure).
 */
double
attn_shape_score_cost(double executed, double counted, double r)
{
	return counted > 0.0 ? (executed + r) / counted : 1.0;
}

/*
 * Above the reference head dim the exponentials' share shrinks further,
 * but the kernels gain far less than that would say: H100 FA3 causal
 * forward hdim 256 against 128 at 2k-8k 537 / 521, 612 / 579, 628 / 602
 * (1.03-1.06; S-fa3), FA4 hdim 192 against 128 at seq 8k 1555.7 / 1534.8
 * non-causal, 1494.1 / 1418.1 causal (1.01-1.05; Dao-AILab/flash-attention
 * #2270, #2280), where (768 + 512) / 768 over (512 + 512) / 512 would give
 * 1.2: register and shared-memory limits take over. So a pass runs at the
 * reference efficiency from the reference's executed FLOPs per score
 * (@ref) up, only its padding counted.
 */
static double
pass_factor(double executed, double counted, double ref, double r)
{
	double e = fmin(executed, ref);

	return executed / counted * attn_shape_score_cost(e, e, r) / attn_shape_score_cost(ref, ref, r);
}

/*
 * A causal kernel skips the tiles above the diagonal but computes the
 * diagonal's whole and masks half of each (FlashAttention-2/-3 forward:
 * query tiles of kBlockM = 128 on sm80/sm90 at head dim 128; backward: key
 * tiles of kBlockN = 128; llm-foundry's Triton kernel BLOCK = 128). With n
 * = s / 128 tiles a side it computes n (n + 1) / 2 tiles, (n + 1) / n of
 * the s^2 / 2 pairs the FLOP count assumes.
 */
double
attn_shape_causal_tiles(double seq, double tile)
{
	/* (n + 1) / n = 1 + tile / s; a sequence within one tile computes
	 * its whole square, twice the triangle. */
	if (seq <= 0.0)
		return 1.0;
	return fmin(2.0, 1.0 + tile / seq);
}

/*
 * attnseq: the diagonal alone is a third to a half of what a causal
 * kernel loses at short sequences. Each CTA of a flash kernel owns one
 * row of tiles (a query tile forward, a key tile backward) and pays for it
 * once, whatever its length: loading its Q (K, V) tile, filling the
 * pipeline, the epilogue (O and LSE; dK and dV), and backward the
 * separate dO.O and dQ conversion kernels. Worth k tiles of work a row, a
 * call computes n (n + 1) / 2 + k n tiles, 1 + (1 + 2k) tile / s of the
 * triangle: the diagonal's form with a wider "span" of (1 + 2k) tile
 * tokens. The span is fitted to NVIDIA's kernel benchmarks only
 * (NVIDIA/cudnn-frontend benchmark/, docs/research/gpu-data.md "attnseq":
 * causal, head dim 128, seq 1k-32k, the time less the profile's per-call
 * attention_overhead, anchored at seq 4096), by the least mean |log| of
 * the time ratio:
 * - Hopper forward: 128, the diagonal alone (H200, cuDNN 9.1 and 9.3-9.4,
 *   2024: best fit 0, i.e. no loss beyond the diagonal; FA2 192).
 * - Hopper backward, cuDNN (and FA3, the same sm90 warp-specialised
 *   design; no FA3 causal backward curve was found): 416 (cuDNN 9.1 352,
 *   9.3-9.4 432; cuDNN 9.19.1 of 2026 784).
 * - Hopper backward, FA2 (PyTorch SDPA's flash backend on the same H200,
 *   2024): 1184 (9.1 1184, 9.3-9.4 1264).
 * - Blackwell, cuDNN (GB200 and GB300 cuDNN 9.17.0, GB200 9.19.1, the
 *   kernel time; the B200's 9.10.2 and 9.13.1 series are CUDA-event times
 *   with a host floor of 0.15 ms forward, 0.5 ms backward at seq <= 1k and
 *   were not fitted): forward 704 (736, 576, 800), backward 1344 (1296,
 *   1456, 1248).
 * - Blackwell, FA2 (flash-attn 2.7.4 on the B200, cuDNN 9.10.2's run, seq
 *   2k-32k): forward 1072, backward 1264.
 * - Ampere: no kernel benchmark by sequence; the diagonal alone, 128.
 * A kernel not causal owns rows as well, but the full-mask series do not
 * agree on a span (GB200 9.19.1 272 / 640, 9.22 144 / 48; H200 0 / 0-96):
 * no sequence term.
 */
static bool
attn_shape_is_fa2(int kernel, enum gpu_generation gen)
{
	return kernel == PLAN_ATTN_FA2 || (kernel == PLAN_ATTN_SDPA && gen != GPU_GEN_BLACKWELL) ||
	       (kernel == PLAN_ATTN_PROFILE && gen == GPU_GEN_AMPERE);
}

double
attn_shape_causal_span(int kernel, enum gpu_generation gen, bool bwd)
{
	bool fa2 = attn_shape_is_fa2(kernel, gen);

	switch (gen) {
	case GPU_GEN_HOPPER:
		return !bwd ? ATTN_SHAPE_TILE : fa2 ? 1184.0 : 416.0;
	case GPU_GEN_BLACKWELL:
		if (fa2)
			return bwd ? 1264.0 : 1072.0;
		return bwd ? 1344.0 : 704.0;
	default:
		return ATTN_SHAPE_TILE;
	}
}

/*
 * Under ring context parallelism (Megatron-Core / Transformer Engine's
 * p2p CP) a rank runs cp calls, one a step, each of its s / cp queries
 * against one s / cp chunk of keys: its rows are paid for once a step,
 * cp times the s / cp rows of its share of the pairs, so the rows' cost
 * is that of an s / cp sequence (the load-balanced half-chunk steps are
 * taken as whole); the diagonal is the whole sequence's. All-to-all CP
 * (Ulysses) runs whole sequences over fewer heads: @row_seq = @seq.
 */
double
attn_shape_causal_cost_rows(double seq, double row_seq, double tile, double span)
{
	if (seq <= 0.0)
		return 1.0;
	/* The rows' cost, (span - tile) / s, counts at least one row. */
	return attn_shape_causal_tiles(seq, tile) + (span - tile) / fmax(row_seq, tile);
}

double
attn_shape_causal_cost(double seq, double tile, double span)
{
	return attn_shape_causal_cost_rows(seq, seq, tile, span);
}

static double
causal_factor(int kernel, enum gpu_generation gen, bool bwd, double seq, double row_seq)
{
	double span = attn_shape_causal_span(kernel, gen, bwd);

	return attn_shape_causal_cost_rows(seq, row_seq, ATTN_SHAPE_TILE, span) /
	       attn_shape_causal_cost(ATTN_SHAPE_REF_SEQ, ATTN_SHAPE_TILE, span);
}

struct attn_shape
attn_shape_factors(const struct gpu *g, int kernel, double dqk, double dv, double seq, double row_seq,
		   bool causal)
{
	struct attn_shape f = { .fwd = 1.0, .bwd = 1.0 };
	double r = attn_shape_flops_per_exp(g->generation), ref = ATTN_SHAPE_REF_HEAD_DIM;
	double pqk = attn_shape_padded_head_dim(kernel, g->generation, dqk);
	double pv = attn_shape_padded_head_dim(kernel, g->generation, dv);

	/* Only the NVIDIA profiles state the shape their efficiencies hold at
	 * (gpus/: hdim 128, seq 4096); elsewhere the efficiency is taken as it
	 * is at every shape. */
	if (g->generation != GPU_GEN_AMPERE && g->generation != GPU_GEN_HOPPER &&
	    g->generation != GPU_GEN_BLACKWELL)
		return f;
	/* Per score, forward: Q K^T and P V, 2 (d_qk + d_v) FLOPs; backward:
	 * S = Q K^T again, dP = dO V^T, dV += P^T dO, dQ += dS K, dK += dS^T Q,
	 * 6 d_qk + 4 d_v executed, counted 2.5 times the forward's (compute.c). */
	f.fwd = pass_factor(2.0 * (pqk + pv), 2.0 * (dqk + dv), 4.0 * ref, r);
	f.bwd = pass_factor(6.0 * pqk + 4.0 * pv, 5.0 * (dqk + dv), 10.0 * ref, r);
	if (causal) {
		f.fwd *= causal_factor(kernel, g->generation, false, seq, row_seq);
		f.bwd *= causal_factor(kernel, g->generation, true, seq, row_seq);
	}
	return f;
}
