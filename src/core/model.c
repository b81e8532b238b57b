#include <math.h>
#include <stddef.h>
#include <string.h>

#include "plan/model.h"

const char *const model_attention_names[] = { "mha", "mla", NULL };
const char model_kind_symbols[] = "M*-EG";
const char *const model_dsa_loss_names[] = { "sparse", "dense", "none", NULL };

static double hybrid_layers_params(const struct model *m, bool active);

bool
model_is_hybrid(const struct model *m)
{
	return m->hybrid_pattern[0] != '\0';
}

int
model_layer_kind(const struct model *m, int layer)
{
	const char *at = strchr(model_kind_symbols, m->hybrid_pattern[layer - 1]);

	return at ? (int)(at - model_kind_symbols) : MODEL_KIND_MAMBA;
}

int
model_kind_layers_between(const struct model *m, int kind, int first, int last)
{
	int n = 0;

	if (first < 1)
		first = 1;
	if (last > m->layers)
		last = m->layers;
	for (int l = first; l <= last; l++)
		n += model_layer_kind(m, l) == kind;
	return n;
}

int
model_kind_layers(const struct model *m, int kind)
{
	return model_kind_layers_between(m, kind, 1, m->layers);
}

void
model_kind_model(const struct model *m, int kind, struct model *out)
{
	static const int parts[MODEL_KIND_COUNT] = {
		[MODEL_KIND_MAMBA] = MODEL_PART_MAMBA,
		[MODEL_KIND_ATTENTION] = MODEL_PART_ATTENTION,
		[MODEL_KIND_MLP] = MODEL_PART_MLP,
		[MODEL_KIND_MOE] = MODEL_PART_MLP,
		[MODEL_KIND_GDN] = MODEL_PART_GDN,
	};

	*out = *m;
	out->hybrid_pattern[0] = '\0';
	/* The MTP block is the hybrid model's (estimate.c stage_add_mtp), not its kinds'. */
	out->mtp_layers = 0;
	out->mtp_pattern[0] = '\0';
	out->mtp_repeated = false;
	out->parts = parts[kind];
	out->layers = model_kind_layers(m, kind);
	if (kind == MODEL_KIND_MOE) {
		out->moe.every = 1;
		out->moe.first_dense_layers = 0;
	} else {
		memset(&out->moe, 0, sizeof(out->moe));
		out->moe.every = 1;
	}
}

int
model_mtp_kind_layers(const struct model *m, int kind)
{
	int n = 0;

	for (const char *c = m->mtp_pattern; *c; c++)
		n += *c == model_kind_symbols[kind];
	return n;
}

/* Megatron-Core's MultiTokenPredictionBlock._build_layers
 * (multi_token_prediction.py at d98e8a6): with mtp_use_repeated_layer one
 * MultiTokenPredictionLayer (norms, eh_proj, its layers) is built and its
 * forward loops over it mtp_num_layers times (layer_idx 0). */
int
model_mtp_param_depths(const struct model *m)
{
	return m->mtp_repeated && m->mtp_layers > 0 ? 1 : m->mtp_layers;
}

int
model_linears_per_layer(const struct model *m)
{
	return model_is_hybrid(m) || m->parts ? 2 : 4;
}

bool
model_has_part(const struct model *m, int part)
{
	return m->parts == 0 ? (part & (MODEL_PART_ATTENTION | MODEL_PART_MLP)) != 0 : (m->parts & part) != 0;
}

int
model_mamba_heads(const struct model *m)
{
	const struct model_mamba *x = &m->mamba;

	return x->heads > 0 ? x->heads : 2 * m->hidden / (x->head_dim > 0 ? x->head_dim : 64);
}

double
model_mamba_inner(const struct model *m)
{
	return (double)model_mamba_heads(m) * m->mamba.head_dim;
}

double
model_mamba_in_proj_dim(const struct model *m)
{
	return 2.0 * model_mamba_inner(m) + 2.0 * m->mamba.groups * (double)m->mamba.state_dim +
	       model_mamba_heads(m);
}

double
model_mamba_conv_dim(const struct model *m)
{
	return model_mamba_inner(m) + 2.0 * m->mamba.groups * (double)m->mamba.state_dim;
}

/*
 * Megatron-Core's MambaMixer.__init__ (mamba_mixer.py): in_proj
 * (h x in_proj_dim, no bias with --disable-bias-linear), conv1d_weight
 * (conv_dim x 1 x d_conv) and conv1d_bias (conv_dim), dt_bias, A_log and
 * D (one per head), the gated RMSNorm's weight (d_inner) and out_proj
 * (d_inner x h).
 */
double
model_params_mamba_mixer(const struct model *m)
{
	double h = m->hidden, inner = model_mamba_inner(m), conv = model_mamba_conv_dim(m);
	double p = h * model_mamba_in_proj_dim(m) + conv * (m->mamba.conv_kernel + 1.0) +
		   3.0 * model_mamba_heads(m) + inner + inner * h;

	if (m->bias)
		p += model_mamba_in_proj_dim(m) + h;
	return p;
}

double
model_gdn_qk_dim(const struct model *m)
{
	return (double)m->gdn.key_heads * m->gdn.key_head_dim;
}

double
model_gdn_v_dim(const struct model *m)
{
	return (double)m->gdn.value_heads * m->gdn.value_head_dim;
}

double
model_gdn_in_proj_dim(const struct model *m)
{
	return 2.0 * model_gdn_qk_dim(m) + 2.0 * model_gdn_v_dim(m) + 2.0 * m->gdn.value_heads;
}

double
model_gdn_conv_dim(const struct model *m)
{
	return 2.0 * model_gdn_qk_dim(m) + model_gdn_v_dim(m);
}

/*
 * Megatron-Core's _GDNBase.__init__ (ssm/gated_delta_net/common.py,
 * d98e8a6): in_proj (h x in_proj_dim, no bias: TransformerLayer builds
 * it as the self_attention module and passes no bias, whose default is
 * False),
 * conv1d (conv_dim x 1 x conv_kernel, conv_bias False), dt_bias and A_log
 * (one a value head), out_norm over one value head (its scale,
 * value_head_dim) and out_proj (v x h).
 */
double
model_params_gdn_mixer(const struct model *m)
{
	double h = m->hidden, v = model_gdn_v_dim(m);
	double p = h * model_gdn_in_proj_dim(m) + model_gdn_conv_dim(m) * m->gdn.conv_kernel +
		   2.0 * m->gdn.value_heads + m->gdn.value_head_dim + v * h;

	return p;
}

int
model_norms_per_layer(const struct model *m)
{
	return m->norms_per_layer > 0 ? m->norms_per_layer : 2;
}

int
model_norms_run(const struct model *m)
{
	return m->parallel_block ? model_norms_per_layer(m) : 2;
}

bool
model_layer_is_windowed(const struct model *m, int layer)
{
	const struct model_window *w = &m->sliding_window;
	size_t n = strlen(w->pattern);

	if (w->window <= 0 || layer <= w->first_global_layers)
		return false;
	return n == 0 || w->pattern[(size_t)(layer - w->first_global_layers - 1) % n] == 'L';
}

int
model_windowed_layers(const struct model *m)
{
	int n = 0;

	if (m->sliding_window.window <= 0)
		return 0;
	for (int l = 1; l <= m->layers; l++)
		n += model_layer_is_windowed(m, l);
	return n;
}

/* Query i (1-based) meets keys max(1, i - w + 1)..i: min(i, w) of them;
 * the first w queries sum to w (w + 1) / 2, the s - w after them w each. */
double
model_window_pairs(double s, double w)
{
	if (w >= s)
		return s * (s + 1.0) / 2.0;
	return s * w - w * (w - 1.0) / 2.0;
}

bool
model_has_dsa(const struct model *m)
{
	return m->attention == MODEL_ATTN_MLA && m->dsa.index_n_heads > 0;
}

/* Megatron-Core's is_dsa_skip_topk_layer (dsa.py @d98e8a6, lines 37-47)
 * negated, over the decoder's layers 1..L. */
int
model_dsa_indexer_layers(const struct model *m)
{
	int n = 0, freq = m->dsa.index_topk_freq > 0 ? m->dsa.index_topk_freq : 1;
	int off = m->dsa.index_skip_topk_offset > 1 ? m->dsa.index_skip_topk_offset : 1;

	if (!model_has_dsa(m))
		return 0;
	for (int l = 1; l <= m->layers; l++)
		n += (l - off > 0 ? l - off : 0) % freq == 0;
	return n;
}

/* DSAIndexer.__init__ (dsa.py @d98e8a6): linear_wq_b q_lora_rank (hidden
 * when None) -> H_I d_I, linear_wk hidden -> d_I, linear_weights_proj
 * hidden -> H_I, all bias-free and "duplicated" on every TP rank. */
double
model_dsa_indexer_matrix_params(const struct model *m)
{
	double h = m->hidden, hi = m->dsa.index_n_heads, di = m->dsa.index_head_dim;
	double qin = m->mla.q_lora_rank > 0 ? m->mla.q_lora_rank : h;

	if (!model_has_dsa(m))
		return 0.0;
	return qin * hi * di + h * di + h * hi;
}

double
model_dsa_key_fraction(const struct model *m, double s)
{
	if (!model_has_dsa(m) || s <= 0.0)
		return 1.0;
	return fmin(1.0, m->dsa.index_topk / s);
}

double
model_dsa_indexer_params_per_layer(const struct model *m)
{
	if (!model_has_dsa(m))
		return 0.0;
	return (model_dsa_indexer_matrix_params(m) + 2.0 * m->dsa.index_head_dim) * model_dsa_indexer_layers(m) /
	       m->layers;
}

/* DSAttention takes the absorbed layout (dsa.py @d98e8a6: absorbed_mla
 * when key.size(2) == 1 and the query's and key's last dimension is
 * kv_lora_rank + qk_pos_emb_head_dim; _run_sparse_attention's value is
 * key[..., :kv_lora_rank], up-projected by up_v_weight after), and
 * get_dsa_module_spec_for_backend builds AbsorbedMLASelfAttention around
 * it (experimental_attention_variant_module_specs.py @d98e8a6). */
void
model_dsa_kernel_head_dims(const struct model *m, double *dqk, double *dv)
{
	if (!model_has_dsa(m)) {
		*dqk = model_qk_head_dim(m);
		*dv = model_v_head_dim(m);
		return;
	}
	*dqk = (double)m->mla.kv_lora_rank + m->mla.qk_rope_head_dim;
	*dv = m->mla.kv_lora_rank;
}

/*
 * The lightning indexer of one layer, per token, after Megatron-Bridge's
 * DSA model FLOPs (src/megatron/bridge/training/utils/flop_utils.py
 * @067f987, the "dsa" branch; DeepSeek-V3.2 Eq. 1-2), in plan-cli's
 * convention of s keys a query (no causal discount; k for the sparse
 * ones, model_dsa_key_fraction):
 * - projections, 2 P forward; with the indexer loss their weight
 *   gradients too (x and the query latent are detached, dsa.py: no
 *   data gradient), 2 P more;
 * - the scores: H_I (d_I + 1) a key (q.k and the weighted head sum),
 *   2 s H_I (d_I + 1) forward over every key (top-k needs all of them);
 *   with the loss their backward, 4 H_I (d_I + 1) a key it touches: the
 *   k selected (sparse loss) or all s (dense);
 * - with the loss its target, the main attention's softmax over the same
 *   keys from detached Q and K, forward only, in the absorbed MLA width
 *   a (kv_lora_rank + qk_rope_head_dim) (absorbed_mla.py).
 */
double
model_dsa_indexer_flops_per_token(const struct model *m, double s, bool forward_only)
{
	const struct model_dsa *d = &m->dsa;
	double p, unit, ctx, fwd, bwd;

	if (!model_has_dsa(m))
		return 0.0;
	p = model_dsa_indexer_matrix_params(m);
	unit = (double)d->index_n_heads * (d->index_head_dim + 1.0);
	fwd = 2.0 * p + 2.0 * s * unit;
	if (d->indexer_loss == MODEL_DSA_LOSS_NONE)
		return fwd;
	ctx = d->indexer_loss == MODEL_DSA_LOSS_SPARSE ? s * model_dsa_key_fraction(m, s) : s;
	fwd += 2.0 * ctx * m->heads * ((double)m->mla.kv_lora_rank + m->mla.qk_rope_head_dim);
	bwd = 2.0 * p + 4.0 * ctx * unit;
	return forward_only ? fwd : fwd + bwd;
}

/* DSA: each query attends to min(i, k) keys (the top-k of its i causal
 * ones), the window's count with w = k (DeepSeek-V3.2 Sec. 2.1). A model
 * has DSA or a sliding window, never both (model_load.c). */
double
model_attention_work_fraction(const struct model *m, double s)
{
	int local = model_windowed_layers(m);
	double f;

	if (model_has_dsa(m))
		return s > 0.0 ? fmin(1.0, model_window_pairs(s, m->dsa.index_topk) / (0.5 * s * s)) : 1.0;
	if (local == 0)
		return 1.0;
	f = fmin(1.0, model_window_pairs(s, m->sliding_window.window) / (0.5 * s * s));
	return ((double)(m->layers - local) + local * f) / m->layers;
}

double
model_attention_key_fraction(const struct model *m, double s)
{
	int local = model_windowed_layers(m);

	if (model_has_dsa(m))
		return model_dsa_key_fraction(m, s);
	if (local == 0)
		return 1.0;
	return ((double)(m->layers - local) + local * fmin(1.0, m->sliding_window.window / s)) / m->layers;
}

bool
model_norm_has_shift(const struct model *m)
{
	return m->norm == MODEL_NORM_LAYERNORM && (m->bias || m->norm_bias);
}

int
model_head_dim(const struct model *m)
{
	return m->head_dim > 0 ? m->head_dim : m->hidden / m->heads;
}

int
model_qk_head_dim(const struct model *m)
{
	return m->attention == MODEL_ATTN_MLA ? m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim
					      : model_head_dim(m);
}

int
model_v_head_dim(const struct model *m)
{
	return m->attention == MODEL_ATTN_MLA ? m->mla.v_head_dim : model_head_dim(m);
}

/*
 * Megatron-Core's gated attention (TransformerConfig.attention_output_gate,
 * megatron/core/transformer/attention.py @d98e8a6, SelfAttention.__init__):
 * linear_qkv_out_dim += kv_channels x num_attention_heads, a gate of the
 * query's size out of the same fused projection. MLA has none
 * (MLATransformerConfig raises "Output gate is not supported for MLA yet").
 */
double
model_attention_gate_dim(const struct model *m)
{
	if (!m->attention_output_gate || m->attention == MODEL_ATTN_MLA)
		return 0.0;
	return (double)m->heads * model_head_dim(m);
}

double
model_qkv_dim(const struct model *m)
{
	double d = model_head_dim(m);

	return (double)m->heads * d + 2.0 * m->kv_heads * d + model_attention_gate_dim(m);
}

/*
 * MHA/GQA: Q and the output projection h x h, K and V h x kv_heads d,
 * and with the output gate its h x a d in the same QKV matrix.
 * MLA (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1): queries through a
 * rank-q_lora down-projection and an up-projection to a (nope + rope)
 * per head (or directly from h without q_lora_rank); keys and values
 * through one down-projection to kv_lora + rope (the shared rotary key)
 * and an up-projection to a (nope + v); the output from a v back to h.
 */
double
model_attention_matrix_params(const struct model *m)
{
	double h = m->hidden, a = m->heads;
	const struct model_mla *l = &m->mla;
	double qk = l->qk_nope_head_dim + l->qk_rope_head_dim, q;

	if (m->attention != MODEL_ATTN_MLA) {
		double d = model_head_dim(m);

		/* Q (h x a d), K and V (h x kv d), the gate (h x a d), output
		 * (a d x h): 4 h^2 for MHA without the gate. */
		return h * model_qkv_dim(m) + a * d * h;
	}
	q = l->q_lora_rank > 0 ? h * l->q_lora_rank + (double)l->q_lora_rank * a * qk : h * a * qk;
	return q + h * (l->kv_lora_rank + l->qk_rope_head_dim) +
	       (double)l->kv_lora_rank * a * (l->qk_nope_head_dim + l->v_head_dim) + a * l->v_head_dim * h;
}

/*
 * Parameter count per layer. For GPT (biases, LayerNorm, a = kv) this is
 * Megatron's 12h^2 + 13h (Narayanan et al. SC21, Sec. 5.1, the Psi
 * formula); with GQA the K and V projections shrink to kv_heads * d_head
 * columns, and a gated MLP has three h x ffn matrices (Touvron et al.
 * 2023, Llama 2, Sec. 2.2).
 */
double
model_params_per_layer(const struct model *m)
{
	double h = m->hidden;
	double f = m->ffn_hidden;
	double mlp_mats = m->gated_mlp ? 3.0 : 2.0;
	double attn = model_attention_matrix_params(m);
	double mlp = mlp_mats * h * f;
	/* Each norm a scale of h, and a LayerNorm's shift of h; a hybrid
	 * model's layer has one, before its one part (MambaLayer.norm,
	 * TransformerLayer's input_layernorm or pre_mlp_layernorm). */
	double norms = (m->parts ? 1 : model_norms_per_layer(m)) * (model_norm_has_shift(m) ? 2.0 : 1.0) * h;
	double attn_biases = 0.0, mlp_biases = 0.0, p = norms;

	/* plan-cli hybrid: a hybrid model's mean layer. */
	if (model_is_hybrid(m))
		return hybrid_layers_params(m, false) / m->layers;

	/* MLA normalises its two latent vectors (q_a_layernorm, kv_a_layernorm);
	 * QK-norm one query and one key head of each head's size. */
	if (m->attention == MODEL_ATTN_MLA)
		attn += m->mla.q_lora_rank + m->mla.kv_lora_rank;
	/* DSA: the indexers' matrices and k_norm's LayerNorm (weight and
	 * bias, 2 d_I), on the layers that build one, spread over the mean layer. */
	attn += model_dsa_indexer_params_per_layer(m);
	if (m->qk_norm)
		attn += 2.0 * model_head_dim(m);
	/* Attention sinks: one learned logit a query head (transformers'
	 * GptOssAttention.sinks, num_attention_heads; Megatron-Core's
	 * DotProductAttention.softmax_offset with softmax_type "learnable",
	 * dot_product_attention.py @d98e8a6, heads per partition). */
	if (m->attention_sinks)
		attn += m->heads;
	/* linear_qkv's bias is linear_qkv_out_dim long: the gate's columns too. */
	if (m->bias) {
		attn_biases = model_qkv_dim(m) + h;            /* qkv, proj */
		mlp_biases = (m->gated_mlp ? 2.0 * f : f) + h; /* fc1 (and gate), fc2 */
	} else if (m->qkv_bias) {
		attn_biases = model_qkv_dim(m);                /* Qwen2's q, k, v */
	}
	if (model_has_part(m, MODEL_PART_ATTENTION))
		p += attn + attn_biases;
	if (model_has_part(m, MODEL_PART_MLP))
		p += mlp + mlp_biases;
	if (model_has_part(m, MODEL_PART_MAMBA))
		p += model_params_mamba_mixer(m);
	if (model_has_part(m, MODEL_PART_GDN))
		p += model_params_gdn_mixer(m);
	return p;
}

bool
model_is_moe(const struct model *m)
{
	return m->moe.experts > 0;
}

bool
model_layer_is_moe(const struct model *m, int layer)
{
	if (model_is_hybrid(m))
		return model_layer_kind(m, layer) == MODEL_KIND_MOE;
	return model_is_moe(m) && layer > m->moe.first_dense_layers &&
	       (layer - m->moe.first_dense_layers) % m->moe.every == 0;
}

/* MoE layers among 1..@n: the layers fd + every, fd + 2 every, ... */
static int
moe_layers_upto(const struct model *m, int n)
{
	int fd = m->moe.first_dense_layers;

	return n > fd ? (n - fd) / m->moe.every : 0;
}

int
model_moe_layers_between(const struct model *m, int first, int last)
{
	if (model_is_hybrid(m))
		return model_kind_layers_between(m, MODEL_KIND_MOE, first, last);
	if (!model_is_moe(m) || last < first)
		return 0;
	return moe_layers_upto(m, last) - moe_layers_upto(m, first - 1);
}

int
model_moe_layers(const struct model *m)
{
	if (model_is_hybrid(m))
		return model_kind_layers(m, MODEL_KIND_MOE);
	return model_is_moe(m) ? (m->layers - m->moe.first_dense_layers) / m->moe.every : 0;
}

/* One expert MLP of width @h in and out: fc1 (h x f, or h x 2f gated)
 * and fc2 (f x h), biases (Megatron-Core mlp.py). */
static double
expert_params_at(const struct model *m, double h)
{
	double f = m->moe.expert_ffn_hidden;
	double p = (m->gated_mlp ? 3.0 : 2.0) * h * f;

	if (m->bias)
		p += (m->gated_mlp ? 2.0 * f : f) + h;
	return p;
}

/* Latent MoE (Megatron-Core moe_latent_size, moe_layer.py @d98e8a6):
 * the routed experts' fc1 input and fc2 output are moe_latent_size wide
 * (mlp.py: use_latent_size only when is_expert; experts.py's
 * TEGroupedMLP the same), the shared experts stay on the hidden size. */
double
model_moe_width(const struct model *m)
{
	return m->moe.latent_size > 0 ? m->moe.latent_size : m->hidden;
}

double
model_params_expert(const struct model *m)
{
	return expert_params_at(m, model_moe_width(m));
}

double
model_params_shared_expert(const struct model *m)
{
	return expert_params_at(m, m->hidden);
}

/* fc1_latent_proj (h -> l) and fc2_latent_proj (l -> h): TELinear,
 * parallel_mode "duplicated", is_expert False, bias add_bias_linear
 * (moe_layer.py @d98e8a6): dense weights, whole on every TP rank. */
double
model_params_moe_latent_proj(const struct model *m)
{
	double h = m->hidden, l = m->moe.latent_size;

	if (l <= 0)
		return 0.0;
	return 2.0 * h * l + (m->bias ? l + h : 0.0);
}

/* The router is an h x E linear layer (Switch Transformer, Fedus et al.
 * 2021; GShard, Lepikhin et al. 2020), with a bias of E where the linear
 * layers have theirs: Megatron-Core's Router.__init__ adds one with
 * add_bias_linear (moe/router.py @d98e8a6), as gpt-oss's
 * GptOssTopKRouter has (transformers' modeling_gpt_oss.py). */
static double
router_params(const struct model *m)
{
	return (double)m->hidden * m->moe.experts + (m->bias ? (double)m->moe.experts : 0.0);
}

double
model_params_layer_dense_part(const struct model *m, bool moe_layer)
{
	double full = model_params_per_layer(m);
	double mlp = (m->gated_mlp ? 3.0 : 2.0) * (double)m->hidden * m->ffn_hidden +
		     (m->bias ? (m->gated_mlp ? 2.0 * m->ffn_hidden : (double)m->ffn_hidden) + m->hidden : 0.0);

	return moe_layer ? full - mlp + router_params(m) + model_params_moe_latent_proj(m) : full;
}

double
model_params_moe_layer(const struct model *m)
{
	return model_params_layer_dense_part(m, true) + m->moe.experts * model_params_expert(m) +
	       m->moe.shared_experts * model_params_shared_expert(m);
}

/* A hybrid model's layers: each kind's count times its kind model's
 * parameters (@active: a routed expert layer's top_k and shared experts only). */
static double
hybrid_layers_params(const struct model *m, bool active)
{
	double p = 0.0;

	for (int k = 0; k < MODEL_KIND_COUNT; k++) {
		struct model km;

		model_kind_model(m, k, &km);
		if (km.layers == 0)
			continue;
		p += (active ? model_params_active(&km) : model_params_total(&km)) - model_params_embedding(&km) -
		     model_params_head(&km);
	}
	return p;
}

double
model_params_active(const struct model *m)
{
	int moe = model_moe_layers(m);

	if (model_is_hybrid(m))
		return hybrid_layers_params(m, true) + model_params_embedding(m) + model_params_head(m);
	double active_moe = model_params_layer_dense_part(m, true) +
			    m->moe.top_k * model_params_expert(m) + m->moe.shared_experts * model_params_shared_expert(m);

	return (m->layers - moe) * model_params_per_layer(m) + moe * active_moe +
	       model_params_embedding(m) + model_params_head(m);
}

double
model_params_embedding(const struct model *m)
{
	double p = (double)m->vocab * m->hidden;

	if (m->position_embedding == MODEL_POS_LEARNED)
		p += (double)(m->positions > 0 ? m->positions : m->seq_len) * m->hidden;
	return p;
}

double
model_params_head(const struct model *m)
{
	double final_norm = model_norm_has_shift(m) ? 2.0 * m->hidden : m->hidden;

	return final_norm + (m->tied_embeddings ? 0.0 : (double)m->vocab * m->hidden);
}

double
model_params_total(const struct model *m)
{
	int moe = model_moe_layers(m);

	if (model_is_hybrid(m))
		return hybrid_layers_params(m, false) + model_params_embedding(m) + model_params_head(m);
	return (m->layers - moe) * model_params_per_layer(m) + moe * model_params_moe_layer(m) +
	       model_params_embedding(m) + model_params_head(m);
}

/* plan-cli hybrid: the linear weights of a layer: QKV and projection,
 * fc1 (and gate) and fc2; a Mamba mixer's in_proj and out_proj. */
static int
linear_weights(const struct model *m)
{
	int n = 0;

	if (model_has_part(m, MODEL_PART_ATTENTION))
		n += 2;
	if (model_has_part(m, MODEL_PART_MLP))
		n += 2 + (m->gated_mlp ? 1 : 0);
	if (model_has_part(m, MODEL_PART_MAMBA) || model_has_part(m, MODEL_PART_GDN))
		n += 2; /* in_proj, out_proj */
	return n;
}

/* Norms of a layer: one before each part of a hybrid model's layer. */
static int
layer_norm_tensors(const struct model *m)
{
	return (m->parts ? 1 : model_norms_per_layer(m)) * (model_norm_has_shift(m) ? 2 : 1);
}

/* A Mamba mixer's vectors: conv1d weight and bias, dt_bias, A_log, D and
 * the gated norm's weight (mamba_mixer.py). */
#define MAMBA_SMALL_TENSORS 6
/* A Gated DeltaNet mixer's: conv1d weight (no bias), dt_bias, A_log and
 * out_norm's weight (gated_delta_net/common.py). */
#define GDN_SMALL_TENSORS 4

/* The vectors of a layer's mixer, if it has one. */
static int
mixer_small_tensors(const struct model *m)
{
	return model_has_part(m, MODEL_PART_MAMBA) ? MAMBA_SMALL_TENSORS
	       : model_has_part(m, MODEL_PART_GDN) ? GDN_SMALL_TENSORS : 0;
}

double
model_matrix_params_per_layer(const struct model *m)
{
	double p = 0.0;

	if (model_is_hybrid(m)) {
		for (int k = 0; k < MODEL_KIND_COUNT; k++) {
			struct model km;

			model_kind_model(m, k, &km);
			p += km.layers * model_matrix_params_per_layer(&km);
		}
		return p / m->layers;
	}
	if (model_has_part(m, MODEL_PART_ATTENTION))
		p += model_attention_matrix_params(m) +
		     model_dsa_indexer_matrix_params(m) * model_dsa_indexer_layers(m) / m->layers;
	if (model_has_part(m, MODEL_PART_MLP))
		p += (m->gated_mlp ? 3.0 : 2.0) * (double)m->hidden * m->ffn_hidden;
	if (model_has_part(m, MODEL_PART_MAMBA))
		p += m->hidden * model_mamba_in_proj_dim(m) + model_mamba_inner(m) * m->hidden;
	if (model_has_part(m, MODEL_PART_GDN))
		p += m->hidden * model_gdn_in_proj_dim(m) + model_gdn_v_dim(m) * m->hidden;
	return p;
}

/* A hybrid model's mean layer of a per-layer count, rounded up: its
 * kinds' counts weighted by their layers. */
static int
hybrid_mean_count(const struct model *m, int (*per_layer)(const struct model *))
{
	int n = 0;

	for (int k = 0; k < MODEL_KIND_COUNT; k++) {
		struct model km;

		model_kind_model(m, k, &km);
		n += km.layers * per_layer(&km);
	}
	return (n + m->layers - 1) / m->layers;
}

int
model_small_tensors_per_layer(const struct model *m)
{
	int linear = linear_weights(m);

	if (model_is_hybrid(m))
		return hybrid_mean_count(m, model_small_tensors_per_layer);
	if (model_has_part(m, MODEL_PART_MAMBA))
		return (m->bias ? linear : 0) + layer_norm_tensors(m) + MAMBA_SMALL_TENSORS;
	if (model_has_part(m, MODEL_PART_GDN)) /* no biases (model_params_gdn_mixer) */
		return layer_norm_tensors(m) + GDN_SMALL_TENSORS;

	/* The biases of the linear layers and the norms' scales and shifts. */
	return (m->bias ? linear : 0) + layer_norm_tensors(m);
}

int
model_tensors_per_layer(const struct model *m)
{
	int linear = linear_weights(m); /* QKV, proj, fc1 (+gate), fc2 */

	if (model_is_hybrid(m))
		return hybrid_mean_count(m, model_tensors_per_layer);
	return linear * (m->bias && !model_has_part(m, MODEL_PART_GDN) ? 2 : 1) + layer_norm_tensors(m) +
	       mixer_small_tensors(m);
}

/* plan-cli hybridmean: the largest weight matrix of a hybrid model's
 * layer of kind @kind (@km its kind model): a Mamba mixer's in_proj
 * (h x in_proj_dim) or out_proj (d_inner x h), mamba_mixer.py, a GDN
 * mixer's (h x in_proj_dim, v x h), gated_delta_net/common.py; an MoE
 * layer's expert matrix (h x expert_ffn, shared experts the same size;
 * latent MoE: l x expert_ffn, and the h x l projections) or router
 * (h x E); the attention's or the MLP's as a transformer's. */
static double
kind_largest_matrix(const struct model *km, int kind)
{
	double h = km->hidden;

	if (kind == MODEL_KIND_MAMBA)
		return fmax(h * model_mamba_in_proj_dim(km), model_mamba_inner(km) * h);
	if (kind == MODEL_KIND_GDN)
		return fmax(h * model_gdn_in_proj_dim(km), model_gdn_v_dim(km) * h);
	if (kind == MODEL_KIND_MOE && km->moe.latent_size > 0) { /* latent MoE (moe_layer.py @d98e8a6) */
		double f = km->moe.expert_ffn_hidden, shared = km->moe.shared_experts > 0 ? h * f : 0.0;

		/* routed l x f, router h x E, projections h x l, shared h x f */
		return fmax(fmax(model_moe_width(km) * f, h * km->moe.experts), fmax(h * km->moe.latent_size, shared));
	}
	if (kind == MODEL_KIND_MOE)
		return fmax(h * km->moe.expert_ffn_hidden, h * km->moe.experts);
	return model_largest_matrix_params(km);
}

double
model_largest_matrix_params(const struct model *m)
{
	double h = m->hidden, a = m->heads, mlp = h * m->ffn_hidden;

	/* plan-cli hybridmean: a hybrid model's largest over the kinds it
	 * has, not its mean layer's; a kind model (parts) counts its part. */
	if (model_is_hybrid(m)) {
		double best = 0.0;

		for (int k = 0; k < MODEL_KIND_COUNT; k++) {
			struct model km;

			model_kind_model(m, k, &km);
			if (km.layers > 0)
				best = fmax(best, kind_largest_matrix(&km, k));
		}
		return best;
	}
	if (!model_has_part(m, MODEL_PART_MLP))
		mlp = 0.0;
	if (!model_has_part(m, MODEL_PART_ATTENTION))
		return mlp;

	/* A gated MLP's gate and up projections count apart (h x ffn each),
	 * as its only reader sees them: the tensor-by-tensor ZeRO-3 gather
	 * of deepspeed-2021 and deepspeed-0.5 (memory_zero3_transient), whose
	 * era's Megatron (v2.5, megatron/model/transformer.py ParallelMLP)
	 * has no gated MLP at all, and whose gated models are Hugging Face
	 * modules with a weight each. Megatron's fused fc1 (2 x h x ffn,
	 * --swiglu since 23.04) is no reader's: a Megatron framework gathers
	 * a layer at a time. */
	if (m->attention == MODEL_ATTN_MLA)
		return fmax(mlp, a * m->mla.v_head_dim * h);
	/* Megatron fuses Q, K and V (and the output gate) into one weight. */
	return fmax(mlp, fmax(h * model_qkv_dim(m), a * model_head_dim(m) * h));
}
