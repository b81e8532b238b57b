/* A transformer model profile and the parameter counts derived from it. */
#pragma once

#include <stdbool.h>

#include "plan/error.h"

enum model_norm {
	MODEL_NORM_LAYERNORM,
	MODEL_NORM_RMSNORM,
};

enum model_position {
	MODEL_POS_LEARNED,
	MODEL_POS_ROTARY,
	MODEL_POS_ALIBI, /**< Press et al. 2022: a bias added inside attention, no parameters */
	MODEL_POS_NONE,  /**< no position signal (Megatron's --position-embedding-type none: Nemotron-H 47B/56B) */
};

enum model_attention {
	MODEL_ATTN_MHA, /**< multi-head attention, grouped-query through kv_heads */
	MODEL_ATTN_MLA, /**< DeepSeek-V2's multi-head latent attention (arXiv:2405.04434) */
};

extern const char *const model_attention_names[];

/** The Mixture-of-Experts block of a model (experts == 0: dense). */
struct model_moe {
	int experts;
	int top_k;
	int every;             /**< every n-th layer is an MoE layer */
	int expert_ffn_hidden; /**< 0: ffn_hidden */
	double capacity_factor;
	int shared_experts;    /**< experts every token goes through (DeepSeekMoE) */
	int first_dense_layers;/**< the first N layers stay dense (DeepSeek's first_k_dense_replace) */
	bool dropless;         /**< no capacity: split sizes go to the host every layer (Megatron-Core's default) */
	int max_nodes;         /**< node-limited routing: a token goes to at most this many nodes (0: no limit) */
	int latent_size;       /**< Megatron-Core's moe_latent_size: routed experts run on this width (0: none) */
};

/** MLA's ranks and head sizes (DeepSeek-V2/V3 config names). */
struct model_mla {
	int q_lora_rank;       /**< 0: queries projected directly, without compression */
	int kv_lora_rank;
	int qk_nope_head_dim;
	int qk_rope_head_dim;
	int v_head_dim;
};

/** What trains DSA's lightning indexer (enum model_dsa::indexer_loss). */
enum model_dsa_loss {
	MODEL_DSA_LOSS_SPARSE, /**< KL loss over the selected top-k keys (dsa_indexer_use_sparse_loss) */
	MODEL_DSA_LOSS_DENSE,  /**< KL loss over every causal key */
	MODEL_DSA_LOSS_NONE,   /**< no indexer loss: the indexer runs under no_grad (coefficient 0) */
};

extern const char *const model_dsa_loss_names[];

/**
 * DeepSeek Sparse Attention (DeepSeek-V3.2, arXiv:2512.02556, Sec. 2.1;
 * Megatron-Core's experimental_attention_variant "dsa",
 * megatron/core/transformer/experimental_attention_variant/dsa.py
 * @d98e8a6): on MLA, a lightning indexer of index_n_heads heads of
 * index_head_dim scores every causal key, and each query attends to the
 * index_topk best. Names: Hugging Face's deepseek_v32 / glm_moe_dsa
 * config fields. index_n_heads 0: no DSA.
 */
struct model_dsa {
	int index_n_heads;          /**< indexer heads H_I (dsa_indexer_n_heads) */
	int index_head_dim;         /**< indexer head size d_I (dsa_indexer_head_dim) */
	int index_topk;             /**< keys a query attends to, k (dsa_indexer_topk) */
	int index_topk_freq;        /**< one layer in this many computes its top-k, the others reuse it (1) */
	int index_skip_topk_offset; /**< dsa_indexer_skip_topk_offset (0) */
	int indexer_loss;           /**< enum model_dsa_loss */
};

/**
 * Sliding-window (local) attention (Beltagy et al. 2020, Longformer;
 * Mistral 7B, arXiv:2310.06825, Sec. 2): a query attends to itself and
 * the window - 1 tokens before it. Which layers do: from layer
 * first_global_layers + 1 on, the pattern repeated, 'L' a windowed layer
 * and 'G' a global one (Mistral 7B v0.1: "L"; Gemma 2 and gpt-oss:
 * "LG"; Gemma 3: "LLLLLG"); the first first_global_layers layers are
 * global (Qwen2's max_window_layers). window 0: no window.
 */
struct model_window {
	int window;              /**< tokens a query attends to, itself included (0: none) */
	char pattern[64];        /**< 'L' and 'G' repeated over the layers ("": "L") */
	int first_global_layers; /**< the first N layers attend globally */
};

/**
 * The Mamba-2 mixer of a hybrid model's 'M' layers (Dao and Gu 2024,
 * arXiv:2405.21060; Megatron-Core megatron/core/ssm/mamba_mixer.py,
 * whose argument names these are): in_proj h -> 2 d_inner + 2 groups
 * state_dim + heads (z, x, B, C, dt), a depthwise causal conv1d of
 * conv_kernel taps over x, B and C, the SSD scan in chunks of
 * chunk_size, a gated RMSNorm over d_inner and out_proj d_inner -> h,
 * with d_inner = heads x head_dim.
 */
struct model_mamba {
	int state_dim;   /**< N, the SSM state per head (--mamba-state-dim) */
	int head_dim;    /**< P (--mamba-head-dim, 64) */
	int heads;       /**< (--mamba-num-heads; 0: 2 hidden / head_dim, Megatron's expand 2) */
	int groups;      /**< groups sharing B and C (--mamba-num-groups, 8) */
	int conv_kernel; /**< taps of the causal conv1d (d_conv, 4) */
	int chunk_size;  /**< the SSD kernel's chunk (MambaMixer chunk_size, 128) */
};

/**
 * The Gated DeltaNet mixer of a hybrid model's 'G' layers (Yang, Kautz
 * and Hatamizadeh 2025, arXiv:2412.06464; Megatron-Core
 * megatron/core/ssm/gated_delta_net/, whose TransformerConfig names
 * these: linear_key_head_dim ...): in_proj h -> 2 qk + 2 v + 2 value
 * heads (q, k, v, the output gate z, beta, alpha), a depthwise causal
 * conv1d over q, k and v, the chunked gated delta rule (FLA's
 * chunk_gated_delta_rule, chunks of 64), a gated RMSNorm over each value
 * head and out_proj v -> h, with qk = key_heads x key_head_dim and v =
 * value_heads x value_head_dim.
 */
struct model_gdn {
	int key_head_dim;   /**< linear_key_head_dim (128) */
	int value_head_dim; /**< linear_value_head_dim (128) */
	int key_heads;      /**< linear_num_key_heads (16) */
	int value_heads;    /**< linear_num_value_heads (32), a multiple of key_heads */
	int conv_kernel;    /**< linear_conv_kernel_dim (4) */
};

/** Layers of a hybrid model: Megatron-Core's hybrid_layer_pattern symbols
 *  (megatron/core/models/hybrid/hybrid_layer_allocation.py, Symbols). Each
 *  is a residual block of one pre-norm and one part. */
enum model_layer_kind {
	MODEL_KIND_MAMBA,     /**< 'M': norm + Mamba-2 mixer */
	MODEL_KIND_ATTENTION, /**< '*': norm + self-attention */
	MODEL_KIND_MLP,       /**< '-': norm + dense MLP */
	MODEL_KIND_MOE,       /**< 'E': norm + MoE MLP */
	MODEL_KIND_GDN,       /**< 'G': norm + Gated DeltaNet mixer */
	MODEL_KIND_COUNT
};

/** The symbols of enum model_layer_kind, in its order ("M*-EG"). */
extern const char model_kind_symbols[];

/** What a layer holds (struct model parts): 0 is a transformer layer's
 *  attention and MLP; a hybrid model's kind models (model_kind_model)
 *  hold one part. */
enum model_part {
	MODEL_PART_ATTENTION = 1,
	MODEL_PART_MLP = 2,
	MODEL_PART_MAMBA = 4,
	MODEL_PART_GDN = 8,
};

#define MODEL_HYBRID_MAX 1024
#define MODEL_MTP_MAX 64

/** A decoder/encoder transformer, dense or MoE (the shapes that set its cost). */
struct model {
	char name[64];
	char description[256];
	int layers;
	int hidden;
	int heads;
	int kv_heads;        /**< heads of K and V (grouped-query attention) */
	int head_dim;        /**< size of one head (0: hidden / heads; Gemma and Qwen3 differ) */
	bool qk_norm;        /**< RMSNorm on each head's query and key (Qwen3, OLMo 2) */
	bool attention_output_gate; /**< QKV also yields a gate of the query's size; the attention's
				     *   output times its sigmoid before the projection (Qwen3-Next) */
	bool attention_sinks; /**< one learned logit a query head joins each softmax (gpt-oss's sinks,
			       *   Megatron-Core's softmax_type learnable): heads parameters a layer */
	int ffn_hidden;
	bool gated_mlp;      /**< SwiGLU-style: three MLP matrices */
	int vocab;
	int seq_len;         /**< default training sequence length */
	bool tied_embeddings;
	bool dropout;        /**< hidden and attention dropout (p > 0): their masks are kept */
	bool bias;           /**< biases in linear layers and norms */
	bool qkv_bias;       /**< without bias: biases on the Q, K and V projections only (Qwen2) */
	bool norm_bias;      /**< without bias: LayerNorms keep their shift (Falcon, OPT's enable_bias false) */
	int norms_per_layer; /**< norms in one layer (0: 2; Falcon-7B's parallel block shares one) */
	bool parallel_block; /**< attention and MLP side by side on the same input, outputs summed (GPT-J, PaLM) */
	int positions;       /**< rows of a learned position table (0: seq_len; OPT: max_position_embeddings + 2) */
	int norm;            /**< enum model_norm */
	int position_embedding; /**< enum model_position */
	bool causal;         /**< decoder attention with a causal mask (false: BERT-style encoder) */
	int attention;       /**< enum model_attention */
	struct model_mla mla;
	struct model_dsa dsa;        /**< DeepSeek Sparse Attention on MLA (index_n_heads 0: none) */
	struct model_moe moe;
	int mtp_layers;      /**< multi-token prediction depth D (DeepSeek-V3: 1; 0: none) */
	/** A hybrid model's layers of one MTP depth, one symbol each
	 *  (Megatron-Core's mtp_hybrid_override_pattern, the part after each
	 *  '/' of a unified hybrid_layer_pattern; Nemotron-3 Super: "*E");
	 *  "": none (a transformer's depth is one layer of its last layer's kind). */
	char mtp_pattern[MODEL_MTP_MAX + 1];
	/** One depth's parameters shared by all D depths (Megatron-Core's
	 *  mtp_use_repeated_layer: one MultiTokenPredictionLayer run D times). */
	bool mtp_repeated;
	struct model_window sliding_window;
	/** A hybrid model's layers, one symbol each (enum model_layer_kind;
	 *  Megatron-Core's hybrid_layer_pattern, Nemotron-H's "M-M-M-M*-...");
	 *  "": every layer a transformer layer. Its length is layers. */
	char hybrid_pattern[MODEL_HYBRID_MAX + 1];
	/** Pattern symbols one framework layer is written as (1; Megatron's
	 *  GPT model with an experimental linear attention, Qwen3-Next, 2:
	 *  its mixer and its MLP): a pipeline stage holds whole groups. */
	int hybrid_group;
	struct model_mamba mamba;
	struct model_gdn gdn;
	int parts;           /**< enum model_part bits a layer holds; 0: attention and MLP */
};


/** Whether @m is a hybrid model (a hybrid_pattern). */
bool model_is_hybrid(const struct model *m);

/** The kind of layer @layer (1-based) of a hybrid model. */
int model_layer_kind(const struct model *m, int layer);

/** Layers of kind @kind among @first..@last (1-based, inclusive) of a hybrid model. */
int model_kind_layers_between(const struct model *m, int kind, int first, int last);

/** Layers of kind @kind in a hybrid model. */
int model_kind_layers(const struct model *m, int kind);

/**
 * The model whose every layer is a layer of kind @kind of hybrid model
 * @m: @m with no pattern, its parts that kind's (MODEL_PART_*), its
 * experts kept for MODEL_KIND_MOE only (every 1, no dense layer first)
 * and layers the count of that kind. Every cost of a layer is the kind
 * model's.
 */
void model_kind_model(const struct model *m, int kind, struct model *out);

/** Layers of kind @kind in one MTP depth of a hybrid model (mtp_pattern). */
int model_mtp_kind_layers(const struct model *m, int kind);

/** The MTP depths whose parameters @m holds: 1 when they share one
 *  depth's (mtp_repeated), else mtp_layers. */
int model_mtp_param_depths(const struct model *m);

/** Whether a layer of @m holds the part @part (enum model_part). */
bool model_has_part(const struct model *m, int part);

/** Mamba-2 sizes: heads, d_inner (heads x head_dim), in_proj's output
 *  (2 d_inner + 2 groups N + heads) and conv1d's channels (d_inner + 2 groups N). */
int model_mamba_heads(const struct model *m);
double model_mamba_inner(const struct model *m);
double model_mamba_in_proj_dim(const struct model *m);
double model_mamba_conv_dim(const struct model *m);

/** Gated DeltaNet sizes (Megatron-Core _GDNBase): qk = key heads x key
 *  head dim, v = value heads x value head dim, in_proj's output
 *  (2 qk + 2 v + 2 value heads) and conv1d's channels (2 qk + v). */
double model_gdn_qk_dim(const struct model *m);
double model_gdn_v_dim(const struct model *m);
double model_gdn_in_proj_dim(const struct model *m);
double model_gdn_conv_dim(const struct model *m);

/** Parameters of one Gated DeltaNet mixer (no pre-norm): in_proj, conv1d
 *  (no bias: GatedDeltaNet's conv_bias False), dt_bias and A_log (one a
 *  value head), the output norm's scale (one head wide) and out_proj. */
double model_params_gdn_mixer(const struct model *m);

/** Parameters of one Mamba-2 mixer (no pre-norm): in_proj, conv1d weight
 *  and bias, dt_bias, A_log and D, the gated norm's scale and out_proj. */
double model_params_mamba_mixer(const struct model *m);

/** Linear layers (fp8 GEMM sites) in one layer: QKV, projection, fc1 and
 *  fc2, 4; a hybrid model's layer 2 (in_proj and out_proj, QKV and
 *  projection, or fc1 and fc2). */
int model_linears_per_layer(const struct model *m);

/** Norms in one layer: norms_per_layer, 2 when it is 0. */
int model_norms_per_layer(const struct model *m);

/**
 * Norms whose input and output a layer keeps and runs: 2 for a sequential
 * block (its norms_per_layer beyond 2, Gemma 2's, count as parameters
 * only), norms_per_layer for a parallel block (1 shared, or 2 on the
 * same input: GPT-NeoX).
 */
int model_norms_run(const struct model *m);

/** Whether layer @layer (1-based) attends through the sliding window. */
bool model_layer_is_windowed(const struct model *m, int layer);

/** Number of layers with a sliding window. */
int model_windowed_layers(const struct model *m);

/**
 * Causal (query, key) pairs of one sequence of @s tokens when each query
 * attends to itself and the @w - 1 tokens before it: the sum over
 * positions i = 1..s of min(i, w), s w - w (w - 1) / 2 for w <= s.
 */
double model_window_pairs(double s, double w);

/**
 * The attention core's work on a sequence of @s tokens (all of it, not a
 * CP rank's share), averaged over the layers, as a fraction of a global
 * layer's: 1 without a window. A windowed layer does
 * model_window_pairs(s, w) of the s^2 / 2 pairs of a causal mask
 * (FlashAttention's count), never more.
 */
double model_attention_work_fraction(const struct model *m, double s);

/**
 * Keys a query meets, averaged over the layers, as a fraction of @s (the
 * model-FLOPs convention of Narayanan et al. SC21, no causal discount):
 * min(s, w) / s in a windowed layer, 1 elsewhere.
 */
double model_attention_key_fraction(const struct model *m, double s);

/** Whether the model uses DeepSeek Sparse Attention (a dsa block). */
bool model_has_dsa(const struct model *m);

/**
 * Layers whose lightning indexer computes its own top-k (Megatron-Core's
 * is_dsa_skip_topk_layer, dsa.py @d98e8a6: layer l, 1-based, skips when
 * max(l - max(offset, 1), 0) mod freq != 0); the others reuse it and
 * build no indexer. 0 without DSA.
 */
int model_dsa_indexer_layers(const struct model *m);

/**
 * One lightning indexer's weight matrices: wq_b (q_lora_rank, or hidden
 * without a query latent, to H_I d_I), wk (hidden to d_I) and
 * weights_proj (hidden to H_I); its k_norm LayerNorm adds 2 d_I.
 */
double model_dsa_indexer_matrix_params(const struct model *m);

/**
 * Keys a DSA query attends to in a sequence of @s tokens, as a fraction
 * of @s (the model-FLOPs convention, no causal discount): min(s, k) / s;
 * 1 without DSA.
 */
double model_dsa_key_fraction(const struct model *m, double s);

/**
 * The head sizes DSA's sparse attention kernel runs in: Megatron-Core
 * runs DSA on absorbed MLA (AbsorbedMLASelfAttention, absorbed_mla.py
 * @d98e8a6), every head's query against one shared latent key of
 * kv_lora_rank + qk_rope_head_dim (*@dqk) and the latent value of
 * kv_lora_rank (*@dv). Without DSA: model_qk_head_dim and model_v_head_dim.
 */
void model_dsa_kernel_head_dims(const struct model *m, double *dqk, double *dv);

/**
 * DSA's indexer parameters in the mean layer (matrices and k_norm's 2 d_I,
 * times model_dsa_indexer_layers / layers), part of model_params_per_layer;
 * whole on every TP rank (parallel_mode "duplicated"). 0 without DSA.
 */
double model_dsa_indexer_params_per_layer(const struct model *m);

/**
 * The lightning indexer's FLOPs per token of one indexer layer over a
 * training step (forward and backward) on a sequence of @s tokens:
 * projections, the scores over all @s keys, and with the indexer loss
 * its backward and the main attention's target; see model.c.
 * @forward_only: the forward's share alone (what full recomputation
 * repeats). 0 without DSA.
 */
double model_dsa_indexer_flops_per_token(const struct model *m, double s, bool forward_only);

/** Whether the LayerNorms carry a shift besides their scale (bias or norm_bias). */
bool model_norm_has_shift(const struct model *m);

/** Size of one attention head (hidden / heads). */
int model_head_dim(const struct model *m);

/**
 * Columns of the gate of gated attention (attention_output_gate, MHA
 * only): heads x head_dim, the query's size; 0 without the gate.
 */
double model_attention_gate_dim(const struct model *m);

/** Output columns of the fused QKV projection (MHA/GQA): a d + 2 kv d,
 *  and the gate's a d with attention_output_gate. */
double model_qkv_dim(const struct model *m);

/** The attention's matrix parameters in one layer (no biases, no norms). */
double model_attention_matrix_params(const struct model *m);

/** Head sizes of the queries/keys and of the values (h / a for MHA). */
int model_qk_head_dim(const struct model *m);
int model_v_head_dim(const struct model *m);

/** Parameters in one dense transformer layer (attention, MLP, norms, biases). */
double model_params_per_layer(const struct model *m);

/** The weight matrices of one layer (attention, the dense MLP, a Mamba
 *  mixer's in_proj and out_proj, as its parts hold them; a hybrid model's
 *  mean layer): model_params_per_layer less its norms, biases and vectors. */
double model_matrix_params_per_layer(const struct model *m);

/** Whether the model has MoE layers. */
bool model_is_moe(const struct model *m);

/** Whether layer @layer (1-based) is an MoE layer: every n-th layer. */
bool model_layer_is_moe(const struct model *m, int layer);

/** Number of MoE layers. */
int model_moe_layers(const struct model *m);

/** Number of MoE layers among layers @first..@last (1-based, inclusive). */
int model_moe_layers_between(const struct model *m, int first, int last);

/** Parameters of one routed expert MLP (2 or 3 matrices of w x expert_ffn_hidden, biases;
 *  w = model_moe_width). */
double model_params_expert(const struct model *m);

/** Parameters of one shared expert MLP: as a routed one's, on the full hidden width. */
double model_params_shared_expert(const struct model *m);

/** The width the routed experts and the token dispatcher work at: moe.latent_size if set,
 *  else hidden (Megatron-Core's moe_latent_size). */
double model_moe_width(const struct model *m);

/** Parameters of an MoE layer's two latent projections (h x l and l x h, biases); 0 without. */
double model_params_moe_latent_proj(const struct model *m);

/** Parameters of one MoE layer: attention, norms, router, routed and shared experts. */
double model_params_moe_layer(const struct model *m);

/** Parameters one token uses: every dense weight, the router, top_k + shared experts. */
double model_params_active(const struct model *m);

/** Parameters of a layer that are not experts (attention, norms, router). */
double model_params_layer_dense_part(const struct model *m, bool moe_layer);

/** Input embedding parameters (token table, plus the learned position table). */
double model_params_embedding(const struct model *m);

/** Output-layer parameters beyond the input embedding (0 when tied) plus the final norm. */
double model_params_head(const struct model *m);

/** Of those, the vectors: biases and norm parameters (the rest are weight matrices). */
int model_small_tensors_per_layer(const struct model *m);

/** Parameter tensors (weights, biases, norm scales) in one layer. */
int model_tensors_per_layer(const struct model *m);

/** Elements of a layer's largest weight matrix: the fused QKV projection
 *  (h x (a d + 2 kv d)), the output projection or an MLP matrix (h x ffn,
 *  a gated MLP's gate and up apart, as the DeepSpeed profiles that read
 *  it hold them); with MLA the output projection or an MLP matrix; a
 *  hybrid model's largest over the kinds it has (a Mamba in_proj, h x
 *  in_proj_dim), a kind model's of its one part. */
double model_largest_matrix_params(const struct model *m);

/** All parameters: layers, embeddings, final norm and untied output layer. */
double model_params_total(const struct model *m);
