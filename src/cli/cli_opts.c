#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "plan/plan_attr.h"
#include "io/atomic_file.h"
#include "io/profile_load.h"
#include "plan/numparse.h"

const char *const cli_format_names[] = { "text", "json", "csv", NULL };
char cli_context[CLI_CONTEXT_LEN];

void
cli_error(const char *fmt, ...)
{
	char msg[2048], line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One line, whatever the values quoted in it hold. */
	plan_error_escape(line, sizeof(line), msg);
	fprintf(stderr, "plan-cli: error: %s\n", line);
}

int
cli_report(const struct plan_error *err)
{
	char buf[PLAN_ERROR_TEXT_LEN];

	plan_error_format(err, buf, sizeof(buf));
	cli_error("%s", buf);
	switch (err->kind) {
	case PLAN_ERR_PLAN:
		return CLI_EXIT_USAGE;
	case PLAN_ERR_INPUT:
		return CLI_EXIT_INPUT;
	default:
		return CLI_EXIT_FAILURE;
	}
}

bool
cli_int(const char *opt, const char *val, long min, long max, int *out)
{
	long v;

	if (!num_parse_long(val, min, max, &v)) {
		cli_error("%s expects a whole number from %ld to %ld, got '%s'", opt, min, max, val);
		return false;
	}
	*out = (int)v;
	return true;
}

bool
cli_choice(const char *opt, const char *val, const char *const *names, int *out)
{
	char valid[256] = "";

	for (int i = 0; names[i]; i++) {
		if (strcmp(names[i], val) == 0) {
			*out = i;
			return true;
		}
		if (strlen(valid) + strlen(names[i]) + 3 < sizeof(valid)) {
			if (valid[0])
				strcat(valid, ", ");
			strcat(valid, names[i]);
		}
	}
	cli_error("unknown value '%s' for %s (valid: %s)", val, opt, valid);
	return false;
}

bool
cli_plan_complete(struct plan *p, const struct plan_fill *fill, const struct model *m, const struct cluster *c)
{
	struct plan_error err;

	plan_error_clear(&err);
	if (plan_complete(p, fill, m, c, &err))
		return true;
	cli_error("%s", err.message);
	return false;
}

/* Once a process: a command that found its output failing says so, and
 * cli_finish(), which flushes what is left, does not say it again. */
static bool cli_output_reported;

void
cli_output_error(void)
{
	if (!cli_output_reported)
		cli_error("cannot write the output");
	cli_output_reported = true;
}

int
cli_finish(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_output_error();
		return CLI_EXIT_FAILURE;
	}
	return code;
}

#include <limits.h>

#include "plan/cluster.h"
#include "plan/compressor.h"
#include "plan/model.h"
#include "io/hf_config.h"
#include "io/profile_path.h"
#include "io/runs_csv.h"

/* Report a failed load, naming the study cell being loaded when there is one. */
static int
load_failed(const struct plan_error *err)
{
	if (cli_context[0]) {
		char buf[PLAN_ERROR_TEXT_LEN];

		plan_error_format(err, buf, sizeof(buf));
		cli_error("%s: %s", cli_context, buf);
		return err->kind == PLAN_ERR_INPUT ? CLI_EXIT_INPUT :
		       err->kind == PLAN_ERR_PLAN ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
	}
	return cli_report(err);
}

/* A profile path that names no file is the same mistake as a profile name
 * that names none: an input error (exit 3), not an I/O failure. */
static int
profile_failed(struct plan_error *err, const char *path)
{
	if (err->kind == PLAN_ERR_IO && access(path, F_OK) != 0 && errno == ENOENT)
		err->kind = PLAN_ERR_INPUT;
	return load_failed(err);
}

/* Resolve a profile name or path, then load it with @load. */
static int
load_profile(enum profile_kind kind, const char *arg, void *obj,
	     bool (*load)(void *obj, const char *path, struct plan_error *err))
{
	struct plan_error err;
	char path[PATH_MAX];

	plan_error_clear(&err);
	if (!profile_resolve(kind, arg, path, sizeof(path), &err))
		return profile_failed(&err, arg);
	if (!load(obj, path, &err))
		return profile_failed(&err, path);
	return CLI_EXIT_OK;
}

static bool
load_model(void *obj, const char *path, struct plan_error *err)
{
	return model_load_file(obj, path, err);
}

static bool
load_cluster(void *obj, const char *path, struct plan_error *err)
{
	return cluster_load_file(obj, path, err);
}

static bool
load_compressor(void *obj, const char *path, struct plan_error *err)
{
	return compressor_load_file(obj, path, err);
}

static bool
load_framework(void *obj, const char *path, struct plan_error *err)
{
	return framework_load_file(obj, path, err);
}

int
cli_load_framework(const char *arg, struct framework *fw)
{
	int rc = load_profile(PROFILE_FRAMEWORK, arg, fw, load_framework);

	return rc == CLI_EXIT_OK ? cli_framework_set_apply(fw) : rc;
}

int
cli_load_compressor(const char *arg, struct compressor *c)
{
	return load_profile(PROFILE_COMPRESSOR, arg, c, load_compressor);
}

/* A bundled or YAML model profile, or a Hugging Face config.json ("hf:PATH" or "*.json"). */
int
cli_load_model(const char *arg, struct model *m)
{
	struct plan_error err;

	if (!hf_config_named(arg))
		return load_profile(PROFILE_MODEL, arg, m, load_model);
	plan_error_clear(&err);
	/* "hf:" alone would read as a file named "" and say "cannot open". */
	if (!hf_config_path(arg)[0]) {
		plan_error_set(&err, PLAN_ERR_INPUT, NULL, 0, 0,
			       "model '%s' names no file: give hf:PATH, the path of a Hugging Face config.json", arg);
		return load_failed(&err);
	}
	return hf_config_load(m, hf_config_path(arg), &err) ? CLI_EXIT_OK : profile_failed(&err, hf_config_path(arg));
}

int
cli_load_cluster(const char *arg, struct cluster *c)
{
	return load_profile(PROFILE_CLUSTER, arg, c, load_cluster);
}

/*
 * --gpu and --power-limit over the cluster's GPU. The new GPU replaces
 * the cluster's whole (keys a cluster file sets under its gpu: mapping
 * go with it); the cluster's links and pcie_bandwidth stay. A power limit
 * is checked as the profiles' power_limit is (gpu_load.c gpu_check): it
 * needs the GPU's rated_power and at least a fifth of it.
 */
static int
cluster_gpu_what_if(const struct cli_links *links, struct cluster *c)
{
	char why[256];
	struct gpu *g;
	int rc;

	if (links->gpu) {
		if (!(g = calloc(1, sizeof(*g)))) {
			cli_error("out of memory");
			return CLI_EXIT_FAILURE;
		}
		if ((rc = cli_load_gpu(links->gpu, g)) == CLI_EXIT_OK && cluster_set_gpu(c, g) != CLUSTER_CURVE_OK) {
			cli_error("--gpu %s: its gemm_efficiency curve cannot be interpolated", links->gpu);
			rc = CLI_EXIT_INPUT;
		}
		free(g);
		if (rc != CLI_EXIT_OK)
			return rc;
	}
	if (links->power_limit_W > 0 && !gpu_set_power_limit(&c->gpu, links->power_limit_W, why, sizeof(why))) {
		cli_error("--power-limit %s", why);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

int
cli_load_cluster_links(const char *arg, const struct cli_links *links, struct cluster *c)
{
	int rc = cli_load_cluster(arg, c);

	if (rc != CLI_EXIT_OK)
		return rc;
	if (links->nic_bandwidth_Bps > 0)
		c->inter.nic_bandwidth_Bps = links->nic_bandwidth_Bps;
	if (links->intra_bandwidth_Bps > 0)
		c->intra.bandwidth_Bps = links->intra_bandwidth_Bps;
	if ((rc = cluster_gpu_what_if(links, c)) != CLI_EXIT_OK)
		cluster_release(c);
	return rc;
}

const char *
cli_run_where(const char *file, const struct run *run, const struct run_cell *at, char *buf, size_t size)
{
	if (at && at->column > 0)
		snprintf(buf, size, "%s:%d:%d: row %d ('%s')", file, at->line, at->column, run->row, run->id);
	else
		snprintf(buf, size, "%s:%d: row %d ('%s')", file, run->line, run->row, run->id);
	return buf;
}

int
cli_load_run(const char *file, struct run *run, struct model *m, struct framework *fw,
	     struct compressor *cmp, const struct compressor **cmp_out)
{
	int rc;

	*cmp_out = NULL;
	/* Each profile's errors at its own cell (file:line:column). */
	cli_run_where(file, run, &run->at_model, cli_context, sizeof(cli_context));
	rc = cli_load_model(run->model, m);
	cli_run_where(file, run, &run->at_framework, cli_context, sizeof(cli_context));
	if (rc == CLI_EXIT_OK)
		rc = cli_load_framework(run->framework[0] ? run->framework : CLI_DEFAULT_FRAMEWORK, fw);
	cli_run_where(file, run, &run->at_compressor, cli_context, sizeof(cli_context));
	if (rc == CLI_EXIT_OK && run->compressor[0] && (rc = cli_load_compressor(run->compressor, cmp)) == CLI_EXIT_OK)
		*cmp_out = cmp;
	cli_context[0] = '\0';
	if (rc == CLI_EXIT_OK && run->plan.seq_len == 0)
		run->plan.seq_len = m->seq_len;
	return rc;
}

int
cli_write_file(const char *path, const char *text)
{
	return cli_write_files(&path, &text, 1);
}

int
cli_write_files(const char *const *paths, const char *const *texts, int n)
{
	struct plan_error err;

	plan_error_clear(&err);
	if (!atomic_write_files(paths, texts, n, &err))
		return cli_report(&err);
	return CLI_EXIT_OK;
}

static bool
load_gpu(void *obj, const char *path, struct plan_error *err)
{
	return gpu_load_file(obj, path, err);
}

int
cli_load_gpu(const char *arg, struct gpu *g)
{
	return load_profile(PROFILE_GPU, arg, g, load_gpu);
}

/*
 * Whatever a command writes it can read back (issue 28): @text, the
 * profile of @kind about to be written to @path, is loaded as the loaders
 * load it (schema ranges, cross-key checks); a fit outside them (a
 * gemm_overhead of 94 s, peak_flops above peak_flops_fp8) is reported and
 * nothing is written.
 */
bool
cli_profile_loads(int kind, const char *path, const char *text)
{
	union {
		struct cluster c;
		struct gpu g;
		struct framework f;
	} *u = calloc(1, sizeof(*u));
	char msg[PLAN_ERROR_TEXT_LEN];
	struct plan_error err;
	bool ok = true;

	if (!u) {
		cli_error("out of memory");
		return false;
	}
	plan_error_clear(&err);
	switch (kind) {
	case PROFILE_CLUSTER:
		if ((ok = cluster_load_string(&u->c, path, text, &err)))
			cluster_release(&u->c);
		break;
	case PROFILE_GPU:
		ok = gpu_load_string(&u->g, path, text, &err);
		break;
	case PROFILE_FRAMEWORK:
		ok = framework_load_string(&u->f, path, text, &err);
		break;
	default:
		break;
	}
	free(u);
	if (!ok) {
		plan_error_format(&err, msg, sizeof(msg));
		cli_error("%s (the fitted profile would not load back: nothing is written)", msg);
	}
	return ok;
}

