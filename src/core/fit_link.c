/*
 * collective.c's times are linear in three unknowns once the bandwidth
 * is written as its inverse: with x = 1/B and y = h/B (h the message
 * half size), ring_time() on one node is
 *   t = steps * alpha + factor * M * x                      (k = 1)
 * and across k nodes of p GPUs (n = k p ranks), where the NIC bounds it,
 *   t = (steps - s_k) * alpha_ring + s_k * alpha + factor (M + n h) / (p B)
 * because M / (B m / (m + h)) = M + n h for chunks of m = M / n
 * (nic_bw_msg(), Hockney's n_1/2); s_k = 2(k - 1) for all-reduce, k - 1
 * otherwise (NCCL's src/graph/tuning.cc, as collective.c says) and
 * alpha_ring the intra-node alpha floored at the network proxy's pace
 * (collective_ring_intra_step_s()); an all-reduce's latency terms,
 * fixed cost included, are multiplied by NCCL's plateau factor P when it
 * applies (collective_ring_plateau()), which keeps them linear:
 *   t = P (a + (steps - s_k) alpha_ring + s_k alpha) + factor (M + n h) / (p B).
 * The
 * all-to-all sends (n - p) / n of M over the NIC in chunks of M / n:
 *   t = a + (p - 1) alpha_intra + (n - p) alpha + (n - p) / n (M + n h) / B_a,
 * and on one node t = a + (n - 1) alpha + (n - 1) / n M / B_a, where B_a
 * is the link's all-to-all bandwidth (all_to_all_efficiency, collective.c:
 * NCCL has no all-to-all kernel, n - 1 sends share the channels). Among
 * other collectives the all-to-all points give B_a alone, x_a = 1/B_a the
 * one unknown of t - (the fitted latency terms) = x_a (bytes term), the
 * same weighted least squares; on their own they give the link's
 * latencies too, and B_a in the place of B.
 * steps and factor are nccl-tests' doc/PERFORMANCE.md bus-bandwidth
 * factors: 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
 * reduce-scatter and all-to-all, 1 for sendrecv. The fit is weighted
 * least squares on relative errors (each point weighted 1/t^2).
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "plan/collective.h"
#include "plan/fit_link.h"
#include "plan/fit_lsq.h"

const char *const fit_coll_names[] = {
	"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv", NULL,
};

const char *const fit_link_level_names[] = { "intra", "inter", NULL };

/* alpha, 1/B, h/B, and the fixed cost of a collective (intra fits only) */
enum { P_ALPHA, P_X, P_Y, P_A, P_COUNT };

/* One point's linear form: t = c + sum_j a[j] * theta[j]. */
struct row {
	double c, a[P_COUNT], t;
};

static void
ring_factors(int coll, int n, double *steps, double *factor)
{
	if (coll == FIT_COLL_ALLREDUCE) {
		*steps = 2.0 * (n - 1);
		*factor = 2.0 * (n - 1) / n;
	} else if (coll == FIT_COLL_SENDRECV) {
		*steps = 1.0;
		*factor = 1.0;
	} else {
		*steps = n - 1;
		*factor = (double)(n - 1) / n;
	}
}

static void
intra_row(const struct fit_link_point *p, struct row *r)
{
	double steps, factor;

	ring_factors(p->coll, p->ranks, &steps, &factor);
	r->a[P_ALPHA] = steps;
	r->a[P_X] = factor * p->bytes;
	/* A collective pays the fixed cost once; a send does not. */
	r->a[P_A] = p->coll == FIT_COLL_SENDRECV ? 0.0 : 1.0;
}

static void
inter_row(const struct fit_link_point *p, const struct cluster *base, struct row *r)
{
	int n = p->ranks, k = p->nodes, per = p->ranks / p->nodes;
	double alpha_intra = base->intra.latency_s, fixed = base->intra.collective_latency_s;
	double alpha_ring = collective_ring_intra_step_s(base, k);
	double steps, factor, s_k, plateau;

	if (p->coll == FIT_COLL_SENDRECV) {
		/* collective_p2p_time(): alpha + (M + h) / B. */
		r->a[P_ALPHA] = 1.0;
		r->a[P_X] = p->bytes;
		r->a[P_Y] = 1.0;
		return;
	}
	if (p->coll == FIT_COLL_ALLTOALL) {
		r->c = fixed + (per - 1) * alpha_intra;
		r->a[P_ALPHA] = n - per;
		r->a[P_X] = (double)(n - per) / n * p->bytes;
		r->a[P_Y] = n - per;
		return;
	}
	ring_factors(p->coll, n, &steps, &factor);
	s_k = (p->coll == FIT_COLL_ALLREDUCE ? 2.0 : 1.0) * (k - 1);
	plateau = collective_ring_plateau(base, p->coll == FIT_COLL_ALLREDUCE ? COLL_ALLREDUCE : COLL_ALLGATHER,
					  n, k, p->bytes);
	r->c = plateau * (fixed + (steps - s_k) * alpha_ring);
	r->a[P_ALPHA] = plateau * s_k;
	r->a[P_X] = factor * p->bytes / per;
	r->a[P_Y] = factor * n / per;
}

/* Whether the alpha column and column @j are proportional (cosine within 1e-9). */
static bool
collinear(const struct row *rows, int n, int j)
{
	double aa = 0.0, yy = 0.0, ay = 0.0;

	for (int i = 0; i < n; i++) {
		double w = 1.0 / (rows[i].t * rows[i].t);

		aa += w * rows[i].a[P_ALPHA] * rows[i].a[P_ALPHA];
		yy += w * rows[i].a[j] * rows[i].a[j];
		ay += w * rows[i].a[P_ALPHA] * rows[i].a[j];
	}
	return aa == 0.0 || yy == 0.0 || fabs(ay) / sqrt(aa * yy) > 1.0 - 1e-9;
}

/* The fit's unknowns: which are free, and what the fixed ones hold. */
struct unknowns {
	bool free[P_COUNT];
	bool y_negative;        /* y was freed, went negative and is held at 0 */
	bool a_negative;        /* the fixed cost was freed, went negative and is held at 0 */
	double h0;              /* the half size when y is not free */
	double a0;              /* the fixed cost when a is not free (the base's, or 0) */
	double theta[P_COUNT];  /* alpha, x, y, a */
	double cov[P_COUNT][P_COUNT];
};

/* Column @j of the design for point @r (alpha fixed at 0; y fixed as h0 x). */
static double
design(const struct row *r, const struct unknowns *u, int j)
{
	if (j == P_X && !u->free[P_Y])
		return r->a[P_X] + u->h0 * r->a[P_Y];
	return r->a[j];
}

static bool
solve(const struct row *rows, int n, struct unknowns *u)
{
	int map[P_COUNT], np = 0;
	double *X = malloc((size_t)n * P_COUNT * sizeof(*X));
	double *y = malloc((size_t)n * sizeof(*y)), *w = malloc((size_t)n * sizeof(*w));
	double theta[P_COUNT], cov[P_COUNT * P_COUNT];
	bool ok = X && y && w;

	for (int j = 0; j < P_COUNT; j++)
		if (u->free[j])
			map[np++] = j;
	for (int i = 0; ok && i < n; i++) {
		y[i] = rows[i].t - rows[i].c;
		w[i] = 1.0 / (rows[i].t * rows[i].t);
		for (int j = 0; j < np; j++)
			X[i * np + j] = design(&rows[i], u, map[j]);
	}
	ok = ok && fit_wlinear(X, y, w, n, np, theta, cov);
	memset(u->theta, 0, sizeof(u->theta));
	memset(u->cov, 0, sizeof(u->cov));
	for (int j = 0; ok && j < np; j++) {
		u->theta[map[j]] = theta[j];
		for (int l = 0; l < np; l++)
			u->cov[map[j]][map[l]] = cov[j * np + l];
	}
	free(X);
	free(y);
	free(w);
	return ok;
}

static bool
check_points(const struct fit_link_point *pts, int n, enum fit_link_level level, struct plan_error *err)
{
	for (int i = 0; i < n; i++) {
		const struct fit_link_point *p = &pts[i];

		if (p->coll < 0 || p->coll >= FIT_COLL_COUNT || p->ranks < 2 || p->nodes < 1 ||
		    p->ranks % p->nodes != 0 || !(p->bytes > 0) || !(p->time_s > 0) ||
		    !isfinite(p->bytes) || !isfinite(p->time_s))
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "point %d is not a collective of positive size and time on "
					      "2 or more ranks spread evenly over its nodes", i + 1);
		if (level == FIT_LINK_INTRA && p->nodes != 1)
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "an intra-node fit needs runs on one node; point %d spans %d nodes",
					      i + 1, p->nodes);
		if (level == FIT_LINK_INTER && p->nodes < 2)
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "an inter-node fit needs runs on 2 or more nodes; point %d is on one",
					      i + 1);
	}
	return true;
}

static int
count_free(const struct unknowns *u)
{
	return u->free[P_ALPHA] + u->free[P_X] + u->free[P_Y] + u->free[P_A];
}

/* Solve; a negative fixed cost, latency or half size is held at 0 and the rest refitted. */
static bool
solve_bounded(const struct row *rows, int n, struct unknowns *u, struct plan_error *err)
{
	for (;;) {
		if (n <= count_free(u))
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "%d points cannot give %d parameters and their errors "
					      "(give more message sizes)", n, count_free(u));
		if (!solve(rows, n, u))
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "the %d points cannot tell %d parameters apart "
					      "(give more distinct message sizes)", n, count_free(u));
		if (u->free[P_A] && u->theta[P_A] < 0)
			u->free[P_A] = false, u->a_negative = true;
		else if (u->free[P_ALPHA] && u->theta[P_ALPHA] < 0)
			u->free[P_ALPHA] = false;
		else if (u->free[P_Y] && u->theta[P_Y] < 0)
			u->free[P_Y] = false, u->h0 = 0.0, u->y_negative = true;
		else
			break;
	}
	if (!(u->theta[P_X] > 0) || !isfinite(u->theta[P_X]))
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "the times do not grow with the size: no bandwidth fits them");
	return true;
}

/* Bandwidth, latency and half size from (alpha, x, y) by the delta method. */
static void
convert(const struct unknowns *u, struct fit_link_result *out)
{
	double x = u->theta[P_X], y = u->theta[P_Y];

	out->latency_s = u->theta[P_ALPHA];
	out->latency_se = sqrt(fmax(u->cov[P_ALPHA][P_ALPHA], 0.0));
	out->latency_fitted = u->free[P_ALPHA];
	out->bandwidth_Bps = 1.0 / x;
	out->bandwidth_se = sqrt(fmax(u->cov[P_X][P_X], 0.0)) / (x * x);
	out->collective_latency_s = u->free[P_A] ? u->theta[P_A] : u->a0;
	out->collective_latency_se = u->free[P_A] ? sqrt(fmax(u->cov[P_A][P_A], 0.0)) : 0.0;
	out->collective_latency_fitted = u->free[P_A];
	out->collective_latency_negative = u->a_negative;
	out->half_size_fitted = u->free[P_Y];
	out->half_size_negative = u->y_negative;
	if (!u->free[P_Y]) {
		out->half_size_bytes = u->h0;
		out->half_size_se = 0.0;
		return;
	}
	out->half_size_bytes = y / x;
	out->half_size_se = sqrt(fmax(u->cov[P_Y][P_Y] / (x * x) + y * y * u->cov[P_X][P_X] / (x * x * x * x) -
				      2.0 * y * u->cov[P_X][P_Y] / (x * x * x), 0.0));
}

/*
 * The all-to-all bandwidth given the link's fit @u: one unknown x_a =
 * 1/B_a in t - c - alpha a_alpha - a a_a = x_a (a_x + h a_y), h the half
 * size the link has (@h).
 */
static bool
fit_a2a(const struct row *rows, int n, const struct unknowns *u, double h, struct fit_link_result *out,
	struct plan_error *err)
{
	double *X = malloc((size_t)n * sizeof(*X)), *y = malloc((size_t)n * sizeof(*y));
	double *w = malloc((size_t)n * sizeof(*w));
	double xa = 0.0, cov = 0.0;
	bool ok = X && y && w;

	for (int i = 0; ok && i < n; i++) {
		const struct row *r = &rows[i];

		X[i] = r->a[P_X] + h * r->a[P_Y];
		y[i] = r->t - r->c - u->theta[P_ALPHA] * r->a[P_ALPHA] - u->theta[P_A] * r->a[P_A];
		w[i] = 1.0 / (r->t * r->t);
	}
	if (ok && n < 2)
		ok = plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				    "%d all-to-all point cannot give its bandwidth and its error "
				    "(give more message sizes)", n);
	else if (!ok)
		plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	else if (!fit_wlinear(X, y, w, n, 1, &xa, &cov) || !(xa > 0) || !isfinite(xa))
		ok = plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				    "the all-to-all times do not grow with the size beyond the fitted "
				    "latencies: no all-to-all bandwidth fits them");
	free(X);
	free(y);
	free(w);
	if (!ok)
		return false;
	out->a2a_bandwidth_Bps = 1.0 / xa;
	out->a2a_bandwidth_se = sqrt(fmax(cov, 0.0)) / (xa * xa);
	return true;
}

static void
score(const struct fit_link_point *pts, int n, const struct cluster *base, struct fit_link_result *out)
{
	struct cluster c = *base;

	c.gemm_interp = NULL; /* a copy for the links only: never released */
	fit_link_apply(out, &c);
	out->mape = out->max_abs_error = out->a2a_mape = 0.0;
	for (int i = 0; i < n; i++) {
		double e = fabs(fit_link_model_time(&c, &pts[i]) - pts[i].time_s) / pts[i].time_s;

		out->mape += e / n;
		out->max_abs_error = fmax(out->max_abs_error, e);
		if (pts[i].coll == FIT_COLL_ALLTOALL)
			out->a2a_mape += e / out->a2a_points;
	}
}

bool
fit_link(const struct fit_link_point *pts, int n, enum fit_link_level level,
	 const struct cluster *base, struct fit_link_result *out, struct plan_error *err)
{
	struct unknowns u = { .free = { true, true, level == FIT_LINK_INTER, level == FIT_LINK_INTRA },
			      .h0 = base->inter.half_size_bytes,
			      .a0 = level == FIT_LINK_INTER ? base->intra.collective_latency_s : 0.0 };
	struct row *rows, *a2a;
	int nlink = 0, na2a = 0, nfit;
	bool ok;

	memset(out, 0, sizeof(*out));
	out->level = level;
	out->points = n;
	if (n < 1)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0, "no points to fit");
	if (!check_points(pts, n, level, err))
		return false;
	rows = calloc((size_t)n, sizeof(*rows));
	if (!rows)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	for (int i = 0; i < n; i++)
		nlink += pts[i].coll != FIT_COLL_ALLTOALL;
	/* The link's rows first, the all-to-all rows after them. */
	a2a = rows + nlink;
	for (int i = 0; i < n; i++) {
		struct row *r = pts[i].coll == FIT_COLL_ALLTOALL ? &a2a[na2a++] : &rows[i - na2a];

		r->t = pts[i].time_s;
		if (level == FIT_LINK_INTRA)
			intra_row(&pts[i], r);
		else
			inter_row(&pts[i], base, r);
	}
	/* All-to-all points alone: they fit the link's latencies, and their
	 * bandwidth is all-to-all's. */
	nfit = nlink > 0 ? nlink : na2a;
	/* One node count: the latency and the half size add the same constant;
	 * one collective on one rank count: the latency and the fixed cost. */
	if (u.free[P_Y] && collinear(rows, nfit, P_Y))
		u.free[P_Y] = false;
	if (u.free[P_A] && collinear(rows, nfit, P_A))
		u.free[P_A] = false;
	ok = solve_bounded(rows, nfit, &u, err);
	if (ok && nlink > 0 && na2a > 0)
		ok = fit_a2a(a2a, na2a, &u, u.free[P_Y] ? u.theta[P_Y] / u.theta[P_X] : u.h0, out, err);
	free(rows);
	if (!ok)
		return false;
	out->params = count_free(&u) + (nlink > 0 && na2a > 0);
	convert(&u, out);
	out->a2a_points = na2a;
	out->bandwidth_fitted = nlink > 0;
	if (nlink == 0) {
		out->a2a_bandwidth_Bps = out->bandwidth_Bps;
		out->a2a_bandwidth_se = out->bandwidth_se;
		out->bandwidth_Bps = out->bandwidth_se = 0.0;
	}
	if (level == FIT_LINK_INTRA)
		out->half_size_bytes = base->inter.half_size_bytes;
	score(pts, n, base, out);
	return true;
}

/*
 * A link's line rate *@rate, efficiency *@eff and all_to_all_efficiency
 * *@a2a_eff (0: the efficiency) from fitted bandwidths: the line rate is
 * raised to the fastest fitted one if it is above it, each fitted
 * bandwidth is its efficiency of that rate, and one not fitted keeps its
 * bandwidth. No line rate (fit-logs without --cluster) and no ring fit:
 * efficiency 1, the fitted all-to-all bandwidth as the rate.
 */
static void
split_rate(const struct fit_link_result *r, double *rate, double *eff, double *a2a_eff)
{
	double old = *rate, line = *rate;

	if (r->bandwidth_fitted)
		line = fmax(line, r->bandwidth_Bps);
	if (r->a2a_points > 0)
		line = fmax(line, r->a2a_bandwidth_Bps);
	if (r->bandwidth_fitted)
		*eff = r->bandwidth_Bps / line;
	else if (old > 0)
		*eff *= old / line;
	else
		*eff = 1.0;
	if (r->a2a_points > 0)
		*a2a_eff = r->a2a_bandwidth_Bps / line;
	else if (*a2a_eff > 0 && old > 0)
		*a2a_eff *= old / line;
	*rate = line;
}

/*
 * An intra-node fit gives the fixed cost of a collective too
 * (intra_node.collective_latency: the intercept of t = a + steps alpha +
 * bytes/B, which logs of collectives with different step counts tell
 * apart from alpha, as SimuMax's fits of nccl-tests do); an inter-node
 * fit keeps the base cluster's.
 */
void
fit_link_apply(const struct fit_link_result *r, struct cluster *c)
{
	double share;

	if (r->level == FIT_LINK_INTRA) {
		c->intra.collective_latency_s = r->collective_latency_s;
		split_rate(r, &c->intra.bandwidth_Bps, &c->intra.efficiency, &c->intra.all_to_all_efficiency);
		c->intra.latency_s = r->latency_s;
		return;
	}
	share = cluster_nic_share_Bps(c);
	split_rate(r, &share, &c->inter.efficiency, &c->inter.all_to_all_efficiency);
	if (share != cluster_nic_share_Bps(c))
		c->inter.nic_bandwidth_Bps = share * c->gpus_per_node / c->inter.nics_per_node;
	c->inter.latency_s = r->latency_s;
	c->inter.half_size_bytes = r->half_size_bytes;
}

double
fit_link_model_time(const struct cluster *c, const struct fit_link_point *p)
{
	static const enum coll_kind kinds[] = {
		[FIT_COLL_ALLREDUCE] = COLL_ALLREDUCE, [FIT_COLL_ALLGATHER] = COLL_ALLGATHER,
		[FIT_COLL_REDUCESCATTER] = COLL_REDUCESCATTER, [FIT_COLL_ALLTOALL] = COLL_ALLTOALL,
	};
	struct group_layout g = { p->ranks, p->ranks / p->nodes, p->nodes };

	if (p->coll == FIT_COLL_SENDRECV)
		return collective_p2p_time(c, p->nodes > 1, p->bytes);
	return collective_time(c, &g, kinds[p->coll], COLL_ALGO_RING, p->bytes);
}
