/*
 * The plan attributes, as one table (tmux's options-table.c, git's
 * parse-options): every decision a plan makes (tp, zero, precision, the
 * DP compression scheme, the per-stage layers, ...) is a row with its
 * name, type, storage, range, default and which surfaces take it. The
 * command-line options of predict and optimize, predict_args, the runs
 * CSV's columns and --submodule's items are made from these rows, so that
 * an attribute added here reaches every surface with one edit (HACKING.md,
 * "Adding a plan attribute").
 *
 * Names: a row's name is the snake_case key of the runs CSV, of study
 * files and of --submodule items ("micro_batch"); its option is the name
 * with dashes ("--micro-batch"), and a boolean that is on by default is
 * turned off by "--no-NAME".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "plan/cluster.h"
#include "plan/error.h"
#include "plan/estimate.h"
#include "plan/model.h"
#include "plan/plan.h"

/** The attributes, in the order predict_args writes them. */
enum plan_attr_id {
	PLAN_ATTR_TP,
	PLAN_ATTR_PP,
	PLAN_ATTR_DP,
	PLAN_ATTR_VPP,
	PLAN_ATTR_MICRO_BATCH,
	PLAN_ATTR_GLOBAL_BATCH,
	PLAN_ATTR_SEQ_LEN,
	PLAN_ATTR_SEQUENCE_PARALLEL,
	PLAN_ATTR_FLASH_ATTENTION,
	PLAN_ATTR_ZERO,
	PLAN_ATTR_MICS_GROUP,
	PLAN_ATTR_EP,
	PLAN_ATTR_ETP,
	PLAN_ATTR_MOE_ROUTING,
	PLAN_ATTR_MOE_OVERLAP,
	PLAN_ATTR_STAGE_LAYERS,
	/* plan-cli pipeline: begin */
	PLAN_ATTR_PP_SPLIT,
	PLAN_ATTR_PP_FIRST_LAYERS,
	PLAN_ATTR_PP_LAST_LAYERS,
	PLAN_ATTR_PP_SCHEDULE,
	/* plan-cli pipeline: end */
	PLAN_ATTR_RECOMPUTE,
	PLAN_ATTR_STAGE_RECOMPUTE,
	PLAN_ATTR_RECOMPUTE_LAYERS,
	PLAN_ATTR_RECOMPUTE_MODULES,    /* plan-cli recomp */
	PLAN_ATTR_RECOMPUTE_METHOD,     /* plan-cli recomp */
	PLAN_ATTR_RECOMPUTE_NUM_LAYERS, /* plan-cli recomp */
	PLAN_ATTR_ACTIVATION_OFFLOAD_LAYERS,
	PLAN_ATTR_COMPRESS,
	PLAN_ATTR_COMPRESS_FROM_LAYER,
	PLAN_ATTR_COMPRESS_FROM_STAGE,
	PLAN_ATTR_DP_COMPRESS_SCHEME,
	PLAN_ATTR_DP_COMPRESS_ON,
	PLAN_ATTR_PRECISION,
	PLAN_ATTR_TP_OVERLAP,
	PLAN_ATTR_CP,
	PLAN_ATTR_CP_METHOD,
	PLAN_ATTR_DP_ALLREDUCE,
	PLAN_ATTR_FP8_GATHER,
	PLAN_ATTR_FP8_RECIPE,       /* fp8attn */
	PLAN_ATTR_BF16_FIRST_LAYERS,
	PLAN_ATTR_BF16_LAST_LAYERS,
	PLAN_ATTR_ATTENTION_KERNEL, /* fp8attn */
	PLAN_ATTR_DP_OVERLAP,
	PLAN_ATTR_MICS_HIERARCHICAL,
	PLAN_ATTR_COUNT,
};

/** How an attribute's value is written and read. */
enum plan_attr_type {
	PLAN_ATTR_INT,    /**< a whole number in [min, max] */
	PLAN_ATTR_BOOL,   /**< true or false */
	PLAN_ATTR_CHOICE, /**< one of @choices, stored as its index */
	PLAN_ATTR_LIST,   /**< a comma-separated list (one entry per stage, or the compressed parts) */
	/** plan-cli recomp: a set of @choices joined by '+' (',' too where
	 *  one value is read), stored as a bit mask (bit i: choices[i]); 0,
	 *  the empty set, is written "framework" */
	PLAN_ATTR_SET,
};

/** The C type of the member an attribute is stored in (checked with _Generic). */
enum plan_attr_ctype { PLAN_ATTR_C_INT, PLAN_ATTR_C_BOOL, PLAN_ATTR_C_NONE };

/** Where the member is: struct plan, or struct estimate_options. */
enum plan_attr_home { PLAN_ATTR_IN_PLAN, PLAN_ATTR_IN_OPTIONS };

/** Row flags. */
enum {
	/** predict_args always write it, default or not (the plan's shape, read at a glance). */
	PLAN_ATTR_ALWAYS = 1 << 0,
	/** Its default comes from the GPU profile (flash_attention): the CLI
	 *  has --NAME and --no-NAME, and an unset value is filled by plan_complete. */
	PLAN_ATTR_GPU_DEFAULT = 1 << 1,
	/** Applies only with a compressor (--compressor, the compressor column). */
	PLAN_ATTR_COMPRESSION = 1 << 2,
	/** optimize searches it (a list of values restricts the search to them). */
	PLAN_ATTR_SEARCHED = 1 << 3,
	/** optimize cannot take it as a constraint: it is the search's output per stage. */
	PLAN_ATTR_NO_CONSTRAINT = 1 << 4,
	/** A switch whose default is the framework profile's (dp_overlap): the
	 *  CLI has --NAME and --no-NAME, and the member is -1 until given. */
	PLAN_ATTR_FW_DEFAULT = 1 << 5,
};

/** A plan and the estimate options it is predicted with: everything an attribute may be stored in. */
struct plan_attr_target {
	struct plan *plan;
	struct estimate_options *opt; /**< may be NULL: PLAN_ATTR_IN_OPTIONS attributes are then read as their default */
};

struct plan_attr {
	const char *name;            /**< "micro_batch": CSV column, study key, --submodule item */
	const char *metavar;         /**< --help's name of the value */
	enum plan_attr_type type;
	enum plan_attr_home home;
	size_t offset;               /**< of the member in its home struct */
	enum plan_attr_ctype ctype;
	long min, max;               /**< PLAN_ATTR_INT, and the entries of an INT list */
	long def;                    /**< the value when not given (may lie outside [min, max]: "unset") */
	const char *const *choices;  /**< PLAN_ATTR_CHOICE, and the entries of a recompute list */
	unsigned flags;
	const char *help;            /**< --help's text ('\n' continues it) */
};

/** The rows, indexed by enum plan_attr_id, ended by a row with a NULL name. */
extern const struct plan_attr plan_attrs[PLAN_ATTR_COUNT + 1];

/** The row named @name (snake_case; dashes are taken as underscores), or NULL. */
const struct plan_attr *plan_attr_find(const char *name);

/** The row's command-line option without the dashes ("micro-batch", "no-dp-overlap") into @buf. */
const char *plan_attr_option(const struct plan_attr *a, char *buf, size_t size);

/** The value of scalar attribute @a (INT, BOOL, CHOICE) in @t. */
long plan_attr_get(const struct plan_attr *a, const struct plan_attr_target *t);

/** Set scalar attribute @a in @t to @v (in range: see plan_attr_parse). */
void plan_attr_set(const struct plan_attr *a, const struct plan_attr_target *t, long v);

/**
 * Read @text as a value of @a into @t: a whole number in range, true or
 * false (also yes/no, on/off, 1/0), a choice's name, or a list. False with
 * @why (what was expected, naming the attribute as @label, "--tp" or
 * "column 'tp'"; NULL: its name) when it is not.
 */
bool plan_attr_parse(const struct plan_attr *a, const char *label, const char *text,
		     const struct plan_attr_target *t, char *why, size_t size);

/** Scalar @a's value @v as text ("4", "true", "selective") into @buf. */
const char *plan_attr_format_value(const struct plan_attr *a, long v, char *buf, size_t size);

/**
 * @a's value in @t as text into @buf; false when the attribute is at its
 * default and need not be written (a list that is not set, a compression
 * attribute without @has_compressor, moe_routing without EP, ...). The
 * text reads back through plan_attr_parse to the same plan.
 */
bool plan_attr_format(const struct plan_attr *a, const struct plan_attr_target *t, bool has_compressor,
		      char *buf, size_t size);

/**
 * Scalar value @text of @a as a number into *@v (plan_attr_parse without
 * a plan): for optimize's lists of allowed values.
 */
bool plan_attr_parse_value(const struct plan_attr *a, const char *label, const char *text, long *v, char *why,
			   size_t size);

/** What plan_complete fills in: the values a surface leaves to the profiles. */
struct plan_fill {
	int gpus;   /**< GPUs to use; 0: the cluster's */
	int flash;  /**< 1 or 0 as given; -1: the GPU profile's default */
	int pp_split; /**< plan-cli pipeline: the framework's rule (enum plan_pp_split) where the even split fails */
};

/**
 * Complete @p as every surface does before predicting (predict, optimize's
 * write-back, sweep's cells, validate's and calibrate's rows, --submodule):
 * seq_len from the model when 0; MiCS implies ZeRO-3 (Zhang et al., VLDB
 * 2022: MiCS is ZeRO-3 within partition groups); flash attention from the
 * GPU profile unless given; dp from the GPUs left after tp x cp x pp when
 * 0, and the GPU count checked against the plan and the cluster. False
 * with @err (PLAN_ERR_PLAN) naming the numbers when it cannot be done.
 */
bool plan_complete(struct plan *p, const struct plan_fill *fill, const struct model *m, const struct cluster *c,
		   struct plan_error *err);
