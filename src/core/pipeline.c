#include "plan/collective.h"
#include "plan/pipeline.h"

double
pipeline_bubble_fraction(const struct plan *p)
{
	return (double)(p->pp - 1) / ((double)p->vpp * plan_microbatches(p));
}

double
pipeline_p2p_time(const struct model *m, const struct plan *p,
		  const struct cluster *c, const struct plan_layout *lay,
		  double *bytes_out)
{
	double bytes = 2.0 * p->micro_batch * (double)p->seq_len * m->hidden;
	double one;
	bool scatter;

	if (p->pp <= 1) {
		if (bytes_out)
			*bytes_out = 0.0;
		return 0.0;
	}
	if (p->sequence_parallel)
		bytes /= p->tp; /* the activation is already split along s */
	scatter = lay->pp_inter_node && p->tp > 1 && !p->sequence_parallel;
	if (scatter)
		one = collective_p2p_time(c, true, bytes / p->tp) +
		      collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, bytes);
	else
		one = collective_p2p_time(c, lay->pp_inter_node, bytes);
	/* A forward and a backward send per chunk; v chunks per GPU. */
	if (bytes_out)
		*bytes_out = 2.0 * p->vpp * (scatter ? bytes / p->tp : bytes);
	return 2.0 * p->vpp * one;
}

double
pipeline_stored_layer_microbatches(const struct model *m, const struct plan *p, int stage)
{
	double layers_per_stage = plan_stage_layers(p, m, stage);
	int mb = plan_microbatches(p);

	if (p->vpp > 1) {
		/* Megatron's interleaved schedule warms up with (v - 1) p +
		 * 2 (p - i - 1) chunk forwards before its first backward, so
		 * stage i holds one more than that, each of L/(p v) layers;
		 * for stage 0 this is Korthikanti's L (1 + (p-1)/(p v)). */
		double chunks = (double)(p->vpp - 1) * p->pp + 2.0 * (p->pp - stage - 1) + 1.0;

		if (chunks > (double)mb * p->vpp)
			chunks = (double)mb * p->vpp;
		return chunks * layers_per_stage / p->vpp;
	}
	return layers_per_stage * (mb < p->pp - stage ? mb : p->pp - stage);
}

int
pipeline_count_layers(const struct model *m, const struct plan *p, int stage,
		      bool (*pred)(int layer, const void *arg), const void *arg)
{
	int per_chunk = m->layers / (p->pp * p->vpp);
	int count = 0;

	if (p->custom_layers) {
		int first = plan_stage_first_layer(p, m, stage);

		for (int l = first; l < first + p->stage_layers[stage]; l++)
			if (pred(l, arg))
				count++;
		return count;
	}
	for (int j = 0; j < p->vpp; j++) {
		int first = (j * p->pp + stage) * per_chunk + 1;

		for (int l = first; l < first + per_chunk; l++)
			if (pred(l, arg))
				count++;
	}
	return count;
}
