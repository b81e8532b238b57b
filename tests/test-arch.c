/*
 * Architectures: parallel attention + MLP blocks (GPT-J, PaLM, GPT-NeoX,
 * Falcon) and sliding-window attention (Mistral, Gemma 2/3, gpt-oss,
 * Qwen2). Every expected value is worked out by hand in the comment
 * above its assertion.
 */
#include <math.h>

#include "fixtures.h"
#include "testutil.h"
#include "plan/compute.h"
#include "plan/flops.h"
#include "plan/fp8_recipe.h"
#include "plan/framework.h"
#include "plan/memory.h"
#include "plan/tensor_par.h"
#include "plan/topology.h"

/* The toy GPT of testutil.h (L 2, h 1024, a 8 of d 128, s 1024) with a
 * sliding window block. */
#define TOY_WINDOW(w, pattern) TOY_MODEL_YAML "sliding_window:\n  window: " w "\n  pattern: " pattern "\n"

/*
 * Causal pairs under a window, counted by hand: s 8, w 3, query i meets
 * min(i, 3) keys: 1 + 2 + 3 + 3 + 3 + 3 + 3 + 3 = 21; the closed form
 * s w - w (w - 1) / 2 = 24 - 3 = 21. A window wider than the sequence
 * is the whole causal triangle: s 4, w 8: 1 + 2 + 3 + 4 = 10; w = s the
 * same, 10 (4 x 4 - 4 x 3 / 2 = 10).
 */
START_TEST(test_window_pairs)
{
	ck_assert_double_eq_tol(model_window_pairs(8, 3), 21.0, 1e-12);
	ck_assert_double_eq_tol(model_window_pairs(4, 8), 10.0, 1e-12);
	ck_assert_double_eq_tol(model_window_pairs(4, 4), 10.0, 1e-12);
	ck_assert_double_eq_tol(model_window_pairs(1, 1), 1.0, 1e-12);
}
END_TEST

/*
 * Which layers are windowed, 1-based, the pattern repeated past
 * first_global_layers:
 * - "LG" over 6 layers (Gemma 2: layer_idx % 2 == 0 is sliding): 1, 3, 5.
 * - "LLLLLG" over 62 layers (Gemma 3 27B: (layer_idx + 1) % 6 != 0 is
 *   sliding): all but 6, 12, ..., 60: 62 - 10 = 52.
 * - "L" after 2 global layers (Qwen2's max_window_layers 2) of 6: 3..6, 4.
 */
START_TEST(test_window_layers)
{
	struct model m;

	test_load_model(&m, "name: t\nlayers: 6\nhidden: 64\nheads: 4\nvocab: 10\nseq_len: 16\n"
			    "sliding_window:\n  window: 4\n  pattern: LG\n");
	ck_assert(model_layer_is_windowed(&m, 1));
	ck_assert(!model_layer_is_windowed(&m, 2));
	ck_assert(model_layer_is_windowed(&m, 5));
	ck_assert_int_eq(model_windowed_layers(&m), 3);
	test_load_model(&m, "name: t\nlayers: 62\nhidden: 64\nheads: 4\nvocab: 10\nseq_len: 16\n"
			    "sliding_window:\n  window: 4\n  pattern: LLLLLG\n");
	ck_assert_int_eq(model_windowed_layers(&m), 52);
	ck_assert(!model_layer_is_windowed(&m, 6));
	ck_assert(model_layer_is_windowed(&m, 61));
	test_load_model(&m, "name: t\nlayers: 6\nhidden: 64\nheads: 4\nvocab: 10\nseq_len: 16\n"
			    "sliding_window:\n  window: 4\n  first_global_layers: 2\n");
	ck_assert_int_eq(model_windowed_layers(&m), 4);
	ck_assert(!model_layer_is_windowed(&m, 2));
	ck_assert(model_layer_is_windowed(&m, 3));
	/* No block: no windowed layer, fractions exactly 1. */
	test_load_model(&m, TOY_MODEL_YAML);
	ck_assert_int_eq(model_windowed_layers(&m), 0);
	ck_assert_double_eq(model_attention_work_fraction(&m, 1024), 1.0);
	ck_assert_double_eq(model_attention_key_fraction(&m, 1024), 1.0);
}
END_TEST

/*
 * The toy GPT, s 1024, window 256 on layer 1 of 2 ("LG"): the windowed
 * layer's pairs 1024 x 256 - 256 x 255 / 2 = 262,144 - 32,640 = 229,504
 * of the causal 1024^2 / 2 = 524,288, 0.437744140625; the mean with the
 * global layer (1 + 0.437744140625) / 2 = 0.7188720703125. Keys a query
 * meets (model FLOPs): (1 + 256 / 1024) / 2 = 0.625.
 */
START_TEST(test_window_fractions)
{
	struct model m;

	test_load_model(&m, TOY_WINDOW("256", "LG"));
	ck_assert_double_eq_tol(model_attention_work_fraction(&m, 1024), 0.7188720703125, 1e-15);
	ck_assert_double_eq_tol(model_attention_key_fraction(&m, 1024), 0.625, 1e-15);
	/* A window as long as the sequence changes nothing. */
	test_load_model(&m, TOY_WINDOW("1024", "L"));
	ck_assert_double_eq_tol(model_attention_work_fraction(&m, 1024), 1.0, 1e-15);
	ck_assert_double_eq_tol(model_attention_key_fraction(&m, 1024), 1.0, 1e-15);
}
END_TEST

/*
 * Model FLOPs per token (SC21 convention): a global layer's attention is
 * 2 s a (d_qk + d_v) = 2 x 1024 x 8 x 256 = 4,194,304 (= 4 s h); with a
 * 256-token window in both layers a query meets 256 keys: 1,048,576. Two
 * layers: 2 x (4,194,304 - 1,048,576) = 6,291,456 fewer per token; the
 * matrix FLOPs do not move.
 */
START_TEST(test_window_model_flops)
{
	struct model g, w;

	test_load_model(&g, TOY_MODEL_YAML);
	test_load_model(&w, TOY_WINDOW("256", "L"));
	ck_assert_double_eq_tol(flops_forward_per_token(&g, 1024) - flops_forward_per_token(&w, 1024), 6291456.0,
				1e-6);
}
END_TEST

/*
 * Flash attention with a window (test-compute.c's test_flash_attention
 * for the global case: 2^31 FLOPs forward). Both toy layers windowed at
 * 256: 2^31 x 0.437744140625 = 940,048,384 FLOPs; forward at 100 TFLOP/s
 * x 0.5 plus 10 us: 1.880096768e-5 + 1e-5 = 2.880096768e-5 s; backward
 * 2.5 x that at 0.25: 9.40048384e-5 + 1e-5 = 1.040048384e-4 s (the Q, K,
 * V, O traffic, 8 MiB at 1 TB/s, stays below both).
 * CP 2 (each rank s 512 of 1024): half of it, 470,024,192 FLOPs:
 * 9.40048384e-6 + 1e-5 = 1.940048384e-5 s forward.
 */
START_TEST(test_window_flash_time)
{
	struct cluster c;
	struct model m;
	struct plan p;
	double fwd, bwd;

	test_load_cluster(&c, FIXTURE_FLASH_CLUSTER_YAML);
	test_load_model(&m, TOY_WINDOW("256", "L"));
	fixture_one_gpu_plan(&p);
	compute_flash_attention(&m, &p, &c, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd, 2.880096768e-5, 1e-15);
	ck_assert_double_eq_tol(bwd, 1.040048384e-4, 1e-15);
	p.cp = 2;
	p.seq_len = 512;
	compute_flash_attention(&m, &p, &c, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd, 1.940048384e-5, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * Memory: flash attention keeps O(s) whatever the window, and unfused
 * attention computes and keeps every score, masked (compute.c): a window
 * changes neither. Nor does it change unfused attention's time.
 */
START_TEST(test_window_memory_unchanged)
{
	struct cluster c;
	struct model g, w;
	struct plan p;
	struct compute_layer lg, lw;

	test_load_cluster(&c, FIXTURE_FLASH_CLUSTER_YAML);
	test_load_model(&g, TOY_MODEL_YAML);
	test_load_model(&w, TOY_WINDOW("256", "L"));
	fixture_one_gpu_plan(&p);
	ck_assert_double_eq(memory_layer_activations(&g, &p, NULL), memory_layer_activations(&w, &p, NULL));
	p.flash_attention = false;
	ck_assert_double_eq(memory_layer_activations(&g, &p, NULL), memory_layer_activations(&w, &p, NULL));
	compute_layer_time(&g, &p, &c, NULL, false, &lg);
	compute_layer_time(&w, &p, &c, NULL, false, &lw);
	ck_assert_double_eq(lg.attn_fwd_s, lw.attn_fwd_s);
	cluster_release(&c);
}
END_TEST

/*
 * A parallel block's activations (Korthikanti et al. 2022, Sec. 4.1):
 * the toy GPT with dropout, s b h = 2^20, t 1, flash attention (no s^2
 * terms): Korthikanti's 34 s b h = 35,651,584 B sequentially; one shared
 * norm keeps one norm input and one QKV/fc1 input, 4 s b h fewer:
 * 30 s b h = 31,457,280; two norms of the same input (GPT-NeoX) one norm
 * input fewer: 32 s b h = 33,554,432. With t 2 and sequence parallelism
 * the replicated part is split too: (30 - 24) / 2 + 24 / 2 = 15 s b h =
 * 15,728,640.
 */
START_TEST(test_parallel_block_memory)
{
	struct model seq, one, two;
	struct plan p;
	double sbh = 1048576.0;

	test_load_model(&seq, TOY_MODEL_YAML);
	test_load_model(&one, TOY_MODEL_YAML "parallel_block: true\nnorms_per_layer: 1\n");
	test_load_model(&two, TOY_MODEL_YAML "parallel_block: true\n");
	fixture_one_gpu_plan(&p);
	ck_assert_double_eq_tol(memory_layer_activations(&seq, &p, NULL), 34.0 * sbh, 1e-3);
	ck_assert_double_eq_tol(memory_layer_activations(&one, &p, NULL), 30.0 * sbh, 1e-3);
	ck_assert_double_eq_tol(memory_layer_activations(&two, &p, NULL), 32.0 * sbh, 1e-3);
	p.tp = 2;
	p.sequence_parallel = true;
	ck_assert_double_eq_tol(memory_layer_activations(&one, &p, NULL), 15.0 * sbh, 1e-3);
	/*
	 * fp8 (Transformer Engine's delayed scaling: a 1-byte copy of each
	 * linear layer's input in place of its 2-byte input, memory.c's
	 * fp8_saved_bytes): sequentially the QKV and fc1 inputs (2 h), the
	 * projection's (a d_v = h) and fc2's (f = 4 h) save 1 byte an element,
	 * 7 s b h: 27 s b h. In the parallel block the one shared norm output
	 * (2 bytes once) and its two 1-byte copies weigh the same: 5 s b h
	 * saved, 25 s b h.
	 */
	p.tp = 1;
	p.sequence_parallel = false;
	p.precision = PLAN_PRECISION_FP8;
	ck_assert_double_eq_tol(memory_layer_activations(&seq, &p, NULL), 27.0 * sbh, 1e-3);
	ck_assert_double_eq_tol(memory_layer_activations(&one, &p, NULL), 25.0 * sbh, 1e-3);
}
END_TEST

/*
 * A Llama 3.1 405B layer under Megatron-Bridge's perf recipe (TP 4 with
 * sequence parallelism, bf16, fused attention, no dropout), tensor by
 * tensor as Transformer Engine v2.18 and Megatron-Core d98e8a6 save it for
 * the backward (docs/research/framework-data.md, "Llama 3.1 405B perf
 * recipes"), in bytes a token of the sequence on one rank (h 16384, 128 q
 * heads and 8 kv heads of 128, f 53248, t 4):
 *   LayerNormLinear QKV: its input and its local ln_out (the gathered
 *     ln_out_total is freed, layernorm_linear.py l. 412-417): 2 x 2h/t
 *     = 16384
 *   FusedAttnFunc: q 2 x 128 x 128 / 4 = 8192, k and v 2 x 8 x 128 / 4
 *     = 512 each, out 8192 (the projection's saved input, the same
 *     tensor): 17408
 *   LayerNormLinear fc1: 16384
 *   SwiGLUFunction's input, fc1's output, 2 x 2f/t = 53248; fc2's input
 *     2f/t = 26624: 79872
 * total 16384 + 17408 + 16384 + 79872 = 130048 B, x 8192 tokens =
 * 1,065,353,216 B (0.992 GiB). With dropout the two 1-byte masks over the
 * local s/t tokens add 2h/t = 8192 B a token: 138240 x 8192 =
 * 1,132,462,080 B. Not counted (0.1 %): the norms' fp32 rsigma (1 B a
 * token each) and the attention's fp32 softmax statistics (4 x 32 local
 * heads = 128 B a token).
 */
#define L405_YAML                                                                                   \
	"name: l405\nlayers: 126\nhidden: 16384\nheads: 128\nkv_heads: 8\nffn_hidden: 53248\n"  \
	"gated_mlp: true\nvocab: 128256\nseq_len: 8192\nbias: false\nnorm: rmsnorm\n"             \
	"position_embedding: rotary\n"
START_TEST(test_llama405b_layer_saved_bytes)
{
	struct model dry, wet;
	struct plan p;

	test_load_model(&dry, L405_YAML "dropout: false\n");
	test_load_model(&wet, L405_YAML);
	fixture_one_gpu_plan(&p);
	p.tp = 4;
	p.sequence_parallel = true;
	p.seq_len = 8192;
	ck_assert_double_eq_tol(memory_layer_activations(&dry, &p, NULL), 1065353216.0, 1.0);
	ck_assert_double_eq_tol(memory_layer_activations(&wet, &p, NULL), 1132462080.0, 1.0);
}
END_TEST

/*
 * Element-wise work: one shared norm fewer. The toy GPT's LayerNorm,
 * fused, moves 4 bytes an element: 4 x 2^20 = 4,194,304 B at 1 TB/s,
 * 4.194304e-6 s, and one kernel fewer (launch 0 on the toy cluster).
 * The GEMMs are the same: FLOPs unchanged.
 */
START_TEST(test_parallel_block_elementwise)
{
	struct cluster c;
	struct model seq, one;
	struct plan p;
	struct compute_layer ls, lo;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&seq, TOY_MODEL_YAML);
	test_load_model(&one, TOY_MODEL_YAML "parallel_block: true\nnorms_per_layer: 1\n");
	fixture_one_gpu_plan(&p);
	compute_layer_time(&seq, &p, &c, NULL, false, &ls);
	compute_layer_time(&one, &p, &c, NULL, false, &lo);
	ck_assert_double_eq_tol(ls.fwd_mem_s - lo.fwd_mem_s, 4.194304e-6, 1e-15);
	ck_assert_double_eq_tol(ls.ew_kernels - lo.ew_kernels, 1.0, 1e-12);
	ck_assert_double_eq(ls.fwd_gemm_s, lo.fwd_gemm_s);
	ck_assert_double_eq(flops_forward_per_token(&seq, 1024), flops_forward_per_token(&one, 1024));
	cluster_release(&c);
}
END_TEST

/*
 * TP collectives (Shoeybi et al. 2019, Sec. 3: two all-reduces a pass;
 * PaLM Sec. 2: a parallel block sums the attention's and the MLP's
 * outputs before one): the forward and the backward each take one
 * collective of the same b s h buffer in a parallel block, two in a
 * sequential one; with sequence parallelism one AG + RS pair, and the
 * backward gathers each column-parallel input again for its weight
 * gradient (Megatron-Core tensor_parallel/layers.py; tensor_par.c): one
 * more all-gather per pair.
 *
 * By hand, toy cluster (NVLink 100 GB/s at efficiency 1, 1 us a ring
 * step, no fixed collective latency), TP 2 in one node, b s h = 1 x
 * 1024 x 1024 in 2 bytes = 2,097,152 bytes: an all-gather is 1 step
 * (1 us) + 1/2 x 2,097,152 / 100e9 (10.48576 us) = 11.48576 us, the
 * reduce-scatter the same; with SP the sequential layer's backward is
 * 2 x 22.97152 + 2 x 11.48576 = 68.91456 us, its forward 45.94304 us.
 */
START_TEST(test_parallel_block_tp_comm)
{
	struct cluster c;
	struct model seq, par;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct tp_layer_comm ts, tpar;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&seq, TOY_MODEL_YAML);
	test_load_model(&par, TOY_MODEL_YAML "parallel_block: true\nnorms_per_layer: 1\n");
	fixture_one_gpu_plan(&p);
	p.tp = 2;
	topology_plan(&p, &c, &lay);
	compute_layer_time(&seq, &p, &c, NULL, false, &cl);
	for (int sp = 0; sp <= 1; sp++) {
		p.sequence_parallel = sp;
		tp_layer_comm(&seq, &p, &c, NULL, &lay, &cl, &ts);
		tp_layer_comm(&par, &p, &c, NULL, &lay, &cl, &tpar);
		ck_assert_int_eq(ts.per_pass, 2);
		ck_assert_int_eq(tpar.per_pass, 1);
		ck_assert(ts.collective_s > 0.0);
		ck_assert_double_eq(tpar.collective_s, ts.collective_s);
		ck_assert_double_eq_tol(ts.fwd_s, 2.0 * ts.collective_s, 1e-18);
		ck_assert_double_eq_tol(tpar.fwd_s, ts.collective_s, 1e-18);
		ck_assert_int_eq(ts.regathers, 2 * sp);
		ck_assert_int_eq(tpar.regathers, sp);
		ck_assert_double_eq_tol(ts.bwd_s, 2.0 * ts.collective_s + 2.0 * sp * ts.regather_s, 1e-18);
		ck_assert_double_eq_tol(tpar.bwd_s, ts.collective_s + sp * ts.regather_s, 1e-18);
		if (sp) {
			ck_assert_double_eq_tol(ts.regather_s, 11.48576e-6, 1e-12);
			ck_assert_double_eq_tol(ts.fwd_s, 45.94304e-6, 1e-12);
			ck_assert_double_eq_tol(ts.bwd_s, 68.91456e-6, 1e-12);
		} else {
			ck_assert_double_eq(ts.regather_s, 0.0);
		}
	}
	/* An MoE layer's routed experts keep the dispatcher's gathered
	 * tokens: QKV gathers again, and a shared expert's fc1. */
	{
		struct model moe, shared;
		struct tp_layer_comm tm, tsh;

		test_load_model(&moe, TOY_MODEL_YAML "moe:\n  experts: 8\n  top_k: 2\n");
		test_load_model(&shared, TOY_MODEL_YAML "moe:\n  experts: 8\n  top_k: 2\n  shared_experts: 1\n");
		tp_layer_comm(&moe, &p, &c, NULL, &lay, &cl, &tm);
		tp_layer_comm(&shared, &p, &c, NULL, &lay, &cl, &tsh);
		ck_assert_int_eq(tm.regathers, 2);
		ck_assert_int_eq(tm.moe_regathers, 1);
		ck_assert_int_eq(tsh.moe_regathers, 2);
		ck_assert_int_eq(ts.moe_regathers, 1);
		ck_assert_int_eq(tpar.moe_regathers, 1);
	}
	/* Under --tp-overlap the userbuffers path prices the backward's
	 * collectives with their GEMMs instead (tp_overlapped_time). */
	p.sequence_parallel = true;
	p.tp_overlap = true;
	tp_layer_comm(&seq, &p, &c, NULL, &lay, &cl, &ts);
	ck_assert_int_eq(ts.regathers, 0);
	ck_assert_int_eq(ts.moe_regathers, 0);
	/* plan-cli review6: a framework whose autograd keeps the gathered
	 * input (sp_regather false: DTensor's ColwiseParallel) gathers
	 * nothing again: the sequential layer's backward is its two pairs,
	 * 2 x 22.97152 = 45.94304 us, as its forward. */
	{
		struct framework dt;
		struct plan_error err;

		ck_assert_msg(framework_load_string(&dt, "dt.yaml", "name: dt\nsp_regather: false\n", &err), "%s",
			      err.message);
		ck_assert(!dt.sp_regather);
		p.tp_overlap = false;
		tp_layer_comm(&seq, &p, &c, &dt, &lay, &cl, &ts);
		ck_assert_int_eq(ts.regathers, 0);
		ck_assert_int_eq(ts.moe_regathers, 0);
		ck_assert_double_eq(ts.regather_s, 0.0);
		ck_assert_double_eq_tol(ts.bwd_s, 45.94304e-6, 1e-12);
		ck_assert_double_eq_tol(ts.fwd_s, 45.94304e-6, 1e-12);
		/* torchtitan's per-op SAC does not save the all-gather's
		 * output: the backward's recomputation gathers again, two
		 * all-gathers of 11.48576 us, 68.91456 us. */
		ck_assert_msg(framework_load_string(&dt, "dt.yaml", "name: dt\nsp_regather: false\n"
								  "selective_recompute: op\n", &err),
			      "%s", err.message);
		p.recompute = PLAN_RECOMPUTE_SELECTIVE;
		tp_layer_comm(&seq, &p, &c, &dt, &lay, &cl, &ts);
		ck_assert_int_eq(ts.regathers, 2);
		ck_assert_double_eq_tol(ts.bwd_s, 68.91456e-6, 1e-12);
		p.recompute = PLAN_RECOMPUTE_NONE;
		tp_layer_comm(&seq, &p, &c, &dt, &lay, &cl, &ts);
		ck_assert_int_eq(ts.regathers, 0);
		ck_assert_msg(framework_load_string(&dt, "dt.yaml", "name: dt\n", &err), "%s", err.message);
		ck_assert(dt.sp_regather);
		tp_layer_comm(&seq, &p, &c, &dt, &lay, &cl, &ts);
		ck_assert_double_eq_tol(ts.bwd_s, 68.91456e-6, 1e-12);
	}
	cluster_release(&c);
}
END_TEST

/*
 * fp8 sequence-parallel gathers (fp8_recipe.c: Transformer Engine v1.8
 * and v2.11 gather the quantised norm output and output gradient; the
 * reduce-scatters stay 16-bit). The toy cluster of test_parallel_block_tp
 * (TP 2 in a node, 1 us a ring step, 100 GB/s), b s h = 1,048,576
 * elements:
 * - delayed: an fp8 all-gather of 1,048,576 bytes is 1 us + 1/2 x
 *   1,048,576 / 100e9 (5.24288 us) = 6.24288 us; the reduce-scatter of
 *   2,097,152 bytes 11.48576 us; the pair 17.72864 us. Forward 2 pairs,
 *   35.45728 us; backward 2 pairs and 2 re-gathers of the fp8 copy,
 *   35.45728 + 12.48576 = 47.94304 us (16 bits: 45.94304 and 68.91456).
 *   The 16-bit pair (the embedding's and the output layer's) stays
 *   22.97152 us and the output layer's re-gather 11.48576 us.
 * - current: the same gathers, and before each gathered tensor's cast an
 *   all-reduce of its 4-byte amax over TP, per_pass (2) a pass. NCCL's
 *   LL ring on 2 ranks in a node: 2 steps of 1 us x 0.6 / 3.4 =
 *   0.352941176 us, plus 2 x 1/2 x 4 B / (0.5 x 100e9) = 0.00008 us:
 *   0.353021176 us (the LL tree: 0.352941176 + 2 x 4 x 3.8 / 100e9 =
 *   0.353245176 us, slower). Forward 35.45728 + 0.706042353 =
 *   36.163322353 us, backward 47.94304 + 0.706042353 = 48.649082353 us;
 *   the MLP's share 17.72864 + 0.353021176 = 18.081661176 us.
 * - blockwise: 1 + 4/128 bytes an element (fp32 scale a 128-tile),
 *   1,081,344 bytes: 1 + 5.40672 = 6.40672 us; mxfp8 1 + 1/32 (an E8M0
 *   scale a 32-block), the same 1,081,344 bytes.
 * - rowwise (torchao: no fp8 TP): 16 bits, 11.48576 us.
 * Without sequence parallelism the all-reduces stay 16-bit and no amax
 * is reduced: 2 x 22.97152 = 45.94304 us a pass.
 */
START_TEST(test_tp_fp8_gather)
{
	static const struct {
		int recipe;
		double regather_us, amax_us;
	} rows[] = {
		{ PLAN_FP8_DELAYED, 6.24288, 0.0 },
		{ PLAN_FP8_CURRENT, 6.24288, 0.353021176 },
		{ PLAN_FP8_BLOCKWISE, 6.40672, 0.0 },
		{ PLAN_FP8_MXFP8, 6.40672, 0.0 },
		{ PLAN_FP8_ROWWISE, 11.48576, 0.0 },
	};
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct tp_layer_comm t;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML);
	fixture_one_gpu_plan(&p);
	p.tp = 2;
	p.sequence_parallel = true;
	p.precision = PLAN_PRECISION_FP8;
	topology_plan(&p, &c, &lay);
	compute_layer_time(&m, &p, &c, NULL, false, &cl);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double pair = rows[i].regather_us + 11.48576;

		p.fp8_recipe = rows[i].recipe;
		tp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &t);
		ck_assert_double_eq_tol(t.regather_s, rows[i].regather_us * 1e-6, 1e-12);
		ck_assert_double_eq_tol(t.amax_s, rows[i].amax_us * 1e-6, 1e-14);
		ck_assert_double_eq_tol(t.collective_s, 22.97152e-6, 1e-12);
		ck_assert_double_eq_tol(t.regather16_s, 11.48576e-6, 1e-12);
		ck_assert_double_eq_tol(t.fwd_s, (2.0 * pair + 2.0 * rows[i].amax_us) * 1e-6, 1e-12);
		ck_assert_double_eq_tol(t.bwd_s, (2.0 * pair + 2.0 * rows[i].regather_us + 2.0 * rows[i].amax_us) * 1e-6,
					1e-12);
		ck_assert_double_eq_tol(t.mlp_fwd_s, (pair + rows[i].amax_us) * 1e-6, 1e-12);
	}
	p.fp8_recipe = PLAN_FP8_DELAYED;
	tp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &t);
	ck_assert_double_eq_tol(t.fwd_s, 35.45728e-6, 1e-12);
	ck_assert_double_eq_tol(t.bwd_s, 47.94304e-6, 1e-12);
	ck_assert_double_eq(t.gather_bytes, 1048576.0);
	p.fp8_recipe = PLAN_FP8_CURRENT;
	tp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &t);
	ck_assert_double_eq_tol(t.fwd_s, 36.163322353e-6, 1e-14);
	ck_assert_double_eq_tol(t.bwd_s, 48.649082353e-6, 1e-14);
	ck_assert_double_eq_tol(t.mlp_fwd_s, 18.081661176e-6, 1e-14);
	{
		/* torchao (fp8_weight_recast) reduces the amax of every
		 * tensor-wise DTensor cast: the toy GPT's 6 linears (wq, wk,
		 * wv, wo, fc1, fc2), forward 2 gathered inputs + 2
		 * row-parallel inputs + 6 weights = 10 all-reduces, backward 6
		 * output gradients + 6 weights = 12; the MLP's 2 + 2 and 2 + 2.
		 * 0.353021176 us each: forward 35.45728 + 3.530211765 =
		 * 38.987491765 us, backward 47.94304 + 4.236254118 =
		 * 52.179294118 us, the MLP's 17.72864 + 1.412084706 =
		 * 19.140724706 us a pass. With --fp8-gather the weights come
		 * cast: 4 and 6, 36.869364706 and 50.061167059 us. */
		struct framework ao;

		framework_init_default(&ao);
		ao.fp8_weight_recast = true;
		tp_layer_comm(&m, &p, &c, &ao, &lay, &cl, &t);
		ck_assert_double_eq_tol(t.fwd_s, 38.987491765e-6, 1e-14);
		ck_assert_double_eq_tol(t.bwd_s, 52.179294118e-6, 1e-14);
		ck_assert_double_eq_tol(t.mlp_fwd_s, 19.140724706e-6, 1e-14);
		ck_assert_double_eq_tol(t.mlp_bwd_s, 19.140724706e-6, 1e-14);
		p.fp8_gather = true;
		tp_layer_comm(&m, &p, &c, &ao, &lay, &cl, &t);
		ck_assert_double_eq_tol(t.fwd_s, 36.869364706e-6, 1e-14);
		ck_assert_double_eq_tol(t.bwd_s, 50.061167059e-6, 1e-14);
		p.fp8_gather = false;
	}
	p.sequence_parallel = false;
	tp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &t);
	ck_assert_double_eq(t.amax_s, 0.0);
	ck_assert_double_eq(t.gather_bytes, 2097152.0);
	ck_assert_double_eq_tol(t.fwd_s, 45.94304e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

/* Bad keys are refused at the key (the tests/bad corpus checks the
 * file:line:col of each). */
START_TEST(test_bad_keys)
{
	static const char *const bad[] = {
		TOY_WINDOW("256", "LX"),
		TOY_WINDOW("256", "GG"),
		TOY_WINDOW("0", "L"),
		TOY_MODEL_YAML "causal: false\nsliding_window:\n  window: 8\n",
		TOY_MODEL_YAML "sliding_window:\n  window: 8\n  first_global_layers: 2\n",
		TOY_MODEL_YAML "parallel_block: true\nnorms_per_layer: 3\n",
		TOY_MODEL_YAML "sliding_window:\n  pattern: L\n",
	};
	struct model m;
	struct plan_error err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		plan_error_clear(&err);
		ck_assert_msg(!model_load_string(&m, "t.yaml", bad[i], &err), "case %zu loaded", i);
		ck_assert_msg(err.line > 0, "case %zu: no line: %s", i, err.message);
	}
}
END_TEST

/*
 * The bundled models' parameters and windowed layers, counted by hand:
 * - mistral-7b: a layer Q and O 2 x 4096^2 = 33,554,432, K and V
 *   2 x 4096 x 1024 = 8,388,608, MLP 3 x 4096 x 14336 = 176,160,768, two
 *   norms 8,192: 218,112,000, x 32 = 6,979,584,000; untied embeddings
 *   2 x 32000 x 4096 = 262,144,000; final norm 4,096: 7,241,732,096
 *   (Mistral 7B's published count); all 32 layers windowed.
 * - gemma-2-9b: Q and O 2 x 3584 x 4096 = 29,360,128, K and V
 *   2 x 3584 x 2048 = 14,680,064, MLP 3 x 3584 x 14336 = 154,140,672,
 *   four norms 14,336: 198,195,200, x 42 = 8,324,198,400; tied table
 *   256000 x 3584 = 917,504,000; final norm 3,584: 9,241,705,984; "LG"
 *   windows the odd layers of 42, 21.
 * - gpt-j-6b: q, k, v, out 4 x 4096^2 = 67,108,864, MLP 2 x 4096 x 16384 =
 *   134,217,728, one LayerNorm 8,192: 201,334,784, x 28 = 5,637,373,952;
 *   untied 2 x 50400 x 4096 = 412,876,800; ln_f 8,192: 6,050,258,944.
 */
START_TEST(test_bundled)
{
	struct model m;

	test_setup_paths();
	test_load_profile(PROFILE_MODEL, "mistral-7b", &m);
	ck_assert_double_eq_tol(model_params_total(&m), 7241732096.0, 0.5);
	ck_assert_int_eq(model_windowed_layers(&m), 32);
	test_load_profile(PROFILE_MODEL, "gemma-2-9b", &m);
	ck_assert_double_eq_tol(model_params_total(&m), 9241705984.0, 0.5);
	ck_assert_int_eq(model_windowed_layers(&m), 21);
	test_load_profile(PROFILE_MODEL, "gpt-j-6b", &m);
	ck_assert_double_eq_tol(model_params_total(&m), 6050258944.0, 0.5);
	ck_assert(m.parallel_block);
	ck_assert_int_eq(model_norms_run(&m), 1);
}
END_TEST

/*
 * What eager modules keep beyond the fused kernels (memory.c's
 * eager_saved_bytes), on the toy Llama layer (fixtures.h: h 1024, 8
 * heads of 128, 2 KV heads, SwiGLU of 2816, RMSNorm, rotary, dropout),
 * s 1024, b 1, flash attention, no recomputation; s b h = 2^20.
 *   fused: Korthikanti's replicated 10 s b h = 10,485,760 (norm inputs 4,
 *   QKV/fc1 inputs 4, two dropout masks 2); attention q, k, v, the output
 *   2 x 1024 x (1024 + 1024 + 2 x 256) = 5,242,880; SwiGLU 6 x 1024 x
 *   2816 = 17,301,504: 33,030,144 B.
 *   eager, more: two norms' fp32 copies 2 x 4 x 2^20 = 8,388,608; rotary
 *   4 x 1024 x (8 + 2) x 128 = 5,242,880; silu's output 2 x 1024 x 2816 =
 *   5,767,168: 19,398,656 more, 52,428,800 B.
 *   t 2, no SP: the norms' part replicated, the rest halved: 8,388,608 +
 *   (5,242,880 + 5,767,168) / 2 = 13,893,632 more; with SP all halved,
 *   9,699,328. A GPT layer (LayerNorm is one ATen kernel in eager, GELU's
 *   input and output are Korthikanti's own) keeps the same either way.
 */
START_TEST(test_eager_saved_bytes)
{
	struct model m, gpt;
	struct plan p;
	struct framework fused, eager;

	test_load_model(&m, FIXTURE_TOY_LLAMA_YAML);
	test_load_model(&gpt, TOY_MODEL_YAML);
	fixture_one_gpu_plan(&p);
	framework_init_default(&fused);
	framework_init_default(&eager);
	eager.elementwise = FRAMEWORK_EW_EAGER;
	ck_assert_double_eq_tol(memory_layer_activations(&m, &p, &fused), 33030144.0, 1e-3);
	ck_assert_double_eq_tol(memory_layer_activations(&m, &p, &eager), 52428800.0, 1e-3);
	ck_assert_double_eq_tol(memory_layer_activations(&gpt, &p, &eager), memory_layer_activations(&gpt, &p, &fused),
				1e-3);
	p.tp = 2;
	ck_assert_double_eq_tol(memory_layer_activations(&m, &p, &eager) - memory_layer_activations(&m, &p, &fused),
				13893632.0, 1e-3);
	p.sequence_parallel = true;
	ck_assert_double_eq_tol(memory_layer_activations(&m, &p, &eager) - memory_layer_activations(&m, &p, &fused),
				9699328.0, 1e-3);
}
END_TEST

static Suite *
arch_suite(void)
{
	Suite *s = suite_create("arch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_window_pairs);
	tcase_add_test(tc, test_tp_fp8_gather);
	tcase_add_test(tc, test_window_layers);
	tcase_add_test(tc, test_window_fractions);
	tcase_add_test(tc, test_window_model_flops);
	tcase_add_test(tc, test_window_flash_time);
	tcase_add_test(tc, test_window_memory_unchanged);
	tcase_add_test(tc, test_parallel_block_memory);
	tcase_add_test(tc, test_parallel_block_elementwise);
	tcase_add_test(tc, test_llama405b_layer_saved_bytes);
	tcase_add_test(tc, test_eager_saved_bytes);
	tcase_add_test(tc, test_parallel_block_tp_comm);
	tcase_add_test(tc, test_bad_keys);
	tcase_add_test(tc, test_bundled);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(arch_suite)
