/*
 * Latent MoE (model key moe.latent_size; Megatron-Core's
 * TransformerConfig.moe_latent_size, megatron/core/transformer/moe/
 * moe_layer.py @d98e8a6): fc1_latent_proj (h -> l) before the dispatch,
 * fc2_latent_proj (l -> h) after the combine, both TELinear with
 * parallel_mode "duplicated"; the routed experts' fc1 input and fc2
 * output are l wide (mlp.py, experts.py), the dispatcher moves l-wide
 * tokens (token_dispatcher.py), the router and the shared experts see h.
 * Every expected value is worked by hand below.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/estimate.h"
#include "plan/flops.h"
#include "plan/memory.h"
#include "plan/model.h"
#include "testutil.h"

/*
 * L 2 MoE layers, h 1024, a 8 of d 128 (MHA), plain MLP, no biases,
 * RMSNorm, rotary, V 32768; 8 experts of 512, top-2.
 */
#define LMOE_MODEL(latent) \
	"name: l\nlayers: 2\nhidden: 1024\nheads: 8\nffn_hidden: 2048\n" \
	"vocab: 32768\nseq_len: 1024\nbias: false\ndropout: false\nnorm: rmsnorm\n" \
	"position_embedding: rotary\nmoe:\n  experts: 8\n  top_k: 2\n  expert_ffn_hidden: 512\n" \
	"  latent_size: " latent "\n"

static void
load_pair(struct model *off, struct model *on)
{
	test_load_model(off, LMOE_MODEL("0"));
	test_load_model(on, LMOE_MODEL("256"));
	ck_assert_int_eq(off->moe.latent_size, 0);
	ck_assert_int_eq(on->moe.latent_size, 256);
}

/*
 * One MoE layer. Attention 1024 x 3072 + 1024 x 1024 = 4,194,304; two
 * norms 2,048; router 1024 x 8 = 8,192. Without latent: an expert
 * 2 x 1024 x 512 = 1,048,576, eight 8,388,608: 12,593,152. With l 256:
 * an expert 2 x 256 x 512 = 262,144, eight 2,097,152, the projections
 * 2 x 1024 x 256 = 524,288: 4,194,304 + 2,048 + 8,192 + 524,288 +
 * 2,097,152 = 6,825,984. The dense (non-expert) part: 4,204,544 and
 * 4,728,832.
 */
START_TEST(test_latent_params)
{
	struct model off, on;

	load_pair(&off, &on);
	ck_assert_double_eq(model_moe_width(&off), 1024.0);
	ck_assert_double_eq(model_moe_width(&on), 256.0);
	ck_assert_double_eq(model_params_expert(&off), 1048576.0);
	ck_assert_double_eq(model_params_expert(&on), 262144.0);
	ck_assert_double_eq(model_params_shared_expert(&on), 1048576.0);
	ck_assert_double_eq(model_params_moe_latent_proj(&on), 524288.0);
	ck_assert_double_eq(model_params_moe_latent_proj(&off), 0.0);
	ck_assert_double_eq(model_params_moe_layer(&off), 12593152.0);
	ck_assert_double_eq(model_params_moe_layer(&on), 6825984.0);
	ck_assert_double_eq(model_params_layer_dense_part(&on, true), 4728832.0);
	/* total: 2 layers + embedding 33,554,432 + final norm 1,024 (tied) */
	ck_assert_double_eq(model_params_total(&on) - model_params_total(&off), 2.0 * (6825984.0 - 12593152.0));
}
END_TEST

/*
 * Model FLOPs a token, forward, one MoE layer: Megatron-Bridge's
 * moe_layer_flops (flop_utils.py @067f987) 4 l f k + 4 h l = 4 x 256 x
 * 512 x 2 + 4 x 1024 x 256 = 2,097,152 against 4 h f k = 4,194,304
 * without: 2,097,152 less a layer, 4,194,304 less for the two.
 */
START_TEST(test_latent_flops)
{
	struct model off, on;

	load_pair(&off, &on);
	ck_assert_double_eq(flops_layer_forward_per_token(&off, 1024, true) -
				    flops_layer_forward_per_token(&on, 1024, true), 2097152.0);
	ck_assert_double_eq(flops_forward_per_token(&off, 1024) - flops_forward_per_token(&on, 1024), 4194304.0);
}
END_TEST

static void
lmoe_plan(struct plan *p)
{
	plan_init(p);
	p->tp = p->pp = 1;
	p->dp = p->ep = 8;
	p->micro_batch = 1;
	p->global_batch = 8;
	p->seq_len = 1024;
}

/*
 * Activations, TP 1, built-in framework (two routed copies, in and out):
 * the copies 2 x 2 x s b cf k w = 4 x 1024 x 2 x w bytes shrink by
 * 8,192 x (1024 - 256) = 6,291,456; fc2_latent_proj's input adds
 * 2 s b l = 2 x 1024 x 256 = 524,288: 5,767,168 less in all. The
 * experts' intermediates (f wide) do not change.
 */
START_TEST(test_latent_activations)
{
	struct model off, on;
	struct plan p;

	load_pair(&off, &on);
	lmoe_plan(&p);
	ck_assert_double_eq_tol(memory_layer_activations(&off, &p, NULL) - memory_layer_activations(&on, &p, NULL),
				5767168.0, 1e-6);
}
END_TEST

/*
 * The all-to-all: each rank sends cf k s b w 16-bit values, 1 x 2 x 1024
 * x w x 2 = 4,096 w bytes: 4,194,304 on h, 1,048,576 on l (a quarter).
 * Predict level: the latent model is faster (fewer FLOPs, fewer bytes)
 * and its weights smaller. Memory by the expert/dense split: a rank
 * keeps one of the 8 experts a layer, 262,144 x 2 layers = 524,288
 * expert parameters (1,048,576 x 2 = 2,097,152 without).
 */
START_TEST(test_latent_predict)
{
	struct model off, on;
	struct cluster c;
	struct plan p;
	struct estimate a, b;
	struct plan_error err;
	double ea = 0.0, eb = 0.0;

	load_pair(&off, &on);
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	lmoe_plan(&p);
	ck_assert_msg(estimate_plan(&off, &c, &p, NULL, &a, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&on, &c, &p, NULL, &b, &err), "%s", err.message);
	ck_assert_double_eq_tol(a.details.ep_bytes, 4194304.0, 1e-3);
	ck_assert_double_eq_tol(b.details.ep_bytes, 1048576.0, 1e-3);
	ck_assert(b.iteration_time_s < a.iteration_time_s);
	estimate_stage_params(&off, &p, 0, &ea);
	estimate_stage_params(&on, &p, 0, &eb);
	ck_assert_double_eq_tol(ea, 2097152.0, 1e-6);
	ck_assert_double_eq_tol(eb, 524288.0, 1e-6);
}
END_TEST

/*
 * TP 2: the latent projections are "duplicated", whole on each rank,
 * while the rest of the dense part splits tp ways. The latent model's
 * dense parameters a rank, less the plain model's, are the two layers'
 * projections, 2 x 524,288 = 1,048,576, at tp 1 and still at tp 2 (the
 * attention, norms, router and embedding are the same in both models;
 * the experts go to *expert and are subtracted).
 */
START_TEST(test_latent_tp_duplicated)
{
	struct model off, on;
	struct plan p1, p2;
	double e = 0.0;

	load_pair(&off, &on);
	lmoe_plan(&p1);
	lmoe_plan(&p2);
	p2.tp = 2;
	p2.dp = 4;
	p2.ep = 4;
	p2.sequence_parallel = true;
	double d1 = estimate_stage_params(&on, &p1, 0, &e) - e;
	double o1 = estimate_stage_params(&off, &p1, 0, &e) - e;
	double d2 = estimate_stage_params(&on, &p2, 0, &e) - e;
	double o2 = estimate_stage_params(&off, &p2, 0, &e) - e;

	ck_assert_double_eq_tol(d1 - o1, 1048576.0, 1e-6);
	ck_assert_double_eq_tol(d2 - o2, 1048576.0, 1e-6);
}
END_TEST

/*
 * normrev: under SP the duplicated latent projections' gradients are
 * partial sums that finalize_model_grads all-reduces over TP
 * (_allreduce_non_tensor_model_parallel_grads; TELinear "duplicated" sets
 * sequence_parallel on them; Megatron-LM d98e8a6). Toy cluster, tp 2 in a
 * node, 2 MoE layers on the one stage: 2 x 524,288 = 1,048,576 gradient
 * elements, at reduce_bytes 2 (built-in) 2,097,152 B, at 4 4,194,304 B.
 * A ring all-reduce over 2 ranks sends 2 (t - 1) / t = 1 x the buffer:
 * 2,097,152 B more TP bytes at 4 than at 2; the time, 1 x 2,097,152 B
 * more at 100 GB/s = 20.97152 us more (the latency terms of
 * collective_time are the same for both, as asserted by the library's
 * own figure). reduce_bytes changes nothing else on TP. Without SP,
 * every rank saw every token: no all-reduce, no difference.
 */
START_TEST(test_latent_sp_grad_allreduce)
{
	struct model off, on;
	struct cluster c;
	struct plan p;
	struct framework f2, f4;
	struct estimate_options o2 = { 0 }, o4 = { 0 };
	struct estimate a, b, o;
	struct plan_error err;

	load_pair(&off, &on);
	test_load_cluster(&c, TOY_CLUSTER_YAML);
	lmoe_plan(&p);
	p.tp = 2;
	p.dp = p.ep = 4;
	p.sequence_parallel = true;
	framework_init_default(&f2);
	f2.reduce_bytes = 2.0;
	f4 = f2;
	f4.reduce_bytes = 4.0;
	o2.framework = &f2;
	o4.framework = &f4;
	ck_assert_msg(estimate_plan(&on, &c, &p, &o2, &a, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&on, &c, &p, &o4, &b, &err), "%s", err.message);
	ck_assert_double_eq_tol(b.bytes.tp - a.bytes.tp, 2097152.0, 1e-3);
	ck_assert_double_eq_tol(b.breakdown.tp_comm - a.breakdown.tp_comm, 20.97152e-6, 1e-10);
	/* The plain model has no duplicated projections. */
	ck_assert_msg(estimate_plan(&off, &c, &p, &o2, &a, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&off, &c, &p, &o4, &o, &err), "%s", err.message);
	ck_assert_double_eq_tol(o.breakdown.tp_comm - a.breakdown.tp_comm, 0.0, 1e-15);
	/* Without SP no all-reduce either. */
	p.sequence_parallel = false;
	ck_assert_msg(estimate_plan(&on, &c, &p, &o2, &a, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&on, &c, &p, &o4, &b, &err), "%s", err.message);
	ck_assert_double_eq_tol(b.bytes.tp - a.bytes.tp, 0.0, 1e-9);
	ck_assert_double_eq_tol(b.breakdown.tp_comm - a.breakdown.tp_comm, 0.0, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * A hybrid model ("*E*E", as Nemotron-3's MoE layers): h 1024, MHA of 8,
 * 8 experts of 512 (two matrices), top 2, one shared expert, no biases.
 * An E layer: norm 1,024, router 8,192, shared 2 x 1024 x 512 =
 * 1,048,576, routed 8 x 2 x w x 512: w 1024 8,388,608 (9,446,400 in all),
 * w 256 2,097,152 plus the projections 524,288 (3,679,232 in all): the
 * two E layers 2 x 5,767,168 = 11,534,336 fewer. At tp 2, ep 8 (one
 * expert a rank a layer, split etp = tp = 2 ways, plan_etp's default):
 * routed 2 x 262,144 / 2 = 262,144 (1,048,576 on h), and the dense part a rank differs by the two layers' whole
 * projections, 1,048,576 (the shared expert splits alike in both).
 */
#define LMOE_HYBRID(latent) \
	"name: lh\nlayers: 4\nhybrid_pattern: \"*E*E\"\nhidden: 1024\nheads: 8\nffn_hidden: 4096\n" \
	"vocab: 32768\nseq_len: 1024\ntied_embeddings: false\ndropout: false\nbias: false\n" \
	"norm: rmsnorm\nposition_embedding: none\nmoe:\n  experts: 8\n  top_k: 2\n" \
	"  expert_ffn_hidden: 512\n  shared_experts: 1\n  latent_size: " latent "\n"

START_TEST(test_latent_hybrid)
{
	struct model off, on;
	struct plan p;
	double eoff = 0.0, eon = 0.0, doff, don;

	test_load_model(&off, LMOE_HYBRID("0"));
	test_load_model(&on, LMOE_HYBRID("256"));
	ck_assert_double_eq(model_params_total(&off) - model_params_total(&on), 11534336.0);
	lmoe_plan(&p);
	p.tp = 2;
	p.dp = 4;
	p.sequence_parallel = true;
	doff = estimate_stage_params(&off, &p, 0, &eoff) - eoff;
	don = estimate_stage_params(&on, &p, 0, &eon) - eon;
	ck_assert_double_eq_tol(eoff, 1048576.0, 1e-6);
	ck_assert_double_eq_tol(eon, 262144.0, 1e-6);
	ck_assert_double_eq_tol(don - doff, 1048576.0, 1e-6);
}
END_TEST

START_TEST(test_latent_refused)
{
	struct model m;
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert(!model_load_string(&m, "t.yaml", LMOE_MODEL("-1"), &err));
	ck_assert_ptr_nonnull(strstr(err.message, "latent_size"));
}
END_TEST

static Suite *
latent_moe_suite(void)
{
	Suite *s = suite_create("latent-moe");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_latent_params);
	tcase_add_test(tc, test_latent_flops);
	tcase_add_test(tc, test_latent_activations);
	tcase_add_test(tc, test_latent_predict);
	tcase_add_test(tc, test_latent_tp_duplicated);
	tcase_add_test(tc, test_latent_sp_grad_allreduce);
	tcase_add_test(tc, test_latent_hybrid);
	tcase_add_test(tc, test_latent_refused);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(latent_moe_suite)
