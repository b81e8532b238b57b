#include <math.h>
#include <string.h>

#include "plan/compute.h"
#include "plan/data_par.h"
#include "plan/fp8_recipe.h"
#include "plan/pipeline.h"

/* Where stage 0-2 traffic runs: every DP rank holding the same
 * parameters (@dp), the ranks one optimizer state is sharded over
 * (@shard: the DP group, or InternEvo's zero1 group / a MiCS-like
 * partition group), and the replicas of one shard (@replica, size 1
 * without such groups). */
struct dp_groups {
	const struct group_layout *dp, *shard, *replica;
};

/*
 * The updated 16-bit weights back to every rank of the shard group.
 * FRAMEWORK_ZS_BROADCAST is InternEvo's HybridZeroOptimizer.broadcast_params
 * (InternLM/InternLM@c18bec9, the code of its July 2023 performance
 * table, internlm/solver/optimizer/hybrid_zero_optim.py): one
 * dist.broadcast of each owner's flat 16-bit shard, issued async on one
 * communicator and waited for before the next step, so they run one after
 * another and are not overlapped ("TODO: support broadcast overlap").
 * _partition_param_list hands out whole tensors (largest first, to the
 * least-loaded rank), so ranks beyond the tensor count own nothing and
 * broadcast nothing: min(G, tensors) broadcasts of bytes / that on
 * average.
 */
static double
dp_param_sync(const struct cluster *c, const struct group_layout *g, enum coll_algo algo,
	      const struct framework *fw, double bytes, double tensors)
{
	double owners;

	if (fw->zero_param_sync != FRAMEWORK_ZS_BROADCAST)
		return collective_time(c, g, COLL_ALLGATHER, algo, bytes);
	owners = fmax(1.0, fmin((double)g->size, tensors));
	return owners * collective_broadcast_time(c, g, bytes / owners);
}

/* Stage 0-2 traffic of @params parameters in @tensors tensors: gradients
 * in the framework's reduce precision, the updated weights in its gather
 * one, or @low of them as their low-precision copies
 * (fp8_recipe_param_gather_bytes). */
static void
dp_sync(const struct plan *p, const struct cluster *c, const struct dp_groups *gs,
	enum coll_algo algo, const struct framework *fw, double params, double low, double tensors,
	double gathers, struct dp_comm *out)
{
	const struct group_layout *g = gs->dp, *sh = gs->shard, *rep = gs->replica;
	double frac = g->size > 1 ? (double)(g->size - 1) / g->size : 0.0;
	double sfrac = sh->size > 1 ? (double)(sh->size - 1) / sh->size : 0.0;
	double grad_bytes = fw->reduce_bytes * params;
	double lb = fp8_recipe_param_gather_bytes(p, fw);
	double weight_bytes = lb > 0.0 ? fw->gather_bytes * (params - low) + lb * low : fw->gather_bytes * params;

	/* With grad_bucket, one all-reduce a bucket, each paying its
	 * latency (InternEvo's _reduce_grads_by_rank: a reduce_tensor call
	 * per full bucket). */
	double buckets = fw->grad_bucket > 0 ? fmax(1.0, ceil(params / fw->grad_bucket)) : 1.0;

	if (p->zero == 0) {
		out->reduce_s += buckets * collective_time(c, g, COLL_ALLREDUCE, algo, grad_bytes / buckets);
		out->bytes += 2.0 * frac * grad_bytes;
		return;
	}
	if (fw->zero_grad_reduce == FRAMEWORK_ZR_ALL_REDUCE) {
		/* InternEvo (hybrid_zero_optim.py, _attach_reduction_hook:
		 * reduce_rank = None; utils.py reduce_tensor: no destination,
		 * dist.all_reduce over ParallelMode.DATA): every DP rank gets
		 * every gradient, whatever the zero1 group. */
		out->reduce_s += buckets * collective_time(c, g, COLL_ALLREDUCE, algo, grad_bytes / buckets);
		out->bytes += 2.0 * frac * grad_bytes;
	} else if (rep->size > 1) {
		/* Sharded in groups: reduce-scatter inside the group, then
		 * all-reduce each shard across the replicas (MiCS's 2-hop
		 * gradient synchronisation, Zhang et al. VLDB 2023, Sec. 4.3). */
		double shard = grad_bytes / sh->size;

		out->reduce_s += collective_time(c, sh, COLL_REDUCESCATTER, algo, grad_bytes) +
				 collective_time(c, rep, COLL_ALLREDUCE, algo, shard);
		out->bytes += sfrac * grad_bytes + 2.0 * (rep->size - 1) / rep->size * shard;
	} else {
		/* Reduce-scatter the gradients. */
		out->reduce_s += collective_time(c, g, COLL_REDUCESCATTER, algo, grad_bytes);
		out->bytes += frac * grad_bytes;
	}
	out->gather_s += gathers * dp_param_sync(c, sh, algo, fw, weight_bytes, tensors);
	out->bytes += gathers * sfrac * weight_bytes;
}

static double
gather(const struct cluster *c, const struct group_layout *g, bool two_hop, enum coll_algo algo,
       double bytes)
{
	return two_hop ? collective_two_hop_allgather(c, g, bytes)
		       : collective_time(c, g, COLL_ALLGATHER, algo, bytes);
}

/*
 * What one gather of @bytes costs besides the collective: the framework's
 * fixed cost (hooks, host synchronisation: deepspeedai/DeepSpeed#1069),
 * its host cost per rank of the group, and copies of the gathered tensor
 * in GPU memory at the GPU's achieved bandwidth. DeepSpeed's 2021
 * _allgather_param built a Python list of one narrow() view per rank and
 * called the list form of torch.distributed.all_gather, whose NCCL
 * backend gathers into a flat buffer and then copies each rank's chunk
 * out with its own copy_ (ProcessGroupNCCL::allgather, PyTorch 1.8): a
 * cost that grows with the group, not with the bytes. The zero-filled
 * output and the copy out are passes over the gathered bytes.
 */
/* Where ZeRO-3's collectives run: the cluster, the group, MiCS's 2-hop
 * gather, the algorithm, and the pace of the job's slowest GPU for the
 * copies in GPU memory around a gather (gpu_pace_factor). */
struct z3_net {
	const struct cluster *c;
	const struct group_layout *g;
	bool two_hop;
	enum coll_algo algo;
	double copy_pace;
};

/* @passes reads or writes of @bytes in GPU memory, at the GPU's achieved
 * bandwidth and the slowest GPU's pace. */
static double
z3_copies(const struct z3_net *net, double passes, double bytes)
{
	const struct cluster *c = net->c;
	double bw = c->gpu.memory_bw_Bps * c->gpu.memory_efficiency;

	return passes > 0 && bw > 0 ? net->copy_pace * passes * bytes / bw : 0.0;
}

static double
z3_gather_extra(const struct z3_net *net, const struct framework *fw, double bytes)
{
	if (net->g->size <= 1)
		return 0.0; /* no gather: the parameters are whole on the one rank */
	return fw->gather_overhead_s + fw->gather_rank_overhead_s * net->g->size +
	       z3_copies(net, fw->gather_copy_passes, bytes);
}

/* All-gathers (or reduce-scatters) of @params parameters as the framework
 * issues them: one collective for the whole unit, or one per tensor
 * (DeepSpeed's 2021 ZeRO-3). DeepSpeed's 2021 stage3.py also divided each
 * gradient by the group size in place before reducing it (average_tensor:
 * tensor.div_) and reduced it with the list form of reduce_scatter,
 * whose NCCL backend (PyTorch 1.8) copies each rank's chunk into a flat
 * buffer first: reduce_copy_passes reads and writes of the gradient. */
static double
z3_collective(const struct z3_net *net, const struct framework *fw, bool reduce, double params,
	      double tensors)
{
	double n = fw->gather_unit == FRAMEWORK_GATHER_TENSOR ? fmax(1.0, tensors) : 1.0;
	double bytes = (reduce ? fw->reduce_bytes : fw->gather_bytes) * params / n;

	if (params <= 0)
		return 0.0;
	if (reduce)
		return n * (collective_time(net->c, net->g, COLL_REDUCESCATTER, net->algo, bytes) +
			    (net->g->size > 1 ? z3_copies(net, fw->reduce_copy_passes, bytes) : 0.0));
	return n * (gather(net->c, net->g, net->two_hop, net->algo, bytes) + z3_gather_extra(net, fw, bytes));
}

/* Gathers of one layer per micro-batch: forward, backward (unless the
 * framework keeps them), and a recomputed forward (if it gathers again). */
static double
z3_gathers(const struct plan *p, const struct framework *fw)
{
	return 1.0 + (fw->backward_regather ? 1.0 : 0.0) +
	       (fw->recompute_regather && plan_stage_recompute(p, 0) == PLAN_RECOMPUTE_FULL ? 1.0 : 0.0);
}

/* The tensors a gather_unit-tensor framework gathers and reduces one by
 * one in a layer. Tensors below the persistence threshold (biases, norms)
 * stay whole on every rank: only the weight matrices are gathered. Their
 * gradients are still reduced, each by its own reduce-scatter: the
 * persistent parameters keep their optimizer partition (ds_tensor), and
 * DeepSpeed's 2021 stage3.py hooks every parameter's gradient into the
 * bucket that _reduce_scatter_gradients reduces one by one. */
struct z3_tensors {
	double gathered, reduced;
};

static bool
z3_small_persist(const struct framework *fw, double matrix_params)
{
	return fw->persistence_threshold > 0 && matrix_params >= fw->persistence_threshold;
}

static struct z3_tensors
z3_layer_tensors(const struct model *m, const struct framework *fw)
{
	double all = model_tensors_per_layer(m);

	return (struct z3_tensors){ z3_small_persist(fw, (double)m->hidden * m->hidden) ?
				    all - model_small_tensors_per_layer(m) : all, all };
}

/* The experts' tensors of a layer holding @params_layer expert parameters
 * (on average over the stage's layers): 2 or 3 matrices an expert, and
 * as many biases, reduced but not gathered when they persist. */
static struct z3_tensors
z3_expert_tensors(const struct model *m, const struct framework *fw, double params_layer)
{
	double one = model_params_expert(m);
	double experts = one > 0 ? params_layer / one : 0.0;
	double mats = experts * (m->gated_mlp ? 3.0 : 2.0);
	double all = mats * (m->bias ? 2.0 : 1.0);

	return (struct z3_tensors){ z3_small_persist(fw, (double)m->hidden * m->hidden) ? mats : all, all };
}

/*
 * ZeRO-3 / FSDP over group @g, or MiCS over its partition group (Zhang
 * et al. VLDB 2023, Sec. 4): per micro-batch, each layer's parameters are
 * gathered before forward and backward and its gradients reduce-scattered,
 * all inside the group; MiCS gathers in two hops when the group spans
 * nodes. @params_layer parameters of each of @layers layers in the
 * tensors @tn, and @rest (embedding, final norm, head: FSDP's root unit)
 * gathered once.
 */
static void
zero3_sync(const struct plan *p, const struct cluster *c, const struct group_layout *g,
	   enum coll_algo algo, const struct framework *fw, struct z3_tensors tn,
	   double params_layer, double layers, double rest, struct dp_comm *out)
{
	double tensors = tn.gathered, reduced = tn.reduced;
	double frac = g->size > 1 ? (double)(g->size - 1) / g->size : 0.0;
	/* The copies are GPU work: the slowest GPU's pace (only computed
	 * for a framework that copies). */
	struct z3_net net = { c, g, p->mics_group > 0 && p->mics_hierarchical, algo,
			      fw->gather_copy_passes > 0 || fw->reduce_copy_passes > 0 ?
			      gpu_pace_factor(&c->gpu, plan_gpus(p)) : 1.0 };
	struct framework fp8;
	double gl;

	/* torchao's enable_fsdp_float8_all_gather (Float8Linear under FSDP2):
	 * the linear weights are cast to fp8 before the all-gather, which
	 * then moves 1 byte a parameter; counted on all of a layer's
	 * parameters (its norms, in 16 bits, are a 1e-4 fraction). The
	 * embedding and the head stay in the framework's gather precision. */
	if (p->fp8_gather) {
		fp8 = *fw;
		fp8.gather_bytes = 1.0;
	}
	gl = z3_collective(&net, p->fp8_gather ? &fp8 : fw, false, params_layer, tensors);
	/* ... each gather after its cast of the shard, on the same
	 * copy-in stream (fp8_recipe_gather_cast_bytes: torchao's
	 * fsdp_pre_all_gather; FSDP2 foreach_all_gather). */
	gl += compute_memory_time(c, fp8_recipe_gather_cast_bytes(p, fw) * params_layer / g->size);
	double rl = z3_collective(&net, fw, true, params_layer, reduced);
	/* The rest is mostly one tensor, the word embedding. */
	double gr = z3_collective(&net, fw, false, rest, 1.0);
	double rr = z3_collective(&net, fw, true, rest, 1.0);
	double gathers = z3_gathers(p, fw);

	out->z3_gather_layer_s += gl;
	out->z3_reduce_layer_s += rl;
	out->z3_rest_s += gr + rr;
	out->zero3_mb_s += layers * (gathers * gl + rl) + gr + rr;
	out->bytes += plan_microbatches(p) * frac *
		      ((gathers * (p->fp8_gather ? 1.0 : fw->gather_bytes) + fw->reduce_bytes) * params_layer * layers +
		       (fw->gather_bytes + fw->reduce_bytes) * rest);
}

/* Chunks of ceil(n / ranks) elements that hold any of a tensor's n. */
static double
persist_chunks(double n, double ranks)
{
	return n > 0 && ranks > 0 ? ceil(n / ceil(n / ranks)) : 0.0;
}

double
dp_zero3_persist_copies(const struct model *m, double ranks)
{
	/* linear_qkv's bias is linear_qkv_out_dim long: gated attention's
	 * gate columns too (model_qkv_dim). */
	double h = m->hidden, qkv = model_qkv_dim(m), copies = 0.0;

	if (m->bias)
		copies += persist_chunks(qkv, ranks) + 2.0 * persist_chunks(h, ranks) +
			  (m->gated_mlp ? 2.0 : 1.0) * persist_chunks(m->ffn_hidden, ranks);
	else if (m->qkv_bias)
		copies += persist_chunks(qkv, ranks);
	return copies + model_norms_per_layer(m) * (model_norm_has_shift(m) ? 2.0 : 1.0) * persist_chunks(h, ranks);
}

/*
 * plan-cli zero3: DeepSpeed's 2021 optimizer step ends by gathering the
 * persistent tensors again (stage3.py _post_step, v0.3.13 to v0.5.0:
 * persistent_parameters[0].all_gather(...); backward() had partitioned
 * every parameter, _partition_all_parameters). The synchronous path,
 * partition_parameters.py _allgather_params, gathers them in one list
 * all_gather and then rebuilds each tensor in a Python loop over the
 * ranks, a narrow() of the rank's chunk, a view and a narrow() of the
 * tensor and a copy_ of the chunk into it: one launch and three view
 * operations a chunk, host work with the GPU idle, persist_gather_copy
 * each. The layer's persistent tensors and the final norm's.
 */
static double
z3_persist_gather(const struct model *m, const struct z3_net *net, const struct framework *fw,
		  double layers)
{
	double h = m->hidden, norm = model_norm_has_shift(m) ? 2.0 : 1.0, ranks = net->g->size;
	double elems, bytes;

	if (net->g->size <= 1 || !z3_small_persist(fw, h * h))
		return 0.0;
	elems = layers * (model_params_per_layer(m) - model_matrix_params_per_layer(m)) + norm * h;
	bytes = fw->gather_bytes * elems;
	return gather(net->c, net->g, net->two_hop, net->algo, bytes) + z3_gather_extra(net, fw, bytes) +
	       fw->persist_gather_copy_s * (layers * dp_zero3_persist_copies(m, ranks) + norm * persist_chunks(h, ranks));
}

/*
 * The layers whose gradients are reduced after the backward ends.
 * DeepSpeed's stage 3 (deepspeed/runtime/zero/stage3.py from v0.6.0 on,
 * reduce_independent_p_g_buckets_and_remove_grads and
 * __reduce_and_partition_ipg_grads) adds each gradient to a bucket and
 * reduce-scatters the bucket when the next gradient would take it past
 * reduce_bucket_size (5e8 elements by default, runtime/zero/config.py);
 * independent_gradient_partition_epilogue reduces what is left after the
 * last backward hook. A bucket holds grad_bucket / params_layer layers'
 * gradients, and the last bucket's reduction waits after the backward,
 * as dp_bucket_tail() takes for ZeRO 0-2: at least one layer (FSDP
 * reduces each unit as its backward ends) and at most all of them.
 */
static double
z3_tail_layers(const struct framework *fw, double params_layer, double layers)
{
	if (fw->grad_bucket <= 0 || params_layer <= 0)
		return 1.0;
	return fmin(fmax(1.0, fw->grad_bucket / params_layer), fmax(1.0, layers));
}

/* ZeRO 0-2: the gradients' reduction and, sharded, the weights' gather
 * after the step (dp_sync), dense and expert. */
static void
dp_comm_zero12(const struct model *m, const struct plan *p, const struct cluster *c, const struct plan_layout *lay,
	       const struct framework *fw, double dense, double params_expert, double dense_low, double expert_low,
	       double layers, enum coll_algo algo, struct dp_comm *out)
{
	/* ZeRO-1/2 in groups (InternEvo's zero1 = G < dp) shard over
	 * the MiCS layout's partition group, replicated across the rest. */
	struct group_layout one = { 1, 1, 1 };
	struct dp_groups dense_g = { &lay->dp, p->mics_group > 0 ? &lay->mics : &lay->dp,
				     p->mics_group > 0 ? &lay->replica : &one };
	struct dp_groups expert_g = { &lay->edp, &lay->edp, &one };
	/* The stage's tensors: its layers', and at most three more (the
	 * embedding, the head, the final norm). */
	double tensors = layers * model_tensors_per_layer(m) + 3.0;
	/* plan-cli simumoe: with experts Megatron-Core (from
	 * core_v0.9.0; core_r0.14.0 23e00ed alike) chains two
	 * distributed optimizers, dense and expert
	 * (megatron/core/optimizer/__init__.py: ChainedOptimizer), both
	 * over the same model chunks; each one's step_with_ready_grads
	 * (distrib_optimizer.py) calls model_chunk.start_param_sync(),
	 * which all-gathers every bucket group of the chunk, dense and
	 * expert (distributed_data_parallel.py), without
	 * --overlap-param-gather: every weight is gathered twice
	 * (moe_param_gathers). Before core_v0.9.0 each optimizer gathered
	 * its own buffers. */
	double gathers = params_expert > 0 ? fmax(1.0, fw->moe_param_gathers) : 1.0;

	dp_sync(p, c, &dense_g, algo, fw, dense, dense_low, tensors, gathers, out);
	/* Expert weights are replicated only across the expert-DP ranks that
	 * hold the same experts (DeepSpeed-MoE, Megatron-Core). */
	/* A stage of no layer (--stage-layers ...,0) holds experts only in
	 * its MTP modules: their tensors are not counted, as on every stage. */
	if (params_expert > 0)
		dp_sync(p, c, &expert_g, algo, fw, params_expert, expert_low,
			layers > 0 ? layers * z3_expert_tensors(m, fw, params_expert / layers).reduced : 0.0,
			gathers, out);
}

/* ZeRO-3 (and MiCS): the layers' gathers and reduce-scatters, the
 * experts' over the expert-DP ranks, and MiCS's all-reduce across the
 * replicas. */
static void
dp_comm_zero3(const struct model *m, const struct plan *p, const struct cluster *c, const struct plan_layout *lay,
	      const struct framework *fw, double dense, double params_expert, double params_layer,
	      double layers, enum coll_algo algo, struct dp_comm *out)
{
	double rest = fmax(0.0, dense - layers * params_layer);

	out->z3_tail_layers = z3_tail_layers(fw, params_layer + (layers > 0 ? params_expert / layers : 0.0),
					     layers);

	zero3_sync(p, c, &lay->mics, algo, fw, z3_layer_tensors(m, fw), params_layer, layers, rest, out);
	if (fw->persist_gather_copy_s > 0) {
		struct z3_net net = { c, &lay->mics, p->mics_group > 0 && p->mics_hierarchical, algo,
				      gpu_pace_factor(&c->gpu, plan_gpus(p)) };

		out->gather_s += z3_persist_gather(m, &net, fw, layers);
	}
	/* Experts are gathered with their layer, over the expert-DP ranks. */
	if (params_expert > 0)
		zero3_sync(p, c, &lay->edp, algo, fw, z3_expert_tensors(m, fw, params_expert / layers),
			   params_expert / layers, layers, 0.0, out);
	if (lay->replica.size > 1) {
		/* MiCS 2-hop gradient synchronisation: the shards are
		 * all-reduced across the replicas once per iteration, at the
		 * gradient-accumulation boundary, on 1/G of the gradients. */
		double shard = fw->reduce_bytes * dense / lay->mics.size;

		out->reduce_s += collective_time(c, &lay->replica, COLL_ALLREDUCE, algo, shard);
		out->bytes += 2.0 * (lay->replica.size - 1) / lay->replica.size * shard;
	}
}

void
dp_comm_time(const struct model *m, const struct plan *p,
	     const struct cluster *c, const struct plan_layout *lay,
	     const struct framework *fw, double params_gpu, double params_expert,
	     double params_layer, double layers, double ends, enum coll_algo algo, struct dp_comm *out)
{
	dp_comm_time_ends(m, p, c, lay, fw, params_gpu, params_expert, params_layer, layers, ends, 0.0, algo, out);
}

void
dp_comm_time_ends(const struct model *m, const struct plan *p, const struct cluster *c,
		  const struct plan_layout *lay, const struct framework *fw, double params_gpu,
		  double params_expert, double params_layer, double layers, double ends, double ends_expert,
		  enum coll_algo algo, struct dp_comm *out)
{
	struct framework def;
	double dense = params_gpu - params_expert;

	if (!fw) {
		framework_init_default(&def);
		fw = &def;
	}
	memset(out, 0, sizeof(*out));
	out->grad_bytes = fw->reduce_bytes * params_gpu;

	if (p->zero <= 2)
		dp_comm_zero12(m, p, c, lay, fw, dense, params_expert, fmax(0.0, dense - ends),
			       fmax(0.0, params_expert - ends_expert), layers, algo, out);
	else
		dp_comm_zero3(m, p, c, lay, fw, dense, params_expert, params_layer, layers, algo, out);
	/* Megatron keeps a copy of a tied word embedding on the last stage and
	 * all-reduces its gradient with the first stage (SC21, Sec. 4). */
	/* plan-cli pipeline: in a V (ZB-V, DualPipeV) rank 0 holds both ends. */
	if (p->pp > 1 && m->tied_embeddings && pipeline_head_stage(p) != 0) {
		struct group_layout pair = { 2, lay->pp_inter_node ? 1 : 2, lay->pp_inter_node ? 2 : 1 };

		out->embed_sync_s = collective_time(c, &pair, COLL_ALLREDUCE, COLL_ALGO_RING,
						    fw->reduce_bytes * m->vocab * (double)m->hidden / p->tp);
	}
}

/*
 * Gradient buckets of a fraction @f of the gradients, each reduced as it
 * fills (InternEvo's _store_and_try_reduce_grads_by_bucket; PyTorch DDP's
 * bucket_cap_mb): the reductions can start once the first bucket is
 * full, a fraction f into the backward of @bwd_s, so @window is
 * (1 - f) bwd; the last bucket fills as the backward ends and its
 * reduction, a fraction f of @reduce_s, is exposed whatever the rest hid.
 */
double
dp_bucket_tail(double reduce_s, double bwd_s, double f, double *window)
{
	f = fmin(1.0, fmax(0.0, f));
	*window = bwd_s * (1.0 - f);
	return reduce_s * f;
}

/*
 * The reduction's exposed part E = max(tail, R - window): the last bucket
 * waits whatever the window; otherwise what the window cannot hold. The
 * backward is slowed while the hidden part, R - E, runs under it (the
 * factor: dp_zero3_exposed()). Issue 25: the slowdown was charged on
 * min(R, window), which counts the last bucket's reduction both as
 * exposed and as overlapped, and, as the window shrank towards R - tail,
 * charged less while E did not grow: a shorter backward gave a shorter
 * iteration. As (2 - s) E + (s - 1) R it grows with R and shrinks by at
 * most (2 - s) <= 1 times what the window grows.
 */
double
dp_reduce_exposed(double reduce_s, double window_s, double tail_s, double slowdown)
{
	double exposed = fmax(tail_s, reduce_s - window_s);

	return exposed + (slowdown - 1.0) * fmax(0.0, reduce_s - exposed);
}

bool
dp_grad_reduce_overlapped(const struct plan *p, const struct framework *fw)
{
	return p->dp_overlap < 0 ? fw->grad_reduce_overlap : p->dp_overlap != 0;
}

/*
 * What ZeRO-3 / FSDP leaves exposed in one micro-batch, layer by layer
 * (the FSDP paper, Zhao et al. VLDB 2023, Sec. 3.3-3.4; PyTorch FSDP's
 * backward_prefetch documentation). Forward: the first layer's gather
 * waits; each later one is prefetched during the layer before and shows
 * only where it outlasts that layer's forward. Backward: the prefetch
 * gather of the next layer and the reduce-scatter of this one share the
 * same links (FSDP1 even runs them on one stream), against the layer's
 * backward and its recomputed forward; the first gather and the last
 * reduce-scatter wait (with reduction buckets, the last bucket's layers'
 * reduce-scatters: z3_tail_layers()). BACKWARD_POST issues the gather
 * after the layer's backward, so it waits every time; without prefetch
 * everything waits.
 * The root unit (embedding, head) is gathered before the forward and
 * reduced after the backward. Compute that overlaps a collective runs
 * fw->overlap_slowdown times slower (Lee et al. 2025, arXiv 2507.03114:
 * 18.9 % on average): the extra is returned in @slowdown_s.
 */
double
dp_zero3_exposed(const struct dp_comm *dc, const struct plan *p, const struct framework *fw,
		 double layers, double fwd_s, double bwd_s, double recompute_s, double *slowdown_s)
{
	double g = dc->z3_gather_layer_s, r = dc->z3_reduce_layer_s;
	double regather = fw->backward_regather ? g : 0.0;
	double recompute_g = fw->recompute_regather && plan_stage_recompute(p, 0) == PLAN_RECOMPUTE_FULL ? g : 0.0;
	double exposed = dc->z3_rest_s, overlapped = 0.0, comm_b, comp_b, rest_layers;
	/* The last reduction bucket's layers (z3_tail_layers()): their
	 * reduce-scatter waits after the backward; the other layers'
	 * reductions are spread over the backward of the layers but the
	 * first. */
	double tail = fmin(fmax(1.0, dc->z3_tail_layers), fmax(1.0, layers)), r_over;

	*slowdown_s = 0.0;
	if (layers < 1.0)
		return dc->zero3_mb_s;
	if (!p->dp_overlap || fw->prefetch == FRAMEWORK_PREFETCH_NONE)
		return dc->zero3_mb_s;
	rest_layers = layers - 1.0;
	r_over = rest_layers > 0 ? r * (layers - tail) / rest_layers : 0.0;
	/* forward */
	exposed += g + rest_layers * fmax(0.0, g - fwd_s);
	overlapped += rest_layers * fmin(g, fwd_s);
	/* backward */
	comm_b = regather + recompute_g + r_over;
	comp_b = bwd_s + recompute_s;
	if (fw->prefetch == FRAMEWORK_PREFETCH_POST) {
		exposed += layers * regather;
		comm_b -= regather;
		regather = 0.0;
	}
	exposed += regather + tail * r + rest_layers * fmax(0.0, comm_b - comp_b);
	overlapped += rest_layers * fmin(comm_b, comp_b);
	*slowdown_s = (fw->overlap_slowdown - 1.0) * overlapped;
	return exposed;
}

/*
 * plan-cli dsz3host: DeepSpeed's ZeRO-3 optimizer step, counted from
 * deepspeed/runtime/zero/stage3.py (v0.11.1, which FlagPerf's
 * llama2_7b-deepspeed case names; the same code at v0.16), step() with
 * bf16 and no offload. Under ZeRO the gradient partitions are kept in the
 * model dtype (engine.py get_data_types: grad_accum_dtype = bf16, 2
 * bytes); per element this GPU owns:
 *   has_overflow: torch.isinf(buffer).any() and torch.isnan(...).any()
 *     over the flat bf16 buffer: (read 2, write 1, read 1) x 2    =  8
 *   get_grad_norm_direct: per tensor g.double() (read 2, write 8)
 *     and .norm(2) (read 8)                                        = 18
 *   _prepare_fp32_grad_for_sub_group: flatten (torch.cat: read 2,
 *     write 2) and .to(fp32) (read 2, write 4)                     = 10
 *   unscale_and_clip_grads: the fp32 gradient mul_ (read 4, write 4) = 8
 *   FusedAdam over fp32 weights with the fp32 gradient: read 4 x 4,
 *     write 3 x 4                                                  = 28
 *   _reassign_or_swap_out_partitioned_parameters: the bf16 copy_ of
 *     the fp32 weights (read 4, write 2)                           =  6
 * 78 bytes in all, where compute_optimizer_time() prices 36 (Adam 28
 * with the 16-bit reads and writes, the clip norm's 4, a zeroing of the
 * gradient buffer's 4 that stage 3 does not do: micro_step_id 0 copies
 * over it in partition_grads): 42 more (frameworks/deepspeed.yaml).
 * The norm launches two kernels per parameter tensor (a Python loop over
 * the partitions) between two host synchronisations (has_overflow's and
 * its own .item()), the GPU queue empty: host time, launch by launch.
 */
double
dp_zero3_step_bytes(const struct plan *p, const struct framework *fw, double owned)
{
	if (p->zero < 3 || !fw || !(owned > 0.0))
		return 0.0;
	return fw->zero3_step_bytes * owned;
}

/*
 * plan-cli simumoe: Megatron-Core's optimizer step with ZeRO 0-2 against
 * compute_optimizer_time()'s generic one (Adam reading a 16-bit gradient
 * and writing the 16-bit weight, 28 bytes): the fp32 master shard steps
 * with the fp32 main gradient (FusedAdam reads 4 + 12, writes 12: 28),
 * and _copy_main_params_to_model_params then copies each updated fp32
 * master into the 16-bit weight (copy_: read 4, write 2), the buffer the
 * all-gather sends (megatron/core/optimizer/distrib_optimizer.py,
 * core_v0.6.0 to core_r0.14.0; Float16OptimizerWithFloat16Params in
 * optimizer.py alike without the distributed optimizer): 34 bytes, 6
 * more per owned parameter (step_bytes).
 */
double
dp_step_bytes(const struct plan *p, const struct framework *fw, double owned)
{
	if (p->zero > 2 || !fw || !(owned > 0.0))
		return 0.0;
	return fw->step_bytes * owned;
}

/*
 * plan-cli simumoe: Megatron-Core's DDP before each bucket's reduction
 * (megatron/core/distributed/param_and_grad_buffer.py, start_grad_sync,
 * core_v0.6.0 to core_r0.14.0; the distributed optimizer's reduce-scatter
 * and plain DDP's all-reduce alike; every bucket of the dense and the
 * expert buffers, also where the expert-DP group is one GPU):
 * - check_for_nan_in_grad (the training loop sets it from
 *   --check-for-nan-in-loss-and-grad, on unless fp16 with a dynamic loss
 *   scale: megatron/training/arguments.py): grad_data.norm(p=2) reads the
 *   fp32 bucket, 4 bytes an element (grad_check_bytes);
 * - grad_data *= gradient_scaling_factor where the factor is not 1: it
 *   is 1/(dp x cp) for dense and expert buffers unless the run averages
 *   in the collective (--ddp-average-in-collective, off by default;
 *   distributed_data_parallel.py): read 4, write 4 (grad_scale_bytes).
 * Once an iteration (finish_grad_sync at the accumulation boundary).
 */
double
dp_grad_prereduce_bytes(const struct plan *p, const struct framework *fw, double grad_elements)
{
	double bytes;

	if (!fw || p->zero > 1 || !(grad_elements > 0.0))
		return 0.0;
	bytes = fw->grad_check_bytes;
	if ((double)p->dp * p->cp > 1.0)
		bytes += fw->grad_scale_bytes;
	return bytes * grad_elements;
}

/*
 * plan-cli review6: Megatron-Core core_v0.6.0's NaN check,
 * Bucket.start_grad_sync (megatron/core/distributed/
 * param_and_grad_buffer.py): norm = self.grad_data.norm(p=2); assert not
 * norm.isnan(). The assert takes the truth of a one-element CUDA tensor,
 * which copies it to the host and waits for the stream: a host
 * synchronisation per bucket, each exposing one launch as host_syncs do.
 * The buckets: DistributedDataParallel (distributed_data_parallel.py,
 * core_v0.6.0) keeps a buffer per (param dtype, grad dtype) of the dense
 * parameters and one of the expert-parallel ones, per model chunk; with
 * bucket_size None (no --overlap-grad-reduce, a pipeline rank past the
 * first, a model chunk past the first) a buffer is one bucket. The
 * training loop turns the check on from --check-for-nan-in-loss-and-grad,
 * on unless fp16 with a dynamic loss scale (megatron/training/
 * arguments.py, training.py).
 */
static double
buffer_buckets(const struct plan *p, const struct framework *fw, double elements)
{
	if (!(elements > 0.0))
		return 0.0;
	if (dp_grad_reduce_overlapped(p, fw) && fw->grad_bucket > 0.0)
		return p->vpp * ceil(elements / p->vpp / fw->grad_bucket);
	return p->vpp;
}

double
dp_grad_check_syncs(const struct plan *p, const struct framework *fw, double dense_elements,
		    double expert_elements)
{
	if (!fw || p->zero > 1 || !(fw->grad_check_syncs > 0.0))
		return 0.0;
	return fw->grad_check_syncs *
	       (buffer_buckets(p, fw, dense_elements) + buffer_buckets(p, fw, expert_elements));
}

double
dp_zero3_step_launches(const struct plan *p, const struct framework *fw, double tensors)
{
	if (p->zero < 3 || !fw || !(tensors > 0.0))
		return 0.0;
	return fw->zero3_tensor_launches * tensors;
}
