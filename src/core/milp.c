#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glpk.h>

#include "plan/milp.h"

const char *const milp_status_names[] = {
	"optimal", "feasible", "infeasible", "unbounded", "no solution", NULL
};

struct milp_var {
	enum milp_kind kind;
	double lo, hi, cost;
	char *name;
};

struct milp_row {
	size_t start; /* first entry in milp.ind / milp.val */
	int n;
	double lo, hi;
	char *name;
};

struct milp {
	struct milp_var *vars;
	int nvars;
	size_t vars_cap;
	unsigned char *mark; /* one per variable; all 0 outside milp_add_row */
	size_t mark_cap;
	struct milp_row *rows;
	int nrows;
	size_t rows_cap;
	int *ind;      /* 0-based variable indices of all rows, row after row */
	size_t ind_cap;
	double *val;
	size_t val_cap;
	size_t nnz;
	int max_row;   /* longest row, to size GLPK's 1-based buffers */

	bool has_solution;
	double *x;     /* nvars values when has_solution */
	double objective;
};

/* GLPK counts rows, columns and matrix entries in ints, 1-based. */
#define MILP_MAX_COUNT (INT_MAX - 1)

/*
 * Make room for @need elements of @size bytes in @array, of *@cap now.
 * Returns the array, moved perhaps, or NULL (leaving it as it was).
 */
static void *
grow(void *array, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;
	void *q;

	if (need == 0)
		need = 1; /* so that NULL always means failure */
	if (need <= *cap)
		return array;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : 2 * n;
	if (n > SIZE_MAX / size)
		return NULL;
	q = realloc(array, n * size);
	if (q)
		*cap = n;
	return q;
}

static char *
copy_name(const char *name, bool *ok)
{
	char *s;

	*ok = true;
	if (!name)
		return NULL;
	s = strdup(name);
	if (!s)
		*ok = false;
	return s;
}

/* A variable or row in messages: its name, or '#index'. */
static const char *
label(const char *name, int index, char *buf, size_t size)
{
	if (name)
		return name;
	snprintf(buf, size, "#%d", index);
	return buf;
}

static void
drop_solution(struct milp *p)
{
	p->has_solution = false;
}

struct milp *
milp_new(struct plan_error *err)
{
	struct milp *p = calloc(1, sizeof(*p));

	if (!p)
		plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	return p;
}

void
milp_free(struct milp *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->nvars; i++)
		free(p->vars[i].name);
	for (i = 0; i < p->nrows; i++)
		free(p->rows[i].name);
	free(p->vars);
	free(p->rows);
	free(p->ind);
	free(p->val);
	free(p->mark);
	free(p->x);
	free(p);
}

int
milp_num_vars(const struct milp *p)
{
	return p->nvars;
}

int
milp_num_rows(const struct milp *p)
{
	return p->nrows;
}

int
milp_add_var(struct milp *p, enum milp_kind kind, double lo, double hi,
	     double cost, const char *name, struct plan_error *err)
{
	struct milp_var *v;
	void *q;
	size_t mcap;
	bool ok;
	char buf[32];
	const char *who = label(name, p->nvars, buf, sizeof(buf));

	if (kind != MILP_CONTINUOUS && kind != MILP_INTEGER && kind != MILP_BINARY) {
		plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
			       "invalid kind %d for variable '%s'", (int)kind, who);
		return -1;
	}
	if (isnan(lo) || isnan(hi) || lo == INFINITY || hi == -INFINITY || lo > hi) {
		plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
			       "invalid bounds [%g, %g] for variable '%s'", lo, hi, who);
		return -1;
	}
	if (kind == MILP_BINARY && (lo < 0 || hi > 1)) {
		plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
			       "bounds [%g, %g] of binary variable '%s' are not within [0, 1]",
			       lo, hi, who);
		return -1;
	}
	if (!isfinite(cost)) {
		plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
			       "non-finite cost %g for variable '%s'", cost, who);
		return -1;
	}
	if (p->nvars >= MILP_MAX_COUNT) {
		plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0, "too many variables");
		return -1;
	}

	q = grow(p->vars, &p->vars_cap, (size_t)p->nvars + 1, sizeof(*p->vars));
	if (!q)
		goto nomem;
	p->vars = q;
	mcap = p->mark_cap;
	q = grow(p->mark, &p->mark_cap, (size_t)p->nvars + 1, sizeof(*p->mark));
	if (!q)
		goto nomem;
	p->mark = q;
	memset(p->mark + mcap, 0, p->mark_cap - mcap);
	v = &p->vars[p->nvars];
	v->name = copy_name(name, &ok);
	if (!ok)
		goto nomem;
	v->kind = kind;
	v->lo = lo;
	v->hi = hi;
	v->cost = cost;
	drop_solution(p);
	return p->nvars++;

nomem:
	plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	return -1;
}

/* Check the entries of a new row; mark[] is left all zero. */
static bool
check_row(struct milp *p, int n, const int *vars, const double *coefs,
	  const char *who, struct plan_error *err)
{
	char buf[32];
	int k, bad = -1;

	for (k = 0; k < n && bad < 0; k++) {
		int j = vars[k];

		if (j < 0 || j >= p->nvars) {
			plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				       "variable index %d out of range [0, %d) in row '%s'",
				       j, p->nvars, who);
			bad = k;
		} else if (p->mark[j]) {
			plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				       "variable '%s' appears twice in row '%s'",
				       label(p->vars[j].name, j, buf, sizeof(buf)), who);
			bad = k;
		} else if (!isfinite(coefs[k])) {
			plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				       "non-finite coefficient %g of variable '%s' in row '%s'",
				       coefs[k], label(p->vars[j].name, j, buf, sizeof(buf)), who);
			bad = k;
		} else {
			p->mark[j] = 1;
		}
	}
	/* Unmark what was marked: entries before the first bad one. */
	for (k = 0; k < (bad < 0 ? n : bad); k++)
		p->mark[vars[k]] = 0;
	return bad < 0;
}

bool
milp_add_row(struct milp *p, int n, const int *vars, const double *coefs,
	     double lo, double hi, const char *name, struct plan_error *err)
{
	struct milp_row *r;
	void *q;
	bool ok;
	char buf[32];
	const char *who = label(name, p->nrows, buf, sizeof(buf));
	int k;

	if (n < 0 || (n > 0 && (!vars || !coefs)))
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "invalid entries (%d) for row '%s'", n, who);
	if (isnan(lo) || isnan(hi) || lo == INFINITY || hi == -INFINITY || lo > hi)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "invalid bounds [%g, %g] for row '%s'", lo, hi, who);
	if (!check_row(p, n, vars, coefs, who, err))
		return false;
	if (p->nrows >= MILP_MAX_COUNT || (size_t)n > (size_t)MILP_MAX_COUNT - p->nnz)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0, "too many rows or entries");

	q = grow(p->rows, &p->rows_cap, (size_t)p->nrows + 1, sizeof(*p->rows));
	if (!q)
		goto nomem;
	p->rows = q;
	q = grow(p->ind, &p->ind_cap, p->nnz + (size_t)n, sizeof(*p->ind));
	if (!q)
		goto nomem;
	p->ind = q;
	q = grow(p->val, &p->val_cap, p->nnz + (size_t)n, sizeof(*p->val));
	if (!q)
		goto nomem;
	p->val = q;
	r = &p->rows[p->nrows];
	r->name = copy_name(name, &ok);
	if (!ok)
		goto nomem;
	r->start = p->nnz;
	r->n = 0;
	r->lo = lo;
	r->hi = hi;
	/* Zero coefficients are left out (after the checks above). */
	for (k = 0; k < n; k++) {
		if (coefs[k] == 0)
			continue;
		p->ind[p->nnz] = vars[k];
		p->val[p->nnz] = coefs[k];
		p->nnz++;
		r->n++;
	}
	if (r->n > p->max_row)
		p->max_row = r->n;
	p->nrows++;
	drop_solution(p);
	return true;

nomem:
	return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
}

/*
 * Everything one solve needs, allocated before GLPK is entered so that
 * the error path (a longjmp out of GLPK) only has to free it.
 */
struct solve_ctx {
	jmp_buf jump;
	char glpk_msg[256];  /* what GLPK printed last: its error message */
	size_t msg_len;
	const struct milp *p;
	double time_limit_s;
	int *ind;            /* 1-based, max_row + 1 */
	double *val;
	double *x;           /* the solution, nvars */
	int ret;             /* glp_intopt's return code */
	int mip_stat;        /* glp_mip_status */
	bool unbounded;      /* the feasibility re-solve found a solution */
};

/* glp_term_hook: keep GLPK's output (only an error message can come,
 * since msg_lev is off) and keep it off stdout. */
static int
on_glpk_output(void *info, const char *s)
{
	struct solve_ctx *c = info;
	size_t n = strlen(s), room = sizeof(c->glpk_msg) - 1 - c->msg_len;

	if (n > room)
		n = room;
	memcpy(c->glpk_msg + c->msg_len, s, n);
	c->msg_len += n;
	c->glpk_msg[c->msg_len] = '\0';
	return 1;
}

/* glp_error_hook: GLPK hit an internal error and would abort() when this
 * returns; its state is undefined, so leave for the setjmp in guarded(). */
static void
on_glpk_error(void *info)
{
	struct solve_ctx *c = info;

	longjmp(c->jump, 1);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int
limit_ms(double s)
{
	double ms;

	if (s == INFINITY)
		return INT_MAX;
	ms = ceil(s * 1000.0);
	if (ms < 1)
		return 1;
	return ms >= INT_MAX ? INT_MAX : (int)ms;
}

/* GLPK's bound type of [@lo, @hi] (GLP_DB needs lo < hi). */
static int
bounds_type(double lo, double hi)
{
	if (lo == -INFINITY && hi == INFINITY)
		return GLP_FR;
	if (hi == INFINITY)
		return GLP_LO;
	if (lo == -INFINITY)
		return GLP_UP;
	return lo == hi ? GLP_FX : GLP_DB;
}

static glp_prob *
build(struct solve_ctx *c)
{
	const struct milp *p = c->p;
	glp_prob *lp = glp_create_prob();
	int i, j, k;

	glp_set_obj_dir(lp, GLP_MIN);
	if (p->nvars > 0)
		glp_add_cols(lp, p->nvars);
	for (j = 0; j < p->nvars; j++) {
		const struct milp_var *v = &p->vars[j];
		double lo = v->lo, hi = v->hi;

		if (v->kind != MILP_CONTINUOUS) {
			/* glp_intopt rejects fractional bounds on integer columns. */
			lo = ceil(lo);
			hi = floor(hi);
		}
		glp_set_col_kind(lp, j + 1, v->kind == MILP_CONTINUOUS ? GLP_CV : GLP_IV);
		glp_set_col_bnds(lp, j + 1, bounds_type(lo, hi), lo, hi);
		glp_set_obj_coef(lp, j + 1, v->cost);
	}
	if (p->nrows > 0)
		glp_add_rows(lp, p->nrows);
	for (i = 0; i < p->nrows; i++) {
		const struct milp_row *r = &p->rows[i];

		glp_set_row_bnds(lp, i + 1, bounds_type(r->lo, r->hi), r->lo, r->hi);
		for (k = 0; k < r->n; k++) {
			c->ind[k + 1] = p->ind[r->start + (size_t)k] + 1;
			c->val[k + 1] = p->val[r->start + (size_t)k];
		}
		glp_set_mat_row(lp, i + 1, r->n, c->ind, c->val);
	}
	return lp;
}

static int
intopt(glp_prob *lp, double time_limit_s)
{
	glp_iocp parm;

	glp_init_iocp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	/* The presolver solves the LP relaxation itself (without it,
	 * glp_intopt needs an optimal basis first, else GLP_EROOT). */
	parm.presolve = GLP_ON;
	/* 0 (GLPK's default): stop only when optimality is proven. */
	parm.mip_gap = 0.0;
	parm.tm_lim = limit_ms(time_limit_s);
	return glp_intopt(lp, &parm);
}

/* All GLPK calls of a solve; an internal error longjmps out of here. */
static void
run_glpk(struct solve_ctx *c)
{
	const struct milp *p = c->p;
	double t0 = now_s();
	glp_prob *lp = build(c);
	int j;

	c->ret = intopt(lp, c->time_limit_s);
	c->mip_stat = glp_mip_status(lp);
	if (c->ret == GLP_ENODFS) {
		/*
		 * The LP relaxation is unbounded or infeasible, and the MIP may
		 * still be infeasible (integrality). Look for any solution: for
		 * rational data a feasible MIP with an unbounded relaxation is
		 * itself unbounded (Meyer, Math. Programming 7, 1974).
		 */
		for (j = 0; j < p->nvars; j++)
			glp_set_obj_coef(lp, j + 1, 0.0);
		c->ret = intopt(lp, fmax(c->time_limit_s - (now_s() - t0), 1e-3));
		c->mip_stat = glp_mip_status(lp);
		c->unbounded = c->mip_stat == GLP_OPT || c->mip_stat == GLP_FEAS;
		if (c->ret == GLP_ENODFS)
			c->ret = GLP_EFAIL; /* a zero objective is dual feasible */
	} else if (c->mip_stat == GLP_OPT || c->mip_stat == GLP_FEAS) {
		for (j = 0; j < p->nvars; j++)
			c->x[j] = glp_mip_col_val(lp, j + 1);
	}
	glp_delete_prob(lp);
}

static bool
guarded(struct solve_ctx *c)
{
	int out;

	if (setjmp(c->jump))
		return false;
	glp_error_hook(on_glpk_error, c);
	/* msg_lev off silences the solver, but GLPK's error handler turns
	 * terminal output back on: the hook keeps it off stdout. */
	out = glp_term_out(GLP_OFF);
	glp_term_hook(on_glpk_output, c);
	run_glpk(c);
	glp_term_hook(NULL, NULL);
	glp_term_out(out);
	glp_error_hook(NULL, NULL);
	return true;
}

/* Map glp_intopt's return code and glp_mip_status to a status. */
static bool
map_status(const struct solve_ctx *c, enum milp_status *status, struct plan_error *err)
{
	if (c->unbounded) {
		*status = MILP_UNBOUNDED;
		return true;
	}
	switch (c->ret) {
	case 0:
		switch (c->mip_stat) {
		case GLP_OPT:
			*status = MILP_OPTIMAL;
			return true;
		case GLP_FEAS: /* gap limit: not set, but a solution */
			*status = MILP_FEASIBLE;
			return true;
		case GLP_NOFEAS:
			*status = MILP_INFEASIBLE;
			return true;
		default:
			break;
		}
		break;
	case GLP_EMIPGAP:
	case GLP_ETMLIM:
		if (c->mip_stat == GLP_OPT || c->mip_stat == GLP_FEAS)
			*status = MILP_FEASIBLE;
		else
			*status = MILP_NO_SOLUTION;
		return true;
	case GLP_ENOPFS:
		*status = MILP_INFEASIBLE;
		return true;
	default:
		break;
	}
	return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
			      "the MILP solver failed (glpk return code %d, status %d): "
			      "numerical difficulties", c->ret, c->mip_stat);
}

/* Variables with no integer within their bounds make the problem
 * infeasible; GLPK would reject their rounded bounds (GLP_EBOUND). */
static bool
integer_bounds_empty(const struct milp *p)
{
	int j;

	for (j = 0; j < p->nvars; j++) {
		const struct milp_var *v = &p->vars[j];

		if (v->kind != MILP_CONTINUOUS && ceil(v->lo) > floor(v->hi))
			return true;
	}
	return false;
}

/* Without variables every row is the constant 0. */
static bool
empty_feasible(const struct milp *p)
{
	int i;

	for (i = 0; i < p->nrows; i++)
		if (p->rows[i].lo > 0 || p->rows[i].hi < 0)
			return false;
	return true;
}

/* Problems GLPK need not see: an integer variable with no integer
 * within its bounds, or no variables at all. True when *@status is set. */
static bool
solve_directly(struct milp *p, enum milp_status *status)
{
	if (integer_bounds_empty(p)) {
		*status = MILP_INFEASIBLE;
		return true;
	}
	if (p->nvars == 0) {
		/* GLPK has nothing to solve; answer directly. */
		*status = empty_feasible(p) ? MILP_OPTIMAL : MILP_INFEASIBLE;
		p->objective = 0.0;
		p->has_solution = *status == MILP_OPTIMAL;
		return true;
	}
	return false;
}

static void
solve_ctx_free(struct solve_ctx *c)
{
	if (c) {
		free(c->ind);
		free(c->val);
		free(c->x);
		free(c);
	}
}

/* The scratch of one solve: row buffers and the solution; NULL when
 * memory runs out. */
static struct solve_ctx *
solve_ctx_new(struct milp *p, double time_limit_s)
{
	struct solve_ctx *c = calloc(1, sizeof(*c));
	size_t nx = p->nvars > 0 ? (size_t)p->nvars : 1;

	if (!c || !(c->ind = malloc(((size_t)p->max_row + 1) * sizeof(*c->ind))) ||
	    !(c->val = malloc(((size_t)p->max_row + 1) * sizeof(*c->val))) ||
	    !(c->x = malloc(nx * sizeof(*c->x)))) {
		solve_ctx_free(c);
		return NULL;
	}
	c->p = p;
	c->time_limit_s = time_limit_s;
	return c;
}

/* GLPK's state is undefined after its error: the only way out is to
 * free all of it, glp_prob included. Returns false with the error. */
static bool
glpk_failed(struct solve_ctx *c, struct plan_error *err)
{
	char *nl;

	glp_free_env();
	nl = strchr(c->glpk_msg, '\n');
	if (nl)
		*nl = '\0';
	return plan_error_set(err, strstr(c->glpk_msg, "memory") ? PLAN_ERR_NOMEM : PLAN_ERR_INPUT,
			      NULL, 0, 0, "glpk error: %s", c->glpk_msg[0] ? c->glpk_msg : "unknown");
}

/* Move the solution of @c into @p. */
static void
keep_solution(struct milp *p, struct solve_ctx *c)
{
	/* Integer columns are within tol_int (1e-5) of an integer. */
	p->objective = 0.0;
	for (int j = 0; j < p->nvars; j++) {
		if (p->vars[j].kind != MILP_CONTINUOUS)
			c->x[j] = round(c->x[j]);
		p->objective += p->vars[j].cost * c->x[j];
	}
	free(p->x);
	p->x = c->x;
	c->x = NULL;
	p->has_solution = true;
}

/*
 * GLPK is reentrant only when it was built with thread-local storage
 * (GLPK's configure --enable-reentrant, a build option a distribution
 * may leave out): its calls take turns here, and only they, so that
 * searches on several threads (sweep --mode optimize) run everything
 * else in parallel.
 */
static pthread_mutex_t glpk_lock = PTHREAD_MUTEX_INITIALIZER;

bool
milp_solve(struct milp *p, double time_limit_s, enum milp_status *status,
	   struct plan_error *err)
{
	struct solve_ctx *c;
	int envret;
	bool ok;

	drop_solution(p);
	if (!status)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0, "no status to fill");
	if (isnan(time_limit_s) || time_limit_s <= 0)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "invalid time limit '%g'", time_limit_s);
	if (solve_directly(p, status))
		return true;
	c = solve_ctx_new(p, time_limit_s);
	if (!c)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	/* Create GLPK's environment here, where failure is a return code
	 * (1: it existed already) rather than an abort inside GLPK. */
	pthread_mutex_lock(&glpk_lock);
	envret = glp_init_env();
	if (envret != 0 && envret != 1)
		ok = plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0,
				    "cannot initialise glpk (code %d)", envret);
	else if (!guarded(c))
		ok = glpk_failed(c, err);
	else
		ok = map_status(c, status, err);
	pthread_mutex_unlock(&glpk_lock);
	if (ok && (*status == MILP_OPTIMAL || *status == MILP_FEASIBLE))
		keep_solution(p, c);
	solve_ctx_free(c);
	return ok;
}

void
milp_thread_release(void)
{
	/* 1 (no environment) is not an error here. */
	pthread_mutex_lock(&glpk_lock);
	(void)glp_free_env();
	pthread_mutex_unlock(&glpk_lock);
}

double
milp_value(const struct milp *p, int var)
{
	if (!p->has_solution || var < 0 || var >= p->nvars)
		return NAN;
	return p->x[var];
}

double
milp_objective(const struct milp *p)
{
	return p->has_solution ? p->objective : NAN;
}
