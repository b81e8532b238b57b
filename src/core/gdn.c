#include <stddef.h>

#include "plan/gdn.h"

/*
 * The training path. Megatron-Core's GatedDeltaNet.forward
 * (megatron/core/ssm/gated_delta_net/gdn.py and common.py, Megatron-LM
 * d98e8a6, 2026-08): in_proj (TE's fused norm + column-parallel linear)
 * gives q, k, v, the output gate z, beta and alpha; FLA's causal_conv1d
 * (SiLU fused) runs over q, k and v; _prepare_input_for_gated_delta_rule
 * (a jit_fuser function) L2-normalises q and k (FLA's l2norm), repeats
 * them to the value heads, copies v and z contiguous and computes the
 * gates g = -exp(A_log) softplus(alpha + dt_bias) in fp32 and
 * sigmoid(beta); FLA's chunk_gated_delta_rule runs its forward
 * (chunk_gated_delta_rule_fwd: chunk_local_cumsum,
 * chunk_scaled_dot_kkt_fwd, solve_tril, recompute_w_u_fwd,
 * chunk_gated_delta_rule_fwd_h, chunk_fwd_o: 6 kernels); the gated
 * RMSNorm (out_norm over each value head, times silu(z)) and out_proj
 * end it. The backward (chunk_gated_delta_rule_bwd) recomputes w, u and
 * the chunk states, then chunk_bwd_dv_local,
 * chunk_gated_delta_rule_bwd_dhu, chunk_bwd_dqkwg, prepare_wy_repr_bwd
 * and the reverse cumsum of dg: 7 kernels, and one for the gates'.
 * FLA's kernels are Triton tl.dot tiles as mamba_ssm's are; plan-cli
 * runs them at the SSD's efficiency (mixer_scan_time), unmeasured.
 */
#define GDN_RULE_FWD_KERNELS 6
#define GDN_RULE_BWD_KERNELS 8
/* _prepare_input's kernels: l2norm, q's and k's repeat (or contiguous
 * copy), v's and z's copies, g, beta; its backward one each but the
 * copies of v and z, whose gradients are views, and a sum over the
 * repeated heads for q and k: 6. */
#define GDN_PREP_FWD_KERNELS 7
#define GDN_PREP_BWD_KERNELS 6

double
gdn_rule_flops(const struct model *m, double tokens, double heads, bool backward)
{
	double c = GDN_CHUNK, dk = m->gdn.key_head_dim, dv = m->gdn.value_head_dim;
	/* A token's share of one chunk's products, a value head, 2 FLOPs a
	 * multiply-add (the chunked WY form, arXiv:2412.06464 Sec. 3.3 and
	 * FLA's kernels): beta K K^T within the chunk, the full tile
	 * (chunk_scaled_dot_kkt_fwd): 2 C dk; the triangular solve of
	 * (I + A) (solve_tril), C^3 / 3 a chunk: 2 C^2 / 3; w = A (beta k)
	 * and u = A (beta v) (recompute_w_u_fwd): 2 C (dk + dv); the states,
	 * v_new = u - w S and S += k^T v_new (chunk_gated_delta_rule_fwd_h):
	 * 4 dk dv; the output q S + (q k^T) v_new (chunk_fwd_o): 2 dk dv +
	 * 2 C dk + 2 C dv. */
	double kkt = 2.0 * c * dk, solve = 2.0 * c * c / 3.0, wu = 2.0 * c * (dk + dv);
	double states = 4.0 * dk * dv, out = 2.0 * dk * dv + 2.0 * c * (dk + dv);
	double fwd = kkt + solve + wu + states + out;

	if (!backward)
		return tokens * heads * fwd;
	/* Each forward product has two gradient products, and the backward
	 * first recomputes w, u and the states (chunk_gated_delta_rule_bwd). */
	return tokens * heads * (2.0 * fwd + wu + states);
}

/* Sizes of one TP rank (_GDNBase: qk_dim / tp, v_dim / tp, heads / tp). */
struct gdn_local {
	double tokens, qk, v, vheads, conv, in_proj, qk_rep; /* qk_rep: q or k repeated to the value heads */
};

static void
gdn_local(const struct model *m, const struct plan *p, struct gdn_local *l)
{
	double t = p->tp;

	l->tokens = (double)p->micro_batch * p->seq_len;
	l->qk = model_gdn_qk_dim(m) / t;
	l->v = model_gdn_v_dim(m) / t;
	l->vheads = m->gdn.value_heads / t;
	l->conv = model_gdn_conv_dim(m) / t;
	l->in_proj = model_gdn_in_proj_dim(m) / t;
	l->qk_rep = l->vheads * m->gdn.key_head_dim;
}

/*
 * The rule's forward bytes, 2 an element (FLA keeps its intermediates
 * in the inputs' dtype) and 4 for g: q, k, v, g and beta read; A (C a
 * token a head), w and u written and read back; the chunk states (dk dv
 * a chunk a head) written by chunk_gated_delta_rule_fwd_h and read by
 * chunk_fwd_o; v_new written and read; the output written.
 */
static double
rule_fwd_bytes(const struct model *m, const struct gdn_local *l)
{
	double per_token = 2.0 * (2.0 * l->qk_rep + l->v) + 6.0 * l->vheads + 4.0 * l->vheads * GDN_CHUNK +
			   4.0 * (l->qk_rep + l->v) + 4.0 * l->v + 2.0 * l->v;
	double states = 4.0 * (l->tokens / GDN_CHUNK) * l->vheads * m->gdn.key_head_dim * m->gdn.value_head_dim;

	return l->tokens * per_token + states;
}

/*
 * The memory-bound passes, 2-byte elements. Forward: the conv1d reads
 * and writes q, k and v (4 a channel); _prepare_input reads and writes q
 * and k for the L2 norm (4 an element), reads them and writes them
 * repeated to the value heads (2 + 2 x repeat), copies v and z (4 each)
 * and makes g (alpha read, fp32 g written: 6 a head) and beta (4); the
 * gated norm reads the rule's output and z and writes y (6 a v element).
 * Backward: the norm's (dy, x and z read, dx and dz written: 10), the
 * gates' and the L2 norm's (dy, x read, dx written: 6 a q or k element),
 * the repeat's sum (2 x repeat + 2), the conv1d's (x and dy read, dx
 * written: 6). With more than one sequence a micro-batch the norm's
 * output is transposed back (s b, common.py _gated_norm_and_a2a: a copy,
 * 4 a v element), and its gradient.
 */
static void
gdn_mem(const struct plan *p, const struct gdn_local *l, struct mixer_cost *out)
{
	double copies = p->micro_batch > 1 ? 4.0 * l->tokens * l->v : 0.0;
	double t = l->tokens;
	double prep = 4.0 * 2.0 * l->qk + 2.0 * (2.0 * l->qk + 2.0 * l->qk_rep) + 8.0 * l->v + 10.0 * l->vheads;
	double prep_bwd = 6.0 * 2.0 * l->qk + 2.0 * (2.0 * l->qk_rep + 2.0 * l->qk) + 10.0 * l->vheads;

	out->mem_fwd_bytes = t * (4.0 * l->conv + prep + 6.0 * l->v) + copies;
	out->mem_bwd_bytes = t * (6.0 * l->conv + prep_bwd + 10.0 * l->v) + copies;
}

void
gdn_mixer_kernels(const struct model *m, const struct plan *p, int *fwd, int *bwd)
{
	int copies = p->micro_batch > 1 ? 1 : 0;

	(void)m;
	/* conv1d, _prepare_input, rule, norm and gate (2); backward: conv1d
	 * (dx and dweight), _prepare_input's, rule, norm (2 and dweight). */
	*fwd = 1 + GDN_PREP_FWD_KERNELS + GDN_RULE_FWD_KERNELS + 2 + copies;
	*bwd = 2 + GDN_PREP_BWD_KERNELS + GDN_RULE_BWD_KERNELS + 3 + copies;
}

void
gdn_mixer_cost(const struct model *m, const struct plan *p, const struct cluster *c,
	       struct compute_casts *casts, struct mixer_cost *out)
{
	struct compute_casts scratch = { .bytes = 0.0, .recipe = casts ? casts->recipe : 0 };
	struct compute_casts *cc = casts ? casts : &scratch;
	struct gdn_local l;
	double h = m->hidden, launch = c->gpu.launch_overhead_s, bytes;

	*out = (struct mixer_cost){ 0 };
	gdn_local(m, p, &l);
	/* in_proj column-parallel (h -> its 1/tp of q, k, v, z, beta, alpha),
	 * out_proj row-parallel (v / tp -> h): TE linears, as Mamba's. */
	out->in_proj_fwd_s = compute_linear_time(c, p, l.tokens, l.in_proj, h, 1, cc);
	out->out_proj_fwd_s = compute_linear_time(c, p, l.tokens, h, l.v, 1, cc);
	out->gemm_fwd_s = out->in_proj_fwd_s + out->out_proj_fwd_s;
	out->in_proj_flops = 2.0 * l.tokens * l.in_proj * h;
	out->out_proj_flops = 2.0 * l.tokens * l.v * h;

	out->scan_fwd_flops = gdn_rule_flops(m, l.tokens, l.vheads, false);
	out->scan_bwd_flops = gdn_rule_flops(m, l.tokens, l.vheads, true);
	bytes = rule_fwd_bytes(m, &l);
	out->scan_fwd_s = mixer_scan_time(c, out->scan_fwd_flops, bytes, GDN_RULE_FWD_KERNELS, false);
	/* The backward reads what the forward read and the output's gradient,
	 * writes a gradient of each input and recomputes w, u and the states:
	 * twice the forward's bytes. */
	out->scan_bwd_s = mixer_scan_time(c, out->scan_bwd_flops, 2.0 * bytes, GDN_RULE_BWD_KERNELS, true);

	gdn_mem(p, &l, out);
	gdn_mixer_kernels(m, p, &out->fwd_kernels, &out->bwd_kernels);
	mixer_total_time(c, launch, GDN_RULE_FWD_KERNELS, GDN_RULE_BWD_KERNELS, out);
}

/*
 * Saved for the backward on one TP rank (2-byte elements unless said):
 * in_proj's whole output (the conv1d saves its input q, k, v, a view of
 * it, and beta and alpha are views too), the conv1d's output (the L2
 * norm's input is a view of it); the rule's q and k (repeated to the
 * value heads), v, beta, A (C a head) and g (fp32); softplus's input
 * (fp32, a head); the gated norm's input and z and its rstd (fp32, a
 * head); out_proj's input, the norm's output.
 */
double
gdn_mixer_activation_bytes(const struct model *m, const struct plan *p)
{
	struct gdn_local l;

	gdn_local(m, p, &l);
	return l.tokens * (2.0 * l.in_proj + 2.0 * l.conv + 2.0 * (2.0 * l.qk_rep + l.v + l.vheads) +
			   2.0 * GDN_CHUNK * l.vheads + 4.0 * l.vheads + 4.0 * l.vheads + 2.0 * 2.0 * l.v +
			   4.0 * l.vheads + 2.0 * l.v);
}

/* Megatron-LM's gdn_layer_flops literally (GDN, not GDN2): in_proj,
 * conv1d, the rule as 4 v_head_dim^2 a value head, out_proj, 2 FLOPs a
 * multiply-add. */
double
gdn_layer_model_flops(const struct model *m, double tokens)
{
	double h = m->hidden, qk = model_gdn_qk_dim(m), v = model_gdn_v_dim(m), dv = m->gdn.value_head_dim;

	return 2.0 * tokens *
	       (h * model_gdn_in_proj_dim(m) + m->gdn.conv_kernel * (2.0 * qk + v) +
		m->gdn.value_heads * dv * dv * 4.0 + h * v);
}

bool
gdn_plan_check(const struct model *m, const struct plan *p, struct plan_error *err)
{
	if (!model_is_hybrid(m) || model_kind_layers(m, MODEL_KIND_GDN) == 0)
		return true;
	/* GDN's own context parallelism (common.py a2a_cp_to_hp: all-to-alls
	 * trading the sequence split for a head split) is not priced. */
	if (p->cp > 1)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "model '%s' has Gated DeltaNet layers, whose context parallelism (all-to-alls "
				      "to a head split) plan-cli does not price; use cp 1",
				      m->name);
	if (m->gdn.key_heads % p->tp != 0 || m->gdn.value_heads % p->tp != 0)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "tp %d must divide the Gated DeltaNet key heads (%d) and value heads (%d) of "
				      "model '%s' (TransformerConfig asserts both)",
				      p->tp, m->gdn.key_heads, m->gdn.value_heads, m->name);
	return true;
}
