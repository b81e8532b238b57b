/*
 * Host and launch time: the kernels a framework launches per layer and
 * per micro-batch, the host's time to issue them, and the fixed costs of
 * an iteration that no faster tensor core hides. Launches are
 * asynchronous: the host runs ahead of the GPU while the GPU's queue is
 * full, so a stretch of kernels between two host synchronisations takes
 * the larger of its GPU time and its host time
 * (docs/research/shape-and-host-data.md, Sec. 2.2).
 */
#pragma once

#include <stdbool.h>

#include "plan/framework.h"
#include "plan/model.h"
#include "plan/plan.h"

/** Kernels of one layer (or the ends of a stage) for one micro-batch. */
struct host_kernels {
	double fwd;       /**< the forward's kernels: GEMMs, attention, element-wise, collectives */
	double bwd;       /**< the backward's */
	double recompute; /**< those recomputation repeats */
};

/**
 * The kernels one layer launches per micro-batch under plan @p (its
 * recompute mode) and framework @fw: @ew_kernels element-wise forward
 * kernels (compute.c counts them, fp8 casts included), the GEMMs, the
 * attention core and the TP and EP collectives. @moe: an MoE layer.
 */
void host_layer_kernels(const struct model *m, const struct plan *p, const struct framework *fw, bool moe,
			double ew_kernels, struct host_kernels *out);

/**
 * host_layer_kernels without the routed experts' GEMM launches (the per
 * expert GEMMs, or the grouped kernel's one a matrix; the router's and
 * the shared experts' GEMMs stay): the count the launch model compares
 * with to show what those launches cost (details.moe_expert_launch_s).
 * A dense layer (@moe false) counts as host_layer_kernels does.
 */
void host_layer_kernels_no_expert_gemms(const struct model *m, const struct plan *p, const struct framework *fw,
					bool moe, double ew_kernels, struct host_kernels *out);

/**
 * The kernels of the first stage's embedding (@first) and of the last
 * stage's logits and loss (@last) per micro-batch, with their TP
 * collectives.
 */
void host_ends_kernels(const struct plan *p, bool first, bool last, struct host_kernels *out);

/**
 * Host time to issue one layer's pass of @kernels kernels: one launch
 * each, or one graph launch where @fw captures layers in CUDA graphs
 * (FRAMEWORK_GRAPHS_LAYER), none where it captures the whole step.
 */
double host_layer_pass_s(const struct framework *fw, double kernels);

/** Host time to issue @kernels kernels outside the layers (eager unless the whole step is a graph). */
double host_eager_s(const struct framework *fw, double kernels);

/**
 * Time a stretch of @gpu_s seconds of GPU work and @host_s of host
 * launches adds to the GPU's: what the host time exceeds it by.
 */
double host_exposed_s(double gpu_s, double host_s);

/**
 * host_exposed_s for a stretch cut by @n host synchronisations (a
 * dropless MoE layer's each): the GPU's queue runs dry at every one, so
 * each of the @n synchronised stretches of @gpu_one seconds on the GPU
 * and @host_one of launches pays its own excess, and the rest of the
 * stretch (@gpu_s and @host_s less those) its own.
 */
double host_exposed_synced_s(double gpu_s, double host_s, double n, double gpu_one, double host_one);

/**
 * Kernel launches of one optimizer step over @tensors parameter tensors
 * of @elements elements in all, in @passes multi-tensor passes: Apex's
 * and PyTorch's multi_tensor_apply launch once per 320 chunks of 65,536
 * elements or per 30 tensors (depth 5: Adam with fp32 master weights),
 * whichever fills first.
 */
double host_optimizer_launches(double tensors, double elements, double passes);

/** Parameter tensors of one layer (weights, biases, norms) as the optimizer sees them. */
double host_layer_tensors(const struct model *m, bool moe, double local_experts);

/** Parameter tensors of the layers rank @stage holds (DualPipe: both its
 *  stages), @local_experts routed experts a MoE layer: a hybrid model's
 *  kind by kind. */
double host_rank_tensors(const struct model *m, const struct plan *p, int stage, double local_experts);
