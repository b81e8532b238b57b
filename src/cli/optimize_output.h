/* What optimize prints: the best plan, the top list and the search's figures. */
#pragma once

#include <jansson.h>

#include "cli/options.h"
#include "plan/cluster.h"
#include "plan/explain.h"
#include "plan/model.h"
#include "plan/search.h"

/** A finished search, as optimize reports it. */
struct optimize_result {
	const struct optimize_request *req;     /**< the profile arguments, for predict_args */
	const struct model *model;
	const struct cluster *cluster;
	const struct search_candidate *top;     /**< best first */
	int ntop;                               /**< at least 1 */
	const struct search_stats *stats;
	const struct checkpoint_estimate *ckpt; /**< --objective goodput: one per plan of top; else NULL */
	const struct explanation *explain;      /**< --explain: the runner-ups; NULL without */
	int nexplain;
	const struct search_candidate *baseline; /**< --baseline: the user's plan; NULL without */
	/** With a compressed best plan: the fastest plan without compression
	 *  (NULL when none fits, uncompressed_searched then true). */
	const struct search_candidate *uncompressed;
	bool uncompressed_searched;
};

/** The predict arguments that reproduce @cand (its compressor as given to optimize); NULL: out of memory. */
json_t *optimize_predict_args(const struct optimize_request *r, const struct search_candidate *cand);

/** Print @res to stdout as text or JSON (enum cli_format); returns the exit code. */
int optimize_write(const struct optimize_result *res, int format);
