#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan/compression.h"
#include "plan/compute.h"
#include "plan/milp.h"
#include "plan/search.h"
#include "plan/tensor_par.h"
#include "plan/topology.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
modes_allowed(const struct plan *shape, int *modes)
{
	int n = 0;

	modes[n++] = PLAN_RECOMPUTE_NONE;
	/* With fused attention, selective recompute is the same as none. */
	if (!shape->flash_attention)
		modes[n++] = PLAN_RECOMPUTE_SELECTIVE;
	modes[n++] = PLAN_RECOMPUTE_FULL;
	return n;
}

/* Keep @cand if it is better than the current best (smaller slot, then time). */
static void
consider(struct search_candidate *best, bool *found, const struct search_candidate *cand)
{
	if (!cand->est.fits)
		return;
	if (!*found || cand->est.details.slot_s < best->est.details.slot_s - 1e-12 ||
	    (fabs(cand->est.details.slot_s - best->est.details.slot_s) <= 1e-12 &&
	     cand->est.iteration_time_s < best->est.iteration_time_s)) {
		*best = *cand;
		*found = true;
	}
}

static bool
evaluate(const struct model *m, const struct cluster *c, const struct plan *p,
	 const struct compressor *cmp, const struct search_options *opt,
	 struct search_candidate *out, struct search_stats *st, struct plan_error *err)
{
	struct estimate_options eo = { opt->dp_algo, cmp };
	struct plan_error e2;

	plan_error_clear(&e2);
	st->evaluations++;
	out->plan = *p;
	out->compressor = (p->compress.tp || p->compress.pp || p->compress.dp) ? cmp : NULL;
	out->milp_slot_s = 0.0;
	if (!estimate_plan(m, c, p, &eo, &out->est, &e2)) {
		/* A layout the cost model refuses is not a candidate. */
		(void)err;
		memset(&out->est, 0, sizeof(out->est));
		return false;
	}
	return true;
}

/* Uniform layers (interleaving, or MoE layers every n-th): choose the
 * recompute mode and the compression scope by enumeration. */
static bool
inner_uniform(const struct model *m, const struct cluster *c, const struct plan *shape,
	      const struct compressor *cmp, const struct search_options *opt,
	      struct search_candidate *best, bool *found, struct search_stats *st,
	      struct plan_error *err)
{
	int modes[3], nm = modes_allowed(shape, modes);
	int scopes = cmp ? 4 : 1;
	struct search_candidate cand;

	for (int i = 0; i < nm; i++)
		for (int k = 0; k < scopes; k++) {
			struct plan p = *shape;

			p.custom_layers = p.custom_recompute = false;
			if (p.vpp == 1 && m->layers % p.pp) {
				/* Near-even: the first L mod p stages take one more. */
				p.custom_layers = true;
				p.stage_layers_count = p.pp;
				for (int s = 0; s < p.pp; s++)
					p.stage_layers[s] = (short)(m->layers / p.pp + (s < m->layers % p.pp));
			}
			p.recompute = modes[i];
			p.compress.tp = (k & 1) && p.tp > 1;
			p.compress.pp = (k & 2) && p.pp > 1;
			if (k && !p.compress.tp && !p.compress.pp)
				continue;
			p.compress.from_layer = -1;
			if (p.compress.tp && opt->max_compressed_layers >= 0 &&
			    m->layers - m->layers / 2 > opt->max_compressed_layers)
				p.compress.from_layer = m->layers - opt->max_compressed_layers;
			if (evaluate(m, c, &p, cmp, opt, &cand, st, err))
				consider(best, found, &cand);
		}
	return true;
}

/* Turn the MILP's (or the enumeration's) choices into a plan. */
static void
layout_plan(const struct model *m, struct plan *p, const int *layers, const int *modes,
	    int tp_from_stage, int pp_from_stage)
{
	int first = 1;

	p->custom_layers = p->custom_recompute = true;
	for (int s = 0; s < p->pp; s++) {
		p->stage_layers[s] = (short)layers[s];
		p->stage_recompute[s] = (signed char)modes[s];
		if (s == tp_from_stage)
			p->compress.from_layer = first - 1;
		first += layers[s];
	}
	p->stage_layers_count = p->stage_recompute_count = p->pp;
	p->recompute = modes[0];
	p->compress.tp = tp_from_stage < p->pp;
	if (!p->compress.tp)
		p->compress.from_layer = -1;
	p->compress.pp = pp_from_stage < p->pp;
	p->compress.from_stage = p->compress.pp ? pp_from_stage : 0;
	(void)m;
}

/*
 * Among layouts of equal slot the MILP may keep recomputation that no
 * memory limit asks for; drop it stage by stage (full, then selective)
 * while the plan fits and its slot does not grow.
 */
static void
relax_recompute(const struct model *m, const struct cluster *c, const struct compressor *cmp,
		const struct search_options *opt, struct search_candidate *cand,
		struct search_stats *st, struct plan_error *err)
{
	for (int s = 0; s < cand->plan.pp; s++) {
		while (cand->plan.stage_recompute[s] > PLAN_RECOMPUTE_NONE) {
			struct search_candidate *trial = malloc(sizeof(*trial));
			struct plan p = cand->plan;
			bool better;

			if (!trial)
				return;
			p.stage_recompute[s]--;
			if (p.stage_recompute[s] == PLAN_RECOMPUTE_SELECTIVE && p.flash_attention)
				p.stage_recompute[s]--;
			better = evaluate(m, c, &p, cmp, opt, trial, st, err) && trial->est.fits &&
				 trial->est.details.slot_s <= cand->est.details.slot_s * (1 + 1e-12) &&
				 trial->est.iteration_time_s <= cand->est.iteration_time_s * (1 + 1e-12);
			if (better) {
				trial->milp_slot_s = cand->milp_slot_s;
				*cand = *trial;
			}
			free(trial);
			if (!better)
				break;
		}
	}
	if (cand->plan.custom_recompute)
		cand->plan.recompute = cand->plan.stage_recompute[0];
}

/* Column indices of the MILP, per stage. */
struct cols {
	int y[3], z[3], w[3], cflag, bflag;
};

static bool
inner_milp(const struct model *m, const struct cluster *c, const struct plan *shape,
	   const struct compressor *cmp, const struct search_options *opt,
	   struct search_candidate *best, bool *found, struct search_stats *st,
	   struct plan_error *err)
{
	struct estimate_options eo = { opt->dp_algo, cmp };
	int P = shape->pp, L = m->layers, modes[3], nm = modes_allowed(shape, modes);
	bool tpc = cmp && shape->tp > 1, ppc = cmp && P > 1;
	struct estimate_stage_coefs *k = NULL;
	struct cols *col = NULL;
	struct milp *mp = NULL;
	struct plan probe = *shape;
	enum milp_status status;
	/* GLPK works best on numbers near 1: time in ms, memory in GiB. */
	const double TS = 1e3, MS = 1.0 / 1073741824.0;
	double cap = c->gpu.memory_bytes * MS;
	int tau, ok = false;

	probe.compress.tp = tpc;
	probe.compress.pp = ppc;
	probe.compress.from_layer = 0;
	k = calloc((size_t)P, sizeof(*k));
	col = calloc((size_t)P, sizeof(*col));
	if (!k || !col) {
		plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	{
		struct plan_error e2;

		plan_error_clear(&e2);
		if (!estimate_stage_coefs(m, c, &probe, &eo, k, &e2)) {
			ok = true; /* a shape the cost model refuses: no candidate */
			goto out;
		}
	}
	mp = milp_new(err);
	if (!mp)
		goto out;
	tau = milp_add_var(mp, MILP_CONTINUOUS, 0.0, INFINITY, 1.0, "slot", err);
	if (tau < 0)
		goto out;
	for (int s = 0; s < P; s++) {
		for (int i = 0; i < nm; i++) {
			col[s].y[i] = milp_add_var(mp, MILP_BINARY, 0, 1, 0, "y", err);
			col[s].z[i] = milp_add_var(mp, MILP_INTEGER, 0, L, 0, "z", err);
			col[s].w[i] = tpc ? milp_add_var(mp, MILP_INTEGER, 0, L, 0, "w", err) : -1;
			if (col[s].y[i] < 0 || col[s].z[i] < 0 || (tpc && col[s].w[i] < 0))
				goto out;
		}
		col[s].cflag = tpc ? milp_add_var(mp, MILP_BINARY, 0, 1, 0, "c", err) : -1;
		col[s].bflag = ppc ? milp_add_var(mp, MILP_BINARY, 0, 1, 0, "b", err) : -1;
		if ((tpc && col[s].cflag < 0) || (ppc && col[s].bflag < 0))
			goto out;
	}
	{
		int all_z[3 * PLAN_MAX_STAGES], nz = 0, budget_w[3 * PLAN_MAX_STAGES], nw = 0;
		double ones[3 * PLAN_MAX_STAGES];

		for (int i = 0; i < 3 * PLAN_MAX_STAGES; i++)
			ones[i] = 1.0;
		for (int s = 0; s < P; s++) {
			int v[16], n = 0;
			double a[16];
			const struct estimate_stage_coefs *q = &k[s];

			/* One recompute mode per stage; its layers; at least one layer. */
			for (int i = 0; i < nm; i++)
				v[i] = col[s].y[i];
			if (!milp_add_row(mp, nm, v, ones, 1, 1, "mode", err))
				goto out;
			for (int i = 0; i < nm; i++) {
				int vv[2] = { col[s].z[i], col[s].y[i] };
				double aa[2] = { 1.0, -L };

				if (!milp_add_row(mp, 2, vv, aa, -INFINITY, 0, "zy", err))
					goto out;
				all_z[nz++] = col[s].z[i];
				v[i] = col[s].z[i];
			}
			if (!milp_add_row(mp, nm, v, ones, 1, INFINITY, "nonempty", err))
				goto out;
			/* w = z if the stage's TP is compressed, else 0. */
			if (tpc) {
				for (int i = 0; i < nm; i++) {
					int a1[2] = { col[s].w[i], col[s].z[i] }, a2[2] = { col[s].w[i], col[s].cflag };
					int a3[3] = { col[s].z[i], col[s].w[i], col[s].cflag };
					double c1[2] = { 1, -1 }, c2[2] = { 1, -L }, c3[3] = { 1, -1, L };

					if (!milp_add_row(mp, 2, a1, c1, -INFINITY, 0, "w<=z", err) ||
					    !milp_add_row(mp, 2, a2, c2, -INFINITY, 0, "w<=Lc", err) ||
					    !milp_add_row(mp, 3, a3, c3, -INFINITY, L, "w>=z-L(1-c)", err))
						goto out;
					budget_w[nw++] = col[s].w[i];
				}
				/* Compression covers a suffix of the layers (MCBench's
				 * --start-tensor-compress-layer): stages from one on. */
				if (s + 1 < P) {
					int a[2] = { col[s].cflag, col[s + 1].cflag };
					double cc[2] = { 1, -1 };

					if (!milp_add_row(mp, 2, a, cc, -INFINITY, 0, "suffix", err))
						goto out;
				}
			}
			if (ppc && s + 1 < P) {
				int a[2] = { col[s].bflag, col[s + 1].bflag };
				double cc[2] = { 1, -1 };

				if (!milp_add_row(mp, 2, a, cc, -INFINITY, 0, "pp-suffix", err))
					goto out;
			}
			/* slot >= stage time */
			n = 0;
			v[n] = tau;
			a[n++] = 1.0;
			for (int i = 0; i < nm; i++) {
				v[n] = col[s].z[i];
				a[n++] = -TS * q->time_layer[modes[i]][0];
				if (tpc) {
					v[n] = col[s].w[i];
					a[n++] = -TS * (q->time_layer[modes[i]][1] - q->time_layer[modes[i]][0]);
				}
			}
			if (ppc) {
				v[n] = col[s].bflag;
				a[n++] = -TS * (q->time_fixed[1] - q->time_fixed[0]);
			}
			if (!milp_add_row(mp, n, v, a, TS * q->time_fixed[0], INFINITY, "slot", err))
				goto out;
			/* memory of the stage */
			n = 0;
			for (int i = 0; i < nm; i++) {
				v[n] = col[s].z[i];
				a[n++] = MS * q->mem_layer[modes[i]][0];
				v[n] = col[s].y[i];
				a[n++] = MS * q->mem_fixed[modes[i]][0];
				if (tpc) {
					v[n] = col[s].w[i];
					a[n++] = MS * (q->mem_layer[modes[i]][1] - q->mem_layer[modes[i]][0]);
				}
			}
			if (ppc) {
				v[n] = col[s].bflag;
				a[n++] = MS * (q->mem_fixed[modes[0]][1] - q->mem_fixed[modes[0]][0]);
			}
			if (!milp_add_row(mp, n, v, a, -INFINITY, cap, "memory", err))
				goto out;
		}
		if (!milp_add_row(mp, nz, all_z, ones, L, L, "layers", err))
			goto out;
		/* Only a layout that can enter the top list matters: its
		 * pipeline alone must beat the current k-th best time. */
		if (st->cutoff_s > 0) {
			double slots = plan_microbatches(shape) + (double)(P - 1) / shape->vpp;
			double one = 1.0;

			if (!milp_add_row(mp, 1, &tau, &one, -INFINITY, TS * st->cutoff_s / slots, "cutoff", err))
				goto out;
		}
		if (tpc && opt->max_compressed_layers >= 0 &&
		    !milp_add_row(mp, nw, budget_w, ones, -INFINITY, opt->max_compressed_layers, "budget", err))
			goto out;
	}
	if (!milp_solve(mp, opt->time_limit_s > 0 ? opt->time_limit_s : SEARCH_DEFAULT_TIME_LIMIT_S, &status, err)) {
		err->kind = err->kind == PLAN_ERR_NOMEM ? PLAN_ERR_NOMEM : PLAN_ERR_IO; /* the solver failed */
		goto out;
	}
	st->milps++;
	if (status == MILP_FEASIBLE)
		st->milp_timeouts++;
	if (status == MILP_INFEASIBLE && st->cutoff_s > 0)
		st->cut++;
	if (status == MILP_NO_SOLUTION) {
		/* Out of time before any layout: do not conclude that nothing
		 * fits; fall back to (near-)even layers. */
		st->milp_timeouts++;
		ok = inner_uniform(m, c, shape, cmp, opt, best, found, st, err);
		goto out;
	}
	if (status == MILP_OPTIMAL || status == MILP_FEASIBLE) {
		int layers[PLAN_MAX_STAGES], mode[PLAN_MAX_STAGES], tp_from = P, pp_from = P;
		struct plan p = *shape;
		struct search_candidate cand;

		for (int s = 0; s < P; s++) {
			layers[s] = 0;
			mode[s] = modes[0];
			for (int i = 0; i < nm; i++) {
				layers[s] += (int)lround(milp_value(mp, col[s].z[i]));
				if (milp_value(mp, col[s].y[i]) > 0.5)
					mode[s] = modes[i];
			}
			if (tpc && tp_from == P && milp_value(mp, col[s].cflag) > 0.5)
				tp_from = s;
			if (ppc && pp_from == P && milp_value(mp, col[s].bflag) > 0.5)
				pp_from = s;
		}
		layout_plan(m, &p, layers, mode, tp_from, pp_from);
		if (evaluate(m, c, &p, cmp, opt, &cand, st, err)) {
			double slot = milp_value(mp, tau) / TS;

			relax_recompute(m, c, cmp, opt, &cand, st, err);

			cand.milp_slot_s = slot;
			if (p.zero < 3 && cand.est.details.slot_s > 0) {
				double gap = fabs(slot - cand.est.details.slot_s) / cand.est.details.slot_s;

				if (gap > st->max_milp_gap)
					st->max_milp_gap = gap;
			}
			consider(best, found, &cand);
		}
	}
	ok = true;
out:
	milp_free(mp);
	free(k);
	free(col);
	return ok;
}

/* Every composition of L into P parts, every mode per stage, every pair
 * of compression suffixes: the reference for the MILP (small shapes). */
struct exh {
	const struct model *m;
	const struct cluster *c;
	const struct plan *shape;
	const struct compressor *cmp;
	const struct search_options *opt;
	struct search_candidate *best, cand;
	bool *found;
	struct search_stats *st;
	struct plan_error *err;
	int modes[3], nm;
	int layers[PLAN_MAX_STAGES], mode[PLAN_MAX_STAGES];
	bool tpc, ppc;
};

static void
exh_modes(struct exh *x, int s)
{
	int P = x->shape->pp;

	if (s < P) {
		for (int i = 0; i < x->nm; i++) {
			x->mode[s] = x->modes[i];
			exh_modes(x, s + 1);
		}
		return;
	}
	for (int tf = x->tpc ? 0 : P; tf <= P; tf++)
		for (int pf = x->ppc ? 0 : P; pf <= P; pf++) {
			struct plan p = *x->shape;
			int compressed = 0;

			layout_plan(x->m, &p, x->layers, x->mode, tf, pf);
			for (int i = tf; i < P; i++)
				compressed += x->layers[i];
			if (p.compress.tp && x->opt->max_compressed_layers >= 0 &&
			    compressed > x->opt->max_compressed_layers)
				continue;
			if (evaluate(x->m, x->c, &p, x->cmp, x->opt, &x->cand, x->st, x->err))
				consider(x->best, x->found, &x->cand);
		}
}

static void
exh_layers(struct exh *x, int s, int left)
{
	int P = x->shape->pp;

	if (s == P - 1) {
		x->layers[s] = left;
		exh_modes(x, 0);
		return;
	}
	for (int n = 1; n <= left - (P - 1 - s); n++) {
		x->layers[s] = n;
		exh_layers(x, s + 1, left - n);
	}
}

static bool
inner_exhaustive(const struct model *m, const struct cluster *c, const struct plan *shape,
		 const struct compressor *cmp, const struct search_options *opt,
		 struct search_candidate *best, bool *found, struct search_stats *st,
		 struct plan_error *err)
{
	struct exh x = { .m = m, .c = c, .shape = shape, .cmp = cmp, .opt = opt, .best = best,
			 .found = found, .st = st, .err = err };
	int P = shape->pp, L = m->layers;
	double count = 1.0;

	x.nm = modes_allowed(shape, x.modes);
	x.tpc = cmp && shape->tp > 1;
	x.ppc = cmp && P > 1;
	/* C(L-1, P-1) layouts x modes^P x (P+1)^2 suffixes. */
	for (int i = 1; i < P; i++)
		count = count * (L - i) / i;
	count *= pow(x.nm, P) * (x.tpc ? P + 1 : 1) * (x.ppc ? P + 1 : 1);
	if (count > 1e6) {
		/* Too many to enumerate: even layers and one mode for all stages. */
		st->truncated++;
		return inner_uniform(m, c, shape, cmp, opt, best, found, st, err);
	}
	exh_layers(&x, 0, L);
	return true;
}

bool
search_shape(const struct model *m, const struct cluster *c, const struct plan *shape,
	     const struct compressor *cmp, const struct search_options *opt, bool exhaustive,
	     struct search_candidate *best, bool *found, struct search_stats *stats,
	     struct plan_error *err)
{
	bool uniform = shape->vpp > 1 || (model_is_moe(m) && m->moe.every > 1);

	*found = false;
	if (uniform)
		return inner_uniform(m, c, shape, cmp, opt, best, found, stats, err);
	/* One stage: three recompute modes at most, with or without TP
	 * compression; enumerating them is exact (ZeRO-3's exposure too). */
	if (exhaustive || shape->pp == 1)
		return inner_exhaustive(m, c, shape, cmp, opt, best, found, stats, err);
	return inner_milp(m, c, shape, cmp, opt, best, found, stats, err);
}

/* One outer shape, with its lower bound. */
struct shape {
	struct plan plan;
	const struct compressor *cmp;
	double lower_bound;
};

struct shape_list {
	struct shape *v;
	long n, cap;
};

static bool
push(struct shape_list *l, const struct plan *p, const struct compressor *cmp, double lb,
     struct plan_error *err)
{
	if (l->n == l->cap) {
		long cap = l->cap ? 2 * l->cap : 256;
		struct shape *v = realloc(l->v, (size_t)cap * sizeof(*v));

		if (!v)
			return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].plan = *p;
	l->v[l->n].cmp = cmp;
	l->v[l->n].lower_bound = lb;
	l->n++;
	return true;
}

static int
by_bound(const void *a, const void *b)
{
	double x = ((const struct shape *)a)->lower_bound, y = ((const struct shape *)b)->lower_bound;

	return x < y ? -1 : x > y;
}

/*
 * A bound no layout of the shape can beat: the slot is at least the
 * average stage's share of one micro-batch's forward and backward (no
 * recomputation) and of the backward TP collectives, which compression
 * never touches (MCBench compresses the forward ones only); the pipeline
 * runs m + (p - 1)/v slots (Narayanan et al. SC21, Eq. 2).
 */
static double
lower_bound(const struct model *m, const struct cluster *c, const struct plan *p)
{
	struct plan q = *p;
	struct compute_layer dense, moe;
	struct plan_layout lay;
	struct tp_layer_comm tc;
	double per_mb;

	q.recompute = PLAN_RECOMPUTE_NONE;
	topology_plan(&q, c, &lay);
	compute_layer_time(m, &q, c, false, &dense);
	tp_layer_comm(m, &q, c, &lay, &tc);
	per_mb = (m->layers - model_moe_layers(m)) * (dense.fwd_s + dense.bwd_s) + m->layers * tc.bwd_s;
	if (model_is_moe(m)) {
		compute_layer_time(m, &q, c, true, &moe);
		per_mb += model_moe_layers(m) * (moe.fwd_s + moe.bwd_s);
	}
	return (plan_microbatches(p) + (double)(p->pp - 1) / p->vpp) * per_mb / p->pp;
}

static bool
divides(long a, long b)
{
	return a > 0 && b % a == 0;
}

/* Enumerate the outer shapes of the search space. */
static bool
enumerate(const struct model *m, const struct cluster *c, const struct search_options *opt,
	  int gpus, int seq, struct shape_list *out, struct plan_error *err)
{
	int G = c->gpus_per_node;
	int max_tp = opt->max_tp > 0 ? opt->max_tp : G;
	int max_pp = opt->max_pp > 0 ? opt->max_pp : m->layers;
	int max_mb = opt->max_micro_batch > 0 ? opt->max_micro_batch : 16;
	int max_vpp = opt->max_vpp > 0 ? opt->max_vpp : 8;
	int B = opt->global_batch;

	for (int tp = 1; tp <= max_tp && tp <= gpus; tp *= 2) {
		if (m->heads % tp || m->ffn_hidden % tp || (m->kv_heads % tp && tp % m->kv_heads))
			continue;
		if (tp < G && G % tp)
			continue;
		for (int pp = 1; pp <= max_pp && pp <= m->layers && (long)tp * pp <= gpus; pp++) {
			int dp;

			if (gpus % (tp * pp))
				continue;
			dp = gpus / (tp * pp);
			if (B % dp)
				continue;
			for (int mb = 1; mb <= max_mb; mb *= 2) {
				int mbs = B / dp;

				if (mbs % mb)
					continue;
				for (int vpp = 1; vpp <= (pp > 1 ? max_vpp : 1); vpp++) {
					int zeros[4], nz = 0;

					if (vpp > 1 && (m->layers % (pp * vpp) || (mbs / mb) % pp))
						continue;
					int max_zero = opt->max_zero < 0 ? 3 : opt->max_zero;

					zeros[nz++] = 0;
					if (dp > 1 && max_zero >= 1)
						zeros[nz++] = 1;
					if (dp > 1 && pp == 1 && max_zero >= 3)
						zeros[nz++] = 3;
					for (int zi = 0; zi < nz; zi++) {
						int groups[16], ng = 0;

						groups[ng++] = 0;
						/* MiCS groups: whole nodes, dividing dp, smaller than dp. */
						if (zeros[zi] == 3 && !model_is_moe(m))
							for (int g = G; g < dp && ng < 16; g *= 2)
								if (dp % g == 0)
									groups[ng++] = g;
						for (int gi = 0; gi < ng; gi++) {
							int eps[32], ne = 0;

							if (model_is_moe(m)) {
								for (int e = 1; e <= dp && ne < 32; e *= 2)
									if (m->moe.experts % e == 0 && dp % e == 0)
										eps[ne++] = e;
							} else {
								eps[ne++] = 1;
							}
							for (int ei = 0; ei < ne; ei++)
								for (int sp = 0; sp < (tp > 1 && seq % tp == 0 ? 2 : 1); sp++)
								for (int route = 0; route < (eps[ei] > 1 ? 2 : 1); route++)
									for (int ci = -1; ci < opt->ncompressors; ci++)
									for (int dpc = 0; dpc < 2; dpc++) {
										const struct compressor *cmp = ci >= 0 ? opt->compressors[ci] : NULL;
										struct plan p;

										/* DP gradient compression: an outer choice,
										 * for methods that can compress gradients. */
										if (dpc && (!cmp || dp < 2 || zeros[zi] != 0 || model_is_moe(m) ||
											    cmp->method == COMPRESSOR_AUTOENCODER))
											continue;

										plan_init(&p);
										p.tp = tp;
										p.pp = pp;
										p.dp = dp;
										p.vpp = vpp;
										p.micro_batch = mb;
										p.global_batch = B;
										p.seq_len = seq;
										p.sequence_parallel = sp;
										p.flash_attention = opt->flash_attention;
										p.zero = zeros[zi];
										p.mics_group = groups[gi];
										p.ep = eps[ei];
										p.moe_routing = route;
										p.moe_overlap = opt->moe_overlap;
										p.compress.dp = dpc;
										/* A compressor only matters where there is
										 * traffic to compress. */
										if (cmp && tp == 1 && pp == 1 && !dpc)
											continue;
										if (!push(out, &p, cmp, lower_bound(m, c, &p), err))
											return false;
									}
						}
					}
				}
			}
		}
	}
	(void)divides;
	return true;
}

/* Insert @cand into the sorted top list if it is good enough and new. */
static void
keep_top(struct search_candidate *top, int *ntop, int k, const struct search_candidate *cand)
{
	int i;

	for (i = 0; i < *ntop; i++)
		if (fabs(top[i].est.iteration_time_s - cand->est.iteration_time_s) < 1e-12 &&
		    memcmp(&top[i].plan, &cand->plan, sizeof(cand->plan)) == 0)
			return;
	for (i = *ntop; i > 0 && top[i - 1].est.iteration_time_s > cand->est.iteration_time_s; i--)
		if (i < k)
			top[i] = top[i - 1];
	if (i < k) {
		top[i] = *cand;
		if (*ntop < k)
			(*ntop)++;
	}
}

/* When a shape has no feasible layout: how close its best even layout comes. */
static void
note_closest(const struct model *m, const struct cluster *c, const struct shape *s,
	     const struct search_options *opt, struct search_stats *st)
{
	struct estimate_options eo = { opt->dp_algo, NULL };
	struct estimate e;
	struct plan_error err;
	struct plan p = s->plan;

	p.recompute = PLAN_RECOMPUTE_FULL;
	if (m->layers % p.pp) {
		p.custom_layers = true;
		for (int i = 0; i < p.pp; i++)
			p.stage_layers[i] = (short)(m->layers / p.pp + (i < m->layers % p.pp));
	}
	if (!estimate_plan(m, c, &p, &eo, &e, &err))
		return;
	if (!st->have_closest || e.memory.total < st->closest_memory) {
		st->have_closest = true;
		st->closest = p;
		st->closest_memory = e.memory.total;
		st->closest_stage = e.details.memory_stage;
		st->capacity = e.memory_capacity_bytes;
	}
}

void
search_options_init(struct search_options *opt)
{
	memset(opt, 0, sizeof(*opt));
	opt->max_zero = -1;
	opt->max_compressed_layers = -1;
	opt->time_limit_s = SEARCH_DEFAULT_TIME_LIMIT_S;
	opt->top = SEARCH_DEFAULT_TOP;
	opt->dp_algo = COLL_ALGO_RING;
}

bool
search_run(const struct model *m, const struct cluster *c, const struct search_options *opt,
	   struct search_candidate *top, int *ntop, struct search_stats *st,
	   struct plan_error *err)
{
	struct shape_list shapes = { 0 };
	int gpus = opt->gpus > 0 ? opt->gpus : cluster_gpus(c);
	int seq = opt->seq_len > 0 ? opt->seq_len : m->seq_len;
	int k = opt->top < 1 ? 1 : (opt->top > SEARCH_MAX_TOP ? SEARCH_MAX_TOP : opt->top);
	double t0 = now_s();
	struct search_candidate *cand = malloc(sizeof(*cand));
	bool ok = false;

	memset(st, 0, sizeof(*st));
	*ntop = 0;
	if (!cand)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	if (gpus > cluster_gpus(c)) {
		plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "--gpus %d is more than cluster '%s' has (%d)",
			       gpus, c->name, cluster_gpus(c));
		goto out;
	}
	if (opt->global_batch < 1) {
		plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "the global batch must be positive");
		goto out;
	}
	if (!enumerate(m, c, opt, gpus, seq, &shapes, err))
		goto out;
	st->shapes = shapes.n;
	qsort(shapes.v, (size_t)shapes.n, sizeof(*shapes.v), by_bound);
	for (long i = 0; i < shapes.n; i++) {
		const struct shape *s = &shapes.v[i];
		bool found;

		/* Shapes come in increasing bound: once the bound passes the
		 * k-th best time, no later shape can enter the top list. */
		if (*ntop == k && s->lower_bound >= top[k - 1].est.iteration_time_s) {
			st->pruned = shapes.n - i;
			break;
		}
		st->cutoff_s = *ntop == k ? top[k - 1].est.iteration_time_s : 0.0;
		if (!search_shape(m, c, &s->plan, s->cmp, opt, opt->exhaustive, cand, &found, st, err))
			goto out;
		if (found)
			keep_top(top, ntop, k, cand);
		else if (st->cutoff_s <= 0) {
			st->infeasible++;
			if (*ntop == 0)
				note_closest(m, c, s, opt, st);
		}
	}
	ok = true;
out:
	st->seconds = now_s() - t0;
	free(shapes.v);
	free(cand);
	return ok;
}
