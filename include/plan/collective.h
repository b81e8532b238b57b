/* Alpha-beta cost of NCCL-style collectives on a two-level network. */
#pragma once

#include "plan/cluster.h"
#include "plan/topology.h"

enum coll_kind {
	COLL_ALLREDUCE,     /**< bytes: the buffer each rank holds */
	COLL_ALLGATHER,     /**< bytes: the gathered (total) size */
	COLL_REDUCESCATTER, /**< bytes: the input (total) size */
	COLL_ALLTOALL,      /**< bytes: what each rank sends in all */
};

enum coll_algo {
	COLL_ALGO_RING,         /**< one flat ring over all ranks (multi-channel) */
	COLL_ALGO_HIERARCHICAL, /**< intra-node reduce-scatter, inter-node ring, intra all-gather */
};

/** Names of enum coll_algo, NULL-terminated. */
extern const char *const coll_algo_names[];

/**
 * Time of one collective of @kind over group @g, carrying @bytes.
 * Every GPU of a node is assumed to run a collective of the same kind at
 * the same time (as all TP/DP/PP groups do), so a group that spans nodes
 * gets per_node GPUs' share of the node's NICs.
 */
double collective_time(const struct cluster *c, const struct group_layout *g,
		       enum coll_kind kind, enum coll_algo algo, double bytes);

/**
 * Latency of one intra-node step of a ring over @nodes nodes. A ring that
 * spans nodes runs at the pace of its network proxies: NCCL's tuning
 * model (since after the 2020 version whose step latencies the bundled
 * clusters use) floors each intra-node step of such a ring at the cost of
 * posting a network operation, three times for the Simple protocol
 * ("Inter-node rings still have to launch nsteps * net overhead",
 * getNetOverhead() in NCCL's src/graph/tuning.cc: 1 us on Intel hosts,
 * 2 us on AMD). The steps that cross nodes keep the inter-node latency.
 */
double collective_ring_intra_step_s(const struct cluster *c, int nodes);

/**
 * NCCL's "plateau effect of ring" (ncclTopoGetAlgoTime() in NCCL's
 * src/graph/tuning.cc, every release from 2.7.3 to 2.30): the latency of
 * a Ring/Simple all-reduce over more than one node, base latency and
 * steps alike, is multiplied by a factor once the message reaches 4 KiB
 * a rank: 1.9 for every GPU in NCCL 2.7-2.16, 1.9 below Hopper and 1.5
 * on Hopper in 2.17, 1.9 below Ampere and 1.4 on Ampere and later from
 * 2.18 (inter_node.ring_plateau holds the cluster's). Returns the factor
 * for a collective of @kind over @n ranks on @nodes nodes carrying
 * @bytes, 1 when NCCL does not apply it: other collectives (all-gather,
 * reduce-scatter, broadcast, all-to-all), one node, small messages.
 */
double collective_ring_plateau(const struct cluster *c, enum coll_kind kind, int n, int nodes, double bytes);

/**
 * Time of one NCCL broadcast of @bytes from one rank to the others of
 * group @g: a pipelined chain through the ring, n steps of latency (k of
 * them across the group's k nodes) and the whole message over every link.
 */
double collective_broadcast_time(const struct cluster *c, const struct group_layout *g, double bytes);

/**
 * plan-cli hostsync: an all-reduce of a few bytes (a micro-batch's loss)
 * over group @g, as NCCL's tuning model prices it with its low-latency
 * (LL) protocol, the one it picks at these sizes: the cheaper of Ring/LL
 * (base + 2(n-1) steps, 2(k-1) of them across nodes) and Tree/LL (base +
 * 2 ((ranks per node - 1) intra-node + log2i(nodes) inter-node steps)),
 * src/graph/tuning.cc v2.23.4-1 .. v2.30.7-1. The LL latencies are the
 * cluster's Simple ones (latency, collective_latency) times NCCL's LL /
 * Simple ratio, so NCCL's own at the default keys. The network ratio's
 * Simple figure is 9.6 us, the key's default and NCCL's to v2.17; from
 * v2.18.1-1 NCCL's own Simple network step is 14.0 us (research Sec. 32).
 */
double collective_small_allreduce_time(const struct cluster *c, const struct group_layout *g, double bytes);

/**
 * MiCS's hierarchical parameter all-gather (Zhang et al. VLDB 2023,
 * Sec. 4.2; DeepSpeed mics.py): hop 1 gathers among the ranks that share
 * a local index across the group's nodes (each on its NIC share, 1/k of
 * the cross-node volume of a flat ring), hop 2 gathers inside the node
 * over NVLink. The hops run one after the other, each a collective with
 * its own base latency: DeepSpeed's _hierarchical_all_gather_params
 * (deepspeed/runtime/zero/mics.py) enqueues the inter-node
 * all_gather_coalesced with async_op=False, copies its output into place,
 * then issues the intra-node one. A group inside one node falls back to
 * the ring.
 */
double collective_two_hop_allgather(const struct cluster *c, const struct group_layout *g,
				    double bytes);

/**
 * A point-to-point send of @bytes across nodes while @senders GPUs of the
 * node send at once and share its NICs (all of them: cluster_nic_share_Bps).
 */
double collective_p2p_shared_time(const struct cluster *c, double bytes, int senders);

/**
 * Point-to-point send of @bytes between two GPUs, inside a node or across
 * nodes (then at one GPU's share of the node NICs).
 */
double collective_p2p_time(const struct cluster *c, bool inter_node, double bytes);
