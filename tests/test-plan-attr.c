/*
 * The plan-attribute table (plan/plan_attr.h): every attribute reads back
 * what it writes, and plan_complete fills a plan as predict always has,
 * with values worked out by hand.
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "plan/plan_attr.h"

/* Each row is well-formed: a name, a type that matches its member's C
 * type, a range for whole numbers, choices for choices. */
START_TEST(test_rows)
{
	for (int id = 0; id < PLAN_ATTR_COUNT; id++) {
		const struct plan_attr *a = &plan_attrs[id];

		ck_assert_msg(a->name && a->help, "row %d", id);
		ck_assert_ptr_eq(plan_attr_find(a->name), a);
		if (a->type == PLAN_ATTR_INT)
			ck_assert_msg(a->ctype == PLAN_ATTR_C_INT && a->min <= a->max, "%s", a->name);
		/* A switch whose default is the framework's is an int, -1 until given. */
		if (a->type == PLAN_ATTR_BOOL)
			ck_assert_msg(a->ctype == ((a->flags & PLAN_ATTR_FW_DEFAULT) ? PLAN_ATTR_C_INT : PLAN_ATTR_C_BOOL),
				      "%s", a->name);
		if (a->type == PLAN_ATTR_CHOICE)
			ck_assert_msg(a->choices && a->ctype != PLAN_ATTR_C_NONE, "%s", a->name);
		if (a->type == PLAN_ATTR_LIST)
			ck_assert_msg(a->ctype == PLAN_ATTR_C_NONE, "%s", a->name);
		/* plan-cli recomp: a set is a bit mask of its choices. */
		if (a->type == PLAN_ATTR_SET)
			ck_assert_msg(a->choices && a->ctype == PLAN_ATTR_C_INT, "%s", a->name);
	}
	ck_assert_ptr_null(plan_attrs[PLAN_ATTR_COUNT].name);
}
END_TEST

/* Names: dashes read as underscores; a switch on by default is given as
 * --no-NAME; one whose default is the framework's (dp_overlap) has both
 * forms, its option named by the on form. */
START_TEST(test_names)
{
	char buf[64];

	ck_assert_ptr_eq(plan_attr_find("micro-batch"), &plan_attrs[PLAN_ATTR_MICRO_BATCH]);
	ck_assert_ptr_eq(plan_attr_find("micro_batch"), &plan_attrs[PLAN_ATTR_MICRO_BATCH]);
	ck_assert_ptr_null(plan_attr_find("micro"));
	ck_assert_str_eq(plan_attr_option(&plan_attrs[PLAN_ATTR_MICRO_BATCH], buf, sizeof(buf)), "micro-batch");
	ck_assert_str_eq(plan_attr_option(&plan_attrs[PLAN_ATTR_DP_OVERLAP], buf, sizeof(buf)), "dp-overlap");
	ck_assert_str_eq(plan_attr_option(&plan_attrs[PLAN_ATTR_MICS_HIERARCHICAL], buf, sizeof(buf)),
			 "no-mics-hierarchical");
	ck_assert_str_eq(plan_attr_option(&plan_attrs[PLAN_ATTR_SEQUENCE_PARALLEL], buf, sizeof(buf)),
			 "sequence-parallel");
}
END_TEST

/* A scalar's bounds and choices read back as written; values outside
 * are refused with the range or the valid names. */
START_TEST(test_scalar_values)
{
	char buf[64], why[256];
	long v;

	for (int id = 0; id < PLAN_ATTR_COUNT; id++) {
		const struct plan_attr *a = &plan_attrs[id];
		long probes[3] = { a->min, a->max, 1 };
		int n = a->type == PLAN_ATTR_INT ? 2 : a->type == PLAN_ATTR_BOOL ? 2 : 0;

		if (a->type == PLAN_ATTR_BOOL)
			probes[0] = 0;
		if (a->type == PLAN_ATTR_CHOICE)
			while (a->choices[n])
				n++;
		for (int i = 0; i < n; i++) {
			long want = a->type == PLAN_ATTR_CHOICE ? i : probes[i];

			plan_attr_format_value(a, want, buf, sizeof(buf));
			ck_assert_msg(plan_attr_parse_value(a, NULL, buf, &v, why, sizeof(why)), "%s: %s", a->name, why);
			ck_assert_int_eq(v, want);
		}
	}
	ck_assert(!plan_attr_parse_value(&plan_attrs[PLAN_ATTR_ZERO], "--zero", "4", &v, why, sizeof(why)));
	ck_assert_str_eq(why, "--zero expects a whole number from 0 to 3, got '4'");
	ck_assert(!plan_attr_parse_value(&plan_attrs[PLAN_ATTR_PRECISION], "--precision", "fp9", &v, why, sizeof(why)));
	ck_assert_str_eq(why, "unknown value 'fp9' for --precision (valid: bf16, fp16, fp8, fp4)");
	ck_assert(plan_attr_parse_value(&plan_attrs[PLAN_ATTR_TP_OVERLAP], NULL, "yes", &v, why, sizeof(why)) && v == 1);
	ck_assert(plan_attr_parse_value(&plan_attrs[PLAN_ATTR_TP_OVERLAP], NULL, "off", &v, why, sizeof(why)) && v == 0);
}
END_TEST

/*
 * Hostile values of a set and a choice (issue 25, twenty-third session):
 * an empty item of --recompute-modules, 'framework' joined to modules and
 * a module named twice were "unknown value ''", an unknown 'framework' and
 * silently accepted; an empty choice was "unknown value ''". Each now says
 * what is wrong; a well-formed set still reads as its bits.
 */
START_TEST(test_set_and_choice_errors)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "", "--recompute-modules is empty: give framework, or modules joined by '+'" },
		{ "mlp+", "--recompute-modules 'mlp+' has an empty item: join the modules with one '+' and no '+' "
			  "at either end" },
		{ "+mlp", "--recompute-modules '+mlp' has an empty item" },
		{ "mlp++core_attn", "--recompute-modules 'mlp++core_attn' has an empty item" },
		{ "mlp+mlp", "--recompute-modules 'mlp+mlp' names 'mlp' twice" },
		{ "core_attn,mlp,core_attn", "--recompute-modules 'core_attn,mlp,core_attn' names 'core_attn' twice" },
		{ "framework+mlp", "--recompute-modules 'framework+mlp': 'framework' (the profile's selective "
				   "recomputation) stands alone, not joined to modules" },
		{ "mlp+bogus", "unknown value 'bogus' for --recompute-modules" },
	};
	const struct plan_attr *rm = &plan_attrs[PLAN_ATTR_RECOMPUTE_MODULES];
	char why[512];
	long v = -1;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert(!plan_attr_parse_value(rm, "--recompute-modules", bad[i].text, &v, why, sizeof(why)));
		ck_assert_msg(strncmp(why, bad[i].why, strlen(bad[i].why)) == 0, "'%s': got '%s'", bad[i].text, why);
	}
	ck_assert(plan_attr_parse_value(rm, "--recompute-modules", "mlp+core_attn", &v, why, sizeof(why)));
	ck_assert_int_eq(v, 1L << PLAN_RM_MLP | 1L << PLAN_RM_CORE_ATTN);
	ck_assert(plan_attr_parse_value(rm, "--recompute-modules", "framework", &v, why, sizeof(why)));
	ck_assert_int_eq(v, 0);
	ck_assert(!plan_attr_parse_value(&plan_attrs[PLAN_ATTR_MOE_OVERLAP], "--moe-overlap", "", &v, why,
					 sizeof(why)));
	ck_assert_str_eq(why, "--moe-overlap is empty (valid: none, lancet, combined-1f1b)");
}
END_TEST

/*
 * A plan with every attribute away from its default, written out (as
 * predict_args do) and read into a fresh plan, is the same plan: the
 * property optimize's predict_args rest on.
 */
START_TEST(test_round_trip)
{
	struct plan p, q;
	struct estimate_options po = { .dp_algo = COLL_ALGO_HIERARCHICAL }, qo = { .dp_algo = COLL_ALGO_RING };
	struct plan_attr_target tp = { &p, &po }, tq = { &q, &qo };
	char buf[4096], why[256];

	plan_init(&p);
	p.tp = 2, p.pp = 4, p.dp = 3, p.vpp = 1, p.micro_batch = 2, p.global_batch = 96, p.seq_len = 4096;
	p.sequence_parallel = true, p.flash_attention = true, p.zero = 1, p.mics_group = 16, p.ep = 2;
	p.moe_routing = PLAN_MOE_BILEVEL, p.moe_overlap = PLAN_MOE_OVERLAP_LANCET, p.precision = PLAN_PRECISION_FP8;
	p.tp_overlap = true, p.cp = 2, p.cp_method = PLAN_CP_ALLTOALL, p.fp8_gather = true;
	p.dp_overlap = false, p.mics_hierarchical = false;
	p.custom_layers = true, p.stage_layers_count = 4;
	p.custom_recompute = true, p.stage_recompute_count = 4;
	p.custom_recompute_layers = true, p.stage_recompute_layers_count = 4;
	for (int s = 0; s < 4; s++) {
		p.stage_layers[s] = (short)(5 + s);
		p.stage_recompute[s] = (signed char)(s % 3);
		p.stage_recompute_layers[s] = (short)s;
	}
	p.compress = (struct plan_compression){ .tp = true, .pp = true, .dp = true, .from_layer = 7, .from_stage = 1,
						.dp_scheme = 2, .dp_on_cpu = true };
	plan_init(&q);
	for (int id = 0; id < PLAN_ATTR_COUNT; id++) {
		const struct plan_attr *a = &plan_attrs[id];

		if (!plan_attr_format(a, &tp, true, buf, sizeof(buf)))
			continue;
		ck_assert_msg(plan_attr_parse(a, NULL, buf, &tq, why, sizeof(why)), "%s '%s': %s", a->name, buf, why);
	}
	/* recompute is not written where the stages give theirs: the same. */
	q.recompute = p.recompute;
	for (int id = 0; id < PLAN_ATTR_COUNT; id++)
		if (plan_attrs[id].type != PLAN_ATTR_LIST)
			ck_assert_msg(plan_attr_get(&plan_attrs[id], &tp) == plan_attr_get(&plan_attrs[id], &tq), "%s",
				      plan_attrs[id].name);
	ck_assert_mem_eq(p.stage_layers, q.stage_layers, sizeof(p.stage_layers));
	ck_assert_mem_eq(p.stage_recompute, q.stage_recompute, sizeof(p.stage_recompute));
	ck_assert_mem_eq(p.stage_recompute_layers, q.stage_recompute_layers, sizeof(p.stage_recompute_layers));
	ck_assert(q.compress.tp && q.compress.pp && q.compress.dp);
}
END_TEST

/* Without a compressor the compression attributes are not written;
 * moe_routing only with EP; the defaults not at all. */
START_TEST(test_left_out)
{
	struct plan p;
	struct plan_attr_target t = { &p, NULL };
	char buf[64];

	plan_init(&p);
	p.compress.dp = true;
	p.compress.dp_scheme = 1;
	p.moe_routing = PLAN_MOE_BILEVEL;
	ck_assert(!plan_attr_format(&plan_attrs[PLAN_ATTR_DP_COMPRESS_SCHEME], &t, false, buf, sizeof(buf)));
	ck_assert(plan_attr_format(&plan_attrs[PLAN_ATTR_DP_COMPRESS_SCHEME], &t, true, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "allgather");
	ck_assert(!plan_attr_format(&plan_attrs[PLAN_ATTR_MOE_ROUTING], &t, false, buf, sizeof(buf)));
	ck_assert(!plan_attr_format(&plan_attrs[PLAN_ATTR_ZERO], &t, false, buf, sizeof(buf)));
	ck_assert(!plan_attr_format(&plan_attrs[PLAN_ATTR_DP_OVERLAP], &t, false, buf, sizeof(buf)));
	/* dp_allreduce lives in the estimate options: without them, its default. */
	ck_assert(!plan_attr_format(&plan_attrs[PLAN_ATTR_DP_ALLREDUCE], &t, false, buf, sizeof(buf)));
}
END_TEST

/* plan_complete on TEST_CLUSTER_YAML (64 nodes of 8: 512 GPUs). */
START_TEST(test_complete)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_error err;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_profile(PROFILE_MODEL, "gpt3-175b", &m);
	/* dp from all 512 GPUs: 512 / (tp 8 x pp 4) = 16; seq_len the model's 2048. */
	plan_init(&p);
	p.tp = 8, p.pp = 4, p.global_batch = 64;
	ck_assert(plan_complete(&p, &(struct plan_fill){ 0, 1, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_int_eq(p.dp, 16);
	ck_assert_int_eq(p.seq_len, 2048);
	ck_assert(p.flash_attention);
	/* With cp 2 the shape is 8 x 2 x 4 = 64 GPUs: dp 8 of 512; of 128 given, 2. */
	plan_init(&p);
	p.tp = 8, p.pp = 4, p.cp = 2, p.global_batch = 64;
	ck_assert(plan_complete(&p, &(struct plan_fill){ 0, 0, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_int_eq(p.dp, 8);
	ck_assert(!p.flash_attention);
	plan_init(&p);
	p.tp = 8, p.pp = 4, p.cp = 2, p.global_batch = 64;
	ck_assert(plan_complete(&p, &(struct plan_fill){ 128, 0, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_int_eq(p.dp, 2);
	/* 100 GPUs over tp 8: not whole, and the message names the divisor. */
	plan_init(&p);
	p.tp = 8, p.pp = 1, p.global_batch = 64;
	ck_assert(!plan_complete(&p, &(struct plan_fill){ 100, 0, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_str_eq(err.message, "100 GPUs are not divisible by tp x pp (8 x 1); give dp or the GPUs");
	plan_init(&p);
	p.tp = 8, p.pp = 1, p.cp = 4, p.global_batch = 64;
	ck_assert(!plan_complete(&p, &(struct plan_fill){ 80, 0, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_str_eq(err.message, "80 GPUs are not divisible by tp x cp x pp (8 x 4 x 1); give dp or the GPUs");
	/* dp given: tp 8 x pp 4 x dp 2 = 64, not the 128 given. */
	plan_init(&p);
	p.tp = 8, p.pp = 4, p.dp = 2, p.global_batch = 64;
	ck_assert(!plan_complete(&p, &(struct plan_fill){ 128, 0, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_str_eq(err.message, "gpus (128) does not match tp x pp x dp (8 x 4 x 2 = 64)");
	ck_assert(!plan_complete(&p, &(struct plan_fill){ 1024, 0, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_str_eq(err.message, "gpus (1024) is more than cluster 'test-a100' has (512)");
	/* MiCS is ZeRO-3 within its groups; a stage given beside it is kept
	 * (plan_validate refuses it, naming both). */
	plan_init(&p);
	p.tp = 8, p.pp = 1, p.mics_group = 16, p.global_batch = 64;
	ck_assert(plan_complete(&p, &(struct plan_fill){ 0, 1, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_int_eq(p.zero, 3);
	plan_init(&p);
	p.tp = 8, p.pp = 1, p.mics_group = 16, p.zero = 1, p.global_batch = 64;
	ck_assert(plan_complete(&p, &(struct plan_fill){ 0, 1, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_int_eq(p.zero, 1);
	/* recompute_layers 3: the same 3 on each of the 4 stages. */
	plan_init(&p);
	p.tp = 8, p.pp = 4, p.global_batch = 64;
	p.custom_recompute_layers = true, p.stage_recompute_layers_count = 1, p.stage_recompute_layers[0] = 3;
	ck_assert(plan_complete(&p, &(struct plan_fill){ 0, 1, PLAN_PP_SPLIT_EVEN }, &m, &c, &err));
	ck_assert_int_eq(p.stage_recompute_layers_count, 4);
	ck_assert_int_eq(p.stage_recompute_layers[3], 3);
	cluster_release(&c);
}
END_TEST

/* Products of degrees are checked: 46340^2 = 2147395600 fits an int,
 * 46341^2 = 2147488281 does not; 65536 x 65536 x 256 x 2^24 = 2^64. */
START_TEST(test_degrees_product)
{
	struct plan p;

	plan_init(&p);
	p.tp = 8, p.cp = 2, p.pp = 4, p.dp = 16;
	ck_assert_int_eq(plan_degrees_product(&p), 1024);
	p.tp = 46340, p.cp = 1, p.pp = 1, p.dp = 46340;
	ck_assert_int_eq(plan_degrees_product(&p), 2147395600LL);
	p.tp = 46341, p.dp = 46341;
	ck_assert_int_eq(plan_degrees_product(&p), -1);
	p.tp = 65536, p.cp = 65536, p.pp = 256, p.dp = 1 << 24;
	ck_assert_int_eq(plan_degrees_product(&p), -1);
	p.tp = 0;
	ck_assert_int_eq(plan_degrees_product(&p), -1);
}
END_TEST

static Suite *
plan_attr_suite(void)
{
	Suite *s = suite_create("plan-attr");
	TCase *tc = tcase_create("plan-attr");

	tcase_add_unchecked_fixture(tc, test_setup_paths, NULL);
	tcase_add_test(tc, test_rows);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_scalar_values);
	tcase_add_test(tc, test_set_and_choice_errors);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_left_out);
	tcase_add_test(tc, test_complete);
	tcase_add_test(tc, test_degrees_product);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(plan_attr_suite)
