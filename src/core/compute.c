#include <math.h>

#include "plan/compute.h"

double
compute_gemm_time(const struct cluster *c, double m, double n, double k, double batch)
{
	double flops = 2.0 * m * n * k * batch;
	double bytes = 2.0 * batch * (m * k + k * n + m * n);
	double eff = cluster_gemm_efficiency(c, flops);
	double t_flop = flops / (c->gpu.peak_flops * eff);
	double t_mem = bytes / (c->gpu.memory_bw_Bps * c->gpu.memory_efficiency);

	return fmax(t_flop, t_mem);
}

double
compute_memory_time(const struct cluster *c, double bytes)
{
	return bytes / (c->gpu.memory_bw_Bps * c->gpu.memory_efficiency);
}

/*
 * Element-wise traffic of one layer's forward, in bytes. Derived from the
 * tensors each operator reads and writes, following the per-operator
 * inventory of Korthikanti et al. 2022 ("Reducing Activation Recomputation
 * in Large Transformer Models", Sec. 4.1): two norms (read + write 2-byte
 * tensors), two fused bias-dropout-add (operand, residual, output, 1-byte
 * mask: 7 bytes/element), the MLP activation, rotary embedding, and for
 * standard attention the fused scale-mask-softmax (read + write) and the
 * attention dropout (read, write, mask) over the a*s^2*b scores.
 */
static double
layer_fwd_mem_bytes(const struct model *m, const struct plan *p, bool moe, double *attn_core)
{
	double t = p->tp, b = p->micro_batch, s = p->seq_len, h = m->hidden;
	double tokens = b * s;
	double h_rep = p->sequence_parallel ? h / t : h; /* replicated unless SP */
	double kvd = (double)m->kv_heads * model_head_dim(m);
	double bytes = 0.0;

	bytes += 2.0 * 4.0 * tokens * h_rep;                   /* two norms */
	bytes += 2.0 * 7.0 * tokens * h_rep;                   /* two bias-dropout-add */
	/* activation */
	if (moe) {
		double rows = tokens * (m->moe.capacity_factor * m->moe.top_k + m->moe.shared_experts);

		bytes += (m->gated_mlp ? 6.0 : 4.0) * rows * m->moe.expert_ffn_hidden / t;
		/* Permute tokens to their experts and back: read + write, twice. */
		bytes += 2.0 * 4.0 * tokens * m->moe.capacity_factor * m->moe.top_k * h / t;
	} else {
		bytes += (m->gated_mlp ? 6.0 : 4.0) * tokens * m->ffn_hidden / t;
	}
	if (m->position_embedding == MODEL_POS_ROTARY)
		bytes += 4.0 * tokens * (h + kvd) / t;
	*attn_core = p->flash_attention ? 0.0 : 9.0 * b * (m->heads / t) * s * s;
	return bytes + *attn_core;
}

/*
 * The MLP of an MoE layer on one GPU (Fedus et al. 2021; Megatron-Core's
 * grouped GEMM): the router, then E/ep local experts, each fed by every
 * EP rank with cf * k * tokens * ep / E rows (balanced load padded to the
 * capacity), and the shared experts over all tokens. Expert weights are
 * split by TP like the dense MLP.
 */
static double
moe_mlp_gemm_time(const struct model *m, const struct plan *p, const struct cluster *c)
{
	double t = p->tp, tokens = (double)p->micro_batch * p->seq_len, h = m->hidden;
	double f = m->moe.expert_ffn_hidden, in = m->gated_mlp ? 2.0 * f : f;
	double local = (double)m->moe.experts / p->ep;
	double rows = m->moe.capacity_factor * m->moe.top_k * tokens * p->ep / m->moe.experts;
	double time = compute_gemm_time(c, tokens, m->moe.experts, h, 1); /* router */

	time += compute_gemm_time(c, rows, in / t, h, local) + compute_gemm_time(c, rows, h, f / t, local);
	if (m->moe.shared_experts > 0) {
		double sf = f * m->moe.shared_experts;

		time += compute_gemm_time(c, tokens, (m->gated_mlp ? 2.0 * sf : sf) / t, h, 1) +
			compute_gemm_time(c, tokens, h, sf / t, 1);
	}
	return time;
}

void
compute_layer_time(const struct model *m, const struct plan *p,
		   const struct cluster *c, bool moe, struct compute_layer *out)
{
	double t = p->tp, b = p->micro_batch, s = p->seq_len, h = m->hidden;
	double tokens = b * s;
	double d = model_head_dim(m);
	double kvd = (double)m->kv_heads * d;
	double heads_local = m->heads / t;
	double mlp_in = m->gated_mlp ? 2.0 * m->ffn_hidden : m->ffn_hidden;
	double gemm = 0.0, attn_gemm, attn_mem, mem_bytes;

	/* Megatron's column/row split (Shoeybi et al. 2019): each GPU holds 1/t
	 * of QKV, the heads, the output projection and both MLP matrices. */
	gemm += compute_gemm_time(c, tokens, (h + 2.0 * kvd) / t, h, 1);   /* QKV */
	gemm += compute_gemm_time(c, tokens, h, h / t, 1);                 /* proj */
	if (moe)
		out->mlp_fwd_s = moe_mlp_gemm_time(m, p, c);
	else
		out->mlp_fwd_s = compute_gemm_time(c, tokens, mlp_in / t, h, 1) +  /* fc1 (+gate) */
				 compute_gemm_time(c, tokens, h, m->ffn_hidden / t, 1); /* fc2 */
	gemm += out->mlp_fwd_s;
	if (p->flash_attention) {
		/* One fused kernel: 4 s^2 d FLOPs per head, reads Q K V writes O. */
		double flops = 4.0 * s * s * d * b * heads_local;
		double bytes = 2.0 * 4.0 * s * d * b * heads_local;
		double eff = cluster_gemm_efficiency(c, flops);

		attn_gemm = fmax(flops / (c->gpu.peak_flops * eff), compute_memory_time(c, bytes));
	} else {
		attn_gemm = compute_gemm_time(c, s, s, d, b * heads_local)    /* Q K^T */
			  + compute_gemm_time(c, s, d, s, b * heads_local);   /* scores V */
	}
	gemm += attn_gemm;
	mem_bytes = layer_fwd_mem_bytes(m, p, moe, &attn_mem);

	out->fwd_gemm_s = gemm;
	out->fwd_mem_s = compute_memory_time(c, mem_bytes);
	out->fwd_s = out->fwd_gemm_s + out->fwd_mem_s;
	/* Backward: a dX and a dW GEMM per forward GEMM (2x the FLOPs), and
	 * element-wise gradients that read and write about twice the bytes. */
	out->bwd_s = 2.0 * out->fwd_s;
	switch (p->recompute) {
	case PLAN_RECOMPUTE_FULL:
		out->recompute_s = out->fwd_s;
		break;
	case PLAN_RECOMPUTE_SELECTIVE:
		/* Korthikanti et al. Sec. 4.2: only the attention core is redone;
		 * a fused (flash) attention already recomputes in its backward. */
		out->recompute_s = p->flash_attention ? 0.0 :
				   attn_gemm + compute_memory_time(c, attn_mem);
		break;
	default:
		out->recompute_s = 0.0;
	}
}

void
compute_ends_time(const struct model *m, const struct plan *p,
		  const struct cluster *c, struct compute_ends *out)
{
	double t = p->tp, tokens = (double)p->micro_batch * p->seq_len, h = m->hidden;
	double v_local = m->vocab / t;

	/* Embedding lookup: read rows, write the activations (+ dropout). */
	out->embed_fwd_s = compute_memory_time(c, 2.0 * 2.0 * tokens * h);
	out->embed_bwd_s = 2.0 * out->embed_fwd_s;
	/* Logits: a tokens x h x V/t GEMM (vocab-parallel), then the fused
	 * cross-entropy reading and writing fp32 logits about three times. */
	out->head_fwd_s = compute_gemm_time(c, tokens, v_local, h, 1) +
			  compute_memory_time(c, 12.0 * tokens * v_local);
	out->head_bwd_s = 2.0 * compute_gemm_time(c, tokens, v_local, h, 1) +
			  compute_memory_time(c, 8.0 * tokens * v_local);
}

/*
 * Mixed-precision Adam (Rajbhandari et al. 2020, ZeRO, Sec. 3.1: 16 bytes
 * of state per parameter): the step reads the 16-bit gradient and the
 * fp32 master weight, momentum and variance, and writes the three fp32
 * states and the 16-bit weight: 2 + 12 + 12 + 2 = 28 bytes per parameter.
 */
double
compute_optimizer_time(const struct cluster *c, double params)
{
	return compute_memory_time(c, 28.0 * params);
}
