/*
 * optimize --explain: for the best plan of a search, the runner-up in each
 * dimension, the exact optimum of the search space with that dimension
 * forced away from the best plan's value (search_options.exclude_dim and
 * recompute_modes), found by the same search.
 */
#pragma once

#include <stdbool.h>

#include "plan/search.h"

/**
 * The recompute level of a plan: its heaviest recomputation, as enum
 * plan_recompute: full when any layer of any stage recomputes in full
 * (Slapo's layers included), else selective when a stage recomputes
 * selectively, else none.
 */
int explain_recompute_level(const struct model *m, const struct plan *p);

/** The value of dimension @d in plan @p (sp: 0 or 1; recompute: explain_recompute_level). */
int explain_dim_value(const struct model *m, const struct plan *p, enum search_dim d);

/**
 * The recompute modes (search_options.recompute_modes) of the space the
 * recompute runner-up comes from, for a best plan of level @level: with
 * full recomputation, none and selective only; with selective, none only;
 * without recomputation, full in every stage (what recomputing costs).
 */
unsigned explain_recompute_modes(int level);

enum explain_status {
	EXPLAIN_FOUND,      /**< a runner-up that fits */
	EXPLAIN_INFEASIBLE, /**< the space has shapes, none with a layout that fits */
	EXPLAIN_NONE,       /**< the space has no other value of the dimension */
};

/** The runner-up of one dimension. */
struct explanation {
	enum search_dim dim;
	enum explain_status status;
	int best_value;              /**< the best plan's value */
	int value;                   /**< the runner-up's (EXPLAIN_FOUND, or with have_plan) */
	bool have_plan;              /**< @cand holds a plan: the runner-up, or the closest to fitting */
	struct search_candidate cand;/**< its plan and prediction (fits false when infeasible) */
	int memory_stage;            /**< infeasible: the stage of the closest plan that needs most */
	double memory_bytes;         /**< infeasible: what it needs per GPU */
	double capacity_bytes;       /**< infeasible: what the GPU has */
	double seconds;              /**< the search's wall-clock time */
};

/** The dimensions explained, at most. */
#define EXPLAIN_MAX (SEARCH_DIM_COUNT - 1)

/**
 * For @best, the best plan of search_run(@m, @c, @opt), one search per
 * dimension with that dimension forced away: into @out (EXPLAIN_MAX
 * entries) TP, PP, micro-batch, recompute and ZeRO always (EXPLAIN_NONE
 * where the space has no alternative), then vpp, sp, CP and EP where the
 * space has another value; *@n their number. Each search keeps one plan
 * (@opt->top is ignored). Returns false with @err as search_run does.
 */
bool explain_run(const struct model *m, const struct cluster *c, const struct search_options *opt,
		 const struct search_candidate *best, struct explanation *out, int *n, struct plan_error *err);
