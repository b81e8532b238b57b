/* predict and optimize on a multimodal model (kind: multimodal; DistMM, Huang et al. NSDI 2024). */
#pragma once

#include <stdbool.h>

#include "cli/options.h"

/** Whether the model argument @arg names a multimodal profile (prints nothing). */
bool cli_model_is_multimodal(const char *arg);

/** predict on the multimodal model r->model; the options are parsed. Returns an exit code. */
int cli_predict_multimodal(struct predict_request *r);

/** optimize on the multimodal model r->model; the options are parsed. Returns an exit code. */
int cli_optimize_multimodal(struct optimize_request *r);
