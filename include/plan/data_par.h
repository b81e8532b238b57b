/* Data-parallel gradient synchronisation and ZeRO sharding traffic. */
#pragma once

#include "plan/cluster.h"
#include "plan/collective.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/topology.h"

/** Data-parallel communication of one iteration on one GPU. */
struct dp_comm {
	double grad_bytes;      /**< gradient bytes each GPU reduces (16-bit) */
	double reduce_s;        /**< gradient all-reduce, or reduce-scatter with ZeRO >= 1 */
	double gather_s;        /**< ZeRO-1/2 parameter all-gather after the step */
	double zero3_mb_s;      /**< ZeRO-3 collectives of one micro-batch */
	double embed_sync_s;    /**< tied-embedding all-reduce between first and last stage */
	double bytes;           /**< bytes each GPU sends per iteration (for reports) */
};

/**
 * Traffic of DP and ZeRO (Rajbhandari et al. 2020, Sec. 7: 2 Psi for
 * stages 0-2, 3 Psi for stage 3 as forward and backward all-gathers plus a
 * gradient reduce-scatter; full recomputation adds one all-gather, as
 * DeepSpeed releases parameters after each forward, recomputed or not).
 * @params_gpu: parameters of this GPU's model-parallel shard, of which
 * @params_expert are expert weights (synchronised over the dp/ep ranks
 * holding the same experts); @params_layer: the dense parameters of one
 * of its @layers layers. With MiCS (Zhang et al. VLDB 2023) ZeRO-3 runs
 * inside partition groups and the gradient shards are all-reduced across
 * replicas once per iteration.
 */
void dp_comm_time(const struct model *m, const struct plan *p,
		  const struct cluster *c, const struct plan_layout *lay,
		  double params_gpu, double params_expert, double params_layer,
		  double layers, enum coll_algo algo, struct dp_comm *out);
