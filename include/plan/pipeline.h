/* Pipeline parallelism: 1F1B and interleaved schedules. */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/topology.h"

/**
 * Bubble as a fraction of the ideal time: (p - 1) / (v * m)
 * (Narayanan et al. SC21, Sec. 2.2, Eqs. 1 and 2).
 */
double pipeline_bubble_fraction(const struct plan *p);

/**
 * Whether the boundary between stage @s and the next (stage 0 after the
 * last, for an interleaved pipeline) crosses nodes, with ranks laid out
 * TP innermost, then DP, then PP, @gpus_per_node consecutive ranks a node.
 */
bool pipeline_boundary_crosses(const struct plan *p, int gpus_per_node, int s);

/**
 * One chunk's activation (or gradient) over one stage boundary; the other
 * direction overlaps it in the same batched exchange (Megatron's
 * send_forward_recv_backward). Across nodes, the GPUs of the sending stage
 * in a node share the node's NICs; with t > 1 and no sequence
 * parallelism, Megatron's scatter/gather optimisation sends b*s*h/t per
 * TP rank and rebuilds the tensor with an NVLink all-gather (SC21, Sec.
 * 4.1). @bytes_out: what one GPU sends.
 */
double pipeline_exchange_time(const struct model *m, const struct plan *p, const struct cluster *c,
			      const struct plan_layout *lay, bool inter_node, double *bytes_out);

/**
 * Stage @stage's exchanges of one micro-batch (all its v chunks): v per
 * neighbouring boundary (the first and last stage of a 1F1B pipeline or
 * a V have one neighbour; interleaved, they share the wrap from the last
 * stage to the first, which carries v - 1: nothing enters virtual stage 0
 * or leaves the last), each crossing nodes or not as the rank layout says.
 * @bytes_out: the bytes it sends (an activation forward, a gradient back).
 */
double pipeline_stage_p2p_time(const struct model *m, const struct plan *p, const struct cluster *c,
			       const struct plan_layout *lay, int stage, double *bytes_out);
/* pipeline_stage_p2p_time of stages 0 .. @n - 1 into @time[] and
 * @bytes[], each kind of boundary (within or across nodes) priced once. */
void pipeline_stages_p2p_time(const struct model *m, const struct plan *p, const struct cluster *c,
			      const struct plan_layout *lay, int n, double *time, double *bytes);

/**
 * Micro-batches' worth of layer activations stage @stage holds at its
 * peak, in units of (one layer, one micro-batch): its layers times
 * min(p - stage, m) in-flight micro-batches (stage 0: min(p, m)), times
 * 1 + (p-1)/(p v) when interleaved (Korthikanti et al. 2022, Sec. 4.2.3;
 * Narayanan et al. SC21, Sec. 2.2); under DualPipe p - h micro-batches of
 * stage h and h + 1 of stage p - 1 - h, h = min(stage, p - 1 - stage).
 */
double pipeline_stored_layer_microbatches(const struct model *m, const struct plan *p, int stage);

/** Micro-batches in flight that each layer of @stage holds at the peak:
 *  pipeline_stored_layer_microbatches over the stage's layers, and what a
 *  layer there would hold on a stage of none (--stage-layers 0,...);
 *  under DualPipe per layer of the rank's two stages (p on a rank of none). */
double pipeline_layer_microbatches(const struct model *m, const struct plan *p, int stage);

/** Bytes one layer's deferred weight-gradient pass keeps for a
 *  micro-batch: its linear layers' inputs and output gradients (Qi et
 *  al.'s M_W; 32 s b h for GPT-3's shapes at tp 1). */
double pipeline_layer_wgrad_bytes(const struct model *m, const struct plan *p);

/** Bytes of @stage's micro-batches whose W pass is pending at its peak:
 *  under ZB-H1 @stage of them, each of the stage's layers
 *  pipeline_layer_wgrad_bytes; 0 under the other schedules. */
double pipeline_deferred_w_bytes(const struct model *m, const struct plan *p, int stage);

/** Micro-batches in flight of the chunk with the output layer (the MTP
 *  modules' activations) on @stage: 1 on DualPipe's end ranks, else the
 *  stage's pipeline_layer_microbatches (a stage of no layer too). */
double pipeline_head_microbatches(const struct model *m, const struct plan *p, int stage);

/**
 * Count the layers of pipeline stage @stage (0-based) for which
 * @pred(layer, @arg) holds. Chunk j of stage i is virtual stage j*p + i
 * (Megatron's interleaved assignment); layers are numbered from 1.
 */
int pipeline_count_layers(const struct model *m, const struct plan *p, int stage,
			  bool (*pred)(int layer, const void *arg), const void *arg);

/** The MoE layers of pipeline stage @stage, as pipeline_count_layers
 *  with model_layer_is_moe counts them, in closed form per chunk. */
int pipeline_stage_moe_layers(const struct model *m, const struct plan *p, int stage);

/** Of the layers of @stage that recompute in full, the first @n taken
 *  chunk by chunk (--recompute-layers; the block method's first
 *  recompute_num_layers of each virtual stage), those for which
 *  @pred(layer, @arg) holds (layers numbered from 1). */
int pipeline_count_prefix_layers(const struct model *m, const struct plan *p, int stage, int n,
				 bool (*pred)(int layer, const void *arg), const void *arg);

/** Of those @n recomputed layers of @stage, the ones in bf16 (bf16_first_layers,
 *  bf16_last_layers), the MoE layers among them in @moe. */
int pipeline_prefix_bf16_layers(const struct model *m, const struct plan *p, int stage, int n, int *moe);

/** Whether layer @layer (from 1) runs in bf16 in an fp8 or fp4 plan
 *  with bf16_first_layers / bf16_last_layers. */
bool pipeline_layer_in_bf16(const struct model *m, const struct plan *p, int layer);

/** Of pipeline stage @stage's layers, those that run in bf16 under an
 *  fp8 or fp4 plan (plan bf16_first_layers / bf16_last_layers: Megatron-
 *  Core's --first-last-layers-bf16), the MoE layers among them in @moe. */
int pipeline_stage_bf16_layers(const struct model *m, const struct plan *p, int stage, int *moe);

/** pipeline_stage_bf16_layers of the rank's work: its stage's, or under
 *  DualPipe the mean of its two stages' (as pipeline_rank_layers). */
double pipeline_rank_bf16_layers(const struct model *m, const struct plan *p, int stage, double *moe);

/* plan-cli pipeline: begin (uneven layouts and schedules) */
/** Whether the schedule places a rank's two chunks in a V (ZB-V, DualPipeV). */
bool pipeline_v_shape(const struct plan *p);

/** The pipeline rank holding virtual stage @k (0-based, model order). */
int pipeline_chunk_stage(const struct plan *p, int k);

/** The virtual stage of chunk @j (0-based) of pipeline rank @stage. */
int pipeline_stage_chunk(const struct plan *p, int stage, int j);

/** Whether every virtual stage holds L / (p v) layers (no list, split or first/last stage). */
bool pipeline_even_layout(const struct plan *p);

/**
 * Transformer layers of virtual stage @k: the list, Megatron-Core's split
 * (even; first/last stage set apart; embedding and loss counted as a
 * layer) or torchtitan's generate_split_points, as the plan says.
 */
int pipeline_chunk_layers(const struct plan *p, const struct model *m, int k);

/** 1-based index of the first layer of virtual stage @k. */
int pipeline_chunk_first_layer(const struct plan *p, const struct model *m, int k);

/** Layers of pipeline rank @stage: the sum over its chunks. */
int pipeline_stage_layer_count(const struct plan *p, const struct model *m, int stage);

/**
 * Transformer layers rank @stage runs a micro-batch, on average: its
 * stage's, or under DualPipe the mean of its two stages' (@stage and
 * p - 1 - @stage, half the micro-batches each).
 */
double pipeline_rank_layers(const struct plan *p, const struct model *m, int stage);

/** Of pipeline_rank_layers, the MoE layers (the same mean under DualPipe). */
double pipeline_rank_moe_layers(const struct model *m, const struct plan *p, int stage);

/**
 * plan-cli hybrid: the layers of kind @kind (enum model_layer_kind) of a
 * hybrid model that @stage holds (all its chunks), that its rank runs
 * per micro-batch (DualPipe: the mean of the rank's two stages, as
 * pipeline_rank_layers), and among the first @n layers of the stage's
 * chunks that recompute in full (pipeline_count_prefix_layers).
 */
int pipeline_stage_kind_layers(const struct model *m, const struct plan *p, int stage, int kind);
double pipeline_rank_kind_layers(const struct model *m, const struct plan *p, int stage, int kind);
int pipeline_prefix_kind_layers(const struct model *m, const struct plan *p, int stage, int n, int kind);

/** Transformer layers whose weights rank @stage holds: its stage's, or
 *  under DualPipe both its stages' (the 2x parameters of Table 2). */
int pipeline_rank_held_layers(const struct plan *p, const struct model *m, int stage);

/**
 * DualPipe's sum of the gradients of rank @stage's two stages with the
 * mirror rank p - 1 - @stage, which holds the same two: each GPU swaps its
 * @grad_bytes with its mirror's GPU (0 under other schedules); the bytes
 * each GPU sends in @bytes_out.
 */
double pipeline_mirror_grad_time(const struct plan *p, const struct cluster *c, int stage, double grad_bytes,
				 double *bytes_out);

/**
 * One other stage's share of the bubble under the plan's schedule, from
 * its micro-batch @fb (forward + full backward, F + B), full backward @b
 * and weight-gradient part @w: 1F1B (F + B) / v, ZB-H1 F + B - 2W, ZB-V
 * half that, DualPipe (p/2 - 1)/(p - 1) (F + 2B - 3W), DualPipeV half of
 * F + 2B - 3W; never below the fill before the last rank (ZB-H1), the
 * turn (ZB-V, DualPipeV) or the middle rank (DualPipe) can start: F = @fb
 * - @b, F/2, (p/2 - 1)/(p - 1) F. Summed over the p - 1 other stages.
 */
double pipeline_schedule_bubble(const struct plan *p, double fb, double b, double w);

/** Slots a pipeline runs at the least, in units of its slowest stage's
 *  micro-batch: m + (p-1)/v under 1F1B, m under the others. */
double pipeline_bound_slots(const struct plan *p);

/** The rank holding the output layer and loss: the last, or 0 in a V. */
int pipeline_head_stage(const struct plan *p);

/**
 * The share of each micro-batch's embedding (@head false) or output layer
 * and loss (@head true) that rank @stage runs: 1 on the rank holding the
 * first (last) virtual stage, 0 on the others; under DualPipe, whose end
 * ranks each hold both ends and see half the micro-batches enter and the
 * other half leave, 1/2 on ranks 0 and p - 1.
 */
double pipeline_end_share(const struct plan *p, int stage, bool head);
/* plan-cli pipeline: end */
