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
	CLI_FRAMEWORK_SET_ROW(0),
	{ .name = "fit", .metavar = "KEY,...", .kind = CLI_OPT_STRING, .offset = CALIBRATE(fit),
	  .help = "profile keys to fit by schema path, e.g. gpu.gemm_efficiency_max,\n"
		  "inter_node.efficiency, framework.layer_overhead (default: those of\n"
		  "the GEMM throughput, gpu.memory_efficiency, intra_node.efficiency\n"
		  "and inter_node.efficiency that the runs determine; the others are\n"
		  "reported and keep their values)" },
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
	char where[CLI_CONTEXT_LEN];
	const char *name = s->req->framework ? s->req->framework : s->set.runs[0].framework;

	for (int i = 0; i < s->set.n; i++)
		if (strcmp(s->set.runs[i].framework, name) != 0) {
			cli_error("%s uses framework '%s', not '%s': framework keys are fitted on runs of one "
				  "framework", cli_run_where(s->req->runs, &s->set.runs[i], &s->set.runs[i].at_framework, where,
					sizeof(where)),
				  s->set.runs[i].framework, name);
			return CLI_EXIT_USAGE;
		}
	s->fits_framework = true;
	return cli_load_framework(name, &s->fit_fw);
}

/* --framework names a profile even where every row names its own: a
 * misspelt one (calibrate --framework bogus) was never loaded, and the
 * fit ran on without it. */
static int
check_framework(const struct calibrate_request *req)
{
	struct framework fw;

	return req->framework ? cli_load_framework(req->framework, &fw) : CLI_EXIT_OK;
}

/* Each run's model and framework; every run must have been measured on --cluster. */
static int
load_runs(struct calib_session *s)
{
	size_t n = (size_t)s->set.n;
	int rc = check_framework(s->req);
	struct plan_error err;

	if (rc != CLI_EXIT_OK)
		return rc;

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
		char where[CLI_CONTEXT_LEN];

		/* A row without a cluster was measured on --cluster. */
		if (!r->cluster[0])
			snprintf(r->cluster, sizeof(r->cluster), "%s", s->req->cluster);
		if (strcmp(r->cluster, s->req->cluster) != 0 && strcmp(r->cluster, s->cluster.name) != 0) {
			cli_error("%s was measured on cluster '%s', not on --cluster '%s'",
				  cli_run_where(s->req->runs, r, &r->at_cluster, where, sizeof(where)), r->cluster,
				  s->req->cluster);
			return CLI_EXIT_INPUT;
		}
		if (!r->framework[0])
			snprintf(r->framework, sizeof(r->framework), "%s",
				 s->req->framework ? s->req->framework : CLI_DEFAULT_FRAMEWORK);
		rc = cli_load_run(s->req->runs, r, &s->models[i], &s->frameworks[i], &s->compressors[i], &s->cmp[i]);
		if (rc == CLI_EXIT_OK && !runs_complete(r, &s->models[i], &s->cluster, &s->frameworks[i], &err)) {
			cli_error("%s: %s", cli_run_where(s->req->runs, r, NULL, where, sizeof(where)), err.message);
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
	if (!calib_key_resolve(path, &s->cluster, s->fits_framework ? &s->fit_fw : NULL, k, &err)) {
		size_t size = calib_key_list_size();
		char *list = strncmp(err.message, "unknown key", 11) == 0 ? malloc(size) : NULL;
		int rc = cli_report(&err);

		/* Every valid key, never cut: on a line of its own. */
		if (list) {
			calib_key_list(list, size);
			fprintf(stderr, "plan-cli: valid keys for --fit: %s\n", list);
			free(list);
		}
		return rc;
	}
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

/* Split --fit's list and add its keys. */
static int
fit_keys(struct calib_session *s)
{
	char buf[4096], *t, *comma;
	int rc = CLI_EXIT_OK;

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

/* Note that default key @j is left out of the fit at its profile value. */
static void
leave_out(struct calib_session *s, int j, const char *why)
{
	int k = s->nleft++;

	memcpy(s->left_key[k], s->keys[j].path, sizeof(s->left_key[k]));
	snprintf(s->left_why[k], sizeof(s->left_why[k]), "%s; kept at %.6g%s%s", why, s->start[j],
		 s->keys[j].unit[0] ? " " : "", s->keys[j].unit);
}

/* Keep only the keys @keep[0..n-1] (indices, ascending), in place.
 * Every key goes back to its profile value first: predict_cb leaves the
 * profile at the last point the fit or calib_choose tried, and a key left
 * out keeps its profile value (the report says "kept at" it), in the fits
 * that follow and in the written profile. */
static void
keep_keys(struct calib_session *s, const int *keep, int n)
{
	for (int j = 0; j < s->nkeys; j++)
		*s->keys[j].value = s->start[j];
	for (int k = 0; k < n; k++) {
		int j = keep[k];

		s->keys[k] = s->keys[j];
		s->start[k] = s->start[j];
		s->lo[k] = s->lo[j];
		s->hi[k] = s->hi[j];
	}
	s->nkeys = n;
	for (int k = 0; k < n; k++)
		s->names[k] = s->keys[k].path;
}

static void
set_problem(struct calib_session *s)
{
	s->problem = (struct calib_problem){ .nruns = s->set.n, .nparams = s->nkeys, .names = s->names,
					     .start = s->start, .lo = s->lo, .hi = s->hi,
					     .measured_s = s->measured_s, .predict = predict_cb, .ctx = s };
}

/*
 * The default keys: of the candidates (the GEMM throughput, the GPU's
 * memory efficiency, the efficiency of each network level), those the
 * runs determine (calib_choose); the others are reported with the reason
 * and keep their profile values.
 */
static int
default_keys(struct calib_session *s)
{
	char cand[CALIB_MAX_PARAMS][CALIB_KEY_LEN], why[256];
	struct calib_choice ch;
	struct plan_error err;
	int n = calib_default_keys(&s->cluster, cand), keep[CALIB_MAX_PARAMS], nkeep = 0, rc = CLI_EXIT_OK;

	s->default_keys = true;
	for (int j = 0; j < n && rc == CLI_EXIT_OK; j++)
		rc = add_key(s, cand[j]);
	if (rc != CLI_EXIT_OK)
		return rc;
	set_problem(s);
	plan_error_clear(&err);
	if (!calib_choose(&s->problem, s->set.n > 1 ? s->set.n - 1 : 1, &ch, &err))
		return cli_report(&err);
	for (int j = 0; j < n; j++) {
		switch (ch.why[j]) {
		case CALIB_KEY_FITTED:
			keep[nkeep++] = j;
			continue;
		case CALIB_KEY_UNSEEN:
			/* d ln t / d ln x: for an efficiency, the share of
			 * the iteration its time takes (CALIB_SEEN_MIN). */
			snprintf(why, sizeof(why), "not determined by these runs (what it governs is at most "
				 "%.2g %% of any run's iteration time, under %g %%)", 100.0 * ch.sensitivity[j],
				 100.0 * CALIB_SEEN_MIN);
			break;
		case CALIB_KEY_COLLINEAR:
			snprintf(why, sizeof(why), "not determined apart from %s by these runs (only %.2g %% of "
				 "its effect on their times is its own, too little to fit)",
				 s->keys[ch.with[j]].path, 100.0 * ch.independent[j]);
			break;
		case CALIB_KEY_TOO_MANY:
			snprintf(why, sizeof(why), "%d run%s leave%s no residual for another key", s->set.n,
				 s->set.n == 1 ? "" : "s", s->set.n == 1 ? "s" : "");
			break;
		}
		leave_out(s, j, why);
	}
	if (nkeep == 0) {
		cli_error("these runs determine none of the default keys (%s: %s): give --fit", s->left_key[0],
			  s->left_why[0]);
		return CLI_EXIT_USAGE;
	}
	keep_keys(s, keep, nkeep);
	return CLI_EXIT_OK;
}

/* --fit's list, or the default keys for these runs. */
static int
choose_keys(struct calib_session *s)
{
	return s->req->fit ? fit_keys(s) : default_keys(s);
}

/* Leave default key @j out with @why and keep the others. */
static void
drop_key(struct calib_session *s, int j, const char *why)
{
	int keep[CALIB_MAX_PARAMS], nkeep = 0;

	leave_out(s, j, why);
	for (int k = 0; k < s->nkeys; k++)
		if (k != j)
			keep[nkeep++] = k;
	keep_keys(s, keep, nkeep);
	set_problem(s);
}

/* A default key the fit ran to a bound of its range: left out with the
 * reason, and the others fitted again. False: no such key. */
static bool
drop_bound_key(struct calib_session *s)
{
	bool upper = false;
	int j;
	char why[256];

	if (!s->default_keys || !s->fit.stop || s->nkeys < 2 ||
	    (j = calib_key_at_bound(&s->problem, &s->fit, &upper)) < 0)
		return false;
	snprintf(why, sizeof(why), "ran to its %s bound %.6g on these runs, where they no longer determine it",
		 upper ? "upper" : "lower", upper ? s->hi[j] : s->lo[j]);
	drop_key(s, j, why);
	return true;
}

/*
 * A default key whose standard error is over half its fitted value: the
 * runs leave it uncertain by more than the factor of two that separates
 * a poor link or kernel from a good one, which its column's norm alone
 * does not show (the residuals are flat along it). The worst is left out
 * and the others fitted again. False: none.
 */
#define SE_MAX 0.5

static bool
drop_uncertain_key(struct calib_session *s)
{
	int worst = -1;
	double most = SE_MAX;
	char why[256];

	if (!s->default_keys || !s->fit.has_se || s->nkeys < 2)
		return false;
	for (int j = 0; j < s->nkeys; j++)
		if (s->fit.x[j] != 0.0 && s->fit.se[j] / fabs(s->fit.x[j]) > most)
			worst = j, most = s->fit.se[j] / fabs(s->fit.x[j]);
	if (worst < 0)
		return false;
	snprintf(why, sizeof(why), "not determined by these runs (fitted %.3g +/- %.2g: a standard error over "
		 "half the value)", s->fit.x[worst], s->fit.se[worst]);
	drop_key(s, worst, why);
	return true;
}

/* The fit, the errors before and after, and the cross-validation. */
static int
run_fit(struct calib_session *s)
{
	struct plan_error err;
	double cv_mape;

	bool fitted;

	set_problem(s);
	plan_error_clear(&err);
	if (!calib_errors(&s->problem, s->start, s->before, &err))
		return cli_report(&err);
	for (;;) {
		fitted = calib_fit(&s->problem, NULL, s->set.n, &s->fit, &err);
		if (fitted ? !drop_uncertain_key(s) : !drop_bound_key(s))
			break;
		plan_error_clear(&err);
	}
	if (!fitted || !calib_errors(&s->problem, s->fit.x, s->after, &err))
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
