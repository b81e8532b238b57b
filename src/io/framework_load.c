#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/profile_load.h"
#include "io/profile_path.h"
#include "plan/plan.h"

#define OFF(f) offsetof(struct framework, f)

/* A framework profile (frameworks/NAME.yaml). Defaults are the built-in
 * framework's (framework_init_default). */
const struct schema_key framework_schema[] = {
	{ .key = "name", .type = SCHEMA_STRING, .required = true, .offset = OFF(name), .size = 64,
	  .help = "profile name" },
	{ .key = "description", .type = SCHEMA_STRING, .offset = OFF(description), .size = 256,
	  .help = "free text: the framework, its version, and where its behaviour is documented" },
	{ .key = "gather_unit", .type = SCHEMA_ENUM, .offset = OFF(gather_unit), .def = "layer",
	  .choices = framework_gather_names,
	  .help = "ZeRO-3/FSDP: one all-gather per layer (FSDP's flat parameter per block) or per "
		  "parameter tensor (DeepSpeed ZeRO-3 of early 2021)" },
	{ .key = "prefetch", .type = SCHEMA_ENUM, .offset = OFF(prefetch), .def = "pre",
	  .choices = framework_prefetch_names,
	  .help = "ZeRO-3/FSDP: the next layer's gather is issued before this layer's backward (pre: "
		  "BACKWARD_PRE, FSDP2, DeepSpeed), after it (post: FSDP1 BACKWARD_POST) or on demand (none)" },
	{ .key = "backward_regather", .type = SCHEMA_BOOL, .offset = OFF(backward_regather), .def = "true",
	  .help = "ZeRO-3/FSDP: parameters freed after the forward are gathered again for the backward "
		  "(FULL_SHARD, reshard_after_forward)" },
	{ .key = "recompute_regather", .type = SCHEMA_BOOL, .offset = OFF(recompute_regather), .def = "false",
	  .help = "ZeRO-3/FSDP: a recomputed forward gathers the parameters once more" },
	{ .key = "grad_reduce_overlap", .type = SCHEMA_BOOL, .offset = OFF(grad_reduce_overlap), .def = "true",
	  .help = "ZeRO 0-2: the gradient all-reduce (or reduce-scatter) overlaps the backward of the last "
		  "micro-batch (PyTorch DDP; Megatron with --overlap-grad-reduce)" },
	{ .key = "zero_grad_reduce", .type = SCHEMA_ENUM, .offset = OFF(zero_grad_reduce), .def = "reduce_scatter",
	  .choices = framework_zero_reduce_names,
	  .help = "ZeRO-1/2: the gradients are reduce-scattered to their shard's owner (reduce_scatter: "
		  "Megatron's distributed optimizer, DeepSpeed), or all-reduced over every DP rank before each "
		  "rank keeps its shard (all_reduce: InternEvo's HybridZeroOptimizer)" },
	{ .key = "zero_param_sync", .type = SCHEMA_ENUM, .offset = OFF(zero_param_sync), .def = "allgather",
	  .choices = framework_zero_sync_names,
	  .help = "ZeRO-1/2: the updated weights come back by one all-gather over the shard group (allgather), "
		  "or by one broadcast per owning rank, one after another, each of whole tensors (broadcast: "
		  "InternEvo's broadcast_params)" },
	{ .key = "grad_bucket", .type = SCHEMA_NUMBER, .offset = OFF(grad_bucket), .min = 0, .max = 1e12,
	  .def = "0",
	  .help = "ZeRO 0-2 with grad_reduce_overlap, and ZeRO-3: gradient elements per reduction bucket; "
		  "the last one is reduced after the backward (InternEvo's reduce_bucket_size, 512 Mi "
		  "elements; DeepSpeed's, 5e8); 0: the last layer's gradients" },
	{ .key = "gather_bytes", .type = SCHEMA_NUMBER, .offset = OFF(gather_bytes), .min = 0,
	  .min_exclusive = true, .max = 8, .def = "2",
	  .help = "bytes per parameter all-gathered (bf16: 2)" },
	{ .key = "reduce_bytes", .type = SCHEMA_NUMBER, .offset = OFF(reduce_bytes), .min = 0,
	  .min_exclusive = true, .max = 8, .def = "2",
	  .help = "bytes per gradient element reduced (bf16: 2; fp32 reduction: 4)" },
	{ .key = "optimizer_bytes", .type = SCHEMA_NUMBER, .offset = OFF(optimizer_bytes), .min = 0,
	  .max = 32, .def = "12",
	  .help = "optimizer state bytes per parameter before ZeRO shards it (Adam's fp32 moments and "
		  "master: 12; NeMo's distributed_fused_adam with bf16 remainders of the master: 10)" },
	{ .key = "overlap_slowdown", .type = SCHEMA_NUMBER, .offset = OFF(overlap_slowdown), .min = 1,
	  .max = 4, .def = "1",
	  .help = "compute that overlaps a DP/ZeRO collective runs this many times slower "
		  "(NCCL kernels take SMs and memory bandwidth)" },
	{ .key = "gather_overhead", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME, .offset = OFF(gather_overhead_s),
	  .min = 0, .max = 1, .def = "0 s",
	  .help = "ZeRO-3/FSDP: fixed cost of each gather (hooks, host synchronisation)" },
	{ .key = "gather_overhead_per_rank", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = OFF(gather_rank_overhead_s), .min = 0, .max = 1e-3, .def = "0 s",
	  .help = "ZeRO-3: host cost of each gather per rank of the group, added to the gather's time (DeepSpeed "
		  "2021 built a list of one view per rank and PyTorch's list all_gather copied each rank's chunk out)" },
	{ .key = "gather_copy_passes", .type = SCHEMA_NUMBER, .offset = OFF(gather_copy_passes), .min = 0,
	  .max = 8, .def = "0",
	  .help = "ZeRO-3: passes over each gathered tensor in GPU memory by copies around the gather, at the "
		  "GPU's achieved memory bandwidth (DeepSpeed 2021: 3, a zero fill and a copy out)" },
	{ .key = "reduce_copy_passes", .type = SCHEMA_NUMBER, .offset = OFF(reduce_copy_passes), .min = 0,
	  .max = 8, .def = "0",
	  .help = "ZeRO-3: passes over each reduce-scattered gradient in GPU memory by copies around the "
		  "reduction, at the GPU's achieved memory bandwidth (DeepSpeed 2021: 4, the division by the "
		  "group size and the list reduce_scatter's copy into a flat buffer)" },
	{ .key = "zero3_grad_copies", .type = SCHEMA_INT, .offset = OFF(zero3_grad_copies), .min = 0,
	  .max = 8, .def = "0",
	  .help = "ZeRO-3 with gather_unit tensor: unsharded gradients of a layer's largest tensor held in GPU "
		  "memory beside its gathered weight during the backward (DeepSpeed 2021: 3, its own, the "
		  "previous tensor's awaiting partition and the list reduce_scatter's flat input)" },
	{ .key = "grad_bucket_buffers", .type = SCHEMA_INT, .offset = OFF(grad_bucket_buffers), .min = 0,
	  .max = 4, .def = "0",
	  .help = "ZeRO 1-3: buffers of grad_bucket elements in reduce_bytes that hold the gradients on their "
		  "way to the reduction, kept on the GPU through the backward (DeepSpeed's contiguous_gradients "
		  "IPG buffers, reduce_bucket_size each: 1 from v0.10, 2 with overlap_comm in v0.5-v0.9's "
		  "ZeRO-3); 0: the gradients are reduced from where autograd leaves them" },
	{ .key = "userbuffers_allgather", .type = SCHEMA_INT, .offset = OFF(userbuffers_allgather), .min = 0,
	  .max = 32, .def = "0",
	  .help = "TP overlap: Transformer Engine's Userbuffers all-gather communicators, one buffer of "
		  "seq_len x micro_batch / cp x hidden elements each, 1 byte an element in an fp8 plan and 2 "
		  "otherwise (TE initialize_ub: 8 from v2.7, 6 in v1.x to v2.6); 0: no Userbuffers" },
	{ .key = "userbuffers_reduce_scatter", .type = SCHEMA_INT, .offset = OFF(userbuffers_reduce_scatter),
	  .min = 0, .max = 32, .def = "0",
	  .help = "TP overlap: Transformer Engine's Userbuffers reduce-scatter communicators, one 16-bit buffer "
		  "of seq_len x micro_batch / cp x hidden elements each (TE initialize_ub: 4); 0: none" },
	{ .key = "userbuffers_reduce_scatter_ring_exchange", .type = SCHEMA_INT,
	  .offset = OFF(userbuffers_reduce_scatter_ring_exchange), .min = 0, .max = 32, .def = "0",
	  .help = "TP overlap: how many of the userbuffers_reduce_scatter communicators run by ring exchange "
		  "(a tp_comm_overlap_cfg giving proj_fprop or fc2_fprop method ring_exchange, as Megatron-Bridge's "
		  "fp8 presets do), whose buffer holds 2 tp - 1 chunks of a tp-th: (2 tp - 1) / tp of the others "
		  "(TE v1.6+ CommOverlapP2PBase); at most userbuffers_reduce_scatter; 0: all pipelined or bulk" },
	{ .key = "persist_gather_copy", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = OFF(persist_gather_copy_s), .min = 0, .max = 1e-3, .def = "0 s",
	  .help = "ZeRO-3: host cost of each copy by which the optimizer step's gather of the persistent "
		  "tensors (under persistence_threshold) rebuilds each tensor from each rank's chunk "
		  "(DeepSpeed 2021's _allgather_params: a Python loop of views and a copy_ a rank a tensor); "
		  "0: the gather is not priced" },
	{ .key = "persistence_threshold", .type = SCHEMA_NUMBER, .offset = OFF(persistence_threshold),
	  .min = 0, .max = 1e12, .def = "0",
	  .help = "gather_unit tensor: tensors of fewer elements are never partitioned, so never gathered "
		  "(DeepSpeed's stage3_param_persistence_threshold, 1e5)" },
	{ .key = "layer_overhead", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME, .offset = OFF(layer_overhead_s),
	  .min = 0, .max = 1, .def = "0 s",
	  .help = "fixed cost per layer per micro-batch, forward and backward (hooks, launch gaps)" },
	{ .key = "microbatch_overhead", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = OFF(microbatch_overhead_s), .min = 0, .max = 60, .def = "0 s",
	  .help = "fixed cost per micro-batch on every stage (the schedule's step, the loss, host syncs)" },
	{ .key = "iteration_overhead", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = OFF(iteration_overhead_s), .min = 0, .max = 3600, .def = "0 s",
	  .help = "fixed cost per iteration (data loading, logging, the step's launches)" },
	{ .key = "elementwise", .type = SCHEMA_ENUM, .offset = OFF(elementwise), .def = "fused",
	  .choices = framework_elementwise_names,
	  .help = "how the norms, residual adds, activation and rotary run: one fused kernel each (fused: "
		  "Transformer Engine, Megatron's fusions) or as eager PyTorch modules, RMSNorm in 7 kernels "
		  "and rotary in fp32 (eager: torchtitan without torch.compile, Hugging Face models)" },
	{ .key = "selective_recompute", .type = SCHEMA_ENUM, .offset = OFF(selective_recompute),
	  .def = "attention", .choices = framework_sac_names,
	  .help = "what --recompute selective recomputes: the attention core, which a fused kernel "
		  "recomputes in its own backward anyway (attention: Korthikanti et al. 2022, Megatron-LM's "
		  "legacy model), the attention core whatever its kernel, a fused one's forward run again "
		  "(core_attn: Megatron-Core's checkpoint_core_attention, core_v0.6.0 on) or torchtitan's "
		  "per-op policy, every second matmul of a block and its element-wise operators (op: "
		  "selective_ac_option 'op')" },
	{ .key = "attention_kernel", .type = SCHEMA_ENUM, .offset = OFF(attention_kernel), .def = "profile",
	  .choices = framework_attention_names,
	  .help = "with flash attention, the kernel it runs: the GPU profile's own (profile: Megatron-Core with "
		  "Transformer Engine), FlashAttention-2 everywhere (fa2: the flash-attn package, PyTorch SDPA's "
		  "default), PyTorch SDPA as torchtitan sets it (sdpa: FA2, cuDNN's kernel on Blackwell), "
		  "FlashAttention-3 (fa3: Hopper only) or cuDNN's fused attention (cudnn); FA2 runs at the "
		  "GPU profile's fa2_attention_speed" },
	/* plan-cli pipeline */
	{ .key = "pipeline_split", .type = SCHEMA_ENUM, .offset = OFF(pipeline_split), .def = "even",
	  .choices = plan_pp_split_names,
	  .help = "how the layers go over pp x vpp stages when they do not divide evenly and the plan gives "
		  "no rule: even (refused, as Megatron-Core's default asserts), embedding, loss or "
		  "embedding-loss (Megatron-Core's account_for_*_in_pipeline_split) or torchtitan "
		  "(generate_split_points)" },
	/* plan-cli optsearch */
	{ .key = "pipeline_schedules", .type = SCHEMA_ENUM, .offset = OFF(pipeline_schedules), .def = "1f1b",
	  .choices = framework_schedules_names,
	  .help = "the pipeline schedules it implements, which optimize searches without --pp-schedule: 1f1b "
		  "(with interleaved 1F1B: Megatron-Core, DeepSpeed), 1f1b,zb-v,dualpipev (PyTorch's pipelining "
		  "as torchtitan runs it), 1f1b,zb-h1,zb-v (the zero-bubble Megatron fork) or all" },
	{ .key = "attention_speed", .type = SCHEMA_NUMBER, .offset = OFF(attention_speed), .min = 0.05,
	  .max = 1, .def = "1",
	  .help = "with flash attention: the framework's fused-attention kernel runs at this fraction of "
		  "attention_kernel's throughput (1: that kernel; llm-foundry's Triton kernel: 0.55 of FA2)" },
	{ .key = "host_launch_overhead", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME, .offset = OFF(host_launch_s),
	  .min = 0, .max = 1e-3, .def = "0 s",
	  .help = "host time to issue one kernel (Python, PyTorch's dispatcher, cudaLaunchKernel): a stretch of "
		  "kernels takes the larger of its GPU time and its launches; 0: host time not modelled" },
	{ .key = "cuda_graphs", .type = SCHEMA_ENUM, .offset = OFF(cuda_graphs), .def = "none",
	  .choices = framework_graphs_names,
	  .help = "CUDA graphs: none, each layer's forward and backward one graph launch (layer: Megatron-Core "
		  "--enable-cuda-graph) or the whole step one launch (full)" },
	{ .key = "optimizer_passes", .type = SCHEMA_NUMBER, .offset = OFF(optimizer_passes), .min = 0,
	  .max = 64, .def = "0",
	  .help = "multi-tensor kernel passes over the parameters in one optimizer step (gradient norm, "
		  "clipping, Adam, copies: Megatron-Core's fused Adam 4, torch.optim foreach AdamW 12)" },
	{ .key = "host_syncs", .type = SCHEMA_NUMBER, .offset = OFF(host_syncs), .min = 0, .max = 1000,
	  .def = "0",
	  .help = "host synchronisations per iteration (Megatron's gradient norm .item()): each drains the "
		  "GPU's queue, so the next launch is exposed" },
	{ .key = "fp8_recipe", .type = SCHEMA_ENUM, .offset = OFF(fp8_recipe), .def = "delayed",
	  .choices = plan_fp8_recipe_names + 1,
	  .help = "with precision fp8, how the linear layers scale their fp8 tensors unless --fp8-recipe "
		  "says: per tensor with delayed scaling (delayed: Transformer Engine's DelayedScaling, "
		  "Megatron-Core's default) or current scaling (current: torchao's tensorwise, TE's "
		  "Float8CurrentScaling), a scale per row (rowwise: torchao), DeepSeek-V3's 1x128/128x128 "
		  "blocks (blockwise) or 32-element MX blocks (mxfp8: Blackwell)" },
	{ .key = "fp8_amax_history", .type = SCHEMA_INT, .offset = OFF(fp8_amax_history), .min = 1,
	  .max = 1e6, .def = "1024",
	  .help = "delayed scaling: entries of amax history kept per fp8 tensor (Transformer Engine's "
		  "amax_history_len, 1024 by default; Megatron's --fp8-amax-history-len, 1 by default)" },
	{ .key = "fp8_params", .type = SCHEMA_BOOL, .offset = OFF(fp8_params), .def = "false",
	  .help = "with precision fp8, the linear weights live only in fp8 with their cached transpose, the "
		  "fp32 master in the optimizer (Transformer Engine's fp8_model_init: NeMo's fp8_params, "
		  "Megatron-LM's --fp8-param-gather); with fp4, only as their NVFP4 copies (Megatron's "
		  "--fp4-param-gather); with ZeRO 1-2 the parameter all-gather moves those weights in 1 byte (fp4: 0.5); "
		  "false: a 16-bit weight and its fp8 or fp4 copies" },
	{ .key = "fsdp_double_buffer", .type = SCHEMA_BOOL, .offset = OFF(fsdp_double_buffer), .def = "false",
	  .help = "ZeRO-3: besides the two gathered parameter units (the one in use and the prefetched one), "
		  "two unit-sized gradient buffers in reduce_bytes live for good, the reduce-scatter's "
		  "double buffer (Megatron-FSDP's --fsdp-double-buffer, which --use-nccl-ub forces); "
		  "false: the gradients land in freed temporary memory" },
	{ .key = "master_weights_only", .type = SCHEMA_BOOL, .offset = OFF(master_weights_only), .def = "false",
	  .help = "ZeRO-3: the optimizer's fp32 shard is the weights' only persistent copy, cast to 16 bits "
		  "for each gather (PyTorch FSDP2's MixedPrecisionPolicy: the optimizer step uses the sharded "
		  "parameter in the original dtype); false: a sharded 16-bit copy beside it (DeepSpeed)" },
	{ .key = "sp_regather", .type = SCHEMA_BOOL, .offset = OFF(sp_regather), .def = "true",
	  .help = "with --sequence-parallel, a column-parallel linear keeps only its input's s/t shard and "
		  "all-gathers it again in the backward for its weight gradient (Megatron-Core's and "
		  "Transformer Engine's linears); false: autograd keeps the gathered input (PyTorch DTensor's "
		  "ColwiseParallel, torchtitan), no second gather" },
	{ .key = "moe_tp_in_dispatcher", .type = SCHEMA_BOOL, .offset = OFF(moe_tp_in_dispatcher), .def = "true",
	  .help = "MoE with --sequence-parallel and TP, moe_dispatcher alltoall: the dispatcher takes the "
		  "layer's s/t token shard, exchanges it over EP and all-gathers and reduce-scatters the "
		  "routed tokens over expert TP itself, so the MoE layer runs no sequence-parallel pair of "
		  "its own (Megatron-Core's MoEAlltoAllTokenDispatcher, core_r0.8-core_v0.14); false: the "
		  "layer's input is all-gathered and its output reduce-scattered over TP around the "
		  "dispatcher (torchtitan's PrepareModuleInputOutput, 2025)" },
	{ .key = "fp8_weight_recast", .type = SCHEMA_BOOL, .offset = OFF(fp8_weight_recast), .def = "false",
	  .help = "with precision fp8, the linear weights are cast to fp8 at each use, every micro-batch's "
		  "forward and backward, and no fp8 copy is kept; the linears save their 16-bit input "
		  "(torchao's Float8Linear saves the high-precision input and weight for its backward); false: "
		  "the recipe's fp8 copies, cast once an iteration and cached, and its saved fp8 input "
		  "(Transformer Engine)" },
	{ .key = "fp8_save_original_input", .type = SCHEMA_BOOL, .offset = OFF(fp8_save_original_input),
	  .def = "false",
	  .help = "with precision fp8 and a recipe other than delayed (or fp4), the attention's output "
		  "projection and the MoE shared experts' fc1 save their 16-bit input, which the fused "
		  "attention and the router keep already, instead of a quantised copy of it (Megatron-Core's "
		  "set_save_original_input, from Megatron-LM 781e765 with Transformer Engine 2.6 or later); "
		  "false: both keep a quantised copy beside the 16-bit tensor" },
	{ .key = "moe_weighted_activation", .type = SCHEMA_BOOL, .offset = OFF(moe_weighted_activation),
	  .def = "false",
	  .help = "MoE: the router's probabilities scale the experts' activation and the un-permutation "
		  "keeps no copy of the routed outputs, one k h copy of the routed tokens kept a layer "
		  "(Megatron-Core core_v0.13.0 on: weighted_bias_swiglu_impl); false: the un-permutation "
		  "weights the outputs and keeps them for the probabilities' gradient, two copies "
		  "(core_v0.12.0 and before)" },
	{ .key = "moe_sequential_mlp", .type = SCHEMA_BOOL, .offset = OFF(moe_sequential_mlp), .def = "false",
	  .help = "MoE: the routed experts run as Megatron-Core's SequentialMLP, an fc1 and an fc2 GEMM per "
		  "local expert at its own size (Megatron-LM without --moe-grouped-gemm); false: one grouped "
		  "GEMM per matrix over all local experts (TEGroupedMLP, --moe-grouped-gemm)" },
	{ .key = "moe_sequential_slices", .type = SCHEMA_BOOL, .offset = OFF(moe_sequential_slices), .def = "false",
	  .help = "MoE with moe_sequential_mlp: the loop as Megatron-Core core_v0.5-r0.8 writes it, each "
		  "expert's input a slice and its output copied into a zeros_like tensor, whose autograd "
		  "copies the whole gradient once an expert each way (12 E + 8 bytes a routed element "
		  "backward, 6 forward); false: torch.split and torch.cat (core_r0.9 on), not counted" },
	{ .key = "moe_grouped_gemm", .type = SCHEMA_ENUM, .offset = OFF(moe_grouped_gemm), .def = "te_streams",
	  .choices = framework_moe_gemm_names,
	  .help = "MoE: how the routed experts' grouped GEMM runs: Transformer Engine's GroupedLinear, one "
		  "cuBLAS GEMM per local expert over four streams, so no faster than the experts four at a "
		  "time (te_streams: Megatron-Core's TEGroupedMLP) or one grouped kernel over all local "
		  "experts, launched once (single: torchtitan's torch._grouped_mm), or the grouped_gemm "
		  "package's gmm as Megatron-Core core_v0.5-v0.6's GroupedMLP runs it on Hopper, a cuBLAS "
		  "GEMM per expert over four streams whose bf16 weight gradients DDP's hook adds to the "
		  "fp32 main_grad (gmm: the experts' main_grad unfused whatever main_grad says)" },
	{ .key = "optimizer", .type = SCHEMA_ENUM, .offset = OFF(optimizer), .def = "adam",
	  .choices = framework_optimizer_names,
	  .help = "which optimizer steps the weights: Adam (adam) or Muon as Megatron-Core's dist_muon runs "
		  "it (muon: TensorParallelMuon under LayerWiseDistributedOptimizer, --zero 1: the hidden "
		  "layers' matrices keep optimizer_bytes less 4, one fp32 momentum and no second moment, "
		  "and each is orthogonalized by 5 Newton-Schulz iterations on the DP rank that owns it, "
		  "its TP shard alone as muon_tp_mode blockwise; the embeddings, output layer and vectors "
		  "stay on Adam)" },
	{ .key = "moe_dispatcher", .type = SCHEMA_ENUM, .offset = OFF(moe_dispatcher), .def = "alltoall",
	  .choices = framework_moe_dispatcher_names,
	  .help = "MoE: how the routed tokens reach their experts: permuted, exchanged by all-to-all over "
		  "EP and all-gathered over expert TP, k copies a token (alltoall: Megatron-Core's "
		  "MoEAlltoAllTokenDispatcher) or every token all-gathered once over TP x EP, then "
		  "masked_select, torch.gather and scatter with four host synchronisations a layer and "
		  "the output reduce-scattered (allgather_mask: Megatron-Core core_v0.5-v0.6's "
		  "MoEAllGatherTokenDispatcher) or DeepEP's normal kernels over TP x EP, a token once a node "
		  "over RDMA and once a rank over NVLink, in bf16, the permutation after the dispatch "
		  "(deepep: Megatron-Core's MoEFlexTokenDispatcher, --moe-enable-deepep) or NVIDIA's HybridEP, "
		  "the same pattern over the NVLink domain, the permutation inside its dispatch and combine, "
		  "its own NVLink efficiency (hybridep: --moe-flex-dispatcher-backend hybridep)" },
	{ .key = "cp_ring", .type = SCHEMA_ENUM, .offset = OFF(cp_ring), .def = "p2p",
	  .choices = framework_cp_ring_names,
	  .help = "context parallelism's ring attention: a send/receive of K and V per step hidden behind "
		  "the step before (p2p: Megatron-Core with Transformer Engine) or one all-gather of every "
		  "rank's K and V after the first block, exposed (allgather: PyTorch's context_parallel, "
		  "torchtitan's default rotate method)" },
	/* plan-cli dsz3host */
	{ .key = "zero3_step_bytes", .type = SCHEMA_NUMBER, .offset = OFF(zero3_step_bytes), .min = 0,
	  .max = 256, .def = "0",
	  .help = "HBM bytes per owned parameter that the ZeRO-3 optimizer step moves beyond Adam's 28, the "
		  "clip norm's 4 and the gradient-buffer zeroing's 4: 0, none; DeepSpeed's stage3.py 42 (its "
		  "overflow check, fp64 gradient norm, flatten and fp32 cast, unscale, separate bf16 copy)" },
	{ .key = "zero3_tensor_launches", .type = SCHEMA_INT, .offset = OFF(zero3_tensor_launches),
	  .min = 0, .max = 64, .def = "0",
	  .help = "kernel launches per parameter tensor in the ZeRO-3 optimizer step outside multi-tensor "
		  "kernels: 0, none; DeepSpeed's stage3.py get_grad_norm_direct 2 (.double(), .norm(2))" },
	/* plan-cli simumoe */
	{ .key = "grad_check_bytes", .type = SCHEMA_NUMBER, .offset = OFF(grad_check_bytes), .min = 0,
	  .max = 64, .def = "0",
	  .help = "HBM bytes per gradient-buffer element that a check of the gradients moves each "
		  "iteration before their DP reduction (ZeRO 0-1): 0, none; Megatron-Core 4 (its DDP "
		  "takes each bucket's norm for the NaN check, on by default with bf16)" },
	{ .key = "grad_scale_bytes", .type = SCHEMA_NUMBER, .offset = OFF(grad_scale_bytes), .min = 0,
	  .max = 64, .def = "0",
	  .help = "HBM bytes per gradient-buffer element that scaling the gradients by 1/(dp x cp) "
		  "moves each iteration before their DP reduction, when dp x cp > 1 (ZeRO 0-1): 0, none "
		  "(or averaged in the collective); Megatron-Core 8 (grad_data *= the factor, in place)" },
	/* plan-cli review6 */
	{ .key = "grad_check_syncs", .type = SCHEMA_NUMBER, .offset = OFF(grad_check_syncs), .min = 0,
	  .max = 16, .def = "0",
	  .help = "host synchronisations per gradient bucket that the check before its DP reduction "
		  "makes (ZeRO 0-1), each exposing one launch: 0, none; Megatron-Core core_v0.6.0 1 "
		  "(assert not norm.isnan() reads the bucket's norm back)" },
	{ .key = "step_bytes", .type = SCHEMA_NUMBER, .offset = OFF(step_bytes), .min = 0, .max = 256,
	  .def = "0",
	  .help = "HBM bytes per owned parameter that the optimizer step moves with ZeRO 0-2 beyond "
		  "Adam's 28, the clip norm's 4 and the gradient-buffer zeroing's 4: 0, none; "
		  "Megatron-Core 6 (Adam reads the fp32 main gradient, and a separate copy writes the "
		  "16-bit weights from the fp32 masters)" },
	{ .key = "moe_param_gathers", .type = SCHEMA_INT, .offset = OFF(moe_param_gathers), .min = 1,
	  .max = 8, .def = "1",
	  .help = "all-gathers of all the updated weights per iteration under ZeRO 1-2 when the model "
		  "has experts: 1; Megatron-Core from core_v0.9.0 2 (a dense and an expert distributed "
		  "optimizer, chained, each all-gathering every bucket of the model after its step)" },
	/* plan-cli hostsync: the training script's work per micro-batch */
	{ .key = "microbatch_syncs", .type = SCHEMA_NUMBER, .offset = OFF(microbatch_syncs), .min = 0,
	  .max = 64, .def = "0",
	  .help = "host synchronisations per micro-batch on every pipeline stage, each exposing one launch: "
		  "0, none; SC21 Megatron-LM 9 (its timers' torch.cuda.synchronize() at each start and stop of "
		  "forward-compute, batch-generator and backward-compute, and broadcast_data's blocking copies "
		  "of the sizes up and back and of the batch up)" },
	{ .key = "loss_syncs", .type = SCHEMA_NUMBER, .offset = OFF(loss_syncs), .min = 0, .max = 64,
	  .def = "0",
	  .help = "host synchronisations per micro-batch on the stage holding the loss, each exposing one "
		  "launch: 0, none; Megatron-LM's pretrain_gpt.py loss_func with --check-for-nan-in-loss-and-grad "
		  "(on by default): core_v0.6.0 to core_r0.8.0 1 (assert not loss.isnan()), core_r0.13.0 on 2 "
		  "(rerun_state_machine.validate_result with isnan and isinf)" },
	{ .key = "p2p_syncs", .type = SCHEMA_NUMBER, .offset = OFF(p2p_syncs), .min = 0, .max = 64,
	  .def = "0",
	  .help = "host synchronisations per pipeline exchange under non-interleaved 1F1B (an end stage "
		  "makes one exchange a micro-batch, a middle stage two), each exposing one launch: 0, none; "
		  "Megatron-Core 1 (p2p_communication.py: torch.cuda.synchronize() after batch_isend_irecv, "
		  "batch_p2p_sync); SC21 Megatron-LM 3 (that and its timer's start and stop)" },
	{ .key = "loss_allreduces", .type = SCHEMA_NUMBER, .offset = OFF(loss_allreduces), .min = 0,
	  .max = 64, .def = "0",
	  .help = "all-reduces of one float over the DP group per micro-batch on the stage holding the "
		  "loss, latency-bound: 0, none; Megatron-LM to core_r0.8.0 and NeMo 1.x 1 (loss_func's "
		  "average_losses_across_data_parallel_group)" },
	/* plan-cli mlm2021 */
	{ .key = "syncs_per_chunk", .type = SCHEMA_BOOL, .offset = OFF(syncs_per_chunk), .def = "false",
	  .help = "under the interleaved schedule, microbatch_syncs and p2p_syncs recur for every model chunk "
		  "of a micro-batch, on every stage (false: microbatch_syncs once a micro-batch and p2p_syncs "
		  "not at all, Megatron-Core overlapping the exchange): SC21 Megatron-LM true (schedules.py "
		  "calls forward_step_func for each chunk, and each chunk step's exchange synchronises)" },
	/* plan-cli reviewpipe */
	{ .key = "pp_p2p_overlap", .type = SCHEMA_BOOL, .offset = OFF(pp_p2p_overlap), .def = "false",
	  .help = "under the interleaved schedule (vpp > 1, --pp-schedule 1f1b), each chunk's pipeline exchange "
		  "runs asynchronously behind the next chunk's compute: what exceeds the micro-batch's compute "
		  "is exposed, and the compute it overlaps runs overlap_slowdown times slower; the warm-up's "
		  "exchanges still block (fill and drain): Megatron-Core's "
		  "overlap_p2p_comm, on by default in Megatron-LM (--no-overlap-p2p-communication) and set by "
		  "Megatron-Bridge and the NeMo recipes with vpp > 1; false: every exchange blocks (SC21)" },
	{ .key = "dataloader_mask", .type = SCHEMA_BOOL, .offset = OFF(dataloader_mask), .def = "false",
	  .help = "the data loader builds the micro-batch x seq x seq boolean attention mask, which the first "
		  "stage and the stage holding the loss copy to the GPU on the compute stream each micro-batch "
		  "(at the GPU's pcie_bandwidth) and broadcast over TP: Megatron-LM core_v0.5.0 on, unless "
		  "--no-create-attention-mask-in-dataloader (get_batch_on_this_tp_rank)" },
	/* plan-cli itercost */
	{ .key = "loss_logit_memory", .type = SCHEMA_NUMBER, .offset = OFF(loss_logit_memory), .min = 0,
	  .max = 64, .def = "4",
	  .help = "bytes per logit that the stage holding the loss keeps at the loss's peak, beside its "
		  "4 s b h / t: 4, the fp32 logits of Korthikanti et al. Sec. 4.3 and Megatron-LM's "
		  "theoretical_memory_usage.py; torchtitan 12 (F.cross_entropy of pred.float(): the saved "
		  "fp32 log-probabilities, their gradient and the input's gradient in the backward); the "
		  "Megatron profiles and nemo-24.07 6 (cross_entropy.py's fp32 copy beside the bf16 logits, "
		  "then the fp32 gradient beside its bf16 cast)" },
	{ .key = "moe_dispatcher_sms", .type = SCHEMA_INT, .offset = OFF(moe_dispatcher_sms), .min = 0,
	  .max = 1024, .def = "0",
	  .help = "SMs the deepep or hybridep dispatcher's kernels hold while they run (Megatron-Core's "
		  "moe_flex_dispatcher_num_sms, formerly moe_deepep_num_sms / moe_hybridep_num_sms): under "
		  "--moe-overlap combined-1f1b the compute beside them runs on the GPU's other SMs, sm_count "
		  "/ (sm_count - n) times slower; 0: not given, overlap_slowdown instead" },
	/* plan-cli mtphead */
	{ .key = "loss_kept_memory", .type = SCHEMA_NUMBER, .offset = OFF(loss_kept_memory), .min = 0,
	  .max = 64, .def = "4",
	  .help = "bytes per logit that a loss head whose forward is over keeps until its backward: each "
		  "MTP depth's head, alive while the main head's loss peaks at loss_logit_memory (taken as "
		  "at most loss_logit_memory). 4: the fp32 softmax that Megatron-Core's "
		  "vocab_parallel_cross_entropy saves, or the fp32 gradient of Transformer Engine 2.18's "
		  "parallel_cross_entropy; TE 2.17 and older keep the bf16 logits holding the gradient, 2 "
		  "(loss_logit_memory 2 caps it)" },
	{ .key = "metric_logit_bytes", .type = SCHEMA_NUMBER, .offset = OFF(metric_logit_bytes), .min = 0,
	  .max = 256, .def = "0",
	  .help = "HBM bytes per logit that the trainer's training metrics move each micro-batch, outside "
		  "the forward and backward: 0, none; Composer's LanguageCrossEntropy and LanguagePerplexity "
		  "28 (each an unfused cross-entropy of the bf16 logits cast to fp32)" },
	/* plan-cli h100: begin */
	{ .key = "loss_fwd_bytes", .type = SCHEMA_NUMBER, .offset = OFF(loss_fwd_bytes), .min = 0, .max = 256,
	  .def = "12",
	  .help = "HBM bytes the loss moves per logit (a token's share of a vocabulary column) in the "
		  "forward: 12, a fused cross-entropy over fp32 logits; Megatron-Core's vocab-parallel "
		  "cross-entropy of logits.float() 38 (cast, max, subtract, exp, sum, divide)" },
	{ .key = "loss_bwd_bytes", .type = SCHEMA_NUMBER, .offset = OFF(loss_bwd_bytes), .min = 0, .max = 256,
	  .def = "8",
	  .help = "HBM bytes the loss moves per logit in the backward: 8 fused; Megatron-Core 14 (the "
		  "in-place gradient scaling and the cast back to 16 bits)" },
	/* plan-cli h100: end */
	/* plan-cli hopper: begin */
	{ .key = "main_grad", .type = SCHEMA_ENUM, .offset = OFF(main_grad), .def = "none",
	  .choices = framework_main_grad_names,
	  .help = "how each micro-batch's weight gradients reach an fp32 main_grad: not modelled, no such "
		  "buffer (none: FSDP, DeepSpeed), the wgrad GEMM accumulating into it, 8 bytes a weight "
		  "element in its epilogue (fused: Megatron's --gradient-accumulation-fusion, Transformer "
		  "Engine's fuse_wgrad_accumulation) or a separate main_grad.add_ of the 16-bit gradient, "
		  "10 bytes (unfused: Megatron-LM's DDP hook before gradient accumulation fusion)" },
	/* plan-cli hopper: end */
	{ 0 },
};

/* plan-cli ubrs: the ring-exchange reduce-scatters are some of the
 * reduce-scatters, after a file and after --framework-set alike. */
static bool
framework_finish(void *obj, struct ytree *t, struct plan_error *err)
{
	const struct framework *fw = obj;

	if (fw->userbuffers_reduce_scatter_ring_exchange > fw->userbuffers_reduce_scatter)
		return ytree_error(t, ytree_find_path(t, "userbuffers_reduce_scatter_ring_exchange"), err,
				   "'userbuffers_reduce_scatter_ring_exchange' (%d) must be at most "
				   "userbuffers_reduce_scatter (%d)",
				   fw->userbuffers_reduce_scatter_ring_exchange, fw->userbuffers_reduce_scatter);
	return true;
}

static const struct schema_profile framework_profile = {
	framework_schema, sizeof(struct framework), NULL, framework_finish,
};

/* The files of a base: chain being loaded, outermost first (a cycle's guard). */
#define FRAMEWORK_BASE_DEPTH 8

struct framework_chain {
	char path[FRAMEWORK_BASE_DEPTH][PATH_MAX];
	int n;
};

static bool load_chained(struct framework *fw, const char *path, struct framework_chain *c,
			 struct plan_error *err);

/* "a.yaml -> b.yaml -> a.yaml" into @buf: the chain and @again. */
static const char *
chain_text(const struct framework_chain *c, const char *again, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < c->n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%.200s -> ", c->path[i]);
	if (len < size)
		snprintf(buf + len, size - len, "%.200s", again);
	return buf;
}

/* A relative @name that is a file beside @file (the profile naming it), into @out. */
static bool
beside_file(const char *file, const char *name, char *out, size_t size)
{
	const char *slash = strrchr(file, '/');
	int n;

	if (name[0] == '/' || !slash)
		return false;
	n = snprintf(out, size, "%.*s/%s", (int)(slash - file), file, name);
	return n > 0 && (size_t)n < size && access(out, R_OK) == 0;
}

/* The profile named by 'base:' (@node: a bundled name or a path) into @fw;
 * refused when it is already in the chain @c or the chain is too deep. */
static bool
load_base(struct ytree *t, yaml_node_t *node, struct framework *fw, struct framework_chain *c,
	  struct plan_error *err)
{
	const char *name = ytree_scalar(node);
	char path[PATH_MAX], real[PATH_MAX], chain[1024];
	struct plan_error why;

	if (node->type != YAML_SCALAR_NODE || !name || !name[0])
		return ytree_error(t, node, err, "'base' must name a framework profile");
	plan_error_clear(&why);
	if (!beside_file(t->file, name, path, sizeof(path)) &&
	    !profile_resolve(PROFILE_FRAMEWORK, name, path, sizeof(path), &why))
		return ytree_error(t, node, err, "%s", why.message);
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->path[i], real) == 0)
			return ytree_error(t, node, err, "'base' makes a cycle: %s",
					   chain_text(c, real, chain, sizeof(chain)));
	if (c->n >= FRAMEWORK_BASE_DEPTH)
		return ytree_error(t, node, err, "'base' chain deeper than %d profiles", FRAMEWORK_BASE_DEPTH);
	return load_chained(fw, real, c, err);
}

/* A file with 'base:': the base, then this file's other keys over it; 'name'
 * is inherited when the file does not give one. Without: as schema_load. */
static bool
apply_file(struct framework *fw, struct ytree *t, struct framework_chain *c, struct plan_error *err)
{
	yaml_node_t *root = ytree_root(t);
	yaml_node_t *base = ytree_find(t, root, "base");

	if (!base)
		return schema_apply(framework_schema, t, root, fw, err);
	return load_base(t, base, fw, c, err) && schema_apply_over(framework_schema, t, root, fw, "base", err);
}

static bool
load_chained(struct framework *fw, const char *path, struct framework_chain *c, struct plan_error *err)
{
	struct ytree t;
	bool ok;

	memset(fw, 0, sizeof(*fw));
	if (!ytree_load_file(&t, path, err))
		return false;
	if (!realpath(path, c->path[c->n]))
		snprintf(c->path[c->n], sizeof(c->path[c->n]), "%s", path);
	c->n++;
	ok = apply_file(fw, &t, c, err) &&
	     (!framework_profile.finish || framework_profile.finish(fw, &t, err));
	c->n--;
	ytree_release(&t);
	return ok;
}

bool
framework_load_file(struct framework *fw, const char *path, struct plan_error *err)
{
	struct framework_chain *c = calloc(1, sizeof(*c));
	bool ok;

	if (!c)
		return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "out of memory");
	ok = load_chained(fw, path, c, err);
	free(c);
	return ok;
}

bool
framework_load_string(struct framework *fw, const char *name, const char *text, struct plan_error *err)
{
	return schema_load(&framework_profile, name, text, fw, err);
}

bool
framework_set(struct framework *fw, const char *where, const char *key, const char *text,
	      struct plan_error *err)
{
	return schema_set_text(framework_profile.table, where, key, text, fw, err);
}

bool
framework_check(struct framework *fw, const char *where, struct plan_error *err)
{
	struct ytree none = { 0 };

	snprintf(none.file, sizeof(none.file), "%s", where);
	return !framework_profile.finish || framework_profile.finish(fw, &none, err);
}
