/*
 * The command-line options of every command, as data (tmux's cmd_entry
 * and options-table.c, git's parse-options): one row per option gives
 * its name, value, range, where it lands in the command's request, its
 * help and how optimize writes it back into predict_args. Each command's
 * rows are beside its code (cmd_NAME.c's cli_NAME_options; sweep's in
 * sweep_options.c); main.c's table of commands lists them. The parser
 * (exact names only), --help, predict_args and the hidden --list-options
 * (which a test compares with plan-cli(1)'s OPTIONS) are all made from
 * the rows (options.c); the rows several commands share are here, their
 * functions in option_helpers.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "cli/cli.h"
#include "plan/checkpoint.h"
#include "plan/estimate.h"
#include "plan/plan.h"
#include "plan/plan_attr.h"
#include "plan/search.h"
#include "io/study.h"

/** How an option's value is read (and written back). */
enum cli_opt_kind {
	CLI_OPT_HELP,    /**< -h, --help: print the usage and exit */
	CLI_OPT_FLAG,    /**< no value: sets a bool to true */
	CLI_OPT_UNFLAG,  /**< no value: sets a bool to false */
	CLI_OPT_SET,     /**< no value: sets an int to @min (one of a pair: --x and --no-x) */
	CLI_OPT_INT,     /**< a whole number in [min, max], into an int */
	CLI_OPT_CHOICE,  /**< one of @choices, its index into an int */
	CLI_OPT_STRING,  /**< the argument itself, into a const char * */
	CLI_OPT_CUSTOM,  /**< read by @parse */
	CLI_OPT_AXIS,    /**< sweep: a comma-separated list of values of study axis @axis */
	/** Not an option: every plan attribute of plan_attrs (plan/plan_attr.h)
	 *  here, each a CLI_OPT_CUSTOM row read by @parse, written by @write,
	 *  with @attr set; an attribute whose option name the command's own
	 *  rows give is left out (the command's row wins). @label and @help,
	 *  when given, are one --help line for them all; else each generated
	 *  row has its attribute's help. @max: plan_attr flags whose
	 *  attributes are left out. @axis 1: the rows are sweep axes
	 *  (CLI_OPT_AXIS, axis AXIS_OF(id)), one per attribute. */
	CLI_OPT_ATTRS,
};

struct cli_option;

/** Where written-back arguments go: words appended to @args. */
struct cli_words {
	json_t *args;
	bool failed;     /**< out of memory */
};

/** Reads @arg into the request @req; prints the usage error and returns false. */
typedef bool cli_parse_fn(const struct cli_option *o, const char *arg, void *req);

/** Appends the arguments that give @req's value of @o (none when it is the default). */
typedef void cli_write_fn(const struct cli_option *o, const void *req, struct cli_words *out);

struct cli_option {
	const char *name;          /**< long name, without the dashes */
	char short_name;           /**< a one-letter alias ("-o"; give --help's .label too); 0: none */
	const char *metavar;       /**< the value's name in --help; NULL: takes no value */
	enum cli_opt_kind kind;
	long min, max;             /**< CLI_OPT_INT */
	const char *const *choices;/**< CLI_OPT_CHOICE (and custom kinds that want them) */
	size_t offset;             /**< of the target in the command's request struct */
	cli_parse_fn *parse;       /**< CLI_OPT_CUSTOM */
	const char *help;          /**< --help text ('\n' continues it); NULL: not a line of its own */
	const char *label;         /**< --help's left column when not "--name METAVAR" */
	int axis;                  /**< CLI_OPT_AXIS: enum study_axis_kind */
	int attr;                  /**< rows made from CLI_OPT_ATTRS: enum plan_attr_id + 1; 0: none */
	int arg_before;            /**< predict rows that are not plan attributes: written into
				        predict_args just before attribute arg_before - 1
				        (PLAN_ATTR_COUNT + 1: after them all); 0: never written */
	long write_above;          /**< INT and CHOICE: written when the value is above this */
	cli_write_fn *write;       /**< written back by this instead of by kind */
};

/** A command's options and the text of its --help. */
struct cli_command_options {
	const char *command;             /**< "predict" */
	const char *synopsis;            /**< --help text before the options */
	const struct cli_option *options;/**< ended by a row with a NULL name and kind 0
					      (CLI_OPT_ATTRS rows have no name either) */
	int width;                       /**< of --help's option column */
	bool hint;                       /**< an unknown option points to 'plan-cli CMD --help' */
};

/** --framework-set KEY=VALUE (cli/framework_set.c): checks a pair and keeps it. */
cli_parse_fn cli_parse_framework_set;

/** Writes each --framework-set pair kept, in order. */
cli_write_fn cli_write_framework_set;

/* ---------------------------------------------- rows several commands share */

/** --framework-set, on every command that loads a framework profile. */
#define CLI_FRAMEWORK_SET_ROW(before) \
	{ .name = "framework-set", .metavar = "KEY=VALUE", .kind = CLI_OPT_CUSTOM, \
	  .parse = cli_parse_framework_set, .write = cli_write_framework_set, .arg_before = (before), \
	  .help = "set a framework profile key over every framework loaded\n(repeatable; VALUE as in the YAML)" }


/** The largest count most whole-number options take. */
#define CLI_BIGINT 100000000L

/** -h, --help. */
#define CLI_HELP_ROW { .name = "help", .kind = CLI_OPT_HELP, .label = "-h, --help", .help = "show this help" }

/** A bandwidth ("25 Gbit/s") into the double at o->offset, at least UNITS_MIN_BANDWIDTH_BPS. */
bool cli_parse_bandwidth(const struct cli_option *o, const char *arg, void *req);
bool cli_parse_power(const struct cli_option *o, const char *arg, void *req);

/** A real number at o->offset written back (a bandwidth in B/s, a rate); nothing when not above 0. */
void cli_write_real(const struct cli_option *o, const void *req, struct cli_words *out);

/** A positive real number (a rate, hours), 1e-6 to 1e12, into the double at o->offset. */
bool cli_parse_positive(const struct cli_option *o, const char *arg, void *req);

/** --format text|json (a command that writes no CSV), into the int at o->offset. */
bool cli_parse_text_json(const struct cli_option *o, const char *arg, void *req);

/** --format text|json into the int at offset @off. */
#define CLI_TEXT_JSON_ROW(off) \
	{ .name = "format", .metavar = "FMT", .kind = CLI_OPT_CUSTOM, .choices = cli_format_names, \
	  .offset = off, .parse = cli_parse_text_json, .help = "text|json (default text)" }

/** Checkpoints and failures (Gemini, SOSP 2023): predict's, and optimize's
 *  for --objective goodput (FIELD(ckpt) a struct checkpoint_options). */
#define CLI_CHECKPOINT_ROWS(FIELD) \
	{ .name = "checkpoint-to", .metavar = "T", .kind = CLI_OPT_CHOICE, .choices = checkpoint_target_names, \
	  .offset = FIELD(ckpt.target), .arg_before = PLAN_ATTR_FP8_GATHER + 1, \
	  .help = "none|cpu|storage: where checkpoints go (default none; cpu:\n" \
		  "Gemini's CPU memory of the machine and its peers)" }, \
	{ .name = "checkpoint-every", .metavar = "N", .kind = CLI_OPT_INT, .min = 1, .max = CLI_BIGINT, \
	  .offset = FIELD(ckpt.every), .arg_before = PLAN_ATTR_FP8_GATHER + 1, \
	  .help = "iterations between checkpoints (default: 1 for cpu, the\n" \
		  "Young-Daly interval for storage)" }, \
	{ .name = "checkpoint-replicas", .metavar = "M", .kind = CLI_OPT_INT, .min = 1, .max = 1 << 20, \
	  .offset = FIELD(ckpt.replicas), .arg_before = PLAN_ATTR_FP8_GATHER + 1, \
	  .help = "cpu: copies in CPU memory, the local one and M-1 peers' (default 2)" }, \
	{ .name = "storage-bandwidth", .metavar = "BW", .kind = CLI_OPT_CUSTOM, .parse = cli_parse_bandwidth, \
	  .offset = FIELD(ckpt.storage_bandwidth_Bps), .arg_before = PLAN_ATTR_FP8_GATHER + 1, \
	  .write = cli_write_real, \
	  .help = "remote storage for the whole job (default: the cluster's\n" \
		  "storage_bandwidth, 20 Gbit/s)" }, \
	{ .name = "failures-per-day", .metavar = "F", .kind = CLI_OPT_CUSTOM, .parse = cli_parse_positive, \
	  .offset = FIELD(ckpt.failures_per_day), .arg_before = PLAN_ATTR_FP8_GATHER + 1, .write = cli_write_real, \
	  .help = "failures of the whole job per day (default: from --gpu-mtbf-hours)" }, \
	{ .name = "gpu-mtbf-hours", .metavar = "H", .kind = CLI_OPT_CUSTOM, .parse = cli_parse_positive, \
	  .offset = FIELD(ckpt.gpu_mtbf_hours), .arg_before = PLAN_ATTR_FP8_GATHER + 1, .write = cli_write_real, \
	  .help = "mean hours between failures of one GPU (default 50000, Llama 3's)" }

/** predict's and optimize's what-if links and GPU (struct cli_links at FIELD(links)). */
#define CLI_LINK_ROWS(FIELD) \
	{ .name = "nic-bandwidth", .metavar = "BW", .kind = CLI_OPT_CUSTOM, .parse = cli_parse_bandwidth, \
	  .offset = FIELD(links.nic_bandwidth_Bps), .arg_before = PLAN_ATTR_FP8_GATHER + 1, .write = cli_write_real, \
	  .help = "override the cluster's per-NIC bandwidth (\"25 Gbit/s\")" }, \
	{ .name = "intra-bandwidth", .metavar = "BW", .kind = CLI_OPT_CUSTOM, .parse = cli_parse_bandwidth, \
	  .offset = FIELD(links.intra_bandwidth_Bps), .arg_before = PLAN_ATTR_FP8_GATHER + 1, \
	  .write = cli_write_real, .help = "override the cluster's per-GPU intra-node bandwidth" }, \
	{ .name = "gpu", .metavar = "NAME|FILE", .kind = CLI_OPT_STRING, .offset = FIELD(links.gpu), \
	  .arg_before = PLAN_ATTR_FP8_GATHER + 1, \
	  .help = "a GPU profile in place of the cluster's GPU (its links stay)" }, \
	{ .name = "power-limit", .metavar = "W", .kind = CLI_OPT_CUSTOM, .parse = cli_parse_power, \
	  .offset = FIELD(links.power_limit_W), .arg_before = PLAN_ATTR_FP8_GATHER + 1, .write = cli_write_real, \
	  .help = "the GPU's board power limit (\"500 W\"): compute-bound work at\n" \
		  "(limit / rated_power)^(1/3) of the rated clock" }

/* ------------------------------------------------- the commands' requests */

/** Most --submodule options predict takes. */
#define CLI_MAX_SUBMODULE_ARGS 8

/** What predict's options fill (and what optimize writes back into predict_args). */
struct predict_request {
	struct plan plan;
	struct estimate_options opt;
	int gpus;                   /**< 0: the whole cluster */
	int format;                 /**< enum cli_format */
	const char *model, *cluster, *compressor, *framework;
	bool compress_given;
	bool allow_oom;             /**< a plan that does not fit still exits 0 */
	int flash;                  /**< 1 --flash-attention, 0 --no-flash-attention, -1: the GPU's default */
	struct cli_links links;
	struct checkpoint_options ckpt; /**< --checkpoint-to and the failure model */
	/* Variable-length data (DynaPipe): */
	const char *seq_lengths;    /**< --seq-lengths NAME|FILE; NULL: every sequence --seq-len long */
	int batching;               /**< enum seqlen_batching; -1: not given (pad) */
	int pack_attention;         /**< enum seqlen_pack_attention; -1: not given (full) */
	/* DistMM: --submodule NAME:tp=T,dp=D,... of a multimodal model, as given. */
	const char *submodule_args[CLI_MAX_SUBMODULE_ARGS];
	int nsubmodule_args;
	bool monolithic;            /**< --monolithic: the --submodule plans each on all the GPUs, in turn */
};

/** What optimize ranks plans by (--objective). */
enum cli_objective { CLI_OBJECTIVE_TIME, CLI_OBJECTIVE_GOODPUT };
extern const char *const cli_objective_names[];

/** What optimize's options fill. */
struct optimize_request {
	struct search_options so;
	int objective;              /**< enum cli_objective */
	struct checkpoint_options ckpt; /**< --objective goodput: the checkpoints it assumes */
	int format;                 /**< enum cli_format */
	const char *model, *cluster, *framework;
	const char *compressors[SEARCH_MAX_COMPRESSORS];
	int flash;                  /**< as predict_request's */
	struct cli_links links;
	bool explain;               /**< --explain: the runner-up in each dimension */
	const char *baseline;       /**< --baseline SPEC: the user's plan, priced beside the best; NULL: none */
	const char *all;            /**< --all FILE: every plan the search predicts; NULL: none */
	int all_format;             /**< enum optimize_all_format (--all-format; 0: by FILE's extension) */
};

/** What sweep's options fill. */
struct sweep_request {
	struct study study;
	int format;                 /**< enum sweep_format */
	int threads;
	const char *plot;
	bool merge;
	long shard_i, shard_n;
};

/** What validate's options fill. */
struct validate_request {
	int format;                 /**< enum cli_format */
	double max_mape, max_error; /**< percent; below 0: no threshold */
};

/** What calibrate's options fill. */
struct calibrate_request {
	int format;                 /**< enum cli_format: text or json */
	int folds;                  /**< 0: calib_default_folds */
	const char *runs, *cluster, *framework, *fit, *output, *framework_output;
};

/** What fit-logs' options fill. */
struct fit_logs_request {
	int format;                 /**< enum cli_format (text or json) */
	bool nccl;                  /**< --nccl-tests: the operands are nccl-tests logs */
	const char *gemm;           /**< --gemm CSV */
	int level;                  /**< enum fit_link_level; -1: from the logs' hosts */
	int gpus_per_node;          /**< 0: from the logs' hosts */
	const char *gpu, *cluster, *output;
};

/**
 * Fit a link to the nccl-tests logs @files (@n of them) and report it as
 * @r asks (text or JSON on stdout, --output's YAML block). Returns an exit code.
 */
int cli_fit_nccl(const char *const *files, int n, const struct fit_logs_request *r);

/** Fit the GEMM parameters of --gpu to the --gemm CSV of @r and report them. Returns an exit code. */
int cli_fit_gemm(const struct fit_logs_request *r);

/* Each command's options, beside its code; main.c's table of commands lists them. */
extern const struct cli_command_options cli_predict_options;  /**< cmd_predict.c */
extern const struct cli_command_options cli_optimize_options; /**< cmd_optimize.c */
extern const struct cli_command_options cli_sweep_options;    /**< sweep_options.c */
extern const struct cli_command_options cli_validate_options; /**< cmd_validate.c */
extern const struct cli_command_options cli_calibrate_options;/**< cmd_calibrate.c */
extern const struct cli_command_options cli_fit_logs_options; /**< cmd_fit_logs.c */
extern const struct cli_command_options cli_profiles_options; /**< cmd_profiles.c */
extern const struct cli_command_options cli_import_options;   /**< cmd_import.c */

/** A predict request with the defaults (tp 1, pp 1, ring all-reduce, text). */
void cli_predict_request_init(struct predict_request *r);

/** An optimize request with the search's defaults (search_options_init). */
void cli_optimize_request_init(struct optimize_request *r);

/**
 * Parse @argv (argv[0] is the command) with @cmd's options into @req.
 * Long options by their whole name only ("--name VALUE" or
 * "--name=VALUE"), -h and the rows' one-letter aliases ("-o VALUE");
 * options and operands in any order, "--" ends the options. An unknown
 * option is a usage error naming the options it may have meant (those
 * it begins, those within two edits). Returns -1
 * when the options are read, with the operands moved (in order) behind
 * them and optind set to the first, as GNU getopt_long leaves them; else
 * the exit code to return at once: a printed usage error, or --help
 * printed.
 */
int cli_options_parse(const struct cli_command_options *cmd, int argc, char **argv, void *req);

/** Print @cmd's --help to @out. */
void cli_options_usage(const struct cli_command_options *cmd, FILE *out);

/**
 * @cmd's rows with its CLI_OPT_ATTRS rows expanded into one row per plan
 * attribute, ended by a row with a NULL name (made once, then kept).
 */
const struct cli_option *cli_options_rows(const struct cli_command_options *cmd);

/** Print @cmd's option names, "COMMAND --NAME" a line (plan-cli --list-options). */
void cli_options_list(const struct cli_command_options *cmd, FILE *out);

/**
 * The predict arguments that give @req's plan, in predict_args order, as
 * a new JSON array of strings (NULL when out of memory).
 */
json_t *cli_predict_args(const struct predict_request *req);

/** "--NAME" of @o into @buf (the name messages give). */
const char *cli_option_flag(const struct cli_option *o, char *buf, size_t size);

/** Append "--NAME" for @o to @out. */
void cli_words_flag(const struct cli_option *o, struct cli_words *out);

/** Append "--NAME" and @value to @out. */
void cli_words_add(const struct cli_option *o, const char *value, struct cli_words *out);
