#include "plan/flops.h"
#include "plan/mixer.h"
#include "plan/pipeline.h"

/* Matrix parameters of one layer: what a token multiplies by (2 FLOPs
 * each). Gated attention's gate is in the attention's (model.c), as
 * Megatron counts it: gate_projection_size = query_projection_size in
 * the QKV term of transformer_flops (megatron/training/training.py
 * @d98e8a6); its sigmoid-multiply, element-wise, counts nothing. */
static double
matrix_params_per_layer(const struct model *m)
{
	double h = m->hidden;

	return model_attention_matrix_params(m) + (m->gated_mlp ? 3.0 : 2.0) * h * m->ffn_hidden;
}

/* Matrix parameters a token meets in an MoE layer: attention, the router
 * and its top_k routed plus the shared experts (Fedus et al. 2021).
 * Latent MoE (moe_latent_size): the routed experts run on the latent
 * width l, and the two projections h -> l and l -> h add 2 h l, as
 * Megatron-Bridge's moe_layer_flops counts them (4 T h l forward:
 * src/megatron/bridge/training/utils/flop_utils.py @067f987, and
 * Megatron-LM's training.py @d98e8a6); the shared experts stay on h. */
static double
matrix_params_moe_layer(const struct model *m)
{
	double h = m->hidden, w = model_moe_width(m), g = m->gated_mlp ? 3.0 : 2.0;
	double dense_mlp = g * h * m->ffn_hidden;
	double routed = g * w * m->moe.expert_ffn_hidden, shared = g * h * m->moe.expert_ffn_hidden;
	double latent = m->moe.latent_size > 0 ? 2.0 * h * m->moe.latent_size : 0.0;

	return matrix_params_per_layer(m) - dense_mlp + h * m->moe.experts + m->moe.top_k * routed +
	       m->moe.shared_experts * shared + latent;
}

/* The attention scores and their product with V, per token: 2 s a
 * (d_qk + d_v), which is Narayanan et al.'s 4 s h when d_qk = d_v = h/a.
 * A sliding window of w tokens: min(s, w) keys a query in its layers,
 * the same convention (no causal discount), averaged over the layers. */
static double
attention_flops_per_token(const struct model *m, int seq_len)
{
	return 2.0 * seq_len * (double)m->heads * (model_qk_head_dim(m) + model_v_head_dim(m)) *
	       model_attention_key_fraction(m, seq_len);
}

/* Unfused attention computes every score and masks the window's (compute.c). */
static double
unfused_attention_flops_per_token(const struct model *m, int seq_len)
{
	return 2.0 * seq_len * (double)m->heads * (model_qk_head_dim(m) + model_v_head_dim(m));
}

double
flops_layer_forward_per_token(const struct model *m, int seq_len, bool moe)
{
	double h = m->hidden, attn = attention_flops_per_token(m, seq_len), f = 0.0;

	if (!m->parts)
		return (moe ? 2.0 * matrix_params_moe_layer(m) : 2.0 * matrix_params_per_layer(m)) + attn;
	if (model_has_part(m, MODEL_PART_ATTENTION))
		f += 2.0 * model_attention_matrix_params(m) + attn;
	if (model_has_part(m, MODEL_PART_MLP))
		f += 2.0 * (moe ? matrix_params_moe_layer(m) - model_attention_matrix_params(m)
				: (m->gated_mlp ? 3.0 : 2.0) * h * m->ffn_hidden);
	f += mixer_model_flops(m, 1.0); /* 0 without a mixer */
	return f;
}

double
flops_forward_per_token(const struct model *m, int seq_len)
{
	double attn = attention_flops_per_token(m, seq_len);
	int moe = model_moe_layers(m);

	/* plan-cli hybrid: each kind's layers at their kind model's FLOPs, the
	 * logits once (Megatron's hybrid_flops, training.py). */
	if (model_is_hybrid(m)) {
		double logits = 2.0 * (double)m->hidden * m->vocab, f = logits;

		for (int k = 0; k < MODEL_KIND_COUNT; k++) {
			struct model km;

			model_kind_model(m, k, &km);
			if (km.layers > 0)
				f += flops_forward_per_token(&km, seq_len) - logits;
		}
		return f;
	}

	if (m->parts) /* a hybrid model's kind model: its layers of one part */
		return (m->layers - moe) * flops_layer_forward_per_token(m, seq_len, false) +
		       moe * flops_layer_forward_per_token(m, seq_len, true) + 2.0 * (double)m->hidden * m->vocab;
	double dense = 2.0 * matrix_params_per_layer(m) + attn;
	double sparse = moe ? 2.0 * matrix_params_moe_layer(m) + attn : 0.0;

	return (m->layers - moe) * dense + moe * sparse + 2.0 * (double)m->hidden * m->vocab;
}

/* DSA's lightning indexers, per token over a training step (not 3x a
 * forward: model_dsa_indexer_flops_per_token); 0 without DSA. */
static double
dsa_indexer_flops_per_token(const struct model *m, int seq_len, bool forward_only)
{
	return model_dsa_indexer_layers(m) * model_dsa_indexer_flops_per_token(m, seq_len, forward_only);
}

/* DSA: what the absorbed sparse kernel executes beyond the model FLOPs'
 * MLA count, per token and layer forward: 2 min(s, k) a ((kv_lora_rank +
 * qk_rope_head_dim + kv_lora_rank) - (d_qk + d_v)) (model_dsa_kernel_head_dims;
 * Megatron-Bridge's flop_utils.py @067f987 counts the DSA core in the
 * absorbed widths, sparse_mla_core_term); 0 without DSA. */
static double
dsa_absorbed_excess_per_token(const struct model *m, int seq_len)
{
	double dqk, dv;

	if (!model_has_dsa(m))
		return 0.0;
	model_dsa_kernel_head_dims(m, &dqk, &dv);
	return 2.0 * seq_len * model_dsa_key_fraction(m, seq_len) * m->heads *
	       (dqk + dv - model_qk_head_dim(m) - model_v_head_dim(m));
}

double
flops_model_per_iteration(const struct model *m, const struct plan *p)
{
	double tokens = (double)p->global_batch * p->seq_len;

	return tokens * (3.0 * flops_forward_per_token(m, p->seq_len) + dsa_indexer_flops_per_token(m, p->seq_len, false));
}

/*
 * torchtitan's per-op selective recomputation (compute.c's
 * op_sac_recompute_time), per token averaged over the layers: k and the
 * output projection again in every layer (MLA: half its projections in
 * place of k), w3 (w2 without a gated MLP) in the dense layers, an MoE
 * layer's routed experts over their cf * k rows a token (torch._grouped_mm
 * is not saved) and its shared experts' w1 and w2 (fc1 alone without a
 * gate), and without flash attention the attention scores and their
 * product with V, which nothing saves; 2 FLOPs a weight.
 */
static double
op_sac_flops_per_token(const struct model *m, const struct plan *p)
{
	double h = m->hidden, kvd = (double)m->kv_heads * model_head_dim(m);
	double o = (double)m->heads * model_v_head_dim(m) * h;
	double k = m->attention == MODEL_ATTN_MLA ? 0.5 * (model_attention_matrix_params(m) - o) : h * kvd;
	double dense = (double)(m->layers - model_moe_layers(m)) / m->layers;
	double moe = 0.0;

	if (model_is_moe(m)) {
		double f = m->moe.expert_ffn_hidden, sf = f * m->moe.shared_experts, g = m->gated_mlp ? 1.0 : 0.0;

		moe = (1.0 - dense) * h * (m->moe.capacity_factor * m->moe.top_k * (2.0 + g) * f + (1.0 + g) * sf);
		if (m->moe.latent_size > 0) /* the routed experts' fc1 input is the latent width */
			moe = (1.0 - dense) * (m->moe.latent_size * m->moe.capacity_factor * m->moe.top_k * (2.0 + g) * f +
					       h * (1.0 + g) * sf);
	}
	return 2.0 * (k + o + dense * h * m->ffn_hidden + moe) +
	       (p->flash_attention ? 0.0 : unfused_attention_flops_per_token(m, p->seq_len));
}

double
flops_hardware_per_iteration(const struct model *m, const struct plan *p, const struct framework *fw)
{
	double tokens = (double)p->global_batch * p->seq_len;
	/* DSA: full recomputation repeats the indexers' forward too, and the
	 * sparse kernel's absorbed excess (dsa_absorbed_excess_per_token). */
	double excess = dsa_absorbed_excess_per_token(m, p->seq_len);
	double full = (flops_forward_per_token(m, p->seq_len) - 2.0 * (double)m->hidden * m->vocab +
		       dsa_indexer_flops_per_token(m, p->seq_len, true)) / m->layers + excess;
	/* core_attn (Megatron-Core): a fused kernel's forward again too. */
	double selective = fw && fw->selective_recompute == FRAMEWORK_SAC_OP ? op_sac_flops_per_token(m, p) :
			   !p->flash_attention ? unfused_attention_flops_per_token(m, p->seq_len) :
			   fw && fw->selective_recompute == FRAMEWORK_SAC_CORE_ATTN ?
						 attention_flops_per_token(m, p->seq_len) + excess :
						 0.0;
	/* DSA: the hardware runs the absorbed kernel, forward and backward. */
	double extra = 3.0 * m->layers * excess;

	/* A layer of one part without attention: selective recomputation
	 * (the attention core) repeats nothing; torchtitan's per-op policy
	 * runs no hybrid model. */
	if (m->parts && !model_has_part(m, MODEL_PART_ATTENTION))
		selective = 0.0;
	/* plan-cli hybrid: only its attention layers have the core, the mean layer a share of it. */
	if (model_is_hybrid(m))
		selective *= (double)model_kind_layers(m, MODEL_KIND_ATTENTION) / m->layers;

	/* Korthikanti et al. 2022 Sec. 5: full recomputation repeats each
	 * layer's forward; selective repeats only QK^T and the product with V.
	 * Stages may differ (per-stage recompute). */
	for (int s = 0; s < p->pp; s++) {
		int r = plan_stage_recompute(p, s);
		/* plan-cli pipeline: an uneven layout's own layers. */
		double layers = pipeline_even_layout(p) ? (double)m->layers / p->pp : plan_stage_layers(p, m, s);

		/* --recompute-layers: the first layers of the stage in full. */
		if (p->custom_recompute_layers && r != PLAN_RECOMPUTE_FULL) {
			double k = plan_stage_recompute_layers(p, m, s);

			extra += k * full + (layers - k) * (r == PLAN_RECOMPUTE_SELECTIVE ? selective : 0.0);
		} else if (r == PLAN_RECOMPUTE_FULL)
			extra += layers * full;
		else if (r == PLAN_RECOMPUTE_SELECTIVE)
			extra += layers * selective;
	}
	return flops_model_per_iteration(m, p) + tokens * extra;
}

double
flops_narayanan_eq3(const struct model *m, double global_batch, double seq_len)
{
	double h = m->hidden, L = m->layers, V = m->vocab;

	return 96.0 * global_batch * seq_len * L * h * h *
	       (1.0 + seq_len / (6.0 * h) + V / (16.0 * L * h));
}
