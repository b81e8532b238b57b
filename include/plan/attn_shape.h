/*
 * Fused attention's speed by shape: what a flash-attention kernel does at
 * another head dim or sequence length than the one a GPU profile's
 * attention efficiencies were measured at (head dim 128, sequence 4096:
 * ATTN_SHAPE_REF_HEAD_DIM, ATTN_SHAPE_REF_SEQ). Three facts, each
 * physics or framework code (attn_shape.c cites them): kernels are
 * compiled for a few head dims and pad the others up; every score costs
 * one exponential on the special-function units, whose rate did not grow
 * with the tensor cores, so small head dims run at a lower fraction of
 * peak; and a causal kernel computes the diagonal tiles whole and pays
 * a fixed cost per row of tiles.
 */
#pragma once

#include <stdbool.h>

#include "plan/gpu.h"

/** The shape the shipped GPU profiles' attention efficiencies hold at. */
#define ATTN_SHAPE_REF_HEAD_DIM 128.0
#define ATTN_SHAPE_REF_SEQ      4096.0
/** Query (forward) and key (backward) tile of the flash kernels. */
#define ATTN_SHAPE_TILE 128.0

/** Time multipliers of one fused attention call against the reference shape. */
struct attn_shape {
	double fwd; /**< forward: padding, exponentials and diagonal tiles */
	double bwd; /**< backward, likewise */
};

/**
 * The head dim kernel @kernel (a PLAN_ATTN_* value other than
 * PLAN_ATTN_FRAMEWORK: resolve it first) runs for a head dim of @d on a
 * @gen GPU: @d rounded up to the next size the kernel is compiled for.
 */
double attn_shape_padded_head_dim(int kernel, enum gpu_generation gen, double d);

/**
 * Dense bf16 tensor-core FLOPs a GPU of @gen does in the time its
 * special-function units do one exponential; 0 where no figure is cited
 * (no exponential term).
 */
double attn_shape_flops_per_exp(enum gpu_generation gen);

/**
 * Executed over counted time of one pass per score: (@executed + @r) /
 * @counted, where @executed and @counted are the tensor-core FLOPs per
 * score at the padded and true head dims and @r attn_shape_flops_per_exp.
 */
double attn_shape_score_cost(double executed, double counted, double r);

/**
 * Pairs a causal kernel computes over the s^2 / 2 the FLOP count assumes,
 * for a sequence of @seq tokens in tiles of @tile: (n + 1) / n, n = seq /
 * tile (whole diagonal tiles); 1 for @seq <= 0.
 */
double attn_shape_causal_tiles(double seq, double tile);

/**
 * The causal span, in tokens, of kernel @kernel (as for
 * attn_shape_padded_head_dim) on a @gen GPU, backward if @bwd: the
 * diagonal tile plus twice the per-row cost in tiles, times the tile
 * (attn_shape.c cites the fit); ATTN_SHAPE_TILE where no benchmark says more.
 */
double attn_shape_causal_span(int kernel, enum gpu_generation gen, bool bwd);

/**
 * Tiles a causal call computes over the s^2 / 2 pairs, with whole
 * diagonal tiles of @tile and a per-row cost making up a span of @span
 * tokens: attn_shape_causal_tiles(@seq, @tile) + (@span - @tile) /
 * max(@seq, @tile); 1 for @seq <= 0.
 */
double attn_shape_causal_cost(double seq, double tile, double span);

/**
 * The same where a call's rows span @row_seq keys (a ring step of context
 * parallelism) while its diagonal is the whole @seq's:
 * attn_shape_causal_tiles(@seq, @tile) + (@span - @tile) / max(@row_seq,
 * @tile); 1 for @seq <= 0.
 */
double attn_shape_causal_cost_rows(double seq, double row_seq, double tile, double span);

/**
 * The time multipliers of a fused attention call on @g with kernel
 * @kernel, head dims @dqk and @dv, over a (whole, CP-joined) sequence of
 * @seq tokens whose calls' rows each span @row_seq keys (@seq, or one
 * ring step's seq / cp under ring context parallelism), @causal or not,
 * against the reference shape; 1 and 1 on a GPU whose generation states
 * no reference shape (GPU_GEN_UNSPECIFIED, Volta, CDNA3).
 */
struct attn_shape attn_shape_factors(const struct gpu *g, int kernel, double dqk, double dv, double seq,
				     double row_seq, bool causal);
