/*
 * A plan's throughput on variable-length data (predict --seq-lengths):
 * padded, packed or dynamic micro-batches (DynaPipe: Jiang et al.,
 * ASPLOS 2024). Each micro-batch shape (b sequences of L tokens) is timed
 * by the cost model itself (estimate_plan with micro_batch b and
 * seq_len L: GEMMs and element-wise work linear in the b L tokens, the
 * attention cores quadratic in L), where DynaPipe interpolates a
 * profiled grid (cost_models.py, RegularGridInterpolator).
 *
 * A global batch is treated by its expectation, deterministically: pad
 * takes the expected time of a micro-batch over the distribution of its
 * longest sequence (exact, through the CDF), pack the expected fill of a
 * row, and dynamic the global batch's share of one data-parallel
 * replica as the G/d lengths at the distribution's quantiles
 * (k + 1/2) / (G/d): the batch that a draw of G/d sequences resembles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/seqlen.h"

/* What the shapes share: the plan and its micro-batches per pipeline. */
struct shape_ctx {
	const struct model *m;
	const struct cluster *c;
	const struct plan *p;
	const struct estimate_options *opt;
	int mb;
};

/* The plan with micro-batches of @b sequences of @len tokens, as many of
 * them as the plan has (so that the same number is in flight). */
static bool
shape_eval(const struct shape_ctx *x, int b, int len, struct estimate *e, struct plan_error *err)
{
	struct plan q = *x->p;
	long long g = (long long)b * x->p->dp * x->mb;

	if (g > 2147483647LL)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "a micro-batch of %d sequences makes a global batch too large", b);
	q.micro_batch = b;
	q.seq_len = len;
	q.global_batch = (int)g;
	return estimate_plan(x->m, x->c, &q, x->opt, e, err);
}

/* The dynamic program's cost: one pipeline slot, and whether it fits. */
static bool
shape_cost(void *ctx, int b, int len, double *time_s, bool *fits, struct plan_error *err)
{
	struct estimate e;

	if (!shape_eval(ctx, b, len, &e, err))
		return false;
	*time_s = e.details.slot_s;
	*fits = e.memory.total <= e.memory_capacity_bytes;
	return true;
}

static int
round_up(int v, int unit)
{
	return (v + unit - 1) / unit * unit;
}

/* The distribution with every length above @cap cut to @cap. */
static bool
truncate_dist(const struct seqlen_dist *d, int cap, struct seqlen_dist *out, double *cut,
	      struct plan_error *err)
{
	int *len = malloc((size_t)d->n * sizeof(*len));
	bool ok;

	*cut = 0.0;
	if (!len)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	for (int k = 0; k < d->n; k++) {
		len[k] = d->length[k] > cap ? cap : d->length[k];
		if (d->length[k] > cap)
			*cut += d->count[k];
	}
	*cut /= d->total;
	ok = seqlen_dist_build(out, len, d->count, d->n, err);
	free(len);
	return ok;
}

/* Pad: m micro-batches of b draws, each padded to its longest (rounded
 * up to a multiple of tp under sequence parallelism, as Megatron needs).
 * The fill and drain go at the pace of the iteration's slowest
 * micro-batch, as DynaPipe's objective counts them ((p - 1) t_max / v,
 * Jiang et al. 2024, Sec. 4.2), so that the three batchings share one
 * pipeline model: the bubble is that of a micro-batch padded to the
 * longest of all m b draws, in expectation (P(max <= L) = F(L)^(m b)). */
static bool
batch_pad(const struct shape_ctx *x, const struct seqlen_dist *d, double tail, struct estimate_batching *o,
	  struct plan_error *err)
{
	int b = x->p->micro_batch, unit = x->p->sequence_parallel ? x->p->tp : 1;
	long long draws = (long long)b * x->mb;
	double *pmf = malloc((size_t)d->n * sizeof(*pmf)), *pmf_all = malloc((size_t)d->n * sizeof(*pmf_all));
	double emax, emax_sq, slot = 0.0, bubble = 0.0, padded = 0.0, padded_sq = 0.0;

	if (!pmf || !pmf_all) {
		free(pmf), free(pmf_all);
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	}
	seqlen_expected_max(d, b, &emax, &emax_sq, pmf);
	seqlen_expected_max(d, draws > 2147483647LL ? 2147483647 : (int)draws, &emax, &emax_sq, pmf_all);
	for (int k = 0; k < d->n; k++) {
		int len = round_up(d->length[k], unit);
		struct estimate e;

		if (!(pmf[k] > 0) && !(pmf_all[k] > 0))
			continue;
		if (!shape_eval(x, b, len, &e, err)) {
			free(pmf), free(pmf_all);
			return false;
		}
		slot += pmf[k] * e.details.slot_s;
		bubble += pmf_all[k] * e.breakdown.pp_bubble;
		padded += pmf[k] * len;
		padded_sq += pmf[k] * (double)len * len;
		o->max_microbatch_time_s = e.details.slot_s;
		o->peak_memory_bytes = e.memory.total;
	}
	free(pmf), free(pmf_all);
	o->iteration_time_s = tail + x->mb * slot + bubble;
	o->useful_tokens = (double)x->p->global_batch * o->mean_length;
	o->padded_length = padded;
	o->microbatches = x->mb;
	o->sequences_per_microbatch = b;
	o->padding_fraction = 1.0 - o->mean_length / padded;
	o->attention_waste = padded_sq / seqlen_mean_sq(d) - 1.0;
	return true;
}

/* Pack: rows of seq_len tokens filled greedily. The global batch counts
 * the data's sequences here too, so that every mode trains on the same
 * sequences per iteration: they fill G / documents-per-row rows, that is
 * G / (documents d b) micro-batches per pipeline, in expectation. */
static bool
batch_pack(const struct shape_ctx *x, const struct seqlen_dist *d, int attention, const struct estimate *base,
	   double tail, struct estimate_batching *o, struct plan_error *err)
{
	double s = x->p->seq_len, slot = base->details.slot_s, bubble = base->breakdown.pp_bubble, mb;
	struct seqlen_pack_row row;

	if (!seqlen_pack(d, x->p->seq_len, &row, err))
		return false;
	if (attention == SEQLEN_ATTN_MASKED) {
		/* Document-masked attention computes each document's own
		 * l^2 pairs: the attention cores' time scales by sum l^2 / s^2
		 * (flash attention's variable-length kernels skip the rest). */
		double att = base->details.compute_attention_s / x->mb;
		double masked = slot - att * (1.0 - row.sum_sq / (s * s));

		bubble *= masked / slot;
		slot = masked;
		o->attention_waste = 0.0;
	} else {
		o->attention_waste = s * s / row.sum_sq - 1.0;
	}
	/* A pipeline runs one micro-batch at least: fewer sequences than one
	 * packed micro-batch holds go as one part-full row (0.14 micro-batches
	 * gave an iteration of a seventh of a micro-batch, issue 28). */
	mb = fmax(1.0, (double)x->p->global_batch / (row.documents * x->p->dp * x->p->micro_batch));
	o->iteration_time_s = tail + mb * slot + bubble;
	o->useful_tokens = (double)x->p->global_batch * row.tokens / row.documents;
	o->padded_length = s;
	o->microbatches = mb;
	o->sequences_per_microbatch = x->p->micro_batch * row.documents;
	o->padding_fraction = row.waste / s;
	o->max_microbatch_time_s = slot;
	o->peak_memory_bytes = base->memory.total;
	return true;
}

/* Dynamic: DynaPipe's split of one replica's sorted quantile lengths. */
static bool
batch_dynamic(const struct shape_ctx *x, const struct seqlen_dist *d, double tail, struct estimate_batching *o,
	      struct plan_error *err)
{
	const struct plan *p = x->p;
	int n = p->global_batch / p->dp, unit = p->sequence_parallel ? p->tp : 1;
	int round = SEQLEN_ROUND % unit == 0 ? SEQLEN_ROUND : SEQLEN_ROUND * unit;
	int *len, nmb = 0, imax = 0;
	struct seqlen_mb *mbs;
	double obj, sum = 0.0, useful = 0.0, computed = 0.0, sq = 0.0, computed_sq = 0.0;
	struct estimate e;
	bool ok = false;

	if (n > SEQLEN_DYNAMIC_MAX_SAMPLES)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "--batching dynamic plans at most %d sequences per data-parallel replica "
				      "(global batch / dp = %d)", SEQLEN_DYNAMIC_MAX_SAMPLES, n);
	len = malloc((size_t)n * sizeof(*len));
	mbs = malloc((size_t)n * sizeof(*mbs));
	if (!len || !mbs) {
		free(len), free(mbs);
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	}
	seqlen_quantiles(d, n, len);
	/* One replica's share: DynaPipe's sum_i t_i / d over the global
	 * batch is the sum over the share when each replica sees alike. */
	if (!seqlen_dynamic_split(len, n, round, p->pp, p->vpp, 1, shape_cost, (void *)x, mbs, &nmb, &obj, err))
		goto done;
	for (int i = 0; i < nmb; i++) {
		double l = mbs[i].padded_len;

		sum += mbs[i].time_s;
		computed += mbs[i].count * l;
		computed_sq += mbs[i].count * l * l;
		if (mbs[i].time_s > mbs[imax].time_s)
			imax = i;
		if (!shape_eval(x, mbs[i].count, mbs[i].padded_len, &e, err))
			goto done;
		if (e.memory.total > o->peak_memory_bytes)
			o->peak_memory_bytes = e.memory.total;
	}
	for (int i = 0; i < n; i++) {
		useful += len[i];
		sq += (double)len[i] * len[i];
	}
	/* Fill and drain at the pace of the longest micro-batch. */
	if (!shape_eval(x, mbs[imax].count, mbs[imax].padded_len, &e, err))
		goto done;
	o->iteration_time_s = tail + sum + e.breakdown.pp_bubble;
	o->useful_tokens = useful * p->dp;
	o->padded_length = computed / n;
	o->microbatches = nmb;
	o->sequences_per_microbatch = (double)n / nmb;
	o->padding_fraction = 1.0 - useful / computed;
	o->attention_waste = computed_sq / sq - 1.0;
	o->max_microbatch_time_s = mbs[imax].time_s;
	ok = true;
done:
	free(len), free(mbs);
	return ok;
}

bool
seqlen_estimate(const struct model *m, const struct cluster *c, const struct plan *p,
		const struct estimate_options *opt, const struct seqlen_dist *d, int batching,
		int pack_attention, struct estimate *e, struct plan_error *err)
{
	struct shape_ctx x = { m, c, p, opt, plan_microbatches(p) };
	struct estimate_batching *o = &e->batching;
	struct seqlen_dist t;
	double tail;
	bool ok;

	memset(o, 0, sizeof(*o));
	if (p->cp > 1)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "--seq-lengths is not modelled with context parallelism (cp %d)", p->cp);
	if (d->n < 1)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0, "an empty length distribution");
	if (!truncate_dist(d, p->seq_len, &t, &o->truncated_fraction, err))
		return false;
	o->mode = batching;
	o->pack_attention = pack_attention;
	o->sequences = d->total;
	o->mean_length = seqlen_mean(&t);
	o->max_length = t.length[t.n - 1];
	/* What follows the last micro-batch: DP synchronisation, the
	 * optimizer and the per-iteration overhead (the iteration less its
	 * m slots and the bubble). */
	tail = e->iteration_time_s - x.mb * e->details.slot_s - e->breakdown.pp_bubble;
	switch (batching) {
	case SEQLEN_PACK:
		ok = batch_pack(&x, &t, pack_attention, e, tail, o, err);
		break;
	case SEQLEN_DYNAMIC:
		ok = batch_dynamic(&x, &t, tail, o, err);
		break;
	default:
		ok = batch_pad(&x, &t, tail, o, err);
	}
	seqlen_dist_release(&t);
	if (!ok)
		return false;
	o->effective_tokens_per_s = o->useful_tokens / o->iteration_time_s;
	if (!isfinite(o->effective_tokens_per_s) || !isfinite(o->attention_waste) ||
	    !isfinite(o->padding_fraction))
		return plan_error_nonfinite(p, "effective_tokens_per_s", err);
	o->on = true;
	return true;
}
