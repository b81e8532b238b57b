#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan/compression.h"
#include "plan/compute.h"
#include "plan/expert_par.h"
#include "plan/framework.h"
#include "plan/host_time.h"
#include "plan/milp.h"
#include "plan/pipeline.h"
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

const char *const search_dim_names[] = {
	"none", "tp", "pp", "micro_batch", "recompute", "zero", "vpp", "sequence_parallel", "cp", "ep", NULL,
};

/* Whether a stage may use recompute mode @r (search_options.recompute_modes). */
static bool
mode_ok(const struct search_options *opt, int r)
{
	return opt->recompute_modes == 0 || (opt->recompute_modes & (1u << r));
}

static int
modes_allowed(const struct plan *shape, const struct search_options *opt, int *modes)
{
	int n = 0;

	if (mode_ok(opt, PLAN_RECOMPUTE_NONE))
		modes[n++] = PLAN_RECOMPUTE_NONE;
	/* With fused attention, selective recompute is the same as none
	 * (plan-cli recomp: but not with --recompute-modules). */
	if ((!shape->flash_attention || shape->recompute_modules) && mode_ok(opt, PLAN_RECOMPUTE_SELECTIVE))
		modes[n++] = PLAN_RECOMPUTE_SELECTIVE;
	if (mode_ok(opt, PLAN_RECOMPUTE_FULL))
		modes[n++] = PLAN_RECOMPUTE_FULL;
	return n;
}

/* One shape's inner search: what it reads, and where it keeps the best
 * layout so far. */
struct inner {
	const struct model *m;
	const struct cluster *c;
	const struct plan *shape;
	const struct compressor *cmp;
	const struct search_options *opt;
	struct search_candidate *best;
	bool *found;
	struct search_stats *st;
};

/* Keep @cand if it is better than the current best (smaller slot, then time). */
static void
consider(const struct inner *in, const struct search_candidate *cand)
{
	struct search_candidate *best = in->best;

	if (!cand->est.fits)
		return;
	if (!*in->found || cand->est.details.slot_s < best->est.details.slot_s - 1e-12 ||
	    (fabs(cand->est.details.slot_s - best->est.details.slot_s) <= 1e-12 &&
	     cand->est.iteration_time_s < best->est.iteration_time_s)) {
		*best = *cand;
		*in->found = true;
	}
}

/*
 * Whether the search chooses Slapo's checkpoint ratio (the layers of a
 * stage that recompute in full) for the plans of this shape: with plain
 * 1F1B, below ZeRO-3, and where TP compression cannot apply (the MILP
 * would need the overlap of the compressed suffix of the layers with the
 * recomputed prefix of each stage).
 */
static bool
partial_allowed(const struct inner *in)
{
	return in->shape->vpp == 1 && in->shape->zero < 3 && !(in->cmp && in->shape->tp > 1) &&
	       mode_ok(in->opt, PLAN_RECOMPUTE_FULL);
}

/* Hand a predicted (or refused) plan to the caller's hook (optimize --all). */
static void
report_eval(const struct inner *in, const struct search_candidate *cand, const struct plan_error *refused)
{
	const struct search_eval ev = {
		.cand = cand,
		.predicted = refused == NULL,
		.refused = refused ? refused->message : NULL,
	};

	if (in->opt->on_eval)
		in->opt->on_eval(in->opt->on_eval_ctx, &ev);
}

/* Predict @p into @out; false for a layout the cost model refuses, which
 * is not a candidate (why it refuses does not matter here). A layout
 * that does not fit is predicted again with the fewest recomputed layers
 * per stage that make it fit (estimate_fewest_recompute_layers), which
 * the MILP's k columns price. */
/* plan-cli recomp: begin */
/*
 * Whether @p only repeats a plan of the search: --recompute-modules
 * changes selective stages and --recompute-method/num-layers full ones,
 * so in a plan without such a stage every listed value but the first
 * predicts the same as the first does.
 */
static bool
recompute_repeat(const struct inner *in, const struct plan *p)
{
	const struct search_allowed *am = &in->opt->allowed[PLAN_ATTR_RECOMPUTE_MODULES];
	const struct search_allowed *ah = &in->opt->allowed[PLAN_ATTR_RECOMPUTE_METHOD];
	const struct search_allowed *an = &in->opt->allowed[PLAN_ATTR_RECOMPUTE_NUM_LAYERS];
	bool sel = false, full = false;

	if (am->n < 2 && ah->n < 2 && an->n < 2)
		return false; /* nothing listed to repeat: the common case */
	for (int s = 0; s < p->pp && s < PLAN_MAX_STAGES; s++) {
		sel = sel || plan_stage_recompute(p, s) == PLAN_RECOMPUTE_SELECTIVE;
		full = full || plan_stage_recompute(p, s) == PLAN_RECOMPUTE_FULL;
	}
	return (!sel && am->n > 1 && p->recompute_modules != am->v[0]) ||
	       (!full && ah->n > 1 && p->recompute_method != ah->v[0]) ||
	       (!full && an->n > 1 && p->recompute_num_layers != an->v[0]);
}
/* plan-cli recomp: end */

static bool
evaluate(const struct inner *in, const struct plan *p, struct search_candidate *out)
{
	struct estimate_options eo = { in->opt->dp_algo, in->cmp, in->opt->framework };
	struct plan_error e2;
	struct plan q;

	plan_error_clear(&e2);
	if (recompute_repeat(in, p)) /* plan-cli recomp */
		return false;
	in->st->evaluations++;
	out->plan = *p;
	if (partial_allowed(in)) {
		/* The search's own choice: made afresh for every layout. */
		out->plan.custom_recompute_layers = false;
		out->plan.stage_recompute_layers_count = 0;
		memset(out->plan.stage_recompute_layers, 0, sizeof(out->plan.stage_recompute_layers));
	}
	out->compressor = (p->compress.tp || p->compress.pp || p->compress.dp) ? in->cmp : NULL;
	out->dp_algo = in->opt->dp_algo;
	out->milp_slot_s = 0.0;
	if (!estimate_plan(in->m, in->c, &out->plan, &eo, &out->est, &e2)) {
		memset(&out->est, 0, sizeof(out->est));
		report_eval(in, out, &e2);
		return false;
	}
	report_eval(in, out, NULL);
	if (out->est.fits || !partial_allowed(in))
		return true;
	/* Recomputing more only lengthens the slot: past the best one's, no
	 * count of recomputed layers can make this layout win (consider()). */
	if (*in->found && out->est.details.slot_s > in->best->est.details.slot_s + 1e-12)
		return true;
	if (!estimate_fewest_recompute_layers(in->m, &out->plan, in->opt->framework, &out->est, &q))
		return true;
	in->st->evaluations++;
	out->plan = q;
	if (!estimate_plan(in->m, in->c, &out->plan, &eo, &out->est, &e2)) {
		memset(&out->est, 0, sizeof(out->est));
		report_eval(in, out, &e2);
		return false;
	}
	report_eval(in, out, NULL);
	return true;
}

/*
 * Per stage, the lightest of the @nm modes in which that stage fits, from
 * each mode's stage memories in @mem (a stage's memory depends on its own
 * mode; only the modes @known); false when a stage fits in none or every
 * stage takes the same mode (the uniform plan is then already tried).
 */
static bool
mixed_modes(const struct plan *p, const int *modes, int nm, double mem[][PLAN_MAX_STAGES], const bool *known,
	    double cap, signed char *out)
{
	bool mixed = false;

	for (int s = 0; s < p->pp; s++) {
		int i = 0;

		while (i < nm && !(known[i] && mem[i][s] <= cap))
			i++;
		if (i == nm)
			return false;
		out[s] = (signed char)modes[i];
		mixed = mixed || out[s] != out[0];
	}
	return mixed;
}

/*
 * Where the lightest mode does not fit every stage, recompute per stage:
 * each stage the lightest mode it fits in (the first stage keeps the most
 * micro-batches in flight, the last the logits), which minimises every
 * stage's time and so the slot. @mem holds each mode's stage memories,
 * from the uniform plans (a stage's memory depends on its own mode).
 */
static void
uniform_mixed(const struct inner *in, const struct plan *base, const int *modes, int nm,
	      double mem[][PLAN_MAX_STAGES], const bool *known, double cap)
{
	struct search_candidate cand;
	struct plan p = *base;

	if (p.pp < 2 || p.pp > PLAN_MAX_STAGES || nm < 2)
		return;
	p.custom_recompute = true;
	p.stage_recompute_count = p.pp;
	if (mixed_modes(&p, modes, nm, mem, known, cap, p.stage_recompute) && evaluate(in, &p, &cand))
		consider(in, &cand);
}

/* The plan of a uniform shape with compression scope @k (bit 1: TP,
 * bit 2: PP); false for a scope that compresses nothing here. */
static bool
uniform_plan(const struct inner *in, int k, struct plan *p)
{
	const struct model *m = in->m;

	*p = *in->shape;
	p->custom_layers = p->custom_recompute = false;
	if (p->vpp == 1 && m->layers % p->pp && pipeline_even_layout(p)) {
		/* Near-even: the first L mod p stages take one more. */
		p->custom_layers = true;
		p->stage_layers_count = p->pp;
		for (int s = 0; s < p->pp; s++)
			p->stage_layers[s] = (short)(m->layers / p->pp + (s < m->layers % p->pp));
	}
	p->compress.tp = (k & 1) && p->tp > 1;
	p->compress.pp = (k & 2) && p->pp > 1;
	if (k && !p->compress.tp && !p->compress.pp)
		return false;
	p->compress.from_layer = -1;
	if (p->compress.tp && in->opt->max_compressed_layers >= 0 &&
	    m->layers - plan_compress_from_layer(p, m) > in->opt->max_compressed_layers)
		p->compress.from_layer = m->layers - in->opt->max_compressed_layers;
	return true;
}

/* What inner_uniform learns of one compression scope for uniform_mixed. */
struct uniform_scope {
	bool mix;       /* the lightest mode does not fit, the heaviest does */
	double slot;    /* the lightest mode's pacing slot: a mix's is no shorter */
	double cap;
	bool known[3];                  /* per mode: whether mem holds its stages */
	bool fitted;                    /* plan-cli optsearch: a lighter mode fits every stage */
	double mem[3][PLAN_MAX_STAGES]; /* per mode, every stage's memory */
};

/*
 * The micro-batch slots an iteration takes at the least, in units of its
 * slowest stage's slot: pipeline_bound_slots (SC21 Eq. 2's m + (p - 1)/v
 * under 1F1B) up to ESTIMATE_MAX_STAGES stages. Past them core_pace
 * (estimate.c) leaves the other stages' shares of the fill and drain out
 * of the estimate, and only the m slots remain: a bound of m + (p - 1)/v
 * would be above the estimate (pp 264, m 8, v 1: 271 slots, where the
 * estimate counts at most 8 + 256) and prune plans that beat it. Every
 * bound of the search counts its slots here. (The layout MILP and DP run
 * up to PLAN_MAX_STAGES = ESTIMATE_MAX_STAGES stages only, and mixed
 * recompute too: search_shape and uniform_mixed.)
 */
static double
bound_slots(const struct plan *p)
{
	return p->pp > ESTIMATE_MAX_STAGES ? plan_microbatches(p) : pipeline_bound_slots(p);
}

/* lower_bound's terms for a shape, whatever its layout: a micro-batch's
 * work summed over the stages at the least (max(sum G, sum H)), the
 * syncs of a micro-batch and the launch each exposes, and the iteration's
 * own launches (fixed_s). */
struct bound_terms {
	double work_s, syncs, launch_s, fixed_s;
};

static struct bound_terms bound_terms(const struct model *m, const struct cluster *c, const struct plan *p,
				      const struct framework *fw, bool compressed);

/* The inner search's: its shape's, under the search's framework or the
 * built-in one, as push_shape's lower_bound. */
static struct bound_terms
inner_terms(const struct inner *in)
{
	struct framework fw_default;
	const struct framework *fw = in->opt->framework;

	if (!fw) {
		framework_init_default(&fw_default);
		fw = &fw_default;
	}
	return bound_terms(in->m, in->c, in->shape, fw, in->cmp != NULL);
}

/*
 * A floor on the iteration of any layout of @shape whose pacing slot is
 * @slot_s or more (a layout with more recomputation than one of that
 * slot; the MILP's or the DP's optimal slot). core_pace's T = max over s
 * of (m slot_s + the other stages' shares) >= m slot. Under 1F1B, where
 * each share_t >= b_t / v (lower_bound) and the slowest stage's b is at
 * most its slot, T >= (m - 1/v) slot + sum b / v. Not slot (m + (p -
 * 1)/v), which holds only when every stage's slot is the slowest's: with
 * the logits on the last stage the others are shorter, and the iteration
 * with them (tp 1 pp 2 dp 4 of test-search's 12-layer model: 1.160 s,
 * 2.5 slots 1.353 s); the unit search, the MILP's cutoff row and the DP
 * pruned by that. Past ESTIMATE_MAX_STAGES the shares are left out of
 * the estimate: m slot. The host's launches on top, as lower_bound's.
 */
static double
layout_bound(const struct plan *shape, const struct bound_terms *t, double slot_s)
{
	double m = plan_microbatches(shape), v = shape->vpp, b = m * slot_s;

	if (shape->pp_schedule == PLAN_PP_1F1B && shape->pp <= ESTIMATE_MAX_STAGES)
		b = fmax(b, (m - 1.0 / v) * slot_s + (t->work_s + shape->pp * t->syncs * t->launch_s) / v);
	return b + t->fixed_s;
}

/* The largest pacing slot with which a layout of @shape can still beat
 * @cutoff_s (layout_bound's inverse; 0 when none can). */
static double
slot_limit_s(const struct plan *shape, const struct bound_terms *t, double cutoff_s)
{
	double m = plan_microbatches(shape), v = shape->vpp, room = cutoff_s - t->fixed_s, lim = room / m;

	if (shape->pp_schedule == PLAN_PP_1F1B && shape->pp <= ESTIMATE_MAX_STAGES) {
		double rest = room - (t->work_s + shape->pp * t->syncs * t->launch_s) / v;

		/* m v = 1: one micro-batch, no interleaving; the slot is free. */
		lim = m - 1.0 / v > 0.0 ? fmin(lim, rest / (m - 1.0 / v)) : rest < 0.0 ? 0.0 : lim;
	}
	return fmax(lim, 0.0);
}

double
search_layout_bound(const struct model *m, const struct cluster *c, const struct plan *shape,
		    const struct framework *fw, bool compressed, double slot_s)
{
	struct framework fw_default;
	struct bound_terms t;

	if (!fw) {
		framework_init_default(&fw_default);
		fw = &fw_default;
	}
	t = bound_terms(m, c, shape, fw, compressed);
	return layout_bound(shape, &t, slot_s);
}

/* Uniform layers (interleaving, or MoE layers every n-th): choose the
 * recompute mode, one for every stage or per stage, and the compression
 * scope by enumeration. */
static void
inner_uniform(const struct inner *in)
{
	int modes[3], nm = modes_allowed(in->shape, in->opt, modes);
	int scopes = in->cmp ? 4 : 1;
	struct uniform_scope *u = malloc((size_t)scopes * sizeof(*u));
	struct search_candidate cand;
	struct bound_terms terms;
	bool have_terms = false;
	struct plan p;

	if (!u)
		return;
	for (int k = 0; k < scopes; k++) { /* mem stays unset (6 KiB a mode): known[] says */
		u[k].mix = false;
		u[k].slot = u[k].cap = 0.0;
		u[k].fitted = false;
		memset(u[k].known, 0, sizeof(u[k].known));
	}
	for (int i = 0; i < nm; i++)
		for (int k = 0; k < scopes; k++) {
			/* plan-cli optsearch: modes go lightest first, and more
			 * recomputation only adds work to the same layers (it
			 * lengthens the slot and the iteration): once a mode
			 * fits, a heavier one cannot win this shape (consider()).
			 * optimize --all (on_eval) still predicts every mode. */
			if (u[k].fitted && !in->opt->on_eval)
				continue;
			if (!uniform_plan(in, k, &p))
				continue;
			p.recompute = modes[i];
			if (!evaluate(in, &p, &cand))
				continue;
			/* A plan evaluate() turned into Slapo's layers tells
			 * nothing of this mode's memory. */
			if (!cand.plan.custom_recompute_layers && p.pp <= PLAN_MAX_STAGES) {
				memcpy(u[k].mem[i], cand.est.stage_memory, sizeof(double) * (size_t)p.pp);
				u[k].known[i] = true;
				u[k].cap = cand.est.memory_capacity_bytes;
			}
			if (i == 0 && !cand.plan.custom_recompute_layers) {
				u[k].mix = !cand.est.fits;
				u[k].slot = cand.est.details.slot_s;
			}
			if (cand.est.fits && !cand.plan.custom_recompute_layers)
				u[k].fitted = true;
			/* If the heaviest mode does not fit, a stage fits in none. */
			if (i == nm - 1 && !cand.est.fits)
				u[k].mix = false;
			consider(in, &cand);
		}
	for (int k = 0; k < scopes; k++) {
		if (!u[k].mix || !uniform_plan(in, k, &p))
			continue;
		/* Mixed modes recompute more than the lightest: no stage's
		 * slot is shorter, nor the pacing one (layout_bound). */
		if (in->st->cutoff_s > 0 && !have_terms) {
			terms = inner_terms(in);
			have_terms = true;
		}
		if (in->st->cutoff_s <= 0 || layout_bound(&p, &terms, u[k].slot) < in->st->cutoff_s)
			uniform_mixed(in, &p, modes, nm, u[k].mem, u[k].known, u[k].cap);
	}
	free(u);
}

/* Turn the MILP's (or the enumeration's) choices into a plan: layers and
 * modes per stage, the TP-compressed layers, the first PP-compressed stage. */
static void
layout_plan(struct plan *p, const int *layers, const int *modes, int tp_layers,
	    int pp_from_stage)
{
	int total = 0;

	p->custom_layers = p->custom_recompute = true;
	for (int s = 0; s < p->pp; s++) {
		p->stage_layers[s] = (short)layers[s];
		p->stage_recompute[s] = (signed char)modes[s];
		total += layers[s];
	}
	p->stage_layers_count = p->stage_recompute_count = p->pp;
	p->recompute = modes[0];
	/* TP compression of the last @tp_layers layers (MCBench's start
	 * layer, anywhere in a stage). */
	p->compress.tp = tp_layers > 0;
	p->compress.from_layer = p->compress.tp ? total - tp_layers : -1;
	p->compress.pp = pp_from_stage < p->pp;
	p->compress.from_stage = p->compress.pp ? pp_from_stage : 0;
}

/*
 * Among layouts of equal slot the MILP may keep recomputation that no
 * memory limit asks for; drop it stage by stage (full, then selective)
 * while the plan fits and its slot does not grow.
 */
static void
relax_recompute(const struct inner *in, struct search_candidate *cand)
{
	for (int s = 0; s < cand->plan.pp; s++) {
		while (cand->plan.stage_recompute[s] > PLAN_RECOMPUTE_NONE) {
			struct search_candidate *trial = malloc(sizeof(*trial));
			struct plan p = cand->plan;
			bool better;

			if (!trial)
				return;
			p.stage_recompute[s]--;
			if (p.stage_recompute[s] == PLAN_RECOMPUTE_SELECTIVE &&
			    (p.flash_attention || !mode_ok(in->opt, PLAN_RECOMPUTE_SELECTIVE)))
				p.stage_recompute[s]--;
			if (!mode_ok(in->opt, p.stage_recompute[s])) {
				free(trial);
				break;
			}
			better = evaluate(in, &p, trial) && trial->est.fits &&
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
	int y[3], z[3], w[3], cflag, pflag, bflag;
	int most[3]; /* per mode, the most layers the stage can hold (inner_milp_most_layers) */
	int k[3], u[3]; /* Slapo's ratio: layers of mode i recomputing in full, and whether any do (-1: none) */
};

/* GLPK works best on numbers near 1: the MILP's times are in ms, its
 * memory in GiB. */
static const double layout_milp_ms_per_s = 1e3;
static const double layout_milp_gib_per_byte = 1.0 / 1073741824.0;

/* The layout MILP of one shape: its columns and its stages' coefficients. */
struct layout_milp {
	const struct inner *in;
	struct milp *mp;
	const struct estimate_stage_coefs *k; /* pp entries */
	struct cols *col;                     /* pp entries */
	int P, L, modes[3], nm, tau;
	bool tpc, ppc;                        /* TP, PP compression may apply */
	bool partial;                         /* k columns: partial_allowed() */
	double slot_bound_s;                  /* the slot of a layout already found (INFINITY: none) */
	double dp_slot_ms;                    /* without GLPK (layout_dp): the optimal slot */
	double ones[3 * PLAN_MAX_STAGES];
};

/* The optimal slot (s) the MILP or the layout DP found. */
static double
solved_slot_s(const struct layout_milp *x)
{
	return (x->mp ? milp_value(x->mp, x->tau) : x->dp_slot_ms) / layout_milp_ms_per_s;
}

/* The stages' time and memory coefficients, probed with compression
 * wherever it may apply; false for a shape the cost model refuses. */
static bool
inner_milp_coefs(const struct layout_milp *x, struct estimate_stage_coefs *k)
{
	const struct inner *in = x->in;
	struct estimate_options eo = { in->opt->dp_algo, in->cmp, in->opt->framework };
	struct plan probe = *in->shape;
	struct plan_error e2;

	probe.compress.tp = x->tpc;
	probe.compress.pp = x->ppc;
	probe.compress.from_layer = 0;
	plan_error_clear(&e2);
	return estimate_stage_coefs(in->m, in->c, &probe, &eo, k, &e2);
}

/* GLPK must see numbers: every coefficient of the @P stages is finite. */
static bool
inner_milp_coefs_finite(const struct estimate_stage_coefs *k, int P)
{
	for (int s = 0; s < P; s++)
		for (int r = 0; r < 3; r++)
			for (int c = 0; c < 2; c++)
				if (!isfinite(k[s].time_fixed[c]) || !isfinite(k[s].time_layer[r][c]) ||
				    !isfinite(k[s].mem_fixed[r][c]) || !isfinite(k[s].mem_layer[r][c]))
					return false;
	return true;
}

/*
 * The most layers stage @s can hold in mode @i (index into x->modes):
 * its memory with the smallest fixed part and the smallest cost a layer
 * can have (compressed or not, recomputing in full or not, PP
 * compression or not: each lowers it or not) must fit, and the other
 * stages need a layer each. A bound for GLPK's relaxation (z <= U y
 * instead of z <= L y), never tighter than the memory row itself.
 */
static int
inner_milp_most_layers(const struct layout_milp *x, int s, int i)
{
	const struct estimate_stage_coefs *q = &x->k[s];
	int r = x->modes[i], most = x->L - (x->P - 1);
	double fixed = q->mem_fixed[r][0], layer = q->mem_layer[r][0];
	double cap = x->in->c->gpu.memory_bytes, n;

	if (x->ppc)
		fixed += fmin(0.0, q->mem_fixed[x->modes[0]][1] - q->mem_fixed[x->modes[0]][0]);
	if (x->tpc)
		layer += fmin(0.0, q->mem_layer[r][1] - q->mem_layer[r][0]);
	if (x->partial && r != PLAN_RECOMPUTE_FULL) {
		fixed += fmin(0.0, q->mem_fixed[PLAN_RECOMPUTE_FULL][0] - q->mem_fixed[r][0]);
		layer += fmin(0.0, q->mem_layer[PLAN_RECOMPUTE_FULL][0] - q->mem_layer[r][0]);
	}
	if (layer > 0.0) {
		/* 1e-6 of a layer of slack: the MILP's row has GLPK's tolerance. */
		n = floor((cap - fixed) / layer + 1e-6);
		most = n < 0 ? 0 : (n < most ? (int)n : most);
	}
	/* Within the slot of a layout already found (the optimum's is no
	 * longer): the fastest a layer and the fixed part can be. */
	if (isfinite(x->slot_bound_s)) {
		double t_fixed = q->time_fixed[0], t_layer = q->time_layer[r][0];

		if (x->ppc)
			t_fixed = fmin(t_fixed, q->time_fixed[1]);
		if (x->tpc)
			t_layer = fmin(t_layer, q->time_layer[r][1]);
		if (t_layer > 0.0) {
			n = floor((x->slot_bound_s * (1 + 1e-6) - t_fixed) / t_layer + 1e-6);
			most = n < 0 ? 0 : (n < most ? (int)n : most);
		}
	}
	return most;
}

/* Columns: the slot; per stage and recompute mode its choice y, its
 * layers z and, with TP compression, its compressed layers w; per stage
 * the flags of the TP compression suffix (c: every layer of the stage
 * compressed; p: some of them) and of the PP one (b). */
static bool
inner_milp_columns(struct layout_milp *x, struct plan_error *err)
{
	struct milp *mp = x->mp;

	x->tau = milp_add_var(mp, MILP_CONTINUOUS, 0.0, INFINITY, 1.0, "slot", err);
	if (x->tau < 0)
		return false;
	for (int s = 0; s < x->P; s++) {
		struct cols *cs = &x->col[s];

		for (int i = 0; i < x->nm; i++) {
			cs->most[i] = inner_milp_most_layers(x, s, i);
			cs->y[i] = milp_add_var(mp, MILP_BINARY, 0, 1, 0, "y", err);
			cs->z[i] = milp_add_var(mp, MILP_INTEGER, 0, cs->most[i], 0, "z", err);
			cs->w[i] = x->tpc ? milp_add_var(mp, MILP_INTEGER, 0, cs->most[i], 0, "w", err) : -1;
			if (cs->y[i] < 0 || cs->z[i] < 0 || (x->tpc && cs->w[i] < 0))
				return false;
			cs->k[i] = cs->u[i] = -1;
			if (x->partial && x->modes[i] != PLAN_RECOMPUTE_FULL &&
			    ((cs->k[i] = milp_add_var(mp, MILP_INTEGER, 0, cs->most[i], 0, "k", err)) < 0 ||
			     (cs->u[i] = milp_add_var(mp, MILP_BINARY, 0, 1, 0, "u", err)) < 0))
				return false;
		}
		cs->cflag = x->tpc ? milp_add_var(mp, MILP_BINARY, 0, 1, 0, "c", err) : -1;
		cs->pflag = x->tpc ? milp_add_var(mp, MILP_BINARY, 0, 1, 0, "p", err) : -1;
		cs->bflag = x->ppc ? milp_add_var(mp, MILP_BINARY, 0, 1, 0, "b", err) : -1;
		if ((x->tpc && (cs->cflag < 0 || cs->pflag < 0)) || (x->ppc && cs->bflag < 0))
			return false;
	}
	return true;
}

/* One recompute mode per stage; its layers; at least one layer. */
static bool
inner_milp_choice_rows(const struct layout_milp *x, const struct cols *cs, struct plan_error *err)
{
	int v[3];

	for (int i = 0; i < x->nm; i++)
		v[i] = cs->y[i];
	if (!milp_add_row(x->mp, x->nm, v, x->ones, 1, 1, "mode", err))
		return false;
	for (int i = 0; i < x->nm; i++) {
		int vv[2] = { cs->z[i], cs->y[i] };
		double aa[2] = { 1.0, -cs->most[i] };

		if (!milp_add_row(x->mp, 2, vv, aa, -INFINITY, 0, "zy", err))
			return false;
		v[i] = cs->z[i];
		if (cs->k[i] >= 0) {
			/* k <= z - y: fewer than the stage's layers (all of
			 * them is the full mode); k > 0 only with u, which
			 * brings the re-materialised layer's memory. */
			int kz[3] = { cs->k[i], cs->z[i], cs->y[i] }, ku[2] = { cs->k[i], cs->u[i] };
			double c1[3] = { 1.0, -1.0, 1.0 }, c2[2] = { 1.0, -x->L };

			if (!milp_add_row(x->mp, 3, kz, c1, -INFINITY, 0, "k<z", err) ||
			    !milp_add_row(x->mp, 2, ku, c2, -INFINITY, 0, "k<=Lu", err))
				return false;
		}
	}
	return milp_add_row(x->mp, x->nm, v, x->ones, 1, INFINITY, "nonempty", err);
}

/* flag @a <= flag @b: once set, a flag stays set for the later stages. */
static bool
inner_milp_suffix_row(const struct layout_milp *x, int a, int b, const char *name,
		      struct plan_error *err)
{
	int v[2] = { a, b };
	double cc[2] = { 1, -1 };

	return milp_add_row(x->mp, 2, v, cc, -INFINITY, 0, name, err);
}

/*
 * Compression covers a suffix of the layers (MCBench's
 * --start-tensor-compress-layer), which may start inside a stage: w = z
 * on a stage whose layers are all compressed (c), 0 <= w <= z on one
 * with some (p, at most one stage with p and not c), w = 0 on the rest;
 * a stage with some makes the next one all compressed.
 */
static bool
inner_milp_tp_rows(const struct layout_milp *x, int s, struct plan_error *err)
{
	const struct cols *cs = &x->col[s];
	int L = x->L;

	for (int i = 0; i < x->nm; i++) {
		int a1[2] = { cs->w[i], cs->z[i] }, a2[2] = { cs->w[i], cs->pflag };
		int a3[3] = { cs->z[i], cs->w[i], cs->cflag };
		double c1[2] = { 1, -1 }, c2[2] = { 1, -L }, c3[3] = { 1, -1, L };

		if (!milp_add_row(x->mp, 2, a1, c1, -INFINITY, 0, "w<=z", err) ||
		    !milp_add_row(x->mp, 2, a2, c2, -INFINITY, 0, "w<=Lp", err) ||
		    !milp_add_row(x->mp, 3, a3, c3, -INFINITY, L, "w>=z-L(1-c)", err))
			return false;
	}
	if (!inner_milp_suffix_row(x, cs->cflag, cs->pflag, "c<=p", err))
		return false;
	return s + 1 >= x->P || inner_milp_suffix_row(x, cs->pflag, x->col[s + 1].cflag, "suffix", err);
}

/* slot >= stage time */
static bool
inner_milp_slot_row(const struct layout_milp *x, int s, struct plan_error *err)
{
	const double TS = layout_milp_ms_per_s;
	const struct estimate_stage_coefs *q = &x->k[s];
	const struct cols *cs = &x->col[s];
	int v[16], n = 0;
	double a[16];

	v[n] = x->tau;
	a[n++] = 1.0;
	for (int i = 0; i < x->nm; i++) {
		v[n] = cs->z[i];
		a[n++] = -TS * q->time_layer[x->modes[i]][0];
		if (x->tpc) {
			v[n] = cs->w[i];
			a[n++] = -TS * (q->time_layer[x->modes[i]][1] - q->time_layer[x->modes[i]][0]);
		}
		if (cs->k[i] >= 0) {
			/* Each of them: one more forward (full's layer time). */
			v[n] = cs->k[i];
			a[n++] = -TS * (q->time_layer[PLAN_RECOMPUTE_FULL][0] - q->time_layer[x->modes[i]][0]);
		}
	}
	if (x->ppc) {
		v[n] = cs->bflag;
		a[n++] = -TS * (q->time_fixed[1] - q->time_fixed[0]);
	}
	return milp_add_row(x->mp, n, v, a, TS * q->time_fixed[0], INFINITY, "slot", err);
}

/* memory of the stage */
static bool
inner_milp_memory_row(const struct layout_milp *x, int s, struct plan_error *err)
{
	const double MS = layout_milp_gib_per_byte;
	const struct estimate_stage_coefs *q = &x->k[s];
	const struct cols *cs = &x->col[s];
	const int *modes = x->modes;
	double cap = x->in->c->gpu.memory_bytes * MS;
	int v[16], n = 0;
	double a[16];

	for (int i = 0; i < x->nm; i++) {
		v[n] = cs->z[i];
		a[n++] = MS * q->mem_layer[modes[i]][0];
		v[n] = cs->y[i];
		a[n++] = MS * q->mem_fixed[modes[i]][0];
		if (x->tpc) {
			v[n] = cs->w[i];
			a[n++] = MS * (q->mem_layer[modes[i]][1] - q->mem_layer[modes[i]][0]);
		}
		if (cs->k[i] >= 0) {
			/* Each keeps full's activations; one layer is
			 * re-materialised (full's fixed part over the mode's). */
			v[n] = cs->k[i];
			a[n++] = MS * (q->mem_layer[PLAN_RECOMPUTE_FULL][0] - q->mem_layer[modes[i]][0]);
			v[n] = cs->u[i];
			a[n++] = MS * (q->mem_fixed[PLAN_RECOMPUTE_FULL][0] - q->mem_fixed[modes[i]][0]);
		}
	}
	if (x->ppc) {
		v[n] = cs->bflag;
		a[n++] = MS * (q->mem_fixed[modes[0]][1] - q->mem_fixed[modes[0]][0]);
	}
	return milp_add_row(x->mp, n, v, a, -INFINITY, cap, "memory", err);
}

/* The rows of stage @s, in the order GLPK has always seen them. */
static bool
inner_milp_stage_rows(const struct layout_milp *x, int s, struct plan_error *err)
{
	if (!inner_milp_choice_rows(x, &x->col[s], err))
		return false;
	if (x->tpc && !inner_milp_tp_rows(x, s, err))
		return false;
	if (x->ppc && s + 1 < x->P &&
	    !inner_milp_suffix_row(x, x->col[s].bflag, x->col[s + 1].bflag, "pp-suffix", err))
		return false;
	return inner_milp_slot_row(x, s, err) && inner_milp_memory_row(x, s, err);
}

/* Rows over all stages: every layer placed, the cut-off of the top
 * list, the budget of TP-compressed layers. */
static bool
inner_milp_global_rows(const struct layout_milp *x, struct plan_error *err)
{
	const struct inner *in = x->in;
	int all_z[3 * PLAN_MAX_STAGES], nz = 0, budget_w[3 * PLAN_MAX_STAGES], nw = 0;

	for (int s = 0; s < x->P; s++)
		for (int i = 0; i < x->nm; i++) {
			all_z[nz++] = x->col[s].z[i];
			if (x->tpc)
				budget_w[nw++] = x->col[s].w[i];
		}
	if (!milp_add_row(x->mp, nz, all_z, x->ones, x->L, x->L, "layers", err))
		return false;
	/* Only a layout that can enter the top list matters: its
	 * pipeline alone must beat the current k-th best time. */
	if (in->st->cutoff_s > 0) {
		struct bound_terms t = inner_terms(in);
		double one = 1.0;

		if (!milp_add_row(x->mp, 1, &x->tau, &one, -INFINITY,
				  layout_milp_ms_per_s * slot_limit_s(in->shape, &t, in->st->cutoff_s), "cutoff", err))
			return false;
	}
	return !(x->tpc && in->opt->max_compressed_layers >= 0) ||
	       milp_add_row(x->mp, nw, budget_w, x->ones, -INFINITY, in->opt->max_compressed_layers,
			    "budget", err);
}

/* The solution as a plan: layers and recompute mode per stage, and the
 * first stage of each compression suffix. */
static void
inner_milp_decode(const struct layout_milp *x, struct plan *p)
{
	int P = x->P, layers[PLAN_MAX_STAGES], mode[PLAN_MAX_STAGES], tp_layers = 0, pp_from = P;

	*p = *x->in->shape;
	for (int s = 0; s < P; s++) {
		const struct cols *cs = &x->col[s];

		layers[s] = 0;
		mode[s] = x->modes[0];
		for (int i = 0; i < x->nm; i++) {
			layers[s] += (int)lround(milp_value(x->mp, cs->z[i]));
			if (x->tpc)
				tp_layers += (int)lround(milp_value(x->mp, cs->w[i]));
			if (milp_value(x->mp, cs->y[i]) > 0.5)
				mode[s] = x->modes[i];
		}
		if (x->ppc && pp_from == P && milp_value(x->mp, cs->bflag) > 0.5)
			pp_from = s;
	}
	layout_plan(p, layers, mode, tp_layers, pp_from);
}

/* Predict the decoded layout, drop recomputation it does not need, and
 * note how far the MILP's slot is from the prediction. */
static void
inner_milp_refine(const struct layout_milp *x, const struct plan *p)
{
	const struct inner *in = x->in;
	struct search_candidate cand;
	double slot;

	if (!evaluate(in, p, &cand))
		return;
	slot = solved_slot_s(x);
	relax_recompute(in, &cand);
	cand.milp_slot_s = slot;
	if (p->zero < 3 && cand.est.details.slot_s > 0) {
		double gap = fabs(slot - cand.est.details.slot_s) / cand.est.details.slot_s;

		if (gap > in->st->max_milp_gap)
			in->st->max_milp_gap = gap;
	}
	consider(in, &cand);
}

/*
 * The tied optima. The MILP minimises the slot; the iteration time adds
 * the other stages' slots (fill and drain) and the slowest stage's tail
 * (DP sync, optimizer step), which the layout, the recompute modes and
 * the compression suffixes change among layouts of the same slot. Every
 * layout whose stages all run within the optimal slot (by the same
 * coefficients as the MILP's rows) is predicted and the fastest kept, as
 * --exhaustive keeps it: up to SEARCH_TIE_MAX_LAYOUTS of them.
 */
struct ties {
	const struct layout_milp *x;
	double slot_ms, cap_gib;
	int layers[PLAN_MAX_STAGES], mode[PLAN_MAX_STAGES], most[PLAN_MAX_STAGES + 1];
	int tp_from, pp_from;
	long layouts;
	long steps;       /* stage choices visited (SEARCH_TIE_MAX_STEPS) */
	struct search_candidate cand;
};

/* Stage @s's time (ms) and memory (GiB) by the MILP's coefficients: @n
 * layers of mode @r, the last @c of them TP-compressed, PP compression @b. */
static double
ties_time(const struct layout_milp *x, int s, int n, int r, int c, int b)
{
	const struct estimate_stage_coefs *q = &x->k[s];

	return layout_milp_ms_per_s * (q->time_fixed[b] + (n - c) * q->time_layer[r][0] + c * q->time_layer[r][1]);
}

static double
ties_memory(const struct layout_milp *x, int s, int n, int r, int c, int b)
{
	const struct estimate_stage_coefs *q = &x->k[s];
	double fixed = q->mem_fixed[r][0] + (b ? q->mem_fixed[x->modes[0]][1] - q->mem_fixed[x->modes[0]][0] : 0);

	return layout_milp_gib_per_byte * (fixed + (n - c) * q->mem_layer[r][0] + c * q->mem_layer[r][1]);
}

/* The most layers stage @s can take within the slot (any choice). */
static int
ties_most(const struct ties *t, int s)
{
	const struct layout_milp *x = t->x;
	int most = 0;

	/* Time is linear in the compressed layers: the ends bound it. */
	for (int i = 0; i < x->nm; i++)
		for (int n = most + 1; n <= x->L; n++) {
			int r = x->modes[i];

			if (ties_time(x, s, n, r, 0, 0) > t->slot_ms &&
			    (!x->tpc || ties_time(x, s, n, r, n, 0) > t->slot_ms) &&
			    (!x->ppc || ties_time(x, s, n, r, 0, 1) > t->slot_ms) &&
			    (!x->tpc || !x->ppc || ties_time(x, s, n, r, n, 1) > t->slot_ms))
				break;
			most = n;
		}
	return most;
}

static void ties_stage(struct ties *t, int s, int left, int compressed);

/* A complete layout, its last @compressed layers TP-compressed: predict it. */
static void
ties_leaf(struct ties *t, int compressed)
{
	const struct inner *in = t->x->in;
	struct plan p = *in->shape;

	t->layouts++;
	layout_plan(&p, t->layers, t->mode, compressed, t->pp_from);
	if (evaluate(in, &p, &t->cand)) {
		/* A layout at the MILP's optimal slot: its slot is the MILP's. */
		t->cand.milp_slot_s = solved_slot_s(t->x);
		consider(in, &t->cand);
	}
}

/* Time (ms) stage @s adds when @k of its layers of mode @r recompute in
 * full; memory (GiB) it saves, the re-materialised layer included (the
 * MILP's k and u columns). */
static double
ties_partial_time(const struct layout_milp *x, int s, int k, int r)
{
	const struct estimate_stage_coefs *q = &x->k[s];

	return layout_milp_ms_per_s * k * (q->time_layer[PLAN_RECOMPUTE_FULL][0] - q->time_layer[r][0]);
}

static double
ties_partial_memory(const struct layout_milp *x, int s, int k, int r)
{
	const struct estimate_stage_coefs *q = &x->k[s];

	return layout_milp_gib_per_byte * (k * (q->mem_layer[PLAN_RECOMPUTE_FULL][0] - q->mem_layer[r][0]) +
					   q->mem_fixed[PLAN_RECOMPUTE_FULL][0] - q->mem_fixed[r][0]);
}

/*
 * Stage @s with @n layers, mode @r, its last @c layers TP-compressed and
 * PP compression @b, by the MILP's coefficients: its time (ms) into
 * @time_ms, with partial recomputation the fewest layers in full that
 * make it fit (what evaluate() will choose); false where it does not fit
 * in @cap_gib.
 */
static bool
stage_fit(const struct layout_milp *x, int s, int n, int r, int c, int b, double cap_gib, double *time_ms)
{
	double mem = ties_memory(x, s, n, r, c, b), extra = 0.0;

	if (mem > cap_gib && x->partial && r != PLAN_RECOMPUTE_FULL) {
		int k = 1;

		while (k < n && mem + ties_partial_memory(x, s, k, r) > cap_gib)
			k++;
		if (k == n)
			return false; /* full recomputation: a mode of its own */
		mem += ties_partial_memory(x, s, k, r);
		extra = ties_partial_time(x, s, k, r);
	}
	*time_ms = ties_time(x, s, n, r, c, b) + extra;
	return mem <= cap_gib;
}

/* Stage @s with @n layers, mode @r, its last @c layers TP-compressed and
 * PP compression @b, within the slot: on to the next stage. */
static void
ties_choice(struct ties *t, int s, int left, int compressed, int n, int r, int c, int b)
{
	const struct layout_milp *x = t->x;
	int budget = x->in->opt->max_compressed_layers;
	double time_ms;

	if (!stage_fit(x, s, n, r, c, b, t->cap_gib, &time_ms) || time_ms > t->slot_ms)
		return;
	if (c && budget >= 0 && compressed + c > budget)
		return;
	t->layers[s] = n;
	t->mode[s] = r;
	if (c && t->tp_from > s)
		t->tp_from = s;
	if (b && t->pp_from > s)
		t->pp_from = s;
	ties_stage(t, s + 1, left - n, compressed + c);
	if (t->tp_from == s)
		t->tp_from = x->P;
	if (t->pp_from == s)
		t->pp_from = x->P;
}

static void
ties_stage(struct ties *t, int s, int left, int compressed)
{
	const struct layout_milp *x = t->x;
	int P = x->P;

	if (s == P) {
		if (left == 0)
			ties_leaf(t, compressed);
		return;
	}
	/* Compression covers a suffix: once on, it stays on (a stage after
	 * the one it starts in is compressed whole). */
	for (int b = t->pp_from < s; b <= (x->ppc ? 1 : 0); b++)
		for (int i = 0; i < x->nm; i++)
			for (int n = 1; n <= left - (P - 1 - s); n++) {
				/* The later stages must be able to take the rest. */
				if (left - n > t->most[s + 1])
					continue;
				for (int c = t->tp_from < s ? n : 0; c <= (x->tpc ? n : 0); c++) {
					if (t->layouts >= SEARCH_TIE_MAX_LAYOUTS || ++t->steps > SEARCH_TIE_MAX_STEPS)
						return;
					ties_choice(t, s, left, compressed, n, x->modes[i], c, b);
				}
			}
}

/* Every layout within the MILP's slot (@slot_s, predicted): the fastest. */
static void
inner_milp_ties(const struct layout_milp *x, double slot_s)
{
	struct ties *t = calloc(1, sizeof(*t));

	if (!t)
		return;
	t->x = x;
	/* GLPK's feasibility tolerance (1e-7) on a tied stage: 1e-6. */
	t->slot_ms = layout_milp_ms_per_s * slot_s * (1 + 1e-6);
	t->cap_gib = x->in->c->gpu.memory_bytes * layout_milp_gib_per_byte;
	t->tp_from = t->pp_from = x->P;
	t->most[x->P] = 0;
	for (int s = x->P - 1; s >= 0; s--)
		t->most[s] = t->most[s + 1] + ties_most(t, s);
	ties_stage(t, 0, x->L, 0);
	if (t->layouts >= SEARCH_TIE_MAX_LAYOUTS || t->steps > SEARCH_TIE_MAX_STEPS)
		x->in->st->tie_truncated++;
	free(t);
}

/*
 * Without compression a layout is only layers and a mode per stage, and
 * the slot is the slowest stage: the optimal slot is a dynamic program
 * over the stages, exact and in O(P L^2 modes), where GLPK can take
 * seconds to prove a deep pipeline's optimum. g[s][n] is the best slot
 * of stages s.. holding n layers; each stage takes its fastest mode that
 * fits (time and memory by the MILP's coefficients, stage_fit). The
 * layout of that slot goes to @layers and @modes; false when none fits.
 */
static bool
layout_dp(struct layout_milp *x, double limit_ms, int *layers, int *modes)
{
	int P = x->P, L = x->L, W = L + 1;
	double cap = x->in->c->gpu.memory_bytes * layout_milp_gib_per_byte;
	double *g = malloc(sizeof(double) * (size_t)(P + 1) * W);
	int *take = malloc(sizeof(int) * (size_t)P * W), *mode = malloc(sizeof(int) * (size_t)P * W);
	bool ok = false;

	if (!g || !take || !mode)
		goto out;
	for (int n = 0; n <= L; n++)
		g[(size_t)P * W + n] = n == 0 ? 0.0 : INFINITY;
	for (int s = P - 1; s >= 0; s--)
		for (int n = 0; n <= L; n++) {
			double best = INFINITY;

			for (int k = 1; k <= n - (P - 1 - s); k++) {
				double rest = g[(size_t)(s + 1) * W + n - k], fastest = INFINITY;

				/* A stage's time grows with its layers: past the best
				 * (or @limit_ms) in every mode, so are all larger k. */
				for (int i = 0; i < x->nm; i++)
					fastest = fmin(fastest, ties_time(x, s, k, x->modes[i], 0, 0));
				if (fastest >= fmin(best, limit_ms))
					break;
				if (!(rest < best))
					continue;
				for (int i = 0; i < x->nm; i++) {
					double t;

					if (stage_fit(x, s, k, x->modes[i], 0, 0, cap, &t) && fmax(t, rest) < best) {
						best = fmax(t, rest);
						take[(size_t)s * W + n] = k;
						mode[(size_t)s * W + n] = x->modes[i];
					}
				}
			}
			g[(size_t)s * W + n] = best;
		}
	x->dp_slot_ms = g[L];
	ok = isfinite(x->dp_slot_ms);
	for (int s = 0, n = L; ok && s < P; s++) {
		layers[s] = take[(size_t)s * W + n];
		modes[s] = mode[(size_t)s * W + n];
		n -= layers[s];
	}
out:
	free(g);
	free(take);
	free(mode);
	return ok;
}

/*
 * A shape without compression: the layout DP instead of the MILP, then
 * the same refinement and pass over the layouts of the optimal slot. A
 * slot that cannot beat the top list's cutoff is cut, as the MILP's
 * cutoff row would cut it.
 */
static void
inner_layout_dp(struct layout_milp *x)
{
	const struct inner *in = x->in;
	int layers[PLAN_MAX_STAGES], modes[PLAN_MAX_STAGES];
	struct plan p;

	struct bound_terms t = in->st->cutoff_s > 0 ? inner_terms(in) : (struct bound_terms){ 0 };
	double cut = in->st->cutoff_s > 0 ? layout_milp_ms_per_s * slot_limit_s(in->shape, &t, in->st->cutoff_s) :
		     INFINITY;
	/* No stage above the cutoff's slot, nor above the even layouts'
	 * (the optimum's is no longer): GLPK's tolerance of slack. */
	double limit = cut;

	if (isfinite(x->slot_bound_s))
		limit = fmin(limit, layout_milp_ms_per_s * x->slot_bound_s);
	limit *= 1 + 1e-6;
	in->st->layout_dps++;
	if (!layout_dp(x, limit, layers, modes)) {
		/* Nothing within the cutoff: the MILP's cutoff row would
		 * have made it infeasible. */
		if (in->st->cutoff_s > 0)
			in->st->cut++;
		return;
	}
	if (in->st->cutoff_s > 0 && x->dp_slot_ms > cut) {
		in->st->cut++;
		return;
	}
	p = *in->shape;
	layout_plan(&p, layers, modes, 0, x->P);
	inner_milp_refine(x, &p);
	if (*in->found)
		inner_milp_ties(x, in->best->est.details.slot_s);
}

/* Solve, and act on the outcome. */
static bool
inner_milp_solve(const struct layout_milp *x, struct plan_error *err)
{
	const struct inner *in = x->in;
	struct search_stats *st = in->st;
	enum milp_status status;

	if (!milp_solve(x->mp, in->opt->time_limit_s > 0 ? in->opt->time_limit_s : SEARCH_DEFAULT_TIME_LIMIT_S, &status, err)) {
		err->kind = err->kind == PLAN_ERR_NOMEM ? PLAN_ERR_NOMEM : PLAN_ERR_IO; /* the solver failed */
		return false;
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
		inner_uniform(in);
		return true;
	}
	if (status == MILP_OPTIMAL || status == MILP_FEASIBLE) {
		struct plan p;

		inner_milp_decode(x, &p);
		inner_milp_refine(x, &p);
		if (*in->found)
			inner_milp_ties(x, in->best->est.details.slot_s);
	}
	return true;
}

/* The compressing layout's MILP: its columns, every stage's rows and
 * the global ones, then GLPK; @x->mp is the caller's to free. */
static bool
inner_milp_build_solve(struct layout_milp *x, struct plan_error *err)
{
	x->mp = milp_new(err);
	if (!x->mp || !inner_milp_columns(x, err))
		return false;
	for (int i = 0; i < 3 * PLAN_MAX_STAGES; i++)
		x->ones[i] = 1.0;
	for (int s = 0; s < x->P; s++)
		if (!inner_milp_stage_rows(x, s, err))
			return false;
	return inner_milp_global_rows(x, err) && inner_milp_solve(x, err);
}

static bool
inner_milp(const struct inner *in, struct plan_error *err)
{
	struct layout_milp x = { .in = in, .P = in->shape->pp, .L = in->m->layers };
	struct estimate_stage_coefs *k = NULL;
	struct cols *col = NULL;
	struct search_candidate *even_best = malloc(sizeof(*even_best));
	struct inner even = *in;
	bool ok = false, even_found = false;

	x.nm = modes_allowed(in->shape, in->opt, x.modes);
	x.tpc = in->cmp && in->shape->tp > 1;
	x.ppc = in->cmp && x.P > 1;
	x.partial = partial_allowed(in);
	k = calloc((size_t)x.P, sizeof(*k));
	col = calloc((size_t)x.P, sizeof(*col));
	if (!k || !col || !even_best) {
		plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	x.k = k;
	x.col = col;
	/* The (near-)even layouts first: their slot bounds every stage's
	 * layers (inner_milp_most_layers), which GLPK's relaxation needs on
	 * deep pipelines; they become candidates after the MILP's, which
	 * keeps a tie, and count where the MILP runs out of time. */
	even.best = even_best;
	even.found = &even_found;
	inner_uniform(&even);
	x.slot_bound_s = even_found ? even_best->est.details.slot_s : INFINITY;
	if (!inner_milp_coefs(&x, k)) {
		ok = true; /* a shape the cost model refuses: no candidate */
		goto out;
	}
	if (!inner_milp_coefs_finite(k, x.P)) {
		plan_error_nonfinite(in->shape, "stage time or memory", err);
		goto out;
	}
	if (!x.tpc && !x.ppc) {
		inner_layout_dp(&x);
		if (even_found)
			consider(in, even_best);
		ok = true;
		goto out;
	}
	ok = inner_milp_build_solve(&x, err);
	if (ok && even_found)
		consider(in, even_best);
out:
	milp_free(x.mp);
	free(k);
	free(col);
	free(even_best);
	return ok;
}

/* Every composition of L into P parts, every mode per stage, every pair
 * of compression suffixes: the reference for the MILP (small shapes). */
struct exh {
	const struct inner *in;
	struct search_candidate cand;
	int modes[3], nm;
	int layers[PLAN_MAX_STAGES], mode[PLAN_MAX_STAGES];
	bool tpc, ppc;
	int most_compressed; /* TP-compressed layers at most: the layers or the budget; 0 without */
	double deadline;  /* --exhaustive: now_s() past which it stops (0: never) */
	long leaves;
	bool stopped;
};

static void
exh_modes(struct exh *x, int s)
{
	const struct inner *in = x->in;
	int P = in->shape->pp;

	if (x->stopped)
		return;
	if (s < P) {
		for (int i = 0; i < x->nm && !x->stopped; i++) {
			x->mode[s] = x->modes[i];
			exh_modes(x, s + 1);
		}
		return;
	}
	/* The clock every 64 layouts: a fraction of one prediction's cost. */
	if (x->deadline > 0 && (++x->leaves & 63) == 0 && now_s() > x->deadline) {
		x->stopped = true;
		return;
	}
	/* TP compression of the last W layers for every W the budget
	 * allows (MCBench's start layer anywhere, inside a stage too); PP
	 * compression from every stage. */
	for (int w = 0; w <= x->most_compressed; w++)
		for (int pf = x->ppc ? 0 : P; pf <= P; pf++) {
			struct plan p = *in->shape;

			layout_plan(&p, x->layers, x->mode, w, pf);
			if (evaluate(in, &p, &x->cand))
				consider(in, &x->cand);
		}
}

static void
exh_layers(struct exh *x, int s, int left)
{
	int P = x->in->shape->pp;

	if (s == P - 1) {
		x->layers[s] = left;
		exh_modes(x, 0);
		return;
	}
	for (int n = 1; n <= left - (P - 1 - s) && !x->stopped; n++) {
		x->layers[s] = n;
		exh_layers(x, s + 1, left - n);
	}
}

static void
note_reduced(const struct inner *in, double combinations)
{
	struct search_stats *st = in->st;

	if (st->truncated < SEARCH_MAX_REDUCED)
		st->reduced[st->truncated] = (struct search_reduced){ *in->shape, in->cmp, in->opt->dp_algo,
								      combinations };
	st->truncated++;
}

/* Every layout of the shape; with @bounded (--exhaustive), for at most
 * --time-limit seconds, as a MILP: the best found by then, counted. */
static void
inner_exhaustive(const struct inner *in, bool bounded)
{
	struct exh x = { .in = in };
	int P = in->shape->pp, L = in->m->layers;
	double count = 1.0;

	x.nm = modes_allowed(in->shape, in->opt, x.modes);
	x.tpc = in->cmp && in->shape->tp > 1;
	x.ppc = in->cmp && P > 1;
	x.most_compressed = !x.tpc ? 0 : (in->opt->max_compressed_layers >= 0 && in->opt->max_compressed_layers < L
					  ? in->opt->max_compressed_layers : L);
	/* C(L-1, P-1) layouts x modes^P x TP compression starts x PP ones. */
	for (int i = 1; i < P; i++)
		count = count * (L - i) / i;
	count *= pow(x.nm, P) * (x.most_compressed + 1) * (x.ppc ? P + 1 : 1);
	if (count > SEARCH_EXHAUSTIVE_MAX_COMBINATIONS) {
		/* Too many to enumerate: even layers and one mode for all
		 * stages, said in the stats so that the output can say it. */
		note_reduced(in, count);
		inner_uniform(in);
		return;
	}
	if (bounded)
		x.deadline = now_s() + (in->opt->time_limit_s > 0 ? in->opt->time_limit_s : SEARCH_DEFAULT_TIME_LIMIT_S);
	exh_layers(&x, 0, L);
	if (x.stopped)
		in->st->exhaustive_timeouts++;
}

bool
search_shape(const struct model *m, const struct cluster *c, const struct plan *shape,
	     const struct compressor *cmp, const struct search_options *opt, bool exhaustive,
	     struct search_candidate *best, bool *found, struct search_stats *stats,
	     struct plan_error *err)
{
	const struct inner in = { m, c, shape, cmp, opt, best, found, stats };
	/* Beyond PLAN_MAX_STAGES a plan lists no stage layout: even layers. */
	bool uniform = shape->vpp > 1 || (model_is_moe(m) && m->moe.every > 1) || shape->pp > PLAN_MAX_STAGES ||
		       /* plan-cli pipeline: the layout MILP prices 1F1B's bubble and layers of its own */
		       shape->pp_schedule != PLAN_PP_1F1B || shape->pp_split != PLAN_PP_SPLIT_EVEN ||
		       shape->pp_first_layers > 0 || shape->pp_last_layers > 0;
	int modes[3];

	*found = false;
	if (shape->tp < 1 || shape->pp < 1 || shape->dp < 1 || shape->vpp < 1 || shape->cp < 1)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "a shape needs tp, pp, dp, vpp and cp of at least 1 (got %d, %d, %d, %d, %d)",
				      shape->tp, shape->pp, shape->dp, shape->vpp, shape->cp);
	/* recompute_modes may leave a shape no mode (selective alone, with
	 * fused attention): no layout. */
	if (modes_allowed(shape, opt, modes) == 0)
		return true;
	if (uniform) {
		inner_uniform(&in);
		return true;
	}
	/* One stage: three recompute modes at most, with or without TP
	 * compression; enumerating them is exact (ZeRO-3's exposure too). */
	if (exhaustive || shape->pp == 1) {
		inner_exhaustive(&in, exhaustive);
		return true;
	}
	return inner_milp(&in, err);
}

/*
 * One outer shape, with its lower bound. plan-cli moebound: a shape
 * names its plan by index (the order enumerate() meets it), and the
 * plans themselves are stored only for the shapes about to be searched
 * (materialise()): a MoE search meets ~10^5 shapes, ~90 % of them pruned
 * unseen, and writing a struct plan (1.4 kB) for each was most of its
 * time. The sort moves 40 bytes a shape.
 */
struct shape {
	double lower_bound;
	long plan;      /* the plan's index in enumeration order */
	long order;     /* push order: ties in the bound keep it (by_bound) */
	const struct compressor *cmp;
	enum coll_algo dp_algo;
};

struct shape_list {
	struct shape *v;
	long n, cap;
	long nplans;                /* plans met by enumerate() */
	const unsigned char *want;  /* non-NULL: materialise these plans, push no shapes */
	long *slot;                 /* plan index -> its place in plans (-1: not stored) */
	struct plan *plans;
	long nstored, plans_cap;
	char refusal[SEARCH_REFUSAL_LEN]; /* why the first plan refused was (empty: none) */
};

/* Keep why plan @p cannot run, when no reason is kept yet: "no feasible
 * plan" with no reason left a user guessing which option the cost model
 * refuses (optimize --fp8-recipe mxfp8 on Hopper, --ep 2 on a dense
 * model). */
static void
note_refusal(char *refusal, const struct plan *p, const struct plan_error *e)
{
	if (refusal[0] == '\0')
		snprintf(refusal, SEARCH_REFUSAL_LEN, "tp %d x pp %d x dp %d, micro-batch %d: %s", p->tp, p->pp, p->dp,
			 p->micro_batch, e->message);
}

/* Count plan @p (its shapes, one per DP algorithm, name it by its
 * index); store it when it is wanted. */
static bool
push_plan(struct shape_list *l, const struct plan *p, struct plan_error *err)
{
	long idx = l->nplans++;

	if (!l->want || !l->want[idx])
		return true;
	if (l->nstored == l->plans_cap) {
		long cap = l->plans_cap ? 2 * l->plans_cap : 256;
		struct plan *v = realloc(l->plans, (size_t)cap * sizeof(*v));

		if (!v)
			return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
		l->plans = v;
		l->plans_cap = cap;
	}
	l->slot[idx] = l->nstored;
	l->plans[l->nstored++] = *p;
	return true;
}

/* A shape of the plan last stored (push_plan). */
static bool
push(struct shape_list *l, const struct compressor *cmp, enum coll_algo algo, double lb,
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
	l->v[l->n] = (struct shape){
		.lower_bound = lb,
		.plan = l->nplans - 1,
		.order = l->n,
		.cmp = cmp,
		.dp_algo = algo,
	};
	l->n++;
	return true;
}

static int
by_bound(const void *a, const void *b)
{
	const struct shape *p = a, *q = b;
	double x = p->lower_bound, y = q->lower_bound;

	/* Ties in the bound: the ring first, so that of two plans as fast
	 * the default algorithm is kept (keep_top); then the order of
	 * enumeration, so that the order does not hang on qsort's
	 * stability (glibc's merge sort kept it; C11 does not promise it). */
	if (x != y)
		return x < y ? -1 : 1;
	if (p->dp_algo != q->dp_algo)
		return (int)p->dp_algo - (int)q->dp_algo;
	return (p->order > q->order) - (p->order < q->order);
}

/*
 * The GPU work of one micro-batch of the whole model that no layout of
 * the shape avoids: the forward and backward (no recomputation) and the
 * backward TP collectives, which compression never touches (MCBench
 * compresses the forward ones only). @q: the shape as a CP rank runs it
 * (plan_cp_local), recomputing nothing; @own: its dense and MoE layers
 * as estimate_plan prices them under the search's framework
 * (build_layer_costs). plan-cli optbound: the framework-free layers
 * priced before overpriced a single grouped expert GEMM (pytorch-fsdp2's
 * moe_grouped_gemm single runs 128 experts' GEMMs 3x faster than
 * Transformer Engine's per-expert launches): qwen3-30b-a3b on 32 H100s
 * had bounds up to 2.7x a plan's time, and a search with both DP
 * algorithms listed slower 4th and 5th plans than the unpruned one.
 */
static double
gpu_bound_per_mb(const struct model *m, const struct cluster *c, const struct plan *q, const struct framework *fw,
		 const struct compute_layer own[2], bool compressed)
{
	struct plan_layout lay;
	struct tp_layer_comm tc;
	double per_mb, moe_layers;

	topology_plan(q, c, &lay);
	tp_layer_comm(m, q, c, NULL, &lay, &own[0], &tc);
	/* plan-cli review6: the backward's SP re-gathers (fewer in an MoE
	 * layer, none under sp_regather false) and an MoE layer's MLP pair
	 * (the dispatcher's own collectives instead: the allgather one's, or
	 * the all-to-all one's expert-TP pair under moe_tp_in_dispatcher)
	 * depend on the framework: left out, so that no framework's estimate
	 * falls below. */
	moe_layers = model_is_moe(m) ? model_moe_layers(m) : 0.0;
	per_mb = (m->layers - moe_layers) * (own[0].fwd_s + own[0].bwd_s) +
		 m->layers * (tc.bwd_s - tc.regathers * tc.regather_s) - moe_layers * tc.mlp_bwd_s;
	/* plan-cli optsearch: without a compressor the forward's TP
	 * collectives are as unavoidable as the backward's. */
	if (!compressed)
		per_mb += m->layers * tc.fwd_s - moe_layers * tc.mlp_fwd_s;
	if (model_is_moe(m)) {
		per_mb += moe_layers * (own[1].fwd_s + own[1].bwd_s);
		/* Without Lancet every all-to-all is exposed (expert_par.c),
		 * whatever the layout: two forward, two backward a layer.
		 * plan-cli optbound: or @fw's allgather dispatcher's
		 * collectives, which the all-to-alls overpriced (bounds 1.07x
		 * a qwen3-30b-a3b plan's time under megatron-core-0.6-
		 * sequential, 1.55x in test-search's small MoE). */
		if (q->moe_overlap == PLAN_MOE_OVERLAP_NONE) {
			struct ep_layer_comm ep;

			ep_layer_comm(m, q, c, fw, &lay, &own[1], &ep);
			per_mb += moe_layers * (ep.fwd_s + ep.bwd_s);
		}
	}
	return per_mb;
}

/* plan-cli optbound: one layer's forward and backward launches under
 * @fw (estimate.c stage_host_s with recompute none), its element-wise
 * kernels as compute.c counts them in @cl. */
static double
layer_host_bound(const struct model *m, const struct plan *p, const struct framework *fw, bool moe,
		 const struct compute_layer *cl)
{
	struct host_kernels hk;

	host_layer_kernels(m, p, fw, moe, cl->ew_kernels, &hk);
	return host_layer_pass_s(fw, hk.fwd) + host_layer_pass_s(fw, hk.bwd);
}

/*
 * plan-cli optbound: the host time of one micro-batch of the whole
 * model that no layout avoids: every layer's forward and backward
 * launches without recomputation (which only adds launches) and the
 * ends' (host_ends_kernels: the first and the last stage's, one stage's
 * when pp is 1). @p: the shape recomputing nothing; @own: as
 * gpu_bound_per_mb. 0 without a host model (host_launch_s 0).
 */
static bool
host_bounded(const struct framework *fw)
{
	return fw->host_launch_s > 0.0 && fw->cuda_graphs != FRAMEWORK_GRAPHS_FULL;
}

/* The layers' part of host_bound_per_mb. */
static double
host_layers_bound(const struct model *m, const struct plan *p, const struct framework *fw,
		  const struct compute_layer own[2])
{
	double moe_layers = model_is_moe(m) ? model_moe_layers(m) : 0.0, host;

	host = (m->layers - moe_layers) * layer_host_bound(m, p, fw, false, &own[0]);
	if (moe_layers > 0.0)
		host += moe_layers * layer_host_bound(m, p, fw, true, &own[1]);
	return host;
}

/* The ends' part: the first and the last stage's launches. */
static double
host_ends_bound(const struct plan *p, const struct framework *fw)
{
	struct host_kernels ends;

	host_ends_kernels(p, true, true, &ends);
	return host_eager_s(fw, ends.fwd + ends.bwd);
}

static double
host_bound_per_mb(const struct model *m, const struct plan *p, const struct framework *fw,
		  const struct compute_layer own[2])
{
	if (!host_bounded(fw))
		return 0.0;
	return host_layers_bound(m, p, fw, own) + host_ends_bound(p, fw);
}

/* The layer costs of @m as build_layer_costs prices them, at @pace, in @own. */
static void
bound_layer_costs(const struct model *m, const struct cluster *c, const struct plan *q,
		  const struct framework *fw, double pace, struct compute_layer own[2])
{
	for (int moe = 0; moe < (model_is_moe(m) ? 2 : 1); moe++) {
		compute_layer_time(m, q, c, fw, moe, &own[moe]);
		compute_layer_scale(&own[moe], pace);
	}
}

/* plan-cli hybrid (review16): a hybrid model's bound, kind by kind at its
 * kind models' costs (the top-level model prices every layer as
 * attention and MLP: bounds up to 1.46x a plan's time); the ends once. */
static void
hybrid_bound(const struct model *m, const struct cluster *c, const struct plan *q, const struct plan *r,
	     const struct framework *fw, double pace, bool compressed, double *gpu, double *host)
{
	*gpu = *host = 0.0;
	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
		struct compute_layer own[2];
		struct model km;

		model_kind_model(m, kind, &km);
		if (km.layers == 0)
			continue;
		bound_layer_costs(&km, c, q, fw, pace, own);
		*gpu += gpu_bound_per_mb(&km, c, q, fw, own, compressed);
		if (host_bounded(fw))
			*host += host_layers_bound(&km, r, fw, own);
	}
	if (host_bounded(fw))
		*host += host_ends_bound(r, fw);
}

/*
 * A bound no layout of the shape can beat under framework @fw. Stage t's
 * slot is at least b_t = max(G_t, H_t) + S: its GPU work G_t
 * (gpu_bound_per_mb's share), its launches H_t (estimate.c
 * stage_launch_s: a micro-batch between host synchronisations takes the
 * larger of its GPU and host time, and host_exposed_synced_s's stretches
 * each take their larger, no less in sum) and the launch each of its
 * microbatch_syncs (at least) exposes, S; under 1F1B its share of the
 * fill and drain is at least b_t / v. So T = max_s (m slot_s + sum of
 * the other shares) >= (m - 1/v) max b + sum b / v >= (m + (p - 1)/v)
 * sum b / p (Narayanan et al. SC21, Eq. 2; pipeline_bound_slots), with
 * sum b >= max(sum G, sum H) + p S however the layers are laid out;
 * under the other schedules T >= m max slot. Past ESTIMATE_MAX_STAGES
 * core_pace leaves the other stages' shares out: m slots (bound_slots).
 * The iteration adds host_syncs launches (core_host's fixed_iter) on top.
 */
static struct bound_terms
bound_terms(const struct model *m, const struct cluster *c, const struct plan *p, const struct framework *fw,
	    bool compressed)
{
	/* A CP rank's s/cp tokens (plan_cp_local): its work per micro-batch. */
	struct plan q = plan_cp_local(p), r = *p;
	struct compute_layer own[2];
	double pace = gpu_pace_factor(&c->gpu, plan_gpus(p)), gpu, host;

	q.recompute = r.recompute = PLAN_RECOMPUTE_NONE;
	if (model_is_hybrid(m)) {
		hybrid_bound(m, c, &q, &r, fw, pace, compressed, &gpu, &host);
	} else {
		/* As build_layer_costs prices them, at the slowest GPU's pace. */
		bound_layer_costs(m, c, &q, fw, pace, own);
		gpu = gpu_bound_per_mb(m, c, &q, fw, own, compressed);
		host = host_bound_per_mb(m, &r, fw, own);
	}
	return (struct bound_terms){ fmax(gpu, host), fmax(0.0, fw->microbatch_syncs), fw->host_launch_s,
				     fmax(0.0, fw->host_syncs) * fw->host_launch_s };
}

static double
lower_bound(const struct model *m, const struct cluster *c, const struct plan *p, const struct framework *fw,
	    bool compressed)
{
	const struct bound_terms t = bound_terms(m, c, p, fw, compressed);
	double slots = bound_slots(p);

	return slots * t.work_s / p->pp + slots * t.syncs * t.launch_s + t.fixed_s;
}

double
search_lower_bound(const struct model *m, const struct cluster *c, const struct plan *shape,
		   const struct framework *fw, bool compressed)
{
	struct framework fw_default;

	if (!fw) {
		framework_init_default(&fw_default);
		fw = &fw_default;
	}
	return lower_bound(m, c, shape, fw, compressed);
}

/* TP degrees and micro-batch sizes tried per shape, at the most. */
#define SEARCH_MAX_DEGREES 32

/* The outer choices of one shape, made one dimension at a time by enumerate(). */
struct outer {
	int tp, cp, pp, dp, mb, vpp, zero, mics_group, ep, sp, route;
	int etp;        /* plan-cli optsearch: expert TP (tp: as the dense layers) */
	int tpo;        /* TP overlap (with sequence parallelism, when the options allow it) */
	int split, first, last, sched; /* plan-cli pipeline: the layout rule and the schedule */
	int mics_2hop;  /* MiCS's 2-hop all-gather (plan.mics_hierarchical) */
	int dp_scheme;  /* compressed DP gradients: enum compress_dp_scheme */
	int dp_on_cpu;  /* ... coded on the host (BytePS-Compress) */
};

/* What enumerate() reads, and the list it fills. */
struct outer_space {
	const struct model *m;
	const struct cluster *c;
	const struct search_options *opt;
	const struct framework *fw; /* opt's, or the built-in one (lower_bound) */
	int seq;
	struct shape_list *out;
	struct plan_error *err;
};

/* TP degrees that split the heads and the FFN, split or replicate the KV
 * heads, and divide a node when smaller than one (whole nodes above). */
static int
tp_candidates(const struct outer_space *x, int gpus, int *tps)
{
	const struct model *m = x->m;
	int G = x->c->gpus_per_node;
	int max_tp = x->opt->max_tp > 0 ? x->opt->max_tp : G;
	int n = 0;

	/* Every degree, not only powers of two (6 GPUs per node allow TP 3
	 * and 6): inside a node it must divide the node, across nodes take
	 * whole nodes. */
	for (int tp = 1; tp <= max_tp && tp <= gpus && n < SEARCH_MAX_DEGREES; tp++) {
		if (m->heads % tp || m->ffn_hidden % tp || (m->kv_heads % tp && tp % m->kv_heads))
			continue;
		if (tp < G ? G % tp != 0 : tp % G != 0)
			continue;
		tps[n++] = tp;
	}
	return n;
}

/*
 * Context-parallel degrees: powers of two up to --max-cp (default 8)
 * whose load-balanced chunks (2 cp of them) divide the sequence and leave
 * each rank at least 1024 tokens, below which the K/V exchanges cannot
 * hide behind so little attention; only with fused attention, and not for
 * MoE models (plan_validate's limits).
 */
static int
cp_candidates(const struct outer_space *x, int *cps)
{
	int max_cp = x->opt->max_cp > 0 ? x->opt->max_cp : SEARCH_DEFAULT_MAX_CP;
	int n = 0;

	cps[n++] = 1;
	if (!x->opt->flash_attention || model_is_moe(x->m))
		return n;
	for (int cp = 2; cp <= max_cp && n < 16; cp *= 2)
		if (x->seq % (2 * cp) == 0 && x->seq / cp >= 1024)
			cps[n++] = cp;
	return n;
}

/* DeepSpeed-Ulysses (--cp-method all-to-all) splits each TP rank's heads,
 * and its KV heads where it has several, cp ways (plan_validate's rule). */
static bool
ulysses_splits(const struct model *m, const struct search_options *opt, int tp, int cp)
{
	if (cp < 2 || opt->cp_method != PLAN_CP_ALLTOALL)
		return true;
	return (m->heads / tp) % cp == 0 && (m->kv_heads < tp || (m->kv_heads / tp) % cp == 0);
}

/* ZeRO stages: 0; 1 with data parallelism; 2 and 3 also without
 * pipelining (DeepSpeed runs neither with its pipeline engine: gradient
 * partitioning conflicts with gradient accumulation across
 * micro-batches; Megatron's distributed optimizer is stage 1). ZeRO-2
 * costs what ZeRO-1 does here and keeps less: it matters where memory
 * binds. */
static int
zero_candidates(const struct search_options *opt, const struct outer *o, int *zeros)
{
	int max_zero = opt->max_zero < 0 ? 3 : opt->max_zero;
	int n = 0;

	zeros[n++] = 0;
	if (o->dp > 1 && max_zero >= 1)
		zeros[n++] = 1;
	if (o->dp > 1 && o->pp == 1 && max_zero >= 2)
		zeros[n++] = 2;
	if (o->dp > 1 && o->pp == 1 && max_zero >= 3)
		zeros[n++] = 3;
	return n;
}

/* MiCS groups (0: none): whole nodes, dividing dp, smaller than dp. */
static int
mics_candidates(const struct outer_space *x, const struct outer *o, int zero, int *groups)
{
	int G = x->c->gpus_per_node, n = 0;

	groups[n++] = 0;
	if (zero == 3 && !model_is_moe(x->m) && o->cp == 1)
		for (int g = G; g < o->dp && n < 16; g *= 2)
			if (o->dp % g == 0)
				groups[n++] = g;
	return n;
}

/* plan-cli optsearch: begin (expert tensor parallelism searched) */
/* One expert layout: the EP degree and the experts' TP degree. */
struct expert_layout {
	int ep, etp;
};

/* Most expert layouts of one shape. */
#define SEARCH_MAX_EXPERT_LAYOUTS 128

/*
 * Expert TP degrees (MoE parallel folding, Liu et al. arXiv:2504.14960,
 * Sec. 3; Megatron-Core's --expert-tensor-parallel-size): those --etp
 * lists (0: tp), else tp and every divisor of tp that splits the experts'
 * FFN. Folding exists to split the experts less than the dense layers
 * (the paper's recipes, DeepSeek-V3's TP 2 with ETP 1): an ETP above tp
 * is searched only where --etp names it. A dense model: tp.
 */
static int
etp_candidates(const struct outer_space *x, const struct outer *o, int *etps)
{
	const struct search_allowed *a = &x->opt->allowed[PLAN_ATTR_ETP];
	const struct model *m = x->m;
	int n = 0;

	etps[n++] = o->tp;
	if (!model_is_moe(m))
		return n;
	if (a->n > 0) {
		n = 0;
		for (int i = 0; i < a->n && n < SEARCH_MAX_DEGREES; i++) {
			int t = a->v[i] == 0 ? o->tp : (int)a->v[i];
			bool dup = false;

			for (int k = 0; k < n; k++)
				dup = dup || etps[k] == t;
			if (!dup)
				etps[n++] = t;
		}
		return n;
	}
	if (o->tp > 1)
		etps[n++] = 1;
	return n;
}

/*
 * The expert layouts of a shape: each ETP degree (etp_candidates) and,
 * for it, the EP degrees, powers of two dividing the experts with ep x
 * etp dividing tp x cp x dp (parallel_state.py: expert_data_parallel_size
 * = tp x cp x dp / (ep x etp)); with etp = tp, ep | cp x dp. A dense
 * model: ep 1, etp as tp.
 */
static int
expert_candidates(const struct outer_space *x, const struct outer *o, struct expert_layout *out)
{
	const struct model *m = x->m;
	long long ranks = (long long)o->tp * o->dp * (o->cp > 0 ? o->cp : 1);
	int etps[SEARCH_MAX_DEGREES], nt = etp_candidates(x, o, etps), n = 0;

	if (!model_is_moe(m)) {
		out[n++] = (struct expert_layout){ .ep = 1, .etp = o->tp };
		return n;
	}
	for (int i = 0; i < nt; i++)
		for (long long e = 1; e * etps[i] <= ranks && n < SEARCH_MAX_EXPERT_LAYOUTS; e *= 2)
			if (m->moe.experts % e == 0 && ranks % (e * etps[i]) == 0)
				out[n++] = (struct expert_layout){ .ep = (int)e, .etp = etps[i] };
	return n;
}

/* The plan's etp for shape @o: 0 (as tp, Megatron-Core's default) where
 * it is tp, unless --etp lists tp's value and not 0. */
static int
etp_value(const struct search_options *opt, const struct outer *o)
{
	const struct search_allowed *a = &opt->allowed[PLAN_ATTR_ETP];

	if (o->etp != o->tp || a->n == 0 || search_allowed_has(a, 0))
		return o->etp == o->tp ? 0 : o->etp;
	return o->etp;
}
/* plan-cli optsearch: end */

/* Whether search_options.exclude_dim leaves shape @o out. */
static bool
excluded(const struct search_options *opt, const struct outer *o)
{
	int v;

	switch (opt->exclude_dim) {
	case SEARCH_DIM_TP: v = o->tp; break;
	case SEARCH_DIM_PP: v = o->pp; break;
	case SEARCH_DIM_MICRO_BATCH: v = o->mb; break;
	case SEARCH_DIM_ZERO: v = o->zero; break;
	case SEARCH_DIM_VPP: v = o->vpp; break;
	case SEARCH_DIM_SP: v = o->sp; break;
	case SEARCH_DIM_CP: v = o->cp; break;
	case SEARCH_DIM_EP: v = o->ep; break;
	default: return false;
	}
	return v == opt->exclude_value;
}

/* Whether ring and hierarchical DP collectives differ for @p: its DP
 * group spans nodes and has several GPUs in each (collective.c). */
static bool
dp_algo_matters(const struct cluster *c, const struct plan *p)
{
	struct plan_layout lay;

	topology_plan(p, c, &lay);
	return lay.dp.nodes > 1 && lay.dp.per_node > 1;
}

/* Whether the search's constraints allow @p with DP algorithm @algo. */
static bool
allows(const struct search_options *opt, const struct plan *p, enum coll_algo algo)
{
	struct estimate_options eo = { .dp_algo = algo };
	struct plan_attr_target t = { (struct plan *)p, &eo };

	/* plan-cli recomp: a shape has no recompute mode yet: its stages'
	 * modes are chosen from recompute_modes, which --recompute sets. */
	for (int id = 0; id < PLAN_ATTR_COUNT; id++)
		if (opt->allowed[id].n > 0 && plan_attrs[id].type != PLAN_ATTR_LIST && id != PLAN_ATTR_RECOMPUTE &&
		    !search_allowed_has(&opt->allowed[id], plan_attr_get(&plan_attrs[id], &t)))
			return false;
	return true;
}

/* Push shape @p (with the other DP algorithm where it matters) when the
 * constraints allow it. */
static bool
push_shape(const struct outer_space *x, const struct plan *pp, const struct compressor *cmp)
{
	struct plan p = *pp;
	enum coll_algo other = x->opt->dp_algo == COLL_ALGO_RING ? COLL_ALGO_HIERARCHICAL : COLL_ALGO_RING;
	bool mine = allows(x->opt, &p, x->opt->dp_algo);
	bool theirs = x->opt->search_dp_algo && dp_algo_matters(x->c, &p) && allows(x->opt, &p, other);
	double lb;

	if (!mine && !theirs)
		return true;
	/* After the given attributes: precision may be one of a list. */
	p.fp8_gather = x->opt->fp8_gather && p.precision == PLAN_PRECISION_FP8 && (p.zero >= 3 || p.mics_group > 0);
	/* So is the fp8 recipe: a 16-bit plan of --precision bf16,fp8 keeps none
	 * (estimate_check_precision refuses one). */
	if (p.precision == PLAN_PRECISION_BF16 || p.precision == PLAN_PRECISION_FP16)
		p.fp8_recipe = PLAN_FP8_FRAMEWORK;
	/* A precision or recipe the GPU does not run (fp8 on an A100, fp4 off
	 * Blackwell): left out, its reason kept, before any price of it, the
	 * same when materialising (the plans must be met in the same order). */
	{
		struct plan_error e;

		plan_error_clear(&e);
		if (!estimate_check_precision(&p, x->c, x->fw, &e)) {
			note_refusal(x->out->refusal, &p, &e);
			return true;
		}
	}
	/* Materialising (search_run): the plan only, as first met. */
	if (x->out->want)
		return push_plan(x->out, &p, x->err);
	lb = lower_bound(x->m, x->c, &p, x->fw, cmp != NULL);
	/* Shapes are sorted and pruned by this bound: it must be a number. */
	if (!isfinite(lb))
		return plan_error_nonfinite(&p, "lower bound on the iteration time", x->err);
	/* Every layout of this shape would be refused (estimate_plausible):
	 * say why here, not "no feasible plan" at the end. */
	if (lb > ESTIMATE_MAX_ITERATION_S)
		return plan_error_set(x->err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "plan tp %d x pp %d x dp %d, micro-batch %d: even the lower bound on the "
				      "iteration time, %.3g s, is more than a year: a rate or an efficiency in "
				      "the profiles is implausibly small",
				      p.tp, p.pp, p.dp, p.micro_batch, lb);
	if (!push_plan(x->out, &p, x->err))
		return false;
	if (mine && !push(x->out, cmp, x->opt->dp_algo, lb, x->err))
		return false;
	/* The other DP algorithm, where it changes anything: a DP group
	 * across nodes with several GPUs in each (collective.c). */
	return !theirs || push(x->out, cmp, other, lb, x->err);
}

/* A given combination plan_validate refuses: left out, its reason kept
 * (apart from push_given, whose every frame would carry the error). */
static bool
refuse_given(const struct outer_space *x, const struct plan *p)
{
	struct plan_error e;

	plan_error_clear(&e);
	if (x->out->refusal[0] == '\0' && !plan_validate(p, x->m, x->c, &e))
		note_refusal(x->out->refusal, p, &e);
	return true;
}

/*
 * The attributes the search takes as given (not PLAN_ATTR_SEARCHED),
 * from attribute @id on: each value their constraint lists, in turn; a
 * combination the plan cannot run (plan_validate: a Ulysses split of the
 * heads, ...) is left out.
 */
static bool
push_given(const struct outer_space *x, const struct plan *base, const struct compressor *cmp, int id)
{
	struct plan p = *base;
	struct plan_attr_target t = { &p, NULL };

	for (; id < PLAN_ATTR_COUNT; id++) {
		const struct search_allowed *a = &x->opt->allowed[id];

		if (a->n == 0 || (plan_attrs[id].flags & PLAN_ATTR_SEARCHED) || plan_attrs[id].type == PLAN_ATTR_LIST ||
		    plan_attrs[id].home != PLAN_ATTR_IN_PLAN)
			continue;
		for (int i = 0; i < a->n; i++) {
			plan_attr_set(&plan_attrs[id], &t, a->v[i]);
			if (!push_given(x, &p, cmp, id + 1))
				return false;
		}
		return true;
	}
	if (base != &p && memcmp(base, &p, sizeof(p)) != 0 && !plan_validate(&p, x->m, x->c, NULL))
		return refuse_given(x, &p);
	return push_shape(x, &p, cmp);
}

static bool
push_outer(const struct outer_space *x, const struct outer *o, const struct compressor *cmp,
	   bool dpc)
{
	struct plan p;

	if (excluded(x->opt, o))
		return true;
	plan_init(&p);
	p.tp = o->tp;
	p.cp = o->cp;
	p.pp = o->pp;
	p.dp = o->dp;
	p.vpp = o->vpp;
	p.pp_split = o->split;
	p.pp_first_layers = o->first;
	p.pp_last_layers = o->last;
	p.pp_schedule = o->sched;
	p.micro_batch = o->mb;
	p.global_batch = x->opt->global_batch;
	p.seq_len = x->seq;
	p.cp_method = o->cp > 1 ? x->opt->cp_method : PLAN_CP_RING;
	p.sequence_parallel = o->sp;
	p.tp_overlap = o->tpo;
	p.flash_attention = x->opt->flash_attention;
	p.precision = x->opt->precision;
	p.zero = o->zero;
	p.mics_group = o->mics_group;
	p.mics_hierarchical = o->mics_2hop;
	p.dp_overlap = x->opt->no_dp_overlap ? 0 : -1;
	p.ep = o->ep;
	p.etp = etp_value(x->opt, o);
	p.moe_routing = o->route;
	p.moe_overlap = x->opt->moe_overlap;
	p.compress.dp = dpc;
	if (dpc) {
		p.compress.dp_scheme = o->dp_scheme;
		p.compress.dp_on_cpu = o->dp_on_cpu;
	}
	return push_given(x, &p, cmp, 0);
}

/*
 * Compressed DP gradients with @cmp: every scheme the method allows (an
 * all-reduce only of what can be summed: PowerSGD's P and Q) and the
 * coding on the GPU or, as BytePS-Compress does, on the host CPU.
 */
static bool
enumerate_dp_schemes(const struct outer_space *x, const struct outer *base, const struct compressor *cmp)
{
	static const int schemes[] = { COMPRESS_DP_TWOWAY, COMPRESS_DP_ALLGATHER, COMPRESS_DP_ALLREDUCE };
	struct outer o = *base;

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		o.dp_scheme = schemes[i];
		if (o.dp_scheme == COMPRESS_DP_ALLREDUCE && !compressor_allreducible(cmp))
			continue;
		for (o.dp_on_cpu = 0; o.dp_on_cpu < 2; o.dp_on_cpu++)
			if (!push_outer(x, &o, cmp, true))
				return false;
	}
	return true;
}

/* No compressor, or one of them, with or without DP gradient compression. */
static bool
enumerate_compressors(const struct outer_space *x, const struct outer *o)
{
	const struct search_options *opt = x->opt;

	for (int ci = -1; ci < opt->ncompressors; ci++)
		for (int dpc = 0; dpc < 2; dpc++) {
			const struct compressor *cmp = ci >= 0 ? opt->compressors[ci] : NULL;

			/* DP gradient compression: an outer choice,
			 * for methods that can compress gradients. */
			if (dpc && (!cmp || o->dp < 2 || o->zero != 0 || model_is_moe(x->m) ||
				    cmp->method == COMPRESSOR_AUTOENCODER))
				continue;
			/* A compressor only matters where there is
			 * traffic to compress. */
			if (cmp && o->tp == 1 && o->pp == 1 && !dpc)
				continue;
			if (!(dpc ? enumerate_dp_schemes(x, o, cmp) : push_outer(x, o, cmp, false)))
				return false;
		}
	return true;
}

/* Sequence parallelism (with TP), TP overlap (with sequence parallelism,
 * under --tp-overlap: on or off, since overlapping can lose on GEMMs too
 * small to hide their collectives) and MoE routing (with EP). */
static bool
enumerate_options(const struct outer_space *x, const struct outer *base)
{
	struct outer o = *base;

	for (o.sp = 0; o.sp < (o.tp > 1 && x->seq % o.tp == 0 ? 2 : 1); o.sp++)
		for (o.tpo = 0; o.tpo < (x->opt->tp_overlap && o.sp ? 2 : 1); o.tpo++)
			for (o.route = 0; o.route < (o.ep > 1 ? 2 : 1); o.route++)
				if (!enumerate_compressors(x, &o))
					return false;
	return true;
}

/* ZeRO stage, MiCS group (and its gather) and EP degree. */
static bool
enumerate_sharding(const struct outer_space *x, const struct outer *base)
{
	struct outer o = *base;
	int zeros[4], nz = zero_candidates(x->opt, &o, zeros);
	struct expert_layout eps[SEARCH_MAX_EXPERT_LAYOUTS];
	int ne = expert_candidates(x, &o, eps);

	for (int zi = 0; zi < nz; zi++) {
		int groups[16], ng = mics_candidates(x, &o, zeros[zi], groups);

		o.zero = zeros[zi];
		for (int gi = 0; gi < ng; gi++) {
			o.mics_group = groups[gi];
			/* A group across nodes gathers in two hops (MiCS, Sec. 3.3)
			 * or flat: whichever is faster on these links. */
			for (o.mics_2hop = 1; o.mics_2hop >= (o.mics_group > x->c->gpus_per_node ? 0 : 1);
			     o.mics_2hop--)
				for (int ei = 0; ei < ne; ei++) {
					o.ep = eps[ei].ep;
					o.etp = eps[ei].etp;
					if (!enumerate_options(x, &o))
						return false;
				}
		}
	}
	return true;
}

/* plan-cli pipeline: begin (uneven layouts and schedules) */
/* Layout rules of one shape, at the most. */
#define SEARCH_MAX_LAYOUTS 64

/* A layout rule: the split and Megatron's first/last-stage layers. */
struct layout {
	int split, first, last;
};

static void
layout_rule_plan(int pp, int vpp, const struct layout *l, struct plan *p)
{
	plan_init(p);
	p->pp = pp;
	p->vpp = vpp;
	p->pp_split = l->split;
	p->pp_first_layers = l->first;
	p->pp_last_layers = l->last;
}

/* Add layout @l if the model can take it and no layout before it puts
 * the same layers on every virtual stage (first 6 and last 8 on 6,8,8,8
 * is first 6 alone). */
static void
layout_add(const struct outer_space *x, int pp, int vpp, struct layout l, struct layout *out, int *n)
{
	struct plan p, q;

	layout_rule_plan(pp, vpp, &l, &p);
	if (*n == SEARCH_MAX_LAYOUTS || !plan_validate_layout(&p, x->m, NULL))
		return;
	for (int i = 0; i < *n; i++) {
		bool same = true;

		layout_rule_plan(pp, vpp, &out[i], &q);
		for (int k = 0; k < pp * vpp && same; k++)
			same = pipeline_chunk_layers(&p, x->m, k) == pipeline_chunk_layers(&q, x->m, k);
		if (same)
			return;
	}
	out[(*n)++] = l;
}

/*
 * The layouts optimize tries for pp x vpp: the even one where the layers
 * divide (with vpp 1 and a remainder the layout MILP chooses the
 * stages' layers itself); otherwise, or where a constraint names them,
 * the --pp-split rules listed (Megatron-Core's embedding/loss accounting,
 * torchtitan's split) and Megatron's first/last-stage counts: the listed ones, or the middle
 * ranks ceil(L/(p v)) v layers each and the first, the last or both ends
 * the rest, no more than a middle rank (the ends are lightened, as for
 * DeepSeek-V3's 61 layers on 16 stages, not loaded).
 */
static int
layout_candidates(const struct outer_space *x, int pp, int vpp, struct layout *out)
{
	const struct search_allowed *as = &x->opt->allowed[PLAN_ATTR_PP_SPLIT];
	const struct search_allowed *af = &x->opt->allowed[PLAN_ATTR_PP_FIRST_LAYERS];
	const struct search_allowed *al = &x->opt->allowed[PLAN_ATTR_PP_LAST_LAYERS];
	int L = x->m->layers, n = 0;
	bool divides = L % (pp * vpp) == 0;

	if (divides || vpp == 1)
		out[n++] = (struct layout){ PLAN_PP_SPLIT_EVEN, 0, 0 };
	if (pp < 2 || (divides && as->n == 0 && af->n == 0 && al->n == 0) ||
	    (vpp == 1 && as->n == 0 && af->n == 0 && al->n == 0))
		return n;
	/* The other frameworks' rules where --pp-split lists them (the time
	 * optimize takes grows with every layout a shape has). */
	for (int i = 0; i < as->n; i++)
		if (as->v[i] != PLAN_PP_SPLIT_EVEN)
			layout_add(x, pp, vpp, (struct layout){ (int)as->v[i], 0, 0 }, out, &n);
	/* The framework's own rule (its pipeline_split key), as predict applies it. */
	if (as->n == 0 && x->opt->framework && x->opt->framework->pipeline_split != PLAN_PP_SPLIT_EVEN)
		layout_add(x, pp, vpp, (struct layout){ x->opt->framework->pipeline_split, 0, 0 }, out, &n);
	if (af->n > 0 || al->n > 0) {
		for (int i = 0; i < (af->n ? af->n : 1); i++)
			for (int j = 0; j < (al->n ? al->n : 1); j++)
				layout_add(x, pp, vpp, (struct layout){ PLAN_PP_SPLIT_EVEN, af->n ? (int)af->v[i] : 0,
									al->n ? (int)al->v[j] : 0 }, out, &n);
		return n;
	}
	{
		int mid = (L + pp * vpp - 1) / (pp * vpp) * vpp, ends = L - (pp - 1) * mid, both = L - (pp - 2) * mid;
		int f = both / 2 / vpp * vpp;

		if (ends > 0 && ends <= mid) {
			layout_add(x, pp, vpp, (struct layout){ PLAN_PP_SPLIT_EVEN, ends, 0 }, out, &n);
			layout_add(x, pp, vpp, (struct layout){ PLAN_PP_SPLIT_EVEN, 0, ends }, out, &n);
		}
		if (f > 0 && both - f > 0 && both - f <= mid)
			layout_add(x, pp, vpp, (struct layout){ PLAN_PP_SPLIT_EVEN, f, both - f }, out, &n);
	}
	return n;
}

/* plan-cli optsearch: whether optimize tries schedule @sched: those
 * --pp-schedule lists, else those the framework runs (its
 * pipeline_schedules key: 1F1B alone for Megatron-Core and DeepSpeed; the
 * zero-bubble ones keep 1F1B's memory and never lose to it here, so they
 * would win every pipelined plan whether the framework runs them or not). */
static bool
sched_searched(const struct outer_space *x, int sched)
{
	const struct search_allowed *a = &x->opt->allowed[PLAN_ATTR_PP_SCHEDULE];

	return a->n > 0 ? search_allowed_has(a, sched) : framework_runs_schedule(x->opt->framework, sched);
}

/* The schedules a pp x vpp shape with @mb micro-batches can run
 * (plan_validate's rules) and optimize tries (sched_searched): 1F1B
 * (interleaved: m a multiple of p), ZB-H1 and DualPipe with one chunk a
 * rank, ZB-V and DualPipeV with two. */
static int
schedule_candidates(const struct outer_space *x, int pp, int vpp, int mb, int *out)
{
	int n = 0;

	if (vpp == 1 || mb % pp == 0)
		out[n++] = PLAN_PP_1F1B;
	if (pp < 2 || mb < pp)
		return n;
	if (vpp == 1) {
		if (sched_searched(x, PLAN_PP_ZB_H1))
			out[n++] = PLAN_PP_ZB_H1;
		if (pp % 2 == 0 && mb >= 2 * pp && mb % 2 == 0 && sched_searched(x, PLAN_PP_DUALPIPE))
			out[n++] = PLAN_PP_DUALPIPE;
	} else if (vpp == 2) {
		if (sched_searched(x, PLAN_PP_ZB_V))
			out[n++] = PLAN_PP_ZB_V;
		if (mb >= 2 * pp && sched_searched(x, PLAN_PP_DUALPIPEV))
			out[n++] = PLAN_PP_DUALPIPEV;
	}
	return n;
}
/* plan-cli pipeline: end */

/* Micro-batch sizes (every divisor of the DP rank's batch, up to
 * --max-micro-batch: 3, 6 and 12 too) and
 * interleaving (chunks of whole layers, micro-batches a multiple of pp). */
static bool
enumerate_batches(const struct outer_space *x, const struct outer *base)
{
	const struct search_options *opt = x->opt;
	int max_mb = opt->max_micro_batch > 0 ? opt->max_micro_batch : 16;
	int max_vpp = opt->max_vpp > 0 ? opt->max_vpp : 8;
	int mbs = opt->global_batch / base->dp, L = x->m->layers, pp = base->pp;
	struct outer o = *base;

	for (o.mb = 1; o.mb <= max_mb; o.mb++) {
		if (mbs % o.mb)
			continue;
		for (o.vpp = 1; o.vpp <= (pp > 1 ? max_vpp : 1); o.vpp++) {
			struct layout lays[SEARCH_MAX_LAYOUTS];
			int nl = layout_candidates(x, pp, o.vpp, lays);

			(void)L;
			for (int li = 0; li < nl; li++) {
				int scheds[5], ns = schedule_candidates(x, pp, o.vpp, mbs / o.mb, scheds);

				o.split = lays[li].split;
				o.first = lays[li].first;
				o.last = lays[li].last;
				for (int si = 0; si < ns; si++) {
					o.sched = scheds[si];
					if (!enumerate_sharding(x, &o))
						return false;
				}
			}
		}
	}
	return true;
}

/* Enumerate the outer shapes of the search space: TP, then PP (DP takes
 * the remaining GPUs), then the batch, the sharding and the options. */
static bool
enumerate(const struct model *m, const struct cluster *c, const struct search_options *opt,
	  int gpus, int seq, struct shape_list *out, struct plan_error *err)
{
	struct framework fw_default;
	const struct outer_space x = { .m = m, .c = c, .opt = opt, .fw = opt->framework ? opt->framework : &fw_default,
				       .seq = seq, .out = out, .err = err };
	int max_pp = opt->max_pp > 0 ? opt->max_pp : m->layers;
	int tps[SEARCH_MAX_DEGREES], ntp = tp_candidates(&x, gpus, tps);
	int cps[16], ncp = cp_candidates(&x, cps);

	framework_init_default(&fw_default);
	for (int ti = 0; ti < ntp; ti++)
		for (int ci = 0; ci < ncp; ci++) {
			struct outer o = { .tp = tps[ti], .cp = cps[ci] };
			long tc = (long)o.tp * o.cp;

			if (!ulysses_splits(m, opt, o.tp, o.cp))
				continue;
			for (o.pp = 1; o.pp <= max_pp && o.pp <= m->layers && tc * o.pp <= gpus; o.pp++) {
				if (gpus % (tc * o.pp))
					continue;
				o.dp = (int)(gpus / (tc * o.pp));
				if (opt->global_batch % o.dp)
					continue;
				if (!enumerate_batches(&x, &o))
					return false;
			}
		}
	return true;
}

/* An attribute's text: a list of PLAN_MAX_STAGES entries as long as "selective,". */
#define SEARCH_ATTR_TEXT_MAX (PLAN_MAX_STAGES * 12)

/*
 * Whether @a and @b, of the same time, are the same plan as predict_args
 * write it: the same text for every plan attribute and the same
 * compressor. Two shapes may end in one plan (a compressor whose best
 * layout compresses nothing is the uncompressed plan), and struct plan
 * may differ in members that mean nothing for it (the compression
 * suffixes of a plan without compression, lists past its stages), so its
 * bytes do not decide (issue 26: "no two top-list rows that are the same
 * plan"). The DP algorithm is left out: at the same time, two plans that
 * differ only in it are one plan whose DP traffic it does not change (a
 * compressor's own DP collective), and the ring, whose shape comes first
 * (by_bound), is kept.
 */
static bool
same_plan(const struct search_candidate *a, const struct search_candidate *b, const struct framework *fw)
{
	struct estimate_options ea = { a->dp_algo, a->compressor, fw }, eb = { b->dp_algo, b->compressor, fw };
	struct plan pa = a->plan, pb = b->plan;
	const struct plan_attr_target ta = { &pa, &ea }, tb = { &pb, &eb };

	if (a->compressor != b->compressor)
		return false;
	for (int id = 0; id < PLAN_ATTR_COUNT; id++) {
		if (id == PLAN_ATTR_DP_ALLREDUCE)
			continue;
		char va[SEARCH_ATTR_TEXT_MAX], vb[SEARCH_ATTR_TEXT_MAX];
		bool ha = plan_attr_format(&plan_attrs[id], &ta, a->compressor != NULL, va, sizeof(va));
		bool hb = plan_attr_format(&plan_attrs[id], &tb, b->compressor != NULL, vb, sizeof(vb));

		if (ha != hb || (ha && strcmp(va, vb) != 0))
			return false;
	}
	return true;
}

/* Insert @cand into the sorted top list if it is good enough and new:
 * a plan already listed (same_plan) at the same time is not listed again. */
static void
keep_top(struct search_candidate *top, int *ntop, int k, const struct search_candidate *cand,
	 const struct framework *fw)
{
	int i;

	for (i = 0; i < *ntop; i++)
		if (fabs(top[i].est.iteration_time_s - cand->est.iteration_time_s) <=
			    1e-12 * fmax(1.0, cand->est.iteration_time_s) &&
		    same_plan(&top[i], cand, fw))
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
note_closest(const struct model *m, const struct cluster *c, const struct plan *shape,
	     const struct search_options *opt, struct search_stats *st)
{
	struct estimate_options eo = { opt->dp_algo, NULL, opt->framework };
	struct estimate e;
	struct plan_error err;
	struct plan p = *shape;

	/* The most recomputation the search may choose (recompute_modes). */
	p.recompute = PLAN_RECOMPUTE_FULL;
	while (p.recompute > PLAN_RECOMPUTE_NONE && !mode_ok(opt, p.recompute))
		p.recompute--;
	if (m->layers % p.pp && p.vpp == 1 && pipeline_even_layout(&p)) {
		p.custom_layers = true;
		for (int i = 0; i < p.pp; i++)
			p.stage_layers[i] = (short)(m->layers / p.pp + (i < m->layers % p.pp));
	}
	plan_error_clear(&err);
	if (!estimate_plan(m, c, &p, &eo, &e, &err)) {
		note_refusal(st->refusal, &p, &err);
		return;
	}
	if (!st->have_closest || e.memory.total < st->closest_memory) {
		st->have_closest = true;
		st->closest = p;
		st->closest_memory = e.memory.total;
		st->closest_stage = e.details.memory_stage;
		st->capacity = e.memory_capacity_bytes;
	}
}

bool
search_allowed_has(const struct search_allowed *a, long v)
{
	if (a->n == 0)
		return true;
	for (int i = 0; i < a->n; i++)
		if (a->v[i] == v)
			return true;
	return false;
}

/* The largest value constraint @a lists; 0 when it lists none. */
static int
allowed_max(const struct search_allowed *a)
{
	long most = 0;

	for (int i = 0; i < a->n; i++)
		if (a->v[i] > most)
			most = a->v[i];
	return (int)most;
}

/*
 * The options with the constraints folded into the search's own bounds:
 * a bound left at its default rises to the largest value a constraint
 * lists (--tp 16 on 8-GPU nodes, --vpp 12), ZeRO up to 3 where a stage is
 * listed, and a recompute list restricts the stages' modes.
 */
static void
widen(struct search_options *o)
{
	const struct search_allowed *a = o->allowed;
	unsigned modes = 0;

	if (o->max_tp == 0)
		o->max_tp = allowed_max(&a[PLAN_ATTR_TP]);
	if (o->max_pp == 0)
		o->max_pp = allowed_max(&a[PLAN_ATTR_PP]);
	if (o->max_micro_batch == 0)
		o->max_micro_batch = allowed_max(&a[PLAN_ATTR_MICRO_BATCH]);
	if (o->max_vpp == 0)
		o->max_vpp = allowed_max(&a[PLAN_ATTR_VPP]);
	if (o->max_cp == 0)
		o->max_cp = allowed_max(&a[PLAN_ATTR_CP]);
	if (a[PLAN_ATTR_ZERO].n > 0 && o->max_zero < allowed_max(&a[PLAN_ATTR_ZERO]))
		o->max_zero = allowed_max(&a[PLAN_ATTR_ZERO]);
	for (int i = 0; i < a[PLAN_ATTR_RECOMPUTE].n; i++)
		modes |= 1u << a[PLAN_ATTR_RECOMPUTE].v[i];
	if (modes)
		o->recompute_modes = o->recompute_modes ? o->recompute_modes & modes : modes;
}

/* Plans materialised at the least per enumeration: a few re-runs of
 * enumerate() (no bounds: cheap) cover the shapes a search reaches. */
#define SEARCH_MIN_MATERIALISED 4096

/*
 * plan-cli moebound: store the plans of sorted shapes @from.. (as many
 * again as precede them, at least SEARCH_MIN_MATERIALISED) by enumerating
 * again, in the same order, so that a shape's plan index finds its plan.
 * The plans of earlier shapes are dropped: the search is past them.
 */
static bool
materialise(const struct model *m, const struct cluster *c, const struct search_options *opt, int gpus,
	    int seq, struct shape_list *l, long from, struct plan_error *err)
{
	long count = from > SEARCH_MIN_MATERIALISED ? from : SEARCH_MIN_MATERIALISED, plans = l->nplans;
	unsigned char *want = calloc((size_t)plans, 1);
	bool ok;

	if (!want)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	for (long i = 0; i < plans; i++)
		l->slot[i] = -1;
	for (long i = from; i < l->n && i - from < count; i++)
		want[l->v[i].plan] = 1;
	l->want = want;
	l->nplans = 0;
	l->nstored = 0;
	ok = enumerate(m, c, opt, gpus, seq, l, err);
	l->want = NULL;
	free(want);
	if (ok && l->nplans != plans)
		/* The same inputs enumerate the same plans: never. */
		ok = plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "the search met %ld shapes, then %ld",
				    plans, l->nplans);
	l->nplans = plans;
	return ok;
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

/* An --ep list no plan of model @m can take, refused in plan_validate's
 * words: the search would find no shape and say only that. */
static bool
ep_applies(const struct model *m, const struct search_allowed *a, struct plan_error *err)
{
	for (int i = 0; i < a->n; i++)
		if (model_is_moe(m) ? m->moe.experts % a->v[i] == 0 : a->v[i] == 1)
			return true;
	if (a->n == 0)
		return true;
	if (!model_is_moe(m))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "expert parallelism (ep %ld) needs an MoE model ('%s' has no moe block)", a->v[0],
				      m->name);
	return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "experts (%d) are not divisible by ep (%ld)",
			      m->moe.experts, a->v[0]);
}

/* What no shape can satisfy: more GPUs than the cluster, no batch, an
 * expert-parallel choice on a dense model. */
static bool
search_check(const struct model *m, const struct cluster *c, const struct search_options *opt, int gpus,
	     struct plan_error *err)
{
	if (gpus > cluster_gpus(c))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "--gpus %d is more than cluster '%s' has (%d)",
				      gpus, c->name, cluster_gpus(c));
	if (opt->global_batch < 1)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "the global batch must be positive");
	return ep_applies(m, &opt->allowed[PLAN_ATTR_EP], err);
}

/* The fixed inputs of one search. */
struct search_walk {
	const struct model *m;
	const struct cluster *c;
	const struct search_options *opt;
	int gpus, seq, k;
};

/* Search the enumerated shapes in increasing lower bound, keeping the
 * best k in @top. */
static bool
search_walk(const struct search_walk *w, struct shape_list *shapes, struct search_candidate *top, int *ntop,
	    struct search_candidate *cand, struct search_stats *st, struct plan_error *err)
{
	struct search_options so = *w->opt; /* with each shape's DP algorithm */

	for (long i = 0; i < shapes->nplans; i++)
		shapes->slot[i] = -1;
	/* No shapes (an excluded value left none): no array for qsort. */
	if (shapes->n > 1)
		qsort(shapes->v, (size_t)shapes->n, sizeof(*shapes->v), by_bound);
	for (long i = 0; i < shapes->n; i++) {
		const struct shape *s = &shapes->v[i];
		const struct plan *plan;
		bool found;

		/* Shapes come in increasing bound: once the bound passes the
		 * k-th best time, no later shape can enter the top list. */
		if (!w->opt->unpruned && *ntop == w->k && s->lower_bound >= top[w->k - 1].est.iteration_time_s) {
			st->pruned = shapes->n - i;
			break;
		}
		st->cutoff_s = *ntop == w->k && !w->opt->unpruned ? top[w->k - 1].est.iteration_time_s : 0.0;
		so.dp_algo = s->dp_algo;
		if (shapes->slot[s->plan] < 0 && !materialise(w->m, w->c, w->opt, w->gpus, w->seq, shapes, i, err))
			return false;
		plan = &shapes->plans[shapes->slot[s->plan]];
		if (!search_shape(w->m, w->c, plan, s->cmp, &so, w->opt->exhaustive, cand, &found, st, err))
			return false;
		cand->dp_algo = s->dp_algo;
		if (found)
			keep_top(top, ntop, w->k, cand, w->opt->framework);
		else if (st->cutoff_s <= 0) {
			st->infeasible++;
			if (*ntop == 0)
				note_closest(w->m, w->c, plan, w->opt, st);
		}
	}
	return true;
}

bool
search_run(const struct model *m, const struct cluster *c, const struct search_options *given,
	   struct search_candidate *top, int *ntop, struct search_stats *st,
	   struct plan_error *err)
{
	struct search_options wide = *given;

	widen(&wide);
	const struct search_options *opt = &wide;
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
	if (!search_check(m, c, opt, gpus, err))
		goto out;
	if (!enumerate(m, c, opt, gpus, seq, &shapes, err))
		goto out;
	memcpy(st->refusal, shapes.refusal, sizeof(st->refusal));
	st->shapes = shapes.n;
	if (shapes.nplans > 0 && !(shapes.slot = malloc((size_t)shapes.nplans * sizeof(*shapes.slot)))) {
		plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	if (!search_walk(&(struct search_walk){ .m = m, .c = c, .opt = opt, .gpus = gpus, .seq = seq, .k = k },
			 &shapes, top, ntop, cand, st, err))
		goto out;
	ok = true;
out:
	st->seconds = now_s() - t0;
	free(shapes.v);
	free(shapes.plans);
	free(shapes.slot);
	free(cand);
	return ok;
}
