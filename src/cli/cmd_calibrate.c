/*
 * plan-cli calibrate: fit profile keys to measured runs (issue 13). Each
 * run is predicted exactly as validate predicts it (runs_predict); the
 * fit itself is the core's (plan/calibrate.h).
 */
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/calibrate.h"
#include "cli/cli.h"
#include "io/profile_path.h"
#include "io/atomic_file.h"
#include "io/profile_load.h"

/* ------------------------------------------------ calibrate options */

#define CALIBRATE(field) offsetof(struct calibrate_request, field)

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
	CLI_TEXT_JSON_ROW(CALIBRATE(format)),
	{ .name = "output", .metavar = "FILE", .kind = CLI_OPT_STRING, .offset = CALIBRATE(output),
	  .help = "write the calibrated cluster profile (required)" },
	{ .name = "framework-output", .metavar = "FILE", .kind = CLI_OPT_STRING,
	  .offset = CALIBRATE(framework_output),
	  .help = "write the calibrated framework profile (required with framework keys)" },
	CLI_HELP_ROW,
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

static bool
predict_cb(void *ctx, const double *x, int run, double *predicted_s, struct plan_error *err)
{
	struct calib_session *s = ctx;
	struct run_prediction p;

	for (int j = 0; j < s->nkeys; j++)
		*s->keys[j].value = x[j];
	if (!runs_predict(&s->set.runs[run], &s->models[run], &s->cluster, s->fw[run], s->cmp[run], &p, err))
		return false;
	*predicted_s = p.predicted_s;
	return true;
}

static void
session_release(struct calib_session *s)
{
	if (s->cluster_loaded)
		cluster_release(&s->cluster);
	void *owned[] = { s->models, s->frameworks, s->fw, s->compressors, s->cmp, s->measured_s, s->before, s->after,
			  s->cv };

	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
		free(owned[i]);
	runs_csv_release(&s->set);
}

static bool
wants_framework(const char *fit)
{
	return fit && (strncmp(fit, "framework.", 10) == 0 || strstr(fit, ",framework."));
}

/* The framework every run uses, when framework keys are fitted: --framework or the runs' one. */
static int
load_fit_framework(struct calib_session *s)
{
	const char *name = s->req->framework ? s->req->framework : s->set.runs[0].framework;

	for (int i = 0; i < s->set.n; i++)
		if (strcmp(s->set.runs[i].framework, name) != 0) {
			cli_error("%s: row %d ('%s') uses framework '%s', not '%s': framework keys are fitted "
				  "on runs of one framework", s->req->runs, s->set.runs[i].row, s->set.runs[i].id,
				  s->set.runs[i].framework, name);
			return CLI_EXIT_USAGE;
		}
	s->fits_framework = true;
	return cli_load_framework(name, &s->fit_fw);
}

/* Each run's model and framework; every run must have been measured on --cluster. */
static int
load_runs(struct calib_session *s)
{
	size_t n = (size_t)s->set.n;
	int rc = CLI_EXIT_OK;
	struct plan_error err;

	s->models = calloc(n, sizeof(*s->models));
	s->frameworks = calloc(n, sizeof(*s->frameworks));
	s->fw = calloc(n, sizeof(*s->fw));
	s->compressors = calloc(n, sizeof(*s->compressors));
	s->cmp = calloc(n, sizeof(*s->cmp));
	s->measured_s = calloc(n, sizeof(double));
	s->before = calloc(n, sizeof(double));
	s->after = calloc(n, sizeof(double));
	s->cv = calloc(n, sizeof(double));
	if (!s->models || !s->frameworks || !s->fw || !s->compressors || !s->cmp || !s->measured_s || !s->before ||
	    !s->after || !s->cv) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	for (int i = 0; i < s->set.n && rc == CLI_EXIT_OK; i++) {
		struct run *r = &s->set.runs[i];

		/* A row without a cluster was measured on --cluster. */
		if (!r->cluster[0])
			snprintf(r->cluster, sizeof(r->cluster), "%s", s->req->cluster);
		if (strcmp(r->cluster, s->req->cluster) != 0 && strcmp(r->cluster, s->cluster.name) != 0) {
			cli_error("%s: row %d ('%s') was measured on cluster '%s', not on --cluster '%s'",
				  s->req->runs, r->row, r->id, r->cluster, s->req->cluster);
			return CLI_EXIT_INPUT;
		}
		if (!r->framework[0])
			snprintf(r->framework, sizeof(r->framework), "%s",
				 s->req->framework ? s->req->framework : CLI_DEFAULT_FRAMEWORK);
		rc = cli_load_run(s->req->runs, r, &s->models[i], &s->frameworks[i], &s->compressors[i], &s->cmp[i]);
		if (rc == CLI_EXIT_OK && !runs_complete(r, &s->models[i], &s->cluster, &err)) {
			cli_error("%s: row %d ('%s'): %s", s->req->runs, r->row, r->id, err.message);
			return CLI_EXIT_INPUT;
		}
		s->fw[i] = &s->frameworks[i];
		s->measured_s[i] = runs_measured_time_s(r, &s->models[i]);
	}
	if (rc == CLI_EXIT_OK && wants_framework(s->req->fit)) {
		rc = load_fit_framework(s);
		for (int i = 0; i < s->set.n; i++)
			s->fw[i] = &s->fit_fw;
	}
	return rc;
}

static int
add_key(struct calib_session *s, const char *path)
{
	struct plan_error err;
	struct calib_key *k = &s->keys[s->nkeys];

	if (s->nkeys == CALIB_MAX_PARAMS) {
		cli_error("--fit: at most %d keys", CALIB_MAX_PARAMS);
		return CLI_EXIT_USAGE;
	}
	plan_error_clear(&err);
	if (!calib_key_resolve(path, &s->cluster, s->fits_framework ? &s->fit_fw : NULL, k, &err))
		return cli_report(&err);
	for (int j = 0; j < s->nkeys; j++)
		if (strcmp(s->keys[j].path, k->path) == 0) {
			cli_error("--fit names '%s' twice", path);
			return CLI_EXIT_USAGE;
		}
	s->names[s->nkeys] = k->path;
	s->start[s->nkeys] = *k->value;
	s->lo[s->nkeys] = k->lo;
	s->hi[s->nkeys] = k->hi;
	s->nkeys++;
	return CLI_EXIT_OK;
}

/* --fit's list, or the default keys for these runs. */
static int
choose_keys(struct calib_session *s)
{
	char buf[4096], defaults[2][CALIB_KEY_LEN], *t, *comma;
	int rc = CLI_EXIT_OK, max_gpus = 0, n;

	if (s->req->fit) {
		if (strlen(s->req->fit) >= sizeof(buf) || !s->req->fit[0]) {
			cli_error("--fit expects a comma-separated list of keys");
			return CLI_EXIT_USAGE;
		}
		memcpy(buf, s->req->fit, strlen(s->req->fit) + 1);
		/* Split by hand, not strtok_r: that skips empty items, and
		 * 'a,,b' or ',a' is a typo to report, not a list of two. */
		for (t = buf; rc == CLI_EXIT_OK; t = comma + 1) {
			if ((comma = strchr(t, ',')))
				*comma = '\0';
			if (!*t) {
				cli_error("--fit has an empty item in '%s'", s->req->fit);
				return CLI_EXIT_USAGE;
			}
			rc = add_key(s, t);
			if (!comma)
				break;
		}
		return rc;
	}
	for (int i = 0; i < s->set.n; i++)
		if (plan_gpus(&s->set.runs[i].plan) > max_gpus)
			max_gpus = plan_gpus(&s->set.runs[i].plan);
	n = calib_default_keys(&s->cluster, max_gpus, defaults);
	if (n == 0) {
		cli_error("no default key to fit for these runs and cluster '%s': give --fit", s->cluster.name);
		return CLI_EXIT_USAGE;
	}
	for (int j = 0; j < n && rc == CLI_EXIT_OK; j++)
		rc = add_key(s, defaults[j]);
	return rc;
}

/* The fit, the errors before and after, and the cross-validation. */
static int
run_fit(struct calib_session *s)
{
	struct plan_error err;
	double cv_mape;

	s->problem = (struct calib_problem){ s->set.n, s->nkeys, s->names, s->start, s->lo, s->hi,
					     s->measured_s, predict_cb, s };
	plan_error_clear(&err);
	if (!calib_errors(&s->problem, s->start, s->before, &err) ||
	    !calib_fit(&s->problem, NULL, s->set.n, &s->fit, &err) ||
	    !calib_errors(&s->problem, s->fit.x, s->after, &err))
		return cli_report(&err);
	s->folds = s->req->folds ? s->req->folds : calib_default_folds(s->set.n);
	if (s->set.n < 2 || s->folds > s->set.n) {
		snprintf(s->cv_why, sizeof(s->cv_why), "%d folds cannot be made of %d run%s", s->folds, s->set.n,
			 s->set.n == 1 ? "" : "s");
	} else {
		plan_error_clear(&err);
		s->cv_ok = calib_cross_validate(&s->problem, s->folds, s->cv, &cv_mape, &err);
		if (!s->cv_ok)
			snprintf(s->cv_why, sizeof(s->cv_why), "%s", err.message);
	}
	/* The profiles hold the fitted values from here on. */
	for (int j = 0; j < s->nkeys; j++)
		*s->keys[j].value = s->fit.x[j];
	return CLI_EXIT_OK;
}

/* The written profile is named as calibrated and says where its GPU's values come from. */
static void
rename_profile(struct calib_session *s)
{
	size_t n = strlen(s->cluster.name);
	bool gpu_fitted = false;

	if (n + sizeof("-calibrated") <= sizeof(s->cluster.name))
		memcpy(s->cluster.name + n, "-calibrated", sizeof("-calibrated"));
	for (int j = 0; j < s->nkeys; j++)
		gpu_fitted |= strncmp(s->keys[j].path, "gpu.", 4) == 0;
	if (gpu_fitted)
		snprintf(s->cluster.gpu.calibration, sizeof(s->cluster.gpu.calibration),
			 "plan-cli calibrate on %.200s", s->req->runs);
}

/* Both profiles or neither: a framework profile that cannot be written
 * must not leave the cluster profile replaced. */
static int
write_outputs(struct calib_session *s)
{
	const char *paths[2] = { s->req->output, s->req->framework_output };
	char *yaml[2] = { NULL, NULL };
	int n = s->req->framework_output ? 2 : 1, rc;

	rename_profile(s);
	yaml[0] = calibrate_cluster_yaml(s);
	if (yaml[0] && n == 2)
		yaml[1] = calibrate_framework_yaml(s);
	if (!yaml[0] || (n == 2 && !yaml[1])) {
		free(yaml[0]);
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	if (!cli_profile_loads(PROFILE_CLUSTER, paths[0], yaml[0]) ||
	    (n == 2 && !cli_profile_loads(PROFILE_FRAMEWORK, paths[1], yaml[1])))
		rc = CLI_EXIT_INPUT;
	else
		rc = cli_write_files(paths, (const char *const *)yaml, n);
	free(yaml[0]);
	free(yaml[1]);
	return rc;
}

static int
check_request(const struct calibrate_request *r, int argc, char **argv)
{
	if (optind != argc) {
		cli_error("unexpected argument '%s' for calibrate (see 'plan-cli calibrate --help')", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (!r->runs || !r->cluster || !r->output) {
		cli_error("calibrate needs %s (see 'plan-cli calibrate --help')",
			  !r->runs ? "--runs FILE.csv" : !r->cluster ? "--cluster NAME|FILE" : "--output FILE");
		return CLI_EXIT_USAGE;
	}
	if (wants_framework(r->fit) && !r->framework_output) {
		cli_error("--fit has framework keys: give --framework-output FILE for the framework profile");
		return CLI_EXIT_USAGE;
	}
	if (r->framework_output && atomic_same_file(r->output, r->framework_output)) {
		cli_error("--output and --framework-output name the same file '%s'", r->framework_output);
		return CLI_EXIT_USAGE;
	}
	return -1;
}

static int
calibrate(struct calib_session *s)
{
	struct plan_error err;
	int rc;

	plan_error_clear(&err);
	if (!runs_csv_load(s->req->runs, &s->set, &err))
		return cli_report(&err);
	if ((rc = cli_load_cluster(s->req->cluster, &s->cluster)) != CLI_EXIT_OK)
		return rc;
	s->cluster_loaded = true;
	if ((rc = load_runs(s)) != CLI_EXIT_OK || (rc = choose_keys(s)) != CLI_EXIT_OK ||
	    (rc = run_fit(s)) != CLI_EXIT_OK || (rc = write_outputs(s)) != CLI_EXIT_OK)
		return rc;
	if (s->req->format == CLI_FORMAT_JSON)
		return calibrate_print_json(s) ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
	calibrate_print_text(s);
	return CLI_EXIT_OK;
}

int
cmd_calibrate(int argc, char **argv)
{
	struct calibrate_request r = { .format = CLI_FORMAT_TEXT };
	struct calib_session s;
	int rc;

	/* calibrate --nccl-tests LOG... and calibrate --gemm CSV fit the
	 * microbenchmark logs: that is fit-logs, with its options. */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--nccl-tests") == 0 || strcmp(argv[i], "--gemm") == 0 ||
		    strncmp(argv[i], "--gemm=", 7) == 0)
			return cmd_fit_logs(argc, argv);
	if ((rc = cli_options_parse(&cli_calibrate_options, argc, argv, &r)) >= 0)
		return rc;
	if ((rc = check_request(&r, argc, argv)) >= 0)
		return rc;
	memset(&s, 0, sizeof(s));
	s.req = &r;
	rc = calibrate(&s);
	session_release(&s);
	return cli_finish(rc);
}
