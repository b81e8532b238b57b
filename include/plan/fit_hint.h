/*
 * What to change when a plan does not fit: the largest memory term, and
 * the single changes of the plan (recompute, ZeRO stage, flash attention,
 * sequence parallelism, TP or PP doubled, the micro-batch halved) that
 * would fit, fastest first.
 */
#pragma once

#include "plan/estimate.h"

/** One change that fits. */
struct fit_hint {
	char change[48];         /**< as predict's options: "--recompute full", "--tp 4" */
	struct plan plan;        /**< the plan with it */
	double iteration_time_s;
	double memory_bytes;     /**< peak per GPU */
};

/** Upper bound on the hints fit_hints() returns. */
#define FIT_HINTS_MAX 12

/**
 * The single changes of @p that fit, or when none does the pairs of
 * changes that fit (at most @max, at most FIT_HINTS_MAX found), sorted by
 * iteration time, into @out; returns how many. A change that does not
 * apply to @p (ZeRO without data parallelism, TP beyond the heads) or
 * that makes an invalid plan is skipped.
 */
int fit_hints(const struct model *m, const struct cluster *c, const struct plan *p,
	      const struct estimate_options *opt, struct fit_hint *out, int max);

/** The name of @mu's largest term ("activations", "optimizer", ...) and its bytes in *@bytes. */
const char *fit_largest_term(const struct memory_use *mu, double *bytes);
