#include <math.h>
#include <stddef.h>

#include "plan/mamba.h"

/*
 * The training path. Megatron-Core's MambaMixer.forward
 * (megatron/core/ssm/mamba_mixer.py, Megatron-LM d98e8a6, 2026-08) runs
 * _ssm_training, mamba_ssm's mamba_split_conv1d_scan_combined, unless
 * --disable-mamba-mem-eff-path (TransformerConfig.use_mamba_mem_eff_path,
 * default True; the unfused _static_prefill fallback warns that it is
 * "not currently using or functionally testing" it for training). It
 * passes neither rmsnorm_weight nor outproj_weight, so
 * MambaSplitConv1dScanCombinedFn (mamba_ssm ops/triton/ssd_combined.py,
 * e9594ce, 2026-07) runs: causal_conv1d_fwd over xBC, then
 * _mamba_chunk_scan_combined_fwd with the gate z (five Triton kernels:
 * _chunk_cumsum_fwd, _chunk_state_fwd, _state_passing_fwd,
 * _bmm_chunk_fwd, _chunk_scan_fwd, which multiplies by silu(z)); it saves
 * zxbcdt and the ungated scan output out_x. Megatron then runs its
 * RMSNorm (mamba_ssm layernorm_gated, one Triton kernel, no z) and
 * out_proj. Its backward recomputes the conv1d and, in
 * _mamba_chunk_scan_combined_bwd, the cumsum, C B^T, the chunk states and
 * their passing (4 kernels) before eleven backward kernels (_dz,
 * _dstates, _state_passing_bwd, _chunk_scan_chunk_state_bwd_dx, _db,
 * _dC, _dcb, two _bmm_chunk_bwd, _ddAcs_stable, _chunk_cumsum_bwd) and
 * eight small PyTorch ops (dt's clone, dCB's cast, the last-column add,
 * flip, cumsum, flip, two adds), then causal_conv1d_bwd.
 */
#define MAMBA_SSD_FWD_KERNELS 5
#define MAMBA_SSD_BWD_KERNELS (4 + 11 + 8)

/*
 * The SSD kernels' efficiency against FlashAttention-2's. Dao and Gu
 * 2024 (arXiv:2405.21060, Sec. 9.3, Fig. 10 left) time the SSD scan
 * against FlashAttention-2 on one GPU (an A100) at head dim 64 and state
 * N = 64: "faster than FlashAttention-2 for sequence length 2k and above"
 * (about 6x at 16k, as the s^2 of attention against SSD's linear work
 * gives 8x from 2k). At the 2k crossover the two take the same time, so
 * their efficiencies stand as their FLOPs a token a head: causal
 * FlashAttention-2 2 s d = 2 x 2048 x 64 = 262,144; SSD
 * (mamba_ssd_flops, Mamba2's default chunk 256, one group for all heads)
 * Q P + 4 N P = 16,384 + 16,384 = 32,768: 1/8. The SSD kernels are
 * Triton's tl.dot tiles, as FlashAttention-2 is a pre-Hopper kernel, so
 * the ratio is taken against the profile's FlashAttention-2 efficiency
 * on every GPU (its attention efficiency times fa2_attention_speed), the
 * backward against its backward (the paper times no SSD backward).
 */
#define MAMBA_SSD_FA2_RATIO 0.125

double
mamba_ssd_flops(const struct model *m, double tokens, double heads, double groups, bool backward)
{
	double q = m->mamba.chunk_size, n = m->mamba.state_dim, pd = m->mamba.head_dim;
	/* A token's share of one chunk's products (Sec. 6; the Triton
	 * kernels' loops): C B^T a group, Q x Q x N, the full square
	 * (_bmm_chunk_fwd, causal False): 2 Q N; the masked product with X
	 * a head, the causal half of 2 Q^2 P (_chunk_scan_fwd stops at the
	 * diagonal tile): Q P; the chunk's state B^T X and the output from
	 * the states C S: 2 N P each; the state passing, N P a chunk: 2 N P / Q. */
	double cb = 2.0 * q * n * groups, intra = q * pd * heads, state = 2.0 * n * pd * heads;
	double pass = 2.0 * n * pd * heads / q;

	if (!backward)
		return tokens * (cb + intra + 2.0 * state + pass);
	/* Recomputed: C B^T, the states, their passing. Then dstates (C^T dY),
	 * dx's inter-chunk part (B dS) and dB (dS X) and dC (dY S^T), 2 N P
	 * each; dx's intra-chunk part, dCB (dY X^T) and ddA (the same
	 * product again), each the causal half: Q P; the two _bmm_chunk_bwd
	 * (dCB with C, with B), 2 Q N a group each; the states' passing back. */
	return tokens * (cb + state + pass + 4.0 * state + 3.0 * intra + 2.0 * cb + pass);
}

double
mamba_ssd_efficiency(const struct cluster *c, bool backward)
{
	double fa2 = (backward ? c->gpu.attention_bwd_efficiency : c->gpu.attention_fwd_efficiency) *
		     c->gpu.fa2_attention_speed;

	return fa2 * MAMBA_SSD_FA2_RATIO;
}

/* Sizes of one TP rank (MambaMixer: nheads / tp, ngroups / tp). */
struct mamba_local {
	double tokens, heads, groups, inner, conv, in_proj;
};

static void
mamba_local(const struct model *m, const struct plan *p, struct mamba_local *l)
{
	double t = p->tp, n = m->mamba.state_dim;

	l->tokens = (double)p->micro_batch * p->seq_len;
	l->heads = model_mamba_heads(m) / t;
	l->groups = m->mamba.groups / t;
	l->inner = l->heads * m->mamba.head_dim;
	l->conv = l->inner + 2.0 * l->groups * n;
	l->in_proj = l->inner + l->conv + l->heads; /* z, xBC, dt */
}

/*
 * The SSD kernels' bytes in the forward, 2 bytes an element: x, B, C
 * (after the conv), dt and z read, out and out_x written; the fp32 chunk
 * states (H P N a chunk) written, read by the passing, written and read
 * again by _chunk_scan_fwd: 4 x 4 bytes.
 */
static double
ssd_fwd_bytes(const struct model *m, const struct mamba_local *l)
{
	double chunks = l->tokens / m->mamba.chunk_size;

	return 2.0 * l->tokens * (l->conv + l->heads + 3.0 * l->inner) +
	       16.0 * chunks * l->heads * m->mamba.head_dim * m->mamba.state_dim;
}

/*
 * The memory-bound passes, 2-byte elements. Forward: causal_conv1d_fwd
 * reads and writes xBC (4 a conv channel), the RMSNorm reads y and
 * writes its output (4 a d_inner element). Backward: the conv1d again
 * (4) and its backward (x and dy read, dx written: 6), the norm's
 * backward (x and dy read, dx written: 6, and the dweight partials'
 * sum, a second kernel). With more than one sequence a micro-batch the
 * mixer's "l b d -> b l d" rearranges are copies (zxBCdt in, y out:
 * 4 bytes an element), and their gradients' in the backward.
 */
static void
mamba_mem(const struct plan *p, const struct mamba_local *l, struct mixer_cost *out)
{
	double copies = p->micro_batch > 1 ? 4.0 * l->tokens * (l->in_proj + l->inner) : 0.0;

	out->mem_fwd_bytes = 4.0 * l->tokens * l->conv + 4.0 * l->tokens * l->inner + copies;
	out->mem_bwd_bytes = 10.0 * l->tokens * l->conv + 6.0 * l->tokens * l->inner + copies;
}

void
mamba_mixer_kernels(const struct plan *p, int *fwd, int *bwd)
{
	int copies = p->micro_batch > 1 ? 2 : 0;

	*fwd = 1 + MAMBA_SSD_FWD_KERNELS + 1 + copies; /* conv1d, SSD, norm */
	*bwd = 2 + MAMBA_SSD_BWD_KERNELS + 2 + copies;
}

void
mamba_mixer_cost(const struct model *m, const struct plan *p, const struct cluster *c,
		 struct compute_casts *casts, struct mixer_cost *out)
{
	struct compute_casts scratch = { .bytes = 0.0, .recipe = casts ? casts->recipe : 0 };
	struct compute_casts *cc = casts ? casts : &scratch;
	struct mamba_local l;
	double h = m->hidden, launch = c->gpu.launch_overhead_s, bytes;

	*out = (struct mixer_cost){ 0 };
	mamba_local(m, p, &l);
	/* in_proj column-parallel (h -> its 1/tp of z, x, B, C, dt), out_proj
	 * row-parallel (d_inner / tp -> h), TE linears as the attention's. */
	out->in_proj_fwd_s = compute_linear_time(c, p, l.tokens, l.in_proj, h, 1, cc);
	out->out_proj_fwd_s = compute_linear_time(c, p, l.tokens, h, l.inner, 1, cc);
	out->gemm_fwd_s = out->in_proj_fwd_s + out->out_proj_fwd_s;
	out->in_proj_flops = 2.0 * l.tokens * l.in_proj * h;
	out->out_proj_flops = 2.0 * l.tokens * l.inner * h;

	out->scan_fwd_flops = mamba_ssd_flops(m, l.tokens, l.heads, l.groups, false);
	out->scan_bwd_flops = mamba_ssd_flops(m, l.tokens, l.heads, l.groups, true);
	bytes = ssd_fwd_bytes(m, &l);
	out->scan_fwd_s = mixer_scan_time(c, out->scan_fwd_flops, bytes, MAMBA_SSD_FWD_KERNELS, false);
	/* The backward reads what the forward read and dY, writes a gradient
	 * of each input and recomputes the states: twice the forward's bytes. */
	out->scan_bwd_s = mixer_scan_time(c, out->scan_bwd_flops, 2.0 * bytes, MAMBA_SSD_BWD_KERNELS, true);

	mamba_mem(p, &l, out);
	mamba_mixer_kernels(p, &out->fwd_kernels, &out->bwd_kernels);
	/* fp8's promoting backward GEMMs are in casts->bwd_gemm_s, the caller's. */
	mixer_total_time(c, launch, MAMBA_SSD_FWD_KERNELS, MAMBA_SSD_BWD_KERNELS, out);
}

/*
 * Saved for the backward on one TP rank (2-byte elements):
 * MambaSplitConv1dScanCombinedFn's zxbcdt (in_proj's output, in_proj_dim
 * / tp wide) and out_x (the ungated scan output, d_inner / tp); the
 * RMSNorm's input (d_inner / tp) and rstd (fp32, one a group a token:
 * layernorm_gated's group_size d_inner / ngroups); out_proj's input, the
 * norm's output (d_inner / tp). The rest (A, D, dt_bias, the conv
 * weights) are parameters.
 */
double
mamba_mixer_activation_bytes(const struct model *m, const struct plan *p)
{
	struct mamba_local l;

	mamba_local(m, p, &l);
	return l.tokens * (2.0 * l.in_proj + 3.0 * 2.0 * l.inner + 4.0 * l.groups);
}

/* Megatron's formula literally, its d_in = 2 h whatever the heads (it
 * equals heads x head_dim in Megatron's and Nemotron-H's shapes) and its
 * scan term 7 d_in N a token (its comment: to be updated for the SSD
 * kernels). */
double
mamba_layer_model_flops(const struct model *m, double tokens)
{
	double h = m->hidden, d_in = 2.0 * h, n = m->mamba.state_dim;
	double heads = m->mamba.heads > 0 ? m->mamba.heads : floor(d_in / m->mamba.head_dim);

	return 2.0 * tokens * h * (2.0 * d_in + 2.0 * m->mamba.groups * n + heads) + 7.0 * tokens * d_in * n +
	       2.0 * tokens * d_in * h;
}

bool
mamba_plan_check(const struct model *m, const struct plan *p, struct plan_error *err)
{
	if (!model_is_hybrid(m) || model_kind_layers(m, MODEL_KIND_MAMBA) == 0)
		return true;
	/* Megatron-Core's MambaContextParallel (ssm/mamba_context_parallel.py)
	 * trades the sequence split for a head split by all-to-alls around
	 * the conv and the scan; plan-cli does not price them. */
	if (p->cp > 1)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "model '%s' has Mamba layers, whose context parallelism (Megatron-Core's "
				      "MambaContextParallel) plan-cli does not price; use cp 1",
				      m->name);
	if (model_mamba_heads(m) % p->tp != 0 || m->mamba.groups % p->tp != 0)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "tp %d must divide the Mamba heads (%d) and groups (%d) of model '%s' "
				      "(MambaMixer splits both)",
				      p->tp, model_mamba_heads(m), m->mamba.groups, m->name);
	return true;
}
