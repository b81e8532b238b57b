#include <math.h>
#include <stddef.h>

#include "plan/attn_shape.h"
#include "plan/compute.h"
#include "plan/expert_par.h"
#include "plan/fp8_recipe.h"
#include "plan/memory.h"
#include "plan/mixer.h"

/*
 * What a GEMM's shape and the GPU's state take from the size curve: the
 * skinny-GEMM factor, the partial last wave of CTA tiles
 * (cluster_gemm_wave_factor) and the sustained clock under the board's
 * power limit (gpu_clock_factor). One place for bf16 and fp8 GEMMs and
 * for fit-logs --gemm, which inverts it.
 */
double
compute_gemm_factor(const struct cluster *c, double m, double n, double k, double batch)
{
	return cluster_gemm_shape_factor(c, fmin(m, fmin(n, k))) * cluster_gemm_wave_factor(c, m, n, k, batch) *
	       gpu_clock_factor(&c->gpu);
}

double
compute_gemm_time(const struct cluster *c, double m, double n, double k, double batch)
{
	double flops = 2.0 * m * n * k * batch;
	double bytes = 2.0 * batch * (m * k + k * n + m * n);
	double eff = cluster_gemm_efficiency(c, flops) * compute_gemm_factor(c, m, n, k, batch);
	double t_flop = flops / (c->gpu.peak_flops * eff);
	double t_mem = bytes / (c->gpu.memory_bw_Bps * c->gpu.memory_efficiency);

	return fmax(t_flop, t_mem);
}

/*
 * An fp8 GEMM (Micikevicius et al. 2022, "FP8 Formats for Deep Learning";
 * Transformer Engine's Float8 recipe): the GPU's fp8 peak at the bf16
 * curve's efficiency for a GEMM of the same duration (one with
 * peak16/peak8 of the FLOPs) times the GPU's fp8_gemm_ratio; 1-byte
 * operands, a 16-bit result. Never at more than the curve's efficiency
 * for the same FLOPs: where a curve falls at its largest sizes (the
 * B200's, measured on lone kernels that run into the power limit) the
 * equal-duration point would make fp8 more than peak8/peak16 times as
 * fast as the same GEMM in 16 bits. @speed: the recipe's GEMM against
 * the per-tensor one (fp8_recipe.c). @fp4: an NVFP4 GEMM, at
 * peak_flops_fp4 with half-byte operands and a scale byte per 16.
 */
/* fp8attn: begin fp8 recipes */
static double
fp8_gemm_time(const struct cluster *c, double m, double n, double k, double batch, double speed, bool fp4)
{
	double flops = 2.0 * m * n * k * batch;
	double peak = fp4 ? c->gpu.peak_flops_fp4 : c->gpu.peak_flops_fp8;
	double eff = fmin(cluster_gemm_efficiency(c, flops * c->gpu.peak_flops / peak),
			  cluster_gemm_efficiency(c, flops)) *
		     compute_gemm_factor(c, m, n, k, batch) * c->gpu.fp8_gemm_ratio * speed;
	double bytes = batch * (fp4 ? FP8_RECIPE_NVFP4_BYTES : 1.0) * (m * k + k * n) + batch * 2.0 * m * n;

	return fmax(flops / (peak * eff), bytes / (c->gpu.memory_bw_Bps * c->gpu.memory_efficiency));
}

double
compute_linear_time(const struct cluster *c, const struct plan *p, double m, double n, double k,
		    double batch, struct compute_casts *casts)
{
	struct fp8_recipe_cost rc;
	double split, fwd;

	if (!plan_low_precision(p))
		return compute_gemm_time(c, m, n, k, batch);
	/* The recipe's casts (fp8_recipe.c): the input's in the forward, the
	 * output gradient's (and for row-wise scaling the input's again) in
	 * the backward. The weights are cast once per iteration and cached
	 * across micro-batches (Megatron passes is_first_microbatch):
	 * compute_optimizer_time() counts that; a framework that casts them
	 * at each use (torchao) casts them here, every forward and backward. */
	fp8_recipe_cost(casts->recipe, (enum gpu_generation)c->gpu.generation, &rc);
	casts->bytes += rc.fwd_input_bytes * batch * m * k;
	casts->kernels += rc.fwd_kernels;
	casts->bwd_bytes += batch * (m * (rc.bwd_input_bytes * k + rc.bwd_grad_bytes * n) +
				     rc.bwd_rescale_bytes * k * (m + n));
	casts->bwd_kernels += rc.bwd_kernels;
	if (casts->recast) {
		casts->bytes += rc.recast_fwd_bytes * batch * n * k;
		casts->kernels += rc.recast_fwd_kernels;
		casts->bwd_bytes += rc.recast_bwd_bytes * batch * n * k;
		casts->bwd_kernels += rc.recast_bwd_kernels;
	}
	/* The forward GEMM with fast accumulation where the recipe runs it so,
	 * the dgrad and wgrad GEMMs (each the forward's FLOPs) promoting to
	 * fp32 at the measured split-accumulator speed (fp8_recipe.c): the
	 * caller takes the backward as twice the forward, so the difference
	 * goes to bwd_gemm_s. */
	split = fp8_gemm_time(c, m, n, k, batch, rc.bwd_gemm_speed, rc.fp4);
	fwd = fp8_gemm_time(c, m, n, k, batch,
			    rc.gemm_speed * (rc.fwd_fast_accum ? c->gpu.fp8_fast_accum_speedup : 1.0), rc.fp4);
	casts->bwd_gemm_s += 2.0 * (split - fwd);
	return fwd;
}

/*
 * The linears whose input a norm writes in fp8 itself (fp8_recipe.c,
 * Transformer Engine's LayerNormLinear under delayed scaling): a
 * non-MLA layer's QKV and a dense layer's fc1, each m = b s tokens by
 * k = h as layer_attention_gemms and layer_mlp_gemms give them. Their
 * forward casts, which compute_linear_time counted, are taken back; the
 * backward's transpose of the fp8 copy is added.
 */
static void
fp8_norm_fused_inputs(const struct model *m, const struct plan *p, const struct cluster *c, bool moe,
		      struct compute_casts *casts)
{
	struct fp8_recipe_cost rc;
	double elems = (double)p->micro_batch * p->seq_len * m->hidden;
	/* A Mamba or GDN layer's in_proj is Transformer Engine's
	 * LayerNormColumnParallelLinear too (megatron/core/models/hybrid/
	 * hybrid_layer_specs.py), its input h wide. */
	int inputs = (model_has_part(m, MODEL_PART_ATTENTION) && m->attention != MODEL_ATTN_MLA ? 1 : 0) +
		     (model_has_part(m, MODEL_PART_MLP) && !moe ? 1 : 0) + (mixer_present(m) ? 1 : 0);

	if (!plan_low_precision(p))
		return;
	fp8_recipe_cost(casts->recipe, (enum gpu_generation)c->gpu.generation, &rc);
	if (!rc.norm_fused)
		return;
	casts->bytes -= inputs * rc.fwd_input_bytes * elems;
	casts->kernels -= inputs * rc.fwd_kernels;
	casts->bwd_bytes += inputs * rc.norm_bwd_bytes * elems;
	casts->bwd_kernels += inputs * rc.norm_bwd_kernels;
}
/* fp8attn: end fp8 recipes */

double
compute_memory_time(const struct cluster *c, double bytes)
{
	return bytes / (c->gpu.memory_bw_Bps * c->gpu.memory_efficiency);
}

/* Norms a layer runs and its residual adds: model_norms_run and two for a
 * transformer layer; one each for a layer of one part (Megatron-Core's
 * hybrid layers: MambaLayer, the GDN layer, and the attention and MLP layers of
 * hybrid_layer_allocation.py, each one pre-norm and one residual). */
static int
layer_norms(const struct model *m)
{
	return m->parts ? 1 : model_norms_run(m);
}

static int
layer_residuals(const struct model *m)
{
	return m->parts ? 1 : 2;
}

/* The element-wise operators of a layer, for the table below. */
enum ew_op { EW_RMSNORM, EW_LAYERNORM, EW_RESIDUAL, EW_GATED, EW_ACT, EW_ROTARY, EW_OUTPUT_GATE, EW_COUNT };

/*
 * Bytes one element-wise operator moves per element of its tensor in the
 * forward, and its kernels, as a framework runs it (enum
 * framework_elementwise):
 * - fused, one kernel each (Megatron-Core with Transformer Engine; the
 *   per-operator inventory of Korthikanti et al. 2022, Sec. 4.1): a norm
 *   reads and writes 2-byte tensors (4), a bias-dropout-add reads operand
 *   and residual and writes the sum and a 1-byte mask (7), SwiGLU reads
 *   two and writes one (6, per ffn element), an activation 4, rotary 4
 *   (per element of q and k);
 * - eager PyTorch, the modules as torchtitan and Hugging Face write them
 *   (torchtitan models/norms.py RMSNorm: _norm(x.float()).type_as(x) *
 *   weight, where _norm is x * rsqrt(x.pow(2).mean(-1) + eps);
 *   apply_rotary_emb through view_as_complex in fp32; FeedForward
 *   w2(silu(w1 x) * w3 x); Hugging Face's LlamaRMSNorm the same): an
 *   RMSNorm is 7 kernels, x.float() 2+4, pow 4+4, mean 4, x * rsqrt 4+4,
 *   type_as 4+2, * weight 2+2 = 36 bytes; rotary 3 kernels a tensor,
 *   float 2+4, complex multiply 4+4, type_as 4+2 = 20; SwiGLU silu 2+2
 *   and multiply 4+2 = 10; a LayerNorm (F.layer_norm), a plain
 *   activation and a residual add stay one kernel, the add counted as
 *   the fused one (7: 4+2 and, where the model has dropout, its mask; a
 *   separate eager dropout would move more), so that eager is never
 *   lighter than fused;
 * - compiled, torch.compile's Inductor (torchtitan's compile = true, one
 *   compiled region a block): the forward as fused, each operator's
 *   point-wise chain one Triton kernel (the norm's forward at 0.72-0.87 of
 *   the H200's bandwidth against cuDNN's 0.68-0.80 in NVIDIA's
 *   cudnn-frontend benchmark/norms, docs/research/gpu-data.md), but the
 *   rotary of q and of k two kernels: their shapes differ and Inductor
 *   fuses nodes of one iteration space only (its combo_kernels, which
 *   would join them, is off by default, torch/_inductor/config.py). The
 *   norms' backward: compiled_norm_dweight below.
 * The output gate of gated attention (per element of the a d gate):
 * Megatron-Core's Attention._apply_output_gate (attention.py @d98e8a6),
 * x * torch.sigmoid(gate.float()) cast back to x's dtype under jit_fuser,
 * which is torch.compile from PyTorch 2.2 (megatron/core/jit.py): one
 * kernel that reads x and the gate and writes the product (6, as fused
 * SwiGLU); eager, Hugging Face's Qwen3-Next attn_output *
 * torch.sigmoid(gate), sigmoid 2+2 and multiply 4+2 = 10 in 2 kernels.
 */
static const struct {
	double bytes;
	int kernels;
} ew_ops[3][EW_COUNT] = {
	[FRAMEWORK_EW_FUSED] = {
		[EW_RMSNORM] = { 4.0, 1 }, [EW_LAYERNORM] = { 4.0, 1 }, [EW_RESIDUAL] = { 7.0, 1 },
		[EW_GATED] = { 6.0, 1 }, [EW_ACT] = { 4.0, 1 }, [EW_ROTARY] = { 4.0, 1 },
		[EW_OUTPUT_GATE] = { 6.0, 1 },
	},
	[FRAMEWORK_EW_EAGER] = {
		[EW_RMSNORM] = { 36.0, 7 }, [EW_LAYERNORM] = { 4.0, 1 }, [EW_RESIDUAL] = { 7.0, 1 },
		[EW_GATED] = { 10.0, 2 }, [EW_ACT] = { 4.0, 1 }, [EW_ROTARY] = { 20.0, 3 },
		[EW_OUTPUT_GATE] = { 10.0, 2 },
	},
	[FRAMEWORK_EW_COMPILED] = {
		[EW_RMSNORM] = { 4.0, 1 }, [EW_LAYERNORM] = { 4.0, 1 }, [EW_RESIDUAL] = { 7.0, 1 },
		[EW_GATED] = { 6.0, 1 }, [EW_ACT] = { 4.0, 1 }, [EW_ROTARY] = { 4.0, 1 },
		[EW_OUTPUT_GATE] = { 6.0, 1 },
	},
};

/*
 * A compiled norm's backward beyond the twice-the-forward convention
 * (8 bytes an element, 2 kernels): Inductor lowers an RMSNorm's or a
 * LayerNorm's backward to two reductions over different axes, dx over
 * the hidden dimension a row at a time (a persistent reduction: x and dy
 * read, dx written, 6 bytes an element; rstd is one float a row) and
 * dweight (a LayerNorm's dbias with it) over the tokens, and "these 2 set
 * of reductions have common input buffers but inductor can not fuse them
 * because of different loop orders" (pytorch/pytorch#165370, 2025-10).
 * The second reads x and dy again (4 bytes an element) as a split
 * reduction, two kernels (fp32 partial sums over blocks of rows, then
 * their sum, C floats a block: negligible). 10 bytes in 3 kernels: 2
 * bytes an element and 1 kernel a norm more than the convention.
 * Transformer Engine's fused norm backward is one kernel (dgamma summed
 * from per-block partials) and keeps the convention. From late 2025
 * Inductor's mix-order reduction (#165370, torch/_inductor/config.py
 * triton.mix_order_reduction, on by default outside fbcode, so in
 * PyTorch 2.10) fuses the two into one kernel; not modelled: torchtitan's
 * benchmarks and the validation data ran older PyTorch.
 */
#define COMPILED_NORM_DWEIGHT_BYTES 2.0
#define COMPILED_NORM_DWEIGHT_KERNELS 1

static double
compiled_norm_dweight(const struct model *m, const struct plan *p, const struct cluster *c)
{
	double h_rep = p->sequence_parallel ? (double)m->hidden / p->tp : m->hidden;
	double elems = (double)p->micro_batch * p->seq_len * h_rep;
	int norms = layer_norms(m);

	return compute_memory_time(c, norms * COMPILED_NORM_DWEIGHT_BYTES * elems) +
	       norms * COMPILED_NORM_DWEIGHT_KERNELS * c->gpu.launch_overhead_s;
}

/*
 * Element-wise traffic of one layer's forward, in bytes, and its kernels:
 * two norms, two residual adds, the MLP activation, rotary embedding
 * (the table above), and for standard attention the fused
 * scale-mask-softmax (read + write) and the attention dropout (read,
 * write, mask) over the a*s^2*b scores. Eager PyTorch adds the copies
 * around its attention call: the output transposed back to contiguous (2
 * + 2 bytes an element) and, with grouped-query attention, torchtitan's
 * repeat_kv, which expands k and v to every head (read kv, write h).
 */
/*
 * The token permutations of Megatron-Core core_v0.5-v0.6's
 * MoEAllGatherTokenDispatcher (framework moe_dispatcher allgather_mask;
 * token_dispatcher.py at core_v0.5.0 and core_v0.6.0), in bytes over the
 * hidden size h, by @rows = k x tokens local routed rows (R) and
 * @gathered tokens (G: ep x tokens after the TP x EP all-gather, tokens
 * without one), each kernel's reads and writes counted once (2-byte
 * elements; the int64 index maps are h times smaller). Forward:
 * torch.gather of the local rows (read + write: 4 R), torch.gather
 * sorting them by expert (4 R); after the experts zeros_like (2 R), the
 * out-of-place scatter back (a clone, 4 R, and scatter_, 4 R), the
 * product with the probs (4 R), a zeros of the global shape (2 G) and
 * the out-of-place scatter_add into it (a clone, 4 G; source read, target
 * read and written, 6 R): 28 R + 6 G. Backward, as autograd runs it:
 * scatter_add's and scatter's source gradients are gathers (4 R each),
 * the product's two gradients a multiply (4 R) and a multiply and a sum
 * over h (4 + 2 + 2 R), each torch.gather's a zeros and a scatter_add
 * (2 R + 6 R; 2 G + 6 R): 34 R + 2 G. Kernels: forward three compares,
 * two masked_select and a nonzero (each a count, a scan and a copy),
 * argsort (about four radix-sort passes), histc and its copy to the host,
 * the two gathers and the seven of the unpermutation: 26; backward 12
 * (the nine above, the probs' masked_select gradient). Without the
 * gathering path (top-1, no SP, no EP) only the sort's gather and the
 * scatter back remain, with no product and no scatter_add.
 */
static void
allgather_mask_permute_bytes(const struct model *m, const struct plan *p, double tokens, double *fwd,
			     double *bwd, int *fwd_kernels, int *bwd_kernels)
{
	double gathered = ((p->sequence_parallel && p->tp > 1) || p->ep > 1) ? p->ep * tokens : tokens;
	double rows = m->moe.capacity_factor * m->moe.top_k * gathered / p->ep, h = model_moe_width(m);

	if (!ep_allgather_gathers(m, p)) {
		*fwd = (4.0 + 2.0 + 8.0) * rows * h;
		*bwd = (4.0 + 8.0) * rows * h;
		*fwd_kernels = 10;
		*bwd_kernels = 3;
		return;
	}
	*fwd = (28.0 * rows + 6.0 * gathered) * h;
	*bwd = (34.0 * rows + 2.0 * gathered) * h;
	*fwd_kernels = 26;
	*bwd_kernels = 12;
}

/*
 * SequentialMLP's copies as Megatron-Core core_v0.5.0-core_r0.8.0 write
 * the loop (framework moe_sequential_slices; experts.py): the output is
 * a zeros_like of the R local rows (2 R bytes over h) into which each of
 * the E local experts' outputs is copied (output_local[start:end] =
 * output: 4 R in all), each expert's input a slice of the permuted
 * tokens. Backward, as PyTorch's autograd runs it (torch/csrc/autograd/
 * functions/tensor.cpp CopySlices::apply; FunctionsManual.cpp
 * slice_backward): each of the E in-place copies is a CopySlices node
 * that copies the whole gradient (4 R), clones its slice (4 R / E) and
 * writes zeros into it (CopyBackwards' zeros_like, 2 R / E, and the copy,
 * 4 R / E); each slice's gradient is a zeros of the whole (2 R) with the
 * slice copied in (4 R / E), and the E of them are summed (E - 1 adds of
 * 6 R): 12 E R + 8 R. Kernels: 1 + E forward, 7 E - 1 backward. From
 * core_r0.9.0 the loop splits and concatenates (torch.split, torch.cat),
 * which this does not count.
 */
static void
sequential_slices_bytes(const struct model *m, const struct plan *p, double tokens, double *fwd, double *bwd,
			int *fwd_kernels, int *bwd_kernels)
{
	double local = (double)m->moe.experts / p->ep;
	double rows = m->moe.capacity_factor * m->moe.top_k * (tokens / p->tp) * p->ep * plan_etp(p) /
		      m->moe.experts * local;

	*fwd = 6.0 * rows * model_moe_width(m);
	*bwd = (12.0 * local + 8.0) * rows * model_moe_width(m);
	*fwd_kernels = 1 + (int)local;
	*bwd_kernels = 7 * (int)local - 1;
}

/* The MoE layer's token permutations, forward and backward: their bytes
 * and kernels. */
static void
moe_permute_traffic(const struct model *m, const struct plan *p, double tokens, int dispatcher,
		    double *permute_bytes, int *permute_kernels, double *permute_bwd_bytes,
		    int *permute_bwd_kernels)
{
	double h = model_moe_width(m), t = p->tp; /* latent MoE: l-wide tokens (token_dispatcher.py) */

	/* Permute the routed tokens to their experts and back, read +
	 * write each time. Megatron-Core's all-to-all dispatcher
	 * (MoEAlltoAllTokenDispatcher, megatron/core/transformer/moe/
	 * token_dispatcher.py; the permutations in moe_utils.py) permutes
	 * by destination rank before
	 * the all-to-all and, with more than one local expert, sorts the
	 * received chunks by expert after it (sort_chunks_by_idxs), and
	 * undoes both around the combine: four passes, two with one
	 * local expert. Other frameworks' dispatchers are counted the
	 * same (an estimate: DeepSpeed-MoE's dense einsum dispatch is
	 * not modelled apart). */
	/* The sort runs after the expert TP all-gather, over etp x the
	 * rank's routed tokens. */
	bool sort = (double)m->moe.experts / p->ep > 1.0;
	double passes = 2.0 + (sort ? 2.0 * plan_etp(p) : 0.0);

	/* MoEFlexTokenDispatcher (moe_dispatcher deepep; token_dispatcher.py,
	 * Megatron-LM core_r0.13-r0.14): DeepEP's dispatch reads the tokens in
	 * place (is_token_in_rank), so nothing is permuted before it and no
	 * chunk is sorted after it; dispatch_postprocess permutes the received
	 * tokens by local expert once (moe_utils.permute) and
	 * combine_preprocess unpermutes them once, over the etp copies each
	 * rank receives (routing replicated over the TP group). */
	/* HybridEP (moe_dispatcher hybridep): Megatron-LM d98e8a6
	 * _HybridEPManager.get_permuted_hidden_states_by_experts returns the
	 * dispatched tokens as they are: the permute runs inside HybridEP's
	 * dispatch_with_permute, a permute kernel after the dispatch kernel
	 * and an unpermute kernel before the combine (DeepEP hybrid-ep
	 * 94a9f8f docs/Hybrid-EP_Implementation.md section 5; with
	 * moe_permute_fusion_into_hybridep, off by default, permute blocks
	 * in the same grid, the same bytes), padding for FP8 included
	 * (experts.py skip_routed_expert_padding): one pass each way, as
	 * DeepEP's. */
	if (dispatcher == FRAMEWORK_MOE_DISPATCH_DEEPEP || dispatcher == FRAMEWORK_MOE_DISPATCH_HYBRIDEP) {
		passes = 2.0 * plan_etp(p);
		sort = false;
	}
	*permute_bytes = passes * 4.0 * tokens * m->moe.capacity_factor * m->moe.top_k * h / t;
	*permute_kernels = sort ? 4 : 2;
	/* Element-wise convention: the backward twice the forward. */
	*permute_bwd_bytes = 2.0 * *permute_bytes;
	*permute_bwd_kernels = 2 * *permute_kernels;
	if (dispatcher == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK)
		allgather_mask_permute_bytes(m, p, tokens, permute_bytes, permute_bwd_bytes, permute_kernels,
					     permute_bwd_kernels);
}

static double
layer_fwd_mem_bytes(const struct model *m, const struct plan *p, bool moe, bool sequential, int ew,
		    int dispatcher, double *attn_core, int *kernels, double *permute_bytes, int *permute_kernels,
		    double *permute_bwd_bytes, int *permute_bwd_kernels)
{
	double t = p->tp, b = p->micro_batch, s = p->seq_len, h = m->hidden;
	double tokens = b * s;
	double h_rep = p->sequence_parallel ? h / t : h; /* replicated unless SP */
	double kvd = (double)m->kv_heads * model_head_dim(m);
	int norm = m->norm == MODEL_NORM_RMSNORM ? EW_RMSNORM : EW_LAYERNORM;
	int act = m->gated_mlp ? EW_GATED : EW_ACT;
	bool attn = model_has_part(m, MODEL_PART_ATTENTION), mlp = model_has_part(m, MODEL_PART_MLP);
	double bytes = 0.0;

	/* arch: two norms, or a parallel block's one shared norm (model_norms_run);
	 * a layer of one part one norm and one residual add (layer_norms) */
	bytes += layer_norms(m) * ew_ops[ew][norm].bytes * tokens * h_rep;
	bytes += layer_residuals(m) * ew_ops[ew][EW_RESIDUAL].bytes * tokens * h_rep;
	*kernels = layer_norms(m) * ew_ops[ew][norm].kernels + layer_residuals(m) * ew_ops[ew][EW_RESIDUAL].kernels +
		   (mlp ? ew_ops[ew][act].kernels : 0);
	*attn_core = 0.0;
	if (!attn && !mlp) /* a Mamba or GDN layer: its mixer's passes are mixer_cost's */
		return bytes;
	/* activation */
	if (!mlp) {
		/* an attention layer: no MLP activation */
	} else if (moe) {
		double rows = tokens * (m->moe.capacity_factor * m->moe.top_k + m->moe.shared_experts);

		bytes += ew_ops[ew][act].bytes * rows * m->moe.expert_ffn_hidden / t;
		moe_permute_traffic(m, p, tokens, dispatcher, permute_bytes, permute_kernels, permute_bwd_bytes,
				    permute_bwd_kernels);
		bytes += *permute_bytes;
		*kernels += *permute_kernels;
		/* SequentialMLP: each local expert's MLP its own activation. */
		if (sequential)
			*kernels += (m->moe.experts / p->ep - 1) * ew_ops[ew][act].kernels;
	} else {
		bytes += ew_ops[ew][act].bytes * tokens * m->ffn_hidden / t;
	}
	if (!attn)
		return bytes;
	if (m->position_embedding == MODEL_POS_ROTARY) {
		bytes += ew_ops[ew][EW_ROTARY].bytes * tokens * (h + kvd) / t;
		*kernels += 2 * ew_ops[ew][EW_ROTARY].kernels - (ew == FRAMEWORK_EW_FUSED ? 1 : 0);
	}
	if (model_attention_gate_dim(m) > 0.0) {
		/* gated attention: the sigmoid-multiply over the a d gate, after
		 * the attention core and outside its checkpoint; its backward at
		 * the element-wise convention, twice the forward */
		bytes += ew_ops[ew][EW_OUTPUT_GATE].bytes * tokens * model_attention_gate_dim(m) / t;
		*kernels += ew_ops[ew][EW_OUTPUT_GATE].kernels;
	}
	if (ew == FRAMEWORK_EW_EAGER) {
		bytes += 4.0 * tokens * h / t;
		*kernels += 1;
		if (m->kv_heads < m->heads) {
			bytes += 2.0 * (2.0 * kvd + 2.0 * h) * tokens / t;
			*kernels += 2;
		}
	}
	*attn_core = p->flash_attention ? 0.0 : 9.0 * b * (m->heads / t) * s * s;
	if (!p->flash_attention)
		*kernels += 2; /* scale-mask-softmax, attention dropout */
	return bytes + *attn_core;
}

/* moecost: begin MoE expert GEMMs */
/*
 * The MLP of an MoE layer on one GPU (Fedus et al. 2021; Megatron-Core's
 * grouped GEMM): the router, then E/ep local experts, and the shared
 * experts over all tokens, split by TP like the dense MLP. A rank brings
 * tokens / tp tokens (sequence parallel); an expert's etp ranks gather
 * the rows every EP rank of their ETP group sends it, cf * k * (tokens /
 * tp) * ep * etp / E (balanced load padded to the capacity), and each
 * holds 1/etp of its weights (MoE parallel folding, arXiv:2504.14960;
 * Megatron-Core core_r0.12 token_dispatcher.py). With etp = tp that is
 * cf * k * tokens * ep / E rows against 1/tp of the weights.
 * The routed experts run as one grouped GEMM per matrix (TEGroupedMLP,
 * --moe-grouped-gemm: every expert's tiles fill the GPU's waves together,
 * so the group sits on the size curve at its total FLOPs), but no faster
 * than its experts' own GEMMs four at a time: Transformer Engine's
 * GroupedLinear issues one cuBLAS GEMM per expert over num_streams = 4
 * side streams (nvte_multi_stream_cublas_gemm, common/gemm/
 * cublaslt_gemm.cu and gemm.h, v1.9-v2.x), so experts of few rows, each
 * too small to fill the GPU, run at most four side by side (SimuMax's
 * B200 measurements of that call, docs/research/moe-costs.md: 160 x 154
 * rows, fc1 1.7 ms where the group's FLOPs take 1.07 and the experts four
 * at a time 1.55). A framework whose moe_grouped_gemm is single runs
 * one grouped kernel instead (torchtitan's GroupedExperts with
 * use_grouped_mm, its default: torch._grouped_mm over all local experts,
 * torchtitan/models/moe/moe.py _run_experts_grouped_mm, @08dc75a): no
 * per-expert GEMMs, the group at its total FLOPs alone. Or, with the
 * framework's moe_sequential_mlp, as SequentialMLP (megatron/core/
 * transformer/moe/experts.py, core_r0.6.0 to 23e00ed): a loop over the
 * local experts, each expert's fc1 and fc2 their own GEMMs at their own
 * size, few rows each.
 * @wgrad_mem_s: what the experts' weight-gradient GEMMs take beyond the
 * time the backward already gives them, as the framework's main_grad
 * says (@main_grad, enum framework_main_grad; main_grad_traffic(), the
 * dense weights' rule). Megatron accumulates weight gradients into the
 * fp32 main_grad inside the GEMM (--gradient-accumulation-fusion, on by
 * default: TEGroupedLinear's fuse_wgrad_accumulation, megatron/core/
 * extensions/transformer_engine.py): each expert matrix's gradient is
 * read and written in fp32 (8 bytes an element) besides the operands of
 * rows x its sides (2 bytes an element; 1 under fp8, whose wgrad GEMM
 * takes the fp8 transposes of X and dY, writing into main_grad, with
 * use_split_accumulator = _2X_ACC_WGRAD: Transformer Engine's
 * _GroupedLinear backward, pytorch/module/grouped_linear.py v1.9-v2.x).
 * With few rows an expert that traffic, not the FLOPs, bounds the
 * kernel on Hopper and Blackwell (a roofline; SimuMax's measured B200
 * grouped wgrad, configs/system/b200_bf16_ceperm.json @4dcaae5: 160
 * experts of 154 rows, 3072 x 5120, 2.3-3.7 ms, the traffic's 3.8 ms at
 * the profile's 5.36 TB/s, where the forward takes 1.7 ms); on older
 * GPUs the source tile's 4 bytes are added. A framework without an fp32
 * main_grad beside the weights (main_grad none: torchtitan's experts
 * under FSDP2, whose torch._grouped_mm backward writes the 16-bit
 * gradient of the 16-bit weight, the forward's roofline bytes) pays
 * nothing more.
 * The wgrad GEMM's time is the backward's: under fp8 with a
 * fast-accumulating forward (fp8_recipe.c) the dgrad and wgrad GEMMs
 * promote to fp32 and take longer (compute_linear_time's bwd_gemm_s),
 * and the traffic is weighed against that, not the forward's time; the
 * four-streams bound holds for those promoting GEMMs as for the forward.
 */
#define MOE_TE_GEMM_STREAMS 4.0

/* A GEMM operand's bytes per element as the wgrad GEMM reads it: 16-bit,
 * fp8, or NVFP4's half byte with an E4M3 scale per 16 (fp8_recipe.c). */
static double
gemm_operand_bytes(const struct plan *p)
{
	if (p->precision == PLAN_PRECISION_FP8)
		return 1.0;
	return p->precision == PLAN_PRECISION_FP4 ? FP8_RECIPE_NVFP4_BYTES : 2.0;
}

static double main_grad_traffic(const struct cluster *c, int how, double operand_bytes, double weight_elems,
				double weights, double wgrad_s);

static double
moe_expert_gemm(const struct cluster *c, const struct plan *p, double rows, double n, double k, double local,
		bool sequential, int grouped, int main_grad, struct compute_casts *casts, double *wgrad_mem_s)
{
	double before = casts->bwd_gemm_s, operand = gemm_operand_bytes(p);
	double time, wgrad_s;

	if (sequential) {
		struct compute_casts one = { .bytes = 0.0, .recipe = casts->recipe, .recast = casts->recast };

		time = local * compute_linear_time(c, p, rows, n, k, 1, &one);
		casts->bytes += local * one.bytes;
		casts->kernels += (int)(local * one.kernels);
		casts->bwd_bytes += local * one.bwd_bytes;
		casts->bwd_kernels += (int)(local * one.bwd_kernels);
		casts->bwd_gemm_s += local * one.bwd_gemm_s; /* fp8 */
	} else {
		struct compute_casts one = { .bytes = 0.0, .recipe = casts->recipe, .recast = casts->recast };
		double streams = fmin(MOE_TE_GEMM_STREAMS, local);

		time = compute_linear_time(c, p, rows, n, k, local, casts);
		/* TE: one GEMM per expert over at most four streams, never
		 * faster than the experts' own GEMMs four at a time (the casts
		 * are the grouped call's, counted once), forward and backward
		 * alike: each backward GEMM (the group's promoting one, the
		 * forward's time and half what the call added to bwd_gemm_s)
		 * takes no less than the experts' promoting GEMMs four at a
		 * time. A single grouped kernel: the group alone. */
		if (grouped == FRAMEWORK_MOE_GEMM_TE_STREAMS || grouped == FRAMEWORK_MOE_GEMM_GMM) {
			double split = time + 0.5 * (casts->bwd_gemm_s - before);
			double each = local * compute_linear_time(c, p, rows, n, k, 1, &one) / streams;
			double each_split = each + 0.5 * local * one.bwd_gemm_s / streams;

			time = fmax(time, each);
			casts->bwd_gemm_s = before + 2.0 * (fmax(split, each_split) - time);
		}
	}
	/* The wgrad GEMM takes the time the backward gives it: the
	 * forward's, and under fp8 half the promoting difference this call
	 * added. */
	wgrad_s = time + 0.5 * (casts->bwd_gemm_s - before);
	if (!sequential && grouped == FRAMEWORK_MOE_GEMM_GMM && main_grad != FRAMEWORK_MG_NONE) {
		/* gmm writes the bf16 gradient of the whole matrix (one
		 * parameter for all local experts); DDP's hook adds it to the
		 * fp32 main_grad (main_grad.add_(param.grad), megatron/core/
		 * distributed/distributed_data_parallel.py, core_v0.6.0): the
		 * unfused rule, one launch a matrix. */
		*wgrad_mem_s += main_grad_traffic(c, FRAMEWORK_MG_UNFUSED, 0.0, local * n * k, 1.0, wgrad_s);
		return time;
	}
	*wgrad_mem_s += main_grad_traffic(c, main_grad, local * operand * rows * (n + k), local * n * k, local, wgrad_s);
	return time;
}

static double
moe_mlp_gemm_time(const struct model *m, const struct plan *p, const struct cluster *c, bool sequential,
		  int grouped, int main_grad, struct compute_casts *casts, double *wgrad_mem_s, double *router_s)
{
	double t = p->tp, et = plan_etp(p), tokens = (double)p->micro_batch * p->seq_len, h = m->hidden;
	double f = m->moe.expert_ffn_hidden, in = m->gated_mlp ? 2.0 * f : f, w = model_moe_width(m);
	double local = (double)m->moe.experts / p->ep;
	double rows = m->moe.capacity_factor * m->moe.top_k * (tokens / t) * p->ep * et / m->moe.experts;
	double time = compute_gemm_time(c, tokens, m->moe.experts, h, 1); /* router */

	*router_s = time;

	*wgrad_mem_s = 0.0;
	time += moe_expert_gemm(c, p, rows, in / et, w, local, sequential, grouped, main_grad, casts, wgrad_mem_s) +
		moe_expert_gemm(c, p, rows, w, f / et, local, sequential, grouped, main_grad, casts, wgrad_mem_s);
	if (m->moe.latent_size > 0) {
		/* fc1_latent_proj (h -> l) and fc2_latent_proj (l -> h), TELinear
		 * parallel_mode "duplicated" (moe_layer.py @d98e8a6): whole weights,
		 * on the rank's own tokens (s b / t under SP, else all s b). */
		double own = p->sequence_parallel ? tokens / t : tokens, l = m->moe.latent_size;

		time += compute_linear_time(c, p, own, l, h, 1, casts) + compute_linear_time(c, p, own, h, l, 1, casts);
	}
	if (m->moe.shared_experts > 0) {
		double sf = f * m->moe.shared_experts;

		time += compute_linear_time(c, p, tokens, (m->gated_mlp ? 2.0 * sf : sf) / t, h, 1, casts) +
			compute_linear_time(c, p, tokens, h, sf / t, 1, casts);
	}
	return time;
}
/* moecost: end MoE expert GEMMs */

/*
 * Fused (flash) attention over the local heads of one micro-batch. FLOPs
 * as FlashAttention-2 counts them (Dao 2023, Sec. 4.1): 4 s^2 d per head
 * forward (Q K^T and P V), halved by a causal mask, whose masked tiles
 * the kernel skips; the backward does 2.5 times the forward's FLOPs (five
 * matrix products against two). Each pass runs at the GPU's attention
 * efficiency, plus a fixed cost per call: the time to fill the GPU with
 * tiles, which dominates when few heads and tokens are local (measured on
 * the B200: gpus/b200-sxm-180gb.yaml). Reads Q, K, V and writes O.
 */
void
compute_flash_attention(const struct model *m, const struct plan *p, const struct cluster *c,
			double *fwd_s, double *bwd_s)
{
	compute_flash_attention_kernel(m, p, c, compute_attention_kernel(p, NULL), fwd_s, bwd_s);
}

/* attnshape: the same with kernel @kernel (resolved, compute_attention_kernel)
 * and its shape: padding, exponentials and diagonal tiles against the
 * profile's reference shape (attn_shape.c). */
void
compute_flash_attention_kernel(const struct model *m, const struct plan *p, const struct cluster *c, int kernel,
			       double *fwd_s, double *bwd_s)
{
	double s = p->seq_len, dqk, dv;
	double heads = (double)m->heads / p->tp;

	/* DSA: the sparse kernel runs absorbed MLA (model_dsa_kernel_head_dims),
	 * d_qk = kv_lora_rank + qk_rope_head_dim and d_v = kv_lora_rank, the
	 * FLOPs it executes (2 (576 + 512) a pair and head for DeepSeek-V3.2,
	 * 3.4 times the non-absorbed 2 (192 + 128); GLM-5 2.1 times), priced at
	 * the profile's attention efficiency: FlashMLA's sparse prefill kernel
	 * states up to 640 TFLOPS on the H800 in that count (deepseek-ai/FlashMLA
	 * README, 2025-09-29), 0.65 of its 989, where gpus/h800-sxm5-80gb.yaml
	 * says 0.57 for a dense kernel; the model FLOPs keep MLA's head sizes
	 * (flops.c). Else model_qk_head_dim and model_v_head_dim. */
	model_dsa_kernel_head_dims(m, &dqk, &dv);
	/* 2 s^2 (d_qk + d_v) per head: 4 s^2 d when d_qk = d_v = d. */
	double cp = p->cp > 1 ? p->cp : 1;
	/* With CP, s is the local s/cp, and the s/cp queries meet all s keys:
	 * cp times the FLOPs of an s/cp sequence. */
	double flops = 2.0 * s * s * cp * (dqk + dv) * p->micro_batch * heads * (m->causal ? 0.5 : 1.0);
	/* arch: sliding windows. The kernel skips the tiles outside a window
	 * as it skips the masked half (FlashAttention-2's window_size, since
	 * v2.3; cuDNN's through Transformer Engine): a windowed layer does
	 * model_window_pairs() of the s^2 / 2 pairs, on the whole sequence
	 * (s cp) and split evenly over the CP ranks. The tiles the window's
	 * edge cuts are counted by their pairs, as the diagonal's are; the
	 * layers' mix is averaged (model_attention_work_fraction), so every
	 * pipeline stage gets the model's mean. Q, K, V and O are read and
	 * written whole either way. */
	flops *= model_attention_work_fraction(m, s * cp);
	double bytes = 2.0 * (2.0 * dqk + 2.0 * dv) * s * cp * p->micro_batch * heads;
	/* absorbed MLA: one latent key (its first d_v the value) for all heads */
	if (model_has_dsa(m))
		bytes = 2.0 * (heads * (dqk + dv) + dqk) * s * cp * p->micro_batch;
	double peak = c->gpu.peak_flops * gpu_clock_factor(&c->gpu); /* under the power limit */

	/* attnshape: the whole sequence's diagonal (s cp), the rows of a ring
	 * step's s keys (attnseq); the fill cost (attention_overhead_s) is per
	 * call, not per tile: not scaled. */
	double row_seq = p->cp > 1 && p->cp_method == PLAN_CP_RING ? s : s * cp;
	struct attn_shape shape = attn_shape_factors(&c->gpu, kernel, dqk, dv, s * cp, row_seq, m->causal);

	*fwd_s = fmax(shape.fwd * flops / (peak * c->gpu.attention_fwd_efficiency), compute_memory_time(c, bytes)) +
		 c->gpu.attention_overhead_s;
	*bwd_s = fmax(shape.bwd * 2.5 * flops / (peak * c->gpu.attention_bwd_efficiency),
		      compute_memory_time(c, 2.0 * bytes)) + c->gpu.attention_overhead_s;
}

/*
 * DSA's lightning indexer (DeepSeek-V3.2, arXiv:2512.02556, Sec. 2.1;
 * Megatron-Core's DSAIndexer and DSAttention, experimental_attention_variant/
 * dsa.py @d98e8a6, with the cuDNN kernels of dsa_cudnn_kernels.py that the
 * Megatron-Bridge GLM-5 recipes select): on a sequence of S = s cp tokens
 * (s local, the CP ranks all-gather the keys) and b micro-batch rows.
 * - Projections wq_b, wk, weights_proj (parallel_mode "duplicated"): on
 *   the whole local sequence on every TP rank, at the GEMM rate; with the
 *   loss their weight gradient (x and q are detached), the forward's time.
 * - Scores: H_I (d_I + 1) FLOPs x 2 a causal pair, S^2 / 2 pairs (the
 *   kernel takes each row's causal length, _causal_seq_lens), a CP rank's
 *   1/cp, not split over TP, at the GPU's attention forward efficiency
 *   (an assumption: a QK^T kernel of H_I heads; no published figure for
 *   it was found); written as fp32 scores and read back by top-k
 *   (indexer_forward_wrapper's "scores", indexer_top_k_wrapper): 8 bytes a pair.
 * - The loss (Megatron-Bridge's flop_utils.py @067f987): the target, the
 *   main heads' (a / t) scores in the absorbed width kv_lora_rank +
 *   qk_rope_head_dim over the pairs the loss touches (model_window_pairs
 *   with w = k for the sparse loss, S^2 / 2 for the dense), forward
 *   efficiency; the scores' backward, 4 H_I (d_I + 1) a pair touched, at
 *   the attention backward efficiency.
 */
void
compute_dsa_indexer(const struct model *m, const struct plan *p, const struct cluster *c, double *fwd_s,
		    double *bwd_s)
{
	const struct model_dsa *d = &m->dsa;
	double s = p->seq_len, cp = p->cp > 1 ? p->cp : 1, b = p->micro_batch, h = m->hidden;
	double S = s * cp, tokens = b * s, hi = d->index_n_heads, di = d->index_head_dim;
	double qin = m->mla.q_lora_rank > 0 ? m->mla.q_lora_rank : h, unit = hi * (di + 1.0);
	double peak = c->gpu.peak_flops * gpu_clock_factor(&c->gpu), share, gemm, pairs, touched;

	*fwd_s = *bwd_s = 0.0;
	if (!model_has_dsa(m))
		return;
	share = (double)model_dsa_indexer_layers(m) / m->layers;
	gemm = compute_gemm_time(c, tokens, hi * di, qin, 1) + compute_gemm_time(c, tokens, di, h, 1) +
	       compute_gemm_time(c, tokens, hi, h, 1);
	pairs = 0.5 * S * S / cp * b;
	*fwd_s = gemm + 2.0 * pairs * unit / (peak * c->gpu.attention_fwd_efficiency) +
		 compute_memory_time(c, 8.0 * pairs);
	if (d->indexer_loss != MODEL_DSA_LOSS_NONE) {
		touched = (d->indexer_loss == MODEL_DSA_LOSS_SPARSE ? model_window_pairs(S, d->index_topk) : 0.5 * S * S) /
			  cp * b;
		*fwd_s += 2.0 * touched * (m->heads / (double)p->tp) * ((double)m->mla.kv_lora_rank + m->mla.qk_rope_head_dim) /
			  (peak * c->gpu.attention_fwd_efficiency);
		*bwd_s = gemm + 4.0 * touched * unit / (peak * c->gpu.attention_bwd_efficiency);
	}
	*fwd_s *= share;
	*bwd_s *= share;
}

/*
 * MLA's projections on one GPU (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1;
 * Megatron-Core's MLASelfAttention): the down-projections to the query
 * and key-value latents are replicated on every TP rank, the
 * up-projections split by heads.
 */
static double
mla_qkv_gemm_time(const struct model *m, const struct plan *p, const struct cluster *c,
		  struct compute_casts *casts)
{
	const struct model_mla *l = &m->mla;
	double t = p->tp, tokens = (double)p->micro_batch * p->seq_len, h = m->hidden;
	double heads = m->heads / t, qk = l->qk_nope_head_dim + l->qk_rope_head_dim;
	double time = compute_linear_time(c, p, tokens, l->kv_lora_rank + l->qk_rope_head_dim, h, 1, casts) +
		      compute_linear_time(c, p, tokens, heads * (l->qk_nope_head_dim + l->v_head_dim),
					  l->kv_lora_rank, 1, casts);

	if (l->q_lora_rank > 0)
		return time + compute_linear_time(c, p, tokens, l->q_lora_rank, h, 1, casts) +
		       compute_linear_time(c, p, tokens, heads * qk, l->q_lora_rank, 1, casts);
	return time + compute_linear_time(c, p, tokens, heads * qk, h, 1, casts);
}

/* The QKV and output projections of one layer's forward into @out.
 * Megatron's column/row split (Shoeybi et al. 2019): each GPU holds 1/t
 * of QKV, the heads, the output projection and both MLP matrices. */
static void
layer_attention_gemms(const struct model *m, const struct plan *p, const struct cluster *c,
		      struct compute_casts *casts, struct compute_layer *out)
{
	double t = p->tp, tokens = (double)p->micro_batch * p->seq_len, h = m->hidden;
	double d = model_head_dim(m);

	if (!model_has_part(m, MODEL_PART_ATTENTION)) {
		out->qkv_fwd_s = out->proj_fwd_s = 0.0;
	} else if (m->attention == MODEL_ATTN_MLA) {
		out->qkv_fwd_s = mla_qkv_gemm_time(m, p, c, casts);
		out->proj_fwd_s = compute_linear_time(c, p, tokens, h, (double)m->heads * m->mla.v_head_dim / t, 1,
						      casts);
	} else {
		double qd = (double)m->heads * d; /* h, unless head_dim says otherwise */

		/* the gated attention's gate comes out of the same GEMM (model_qkv_dim) */
		out->qkv_fwd_s = compute_linear_time(c, p, tokens, model_qkv_dim(m) / t, h, 1, casts);
		out->proj_fwd_s = compute_linear_time(c, p, tokens, h, qd / t, 1, casts);
	}
}

/* The MLP GEMMs of one layer's forward (dense, or the experts of an MoE
 * layer) into @out, split 1/t as layer_attention_gemms says. */
static void
layer_mlp_gemms(const struct model *m, const struct plan *p, const struct cluster *c, bool moe,
		bool sequential, int grouped, int main_grad, struct compute_casts *casts, struct compute_layer *out)
{
	double t = p->tp, tokens = (double)p->micro_batch * p->seq_len, h = m->hidden;
	double mlp_in = m->gated_mlp ? 2.0 * m->ffn_hidden : m->ffn_hidden;

	out->moe_wgrad_mem_s = out->moe_router_gemm_s = 0.0;
	if (!model_has_part(m, MODEL_PART_MLP)) {
		out->fc1_fwd_s = out->fc2_fwd_s = out->mlp_fwd_s = 0.0;
	} else if (moe) {
		out->mlp_fwd_s = moe_mlp_gemm_time(m, p, c, sequential, grouped, main_grad, casts,
						   &out->moe_wgrad_mem_s, &out->moe_router_gemm_s);
		out->fc1_fwd_s = out->fc2_fwd_s = 0.5 * out->mlp_fwd_s;
	} else {
		out->fc1_fwd_s = compute_linear_time(c, p, tokens, mlp_in / t, h, 1, casts); /* fc1 (+gate) */
		out->fc2_fwd_s = compute_linear_time(c, p, tokens, h, m->ffn_hidden / t, 1, casts);
		out->mlp_fwd_s = out->fc1_fwd_s + out->fc2_fwd_s;
	}
}

/* fp8attn: begin attention kernels */
int
compute_attention_kernel(const struct plan *p, const struct framework *fw)
{
	static const int from_framework[] = {
		[FRAMEWORK_ATTN_PROFILE] = PLAN_ATTN_PROFILE, [FRAMEWORK_ATTN_FA2] = PLAN_ATTN_FA2,
		[FRAMEWORK_ATTN_SDPA] = PLAN_ATTN_SDPA, [FRAMEWORK_ATTN_FA3] = PLAN_ATTN_FA3,
		[FRAMEWORK_ATTN_CUDNN] = PLAN_ATTN_CUDNN,
	};

	if (p && p->attention_kernel != PLAN_ATTN_FRAMEWORK)
		return p->attention_kernel;
	return fw ? from_framework[fw->attention_kernel] : PLAN_ATTN_PROFILE;
}

/*
 * A named kernel's throughput against the one the GPU profile measured
 * (the gpus/ profiles say which: FlashAttention-2 on Ampere, FlashAttention-3's
 * paper figures on Hopper, cuDNN's on Blackwell, ROCm's on CDNA3):
 * - FlashAttention-2: the profile's fa2_attention_speed (1 on Ampere,
 *   0.52 on Hopper, 0.35 on the B200: gpu.c cites them).
 * - FlashAttention-3 (Shah et al. 2024; Hopper only): the Hopper
 *   profiles' own figures, 1.
 * - cuDNN's fused attention (Transformer Engine's FusedAttention, which
 *   TE 1.3 and later pick over flash-attn on sm90: "Select FusedAttention
 *   on sm90 ... for performance", transformer_engine/pytorch/attention.py
 *   v1.5; dot_product_attention/utils.py from 1.9 on, any Hopper+): on
 *   Hopper COMPUTE_CUDNN_HOPPER_SPEED of FA3, see below; the Blackwell
 *   profiles measured it (1); elsewhere no public comparison with FA2
 *   was found, so FA2's speed is taken.
 * - PyTorch SDPA as torchtitan sets it: cuDNN's first on Blackwell (sm100)
 *   and FlashAttention-2 elsewhere (pytorch/torchtitan#1196).
 */
/*
 * plan-cli h100: cuDNN's fused attention against FlashAttention-3 on an
 * H100 SXM5 for the causal training case, from the FA3 paper's figures
 * (Shah et al. 2024, arXiv:2407.08608, head dim 128, TFLOP/s
 * at seq 4k / 8k; docs/research/gpu-data.md, S-fa3): forward, causal, cuDNN 518 / 529 against
 * FA3's 579 / 602 (0.895 / 0.879, 0.89); backward (the paper plots it
 * without a mask) 499 / 518 against 542 / 559 (0.921 / 0.927, 0.92).
 * A causal layer's backward does 2.5 times the forward's FLOPs at a
 * little less efficiency, about 0.73 of the kernel time, so the pair
 * runs at 1 / (0.27 / 0.89 + 0.73 / 0.92) = 0.912, 0.91 of FA3. The one
 * forward-only, non-causal comparison at a single shape (cuDNN 9.1 631
 * TFLOP/s, FA3 632 at (1, 24, 4608, 128): pytorch/pytorch#142132) does
 * not cover a causal training step.
 */
#define COMPUTE_CUDNN_HOPPER_SPEED 0.91

double
compute_attention_kernel_speed(const struct cluster *c, const struct plan *p, const struct framework *fw)
{
	bool blackwell = c->gpu.generation == GPU_GEN_BLACKWELL, hopper = c->gpu.generation == GPU_GEN_HOPPER;

	switch (compute_attention_kernel(p, fw)) {
	case PLAN_ATTN_FA2:
		return c->gpu.fa2_attention_speed;
	case PLAN_ATTN_CUDNN:
		return blackwell ? 1.0 : hopper ? COMPUTE_CUDNN_HOPPER_SPEED : c->gpu.fa2_attention_speed;
	case PLAN_ATTN_SDPA:
		return blackwell ? 1.0 : c->gpu.fa2_attention_speed;
	default: /* the profile's own, FA3 on Hopper */
		return 1.0;
	}
}

bool
compute_attention_kernel_check(const struct cluster *c, const struct plan *p, const struct framework *fw,
			       struct plan_error *err)
{
	const struct gpu *g = &c->gpu;
	int k = compute_attention_kernel(p, fw);

	/* A kernel the plan names, with flash attention off, was silently
	 * unused. Whose doing it is decides the advice: the user's
	 * --no-flash-attention on a GPU that runs fused attention, or a
	 * profile (a V100's) that says the GPU runs none. */
	if (!p->flash_attention && p->attention_kernel >= PLAN_ATTN_FA2 && p->attention_kernel < PLAN_ATTN_COUNT) {
		if (g->flash_attention == 1)
			return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
					      "attention kernel %s is a fused attention kernel, but --no-flash-attention "
					      "turns fused attention off; leave out one of the two",
					      plan_attention_kernel_names[p->attention_kernel]);
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "attention kernel %s is a fused attention kernel, but the profile of '%s' (%s) "
				      "says it runs none (flash_attention false); leave out --attention-kernel for its "
				      "unfused attention, or add --flash-attention to run the kernel anyway",
				      plan_attention_kernel_names[p->attention_kernel], g->name,
				      gpu_generation_names[g->generation]);
	}
	/* FlashAttention-3 is written for sm90 (Shah et al. 2024). */
	if (p->flash_attention && k == PLAN_ATTN_FA3 && g->generation != GPU_GEN_HOPPER) {
		if (p->attention_kernel == PLAN_ATTN_FRAMEWORK)
			return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
					      "framework '%s' runs attention kernel fa3 (FlashAttention-3), which runs on "
					      "Hopper only, and '%s' (%s) is not a Hopper GPU; name another with --attention-kernel "
					      "(fa2, cudnn, sdpa or profile)",
					      fw ? fw->name : "", g->name, gpu_generation_names[g->generation]);
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "attention kernel fa3 (FlashAttention-3) runs on Hopper only; '%s' (%s) is not a "
				      "Hopper GPU (valid here: framework, profile, fa2, cudnn or sdpa)",
				      g->name, gpu_generation_names[g->generation]);
	}
	return true;
}
/* fp8attn: end attention kernels */

/* The attention core's forward into *@fwd_s and, for a fused kernel, its
 * own backward into *@bwd_s (left as it is otherwise). */
static void
layer_attention_core(const struct model *m, const struct plan *p, const struct cluster *c,
		     const struct framework *fw, double *fwd_s, double *bwd_s)
{
	double b = p->micro_batch, s = p->seq_len, heads_local = m->heads / (double)p->tp;

	if (!model_has_part(m, MODEL_PART_ATTENTION)) {
		*fwd_s = *bwd_s = 0.0;
	} else if (p->flash_attention) {
		/* Another kernel than the one the GPU profile measured: its
		 * throughput relative to that one (llm-foundry's Triton flash
		 * attention, 1.3-2.5x slower than FlashAttention-2: Dao 2023,
		 * Sec. 4.1; frameworks/llm-foundry.yaml), on FlashAttention-2
		 * where the framework runs it and the profile measured another
		 * (FA3 or cuDNN's on Hopper). */
		double speed = (fw ? fw->attention_speed : 1.0) * compute_attention_kernel_speed(c, p, fw);

		double ifwd, ibwd;

		compute_flash_attention_kernel(m, p, c, compute_attention_kernel(p, fw), fwd_s, bwd_s);
		compute_dsa_indexer(m, p, c, &ifwd, &ibwd); /* 0 without DSA */
		*fwd_s = *fwd_s / speed + ifwd;
		*bwd_s = *bwd_s / speed + ibwd;
	} else {
		/* arch: unfused attention computes every score and masks those
		 * outside a sliding window (Hugging Face's eager attention; and
		 * Megatron-Core's DotProductAttention takes no window_size: "Sliding
		 * Window Attention is only supported by TEDotProductAttention",
		 * megatron/core/transformer/dot_product_attention.py, core_r0.12):
		 * a window saves it nothing. */
		*fwd_s = compute_gemm_time(c, s, s, model_qk_head_dim(m), b * heads_local) /* Q K^T */
		       + compute_gemm_time(c, s, model_v_head_dim(m), s, b * heads_local); /* scores V */
	}
}

/*
 * torchtitan's per-operator selective checkpointing (selective_ac_option
 * 'op', torchtitan's parallelize code: "Saves output of all compute ops,
 * except every second mm"): of the block's matmuls, in the order it runs
 * them (q, k, v, the output projection, then w1, w3, w2 with a gated MLP
 * or w1, w2), every second one is recomputed, k, the projection and w3
 * (or w2), and so is every element-wise operator, none of which is on the
 * save list; the attention kernel's output is saved. MLA: half its
 * projection GEMMs. An MoE layer's routed experts run torch._grouped_mm,
 * which is not on the list either (torchtitan/models/deepseek_v3/infra/
 * parallelize.py, 2026-04): their three grouped GEMMs run again from the
 * saved all-to-all outputs; of its aten.mm calls after the attention's
 * four, the router gate (5th) and the shared experts' w3 (7th) are
 * saved, their w1 and w2 (6th, 8th) recomputed (fc1 alone without a
 * gate). Without flash attention the scores' GEMMs (aten.bmm, not on the
 * list) are recomputed too; their softmax is in fwd_mem_s.
 */
static double
op_sac_recompute_time(const struct model *m, const struct plan *p, const struct cluster *c, bool moe,
		      int recipe, const struct compute_layer *out, double attn_gemm)
{
	double t = p->tp, tokens = (double)p->micro_batch * p->seq_len, h = m->hidden;
	double kvd = (double)m->kv_heads * model_head_dim(m);
	/* the forward counted the casts; the GEMMs at the recipe's speed */
	struct compute_casts scratch = { .bytes = 0.0, .recipe = recipe };
	double k = m->attention == MODEL_ATTN_MLA ? 0.5 * out->qkv_fwd_s
						   : compute_linear_time(c, p, tokens, kvd / t, h, 1, &scratch);
	double mlp = m->gated_mlp ? compute_linear_time(c, p, tokens, m->ffn_hidden / t, h, 1, &scratch)
				  : out->fc2_fwd_s;

	/* A layer of one part: that part's matmuls (a Mamba or GDN mixer is
	 * no torchtitan model's; its element-wise work is recomputed). */
	if (!model_has_part(m, MODEL_PART_ATTENTION))
		k = 0.0;
	if (!model_has_part(m, MODEL_PART_MLP))
		return k + out->proj_fwd_s + out->fwd_mem_s + (p->flash_attention ? 0.0 : attn_gemm);

	if (moe && model_is_moe(m)) {
		double sf = (double)m->moe.expert_ffn_hidden * m->moe.shared_experts, shared = 0.0;

		mlp = 0.0;
		if (sf > 0.0) {
			/* moe_mlp_gemm_time's shared GEMMs, w1 and w3 as one */
			shared = compute_linear_time(c, p, tokens, (m->gated_mlp ? 2.0 * sf : sf) / t, h, 1, &scratch) +
				 compute_linear_time(c, p, tokens, h, sf / t, 1, &scratch);
			mlp = compute_linear_time(c, p, tokens, sf / t, h, 1, &scratch) +
			      (m->gated_mlp ? compute_linear_time(c, p, tokens, h, sf / t, 1, &scratch) : 0.0);
		}
		/* the routed experts: the MLP's GEMMs less the router and shared */
		mlp += fmax(0.0, out->mlp_fwd_s - out->moe_router_gemm_s - shared);
	}

	/* Without flash attention its score GEMMs and softmax are not saved
	 * either (out->fwd_mem_s counts the softmax's traffic). */
	return k + out->proj_fwd_s + mlp + out->fwd_mem_s + (p->flash_attention ? 0.0 : attn_gemm);
}

/* plan-cli recomp: begin */
/*
 * Megatron-Core's --recompute-modules (transformer_config.py,
 * recompute_modules, core_r0.13.0): the forward work each submodule runs
 * again before its backward, one layer of kind @moe, one micro-batch.
 * core_attn reruns the attention core, a fused kernel's forward included
 * (attention.py's _checkpointed_attention_forward wraps TE's
 * DotProductAttention in tensor_parallel.checkpoint); layernorm the
 * norms memory_recompute_norms() counts (each reads and writes s b h
 * elements); mlp a dense layer's fc1,
 * fc2 and activation; moe an MoE layer's router, expert and shared-expert
 * GEMMs and activation (its all-to-alls: ep_layer_comm); moe_act the
 * experts' activation over their routed rows; shared_experts their two
 * GEMMs; mla_up_proj MLA's query and key-value up-projections. Modules
 * that a layer of this kind does not have cost nothing.
 */
static double
modules_recompute_time(const struct model *m, const struct plan *p, const struct cluster *c,
		       const struct framework *fw, bool moe, int recipe, const struct compute_layer *out,
		       double attn_gemm, double attn_mem)
{
	unsigned rm = (unsigned)p->recompute_modules;
	double t = p->tp, tokens = (double)p->micro_batch * p->seq_len, h = m->hidden;
	double sp = p->sequence_parallel ? t : 1.0, launch = c->gpu.launch_overhead_s;
	double act = m->gated_mlp ? 6.0 : 4.0; /* bytes an element of the activation moves: read 1-2, write 1 */
	struct compute_casts scratch = { .bytes = 0.0, .recipe = recipe }; /* the GEMMs at the recipe's speed */
	double time = 0.0;

	/* A hybrid model's Mamba and GDN layers checkpoint nothing of their
	 * own: MambaLayer has no selective recompute, and the GDN layer's
	 * norm is fused into in_proj (hybrid_layer_specs.py at d98e8a6). */
	if (model_has_part(m, MODEL_PART_MAMBA) || model_has_part(m, MODEL_PART_GDN))
		return 0.0;
	if (rm & 1u << PLAN_RM_CORE_ATTN)
		time += attn_gemm + (p->flash_attention ? 0.0 : compute_memory_time(c, attn_mem));
	/* A hybrid layer of one part: only the MoE layer has a norm of its
	 * own (pre_mlp_layernorm, a TENorm); the attention and MLP layers'
	 * norms are fused into linear_qkv and linear_fc1
	 * (TELayerNormColumnParallelLinear, hybrid_layer_specs.py at d98e8a6),
	 * and TransformerLayer recomputes only a norm that is not IdentityOp
	 * (transformer_layer.py, recompute_input_layernorm). */
	/* A transformer layer: memory_recompute_norms' (normrev: Megatron-Core's
	 * TE spec reruns MLA's input_layernorm and an MoE layer's
	 * pre_mlp_layernorm, the others' are fused into their first linear). */
	if ((rm & 1u << PLAN_RM_LAYERNORM) && (!m->parts || (moe && model_is_moe(m)))) {
		double norms = m->parts ? 1.0 : memory_recompute_norms(m, fw, moe && model_is_moe(m) ? 1.0 : 0.0);

		if (norms > 0.0)
			time += compute_memory_time(c, norms * 2.0 * 2.0 * tokens * h / sp) + norms * launch;
	}
	if (!model_has_part(m, MODEL_PART_MLP))
		return time;
	if ((rm & 1u << PLAN_RM_MLP) && !moe) {
		time += out->mlp_fwd_s + compute_memory_time(c, act * tokens * m->ffn_hidden / t) + launch;
		/* Under the TE spec the checkpoint holds fc1's fused norm
		 * (TELayerNormColumnParallelLinear; memory.c
		 * memory_recompute_mlp_holds_norm): rerun with the MLP, reading
		 * its input and writing ln_out, 2 bytes each an element of the
		 * rank's shard, as the layernorm module's rerun above. */
		if (memory_recompute_mlp_holds_norm(m, fw))
			time += compute_memory_time(c, 2.0 * 2.0 * tokens * h / sp) + launch;
	}
	if (moe && model_is_moe(m)) {
		double routed = m->moe.capacity_factor * m->moe.top_k * tokens * plan_etp(p) / t;
		double sf = (double)m->moe.expert_ffn_hidden * m->moe.shared_experts;

		if (rm & 1u << PLAN_RM_MOE) {
			time += out->mlp_fwd_s + compute_memory_time(c, act * (routed + tokens * m->moe.shared_experts / t) *
								     m->moe.expert_ffn_hidden / plan_etp(p)) + launch;
		} else {
			if (rm & 1u << PLAN_RM_MOE_ACT)
				time += compute_memory_time(c, act * routed * m->moe.expert_ffn_hidden / plan_etp(p)) +
					launch;
			if ((rm & 1u << PLAN_RM_SHARED_EXPERTS) && sf > 0.0)
				time += compute_linear_time(c, p, tokens, (m->gated_mlp ? 2.0 * sf : sf) / t, h, 1,
							    &scratch) +
					compute_linear_time(c, p, tokens, h, sf / t, 1, &scratch);
		}
	}
	if ((rm & 1u << PLAN_RM_MLA_UP_PROJ) && m->attention == MODEL_ATTN_MLA) {
		const struct model_mla *l = &m->mla;
		double a = m->heads / t;

		if (l->q_lora_rank > 0)
			time += compute_linear_time(c, p, tokens, a * model_qk_head_dim(m), l->q_lora_rank, 1, &scratch);
		time += compute_linear_time(c, p, tokens, a * (l->qk_nope_head_dim + l->v_head_dim), l->kv_lora_rank, 1,
					    &scratch);
	}
	return time;
}
/* plan-cli recomp: end */

/* What recompute adds to the backward of a layer whose forward is @out->fwd_s. */
static double
layer_recompute_time(const struct model *m, const struct plan *p, const struct cluster *c,
		     const struct framework *fw, bool moe, const struct compute_layer *out, double attn_gemm,
		     double attn_mem)
{
	switch (p->recompute) {
	case PLAN_RECOMPUTE_FULL:
		return out->fwd_s;
	case PLAN_RECOMPUTE_SELECTIVE:
		if (p->recompute_modules) /* plan-cli recomp */
			return modules_recompute_time(m, p, c, fw, moe, fp8_recipe_resolve(p, fw), out,
						      attn_gemm, attn_mem);
		if (fw && fw->selective_recompute == FRAMEWORK_SAC_OP)
			return op_sac_recompute_time(m, p, c, moe, fp8_recipe_resolve(p, fw), out, attn_gemm);
		/* Megatron-Core checkpoints the core attention whatever its
		 * backend (attention.py, core_v0.6.0 on: checkpoint_core_attention
		 * = recompute_granularity == 'selective', and from core_r0.13.0
		 * "core_attn" in recompute_modules, its default; the forward
		 * runs TE's DotProductAttention inside tensor_parallel.checkpoint),
		 * so a fused kernel's forward runs again before its backward. */
		if (fw && fw->selective_recompute == FRAMEWORK_SAC_CORE_ATTN)
			return attn_gemm + (p->flash_attention ? 0.0 : compute_memory_time(c, attn_mem));
		/* Korthikanti et al. Sec. 4.2: only the attention core is redone;
		 * a fused (flash) attention already recomputes in its backward
		 * (Megatron-LM's legacy model checkpoints only the unfused one). */
		return p->flash_attention ? 0.0 : attn_gemm + compute_memory_time(c, attn_mem);
	default:
		return 0.0;
	}
}

/* plan-cli hopper: begin (fp32 main_grad accumulation) */
/*
 * What adding one micro-batch's weight gradients of @weights weights,
 * @weight_elems elements in all, into the fp32 main_grad costs beyond
 * their wgrad GEMMs (which read @operand_bytes of X and dY, 2 m (n + k)
 * for one m-row GEMM of an n x k weight in 16 bits, and take @wgrad_s),
 * as the framework does it (enum framework_main_grad):
 * - fused (Megatron's --gradient-accumulation-fusion, on by default:
 *   megatron/core/tensor_parallel/layers.py calls
 *   fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp32, a cublasGemmEx
 *   with beta = 1 into the fp32 buffer; with Transformer Engine its Linear
 *   gets fuse_wgrad_accumulation and runs general_gemm(accumulate=True,
 *   out=main_grad)): the epilogue reads and writes 4-byte C, 8 bytes a
 *   weight element where the measured GEMM writes 2. How that shows
 *   depends on how the epilogue runs. Hopper's and Blackwell's kernels are
 *   TMA warp-specialised (CUTLASS 3 sm90 collectives, cuBLAS's sm90_xmma
 *   kernels): a producer warp loads C by TMA ahead of the epilogue and
 *   D leaves by an asynchronous TMA store while the next tile's operands
 *   load (CUTLASS include/cutlass/epilogue/collective/
 *   sm90_epilogue_tma_warpspecialized.hpp), so the traffic is a
 *   roofline: the longer of the GEMM and all its bytes, 2 m (n + k) of
 *   operands and 8 n k of C and D (moe_expert_gemm() the same for an
 *   expert's). Ampere's and older kernels (CUTLASS 2.x multistage, one
 *   CTA a tile, the CTAs of a wave reaching their epilogues together)
 *   load the source tile after their mainloop in the same warps and wait
 *   for it before computing D: its 4 bytes an element are added at the
 *   memory bandwidth. The stores are posted (the warps do not wait for
 *   them; L2 absorbs them and drains them behind the next tile's
 *   mainloop), so the 2 more bytes of a 4-byte D are not.
 * - unfused (Megatron-LM before gradient accumulation fusion, 2021: its
 *   DDP hook runs param.main_grad.add_(param.grad.data) after each
 *   backward): a kernel of its own reading the 16-bit gradient (2) and
 *   the fp32 main_grad (4) and writing it (4), 10 bytes an element, one
 *   launch a weight (an expert's weights are parameters of their own:
 *   TEGroupedLinear's weight0..weightN-1, SequentialMLP's experts).
 * For the 4096 x 3072 QKV weight of Llama 3 8B at TP 2 (8192 tokens) on
 * an H100 the fused epilogue's 100 MB take 33 us against the GEMM's
 * 0.3 ms: hidden. With few tokens a GEMM (short sequences, small
 * micro-batches) the traffic bounds it.
 */
static double
main_grad_traffic(const struct cluster *c, int how, double operand_bytes, double weight_elems, double weights,
		  double wgrad_s)
{
	bool tma = c->gpu.generation == GPU_GEN_HOPPER || c->gpu.generation == GPU_GEN_BLACKWELL;

	switch (how) {
	case FRAMEWORK_MG_FUSED:
		if (tma)
			return fmax(0.0, compute_memory_time(c, operand_bytes + 8.0 * weight_elems) - wgrad_s);
		return compute_memory_time(c, 4.0 * weight_elems);
	case FRAMEWORK_MG_UNFUSED:
		return compute_memory_time(c, 10.0 * weight_elems) + weights * c->gpu.launch_overhead_s;
	default:
		return 0.0;
	}
}

/*
 * One m x n x k wgrad GEMM of a linear layer in the plan's precision
 * (@recipe: the plan's fp8 recipe). In 16 bits its operands are 2 bytes
 * an element and it takes the forward GEMM's time. fp8fixed: under fp8
 * Transformer Engine's wgrad GEMM reads the fp8 copies of X^T and dY (1
 * byte an element) and promotes to fp32 (use_split_accumulator =
 * _2X_ACC_WGRAD, module/linear.py and layernorm_linear.py backward, TE
 * v1.7-v1.9, writing into main_grad with accumulate=True under
 * fuse_wgrad_accumulation): its time is the forward's plus half the
 * promoting difference compute_linear_time() gives the backward (as
 * fit_gemm_model_time() and moe_expert_gemm() take it), and the traffic
 * is weighed against that.
 */
static double
main_grad_gemm(const struct cluster *c, const struct plan *p, int recipe, int how, double m, double n, double k)
{
	struct compute_casts one = { .bytes = 0.0, .recipe = recipe };
	double operand = gemm_operand_bytes(p), wgrad_s;

	if (how == FRAMEWORK_MG_NONE)
		return 0.0;
	wgrad_s = compute_linear_time(c, p, m, n, k, 1, &one);
	wgrad_s += 0.5 * one.bwd_gemm_s;
	return main_grad_traffic(c, how, operand * m * (n + k), n * k, 1.0, wgrad_s);
}

/*
 * The main_grad accumulation of one layer's linear weights on one GPU
 * (1/t of each: layer_attention_gemms, layer_mlp_gemms), one micro-batch:
 * QKV (or MLA's projections), the output projection, and a dense MLP's fc1
 * (+ gate) and fc2 or an MoE layer's shared experts. The routed experts'
 * fp32 traffic is moe_expert_gemm()'s; the router's weight is left out
 * (h x E, small).
 */
static double
layer_main_grad_time(const struct model *m, const struct plan *p, const struct cluster *c,
		     const struct framework *fw, bool moe)
{
	int how = fw ? fw->main_grad : FRAMEWORK_MG_NONE, recipe = fp8_recipe_resolve(p, fw);
	double t = p->tp, tokens = (double)p->micro_batch * p->seq_len, h = m->hidden, time = 0.0;

	if (how == FRAMEWORK_MG_NONE)
		return 0.0;
	if (mixer_present(m)) /* in_proj (this rank's columns) and out_proj */
		time += main_grad_gemm(c, p, recipe, how, tokens, mixer_in_proj_dim(m) / t, h) +
			main_grad_gemm(c, p, recipe, how, tokens, h, mixer_out_proj_in_dim(m) / t);
	if (!model_has_part(m, MODEL_PART_ATTENTION)) {
		/* no attention weights */
	} else if (m->attention == MODEL_ATTN_MLA) {
		const struct model_mla *l = &m->mla;
		double a = m->heads / t;

		time += main_grad_gemm(c, p, recipe, how, tokens, l->kv_lora_rank + l->qk_rope_head_dim, h) +
			main_grad_gemm(c, p, recipe, how, tokens, a * (l->qk_nope_head_dim + l->v_head_dim), l->kv_lora_rank) +
			main_grad_gemm(c, p, recipe, how, tokens, h, a * l->v_head_dim);
		if (l->q_lora_rank > 0)
			time += main_grad_gemm(c, p, recipe, how, tokens, l->q_lora_rank, h) +
				main_grad_gemm(c, p, recipe, how, tokens, a * model_qk_head_dim(m), l->q_lora_rank);
		else
			time += main_grad_gemm(c, p, recipe, how, tokens, a * model_qk_head_dim(m), h);
	} else {
		double qd = (double)m->heads * model_head_dim(m);

		time += main_grad_gemm(c, p, recipe, how, tokens, model_qkv_dim(m) / t, h) +
			main_grad_gemm(c, p, recipe, how, tokens, h, qd / t);
	}
	if (!model_has_part(m, MODEL_PART_MLP)) {
		/* no MLP weights */
	} else if (!moe) {
		double f = m->ffn_hidden;

		time += main_grad_gemm(c, p, recipe, how, tokens, (m->gated_mlp ? 2.0 * f : f) / t, h) +
			main_grad_gemm(c, p, recipe, how, tokens, h, f / t);
	} else if (m->moe.shared_experts > 0) {
		double sf = (double)m->moe.expert_ffn_hidden * m->moe.shared_experts;

		time += main_grad_gemm(c, p, recipe, how, tokens, (m->gated_mlp ? 2.0 * sf : sf) / t, h) +
			main_grad_gemm(c, p, recipe, how, tokens, h, sf / t);
	}
	return time;
}
/* A layer's backward from its forward (@out's forward fields), its
 * recomputation and its main_grad and norm-dweight extras. */
static void
layer_backward_time(const struct model *m, const struct plan *p, const struct cluster *c,
		    const struct framework *fw, bool moe, const struct compute_casts *casts, double attn_gemm,
		    double attn_bwd, double attn_mem, struct compute_layer *out)
{
	double cast_fwd_s, cast_bwd_s;

	/* Backward: a dX and a dW GEMM per forward GEMM (2x the FLOPs), and
	 * element-wise gradients that read and write about twice the bytes;
	 * a flash-attention backward is its own kernel. fp8: the recipe's own
	 * backward casts (fp8_recipe.c) in place of twice the forward's, and
	 * the backward GEMMs' split accumulation (compute_linear_time). */
	cast_fwd_s = compute_memory_time(c, casts->bytes) + casts->kernels * c->gpu.launch_overhead_s;
	cast_bwd_s = compute_memory_time(c, casts->bwd_bytes) + casts->bwd_kernels * c->gpu.launch_overhead_s;
	out->bwd_s = 2.0 * (out->fwd_s - cast_fwd_s - (p->flash_attention ? attn_gemm : 0.0)) + cast_bwd_s +
		     (p->flash_attention ? attn_bwd : 0.0) + out->moe_wgrad_mem_s + casts->bwd_gemm_s;
	/* The permutations' backward as counted, where it is not twice the forward. */
	out->bwd_s += out->moe_permute_bwd_s - 2.0 * out->moe_permute_s;
	out->attn_bwd_s = p->flash_attention ? attn_bwd : 2.0 * attn_gemm;
	out->recompute_s = layer_recompute_time(m, p, c, fw, moe, out, attn_gemm, attn_mem);
	out->main_grad_s = layer_main_grad_time(m, p, c, fw, moe); /* plan-cli hopper */
	out->bwd_s += out->main_grad_s;
	out->norm_dweight_s = fw && fw->elementwise == FRAMEWORK_EW_COMPILED ? compiled_norm_dweight(m, p, c) : 0.0;
	out->bwd_s += out->norm_dweight_s;
}

/* plan-cli hopper: end */

/* A Mamba or GDN layer's mixer (plan/mixer.h) into @mx and @out's mixer
 * fields; zeros for a layer without one. */
static void
layer_mixer(const struct model *m, const struct plan *p, const struct cluster *c, struct compute_casts *casts,
	    struct mixer_cost *mx, struct compute_layer *out)
{
	mixer_cost(m, p, c, casts, mx);
	out->mixer_fwd_s = mx->fwd_s;
	out->mixer_in_proj_fwd_s = mx->in_proj_fwd_s;
	out->mixer_out_proj_fwd_s = mx->out_proj_fwd_s;
	out->scan_fwd_s = mx->scan_fwd_s;
	out->scan_bwd_s = mx->scan_bwd_s;
}

void
compute_layer_time(const struct model *m, const struct plan *p, const struct cluster *c,
		   const struct framework *fw, bool moe, struct compute_layer *out)
{
	struct mixer_cost mx;
	double gemm = 0.0, attn_gemm, attn_bwd = 0.0, attn_mem, mem_bytes;
	struct compute_casts casts = { .bytes = 0.0, .recipe = fp8_recipe_resolve(p, fw),
				       .recast = fp8_recipe_recasts(p, fw) };
	double permute_bytes = 0.0, permute_bwd_bytes = 0.0;
	int kernels, permute_kernels = 0, permute_bwd_kernels = 0;

	layer_attention_gemms(m, p, c, &casts, out);
	gemm += out->qkv_fwd_s + out->proj_fwd_s;
	layer_mlp_gemms(m, p, c, moe, fw && fw->moe_sequential_mlp,
			fw ? fw->moe_grouped_gemm : FRAMEWORK_MOE_GEMM_TE_STREAMS,
			fw ? fw->main_grad : FRAMEWORK_MG_NONE, &casts, out);
	fp8_norm_fused_inputs(m, p, c, moe, &casts);
	gemm += out->mlp_fwd_s;
	layer_attention_core(m, p, c, fw, &attn_gemm, &attn_bwd);
	gemm += attn_gemm;
	layer_mixer(m, p, c, &casts, &mx, out);
	gemm += mx.gemm_fwd_s + mx.scan_fwd_s;
	mem_bytes = layer_fwd_mem_bytes(m, p, moe, fw && fw->moe_sequential_mlp,
					fw ? fw->elementwise : FRAMEWORK_EW_FUSED,
					fw ? fw->moe_dispatcher : FRAMEWORK_MOE_DISPATCH_ALLTOALL, &attn_mem, &kernels,
					&permute_bytes, &permute_kernels, &permute_bwd_bytes, &permute_bwd_kernels);
	if (moe && fw && fw->moe_sequential_mlp && fw->moe_sequential_slices) {
		double sf, sb;
		int sfk, sbk;

		sequential_slices_bytes(m, p, (double)p->micro_batch * p->seq_len, &sf, &sb, &sfk, &sbk);
		/* Counted with the permutations: data moved around the experts. */
		mem_bytes += sf;
		kernels += sfk;
		permute_bytes += sf;
		permute_kernels += sfk;
		permute_bwd_bytes += sb;
		permute_bwd_kernels += sbk;
	}
	out->moe_permute_s = compute_memory_time(c, permute_bytes) + permute_kernels * c->gpu.launch_overhead_s;
	out->moe_permute_bwd_s = compute_memory_time(c, permute_bwd_bytes) +
				 permute_bwd_kernels * c->gpu.launch_overhead_s;

	out->fwd_gemm_s = gemm;
	/* Element-wise kernels: their traffic at the achieved bandwidth, plus
	 * a launch each (2-5 us on the GPU: torchao's roofline, XLA's table). */
	out->fwd_mem_s = compute_memory_time(c, mem_bytes + casts.bytes) +
			 (kernels + casts.kernels) * c->gpu.launch_overhead_s;
	out->ew_kernels = kernels + casts.kernels;
	if (mixer_present(m)) {
		out->fwd_mem_s += mx.mem_fwd_s;
		out->ew_kernels += mx.fwd_kernels;
	}
	out->fwd_s = out->fwd_gemm_s + out->fwd_mem_s;
	out->attn_fwd_s = attn_gemm;
	layer_backward_time(m, p, c, fw, moe, &casts, attn_gemm, attn_bwd, attn_mem, out);
	/* The mixer's backward as mixer_cost counts it, where the layer's
	 * rule took twice its forward: the scan's own kernels, the conv1d's
	 * backward, the norm's. */
	if (mixer_present(m))
		out->bwd_s += (mx.scan_bwd_s - 2.0 * mx.scan_fwd_s) + (mx.mem_bwd_s - 2.0 * mx.mem_fwd_s);
}

void
compute_layer_scale(struct compute_layer *cl, double f)
{
	double *t[] = { &cl->fwd_s, &cl->bwd_s, &cl->recompute_s, &cl->fwd_gemm_s, &cl->fwd_mem_s,
			&cl->mlp_fwd_s, &cl->attn_fwd_s, &cl->qkv_fwd_s, &cl->proj_fwd_s, &cl->fc1_fwd_s,
			&cl->fc2_fwd_s, &cl->attn_bwd_s, &cl->moe_wgrad_mem_s, &cl->moe_router_gemm_s,
			&cl->moe_permute_s, &cl->moe_permute_bwd_s, &cl->main_grad_s, &cl->norm_dweight_s,
			&cl->mixer_fwd_s, &cl->mixer_in_proj_fwd_s, &cl->mixer_out_proj_fwd_s, &cl->scan_fwd_s, &cl->scan_bwd_s };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		*t[i] *= f;
}

void
compute_ends_scale(struct compute_ends *ce, double f)
{
	ce->embed_fwd_s *= f;
	ce->embed_bwd_s *= f;
	ce->head_fwd_s *= f;
	ce->head_bwd_s *= f;
	ce->head_mem_s *= f;
	ce->metric_s *= f;
}

/*
 * plan-cli simumoe: bytes per element of the embedding table (its TP
 * shard, V/t x h) that each micro-batch's backward moves under a
 * framework with an fp32 main_grad. The lookup's backward is PyTorch's
 * embedding_dense_backward (F.embedding in Megatron-Core's
 * VocabParallelEmbedding, tensor_parallel/layers.py): its CUDA kernel
 * allocates the weight's gradient as at::zeros over the whole table in
 * the weight's 16-bit dtype (aten/src/ATen/native/cuda/
 * EmbeddingBackwardKernel.cu, embedding_backward_cuda_kernel), then
 * scatters the tokens' rows into it (the 2 x forward above): the zero
 * fill writes 2 bytes an element. The embedding is no linear layer, so
 * its gradient reaches main_grad through the DDP hook
 * (megatron/core/distributed/distributed_data_parallel.py
 * _make_backward_post_hook, core_v0.6.0 to core_r0.14.0; the 2021 code's
 * megatron/model/distributed.py alike): param.main_grad.add_(param.grad)
 * reads 2 + 4 and writes 4. 12 bytes in all, per micro-batch.
 */
#define EMBED_MAIN_GRAD_BYTES 12.0
/*
 * Without an fp32 main_grad the zero fill of that gradient still runs:
 * embedding_dense_backward allocates it with at::zeros over the whole
 * table in both of its CUDA paths (the sort-based one and, up to 3072
 * tokens, embedding_backward_feature_kernel), 2 bytes an element of the
 * V/t x h shard, every micro-batch's backward. Measured on an H200
 * (docs/measured/h200-2026-12-04, PyTorch 2.11, nn.Embedding of a Llama 3
 * 8B shape): a FillFunctor<BFloat16> kernel of the table's size in each
 * backward (128,256 x 4,096 x 2 B = 1.05 GB, about 0.25 ms); plan-cli
 * counted only the rows. The segment kernels that scatter the rows
 * (compute_grad_weight, sum_and_scatter: 0.54 ms for 8192 tokens, about
 * 0.16 of the spec bandwidth on their bytes) are left to the rows' 2 x
 * forward: one measurement, on random tokens.
 */
#define EMBED_ZERO_FILL_BYTES 2.0

void
compute_ends_time(const struct model *m, const struct plan *p, const struct cluster *c,
		  const struct framework *fw, struct compute_ends *out)
{
	double t = p->tp, tokens = (double)p->micro_batch * p->seq_len, h = m->hidden;
	double v_local = m->vocab / t;
	/* plan-cli h100: the loss's bytes per logit, the framework's. */
	double loss_fwd = fw ? fw->loss_fwd_bytes : FRAMEWORK_LOSS_FWD_BYTES;
	double loss_bwd = fw ? fw->loss_bwd_bytes : FRAMEWORK_LOSS_BWD_BYTES;

	/* Embedding lookup: read rows, write the activations (+ dropout). */
	out->embed_fwd_s = compute_memory_time(c, 2.0 * 2.0 * tokens * h);
	out->embed_bwd_s = 2.0 * out->embed_fwd_s;
	/* plan-cli simumoe: with an fp32 main_grad (Megatron's DDP) the
	 * embedding's gradient is not a fused wgrad: every micro-batch
	 * writes the whole V/t x h table's gradient and adds it to main_grad
	 * (EMBED_MAIN_GRAD_BYTES). */
	if (fw && fw->main_grad != FRAMEWORK_MG_NONE)
		out->embed_bwd_s += compute_memory_time(c, EMBED_MAIN_GRAD_BYTES * v_local * h);
	else
		out->embed_bwd_s += compute_memory_time(c, EMBED_ZERO_FILL_BYTES * v_local * h);
	/* Logits: a tokens x h x V/t GEMM (vocab-parallel), then the
	 * cross-entropy over the tokens x V/t logits, its traffic the
	 * framework's (loss_fwd_bytes, loss_bwd_bytes): a fused kernel on
	 * fp32 logits reads and writes them about three times forward and
	 * twice backward (12 + 8 bytes); Megatron-Core's unfused
	 * vocab-parallel loss moves 38 + 14 (frameworks/megatron-lm.yaml). */
	out->head_mem_s = compute_memory_time(c, (loss_fwd + loss_bwd) * tokens * v_local);
	out->head_fwd_s = compute_gemm_time(c, tokens, v_local, h, 1) +
			  compute_memory_time(c, loss_fwd * tokens * v_local);
	out->head_bwd_s = 2.0 * compute_gemm_time(c, tokens, v_local, h, 1) +
			  compute_memory_time(c, loss_bwd * tokens * v_local);
	/* plan-cli hopper: the output layer's wgrad into its fp32 main_grad
	 * (a ColumnParallelLinear: main_grad_gemm()); counted with the
	 * element-wise work. It runs in 16 bits under fp8 as well (Megatron's
	 * output_layer is tensor_parallel.ColumnParallelLinear, outside
	 * Transformer Engine's fp8_autocast modules), as head_fwd_s has it. */
	if (fw && fw->main_grad != FRAMEWORK_MG_NONE) {
		struct plan p16 = *p;
		double mg;

		if (plan_low_precision(&p16))
			p16.precision = PLAN_PRECISION_BF16;
		mg = main_grad_gemm(c, &p16, PLAN_FP8_DELAYED, fw->main_grad, tokens, v_local, h);

		out->head_bwd_s += mg;
		out->head_mem_s += mg;
	}
	/*
	 * plan-cli itercost: a trainer that computes training metrics from
	 * the logits passes over them again after each micro-batch's
	 * backward. Composer (trainer.py _train_microbatch ->
	 * _eval_train_metrics, v0.12-v0.17) reuses the forward's outputs and
	 * updates each train metric: llm-foundry's MPT has two
	 * (LanguageCrossEntropy, LanguagePerplexity; modeling_mpt.py
	 * use_train_metrics, default on), each an unfused
	 * torch.nn.CrossEntropyLoss(reduction='sum') of the bf16 logits
	 * (composer/metrics/nlp.py) under the amp_bf16 autocast, which runs
	 * cross_entropy in fp32: the cast (read 2, write 4) and log_softmax
	 * (read 4, write 4), at least 14 bytes a logit each (nll_loss reads
	 * one logit a token). Memory-bound GPU work, in no_grad.
	 */
	out->metric_s = compute_memory_time(c, (fw ? fw->metric_logit_bytes : 0.0) * tokens * v_local);
}

/*
 * Mixed-precision Adam (Rajbhandari et al. 2020, ZeRO, Sec. 3.1: 16 bytes
 * of state per parameter): the step reads the 16-bit gradient and the
 * fp32 master weight, momentum and variance, and writes the three fp32
 * states and the 16-bit weight: 2 + 12 + 12 + 2 = 28 bytes per parameter
 * it owns. Around it, gradient clipping reads those gradients once more
 * for their norm (fp32: 4 bytes), and the gradient buffer is zeroed for
 * the next iteration (4 bytes each: Megatron's fp32 main_grad; a sharded
 * buffer under ZeRO-2/3): docs/research/framework-data.md, Sec. 9.
 */
double
compute_optimizer_time(const struct cluster *c, double params, double grad_buffer_params,
		       double fp8_cast_bytes)
{
	/* fp8: the updated weights cast again (the recipe's bytes). */
	return compute_memory_time(c, 32.0 * params + 4.0 * grad_buffer_params + fp8_cast_bytes);
}
