#include "plan/wave_loss.h"

/*
 * The loss is measured, not summed GEMM by GEMM: the same plan priced
 * again with no wave model (sm_count 0 makes cluster_gemm_wave_factor 1,
 * its documented "waves not modelled"), so that it is what the waves add
 * to the iteration, the other stages' share of the pipeline bubble and
 * what a slower backward hides of the DP traffic included (so it may be
 * less than the GEMMs' own loss: a launch-bound stretch or an overlap
 * window absorbs part of it). Slower GEMMs never shorten an iteration
 * (a longer overlap window hides no more than the backward grows), so
 * a negative difference can only be rounding: it is reported as 0.
 */
bool
wave_loss_estimate(const struct model *m, const struct cluster *c, const struct plan *p,
		   const struct estimate_options *opt, struct estimate *e, struct plan_error *err)
{
	struct cluster flat = *c; /* a view: owns nothing, never released */
	struct estimate without;

	e->details.gemm_wave_loss_s = 0.0;
	e->details.gemm_wave_loss_known = true;
	if (c->gpu.sm_count <= 0)
		return true; /* no wave model: nothing lost to waves */
	flat.gpu.sm_count = 0;
	if (!estimate_plan(m, &flat, p, opt, &without, err))
		return false;
	if (e->iteration_time_s > without.iteration_time_s)
		e->details.gemm_wave_loss_s = e->iteration_time_s - without.iteration_time_s;
	return true;
}
