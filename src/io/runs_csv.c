#include <csv.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/estimate.h"
#include "plan/flops.h"
#include "plan/framework.h"
#include "plan/numparse.h"
#include "plan/plan_attr.h"
#include "io/csvpos.h"
#include "io/infile.h"
#include "io/schema.h"
#include "io/runs_csv.h"

const char *const run_convention_names[] = { "megatron-eq3", "model", "hardware", NULL };

/* The columns that are not plan attributes; a plan attribute's column is
 * COL_COUNT + its enum plan_attr_id, named as the attribute is. */
enum col {
	COL_ID, COL_MODEL, COL_CLUSTER, COL_GPUS, COL_TIME, COL_TFLOPS, COL_CONV, COL_FRAMEWORK, COL_MEMORY,
	COL_TOKENS, COL_COMPRESSOR, COL_SOURCE, COL_NOTES, COL_COUNT,
};

#define COL_ATTR(id) (COL_COUNT + (id))
#define NCOLS (COL_COUNT + PLAN_ATTR_COUNT)

static const char *const col_names[COL_COUNT + 1] = {
	"id", "model", "cluster", "gpus", "measured_iteration_time_s", "measured_tflops_per_gpu", "flop_convention",
	"framework", "measured_memory_gib", "measured_tokens_per_s_per_gpu", "compressor", "source", "notes", NULL,
};

static const char *
col_name(int c)
{
	return c < COL_COUNT ? col_names[c] : plan_attrs[c - COL_COUNT].name;
}

/* The column named @name, or -1. */
static int
col_find(const char *name)
{
	const struct plan_attr *a;

	for (int c = 0; c < COL_COUNT; c++)
		if (strcmp(col_names[c], name) == 0)
			return c;
	/* Attribute names only as written (no dashes for underscores). */
	a = plan_attr_find(name);
	return a && strcmp(a->name, name) == 0 ? COL_ATTR((int)(a - plan_attrs)) : -1;
}

#define MAX_FIELDS 64

struct reader {
	const char *path;
	int index[NCOLS];       /* field position of each column, -1 if absent */
	char *fields[MAX_FIELDS];
	struct csvpos_at at[MAX_FIELDS]; /* where each field starts */
	int nfields;
	int record;             /* 1-based */
	int line;               /* the record's first line */
	bool failed;
	struct csvpos pos;
	struct run_set *set;
	struct plan_error *err;
};

static bool
fail_vat(struct reader *r, int i, const char *fmt, va_list ap)
{
	bool in = i >= 0 && i < r->nfields;
	char msg[sizeof(r->err->message)];

	r->failed = true;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	return plan_error_set(r->err, PLAN_ERR_INPUT, r->path, in ? r->at[i].line : r->line,
			      in ? r->at[i].column : 0, "%s", msg);
}

/* An error at field @i of the record (its line and column), or with @i
 * -1 or past the record's fields, at the record's line. */
static bool __attribute__((format(printf, 3, 4)))
fail_field(struct reader *r, int i, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_vat(r, i, fmt, ap);
	va_end(ap);
	return false;
}

/* An error at column @c's field (enum col), or at the record's line. */
static bool __attribute__((format(printf, 3, 4)))
fail_col(struct reader *r, int c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_vat(r, c >= 0 ? r->index[c] : -1, fmt, ap);
	va_end(ap);
	return false;
}

/* An error about the record as a whole, at its line. */
#define fail(r, ...) fail_field((r), -1, __VA_ARGS__)

/* Whether @s[0..len) is well-formed UTF-8 (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF): JSON output must be. */
static bool
utf8_valid(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		unsigned long cp;

		if (n == 0 || i + n > len)
			return false;
		cp = n == 1 ? c : c & (0x7F >> n);
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += n;
	}
	return true;
}

static void
on_field(void *s, size_t len, void *data)
{
	struct reader *r = data;
	char *copy;

	if (r->failed)
		return;
	if (r->nfields >= MAX_FIELDS) {
		r->failed = true;
		plan_error_set(r->err, PLAN_ERR_INPUT, r->path, r->pos.field.line, r->pos.field.column,
			       "more than 64 columns");
		return;
	}
	/* A quoted field may hold a NUL; C strings would cut it there. */
	if (memchr(s, '\0', len)) {
		r->failed = true;
		plan_error_set(r->err, PLAN_ERR_INPUT, r->path, r->pos.field.line, r->pos.field.column,
			       "field %d contains a NUL byte", r->nfields + 1);
		return;
	}
	if (!utf8_valid(s, len)) {
		r->failed = true;
		plan_error_set(r->err, PLAN_ERR_INPUT, r->path, r->pos.field.line, r->pos.field.column,
			       "field %d is not valid UTF-8 (save the file as UTF-8)", r->nfields + 1);
		return;
	}
	copy = malloc(len + 1);
	if (!copy) {
		r->failed = true;
		plan_error_set(r->err, PLAN_ERR_NOMEM, r->path, 0, 0, "out of memory");
		return;
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	r->at[r->nfields] = r->pos.field;
	r->fields[r->nfields++] = copy;
}

static const char *
field(const struct reader *r, int c)
{
	int i = r->index[c];

	return i >= 0 && i < r->nfields ? r->fields[i] : "";
}

static bool
get_int(struct reader *r, enum col c, int def, int *out)
{
	const char *s = field(r, c);
	long v;

	if (!s[0]) {
		*out = def;
		return true;
	}
	if (!num_parse_long(s, 0, 100000000L, &v))
		return fail_col(r, c, "column '%s' must be a whole number from 0 to 100000000, got '%s'", col_names[c], s);
	*out = (int)v;
	return true;
}

/*
 * A profile cell (model, cluster, framework) into @dst: a bundled name as
 * is; a relative path (it has a '/' or ends in .yaml or .json) relative to
 * the CSV's folder when the file is there, else as given (relative to the
 * working folder, as on the command line).
 */
static bool
get_profile(struct reader *r, enum col c, char *dst, size_t size)
{
	const char *v = field(r, c), *slash = strrchr(r->path, '/');
	size_t len = strlen(v);
	bool path = strchr(v, '/') || (len > 5 && (strcmp(v + len - 5, ".yaml") == 0 ||
						   strcmp(v + len - 5, ".json") == 0));
	char max[24];
	int n;

	snprintf(max, sizeof(max), "%zu", size - 1);
	if (len >= size)
		return fail_col(r, c, "column '%s' is longer than %s characters", col_names[c], max);
	snprintf(dst, size, "%s", v);
	if (!path || v[0] == '/' || !slash)
		return true;
	n = snprintf(dst, size, "%.*s/%s", (int)(slash - r->path), r->path, v);
	if (n < 0 || (size_t)n >= size || access(dst, F_OK) != 0)
		snprintf(dst, size, "%s", v);
	return true;
}

static bool
get_choice(struct reader *r, int c, const char *const *names, int def, int *out)
{
	const char *s = field(r, c);

	if (!s[0]) {
		*out = def;
		return true;
	}
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0) {
			*out = i;
			return true;
		}
	return fail_col(r, c, "unknown value '%s' in column '%s'", s, col_name(c));
}

/* A measured value in a physically sane range, [lo, hi]: a positive but
 * absurd value (a 1e300 s iteration, 1e-300 TFLOP/s) otherwise passes and
 * comes out as an infinite error or speed-up, or a fit with no meaning
 * (issue 15: non-finite numbers). */
static bool
get_double(struct reader *r, enum col c, double lo, double hi, double *out)
{
	const char *s = field(r, c);

	*out = 0.0;
	if (!s[0])
		return true;
	/* 1e400 reads as HUGE_VAL: above hi, with the range below. */
	if (num_parse_double_status(s, out) == NUM_NOT_A_NUMBER || *out <= 0)
		return fail_col(r, c, "column '%s' must be a positive number, got '%s'", col_names[c], s);
	if (*out < lo || *out > hi) {
		return fail_col(r, c, "column '%s' must be from %g to %g, got '%s'", col_names[c], lo, hi, s);
	}
	return true;
}

/* The gpus column, when given with dp, must be the plan's tp x cp x pp x
 * dp; without dp it gives dp (runs_complete). */
static bool
check_gpus(struct reader *r, struct run *run)
{
	const struct plan *p = &run->plan;
	char want[32];
	int gpus = 0;

	if (!field(r, COL_GPUS)[0])
		return true;
	if (!get_int(r, COL_GPUS, 0, &gpus))
		return false;
	run->gpus = gpus;
	if (p->dp > 0 && (long)p->tp * p->cp * p->pp * p->dp != gpus) {
		snprintf(want, sizeof(want), "%ld", (long)p->tp * p->cp * p->pp * p->dp);
		return fail_col(r, COL_GPUS, p->cp > 1 ? "column 'gpus' is '%s', but tp x cp x pp x dp is %s" :
			    "column 'gpus' is '%s', but tp x pp x dp is %s", field(r, COL_GPUS), want);
	}
	return true;
}

/* A column plan-cli does not know is an error (a typo would silently
 * mean the option's default): name the nearest, or list them all. */
static bool
unknown_column(struct reader *r, int i)
{
	const char *name = r->fields[i];
	const char *near = schema_nearest(name, col_names, sizeof(col_names[0]), 0);
	const char *near_attr = schema_nearest(name, plan_attrs, sizeof(plan_attrs[0]), offsetof(struct plan_attr, name));
	char known[2048] = "";

	if (near_attr && (!near || schema_edit_distance(name, near_attr) < schema_edit_distance(name, near)))
		near = near_attr;
	if (near)
		return fail_field(r, i, "unknown column '%s'; did you mean '%s'?", name, near);
	for (int c = 0; c < NCOLS; c++)
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", c ? ", " : "", col_name(c));
	return fail_field(r, i, "unknown column '%s' (known: %s)", name, known);
}

/* Whether the header is that of a table of published runs (the model's
 * shape and the hardware in words: ../shared/validation's format), which
 * scripts/import-runs turns into this CSV. */
static bool
published_table(const struct reader *r)
{
	static const char *const marks[] = { "layers", "hidden", "global_batch_seqs" };
	int found = 0;

	for (int i = 0; i < r->nfields; i++)
		for (size_t k = 0; k < sizeof(marks) / sizeof(marks[0]); k++)
			found += strcmp(r->fields[i], marks[k]) == 0;
	return found == (int)(sizeof(marks) / sizeof(marks[0]));
}

static bool
header(struct reader *r)
{
	if (published_table(r))
		return fail(r, "a table of published runs (columns %s), not validate's CSV: turn it into one with "
			    "'scripts/import-runs %s' (installed: plan-cli-import-runs), then validate the runs.csv "
			    "it writes",
			    "layers, hidden, global_batch_seqs, ...", r->path);
	for (int c = 0; c < NCOLS; c++)
		r->index[c] = -1;
	for (int i = 0; i < r->nfields; i++) {
		int c = col_find(r->fields[i]);

		if (c < 0)
			return unknown_column(r, i);
		r->index[c] = i;
	}
	/* The rest has predict's defaults (plan_attrs, plan_complete). */
	for (int c = COL_ID; c <= COL_MODEL; c++)
		if (r->index[c] < 0)
			return fail(r, "missing column '%s'%s", col_names[c], "");
	if (r->index[COL_ATTR(PLAN_ATTR_GLOBAL_BATCH)] < 0)
		return fail(r, "missing column '%s'%s", "global_batch", "");
	if (r->index[COL_TIME] < 0 && r->index[COL_TFLOPS] < 0 && r->index[COL_TOKENS] < 0)
		return fail(r, "missing column '%s', '%s' or 'measured_tokens_per_s_per_gpu'",
			    col_names[COL_TIME], col_names[COL_TFLOPS]);
	return true;
}

/* The next run of the set, grown by doubling; NULL when out of memory. */
static struct run *
next_run(struct reader *r)
{
	if (r->set->n == r->set->cap) {
		int cap = r->set->cap ? 2 * r->set->cap : 32;
		struct run *grown = realloc(r->set->runs, (size_t)cap * sizeof(*grown));

		if (!grown) {
			r->failed = true;
			plan_error_set(r->err, PLAN_ERR_NOMEM, r->path, 0, 0, "out of memory");
			return NULL;
		}
		r->set->runs = grown;
		r->set->cap = cap;
	}
	return &r->set->runs[r->set->n];
}

/* The run's id and the profiles it names, read before the plan, as the
 * compress column depends on the compressor's. */
static bool
get_names(struct reader *r, struct run *run)
{
	/* An empty cluster is calibrate --cluster's; validate needs one. */
	if (!field(r, COL_ID)[0] || !field(r, COL_MODEL)[0])
		return fail_col(r, field(r, COL_ID)[0] ? COL_MODEL : COL_ID, "columns 'id' and 'model' must not be empty");
	snprintf(run->id, sizeof(run->id), "%s", field(r, COL_ID));
	snprintf(run->source, sizeof(run->source), "%s", field(r, COL_SOURCE));
	/* Kept whole characters: cut back to the start of a UTF-8 sequence. */
	if (strlen(field(r, COL_SOURCE)) >= sizeof(run->source)) {
		const char *f = field(r, COL_SOURCE);
		size_t n = sizeof(run->source) - 1; /* f[n] is the first byte cut off */

		while (n > 0 && ((unsigned char)f[n] & 0xC0) == 0x80)
			n--;
		run->source[n] = '\0';
	}
	if (!get_profile(r, COL_MODEL, run->model, sizeof(run->model)) ||
	    !get_profile(r, COL_CLUSTER, run->cluster, sizeof(run->cluster)) ||
	    !get_profile(r, COL_FRAMEWORK, run->framework, sizeof(run->framework)) ||
	    !get_profile(r, COL_COMPRESSOR, run->compressor, sizeof(run->compressor)))
		return false;
	/* "none", as a sweep writes it: no compressor. */
	if (strcmp(run->compressor, "none") == 0)
		run->compressor[0] = '\0';
	return true;
}

/*
 * The plan's columns, one per plan attribute (plan/plan_attr.h), each
 * with predict's default when empty or absent: flash_attention's is the
 * GPU's (run->flash_attention -1), dp's the GPUs left (runs_complete).
 */
static bool
get_plan(struct reader *r, struct run *run)
{
	struct estimate_options eo = { .dp_algo = COLL_ALGO_RING };
	struct plan_attr_target t = { &run->plan, &eo };
	bool compressor = run->compressor[0] != '\0';

	run->flash_attention = -1;
	/* With a compressor: MCBench's model-parallel activations unless
	 * the compress column says otherwise (predict's --compress). */
	run->plan.compress.tp = run->plan.compress.pp = compressor;
	for (int id = 0; id < PLAN_ATTR_COUNT; id++) {
		const struct plan_attr *a = &plan_attrs[id];
		const char *v = field(r, COL_ATTR(id));
		char label[64], why[512];

		if (!v[0]) {
			if (a->type != PLAN_ATTR_LIST && !(a->flags & PLAN_ATTR_GPU_DEFAULT))
				plan_attr_set(a, &t, a->def);
			continue;
		}
		if ((a->flags & PLAN_ATTR_COMPRESSION) && !compressor)
			return fail_col(r, COL_ATTR(id), "column '%s' ('%s') needs a compressor in column 'compressor'",
					a->name, v);
		snprintf(label, sizeof(label), "column '%s'", a->name);
		if (!plan_attr_parse(a, label, v, &t, why, sizeof(why)))
			return fail_col(r, COL_ATTR(id), "%s", why);
		if (a->flags & PLAN_ATTR_GPU_DEFAULT)
			run->flash_attention = run->plan.flash_attention;
	}
	run->dp_algo = eo.dp_algo;
	if (run->plan.global_batch < 1)
		return fail_col(r, COL_ATTR(PLAN_ATTR_GLOBAL_BATCH), "column 'global_batch' must not be empty");
	return true;
}

/* The measurements and the FLOP convention they were counted under. */
static bool
get_measured(struct reader *r, struct run *run)
{
	int conv = RUN_CONV_MEGATRON_EQ3;

	/* tokens/s and TFLOP/s per GPU from 1 GFLOP/s-scale rates up; an
	 * iteration from 1 us to 10^7 s (116 days); up to 10^6 GiB a GPU. */
	if (!get_double(r, COL_TOKENS, 1e-3, 1e12, &run->measured_tokens_per_gpu) ||
	    !get_double(r, COL_TIME, 1e-6, 1e7, &run->measured_time_s) ||
	    !get_double(r, COL_TFLOPS, 1e-3, 1e5, &run->measured_tflops) ||
	    !get_double(r, COL_MEMORY, 1e-6, 1e6, &run->measured_memory_gib) ||
	    !get_choice(r, COL_CONV, run_convention_names, RUN_CONV_MEGATRON_EQ3, &conv))
		return false;
	run->convention = conv;
	return true;
}

/* Where column @c's cell of the record starts; the record's line, column
 * 0, where the file has no such column or the record stops short of it. */
static struct run_cell
cell_at(const struct reader *r, int c)
{
	int i = r->index[c];
	struct run_cell at = { r->line, 0 };

	if (i >= 0 && i < r->nfields) {
		at.line = r->at[i].line;
		at.column = r->at[i].column;
	}
	return at;
}

static bool
record(struct reader *r)
{
	struct run *run = next_run(r);

	if (!run)
		return false;
	memset(run, 0, sizeof(*run));
	plan_init(&run->plan);
	run->row = r->record;
	run->line = r->line;
	run->at_model = cell_at(r, COL_MODEL);
	run->at_cluster = cell_at(r, COL_CLUSTER);
	run->at_framework = cell_at(r, COL_FRAMEWORK);
	run->at_compressor = cell_at(r, COL_COMPRESSOR);
	if (!get_names(r, run) || !get_plan(r, run) || !get_measured(r, run))
		return false;
	/* MiCS's ZeRO-3, dp from the GPUs and the rest: runs_complete. */
	if (!check_gpus(r, run))
		return false;
	if (run->measured_time_s == 0 && run->measured_tflops == 0 && run->measured_tokens_per_gpu == 0)
		return fail(r, "run '%s' has no measured time, TFLOP/s or tokens/s per GPU", run->id);
	r->set->n++;
	return true;
}

static void
on_record(int c, void *data)
{
	struct reader *r = data;

	(void)c;
	r->record++;
	r->line = r->pos.record.line;
	if (!r->failed) {
		bool blank = r->nfields == 1 && r->fields[0][0] == '\0';

		if (r->record == 1)
			header(r);
		else if (!blank)
			record(r);
	}
	for (int i = 0; i < r->nfields; i++)
		free(r->fields[i]);
	r->nfields = 0;
}

/* Spreadsheets save UTF-8 with a byte-order mark; the header starts after it. */
static void
skip_bom(FILE *f)
{
	unsigned char bom[3];
	size_t n = fread(bom, 1, sizeof(bom), f);

	if (n != 3 || bom[0] != 0xEF || bom[1] != 0xBB || bom[2] != 0xBF)
		rewind(f);
}

bool
runs_csv_load(const char *path, struct run_set *out, struct plan_error *err)
{
	struct reader r = { .path = path, .set = out, .err = err };
	struct csv_parser p;
	char buf[8192];
	size_t n;
	FILE *f;

	memset(out, 0, sizeof(*out));
	if (!infile_open(path, INFILE_MAX_CSV, &f, err))
		return false;
	skip_bom(f);
	if (csv_init(&p, CSV_STRICT | CSV_APPEND_NULL | CSV_STRICT_FINI) != 0) {
		fclose(f);
		return plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
	}
	csvpos_init(&r.pos, on_field, on_record, &r);
	while (!r.failed && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		size_t k = csvpos_parse(&p, &r.pos, buf, n);

		/* CSV_STRICT refuses a quote inside an unquoted field, and
		 * anything but a delimiter or line end after a closing quote. */
		if (k != n && !r.failed) {
			r.failed = true;
			plan_error_set(err, PLAN_ERR_INPUT, path, r.pos.next.line, r.pos.next.column, "malformed CSV: %s",
				       csv_error(&p) != CSV_EPARSE ? csv_strerror(csv_error(&p)) :
				       buf[k] == '"' ? "a quote inside an unquoted field (quote the whole field, and "
				       "double a quote inside it)" : "text after a field's closing quote");
		}
	}
	if (!r.failed && ferror(f)) {
		r.failed = true;
		plan_error_set(err, PLAN_ERR_IO, path, 0, 0, "read error");
	}
	/* CSV_STRICT_FINI: a quoted field still open at the end of the file. */
	if (!r.failed && csvpos_fini(&p, &r.pos) != 0 && !r.failed) {
		r.failed = true;
		plan_error_set(err, PLAN_ERR_INPUT, path, r.pos.field.line, r.pos.field.column, "malformed CSV: %s",
			       csv_error(&p) != CSV_EPARSE ? csv_strerror(csv_error(&p)) :
			       "a quoted field with no closing quote");
	}
	for (int i = 0; i < r.nfields; i++)
		free(r.fields[i]);
	csv_free(&p);
	fclose(f);
	if (!r.failed && r.record == 0) {
		r.failed = true;
		plan_error_set(err, PLAN_ERR_INPUT, path, 0, 0, "empty file: expected a header line");
	}
	if (!r.failed && out->n == 0) {
		r.failed = true;
		plan_error_set(err, PLAN_ERR_INPUT, path, 0, 0, "no runs after the header");
	}
	return !r.failed;
}

void
runs_csv_release(struct run_set *set)
{
	free(set->runs);
	set->runs = NULL;
	set->n = set->cap = 0;
}

double
runs_measured_time_s(const struct run *run, const struct model *m)
{
	double flops;

	if (run->measured_time_s > 0)
		return run->measured_time_s;
	if (run->measured_tflops <= 0)
		return (double)run->plan.global_batch * run->plan.seq_len /
		       (run->measured_tokens_per_gpu * plan_gpus(&run->plan));
	switch (run->convention) {
	case RUN_CONV_MODEL:
		flops = flops_model_per_iteration(m, &run->plan);
		break;
	case RUN_CONV_HARDWARE:
		flops = flops_hardware_per_iteration(m, &run->plan, NULL);
		break;
	default:
		flops = flops_narayanan_eq3(m, run->plan.global_batch, run->plan.seq_len);
	}
	return flops / (plan_gpus(&run->plan) * run->measured_tflops * 1e12);
}

/* What plan_complete needs beyond the plan: the gpus and flash_attention
 * cells, and the framework's rule for layers pp x vpp do not divide (its
 * pipeline_split key), as predict takes it from --framework. */
static struct plan_fill
run_fill(const struct run *run, const struct framework *fw)
{
	return (struct plan_fill){ .gpus = run->gpus, .flash = run->flash_attention,
				   .pp_split = fw ? fw->pipeline_split : PLAN_PP_SPLIT_EVEN };
}

bool
runs_complete(struct run *run, const struct model *m, const struct cluster *c, const struct framework *fw,
	      struct plan_error *err)
{
	const struct plan_fill fill = run_fill(run, fw);

	return plan_complete(&run->plan, &fill, m, c, err);
}

bool
runs_predict(const struct run *run, const struct model *m, const struct cluster *c,
	     const struct framework *fw, const struct compressor *cmp, struct run_prediction *out,
	     struct plan_error *err)
{
	struct estimate_options opt = { (enum coll_algo)run->dp_algo, cmp, fw };
	const struct plan_fill fill = run_fill(run, fw);
	struct plan p = run->plan;
	struct estimate e;

	memset(out, 0, sizeof(*out));
	/* Completed as runs_complete does (idempotent, for callers that did
	 * not): an empty flash_attention cell is the GPU's default. */
	if (!plan_complete(&p, &fill, m, c, err) ||
	    !estimate_plan(m, c, &p, &opt, &e, err))
		return false;
	out->predicted_s = e.iteration_time_s;
	out->measured_s = runs_measured_time_s(run, m);
	out->error = (out->predicted_s - out->measured_s) / out->measured_s;
	out->predicted_tflops = e.tflops_per_gpu;
	out->predicted_memory_bytes = e.memory.total;
	if (run->measured_memory_gib > 0)
		out->memory_error = (e.memory.total / 1073741824.0 - run->measured_memory_gib) /
				    run->measured_memory_gib;
	out->fits = e.fits;
	return true;
}
