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
 * Megatron-LM's default rank order (Narayanan et al. SC21, Sec. 3.3 and
 * its "tp-dp-pp" order): TP ranks are consecutive so that TP stays on
 * NVLink, DP groups stride by tp, pipeline stages stride by tp * dp.
 */
void
topology_plan(const struct plan *p, const struct cluster *c, struct plan_layout *out)
{
	topology_group(p->tp, 1, c->gpus_per_node, &out->tp);
	topology_group(p->dp, p->tp, c->gpus_per_node, &out->dp);
	topology_group(p->pp, p->tp * p->dp, c->gpus_per_node, &out->pp);
	topology_group(p->ep, p->tp, c->gpus_per_node, &out->ep);
	topology_group(p->dp / p->ep, p->tp * p->ep, c->gpus_per_node, &out->edp);
	{
		int g = p->mics_group > 0 ? p->mics_group : p->dp;

		topology_group(g, p->tp, c->gpus_per_node, &out->mics);
		topology_group(p->dp / g, p->tp * g, c->gpus_per_node, &out->replica);
	}
	out->pp_inter_node = out->pp.nodes > 1;
}
