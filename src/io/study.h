/* A study file: the axes, the fixed plan, the metrics and the output of a sweep. */
#pragma once

#include <stdbool.h>

#include "plan/error.h"
#include "plan/plan.h"
#include "plan/plan_attr.h"

#define STUDY_MAX_AXES 16
#define STUDY_MAX_VALUES 512
#define STUDY_MAX_METRICS 12
/* A value may be a profile path: as long as a path may be (PATH_MAX). */
#define STUDY_VALUE_LEN 4096

/**
 * What an axis sets in each cell: a profile, the GPUs, a link, the GPU's
 * power limit, or (from
 * AXIS_ATTR on) a plan attribute, AXIS_ATTR + its enum plan_attr_id, so
 * that every attribute of plan/plan_attr.h is an axis and a plan: key.
 */
enum study_axis_kind {
	AXIS_MODEL, AXIS_CLUSTER, AXIS_COMPRESSOR, AXIS_GPUS, AXIS_NIC_BANDWIDTH, AXIS_INTRA_BANDWIDTH,
	AXIS_FRAMEWORK, AXIS_REFERENCE, AXIS_POWER_LIMIT,
	AXIS_ATTR,
	AXIS_COUNT = AXIS_ATTR + PLAN_ATTR_COUNT,
};

/** The axis of plan attribute @id (enum plan_attr_id). */
#define AXIS_OF(id) (AXIS_ATTR + (id))
#define AXIS_GLOBAL_BATCH AXIS_OF(PLAN_ATTR_GLOBAL_BATCH)
#define AXIS_SEQ_LEN AXIS_OF(PLAN_ATTR_SEQ_LEN)
#define AXIS_TP AXIS_OF(PLAN_ATTR_TP)
#define AXIS_PP AXIS_OF(PLAN_ATTR_PP)
#define AXIS_DP AXIS_OF(PLAN_ATTR_DP)
#define AXIS_VPP AXIS_OF(PLAN_ATTR_VPP)
#define AXIS_MICRO_BATCH AXIS_OF(PLAN_ATTR_MICRO_BATCH)
#define AXIS_RECOMPUTE AXIS_OF(PLAN_ATTR_RECOMPUTE)
#define AXIS_ZERO AXIS_OF(PLAN_ATTR_ZERO)
#define AXIS_EP AXIS_OF(PLAN_ATTR_EP)
#define AXIS_MOE_ROUTING AXIS_OF(PLAN_ATTR_MOE_ROUTING)
#define AXIS_MICS_GROUP AXIS_OF(PLAN_ATTR_MICS_GROUP)
#define AXIS_COMPRESS AXIS_OF(PLAN_ATTR_COMPRESS)
#define AXIS_PRECISION AXIS_OF(PLAN_ATTR_PRECISION)
#define AXIS_CP AXIS_OF(PLAN_ATTR_CP)
#define AXIS_CP_METHOD AXIS_OF(PLAN_ATTR_CP_METHOD)

/**
 * The name of axis @kind as written in study files (the key of axes:, of
 * plan: and of baseline:), NULL past the last: a plan attribute's is its
 * name. The sweep's axis options are these names with dashes for
 * underscores (src/cli/sweep_options.c; tests/cli/run-options-tests.sh
 * checks that the two agree).
 */
const char *study_axis_name(int kind);

/** Every axis name in kind order, NULL-terminated (for choice lists). */
const char *const *study_axis_names(void);

enum study_metric {
	METRIC_TIME, METRIC_TFLOPS, METRIC_MFU, METRIC_TOKENS, METRIC_SPEEDUP,
	METRIC_WEAK, METRIC_STRONG, METRIC_MEMORY, METRIC_FITS, METRIC_PLAN,
	METRIC_TOKENS_PER_GPU, METRIC_TRAIN_DAYS, METRIC_GPU_HOURS, METRIC_WAVE_LOSS, METRIC_COUNT,
};

extern const char *const study_metric_names[];

/** How a LaTeX table fits the page (latex_fit, --latex-fit). */
enum study_latex_fit {
	STUDY_LATEX_COLUMN, /**< table, compact, shrunk to \linewidth when wider */
	STUDY_LATEX_PAGE,   /**< table* (both columns of a two-column class), compact, shrunk likewise */
	STUDY_LATEX_NONE,   /**< table at its natural width, full headers */
};
extern const char *const study_latex_fit_names[];

/** Which plot axes are logarithmic (plot_log, --plot-log). */
enum study_plot_log { STUDY_LOG_AUTO, STUDY_LOG_NONE, STUDY_LOG_X, STUDY_LOG_Y, STUDY_LOG_XY };
extern const char *const study_plot_log_names[];

enum study_mode { STUDY_PREDICT, STUDY_OPTIMIZE };

struct study_axis {
	int kind;          /**< enum study_axis_kind */
	int n;             /**< values */
	char *values[STUDY_MAX_VALUES]; /**< owned (study_axis_add); study_release frees */
	bool zipped;       /**< advances with the other zipped axes, not crossed */
	int line, column;  /**< where it was given */
	/** Where each value was given (0: on the command line). */
	int value_line[STUDY_MAX_VALUES], value_column[STUDY_MAX_VALUES];
};

struct study {
	char file[STUDY_VALUE_LEN];
	char name[64];
	char title[256];
	char caption[512];
	char label[64];
	char reference_name[64]; /**< header of the reference column */
	int mode;                /**< enum study_mode */
	int naxes;
	struct study_axis axes[STUDY_MAX_AXES];
	int nmetrics;
	int metrics[STUDY_MAX_METRICS];
	int baseline_axis;       /**< axis index for the speedup baseline; -1: none */
	char baseline_value[STUDY_VALUE_LEN];
	int baseline_line, baseline_column; /**< of the baseline value; 0: not from the file */
	/** Values of the fixed plan keys (plan: block), as text, by axis kind; "" when unset. */
	char fixed[AXIS_COUNT][STUDY_VALUE_LEN];
	int fixed_line[AXIS_COUNT], fixed_column[AXIS_COUNT]; /**< where each was given */
	bool sequence_parallel, no_dp_overlap, tp_overlap;
	/** Tokens to train on, for the train_days and gpu_hours metrics; 0: not given. */
	double train_tokens;
	int latex_fit;           /**< enum study_latex_fit */
	int plot_log;            /**< enum study_plot_log */
	int train_tokens_line, train_tokens_column; /**< where it was given; 0: the command line */
	int flash_attention;     /**< 0 or 1 as given; -1: each cell's GPU decides */
	/** The most cells the sweep may have (max_cells, --max-cells); 0: the mode's default. */
	long max_cells;
	int max_cells_line, max_cells_column; /**< where it was given; 0: the command line */
};

/*
 * The cell cap (issue 28): a study must not ask for unbounded work. A
 * predict cell takes about 0.4 ms and 5 KB (struct sweep_cell with its
 * cluster copy, and struct sweep_result), so the predict default of 1e5
 * cells is under a minute on one core and 500 MB; an optimize cell is a
 * plan search of 0.1 s to 5 s (gpt-1t on Selene's 4480 GPUs), so its
 * default of 1e3 cells is minutes on a few cores, at worst an hour on one.
 * max_cells raises either, up to STUDY_MAX_CELLS_LIMIT (50 GB of cells).
 */
#define STUDY_DEFAULT_MAX_CELLS 100000L
#define STUDY_DEFAULT_MAX_CELLS_OPTIMIZE 1000L
#define STUDY_MAX_CELLS_LIMIT 10000000L

/** The most tokens train_tokens may say (a thousand times 2025's largest runs). */
#define STUDY_MAX_TRAIN_TOKENS 1e16

/** A study with nothing set (mode predict, metric iteration time); @s holds no values. */
void study_init(struct study *s);

/** Free the values of every axis; @s is then as study_init left it. */
void study_release(struct study *s);

/**
 * Append a copy of @text to @a. False when @a is full, @text is not
 * shorter than STUDY_VALUE_LEN, or memory ran out.
 */
bool study_axis_add(struct study_axis *a, const char *text);

/** Free the values of @a; it then has none. */
void study_axis_clear(struct study_axis *a);

/** Load a study file; errors name FILE:LINE:COL. */
bool study_load_file(struct study *s, const char *path, struct plan_error *err);

/** Load a study from memory (@name for messages). */
bool study_load_string(struct study *s, const char *name, const char *text, struct plan_error *err);

/**
 * Check the axes (zipped axes of equal length, at least one value each,
 * model and cluster given) and count the cells. Returns false with @err.
 */
bool study_check(const struct study *s, long *cells, struct plan_error *err);

/**
 * The value index of every axis for cell @cell (0 .. cells-1), in file
 * order; zipped axes share one index that varies as one axis placed at
 * the first zipped axis.
 */
void study_cell_indices(const struct study *s, long cell, int *index);

/** Axis index of @kind, or -1. */
int study_find_axis(const struct study *s, int kind);

/**
 * The value of axis @kind in the cell of axis indices @index (from
 * study_cell_indices()): the axis's value, else the plan: block's, else
 * NULL. @line and @column (either may be NULL) get where the value was
 * written, 0 when it was not in the file.
 */
const char *study_cell_value(const struct study *s, const int *index, int kind, int *line, int *column);
