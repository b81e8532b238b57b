/*
 * The options of every command, one row each (tmux's options-table.c).
 * plan-cli(1)'s OPTIONS section documents these rows; tests/cli/
 * run-options-tests.sh fails when the two name different options.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "plan/collective.h"
#include "plan/compression.h"
#include "plan/fit_link.h"
#include "plan/numparse.h"
#include "plan/plan_attr.h"
#include "plan/seqlen.h"
#include "plan/units.h"
#include "io/sweep_output.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define BIGINT 100000000L

#define PREDICT(field) offsetof(struct predict_request, field)
#define OPTIMIZE(field) offsetof(struct optimize_request, field)
#define SWEEP(field) offsetof(struct sweep_request, field)
#define VALIDATE(field) offsetof(struct validate_request, field)
#define CALIBRATE(field) offsetof(struct calibrate_request, field)

const char *const cli_objective_names[] = { "time", "goodput", NULL };

#define HELP_ROW { .name = "help", .kind = CLI_OPT_HELP, .label = "-h, --help", .help = "show this help" }

/* ------------------------------------------------------------- predict */

/* A bandwidth ("25 Gbit/s") into the double at o->offset. */
static bool
parse_bandwidth(const struct cli_option *o, const char *arg, void *req)
{
	double *out = (double *)((char *)req + o->offset);
	char opt[64], why[256] = "";

	cli_option_flag(o, opt, sizeof(opt));
	*out = 0.0;
	if (!units_parse(arg, UNIT_BANDWIDTH, out, why, sizeof(why))) {
		cli_error("%s: %s", opt, why);
		return false;
	}
	/* The profiles' minimum: below it times overflow to infinity. */
	if (*out < UNITS_MIN_BANDWIDTH_BPS) {
		cli_error("%s must be at least %s, got '%s'", opt, UNITS_MIN_BANDWIDTH_TEXT, arg);
		return false;
	}
	return true;
}

/* A real number back (a bandwidth override in bytes per second, a rate):
 * "%.17g" reads back as the same double, so predict_args reproduce the
 * prediction exactly; nothing when unset. */
static void
write_real(const struct cli_option *o, const void *req, struct cli_words *out)
{
	double v = *(const double *)((const char *)req + o->offset);
	char buf[64];

	if (v <= 0)
		return;
	snprintf(buf, sizeof(buf), "%.17g%s", v, o->parse == parse_bandwidth ? " B/s" : "");
	cli_words_add(o, buf, out);
}

/* A positive real number (a rate, hours) into the double at o->offset,
 * from 1e-6 to 1e12: an --gpu-mtbf-hours of 1e-300 passed and printed
 * 7.68e+302 failures a day, and 1e300 was "not a positive number". */
static bool
parse_positive(const struct cli_option *o, const char *arg, void *req)
{
	double *out = (double *)((char *)req + o->offset);
	char opt[64];

	if (!num_parse_double(arg, out) || !(*out >= 1e-6) || *out > 1e12) {
		cli_error("%s expects a number from 1e-6 to 1e12, got '%s'", cli_option_flag(o, opt, sizeof(opt)),
			  arg);
		return false;
	}
	return true;
}

/* Checkpoints and failures (Gemini, SOSP 2023): predict's, and optimize's
 * for --objective goodput (FIELD(ckpt) a struct checkpoint_options). */
#define CHECKPOINT_ROWS(FIELD) \
	{ .name = "checkpoint-to", .metavar = "T", .kind = CLI_OPT_CHOICE, .choices = checkpoint_target_names, \
	  .offset = FIELD(ckpt.target), .arg_before = PLAN_ATTR_FP8_GATHER + 1, \
	  .help = "none|cpu|storage: where checkpoints go (default none; cpu:\n" \
		  "Gemini's CPU memory of the machine and its peers)" }, \
	{ .name = "checkpoint-every", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = BIGINT, \
	  .offset = FIELD(ckpt.every), .arg_before = PLAN_ATTR_FP8_GATHER + 1, \
	  .help = "iterations between checkpoints (default: 1 for cpu, the\n" \
		  "Young-Daly interval for storage)" }, \
	{ .name = "checkpoint-replicas", .metavar = "M", .kind = CLI_OPT_INT, .min = 1, .max = 1 << 20, \
	  .offset = FIELD(ckpt.replicas), .arg_before = PLAN_ATTR_FP8_GATHER + 1, \
	  .help = "cpu: copies in CPU memory, the local one and M-1 peers' (default 2)" }, \
	{ .name = "storage-bandwidth", .metavar = "BW", .kind = CLI_OPT_CUSTOM, .parse = parse_bandwidth, \
	  .offset = FIELD(ckpt.storage_bandwidth_Bps), .arg_before = PLAN_ATTR_FP8_GATHER + 1, .write = write_real, \
	  .help = "remote storage for the whole job (default: the cluster's\n" \
		  "storage_bandwidth, 20 Gbit/s)" }, \
	{ .name = "failures-per-day", .metavar = "F", .kind = CLI_OPT_CUSTOM, .parse = parse_positive, \
	  .offset = FIELD(ckpt.failures_per_day), .arg_before = PLAN_ATTR_FP8_GATHER + 1, .write = write_real, \
	  .help = "failures of the whole job per day (default: from --gpu-mtbf-hours)" }, \
	{ .name = "gpu-mtbf-hours", .metavar = "H", .kind = CLI_OPT_CUSTOM, .parse = parse_positive, \
	  .offset = FIELD(ckpt.gpu_mtbf_hours), .arg_before = PLAN_ATTR_FP8_GATHER + 1, .write = write_real, \
	  .help = "mean hours between failures of one GPU (default 50000, Llama 3's)" }

/* predict's and optimize's what-if links (struct cli_links at FIELD(links)). */
#define LINK_ROWS(FIELD) \
	{ .name = "nic-bandwidth", .metavar = "BW", .kind = CLI_OPT_CUSTOM, .parse = parse_bandwidth, \
	  .offset = FIELD(links.nic_bandwidth_Bps), .arg_before = PLAN_ATTR_FP8_GATHER + 1, .write = write_real, \
	  .help = "override the cluster's per-NIC bandwidth (\"25 Gbit/s\")" }, \
	{ .name = "intra-bandwidth", .metavar = "BW", .kind = CLI_OPT_CUSTOM, .parse = parse_bandwidth, \
	  .offset = FIELD(links.intra_bandwidth_Bps), .arg_before = PLAN_ATTR_FP8_GATHER + 1, .write = write_real, \
	  .help = "override the cluster's per-GPU intra-node bandwidth" }

/* An enum coll_algo at o->offset: predict's and optimize's --dp-allreduce. */
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
	LINK_ROWS(PREDICT),
	{ .name = "framework", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = PREDICT(framework),
	  .help = "framework profile: how the software runs (default " CLI_DEFAULT_FRAMEWORK ")",
	  .arg_before = PLAN_ATTR_PRECISION + 1 },
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
	CHECKPOINT_ROWS(PREDICT),
	{ .name = "submodule", .metavar = "SPEC", .kind = CLI_OPT_CUSTOM, .parse = parse_submodule,
	  .write = write_submodule, .arg_before = PLAN_ATTR_COUNT + 1,
	  .help = "a multimodal model's submodule on its own GPUs (DistMM):\n"
		  "NAME:ATTR=V,... (any plan attribute of predict; lists with '/');\n"
		  "repeated, one per submodule (default: one plan for all, in turn)" },
	HELP_ROW,
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

/* ------------------------------------------------------------ optimize */

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

/* --format text|json (optimize and calibrate write no CSV), into the int at o->offset. */
static bool
parse_text_json(const struct cli_option *o, const char *arg, void *req)
{
	int v = CLI_FORMAT_TEXT;

	if (!cli_choice("--format", arg, o->choices, &v) || v == CLI_FORMAT_CSV) {
		if (v == CLI_FORMAT_CSV)
			cli_error("--format: this command writes text or json");
		return false;
	}
	*(int *)(void *)((char *)req + o->offset) = v;
	return true;
}

#define TEXT_JSON_ROW(off) \
	{ .name = "format", .metavar = "FMT", .kind = CLI_OPT_CUSTOM, .choices = cli_format_names, \
	  .offset = off, .parse = parse_text_json, .help = "text|json (default text)" }

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
	{ .name = "global-batch", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = BIGINT,
	  .offset = OPTIMIZE(so.global_batch), .help = "sequences per iteration (required)" },
	/* Every plan attribute that optimize has no row of its own for, as a
	 * constraint (plan/plan_attr.h; not the per-stage lists it chooses). */
	{ .kind = CLI_OPT_ATTRS, .parse = parse_constraint, .max = PLAN_ATTR_NO_CONSTRAINT,
	  .label = "--ATTRIBUTE V[,V...]",
	  .help = "only plans with these values: any plan attribute of predict\n"
		  "(--tp 2, --zero 1,3, --precision bf16,fp8, --recompute full,\n"
		  "--sequence-parallel, --no-mics-hierarchical); see plan-cli(1)" },
	{ .name = "seq-len", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = BIGINT,
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
	{ .name = "dp-allreduce", .metavar = "ALGO", .kind = CLI_OPT_CUSTOM, .choices = coll_algo_names,
	  .offset = OPTIMIZE(so.dp_algo), .parse = parse_dp_algo_fixed,
	  .help = "ring|hierarchical: every plan's DP collectives (default: both\n"
		  "searched where the DP group spans nodes with several GPUs each)" },
	LINK_ROWS(OPTIMIZE),
	{ .name = "objective", .metavar = "O", .kind = CLI_OPT_CHOICE, .choices = cli_objective_names,
	  .offset = OPTIMIZE(objective),
	  .help = "time|goodput: rank plans by iteration time (default) or, of the\n"
		  "top " STR(SEARCH_MAX_TOP) " by time, by goodput under --checkpoint-to" },
	CHECKPOINT_ROWS(OPTIMIZE),
	{ .name = "exhaustive", .kind = CLI_OPT_FLAG, .offset = OPTIMIZE(so.exhaustive),
	  .help = "enumerate the inner choices instead of solving MILPs" },
	{ .name = "explain", .kind = CLI_OPT_FLAG, .offset = OPTIMIZE(explain),
	  .help = "also the runner-up in each dimension (TP, PP, micro-batch, ...)\n"
		  "and why it is slower or does not fit" },
	TEXT_JSON_ROW(OPTIMIZE(format)),
	HELP_ROW,
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

/* --------------------------------------------------------------- sweep */

/* A comma-separated list into the axis o->axis of the request's study. */
static bool
parse_axis(const struct cli_option *o, const char *list, void *req)
{
	struct study *s = &((struct sweep_request *)req)->study;
	int kind = o->axis, existing = study_find_axis(s, kind);
	struct study_axis *a;
	char *buf, *save = NULL;
	bool ok = true;

	if (existing < 0 && s->naxes == STUDY_MAX_AXES) {
		cli_error("more than %d axes", STUDY_MAX_AXES);
		return false;
	}
	if (!(buf = strdup(list))) {
		cli_error("out of memory");
		return false;
	}
	/* On the command line an axis replaces the study's axis of that name. */
	a = existing >= 0 ? &s->axes[existing] : &s->axes[s->naxes++];
	a->kind = kind;
	study_axis_clear(a);
	for (char *tok = strtok_r(buf, ",", &save); ok && tok; tok = strtok_r(NULL, ",", &save)) {
		ok = false;
		if (a->n == STUDY_MAX_VALUES)
			cli_error("--%s: more than %d values", study_axis_name(kind), STUDY_MAX_VALUES);
		else if (strlen(tok) >= STUDY_VALUE_LEN)
			cli_error("--%s: a value longer than %d characters", study_axis_name(kind),
				  STUDY_VALUE_LEN - 1);
		else if (!study_axis_add(a, tok))
			cli_error("out of memory");
		else
			ok = true;
	}
	free(buf);
	if (ok && a->n == 0) {
		cli_error("--%s expects a comma-separated list", study_axis_name(kind));
		return false;
	}
	return ok;
}

static bool
parse_metrics(const struct cli_option *o, const char *list, void *req)
{
	struct study *s = &((struct sweep_request *)req)->study;
	char buf[512];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	s->nmetrics = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m;

		if (!cli_choice("--metric", tok, o->choices, &m))
			return false;
		if (s->nmetrics < STUDY_MAX_METRICS)
			s->metrics[s->nmetrics++] = m;
	}
	return s->nmetrics > 0;
}

/* AXIS=VALUE; the axis is found once every axis is known (sweep_baseline). */
static bool
parse_baseline(const struct cli_option *o, const char *arg, void *req)
{
	struct study *s = &((struct sweep_request *)req)->study;
	const char *eq = strchr(arg, '=');
	char axis[64];
	int kind;

	(void)o;
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(axis)) {
		cli_error("--baseline expects AXIS=VALUE, e.g. compressor=none");
		return false;
	}
	memcpy(axis, arg, (size_t)(eq - arg));
	axis[eq - arg] = '\0';
	if (!cli_choice("--baseline", axis, study_axis_names(), &kind))
		return false;
	s->baseline_axis = -2 - kind;
	snprintf(s->baseline_value, sizeof(s->baseline_value), "%s", eq + 1);
	return true;
}

static bool
parse_shard(const struct cli_option *o, const char *arg, void *req)
{
	struct sweep_request *r = req;
	const char *slash = strchr(arg, '/');
	char left[32];
	long a, b;

	(void)o;
	if (!slash || (size_t)(slash - arg) >= sizeof(left)) {
		cli_error("--shard expects I/N, e.g. 2/4");
		return false;
	}
	memcpy(left, arg, (size_t)(slash - arg));
	left[slash - arg] = '\0';
	if (!num_parse_long(left, 1, 1000000, &a) || !num_parse_long(slash + 1, 1, 1000000, &b) || a > b) {
		cli_error("--shard expects I/N with 1 <= I <= N, got '%s'", arg);
		return false;
	}
	r->shard_i = a - 1;
	r->shard_n = b;
	return true;
}

static const char *const sweep_mode_names[] = { "predict", "optimize", NULL };

/* An axis of the study (enum study_axis_kind), as an option: dashes for underscores. */
#define AXIS_ROW(opt, k, note) \
	{ .name = opt, .metavar = "LIST", .kind = CLI_OPT_AXIS, .parse = parse_axis, .axis = k, .help = note }

static const struct cli_option sweep_rows[] = {
	AXIS_ROW("model", AXIS_MODEL, NULL),
	AXIS_ROW("cluster", AXIS_CLUSTER, NULL),
	AXIS_ROW("compressor", AXIS_COMPRESSOR, "none for no compression"),
	AXIS_ROW("framework", AXIS_FRAMEWORK, NULL),
	AXIS_ROW("gpus", AXIS_GPUS, NULL),
	AXIS_ROW("nic-bandwidth", AXIS_NIC_BANDWIDTH, NULL),
	AXIS_ROW("intra-bandwidth", AXIS_INTRA_BANDWIDTH, NULL),
	/* Every plan attribute (plan/plan_attr.h) as an axis, named as in
	 * study files with dashes (this command's switches keep their names). */
	{ .kind = CLI_OPT_ATTRS, .parse = parse_axis, .axis = 1 },
	{ .name = "sequence-parallel", .kind = CLI_OPT_FLAG, .offset = SWEEP(study.sequence_parallel),
	  .help = "every cell with sequence parallelism (the study's sequence_parallel)" },
	{ .name = "flash-attention", .kind = CLI_OPT_SET, .min = 1, .offset = SWEEP(study.flash_attention),
	  .help = "every cell with fused attention (default: each cell's GPU decides)" },
	{ .name = "no-flash-attention", .kind = CLI_OPT_SET, .min = 0, .offset = SWEEP(study.flash_attention),
	  .help = "no cell with fused attention" },
	{ .name = "tp-overlap", .kind = CLI_OPT_FLAG, .offset = SWEEP(study.tp_overlap),
	  .help = "overlap the sequence-parallel collectives with their GEMMs" },
	{ .name = "no-dp-overlap", .kind = CLI_OPT_FLAG, .offset = SWEEP(study.no_dp_overlap),
	  .help = "do not overlap DP/ZeRO traffic with computation" },
	{ .name = "mode", .metavar = "predict|optimize", .kind = CLI_OPT_CHOICE, .choices = sweep_mode_names,
	  .offset = SWEEP(study.mode), .help = "fixed plans (default) or the best plan of each cell" },
	{ .name = "metric", .metavar = "LIST", .kind = CLI_OPT_CUSTOM, .choices = study_metric_names,
	  .parse = parse_metrics,
	  .help = "iteration_time, tflops_per_gpu, mfu, tokens_per_s, speedup,\n"
		  "weak_scaling_efficiency, strong_scaling_efficiency, memory, fits, plan" },
	{ .name = "baseline", .metavar = "AXIS=VALUE", .kind = CLI_OPT_CUSTOM, .choices = NULL,
	  .parse = parse_baseline, .help = "the cells speedup compares with (default compressor=none)" },
	{ .name = "format", .metavar = "FMT", .kind = CLI_OPT_CHOICE, .choices = sweep_format_names,
	  .offset = SWEEP(format), .help = "md|csv|latex|json (default md)" },
	{ .name = "plot", .metavar = "FILE", .kind = CLI_OPT_STRING, .offset = SWEEP(plot),
	  .help = "draw FILE.svg|png|pdf with gnuplot" },
	{ .name = "threads", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 64, .offset = SWEEP(threads),
	  .help = "worker threads (default: the processors)" },
	{ .name = "shard", .metavar = "I/N", .kind = CLI_OPT_CUSTOM, .parse = parse_shard,
	  .help = "only the cells i with i % N == I-1 (write --format json)" },
	/* --merge takes no value: its files are the operands. */
	{ .name = "merge", .kind = CLI_OPT_FLAG, .offset = SWEEP(merge), .label = "--merge FILE...",
	  .help = "combine the JSON of shards (the remaining arguments)" },
	HELP_ROW,
	{ .name = NULL },
};

const struct cli_command_options cli_sweep_options = {
	.command = "sweep",
	.synopsis = "usage: plan-cli sweep [STUDY.yaml] [axes] [options]\n"
		    "\n"
		    "Predict (or optimize) every cell of a study and print a table or draw a plot.\n"
		    "Axes given on the command line are comma-separated lists, crossed with one another:\n",
	.options = sweep_rows,
	.width = 23,
	.hint = true,
};

/* ------------------------------------------------------------ validate */

static bool
parse_pct(const struct cli_option *o, const char *val, void *req)
{
	double *out = (double *)((char *)req + o->offset);
	char opt[64];

	if (!num_parse_double(val, out) || *out < 0) {
		cli_error("%s expects a non-negative percentage, got '%s'", cli_option_flag(o, opt, sizeof(opt)), val);
		return false;
	}
	return true;
}

static const struct cli_option validate_rows[] = {
	/* In the synopsis, not a line of its own. */
	{ .name = "format", .metavar = "FMT", .kind = CLI_OPT_CHOICE, .choices = cli_format_names,
	  .offset = VALIDATE(format) },
	{ .name = "max-mape", .metavar = "PCT", .kind = CLI_OPT_CUSTOM, .parse = parse_pct,
	  .offset = VALIDATE(max_mape), .help = "exit with status 5 when the MAPE is above PCT percent" },
	{ .name = "max-error", .metavar = "PCT", .kind = CLI_OPT_CUSTOM, .parse = parse_pct,
	  .offset = VALIDATE(max_error), .help = "exit with status 5 when any row's |error| is above PCT percent" },
	{ .name = "help", .kind = CLI_OPT_HELP },
	{ .name = NULL },
};

const struct cli_command_options cli_validate_options = {
	.command = "validate",
	.synopsis = "usage: plan-cli validate FILE.csv [--format text|json|csv] [--max-mape PCT] [--max-error PCT]\n"
		    "\n"
		    "Predict every run of FILE.csv and compare with its measured iteration time (or\n"
		    "TFLOP/s per GPU, turned into a time with the row's flop_convention). Prints the\n"
		    "error of each row and the mean absolute percentage error (MAPE). A table of\n"
		    "published runs (model shapes and hardware in words) is turned into FILE.csv\n"
		    "by scripts/import-runs (installed as plan-cli-import-runs).\n"
		    "\n",
	.options = validate_rows,
	.width = 15,
	.hint = false,
};

/* ----------------------------------------------------------- calibrate */

static const struct cli_option calibrate_rows[] = {
	{ .name = "runs", .metavar = "FILE.csv", .kind = CLI_OPT_STRING, .offset = CALIBRATE(runs),
	  .help = "measured runs, in validate's CSV format (required)" },
	{ .name = "cluster", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = CALIBRATE(cluster),
	  .help = "the cluster profile to fit, where every run was measured (required)" },
	{ .name = "framework", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = CALIBRATE(framework),
	  .help = "framework of the runs whose CSV leaves it out; the one\n"
		  "framework.KEY fits (default: the runs' own)" },
	{ .name = "fit", .metavar = "KEY,...", .kind = CLI_OPT_STRING, .offset = CALIBRATE(fit),
	  .help = "profile keys to fit by schema path, e.g. gpu.gemm_efficiency_max,\n"
		  "inter_node.efficiency, framework.layer_overhead (default:\n"
		  "gpu.gemm_efficiency_max and the network level the runs use)" },
	{ .name = "folds", .metavar = "K", .kind = CLI_OPT_INT, .min = 2, .max = 100000, .offset = CALIBRATE(folds),
	  .help = "cross-validation folds (default: leave-one-out up to 20 runs, else 10)" },
	TEXT_JSON_ROW(CALIBRATE(format)),
	{ .name = "output", .metavar = "FILE", .kind = CLI_OPT_STRING, .offset = CALIBRATE(output),
	  .help = "write the calibrated cluster profile (required)" },
	{ .name = "framework-output", .metavar = "FILE", .kind = CLI_OPT_STRING,
	  .offset = CALIBRATE(framework_output),
	  .help = "write the calibrated framework profile (required with framework keys)" },
	HELP_ROW,
	{ .name = NULL },
};

/* ------------------------------------------------------------ fit-logs */

#define FIT(field) offsetof(struct fit_logs_request, field)

static const char *const fit_format_names[] = { "text", "json", NULL };

static const struct cli_option fit_logs_rows[] = {
	{ .name = "nccl-tests", .kind = CLI_OPT_FLAG, .offset = FIT(nccl), .label = "--nccl-tests LOG...",
	  .help = "fit a link to nccl-tests logs (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
		  "alltoall_perf, sendrecv_perf output)" },
	{ .name = "level", .metavar = "intra|inter", .kind = CLI_OPT_CHOICE, .choices = fit_link_level_names,
	  .offset = FIT(level), .help = "the link the logs measured (default: one host intra, more inter)" },
	{ .name = "gpus-per-node", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 1024,
	  .offset = FIT(gpus_per_node), .help = "GPUs per node of the runs (default: counted from the logs' hosts)" },
	{ .name = "cluster", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = FIT(cluster),
	  .help = "line rates to split bandwidth x efficiency, and the intra-node link an inter fit keeps" },
	{ .name = "gemm", .metavar = "CSV", .kind = CLI_OPT_STRING, .offset = FIT(gemm),
	  .help = "fit the GPU's GEMM efficiency to timings (m,n,k,dtype,seconds; scripts/measure-gpu.py)" },
	{ .name = "gpu", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = FIT(gpu),
	  .help = "the GPU the GEMMs ran on (its peaks; required with --gemm)" },
	{ .name = "output", .metavar = "FILE", .kind = CLI_OPT_STRING, .offset = FIT(output),
	  .help = "write the fitted intra_node:/inter_node: block or GPU profile (YAML) to FILE" },
	{ .name = "format", .metavar = "text|json", .kind = CLI_OPT_CHOICE, .choices = fit_format_names,
	  .offset = FIT(format), .help = "report format (default text)" },
	HELP_ROW,
	{ .name = NULL },
};

const struct cli_command_options cli_calibrate_options = {
	.command = "calibrate",
	.synopsis = "usage: plan-cli calibrate --runs FILE.csv --cluster NAME|FILE --output FILE [options]\n"
		    "   or: plan-cli calibrate --nccl-tests LOG... | --gemm CSV --gpu NAME|FILE [...]\n"
		    "       (the same as plan-cli fit-logs: see 'plan-cli fit-logs --help')\n"
		    "\n"
		    "Fit profile keys to measured iteration times (GSL nonlinear least squares on the\n"
		    "relative errors), report the error before and after and cross-validated, and\n"
		    "write the calibrated cluster profile.\n"
		    "\n",
	.options = calibrate_rows,
	.width = 27,
	.hint = true,
};

const struct cli_command_options cli_fit_logs_options = {
	.command = "fit-logs",
	.synopsis = "usage: plan-cli fit-logs --nccl-tests LOG... [--level intra|inter] [--gpus-per-node N]\n"
		    "                         [--cluster NAME|FILE] [--output FILE] [--format text|json]\n"
		    "   or: plan-cli fit-logs --gemm CSV --gpu NAME|FILE [--output FILE] [--format text|json]\n"
		    "\n"
		    "Fit the link parameters (bandwidth x efficiency, latency, message_half_size) of\n"
		    "collective.c's model to nccl-tests logs, or the GPU's gemm_efficiency_max,\n"
		    "gemm_overhead and fp8_gemm_ratio to GEMM timings; print them with standard\n"
		    "errors and the fit's MAPE, and write them as a profile snippet.\n"
		    "\n",
	.options = fit_logs_rows,
	.width = 28,
	.hint = true,
};

const struct cli_command_options *const cli_all_options[] = {
	&cli_predict_options, &cli_optimize_options, &cli_sweep_options, &cli_validate_options,
	&cli_calibrate_options, &cli_fit_logs_options, NULL,
};
