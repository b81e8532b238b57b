/*
 * The planner: the best plan for a model on (part of) a cluster.
 * Outer integer shapes (TP, PP, DP, micro-batch, interleaving, ZeRO or
 * MiCS, EP and routing, compressor) are enumerated and pruned with a
 * compute-only lower bound; for each surviving shape a mixed-integer
 * program (GLPK) assigns layers to stages, a recompute mode per stage and
 * where compression applies, minimising the pipeline's bottleneck slot
 * under the memory of every stage.
 */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/compressor.h"
#include "plan/error.h"
#include "plan/estimate.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/plan_attr.h"

/** Most compressors the search may try. */
#define SEARCH_MAX_COMPRESSORS 8

/**
 * A dimension of the search space, as optimize --explain names it: an
 * outer degree or option, or the plan's recomputation.
 */
enum search_dim {
	SEARCH_DIM_NONE,
	SEARCH_DIM_TP,
	SEARCH_DIM_PP,
	SEARCH_DIM_MICRO_BATCH,
	SEARCH_DIM_RECOMPUTE,
	SEARCH_DIM_ZERO,
	SEARCH_DIM_VPP,
	SEARCH_DIM_SP,
	SEARCH_DIM_CP,
	SEARCH_DIM_EP,
	SEARCH_DIM_COUNT,
};

/** Names of the dimensions ("tp", "micro_batch", ...), indexed by enum search_dim. */
extern const char *const search_dim_names[];

/** Most values one attribute's constraint may list. */
#define SEARCH_MAX_ALLOWED 16

/**
 * The values a plan attribute may take (optimize's --ATTR V[,V...]): the
 * search keeps only plans whose attribute is one of them. An attribute
 * the search chooses (PLAN_ATTR_SEARCHED) is filtered, and its bound
 * (max_tp, ...) raised to the largest value where it was left at its
 * default; one it takes as given (precision, cp_method, moe_overlap) is
 * searched over the listed values. n == 0: no constraint.
 */
struct search_allowed {
	int n;
	long v[SEARCH_MAX_ALLOWED];
};

struct search_candidate;

/** One plan the search predicted, as search_options.on_eval receives it. */
struct search_eval {
	const struct search_candidate *cand; /**< the plan; its estimate when @predicted */
	bool predicted;                      /**< false: the cost model refused the layout */
	const char *refused;                 /**< then why (the cost model's message), else NULL */
};

/**
 * Called for every plan the search predicts (each layout of each shape,
 * fitting or not, and each the cost model refuses), in the search's
 * order; the data lives only during the call. optimize --all writes them.
 */
typedef void (*search_eval_fn)(void *ctx, const struct search_eval *ev);

struct search_options {
	int gpus;                 /**< GPUs to plan for (0: the whole cluster) */
	int global_batch;         /**< sequences per iteration */
	int seq_len;              /**< 0: the model's */
	bool flash_attention;     /**< the implementation uses fused attention */
	int precision;            /**< enum plan_precision, kept as given (a numerics choice) */
	bool tp_overlap;          /**< plans with sequence parallelism may overlap their TP collectives:
				       both are searched */
	bool fp8_gather;          /**< ZeRO-3/MiCS plans all-gather fp8 weights (needs precision fp8) */
	bool no_dp_overlap;       /**< no plan overlaps its DP/ZeRO traffic with computation */
	int cp_method;            /**< enum plan_cp_method of the plans with cp > 1, kept as given */
	int moe_overlap;          /**< enum plan_moe_overlap, kept as given */
	int max_tp;               /**< 0: gpus per node */
	int max_pp;               /**< 0: layers */
	int max_micro_batch;      /**< 0: 16 */
	int max_vpp;              /**< 0: 8 */
	int max_cp;               /**< highest context-parallel degree to try; 0: SEARCH_DEFAULT_MAX_CP */
	int max_zero;             /**< highest ZeRO stage to consider (0..3; -1: 3) */
	const struct compressor *compressors[SEARCH_MAX_COMPRESSORS];
	int ncompressors;
	int max_compressed_layers;/**< budget of TP-compressed layers; -1: none */
	double time_limit_s;      /**< for each MILP (each --exhaustive shape); 0 or less: SEARCH_DEFAULT_TIME_LIMIT_S */
	bool exhaustive;          /**< enumerate the inner choices instead of the MILP */
	int top;                  /**< how many plans to keep (1 .. SEARCH_MAX_TOP) */
	enum coll_algo dp_algo;   /**< the DP collectives' algorithm (the only one unless search_dp_algo) */
	bool search_dp_algo;      /**< also try the other algorithm where it changes anything */
	const struct framework *framework; /**< NULL: the built-in framework */
	/** Shapes whose value of this outer dimension (TP, PP, micro-batch,
	 *  ZeRO, vpp, sp, CP, EP) is @exclude_value are not enumerated;
	 *  SEARCH_DIM_NONE (the default): none is left out. */
	enum search_dim exclude_dim;
	int exclude_value;
	/** Recompute modes a stage may use, bit 1 << enum plan_recompute;
	 *  Slapo's layers in full need the full bit and a lighter one.
	 *  0 (the default): every mode. */
	unsigned recompute_modes;
	/** Constraints, indexed by enum plan_attr_id (a recompute list
	 *  restricts recompute_modes too). */
	struct search_allowed allowed[PLAN_ATTR_COUNT];
	/** NULL (the default): nothing is called and nothing is kept. */
	search_eval_fn on_eval;
	void *on_eval_ctx;
	/** (Tests) every shape searched in full, neither the lower bound
	 *  nor the top list's cutoff skipping any: the reference the bounds
	 *  are checked against. false (the default): pruned. */
	bool unpruned;
};

/** Whether constraint @a allows @v (true when it lists nothing). */
bool search_allowed_has(const struct search_allowed *a, long v);

/** Context-parallel degrees optimize tries by default (powers of two up to this). */
#define SEARCH_DEFAULT_MAX_CP 8

#define SEARCH_MAX_TOP 32
/** The room for struct search_stats's refusal: a plan_error message and the plan. */
#define SEARCH_REFUSAL_LEN 896

/** The plans optimize keeps by default (plan-cli(1), --top). */
#define SEARCH_DEFAULT_TOP 5

/**
 * Seconds of branch and bound per MILP by default (plan-cli(1),
 * --time-limit); written as a whole number so that --help can print it.
 */
#define SEARCH_DEFAULT_TIME_LIMIT_S 2

/**
 * Options with the defaults: every GPU of the cluster, no bounds beyond
 * the search's own, ZeRO up to 3, no compressors and no budget of
 * compressed layers, SEARCH_DEFAULT_TOP plans, SEARCH_DEFAULT_TIME_LIMIT_S
 * per MILP, ring all-reduce. The caller sets the global batch.
 */
void search_options_init(struct search_options *opt);

/** One plan the search found, with its full prediction. */
struct search_candidate {
	struct plan plan;
	const struct compressor *compressor; /**< NULL: none */
	enum coll_algo dp_algo;              /**< its DP collectives' algorithm */
	struct estimate est;
	double milp_slot_s;                  /**< the MILP's objective (0 when not from a MILP) */
};

/**
 * Among layouts of the MILP's optimal slot, the search predicts up to
 * this many to find the fastest iteration (tail and fill included).
 */
#define SEARCH_TIE_MAX_LAYOUTS 4096

/** ... and visits at most this many partial layouts (stage choices): on
 *  deep pipelines most partial layouts end in no complete one. */
#define SEARCH_TIE_MAX_STEPS 500000L

/** --exhaustive enumerates a shape when its combinations number at most this. */
#define SEARCH_EXHAUSTIVE_MAX_COMBINATIONS 1e6

/** The --exhaustive shapes above that limit search_stats names (the rest it counts). */
#define SEARCH_MAX_REDUCED 8

/**
 * A shape --exhaustive did not enumerate: it got (near-)even layers, one
 * recompute mode for all stages and TP/PP compression on its default
 * suffixes or off, as the interleaved shapes do.
 */
struct search_reduced {
	struct plan shape;
	const struct compressor *cmp;  /**< NULL: none */
	enum coll_algo dp_algo;
	double combinations;           /**< what enumerating it would have taken */
};

struct search_stats {
	long shapes;          /**< outer shapes enumerated */
	long pruned;          /**< skipped by the lower bound */
	long milps;           /**< MILPs solved */
	long milp_timeouts;   /**< stopped by the time limit (best incumbent kept) */
	long evaluations;     /**< plans predicted (exhaustive and closed-form cases) */
	long infeasible;      /**< shapes with no layout that fits */
	double seconds;
	double max_milp_gap;  /**< largest |MILP slot - predicted slot| / slot */
	long cut;             /**< MILPs (and layout DPs) proven unable to beat the k-th best plan */
	long layout_dps;      /**< shapes without compression: their layout by the exact DP, not GLPK */
	long truncated;       /**< --exhaustive shapes too large to enumerate (even layers only) */
	long tie_truncated;   /**< MILP shapes whose tied layouts passed SEARCH_TIE_MAX_LAYOUTS or _STEPS */
	long exhaustive_timeouts; /**< --exhaustive shapes stopped by the time limit (best so far kept) */
	struct search_reduced reduced[SEARCH_MAX_REDUCED]; /**< the first min(truncated, SEARCH_MAX_REDUCED) */
	double cutoff_s;      /**< (internal) the k-th best time while searching; 0: none */
	bool have_closest;    /**< when nothing fits: the plan closest to fitting */
	struct plan closest;
	double closest_memory;
	int closest_stage;
	double capacity;
	/** When nothing fits and no plan is closest: why the first plan the
	 * search met cannot run ("tp 1 x pp 1 x dp 16, micro-batch 1: fp8
	 * recipe mxfp8 needs ..."); empty: no plan was refused. */
	char refusal[SEARCH_REFUSAL_LEN];
};

/**
 * Search. @top receives up to @opt->top plans, best first; *@ntop their
 * number (0 when nothing fits: then @stats->have_closest says why).
 * Returns false with @err on invalid options or a solver failure.
 */
bool search_run(const struct model *m, const struct cluster *c, const struct search_options *opt,
		struct search_candidate *top, int *ntop, struct search_stats *stats,
		struct plan_error *err);

/**
 * The inner problem of one shape, exactly: layers per stage, recompute per
 * stage, TP and PP compression suffixes, solved by MILP (or by
 * enumeration when @exhaustive). @shape gives the degrees and options;
 * *@found is false when no layout fits. Exposed for tests.
 */
bool search_shape(const struct model *m, const struct cluster *c, const struct plan *shape,
		  const struct compressor *cmp, const struct search_options *opt, bool exhaustive,
		  struct search_candidate *best, bool *found, struct search_stats *stats,
		  struct plan_error *err);

/**
 * The bound the inner search prunes layouts of @shape by (the unit
 * search's mixed recompute, the layout MILP's cutoff row, the layout DP):
 * no layout whose pacing slot (estimate details.slot_s) is @slot_s or
 * more predicts a shorter iteration, under framework @fw (NULL: the
 * built-in one), with a compressor where @compressed. Exposed for tests.
 */
double search_layout_bound(const struct model *m, const struct cluster *c, const struct plan *shape,
			   const struct framework *fw, bool compressed, double slot_s);

/**
 * The bound search_run sorts and prunes outer shapes by: no plan of
 * @shape's outer shape (its degrees, micro-batch, schedule and options;
 * its layers per stage and recompute modes are not read) predicts a
 * shorter iteration under framework @fw (NULL: the built-in one), with a
 * compressor where @compressed. Exposed for tests.
 */
double search_lower_bound(const struct model *m, const struct cluster *c, const struct plan *shape,
			  const struct framework *fw, bool compressed);
