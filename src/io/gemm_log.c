#include <csv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/numparse.h"
#include "io/gemm_log.h"
#include "io/infile.h"

enum { COL_M, COL_N, COL_K, COL_DTYPE, COL_SECONDS, COL_COUNT };

static const char *const col_names[COL_COUNT] = { "m", "n", "k", "dtype", "seconds" };

struct reader {
	const char *path;
	int index[COL_COUNT];
	char *fields[COL_COUNT];
	int nfields, record;
	bool failed;
	struct fit_gemm_point *pts;
	int n, cap;
	struct plan_error *err;
};

static bool
fail(struct reader *r, const char *fmt, const char *a, const char *b)
{
	if (!r->failed)
		plan_error_set(r->err, PLAN_ERR_INPUT, r->path, r->record, 0, fmt, a, b);
	r->failed = true;
	return false;
}

static void
on_field(void *s, size_t len, void *data)
{
	struct reader *r = data;

	if (r->failed)
		return;
	if (r->nfields == COL_COUNT || memchr(s, '\0', len)) {
		r->record++; /* the record being read */
		fail(r, r->nfields == COL_COUNT ? "more than the 5 columns m, n, k, dtype, seconds%s%s" :
		     "a NUL byte in a field%s%s", "", "");
		return;
	}
	r->fields[r->nfields] = malloc(len + 1);
	if (!r->fields[r->nfields]) {
		r->failed = true;
		plan_error_set(r->err, PLAN_ERR_NOMEM, r->path, 0, 0, "out of memory");
		return;
	}
	memcpy(r->fields[r->nfields], s, len);
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
			return fail(r, c == COL_COUNT ? "unknown column '%s' (the columns are m, n, k, dtype, seconds)%s" :
				    "column '%s' given twice%s", r->fields[i], "");
		r->index[c] = i;
	}
	for (int c = 0; c < COL_COUNT; c++)
		if (r->index[c] < 0)
			return fail(r, "missing column '%s' (the header must name m, n, k, dtype, seconds)%s",
				    col_names[c], "");
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
		return fail(r, "a row needs the 5 columns m, n, k, dtype, seconds%s%s", "", "");
	for (int c = COL_M; c <= COL_K; c++) {
		if (!num_parse_long(r->fields[r->index[c]], 1, 100000000L, &v))
			return fail(r, "column '%s' must be a whole number from 1 to 1e8, got '%s'", col_names[c],
				    r->fields[r->index[c]]);
		*dims[c] = (double)v;
	}
	dt = r->fields[r->index[COL_DTYPE]];
	for (p.dtype = 0; fit_gemm_dtype_names[p.dtype] && strcmp(fit_gemm_dtype_names[p.dtype], dt) != 0;)
		p.dtype++;
	if (!fit_gemm_dtype_names[p.dtype])
		return fail(r, "unknown dtype '%s' (valid: bf16, fp16, fp8)%s", dt, "");
	/* 1 ns to 10^4 s a kernel: a larger time (1e300) has a relative
	 * weight of 0 in the fit and would be dropped without a word. */
	if (!num_parse_double(r->fields[r->index[COL_SECONDS]], &p.time_s) || !(p.time_s >= 1e-9) ||
	    p.time_s > 1e4)
		return fail(r, "column 'seconds' must be a number from 1e-9 to 1e4, got '%s'%s",
			    r->fields[r->index[COL_SECONDS]], "");
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
	if (csv_parse(&csv, text + skip, len - skip, on_field, on_record, &r) != len - skip && !r.failed)
		fail(&r, "malformed CSV: %s%s", csv_strerror(csv_error(&csv)), "");
	csv_fini(&csv, on_field, on_record, &r);
	csv_free(&csv);
	free(text);
	clear_fields(&r);
	if (!r.failed && r.n == 0)
		fail(&r, "no GEMM rows under the header m,n,k,dtype,seconds%s%s", "", "");
	if (r.failed) {
		free(r.pts);
		return false;
	}
	*pts = r.pts;
	*n = r.n;
	return true;
}
