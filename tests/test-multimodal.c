/*
 * DistMM's multimodal plans (Huang et al., NSDI 2024): the profiles'
 * parameter counts against the published ones (CLIP, Radford et al. 2021;
 * ViT-g/14, Zhai et al. 2022), the batch-sync worked out by hand, loader
 * errors, and the expected behaviour: a per-submodule plan beats the
 * monolithic one clearly when the encoders differ, barely when alike.
 */
#include <math.h>
#include <string.h>

#include <check.h>

#include "testutil.h"
#include "io/multimodal_load.h"
#include "plan/multimodal.h"

static void
load_mm(const char *name, struct multimodal *mm)
{
	char path[PATH_MAX];
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert_msg(profile_resolve(PROFILE_MODEL, name, path, sizeof(path), &err), "%s", err.message);
	ck_assert_msg(multimodal_profile_is(path), "%s is not multimodal", name);
	ck_assert_msg(multimodal_load_file(mm, path, &err), "%s", err.message);
}

START_TEST(test_params_published)
{
	static struct multimodal l14, g14;

	test_setup_paths();
	load_mm("clip-vit-l14", &l14);
	load_mm("clip-vit-g14", &g14);
	ck_assert_int_eq(l14.nsub, 2);
	ck_assert_int_eq(l14.sub[0].tokens, 257);
	ck_assert_int_eq(l14.sub[1].tokens, 77);
	ck_assert_int_eq(l14.embedding, 768);
	/* openai/CLIP ViT-L/14: 427.6 M in all; text tower 123.1 M; the
	 * image tower 304.3 M with its projection (0.8 M) and ln_pre. */
	ck_assert_rel(multimodal_params_total(&l14), 427.6e6, 0.005);
	ck_assert_rel(model_params_total(&l14.sub[1].model), 123.1e6, 0.005);
	ck_assert_rel(model_params_total(&l14.sub[0].model) + 1024.0 * 768, 304.3e6, 0.01);
	/* ViT-g/14: 1011 M (Zhai et al. 2022, Table 2). */
	ck_assert_rel(model_params_total(&g14.sub[0].model), 1011e6, 0.015);
}
END_TEST

/* 2 submodules, B = 64, D = 512: 64 x 512 x 2 = 65,536 bytes each.
 * 8 GPUs in a node: an all-gather and a reduce-scatter, each
 * 7 x 3 us + 7/8 x 65536 / 225e9 = 21.2548622 us; x 2 x 2 = 85.0194489 us.
 * 16 GPUs on 2 nodes: 14 x 3 us + 5 us + 15/16 x 65536 / (8 x 21.25e9)
 * = 47.3614118 us each; x 4 = 189.445647 us. */
START_TEST(test_batch_sync_by_hand)
{
	struct cluster c;
	double bytes = 0;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	ck_assert_rel(multimodal_batch_sync_time(&c, 8, 2, 64, 512, &bytes), 85.0194489e-6, 1e-8);
	ck_assert_double_eq(bytes, 131072.0);
	ck_assert_rel(multimodal_batch_sync_time(&c, 16, 2, 64, 512, &bytes), 189.445647e-6, 1e-8);
	ck_assert_double_eq(multimodal_batch_sync_time(&c, 1, 2, 64, 512, NULL), 0.0);
	cluster_release(&c);
}
END_TEST

static const struct {
	const char *yaml, *want;
} bad[] = {
	{ "name: x\nkind: multimodal\nsubmodules:\n  - name: a\n    seq_len: 7\n  - name: b\n    model: gpt-1.7b\n"
	  "contrastive:\n  embedding: 8\n", "bad.yaml:4:5: missing required key 'model'" },
	{ "name: x\nkind: multimodal\nsubmodules:\n  - name: a\n    model: gpt-1.7b\n    tokens: 3\n"
	  "  - name: b\n    model: gpt-1.7b\ncontrastive:\n  embedding: 8\n", "bad.yaml:6:5: unknown key 'tokens'" },
	{ "name: x\nkind: multimodal\nsubmodules:\n  - name: a\n    model: gpt-1.7b\ncontrastive:\n  embedding: 8\n",
	  "bad.yaml:4:3: a multimodal model needs at least 2 submodules, got 1" },
	{ "name: x\nkind: multimodal\nsubmodules:\n  - name: a\n    model: gpt-1.7b\n  - name: a\n    model: gpt-1.7b\n"
	  "contrastive:\n  embedding: 8\n", "listed twice" },
	{ "name: x\nkind: multimodal\nsubmodules:\n  - name: a\n    model: nosuchmodel\n  - name: b\n    model: gpt-1.7b\n"
	  "contrastive:\n  embedding: 8\n", "bad.yaml:5:12: model 'nosuchmodel'" },
	{ "name: x\nkind: multimodal\nsubmodules:\n  - name: a\n    model: gpt-1.7b\n    seq_len: 3\n    patches: 3\n"
	  "  - name: b\n    model: gpt-1.7b\ncontrastive:\n  embedding: 8\n", "both seq_len and patches" },
	{ "name: x\nkind: multimodal\nsubmodules:\n  - name: a\n    model: gpt-1.7b\n  - name: b\n    model: gpt-1.7b\n",
	  "missing required key 'contrastive'" },
	{ "name: x\nkind: multimodal\nsubmodules:\n  - name: a\n    model:\n      name: t\n      layers: 2\n"
	  "      hidden: 30\n      heads: 4\n      vocab: 10\n      seq_len: 8\n  - name: b\n    model: gpt-1.7b\n"
	  "contrastive:\n  embedding: 8\n", "hidden (30) must be divisible by heads (4)" },
};

START_TEST(test_load_errors)
{
	static struct multimodal mm;
	struct plan_error err;
	char buf[PLAN_ERROR_TEXT_LEN];

	test_setup_paths();
	plan_error_clear(&err);
	ck_assert(!multimodal_load_string(&mm, "bad.yaml", bad[_i].yaml, &err));
	plan_error_format(&err, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, bad[_i].want), "case %d: got '%s', want '%s'", _i, buf, bad[_i].want);
}
END_TEST

/* A plain loader refuses a multimodal profile, where it says so. */
START_TEST(test_plain_loader_refuses)
{
	struct model m;
	struct plan_error err;
	char buf[PLAN_ERROR_TEXT_LEN];

	plan_error_clear(&err);
	ck_assert(!model_load_string(&m, "mm.yaml", "name: x\nkind: multimodal\nsubmodules: []\n", &err));
	plan_error_format(&err, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "mm.yaml:2:7: a multimodal model"), "%s", buf);
}
END_TEST

static struct plan
dp_plan(int dp, int mb, int batch)
{
	struct plan p;

	plan_init(&p);
	p.tp = p.pp = 1;
	p.dp = dp;
	p.micro_batch = mb;
	p.global_batch = batch;
	p.flash_attention = true;
	p.recompute = PLAN_RECOMPUTE_FULL;
	return p;
}

/* The best of a few data-parallel monolithic plans on @gpus GPUs. */
static double
best_monolithic(const struct multimodal *mm, const struct cluster *c, int gpus, int batch)
{
	static struct multimodal_estimate e;
	struct plan plans[MULTIMODAL_MAX_SUBMODULES];
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct plan_error err;
	double best = INFINITY;

	for (int mb = 1; mb <= 16; mb *= 2) {
		if (batch % (gpus * mb) != 0)
			continue;
		for (int i = 0; i < mm->nsub; i++)
			plans[i] = dp_plan(gpus, mb, batch);
		plan_error_clear(&err);
		ck_assert_msg(multimodal_estimate(mm, c, plans, true, &opt, &e, &err), "%s", err.message);
		if (e.fits && e.iteration_time_s < best)
			best = e.iteration_time_s;
	}
	return best;
}

static double
per_submodule(const struct multimodal *mm, const struct cluster *c, const int *gpus, int mb, int batch)
{
	static struct multimodal_estimate e;
	struct plan plans[MULTIMODAL_MAX_SUBMODULES];
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct plan_error err;

	for (int i = 0; i < mm->nsub; i++)
		plans[i] = dp_plan(gpus[i], mb, batch);
	plan_error_clear(&err);
	ck_assert_msg(multimodal_estimate(mm, c, plans, false, &opt, &e, &err), "%s", err.message);
	ck_assert(e.fits);
	ck_assert_int_eq(e.total_gpus, gpus[0] + gpus[1]);
	ck_assert_double_eq(e.iteration_time_s, e.compute_s + e.batch_sync_s);
	return e.iteration_time_s;
}

/*
 * CLIP ViT-L/14 on 64 p4d GPUs, 768 samples: 48 GPUs for the image
 * encoder and one node for the text encoder beat running both on all 64
 * in turn by more than 20 %. Two identical ViT-L/14 towers (compute
 * bound: 4096 samples on 16 GPUs) split 8 + 8 gain at most 6 %.
 */
START_TEST(test_imbalanced_beats_alike_does_not)
{
	static struct multimodal l14, alike;
	struct cluster c;
	int split_l14[2] = { 48, 16 }, split_alike[2] = { 8, 8 };
	double mono, per;

	test_setup_paths();
	test_load_profile(PROFILE_CLUSTER, "aws-p4d", &c);
	load_mm("clip-vit-l14", &l14);
	mono = best_monolithic(&l14, &c, 64, 768);
	per = per_submodule(&l14, &c, split_l14, 16, 768);
	ck_assert_msg(mono / per > 1.2, "imbalanced: monolithic %.4f s, per-submodule %.4f s", mono, per);

	alike = l14;
	alike.sub[1] = l14.sub[0];
	snprintf(alike.sub[1].name, sizeof(alike.sub[1].name), "image2");
	mono = best_monolithic(&alike, &c, 16, 4096);
	per = per_submodule(&alike, &c, split_alike, 16, 4096);
	ck_assert_msg(mono / per < 1.06 && mono / per > 0.94, "alike: monolithic %.4f s, per-submodule %.4f s",
		      mono, per);
	cluster_release(&c);
}
END_TEST

/* A monolithic plan must span the same GPUs for every submodule; groups beyond the cluster are refused. */
START_TEST(test_plan_errors)
{
	static struct multimodal l14;
	static struct multimodal_estimate e;
	struct cluster c;
	struct plan plans[2];
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct plan_error err;

	test_setup_paths();
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	load_mm("clip-vit-l14", &l14);
	plans[0] = dp_plan(8, 1, 64);
	plans[1] = dp_plan(16, 1, 64);
	plan_error_clear(&err);
	ck_assert(!multimodal_estimate(&l14, &c, plans, true, &opt, &e, &err));
	ck_assert(strstr(err.message, "same GPUs"));
	plans[0] = dp_plan(512, 1, 512);
	plans[1] = dp_plan(8, 1, 512);
	plan_error_clear(&err);
	ck_assert(!multimodal_estimate(&l14, &c, plans, false, &opt, &e, &err));
	ck_assert_msg(strstr(err.message, "more than cluster"), "%s", err.message);
	plans[0] = dp_plan(8, 3, 64);
	plan_error_clear(&err);
	ck_assert(!multimodal_estimate(&l14, &c, plans, false, &opt, &e, &err));
	ck_assert_msg(strstr(err.message, "submodule 'image': "), "%s", err.message);
	cluster_release(&c);
}
END_TEST

static Suite *
multimodal_suite(void)
{
	Suite *s = suite_create("multimodal");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_params_published);
	tcase_add_test(tc, test_batch_sync_by_hand);
	tcase_add_loop_test(tc, test_load_errors, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_plain_loader_refuses);
	tcase_add_test(tc, test_imbalanced_beats_alike_does_not);
	tcase_add_test(tc, test_plan_errors);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(multimodal_suite)
