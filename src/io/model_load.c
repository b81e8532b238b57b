#include <stddef.h>
#include <string.h>

#include "plan/model.h"
#include "io/profile_load.h"
#include "io/utf8.h"

static const char *const norm_choices[] = { "layernorm", "rmsnorm", NULL };
static const char *const position_choices[] = { "learned", "rotary", "alibi", "none", NULL };

#define OFF(f) offsetof(struct model, f)
#define MOFF(f) offsetof(struct model_moe, f)
#define BIG 1e8

static const struct schema_key moe_schema[] = {
	{ .key = "experts", .type = SCHEMA_INT, .required = true, .offset = MOFF(experts),
	  .min = 1, .max = 1000000, .help = "routed experts per MoE layer" },
	{ .key = "top_k", .type = SCHEMA_INT, .required = true, .offset = MOFF(top_k),
	  .min = 1, .max = 1024, .help = "experts each token is routed to" },
	{ .key = "every", .type = SCHEMA_INT, .offset = MOFF(every), .min = 1, .max = 100000, .def = "1",
	  .help = "every n-th layer is an MoE layer (GShard and Switch: 2)" },
	{ .key = "expert_ffn_hidden", .type = SCHEMA_INT, .offset = MOFF(expert_ffn_hidden),
	  .min = 1, .max = BIG, .help = "inner size of an expert MLP; default ffn_hidden" },
	{ .key = "capacity_factor", .type = SCHEMA_NUMBER, .offset = MOFF(capacity_factor),
	  .min = 0, .min_exclusive = true, .max = 64, .def = "1.0",
	  .help = "expert capacity over the balanced load (tokens are padded to it)" },
	{ .key = "first_dense_layers", .type = SCHEMA_INT, .offset = MOFF(first_dense_layers),
	  .min = 0, .max = 100000, .def = "0",
	  .help = "the first N layers keep a dense MLP (DeepSeek's first_k_dense_replace)" },
	{ .key = "dropless", .type = SCHEMA_BOOL, .offset = MOFF(dropless), .def = "false",
	  .help = "tokens are never dropped nor padded: the dispatcher copies the split sizes to the "
		  "host and waits for them in every MoE layer (Megatron-Core without "
		  "--moe-expert-capacity-factor); false: padded to the capacity, no host synchronisation" },
	{ .key = "max_nodes", .type = SCHEMA_INT, .offset = MOFF(max_nodes), .min = 0, .max = 1000000,
	  .def = "0",
	  .help = "node-limited routing: each token goes to the experts of at most this many nodes, and "
		  "crosses to each of them once (DeepSeek-V3: 4); 0: no limit" },
	{ .key = "latent_size", .type = SCHEMA_INT, .offset = MOFF(latent_size), .min = 0, .max = BIG,
	  .def = "0",
	  .help = "latent MoE (Megatron-Core's moe_latent_size): the hidden states are projected to this "
		  "width before the dispatch and back after the combine, and the routed experts run on it; "
		  "0: none" },
	{ .key = "shared_experts", .type = SCHEMA_INT, .offset = MOFF(shared_experts),
	  .min = 0, .max = 1024, .def = "0", .help = "experts every token goes through (DeepSeekMoE)" },
	{ 0 },
};

#define LOFF(f) offsetof(struct model_mla, f)

static const struct schema_key mla_schema[] = {
	{ .key = "q_lora_rank", .type = SCHEMA_INT, .offset = LOFF(q_lora_rank), .min = 0, .max = BIG,
	  .def = "0", .help = "rank of the query down-projection; 0: queries projected directly" },
	{ .key = "kv_lora_rank", .type = SCHEMA_INT, .required = true, .offset = LOFF(kv_lora_rank),
	  .min = 1, .max = BIG, .help = "rank of the joint key-value down-projection (the cached latent)" },
	{ .key = "qk_nope_head_dim", .type = SCHEMA_INT, .required = true, .offset = LOFF(qk_nope_head_dim),
	  .min = 1, .max = 100000, .help = "per-head query/key size without rotary positions" },
	{ .key = "qk_rope_head_dim", .type = SCHEMA_INT, .required = true, .offset = LOFF(qk_rope_head_dim),
	  .min = 0, .max = 100000, .help = "per-head query/key size with rotary positions (the key's is shared)" },
	{ .key = "v_head_dim", .type = SCHEMA_INT, .required = true, .offset = LOFF(v_head_dim),
	  .min = 1, .max = 100000, .help = "per-head value size" },
	{ 0 },
};

#define DOFF(f) offsetof(struct model_dsa, f)

/* Hugging Face's deepseek_v32 / glm_moe_dsa names; Megatron-Core's
 * dsa_indexer_* (transformer_config.py @d98e8a6, lines 317-357). */
static const struct schema_key dsa_schema[] = {
	{ .key = "index_n_heads", .type = SCHEMA_INT, .required = true, .offset = DOFF(index_n_heads),
	  .min = 1, .max = 100000, .help = "lightning indexer heads (DeepSeek-V3.2: 64; dsa_indexer_n_heads)" },
	{ .key = "index_head_dim", .type = SCHEMA_INT, .required = true, .offset = DOFF(index_head_dim),
	  .min = 1, .max = 100000, .help = "size of an indexer head (DeepSeek-V3.2: 128; dsa_indexer_head_dim)" },
	{ .key = "index_topk", .type = SCHEMA_INT, .required = true, .offset = DOFF(index_topk),
	  .min = 1, .max = BIG, .help = "keys each query attends to (DeepSeek-V3.2: 2048; dsa_indexer_topk)" },
	{ .key = "index_topk_freq", .type = SCHEMA_INT, .offset = DOFF(index_topk_freq), .min = 1, .max = 100000,
	  .def = "1", .help = "one layer in this many computes its top-k, the others reuse it and have no "
			      "indexer (dsa_indexer_topk_freq)" },
	{ .key = "index_skip_topk_offset", .type = SCHEMA_INT, .offset = DOFF(index_skip_topk_offset), .min = 0,
	  .max = 100000, .def = "0", .help = "the layer offset of that sharing (dsa_indexer_skip_topk_offset)" },
	{ .key = "indexer_loss", .type = SCHEMA_ENUM, .offset = DOFF(indexer_loss), .def = "sparse",
	  .choices = model_dsa_loss_names,
	  .help = "what trains the indexer: sparse, a KL loss over the selected keys (Megatron-Bridge's GLM-5: "
		  "dsa_indexer_use_sparse_loss); dense, over every causal key; none, no loss (the indexer "
		  "runs without gradients)" },
	{ 0 },
};

#define WOFF(f) offsetof(struct model_window, f)

static const struct schema_key window_schema[] = {
	{ .key = "window", .type = SCHEMA_INT, .required = true, .offset = WOFF(window), .min = 1, .max = BIG,
	  .help = "tokens a query attends to, itself included (Mistral 7B v0.1: 4096; Hugging Face's "
		  "sliding_window)" },
	{ .key = "pattern", .type = SCHEMA_STRING, .offset = WOFF(pattern),
	  .size = sizeof(((struct model_window *)0)->pattern), .def = "L",
	  .help = "which layers use the window, repeated from the first layer past first_global_layers: "
		  "L windowed, G global (Mistral: L; Gemma 2, gpt-oss: LG; Gemma 3: LLLLLG)" },
	{ .key = "first_global_layers", .type = SCHEMA_INT, .offset = WOFF(first_global_layers), .min = 0,
	  .max = 100000, .def = "0",
	  .help = "the first N layers attend globally (Qwen2's max_window_layers)" },
	{ 0 },
};

#define AOFF(f) offsetof(struct model_mamba, f)

/* Defaults: Megatron-Core's TransformerConfig (mamba_state_dim 128,
 * mamba_head_dim 64, mamba_num_groups 8, mamba_num_heads None) and
 * MambaMixer (d_conv 4, chunk_size 128). */
static const struct schema_key mamba_schema[] = {
	{ .key = "state_dim", .type = SCHEMA_INT, .offset = AOFF(state_dim), .min = 1, .max = 100000,
	  .def = "128", .help = "SSM state size N per head (Megatron's --mamba-state-dim; Nemotron-H 8B 128, 56B 256)" },
	{ .key = "head_dim", .type = SCHEMA_INT, .offset = AOFF(head_dim), .min = 1, .max = 100000, .def = "64",
	  .help = "size P of a Mamba head (--mamba-head-dim)" },
	{ .key = "heads", .type = SCHEMA_INT, .offset = AOFF(heads), .min = 0, .max = 1000000, .def = "0",
	  .help = "Mamba heads (--mamba-num-heads); 0: 2 hidden / head_dim (expand 2)" },
	{ .key = "groups", .type = SCHEMA_INT, .offset = AOFF(groups), .min = 1, .max = 100000, .def = "8",
	  .help = "groups of heads sharing B and C (--mamba-num-groups)" },
	{ .key = "conv_kernel", .type = SCHEMA_INT, .offset = AOFF(conv_kernel), .min = 1, .max = 64, .def = "4",
	  .help = "taps of the causal depthwise conv1d (d_conv)" },
	{ .key = "chunk_size", .type = SCHEMA_INT, .offset = AOFF(chunk_size), .min = 1, .max = 65536, .def = "128",
	  .help = "chunk of the SSD scan kernel (MambaMixer's chunk_size)" },
	{ 0 },
};

#define GOFF(f) offsetof(struct model_gdn, f)

/* Defaults: Megatron-Core's TransformerConfig (linear_key_head_dim 128,
 * linear_value_head_dim 128, linear_num_key_heads 16,
 * linear_num_value_heads 32, linear_conv_kernel_dim 4): Qwen3-Next's. */
static const struct schema_key gdn_schema[] = {
	{ .key = "key_head_dim", .type = SCHEMA_INT, .offset = GOFF(key_head_dim), .min = 1, .max = 100000,
	  .def = "128", .help = "size of a query and key head (Megatron's --linear-key-head-dim)" },
	{ .key = "value_head_dim", .type = SCHEMA_INT, .offset = GOFF(value_head_dim), .min = 1, .max = 100000,
	  .def = "128", .help = "size of a value and output-gate head (--linear-value-head-dim)" },
	{ .key = "key_heads", .type = SCHEMA_INT, .offset = GOFF(key_heads), .min = 1, .max = 100000, .def = "16",
	  .help = "query and key heads (--linear-num-key-heads)" },
	{ .key = "value_heads", .type = SCHEMA_INT, .offset = GOFF(value_heads), .min = 1, .max = 100000,
	  .def = "32", .help = "value heads (--linear-num-value-heads), a multiple of key_heads" },
	{ .key = "conv_kernel", .type = SCHEMA_INT, .offset = GOFF(conv_kernel), .min = 1, .max = 64, .def = "4",
	  .help = "taps of the causal depthwise conv1d (--linear-conv-kernel-dim)" },
	{ 0 },
};

/*
 * A transformer profile may say kind: transformer; kind: multimodal is a
 * multimodal profile (io/multimodal_load.c), which only predict and
 * optimize take: say so where the profile says it.
 */
static bool
parse_kind(const struct schema_key *k, struct ytree *t, yaml_node_t *node, void *field,
	   struct plan_error *err)
{
	const char *v = ytree_scalar(node);

	(void)k, (void)field;
	if (v && strcmp(v, "transformer") == 0)
		return true;
	if (v && strcmp(v, "multimodal") == 0)
		return ytree_error(t, node, err, "a multimodal model (kind: multimodal): only predict and "
				   "optimize take one");
	return ytree_error(t, node, err, "unknown value '%s' for 'kind' (valid: transformer, multimodal)",
			   v ? v : "a collection");
}

const struct schema_key model_schema[] = {
	{ .key = "name", .type = SCHEMA_STRING, .required = true, .offset = OFF(name),
	  .size = sizeof(((struct model *)0)->name), .help = "profile name" },
	{ .key = "description", .type = SCHEMA_STRING, .offset = OFF(description),
	  .size = sizeof(((struct model *)0)->description), .help = "free text: what the model is and where its shape comes from" },
	{ .key = "layers", .type = SCHEMA_INT, .required = true, .offset = OFF(layers),
	  .min = 1, .max = 100000, .help = "transformer layers" },
	{ .key = "hidden", .type = SCHEMA_INT, .required = true, .offset = OFF(hidden),
	  .min = 1, .max = 1e6, .help = "hidden size h" },
	{ .key = "heads", .type = SCHEMA_INT, .required = true, .offset = OFF(heads),
	  .min = 1, .max = 100000, .help = "attention heads a" },
	{ .key = "kv_heads", .type = SCHEMA_INT, .offset = OFF(kv_heads),
	  .min = 1, .max = 100000, .help = "key/value heads (grouped-query attention when fewer than heads); default heads" },
	{ .key = "head_dim", .type = SCHEMA_INT, .offset = OFF(head_dim), .min = 0, .max = 100000,
	  .def = "0", .help = "size of one attention head; 0: hidden / heads (Gemma and Qwen3 set it apart)" },
	{ .key = "qk_norm", .type = SCHEMA_BOOL, .offset = OFF(qk_norm), .def = "false",
	  .help = "an RMSNorm on each head's query and key (Qwen3, OLMo 2)" },
	{ .key = "attention_output_gate", .type = SCHEMA_BOOL, .offset = OFF(attention_output_gate),
	  .def = "false",
	  .help = "gated attention (Megatron-Core's attention_output_gate, Qwen3-Next): the QKV projection "
		  "also yields a gate of heads x head_dim, and the attention's output is multiplied by its "
		  "sigmoid before the output projection (megatron/core/transformer/attention.py); mha only" },
	{ .key = "attention_sinks", .type = SCHEMA_BOOL, .offset = OFF(attention_sinks), .def = "false",
	  .help = "attention sinks: one learned logit a query head that joins each softmax's "
		  "denominator (gpt-oss's sinks; Megatron-Core's softmax_type learnable): heads "
		  "parameters a layer, no GEMM" },
	{ .key = "ffn_hidden", .type = SCHEMA_INT, .offset = OFF(ffn_hidden),
	  .min = 1, .max = BIG, .help = "MLP inner size; default 4 * hidden" },
	{ .key = "gated_mlp", .type = SCHEMA_BOOL, .offset = OFF(gated_mlp), .def = "false",
	  .help = "SwiGLU-style MLP with three matrices" },
	{ .key = "vocab", .type = SCHEMA_INT, .required = true, .offset = OFF(vocab),
	  .min = 1, .max = BIG, .help = "vocabulary size V (padded, as trained)" },
	{ .key = "seq_len", .type = SCHEMA_INT, .required = true, .offset = OFF(seq_len),
	  .min = 1, .max = BIG, .help = "training sequence length s (and the learned position table size)" },
	{ .key = "tied_embeddings", .type = SCHEMA_BOOL, .offset = OFF(tied_embeddings), .def = "true",
	  .help = "output layer shares the input embedding" },
	{ .key = "dropout", .type = SCHEMA_BOOL, .offset = OFF(dropout), .def = "true",
	  .help = "trained with hidden and attention dropout (false: p = 0, no masks kept)" },
	{ .key = "bias", .type = SCHEMA_BOOL, .offset = OFF(bias), .def = "true",
	  .help = "linear layers (an MoE router too) and norms carry biases" },
	{ .key = "qkv_bias", .type = SCHEMA_BOOL, .offset = OFF(qkv_bias), .def = "false",
	  .help = "with bias false: biases on the query, key and value projections only (Qwen2, Qwen2.5)" },
	{ .key = "norm_bias", .type = SCHEMA_BOOL, .offset = OFF(norm_bias), .def = "false",
	  .help = "with bias false: LayerNorms keep their shift, linear layers have no bias (Falcon)" },
	{ .key = "norms_per_layer", .type = SCHEMA_INT, .offset = OFF(norms_per_layer), .min = 1, .max = 4,
	  .def = "2", .help = "norms in one layer; with parallel_block 1 where attention and MLP share one "
			      "(Falcon-7B, GPT-J, PaLM), which the activations and element-wise work follow; "
			      "in a sequential block parameters only (they count two)" },
	{ .key = "parallel_block", .type = SCHEMA_BOOL, .offset = OFF(parallel_block), .def = "false",
	  .help = "attention and MLP run side by side on the same normalised input and their outputs are "
		  "summed (GPT-J, PaLM, GPT-NeoX's use_parallel_residual, Falcon): one TP reduction a layer in "
		  "each pass; norms_per_layer 1 (one shared norm) or 2 (GPT-NeoX: two norms of the same input)" },
	{ .key = "norm", .type = SCHEMA_ENUM, .offset = OFF(norm), .def = "layernorm",
	  .choices = norm_choices, .help = "normalisation layer" },
	{ .key = "position_embedding", .type = SCHEMA_ENUM, .offset = OFF(position_embedding),
	  .def = "learned", .choices = position_choices,
	  .help = "learned position table (GPT, BERT), rotary (Llama), alibi (MPT, BLOOM) or none (Nemotron-H 47B "
		  "and 56B, whose Mamba layers carry the order); the last three have no parameters" },
	{ .key = "positions", .type = SCHEMA_INT, .offset = OFF(positions), .min = 0, .max = BIG, .def = "0",
	  .help = "rows of the learned position table; 0: seq_len (OPT: max_position_embeddings + 2)" },
	{ .key = "causal", .type = SCHEMA_BOOL, .offset = OFF(causal), .def = "true",
	  .help = "attention with a causal mask (decoders: GPT, Llama); false for encoders such as BERT. "
		  "A flash-attention kernel skips the masked half" },
	{ .key = "attention", .type = SCHEMA_ENUM, .offset = OFF(attention), .def = "mha",
	  .choices = model_attention_names,
	  .help = "mha (multi-head, grouped-query through kv_heads) or mla (DeepSeek-V2's multi-head latent "
		  "attention, with the mla block)" },
	{ .key = "mla", .type = SCHEMA_MAP, .offset = OFF(mla), .sub = mla_schema,
	  .help = "multi-head latent attention's ranks and head sizes (DeepSeek-V2/V3 config names)" },
	{ .key = "dsa", .type = SCHEMA_MAP, .offset = OFF(dsa), .sub = dsa_schema,
	  .help = "DeepSeek Sparse Attention on MLA (DeepSeek-V3.2, GLM-5): a lightning indexer picks the "
		  "index_topk keys each query attends to; absent: dense attention" },
	{ .key = "moe", .type = SCHEMA_MAP, .offset = OFF(moe), .sub = moe_schema,
	  .help = "Mixture-of-Experts block; absent for a dense model" },
	{ .key = "mtp_layers", .type = SCHEMA_INT, .offset = OFF(mtp_layers), .min = 0, .max = 64, .def = "0",
	  .help = "multi-token prediction depth (DeepSeek-V3: 1): modules on the last pipeline stage, each a "
		  "layer of the last layer's kind (a hybrid model: mtp_pattern's layers), a 2h x h projection and "
		  "the shared output head with its loss" },
	{ .key = "mtp_pattern", .type = SCHEMA_STRING, .offset = OFF(mtp_pattern),
	  .size = sizeof(((struct model *)0)->mtp_pattern),
	  .help = "a hybrid model's layers of one multi-token prediction depth, in hybrid_pattern's symbols "
		  "(Megatron-Core's mtp_hybrid_override_pattern; Nemotron-3 Super: *E); needed with "
		  "mtp_layers on a hybrid model, each kind one hybrid_pattern has" },
	{ .key = "mtp_repeated", .type = SCHEMA_BOOL, .offset = OFF(mtp_repeated), .def = "false",
	  .help = "the mtp_layers depths share one depth's parameters, run once a depth (Megatron-Core's "
		  "mtp_use_repeated_layer; Nemotron-3 Super: true)" },
	{ .key = "sliding_window", .type = SCHEMA_MAP, .offset = OFF(sliding_window), .sub = window_schema,
	  .help = "sliding-window (local) attention: its window and the layers that use it; absent: every "
		  "layer global" },
	{ .key = "hybrid_pattern", .type = SCHEMA_STRING, .offset = OFF(hybrid_pattern),
	  .size = sizeof(((struct model *)0)->hybrid_pattern),
	  .help = "a hybrid model's layers, one symbol each (Megatron-Core's hybrid_layer_pattern): M a "
		  "Mamba-2 layer, G Gated DeltaNet, * self-attention, - MLP, E MoE, each with one pre-norm; as long as layers "
		  "(Nemotron-H 8B: M-M-M-M*-M-M-M-M-M*-...); absent: transformer layers" },
	{ .key = "hybrid_group", .type = SCHEMA_INT, .offset = OFF(hybrid_group), .min = 1, .max = 64, .def = "1",
	  .help = "pattern symbols one framework layer is written as: 2 for a GPT model with a linear "
		  "attention (Megatron's experimental_attention_variant, Qwen3-Next: a mixer and its MLP); "
		  "a pipeline stage holds whole groups" },
	{ .key = "mamba", .type = SCHEMA_MAP, .offset = OFF(mamba), .sub = mamba_schema,
	  .help = "the Mamba-2 mixer of a hybrid model's M layers (Megatron's --mamba-* arguments); "
		  "absent: its defaults" },
	{ .key = "gdn", .type = SCHEMA_MAP, .offset = OFF(gdn), .sub = gdn_schema,
	  .help = "the Gated DeltaNet mixer of a hybrid model's G layers (Megatron's --linear-* arguments); "
		  "absent: its defaults" },
	{ .key = "kind", .type = SCHEMA_CUSTOM, .parse = parse_kind,
	  .help = "transformer (the keys of this table), or multimodal (the keys below)" },
	{ 0 },
};

/* The window's pattern: L and G only, at least one L, and a layer left
 * past the global ones; a window needs a causal mask (a query meets the
 * tokens before it). */
static bool
window_finish(struct model *m, struct ytree *t, struct plan_error *err)
{
	const struct model_window *w = &m->sliding_window;

	if (w->window == 0)
		return true;
	if (w->pattern[0] == '\0' || strspn(w->pattern, "LG") != strlen(w->pattern))
		return ytree_error(t, ytree_find_path(t, "sliding_window.pattern"), err,
				   "sliding_window.pattern takes the letters L (windowed) and G (global), got '%s'",
				   w->pattern);
	if (!strchr(w->pattern, 'L'))
		return ytree_error(t, ytree_find_path(t, "sliding_window.pattern"), err,
				   "sliding_window.pattern '%s' has no windowed layer (L)", w->pattern);
	if (w->first_global_layers >= m->layers)
		return ytree_error(t, ytree_find_path(t, "sliding_window.first_global_layers"), err,
				   "sliding_window.first_global_layers (%d) leaves no windowed layer of %d",
				   w->first_global_layers, m->layers);
	if (model_windowed_layers(m) == 0)
		return ytree_error(t, ytree_find_path(t, "sliding_window.pattern"), err,
				   "sliding_window.pattern '%s' reaches no windowed layer of %d", w->pattern, m->layers);
	if (!m->causal)
		return ytree_error(t, ytree_find_path(t, "sliding_window"), err,
				   "a sliding window needs causal: true (a query attends to the tokens before it)");
	return true;
}

/* DSA is a variant of MLA (Megatron-Core builds DSAttention inside
 * MLASelfAttention's absorbed form) on a causal decoder; a sliding window
 * or a hybrid pattern with it is not modelled. */
static bool
dsa_finish(struct model *m, struct ytree *t, struct plan_error *err)
{
	yaml_node_t *at = ytree_find_path(t, "dsa");

	if (m->attention != MODEL_ATTN_MLA)
		return ytree_error(t, at, err, "a dsa block needs attention: mla (DeepSeek Sparse Attention "
				   "runs on MLA)");
	if (!m->causal)
		return ytree_error(t, at, err, "a dsa block needs causal: true (a query picks among the "
				   "tokens before it)");
	if (m->sliding_window.window > 0 || m->hybrid_pattern[0] != '\0')
		return ytree_error(t, at, err, "a dsa block with %s is not modelled",
				   m->sliding_window.window > 0 ? "sliding_window" : "a hybrid_pattern");
	return true;
}

/* A hybrid pattern: its symbols, its length, and the blocks its layers need. */
static bool
hybrid_finish(struct model *m, struct ytree *t, struct plan_error *err)
{
	const char *pat = m->hybrid_pattern;
	yaml_node_t *at = ytree_find_path(t, "hybrid_pattern");
	size_t bad = strspn(pat, model_kind_symbols);
	char sym[24];

	if (pat[bad] == '|' || pat[bad] == '/')
		return ytree_error(t, at, err,
				   "hybrid_pattern: '%c' (%s) is not taken here; write the layers only, %s",
				   pat[bad], pat[bad] == '|' ? "a pipeline stage boundary" : "multi-token prediction",
				   pat[bad] == '|' ? "and the stages with --stage-layers"
				   : "and the depths with mtp_layers and mtp_pattern");
	if (pat[bad] != '\0')
		return ytree_error(t, at, err,
				   "hybrid_pattern: '%s' at position %zu is not a layer; valid: M (Mamba-2), "
				   "G (Gated DeltaNet), * (attention), - (MLP), E (MoE)",
				   utf8_escape_first(sym, sizeof(sym), pat + bad), bad + 1);
	if (strlen(pat) != (size_t)m->layers)
		return ytree_error(t, at, err, "hybrid_pattern has %zu layers, layers says %d", strlen(pat), m->layers);
	if (m->layers % m->hybrid_group != 0)
		return ytree_error(t, ytree_find_path(t, "hybrid_group"), err,
				   "hybrid_group %d does not divide the pattern's %d layers", m->hybrid_group, m->layers);
	if (strchr(pat, 'E') && m->moe.experts == 0)
		return ytree_error(t, at, err, "hybrid_pattern has MoE layers (E) but the profile has no moe block");
	if (!strchr(pat, 'E') && m->moe.experts > 0)
		return ytree_error(t, ytree_find_path(t, "moe"), err,
				   "a moe block needs MoE layers (E) in hybrid_pattern");
	if (m->moe.experts > 0 && (m->moe.every != 1 || m->moe.first_dense_layers != 0))
		return ytree_error(t, ytree_find_path(t, "moe"), err,
				   "moe.every and moe.first_dense_layers do not apply to a hybrid model: "
				   "hybrid_pattern places its MoE layers (E)");
	if (m->parallel_block || m->sliding_window.window > 0)
		return ytree_error(t, at, err, "a hybrid model takes no %s",
				   m->parallel_block ? "parallel_block" : "sliding_window");
	if (m->mtp_layers > 0 && m->mtp_pattern[0] == '\0')
		return ytree_error(t, ytree_find_path(t, "mtp_layers"), err,
				   "a hybrid model's mtp_layers needs mtp_pattern, the layers of one depth "
				   "(Megatron-Core's mtp_hybrid_override_pattern; Nemotron-3 Super: \"*E\")");
	/* Each block's check only where its layers are: the mamba block's
	 * defaults (heads from 2 x hidden / 64) need not fit a model without
	 * M layers, such as a small Qwen3-Next. */
	if (strchr(pat, 'M') && (model_mamba_heads(m) <= 0 || model_mamba_heads(m) % m->mamba.groups != 0))
		return ytree_error(t, ytree_find_path(t, "mamba"), err,
				   "mamba: %d heads are not a multiple of its %d groups", model_mamba_heads(m),
				   m->mamba.groups);
	if (strchr(pat, 'G') && m->gdn.value_heads % m->gdn.key_heads != 0)
		return ytree_error(t, ytree_find_path(t, "gdn"), err,
				   "gdn: %d value heads are not a multiple of its %d key heads", m->gdn.value_heads,
				   m->gdn.key_heads);
	return true;
}

/*
 * Multi-token prediction's keys. A hybrid model's depth is the layers of
 * mtp_pattern (Megatron-Core's parse_hybrid_pattern and _validate_pattern,
 * megatron/core/models/hybrid/hybrid_layer_allocation.py at d98e8a6: the
 * layer symbols, no '|'); each of its kinds must be one hybrid_pattern
 * has, whose block (mamba, moe, gdn) and costs the depth's layers share.
 */
static bool
mtp_finish(const struct model *m, struct ytree *t, struct plan_error *err)
{
	const char *pat = m->mtp_pattern;
	yaml_node_t *at = ytree_find_path(t, "mtp_pattern");
	size_t bad = strspn(pat, model_kind_symbols);
	char sym[24];

	if (m->mtp_repeated && m->mtp_layers == 0)
		return ytree_error(t, ytree_find_path(t, "mtp_repeated"), err,
				   "mtp_repeated needs mtp_layers (the depths that share one depth's parameters)");
	if (pat[0] == '\0')
		return true;
	if (m->hybrid_pattern[0] == '\0')
		return ytree_error(t, at, err,
				   "mtp_pattern applies to a hybrid model (hybrid_pattern); a transformer's MTP "
				   "depth is one layer of its last layer's kind");
	if (m->mtp_layers == 0)
		return ytree_error(t, at, err, "mtp_pattern needs mtp_layers (the depths that run it)");
	if (pat[bad] == '|' || pat[bad] == '/')
		return ytree_error(t, at, err,
				   "mtp_pattern: '%c' is not taken here; write one depth's layers, and the "
				   "depths with mtp_layers", pat[bad]);
	if (pat[bad] != '\0')
		return ytree_error(t, at, err,
				   "mtp_pattern: '%s' at position %zu is not a layer; valid: M (Mamba-2), "
				   "G (Gated DeltaNet), * (attention), - (MLP), E (MoE)",
				   utf8_escape_first(sym, sizeof(sym), pat + bad), bad + 1);
	for (const char *c = pat; *c; c++)
		if (!strchr(m->hybrid_pattern, *c))
			return ytree_error(t, at, err,
					   "mtp_pattern: '%c' at position %zu is a kind hybrid_pattern has no "
					   "layer of: not modelled", *c, (size_t)(c - pat) + 1);
	return true;
}

static bool
model_finish(struct model *m, struct ytree *t, struct plan_error *err)
{
	if (m->kv_heads == 0)
		m->kv_heads = m->heads;
	if (m->ffn_hidden == 0)
		m->ffn_hidden = 4 * m->hidden; /* hidden <= 1e6: no overflow */
	if (m->moe.experts > 0) {
		if (m->moe.expert_ffn_hidden == 0)
			m->moe.expert_ffn_hidden = m->ffn_hidden;
		if (m->moe.top_k > m->moe.experts)
			return ytree_error(t, ytree_find_path(t, "moe.top_k"), err, "moe.top_k (%d) is more than moe.experts (%d)",
					   m->moe.top_k, m->moe.experts);
		if (m->moe.every > m->layers)
			return ytree_error(t, ytree_find_path(t, "moe.every"), err, "moe.every (%d) is more than layers (%d): no MoE layer",
					   m->moe.every, m->layers);
	}
	if (m->attention == MODEL_ATTN_MLA && m->mla.kv_lora_rank == 0)
		return ytree_error(t, ytree_find_path(t, "attention"), err,
				   "attention: mla needs an mla block (kv_lora_rank, qk_nope_head_dim, "
				   "qk_rope_head_dim, v_head_dim)");
	/* Megatron-Core's MLATransformerConfig: "Output gate is not supported for MLA yet". */
	if (m->attention == MODEL_ATTN_MLA && m->attention_output_gate)
		return ytree_error(t, ytree_find_path(t, "attention_output_gate"), err,
				   "attention_output_gate needs attention: mha (Megatron-Core has no gate for MLA)");
	if (m->attention != MODEL_ATTN_MLA && m->mla.kv_lora_rank > 0)
		return ytree_error(t, ytree_find_path(t, "mla"), err, "an mla block needs attention: mla");
	if (m->dsa.index_n_heads > 0 && !dsa_finish(m, t, err))
		return false;
	if (m->moe.experts > 0 && m->moe.first_dense_layers >= m->layers)
		return ytree_error(t, ytree_find_path(t, "moe.first_dense_layers"), err,
				   "moe.first_dense_layers (%d) leaves no MoE layer of %d",
				   m->moe.first_dense_layers, m->layers);
	if (m->norm_bias && m->norm != MODEL_NORM_LAYERNORM)
		return ytree_error(t, ytree_find_path(t, "norm_bias"), err,
				   "norm_bias needs norm: layernorm (an RMSNorm has no shift)");
	if (m->positions > 0 && m->position_embedding != MODEL_POS_LEARNED)
		return ytree_error(t, ytree_find_path(t, "positions"), err,
				   "positions needs position_embedding: learned (the others have no table)");
	if (m->parallel_block && model_norms_per_layer(m) > 2)
		return ytree_error(t, ytree_find_path(t, "norms_per_layer"), err,
				   "a parallel block has 1 or 2 norms a layer, not %d", m->norms_per_layer);
	if (!window_finish(m, t, err))
		return false;
	if (m->hybrid_pattern[0] == '\0' && ytree_find(t, ytree_root(t), "mamba"))
		return ytree_error(t, ytree_find(t, ytree_root(t), "mamba"), err, "a mamba block needs a hybrid_pattern");
	if (m->hybrid_pattern[0] == '\0' && ytree_find(t, ytree_root(t), "hybrid_group"))
		return ytree_error(t, ytree_find(t, ytree_root(t), "hybrid_group"), err,
				   "hybrid_group needs a hybrid_pattern");
	if (m->hybrid_group == 0) /* no key (a model built in code): one symbol a layer */
		m->hybrid_group = 1;
	if (m->hybrid_pattern[0] == '\0' && ytree_find(t, ytree_root(t), "gdn"))
		return ytree_error(t, ytree_find(t, ytree_root(t), "gdn"), err, "a gdn block needs a hybrid_pattern");
	if (m->gdn.key_head_dim == 0) /* no gdn block: its defaults */
		m->gdn = (struct model_gdn){ .key_head_dim = 128, .value_head_dim = 128, .key_heads = 16,
					     .value_heads = 32, .conv_kernel = 4 };
	if (m->mamba.head_dim == 0) /* no mamba block: its defaults */
		m->mamba = (struct model_mamba){ .state_dim = 128, .head_dim = 64, .groups = 8,
						 .conv_kernel = 4, .chunk_size = 128 };
	if (m->hybrid_pattern[0] != '\0' && !hybrid_finish(m, t, err))
		return false;
	if (!mtp_finish(m, t, err))
		return false;
	if (m->head_dim == 0 && m->hidden % m->heads != 0)
		return ytree_error(t, ytree_find_path(t, "hidden"), err,
				   "hidden (%d) must be divisible by heads (%d)",
				   m->hidden, m->heads);
	if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
		return ytree_error(t, ytree_find_path(t, "kv_heads"), err,
				   "heads (%d) must be a multiple of kv_heads (%d)",
				   m->heads, m->kv_heads);
	return true;
}

bool
model_apply_node(struct model *m, struct ytree *t, yaml_node_t *node, struct plan_error *err)
{
	memset(m, 0, sizeof(*m));
	return schema_apply(model_schema, t, node, m, err) && model_finish(m, t, err);
}

static bool
finish_cb(void *obj, struct ytree *t, struct plan_error *err)
{
	return model_finish(obj, t, err);
}

static const struct schema_profile model_profile = {
	model_schema, sizeof(struct model), NULL, finish_cb,
};

bool
model_load_file(struct model *x, const char *path, struct plan_error *err)
{
	return schema_load(&model_profile, path, NULL, x, err);
}

bool
model_load_string(struct model *x, const char *name, const char *text, struct plan_error *err)
{
	return schema_load(&model_profile, name, text, x, err);
}
