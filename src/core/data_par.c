#include "plan/data_par.h"

/* Stage 0-2 traffic of @bytes of gradients over group @g. */
static void
dp_sync(const struct plan *p, const struct cluster *c, const struct group_layout *g,
	enum coll_algo algo, double grad_bytes, struct dp_comm *out)
{
	double frac = g->size > 1 ? (double)(g->size - 1) / g->size : 0.0;

	if (p->zero == 0) {
		out->reduce_s += collective_time(c, g, COLL_ALLREDUCE, algo, grad_bytes);
	} else {
		/* Reduce-scatter the gradients, all-gather the updated 16-bit weights. */
		out->reduce_s += collective_time(c, g, COLL_REDUCESCATTER, algo, grad_bytes);
		out->gather_s += collective_time(c, g, COLL_ALLGATHER, algo, grad_bytes);
	}
	out->bytes += 2.0 * frac * grad_bytes;
}

static double
gather(const struct cluster *c, const struct group_layout *g, bool two_hop, enum coll_algo algo,
       double bytes)
{
	return two_hop ? collective_two_hop_allgather(c, g, bytes)
		       : collective_time(c, g, COLL_ALLGATHER, algo, bytes);
}

/*
 * ZeRO-3 over group @g, or MiCS over its partition group (Zhang et al.
 * VLDB 2023, Sec. 4): per micro-batch, each layer's parameters are
 * gathered before forward and backward (and again for a recomputed
 * forward) and its gradients reduce-scattered, all inside the group;
 * MiCS gathers in two hops when the group spans nodes.
 */
static void
zero3_sync(const struct model *m, const struct plan *p, const struct cluster *c,
	   const struct group_layout *g, enum coll_algo algo, double grad_bytes,
	   double params_layer, double layers, struct dp_comm *out)
{
	/* DeepSpeed gathers and reduces each parameter tensor of a module
	 * with its own collective, so each pays its own latency. */
	double tensors = model_tensors_per_layer(m);
	double gathers = plan_stage_recompute(p, 0) == PLAN_RECOMPUTE_FULL ? 3.0 : 2.0;
	double layer_bytes = 2.0 * params_layer;
	double rest_bytes = grad_bytes - layers * layer_bytes;
	double frac = g->size > 1 ? (double)(g->size - 1) / g->size : 0.0;
	bool two_hop = p->mics_group > 0 && p->mics_hierarchical;
	double per_layer = tensors *
		(gathers * gather(c, g, two_hop, algo, layer_bytes / tensors) +
		 collective_time(c, g, COLL_REDUCESCATTER, algo, layer_bytes / tensors));

	if (rest_bytes > 0)
		per_layer += (gathers * gather(c, g, two_hop, algo, rest_bytes) +
			      collective_time(c, g, COLL_REDUCESCATTER, algo, rest_bytes)) / layers;
	out->zero3_mb_s += layers * per_layer;
	out->bytes += plan_microbatches(p) * (gathers + 1.0) * frac * grad_bytes;
}

void
dp_comm_time(const struct model *m, const struct plan *p,
	     const struct cluster *c, const struct plan_layout *lay,
	     double params_gpu, double params_expert, double params_layer,
	     double layers, enum coll_algo algo, struct dp_comm *out)
{
	double dense_bytes = 2.0 * (params_gpu - params_expert);
	double expert_bytes = 2.0 * params_expert;

	out->grad_bytes = dense_bytes + expert_bytes;
	out->reduce_s = 0.0;
	out->gather_s = 0.0;
	out->zero3_mb_s = 0.0;
	out->embed_sync_s = 0.0;
	out->bytes = 0.0;

	if (p->zero <= 2) {
		dp_sync(p, c, &lay->dp, algo, dense_bytes, out);
		/* Expert weights are replicated only across the dp/ep ranks that
		 * hold the same experts (DeepSpeed-MoE, Megatron-Core). */
		if (expert_bytes > 0)
			dp_sync(p, c, &lay->edp, algo, expert_bytes, out);
	} else {
		zero3_sync(m, p, c, &lay->mics, algo, dense_bytes, params_layer, layers, out);
		if (expert_bytes > 0)
			zero3_sync(m, p, c, &lay->edp, algo, expert_bytes, 0.0, 1.0, out);
		if (lay->replica.size > 1) {
			/* MiCS 2-hop gradient synchronisation: the shards are
			 * all-reduced across the replicas once per iteration, at the
			 * gradient-accumulation boundary, on 1/G of the gradients. */
			double shard = dense_bytes / lay->mics.size;

			out->reduce_s += collective_time(c, &lay->replica, COLL_ALLREDUCE, algo, shard);
			out->bytes += 2.0 * (lay->replica.size - 1) / lay->replica.size * shard;
		}
	}
	/* Megatron keeps a copy of a tied word embedding on the last stage and
	 * all-reduces its gradient with the first stage (SC21, Sec. 4). */
	if (p->pp > 1 && m->tied_embeddings) {
		struct group_layout pair = { 2, lay->pp_inter_node ? 1 : 2, lay->pp_inter_node ? 2 : 1 };

		out->embed_sync_s = collective_time(c, &pair, COLL_ALLREDUCE, COLL_ALGO_RING,
						    2.0 * m->vocab * (double)m->hidden / p->tp);
	}
}
