#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/multimodal.h"
#include "cli/optimize_all.h"
#include "cli/optimize_baseline.h"
#include "cli/optimize_output.h"
#include "cli/options.h"
#include "plan/collective.h"
#include "plan/numparse.h"
#include "plan/plan_attr.h"
#include "plan/search.h"

/* ------------------------------------------------- optimize options */

#define STR_(x) #x
#define STR(x) STR_(x)
#define OPTIMIZE(field) offsetof(struct optimize_request, field)

const char *const cli_objective_names[] = { "time", "goodput", NULL };

/* An enum coll_algo at o->offset. */
static bool
parse_dp_algo(const struct cli_option *o, const char *arg, void *req)
{
	int v;

	if (!cli_choice("--dp-allreduce", arg, o->choices, &v))
		return false;
	*(enum coll_algo *)((char *)req + o->offset) = (enum coll_algo)v;
	return true;
}

/* optimize's --dp-allreduce: the one algorithm, no longer searched. */
static bool
parse_dp_algo_fixed(const struct cli_option *o, const char *arg, void *req)
{
	if (!parse_dp_algo(o, arg, req))
		return false;
	((struct optimize_request *)req)->so.search_dp_algo = false;
	return true;
}

static bool
parse_search_compressor(const struct cli_option *o, const char *arg, void *req)
{
	struct optimize_request *r = req;

	(void)o;
	if (r->so.ncompressors == SEARCH_MAX_COMPRESSORS) {
		cli_error("at most %d --compressor", SEARCH_MAX_COMPRESSORS);
		return false;
	}
	r->compressors[r->so.ncompressors++] = arg;
	return true;
}

static bool
parse_time_limit(const struct cli_option *o, const char *arg, void *req)
{
	double d;

	(void)o;
	if (!num_parse_double(arg, &d) || d <= 0 || d > 3600) {
		cli_error("--time-limit expects seconds in (0, 3600], got '%s'", arg);
		return false;
	}
	((struct optimize_request *)req)->so.time_limit_s = d;
	return true;
}

/*
 * optimize's --ATTR V[,V...]: the values the plan attribute may take
 * (search_options.allowed); a switch's row (--sequence-parallel,
 * --no-mics-hierarchical) allows the one value it names.
 */
static bool
parse_constraint(const struct cli_option *o, const char *arg, void *req)
{
	struct search_allowed *allowed = &((struct optimize_request *)req)->so.allowed[o->attr - 1];
	const struct plan_attr *a = &plan_attrs[o->attr - 1];
	char flag[64], why[512];
	const char *t = arg;

	cli_option_flag(o, flag, sizeof(flag));
	allowed->n = 0;
	if (a->type == PLAN_ATTR_BOOL) {
		allowed->v[allowed->n++] = o->min;
		return true;
	}
	for (;;) {
		size_t len = strcspn(t, ",");
		char value[64];
		long v;

		snprintf(value, sizeof(value), "%.*s", (int)(len < sizeof(value) ? len : sizeof(value) - 1), t);
		/* 'even,', ',even', '1,,2': was "unknown value ''" (issue 25,
		 * twenty-third session). */
		if (len == 0) {
			cli_error("%s '%.120s' has an empty value: separate the values with one ','", flag, arg);
			return false;
		}
		if (!plan_attr_parse_value(a, flag, value, &v, why, sizeof(why))) {
			cli_error("%s", why);
			return false;
		}
		if (allowed->n == SEARCH_MAX_ALLOWED) {
			cli_error("%s: more than %d values", flag, SEARCH_MAX_ALLOWED);
			return false;
		}
		if (!search_allowed_has(allowed, v) || allowed->n == 0)
			allowed->v[allowed->n++] = v;
		if (!t[len])
			return true;
		t += len + 1;
	}
}

static const struct cli_option optimize_rows[] = {
	{ .name = "model", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = OPTIMIZE(model),
	  .help = "model profile" },
	{ .name = "cluster", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = OPTIMIZE(cluster),
	  .help = "cluster profile" },
	{ .name = "gpus", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 1 << 26, .offset = OPTIMIZE(so.gpus),
	  .help = "plan for N GPUs (default: the whole cluster)" },
	{ .name = "global-batch", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = CLI_BIGINT,
	  .offset = OPTIMIZE(so.global_batch), .help = "sequences per iteration (required)" },
	/* Every plan attribute that optimize has no row of its own for, as a
	 * constraint (plan/plan_attr.h; not the per-stage lists it chooses). */
	{ .kind = CLI_OPT_ATTRS, .parse = parse_constraint, .max = PLAN_ATTR_NO_CONSTRAINT,
	  .label = "--ATTRIBUTE V[,V...]",
	  .help = "only plans with these values: any plan attribute of predict\n"
		  "(--tp 2, --zero 1,3, --precision bf16,fp8, --recompute full,\n"
		  "--sequence-parallel, --no-mics-hierarchical); see plan-cli(1)" },
	{ .name = "seq-len", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = CLI_BIGINT,
	  .offset = OPTIMIZE(so.seq_len), .help = "tokens per sequence (default: the model's)" },
	{ .name = "flash-attention", .kind = CLI_OPT_SET, .min = 1, .offset = OPTIMIZE(flash),
	  .help = "the training code uses fused attention (default: as the GPU\n"
		  "profile's flash_attention says, on from Ampere)" },
	{ .name = "no-flash-attention", .kind = CLI_OPT_SET, .min = 0, .offset = OPTIMIZE(flash),
	  .help = "it does not" },
	{ .name = "compressor", .metavar = "NAME|FILE", .kind = CLI_OPT_CUSTOM, .parse = parse_search_compressor,
	  .help = "a compressor the search may use (repeatable, up to " STR(SEARCH_MAX_COMPRESSORS) ")" },
	{ .name = "max-compressed-layers", .metavar = "N", .kind = CLI_OPT_INT, .min = 0, .max = 1 << 20,
	  .offset = OPTIMIZE(so.max_compressed_layers),
	  .help = "at most N TP-compressed layers (MCBench: early layers hurt accuracy)" },
	/* The four bounds share one line of --help (the label's last space
	 * keeps its three-space gap). */
	{ .name = "max-tp", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 1 << 16,
	  .offset = OPTIMIZE(so.max_tp), .label = "--max-tp N, --max-pp N, --max-micro-batch N, --max-vpp N ",
	  .help = "bounds of the search" },
	{ .name = "max-pp", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = PLAN_MAX_STAGES,
	  .offset = OPTIMIZE(so.max_pp) },
	{ .name = "max-micro-batch", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 1 << 16,
	  .offset = OPTIMIZE(so.max_micro_batch) },
	{ .name = "max-vpp", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 64, .offset = OPTIMIZE(so.max_vpp) },
	{ .name = "max-cp", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 1 << 16, .offset = OPTIMIZE(so.max_cp),
	  .help = "highest context-parallel degree to try (default " STR(SEARCH_DEFAULT_MAX_CP) "; with\n"
		  "--flash-attention, each rank keeping 1024 tokens or more)" },
	{ .name = "max-zero", .metavar = "N", .kind = CLI_OPT_INT, .min = 0, .max = 3, .offset = OPTIMIZE(so.max_zero),
	  .help = "highest ZeRO stage to consider, 0-3 (default 3; 3 includes MiCS)" },
	{ .name = "top", .metavar = "K", .kind = CLI_OPT_INT, .min = 1, .max = SEARCH_MAX_TOP,
	  .offset = OPTIMIZE(so.top), .help = "also show the K best plans (default " STR(SEARCH_DEFAULT_TOP) ")" },
	{ .name = "time-limit", .metavar = "S", .kind = CLI_OPT_CUSTOM, .parse = parse_time_limit,
	  .help = "seconds per MILP (default " STR(SEARCH_DEFAULT_TIME_LIMIT_S) ")" },
	{ .name = "fp8-gather", .kind = CLI_OPT_FLAG, .offset = OPTIMIZE(so.fp8_gather),
	  .help = "plans with ZeRO-3 or MiCS all-gather fp8 weights (needs --precision fp8)" },
	{ .name = "no-dp-overlap", .kind = CLI_OPT_FLAG, .offset = OPTIMIZE(so.no_dp_overlap),
	  .help = "no plan overlaps its DP/ZeRO traffic with computation" },
	{ .name = "tp-overlap", .kind = CLI_OPT_FLAG, .offset = OPTIMIZE(so.tp_overlap),
	  .help = "the framework can overlap TP collectives: plans with sequence\n"
		  "parallelism are searched with and without the overlap" },
	{ .name = "framework", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = OPTIMIZE(framework),
	  .help = "framework profile (default " CLI_DEFAULT_FRAMEWORK ")" },
	CLI_FRAMEWORK_SET_ROW(0),
	{ .name = "dp-allreduce", .metavar = "ALGO", .kind = CLI_OPT_CUSTOM, .choices = coll_algo_names,
	  .offset = OPTIMIZE(so.dp_algo), .parse = parse_dp_algo_fixed,
	  .help = "ring|hierarchical: every plan's DP collectives (default: both\n"
		  "searched where the DP group spans nodes with several GPUs each)" },
	CLI_LINK_ROWS(OPTIMIZE),
	{ .name = "objective", .metavar = "O", .kind = CLI_OPT_CHOICE, .choices = cli_objective_names,
	  .offset = OPTIMIZE(objective),
	  .help = "time|goodput: rank plans by iteration time (default) or, of the\n"
		  "top " STR(SEARCH_MAX_TOP) " by time, by goodput under --checkpoint-to" },
	CLI_CHECKPOINT_ROWS(OPTIMIZE),
	{ .name = "exhaustive", .kind = CLI_OPT_FLAG, .offset = OPTIMIZE(so.exhaustive),
	  .help = "enumerate the inner choices instead of solving MILPs" },
	{ .name = "baseline", .metavar = "SPEC", .kind = CLI_OPT_STRING, .offset = OPTIMIZE(baseline),
	  .help = "also price your plan, given as plan attributes KEY=VALUE,...\n"
		  "(tp=4,pp=8,vpp=5,recompute=none), and say term by term where\n"
		  "the best plan's gain over it comes from" },
	{ .name = "all", .metavar = "FILE", .kind = CLI_OPT_STRING, .offset = OPTIMIZE(all),
	  .help = "also write every plan the search predicted, fitting or not,\n"
		  "to FILE (.csv or .json; written whole or not at all)" },
	{ .name = "all-format", .metavar = "F", .kind = CLI_OPT_CHOICE, .choices = optimize_all_format_names,
	  .offset = OPTIMIZE(all_format), .help = "auto|csv|json: --all's format (default auto: by FILE's extension)" },
	{ .name = "explain", .kind = CLI_OPT_FLAG, .offset = OPTIMIZE(explain),
	  .help = "also the runner-up in each dimension (TP, PP, micro-batch, ...)\n"
		  "and why it is slower or does not fit" },
	CLI_TEXT_JSON_ROW(OPTIMIZE(format)),
	CLI_HELP_ROW,
	{ .name = NULL },
};

const struct cli_command_options cli_optimize_options = {
	.command = "optimize",
	.synopsis = "usage: plan-cli optimize --model NAME|FILE --cluster NAME|FILE --global-batch N [options]\n"
		    "\n"
		    "Find the fastest plan that fits: TP, PP, DP, micro-batch, interleaving, ZeRO or MiCS,\n"
		    "EP and MoE routing, and per stage the layers, the recomputation and the compression.\n"
		    "\n",
	.options = optimize_rows,
	.width = 25,
	.hint = true,
};

void
cli_optimize_request_init(struct optimize_request *r)
{
	memset(r, 0, sizeof(*r));
	search_options_init(&r->so);
	r->so.search_dp_algo = true;
	r->format = CLI_FORMAT_TEXT;
	r->flash = -1;
	checkpoint_options_init(&r->ckpt);
}

/* Whether any plan attribute is constrained (--tp 2, --zero 1,3). */
static bool
constrained(const struct search_options *so)
{
	for (int id = 0; id < PLAN_ATTR_COUNT; id++)
		if (so->allowed[id].n > 0)
			return true;
	return false;
}

/* Why nothing fits: the plan closest to fitting, or no shape at all. */
static void
report_infeasible(const struct search_options *so, const struct search_stats *st, const struct cluster *c)
{
	if (st->have_closest)
		cli_error("no feasible plan: the closest (tp %d, pp %d, dp %d, micro-batch %d, full "
			  "recompute, ZeRO %d) needs %.1f GiB per GPU on stage %d, the GPU has %.1f GiB",
			  st->closest.tp, st->closest.pp, st->closest.dp, st->closest.micro_batch, st->closest.zero,
			  st->closest_memory / 1073741824.0, st->closest_stage, st->capacity / 1073741824.0);
	else if (st->refusal[0])
		cli_error("no feasible plan: the plans of %d GPUs that meet the constraints cannot run; the "
			  "first, %s", so->gpus ? so->gpus : cluster_gpus(c), st->refusal);
	else if (constrained(so))
		cli_error("no feasible plan: no shape of %d GPUs that divides the global batch %d meets the "
			  "constraints", so->gpus ? so->gpus : cluster_gpus(c), so->global_batch);
	else
		cli_error("no feasible plan: no shape of %d GPUs divides the global batch %d",
			  so->gpus ? so->gpus : cluster_gpus(c), so->global_batch);
}

/*
 * --objective goodput: the MILP minimises iteration time, so the search
 * keeps its SEARCH_MAX_TOP fastest plans and this pass predicts the
 * checkpoints of each and sorts them by goodput (plans that shard their
 * states differently checkpoint different sizes and find different idle
 * gaps); --top of them are shown. A plan slower than the 32nd fastest is
 * never considered. Stable: equal goodput keeps the order by time.
 */
static bool
rank_by_goodput(const struct optimize_request *r, const struct model *m, const struct cluster *c,
		struct search_candidate *top, int *ntop, struct checkpoint_estimate *ck)
{
	struct estimate_options eo;
	struct plan_error err;

	plan_error_clear(&err);
	for (int i = 0; i < *ntop; i++) {
		eo = (struct estimate_options){ top[i].dp_algo, top[i].compressor, r->so.framework };
		if (!checkpoint_estimate(m, c, &top[i].plan, &eo, &top[i].est, &r->ckpt, &ck[i], &err)) {
			cli_report(&err);
			return false;
		}
	}
	for (int i = 1; i < *ntop; i++) /* insertion sort: 32 at the most */
		for (int j = i; j > 0 && ck[j].goodput_tokens_per_s > ck[j - 1].goodput_tokens_per_s; j--) {
			struct search_candidate t = top[j];
			struct checkpoint_estimate k = ck[j];

			top[j] = top[j - 1];
			top[j - 1] = t;
			ck[j] = ck[j - 1];
			ck[j - 1] = k;
		}
	if (*ntop > r->so.top)
		*ntop = r->so.top;
	return true;
}

/*
 * The fastest plan without compression, for a best plan with it: the
 * gain a compressor brings is measured against it (issue 26: "2.94x"
 * over the same plan uncompressed was 1.25x over the best plan without
 * compression). The same search, no compressor. *@found is false when
 * no plan without compression fits.
 */
static bool
best_uncompressed(const struct optimize_request *r, const struct model *m, const struct cluster *c,
		  struct search_candidate *out, bool *found, struct plan_error *err)
{
	struct search_options so = r->so;
	struct search_stats st;
	int n = 0;

	so.ncompressors = 0;
	so.max_compressed_layers = -1;
	so.top = 1;
	for (int id = 0; id < PLAN_ATTR_COUNT; id++)
		if (plan_attrs[id].flags & PLAN_ATTR_COMPRESSION)
			so.allowed[id].n = 0;
	if (!search_run(m, c, &so, out, &n, &st, err))
		return false;
	*found = n > 0;
	return true;
}

/*
 * The search into @top (*@ntop plans) and @st. --all: opened before the
 * search (a bad path fails at once), fed by the search's hook, and kept
 * once the search has run through, even when nothing fits (the file then
 * says why each plan does not). Returns the exit code.
 */
static int
search_plans(const struct optimize_request *r, const struct model *model, const struct cluster *cluster,
	     struct search_candidate *top, int *ntop, struct search_stats *st)
{
	struct search_options so = r->so;
	struct optimize_all all;
	struct plan_error err;
	bool searched;

	if (r->objective == CLI_OBJECTIVE_GOODPUT)
		so.top = SEARCH_MAX_TOP;
	plan_error_clear(&err);
	if (r->all && !optimize_all_open(&all, r->all, (enum optimize_all_format)r->all_format, r, &err))
		return cli_report(&err);
	if (r->all) {
		so.on_eval = optimize_all_plan;
		so.on_eval_ctx = &all;
	}
	searched = search_run(model, cluster, &so, top, ntop, st, &err);
	if (r->all && searched && !optimize_all_commit(&all, &err))
		return cli_report(&err);
	if (r->all && !searched)
		optimize_all_abort(&all);
	return searched ? CLI_EXIT_OK : cli_report(&err);
}

/* --explain: one search per dimension, after the main one, into *@out (the caller frees it). */
static int
explain_best(const struct optimize_request *r, const struct optimize_result *res, struct explanation **out, int *n)
{
	struct plan_error err;

	*out = calloc(EXPLAIN_MAX, sizeof(**out));
	if (!*out) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	plan_error_clear(&err);
	if (!explain_run(res->model, res->cluster, &r->so, &res->top[0], *out, n, &err))
		return cli_report(&err);
	return CLI_EXIT_OK;
}

/* Rank and print the @ntop plans the search found (@ck: room for SEARCH_MAX_TOP). */
static int
report_plans(const struct optimize_request *r, const struct model *model, const struct cluster *cluster,
	     const struct search_candidate *baseline, struct search_candidate *top, int ntop,
	     const struct search_stats *st, struct checkpoint_estimate *ck)
{
	bool goodput = r->objective == CLI_OBJECTIVE_GOODPUT, have_plain = false;
	struct explanation *explanation = NULL;
	struct search_candidate plain;
	struct plan_error err;
	int rc = CLI_EXIT_OK;

	plan_error_clear(&err);
	if (ntop == 0) {
		report_infeasible(&r->so, st, cluster);
		return CLI_EXIT_INFEASIBLE;
	}
	if (goodput && !rank_by_goodput(r, model, cluster, top, &ntop, ck))
		return CLI_EXIT_USAGE;
	if (top[0].compressor && !best_uncompressed(r, model, cluster, &plain, &have_plain, &err))
		return cli_report(&err);

	struct optimize_result res = { .req = r, .model = model, .cluster = cluster, .top = top, .ntop = ntop,
				       .stats = st, .ckpt = goodput ? ck : NULL, .baseline = baseline,
				       .uncompressed = top[0].compressor ? (have_plain ? &plain : NULL) : NULL,
				       .uncompressed_searched = top[0].compressor != NULL };

	if (r->explain) {
		rc = explain_best(r, &res, &explanation, &res.nexplain);
		res.explain = explanation;
	}
	if (rc == CLI_EXIT_OK)
		rc = cli_finish(optimize_write(&res, r->format));
	free(explanation);
	return rc;
}

/* Search and print; the profiles are loaded. */
static int
run(const struct optimize_request *r, const struct model *model, const struct cluster *cluster,
    const struct search_candidate *baseline)
{
	struct search_candidate *top = calloc(SEARCH_MAX_TOP, sizeof(*top));
	struct checkpoint_estimate *ck = calloc(SEARCH_MAX_TOP, sizeof(*ck));
	struct search_stats st;
	int ntop = 0, rc;

	if (!top || !ck) {
		free(top);
		free(ck);
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	rc = search_plans(r, model, cluster, top, &ntop, &st);
	if (rc == CLI_EXIT_OK)
		rc = report_plans(r, model, cluster, baseline, top, ntop, &st, ck);
	free(top);
	free(ck);
	return rc;
}

/*
 * The search takes the one value of a "kept as given" constraint (and
 * each of a list in turn); then the options that need one another.
 * Returns the exit code.
 */
static int
settle_request(struct optimize_request *r)
{
	const struct search_allowed *prec = &r->so.allowed[PLAN_ATTR_PRECISION];
	const struct search_allowed *recipe = &r->so.allowed[PLAN_ATTR_FP8_RECIPE];

	if (prec->n == 1)
		r->so.precision = (int)prec->v[0];
	if (r->so.allowed[PLAN_ATTR_CP_METHOD].n == 1)
		r->so.cp_method = (int)r->so.allowed[PLAN_ATTR_CP_METHOD].v[0];
	if (r->so.allowed[PLAN_ATTR_MOE_OVERLAP].n == 1)
		r->so.moe_overlap = (int)r->so.allowed[PLAN_ATTR_MOE_OVERLAP].v[0];
	if (r->so.fp8_gather && !(prec->n > 0 && search_allowed_has(prec, PLAN_PRECISION_FP8))) {
		cli_error("--fp8-gather needs --precision fp8 (the weights it gathers are fp8)");
		return CLI_EXIT_USAGE;
	}
	if (recipe->n > 0 && !(recipe->n == 1 && recipe->v[0] == PLAN_FP8_FRAMEWORK) &&
	    !(prec->n > 0 && search_allowed_has(prec, PLAN_PRECISION_FP8))) {
		cli_error("--fp8-recipe needs --precision fp8 (a recipe scales fp8 tensors; fp4 runs NVFP4)");
		return CLI_EXIT_USAGE;
	}
	if ((r->objective == CLI_OBJECTIVE_GOODPUT) != (r->ckpt.target != CHECKPOINT_NONE)) {
		cli_error(r->ckpt.target != CHECKPOINT_NONE ? "--checkpoint-to needs --objective goodput" :
			  "--objective goodput needs --checkpoint-to cpu or storage");
		return CLI_EXIT_USAGE;
	}
	if (!cli_checkpoint_check(&r->ckpt))
		return CLI_EXIT_USAGE;
	return CLI_EXIT_OK;
}

/* DistMM: GPU splits between the submodules (cli/multimodal.c). */
static int
optimize_multimodal(struct optimize_request *r)
{
	if (r->baseline) {
		cli_error("--baseline takes one model's plan; for a multimodal model, price yours with "
			  "predict --submodule");
		return CLI_EXIT_USAGE;
	}
	if (r->all) {
		cli_error("--all takes one model's search; a multimodal model's splits are not written");
		return CLI_EXIT_USAGE;
	}
	return cli_optimize_multimodal(r);
}

/*
 * The profiles @r names, into @model, @compressors (one per --compressor),
 * @framework and @cluster, which @r's search options then point to.
 * Returns the exit code; on success the caller releases @cluster.
 */
static int
load_profiles(struct optimize_request *r, struct model *model, struct compressor *compressors,
	      struct framework *framework, struct cluster *cluster)
{
	int rc;

	if ((rc = cli_load_model(r->model, model)) != CLI_EXIT_OK)
		return rc;
	for (int i = 0; i < r->so.ncompressors; i++) {
		if ((rc = cli_load_compressor(r->compressors[i], &compressors[i])) != CLI_EXIT_OK)
			return rc;
		r->so.compressors[i] = &compressors[i];
	}
	if ((rc = cli_load_framework(r->framework ? r->framework : CLI_DEFAULT_FRAMEWORK, framework)) != CLI_EXIT_OK)
		return rc;
	r->so.framework = framework;
	if ((rc = cli_load_cluster_links(r->cluster, &r->links, cluster)) != CLI_EXIT_OK)
		return rc;
	r->so.flash_attention = gpu_plan_flash_attention(&cluster->gpu, r->flash);
	return CLI_EXIT_OK;
}

int
cmd_optimize(int argc, char **argv)
{
	static struct optimize_request r;
	static struct compressor compressors[SEARCH_MAX_COMPRESSORS];
	static struct search_candidate baseline;
	struct framework framework;
	struct model model;
	struct cluster cluster;
	int rc;

	cli_optimize_request_init(&r);
	if ((rc = cli_options_parse(&cli_optimize_options, argc, argv, &r)) >= 0)
		return rc;
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (!r.model || !r.cluster || r.so.global_batch == 0) {
		cli_error("optimize needs --model, --cluster and --global-batch (see 'plan-cli optimize --help')");
		return CLI_EXIT_USAGE;
	}
	if ((rc = settle_request(&r)) != CLI_EXIT_OK)
		return rc;
	if (cli_model_is_multimodal(r.model))
		return optimize_multimodal(&r);
	if ((rc = load_profiles(&r, &model, compressors, &framework, &cluster)) != CLI_EXIT_OK)
		return rc;
	/* plan-cli cpag: DSA's context parallelism is the all-gather only
	 * (plan.c validate_cp): with no --cp-method, its CP candidates use it. */
	if (model_has_dsa(&model) && r.so.allowed[PLAN_ATTR_CP_METHOD].n == 0)
		r.so.cp_method = PLAN_CP_ALLGATHER;
	/* plan-cli moeovl: an overlap the framework's dispatcher cannot take
	 * refuses every candidate alike: said once, before the search. */
	if (r.so.moe_overlap != PLAN_MOE_OVERLAP_NONE) {
		struct plan_error e;
		struct plan probe;

		plan_init(&probe);
		probe.moe_overlap = r.so.moe_overlap;
		if (!estimate_check_moe_overlap(&probe, &framework, &e)) {
			cli_error("%s", e.message);
			cluster_release(&cluster);
			return CLI_EXIT_USAGE;
		}
	}
	/* The baseline first: a typo in it fails before the search. */
	if (r.baseline && !cli_optimize_baseline(&r, &model, &cluster, &baseline))
		rc = CLI_EXIT_USAGE;
	else
		rc = run(&r, &model, &cluster, r.baseline ? &baseline : NULL);
	cluster_release(&cluster);
	return rc;
}
