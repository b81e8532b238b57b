#include <stddef.h>
#include <string.h>

#include "plan/model.h"

static const char *const norm_choices[] = { "layernorm", "rmsnorm", NULL };
static const char *const position_choices[] = { "learned", "rotary", NULL };

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
	{ .key = "shared_experts", .type = SCHEMA_INT, .offset = MOFF(shared_experts),
	  .min = 0, .max = 1024, .def = "0", .help = "experts every token goes through (DeepSeekMoE)" },
	{ 0 },
};

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
	{ .key = "bias", .type = SCHEMA_BOOL, .offset = OFF(bias), .def = "true",
	  .help = "linear layers and norms carry biases" },
	{ .key = "norm", .type = SCHEMA_ENUM, .offset = OFF(norm), .def = "layernorm",
	  .choices = norm_choices, .help = "normalisation layer" },
	{ .key = "position_embedding", .type = SCHEMA_ENUM, .offset = OFF(position_embedding),
	  .def = "learned", .choices = position_choices,
	  .help = "learned position table (GPT, BERT) or rotary (no parameters)" },
	{ .key = "moe", .type = SCHEMA_MAP, .offset = OFF(moe), .sub = moe_schema,
	  .help = "Mixture-of-Experts block; absent for a dense model" },
	{ 0 },
};

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
	if (m->hidden % m->heads != 0)
		return ytree_error(t, ytree_find_path(t, "hidden"), err,
				   "hidden (%d) must be divisible by heads (%d)",
				   m->hidden, m->heads);
	if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
		return ytree_error(t, ytree_find_path(t, "kv_heads"), err,
				   "heads (%d) must be a multiple of kv_heads (%d)",
				   m->heads, m->kv_heads);
	return true;
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

int
model_head_dim(const struct model *m)
{
	return m->hidden / m->heads;
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
	double kv = (double)m->kv_heads * model_head_dim(m);
	double f = m->ffn_hidden;
	double mlp_mats = m->gated_mlp ? 3.0 : 2.0;
	double attn = h * (h + 2.0 * kv) + h * h;
	double mlp = mlp_mats * h * f;
	double norms = (m->norm == MODEL_NORM_LAYERNORM && m->bias) ? 4.0 * h : 2.0 * h;
	double biases = 0.0;

	if (m->bias)
		biases = (h + 2.0 * kv) + h                       /* qkv, proj */
			 + (m->gated_mlp ? 2.0 * f : f) + h;      /* fc1 (and gate), fc2 */
	return attn + mlp + norms + biases;
}

bool
model_is_moe(const struct model *m)
{
	return m->moe.experts > 0;
}

bool
model_layer_is_moe(const struct model *m, int layer)
{
	return model_is_moe(m) && layer % m->moe.every == 0;
}

int
model_moe_layers(const struct model *m)
{
	return model_is_moe(m) ? m->layers / m->moe.every : 0;
}

double
model_params_expert(const struct model *m)
{
	double h = m->hidden, f = m->moe.expert_ffn_hidden;
	double p = (m->gated_mlp ? 3.0 : 2.0) * h * f;

	if (m->bias)
		p += (m->gated_mlp ? 2.0 * f : f) + h;
	return p;
}

/* The router is an h x E linear layer (Switch Transformer, Fedus et al.
 * 2021; GShard, Lepikhin et al. 2020). */
static double
router_params(const struct model *m)
{
	return (double)m->hidden * m->moe.experts;
}

double
model_params_layer_dense_part(const struct model *m, bool moe_layer)
{
	double full = model_params_per_layer(m);
	double mlp = (m->gated_mlp ? 3.0 : 2.0) * (double)m->hidden * m->ffn_hidden +
		     (m->bias ? (m->gated_mlp ? 2.0 * m->ffn_hidden : (double)m->ffn_hidden) + m->hidden : 0.0);

	return moe_layer ? full - mlp + router_params(m) : full;
}

double
model_params_moe_layer(const struct model *m)
{
	return model_params_layer_dense_part(m, true) +
	       (double)(m->moe.experts + m->moe.shared_experts) * model_params_expert(m);
}

double
model_params_active(const struct model *m)
{
	int moe = model_moe_layers(m);
	double active_moe = model_params_layer_dense_part(m, true) +
			    (double)(m->moe.top_k + m->moe.shared_experts) * model_params_expert(m);

	return (m->layers - moe) * model_params_per_layer(m) + moe * active_moe +
	       model_params_embedding(m) + model_params_head(m);
}

double
model_params_embedding(const struct model *m)
{
	double p = (double)m->vocab * m->hidden;

	if (m->position_embedding == MODEL_POS_LEARNED)
		p += (double)m->seq_len * m->hidden;
	return p;
}

double
model_params_head(const struct model *m)
{
	double final_norm = (m->norm == MODEL_NORM_LAYERNORM && m->bias) ? 2.0 * m->hidden : m->hidden;

	return final_norm + (m->tied_embeddings ? 0.0 : (double)m->vocab * m->hidden);
}

double
model_params_total(const struct model *m)
{
	int moe = model_moe_layers(m);

	return (m->layers - moe) * model_params_per_layer(m) + moe * model_params_moe_layer(m) +
	       model_params_embedding(m) + model_params_head(m);
}

int
model_tensors_per_layer(const struct model *m)
{
	int linear = 4 + (m->gated_mlp ? 1 : 0); /* QKV, proj, fc1 (+gate), fc2 */
	int norms = 2;

	return linear * (m->bias ? 2 : 1) + norms * (m->norm == MODEL_NORM_LAYERNORM && m->bias ? 2 : 1);
}
