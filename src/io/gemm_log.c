#include <csv.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/numparse.h"
#include "io/csvpos.h"
#include "io/gemm_log.h"
#include "io/infile.h"

enum { COL_M, COL_N, COL_K, COL_DTYPE, COL_SECONDS, COL_COUNT };

static const char *const col_names[COL_COUNT] = { "m", "n", "k", "dtype", "seconds" };

struct reader {
	const char *path;
	int index[COL_COUNT];
	char *fields[COL_COUNT];
	struct csvpos_at at[COL_COUNT]; /* where each field starts */
	int nfields, record;
	int header_line;        /* 0: no header yet */
	bool failed;
	struct csvpos pos;
	struct fit_gemm_point *pts;
	int n, cap;
	struct plan_error *err;
};

/* The first error, at @at (line 0: none). */
static bool __attribute__((format(printf, 3, 4)))
fail_at(struct reader *r, struct csvpos_at at, const char *fmt, ...)
{
	char msg[sizeof(r->err->message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!r->failed)
		plan_error_set(r->err, PLAN_ERR_INPUT, r->path, at.line, at.column, "%s", msg);
	r->failed = true;
	return false;
}

/* Where field @i of the record starts; the record's line when it has no such field. */
static struct csvpos_at
field_at(const struct reader *r, int i)
{
	return i >= 0 && i < r->nfields ? r->at[i] : (struct csvpos_at){ r->pos.record.line, 0 };
}

static void
on_field(void *s, size_t len, void *data)
{
	struct reader *r = data;

	if (r->failed)
		return;
	if (r->nfields == COL_COUNT || memchr(s, '\0', len)) {
		fail_at(r, r->pos.field, "%s", r->nfields == COL_COUNT ? "more than the 5 columns m, n, k, dtype, seconds" :
			"a NUL byte in a field");
		return;
	}
	r->fields[r->nfields] = malloc(len + 1);
	if (!r->fields[r->nfields]) {
		r->failed = true;
		plan_error_set(r->err, PLAN_ERR_NOMEM, r->path, 0, 0, "out of memory");
		return;
	}
	memcpy(r->fields[r->nfields], s, len);
	r->at[r->nfields] = r->pos.field;
	r->fields[r->nfields++][len] = '\0';
}

static bool
header(struct reader *r)
{
	for (int c = 0; c < COL_COUNT; c++)
		r->index[c] = -1;
	for (int i = 0; i < r->nfields; i++) {
		int c = 0;

		while (c < COL_COUNT && strcmp(r->fields[i], col_names[c]) != 0)
			c++;
		/* Binary bytes read as one huge "column": name at most 40 of them. */
		if (c == COL_COUNT && strlen(r->fields[i]) > 40)
			memcpy(r->fields[i] + 37, "...", 4);
		if (c == COL_COUNT || r->index[c] >= 0)
			return fail_at(r, r->at[i], c == COL_COUNT ? "unknown column '%s' (the columns are m, n, k, dtype, "
				       "seconds)" : "column '%s' given twice", r->fields[i]);
		r->index[c] = i;
	}
	for (int c = 0; c < COL_COUNT; c++)
		if (r->index[c] < 0)
			return fail_at(r, field_at(r, -1), "missing column '%s' (the header must name m, n, k, dtype, "
				       "seconds)", col_names[c]);
	return true;
}

static bool
row(struct reader *r)
{
	struct fit_gemm_point p = { 0 };
	double *dims[3] = { &p.m, &p.n, &p.k };
	long v;
	const char *dt;

	if (r->nfields != COL_COUNT)
		return fail_at(r, field_at(r, -1), "a row needs the 5 columns m, n, k, dtype, seconds");
	for (int c = COL_M; c <= COL_K; c++) {
		if (!num_parse_long(r->fields[r->index[c]], 1, 100000000L, &v))
			return fail_at(r, field_at(r, r->index[c]), "column '%s' must be a whole number from 1 to 1e8, "
				       "got '%s'", col_names[c], r->fields[r->index[c]]);
		*dims[c] = (double)v;
	}
	dt = r->fields[r->index[COL_DTYPE]];
	for (p.dtype = 0; fit_gemm_dtype_names[p.dtype] && strcmp(fit_gemm_dtype_names[p.dtype], dt) != 0;)
		p.dtype++;
	if (!fit_gemm_dtype_names[p.dtype])
		return fail_at(r, field_at(r, r->index[COL_DTYPE]), "unknown dtype '%s' (valid: bf16, fp16, fp8)", dt);
	/* 1 ns to 10^4 s a kernel: a larger time (1e300) has a relative
	 * weight of 0 in the fit and would be dropped without a word. */
	if (!num_parse_double(r->fields[r->index[COL_SECONDS]], &p.time_s) || !(p.time_s >= 1e-9) ||
	    p.time_s > 1e4)
		return fail_at(r, field_at(r, r->index[COL_SECONDS]), "column 'seconds' must be a number from 1e-9 "
			       "to 1e4, got '%s'", r->fields[r->index[COL_SECONDS]]);
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 64;
		struct fit_gemm_point *g = realloc(r->pts, (size_t)cap * sizeof(*g));

		if (!g) {
			r->failed = true;
			return plan_error_set(r->err, PLAN_ERR_NOMEM, r->path, 0, 0, "out of memory");
		}
		r->pts = g;
		r->cap = cap;
	}
	r->pts[r->n++] = p;
	return true;
}

static void
clear_fields(struct reader *r)
{
	while (r->nfields > 0)
		free(r->fields[--r->nfields]);
}

/* Record 1 is the header; blank lines are skipped. */
static void
on_record(int c, void *data)
{
	struct reader *r = data;
	bool blank = r->nfields == 1 && !r->fields[0][0];

	(void)c;
	if (r->record == 0)
		r->header_line = r->pos.record.line;
	if (!r->failed && (++r->record == 1 || !blank))
		(void)(r->record == 1 ? header(r) : row(r));
	clear_fields(r);
}

bool
gemm_log_load(const char *path, struct fit_gemm_point **pts, int *n, struct plan_error *err)
{
	struct reader r = { .path = path, .err = err };
	struct csv_parser csv;
	char *text;
	size_t len, skip;

	*pts = NULL;
	*n = 0;
	if (!infile_read(path, INFILE_MAX_CSV, &text, &len, err))
		return false;
	if (csv_init(&csv, CSV_APPEND_NULL) != 0) {
		free(text);
		return plan_error_set(err, PLAN_ERR_NOMEM, path, 0, 0, "out of memory");
	}
	/* Spreadsheets save UTF-8 with a byte-order mark; the header starts after it. */
	skip = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	csvpos_init(&r.pos, on_field, on_record, &r);
	/* Not strict: only running out of memory stops libcsv. */
	if (csvpos_parse(&csv, &r.pos, text + skip, len - skip) != len - skip && !r.failed)
		fail_at(&r, r.pos.next, "malformed CSV: %s", csv_strerror(csv_error(&csv)));
	csvpos_fini(&csv, &r.pos);
	csv_free(&csv);
	free(text);
	clear_fields(&r);
	if (!r.failed && r.n == 0)
		fail_at(&r, (struct csvpos_at){ r.header_line, 0 }, "no GEMM rows under the header m,n,k,dtype,seconds");
	if (r.failed) {
		free(r.pts);
		return false;
	}
	*pts = r.pts;
	*n = r.n;
	return true;
}
