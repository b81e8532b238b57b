#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "plan/compute.h"
#include "plan/fp8_recipe.h"
#include "plan/fit_gemm.h"
#include "plan/flops.h"
#include "testutil.h"

START_TEST(test_gemm_compute_bound)
{
	struct cluster c;
	double f = 2.0 * 8192.0 * 8192.0 * 8192.0;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* 8192^3 GEMM: F = 1.0995e12; ideal at 0.75 x 312e12 is 4.6988 ms;
	 * the parametric efficiency makes the time ideal + 5 us = 4.7038 ms. */
	ck_assert_rel(compute_gemm_time(&c, 8192, 8192, 8192, 1), f / (312e12 * 0.75) + 5e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_gemm_memory_bound)
{
	struct cluster c;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* 8192 x 64 times 64 x 8192: F = 8.59e9 (41.7 us at the compute
	 * bound) but 2(8192*64*2 + 8192^2) = 136,314,880 bytes at
	 * 2039e9 x 0.8 take 83.567 us: memory-bound. */
	ck_assert_rel(compute_gemm_time(&c, 8192, 8192, 64, 1), 8.356723884256989e-05, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_optimizer)
{
	struct cluster c;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* Adam's 28 bytes per parameter, 4 more to clip, 4 to zero the
	 * gradient buffer: 36e9 / (2039e9 x 0.8) = 22.070 ms per 1e9. */
	ck_assert_rel(compute_optimizer_time(&c, 1e9, 1e9, 0.0), 0.022069641981363415, 1e-12);
	/* A sharded gradient buffer of 1e8: 32e9 + 4e8 B at 1631.2 GB/s. */
	ck_assert_rel(compute_optimizer_time(&c, 1e9, 1e8, 0.0), 0.019862677783227072, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_layer_recompute)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_layer none, sel, full;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	plan_init(&p);
	p.tp = 8;
	p.pp = p.dp = 1;
	p.seq_len = 2048;
	p.global_batch = 8;
	compute_layer_time(&m, &p, &c, NULL, false, &none);
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	compute_layer_time(&m, &p, &c, NULL, false, &sel);
	p.recompute = PLAN_RECOMPUTE_FULL;
	compute_layer_time(&m, &p, &c, NULL, false, &full);
	ck_assert_double_eq(none.recompute_s, 0.0);
	ck_assert_rel(full.recompute_s, full.fwd_s, 1e-15);
	/* Selective redoes only the attention core: a small share of the
	 * forward (Korthikanti et al.: 2.7 % FLOP overhead for GPT-3). */
	ck_assert(sel.recompute_s > 0.0 && sel.recompute_s < 0.25 * sel.fwd_s);
	ck_assert_rel(none.bwd_s, 2.0 * none.fwd_s, 1e-15);
	/* The layer's forward GEMM FLOPs per GPU: (24 b s h^2 + 4 b s^2 h)/t
	 * = 4.0802e12; at most 0.75 x 312e12, so at least 17.4 ms. */
	ck_assert(none.fwd_gemm_s >= (24.0 * 2048 * 12288.0 * 12288 + 4.0 * 2048 * 2048 * 12288) / 8 /
				    (0.75 * 312e12));
	cluster_release(&c);
}
END_TEST

START_TEST(test_embedding_and_logits)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_ends ce;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML);
	plan_init(&p);
	p.tp = p.pp = p.dp = 1;
	p.global_batch = 1;
	p.seq_len = 1024;
	compute_ends_time(&m, &p, &c, NULL, &ce);
	/*
	 * T = b s = 1024 tokens, h 1024, V 32768. The embedding is a lookup:
	 * read the rows and write the activations, 2 x 2 T h = 4,194,304 B at
	 * 1e12 B/s = 4.194304e-6 s; backward twice that, 8.388608e-6 s, and
	 * the zero fill of the table's gradient (PyTorch's
	 * embedding_dense_backward allocates it with at::zeros: 2 V h =
	 * 67,108,864 B, 6.7108864e-5 s): 7.5497472e-5 s.
	 */
	ck_assert_double_eq_tol(ce.embed_fwd_s, 4.194304e-6, 1e-18);
	ck_assert_double_eq_tol(ce.embed_bwd_s, 7.5497472e-5, 1e-18);
	/*
	 * The logit layer is 2 T h V = 68,719,476,736 FLOPs (SC21 Sec. 5.1,
	 * 2 b s h V), compute-bound at 5e13 FLOP/s: 1.37438953472e-3 s
	 * (its 136,314,880 operand bytes would take 1.36e-4 s). The fused
	 * cross-entropy reads and writes fp32 logits: 12 T V = 402,653,184 B
	 * forward, 8 T V = 268,435,456 B backward beside the two GEMMs (dX, dW):
	 * forward 1.37438953472e-3 + 4.02653184e-4 = 1.77704271872e-3 s,
	 * backward 2.74877906944e-3 + 2.68435456e-4 = 3.01721452544e-3 s.
	 */
	ck_assert_double_eq_tol(ce.head_fwd_s, 1.77704271872e-3, 1e-15);
	ck_assert_double_eq_tol(ce.head_bwd_s, 3.01721452544e-3, 1e-15);
	/*
	 * Vocab-parallel over t 2 (Shoeybi et al. 2019, Sec. 3): each GPU
	 * holds V/2 = 16384 columns, halving the GEMM and the logits:
	 * 6.8719476736e-4 + 1.34217728e-4 = 8.8852135936e-4 s forward,
	 * 1.37438953472e-3 + 1.34217728e-4 = 1.50860726272e-3 s backward;
	 * the embedding's activations are replicated, so its time stays.
	 */
	p.tp = 2;
	compute_ends_time(&m, &p, &c, NULL, &ce);
	ck_assert_double_eq_tol(ce.head_fwd_s, 8.8852135936e-4, 1e-15);
	ck_assert_double_eq_tol(ce.head_bwd_s, 1.50860726272e-3, 1e-15);
	ck_assert_double_eq_tol(ce.embed_fwd_s, 4.194304e-6, 1e-18);
	/*
	 * plan-cli h100: Megatron-Core's loss (frameworks/megatron-lm.yaml,
	 * megatron/core/tensor_parallel/cross_entropy.py and
	 * language_module.py, core_v0.6.0) on logits.float(): forward the
	 * cast (read 2, write 4), the max (read 4), the subtraction (4 + 4),
	 * exp in place (4 + 4), the sum (4) and the division in place
	 * (4 + 4): 38 bytes a logit; backward the in-place scaling by the
	 * output gradient (4 + 4) and the cast back (4 + 2): 14. At t 2, T V/t
	 * = 1024 x 16384 = 16,777,216 logits: forward 6.8719476736e-4 +
	 * 38 x 16,777,216 B = 637,534,208 B at 1e12 B/s = 6.37534208e-4,
	 * 1.32472897536e-3 s in all; backward 1.37438953472e-3 + 14 x
	 * 16,777,216 = 234,881,024 B, 2.34881024e-4: 1.60927055872e-3 s; the
	 * loss's share (head_mem_s) 52 x 16,777,216 B: 8.72415232e-4 s. The
	 * built-in framework keeps the fused loss's 12 + 8 bytes.
	 */
	{
		struct framework fw;

		framework_init_default(&fw);
		compute_ends_time(&m, &p, &c, &fw, &ce);
		ck_assert_double_eq_tol(ce.head_fwd_s, 8.8852135936e-4, 1e-15);
		fw.loss_fwd_bytes = 38.0;
		fw.loss_bwd_bytes = 14.0;
		compute_ends_time(&m, &p, &c, &fw, &ce);
		ck_assert_double_eq_tol(ce.head_fwd_s, 1.32472897536e-3, 1e-15);
		ck_assert_double_eq_tol(ce.head_bwd_s, 1.60927055872e-3, 1e-15);
		ck_assert_double_eq_tol(ce.head_mem_s, 8.72415232e-4, 1e-15);
		/*
		 * plan-cli itercost: no training metrics by default; Composer's
		 * two (llm-foundry, metric_logit_bytes 28: per metric the fp32
		 * cast 2 + 4 and log_softmax 4 + 4) pass over the same
		 * 16,777,216 logits: 28 x 16,777,216 = 469,762,048 B at
		 * 1e12 B/s = 4.69762048e-4 s, apart from the head's times.
		 */
		ck_assert_double_eq_tol(ce.metric_s, 0.0, 1e-18);
		fw.metric_logit_bytes = 28.0;
		compute_ends_time(&m, &p, &c, &fw, &ce);
		ck_assert_double_eq_tol(ce.metric_s, 4.69762048e-4, 1e-15);
		ck_assert_double_eq_tol(ce.head_fwd_s, 1.32472897536e-3, 1e-15);
		compute_ends_scale(&ce, 2.0);
		ck_assert_double_eq_tol(ce.metric_s, 9.39524096e-4, 1e-15);
		/*
		 * plan-cli nemosmall: Megatron-Core's fused loss under
		 * torch.compile (frameworks/nemo-24.07.yaml; core_r0.8
		 * fused_cross_entropy.py), what crosses its compiled
		 * functions: logits.float() (2 + 4), the max subtracted and
		 * exp in place (4 + 4), the division in place (4 + 4): 22
		 * forward; the saved softmax scaled in place, written back,
		 * and returned in bf16 (4 + 4 + 2): 10 backward. Forward
		 * 6.8719476736e-4 + 22 x 16,777,216 = 369,098,752 B,
		 * 3.69098752e-4 s: 1.05629351936e-3 s; backward
		 * 1.37438953472e-3 + 10 x 16,777,216 = 167,772,160 B,
		 * 1.6777216e-4 s: 1.54216169472e-3 s; the loss's share 32 x
		 * 16,777,216 B, 5.36870912e-4 s.
		 */
		fw.metric_logit_bytes = 0.0;
		fw.loss_fwd_bytes = 22.0;
		fw.loss_bwd_bytes = 10.0;
		compute_ends_time(&m, &p, &c, &fw, &ce);
		ck_assert_double_eq_tol(ce.head_fwd_s, 1.05629351936e-3, 1e-15);
		ck_assert_double_eq_tol(ce.head_bwd_s, 1.54216169472e-3, 1e-15);
		ck_assert_double_eq_tol(ce.head_mem_s, 5.36870912e-4, 1e-15);
		/*
		 * plan-cli simumoe: with an fp32 main_grad (Megatron's DDP) the
		 * embedding's backward writes the zero-filled gradient of its
		 * whole V/t x h shard (PyTorch's embedding_dense_backward: 2
		 * bytes an element) and the DDP hook adds it to main_grad (read
		 * 2 + 4, write 4): 12 x 16384 x 1024 = 201,326,592 B at 1e12
		 * B/s = 2.01326592e-4 s beside the rows' 8.388608e-6 s:
		 * 2.09715200e-4 s. Without a main_grad (the default) the zero
		 * fill alone, 2 x 16384 x 1024 = 33,554,432 B, 3.3554432e-5 s
		 * beside the rows: 4.194304e-5 s (unscaled: compute_ends_time
		 * above ran again after the scale).
		 */
		ck_assert_double_eq_tol(ce.embed_bwd_s, 4.194304e-5, 1e-18);
		fw.main_grad = FRAMEWORK_MG_FUSED;
		compute_ends_time(&m, &p, &c, &fw, &ce);
		ck_assert_double_eq_tol(ce.embed_bwd_s, 2.097152e-4, 1e-15);
		ck_assert_double_eq_tol(ce.embed_fwd_s, 4.194304e-6, 1e-18);
		fw.main_grad = FRAMEWORK_MG_UNFUSED;
		compute_ends_time(&m, &p, &c, &fw, &ce);
		ck_assert_double_eq_tol(ce.embed_bwd_s, 2.097152e-4, 1e-15);
		/*
		 * Issue 25, session 14 (frameworks/pytorch-fsdp2.yaml): the eager
		 * loss of torchtitan, cross_entropy(pred.float()), kernel by
		 * kernel over a row too wide for shared memory (PyTorch
		 * SoftMax.cu cunn_SoftMaxForward: three reads and a write):
		 * forward the cast 2 + 4 and log_softmax 12 + 4 = 22; backward
		 * nll_loss_backward's zero fill 4, cunn_SoftMaxBackward 12 + 4
		 * and the cast back 4 + 2 = 26. At t 2 (16,777,216 logits):
		 * forward 6.8719476736e-4 + 22 x 16,777,216 = 369,098,752 B,
		 * 3.69098752e-4 s: 1.05629351936e-3 s; backward
		 * 1.37438953472e-3 + 26 x 16,777,216 = 436,207,616 B,
		 * 4.36207616e-4 s: 1.81059715072e-3 s; the loss's share 48 x
		 * 16,777,216 B, 8.05306368e-4 s.
		 */
		fw.main_grad = FRAMEWORK_MG_NONE;
		fw.loss_fwd_bytes = 22.0;
		fw.loss_bwd_bytes = 26.0;
		compute_ends_time(&m, &p, &c, &fw, &ce);
		ck_assert_double_eq_tol(ce.head_fwd_s, 1.05629351936e-3, 1e-15);
		ck_assert_double_eq_tol(ce.head_bwd_s, 1.81059715072e-3, 1e-15);
		ck_assert_double_eq_tol(ce.head_mem_s, 8.05306368e-4, 1e-15);
	}
	cluster_release(&c);
}
END_TEST

/*
 * Flash attention (FlashAttention-2, Dao 2023, Sec. 4.1 FLOP convention):
 * toy GPT, s 1024, d 128, 8 heads, b 1, t 1. Causal forward FLOPs
 * 4 s^2 d b a / 2 = 4 * 1048576 * 128 * 8 / 2 = 2^31 = 2,147,483,648.
 * With peak 100 TFLOPS, forward efficiency 0.5, backward 0.25 and 10 us
 * per call:
 *   fwd = 2^31 / (1e14 * 0.5) + 1e-5 = 4.294967296e-5 + 1e-5 = 5.294967296e-5 s
 *   bwd = 2.5 * 2^31 / (1e14 * 0.25) + 1e-5 = 2.147483648e-4 + 1e-5 = 2.247483648e-4 s
 * (Q, K, V, O: 8 s d b a = 8,388,608 bytes at 1 TB/s = 8.4 us, below
 * both.) Without the causal mask the forward does 2^32 FLOPs:
 *   fwd = 8.589934592e-5 + 1e-5 = 9.589934592e-5 s.
 * A framework whose kernel runs at attention_speed 0.5 (llm-foundry's
 * Triton kernel is 0.55) takes twice as long, fixed cost included:
 * the layer's attention forward 1.0589934592e-4 s, backward
 * 4.494967296e-4 s.
 */
START_TEST(test_flash_attention)
{
	struct cluster c;
	struct model m, enc;
	struct plan p;
	struct framework fw;
	struct compute_layer full, slow;
	double fwd, bwd;

	test_load_cluster(&c, FIXTURE_FLASH_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML);
	test_load_model(&enc, TOY_MODEL_YAML "causal: false\n");
	fixture_one_gpu_plan(&p);
	compute_flash_attention(&m, &p, &c, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd, 5.294967296e-5, 1e-15);
	ck_assert_double_eq_tol(bwd, 2.247483648e-4, 1e-15);
	compute_flash_attention(&enc, &p, &c, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd, 9.589934592e-5, 1e-15);
	framework_init_default(&fw);
	compute_layer_time(&m, &p, &c, &fw, false, &full);
	ck_assert_double_eq_tol(full.attn_fwd_s, 5.294967296e-5, 1e-15);
	fw.attention_speed = 0.5;
	compute_layer_time(&m, &p, &c, &fw, false, &slow);
	ck_assert_double_eq_tol(slow.attn_fwd_s, 1.0589934592e-4, 1e-15);
	ck_assert_double_eq_tol(slow.attn_bwd_s, 4.494967296e-4, 1e-15);
	/* Nothing else moves. */
	ck_assert_double_eq_tol(slow.bwd_s - full.bwd_s, 2.247483648e-4, 1e-15);
	/*
	 * Selective recompute with a fused kernel: Korthikanti's policy
	 * (selective_recompute attention) redoes nothing, the kernel's backward
	 * recomputes the scores anyway; Megatron-Core's (core_attn: attention.py
	 * checkpoints TE's DotProductAttention whatever its backend) runs the
	 * kernel's forward again, 5.294967296e-5 s, at attention_speed 0.5
	 * 1.0589934592e-4 s. Its hardware FLOPs per iteration: the model's
	 * 2 s a (d_qk + d_v) = 2 x 1024 x 8 x 256 = 4,194,304 a token and layer
	 * (flops.c's convention, no causal discount), x 1,024 tokens x 2 layers
	 * = 8,589,934,592 over the attention policy's.
	 */
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	compute_layer_time(&m, &p, &c, &fw, false, &full);
	ck_assert_double_eq_tol(full.recompute_s, 0.0, 1e-18);
	fw.selective_recompute = FRAMEWORK_SAC_CORE_ATTN;
	compute_layer_time(&m, &p, &c, &fw, false, &slow);
	ck_assert_double_eq_tol(slow.recompute_s, 1.0589934592e-4, 1e-15);
	fw.attention_speed = 1.0;
	compute_layer_time(&m, &p, &c, &fw, false, &slow);
	ck_assert_double_eq_tol(slow.recompute_s, 5.294967296e-5, 1e-15);
	ck_assert_double_eq_tol(flops_hardware_per_iteration(&m, &p, &fw) - flops_hardware_per_iteration(&m, &p, NULL),
				8589934592.0, 1e-3);
	/* Without flash attention both policies redo the unfused core. */
	p.flash_attention = false;
	compute_layer_time(&m, &p, &c, &fw, false, &slow);
	fw.selective_recompute = FRAMEWORK_SAC_ATTENTION;
	compute_layer_time(&m, &p, &c, &fw, false, &full);
	ck_assert_double_eq_tol(slow.recompute_s, full.recompute_s, 1e-18);
	ck_assert(full.recompute_s > 0.0);
	p.flash_attention = true;
	p.recompute = PLAN_RECOMPUTE_NONE;
	fw.attention_speed = 0.5;
	/*
	 * FlashAttention-2 on a GPU whose profile measured another kernel: a
	 * framework with attention_kernel fa2 divides by the GPU's
	 * fa2_attention_speed (0.52 on Hopper: pytorch/pytorch#142132), here
	 * set to 0.5 with attention_speed 1: the forward 1.0589934592e-4 s
	 * again. attention_speed multiplies in: 0.5 x 0.5 = 0.25, four times
	 * the profile's: 2.1179869184e-4 s. The GPU profile's own kernel
	 * (profile) ignores fa2_attention_speed; sdpa is FA2 except on
	 * Blackwell, where torchtitan puts cuDNN first (torchtitan#1196).
	 */
	c.gpu.fa2_attention_speed = 0.5;
	fw.attention_speed = 1.0;
	fw.attention_kernel = FRAMEWORK_ATTN_FA2;
	compute_layer_time(&m, &p, &c, &fw, false, &slow);
	ck_assert_double_eq_tol(slow.attn_fwd_s, 1.0589934592e-4, 1e-15);
	fw.attention_speed = 0.5;
	compute_layer_time(&m, &p, &c, &fw, false, &slow);
	ck_assert_double_eq_tol(slow.attn_fwd_s, 2.1179869184e-4, 1e-15);
	fw.attention_speed = 1.0;
	fw.attention_kernel = FRAMEWORK_ATTN_PROFILE;
	compute_layer_time(&m, &p, &c, &fw, false, &slow);
	ck_assert_double_eq_tol(slow.attn_fwd_s, 5.294967296e-5, 1e-15);
	fw.attention_kernel = FRAMEWORK_ATTN_SDPA;
	c.gpu.generation = GPU_GEN_HOPPER;
	ck_assert_double_eq(compute_attention_kernel_speed(&c, NULL, &fw), 0.5);
	c.gpu.generation = GPU_GEN_BLACKWELL;
	ck_assert_double_eq(compute_attention_kernel_speed(&c, NULL, &fw), 1.0);
	ck_assert_double_eq(compute_attention_kernel_speed(&c, NULL, NULL), 1.0);
	/*
	 * Kernels named by the plan (--attention-kernel) win over the
	 * framework's: on Hopper FA3 runs at the profile's own speed, cuDNN's
	 * at 0.91 of it (the FA3 paper's causal head-dim-128 figures at 4k-8k:
	 * forward 0.89 of FA3, backward 0.92, 0.27 and 0.73 of the time:
	 * 1 / (0.27 / 0.89 + 0.73 / 0.92) = 0.9117, taken as 0.91), FA2 at
	 * fa2_attention_speed (0.5 here); on Blackwell cuDNN's is the
	 * profile's (1); on Ampere cuDNN's is taken as FA2 (0.5). FA3 on
	 * anything but Hopper is refused.
	 */
	{
		struct plan q;
		struct plan_error err;

		plan_init(&q);
		q.flash_attention = true;
		c.gpu.generation = GPU_GEN_HOPPER;
		q.attention_kernel = PLAN_ATTN_FA3;
		ck_assert_double_eq(compute_attention_kernel_speed(&c, &q, &fw), 1.0);
		ck_assert(compute_attention_kernel_check(&c, &q, &fw, &err));
		q.attention_kernel = PLAN_ATTN_CUDNN;
		ck_assert_double_eq_tol(1.0 / (0.27 / 0.89 + 0.73 / 0.92), 0.91, 2e-3);
		ck_assert_double_eq(compute_attention_kernel_speed(&c, &q, &fw), 0.91);
		q.attention_kernel = PLAN_ATTN_FA2;
		ck_assert_double_eq(compute_attention_kernel_speed(&c, &q, NULL), 0.5);
		q.attention_kernel = PLAN_ATTN_FRAMEWORK; /* fw: sdpa, FA2 on Hopper */
		ck_assert_int_eq(compute_attention_kernel(&q, &fw), PLAN_ATTN_SDPA);
		ck_assert_double_eq(compute_attention_kernel_speed(&c, &q, &fw), 0.5);
		c.gpu.generation = GPU_GEN_BLACKWELL;
		q.attention_kernel = PLAN_ATTN_CUDNN;
		ck_assert_double_eq(compute_attention_kernel_speed(&c, &q, &fw), 1.0);
		q.attention_kernel = PLAN_ATTN_FA3;
		ck_assert(!compute_attention_kernel_check(&c, &q, &fw, &err));
		ck_assert_ptr_nonnull(strstr(err.message, "Hopper only"));
		ck_assert_ptr_nonnull(strstr(err.message, "(blackwell) is not a Hopper GPU (valid here: framework"));
		c.gpu.generation = GPU_GEN_AMPERE;
		q.attention_kernel = PLAN_ATTN_CUDNN;
		ck_assert_double_eq(compute_attention_kernel_speed(&c, &q, &fw), 0.5);
		/* The framework's FA3 off Hopper names the framework and asks
		 * for another kernel; the plan's own choice wins over it. */
		fw.attention_kernel = FRAMEWORK_ATTN_FA3;
		snprintf(fw.name, sizeof(fw.name), "fa3fw");
		q.attention_kernel = PLAN_ATTN_FRAMEWORK;
		ck_assert(!compute_attention_kernel_check(&c, &q, &fw, &err));
		ck_assert_ptr_nonnull(strstr(err.message, "framework 'fa3fw' runs attention kernel fa3"));
		q.attention_kernel = PLAN_ATTN_FA2;
		ck_assert(compute_attention_kernel_check(&c, &q, &fw, &err));
		/* A named kernel with flash attention off: the user's
		 * --no-flash-attention where the GPU runs fused attention, the
		 * profile's flash_attention false where it does not. */
		q.flash_attention = false;
		c.gpu.flash_attention = 1;
		ck_assert(!compute_attention_kernel_check(&c, &q, &fw, &err));
		ck_assert_ptr_nonnull(strstr(err.message, "--no-flash-attention turns fused attention off"));
		c.gpu.flash_attention = 0;
		ck_assert(!compute_attention_kernel_check(&c, &q, &fw, &err));
		ck_assert_ptr_nonnull(strstr(err.message, "says it runs none (flash_attention false)"));
		q.attention_kernel = PLAN_ATTN_FRAMEWORK;
		ck_assert(compute_attention_kernel_check(&c, &q, &fw, &err));
		fw.attention_kernel = FRAMEWORK_ATTN_SDPA;
	}
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli bwcheck: the GB200's and GB300's attention at the shape NVIDIA's
 * cudnn-frontend benchmark measured them (cuDNN 9.17.0, commit b372d39):
 * batch 1, 128 heads of 128, seq 4096, causal, one GPU. Forward FLOPs
 * 4 s^2 d a / 2 = 4 x 4096^2 x 128 x 128 / 2 = 549,755,813,888, backward
 * 2.5 times that, 1,374,389,534,720; peak 2500 TFLOPS, 20 us a call; the
 * reference shape, so no head-dim or diagonal factor:
 *   GB200 (0.58 / 0.43): fwd 5.49755813888e11 / 1.45e15 + 2e-5 =
 *   3.9914194061e-4 s (measured 0.397 ms); bwd 1.37438953472e12 /
 *   1.075e15 + 2e-5 = 1.2985018928e-3 s (measured 1.304 ms).
 *   GB300 (0.72 / 0.45): fwd 5.49755813888e11 / 1.8e15 + 2e-5 =
 *   3.2541989660e-4 s (0.327 ms); bwd 1.37438953472e12 / 1.125e15 + 2e-5
 *   = 1.2416795864e-3 s (1.239 ms).
 * (Q, K, V, O: 2 x 512 x 4096 x 128 = 536,870,912 B at 0.67 x 8 TB/s,
 * 0.1 ms, below both.) FlashAttention-2 on the GB200 at 0.29: the pair
 * (3.9914194061e-4 + 1.2985018928e-3) / 0.29 = 5.8539e-3 s, measured
 * 1.422 + 4.414 = 5.836 ms.
 */
START_TEST(test_blackwell_measured_attention)
{
	struct cluster c;
	struct model m;
	struct plan p;
	double fwd, bwd;

	setenv("PLAN_CLI_PATH", getenv("PLAN_TEST_SOURCE_ROOT") ? getenv("PLAN_TEST_SOURCE_ROOT") : ".", 1);
	profile_path_init(NULL);
	test_load_model(&m, "name: l\nlayers: 1\nhidden: 16384\nheads: 128\nkv_heads: 8\n"
			"vocab: 32768\nseq_len: 4096\n");
	fixture_one_gpu_plan(&p);
	p.seq_len = 4096;
	test_load_profile(PROFILE_CLUSTER, "gb200-nvl72", &c);
	compute_flash_attention(&m, &p, &c, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd, 3.9914194061e-4, 1e-12);
	ck_assert_double_eq_tol(bwd, 1.2985018928e-3, 1e-12);
	p.attention_kernel = PLAN_ATTN_FA2;
	ck_assert_double_eq_tol((fwd + bwd) / compute_attention_kernel_speed(&c, &p, NULL), 5.8539e-3, 1e-7);
	p.attention_kernel = PLAN_ATTN_FRAMEWORK;
	cluster_release(&c);
	test_load_cluster(&c, "name: t\nnodes: 1\ngpus_per_node: 8\ngpu: gb300\n"
			  "intra_node:\n  bandwidth: 900 GB/s\n"
			  "inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 400 Gbit/s\n");
	compute_flash_attention(&m, &p, &c, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd, 3.2541989660e-4, 1e-12);
	ck_assert_double_eq_tol(bwd, 1.2416795864e-3, 1e-12);
	cluster_release(&c);
}
END_TEST

/* One node of 100 TFLOP/s GPUs, GEMMs at efficiency 1 with no per-GEMM
 * cost, 1 TB/s HBM at efficiency 1, 1 us a kernel launch; @extra adds
 * GPU keys. */
#define EW_CLUSTER_YAML(extra) \
	"name: t\nnodes: 1\ngpus_per_node: 8\n" \
	"gpu:\n  name: t\n  peak_flops: 100 TFLOPS\n  memory: 80 GiB\n" \
	"  memory_bandwidth: 1000 GB/s\n  memory_efficiency: 1.0\n  launch_overhead: 1 us\n" \
	"  gemm_efficiency_max: 1.0\n  gemm_overhead: 0 s\n" extra \
	"intra_node:\n  bandwidth: 100 GB/s\n" \
	"inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n"

/* @model_yaml on @cluster_yaml, one GPU and one sequence of 1,024 tokens
 * (fixture_one_gpu_plan), the default framework. */
static void
ew_setup(struct cluster *c, struct model *m, struct plan *p, struct framework *fw, const char *cluster_yaml,
	 const char *model_yaml)
{
	test_load_cluster(c, cluster_yaml);
	test_load_model(m, model_yaml);
	fixture_one_gpu_plan(p);
	framework_init_default(fw);
}

/*
 * Element-wise traffic, fused against eager (compute.c's ew_ops table): a
 * toy Llama layer, h 1024, 8 heads of 128 with 2 KV heads (kvd 256), SwiGLU
 * of 2816, RMSNorm, rotary; s 1024, b 1, t 1, flash attention (no score
 * traffic); 1 TB/s at efficiency 1 and 1 us a kernel.
 *   fused: norms 2 x 4 x 2^20 = 8,388,608; residual adds 2 x 7 x 2^20 =
 *   14,680,064; SwiGLU 6 x 1024 x 2816 = 17,301,504; rotary 4 x 1024 x
 *   (1024 + 256) = 5,242,880; 45,613,056 B in 6 kernels:
 *   4.5613056e-5 + 6e-6 = 5.1613056e-5 s.
 *   eager: norms 2 x 36 x 2^20 = 75,497,472; adds as fused, 2 x 7 x 2^20 =
 *   14,680,064; SwiGLU 10 x 1024 x 2816 = 28,835,840; rotary 20 x 1024 x
 *   1280 = 26,214,400; the attention output made contiguous 4 x 2^20 =
 *   4,194,304; repeat_kv 2 x (2 x 256 + 2 x 1024) x 1024 = 5,242,880;
 *   154,664,960 B in 2 x 7 + 2 + 2 + 2 x 3 + 1 + 2 = 27 kernels:
 *   1.5466496e-4 + 27e-6 = 1.8166496e-4 s.
 */
START_TEST(test_elementwise_eager)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct compute_layer fused, eager;

	ew_setup(&c, &m, &p, &fw, EW_CLUSTER_YAML(""), FIXTURE_TOY_LLAMA_YAML);
	compute_layer_time(&m, &p, &c, &fw, false, &fused);
	ck_assert_double_eq_tol(fused.fwd_mem_s, 5.1613056e-5, 1e-15);
	fw.elementwise = FRAMEWORK_EW_EAGER;
	compute_layer_time(&m, &p, &c, &fw, false, &eager);
	ck_assert_double_eq_tol(eager.fwd_mem_s, 1.8166496e-4, 1e-15);
	/* The GEMMs do not move. */
	ck_assert_double_eq_tol(eager.fwd_gemm_s, fused.fwd_gemm_s, 1e-18);
	/*
	 * torchtitan's per-op selective recompute (selective_recompute op):
	 * every second matmul of q, k, v, o, w1, w3, w2, so k (1024 x 256 x
	 * 1024: 2 x 2^28 FLOPs at 100 TFLOPS, 5.36870912e-6 s, above its 3.1e6
	 * bytes), o (2 x 2^30: 2.147483648e-5 s) and w3 (1024 x 2816 x 1024:
	 * 5.905580032e-5 s), 8.589934592e-5 s, and the element-wise forward:
	 * eager 8.589934592e-5 + 1.8166496e-4 = 2.6756430592e-4 s. With a
	 * flash kernel the attention-core policy recomputes nothing.
	 */
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	compute_layer_time(&m, &p, &c, &fw, false, &eager);
	ck_assert_double_eq_tol(eager.recompute_s, 0.0, 1e-18);
	fw.selective_recompute = FRAMEWORK_SAC_OP;
	compute_layer_time(&m, &p, &c, &fw, false, &eager);
	ck_assert_double_eq_tol(eager.recompute_s, 2.6756430592e-4, 1e-15);
	fw.elementwise = FRAMEWORK_EW_FUSED;
	compute_layer_time(&m, &p, &c, &fw, false, &fused);
	ck_assert_double_eq_tol(fused.recompute_s, 8.589934592e-5 + 5.1613056e-5, 1e-15);
	/* Its hardware FLOPs: k, o and w3 again, 2 x (1024 x 256 + 1024^2 +
	 * 1024 x 2816) = 8,388,608 a token and layer; 1,024 tokens, 2
	 * layers: 1.7179869184e10 more than the attention policy (none with
	 * flash attention). */
	ck_assert_double_eq_tol(flops_hardware_per_iteration(&m, &p, &fw) - flops_hardware_per_iteration(&m, &p, NULL),
				1.7179869184e10, 1e-3);
	/*
	 * Without flash attention nothing saves the scores (aten.bmm is not on
	 * torchtitan's list): the two score GEMMs, 2 x 1024^2 x 128 x 8 FLOPs
	 * each, 2.147483648e-5 s (above their 2.1e7 bytes), 4.294967296e-5 in
	 * all, come on top, and the element-wise forward now moves the 9 b a
	 * s^2 = 75,497,472 bytes of the softmax and dropout in 2 more kernels:
	 * eager (154,664,960 + 75,497,472) / 1e12 + 29 us = 2.59162432e-4.
	 * Recompute 8.589934592e-5 + 4.294967296e-5 + 2.59162432e-4 =
	 * 3.8801145088e-4 s.
	 */
	p.flash_attention = false;
	fw.elementwise = FRAMEWORK_EW_EAGER;
	compute_layer_time(&m, &p, &c, &fw, false, &eager);
	ck_assert_double_eq_tol(eager.recompute_s, 3.8801145088e-4, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * elementwise compiled (torch.compile's Inductor) on the layer of
 * test_elementwise_eager (1,024 tokens of hidden 1024, one GPU, 1000 GB/s
 * at efficiency 1, 1 us a launch, rotary with kv_heads 2 of 8).
 * Forward: the fused bytes, rotary's q and k one kernel each, so one
 * launch more than fused: 5.1613056e-5 + 1e-6 = 5.2613056e-5 s.
 * Backward: twice the forward (2 x 1e-6 more than fused) and the two
 * norms' separate dweight reductions, 2 bytes an element each over 2^20
 * elements (4,194,304 bytes: 4.194304e-6 s) and one kernel each (2e-6):
 * norm_dweight_s 6.194304e-6 s; bwd_s 2e-6 + 6.194304e-6 = 8.194304e-6 s
 * above fused. With sequence parallelism at tp 2 a norm runs over h/2 of
 * each token: 2.097152e-6 + 2e-6 = 4.097152e-6 s.
 */
START_TEST(test_elementwise_compiled)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct compute_layer fused, compiled;

	ew_setup(&c, &m, &p, &fw, EW_CLUSTER_YAML(""), FIXTURE_TOY_LLAMA_YAML);
	compute_layer_time(&m, &p, &c, &fw, false, &fused);
	ck_assert_double_eq_tol(fused.norm_dweight_s, 0.0, 1e-18);
	fw.elementwise = FRAMEWORK_EW_COMPILED;
	compute_layer_time(&m, &p, &c, &fw, false, &compiled);
	ck_assert_double_eq_tol(compiled.fwd_mem_s, 5.2613056e-5, 1e-15);
	ck_assert_double_eq_tol(compiled.norm_dweight_s, 6.194304e-6, 1e-15);
	ck_assert_double_eq_tol(compiled.bwd_s - fused.bwd_s, 8.194304e-6, 1e-15);
	ck_assert_double_eq_tol(compiled.fwd_gemm_s, fused.fwd_gemm_s, 1e-18);
	p.tp = 2;
	p.sequence_parallel = true;
	compute_layer_time(&m, &p, &c, &fw, false, &compiled);
	ck_assert_double_eq_tol(compiled.norm_dweight_s, 4.097152e-6, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * torchtitan's op SAC on an MoE layer (compute.c op_sac_recompute_time,
 * flops.c op_sac_flops_per_token): the routed experts' grouped GEMMs and
 * the shared experts' w1 and w2 run again. Every layer MoE: h 1024, 8
 * heads, 2 KV heads (kvd 256), 8 experts of 512, top-2, one shared
 * expert, SwiGLU; s 1024, b 1, t 1, ep 1, one grouped kernel; 100 TFLOPS
 * at efficiency 1, every GEMM compute-bound. k 2 x 1024 x 256 x 1024 =
 * 5.36870912e8 FLOPs, o 2 x 2^30 (sm_count 0: no partial waves); the experts 256 rows each (2 x 1024 /
 * 8), fc1 2 x 256 x 1024 x 1024 x 8 = 4.294967296e9 (its 25.2 MB take
 * 2.5e-5 s at 1 TB/s, less), fc2 2 x 256 x 1024 x 512 x 8 =
 * 2.147483648e9; shared w1 and w2 2 x 1024 x 512 x 1024 = 1.073741824e9
 * each: 1.1274289152e10 FLOPs, 1.1274289152e-4 s, and the forward's
 * element-wise kernels (fwd_mem_s) again. Hardware FLOPs beyond the
 * attention policy's (none with flash attention), a token and layer:
 * 2 x (262,144 + 1,048,576 + 2 x 3 x 1024 x 512 + 2 x 1024 x 512) =
 * 11,010,048; 1,024 tokens, 2 layers: 2.2548578304e10.
 */
START_TEST(test_op_sac_moe)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct compute_layer l;

	ew_setup(&c, &m, &p, &fw, EW_CLUSTER_YAML("  sm_count: 0\n"),
		 FIXTURE_TOY_LLAMA_YAML "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512, shared_experts: 1}\n");
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	fw.selective_recompute = FRAMEWORK_SAC_OP;
	fw.moe_grouped_gemm = FRAMEWORK_MOE_GEMM_SINGLE;
	compute_layer_time(&m, &p, &c, &fw, true, &l);
	ck_assert_double_eq_tol(l.recompute_s, 1.1274289152e-4 + l.fwd_mem_s, 1e-15);
	ck_assert_double_eq_tol(flops_hardware_per_iteration(&m, &p, &fw) - flops_hardware_per_iteration(&m, &p, NULL),
				2.2548578304e10, 1e-3);
	cluster_release(&c);
}
END_TEST

/* The bundled GPUs' FlashAttention-2 speeds: the generation defaults,
 * stated in the Hopper and Blackwell profiles with their sources. */
START_TEST(test_fa2_speed_defaults)
{
	struct cluster c;

	setenv("PLAN_CLI_PATH", getenv("PLAN_TEST_SOURCE_ROOT") ? getenv("PLAN_TEST_SOURCE_ROOT") : ".", 1);
	profile_path_init(NULL);
	test_load_profile(PROFILE_CLUSTER, "selene", &c);
	ck_assert_double_eq(c.gpu.fa2_attention_speed, 1.0);
	cluster_release(&c);
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	ck_assert_double_eq(c.gpu.fa2_attention_speed, 0.52);
	cluster_release(&c);
	test_load_profile(PROFILE_CLUSTER, "dgx-b200", &c);
	ck_assert_double_eq(c.gpu.fa2_attention_speed, 0.35);
	cluster_release(&c);
	/* GB200 and GB300: their own, against cuDNN 9.17 (gpus/gb200.yaml). */
	test_load_profile(PROFILE_CLUSTER, "gb200-nvl72", &c);
	ck_assert_double_eq(c.gpu.fa2_attention_speed, 0.29);
	cluster_release(&c);
	test_load_cluster(&c, "name: t\nnodes: 1\ngpus_per_node: 8\ngpu: gb300\n"
			  "intra_node:\n  bandwidth: 900 GB/s\n"
			  "inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 400 Gbit/s\n");
	ck_assert_double_eq(c.gpu.fa2_attention_speed, 0.27);
	cluster_release(&c);
	/* A spec-sheet Blackwell gets the B200's value. */
	test_load_cluster(&c, "name: t\nnodes: 1\ngpus_per_node: 8\n"
			  "gpu:\n  name: b\n  generation: blackwell\n  peak_flops: 2250 TFLOPS\n  memory: 180 GB\n"
			  "  memory_bandwidth: 8 TB/s\n"
			  "intra_node:\n  bandwidth: 900 GB/s\n"
			  "inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 400 Gbit/s\n");
	ck_assert_double_eq(c.gpu.fa2_attention_speed, 0.35);
	cluster_release(&c);
	/* A spec-sheet Hopper gets the generation's value. */
	test_load_cluster(&c, "name: t\nnodes: 1\ngpus_per_node: 8\n"
			  "gpu:\n  name: h\n  generation: hopper\n  peak_flops: 989 TFLOPS\n  memory: 80 GiB\n"
			  "  memory_bandwidth: 3.35 TB/s\n"
			  "intra_node:\n  bandwidth: 450 GB/s\n"
			  "inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n");
	ck_assert_double_eq(c.gpu.fa2_attention_speed, 0.52);
	cluster_release(&c);
}
END_TEST

/*
 * Each element-wise kernel of a layer's forward costs one launch: the
 * toy GPT without flash attention runs 7 (two norms, two
 * bias-dropout-adds, the GeLU, the softmax, the attention dropout), so
 * a 2 us launch adds 14 us to the memory-bound part of the forward and,
 * as the backward is twice the forward here, 28 us to the backward.
 */
START_TEST(test_launch_overhead)
{
	struct cluster c0, c2;
	struct model m;
	struct plan p;
	struct compute_layer a, b;

	test_load_cluster(&c0, TOY_CLUSTER_YAML);
	test_load_cluster(&c2, TOY_CLUSTER_YAML_LAUNCH("2 us"));
	test_load_model(&m, TOY_MODEL_YAML);
	plan_init(&p);
	p.tp = p.pp = p.dp = 1;
	p.micro_batch = 1;
	p.global_batch = 1;
	p.seq_len = 1024;
	compute_layer_time(&m, &p, &c0, NULL, false, &a);
	compute_layer_time(&m, &p, &c2, NULL, false, &b);
	ck_assert_double_eq_tol(b.fwd_mem_s - a.fwd_mem_s, 14e-6, 1e-15);
	ck_assert_double_eq_tol(b.bwd_s - a.bwd_s, 28e-6, 1e-15);
	cluster_release(&c0);
	cluster_release(&c2);
}
END_TEST

/* A one-node cluster of a GPU of 100 TFLOPS bf16 and 200 fp8, fp8_gemm_ratio
 * 0.8, 1 TB/s at full efficiency, no GEMM overhead; @curve its GEMM
 * efficiency (a plateau or a curve). */
#define FP8_CLUSTER_YAML(curve) \
	"name: t\nnodes: 1\ngpus_per_node: 8\n" \
	"gpu:\n  name: t\n  peak_flops: 100 TFLOPS\n  peak_flops_fp8: 200 TFLOPS\n" \
	"  fp8_gemm_ratio: 0.8\n  memory: 80 GiB\n  memory_bandwidth: 1000 GB/s\n" \
	"  memory_efficiency: 1.0\n  gemm_overhead: 0 s\n" curve \
	"intra_node:\n  bandwidth: 100 GB/s\n" \
	"inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n"

/*
 * An fp8 GEMM (Micikevicius et al. 2022; Transformer Engine): a GPU of
 * 100 TFLOPS bf16 and 200 TFLOPS fp8, parametric GEMM efficiency 0.5
 * without overhead, fp8_gemm_ratio 0.8. 4096^3: F = 2 x 4096^3 =
 * 1.37438953472e11 FLOPs at 200e12 x 0.5 x 0.8 = 8e13 FLOP/s:
 * 1.7179869184e-3 s (the 1-byte operands and 2-byte result, 67 MB at
 * 1 TB/s, take less). Delayed scaling on a GPU that needs the
 * transposed copy (fp8_recipe.c; no generation given, as Hopper): the
 * input cast read 2 bytes and write 1 + 1, 4 x 4096^2 = 67,108,864 bytes
 * in one kernel, and the output gradient the same in the backward. In
 * bf16 the same GEMM takes F / 5e13 = 2.74877906944e-3 s.
 */
START_TEST(test_fp8_gemm)
{
	struct cluster c;
	struct plan p;
	struct compute_casts casts = { .bytes = 0.0, .recipe = PLAN_FP8_DELAYED };

	test_load_cluster(&c, FP8_CLUSTER_YAML("  gemm_efficiency_max: 0.5\n"));
	plan_init(&p);
	p.precision = PLAN_PRECISION_FP8;
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 1.7179869184e-3, 1e-15);
	ck_assert_double_eq_tol(casts.bytes, 67108864.0, 1e-6);
	ck_assert_double_eq_tol(casts.bwd_bytes, 67108864.0, 1e-6);
	ck_assert_int_eq(casts.kernels, 1);
	ck_assert_int_eq(casts.bwd_kernels, 1);
	p.precision = PLAN_PRECISION_BF16;
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 2.74877906944e-3, 1e-15);
	ck_assert_int_eq(casts.kernels, 1); /* bf16 casts nothing */
	/* The step of 1e9 fp8 parameters casts them again, 4 bytes each
	 * (fp8_recipe_weight_bytes: delayed, transposed copy): 4e9 bytes at
	 * 1 TB/s, 4e-3 s. */
	ck_assert_double_eq(fp8_recipe_weight_bytes(&p, NULL, &c.gpu), 4.0);
	ck_assert_double_eq_tol(compute_optimizer_time(&c, 1e9, 1e9, 4e9) - compute_optimizer_time(&c, 1e9, 1e9, 0.0),
				4e-3, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * A GEMM curve that falls at its largest sizes (the B200's, lone kernels
 * in the power limit): 0.6 at F/2 = 6.8719476736e10 FLOPs, 0.5 at F =
 * 1.37438953472e11 (4096^3). The equal-duration point would give the fp8
 * GEMM 0.6 x 0.8 = 0.48 of 200 TFLOPS, 1.4316557653e-3 s, more than twice
 * as fast as the 16-bit GEMM's F / (100e12 x 0.5) = 2.74877906944e-3 s
 * once the ratio is taken out; it gets the same-FLOPs point instead,
 * 0.5 x 0.8 = 0.4: F / 8e13 = 1.7179869184e-3 s.
 */
START_TEST(test_fp8_falling_curve)
{
	struct cluster c;
	struct plan p;
	struct compute_casts casts = { .bytes = 0.0, .recipe = PLAN_FP8_DELAYED };

	test_load_cluster(&c, FP8_CLUSTER_YAML("  gemm_efficiency: [[6.8719476736e10, 0.6], [1.37438953472e11, 0.5]]\n"));
	plan_init(&p);
	p.precision = PLAN_PRECISION_BF16;
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 2.74877906944e-3, 1e-15);
	p.precision = PLAN_PRECISION_FP8;
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 1.7179869184e-3, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * The fp8 recipes (fp8_recipe.c) on the 4096^3 GEMM of test_fp8_gemm,
 * 4096^2 = 16,777,216 elements in each of X and dY:
 * - rowwise on Hopper: the GEMM at 0.9 of the per-tensor one (pytorch#
 *   147971): F / (200e12 x 0.5 x 0.8 x 0.9) = 1.9088743537778e-3 s with
 *   the split accumulator, the forward with fast accumulation 1.1 times
 *   as fast (Hopper's default): 1.7353403216162e-3 s; the
 *   forward casts X along rows, 3 bytes an element in one kernel
 *   (50,331,648); the backward X across rows (amax pass 2 + cast 3 = 5)
 *   and dY both ways (3 + 5 = 8), and rescales dX and dW after
 *   their cuBLAS tensor-wise GEMMs (torchao float8_ops.py
 *   addmm_float8_unwrapped: read and write 2 bytes, 4 x 4096 x (4096 +
 *   4096) = 8 x 16,777,216): 21 x 16,777,216 = 352,321,536 bytes in
 *   2 + 3 + 2 = 7 kernels; the weights 8 bytes each. Those dgrad and
 *   wgrad GEMMs run at the per-tensor split speed, 1.7179869184e-3 s
 *   each, so the backward is 2 x (1.7179869184e-3 - 1.7353403216162e-3)
 *   = -3.470680643232e-5 s off twice the forward.
 * - current with the weights recast at each use (torchao: framework
 *   fp8_weight_recast): besides X's 6 bytes, the weight's amax and cast
 *   (5 bytes, 2 kernels; 4096^2 weight elements) in the forward and
 *   again for the dgrad GEMM: 11 x 16,777,216 bytes in 4 kernels each
 *   way; nothing cast after the optimizer step (0 bytes a weight), 6
 *   with --fp8-gather, whose casts stay once an iteration.
 * - current on Hopper: amax pass then cast with transpose, 2 + 4 = 6
 *   bytes (100,663,296) in 2 kernels each way.
 * - delayed on Blackwell (no transposed copy): 3 bytes (50,331,648).
 * - blockwise and mxfp8: two copies with their scales whatever the GPU,
 *   2 + 1 + 1 + 8/128 = 4.0625 and 2 + 1 + 1 + 2/32 = 4.0625 bytes:
 *   68,157,440; at the per-tensor GEMM's speed, 1.7179869184e-3 s.
 * mxfp8 is refused on Hopper, the message naming the generation,
 * blockwise on Ampere (no fp8 anyway).
 */
START_TEST(test_fp8_recipes)
{
	struct cluster c;
	struct plan p;
	struct plan_error err;
	struct framework fw;
	struct compute_casts casts = { .bytes = 0.0, .recipe = PLAN_FP8_ROWWISE };
	const double x = 16777216.0;

	test_load_cluster(&c, FP8_CLUSTER_YAML("  generation: hopper\n  gemm_efficiency_max: 0.5\n"));
	plan_init(&p);
	p.precision = PLAN_PRECISION_FP8;
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 1.7353403216162e-3,
				1e-15);
	ck_assert_double_eq_tol(casts.bytes, 3.0 * x, 1e-6);
	ck_assert_double_eq_tol(casts.bwd_bytes, 21.0 * x, 1e-6);
	ck_assert_int_eq(casts.kernels, 1);
	ck_assert_int_eq(casts.bwd_kernels, 7);
	ck_assert_double_eq_tol(casts.bwd_gemm_s, -3.470680643232e-5, 1e-15);
	p.fp8_recipe = PLAN_FP8_ROWWISE;
	ck_assert_double_eq(fp8_recipe_weight_bytes(&p, NULL, &c.gpu), 8.0);
	casts = (struct compute_casts){ .bytes = 0.0, .recipe = PLAN_FP8_CURRENT };
	compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts);
	ck_assert_double_eq_tol(casts.bytes, 6.0 * x, 1e-6);
	ck_assert_double_eq_tol(casts.bwd_bytes, 6.0 * x, 1e-6);
	ck_assert_int_eq(casts.kernels, 2);
	ck_assert_int_eq(casts.bwd_kernels, 2);
	casts = (struct compute_casts){ .bytes = 0.0, .recipe = PLAN_FP8_CURRENT, .recast = true };
	compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts);
	ck_assert_double_eq_tol(casts.bytes, 11.0 * x, 1e-6);
	ck_assert_double_eq_tol(casts.bwd_bytes, 11.0 * x, 1e-6);
	ck_assert_int_eq(casts.kernels, 4);
	ck_assert_int_eq(casts.bwd_kernels, 4);
	framework_init_default(&fw);
	fw.fp8_weight_recast = true;
	p.fp8_recipe = PLAN_FP8_CURRENT;
	ck_assert(fp8_recipe_recasts(&p, &fw));
	ck_assert_double_eq(fp8_recipe_weight_bytes(&p, &fw, &c.gpu), 0.0);
	p.fp8_gather = true;
	ck_assert(!fp8_recipe_recasts(&p, &fw));
	ck_assert_double_eq(fp8_recipe_weight_bytes(&p, &fw, &c.gpu), 6.0);
	/* ... but torchao's step (precompute_float8_dynamic_scale_for_fsdp)
	 * reads only the shard for its amaxes, 2 bytes an owned element:
	 * 1.25e8 owned of 1e9 is 2.5e8 bytes; the casts, 27 bytes an owned
	 * element, come before each gather (fp8_recipe_gather_cast_bytes).
	 * Transformer Engine (no fp8_weight_recast) casts all 1e9 once an
	 * iteration, 6 bytes each (current, Hopper): 6e9. */
	ck_assert_double_eq(fp8_recipe_step_bytes(&p, &fw, &c.gpu, 1e9, 1.25e8), 2.5e8);
	ck_assert_double_eq(fp8_recipe_gather_cast_bytes(&p, &fw), 27.0);
	ck_assert_double_eq(fp8_recipe_step_bytes(&p, NULL, &c.gpu, 1e9, 1.25e8), 6e9);
	ck_assert_double_eq(fp8_recipe_gather_cast_bytes(&p, NULL), 0.0);
	p.fp8_gather = false;
	ck_assert_double_eq(fp8_recipe_step_bytes(&p, &fw, &c.gpu, 1e9, 1.25e8), 0.0);
	ck_assert_double_eq(fp8_recipe_gather_cast_bytes(&p, &fw), 0.0);
	casts = (struct compute_casts){ .bytes = 0.0, .recipe = PLAN_FP8_BLOCKWISE };
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 1.7179869184e-3, 1e-15);
	ck_assert_double_eq_tol(casts.bytes, 68157440.0, 1e-6);
	ck_assert(fp8_recipe_check(PLAN_FP8_BLOCKWISE, &c.gpu, &err));
	ck_assert(!fp8_recipe_check(PLAN_FP8_MXFP8, &c.gpu, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "Blackwell"));
	ck_assert_ptr_nonnull(strstr(err.message, "(hopper)"));
	/* The framework's recipe unless the plan names one: fp8_recipe is
	 * stored one below the plan's enum (delayed first). */
	framework_init_default(&fw);
	p.fp8_recipe = PLAN_FP8_FRAMEWORK;
	ck_assert_int_eq(fp8_recipe_resolve(&p, &fw), PLAN_FP8_DELAYED);
	fw.fp8_recipe = PLAN_FP8_ROWWISE - 1;
	ck_assert_int_eq(fp8_recipe_resolve(&p, &fw), PLAN_FP8_ROWWISE);
	p.fp8_recipe = PLAN_FP8_MXFP8;
	ck_assert_int_eq(fp8_recipe_resolve(&p, &fw), PLAN_FP8_MXFP8);
	c.gpu.generation = GPU_GEN_BLACKWELL;
	ck_assert(fp8_recipe_check(PLAN_FP8_MXFP8, &c.gpu, &err));
	casts = (struct compute_casts){ .bytes = 0.0, .recipe = PLAN_FP8_MXFP8 };
	compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts);
	ck_assert_double_eq_tol(casts.bytes, 68157440.0, 1e-6);
	casts = (struct compute_casts){ .bytes = 0.0, .recipe = PLAN_FP8_DELAYED };
	compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts);
	ck_assert_double_eq_tol(casts.bytes, 3.0 * x, 1e-6);
	c.gpu.generation = GPU_GEN_AMPERE;
	ck_assert(!fp8_recipe_check(PLAN_FP8_BLOCKWISE, &c.gpu, &err));
	cluster_release(&c);
}
END_TEST

/*
 * NVFP4 (--precision fp4; fp8_recipe.c, Transformer Engine's
 * NVFP4BlockScaling) on the 4096^3 GEMM of test_fp8_gemm, on a Blackwell
 * GPU of 400 TFLOPS fp4 (twice its fp8): F = 1.37438953472e11 FLOPs at
 * 400e12 x 0.5 (the curve, the same at F and at F/4) x 0.8 (fp8_gemm_ratio)
 * x 0.77 (NVFP4's GEMM against fp8's) = 1.232e14 FLOP/s:
 * 1.115575921038961e-3 s, forward and each backward GEMM alike (no fast
 * accumulation: no difference to the backward). The operands' 0.5625 bytes
 * and the 2-byte result, 52 MB at 1 TB/s, take less. X's casts: an amax
 * pass over the transformed tensor (read 2) and one kernel writing both
 * copies (read 2, write 2 x (0.5 + 1/16)): 5.125 x 16,777,216 =
 * 85,983,232 bytes in 2 kernels; dY's the same in the backward. The
 * weight's once an iteration, 16 x 16 scale blocks stored a byte per 1 x
 * 16 (TE v2.18 quantizer.cpp get_scale_shape): 2 + 2 + 2 x (0.5 + 1/16) =
 * 5.125 bytes; the backward keeps X's column-wise copy, 0.5625 bytes
 * an element; its sequence-parallel all-gathers move that copy (0.5625),
 * after a TP all-reduce of the amax. fp4 runs NVFP4 whatever the
 * framework's fp8 recipe; it is
 * refused on Hopper and on a Blackwell profile without peak_flops_fp4.
 */
START_TEST(test_nvfp4_recipe)
{
	struct cluster c;
	struct plan p;
	struct plan_error err;
	struct framework fw;
	struct compute_casts casts = { .bytes = 0.0, .recipe = FP8_RECIPE_NVFP4 };

	test_load_cluster(&c, FP8_CLUSTER_YAML("  generation: hopper\n  gemm_efficiency_max: 0.5\n"));
	plan_init(&p);
	p.precision = PLAN_PRECISION_FP4;
	ck_assert(!fp8_recipe_check(FP8_RECIPE_NVFP4, &c.gpu, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "(hopper)"));
	c.gpu.generation = GPU_GEN_BLACKWELL;
	ck_assert(!fp8_recipe_check(FP8_RECIPE_NVFP4, &c.gpu, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "peak_flops_fp4 0"));
	c.gpu.peak_flops_fp4 = 400e12;
	ck_assert(fp8_recipe_check(FP8_RECIPE_NVFP4, &c.gpu, &err));
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 1.115575921038961e-3,
				1e-15);
	ck_assert_double_eq_tol(casts.bwd_gemm_s, 0.0, 1e-18);
	ck_assert_double_eq_tol(casts.bytes, 85983232.0, 1e-6);
	ck_assert_double_eq_tol(casts.bwd_bytes, 85983232.0, 1e-6);
	ck_assert_int_eq(casts.kernels, 2);
	ck_assert_int_eq(casts.bwd_kernels, 2);
	ck_assert_double_eq_tol(fp8_recipe_weight_bytes(&p, NULL, &c.gpu), 5.125, 1e-12);
	ck_assert_double_eq_tol(fp8_recipe_saved_input_bytes(&p, NULL), 0.5625, 1e-12);
	/* Sequence-parallel gathers move the quantised copy, 0.5 + 1/16, after a TP amax all-reduce. */
	p.tp = 2;
	p.sequence_parallel = true;
	ck_assert_double_eq_tol(fp8_recipe_tp_gather_bytes(&p, NULL), 0.5625, 1e-12);
	ck_assert(fp8_recipe_tp_amax_reduces(&p, NULL));
	p.tp = 1;
	p.sequence_parallel = false;
	framework_init_default(&fw);
	fw.fp8_recipe = PLAN_FP8_MXFP8 - 1;
	ck_assert_int_eq(fp8_recipe_resolve(&p, &fw), FP8_RECIPE_NVFP4);
	ck_assert_str_eq(fp8_recipe_name(FP8_RECIPE_NVFP4), "nvfp4");
	ck_assert_str_eq(fp8_recipe_name(PLAN_FP8_MXFP8), "mxfp8");
	ck_assert(plan_low_precision(&p));
	p.precision = PLAN_PRECISION_BF16;
	ck_assert(!plan_low_precision(&p));
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli hopper: the wgrads' accumulation into the fp32 main_grad
 * (compute.c, main_grad_gemm). Toy model at t 1: QKV 3072 x 1024
 * (3,145,728 weight elements), projection 1024 x 1024 (1,048,576), fc1
 * 4096 x 1024 and fc2 1024 x 4096 (4,194,304 each): 12,582,912 = 12 h^2.
 * - fused on a GPU without TMA epilogues (the toy's generation, as
 *   Ampere): the 4-byte C read the epilogue waits for, 50,331,648 B at
 *   1e12 B/s = 5.0331648e-5 s;
 * - unfused (main_grad.add_): 10 bytes, 1.2582912e-4 s, no launch cost on
 *   the toy;
 * - fused on Hopper (a roofline) at 1024 tokens: QKV's 2 x 1024 x 4096 +
 *   8 x 3,145,728 = 33,554,432 B (3.36e-5 s) against its 6.44e9 FLOPs at
 *   5e13 FLOP/s (1.29e-4 s): hidden, and so are the others: 0;
 * - at 64 tokens: QKV 2 x 64 x 4096 + 25,165,824 = 25,690,112 B, 2.5690112e-5
 *   s, against 2 x 64 x 3072 x 1024 / 5e13 = 8.05306368e-6 s: 1.763704832e-5;
 *   projection 8,650,752 B against 2.68435456e-6 s: 5.96639744e-6; fc1 and
 *   fc2 2 x 64 x 5120 + 33,554,432 = 34,209,792 B against 1.073741824e-5 s:
 *   2.347237376e-5 each; 7.054819328e-5 s in all.
 * The output layer (V 32768 x h 1024, 1024 tokens), fused without TMA:
 * 4 x 33,554,432 = 134,217,728 B, 1.34217728e-4 s more in head_bwd_s and
 * in head_mem_s.
 */
START_TEST(test_main_grad)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct compute_layer none, mg;
	struct compute_ends ce0, ce;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML);
	fixture_one_gpu_plan(&p);
	framework_init_default(&fw);
	compute_layer_time(&m, &p, &c, &fw, false, &none);
	ck_assert_double_eq(none.main_grad_s, 0.0);
	fw.main_grad = FRAMEWORK_MG_FUSED;
	compute_layer_time(&m, &p, &c, &fw, false, &mg);
	ck_assert_double_eq_tol(mg.main_grad_s, 5.0331648e-5, 1e-15);
	ck_assert_double_eq_tol(mg.bwd_s - none.bwd_s, 5.0331648e-5, 1e-15);
	fw.main_grad = FRAMEWORK_MG_UNFUSED;
	compute_layer_time(&m, &p, &c, &fw, false, &mg);
	ck_assert_double_eq_tol(mg.main_grad_s, 1.2582912e-4, 1e-15);
	fw.main_grad = FRAMEWORK_MG_FUSED;
	c.gpu.generation = GPU_GEN_HOPPER;
	compute_layer_time(&m, &p, &c, &fw, false, &mg);
	ck_assert_double_eq(mg.main_grad_s, 0.0);
	p.seq_len = 64;
	compute_layer_time(&m, &p, &c, &fw, false, &mg);
	ck_assert_double_eq_tol(mg.main_grad_s, 7.054819328e-5, 1e-15);
	c.gpu.generation = GPU_GEN_UNSPECIFIED;
	p.seq_len = 1024;
	fw.main_grad = FRAMEWORK_MG_NONE;
	compute_ends_time(&m, &p, &c, &fw, &ce0);
	fw.main_grad = FRAMEWORK_MG_FUSED;
	compute_ends_time(&m, &p, &c, &fw, &ce);
	ck_assert_double_eq_tol(ce.head_bwd_s - ce0.head_bwd_s, 1.34217728e-4, 1e-15);
	ck_assert_double_eq_tol(ce.head_mem_s - ce0.head_mem_s, 1.34217728e-4, 1e-15);
}
END_TEST

/*
 * Fast accumulation in the forward only (fp8_recipe.c): the 4096^3 GEMM
 * of test_fp8_gemm (F = 1.37438953472e11 FLOPs at 200e12 x 0.5 x 0.8 =
 * 8e13 FLOP/s with the split accumulator: 1.7179869184e-3 s) on Hopper,
 * whose fast-accumulation GEMM is 1.1 times as fast (pytorch/ao#2377:
 * 1.1x to 1.2x on the H100, the lower end): the forward (TE's fprop,
 * _2X_ACC_FPROP False) F / 8.8e13 = 1.5618062894545e-3 s, and the dgrad
 * and wgrad GEMMs promote to fp32 (_2X_ACC_DGRAD/WGRAD True), so the
 * backward takes 2 x 1.7179869184e-3 s, 2 x (1.7179869184e-3 -
 * 1.5618062894545e-3) = 3.1236125789091e-4 s more than twice the
 * forward. Blockwise promotes in all three (TE's Float8BlockScaling
 * requires the split accumulator): 1.7179869184e-3 s and nothing more.
 * Blackwell has no fast mode (1.0). What fit-logs compares with a
 * measured torch._scaled_mm (use_fast_accum False) is the split time.
 */
START_TEST(test_fp8_fast_accum)
{
	struct cluster c;
	struct plan p;
	struct compute_casts casts = { .bytes = 0.0, .recipe = PLAN_FP8_DELAYED };
	struct fit_gemm_point pt = { .m = 4096, .n = 4096, .k = 4096, .dtype = FIT_GEMM_FP8, .time_s = 1.0 };

	test_load_cluster(&c, FP8_CLUSTER_YAML("  generation: hopper\n  gemm_efficiency_max: 0.5\n"));
	ck_assert_double_eq(c.gpu.fp8_fast_accum_speedup, 1.1);
	plan_init(&p);
	p.precision = PLAN_PRECISION_FP8;
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 1.5618062894545e-3,
				1e-15);
	ck_assert_double_eq_tol(casts.bwd_gemm_s, 3.1236125789091e-4, 1e-15);
	ck_assert_double_eq_tol(fit_gemm_model_time(&c.gpu, &pt), 1.7179869184e-3, 1e-15);
	casts = (struct compute_casts){ .bytes = 0.0, .recipe = PLAN_FP8_BLOCKWISE };
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 1.7179869184e-3, 1e-15);
	ck_assert_double_eq(casts.bwd_gemm_s, 0.0);
	cluster_release(&c);
	test_load_cluster(&c, FP8_CLUSTER_YAML("  generation: blackwell\n  gemm_efficiency_max: 0.5\n"));
	ck_assert_double_eq(c.gpu.fp8_fast_accum_speedup, 1.0);
	casts = (struct compute_casts){ .bytes = 0.0, .recipe = PLAN_FP8_DELAYED };
	ck_assert_double_eq_tol(compute_linear_time(&c, &p, 4096, 4096, 4096, 1, &casts), 1.7179869184e-3, 1e-15);
	ck_assert_double_eq(casts.bwd_gemm_s, 0.0);
	cluster_release(&c);
}
END_TEST

/* The toy GPT's plan on one GPU for the fp8 tests: one sequence of
 * @seq_len tokens a micro-batch and an iteration, fp8. */
static void
fp8_toy_plan(struct plan *p, int seq_len)
{
	plan_init(p);
	p->tp = p->pp = p->dp = 1;
	p->micro_batch = 1;
	p->global_batch = 1;
	p->seq_len = seq_len;
	p->precision = PLAN_PRECISION_FP8;
}

/* ... on the fp8 GPU made Hopper without an SM count (no partial waves),
 * with the default framework. */
static void
fp8_toy_hopper(struct cluster *c, struct model *m, struct framework *fw, struct plan *p, int seq_len)
{
	test_load_cluster(c, FP8_CLUSTER_YAML("  generation: hopper\n  gemm_efficiency_max: 0.5\n  sm_count: 0\n"));
	test_load_model(m, TOY_MODEL_YAML);
	framework_init_default(fw);
	fp8_toy_plan(p, seq_len);
}

/*
 * The norm that writes its output in fp8 (fp8_recipe.c: TE's
 * LayerNormLinear under delayed scaling). The toy GPT (h = 1024, 8
 * heads, ffn 4096) at s = 1024 tokens, tp 1, on the fp8 GPU of
 * test_fp8_gemm made Hopper with a 1 us launch: s h = 2^20 = 1,048,576.
 * Current scaling casts every linear's input in 2 kernels, 6 bytes an
 * element: QKV s h, projection s h, fc1 s h, fc2 s 4h: 6 x 7 x 2^20
 * bytes, 8 kernels. Delayed casts only the projection's and fc2's
 * inputs, 4 bytes each in one kernel: 4 x 5 x 2^20, 2 kernels. The
 * forward's memory-bound part differs by 22 x 2^20 = 23,068,672 bytes at
 * 1 TB/s and 6 launches: 2.3068672e-5 + 6e-6 = 2.9068672e-5 s. The
 * backward casts dY (QKV 3h, projection h, fc1 4h, fc2 h: 9 s h):
 * current 6 x 9 x 2^20 in 8 kernels; delayed 4 x 9 x 2^20 in 4 plus the
 * transposes of the two fp8 norm outputs, 2 x 2 x 2^20 in 2: 40 x 2^20
 * in 6. The GEMMs run alike (both recipes take fast accumulation in the
 * forward), so the backward differs by 14 x 2^20 = 14,680,064 bytes and
 * 2 launches: 1.4680064e-5 + 2e-6 = 1.6680064e-5 s.
 */
START_TEST(test_fp8_norm_fused)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_layer cur, del;
	struct framework fw;

	test_load_cluster(&c, FP8_CLUSTER_YAML("  generation: hopper\n  gemm_efficiency_max: 0.5\n"
					       "  launch_overhead: 1 us\n"));
	test_load_model(&m, TOY_MODEL_YAML);
	framework_init_default(&fw);
	fp8_toy_plan(&p, 1024);
	p.fp8_recipe = PLAN_FP8_CURRENT;
	compute_layer_time(&m, &p, &c, &fw, false, &cur);
	p.fp8_recipe = PLAN_FP8_DELAYED;
	compute_layer_time(&m, &p, &c, &fw, false, &del);
	ck_assert_double_eq_tol(cur.fwd_mem_s - del.fwd_mem_s, 2.9068672e-5, 1e-15);
	ck_assert_double_eq_tol(cur.bwd_s - del.bwd_s, 1.6680064e-5, 1e-15);
	ck_assert_int_eq(cur.ew_kernels - del.ew_kernels, 6);
	ck_assert_double_eq(cur.fwd_gemm_s, del.fwd_gemm_s);
	cluster_release(&c);
}
END_TEST

/*
 * Recomputation at the recipe's GEMM speed (compute.c
 * op_sac_recompute_time): torchtitan's per-op SAC reruns the toy GPT's k
 * projection (1024 tokens x kv 1024 x h 1024, t 1: F = 2 x 1024^3 =
 * 2,147,483,648 FLOPs), the output projection and fc2 (taken from the
 * forward) and the element-wise work. On the fp8 GPU of
 * test_main_grad_fp8 (Hopper, no SM count: 8e13 FLOP/s with the split
 * accumulator, fast accumulation 1.1x; the GEMM's 4 MiB at 1 TB/s take
 * less) the recomputed k is a forward GEMM: delayed F / 8.8e13 =
 * 2.4403223272727e-5 s, rowwise at 0.9 of it, F / 7.92e13 =
 * 2.7114692525253e-5 s (it ran at delayed's speed whatever the recipe),
 * blockwise without fast accumulation F / 8e13 = 2.68435456e-5 s.
 */
START_TEST(test_fp8_recompute_recipe)
{
	static const int recipes[] = { PLAN_FP8_DELAYED, PLAN_FP8_ROWWISE, PLAN_FP8_BLOCKWISE };
	static const double k_s[] = { 2.4403223272727e-5, 2.7114692525253e-5, 2.68435456e-5 };
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct compute_layer out;

	fp8_toy_hopper(&c, &m, &fw, &p, 1024);
	fw.selective_recompute = FRAMEWORK_SAC_OP;
	p.flash_attention = true;
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	for (size_t i = 0; i < sizeof(recipes) / sizeof(recipes[0]); i++) {
		p.fp8_recipe = recipes[i];
		compute_layer_time(&m, &p, &c, &fw, false, &out);
		ck_assert_double_eq_tol(out.recompute_s - out.proj_fwd_s - out.fc2_fwd_s - out.fwd_mem_s, k_s[i],
					1e-15);
	}
	cluster_release(&c);
}
END_TEST

/*
 * fp8fixed: the dense wgrads' fp32 main_grad traffic under fp8
 * (compute.c, main_grad_gemm). The toy model (h 1024, ffn 4096, t 1) at
 * 64 tokens on the fp8 GPU of test_fp8_fast_accum (Hopper: TMA epilogues,
 * a roofline; no SM count, so no partial waves; 200 TFLOPS fp8 x 0.5 x 0.8 = 8e13 FLOP/s with the split
 * accumulator, 1 TB/s), fused main_grad, delayed scaling. The wgrad GEMM
 * promotes (TE's _2X_ACC_WGRAD): F / 8e13 (each above its
 * m k + k n + 2 m n bytes at 1 TB/s), and reads 1-byte fp8 operands:
 * - QKV 3072 x 1024: F = 4.02653184e8, 5.0331648e-6 s; 64 x 4096 +
 *   8 x 3,145,728 = 25,427,968 B, 2.5427968e-5 s: 2.03948032e-5 exposed;
 * - projection 1024 x 1024: 1.6777216e-6 s; 64 x 2048 + 8,388,608 =
 *   8,519,680 B: 6.8419584e-6;
 * - fc1 and fc2 (4096 x 1024): 6.7108864e-6 s each; 64 x 5120 +
 *   33,554,432 = 33,882,112 B: 2.71712256e-5 each;
 * 8.15792128e-5 s in all (bf16 operands against the bf16 GEMM's time
 * would give test_main_grad's 7.054819328e-5 on its GPU; here the fp8
 * GEMM hides less). The output layer stays in 16 bits (Megatron's
 * ColumnParallelLinear): its main_grad cost is the same under fp8 as
 * under bf16.
 */
START_TEST(test_main_grad_fp8)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct compute_layer mg;
	struct compute_ends ce16, ce8;

	fp8_toy_hopper(&c, &m, &fw, &p, 64);
	fw.main_grad = FRAMEWORK_MG_FUSED;
	p.fp8_recipe = PLAN_FP8_DELAYED;
	compute_layer_time(&m, &p, &c, &fw, false, &mg);
	ck_assert_double_eq_tol(mg.main_grad_s, 8.15792128e-5, 1e-15);
	compute_ends_time(&m, &p, &c, &fw, &ce8);
	p.precision = PLAN_PRECISION_BF16;
	compute_ends_time(&m, &p, &c, &fw, &ce16);
	ck_assert_double_eq_tol(ce8.head_mem_s, ce16.head_mem_s, 1e-18);
	cluster_release(&c);
}
END_TEST

/*
 * fp8fixed: delayed scaling's bookkeeping per micro-batch
 * (fp8_recipe_scaling; TE v1.7-v1.8 reduce_and_update_fp8_tensors). A
 * stage of 24 layers, 4 fp8 linears each: 96 modules, one fp8_autocast
 * region, histories of 1024 entries. Forward and backward each launch a
 * cat (96 <= 128 inputs: 1) and a bulk update (96 <= 1023 modules: 1): 4
 * kernels. The update reads and writes every history entry (8 bytes) and
 * the amax buffer (4 + 4), reads the scale and writes the scale and its
 * inverse (12): 5 amaxes a module x (8 + 8 x 1024 + 12) = 41,060 bytes a
 * module, 3,941,760 in all. Two all-reduces: 3 x 96 amaxes forward
 * (1152 bytes), 2 x 96 backward (768). Interleaved into 2 chunks of 192
 * modules (384 in all): 2 cats (192 > 128) and 1 update per chunk and
 * pass, 2 x 2 x 3 = 12 kernels, 15,767,040 bytes, 4 all-reduces of 2304
 * and 1536 bytes. Current scaling keeps no history: nothing.
 */
START_TEST(test_fp8_scaling_bookkeeping)
{
	struct fp8_scaling_cost sc;

	fp8_recipe_scaling(PLAN_FP8_DELAYED, 96.0, 1.0, 1024.0, &sc);
	ck_assert_double_eq(sc.kernels, 4.0);
	ck_assert_double_eq_tol(sc.bytes, 3941760.0, 1e-6);
	ck_assert_double_eq(sc.reductions, 2.0);
	ck_assert_double_eq(sc.fwd_reduce_bytes, 1152.0);
	ck_assert_double_eq(sc.bwd_reduce_bytes, 768.0);
	fp8_recipe_scaling(PLAN_FP8_DELAYED, 384.0, 2.0, 1024.0, &sc);
	ck_assert_double_eq(sc.kernels, 12.0);
	ck_assert_double_eq_tol(sc.bytes, 15767040.0, 1e-6);
	ck_assert_double_eq(sc.reductions, 4.0);
	ck_assert_double_eq(sc.fwd_reduce_bytes, 2304.0);
	ck_assert_double_eq(sc.bwd_reduce_bytes, 1536.0);
	fp8_recipe_scaling(PLAN_FP8_CURRENT, 96.0, 1.0, 1024.0, &sc);
	ck_assert_double_eq(sc.kernels, 0.0);
	ck_assert_double_eq(sc.bytes, 0.0);
	ck_assert_double_eq(sc.reductions, 0.0);
}
END_TEST

static Suite *
compute_suite(void)
{
	Suite *s = suite_create("compute");
	TCase *tc = tcase_create("compute");

	tcase_add_test(tc, test_gemm_compute_bound);
	tcase_add_test(tc, test_gemm_memory_bound);
	tcase_add_test(tc, test_optimizer);
	tcase_add_test(tc, test_fp8_recipes);
	tcase_add_test(tc, test_nvfp4_recipe);
	tcase_add_test(tc, test_fp8_fast_accum);
	tcase_add_test(tc, test_fp8_norm_fused);
	tcase_add_test(tc, test_layer_recompute);
	tcase_add_test(tc, test_embedding_and_logits);
	tcase_add_test(tc, test_flash_attention);
	tcase_add_test(tc, test_fa2_speed_defaults);
	tcase_add_test(tc, test_blackwell_measured_attention);
	tcase_add_test(tc, test_fp8_falling_curve);
	tcase_add_test(tc, test_elementwise_eager);
	tcase_add_test(tc, test_op_sac_moe);
	tcase_add_test(tc, test_elementwise_compiled);
	tcase_add_test(tc, test_launch_overhead);
	tcase_add_test(tc, test_fp8_gemm);
	tcase_add_test(tc, test_main_grad);
	tcase_add_test(tc, test_main_grad_fp8);
	tcase_add_test(tc, test_fp8_scaling_bookkeeping);
	tcase_add_test(tc, test_fp8_recompute_recipe);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(compute_suite)
