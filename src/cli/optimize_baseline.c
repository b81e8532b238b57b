/*
 * optimize --baseline SPEC: the user's own plan, priced beside the best
 * (issue 26: "compare with my plan"). SPEC is a plan written as
 * KEY=VALUE items (cli/plan_spec.h), "tp=4,pp=8,vpp=5,recompute=none".
 * What it leaves out is the problem's (--global-batch, --seq-len, --gpus,
 * whose dp follows, a constraint of one value such as --precision fp8,
 * --no-dp-overlap, --fp8-gather), else predict's default; so the baseline
 * is the plan `plan-cli predict` would price from the same items.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/optimize_baseline.h"
#include "cli/plan_spec.h"
#include "plan/plan_attr.h"

/* The attributes a baseline does not take: they are the problem's. */
static const char *
baseline_refuses(enum plan_attr_id id)
{
	if (plan_attrs[id].flags & PLAN_ATTR_COMPRESSION)
		return "price a compressed plan with predict --compressor";
	switch (id) {
	case PLAN_ATTR_GLOBAL_BATCH:
		return "every plan of the problem has its --global-batch";
	case PLAN_ATTR_SEQ_LEN:
		return "every plan of the problem has its --seq-len";
	default:
		return NULL;
	}
}

/* The problem's side of the plan: what the search gives every plan. */
static void
baseline_defaults(const struct optimize_request *r, struct plan *p, struct estimate_options *eo)
{
	struct plan_attr_target t = { p, eo };

	plan_init(p);
	/* predict's defaults (cmd_predict.c): without them a spec that gave
	 * no tp or pp ("--baseline recompute=none") was refused as "tp x cp
	 * x pp (0 x 1 x 0) is more than 2147483647 GPUs". */
	p->tp = 1;
	p->pp = 1;
	p->global_batch = r->so.global_batch;
	p->seq_len = r->so.seq_len;
	p->dp = 0; /* from the GPUs (plan_complete) unless given */
	p->precision = r->so.precision;
	p->dp_overlap = r->so.no_dp_overlap ? 0 : -1; /* as search.c: the framework's unless --no-dp-overlap */
	p->fp8_gather = r->so.fp8_gather;
	p->cp_method = r->so.cp_method;
	p->moe_overlap = r->so.moe_overlap;
	for (int id = 0; id < PLAN_ATTR_COUNT; id++)
		if (r->so.allowed[id].n == 1 && !baseline_refuses((enum plan_attr_id)id) &&
		    plan_attrs[id].type != PLAN_ATTR_LIST)
			plan_attr_set(&plan_attrs[id], &t, r->so.allowed[id].v[0]);
}

/* The plan predicted with @algo into @b; false (said) when it cannot run. */
static bool
baseline_estimate(const struct model *m, const struct cluster *c, const struct optimize_request *r,
		  enum coll_algo algo, struct search_candidate *b)
{
	struct estimate_options eo = { .dp_algo = algo, .compressor = NULL, .framework = r->so.framework };
	struct plan_error err;

	plan_error_clear(&err);
	if (!estimate_plan(m, c, &b->plan, &eo, &b->est, &err)) {
		cli_error("--baseline %s: cannot run: %s", r->baseline, err.message);
		return false;
	}
	b->dp_algo = algo;
	return true;
}

bool
cli_optimize_baseline(const struct optimize_request *r, const struct model *m, const struct cluster *c,
		      struct search_candidate *b)
{
	struct estimate_options eo = { .dp_algo = r->so.dp_algo, .framework = r->so.framework };
	struct cli_plan_spec spec = { .label = "--baseline", .key_sep = ' ', .whose = "the baseline's",
				      .refuses = baseline_refuses, .flash = r->flash, .opt = &eo };
	struct search_candidate other;
	struct plan_error err;

	memset(b, 0, sizeof(*b));
	baseline_defaults(r, &b->plan, &eo);
	if (!cli_plan_spec_parse(&spec, r->baseline, r->baseline, &b->plan) || !cli_plan_spec_mics(&spec, &b->plan))
		return false;
	plan_error_clear(&err);
	if (!plan_complete(&b->plan, &(struct plan_fill){ r->so.gpus, spec.flash,
					      r->so.framework ? r->so.framework->pipeline_split : PLAN_PP_SPLIT_EVEN }, m, c, &err)) {
		cli_error("--baseline %s: %s", r->baseline, err.message);
		return false;
	}
	if (!baseline_estimate(m, c, r, eo.dp_algo, b))
		return false;
	/* The DP algorithm, where the search tries both and the spec names
	 * none: the faster, as the search would take. */
	if (!spec.given[PLAN_ATTR_DP_ALLREDUCE] && r->so.search_dp_algo) {
		other = *b;
		if (!baseline_estimate(m, c, r, eo.dp_algo == COLL_ALGO_RING ? COLL_ALGO_HIERARCHICAL : COLL_ALGO_RING, &other))
			return false;
		if (other.est.iteration_time_s < b->est.iteration_time_s)
			*b = other;
	}
	return true;
}
