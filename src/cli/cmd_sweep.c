#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "plan/compressor.h"
#include "plan/numparse.h"
#include "io/profile_path.h"
#include "io/study.h"
#include "plan/sweep.h"
#include "io/sweep_output.h"
#include "plan/units.h"

static const char sweep_usage[] =
	"usage: plan-cli sweep [STUDY.yaml] [axes] [options]\n"
	"\n"
	"Predict (or optimize) every cell of a study and print a table or draw a plot.\n"
	"Axes given on the command line are comma-separated lists, crossed with one another:\n"
	"  --model, --cluster, --compressor (none for no compression), --gpus, --nic-bandwidth,\n"
	"  --intra-bandwidth, --global-batch, --seq-len, --tp, --pp, --dp, --vpp, --micro-batch,\n"
	"  --recompute, --zero, --ep, --moe-routing, --mics-group, --compress\n"
	"Options:\n"
	"  --mode predict|optimize  fixed plans (default) or the best plan of each cell\n"
	"  --metric LIST            iteration_time, tflops_per_gpu, mfu, tokens_per_s, speedup,\n"
	"                           weak_scaling_efficiency, strong_scaling_efficiency, memory, fits, plan\n"
	"  --baseline AXIS=VALUE    the cells speedup compares with (default compressor=none)\n"
	"  --format FMT             md|csv|latex|json (default md)\n"
	"  --plot FILE              draw FILE.svg|png|pdf with gnuplot\n"
	"  --threads N              worker threads (default: the processors)\n"
	"  --shard I/N              only the cells i with i % N == I-1 (write --format json)\n"
	"  --merge FILE...          combine the JSON of shards (the remaining arguments)\n"
	"  -h, --help               show this help\n";

#define MAX_PROFILES 64

struct cache {
	char model_names[MAX_PROFILES][STUDY_VALUE_LEN];
	struct model models[MAX_PROFILES];
	int nmodels;
	char cluster_names[MAX_PROFILES][STUDY_VALUE_LEN];
	struct cluster clusters[MAX_PROFILES];
	int nclusters;
	char compressor_names[MAX_PROFILES][STUDY_VALUE_LEN];
	struct compressor compressors[MAX_PROFILES];
	int ncompressors;
};

static void
cache_release(struct cache *k)
{
	for (int i = 0; i < k->nclusters; i++)
		cluster_release(&k->clusters[i]);
}

static int
find_or_load(struct cache *k, int kind, const char *name, const void **out)
{
	int rc;

	switch (kind) {
	case AXIS_MODEL:
		for (int i = 0; i < k->nmodels; i++)
			if (strcmp(k->model_names[i], name) == 0)
				return *out = &k->models[i], CLI_EXIT_OK;
		if (k->nmodels == MAX_PROFILES)
			break;
		if ((rc = cli_load_model(name, &k->models[k->nmodels])) != CLI_EXIT_OK)
			return rc;
		snprintf(k->model_names[k->nmodels], STUDY_VALUE_LEN, "%s", name);
		*out = &k->models[k->nmodels++];
		return CLI_EXIT_OK;
	case AXIS_CLUSTER:
		for (int i = 0; i < k->nclusters; i++)
			if (strcmp(k->cluster_names[i], name) == 0)
				return *out = &k->clusters[i], CLI_EXIT_OK;
		if (k->nclusters == MAX_PROFILES)
			break;
		if ((rc = cli_load_cluster(name, &k->clusters[k->nclusters])) != CLI_EXIT_OK)
			return rc;
		snprintf(k->cluster_names[k->nclusters], STUDY_VALUE_LEN, "%s", name);
		*out = &k->clusters[k->nclusters++];
		return CLI_EXIT_OK;
	default:
		if (strcmp(name, "none") == 0)
			return *out = NULL, CLI_EXIT_OK;
		for (int i = 0; i < k->ncompressors; i++)
			if (strcmp(k->compressor_names[i], name) == 0)
				return *out = &k->compressors[i], CLI_EXIT_OK;
		if (k->ncompressors == MAX_PROFILES)
			break;
		if ((rc = cli_load_compressor(name, &k->compressors[k->ncompressors])) != CLI_EXIT_OK)
			return rc;
		snprintf(k->compressor_names[k->ncompressors], STUDY_VALUE_LEN, "%s", name);
		*out = &k->compressors[k->ncompressors++];
		return CLI_EXIT_OK;
	}
	cli_error("a study may name at most %d profiles of each kind", MAX_PROFILES);
	return CLI_EXIT_USAGE;
}

/* The value of axis @kind for a cell: the axis's, or the fixed plan's, or NULL. */
static const char *
value_of(const struct study *s, const int *idx, int kind)
{
	int a = study_find_axis(s, kind);

	if (a >= 0)
		return s->axes[a].values[idx[a]];
	return s->fixed[kind][0] ? s->fixed[kind] : NULL;
}

static bool
int_value(const struct study *s, const int *idx, int kind, int def, int *out, char *why, size_t size)
{
	const char *v = value_of(s, idx, kind);
	long l;

	if (!v) {
		*out = def;
		return true;
	}
	if (!num_parse_long(v, 0, 100000000L, &l)) {
		snprintf(why, size, "'%s' must be a whole number, got '%s'", study_axis_names[kind], v);
		return false;
	}
	*out = (int)l;
	return true;
}

static bool
choice_value(const struct study *s, const int *idx, int kind, const char *const *names, int *out,
	     char *why, size_t size)
{
	const char *v = value_of(s, idx, kind);

	if (!v)
		return true;
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], v) == 0) {
			*out = i;
			return true;
		}
	snprintf(why, size, "unknown value '%s' for '%s'", v, study_axis_names[kind]);
	return false;
}

/* Fill one cell from the study's axes; @why gets a message when it cannot. */
static int
build_cell(const struct study *s, struct cache *k, long i, struct sweep_cell *c, char *why, size_t size)
{
	int idx[STUDY_MAX_AXES], rc, gpus = 0;
	const void *obj;
	const char *v;
	struct plan *p = &c->plan;
	double bw;

	study_cell_indices(s, i, idx);
	memset(c, 0, sizeof(*c));
	if ((rc = find_or_load(k, AXIS_MODEL, value_of(s, idx, AXIS_MODEL), &obj)) != CLI_EXIT_OK)
		return rc;
	c->model = obj;
	if ((rc = find_or_load(k, AXIS_CLUSTER, value_of(s, idx, AXIS_CLUSTER), &obj)) != CLI_EXIT_OK)
		return rc;
	c->cluster = *(const struct cluster *)obj;
	v = value_of(s, idx, AXIS_COMPRESSOR);
	if (v && (rc = find_or_load(k, AXIS_COMPRESSOR, v, &obj)) != CLI_EXIT_OK)
		return rc;
	c->compressor = v ? obj : NULL;
	for (int kind = AXIS_NIC_BANDWIDTH; kind <= AXIS_INTRA_BANDWIDTH; kind++) {
		v = value_of(s, idx, kind);
		if (!v)
			continue;
		if (!units_parse(v, UNIT_BANDWIDTH, &bw, why, size))
			return CLI_EXIT_INPUT;
		if (bw <= 0) {
			snprintf(why, size, "'%s' must be positive, got '%s'", study_axis_names[kind], v);
			return CLI_EXIT_INPUT;
		}
		if (kind == AXIS_NIC_BANDWIDTH)
			c->cluster.inter.nic_bandwidth_Bps = bw;
		else
			c->cluster.intra.bandwidth_Bps = bw;
	}
	plan_init(p);
	p->sequence_parallel = s->sequence_parallel;
	p->flash_attention = s->flash_attention;
	p->dp_overlap = !s->no_dp_overlap;
	if (!int_value(s, idx, AXIS_GPUS, cluster_gpus(&c->cluster), &gpus, why, size) ||
	    !int_value(s, idx, AXIS_TP, 1, &p->tp, why, size) ||
	    !int_value(s, idx, AXIS_PP, 1, &p->pp, why, size) ||
	    !int_value(s, idx, AXIS_DP, 0, &p->dp, why, size) ||
	    !int_value(s, idx, AXIS_VPP, 1, &p->vpp, why, size) ||
	    !int_value(s, idx, AXIS_MICRO_BATCH, 1, &p->micro_batch, why, size) ||
	    !int_value(s, idx, AXIS_GLOBAL_BATCH, 0, &p->global_batch, why, size) ||
	    !int_value(s, idx, AXIS_SEQ_LEN, c->model->seq_len, &p->seq_len, why, size) ||
	    !int_value(s, idx, AXIS_ZERO, 0, &p->zero, why, size) ||
	    !int_value(s, idx, AXIS_EP, 1, &p->ep, why, size) ||
	    !int_value(s, idx, AXIS_MICS_GROUP, 0, &p->mics_group, why, size) ||
	    !choice_value(s, idx, AXIS_RECOMPUTE, plan_recompute_names, &p->recompute, why, size) ||
	    !choice_value(s, idx, AXIS_MOE_ROUTING, plan_moe_routing_names, &p->moe_routing, why, size))
		return CLI_EXIT_INPUT;
	if (p->global_batch == 0) {
		snprintf(why, size, "the study gives no global_batch");
		return CLI_EXIT_INPUT;
	}
	if (p->dp == 0) {
		if (p->tp < 1 || p->pp < 1 || gpus % (p->tp * p->pp) != 0) {
			snprintf(why, size, "%d GPUs are not divisible by tp x pp (%d x %d)", gpus, p->tp, p->pp);
			return CLI_EXIT_INPUT;
		}
		p->dp = gpus / (p->tp * p->pp);
	}
	v = value_of(s, idx, AXIS_COMPRESS);
	if (v && strspn(v, "tpd,+") != strlen(v)) {
		snprintf(why, size, "'compress' lists tp, pp and dp, got '%.60s'", v);
		return CLI_EXIT_INPUT;
	}
	if (c->compressor) {
		const char *w = v ? v : "tp,pp";

		p->compress.tp = strstr(w, "tp") != NULL && p->tp > 1;
		p->compress.pp = strstr(w, "pp") != NULL && p->pp > 1;
		p->compress.dp = strstr(w, "dp") != NULL;
	}
	c->mode = s->mode == STUDY_OPTIMIZE ? SWEEP_OPTIMIZE : SWEEP_PREDICT;
	c->gpus = gpus;
	return CLI_EXIT_OK;
}

/* Cell number from axis indices (inverse of study_cell_indices). */
static long
cell_number(const struct study *s, const int *idx)
{
	long n = 0;
	bool zip_done = false;

	for (int a = 0; a < s->naxes; a++) {
		if (s->axes[a].zipped) {
			if (zip_done)
				continue;
			zip_done = true;
		}
		n = n * s->axes[a].n + idx[a];
	}
	return n;
}

/* Baselines and scaling groups of every cell. */
static void
link_cells(const struct study *s, struct sweep_cell *cells, long n)
{
	int g = study_find_axis(s, AXIS_GPUS);
	int base = s->baseline_axis, bval = -1;

	if (base < 0) {
		base = study_find_axis(s, AXIS_COMPRESSOR);
		if (base >= 0)
			for (int i = 0; i < s->axes[base].n; i++)
				if (strcmp(s->axes[base].values[i], "none") == 0)
					bval = i;
	} else {
		for (int i = 0; i < s->axes[base].n; i++)
			if (strcmp(s->axes[base].values[i], s->baseline_value) == 0)
				bval = i;
	}
	(void)bval;
	for (long i = 0; i < n; i++) {
		int idx[STUDY_MAX_AXES], ref[STUDY_MAX_AXES];

		study_cell_indices(s, i, idx);
		cells[i].baseline = -1;
		if (base >= 0 && bval >= 0 && !s->axes[base].zipped) {
			memcpy(ref, idx, sizeof(idx));
			ref[base] = bval;
			cells[i].baseline = cell_number(s, ref);
		}
		/* The scaling group: every axis but the GPUs (and what is zipped
		 * with them) fixed; its first cell is the reference. */
		memcpy(ref, idx, sizeof(idx));
		if (g >= 0) {
			for (int a = 0; a < s->naxes; a++)
				if (a == g || (s->axes[g].zipped && s->axes[a].zipped))
					ref[a] = 0;
		}
		cells[i].group_ref = g >= 0 ? cell_number(s, ref) : -1;
	}
}

static void
progress(long done, long total, void *arg)
{
	static long last = -1;

	(void)arg;
	if (done == last || total < 50)
		return;
	last = done;
	fprintf(stderr, "\rplan-cli: sweep: %ld/%ld cells", done, total);
	if (done == total)
		fputc('\n', stderr);
}

/* A comma-separated list into an axis of the inline study. */
static bool
add_axis(struct study *s, int kind, const char *list)
{
	struct study_axis *a;
	char buf[STUDY_MAX_VALUES * 8];
	char *save = NULL;

	int existing = study_find_axis(s, kind);

	if ((existing < 0 && s->naxes == STUDY_MAX_AXES) || strlen(list) >= sizeof(buf)) {
		cli_error("too many axes or values");
		return false;
	}
	/* On the command line an axis replaces the study's axis of that name. */
	a = existing >= 0 ? &s->axes[existing] : &s->axes[s->naxes++];
	a->kind = kind;
	a->n = 0;
	memcpy(buf, list, strlen(list) + 1);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->n == STUDY_MAX_VALUES || strlen(tok) >= STUDY_VALUE_LEN) {
			cli_error("--%s: too many or too long values", study_axis_names[kind]);
			return false;
		}
		snprintf(a->values[a->n++], STUDY_VALUE_LEN, "%s", tok);
	}
	if (a->n == 0) {
		cli_error("--%s expects a comma-separated list", study_axis_names[kind]);
		return false;
	}
	return true;
}

static bool
parse_metrics(struct study *s, const char *list)
{
	char buf[512];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	s->nmetrics = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m;

		if (!cli_choice("--metric", tok, study_metric_names, &m))
			return false;
		if (s->nmetrics < STUDY_MAX_METRICS)
			s->metrics[s->nmetrics++] = m;
	}
	return s->nmetrics > 0;
}

/* Read the shards' JSON into @res. */
static int
merge(const struct study *s, char **files, int nfiles, long n, struct sweep_result *res)
{
	for (int f = 0; f < nfiles; f++) {
		json_error_t jerr;
		json_t *root = json_load_file(files[f], 0, &jerr), *cells;
		size_t i;
		json_t *c;

		if (!root) {
			if (access(files[f], R_OK) != 0) {
				cli_error("%s: cannot open", files[f]);
				return CLI_EXIT_FAILURE;
			}
			cli_error("%s:%d:%d: %s", files[f], jerr.line, jerr.column, jerr.text);
			return CLI_EXIT_INPUT;
		}
		cells = json_object_get(root, "cells");
		if (!json_is_array(cells) || json_integer_value(json_object_get(root, "cells_total")) != n ||
		    !json_is_string(json_object_get(root, "study")) ||
		    strcmp(json_string_value(json_object_get(root, "study")), s->name) != 0) {
			cli_error("%s: not a shard of this study (%ld cells)", files[f], n);
			json_decref(root);
			return CLI_EXIT_INPUT;
		}
		json_array_foreach(cells, i, c) {
			json_int_t k = json_integer_value(json_object_get(c, "cell"));
			struct sweep_result *r;

			if (k < 0 || k >= n)
				continue;
			r = &res[k];
			memset(r, 0, sizeof(*r));
			r->ok = json_is_true(json_object_get(c, "ok"));
			r->time_s = json_number_value(json_object_get(c, "iteration_time_s"));
			r->tflops_per_gpu = json_number_value(json_object_get(c, "tflops_per_gpu"));
			r->mfu = json_number_value(json_object_get(c, "mfu"));
			r->tokens_per_s = json_number_value(json_object_get(c, "tokens_per_s"));
			r->memory_bytes = json_number_value(json_object_get(c, "memory_bytes"));
			r->fits = json_is_true(json_object_get(c, "fits"));
			r->gpus = (int)json_integer_value(json_object_get(c, "gpus"));
			snprintf(r->plan, sizeof(r->plan), "%s",
				 json_string_value(json_object_get(c, "plan")) ? json_string_value(json_object_get(c, "plan")) : "");
			snprintf(r->error, sizeof(r->error), "%s",
				 json_string_value(json_object_get(c, "error")) ? json_string_value(json_object_get(c, "error")) : "");
		}
		json_decref(root);
	}
	for (long i = 0; i < n; i++)
		if (!res[i].ok && !res[i].error[0]) {
			cli_error("--merge: cell %ld is in none of the shards", i);
			return CLI_EXIT_INPUT;
		}
	return CLI_EXIT_OK;
}

enum { S_MODE = 300, S_METRIC, S_BASELINE, S_FORMAT, S_PLOT, S_THREADS, S_SHARD, S_MERGE };

int
cmd_sweep(int argc, char **argv)
{
	static struct study study;
	static struct cache cache;
	struct option opts[AXIS_COUNT + 10];
	struct sweep_cell *cells = NULL;
	struct sweep_result *res = NULL;
	struct plan_error err;
	struct sweep_rows rows = { 0, 0, 1 };
	const char *plot = NULL;
	bool inline_axes = false, do_merge = false;
	int format = SWEEP_MD, threads = (int)sysconf(_SC_NPROCESSORS_ONLN), c, rc = CLI_EXIT_OK, no = 0;
	long n = 0, shard_i = 0, shard_n = 1;

	memset(&cache, 0, sizeof(cache));
	study_init(&study);
	snprintf(study.name, sizeof(study.name), "sweep");
	snprintf(study.file, sizeof(study.file), "command line");
	for (int k = 0; k < AXIS_COUNT; k++)
		if (k != AXIS_REFERENCE)
			opts[no++] = (struct option){ study_axis_names[k], required_argument, NULL, k };
	for (int k = 0; k < no; k++) {
		static char names[AXIS_COUNT][32];

		/* Options use dashes where the study file uses underscores. */
		snprintf(names[k], sizeof(names[k]), "%s", study_axis_names[opts[k].val]);
		for (char *q = names[k]; *q; q++)
			if (*q == '_')
				*q = '-';
		opts[k].name = names[k];
	}
	opts[no++] = (struct option){ "mode", required_argument, NULL, S_MODE };
	opts[no++] = (struct option){ "metric", required_argument, NULL, S_METRIC };
	opts[no++] = (struct option){ "baseline", required_argument, NULL, S_BASELINE };
	opts[no++] = (struct option){ "format", required_argument, NULL, S_FORMAT };
	opts[no++] = (struct option){ "plot", required_argument, NULL, S_PLOT };
	opts[no++] = (struct option){ "threads", required_argument, NULL, S_THREADS };
	opts[no++] = (struct option){ "shard", required_argument, NULL, S_SHARD };
	opts[no++] = (struct option){ "merge", no_argument, NULL, S_MERGE };
	opts[no++] = (struct option){ "help", no_argument, NULL, 'h' };
	opts[no] = (struct option){ NULL, 0, NULL, 0 };

	/* A study file comes first, so that command-line axes can be added to it. */
	if (argc > 1 && argv[1][0] != '-') {
		plan_error_clear(&err);
		if (!study_load_file(&study, argv[1], &err))
			return cli_report(&err);
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c >= 0 && c < AXIS_COUNT) {
			inline_axes = true;
			if (!add_axis(&study, c, optarg))
				return CLI_EXIT_USAGE;
			continue;
		}
		switch (c) {
		case 'h':
			fputs(sweep_usage, stdout);
			return cli_finish(CLI_EXIT_OK);
		case S_MODE: {
			static const char *const modes[] = { "predict", "optimize", NULL };

			if (!cli_choice("--mode", optarg, modes, &study.mode))
				return CLI_EXIT_USAGE;
			break;
		}
		case S_METRIC:
			if (!parse_metrics(&study, optarg))
				return CLI_EXIT_USAGE;
			break;
		case S_BASELINE: {
			const char *eq = strchr(optarg, '=');
			char axis[64];
			int kind;

			if (!eq || eq == optarg || (size_t)(eq - optarg) >= sizeof(axis)) {
				cli_error("--baseline expects AXIS=VALUE, e.g. compressor=none");
				return CLI_EXIT_USAGE;
			}
			memcpy(axis, optarg, (size_t)(eq - optarg));
			axis[eq - optarg] = '\0';
			if (!cli_choice("--baseline", axis, study_axis_names, &kind))
				return CLI_EXIT_USAGE;
			study.baseline_axis = -2 - kind;
			snprintf(study.baseline_value, sizeof(study.baseline_value), "%s", eq + 1);
			break;
		}
		case S_FORMAT:
			if (!cli_choice("--format", optarg, sweep_format_names, &format))
				return CLI_EXIT_USAGE;
			break;
		case S_PLOT: plot = optarg; break;
		case S_THREADS:
			if (!cli_int("--threads", optarg, 1, 64, &threads))
				return CLI_EXIT_USAGE;
			break;
		case S_SHARD: {
			long a, b;
			char *slash = strchr(optarg, '/');
			char left[32];

			if (!slash || (size_t)(slash - optarg) >= sizeof(left)) {
				cli_error("--shard expects I/N, e.g. 2/4");
				return CLI_EXIT_USAGE;
			}
			memcpy(left, optarg, (size_t)(slash - optarg));
			left[slash - optarg] = '\0';
			if (!num_parse_long(left, 1, 1000000, &a) || !num_parse_long(slash + 1, 1, 1000000, &b) || a > b) {
				cli_error("--shard expects I/N with 1 <= I <= N, got '%s'", optarg);
				return CLI_EXIT_USAGE;
			}
			shard_i = a - 1;
			shard_n = b;
			break;
		}
		case S_MERGE: do_merge = true; break;
		case ':':
			cli_error("option '%s' needs a value", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		default:
			cli_error("unknown option '%s' for sweep (see 'plan-cli sweep --help')", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (!do_merge && optind < argc) {
		cli_error("unexpected argument '%s' (a study file comes first)", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (do_merge && optind == argc) {
		cli_error("--merge needs the JSON files of the shards");
		return CLI_EXIT_USAGE;
	}
	if (study.baseline_axis <= -2) {
		int kind = -2 - study.baseline_axis;

		study.baseline_axis = study_find_axis(&study, kind);
		if (study.baseline_axis < 0) {
			cli_error("--baseline: '%s' is not an axis of the sweep", study_axis_names[kind]);
			return CLI_EXIT_USAGE;
		}
	}
	(void)inline_axes;
	plan_error_clear(&err);
	if (!study_check(&study, &n, &err))
		return cli_report(&err);
	if (study.baseline_axis >= 0) {
		const struct study_axis *a = &study.axes[study.baseline_axis];
		bool found = false;

		for (int i = 0; i < a->n; i++)
			found |= strcmp(a->values[i], study.baseline_value) == 0;
		if (!found || a->zipped) {
			cli_error("%s: the baseline %s=%s is %s", study.file, study_axis_names[a->kind],
				  study.baseline_value, a->zipped ? "on a zipped axis" : "not a value of that axis");
			return CLI_EXIT_INPUT;
		}
	}
	cells = calloc((size_t)n, sizeof(*cells));
	res = calloc((size_t)n, sizeof(*res));
	if (!cells || !res) {
		free(cells);
		free(res);
		cli_error("out of memory for %ld cells", n);
		return CLI_EXIT_FAILURE;
	}
	for (long i = 0; i < n && rc == CLI_EXIT_OK; i++) {
		char why[512] = "";

		rc = build_cell(&study, &cache, i, &cells[i], why, sizeof(why));
		if (rc != CLI_EXIT_OK && why[0])
			cli_error("%s: cell %ld: %s", study.file, i, why);
	}
	if (rc == CLI_EXIT_OK) {
		link_cells(&study, cells, n);
		rows.n = n;
		if (do_merge) {
			rc = merge(&study, argv + optind, argc - optind, n, res);
		} else {
			rows.shard_i = shard_i;
			rows.shard_n = shard_n;
			if (!sweep_run(cells, n, threads, shard_i, shard_n, isatty(2) ? progress : NULL, NULL, res, &err))
				rc = cli_report(&err);
		}
	}
	if (rc == CLI_EXIT_OK) {
		sweep_derive(cells, n, res);
		if (plot) {
			if (rows.shard_n > 1) {
				cli_error("--plot draws a whole sweep: merge the shards first");
				rc = CLI_EXIT_USAGE;
			} else if (!sweep_plot(plot, &study, res, n, &err)) {
				rc = cli_report(&err);
			}
		} else if (!sweep_write(stdout, format, &study, res, &rows)) {
			cli_error("cannot write the output");
			rc = CLI_EXIT_FAILURE;
		}
	}
	cache_release(&cache);
	free(cells);
	free(res);
	return cli_finish(rc);
}
