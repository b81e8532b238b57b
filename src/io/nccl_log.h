/*
 * nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
 * alltoall_perf, sendrecv_perf): the header's ranks and hosts and the table
 * of sizes, times and bandwidths, in place and out of place.
 */
#pragma once

#include <stdbool.h>

#include "plan/error.h"
#include "plan/fit_link.h"

/** One row of the table; [0] out of place, [1] in place. SI units. */
struct nccl_row {
	double bytes;          /**< the size column */
	double time_s[2];      /**< the time columns (printed in us) */
	double algbw_Bps[2];   /**< the algbw columns (printed in GB/s = 1e9 bytes/s) */
	double busbw_Bps[2];   /**< the busbw columns */
	int line;
};

/** A parsed log; release with nccl_log_release(). */
struct nccl_log {
	int coll;              /**< enum fit_coll */
	int ranks;             /**< '#  Rank N ...' lines */
	int nodes;             /**< distinct hosts among them */
	char gpu[64];          /**< the device name of rank 0 */
	double avg_busbw_Bps;  /**< '# Avg bus bandwidth'; 0 when absent */
	struct nccl_row *rows;
	int n;
};

/**
 * Parse @text (named @name in errors). The collective comes from the
 * '# Collective test starting: NAME_perf' line, else from @name (a file
 * named all_gather_perf-8gpu.log, say). MPI prefixes ('[1,0]<stdout>:')
 * and NCCL INFO lines are skipped; a malformed table row is a
 * PLAN_ERR_INPUT error at its line. Rows of size 0 are left out.
 */
bool nccl_log_parse(const char *name, const char *text, struct nccl_log *log, struct plan_error *err);

/** nccl_log_parse() of the file @path. */
bool nccl_log_load(const char *path, struct nccl_log *log, struct plan_error *err);

/** Free the rows. Safe on a zeroed or failed log. */
void nccl_log_release(struct nccl_log *log);

/**
 * The out-of-place rows of @log as fit points on its ranks over @nodes
 * nodes (0: the log's hosts), appended to the growing array @pts (@n of
 * @cap used; the caller frees it).
 */
bool nccl_log_points(const struct nccl_log *log, int nodes, struct fit_link_point **pts, int *n, int *cap,
		     struct plan_error *err);
