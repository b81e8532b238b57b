/*
 * Variable-length sequences: the training data's length distribution and
 * how micro-batches are formed from it (padding, packing, or DynaPipe's
 * dynamic micro-batching: Jiang et al., "Optimizing Multi-task Training
 * through Dynamic Pipelines", ASPLOS 2024;
 * awslabs/optimizing-multitask-training-through-dynamic-pipelines).
 */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/error.h"
#include "plan/estimate.h"
#include "plan/model.h"
#include "plan/plan.h"

/** Longest sequence a distribution may hold (tokens). */
#define SEQLEN_MAX_LENGTH (1 << 20)
/** The largest count of one line of a distribution file (their sum stays finite). */
#define SEQLEN_MAX_COUNT 1e15
/** Most distinct lengths a distribution may hold. */
#define SEQLEN_MAX_DISTINCT 65536
/** Most sequences per data-parallel replica that --batching dynamic plans. */
#define SEQLEN_DYNAMIC_MAX_SAMPLES 1024
/** DynaPipe rounds a micro-batch's padded length up to a multiple of this (dp_helper.cpp). */
#define SEQLEN_ROUND 8

enum seqlen_batching {
	SEQLEN_PAD,     /**< --micro-batch sequences, each padded to the longest */
	SEQLEN_PACK,    /**< sequences concatenated into rows of --seq-len tokens */
	SEQLEN_DYNAMIC, /**< DynaPipe: micro-batches of varying size and length */
};

enum seqlen_pack_attention {
	SEQLEN_ATTN_FULL,   /**< attention over the whole packed row */
	SEQLEN_ATTN_MASKED, /**< document-masked: each document attends to itself */
};

/** Names, indexed by the enums, NULL-terminated. */
extern const char *const seqlen_batching_names[];
extern const char *const seqlen_pack_attention_names[];

/** A length distribution: distinct lengths ascending, each with its count. */
struct seqlen_dist {
	int n;
	int *length;
	double *count;
	double total;  /**< sum of the counts */
};

/** An empty distribution (no allocation). */
void seqlen_dist_init(struct seqlen_dist *d);

/** Free what @d holds; it is empty afterwards. */
void seqlen_dist_release(struct seqlen_dist *d);

/**
 * Build @d from @n (length, count) pairs in any order, merging equal
 * lengths. Lengths must be in 1..SEQLEN_MAX_LENGTH and counts positive
 * (the loader checks both and says where); PLAN_ERR_INPUT otherwise, or
 * PLAN_ERR_NOMEM. @d is the caller's to release.
 */
bool seqlen_dist_build(struct seqlen_dist *d, const int *lengths, const double *counts, int n,
		       struct plan_error *err);

/** Mean length and mean squared length. */
double seqlen_mean(const struct seqlen_dist *d);
double seqlen_mean_sq(const struct seqlen_dist *d);

/**
 * The longest of @b independent draws from @d: its expectation and that
 * of its square, exactly, from P(max <= L) = F(L)^b. @pmf (may be NULL,
 * d->n entries) receives P(max = length[k]) = F(L_k)^b - F(L_{k-1})^b.
 */
void seqlen_expected_max(const struct seqlen_dist *d, int b, double *emax, double *emax_sq, double *pmf);

/** One packed row of @row_len tokens, in expectation. */
struct seqlen_pack_row {
	double tokens;     /**< real tokens in the row */
	double waste;      /**< padding at its end: row_len - tokens */
	double documents;  /**< documents in it */
	double sum_sq;     /**< sum of the documents' squared lengths */
};

/**
 * Greedy packing into rows of @row_len tokens: documents are drawn from
 * @d one after another and appended while they fit; the first one that
 * does not fit closes the row (its end is padding). Computed exactly as
 * a recursion over the row's fill level u:
 *   W(u) = sum_l p(l) [u + l <= S ? W(u + l) : S - u],
 * and likewise the documents and their squared lengths. Every length
 * must be at most @row_len. A row longer than 4096 tokens is worked on
 * a grid of row_len/4096 tokens (lengths rounded up to it).
 */
bool seqlen_pack(const struct seqlen_dist *d, int row_len, struct seqlen_pack_row *out,
		 struct plan_error *err);

/**
 * The @n sample lengths that stand for @n draws: the lengths at the
 * quantiles (k + 1/2) / n, k = 0 .. n-1, ascending, into @out.
 */
void seqlen_quantiles(const struct seqlen_dist *d, int n, int *out);

/**
 * A micro-batch's cost for the dynamic program: the time of one
 * pipeline slot of @b sequences padded to @len tokens, and whether its
 * activations fit. Returns false with @err set on failure.
 */
typedef bool seqlen_cost_fn(void *ctx, int b, int len, double *time_s, bool *fits,
			    struct plan_error *err);

/** One micro-batch that the dynamic program chose. */
struct seqlen_mb {
	int first, count;  /**< samples first .. first + count - 1 of the sorted list */
	int padded_len;    /**< the longest of them, rounded up to @round */
	double time_s;
};

/**
 * DynaPipe's dynamic program (dp_helper.cpp, cpp_consecutive_partition_dp):
 * split the @n sorted lengths @len into consecutive micro-batches, each
 * padded to its longest rounded up to a multiple of @round, that fit,
 * minimising (stages - 1) t_max / v + sum_i t_i / d. t_max is enumerated
 * over the micro-batch times (candidates within 1 % of the previous kept
 * one are merged, as DynaPipe merges those within 5 ms), and for each a
 * DP over split points minimises sum t_i with every t_i <= t_max.
 * @out (n entries) receives the micro-batches, @nout their number,
 * @objective the minimum. PLAN_ERR_PLAN when no split fits.
 */
bool seqlen_dynamic_split(const int *len, int n, int round, int stages, int v, int d, seqlen_cost_fn *cost,
			  void *ctx, struct seqlen_mb *out, int *nout, double *objective,
			  struct plan_error *err);

/**
 * Predict plan @p (already predicted into @e by estimate_plan) on data
 * of distribution @d batched by @batching: fills @e->batching. Lengths
 * above p->seq_len are truncated to it. Not modelled with context
 * parallelism (PLAN_ERR_PLAN).
 */
bool seqlen_estimate(const struct model *m, const struct cluster *c, const struct plan *p,
		     const struct estimate_options *opt, const struct seqlen_dist *d, int batching,
		     int pack_attention, struct estimate *e, struct plan_error *err);
