/* A small mixed-integer linear program, solved with GLPK's branch and bound. */
#pragma once

#include <stdbool.h>

#include "plan/error.h"

/**
 * A minimisation problem: min sum_j cost_j x_j subject to
 * row_lo_i <= sum_j a_ij x_j <= row_hi_i and lo_j <= x_j <= hi_j, with
 * some x_j integer. The problem is held in plain arrays; GLPK only sees
 * it inside milp_solve(), so no GLPK object outlives a call.
 *
 * GLPK is not reentrant: call milp_solve() from one thread at a time,
 * and not while other code of the process is inside GLPK.
 */
struct milp;

enum milp_kind {
	MILP_CONTINUOUS, /**< a real variable */
	MILP_INTEGER,    /**< an integer variable; bounds are rounded inwards */
	MILP_BINARY,     /**< an integer variable within [0, 1] */
};

enum milp_status {
	MILP_OPTIMAL,     /**< proven optimal (within GLPK's tolerances) */
	MILP_FEASIBLE,    /**< the time limit ran out with a feasible solution */
	MILP_INFEASIBLE,  /**< no solution satisfies the rows, bounds and integrality */
	MILP_UNBOUNDED,   /**< feasible, with an objective that decreases without limit */
	MILP_NO_SOLUTION, /**< the time limit ran out before any solution was found */
};

/** Names of enum milp_status ("optimal", ...), NULL-terminated. */
extern const char *const milp_status_names[];

/**
 * A new, empty problem, owned by the caller (release with milp_free()).
 * Returns NULL with a PLAN_ERR_NOMEM error when memory runs out.
 */
struct milp *milp_new(struct plan_error *err);

/** Free @p and everything it holds. @p may be NULL. */
void milp_free(struct milp *p);

/**
 * Add a variable with bounds [@lo, @hi] (-INFINITY / INFINITY for none)
 * and objective coefficient @cost. @name is optional (NULL), copied, and
 * only used in error messages. A MILP_BINARY variable needs
 * 0 <= @lo <= @hi <= 1.
 *
 * Returns the variable's index (0, 1, ... in the order of the calls), or
 * -1 with a PLAN_ERR_INPUT error (NaN or empty bounds, non-finite cost)
 * or a PLAN_ERR_NOMEM error; on failure @p is unchanged.
 */
int milp_add_var(struct milp *p, enum milp_kind kind, double lo, double hi,
		 double cost, const char *name, struct plan_error *err);

/**
 * Add the row @lo <= sum_k @coefs[k] x_{@vars[k]} <= @hi over @n
 * entries (-INFINITY / INFINITY for a free side; @lo == @hi for an
 * equality). The arrays are copied; they may be NULL when @n is 0. @name
 * is optional (NULL) and copied.
 *
 * Returns false with a PLAN_ERR_INPUT error, leaving @p unchanged, for a
 * negative @n, an index out of range, an index given twice, a
 * non-finite coefficient, or NaN or empty bounds; with PLAN_ERR_NOMEM
 * when memory runs out.
 */
bool milp_add_row(struct milp *p, int n, const int *vars, const double *coefs,
		  double lo, double hi, const char *name, struct plan_error *err);

/** Number of variables of @p. */
int milp_num_vars(const struct milp *p);

/** Number of rows of @p. */
int milp_num_rows(const struct milp *p);

/**
 * Minimise with GLPK (MIP presolver on, nothing printed), giving up
 * after @time_limit_s seconds of branch and bound (INFINITY for no
 * limit; rounded up to whole milliseconds; GLPK does not limit the
 * first LP relaxation). Infeasible, unbounded and timed-out problems
 * are results, reported in @status, with true.
 *
 * Returns false only with an error: PLAN_ERR_INPUT for a time limit
 * that is NaN or not positive, or when GLPK fails (numerical trouble,
 * an internal error); PLAN_ERR_NOMEM when memory runs out. GLPK's
 * internal errors never abort: they are caught with glp_error_hook()
 * and then glp_free_env() is called, which frees every GLPK object of
 * the process, also those made by other code. @p stays valid and can
 * be solved again.
 */
bool milp_solve(struct milp *p, double time_limit_s, enum milp_status *status,
		struct plan_error *err);

/**
 * Free the calling thread's GLPK environment, which milp_solve() creates
 * and keeps (GLPK keeps one per thread). Call it when a thread that may
 * have solved ends; without one it does nothing.
 */
void milp_thread_release(void);

/**
 * Value of variable @var in the last solution: after a milp_solve() that
 * reported MILP_OPTIMAL or MILP_FEASIBLE, and before @p is changed.
 * Integer variables take exact integer values. NAN otherwise, or when
 * @var is out of range.
 */
double milp_value(const struct milp *p, int var);

/** Objective value of the last solution; NAN when there is none (see milp_value()). */
double milp_objective(const struct milp *p);
