/*
 * The Mamba-2 mixer of a hybrid model (plan/mamba.h) and the per-layer
 * costs of a layer of one part (model parts). Nemotron-H 8B's mixer
 * (arXiv:2504.03624; Megatron-LM's hybrid defaults): hidden 4096, 128
 * Mamba heads of 64, 8 groups, state 128, conv 4, chunk 128, one sequence
 * of 8192 tokens a micro-batch, on the bundled dgx-h100 (H100 SXM5: 989
 * TFLOP/s, attention efficiency 0.57 forward and 0.54 backward,
 * FlashAttention-2 at 0.52 of it, 3 us a launch). Every expected value
 * is worked out by hand in the comment above its test.
 */
#include <math.h>

#include "plan/compute.h"
#include "plan/context_par.h"
#include "plan/flops.h"
#include "plan/mamba.h"
#include "plan/memory.h"
#include "plan/tensor_par.h"
#include "fixtures.h"
#include "testutil.h"

/* A cut-down Nemotron-H 8B: its shapes, six layers (the pattern's length
 * matters to no per-layer figure). */
#define NEMOTRON_H_8B_YAML \
	"name: nh\nlayers: 6\nhidden: 4096\nheads: 32\nkv_heads: 8\nffn_hidden: 21504\n" \
	"norm: rmsnorm\nposition_embedding: rotary\nvocab: 131072\nseq_len: 8192\ndropout: false\n" \
	"hybrid_pattern: 'M-M*-M'\n" \
	"mamba:\n  state_dim: 128\n  head_dim: 64\n  heads: 128\n  groups: 8\n  conv_kernel: 4\n  chunk_size: 128\n"

static void
setup(struct model *mamba, struct plan *p, int tp)
{
	struct model m;

	test_load_model(&m, NEMOTRON_H_8B_YAML);
	model_kind_model(&m, MODEL_KIND_MAMBA, mamba);
	plan_init(p);
	p->tp = tp;
	p->pp = p->dp = 1;
	p->micro_batch = 1;
	p->global_batch = 1;
	p->seq_len = 8192;
	p->flash_attention = true;
}

/* setup() on the bundled dgx-h100. */
static void
setup_h100(struct cluster *c, struct model *mamba, struct plan *p, int tp)
{
	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", c);
	setup(mamba, p, tp);
}

/*
 * FLOPs, T = 8192 tokens. in_proj 4096 -> 2 x 8192 + 2 x 8 x 128 + 128 =
 * 18560: 2 T 18560 4096 = 1,245,540,515,840; out_proj 8192 -> 4096:
 * 2 T 8192 4096 = 549,755,813,888. SSD a token (Q 128, N 128, P 64, H
 * 128, g 8): C B^T 2 Q N g = 262,144; intra-chunk Q P H = 1,048,576;
 * chunk states and output from states 2 N P H each = 2,097,152 x 2; state
 * passing 2 N P H / Q = 16,384: 5,521,408, x T = 45,231,374,336. Backward
 * 3 x 262,144 + 5 x 2,097,152 + 3 x 1,048,576 + 2 x 16,384 = 14,450,688,
 * x T = 118,380,036,096. At tp 4 (32 heads, 2 groups) every figure is a
 * quarter: in_proj 4640 wide, 311,385,128,960; out_proj 137,438,953,472;
 * SSD 11,307,843,584 and 29,595,009,024.
 * Megatron's mamba_layer_flops(T): in_proj and out_proj as above
 * (d_in = 2 h = 8192 = 128 x 64) and its scan 7 T d_in N =
 * 60,129,542,144: 1,855,425,871,872, which exceeds in_proj + out_proj +
 * our SSD forward by 60,129,542,144 - 45,231,374,336 = 14,898,167,808.
 */
START_TEST(test_mixer_flops)
{
	struct model m;
	struct plan p;
	struct cluster c;
	struct mixer_cost mx;

	setup_h100(&c, &m, &p, 1);
	mamba_mixer_cost(&m, &p, &c, NULL, &mx);
	ck_assert_double_eq(mx.in_proj_flops, 1245540515840.0);
	ck_assert_double_eq(mx.out_proj_flops, 549755813888.0);
	ck_assert_double_eq(mx.scan_fwd_flops, 45231374336.0);
	ck_assert_double_eq(mx.scan_bwd_flops, 118380036096.0);
	ck_assert_double_eq(mamba_layer_model_flops(&m, 8192), 1855425871872.0);
	ck_assert_double_eq(mamba_layer_model_flops(&m, 8192) - (mx.in_proj_flops + mx.out_proj_flops + mx.scan_fwd_flops),
			    14898167808.0);
	/* flops_layer_forward_per_token: Megatron's a token, / 8192. */
	ck_assert_double_eq_tol(flops_layer_forward_per_token(&m, 8192, false), 1855425871872.0 / 8192, 1e-6);

	setup(&m, &p, 4);
	mamba_mixer_cost(&m, &p, &c, NULL, &mx);
	ck_assert_double_eq(mx.in_proj_flops, 311385128960.0);
	ck_assert_double_eq(mx.out_proj_flops, 137438953472.0);
	ck_assert_double_eq(mx.scan_fwd_flops, 11307843584.0);
	ck_assert_double_eq(mx.scan_bwd_flops, 29595009024.0);
	cluster_release(&c);
}
END_TEST

/*
 * SSD time on the H100: efficiency forward 0.57 x 0.52 / 8 = 0.03705 of
 * 989 TFLOP/s = 36.642 TFLOP/s; 45,231,374,336 / 36.642e12 = 1.23440 ms,
 * plus 5 launches of 3 us: 1.24940 ms. Backward 0.54 x 0.52 / 8 =
 * 0.0351: 34.714 TFLOP/s; 118,380,036,096 / 34.714e12 = 3.41016 ms,
 * plus 23 launches: 3.47916 ms. Both above their traffic (forward 2 T
 * (10240 + 128 + 3 x 8192) = 572.5 MB and the fp32 states, 16 x 64
 * chunks x 128 x 64 x 128 = 1073.7 MB: 0.55 ms at 0.9 x 3.35 TB/s).
 */
START_TEST(test_ssd_time)
{
	struct model m;
	struct plan p;
	struct cluster c;
	struct mixer_cost mx;

	setup_h100(&c, &m, &p, 1);
	ck_assert_double_eq_tol(mamba_ssd_efficiency(&c, false), 0.03705, 1e-12);
	ck_assert_double_eq_tol(mamba_ssd_efficiency(&c, true), 0.0351, 1e-12);
	mamba_mixer_cost(&m, &p, &c, NULL, &mx);
	ck_assert_double_eq_tol(mx.scan_fwd_s, 1.24940e-3, 1e-8);
	ck_assert_double_eq_tol(mx.scan_bwd_s, 3.47916e-3, 1e-8);
	/* The mixer's forward: its parts. */
	ck_assert_double_eq_tol(mx.fwd_s, mx.gemm_fwd_s + mx.scan_fwd_s + mx.mem_fwd_s, 1e-15);
	ck_assert_double_eq_tol(mx.bwd_s, 2.0 * mx.gemm_fwd_s + mx.scan_bwd_s + mx.mem_bwd_s, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * Activations kept, T = 8192, 2-byte elements: zxBCdt 2 x 18560, the
 * scan's out_x, the norm's input and out_proj's input 3 x 2 x 8192, rstd
 * 4 x 8 groups: T x 86,304 = 707,002,368 bytes; tp 4 a quarter (T x
 * (2 x 4640 + 6 x 2048 + 4 x 2) = T x 21,576 = 176,750,592). The layer
 * adds its norm's input and in_proj's input, 4 T h = 134,217,728 (no
 * dropout: Nemotron-H trains without; no SP; with SP at tp 4 a quarter, 33,554,432):
 * 841,220,096 at tp 1, 210,305,024 at tp 4 with SP.
 */
START_TEST(test_mixer_activations)
{
	struct model m;
	struct plan p;

	setup(&m, &p, 1);
	ck_assert_double_eq(mamba_mixer_activation_bytes(&m, &p), 707002368.0);
	ck_assert_double_eq(memory_layer_activations(&m, &p, NULL), 841220096.0);
	setup(&m, &p, 4);
	ck_assert_double_eq(mamba_mixer_activation_bytes(&m, &p), 176750592.0);
	p.sequence_parallel = true;
	ck_assert_double_eq(memory_layer_activations(&m, &p, NULL), 210305024.0);
}
END_TEST

/* The layer of one part against its model with parts 0: a Mamba layer's
 * forward holds its mixer, one norm and one residual add (4 + 7 bytes an
 * element of T h, two launches) and nothing of attention or MLP. */
START_TEST(test_mamba_layer)
{
	struct model m;
	struct plan p;
	struct cluster c;
	struct compute_layer cl;
	struct mixer_cost mx;
	double ew;

	setup_h100(&c, &m, &p, 1);
	compute_layer_time(&m, &p, &c, NULL, false, &cl);
	mamba_mixer_cost(&m, &p, &c, NULL, &mx);
	ew = compute_memory_time(&c, 11.0 * 8192 * 4096) + 2 * c.gpu.launch_overhead_s;
	ck_assert_double_eq_tol(cl.fwd_s, mx.fwd_s + ew, 1e-12);
	ck_assert_double_eq_tol(cl.bwd_s, mx.bwd_s + 2.0 * ew, 1e-12);
	ck_assert_double_eq(cl.mlp_fwd_s, 0.0);
	ck_assert_double_eq(cl.attn_fwd_s, 0.0);
	ck_assert_double_eq(cl.qkv_fwd_s, 0.0);
	ck_assert_double_eq_tol(cl.mixer_fwd_s, mx.fwd_s, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * A transformer layer (parts 0: two norms, two residual adds, attention
 * and MLP) costs what an attention layer and an MLP layer of one part
 * each cost together: the same two norms, two adds and linears, one TP
 * collective a pass each against two, the same activations and FLOPs.
 * Tolerance 1e-9 relative: the sums are taken in another order.
 */
START_TEST(test_parts_sum)
{
	struct model full, attn, mlp;
	struct plan p;
	struct cluster c;
	struct compute_layer lf, la, lm;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	test_load_model(&full, FIXTURE_TOY_LLAMA_YAML);
	attn = mlp = full;
	attn.parts = MODEL_PART_ATTENTION;
	mlp.parts = MODEL_PART_MLP;
	fixture_one_gpu_plan(&p);
	p.tp = 2;
	p.sequence_parallel = true;
	compute_layer_time(&full, &p, &c, NULL, false, &lf);
	compute_layer_time(&attn, &p, &c, NULL, false, &la);
	compute_layer_time(&mlp, &p, &c, NULL, false, &lm);
	ck_assert_double_eq_tol(la.fwd_s + lm.fwd_s, lf.fwd_s, 1e-9 * lf.fwd_s);
	ck_assert_double_eq_tol(la.bwd_s + lm.bwd_s, lf.bwd_s, 1e-9 * lf.bwd_s);
	ck_assert_double_eq(lf.mixer_fwd_s, 0.0); /* parts 0: no mixer */
	ck_assert_double_eq_tol(memory_layer_activations(&attn, &p, NULL) + memory_layer_activations(&mlp, &p, NULL),
				memory_layer_activations(&full, &p, NULL), 1e-9 * memory_layer_activations(&full, &p, NULL));
	ck_assert_double_eq_tol(flops_layer_forward_per_token(&attn, 1024, false) +
				flops_layer_forward_per_token(&mlp, 1024, false),
				flops_layer_forward_per_token(&full, 1024, false), 1e-6);
	cluster_release(&c);
}
END_TEST

/* One collective pair a pass for a layer of one part, two for a
 * transformer layer; the MLP's share only where the layer has an MLP. */
START_TEST(test_tp_per_pass)
{
	struct model full, mamba;
	struct plan p;
	struct cluster c;
	struct compute_layer cl;
	struct plan_layout lay;
	struct tp_layer_comm tf, tm;

	setup_h100(&c, &mamba, &p, 4);
	full = mamba;
	full.parts = 0;
	p.dp = 2;
	topology_plan(&p, &c, &lay);
	compute_layer_time(&full, &p, &c, NULL, false, &cl);
	tp_layer_comm(&full, &p, &c, NULL, &lay, &cl, &tf);
	compute_layer_time(&mamba, &p, &c, NULL, false, &cl);
	tp_layer_comm(&mamba, &p, &c, NULL, &lay, &cl, &tm);
	ck_assert_int_eq(tf.per_pass, 2);
	ck_assert_int_eq(tm.per_pass, 1);
	ck_assert_double_eq_tol(2.0 * tm.fwd_s, tf.fwd_s, 1e-15);
	ck_assert_double_eq(tm.mlp_fwd_s, 0.0);
	cluster_release(&c);
}
END_TEST

/* A Mamba layer's CP is refused, and a TP that splits its heads or groups
 * unevenly (8 groups over tp 3). */
START_TEST(test_plan_check)
{
	struct model m;
	struct plan p;
	struct plan_error err;

	test_load_model(&m, NEMOTRON_H_8B_YAML);
	plan_init(&p);
	p.tp = 2;
	plan_error_clear(&err);
	ck_assert(mamba_plan_check(&m, &p, &err));
	p.cp = 2;
	ck_assert(!mamba_plan_check(&m, &p, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "MambaContextParallel"));
	p.cp = 1;
	p.tp = 3;
	ck_assert(!mamba_plan_check(&m, &p, &err));
}
END_TEST

static Suite *
mamba_suite(void)
{
	Suite *s = suite_create("mamba");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_mixer_flops);
	tcase_add_test(tc, test_ssd_time);
	tcase_add_test(tc, test_mixer_activations);
	tcase_add_test(tc, test_mamba_layer);
	tcase_add_test(tc, test_parts_sum);
	tcase_add_test(tc, test_tp_per_pass);
	tcase_add_test(tc, test_plan_check);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(mamba_suite)
