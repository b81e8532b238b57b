#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/multimodal.h"
#include "cli/options.h"
#include "plan/collective.h"
#include "plan/estimate.h"
#include "plan/fit_hint.h"
#include "plan/plan_attr.h"
#include "plan/seqlen.h"
#include "plan/wave_loss.h"
#include "io/seqlen_load.h"

#define GIB 1073741824.0
#include "io/format.h"

/* -------------------------------------------------- predict options */

#define PREDICT(field) offsetof(struct predict_request, field)

/* A plan attribute of predict (a row made from plan_attrs): into the plan,
 * or for flash attention the request's choice that the GPU completes. */
static bool
parse_plan_attr(const struct cli_option *o, const char *arg, void *req)
{
	struct predict_request *r = req;
	const struct plan_attr *a = &plan_attrs[o->attr - 1];
	struct plan_attr_target t = { &r->plan, &r->opt };
	char flag[64], why[512];

	if (a->type == PLAN_ATTR_BOOL) {
		if (a->flags & PLAN_ATTR_GPU_DEFAULT)
			r->flash = (int)o->min;
		else
			plan_attr_set(a, &t, o->min);
		return true;
	}
	if (o->attr - 1 == PLAN_ATTR_COMPRESS)
		r->compress_given = true;
	if (!plan_attr_parse(a, cli_option_flag(o, flag, sizeof(flag)), arg, &t, why, sizeof(why))) {
		cli_error("%s", why);
		return false;
	}
	return true;
}

/* The words that give a plan attribute back (none at its default); a
 * switch as the flag that sets its value. */
static void
write_plan_attr(const struct cli_option *o, const void *req, struct cli_words *out)
{
	const struct predict_request *r = req;
	const struct plan_attr *a = &plan_attrs[o->attr - 1];
	struct plan_attr_target t = { (struct plan *)&r->plan, (struct estimate_options *)&r->opt };
	struct cli_option flag = *o;
	char buf[4096], name[64];

	if (!plan_attr_format(a, &t, r->compressor != NULL, buf, sizeof(buf)))
		return;
	if (a->type != PLAN_ATTR_BOOL) {
		cli_words_add(o, buf, out);
		return;
	}
	/* The on form is the attribute's name, the off form "no-" and it. */
	snprintf(name, sizeof(name), "%s%s", plan_attr_get(a, &t) ? "" : "no-", a->name);
	for (char *c = name; *c; c++)
		if (*c == '_')
			*c = '-';
	flag.name = name;
	cli_words_flag(&flag, out);
}

/* --submodule NAME:ATTR=V,...: kept as given, read once the multimodal
 * model is loaded (cli/multimodal.c). */
static bool
parse_submodule(const struct cli_option *o, const char *arg, void *req)
{
	struct predict_request *r = req;

	(void)o;
	if (r->nsubmodule_args == CLI_MAX_SUBMODULE_ARGS) {
		cli_error("at most %d --submodule", CLI_MAX_SUBMODULE_ARGS);
		return false;
	}
	r->submodule_args[r->nsubmodule_args++] = arg;
	return true;
}

/* Each --submodule, after the attributes that the submodules share. */
static void
write_submodule(const struct cli_option *o, const void *req, struct cli_words *out)
{
	const struct predict_request *r = req;

	for (int k = 0; k < r->nsubmodule_args; k++)
		cli_words_add(o, r->submodule_args[k], out);
}

static const struct cli_option predict_rows[] = {
	{ .name = "model", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = PREDICT(model),
	  .help = "model profile (bundled name or YAML path)", .arg_before = PLAN_ATTR_TP + 1 },
	{ .name = "cluster", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = PREDICT(cluster),
	  .help = "cluster profile (bundled name or YAML path)", .arg_before = PLAN_ATTR_TP + 1 },
	/* Every plan attribute (plan/plan_attr.h), its help from the table. */
	{ .kind = CLI_OPT_ATTRS, .parse = parse_plan_attr, .write = write_plan_attr },
	{ .name = "gpus", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 1 << 26, .offset = PREDICT(gpus),
	  .help = "GPUs to use (default: the whole cluster)" },
	{ .name = "compressor", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = PREDICT(compressor),
	  .help = "compressor profile (bundled name or YAML path)", .arg_before = PLAN_ATTR_COMPRESS + 1 },
	CLI_LINK_ROWS(PREDICT),
	{ .name = "framework", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = PREDICT(framework),
	  .help = "framework profile: how the software runs (default " CLI_DEFAULT_FRAMEWORK ")",
	  .arg_before = PLAN_ATTR_PRECISION + 1 },
	CLI_FRAMEWORK_SET_ROW(PLAN_ATTR_PRECISION + 1),
	/* Variable-length data (DynaPipe, Jiang et al. ASPLOS 2024). */
	{ .name = "seq-lengths", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = PREDICT(seq_lengths),
	  .help = "the data's sequence lengths (CSV length,count or one a line;\n"
		  "a bundled name from datasets/): effective tokens/s" },
	{ .name = "batching", .metavar = "B", .kind = CLI_OPT_CHOICE, .choices = seqlen_batching_names,
	  .offset = PREDICT(batching),
	  .help = "pad|pack|dynamic: micro-batches of that data (default pad;\n"
		  "dynamic: DynaPipe's variable micro-batches)" },
	{ .name = "pack-attention", .metavar = "A", .kind = CLI_OPT_CHOICE, .choices = seqlen_pack_attention_names,
	  .offset = PREDICT(pack_attention),
	  .help = "full|masked: a packed row's attention (default full)" },
	{ .name = "format", .metavar = "FMT", .kind = CLI_OPT_CHOICE, .choices = cli_format_names,
	  .offset = PREDICT(format), .help = "text|json|csv (default text)" },
	{ .name = "allow-oom", .kind = CLI_OPT_FLAG, .offset = PREDICT(allow_oom),
	  .help = "exit 0 when the plan does not fit in memory (default: exit 4)" },
	CLI_CHECKPOINT_ROWS(PREDICT),
	{ .name = "submodule", .metavar = "SPEC", .kind = CLI_OPT_CUSTOM, .parse = parse_submodule,
	  .write = write_submodule, .arg_before = PLAN_ATTR_COUNT + 1,
	  .help = "a multimodal model's submodule on its own GPUs (DistMM):\n"
		  "NAME:ATTR=V,... (any plan attribute of predict; lists with '/');\n"
		  "repeated, one per submodule (default: one plan for all, in turn)" },
	{ .name = "monolithic", .kind = CLI_OPT_FLAG, .offset = PREDICT(monolithic), .arg_before = PLAN_ATTR_COUNT + 1,
	  .help = "with --submodule: each submodule's plan on all the GPUs, in\n"
		  "turn (optimize's monolithic side), not on groups of its own" },
	CLI_HELP_ROW,
	{ .name = NULL },
};

const struct cli_command_options cli_predict_options = {
	.command = "predict",
	.synopsis = "usage: plan-cli predict --model NAME|FILE --cluster NAME|FILE --global-batch N [options]\n\n",
	.options = predict_rows,
	.width = 23,
	.hint = true,
};

void
cli_predict_request_init(struct predict_request *r)
{
	memset(r, 0, sizeof(*r));
	plan_init(&r->plan);
	r->plan.tp = 1;
	r->plan.pp = 1;
	r->opt = (struct estimate_options){ COLL_ALGO_RING, NULL, NULL };
	r->format = CLI_FORMAT_TEXT;
	r->flash = -1;
	checkpoint_options_init(&r->ckpt);
	r->batching = -1;
	r->pack_attention = -1;
}

bool
cli_checkpoint_check(const struct checkpoint_options *o)
{
	const char *given = o->every ? "--checkpoint-every" : o->replicas ? "--checkpoint-replicas" :
			    o->storage_bandwidth_Bps > 0 ? "--storage-bandwidth" :
			    o->failures_per_day > 0 ? "--failures-per-day" :
			    o->gpu_mtbf_hours > 0 ? "--gpu-mtbf-hours" : NULL;

	if (o->target == CHECKPOINT_NONE && given) {
		cli_error("%s needs --checkpoint-to cpu or storage", given);
		return false;
	}
	if (o->target == CHECKPOINT_STORAGE && o->replicas) {
		cli_error("--checkpoint-replicas places copies in CPU memory; it needs --checkpoint-to cpu");
		return false;
	}
	if (o->failures_per_day > 0 && o->gpu_mtbf_hours > 0) {
		cli_error("give --failures-per-day or --gpu-mtbf-hours, not both");
		return false;
	}
	return true;
}

/* Print the prediction of @rep in @format; false on a write error. */
static bool
write_report(const struct report *rep, int format)
{
	switch (format) {
	case CLI_FORMAT_JSON:
		return format_json(stdout, rep);
	case CLI_FORMAT_CSV:
		return format_csv_header(stdout) && format_csv_row(stdout, rep);
	default:
		return format_text(stdout, rep);
	}
}

/*
 * plan-cli reviewmem: a plan over the GPU's memory by no more than the
 * slack the prediction carries, the GPU profile's reserved_memory (the
 * CUDA context and the NCCL and cuBLAS workspaces, 1 GiB by default,
 * which the caching allocator's own headroom and settings such as
 * expandable_segments move by as much), is a close call, not a sure
 * failure: say so, so that "does not fit" is not read as "cannot run".
 */
static void
report_near_miss(const struct cluster *c, const struct estimate *e)
{
	double over = e->memory.total - e->memory_capacity_bytes;

	if (over > c->gpu.reserved_bytes)
		return;
	fprintf(stderr, "plan-cli: it is over by only %.2f GiB, within the %.2f GiB the GPU profile "
		"reserves for the CUDA context, workspaces and allocator (reserved_memory): a close call "
		"that may run, e.g. with smaller NCCL buffers or PYTORCH_CUDA_ALLOC_CONF="
		"expandable_segments:True\n", over / GIB, c->gpu.reserved_bytes / GIB);
}

/*
 * A plan that does not fit: its largest memory term and the single
 * changes that would fit, fastest first, on stderr (stdout keeps the
 * report, whatever its format); the exit status says it unless
 * --allow-oom.
 */
static int
report_no_fit(const struct model *m, const struct cluster *c, const struct predict_request *r,
	      const struct estimate *e)
{
	struct fit_hint hints[FIT_HINTS_MAX];
	double bytes;
	const char *term = fit_largest_term(&e->memory, &bytes);
	int n = fit_hints(m, c, &r->plan, &r->opt, hints, 5);

	fflush(stdout); /* the report first, where both go to a terminal */
	fprintf(stderr, "plan-cli: the plan needs %.2f GiB per GPU, more than the %.2f GiB there are; "
		"the largest term is %s (%.2f GiB)\n", e->memory.total / GIB, e->memory_capacity_bytes / GIB,
		term, bytes / GIB);
	report_near_miss(c, e);
	if (n == 0)
		fputs("plan-cli: no change of recompute, ZeRO, flash attention, sequence parallelism, TP, PP or "
		      "micro-batch, alone or two together, fits; try 'plan-cli optimize'\n", stderr);
	else
		fputs("plan-cli: changes that fit, fastest first:\n", stderr);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "  %-36s %8.4f s/iteration  %7.2f GiB\n", hints[i].change,
			hints[i].iteration_time_s, hints[i].memory_bytes / GIB);
	return r->allow_oom ? CLI_EXIT_OK : CLI_EXIT_INFEASIBLE;
}

/* Load the profiles @r names and apply its overrides to them. */
static int
load_profiles(struct predict_request *r, struct model *model, struct cluster *cluster,
	      struct compressor *compressor, struct framework *framework)
{
	int rc;

	if ((rc = cli_load_model(r->model, model)) != CLI_EXIT_OK)
		return rc;
	if (r->compress_given && !r->compressor) {
		cli_error("--compress needs --compressor");
		return CLI_EXIT_USAGE;
	}
	if (r->compressor) {
		if ((rc = cli_load_compressor(r->compressor, compressor)) != CLI_EXIT_OK)
			return rc;
		r->opt.compressor = compressor;
		if (!r->compress_given)
			r->plan.compress.tp = r->plan.compress.pp = true;
	}
	if ((rc = cli_load_framework(r->framework ? r->framework : CLI_DEFAULT_FRAMEWORK, framework)) !=
	    CLI_EXIT_OK)
		return rc;
	r->opt.framework = framework;
	return cli_load_cluster_links(r->cluster, &r->links, cluster);
}

/* --seq-lengths: the plan on that data, batched as --batching says, into @e->batching. */
static bool
predict_seq_lengths(const struct predict_request *r, const struct model *m, const struct cluster *c,
		    struct estimate *e, struct plan_error *err)
{
	char path[PLAN_ERROR_FILE_LEN];
	struct seqlen_dist d;
	bool ok;

	if (!seqlen_resolve(r->seq_lengths, path, sizeof(path), err) || !seqlen_load_file(path, &d, err))
		return false;
	ok = seqlen_estimate(m, c, &r->plan, &r->opt, &d, r->batching >= 0 ? r->batching : SEQLEN_PAD,
			     r->pack_attention >= 0 ? r->pack_attention : SEQLEN_ATTN_FULL, e, err);
	seqlen_dist_release(&d);
	return ok;
}

/* The option combinations predict refuses before it loads anything. */
static bool
predict_usage_ok(const struct predict_request *r, int argc, char **argv)
{
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return false;
	}
	if (!r->model || !r->cluster || r->plan.global_batch == 0) {
		cli_error("predict needs --model, --cluster and --global-batch (see 'plan-cli predict --help')");
		return false;
	}
	if (!r->seq_lengths && (r->batching >= 0 || r->pack_attention >= 0)) {
		cli_error("--batching and --pack-attention need --seq-lengths (the data's length distribution)");
		return false;
	}
	if (r->pack_attention >= 0 && r->batching != SEQLEN_PACK) {
		cli_error("--pack-attention applies to --batching pack");
		return false;
	}
	return true;
}

/*
 * A plan error that names dp, for a plan whose dp came from the whole
 * cluster (no --gpus, no --dp): say so, since a first command without
 * --gpus gets all of the cluster's GPUs (issue 26: "global batch (512) is
 * not divisible by dp x micro-batch (4480 x 1)" named no reason).
 */
static void
note_whole_cluster(struct plan_error *err, const struct plan *p, const struct cluster *c)
{
	char tail[256];
	size_t n = strlen(err->message), k;

	if (!strstr(err->message, "dp"))
		return;
	k = (size_t)snprintf(tail, sizeof(tail), " (without --gpus the plan takes all %d GPUs of '%.64s', so dp is %d: "
			     "give --gpus N)", cluster_gpus(c), c->name, p->dp);
	if (k < sizeof(tail) && n + k < sizeof(err->message))
		memcpy(err->message + n, tail, k + 1);
}

/* Estimate the completed plan of @r, print it; the exit status.
 * @whole: its dp came from all the cluster's GPUs. */
static int
predict_run(const struct predict_request *r, const struct model *model, const struct cluster *cluster, bool whole)
{
	struct estimate est;
	struct checkpoint_estimate ckpt;
	struct plan_error err;
	struct report rep;
	bool ok;
	int rc;

	plan_error_clear(&err);
	if (!estimate_plan(model, cluster, &r->plan, &r->opt, &est, &err)) {
		if (whole)
			note_whole_cluster(&err, &r->plan, cluster);
		return cli_report(&err);
	}
	if (!wave_loss_estimate(model, cluster, &r->plan, &r->opt, &est, &err))
		return cli_report(&err);
	if (r->seq_lengths && !predict_seq_lengths(r, model, cluster, &est, &err))
		return cli_report(&err);
	if (r->ckpt.target != CHECKPOINT_NONE &&
	    !checkpoint_estimate(model, cluster, &r->plan, &r->opt, &est, &r->ckpt, &ckpt, &err))
		return cli_report(&err);
	rep = (struct report){ model, cluster, &r->plan, &est, &r->opt, r->opt.compressor,
			       r->ckpt.target != CHECKPOINT_NONE ? &ckpt : NULL };
	ok = write_report(&rep, r->format);
	if (ok && !est.fits)
		rc = report_no_fit(model, cluster, r, &est);
	else
		rc = CLI_EXIT_OK;
	if (!ok) {
		cli_output_error();
		return CLI_EXIT_FAILURE;
	}
	return cli_finish(rc);
}

int
cmd_predict(int argc, char **argv)
{
	struct predict_request r;
	struct compressor compressor;
	struct framework framework;
	struct model model;
	struct cluster cluster;
	struct plan *plan = &r.plan;
	bool whole;
	int rc;

	cli_predict_request_init(&r);
	if ((rc = cli_options_parse(&cli_predict_options, argc, argv, &r)) >= 0)
		return rc;
	if (!predict_usage_ok(&r, argc, argv))
		return CLI_EXIT_USAGE;
	/* DistMM: a multimodal model takes a plan per submodule (cli/multimodal.c). */
	if (cli_model_is_multimodal(r.model))
		return cli_predict_multimodal(&r);
	if (r.nsubmodule_args > 0 || r.monolithic) {
		cli_error("%s needs a multimodal model (kind: multimodal); '%s' is a transformer",
			  r.nsubmodule_args > 0 ? "--submodule" : "--monolithic", r.model);
		return CLI_EXIT_USAGE;
	}
	if ((rc = load_profiles(&r, &model, &cluster, &compressor, &framework)) != CLI_EXIT_OK)
		return rc;
	whole = r.gpus == 0 && plan->dp == 0;
	if (!cli_checkpoint_check(&r.ckpt))
		rc = CLI_EXIT_USAGE;
	else if (!cli_plan_complete(plan, &(struct plan_fill){ r.gpus, r.flash, framework.pipeline_split },
					&model, &cluster))
		rc = CLI_EXIT_USAGE;
	else
		rc = predict_run(&r, &model, &cluster, whole);
	cluster_release(&cluster);
	return rc;
}
