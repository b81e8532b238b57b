#include <stdlib.h>
#include <string.h>

#include "plan/explain.h"

int
explain_recompute_level(const struct model *m, const struct plan *p)
{
	int level = PLAN_RECOMPUTE_NONE;

	for (int s = 0; s < p->pp; s++) {
		int mode = plan_stage_recompute_layers(p, m, s) > 0 ? PLAN_RECOMPUTE_FULL : plan_stage_mode(p, m, s);

		if (mode > level)
			level = mode;
	}
	return level;
}

int
explain_dim_value(const struct model *m, const struct plan *p, enum search_dim d)
{
	switch (d) {
	case SEARCH_DIM_TP: return p->tp;
	case SEARCH_DIM_PP: return p->pp;
	case SEARCH_DIM_MICRO_BATCH: return p->micro_batch;
	case SEARCH_DIM_RECOMPUTE: return explain_recompute_level(m, p);
	case SEARCH_DIM_ZERO: return p->zero;
	case SEARCH_DIM_VPP: return p->vpp;
	case SEARCH_DIM_SP: return p->sequence_parallel;
	case SEARCH_DIM_CP: return p->cp;
	case SEARCH_DIM_EP: return p->ep;
	default: return 0;
	}
}

unsigned
explain_recompute_modes(int level)
{
	if (level == PLAN_RECOMPUTE_FULL)
		return 1u << PLAN_RECOMPUTE_NONE | 1u << PLAN_RECOMPUTE_SELECTIVE;
	if (level == PLAN_RECOMPUTE_SELECTIVE)
		return 1u << PLAN_RECOMPUTE_NONE;
	return 1u << PLAN_RECOMPUTE_FULL;
}

/* Nothing fits: the closest plan (search_stats.closest, even layers and
 * the heaviest recomputation allowed), predicted, so that the output can
 * give its time and its predict command. */
static void
explain_closest(const struct model *m, const struct cluster *c, const struct search_options *opt,
		const struct search_stats *st, struct explanation *x)
{
	struct estimate_options eo = { opt->dp_algo, NULL, opt->framework };
	struct plan_error e2;
	struct plan fresh;

	x->memory_stage = st->closest_stage;
	x->memory_bytes = st->closest_memory;
	x->capacity_bytes = st->capacity;
	/* Predicted without a compressor, as note_closest measured it. */
	plan_init(&fresh);
	x->cand.plan = st->closest;
	x->cand.plan.compress = fresh.compress;
	x->cand.compressor = NULL;
	x->cand.dp_algo = opt->dp_algo;
	x->cand.milp_slot_s = 0.0;
	plan_error_clear(&e2);
	x->have_plan = estimate_plan(m, c, &x->cand.plan, &eo, &x->cand.est, &e2);
	if (x->have_plan)
		x->value = explain_dim_value(m, &x->cand.plan, x->dim);
}

/* One dimension: the best plan of the space without the best's value. */
static bool
explain_dim(const struct model *m, const struct cluster *c, const struct search_options *opt,
	    const struct search_candidate *best, enum search_dim d, struct explanation *x,
	    struct plan_error *err)
{
	struct search_options o = *opt;
	struct search_stats *st = malloc(sizeof(*st));
	int ntop = 0;
	bool ok;

	if (!st)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	memset(x, 0, sizeof(*x));
	x->dim = d;
	x->best_value = explain_dim_value(m, &best->plan, d);
	o.top = 1;
	if (d == SEARCH_DIM_RECOMPUTE) {
		o.recompute_modes = explain_recompute_modes(x->best_value);
	} else {
		o.exclude_dim = d;
		o.exclude_value = x->best_value;
	}
	ok = search_run(m, c, &o, &x->cand, &ntop, st, err);
	x->seconds = st->seconds;
	if (ok) {
		if (ntop > 0) {
			x->status = EXPLAIN_FOUND;
			x->have_plan = true;
			x->value = explain_dim_value(m, &x->cand.plan, d);
		} else if (st->shapes > 0) {
			x->status = EXPLAIN_INFEASIBLE;
			if (st->have_closest)
				explain_closest(m, c, &o, st, x);
		} else {
			x->status = EXPLAIN_NONE;
		}
	}
	free(st);
	return ok;
}

bool
explain_run(const struct model *m, const struct cluster *c, const struct search_options *opt,
	    const struct search_candidate *best, struct explanation *out, int *n, struct plan_error *err)
{
	static const enum search_dim dims[] = {
		SEARCH_DIM_TP, SEARCH_DIM_PP, SEARCH_DIM_MICRO_BATCH, SEARCH_DIM_RECOMPUTE, SEARCH_DIM_ZERO,
		SEARCH_DIM_VPP, SEARCH_DIM_SP, SEARCH_DIM_CP, SEARCH_DIM_EP,
	};

	*n = 0;
	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		struct explanation *x = &out[*n];
		bool optional = dims[i] >= SEARCH_DIM_VPP;

		if (!explain_dim(m, c, opt, best, dims[i], x, err))
			return false;
		/* vpp, sp, CP and EP are listed where they apply. */
		if (!(optional && x->status == EXPLAIN_NONE))
			(*n)++;
	}
	return true;
}
