#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "plan/plan_attr.h"
#include "cli/options.h"
#include "plan/compressor.h"
#include "plan/framework.h"
#include "plan/numparse.h"
#include "io/infile.h"
#include "io/profile_path.h"
#include "io/study.h"
#include "plan/sweep.h"
#include "io/sweep_output.h"
#include "plan/units.h"

#define MAX_PROFILES 64

/* The profiles the cells use, each loaded once; by slot: models, clusters, compressors, frameworks. */
enum { SLOT_MODEL, SLOT_CLUSTER, SLOT_COMPRESSOR, SLOT_FRAMEWORK, SLOT_COUNT };

struct cache {
	char names[SLOT_COUNT][MAX_PROFILES][STUDY_VALUE_LEN];
	int n[SLOT_COUNT];
	struct model models[MAX_PROFILES];
	struct cluster clusters[MAX_PROFILES];
	struct compressor compressors[MAX_PROFILES];
	struct framework frameworks[MAX_PROFILES];
};

static void
cache_release(struct cache *k)
{
	for (int i = 0; i < k->n[SLOT_CLUSTER]; i++)
		cluster_release(&k->clusters[i]);
}

static void *
cache_object(struct cache *k, int slot, int i)
{
	switch (slot) {
	case SLOT_MODEL:
		return &k->models[i];
	case SLOT_CLUSTER:
		return &k->clusters[i];
	case SLOT_FRAMEWORK:
		return &k->frameworks[i];
	default:
		return &k->compressors[i];
	}
}

static int
cache_load(int slot, const char *name, void *obj)
{
	switch (slot) {
	case SLOT_MODEL:
		return cli_load_model(name, obj);
	case SLOT_CLUSTER:
		return cli_load_cluster(name, obj);
	case SLOT_FRAMEWORK:
		return cli_load_framework(name, obj);
	default:
		return cli_load_compressor(name, obj);
	}
}

/*
 * Load profile @name for the cell of axis indices @idx: an error names
 * the study's FILE:LINE:COL of the value where the study file gave it.
 */
static int
load_at(const struct study *s, const int *idx, int kind, int slot, const char *name, void *obj)
{
	int line, column, rc;
	const char *v = study_cell_value(s, idx, kind, &line, &column);

	if (v && strcmp(v, name) == 0 && line > 0)
		snprintf(cli_context, sizeof(cli_context), "%s:%d:%d", s->file, line, column);
	rc = cache_load(slot, name, obj);
	cli_context[0] = '\0';
	return rc;
}

/* The profile of axis @kind (model, cluster, compressor or framework) named @name; "none": no compressor. */
static int
find_or_load(struct cache *k, const struct study *s, const int *idx, int kind, const char *name,
	     const void **out)
{
	int slot = kind == AXIS_MODEL ? SLOT_MODEL : kind == AXIS_CLUSTER ? SLOT_CLUSTER :
		   kind == AXIS_FRAMEWORK ? SLOT_FRAMEWORK : SLOT_COMPRESSOR;
	int n = k->n[slot], rc;

	if (slot == SLOT_COMPRESSOR && strcmp(name, "none") == 0)
		return *out = NULL, CLI_EXIT_OK;
	for (int i = 0; i < n; i++)
		if (strcmp(k->names[slot][i], name) == 0)
			return *out = cache_object(k, slot, i), CLI_EXIT_OK;
	if (n == MAX_PROFILES) {
		cli_error("a study may name at most %d profiles of each kind", MAX_PROFILES);
		return CLI_EXIT_USAGE;
	}
	if ((rc = load_at(s, idx, kind, slot, name, cache_object(k, slot, n))) != CLI_EXIT_OK)
		return rc;
	snprintf(k->names[slot][n], STUDY_VALUE_LEN, "%s", name);
	*out = cache_object(k, slot, k->n[slot]++);
	return CLI_EXIT_OK;
}

/* The value of axis @kind for a cell: the axis's, or the fixed plan's, or NULL. */
static const char *
value_of(const struct study *s, const int *idx, int kind)
{
	return study_cell_value(s, idx, kind, NULL, NULL);
}

/*
 * The cell's value of plan attribute @id (an axis or the plan: block) into
 * @p; left at the plan's when neither gives it. A list's entries are
 * separated by '/' (',' separates an axis's values): 7/8/8/7.
 */
static bool
attr_value(const struct study *s, const int *idx, int id, struct sweep_cell *c, int *flash, char *why, size_t size)
{
	const struct plan_attr *a = &plan_attrs[id];
	const char *v = value_of(s, idx, AXIS_OF(id));
	struct estimate_options eo = { .dp_algo = (enum coll_algo)c->dp_algo };
	struct plan_attr_target t = { &c->plan, &eo };
	char text[STUDY_VALUE_LEN], label[64];
	long b;

	if (!v)
		return true;
	snprintf(label, sizeof(label), "'%s'", a->name);
	/* The GPU decides flash attention unless the cell says. */
	if (a->flags & PLAN_ATTR_GPU_DEFAULT) {
		if (!plan_attr_parse_value(a, label, v, &b, why, size))
			return false;
		*flash = (int)b;
		return true;
	}
	snprintf(text, sizeof(text), "%s", v);
	if (a->type == PLAN_ATTR_LIST && id != PLAN_ATTR_COMPRESS)
		for (char *c = text; *c; c++)
			*c = *c == '/' ? ',' : *c;
	if (!plan_attr_parse(a, label, text, &t, why, size))
		return false;
	c->dp_algo = (int)eo.dp_algo;
	return true;
}

/* The cell's value of axis @kind into @out (left alone when no axis gives it). */
static bool
field_value(const struct study *s, const int *idx, int kind, const char *const *choices, int *out,
	    char *why, size_t size)
{
	const char *v = value_of(s, idx, kind);
	long l;

	if (!v)
		return true;
	if (choices) {
		for (int i = 0; choices[i]; i++)
			if (strcmp(choices[i], v) == 0) {
				*out = i;
				return true;
			}
		snprintf(why, size, "unknown value '%s' for '%s'", v, study_axis_name(kind));
		return false;
	}
	if (!num_parse_long(v, 0, 100000000L, &l)) {
		snprintf(why, size, "'%s' must be a whole number, got '%s'", study_axis_name(kind), v);
		return false;
	}
	*out = (int)l;
	return true;
}

/*
 * The power_limit axis: @v, a power, as predict's --power-limit takes it
 * (cli_parse_power): from 1 W to 100 kW, then gpu_set_power_limit.
 */
static int
cell_power_limit(const char *v, struct gpu *g, char *why, size_t size)
{
	char unit_why[256];
	double w = 0.0;

	if (!units_parse(v, UNIT_POWER, &w, unit_why, sizeof(unit_why)) && !isinf(w)) {
		snprintf(why, size, "'power_limit': %s", unit_why);
		return CLI_EXIT_INPUT;
	}
	if (!(w >= 1.0) || w > 1e5) {
		snprintf(why, size, "'power_limit' must be from 1 W to 100 kW, got '%s'", v);
		return CLI_EXIT_INPUT;
	}
	if (!gpu_set_power_limit(g, w, unit_why, sizeof(unit_why))) {
		snprintf(why, size, "'power_limit' %s", unit_why);
		return CLI_EXIT_INPUT;
	}
	return CLI_EXIT_OK;
}

/* The cell's model, cluster (with its link overrides) and compressor;
 * @fault the link axis whose value is wrong. */
static int
cell_profiles(const struct study *s, struct cache *k, const int *idx, struct sweep_cell *c, char *why,
	      size_t size, int *fault)
{
	const void *obj;
	const char *v;
	char unit_why[256];
	double bw;
	int rc;

	if ((rc = find_or_load(k, s, idx, AXIS_MODEL, value_of(s, idx, AXIS_MODEL), &obj)) != CLI_EXIT_OK)
		return rc;
	c->model = obj;
	if ((rc = find_or_load(k, s, idx, AXIS_CLUSTER, value_of(s, idx, AXIS_CLUSTER), &obj)) != CLI_EXIT_OK)
		return rc;
	c->cluster = *(const struct cluster *)obj;
	v = value_of(s, idx, AXIS_COMPRESSOR);
	if (v && (rc = find_or_load(k, s, idx, AXIS_COMPRESSOR, v, &obj)) != CLI_EXIT_OK)
		return rc;
	c->compressor = v ? obj : NULL;
	/* Megatron-LM unless the study names another framework. */
	v = value_of(s, idx, AXIS_FRAMEWORK);
	if ((rc = find_or_load(k, s, idx, AXIS_FRAMEWORK, v ? v : CLI_DEFAULT_FRAMEWORK, &obj)) != CLI_EXIT_OK)
		return rc;
	c->framework = obj;
	for (int kind = AXIS_NIC_BANDWIDTH; kind <= AXIS_INTRA_BANDWIDTH; kind++) {
		v = value_of(s, idx, kind);
		if (!v)
			continue;
		*fault = kind;
		/* '1e400 GB/s' (+-HUGE_VAL) is out of range, as the option's. */
		bw = 0.0;
		if (!units_parse(v, UNIT_BANDWIDTH, &bw, unit_why, sizeof(unit_why)) && !isinf(bw)) {
			snprintf(why, size, "'%s': %s", study_axis_name(kind), unit_why);
			return CLI_EXIT_INPUT;
		}
		if (bw < UNITS_MIN_BANDWIDTH_BPS || bw > UNITS_MAX_BANDWIDTH_BPS) {
			snprintf(why, size, "'%s' must be at %s %s, got '%s'", study_axis_name(kind),
				 bw < UNITS_MIN_BANDWIDTH_BPS ? "least" : "most",
				 bw < UNITS_MIN_BANDWIDTH_BPS ? UNITS_MIN_BANDWIDTH_TEXT : UNITS_MAX_BANDWIDTH_TEXT, v);
			return CLI_EXIT_INPUT;
		}
		if (kind == AXIS_NIC_BANDWIDTH)
			c->cluster.inter.nic_bandwidth_Bps = bw;
		else
			c->cluster.intra.bandwidth_Bps = bw;
	}
	if ((v = value_of(s, idx, AXIS_POWER_LIMIT)) && (rc = cell_power_limit(v, &c->cluster.gpu, why, size)) != CLI_EXIT_OK)
		return *fault = AXIS_POWER_LIMIT, rc;
	*fault = -1;
	return CLI_EXIT_OK;
}

/* What a compressor compresses: 'compress' (default tp,pp), where that parallelism is used. */
static bool
cell_compress(const struct study *s, const int *idx, struct sweep_cell *c, char *why, size_t size)
{
	const char *v = value_of(s, idx, AXIS_COMPRESS);
	struct plan_compression pc = { .tp = true, .pp = true };
	struct plan *p = &c->plan;

	if (v && !plan_compress_parse(v, &pc)) {
		snprintf(why, size, "'compress' lists tp, pp and dp, got '%.60s'", v);
		return false;
	}
	if (c->compressor) {
		p->compress.tp = pc.tp && p->tp > 1;
		p->compress.pp = pc.pp && p->pp > 1;
		p->compress.dp = pc.dp;
	}
	return true;
}

/*
 * Fill one cell from the study's axes; @why gets a message when it
 * cannot, and @fault the axis whose value is wrong (-1: none in particular).
 */
static int
build_cell(const struct study *s, struct cache *k, long i, struct sweep_cell *c, char *why, size_t size,
	   int *fault)
{
	int idx[STUDY_MAX_AXES], rc, gpus, flash = s->flash_attention;
	struct plan *p = &c->plan;
	struct plan_error err;

	study_cell_indices(s, i, idx);
	memset(c, 0, sizeof(*c));
	if ((rc = cell_profiles(s, k, idx, c, why, size, fault)) != CLI_EXIT_OK)
		return rc;
	plan_init(p);
	p->tp = p->pp = 1;
	p->seq_len = c->model->seq_len;
	p->sequence_parallel = s->sequence_parallel;
	p->dp_overlap = s->no_dp_overlap ? 0 : -1;
	p->tp_overlap = s->tp_overlap;
	gpus = 0; /* the cluster's */
	*fault = AXIS_GPUS;
	if (!field_value(s, idx, AXIS_GPUS, NULL, &gpus, why, size))
		return CLI_EXIT_INPUT;
	/* compress: its own rule (cell_compress), where the parallelism is used. */
	for (int id = 0; id < PLAN_ATTR_COUNT; id++) {
		*fault = AXIS_OF(id);
		if (id != PLAN_ATTR_COMPRESS && !attr_value(s, idx, id, c, &flash, why, size))
			return CLI_EXIT_INPUT;
	}
	*fault = -1;
	if (p->global_batch == 0) {
		snprintf(why, size, "the study gives no global_batch (give it under plan: or axes:, or --global-batch)");
		return CLI_EXIT_INPUT;
	}
	/* As predict completes its plan: dp from the GPUs, MiCS's ZeRO-3, ... */
	plan_error_clear(&err);
	if (!plan_complete(p, &(struct plan_fill){ gpus, flash, c->framework->pipeline_split }, c->model, &c->cluster, &err)) {
		snprintf(why, size, "%.500s", err.message);
		return CLI_EXIT_INPUT;
	}
	if (!cell_compress(s, idx, c, why, size))
		return *fault = AXIS_COMPRESS, CLI_EXIT_INPUT;
	c->mode = s->mode == STUDY_OPTIMIZE ? SWEEP_OPTIMIZE : SWEEP_PREDICT;
	c->gpus = plan_gpus(p);
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

/* The most a shard's figure can be, as plan-cli predicts (a shard of 1e308
 * s merged into a table, issue 28): a year an iteration, the core's
 * ESTIMATE_MAX_ITERATION_S; an MFU of 8 (it counts against the 16-bit
 * peak, which fp8 GEMMs pass by up to peak_flops_fp8 / peak_flops, 2 on
 * Hopper and Blackwell, and NVFP4 ones by peak_flops_fp4 / peak_flops, 6
 * on the GB300); 10^5 TFLOP/s per GPU, as the runs CSV takes;
 * 10^15 tokens/s; 2^60 bytes a GPU. The least is an iteration of 1 us (a
 * shard's 1e-320 s gave a speed-up of 1e-20, issue 28): an iteration
 * launches at least a forward and a backward kernel per layer, each 2-5 us
 * of launch latency alone (gpu.launch_overhead_s, compute.c), so no real
 * step is shorter. */
#define SHARD_MIN_TIME_S 1e-6
#define SHARD_MAX_TIME_S ESTIMATE_MAX_ITERATION_S
#define SHARD_MAX_MFU 8.0
#define SHARD_MAX_TFLOPS 1e5
#define SHARD_MAX_TOKENS 1e15
#define SHARD_MAX_BYTES 1152921504606846976.0

/* A number of a shard's cell: finite, from @min (0 or above) to @max. */
static bool
shard_number(const json_t *c, const char *key, double min, double max, double *out)
{
	const json_t *v = json_object_get(c, key);
	double d = json_number_value(v);

	if (!json_is_number(v) || !isfinite(d) || d < min || d > max)
		return false;
	*out = d;
	return true;
}

/* A string of a shard's cell into @dst; absent is "", another type false. */
static bool
shard_string(const json_t *c, const char *key, char *dst, size_t size)
{
	const json_t *v = json_object_get(c, key);

	if (v && !json_is_string(v))
		return false;
	snprintf(dst, size, "%s", v ? json_string_value(v) : "");
	return true;
}

/*
 * One cell of a shard into @r: every value checked, since a shard file
 * is input like any other (a negative time would make a negative
 * speed-up). Returns the key at fault, or NULL.
 */
static const char *
shard_cell(const json_t *c, struct sweep_result *r)
{
	const json_t *ok = json_object_get(c, "ok"), *gpus = json_object_get(c, "gpus");

	memset(r, 0, sizeof(*r));
	if (!json_is_boolean(ok))
		return "ok";
	r->ok = json_is_true(ok);
	if (!r->ok)
		return shard_string(c, "error", r->error, sizeof(r->error)) && r->error[0] ? NULL : "error";
	if (!shard_number(c, "iteration_time_s", SHARD_MIN_TIME_S, SHARD_MAX_TIME_S, &r->time_s))
		return "iteration_time_s";
	if (!shard_number(c, "tflops_per_gpu", 0, SHARD_MAX_TFLOPS, &r->tflops_per_gpu))
		return "tflops_per_gpu";
	if (!shard_number(c, "mfu", 0, SHARD_MAX_MFU, &r->mfu))
		return "mfu";
	if (!shard_number(c, "tokens_per_s", 0, SHARD_MAX_TOKENS, &r->tokens_per_s))
		return "tokens_per_s";
	if (!shard_number(c, "memory_bytes", 0, SHARD_MAX_BYTES, &r->memory_bytes))
		return "memory_bytes";
	if (!json_is_boolean(json_object_get(c, "fits")))
		return "fits";
	r->fits = json_is_true(json_object_get(c, "fits"));
	if (!json_is_integer(gpus) || json_integer_value(gpus) < 1 || json_integer_value(gpus) > INT_MAX)
		return "gpus";
	r->gpus = (int)json_integer_value(gpus);
	/* Absent: the shard's plan-cli did not price it (older than the key). */
	if (json_object_get(c, "gemm_wave_loss_s")) {
		if (!shard_number(c, "gemm_wave_loss_s", 0, SHARD_MAX_TIME_S, &r->wave_loss_s))
			return "gemm_wave_loss_s";
		r->wave_loss_known = true;
	}
	return shard_string(c, "plan", r->plan, sizeof(r->plan)) ? NULL : "plan";
}

/* The parsed JSON of shard @file, or NULL after printing why (@rc the exit code). */
static json_t *
shard_load(const char *file, int *rc)
{
	struct plan_error err;
	json_error_t jerr;
	json_t *root;
	FILE *f;

	plan_error_clear(&err);
	if (!infile_open(file, INFILE_MAX_JSON, &f, &err)) {
		*rc = cli_report(&err);
		return NULL;
	}
	root = json_loadf(f, 0, &jerr);
	fclose(f);
	if (!root) {
		cli_error("%s:%d:%d: %s", file, jerr.line, jerr.column, jerr.text);
		*rc = CLI_EXIT_INPUT;
	}
	return root;
}

/* The cells of one shard into @res. */
static int
merge_shard(const struct study *s, const char *file, long n, struct sweep_result *res)
{
	int rc = CLI_EXIT_OK;
	json_t *root = shard_load(file, &rc), *cells, *c;
	const json_t *study;
	size_t i;

	if (!root)
		return rc;
	cells = json_object_get(root, "cells");
	study = json_object_get(root, "study");
	if (!json_is_array(cells) || !json_is_integer(json_object_get(root, "cells_total")) ||
	    json_integer_value(json_object_get(root, "cells_total")) != n || !json_is_string(study) ||
	    strcmp(json_string_value(study), s->name) != 0) {
		cli_error("%s: not a shard of this study (%ld cells)", file, n);
		json_decref(root);
		return CLI_EXIT_INPUT;
	}
	json_array_foreach(cells, i, c) {
		const json_t *cell = json_object_get(c, "cell");
		json_int_t k = json_integer_value(cell);
		const char *bad;

		if (!json_is_integer(cell) || k < 0 || k >= n) {
			cli_error("%s: entry %zu of 'cells': 'cell' must be a cell number from 0 to %ld", file, i, n - 1);
			rc = CLI_EXIT_INPUT;
			break;
		}
		if ((bad = shard_cell(c, &res[k])) != NULL) {
			cli_error("%s: cell %lld: '%s' is missing or out of range", file, (long long)k, bad);
			rc = CLI_EXIT_INPUT;
			break;
		}
	}
	json_decref(root);
	return rc;
}

/* Read the shards' JSON into @res. */
static int
merge(const struct study *s, char **files, int nfiles, long n, struct sweep_result *res)
{
	for (int f = 0; f < nfiles; f++) {
		int rc = merge_shard(s, files[f], n, res);

		if (rc != CLI_EXIT_OK)
			return rc;
	}
	for (long i = 0; i < n; i++)
		if (!res[i].ok && !res[i].error[0]) {
			cli_error("--merge: cell %ld is in none of the shards", i);
			return CLI_EXIT_INPUT;
		}
	return CLI_EXIT_OK;
}

/*
 * A study file comes first, so that command-line axes can be added to
 * it; then the options. Returns -1 with (*argv)[optind] at the operands
 * (the study file taken out), or the exit code.
 */
static int
parse(struct sweep_request *r, int *argc, char ***argv)
{
	struct plan_error err;
	int rc;

	memset(r, 0, sizeof(*r));
	study_init(&r->study);
	snprintf(r->study.name, sizeof(r->study.name), "sweep");
	snprintf(r->study.file, sizeof(r->study.file), "command line");
	r->format = SWEEP_MD;
	r->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	r->shard_n = 1;
	if (*argc > 1 && (*argv)[1][0] != '-') {
		plan_error_clear(&err);
		if (!study_load_file(&r->study, (*argv)[1], &err))
			return cli_report(&err);
		(*argv)[1] = (*argv)[0];
		(*argv)++;
		(*argc)--;
	}
	if ((rc = cli_options_parse(&cli_sweep_options, *argc, *argv, r)) >= 0)
		return rc;
	/* A --baseline replaces the file's (an axis found later: -2 - kind). */
	if (r->study.baseline_axis <= -2)
		r->study.baseline_line = r->study.baseline_column = 0;
	if (!r->merge && optind < *argc) {
		cli_error("unexpected argument '%s' (a study file comes first)", (*argv)[optind]);
		return CLI_EXIT_USAGE;
	}
	if (r->merge && optind == *argc) {
		cli_error("--merge needs the JSON files of the shards");
		return CLI_EXIT_USAGE;
	}
	return -1;
}

/* The --baseline axis (known once every axis is), the axes and the baseline value. */
static int
check_study(struct study *s, long *n)
{
	struct plan_error err;

	if (s->baseline_axis <= -2) {
		int kind = -2 - s->baseline_axis;

		s->baseline_axis = study_find_axis(s, kind);
		if (s->baseline_axis < 0) {
			cli_error("--baseline: '%s' is not an axis of the sweep", study_axis_name(kind));
			return CLI_EXIT_USAGE;
		}
	}
	plan_error_clear(&err);
	if (!study_check(s, n, &err))
		return cli_report(&err);
	if (s->baseline_axis >= 0) {
		const struct study_axis *a = &s->axes[s->baseline_axis];
		bool found = false;

		for (int i = 0; i < a->n; i++)
			found |= strcmp(a->values[i], s->baseline_value) == 0;
		if (!found || a->zipped) {
			plan_error_set(&err, PLAN_ERR_INPUT, s->file, s->baseline_line, s->baseline_column,
				       "the baseline %s=%s is %s", study_axis_name(a->kind), s->baseline_value,
				       a->zipped ? "on a zipped axis" : "not a value of that axis");
			return cli_report(&err);
		}
	}
	return CLI_EXIT_OK;
}

/* Why cell @i cannot be built, at the FILE:LINE:COL of axis @fault's value where the file gave it. */
static void
cell_error(const struct study *s, long i, int fault, const char *why)
{
	int idx[STUDY_MAX_AXES], line = 0, column = 0;

	study_cell_indices(s, i, idx);
	if (fault >= 0)
		study_cell_value(s, idx, fault, &line, &column);
	if (line > 0)
		cli_error("%s:%d:%d: cell %ld: %s", s->file, line, column, i, why);
	else
		cli_error("%s: cell %ld: %s", s->file, i, why);
}

/* Whether the output shows the GEMM wave loss: its metric, or JSON
 * (which has every metric, for --merge). It costs a second estimate a
 * cell, so the others do without. */
static bool
wants_wave_loss(const struct sweep_request *r)
{
	for (int k = 0; k < r->study.nmetrics; k++)
		if (r->study.metrics[k] == METRIC_WAVE_LOSS)
			return true;
	return r->format == SWEEP_JSON;
}

/* Every cell, with its baseline and scaling group. */
static int
build_cells(const struct study *s, struct cache *k, struct sweep_cell *cells, long n)
{
	for (long i = 0; i < n; i++) {
		char why[512] = "";
		int fault = -1, rc = build_cell(s, k, i, &cells[i], why, sizeof(why), &fault);

		if (rc != CLI_EXIT_OK) {
			if (why[0])
				cell_error(s, i, fault, why);
			return rc;
		}
	}
	link_cells(s, cells, n);
	return CLI_EXIT_OK;
}

/* Evaluate this shard's cells, or read them from the shards' files. */
static int
evaluate(const struct sweep_request *r, const struct sweep_cell *cells, long n, char **files, int nfiles,
	 struct sweep_result *res)
{
	struct plan_error err;

	if (r->merge)
		return merge(&r->study, files, nfiles, n, res);
	plan_error_clear(&err);
	if (!sweep_run(cells, n, r->threads, r->shard_i, r->shard_n, isatty(2) ? progress : NULL, NULL, res, &err))
		return cli_report(&err);
	return CLI_EXIT_OK;
}

/* The table or the plot. */
static int
output(const struct sweep_request *r, const struct sweep_result *res, long n)
{
	struct sweep_rows rows = { n, 0, 1 };
	struct plan_error err;

	if (!r->merge) {
		rows.shard_i = r->shard_i;
		rows.shard_n = r->shard_n;
	}
	if (r->plot) {
		if (rows.shard_n > 1) {
			cli_error("--plot draws a whole sweep: merge the shards first");
			return CLI_EXIT_USAGE;
		}
		plan_error_clear(&err);
		if (!sweep_plot(r->plot, &r->study, res, n, &err))
			return cli_report(&err);
	} else if (!sweep_write(stdout, r->format, &r->study, res, &rows)) {
		cli_output_error();
		return CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}

/* The sweep of request @r, once parsed. */
static int
run_sweep(struct sweep_request *r, int argc, char **argv)
{
	static struct cache cache;
	struct sweep_cell *cells;
	struct sweep_result *res;
	int rc;
	long n = 0;

	memset(&cache, 0, sizeof(cache));
	if ((rc = check_study(&r->study, &n)) != CLI_EXIT_OK)
		return rc;
	cells = calloc((size_t)n, sizeof(*cells));
	res = calloc((size_t)n, sizeof(*res));
	if (!cells || !res) {
		free(cells);
		free(res);
		cli_error("out of memory for %ld cells", n);
		return CLI_EXIT_FAILURE;
	}
	rc = build_cells(&r->study, &cache, cells, n);
	for (long i = 0; rc == CLI_EXIT_OK && i < n; i++)
		cells[i].wave_loss = wants_wave_loss(r);
	if (rc == CLI_EXIT_OK)
		rc = evaluate(r, cells, n, argv + optind, argc - optind, res);
	if (rc == CLI_EXIT_OK) {
		sweep_derive(cells, n, res);
		rc = output(r, res, n);
	}
	cache_release(&cache);
	free(cells);
	free(res);
	return rc;
}

int
cmd_sweep(int argc, char **argv)
{
	static struct sweep_request r;
	int rc = parse(&r, &argc, &argv);

	if (rc < 0)
		rc = run_sweep(&r, argc, argv);
	study_release(&r.study);
	return cli_finish(rc);
}
