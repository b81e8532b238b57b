/* Where each communication group of a plan sits on the nodes. */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/plan.h"

/** A group of ranks that run one collective together. */
struct group_layout {
	int size;      /**< ranks in the group */
	int per_node;  /**< of them, how many share one node */
	int nodes;     /**< nodes the group spans */
};

/** The groups of a plan under the TP-innermost, then DP, then PP order. */
struct plan_layout {
	struct group_layout tp;
	struct group_layout cp;   /**< a context-parallel group: cp ranks striding by tp */
	struct group_layout dp;   /**< the gradient reduction: dp x cp ranks striding by tp */
	struct group_layout pp;   /**< the ranks of one pipeline */
	struct group_layout etp;  /**< an expert's tensor-parallel group: etp consecutive ranks */
	struct group_layout ep;   /**< an expert-parallel group: ep ranks striding by etp */
	struct group_layout edp;  /**< the ranks that hold the same experts (tp x cp x dp / (ep x etp)) */
	struct group_layout mics; /**< a MiCS partition group (mics_group consecutive DP ranks) */
	struct group_layout replica; /**< the ranks that hold the same MiCS shard (dp / group) */
	bool pp_inter_node;       /**< some stage boundary crosses nodes */
};

/**
 * Layout of a group of @size ranks whose members are @stride ranks apart,
 * with @gpus_per_node consecutive ranks per node.
 */
void topology_group(int size, int stride, int gpus_per_node, struct group_layout *out);

/** All groups of @p on @c. */
void topology_plan(const struct plan *p, const struct cluster *c, struct plan_layout *out);
