/*
 * plan-cli muon: Muon (Jordan et al. 2024, "Muon: An optimizer for hidden
 * layers in neural networks") as Megatron-Core runs it under
 * optimizer "dist_muon" (NVIDIA/Megatron-LM d98e8a6,
 * megatron/core/optimizer/emerging_optimizers.py TensorParallelMuon,
 * layer_wise_optimizer.py LayerWiseDistributedOptimizer). The derivation
 * is in docs/research/framework-data.md, "Muon".
 */
#include "plan/muon.h"

#include <math.h>

#include "plan/compute.h"
#include "plan/pipeline.h"

/*
 * One Newton-Schulz iteration on X, m x n with m <= n (newton_schulz()
 * transposes the taller matrix; newton_schulz_step(), NVIDIA-NeMo/
 * Emerging-Optimizers muon_utils.py): A = X X^T (2 m m n FLOPs),
 * B = b A + c A A (2 m m m), X = a X + B X (2 m m n).
 */
double
muon_ns_flops(double a, double b, int steps)
{
	double m = fmin(a, b), n = fmax(a, b);

	return steps * (4.0 * m * m * n + 2.0 * m * m * m);
}

/* The same three GEMMs at the GPU's bf16 rate (muon_fp32_matmul_prec
 * "medium": newton_schulz() casts X to bf16). */
double
muon_ns_time(const struct cluster *c, double a, double b, int steps)
{
	double m = fmin(a, b), n = fmax(a, b);

	if (m <= 0.0)
		return 0.0;
	return steps * (compute_gemm_time(c, m, m, n, 1.0) + compute_gemm_time(c, m, m, m, 1.0) +
			compute_gemm_time(c, m, n, m, 1.0));
}

/* The time of a set of matrices spread whole over @d ranks (the LPT
 * bin-packing of _compute_per_buffer_param_layout, by NS cost): the
 * busiest rank does at least the even share and at least the largest. */
struct muon_load {
	double sum, max;
};

static void
load_add(struct muon_load *l, const struct cluster *c, double count, double a, double b)
{
	double t = muon_ns_time(c, a, b, MUON_NS_STEPS);

	if (count <= 0.0)
		return;
	l->sum += count * t;
	l->max = fmax(l->max, t);
}

static double
load_time(const struct muon_load *l, double d)
{
	return fmax(l->sum / d, l->max);
}

/*
 * The attention's matrices on one TP rank, as muon_tp_mode "blockwise"
 * orthogonalizes them (each its local shard; Megatron-Bridge's
 * distributed_muon_with_cosine_annealing). Non-MLA: linear_qkv split
 * per Q, K and V (and the output gate, a second Q; muon_split_qkv True,
 * _get_qkv_split_shapes), each
 * column-parallel, and the row-parallel linear_proj. MLA (DeepSeek-V2):
 * the down projections whole on every TP rank, the up projections
 * column-parallel, linear_proj row-parallel.
 */
static void
attention_load(const struct model *m, const struct plan *p, const struct cluster *c, double layers,
	       struct muon_load *l)
{
	double h = m->hidden, t = p->tp, heads = m->heads;
	double dqk = model_qk_head_dim(m), dv = model_v_head_dim(m);

	if (m->attention == MODEL_ATTN_MLA) {
		double dn = m->mla.qk_nope_head_dim, dr = m->mla.qk_rope_head_dim;

		if (m->mla.q_lora_rank > 0) {
			load_add(l, c, layers, m->mla.q_lora_rank, h);
			load_add(l, c, layers, heads * (dn + dr) / t, m->mla.q_lora_rank);
		} else {
			load_add(l, c, layers, heads * (dn + dr) / t, h);
		}
		load_add(l, c, layers, m->mla.kv_lora_rank + dr, h);
		load_add(l, c, layers, heads * (dn + m->mla.v_head_dim) / t, m->mla.kv_lora_rank);
		load_add(l, c, layers, h, heads * m->mla.v_head_dim / t);
		return;
	}
	load_add(l, c, layers * (m->attention_output_gate ? 2.0 : 1.0), heads * dqk / t, h);
	load_add(l, c, layers, m->kv_heads * dqk / t, h);
	load_add(l, c, layers, m->kv_heads * dv / t, h);
	load_add(l, c, layers, h, heads * dv / t);
}

/* An MLP of width @f on @t ranks: fc1 (gate and up fused in one
 * parameter, orthogonalized together) and fc2, @in wide. */
static void
mlp_load(const struct model *m, const struct cluster *c, double count, double f, double in, double t,
	 struct muon_load *l)
{
	load_add(l, c, count, (m->gated_mlp ? 2.0 : 1.0) * f / t, in);
	load_add(l, c, count, in, f / t);
}

double
muon_stage_ns_time(const struct model *m, const struct plan *p, const struct cluster *c, int stage)
{
	struct muon_load dense = { 0 }, expert = { 0 };
	double layers = plan_stage_layers(p, m, stage), moe = pipeline_stage_moe_layers(m, p, stage);
	double d = (double)p->dp * p->cp, edp = plan_edp(p);

	attention_load(m, p, c, layers, &dense);
	mlp_load(m, c, layers - moe, m->ffn_hidden, m->hidden, p->tp, &dense);
	if (moe > 0.0) {
		double fe = m->moe.expert_ffn_hidden > 0 ? m->moe.expert_ffn_hidden : m->ffn_hidden;
		double w = model_moe_width(m);

		/* The router (E x h, whole), the shared experts as one MLP
		 * (SharedExpertMLP), a latent MoE's two projections (whole,
		 * moe_layer.py) and the local experts, each its own
		 * parameter (TEGroupedMLP's weight<i>), over expert TP. */
		load_add(&dense, c, moe, m->moe.experts, m->hidden);
		mlp_load(m, c, m->moe.shared_experts > 0 ? moe : 0.0, m->moe.shared_experts * fe, m->hidden, p->tp,
			 &dense);
		if (m->moe.latent_size > 0) {
			load_add(&dense, c, moe, m->moe.latent_size, m->hidden);
			load_add(&dense, c, moe, m->hidden, m->moe.latent_size);
		}
		mlp_load(m, c, moe * m->moe.experts / p->ep, fe, w, plan_etp(p), &expert);
	}
	return load_time(&dense, d) + load_time(&expert, edp);
}
