#include <math.h>
#include <string.h>

#include "plan/compute.h"
#include "plan/data_par.h"
#include "plan/estimate.h"
#include "plan/flops.h"
#include "plan/pipeline.h"
#include "plan/tensor_par.h"
#include "plan/topology.h"

double
estimate_stage_params(const struct model *m, const struct plan *p, int stage)
{
	double params = (double)m->layers / p->pp * model_params_per_layer(m);

	/* The first stage holds the input embedding; the last one the final
	 * norm and the output layer, or a copy of the tied embedding. */
	if (stage == 0)
		params += model_params_embedding(m);
	if (stage == p->pp - 1) {
		params += model_params_head(m);
		if (m->tied_embeddings && p->pp > 1)
			params += (double)m->vocab * m->hidden;
	}
	return params / p->tp;
}

/* One micro-batch's work on the GPU of @stage, split by kind. */
struct stage_work {
	double compute, recompute, tp, pp;
	double bwd; /* backward compute alone (the DP overlap window) */
};

static void
stage_work(const struct model *m, const struct plan *p, const struct cluster *c,
	   const struct plan_layout *lay, int stage, struct stage_work *w)
{
	struct compute_layer cl;
	struct compute_ends ce;
	struct tp_layer_comm tc;
	double layers = (double)m->layers / p->pp;

	compute_layer_time(m, p, c, &cl);
	compute_ends_time(m, p, c, &ce);
	tp_layer_comm(m, p, c, lay, &tc);

	w->compute = layers * (cl.fwd_s + cl.bwd_s);
	w->bwd = layers * cl.bwd_s;
	w->recompute = layers * cl.recompute_s;
	w->tp = layers * (tc.fwd_s + tc.bwd_s + tc.recompute_s);
	w->pp = pipeline_p2p_time(m, p, c, lay, NULL);
	if (stage == 0) {
		w->compute += ce.embed_fwd_s + ce.embed_bwd_s;
		w->bwd += ce.embed_bwd_s;
		/* Vocab-parallel embedding: one all-reduce of b*s*h forward and
		 * backward (Shoeybi et al. 2019, Sec. 3). */
		w->tp += 2.0 * tc.collective_s / (p->sequence_parallel ? 2.0 : 1.0);
	}
	if (stage == p->pp - 1) {
		w->compute += ce.head_fwd_s + ce.head_bwd_s;
		w->bwd += ce.head_bwd_s;
	}
}

static double
stage_total(const struct stage_work *w)
{
	return w->compute + w->recompute + w->tp + w->pp;
}

static void
fill_memory(const struct model *m, const struct plan *p, const struct cluster *c,
	    struct estimate *out)
{
	struct memory_use first, last;

	memory_stage(m, p, c, 0, estimate_stage_params(m, p, 0), &first);
	out->memory = first;
	out->details.memory_stage = 0;
	if (p->pp > 1) {
		memory_stage(m, p, c, p->pp - 1, estimate_stage_params(m, p, p->pp - 1), &last);
		if (last.total > first.total) {
			out->memory = last;
			out->details.memory_stage = p->pp - 1;
		}
	}
	out->memory_capacity_bytes = c->gpu.memory_bytes;
	out->fits = out->memory.total <= c->gpu.memory_bytes;
}

bool
estimate_plan(const struct model *m, const struct cluster *c,
	      const struct plan *p, const struct estimate_options *opt,
	      struct estimate *out, struct plan_error *err)
{
	struct plan_layout lay;
	struct stage_work w[3], *bn;
	struct dp_comm dc;
	int stages[3] = { 0, p->pp - 1, p->pp / 2 };
	int nstages = p->pp > 2 ? 3 : (p->pp > 1 ? 2 : 1);
	double mb, slot, window, dp_exposed, z3_exposed = 0.0, params_gpu, params_opt;
	struct estimate_breakdown *b = &out->breakdown;

	if (!plan_validate(p, m, c, err))
		return false;
	memset(out, 0, sizeof(*out));
	topology_plan(p, c, &lay);
	mb = plan_microbatches(p);

	/* The slowest GPU sets the pace of every pipeline slot (1F1B steady
	 * state); the first holds the embedding, the last the logits. */
	bn = &w[0];
	out->details.bottleneck_stage = 0;
	for (int i = 0; i < nstages; i++) {
		stage_work(m, p, c, &lay, stages[i], &w[i]);
		if (stage_total(&w[i]) > stage_total(bn)) {
			bn = &w[i];
			out->details.bottleneck_stage = stages[i];
		}
	}
	params_gpu = estimate_stage_params(m, p, out->details.bottleneck_stage);
	dp_comm_time(m, p, c, &lay, params_gpu,
		     model_params_per_layer(m) / p->tp, opt ? opt->dp_algo : COLL_ALGO_RING, &dc);

	slot = stage_total(bn);
	if (p->zero >= 3) {
		/* ZeRO-3 prefetches the next layer's weights during this one's
		 * compute: only the excess is exposed. */
		double hide = p->dp_overlap ? bn->compute + bn->recompute : 0.0;

		z3_exposed = fmax(0.0, dc.zero3_mb_s - hide);
		slot += z3_exposed;
	}

	/* Gradient reduction overlaps the backward of the last micro-batch,
	 * except for the last bucket (PyTorch DDP / Megatron overlap-grad-reduce). */
	window = 0.0;
	if (p->dp_overlap) {
		double layers = (double)m->layers / p->pp;

		window = bn->bwd * (layers > 1.0 ? 1.0 - 1.0 / layers : 0.0);
	}
	dp_exposed = fmax(0.0, dc.reduce_s - window) + dc.gather_s + dc.embed_sync_s;

	b->compute = mb * bn->compute;
	b->recompute = mb * bn->recompute;
	b->tp_comm = mb * bn->tp;
	b->pp_comm = mb * bn->pp;
	b->pp_bubble = (double)(p->pp - 1) / p->vpp * slot;
	b->dp_comm = dp_exposed + mb * z3_exposed;
	params_opt = params_gpu / (p->zero >= 1 ? p->dp : 1);
	b->optimizer = compute_optimizer_time(c, params_opt);
	out->iteration_time_s = b->compute + b->recompute + b->tp_comm + b->pp_comm +
				b->pp_bubble + b->dp_comm + b->optimizer;

	out->parameters = model_params_total(m);
	out->gpus = plan_gpus(p);
	out->model_flops_per_iteration = flops_model_per_iteration(m, p);
	out->hardware_flops_per_iteration = flops_hardware_per_iteration(m, p);
	out->tflops_per_gpu = out->model_flops_per_iteration /
			      (out->iteration_time_s * out->gpus) / 1e12;
	out->hardware_tflops_per_gpu = out->hardware_flops_per_iteration /
				       (out->iteration_time_s * out->gpus) / 1e12;
	out->mfu = out->tflops_per_gpu * 1e12 / c->gpu.peak_flops;
	out->hfu = out->hardware_tflops_per_gpu * 1e12 / c->gpu.peak_flops;
	out->tokens_per_s = (double)p->global_batch * p->seq_len / out->iteration_time_s;

	{
		struct compute_layer cl;
		struct tp_layer_comm tc;
		double pp_bytes;

		compute_layer_time(m, p, c, &cl);
		tp_layer_comm(m, p, c, &lay, &tc);
		out->details.microbatches = (int)mb;
		out->details.bubble_fraction = pipeline_bubble_fraction(p);
		out->details.layer_fwd_s = cl.fwd_s;
		out->details.layer_bwd_s = cl.bwd_s;
		out->details.tp_collective_s = tc.collective_s;
		out->details.tp_bytes_per_iteration = p->tp > 1 ?
			mb * (double)m->layers / p->pp * (p->recompute == PLAN_RECOMPUTE_FULL ? 6.0 : 4.0) *
			2.0 * (p->tp - 1) / p->tp * tc.bytes : 0.0;
		out->details.pp_p2p_s = pipeline_p2p_time(m, p, c, &lay, &pp_bytes);
		out->details.pp_bytes_per_iteration = mb * pp_bytes;
		out->details.dp_total_s = dc.reduce_s + dc.gather_s + dc.embed_sync_s + mb * dc.zero3_mb_s;
		out->details.dp_overlap_window_s = window;
		out->details.dp_bytes_per_iteration = dc.bytes;
		out->details.slot_s = slot;
		out->details.tp_inter_node = lay.tp.nodes > 1;
		out->details.dp_inter_node = lay.dp.nodes > 1;
		out->details.pp_inter_node = lay.pp_inter_node;
	}
	fill_memory(m, p, c, out);
	return true;
}
