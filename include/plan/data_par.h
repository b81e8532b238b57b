/* Data-parallel gradient synchronisation and ZeRO sharding traffic. */
#pragma once

#include "plan/cluster.h"
#include "plan/collective.h"
#include "plan/framework.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/topology.h"

/** Data-parallel communication of one iteration on one GPU. */
struct dp_comm {
	double grad_bytes;      /**< gradient bytes each GPU reduces (in the framework's reduce precision) */
	double reduce_s;        /**< gradient all-reduce, or reduce-scatter with ZeRO >= 1 */
	double gather_s;        /**< ZeRO-1/2 parameter all-gather after the step; ZeRO-3: the step's
				     gather of the persistent tensors (framework persist_gather_copy) */
	double zero3_mb_s;      /**< ZeRO-3 collectives of one micro-batch, one after another */
	double z3_gather_layer_s; /**< ZeRO-3: gathering one layer's parameters */
	double z3_reduce_layer_s; /**< ZeRO-3: reduce-scattering one layer's gradients */
	double z3_rest_s;       /**< ZeRO-3: gathering and reducing the rest (embedding, head) */
	double z3_tail_layers;  /**< ZeRO-3: layers whose gradients the last reduction bucket holds,
				     reduced after the backward (0 or 1: the last layer's) */
	double embed_sync_s;    /**< tied-embedding all-reduce between first and last stage */
	double bytes;           /**< bytes each GPU sends per iteration (for reports) */
};

/**
 * Traffic of DP and ZeRO (Rajbhandari et al. 2020, Sec. 7: 2 Psi for
 * stages 0-2, 3 Psi for stage 3 as forward and backward all-gathers plus a
 * gradient reduce-scatter), as framework @fw (NULL: the built-in one)
 * issues it: its reduce and gather precisions, per tensor or per layer,
 * whether the backward and a recomputed forward gather again.
 * @params_gpu: parameters of this GPU's model-parallel shard, of which
 * @params_expert are expert weights (synchronised over the dp/ep ranks
 * holding the same experts); @params_layer: the dense parameters of one
 * of its @layers layers; @ends: of @params_gpu, the embedding's and
 * the output layer's, which a framework that gathers its linear weights
 * as low-precision copies (fp8_recipe_param_gather_bytes) gathers in
 * its gather precision with the norms' small share. With MiCS (Zhang et al. VLDB 2023) ZeRO-3 runs
 * inside partition groups and the gradient shards are all-reduced across
 * replicas once per iteration.
 */
void dp_comm_time(const struct model *m, const struct plan *p,
		  const struct cluster *c, const struct plan_layout *lay,
		  const struct framework *fw, double params_gpu, double params_expert,
		  double params_layer, double layers, double ends, enum coll_algo algo, struct dp_comm *out);

/**
 * dp_comm_time with routed-expert parameters gathered in 16 bits too:
 * @ends_expert of @params_expert (the experts of layers that run in bf16
 * in an fp8 or fp4 plan, plan bf16_first_layers / bf16_last_layers),
 * beside @ends of the dense ones.
 */
void dp_comm_time_ends(const struct model *m, const struct plan *p, const struct cluster *c,
		       const struct plan_layout *lay, const struct framework *fw, double params_gpu,
		       double params_expert, double params_layer, double layers, double ends, double ends_expert,
		       enum coll_algo algo, struct dp_comm *out);

/**
 * Reduction in buckets of a fraction @f of the gradients: the time of the
 * last bucket's reduction (exposed after the backward), and in @window
 * the backward time, of @bwd_s, that can hide the others.
 */
double dp_bucket_tail(double reduce_s, double bwd_s, double f, double *window);

/**
 * What the gradient reduction of @reduce_s adds after the backward: its
 * part that @window_s does not hide, at least the last bucket's @tail_s,
 * and the slowdown (@slowdown, fw->overlap_slowdown) of the backward
 * while the rest runs under it. Never shrinks as @reduce_s grows, and
 * shrinks by at most what @window_s grows.
 */
double dp_reduce_exposed(double reduce_s, double window_s, double tail_s, double slowdown);

/**
 * Whether plan @p overlaps its DP gradient reduction (ZeRO 0-2) with the
 * backward under framework @fw: as the plan says (--dp-overlap,
 * --no-dp-overlap), else as the profile's grad_reduce_overlap.
 */
bool dp_grad_reduce_overlapped(const struct plan *p, const struct framework *fw);

/**
 * plan-cli dsz3host: the HBM bytes the ZeRO-3 optimizer step of @owned
 * parameters moves beyond compute_optimizer_time()'s (fw->zero3_step_bytes
 * each; 0 below ZeRO-3).
 */
double dp_zero3_step_bytes(const struct plan *p, const struct framework *fw, double owned);

/**
 * plan-cli simumoe: the HBM bytes the optimizer step of @owned parameters
 * moves beyond compute_optimizer_time()'s with ZeRO 0-2
 * (fw->step_bytes each; 0 from ZeRO-3 on, where dp_zero3_step_bytes
 * counts the step).
 */
double dp_step_bytes(const struct plan *p, const struct framework *fw, double owned);

/**
 * plan-cli simumoe: the HBM bytes the DP gradient path moves over a
 * gradient buffer of @grad_elements before its reduction, once an
 * iteration (ZeRO 0-1): fw->grad_check_bytes each, and
 * fw->grad_scale_bytes each when dp x cp > 1. 0 from ZeRO-2 on.
 */
double dp_grad_prereduce_bytes(const struct plan *p, const struct framework *fw, double grad_elements);

/**
 * plan-cli review6: the host synchronisations of the check before the DP
 * reduction, once an iteration (ZeRO 0-1): fw->grad_check_syncs for each
 * gradient bucket of a GPU holding @dense_elements dense and
 * @expert_elements expert gradient elements. A buffer each for the dense
 * and the expert gradients in each of the vpp model chunks, one bucket
 * each unless the reduction overlaps the backward and fw->grad_bucket
 * sets a bucket size (then ceil(elements / vpp / grad_bucket)). 0 from
 * ZeRO-2 on.
 */
double dp_grad_check_syncs(const struct plan *p, const struct framework *fw, double dense_elements,
			   double expert_elements);

/**
 * plan-cli dsz3host: the launches of the ZeRO-3 optimizer step outside
 * multi-tensor kernels, for the @tensors parameter tensors a GPU holds a
 * shard of (fw->zero3_tensor_launches each; 0 below ZeRO-3).
 */
double dp_zero3_step_launches(const struct plan *p, const struct framework *fw, double tensors);

/**
 * The per-rank copies by which DeepSpeed's 2021 optimizer step rebuilds a
 * layer's persistent tensors (biases and norms, under the persistence
 * threshold) from @ranks chunks: one a chunk that holds elements,
 * ceil(n / ceil(n / ranks)) for a tensor of n elements.
 */
double dp_zero3_persist_copies(const struct model *m, double ranks);

/**
 * The ZeRO-3 / FSDP time that one micro-batch of @layers layers, each
 * taking @fwd_s, @bwd_s and @recompute_s, does not hide; the extra time
 * of compute slowed by the collectives it overlaps goes to @slowdown_s.
 */
double dp_zero3_exposed(const struct dp_comm *dc, const struct plan *p, const struct framework *fw,
			double layers, double fwd_s, double bwd_s, double recompute_s,
			double *slowdown_s);
