/* Tables (Markdown, CSV, LaTeX, JSON) and plots (gnuplot) of a sweep. Formatters never compute. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "plan/error.h"
#include "io/study.h"
#include "plan/sweep.h"

enum sweep_format { SWEEP_MD, SWEEP_CSV, SWEEP_LATEX, SWEEP_JSON };
extern const char *const sweep_format_names[];

/** Which cells to print: all, or those of one shard. */
struct sweep_rows {
	long n;            /**< cells */
	long shard_i, shard_n;
};

/** Write the table of @res in @format. Returns false on a write error. */
bool sweep_write(FILE *out, int format, const struct study *s, const struct sweep_result *res,
		 const struct sweep_rows *rows);

/**
 * Draw the sweep with gnuplot into @path (.svg, .png or .pdf): lines per
 * series (the varying axes other than the x axis), x the GPUs (log scale)
 * or the first varying numeric axis, y the first numeric metric.
 */
bool sweep_plot(const char *path, const struct study *s, const struct sweep_result *res, long n,
		struct plan_error *err);
