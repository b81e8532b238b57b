#include <math.h>

#include "plan/estimate.h"
#include "plan/memory.h"
#include "plan/pipeline.h"
#include "testutil.h"

static void
gpt3_plan(struct plan *p)
{
	plan_init(p);
	p->tp = 8;
	p->pp = 12;
	p->dp = 16;
	p->micro_batch = 1;
	p->global_batch = 1536;
	p->seq_len = 2048;
	p->recompute = PLAN_RECOMPUTE_FULL;
}

START_TEST(test_bubble)
{
	struct plan p;

	gpt3_plan(&p);
	/* m = 1536 / (16 x 1) = 96; (p - 1)/(v m) = 11/96 (SC21 Eq. 1). */
	ck_assert_int_eq(plan_microbatches(&p), 96);
	ck_assert_rel(pipeline_bubble_fraction(&p), 11.0 / 96.0, 1e-15);
	p.vpp = 2; /* Eq. 2: divided by v */
	ck_assert_rel(pipeline_bubble_fraction(&p), 11.0 / 192.0, 1e-15);
}
END_TEST

START_TEST(test_stored_microbatches)
{
	struct model m;
	struct plan p;

	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	/* 96/12 = 8 layers x min(12, 96) micro-batches = 96 = L (Korthikanti 4.2.3). */
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 96.0, 1e-15);
	p.vpp = 2; /* x (1 + 11/24) */
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 96.0 * (1.0 + 11.0 / 24.0), 1e-15);
	/* Megatron's interleaved warm-up: stage i holds (v-1)p + 2(p-i-1) + 1
	 * chunks of L/(p v) = 4 layers. Stage 0: 12 + 22 + 1 = 35 chunks, 140
	 * (Korthikanti's figure above); the last stage: 12 + 0 + 1 = 13, 52. */
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 11), 52.0, 1e-15);
	/* At most m v chunks: with m = 4, 8 chunks of 4 layers. */
	p.global_batch = 64;
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 32.0, 1e-15);
	p.global_batch = 1536;
	p.vpp = 1;
	p.global_batch = 64; /* m = 4 < p: only 4 in flight */
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 32.0, 1e-15);
}
END_TEST

START_TEST(test_layer_activations)
{
	struct model m;
	struct plan p;
	double sbh = 2048.0 * 1 * 12288;

	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	p.recompute = PLAN_RECOMPUTE_NONE;
	/* Korthikanti Table 2, TP without SP: sbh (10 + 24/t + 5 a s/(h t))
	 * = 25,165,824 x (10 + 3 + 10) = 578,813,952 bytes. */
	ck_assert_rel(memory_layer_activations(&m, &p), sbh * 23.0, 1e-12);
	/* TP + SP: sbh/t (34 + 5 a s / h) = sbh/8 x 114. */
	p.sequence_parallel = true;
	ck_assert_rel(memory_layer_activations(&m, &p), sbh / 8 * 114.0, 1e-12);
	/* TP + SP + selective: 34 sbh / t = 106,954,752 bytes. */
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	ck_assert_rel(memory_layer_activations(&m, &p), 34.0 * sbh / 8, 1e-12);
	/* Full recompute keeps the layer input: 2 sbh (without SP). */
	p.sequence_parallel = false;
	p.recompute = PLAN_RECOMPUTE_FULL;
	ck_assert_rel(memory_layer_activations(&m, &p), 2.0 * sbh, 1e-12);
}
END_TEST

START_TEST(test_zero_memory)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct memory_use u;
	const double psi = 7.5e9;
	/* ZeRO paper Fig. 1: Psi = 7.5 B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB. */
	const double expect[4] = { 16 * psi, 4 * psi + 12 * psi / 64, 2 * psi + 14 * psi / 64, 16 * psi / 64 };

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	plan_init(&p);
	p.tp = p.pp = 1;
	p.dp = 64;
	p.global_batch = 64;
	p.seq_len = 2048;
	for (int z = 0; z <= 3; z++) {
		p.zero = z;
		memory_stage(&m, &p, &c, 0, psi, 0.0, &u);
		ck_assert_rel(u.weights + u.gradients + u.optimizer, expect[z], 1e-12);
	}
	ck_assert_rel(expect[1], 31.40625e9, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_estimate_invariants)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e, e2;
	struct plan_error err;
	const struct estimate_breakdown *b = &e.breakdown;

	test_load_cluster(&c, TEST_CLUSTER_YAML
		"");
	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	p.dp = 2; /* 192 GPUs of the 512 */
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	/* The breakdown adds up to the iteration time. */
	ck_assert_rel(b->compute + b->recompute + b->tp_comm + b->pp_comm + b->pp_bubble +
		      b->dp_comm + b->optimizer, e.iteration_time_s, 1e-12);
	ck_assert_rel(b->pp_bubble, 11.0 * e.details.slot_s, 1e-12);
	ck_assert(e.fits);
	ck_assert_int_eq(e.gpus, 192);
	ck_assert_rel(e.mfu, e.tflops_per_gpu * 1e12 / 312e12, 1e-12);
	ck_assert_rel(e.tokens_per_s, 1536.0 * 2048 / e.iteration_time_s, 1e-12);
	/* Weak sanity: doubling DP roughly halves the time. */
	p.dp = 4;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e2, &err));
	ck_assert(e2.iteration_time_s < 0.55 * e.iteration_time_s);
	/* Interleaving shrinks the bubble and adds stage traffic. */
	p.vpp = 2;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert(e.breakdown.pp_bubble < e2.breakdown.pp_bubble);
	ck_assert(e.breakdown.pp_comm > e2.breakdown.pp_comm);
	/* GPT-3 without model parallelism does not fit in 80 GiB. */
	gpt3_plan(&p);
	p.tp = p.pp = 1;
	p.dp = 512;
	p.global_batch = 512;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert(!e.fits);
	/* ZeRO-3 over 512 GPUs makes the model states fit... */
	p.zero = 3;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e2, &err));
	ck_assert(e2.memory.weights + e2.memory.gradients + e2.memory.optimizer <
		  0.01 * (e.memory.weights + e.memory.gradients + e.memory.optimizer));
	ck_assert(e2.breakdown.dp_comm > e.breakdown.dp_comm);
	cluster_release(&c);
}
END_TEST

START_TEST(test_invalid_plans)
{
	static const struct { int tp, pp, dp, gb; const char *msg; } cases[] = {
		{ 5, 1, 1, 8, "attention heads (96) are not divisible by tp (5)" },
		{ 8, 7, 1, 8, "layers (96) are not divisible by pp x vpp (7 x 1)" },
		{ 8, 1, 3, 8, "global batch (8) is not divisible by dp x micro-batch (3 x 1)" },
		{ 8, 8, 16, 128, "the plan needs 1024 GPUs" },
	};
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpt3_plan(&p);
		p.tp = cases[i].tp;
		p.pp = cases[i].pp;
		p.dp = cases[i].dp;
		p.global_batch = cases[i].gb;
		plan_error_clear(&err);
		ck_assert(!estimate_plan(&m, &c, &p, NULL, &e, &err));
		ck_assert_int_eq(err.kind, PLAN_ERR_PLAN);
		ck_assert_msg(strstr(err.message, cases[i].msg), "got '%s'", err.message);
	}
	cluster_release(&c);
}
END_TEST

START_TEST(test_tail_stage)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	p.dp = 4;
	p.global_batch = 96;
	/* An uneven pipeline: 11 stages of one layer and a last of 85. */
	p.custom_layers = true;
	for (int s = 0; s < 11; s++)
		p.stage_layers[s] = 1;
	p.stage_layers[11] = 85;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	/* The last stage's gradients end the iteration: 85 x 1,812,099,072
	 * layer parameters + final LayerNorm 24,576 + the tied embedding copy
	 * 629,145,600 = 154,657,591,296, / t 8 = 19,332,198,912; 16-bit
	 * gradients all-reduced over d 4 send 2 (3/4) x 2 x that = 57,996,596,736 B. */
	ck_assert_int_eq(e.details.tail_stage, 11);
	ck_assert_rel(e.details.dp_bytes_per_iteration, 57996596736.0, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_tp_bytes)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	plan_init(&p);
	p.tp = 8;
	p.pp = p.dp = 1;
	p.global_batch = 1;
	p.seq_len = 2048;
	/* Each of the 96 layers all-reduces b s h 16-bit values twice forward
	 * and twice backward; the embedding once forward, the output layer
	 * once backward: 386 all-reduces of 50,331,648 bytes, each sending
	 * 2 (7/8) of them: 386 x 88,080,384 = 33,999,028,224 bytes. */
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_rel(e.bytes.tp, 33999028224.0, 1e-12);
	cluster_release(&c);
}
END_TEST

static Suite *
cost_suite(void)
{
	Suite *s = suite_create("cost");
	TCase *tc = tcase_create("cost");

	tcase_add_test(tc, test_bubble);
	tcase_add_test(tc, test_stored_microbatches);
	tcase_add_test(tc, test_layer_activations);
	tcase_add_test(tc, test_zero_memory);
	tcase_add_test(tc, test_estimate_invariants);
	tcase_add_test(tc, test_invalid_plans);
	tcase_add_test(tc, test_tail_stage);
	tcase_add_test(tc, test_tp_bytes);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(cost_suite)
