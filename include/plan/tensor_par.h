/* Tensor-parallel communication (Megatron's f and g operators). */
#pragma once

#include "plan/cluster.h"
#include "plan/compute.h"
#include "plan/framework.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/topology.h"

/** TP communication of one layer for one micro-batch. */
struct tp_layer_comm {
	double collective_s; /**< one all-reduce (or AG + RS pair with SP) of b*s*h */
	double fwd_s;        /**< the forward's collectives */
	double bwd_s;        /**< the backward's collectives */
	double recompute_s;  /**< collectives repeated by full recomputation */
	double bytes;        /**< bytes of one collective's buffer (b*s*h*2) */
	int per_pass;        /**< collectives of a layer's forward: 2, or 1 for a parallel block */
	int regathers;       /**< SP inputs all-gathered again in the backward (per_pass; 0 without SP) */
	int moe_regathers;   /**< of those, an MoE layer's: QKV's and a shared expert's */
	double regather_s;   /**< one such all-gather of b*s*h (0 without), in gather_bytes */
	double regather16_s; /**< the same all-gather in 16 bits (the output layer's, outside fp8) */
	double gather_bytes; /**< bytes of one layer all-gather's buffer: bytes, or less where fp8 gathers quantised */
	double amax_s;       /**< one all-reduce of a gathered tensor's amax (current scaling; else 0) */
	double mlp_fwd_s;    /**< the MLP's share of fwd_s (its gather or all-reduce and its reduction;
				  0 in a parallel block, whose one collective serves both halves) */
	double mlp_bwd_s;    /**< the MLP's share of bwd_s, without fc1's re-gather (0 in a parallel block) */
};

/**
 * Shoeybi et al. 2019 (Megatron-LM), Sec. 3: two all-reduces in the
 * forward and two in the backward of every layer, each on the b*s*h
 * activations; with sequence parallelism (Korthikanti et al. 2022,
 * Sec. 4.2.2) each becomes an all-gather plus a reduce-scatter of the
 * same volume, and the backward all-gathers each column-parallel input
 * again for its weight gradient (regathers, regather_s; not with
 * p->tp_overlap, nor where @fw's sp_regather is false; @fw NULL: the
 * built-in framework, which gathers again). A parallel block (model parallel_block) sums the
 * attention's and the MLP's partial outputs before one reduction, and
 * their input gradients before another: one collective a pass. With
 * p->tp_overlap (and SP) each overlaps the GEMM of @cl it feeds or
 * follows: tp_overlapped_time().
 */
void tp_layer_comm(const struct model *m, const struct plan *p, const struct cluster *c,
		   const struct framework *fw, const struct plan_layout *lay,
		   const struct compute_layer *cl, struct tp_layer_comm *out);

/**
 * A TP collective of @comm seconds overlapped, in @t chunks, with a GEMM
 * of @gemm seconds (--tp-overlap) that runs @slowdown times slower
 * beside it and pays @chunk_s for each extra chunk: the time it adds
 * beyond the GEMM (the excess, one chunk, the slowdown).
 */
double tp_overlapped_time(double comm, double gemm, int t, double slowdown, double chunk_s);

/**
 * How much slower a GEMM runs on the SMs an overlapped TP collective
 * leaves it (Transformer Engine's userbuffers): its reduce-scatters
 * (@reduce_scatter) take 16 SMs, its all-gathers the copy engines.
 */
double tp_overlap_sm_slowdown(const struct cluster *c, bool reduce_scatter);
