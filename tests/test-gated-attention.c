/*
 * Gated attention (model key attention_output_gate; Megatron-Core's
 * TransformerConfig.attention_output_gate, megatron/core/transformer/
 * attention.py @d98e8a6): linear_qkv also yields a gate of heads x
 * head_dim, and the attention's output is multiplied by its sigmoid
 * before linear_proj. Every expected value is worked by hand below.
 */
#include <math.h>
#include <stdio.h>

#include "plan/compute.h"
#include "plan/data_par.h"
#include "plan/flops.h"
#include "plan/memory.h"
#include "plan/model.h"
#include "plan/pipeline.h"
#include "testutil.h"

/*
 * A small GQA model: L 2, h 1024, a 8 of d 128 (q_size a d = 1024), kv 2
 * (256), a plain MLP of 2048, no biases, RMSNorm, rotary, tied, V 32768.
 * Attention matrices h (a d + 2 kv d) + a d h = 1024 x 1536 + 1024 x 1024
 * = 1,572,864 + 1,048,576 = 2,621,440; the MLP 2 x 1024 x 2048 =
 * 4,194,304; two RMSNorm scales 2,048.
 */
#define GATE_MODEL(layers, gate) \
	"name: g\nlayers: " layers "\nhidden: 1024\nheads: 8\nkv_heads: 2\nffn_hidden: 2048\n" \
	"vocab: 32768\nseq_len: 1024\nbias: false\ndropout: false\nnorm: rmsnorm\n" \
	"position_embedding: rotary\nattention_output_gate: " gate "\n"

static void
load_pair(struct model *off, struct model *on)
{
	test_load_model(off, GATE_MODEL("2", "false"));
	test_load_model(on, GATE_MODEL("2", "true"));
	ck_assert(!off->attention_output_gate);
	ck_assert(on->attention_output_gate);
}

/* TP 2, one sequence of 1024 tokens, no recomputation. */
static void
gate_plan(struct plan *p, int recompute)
{
	plan_init(p);
	p->tp = 2;
	p->pp = p->dp = 1;
	p->micro_batch = 1;
	p->global_batch = 1;
	p->seq_len = 1024;
	p->recompute = recompute;
}

/*
 * Parameters. The gate adds h x a d = 1024 x 1024 = 1,048,576 to the QKV
 * matrix (linear_qkv_out_dim += kv_channels x num_attention_heads).
 * Per layer: 2,621,440 + 4,194,304 + 2,048 = 6,817,792 without, and
 * 7,866,368 with it; weight matrices 6,815,744 and 7,864,320. Total:
 * 2 layers + the embedding 32768 x 1024 = 33,554,432 + the final norm
 * 1,024: 47,191,040 and 49,288,192. The largest matrix: the MLP's
 * 1024 x 2048 = 2,097,152 without (QKV is 1024 x 1536), QKV's
 * 1024 x 2560 = 2,621,440 with. With bias true the QKV bias grows by a d
 * = 1,024 too (linear_qkv's bias is linear_qkv_out_dim long).
 */
START_TEST(test_gate_params)
{
	struct model off, on;

	load_pair(&off, &on);
	ck_assert_double_eq(model_attention_gate_dim(&off), 0.0);
	ck_assert_double_eq(model_attention_gate_dim(&on), 1024.0);
	ck_assert_double_eq(model_params_per_layer(&off), 6817792.0);
	ck_assert_double_eq(model_params_per_layer(&on), 7866368.0);
	ck_assert_double_eq(model_matrix_params_per_layer(&off), 6815744.0);
	ck_assert_double_eq(model_matrix_params_per_layer(&on), 7864320.0);
	ck_assert_double_eq(model_params_total(&off), 47191040.0);
	ck_assert_double_eq(model_params_total(&on), 49288192.0);
	ck_assert_double_eq(model_largest_matrix_params(&off), 2097152.0);
	ck_assert_double_eq(model_largest_matrix_params(&on), 2621440.0);
	off.bias = on.bias = true;
	ck_assert_double_eq(model_params_per_layer(&on) - model_params_per_layer(&off), 1048576.0 + 1024.0);
}
END_TEST

/*
 * Compute on the toy cluster (GEMMs at 5e13 FLOP/s, element-wise work at
 * 1e12 B/s, 2 us a launch), TP 2, 1024 tokens. QKV's GEMM is 1024 tokens
 * x h 1024 by 1536 / 2 = 768 columns without the gate, (1536 + 1024) / 2
 * = 1280 with it: 2 x 1024 x 768 x 1024 = 1,610,612,736 FLOPs, 32.21225472
 * us, and 2,684,354,560 FLOPs, 53.6870912 us (both compute-bound: the
 * larger moves 2 (1024 x 1024 + 1024 x 1280 x 2) = 7.34 MB, 7.3 us).
 * The sigmoid-multiply (Megatron's _apply_output_gate under torch.compile,
 * one kernel): reads x and the gate, writes the product, 6 bytes an
 * element of the rank's 1024 x 1024 / 2 gate = 3,145,728 bytes, 3.145728
 * us, and one launch of 2 us: 5.145728 us more element-wise forward. The
 * backward twice both: 2 x (21.47483648 + 5.145728) = 53.24112896 us.
 */
START_TEST(test_gate_compute)
{
	struct cluster c;
	struct model off, on;
	struct plan p;
	struct compute_layer a, b;

	test_load_cluster(&c, TOY_CLUSTER_YAML_LAUNCH("2 us"));
	load_pair(&off, &on);
	gate_plan(&p, PLAN_RECOMPUTE_NONE);
	compute_layer_time(&off, &p, &c, NULL, false, &a);
	compute_layer_time(&on, &p, &c, NULL, false, &b);
	ck_assert_double_eq_tol(a.qkv_fwd_s, 32.21225472e-6, 1e-15);
	ck_assert_double_eq_tol(b.qkv_fwd_s, 53.6870912e-6, 1e-15);
	ck_assert_double_eq_tol(b.proj_fwd_s - a.proj_fwd_s, 0.0, 1e-18);
	ck_assert_double_eq_tol(b.fwd_mem_s - a.fwd_mem_s, 5.145728e-6, 1e-15);
	ck_assert_int_eq(b.ew_kernels - a.ew_kernels, 1);
	ck_assert_double_eq_tol(b.fwd_s - a.fwd_s, 21.47483648e-6 + 5.145728e-6, 1e-15);
	ck_assert_double_eq_tol(b.bwd_s - a.bwd_s, 53.24112896e-6, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * Activations, TP 2: the gate (a d) and the gated output, now linear_proj's
 * input beside the attention's own output, 2 bytes an element each:
 * 2 x 2 x 1024 tokens x 1024 / 2 = 2,097,152 bytes more a layer. The gate
 * is applied after the core attention's checkpoint, so selective
 * recomputation keeps the same 2,097,152 more; full keeps only the input.
 */
START_TEST(test_gate_activations)
{
	struct model off, on;
	struct plan p;

	load_pair(&off, &on);
	gate_plan(&p, PLAN_RECOMPUTE_NONE);
	ck_assert_double_eq(memory_layer_activations(&on, &p, NULL) - memory_layer_activations(&off, &p, NULL),
			    2097152.0);
	gate_plan(&p, PLAN_RECOMPUTE_SELECTIVE);
	ck_assert_double_eq(memory_layer_activations(&on, &p, NULL) - memory_layer_activations(&off, &p, NULL),
			    2097152.0);
	gate_plan(&p, PLAN_RECOMPUTE_FULL);
	ck_assert_double_eq(memory_layer_activations(&on, &p, NULL), memory_layer_activations(&off, &p, NULL));
}
END_TEST

/*
 * Model FLOPs as Megatron's transformer_flops counts them (megatron/
 * training/training.py @d98e8a6: gate_projection_size = query_projection_size
 * in the QKV term, 3 x 2 FLOPs a weight, nothing for the sigmoid-multiply):
 * 2 x h x a d = 2,097,152 more a token a layer forward; 2 layers,
 * 4,194,304 a token; an iteration of 1 x 1024 tokens, x 3 for the
 * backward: 3 x 1024 x 4,194,304 = 12,884,901,888.
 */
START_TEST(test_gate_model_flops)
{
	struct model off, on;
	struct plan p;

	load_pair(&off, &on);
	gate_plan(&p, PLAN_RECOMPUTE_NONE);
	ck_assert_double_eq(flops_forward_per_token(&on, 1024) - flops_forward_per_token(&off, 1024), 4194304.0);
	ck_assert_double_eq(flops_model_per_iteration(&on, &p) - flops_model_per_iteration(&off, &p),
			    12884901888.0);
}
END_TEST

/*
 * A hybrid model's '*' layers (model_kind_model) keep the gate: "M*-*"
 * of the same shapes has two attention layers, 2 x 1,048,576 = 2,097,152
 * parameters and 2 x 2 x 1,048,576 = 4,194,304 forward FLOPs a token
 * more, and its attention kind model's QKV GEMM is the 53.6870912 us
 * above.
 */
START_TEST(test_gate_hybrid)
{
	struct cluster c;
	struct model off, on, km;
	struct plan p;
	struct compute_layer b;

	test_load_cluster(&c, TOY_CLUSTER_YAML_LAUNCH("2 us"));
	test_load_model(&off, GATE_MODEL("4", "false") "hybrid_pattern: M*-*\n");
	test_load_model(&on, GATE_MODEL("4", "true") "hybrid_pattern: M*-*\n");
	ck_assert_double_eq(model_params_total(&on) - model_params_total(&off), 2097152.0);
	ck_assert_double_eq(flops_forward_per_token(&on, 1024) - flops_forward_per_token(&off, 1024), 4194304.0);
	model_kind_model(&on, MODEL_KIND_ATTENTION, &km);
	ck_assert(km.attention_output_gate);
	gate_plan(&p, PLAN_RECOMPUTE_NONE);
	compute_layer_time(&km, &p, &c, NULL, false, &b);
	ck_assert_double_eq_tol(b.qkv_fwd_s, 53.6870912e-6, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * Two more places that keep QKV's output, TP 2, 1024 tokens: under
 * torchtitan's per-op selective checkpointing (framework
 * selective_recompute op) q's matmul is the first, saved, and Hugging
 * Face's gated attention takes the gate out of it, a d / t = 512 columns
 * wider: 2 bytes x 1024 x 512 = 1,048,576 bytes more a layer (the
 * sigmoid-multiply, element-wise, is recomputed). The zero-bubble W pass
 * keeps QKV's output gradient, as wide: the same 1,048,576.
 */
START_TEST(test_gate_saved_elsewhere)
{
	struct model off, on;
	struct plan p;
	struct framework fw;

	load_pair(&off, &on);
	test_load_framework(&fw, "name: f\nselective_recompute: op\n");
	gate_plan(&p, PLAN_RECOMPUTE_SELECTIVE);
	ck_assert_double_eq(memory_layer_activations(&on, &p, &fw) - memory_layer_activations(&off, &p, &fw),
			    1048576.0);
	gate_plan(&p, PLAN_RECOMPUTE_NONE);
	ck_assert_double_eq(pipeline_layer_wgrad_bytes(&on, &p) - pipeline_layer_wgrad_bytes(&off, &p), 1048576.0);
}
END_TEST

/* Megatron-Core has no gate for MLA (MLATransformerConfig: "Output gate is
 * not supported for MLA yet"): the profile is refused. */
START_TEST(test_gate_refused_with_mla)
{
	struct model m;
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert(!model_load_string(&m, "t.yaml",
				     "name: m\nlayers: 2\nhidden: 1024\nheads: 8\nvocab: 1000\nseq_len: 512\n"
				     "attention: mla\nattention_output_gate: true\n"
				     "mla:\n  kv_lora_rank: 512\n  qk_nope_head_dim: 128\n  qk_rope_head_dim: 64\n"
				     "  v_head_dim: 128\n",
				     &err));
	ck_assert_ptr_nonnull(strstr(err.message, "attention_output_gate needs attention: mha"));
}
END_TEST

/*
 * review17: ZeRO-3's persistent small tensors (dp_zero3_persist_copies)
 * take the QKV bias at its gated length. With bias true, over 4096
 * ranks every tensor here is split into one-element chunks, as many as
 * its elements (persist_chunks(n, r) = n for n <= r): the QKV bias
 * a d + 2 kv d + a d = 1024 + 512 + 1024 = 2,560 (1,536 without the
 * gate), the projection's and fc2's biases h = 1,024 each, fc1's f =
 * 2,048 and the two RMSNorm scales 1,024 each: 8,704 (7,680 without).
 */
START_TEST(test_gate_zero3_persist)
{
	struct model off, on;

	const char *yaml = "name: g\nlayers: 2\nhidden: 1024\nheads: 8\nkv_heads: 2\nffn_hidden: 2048\n"
			   "vocab: 32768\nseq_len: 1024\nbias: true\nnorm: rmsnorm\nattention_output_gate: ";
	char buf[512];

	snprintf(buf, sizeof(buf), "%sfalse\n", yaml);
	test_load_model(&off, buf);
	snprintf(buf, sizeof(buf), "%strue\n", yaml);
	test_load_model(&on, buf);
	ck_assert_double_eq(dp_zero3_persist_copies(&off, 4096.0), 7680.0);
	ck_assert_double_eq(dp_zero3_persist_copies(&on, 4096.0), 8704.0);
}
END_TEST

static Suite *
gated_attention_suite(void)
{
	Suite *s = suite_create("gated-attention");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_gate_params);
	tcase_add_test(tc, test_gate_compute);
	tcase_add_test(tc, test_gate_activations);
	tcase_add_test(tc, test_gate_model_flops);
	tcase_add_test(tc, test_gate_hybrid);
	tcase_add_test(tc, test_gate_saved_elsewhere);
	tcase_add_test(tc, test_gate_refused_with_mla);
	tcase_add_test(tc, test_gate_zero3_persist);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(gated_attention_suite)
