#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <jansson.h>

#include "cli/cli.h"
#include "plan/cluster.h"
#include "plan/estimate.h"
#include "plan/flops.h"
#include "plan/model.h"
#include "plan/numparse.h"
#include "io/runs_csv.h"

static const char validate_usage[] =
	"usage: plan-cli validate FILE.csv [--format text|json|csv] [--max-mape PCT] [--max-error PCT]\n"
	"\n"
	"Predict every run of FILE.csv and compare with its measured iteration time (or\n"
	"TFLOP/s per GPU, turned into a time with the row's flop_convention). Prints the\n"
	"error of each row and the mean absolute percentage error (MAPE).\n"
	"\n"
	"  --max-mape PCT   exit with status 5 when the MAPE is above PCT percent\n"
	"  --max-error PCT  exit with status 5 when any row's |error| is above PCT percent\n";

struct row_result {
	const struct run *run;
	double predicted_s;
	double measured_s;
	double error;       /* (predicted - measured) / measured */
	double predicted_tflops;
	bool fits;
};

/* Predict one run; prints the error with the row number. */
static int
predict_run(const char *file, struct run *run, struct row_result *res)
{
	struct estimate_options opt = { COLL_ALGO_RING, NULL, NULL };
	struct framework fw;
	struct model m;
	struct cluster c;
	struct estimate e;
	struct plan_error err;
	int rc;

	snprintf(cli_context, sizeof(cli_context), "%s: row %d ('%s')", file, run->row, run->id);
	rc = cli_load_model(run->model, &m);
	if (rc == CLI_EXIT_OK && run->framework[0]) {
		rc = cli_load_framework(run->framework, &fw);
		opt.framework = &fw;
	}
	if (rc == CLI_EXIT_OK)
		rc = cli_load_cluster(run->cluster, &c);
	cli_context[0] = '\0';
	if (rc != CLI_EXIT_OK)
		return rc;
	if (run->plan.seq_len == 0)
		run->plan.seq_len = m.seq_len;
	plan_error_clear(&err);
	if (!estimate_plan(&m, &c, &run->plan, &opt, &e, &err)) {
		cli_error("%s: row %d ('%s'): %s", file, run->row, run->id, err.message);
		cluster_release(&c);
		return CLI_EXIT_INPUT;
	}
	res->run = run;
	res->predicted_s = e.iteration_time_s;
	res->measured_s = runs_measured_time_s(run, &m);
	res->error = (res->predicted_s - res->measured_s) / res->measured_s;
	res->predicted_tflops = e.tflops_per_gpu;
	res->fits = e.fits;
	cluster_release(&c);
	return CLI_EXIT_OK;
}

static void
print_text(const struct row_result *res, int n, double mape, double worst)
{
	printf("%-14s %-12s %6s %4s %4s %4s %11s %11s %8s\n", "id", "model", "gpus", "tp", "pp",
	       "dp", "measured_s", "predicted_s", "error");
	for (int i = 0; i < n; i++) {
		const struct run *r = res[i].run;

		printf("%-14s %-12s %6d %4d %4d %4d %11.3f %11.3f %+7.1f %%%s\n", r->id, r->model,
		       plan_gpus(&r->plan), r->plan.tp, r->plan.pp, r->plan.dp, res[i].measured_s,
		       res[i].predicted_s, 100.0 * res[i].error, res[i].fits ? "" : "  (does not fit)");
	}
	printf("\nrows %d, MAPE %.2f %%, worst row %.2f %%\n", n, 100.0 * mape, 100.0 * worst);
}

static void
print_csv(const struct row_result *res, int n)
{
	printf("id,model,cluster,gpus,measured_iteration_time_s,predicted_iteration_time_s,error_pct,fits\r\n");
	for (int i = 0; i < n; i++) {
		const struct run *r = res[i].run;

		csv_fwrite(stdout, r->id, strlen(r->id));
		putchar(',');
		csv_fwrite(stdout, r->model, strlen(r->model));
		putchar(',');
		csv_fwrite(stdout, r->cluster, strlen(r->cluster));
		printf(",%d,%.6g,%.6g,%.4f,%s\r\n", plan_gpus(&r->plan), res[i].measured_s,
		       res[i].predicted_s, 100.0 * res[i].error, res[i].fits ? "true" : "false");
	}
}

static bool
print_json(const struct row_result *res, int n, double mape, double worst)
{
	json_t *root = json_object(), *rows = json_array();
	int rc = 0;

	if (!root || !rows) {
		json_decref(root);
		json_decref(rows);
		return false;
	}
	for (int i = 0; i < n; i++) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:f, s:f, s:f, s:b}",
				      "id", res[i].run->id, "model", res[i].run->model,
				      "cluster", res[i].run->cluster, "gpus", plan_gpus(&res[i].run->plan),
				      "measured_iteration_time_s", res[i].measured_s,
				      "predicted_iteration_time_s", res[i].predicted_s,
				      "error", res[i].error, "fits", res[i].fits);

		if (!o)
			rc = -1;
		else
			rc |= json_array_append_new(rows, o);
	}
	rc |= json_object_set_new(root, "rows", rows);
	rc |= json_object_set_new(root, "mape", json_real(mape));
	rc |= json_object_set_new(root, "worst_abs_error", json_real(worst));
	if (rc == 0)
		rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(root);
	putchar('\n');
	return rc == 0;
}

static bool
parse_pct(const char *opt, const char *val, double *out)
{
	if (!num_parse_double(val, out) || *out < 0) {
		cli_error("%s expects a non-negative percentage, got '%s'", opt, val);
		return false;
	}
	return true;
}

int
cmd_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "max-mape", required_argument, NULL, 'm' },
		{ "max-error", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run_set set;
	struct row_result *res;
	struct plan_error err;
	double mape = 0.0, worst = 0.0, max_mape = -1.0, max_error = -1.0;
	int format = CLI_FORMAT_TEXT, c, rc = CLI_EXIT_OK;
	const char *file;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(validate_usage, stdout);
			return cli_finish(CLI_EXIT_OK);
		case 'f':
			if (!cli_choice("--format", optarg, cli_format_names, &format))
				return CLI_EXIT_USAGE;
			break;
		case 'm':
			if (!parse_pct("--max-mape", optarg, &max_mape))
				return CLI_EXIT_USAGE;
			break;
		case 'e':
			if (!parse_pct("--max-error", optarg, &max_error))
				return CLI_EXIT_USAGE;
			break;
		case ':':
			cli_error("option '%s' needs a value", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		default:
			cli_error("unknown option '%s' for validate", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		cli_error("validate takes one CSV file (see 'plan-cli validate --help')");
		return CLI_EXIT_USAGE;
	}
	file = argv[optind];
	plan_error_clear(&err);
	if (!runs_csv_load(file, &set, &err)) {
		runs_csv_release(&set);
		return cli_report(&err);
	}
	res = calloc((size_t)set.n, sizeof(*res));
	if (!res) {
		runs_csv_release(&set);
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	for (int i = 0; i < set.n && rc == CLI_EXIT_OK; i++) {
		rc = predict_run(file, &set.runs[i], &res[i]);
		mape += fabs(res[i].error) / set.n;
		worst = fmax(worst, fabs(res[i].error));
	}
	if (rc == CLI_EXIT_OK) {
		if (format == CLI_FORMAT_JSON)
			rc = print_json(res, set.n, mape, worst) ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
		else if (format == CLI_FORMAT_CSV)
			print_csv(res, set.n);
		else
			print_text(res, set.n, mape, worst);
		if (rc == CLI_EXIT_OK && max_mape >= 0 && 100.0 * mape > max_mape) {
			cli_error("MAPE %.2f %% is above --max-mape %.2f %%", 100.0 * mape, max_mape);
			rc = CLI_EXIT_THRESHOLD;
		}
		if (rc == CLI_EXIT_OK && max_error >= 0 && 100.0 * worst > max_error) {
			cli_error("worst row error %.2f %% is above --max-error %.2f %%", 100.0 * worst, max_error);
			rc = CLI_EXIT_THRESHOLD;
		}
	}
	free(res);
	runs_csv_release(&set);
	return cli_finish(rc);
}
