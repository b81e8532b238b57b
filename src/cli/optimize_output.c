/* optimize's output: text for people, JSON (documented in plan-cli(1), "optimize output"). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/optimize_output.h"
#include "cli/optimize_all.h"
#include "plan/plan_attr.h"
#include "plan/compression.h"
#include "plan/wave_loss.h"
#include "io/format.h"
#include "io/utf8.h"

static const char *
compressor_arg_of(const struct optimize_request *r, const struct compressor *cmp)
{
	for (int i = 0; i < r->so.ncompressors; i++)
		if (r->so.compressors[i] == cmp)
			return r->compressors[i];
	return NULL;
}

json_t *
optimize_predict_args(const struct optimize_request *r, const struct search_candidate *cand)
{
	struct predict_request p;

	cli_predict_request_init(&p);
	p.plan = cand->plan;
	/* Explicit either way: the default depends on the GPU profile. */
	p.flash = cand->plan.flash_attention ? 1 : 0;
	p.model = r->model;
	p.cluster = r->cluster;
	p.compressor = cand->compressor ? compressor_arg_of(r, cand->compressor) : NULL;
	p.framework = r->framework;
	p.links = r->links;
	p.opt.dp_algo = cand->dp_algo;
	if (r->objective == CLI_OBJECTIVE_GOODPUT)
		p.ckpt = r->ckpt;
	return cli_predict_args(&p);
}

static double
stage_memory(const struct search_candidate *cand, int s)
{
	return cand->est.stage_memory[s < ESTIMATE_MAX_STAGES ? s : ESTIMATE_MAX_STAGES - 1];
}

static double
best_time(const struct optimize_result *res)
{
	return res->top[0].est.iteration_time_s;
}

/* @cand as a report (with its checkpoints @ck under --objective goodput, else NULL). */
static struct report
candidate_report_of(const struct optimize_result *res, const struct search_candidate *cand,
		    const struct checkpoint_estimate *ck, struct estimate_options *eo)
{
	*eo = (struct estimate_options){ cand->dp_algo, cand->compressor, res->req->so.framework };
	return (struct report){ res->model, res->cluster, &cand->plan, &cand->est, eo, cand->compressor, ck };
}

/* Plan @i of the top list as a report. */
static struct report
candidate_report(const struct optimize_result *res, int i, struct estimate_options *eo)
{
	return candidate_report_of(res, &res->top[i], res->ckpt ? &res->ckpt[i] : NULL, eo);
}

/*
 * @cand's estimate with its GEMM wave loss, as predict shows it, into
 * @est: one more estimate after the search, never in it (it would price
 * every plan twice), for the few plans the output lists. The search's
 * estimate, without the field, where that estimate fails.
 */
static const struct estimate *
with_wave_loss(const struct optimize_result *res, const struct search_candidate *cand,
	       const struct estimate_options *eo, struct estimate *est)
{
	struct plan_error err;

	*est = cand->est;
	plan_error_clear(&err);
	return wave_loss_estimate(res->model, res->cluster, &cand->plan, eo, est, &err) ? est : &cand->est;
}

static json_t *
candidate_json_of(const struct optimize_result *res, const struct search_candidate *cand,
		  const struct checkpoint_estimate *ck)
{
	struct estimate_options eo;
	struct report rep = candidate_report_of(res, cand, ck, &eo);
	struct estimate est;
	json_t *o, *stages, *args;
	int rc = 0, first = 1;

	rep.est = with_wave_loss(res, cand, &eo, &est);
	o = format_json_object(&rep);
	stages = json_array();

	args = optimize_predict_args(res->req, cand);
	if (!o || !stages || !args) {
		json_decref(o);
		json_decref(stages);
		json_decref(args);
		return NULL;
	}
	for (int s = 0; s < cand->plan.pp; s++) {
		int n = plan_stage_layers(&cand->plan, res->model, s);
		json_t *st = json_pack("{s:i, s:i, s:i, s:s, s:i, s:f}", "stage", s, "first_layer", first,
				       "layers", n, "recompute",
				       plan_recompute_names[plan_stage_mode(&cand->plan, res->model, s)],
				       "recompute_layers", plan_stage_recompute_layers(&cand->plan, res->model, s),
				       "memory_bytes", stage_memory(cand, s));

		first += n;
		if (!st)
			rc = -1;
		else
			rc |= json_array_append_new(stages, st);
	}
	rc |= json_object_set_new(o, "stages", stages);
	rc |= json_object_set_new(o, "predict_args", args);
	if (cand->milp_slot_s > 0)
		rc |= json_object_set_new(o, "milp_slot_s", json_real(cand->milp_slot_s));
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
candidate_json(const struct optimize_result *res, int i)
{
	return candidate_json_of(res, &res->top[i], res->ckpt ? &res->ckpt[i] : NULL);
}

/*
 * --baseline: the user's plan as predict prints it (predict_args
 * included), with "spec" as given, "speedup" (its iteration time over
 * the best's: how many times faster the best is) and
 * "breakdown_difference_s", each term of its breakdown less the best's:
 * where the gain comes from.
 */
static json_t *
baseline_json(const struct optimize_result *res)
{
	const struct search_candidate *b = res->baseline, *best = &res->top[0];
	json_t *o = candidate_json_of(res, b, NULL), *diff = json_object();
	int rc = 0;

	if (!o || !diff) {
		json_decref(o);
		json_decref(diff);
		return NULL;
	}
	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++)
		rc |= json_object_set_new(diff, estimate_breakdown_name(i),
					  json_real(estimate_breakdown_get(&b->est.breakdown, i) -
						    estimate_breakdown_get(&best->est.breakdown, i)));
	rc |= json_object_set_new(o, "spec", utf8_json_string(res->req->baseline));
	rc |= json_object_set_new(o, "speedup", json_real(b->est.iteration_time_s / best->est.iteration_time_s));
	rc |= json_object_set_new(o, "breakdown_difference_s", diff);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* --exhaustive: whether every shape was enumerated (how many were not). */
static int
json_exhaustive(const struct optimize_result *res, json_t *stats)
{
	long reduced = res->stats->truncated, stopped = res->stats->exhaustive_timeouts;

	if (!res->req->so.exhaustive)
		return 0;
	return json_object_set_new(stats, "exhaustive_complete", json_boolean(reduced == 0 && stopped == 0)) |
	       json_object_set_new(stats, "exhaustive_reduced", json_integer((json_int_t)reduced)) |
	       json_object_set_new(stats, "exhaustive_timeouts", json_integer((json_int_t)stopped));
}

static json_t *explain_json_array(const struct optimize_result *res);

static int
write_json(const struct optimize_result *res)
{
	const struct search_stats *st = res->stats;
	json_t *best = candidate_json(res, 0);
	json_t *list = json_array(), *root = json_object(), *stats;
	int rc = 0;

	stats = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}", "shapes", (json_int_t)st->shapes,
			  "tie_truncated", (json_int_t)st->tie_truncated, "layout_dps", (json_int_t)st->layout_dps,
			  "milps_cut", (json_int_t)st->cut,
			  "pruned", (json_int_t)st->pruned, "milps", (json_int_t)st->milps,
			  "milp_timeouts", (json_int_t)st->milp_timeouts,
			  "evaluations", (json_int_t)st->evaluations, "infeasible", (json_int_t)st->infeasible,
			  "seconds", st->seconds, "max_milp_gap", st->max_milp_gap);
	if (!best || !list || !root || !stats) {
		json_decref(best);
		json_decref(list);
		json_decref(root);
		json_decref(stats);
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	for (int i = 0; i < res->ntop; i++) {
		json_t *o = candidate_json(res, i);

		if (!o)
			rc = -1;
		else
			rc |= json_array_append_new(list, o);
	}
	rc |= json_object_set_new(root, "best", best);
	rc |= json_object_set_new(root, "top", list);
	rc |= json_exhaustive(res, stats);
	rc |= json_object_set_new(root, "stats", stats);
	if (res->explain)
		rc |= json_object_set_new(root, "explain", explain_json_array(res));
	if (res->baseline)
		rc |= json_object_set_new(root, "baseline", baseline_json(res));
	if (res->uncompressed_searched) {
		const struct search_candidate *u = res->uncompressed;

		rc |= json_object_set_new(root, "best_uncompressed", u ? candidate_json_of(res, u, NULL) : json_null());
		rc |= json_object_set_new(root, "compression_gain",
					  u ? json_real(u->est.iteration_time_s / best_time(res)) : json_null());
	}
	if (rc == 0)
		rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	putchar('\n');
	json_decref(root);
	return rc ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

/* The best plan's layers, recomputation and memory per stage. */
static void
text_stages(const struct optimize_result *res)
{
	const struct search_candidate *best = &res->top[0];

	for (int s = 0, first = 1; s < best->plan.pp; s++) {
		int n = plan_stage_layers(&best->plan, res->model, s);

		int k = plan_stage_recompute_layers(&best->plan, res->model, s);
		char partial[64] = "";

		/* Slapo's checkpoint ratio: the first k layers in full. */
		if (k > 0 && k < n)
			snprintf(partial, sizeof(partial), "  first %d in full (r %.2f)", k, (double)k / n);
		printf("  %3d  layers %3d-%-3d (%2d)  recompute %-9s  %.2f GiB%s\n", s, first, first + n - 1,
		       n, plan_recompute_names[plan_stage_mode(&best->plan, res->model, s)],
		       stage_memory(best, s) / 1073741824.0, partial);
		first += n;
	}
}

/* Append printf(@fmt) to the string in @buf (truncating at @size). */
static void __attribute__((format(printf, 3, 4)))
words_add(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	if (n < size)
		vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/* A compressed plan's compressor, where it applies and from where. */
static void
compress_words(const struct plan *p, const struct model *m, const struct compressor *cmp, char *buf,
	       size_t size)
{
	const struct plan_compression *c = &p->compress;

	words_add(buf, size, " +%s", cmp->name);
	if (c->tp)
		words_add(buf, size, " tp>%d", plan_compress_from_layer(p, m));
	if (c->pp)
		words_add(buf, size, " pp>=%d", c->from_stage);
	if (c->dp)
		words_add(buf, size, " dp %s%s", compress_dp_scheme_names[c->dp_scheme], c->dp_on_cpu ? " cpu" : "");
}

/*
 * Every setting the search chooses for a plan in a few words (the top
 * list, reduced shapes); @layout adds the layers and recomputation per
 * stage, for plans that differ in nothing else.
 */
static void
plan_words(const struct plan *p, const struct model *m, const struct compressor *cmp, enum coll_algo algo,
	   bool layout, char *buf, size_t size)
{
	snprintf(buf, size, "tp %d pp %d dp %d", p->tp, p->pp, p->dp);
	if (p->cp > 1)
		words_add(buf, size, " cp %d %s", p->cp, plan_cp_method_names[p->cp_method]);
	words_add(buf, size, " vpp %d mb %d zero %d%s", p->vpp, p->micro_batch, p->zero,
		  p->sequence_parallel ? " sp" : "");
	/* Where --precision lists several, which one the plan runs. */
	if (p->precision != PLAN_PRECISION_BF16)
		words_add(buf, size, " %s", plan_precision_names[p->precision]);
	if (p->mics_group)
		words_add(buf, size, " mics %d%s", p->mics_group,
			  p->mics_hierarchical ? "" : " flat");
	if (algo != COLL_ALGO_RING)
		words_add(buf, size, " dp-%s", coll_algo_names[algo]);
	if (p->ep > 1)
		words_add(buf, size, " ep %d %s", p->ep, plan_moe_routing_names[p->moe_routing]);
	if (cmp)
		compress_words(p, m, cmp, buf, size);
	for (int s = 0; layout && s < p->pp; s++) {
		int n = plan_stage_layers(p, m, s), k = plan_stage_recompute_layers(p, m, s);

		words_add(buf, size, "%s%d:%s", s ? "," : " layers ", n, plan_recompute_names[plan_stage_mode(p, m, s)]);
		if (k > 0 && k < n)
			words_add(buf, size, "+%dfull", k);
	}
	/* plan-cli recomp: Megatron-Core's recompute modules and methods,
	 * where a stage of their mode uses them. */
	{
		const struct plan_attr *am = &plan_attrs[PLAN_ATTR_RECOMPUTE_MODULES];
		bool sel = false, full = false;
		char set[128];

		for (int s = 0; s < p->pp && s < PLAN_MAX_STAGES; s++) {
			sel = sel || plan_stage_recompute(p, s) == PLAN_RECOMPUTE_SELECTIVE;
			full = full || plan_stage_recompute(p, s) == PLAN_RECOMPUTE_FULL;
		}
		if (sel && p->recompute_modules)
			words_add(buf, size, " modules %s", plan_attr_format_value(am, p->recompute_modules, set, sizeof(set)));
		if (full && p->recompute_num_layers > 0)
			words_add(buf, size, " %s %d", plan_recompute_method_names[p->recompute_method],
				  p->recompute_num_layers);
	}
	/* Slapo's checkpoint ratio, where the layout is not shown. */
	if (!layout && p->custom_recompute_layers) {
		words_add(buf, size, " recompute-layers");
		for (int s = 0; s < p->pp; s++)
			words_add(buf, size, "%s%d", s ? "," : " ", plan_stage_recompute_layers(p, m, s));
	}
}

/* Whether plan @i of the top list reads as another one without its layout. */
static bool
looks_like_another(const struct optimize_result *res, int i)
{
	char a[512], b[512];

	plan_words(&res->top[i].plan, res->model, res->top[i].compressor, res->top[i].dp_algo, false, a, sizeof(a));
	for (int j = 0; j < res->ntop; j++) {
		plan_words(&res->top[j].plan, res->model, res->top[j].compressor, res->top[j].dp_algo, false, b,
			   sizeof(b));
		if (j != i && strcmp(a, b) == 0)
			return true;
	}
	return false;
}

static void
text_top(const struct optimize_result *res)
{
	printf("\ntop %d%s\n  %-4s %10s %8s  %s%s\n", res->ntop, res->ckpt ? " by goodput" : "", "rank", "time_s",
	       "MFU", res->ckpt ? "goodput_tokens_per_s  " : "", "plan");
	for (int i = 0; i < res->ntop; i++) {
		const struct search_candidate *t = &res->top[i];
		char words[4096];

		plan_words(&t->plan, res->model, t->compressor, t->dp_algo, looks_like_another(res, i), words,
			   sizeof(words));
		printf("  %-4d %10.4f %7.1f%%  ", i + 1, t->est.iteration_time_s, 100 * t->est.mfu);
		if (res->ckpt)
			printf("%20.0f  ", res->ckpt[i].goodput_tokens_per_s);
		printf("%s\n", words);
	}
}

/* A compressed best plan against the fastest plan without compression. */
static void
text_uncompressed(const struct optimize_result *res)
{
	const struct search_candidate *u = res->uncompressed;
	char words[4096];

	if (!res->uncompressed_searched)
		return;
	if (!u) {
		fputs("\nagainst plans without compression: none fits\n", stdout);
		return;
	}
	plan_words(&u->plan, res->model, NULL, u->dp_algo, false, words, sizeof(words));
	printf("\nagainst the best plan without compression (%s, %.4f s): compression gains %.3fx\n", words,
	       u->est.iteration_time_s, u->est.iteration_time_s / best_time(res));
}

/* The predict command line of @cand, after @indent. */
static bool
text_predict_args(const struct optimize_request *r, const struct search_candidate *cand, const char *indent)
{
	json_t *args = optimize_predict_args(r, cand);
	char *line;

	if (!args)
		return false;
	line = optimize_args_line(args);
	json_decref(args);
	if (!line)
		return false;
	printf("%splan-cli predict%s%s\n", indent, line[0] ? " " : "", line);
	free(line);
	return true;
}

/*
 * --baseline: the user's plan, how many times faster the best is, and the
 * terms of the breakdown that differ, the largest difference first (the
 * terms add up to the iteration time, so the differences add up to the
 * gain).
 */
static bool
text_baseline(const struct optimize_result *res)
{
	const struct search_candidate *b = res->baseline, *best = &res->top[0];
	int order[ESTIMATE_BREAKDOWN_COUNT], nterms = 0;
	char words[4096];

	if (!b)
		return true;
	plan_words(&b->plan, res->model, NULL, b->dp_algo, false, words, sizeof(words));
	printf("\nyour plan (--baseline %s)\n  %s\n  time_s %.4f, MFU %.1f%%: the best plan is %.2fx %s", res->req->baseline,
	       words, b->est.iteration_time_s, 100 * b->est.mfu, b->est.iteration_time_s / best->est.iteration_time_s,
	       b->est.iteration_time_s >= best->est.iteration_time_s ? "faster" : "as fast (yours is outside the search)");
	if (!b->est.fits)
		printf("; yours does not fit: %.1f GiB of %.1f GiB", b->est.memory.total / 1073741824.0,
		       b->est.memory_capacity_bytes / 1073741824.0);
	putchar('\n');
	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++) {
		double d = fabs(estimate_breakdown_get(&b->est.breakdown, i) - estimate_breakdown_get(&best->est.breakdown, i));
		int j = nterms++;

		/* insertion by |difference|, largest first; ties keep list order */
		for (; j > 0; j--) {
			int k = order[j - 1];

			if (fabs(estimate_breakdown_get(&b->est.breakdown, k) -
				 estimate_breakdown_get(&best->est.breakdown, k)) >= d)
				break;
			order[j] = k;
		}
		order[j] = i;
	}
	printf("  %-13s %10s %10s %11s\n", "term", "yours_s", "best_s", "difference");
	for (int j = 0; j < nterms; j++) {
		double y = estimate_breakdown_get(&b->est.breakdown, order[j]);
		double x = estimate_breakdown_get(&best->est.breakdown, order[j]);

		if (y == 0 && x == 0)
			continue;
		printf("  %-13s %10.4f %10.4f %+11.4f\n", estimate_breakdown_name(order[j]), y, x, y - x);
	}
	printf("  %-13s %10.4f %10.4f %+11.4f\n", "total", b->est.iteration_time_s, best->est.iteration_time_s,
	       b->est.iteration_time_s - best->est.iteration_time_s);
	return text_predict_args(res->req, b, "  ");
}

/* --exhaustive that could not enumerate every shape says so, and which. */
static void
text_reduced(const struct optimize_result *res)
{
	const struct search_stats *st = res->stats;
	long named = st->truncated < SEARCH_MAX_REDUCED ? st->truncated : SEARCH_MAX_REDUCED;

	if (!res->req->so.exhaustive || st->truncated == 0)
		return;
	printf("exhaustive: not complete: %ld shape%s had more than %.0f combinations of layers, "
	       "recomputation and compression, and got (near-)even layers, one recompute mode for all "
	       "stages and compression of the default layers and stages or none:\n",
	       st->truncated, st->truncated == 1 ? "" : "s", SEARCH_EXHAUSTIVE_MAX_COMBINATIONS);
	for (long i = 0; i < named; i++) {
		char words[256];

		plan_words(&st->reduced[i].shape, res->model, st->reduced[i].cmp, st->reduced[i].dp_algo, false, words,
			   sizeof(words));
		printf("  %s (%.3g combinations)\n", words, st->reduced[i].combinations);
	}
	if (st->truncated > named)
		printf("  and %ld more\n", st->truncated - named);
}

/* --exhaustive shapes that --time-limit stopped: not complete either. */
static void
text_exhaustive_timeouts(const struct optimize_result *res)
{
	long n = res->stats->exhaustive_timeouts;
	double limit = res->req->so.time_limit_s > 0 ? res->req->so.time_limit_s : SEARCH_DEFAULT_TIME_LIMIT_S;

	if (!res->req->so.exhaustive || n == 0)
		return;
	printf("exhaustive: not complete: %ld shape%s stopped by --time-limit (%g s per shape), each with the "
	       "best layout found by then\n", n, n == 1 ? "" : "s", limit);
}

/* The MILP's pass over tied layouts that stopped short: the claim of
 * exactness does not hold for those shapes, so say so. */
static void
text_ties(const struct optimize_result *res)
{
	long n = res->stats->tie_truncated;

	if (res->req->so.exhaustive || n == 0)
		return;
	printf("ties: %ld shape%s had more than %d layouts at the optimal slot (or more than %ld partial "
	       "layouts to visit); the first found were compared on iteration time\n", n, n == 1 ? "" : "s",
	       SEARCH_TIE_MAX_LAYOUTS, SEARCH_TIE_MAX_STEPS);
}

/* --explain: what each dimension is called in a reason. */
static const char *const dim_words[SEARCH_DIM_COUNT] = {
	[SEARCH_DIM_TP] = "TP degree", [SEARCH_DIM_PP] = "PP degree",
	[SEARCH_DIM_MICRO_BATCH] = "micro-batch size", [SEARCH_DIM_RECOMPUTE] = "recomputation",
	[SEARCH_DIM_ZERO] = "ZeRO stage", [SEARCH_DIM_VPP] = "interleaving (vpp)",
	[SEARCH_DIM_SP] = "sequence-parallel setting", [SEARCH_DIM_CP] = "CP degree",
	[SEARCH_DIM_EP] = "EP degree",
};

static const char *const explain_status_names[] = { "found", "infeasible", "none" };

/* A dimension's value in words: a degree, a recompute level, on or off. */
static void
dim_value_words(enum search_dim d, int v, char *buf, size_t size)
{
	if (d == SEARCH_DIM_RECOMPUTE)
		snprintf(buf, size, "%s", plan_recompute_names[v]);
	else if (d == SEARCH_DIM_SP)
		snprintf(buf, size, "%s", v ? "on" : "off");
	else
		snprintf(buf, size, "%d", v);
}

static json_t *
dim_value_json(enum search_dim d, int v)
{
	if (d == SEARCH_DIM_RECOMPUTE)
		return json_string(plan_recompute_names[v]);
	if (d == SEARCH_DIM_SP)
		return json_boolean(v);
	return json_integer(v);
}

/*
 * Why a runner-up is slower: the term of the breakdown
 * (ESTIMATE_BREAKDOWN_TERMS) that grew most, with what the estimates say
 * about it, and the one that shrank most when it is not negligible.
 */
static void
explain_breakdown(const struct optimize_result *res, const struct explanation *x, char *buf, size_t size)
{
	const struct search_candidate *best = &res->top[0], *alt = &x->cand;
	const char *up = NULL, *down = NULL;
	double up_s = 0.0, down_s = 0.0, t = best->est.iteration_time_s;

	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++) {
		double d = estimate_breakdown_get(&alt->est.breakdown, i) - estimate_breakdown_get(&best->est.breakdown, i);

		if (d > up_s) {
			up = estimate_breakdown_name(i);
			up_s = d;
		}
		if (d < down_s) {
			down = estimate_breakdown_name(i);
			down_s = d;
		}
	}
	buf[0] = '\0';
	if (!up || alt->est.iteration_time_s - t <= 1e-12 * t) {
		words_add(buf, size, "as fast as the best (a tie)");
		return;
	}
	words_add(buf, size, "%s %+.3g s", up, up_s);
	if (strcmp(up, "tp_comm") == 0 && alt->est.details.tp_inter_node && !best->est.details.tp_inter_node)
		words_add(buf, size, " (TP %d leaves the node)", alt->plan.tp);
	else if (strcmp(up, "dp_comm") == 0 && alt->est.details.dp_inter_node && !best->est.details.dp_inter_node)
		words_add(buf, size, " (DP leaves the node)");
	else if (strcmp(up, "pp_bubble") == 0)
		words_add(buf, size, " (bubble %.1f %% of ideal time, %.1f %% in the best)",
			  100 * alt->est.details.bubble_fraction, 100 * best->est.details.bubble_fraction);
	if (down && -down_s > 1e-3 * t)
		words_add(buf, size, ", %s %+.3g s", down, down_s);
}

/* Why a runner-up is slower, does not fit, or does not exist. */
static void
explain_reason(const struct optimize_result *res, const struct explanation *x, char *buf, size_t size)
{
	const double gib = 1073741824.0;

	buf[0] = '\0';
	if (x->status == EXPLAIN_NONE)
		snprintf(buf, size, "no alternative: the search space has no other %s", dim_words[x->dim]);
	else if (x->status == EXPLAIN_INFEASIBLE && !x->have_plan)
		snprintf(buf, size, "does not fit: no plan with another %s fits", dim_words[x->dim]);
	else if (x->status == EXPLAIN_INFEASIBLE)
		snprintf(buf, size, "does not fit: the closest needs %.1f GiB of %.1f on stage %d",
			 x->memory_bytes / gib, x->capacity_bytes / gib, x->memory_stage);
	else
		explain_breakdown(res, x, buf, size);
}

static json_t *
explain_json(const struct optimize_result *res, const struct explanation *x)
{
	const struct search_candidate *c = &x->cand;
	double best = res->top[0].est.iteration_time_s;
	char reason[1024], words[4096];
	json_t *o, *args = json_null();
	int rc = 0;

	explain_reason(res, x, reason, sizeof(reason));
	if (x->have_plan) {
		plan_words(&c->plan, res->model, c->compressor, c->dp_algo, false, words, sizeof(words));
		args = optimize_predict_args(res->req, c);
		/* The closest plan does not fit: predict prices it anyway. */
		if (args && !c->est.fits)
			rc |= json_array_append_new(args, json_string("--allow-oom"));
	}
	o = json_pack("{s:s, s:o, s:o, s:s, s:o, s:o, s:b, s:s, s:o, s:o}", "dimension", search_dim_names[x->dim],
		      "best_value", dim_value_json(x->dim, x->best_value), "value",
		      x->have_plan ? dim_value_json(x->dim, x->value) : json_null(), "status",
		      explain_status_names[x->status], "iteration_time_s",
		      x->have_plan ? json_real(c->est.iteration_time_s) : json_null(), "ratio",
		      x->have_plan ? json_real(c->est.iteration_time_s / best) : json_null(), "fits",
		      x->status == EXPLAIN_FOUND, "reason", reason, "plan",
		      x->have_plan ? utf8_json_string(words) : json_null(), "predict_args", args ? args : json_null());
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
explain_json_array(const struct optimize_result *res)
{
	json_t *a = json_array();

	for (int i = 0; a && i < res->nexplain; i++) {
		json_t *o = explain_json(res, &res->explain[i]);

		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* --explain: one line per dimension, and the runner-up's plan under it. */
static void
text_explain(const struct optimize_result *res)
{
	double best = res->top[0].est.iteration_time_s;

	if (!res->explain)
		return;
	printf("\nrunner-up by dimension (the best plan with one setting forced to another value)\n");
	for (int i = 0; i < res->nexplain; i++) {
		const struct explanation *x = &res->explain[i];
		char a[32], b[32], head[128], reason[1024], words[4096];

		dim_value_words(x->dim, x->best_value, a, sizeof(a));
		dim_value_words(x->dim, x->value, b, sizeof(b));
		if (x->have_plan)
			snprintf(head, sizeof(head), "%s %s -> %s", search_dim_names[x->dim], a, b);
		else
			snprintf(head, sizeof(head), "%s %s", search_dim_names[x->dim], a);
		explain_reason(res, x, reason, sizeof(reason));
		if (!x->have_plan) {
			printf("  %-28s %s\n", head, reason);
			continue;
		}
		printf("  %-28s %10.4f s %7.3fx  %s\n", head, x->cand.est.iteration_time_s,
		       x->cand.est.iteration_time_s / best, reason);
		plan_words(&x->cand.plan, res->model, x->cand.compressor, x->cand.dp_algo, false, words, sizeof(words));
		printf("  %-28s %s\n", "", words);
	}
}

static int
write_text(const struct optimize_result *res)
{
	const struct search_candidate *best = &res->top[0];
	const struct search_stats *st = res->stats;
	struct estimate_options eo;
	struct report rep = candidate_report(res, 0, &eo);
	struct estimate est;

	rep.est = with_wave_loss(res, best, &eo, &est);
	fputs("best plan\n", stdout);
	format_text(stdout, &rep);
	text_uncompressed(res);
	fputs("\nstages\n", stdout);
	text_stages(res);
	fputs("\nthe same with predict:\n", stdout);
	if (!text_predict_args(res->req, best, "  ")) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	text_top(res);
	if (!text_baseline(res)) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	text_explain(res);
	printf("\nsearch: %ld shapes, %ld pruned by the lower bound, %ld layout DPs and %ld MILPs (%ld could not "
	       "beat the top %d, %ld MILPs timed out), %ld plans predicted, %ld without a fitting layout, %.3f s\n",
	       st->shapes, st->pruned, st->layout_dps, st->milps, st->cut, res->ckpt ? SEARCH_MAX_TOP : res->ntop,
	       st->milp_timeouts, st->evaluations,
	       st->infeasible, st->seconds);
	text_reduced(res);
	text_exhaustive_timeouts(res);
	text_ties(res);
	return CLI_EXIT_OK;
}

int
optimize_write(const struct optimize_result *res, int format)
{
	return format == CLI_FORMAT_JSON ? write_json(res) : write_text(res);
}
