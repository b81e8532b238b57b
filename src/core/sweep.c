#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/estimate.h"
#include "plan/milp.h"
#include "plan/search.h"
#include "plan/sweep.h"
#include "plan/wave_loss.h"

struct pool {
	const struct sweep_cell *cells;
	struct sweep_result *out;
	long n, shard_i, shard_n;
	long next;         /* next cell to take */
	long done;
	pthread_mutex_t lock;
};

/* The plan in words, every degree it uses named ("tp 2 pp 4 dp 2 cp 2
 * ring mb 1 none ZeRO-1 sp"), so that a table's plan column tells plans
 * apart (issue 26: a CP plan read "tp 2 pp 4 dp 2"). */
static void
describe(const struct plan *p, const struct compressor *cmp, enum coll_algo algo, char *buf, size_t size)
{
	char cp[48] = "", ep[16] = "", vpp[16] = "";

	if (p->cp > 1)
		snprintf(cp, sizeof(cp), " cp %d %s", p->cp, plan_cp_method_names[p->cp_method]);
	if (p->ep > 1)
		snprintf(ep, sizeof(ep), " ep %d", p->ep);
	if (p->vpp > 1)
		snprintf(vpp, sizeof(vpp), " vpp %d", p->vpp);
	snprintf(buf, size, "tp %d pp %d dp %d%s%s%s mb %d %s%s%s%s%s%s%s", p->tp, p->pp, p->dp, cp, ep, vpp,
		 p->micro_batch, p->custom_recompute ? "per-stage recompute" : plan_recompute_names[p->recompute],
		 p->mics_group ? " MiCS" : (const char *[]){ "", " ZeRO-1", " ZeRO-2", " ZeRO-3" }[p->zero & 3],
		 p->sequence_parallel ? " sp" : "", plan_low_precision(p) ? (p->precision == PLAN_PRECISION_FP4 ? " fp4" : " fp8") : "",
		 algo == COLL_ALGO_RING ? "" : " dp-hierarchical", cmp ? " + " : "", cmp ? cmp->name : "");
}

/* The cell's GEMM wave loss where it asks for it: one more estimate of
 * plan @p (options @eo) after the cell's @e, as predict prices it. */
static void
cell_wave_loss(const struct sweep_cell *c, const struct plan *p, const struct estimate_options *eo,
	       struct estimate *e, struct sweep_result *r)
{
	struct plan_error err;

	plan_error_clear(&err);
	if (c->wave_loss && wave_loss_estimate(c->model, &c->cluster, p, eo, e, &err)) {
		r->wave_loss_s = e->details.gemm_wave_loss_s;
		r->wave_loss_known = true;
	}
}

static bool
predict_cell(const struct sweep_cell *c, struct estimate *e, struct sweep_result *r)
{
	struct estimate_options eo = { (enum coll_algo)c->dp_algo, c->compressor, c->framework };
	struct plan_error err;

	plan_error_clear(&err);
	if (!estimate_plan(c->model, &c->cluster, &c->plan, &eo, e, &err)) {
		snprintf(r->error, sizeof(r->error), "%s", err.message);
		return false;
	}
	describe(&c->plan, c->compressor, eo.dp_algo, r->plan, sizeof(r->plan));
	cell_wave_loss(c, &c->plan, &eo, e, r);
	return true;
}

/* An optimize cell: the best plan for the cell's GPUs and batch, searched
 * as the optimize command searches. */
static bool
optimize_cell(const struct sweep_cell *c, struct estimate *e, struct sweep_result *r)
{
	struct plan_error err;
	struct search_options o;
	struct search_candidate *top = malloc(sizeof(*top));
	struct search_stats st;
	int ntop = 0;
	bool ok;

	plan_error_clear(&err);
	search_options_init(&o);
	o.gpus = c->gpus;
	o.global_batch = c->plan.global_batch;
	o.seq_len = c->plan.seq_len;
	o.flash_attention = c->plan.flash_attention;
	o.precision = c->plan.precision;
	o.tp_overlap = c->plan.tp_overlap;
	o.framework = c->framework;
	o.search_dp_algo = true; /* as optimize searches it */
	o.top = 1;
	if (c->compressor) {
		o.compressors[0] = c->compressor;
		o.ncompressors = 1;
	}
	if (!top) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return false;
	}
	/* Searches run in parallel; their MILPs take turns in GLPK (milp.c). */
	ok = search_run(c->model, &c->cluster, &o, top, &ntop, &st, &err);
	if (!ok || ntop == 0) {
		snprintf(r->error, sizeof(r->error), "%s", ok ? "no feasible plan" : err.message);
		free(top);
		return false;
	}
	*e = top[0].est;
	describe(&top[0].plan, top[0].compressor, top[0].dp_algo, r->plan, sizeof(r->plan));
	cell_wave_loss(c, &top[0].plan,
		       &(struct estimate_options){ .dp_algo = top[0].dp_algo, .compressor = top[0].compressor,
						   .framework = c->framework }, e, r);
	free(top);
	return true;
}

static void
evaluate(const struct sweep_cell *c, struct sweep_result *r)
{
	struct estimate *e = malloc(sizeof(*e));

	memset(r, 0, sizeof(*r));
	if (!e) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return;
	}
	if (c->mode == SWEEP_PREDICT ? predict_cell(c, e, r) : optimize_cell(c, e, r)) {
		r->ok = true;
		r->time_s = e->iteration_time_s;
		r->tflops_per_gpu = e->tflops_per_gpu;
		r->mfu = e->mfu;
		r->tokens_per_s = e->tokens_per_s;
		r->memory_bytes = e->memory.total;
		r->fits = e->fits;
		r->gpus = e->gpus;
	}
	free(e);
}

static void *
worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		long i;

		pthread_mutex_lock(&p->lock);
		while (p->next < p->n && p->next % p->shard_n != p->shard_i)
			p->next++;
		i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n) {
			/* The thread's GLPK environment dies with it otherwise. */
			milp_thread_release();
			return NULL;
		}
		evaluate(&p->cells[i], &p->out[i]);
		pthread_mutex_lock(&p->lock);
		p->done++;
		pthread_mutex_unlock(&p->lock);
	}
}

bool
sweep_run(const struct sweep_cell *cells, long n, int threads, long shard_i, long shard_n,
	  void (*progress)(long done, long total, void *arg), void *arg,
	  struct sweep_result *out, struct plan_error *err)
{
	struct pool pool = { cells, out, n, shard_i, shard_n > 0 ? shard_n : 1, 0, 0,
			     PTHREAD_MUTEX_INITIALIZER };
	pthread_t tid[64];
	int started = 0;
	long mine = 0;

	for (long i = 0; i < n; i++)
		if (i % pool.shard_n == shard_i)
			mine++;
		else
			memset(&out[i], 0, sizeof(out[i]));
	if (threads < 1)
		threads = 1;
	if (threads > 64)
		threads = 64;
	for (int t = 1; t < threads; t++) {
		if (pthread_create(&tid[started], NULL, worker, &pool) != 0)
			break;
		started++;
	}
	if (threads > 1 && started == 0)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "cannot start threads");
	/* The calling thread works too, and reports progress between cells. */
	for (;;) {
		long i, done;

		pthread_mutex_lock(&pool.lock);
		while (pool.next < n && pool.next % pool.shard_n != shard_i)
			pool.next++;
		i = pool.next++;
		done = pool.done;
		pthread_mutex_unlock(&pool.lock);
		if (progress)
			progress(done, mine, arg);
		if (i >= n)
			break;
		evaluate(&cells[i], &out[i]);
		pthread_mutex_lock(&pool.lock);
		pool.done++;
		pthread_mutex_unlock(&pool.lock);
	}
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	if (progress)
		progress(mine, mine, arg);
	return true;
}

/* Whether cell @r can be a scaling group's reference: it ran and fits. */
static bool
feasible(const struct sweep_result *r)
{
	return r->ok && r->fits && r->tflops_per_gpu > 0;
}

void
sweep_derive(const struct sweep_cell *cells, long n, struct sweep_result *res)
{
	/* Each group's reference: its first cell that fits, in cell order
	 * (issue 26: the efficiencies were blank where the first did not). */
	long *first = malloc((size_t)(n > 0 ? n : 1) * sizeof(*first));

	for (long i = 0; first && i < n; i++)
		first[i] = -1;
	for (long i = 0; first && i < n; i++) {
		long g = cells[i].group_ref;

		if (g >= 0 && g < n && first[g] < 0 && feasible(&res[i]))
			first[g] = i;
	}
	for (long i = 0; i < n; i++) {
		struct sweep_result *r = &res[i];
		long g = cells[i].group_ref;
		long refi = g >= 0 && g < n ? (first ? first[g] : g) : -1;
		const struct sweep_result *ref = refi >= 0 ? &res[refi] : NULL;
		const struct sweep_result *base = cells[i].baseline >= 0 ? &res[cells[i].baseline] : NULL;

		if (!r->ok)
			continue;
		r->speedup = base && base->ok ? base->time_s / r->time_s : 0.0;
		/* A rate that underflowed to 0 gives no ratio rather than inf. */
		if (ref && ref->ok && ref->tflops_per_gpu > 0) {
			r->weak_efficiency = r->tflops_per_gpu / ref->tflops_per_gpu;
			r->strong_efficiency = ref->time_s * ref->gpus / (r->time_s * r->gpus);
		}
	}
	free(first);
}
