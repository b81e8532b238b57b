/* optimize --baseline: the user's plan, priced beside the best. */
#pragma once

#include <stdbool.h>

#include "cli/options.h"
#include "plan/cluster.h"
#include "plan/model.h"
#include "plan/search.h"

/**
 * Read @r->baseline (KEY=VALUE items, cli/plan_spec.h) into the plan
 * it names, completed as predict completes its own on the problem's
 * GPUs, global batch and single-valued constraints, and predict it into
 * @b. False, said as a usage error, when the spec is wrong or the plan
 * cannot run.
 */
bool cli_optimize_baseline(const struct optimize_request *r, const struct model *m, const struct cluster *c,
			   struct search_candidate *b);
