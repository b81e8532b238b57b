#include <math.h>
#include <string.h>

#include "plan/compression.h"
#include "plan/seqlen.h"
#include "io/fields.h"

/* Most fields are members of struct estimate or struct plan: the table
 * names the member, and _Generic takes its C type from the declaration,
 * so that a row cannot read a member as the wrong type. */
#define FIELD_CTYPE_OF(e) _Generic((e), int: FIELD_C_INT, double: FIELD_C_DOUBLE, bool: FIELD_C_BOOL)
#define FIELD_TYPE_OF(e) _Generic((e), int: FIELD_INT, double: FIELD_NUM, bool: FIELD_BOOL)
#define MEMBER(src, T, m) .source = src, .offset = offsetof(T, m), .ctype = FIELD_CTYPE_OF(((const T *)0)->m)
#define EST(m) MEMBER(FIELD_SRC_ESTIMATE, struct estimate, m), \
	.type = FIELD_TYPE_OF(((const struct estimate *)0)->m)
#define PLAN(m) MEMBER(FIELD_SRC_PLAN, struct plan, m), .type = FIELD_TYPE_OF(((const struct plan *)0)->m)
#define PLAN_NAMES(m, n) MEMBER(FIELD_SRC_PLAN, struct plan, m), .type = FIELD_NAME, .names = n
#define FUNC(t, fn) .source = FIELD_SRC_FUNC, .type = t, .get = fn
/* The checkpoint object: only in a report with checkpoints. */
#define CKPT_IF(m, when) MEMBER(FIELD_SRC_CHECKPOINT, struct checkpoint_estimate, m), \
	.type = FIELD_TYPE_OF(((const struct checkpoint_estimate *)0)->m), .present = when
#define CKPT(m) CKPT_IF(m, has_checkpoint)
#define CKPT_CPU(m) CKPT_IF(m, has_cpu_checkpoint)

/* CSV precision: times to the nanosecond, counts of bytes and parameters
 * whole, rates to six digits. */
#define CSV_S "%.9g"
#define CSV_WHOLE "%.0f"
#define CSV_RATE "%.6g"

static void
get_model(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = r->model->name;
}

static void
get_cluster(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = r->cluster->name;
}

static void
get_gpu(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = r->cluster->gpu.name;
}

/* Where the GPU's efficiencies come from: its profile's calibration, or
 * its generation's defaults. */
static void
get_gpu_calibration(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = gpu_is_calibrated(&r->cluster->gpu) ? r->cluster->gpu.calibration : "none (spec-sheet GPU)";
}

/* The board power limit the GPU runs at (--power-limit or the profile's
 * power_limit; its rated_power when neither sets one, 0 when the profile
 * gives no power at all) and the clock it allows (gpu_clock_factor). */
static void
get_gpu_power_limit(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	const struct gpu *g = &r->cluster->gpu;

	(void)f, (void)i;
	v->d = g->power_limit_W > 0 ? g->power_limit_W : g->rated_power_W;
}

static void
get_gpu_clock_factor(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->d = gpu_clock_factor(&r->cluster->gpu);
}

static void
get_framework(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = r->opt && r->opt->framework ? r->opt->framework->name : "built-in";
}

static void
get_compressor(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = r->compressor ? r->compressor->name : NULL;
}

/* plan.dp_overlap: false only where the plan turns it off (--no-dp-overlap),
 * as it has always been written; "dp overlap" in the text output is what
 * the framework makes of it. */
static void
get_dp_overlap(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->b = r->plan->dp_overlap != 0;
}

/* The CSV names the compressor only where it applied. */
static void
get_compressor_used(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = r->compressor && r->est->compressed ? r->compressor->name : "";
}

static int
count_stages(const struct report *r)
{
	return r->plan->pp;
}

static void
get_stage_layers(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f;
	v->i = plan_stage_layers(r->plan, r->model, i);
}

static void
get_stage_recompute(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f;
	v->s = plan_recompute_names[plan_stage_mode(r->plan, r->model, i)];
}

/* Layers of each stage that recompute in full (--recompute-layers,
 * Slapo's checkpoint ratio: Chen et al., ASPLOS 2024). */
static void
get_recompute_layers(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f;
	v->i = plan_stage_recompute_layers(r->plan, r->model, i);
}

/* plan-cli recomp: begin */
/* The recompute modules as a list of names (empty: the framework's selective). */
static int
count_recompute_modules(const struct report *r)
{
	int n = 0;

	for (int i = 0; i < PLAN_RM_COUNT; i++)
		n += (r->plan->recompute_modules >> i) & 1;
	return n;
}

static void
get_recompute_module(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f;
	for (int k = 0; k < PLAN_RM_COUNT; k++)
		if (((r->plan->recompute_modules >> k) & 1) && i-- == 0)
			v->s = plan_recompute_module_names[k];
}
/* plan-cli recomp: end */

static void
get_dp_allreduce(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = coll_algo_names[r->opt ? r->opt->dp_algo : COLL_ALGO_RING];
}

/* A plan.compress flag (at f->offset in struct plan): true only where a
 * compressor applied. */
static void
get_compressed_on(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	bool on;

	(void)i;
	memcpy(&on, (const char *)r->plan + f->offset, sizeof(on));
	v->b = r->est->compressed && on;
}

#define COMPRESSED_ON(m) .source = FIELD_SRC_FUNC, .type = FIELD_BOOL, .get = get_compressed_on, \
	.offset = offsetof(struct plan, compress.m)

static void
get_from_layer(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->i = plan_compress_from_layer(r->plan, r->model);
}

static void
get_dp_compress_scheme(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = r->est->compressed && r->plan->compress.dp ?
	       compress_dp_scheme_names[r->est->details.dp_compress_scheme] : "none";
}

static bool
has_checkpoint(const struct report *r)
{
	return r->ckpt != NULL;
}

/* Replicas and the recovery probabilities: CPU checkpoints only. */
static bool
has_cpu_checkpoint(const struct report *r)
{
	return r->ckpt && r->ckpt->target == CHECKPOINT_CPU;
}

/* plan.compress.dp_on_cpu, indexed by the bool. */
static const char *const dp_on_names[] = { "gpu", "cpu", NULL };

/* predict --seq-lengths: only then are the batching fields written. */
static bool
when_batching(const struct report *r)
{
	return r->est->batching.on;
}

/* wave_loss_estimate ran for the plan printed (predict's, optimize's
 * listed plans), not for the plans of a search. */
static bool
when_wave_loss(const struct report *r)
{
	return r->est->details.gemm_wave_loss_known;
}

/* attnshape: flash attention on a GPU whose profile states the shape its
 * attention efficiencies hold at (estimate.c core_attn_shape). */
static bool
when_attn_shape(const struct report *r)
{
	return r->est->details.attn_shape_known;
}

static void
get_attn_kernel(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	(void)f, (void)i;
	v->s = plan_attention_kernel_names[r->est->details.attn_kernel];
}

#define BATCH(m) EST(batching.m), .present = when_batching
#define BATCH_NAMES(m, n) MEMBER(FIELD_SRC_ESTIMATE, struct estimate, batching.m), .type = FIELD_NAME, \
	.names = n, .present = when_batching

/* A term of the breakdown (ESTIMATE_BREAKDOWN_TERMS), in seconds. */
#define FIELD_BREAKDOWN_ROW(member, text_row, text_when, help) \
	{ "breakdown_s." #member, #member "_s", CSV_S, "s", help, EST(breakdown.member) },

/* The order is that of the JSON object's keys, which scripts may read in
 * order: an object comes where its first key is. */
const struct field field_table[] = {
	{ "bytes_per_iteration.tp", NULL, NULL, "bytes", "TP bytes one GPU of the bottleneck stage sends per iteration", EST(bytes.tp) },
	{ "bytes_per_iteration.pp", NULL, NULL, "bytes", "PP bytes one GPU sends per iteration", EST(bytes.pp) },
	{ "bytes_per_iteration.dp", NULL, NULL, "bytes", "DP and ZeRO bytes one GPU sends per iteration", EST(bytes.dp) },
	{ "bytes_per_iteration.ep", NULL, NULL, "bytes", "EP bytes one GPU sends per iteration (the MoE dispatcher's collectives, expert TP's)", EST(bytes.ep) },
	{ "uncompressed_bytes_per_iteration.tp", NULL, NULL, "bytes", "TP bytes without compression", EST(uncompressed_bytes.tp) },
	{ "uncompressed_bytes_per_iteration.pp", NULL, NULL, "bytes", "PP bytes without compression", EST(uncompressed_bytes.pp) },
	{ "uncompressed_bytes_per_iteration.dp", NULL, NULL, "bytes", "DP bytes without compression", EST(uncompressed_bytes.dp) },
	{ "uncompressed_bytes_per_iteration.ep", NULL, NULL, "bytes", "EP bytes without compression", EST(uncompressed_bytes.ep) },
	{ "compressor", NULL, NULL, "", "the compressor profile's name, or null", FUNC(FIELD_TEXT, get_compressor) },
	{ "uncompressed_iteration_time_s", "uncompressed_iteration_time_s", CSV_S, "s", "the iteration time without compression", EST(uncompressed_iteration_time_s) },
	{ "compression_speedup", "compression_speedup", CSV_RATE, "", "uncompressed / compressed iteration time", EST(compression_speedup) },
	{ "model", "model", NULL, "", "the model profile's name", FUNC(FIELD_TEXT, get_model) },
	{ "cluster", "cluster", NULL, "", "the cluster profile's name", FUNC(FIELD_TEXT, get_cluster) },
	{ "gpu", "gpu", NULL, "", "the GPU model", FUNC(FIELD_TEXT, get_gpu) },
	{ "gpu_calibration", NULL, NULL, "", "where the GPU's efficiencies come from, or none (spec-sheet GPU)", FUNC(FIELD_TEXT, get_gpu_calibration) },
	{ "gpu_power_limit_w", NULL, NULL, "W", "the GPU's board power limit (--power-limit, else the profile's power_limit, else its rated_power; 0: the profile gives no power)", FUNC(FIELD_NUM, get_gpu_power_limit) },
	{ "gpu_clock_factor", NULL, NULL, "", "the clock compute-bound work runs at under that limit, of the rated one: (limit / rated_power)^(1/3), at most 1", FUNC(FIELD_NUM, get_gpu_clock_factor) },
	{ "framework", "framework", NULL, "", "the framework profile's name (built-in without one)", FUNC(FIELD_TEXT, get_framework) },
	{ "gpus", "gpus", NULL, "", "GPUs used, tp x pp x dp", EST(gpus) },
	{ "plan.tp", "tp", NULL, "", "tensor-parallel degree", PLAN(tp) },
	{ "plan.pp", "pp", NULL, "", "pipeline-parallel degree", PLAN(pp) },
	{ "plan.dp", "dp", NULL, "", "data-parallel degree", PLAN(dp) },
	{ "plan.vpp", "vpp", NULL, "", "interleaved model chunks per GPU", PLAN(vpp) },
	{ "plan.micro_batch", "micro_batch", NULL, "sequences", "sequences per micro-batch", PLAN(micro_batch) },
	{ "plan.global_batch", "global_batch", NULL, "sequences", "sequences per iteration", PLAN(global_batch) },
	{ "plan.seq_len", "seq_len", NULL, "tokens", "tokens per sequence", PLAN(seq_len) },
	{ "plan.recompute", "recompute", NULL, "", "recomputation: none, selective or full", PLAN_NAMES(recompute, plan_recompute_names) },
	{ "plan.sequence_parallel", "sequence_parallel", NULL, "", "sequence parallelism", PLAN(sequence_parallel) },
	{ "plan.flash_attention", "flash_attention", NULL, "", "fused attention", PLAN(flash_attention) },
	{ "plan.cp", "cp", NULL, "", "context-parallel degree", PLAN(cp) },
	{ "plan.cp_method", "cp_method", NULL, "", "context parallelism: ring or all-to-all", PLAN_NAMES(cp_method, plan_cp_method_names) },
	{ "plan.tp_overlap", "tp_overlap", NULL, "", "TP collectives overlapped with their GEMMs", PLAN(tp_overlap) },
	{ "plan.fp8_gather", NULL, NULL, "", "ZeRO-3/FSDP all-gathers fp8 weights", PLAN(fp8_gather) },
	{ "plan.precision", "precision", NULL, "", "the linear layers' GEMMs: bf16, fp16, fp8 or fp4", PLAN_NAMES(precision, plan_precision_names) },
	{ "plan.fp8_recipe", "fp8_recipe", NULL, "", "fp8 scaling recipe as given: framework (its profile's), delayed, current, rowwise, blockwise or mxfp8", PLAN_NAMES(fp8_recipe, plan_fp8_recipe_names) },
	{ "plan.bf16_first_layers", NULL, NULL, "layers", "under fp8 or fp4, the model's first layers that run in bf16 (0: none)", PLAN(bf16_first_layers) },
	{ "plan.bf16_last_layers", NULL, NULL, "layers", "under fp8 or fp4, the model's last layers that run in bf16 (0: none)", PLAN(bf16_last_layers) },
	{ "plan.attention_kernel", "attention_kernel", NULL, "", "fused-attention kernel as given: framework (its profile's), profile, fa2, fa3, cudnn or sdpa", PLAN_NAMES(attention_kernel, plan_attention_kernel_names) },
	{ "plan.zero", "zero", NULL, "", "ZeRO stage, 0 to 3", PLAN(zero) },
	{ "plan.dp_overlap", "dp_overlap", NULL, "", "gradient reduction overlapped with the backward", FUNC(FIELD_BOOL, get_dp_overlap) },
	{ "plan.ep", "ep", NULL, "", "expert-parallel degree", PLAN(ep) },
	{ "plan.etp", NULL, NULL, "", "expert tensor-parallel degree (0: as tp)", PLAN(etp) },
	{ "plan.moe_routing", "moe_routing", NULL, "", "all-to-all routing: flat or bilevel", PLAN_NAMES(moe_routing, plan_moe_routing_names) },
	{ "plan.moe_overlap", NULL, NULL, "", "MoE overlap: none, lancet or combined-1f1b", PLAN_NAMES(moe_overlap, plan_moe_overlap_names) },
	{ "plan.mics_group", "mics_group", NULL, "", "MiCS partition group size, 0 without MiCS", PLAN(mics_group) },
	{ "plan.stage_layers", NULL, NULL, "layers", "the layers of each stage", FUNC(FIELD_INT, get_stage_layers), .count = count_stages },
	/* plan-cli pipeline: begin */
	{ "plan.pp_split", NULL, NULL, "", "the layers over the virtual stages: even, embedding, loss, embedding-loss or torchtitan", PLAN_NAMES(pp_split, plan_pp_split_names) },
	{ "plan.pp_first_layers", NULL, NULL, "layers", "layers of the first stage as given (0: even)", PLAN(pp_first_layers) },
	{ "plan.pp_last_layers", NULL, NULL, "layers", "layers of the last stage as given (0: even)", PLAN(pp_last_layers) },
	{ "plan.pp_schedule", NULL, NULL, "", "pipeline schedule: 1f1b, zb-h1, zb-v, dualpipe or dualpipev", PLAN_NAMES(pp_schedule, plan_pp_schedule_names) },
	/* plan-cli pipeline: end */
	{ "plan.stage_recompute", NULL, NULL, "", "the recomputation of each stage", FUNC(FIELD_NAME, get_stage_recompute), .count = count_stages },
	{ "plan.recompute_layers", NULL, NULL, "layers", "the layers of each stage that recompute in full", FUNC(FIELD_INT, get_recompute_layers), .count = count_stages },
	/* plan-cli recomp: begin */
	{ "plan.recompute_modules", NULL, NULL, "", "the submodules selective stages recompute (Megatron-Core's --recompute-modules; empty: the framework's selective)", FUNC(FIELD_NAME, get_recompute_module), .count = count_recompute_modules },
	{ "plan.recompute_method", NULL, NULL, "", "full recomputation: uniform groups or a block of each virtual stage", PLAN_NAMES(recompute_method, plan_recompute_method_names) },
	{ "plan.recompute_num_layers", NULL, NULL, "layers", "layers of a uniform group or of a block (0: uniform 1)", PLAN(recompute_num_layers) },
	{ "plan.activation_offload_layers", NULL, NULL, "layers", "layers whose activations go to host memory (0: none)", PLAN(activation_offload_layers) },
	/* plan-cli recomp: end */
	{ "plan.mics_hierarchical", NULL, NULL, "", "MiCS 2-hop all-gather", PLAN(mics_hierarchical) },
	{ "plan.dp_allreduce", "dp_allreduce", NULL, "", "DP all-reduce: ring or hierarchical", FUNC(FIELD_NAME, get_dp_allreduce) },
	{ "plan.compression.tp", NULL, NULL, "", "the compressor applies to the TP collectives", COMPRESSED_ON(tp) },
	{ "plan.compression.pp", NULL, NULL, "", "the compressor applies to the stage sends", COMPRESSED_ON(pp) },
	{ "plan.compression.dp", NULL, NULL, "", "the compressor applies to the DP gradients", COMPRESSED_ON(dp) },
	{ "plan.compression.from_layer", NULL, NULL, "", "TP compresses the layers above this one", FUNC(FIELD_INT, get_from_layer) },
	{ "plan.compression.from_stage", NULL, NULL, "", "PP: the stages from this one on compress their sends", PLAN(compress.from_stage) },
	{ "plan.compression.dp_scheme", NULL, NULL, "", "compressed DP scheme as given", PLAN_NAMES(compress.dp_scheme, compress_dp_scheme_names) },
	{ "plan.compression.dp_on", NULL, NULL, "", "DP compression on the gpu or the cpu", PLAN_NAMES(compress.dp_on_cpu, dp_on_names) },
	{ "parameters", "parameters", CSV_WHOLE, "", "parameters of the whole model", EST(parameters) },
	{ "active_parameters", "active_parameters", CSV_WHOLE, "", "parameters one token goes through", EST(active_parameters) },
	{ "iteration_time_s", "iteration_time_s", CSV_S, "s", "predicted time of one iteration", EST(iteration_time_s) },
	/* The iteration time's terms, from their list: "breakdown_s.compute", "compute_s", ... */
	ESTIMATE_BREAKDOWN_TERMS(FIELD_BREAKDOWN_ROW)
	{ "memory_bytes.weights", NULL, NULL, "bytes", "the weights' persistent 16-bit (or fp8) copy", EST(memory.weights) },
	{ "memory_bytes.gradients", NULL, NULL, "bytes", "gradients, in the framework's reduce dtype", EST(memory.gradients) },
	{ "memory_bytes.optimizer", NULL, NULL, "bytes", "fp32 master weights and Adam states", EST(memory.optimizer) },
	{ "memory_bytes.activations", NULL, NULL, "bytes", "activations stored for the backward", EST(memory.activations) },
	{ "memory_bytes.other", NULL, NULL, "bytes", "reserved memory and ZeRO-3 gather buffers", EST(memory.other) },
	{ "memory_bytes.compression", NULL, NULL, "bytes", "error-feedback buffers of the compressor", EST(memory.compression) },
	{ "memory_bytes.userbuffers", NULL, NULL, "bytes", "Transformer Engine's Userbuffers for TP overlap", EST(memory.userbuffers) },
	{ "memory_bytes.total", "memory_total_bytes", CSV_WHOLE, "bytes", "peak memory of one GPU", EST(memory.total) },
	{ "memory_capacity_bytes", "memory_capacity_bytes", CSV_WHOLE, "bytes", "the GPU's memory", EST(memory_capacity_bytes) },
	{ "fits", "fits", NULL, "", "the peak memory fits the GPU", EST(fits) },
	{ "model_flops_per_iteration", NULL, NULL, "FLOP", "model FLOPs of one iteration, no recomputation", EST(model_flops_per_iteration) },
	{ "hardware_flops_per_iteration", NULL, NULL, "FLOP", "model FLOPs plus recomputed work", EST(hardware_flops_per_iteration) },
	{ "tflops_per_gpu", "tflops_per_gpu", CSV_RATE, "TFLOP/s", "model FLOPs per second per GPU", EST(tflops_per_gpu) },
	{ "hardware_tflops_per_gpu", NULL, NULL, "TFLOP/s", "hardware FLOPs per second per GPU", EST(hardware_tflops_per_gpu) },
	{ "mfu", "mfu", CSV_RATE, "", "model FLOPs utilisation, a fraction of the peak", EST(mfu) },
	{ "hfu", NULL, NULL, "", "hardware FLOPs utilisation, a fraction of the peak", EST(hfu) },
	{ "tokens_per_s", "tokens_per_s", CSV_RATE, "tokens/s", "tokens per second", EST(tokens_per_s) },
	{ "tokens_per_s_per_gpu", NULL, NULL, "tokens/s", "tokens per second per GPU", EST(tokens_per_s_per_gpu) },
	{ "effective_tokens_per_s", NULL, NULL, "tokens/s", "real (non-pad) tokens per second on the --seq-lengths data", BATCH(effective_tokens_per_s) },
	{ "padding_fraction", NULL, NULL, "", "of the computed tokens, the padding", BATCH(padding_fraction) },
	{ "attention_waste", NULL, NULL, "", "attention FLOPs on pads and cross-document pairs over the useful ones", BATCH(attention_waste) },
	{ "batching.mode", NULL, NULL, "", "how micro-batches are formed: pad, pack or dynamic", BATCH_NAMES(mode, seqlen_batching_names) },
	{ "batching.pack_attention", NULL, NULL, "", "a packed row's attention: full or masked", BATCH_NAMES(pack_attention, seqlen_pack_attention_names) },
	{ "batching.sequences", NULL, NULL, "sequences", "sequences the distribution counts", BATCH(sequences) },
	{ "batching.mean_length", NULL, NULL, "tokens", "mean sequence length, after truncation to --seq-len", BATCH(mean_length) },
	{ "batching.max_length", NULL, NULL, "tokens", "the longest sequence, after truncation", BATCH(max_length) },
	{ "batching.truncated_fraction", NULL, NULL, "", "of the sequences, those longer than --seq-len", BATCH(truncated_fraction) },
	{ "batching.padded_length", NULL, NULL, "tokens", "mean padded length of a sequence (a packed row's length)", BATCH(padded_length) },
	{ "batching.microbatches", NULL, NULL, "", "micro-batches per pipeline per iteration", BATCH(microbatches) },
	{ "batching.sequences_per_microbatch", NULL, NULL, "sequences", "mean sequences (documents) per micro-batch", BATCH(sequences_per_microbatch) },
	{ "batching.iteration_time_s", NULL, NULL, "s", "predicted time of one iteration on that data", BATCH(iteration_time_s) },
	{ "batching.useful_tokens_per_iteration", NULL, NULL, "tokens", "real tokens of one iteration", BATCH(useful_tokens) },
	{ "batching.max_microbatch_time_s", NULL, NULL, "s", "the longest micro-batch's pipeline slot", BATCH(max_microbatch_time_s) },
	{ "batching.peak_memory_bytes", NULL, NULL, "bytes", "peak memory of one GPU with the largest micro-batch", BATCH(peak_memory_bytes) },
	{ "details.microbatches", NULL, NULL, "", "micro-batches per pipeline per iteration", EST(details.microbatches) },
	{ "details.bubble_fraction", NULL, NULL, "", "the bubble as a fraction of the ideal time", EST(details.bubble_fraction) },
	{ "details.layer_forward_s", NULL, NULL, "s", "forward of one layer, one micro-batch", EST(details.layer_fwd_s) },
	{ "details.layer_backward_s", NULL, NULL, "s", "backward of one layer, one micro-batch", EST(details.layer_bwd_s) },
	{ "details.tp_collective_s", NULL, NULL, "s", "one uncompressed TP all-reduce", EST(details.tp_collective_s) },
	{ "details.pp_p2p_per_microbatch_s", NULL, NULL, "s", "stage sends of one micro-batch", EST(details.pp_p2p_s) },
	{ "details.dp_total_s", NULL, NULL, "s", "all DP and ZeRO traffic before overlap", EST(details.dp_total_s) },
	{ "details.dp_overlap_window_s", NULL, NULL, "s", "backward time that can hide it", EST(details.dp_overlap_window_s) },
	{ "details.slot_s", NULL, NULL, "s", "one micro-batch on the bottleneck GPU", EST(details.slot_s) },
	{ "details.compute_gemm_s", "compute_gemm_s", CSV_S, "s", "of compute and recompute: the GEMMs", EST(details.compute_gemm_s) },
	{ "details.compute_attention_s", "compute_attention_s", CSV_S, "s", "of compute and recompute: the attention cores", EST(details.compute_attention_s) },
	{ "details.compute_other_s", "compute_other_s", CSV_S, "s", "of compute and recompute: element-wise kernels and the loss", EST(details.compute_other_s) },
	{ "details.gemm_wave_loss_s", "gemm_wave_loss_s", CSV_S, "s", "of the iteration, what the GEMMs' partial last waves of tiles add (the prediction minus the same plan without waves, sm_count 0); predict's plan and optimize's listed plans only", EST(details.gemm_wave_loss_s), .present = when_wave_loss },
	{ "details.attention_kernel", NULL, NULL, "", "the fused attention kernel that runs (the profile's named: fa2 on Ampere, fa3 on Hopper, cudnn on Blackwell); with flash attention on an Ampere, Hopper or Blackwell GPU only", FUNC(FIELD_NAME, get_attn_kernel), .present = when_attn_shape },
	{ "details.attention_padded_head_dim_qk", NULL, NULL, "", "the query-key head dim the kernel runs, padded up to a size it is compiled for", EST(details.attn_padded_head_dim_qk), .present = when_attn_shape },
	{ "details.attention_padded_head_dim_v", NULL, NULL, "", "the value head dim the kernel runs, likewise", EST(details.attn_padded_head_dim_v), .present = when_attn_shape },
	{ "details.attention_shape_fwd", NULL, NULL, "", "the fused attention forward's time against the GPU profile's reference shape (head dim 128, seq 4096): padding, exponentials, causal diagonal tiles", EST(details.attn_shape_fwd), .present = when_attn_shape },
	{ "details.attention_shape_bwd", NULL, NULL, "", "the same for the backward", EST(details.attn_shape_bwd), .present = when_attn_shape },
	{ "details.pace_factor", NULL, NULL, "", "GPU time x this: the slowest of the plan's GPUs (the GPU's speed_variation)", EST(details.pace_factor) },
	{ "details.bottleneck_stage", NULL, NULL, "", "the stage that sets the pace", EST(details.bottleneck_stage) },
	{ "details.tail_stage", NULL, NULL, "", "the stage whose DP sync and optimizer end the iteration", EST(details.tail_stage) },
	{ "details.memory_stage", NULL, NULL, "", "the stage whose memory is reported", EST(details.memory_stage) },
	{ "details.tp_inter_node", NULL, NULL, "", "the TP group spans nodes", EST(details.tp_inter_node) },
	{ "details.dp_inter_node", NULL, NULL, "", "the DP group spans nodes", EST(details.dp_inter_node) },
	{ "details.pp_inter_node", NULL, NULL, "", "a stage boundary spans nodes", EST(details.pp_inter_node) },
	{ "details.compressed_layers", NULL, NULL, "layers", "TP-compressed layers of the bottleneck stage", EST(details.compressed_layers) },
	{ "details.moe_layers", NULL, NULL, "layers", "MoE layers of the bottleneck stage", EST(details.moe_layers) },
	{ "details.moe_router_s", "moe_router_s", CSV_S, "s", "its MoE layers' routers per iteration: the GEMM (in compute) and the kernels after it (in moe_fixed)", EST(details.moe_router_s) },
	{ "details.moe_permute_s", "moe_permute_s", CSV_S, "s", "its MoE layers' token permutations and their launches per iteration (in compute)", EST(details.moe_permute_s) },
	{ "details.moe_sync_s", "moe_sync_s", CSV_S, "s", "its MoE layers' dropless host synchronisations and split-size all-gathers per iteration (in moe_fixed)", EST(details.moe_sync_s) },
	{ "details.moe_expert_launch_s", "moe_expert_launch_s", CSV_S, "s", "its MoE layers' routed-expert GEMM launches per iteration: what the GPU waits for them (in launch; the launch term less the same without them)", EST(details.moe_expert_launch_s) },
	/* plan-cli hostsync: the training loop's work per micro-batch, where
	 * the breakdown counts it (estimate.c, stage_mb_syncs). */
	{ "details.microbatch_host_syncs", "microbatch_host_syncs", CSV_RATE, "", "host synchronisations per micro-batch of the pacing stage (the framework's microbatch_syncs, loss_syncs on the loss stage, p2p_syncs per pipeline exchange)", EST(details.mb_syncs) },
	{ "details.microbatch_sync_s", "microbatch_sync_s", CSV_S, "s", "the launches those synchronisations expose over the iteration (in launch)", EST(details.mb_sync_s) },
	{ "details.loss_allreduce_s", "loss_allreduce_s", CSV_S, "s", "the loss's all-reduces over DP, one a micro-batch, over the iteration (in overhead)", EST(details.loss_allreduce_s) },
	{ "details.attention_mask_copy_s", "attention_mask_copy_s", CSV_S, "s", "the data loader's attention mask copied to the GPU and broadcast over TP, over the iteration (in overhead)", EST(details.batch_copy_s) },
	{ "details.dp_compress_scheme", NULL, NULL, "", "the compressed DP scheme used, or none", FUNC(FIELD_NAME, get_dp_compress_scheme) },
	{ "details.ep_alltoall_s", NULL, NULL, "s", "one EP all-to-all of one MoE layer", EST(details.ep_a2a_s) },
	{ "details.ep_alltoall_inter_s", NULL, NULL, "s", "its inter-node hop (bi-level routing)", EST(details.ep_inter_s) },
	{ "details.ep_alltoall_intra_s", NULL, NULL, "s", "its intra-node hop (bi-level routing)", EST(details.ep_intra_s) },
	{ "details.ep_total_s", NULL, NULL, "s", "all EP all-to-all time before overlap", EST(details.ep_total_s) },
	{ "details.ep_inter_node", NULL, NULL, "", "the EP group spans nodes", EST(details.ep_inter_node) },
	{ "details.compression_parameters", NULL, NULL, "", "parameters an autoencoder adds on the bottleneck GPU", EST(details.compression_params) },
	{ NULL, "compressor", NULL, "", "the compressor's name where it applied, else empty", FUNC(FIELD_TEXT, get_compressor_used) },
	/* Gemini (SOSP 2023) and Young-Daly: predict --checkpoint-to cpu|storage. */
	{ "checkpoint.to", NULL, NULL, "", "where checkpoints go: cpu or storage", MEMBER(FIELD_SRC_CHECKPOINT, struct checkpoint_estimate, target), .type = FIELD_NAME, .names = checkpoint_target_names, .present = has_checkpoint },
	{ "checkpoint.every_iterations", NULL, NULL, "iterations", "iterations between checkpoints", CKPT(every) },
	{ "checkpoint.replicas", NULL, NULL, "", "copies in CPU memory: the machine's and replicas - 1 peers'", CKPT_CPU(replicas) },
	{ "checkpoint.machines", NULL, NULL, "", "machines the plan uses", CKPT(machines) },
	{ "checkpoint.size_bytes_per_gpu", NULL, NULL, "bytes", "weights and optimizer states of the largest stage's GPU", CKPT(bytes_per_gpu) },
	{ "checkpoint.size_bytes_per_machine", NULL, NULL, "bytes", "what one machine checkpoints", CKPT(bytes_per_machine) },
	{ "checkpoint.size_bytes_total", NULL, NULL, "bytes", "one copy of the whole model's states", CKPT(bytes_total) },
	{ "checkpoint.gpu_to_cpu_s", NULL, NULL, "s", "one GPU's states to host memory over PCIe", CKPT(gpu_to_cpu_s) },
	{ "checkpoint.to_peers_s", NULL, NULL, "s", "a machine's states to replicas - 1 peers over the network", CKPT(to_peers_s) },
	{ "checkpoint.to_storage_s", NULL, NULL, "s", "every state to remote storage", CKPT(to_storage_s) },
	{ "checkpoint.network_idle_s", NULL, NULL, "s", "per iteration, the inter-node network free of training traffic", CKPT(network_idle_s) },
	{ "checkpoint.time_s", NULL, NULL, "s", "taking one checkpoint, until it is complete", CKPT(checkpoint_s) },
	{ "checkpoint.overhead_per_iteration_s", NULL, NULL, "s", "what checkpointing adds to an iteration on average", CKPT(overhead_per_iteration_s) },
	{ "checkpoint.overhead_fraction", NULL, NULL, "", "the overhead as a fraction of the iteration time", CKPT(overhead_fraction) },
	{ "checkpoint.interval_s", NULL, NULL, "s", "between checkpoints", CKPT(interval_s) },
	{ "checkpoint.optimal_interval_s", NULL, NULL, "s", "Young-Daly sqrt(2 x stall per checkpoint x MTBF)", CKPT(optimal_interval_s) },
	{ "checkpoint.recovery_cpu_s", NULL, NULL, "s", "the states back from CPU memory (a peer's and the local)", CKPT(recovery_cpu_s) },
	{ "checkpoint.recovery_storage_s", NULL, NULL, "s", "the states back from remote storage", CKPT(recovery_storage_s) },
	{ "checkpoint.restart_s", NULL, NULL, "s", "restarting the job after a failure", CKPT(restart_s) },
	{ "checkpoint.cpu_recovery_probability", NULL, NULL, "", "a failed machine's checkpoint survives in CPU memory", CKPT_CPU(cpu_recovery_probability) },
	{ "checkpoint.cpu_recovery_probability_two", NULL, NULL, "", "the same when two machines fail at once", CKPT_CPU(cpu_recovery_probability_two) },
	{ "checkpoint.failures_per_day", NULL, NULL, "1/day", "failures of the whole job per day", CKPT(failures_per_day) },
	{ "checkpoint.wasted_per_failure_s", NULL, NULL, "s", "training time one failure wastes, expected", CKPT(wasted_per_failure_s) },
	{ "checkpoint.wasted_fraction", NULL, NULL, "", "of wall-clock time, lost to checkpoints and failures", CKPT(wasted_fraction) },
	{ "checkpoint.goodput_tokens_per_s", NULL, NULL, "tokens/s", "tokens per second of useful training", CKPT(goodput_tokens_per_s) },
};

const size_t field_count = sizeof(field_table) / sizeof(field_table[0]);

const struct field *
field_find(const char *key)
{
	for (size_t i = 0; i < field_count; i++)
		if (field_table[i].key && strcmp(field_table[i].key, key) == 0)
			return &field_table[i];
	return NULL;
}

const struct field *
field_find_csv(const char *name)
{
	for (size_t i = 0; i < field_count; i++)
		if (field_table[i].csv && strcmp(field_table[i].csv, name) == 0)
			return &field_table[i];
	return NULL;
}

const char *
field_leaf(const struct field *f)
{
	const char *dot = f->key ? strrchr(f->key, '.') : NULL;

	return dot ? dot + 1 : f->key;
}

int
field_length(const struct field *f, const struct report *r)
{
	return f->count ? f->count(r) : -1;
}

/* A member of the estimate or the plan, read as its declared C type. */
static void
get_member(const struct field *f, const struct report *r, struct field_value *v)
{
	const char *base = f->source == FIELD_SRC_ESTIMATE ? (const char *)r->est :
			   f->source == FIELD_SRC_CHECKPOINT ? (const char *)r->ckpt : (const char *)r->plan;
	int n = 0;
	double d = 0.0;
	bool b = false;

	switch (f->ctype) {
	case FIELD_C_INT: memcpy(&n, base + f->offset, sizeof(n)); break;
	case FIELD_C_DOUBLE: memcpy(&d, base + f->offset, sizeof(d)); break;
	case FIELD_C_BOOL: memcpy(&b, base + f->offset, sizeof(b)); n = b; break;
	}
	if (f->names)
		v->s = f->names[n];
	v->i = n;
	v->d = d;
	v->b = b;
}

bool
field_present(const struct field *f, const struct report *r)
{
	return !f->present || f->present(r);
}

void
field_get(const struct field *f, const struct report *r, int i, struct field_value *v)
{
	memset(v, 0, sizeof(*v));
	v->type = f->type;
	if (!field_present(f, r))
		return;
	if (f->source == FIELD_SRC_FUNC)
		f->get(f, r, i, v);
	else
		get_member(f, r, v);
}

bool
field_report_finite(const struct report *r)
{
	for (size_t i = 0; i < field_count; i++) {
		const struct field *f = &field_table[i];
		int n = field_length(f, r);
		struct field_value v;

		if (f->type != FIELD_NUM || !field_present(f, r))
			continue;
		for (int j = 0; j < (n < 0 ? 1 : n); j++) {
			field_get(f, r, j, &v);
			if (!isfinite(v.d))
				return false;
		}
	}
	return true;
}
