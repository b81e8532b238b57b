/* predict and optimize on a multimodal model (kind: multimodal; DistMM, Huang et al. NSDI 2024). */
#pragma once

#include <stdbool.h>

#include "cli/options.h"
#include "plan/plan_attr.h"

/** Whether the model argument @arg names a multimodal profile (prints nothing). */
bool cli_model_is_multimodal(const char *arg);

/** predict on the multimodal model r->model; the options are parsed. Returns an exit code. */
int cli_predict_multimodal(struct predict_request *r);

/** optimize on the multimodal model r->model; the options are parsed. Returns an exit code. */
int cli_optimize_multimodal(struct optimize_request *r);

/**
 * Why plan attribute @id is not an item of a --submodule spec (a static
 * string, "every submodule sees the same samples (give --global-batch)"),
 * or NULL where a submodule takes its own: the global batch is shared by
 * the submodules, seq_len is each submodule's tokens from its profile,
 * the DP all-reduce algorithm is one estimate option for the whole
 * model, and the compression attributes need a compressor, which a
 * multimodal model does not take. predict_args write the refused ones
 * on their own, the others in the --submodule specs.
 */
const char *cli_submodule_refuses(enum plan_attr_id id);
