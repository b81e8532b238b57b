#include "plan/topology.h"

void
topology_group(int size, int stride, int gpus_per_node, struct group_layout *out)
{
	int per_node;

	if (stride >= gpus_per_node) {
		per_node = 1;
	} else {
		per_node = gpus_per_node / stride;
		if (per_node < 1)
			per_node = 1;
	}
	if (per_node > size)
		per_node = size;
	out->size = size;
	out->per_node = per_node;
	out->nodes = (size + per_node - 1) / per_node;
}

/*
 * Megatron-LM's default rank order (Narayanan et al. SC21, Sec. 3.3;
 * Megatron-Core's "tp-cp-ep-dp-pp"): TP ranks are consecutive so that TP
 * stays on NVLink, CP groups stride by tp, DP groups by tp * cp, pipeline
 * stages by tp * cp * dp. The CP ranks join the gradient reduction and
 * the optimizer's sharding: the DP group here is dp * cp ranks, striding
 * by tp.
 */
void
topology_plan(const struct plan *p, const struct cluster *c, struct plan_layout *out)
{
	int cp = p->cp > 0 ? p->cp : 1;

	topology_group(p->tp, 1, c->gpus_per_node, &out->tp);
	topology_group(cp, p->tp, c->gpus_per_node, &out->cp);
	topology_group(p->dp * cp, p->tp, c->gpus_per_node, &out->dp);
	topology_group(p->pp, p->tp * cp * p->dp, c->gpus_per_node, &out->pp);
	/* The expert layers' own order (parallel_state.py's expert
	 * RankGenerator, "tp-ep-dp-pp" with etp for tp): ETP ranks
	 * consecutive, EP groups striding by etp, expert-DP by etp x ep. */
	topology_group(plan_etp(p), 1, c->gpus_per_node, &out->etp);
	topology_group(p->ep, plan_etp(p), c->gpus_per_node, &out->ep);
	topology_group(plan_edp(p), plan_etp(p) * p->ep, c->gpus_per_node, &out->edp);
	{
		int g = p->mics_group > 0 ? p->mics_group : p->dp * cp;

		topology_group(g, p->tp, c->gpus_per_node, &out->mics);
		topology_group(p->dp * cp / g, p->tp * g, c->gpus_per_node, &out->replica);
	}
	out->pp_inter_node = out->pp.nodes > 1;
}
