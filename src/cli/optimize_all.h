/* optimize --all FILE: every plan the search predicts, streamed to CSV or JSON. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "cli/options.h"
#include "io/atomic_file.h"
#include "plan/error.h"
#include "plan/search.h"

/**
 * The predict_args @args as one line of words, each quoted by the shell's
 * rules only where it needs it (profile paths and --framework-set values
 * may hold spaces); malloc'd, NULL when out of memory.
 */
char *optimize_args_line(const json_t *args);

/** The formats of --all (--all-format), indexed as optimize_all_format_names. */
enum optimize_all_format { OPTIMIZE_ALL_BY_NAME, OPTIMIZE_ALL_CSV, OPTIMIZE_ALL_JSON };

/** "auto", "csv", "json": --all-format's choices (NULL-ended). */
extern const char *const optimize_all_format_names[];

/**
 * The file being written. Rows go to a buffer flushed to the atomic
 * file's temporary file, so that memory stays bounded however many plans
 * the search predicts; the target is replaced only by optimize_all_commit.
 */
struct optimize_all {
	struct atomic_file file;
	enum optimize_all_format format;
	const struct optimize_request *req;
	long rows;                /**< plans written */
	bool failed;              /**< a write failed: @err says why, later rows are dropped */
	struct plan_error err;
	char *buf;
	size_t len, cap;
};

/**
 * Choose the format (@format, or by @path's extension .csv or .json) and
 * open the temporary file; false with @err (nothing left behind) when the
 * format cannot be told or the file cannot be created.
 */
bool optimize_all_open(struct optimize_all *w, const char *path, enum optimize_all_format format,
		       const struct optimize_request *req, struct plan_error *err);

/** The search's hook (search_options.on_eval, with @ctx the struct optimize_all). */
void optimize_all_plan(void *ctx, const struct search_eval *ev);

/** Finish the file and replace the target with it; false with @err (the target untouched). */
bool optimize_all_commit(struct optimize_all *w, struct plan_error *err);

/** Drop the file: the target is untouched. */
void optimize_all_abort(struct optimize_all *w);
