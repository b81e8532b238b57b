/*
 * Properties of every estimate, over random valid plans on bundled
 * models, clusters, frameworks and compressors, some clusters with their
 * rates drawn down to the schemas' floors, every parallel degree drawn
 * (tp, cp, pp, vpp, dp, and ep on MoE models): every reported number is
 * finite and non-negative, the breakdown adds up to the iteration time,
 * the memory components add up to the total, and fits agrees with the
 * total and the capacity. A plan the cost model refuses must say why.
 * The seed is fixed, so a failure names a case that can be rerun;
 * PLAN_TEST_SEED=K draws other cases (rng_seed).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/fields.h"
#include "io/format.h"
#include "io/profile_load.h"
#include "io/profile_path.h"
#include "plan/estimate.h"
#include "plan/numparse.h"
#include "plan/search.h"
#include "plan/units.h"
#include "testutil.h"

static const char *const model_names[] = {
	"gpt-1.7b", "llama2-7b", "mixtral-8x7b", "bert-large", "gpt3-175b", "deepseek-moe-16b",
	"gemma-2-9b", "gpt-j-6b", /* arch: a sliding window, a parallel block */
};
static const char *const cluster_names[] = { "selene", "dgx-h100", "aws-p3dn", "mosaicml-a100-40gb" };
static const char *const framework_names[] = {
	"megatron-lm", "deepspeed", "pytorch-fsdp", "pytorch-fsdp2", "deepspeed-2021", "llm-foundry",
	"deepspeed-0.5", /* per-tensor _all_gather_base, no prefetch: the MiCS baseline */
	"megatron-core-0.6", "megatron-core-0.6-sequential", /* the allgather_mask dispatcher */
};
static const char *const compressor_names[] = { "topk-10", "quantize-4", "powersgd-10", "ae-100" };

#define NMODELS (sizeof(model_names) / sizeof(model_names[0]))
#define NCLUSTERS (sizeof(cluster_names) / sizeof(cluster_names[0]))
#define NFRAMEWORKS (sizeof(framework_names) / sizeof(framework_names[0]))
#define NCOMPRESSORS (sizeof(compressor_names) / sizeof(compressor_names[0]))

static struct model models[NMODELS];
static struct cluster clusters[NCLUSTERS];
static struct framework frameworks[NFRAMEWORKS];
static struct compressor compressors[NCOMPRESSORS];

static void
setup(void)
{
	const char *r = getenv("PLAN_TEST_SOURCE_ROOT");

	ck_assert_msg(r != NULL, "PLAN_TEST_SOURCE_ROOT is not set (run through meson test)");
	setenv("PLAN_CLI_PATH", r, 1);
	profile_path_init(NULL);
	for (size_t i = 0; i < NMODELS; i++)
		test_load_profile(PROFILE_MODEL, model_names[i], &models[i]);
	for (size_t i = 0; i < NCLUSTERS; i++)
		test_load_profile(PROFILE_CLUSTER, cluster_names[i], &clusters[i]);
	for (size_t i = 0; i < NFRAMEWORKS; i++)
		test_load_profile(PROFILE_FRAMEWORK, framework_names[i], &frameworks[i]);
	for (size_t i = 0; i < NCOMPRESSORS; i++)
		test_load_profile(PROFILE_COMPRESSOR, compressor_names[i], &compressors[i]);
}

static void
teardown(void)
{
	for (size_t i = 0; i < NCLUSTERS; i++)
		cluster_release(&clusters[i]);
}

/* xorshift64*: the same sequence on every machine, unlike rand(). */
static unsigned long long
rng_next(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* A test's fixed seed, or, with PLAN_TEST_SEED=K (K > 0), another draw of
 * cases: K mixed in, so that several runs cover more plans (a failure
 * names its case and K). Never 0, which xorshift would keep. */
static unsigned long long
rng_seed(unsigned long long fixed)
{
	const char *e = getenv("PLAN_TEST_SEED");
	long k = 0;

	if (!e || !*e)
		return fixed;
	ck_assert_msg(num_parse_long(e, 0, LONG_MAX, &k), "PLAN_TEST_SEED is not a number: '%s'", e);
	fixed ^= (unsigned long long)k * 0x9e3779b97f4a7c15ULL;
	return fixed ? fixed : 1;
}

static int
rng_int(unsigned long long *s, int n)
{
	return (int)(rng_next(s) % (unsigned long long)n);
}

/* Log-uniform in [lo, hi]. */
static double
rng_log(unsigned long long *s, double lo, double hi)
{
	double u = (double)(rng_next(s) >> 11) * 0x1p-53;

	return lo * pow(hi / lo, u);
}

/* A cluster whose rates are drawn from the floors of the schemas
 * (UNITS_MIN_*) up, and whose efficiencies from 1 % up: slow, but valid. */
static void
perturb_cluster(unsigned long long *s, struct cluster *c)
{
	c->gpu.peak_flops = rng_log(s, UNITS_MIN_COMPUTE_FLOPS, 1e16);
	c->gpu.memory_bw_Bps = rng_log(s, UNITS_MIN_BANDWIDTH_BPS, 1e13);
	c->gpu.memory_efficiency = rng_log(s, 0.01, 1.0);
	c->gpu.gemm_efficiency_max = rng_log(s, 0.01, 1.0);
	c->intra.bandwidth_Bps = rng_log(s, UNITS_MIN_BANDWIDTH_BPS, 1e12);
	c->intra.efficiency = rng_log(s, 0.01, 1.0);
	c->inter.nic_bandwidth_Bps = rng_log(s, UNITS_MIN_BANDWIDTH_BPS, 1e12);
	c->inter.efficiency = rng_log(s, 0.01, 1.0);
}

/* Stages of random sizes, at least one layer each. */
static void
random_layers(unsigned long long *s, const struct model *m, struct plan *p)
{
	int left = m->layers - p->pp;

	p->custom_layers = true;
	p->stage_layers_count = p->pp;
	for (int i = 0; i < p->pp; i++) {
		int extra = i == p->pp - 1 ? left : rng_int(s, left + 1);

		p->stage_layers[i] = (short)(1 + extra);
		left -= extra;
	}
}

/* Expert parallelism and MiCS, where the model and the sharding allow them. */
static void
random_sharding(unsigned long long *s, const struct model *m, struct plan *p)
{
	p->zero = rng_int(s, p->pp > 1 ? 3 : 4);
	if (model_is_moe(m)) {
		int ep = 1;

		while (rng_int(s, 2) && p->dp % (2 * ep) == 0 && m->moe.experts % (2 * ep) == 0)
			ep *= 2;
		p->ep = ep;
		p->moe_routing = rng_int(s, 2);
	} else if (p->zero == 3 && p->cp == 1 && rng_int(s, 3) == 0) {
		int g = 1 + rng_int(s, p->dp);

		while (p->dp % g)
			g--;
		p->mics_group = g;
	}
}

/* A random plan of @m on @c; plan_validate may still refuse it. */
static void
random_plan(unsigned long long *s, const struct model *m, const struct cluster *c, struct plan *p)
{
	int k;

	plan_init(p);
	p->tp = 1 << rng_int(s, 5);
	/* Context parallelism on a third of the dense plans (plan_validate
	 * refuses it with MoE): 2 to 8 ways, ring or all-to-all. */
	if (!model_is_moe(m) && rng_int(s, 3) == 0) {
		p->cp = 2 << rng_int(s, 3);
		p->cp_method = rng_int(s, 2);
	}
	p->pp = 1 + rng_int(s, m->layers < 8 ? m->layers : 8);
	p->vpp = p->pp > 1 && rng_int(s, 4) == 0 ? 2 : 1;
	p->dp = 1 + rng_int(s, 16);
	while ((long)p->tp * p->cp * p->pp * p->dp > cluster_gpus(c) && p->dp > 1)
		p->dp /= 2;
	p->micro_batch = 1 << rng_int(s, 4);
	k = (1 + rng_int(s, 8)) * (p->vpp > 1 ? p->pp : 1);
	p->global_batch = p->dp * p->micro_batch * k;
	p->seq_len = rng_int(s, 2) ? m->seq_len : 256 << rng_int(s, 4);
	p->recompute = rng_int(s, 3);
	p->sequence_parallel = p->tp > 1 && rng_int(s, 2);
	/* cp > 1 needs fused attention, and seq_len a multiple of 2 cp: the
	 * lengths drawn are (plan_validate refuses a model's that is not). */
	p->flash_attention = p->cp > 1 || rng_int(s, 2);
	p->dp_overlap = rng_int(s, 2);
	random_sharding(s, m, p);
	if (p->vpp == 1 && m->layers % p->pp != 0)
		random_layers(s, m, p);
	if (p->pp > 1 && rng_int(s, 4) == 0) {
		p->custom_recompute = true;
		p->stage_recompute_count = p->pp;
		for (int i = 0; i < p->pp; i++)
			p->stage_recompute[i] = (signed char)rng_int(s, 3);
	}
}

/* Compression where a compressor was drawn: each scope at random. */
static void
random_compression(unsigned long long *s, struct plan *p)
{
	p->compress.tp = p->tp > 1 && rng_int(s, 2);
	p->compress.pp = p->pp > 1 && rng_int(s, 2);
	p->compress.dp = p->dp > 1 && rng_int(s, 2);
	if (p->compress.dp)
		p->compress.dp_on_cpu = rng_int(s, 4) == 0;
}

/* Every real number of the report: finite and non-negative. */
static void
check_fields(const struct report *r, int n)
{
	ck_assert_msg(field_report_finite(r), "case %d: a field is not finite", n);
	for (size_t i = 0; i < field_count; i++) {
		const struct field *f = &field_table[i];
		int len = field_length(f, r);
		struct field_value v;

		if (f->type != FIELD_NUM)
			continue;
		for (int j = 0; j < (len < 0 ? 1 : len); j++) {
			field_get(f, r, j, &v);
			ck_assert_msg(v.d >= 0, "case %d: %s[%d] = %g is negative",
				      n, f->key ? f->key : f->csv, j, v.d);
		}
	}
}

static void
check_estimate(const struct plan *p, const struct estimate *e, int n)
{
	const struct memory_use *u = &e->memory;
	double sum = 0.0;
	double mem = u->weights + u->gradients + u->optimizer + u->activations + u->other + u->compression;

	/* Every term, from the list: a new one is in the sum without an edit here. */
	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++) {
		double t = estimate_breakdown_get(&e->breakdown, i);

		ck_assert_msg(isfinite(t) && t >= 0, "case %d: %s = %g", n, estimate_breakdown_name(i), t);
		sum += t;
	}
	ck_assert_msg(e->iteration_time_s > 0, "case %d: iteration time %g", n, e->iteration_time_s);
	ck_assert_msg(fabs(sum - e->iteration_time_s) <= 1e-9 * e->iteration_time_s,
		      "case %d: the breakdown adds up to %.12g, not %.12g", n, sum, e->iteration_time_s);
	ck_assert_msg(u->weights >= 0 && u->gradients >= 0 && u->optimizer >= 0 &&
		      u->activations >= 0 && u->other >= 0 && u->compression >= 0,
		      "case %d: a negative memory component", n);
	ck_assert_msg(fabs(mem - u->total) <= 1e-9 * u->total,
		      "case %d: memory components add up to %.12g, not %.12g", n, mem, u->total);
	ck_assert_msg(e->fits == (u->total <= e->memory_capacity_bytes),
		      "case %d: fits %d with %g of %g bytes", n, e->fits, u->total, e->memory_capacity_bytes);
	for (int s = 0; s < p->pp && s < ESTIMATE_MAX_STAGES; s++)
		ck_assert_msg(e->stage_memory[s] <= u->total * (1 + 1e-12),
			      "case %d: stage %d needs more than the reported peak", n, s);
	ck_assert_rel(e->tokens_per_s, (double)p->global_batch * p->seq_len / e->iteration_time_s, 1e-9);
}

/* The parallel degrees random_plan draws: each must reach the cost model
 * above 1, or the properties are not checked with it. */
enum { DEGREE_TP, DEGREE_CP, DEGREE_PP, DEGREE_VPP, DEGREE_DP, DEGREE_EP, DEGREE_COUNT };
static const char *const degree_names[DEGREE_COUNT] = { "tp", "cp", "pp", "vpp", "dp", "ep" };

/* One random case: estimate, then check the properties. True when the
 * cost model accepted the plan; then @reached counts its degrees above 1. */
static bool
run_case(unsigned long long *s, int n, int reached[DEGREE_COUNT])
{
	const struct model *m = &models[rng_int(s, NMODELS)];
	struct cluster c = clusters[rng_int(s, NCLUSTERS)];
	int fw = rng_int(s, NFRAMEWORKS + 1), cmp = rng_int(s, 2 * NCOMPRESSORS);
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct plan p;
	struct estimate e;
	struct plan_error err;
	struct report rep;

	if (rng_int(s, 4) == 0)
		perturb_cluster(s, &c);
	random_plan(s, m, &c, &p);
	opt.dp_algo = (enum coll_algo)rng_int(s, 2);
	opt.framework = fw < (int)NFRAMEWORKS ? &frameworks[fw] : NULL;
	if (cmp < (int)NCOMPRESSORS) {
		opt.compressor = &compressors[cmp];
		random_compression(s, &p);
	}
	plan_error_clear(&err);
	if (!estimate_plan(m, &c, &p, &opt, &e, &err)) {
		ck_assert_msg(err.kind != PLAN_ERR_NONE && err.message[0], "case %d: refused without a reason", n);
		ck_assert_msg(!strstr(err.message, "not finite"), "case %d: %s", n, err.message);
		return false;
	}
	rep = (struct report){ m, &c, &p, &e, &opt, opt.compressor, NULL };
	check_fields(&rep, n);
	check_estimate(&p, &e, n);
	reached[DEGREE_TP] += p.tp > 1;
	reached[DEGREE_CP] += p.cp > 1;
	reached[DEGREE_PP] += p.pp > 1;
	reached[DEGREE_VPP] += p.vpp > 1;
	reached[DEGREE_DP] += p.dp > 1;
	reached[DEGREE_EP] += p.ep > 1;
	return true;
}

START_TEST(test_random_plans)
{
	unsigned long long seed = rng_seed(0x15a15a15a15aULL);
	int cases = test_quick() ? 300 : 5000, accepted = 0, reached[DEGREE_COUNT] = { 0 };

	for (int n = 0; n < cases; n++)
		accepted += run_case(&seed, n, reached);
	/* The generator must reach the cost model, not only plan_validate,
	 * with every degree. */
	ck_assert_msg(accepted >= cases / 5, "only %d of %d random plans were valid", accepted, cases);
	for (int d = 0; d < DEGREE_COUNT; d++)
		ck_assert_msg(reached[d] >= accepted / 50, "only %d of %d valid plans have %s > 1", reached[d],
			      accepted, degree_names[d]);
}
END_TEST

/* Every term of @b on one line, for a failing case. */
static void
print_breakdown(const char *label, const struct estimate_breakdown *b)
{
	fprintf(stderr, "  %s:", label);
	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++)
		fprintf(stderr, " %s %g", estimate_breakdown_name(i), estimate_breakdown_get(b, i));
	fputc('\n', stderr);
}

/* A failing case of test_slower_kernels_never_faster: the plan, its
 * stages' layers and recompute modes, and both breakdowns. */
static void
print_case(int n, const struct model *m, const struct cluster *c, const struct framework *fw, const struct plan *p,
	   const struct estimate *a, const struct estimate *b)
{
	fprintf(stderr, "case %d: %s on %s fw %s tp %d cp %d (%s) pp %d dp %d vpp %d mb %d gb %d s %d rc %d "
		"sp %d fa %d zero %d mics %d ep %d ov %d custom %d/%d; paced by stage %d, then %d\n", n, m->name,
		c->name, fw->name, p->tp, p->cp, plan_cp_method_names[p->cp_method], p->pp, p->dp, p->vpp,
		p->micro_batch, p->global_batch, p->seq_len, p->recompute, p->sequence_parallel, p->flash_attention,
		p->zero, p->mics_group, p->ep, p->dp_overlap, p->custom_layers, p->custom_recompute,
		a->details.bottleneck_stage, b->details.bottleneck_stage);
	fprintf(stderr, "  stage layers/recompute:");
	for (int i = 0; i < p->pp && i < PLAN_MAX_STAGES; i++)
		fprintf(stderr, " %d/%d", p->custom_layers ? p->stage_layers[i] : 0,
			p->custom_recompute ? p->stage_recompute[i] : p->recompute);
	fputc('\n', stderr);
	print_breakdown("a", &a->breakdown);
	print_breakdown("b", &b->breakdown);
}

/*
 * Slower kernels never make an iteration faster: the same plan with the
 * framework's element-wise operators eager instead of fused, its attention
 * on FlashAttention-2 instead of the GPU profile's kernel (at most as fast),
 * torchtitan's per-op selective recomputation instead of the attention
 * core and larger fixed gather costs takes at least as long. (The exposure
 * of overlapped communication only shrinks as computation grows.) Nor does
 * a fixed cost per collective on the cluster.
 */
START_TEST(test_slower_kernels_never_faster)
{
	unsigned long long seed = rng_seed(0x51045ULL);
	int cases = test_quick() ? 200 : 2000, compared = 0;

	for (int n = 0; n < cases; n++) {
		const struct model *m = &models[rng_int(&seed, NMODELS)];
		const struct cluster *c = &clusters[rng_int(&seed, NCLUSTERS)];
		struct framework fast = frameworks[rng_int(&seed, NFRAMEWORKS)], slow;
		struct estimate_options opt = { COLL_ALGO_RING, NULL, &fast };
		struct estimate a, b;
		struct plan_error err;
		struct plan p;

		fast.elementwise = FRAMEWORK_EW_FUSED;
		fast.attention_kernel = FRAMEWORK_ATTN_PROFILE;
		fast.selective_recompute = FRAMEWORK_SAC_ATTENTION;
		slow = fast;
		slow.elementwise = FRAMEWORK_EW_EAGER;
		slow.attention_kernel = FRAMEWORK_ATTN_FA2;
		slow.selective_recompute = FRAMEWORK_SAC_OP;
		/* ... and so do fixed costs on top: per gather, per rank of a
		 * gather's group, copies of the gathered tensor and of the
		 * reduced gradient. */
		slow.gather_overhead_s += 1e-5;
		slow.gather_rank_overhead_s += 1e-6;
		slow.gather_copy_passes += 1.0;
		slow.reduce_copy_passes += 1.0;
		random_plan(&seed, m, c, &p);
		plan_error_clear(&err);
		if (!estimate_plan(m, c, &p, &opt, &a, &err))
			continue;
		opt.framework = &slow;
		ck_assert_msg(estimate_plan(m, c, &p, &opt, &b, &err), "case %d: %s", n, err.message);
		if (b.iteration_time_s < a.iteration_time_s * (1.0 - 1e-12))
			print_case(n, m, c, &fast, &p, &a, &b);
		ck_assert_msg(b.iteration_time_s >= a.iteration_time_s * (1.0 - 1e-12),
			      "case %d: %.9g s with slower kernels, %.9g s without", n, b.iteration_time_s,
			      a.iteration_time_s);
		{
			struct cluster lat = *c;

			lat.intra.collective_latency_s += 2e-5;
			ck_assert_msg(estimate_plan(m, &lat, &p, &opt, &a, &err), "case %d: %s", n, err.message);
			if (a.iteration_time_s < b.iteration_time_s * (1.0 - 1e-12))
				print_case(n, m, c, &fast, &p, &b, &a);
			ck_assert_msg(a.iteration_time_s >= b.iteration_time_s * (1.0 - 1e-12),
				      "case %d: %.9g s with a fixed cost a collective, %.9g s without", n,
				      a.iteration_time_s, b.iteration_time_s);
		}
		compared++;
	}
	ck_assert_msg(compared >= cases / 5, "only %d of %d random plans were valid", compared, cases);
}
END_TEST

/* One random search: every plan it returns has the same properties. */
static void
run_search(unsigned long long *s, int n)
{
	const struct model *m = &models[rng_int(s, NMODELS)];
	struct cluster c = clusters[rng_int(s, NCLUSTERS)];
	struct search_options o;
	struct search_candidate top[3];
	struct search_stats st;
	struct plan_error err;
	int ntop = 0;

	if (rng_int(s, 2) == 0)
		perturb_cluster(s, &c);
	search_options_init(&o);
	o.time_limit_s = TEST_NO_TIME_LIMIT_S;
	o.gpus = 8 << rng_int(s, 3);
	o.global_batch = o.gpus * (1 << rng_int(s, 3));
	o.seq_len = 256 << rng_int(s, 4);
	o.max_pp = 4;
	o.top = 3;
	plan_error_clear(&err);
	if (!search_run(m, &c, &o, top, &ntop, &st, &err)) {
		ck_assert_msg(err.message[0], "search %d: failed without a reason", n);
		return;
	}
	for (int i = 0; i < ntop; i++) {
		struct estimate_options eo = { o.dp_algo, top[i].compressor, NULL };
		struct report rep = { m, &c, &top[i].plan, &top[i].est, &eo, top[i].compressor, NULL };

		check_fields(&rep, n);
		check_estimate(&top[i].plan, &top[i].est, n);
		ck_assert_msg(top[i].est.fits, "search %d: plan %d does not fit", n, i);
	}
}

START_TEST(test_random_searches)
{
	unsigned long long seed = rng_seed(0x5ea4c415aULL);
	int searches = test_quick() ? 4 : 24;

	for (int n = 0; n < searches; n++)
		run_search(&seed, n);
}
END_TEST

/* tp 8 x pp 1 x dp 4 of gpt-1.7b, one sequence per micro-batch. */
static void
small_plan(struct plan *p)
{
	plan_init(p);
	p->tp = 8;
	p->pp = 1;
	p->dp = 4;
	p->global_batch = 32;
	p->seq_len = 2048;
}

/* Efficiencies the schemas accept (above 0) at the slowest rates they
 * accept: the times overflow, and the core says so, naming the plan. */
START_TEST(test_overflow_is_an_error)
{
	struct cluster c = clusters[0];
	struct plan p;
	struct estimate e;
	struct plan_error err;

	c.gpu.peak_flops = UNITS_MIN_COMPUTE_FLOPS;
	c.gpu.memory_bw_Bps = UNITS_MIN_BANDWIDTH_BPS;
	c.gpu.memory_efficiency = 1e-300;
	c.gpu.gemm_efficiency_max = 1e-300;
	small_plan(&p);
	plan_error_clear(&err);
	ck_assert(!estimate_plan(&models[0], &c, &p, NULL, &e, &err));
	ck_assert_int_eq(err.kind, PLAN_ERR_PLAN);
	ck_assert_msg(strstr(err.message, "tp 8 x pp 1 x dp 4, micro-batch 1") &&
		      strstr(err.message, "not finite"), "%s", err.message);
}
END_TEST

/* Whatever reaches them, the formatters print no inf, NaN or 0 in their place. */
START_TEST(test_formatters_refuse_nonfinite)
{
	struct plan p;
	struct estimate e;
	struct plan_error err;
	struct report rep = { &models[0], &clusters[0], &p, &e, NULL, NULL, NULL };
	FILE *out = tmpfile();

	ck_assert_ptr_nonnull(out);
	small_plan(&p);
	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&models[0], &clusters[0], &p, NULL, &e, &err), "%s", err.message);
	ck_assert(field_report_finite(&rep));
	e.breakdown.dp_comm = NAN;
	ck_assert(!field_report_finite(&rep));
	ck_assert_ptr_null(format_json_object(&rep));
	ck_assert(!format_csv_row(out, &rep));
	e.breakdown.dp_comm = 0.0;
	e.iteration_time_s = INFINITY;
	ck_assert(!format_text(out, &rep));
	ck_assert_int_eq(ftell(out), 0);
	fclose(out);
}
END_TEST

static Suite *
property_suite(void)
{
	Suite *s = suite_create("property");
	TCase *tc = tcase_create("estimate");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_random_plans);
	tcase_add_test(tc, test_slower_kernels_never_faster);
	tcase_add_test(tc, test_random_searches);
	tcase_add_test(tc, test_overflow_is_an_error);
	tcase_add_test(tc, test_formatters_refuse_nonfinite);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(property_suite)
