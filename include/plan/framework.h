/*
 * A training framework's behaviour, apart from the hardware: how sharded
 * data parallelism gathers and reduces (ZeRO-3, FSDP), which overlaps it
 * achieves, and its fixed costs. Bundled profiles live in frameworks/
 * (megatron-lm, deepspeed, pytorch-fsdp, ...); docs/research/
 * framework-data.md holds the documented behaviour they are read from.
 */
#pragma once

#include <stdbool.h>

/** What one sharded-DP all-gather moves. */
enum framework_gather {
	FRAMEWORK_GATHER_LAYER,  /**< one flat group per transformer block (FSDP, coalesced ZeRO-3) */
	FRAMEWORK_GATHER_TENSOR, /**< each parameter tensor on its own (DeepSpeed ZeRO-3, early 2021) */
};

/** When the backward issues the next block's all-gather. */
enum framework_prefetch {
	FRAMEWORK_PREFETCH_PRE,  /**< before this block's backward (FSDP BACKWARD_PRE, FSDP2, DeepSpeed) */
	FRAMEWORK_PREFETCH_POST, /**< after it (FSDP1 BACKWARD_POST): the gather is exposed */
	FRAMEWORK_PREFETCH_NONE, /**< on demand, forward and backward: every gather is exposed */
};

/** Which fused-attention kernel it runs. */
enum framework_attention {
	FRAMEWORK_ATTN_PROFILE, /**< the GPU profile's own kernel (FA2 on Ampere, FA3 on Hopper, cuDNN's on Blackwell) */
	FRAMEWORK_ATTN_FA2,     /**< FlashAttention-2 on every GPU (flash-attn, PyTorch SDPA's default) */
	FRAMEWORK_ATTN_SDPA,    /**< PyTorch SDPA as torchtitan sets it: FA2, cuDNN's on Blackwell */
	FRAMEWORK_ATTN_FA3,     /**< FlashAttention-3 (Hopper only) */
	FRAMEWORK_ATTN_CUDNN,   /**< cuDNN's fused attention (Transformer Engine's FusedAttention: Megatron-Core, NeMo) */
};

/** How its context parallelism passes keys and values around (plan cp_method ring). */
enum framework_cp_ring {
	FRAMEWORK_RING_P2P,       /**< Megatron-Core/TE: a send/recv per step, hidden behind the block before */
	FRAMEWORK_RING_ALLGATHER, /**< PyTorch's context_parallel as torchtitan runs it: one all-gather of K, V */
};

/** How its routed experts' grouped GEMM runs (unless moe_sequential_mlp). */
enum framework_moe_gemm {
	FRAMEWORK_MOE_GEMM_TE_STREAMS, /**< Transformer Engine's GroupedLinear: a cuBLAS GEMM per expert on 4 streams */
	FRAMEWORK_MOE_GEMM_SINGLE,     /**< one grouped kernel over all local experts (torch._grouped_mm) */
	FRAMEWORK_MOE_GEMM_GMM,        /**< the grouped_gemm package's gmm (Megatron-Core's GroupedMLP,
					    core_v0.5-v0.6): a cuBLAS GEMM per expert over four streams, the
					    weight gradients in bf16, added to main_grad by DDP's hook */
};

/** plan-cli muon: which optimizer steps the matrices. */
enum framework_optimizer {
	FRAMEWORK_OPTIMIZER_ADAM, /**< Adam(W): two fp32 moments beside the fp32 master */
	FRAMEWORK_OPTIMIZER_MUON, /**< Muon (Megatron-Core's dist_muon, TensorParallelMuon under
				       LayerWiseDistributedOptimizer): the hidden layers' matrices keep one
				       fp32 momentum and are orthogonalized by Newton-Schulz; the
				       embeddings, output layer and vectors stay on Adam */
};

/** How its MoE layers move the routed tokens to their experts and back. */
enum framework_moe_dispatcher {
	FRAMEWORK_MOE_DISPATCH_ALLTOALL,      /**< permute, all-to-all over EP, expert-TP all-gather
						   (Megatron-Core's MoEAlltoAllTokenDispatcher) */
	FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK, /**< all-gather of the tokens over TP x EP, masked_select,
						    torch.gather and scatter (Megatron-Core core_v0.5-v0.6's
						    MoEAllGatherTokenDispatcher) */
	FRAMEWORK_MOE_DISPATCH_DEEPEP,        /**< DeepEP's normal kernels over TP x EP: a token once per
						   node over RDMA, forwarded over NVLink, once per rank
						   (Megatron-Core's MoEFlexTokenDispatcher, --moe-enable-deepep) */
	FRAMEWORK_MOE_DISPATCH_HYBRIDEP,      /**< NVIDIA's HybridEP (DeepEP's hybrid-ep branch) over TP x EP:
						   DeepEP's pattern over the NVLink domain, TMA kernels, the
						   permutation inside its dispatch (MoEFlexTokenDispatcher,
						   --moe-flex-dispatcher-backend hybridep) */
};

/** How its element-wise operators run. */
enum framework_elementwise {
	FRAMEWORK_EW_FUSED, /**< one kernel an operator (Transformer Engine, Megatron's fusions, Composer's) */
	FRAMEWORK_EW_EAGER, /**< eager PyTorch modules, RMSNorm and rotary decomposed (torchtitan, Hugging Face) */
	FRAMEWORK_EW_COMPILED, /**< torch.compile's Inductor: fused forward, a norm's dweight a reduction of its own */
};

/** What --recompute selective recomputes. */
enum framework_sac {
	FRAMEWORK_SAC_ATTENTION, /**< the attention core (Korthikanti et al. 2022: Megatron, DeepSpeed) */
	FRAMEWORK_SAC_OP,        /**< torchtitan's per-op policy: every second matmul and the element-wise ops */
	FRAMEWORK_SAC_CORE_ATTN, /**< the attention core whatever its kernel, a fused one's forward rerun too
				      (Megatron-Core's checkpoint_core_attention, core_v0.6.0 on) */
};

/** How ZeRO-1/2 reduces the gradients (its sharded optimizer's input). */
enum framework_zero_reduce {
	FRAMEWORK_ZR_REDUCE_SCATTER, /**< each rank gets its shard (Megatron's distributed optimizer, DeepSpeed) */
	FRAMEWORK_ZR_ALL_REDUCE,     /**< every rank gets all of them, over every DP rank (InternEvo's
					  HybridZeroOptimizer: reduce_tensor with no destination) */
};

/** How ZeRO-1/2 brings the updated 16-bit weights back to every rank. */
enum framework_zero_sync {
	FRAMEWORK_ZS_ALLGATHER, /**< one all-gather (in buckets) over the shard group */
	FRAMEWORK_ZS_BROADCAST, /**< one broadcast per owning rank of the shard group, one after another
				     (InternEvo's broadcast_params): shards are whole tensors, so at most
				     one per parameter tensor */
};

/** Which CUDA graphs it captures (host launch time: plan/host_time.h). */
enum framework_graphs {
	FRAMEWORK_GRAPHS_NONE,  /**< every kernel launched from the host (eager PyTorch, Megatron's default) */
	FRAMEWORK_GRAPHS_LAYER, /**< each layer's forward and backward one graph (Megatron-Core
				     --enable-cuda-graph / --cuda-graph-impl transformer_engine) */
	FRAMEWORK_GRAPHS_FULL,  /**< the whole step one graph (--cuda-graph-impl full_iteration) */
};

/* plan-cli hopper: begin */
/** How each micro-batch's weight gradients reach the fp32 main_grad. */
enum framework_main_grad {
	FRAMEWORK_MG_NONE,    /**< no fp32 main_grad beside the weights, or not modelled (FSDP, DeepSpeed) */
	FRAMEWORK_MG_FUSED,   /**< the wgrad GEMM accumulates into it, beta = 1 (Megatron's
				   --gradient-accumulation-fusion, TE's fuse_wgrad_accumulation) */
	FRAMEWORK_MG_UNFUSED, /**< a 16-bit gradient, then main_grad.add_ (Megatron's DDP hook, 2021) */
};
/* plan-cli hopper: end */

/* plan-cli optsearch: begin (the pipeline schedules a framework runs) */
/**
 * The pipeline schedules a framework implements, which optimize searches
 * without a --pp-schedule constraint (enum plan_pp_schedule; 1F1B, and
 * interleaved 1F1B with vpp > 1, in every set).
 */
enum framework_schedules {
	FRAMEWORK_SCHED_1F1B,       /**< 1F1B and interleaved 1F1B alone: Megatron-Core
					 (pipeline_parallel/schedules.py, get_forward_backward_func,
					 core_r0.12), DeepSpeed (runtime/pipe/schedule.py, TrainSchedule) */
	FRAMEWORK_SCHED_TORCHTITAN, /**< and ZB-V and DualPipeV: PyTorch's pipelining
					 (torch/distributed/pipelining/schedules.py, ScheduleZBVZeroBubble,
					 ScheduleDualPipeV, PyTorch 2.8) as torchtitan's
					 pipeline_parallel_schedule names them */
	FRAMEWORK_SCHED_ZB,         /**< and ZB-H1 and ZB-V: the zero-bubble Megatron fork
					 (sail-sg/zero-bubble-pipeline-parallelism, Qi et al. ICLR 2024) */
	FRAMEWORK_SCHED_ALL,        /**< every schedule plan-cli models */
	FRAMEWORK_SCHED_COUNT,
};

extern const char *const framework_schedules_names[];

struct framework;

/** Whether framework @fw (NULL: the built-in one) runs pipeline schedule @sched (enum plan_pp_schedule). */
bool framework_runs_schedule(const struct framework *fw, int sched);
/* plan-cli optsearch: end */

extern const char *const framework_graphs_names[];
extern const char *const framework_gather_names[];
extern const char *const framework_sac_names[];
extern const char *const framework_elementwise_names[];
extern const char *const framework_attention_names[];
extern const char *const framework_prefetch_names[];
extern const char *const framework_cp_ring_names[];
extern const char *const framework_moe_gemm_names[];
extern const char *const framework_moe_dispatcher_names[];
extern const char *const framework_optimizer_names[];
extern const char *const framework_zero_reduce_names[];
extern const char *const framework_zero_sync_names[];
extern const char *const framework_main_grad_names[]; /* plan-cli hopper */

/* plan-cli h100: begin */
/**
 * The loss's HBM traffic per logit (one token's share of one vocabulary
 * column on a GPU) when a framework profile does not say: a fused
 * cross-entropy that reads and writes fp32 logits about three times in
 * the forward (12 bytes) and twice in the backward (8), as
 * compute_ends_time() has always counted it.
 */
#define FRAMEWORK_LOSS_FWD_BYTES 12.0
#define FRAMEWORK_LOSS_BWD_BYTES 8.0
/* plan-cli h100: end */

struct framework {
	char name[64];
	char description[256];
	int gather_unit;          /**< enum framework_gather */
	int prefetch;             /**< enum framework_prefetch */
	bool backward_regather;   /**< parameters freed after forward are gathered again for backward */
	bool recompute_regather;  /**< a recomputed forward gathers them once more */
	bool grad_reduce_overlap; /**< ZeRO 0-2: the gradient reduction overlaps the last backward */
	double gather_bytes;      /**< bytes per parameter element all-gathered (bf16: 2) */
	double reduce_bytes;      /**< bytes per gradient element reduced (fp32 reduce-scatter: 4) */
	double optimizer_bytes;   /**< optimizer state bytes per parameter, before ZeRO's sharding
				       (Adam's fp32 moments and master: 12) */
	double overlap_slowdown;  /**< compute runs this much slower while a collective overlaps it */
	double gather_overhead_s; /**< fixed cost of each sharded-DP gather (hooks, host syncs) */
	double gather_rank_overhead_s; /**< host cost of each gather per rank of its group (per-rank loops) */
	double gather_copy_passes; /**< HBM passes over each gathered tensor by copies around the gather */
	double reduce_copy_passes; /**< HBM passes over each reduce-scattered gradient by copies around it */
	int zero3_grad_copies;    /**< ZeRO-3 with gather_unit tensor: unsharded gradients of a layer's
				       largest tensor held beside its gathered weight in the backward */
	double persist_gather_copy_s; /**< ZeRO-3: host cost of each per-rank copy by which the step's
					   gather of the persistent tensors rebuilds them (0: not priced) */
	double persistence_threshold; /**< per-tensor gathers: tensors of fewer elements stay whole */
	double layer_overhead_s;  /**< fixed cost per layer per micro-batch (hooks, launch gaps) */
	double microbatch_overhead_s; /**< fixed cost per micro-batch (schedule step, loss, syncs) */
	double iteration_overhead_s; /**< fixed cost per iteration (data loading, logging, step launch) */
	int attention_kernel;     /**< enum framework_attention */
	int elementwise;          /**< enum framework_elementwise */
	int selective_recompute;  /**< enum framework_sac */
	double attention_speed;   /**< its fused-attention kernel's throughput, as a fraction of the
				       attention_kernel's; 1: that kernel */
	/* Host time (plan/host_time.h); 0 launch time: not modelled. */
	double host_launch_s;     /**< host time to issue one kernel (Python, dispatcher, cudaLaunchKernel) */
	int cuda_graphs;          /**< enum framework_graphs */
	double optimizer_passes;  /**< multi-tensor kernel passes of one optimizer step (clip, Adam, copies) */
	double host_syncs;        /**< host synchronisations per iteration (grad-norm .item(), loss) */
	int fp8_recipe;           /**< enum plan_fp8_recipe minus 1 (delayed first): its default fp8 recipe */
	int fp8_amax_history;     /**< delayed scaling's amax history length (Transformer Engine: 1024) */
	int cp_ring;              /**< enum framework_cp_ring */
	bool fp8_params;          /**< fp8 linear weights kept only in fp8 (no 16-bit copy): fp8 primary weights */
	bool fsdp_double_buffer;  /**< ZeRO-3: two unit-sized gradient buffers kept for good beside the two
				       gather buffers (Megatron-FSDP's fsdp_double_buffer) */
	bool master_weights_only; /**< ZeRO-3: the optimizer's fp32 shard is the weights' only persistent copy,
				       cast to 16 bits at each gather (FSDP2's MixedPrecisionPolicy, FSDP1's
				       FlatParameter): no sharded 16-bit copy, and the sharded gradient
				       kept in fp32, the parameter's dtype */
	bool sp_regather;         /**< plan-cli review6: sequence parallelism gathers a column-parallel linear's
				       input again in the backward for its weight gradient (Megatron-Core,
				       Transformer Engine); false: autograd keeps the gathered input (DTensor) */
	bool moe_tp_in_dispatcher; /**< plan-cli a2apair: with sequence parallelism the all-to-all dispatcher
				       takes the MoE layer's s/t token shard and gathers and reduce-scatters
				       over expert TP itself, so the layer has no SP pair of its own
				       (Megatron-Core); false: the layer's input is all-gathered and its
				       output reduce-scattered over TP around it (torchtitan) */
	bool fp8_weight_recast;   /**< fp8 linear weights cast from 16 bits at each use, no fp8 copy kept
				       (torchao's Float8Linear) */
	bool fp8_save_original_input; /**< with an fp8 recipe other than delayed scaling (or fp4), the attention's
					   projection and the shared experts' fc1 save their 16-bit input, which another
					   module keeps, not a quantised copy (Megatron-Core set_save_original_input,
					   Transformer Engine 2.6 on) */
	bool moe_sequential_mlp;  /**< routed experts as Megatron-Core's SequentialMLP (a GEMM per expert), not a grouped GEMM */
	bool moe_sequential_slices; /**< SequentialMLP's loop slices and copies into a zeros_like output
				       (Megatron-Core core_v0.5-r0.8), its autograd copies counted */
	bool moe_weighted_activation; /**< MoE: the router's probabilities scale the experts' activation, so the
					   un-permutation keeps no copy of the routed outputs (Megatron-Core
					   core_v0.13.0 on) */
	int moe_grouped_gemm;     /**< enum framework_moe_gemm: how the grouped expert GEMM runs */
	int moe_dispatcher;       /**< enum framework_moe_dispatcher: how the routed tokens move */
	int moe_dispatcher_sms;    /**< SMs the deepep/hybridep kernels hold while they run (0: not given) */
	int optimizer;            /**< plan-cli muon: enum framework_optimizer */
	int pipeline_split;       /**< plan-cli pipeline: enum plan_pp_split where the even split fails */
	int zero_grad_reduce;     /**< enum framework_zero_reduce */
	int zero_param_sync;      /**< enum framework_zero_sync */
	double grad_bucket;       /**< gradient elements per reduction bucket, ZeRO 0-3 (0: the last layer's
				       gradients are the exposed tail) */
	int grad_bucket_buffers;    /**< ZeRO 1-3: grad_bucket-sized gradient buffers in reduce_bytes kept
					 through the backward (DeepSpeed's contiguous_gradients IPG buffers) */
	int pipeline_schedules;   /**< plan-cli optsearch: enum framework_schedules, what optimize searches */
	/* plan-cli ubuf: Transformer Engine's Userbuffers under TP overlap
	 * (initialize_ub): its all-gather communicators (an fp8 buffer in an
	 * fp8 plan) and its reduce-scatter ones (16-bit), one buffer of
	 * seq_len x micro_batch / cp x hidden elements each; 0: none. Counts,
	 * so whole numbers (SCHEMA_INT). */
	int userbuffers_allgather;
	int userbuffers_reduce_scatter;
	/* plan-cli ubrs: how many of the reduce-scatters run by ring exchange
	 * (a CommOverlapP2P communicator: (2 tp - 1) / tp of the buffer, TE
	 * v1.6+); at most userbuffers_reduce_scatter, default 0 (TE's default
	 * config pipelines proj_fprop and fc2_fprop). */
	int userbuffers_reduce_scatter_ring_exchange;
	/* plan-cli h100: begin */
	double loss_fwd_bytes;    /**< HBM bytes the loss moves per logit in the forward (cross-entropy) */
	double loss_bwd_bytes;    /**< HBM bytes the loss moves per logit in the backward */
	/* plan-cli h100: end */
	double loss_logit_memory; /**< plan-cli reviewmem: bytes per logit the loss's stage keeps at the loss's peak */
	double loss_kept_memory;  /**< plan-cli mtphead: bytes per logit a loss head keeps from its forward's end to its backward */
	double metric_logit_bytes; /**< plan-cli itercost: HBM bytes per logit of the training metrics each micro-batch */
	int main_grad;            /**< plan-cli hopper: enum framework_main_grad */
	/* plan-cli dsz3host: the ZeRO-3 optimizer step's own passes */
	double zero3_step_bytes;  /**< HBM bytes per owned parameter the ZeRO-3 step moves beyond
				       compute_optimizer_time()'s 36 (overflow check, fp64 norm, casts) */
	int zero3_tensor_launches;    /**< launches per parameter tensor in the ZeRO-3 step, outside
					   multi-tensor kernels (DeepSpeed's per-tensor gradient norm) */
	/* plan-cli simumoe: the DP gradient path's passes before the reduction (ZeRO 0-1) */
	double grad_check_bytes;  /**< HBM bytes per gradient-buffer element of the pre-reduction
				       check (Megatron-Core's NaN check: a norm, 4) */
	double grad_scale_bytes;  /**< HBM bytes per gradient-buffer element of the pre-reduction
				       scaling by 1/(dp cp), when dp cp > 1 (Megatron-Core: 8) */
	double grad_check_syncs;  /**< plan-cli review6: host synchronisations per gradient bucket of the
				       pre-reduction check (Megatron-Core core_v0.6.0's assert on the
				       bucket norm: 1) */
	double step_bytes;        /**< plan-cli simumoe: HBM bytes per owned parameter the ZeRO 0-2
				       step moves beyond compute_optimizer_time()'s 36 (Megatron: 6) */
	int moe_param_gathers;    /**< plan-cli simumoe: ZeRO-1/2 all-gathers of all the updated
				       weights per iteration when the model has experts (1; Megatron-Core
				       from core_v0.9.0: 2, one per chained optimizer) */
	/* plan-cli hostsync: the training script's work per micro-batch */
	double microbatch_syncs;  /**< host synchronisations per micro-batch on every pipeline stage
				       (SC21 Megatron: its timers and broadcast_data, 9) */
	double loss_syncs;        /**< host synchronisations per micro-batch on the stage holding the loss
				       (Megatron-LM's loss NaN check: core_v0.6.0 1, core_r0.13.0 on 2) */
	double p2p_syncs;         /**< host synchronisations per pipeline exchange under plain 1F1B
				       (torch.cuda.synchronize() after batch_isend_irecv: Megatron 1;
				       SC21's, inside a timer's start and stop, 3) */
	double loss_allreduces;   /**< all-reduces of the micro-batch's loss over DP, on the loss stage
				       (average_losses_across_data_parallel_group: 1) */
	bool syncs_per_chunk;     /**< plan-cli mlm2021: under the interleaved schedule microbatch_syncs and
				       p2p_syncs recur for every model chunk, on every stage (SC21 Megatron:
				       forward_step_func and a synchronised exchange per chunk step) */
	bool pp_p2p_overlap;      /**< plan-cli reviewpipe: under the interleaved schedule each chunk's
				       pipeline exchange runs asynchronously behind the next chunk's
				       compute (Megatron-Core overlap_p2p_comm); exposed only beyond it */
	bool dataloader_mask;     /**< the data loader builds the b x s x s boolean attention mask: copied
				       to the GPU each micro-batch on the first and the loss stage and
				       broadcast over TP (Megatron-LM core_v0.5.0 on, by default) */
};

/**
 * The built-in framework, used when none is given: Megatron-LM's
 * behaviour (no per-layer costs, bf16 gathers and reductions, FSDP-like
 * ZeRO-3 with one-block prefetch, no compute slowdown, no host time).
 */
void framework_init_default(struct framework *fw);
