#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include <glpk.h>

#include "plan/milp.h"
#include "testutil.h"

/* Solutions are exact up to GLPK's tolerances (tol_bnd 1e-7). */
#define TOL 1e-6

static struct milp *
new_milp(void)
{
	struct plan_error err;
	struct milp *p;

	plan_error_clear(&err);
	p = milp_new(&err);
	ck_assert_msg(p != NULL, "%s", err.message);
	return p;
}

static int
add_var(struct milp *p, enum milp_kind kind, double lo, double hi, double cost)
{
	struct plan_error err;
	int j;

	plan_error_clear(&err);
	j = milp_add_var(p, kind, lo, hi, cost, NULL, &err);
	ck_assert_msg(j >= 0, "%s", err.message);
	return j;
}

static void
add_row(struct milp *p, int n, const int *vars, const double *coefs, double lo, double hi)
{
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert_msg(milp_add_row(p, n, vars, coefs, lo, hi, NULL, &err), "%s", err.message);
}

static enum milp_status
solve(struct milp *p, double limit_s)
{
	struct plan_error err;
	enum milp_status st = MILP_NO_SOLUTION;

	plan_error_clear(&err);
	ck_assert_msg(milp_solve(p, limit_s, &st, &err), "%s", err.message);
	return st;
}

/*
 * 0/1 knapsack, values 10, 13, 7, 8, weights 5, 6, 3, 4, capacity 10,
 * as a minimisation of minus the value. Pairs that fit: {0,2} 17 (w 8),
 * {0,3} 18 (w 9), {1,2} 20 (w 9), {1,3} 21 (w 10), {2,3} 15 (w 7); no
 * three items fit (the lightest three weigh 12). Optimum -21 with items
 * 1 and 3. The LP relaxation takes items 2 and 1 (the best value per
 * weight, 7/3 and 13/6) and one fifth of item 0: -22, so branching is
 * needed.
 */
static struct milp *
knapsack(void)
{
	static const double value[] = { 10, 13, 7, 8 }, weight[] = { 5, 6, 3, 4 };
	static const int vars[] = { 0, 1, 2, 3 };
	struct milp *p = new_milp();

	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(add_var(p, MILP_BINARY, 0, 1, -value[i]), i);
	add_row(p, 4, vars, weight, -INFINITY, 10);
	return p;
}

START_TEST(test_knapsack)
{
	struct milp *p = knapsack();
	static const double expect[] = { 0, 1, 0, 1 };

	ck_assert_int_eq(milp_num_vars(p), 4);
	ck_assert_int_eq(milp_num_rows(p), 1);
	ck_assert(isnan(milp_objective(p)));
	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq_tol(milp_objective(p), -21.0, TOL);
	for (int i = 0; i < 4; i++)
		ck_assert_double_eq(milp_value(p, i), expect[i]); /* rounded: exact */
	ck_assert(isnan(milp_value(p, -1)));
	ck_assert(isnan(milp_value(p, 4)));
	/* Solving again gives the same; changing the problem drops the solution. */
	ck_assert_int_eq(solve(p, 10.0), MILP_OPTIMAL);
	ck_assert_double_eq_tol(milp_objective(p), -21.0, TOL);
	add_var(p, MILP_CONTINUOUS, 0, 1, 0);
	ck_assert(isnan(milp_value(p, 0)));
	ck_assert(isnan(milp_objective(p)));
	milp_free(p);
}
END_TEST

/*
 * min 2x + 3y with 3x + 5y = 30 and x + y - s = 7 (x + y >= 7), x, y,
 * s >= 0 integers. 30 - 3x must be a multiple of 5, so x is a multiple
 * of 5: (0, 6) has x + y = 6 < 7, (5, 3) costs 19 (s = 1), (10, 0) 20.
 * Optimum 19 at (5, 3, 1); the LP relaxation gives 18.5 at (2.5, 4.5).
 */
START_TEST(test_equality_rows)
{
	struct milp *p = new_milp();
	int x = add_var(p, MILP_INTEGER, 0, INFINITY, 2);
	int y = add_var(p, MILP_INTEGER, 0, INFINITY, 3);
	int s = add_var(p, MILP_INTEGER, 0, INFINITY, 0);

	add_row(p, 2, (const int[]){ x, y }, (const double[]){ 3, 5 }, 30, 30);
	add_row(p, 3, (const int[]){ x, y, s }, (const double[]){ 1, 1, -1 }, 7, 7);
	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq_tol(milp_objective(p), 19.0, TOL);
	ck_assert_double_eq(milp_value(p, x), 5.0);
	ck_assert_double_eq(milp_value(p, y), 3.0);
	ck_assert_double_eq(milp_value(p, s), 1.0);
	milp_free(p);
}
END_TEST

/*
 * Integer bounds are rounded inwards: x in [0.5, 3.7] integer is
 * 1..3; min -x gives x = 3, and min x gives x = 1. Free variables:
 * min |z - 2.5| as min t with t >= z - 2.5, t >= 2.5 - z, z integer
 * and free: t = 0.5 at z = 2 or 3.
 */
START_TEST(test_bounds)
{
	struct milp *p = new_milp();
	int x = add_var(p, MILP_INTEGER, 0.5, 3.7, -1);

	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq(milp_value(p, x), 3.0);
	milp_free(p);

	p = new_milp();
	x = add_var(p, MILP_INTEGER, 0.5, 3.7, 1);
	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq(milp_value(p, x), 1.0);
	milp_free(p);

	p = new_milp();
	{
		int t = add_var(p, MILP_CONTINUOUS, -INFINITY, INFINITY, 1);
		int z = add_var(p, MILP_INTEGER, -INFINITY, INFINITY, 0);

		add_row(p, 2, (const int[]){ t, z }, (const double[]){ 1, -1 }, -2.5, INFINITY);
		add_row(p, 2, (const int[]){ t, z }, (const double[]){ 1, 1 }, 2.5, INFINITY);
		ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
		ck_assert_double_eq_tol(milp_value(p, t), 0.5, TOL);
		ck_assert(milp_value(p, z) == 2.0 || milp_value(p, z) == 3.0);
	}
	milp_free(p);

	/* A fixed variable (lo == hi) and an empty row that holds (0 in [-1, 1]). */
	p = new_milp();
	x = add_var(p, MILP_CONTINUOUS, 4.25, 4.25, 2);
	add_row(p, 0, NULL, NULL, -1, 1);
	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq_tol(milp_value(p, x), 4.25, TOL);
	ck_assert_double_eq_tol(milp_objective(p), 8.5, TOL);
	milp_free(p);
}
END_TEST

START_TEST(test_infeasible)
{
	struct milp *p = new_milp();
	int x = add_var(p, MILP_CONTINUOUS, -INFINITY, INFINITY, 1);

	/* x >= 3 and x <= 2. */
	add_row(p, 1, &x, (const double[]){ 1 }, 3, INFINITY);
	add_row(p, 1, &x, (const double[]){ 1 }, -INFINITY, 2);
	ck_assert_int_eq(solve(p, INFINITY), MILP_INFEASIBLE);
	ck_assert(isnan(milp_value(p, x)));
	ck_assert(isnan(milp_objective(p)));
	milp_free(p);

	/* Integrality alone: 2x = 3 has the LP solution 1.5, no integer one. */
	p = new_milp();
	x = add_var(p, MILP_INTEGER, 0, 10, 1);
	add_row(p, 1, &x, (const double[]){ 2 }, 3, 3);
	ck_assert_int_eq(solve(p, INFINITY), MILP_INFEASIBLE);
	milp_free(p);

	/* No integer within the bounds [0.2, 0.8]. */
	p = new_milp();
	add_var(p, MILP_INTEGER, 0.2, 0.8, 1);
	ck_assert_int_eq(solve(p, INFINITY), MILP_INFEASIBLE);
	milp_free(p);

	/* No variables: an empty row is 0, outside [1, 2]. */
	p = new_milp();
	add_row(p, 0, NULL, NULL, 1, 2);
	ck_assert_int_eq(solve(p, INFINITY), MILP_INFEASIBLE);
	milp_free(p);

	/* Nothing at all: optimal, objective 0. */
	p = new_milp();
	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq(milp_objective(p), 0.0);
	milp_free(p);
}
END_TEST

START_TEST(test_unbounded)
{
	struct milp *p = new_milp();
	int x = add_var(p, MILP_CONTINUOUS, 0, INFINITY, -1);
	int y = add_var(p, MILP_INTEGER, 0, INFINITY, 0);

	/* min -x with x - y <= 1: x grows with y. */
	add_row(p, 2, (const int[]){ x, y }, (const double[]){ 1, -1 }, -INFINITY, 1);
	ck_assert_int_eq(solve(p, INFINITY), MILP_UNBOUNDED);
	ck_assert(isnan(milp_objective(p)));
	milp_free(p);

	/* Unbounded integers: min -x - y with x = y. */
	p = new_milp();
	x = add_var(p, MILP_INTEGER, 0, INFINITY, -1);
	y = add_var(p, MILP_INTEGER, 0, INFINITY, -1);
	add_row(p, 2, (const int[]){ x, y }, (const double[]){ 1, -1 }, 0, 0);
	ck_assert_int_eq(solve(p, INFINITY), MILP_UNBOUNDED);
	milp_free(p);

	/* An unbounded LP relaxation but no integer solution (2z = 1):
	 * infeasible, not unbounded. */
	p = new_milp();
	x = add_var(p, MILP_CONTINUOUS, 0, INFINITY, -1);
	y = add_var(p, MILP_INTEGER, 0, 5, 0);
	add_row(p, 1, &y, (const double[]){ 2 }, 1, 1);
	ck_assert_int_eq(solve(p, INFINITY), MILP_INFEASIBLE);
	milp_free(p);
}
END_TEST

/*
 * Two machines, jobs of 7, 5, 4, 3, 3 (total 22): minimise the makespan
 * t, with y_j = 1 for a job on machine A: t >= sum d_j y_j and
 * t >= sum d_j (1 - y_j), i.e. t + sum d_j y_j >= 22. Lower bound 11,
 * reached by {7, 4} and {5, 3, 3}.
 */
START_TEST(test_minmax)
{
	static const double d[] = { 7, 5, 4, 3, 3 };
	struct milp *p = new_milp();
	int vars[6];
	double a[6], b[6], load = 0;
	int t = add_var(p, MILP_CONTINUOUS, 0, INFINITY, 1);

	vars[0] = t;
	a[0] = b[0] = 1;
	for (int j = 0; j < 5; j++) {
		vars[j + 1] = add_var(p, MILP_BINARY, 0, 1, 0);
		a[j + 1] = -d[j];
		b[j + 1] = d[j];
	}
	add_row(p, 6, vars, a, 0, INFINITY);   /* t - sum d_j y_j >= 0 */
	add_row(p, 6, vars, b, 22, INFINITY);  /* t + sum d_j y_j >= 22 */
	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq_tol(milp_objective(p), 11.0, TOL);
	ck_assert_double_eq_tol(milp_value(p, t), 11.0, TOL);
	for (int j = 0; j < 5; j++) {
		double y = milp_value(p, vars[j + 1]);

		ck_assert(y == 0.0 || y == 1.0);
		load += d[j] * y;
	}
	ck_assert_double_eq(load, 11.0);
	milp_free(p);
}
END_TEST

/* Each invalid call fails with PLAN_ERR_INPUT and leaves the problem as it was. */
START_TEST(test_invalid_input)
{
	struct milp *p = new_milp();
	struct plan_error err;
	enum milp_status st;
	int x, y;

	plan_error_clear(&err);
	x = milp_add_var(p, MILP_CONTINUOUS, 0, 10, -1, "x", &err);
	y = milp_add_var(p, MILP_INTEGER, 0, 10, -1, "y", &err);
	ck_assert_int_eq(err.kind, PLAN_ERR_NONE);

	static const struct {
		int n;
		int vars[3];
		double coefs[3];
		double lo, hi;
		const char *msg;
	} rows[] = {
		{ 2, { 0, 0 }, { 1, 1 }, 0, 1, "variable 'x' appears twice in row 'r'" },
		{ 3, { 1, 0, 1 }, { 1, 1, 1 }, 0, 1, "variable 'y' appears twice in row 'r'" },
		{ 1, { 2 }, { 1 }, 0, 1, "variable index 2 out of range [0, 2) in row 'r'" },
		{ 2, { 0, -1 }, { 1, 1 }, 0, 1, "variable index -1 out of range [0, 2) in row 'r'" },
		{ 2, { 0, 1 }, { 1, NAN }, 0, 1, "non-finite coefficient nan of variable 'y' in row 'r'" },
		{ 2, { 0, 1 }, { INFINITY, 1 }, 0, 1, "non-finite coefficient inf of variable 'x' in row 'r'" },
		{ 1, { 0 }, { 1 }, 2, 1, "invalid bounds [2, 1] for row 'r'" },
		{ 1, { 0 }, { 1 }, NAN, 1, "invalid bounds [nan, 1] for row 'r'" },
		{ 1, { 0 }, { 1 }, INFINITY, INFINITY, "invalid bounds [inf, inf] for row 'r'" },
		{ -1, { 0 }, { 1 }, 0, 1, "invalid entries (-1) for row 'r'" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		plan_error_clear(&err);
		ck_assert(!milp_add_row(p, rows[i].n, rows[i].vars, rows[i].coefs,
					rows[i].lo, rows[i].hi, "r", &err));
		ck_assert_int_eq(err.kind, PLAN_ERR_INPUT);
		ck_assert_str_eq(err.message, rows[i].msg);
		ck_assert_int_eq(milp_num_rows(p), 0);
	}
	plan_error_clear(&err);
	ck_assert(!milp_add_row(p, 1, NULL, NULL, 0, 1, NULL, &err));
	ck_assert_str_eq(err.message, "invalid entries (1) for row '#0'");

	static const struct {
		enum milp_kind kind;
		double lo, hi, cost;
		const char *msg;
	} vars[] = {
		{ MILP_CONTINUOUS, 3, 2, 0, "invalid bounds [3, 2] for variable 'v'" },
		{ MILP_INTEGER, NAN, 2, 0, "invalid bounds [nan, 2] for variable 'v'" },
		{ MILP_INTEGER, 0, -INFINITY, 0, "invalid bounds [0, -inf] for variable 'v'" },
		{ MILP_CONTINUOUS, 0, 1, NAN, "non-finite cost nan for variable 'v'" },
		{ MILP_CONTINUOUS, 0, 1, -INFINITY, "non-finite cost -inf for variable 'v'" },
		{ MILP_BINARY, 0, 2, 0, "bounds [0, 2] of binary variable 'v' are not within [0, 1]" },
		{ MILP_BINARY, -1, 1, 0, "bounds [-1, 1] of binary variable 'v' are not within [0, 1]" },
		{ (enum milp_kind)7, 0, 1, 0, "invalid kind 7 for variable 'v'" },
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		plan_error_clear(&err);
		ck_assert_int_eq(milp_add_var(p, vars[i].kind, vars[i].lo, vars[i].hi,
					      vars[i].cost, "v", &err), -1);
		ck_assert_int_eq(err.kind, PLAN_ERR_INPUT);
		ck_assert_str_eq(err.message, vars[i].msg);
		ck_assert_int_eq(milp_num_vars(p), 2);
	}

	plan_error_clear(&err);
	ck_assert(!milp_solve(p, NAN, &st, &err));
	ck_assert_int_eq(err.kind, PLAN_ERR_INPUT);
	ck_assert(!milp_solve(p, 0, &st, &err));
	ck_assert(!milp_solve(p, -1, &st, &err));
	ck_assert(!milp_solve(p, 1, NULL, &err));

	/* The failed rows left nothing behind: the same entries are fine
	 * now (no stale duplicate marks), and the problem solves:
	 * min -x - y with x + y <= 4.5, x <= 10, y integer: -4.5. */
	add_row(p, 2, (const int[]){ x, y }, (const double[]){ 1, 1 }, -INFINITY, 4.5);
	add_row(p, 2, (const int[]){ y, x }, (const double[]){ 0, 1 }, -INFINITY, 10);
	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq_tol(milp_objective(p), -4.5, TOL);
	milp_free(p);
	milp_free(NULL);
}
END_TEST

/* Run @fn(@p) with stdout sent to a temporary file; return its size. */
static long
stdout_bytes(bool (*fn)(struct milp *), struct milp *p, bool *ret)
{
	FILE *f = tmpfile();
	int saved;
	long size;

	ck_assert(f != NULL);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(f), STDOUT_FILENO), 0);
	*ret = fn(p);
	fflush(stdout);
	ck_assert_int_ge(dup2(saved, STDOUT_FILENO), 0);
	close(saved);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	fclose(f);
	return size;
}

static bool
solve_quietly(struct milp *p)
{
	struct plan_error err;
	enum milp_status st;

	plan_error_clear(&err);
	return milp_solve(p, INFINITY, &st, &err) && st == MILP_OPTIMAL;
}

START_TEST(test_silent)
{
	struct milp *p = knapsack();
	bool ok;

	ck_assert_int_eq(stdout_bytes(solve_quietly, p, &ok), 0);
	ck_assert(ok);
	ck_assert_double_eq_tol(milp_objective(p), -21.0, TOL);
	milp_free(p);
}
END_TEST

static bool
solve_glpk_error(struct milp *p)
{
	struct plan_error err;
	enum milp_status st;
	bool ok;

	/* GLPK's limit is 1 MB; its columns alone need more. */
	glp_mem_limit(1);
	plan_error_clear(&err);
	ok = milp_solve(p, INFINITY, &st, &err);
	ck_assert(!ok);
	ck_assert_int_eq(err.kind, PLAN_ERR_NOMEM);
	ck_assert_msg(strstr(err.message, "glpk error: ") == err.message &&
		      strstr(err.message, "memory allocation limit exceeded"), "%s", err.message);
	return ok;
}

/*
 * A GLPK internal error (its allocation limit exceeded) comes back as an
 * error, not abort(), prints nothing, and frees GLPK's environment (the
 * limit with it), so that the problem solves on the next try.
 */
START_TEST(test_glpk_error)
{
	struct milp *p = new_milp();
	bool ok;

	for (int j = 0; j < 50000; j++)
		add_var(p, MILP_INTEGER, 1, 5, 1.0 + (j % 3));
	ck_assert_int_eq(stdout_bytes(solve_glpk_error, p, &ok), 0);
	ck_assert(isnan(milp_objective(p)));
	/* At the lower bounds, costs 1, 2, 3 repeating: 16667 x 1 +
	 * 16667 x 2 + 16666 x 3 = 99999. */
	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq_tol(milp_objective(p), 99999.0, TOL);
	ck_assert_double_eq(milp_value(p, 49999), 1.0);
	milp_free(p);
}
END_TEST

/*
 * A multi-dimensional knapsack too large to finish in 50 ms: 300 items,
 * 20 capacity rows, values and weights from a fixed linear congruential
 * generator (GLPK proves no optimum in minutes: 10 s still end
 * "feasible"; with 0.05 s it stops with an incumbent, or without one
 * under valgrind). The status says that the time limit stopped the
 * search, whatever the machine's speed or load (no wall-clock check: a
 * limit that did not bind would run for minutes into the test's
 * timeout), and a solution (if any) obeys the rows.
 */
START_TEST(test_time_limit)
{
	enum { N = 300, M = 20 };
	static double w[M][N];
	struct milp *p = new_milp();
	int vars[N];
	unsigned long seed = 12345;
	enum milp_status st;

	for (int j = 0; j < N; j++) {
		seed = (seed * 1103515245UL + 12345UL) % 2147483648UL;
		vars[j] = add_var(p, MILP_BINARY, 0, 1, -(double)(10 + seed % 90));
	}
	for (int i = 0; i < M; i++) {
		double total = 0;

		for (int j = 0; j < N; j++) {
			seed = (seed * 1103515245UL + 12345UL) % 2147483648UL;
			w[i][j] = (double)(5 + seed % 95);
			total += w[i][j];
		}
		add_row(p, N, vars, w[i], -INFINITY, floor(total / 2));
	}
	st = solve(p, 0.05);
	ck_assert_msg(st == MILP_FEASIBLE || st == MILP_NO_SOLUTION, "status %s", milp_status_names[st]);
	if (st != MILP_NO_SOLUTION) {
		for (int i = 0; i < M; i++) {
			double used = 0, cap = 0;

			for (int j = 0; j < N; j++) {
				used += w[i][j] * milp_value(p, j);
				cap += w[i][j];
			}
			ck_assert(used <= floor(cap / 2) + TOL);
		}
	}
	milp_free(p);
}
END_TEST

/* Under valgrind: no leak after many problems, solved and freed. */
START_TEST(test_repeat)
{
	for (int k = 0; k < 1000; k++) {
		struct milp *p = knapsack();

		ck_assert_int_eq(solve(p, 1.0), MILP_OPTIMAL);
		ck_assert_double_eq_tol(milp_objective(p), -21.0, TOL);
		milp_free(p);
	}
}
END_TEST

START_TEST(test_names)
{
	struct plan_error err;
	char name[400];
	struct milp *p = new_milp();
	int x;

	ck_assert_str_eq(milp_status_names[MILP_OPTIMAL], "optimal");
	ck_assert_str_eq(milp_status_names[MILP_NO_SOLUTION], "no solution");
	ck_assert_ptr_null(milp_status_names[MILP_NO_SOLUTION + 1]);

	/* Names are ours, never GLPK's (which refuses over 255 characters
	 * or control characters). */
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	name[10] = '\n';
	plan_error_clear(&err);
	x = milp_add_var(p, MILP_INTEGER, 0, 3, -1, name, &err);
	ck_assert_int_eq(x, 0);
	ck_assert(milp_add_row(p, 1, &x, (const double[]){ 1 }, 0, 2, name, &err));
	ck_assert_int_eq(solve(p, INFINITY), MILP_OPTIMAL);
	ck_assert_double_eq(milp_value(p, x), 2.0);
	ck_assert(!milp_add_row(p, 1, &x, (const double[]){ 1 }, 1, 0, "cap", &err));
	ck_assert_str_eq(err.message, "invalid bounds [1, 0] for row 'cap'");
	milp_free(p);
}
END_TEST

static Suite *
milp_suite(void)
{
	Suite *s = suite_create("milp");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_knapsack);
	tcase_add_test(tc, test_equality_rows);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_infeasible);
	tcase_add_test(tc, test_unbounded);
	tcase_add_test(tc, test_minmax);
	tcase_add_test(tc, test_invalid_input);
	tcase_add_test(tc, test_silent);
	tcase_add_test(tc, test_glpk_error);
	tcase_add_test(tc, test_time_limit);
	tcase_add_test(tc, test_repeat);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(milp_suite)
