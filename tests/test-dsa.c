/*
 * DeepSeek Sparse Attention (model block dsa; DeepSeek-V3.2,
 * arXiv:2512.02556, Sec. 2.1; Megatron-Core's DSAttention and DSAIndexer,
 * megatron/core/transformer/experimental_attention_variant/dsa.py
 * @d98e8a6; Megatron-Bridge's DSA model FLOPs, src/megatron/bridge/
 * training/utils/flop_utils.py @067f987). Every expected value is worked
 * by hand below.
 */
#include <math.h>
#include <stdio.h>

#include "plan/compute.h"
#include "plan/context_par.h"
#include "plan/estimate.h"
#include "plan/flops.h"
#include "plan/memory.h"
#include "plan/model.h"
#include "plan/topology.h"
#include "testutil.h"

/*
 * A small MLA model: L 4, h 1024, a 8, q_lora_rank 256, kv_lora_rank 128,
 * qk_nope 32 + qk_rope 16 = d_qk 48, d_v 32, a plain MLP of 2048, no
 * biases, RMSNorm, rotary, V 32768. The DSA block: H_I 4 heads of d_I 32,
 * top-k 256 (@topk), indexer loss @loss.
 */
#define MLA_MODEL(layers) \
	"name: d\nlayers: " layers "\nhidden: 1024\nheads: 8\nffn_hidden: 2048\n" \
	"vocab: 32768\nseq_len: 1024\nbias: false\ndropout: false\nnorm: rmsnorm\n" \
	"position_embedding: rotary\nattention: mla\n" \
	"mla: {q_lora_rank: 256, kv_lora_rank: 128, qk_nope_head_dim: 32, qk_rope_head_dim: 16, v_head_dim: 32}\n"
#define DSA_BLOCK(topk, loss, more) \
	"dsa: {index_n_heads: 4, index_head_dim: 32, index_topk: " topk ", indexer_loss: " loss more "}\n"

/* The toy cluster's GPU with both attention efficiencies given: 100 TFLOP/s,
 * 1000 GB/s, the flash forward at 0.5 of peak and the backward at 0.25. */
#define DSA_CLUSTER \
	"name: toy\nnodes: 2\ngpus_per_node: 4\ngpu:\n  name: toy\n  peak_flops: 100 TFLOPS\n" \
	"  memory: 80 GiB\n  memory_bandwidth: 1000 GB/s\n  memory_efficiency: 1.0\n" \
	"  gemm_efficiency_max: 0.5\n  gemm_overhead: 0 s\n  launch_overhead: 0 s\n" \
	"  attention_overhead: 0 s\n  attention_fwd_efficiency: 0.5\n  attention_bwd_efficiency: 0.25\n" \
	"intra_node:\n  bandwidth: 100 GB/s\n  latency: 1 us\n  efficiency: 1.0\n" \
	"inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n  latency: 10 us\n" \
	"  efficiency: 0.8\n  message_half_size: 0 B\n  net_overhead: 0 s\n"

static void
dsa_plan(struct plan *p, int tp, bool sp, int recompute)
{
	plan_init(p);
	p->tp = tp;
	p->pp = p->dp = 1;
	p->micro_batch = 1;
	p->global_batch = 1;
	p->seq_len = 1024;
	p->sequence_parallel = sp;
	p->recompute = recompute;
}

/*
 * Parameters of one indexer: wq_b q_lora 256 x H_I d_I 128 = 32,768, wk
 * h 1024 x d_I 32 = 32,768, weights_proj 1024 x H_I 4 = 4,096: 69,632 in
 * matrices, and k_norm's LayerNorm 2 d_I = 64: 69,696. Every layer has
 * one (freq 1): 69,696 more a layer, 69,632 of it matrices. Top-k shared
 * (Megatron's is_dsa_skip_topk_layer): freq 2, offset 0 (taken as 1):
 * layer l computes when max(l - 1, 0) mod 2 = 0: l = 1, 3: two of four;
 * freq 4, offset 2: max(l - 2, 0) = 0, 0, 1, 2: l = 1, 2; two again, so
 * the mean layer has 69,696 x 2 / 4 = 34,848 more.
 */
START_TEST(test_dsa_params)
{
	struct model mla, dsa;

	test_load_model(&mla, MLA_MODEL("4"));
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "sparse", ""));
	ck_assert(!model_has_dsa(&mla));
	ck_assert(model_has_dsa(&dsa));
	ck_assert_int_eq(model_dsa_indexer_layers(&mla), 0);
	ck_assert_int_eq(model_dsa_indexer_layers(&dsa), 4);
	ck_assert_double_eq(model_dsa_indexer_matrix_params(&dsa), 69632.0);
	ck_assert_double_eq(model_params_per_layer(&dsa) - model_params_per_layer(&mla), 69696.0);
	ck_assert_double_eq(model_matrix_params_per_layer(&dsa) - model_matrix_params_per_layer(&mla), 69632.0);
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "sparse", ", index_topk_freq: 2"));
	ck_assert_int_eq(model_dsa_indexer_layers(&dsa), 2);
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "sparse", ", index_topk_freq: 4, index_skip_topk_offset: 2"));
	ck_assert_int_eq(model_dsa_indexer_layers(&dsa), 2);
	ck_assert_double_eq(model_params_per_layer(&dsa) - model_params_per_layer(&mla), 34848.0);
}
END_TEST

/*
 * The indexers' weights on a GPU: DSAIndexer's projections are
 * parallel_mode "duplicated" (dsa.py @d98e8a6) and k_norm is a plain
 * LayerNorm, so each TP rank holds them whole while the rest of the layer
 * is split. TP 2, PP 1, 4 layers, each with an indexer of 69,696
 * (test_dsa_params): 4 x 69,696 = 278,784 more on a GPU than the same
 * model without DSA (split two ways it would be 139,392).
 */
START_TEST(test_dsa_indexer_weights_whole_on_tp)
{
	struct model mla, dsa;
	struct plan p;

	test_load_model(&mla, MLA_MODEL("4"));
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "sparse", ""));
	dsa_plan(&p, 2, true, PLAN_RECOMPUTE_NONE);
	ck_assert_double_eq_tol(estimate_stage_params(&dsa, &p, 0, NULL) - estimate_stage_params(&mla, &p, 0, NULL),
				278784.0, 1e-6);
	p.tp = 1;
	ck_assert_double_eq_tol(estimate_stage_params(&dsa, &p, 0, NULL) - estimate_stage_params(&mla, &p, 0, NULL),
				278784.0, 1e-6);
}
END_TEST

/*
 * The sparse attention: each query meets min(s, k) keys. s 1024, k 256:
 * key fraction 256 / 1024 = 0.25; causal pairs (model_window_pairs with
 * w = k) 1024 x 256 - 256 x 255 / 2 = 262,144 - 32,640 = 229,504 of the
 * s^2 / 2 = 524,288 a flash kernel counts: 0.437744140625. s 200 <= k:
 * all of them, 1 and 1.
 */
START_TEST(test_dsa_fractions)
{
	struct model dsa;

	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "sparse", ""));
	ck_assert_double_eq_tol(model_attention_key_fraction(&dsa, 1024), 0.25, 1e-15);
	ck_assert_double_eq_tol(model_attention_work_fraction(&dsa, 1024), 0.437744140625, 1e-15);
	ck_assert_double_eq(model_attention_key_fraction(&dsa, 200), 1.0);
	ck_assert_double_eq(model_attention_work_fraction(&dsa, 200), 1.0);
}
END_TEST

/*
 * s <= k: the model FLOPs are dense MLA's exactly (forward FLOPs a token);
 * top-k 2048 against s 1024. What DSA adds to them is the indexer alone,
 * outside flops_forward_per_token. The kernel is not dense MLA's: Megatron
 * runs DSA absorbed (model_dsa_kernel_head_dims), d_qk = kv_lora 128 +
 * rope 16 = 144 and d_v = 128 in place of 48 and 32. TP 2, 4 heads, the toy
 * GPU (no shape factors, no fill cost): forward 2 s^2 (144 + 128) x 4 /
 * 2 = 2 x 1,048,576 x 272 x 2 = 1,140,850,688 FLOPs / 50 TFLOP/s =
 * 22.81701376 us (3.4 times MLA's 2 x 1,048,576 x 80 x 2 = 335,544,320,
 * 6.7108864 us); backward 2.5 x that / 25 TFLOP/s = 114.0850688 us. Its
 * bytes, 2 x (4 x 272 + 144) x 1024 = 2,523,136 B, 2.5 us, do not bind.
 * Top-k 256: the causal pairs' share 0.437744140625 (test_dsa_fractions):
 * 499,400,704 FLOPs, 9.98801408 us and 49.9400704 us.
 */
START_TEST(test_dsa_short_sequence_is_dense)
{
	struct model mla, dsa;
	struct cluster c;
	struct plan p;
	double f0, b0, f1, b1;

	test_load_cluster(&c, DSA_CLUSTER);
	test_load_model(&mla, MLA_MODEL("4"));
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("2048", "sparse", ""));
	dsa_plan(&p, 2, false, PLAN_RECOMPUTE_NONE);
	ck_assert_double_eq(flops_forward_per_token(&dsa, 1024), flops_forward_per_token(&mla, 1024));
	compute_flash_attention(&mla, &p, &c, &f0, &b0);
	compute_flash_attention(&dsa, &p, &c, &f1, &b1);
	ck_assert_double_eq_tol(f0, 6.7108864e-6, 1e-15);
	ck_assert_double_eq_tol(f1, 22.81701376e-6, 1e-15);
	ck_assert_double_eq_tol(b1, 114.0850688e-6, 1e-14);
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "sparse", ""));
	compute_flash_attention(&dsa, &p, &c, &f1, &b1);
	ck_assert_double_eq_tol(f1, 9.98801408e-6, 1e-15);
	ck_assert_double_eq_tol(b1, 49.9400704e-6, 1e-14);
	cluster_release(&c);
}
END_TEST

/*
 * Model FLOPs, s 1024, k 256, one sequence. The attention core a token:
 * 2 s a (d_qk + d_v) = 2 x 1024 x 8 x 80 = 1,310,720 dense, a quarter of
 * it sparse: 983,040 less a layer. The indexer a layer and token
 * (model_dsa_indexer_flops_per_token), P 69,632, H_I (d_I + 1) = 132:
 * forward 2 P + 2 s 132 = 139,264 + 270,336 = 409,600; sparse loss: the
 * target 2 x 256 keys x a 8 x (kv_lora 128 + rope 16) = 589,824 (forward
 * 999,424), the backward 2 P + 4 x 256 x 132 = 139,264 + 135,168 =
 * 274,432: 1,273,856. Dense loss: target over 1024 keys 2,359,296, backward
 * 139,264 + 540,672: 409,600 + 2,359,296 + 679,936 = 3,448,832. None:
 * 409,600. The iteration, 4 layers: 1024 tokens x (3 x 4 x -983,040 +
 * 4 x 1,273,856) = 1024 x (-11,796,480 + 5,095,424) = 1024 x -6,701,056 =
 * -6,861,881,344 (fewer). Full recomputation repeats each layer's forward
 * with its indexer's: 1024 x (4 x -983,040 + 4 x 999,424) = 1024 x 65,536
 * = 67,108,864 more hardware FLOPs besides the model's. The hardware
 * runs the sparse attention absorbed (model_dsa_kernel_head_dims): 2 x
 * 256 keys x 8 heads x ((128 + 16 + 128) - (48 + 32) = 192) = 786,432 more
 * a layer's forward, 3 x 4 layers in the step and 4 again recomputed:
 * 16 x 786,432 x 1024 = 12,884,901,888; 12,952,010,752 in all.
 */
START_TEST(test_dsa_flops)
{
	struct model mla, dsa;
	struct plan p;

	test_load_model(&mla, MLA_MODEL("4"));
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "sparse", ""));
	dsa_plan(&p, 1, false, PLAN_RECOMPUTE_FULL);
	ck_assert_double_eq_tol(flops_forward_per_token(&mla, 1024) - flops_forward_per_token(&dsa, 1024), 4 * 983040.0,
				1e-6);
	ck_assert_double_eq_tol(model_dsa_indexer_flops_per_token(&dsa, 1024, false), 1273856.0, 1e-6);
	ck_assert_double_eq_tol(model_dsa_indexer_flops_per_token(&dsa, 1024, true), 999424.0, 1e-6);
	ck_assert_double_eq_tol(flops_model_per_iteration(&dsa, &p) - flops_model_per_iteration(&mla, &p),
				-6861881344.0, 1e-3);
	ck_assert_double_eq_tol((flops_hardware_per_iteration(&dsa, &p, NULL) - flops_model_per_iteration(&dsa, &p)) -
				(flops_hardware_per_iteration(&mla, &p, NULL) - flops_model_per_iteration(&mla, &p)),
				12952010752.0, 1e-3);
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "dense", ""));
	ck_assert_double_eq_tol(model_dsa_indexer_flops_per_token(&dsa, 1024, false), 3448832.0, 1e-6);
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "none", ""));
	ck_assert_double_eq_tol(model_dsa_indexer_flops_per_token(&dsa, 1024, false), 409600.0, 1e-6);
}
END_TEST

/*
 * The indexer's time, TP 2, s 1024, one sequence, sparse loss, every layer
 * an indexer (share 1); peak 100 TFLOP/s, attention forward 0.5 and
 * backward 0.25 of it, 1000 GB/s. Scores: s^2 / 2 = 524,288 pairs x 2 x
 * 132 = 138,412,032 FLOPs / 50 TFLOP/s = 2.76824064 us, and their fp32
 * round trip 8 x 524,288 B / 1000 GB/s = 4.194304 us; the target over
 * 229,504 pairs x 2 x (8 / 2 heads) x 144 = 264,388,608 FLOPs / 50 TFLOP/s
 * = 5.28777216 us: 12.2503168 us besides the projections' GEMMs. Backward:
 * 4 x 229,504 x 132 = 121,178,112 FLOPs / 25 TFLOP/s = 4.84712448 us and the
 * GEMMs' weight gradients again. Loss none: the scores only, 6.96254464 us,
 * no backward.
 */
START_TEST(test_dsa_indexer_time)
{
	struct model dsa;
	struct cluster c;
	struct plan p;
	double fwd, bwd, gemm;

	test_load_cluster(&c, DSA_CLUSTER);
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "sparse", ""));
	dsa_plan(&p, 2, false, PLAN_RECOMPUTE_NONE);
	gemm = compute_gemm_time(&c, 1024, 128, 256, 1) + compute_gemm_time(&c, 1024, 32, 1024, 1) +
	       compute_gemm_time(&c, 1024, 4, 1024, 1);
	compute_dsa_indexer(&dsa, &p, &c, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd - gemm, 12.2503168e-6, 1e-15);
	ck_assert_double_eq_tol(bwd - gemm, 4.84712448e-6, 1e-15);
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "none", ""));
	compute_dsa_indexer(&dsa, &p, &c, &fwd, &bwd);
	ck_assert_double_eq_tol(fwd - gemm, 6.96254464e-6, 1e-15);
	ck_assert_double_eq(bwd, 0.0);
	cluster_release(&c);
}
END_TEST

/*
 * Activations a layer, s 1024, one sequence: the top-k indices, int32,
 * 4 x 256 = 1,024 B a token; the sparse loss's saved q (H_I d_I 128),
 * weights (4) and k (32), and k_norm's input (32), bf16: 2 x 196 = 392 B:
 * 1,416 B x 1024 = 1,449,984 B, on every TP rank (TP 2). With SP the
 * indexer's gathered x (1024) and query latent (256) too: 2 x 1,280 =
 * 2,560 B more a token, 3,976 x 1024 = 4,071,424 B. Loss none: the indices
 * alone, 1,048,576 B. Full recomputation keeps none of it.
 */
START_TEST(test_dsa_activations)
{
	struct model mla, dsa;
	struct plan p;

	test_load_model(&mla, MLA_MODEL("4"));
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "sparse", ""));
	dsa_plan(&p, 2, false, PLAN_RECOMPUTE_NONE);
	ck_assert_double_eq(memory_layer_activations(&dsa, &p, NULL) - memory_layer_activations(&mla, &p, NULL),
			    1449984.0);
	dsa_plan(&p, 2, true, PLAN_RECOMPUTE_NONE);
	ck_assert_double_eq(memory_layer_activations(&dsa, &p, NULL) - memory_layer_activations(&mla, &p, NULL),
			    4071424.0);
	dsa_plan(&p, 2, true, PLAN_RECOMPUTE_FULL);
	ck_assert_double_eq(memory_layer_activations(&dsa, &p, NULL), memory_layer_activations(&mla, &p, NULL));
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "none", ""));
	dsa_plan(&p, 2, true, PLAN_RECOMPUTE_NONE);
	ck_assert_double_eq(memory_layer_activations(&dsa, &p, NULL) - memory_layer_activations(&mla, &p, NULL),
			    1048576.0);
}
END_TEST

/*
 * All-gather CP on DSA (lead, after helper cpag): DSA runs on absorbed MLA,
 * whose key is the one shared latent, kv_lora 128 + rope 16 = 144 wide,
 * whole on every TP rank, and whose value is None (absorbed_mla.py
 * @d98e8a6 l. 859-863); dsa.py gathers that latent. cp 2 of s 2048 on one
 * node of the toy cluster (100 GB/s, 1 us): a rank's 1024 tokens x 144 x
 * 2 B = 294,912 B of latent, and the indexer keys, 1024 x d_I 32 x 2 B =
 * 65,536 B (every layer computes a top-k). Forward: one all-gather of the
 * latent and one of the keys, 1 us + 294,912 / 1e11 = 3.94912 us and
 * 1 us + 65,536 / 1e11 = 1.65536 us: 5.60448 us; no loss-free backward
 * for the keys, the latent's gradient reduce-scattered: 3.94912 us. Bytes
 * (cp - 1) x (2 x 294,912 + 65,536) = 655,360. Kept for the backward:
 * (cp - 1) x 294,912 B a layer, not split by TP (TP 2 here), where the
 * per-head K and V (8 heads x (48 + 32) x 2 B x 1024 / TP 2 = 655,360 B)
 * were counted before.
 */
START_TEST(test_dsa_cp_allgather)
{
	struct model dsa;
	struct cluster c;
	struct plan p, local;
	struct plan_layout lay;
	struct compute_layer cl = { 0 };
	struct cp_layer_comm cc;
	double ag, ring;

	test_load_cluster(&c, DSA_CLUSTER);
	test_load_model(&dsa, MLA_MODEL("4") DSA_BLOCK("256", "none", ""));
	dsa_plan(&p, 1, false, PLAN_RECOMPUTE_NONE);
	p.seq_len = 2048;
	p.cp = 2;
	p.cp_method = PLAN_CP_ALLGATHER;
	topology_plan(&p, &c, &lay);
	local = plan_cp_local(&p);
	ck_assert_int_eq(local.seq_len, 1024);
	cp_layer_comm(&dsa, &local, &c, NULL, &lay, &cl, &cc);
	ck_assert_double_eq_tol(cc.fwd_s, 5.60448e-6, 1e-15);
	ck_assert_double_eq_tol(cc.bwd_s, 3.94912e-6, 1e-15);
	ck_assert_double_eq_tol(cc.bytes, 655360.0, 1e-6);
	local.tp = 2;
	ag = memory_layer_activations(&dsa, &local, NULL);
	local.cp_method = PLAN_CP_RING;
	ring = memory_layer_activations(&dsa, &local, NULL);
	ck_assert_double_eq(ag - ring, 294912.0);
	cluster_release(&c);
}
END_TEST

static Suite *
dsa_suite(void)
{
	Suite *s = suite_create("dsa");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_dsa_params);
	tcase_add_test(tc, test_dsa_indexer_weights_whole_on_tp);
	tcase_add_test(tc, test_dsa_fractions);
	tcase_add_test(tc, test_dsa_short_sequence_is_dense);
	tcase_add_test(tc, test_dsa_flops);
	tcase_add_test(tc, test_dsa_indexer_time);
	tcase_add_test(tc, test_dsa_activations);
	tcase_add_test(tc, test_dsa_cp_allgather);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(dsa_suite)
