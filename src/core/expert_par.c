#include <math.h>

#include "plan/collective.h"
#include "plan/expert_par.h"

/* Chunks Lancet pipelines the forward all-to-all with (its partition degree). */
#define LANCET_CHUNKS 4.0

static double
a2a_time(const struct cluster *c, const struct group_layout *g, int routing, double bytes,
	 double *inter, double *intra)
{
	*inter = *intra = 0.0;
	if (routing == PLAN_MOE_BILEVEL && g->nodes > 1 && g->per_node > 1) {
		struct group_layout across = { g->nodes, 1, g->nodes };
		struct group_layout inside = { g->per_node, g->per_node, 1 };

		/* Hop 1: to the right node, among equal local ranks (each on its
		 * GPU's NIC share); hop 2: to the right GPU inside the node. */
		*inter = collective_time(c, &across, COLL_ALLTOALL, COLL_ALGO_RING, bytes);
		*intra = collective_time(c, &inside, COLL_ALLTOALL, COLL_ALGO_RING, bytes);
		return *inter + *intra;
	}
	return collective_time(c, g, COLL_ALLTOALL, COLL_ALGO_RING, bytes);
}

void
ep_layer_comm(const struct model *m, const struct plan *p, const struct cluster *c,
	      const struct plan_layout *lay, const struct compute_layer *layer,
	      struct ep_layer_comm *out)
{
	double tokens = (double)p->micro_batch * p->seq_len;
	double a2a, fwd, bwd;

	out->bytes = m->moe.capacity_factor * m->moe.top_k * tokens * m->hidden * 2.0 / p->tp;
	a2a = a2a_time(c, &lay->ep, p->moe_routing, out->bytes, &out->inter_s, &out->intra_s);
	out->a2a_s = a2a;
	fwd = 2.0 * a2a;
	bwd = 2.0 * a2a;
	out->total_s = fwd + bwd + (p->recompute == PLAN_RECOMPUTE_FULL ? fwd : 0.0);
	if (p->moe_overlap == PLAN_MOE_OVERLAP_LANCET) {
		/* Backward: the dW half of the backward GEMMs needs no
		 * all-to-all result, so the all-to-all runs under it. */
		double dw = 0.5 * (layer->bwd_s - 2.0 * layer->fwd_mem_s);
		/* Forward: k chunks; the first chunk's all-to-all is exposed,
		 * the rest overlaps the non-MoE work (attention, norms) of the
		 * other chunks. */
		double k = LANCET_CHUNKS, work = layer->fwd_s - layer->mlp_fwd_s;

		bwd = fmax(0.0, bwd - fmax(0.0, dw));
		fwd = fwd / k + fmax(0.0, fwd * (k - 1) / k - work * (k - 1) / k);
	}
	out->fwd_s = fwd;
	out->bwd_s = bwd;
	out->recompute_s = p->recompute == PLAN_RECOMPUTE_FULL ? fwd : 0.0;
}
