#include "plan/data_par.h"

void
dp_comm_time(const struct model *m, const struct plan *p,
	     const struct cluster *c, const struct plan_layout *lay,
	     double params_gpu, double params_layer,
	     enum coll_algo algo, struct dp_comm *out)
{
	const struct group_layout *g = &lay->dp;
	double grad_bytes = 2.0 * params_gpu;
	double frac = g->size > 1 ? (double)(g->size - 1) / g->size : 0.0;

	out->grad_bytes = grad_bytes;
	out->reduce_s = 0.0;
	out->gather_s = 0.0;
	out->zero3_mb_s = 0.0;
	out->embed_sync_s = 0.0;
	out->bytes = 0.0;

	if (p->zero == 0) {
		out->reduce_s = collective_time(c, g, COLL_ALLREDUCE, algo, grad_bytes);
		out->bytes = 2.0 * frac * grad_bytes;
	} else if (p->zero <= 2) {
		/* Reduce-scatter the gradients, all-gather the updated 16-bit weights. */
		out->reduce_s = collective_time(c, g, COLL_REDUCESCATTER, algo, grad_bytes);
		out->gather_s = collective_time(c, g, COLL_ALLGATHER, algo, grad_bytes);
		out->bytes = 2.0 * frac * grad_bytes;
	} else {
		/* DeepSpeed gathers and reduces each parameter tensor of a module
		 * with its own collective, so each pays its own latency. */
		double tensors = model_tensors_per_layer(m);
		double gathers = p->recompute == PLAN_RECOMPUTE_FULL ? 3.0 : 2.0;
		double layer_bytes = 2.0 * params_layer;
		double rest_bytes = grad_bytes - m->layers * layer_bytes;
		double per_layer = tensors *
			(gathers * collective_time(c, g, COLL_ALLGATHER, algo, layer_bytes / tensors) +
			 collective_time(c, g, COLL_REDUCESCATTER, algo, layer_bytes / tensors));
		double rest = 0.0;

		if (rest_bytes > 0)
			rest = gathers * collective_time(c, g, COLL_ALLGATHER, algo, rest_bytes) +
			       collective_time(c, g, COLL_REDUCESCATTER, algo, rest_bytes);
		out->zero3_mb_s = m->layers * per_layer + rest;
		out->bytes = plan_microbatches(p) * (gathers + 1.0) * frac * grad_bytes;
	}
	/* Megatron keeps a copy of a tied word embedding on the last stage and
	 * all-reduces its gradient with the first stage (SC21, Sec. 4). */
	if (p->pp > 1 && m->tied_embeddings) {
		struct group_layout pair = { 2, lay->pp_inter_node ? 1 : 2, lay->pp_inter_node ? 2 : 1 };

		out->embed_sync_s = collective_time(c, &pair, COLL_ALLREDUCE, COLL_ALGO_RING,
						    2.0 * m->vocab * (double)m->hidden / p->tp);
	}
}
