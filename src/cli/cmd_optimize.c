#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "plan/compression.h"
#include "io/format.h"
#include "plan/numparse.h"
#include "plan/search.h"

static const char optimize_usage[] =
	"usage: plan-cli optimize --model NAME|FILE --cluster NAME|FILE --global-batch N [options]\n"
	"\n"
	"Find the fastest plan that fits: TP, PP, DP, micro-batch, interleaving, ZeRO or MiCS,\n"
	"EP and MoE routing, and per stage the layers, the recomputation and the compression.\n"
	"\n"
	"  --model NAME|FILE          model profile\n"
	"  --cluster NAME|FILE        cluster profile\n"
	"  --gpus N                   plan for N GPUs (default: the whole cluster)\n"
	"  --global-batch N           sequences per iteration (required)\n"
	"  --seq-len N                tokens per sequence (default: the model's)\n"
	"  --flash-attention          the training code uses fused attention\n"
	"  --moe-overlap O            none|lancet (kept as given)\n"
	"  --compressor NAME|FILE     a compressor the search may use (repeatable, up to 8)\n"
	"  --max-compressed-layers N  at most N TP-compressed layers (MCBench: early layers hurt accuracy)\n"
	"  --max-tp N, --max-pp N, --max-micro-batch N, --max-vpp N   bounds of the search\n"
	"  --max-zero N               highest ZeRO stage to consider, 0-3 (default 3; 3 includes MiCS)\n"
	"  --top K                    also show the K best plans (default 5)\n"
	"  --time-limit S             seconds per MILP (default 2)\n"
	"  --exhaustive               enumerate the inner choices instead of solving MILPs\n"
	"  --format FMT               text|json (default text)\n"
	"  -h, --help                 show this help\n";

enum {
	O_MODEL = 256, O_CLUSTER, O_GPUS, O_GB, O_SEQ, O_FLASH, O_OVERLAP, O_COMPRESSOR, O_BUDGET,
	O_MAX_TP, O_MAX_PP, O_MAX_MB, O_MAX_VPP, O_MAX_ZERO, O_TOP, O_TIME, O_EXHAUSTIVE, O_FORMAT,
};

static const struct option optimize_options[] = {
	{ "model", required_argument, NULL, O_MODEL },
	{ "cluster", required_argument, NULL, O_CLUSTER },
	{ "gpus", required_argument, NULL, O_GPUS },
	{ "global-batch", required_argument, NULL, O_GB },
	{ "seq-len", required_argument, NULL, O_SEQ },
	{ "flash-attention", no_argument, NULL, O_FLASH },
	{ "moe-overlap", required_argument, NULL, O_OVERLAP },
	{ "compressor", required_argument, NULL, O_COMPRESSOR },
	{ "max-compressed-layers", required_argument, NULL, O_BUDGET },
	{ "max-tp", required_argument, NULL, O_MAX_TP },
	{ "max-pp", required_argument, NULL, O_MAX_PP },
	{ "max-micro-batch", required_argument, NULL, O_MAX_MB },
	{ "max-vpp", required_argument, NULL, O_MAX_VPP },
	{ "max-zero", required_argument, NULL, O_MAX_ZERO },
	{ "top", required_argument, NULL, O_TOP },
	{ "time-limit", required_argument, NULL, O_TIME },
	{ "exhaustive", no_argument, NULL, O_EXHAUSTIVE },
	{ "format", required_argument, NULL, O_FORMAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The predict arguments that reproduce @cand. */
static json_t *
predict_args(const char *model, const char *cluster, const char *compressor_arg,
	     const struct search_candidate *cand)
{
	const struct plan *p = &cand->plan;
	json_t *a = json_array();
	char buf[4096];
	int rc = 0;

#define ADD(s) (rc |= json_array_append_new(a, json_string(s)))
#define ADDI(flag, v) do { snprintf(buf, sizeof(buf), "%d", (v)); ADD(flag); ADD(buf); } while (0)
	if (!a)
		return NULL;
	ADD("--model"); ADD(model);
	ADD("--cluster"); ADD(cluster);
	ADDI("--tp", p->tp);
	ADDI("--pp", p->pp);
	ADDI("--dp", p->dp);
	if (p->vpp > 1)
		ADDI("--vpp", p->vpp);
	ADDI("--micro-batch", p->micro_batch);
	ADDI("--global-batch", p->global_batch);
	ADDI("--seq-len", p->seq_len);
	if (p->sequence_parallel)
		ADD("--sequence-parallel");
	if (p->flash_attention)
		ADD("--flash-attention");
	if (p->zero)
		ADDI("--zero", p->zero);
	if (p->mics_group)
		ADDI("--mics-group", p->mics_group);
	if (p->ep > 1) {
		ADDI("--ep", p->ep);
		ADD("--moe-routing");
		ADD(plan_moe_routing_names[p->moe_routing]);
	}
	if (p->moe_overlap)
		ADD("--moe-overlap"), ADD(plan_moe_overlap_names[p->moe_overlap]);
	if (p->custom_layers) {
		int n = 0;

		for (int s = 0; s < p->pp; s++)
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%d", s ? "," : "", p->stage_layers[s]);
		ADD("--stage-layers");
		ADD(buf);
	}
	if (p->custom_recompute) {
		int n = 0;

		for (int s = 0; s < p->pp; s++)
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s%s", s ? "," : "",
				      plan_recompute_names[p->stage_recompute[s]]);
		ADD("--stage-recompute");
		ADD(buf);
	} else {
		ADD("--recompute");
		ADD(plan_recompute_names[p->recompute]);
	}
	if (cand->compressor && compressor_arg) {
		ADD("--compressor");
		ADD(compressor_arg);
		snprintf(buf, sizeof(buf), "%s%s%s%s%s", p->compress.tp ? "tp" : "",
			 p->compress.tp && p->compress.pp ? "," : "", p->compress.pp ? "pp" : "",
			 (p->compress.tp || p->compress.pp) && p->compress.dp ? "," : "",
			 p->compress.dp ? "dp" : "");
		ADD("--compress");
		ADD(buf);
		if (p->compress.tp && p->compress.from_layer >= 0)
			ADDI("--compress-from-layer", p->compress.from_layer);
		if (p->compress.pp)
			ADDI("--compress-from-stage", p->compress.from_stage);
	}
#undef ADD
#undef ADDI
	if (rc) {
		json_decref(a);
		return NULL;
	}
	return a;
}

struct opt_ctx {
	const char *model_arg, *cluster_arg;
	const char *compressor_args[SEARCH_MAX_COMPRESSORS];
	struct compressor compressors[SEARCH_MAX_COMPRESSORS];
};

static const char *
compressor_arg_of(const struct opt_ctx *x, const struct search_options *so,
		  const struct compressor *cmp)
{
	for (int i = 0; i < so->ncompressors; i++)
		if (so->compressors[i] == cmp)
			return x->compressor_args[i];
	return NULL;
}

static json_t *
candidate_json(const struct opt_ctx *x, const struct search_options *so, const struct model *m,
	       const struct cluster *c, const struct search_candidate *cand)
{
	struct estimate_options eo = { so->dp_algo, cand->compressor, so->framework };
	struct report rep = { m, c, &cand->plan, &cand->est, &eo, cand->compressor };
	json_t *o = format_json_object(&rep), *stages = json_array(), *args;
	int rc = 0, first = 1;

	args = predict_args(x->model_arg, x->cluster_arg, compressor_arg_of(x, so, cand->compressor), cand);
	if (!o || !stages || !args) {
		json_decref(o);
		json_decref(stages);
		json_decref(args);
		return NULL;
	}
	for (int s = 0; s < cand->plan.pp; s++) {
		int n = plan_stage_layers(&cand->plan, m, s);
		double mem = cand->est.stage_memory[s < ESTIMATE_MAX_STAGES ? s : ESTIMATE_MAX_STAGES - 1];
		json_t *st = json_pack("{s:i, s:i, s:i, s:s, s:f}", "stage", s, "first_layer", first,
				       "layers", n, "recompute",
				       plan_recompute_names[plan_stage_recompute(&cand->plan, s)],
				       "memory_bytes", mem);

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

static void
print_command(FILE *out, json_t *args)
{
	size_t i;
	json_t *v;

	fputs("plan-cli predict", out);
	json_array_foreach(args, i, v)
		fprintf(out, " %s", json_string_value(v));
	fputc('\n', out);
}

static int
report(const struct opt_ctx *x, const struct search_options *so, const struct model *m,
       const struct cluster *c, const struct search_candidate *top, int ntop,
       const struct search_stats *st, int format)
{
	json_t *best = candidate_json(x, so, m, c, &top[0]);
	json_t *list = json_array(), *root = json_object(), *stats;
	int rc = 0;

	stats = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}", "shapes", (json_int_t)st->shapes,
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
	for (int i = 0; i < ntop; i++) {
		json_t *o = candidate_json(x, so, m, c, &top[i]);

		if (!o)
			rc = -1;
		else
			rc |= json_array_append_new(list, o);
	}
	if (format == CLI_FORMAT_JSON) {
		rc |= json_object_set_new(root, "best", best);
		rc |= json_object_set_new(root, "top", list);
		rc |= json_object_set_new(root, "stats", stats);
		if (rc == 0)
			rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		putchar('\n');
		json_decref(root);
		return rc ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
	}
	{
		struct estimate_options eo = { so->dp_algo, top[0].compressor, so->framework };
		struct report rep = { m, c, &top[0].plan, &top[0].est, &eo, top[0].compressor };

		fputs("best plan\n", stdout);
		format_text(stdout, &rep);
		fputs("\nstages\n", stdout);
		for (int s = 0, first = 1; s < top[0].plan.pp; s++) {
			int n = plan_stage_layers(&top[0].plan, m, s);

			printf("  %3d  layers %3d-%-3d (%2d)  recompute %-9s  %.2f GiB\n", s, first, first + n - 1,
			       n, plan_recompute_names[plan_stage_recompute(&top[0].plan, s)],
			       top[0].est.stage_memory[s < ESTIMATE_MAX_STAGES ? s : ESTIMATE_MAX_STAGES - 1] /
			       1073741824.0);
			first += n;
		}
		fputs("\nthe same with predict:\n  ", stdout);
		print_command(stdout, json_object_get(best, "predict_args"));
		printf("\ntop %d\n  %-4s %10s %8s  %s\n", ntop, "rank", "time_s", "MFU", "plan");
		for (int i = 0; i < ntop; i++) {
			const struct plan *p = &top[i].plan;

			printf("  %-4d %10.4f %7.1f%%  tp %d pp %d dp %d vpp %d mb %d zero %d%s%s%s%s\n", i + 1,
			       top[i].est.iteration_time_s, 100 * top[i].est.mfu, p->tp, p->pp, p->dp, p->vpp,
			       p->micro_batch, p->zero, p->mics_group ? " mics" : "",
			       p->ep > 1 ? " ep" : "", top[i].compressor ? " +" : "",
			       top[i].compressor ? top[i].compressor->name : "");
		}
		printf("\nsearch: %ld shapes, %ld pruned by the lower bound, %ld MILPs (%ld could not beat the "
		       "top %d, %ld timed out), %ld plans predicted, %ld without a fitting layout, %.3f s\n",
		       st->shapes, st->pruned, st->milps, st->cut, ntop, st->milp_timeouts, st->evaluations,
		       st->infeasible, st->seconds);
		json_decref(best);
		json_decref(list);
		json_decref(root);
		json_decref(stats);
	}
	return CLI_EXIT_OK;
}

int
cmd_optimize(int argc, char **argv)
{
	static struct opt_ctx x;
	struct search_options so = { 0 };
	struct search_candidate *top;
	struct search_stats st;
	struct plan_error err;
	struct model model;
	struct cluster cluster;
	int format = CLI_FORMAT_TEXT, c, rc, ntop = 0, v = CLI_FORMAT_TEXT;
	double d;

	memset(&x, 0, sizeof(x));
	so.top = 5;
	so.max_zero = -1;
	so.max_compressed_layers = -1;
	so.time_limit_s = 2.0;
	so.dp_algo = COLL_ALGO_RING;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", optimize_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(optimize_usage, stdout);
			return cli_finish(CLI_EXIT_OK);
		case O_MODEL: x.model_arg = optarg; break;
		case O_CLUSTER: x.cluster_arg = optarg; break;
		case O_GPUS: if (!cli_int("--gpus", optarg, 1, 1 << 26, &so.gpus)) return CLI_EXIT_USAGE; break;
		case O_GB: if (!cli_int("--global-batch", optarg, 1, 100000000, &so.global_batch)) return CLI_EXIT_USAGE; break;
		case O_SEQ: if (!cli_int("--seq-len", optarg, 1, 100000000, &so.seq_len)) return CLI_EXIT_USAGE; break;
		case O_FLASH: so.flash_attention = true; break;
		case O_OVERLAP: if (!cli_choice("--moe-overlap", optarg, plan_moe_overlap_names, &so.moe_overlap)) return CLI_EXIT_USAGE; break;
		case O_COMPRESSOR:
			if (so.ncompressors == SEARCH_MAX_COMPRESSORS) {
				cli_error("at most %d --compressor", SEARCH_MAX_COMPRESSORS);
				return CLI_EXIT_USAGE;
			}
			x.compressor_args[so.ncompressors++] = optarg;
			break;
		case O_BUDGET: if (!cli_int("--max-compressed-layers", optarg, 0, 1 << 20, &so.max_compressed_layers)) return CLI_EXIT_USAGE; break;
		case O_MAX_TP: if (!cli_int("--max-tp", optarg, 1, 1 << 16, &so.max_tp)) return CLI_EXIT_USAGE; break;
		case O_MAX_PP: if (!cli_int("--max-pp", optarg, 1, PLAN_MAX_STAGES, &so.max_pp)) return CLI_EXIT_USAGE; break;
		case O_MAX_MB: if (!cli_int("--max-micro-batch", optarg, 1, 1 << 16, &so.max_micro_batch)) return CLI_EXIT_USAGE; break;
		case O_MAX_VPP: if (!cli_int("--max-vpp", optarg, 1, 64, &so.max_vpp)) return CLI_EXIT_USAGE; break;
		case O_MAX_ZERO: if (!cli_int("--max-zero", optarg, 0, 3, &so.max_zero)) return CLI_EXIT_USAGE; break;
		case O_TOP: if (!cli_int("--top", optarg, 1, SEARCH_MAX_TOP, &so.top)) return CLI_EXIT_USAGE; break;
		case O_TIME:
			if (!num_parse_double(optarg, &d) || d <= 0 || d > 3600) {
				cli_error("--time-limit expects seconds in (0, 3600], got '%s'", optarg);
				return CLI_EXIT_USAGE;
			}
			so.time_limit_s = d;
			break;
		case O_EXHAUSTIVE: so.exhaustive = true; break;
		case O_FORMAT:
			if (!cli_choice("--format", optarg, cli_format_names, &v) || v == CLI_FORMAT_CSV) {
				if (v == CLI_FORMAT_CSV)
					cli_error("optimize writes text or json");
				return CLI_EXIT_USAGE;
			}
			format = v;
			break;
		case ':':
			cli_error("option '%s' needs a value", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		default:
			cli_error("unknown option '%s' for optimize (see 'plan-cli optimize --help')", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (!x.model_arg || !x.cluster_arg || so.global_batch == 0) {
		cli_error("optimize needs --model, --cluster and --global-batch (see 'plan-cli optimize --help')");
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_load_model(x.model_arg, &model)) != CLI_EXIT_OK)
		return rc;
	for (int i = 0; i < so.ncompressors; i++) {
		if ((rc = cli_load_compressor(x.compressor_args[i], &x.compressors[i])) != CLI_EXIT_OK)
			return rc;
		so.compressors[i] = &x.compressors[i];
	}
	if ((rc = cli_load_cluster(x.cluster_arg, &cluster)) != CLI_EXIT_OK)
		return rc;
	top = calloc(SEARCH_MAX_TOP, sizeof(*top));
	if (!top) {
		cluster_release(&cluster);
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	plan_error_clear(&err);
	if (!search_run(&model, &cluster, &so, top, &ntop, &st, &err)) {
		free(top);
		cluster_release(&cluster);
		return cli_report(&err);
	}
	if (ntop == 0) {
		if (st.have_closest)
			cli_error("no feasible plan: the closest (tp %d, pp %d, dp %d, micro-batch %d, full "
				  "recompute, ZeRO %d) needs %.1f GiB per GPU on stage %d, the GPU has %.1f GiB",
				  st.closest.tp, st.closest.pp, st.closest.dp, st.closest.micro_batch, st.closest.zero,
				  st.closest_memory / 1073741824.0, st.closest_stage, st.capacity / 1073741824.0);
		else
			cli_error("no feasible plan: no shape of %d GPUs divides the global batch %d",
				  so.gpus ? so.gpus : cluster_gpus(&cluster), so.global_batch);
		free(top);
		cluster_release(&cluster);
		return CLI_EXIT_INFEASIBLE;
	}
	rc = report(&x, &so, &model, &cluster, top, ntop, &st, format);
	free(top);
	cluster_release(&cluster);
	return cli_finish(rc);
}
