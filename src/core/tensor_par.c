#include "plan/collective.h"
#include "plan/tensor_par.h"

void
tp_layer_comm(const struct model *m, const struct plan *p,
	      const struct cluster *c, const struct plan_layout *lay,
	      struct tp_layer_comm *out)
{
	double bytes = 2.0 * p->micro_batch * (double)p->seq_len * m->hidden;
	double one;

	if (p->sequence_parallel)
		one = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, bytes) +
		      collective_time(c, &lay->tp, COLL_REDUCESCATTER, COLL_ALGO_RING, bytes);
	else
		one = collective_time(c, &lay->tp, COLL_ALLREDUCE, COLL_ALGO_RING, bytes);
	/* With SP, one "collective" is an AG+RS pair and a layer has two such
	 * pairs per pass; without, two all-reduces per pass. */
	out->bytes = bytes;
	out->collective_s = one;
	out->fwd_s = 2.0 * one;
	out->bwd_s = 2.0 * one;
	/* Full recomputation re-runs the forward, collectives included
	 * (Narayanan et al. SC21, Sec. 3.5). */
	out->recompute_s = p->recompute == PLAN_RECOMPUTE_FULL ? 2.0 * one : 0.0;
}
