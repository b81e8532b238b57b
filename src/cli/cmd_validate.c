#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <jansson.h>

#include "cli/cli.h"
#include "io/utf8.h"
#include "cli/options.h"
#include "plan/cluster.h"
#include "plan/estimate.h"
#include "plan/flops.h"
#include "plan/model.h"
#include "plan/numparse.h"
#include "plan/stats.h"
#include "io/runs_csv.h"

/* ------------------------------------------------- validate options */

#define VALIDATE(field) offsetof(struct validate_request, field)

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
	CLI_FRAMEWORK_SET_ROW(0),
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

struct row_result {
	const struct run *run;
	struct run_prediction p;
};

/* Predict one run; prints the error with the row number. */
static int
predict_run(const char *file, struct run *run, struct row_result *res)
{
	struct framework fw;
	struct compressor cmp;
	const struct compressor *cmp_used;
	struct model m;
	struct cluster c;
	struct plan_error err;
	char where[CLI_CONTEXT_LEN];
	int rc;

	if (!run->cluster[0]) {
		cli_error("%s names no cluster (column 'cluster')",
			  cli_run_where(file, run, &run->at_cluster, where, sizeof(where)));
		return CLI_EXIT_INPUT;
	}
	rc = cli_load_run(file, run, &m, &fw, &cmp, &cmp_used);
	if (rc == CLI_EXIT_OK) {
		cli_run_where(file, run, &run->at_cluster, cli_context, sizeof(cli_context));
		rc = cli_load_cluster(run->cluster, &c);
		cli_context[0] = '\0';
	}
	if (rc != CLI_EXIT_OK)
		return rc;
	plan_error_clear(&err);
	res->run = run;
	if (!runs_complete(run, &m, &c, &fw, &err) || !runs_predict(run, &m, &c, &fw, cmp_used, &res->p, &err)) {
		cli_error("%s: %s", cli_run_where(file, run, NULL, where, sizeof(where)), err.message);
		rc = CLI_EXIT_INPUT;
	}
	cluster_release(&c);
	return rc;
}

/* The rows of one source (the runs' 'source' column): how far off they
 * are, and whether they come out in the measured order (Spearman's rho
 * of predicted against measured time), which is what optimize and a
 * sweep's ranking rest on. */
struct source_summary {
	const char *source; /* "" for rows without one */
	int rows;
	double mape, worst, bias, spearman;
	bool has_spearman;
};

static int
source_index(const struct source_summary *g, int ng, const char *source)
{
	for (int k = 0; k < ng; k++)
		if (strcmp(g[k].source, source) == 0)
			return k;
	return -1;
}

/* Spearman's rho of group @k's rows; @buf holds 4 n doubles, @work 2 n ints. */
static void
source_rank(const struct row_result *res, int n, struct source_summary *g, double *buf, int *work)
{
	double *meas = buf, *pred = buf + n, *rx = buf + 2 * n, *ry = buf + 3 * n;
	int m = 0;

	for (int i = 0; i < n; i++)
		if (strcmp(res[i].run->source, g->source) == 0) {
			meas[m] = res[i].p.measured_s;
			pred[m++] = res[i].p.predicted_s;
		}
	g->has_spearman = stats_spearman(meas, pred, m, work, rx, ry, &g->spearman);
}

/* The sources in order of first appearance into @g (n entries); their count, -1 out of memory. */
static int
summarise_sources(const struct row_result *res, int n, struct source_summary *g)
{
	double *buf = malloc(sizeof(double) * 4 * (size_t)n);
	int *work = malloc(sizeof(int) * 2 * (size_t)n);
	int ng = 0;

	if (!buf || !work) {
		free(buf);
		free(work);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int k = source_index(g, ng, res[i].run->source);
		double e = res[i].p.error;

		if (k < 0) {
			k = ng++;
			g[k] = (struct source_summary){ .source = res[i].run->source };
		}
		g[k].rows++;
		g[k].mape += fabs(e);
		g[k].bias += e;
		g[k].worst = fmax(g[k].worst, fabs(e));
	}
	for (int k = 0; k < ng; k++) {
		g[k].mape /= g[k].rows;
		g[k].bias /= g[k].rows;
		source_rank(res, n, &g[k], buf, work);
	}
	free(buf);
	free(work);
	return ng;
}

/* The bytes of the first @max characters of UTF-8 @s (validated on
 * load), their count in *@chars, and whether that is all of it. */
static int
utf8_prefix(const char *s, int max, int *chars, bool *whole)
{
	int n = 0, c = 0;

	while (s[n] && c < max) {
		n++;
		while (((unsigned char)s[n] & 0xC0) == 0x80)
			n++;
		c++;
	}
	*chars = c;
	*whole = s[n] == '\0';
	return n;
}

static void
print_sources_text(const struct source_summary *g, int ng)
{
	printf("\n%-44s %4s %8s %8s %8s %8s\n", "by source", "rows", "MAPE", "worst", "bias", "Spearman");
	for (int k = 0; k < ng; k++) {
		const char *s = g[k].source[0] ? g[k].source : "(no source)";
		int chars;
		bool whole;
		int bytes = utf8_prefix(s, 41, &chars, &whole);

		/* Padded by characters, not bytes, so that the columns line up;
		 * a line break or tab in a quoted source cell (CSV allows them)
		 * would break the table: a space each. */
		for (int i = 0; i < bytes; i++)
			putchar((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i]);
		printf("%s%*s %4d %6.2f %% %6.2f %% %+6.1f %%", whole ? "" : "...", 44 - chars - (whole ? 0 : 3), "",
		       g[k].rows, 100.0 * g[k].mape, 100.0 * g[k].worst, 100.0 * g[k].bias);
		if (g[k].has_spearman)
			printf(" %8.3f\n", g[k].spearman);
		else
			printf(" %8s\n", "-");
	}
}

/* The memory rows' mean absolute error, where the CSV gave measured memory. */
static void
print_memory_summary(const struct row_result *res, int n)
{
	double sum = 0.0, worst = 0.0;
	int k = 0;

	for (int i = 0; i < n; i++)
		if (res[i].run->measured_memory_gib > 0) {
			sum += fabs(res[i].p.memory_error);
			worst = fmax(worst, fabs(res[i].p.memory_error));
			k++;
		}
	if (k > 0)
		printf("memory: rows %d, MAPE %.2f %%, worst row %.2f %%\n", k, 100.0 * sum / k, 100.0 * worst);
}

static void
print_text(const struct row_result *res, int n, double mape, double worst, const struct source_summary *g,
	   int ng)
{
	printf("%-14s %-12s %6s %4s %4s %4s %11s %11s %8s\n", "id", "model", "gpus", "tp", "pp",
	       "dp", "measured_s", "predicted_s", "error");
	for (int i = 0; i < n; i++) {
		const struct run *r = res[i].run;

		printf("%-14s %-12s %6d %4d %4d %4d %11.3f %11.3f %+7.1f %%%s", r->id, r->model,
		       plan_gpus(&r->plan), r->plan.tp, r->plan.pp, r->plan.dp, res[i].p.measured_s,
		       res[i].p.predicted_s, 100.0 * res[i].p.error, res[i].p.fits ? "" : "  (does not fit)");
		if (r->measured_memory_gib > 0)
			printf("  memory %.2f GiB of %.2f measured (%+.1f %%)", res[i].p.predicted_memory_bytes / 1073741824.0,
			       r->measured_memory_gib, 100.0 * res[i].p.memory_error);
		putchar('\n');
	}
	printf("\nrows %d, MAPE %.2f %%, worst row %.2f %%\n", n, 100.0 * mape, 100.0 * worst);
	print_memory_summary(res, n);
	if (ng > 1 || (ng == 1 && g[0].source[0]))
		print_sources_text(g, ng);
}

static json_t *
sources_json(const struct source_summary *g, int ng)
{
	json_t *a = json_array();

	for (int k = 0; a && k < ng; k++) {
		json_t *o = json_pack("{s:o, s:i, s:f, s:f, s:f, s:o}", "source", utf8_json_string(g[k].source), "rows", g[k].rows,
				      "mape", g[k].mape, "worst_abs_error", g[k].worst, "bias", g[k].bias,
				      "spearman", g[k].has_spearman ? json_real(g[k].spearman) : json_null());

		if (!o || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
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
		printf(",%d,%.6g,%.6g,%.4f,%s\r\n", plan_gpus(&r->plan), res[i].p.measured_s,
		       res[i].p.predicted_s, 100.0 * res[i].p.error, res[i].p.fits ? "true" : "false");
	}
}

static bool
print_json(const struct row_result *res, int n, int skipped, double mape, double worst,
	   const struct source_summary *g, int ng)
{
	json_t *root = json_object(), *rows = json_array();
	int rc = 0;

	if (!root || !rows) {
		json_decref(root);
		json_decref(rows);
		return false;
	}
	for (int i = 0; i < n; i++) {
		json_t *o = json_pack("{s:o, s:o, s:o, s:i, s:f, s:f, s:f, s:b}",
				      "id", utf8_json_string(res[i].run->id), "model", utf8_json_string(res[i].run->model),
				      "cluster", utf8_json_string(res[i].run->cluster), "gpus", plan_gpus(&res[i].run->plan),
				      "measured_iteration_time_s", res[i].p.measured_s,
				      "predicted_iteration_time_s", res[i].p.predicted_s,
				      "error", res[i].p.error, "fits", res[i].p.fits);

		if (o) {
			rc |= json_object_set_new(o, "source", utf8_json_string(res[i].run->source));
			rc |= json_object_set_new(o, "predicted_memory_bytes", json_real(res[i].p.predicted_memory_bytes));
			if (res[i].run->measured_memory_gib > 0)
				rc |= json_object_set_new(o, "measured_memory_bytes",
							  json_real(res[i].run->measured_memory_gib * 1073741824.0));
		}
		if (!o)
			rc = -1;
		else
			rc |= json_array_append_new(rows, o);
	}
	rc |= json_object_set_new(root, "rows", rows);
	rc |= json_object_set_new(root, "mape", json_real(mape));
	rc |= json_object_set_new(root, "worst_abs_error", json_real(worst));
	rc |= json_object_set_new(root, "sources", sources_json(g, ng));
	rc |= json_object_set_new(root, "rows_skipped", json_integer(skipped));
	if (rc == 0)
		rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(root);
	putchar('\n');
	return rc == 0;
}

/* What the rows that could be predicted add up to. */
struct validate_totals {
	int n;        /* rows predicted, the first n of the results */
	int skipped;  /* rows that could not be */
	int first_rc; /* the exit code of the first skipped row */
	double mape, worst;
};

/*
 * Predict every row of @set into @res. A row that cannot be predicted (its
 * profiles do not load, its plan cannot run) is reported and left out; the
 * others still are.
 */
static void
predict_rows(const char *file, struct run_set *set, struct row_result *res, struct validate_totals *t)
{
	*t = (struct validate_totals){ .first_rc = CLI_EXIT_OK };
	for (int i = 0; i < set->n; i++) {
		int row_rc = predict_run(file, &set->runs[i], &res[t->n]);

		if (row_rc != CLI_EXIT_OK) {
			if (t->skipped++ == 0)
				t->first_rc = row_rc;
			continue;
		}
		t->mape += fabs(res[t->n].p.error);
		t->worst = fmax(t->worst, fabs(res[t->n].p.error));
		t->n++;
	}
	if (t->n > 0)
		t->mape /= t->n;
}

/* Print the rows in @r's format; false when the JSON could not be written. */
static bool
print_results(const struct validate_request *r, const struct row_result *res, const struct validate_totals *t,
	      const struct source_summary *g, int ng)
{
	if (r->format == CLI_FORMAT_JSON)
		return print_json(res, t->n, t->skipped, t->mape, t->worst, g, ng);
	if (r->format == CLI_FORMAT_CSV)
		print_csv(res, t->n);
	else
		print_text(res, t->n, t->mape, t->worst, g, ng);
	return true;
}

/* The exit code once the rows are printed: skipped rows, then --max-mape, then --max-error. */
static int
check_limits(const struct validate_request *r, const char *file, int rows, const struct validate_totals *t)
{
	if (t->skipped > 0) {
		cli_error("%s: %d of %d rows could not be predicted (above): left out of the MAPE", file, t->skipped,
			  rows);
		return t->first_rc;
	}
	if (r->max_mape >= 0 && 100.0 * t->mape > r->max_mape) {
		cli_error("MAPE %.2f %% is above --max-mape %.2f %%", 100.0 * t->mape, r->max_mape);
		return CLI_EXIT_THRESHOLD;
	}
	if (r->max_error >= 0 && 100.0 * t->worst > r->max_error) {
		cli_error("worst row error %.2f %% is above --max-error %.2f %%", 100.0 * t->worst, r->max_error);
		return CLI_EXIT_THRESHOLD;
	}
	return CLI_EXIT_OK;
}

/* Predict, summarise, print and check the rows of @set (loaded from @file). */
static int
validate_set(const struct validate_request *r, const char *file, struct run_set *set)
{
	struct row_result *res = calloc((size_t)set->n, sizeof(*res));
	struct source_summary *groups = NULL;
	struct validate_totals t;
	int rc, ngroups = 0;

	if (!res) {
		cli_error("out of memory");
		return CLI_EXIT_FAILURE;
	}
	predict_rows(file, set, res, &t);
	rc = t.n == 0 ? t.first_rc : CLI_EXIT_OK;
	if (rc == CLI_EXIT_OK && (!(groups = calloc((size_t)t.n, sizeof(*groups))) ||
				  (ngroups = summarise_sources(res, t.n, groups)) < 0)) {
		cli_error("out of memory");
		rc = CLI_EXIT_FAILURE;
	}
	if (rc == CLI_EXIT_OK)
		rc = print_results(r, res, &t, groups, ngroups) ? check_limits(r, file, set->n, &t) : CLI_EXIT_FAILURE;
	free(groups);
	free(res);
	return rc;
}

int
cmd_validate(int argc, char **argv)
{
	struct validate_request r = { CLI_FORMAT_TEXT, -1.0, -1.0 };
	struct run_set set;
	struct plan_error err;
	int rc;

	if ((rc = cli_options_parse(&cli_validate_options, argc, argv, &r)) >= 0)
		return rc;
	if (optind != argc - 1) {
		cli_error("validate takes one CSV file (see 'plan-cli validate --help')");
		return CLI_EXIT_USAGE;
	}
	plan_error_clear(&err);
	if (!runs_csv_load(argv[optind], &set, &err)) {
		runs_csv_release(&set);
		return cli_report(&err);
	}
	rc = validate_set(&r, argv[optind], &set);
	runs_csv_release(&set);
	return cli_finish(rc);
}
