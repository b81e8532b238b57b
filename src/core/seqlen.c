/*
 * Sequence-length distributions and how micro-batches are formed from
 * them: padding (the expected longest of b draws through the CDF),
 * packing into rows of --seq-len, and DynaPipe's dynamic micro-batching
 * (Jiang et al., "Optimizing Multi-task Training through Dynamic
 * Pipelines", ASPLOS 2024, arXiv:2311.10418; the dynamic program over
 * consecutive splits of the sorted samples is that of its
 * dynapipe/data_opt/dp_helper.cpp, minimising
 *   (stages - 1) * t_max / v + sum_i t_i / d
 * for each candidate t_max, as ../shared/research/formulas.md gives it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/seqlen.h"

const char *const seqlen_batching_names[] = { "pad", "pack", "dynamic", NULL };
const char *const seqlen_pack_attention_names[] = { "full", "masked", NULL };

void
seqlen_dist_init(struct seqlen_dist *d)
{
	memset(d, 0, sizeof(*d));
}

void
seqlen_dist_release(struct seqlen_dist *d)
{
	free(d->length);
	free(d->count);
	seqlen_dist_init(d);
}

struct pair {
	int length;
	double count;
};

static int
cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return (x->length > y->length) - (x->length < y->length);
}

bool
seqlen_dist_build(struct seqlen_dist *d, const int *lengths, const double *counts, int n,
		  struct plan_error *err)
{
	struct pair *pairs;
	int k = 0;

	seqlen_dist_init(d);
	if (n < 1)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0, "no sequence lengths");
	for (int i = 0; i < n; i++)
		if (lengths[i] < 1 || lengths[i] > SEQLEN_MAX_LENGTH || !(counts[i] > 0) || !isfinite(counts[i]))
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "length %d with count %g: lengths are 1 to %d, counts positive",
					      lengths[i], counts[i], SEQLEN_MAX_LENGTH);
	pairs = malloc((size_t)n * sizeof(*pairs));
	if (!pairs)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	for (int i = 0; i < n; i++)
		pairs[i] = (struct pair){ lengths[i], counts[i] };
	qsort(pairs, (size_t)n, sizeof(*pairs), cmp_pair);
	for (int i = 0; i < n; i++) {
		if (k > 0 && pairs[k - 1].length == pairs[i].length)
			pairs[k - 1].count += pairs[i].count;
		else
			pairs[k++] = pairs[i];
	}
	if (k > SEQLEN_MAX_DISTINCT) {
		free(pairs);
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "%d distinct lengths, more than %d: bucket them", k, SEQLEN_MAX_DISTINCT);
	}
	d->length = malloc((size_t)k * sizeof(*d->length));
	d->count = malloc((size_t)k * sizeof(*d->count));
	if (!d->length || !d->count) {
		free(pairs);
		seqlen_dist_release(d);
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	}
	for (int i = 0; i < k; i++) {
		d->length[i] = pairs[i].length;
		d->count[i] = pairs[i].count;
		d->total += pairs[i].count;
	}
	d->n = k;
	free(pairs);
	return true;
}

double
seqlen_mean(const struct seqlen_dist *d)
{
	double s = 0.0;

	for (int k = 0; k < d->n; k++)
		s += d->count[k] * d->length[k];
	return s / d->total;
}

double
seqlen_mean_sq(const struct seqlen_dist *d)
{
	double s = 0.0;

	for (int k = 0; k < d->n; k++)
		s += d->count[k] * (double)d->length[k] * d->length[k];
	return s / d->total;
}

/* The expectation through the CDF: P(max <= L) = F(L)^b for b
 * independent draws, so P(max = L_k) = F(L_k)^b - F(L_{k-1})^b. */
void
seqlen_expected_max(const struct seqlen_dist *d, int b, double *emax, double *emax_sq, double *pmf)
{
	double cum = 0.0, prev = 0.0, e = 0.0, e2 = 0.0;

	for (int k = 0; k < d->n; k++) {
		double fb, p;

		cum += d->count[k];
		fb = k == d->n - 1 ? 1.0 : pow(cum / d->total, b);
		p = fb - prev;
		prev = fb;
		e += p * d->length[k];
		e2 += p * (double)d->length[k] * d->length[k];
		if (pmf)
			pmf[k] = p;
	}
	*emax = e;
	*emax_sq = e2;
}

bool
seqlen_pack(const struct seqlen_dist *d, int row_len, struct seqlen_pack_row *out, struct plan_error *err)
{
	int g = row_len > 4096 ? (row_len + 4095) / 4096 : 1;
	int top = row_len / g;
	double *t, *nd, *q;

	memset(out, 0, sizeof(*out));
	if (d->n < 1 || d->length[d->n - 1] > row_len)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "packing into rows of %d tokens needs every length at most that", row_len);
	t = calloc((size_t)top + 1, sizeof(*t));
	nd = calloc((size_t)top + 1, sizeof(*nd));
	q = calloc((size_t)top + 1, sizeof(*q));
	if (!t || !nd || !q) {
		free(t), free(nd), free(q);
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	}
	/* From the fullest row down: a document of l tokens (l/g grid
	 * steps, rounded up) goes in when it fits, else the row closes. */
	for (int u = top; u >= 0; u--) {
		double tu = 0.0, nu = 0.0, qu = 0.0;

		for (int k = 0; k < d->n; k++) {
			int step = (d->length[k] + g - 1) / g;
			double p = d->count[k] / d->total, l = d->length[k];

			if (u + step > top)
				break; /* ascending: no longer one fits either */
			tu += p * (l + t[u + step]);
			nu += p * (1.0 + nd[u + step]);
			qu += p * (l * l + q[u + step]);
		}
		t[u] = tu;
		nd[u] = nu;
		q[u] = qu;
	}
	out->tokens = t[0];
	out->waste = row_len - t[0];
	out->documents = nd[0];
	out->sum_sq = q[0];
	free(t), free(nd), free(q);
	return true;
}

void
seqlen_quantiles(const struct seqlen_dist *d, int n, int *out)
{
	double cum = d->n > 0 ? d->count[0] : 0.0;
	int k = 0;

	for (int i = 0; i < n; i++) {
		double q = (i + 0.5) / n * d->total;

		while (cum < q && k < d->n - 1)
			cum += d->count[++k];
		out[i] = d->length[k];
	}
}

/* ------------------------------------------------ the dynamic program */

/* The micro-batches that end at one padded length: their times by size,
 * computed as the program asks, up to the first size that does not fit
 * (memory grows with the size: the larger ones do not fit either). */
struct cost_row {
	int len;
	int computed;   /* sizes 1 .. computed are known */
	int limit;      /* the first size that does not fit; n + 1 while none */
	double *time;   /* by size, [1 .. computed] */
};

struct dyn {
	int n;
	const int *rl;    /* the rounded lengths */
	int *row_of;      /* sample -> row */
	struct cost_row *rows;
	int nrows;
	seqlen_cost_fn *cost;
	void *ctx;
};

/* The time of @b samples ending at sample @end - 1, or -1 when it does not fit. */
static bool
dyn_time(struct dyn *x, int end, int b, double *t, struct plan_error *err)
{
	struct cost_row *r = &x->rows[x->row_of[end - 1]];

	while (r->computed < b && r->computed + 1 < r->limit) {
		bool fits;
		double s;

		if (!x->cost(x->ctx, r->computed + 1, r->len, &s, &fits, err))
			return false;
		if (!fits) {
			r->limit = r->computed + 1;
			break;
		}
		r->time[++r->computed] = s;
	}
	*t = b < r->limit ? r->time[b] : -1.0;
	return true;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
dyn_free(struct dyn *x)
{
	for (int i = 0; x->rows && i < x->nrows; i++)
		free(x->rows[i].time);
	free(x->rows);
	free(x->row_of);
}

static bool
dyn_setup(struct dyn *x, const int *rl, int n, seqlen_cost_fn *cost, void *ctx, struct plan_error *err)
{
	memset(x, 0, sizeof(*x));
	x->n = n;
	x->rl = rl;
	x->cost = cost;
	x->ctx = ctx;
	x->row_of = malloc((size_t)n * sizeof(*x->row_of));
	x->rows = calloc((size_t)n, sizeof(*x->rows));
	if (!x->row_of || !x->rows)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	for (int i = 0; i < n; i++) {
		if (i == 0 || rl[i] != rl[i - 1]) {
			struct cost_row *r = &x->rows[x->nrows++];

			r->len = rl[i];
			r->limit = n + 1;
			r->time = malloc((size_t)(n + 1) * sizeof(*r->time));
			if (!r->time)
				return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
		}
		x->row_of[i] = x->nrows - 1;
	}
	return true;
}

/* The least sum of times that splits the first @n samples with every
 * micro-batch at most @tmax, its split points into @from (f[k] comes
 * from from[k]); infinity when none. */
static double
dyn_program(struct dyn *x, double tmax, double *f, int *from)
{
	f[0] = 0.0;
	for (int e = 1; e <= x->n; e++) {
		const struct cost_row *r = &x->rows[x->row_of[e - 1]];
		int bmax = r->limit - 1 < r->computed ? r->limit - 1 : r->computed;

		f[e] = INFINITY;
		from[e] = -1;
		for (int b = 1; b <= bmax && b <= e; b++) {
			double t = r->time[b], v;

			if (t > tmax || !isfinite(f[e - b]))
				continue;
			v = f[e - b] + t;
			if (v < f[e]) {
				f[e] = v;
				from[e] = e - b;
			}
		}
	}
	return f[x->n];
}

/* Price every micro-batch that fits: each end sample, sizes up to the
 * first that does not fit (dyn_time stops a row there). */
static bool
dyn_price_all(struct dyn *x, struct plan_error *err)
{
	for (int e = 1; e <= x->n; e++)
		for (int b = 1; b <= e; b++) {
			double t;

			if (!dyn_time(x, e, b, &t, err))
				return false;
			if (t < 0)
				break;
		}
	return true;
}

/* The t_max candidates: every priced micro-batch's time, sorted, those
 * within 1 % of the previous kept one merged into it, as DynaPipe merges
 * those within 5 ms (dp_helper.cpp); *@cand malloc'd, the caller frees it. */
static bool
dyn_candidates(const struct dyn *x, double **cand, size_t *kept, struct plan_error *err)
{
	size_t ncand = 0;
	double *c;

	*kept = 0;
	for (int r = 0; r < x->nrows; r++)
		ncand += (size_t)(x->rows[r].computed);
	c = *cand = malloc((ncand ? ncand : 1) * sizeof(*c));
	if (!c)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	ncand = 0;
	for (int r = 0; r < x->nrows; r++)
		for (int b = 1; b <= x->rows[r].computed; b++)
			c[ncand++] = x->rows[r].time[b];
	qsort(c, ncand, sizeof(*c), cmp_double);
	for (size_t i = 0; i < ncand; i++)
		if (*kept == 0 || c[i] > 1.01 * c[*kept - 1])
			c[(*kept)++] = c[i];
	return true;
}

/* Walk the split points of @from back from the end into @out, then
 * reverse them to run first to last. */
static void
dyn_walk(const struct dyn *x, const int *from, struct seqlen_mb *out, int *nout)
{
	for (int e = x->n; e > 0; e = from[e]) {
		struct seqlen_mb *mb = &out[(*nout)++];

		mb->first = from[e];
		mb->count = e - from[e];
		mb->padded_len = x->rl[e - 1];
		mb->time_s = x->rows[x->row_of[e - 1]].time[mb->count];
	}
	for (int i = 0; i < *nout / 2; i++) {
		struct seqlen_mb t = out[i];

		out[i] = out[*nout - 1 - i];
		out[*nout - 1 - i] = t;
	}
}

bool
seqlen_dynamic_split(const int *len, int n, int round, int stages, int v, int d, seqlen_cost_fn *cost,
		     void *ctx, struct seqlen_mb *out, int *nout, double *objective,
		     struct plan_error *err)
{
	struct dyn x;
	int *rl = malloc((size_t)n * sizeof(*rl)), *from = malloc(((size_t)n + 1) * sizeof(*from));
	int *best_from = malloc(((size_t)n + 1) * sizeof(*best_from));
	double *f = malloc(((size_t)n + 1) * sizeof(*f));
	double *cand = NULL, best = INFINITY;
	size_t kept = 0;
	bool ok = false;

	*nout = 0;
	*objective = INFINITY;
	memset(&x, 0, sizeof(x));
	if (!rl || !from || !best_from || !f) {
		plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
		goto done;
	}
	for (int i = 0; i < n; i++)
		rl[i] = (len[i] + round - 1) / round * round;
	if (!dyn_setup(&x, rl, n, cost, ctx, err) || !dyn_price_all(&x, err) ||
	    !dyn_candidates(&x, &cand, &kept, err))
		goto done;
	for (size_t i = 0; i < kept; i++) {
		double sum = dyn_program(&x, cand[i], f, from);
		double obj = (stages - 1) * cand[i] / v + sum / d;

		if (isfinite(sum) && obj < best) {
			best = obj;
			memcpy(best_from, from, ((size_t)n + 1) * sizeof(*from));
		}
	}
	if (!isfinite(best)) {
		plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
			       "no split of the batch into micro-batches fits in memory (one sequence of %d tokens "
			       "does not)", rl[n - 1]);
		goto done;
	}
	dyn_walk(&x, best_from, out, nout);
	*objective = best;
	ok = true;
done:
	dyn_free(&x);
	free(rl), free(from), free(best_from), free(f), free(cand);
	return ok;
}
