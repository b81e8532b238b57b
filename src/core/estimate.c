#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "plan/attn_shape.h"
#include "plan/checkpoint.h"
#include "plan/compression.h"
#include "plan/compute.h"
#include "plan/context_par.h"
#include "plan/data_par.h"
#include "plan/expert_par.h"
#include "plan/estimate.h"
#include "plan/flops.h"
#include "plan/fp8_recipe.h"
#include "plan/host_time.h"
#include "plan/memory.h"
#include "plan/muon.h"
#include "plan/pipeline.h"
#include "plan/tensor_par.h"
#include "plan/topology.h"

/* MoE layers held by the GPU of @stage. */
static int
stage_moe_layers(const struct model *m, const struct plan *p, int stage)
{
	return pipeline_stage_moe_layers(m, p, stage);
}

/* The model's per-layer parameter counts a stage's sum needs, worked out
 * once per prediction (bench-predict: they were recounted per stage). */
struct layer_params {
	double per_layer;   /* model_params_per_layer */
	double moe_dense;   /* model_params_layer_dense_part(m, true), latent projections tp times (MoE models) */
	double expert;      /* model_params_expert (MoE models) */
	/* plan-cli hybrid: a layer of each kind, the routed experts of an
	 * MoE one left out (model_kind_model; 0 for no hybrid) */
	double kind_per_layer[MODEL_KIND_COUNT];
};

/* An MoE layer's dense part as the callers split it (tp ways): its latent
 * projections, parallel_mode "duplicated" (moe_layer.py @d98e8a6), are
 * whole on every TP rank, so they count tp times here. */
static double
moe_dense_tp_scaled(const struct model *m, const struct plan *p)
{
	return model_params_layer_dense_part(m, true) +
	       (p->tp - 1.0) * (model_params_moe_latent_proj(m) + model_dsa_indexer_params_per_layer(m));
}

static void
layer_params_init(const struct model *m, const struct plan *p, struct layer_params *k)
{
	bool moe = model_is_moe(m);

	/* DSA's indexers: DSAIndexer's linear_wq_b, linear_wk and
	 * linear_weights_proj are parallel_mode "duplicated" (dsa.py @d98e8a6),
	 * whole on every TP rank like k_norm: tp times here too. */
	k->per_layer = model_params_per_layer(m) + (p->tp - 1.0) * model_dsa_indexer_params_per_layer(m);
	k->moe_dense = moe ? moe_dense_tp_scaled(m, p) : 0.0;
	k->expert = moe ? model_params_expert(m) : 0.0;
	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
		struct model km;

		k->kind_per_layer[kind] = 0.0;
		if (!model_is_hybrid(m))
			continue;
		model_kind_model(m, kind, &km);
		k->kind_per_layer[kind] = kind == MODEL_KIND_MOE
			? moe_dense_tp_scaled(&km, p) + km.moe.shared_experts * model_params_shared_expert(&km)
			: model_params_per_layer(&km);
	}
}

/* The transformer layers' parameters of @stage, split tp ways, and the
 * routed experts' among them in @local (split etp ways by the caller). */
static double
stage_layer_params(const struct model *m, const struct plan *p, const struct layer_params *k, int stage,
		   double *local)
{
	int moe = stage_moe_layers(m, p, stage);
	double dense_layers = plan_stage_layers(p, m, stage) - moe;
	double params = dense_layers * k->per_layer;

	*local = 0.0;
	if (model_is_hybrid(m)) {
		/* plan-cli hybrid: each kind's layers at its own count. */
		params = 0.0;
		for (int kind = 0; kind < MODEL_KIND_COUNT; kind++)
			params += pipeline_stage_kind_layers(m, p, stage, kind) * k->kind_per_layer[kind];
		*local = moe * ((double)m->moe.experts / p->ep) * k->expert;
		return params;
	}
	if (moe > 0) {
		/* An MoE layer keeps its attention, router and shared experts, and
		 * experts / ep of the routed experts (DeepSpeed-MoE, Megatron-Core),
		 * each split etp ways (MoE parallel folding), the rest tp ways. */
		params += moe * (k->moe_dense + m->moe.shared_experts * model_params_shared_expert(m));
		*local = moe * ((double)m->moe.experts / p->ep) * k->expert;
	}
	return params;
}

/*
 * plan-cli hybridmtp: the parameters of a hybrid model's MTP block, the
 * routed experts' (ep and etp ways) added to @local. Megatron-Core's
 * MultiTokenPredictionLayer (multi_token_prediction.py at d98e8a6) holds
 * enorm and hnorm, eh_proj (2h -> h, no bias), its layers (a HybridStack
 * of mtp_pattern, each at its kind's parameters) and its own
 * final_layernorm: three norms; the output head and embedding are the
 * model's. Once under mtp_use_repeated_layer, else once a depth
 * (model_mtp_param_depths).
 */
static double
stage_mtp_hybrid_params(const struct model *m, const struct plan *p, const struct layer_params *k,
			double *local)
{
	double h = m->hidden, norm = model_norm_has_shift(m) ? 2.0 * h : h, one = 2.0 * h * h + 3.0 * norm;
	double d = model_mtp_param_depths(m);

	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++)
		one += model_mtp_kind_layers(m, kind) * k->kind_per_layer[kind];
	*local += d * model_mtp_kind_layers(m, MODEL_KIND_MOE) * ((double)m->moe.experts / p->ep) * k->expert /
		  plan_etp(p);
	return d * one;
}

static double
stage_params(const struct model *m, const struct plan *p, const struct layer_params *k, int stage, double *expert)
{
	double local = 0.0, params = stage_layer_params(m, p, k, stage, &local);
	/* plan-cli pipeline: the output layer sits where the last virtual
	 * stage does (rank 0 in a V); DualPipe's rank i also holds stage
	 * p - 1 - i of the other direction: 2x parameters (DeepSeek-V3
	 * report, Table 2), the embedding and head on both end ranks. */
	int head = pipeline_head_stage(p);
	bool dual = p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1;
	bool first = stage == 0 || (dual && stage == p->pp - 1), last = stage == head || (dual && stage == 0);

	if (dual) {
		double mirror_local = 0.0;

		params += stage_layer_params(m, p, k, p->pp - 1 - stage, &mirror_local);
		local += mirror_local;
	}
	local /= plan_etp(p);

	/* The first stage holds the input embedding; the last one the final
	 * norm and the output layer, or a copy of the tied embedding. */
	if (first)
		params += model_params_embedding(m);
	if (last) {
		params += model_params_head(m);
		if (m->tied_embeddings && p->pp > 1 && !(first && !dual))
			params += (double)m->vocab * m->hidden;
		if (m->mtp_layers > 0 && model_is_hybrid(m)) {
			params += stage_mtp_hybrid_params(m, p, k, &local);
			if (!m->tied_embeddings && p->pp > 1 && !first)
				params += (double)m->vocab * m->hidden;
		} else if (m->mtp_layers > 0) {
			/* Multi-token prediction (DeepSeek-V3, arXiv:2412.19437,
			 * Sec. 2.2): per module a layer of the last layer's kind,
			 * the 2h x h projection M_k and two RMSNorms; the embedding
			 * is shared, so a pipelined model's last stage keeps a copy
			 * of it (as of a tied one) unless it holds the embedding. */
			double d = model_mtp_param_depths(m), h = m->hidden;

			if (model_layer_is_moe(m, m->layers)) {
				params += d * (k->moe_dense + m->moe.shared_experts * model_params_shared_expert(m));
				local += d * ((double)m->moe.experts / p->ep) * k->expert / plan_etp(p);
			} else {
				params += d * k->per_layer;
			}
			params += d * (2.0 * h * h + 2.0 * h);
			if (!m->tied_embeddings && p->pp > 1 && !first)
				params += (double)m->vocab * h;
		}
	}
	if (expert)
		*expert = local;
	return params / p->tp + local;
}

/* Whether stage_params adds nothing to @stage's layers' parameters: no
 * embedding, no output layer or MTP modules, no DualPipe mirror. */
static bool
stage_params_plain(const struct plan *p, int stage)
{
	return stage != 0 && stage != pipeline_head_stage(p) && !(p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1);
}

/* stage_params of the first ESTIMATE_MAX_STAGES stages, worked out once a
 * prediction for the tail, the memory and the host's model (bench-predict). */
struct stage_params_table {
	double params[ESTIMATE_MAX_STAGES];
	double expert[ESTIMATE_MAX_STAGES];
};

/* @t for @p's stages: a plain stage after a plain one with as many layers
 * and MoE layers has its parameters (the same sums of the same terms). */
static void
stage_params_fill(const struct model *m, const struct plan *p, const struct layer_params *k,
		  struct stage_params_table *t)
{
	int prev_layers = -1, prev_moe = -1;
	bool prev_plain = false;

	for (int s = 0; s < p->pp && s < ESTIMATE_MAX_STAGES; s++) {
		int layers = plan_stage_layers(p, m, s), moe = stage_moe_layers(m, p, s);
		bool plain = stage_params_plain(p, s);

		if (plain && prev_plain && layers == prev_layers && moe == prev_moe) {
			t->params[s] = t->params[s - 1];
			t->expert[s] = t->expert[s - 1];
		} else {
			t->params[s] = stage_params(m, p, k, s, &t->expert[s]);
		}
		prev_layers = layers;
		prev_moe = moe;
		prev_plain = plain;
	}
}

/* stage_params of @stage: from @t where it holds it. */
static double
stage_params_of(const struct model *m, const struct plan *p, const struct layer_params *k,
		const struct stage_params_table *t, int stage, double *expert)
{
	if (stage < ESTIMATE_MAX_STAGES) {
		*expert = t->expert[stage];
		return t->params[stage];
	}
	return stage_params(m, p, k, stage, expert);
}

double
estimate_stage_params(const struct model *m, const struct plan *p, int stage, double *expert)
{
	struct layer_params k;

	layer_params_init(m, p, &k);
	return stage_params(m, p, &k, stage, expert);
}

/* Everything about one layer and one micro-batch that does not depend on the stage. */
struct layer_costs {
	/* Indexed by the recompute mode (stages may differ). */
	struct compute_layer cls[3];
	struct layer_params lp;            /* the model's per-layer parameter counts */
	struct compute_layer cl_moes[3];   /* an MoE layer (when the model has them) */
	struct ep_layer_comm eps[3];
	struct ep_layer_fixed efs[3];      /* an MoE layer's router and host synchronisation */
	bool moe_recomputed[3];            /* plan_recomputes_moe_layer in that mode */
	bool moe_tp_in_dispatcher;         /* ep_dispatcher_carries_tp: an MoE layer's MLP has no TP pair */
	struct tp_layer_comm tcs[3];
	struct cp_layer_comm cps[3];
	struct compute_ends ce;
	double mtp_proj_s;                 /* one MTP module's 2h -> h projection, forward */
	const struct cluster *c;           /* past ESTIMATE_MAX_STAGES the exchanges are priced */
	const struct plan_layout *lay;     /* stage by stage (stage_work) */
	const struct compressor *cmp;      /* NULL when nothing is compressed */
	bool tp, pp;                       /* where it applies */
	int from_layer;
	struct compress_tp_site site;
	struct compress_pp_boundary bnd;
	const struct framework *fw;        /* for the memory: NULL, the built-in framework */
	int tp_degree;                     /* the plan's tp */
	double pace;                       /* gpu_pace_factor: the slowest GPU's pace */
	/* plan-cli bf16ends: the costs of a layer that runs in bf16 in an
	 * fp8 or fp4 plan (its first and last layers), or NULL. Set after
	 * build_layer_costs, which clears it. */
	const struct layer_costs *bf16;
	/* plan-cli hybrid: a hybrid model's layers are priced kind by kind,
	 * each at the costs of its kind model (model_kind_model); NULL where
	 * the model has no layer of that kind, or is no hybrid. Set after
	 * build_layer_costs, which clears them. */
	const struct layer_costs *kinds[MODEL_KIND_COUNT];
	const struct model *kind_models[MODEL_KIND_COUNT];
	/* Last (layer_costs_clear): the uncompressed stage exchanges of one
	 * micro-batch, of the plan's stages only. */
	double p2p_s[ESTIMATE_MAX_STAGES];
	double p2p_bytes[ESTIMATE_MAX_STAGES];
};

/* Zero @lc for a plan of @pp stages: the exchanges of stages beyond them
 * are never read, and were two thirds of the bytes (bench-predict). */
static void
layer_costs_clear(struct layer_costs *lc, int pp)
{
	size_t n = (size_t)(pp < ESTIMATE_MAX_STAGES ? pp : ESTIMATE_MAX_STAGES);

	memset(lc, 0, offsetof(struct layer_costs, p2p_s));
	memset(lc->p2p_s, 0, n * sizeof(lc->p2p_s[0]));
	memset(lc->p2p_bytes, 0, n * sizeof(lc->p2p_bytes[0]));
}

/* One micro-batch's work on the GPU of @stage, split by kind. */
struct stage_work {
	double compute, recompute, tp, pp, compression, ep, cp;
	double pp_hidden;    /* of the exchanges, what hides behind the chunks' compute (pp_p2p_overlap) */
	double moe_fixed;    /* MoE layers' router work and host synchronisations */
	/* The MoE layers' fixed costs by kind, wherever they are counted
	 * (issue 25: lines of their own): the router's GEMM (compute) and
	 * kernels (moe_fixed), the token permutations (compute), the
	 * dropless host synchronisation (moe_fixed). */
	double moe_router, moe_permute, moe_sync;
	double attention, other; /* of compute + recompute: attention cores, element-wise kernels */
	double bwd;          /* backward compute alone (the DP overlap window: stage_tail) */
	double cp_bwd;       /* of cp, the backward's: its waits lengthen the backward */
	double wgrad;        /* the weight-gradient GEMMs in bwd (zero-bubble schedules defer them) */
	double tp_bytes, pp_bytes;
	double ep_bytes;     /* what the MoE layers' EP collectives send (ep_layer_comm) */
	int compressed_layers;
	double extra_params; /* AE parameters on this GPU */
	double ef_elements;  /* activation-sized error-feedback buffers */
};

/* The attention cores of one layer and micro-batch: forward, backward,
 * and what recomputation repeats (all of the forward, or, selective, the
 * attention core alone: Korthikanti et al. Sec. 4.2). */
static double
layer_attention(const struct compute_layer *cl, int recompute)
{
	return cl->attn_fwd_s + cl->attn_bwd_s + (recompute == PLAN_RECOMPUTE_NONE ? 0.0 :
		recompute == PLAN_RECOMPUTE_FULL ? cl->attn_fwd_s : fmin(cl->attn_fwd_s, cl->recompute_s));
}

/* Its element-wise kernels: forward, twice that backward, and the
 * forward's again when fully recomputed (selective recomputation's
 * softmax and dropout count with the attention). */
static double
layer_other(const struct compute_layer *cl, int recompute)
{
	return (recompute == PLAN_RECOMPUTE_FULL ? 4.0 : 3.0) * cl->fwd_mem_s +
	       cl->moe_permute_bwd_s - 2.0 * cl->moe_permute_s + /* where not twice the forward */
	       (recompute == PLAN_RECOMPUTE_SELECTIVE ? fmax(0.0, cl->recompute_s - cl->attn_fwd_s) : 0.0) +
	       cl->main_grad_s + /* plan-cli hopper: fp32 main_grad traffic */
	       cl->norm_dweight_s; /* compiled norms' dweight reductions */
}

/* The first stage's embedding and the last one's logits and loss, with
 * their TP collectives, in the share of the micro-batches the stage runs
 * them for (pipeline_end_share: half each on DualPipe's end ranks). */
static void
stage_ends(const struct plan *p, const struct layer_costs *lc, int stage, struct stage_work *w)
{
	const struct tp_layer_comm *tc = &lc->tcs[plan_stage_recompute(p, stage)];
	double ar_bytes = p->tp > 1 ? 2.0 * (p->tp - 1) / p->tp * tc->bytes : 0.0;
	double e = pipeline_end_share(p, stage, false), h = pipeline_end_share(p, stage, true);

	if (e > 0.0) {
		w->compute += e * (lc->ce.embed_fwd_s + lc->ce.embed_bwd_s);
		w->other += e * (lc->ce.embed_fwd_s + lc->ce.embed_bwd_s);
		w->bwd += e * lc->ce.embed_bwd_s;
		/* Vocab-parallel embedding: one all-reduce of b*s*h in the forward
		 * (Shoeybi et al. 2019, Sec. 3; Megatron's VocabParallelEmbedding). */
		w->tp += e * tc->collective_s;
		w->tp_bytes += e * ar_bytes;
	}
	if (h > 0.0) {
		w->compute += h * (lc->ce.head_fwd_s + lc->ce.head_bwd_s);
		w->other += h * lc->ce.head_mem_s;
		w->bwd += h * lc->ce.head_bwd_s;
		/* The vocab-parallel output layer's input gradient is all-reduced
		 * in the backward (the f operator before the logits). With
		 * sequence parallelism it is a ColumnParallelLinear that gathers
		 * its input again for the weight gradient (megatron/core/models/
		 * gpt/gpt_model.py output_layer; tensor_par.c). */
		w->tp += h * (tc->collective_s + (tc->regathers > 0 ? tc->regather16_s : 0.0));
		w->tp_bytes += h * (ar_bytes + (tc->regathers > 0 ? 0.5 * ar_bytes : 0.0));
	}
}

/* Layers of the partial stages of a resolved plan (plan_resolve_recompute)
 * that recompute in full; 0 on every other stage. */
static int
stage_partial_layers(const struct plan *p, int stage)
{
	return p->custom_recompute_layers ? p->stage_recompute_layers[stage] : 0;
}

struct prefix_arg {
	const struct model *m;
	int from;   /* the TP compression threshold */
	int kind;   /* 0: MoE layers, 1: above @from, 2: both */
};

static bool
prefix_pred(int layer, const void *arg)
{
	const struct prefix_arg *a = arg;
	bool moe = model_is_moe(a->m) && model_layer_is_moe(a->m, layer);

	return a->kind == 0 ? moe : a->kind == 1 ? layer > a->from : moe && layer > a->from;
}

/* Of the @n layers of @stage that recompute in full (pipeline_count_prefix_layers:
 * the first of each chunk), those that are MoE layers, those above the TP
 * compression threshold @from and the MoE layers among those. */
static void
stage_prefix_layers(const struct model *m, const struct plan *p, int stage, int n, int from, int *moe,
		    int *compressed, int *compressed_moe)
{
	struct prefix_arg a = { m, from, 0 };

	*moe = pipeline_count_prefix_layers(m, p, stage, n, prefix_pred, &a);
	a.kind = 1;
	*compressed = pipeline_count_prefix_layers(m, p, stage, n, prefix_pred, &a);
	a.kind = 2;
	*compressed_moe = pipeline_count_prefix_layers(m, p, stage, n, prefix_pred, &a);
}

/* @dense and @moe layers of recompute mode @r, with @layers their sum. */
static void
stage_add_layers(const struct layer_costs *lc, int r, double dense, double moe, struct stage_work *w)
{
	const struct compute_layer *cl = &lc->cls[r], *cl_moe = &lc->cl_moes[r];
	const struct tp_layer_comm *tc = &lc->tcs[r];
	const struct ep_layer_comm *ep = &lc->eps[r];
	double layers = dense + moe;
	/* A layer's pair (or all-reduce): its gather in gather_bytes (fp8: tensor_par.c). */
	double frac = lc->tp_degree > 1 ? (lc->tp_degree - 1.0) / lc->tp_degree : 0.0;
	double ar_bytes = frac * (tc->bytes + tc->gather_bytes);
	double passes = r == PLAN_RECOMPUTE_FULL ? 3.0 : 2.0; /* fwd, bwd, recompute */

	w->compute += dense * (cl->fwd_s + cl->bwd_s) + moe * (cl_moe->fwd_s + cl_moe->bwd_s);
	w->bwd += dense * cl->bwd_s + moe * cl_moe->bwd_s;
	/* A linear layer's dW GEMM does its forward GEMM's FLOPs (Qi et al.,
	 * ICLR 2024, Sec. 2: T_W about T_F's GEMMs). */
	w->wgrad += dense * (cl->qkv_fwd_s + cl->proj_fwd_s + cl->mlp_fwd_s + cl->main_grad_s +
			     cl->mixer_in_proj_fwd_s + cl->mixer_out_proj_fwd_s) + /* review16 */
		    moe * (cl_moe->qkv_fwd_s + cl_moe->proj_fwd_s + cl_moe->mlp_fwd_s + cl_moe->main_grad_s);
	w->recompute += dense * cl->recompute_s + moe * cl_moe->recompute_s;
	w->ep += moe * (ep->fwd_s + ep->bwd_s + ep->recompute_s);
	w->moe_fixed += moe * (lc->efs[r].fwd_s + lc->efs[r].bwd_s + lc->efs[r].recompute_s);
	if (moe > 0) {
		/* As compute_layer_time counts them: a GEMM's backward is its dX
		 * and dW GEMMs, an element-wise kernel's about twice its bytes;
		 * recomputation repeats the router where the layer's MLP is
		 * recomputed, the permutations under full recomputation only. */
		double again = lc->moe_recomputed[r] ? 1.0 : 0.0;

		w->moe_router += moe * ((3.0 + again) * cl_moe->moe_router_gemm_s + lc->efs[r].router_fwd_s +
					lc->efs[r].router_bwd_s + again * lc->efs[r].router_fwd_s);
		w->moe_permute += moe * ((r == PLAN_RECOMPUTE_FULL ? 2.0 : 1.0) * cl_moe->moe_permute_s +
					 cl_moe->moe_permute_bwd_s);
		w->moe_sync += moe * (1.0 + again) * lc->efs[r].sync_s;
		w->ep_bytes += moe * ((1.0 + again) * ep->fwd_bytes + ep->bwd_bytes);
	}
	w->attention += dense * layer_attention(cl, r) + moe * layer_attention(cl_moe, r);
	w->other += dense * layer_other(cl, r) + moe * layer_other(cl_moe, r);
	w->tp += layers * (tc->fwd_s + tc->bwd_s + tc->recompute_s) -
		 moe * (tc->regathers - tc->moe_regathers) * tc->regather_s;
	w->cp += layers * (lc->cps[r].fwd_s + lc->cps[r].bwd_s + lc->cps[r].recompute_s);
	w->cp_bwd += layers * lc->cps[r].bwd_s;
	w->tp_bytes += layers * tc->per_pass * passes * ar_bytes; /* arch: 1 a pass in a parallel block */
	w->tp_bytes += (dense * tc->regathers + moe * tc->moe_regathers) * frac * tc->gather_bytes; /* an AG */
	if (moe > 0 && lc->moe_tp_in_dispatcher) {
		/* The dispatcher's gather and reduce-scatter (the ep line: the
		 * allgather dispatcher's over TP x EP, the all-to-all one's over
		 * expert TP) are the MoE layer's sequence-parallel pair
		 * (expert_par.c ep_dispatcher_carries_tp): its MLP's pair is
		 * not counted here as well, in any pass that runs it. */
		double again = lc->moe_recomputed[r] ? 1.0 : 0.0;

		w->tp -= moe * ((1.0 + again) * tc->mlp_fwd_s + tc->mlp_bwd_s);
		w->tp_bytes -= moe * passes * ar_bytes; /* as counted above */
	}
}

/* plan-cli hybrid: the layers of a hybrid model's @stage, kind by kind at
 * its kind model's costs, in mode @r; with --recompute-layers its first
 * @k layers (pipeline_prefix_kind_layers) in full recomputation. Under
 * DualPipe without @k the rank's mean of its two stages, as for a
 * transformer (stage_work_memo). */
static void
stage_add_kinds(const struct model *m, const struct plan *p, const struct layer_costs *lc, int stage, int r, int k,
		struct stage_work *w)
{
	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
		const struct layer_costs *kl = lc->kinds[kind];
		bool moe = kind == MODEL_KIND_MOE;
		double n, nk = 0.0;

		if (!kl)
			continue;
		if (k > 0) {
			n = pipeline_stage_kind_layers(m, p, stage, kind);
			nk = pipeline_prefix_kind_layers(m, p, stage, k, kind);
		} else {
			n = pipeline_rank_kind_layers(m, p, stage, kind);
		}
		stage_add_layers(kl, r, moe ? 0.0 : n - nk, moe ? n - nk : 0.0, w);
		if (nk > 0.0)
			stage_add_layers(kl, PLAN_RECOMPUTE_FULL, moe ? 0.0 : nk, moe ? nk : 0.0, w);
	}
}

/* @dense and @moe layers of mode @r (stage_add_layers), of which @dense16
 * and @moe16 run in bf16 at lc->bf16's costs (plan-cli bf16ends). */
static void
stage_add_mixed(const struct layer_costs *lc, int r, double dense, double moe, double dense16, double moe16,
		struct stage_work *w)
{
	if (!lc->bf16 || !(dense16 + moe16 > 0.0)) {
		stage_add_layers(lc, r, dense, moe, w);
		return;
	}
	stage_add_layers(lc, r, dense - dense16, moe - moe16, w);
	stage_add_layers(lc->bf16, r, dense16, moe16, w);
}

/*
 * DeepSeek-V3's multi-token prediction (arXiv:2412.19437, Sec. 2.2),
 * which Megatron-Core places after the decoder on the last pipeline stage
 * (megatron/core/transformer/multi_token_prediction.py): each of the D
 * modules runs one more layer of the last layer's kind with its
 * communication, the projection M_k of the normalised hidden state and
 * next token's embedding (2h -> h), and the shared output head with its
 * cross-entropy loss.
 */
static void
stage_add_mtp(const struct model *m, const struct layer_costs *lc, int r, double share, struct stage_work *w)
{
	double d = share * m->mtp_layers;
	bool moe = model_layer_is_moe(m, m->layers);

	if (model_is_hybrid(m)) {
		/* plan-cli hybridmtp: a hybrid model's depth runs mtp_pattern's
		 * layers (Megatron-Core's HybridStack of mtp_layer_pattern in
		 * MultiTokenPredictionLayer), each at its kind's costs, in the
		 * stage's mode, D times whether or not they share parameters
		 * (MultiTokenPredictionBlock.forward loops mtp_num_layers times). */
		for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
			double n = d * model_mtp_kind_layers(m, kind);

			if (n > 0.0 && lc->kinds[kind])
				stage_add_layers(lc->kinds[kind], r, kind == MODEL_KIND_MOE ? 0.0 : n,
						 kind == MODEL_KIND_MOE ? n : 0.0, w);
		}
	} else {
		stage_add_layers(lc, r, moe ? 0.0 : d, moe ? d : 0.0, w);
	}
	/* The projection's backward is its dX and dW GEMMs: twice its forward. */
	w->compute += d * (lc->ce.head_fwd_s + lc->ce.head_bwd_s + 3.0 * lc->mtp_proj_s);
	w->other += d * lc->ce.head_mem_s;
	w->bwd += d * (lc->ce.head_bwd_s + 2.0 * lc->mtp_proj_s);
}

/* The layers' part of a stage's work (stage_add_layers from zero) for
 * @dense and @moe layers of mode @r, kept for the next stage that has
 * the same: an even pipeline's stages repeat it (bench-predict). */
struct layers_memo {
	bool valid;
	int r;
	double dense, moe;
	struct stage_work w;
};

static void
stage_layers_work(const struct layer_costs *lc, int r, double dense, double moe, struct layers_memo *memo,
		  struct stage_work *w)
{
	if (memo && memo->valid && memo->r == r && memo->dense == dense && memo->moe == moe) {
		*w = memo->w;
		return;
	}
	memset(w, 0, sizeof(*w));
	stage_add_layers(lc, r, dense, moe, w);
	if (memo) {
		memo->valid = true;
		memo->r = r;
		memo->dense = dense;
		memo->moe = moe;
		memo->w = *w;
	}
}

/* The TP sites the compressor replaces on this stage (@k partially
 * recomputed layers, @nc_k and @ncm_k of them compressed and MoE):
 * their time, bytes and codec over the plain collective's. Returns the
 * compressed layers. */
static int
stage_tp_compression(const struct model *m, const struct plan *p, const struct layer_costs *lc, int stage,
		     int r, int k, int nc_k, int ncm_k, struct stage_work *w)
{
	const struct tp_layer_comm *tc = &lc->tcs[r];
	double ar_bytes = 2.0 * (p->tp - 1) / p->tp * tc->bytes;
	/* MCBench compresses the two forward all-reduces of the layers
	 * above --compress-from-layer; backward ones stay as they are. */
	double fwd_passes = r == PLAN_RECOMPUTE_FULL ? 2.0 : 1.0;
	const struct compress_tp_site *s = &lc->site;
	/* arch: sites a layer: 2, a parallel block's 1 (tensor_par.c).
	 * plan-cli review6: an MoE layer whose MLP pair its dispatcher
	 * runs (ep_dispatcher_carries_tp) keeps the attention's site
	 * only: its MLP output is reduced by the dispatcher's
	 * reduce-scatter (the allgather one's over TP x EP, the
	 * all-to-all one's over expert TP), on the ep line, which no
	 * TP compressor replaces. */
	double sites_nc, sites_k, site_passes;
	int nc, ncm = 0;

	nc = compression_layers_on_stage(m, p, stage, lc->from_layer);
	if (lc->moe_tp_in_dispatcher)
		ncm = compression_moe_layers_on_stage(m, p, stage, lc->from_layer);
	else
		ncm_k = 0;
	if (k == 0)
		nc_k = ncm_k = 0;
	sites_nc = nc * tc->per_pass - ncm;
	sites_k = nc_k * tc->per_pass - ncm_k;
	/* Recomputed layers repeat their compressed forward ones. */
	site_passes = (sites_nc - sites_k) * fwd_passes + sites_k * 2.0;
	w->tp += site_passes * (s->comm_s - tc->collective_s);
	w->tp_bytes += site_passes * (s->wire_bytes - ar_bytes);
	w->compression += site_passes * (s->encode_s + s->decode_s) + sites_nc * s->backward_s;
	w->extra_params += sites_nc * s->params;
	w->ef_elements += sites_nc * (double)p->micro_batch * p->seq_len * m->hidden;
	return nc;
}

/* The stage's pipeline exchanges, compressed from --compress-from-stage on. */
static void
stage_pp_work(const struct model *m, const struct plan *p, const struct layer_costs *lc, int stage,
	      struct stage_work *w)
{
	/* Past ESTIMATE_MAX_STAGES the exchanges are not kept: priced here. */
	if (stage < ESTIMATE_MAX_STAGES) {
		w->pp = lc->p2p_s[stage];
		w->pp_bytes = lc->p2p_bytes[stage];
	} else {
		w->pp = pipeline_stage_p2p_time(m, p, lc->c, lc->lay, stage, &w->pp_bytes);
	}
	if (lc->pp && p->pp > 1 && stage >= p->compress.from_stage) {
		w->pp = p->vpp * lc->bnd.send_s;
		w->pp_bytes = p->vpp * (lc->bnd.fwd_bytes + lc->bnd.bwd_bytes);
		w->compression += p->vpp * lc->bnd.codec_s;
		w->extra_params += p->vpp * 2.0 * lc->bnd.params;
		w->ef_elements += p->vpp * (double)p->micro_batch * p->seq_len * m->hidden;
	}
	/* plan-cli reviewpipe: Megatron-Core's interleaved schedule with
	 * overlap_p2p_comm (schedules.py forward_backward_pipelining_with_
	 * interleaving, Megatron-LM d98e8a6 l. 1752-1870: pp_post_forward
	 * starts the chunk's send_forward_recv_forward asynchronously, the
	 * backward chunk runs, and pp_pre_forward waits for it before the
	 * next forward; the backward's exchange likewise behind the next
	 * forward) hides a steady-state micro-batch's 2v exchanges behind its
	 * chunks' compute: the slot keeps what exceeds that compute, and the
	 * compute it overlaps runs overlap_slowdown times slower (NCCL's
	 * kernels beside the GEMMs, as every overlapped collective here:
	 * expert_par.c's combined_phase). Its warm-up exchanges still block
	 * (send_forward_recv_forward without overlap_p2p_comm, l. 1633-1650),
	 * so the fill and drain keep them whole: pp_hidden, what the overlap
	 * took off, counts in the stage's share again (stage_pace). */
	w->pp_hidden = 0.0;
	if (lc->fw && lc->fw->pp_p2p_overlap && p->vpp > 1 && p->pp_schedule == PLAN_PP_1F1B) {
		double comp = w->compute + w->recompute, full = w->pp;

		w->pp = fmax(0.0, full - comp) + (lc->fw->overlap_slowdown - 1.0) * fmin(full, comp);
		w->pp_hidden = full - w->pp;
	}
}

/*
 * A stage's layers: all in its mode, or, with --recompute-layers (Slapo's
 * checkpoint ratio, Chen et al. ASPLOS 2024), its first k layers in full
 * recomputation (one more forward each) and the rest in its mode. @memo:
 * NULL, or the layers' work of an earlier stage (stage_layers_work).
 */
static void
stage_work_memo(const struct model *m, const struct plan *p, const struct layer_costs *lc,
		int stage, struct layers_memo *memo, struct stage_work *w)
{
	int r = plan_stage_recompute(p, stage), k = stage_partial_layers(p, stage);
	double layers = plan_stage_layers(p, m, stage);
	int moe = stage_moe_layers(m, p, stage), moe_k = 0, nc_k = 0, ncm_k = 0;
	double dense = layers - moe;
	int nc = 0;
	/* plan-cli bf16ends: the rank's layers that run in bf16. */
	double moe16 = 0.0, all16 = lc->bf16 ? pipeline_rank_bf16_layers(m, p, stage, &moe16) : 0.0;

	if (model_is_hybrid(m)) {
		memset(w, 0, sizeof(*w));
		stage_add_kinds(m, p, lc, stage, r, k, w);
	} else if (k > 0) {
		int moe16_k = 0, all16_k = 0;

		/* This path runs the stage's own layers (under DualPipe too, as
		 * dense and moe above): its own bf16 ones. */
		if (all16 > 0.0 || p->pp_schedule == PLAN_PP_DUALPIPE) {
			int own_moe16 = 0;

			all16 = lc->bf16 ? pipeline_stage_bf16_layers(m, p, stage, &own_moe16) : 0.0;
			moe16 = own_moe16;
			all16_k = all16 > 0.0 ? pipeline_prefix_bf16_layers(m, p, stage, k, &moe16_k) : 0;
		}

		memset(w, 0, sizeof(*w));
		stage_prefix_layers(m, p, stage, k, lc->from_layer, &moe_k, &nc_k, &ncm_k);
		stage_add_mixed(lc, r, dense - (k - moe_k), moe - moe_k, (all16 - moe16) - (all16_k - moe16_k),
				moe16 - moe16_k, w);
		stage_add_mixed(lc, PLAN_RECOMPUTE_FULL, k - moe_k, moe_k, all16_k - moe16_k, moe16_k, w);
	} else if (all16 > 0.0) {
		/* Not memoised: the layers in bf16 are the ends' stages'. */
		double rmoe = pipeline_rank_moe_layers(m, p, stage);

		memset(w, 0, sizeof(*w));
		stage_add_mixed(lc, r, pipeline_rank_layers(p, m, stage) - rmoe, rmoe, all16 - moe16, moe16, w);
	} else if (p->pp_schedule == PLAN_PP_DUALPIPE) {
		/* plan-cli pipe2: half the micro-batches through each of the
		 * rank's two stages (pipeline_rank_layers), its ends and its
		 * exchanges its own. */
		double rmoe = pipeline_rank_moe_layers(m, p, stage);

		stage_layers_work(lc, r, pipeline_rank_layers(p, m, stage) - rmoe, rmoe, memo, w);
	} else {
		stage_layers_work(lc, r, dense, moe, memo, w);
	}
	if (lc->tp && p->tp > 1)
		nc = stage_tp_compression(m, p, lc, stage, r, k, nc_k, ncm_k, w);
	w->compressed_layers = nc;
	stage_pp_work(m, p, lc, stage, w);
	stage_ends(p, lc, stage, w);
	/* plan-cli reviewpp: the modules sit with the output layer
	 * (stage_params' "last"): rank 0 in a V, both end ranks for half
	 * the micro-batches under DualPipe. */
	if (m->mtp_layers > 0 && pipeline_end_share(p, stage, true) > 0.0)
		stage_add_mtp(m, lc, r, pipeline_end_share(p, stage, true), w);
	if (!lc->cmp || lc->cmp->error_feedback == COMPRESSOR_EF_NONE)
		w->ef_elements = 0.0;
}

static void
stage_work(const struct model *m, const struct plan *p, const struct layer_costs *lc,
	   int stage, struct stage_work *w)
{
	stage_work_memo(m, p, lc, stage, NULL, w);
}

/* @stage's work: from @works where kept (the first ESTIMATE_MAX_STAGES),
 * else worked out into @spare; read in place, not copied (bench-predict). */
static const struct stage_work *
stage_work_at(const struct model *m, const struct plan *p, const struct layer_costs *lc,
	      const struct stage_work *works, int stage, struct stage_work *spare)
{
	if (stage < ESTIMATE_MAX_STAGES)
		return &works[stage];
	stage_work(m, p, lc, stage, spare);
	return spare;
}

static double
stage_total(const struct stage_work *w)
{
	return w->compute + w->recompute + w->tp + w->pp + w->compression + w->ep + w->cp + w->moe_fixed;
}

/*
 * Error-feedback memory of a stage holding @params parameters: a buffer
 * of its own gradients (DP) and of its compressed activations (TP, PP).
 * The stage's memory and the MILP's memory coefficients both come from
 * here, so that they cannot disagree.
 */
static double
stage_ef_bytes(const struct plan *p, const struct compressor *cmp, double params,
	       const struct stage_work *w)
{
	double dp_ef = p->compress.dp && p->dp > 1 ? compressor_ef_bytes(cmp, params) : 0.0;

	return dp_ef + compressor_ef_bytes(cmp, w->ef_elements);
}

static void
fill_memory(const struct model *m, const struct plan *p, const struct cluster *c,
	    const struct layer_costs *lc, const struct stage_work *works, const struct stage_params_table *sp,
	    struct estimate *out)
{
	/* Every stage's peak; beyond ESTIMATE_MAX_STAGES stages (uniform
	 * plans only: plan_validate) the first (most in flight) and the last
	 * (logits), where uniform stages peak. */
	bool all = p->pp <= ESTIMATE_MAX_STAGES;
	int n = all ? p->pp : 2;
	/* A CP rank stores s/cp tokens' activations; each stage its own
	 * recompute mode (ps.recompute, set per stage). */
	struct plan ps = *p;
	struct memory_mode mode = { .recompute = -1 };

	plan_make_cp_local(&ps);
	for (int i = 0; i < n; i++) {
		int stage = all ? i : (i == 0 ? 0 : p->pp - 1);
		struct stage_work spare;
		const struct stage_work *w = stage_work_at(m, p, lc, works, stage, &spare);
		struct memory_use u;
		double expert, params;

		ps.recompute = plan_stage_recompute(p, stage);
		params = stage_params_of(m, p, &lc->lp, sp, stage, &expert) + w->extra_params;
		if (ps.recompute != mode.recompute)
			memory_mode_init(m, &ps, c, lc->fw, &mode);
		memory_stage_in_mode(m, &ps, c, lc->fw, &mode, stage, params, expert, &u);
		if (lc->cmp) {
			u.compression = stage_ef_bytes(p, lc->cmp, params, w);
			u.total += u.compression;
		}
		out->stage_memory[stage < ESTIMATE_MAX_STAGES ? stage : ESTIMATE_MAX_STAGES - 1] = u.total;
		if (i == 0 || u.total > out->memory.total) {
			out->memory = u;
			out->details.memory_stage = stage;
		}
	}
	out->memory_capacity_bytes = c->gpu.memory_bytes;
	out->fits = out->memory.total <= c->gpu.memory_bytes;
}

/* fp8 needs a GPU with fp8 tensor cores, fp4 Blackwell's fp4 ones and no
 * fp8 recipe, fp8 gathers fp8 and sharded weights; TP overlap, sequence
 * parallelism. */
bool
estimate_check_precision(const struct plan *p, const struct cluster *c, const struct framework *fw,
			 struct plan_error *err)
{
	if (p->precision == PLAN_PRECISION_FP8 && !(c->gpu.peak_flops_fp8 > 0))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "precision fp8 needs a GPU with fp8 tensor cores; '%s' has none "
				      "(its peak_flops_fp8 is 0)", c->gpu.name);
	/* plan-cli muon: LayerWiseDistributedOptimizer shards the optimizer
	 * states whole matrices a DP rank and keeps every gradient (its
	 * docstring: "keep all megatron distributed-optimizer related
	 * options OFF"): ZeRO stage 1, without MiCS. */
	if (fw && fw->optimizer == FRAMEWORK_OPTIMIZER_MUON && (p->zero != 1 || p->mics_group > 0))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "framework '%s' steps with Muon (optimizer muon), which Megatron-Core shards "
				      "as ZeRO stage 1 (LayerWiseDistributedOptimizer): use --zero 1 without "
				      "--mics-group (got --zero %d, --mics-group %d)", fw->name, p->zero, p->mics_group);
	if (p->fp8_gather && (p->precision != PLAN_PRECISION_FP8 || (p->zero < 3 && p->mics_group == 0)))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "fp8 all-gathers need precision fp8 and ZeRO-3 or MiCS (precision %s, ZeRO %d)",
				      plan_precision_names[p->precision], p->zero);
	if (p->precision == PLAN_PRECISION_FP4 && p->fp8_recipe != PLAN_FP8_FRAMEWORK)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "fp8 recipe %s applies to precision fp8; precision fp4 runs NVFP4, its only recipe "
				      "(drop --fp8-recipe, or use --precision fp8)", plan_fp8_recipe_names[p->fp8_recipe]);
	/* A 16-bit plan has no fp8 tensor for a recipe to scale: refused, as
	 * --fp8-gather and --bf16-first-layers are, not silently ignored
	 * (issue 25, twenty-third session). */
	if (!plan_low_precision(p) && p->fp8_recipe != PLAN_FP8_FRAMEWORK)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "fp8 recipe %s applies to precision fp8; precision %s has no fp8 tensors to "
				      "scale (drop --fp8-recipe, or use --precision fp8)",
				      plan_fp8_recipe_names[p->fp8_recipe], plan_precision_names[p->precision]);
	if (plan_low_precision(p) && !fp8_recipe_check(fp8_recipe_resolve(p, fw), &c->gpu, err))
		return false;
	/* plan-cli bf16ends: "Delayed scaling does not support first / last
	 * layer in BF16" (megatron/core/fp8_utils.py, get_fp8_context: the
	 * amax reduction runs per fp8_autocast region). */
	if (plan_has_bf16_layers(p) && fp8_recipe_resolve(p, fw) == PLAN_FP8_DELAYED)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "bf16 first or last layers do not go with delayed scaling (Megatron-Core refuses "
				      "them): give --fp8-recipe current, blockwise or mxfp8");
	if (!compute_attention_kernel_check(c, p, fw, err))
		return false;
	if (p->tp_overlap && (!p->sequence_parallel || p->tp < 2))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "TP overlap needs sequence parallelism and tp of 2 or more (tp %d, "
				      "sequence parallel %s)", p->tp, p->sequence_parallel ? "on" : "off");
	return true;
}

/*
 * Stages that recompute some of their layers in full (--recompute-method
 * block, --recompute-layers) under ZeRO-3: the gathers are timed per
 * layer, forward and backward, whatever the layer recomputes, which holds
 * where the framework does not gather a layer's weights again to
 * recompute it (recompute_regather false: Megatron-Core's FSDP, whose
 * checkpointed forward runs on the weights its backward gathers,
 * megatron/core/distributed/fsdp, core_v0.14.0; frameworks/
 * megatron-fsdp.yaml). A framework that does (DeepSpeed 2021) would gather
 * again for some layers only, which data_par.c's per-stage regather does
 * not time: refused.
 */
static bool
check_zero3_partial_recompute(const struct model *m, const struct plan *p, const struct framework *fw,
			      struct plan_error *err)
{
	if (p->zero < 3 || !fw || !fw->recompute_regather || p->pp > PLAN_MAX_STAGES)
		return true;
	for (int s = 0; s < p->pp; s++) {
		int k = plan_stage_recompute_layers(p, m, s), layers = plan_stage_layers(p, m, s);

		if (k > 0 && k < layers)
			return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
					      "stage %d recomputes %d of its %d layers under ZeRO stage 3 with framework "
					      "'%s', which gathers the weights again to recompute (recompute_regather): "
					      "not modelled; use --recompute full or none", s, k, layers, fw->name);
	}
	return true;
}

/* plan-cli muon: Newton-Schulz is priced for layers of attention and an
 * MLP or MoE (muon.c); a hybrid model's layer kinds (Mamba, Gated
 * DeltaNet, attention or MLP alone) are not listed. */
static bool
check_muon(const struct model *m, const struct framework *fw, struct plan_error *err)
{
	if (fw && fw->optimizer == FRAMEWORK_OPTIMIZER_MUON &&
	    (model_is_hybrid(m) || model_has_part(m, MODEL_PART_MAMBA) || model_has_part(m, MODEL_PART_GDN)))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "framework '%s' steps with Muon (optimizer muon): the Newton-Schulz cost of "
				      "the layers of hybrid model '%s' (Mamba, Gated DeltaNet, a layer pattern) is "
				      "not modelled", fw->name, m->name);
	return true;
}

/* plan-cli moeovl: the overlaps as modelled need @fw's dispatcher to
 * send all-to-alls. Megatron-Core refuses its combined 1F1B with the
 * allgather dispatcher (transformer_config.py l. 3016-3019, d98e8a6:
 * alltoall or flex only), which has no all-to-all to hide; Lancet's
 * chunked overlap (Jiang et al., MLSys 2024) is priced on the all-to-all
 * dispatcher's collectives (expert_par.c ep_layer_comm), not on DeepEP's
 * or HybridEP's kernels, whose SMs and overlap Megatron-Core schedules
 * in the combined 1F1B instead. */
bool
estimate_check_moe_overlap(const struct plan *p, const struct framework *fw, struct plan_error *err)
{
	int d = fw ? fw->moe_dispatcher : FRAMEWORK_MOE_DISPATCH_ALLTOALL;

	if (p->moe_overlap == PLAN_MOE_OVERLAP_NONE || d == FRAMEWORK_MOE_DISPATCH_ALLTOALL)
		return true;
	if (d == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK || p->moe_overlap == PLAN_MOE_OVERLAP_LANCET)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "--moe-overlap %s is not modelled with framework '%s', whose token dispatcher is "
				      "%s (moe_dispatcher): %s", plan_moe_overlap_names[p->moe_overlap], fw->name,
				      framework_moe_dispatcher_names[d],
				      d == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK ?
					      "it sends no all-to-all to overlap (Megatron-Core: alltoall or flex only)" :
					      "Lancet is priced on the alltoall dispatcher: use combined-1f1b or none");
	return true;
}

static bool
check_compression(const struct model *m, const struct plan *p, const struct compressor *cmp,
		  struct plan_error *err)
{
	const struct plan_compression *pc = &p->compress;

	if ((pc->tp || pc->pp || pc->dp) && !cmp)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "compression of %s%s%s needs a compressor (--compressor)",
				      pc->tp ? "tp " : "", pc->pp ? "pp " : "", pc->dp ? "dp" : "");
	if (cmp && pc->dp && cmp->method == COMPRESSOR_AUTOENCODER)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "compressor '%s' is an autoencoder of activations; it cannot compress "
				      "DP gradients (use topk, randk, quantize or powersgd)", cmp->name);
	if (cmp && pc->dp && pc->dp_scheme == COMPRESS_DP_ALLREDUCE && !compressor_allreducible(cmp))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "compressor '%s' (%s) cannot be summed: use --dp-compress-scheme "
				      "twoway or allgather", cmp->name, compressor_method_names[cmp->method]);
	if (cmp && pc->dp && model_is_moe(m))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "DP gradient compression of an MoE model ('%s') is not modelled", m->name);
	if (cmp && pc->dp && p->zero > 0)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "DP gradient compression is modelled with ZeRO stage 0 (got --zero %d)",
				      p->zero);
	if (cmp && pc->tp && p->tp == 1 && !pc->pp && !pc->dp)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "TP compression needs tensor parallelism (tp %d)", p->tp);
	return true;
}

/* What a stage does after the pipeline drains: DP synchronisation (what
 * the backward of its last micro-batch does not hide), DP compression's
 * codec, and the optimizer step over its shard. */
struct stage_tail {
	struct dp_comm dc;
	struct compress_dp cdp;
	double window, dp_exposed, codec_s, optimizer_s, total;
	double sp_grad_s, sp_grad_bytes; /* normrev: stage_tail_sp_grads */
};

/* One estimate in progress: its inputs, the per-layer costs, and what
 * each step finds for the next. */
struct core {
	const struct model *m;
	const struct cluster *c;
	const struct plan *p;
	const struct compressor *cmp;
	enum coll_algo algo;
	const struct framework *fw;
	struct plan_layout lay;
	struct layer_costs lc;
	struct layer_costs lc16;                     /* lc.bf16's, when the plan has bf16 layers */
	struct model km[MODEL_KIND_COUNT];           /* plan-cli hybrid: the kind models */
	struct layer_costs lck[MODEL_KIND_COUNT];    /* and their costs (lc.kinds) */
	double mb;                                   /* micro-batches per iteration */
	struct stage_work works[ESTIMATE_MAX_STAGES]; /* the first stages' work */
	struct stage_params_table sp;                /* the first stages' parameters */
	struct stage_work bn;                        /* the bottleneck stage's work */
	struct stage_tail tail;                      /* the stage that ends the iteration */
	double slot, z3_exposed;   /* z3_exposed: per micro-batch, the slowdown included */
	double mb_overhead;        /* the framework's fixed cost per micro-batch */
	double bubble;             /* pipeline fill and drain */
	int bn_stage;              /* the bottleneck stage */
	double launch_mb, launch_iter; /* GPU idle waiting for launches (core_host) */
	double launch_mb_experts;  /* of launch_mb, what the experts' GEMM launches add (core_host) */
	double fixed_iter;         /* per-iteration fixed costs of the host model (core_host) */
};

static double stage_launch_s(const struct core *x, int stage, double gpu_s, bool experts);
static double stage_mb_syncs(const struct core *x, int stage);

/* What ZeRO-3 / FSDP leaves exposed of @stage's layer-by-layer gathers
 * per micro-batch (@dc's), the slowdown of overlapped compute included
 * (pp is 1 then); per layer, the forward and the backward with their TP
 * collectives (on other links than the gathers) and their waits for
 * context parallelism's exchanges: a layer lasts that long, and a slower
 * attention kernel that hides more of the ring must not also hide more
 * of the gathers (issue 25, PLAN_TEST_SEED 261 and 363 of
 * test_slower_kernels_never_faster). */
static double
stage_z3_s(const struct core *x, int stage, const struct stage_work *w, const struct dp_comm *dc)
{
	double layers = plan_stage_layers(x->p, x->m, stage), fwd, bwd, slow;

	if (x->p->zero < 3 || layers <= 0.0) /* ZeRO-3 is pp 1: never a stage of no layer */
		return 0.0;
	fwd = (w->compute - w->bwd + 0.5 * w->tp + w->cp - w->cp_bwd) / layers;
	bwd = (w->bwd + 0.5 * w->tp + w->cp_bwd) / layers;
	return dp_zero3_exposed(dc, x->p, x->fw, layers, fwd, bwd, w->recompute / layers, &slow) + slow;
}

/* The DP synchronisation and optimizer step of @stage after the pipeline
 * (the cluster, layout, compressor and the slowest GPU's pace from the
 * layer costs). */
/* The optimizer steps this GPU's shard: dense states over the DP group
 * (or the MiCS group), expert states over the expert-DP ranks that hold
 * the same experts. plan-cli dsz3host: and the ZeRO-3 step's own passes
 * (data_par.c dp_zero3_step_bytes: DeepSpeed's stage3.py); plan-cli
 * simumoe: and below ZeRO-3 the framework's own step (dp_step_bytes) and
 * the passes over the whole gradient buffer before its reduction
 * (dp_grad_prereduce_bytes: Megatron-Core's DDP). */
static double
stage_optimizer_s(const struct core *x, int stage, double params, double expert)
{
	const struct plan *p = x->p;
	const struct framework *fw = x->fw;
	const struct cluster *c = x->lc.c;
	double shard = p->zero >= 1 ? (p->mics_group > 0 ? p->mics_group : (double)p->dp * p->cp) : 1;
	double eshard = p->zero >= 1 ? plan_edp(p) : 1;
	double owned = (params - expert) / shard + expert / eshard;
	double fp8 = plan_low_precision(p) ? fp8_recipe_step_bytes(p, fw, &c->gpu, params, owned) : 0.0;
	/* plan-cli muon: and the Newton-Schulz iterations of the matrices
	 * this rank owns (muon.c), in the same optimizer term. */
	double ns = fw && fw->optimizer == FRAMEWORK_OPTIMIZER_MUON ? muon_stage_ns_time(x->m, p, c, stage) : 0.0;

	return x->lc.pace *
	       (compute_optimizer_time(c, owned, p->zero >= 2 ? owned : params,
				       fp8 + dp_zero3_step_bytes(p, fw, owned) + dp_step_bytes(p, fw, owned) +
					       dp_grad_prereduce_bytes(p, fw, params)) +
		ns);
}

/* The DP reduction's traffic, through the compressor where the plan
 * compresses it: the codec's time at the slowest GPU's pace (a CPU
 * codec is not a GPU's). ZeRO-3 gathers the dense part of each layer (an
 * MoE layer's attention, norms and router) layer by layer; @stage's ends
 * (its embedding, its output layer) are told apart for a framework that
 * gathers the linear weights as fp8 or NVFP4 copies. */
static void
stage_tail_dp(const struct core *x, int stage, double params, double expert, double layers, struct stage_tail *t)
{
	const struct model *m = x->m;
	const struct plan *p = x->p;
	const struct layer_costs *lc = &x->lc;
	double expert16, ends = memory_stage_ends_params(m, p, stage) / p->tp;
	/* A stage of no layer (--stage-layers 0,...) reduces its ends alone. */
	double per_layer = layers > 0 ? (params - expert) / layers : 0.0;

	/* plan-cli bf16ends: layers in bf16 have no fp8 copy to gather,
	 * their routed experts neither. */
	ends += memory_stage_bf16_params(m, p, stage, &expert16);
	dp_comm_time_ends(m, p, lc->c, lc->lay, x->fw, params, expert, per_layer, layers, ends, expert16, x->algo,
			  &t->dc);
	if (lc->cmp && p->compress.dp && p->dp > 1) {
		compression_dp(lc->cmp, m, p, lc->c, lc->lay, params, layers, p->compress.dp_scheme,
			       p->compress.dp_on_cpu, &t->cdp);
		t->dc.reduce_s = t->cdp.comm_s;
		t->dc.bytes = t->cdp.wire_bytes;
		t->codec_s = t->cdp.codec_s * (p->compress.dp_on_cpu ? 1.0 : lc->pace);
	}
}

/*
 * normrev: with sequence parallelism each TP rank runs s/t of the tokens
 * through a weight duplicated over TP, so its gradient is a partial sum,
 * which finalize_model_grads all-reduces over the TP group once the
 * backward and the DP reduction are done, before the optimizer step
 * (megatron/core/distributed/finalize_model_grads.py,
 * _allreduce_non_tensor_model_parallel_grads: every parameter with the
 * sequence_parallel attribute, coalesced into one all_reduce; Megatron-LM
 * d98e8a6): nothing overlaps it. Latent MoE's fc1_latent_proj and
 * fc2_latent_proj are TELinear with parallel_mode "duplicated", whose
 * parameters get sequence_parallel = config.sequence_parallel
 * (extensions/transformer_engine.py, TELinear.__init__; moe_layer.py):
 * model_params_moe_latent_proj() a MoE layer, of every MoE layer the rank
 * holds, in the main-grad dtype (the framework's reduce_bytes). The norms'
 * and the router's weights join that all-reduce but are small (2 h and
 * E h a layer) and not priced. Without SP every rank sees every token and
 * the duplicated gradients agree: no all-reduce.
 */
static void
stage_tail_sp_grads(const struct core *x, int stage, struct stage_tail *t)
{
	const struct model *m = x->m;
	const struct plan *p = x->p;
	double layers, bytes;

	if (!p->sequence_parallel || p->tp < 2 || m->moe.latent_size <= 0)
		return;
	layers = pipeline_stage_moe_layers(m, p, stage);
	if (p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1) /* DualPipe's rank holds its mirror's too */
		layers += pipeline_stage_moe_layers(m, p, p->pp - 1 - stage);
	bytes = layers * model_params_moe_latent_proj(m) * x->fw->reduce_bytes;
	if (bytes <= 0.0)
		return;
	t->sp_grad_s = collective_time(x->c, &x->lay.tp, COLL_ALLREDUCE, x->algo, bytes);
	t->sp_grad_bytes = 2.0 * (p->tp - 1) / p->tp * bytes;
}

static void
stage_tail(const struct core *x, int stage, const struct stage_work *w, struct stage_tail *t)
{
	const struct model *m = x->m;
	const struct plan *p = x->p;
	const struct framework *fw = x->fw;
	/* DualPipe's rank reduces both its stages' gradients (pipe2). */
	double expert, layers = pipeline_rank_held_layers(p, m, stage);
	double params = stage_params_of(m, p, &x->lc.lp, &x->sp, stage, &expert) + w->extra_params;

	memset(t, 0, sizeof(*t));
	stage_tail_dp(x, stage, params, expert, layers, t);
	/* Gradient reduction overlaps the backward of the last micro-batch,
	 * except for the last bucket (PyTorch DDP / Megatron overlap-grad-reduce).
	 * The backward lasts from the end of the micro-batch's other work to
	 * the end of the micro-batch: its compute, the forward that
	 * recomputation runs again inside it (a checkpointed layer recomputes
	 * just before its own backward, while the buckets already filled are
	 * reduced: SC21 Sec. 3.5; InternEvo's and Megatron's checkpointed
	 * layers; InternEvo's own 1,024-GPU rows with and without
	 * checkpointing take the same 1.75 s, the reduction bounding both),
	 * its waits for context
	 * parallelism's exchanges (ring attention's P2P, context_par.c), for
	 * ZeRO-3's exposed gathers and reduce-scatters (MiCS's all-reduce
	 * across replicas is the reduction here; the forward's exposed
	 * gathers are counted in too, which overstates the window a little)
	 * and for the host's launches; the reduction, on its own stream,
	 * runs on through them. So the window grows no faster than the
	 * micro-batch (window = (1 - 1/L)(wall - rest), slot = wall + fixed
	 * costs: slot - window = wall/L + (1 - 1/L) rest + fixed costs grows
	 * with every input; a slower attention kernel, hiding more of the
	 * ring, or a slower collective, hiding more of the launches, leaves
	 * the backward no shorter) and cannot hide more of the reduction
	 * than the iteration gains. A window of backward compute alone was
	 * not monotone (issue 25, test_slower_kernels_never_faster with
	 * PLAN_TEST_SEED 20, 23, 49, 50, 64, 134, 190), nor one with the
	 * ring's waits but not the launches' (34, 37). */
	double gpu = stage_total(w) + stage_z3_s(x, stage, w, &t->dc);
	double wall = gpu + stage_launch_s(x, stage, gpu, true);
	double tail = 0.0, bwd = fmax(0.0, wall - (stage_total(w) - w->bwd - w->recompute - w->cp_bwd));

	if (dp_grad_reduce_overlapped(p, fw)) {
		t->window = bwd * (layers > 1.0 ? 1.0 - 1.0 / layers : 0.0);
		/* Buckets of grad_bucket elements (InternEvo's reduce_bucket_size):
		 * the first starts once it is full, the last is reduced after
		 * the backward (dp_bucket_tail()). */
		if (fw->grad_bucket > 0 && params > 0)
			tail = dp_bucket_tail(t->dc.reduce_s, bwd, fw->grad_bucket / params, &t->window);
	}
	/* The backward that hides the reduction runs slower meanwhile. */
	t->dp_exposed = dp_reduce_exposed(t->dc.reduce_s, t->window, tail, fw->overlap_slowdown) + t->dc.gather_s +
			t->dc.embed_sync_s;
	if (p->pp_schedule == PLAN_PP_DUALPIPE) {
		/* plan-cli pipe2: DualPipe's mirrored ranks sum their gradients,
		 * of the DP shard once ZeRO has reduce-scattered it. */
		double shard = p->zero >= 1 ? (p->mics_group > 0 ? p->mics_group : (double)p->dp * p->cp) : 1.0;
		double mb, ms = pipeline_mirror_grad_time(p, x->lc.c, stage, params * fw->reduce_bytes / shard, &mb);

		t->dp_exposed += ms;
		t->dc.bytes += mb;
	}
	t->optimizer_s = stage_optimizer_s(x, stage, params, expert);
	stage_tail_sp_grads(x, stage, t);
	t->total = t->dp_exposed + t->codec_s + t->optimizer_s + fw->iteration_overhead_s + t->sp_grad_s;
}

/* An MoE layer's costs in recomputation mode @r: its compute, the
 * expert all-to-alls and the fixed costs (router, split-size sync). */
static void
layer_costs_moe(const struct model *m, const struct plan *p, const struct cluster *c,
		const struct framework *fw, const struct plan_layout *lay, int r, struct layer_costs *lc)
{
	double pace = lc->pace;

	compute_layer_time(m, p, c, fw, true, &lc->cl_moes[r]);
	compute_layer_scale(&lc->cl_moes[r], pace);
	ep_layer_comm(m, p, c, fw, lay, &lc->cl_moes[r], &lc->eps[r]);
	ep_layer_fixed(m, p, c, fw, lay, &lc->efs[r]);
	/* The router's kernels run at the slowest GPU's pace. */
	lc->efs[r].router_fwd_s *= pace;
	lc->efs[r].router_bwd_s *= pace;
	lc->efs[r].fwd_s = lc->efs[r].router_fwd_s + lc->efs[r].sync_s;
	lc->efs[r].bwd_s = lc->efs[r].router_bwd_s;
	lc->moe_recomputed[r] = plan_recomputes_moe_layer(p); /* plan-cli recomp */
	lc->efs[r].recompute_s = lc->moe_recomputed[r] ? lc->efs[r].fwd_s : 0.0;
}

/* The compressor's TP site and pipeline boundary, their GPU work at
 * the slowest GPU's pace. */
static void
layer_costs_compression(const struct model *m, const struct plan *p, const struct cluster *c,
			const struct plan_layout *lay, const struct compressor *cmp, struct layer_costs *lc)
{
	double pace = lc->pace;

	lc->tp = p->compress.tp;
	lc->pp = p->compress.pp;
	lc->from_layer = plan_compress_from_layer(p, m);
	/* The codecs' GPU work runs at the slowest GPU's pace too, not
	 * their host share (Rand-K's index sampling). */
	if (lc->tp) {
		compression_tp_site(cmp, m, p, c, lay, &lc->site);
		lc->site.encode_s = lc->site.host_s + (lc->site.encode_s - lc->site.host_s) * pace;
		lc->site.decode_s *= pace;
		lc->site.backward_s *= pace;
	}
	if (lc->pp) {
		compression_pp_boundary(cmp, m, p, c, lay, &lc->bnd);
		lc->bnd.codec_s = lc->bnd.host_s + (lc->bnd.codec_s - lc->bnd.host_s) * pace;
	}
}

/* Per-layer costs of @p (for its recompute mode only when @one_mode). */
static void
build_layer_costs(const struct model *m, const struct plan *plan, const struct cluster *c,
		  const struct framework *fw, const struct plan_layout *lay, const struct compressor *cmp,
		  bool one_mode, struct layer_costs *lc)
{
	/* A CP rank holds s/cp of every sequence: everything but the
	 * attention core (which meets all s keys) runs on those tokens. */
	struct plan local = *plan;
	const struct plan *p = &local;
	/* Every GPU waits for the slowest of the job's at the collectives. */
	double pace = gpu_pace_factor(&c->gpu, plan_gpus(plan));
	int mode = plan->recompute;

	plan_make_cp_local(&local);
	layer_costs_clear(lc, p->pp);
	lc->pace = pace;
	/* Each mode's costs on the one copy of the plan, its mode restored
	 * after (a copy a mode took more than the costs: bench-predict). */
	for (int r = PLAN_RECOMPUTE_NONE; r <= PLAN_RECOMPUTE_FULL; r++) {
		if (one_mode && r != mode)
			continue;
		local.recompute = r;
		compute_layer_time(m, p, c, fw, false, &lc->cls[r]);
		compute_layer_scale(&lc->cls[r], pace);
		tp_layer_comm(m, p, c, fw, lay, &lc->cls[r], &lc->tcs[r]);
		cp_layer_comm(m, p, c, fw, lay, &lc->cls[r], &lc->cps[r]);
		if (model_is_moe(m))
			layer_costs_moe(m, p, c, fw, lay, r, lc);
	}
	local.recompute = mode;
	lc->moe_tp_in_dispatcher = ep_dispatcher_carries_tp(m, p, fw);
	compute_ends_time(m, p, c, fw, &lc->ce);
	compute_ends_scale(&lc->ce, pace);
	if (m->mtp_layers > 0)
		lc->mtp_proj_s = pace * compute_gemm_time(c, (double)p->micro_batch * p->seq_len,
							  (double)m->hidden / p->tp, 2.0 * m->hidden, 1);
	lc->fw = fw;
	layer_params_init(m, p, &lc->lp);
	lc->tp_degree = p->tp;
	pipeline_stages_p2p_time(m, p, c, lay, p->pp < ESTIMATE_MAX_STAGES ? p->pp : ESTIMATE_MAX_STAGES,
				 lc->p2p_s, lc->p2p_bytes);
	lc->c = c;
	lc->lay = lay;
	lc->cmp = cmp;
	if (cmp)
		layer_costs_compression(m, p, c, lay, cmp, lc);
}


/* plan-cli hybrid: the costs of a hybrid model's layers, one set a kind
 * it has (model_kind_model), in lc.kinds. */
static void
core_kinds(struct core *x)
{
	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
		model_kind_model(x->m, kind, &x->km[kind]);
		if (x->km[kind].layers == 0)
			continue;
		build_layer_costs(&x->km[kind], x->p, x->c, x->fw, &x->lay, x->cmp, !x->p->custom_recompute,
				  &x->lck[kind]);
		x->lc.kinds[kind] = &x->lck[kind];
		x->lc.kind_models[kind] = &x->km[kind];
	}
}

/* Every stage's micro-batch of work (the first ESTIMATE_MAX_STAGES kept;
 * beyond them layouts are even and core_pace works the rest out again). */
static void
core_works(struct core *x)
{
	struct layers_memo memo = { .valid = false };

	for (int s = 0; s < x->p->pp && s < ESTIMATE_MAX_STAGES; s++)
		stage_work_memo(x->m, x->p, &x->lc, s, &memo, &x->works[s]);
}

/* After the pipeline drains, every stage synchronises its own
 * gradients and steps its own optimizer shard; the slowest of them
 * ends the iteration. */
static void
core_tail(struct core *x, struct estimate *out)
{
	const struct model *m = x->m;
	const struct plan *p = x->p;
	struct stage_work spare;
	struct stage_tail t;
	/* Even dense stages between the first and the last are alike:
	 * one of them stands for all. */
	bool alike = pipeline_even_layout(p) && !p->custom_recompute && !x->cmp &&
		     (!model_is_moe(m) || m->moe.every == 1) && p->pp <= ESTIMATE_MAX_STAGES;

	memset(&x->tail, 0, sizeof(x->tail));
	for (int s = 0; s < p->pp; s++) {
		if (alike && s > 1 && s < p->pp - 1)
			continue;
		stage_tail(x, s, stage_work_at(m, p, &x->lc, x->works, s, &spare), &t);
		if (s == 0 || t.total > x->tail.total) {
			x->tail = t;
			out->details.tail_stage = s;
		}
	}
}

/* plan-cli itercost: the framework's training metrics over the logits
 * (compute_ends_time's metric_s), per micro-batch on the stage that holds
 * them: a cost of the trainer, not of the model, so in overhead. */
static double
stage_metric_s(const struct core *x, int stage)
{
	return pipeline_end_share(x->p, stage, true) * x->lc.ce.metric_s;
}

/* fp8fixed: delayed scaling's scale updates, per micro-batch on each
 * stage (fp8_recipe_scaling(), Transformer Engine v1.7-v1.8): the cat
 * and update kernels on the compute stream, in overhead beside the
 * framework's fixed costs; 4 fp8 linears a layer, as memory.c counts
 * their histories. The two all-reduces (MAX) of the amax buffer over the
 * stage's tp x cp x dp ranks are not priced: a few hundred bytes, which
 * NCCL sends by its tree/LL path in tens of microseconds, where
 * collective_time()'s ring latency (2 (n - 1) steps) would charge 64
 * ranks on 8 nodes ten times that. */
/* Of the layers rank @stage holds (pipeline_rank_held_layers), those in bf16. */
static int
stage_held_bf16_layers(const struct model *m, const struct plan *p, int stage)
{
	int moe, n = pipeline_stage_bf16_layers(m, p, stage, &moe);

	if (p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1)
		n += pipeline_stage_bf16_layers(m, p, p->pp - 1 - stage, &moe);
	return n;
}

static double
stage_fp8_scaling_s(const struct core *x, int stage)
{
	const struct plan *p = x->p;
	struct fp8_scaling_cost sc;

	if (!plan_low_precision(p))
		return 0.0;
	/* plan-cli bf16ends: the layers in bf16 have no scales. */
	fp8_recipe_scaling(fp8_recipe_resolve(p, x->fw), model_linears_per_layer(x->m) * (pipeline_rank_held_layers(p, x->m, stage) -
								 stage_held_bf16_layers(x->m, p, stage)), p->vpp,
			   x->fw->fp8_amax_history, &sc);
	return sc.kernels * x->c->gpu.launch_overhead_s + compute_memory_time(x->c, sc.bytes);
}

/* ---- Host and launch time (plan/host_time.h) ---- */

/* Host time of @dense and @moe layers' passes in recompute mode @r, their
 * element-wise kernels as @lc counts them (the plan's precision, or its
 * bf16 layers'); without @experts, the routed-expert GEMM launches left out. */
static double
layers_host_s(const struct core *x, const struct model *m, const struct layer_costs *lc, int r, double dense,
	      double moe, bool experts)
{
	const struct framework *fw = x->fw;
	struct plan pr = *x->p;
	struct host_kernels hk;
	double host = 0.0;

	pr.recompute = r;
	if (dense > 0.0) {
		host_layer_kernels(m, &pr, fw, false, lc->cls[r].ew_kernels, &hk);
		host += dense * (host_layer_pass_s(fw, hk.fwd) + host_layer_pass_s(fw, hk.bwd) +
				 host_layer_pass_s(fw, hk.recompute));
	}
	if (moe > 0.0) {
		(experts ? host_layer_kernels : host_layer_kernels_no_expert_gemms)(m, &pr, fw, true,
			lc->cl_moes[r].ew_kernels, &hk);
		host += moe * (host_layer_pass_s(fw, hk.fwd) + host_layer_pass_s(fw, hk.bwd) +
			       host_layer_pass_s(fw, hk.recompute));
	}
	return host;
}

/* plan-cli hybrid: one forward's launches of a hybrid model's mean layer
 * (the --recompute-layers prefix's extra forward). */
static double
stage_hybrid_fwd_host_s(const struct core *x, int r)
{
	struct plan pr = *x->p;
	struct host_kernels hk;
	double host = 0.0;

	pr.recompute = r;
	for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
		const struct layer_costs *kl = x->lc.kinds[kind];
		const struct model *km = x->lc.kind_models[kind];

		if (!kl)
			continue;
		host_layer_kernels(km, &pr, x->fw, kind == MODEL_KIND_MOE,
				   (kind == MODEL_KIND_MOE ? kl->cl_moes : kl->cls)[r].ew_kernels, &hk);
		host += (double)km->layers / x->m->layers * host_layer_pass_s(x->fw, hk.fwd);
	}
	return host;
}

/* Host time of one micro-batch on @stage: its layers' passes in recompute
 * mode @r (the first @k layers recomputing in full) and its ends; without
 * @experts, its MoE layers' routed-expert GEMM launches left out. */
static double
stage_host_s(const struct core *x, int stage, int r, int k, bool experts)
{
	const struct framework *fw = x->fw;
	struct host_kernels ends;
	double moe = pipeline_rank_moe_layers(x->m, x->p, stage), layers = pipeline_rank_layers(x->p, x->m, stage);
	/* plan-cli bf16ends: the layers in bf16 launch no fp8 casts. */
	double moe16 = 0.0, all16 = x->lc.bf16 ? pipeline_rank_bf16_layers(x->m, x->p, stage, &moe16) : 0.0;
	double host = 0.0;

	if (model_is_hybrid(x->m)) {
		/* plan-cli hybrid: each kind's layers launch their own kernels;
		 * the --recompute-layers prefix's forward is counted below at
		 * the mean layer's. */
		for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
			const struct layer_costs *kl = x->lc.kinds[kind];
			double n = pipeline_rank_kind_layers(x->m, x->p, stage, kind);

			if (kl)
				host += layers_host_s(x, x->lc.kind_models[kind], kl, r,
						      kind == MODEL_KIND_MOE ? 0.0 : n, kind == MODEL_KIND_MOE ? n : 0.0,
						      experts);
		}
		if (k > 0 && layers > 0.0)
			host += k * stage_hybrid_fwd_host_s(x, r) ;
		k = 0;
	} else {
		host = layers_host_s(x, x->m, &x->lc, r, layers - moe - (all16 - moe16), moe - moe16, experts);
	}
	if (all16 > 0.0)
		host += layers_host_s(x, x->m, x->lc.bf16, r, all16 - moe16, moe16, experts);
	if (k > 0) {
		struct host_kernels hk;
		struct plan pr = *x->p;

		pr.recompute = r;
		host_layer_kernels(x->m, &pr, fw, false, x->lc.cls[r].ew_kernels, &hk);
		host += k * host_layer_pass_s(fw, hk.fwd); /* --recompute-layers: one more forward */
	}
	host_ends_kernels(x->p, pipeline_end_share(x->p, stage, false) > 0.0, pipeline_end_share(x->p, stage, true) > 0.0,
			  &ends);
	return host + host_eager_s(fw, ends.fwd + ends.bwd);
}

/*
 * The dropless MoE layers of @stage (recompute mode @r), whose forwards
 * each start after a host synchronisation (ep_layer_fixed's sync_s > 0):
 * their count, and one forward's GPU time and launches. The forward
 * that full recomputation repeats synchronises again; it is left in the
 * rest of the stretch (an underestimate). @experts: as stage_host_s.
 */
static double
stage_synced_layers(const struct core *x, int stage, int r, bool experts, double *gpu_one, double *host_one)
{
	struct plan pr = *x->p;
	struct host_kernels hk;
	double moe = pipeline_rank_moe_layers(x->m, x->p, stage);
	/* plan-cli hybrid: a hybrid model's MoE layers are its E layers. */
	const struct layer_costs *lc = x->lc.kinds[MODEL_KIND_MOE] ? x->lc.kinds[MODEL_KIND_MOE] : &x->lc;
	const struct model *m = x->lc.kinds[MODEL_KIND_MOE] ? x->lc.kind_models[MODEL_KIND_MOE] : x->m;

	*gpu_one = *host_one = 0.0;
	if (!(moe > 0.0) || !(lc->efs[r].sync_s > 0.0))
		return 0.0;
	pr.recompute = r;
	(experts ? host_layer_kernels : host_layer_kernels_no_expert_gemms)(m, &pr, x->fw, true,
		lc->cl_moes[r].ew_kernels, &hk);
	*gpu_one = lc->cl_moes[r].fwd_s + lc->eps[r].fwd_s + lc->efs[r].fwd_s;
	*host_one = host_layer_pass_s(x->fw, hk.fwd);
	return moe;
}

/*
 * What the host adds: the bottleneck stage's micro-batch is one stretch
 * between host synchronisations (Megatron-Core's schedules keep the loss
 * on the GPU until the step), so it takes the larger of its GPU time and
 * its launches. The optimizer step follows a synchronisation (Megatron's
 * gradient norm: clip_grads.py's total_norm.item()) with an empty queue:
 * the larger of its GPU time and its multi-tensor launches, and each
 * synchronisation exposes one launch, a fixed cost (the 8-byte
 * all-reduce of the norm before it takes a few tens of microseconds with
 * NCCL's LL protocol, which the ring model of collective.c would
 * overprice: left out). The shard's tensors: a contiguous range of
 * the buffer under Megatron's distributed optimizer (ZeRO 1-2), a slice
 * of every tensor under FSDP2 and ZeRO-3.
 */
static void
core_host(struct core *x, const struct estimate *out)
{
	const struct plan *p = x->p;
	const struct framework *fw = x->fw;
	int tail = out->details.tail_stage, bn = x->bn_stage;
	double tensors, params, expert, shard, launches;

	x->launch_iter = x->fixed_iter = x->launch_mb_experts = 0.0;
	if (!(fw->host_launch_s > 0.0))
		return;
	/* Issue 25: the routed experts' GEMM launches (one a local expert
	 * under Transformer Engine's GroupedLinear) as a line of their own:
	 * the launch term less the same stretch without them, measured
	 * rather than apportioned, since only the host's excess over the
	 * GPU is exposed. */
	if (stage_moe_layers(x->m, p, bn) > 0.0) {
		double host_no = stage_host_s(x, bn, plan_stage_recompute(p, bn), stage_partial_layers(p, bn), false);
		double g1, h1, synced_no = stage_synced_layers(x, bn, plan_stage_recompute(p, bn), false, &g1, &h1);
		double without = host_exposed_synced_s(stage_total(&x->bn) + x->z3_exposed, host_no, synced_no, g1, h1) +
				 stage_mb_syncs(x, bn) * fw->host_launch_s;

		x->launch_mb_experts = fmax(0.0, x->launch_mb - without);
	}
	params = stage_params_of(x->m, p, &x->lc.lp, &x->sp, tail, &expert);
	shard = p->zero >= 1 ? (p->mics_group > 0 ? p->mics_group : (double)p->dp * p->cp) : 1.0;
	tensors = host_rank_tensors(x->m, p, tail, (double)x->m->moe.experts / p->ep) + 2.0;
	if (p->zero >= 1 && p->zero < 3)
		tensors = ceil(tensors / shard);
	/* plan-cli dsz3host: ZeRO-3 shards every tensor, each GPU loops over
	 * all of them (dp_zero3_step_launches: DeepSpeed's per-tensor norm). */
	launches = host_optimizer_launches(tensors, params / shard, fw->optimizer_passes) +
		   dp_zero3_step_launches(p, fw, tensors);
	x->launch_iter = host_exposed_s(x->tail.optimizer_s, host_eager_s(fw, launches));
	/* plan-cli review6: and the gradient buckets' NaN checks (data_par.c
	 * dp_grad_check_syncs: Megatron-Core core_v0.6.0's DDP). */
	x->fixed_iter = (fw->host_syncs + dp_grad_check_syncs(p, fw, params - expert, expert)) *
			fw->host_launch_s;
}

/* ---- end of the host model ---- */

/*
 * Activation offloading's exposed copies, per micro-batch: the offloaded
 * layers' activations go to host memory during the forward and come back
 * during the backward on a side stream (Transformer Engine's
 * get_cpu_offload_context, default scheduling: "Offloading fully overlaps
 * with forward, reloading fully overlaps with backward" when the link keeps
 * up), each way N a / B at the GPU-to-host bandwidth
 * (cluster_pcie_bandwidth_Bps); what a pass's compute cannot hide is exposed. pp 1, so
 * the bottleneck stage is the model.
 */
static double
offload_exposed_s(const struct core *x)
{
	double n = x->p->activation_offload_layers, bw, copy, fwd;

	if (n <= 0)
		return 0.0;
	bw = cluster_pcie_bandwidth_Bps(x->c);
	copy = n * memory_layer_activations(x->m, x->p, x->fw) / bw;
	fwd = fmax(0.0, x->bn.compute - x->bn.bwd);
	return fmax(0.0, copy - fwd) + fmax(0.0, copy - x->bn.bwd);
}

/* ---- The pace of the pipeline ---- */

/*
 * plan-cli hostsync: the training script's own work per micro-batch
 * (framework keys microbatch_syncs, loss_syncs, p2p_syncs,
 * loss_allreduces, dataloader_mask; the code each stands for is in
 * the frameworks/ profiles and docs/research/framework-data.md).
 *
 * The host synchronisations a micro-batch of @stage makes: those of
 * every stage (SC21's broadcast_data and timers), the loss stage's (the loss's NaN
 * check) and, under non-interleaved 1F1B, one per pipeline exchange
 * (Megatron's torch.cuda.synchronize() after batch_isend_irecv): an end
 * stage exchanges once a micro-batch (send forward with receive backward,
 * or the reverse), a middle stage twice; interleaved, with
 * syncs_per_chunk, both once per model chunk. Each exposes one launch, as
 * host_syncs do (core_host).
 */
static double
stage_mb_syncs(const struct core *x, int stage)
{
	const struct plan *p = x->p;
	const struct framework *fw = x->fw;
	double n = fw->microbatch_syncs;

	/* The synchronize after each exchange is Megatron's 1F1B
	 * (p2p_communication.py _communicate, batch_p2p_sync). The
	 * zero-bubble schedules' runtime (sail-sg/zero-bubble-pipeline-
	 * parallelism @0153744, zerobubble/runtime.py multi_pipeline_ops)
	 * and DualPipe (deepseek-ai/DualPipe @bb214e8, dualpipe.py
	 * _commit_and_wait_comm) batch their own isend/irecv and only
	 * req.wait(), which orders the streams on the GPU: none there. */
	bool sync_exchange = p->pp_schedule == PLAN_PP_1F1B;

	if (stage == pipeline_head_stage(p))
		n += fw->loss_syncs;
	if (p->pp > 1 && p->vpp == 1)
		n += sync_exchange ? fw->p2p_syncs * (stage == 0 || stage == p->pp - 1 ? 1.0 : 2.0) : 0.0;
	/* plan-cli mlm2021: SC21 Megatron's interleaved schedule calls
	 * forward_step_func (get_batch, the timers) for each model chunk,
	 * and each steady-state step, a chunk's forward and another's
	 * backward, ends in one synchronised exchange on every stage, end
	 * stages too (schedules.py forward_backward_pipelining_with_
	 * interleaving, p2p_communication.py _communicate, de7dc40f88):
	 * vpp of each a micro-batch. The warm-up and cool-down steps
	 * exchange alone, a few more an iteration: not counted. */
	else if (p->pp > 1 && fw->syncs_per_chunk)
		n += (p->vpp - 1) * fw->microbatch_syncs + (sync_exchange ? p->vpp * fw->p2p_syncs : 0.0);
	return n;
}

/* The loss stage's all-reduces of the loss, one float over the DP group
 * (average_losses_across_data_parallel_group), each blocking the
 * compute stream for a latency-bound collective. */
static double
stage_loss_allreduce_s(const struct core *x, int stage)
{
	double h = pipeline_end_share(x->p, stage, true);

	if (!(h > 0.0) || !(x->fw->loss_allreduces > 0.0))
		return 0.0;
	return h * x->fw->loss_allreduces * collective_small_allreduce_time(x->c, &x->lay.dp, 4.0);
}

/* The data loader's attention mask, micro-batch x s x s booleans: TP rank
 * 0 of the first and of the loss stage copies it to the GPU on the
 * compute stream (.cuda(non_blocking=True) from pinned memory, ordered
 * before the forward's kernels) and broadcasts it over TP, whose other
 * ranks wait for it (Megatron-LM get_batch_on_this_tp_rank, core_v0.6.0). */
static double
stage_batch_copy_s(const struct core *x, int stage)
{
	const struct plan *p = x->p;
	double bytes, bw;

	if (!x->fw->dataloader_mask || (stage != 0 && stage != pipeline_head_stage(p)))
		return 0.0;
	bytes = (double)p->micro_batch * p->seq_len * p->seq_len;
	bw = cluster_pcie_bandwidth_Bps(x->c);
	return bytes / bw + collective_broadcast_time(x->c, &x->lay.tp, bytes);
}

/* What one micro-batch of @stage costs beyond its GPU work: the
 * framework's fixed costs per layer and micro-batch, the metrics, the
 * fp8 scale updates, the loss's all-reduce and the mask's copy. */
static double
stage_fixed_s(const struct core *x, int stage)
{
	return x->fw->layer_overhead_s * pipeline_rank_layers(x->p, x->m, stage) + x->fw->microbatch_overhead_s +
	       stage_metric_s(x, stage) + stage_fp8_scaling_s(x, stage) + stage_loss_allreduce_s(x, stage) +
	       stage_batch_copy_s(x, stage);
}

/* The GPU's wait for @stage's launches in a micro-batch of @gpu_s
 * (core_host's model; 0 without a host model), and the launch each of
 * the micro-batch's host synchronisations exposes (stage_mb_syncs).
 * @experts: as stage_host_s. */
static double
stage_launch_s(const struct core *x, int stage, double gpu_s, bool experts)
{
	int r = plan_stage_recompute(x->p, stage);
	double synced, gpu_one, host_one;

	if (!(x->fw->host_launch_s > 0.0))
		return 0.0;
	synced = stage_synced_layers(x, stage, r, experts, &gpu_one, &host_one);
	return host_exposed_synced_s(gpu_s, stage_host_s(x, stage, r, stage_partial_layers(x->p, stage), experts),
				     synced, gpu_one, host_one) +
	       stage_mb_syncs(x, stage) * x->fw->host_launch_s;
}

/* One stage's part in the iteration: its slot were it to set the pace,
 * and its share of the fill and drain were another one to. */
struct stage_pace {
	double z3, fixed, launch; /* the slot's parts beyond stage_total() */
	double slot, share;
};

static void
stage_pace(const struct core *x, int stage, const struct stage_work *w, struct stage_pace *sp)
{
	const struct plan *p = x->p;
	double fb;

	sp->z3 = stage_z3_s(x, stage, w, &x->tail.dc);
	sp->fixed = stage_fixed_s(x, stage);
	sp->launch = stage_launch_s(x, stage, stage_total(w) + sp->z3, true);
	sp->slot = stage_total(w) + sp->z3 + sp->fixed + sp->launch;
	/* Fill and drain: each other stage's micro-batch runs once while the
	 * pacing one waits (1F1B: T = m slot + the sum of the other stages'
	 * slots, over v for interleaving; SC21 Sec. 2.2 with stages of equal
	 * slot; plan-cli pipeline: the other schedules' share of each
	 * stage), waiting for its launches the same way. */
	fb = stage_total(w) + w->pp_hidden + sp->fixed;
	sp->share = (p->pp_schedule == PLAN_PP_1F1B ? fb / p->vpp :
		     pipeline_schedule_bubble(p, fb, w->bwd + w->recompute, w->wgrad)) +
		    stage_launch_s(x, stage, stage_total(w), true) / p->vpp;
}

/*
 * Which stage sets the pace: the one whose m slots and the others' fill
 * and drain make the longest iteration, T = max over s of (m slot_s +
 * sum over t != s of share_t). Under 1F1B that is the longest slot, all
 * its costs counted (a share is the slot over v, so m slot_s - share_s =
 * (m - 1/v) slot_s; with ZeRO-3, pp is 1). Each term grows with every
 * stage's work (m >= 1 >= 1/v), and a maximum of growing terms grows: a
 * slower kernel or collective never shortens the iteration. (Not under
 * the zero-bubble schedules: their share, F + B - 2W, falls as the
 * weight gradients W grow; test-property draws 1F1B plans.) Picked by
 * its GPU work alone, the pacing stage could change
 * to one whose fixed costs or launches are smaller, and the iteration
 * get shorter (issue 25: 20 us more collective latency, 0.9293 ->
 * 0.9284 s: tests/test-pipeline.c's test_pace_monotone).
 */
static void
core_pace(struct core *x, struct estimate *out)
{
	const struct plan *p = x->p;
	struct stage_pace sp, best = { 0 };
	struct stage_work spare;
	double shares = 0.0, best_value = 0.0;

	x->bn_stage = 0;
	for (int s = 0; s < p->pp; s++) {
		const struct stage_work *w = stage_work_at(x->m, p, &x->lc, x->works, s, &spare);
		double value, tie;

		stage_pace(x, s, w, &sp);
		/* Beyond ESTIMATE_MAX_STAGES (even layouts) the fill and drain
		 * are left out, as they always were. */
		if (s < ESTIMATE_MAX_STAGES) {
			shares += sp.share;
			out->stage_slot_s[s] = sp.slot;
		}
		value = x->mb * sp.slot - (s < ESTIMATE_MAX_STAGES ? sp.share : 0.0);
		/* Among stages that make the same iteration (all of them when
		 * m v = 1 under 1F1B; equal up to rounding), the longest slot:
		 * the slot is the slowest stage's, which the search's bounds
		 * (pipeline_bound_slots) and its MILP (slot >= every stage's
		 * time) assume. */
		tie = 1e-13 * x->mb * fmax(sp.slot, best.slot);
		if (s == 0 || value > best_value + tie || (value >= best_value - tie && sp.slot > best.slot)) {
			best_value = value;
			best = sp;
			x->bn = *w;
			x->bn_stage = s;
		}
	}
	out->details.bottleneck_stage = x->bn_stage;
	x->slot = best.slot;
	x->z3_exposed = best.z3;
	x->mb_overhead = best.fixed;
	x->launch_mb = best.launch;
	x->bubble = shares - (x->bn_stage < ESTIMATE_MAX_STAGES ? best.share : 0.0);
}

/* The iteration by kind of work: m slots of the bottleneck, the bubble,
 * and the tail. */
static void
core_breakdown(const struct core *x, struct estimate *out)
{
	const struct stage_work *bn = &x->bn;
	const struct stage_tail *tail = &x->tail;
	struct estimate_breakdown *b = &out->breakdown;
	double mb = x->mb;

	b->compute = mb * bn->compute;
	b->recompute = mb * bn->recompute;
	b->tp_comm = mb * bn->tp + tail->sp_grad_s; /* normrev: the SP gradients' all-reduce */
	b->pp_comm = mb * bn->pp;
	b->compression = mb * bn->compression + tail->codec_s;
	b->ep_comm = mb * bn->ep;
	b->moe_fixed = mb * bn->moe_fixed;
	b->cp_comm = mb * bn->cp;
	b->pp_bubble = x->bubble;
	b->dp_comm = tail->dp_exposed + mb * x->z3_exposed;
	b->overhead = mb * x->mb_overhead + x->fw->iteration_overhead_s;
	/* Issue 25: host and launch time is one line of its own, the launch
	 * each host synchronisation exposes included (not in overhead, the
	 * framework's own fixed costs). */
	b->launch = mb * x->launch_mb + x->launch_iter + x->fixed_iter;
	b->optimizer = tail->optimizer_s;
	b->offload = mb * offload_exposed_s(x);
	out->iteration_time_s = estimate_breakdown_sum(b);
	out->bytes.tp = mb * bn->tp_bytes + tail->sp_grad_bytes;
	out->bytes.pp = mb * bn->pp_bytes;
	out->bytes.dp = tail->dc.bytes;
	out->bytes.ep = mb * bn->ep_bytes;
}

/* One layer of the bottleneck stage, in its recompute mode, and its
 * expert-parallel traffic. */
static void
core_layer_details(const struct core *x, struct estimate *out)
{
	const struct plan *p = x->p;
	struct estimate_details *d = &out->details;
	int r = plan_stage_recompute(p, d->bottleneck_stage);
	const struct layer_costs *moe_lc = x->lc.kinds[MODEL_KIND_MOE] ? x->lc.kinds[MODEL_KIND_MOE] : &x->lc;
	const struct ep_layer_comm *ep = &moe_lc->eps[r];

	d->layer_fwd_s = x->lc.cls[r].fwd_s;
	d->layer_bwd_s = x->lc.cls[r].bwd_s;
	d->tp_collective_s = x->lc.tcs[r].collective_s;
	if (model_is_hybrid(x->m)) {
		/* plan-cli hybrid: the mean layer of the model. */
		d->layer_fwd_s = d->layer_bwd_s = 0.0;
		for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
			const struct layer_costs *kl = x->lc.kinds[kind];
			const struct compute_layer *cl;
			double f;

			if (!kl)
				continue;
			cl = kind == MODEL_KIND_MOE ? &kl->cl_moes[r] : &kl->cls[r];
			f = (double)x->km[kind].layers / x->m->layers;
			d->layer_fwd_s += f * cl->fwd_s;
			d->layer_bwd_s += f * cl->bwd_s;
		}
	}
	d->ep_a2a_s = ep->a2a_s;
	d->ep_inter_s = ep->inter_s;
	d->ep_intra_s = ep->intra_s;
	d->ep_bytes = ep->bytes;
	d->ep_total_s = x->mb * pipeline_rank_moe_layers(x->m, p, d->bottleneck_stage) * ep->total_s;
	d->moe_layers = stage_moe_layers(x->m, p, d->bottleneck_stage);
	d->ep_inter_node = x->lay.ep.nodes > 1;
}

/*
 * attnshape: the factors compute_flash_attention_kernel applies (the same
 * call, attn_shape_factors, on the same arguments), for the text output
 * to name. The profile's own kernel is named as the gpus/ profiles
 * measured it: FlashAttention-2 on Ampere, FlashAttention-3 on Hopper,
 * cuDNN's on Blackwell (attn_shape_padded_head_dim pads it so).
 */
static void
core_attn_shape(const struct core *x, struct estimate_details *d)
{
	const struct model *m = x->m;
	const struct plan *p = x->p;
	enum gpu_generation gen = x->c->gpu.generation;
	int kernel = compute_attention_kernel(p, x->fw);
	/* The whole plan here (compute.c sees a CP rank's, seq_len / cp):
	 * seq_len is the whole sequence, a ring step's rows span its 1 / cp. */
	double s = p->seq_len;
	double row_seq = p->cp > 1 && p->cp_method == PLAN_CP_RING ? s / p->cp : s;
	struct attn_shape f;

	d->attn_shape_known = p->flash_attention &&
			      (gen == GPU_GEN_AMPERE || gen == GPU_GEN_HOPPER || gen == GPU_GEN_BLACKWELL);
	if (!d->attn_shape_known)
		return;
	if (kernel == PLAN_ATTN_PROFILE)
		kernel = gen == GPU_GEN_AMPERE ? PLAN_ATTN_FA2 : gen == GPU_GEN_HOPPER ? PLAN_ATTN_FA3 : PLAN_ATTN_CUDNN;
	f = attn_shape_factors(&x->c->gpu, kernel, model_qk_head_dim(m), model_v_head_dim(m), s, row_seq,
				m->causal);
	d->attn_kernel = kernel;
	d->attn_head_dim_qk = model_qk_head_dim(m);
	d->attn_head_dim_v = model_v_head_dim(m);
	d->attn_padded_head_dim_qk = attn_shape_padded_head_dim(kernel, gen, d->attn_head_dim_qk);
	d->attn_padded_head_dim_v = attn_shape_padded_head_dim(kernel, gen, d->attn_head_dim_v);
	d->attn_shape_fwd = f.fwd;
	d->attn_shape_bwd = f.bwd;
}

/* What the formatters show beside the breakdown. */
static void
core_details(const struct core *x, struct estimate *out)
{
	const struct dp_comm *dc = &x->tail.dc;
	struct estimate_details *d = &out->details;

	d->dp_compress_scheme = x->tail.cdp.scheme;
	d->microbatches = (int)x->mb;
	/* plan-cli pipeline: other schedules' bubble against the ideal m slots. */
	d->bubble_fraction = x->p->pp_schedule == PLAN_PP_1F1B ? pipeline_bubble_fraction(x->p) :
			     x->bubble / (x->mb * x->slot);
	core_layer_details(x, out);
	d->tp_bytes_per_iteration = out->bytes.tp;
	d->pp_p2p_s = x->bn.pp;
	d->pp_bytes_per_iteration = out->bytes.pp;
	d->dp_total_s = dc->reduce_s + dc->gather_s + dc->embed_sync_s + x->mb * dc->zero3_mb_s;
	d->dp_overlap_window_s = x->tail.window;
	d->dp_bytes_per_iteration = dc->bytes;
	d->slot_s = x->slot;
	d->compute_attention_s = x->mb * x->bn.attention;
	d->compute_other_s = x->mb * x->bn.other;
	d->pace_factor = x->lc.pace;
	d->compute_gemm_s = fmax(0.0, x->mb * (x->bn.compute + x->bn.recompute) - d->compute_attention_s -
					d->compute_other_s);
	d->moe_router_s = x->mb * x->bn.moe_router;
	d->moe_permute_s = x->mb * x->bn.moe_permute;
	d->moe_sync_s = x->mb * x->bn.moe_sync;
	d->moe_expert_launch_s = x->mb * x->launch_mb_experts;
	/* plan-cli hostsync: the pacing stage's per-micro-batch script work */
	d->mb_syncs = x->fw->host_launch_s > 0.0 ? stage_mb_syncs(x, x->bn_stage) : 0.0;
	d->mb_sync_s = x->mb * d->mb_syncs * x->fw->host_launch_s;
	d->loss_allreduce_s = x->mb * stage_loss_allreduce_s(x, x->bn_stage);
	d->batch_copy_s = x->mb * stage_batch_copy_s(x, x->bn_stage);
	d->compressed_layers = x->bn.compressed_layers;
	d->compression_params = x->bn.extra_params;
	d->tp_inter_node = x->lay.tp.nodes > 1;
	d->dp_inter_node = x->lay.dp.nodes > 1;
	d->pp_inter_node = x->lay.pp_inter_node;
	core_attn_shape(x, d);
}

/* Sizes, FLOPs and the rates that follow from the iteration time. */
static void
core_rates(const struct model *m, const struct cluster *c, const struct plan *p, const struct framework *fw,
	   struct estimate *out)
{
	out->parameters = model_params_total(m);
	out->active_parameters = model_params_active(m);
	out->gpus = plan_gpus(p);
	out->model_flops_per_iteration = flops_model_per_iteration(m, p);
	out->hardware_flops_per_iteration = flops_hardware_per_iteration(m, p, fw);
	out->tflops_per_gpu = out->model_flops_per_iteration /
			      (out->iteration_time_s * out->gpus) / 1e12;
	out->hardware_tflops_per_gpu = out->hardware_flops_per_iteration /
				       (out->iteration_time_s * out->gpus) / 1e12;
	out->mfu = out->tflops_per_gpu * 1e12 / c->gpu.peak_flops;
	out->hfu = out->hardware_tflops_per_gpu * 1e12 / c->gpu.peak_flops;
	out->tokens_per_s = (double)p->global_batch * p->seq_len / out->iteration_time_s;
	out->tokens_per_s_per_gpu = out->tokens_per_s / out->gpus;
}

static void
estimate_core(const struct model *m, const struct cluster *c, const struct plan *p,
	      const struct estimate_options *opt, const struct compressor *cmp,
	      struct estimate *out)
{
	struct framework fw_default;
	struct core x;

	memset(out, 0, sizeof(*out));
	x.m = m;
	x.c = c;
	x.p = p;
	x.cmp = cmp;
	x.algo = opt ? opt->dp_algo : COLL_ALGO_RING;
	framework_init_default(&fw_default);
	x.fw = opt && opt->framework ? opt->framework : &fw_default;
	topology_plan(p, c, &x.lay);
	x.mb = plan_microbatches(p);
	build_layer_costs(m, p, c, x.fw, &x.lay, cmp, !p->custom_recompute, &x.lc);
	if (plan_has_bf16_layers(p)) {
		struct plan p16 = plan_bf16_layers_plan(p);

		build_layer_costs(m, &p16, c, x.fw, &x.lay, cmp, !p->custom_recompute, &x.lc16);
		x.lc.bf16 = &x.lc16;
	}
	if (model_is_hybrid(m))
		core_kinds(&x);
	core_works(&x);
	stage_params_fill(m, p, &x.lc.lp, &x.sp);
	core_tail(&x, out);
	core_pace(&x, out);
	core_host(&x, out);
	core_breakdown(&x, out);
	core_details(&x, out);
	core_rates(m, c, p, x.fw, out);
	fill_memory(m, p, c, &x.lc, x.works, &x.sp, out);
}

/* The figures of an estimate that the formatters show. The breakdown is
 * one row that stands for each of its terms (estimate_breakdown_finite
 * walks their list), so that a new term is checked too. */
#define ESTIMATE_FIGURE(f) { #f, offsetof(struct estimate, f), false }
static const struct {
	const char *name;
	size_t offset;
	bool breakdown;
} estimate_figures[] = {
	ESTIMATE_FIGURE(parameters), ESTIMATE_FIGURE(active_parameters),
	ESTIMATE_FIGURE(iteration_time_s), { "breakdown", offsetof(struct estimate, breakdown), true },
	ESTIMATE_FIGURE(details.bubble_fraction), ESTIMATE_FIGURE(details.layer_fwd_s),
	ESTIMATE_FIGURE(details.layer_bwd_s), ESTIMATE_FIGURE(details.tp_collective_s),
	ESTIMATE_FIGURE(details.pp_p2p_s), ESTIMATE_FIGURE(details.dp_total_s),
	ESTIMATE_FIGURE(details.dp_overlap_window_s), ESTIMATE_FIGURE(details.slot_s),
	ESTIMATE_FIGURE(details.compute_gemm_s), ESTIMATE_FIGURE(details.compute_attention_s),
	ESTIMATE_FIGURE(details.compute_other_s), ESTIMATE_FIGURE(details.ep_a2a_s),
	ESTIMATE_FIGURE(details.moe_router_s), ESTIMATE_FIGURE(details.moe_permute_s),
	ESTIMATE_FIGURE(details.moe_sync_s), ESTIMATE_FIGURE(details.moe_expert_launch_s),
	ESTIMATE_FIGURE(details.ep_total_s), ESTIMATE_FIGURE(details.ep_inter_s),
	ESTIMATE_FIGURE(details.ep_intra_s), ESTIMATE_FIGURE(details.ep_bytes),
	ESTIMATE_FIGURE(details.tp_bytes_per_iteration), ESTIMATE_FIGURE(details.pp_bytes_per_iteration),
	ESTIMATE_FIGURE(details.dp_bytes_per_iteration), ESTIMATE_FIGURE(details.compression_params),
	ESTIMATE_FIGURE(details.attn_shape_fwd), ESTIMATE_FIGURE(details.attn_shape_bwd),
	ESTIMATE_FIGURE(memory.weights), ESTIMATE_FIGURE(memory.gradients),
	ESTIMATE_FIGURE(memory.optimizer), ESTIMATE_FIGURE(memory.activations),
	ESTIMATE_FIGURE(memory.other), ESTIMATE_FIGURE(memory.compression),
	ESTIMATE_FIGURE(memory.userbuffers),
	ESTIMATE_FIGURE(memory.total), ESTIMATE_FIGURE(memory_capacity_bytes),
	ESTIMATE_FIGURE(model_flops_per_iteration), ESTIMATE_FIGURE(hardware_flops_per_iteration),
	ESTIMATE_FIGURE(tflops_per_gpu), ESTIMATE_FIGURE(hardware_tflops_per_gpu),
	ESTIMATE_FIGURE(mfu), ESTIMATE_FIGURE(hfu), ESTIMATE_FIGURE(tokens_per_s), ESTIMATE_FIGURE(tokens_per_s_per_gpu),
	ESTIMATE_FIGURE(bytes.tp), ESTIMATE_FIGURE(bytes.pp), ESTIMATE_FIGURE(bytes.dp),
	ESTIMATE_FIGURE(bytes.ep), ESTIMATE_FIGURE(uncompressed_bytes.tp),
	ESTIMATE_FIGURE(uncompressed_bytes.pp), ESTIMATE_FIGURE(uncompressed_bytes.dp),
	ESTIMATE_FIGURE(uncompressed_bytes.ep), ESTIMATE_FIGURE(uncompressed_iteration_time_s),
	ESTIMATE_FIGURE(compression_speedup),
};

/* A finite time can still be absurd: rates and efficiencies at their
 * floors, or a profile typo, give iterations of centuries. No training
 * run waits a year for one step, so such an estimate is an error that
 * names the term of the breakdown that dominates, the place to look. */
static bool
estimate_plausible(const struct plan *p, const struct estimate *e, struct plan_error *err)
{
	int worst = 0;

	if (e->iteration_time_s <= ESTIMATE_MAX_ITERATION_S)
		return true;
	for (int i = 1; i < ESTIMATE_BREAKDOWN_COUNT; i++)
		if (estimate_breakdown_get(&e->breakdown, i) > estimate_breakdown_get(&e->breakdown, worst))
			worst = i;
	return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
			      "plan tp %d x pp %d x dp %d, micro-batch %d: an iteration of %.3g s is more "
			      "than a year, mostly breakdown.%s (%.3g s): a rate or an efficiency in the "
			      "profiles is implausibly small",
			      p->tp, p->pp, p->dp, p->micro_batch, e->iteration_time_s,
			      estimate_breakdown_name(worst), estimate_breakdown_get(&e->breakdown, worst));
}

/* The boundary of the core: an estimate with a figure that is not
 * finite is an error naming the plan (and the first such figure, in this
 * order), never output. */
static bool
estimate_finite(const struct plan *p, const struct estimate *e, struct plan_error *err)
{
	for (size_t i = 0; i < sizeof(estimate_figures) / sizeof(estimate_figures[0]); i++) {
		const char *bad;
		char what[64];
		double v;

		if (estimate_figures[i].breakdown) {
			if (estimate_breakdown_finite(&e->breakdown, &bad))
				continue;
			snprintf(what, sizeof(what), "breakdown.%s", bad);
			return plan_error_nonfinite(p, what, err);
		}
		memcpy(&v, (const char *)e + estimate_figures[i].offset, sizeof(v));
		if (!isfinite(v))
			return plan_error_nonfinite(p, estimate_figures[i].name, err);
	}
	/* Only the plan's stages are written (the rest stay zero from
	 * estimate_core's memset); this check runs on every prediction. */
	for (int s = 0; s < p->pp && s < ESTIMATE_MAX_STAGES; s++)
		if (!isfinite(e->stage_memory[s]) || !isfinite(e->stage_slot_s[s]))
			return plan_error_nonfinite(p, isfinite(e->stage_memory[s]) ? "stage_slot_s" : "stage_memory",
						    err);
	return estimate_plausible(p, e, err);
}

bool
estimate_plan(const struct model *m, const struct cluster *c,
	      const struct plan *p, const struct estimate_options *opt,
	      struct estimate *out, struct plan_error *err)
{
	const struct compressor *cmp = opt ? opt->compressor : NULL;
	const struct plan_compression *pc = &p->compress;
	struct plan resolved;

	if (!plan_validate(p, m, c, err) || !estimate_check_precision(p, c, opt ? opt->framework : NULL, err) ||
	    !check_zero3_partial_recompute(m, p, opt ? opt->framework : NULL, err) || !check_compression(m, p, cmp, err) ||
	    !check_muon(m, opt ? opt->framework : NULL, err) ||
	    !estimate_check_moe_overlap(p, opt ? opt->framework : NULL, err))
		return false;
	/* The cost model sees full and no recomputation as modes, partial
	 * stages only where they are partial. */
	if (plan_recompute_resolvable(p)) {
		resolved = plan_resolve_recompute(p, m);
		p = &resolved;
	}
	if (!cmp || !(pc->tp || pc->pp || pc->dp)) {
		estimate_core(m, c, p, opt, NULL, out);
		out->uncompressed_bytes = out->bytes;
		out->uncompressed_iteration_time_s = out->iteration_time_s;
		out->compression_speedup = 1.0;
		return estimate_finite(p, out, err);
	}
	{
		struct estimate base;

		estimate_core(m, c, p, opt, NULL, &base);
		estimate_core(m, c, p, opt, cmp, out);
		out->compressed = true;
		out->uncompressed_bytes = base.bytes;
		out->uncompressed_iteration_time_s = base.iteration_time_s;
		out->compression_speedup = base.iteration_time_s / out->iteration_time_s;
	}
	return estimate_finite(p, out, err);
}

/* Time and memory of @stage holding @layers layers of mode @r. */
static void
probe(const struct model *m, const struct cluster *c, const struct plan *shape,
      const struct layer_costs *base, int stage, int layers, int r, bool ctp, bool cpp,
      double *time, double *mem)
{
	struct layer_costs lc = *base;
	struct plan p = *shape;
	struct stage_work w;
	struct memory_use u;
	double expert, params;

	p.custom_layers = p.custom_recompute = true;
	for (int s = 0; s < p.pp; s++) {
		p.stage_layers[s] = (short)(s == stage ? layers : 1);
		p.stage_recompute[s] = (signed char)r;
	}
	p.recompute = r;
	lc.tp = lc.tp && ctp;
	lc.from_layer = 0;
	p.compress.from_stage = cpp ? stage : p.pp;
	lc.pp = lc.pp && cpp;
	stage_work(m, &p, &lc, stage, &w);
	*time = stage_total(&w);
	params = stage_params(m, &p, &lc.lp, stage, &expert) + w.extra_params;
	p = plan_cp_local(&p);
	memory_stage(m, &p, c, lc.fw, stage, params, expert, &u);
	if (lc.cmp)
		u.total += stage_ef_bytes(&p, lc.cmp, params, &w);
	*mem = u.total;
}

bool
estimate_stage_coefs(const struct model *m, const struct cluster *c, const struct plan *shape,
		     const struct estimate_options *opt, struct estimate_stage_coefs *out,
		     struct plan_error *err)
{
	const struct compressor *cmp = opt ? opt->compressor : NULL;
	struct plan_layout lay;
	struct layer_costs lc;
	struct plan p = *shape;

	if (p.pp > PLAN_MAX_STAGES)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "more than %d stages", PLAN_MAX_STAGES);
	/* Validate the shape with an even layout. */
	p.custom_layers = p.custom_recompute = false;
	if (m->layers % p.pp != 0) {
		p.custom_layers = true;
		for (int s = 0; s < p.pp; s++)
			p.stage_layers[s] = (short)(m->layers / p.pp + (s < m->layers % p.pp ? 1 : 0));
	}
	if (!plan_validate(&p, m, c, err) || !check_compression(m, &p, cmp, err) ||
	    !estimate_check_moe_overlap(&p, opt ? opt->framework : NULL, err))
		return false;
	topology_plan(shape, c, &lay);
	build_layer_costs(m, shape, c, opt ? opt->framework : NULL, &lay, cmp, false, &lc);
	for (int s = 0; s < shape->pp; s++) {
		struct estimate_stage_coefs *o = &out[s];

		for (int r = 0; r < 3; r++)
			for (int k = 0; k < 2; k++) {
				double t1, t2, m1, m2;

				probe(m, c, shape, &lc, s, 1, r, k, false, &t1, &m1);
				probe(m, c, shape, &lc, s, 2, r, k, false, &t2, &m2);
				o->time_layer[r][k] = t2 - t1;
				o->mem_layer[r][k] = m2 - m1;
				if (k == 0) {
					o->time_fixed[0] = t1 - (t2 - t1);
					o->mem_fixed[r][0] = m1 - (m2 - m1);
					probe(m, c, shape, &lc, s, 1, r, false, true, &t1, &m1);
					probe(m, c, shape, &lc, s, 2, r, false, true, &t2, &m2);
					o->time_fixed[1] = t1 - (t2 - t1);
					o->mem_fixed[r][1] = m1 - (m2 - m1);
				}
			}
	}
	return true;
}

/*
 * Slapo's checkpoint ratio as a search decision (Chen et al., ASPLOS 2024,
 * which tunes the ratio per model; here per stage). For a fixed layout
 * and modes a stage's memory depends on its own count k of fully
 * recomputed layers only: from k = 1 on it falls with every k (a layer
 * keeps 2sbh instead of its activations; memory_partial_recompute_bytes),
 * while every k adds a forward to the stage's slot, and so to the
 * iteration, which never gets shorter with more work on a stage (the DP
 * overlap window is the backward alone; ZeRO-3, whose gathers could
 * hide behind recomputation, is excluded). So the fewest layers that make
 * the stage fit are the fastest choice that fits, and stages are chosen
 * one by one.
 */
bool
estimate_fewest_recompute_layers(const struct model *m, const struct plan *p, const struct framework *fw,
				 const struct estimate *e, struct plan *out)
{
	bool partial = false;

	*out = *p;
	if (p->vpp > 1 || p->zero >= 3 || p->custom_recompute_layers || p->pp > ESTIMATE_MAX_STAGES)
		return false;
	for (int s = 0; s < p->pp; s++) {
		int r = plan_stage_recompute(p, s), layers = plan_stage_layers(p, m, s), k = 0;
		double over = e->stage_memory[s] - e->memory_capacity_bytes;
		struct plan ps = *p;

		out->stage_recompute_layers[s] = (short)(r == PLAN_RECOMPUTE_FULL ? layers : 0);
		if (over <= 0)
			continue;
		if (r == PLAN_RECOMPUTE_FULL || layers == 0)
			return false; /* it cannot recompute more (a stage of no layer: any) */
		ps.recompute = r;
		ps = plan_cp_local(&ps);
		for (k = 1; k < layers && over + memory_partial_recompute_bytes(m, &ps, fw, s, k) > 0; k++)
			;
		if (k == layers)
			return false; /* only full recomputation fits: a mode of its own */
		out->stage_recompute_layers[s] = (short)k;
		partial = true;
	}
	out->custom_recompute_layers = partial;
	out->stage_recompute_layers_count = partial ? p->pp : 0;
	return partial;
}
