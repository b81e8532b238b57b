/* The command layer: exit codes, option helpers, commands. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "plan/error.h"

/** Exit status of plan-cli (documented in plan-cli(1), EXIT STATUS). */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAILURE = 1,    /**< runtime failure: I/O, out of memory, output error */
	CLI_EXIT_USAGE = 2,      /**< bad command line or impossible plan */
	CLI_EXIT_INPUT = 3,      /**< invalid input file (profile, CSV) */
	CLI_EXIT_INFEASIBLE = 4, /**< no feasible plan (optimize), or predict's plan does not fit */
	CLI_EXIT_THRESHOLD = 5,  /**< validate: error above --max-mape */
};

/** Output formats shared by the commands, indexed by enum cli_format. */
enum cli_format { CLI_FORMAT_TEXT, CLI_FORMAT_JSON, CLI_FORMAT_CSV };
extern const char *const cli_format_names[];

/** When not empty, prefixed to profile-loading errors ("runs.csv: row 3 ('id')"). */
/* Long enough for a path (PATH_MAX) and a line and column. */
#define CLI_CONTEXT_LEN 4160
extern char cli_context[CLI_CONTEXT_LEN];

/** Print "plan-cli: error: ..." to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Print a core error and return the matching exit code. */
int cli_report(const struct plan_error *err);

/** Parse an integer option value in [min, max] or print a usage error. */
bool cli_int(const char *opt, const char *val, long min, long max, int *out);

/** Parse a choice among NULL-terminated @names; index into @out. */
bool cli_choice(const char *opt, const char *val, const char *const *names, int *out);

/** Prints "cannot write the output", once a process (cli_finish() may say it too). */
void cli_output_error(void);

/** Flush stdout and check for write errors; returns the exit code to use. */
int cli_finish(int code);

/**
 * Write @text into @path atomically (io/atomic_file.h: a temporary file
 * beside the target, fsync, rename; links followed, the mode kept).
 * Prints the error; returns an exit code.
 */
int cli_write_file(const char *path, const char *text);

/** Write @n files all or none (atomic_write_files); prints the error. */
int cli_write_files(const char *const *paths, const char *const *texts, int n);

int cmd_predict(int argc, char **argv);

struct checkpoint_options;

/** The checkpoint options go together (a target for the others); prints the usage error. */
bool cli_checkpoint_check(const struct checkpoint_options *o);

struct plan;
struct plan_fill;
struct model;
struct cluster;

/**
 * Whether @text, a profile of @kind (enum profile_kind, io/profile_path.h)
 * to be written to @path, loads back through the loaders; prints why not.
 */
bool cli_profile_loads(int kind, const char *path, const char *text);

/** plan_complete() (plan/plan_attr.h), its error printed as a usage error. */
bool cli_plan_complete(struct plan *p, const struct plan_fill *fill, const struct model *m,
		       const struct cluster *c);
int cmd_validate(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_fit_logs(int argc, char **argv);

struct model;
struct cluster;
struct compressor;

/** Resolve and load a model (name or path); prints the error. Returns an exit code. */
int cli_load_model(const char *arg, struct model *m);

/** Resolve and load a cluster (name or path); prints the error. Returns an exit code. */
int cli_load_cluster(const char *arg, struct cluster *c);

/**
 * What-if hardware over a cluster profile's own: its links
 * (--nic-bandwidth, --intra-bandwidth) and its GPU (--gpu, --power-limit).
 */
struct cli_links {
	double nic_bandwidth_Bps;   /**< per NIC; 0: the cluster's */
	double intra_bandwidth_Bps; /**< per GPU inside a node; 0: the cluster's */
	const char *gpu;            /**< a GPU profile's name or path in place of the cluster's; NULL: its own */
	double power_limit_W;       /**< the GPU's board power limit; 0: the profile's */
};

/**
 * cli_load_cluster, then @links in place of the cluster's bandwidths and
 * GPU (the GPU first, then its power limit). Returns an exit code.
 */
int cli_load_cluster_links(const char *arg, const struct cli_links *links, struct cluster *c);

/** Resolve and load a compressor (name or path); prints the error. Returns an exit code. */
int cli_load_compressor(const char *arg, struct compressor *c);

struct framework;
struct gpu;

/** Resolve and load a GPU profile (name or path); prints the error. Returns an exit code. */
int cli_load_gpu(const char *arg, struct gpu *g);

/** The framework a command uses when none is given. */
#define CLI_DEFAULT_FRAMEWORK "megatron-lm"

/** Resolve and load a framework (name or path); prints the error. Returns an exit code. */
int cli_load_framework(const char *arg, struct framework *fw);

/** Apply the --framework-set pairs, in order, to @fw; prints the error. Returns an exit code. */
int cli_framework_set_apply(struct framework *fw);

struct run;
struct run_cell;

/**
 * Load the model, the framework and the compressor of @run, a row of the
 * runs CSV @file (errors name the row), and fill the plan's seq_len from
 * the model when the row left it out. *@cmp_out is @cmp when the row
 * names a compressor, else NULL. Returns an exit code.
 */
int cli_load_run(const char *file, struct run *run, struct model *m, struct framework *fw,
		 struct compressor *cmp, const struct compressor **cmp_out);

/**
 * Where @run is, for an error about the row as a whole: "FILE:LINE: row N
 * ('id')", the line its record starts on (the project's file:line form),
 * the record number and the id. Into @buf of @size bytes; returns @buf.
 */
const char *cli_run_where(const char *file, const struct run *run, const struct run_cell *at, char *buf, size_t size);
