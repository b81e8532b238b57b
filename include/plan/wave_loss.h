/* What the partial last waves of GEMM tiles cost an iteration, as a line of its own. */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/error.h"
#include "plan/estimate.h"
#include "plan/model.h"
#include "plan/plan.h"

/**
 * The iteration time that wave quantisation (cluster_gemm_wave_factor)
 * adds to @e, the estimate of plan @p of model @m on cluster @c with
 * options @opt: @e's iteration time minus that of the same plan on the
 * same GPU without waves (sm_count 0), at least 0. It sets
 * @e->details.gemm_wave_loss_s and @e->details.gemm_wave_loss_known.
 * A second estimate: predict calls it for the plan it prints and
 * optimize's text for its best plan, never the search (which would pay
 * twice). Returns false with @err set when
 * the second estimate fails (it cannot where @e succeeded).
 */
bool wave_loss_estimate(const struct model *m, const struct cluster *c, const struct plan *p,
			const struct estimate_options *opt, struct estimate *e, struct plan_error *err);
