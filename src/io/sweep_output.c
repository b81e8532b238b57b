#include <csv.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan/numparse.h"
#include "io/atomic_file.h"
#include "io/sweep_output.h"
#include "io/utf8.h"
#include "plan/units.h"

const char *const sweep_format_names[] = { "md", "csv", "latex", "json", NULL };

struct header {
	const char *text;   /* Markdown and LaTeX, with the unit */
	const char *csv;    /* machine name */
};

/*
 * A value of axis @a as tables and legends show it: a profile given as a
 * path ("models/gpt-1.7b.yaml", "hf:cfg/config.json") by its file's
 * name without folder or extension, as a bundled one is named; anything
 * else as given. CSV and JSON keep the value given, to be read back.
 */
static const char *
value_shown(const struct study_axis *a, int i, char *buf, size_t size)
{
	const char *v = a->values[i], *base, *dot;

	if (a->kind != AXIS_MODEL && a->kind != AXIS_CLUSTER && a->kind != AXIS_COMPRESSOR &&
	    a->kind != AXIS_FRAMEWORK)
		return v;
	base = strrchr(v, '/');
	if (!base && strncmp(v, "hf:", 3) != 0)
		return v;
	base = base ? base + 1 : v + 3;
	dot = strrchr(base, '.');
	if (dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0 || strcmp(dot, ".json") == 0))
		snprintf(buf, size, "%.*s", (int)(dot - base), base);
	else
		snprintf(buf, size, "%s", base);
	return buf[0] ? buf : v;
}

static const struct header axis_headers[AXIS_COUNT] = {
	[AXIS_MODEL] = { "Model", "model" },
	[AXIS_CLUSTER] = { "Cluster", "cluster" },
	[AXIS_COMPRESSOR] = { "Compressor", "compressor" },
	[AXIS_GPUS] = { "GPUs", "gpus" },
	[AXIS_NIC_BANDWIDTH] = { "NIC bandwidth", "nic_bandwidth" },
	[AXIS_INTRA_BANDWIDTH] = { "Intra-node bandwidth", "intra_bandwidth" },
	[AXIS_GLOBAL_BATCH] = { "Global batch", "global_batch" },
	[AXIS_SEQ_LEN] = { "Sequence", "seq_len" },
	[AXIS_TP] = { "TP", "tp" },
	[AXIS_PP] = { "PP", "pp" },
	[AXIS_DP] = { "DP", "dp" },
	[AXIS_VPP] = { "VPP", "vpp" },
	[AXIS_MICRO_BATCH] = { "Micro-batch", "micro_batch" },
	[AXIS_RECOMPUTE] = { "Recompute", "recompute" },
	[AXIS_ZERO] = { "ZeRO", "zero" },
	[AXIS_EP] = { "EP", "ep" },
	[AXIS_MOE_ROUTING] = { "Routing", "moe_routing" },
	[AXIS_MICS_GROUP] = { "MiCS group", "mics_group" },
	[AXIS_COMPRESS] = { "Compressed", "compress" },
	[AXIS_FRAMEWORK] = { "Framework", "framework" },
	[AXIS_PRECISION] = { "Precision", "precision" },
	[AXIS_CP] = { "CP", "cp" },
	[AXIS_CP_METHOD] = { "CP method", "cp_method" },
	[AXIS_OF(PLAN_ATTR_SEQUENCE_PARALLEL)] = { "SP", NULL },
	[AXIS_OF(PLAN_ATTR_FLASH_ATTENTION)] = { "Flash attention", NULL },
	[AXIS_OF(PLAN_ATTR_MOE_OVERLAP)] = { "MoE overlap", NULL },
	[AXIS_OF(PLAN_ATTR_ETP)] = { "ETP", NULL },
	[AXIS_OF(PLAN_ATTR_STAGE_LAYERS)] = { "Layers per stage", NULL },
	[AXIS_OF(PLAN_ATTR_STAGE_RECOMPUTE)] = { "Recompute per stage", NULL },
	[AXIS_OF(PLAN_ATTR_RECOMPUTE_LAYERS)] = { "Layers in full", NULL },
	[AXIS_OF(PLAN_ATTR_DP_COMPRESS_SCHEME)] = { "DP scheme", NULL },
	[AXIS_OF(PLAN_ATTR_DP_COMPRESS_ON)] = { "DP coding on", NULL },
	[AXIS_OF(PLAN_ATTR_TP_OVERLAP)] = { "TP overlap", NULL },
	[AXIS_OF(PLAN_ATTR_DP_ALLREDUCE)] = { "DP all-reduce", NULL },
	[AXIS_OF(PLAN_ATTR_FP8_GATHER)] = { "FP8 gather", NULL },
	[AXIS_OF(PLAN_ATTR_BF16_FIRST_LAYERS)] = { "First layers in bf16", NULL },
	[AXIS_OF(PLAN_ATTR_BF16_LAST_LAYERS)] = { "Last layers in bf16", NULL },
	[AXIS_OF(PLAN_ATTR_DP_OVERLAP)] = { "DP overlap", NULL },
	[AXIS_OF(PLAN_ATTR_MICS_HIERARCHICAL)] = { "MiCS 2-hop", NULL },
	[AXIS_REFERENCE] = { "Reference", "reference" },
	[AXIS_POWER_LIMIT] = { "Power limit", "power_limit" },
};

/* An axis's header; its study name for an axis the table has forgotten. */
static const char *
axis_text(int kind)
{
	return axis_headers[kind].text ? axis_headers[kind].text : study_axis_name(kind);
}

static const char *
axis_csv(int kind)
{
	return axis_headers[kind].csv ? axis_headers[kind].csv : study_axis_name(kind);
}

static const struct header metric_headers[METRIC_COUNT] = {
	[METRIC_TIME] = { "Iteration time (s)", "iteration_time_s" },
	[METRIC_TFLOPS] = { "TFLOP/s per GPU", "tflops_per_gpu" },
	[METRIC_MFU] = { "MFU (%)", "mfu_pct" },
	[METRIC_TOKENS] = { "Tokens/s", "tokens_per_s" },
	[METRIC_SPEEDUP] = { "Speedup (x)", "speedup" },
	[METRIC_WEAK] = { "Weak-scaling efficiency (%)", "weak_scaling_efficiency_pct" },
	[METRIC_STRONG] = { "Strong-scaling efficiency (%)", "strong_scaling_efficiency_pct" },
	[METRIC_MEMORY] = { "Memory per GPU (GiB)", "memory_gib" },
	[METRIC_FITS] = { "Fits", "fits" },
	[METRIC_PLAN] = { "Plan", "plan" },
	[METRIC_TOKENS_PER_GPU] = { "Tokens/s per GPU", "tokens_per_s_per_gpu" },
	[METRIC_TRAIN_DAYS] = { "Days to train", "train_days" },
	[METRIC_GPU_HOURS] = { "GPU-hours", "gpu_hours" },
	[METRIC_WAVE_LOSS] = { "GEMM wave loss (s)", "gemm_wave_loss_s" },
};

/* Compact LaTeX headers (latex_fit column or page), for a table that
 * fits a column; a header not here is the long one. */
static const char *const metric_short[METRIC_COUNT] = {
	[METRIC_TIME] = "Time (s)", [METRIC_TFLOPS] = "TFLOP/s/GPU", [METRIC_MFU] = "MFU (%)",
	[METRIC_TOKENS] = "Tok/s", [METRIC_SPEEDUP] = "Speedup", [METRIC_WEAK] = "Weak eff. (%)",
	[METRIC_STRONG] = "Strong eff. (%)", [METRIC_MEMORY] = "Mem. (GiB)", [METRIC_TOKENS_PER_GPU] = "Tok/s/GPU",
	[METRIC_TRAIN_DAYS] = "Days", [METRIC_GPU_HOURS] = "GPU-h", [METRIC_WAVE_LOSS] = "Wave loss (s)",
};

static const struct {
	int kind;
	const char *text;
} axis_short[] = {
	{ AXIS_COMPRESSOR, "Compr." }, { AXIS_NIC_BANDWIDTH, "NIC bw." }, { AXIS_INTRA_BANDWIDTH, "Intra bw." },
	{ AXIS_POWER_LIMIT, "Power" },
	{ AXIS_GLOBAL_BATCH, "GBS" }, { AXIS_SEQ_LEN, "Seq." }, { AXIS_MICRO_BATCH, "MBS" },
	{ AXIS_RECOMPUTE, "Recomp." }, { AXIS_FRAMEWORK, "Framew." },
};

static const char *const metric_formats[METRIC_COUNT] = {
	[METRIC_TIME] = "%.3f", [METRIC_TFLOPS] = "%.1f", [METRIC_MFU] = "%.1f",
	[METRIC_TOKENS] = "%.0f", [METRIC_SPEEDUP] = "%.2f", [METRIC_WEAK] = "%.1f",
	[METRIC_STRONG] = "%.1f", [METRIC_MEMORY] = "%.1f", [METRIC_TOKENS_PER_GPU] = "%.0f",
	[METRIC_TRAIN_DAYS] = "%.1f", [METRIC_GPU_HOURS] = "%.0f", [METRIC_WAVE_LOSS] = "%.4f",
};

/* The columns: the axes that vary (and the reference), then the metrics. */
static int
axis_columns(const struct study *s, int *cols)
{
	int n = 0;

	for (int i = 0; i < s->naxes; i++)
		if (s->axes[i].n > 1 || s->axes[i].kind == AXIS_REFERENCE)
			cols[n++] = i;
	if (n == 0 && s->naxes > 0)
		cols[n++] = 0;
	return n;
}

static bool
numeric_metric(int m)
{
	return m != METRIC_FITS && m != METRIC_PLAN;
}

/*
 * The time to train on the study's train_tokens at the cell's rate, in
 * seconds: tokens over tokens per second (every iteration as the
 * predicted one; warm-up, evaluation and restarts not counted).
 */
static double
train_seconds(const struct study *s, const struct sweep_result *r)
{
	return s->train_tokens / r->tokens_per_s;
}

static double
metric_value(const struct study *s, int m, const struct sweep_result *r)
{
	switch (m) {
	case METRIC_TIME: return r->time_s;
	case METRIC_TFLOPS: return r->tflops_per_gpu;
	case METRIC_MFU: return 100.0 * r->mfu;
	case METRIC_TOKENS: return r->tokens_per_s;
	case METRIC_SPEEDUP: return r->speedup;
	case METRIC_WEAK: return 100.0 * r->weak_efficiency;
	case METRIC_STRONG: return 100.0 * r->strong_efficiency;
	case METRIC_MEMORY: return r->memory_bytes / 1073741824.0;
	case METRIC_TOKENS_PER_GPU: return r->tokens_per_s / r->gpus;
	case METRIC_TRAIN_DAYS: return train_seconds(s, r) / 86400.0;
	case METRIC_GPU_HOURS: return train_seconds(s, r) * r->gpus / 3600.0;
	case METRIC_WAVE_LOSS: return r->wave_loss_s;
	default: return 0.0;
	}
}

/* Whether numeric metric @m has no value in cell @r: the cell failed, a
 * speedup without a baseline, an efficiency without a reference, a rate
 * that underflowed to 0 (no time to train rather than inf), a wave loss
 * not priced (a shard's JSON without it). */
static bool
metric_missing(int m, const struct sweep_result *r)
{
	return !r->ok || (m == METRIC_SPEEDUP && r->speedup == 0.0) ||
	       (m == METRIC_WAVE_LOSS && !r->wave_loss_known) ||
	       ((m == METRIC_WEAK || m == METRIC_STRONG) && r->weak_efficiency == 0.0) ||
	       ((m == METRIC_TOKENS_PER_GPU || m == METRIC_TRAIN_DAYS || m == METRIC_GPU_HOURS) &&
		!(r->tokens_per_s > 0 && r->gpus > 0));
}

/* The text of a metric cell; "" for cells without a value. */
static void
metric_text(const struct study *s, int m, const struct sweep_result *r, char *buf, size_t size)
{
	if (!r->ok)
		snprintf(buf, size, "%s", m == METRIC_PLAN ? r->error : "");
	else if (m == METRIC_FITS)
		snprintf(buf, size, "%s", r->fits ? "yes" : "no");
	else if (m == METRIC_PLAN)
		snprintf(buf, size, "%s", r->plan);
	else if (metric_missing(m, r))
		snprintf(buf, size, "%s", "");
	else
		snprintf(buf, size, metric_formats[m], metric_value(s, m, r));
}

static bool
axis_numeric(const struct study_axis *a)
{
	double d;

	for (int i = 0; i < a->n; i++)
		if (!num_parse_double(a->values[i], &d))
			return false;
	return true;
}

static bool
included(const struct sweep_rows *rows, long i)
{
	return rows->shard_n <= 1 || i % rows->shard_n == rows->shard_i;
}

/* LaTeX special characters. */
static void
latex_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '%': case '&': case '#': case '_': case '$': case '{': case '}':
			fputc('\\', out);
			fputc(*s, out);
			break;
		case '~': fputs("\\textasciitilde{}", out); break;
		case '^': fputs("\\textasciicircum{}", out); break;
		case '\\': fputs("\\textbackslash{}", out); break;
		default: fputc(*s, out);
		}
	}
}

/* Whether cell @r is marked as not fitting: it does not, and no Fits
 * column says so already. */
static bool
marked_no_fit(const struct study *s, const struct sweep_result *r)
{
	for (int k = 0; k < s->nmetrics; k++)
		if (s->metrics[k] == METRIC_FITS)
			return false;
	/* A cell that cannot run says why (write_md), not that it does not fit. */
	return r->ok && !r->fits;
}

/* One cell of a Markdown table: " TEXT |", a '|' in TEXT escaped as
 * "\|" (GitHub's table syntax) and a line break written as a space, so
 * that a name or a message cannot split the cell. */
static void
md_cell(FILE *out, const char *text, const char *suffix)
{
	fputc(' ', out);
	for (const char *p = text; *p; p++) {
		if (*p == '|')
			fputs("\\|", out);
		else
			fputc(*p == '\n' || *p == '\r' ? ' ' : *p, out);
	}
	fprintf(out, "%s |", suffix);
}

static void
write_md(FILE *out, const struct study *s, const struct sweep_result *res, const struct sweep_rows *rows,
	 const int *cols, int ncols)
{
	int idx[STUDY_MAX_AXES];
	char buf[800], name[STUDY_VALUE_LEN];
	bool any_marked = false;

	if (s->title[0])
		fprintf(out, "**%s**\n\n", s->title);
	fputc('|', out);
	for (int c = 0; c < ncols; c++)
		md_cell(out, s->axes[cols[c]].kind == AXIS_REFERENCE ? s->reference_name :
			axis_text(s->axes[cols[c]].kind), "");
	for (int k = 0; k < s->nmetrics; k++)
		md_cell(out, metric_headers[s->metrics[k]].text, "");
	fputs("\n|", out);
	for (int c = 0; c < ncols; c++)
		fputs(axis_numeric(&s->axes[cols[c]]) ? "---:|" : "---|", out);
	for (int k = 0; k < s->nmetrics; k++)
		fputs(numeric_metric(s->metrics[k]) ? "---:|" : "---|", out);
	fputc('\n', out);
	for (long i = 0; i < rows->n; i++) {
		if (!included(rows, i))
			continue;
		study_cell_indices(s, i, idx);
		fputc('|', out);
		for (int c = 0; c < ncols; c++)
			md_cell(out, value_shown(&s->axes[cols[c]], idx[cols[c]], name, sizeof(name)), "");
		for (int k = 0; k < s->nmetrics; k++) {
			bool mark = k == 0 && marked_no_fit(s, &res[i]);

			metric_text(s, s->metrics[k], &res[i], buf, sizeof(buf));
			/* predict's reason, where it would refuse the cell's plan. */
			if (k == 0 && !res[i].ok && s->metrics[k] != METRIC_PLAN)
				snprintf(buf, sizeof(buf), "cannot run: %s", res[i].error);
			md_cell(out, buf, mark ? " \xe2\x80\xa0" : "");
			any_marked |= mark;
		}
		fputc('\n', out);
	}
	if (any_marked)
		fputs("\n\xe2\x80\xa0 does not fit in the GPU's memory\n", out);
}

static void
csv_text(FILE *out, const char *s, bool first)
{
	if (!first)
		fputc(',', out);
	csv_fwrite(out, s, strlen(s));
}

static void
write_csv(FILE *out, const struct study *s, const struct sweep_result *res, const struct sweep_rows *rows,
	  const int *cols, int ncols)
{
	int idx[STUDY_MAX_AXES];
	char buf[800];
	bool first = true;

	for (int c = 0; c < ncols; c++, first = false)
		csv_text(out, s->axes[cols[c]].kind == AXIS_REFERENCE ? s->reference_name :
			      axis_csv(s->axes[cols[c]].kind), first);
	for (int k = 0; k < s->nmetrics; k++, first = false)
		csv_text(out, metric_headers[s->metrics[k]].csv, first);
	fputs("\r\n", out);
	for (long i = 0; i < rows->n; i++) {
		if (!included(rows, i))
			continue;
		study_cell_indices(s, i, idx);
		first = true;
		for (int c = 0; c < ncols; c++, first = false)
			csv_text(out, s->axes[cols[c]].values[idx[cols[c]]], first);
		for (int k = 0; k < s->nmetrics; k++, first = false) {
			int m = s->metrics[k];

			if (numeric_metric(m) && !metric_missing(m, &res[i])) {
				snprintf(buf, sizeof(buf), "%.9g", metric_value(s, m, &res[i]));
				csv_text(out, buf, first);
			} else {
				metric_text(s, m, &res[i], buf, sizeof(buf));
				csv_text(out, buf, first);
			}
		}
		fputs("\r\n", out);
	}
}

/* A column's LaTeX header: compact unless the table keeps its width. */
static const char *
latex_header(const struct study *s, int col, const int *cols, int ncols)
{
	bool compact = s->latex_fit != STUDY_LATEX_NONE;

	if (col >= ncols) {
		int m = s->metrics[col - ncols];

		return compact && metric_short[m] ? metric_short[m] : metric_headers[m].text;
	}
	if (s->axes[cols[col]].kind == AXIS_REFERENCE)
		return s->reference_name;
	for (size_t i = 0; compact && i < sizeof(axis_short) / sizeof(axis_short[0]); i++)
		if (axis_short[i].kind == s->axes[cols[col]].kind)
			return axis_short[i].text;
	return axis_text(s->axes[cols[col]].kind);
}

/* The table's opening: the packages it needs, the caption, the label and, when fit, the box that shrinks it. */
static void
latex_begin(FILE *out, const struct study *s, const char *env, bool fit)
{
	fprintf(out, "%% Generated by plan-cli sweep. Needs \\usepackage{booktabs%s}.\n", fit ? ",graphicx" : "");
	fprintf(out, "\\begin{%s}[t]\n\\centering\n", env);
	if (s->caption[0] || s->title[0]) {
		fputs("\\caption{", out);
		latex_escape(out, s->caption[0] ? s->caption : s->title);
		fputs("}\n", out);
	}
	if (s->label[0]) {
		fputs("\\label{", out);
		fputs(s->label, out);
		fputs("}\n", out);
	}
	if (fit)
		fputs("\\small\n\\setlength{\\tabcolsep}{4pt}\n\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n", out);
}

/* The tabular's column types and its header row. */
static void
latex_head(FILE *out, const struct study *s, const int *cols, int ncols)
{
	fputs("\\begin{tabular}{", out);
	for (int c = 0; c < ncols; c++)
		fputc(axis_numeric(&s->axes[cols[c]]) ? 'r' : 'l', out);
	for (int k = 0; k < s->nmetrics; k++)
		fputc(numeric_metric(s->metrics[k]) ? 'r' : 'l', out);
	fputs("}\n\\toprule\n", out);
	for (int c = 0; c < ncols + s->nmetrics; c++) {
		if (c)
			fputs(" & ", out);
		latex_escape(out, latex_header(s, c, cols, ncols));
	}
	fputs(" \\\\\n\\midrule\n", out);
}

/* The rows of the cells; whether one is marked as not fitting. */
static bool
latex_rows(FILE *out, const struct study *s, const struct sweep_result *res, const struct sweep_rows *rows,
	   const int *cols, int ncols)
{
	int idx[STUDY_MAX_AXES];
	char buf[800], name[STUDY_VALUE_LEN];
	bool any_marked = false;

	for (long i = 0; i < rows->n; i++) {
		if (!included(rows, i))
			continue;
		study_cell_indices(s, i, idx);
		for (int c = 0; c < ncols; c++) {
			if (c)
				fputs(" & ", out);
			latex_escape(out, value_shown(&s->axes[cols[c]], idx[cols[c]], name, sizeof(name)));
		}
		for (int k = 0; k < s->nmetrics; k++) {
			bool mark = k == 0 && marked_no_fit(s, &res[i]);

			metric_text(s, s->metrics[k], &res[i], buf, sizeof(buf));
			fputs(ncols + k ? " & " : "", out);
			latex_escape(out, buf);
			fputs(mark ? "$^\\dagger$" : "", out);
			any_marked |= mark;
		}
		fputs(" \\\\\n", out);
	}
	return any_marked;
}

/*
 * A booktabs table. With latex_fit column (the default) or page (table*,
 * both columns of a two-column class), the headers are compact, the text
 * \small with 4 pt between columns, and the tabular is shrunk to the
 * line when it is wider than the line (graphicx's \resizebox measures
 * it: \width is its natural width), never enlarged; none keeps the
 * natural width and the long headers.
 */
static void
write_latex(FILE *out, const struct study *s, const struct sweep_result *res, const struct sweep_rows *rows,
	    const int *cols, int ncols)
{
	const char *env = s->latex_fit == STUDY_LATEX_PAGE ? "table*" : "table";
	bool fit = s->latex_fit != STUDY_LATEX_NONE, any_marked;

	latex_begin(out, s, env, fit);
	latex_head(out, s, cols, ncols);
	any_marked = latex_rows(out, s, res, rows, cols, ncols);
	fputs("\\bottomrule\n\\end{tabular}", out);
	fputs(fit ? "}\n" : "\n", out);
	if (any_marked)
		fputs("\\par\\smallskip{\\footnotesize $^\\dagger$ does not fit in the GPU's memory}\n", out);
	fprintf(out, "\\end{%s}\n", env);
}

/* A failed cell's "gpus" as a number too (the axis's value), so that the
 * field has one type in every cell (issue 26); null when it is not one. */
static int
json_gpus_number(json_t *o, const struct study *s, const int *idx)
{
	int a = study_find_axis(s, AXIS_GPUS);
	long v;

	if (a < 0)
		return 0;
	return json_object_set_new(o, "gpus", num_parse_long(s->axes[a].values[idx[a]], 1, 1L << 30, &v) ?
						   json_integer(v) : json_null());
}

/* The fields of a cell that was predicted (@r->ok). */
static int
json_cell_result(json_t *o, const struct study *s, const struct sweep_result *r)
{
	int rc = 0;

	rc |= json_object_set_new(o, "iteration_time_s", json_real(r->time_s));
	rc |= json_object_set_new(o, "tflops_per_gpu", json_real(r->tflops_per_gpu));
	rc |= json_object_set_new(o, "mfu", json_real(r->mfu));
	rc |= json_object_set_new(o, "tokens_per_s", json_real(r->tokens_per_s));
	rc |= json_object_set_new(o, "tokens_per_s_per_gpu",
				  metric_missing(METRIC_TOKENS_PER_GPU, r) ? json_null() :
				  json_real(metric_value(s, METRIC_TOKENS_PER_GPU, r)));
	if (s->train_tokens > 0 && !metric_missing(METRIC_TRAIN_DAYS, r)) {
		rc |= json_object_set_new(o, "train_days", json_real(metric_value(s, METRIC_TRAIN_DAYS, r)));
		rc |= json_object_set_new(o, "gpu_hours", json_real(metric_value(s, METRIC_GPU_HOURS, r)));
	}
	rc |= json_object_set_new(o, "memory_bytes", json_real(r->memory_bytes));
	rc |= json_object_set_new(o, "fits", json_boolean(r->fits));
	rc |= json_object_set_new(o, "gpus", json_integer(r->gpus));
	rc |= json_object_set_new(o, "speedup", r->speedup > 0 ? json_real(r->speedup) : json_null());
	rc |= json_object_set_new(o, "weak_scaling_efficiency",
				  r->weak_efficiency > 0 ? json_real(r->weak_efficiency) : json_null());
	rc |= json_object_set_new(o, "strong_scaling_efficiency",
				  r->strong_efficiency > 0 ? json_real(r->strong_efficiency) : json_null());
	rc |= json_object_set_new(o, "plan", json_string(r->plan));
	if (r->wave_loss_known)
		rc |= json_object_set_new(o, "gemm_wave_loss_s", json_real(r->wave_loss_s));
	return rc;
}

/* Cell @i's fields: its number, its axis values, then its result or its error. */
static int
json_cell(json_t *o, const struct study *s, const struct sweep_result *r, long i, const int *idx)
{
	int rc = 0;

	rc |= json_object_set_new(o, "cell", json_integer(i));
	for (int a = 0; a < s->naxes; a++)
		rc |= json_object_set_new(o, s->axes[a].kind == AXIS_REFERENCE ? s->reference_name :
					     axis_csv(s->axes[a].kind),
					  utf8_json_string(s->axes[a].values[idx[a]]));
	rc |= json_object_set_new(o, "ok", json_boolean(r->ok));
	if (r->ok) {
		rc |= json_cell_result(o, s, r);
	} else {
		rc |= json_object_set_new(o, "error", utf8_json_string(r->error)); /* may name a file */
		rc |= json_gpus_number(o, s, idx);
	}
	return rc;
}

/* The study's fields around the cells: its name, the cell count, the tokens, the shard. */
static int
json_study(json_t *root, const struct study *s, const struct sweep_rows *rows)
{
	int rc = 0;

	rc |= json_object_set_new(root, "study", json_string(s->name));
	rc |= json_object_set_new(root, "cells_total", json_integer(rows->n));
	if (s->train_tokens > 0)
		rc |= json_object_set_new(root, "train_tokens", json_real(s->train_tokens));
	if (rows->shard_n > 1) {
		rc |= json_object_set_new(root, "shard", json_integer(rows->shard_i + 1));
		rc |= json_object_set_new(root, "shards", json_integer(rows->shard_n));
	}
	return rc;
}

static bool
write_json(FILE *out, const struct study *s, const struct sweep_result *res, const struct sweep_rows *rows)
{
	json_t *root = json_object(), *cells = json_array();
	int idx[STUDY_MAX_AXES], rc = 0;

	if (!root || !cells) {
		json_decref(root);
		json_decref(cells);
		return false;
	}
	for (long i = 0; i < rows->n; i++) {
		json_t *o;

		if (!included(rows, i))
			continue;
		study_cell_indices(s, i, idx);
		o = json_object();
		if (!o) {
			rc = -1;
			break;
		}
		rc |= json_cell(o, s, &res[i], i, idx);
		rc |= json_array_append_new(cells, o);
	}
	rc |= json_study(root, s, rows);
	rc |= json_object_set_new(root, "cells", cells);
	if (rc == 0)
		rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	json_decref(root);
	fputc('\n', out);
	return rc == 0;
}

bool
sweep_write(FILE *out, int format, const struct study *s, const struct sweep_result *res,
	    const struct sweep_rows *rows)
{
	int cols[STUDY_MAX_AXES], ncols = axis_columns(s, cols);

	switch (format) {
	case SWEEP_CSV:
		write_csv(out, s, res, rows, cols, ncols);
		break;
	case SWEEP_LATEX:
		write_latex(out, s, res, rows, cols, ncols);
		break;
	case SWEEP_JSON:
		if (!write_json(out, s, res, rows))
			return false;
		break;
	default:
		write_md(out, s, res, rows, cols, ncols);
	}
	return !ferror(out);
}

/* The numeric value of an axis value: a number, or a quantity with a unit. */
static bool
axis_number(const struct study_axis *a, int i, double *v)
{
	if (num_parse_double(a->values[i], v))
		return true;
	if (a->kind == AXIS_NIC_BANDWIDTH || a->kind == AXIS_INTRA_BANDWIDTH) {
		if (units_parse(a->values[i], UNIT_BANDWIDTH, v, NULL, 0)) {
			*v *= 8e-9; /* Gbit/s on the axis */
			return true;
		}
	}
	if (a->kind == AXIS_POWER_LIMIT)
		return units_parse(a->values[i], UNIT_POWER, v, NULL, 0); /* W on the axis */
	return false;
}

static bool
in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096], full[4200];
	char *save = NULL;

	if (!path)
		return false;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(full, sizeof(full), "%s/%s", dir, prog);
		if (access(full, X_OK) == 0)
			return true;
	}
	return false;
}

/* The series a cell belongs to: its values on the varying axes other than x. */
static void
series_key(const struct study *s, int xa, const int *idx, char *key, size_t size)
{
	char name[STUDY_VALUE_LEN];

	key[0] = '\0';
	for (int a = 0; a < s->naxes; a++) {
		size_t l = strlen(key);

		if (a == xa || s->axes[a].n < 2 || s->axes[a].kind == AXIS_REFERENCE ||
		    (s->axes[a].zipped && s->axes[xa].zipped))
			continue;
		if (axis_numeric(&s->axes[a]))
			snprintf(key + l, size - l, "%s%s %s", l ? ", " : "",
				 axis_text(s->axes[a].kind), s->axes[a].values[idx[a]]);
		else
			snprintf(key + l, size - l, "%s%s", l ? ", " : "",
				 value_shown(&s->axes[a], idx[a], name, sizeof(name)));
	}
}

/* A gnuplot string: double quotes and backslashes escaped. */
static void
gp_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Most lines one plot draws; the series past them are left out. */
#define PLOT_MAX_SERIES 64

/* What a plot draws: the axis on x, one panel per numeric metric, and the series. */
struct plot {
	const char *ext;  /* ".svg", ".png" or ".pdf" */
	int xa;           /* axis on x */
	int metrics[STUDY_MAX_METRICS]; /* on y, one panel each, stacked */
	int nmetrics;
	bool any_no_fit;  /* a drawn cell does not fit: open markers and a legend line */
	long nseries;
	const char *titles[PLOT_MAX_SERIES];
	/* The drawn values' range: x, and each metric's (positive ones;
	 * any_nonpositive when some is 0 or less: no log scale then). */
	double xmin, xmax, ymin[STUDY_MAX_METRICS], ymax[STUDY_MAX_METRICS];
	bool x_nonpositive, y_nonpositive[STUDY_MAX_METRICS];
};

/* Note @v among the values of range [*lo, *hi] (*bad: one was not positive). */
static void
plot_range(double v, double *lo, double *hi, bool *bad)
{
	if (!(v > 0)) {
		*bad = true;
		return;
	}
	if (*lo == 0 || v < *lo)
		*lo = v;
	if (v > *hi)
		*hi = v;
}

/* Whether a range spans a decade or more, all of it positive: a log
 * scale shows it better (issue 26). */
static bool
plot_spans_decade(double lo, double hi, bool bad)
{
	return !bad && lo > 0 && hi >= 10 * lo;
}

/* A cell and the series it belongs to. */
struct plot_cell {
	char *key;
	long i;
};

/* A series: its cells are cells[start .. start + len), in cell order,
 * the first of them cell @first of the sweep. */
struct plot_series {
	long start, len, first;
};

static int
cmp_cell(const void *a, const void *b)
{
	const struct plot_cell *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Series in the order of their first cell, as the legend lists them. */
static int
cmp_series(const void *a, const void *b)
{
	long x = ((const struct plot_series *)a)->first, y = ((const struct plot_series *)b)->first;

	return (x > y) - (x < y);
}

/* The terminal for @path's extension, the metrics and the x axis; false
 * with @err set when the study cannot be plotted. Every numeric metric
 * gets a panel; fits is drawn as the markers, plan (words) not at all. */
static bool
plot_choose(const char *path, const struct study *s, struct plot *pl, struct plan_error *err)
{
	const char *ext = strrchr(path, '.');

	if (!ext || (strcmp(ext, ".svg") && strcmp(ext, ".png") && strcmp(ext, ".pdf")))
		return plan_error_set(err, PLAN_ERR_PLAN, path, 0, 0, "--plot writes .svg, .png or .pdf files");
	pl->ext = ext;
	pl->nmetrics = 0;
	for (int k = 0; k < s->nmetrics; k++)
		if (numeric_metric(s->metrics[k]))
			pl->metrics[pl->nmetrics++] = s->metrics[k];
	if (pl->nmetrics == 0)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "--plot needs a numeric metric (fits is drawn as markers, plan is words)");
	pl->xa = study_find_axis(s, AXIS_GPUS);
	if (pl->xa < 0 || s->axes[pl->xa].n < 2) {
		pl->xa = -1;
		for (int a = 0; a < s->naxes && pl->xa < 0; a++) {
			double v;

			if (s->axes[a].n > 1 && s->axes[a].kind != AXIS_REFERENCE && axis_number(&s->axes[a], 0, &v))
				pl->xa = a;
		}
	}
	if (pl->xa < 0)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "--plot needs an axis with several numeric values (gpus, nic_bandwidth, ...)");
	return true;
}

/* Sort the @n cells by series key (then by cell) and find the series:
 * O(n log n), so that a sweep of many cells is not compared cell by cell.
 * Fills @cells (keys to free) and @series; returns how many series, or -1
 * when out of memory. */
static long
plot_group(const struct study *s, int xa, long n, struct plot_cell *cells, struct plot_series *series)
{
	int idx[STUDY_MAX_AXES];
	char key[1024];
	long ns = 0;

	for (long i = 0; i < n; i++) {
		study_cell_indices(s, i, idx);
		series_key(s, xa, idx, key, sizeof(key));
		cells[i].i = i;
		if (!(cells[i].key = strdup(key)))
			return -1;
	}
	qsort(cells, (size_t)n, sizeof(*cells), cmp_cell);
	for (long i = 0; i < n; i++) {
		if (i == 0 || strcmp(cells[i].key, cells[i - 1].key) != 0)
			series[ns++] = (struct plot_series){ .start = i, .first = cells[i].i };
		series[ns - 1].len++;
	}
	qsort(series, (size_t)ns, sizeof(*series), cmp_series);
	return ns;
}

/* A metric's value as a plot writes it: "?" (missing) where the table
 * leaves the cell empty (no baseline for a speedup or an efficiency). */
static void
plot_value(FILE *f, const struct study *s, int m, const struct sweep_result *r)
{
	if (metric_missing(m, r))
		fputs(" ?", f);
	else
		fprintf(f, " %.9g", metric_value(s, m, r));
}

/* One gnuplot data block per series ($s0, $s1, ...): the cells that
 * agree on every axis but x, in cell order; columns x, each metric, and
 * 1 or 0 for whether the cell fits. Inline in the script, so that no
 * data file is left behind. Fills the titles of @pl, which point into
 * @cells. */
static void
plot_write_data(FILE *f, const struct study *s, const struct sweep_result *res, const struct plot_cell *cells,
		const struct plot_series *series, long ns, struct plot *pl)
{
	int idx[STUDY_MAX_AXES];

	for (pl->nseries = 0; pl->nseries < ns && pl->nseries < PLOT_MAX_SERIES; pl->nseries++) {
		const struct plot_series *ser = &series[pl->nseries];
		const char *key = cells[ser->start].key;

		pl->titles[pl->nseries] = key[0] ? key : metric_headers[pl->metrics[0]].text;
		fprintf(f, "$s%ld << EOD\n", pl->nseries);
		for (long c = ser->start; c < ser->start + ser->len; c++) {
			long i = cells[c].i;
			double x;

			study_cell_indices(s, i, idx);
			if (!res[i].ok || !axis_number(&s->axes[pl->xa], idx[pl->xa], &x))
				continue;
			fprintf(f, "%.9g", x);
			plot_range(x, &pl->xmin, &pl->xmax, &pl->x_nonpositive);
			for (int k = 0; k < pl->nmetrics; k++) {
				plot_value(f, s, pl->metrics[k], &res[i]);
				if (!metric_missing(pl->metrics[k], &res[i]))
					plot_range(metric_value(s, pl->metrics[k], &res[i]), &pl->ymin[k], &pl->ymax[k],
						   &pl->y_nonpositive[k]);
			}
			fprintf(f, " %d\n", res[i].fits ? 1 : 0);
			pl->any_no_fit |= !res[i].fits;
		}
		fputs("EOD\n", f);
	}
}

/* The terminal, sized for @panels stacked panels. */
static void
plot_terminal(FILE *gp, const struct plot *pl, int panels)
{
	if (strcmp(pl->ext, ".svg") == 0)
		fprintf(gp, "set terminal svg size 800,%d dynamic font \"Helvetica,12\"\n", 140 + 360 * panels);
	else if (strcmp(pl->ext, ".png") == 0)
		fprintf(gp, "set terminal pngcairo size 1000,%d font \"Helvetica,11\"\n", 170 + 450 * panels);
	else
		fprintf(gp, "set terminal pdfcairo size 6in,%.2fin font \"Helvetica,9\"\n", 0.8 + 2.8 * panels);
}

/* Whether the series have names (a varying axis besides x). */
static bool
cells_named(const struct plot *pl)
{
	return pl->nseries > 0 && pl->titles[0] != metric_headers[pl->metrics[0]].text;
}

/* One panel: metric @k of every series; the legend on the first only.
 * A series is one colour: a line through its cells, filled markers where
 * the plan fits, open ones where it does not. */
static void
plot_panel(FILE *gp, const struct study *s, const struct plot *pl, int k)
{
	int col = k + 2, fits = pl->nmetrics + 2;

	/* One series without a name of its own needs no legend line. */
	bool legend = k == 0 && (pl->nseries > 1 || cells_named(pl) || pl->any_no_fit);

	bool logy = s->plot_log == STUDY_LOG_Y || s->plot_log == STUDY_LOG_XY ||
		    (s->plot_log == STUDY_LOG_AUTO && plot_spans_decade(pl->ymin[k], pl->ymax[k], pl->y_nonpositive[k]));

	/* A log scale needs positive values: a forced one on a metric with
	 * a 0 or a negative stays linear. */
	fputs(logy && !pl->y_nonpositive[k] ? "set logscale y 10\n" : "unset logscale y\n", gp);
	fputs("set ylabel ", gp);
	gp_string(gp, metric_headers[pl->metrics[k]].text);
	fputs(legend ? "\nset key outside right top\n" : "\nunset key\n", gp);
	if (k == 0 && s->title[0] && pl->nmetrics == 1) {
		fputs("set title ", gp);
		gp_string(gp, s->title);
		fputc('\n', gp);
	}
	fputs("plot ", gp);
	for (long i = 0; i < pl->nseries; i++) {
		fprintf(gp, "%s$s%ld using 1:%d with lines lw 2 lc %ld ", i ? ", " : "", i, col, i + 1);
		if (pl->nseries > 1 || cells_named(pl)) {
			fputs("title ", gp);
			gp_string(gp, pl->titles[i]);
		} else {
			fputs("notitle", gp);
		}
		fprintf(gp, ", $s%ld using 1:($%d > 0 ? $%d : NaN) with points pt 7 ps 1 lc %ld notitle", i, fits,
			col, i + 1);
		fprintf(gp, ", $s%ld using 1:($%d > 0 ? NaN : $%d) with points pt 6 ps 1.4 lc %ld notitle", i, fits,
			col, i + 1);
	}
	if (pl->any_no_fit)
		fputs(", NaN with points pt 6 ps 1.4 lc rgb \"black\" title \"open: does not fit\"", gp);
	fputc('\n', gp);
}

/* Whether x is logarithmic: GPUs and bandwidths (powers of two) and any
 * axis spanning a decade by default; as --plot-log says otherwise. */
static bool
plot_log_x(const struct study *s, const struct plot *pl)
{
	int k = s->axes[pl->xa].kind;

	if (pl->x_nonpositive)
		return false;
	switch (s->plot_log) {
	case STUDY_LOG_X:
	case STUDY_LOG_XY:
		return true;
	case STUDY_LOG_AUTO:
		return k == AXIS_GPUS || k == AXIS_NIC_BANDWIDTH || k == AXIS_INTRA_BANDWIDTH ||
		       plot_spans_decade(pl->xmin, pl->xmax, false);
	default:
		return false;
	}
}

/* The commands that draw the data blocks into @out. */
static void
plot_commands(FILE *gp, const char *out, const struct study *s, const struct plot *pl)
{
	const struct study_axis *x = &s->axes[pl->xa];

	plot_terminal(gp, pl, pl->nmetrics);
	fputs("set output ", gp);
	gp_string(gp, out);
	fputs("\nset grid\nset datafile missing \"?\"\nset xlabel ", gp);
	gp_string(gp, x->kind == AXIS_NIC_BANDWIDTH ? "NIC bandwidth (Gbit/s)" :
		      x->kind == AXIS_INTRA_BANDWIDTH ? "Intra-node bandwidth (Gbit/s)" :
		      x->kind == AXIS_POWER_LIMIT ? "Power limit (W)" : axis_text(x->kind));
	fputc('\n', gp);
	if (plot_log_x(s, pl))
		fprintf(gp, "set logscale x %d\n",
			x->kind == AXIS_GPUS || x->kind == AXIS_NIC_BANDWIDTH || x->kind == AXIS_INTRA_BANDWIDTH ? 2 : 10);
	if (pl->nmetrics > 1) {
		/* The same margins on every panel, so that the x axes line up
		 * under the first panel's legend. */
		fputs("set lmargin 12\n", gp);
		if (pl->nseries > 1 || cells_named(pl) || pl->any_no_fit)
			fputs("set rmargin at screen 0.74\n", gp);
		fprintf(gp, "set multiplot layout %d,1", pl->nmetrics);
		if (s->title[0]) {
			fputs(" title ", gp);
			gp_string(gp, s->title);
		}
		fputc('\n', gp);
	}
	for (int k = 0; k < pl->nmetrics; k++)
		plot_panel(gp, s, pl, k);
	if (pl->nmetrics > 1)
		fputs("unset multiplot\n", gp);
	fputs("unset output\n", gp);
}

/*
 * The plot is drawn into a temporary file beside @path and renamed onto
 * it (io/atomic_file.h), so that an interrupted or failed run never
 * leaves half a plot; on SIGINT, SIGTERM or SIGHUP the handler stops
 * gnuplot first, which would otherwise recreate the file it removes.
 */
static struct atomic_file plot_out;
/* Start gnuplot reading its script from *@in, writing all it says into @log. */
static pid_t
gnuplot_start(FILE *log, FILE **in)
{
	int fds[2];
	pid_t pid;

	sigset_t block, old;

	if (pipe(fds) != 0)
		return -1;
	/* Registered before a signal can see it, unblocked again in gnuplot. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		dup2(fds[0], 0);
		dup2(fileno(log), 1);
		dup2(fileno(log), 2);
		close(fds[0]);
		close(fds[1]);
		execlp("gnuplot", "gnuplot", (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		atomic_file_child(pid);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[0]);
	if (pid < 0 || !(*in = fdopen(fds[1], "w"))) {
		close(fds[1]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		atomic_file_child(0);
		return -1;
	}
	return pid;
}

/* Wait for gnuplot; on failure the error quotes the first line it said. */
static bool
gnuplot_finish(pid_t pid, FILE *in, FILE *log, const char *path, struct plan_error *err)
{
	char line[256] = "";
	struct stat st;
	int status = 0;
	bool wrote = fclose(in) == 0;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	atomic_file_child(0);
	if (wrote && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    stat(plot_out.tmp, &st) == 0 && st.st_size > 0)
		return true;
	rewind(log);
	while (fgets(line, sizeof(line), log) && strspn(line, " \t\r\n^") == strlen(line))
		;
	line[strcspn(line, "\r\n")] = '\0';
	return plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "gnuplot failed (status %d)%s%s",
			      WIFEXITED(status) ? WEXITSTATUS(status) : -1, line[0] ? ": " : "", line);
}

/* Draw with gnuplot into the temporary file. */
static bool
plot_draw(const char *path, const struct study *s, const struct sweep_result *res, struct plot *pl,
	  const struct plot_cell *cells, const struct plot_series *series, long ns, struct plan_error *err)
{
	FILE *log = tmpfile(), *gp = NULL;
	pid_t pid = log ? gnuplot_start(log, &gp) : -1;
	bool ok;

	if (pid < 0) {
		if (log)
			fclose(log);
		return plan_error_set(err, PLAN_ERR_IO, NULL, 0, 0, "cannot run gnuplot");
	}
	plot_write_data(gp, s, res, cells, series, ns, pl);
	plot_commands(gp, plot_out.tmp, s, pl);
	ok = gnuplot_finish(pid, gp, log, path, err);
	fclose(log);
	return ok;
}

bool
sweep_plot(const char *path, const struct study *s, const struct sweep_result *res, long n,
	   struct plan_error *err)
{
	struct plot pl = { 0 };
	struct plot_cell *cells;
	struct plot_series *series;
	long ns = -1;
	bool ok;

	if (!plot_choose(path, s, &pl, err))
		return false;
	if (!in_path("gnuplot"))
		return plan_error_set(err, PLAN_ERR_IO, NULL, 0, 0,
				      "gnuplot is not installed (apt-get install gnuplot-nox)");
	cells = calloc((size_t)(n > 0 ? n : 1), sizeof(*cells));
	series = calloc((size_t)(n > 0 ? n : 1), sizeof(*series));
	if (cells && series)
		ns = plot_group(s, pl.xa, n, cells, series);
	ok = ns >= 0 ? atomic_file_open(&plot_out, path, err) && atomic_file_close(&plot_out, err) :
		       plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	if (ok) {
		/* gnuplot dies with the pipe's reader: EPIPE then, not SIGPIPE. */
		void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);

		ok = plot_draw(path, s, res, &pl, cells, series, ns, err);
		signal(SIGPIPE, old_pipe);
		ok = ok && atomic_file_commit(&plot_out, err);
		atomic_file_abort(&plot_out);
	}
	for (long i = 0; cells && i < n; i++)
		free(cells[i].key);
	free(cells);
	free(series);
	return ok;
}
