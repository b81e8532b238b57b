#include <math.h>

#include "plan/expert_par.h"
#include "plan/fp8_recipe.h"
#include "plan/mixer.h"
#include "plan/memory.h"
#include "plan/pipeline.h"

/*
 * Bytes one layer keeps for the attention's backward besides the s^2
 * terms, split across TP (the part on one rank is this / t) in *split
 * and whole on every rank in *whole (Korthikanti et al. 2022, Sec. 4.1:
 * Q, K, V, the projection's input, 2 bytes per element).
 * MHA/GQA: Q and the projection's input are a d wide (h when the heads
 * tile the hidden size: the paper's 4sbh), K and V kv_heads d each.
 * MLA (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1): the decompressed
 * queries and keys are a (d_nope + d_rope) wide, the values and the
 * projection's input a d_v; the latents c_Q (q_lora_rank) and c_KV
 * (kv_lora_rank + the shared rope key d_rope) are kept before and after
 * their RMSNorm, on every TP rank, since the down-projections are
 * replicated (Megatron-Core's MLASelfAttention).
 * Gated attention (attention_output_gate; Megatron-Core attention.py
 * @d98e8a6, _apply_output_gate, x * sigmoid(gate) under torch.compile,
 * whose partitioner keeps the bf16 inputs and recomputes the sigmoid):
 * the gate (a d) for the product's backward, and the gated output, now
 * the projection's input, beside the attention's output x (the flash
 * kernel's saved output and the product's other input, counted as the
 * projection's input above): 2 a d more, outside the core's checkpoint.
 */
static void
attention_activations(const struct model *m, double sb, double *split, double *whole)
{
	double a = m->heads, qk = model_qk_head_dim(m), v = model_v_head_dim(m);

	if (m->attention == MODEL_ATTN_MLA) {
		const struct model_mla *l = &m->mla;

		*split = 2.0 * sb * a * (2.0 * qk + 2.0 * v);
		*whole = 2.0 * sb * (2.0 * l->q_lora_rank + 2.0 * l->kv_lora_rank + l->qk_rope_head_dim);
		return;
	}
	*split = 2.0 * sb * (a * qk + a * v + m->kv_heads * (qk + v));
	if (model_attention_gate_dim(m) > 0.0)
		*split += 2.0 * sb * 2.0 * model_attention_gate_dim(m);
	*whole = 0.0;
}

/*
 * DSA (Megatron-Core's DSAttention, experimental_attention_variant/dsa.py
 * @d98e8a6), per layer averaged over the layers (a share
 * model_dsa_indexer_layers / layers: the others reuse a top-k), whole on
 * every TP rank (the indexer gathers the sequence-parallel input and is
 * duplicated): the top-k indices, int32 (dsa_cudnn_kernels.py), min(k, S)
 * a query for the sparse attention's backward; with the indexer loss
 * FusedDSAIndexerLoss.save_for_backward's q (H_I d_I), weights (H_I) and
 * k (d_I) in bf16, k_norm's input (d_I), and under SP with TP the
 * gathered x and query latent its projections keep for their weight
 * gradients (the main attention's query and key it saves are the
 * attention's own tensors).
 */
static double
dsa_saved_bytes(const struct model *m, const struct plan *p)
{
	const struct model_dsa *d = &m->dsa;
	double sb = (double)p->seq_len * p->micro_batch, S = (double)p->seq_len * (p->cp > 1 ? p->cp : 1);
	double bytes;

	if (!model_has_dsa(m))
		return 0.0;
	bytes = 4.0 * fmin(d->index_topk, S);
	if (d->indexer_loss != MODEL_DSA_LOSS_NONE) {
		bytes += 2.0 * ((double)d->index_n_heads * d->index_head_dim + d->index_n_heads + 2.0 * d->index_head_dim);
		if (p->sequence_parallel && p->tp > 1)
			bytes += 2.0 * ((double)m->hidden + (m->mla.q_lora_rank > 0 ? m->mla.q_lora_rank : m->hidden));
	}
	return sb * bytes * model_dsa_indexer_layers(m) / m->layers;
}

/*
 * plan-cli cpag: DSA's all-gather CP (dsa.py @d98e8a6 l. 1835, 1847:
 * gather_from_sequence_parallel_region of the key and value over the CP
 * group) hands the gathered S = s cp rows to the sparse attention, which
 * keeps them for its backward: beyond the local key the attention saves
 * anyway, (cp - 1) s b rows of it, 16-bit. DSA runs on absorbed MLA, whose
 * key is the one shared latent of kv_lora_rank + qk_rope_head_dim and
 * whose value is None (absorbed_mla.py @d98e8a6 l. 225-226, 859-863:
 * core_attention(q_absorbed, kv_compressed, value=None)); that latent is
 * gathered whole over TP before (l. 532), so the copy is whole on every
 * TP rank (the caller's whole term). Transformer
 * Engine's all-gather (context_par.c cp_allgather) keeps only the local
 * ones: its gathered K and V are transient (memory_cp_allgather_transient).
 */
static double
dsa_cp_gathered_bytes(const struct model *m, const struct plan *p)
{
	if (!model_has_dsa(m) || p->cp <= 1 || p->cp_method != PLAN_CP_ALLGATHER)
		return 0.0;
	return 2.0 * (p->cp - 1.0) * (double)p->seq_len * p->micro_batch *
	       ((double)m->mla.kv_lora_rank + m->mla.qk_rope_head_dim);
}

/* Latent MoE: fc2_latent_proj (l -> h, parallel_mode "duplicated",
 * moe_layer.py @d98e8a6) saves its input, the combined latent output,
 * 2 bytes x l a token of the rank's own (s b / t under SP, which the
 * caller's replicated term divides by); fc1_latent_proj's input is the
 * pre-MLP norm's output the router keeps already. */
static double
latent_proj_saved_bytes(const struct model *m, double tokens)
{
	return m->moe.latent_size > 0 ? 2.0 * tokens * m->moe.latent_size : 0.0;
}

/*
 * Copies of its routed tokens an MoE layer keeps, each k h wide in 2-byte
 * elements: the experts' input (fc1's, for its weight gradient), and,
 * where the router's probabilities weight the un-permutation, its input
 * too (Megatron-Core to core_v0.12.0: token_dispatcher.py unpermute(...,
 * probs=self.probs), whose fused kernel keeps the expert outputs for the
 * probabilities' gradient). From core_r0.12.0 / core_v0.13.0 the
 * probabilities scale the experts' activation instead (experts.py,
 * TEGroupedMLP: weighted_bias_swiglu_impl(fc1_output, ..., permuted_probs),
 * which keeps fc1's output, already counted) and the dispatcher
 * un-permutes without them (token_dispatcher.py, MoEAlltoAllTokenDispatcher.
 * combine_postprocess: unpermute(..., routing_map, fused, drop_and_pad), no
 * probs), a permutation whose backward keeps nothing: framework
 * moe_weighted_activation.
 */
static double
moe_routed_copies(const struct framework *fw)
{
	return fw && fw->moe_weighted_activation ? 1.0 : 2.0;
}

/*
 * What Megatron-Core core_v0.5-v0.6's MoEAllGatherTokenDispatcher
 * (framework moe_dispatcher allgather_mask; megatron/core/transformer/
 * moe/token_dispatcher.py at core_v0.6.0, the same at core_v0.5.0) keeps
 * for the backward of one MoE layer beyond the routed copies in and out
 * that layer_activations_full counts (the experts' input, which the gmm
 * or the experts' linear layers save, and the scattered output, which
 * the product with the probs saves), on every rank, in bytes. G tokens
 * are gathered over TP x EP (ep s b; s b without the collective), R =
 * cf k G / ep rows are local. PyTorch's autograd
 * (tools/autograd/derivatives.yaml, 2.2-2.3, NGC 23.12-24.02) saves
 * torch.gather's whole input (GatherBackward0: self), where index_select
 * (the all-to-all dispatcher's permute, moe_utils.py) keeps only its
 * sizes; scatter and scatter_add keep only their index; masked_select
 * its input and mask; a product both operands. So: the all-gathered
 * hidden states (2 G h, when SP with TP or EP gathers; else the layer's
 * own input, which the router's linear keeps already), the local rows
 * before the sort (2 R h, saved by the sort's torch.gather), the int64
 * index maps (nonzero of the [G, k] mask, [R, 2]: 16 R; argsort's: 8 R)
 * and with top-k above 1 the probs' masked_select input and mask (bf16
 * and bool, 3 k G) and the bf16 scores the product saves (2 R). With
 * top-1 there is no product, so the scattered output is not kept: 2 R h
 * fewer; without the gathering path (top-1, no SP, no EP) the local rows
 * are the layer's input and only argsort's map is new. A replay of the
 * code under saved_tensors_hooks gives these bytes in all four cases
 * (docs/research/framework-data.md Sec. 18).
 */
static double
allgather_mask_saved_bytes(const struct model *m, const struct plan *p)
{
	double tokens = (double)p->seq_len * p->micro_batch, h = m->hidden, k = m->moe.top_k;
	bool collective = (p->sequence_parallel && p->tp > 1) || p->ep > 1;
	double gathered = collective ? p->ep * tokens : tokens;
	double rows = m->moe.capacity_factor * k * gathered / p->ep;
	double bytes = 8.0 * rows;

	if (collective)
		bytes += 2.0 * gathered * h;
	if (ep_allgather_gathers(m, p))
		bytes += 2.0 * rows * h + 16.0 * rows;
	if (m->moe.top_k > 1)
		bytes += 3.0 * k * gathered + 2.0 * rows;
	else
		bytes -= 2.0 * rows * h;
	return bytes;
}

/*
 * What eager PyTorch modules keep for the backward beyond the fused
 * kernels Korthikanti et al. count (framework elementwise eager: the
 * decomposed RMSNorm and rotary that compute.c's ew_ops times), in bytes
 * per token, from each autograd op's saved tensors:
 * - RMSNorm as Hugging Face's LlamaRMSNorm (transformers
 *   models/llama/modeling_llama.py: to(float32), pow(2).mean, x * rsqrt,
 *   weight * x.to(bf16)) and ATen's composite rms_norm before PyTorch 2.9
 *   (aten/src/ATen/native/layer_norm.cpp; 2.9's _fused_rms_norm saves the
 *   input and rstd, as a fused kernel does): pow and the multiply by the
 *   rsqrt keep the fp32 copy (4 h), the weight's multiply the bf16
 *   normalised input (2 h), where a fused norm keeps its 2 h input: 4 h
 *   more a norm, replicated over TP as the norm runs.
 * - Rotary: Hugging Face's q * cos + rotate_half(q) * sin keeps q and
 *   rotate_half(q) (2 + 2 bytes an element); torchtitan's complex product
 *   (torchtitan/models/common/rope.py, view_as_complex(query.float()))
 *   keeps the fp32 copy (4): 4 bytes an element of q and k, where a fused
 *   RoPE keeps nothing. With MLA only the rope part rotates.
 * - A gated MLP's F.silu(w1(x)) * w3(x) (torchtitan models/common/
 *   feed_forward.py, Hugging Face's LlamaMLP) keeps silu's input, its
 *   output and w3's output for the product, and the product for w2: 8 f
 *   where Megatron's fused bias_swiglu keeps fc1's 4 f output and fc2's
 *   2 f input; 2 f more. Routed tokens' experts the same, per row.
 * Returns the replicated part in @replicated, the TP-split part (before
 * the division by t) as the result.
 */
static double
eager_saved_bytes(const struct model *m, const struct plan *p, double *replicated)
{
	double sb = (double)p->seq_len * p->micro_batch, qk = model_qk_head_dim(m), split = 0.0;

	*replicated = m->norm == MODEL_NORM_RMSNORM ? model_norms_run(m) * 4.0 * sb * m->hidden : 0.0;
	if (m->position_embedding == MODEL_POS_ROTARY) {
		double rot = m->attention == MODEL_ATTN_MLA
				     ? (m->heads + 1.0) * m->mla.qk_rope_head_dim
				     : (m->heads + (double)m->kv_heads) * qk;

		split += 4.0 * sb * rot;
	}
	if (m->gated_mlp) {
		double dense = 2.0 * sb * m->ffn_hidden;

		if (model_is_moe(m)) {
			double rows = sb * (m->moe.capacity_factor * m->moe.top_k + m->moe.shared_experts);
			double frac = (double)model_moe_layers(m) / m->layers;

			dense = (1.0 - frac) * dense + frac * 2.0 * rows * m->moe.expert_ffn_hidden;
		}
		split += dense;
	}
	return split;
}

/*
 * A layer of one part (model parts: a hybrid model's kind model), by
 * Korthikanti's terms as layer_activations_full counts them: its one
 * norm's input and its first linear's input (QKV, fc1 or the Mamba
 * in_proj: 4 s b h, replicated unless SP) and with dropout its output's
 * mask (s b h), then its part's own: the attention's Q, K, V and
 * projection input (and unfused, with @scores, the softmax's), the MLP's
 * intermediates (an MoE layer's routed copies and experts' rows), or the
 * Mamba or GDN mixer's (mixer_activation_bytes). An attention layer and an
 * MLP layer keep what one transformer layer keeps. Eager PyTorch's extra
 * copies (eager_saved_bytes) are not counted: no eager framework runs a
 * hybrid model.
 */
static double
layer_activations_part(const struct model *m, const struct plan *p, const struct framework *fw, bool scores)
{
	double t = p->tp, s = p->seq_len, b = p->micro_batch, h = m->hidden;
	double replicated = (m->dropout ? 5.0 : 4.0) * s * b * h, whole = 0.0, split = 0.0;

	if (p->sequence_parallel)
		replicated /= t;
	if (model_has_part(m, MODEL_PART_ATTENTION)) {
		double attn, latents;

		attention_activations(m, s * b, &attn, &latents);
		split += attn;
		whole += latents + dsa_saved_bytes(m, p) + dsa_cp_gathered_bytes(m, p);
		if (scores && !p->flash_attention)
			split += (m->dropout ? 5.0 : 2.0) * m->heads * s * s * b;
	}
	if (model_has_part(m, MODEL_PART_MLP) && !model_is_moe(m)) {
		split += (m->gated_mlp ? 6.0 : 4.0) * s * b * m->ffn_hidden;
	} else if (model_has_part(m, MODEL_PART_MLP)) {
		double rows = s * b * (m->moe.capacity_factor * m->moe.top_k + m->moe.shared_experts);
		double frac = (double)model_moe_layers(m) / m->layers;

		split += frac * ((m->gated_mlp ? 6.0 : 4.0) * rows * m->moe.expert_ffn_hidden +
				 2.0 * moe_routed_copies(fw) * s * b * m->moe.capacity_factor * m->moe.top_k *
					 model_moe_width(m) * plan_etp(p));
		replicated += frac * latent_proj_saved_bytes(m, s * b / (p->sequence_parallel ? t : 1.0));
		if (fw && fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK)
			whole += frac * allgather_mask_saved_bytes(m, p);
	}
	whole += mixer_activation_bytes(m, p); /* already this rank's; 0 without a mixer */
	return replicated + whole + split / t;
}

static double
layer_activations_full(const struct model *m, const struct plan *p, const struct framework *fw, bool scores)
{
	if (m->parts)
		return layer_activations_part(m, p, fw, scores);
	double t = p->tp, s = p->seq_len, b = p->micro_batch, h = m->hidden;
	double sbh = s * b * h;
	double attn, latents;
	/* Korthikanti's 10 s b h outside TP: the two norms' inputs (4), the
	 * QKV and fc1 inputs (4) and the attention's and MLP's dropout masks
	 * (1 byte each, 2); with dropout p = 0 no mask is kept (PyTorch's
	 * dropout returns its input when p is 0: ATen Dropout.cpp), as in
	 * NeMo's Llama and Nemotron configs (hidden_dropout and
	 * attention_dropout 0.0). */
	double replicated = (m->dropout ? 10.0 : 8.0) * sbh;
	/* arch: a parallel block (GPT-J, PaLM) normalises the layer's input
	 * once, or twice on the same input (GPT-NeoX), so one norm input is
	 * kept (2 sbh fewer), and QKV and fc1 read the same norm output when
	 * the block has one norm (2 sbh fewer): of Korthikanti's 34 s b h,
	 * 30 remain with one norm and 32 with two. */
	if (m->parallel_block)
		replicated -= (model_norms_run(m) == 1 ? 4.0 : 2.0) * sbh;
	double mlp = (m->gated_mlp ? 6.0 : 4.0) * s * b * m->ffn_hidden; /* MLP intermediates */
	double split, dispatcher = 0.0;

	if (model_is_moe(m)) {
		/* MoE layers keep the routed copies of their tokens (cf * k of
		 * them: in, and out unless moe_weighted_activation) and the
		 * intermediates of the experts they visit; averaged over the
		 * layers, since every-th layer is MoE. */
		double rows = s * b * (m->moe.capacity_factor * m->moe.top_k + m->moe.shared_experts);
		/* The routed copies are gathered over the expert's etp ranks
		 * (Megatron-Core's all-to-all dispatcher): a rank keeps etp x
		 * its own s b / t tokens' k copies. */
		double moe_mlp = (m->gated_mlp ? 6.0 : 4.0) * rows * m->moe.expert_ffn_hidden +
				 2.0 * moe_routed_copies(fw) * s * b * m->moe.capacity_factor * m->moe.top_k *
					 model_moe_width(m) * plan_etp(p);
		double frac = (double)model_moe_layers(m) / m->layers;

		replicated += frac * latent_proj_saved_bytes(m, s * b);

		mlp = (1.0 - frac) * mlp + frac * moe_mlp;
		if (fw && fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK)
			dispatcher = frac * allgather_mask_saved_bytes(m, p);
	}
	attention_activations(m, s * b, &attn, &latents);
	latents += dsa_saved_bytes(m, p) + dsa_cp_gathered_bytes(m, p); /* 0 without DSA */
	split = attn + mlp;
	if (fw && fw->elementwise == FRAMEWORK_EW_EAGER) {
		double norms;

		split += eager_saved_bytes(m, p, &norms);
		replicated += norms;
	}

	/* The s^2 terms: the softmax's output (2), and with dropout its mask
	 * (1) and output (2). */
	if (scores && !p->flash_attention)
		split += (m->dropout ? 5.0 : 2.0) * m->heads * s * s * b;
	if (p->sequence_parallel)
		replicated /= t;
	return replicated + latents + dispatcher + split / t;
}

/*
 * torchtitan's per-operator selective checkpointing (framework
 * selective_recompute op: "Saves output of all compute ops, except every
 * second mm") keeps of a layer its input (what the checkpoint keeps), the
 * outputs of the odd-numbered aten.mm calls of the block, the attention
 * kernel's output and the outputs of its reduce-scatters (with sequence
 * parallelism) and all-to-alls (expert parallelism); every element-wise
 * output and the experts' torch._grouped_mm are recomputed
 * (torchtitan/distributed/activation_checkpoint.py, _apply_op_sac and
 * the save list of models/deepseek_v3/infra/parallelize.py, 2026-04).
 * The calls in order (models/llama3/model, models/deepseek_v3/model/
 * model.py, models/moe/moe.py): GQA q, k, v, o; MLA with q_lora_rank 0
 * wq, wkv_a, wkv_b, wo, with a q LoRA wq_a, wq_b, wkv_a, wkv_b, wo; then
 * the MLP's w1, w3, w2 (fc1, fc2 without a gate), or an MoE layer's router
 * gate and its shared experts' w1, w3, w2. A call's output is s*b by its
 * width, split over TP except the replicated MLA down-projections and the
 * row-parallel wo and w2, whose output is a full partial sum on every
 * rank; an MoE layer's two all-to-alls keep its cf*k routed copies of
 * the tokens (as layer_activations_full). Dense and MoE layers averaged.
 */
static double
op_sac_saved_mm(int *count, double width)
{
	return ++*count % 2 ? width : 0.0;
}

static double
op_sac_mlp(int *count, double ffn, double h, double t, bool gated)
{
	double w = op_sac_saved_mm(count, ffn / t);

	if (gated)
		w += op_sac_saved_mm(count, ffn / t);
	return w + op_sac_saved_mm(count, h);
}

static double
op_sac_attention(const struct model *m, int *count, double t)
{
	double a = m->heads, qk = model_qk_head_dim(m), v = model_v_head_dim(m), w = a * v / t;

	if (m->attention != MODEL_ATTN_MLA) {
		double d = model_head_dim(m);

		/* Hugging Face's gated attention (Qwen3-Next) takes the gate
		 * from q's matmul, twice as wide. */
		w += op_sac_saved_mm(count, (a * d + model_attention_gate_dim(m)) / t) +
		     op_sac_saved_mm(count, m->kv_heads * d / t) +
		     op_sac_saved_mm(count, m->kv_heads * d / t);
	} else {
		const struct model_mla *l = &m->mla;

		if (l->q_lora_rank > 0) {
			w += op_sac_saved_mm(count, l->q_lora_rank);
			w += op_sac_saved_mm(count, a * qk / t);
		} else {
			w += op_sac_saved_mm(count, a * qk / t);
		}
		w += op_sac_saved_mm(count, l->kv_lora_rank + l->qk_rope_head_dim);
		w += op_sac_saved_mm(count, a * (l->qk_nope_head_dim + v) / t);
	}
	return w + op_sac_saved_mm(count, m->hidden);
}

static double
layer_activations_op_sac(const struct model *m, const struct plan *p)
{
	double t = p->tp, sb = (double)p->seq_len * p->micro_batch, h = m->hidden;
	double in = 2.0 * sb * h / (p->sequence_parallel ? t : 1.0);
	double rs = p->sequence_parallel && t > 1 ? 2.0 * 2.0 * sb * h / t : 0.0;
	int count = 0;
	double attn = op_sac_attention(m, &count, t);
	int after_attn = count;
	double dense = op_sac_mlp(&count, m->ffn_hidden, h, t, m->gated_mlp);
	double moe = 0.0, frac = 0.0;

	if (model_is_moe(m)) {
		double k = m->moe.capacity_factor * m->moe.top_k;

		count = after_attn;
		frac = (double)model_moe_layers(m) / m->layers;
		moe = op_sac_saved_mm(&count, m->moe.experts);
		if (m->moe.shared_experts > 0)
			moe += op_sac_mlp(&count, (double)m->moe.shared_experts * m->moe.expert_ffn_hidden, h, t,
					  m->gated_mlp);
		/* The dispatch and combine all-to-alls' outputs (ep > 1 only:
		 * without EP the experts read the tokens by index). */
		if (p->ep > 1)
			moe += 2.0 * k * h * plan_etp(p) / t;
	}
	return in + rs + 2.0 * sb * (attn + (1.0 - frac) * dense + frac * moe);
}

/* fp8attn: begin fp8 memory */
/*
 * fp8mem: what the linear layers of an fp8 (or fp4) layer save of their
 * inputs for the backward, against the 16-bit tensors
 * layer_activations_full counts. Transformer Engine's recipes save a
 * quantised copy of each linear's input, its column-wise data only
 * (@q bytes an element, fp8_recipe.c; module/linear.py, layernorm_linear.py
 * and grouped_linear.py at v2.6: update_usage(rowwise_usage=False,
 * columnwise_usage=True), prepare_for_saving(*inputmats, ...)), a tensor
 * of its own (@copy); torchao's Float8Linear saves the 16-bit input
 * itself, whatever its recipe (q 2, no copy). The copy stands in for
 * the 16-bit input where nothing else keeps that (a fused norm's output
 * inside TE's LayerNormLinear, the routed tokens, an activation's
 * output), and comes beside it where another module keeps it anyway:
 * the fused attention saves its output, the projection's input
 * (TE's FusedAttnFunc, ctx.save_for_backward(q, k, v, out, ...)), and an
 * MoE layer's router its input, the pre-MLP norm's output
 * (moe_utils.py RouterGatingLinearFunction, Megatron-LM d98e8a6), which
 * the shared experts' fc1 quantises again. From Megatron-LM 781e765
 * (2025-08) with TE 2.6 or later (fp4: 2.7), a recipe other than delayed
 * scaling, those two linears save the original tensor instead
 * (@original: framework fp8_save_original_input; transformer/attention.py
 * l. 427-444, moe/shared_experts.py l. 147-161 "to avoid the extra memory
 * usage of the quantized tensor"; TE rejects save_original_input with
 * DelayedScaling), the shared experts' unless they are recomputed
 * (shared_experts in --recompute-modules).
 */
struct fp8_saves {
	double q;      /* bytes an element of a saved input */
	bool copy;     /* the saved input is a quantised copy, a tensor of its own */
	bool original; /* set_save_original_input on linear_proj and the shared fc1 */
};

static struct fp8_saves
fp8_saves_of(const struct plan *p, const struct framework *fw)
{
	struct fp8_saves f = { .q = 2.0 };

	if (!plan_low_precision(p))
		return f;
	f.q = fp8_recipe_saved_input_bytes(p, fw);
	f.copy = f.q < 2.0;
	f.original = f.copy && fw && fw->fp8_save_original_input && fp8_recipe_resolve(p, fw) != PLAN_FP8_DELAYED;
	return f;
}

/* Whether the recompute modules of @p include @module. */
static bool
fp8_recomputes(const struct plan *p, int module)
{
	return p->recompute == PLAN_RECOMPUTE_SELECTIVE && (p->recompute_modules & 1u << module);
}

/*
 * The shared experts' fc1's quantised copy of the pre-MLP norm's output,
 * kept beside the router's 16-bit one, bytes an MoE layer a rank: q h a
 * token (replicated unless SP) where the copy is a tensor of its own and
 * not replaced by the original (which shared_experts recomputation, or
 * moe's, turns off: moe/shared_experts.py l. 147-161).
 */
static double
fp8_shared_fc1_copy(const struct model *m, const struct plan *p, const struct framework *fw)
{
	struct fp8_saves f = fp8_saves_of(p, fw);
	double sb = (double)p->seq_len * p->micro_batch;
	bool recomputed = fp8_recomputes(p, PLAN_RM_SHARED_EXPERTS) || fp8_recomputes(p, PLAN_RM_MOE);

	if (!f.copy || m->moe.shared_experts <= 0 || (f.original && !recomputed))
		return 0.0;
	return f.q * sb * m->hidden / (p->sequence_parallel ? p->tp : 1.0);
}

/*
 * Bytes an MoE block saves under fp8 against layer_activations_full's
 * 16-bit MoE term, a rank: the routed experts' fc1 input (the cf k
 * routed copies, model_moe_width wide, gathered over etp) and fc2's
 * (the activation's output, expert_ffn_hidden wide), which TE's
 * _GroupedLinear saves quantised; the shared experts' fc2 input,
 * quantised by its TE Linear; less the shared fc1's copy
 * (fp8_shared_fc1_copy). The router keeps the norm's output in 16 bits:
 * nothing saved on it.
 */
static double
fp8_moe_saved(const struct model *m, const struct plan *p, const struct framework *fw)
{
	struct fp8_saves f = fp8_saves_of(p, fw);
	double sb = (double)p->seq_len * p->micro_batch, routed = sb * m->moe.capacity_factor * m->moe.top_k;
	double eff = m->moe.expert_ffn_hidden;

	return (2.0 - f.q) * (routed * model_moe_width(m) * plan_etp(p) + routed * eff +
			      sb * m->moe.shared_experts * eff) / p->tp -
	       fp8_shared_fc1_copy(m, p, fw);
}

/*
 * Bytes the attention's output projection saves under fp8 against its
 * 16-bit input (a d_v a token, split over TP): its input, where nothing
 * else keeps it (no flash kernel, or a gated output, attention_activations),
 * is the copy alone (2 - q saved), or with the original saved, the input
 * (0). Beside the flash kernel's saved output the copy comes on top (-q)
 * where the original is not saved (TE 1.8 and 2.6 FusedAttnFunc saves
 * out): not counted here yet, @kept false, since it moves the NeMo 24.07
 * fp8 rows (branch helper/fp8mem-attnout; docs/research/framework-data.md,
 * "Nemotron-3 Nano and Lightning activations", Still not fixed (1)).
 */
static double
fp8_proj_saved(const struct model *m, const struct plan *p, const struct framework *fw)
{
	struct fp8_saves f = fp8_saves_of(p, fw);
	double sb = (double)p->seq_len * p->micro_batch, width = (double)m->heads * model_v_head_dim(m);
	bool kept = false; /* fp8mem: the flash kernel's output beside the copy, see above */

	if (f.original)
		return 0.0;
	return (kept ? (f.copy ? -f.q : 0.0) : 2.0 - f.q) * sb * width / p->tp;
}

/*
 * What an fp8 recipe saves of one layer's activations against the 16-bit
 * count (negative where it keeps more): the inputs of QKV and a dense
 * layer's fc1 (the fused norms' outputs, h wide, replicated unless SP:
 * the copy alone), of the output projection (fp8_proj_saved) and of a
 * dense layer's fc2 (the activation's output, f wide: the copy alone);
 * an MoE layer's block (fp8_moe_saved), averaged over the layers.
 * torchao's Float8Linear keeps the bf16 input whatever its recipe
 * (rowwise, or a framework's fp8_weight_recast: nothing saved).
 */
static double
fp8_saved_bytes(const struct model *m, const struct plan *p, const struct framework *fw)
{
	double t = p->tp, sb = (double)p->seq_len * p->micro_batch, sp = p->sequence_parallel ? t : 1.0;
	double frac = model_is_moe(m) ? (double)model_moe_layers(m) / m->layers : 0.0, dense = 1.0 - frac;
	double saved, mlp = 0.0, h = m->hidden;

	if (!plan_low_precision(p))
		return 0.0;
	saved = fp8_recipe_saved_input_bytes(p, fw);
	if (model_is_moe(m))
		mlp = frac * fp8_moe_saved(m, p, fw);
	/* A layer of one part: its first linear's input (QKV, a dense fc1,
	 * in_proj: h wide; an MoE layer's router keeps its own) and its
	 * second's (the projection's, a dense fc2's f, a mixer's
	 * out_proj's: Mamba's d_inner, GDN's v). */
	if (m->parts) {
		bool moe_only = m->parts == MODEL_PART_MLP && model_is_moe(m);
		double first = moe_only ? dense : 1.0, second = mixer_out_proj_in_dim(m);

		if (model_has_part(m, MODEL_PART_MLP))
			second += dense * m->ffn_hidden;
		mlp += model_has_part(m, MODEL_PART_ATTENTION) ? fp8_proj_saved(m, p, fw) : 0.0;
		return (2.0 - saved) * sb * (first * h / sp + second / t) + mlp;
	}
	/* arch: a parallel block's one norm output is kept once in 16 bits
	 * for QKV and fc1 (layer_activations_full), and a recipe's copies,
	 * one a linear layer, take as much: nothing saved on it. */
	if (m->parallel_block && model_norms_run(m) == 1)
		return fmax(0.0, 2.0 - 2.0 * saved) * sb * h / sp + fp8_proj_saved(m, p, fw) +
		       (2.0 - saved) * sb * dense * m->ffn_hidden / t + mlp;
	return (2.0 - saved) * sb * ((1.0 + dense) * h / sp + dense * m->ffn_hidden / t) + fp8_proj_saved(m, p, fw) +
	       mlp;
}
/* fp8attn: end fp8 memory */

/* plan-cli recomp: begin */
/*
 * normrev: Megatron-Core recomputes a norm only where it is a module of
 * its own, not IdentityOp (transformer_layer.py, recompute_input_layernorm
 * and recompute_pre_mlp_layernorm, Megatron-LM d98e8a6). Its TE spec
 * (gpt_layer_specs.py, get_gpt_layer_with_transformer_engine_submodules:
 * Megatron-LM's default --transformer-impl, NeMo's and Megatron-Bridge's
 * GPT and DeepSeek recipes) fuses input_layernorm into linear_qkv and a
 * dense layer's pre_mlp_layernorm into linear_fc1
 * (TELayerNormColumnParallelLinear: IdentityOp in the layer), so a dense
 * GPT layer recomputes no norm; an MoE layer's pre_mlp_layernorm is a
 * TENorm of its own (backend.layer_norm() if num_experts), and so is
 * MLA's input_layernorm (its down-projections are TELinear, unless
 * mla_down_proj_fusion, default False, fuses it). MLA's q_layernorm and
 * kv_layernorm are IdentityOp, fused into linear_q_up_proj and
 * linear_kv_up_proj: never the layernorm module's. A framework profile
 * with selective_recompute core_attn is Megatron-Core and builds the TE
 * spec; the others (and none) keep the two norms of their own of
 * Korthikanti et al. and Megatron-Core's local spec.
 */
double
memory_recompute_norms(const struct model *m, const struct framework *fw, double moe_share)
{
	if (!fw || fw->selective_recompute != FRAMEWORK_SAC_CORE_ATTN)
		return 2.0;
	return (m->attention == MODEL_ATTN_MLA ? 1.0 : 0.0) + moe_share;
}

/*
 * fp8mem: what recomputing an MoE layer's pre_mlp_layernorm drops, bytes
 * a rank: its 16-bit output the router keeps, and the shared experts'
 * fc1's quantised copy where the base count keeps it and no checkpoint
 * of the shared experts or the layer drops it already (Megatron-Core
 * sets that fc1 to save the original, discarded output then:
 * transformer_layer.py, set_for_recompute_pre_mlp_layernorm, moe_layer.py
 * l. 743-750, Megatron-LM d98e8a6).
 */
static double
moe_norm_recomputed(const struct model *m, const struct plan *p, const struct framework *fw)
{
	double sb = (double)p->seq_len * p->micro_batch, sp = p->sequence_parallel ? p->tp : 1.0;
	bool inside = fp8_recomputes(p, PLAN_RM_SHARED_EXPERTS) || fp8_recomputes(p, PLAN_RM_MOE);

	return 2.0 * sb * m->hidden / sp + (inside ? 0.0 : fp8_shared_fc1_copy(m, p, fw));
}

/*
 * mlprc: whether mlp's checkpoint holds a dense layer's pre-MLP norm, so
 * drops its output, fc1's input (in bytes an element, h wide, replicated
 * unless SP). Megatron-Core checkpoints self.mlp on pre_mlp_layernorm's
 * output (transformer_layer.py l. 992-1011, Megatron-LM d98e8a6), and
 * only in a layer that is not MoE (l. 537-539). Its TE spec fuses that
 * norm into linear_fc1 (gpt_layer_specs.py l. 336 IdentityOp without
 * experts, l. 542-544 column_parallel_layer_norm_linear; a hybrid
 * model's MLP layer too, hybrid_layer_specs.py l. 214-223), whose
 * LayerNormLinear saves its input and ln_out (its local shard under SP,
 * gathered again in the backward: TransformerEngine d0067d0,
 * module/layernorm_linear.py l. 426-435, 468-536): inside the
 * checkpoint, ln_out is dropped; its input, the checkpoint's, is the
 * norm's input layer_activations_full already counts. Elsewhere (no TE
 * spec) the norm is a module of its own before the checkpoint, whose
 * input is the norm's output, kept (dropped by layernorm instead:
 * memory_recompute_norms, so the two never drop the same bytes).
 * Megatron-Core has no parallel block: left as it was.
 */
bool
memory_recompute_mlp_holds_norm(const struct model *m, const struct framework *fw)
{
	if (m->parts)
		return true;
	return fw && fw->selective_recompute == FRAMEWORK_SAC_CORE_ATTN && !m->parallel_block;
}

/*
 * Megatron-Core's --recompute-modules (megatron/core/transformer/
 * transformer_config.py, recompute_modules, core_r0.13.0): core_attn,
 * mlp, moe and shared_experts checkpoint their submodule ("normal
 * checkpointing": its input is kept, nothing inside), moe_act, layernorm
 * and mla_up_proj discard their output after use and recompute it before
 * the backward that needs it ("output-discarding checkpointing",
 * tensor_parallel.CheckpointWithoutOutput). Korthikanti's terms of
 * layer_activations_full() tell what each drops: 2-byte elements, the
 * fp8 recipes' saved linear inputs at their own width.
 */
double
memory_recompute_module_bytes(const struct model *m, const struct plan *p, const struct framework *fw, int module)
{
	double t = p->tp, s = p->seq_len, sb = s * p->micro_batch, h = m->hidden;
	double sp = p->sequence_parallel ? t : 1.0;
	double frac = model_is_moe(m) ? (double)model_moe_layers(m) / m->layers : 0.0;
	double gated = m->gated_mlp ? 6.0 : 4.0;
	double in = 2.0, routed = 0.0, eff = 0.0;

	if (plan_low_precision(p))
		in = fp8_recipe_saved_input_bytes(p, fw);
	if (model_is_moe(m)) {
		routed = sb * m->moe.capacity_factor * m->moe.top_k;
		eff = m->moe.expert_ffn_hidden;
	}
	/* A layer of one part (model parts) drops only what its part holds.
	 * Of a hybrid model's layers only the MoE one has a norm of its own
	 * (pre_mlp_layernorm; the others' are fused into their first linear,
	 * or, Mamba's, never recomputed: hybrid_layer_specs.py and
	 * transformer_layer.py at d98e8a6), whose one output feeds the router
	 * and the experts' dispatch. */
	if (m->parts) {
		bool attn = model_has_part(m, MODEL_PART_ATTENTION), mlp = model_has_part(m, MODEL_PART_MLP);

		if (module == PLAN_RM_LAYERNORM)
			return mlp && model_is_moe(m) ? moe_norm_recomputed(m, p, fw) : 0.0;
		if ((module == PLAN_RM_CORE_ATTN || module == PLAN_RM_MLA_UP_PROJ) && !attn)
			return 0.0;
		if (module != PLAN_RM_CORE_ATTN && module != PLAN_RM_MLA_UP_PROJ && !mlp)
			return 0.0;
	}
	switch (module) {
	case PLAN_RM_CORE_ATTN: /* the softmax output, with dropout its mask and output */
		return p->flash_attention ? 0.0 : (m->dropout ? 5.0 : 2.0) * m->heads * s * sb / t;
	case PLAN_RM_LAYERNORM: /* each norm's output, its linears' input (its own input stays) */
		if (!fw || fw->selective_recompute != FRAMEWORK_SAC_CORE_ATTN)
			return memory_recompute_norms(m, fw, frac) * in * sb * h / sp;
		return memory_recompute_norms(m, fw, 0.0) * in * sb * h / sp + frac * moe_norm_recomputed(m, p, fw);
	case PLAN_RM_MLP: /* fc1's output and the activation's, fc2's input at its saved width; fc1's fused norm's */
		return (1.0 - frac) * (sb * m->ffn_hidden / t * (gated - (2.0 - in)) +
				       (memory_recompute_mlp_holds_norm(m, fw) ? in * sb * h / sp : 0.0));
	case PLAN_RM_MOE: /* memory_layer_activations' MoE term, shared experts and dispatcher included */
		return frac * ((gated * (routed + sb * m->moe.shared_experts) * eff +
				2.0 * moe_routed_copies(fw) * routed * h * plan_etp(p)) / t -
			       (model_is_moe(m) ? fp8_moe_saved(m, p, fw) : 0.0)) +
		       (model_is_moe(m) && fw && fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK
				? frac * allgather_mask_saved_bytes(m, p)
				: 0.0);
	case PLAN_RM_MOE_ACT: /* the routed rows' activation output (fc2's input), at its saved width */
		return frac * in * routed * eff / t;
	case PLAN_RM_SHARED_EXPERTS: /* fc1's output, fc2's input at its saved width, fc1's copy */
		return frac * ((gated - (2.0 - in)) * sb * m->moe.shared_experts * eff / t +
			       (model_is_moe(m) ? fp8_shared_fc1_copy(m, p, fw) : 0.0));
	case PLAN_RM_MLA_UP_PROJ: /* the decompressed queries, keys (with RoPE) and values */
		if (m->attention != MODEL_ATTN_MLA)
			return 0.0;
		return 2.0 * sb * m->heads * (2.0 * model_qk_head_dim(m) + model_v_head_dim(m)) / t;
	default:
		return 0.0;
	}
}

/* A selective layer with --recompute-modules: moe covers moe_act and
 * shared_experts, which live inside the MoE layer. */
static double
layer_activations_modules(const struct model *m, const struct plan *p, const struct framework *fw)
{
	unsigned rm = (unsigned)p->recompute_modules;
	double act = layer_activations_full(m, p, fw, !(rm & 1u << PLAN_RM_CORE_ATTN)) - fp8_saved_bytes(m, p, fw);

	if (rm & 1u << PLAN_RM_MOE)
		rm &= ~(1u << PLAN_RM_MOE_ACT | 1u << PLAN_RM_SHARED_EXPERTS);
	/* core_attn's scores are left out of the sum above. */
	for (int k = PLAN_RM_MLA_UP_PROJ; k < PLAN_RM_COUNT; k++)
		if (rm & 1u << k)
			act -= memory_recompute_module_bytes(m, p, fw, k);
	/* At least the layer's input, which every checkpoint keeps. */
	return fmax(act, 2.0 * p->seq_len * p->micro_batch * m->hidden / (p->sequence_parallel ? p->tp : 1));
}
/* plan-cli recomp: end */

double
memory_layer_activations(const struct model *m, const struct plan *p, const struct framework *fw)
{
	double sbh = (double)p->seq_len * p->micro_batch * m->hidden;

	switch (p->recompute) {
	case PLAN_RECOMPUTE_FULL:
		return 2.0 * sbh / (p->sequence_parallel ? p->tp : 1);
	case PLAN_RECOMPUTE_SELECTIVE:
		if (p->recompute_modules) /* plan-cli recomp */
			return layer_activations_modules(m, p, fw);
		if (fw && fw->selective_recompute == FRAMEWORK_SAC_OP)
			return layer_activations_op_sac(m, p);
		return layer_activations_full(m, p, fw, false) - fp8_saved_bytes(m, p, fw);
	default:
		return layer_activations_full(m, p, fw, true) - fp8_saved_bytes(m, p, fw);
	}
}

double
memory_partial_recompute_bytes(const struct model *m, const struct plan *p, const struct framework *fw,
			       int stage, int n)
{
	struct plan full = *p;
	double in_flight;

	if (n <= 0)
		return 0.0;
	in_flight = pipeline_layer_microbatches(m, p, stage);
	full.recompute = PLAN_RECOMPUTE_FULL;
	if (model_is_hybrid(m)) {
		/* plan-cli hybrid (review16): the stage's first n layers kind by
		 * kind (pipeline_prefix_kind_layers), the largest kind's layer
		 * re-materialised. */
		double save = 0.0, most = 0.0;

		for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
			struct model km;
			int nk;

			model_kind_model(m, kind, &km);
			if (km.layers == 0)
				continue;
			nk = pipeline_prefix_kind_layers(m, p, stage, n, kind);
			save += nk * (memory_layer_activations(&km, &full, fw) - memory_layer_activations(&km, p, fw));
			most = fmax(most, layer_activations_full(&km, p, fw, true));
		}
		return in_flight * save + most;
	}
	/* Slapo's cost form (docs: formulas.md, Chen et al. ASPLOS 2024):
	 * each of the n layers of every micro-batch in flight keeps its
	 * 2*s*b*h input instead of its activations (Korthikanti et al. 2022,
	 * Sec. 5), and one of them is re-materialised during its backward. */
	return in_flight * n * (memory_layer_activations(m, &full, fw) - memory_layer_activations(m, p, fw)) +
	       layer_activations_full(m, p, fw, true);
}

/* Bytes per parameter kept by ZeRO stage @zero when sharded over @d ranks:
 * @w16 bytes of 16-bit weight (2; 0 where the fp32 master is the only
 * copy); of the @fp8 parameters of fp8 linear layers each keeps @fp8_copy
 * bytes in place of its 16-bit weight (passed with @w16 added, unless fp8
 * is the weights' only copy): Transformer Engine's weight
 * cache, the fp8 copy and, on Hopper, its transpose (fp8_recipe.c),
 * sharded with the weights. */
static void
model_states(int zero, double fp8, double fp8_copy, double w16, double grad_bytes, double opt_bytes,
	     double params, double d, struct memory_use *out)
{
	out->weights += (w16 * (params - fp8) + fp8_copy * fp8) / (zero >= 3 ? d : 1.0);
	out->gradients += grad_bytes * params / (zero >= 2 ? d : 1.0);
	out->optimizer += opt_bytes * params / (zero >= 1 ? d : 1.0);
}

/*
 * plan-cli reviewmem: bytes per parameter of the unsharded gradients of a
 * layer that ZeRO-3 gathers a layer at a time holds beside its two
 * gathered layers in the backward. PyTorch's FSDP leaves a layer's
 * gradients unsharded in the parameters' 16-bit dtype (2) until its
 * post-backward hook, and where the reduction is wider (reduce_bytes 4:
 * torchtitan's mixed_precision_reduce float32, FSDP1's reduce_dtype) it
 * copies them into a reduce-scatter input of that dtype, which FSDP2
 * holds until the next group's reduce-scatter is issued
 * (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_reduce
 * at pytorch/pytorch 010ae4a: reduce_scatter_comm.allocate(..., dtype=
 * reduce_dtype), returned as reduce_scatter_input; _fsdp_param_group.py
 * post_backward at 002a76f: comm_ctx.reduce_scatter_state, dropped only
 * before the next foreach_reduce). So while layer i-1 runs its backward:
 * its gathered weights and the prefetched i-2's (2 x 2, counted by the
 * caller), its own gradients (2) and layer i's held fp32 copy (4).
 * Counted for PyTorch's FSDP, the frameworks whose fp32 shard is the
 * weights' only copy (master_weights_only: pytorch-fsdp, pytorch-fsdp2,
 * llm-foundry), the code read; not where the gradients go elsewhere:
 * into Megatron-FSDP's persistent double buffer (fsdp_double_buffer,
 * counted on its own) or DeepSpeed's IPG bucket a submodule at a time
 * (grad_bucket_buffers). Megatron's other ZeRO-3 paths keep the old two
 * layers (not reviewed here).
 */
static double
memory_layer_grad_bytes(const struct framework *fw)
{
	if (!fw || !fw->master_weights_only || fw->fsdp_double_buffer || fw->grad_bucket_buffers > 0)
		return 0.0;
	return 2.0 + (fw->reduce_bytes > 2.0 ? fw->reduce_bytes : 0.0);
}

/* plan-cli hybridmean: one layer of each kind of a hybrid model (0 for
 * a kind it lacks), as a ZeRO-3 unit of @p's rank: its kind model's
 * layer, an MoE layer's router and shared experts included. plan-cli
 * mtphead: of the routed experts only the rank's experts / ep (each
 * / etp, scaled by t since the callers divide by it: moe/experts.py's
 * num_local_experts at Megatron-LM d98e8a6), and none under
 * Megatron-FSDP's double buffers (@fw's fsdp_double_buffer) when the
 * expert-data-parallel group is one rank: there the experts are a unit
 * of their own (param_and_grad_buffer.py l. 1787, 1946-1948) whose
 * buffers are not distributed (l. 2655-2656, 2718: "group.size() > 1"),
 * and fetch_bucket hands back the local buffer, allocating nothing
 * (l. 1328-1335). */
static void
hybrid_kind_params(const struct model *m, const struct plan *p, const struct framework *fw,
		   double out[MODEL_KIND_COUNT])
{
	for (int k = 0; k < MODEL_KIND_COUNT; k++) {
		struct model km;

		model_kind_model(m, k, &km);
		out[k] = km.layers == 0 ? 0.0 : model_params_per_layer(&km);
		if (km.layers > 0 && k == MODEL_KIND_MOE) {
			bool local = fw && fw->fsdp_double_buffer && plan_edp(p) == 1;
			double routed = local ? 0.0 : (double)km.moe.experts / p->ep * p->tp / plan_etp(p);

			out[k] = model_params_moe_layer(&km) - (km.moe.experts - routed) * model_params_expert(&km);
		}
	}
}

/*
 * plan-cli hybridmean: the largest w[0] P(l) + w[1] P(l + 1) + w[2]
 * P(l + 2) over the runs of three consecutive layers of each chunk rank
 * @stage holds (DualPipe: its mirror's too), P a layer's parameters by
 * its kind, layers outside the chunk and of kind @skip counting nothing:
 * an FSDP unit is one layer (Megatron-FSDP's fsdp_unit_modules
 * [TransformerLayer, MoETransformerLayer, MambaLayer], mcore_fsdp_adapter.py
 * at Megatron-LM d98e8a6; torchtitan's fully_shard of each block) and a
 * stage's modules gather their own layers only.
 */
static double
hybrid_window(const struct model *m, const struct plan *p, const struct framework *fw, int stage, const double w[3],
	      int skip)
{
	int mirror = p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1 ? p->pp - 1 - stage : -1;
	double kp[MODEL_KIND_COUNT], best = 0.0;

	hybrid_kind_params(m, p, fw, kp);
	for (int r = 0; r < 2; r++) {
		int st = r == 0 ? stage : mirror;

		for (int j = 0; st >= 0 && j < p->vpp; j++) {
			int k = pipeline_stage_chunk(p, st, j), first = pipeline_chunk_first_layer(p, m, k);
			int last = first + pipeline_chunk_layers(p, m, k) - 1;

			for (int l = first - 2; l <= last; l++) {
				double sum = 0.0;

				for (int i = 0; i < 3; i++)
					if (l + i >= first && l + i <= last && model_layer_kind(m, l + i) != skip)
						sum += w[i] * kp[model_layer_kind(m, l + i)];
				best = fmax(best, sum);
			}
		}
	}
	return best;
}

/*
 * plan-cli hybridmean: the kind of the FSDP units Megatron-FSDP's
 * double buffers hold (FixedPoolAllocator.__init__, megatron/core/
 * distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py at
 * Megatron-LM d98e8a6): the largest group of units of equal bucket sizes,
 * the first unit's group on a tie (a strict >); a layer's size is its
 * kind's. The other units' buckets are allocated when gathered
 * (StorageResizeBasedBucketAllocator; fsdp_db_use_persist_buf_on_alloc_fail
 * off by default, distributed_data_parallel_config.py).
 */
static int
hybrid_pool_kind(const struct model *m, const struct plan *p, int stage)
{
	int mirror = p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1 ? p->pp - 1 - stage : -1;
	int k0 = pipeline_stage_chunk(p, stage, 0), first = pipeline_chunk_first_layer(p, m, k0);
	int best = model_layer_kind(m, first), n[MODEL_KIND_COUNT];

	for (int k = 0; k < MODEL_KIND_COUNT; k++)
		n[k] = pipeline_stage_kind_layers(m, p, stage, k) +
		       (mirror >= 0 ? pipeline_stage_kind_layers(m, p, mirror, k) : 0);
	for (int l = first; l < first + pipeline_chunk_layers(p, m, k0); l++)
		if (n[model_layer_kind(m, l)] > n[best])
			best = model_layer_kind(m, l);
	return best;
}

/*
 * plan-cli hybridmean: ZeRO-3's gathered 16-bit weights and unsharded
 * gradients for a hybrid model, whose layers differ (Nemotron-H 56B: an
 * MLP layer 537 M parameters, a Mamba layer 438 M, an attention layer
 * 151 M), by the layers actually gathered together, not two mean layers.
 * In the forward, the layer in use and the prefetched next one (w 2, 2);
 * in the backward (memory_layer_grad_bytes' moment), layer i running
 * (its weights and own gradients), i - 1 prefetched and i + 1's held
 * reduce-scatter input: in model order w = 2, 2 + own, held. Under
 * Megatron-FSDP's double buffers the pool holds two units of its kind
 * for good (weights in 2 bytes) and the other kinds' units count when
 * gathered, the running and the prefetched one.
 */
static double
hybrid_zero3_weights(const struct model *m, const struct plan *p, const struct framework *fw, int stage)
{
	double g = memory_layer_grad_bytes(fw), own = g > 0.0 ? 2.0 : 0.0;
	double fwd[3] = { 2.0, 2.0, 0.0 }, bwd[3] = { 2.0, 2.0 + own, g - own };
	double kp[MODEL_KIND_COUNT];
	int pool;

	if (!fw || !fw->fsdp_double_buffer)
		return fmax(hybrid_window(m, p, fw, stage, fwd, -1), hybrid_window(m, p, fw, stage, bwd, -1));
	hybrid_kind_params(m, p, fw, kp);
	pool = hybrid_pool_kind(m, p, stage);
	return 2.0 * 2.0 * kp[pool] + hybrid_window(m, p, fw, stage, fwd, pool);
}

/* plan-cli hybridmean: Megatron-FSDP's unsharded gradient buffers
 * (main_grad_alloc, the same FixedPoolAllocator as the weights') for a
 * hybrid model: two pool units and the other kinds' units in use. */
static double
hybrid_fsdp_grad_buffers(const struct model *m, const struct plan *p, const struct framework *fw, int stage)
{
	double one[3] = { 1.0, 1.0, 0.0 }, kp[MODEL_KIND_COUNT];
	int pool = hybrid_pool_kind(m, p, stage);

	hybrid_kind_params(m, p, fw, kp);
	return fw->reduce_bytes * (2.0 * kp[pool] + hybrid_window(m, p, fw, stage, one, pool));
}

/*
 * ZeRO-3's gathered weights and unsharded gradients beyond the shards.
 * A framework that gathers a layer at a time holds the 16-bit weights of
 * the layer in use and of the prefetched one. plan-cli zero3: one that
 * gathers tensor by tensor (gather_unit tensor: DeepSpeed v0.3.13-v0.5.x,
 * stage3.py fetch_sub_module and release_sub_module) holds one weight
 * matrix at a time, a second only where it prefetches, and in the
 * backward zero3_grad_copies unsharded gradients of that size: DeepSpeed
 * v0.3.13's (3) the tensor's own, the previous tensor's, which waits as
 * extra_large_param_to_reduce until the next bucket's reduce_ipg_grads
 * and keeps its full size until partition_previous_reduced_grads at the
 * one after, and the flat input that PyTorch 1.8's list reduce_scatter
 * copies it into (ProcessGroupNCCL::reduce_scatter). The largest matrix
 * sets the peak (an MLP matrix: 4h^2 against a GPT layer's 12h^2).
 */
double
memory_zero3_transient(const struct model *m, const struct plan *p, const struct framework *fw, int stage)
{
	double t = p->tp, units = fw && fw->prefetch == FRAMEWORK_PREFETCH_NONE ? 1.0 : 2.0;

	if (p->zero < 3)
		return 0.0;
	if (model_is_hybrid(m) && (!fw || fw->gather_unit != FRAMEWORK_GATHER_TENSOR))
		return hybrid_zero3_weights(m, p, fw, stage) / t;
	if (!fw || fw->gather_unit != FRAMEWORK_GATHER_TENSOR)
		return (2.0 * 2.0 + memory_layer_grad_bytes(fw)) * model_params_per_layer(m) / t;
	return (fw->gather_bytes * units + fw->reduce_bytes * fw->zero3_grad_copies) *
	       model_largest_matrix_params(m) / t;
}

void
memory_mode_init(const struct model *m, const struct plan *p, const struct cluster *c,
		 const struct framework *fw, struct memory_mode *out)
{
	struct fp8_recipe_cost rc;

	out->recompute = p->recompute;
	out->recipe = fp8_recipe_resolve(p, fw);
	fp8_recipe_cost(out->recipe, (enum gpu_generation)c->gpu.generation, &rc);
	out->weight_copy_bytes = rc.weight_copy_bytes;
	out->layer_activations = memory_layer_activations(m, p, fw);
	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++)
		out->kind_activations[kind] = out->kind_full[kind] = 0.0;
	if (model_is_hybrid(m)) {
		out->layer_activations = 0.0;
		for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
			struct model km;

			model_kind_model(m, kind, &km);
			if (km.layers == 0)
				continue;
			out->kind_activations[kind] = memory_layer_activations(&km, p, fw);
			out->kind_full[kind] = layer_activations_full(&km, p, fw, true);
			out->layer_activations += (double)km.layers / m->layers * out->kind_activations[kind];
		}
	}
}

/* plan-cli hybrid: what one layer of @stage keeps, the mean over the
 * layers of the kinds its GPU holds (both stages of a DualPipe rank), or
 * @k's one layer of a transformer. */
static double
stage_layer_activations(const struct model *m, const struct plan *p, const struct memory_mode *k, int stage)
{
	int mirror = p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1 ? p->pp - 1 - stage : -1;
	double n = 0.0, act = 0.0;

	if (!model_is_hybrid(m))
		return k->layer_activations;
	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
		double c = pipeline_stage_kind_layers(m, p, stage, kind) +
			   (mirror >= 0 ? pipeline_stage_kind_layers(m, p, mirror, kind) : 0);

		n += c;
		act += c * k->kind_activations[kind];
	}
	return n > 0.0 ? act / n : 0.0;
}

/* plan-cli hybrid: the layer full recomputation re-materialises, the
 * largest kind's of a hybrid model. */
static double
stage_full_layer(const struct model *m, const struct plan *p, const struct framework *fw,
		 const struct memory_mode *k)
{
	double most = 0.0;

	if (!model_is_hybrid(m))
		return layer_activations_full(m, p, fw, true);
	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++)
		most = fmax(most, k->kind_full[kind]);
	return most;
}

void
memory_stage(const struct model *m, const struct plan *p,
	     const struct cluster *c, const struct framework *fw, int stage, double params,
	     double expert_params, struct memory_use *out)
{
	struct memory_mode k;

	memory_mode_init(m, p, c, fw, &k);
	memory_stage_in_mode(m, p, c, fw, &k, stage, params, expert_params, out);
}

/* The embedding and output-layer parameters @stage holds, as
 * estimate.c's stage_params places them (plan-cli reviewpp: the output
 * layer on the head rank, rank 0 in a V; both ends on DualPipe's end
 * ranks; a tied embedding's copy where the rank does not hold it). */
double
memory_stage_ends_params(const struct model *m, const struct plan *p, int stage)
{
	bool first = pipeline_end_share(p, stage, false) > 0.0, last = pipeline_end_share(p, stage, true) > 0.0;
	bool dual = p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1;
	double ends = first ? model_params_embedding(m) : 0.0;

	if (last)
		ends += model_params_head(m) +
			(m->tied_embeddings && p->pp > 1 && !(first && !dual) ? (double)m->vocab * m->hidden : 0.0);
	/* MTP's copy of an untied embedding on a pipelined last stage that
	 * does not hold the embedding (stage_params, DeepSeek-V3 Sec. 2.2). */
	if (last && m->mtp_layers > 0 && !m->tied_embeddings && p->pp > 1 && !first)
		ends += (double)m->vocab * m->hidden;
	return ends;
}

/* plan-cli bf16ends: the parameters on @stage's GPU of the layers that
 * run in bf16 in an fp8 or fp4 plan (pipeline_stage_bf16_layers; both
 * stages of a DualPipe rank), split as estimate.c's stage_params splits
 * a layer's: the dense part tp ways, returned, and the routed experts
 * ep x etp ways, in @expert. Megatron-Core builds them outside
 * fp8_model_init (fp8_utils.py get_fp8_context): no fp8 copies. */
double
memory_stage_bf16_params(const struct model *m, const struct plan *p, int stage, double *expert)
{
	int n, moe = 0, mirror_moe = 0;
	double dense;

	*expert = 0.0;
	if (!plan_has_bf16_layers(p))
		return 0.0;
	n = pipeline_stage_bf16_layers(m, p, stage, &moe);
	if (p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1) {
		n += pipeline_stage_bf16_layers(m, p, p->pp - 1 - stage, &mirror_moe);
		moe += mirror_moe;
	}
	/* DSA's indexers: whole on each TP rank ("duplicated", dsa.py @d98e8a6) */
	dense = (n - moe) * model_params_per_layer(m) + n * (p->tp - 1.0) * model_dsa_indexer_params_per_layer(m);
	if (moe > 0) {
		/* latent projections: whole on each TP rank ("duplicated", moe_layer.py) */
		dense += moe * (model_params_layer_dense_part(m, true) + (p->tp - 1.0) * model_params_moe_latent_proj(m) +
				m->moe.shared_experts * model_params_shared_expert(m));
		*expert = moe * ((double)m->moe.experts / p->ep) * model_params_expert(m) / plan_etp(p);
	}
	return dense / p->tp;
}

/* The model states of @stage's GPU (weights, gradients, optimizer) into
 * @out, and what the fp8 recipe keeps beside them (returned). */
static double
memory_stage_states(const struct model *m, const struct plan *p, const struct framework *fw,
		    const struct memory_mode *k, int stage, double params, double expert_params,
		    struct memory_use *out)
{
	/* The gradient buffer holds the framework's reduce precision:
	 * Megatron's fp32 main_grad takes 4 bytes, not ZeRO's 2. */
	double gb = fw ? fw->reduce_bytes : 2.0;
	/* The optimizer's state: Adam's fp32 moments and master, 12 bytes
	 * (ZeRO's K), or less where the framework keeps less (framework
	 * optimizer_bytes: NeMo 1.x's distributed_fused_adam keeps only the
	 * 16 low bits of the fp32 master beside the bf16 weight, 10). */
	double ob = fw ? fw->optimizer_bytes : 12.0;
	bool fp8 = plan_low_precision(p);
	/* fp8attn: the fp8 copies are of the transformer layers' linear
	 * weights, not the embedding or the output layer (TE's modules
	 * replace the layers' Linear only): the stage's parameters less its
	 * ends (estimate_stage_params() adds them). */
	double ends = memory_stage_ends_params(m, p, stage) / p->tp;
	double fp8_meta = 0.0, copy, w16, expert16 = 0.0;

	/* plan-cli muon: Muon keeps one fp32 momentum (momentum_buffer, a
	 * zeros_like of the fp32 main gradient: Emerging-Optimizers
	 * orthogonalized_optimizer.py) where Adam keeps two moments, 4
	 * bytes less a matrix, on the hidden layers' matrices; the
	 * embedding and output layer stay on Adam (_is_muon_excluded,
	 * Megatron-LM d98e8a6 emerging_optimizers.py). The norms' few
	 * vectors are counted with the matrices. */
	bool muon = fw && fw->optimizer == FRAMEWORK_OPTIMIZER_MUON;
	double muon_ob = muon ? fmax(0.0, ob - 4.0) : ob;
	double dense = params - expert_params;
	double dense_ob = muon && dense > 0.0 ? (muon_ob * fmax(0.0, dense - ends) + ob * fmin(ends, dense)) / dense : ob;

	/* plan-cli bf16ends: nor of its layers in bf16. */
	ends += memory_stage_bf16_params(m, p, stage, &expert16);

	double d = p->mics_group > 0 ? p->mics_group : (double)p->dp * p->cp;

	/* ZeRO (Rajbhandari et al. 2020, Sec. 5): 2 + 2 + 12 bytes per
	 * parameter, the 12 optimizer bytes sharded from stage 1, the 2
	 * gradient bytes from stage 2, the 2 weight bytes at stage 3; MiCS
	 * shards over its partition group instead (16 Psi / G at stage 3). */
	out->weights = out->gradients = out->optimizer = 0.0;
	/* A 16-bit weight beside its copies (2 bytes more), or fp8 primary
	 * weights (framework fp8_params: NeMo's fp8_params, TE's
	 * fp8_model_init), the copies alone. */
	/* framework master_weights_only: FSDP2 keeps the fp32 shard alone
	 * ("The optimizer step uses the sharded parameter in the original
	 * dtype", MixedPrecisionPolicy, torch/distributed/fsdp/_fully_shard/
	 * _fsdp_api.py), and so does FSDP1, whose 16-bit shard _mp_shard lives
	 * only while it is gathered (FlatParamHandle.post_unshard frees it,
	 * torch/distributed/fsdp/_flat_param.py v2.1-v2.3): no 16-bit weight
	 * at ZeRO-3. fp8_weight_recast:
	 * torchao's Float8Linear casts the weight at each use and saves the
	 * high-precision one for its backward (torchao/float8/
	 * float8_linear.py, matmul_with_hp_or_float8_args): no fp8 copy. */
	w16 = fw && fw->master_weights_only && p->zero >= 3 ? 0.0 : 2.0;
	/* The optimizer steps that fp32 shard itself, so its sharded gradient
	 * is kept in the parameter's dtype, whatever the reduction's: FSDP1
	 * casts the reduce-scattered gradient back
	 * (_cast_grad_to_param_dtype, "so that the optimizer step runs with
	 * that dtype", torch/distributed/fsdp/_runtime_utils.py v2.0-v2.3,
	 * fully_sharded_data_parallel.py v1.13; MixedPrecision's
	 * keep_low_precision_grads, default False, skips it). */
	if (w16 == 0.0)
		gb = fmax(gb, 4.0);
	copy = fw && fw->fp8_params ? fmax(1.0, k->weight_copy_bytes) :
	       w16 + (fw && fw->fp8_weight_recast ? 0.0 : k->weight_copy_bytes);
	model_states(p->zero, fp8 ? fmax(0.0, params - expert_params - ends) : 0.0, copy, w16, gb, dense_ob,
		     params - expert_params, d, out);
	/* Expert states shard over the expert-DP ranks (MoE parallel folding;
	 * Megatron-Core's distributed optimizer keeps an expert-parallel
	 * buffer group over expert_data_parallel_group). */
	model_states(p->zero, fp8 ? fmax(0.0, expert_params - expert16) : 0.0, copy, w16, gb, muon_ob, expert_params,
		     plan_edp(p), out);
	/* Delayed scaling's amax histories and scales, 4 linear layers a
	 * transformer layer (QKV, projection, fc1, fc2; fp8_recipe.c). */
	if (fp8)
		fp8_meta = fp8_recipe_history_bytes(k->recipe, fw ? fw->fp8_amax_history : 1024.0,
						    model_linears_per_layer(m) * pipeline_rank_held_layers(p, m, stage));
	return fp8_meta;
}

/*
 * The logits and loss of one micro-batch on the stage that holds the
 * loss: Korthikanti et al. Sec. 4.3's 4 s b h / t (the final norm's
 * output) and framework loss_logit_memory bytes per logit, s b V / t of
 * them (4, the paper's fp32 logits, as Megatron-LM's
 * theoretical_memory_usage.py). plan-cli reviewmem: torchtitan's loss,
 * F.cross_entropy(pred.flatten(0, 1).float(), ...) (train.py at
 * pytorch/torchtitan 9dec370 l. 131-133, with del pred before the
 * backward; torchtitan/components/loss.py later), keeps the fp32
 * log-probabilities for the backward, whose first step holds them, their
 * gradient and the input's gradient, 12 bytes a logit; the forward's
 * bf16 logits, fp32 copy and log-probabilities are 10. plan-cli memloss:
 * Megatron's loss peaks at 6 (megatron-* and nemo-24.07 profiles): its
 * fp32 copy beside the caller's bf16 logits in the forward, the fp32
 * gradient beside its bf16 cast in the backward
 * (megatron/core/tensor_parallel/cross_entropy.py, core_v0.6.0 to
 * core_v0.14.0; mpu/cross_entropy.py at de7dc40f88). Both moments fall
 * while the micro-batch's activations are all kept, so the bytes add to
 * them; theoretical_memory_usage.py's 4 is the softmax kept in between.
 */
static double
memory_loss_bytes(const struct model *m, const struct plan *p, const struct framework *fw)
{
	double sb = (double)p->seq_len * p->micro_batch, per_logit = fw ? fw->loss_logit_memory : 4.0;

	return (4.0 * sb * m->hidden + per_logit * sb * m->vocab) / p->tp;
}

/*
 * plan-cli mtphead: what one MTP depth's head keeps at the main head's
 * loss peak: its 4 s b h / t (the depth's final_layernorm input and the
 * output layer's input) and loss_kept_memory bytes a logit, not the
 * loss_logit_memory of a loss in progress. Megatron-Core's
 * process_mtp_loss (transformer/multi_token_prediction.py at d98e8a6,
 * l. 1012-1067) computes each depth's logits and loss in the forward,
 * before the main head's (hybrid_model.py l. 591 then 631-649;
 * gpt_model.py l. 746 then 839); the bf16 logits are a local that the
 * next depth's rebinds (two depths' logits at once there, 4 (D - 1) +
 * 2 + 6 at the last: below the main head's peak) and the return drops,
 * and the loss's graph keeps only what the cross entropy saved:
 * Megatron-Core's
 * _VocabParallelCrossEntropy (tensor_parallel/cross_entropy.py l. 181)
 * and fused_cross_entropy.py (l. 119) the fp32 softmax, 4 bytes a logit;
 * TE 2.18's CrossEntropyFunction (pytorch/cross_entropy.py l. 62) its
 * fp32 gradient (pytorch/triton/cross_entropy.py l. 58), 4. So at the
 * main head's peak (its forward: bf16 logits beside the fp32 copy or
 * gradient; or its backward: the fp32 gradient beside its bf16 cast,
 * loss_logit_memory) the D finished heads add D x 4, not D x 6. A head
 * keeps no more than it held at its own peak, hence the fmin (TE 2.17
 * and older: the logits, gradient in place, 2 and 2).
 */
static double
memory_mtp_head_bytes(const struct model *m, const struct plan *p, const struct framework *fw)
{
	double sb = (double)p->seq_len * p->micro_batch;
	double kept = fw ? fmin(fw->loss_kept_memory, fw->loss_logit_memory) : 4.0;

	return (4.0 * sb * m->hidden + kept * sb * m->vocab) / p->tp;
}

/* plan-cli review15: of @stage's layers that a resolved plan recomputes
 * in full while the rest keep the stage's mode (stage_recompute_layers:
 * --recompute-layers, vpp 1, the stage's first k; Megatron's block
 * method, the first recompute_num_layers of each model chunk,
 * plan_block_layers), those in bf16. They keep their input alone
 * (memory_partial_recompute_bytes), bf16 or not: no linear input of
 * theirs to keep in 16 bits. */
static int
recomputed_bf16_layers(const struct model *m, const struct plan *p, int stage)
{
	int moe;

	return pipeline_prefix_bf16_layers(m, p, stage, p->stage_recompute_layers[stage], &moe);
}

/*
 * What one layer in bf16 keeps beyond an fp8 layer a micro-batch. Without
 * recompute modules, fp8_saved_bytes(): the linear inputs at 2 bytes
 * instead of the recipe's. With them (plan-cli review22), the two layers'
 * activations under the modules: a module drops the bf16 layer's 16-bit
 * tensors where it drops the fp8 layer's copies (mlp fc1's ln_out, fc1's
 * and fc2's inputs; layernorm's outputs; moe, moe_act, shared_experts),
 * so what it drops is kept in neither: Megatron-Core's recompute_modules
 * apply to every layer, bf16 or not (transformer_layer.py l. 537-539 at
 * d98e8a6; fp8_utils.py get_fp8_context only leaves the bf16 layers out
 * of the fp8 autocast).
 */
static double
bf16_layer_extra(const struct model *m, const struct plan *p, const struct framework *fw)
{
	struct plan b = *p;

	if (p->recompute != PLAN_RECOMPUTE_SELECTIVE || !p->recompute_modules)
		return fp8_saved_bytes(m, p, fw);
	b.precision = PLAN_PRECISION_BF16;
	return layer_activations_modules(m, &b, fw) - layer_activations_modules(m, p, fw);
}

/* plan-cli bf16ends: what @stage's layers in bf16 keep beyond the fp8
 * layers' activations a micro-batch, bf16_layer_extra() each where the
 * stage's mode keeps linear inputs (none, selective; not full
 * recomputation or per-op checkpointing, which keep none). */
static double
bf16_layers_extra(const struct model *m, const struct plan *p, const struct framework *fw, int stage)
{
	int n, moe, mirror_moe;

	if (p->recompute == PLAN_RECOMPUTE_FULL || (p->recompute == PLAN_RECOMPUTE_SELECTIVE && !p->recompute_modules &&
						    fw && fw->selective_recompute == FRAMEWORK_SAC_OP))
		return 0.0;
	n = pipeline_stage_bf16_layers(m, p, stage, &moe);
	if (p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1)
		n += pipeline_stage_bf16_layers(m, p, p->pp - 1 - stage, &mirror_moe);
	if (p->custom_recompute_layers)
		n -= recomputed_bf16_layers(m, p, stage);
	return n * bf16_layer_extra(m, p, fw);
}

/* What one MTP depth's layers keep a micro-batch: a layer of the last
 * layer's kind (DeepSeek-V3), or, plan-cli hybridmtp, a hybrid model's
 * mtp_pattern layers at their kinds' (Megatron-Core's HybridStack of the
 * pattern; every depth its own activations, shared parameters or not). */
static double
mtp_depth_activations(const struct model *m, const struct memory_mode *k)
{
	double act = 0.0;

	if (!model_is_hybrid(m))
		return k->layer_activations;
	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++)
		act += model_mtp_kind_layers(m, kind) * k->kind_activations[kind];
	return act;
}

/*
 * plan-cli mtpmem: what an MTP depth keeps a micro-batch besides its
 * layers and its head (the depth's final_layernorm input and the output
 * layer's input, memory_loss_bytes' 4 s b h). Megatron-Core's
 * MultiTokenPredictionLayer (multi_token_prediction.py at d98e8a6,
 * _get_embeddings and _concat_embeddings): enorm (TENorm) saves its
 * input, the shifted tokens' embedding (2 h bytes a token), hnorm its
 * input, the hidden states it is handed (the main decoder's normed
 * output for the first depth, the previous depth's final_layernorm
 * output after it: 2 h), and eh_proj (TEColumnParallelLinear) the
 * concatenation of the two normed halves, 2 h elements (4 h bytes in
 * bf16; a recipe's quantised copy where the depth runs under the fp8
 * context, _proj_and_transformer_layer: fp8_recipe_saved_input_bytes).
 * torch.cat keeps nothing for its backward; the layers' own first norm
 * keeps eh_proj's output (their 4 s b h). Replicated over TP unless SP
 * (the norms and eh_proj's input are the rank's s / t tokens then).
 * Under full recomputation the depth is one checkpoint
 * (_checkpointed_forward), whose inputs the layers' count stands for.
 */
static double
mtp_depth_io_bytes(const struct model *m, const struct plan *p, const struct framework *fw)
{
	double sb = (double)p->seq_len * p->micro_batch, h = m->hidden;
	double cat = plan_low_precision(p) ? fp8_recipe_saved_input_bytes(p, fw) : 2.0;

	if (p->recompute == PLAN_RECOMPUTE_FULL)
		return 0.0;
	return sb * (2.0 * h + 2.0 * h + 2.0 * h * cat) / (p->sequence_parallel ? p->tp : 1.0);
}

/* The activations @stage's GPU keeps for its micro-batches in flight. */
static double
memory_stage_activations(const struct model *m, const struct plan *p, const struct framework *fw,
			 const struct memory_mode *k, int stage)
{
	double t = p->tp;
	double sbh = (double)p->seq_len * p->micro_batch * m->hidden;
	double stored = pipeline_stored_layer_microbatches(m, p, stage);
	double act;

	/* Stage i of 1F1B holds min(m, p - i) micro-batches in flight: the
	 * first stage the most (Narayanan et al. SC21, Sec. 2.2). The caller
	 * passes the stage's own recompute mode in p->recompute. */
	act = stored * stage_layer_activations(m, p, k, stage);
	/* plan-cli bf16ends: a layer in bf16 keeps its linear inputs in 16
	 * bits, what the fp8 recipe saves of the others' (where the mode
	 * keeps them: memory_layer_activations). */
	if (plan_has_bf16_layers(p) && pipeline_rank_held_layers(p, m, stage) > 0)
		act += stored * bf16_layers_extra(m, p, fw, stage) / pipeline_rank_held_layers(p, m, stage);
	/* Full recomputation re-materialises one layer at a time. */
	if (p->recompute == PLAN_RECOMPUTE_FULL) {
		/* plan-cli recomp: Megatron's uniform method
		 * (transformer_block.py, _checkpointed_forward, core_r0.13.0)
		 * checkpoints groups of N layers: a chunk of L layers keeps
		 * ceil(L / N) inputs per micro-batch, and a group's N layers
		 * are re-materialised together in its backward. */
		int n = plan_uniform_group(p), most = 0;
		double layers = plan_stage_layers(p, m, stage);

		if (n > 1 && layers > 0) {
			double groups = 0.0;

			for (int j = 0; j < p->vpp; j++) {
				int l = pipeline_chunk_layers(p, m, pipeline_stage_chunk(p, stage, j));

				groups += ceil((double)l / n);
				most = l > most ? l : most;
			}
			act *= groups / layers;
		}
		/* A stage of no layer (the embedding or the loss alone:
		 * --stage-layers 0,...) re-materialises none. */
		if (layers > 0)
			act += (n < most ? n : most > 0 ? most : 1) * stage_full_layer(m, p, fw, k);
	}
	/* --recompute-layers: the stage's first layers recompute in full. */
	if (p->custom_recompute_layers)
		act += memory_partial_recompute_bytes(m, p, fw, stage, p->stage_recompute_layers[stage]);
	/* Activation offloading (Transformer Engine's default scheduling,
	 * docs/features/other_optimizations/cpu_offloading: "At most
	 * (model_layers - num_layers) sets of activations are on GPU at any
	 * time"): the offloaded layers' activations of the micro-batches in
	 * flight live in host memory (pp 1: one micro-batch, plan_validate). */
	if (p->activation_offload_layers > 0)
		act -= p->activation_offload_layers * pipeline_layer_microbatches(m, p, stage) * k->layer_activations;
	/* Korthikanti et al. Sec. 4.3: embedding dropout on the first stage
	 * (s*b*h*p/t over the in-flight micro-batches), and the logits, loss
	 * and their fp32 copies on the last, about 4*s*b*h/t*(1 + V/h). */
	if (pipeline_end_share(p, stage, false) > 0.0 && m->dropout)
		act += sbh * (p->pp < plan_microbatches(p) ? p->pp : plan_microbatches(p)) /
		       (p->sequence_parallel ? t : 1.0);
	/* The loss's rank holds one micro-batch's logits at a time (DualPipe:
	 * both end ranks, each the loss of one direction; reviewpp). */
	if (pipeline_end_share(p, stage, true) > 0.0)
		act += memory_loss_bytes(m, p, fw);
	/* Multi-token prediction (DeepSeek-V3, arXiv:2412.19437, Sec. 2.2):
	 * the last stage's D modules keep a layer's activations for each
	 * micro-batch in flight there, and their own head. Every depth's loss
	 * graph stays alive until the backward: Megatron-Core's
	 * process_mtp_loss (multi_token_prediction.py at d98e8a6) attaches
	 * each to the main hidden states by MTPLossAutoScaler, so all D heads
	 * keep what their loss saved beside the main head's peak
	 * (memory_mtp_head_bytes; plan-cli mtphead). */
	if (pipeline_end_share(p, stage, true) > 0.0 && m->mtp_layers > 0)
		act += m->mtp_layers * (pipeline_head_microbatches(m, p, stage) *
						(mtp_depth_activations(m, k) + mtp_depth_io_bytes(m, p, fw)) +
					memory_mtp_head_bytes(m, p, fw));
	/* ZB-H1's micro-batches whose W pass is pending (plan-cli pipe2). */
	return act + pipeline_deferred_w_bytes(m, p, stage);
}

/*
 * plan-cli ubuf: Transformer Engine's Userbuffers, the buffers its TP
 * communication overlap (Megatron's --tp-comm-overlap) registers once a
 * process, whatever the layers, model chunks or micro-batches.
 * Megatron-LM d98e8a6 (training/initialize.py l. 194-271,
 * _initialize_tp_communicators, called once, from initialize_megatron
 * l. 164-166) and Megatron-Bridge 067f987 (training/initialize.py
 * l. 351-375) pass
 * initialize_ub the shape [seq_len x micro_batch / cp, hidden]: the full
 * sequence of the rank's CP shard, not over tp. TE v2.18's initialize_ub
 * (pytorch/module/base.py l. 312-336) builds one communicator a GEMM:
 * 4 ring-exchange all-gathers (qkv_fprop, fc1_fprop, proj_dgrad,
 * fc2_dgrad), 2 pipelined reduce-scatters (proj_fprop, fc2_fprop), 4
 * bulk (qkv_dgrad and fc1_dgrad all-gathers, qkv_wgrad and fc1_wgrad
 * reduce-scatters) and 2 external all-gathers (proj_wgrad, fc2_wgrad,
 * from v2.7; TE v1.0 to v2.6 have 10, 6 all-gathers): the framework's
 * userbuffers_allgather and userbuffers_reduce_scatter. Each registers
 * one buffer of that shape (common/comm_gemm_overlap/
 * comm_gemm_overlap.cpp l. 419-425 and 813-824).
 * plan-cli ubrs: a reduce-scatter a tp_comm_overlap_cfg runs by ring
 * exchange (Megatron-Bridge 067f987's fp8 presets, comm_overlap.py,
 * e.g. userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192's proj_fprop
 * and fc2_fprop) is a CommOverlapP2PBase with comm_type RS, which
 * registers 2t - 1 chunks of a t-th of the shape, t the TP size, to hold
 * the received GEMM chunk outputs until the reduction
 * (comm_gemm_overlap.cpp v2.18 l. 813-821: buffer_bytes / tp_size *
 * (2 tp_size - 1); the same in TE v1.6's pytorch/csrc/
 * comm_gemm_overlap.h l. 574-580; TE before v1.6 had no ring-exchange
 * reduce-scatter): the framework's userbuffers_reduce_scatter_ring_exchange
 * of the reduce-scatters. aggregate (2X chunks in the all-gather's loop)
 * leaves every buffer as it is (it only sets _aggregate, l. 809). The
 * buffer is uint8 for an all-gather under fp8 (fp8_buf, base.py
 * l. 367 and 448-452: any fp8 recipe, since Megatron passes
 * UserBufferQuantizationMode.FP8 for every --fp8-format) and bf16
 * otherwise (initialize_ub's dtype, which Megatron leaves at bf16; fp4
 * runs UserBufferQuantizationMode.NONE). A reduce-scatter's buffer is
 * uint8 only where the config's fp8_buf is true (base.py l. 539-544, the
 * same test from v1.6: fp8_buf and the name in the default pipeline list,
 * which proj_fprop and fc2_fprop always are, whatever method the config
 * gives); TE's default config and Megatron-Bridge's fp8 presets with
 * ring-exchange reduce-scatters leave it false: bf16. An fp8 plan with
 * bf16 first or
 * last layers adds the NONE set, all bf16 (Megatron-LM's initialize.py
 * l. 229-246 from TE 2.7, Megatron-Bridge's l. 357-371 from TE 2.8).
 * @p is the CP rank's plan, as memory_stage's callers pass it
 * (plan_make_cp_local: p->seq_len is already s / cp).
 */
double
memory_userbuffers_bytes(const struct model *m, const struct plan *p, const struct framework *fw)
{
	double elements = (double)p->seq_len * p->micro_batch * m->hidden;
	double ag = fw ? fw->userbuffers_allgather : 0.0, rs = fw ? fw->userbuffers_reduce_scatter : 0.0;
	double ring = fw ? fw->userbuffers_reduce_scatter_ring_exchange : 0.0;
	bool fp8 = p->precision == PLAN_PRECISION_FP8;
	double t = p->tp, rs_buffers, bytes;

	if (!p->tp_overlap || !p->sequence_parallel || p->tp < 2)
		return 0.0;
	/* In buffers of the shape: a pipelined or bulk one 1, a ring-exchange
	 * one (2t - 1) / t. */
	rs_buffers = (rs - ring) + ring * (2.0 * t - 1.0) / t;
	bytes = elements * (ag * (fp8 ? 1.0 : 2.0) + rs_buffers * 2.0);
	if (fp8 && plan_has_bf16_layers(p))
		bytes += elements * (ag + rs_buffers) * 2.0;
	return bytes;
}

/*
 * plan-cli cpag: Transformer Engine's AttnFuncWithCPAndKVAllGather
 * (context_parallel.py @d0067d0) holds, through one layer's attention
 * backward, the gathered K and V (l. 3788-3789, cp s b rows each) and the
 * full-sequence dK and dV it accumulates before the reduce-scatter
 * (torch.zeros of k_shape[0] x cp_size rows, l. 3768-3777), 16-bit (the
 * forward's nominal dtype): 2 cp s b (K + V) bytes on top of the saved
 * activations, per KV head on the TP rank. DSA gathers its own (kept:
 * dsa_cp_gathered_bytes), no transient here.
 */
double
memory_cp_allgather_transient(const struct model *m, const struct plan *p)
{
	double kv = m->kv_heads >= p->tp ? (double)m->kv_heads / p->tp : 1.0;

	if (p->cp <= 1 || p->cp_method != PLAN_CP_ALLGATHER || model_has_dsa(m) ||
	    !model_has_part(m, MODEL_PART_ATTENTION))
		return 0.0;
	return 2.0 * 2.0 * p->cp * (double)p->seq_len * p->micro_batch * kv *
	       (model_qk_head_dim(m) + model_v_head_dim(m));
}

void
memory_stage_in_mode(const struct model *m, const struct plan *p, const struct cluster *c,
		     const struct framework *fw, const struct memory_mode *k, int stage, double params,
		     double expert_params, struct memory_use *out)
{
	double t = p->tp;
	double fp8_meta = memory_stage_states(m, p, fw, k, stage, params, expert_params, out);

	out->activations = memory_stage_activations(m, p, fw, k, stage);

	out->other = c->gpu.reserved_bytes + fp8_meta + memory_zero3_transient(m, p, fw, stage) +
		     memory_cp_allgather_transient(m, p);
	/* DeepEP's or HybridEP's buffers, on a rank that dispatches. */
	if (pipeline_stage_moe_layers(m, p, stage) > 0)
		out->other += ep_dispatcher_buffer_bytes(m, p, c, fw);
	if (p->zero >= 3) {
		/* Megatron-FSDP with fsdp_double_buffer (Megatron-Core 0.14,
		 * megatron/core/distributed/fsdp/src/megatron_fsdp/
		 * param_and_grad_buffer.py, ParamAndGradBuffer: weight_alloc and
		 * main_grad_alloc are each a FixedPoolAllocator of
		 * UB_BUFFER_NUM = 2 units) also keeps two unsharded gradient
		 * units for good, in the main-grad dtype: fp32, or the
		 * parameters' bf16 with --grad-reduce-in-bf16 (reduce_bytes). */
		if (fw && fw->fsdp_double_buffer && model_is_hybrid(m))
			out->other += hybrid_fsdp_grad_buffers(m, p, fw, stage) / t;
		else if (fw && fw->fsdp_double_buffer)
			out->other += 2.0 * fw->reduce_bytes * model_params_per_layer(m) / t;
	}
	/* plan-cli reviewmem: DeepSpeed's ZeRO optimizers (contiguous_gradients,
	 * the default) copy each gradient into an IPG bucket of
	 * reduce_bucket_size elements in the communication dtype: ZeRO-3 keeps
	 * one for good (deepspeed/runtime/zero/stage3.py at deepspeedai/
	 * DeepSpeed v0.11.1 l. 463, __ipg_bucket_flat_buffer; one a dtype at
	 * edaa722 l. 733), ZeRO-1/2 one through each backward, two with
	 * overlap_comm (stage_1_and_2.py at edaa722 l. 2502-2511,
	 * setup_buckets), as v0.3-v0.9's ZeRO-3 did (stage3.py at v0.5.0 l.
	 * 2966-2976; overlap_comm on by default for stage 3, constants.py). */
	if (fw && p->zero >= 1 && fw->grad_bucket_buffers > 0)
		out->other += fw->grad_bucket_buffers * fw->grad_bucket * fw->reduce_bytes;
	out->compression = 0.0;
	out->userbuffers = memory_userbuffers_bytes(m, p, fw);
	out->total = out->weights + out->gradients + out->optimizer + out->activations + out->other + out->userbuffers;
}
