/* Pipeline parallelism: 1F1B and interleaved schedules. */
#pragma once

#include "plan/cluster.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/topology.h"

/**
 * Bubble as a fraction of the ideal time: (p - 1) / (v * m)
 * (Narayanan et al. SC21, Sec. 2.2, Eqs. 1 and 2).
 */
double pipeline_bubble_fraction(const struct plan *p);

/**
 * Stage-boundary traffic of one micro-batch on one GPU (all its v chunks,
 * forward activation and backward gradient), in seconds on the critical
 * path. With t > 1 and a boundary across nodes, Megatron's scatter/gather
 * optimisation sends b*s*h/t per TP rank and rebuilds the tensor with an
 * NVLink all-gather (SC21, Sec. 4.1).
 */
double pipeline_p2p_time(const struct model *m, const struct plan *p,
			 const struct cluster *c, const struct plan_layout *lay,
			 double *bytes_out);

/**
 * Micro-batches' worth of layer activations stage @stage holds at its
 * peak, in units of (one layer, one micro-batch): its layers times
 * min(p - stage, m) in-flight micro-batches (stage 0: min(p, m)), times
 * 1 + (p-1)/(p v) when interleaved (Korthikanti et al. 2022, Sec. 4.2.3;
 * Narayanan et al. SC21, Sec. 2.2).
 */
double pipeline_stored_layer_microbatches(const struct model *m, const struct plan *p, int stage);

/**
 * Count the layers of pipeline stage @stage (0-based) for which
 * @pred(layer, @arg) holds. Chunk j of stage i is virtual stage j*p + i
 * (Megatron's interleaved assignment); layers are numbered from 1.
 */
int pipeline_count_layers(const struct model *m, const struct plan *p, int stage,
			  bool (*pred)(int layer, const void *arg), const void *arg);
