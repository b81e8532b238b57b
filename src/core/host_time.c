#include <math.h>

#include "plan/expert_par.h"
#include "plan/host_time.h"
#include "plan/mixer.h"
#include "plan/pipeline.h"

/* GEMM launches of the attention's forward: its projections. */
static double
attention_gemm_kernels(const struct model *m, const struct framework *fw)
{
	bool eager = fw && fw->elementwise == FRAMEWORK_EW_EAGER;

	if (m->attention == MODEL_ATTN_MLA)
		return (m->mla.q_lora_rank > 0 ? 4.0 : 3.0) + 1.0;
	return eager ? 4.0 : 2.0;
}

/* GEMM launches of the MLP's or the experts' forward. */
static double
mlp_gemm_kernels(const struct model *m, const struct plan *p, const struct framework *fw, bool moe,
		 bool expert_gemms)
{
	bool eager = fw && fw->elementwise == FRAMEWORK_EW_EAGER;
	/* latent MoE: fc1_latent_proj and fc2_latent_proj, one TELinear GEMM
	 * each (moe_layer.py @d98e8a6), beside the router's */
	double router = moe && m->moe.latent_size > 0 ? 3.0 : 1.0;

	if (moe && !expert_gemms)
		return router + (m->moe.shared_experts > 0 ? 2.0 : 0.0);
	if (moe && fw && fw->moe_grouped_gemm == FRAMEWORK_MOE_GEMM_SINGLE && !fw->moe_sequential_mlp)
		return router + 2.0 + (eager && m->gated_mlp ? 1.0 : 0.0) + (m->moe.shared_experts > 0 ? 2.0 : 0.0);
	if (moe)
		return router + 2.0 * (double)m->moe.experts / p->ep + (m->moe.shared_experts > 0 ? 2.0 : 0.0);
	return 2.0 + (eager && m->gated_mlp ? 1.0 : 0.0);
}

/* GEMM launches of one layer's forward (the backward launches twice as
 * many): attention's projections and the MLP's or the experts', or of a
 * layer of one part (model parts) that part's; a Mamba mixer's in_proj
 * and out_proj. */
static double
layer_gemm_kernels(const struct model *m, const struct plan *p, const struct framework *fw, bool moe,
		   bool expert_gemms)
{
	double gemm = model_has_part(m, MODEL_PART_ATTENTION) ? attention_gemm_kernels(m, fw) : 0.0;

	if (model_has_part(m, MODEL_PART_MLP))
		gemm += mlp_gemm_kernels(m, p, fw, moe, expert_gemms);
	if (mixer_present(m))
		gemm += 2.0; /* in_proj, out_proj */
	return gemm;
}

/* Collective launches of one layer, @coll forward and backward (TP, EP,
 * CP), and ring attention's steps added to @attn. */
static void
layer_comm_kernels(const struct model *m, const struct plan *p, const struct framework *fw, bool moe,
		   double attn[2], double coll[2])
{
	if (p->tp > 1) {
		coll[0] = p->sequence_parallel ? 4.0 : 2.0;
		coll[1] = p->sequence_parallel ? 6.0 : 2.0;
		if (p->tp_overlap && p->sequence_parallel) {
			coll[0] += 4.0 * (2.0 * p->tp - 2.0);
			coll[1] += 4.0 * (2.0 * p->tp - 2.0);
		}
		/* arch: a parallel block has half the sites (tensor_par.c), and
		 * so has a layer of one part (model parts). */
		if (m->parallel_block || m->parts) {
			coll[0] *= 0.5;
			coll[1] *= 0.5;
		}
	}
	if (moe && p->ep > 1) {
		coll[0] += 2.0;
		coll[1] += 2.0;
	}
	if (!model_has_part(m, MODEL_PART_ATTENTION)) {
		/* no attention, no CP exchange (context_par.c) */
	} else if (p->cp > 1 && p->cp_method == PLAN_CP_RING) {
		/* Ring attention (Megatron-Core's AttnFuncWithCPAndKVP2P): an
		 * attention kernel per ring step and a K/V exchange between
		 * steps, each way; the backward passes dK and dV as well. */
		attn[0] *= p->cp;
		attn[1] *= p->cp;
		/* plan-cli nemosmall: and Transformer Engine's copies and
		 * merges around them (context_par.c ring_p2p_passes): 3 cp
		 * kernels forward, 6 cp backward on rank 0, the busier. */
		if (!fw || fw->cp_ring == FRAMEWORK_RING_P2P) {
			attn[0] += 3.0 * p->cp;
			attn[1] += 6.0 * p->cp;
		}
		coll[0] += 2.0 * (p->cp - 1);
		coll[1] += 4.0 * (p->cp - 1);
	} else if (p->cp > 1 && p->cp_method == PLAN_CP_ALLGATHER) {
		/* plan-cli cpag: Transformer Engine's AttnFuncWithCPAndKVAllGather
		 * (context_par.c cp_allgather): a kernel per local chunk (2)
		 * each way, K and V gathered forward and again backward, dK and
		 * dV reduce-scattered; DSA gathers once and keeps them. */
		if (!model_has_dsa(m)) {
			attn[0] *= 2.0;
			attn[1] *= 2.0;
		}
		coll[0] += 2.0;
		coll[1] += model_has_dsa(m) ? 2.0 : 4.0;
	} else if (p->cp > 1) {
		/* DeepSpeed-Ulysses: all-to-alls of Q, K, V before and of O
		 * after the attention, and their mirrors backward. */
		coll[0] += 4.0;
		coll[1] += 4.0;
	}
}

/*
 * Kernels of one layer, as the frameworks launch them (counted from the
 * code, not measured):
 * - GEMMs: Megatron-Core with Transformer Engine runs QKV as one GEMM and
 *   the gated MLP's fc1 with its gate as one (TE LayerNormLinear,
 *   LayerNormMLP); eager PyTorch modules as torchtitan writes them
 *   (models/llama3/model.py: wq, wk, wv; w1, w3, w2) launch Q, K and V
 *   and the gate apart. MLA (Megatron-Core MLASelfAttention): the
 *   down-projections, the up-projections and the output projection. An
 *   MoE layer: the router's GEMM, two GEMMs per local expert, the shared
 *   experts' two. Per expert whether grouped or not: Megatron-Core's
 *   --moe-grouped-gemm runs TEGroupedMLP (experts.py, core_r0.9 on; the
 *   legacy GroupedMLP only with --moe-use-legacy-grouped-gemm), whose
 *   te.pytorch.GroupedLinear calls general_grouped_gemm, and Transformer
 *   Engine's nvte_multi_stream_cublas_gemm (common/gemm/cublaslt_gemm.cu,
 *   v1.9-v2.x) loops over the m_splits issuing one cuBLAS GEMM per expert
 *   over num_streams = 4 side streams (gemm.h). A single grouped kernel
 *   (moe_grouped_gemm single: torchtitan's torch._grouped_mm, models/moe/
 *   moe.py @08dc75a) launches once a matrix: fc1 and fc2, and eager the
 *   gate's w3 apart, as the dense MLP's count. SequentialMLP
 *   (moe_sequential_mlp) loops in Python, one GEMM and an activation per
 *   expert. The backward launches a dgrad and a wgrad GEMM for each.
 * - The MoE router after its GEMM: EP_ROUTER_FWD_KERNELS forward,
 *   EP_ROUTER_BWD_KERNELS backward (expert_par.c counts them from
 *   Megatron-Core's router.py; their GPU time is ep_layer_fixed's).
 * - Attention: one fused kernel forward; FlashAttention-2's backward is
 *   three (flash_bwd_launch_template.h: the dO.O preprocessing, the
 *   backward kernel, the dq conversion); unfused attention two batched
 *   GEMMs forward, four backward (softmax and dropout are element-wise).
 * - TP collectives: two all-reduces a pass; with sequence parallelism two
 *   all-gathers and two reduce-scatters forward, and backward two more
 *   all-gathers that re-gather the input for the wgrad GEMMs (Megatron-
 *   Core's LinearWithGradAccumulationAndAsyncCommunication). Overlapped
 *   (userbuffers), each of the four sites a pass splits its GEMM and its
 *   collective into tp chunks (ring exchange): 2 tp launches for 2.
 * - EP: the dispatch and combine all-to-alls each pass; CP: see below.
 * - Element-wise: @ew_kernels forward, twice as many backward (the
 *   gradients of each operator; compute.c prices twice the bytes).
 */
static void
layer_kernels(const struct model *m, const struct plan *p, const struct framework *fw, bool moe,
	      double ew_kernels, bool expert_gemms, struct host_kernels *out)
{
	double gemm, attn[2] = { p->flash_attention ? 1.0 : 2.0, p->flash_attention ? 3.0 : 4.0 };
	double coll[2] = { 0.0, 0.0 };
	bool has_attn = model_has_part(m, MODEL_PART_ATTENTION);

	if (!has_attn)
		attn[0] = attn[1] = 0.0;
	gemm = layer_gemm_kernels(m, p, fw, moe, expert_gemms);
	layer_comm_kernels(m, p, fw, moe, attn, coll);
	out->fwd = gemm + attn[0] + ew_kernels + coll[0] + (moe ? EP_ROUTER_FWD_KERNELS : 0.0);
	out->bwd = 2.0 * gemm + attn[1] + 2.0 * ew_kernels + coll[1] + (moe ? EP_ROUTER_BWD_KERNELS : 0.0);
	/* A mixer's backward kernels as mixer_kernels counts them, where twice
	 * its forward's were taken (@ew_kernels holds them). */
	if (mixer_present(m)) {
		int mf, mb;

		mixer_kernels(m, p, &mf, &mb);
		out->bwd += mb - 2.0 * mf;
	}
	/* Compiled norms: the dweight reduction's kernel (compute.c compiled_norm_dweight). */
	if (fw && fw->elementwise == FRAMEWORK_EW_COMPILED)
		out->bwd += m->parts ? 1 : model_norms_run(m);
	switch (p->recompute) {
	case PLAN_RECOMPUTE_FULL:
		out->recompute = out->fwd;
		break;
	case PLAN_RECOMPUTE_SELECTIVE:
		/* torchtitan's per-op policy: every second matmul and the
		 * element-wise operators; Korthikanti et al.'s: the unfused
		 * attention core (its two GEMMs, softmax and dropout). */
		if (fw && fw->selective_recompute == FRAMEWORK_SAC_OP)
			out->recompute = floor(gemm / 2.0) + ew_kernels;
		else if (fw && fw->selective_recompute == FRAMEWORK_SAC_CORE_ATTN && p->flash_attention)
			out->recompute = attn[0]; /* the fused kernel's forward (a ring's steps) */
		else
			out->recompute = p->flash_attention || !has_attn ? 0.0 : 4.0;
		break;
	default:
		out->recompute = 0.0;
	}
}

void
host_layer_kernels(const struct model *m, const struct plan *p, const struct framework *fw, bool moe,
		   double ew_kernels, struct host_kernels *out)
{
	layer_kernels(m, p, fw, moe, ew_kernels, true, out);
}

/* The same count with the routed experts' GEMMs left out, whatever
 * their kernel: what the launches would be if they cost the host
 * nothing (the policies above, per-op recomputation's every second GEMM
 * included, apply to what is left). */
void
host_layer_kernels_no_expert_gemms(const struct model *m, const struct plan *p, const struct framework *fw,
				   bool moe, double ew_kernels, struct host_kernels *out)
{
	layer_kernels(m, p, fw, moe, ew_kernels, false, out);
}

/*
 * The ends of the model per micro-batch. Embedding: the lookup forward
 * (with its vocab-parallel all-reduce), the dense backward's zero fill,
 * sort and scatter-add. Logits and loss: the final norm, the logits GEMM
 * and Megatron-Core's vocab-parallel cross-entropy
 * (tensor_parallel/cross_entropy.py: max, subtract, the target's logit
 * masked and gathered, exp, sum, log, about ten kernels, with three
 * all-reduces across TP) and the masked mean of the loss (two);
 * backward: the softmax gradient (three), the logits' dgrad and wgrad,
 * the norm's two, and the input gradient's all-reduce across TP.
 */
void
host_ends_kernels(const struct plan *p, bool first, bool last, struct host_kernels *out)
{
	double tp = p->tp > 1 ? 1.0 : 0.0;

	out->fwd = out->bwd = out->recompute = 0.0;
	if (first) {
		out->fwd += 1.0 + tp;
		out->bwd += 3.0;
	}
	if (last) {
		out->fwd += 1.0 + 1.0 + 10.0 + 3.0 * tp + 2.0;
		out->bwd += 3.0 + 2.0 + 2.0 + tp;
	}
}

/*
 * A layer's pass: each kernel a launch (5-20 us of CPU time per kernel:
 * Holistic Trace Analysis's documentation; 3.2 us eager against 0.9 us
 * in a graph measured by CUDA.jl), or, captured in a CUDA graph, one
 * graph launch for the pass (Megatron-Core's per-layer graphs; NeMo's
 * documentation maps each layer's forward and backward to a graph).
 */
double
host_layer_pass_s(const struct framework *fw, double kernels)
{
	switch (fw->cuda_graphs) {
	case FRAMEWORK_GRAPHS_LAYER:
		return kernels > 0.0 ? fw->host_launch_s : 0.0;
	case FRAMEWORK_GRAPHS_FULL:
		return 0.0;
	default:
		return kernels * fw->host_launch_s;
	}
}

double
host_eager_s(const struct framework *fw, double kernels)
{
	return fw->cuda_graphs == FRAMEWORK_GRAPHS_FULL ? 0.0 : kernels * fw->host_launch_s;
}

double
host_exposed_s(double gpu_s, double host_s)
{
	return fmax(0.0, host_s - gpu_s);
}

/*
 * A synchronisation empties the GPU's queue (Megatron-Core's dropless
 * all-to-all dispatcher: the split sizes' .to("cpu") and the stream sync
 * at cuda_sync_point, token_dispatcher.py at 005742f): the
 * host's lead is lost, and the stretch up to the next one takes the
 * larger of its GPU time and its launches (the stall at the sync itself
 * is ep_layer_fixed's sync_s). A whole micro-batch without one could
 * hide one stretch's launches behind another's GPU work; across a sync
 * it cannot.
 */
double
host_exposed_synced_s(double gpu_s, double host_s, double n, double gpu_one, double host_one)
{
	if (!(n > 0.0))
		return host_exposed_s(gpu_s, host_s);
	return n * host_exposed_s(gpu_one, host_one) +
	       host_exposed_s(fmax(0.0, gpu_s - n * gpu_one), fmax(0.0, host_s - n * host_one));
}

/*
 * Apex's csrc/multi_tensor_apply.cuh (the same limits in PyTorch's
 * ATen/native/cuda/MultiTensorApply.cuh and Transformer Engine's fused
 * Adam): chunks of 2048 x 32 elements, at most 320 blocks (chunks) per
 * launch and depth_to_max_tensors {110, 64, 48, 36, 30}; a pass of Adam
 * with fp32 master weights has depth 5 (gradient, weight, momentum,
 * variance, master), 30 tensors a launch, which the other passes' larger
 * tensor lists never undercut.
 */
#define MTA_CHUNK 65536.0
#define MTA_MAX_BLOCKS 320.0
#define MTA_MAX_TENSORS 30.0

double
host_optimizer_launches(double tensors, double elements, double passes)
{
	if (passes <= 0.0 || elements <= 0.0)
		return 0.0;
	return passes * fmax(ceil(tensors / MTA_MAX_TENSORS), ceil(elements / (MTA_CHUNK * MTA_MAX_BLOCKS)));
}

/* A hybrid model's kind model (parts) has one part and its one pre-norm
 * (MambaLayer.norm, TransformerLayer's input_layernorm or
 * pre_mlp_layernorm); a transformer layer both parts and its norms. */
double
host_layer_tensors(const struct model *m, bool moe, double local_experts)
{
	double norm = model_norm_has_shift(m) ? 2.0 : 1.0;
	double bias = m->bias ? 1.0 : 0.0;
	double n = (m->parts ? 1 : model_norms_per_layer(m)) * norm;
	double mats = m->gated_mlp ? 3.0 : 2.0;

	if (model_has_part(m, MODEL_PART_ATTENTION)) /* QK-norm, QKV, output projection */
		n += (m->qk_norm ? 2.0 : 0.0) + 2.0 + (m->bias || m->qkv_bias ? 1.0 : 0.0) + bias;
	if (model_has_part(m, MODEL_PART_MLP) && moe)
		n += 1.0 + (local_experts + m->moe.shared_experts) * mats * (1.0 + bias);
	else if (model_has_part(m, MODEL_PART_MLP))
		n += mats * (1.0 + bias);
	/* plan-cli hybridmean: a Mamba mixer's in_proj and out_proj (and
	 * their biases) and six vectors, conv1d weight and bias, dt_bias,
	 * A_log, D and the gated norm's weight (MambaMixer.__init__,
	 * megatron/core/ssm/mamba_mixer.py at Megatron-LM d98e8a6). */
	if (model_has_part(m, MODEL_PART_MAMBA))
		n += 2.0 * (1.0 + bias) + 6.0;
	/* A Gated DeltaNet mixer's in_proj and out_proj (no biases) and four
	 * vectors, conv1d weight, dt_bias, A_log and out_norm's weight
	 * (_GDNBase.__init__, ssm/gated_delta_net/common.py at d98e8a6). */
	if (model_has_part(m, MODEL_PART_GDN))
		n += 2.0 + 4.0;
	return n;
}

/* plan-cli hybridmean: a hybrid model's tensors kind by kind over the
 * layers of each kind rank @stage holds (DualPipe: both its stages), not
 * its layers times a mean layer's. */
double
host_rank_tensors(const struct model *m, const struct plan *p, int stage, double local_experts)
{
	int mirror = p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1 ? p->pp - 1 - stage : -1;
	double n = 0.0;

	if (!model_is_hybrid(m))
		return pipeline_rank_held_layers(p, m, stage) * host_layer_tensors(m, model_is_moe(m), local_experts);
	for (int k = 0; k < MODEL_KIND_COUNT; k++) {
		struct model km;
		int held = pipeline_stage_kind_layers(m, p, stage, k) +
			   (mirror >= 0 ? pipeline_stage_kind_layers(m, p, mirror, k) : 0);

		model_kind_model(m, k, &km);
		if (held > 0)
			n += held * host_layer_tensors(&km, k == MODEL_KIND_MOE, local_experts);
	}
	return n;
}
