#include <string.h>

#include "plan/mixer.h"
#include "plan/pipeline.h"
#include "plan/plan.h"

const char *const plan_recompute_names[] = { "none", "selective", "full", NULL };
/* plan-cli recomp: Megatron-Core's names (transformer_config.py). */
const char *const plan_recompute_module_names[] = { "core_attn", "mla_up_proj", "moe_act", "layernorm", "mlp", "moe",
						    "shared_experts", NULL };
_Static_assert(sizeof(plan_recompute_module_names) / sizeof(plan_recompute_module_names[0]) == PLAN_RM_COUNT + 1,
	       "a name for every recompute module");
const char *const plan_recompute_method_names[] = { "uniform", "block", NULL };
const char *const plan_moe_routing_names[] = { "flat", "bilevel", NULL };
const char *const plan_moe_overlap_names[] = { "none", "lancet", "combined-1f1b", NULL };
const char *const plan_precision_names[] = { "bf16", "fp16", "fp8", "fp4", NULL };
const char *const plan_cp_method_names[] = { "ring", "all-to-all", "all-gather", NULL };
const char *const plan_fp8_recipe_names[] = { "framework", "delayed", "current", "rowwise", "blockwise", "mxfp8",
					      NULL };
const char *const plan_attention_kernel_names[] = { "framework", "profile", "fa2", "fa3", "cudnn", "sdpa", NULL };
const char *const plan_pp_split_names[] = { "even", "embedding", "loss", "embedding-loss", "torchtitan", NULL };
const char *const plan_pp_schedule_names[] = { "1f1b", "zb-h1", "zb-v", "dualpipe", "dualpipev", NULL };

bool
plan_low_precision(const struct plan *p)
{
	return p->precision == PLAN_PRECISION_FP8 || p->precision == PLAN_PRECISION_FP4;
}

/* plan-cli recomp: begin */
bool
plan_recomputes_moe_layer(const struct plan *p)
{
	return p->recompute == PLAN_RECOMPUTE_FULL ||
	       (p->recompute == PLAN_RECOMPUTE_SELECTIVE && (p->recompute_modules & 1 << PLAN_RM_MOE));
}

double
plan_tp_recompute_share(const struct plan *p, const struct model *m)
{
	double frac = model_is_moe(m) ? (double)model_moe_layers(m) / m->layers : 0.0, share = 0.0;

	if (p->recompute == PLAN_RECOMPUTE_FULL)
		return 1.0;
	if (p->recompute != PLAN_RECOMPUTE_SELECTIVE)
		return 0.0;
	if (p->recompute_modules & 1 << PLAN_RM_MLP)
		share += 0.5 * (1.0 - frac);
	if (p->recompute_modules & 1 << PLAN_RM_MOE)
		share += 0.5 * frac;
	return share;
}
/* plan-cli recomp: end */

void
plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->vpp = 1;
	p->cp = 1;
	p->micro_batch = 1;
	p->recompute = PLAN_RECOMPUTE_NONE;
	p->dp_overlap = -1;
	p->compress.from_layer = -1;
	p->ep = 1;
	p->mics_hierarchical = true;
}

int
plan_gpus(const struct plan *p)
{
	/* plan_validate bounds the product by the cluster's GPUs, an int. */
	return (int)((long long)p->tp * p->cp * p->pp * p->dp);
}

long long
plan_degrees_product(const struct plan *p)
{
	const int degrees[] = { p->tp, p->cp, p->pp, p->dp };
	long long product = 1;

	for (size_t i = 0; i < sizeof(degrees) / sizeof(degrees[0]); i++) {
		if (degrees[i] < 1 || product > PLAN_MAX_GPUS / degrees[i])
			return -1;
		product *= degrees[i];
	}
	return product;
}

int
plan_etp(const struct plan *p)
{
	return p->etp > 0 ? p->etp : p->tp;
}

int
plan_edp(const struct plan *p)
{
	long long ranks = (long long)p->tp * (p->cp > 0 ? p->cp : 1) * p->dp;
	long long expert = (long long)p->ep * plan_etp(p);

	/* At least 1: the search lays out plans before plan_validate
	 * refuses those whose ep x etp does not divide the ranks. */
	return expert > 0 && ranks >= expert ? (int)(ranks / expert) : 1;
}

void
plan_make_cp_local(struct plan *p)
{
	if (p->cp > 1)
		p->seq_len /= p->cp;
}

struct plan
plan_cp_local(const struct plan *p)
{
	struct plan local = *p;

	plan_make_cp_local(&local);
	return local;
}

int
plan_microbatches(const struct plan *p)
{
	/* 64-bit: dp and micro-batch are each in range, their product need not be. */
	return (int)(p->global_batch / ((long long)p->dp * p->micro_batch));
}

/* An uneven layout's count, out of line: inlined into plan_stage_layers
 * (by link-time optimisation), its loop had every call, the even
 * layout's one division too, save and restore six registers
 * (bench-predict: a fifth of a microsecond per prediction). */
static int __attribute__((noinline))
stage_layers_uneven(const struct plan *p, const struct model *m, int s)
{
	return pipeline_stage_layer_count(p, m, s);
}

int
plan_stage_layers(const struct plan *p, const struct model *m, int s)
{
	/* plan-cli pipeline: an uneven or interleaved-uneven layout sums its
	 * chunks (pipeline_even_layout's test, here in line: a hot path). */
	if (p->custom_layers || p->pp_split != PLAN_PP_SPLIT_EVEN || p->pp_first_layers || p->pp_last_layers)
		return stage_layers_uneven(p, m, s);
	return m->layers / p->pp;
}

int
plan_stage_first_layer(const struct plan *p, const struct model *m, int s)
{
	int first = 1;

	for (int i = 0; i < s; i++)
		first += plan_stage_layers(p, m, i);
	return first;
}

int
plan_stage_recompute(const struct plan *p, int s)
{
	return p->custom_recompute ? p->stage_recompute[s] : p->recompute;
}

int
plan_stage_recompute_layers(const struct plan *p, const struct model *m, int s)
{
	int layers = plan_stage_layers(p, m, s);

	if (p->custom_recompute_layers)
		return p->stage_recompute_layers[s] < layers ? p->stage_recompute_layers[s] : layers;
	if (plan_stage_recompute(p, s) != PLAN_RECOMPUTE_FULL)
		return 0;
	return plan_recompute_block(p) ? plan_block_layers(p, m, s) : layers; /* plan-cli recomp */
}

/* plan-cli recomp: begin */
bool
plan_recompute_block(const struct plan *p)
{
	return p->recompute_method == PLAN_RECOMPUTE_BLOCK && p->recompute_num_layers > 0;
}

/* Megatron's block method (transformer_block.py, _checkpointed_forward,
 * recompute_method 'block', core_r0.13.0): each model chunk of the stage
 * checkpoints its first recompute_num_layers layers, so a stage of v
 * chunks recomputes min(N, its layers) of each. */
int
plan_block_layers(const struct plan *p, const struct model *m, int s)
{
	int k = 0;

	for (int j = 0; j < p->vpp; j++) {
		int layers = pipeline_chunk_layers(p, m, pipeline_stage_chunk(p, s, j));

		k += p->recompute_num_layers < layers ? p->recompute_num_layers : layers;
	}
	return k;
}

int
plan_uniform_group(const struct plan *p)
{
	return p->recompute_method == PLAN_RECOMPUTE_UNIFORM && p->recompute_num_layers > 1 ? p->recompute_num_layers
												: 1;
}
/* plan-cli recomp: end */

int
plan_stage_mode(const struct plan *p, const struct model *m, int s)
{
	int r = plan_stage_recompute(p, s);

	if (!p->custom_recompute_layers && !(plan_recompute_block(p) && r == PLAN_RECOMPUTE_FULL)) /* plan-cli recomp */
		return r;
	/* A stage of no layer (--stage-layers 0,...) recomputes nothing in
	 * any mode: the plan's, so that 0 of 0 layers is not "all in full". */
	if (plan_stage_layers(p, m, s) == 0)
		return r;
	if (plan_stage_recompute_layers(p, m, s) == plan_stage_layers(p, m, s))
		return PLAN_RECOMPUTE_FULL;
	/* --recompute full --recompute-layers N: only the first N in full. */
	return r == PLAN_RECOMPUTE_FULL ? PLAN_RECOMPUTE_NONE : r;
}

bool
plan_recompute_resolvable(const struct plan *p)
{
	return (p->custom_recompute_layers || plan_recompute_block(p)) && p->pp <= PLAN_MAX_STAGES; /* plan-cli recomp */
}

struct plan
plan_resolve_recompute(const struct plan *p, const struct model *m)
{
	struct plan q = *p;
	bool partial = false, uniform = true;

	if (!plan_recompute_resolvable(p))
		return q;
	for (int s = 0; s < p->pp; s++) {
		int k = plan_stage_recompute_layers(p, m, s);
		bool all = k == plan_stage_layers(p, m, s);

		q.stage_recompute[s] = (signed char)plan_stage_mode(p, m, s);
		q.stage_recompute_layers[s] = (short)(all ? 0 : k);
		partial = partial || (k > 0 && !all);
		uniform = uniform && q.stage_recompute[s] == q.stage_recompute[0];
	}
	q.custom_recompute_layers = partial;
	q.stage_recompute_layers_count = partial ? p->pp : 0;
	q.custom_recompute = !uniform || partial;
	q.stage_recompute_count = q.custom_recompute ? p->pp : 0;
	if (uniform)
		q.recompute = q.stage_recompute[0];
	if (!q.custom_recompute)
		memset(q.stage_recompute, 0, sizeof(q.stage_recompute));
	if (!partial)
		memset(q.stage_recompute_layers, 0, sizeof(q.stage_recompute_layers));
	return q;
}

int
plan_compress_from_layer(const struct plan *p, const struct model *m)
{
	return p->compress.from_layer >= 0 ? p->compress.from_layer : m->layers / 2;
}

bool
plan_error_nonfinite(const struct plan *p, const char *what, struct plan_error *err)
{
	/* Every rate has a floor in the schemas; what is left is an
	 * efficiency or a curve so small that a time overflows. */
	return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
			      "plan tp %d x pp %d x dp %d, micro-batch %d: %s is not finite "
			      "(a rate or an efficiency in the profiles is too small)",
			      p->tp, p->pp, p->dp, p->micro_batch, what);
}

#define FAIL(...) plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, __VA_ARGS__)

/* --recompute-layers (Slapo's checkpoint ratio): at most a stage's
 * layers each, plain 1F1B (under ZeRO-3 only with a framework that does
 * not gather again to recompute: estimate.c,
 * check_zero3_partial_recompute). */
static bool
plan_validate_recompute_layers(const struct plan *p, const struct model *m, struct plan_error *err)
{
	if (p->vpp > 1)
		return FAIL("--recompute-layers needs vpp 1 (got %d): it counts the layers of a stage in order",
			    p->vpp);
	for (int s = 0; s < p->pp; s++) {
		int n = p->stage_recompute_layers[s], layers = plan_stage_layers(p, m, s);

		if (n < 0 || n > layers)
			return FAIL("--recompute-layers: stage %d has %d layers, so it cannot recompute %d", s,
				    layers, n);
	}
	return true;
}

/* plan-cli recomp: begin */
/*
 * --recompute-modules: each module must exist in the model, as
 * Megatron-Core builds a layer (transformer_layer.py and the modules of
 * core_r0.13.0): mla_up_proj needs MLA (multi_latent_attention.py), the
 * MoE modules an MoE model (moe_layer.py, experts.py), shared_experts its
 * shared experts (shared_experts.py), mlp a dense MLP somewhere (a layer
 * whose MLP is not an MoELayer). --recompute-method block keeps ZeRO-3
 * out as --recompute-layers does (one recompute mode per layer regather).
 */
static bool
validate_recompute_modules(const struct plan *p, const struct model *m, struct plan_error *err)
{
	unsigned rm = (unsigned)p->recompute_modules;
	bool moe = model_is_moe(m);
	const char *mod = NULL, *lacks = NULL;

	if (p->recompute_modules < 0 || rm >= 1u << PLAN_RM_COUNT)
		return FAIL("invalid recompute modules (%d)", p->recompute_modules);
	if ((rm & 1u << PLAN_RM_MLA_UP_PROJ) && m->attention != MODEL_ATTN_MLA)
		mod = "mla_up_proj", lacks = "has no multi-latent attention (MLA)";
	else if ((rm & 1u << PLAN_RM_MOE_ACT) && !moe)
		mod = "moe_act", lacks = "is not an MoE model";
	else if ((rm & 1u << PLAN_RM_MOE) && !moe)
		mod = "moe", lacks = "is not an MoE model";
	else if ((rm & 1u << PLAN_RM_SHARED_EXPERTS) && (!moe || m->moe.shared_experts == 0))
		mod = "shared_experts", lacks = "has no shared experts";
	else if ((rm & 1u << PLAN_RM_MLP) && moe && model_moe_layers(m) == m->layers)
		mod = "mlp", lacks = "has no dense MLP (every layer is MoE: use moe or moe_act)";
	if (mod)
		return FAIL("--recompute-modules %s does not apply: model '%s' %s", mod, m->name, lacks);
	if (p->recompute_method != PLAN_RECOMPUTE_UNIFORM && p->recompute_method != PLAN_RECOMPUTE_BLOCK)
		return FAIL("invalid recompute method (%d)", p->recompute_method);
	if (p->recompute_num_layers < 0)
		return FAIL("--recompute-num-layers must be positive (got %d)", p->recompute_num_layers);
	return true;
}
/* plan-cli recomp: end */

/* Context parallelism: what Megatron-Core's ring attention and
 * DeepSpeed-Ulysses need, and what plan-cli models of it. */
static bool
validate_cp(const struct plan *p, const struct model *m, struct plan_error *err)
{
	if (p->cp < 1)
		return FAIL("cp must be at least 1 (got %d)", p->cp);
	if (p->cp == 1)
		return true;
	/* Load-balanced causal chunking gives each rank two chunks. */
	if (p->seq_len % (2 * p->cp) != 0)
		return FAIL("context parallelism needs seq-len (%d) divisible by 2 x cp (2 x %d)",
			    p->seq_len, p->cp);
	if (!p->flash_attention)
		return FAIL("context parallelism (cp %d) needs --flash-attention (a fused attention kernel)", p->cp);
	if (p->cp_method == PLAN_CP_ALLTOALL && ((m->heads / p->tp) % p->cp != 0 ||
						  (m->kv_heads >= p->tp && (m->kv_heads / p->tp) % p->cp != 0)))
		return FAIL("all-to-all context parallelism splits the heads: the heads per TP rank (%d) and "
			    "kv_heads per TP rank (%d) must be divisible by cp (%d)",
			    m->heads / p->tp, m->kv_heads >= p->tp ? m->kv_heads / p->tp : 1, p->cp);
	/* plan-cli cpag: Megatron-Core refuses any other CP for DSA
	 * (transformer_config.py @d98e8a6 l. 3162-3177, "DSAttention context
	 * parallelism currently supports cp_comm_type=allgather only"; dsa.py
	 * l. 1806-1808). */
	if (model_has_dsa(m) && p->cp_method != PLAN_CP_ALLGATHER)
		return FAIL("model '%s' uses DeepSeek Sparse Attention, whose context parallelism Megatron-Core runs "
			    "by all-gather only (cp_comm_type allgather): give --cp-method all-gather, not %s",
			    m->name, plan_cp_method_names[p->cp_method]);
	if (p->mics_group > 0)
		return FAIL("context parallelism with MiCS is not modelled yet");
	return true;
}

/* Degrees: each at least 1, their product within the cluster, and TP
 * dividing the heads and FFN columns (Megatron-LM splits both by tp,
 * Shoeybi et al. 2019, Sec. 3) and fitting the nodes. */
static bool
validate_degrees(const struct plan *p, const struct model *m, const struct cluster *c,
		 struct plan_error *err)
{
	long long gpus;

	if (p->tp < 1 || p->pp < 1 || p->dp < 1 || p->vpp < 1)
		return FAIL("tp, pp, dp and vpp must be at least 1 (got %d, %d, %d, %d)", p->tp, p->pp, p->dp, p->vpp);
	if (p->micro_batch < 1 || p->global_batch < 1 || p->seq_len < 1)
		return FAIL("micro-batch (%d), global batch (%d) and sequence length (%d) must be positive",
			    p->micro_batch, p->global_batch, p->seq_len);
	if (p->zero < 0 || p->zero > 3)
		return FAIL("zero stage must be 0, 1, 2 or 3 (got %d)", p->zero);
	if (!validate_cp(p, m, err))
		return false;
	gpus = plan_degrees_product(p);
	if (gpus < 0)
		return FAIL("tp x cp x pp x dp (%d x %d x %d x %d) is more than %lld GPUs", p->tp, p->cp, p->pp, p->dp,
			    PLAN_MAX_GPUS);
	if (gpus > cluster_gpus(c) && p->cp > 1)
		return FAIL("the plan needs %lld GPUs (tp %d x cp %d x pp %d x dp %d) but cluster '%s' has %d",
			    gpus, p->tp, p->cp, p->pp, p->dp, c->name, cluster_gpus(c));
	if (gpus > cluster_gpus(c))
		return FAIL("the plan needs %lld GPUs (tp %d x pp %d x dp %d) but cluster '%s' has %d",
			    gpus, p->tp, p->pp, p->dp, c->name, cluster_gpus(c));
	if (m->heads % p->tp != 0)
		return FAIL("attention heads (%d) are not divisible by tp (%d)", m->heads, p->tp);
	if (m->kv_heads % p->tp != 0 && p->tp % m->kv_heads != 0)
		return FAIL("kv_heads (%d) and tp (%d) must divide one another", m->kv_heads, p->tp);
	if (m->ffn_hidden % p->tp != 0)
		return FAIL("ffn_hidden (%d) is not divisible by tp (%d)", m->ffn_hidden, p->tp);
	if (p->tp > 1 && p->tp > c->gpus_per_node && p->tp % c->gpus_per_node != 0)
		return FAIL("tp (%d) spans nodes, so it must be a multiple of gpus_per_node (%d)",
			    p->tp, c->gpus_per_node);
	if (p->tp < c->gpus_per_node && c->gpus_per_node % p->tp != 0)
		return FAIL("tp (%d) must divide gpus_per_node (%d)", p->tp, c->gpus_per_node);
	return true;
}

/* plan-cli pipeline: begin (uneven layouts and schedules) */
/* Megatron-Core's first/last-stage split (get_num_layers_to_build and
 * TransformerConfig.__post_init__, Megatron-Core 0.12): not with the
 * embedding/loss accounting, the middle ranks share the rest evenly, and
 * each rank's layers divide into its vpp chunks. */
static bool
validate_first_last(const struct plan *p, const struct model *m, struct plan_error *err)
{
	int rest = m->layers - p->pp_first_layers - p->pp_last_layers;
	int left = p->pp - (p->pp_first_layers > 0) - (p->pp_last_layers > 0);

	if (p->pp_split != PLAN_PP_SPLIT_EVEN)
		return FAIL("--pp-first-layers and --pp-last-layers need --pp-split even (Megatron-Core does not "
			    "combine them with the embedding/loss accounting; got %s)",
			    plan_pp_split_names[p->pp_split]);
	if (p->pp < 2)
		return FAIL("--pp-first-layers and --pp-last-layers need pp > 1 (got %d)", p->pp);
	/* Said apart: "the -8 layers left ... over the 0 other stages". */
	if (rest < 0)
		return FAIL("the first (%d) and last (%d) stages take more than the model's %d layers",
			    p->pp_first_layers, p->pp_last_layers, m->layers);
	if (left > 0 && rest == 0)
		return FAIL("the first (%d) and last (%d) stages take all the model's %d layers, leaving none for the "
			    "other %d", p->pp_first_layers, p->pp_last_layers, m->layers, left);
	if (left == 0 && rest != 0)
		return FAIL("pp %d has no other stage: the first (%d) and last (%d) stages must hold all the model's %d "
			    "layers", p->pp, p->pp_first_layers, p->pp_last_layers, m->layers);
	if (left > 0 && rest % left != 0)
		return FAIL("the %d layers left after the first (%d) and last (%d) stages do not divide over the %d "
			    "other stages", rest, p->pp_first_layers, p->pp_last_layers, left);
	if (p->pp_first_layers % p->vpp || p->pp_last_layers % p->vpp || (left > 0 && (rest / left) % p->vpp))
		return FAIL("every stage's layers (first %d, middle %d, last %d) must divide into its vpp (%d) chunks",
			    p->pp_first_layers ? p->pp_first_layers : rest / (left ? left : 1), left ? rest / left : 0,
			    p->pp_last_layers ? p->pp_last_layers : rest / (left ? left : 1), p->vpp);
	return true;
}

/* The layout: a list of pp x vpp virtual stages summing to the layers, or
 * a split rule whose divisibility holds (every rank with a layer). A listed
 * (virtual) stage may hold none: Megatron-Core's
 * --pipeline-model-parallel-layout asks only that the stages' decoder
 * layers add up to num_layers, the embedding come first and the loss last
 * (PipelineParallelLayerLayout.validate_layer_layout,
 * megatron/core/transformer/pipeline_parallel_layer_layout.py, core_r0.14
 * to main of 2025-26; pretty_repr prints such a stage as "(empty
 * stage)"), so "E|t*11|t*11|t*10L" puts the embedding alone on rank 0.
 * Here the embedding is always on virtual stage 0 and the loss on the
 * last, whatever their layers. */
bool
plan_validate_layout(const struct plan *p, const struct model *m, struct plan_error *err)
{
	long long chunks = (long long)p->pp * p->vpp;

	if (chunks > PLAN_MAX_STAGES && !pipeline_even_layout(p))
		return FAIL("uneven layouts are limited to %d virtual stages (pp x vpp %lld)", PLAN_MAX_STAGES, chunks);
	if (p->custom_layers) {
		int sum = 0;

		for (int i = 0; i < chunks; i++) {
			if (p->stage_layers[i] < 0)
				return FAIL("stage_layers: stage %d has %d layers, not 0 to 30000", i,
					    p->stage_layers[i]);
			sum += p->stage_layers[i];
		}
		if (sum == 0)
			return FAIL("stage_layers leaves every stage empty: the stages hold the model's %d layers, "
				    "0 only on some (the embedding or the loss alone)", m->layers);
		if (sum != m->layers)
			return FAIL("stage_layers: the stages hold %d layers but the model has %d", sum, m->layers);
		return true;
	}
	if (p->pp_first_layers > 0 || p->pp_last_layers > 0)
		return validate_first_last(p, m, err);
	switch (p->pp_split) {
	case PLAN_PP_SPLIT_EMBEDDING:
	case PLAN_PP_SPLIT_LOSS:
	case PLAN_PP_SPLIT_EMBEDDING_LOSS: {
		int extra = p->pp_split == PLAN_PP_SPLIT_EMBEDDING_LOSS ? 2 : 1;

		if ((m->layers + extra) % chunks != 0)
			return FAIL("layers + %d (%d, the embedding/loss counted as layers) are not divisible by "
				    "pp x vpp (%d x %d)", extra, m->layers + extra, p->pp, p->vpp);
		break;
	}
	case PLAN_PP_SPLIT_TORCHTITAN:
		if (chunks > m->layers)
			return FAIL("torchtitan's split needs at most one stage per layer (pp x vpp %lld > %d layers)",
				    chunks, m->layers);
		break;
	default:
		if (m->layers % chunks != 0)
			return FAIL("layers (%d) are not divisible by pp x vpp (%d x %d); --pp-split (embedding-loss, "
				    "torchtitan), --pp-first-layers, --pp-last-layers or --stage-layers split them unevenly",
				    m->layers, p->pp, p->vpp);
		return true;
	}
	for (int s = 0; s < p->pp; s++)
		if (pipeline_stage_layer_count(p, m, s) < 1)
			return FAIL("pipeline stage %d gets no layers from --pp-split %s", s,
				    plan_pp_split_names[p->pp_split]);
	return true;
}

/* What each schedule needs (its paper or its code): ZB-H1 and DualPipe
 * run one chunk a rank, ZB-V and DualPipeV two in a V; DualPipe feeds
 * half the micro-batches from each end, so an even pp (each rank holds
 * stage i and p-1-i) and an even count; DualPipe's and DualPipeV's step()
 * assert at least 2 x ranks micro-batches (deepseek-ai/DualPipe,
 * dualpipe/dualpipe.py and dualpipev.py); the zero-bubble schedules fill
 * their warm-up with p micro-batches (Qi et al., ICLR 2024, Sec. 3). */
static bool
validate_schedule(const struct plan *p, struct plan_error *err)
{
	const char *name = plan_pp_schedule_names[p->pp_schedule];
	int mb = plan_microbatches(p);

	if (p->pp_schedule == PLAN_PP_1F1B)
		return true;
	if (p->pp < 2)
		return FAIL("--pp-schedule %s needs pipeline parallelism: pp > 1 (it is %d)", name, p->pp);
	if (pipeline_v_shape(p) && p->vpp != 2)
		return FAIL("--pp-schedule %s places two chunks a rank in a V: it needs --vpp 2 (got %d)", name, p->vpp);
	if (!pipeline_v_shape(p) && p->vpp != 1)
		return FAIL("--pp-schedule %s runs one chunk a rank: it needs --vpp 1 (got %d)", name, p->vpp);
	if (p->pp_schedule == PLAN_PP_DUALPIPE && p->pp % 2)
		return FAIL("DualPipe needs an even pp (got %d): rank i holds stages i and pp - 1 - i", p->pp);
	if ((p->pp_schedule == PLAN_PP_DUALPIPE || p->pp_schedule == PLAN_PP_DUALPIPEV) && mb < 2 * p->pp)
		return FAIL("--pp-schedule %s needs at least 2 x pp micro-batches (%d < 2 x %d)", name, mb, p->pp);
	if (p->pp_schedule == PLAN_PP_DUALPIPE && mb % 2)
		return FAIL("DualPipe feeds half the micro-batches from each end: it needs an even count (got %d)", mb);
	if (mb < p->pp)
		return FAIL("--pp-schedule %s needs at least pp micro-batches (%d < %d)", name, mb, p->pp);
	return true;
}
/* plan-cli pipeline: end */

/* plan-cli bf16ends: begin */
bool
plan_has_bf16_layers(const struct plan *p)
{
	return plan_low_precision(p) && (p->bf16_first_layers > 0 || p->bf16_last_layers > 0);
}

struct plan
plan_bf16_layers_plan(const struct plan *p)
{
	struct plan b = *p;

	/* Megatron-Core gives those layers nullcontext() for fp8_autocast
	 * and for fp8_model_init (fp8_utils.py get_fp8_context): bf16 GEMMs,
	 * bf16 weights, no recipe. */
	b.precision = PLAN_PRECISION_BF16;
	b.fp8_recipe = PLAN_FP8_FRAMEWORK;
	b.fp8_gather = false;
	b.bf16_first_layers = b.bf16_last_layers = 0;
	return b;
}

/* Megatron-Core's --first-last-layers-bf16 (megatron/core/fp8_utils.py,
 * is_first_last_bf16_layer, and fp4_utils.py get_fp4_context, the same
 * test for NVFP4; transformer_config.py): for fp8 and fp4
 * training only, and at least one layer left in the low precision (else
 * the plan is a bf16 one). */
static bool
validate_bf16_layers(const struct plan *p, const struct model *m, struct plan_error *err)
{
	long n = (long)p->bf16_first_layers + p->bf16_last_layers;

	if (n == 0)
		return true;
	if (p->bf16_first_layers < 0 || p->bf16_last_layers < 0)
		return FAIL("--bf16-first-layers and --bf16-last-layers must not be negative (got %d and %d)",
			    p->bf16_first_layers, p->bf16_last_layers);
	if (!plan_low_precision(p))
		return FAIL("--bf16-first-layers and --bf16-last-layers apply to --precision fp8 or fp4 (precision "
			    "is %s)", plan_precision_names[p->precision]);
	if (n >= m->layers)
		return FAIL("--bf16-first-layers %d and --bf16-last-layers %d leave none of the model's %d layers in "
			    "%s: use --precision bf16", p->bf16_first_layers, p->bf16_last_layers, m->layers,
			    plan_precision_names[p->precision]);
	return true;
}
/* plan-cli bf16ends: end */

/* Activation offloading as Megatron-Core allows it (transformer_config.py,
 * __post_init__, core_v0.14.0 on): fewer layers than the model's, no
 * pipeline parallelism ("Currently there is no support for Pipeline
 * parallelism with CPU offloading") and no recomputation ("CPU offloading
 * does not work when activation recomputation is enabled"). */
static bool
validate_offload(const struct plan *p, const struct model *m, struct plan_error *err)
{
	int n = p->activation_offload_layers;

	if (n == 0)
		return true;
	if (n < 0 || n >= m->layers)
		return FAIL("--activation-offload-layers %d: offloading takes fewer layers than the model's %d", n,
			    m->layers);
	if (p->pp > 1)
		return FAIL("--activation-offload-layers needs pp 1 (got %d): Megatron-Core offloads no pipeline "
			    "stage", p->pp);
	if (p->recompute != PLAN_RECOMPUTE_NONE || p->custom_recompute || p->custom_recompute_layers)
		return FAIL("--activation-offload-layers does not combine with recomputation (Megatron-Core)");
	return true;
}

/* Stage layouts: the per-stage arrays hold PLAN_MAX_STAGES entries, an
 * uneven pipeline must hold exactly the model's layers, an even one
 * pp x vpp equal chunks. */
static bool
validate_stages(const struct plan *p, const struct model *m, struct plan_error *err)
{
	if (p->pp > PLAN_MAX_STAGES && (p->custom_layers || p->custom_recompute || p->custom_recompute_layers))
		return FAIL("per-stage layouts are limited to %d stages (pp %d)", PLAN_MAX_STAGES, p->pp);
	if (!plan_validate_layout(p, m, err))
		return false;
	if (p->custom_recompute)
		for (int i = 0; i < p->pp; i++)
			if (p->stage_recompute[i] < PLAN_RECOMPUTE_NONE || p->stage_recompute[i] > PLAN_RECOMPUTE_FULL)
				return FAIL("stage %d has an invalid recompute mode (%d)", i, p->stage_recompute[i]);
	if (p->custom_recompute_layers && !plan_validate_recompute_layers(p, m, err))
		return false;
	if (p->vpp > 1 && p->pp < 2)
		return FAIL("interleaving (vpp %d) needs pipeline parallelism: pp > 1 (it is %d)", p->vpp, p->pp);
	return validate_bf16_layers(p, m, err) && validate_offload(p, m, err);
}

/* Batch: whole micro-batches per DP rank, a multiple of pp of them for
 * the interleaved schedule (Narayanan et al. SC21, Sec. 2.2.2), and a
 * sequence that sequence parallelism can split by tp. */
static bool
validate_batch(const struct plan *p, struct plan_error *err)
{
	long long dp_mb = (long long)p->dp * p->micro_batch;

	if (p->global_batch % dp_mb != 0)
		return FAIL("global batch (%d) is not divisible by dp x micro-batch (%d x %d)",
			    p->global_batch, p->dp, p->micro_batch);
	if (p->vpp > 1 && p->pp_schedule == PLAN_PP_1F1B && plan_microbatches(p) % p->pp != 0)
		return FAIL("the interleaved schedule needs micro-batches (%d) divisible by pp (%d)",
			    plan_microbatches(p), p->pp);
	if (p->sequence_parallel && p->seq_len % p->tp != 0)
		return FAIL("sequence parallelism needs seq-len (%d) divisible by tp (%d)",
			    p->seq_len, p->tp);
	return true;
}

/* Compression starts at a layer and a stage the plan has. */
static bool
validate_compression(const struct plan *p, const struct model *m, struct plan_error *err)
{
	if (p->compress.from_layer > m->layers)
		return FAIL("--compress-from-layer (%d) is beyond the model's %d layers",
			    p->compress.from_layer, m->layers);
	if (p->compress.from_stage >= p->pp && p->compress.pp)
		return FAIL("--compress-from-stage (%d) must be below pp (%d)", p->compress.from_stage, p->pp);
	return true;
}

/* Sharding: EP, MiCS and ZeRO, each within DP and the combinations
 * plan-cli models. */
static bool
validate_sharding(const struct plan *p, const struct model *m, struct plan_error *err)
{
	/* MoE parallel folding (Megatron-Core's parallel_state.py, core_r0.12):
	 * the expert layers lay out the tp x cp x dp ranks of a stage again,
	 * as etp x ep x edp, so ep x etp must divide them. */
	long long ranks = (long long)p->tp * (p->cp > 0 ? p->cp : 1) * p->dp;

	if (p->ep < 1)
		return FAIL("ep must be at least 1 (got %d)", p->ep);
	if (p->etp < 0)
		return FAIL("etp must be at least 1, or 0 for tp (got %d)", p->etp);
	/* Said first: on a dense model --etp 3 was "ep x etp (1 x 3) must
	 * divide tp x cp x dp", not that it has no experts. */
	if (p->ep > 1 && !model_is_moe(m))
		return FAIL("expert parallelism (ep %d) needs an MoE model ('%s' has no moe block)", p->ep, m->name);
	if (p->etp > 0 && p->etp != p->tp && !model_is_moe(m))
		return FAIL("expert tensor parallelism (etp %d) needs an MoE model ('%s' has no moe block)", p->etp,
			    m->name);
	if (ranks % ((long long)p->ep * plan_etp(p)) != 0)
		return FAIL("ep x etp (%d x %d) must divide tp x cp x dp (%d x %d x %d): the experts are laid out "
			    "over a stage's ranks (MoE parallel folding)",
			    p->ep, plan_etp(p), p->tp, p->cp > 0 ? p->cp : 1, p->dp);
	if (model_is_moe(m) && m->moe.experts % p->ep != 0)
		return FAIL("experts (%d) are not divisible by ep (%d)", m->moe.experts, p->ep);
	if (model_is_moe(m) && m->moe.expert_ffn_hidden % plan_etp(p) != 0)
		return FAIL("the experts' FFN width (%d) is not divisible by etp (%d)", m->moe.expert_ffn_hidden,
			    plan_etp(p));
	if (p->mics_group < 0 || (p->mics_group > 0 && p->dp % p->mics_group != 0))
		return FAIL("the MiCS group (%d) must divide dp (%d)", p->mics_group, p->dp);
	/* Groups of ZeRO-1/2 are InternEvo's zero1 = G (optimizer states
	 * sharded inside groups of G DP ranks, replicated across them). */
	if (p->mics_group > 0 && p->zero == 0)
		return FAIL("a partition group (--mics-group %d) shards ZeRO's states: it needs --zero 1-3",
			    p->mics_group);
	if (p->mics_group > 0 && model_is_moe(m))
		return FAIL("MiCS with an MoE model ('%s') is not modelled", m->name);
	/* DeepSpeed's pipeline engine refuses ZeRO-2/3; torchtitan runs FSDP2
	 * under PP with reshard_after_forward off and gradient sync on the
	 * last micro-batch only (torch.distributed.pipelining's stage), so a
	 * stage gathers and reduces once an iteration and holds its whole
	 * parameters and gradients meanwhile: what ZeRO-1 costs and keeps. */
	if (p->zero == 3 && p->pp > 1)
		return FAIL("ZeRO stage 3 with pipeline parallelism (pp %d) is not modelled: under PP, FSDP "
			    "(torchtitan) keeps a stage's parameters and gradients gathered across the "
			    "micro-batches, which costs what --zero 1 costs; use --zero 1",
			    p->pp);
	return true;
}

/*
 * What the model can take: no sequence longer than a learned position
 * table (GPT-2's wpe has n_positions rows: position 1024 of GPT-2 XL has
 * no embedding; OPT's table counts its 2 offset rows, a slack of 2 here),
 * and the MoE settings only on an MoE model, as --ep.
 */
static bool
validate_model_fit(const struct plan *p, const struct model *m, struct plan_error *err)
{
	if (m->position_embedding == MODEL_POS_LEARNED && m->positions > 0 && p->seq_len > m->positions)
		return FAIL("seq-len %d is longer than '%s' has learned positions (%d): the model has no embedding "
			    "for the positions beyond", p->seq_len, m->name, m->positions);
	if (p->moe_routing != PLAN_MOE_FLAT && !model_is_moe(m))
		return FAIL("--moe-routing %s routes tokens to experts: it needs an MoE model ('%s' has no moe block)",
			    plan_moe_routing_names[p->moe_routing], m->name);
	return true;
}

/* plan-cli hybrid: what a hybrid model (hybrid_pattern) takes: its Mamba
 * and GDN layers' tp and cp (mixer_plan_check); the rest is not modelled for
 * these models yet, and is refused rather than priced as a transformer's:
 * layers in bf16, TP compression and activation offloading.
 * (--recompute-modules is priced layer kind by layer kind:
 * modules_recompute_time, memory_recompute_module_bytes.) */
static bool
validate_hybrid(const struct plan *p, const struct model *m, struct plan_error *err)
{
	if (!model_is_hybrid(m))
		return true;
	if (!mixer_plan_check(m, p, err))
		return false;
	if (plan_has_bf16_layers(p))
		return FAIL("--bf16-first-layers and --bf16-last-layers are not modelled for a hybrid model ('%s')",
			    m->name);
	if (p->compress.tp)
		return FAIL("TP compression is not modelled for a hybrid model ('%s')", m->name);
	if (p->activation_offload_layers > 0)
		return FAIL("--activation-offload-layers is not modelled for a hybrid model ('%s')", m->name);
	/* A framework layer written as several symbols (hybrid_group: a GPT
	 * layer's mixer and MLP) stays whole on one virtual stage. */
	for (int k = 0; m->hybrid_group > 1 && k < p->pp * p->vpp; k++)
		if (pipeline_chunk_layers(p, m, k) % m->hybrid_group != 0)
			return FAIL("virtual stage %d would hold %d layers of model '%s', which writes a framework "
				    "layer as %d (hybrid_group): a stage holds whole layers, so choose pp x vpp and "
				    "--stage-layers in multiples of %d",
				    k, pipeline_chunk_layers(p, m, k), m->name, m->hybrid_group, m->hybrid_group);
	return true;
}

/* Both overlaps hide the expert all-to-alls: without an MoE model and
 * ep > 1 there is none, and the option would be a silent no-op (Lancet,
 * Jiang et al., MLSys 2024, partitions the all-to-all of an expert-
 * parallel MoE layer; Megatron-Core asserts expert_model_parallel_size
 * > 1, transformer_config.py l. 3013-3015).
 *
 * --moe-overlap combined-1f1b as Megatron-Core allows its
 * overlap_moe_expert_parallel_comm (transformer_config.py __post_init__,
 * d98e8a6 l. 3002-3046): expert parallelism, a virtual pipeline when
 * pp > 1 (the combined schedule is the interleaved one's,
 * combined_1f1b.py), no full recomputation, recompute method or
 * recompute_num_layers, no "moe" in recompute_modules, 16-bit training
 * (fp8 and fp4 linears run under bf16), and at most one MTP layer. */
static bool
validate_moe_overlap(const struct plan *p, const struct model *m, struct plan_error *err)
{
	bool full = p->recompute == PLAN_RECOMPUTE_FULL || p->custom_recompute_layers;

	if (p->moe_overlap == PLAN_MOE_OVERLAP_NONE)
		return true;
	if (!model_is_moe(m) || p->ep < 2)
		return FAIL("--moe-overlap %s overlaps the expert all-to-alls: it needs an MoE model and ep > 1 "
			    "(model '%s', ep %d)", plan_moe_overlap_names[p->moe_overlap], m->name, p->ep);
	if (p->moe_overlap != PLAN_MOE_OVERLAP_COMBINED_1F1B)
		return true;
	for (int i = 0; p->custom_recompute && i < p->pp; i++)
		full = full || p->stage_recompute[i] == PLAN_RECOMPUTE_FULL;
	if (p->pp > 1 && (p->vpp < 2 || p->pp_schedule != PLAN_PP_1F1B))
		return FAIL("--moe-overlap combined-1f1b with pp %d runs Megatron-Core's interleaved schedule: it "
			    "needs --vpp 2 or more and --pp-schedule 1f1b", p->pp);
	if (full)
		return FAIL("--moe-overlap combined-1f1b does not combine with full recomputation (Megatron-Core)");
	if ((unsigned)p->recompute_modules & 1u << PLAN_RM_MOE)
		return FAIL("--moe-overlap combined-1f1b does not combine with --recompute-modules moe "
			    "(Megatron-Core)");
	if (m->mtp_layers > 1)
		return FAIL("--moe-overlap combined-1f1b takes at most one MTP layer (model '%s' has %d)", m->name,
			    m->mtp_layers);
	return true;
}

/* The checks run in this order, so that the first failing one (the
 * message a user sees) is the same whatever the split. */
bool
plan_validate(const struct plan *p, const struct model *m,
	      const struct cluster *c, struct plan_error *err)
{
	return validate_degrees(p, m, c, err) && validate_stages(p, m, err) &&
	       validate_recompute_modules(p, m, err) && /* plan-cli recomp */
	       validate_batch(p, err) && validate_schedule(p, err) && validate_compression(p, m, err) &&
	       validate_sharding(p, m, err) && validate_model_fit(p, m, err) && validate_hybrid(p, m, err) &&
	       validate_moe_overlap(p, m, err);
}

bool
plan_compress_parse(const char *text, struct plan_compression *pc)
{
	bool tp = false, pp = false, dp = false;
	const char *t = text;

	if (!*t)
		return false;
	for (;;) {
		size_t n = strcspn(t, ",+");

		if (n == 2 && strncmp(t, "tp", 2) == 0)
			tp = true;
		else if (n == 2 && strncmp(t, "pp", 2) == 0)
			pp = true;
		else if (n == 2 && strncmp(t, "dp", 2) == 0)
			dp = true;
		else
			return false;
		if (!t[n])
			break;
		t += n + 1;
	}
	pc->tp = tp;
	pc->pp = pp;
	pc->dp = dp;
	return true;
}
