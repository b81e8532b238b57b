#include <math.h>

#include "plan/collective.h"
#include "plan/fp8_recipe.h"
#include "plan/tensor_par.h"

/*
 * The SMs a GPU generation has (NVIDIA's architecture whitepapers: V100
 * 80, A100 108, H100 SXM 132, B200 148), for the share an overlapped
 * collective takes from its GEMM; an unknown generation is taken as a
 * Hopper.
 */
static double
tp_overlap_sms(int generation)
{
	switch (generation) {
	case GPU_GEN_VOLTA: return 80.0;
	case GPU_GEN_AMPERE: return 108.0;
	case GPU_GEN_BLACKWELL: return 148.0;
	default: return 132.0;
	}
}

/*
 * Transformer Engine's userbuffers defaults (transformer_engine/pytorch/
 * module/base.py initialize_ub, as Megatron-Core calls it with
 * --tp-comm-overlap; get_default_config there: num_sm 16 and
 * set_sm_margin unless ring_exchange, num_splits 4 for pipeline and tp for
 * ring_exchange; docs/research/framework-data.md Sec. 1.2): the
 * reduce-scatters after the projection and fc2 run the "pipeline" method
 * in 4 splits on 16 SMs with set_sm_margin, so every chunk of those GEMMs
 * runs on the SMs left (the backward's bulk overlaps the same); the
 * all-gathers before QKV and fc1 (and the backward's mirror sites) run
 * "ring_exchange" in tp steps over the copy engines (use_ce), which take
 * no SMs.
 */
#define TP_OVERLAP_RS_SMS 16.0
#define TP_OVERLAP_RS_SPLITS 4

double
tp_overlap_sm_slowdown(const struct cluster *c, bool reduce_scatter)
{
	double sms = tp_overlap_sms(c->gpu.generation);

	return reduce_scatter ? sms / (sms - TP_OVERLAP_RS_SMS) : 1.0;
}

/*
 * A sequence-parallel collective of @comm seconds overlapped with the
 * GEMM of @gemm seconds it feeds or follows (Megatron-Core's
 * --tp-comm-overlap, torchtitan's async TP; Wang et al. ASPLOS 2023,
 * "Overlap communication with dependent computation via decomposition"):
 * split into @t chunks, each hidden behind the GEMM on the previous one
 * (an all-gather before its GEMM) or the next (a reduce-scatter after
 * it): the same two-stage pipeline of chunks c = comm/t and g' = gemm'/t,
 * where the GEMM runs @slowdown times slower on the SMs the collective
 * leaves it (tp_overlap_sm_slowdown) and each of its t - 1 extra chunks
 * pays the GPU's fixed cost of a GEMM kernel, @chunk_s. The pipeline
 * takes c + (t - 1) max(c, g') + g'; what it adds beyond the GEMM is
 * returned.
 */
double
tp_overlapped_time(double comm, double gemm, int t, double slowdown, double chunk_s)
{
	double n = t > 1 ? t : 1;
	double g = (gemm * slowdown + (n - 1.0) * chunk_s) / n, c = comm / n;

	return c + g + (n - 1.0) * fmax(c, g) - gemm;
}

/*
 * Whether the backward all-gathers a column-parallel input again (below).
 * Where autograd keeps the gathered input (sp_regather false: DTensor's
 * ColwiseParallel), torchtitan's per-op selective checkpointing still
 * gathers again: its save set holds reduce_scatter_tensor and
 * all_to_all_single but not all_gather_into_tensor (torchtitan/
 * distributed/activation_checkpoint.py _get_default_save_ops, 2026; the
 * 2025 models' _op_sac_save_list alike), so the all-gather inside the
 * checkpointed block runs again in the backward, once per gathered input.
 */
static bool
tp_sp_regathers(const struct plan *p, const struct framework *fw)
{
	if (!fw || fw->sp_regather)
		return true;
	return p->recompute == PLAN_RECOMPUTE_SELECTIVE && fw->selective_recompute == FRAMEWORK_SAC_OP;
}

/* The backward's second all-gather of a column-parallel input under
 * sequence parallelism; the caller has checked that the framework
 * gathers again (tp_sp_regathers). */
static void
tp_sp_regather(const struct model *m, const struct cluster *c, const struct plan_layout *lay,
	       double bytes, struct tp_layer_comm *out)
{
	/* Sequence parallelism keeps a column-parallel linear's input as
	 * this rank's s/t shard and all-gathers it again in the backward
	 * for the weight gradient (Megatron-Core megatron/core/
	 * tensor_parallel/layers.py, LinearWithGradAccumulationAndAsync-
	 * Communication.backward, @23e00ed: dist_all_gather_func(...,
	 * async_op=True) "to ensure that the gather is scheduled before
	 * the input gradient computation"; Transformer Engine v2.11
	 * layernorm_linear.py and linear.py backward: ln_out_needs_gather,
	 * gather_along_first_dim(..., async_op=True), "overlapped with
	 * dgrad GEMM"): one more all-gather per gathered input, QKV's and
	 * fc1's (a parallel block's one). It is issued beside the dgrad
	 * GEMM as the input gradient's reduce-scatter is beside the wgrad
	 * GEMM, and is charged like it, in full: both go on the one NCCL
	 * stream, and a persistent GEMM whose CTAs wait behind the NCCL
	 * kernel's SMs finishes about when it would after the collective
	 * (pytorch/pytorch#143988: matmuls "take 2x as long" beside a
	 * NCCL kernel on H100; MooreThreads SimuMax @4dcaae5 charges all
	 * three collectives of a column-parallel linear serially,
	 * dense_module.py LinearCol). Not where autograd keeps the
	 * gathered input (framework sp_regather false: PyTorch DTensor's
	 * ColwiseParallel, whose mm saves the replicated input that
	 * PrepareModuleInput's redistribute made; torchtitan). */
	out->regathers = out->per_pass;
	/* An MoE layer's routed experts get their tokens from the
	 * dispatcher's gather, whose output autograd keeps for the
	 * grouped wgrad (megatron/core/transformer/moe/
	 * token_dispatcher.py): only QKV and a shared expert's fc1
	 * (shared_experts.py SharedExpertMLP, an MLP) gather again. */
	out->moe_regathers = m->parallel_block ? 1 : 1 + (m->moe.shared_experts > 0);
	if (m->parts) /* a layer of one part: QKV's, or a shared expert's */
		out->moe_regathers = model_has_part(m, MODEL_PART_ATTENTION) ? 1 : (m->moe.shared_experts > 0);
	out->regather_s = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, out->gather_bytes);
	out->regather16_s = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, bytes);
	out->bwd_s += out->regathers * out->regather_s;
}

/* TP communication overlapped with the GEMMs beside it (userbuffers'
 * chunked all-gather and reduce-scatter; tp_overlapped_time): a
 * sequence-parallel plan with tp > 1 and --tp-overlap. */
static void
tp_overlap_layer(const struct model *m, const struct plan *p, const struct cluster *c,
		 const struct plan_layout *lay, const struct compute_layer *cl, double bytes,
		 struct tp_layer_comm *out)
{
	if (m->parallel_block) {
		/* A parallel block's one gather feeds QKV and fc1 together, its
		 * one reduce-scatter follows the projection and fc2 together. */
		double ag = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, out->gather_bytes);
		double rs = collective_time(c, &lay->tp, COLL_REDUCESCATTER, COLL_ALGO_RING, bytes);
		double sa = tp_overlap_sm_slowdown(c, false), sr = tp_overlap_sm_slowdown(c, true);
		double k = c->gpu.gemm_overhead_s, in = cl->qkv_fwd_s + cl->fc1_fwd_s;
		double outs = cl->proj_fwd_s + cl->fc2_fwd_s;
		int t = p->tp, r = TP_OVERLAP_RS_SPLITS;

		out->fwd_s = tp_overlapped_time(ag, in, t, sa, k) + tp_overlapped_time(rs, outs, r, sr, k);
		out->bwd_s = tp_overlapped_time(ag, outs, t, sa, k) + tp_overlapped_time(rs, in, r, sr, k);
	} else if (m->parts) {
		/* A layer of one part: one gather before its column-parallel
		 * linear (QKV, fc1 or in_proj), one reduce-scatter after its
		 * row-parallel one (the projection, fc2 or out_proj). */
		double ag = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, out->gather_bytes);
		double rs = collective_time(c, &lay->tp, COLL_REDUCESCATTER, COLL_ALGO_RING, bytes);
		double sa = tp_overlap_sm_slowdown(c, false), sr = tp_overlap_sm_slowdown(c, true);
		double k = c->gpu.gemm_overhead_s;
		double in = cl->qkv_fwd_s + cl->fc1_fwd_s + cl->mixer_in_proj_fwd_s;
		double outs = cl->proj_fwd_s + cl->fc2_fwd_s + cl->mixer_out_proj_fwd_s;
		int t = p->tp, r = TP_OVERLAP_RS_SPLITS;

		out->fwd_s = tp_overlapped_time(ag, in, t, sa, k) + tp_overlapped_time(rs, outs, r, sr, k);
		out->bwd_s = tp_overlapped_time(ag, outs, t, sa, k) + tp_overlapped_time(rs, in, r, sr, k);
		out->mlp_fwd_s = model_has_part(m, MODEL_PART_MLP) ? out->fwd_s : 0.0;
		out->mlp_bwd_s = model_has_part(m, MODEL_PART_MLP) ? out->bwd_s : 0.0;
	} else {
		/* Forward: gather before QKV and fc1, reduce-scatter after the
		 * projection and fc2. Backward, mirrored: the output gradients'
		 * gathers with the dgrad GEMMs of the projection and fc2, the
		 * input gradients' reduce-scatters with QKV's and fc1's (a
		 * dgrad GEMM takes as long as its forward). */
		double ag = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, out->gather_bytes);
		double rs = collective_time(c, &lay->tp, COLL_REDUCESCATTER, COLL_ALGO_RING, bytes);
		double sa = tp_overlap_sm_slowdown(c, false), sr = tp_overlap_sm_slowdown(c, true);
		double k = c->gpu.gemm_overhead_s;
		int t = p->tp, r = TP_OVERLAP_RS_SPLITS;

		out->fwd_s = tp_overlapped_time(ag, cl->qkv_fwd_s, t, sa, k) + tp_overlapped_time(rs, cl->proj_fwd_s, r, sr, k) +
			     tp_overlapped_time(ag, cl->fc1_fwd_s, t, sa, k) + tp_overlapped_time(rs, cl->fc2_fwd_s, r, sr, k);
		out->bwd_s = tp_overlapped_time(ag, cl->proj_fwd_s, t, sa, k) + tp_overlapped_time(rs, cl->qkv_fwd_s, r, sr, k) +
			     tp_overlapped_time(ag, cl->fc2_fwd_s, t, sa, k) + tp_overlapped_time(rs, cl->fc1_fwd_s, r, sr, k);
		out->mlp_fwd_s = tp_overlapped_time(ag, cl->fc1_fwd_s, t, sa, k) + tp_overlapped_time(rs, cl->fc2_fwd_s, r, sr, k);
		out->mlp_bwd_s = tp_overlapped_time(ag, cl->fc2_fwd_s, t, sa, k) + tp_overlapped_time(rs, cl->fc1_fwd_s, r, sr, k);
	}
}

/*
 * Current scaling's amax all-reduce before a cast (fp8_recipe.c): one
 * fp32 amax, latency-bound, and blocking (the cast waits on it).
 * Transformer Engine v2.2 on (with_amax_reduction on the TP group)
 * reduces each column-parallel input gathered in the forward and each
 * row-parallel output gradient gathered in the backward: per_pass each
 * pass, one of them the MLP's (fc1's input, fc2's output gradient); the
 * backward's second gather takes the saved fp8 copy and reduces nothing,
 * and userbuffers' overlap leaves the all-reduce outside the overlapped
 * GEMM. torchao's Float8Linear (framework fp8_weight_recast) casts
 * DTensors, whose amax is a Partial(max) reduced over the TP mesh at
 * every tensor-wise cast (float8_training_tensor.py _ToFloat8ConstrFunc;
 * float8_tensor_parallel.py; torchtitan docs/float8.md: "to keep single
 * device semantics"): in torchtitan's Llama layout (wq, wk, wv, wo and
 * w1, w2 with w3 when gated) the forward casts the two gathered inputs
 * (PrepareFloat8ModuleInput), the two row-parallel inputs and, unless
 * --fp8-gather precast them, every weight; the backward every output
 * gradient (NoopFwToFloat8BwDynamic) and every weight again.
 */
static void
tp_amax_reduces(const struct model *m, const struct plan *p, const struct cluster *c, const struct framework *fw,
		const struct plan_layout *lay, struct tp_layer_comm *out)
{
	double fwd = out->per_pass, bwd = out->per_pass, mlp_fwd = 1.0, mlp_bwd = 1.0;

	out->amax_s = 0.0;
	if (!fp8_recipe_tp_amax_reduces(p, fw))
		return;
	if (fw && fw->fp8_weight_recast) {
		double mlp = m->gated_mlp ? 3.0 : 2.0, linears = 4.0 + mlp, w = p->fp8_gather ? 0.0 : 1.0;

		fwd = out->per_pass + 2.0 + w * linears;
		bwd = (1.0 + w) * linears;
		mlp_fwd = 2.0 + w * mlp;
		mlp_bwd = (1.0 + w) * mlp;
	}
	out->amax_s = collective_small_allreduce_time(c, &lay->tp, 4.0);
	out->fwd_s += fwd * out->amax_s;
	out->bwd_s += bwd * out->amax_s;
	if (m->parts) { /* a layer of one part: its reductions are the MLP's or none */
		if (model_has_part(m, MODEL_PART_MLP)) {
			out->mlp_fwd_s += fwd * out->amax_s;
			out->mlp_bwd_s += bwd * out->amax_s;
		}
	} else if (!m->parallel_block) {
		out->mlp_fwd_s += mlp_fwd * out->amax_s;
		out->mlp_bwd_s += mlp_bwd * out->amax_s;
	}
}

/*
 * The share of a layer's forward collectives that recomputation repeats:
 * plan_tp_recompute_share, whose mlp and moe modules hold half a
 * transformer layer's. A layer of one part has one collective a pass:
 * all of it for an MLP layer whose module is recomputed (mlp for a dense
 * one, moe for an MoE one), none for an attention or Mamba layer.
 */
static double
tp_recompute_share(const struct plan *p, const struct model *m)
{
	unsigned rm = (unsigned)p->recompute_modules;

	if (!m->parts || p->recompute == PLAN_RECOMPUTE_FULL)
		return plan_tp_recompute_share(p, m);
	if (p->recompute != PLAN_RECOMPUTE_SELECTIVE || !model_has_part(m, MODEL_PART_MLP))
		return 0.0;
	return (rm & 1u << (model_is_moe(m) ? PLAN_RM_MOE : PLAN_RM_MLP)) ? 1.0 : 0.0;
}

void
tp_layer_comm(const struct model *m, const struct plan *p, const struct cluster *c,
	      const struct framework *fw, const struct plan_layout *lay,
	      const struct compute_layer *cl, struct tp_layer_comm *out)
{
	double elements = p->micro_batch * (double)p->seq_len * m->hidden, bytes = 2.0 * elements;
	/* Under fp8 the gathers move the recipe's quantised bytes, the
	 * reduce-scatters 16 bits (fp8_recipe.c: TE v1.8 and v2.11,
	 * torchao's tensor-wise TP). */
	double gbytes = p->sequence_parallel ? elements * fp8_recipe_tp_gather_bytes(p, fw) : bytes;
	double one, one16;

	if (p->sequence_parallel) {
		double rs = collective_time(c, &lay->tp, COLL_REDUCESCATTER, COLL_ALGO_RING, bytes);

		one = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, gbytes) + rs;
		one16 = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, bytes) + rs;
	} else {
		one = one16 = collective_time(c, &lay->tp, COLL_ALLREDUCE, COLL_ALGO_RING, bytes);
	}
	/* With SP, one "collective" is an AG+RS pair and a layer has two such
	 * pairs per pass; without, two all-reduces per pass. A parallel block
	 * (Wang and Komatsuzaki 2021, GPT-J; Chowdhery et al. 2022, PaLM,
	 * Sec. 2: "the MLP and Attention input matrix multiplications can be
	 * fused", and their outputs summed before one reduction) has one:
	 * the all-reduce, or reduce-scatter, of the summed row-parallel
	 * outputs; the gather (SP) of the one norm output both read; and in
	 * the backward the same two, the input gradients of QKV and fc1
	 * summed before their reduction. */
	/* A hybrid model's layer of one part (model parts: Megatron-Core's
	 * MambaLayer, or an attention or MLP layer alone) has one
	 * column-parallel and one row-parallel linear: one collective a pass. */
	out->per_pass = m->parallel_block || m->parts ? 1 : 2;
	out->bytes = bytes;
	out->gather_bytes = gbytes;
	/* One pair in 16 bits: the embedding's and the output layer's
	 * (Megatron's, not Transformer Engine modules: outside fp8) and
	 * what a TP compressor replaces. */
	out->collective_s = one16;
	out->fwd_s = out->per_pass * one;
	out->bwd_s = out->per_pass * one;
	out->regathers = out->moe_regathers = 0;
	out->regather_s = out->regather16_s = 0.0;
	/* Of a sequential layer's two, the MLP's: one pair (or all-reduce)
	 * each pass (ep_dispatcher_carries_tp reads it). */
	out->mlp_fwd_s = out->mlp_bwd_s = m->parallel_block ? 0.0 : one;
	if (m->parts && !model_has_part(m, MODEL_PART_MLP))
		out->mlp_fwd_s = out->mlp_bwd_s = 0.0;
	if (p->sequence_parallel && p->tp > 1 && !p->tp_overlap && tp_sp_regathers(p, fw))
		tp_sp_regather(m, c, lay, bytes, out);
	if (p->tp_overlap && p->sequence_parallel && p->tp > 1)
		tp_overlap_layer(m, p, c, lay, cl, bytes, out);
	tp_amax_reduces(m, p, c, fw, lay, out);
	/* Full recomputation re-runs the forward, collectives included
	 * (Narayanan et al. SC21, Sec. 3.5). */
	out->recompute_s = tp_recompute_share(p, m) * out->fwd_s; /* plan-cli recomp: --recompute-modules mlp, moe */
}
