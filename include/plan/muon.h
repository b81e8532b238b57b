/* plan-cli muon: the Muon optimizer as Megatron-Core's dist_muon runs it
 * (docs/research/framework-data.md, "Muon"). */
#pragma once

#include "plan/cluster.h"
#include "plan/model.h"
#include "plan/plan.h"

/** Newton-Schulz iterations a step (Megatron-Core's muon_num_ns_steps default, Megatron-Bridge's recipes). */
#define MUON_NS_STEPS 5

/** FLOPs of @steps Newton-Schulz iterations on an @a x @b matrix. */
double muon_ns_flops(double a, double b, int steps);

/** Time of @steps Newton-Schulz iterations on an @a x @b matrix: three bf16 GEMMs an iteration. */
double muon_ns_time(const struct cluster *c, double a, double b, int steps);

/** The Newton-Schulz time of one GPU of pipeline stage @stage an optimizer step. */
double muon_stage_ns_time(const struct model *m, const struct plan *p, const struct cluster *c, int stage);

