/*
 * plan-cli sweep's options (cmd_sweep.c is the command): the study's
 * axes, every plan attribute among them, and the sweep's own switches.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "plan/numparse.h"
#include "plan/plan_attr.h"
#include "io/study.h"
#include "io/sweep_output.h"

#define SWEEP(field) offsetof(struct sweep_request, field)

/* 'a,,b', ',a' or 'a,': strtok_r skips the empty item, so a typo went by
 * as a shorter list (sweep --tp 1,,2 swept tp 1 and 2); optimize and
 * calibrate --fit refuse it, and so does the sweep. */
static bool
no_empty_item(const char *opt, const char *list)
{
	size_t n = strlen(list);

	if (n > 0 && (list[0] == ',' || list[n - 1] == ',' || strstr(list, ",,"))) {
		cli_error("%s has an empty item in '%s'", opt, list);
		return false;
	}
	return true;
}

static bool
parse_axis(const struct cli_option *o, const char *list, void *req)
{
	struct study *s = &((struct sweep_request *)req)->study;
	int kind = o->axis, existing = study_find_axis(s, kind);
	struct study_axis *a;
	char *buf, *save = NULL;
	char opt[64];
	bool ok = true;

	if (!no_empty_item(cli_option_flag(o, opt, sizeof(opt)), list))
		return false;
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

	if (!no_empty_item("--metric", list))
		return false;
	snprintf(buf, sizeof(buf), "%s", list);
	s->nmetrics = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m;

		if (!cli_choice("--metric", tok, o->choices, &m))
			return false;
		for (int i = 0; i < s->nmetrics; i++)
			if (s->metrics[i] == m) {
				cli_error("--metric names '%s' twice", tok);
				return false;
			}
		if (s->nmetrics < STUDY_MAX_METRICS)
			s->metrics[s->nmetrics++] = m;
	}
	/* --metric '' returned false with no message: status 2 and nothing said. */
	if (s->nmetrics == 0)
		cli_error("--metric expects a comma-separated list of metrics");
	return s->nmetrics > 0;
}

/* --train-tokens N: as the study's train_tokens. */
static bool
parse_train_tokens(const struct cli_option *o, const char *arg, void *req)
{
	struct study *s = &((struct sweep_request *)req)->study;
	double d;

	(void)o;
	if (!num_parse_double(arg, &d) || !(d >= 1) || d > STUDY_MAX_TRAIN_TOKENS) {
		cli_error("--train-tokens expects a number of tokens from 1 to %g, got '%s'", STUDY_MAX_TRAIN_TOKENS, arg);
		return false;
	}
	s->train_tokens = d;
	s->train_tokens_line = 0;
	return true;
}

/* --max-cells N: as the study's max_cells (the cell cap, issue 28). */
static bool
parse_max_cells(const struct cli_option *o, const char *arg, void *req)
{
	struct study *s = &((struct sweep_request *)req)->study;
	long n;

	(void)o;
	if (!num_parse_long(arg, 1, STUDY_MAX_CELLS_LIMIT, &n)) {
		cli_error("--max-cells expects a whole number of cells from 1 to %ld, got '%s'", STUDY_MAX_CELLS_LIMIT, arg);
		return false;
	}
	s->max_cells = n;
	s->max_cells_line = s->max_cells_column = 0;
	return true;
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
	CLI_FRAMEWORK_SET_ROW(0),
	AXIS_ROW("gpus", AXIS_GPUS, NULL),
	AXIS_ROW("nic-bandwidth", AXIS_NIC_BANDWIDTH, NULL),
	AXIS_ROW("intra-bandwidth", AXIS_INTRA_BANDWIDTH, NULL),
	AXIS_ROW("power-limit", AXIS_POWER_LIMIT, "the GPU's board power limit, as predict's --power-limit"),
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
		  "weak_scaling_efficiency, strong_scaling_efficiency, memory, fits, plan,\n"
		  "tokens_per_s_per_gpu, train_days, gpu_hours, gemm_wave_loss" },
	{ .name = "train-tokens", .metavar = "N", .kind = CLI_OPT_CUSTOM, .parse = parse_train_tokens,
	  .help = "tokens to train on (2e12), for the train_days and gpu_hours metrics" },
	{ .name = "max-cells", .metavar = "N", .kind = CLI_OPT_CUSTOM, .parse = parse_max_cells,
	  .help = "refuse a sweep of more than N cells (default 100000, optimize\n"
		  "mode 1000; at most 10000000)" },
	{ .name = "baseline", .metavar = "AXIS=VALUE", .kind = CLI_OPT_CUSTOM, .choices = NULL,
	  .parse = parse_baseline, .help = "the cells speedup compares with (default compressor=none)" },
	{ .name = "format", .metavar = "FMT", .kind = CLI_OPT_CHOICE, .choices = sweep_format_names,
	  .offset = SWEEP(format), .help = "md|csv|latex|json (default md)" },
	{ .name = "plot", .metavar = "FILE", .kind = CLI_OPT_STRING, .offset = SWEEP(plot),
	  .help = "draw FILE.svg|png|pdf with gnuplot" },
	{ .name = "plot-log", .metavar = "AXES", .kind = CLI_OPT_CHOICE, .choices = study_plot_log_names,
	  .offset = SWEEP(study.plot_log),
	  .help = "auto|none|x|y|xy: logarithmic plot axes (default auto: x for\n"
		  "GPUs and bandwidths, any axis whose values span a decade)" },
	{ .name = "latex-fit", .metavar = "FIT", .kind = CLI_OPT_CHOICE, .choices = study_latex_fit_names,
	  .offset = SWEEP(study.latex_fit),
	  .help = "column|page|none: a LaTeX table shrunk to the column when wider\n"
		  "(default), table* across the page, or as wide as it is" },
	{ .name = "threads", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = 64, .offset = SWEEP(threads),
	  .help = "worker threads (default: the processors)" },
	{ .name = "shard", .metavar = "I/N", .kind = CLI_OPT_CUSTOM, .parse = parse_shard,
	  .help = "only the cells i with i % N == I-1 (write --format json)" },
	/* --merge takes no value: its files are the operands. */
	{ .name = "merge", .kind = CLI_OPT_FLAG, .offset = SWEEP(merge), .label = "--merge FILE...",
	  .help = "combine the JSON of shards (the remaining arguments)" },
	CLI_HELP_ROW,
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
