#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "io/hf_config.h"
#include "io/infile.h"
#include "io/json_where.h"
#include "io/profile_load.h"
#include "io/utf8.h"

/*
 * Hugging Face transformers' config.json, by model_type: which plan-cli
 * keys each architecture implies (the modeling_*.py of transformers:
 * norms, MLP, positions, biases), and where its sizes are. Fields are
 * read under the names transformers uses; a field a family needs and the
 * file lacks is an error naming it.
 */
enum hf_family {
	HF_LLAMA,     /* llama, mistral, mixtral, qwen2, qwen3(_moe), gemma: RMSNorm, SwiGLU/GeGLU, RoPE */
	HF_GPT2,      /* gpt2: LayerNorm, GeLU, learned positions, biases, tied */
	HF_NEOX,      /* gpt_neox: LayerNorm, GeLU, rotary, biases, untied embed_out */
	HF_DEEPSEEK,  /* deepseek_v2/v3, kimi_k2: MLA, DeepSeekMoE */
	HF_OPT,       /* opt: LayerNorm, ReLU, learned positions offset by 2, enable_bias, tied */
	HF_FALCON,    /* falcon: LayerNorm, GeLU, rotary, parallel attention and MLP, multi-query, tied */
	HF_COHERE,    /* cohere: LayerNorm without shift, SwiGLU, rotary, parallel block, tied */
	HF_PHI,       /* phi (Phi-1.5, Phi-2): LayerNorm, GeLU, partial rotary, biases, parallel block */
	HF_NEMOTRON_H, /* nemotron_h: hybrid Mamba-2/attention/MLP/MoE layers (hf_nemotron_h) */
	HF_QWEN3_NEXT, /* qwen3_next: hybrid Gated DeltaNet/gated attention, MoE (hf_qwen3_next) */
	HF_GPT_OSS,    /* gpt_oss: GQA with sinks, biased experts and router, alternate windows (hf_gpt_oss) */
	HF_GLM4_MOE,   /* glm4_moe: GQA with q, k, v biases, DeepSeek-V3's experts, MTP (hf_glm4_moe) */
	HF_MINIMAX_M2, /* minimax_m2: GQA with full-width q/k norms, experts in every layer (hf_minimax_m2) */
};

/* The default training sequence length of an imported model (see hf_shape). */
#define HF_TRAIN_SEQ_LEN 4096

/*
 * Which bias fields the modeling code reads. Mistral's, Mixtral's and
 * Qwen2's hard-code theirs (none; Qwen2 q, k, v only) and GPT-2's are
 * always there, so those configs' bias fields are ignored as
 * transformers ignores them.
 */
enum hf_bias_fields {
	HF_BIAS_FIXED,     /* none read */
	HF_BIAS_ATTN,      /* attention_bias: q, k, v and o (Gemma, Qwen3, GPT-NeoX, DeepSeek's MLA) */
	HF_BIAS_ATTN_MLP,  /* attention_bias and mlp_bias (LlamaAttention, LlamaMLP) */
};

/*
 * Where a family's sliding window is said (transformers' config classes):
 * MistralConfig's sliding_window defaults to 4096 (Mistral 7B v0.1; null
 * in v0.2 and later), MixtralConfig's to null; Qwen2's and Qwen3's
 * applies only with use_sliding_window (default false), from layer
 * max_window_layers on (Qwen2Config: sliding_window 4096,
 * max_window_layers 28). GptOssConfig's defaults to 128, on every other
 * layer from the first (its default layer_types: sliding_attention when
 * (i + 1) % 2, else full_attention). A layer_types list, where a config
 * has one, says which layers.
 */
enum hf_window {
	HF_WIN_NONE,
	HF_WIN_MISTRAL,
	HF_WIN_FIELD,
	HF_WIN_QWEN,
	HF_WIN_GPT_OSS,
};

struct hf_arch {
	const char *model_type;
	enum hf_family family;
	bool tied;            /* the family's default tie_word_embeddings */
	bool qkv_bias;        /* Qwen2's q, k, v biases */
	bool qk_norm;         /* Qwen3's per-head q/k norms */
	bool moe;             /* reads the experts */
	int head_dim;         /* the config class's default head_dim (GemmaConfig: 256); 0: hidden / heads */
	enum hf_bias_fields bias_fields;
	long max_positions;   /* the config class's default max_position_embeddings; -1: required */
	enum hf_window window;
};

static const struct hf_arch hf_archs[] = {
	{ "llama", HF_LLAMA, false, false, false, false, 0, HF_BIAS_ATTN_MLP, -1, HF_WIN_NONE },
	{ "mistral", HF_LLAMA, false, false, false, false, 0, HF_BIAS_FIXED, -1, HF_WIN_MISTRAL },
	{ "mixtral", HF_LLAMA, false, false, false, true, 0, HF_BIAS_FIXED, -1, HF_WIN_FIELD },
	{ "qwen2", HF_LLAMA, false, true, false, false, 0, HF_BIAS_FIXED, -1, HF_WIN_QWEN },
	{ "qwen3", HF_LLAMA, false, false, true, false, 0, HF_BIAS_ATTN, -1, HF_WIN_QWEN },
	{ "qwen3_moe", HF_LLAMA, false, false, true, true, 0, HF_BIAS_ATTN, -1, HF_WIN_QWEN },
	{ "gemma", HF_LLAMA, true, false, false, false, 256, HF_BIAS_ATTN, -1, HF_WIN_NONE },
	{ "gpt2", HF_GPT2, true, false, false, false, 0, HF_BIAS_FIXED, -1, HF_WIN_NONE },
	{ "gpt_neox", HF_NEOX, false, false, false, false, 0, HF_BIAS_ATTN, -1, HF_WIN_NONE },
	{ "deepseek_v2", HF_DEEPSEEK, false, false, false, true, 0, HF_BIAS_ATTN_MLP, -1, HF_WIN_NONE },
	{ "deepseek_v3", HF_DEEPSEEK, false, false, false, true, 0, HF_BIAS_ATTN_MLP, -1, HF_WIN_NONE },
	/* Kimi K2 (moonshotai/Kimi-K2-*): DeepSeek-V3's architecture under its own
	 * model_type, read as deepseek_v3 (its config.json names the class
	 * DeepseekV3ForCausalLM; Megatron-Bridge's KimiK2Bridge, kimi_bridge.py
	 * at 067f987, maps model_type kimi_k2 with DeepSeek-V3's fields). */
	{ "kimi_k2", HF_DEEPSEEK, false, false, false, true, 0, HF_BIAS_ATTN_MLP, -1, HF_WIN_NONE },
	{ "deepseek_v32", HF_DEEPSEEK, false, false, false, true, 0, HF_BIAS_ATTN_MLP, -1, HF_WIN_NONE },
	{ "glm_moe_dsa", HF_DEEPSEEK, false, false, false, true, 0, HF_BIAS_ATTN_MLP, -1, HF_WIN_NONE },
	{ "opt", HF_OPT, true, false, false, false, 0, HF_BIAS_FIXED, 2048, HF_WIN_NONE },
	{ "falcon", HF_FALCON, true, false, false, false, 0, HF_BIAS_FIXED, 2048, HF_WIN_NONE },
	{ "cohere", HF_COHERE, true, false, false, false, 0, HF_BIAS_ATTN, -1, HF_WIN_NONE },
	{ "phi", HF_PHI, false, false, false, false, 0, HF_BIAS_FIXED, 2048, HF_WIN_NONE },
	{ "nemotron_h", HF_NEMOTRON_H, false, false, false, false, 128, HF_BIAS_FIXED, 4096, HF_WIN_NONE },
	{ "qwen3_next", HF_QWEN3_NEXT, false, false, true, true, 256, HF_BIAS_ATTN, 32768, HF_WIN_NONE },
	{ "gpt_oss", HF_GPT_OSS, false, false, false, true, 64, HF_BIAS_FIXED, 131072, HF_WIN_GPT_OSS },
	{ "glm4_moe", HF_GLM4_MOE, false, false, false, true, 0, HF_BIAS_FIXED, 131072, HF_WIN_NONE },
	{ "minimax_m2", HF_MINIMAX_M2, false, false, true, true, 128, HF_BIAS_FIXED, 196608, HF_WIN_NONE },
	{ NULL, HF_LLAMA, false, false, false, false, 0, HF_BIAS_FIXED, -1, HF_WIN_NONE },
};

/*
 * Gemma 2 and 3 normalise before and after both attention and the MLP
 * (Gemma2DecoderLayer's pre_/post_feedforward_layernorm): four RMSNorms
 * a layer, where plan-cli counts two. Named in the refusal.
 */
static const char *const hf_four_norms[] = { "gemma2", "gemma3", "gemma3_text", NULL };

struct hf_reader {
	const char *path;
	const char *text; /* the JSON, for where a field is */
	size_t len;
	json_t *root;
	struct plan_error *err;
};

/* An error about top-level field @field: at its value's line and byte
 * column when the file has it (jansson keeps no positions). */
static bool __attribute__((format(printf, 3, 4)))
hf_error(const struct hf_reader *r, const char *field, const char *fmt, ...)
{
	size_t at = json_where_key(r->text, r->len, field);
	char msg[sizeof(r->err->message)];
	int line = 0, column = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (at != JSON_WHERE_NONE)
		json_where_line(r->text, at, &line, &column);
	return plan_error_set(r->err, PLAN_ERR_INPUT, r->path, line, column, "%s", msg);
}

static bool
hf_fail(const struct hf_reader *r, const char *what, const char *field)
{
	return hf_error(r, field, "%s '%s'", what, field);
}

/* An integer field (the first of @names present); @def when none is and
 * @def >= 0, else an error naming the first. */
static bool
hf_int(const struct hf_reader *r, const char *const *names, long def, long *out)
{
	for (int i = 0; names[i]; i++) {
		json_t *v = json_object_get(r->root, names[i]);

		if (!v || json_is_null(v))
			continue;
		/* 4096.0 is a real to jansson: transformers writes sizes as ints. */
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return hf_fail(r, "expected a whole number >= 0 in field", names[i]);
		/* plan-cli's sizes are ints; the cap also keeps products such
		 * as 4 * n_embd and heads * head_dim inside a long. */
		if (json_integer_value(v) > INT_MAX)
			return hf_fail(r, "number too large (over 2147483647) in field", names[i]);
		*out = (long)json_integer_value(v);
		return true;
	}
	if (def < 0)
		return hf_fail(r, "missing field", names[0]);
	*out = def;
	return true;
}

static bool
hf_bool(const struct hf_reader *r, const char *name, bool def, bool *out)
{
	json_t *v = json_object_get(r->root, name);

	if (!v || json_is_null(v)) {
		*out = def;
		return true;
	}
	if (!json_is_boolean(v))
		return hf_fail(r, "expected true or false in field", name);
	*out = json_is_true(v);
	return true;
}

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

/*
 * Falcon's key/value heads, as FalconAttention sizes query_key_value:
 * num_kv_heads (default every head) with new_decoder_architecture
 * (Falcon-40B, 180B), else one with multi_query (Falcon-7B: h + 2 d
 * columns), else every head.
 */
static bool
hf_falcon_kv(const struct hf_reader *r, long heads, long *kv)
{
	bool new_arch, mq;

	if (!hf_bool(r, "new_decoder_architecture", false, &new_arch) || !hf_bool(r, "multi_query", true, &mq))
		return false;
	if (new_arch)
		return hf_int(r, NAMES("num_kv_heads", "n_head_kv"), heads, kv);
	*kv = mq ? 1 : heads;
	return true;
}

/*
 * Layers, width, heads, vocabulary and length, under each family's
 * names. GPT-2's and GPT-NeoX's attention is multi-head with
 * hidden / heads per head, whatever num_key_value_heads or head_dim
 * say; DeepSeek's head sizes are MLA's (hf_mla), its config's head_dim
 * being the rotary part.
 */
static bool
hf_shape(const struct hf_reader *r, const struct hf_arch *a, FILE *out)
{
	bool llama = a->family == HF_LLAMA;
	bool mha = llama || a->family == HF_DEEPSEEK || a->family == HF_COHERE || a->family == HF_PHI;
	long layers, hidden, heads, kv, vocab, seq, head_dim = 0;

	if (!hf_int(r, NAMES("num_hidden_layers", "n_layer"), -1, &layers) ||
	    !hf_int(r, NAMES("hidden_size", "n_embd"), -1, &hidden) ||
	    !hf_int(r, NAMES("num_attention_heads", "n_head"), -1, &heads))
		return false;
	kv = heads;
	if ((mha && !hf_int(r, NAMES("num_key_value_heads"), heads, &kv)) ||
	    (a->family == HF_FALCON && !hf_falcon_kv(r, heads, &kv)) ||
	    !hf_int(r, NAMES("vocab_size"), -1, &vocab) ||
	    !hf_int(r, NAMES("max_position_embeddings", "n_positions"), a->max_positions, &seq) ||
	    (llama && !hf_int(r, NAMES("head_dim"), a->head_dim, &head_dim)))
		return false;
	/*
	 * max_position_embeddings is the longest context the released model
	 * serves (128k for Llama 3.1), not the length it is trained at: the
	 * bulk of pre-training runs at 4k-8k and long contexts are extended
	 * afterwards (Llama 3 report, Section 3.4). The default training
	 * length is therefore the smaller of it and HF_TRAIN_SEQ_LEN; pass
	 * --seq-len for another. GPT-2's n_positions is also the size of its
	 * learned position table (wpe), which seq_len sets: kept whole.
	 */
	fprintf(out, "layers: %ld\nhidden: %ld\nheads: %ld\nkv_heads: %ld\nvocab: %ld\n"
		"seq_len: %ld  # max_position_embeddings %ld\n",
		layers, hidden, heads, kv, vocab,
		seq < HF_TRAIN_SEQ_LEN || a->family == HF_GPT2 ? seq : HF_TRAIN_SEQ_LEN, seq);
	if (head_dim > 0 && head_dim * heads != hidden)
		fprintf(out, "head_dim: %ld\n", head_dim);
	/* OPTLearnedPositionalEmbedding keeps 2 rows before the first position (fairseq's padding offset). */
	if (a->family == HF_OPT)
		fprintf(out, "positions: %ld  # max_position_embeddings + OPT's offset 2\n", seq + 2);
	/* GPT-2's wpe: n_positions rows, so that a longer --seq-len is refused
	 * rather than given a table the checkpoint does not have. */
	if (a->family == HF_GPT2)
		fprintf(out, "positions: %ld  # n_positions: the learned table's rows\n", seq);
	return true;
}

/*
 * Mixtral's, Qwen3-MoE's and DeepSeek's experts, under each one's names
 * (an error names the field that family would have). Mixtral's experts
 * are intermediate_size wide and in every layer. Qwen3-MoE's layer i
 * (from 0) is sparse when (i + 1) % decoder_sparse_step == 0: plan-cli's
 * every. DeepSeek's first_k_dense_replace layers are dense; its
 * moe_layer_freq other than 1 is refused, as transformers ignores it
 * (every later layer is MoE) while DeepSeek's own modeling_deepseek.py
 * makes layer i MoE when i % moe_layer_freq == 0, a third placement.
 */
static bool
hf_moe(const struct hf_reader *r, const struct hf_arch *a, FILE *out)
{
	bool ds = a->family == HF_DEEPSEEK, mixtral = strcmp(a->model_type, "mixtral") == 0;
	long experts, top_k, ffn, shared = 0, dense = 0, every = 1;
	json_t *only = json_object_get(r->root, "mlp_only_layers");

	if (!hf_int(r, ds ? NAMES("n_routed_experts") : mixtral ? NAMES("num_local_experts") : NAMES("num_experts"),
		    -1, &experts) ||
	    !hf_int(r, NAMES("num_experts_per_tok"), -1, &top_k) ||
	    !hf_int(r, mixtral ? NAMES("intermediate_size") : NAMES("moe_intermediate_size"), -1, &ffn))
		return false;
	if (!mixtral && !hf_int(r, ds ? NAMES("moe_layer_freq") : NAMES("decoder_sparse_step"), 1, &every))
		return false;
	if (ds && (!hf_int(r, NAMES("n_shared_experts"), 0, &shared) ||
		   !hf_int(r, NAMES("first_k_dense_replace"), 0, &dense)))
		return false;
	if (ds && every != 1)
		return hf_fail(r, "MoE layers other than every layer past the dense ones are not modelled: field",
			       "moe_layer_freq");
	if (!ds && !mixtral && only && json_is_array(only) && json_array_size(only) > 0)
		return hf_fail(r, "dense layers listed one by one are not modelled: field", "mlp_only_layers");
	fprintf(out, "moe:\n  experts: %ld\n  top_k: %ld\n  every: %ld\n  expert_ffn_hidden: %ld\n", experts,
		top_k, every > 0 ? every : 1, ffn);
	if (shared > 0)
		fprintf(out, "  shared_experts: %ld\n", shared);
	if (dense > 0)
		fprintf(out, "  first_dense_layers: %ld\n", dense);
	return true;
}

/* DeepSeek-V2/V3's multi-head latent attention. */
static bool
hf_mla(const struct hf_reader *r, FILE *out)
{
	long q, kv, nope, rope, v;

	if (!hf_int(r, NAMES("q_lora_rank"), 0, &q) || !hf_int(r, NAMES("kv_lora_rank"), -1, &kv) ||
	    !hf_int(r, NAMES("qk_nope_head_dim"), -1, &nope) ||
	    !hf_int(r, NAMES("qk_rope_head_dim"), -1, &rope) || !hf_int(r, NAMES("v_head_dim"), -1, &v))
		return false;
	fprintf(out, "attention: mla\nmla:\n  q_lora_rank: %ld\n  kv_lora_rank: %ld\n  qk_nope_head_dim: %ld\n"
		"  qk_rope_head_dim: %ld\n  v_head_dim: %ld\n", q, kv, nope, rope, v);
	return true;
}

/*
 * DeepSeek Sparse Attention's indexer (model_type deepseek_v32, DeepSeek-V3.2;
 * glm_moe_dsa, GLM-5): index_n_heads, index_head_dim, index_topk, and where
 * a config has them (GLM-5.2) index_topk_freq and index_skip_topk_offset, as
 * Megatron-Bridge's GLM5Bridge reads them (glm_moe_dsa/glm5_bridge.py
 * @067f987). The indexer loss is a training choice no config holds: the
 * dsa block's default (sparse, as that bridge sets). Other model types: none.
 */
static bool
hf_dsa(const struct hf_reader *r, const struct hf_arch *a, FILE *out)
{
	long heads, dim, topk, freq, offset;

	if (strcmp(a->model_type, "deepseek_v32") != 0 && strcmp(a->model_type, "glm_moe_dsa") != 0)
		return true;
	if (!hf_int(r, NAMES("index_n_heads"), -1, &heads) || !hf_int(r, NAMES("index_head_dim"), -1, &dim) ||
	    !hf_int(r, NAMES("index_topk"), -1, &topk) || !hf_int(r, NAMES("index_topk_freq"), 1, &freq) ||
	    !hf_int(r, NAMES("index_skip_topk_offset"), 0, &offset))
		return false;
	fprintf(out, "dsa:\n  index_n_heads: %ld\n  index_head_dim: %ld\n  index_topk: %ld\n", heads, dim, topk);
	if (freq != 1)
		fprintf(out, "  index_topk_freq: %ld\n", freq);
	if (offset != 0)
		fprintf(out, "  index_skip_topk_offset: %ld\n", offset);
	return true;
}

/*
 * The model key bias from the config's bias fields. plan-cli's bias is
 * every linear layer's (and LayerNorm's) bias, qkv_bias q, k and v's
 * alone; what neither says exactly is refused rather than miscounted:
 * attention_bias alone adds o's bias too, mlp_bias alone the MLP's, and
 * experts (Mixtral, Qwen3-MoE, DeepSeek) keep none whatever the fields
 * say, nor do DeepSeek's q_b_proj and kv_b_proj.
 */
static bool
hf_bias(const struct hf_reader *r, const struct hf_arch *a, bool *bias)
{
	bool attn = a->family == HF_NEOX || a->family == HF_GPT2 || a->family == HF_PHI, mlp = attn;

	if (a->bias_fields != HF_BIAS_FIXED && !hf_bool(r, "attention_bias", attn, &attn))
		return false;
	if (a->bias_fields == HF_BIAS_ATTN_MLP && !hf_bool(r, "mlp_bias", mlp, &mlp))
		return false;
	*bias = attn;
	if (attn == mlp && !(attn && (a->moe || a->family == HF_DEEPSEEK)))
		return true;
	if (attn)
		return hf_fail(r, "biases on q, k, v and o but not on every MLP and expert are not modelled "
				  "(model keys bias, qkv_bias): field", "attention_bias");
	return hf_fail(r, "biases on the MLP but not on attention are not modelled (model key bias): field",
		       a->family == HF_NEOX ? "attention_bias" : "mlp_bias");
}

/*
 * OPT (transformers' modeling_opt.py): every linear layer's bias is
 * enable_bias's, the LayerNorms keep their shift either way; fc1 and fc2
 * ffn_dim wide, ReLU. What a profile cannot count is refused: a token
 * table narrower than hidden_size with project_in and project_out
 * (OPT-350m's word_embed_proj_dim 512), a post-LN model
 * (do_layer_norm_before false, OPT-350m again), whose OPTDecoder has no
 * final LayerNorm, likewise _remove_final_layer_norm, and LayerNorms
 * without scale and shift.
 */
static bool
hf_opt(const struct hf_reader *r, long hidden, bool bias, FILE *out)
{
	long ffn, proj;
	bool pre_ln, no_final, affine;

	if (!hf_int(r, NAMES("ffn_dim"), -1, &ffn) || !hf_int(r, NAMES("word_embed_proj_dim"), hidden, &proj) ||
	    !hf_bool(r, "do_layer_norm_before", true, &pre_ln) ||
	    !hf_bool(r, "_remove_final_layer_norm", false, &no_final) ||
	    !hf_bool(r, "layer_norm_elementwise_affine", true, &affine))
		return false;
	if (proj != hidden)
		return hf_fail(r, "a token embedding narrower or wider than hidden_size (project_in, project_out) "
				  "is not modelled: field", "word_embed_proj_dim");
	if (!pre_ln)
		return hf_fail(r, "a post-LN OPT has no final LayerNorm, which a profile counts: field",
			       "do_layer_norm_before");
	if (no_final)
		return hf_fail(r, "an OPT without its final LayerNorm is not modelled: field", "_remove_final_layer_norm");
	if (!affine)
		return hf_fail(r, "LayerNorms without scale and shift are not modelled: field",
			       "layer_norm_elementwise_affine");
	fprintf(out, "ffn_hidden: %ld\ngated_mlp: false\nnorm: layernorm\nposition_embedding: learned\n", ffn);
	if (!bias)
		fputs("norm_bias: true\n", out);
	return true;
}

/*
 * Falcon (modeling_falcon.py): FalconDecoderLayer runs attention and the
 * MLP side by side on one input_layernorm (Falcon-7B), or on ln_attn and
 * ln_mlp (new_decoder_architecture: num_ln_in_parallel_attn defaults to
 * 2), or one after the other with two norms (parallel_attn false).
 * Linear layers' biases are bias's (default false), the LayerNorms keep
 * their shift; the MLP is GeLU, ffn_hidden_size wide (default 4 h).
 * ALiBi (alibi true, Falcon-RW) has no parameters, as rotary has none.
 */
static bool
hf_falcon(const struct hf_reader *r, long hidden, bool bias, FILE *out)
{
	bool new_arch, parallel, alibi;
	long ffn, lns, norms;

	if (!hf_bool(r, "new_decoder_architecture", false, &new_arch) ||
	    !hf_bool(r, "parallel_attn", true, &parallel) || !hf_bool(r, "alibi", false, &alibi) ||
	    !hf_int(r, NAMES("num_ln_in_parallel_attn"), new_arch ? 2 : 1, &lns) ||
	    !hf_int(r, NAMES("ffn_hidden_size"), 4 * hidden, &ffn))
		return false;
	/* FalconDecoderLayer.forward reads ln_attn only with new_decoder_architecture. */
	if (parallel && lns == 2 && !new_arch)
		return hf_fail(r, "two norms in a parallel block need new_decoder_architecture: field",
			       "num_ln_in_parallel_attn");
	norms = !parallel || lns == 2 ? 2 : 1;
	fprintf(out, "ffn_hidden: %ld\ngated_mlp: false\nnorm: layernorm\nposition_embedding: %s\n", ffn,
		alibi ? "alibi" : "rotary");
	if (parallel)
		fputs("parallel_block: true  # parallel_attn\n", out);
	if (norms != 2)
		fprintf(out, "norms_per_layer: %ld  # attention and MLP share input_layernorm\n", norms);
	if (!bias)
		fputs("norm_bias: true\n", out);
	return true;
}

/*
 * A layer_types list ("sliding_attention" or "full_attention" a layer,
 * transformers 4.53 on) as the profile's pattern: the shortest period
 * (up to 63 layers) that repeats over the list, after the global layers
 * that lead it if that is what makes one repeat (Qwen2's
 * max_window_layers). What no such pattern says is refused.
 */
/* The shortest period, up to 63, of the @n kinds at @k; 0: none. */
static size_t
hf_period(const char *k, size_t n)
{
	for (size_t per = 1; per < 64 && per <= n; per++) {
		size_t i = per;

		while (i < n && k[i] == k[i % per])
			i++;
		if (i == n)
			return per;
	}
	return 0;
}

static bool
hf_layer_types(const struct hf_reader *r, json_t *types, long layers, char *pattern, long *first_global)
{
	size_t n = json_array_size(types), per[2] = { 0, 0 };
	char kinds[100001];
	int j;

	if (n != (size_t)layers || n >= sizeof(kinds))
		return hf_fail(r, "a list of one type a layer (num_hidden_layers) expected in field", "layer_types");
	for (size_t i = 0; i < n; i++) {
		const char *k = json_string_value(json_array_get(types, i));

		if (k && strcmp(k, "sliding_attention") == 0)
			kinds[i] = 'L';
		else if (k && strcmp(k, "full_attention") == 0)
			kinds[i] = 'G';
		else
			return hf_fail(r, "a layer type other than sliding_attention and full_attention in field",
				       "layer_types");
	}
	kinds[n] = '\0';
	/* From the first layer, and past the leading global layers: the
	 * shorter period wins, the first on a tie. */
	for (j = 0; j < 2; j++) {
		size_t lead = j == 0 ? 0 : strspn(kinds, "G");

		if (j == 1 && (lead == 0 || lead == n))
			break;
		per[j] = hf_period(kinds + lead, n - lead);
	}
	j = per[1] > 0 && (per[0] == 0 || per[1] < per[0]) ? 1 : 0;
	if (per[j] > 0) {
		size_t lead = j == 0 ? 0 : strspn(kinds, "G");

		memcpy(pattern, kinds + lead, per[j]);
		pattern[per[j]] = '\0';
		*first_global = (long)lead;
		return true;
	}
	return hf_fail(r, "layer types that no pattern of up to 63 layers repeats are not modelled: field",
		       "layer_types");
}

/*
 * The sliding window (enum hf_window), written as the sliding_window
 * block; none where the config has none, or null, or layer_types has no
 * sliding layer.
 */
static bool
hf_window(const struct hf_reader *r, const struct hf_arch *a, FILE *out)
{
	json_t *w = json_object_get(r->root, "sliding_window");
	json_t *types = json_object_get(r->root, "layer_types");
	long window = 0, layers, first_global = 0;
	char pattern[64] = "L";
	bool use = true;

	if (a->window == HF_WIN_NONE)
		return true;
	if (a->window == HF_WIN_GPT_OSS)
		strcpy(pattern, "LG");
	if (!hf_int(r, NAMES("num_hidden_layers"), -1, &layers))
		return false;
	if (a->window == HF_WIN_QWEN &&
	    (!hf_bool(r, "use_sliding_window", false, &use) ||
	     !hf_int(r, NAMES("max_window_layers"), 28, &first_global)))
		return false;
	/* null: no window, whatever the class's default */
	if (!use || (w && json_is_null(w)) || (!w && a->window == HF_WIN_FIELD))
		return true;
	if (!hf_int(r, NAMES("sliding_window"), a->window == HF_WIN_GPT_OSS ? 128 : 4096, &window))
		return false;
	if (window == 0)
		return true;
	if (types && json_is_array(types)) {
		if (!hf_layer_types(r, types, layers, pattern, &first_global))
			return false;
		if (!strchr(pattern, 'L'))
			return true;
	} else if (first_global >= layers) {
		return true; /* Qwen2: max_window_layers past the last layer, no sliding layer */
	}
	fprintf(out, "sliding_window:\n  window: %ld\n  pattern: %s\n", window, pattern);
	if (first_global > 0)
		fprintf(out, "  first_global_layers: %ld\n", first_global);
	return true;
}

/*
 * Cohere (modeling_cohere.py, Command R) and Phi (modeling_phi.py,
 * Phi-1.5 and Phi-2): one input_layernorm feeds attention and the MLP,
 * whose outputs are added to the layer input, a parallel block of one
 * norm. Cohere: CohereLayerNorm has a scale and no shift, the MLP is
 * SwiGLU without biases. Phi: LayerNorm with its shift, a GeLU MLP
 * (fc1, fc2) and every linear layer with a bias (bias true), rotary on
 * partial_rotary_factor of each head (no weights); lm_head's bias
 * (vocab_size values) is not counted. Their per-head query/key norms
 * (Cohere's use_qk_norm, a LayerNorm of heads x head_dim; Phi's
 * qk_layernorm, with shifts) are not the RMSNorm of qk_norm: refused.
 */
static bool
hf_parallel_family(const struct hf_reader *r, const struct hf_arch *a, FILE *out)
{
	bool cohere = a->family == HF_COHERE, qk;

	if (!hf_bool(r, cohere ? "use_qk_norm" : "qk_layernorm", false, &qk))
		return false;
	if (qk)
		return hf_fail(r, "per-head query and key LayerNorms are not modelled: field",
			       cohere ? "use_qk_norm" : "qk_layernorm");
	fprintf(out, "gated_mlp: %s\nnorm: layernorm\nposition_embedding: rotary\n"
		"parallel_block: true\nnorms_per_layer: 1  # one input_layernorm feeds attention and the MLP\n",
		cohere ? "true" : "false");
	return true;
}

/* What the family implies, and its MLP width. */
static bool
hf_family_keys(const struct hf_reader *r, const struct hf_arch *a, FILE *out)
{
	long ffn = 0, hidden = 0;
	bool tied = false, bias = false;

	if (!hf_bool(r, "tie_word_embeddings", a->tied, &tied) ||
	    !hf_int(r, NAMES("hidden_size", "n_embd"), -1, &hidden))
		return false;
	/* OPT's enable_bias (default true), Falcon's bias (default false). */
	if (a->family == HF_OPT || a->family == HF_FALCON) {
		if (!hf_bool(r, a->family == HF_OPT ? "enable_bias" : "bias", a->family == HF_OPT, &bias))
			return false;
	} else if (!hf_bias(r, a, &bias))
		return false;
	fprintf(out, "tied_embeddings: %s\nbias: %s\n", tied ? "true" : "false", bias ? "true" : "false");
	if (a->family == HF_OPT)
		return hf_opt(r, hidden, bias, out);
	if (a->family == HF_FALCON)
		return hf_falcon(r, hidden, bias, out);
	if (a->family == HF_GPT2) {
		if (!hf_int(r, NAMES("n_inner"), 4 * hidden, &ffn))
			return false;
		fprintf(out, "ffn_hidden: %ld\ngated_mlp: false\nnorm: layernorm\n"
			"position_embedding: learned\n", ffn);
		return true;
	}
	if (!hf_int(r, NAMES("intermediate_size"), -1, &ffn))
		return false;
	fprintf(out, "ffn_hidden: %ld\n", ffn);
	if (a->family == HF_COHERE || a->family == HF_PHI)
		return hf_parallel_family(r, a, out);
	if (a->family == HF_NEOX) {
		bool parallel;

		/* GPTNeoXLayer: with use_parallel_residual (GPTNeoXConfig's
		 * default true) attention and the MLP read input_layernorm(x)
		 * and post_attention_layernorm(x), both of the layer's input,
		 * and are summed with it: a parallel block of two norms. */
		if (!hf_bool(r, "use_parallel_residual", true, &parallel))
			return false;
		fputs("gated_mlp: false\nnorm: layernorm\nposition_embedding: rotary\n", out);
		if (parallel)
			fputs("parallel_block: true  # use_parallel_residual: two norms of the same input\n", out);
		return true;
	}
	fputs("gated_mlp: true\nnorm: rmsnorm\nposition_embedding: rotary\n", out);
	if (a->qkv_bias)
		fputs("qkv_bias: true\n", out);
	if (a->qk_norm)
		fputs("qk_norm: true\n", out);
	return true;
}

/*
 * A multimodal wrapper (LLaVA, Qwen2-VL, Llama 4, Gemma 3) keeps its
 * language model's sizes in text_config and its encoders elsewhere:
 * the top-level fields this import reads are not there, and the
 * language model alone is not the whole model. Refused, naming both.
 */
static bool
hf_not_wrapper(const struct hf_reader *r)
{
	json_t *tc = json_object_get(r->root, "text_config"), *t;

	if (!tc || !json_is_object(tc))
		return true;
	t = json_object_get(tc, "model_type");
	return hf_error(r, "text_config",
			      "a multimodal config: its language model is in field 'text_config' (model_type "
			      "'%.64s'), its encoders are not modelled; save text_config as a config.json of its "
			      "own to model the language model alone",
			      t && json_is_string(t) ? json_string_value(t) : "not given");
}

static const struct hf_arch *
hf_arch_of(const struct hf_reader *r)
{
	json_t *t = json_object_get(r->root, "model_type");
	char valid[512] = "";

	if (!hf_not_wrapper(r))
		return NULL;
	if (!t || !json_is_string(t)) {
		hf_fail(r, "missing field", "model_type");
		return NULL;
	}
	for (const struct hf_arch *a = hf_archs; a->model_type; a++) {
		if (strcmp(a->model_type, json_string_value(t)) == 0)
			return a;
		if (strlen(valid) + strlen(a->model_type) + 3 < sizeof(valid))
			strcat(strcat(valid, valid[0] ? ", " : ""), a->model_type);
	}
	for (const char *const *g = hf_four_norms; *g; g++)
		if (strcmp(*g, json_string_value(t)) == 0) {
			hf_error(r, "model_type",
				       "model_type '%s' is not supported: its four norms a layer are not modelled "
				       "(supported: %s)", *g, valid);
			return NULL;
		}
	hf_error(r, "model_type", "model_type '%.64s' is not supported (supported: %s)", json_string_value(t), valid);
	return NULL;
}

/*
 * Nemotron-H (model_type nemotron_h): transformers' models/nemotron_h,
 * configuration_nemotron_h.py and modular_nemotron_h.py (huggingface/
 * transformers main at 13923c63, 2026; NVIDIA's remote code of the
 * Nemotron-H-8B/47B/56B checkpoints before it, whose field names the
 * config class still takes). Each NemotronHBlock is one RMSNorm and one
 * mixer, by layer kind: Megatron-Core's hybrid_layer_pattern, which
 * plan-cli's hybrid_pattern is. The kinds are a string
 * (hybrid_override_pattern, the checkpoints' field) or, from the
 * dataclass config on, a list (layers_block_type, alias layer_types:
 * linear_attention or legacy mamba, full_attention or legacy attention,
 * mlp, moe); the list wins where both are, as __post_init__ does.
 */
static char
hf_nh_kind(const char *k)
{
	static const char *const names[][2] = {
		{ "linear_attention", "M" }, { "mamba", "M" }, { "full_attention", "*" },
		{ "attention", "*" },        { "mlp", "-" },   { "moe", "E" },
	};

	for (size_t i = 0; k && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(k, names[i][0]) == 0)
			return names[i][1][0];
	return '\0';
}

/* A NemotronH layer-symbol string of 1 to @max symbols (M, *, -, E)
 * from @s into @pat (at least @max + 1 bytes): the main pattern and
 * the MTP pattern share the check. */
static bool
hf_nh_symbols(const struct hf_reader *r, const char *field, json_t *s, size_t max, char *pat)
{
	const char *text = json_string_value(s);
	size_t n = text ? strlen(text) : 0, bad;

	if (n == 0 || n > max)
		return hf_error(r, field, "a string of 1 to %zu layer symbols expected in field '%s'", max, field);
	bad = strspn(text, "M*-E");
	if (bad < n) {
		char sym[24];

		return hf_error(r, field, "layer %zu's symbol '%s' is not modelled (M Mamba-2, * attention, "
				"- MLP, E MoE) in field '%s'", bad + 1,
				utf8_escape_first(sym, sizeof(sym), text + bad), field);
	}
	memcpy(pat, text, n + 1);
	return true;
}

static bool
hf_nh_list(const struct hf_reader *r, const char *field, json_t *list, char *pat)
{
	size_t n = json_array_size(list);

	if (n == 0 || n > MODEL_HYBRID_MAX)
		return hf_error(r, field, "a list of 1 to %d layer types expected in field '%s'", MODEL_HYBRID_MAX,
				field);
	for (size_t i = 0; i < n; i++) {
		const char *k = json_string_value(json_array_get(list, i));

		pat[i] = hf_nh_kind(k);
		if (!pat[i])
			return hf_error(r, field, "layer %zu's type '%.40s' is not modelled (linear_attention, "
					"full_attention, mlp and moe are) in field '%s'", i + 1, k ? k : "not a string",
					field);
	}
	pat[n] = '\0';
	return true;
}

/* The layer kinds as a hybrid_pattern into @pat (MODEL_HYBRID_MAX + 1). */
static bool
hf_nh_pattern(const struct hf_reader *r, char *pat)
{
	static const char *const lists[] = { "layers_block_type", "layer_types" };
	json_t *s = json_object_get(r->root, "hybrid_override_pattern");
	const char *field = "hybrid_override_pattern";
	long layers;

	for (size_t i = 0; i < 2; i++) {
		json_t *l = json_object_get(r->root, lists[i]);

		if (l && json_is_array(l)) {
			field = lists[i];
			if (!hf_nh_list(r, field, l, pat))
				return false;
			goto counted;
		}
	}
	if (!s || json_is_null(s))
		return hf_fail(r, "missing field", field);
	/* Megatron's other symbols (G gated DeltaNet, | a pipeline stage's
	 * end) are not NemotronH's, nor plan-cli's hybrid layers. */
	if (!hf_nh_symbols(r, field, s, MODEL_HYBRID_MAX, pat))
		return false;
counted:
	/* num_hidden_layers is deprecated in the dataclass config (the list's
	 * length wins, with a warning); a file that disagrees is refused. */
	if (!hf_int(r, NAMES("num_hidden_layers"), (long)strlen(pat), &layers))
		return false;
	if ((size_t)layers != strlen(pat))
		return hf_error(r, "num_hidden_layers", "field 'num_hidden_layers' says %ld layers, field '%s' "
				"has %zu", layers, field, strlen(pat));
	return true;
}

/*
 * Biases: use_bias is the Mamba mixer's in_proj and out_proj,
 * attention_bias q, k, v and o, mlp_bias the MLPs' up and down (and the
 * shared experts'); the routed experts (NemotronHExperts) and the router
 * never have one. plan-cli's bias is every linear layer's: the three
 * alike, and no MoE layer with them, or refused. The conv1d's bias
 * (use_conv_bias, default true) plan-cli always counts, as Megatron's
 * MambaMixer has it: false is refused.
 */
static bool
hf_nh_bias(const struct hf_reader *r, const char *pat, bool *bias)
{
	static const char *const fields[] = { "use_bias", "attention_bias", "mlp_bias" };
	bool b[3], conv;

	for (int i = 0; i < 3; i++)
		if (!hf_bool(r, fields[i], false, &b[i]))
			return false;
	for (int i = 1; i < 3; i++)
		if (b[i] != b[0])
			return hf_fail(r, "biases on some of the Mamba projections (use_bias), attention "
				       "(attention_bias) and MLPs (mlp_bias) but not all are not modelled (model key "
				       "bias): field", fields[b[i] ? i : 0]);
	if (b[0] && strchr(pat, 'E'))
		return hf_fail(r, "biases with experts (which have none) are not modelled: field", "use_bias");
	*bias = b[0];
	if (json_object_get(r->root, "mamba_conv_bias") && !hf_bool(r, "mamba_conv_bias", true, &conv))
		return false;
	if (!json_object_get(r->root, "mamba_conv_bias") && !hf_bool(r, "use_conv_bias", true, &conv))
		return false;
	if (!conv && strchr(pat, 'M'))
		return hf_fail(r, "a Mamba conv1d without its bias is not modelled: field",
			       json_object_get(r->root, "mamba_conv_bias") ? "mamba_conv_bias" : "use_conv_bias");
	return true;
}

/*
 * NemotronHMamba2Mixer: d_inner = mamba_num_heads x mamba_head_dim (the
 * config's expand is not read), n_groups groups of ssm_state_size, a
 * conv1d of conv_kernel taps, SSD chunks of chunk_size; the remote
 * code's names (mamba_n_groups, mamba_d_conv, mamba_chunk_size) win
 * where given, as __post_init__ takes them.
 */
static bool
hf_nh_mamba(const struct hf_reader *r, FILE *out)
{
	long state, head_dim, heads, groups, conv, chunk;

	if (!hf_int(r, NAMES("ssm_state_size"), -1, &state) || !hf_int(r, NAMES("mamba_head_dim"), -1, &head_dim) ||
	    !hf_int(r, NAMES("mamba_num_heads"), -1, &heads) ||
	    !hf_int(r, NAMES("mamba_n_groups", "n_groups"), 8, &groups) ||
	    !hf_int(r, NAMES("mamba_d_conv", "conv_kernel"), 4, &conv) ||
	    !hf_int(r, NAMES("mamba_chunk_size", "chunk_size"), 128, &chunk))
		return false;
	fprintf(out, "mamba:\n  state_dim: %ld\n  head_dim: %ld\n  heads: %ld\n  groups: %ld\n  conv_kernel: %ld\n"
		"  chunk_size: %ld\n", state, head_dim, heads, groups, conv, chunk);
	return true;
}

/*
 * NemotronHMoE (DeepseekV3MoE's routing): n_routed_experts (alias
 * num_local_experts) non-gated experts of moe_intermediate_size, top
 * num_experts_per_tok, and one shared MLP of
 * moe_shared_expert_intermediate_size (default 7688) that every token
 * runs (n_shared_experts is not read). plan-cli's shared experts are
 * expert_ffn_hidden wide each, so the shared MLP is written as
 * width / moe_intermediate_size of them, the same matrices and GEMMs
 * when it divides, and refused when not. moe_latent_size (null: none)
 * is the model's moe.latent_size (Megatron-Core's moe_latent_size, which
 * nemotron_h_bridge.py at 067f987 copies from it); 0 is refused, as
 * Megatron-LM's arguments.py refuses it ("has to be greater than zero").
 */
static bool
hf_nh_moe(const struct hf_reader *r, FILE *out)
{
	long experts, top_k, ffn, shared, lat = 0;
	json_t *latent = json_object_get(r->root, "moe_latent_size");

	if (!hf_int(r, NAMES("n_routed_experts", "num_local_experts"), -1, &experts) ||
	    !hf_int(r, NAMES("num_experts_per_tok"), -1, &top_k) ||
	    !hf_int(r, NAMES("moe_intermediate_size"), -1, &ffn) ||
	    !hf_int(r, NAMES("moe_shared_expert_intermediate_size"), 7688, &shared))
		return false;
	if (latent && !json_is_null(latent)) {
		if (!hf_int(r, NAMES("moe_latent_size"), 0, &lat))
			return false;
		if (lat == 0)
			return hf_fail(r, "the MoE latent projection dimension has to be greater than zero: field",
				       "moe_latent_size");
	}
	if (ffn == 0 || shared % ffn != 0)
		return hf_error(r, "moe_shared_expert_intermediate_size",
				"a shared expert %ld wide is not a whole number of experts of moe_intermediate_size %ld, "
				"which the moe block's shared_experts counts: field "
				"'moe_shared_expert_intermediate_size'", shared, ffn);
	fprintf(out, "moe:\n  experts: %ld\n  top_k: %ld\n  expert_ffn_hidden: %ld\n", experts, top_k, ffn);
	if (shared > 0)
		fprintf(out, "  shared_experts: %ld  # moe_shared_expert_intermediate_size %ld\n", shared / ffn,
			shared);
	if (lat > 0)
		fprintf(out, "  latent_size: %ld  # moe_latent_size\n", lat);
	return true;
}

/* The sizes: heads of head_dim (remote code: attention_head_dim; default 128). */
static bool
hf_nh_shape(const struct hf_reader *r, const char *pat, FILE *out)
{
	json_t *kvj = json_object_get(r->root, "num_key_value_heads");
	long hidden, heads, kv, head_dim, vocab, seq, ffn = 0;

	if (!hf_int(r, NAMES("hidden_size"), -1, &hidden) || !hf_int(r, NAMES("num_attention_heads"), -1, &heads) ||
	    /* absent: the class's 8; null: every head (__post_init__) */
	    !hf_int(r, NAMES("num_key_value_heads"), kvj && json_is_null(kvj) ? heads : 8, &kv) ||
	    !hf_int(r, NAMES("head_dim", "attention_head_dim"), 128, &head_dim) ||
	    !hf_int(r, NAMES("vocab_size"), -1, &vocab) || !hf_int(r, NAMES("max_position_embeddings"), 4096, &seq))
		return false;
	/* The '-' layers' width; with none, the experts'. */
	if (!hf_int(r, NAMES("intermediate_size"), strchr(pat, '-') ? -1 : 0, &ffn) ||
	    (ffn == 0 && !hf_int(r, NAMES("moe_intermediate_size"), -1, &ffn)))
		return false;
	fprintf(out, "layers: %zu\nhybrid_pattern: \"%s\"\nhidden: %ld\nheads: %ld\nkv_heads: %ld\nvocab: %ld\n"
		"seq_len: %ld  # max_position_embeddings %ld\n", strlen(pat), pat, hidden, heads, kv, vocab,
		seq < HF_TRAIN_SEQ_LEN ? seq : HF_TRAIN_SEQ_LEN, seq);
	if (head_dim * heads != hidden)
		fprintf(out, "head_dim: %ld\n", head_dim);
	fprintf(out, "ffn_hidden: %ld\n", ffn);
	return true;
}

/*
 * Multi-token prediction (Nemotron 3), as Megatron-Bridge's
 * NemotronHBridge._hf_mtp_config and provider_bridge read it
 * (nemotron_h_bridge.py at 067f987): num_nextn_predict_layers depths of
 * mtp_hybrid_override_pattern's layers (or the mtp_layers_block_type
 * list, in hf_nh_kind's names), their parameters shared unless
 * mtp_use_repeated_layer is false (default true). The checkpoint's depths
 * are written; a recipe may run more of a shared block (Nemotron-3
 * Super's: mtp_num_layers 2).
 */
static bool
hf_nh_mtp(const struct hf_reader *r, long depths, FILE *out)
{
	char pat[MODEL_HYBRID_MAX + 1];
	json_t *l = json_object_get(r->root, "mtp_layers_block_type");
	json_t *s = json_object_get(r->root, "mtp_hybrid_override_pattern");
	const char *field = "mtp_hybrid_override_pattern";
	bool repeated;

	if (l && json_is_array(l)) {
		field = "mtp_layers_block_type";
		if (!hf_nh_list(r, field, l, pat))
			return false;
	} else {
		if (!s || json_is_null(s))
			return hf_fail(r, "num_nextn_predict_layers above 0 needs its layers: missing field", field);
		if (!hf_nh_symbols(r, field, s, MODEL_MTP_MAX, pat))
			return false;
	}
	if (strlen(pat) > MODEL_MTP_MAX)
		return hf_error(r, field, "at most %d layers a depth expected in field '%s'", MODEL_MTP_MAX, field);
	if (!hf_bool(r, "mtp_use_repeated_layer", true, &repeated))
		return false;
	fprintf(out, "mtp_layers: %ld  # num_nextn_predict_layers; a recipe may run more depths\n"
		"mtp_pattern: \"%s\"  # %s\nmtp_repeated: %s  # mtp_use_repeated_layer (default true)\n",
		depths, pat, field, repeated ? "true" : "false");
	return true;
}

/*
 * Dropout, for every family: plan-cli's dropout is one switch, false
 * when every dropout probability the config carries is 0, true when any
 * is above 0. Read: attention_dropout and hidden_dropout, which
 * Megatron-Bridge's CONFIG_MAPPING carries from any family's config to
 * the provider's fields of the same names (conversion/model_bridge.py at
 * 067f987), both 0.0 where absent (the transformers classes' default
 * where they have the field: configuration_llama.py, _mistral,
 * _mixtral, _qwen2, _qwen3, _qwen3_moe, _gemma, _cohere, _deepseek_v2,
 * _deepseek_v3, _qwen3_next attention_dropout 0.0; _gpt_neox,
 * _falcon, _nemotron_h both 0.0; Megatron-Bridge's Llama and
 * Qwen3-Next bridges set hidden_dropout 0.0, llama_bridge.py l. 55,
 * qwen/qwen3_next_bridge.py l. 63), and each family's own fields with
 * its class's defaults (transformers@008e574, hf_drop_fields). Not
 * read: OPT's layerdrop (whole layers skipped, no mask), GPT-2's
 * summary_first_dropout and GPT-NeoX's classifier_dropout (heads other
 * than the LM head's).
 */
struct hf_drop {
	const char *field;
	double def; /* the config class's default where the field is absent */
};

static const struct hf_drop *
hf_drop_fields(enum hf_family f)
{
	/* configuration_gpt2.py: resid_pdrop, embd_pdrop, attn_pdrop 0.1 */
	static const struct hf_drop gpt2[] = {
		{ "resid_pdrop", 0.1 }, { "embd_pdrop", 0.1 }, { "attn_pdrop", 0.1 }, { NULL, 0.0 } };
	/* configuration_opt.py: dropout 0.1, activation_dropout 0.0 */
	static const struct hf_drop opt[] = { { "dropout", 0.1 }, { "activation_dropout", 0.0 }, { NULL, 0.0 } };
	/* configuration_phi.py: resid_pdrop, embd_pdrop 0.0 */
	static const struct hf_drop phi[] = { { "resid_pdrop", 0.0 }, { "embd_pdrop", 0.0 }, { NULL, 0.0 } };
	static const struct hf_drop none[] = { { NULL, 0.0 } };

	return f == HF_GPT2 ? gpt2 : f == HF_OPT ? opt : f == HF_PHI ? phi : none;
}

/* One dropout field's probability; @d's default, and *given false, where
 * it is absent or null. */
static bool
hf_drop_value(const struct hf_reader *r, const struct hf_drop *d, double *p, bool *given)
{
	json_t *v = json_object_get(r->root, d->field);

	*p = d->def;
	*given = v && !json_is_null(v);
	if (!*given)
		return true;
	if (!json_is_number(v) || !(json_number_value(v) >= 0.0 && json_number_value(v) < 1.0))
		return hf_fail(r, "expected a probability from 0 to below 1 in field", d->field);
	*p = json_number_value(v);
	return true;
}

/* Append ", @fmt" (no comma first) to @buf, which holds *@n characters. */
static void __attribute__((format(printf, 4, 5)))
hf_said(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
	va_list ap;

	if (*n >= size)
		return;
	if (*n > 0)
		*n += (size_t)snprintf(buf + *n, size - *n, ", ");
	if (*n >= size)
		return;
	va_start(ap, fmt);
	*n += (size_t)vsnprintf(buf + *n, size - *n, fmt, ap);
	va_end(ap);
}

/* The dropout line; its comment names the fields above 0 (their values,
 * "(default)" where the class's), or when none is, every field read. */
static bool
hf_dropout(const struct hf_reader *r, enum hf_family f, FILE *out)
{
	static const struct hf_drop common[] = { { "attention_dropout", 0.0 }, { "hidden_dropout", 0.0 }, { NULL, 0.0 } };
	const struct hf_drop *lists[2] = { common, hf_drop_fields(f) };
	char on[256] = "", off[256] = "";
	size_t n_on = 0, n_off = 0;

	for (int l = 0; l < 2; l++)
		for (const struct hf_drop *d = lists[l]; d->field; d++) {
			double p;
			bool given;

			if (!hf_drop_value(r, d, &p, &given))
				return false;
			if (p > 0.0)
				hf_said(on, sizeof(on), &n_on, "%s %g%s", d->field, p, given ? "" : " (default)");
			else
				hf_said(off, sizeof(off), &n_off, "%s", d->field);
		}
	if (n_on > 0)
		fprintf(out, "dropout: true  # %s\n", on);
	else
		fprintf(out, "dropout: false  # %s: 0\n", off);
	return true;
}

/*
 * The whole profile. NemotronHAttention is JambaAttention: no rotary nor
 * any other position embedding (the config has no rope field), so
 * position_embedding none whatever Megatron trained the checkpoint with
 * (no parameters either way). NemotronHMLP and the experts are up_proj,
 * mlp_hidden_act (relu2: squared ReLU), down_proj: never gated.
 * Multi-token prediction layers (num_nextn_predict_layers, Nemotron 3):
 * hf_nh_mtp.
 */
static bool
hf_nemotron_h(const struct hf_reader *r, FILE *out)
{
	char pat[MODEL_HYBRID_MAX + 1];
	bool tied = false, bias = false;
	long mtp;

	if (!hf_nh_pattern(r, pat) || !hf_int(r, NAMES("num_nextn_predict_layers"), 0, &mtp))
		return false;
	if (!hf_nh_shape(r, pat, out) || !hf_bool(r, "tie_word_embeddings", false, &tied) ||
	    !hf_nh_bias(r, pat, &bias) || (mtp > 0 && !hf_nh_mtp(r, mtp, out)))
		return false;
	fprintf(out, "tied_embeddings: %s\nbias: %s\ngated_mlp: false  # up_proj, mlp_hidden_act, down_proj\n"
		"norm: rmsnorm\nposition_embedding: none  # NemotronHAttention (JambaAttention) has none\n",
		tied ? "true" : "false", bias ? "true" : "false");
	if (strchr(pat, 'M') && !hf_nh_mamba(r, out))
		return false;
	return !strchr(pat, 'E') || hf_nh_moe(r, out);
}

/*
 * Qwen3-Next (model_type qwen3_next): transformers' models/qwen3_next,
 * configuration_qwen3_next.py and modeling_qwen3_next.py (huggingface/
 * transformers main at 008e5743), as Megatron-Bridge maps it
 * (models/qwen/qwen3_next_bridge.py at 067f987). Each
 * Qwen3NextDecoderLayer is a mixer (linear_attn, Qwen3NextGatedDeltaNet,
 * or self_attn) on input_layernorm and an MLP on
 * post_attention_layernorm: two pre-norm blocks, so two hybrid_pattern
 * symbols a layer, G or * and then E or -. The mixers: the layer_types
 * list where the config has one (transformers 5.5 on writes it), else
 * full_attention_interval (default 4): layer i (from 0) is full
 * attention when (i + 1) % interval == 0, as __post_init__ and
 * Megatron-Bridge's full_attention_interval_from_hf
 * (conversion/transformers_compat.py) make it.
 */
static bool
hf_q3n_mixers(const struct hf_reader *r, long layers, char *pat)
{
	json_t *types = json_object_get(r->root, "layer_types");
	long every;

	if (types && !json_is_null(types)) {
		if (!json_is_array(types) || json_array_size(types) != (size_t)layers)
			return hf_fail(r, "a list of one type a layer (num_hidden_layers) expected in field",
				       "layer_types");
		for (long i = 0; i < layers; i++) {
			const char *k = json_string_value(json_array_get(types, (size_t)i));

			if (k && strcmp(k, "linear_attention") == 0)
				pat[2 * i] = 'G';
			else if (k && strcmp(k, "full_attention") == 0)
				pat[2 * i] = '*';
			else
				return hf_error(r, "layer_types", "layer %ld's type '%.40s' is not modelled "
						"(linear_attention and full_attention are) in field 'layer_types'", i + 1,
						k ? k : "not a string");
		}
		return true;
	}
	if (!hf_int(r, NAMES("full_attention_interval"), 4, &every))
		return false;
	if (every == 0)
		return hf_fail(r, "an interval of at least 1 expected in field", "full_attention_interval");
	for (long i = 0; i < layers; i++)
		pat[2 * i] = (i + 1) % every == 0 ? '*' : 'G';
	return true;
}

/*
 * The MLPs: Qwen3NextDecoderLayer's is Qwen3NextSparseMoeBlock when the
 * layer is not in mlp_only_layers and num_experts > 0 and
 * (i + 1) % decoder_sparse_step == 0, else Qwen3NextMLP of
 * intermediate_size. A pattern says each layer's, so mlp_only_layers
 * (refused for qwen3_moe, whose moe block has only every) is exact here.
 */
static bool
hf_q3n_mlps(const struct hf_reader *r, long layers, char *pat)
{
	json_t *only = json_object_get(r->root, "mlp_only_layers");
	long experts, step;

	if (!hf_int(r, NAMES("num_experts"), 512, &experts) || !hf_int(r, NAMES("decoder_sparse_step"), 1, &step))
		return false;
	if (experts > 0 && step == 0)
		return hf_fail(r, "a step of at least 1 expected in field", "decoder_sparse_step");
	for (long i = 0; i < layers; i++)
		pat[2 * i + 1] = experts > 0 && (i + 1) % step == 0 ? 'E' : '-';
	if (!only || json_is_null(only))
		return true;
	if (!json_is_array(only))
		return hf_fail(r, "a list of layer numbers (from 0) expected in field", "mlp_only_layers");
	for (size_t j = 0; j < json_array_size(only); j++) {
		json_t *v = json_array_get(only, j);

		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= layers)
			return hf_error(r, "mlp_only_layers", "entry %zu of field 'mlp_only_layers' is not a layer "
					"number from 0 to %ld", j + 1, layers - 1);
		pat[2 * json_integer_value(v) + 1] = '-';
	}
	return true;
}

/*
 * Qwen3NextSparseMoeBlock: num_experts experts of moe_intermediate_size,
 * top num_experts_per_tok, and one gated shared_expert (a Qwen3NextMLP)
 * of shared_expert_intermediate_size every token runs; written as that
 * width over moe_intermediate_size shared experts (the same matrices and
 * GEMMs), refused where it does not divide, as for Nemotron-H. The
 * shared expert's gate (shared_expert_gate, hidden_size x 1; Megatron's
 * moe_shared_expert_gate) is not counted.
 */
static bool
hf_q3n_moe(const struct hf_reader *r, FILE *out)
{
	long experts, top_k, ffn, shared;

	if (!hf_int(r, NAMES("num_experts"), 512, &experts) || !hf_int(r, NAMES("num_experts_per_tok"), 10, &top_k) ||
	    !hf_int(r, NAMES("moe_intermediate_size"), 512, &ffn) ||
	    !hf_int(r, NAMES("shared_expert_intermediate_size"), 512, &shared))
		return false;
	if (ffn == 0 || shared % ffn != 0)
		return hf_error(r, "shared_expert_intermediate_size",
				"a shared expert %ld wide is not a whole number of experts of moe_intermediate_size %ld, "
				"which the moe block's shared_experts counts: field 'shared_expert_intermediate_size'",
				shared, ffn);
	fprintf(out, "moe:\n  experts: %ld\n  top_k: %ld\n  expert_ffn_hidden: %ld\n", experts, top_k, ffn);
	if (shared > 0)
		fprintf(out, "  shared_experts: %ld  # shared_expert_intermediate_size %ld\n", shared / ffn, shared);
	return true;
}

/* Qwen3NextGatedDeltaNet's heads and conv1d: the gdn block. */
static bool
hf_q3n_gdn(const struct hf_reader *r, FILE *out)
{
	long kd, vd, kh, vh, conv;

	if (!hf_int(r, NAMES("linear_key_head_dim"), 128, &kd) ||
	    !hf_int(r, NAMES("linear_value_head_dim"), 128, &vd) ||
	    !hf_int(r, NAMES("linear_num_key_heads"), 16, &kh) ||
	    !hf_int(r, NAMES("linear_num_value_heads"), 32, &vh) ||
	    !hf_int(r, NAMES("linear_conv_kernel_dim"), 4, &conv))
		return false;
	fprintf(out, "gdn:\n  key_head_dim: %ld\n  value_head_dim: %ld\n  key_heads: %ld\n  value_heads: %ld\n"
		"  conv_kernel: %ld\n", kd, vd, kh, vh, conv);
	return true;
}

/*
 * Layers, width, heads, lengths; absent fields take Qwen3NextConfig's
 * defaults (those of Qwen3-Next-80B-A3B) except the four every importer
 * requires. Qwen3NextAttention: num_attention_heads query heads of
 * head_dim with an output gate (q_proj twice as wide: Megatron's
 * attention_output_gate), q_norm and k_norm (qk_norm), biases on q, k,
 * v and o with attention_bias, which the experts and the Gated DeltaNet
 * projections never have: refused.
 */
static bool
hf_q3n_shape(const struct hf_reader *r, const char *pat, FILE *out)
{
	long hidden, heads, kv, head_dim, vocab, seq, ffn;
	bool tied, bias;

	if (!hf_int(r, NAMES("hidden_size"), -1, &hidden) || !hf_int(r, NAMES("num_attention_heads"), -1, &heads) ||
	    !hf_int(r, NAMES("num_key_value_heads"), 2, &kv) || !hf_int(r, NAMES("head_dim"), 256, &head_dim) ||
	    !hf_int(r, NAMES("vocab_size"), -1, &vocab) || !hf_int(r, NAMES("max_position_embeddings"), 32768, &seq) ||
	    !hf_int(r, NAMES("intermediate_size"), 5632, &ffn) || !hf_bool(r, "tie_word_embeddings", false, &tied) ||
	    !hf_bool(r, "attention_bias", false, &bias))
		return false;
	if (bias)
		return hf_fail(r, "biases on q, k, v and o but not on the experts and Gated DeltaNet projections are "
			       "not modelled (model key bias): field", "attention_bias");
	/* hybrid_group 2: a decoder layer's mixer and MLP stay on one stage. */
	fprintf(out, "layers: %zu\nhybrid_pattern: \"%s\"\nhybrid_group: 2\nhidden: %ld\nheads: %ld\nkv_heads: %ld\n"
		"vocab: %ld\nseq_len: %ld  # max_position_embeddings %ld\n", strlen(pat), pat, hidden, heads, kv, vocab,
		seq < HF_TRAIN_SEQ_LEN ? seq : HF_TRAIN_SEQ_LEN, seq);
	if (head_dim * heads != hidden)
		fprintf(out, "head_dim: %ld\n", head_dim);
	fprintf(out, "qk_norm: true\nattention_output_gate: true\nffn_hidden: %ld\ngated_mlp: true\n"
		"tied_embeddings: %s\nbias: false\nnorm: rmsnorm\n"
		"position_embedding: rotary  # partial_rotary_factor: rotary has no weights nor GEMMs\n",
		ffn, tied ? "true" : "false");
	return true;
}

/*
 * The whole profile. Multi-token prediction layers
 * (num_nextn_predict_layers, or mtp_num_hidden_layers) are dropped with
 * a comment: transformers has no MTP module (Qwen3NextForCausalLM; the
 * checkpoints' mtp.* weights go unused). Megatron-Bridge's
 * qwen3_next_bridge.py (067f987) maps one (mtp.layers.0), which this
 * import does not write yet, unlike DeepSeek-V3's and GLM's (hf_ds_mtp).
 */
static bool
hf_qwen3_next(const struct hf_reader *r, FILE *out)
{
	char pat[MODEL_HYBRID_MAX + 1];
	long layers, mtp;

	if (!hf_int(r, NAMES("num_hidden_layers"), -1, &layers) ||
	    !hf_int(r, NAMES("num_nextn_predict_layers", "mtp_num_hidden_layers"), 0, &mtp))
		return false;
	if (layers == 0 || 2 * layers > MODEL_HYBRID_MAX)
		return hf_error(r, "num_hidden_layers", "1 to %d layers expected in field 'num_hidden_layers' (two "
				"pattern symbols a layer)", MODEL_HYBRID_MAX / 2);
	if (!hf_q3n_mixers(r, layers, pat) || !hf_q3n_mlps(r, layers, pat))
		return false;
	pat[2 * layers] = '\0';
	if (!hf_q3n_shape(r, pat, out))
		return false;
	if (mtp > 0)
		fprintf(out, "# %ld multi-token prediction layer(s) not written: transformers' Qwen3-Next has no "
			"MTP module\n", mtp);
	if (strchr(pat, 'G') && !hf_q3n_gdn(r, out))
		return false;
	return !strchr(pat, 'E') || hf_q3n_moe(r, out);
}

/*
 * gpt-oss (model_type gpt_oss, OpenAI's gpt-oss-20b and gpt-oss-120b):
 * transformers' models/gpt_oss, configuration_gpt_oss.py (828a27fd) and
 * modular_gpt_oss.py (ede92a87), as Megatron-Bridge's GPTOSSBridge maps it
 * (models/gpt_oss/gpt_oss_bridge.py at 067f987). GptOssDecoderLayer:
 * input_layernorm, GptOssAttention (q, k, v and o with biases, and sinks:
 * one learned logit a query head, Megatron's softmax_type learnable),
 * post_attention_layernorm, and GptOssMLP in every layer: the
 * GptOssTopKRouter (h x num_local_experts and a bias) and
 * num_local_experts GptOssExperts of intermediate_size (gate_up_proj
 * h x 2 intermediate_size and down_proj back, each with its bias),
 * top num_experts_per_tok. plan-cli's bias is all of those (the router's
 * too: model.c router_params). Absent fields take GptOssConfig's defaults
 * (gpt-oss-120b's) but the four every importer requires; the pre-release
 * names num_experts and experts_per_token are read where the released
 * ones are absent.
 */
static bool
hf_gpt_oss_shape(const struct hf_reader *r, FILE *out)
{
	json_t *kvj = json_object_get(r->root, "num_key_value_heads"), *hdj = json_object_get(r->root, "head_dim");
	long layers, hidden, heads, kv, head_dim, vocab, seq, ffn;
	bool tied, bias;

	if (!hf_int(r, NAMES("num_hidden_layers"), -1, &layers) || !hf_int(r, NAMES("hidden_size"), -1, &hidden) ||
	    !hf_int(r, NAMES("num_attention_heads"), -1, &heads) ||
	    /* absent: the class's 8 and 64; null: every head, and hidden / heads */
	    !hf_int(r, NAMES("num_key_value_heads"), kvj && json_is_null(kvj) ? heads : 8, &kv) ||
	    !hf_int(r, NAMES("head_dim"), hdj && json_is_null(hdj) ? (heads > 0 ? hidden / heads : 0) : 64,
		    &head_dim) ||
	    !hf_int(r, NAMES("vocab_size"), -1, &vocab) ||
	    !hf_int(r, NAMES("max_position_embeddings"), 131072, &seq) ||
	    !hf_int(r, NAMES("intermediate_size"), 2880, &ffn) || !hf_bool(r, "tie_word_embeddings", false, &tied) ||
	    !hf_bool(r, "attention_bias", true, &bias))
		return false;
	/* GptOssConfig.__init__ (828a27fd) sets attention_bias true whatever
	 * the file says, and the experts and router always have biases: a
	 * file saying false is refused rather than read two ways. */
	if (!bias)
		return hf_fail(r, "attention without biases beside the experts' and router's, which always have "
			       "them, is not modelled (model key bias): field", "attention_bias");
	fprintf(out, "layers: %ld\nhidden: %ld\nheads: %ld\nkv_heads: %ld\nvocab: %ld\n"
		"seq_len: %ld  # max_position_embeddings %ld\n", layers, hidden, heads, kv, vocab,
		seq < HF_TRAIN_SEQ_LEN ? seq : HF_TRAIN_SEQ_LEN, seq);
	if (head_dim > 0 && head_dim * heads != hidden)
		fprintf(out, "head_dim: %ld\n", head_dim);
	fprintf(out, "attention_sinks: true  # GptOssAttention.sinks: one logit a head\n"
		"ffn_hidden: %ld  # intermediate_size: every layer's MLP is its experts\n"
		"gated_mlp: true  # gate_up_proj\ntied_embeddings: %s\n"
		"bias: true  # q, k, v, o, the router and the experts\nnorm: rmsnorm\n"
		"position_embedding: rotary  # rope_scaling (YaRN) has no weights\n", ffn, tied ? "true" : "false");
	return true;
}

/* The experts: in every layer, intermediate_size wide. */
static bool
hf_gpt_oss_moe(const struct hf_reader *r, FILE *out)
{
	long experts, top_k, ffn;

	if (!hf_int(r, NAMES("num_local_experts", "num_experts"), 128, &experts) ||
	    !hf_int(r, NAMES("num_experts_per_tok", "experts_per_token"), 4, &top_k) ||
	    !hf_int(r, NAMES("intermediate_size"), 2880, &ffn))
		return false;
	fprintf(out, "moe:\n  experts: %ld\n  top_k: %ld\n  every: 1\n  expert_ffn_hidden: %ld\n", experts, top_k,
		ffn);
	return true;
}

/*
 * The whole profile. Not read, as no weight depends on them: swiglu_limit
 * (the experts' clamp of their gate and up values, 7.0), router_aux_loss_coef
 * (a loss term; Megatron-Bridge's bridge sets no load-balancing loss),
 * hidden_act (GptOssExperts' activation is its own) and
 * quantization_config (the released experts' MXFP4 storage; training runs
 * them in the plan's precision).
 */
static bool
hf_gpt_oss(const struct hf_reader *r, const struct hf_arch *a, FILE *out)
{
	if (!hf_gpt_oss_shape(r, out) || !hf_window(r, a, out) || !hf_gpt_oss_moe(r, out))
		return false;
	fputs("# swiglu_limit, router_aux_loss_coef and quantization_config: no parameters, not modelled\n", out);
	return true;
}

/*
 * Multi-token prediction depths (DeepSeek-V3, arXiv:2412.19437 Sec. 2.2;
 * GLM-4.5): num_nextn_predict_layers, which Megatron-Bridge's
 * CONFIG_MAPPING carries to the provider's mtp_num_layers for every
 * bridge (conversion/model_bridge.py at 067f987, l. 497) and
 * DeepSeekV3Bridge and GLM45Bridge set again (deepseek_v3_bridge.py
 * l. 97, glm45_bridge.py l. 86), each depth one decoder layer of the
 * last layer's kind (common.py and glm45_bridge.py map the checkpoint's
 * layer num_hidden_layers + d to mtp.layers.d): plan-cli's mtp_layers.
 * transformers has no MTP module (those layers go unloaded), so a
 * config's depths are a training choice as much as a shape: @recipes
 * names the Megatron-Bridge recipes that set mtp_num_layers 1
 * themselves (recipes/deepseek/h100/deepseek_v3.py l. 137 and 305,
 * recipes/glm/h100/glm45.py l. 66 and 199, at 067f987).
 */
static bool
hf_ds_mtp(const struct hf_reader *r, const char *recipes, FILE *out)
{
	long mtp;

	if (!hf_int(r, NAMES("num_nextn_predict_layers"), 0, &mtp))
		return false;
	if (mtp > 64)
		return hf_fail(r, "at most 64 multi-token prediction depths (model key mtp_layers) are modelled: field",
			       "num_nextn_predict_layers");
	if (mtp > 0)
		fprintf(out, "mtp_layers: %ld  # num_nextn_predict_layers, Megatron-Bridge's mtp_num_layers; a recipe "
			"may set its own (%s recipes: 1)\n", mtp, recipes);
	return true;
}

/*
 * GLM-4.5, GLM-4.5-Air, GLM-4.6 and GLM-4.7 (model_type glm4_moe):
 * transformers' configuration_glm4_moe.py (c7ec229a) and
 * modular_glm4_moe.py (0e97420c), as Megatron-Bridge's GLM45Bridge maps
 * it (models/glm/glm45_bridge.py at 067f987). Glm4MoeAttention:
 * num_attention_heads query heads of head_dim (default hidden_size /
 * num_attention_heads; GLM-4.5's 128 makes q 96 x 128 wide, not
 * hidden_size), num_key_value_heads (default 8) key/value heads, biases
 * on q, k and v with attention_bias and never on o_proj (Megatron's
 * add_qkv_bias: plan-cli's qkv_bias), and with use_qk_norm an RMSNorm of
 * head_dim on each query and key head (qk_norm); rotary on
 * partial_rotary_factor of each head (no weights). The decoder layers
 * are DeepseekV3DecoderLayer: SwiGLU of intermediate_size in the first
 * first_k_dense_replace layers, Glm4MoeMoE (DeepseekV3MoE) in the rest.
 * Absent fields take Glm4MoeConfig's defaults but the four every
 * importer requires.
 */
static bool
hf_glm4_moe_shape(const struct hf_reader *r, FILE *out)
{
	long layers, hidden, heads, kv, head_dim, vocab, seq, ffn;
	bool tied, qkv_bias, qk;

	if (!hf_int(r, NAMES("num_hidden_layers"), -1, &layers) || !hf_int(r, NAMES("hidden_size"), -1, &hidden) ||
	    !hf_int(r, NAMES("num_attention_heads"), -1, &heads) || !hf_int(r, NAMES("num_key_value_heads"), 8, &kv) ||
	    /* absent or null: hidden_size / num_attention_heads (Glm4MoeAttention's getattr) */
	    !hf_int(r, NAMES("head_dim"), heads > 0 ? hidden / heads : 0, &head_dim) ||
	    !hf_int(r, NAMES("vocab_size"), -1, &vocab) ||
	    !hf_int(r, NAMES("max_position_embeddings"), 131072, &seq) ||
	    !hf_int(r, NAMES("intermediate_size"), 10944, &ffn) || !hf_bool(r, "tie_word_embeddings", false, &tied) ||
	    !hf_bool(r, "attention_bias", false, &qkv_bias) || !hf_bool(r, "use_qk_norm", false, &qk))
		return false;
	fprintf(out, "layers: %ld\nhidden: %ld\nheads: %ld\nkv_heads: %ld\nvocab: %ld\n"
		"seq_len: %ld  # max_position_embeddings %ld\n", layers, hidden, heads, kv, vocab,
		seq < HF_TRAIN_SEQ_LEN ? seq : HF_TRAIN_SEQ_LEN, seq);
	if (head_dim > 0 && head_dim * heads != hidden)
		fprintf(out, "head_dim: %ld\n", head_dim);
	if (qkv_bias)
		fputs("qkv_bias: true  # attention_bias: q, k and v (o_proj has none)\n", out);
	if (qk)
		fputs("qk_norm: true  # use_qk_norm: q_norm and k_norm of head_dim\n", out);
	fprintf(out, "ffn_hidden: %ld  # intermediate_size: the first_k_dense_replace dense layers\n"
		"gated_mlp: true\ntied_embeddings: %s\nbias: false\nnorm: rmsnorm\n"
		"position_embedding: rotary  # partial_rotary_factor: rotary has no weights nor GEMMs\n",
		ffn, tied ? "true" : "false");
	return true;
}

/*
 * Glm4MoeMoE: n_routed_experts SwiGLU experts of moe_intermediate_size,
 * top num_experts_per_tok, and shared_experts one MLP of
 * moe_intermediate_size x n_shared_experts (plan-cli's shared_experts
 * n_shared_experts; GLM45Bridge sets moe_shared_expert_intermediate_size
 * moe_intermediate_size, GLM-4.5's n_shared_experts being 1); the first
 * first_k_dense_replace layers dense (the bridge's moe_layer_freq). The
 * router (Glm4MoeTopkRouter: DeepSeek-V3's sigmoid scores with
 * e_score_correction_bias, n_group and topk_group, routed_scaling_factor)
 * is counted as an h x E linear layer; its bias buffer of
 * n_routed_experts values a layer is not, as for DeepSeek-V3.
 */
static bool
hf_glm4_moe_experts(const struct hf_reader *r, FILE *out)
{
	long experts, top_k, ffn, shared, dense;

	if (!hf_int(r, NAMES("n_routed_experts"), 128, &experts) ||
	    !hf_int(r, NAMES("num_experts_per_tok"), 8, &top_k) ||
	    !hf_int(r, NAMES("moe_intermediate_size"), 1408, &ffn) ||
	    !hf_int(r, NAMES("n_shared_experts"), 1, &shared) ||
	    !hf_int(r, NAMES("first_k_dense_replace"), 1, &dense))
		return false;
	fprintf(out, "moe:\n  experts: %ld\n  top_k: %ld\n  every: 1\n  expert_ffn_hidden: %ld\n", experts, top_k,
		ffn);
	if (shared > 0)
		fprintf(out, "  shared_experts: %ld\n", shared);
	if (dense > 0)
		fprintf(out, "  first_dense_layers: %ld  # first_k_dense_replace\n", dense);
	return true;
}

/* The whole profile: hf_glm4_moe_shape, the experts and the MTP depths. */
static bool
hf_glm4_moe(const struct hf_reader *r, FILE *out)
{
	if (!hf_glm4_moe_shape(r, out) || !hf_glm4_moe_experts(r, out) ||
	    !hf_ds_mtp(r, "GLM-4.5's", out))
		return false;
	fputs("# sigmoid routing, e_score_correction_bias, routed_scaling_factor, n_group and topk_group: no GEMMs, "
	      "not modelled\n", out);
	return true;
}

/*
 * MiniMax-M2 and M2.1 (model_type minimax_m2): transformers'
 * configuration_minimax_m2.py (3e108993) and modular_minimax_m2.py
 * (ea9df1d3), as Megatron-Bridge's MiniMaxM2Bridge maps it
 * (models/minimax_m2/minimax_m2_bridge.py and minimax_m2_provider.py at
 * 067f987). MiniMaxM2Attention: full attention (MiniMaxM2Model builds
 * no sliding window), num_attention_heads query heads of head_dim
 * (default 128) and num_key_value_heads (default 8), no biases, rotary
 * on rotary_dim of each head (no weights), and q_norm and k_norm
 * (FlexOlmoAttention's): RMSNorms over all heads at once,
 * heads x head_dim and kv_heads x head_dim weights (qk_norm_type
 * per_layer; the bridge's FullDimQNorm and FullDimKNorm, which
 * all-reduce each token's sum of squares over the TP group). plan-cli's
 * qk_norm is per head, 2 x head_dim weights a layer: written, the
 * difference ((heads + kv_heads - 2) x head_dim a layer) and the
 * all-reduce not counted. Every layer is MiniMaxM2SparseMoeBlock:
 * num_local_experts SwiGLU experts (MixtralExperts) of
 * intermediate_size, top num_experts_per_tok on sigmoid scores with
 * e_score_correction_bias (not counted, as for DeepSeek-V3), no shared
 * expert. Absent fields take MiniMaxM2Config's defaults (MiniMax-M2's)
 * but the four every importer requires.
 */
static bool
hf_minimax_m2_shape(const struct hf_reader *r, FILE *out)
{
	json_t *type = json_object_get(r->root, "qk_norm_type");
	long layers, hidden, heads, kv, head_dim, vocab, seq, ffn;
	bool tied, qk;

	if (!hf_int(r, NAMES("num_hidden_layers"), -1, &layers) || !hf_int(r, NAMES("hidden_size"), -1, &hidden) ||
	    !hf_int(r, NAMES("num_attention_heads"), -1, &heads) || !hf_int(r, NAMES("num_key_value_heads"), 8, &kv) ||
	    !hf_int(r, NAMES("head_dim"), 128, &head_dim) || !hf_int(r, NAMES("vocab_size"), -1, &vocab) ||
	    !hf_int(r, NAMES("max_position_embeddings"), 196608, &seq) ||
	    !hf_int(r, NAMES("intermediate_size"), 1536, &ffn) || !hf_bool(r, "tie_word_embeddings", false, &tied) ||
	    !hf_bool(r, "use_qk_norm", true, &qk))
		return false;
	/* MiniMaxM2Attention has its norms whatever use_qk_norm says, and
	 * the bridge sets qk_layernorm: false is refused, not read two ways. */
	if (!qk)
		return hf_fail(r, "attention without q_norm and k_norm, which MiniMaxM2Attention always has, is not "
			       "modelled (model key qk_norm): field", "use_qk_norm");
	if (type && !json_is_null(type) &&
	    (!json_is_string(type) || strcmp(json_string_value(type), "per_layer") != 0))
		return hf_fail(r, "a query/key norm other than per_layer (one RMSNorm over all heads, as "
			       "MiniMaxM2Attention has) is not modelled: field", "qk_norm_type");
	fprintf(out, "layers: %ld\nhidden: %ld\nheads: %ld\nkv_heads: %ld\nvocab: %ld\n"
		"seq_len: %ld  # max_position_embeddings %ld\n", layers, hidden, heads, kv, vocab,
		seq < HF_TRAIN_SEQ_LEN ? seq : HF_TRAIN_SEQ_LEN, seq);
	if (head_dim * heads != hidden)
		fprintf(out, "head_dim: %ld\n", head_dim);
	fprintf(out, "qk_norm: true  # qk_norm_type per_layer: %ld weights a layer, counted as 2 x head_dim\n"
		"ffn_hidden: %ld  # intermediate_size: every layer's MLP is its experts\n"
		"gated_mlp: true\ntied_embeddings: %s\nbias: false\nnorm: rmsnorm\n"
		"position_embedding: rotary  # rotary_dim: rotary has no weights nor GEMMs\n",
		(heads + kv) * head_dim, ffn, tied ? "true" : "false");
	return true;
}

/*
 * attn_type_list, one type a layer (MiniMax's remote code: 1 softmax
 * attention, 0 MiniMax-01's lightning attention): transformers'
 * MiniMaxM2 does not read it and builds softmax attention everywhere, so
 * a list with any other type is refused rather than read two ways.
 */
static bool
hf_minimax_m2_types(const struct hf_reader *r, long layers)
{
	json_t *types = json_object_get(r->root, "attn_type_list");

	if (!types || json_is_null(types))
		return true;
	if (!json_is_array(types) || json_array_size(types) != (size_t)layers)
		return hf_fail(r, "a list of one type a layer (num_hidden_layers) expected in field", "attn_type_list");
	for (size_t i = 0; i < json_array_size(types); i++) {
		json_t *t = json_array_get(types, i);

		if (!json_is_integer(t))
			return hf_error(r, "attn_type_list", "layer %zu's attention type is not a whole number in "
					"field 'attn_type_list'", i + 1);
		if (json_integer_value(t) != 1)
			return hf_error(r, "attn_type_list", "layer %zu's attention type %lld is not modelled (1, "
					"softmax attention, is; MiniMaxM2 has no other) in field 'attn_type_list'", i + 1,
					(long long)json_integer_value(t));
	}
	return true;
}

/*
 * The whole profile. Multi-token prediction modules (use_mtp,
 * num_mtp_modules of mtp_transformer_layers layers) are dropped with a
 * comment: neither transformers' MiniMaxM2ForCausalLM nor
 * MiniMaxM2Bridge has them (the bridge's "Known limitations: MTP
 * modules are not mapped"). shared_intermediate_size above 0 (a shared
 * expert) is refused: MiniMaxM2SparseMoeBlock has none.
 */
static bool
hf_minimax_m2(const struct hf_reader *r, FILE *out)
{
	long layers, experts, top_k, ffn, shared, mtp, mtp_layers;
	bool use_mtp;

	if (!hf_int(r, NAMES("num_hidden_layers"), -1, &layers) || !hf_minimax_m2_types(r, layers) ||
	    !hf_minimax_m2_shape(r, out) ||
	    !hf_int(r, NAMES("num_local_experts", "num_experts"), 256, &experts) ||
	    !hf_int(r, NAMES("num_experts_per_tok"), 8, &top_k) || !hf_int(r, NAMES("intermediate_size"), 1536, &ffn) ||
	    !hf_int(r, NAMES("shared_intermediate_size"), 0, &shared) || !hf_bool(r, "use_mtp", false, &use_mtp) ||
	    !hf_int(r, NAMES("num_mtp_modules"), 0, &mtp) || !hf_int(r, NAMES("mtp_transformer_layers"), 1, &mtp_layers))
		return false;
	if (shared > 0)
		return hf_fail(r, "a shared expert, which MiniMaxM2SparseMoeBlock does not have, is not modelled: field",
			       "shared_intermediate_size");
	fprintf(out, "moe:\n  experts: %ld\n  top_k: %ld\n  every: 1\n  expert_ffn_hidden: %ld\n", experts, top_k,
		ffn);
	if (use_mtp && mtp > 0)
		fprintf(out, "# %ld multi-token prediction module(s) of %ld layer(s) not written: transformers' "
			"MiniMaxM2 and Megatron-Bridge's MiniMaxM2Bridge have none\n", mtp, mtp_layers);
	fputs("# sigmoid routing and e_score_correction_bias: no GEMMs, not modelled\n", out);
	return true;
}

/* @s as a single-quoted YAML scalar ('' for a quote; no line breaks). */
static void
hf_quoted(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++)
		if (*s == '\'')
			fputs("''", out);
		else
			fputc(*s == '\n' || *s == '\r' ? ' ' : *s, out);
	fputc('\'', out);
}

/* Every key but dropout, by family. */
static bool
hf_keys(const struct hf_reader *r, const struct hf_arch *a, FILE *out)
{
	if (a->family == HF_NEMOTRON_H)
		return hf_nemotron_h(r, out);
	if (a->family == HF_QWEN3_NEXT)
		return hf_qwen3_next(r, out);
	if (a->family == HF_GPT_OSS)
		return hf_gpt_oss(r, a, out);
	if (a->family == HF_GLM4_MOE)
		return hf_glm4_moe(r, out);
	if (a->family == HF_MINIMAX_M2)
		return hf_minimax_m2(r, out);
	if (!hf_shape(r, a, out) || !hf_family_keys(r, a, out) || !hf_window(r, a, out))
		return false;
	/* GLM-5's perf recipes set mtp_num_layers 1 too (perf_recipes/glm_moe_dsa/{h100,gb200}/glm5.py
	 * l. 79 at 067f987), though GLM5Bridge itself leaves it None. */
	if (a->family == HF_DEEPSEEK &&
	    (!hf_mla(r, out) ||
	     !hf_ds_mtp(r, strcmp(a->model_type, "glm_moe_dsa") == 0 ? "GLM-5's" : "DeepSeek-V3's", out) ||
	     !hf_dsa(r, a, out)))
		return false;
	return !a->moe || hf_moe(r, a, out);
}

/* The profile's text into @out: a comment, the name, the keys. */
static bool
hf_write(const struct hf_reader *r, const char *name, FILE *out)
{
	const struct hf_arch *a = hf_arch_of(r);

	if (!a)
		return false;
	/* The path goes in the quoted description, never in a comment (a line break in it would end one). */
	fprintf(out, "# written by plan-cli from a Hugging Face config.json (model_type %s)\nname: ",
		a->model_type);
	hf_quoted(out, name);
	fputs("\ndescription: ", out);
	hf_quoted(out, r->path);
	fputc('\n', out);
	return hf_keys(r, a, out) && hf_dropout(r, a->family, out);
}

bool
hf_config_named(const char *arg)
{
	size_t n = strlen(arg);

	return strncmp(arg, "hf:", 3) == 0 || (n > 5 && strcmp(arg + n - 5, ".json") == 0);
}

const char *
hf_config_path(const char *arg)
{
	return strncmp(arg, "hf:", 3) == 0 ? arg + 3 : arg;
}

/*
 * A number jansson cannot hold (1e400 past DBL_MAX, an integer past
 * INT64_MAX: its json_error_numeric_overflow), named by its field and at
 * its first byte; jansson's error has neither, only where it stopped.
 */
static bool
hf_overflow(const char *path, const char *text, size_t len, const json_error_t *jerr, struct plan_error *err)
{
	size_t stop = jerr->position > 0 && (size_t)jerr->position <= len ? (size_t)jerr->position : len;
	char field[256], number[48];
	size_t at = json_where_path(text, len, stop, field, sizeof(field)), n;
	int line = jerr->line, column = jerr->column;

	if (at == JSON_WHERE_NONE || text[at] == '{' || text[at] == '[')
		return plan_error_set(err, PLAN_ERR_INPUT, path, line > 0 ? line : 0, column > 0 ? column : 0, "%s",
				      jerr->text);
	json_where_line(text, at, &line, &column);
	n = strspn(text + at, "+-0123456789.eE");
	snprintf(number, sizeof(number), "%.*s%s", (int)(n > 40 ? 40 : n), text + at, n > 40 ? "..." : "");
	/* A real (jansson: a fraction or an exponent) overflows a double,
	 * an integer json_int_t (int64_t). */
	return plan_error_set(err, PLAN_ERR_INPUT, path, line, column, "number out of range%s%s%s: '%s' (%s)",
			      field[0] ? " in field '" : "", field, field[0] ? "'" : "", number,
			      strpbrk(number, ".eE") ? "a real's magnitude must be at most 1.79769e+308" :
			      "a whole number must be from -9223372036854775808 to 9223372036854775807");
}

/*
 * Python's json module writes float('inf') and nan as the bare words
 * Infinity, -Infinity and NaN (json.dumps' allow_nan, on by default), and
 * transformers' to_json_string keeps them: Mamba-2 configs hold
 * "time_step_limit": [0.0, Infinity]. JSON has no such tokens and
 * jansson refuses them, so outside strings each becomes a string of the
 * same length ("Inf" and spaces; "N"), which keeps every line and column,
 * and a size field holding one is still refused as not a whole number.
 */
static void
hf_python_words(char *t, size_t len)
{
	static const struct { const char *word, *as; } words[] = {
		{ "-Infinity", "\"-Inf\"   " }, { "Infinity", "\"Inf\"   " }, { "NaN", "\"N\"" },
	};
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		if (in_string) {
			if (t[i] == '\\')
				i++;
			else if (t[i] == '"')
				in_string = false;
			continue;
		}
		if (t[i] == '"') {
			in_string = true;
			continue;
		}
		for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
			size_t n = strlen(words[w].word);

			if (len - i >= n && memcmp(t + i, words[w].word, n) == 0 &&
			    (i == 0 || !isalnum((unsigned char)t[i - 1])) &&
			    (i + n == len || !isalnum((unsigned char)t[i + n]))) {
				memcpy(t + i, words[w].as, n);
				i += n - 1;
				break;
			}
		}
	}
}

/* hf_config_text_to_yaml on the text at @r (its Python words replaced). */
static bool
hf_config_parsed(struct hf_reader r, const char *name, char **yaml)
{
	const char *path = r.path, *text = r.text;
	size_t len = r.len, size = 0;
	struct plan_error *err = r.err;
	json_error_t jerr;
	FILE *out;
	bool ok;

	r.root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!r.root && json_error_code(&jerr) == json_error_numeric_overflow)
		return hf_overflow(path, text, len, &jerr, err);
	if (!r.root)
		return plan_error_set(err, PLAN_ERR_INPUT, path, jerr.line > 0 ? jerr.line : 0,
				      jerr.column > 0 ? jerr.column : 0, "%s", jerr.text);
	if (!json_is_object(r.root)) {
		json_decref(r.root);
		return plan_error_set(err, PLAN_ERR_INPUT, path, 0, 0, "a config.json holds one object");
	}
	out = open_memstream(yaml, &size);
	if (!out) {
		json_decref(r.root);
		return plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
	}
	ok = hf_write(&r, name, out);
	if (fclose(out) != 0 && ok)
		ok = plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
	json_decref(r.root);
	if (!ok) {
		free(*yaml);
		*yaml = NULL;
	}
	return ok;
}

bool
hf_config_text_to_yaml(const char *path, const char *text, size_t len, const char *name, char **yaml,
		       struct plan_error *err)
{
	char *copy = malloc(len + 1);
	struct hf_reader r = { path, copy, len, NULL, err };
	bool ok;

	*yaml = NULL;
	if (!copy)
		return plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
	memcpy(copy, text, len);
	copy[len] = '\0';
	hf_python_words(copy, len);
	ok = hf_config_parsed(r, name, yaml);
	free(copy);
	return ok;
}

bool
hf_config_to_yaml(const char *path, const char *name, char **yaml, struct plan_error *err)
{
	char *text;
	size_t len;
	bool ok;

	*yaml = NULL;
	if (!infile_read(path, INFILE_MAX_YAML, &text, &len, err))
		return false;
	ok = hf_config_text_to_yaml(path, text, len, name, yaml, err);
	free(text);
	return ok;
}

bool
hf_config_load(struct model *m, const char *path, struct plan_error *err)
{
	char name[64], *yaml;
	const char *base = strrchr(path, '/');
	bool ok;

	/* The profile's name: the file's, or its folder's for a config.json. */
	base = base ? base + 1 : path;
	if (strcmp(base, "config.json") == 0 && base > path) {
		const char *end = base - 1, *start = end;

		while (start > path && start[-1] != '/')
			start--;
		snprintf(name, sizeof(name), "%.*s", (int)(end - start), start);
	} else {
		size_t n = strlen(base);

		snprintf(name, sizeof(name), "%.*s", (int)(n > 5 && strcmp(base + n - 5, ".json") == 0 ? n - 5 : n), base);
	}
	if (!name[0])
		snprintf(name, sizeof(name), "hf-model");
	if (!hf_config_to_yaml(path, name, &yaml, err))
		return false;
	ok = model_load_string(m, path, yaml, err);
	free(yaml);
	if (!ok && err && err->line > 0) {
		char msg[sizeof(err->message)];

		/* The line and column are the written profile's, not the
		 * config.json's: drop them and say where the key came from. */
		snprintf(msg, sizeof(msg), "%s", err->message);
		plan_error_set(err, err->kind, path, 0, 0, "%s (in the model profile written from it: see "
			       "plan-cli import)", msg);
	}
	return ok;
}
