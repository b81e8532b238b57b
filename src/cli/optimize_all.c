/*
 * optimize --all FILE: every plan the search predicts, one row each, as
 * Calculon writes its whole search space (issue 26). The search calls
 * optimize_all_plan for each prediction (search_options.on_eval); rows
 * are streamed through a small buffer to the atomic file's temporary
 * file, so a search of 100k+ evaluations holds one row at a time, and the
 * target is replaced whole or not at all (io/atomic_file.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cli/optimize_all.h"
#include "cli/optimize_output.h"
#include "plan/plan_attr.h"

const char *const optimize_all_format_names[] = { "auto", "csv", "json", NULL };

/* Flush the buffer to the temporary file past this many bytes. */
#define ALL_FLUSH_BYTES 65536

/* An attribute's text: a list of PLAN_MAX_STAGES entries as long as "selective,". */
#define ALL_ATTR_TEXT_MAX (PLAN_MAX_STAGES * 12)

static const double gib = 1073741824.0;

/* The statuses of a row: why a plan was not a candidate, or that it fits. */
static const char *const status_fits = "fits", *const status_oom = "out_of_memory", *const status_refused = "refused";

static bool
flush(struct optimize_all *w)
{
	if (w->len > 0 && !w->failed && !atomic_file_write(&w->file, w->buf, w->len, &w->err))
		w->failed = true;
	w->len = 0;
	return !w->failed;
}

/* Append @len bytes of @s. */
static void
put(struct optimize_all *w, const char *s, size_t len)
{
	if (w->failed)
		return;
	if (w->len + len + 1 > w->cap) {
		size_t cap = w->cap ? w->cap : ALL_FLUSH_BYTES * 2;
		char *b;

		while (cap < w->len + len + 1)
			cap *= 2;
		b = realloc(w->buf, cap);
		if (!b) {
			w->failed = true;
			plan_error_set(&w->err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, len);
	w->len += len;
}

static void __attribute__((format(printf, 2, 3)))
putf(struct optimize_all *w, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	put(w, small, (size_t)n < sizeof(small) ? (size_t)n : sizeof(small) - 1);
}

/* A CSV field, quoted as RFC 4180 says where it holds a comma, quote or line break. */
static void
put_csv(struct optimize_all *w, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		put(w, s, strlen(s));
		return;
	}
	put(w, "\"", 1);
	for (const char *q; (q = strchr(s, '"')); s = q + 1) {
		put(w, s, (size_t)(q - s));
		put(w, "\"\"", 2);
	}
	put(w, s, strlen(s));
	put(w, "\"", 1);
}

char *
optimize_args_line(const json_t *args)
{
	size_t size = 1, i;
	json_t *v;
	char *line, *p;

	json_array_foreach(args, i, v)
		size += 3 + 4 * strlen(json_string_value(v));
	if (!(line = malloc(size)))
		return NULL;
	p = line;
	json_array_foreach(args, i, v) {
		const char *s = json_string_value(v);
		bool plain = s[0] && !s[strcspn(s, " \t\n'\"\\$`*?[]{}()<>|&;#~")];

		if (i)
			*p++ = ' ';
		if (plain) {
			p += sprintf(p, "%s", s);
			continue;
		}
		*p++ = '\'';
		for (; *s; s++)
			p += *s == '\'' ? sprintf(p, "'\\''") : sprintf(p, "%c", *s);
		*p++ = '\'';
	}
	*p = '\0';
	return line;
}

/* Why a predicted plan is not a candidate: the stage that does not fit. */
static void
why_text(const struct search_eval *ev, char *buf, size_t size)
{
	const struct estimate *e = &ev->cand->est;
	int s = e->details.memory_stage;

	if (!ev->predicted)
		snprintf(buf, size, "%s", ev->refused ? ev->refused : "the cost model refused the plan");
	else if (e->fits)
		buf[0] = '\0';
	else
		snprintf(buf, size, "stage %d needs %.2f GiB per GPU, the GPU has %.2f GiB", s,
			 e->memory.total / gib, e->memory_capacity_bytes / gib);
}

static void
csv_header(struct optimize_all *w)
{
	put(w, "evaluation,status,why,iteration_time_s,memory_bytes,memory_capacity_bytes,fits,mfu,"
	       "tokens_per_s_per_gpu,compressor", strlen("evaluation,status,why,iteration_time_s,memory_bytes,"
							 "memory_capacity_bytes,fits,mfu,tokens_per_s_per_gpu,"
							 "compressor"));
	for (int id = 0; id < PLAN_ATTR_COUNT; id++)
		putf(w, ",%s", plan_attrs[id].name);
	put(w, ",predict_args\r\n", strlen(",predict_args\r\n"));
}

bool
optimize_all_open(struct optimize_all *w, const char *path, enum optimize_all_format format,
		  const struct optimize_request *req, struct plan_error *err)
{
	const char *dot = strrchr(path, '.');

	memset(w, 0, sizeof(*w));
	w->req = req;
	w->file.fd = -1;
	if (format == OPTIMIZE_ALL_BY_NAME)
		format = dot && strcasecmp(dot, ".csv") == 0	? OPTIMIZE_ALL_CSV :
			 dot && strcasecmp(dot, ".json") == 0 ? OPTIMIZE_ALL_JSON :
								  OPTIMIZE_ALL_BY_NAME;
	if (format == OPTIMIZE_ALL_BY_NAME)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "--all %s: name a .csv or .json file, or give --all-format csv or json", path);
	w->format = format;
	if (!atomic_file_open(&w->file, path, err))
		return false;
	if (format == OPTIMIZE_ALL_CSV)
		csv_header(w);
	else
		put(w, "[", 1);
	return true;
}

/* The row's figures, NULL/blank where the plan was refused. */
static void
csv_row(struct optimize_all *w, const struct search_eval *ev, const char *why, const char *status,
	const char *args)
{
	const struct search_candidate *c = ev->cand;
	const struct estimate *e = &c->est;
	struct estimate_options eo = { c->dp_algo, c->compressor, w->req->so.framework };
	struct plan p = c->plan;
	const struct plan_attr_target t = { &p, &eo };
	char text[ALL_ATTR_TEXT_MAX];

	putf(w, "%ld,%s,", w->rows + 1, status);
	put_csv(w, why);
	if (ev->predicted)
		putf(w, ",%.17g,%.17g,%.17g,%s,%.17g,%.17g,", e->iteration_time_s, e->memory.total,
		     e->memory_capacity_bytes, e->fits ? "true" : "false", e->mfu, e->tokens_per_s_per_gpu);
	else
		put(w, ",,,,false,,,", strlen(",,,,false,,,"));
	put_csv(w, c->compressor ? c->compressor->name : "");
	for (int id = 0; id < PLAN_ATTR_COUNT; id++) {
		put(w, ",", 1);
		if (plan_attr_format(&plan_attrs[id], &t, c->compressor != NULL, text, sizeof(text)))
			put_csv(w, text);
	}
	put(w, ",", 1);
	put_csv(w, args);
	put(w, "\r\n", 2);
}

static json_t *
json_row(struct optimize_all *w, const struct search_eval *ev, const char *why, const char *status,
	 json_t *args)
{
	const struct search_candidate *c = ev->cand;
	const struct estimate *e = &c->est;
	struct estimate_options eo = { c->dp_algo, c->compressor, w->req->so.framework };
	struct plan p = c->plan;
	const struct plan_attr_target t = { &p, &eo };
	json_t *o = json_object(), *attrs = json_object();
	char text[ALL_ATTR_TEXT_MAX];
	int rc = 0;

	if (!o || !attrs) {
		json_decref(o);
		json_decref(attrs);
		json_decref(args);
		return NULL;
	}
	for (int id = 0; id < PLAN_ATTR_COUNT; id++)
		if (plan_attr_format(&plan_attrs[id], &t, c->compressor != NULL, text, sizeof(text)))
			rc |= json_object_set_new(attrs, plan_attrs[id].name, json_string(text));
	rc |= json_object_set_new(o, "evaluation", json_integer(w->rows + 1));
	rc |= json_object_set_new(o, "status", json_string(status));
	rc |= json_object_set_new(o, "why", why[0] ? json_string(why) : json_null());
	rc |= json_object_set_new(o, "iteration_time_s", ev->predicted ? json_real(e->iteration_time_s) : json_null());
	rc |= json_object_set_new(o, "memory_bytes", ev->predicted ? json_real(e->memory.total) : json_null());
	rc |= json_object_set_new(o, "memory_capacity_bytes",
				  ev->predicted ? json_real(e->memory_capacity_bytes) : json_null());
	rc |= json_object_set_new(o, "fits", json_boolean(ev->predicted && e->fits));
	rc |= json_object_set_new(o, "mfu", ev->predicted ? json_real(e->mfu) : json_null());
	rc |= json_object_set_new(o, "tokens_per_s_per_gpu",
				  ev->predicted ? json_real(e->tokens_per_s_per_gpu) : json_null());
	rc |= json_object_set_new(o, "compressor", c->compressor ? json_string(c->compressor->name) : json_null());
	rc |= json_object_set_new(o, "attributes", attrs);
	rc |= json_object_set_new(o, "predict_args", args);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void
optimize_all_plan(void *ctx, const struct search_eval *ev)
{
	struct optimize_all *w = ctx;
	const char *status = !ev->predicted ? status_refused : ev->cand->est.fits ? status_fits : status_oom;
	json_t *args;
	char why[1024];

	if (w->failed)
		return;
	/* A prediction that is not finite is no plan (format_csv_row's rule). */
	if (ev->predicted && !isfinite(ev->cand->est.iteration_time_s))
		return;
	why_text(ev, why, sizeof(why));
	args = optimize_predict_args(w->req, ev->cand);
	/* predict refuses a plan that does not fit unless told (explain's rule). */
	if (args && ev->predicted && !ev->cand->est.fits && json_array_append_new(args, json_string("--allow-oom")))
		json_decref(args), args = NULL;
	if (!args) {
		w->failed = true;
		plan_error_set(&w->err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
		return;
	}
	if (w->format == OPTIMIZE_ALL_CSV) {
		char *line = optimize_args_line(args);

		json_decref(args);
		if (!line) {
			w->failed = true;
			plan_error_set(&w->err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
			return;
		}
		csv_row(w, ev, why, status, line);
		free(line);
	} else {
		json_t *o = json_row(w, ev, why, status, args);
		char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;

		json_decref(o);
		if (!s) {
			w->failed = true;
			plan_error_set(&w->err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
			return;
		}
		put(w, w->rows ? ",\n" : "\n", w->rows ? 2 : 1);
		put(w, s, strlen(s));
		free(s);
	}
	w->rows++;
	if (w->len >= ALL_FLUSH_BYTES)
		flush(w);
}

bool
optimize_all_commit(struct optimize_all *w, struct plan_error *err)
{
	if (w->format == OPTIMIZE_ALL_JSON)
		put(w, "\n]\n", 3);
	flush(w);
	free(w->buf);
	w->buf = NULL;
	if (w->failed) {
		*err = w->err;
		atomic_file_abort(&w->file);
		return false;
	}
	return atomic_file_commit(&w->file, err);
}

void
optimize_all_abort(struct optimize_all *w)
{
	free(w->buf);
	w->buf = NULL;
	atomic_file_abort(&w->file);
}
