/*
 * Multimodal models (CLIP-like): several transformer submodules (an image
 * and a text encoder, say) joined by a contrastive loss, and DistMM's
 * per-submodule plans (Huang et al., "DistMM: Accelerating Distributed
 * Multimodal Model Training", NSDI 2024): each submodule on its own GPU
 * group with its own parallelism, the iteration waiting for the slowest,
 * plus the batch-sync of the embeddings that the contrastive loss needs.
 */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/error.h"
#include "plan/estimate.h"
#include "plan/model.h"
#include "plan/plan.h"

/** Most submodules a multimodal profile may list. */
#define MULTIMODAL_MAX_SUBMODULES 4

/** One submodule: a transformer and the tokens (patches) of one sample. */
struct multimodal_submodule {
	char name[32];
	struct model model;
	int tokens;          /**< tokens (image patches incl. CLS) per sample; model.seq_len */
};

/** A multimodal model profile (kind: multimodal). */
struct multimodal {
	char name[64];
	char description[256];
	int nsub;
	struct multimodal_submodule sub[MULTIMODAL_MAX_SUBMODULES];
	int embedding;       /**< the contrastive head's embedding size D */
};

/**
 * Parameters of the whole model: every submodule's (model_params_total)
 * and each submodule's projection into the shared embedding (hidden x D,
 * no bias, as CLIP's visual.proj and text_projection).
 */
double multimodal_params_total(const struct multimodal *mm);

/** The index of submodule @name, or -1. */
int multimodal_find(const struct multimodal *mm, const char *name);

/**
 * DistMM's batch-sync for the contrastive loss over @gpus GPUs of @c:
 * every submodule's embeddings of the whole batch (global_batch x D in
 * 2-byte bf16 each) all-gathered in the forward pass, their gradient
 * reduce-scattered in the backward, both as flat rings over the @gpus
 * ranks (collective_time). *@bytes: the gathered bytes of all submodules;
 * returns the seconds.
 */
double multimodal_batch_sync_time(const struct cluster *c, int gpus, int nsub, int global_batch,
				  int embedding, double *bytes);

/** The prediction of a multimodal plan. */
struct multimodal_estimate {
	bool monolithic;     /**< every submodule on all GPUs, one after the other */
	int nsub;
	struct estimate sub[MULTIMODAL_MAX_SUBMODULES]; /**< each submodule on its group */
	int gpus[MULTIMODAL_MAX_SUBMODULES];             /**< GPUs of each group */
	int total_gpus;      /**< all the groups (monolithic: the one group) */
	int slowest;         /**< the submodule that sets the pace (per-submodule plans) */
	double batch_sync_bytes;
	double batch_sync_s;
	double compute_s;    /**< max (per-submodule) or sum (monolithic) of the submodules' times */
	double iteration_time_s;
	double samples_per_s;
	double memory_bytes; /**< per GPU: the largest group's (monolithic: the submodules' states together) */
	double memory_capacity_bytes;
	bool fits;
};

/**
 * Predict multimodal model @mm on @c. @plans holds one complete plan per
 * submodule (tp, pp, dp, micro-batch, the same global batch; seq_len is
 * set here to each submodule's tokens). Per-submodule (!@monolithic):
 * the groups are disjoint, their GPUs add up, and the iteration is the
 * slowest submodule's time plus the batch-sync over all of them.
 * @monolithic: every plan spans the same GPUs (Megatron-LM's way, the
 * baseline DistMM compares with), the submodules run one after another,
 * and each GPU holds every submodule's states and activations. Returns
 * false with @err for a plan that cannot run.
 */
bool multimodal_estimate(const struct multimodal *mm, const struct cluster *c, const struct plan *plans,
			 bool monolithic, const struct estimate_options *opt,
			 struct multimodal_estimate *out, struct plan_error *err);
