/* The prediction for one plan: time, its breakdown, memory, throughput. */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/collective.h"
#include "plan/compressor.h"
#include "plan/error.h"
#include "plan/framework.h"
#include "plan/memory.h"
#include "plan/model.h"
#include "plan/plan.h"

/*
 * The terms of the iteration time, one row each, in the order of the
 * struct and of the JSON object breakdown_s. Every surface that lists
 * them all reads this list: the struct below; estimate_breakdown_sum and
 * estimate_breakdown_finite, and so the core's total and its finite
 * check; field_table's breakdown_s rows, and so the JSON keys, the CSV
 * values and the help; the text breakdown's rows; optimize --explain; the
 * property test. A new term is one new row here and one new column at
 * the end of format_csv.c's header, which keeps its own order (test-fields
 * fails until the column is there).
 *
 * X(member, text_row, text_when, help):
 *   member     the member of struct estimate_breakdown; its JSON key is
 *              breakdown_s.member, its CSV column member_s, its text label
 *              member
 *   text_row   its place in the text breakdown, from 0: the order of the
 *              rows there predates this list, and the rows that only some
 *              plans have come last
 *   text_when  when the text shows it: ALWAYS, IF_CP (cp_comm > 0),
 *              IF_MOE (an MoE model or EP time), IF_COMPRESSED (a
 *              compressor applied), IF_LAUNCH (launch > 0) or IF_OFFLOAD
 *              (offload > 0);
 *              format_text.c reads the token
 *   help       what it holds, in one line (field_table's help)
 */
#define ESTIMATE_BREAKDOWN_TERMS(X) \
	X(compute, 0, ALWAYS, "forward and backward of all micro-batches") \
	X(recompute, 1, ALWAYS, "forward work repeated by recomputation") \
	X(tp_comm, 2, ALWAYS, "TP collectives, not overlapped") \
	X(pp_comm, 3, ALWAYS, "stage-boundary sends, not overlapped") \
	X(pp_bubble, 4, ALWAYS, "pipeline fill and drain") \
	X(dp_comm, 5, ALWAYS, "exposed DP and ZeRO traffic") \
	X(optimizer, 6, ALWAYS, "optimizer step") \
	X(compression, 10, IF_COMPRESSED, "encoding and decoding on the critical path") \
	X(ep_comm, 9, IF_MOE, "exposed MoE all-to-alls") \
	X(overhead, 7, ALWAYS, "the framework's fixed costs per layer, micro-batch and iteration") \
	X(cp_comm, 8, IF_CP, "exposed context-parallel exchanges") \
	X(launch, 11, IF_LAUNCH, "the GPU waiting for the host to launch kernels (launch-bound stretches, host synchronisations)") \
	X(moe_fixed, 12, IF_MOE, "MoE layers' router kernels and dropless host synchronisations") \
	X(offload, 13, IF_OFFLOAD, "activation offloading's copies to and from host memory, not overlapped")

#define ESTIMATE_BREAKDOWN_MEMBER_(member, text_row, text_when, help) double member;
#define ESTIMATE_BREAKDOWN_ONE_(member, text_row, text_when, help) +1

/**
 * The longest iteration an estimate may give, in seconds (a year): a
 * longer one is an error naming its largest term, never output.
 */
#define ESTIMATE_MAX_ITERATION_S 3.156e7

/** Terms of the breakdown: the rows of ESTIMATE_BREAKDOWN_TERMS. */
enum { ESTIMATE_BREAKDOWN_COUNT = 0 ESTIMATE_BREAKDOWN_TERMS(ESTIMATE_BREAKDOWN_ONE_) };

/**
 * Where the iteration time goes, in seconds: one member for each row of
 * ESTIMATE_BREAKDOWN_TERMS, which describes them. The parts add up to
 * the iteration time: overlapped communication is counted only for the
 * part that is not hidden behind computation.
 */
struct estimate_breakdown {
	ESTIMATE_BREAKDOWN_TERMS(ESTIMATE_BREAKDOWN_MEMBER_)
};
#undef ESTIMATE_BREAKDOWN_MEMBER_
#undef ESTIMATE_BREAKDOWN_ONE_

/** The name of term @i (0 <= i < ESTIMATE_BREAKDOWN_COUNT): its member, "pp_bubble". */
const char *estimate_breakdown_name(int i);

/** Term @i of @b (0 <= i < ESTIMATE_BREAKDOWN_COUNT), in list order. */
double estimate_breakdown_get(const struct estimate_breakdown *b, int i);

/** Term @i of @b, to be written (0 <= i < ESTIMATE_BREAKDOWN_COUNT). */
double *estimate_breakdown_at(struct estimate_breakdown *b, int i);

/** The iteration time @b adds up to: overhead, then the other terms in list order. */
double estimate_breakdown_sum(const struct estimate_breakdown *b);

/**
 * Whether every term of @b is finite. On false, @bad (may be NULL)
 * receives the name of the first term that is not (estimate_breakdown_name's
 * string, static).
 */
bool estimate_breakdown_finite(const struct estimate_breakdown *b, const char **bad);

/** Bytes each GPU sends per iteration, by parallelism. */
struct estimate_bytes {
	double tp, pp, dp, ep;
};

/** Extra figures that explain the breakdown. */
struct estimate_details {
	int microbatches;
	double bubble_fraction;
	double layer_fwd_s, layer_bwd_s;     /**< one layer, one micro-batch */
	double tp_collective_s;              /**< one TP all-reduce (or AG+RS) */
	double tp_bytes_per_iteration;       /**< TP bytes each GPU sends */
	double pp_p2p_s;                     /**< stage sends of one micro-batch */
	double pp_bytes_per_iteration;
	double dp_total_s;                   /**< all DP/ZeRO traffic before overlap */
	double dp_overlap_window_s;          /**< backward time that can hide it */
	double dp_bytes_per_iteration;
	double slot_s;                       /**< one micro-batch on the bottleneck GPU */
	double compute_gemm_s;               /**< of compute + recompute: GEMMs */
	double compute_attention_s;          /**< of compute + recompute: attention cores */
	double compute_other_s;              /**< of compute + recompute: element-wise kernels, loss */
	double pace_factor;                  /**< GPU time x this: the slowest GPU (gpu_pace_factor) */
	/** Of the iteration, what partial last waves of GEMM tiles add
	 *  (wave_loss_estimate, plan/wave_loss.h); 0 until it runs. */
	double gemm_wave_loss_s;
	bool gemm_wave_loss_known;           /**< wave_loss_estimate ran: the field is written */
	/* attnshape: the fused attention kernel's shape against the GPU
	 * profile's reference (plan/attn_shape.h), where attn_shape_known:
	 * flash attention on a GPU whose profile states that shape. */
	bool attn_shape_known;
	int attn_kernel;                     /**< PLAN_ATTN_*, resolved: the profile's named by generation */
	double attn_head_dim_qk, attn_head_dim_v;          /**< the model's */
	double attn_padded_head_dim_qk, attn_padded_head_dim_v; /**< what the kernel runs */
	double attn_shape_fwd, attn_shape_bwd; /**< time multipliers against the reference shape */
	int compressed_layers;               /**< TP-compressed layers on the bottleneck stage */
	double compression_params;           /**< AE parameters added on the bottleneck stage */
	int dp_compress_scheme;              /**< enum compress_dp_scheme used */
	int moe_layers;                      /**< MoE layers on the bottleneck stage */
	/* Its MoE layers' fixed costs per iteration, by kind (issue 25), where
	 * the breakdown counts them: */
	double moe_router_s;                 /**< the router: its GEMM (compute), its kernels (moe_fixed) */
	double moe_permute_s;                /**< token permutations and their launches (compute) */
	double moe_sync_s;                   /**< dropless host synchronisation, split sizes' all-gather (moe_fixed) */
	double moe_expert_launch_s;          /**< the routed experts' GEMM launches the GPU waits for (launch) */
	double mb_syncs;                     /**< plan-cli hostsync: host synchronisations per micro-batch
						  of the pacing stage (0 without a host model) */
	double mb_sync_s;                    /**< the launches they expose in the iteration (launch) */
	double loss_allreduce_s;             /**< the loss's all-reduces over DP in the iteration (overhead) */
	double batch_copy_s;                 /**< the attention mask's copies and TP broadcasts (overhead) */
	double ep_a2a_s;                     /**< one all-to-all of one MoE layer */
	double ep_inter_s, ep_intra_s;       /**< its inter- and intra-node hops (bi-level) */
	double ep_total_s;                   /**< all-to-all time before overlap */
	double ep_bytes;                     /**< bytes one rank sends in one all-to-all */
	bool ep_inter_node;
	int bottleneck_stage;
	int tail_stage;                      /**< the stage whose DP sync and optimizer end the iteration */
	int memory_stage;                    /**< the stage whose memory is reported */
	bool tp_inter_node, dp_inter_node, pp_inter_node;
};

/**
 * The prediction on variable-length data (predict --seq-lengths; see
 * plan/seqlen.h): filled by seqlen_estimate, all zero (on false) without
 * a distribution. The rest of struct estimate is the plan with every
 * sequence --seq-len tokens long.
 */
struct estimate_batching {
	bool on;
	int mode;                      /**< enum seqlen_batching */
	int pack_attention;            /**< enum seqlen_pack_attention */
	double sequences;              /**< sequences the distribution counts */
	double mean_length;            /**< tokens, after truncation to --seq-len */
	int max_length;                /**< the longest, after truncation */
	double truncated_fraction;     /**< of the sequences, longer than --seq-len */
	double padded_length;          /**< mean padded length of a micro-batch (a packed row's for pack) */
	double microbatches;           /**< per pipeline per iteration */
	double sequences_per_microbatch; /**< mean (documents for pack) */
	double iteration_time_s;
	double useful_tokens;          /**< real tokens per iteration */
	double effective_tokens_per_s; /**< useful_tokens / iteration_time_s */
	double padding_fraction;       /**< of the computed tokens, padding */
	double attention_waste;        /**< attention FLOPs on pads and cross-document pairs / useful ones */
	double max_microbatch_time_s;  /**< t_max: the longest pipeline slot */
	double peak_memory_bytes;      /**< of the largest micro-batch */
};

/** Stages whose peak memory is kept in struct estimate: as many as a plan
 *  may list one by one, so that there is one limit on the stages. */
#define ESTIMATE_MAX_STAGES PLAN_MAX_STAGES

struct estimate {
	double parameters;        /**< all parameters (every expert) */
	double active_parameters; /**< those one token uses (top_k experts) */
	double iteration_time_s;
	struct estimate_breakdown breakdown;
	struct estimate_details details;
	struct memory_use memory;
	double memory_capacity_bytes;
	bool fits;
	double model_flops_per_iteration;
	double hardware_flops_per_iteration;
	double tflops_per_gpu;          /**< model FLOPs (no recompute) / time / GPUs */
	double hardware_tflops_per_gpu; /**< including recomputation */
	double mfu;
	double hfu;
	double tokens_per_s;
	double tokens_per_s_per_gpu;    /**< as the MosaicML and torchtitan tables give it */
	int gpus;
	struct estimate_bytes bytes;             /**< with compression */
	struct estimate_bytes uncompressed_bytes;/**< the same plan without it */
	double uncompressed_iteration_time_s;
	double compression_speedup;              /**< uncompressed / compressed time */
	bool compressed;                         /**< a compressor applied somewhere */
	/** Peak memory of each stage: every stage up to ESTIMATE_MAX_STAGES
	 *  stages, else the first and the last (at the last index). */
	double stage_memory[ESTIMATE_MAX_STAGES];
	/** Each of the first ESTIMATE_MAX_STAGES stages' slot: one
	 *  micro-batch's time there, all its costs counted (the pacing
	 *  stage's is details.slot_s); a stage of no layer (--stage-layers
	 *  0,...) has its embedding or loss and its exchanges alone. */
	double stage_slot_s[ESTIMATE_MAX_STAGES];
	struct estimate_batching batching;       /**< predict --seq-lengths only */
};

/** Options of the estimate that are not part of the plan's shape. */
struct estimate_options {
	enum coll_algo dp_algo;
	const struct compressor *compressor; /**< NULL: no compression */
	const struct framework *framework;   /**< NULL: the built-in framework (framework_init_default) */
};

/**
 * Whether @c's GPU runs @p's precision and recipe (fp8 tensor cores, fp4
 * on Blackwell, mxfp8 on Blackwell, ...) under @fw, with fp8 gathers only
 * of fp8 and sharded weights; false with the reason in @err. estimate_plan()
 * checks it; optimize checks it before it prices a shape.
 */
bool estimate_check_precision(const struct plan *p, const struct cluster *c, const struct framework *fw,
			      struct plan_error *err);

/**
 * Whether @fw's token dispatcher (moe_dispatcher) takes @p's --moe-overlap:
 * Lancet is priced on alltoall only, combined-1f1b is refused on
 * allgather_mask (Megatron-Core); false with the reason in @err.
 * estimate_plan() checks it; optimize checks it once before the search.
 */
bool estimate_check_moe_overlap(const struct plan *p, const struct framework *fw, struct plan_error *err);

/**
 * Predict plan @p of model @m on cluster @c. Validates the plan first;
 * returns false with @err set when it cannot run. Pure arithmetic: no
 * allocation, no I/O.
 */
bool estimate_plan(const struct model *m, const struct cluster *c,
		   const struct plan *p, const struct estimate_options *opt,
		   struct estimate *out, struct plan_error *err);

/**
 * Slapo's checkpoint ratio chosen for plan @p (no --recompute-layers of
 * its own) from its estimate @e: into @out, @p with the fewest layers of
 * each stage of mode none or selective recomputing in full that make
 * the stage fit (0 where it fits already; all of a full stage's).
 * Returns false, @out unchanged in meaning, when every stage fits as it
 * is, when some stage fits only with every layer recomputed (or, over
 * the memory, has no layer: --stage-layers 0,...), or for a
 * plan --recompute-layers cannot apply to (vpp > 1, ZeRO-3).
 */
bool estimate_fewest_recompute_layers(const struct model *m, const struct plan *p, const struct framework *fw,
				      const struct estimate *e, struct plan *out);

/**
 * Parameters held by the GPU of pipeline stage @stage (before ZeRO
 * sharding); @expert (may be NULL) receives those that are local experts.
 */
double estimate_stage_params(const struct model *m, const struct plan *p, int stage, double *expert);

/**
 * The cost of one pipeline stage as linear functions of its layer count,
 * for the planner's MILP: the per-micro-batch time (the stage's slot) and
 * peak memory of a stage holding n layers, all with recompute mode r,
 * TP-compressed (c = 1) or not, its sends PP-compressed (q = 1) or not:
 *   time = time_fixed[q] + n * time_layer[r][c]
 *   mem  = mem_fixed[r][q] + n * mem_layer[r][c]
 * Derived from the cost model itself (two layer counts per case), so a
 * MILP built on them is exactly as the cost model (dense models, or MoE
 * with every layer MoE).
 */
struct estimate_stage_coefs {
	double time_fixed[2];
	double time_layer[3][2];
	double mem_fixed[3][2];
	double mem_layer[3][2];
};

/**
 * Coefficients of every stage of @shape (tp, pp, dp, micro-batch and the
 * other options; its layout and recompute are ignored). @out has pp
 * entries. Compression is probed where @shape->compress enables it.
 */
bool estimate_stage_coefs(const struct model *m, const struct cluster *c, const struct plan *shape,
			  const struct estimate_options *opt, struct estimate_stage_coefs *out,
			  struct plan_error *err);
