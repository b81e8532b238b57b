#include "plan/collective.h"
#include "plan/pipeline.h"

double
pipeline_bubble_fraction(const struct plan *p)
{
	return (double)(p->pp - 1) / ((double)p->vpp * plan_microbatches(p));
}

/* The GPUs of a stage that share one node: they send at the same time. */
static int
stage_gpus_per_node(const struct plan *p, int gpus_per_node)
{
	long w = (long)p->tp * p->cp * p->dp;

	return w < gpus_per_node ? (int)w : gpus_per_node;
}

bool
pipeline_boundary_crosses(const struct plan *p, int gpus_per_node, int s)
{
	/* Ranks: TP innermost, then DP, then PP (Megatron's order). Stage s
	 * holds ranks s w .. (s+1) w - 1, w = t d; across the boundary after
	 * it, rank r pairs with r + w, or, after the last stage of an
	 * interleaved pipeline, with the same rank of stage 0. */
	long w = (long)p->tp * p->cp * p->dp, first = s * w;
	long peer = s + 1 < p->pp ? first + w : 0;

	if (p->pp <= 1)
		return false;
	for (long i = 0; i < w && i < gpus_per_node; i++)
		if ((first + i) / gpus_per_node != (peer + i) / gpus_per_node)
			return true;
	return w > gpus_per_node;
}

double
pipeline_exchange_time(const struct model *m, const struct plan *p, const struct cluster *c,
		       const struct plan_layout *lay, bool inter_node, double *bytes_out)
{
	double bytes = 2.0 * p->micro_batch * (double)p->seq_len * m->hidden;
	int senders = stage_gpus_per_node(p, c->gpus_per_node);
	bool scatter;

	if (p->sequence_parallel)
		bytes /= p->tp; /* the activation is already split along s */
	scatter = inter_node && p->tp > 1 && !p->sequence_parallel;
	*bytes_out = scatter ? bytes / p->tp : bytes;
	if (!inter_node)
		return collective_p2p_time(c, false, bytes);
	if (scatter)
		return collective_p2p_shared_time(c, bytes / p->tp, senders) +
		       collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, bytes);
	return collective_p2p_shared_time(c, bytes, senders);
}

double
pipeline_stage_p2p_time(const struct model *m, const struct plan *p, const struct cluster *c,
			const struct plan_layout *lay, int stage, double *bytes_out)
{
	/* The boundaries before and after the stage; an interleaved
	 * pipeline also wraps from the last stage to the first. */
	int wrap = p->vpp > 1 ? p->pp - 1 : -1;
	int bounds[2] = { stage > 0 ? stage - 1 : wrap, stage < p->pp - 1 ? stage : wrap };
	double time = 0.0, bytes = 0.0;

	*bytes_out = 0.0;
	if (p->pp <= 1)
		return 0.0;
	for (int i = 0; i < 2; i++) {
		double b;

		if (bounds[i] < 0)
			continue;
		time += pipeline_exchange_time(m, p, c, lay,
					       pipeline_boundary_crosses(p, c->gpus_per_node, bounds[i]), &b);
		bytes += b;
	}
	/* Each of the v chunks exchanges: it sends one way over each boundary. */
	*bytes_out = p->vpp * bytes;
	return p->vpp * time;
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
pipeline_stage_moe_layers(const struct model *m, const struct plan *p, int stage)
{
	int per_chunk = m->layers / (p->pp * p->vpp);
	int count = 0;

	if (!model_is_moe(m))
		return 0;
	if (p->custom_layers) {
		int first = plan_stage_first_layer(p, m, stage);

		return model_moe_layers_between(m, first, first + p->stage_layers[stage] - 1);
	}
	for (int j = 0; j < p->vpp; j++) {
		int first = (j * p->pp + stage) * per_chunk + 1;

		count += model_moe_layers_between(m, first, first + per_chunk - 1);
	}
	return count;
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
