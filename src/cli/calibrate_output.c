/* calibrate's outputs: the calibrated profiles (YAML) and the report (text, JSON). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/calibrate.h"
#include "io/profile_load.h"
#include "io/schema.h"
#include "io/utf8.h"

/* A comment line must stay one line, and YAML must be UTF-8: control
 * characters and bytes that are not UTF-8 become \xHH (utf8.h). */
static void
comment_text(FILE *f, const char *s)
{
	size_t need = utf8_escape(NULL, 0, s, true) + 1;
	char *buf = malloc(need);

	if (buf)
		utf8_escape(buf, need, s, true);
	fputs(buf ? buf : "?", f);
	free(buf);
}

/* UTC now, or $SOURCE_DATE_EPOCH for a reproducible file. */
static void
date_text(char *buf, size_t size)
{
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t t = epoch && epoch[0] ? (time_t)strtoll(epoch, NULL, 10) : time(NULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M UTC", &tm))
		snprintf(buf, size, "unknown date");
}

static double
mape(const double *e, int n)
{
	double sum = 0.0;

	for (int i = 0; i < n; i++)
		sum += fabs(e[i]);
	return sum / n;
}

static void
yaml_header(const struct calib_session *s, FILE *f)
{
	char date[64];

	date_text(date, sizeof(date));
	fprintf(f, "# %s: calibrated by plan-cli calibrate, %s\n# runs: ", s->cluster.name, date);
	comment_text(f, s->req->runs);
	fprintf(f, " (%d runs); base cluster: ", s->set.n);
	comment_text(f, s->req->cluster);
	fputs("\n# fitted (GSL gsl_multifit_nlinear, trust region, on the relative errors of the\n"
	      "# iteration times), value +/- standard error (base value):\n", f);
	for (int k = 0; k < s->nleft; k++) {
		fprintf(f, "# left out: %s: ", s->left_key[k]);
		comment_text(f, s->left_why[k]);
		fputc('\n', f);
	}
	for (int j = 0; j < s->nkeys; j++) {
		fprintf(f, "#   %s: %.6g", s->keys[j].path, s->fit.x[j]);
		if (s->fit.has_se)
			fprintf(f, " +/- %.2g", s->fit.se[j]);
		fprintf(f, "%s%s (base %.6g)\n", s->keys[j].unit[0] ? " " : "", s->keys[j].unit, s->start[j]);
	}
	fprintf(f, "# MAPE on these runs: before %.2f %%, after %.2f %%", 100.0 * s->fit.mape_before,
		100.0 * s->fit.mape_after);
	if (s->cv_ok)
		fprintf(f, "; cross-validated (%d folds) %.2f %%", s->folds, 100.0 * mape(s->cv, s->set.n));
	fputs("\n", f);
}

/* Text written by @fn into a malloc'd string; NULL when out of memory. */
static char *
to_string(const struct calib_session *s, void (*fn)(const struct calib_session *, FILE *))
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	fn(s, f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void
cluster_yaml(const struct calib_session *s, FILE *f)
{
	yaml_header(s, f);
	schema_write(cluster_schema, &s->cluster, f, 0);
}

static void
framework_yaml(const struct calib_session *s, FILE *f)
{
	yaml_header(s, f);
	schema_write(framework_schema, s->fits_framework ? &s->fit_fw : s->fw[0], f, 0);
}

char *
calibrate_cluster_yaml(const struct calib_session *s)
{
	return to_string(s, cluster_yaml);
}

char *
calibrate_framework_yaml(const struct calib_session *s)
{
	return to_string(s, framework_yaml);
}

static void
text_keys(const struct calib_session *s)
{
	printf("%-32s %14s %14s %14s\n", "key", "start", "fitted", "std. error");
	for (int j = 0; j < s->nkeys; j++) {
		char se[32] = "n/a";

		if (s->fit.has_se)
			snprintf(se, sizeof(se), "%.4g", s->fit.se[j]);
		printf("%-32s %14.6g %14.6g %14s%s%s\n", s->keys[j].path, s->start[j], s->fit.x[j], se,
		       s->keys[j].unit[0] ? " " : "", s->keys[j].unit);
	}
}

void
calibrate_print_text(const struct calib_session *s)
{
	printf("calibrate: %d runs of %s on cluster %s\n", s->set.n, s->req->runs, s->req->cluster);
	printf("fit: GSL trust region (Levenberg-Marquardt), %d iterations, %s%s\n\n", s->fit.iterations,
	       s->fit.stop, s->fit.converged ? "" : " (not converged)");
	text_keys(s);
	if (!s->fit.has_se)
		printf("(no standard errors: as many runs as keys leave no residual to estimate them)\n");
	if (s->nleft)
		printf("\nleft out of the default keys:\n");
	for (int k = 0; k < s->nleft; k++)
		printf("  %s: %s\n", s->left_key[k], s->left_why[k]);
	printf("\nMAPE before %.2f %%, after %.2f %%", 100.0 * s->fit.mape_before, 100.0 * s->fit.mape_after);
	if (s->cv_ok)
		printf(", cross-validated %.2f %% (%d folds%s)\n", 100.0 * mape(s->cv, s->set.n), s->folds,
		       s->folds == s->set.n ? ", leave-one-out" : "");
	else
		printf("; no cross-validated MAPE: %s\n", s->cv_why);
	printf("\n%-24s %11s %11s %8s %11s %8s %8s\n", "id", "measured_s", "before_s", "error", "after_s",
	       "error", "cv_error");
	for (int i = 0; i < s->set.n; i++) {
		double m = s->measured_s[i];

		printf("%-24s %11.4g %11.4g %+7.1f%% %11.4g %+7.1f%%", s->set.runs[i].id, m, m * (1 + s->before[i]),
		       100.0 * s->before[i], m * (1 + s->after[i]), 100.0 * s->after[i]);
		if (s->cv_ok)
			printf(" %+7.1f%%", 100.0 * s->cv[i]);
		putchar('\n');
	}
	printf("\nwrote %s%s%s\n", s->req->output, s->req->framework_output ? " and " : "",
	       s->req->framework_output ? s->req->framework_output : "");
}

static json_t *
json_keys(const struct calib_session *s)
{
	json_t *a = json_array();

	for (int j = 0; a && j < s->nkeys; j++)
		if (json_array_append_new(a, json_pack("{s:s, s:s, s:f, s:f, s:o}", "key", s->keys[j].path,
							"unit", s->keys[j].unit, "start", s->start[j],
							"value", s->fit.x[j], "std_error",
							s->fit.has_se ? json_real(s->fit.se[j]) : json_null())) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
json_left_out(const struct calib_session *s)
{
	json_t *a = json_array();

	for (int k = 0; a && k < s->nleft; k++)
		if (json_array_append_new(a, json_pack("{s:s, s:s}", "key", s->left_key[k], "why", s->left_why[k])) !=
		    0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
json_rows(const struct calib_session *s)
{
	json_t *a = json_array();

	for (int i = 0; a && i < s->set.n; i++) {
		double m = s->measured_s[i];

		if (json_array_append_new(a, json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:o}", "id", s->set.runs[i].id,
							"measured_iteration_time_s", m,
							"predicted_before_s", m * (1 + s->before[i]),
							"predicted_after_s", m * (1 + s->after[i]),
							"error_before", s->before[i], "error_after", s->after[i],
							"error_cv", s->cv_ok ? json_real(s->cv[i]) : json_null())) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

bool
calibrate_print_json(const struct calib_session *s)
{
	json_t *root = json_pack("{s:o, s:o, s:i, s:o, s:i, s:b, s:s, s:f, s:f, s:f, s:o, s:i, s:o, s:o, s:o}",
				 "runs_file", utf8_json_string(s->req->runs), "cluster", utf8_json_string(s->req->cluster),
				 "runs", s->set.n,
				 "keys", json_keys(s), "iterations", s->fit.iterations, "converged", s->fit.converged,
				 "stop", s->fit.stop, "rcond", s->fit.rcond, "mape_before", s->fit.mape_before,
				 "mape_after", s->fit.mape_after,
				 "cv_mape", s->cv_ok ? json_real(mape(s->cv, s->set.n)) : json_null(),
				 "cv_folds", s->folds, "rows", json_rows(s), "output", utf8_json_string(s->req->output),
				 "framework_output", s->req->framework_output ?
				 utf8_json_string(s->req->framework_output) : json_null());
	int rc;

	if (!root)
		return false;
	if (json_object_set_new(root, "left_out", json_left_out(s)) != 0 ||
	    (!s->cv_ok && json_object_set_new(root, "cv_note", json_string(s->cv_why)) != 0))
		rc = -1;
	else
		rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(root);
	putchar('\n');
	return rc == 0;
}
