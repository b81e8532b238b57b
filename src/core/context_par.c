/*
 * Context parallelism's communication per layer. Ring attention (Liu et
 * al., "Ring Attention with Blockwise Transformers", 2023; Megatron-Core's
 * context parallelism): cp - 1 steps each passing the local K and V to
 * the next rank, hidden behind the blockwise attention of the step
 * before; the backward passes K, V and their gradients. DeepSpeed-Ulysses
 * (Jacobs et al., arXiv:2309.14509): an all-to-all of Q, K, V before the
 * attention and one of its output after, heads split cp ways.
 *
 * Ring attention as PyTorch's context_parallel runs it (torch.distributed
 * .tensor.experimental, 2024-25; torchtitan's default
 * context_parallel_rotate_method "allgather": "all-gather all kv shards
 * on ranks after the first sub-SDPA computation"): one all-gather of every
 * rank's K and V, issued after the local block and waited for before the
 * next, so exposed; in the backward K and V are gathered again and each
 * step's dK, dV passed on to the next rank, hidden behind the step after.
 * Every block after the first is its own SDPA call, whose partial output
 * is merged into an fp32 accumulator (_SDPAMerger: read the accumulator
 * and the block's output, write the accumulator, 3 x 4 bytes per output
 * element), and whose dQ is added in fp32 in the backward (read and write,
 * 8 bytes per element of Q); each call pays the kernel's fixed cost.
 */
#include <math.h>
#include <string.h>

#include "plan/collective.h"
#include "plan/compute.h"
#include "plan/context_par.h"

/* fp8attn: begin ring attention per framework */
static void
ring_allgather(const struct cluster *c, const struct plan_layout *lay, double cp, double chunk,
	       double step, double block_bwd, double tokens, double q_width, double v_width,
	       struct cp_layer_comm *out)
{
	double gather = collective_time(c, &lay->cp, COLL_ALLGATHER, COLL_ALGO_RING, cp * chunk);
	double merge = compute_memory_time(c, 12.0 * tokens * v_width) + c->gpu.attention_overhead_s;
	double dq = compute_memory_time(c, 8.0 * tokens * q_width) + c->gpu.attention_overhead_s;

	out->fwd_s = gather + (cp - 1.0) * merge;
	out->bwd_s = gather + (cp - 1.0) * (fmax(0.0, step - block_bwd) + dq);
}
/* fp8attn: end ring attention per framework */

/*
 * plan-cli nemosmall: the work around the attention kernels that
 * Transformer Engine's p2p ring does (AttnFuncWithCP, transformer_engine/
 * pytorch/attention.py at 7d576ed, the TE of NeMo r2.0.0rc1's Dockerfile,
 * between v1.7 and v1.8; the same steps in v2.5's dot_product_attention/
 * context_parallel.py), Megatron-Core's context parallelism. With a causal
 * mask rank r holds chunks r and 2cp-1-r of the sequence. In 16-bit bytes,
 * Q, O and KV the rank's queries, output and keys and values:
 * - forward: torch.cat((k, v)) into the first send buffer (read and write:
 *   2 KV); out = torch.empty_like(q).zero_() (O); per step a fused
 *   out.add_(out_per_step * exp(lse_step - lse)) (flash_attn_fwd_out_
 *   correction: read the step's output and out, write out, 3 O), and
 *   per step after the first flash_attn_fwd_softmax_lse_correction (per
 *   row: no bytes counted). Steps 1..r run the whole Q against the first
 *   half of the received K and V, copied out (.contiguous(): KV), the
 *   steps after r half of Q (q[1].contiguous(): Q) against all of it,
 *   merged into half of out (1.5 O). Rank cp-1: O (1 + 3 cp) + KV (cp +
 *   1); rank 0: O (2.5 + 1.5 cp) + Q (cp - 1) + 2 KV; 3 cp kernels either.
 *   The steps' kernels alternate between two streams ("to resolve wave
 *   quantization issue of Flash Attn in each step"), so a step's fill
 *   overlaps the tail of the step before: no fixed cost beyond the one
 *   call compute.c counts.
 * - backward (one stream): the saved KV copied into the first buffer (2
 *   KV); the steps in reverse, each step's dK and dV concatenated
 *   (torch.cat) and accumulated into dkv, its dQ into dq. Rank cp-1:
 *   the half K and V copied again for the cp - 1 steps before the last
 *   (KV each), dq the first step's copied (2 Q) and the others added (3
 *   Q each), the concatenations (KV for a half, 2 KV for the last), dkv
 *   copied into its first half (KV), half added (1.5 KV) and all added
 *   at the end (3 KV): Q (3 cp - 1) + KV (3.5 cp + 3), 4 cp kernels.
 *   Rank 0: q, out and dout's halves copied for the cp - 1 steps before
 *   the last (3 Q each), dq's halves copied and added (Q (1.5 cp +
 *   0.5)), full concatenations (2 KV each) and dkv copied, added and
 *   half added and copied (KV (3 cp - 1.5)): Q (4.5 cp - 2.5) + KV (5 cp
 *   + 0.5), 6 cp kernels. cp attention backward calls, cp - 1 more than
 *   compute.c counts, each with the kernel's fixed cost (attention_
 *   overhead).
 * Every term is linear in r, so ranks 0 and cp-1 bound the others; the
 * ring passes K and V between neighbours each step, so the slower of the
 * two sets its pace in each pass.
 * @q_bytes, @o_bytes, @kv_bytes: Q, O and K and V of the rank, 16-bit.
 */
static void
ring_p2p_passes(const struct cluster *c, double cp, double q_bytes, double o_bytes, double kv_bytes,
		double *fwd_s, double *bwd_s)
{
	double launch = c->gpu.launch_overhead_s;
	double last_fwd = o_bytes * (1.0 + 3.0 * cp) + kv_bytes * (cp + 1.0);
	double first_fwd = o_bytes * (2.5 + 1.5 * cp) + q_bytes * (cp - 1.0) + 2.0 * kv_bytes;
	double last_bwd = compute_memory_time(c, q_bytes * (3.0 * cp - 1.0) + kv_bytes * (3.5 * cp + 3.0)) +
			  4.0 * cp * launch;
	double first_bwd = compute_memory_time(c, q_bytes * (4.5 * cp - 2.5) + kv_bytes * (5.0 * cp + 0.5)) +
			   6.0 * cp * launch;

	*fwd_s = compute_memory_time(c, fmax(last_fwd, first_fwd)) + 3.0 * cp * launch;
	*bwd_s = fmax(last_bwd, first_bwd) + (cp - 1.0) * c->gpu.attention_overhead_s;
}

/*
 * plan-cli cpag: Megatron-Core's cp_comm_type "all_gather"
 * (transformer_config.py @d98e8a6 l. 1034-1038: "The all-gather is not
 * async, and cannot be overlapped"), run by Transformer Engine's
 * AttnFuncWithCPAndKVAllGather (transformer_engine/pytorch/attention/
 * dot_product_attention/context_parallel.py @d0067d0, l. 3014-4168; Llama
 * 3, arXiv:2407.21783, Sec. 3.3.2). Forward: gather_along_first_dim of K
 * and of V over the CP group (l. 3215-3216), before the two steps' kernels,
 * so exposed; only the local q, k, v and out are saved (l. 3613, 3623), so the
 * backward gathers K and V again (l. 3788-3789), runs the two steps, and
 * reduce-scatters the full-sequence dK and dV after them (l. 4121-4123),
 * exposed. In 16-bit bytes @k_bytes and @v_bytes are the rank's local K and
 * V: each all-gather carries cp times them (collective.c: bytes the
 * gathered size), each reduce-scatter cp times them (the input size).
 *
 * DSA (Megatron-Core's DSAttention, experimental_attention_variant/dsa.py
 * @d98e8a6 l. 1835, 1847, 1984) gathers its keys and values itself with
 * gather_from_sequence_parallel_region (tensor_parallel/mappings.py:
 * all-gather forward, reduce-scatter of the gradient backward), and keeps
 * the gathered tensors for the backward rather than gathering again; on
 * an indexer layer the indexer's keys (one head of index_head_dim) are
 * gathered too (without the indexer loss, under no_grad: no backward).
 * @idx_bytes is the indexer keys' local bytes averaged over the layers.
 */
static void
cp_allgather(const struct cluster *c, const struct plan_layout *lay, double cp, double k_bytes,
	     double v_bytes, double idx_bytes, bool dsa, struct cp_layer_comm *out)
{
	double ag = collective_time(c, &lay->cp, COLL_ALLGATHER, COLL_ALGO_RING, cp * k_bytes) +
		    collective_time(c, &lay->cp, COLL_ALLGATHER, COLL_ALGO_RING, cp * v_bytes);
	double rs = collective_time(c, &lay->cp, COLL_REDUCESCATTER, COLL_ALGO_RING, cp * k_bytes) +
		    collective_time(c, &lay->cp, COLL_REDUCESCATTER, COLL_ALGO_RING, cp * v_bytes);
	double idx = idx_bytes > 0.0 ? collective_time(c, &lay->cp, COLL_ALLGATHER, COLL_ALGO_RING, cp * idx_bytes)
				     : 0.0;

	out->step_s = ag;
	out->fwd_s = ag + idx;
	out->bwd_s = dsa ? rs : ag + rs;
	/* What one rank sends: (cp - 1) / cp of each gathered or scattered total. */
	out->bytes = (cp - 1.0) * ((dsa ? 2.0 : 3.0) * (k_bytes + v_bytes) + idx_bytes);
}

/*
 * plan-cli nemosmall: whether the recomputation runs the CP attention's
 * forward again, its exchanges and passes with it: full recomputation,
 * and Megatron-Core's selective one, which checkpoints the core attention
 * (compute.c: attention.py's _checkpointed_attention_forward around
 * TEDotProductAttention, inside which Transformer Engine runs
 * AttnFuncWithCP whole), or the core_attn recompute module.
 */
static bool
cp_core_attn_rerun(const struct plan *pl, const struct framework *fw)
{
	if (pl->recompute == PLAN_RECOMPUTE_FULL)
		return true;
	if (pl->recompute != PLAN_RECOMPUTE_SELECTIVE)
		return false;
	if (pl->recompute_modules)
		return ((unsigned)pl->recompute_modules & 1u << PLAN_RM_CORE_ATTN) != 0;
	return fw && fw->selective_recompute == FRAMEWORK_SAC_CORE_ATTN && pl->flash_attention;
}

void
cp_layer_comm(const struct model *m, const struct plan *pl, const struct cluster *c,
	      const struct framework *fw, const struct plan_layout *lay, const struct compute_layer *cl,
	      struct cp_layer_comm *out)
{
	double t = pl->tp, cp = pl->cp, tokens = (double)pl->micro_batch * pl->seq_len;
	double kv = (m->kv_heads >= pl->tp ? (double)m->kv_heads / t : 1.0);
	double q_width = (double)m->heads / t * model_qk_head_dim(m);
	double v_width = (double)m->heads / t * model_v_head_dim(m);

	memset(out, 0, sizeof(*out));
	/* Only the attention exchanges keys and values across the CP ranks: a
	 * hybrid model's MLP layer has none, and its Mamba and GDN layers' CP
	 * (Megatron-Core's MambaContextParallel, GDN's all-to-alls) is refused
	 * by mixer_plan_check, not priced. */
	if (pl->cp <= 1 || !model_has_part(m, MODEL_PART_ATTENTION))
		return;
	if (pl->cp_method == PLAN_CP_RING) {
		/* The local K and V: 2 x tokens x kv heads x head size, 16-bit. */
		double chunk = 2.0 * 2.0 * tokens * kv * model_qk_head_dim(m);
		bool inter = lay->cp.nodes > 1;
		double step = collective_p2p_time(c, inter, chunk);
		double block_fwd = cl->attn_fwd_s / cp, block_bwd = cl->attn_bwd_s / cp;

		out->step_s = step;
		out->fwd_s = (cp - 1.0) * fmax(0.0, step - block_fwd);
		/* Backward: K and V forward again, their gradients back. */
		out->bwd_s = (cp - 1.0) * fmax(0.0, 2.0 * step - block_bwd);
		out->bytes = (cp - 1.0) * 3.0 * chunk;
		if (fw && fw->cp_ring == FRAMEWORK_RING_ALLGATHER) {
			ring_allgather(c, lay, cp, chunk, step, block_bwd, tokens, q_width, v_width, out);
		} else {
			double kv_bytes = 2.0 * tokens * kv * (model_qk_head_dim(m) + model_v_head_dim(m));
			double pf, pb;

			ring_p2p_passes(c, cp, 2.0 * tokens * q_width, 2.0 * tokens * v_width, kv_bytes, &pf, &pb);
			out->fwd_s += pf;
			out->bwd_s += pb;
		}
	} else if (pl->cp_method == PLAN_CP_ALLGATHER) {
		/* The local K and V, 16-bit: MLA's are the up-projected per-head
		 * K and V (multi_latent_attention.py @d98e8a6 l. 831-836 absorbs
		 * into the latent only when decoding). */
		double k_bytes = 2.0 * tokens * kv * model_qk_head_dim(m);
		double v_bytes = 2.0 * tokens * kv * model_v_head_dim(m);
		bool dsa = model_has_dsa(m);

		/* DSA runs on absorbed MLA: its key is the one shared latent
		 * (kv_lora_rank + qk_rope_head_dim, whole on every TP rank) and
		 * its value None (absorbed_mla.py @d98e8a6 l. 225-226, 532,
		 * 859-863): that latent is what dsa.py gathers. */
		if (dsa) {
			k_bytes = 2.0 * tokens * ((double)m->mla.kv_lora_rank + m->mla.qk_rope_head_dim);
			v_bytes = 0.0;
		}
		double idx = dsa ? 2.0 * tokens * m->dsa.index_head_dim * model_dsa_indexer_layers(m) / m->layers
				 : 0.0;

		cp_allgather(c, lay, cp, k_bytes, v_bytes, idx, dsa, out);
	} else {
		/* Q, K, V in, O out: what one rank sends in each all-to-all. */
		double qkv = 2.0 * tokens * (q_width + 2.0 * kv * model_qk_head_dim(m));
		double o = 2.0 * tokens * v_width;
		double a2a = collective_time(c, &lay->cp, COLL_ALLTOALL, COLL_ALGO_RING, qkv) +
			     collective_time(c, &lay->cp, COLL_ALLTOALL, COLL_ALGO_RING, o);

		out->step_s = a2a;
		out->fwd_s = a2a;
		out->bwd_s = a2a;
		out->bytes = 2.0 * (cp - 1.0) / cp * (qkv + o);
	}
	out->recompute_s = cp_core_attn_rerun(pl, fw) ? out->fwd_s : 0.0;
}
