#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/multimodal.h"
#include "cli/optimize_output.h"
#include "cli/options.h"
#include "plan/search.h"

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

/* Search and print; the profiles are loaded. */
static int
run(struct optimize_request *r, const struct model *model, const struct cluster *cluster)
{
	struct search_candidate *top = calloc(SEARCH_MAX_TOP, sizeof(*top));
	struct checkpoint_estimate *ck = calloc(SEARCH_MAX_TOP, sizeof(*ck));
	bool goodput = r->objective == CLI_OBJECTIVE_GOODPUT;
	struct search_options so = r->so;
	struct explanation *explain = NULL;
	struct search_stats st;
	struct plan_error err;
	int ntop = 0, rc;

	if (!top || !ck) {
		free(top);
		free(ck);
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	if (goodput)
		so.top = SEARCH_MAX_TOP;
	plan_error_clear(&err);
	if (!search_run(model, cluster, &so, top, &ntop, &st, &err)) {
		rc = cli_report(&err);
	} else if (ntop == 0) {
		report_infeasible(&r->so, &st, cluster);
		rc = CLI_EXIT_INFEASIBLE;
	} else if (goodput && !rank_by_goodput(r, model, cluster, top, &ntop, ck)) {
		rc = CLI_EXIT_USAGE;
	} else {
		struct optimize_result res = { .req = r, .model = model, .cluster = cluster, .top = top, .ntop = ntop,
					       .stats = &st, .ckpt = goodput ? ck : NULL };

		rc = CLI_EXIT_OK;
		if (r->explain) {
			/* One search per dimension, after the main one. */
			explain = calloc(EXPLAIN_MAX, sizeof(*explain));
			if (!explain) {
				cli_error("out of memory");
				rc = CLI_EXIT_FAILURE;
			} else if (!explain_run(model, cluster, &r->so, &top[0], explain, &res.nexplain, &err)) {
				rc = cli_report(&err);
			}
			res.explain = explain;
		}
		if (rc == CLI_EXIT_OK)
			rc = cli_finish(optimize_write(&res, r->format));
	}
	free(explain);
	free(top);
	free(ck);
	return rc;
}

int
cmd_optimize(int argc, char **argv)
{
	static struct optimize_request r;
	static struct compressor compressors[SEARCH_MAX_COMPRESSORS];
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
	/* The search takes the one value of a "kept as given" constraint
	 * (and each of a list in turn). */
	const struct search_allowed *prec = &r.so.allowed[PLAN_ATTR_PRECISION];

	if (prec->n == 1)
		r.so.precision = (int)prec->v[0];
	if (r.so.allowed[PLAN_ATTR_CP_METHOD].n == 1)
		r.so.cp_method = (int)r.so.allowed[PLAN_ATTR_CP_METHOD].v[0];
	if (r.so.allowed[PLAN_ATTR_MOE_OVERLAP].n == 1)
		r.so.moe_overlap = (int)r.so.allowed[PLAN_ATTR_MOE_OVERLAP].v[0];
	if (r.so.fp8_gather && !(prec->n > 0 && search_allowed_has(prec, PLAN_PRECISION_FP8))) {
		cli_error("--fp8-gather needs --precision fp8 (the weights it gathers are fp8)");
		return CLI_EXIT_USAGE;
	}
	if ((r.objective == CLI_OBJECTIVE_GOODPUT) != (r.ckpt.target != CHECKPOINT_NONE)) {
		cli_error(r.ckpt.target != CHECKPOINT_NONE ? "--checkpoint-to needs --objective goodput" :
			  "--objective goodput needs --checkpoint-to cpu or storage");
		return CLI_EXIT_USAGE;
	}
	if (!cli_checkpoint_check(&r.ckpt))
		return CLI_EXIT_USAGE;
	/* DistMM: GPU splits between the submodules (cli/multimodal.c). */
	if (cli_model_is_multimodal(r.model))
		return cli_optimize_multimodal(&r);
	if ((rc = cli_load_model(r.model, &model)) != CLI_EXIT_OK)
		return rc;
	for (int i = 0; i < r.so.ncompressors; i++) {
		if ((rc = cli_load_compressor(r.compressors[i], &compressors[i])) != CLI_EXIT_OK)
			return rc;
		r.so.compressors[i] = &compressors[i];
	}
	if ((rc = cli_load_framework(r.framework ? r.framework : CLI_DEFAULT_FRAMEWORK, &framework)) != CLI_EXIT_OK)
		return rc;
	r.so.framework = &framework;
	if ((rc = cli_load_cluster_links(r.cluster, &r.links, &cluster)) != CLI_EXIT_OK)
		return rc;
	r.so.flash_attention = gpu_plan_flash_attention(&cluster.gpu, r.flash);
	rc = run(&r, &model, &cluster);
	cluster_release(&cluster);
	return rc;
}
