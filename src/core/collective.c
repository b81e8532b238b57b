#include <math.h>
#include <stddef.h>

#include "plan/collective.h"

const char *const coll_algo_names[] = { "ring", "hierarchical", NULL };

static double
intra_bw(const struct cluster *c)
{
	return c->intra.bandwidth_Bps * c->intra.efficiency;
}

static double
nic_bw(const struct cluster *c)
{
	return cluster_nic_share_Bps(c) * c->inter.efficiency;
}

/*
 * Network bandwidth for messages of @msg bytes: BW * m / (m + m_half),
 * the usual fit of ping-pong and nccl-tests curves (Hockney's n_1/2); it
 * is what makes many small all-to-all messages slow (SMILE, He et al. 2022).
 */
static double
nic_bw_msg(const struct cluster *c, double msg)
{
	double half = c->inter.half_size_bytes;

	if (half <= 0 || msg <= 0)
		return nic_bw(c);
	return nic_bw(c) * msg / (msg + half);
}

/*
 * All-to-all reaches less of a link than the ring collectives: NCCL has no
 * all-to-all kernel; nccl-tests (src/alltoall.cu) and PyTorch's
 * all_to_all_single post one ncclSend/ncclRecv pair per peer in a group,
 * n - 1 concurrent transfers sharing the rank's channels, where a ring
 * streams to one neighbour. Measured with NCCL on a DGX B200, 8 GPUs over
 * NVLink5: all-to-all 0.5968 of 900 GB/s, all-gather 0.6735,
 * reduce-scatter 0.6731 (SimuMax @4dcaae5, configs/system/
 * b200_bf16_ceperm.json, "networks"). A link without its own all-to-all
 * efficiency uses its efficiency.
 */
static double
a2a_intra_bw(const struct cluster *c)
{
	double e = c->intra.all_to_all_efficiency;

	return e > 0 ? c->intra.bandwidth_Bps * e : intra_bw(c);
}

static double
a2a_nic_bw_msg(const struct cluster *c, double msg)
{
	double e = c->inter.all_to_all_efficiency;

	return e > 0 ? nic_bw_msg(c, msg) * e / c->inter.efficiency : nic_bw_msg(c, msg);
}

/*
 * Steps and the fraction of the data each rank sends. The steps are NCCL's
 * ring step counts, 2(n-1) for an all-reduce and n-1 for an all-gather or
 * a reduce-scatter (nsteps in ncclTopoTuneModel(), src/graph/tuning.cc,
 * the same from v2.7.3-1 to v2.29.7-1); the fractions are nccl-tests'
 * bus-bandwidth factors, 2(n-1)/n and (n-1)/n (doc/PERFORMANCE.md, the
 * same from nccl-tests v1.0.0 to v2.19.6; Thakur et al. 2005), and
 * (n-1)/n for all-to-all (written there from v2.13.10).
 */
static void
ring_shape(enum coll_kind kind, int n, double *steps, double *factor)
{
	switch (kind) {
	case COLL_ALLREDUCE:
		*steps = 2.0 * (n - 1);
		*factor = 2.0 * (n - 1) / n;
		break;
	default:
		*steps = n - 1;
		*factor = (double)(n - 1) / n;
		break;
	}
}

/* NCCL's tuning model triples the network post cost for Simple, the
 * protocol of large messages (netOverhead *= 3 in tuning.cc; our reading:
 * a step posts the data, its flag and an acknowledgement). */
#define SIMPLE_NET_POSTS 3.0

/* NCCL 2.7-2.17 apply the plateau factor from nRanks/16 * 64 KiB, i.e.
 * 4 KiB a rank (2.18 on: 64 bytes a rank and channel, the same at 64
 * channels and a little earlier with fewer). */
#define PLATEAU_MIN_BYTES_PER_RANK 4096.0

double
collective_ring_plateau(const struct cluster *c, enum coll_kind kind, int n, int nodes, double bytes)
{
	if (kind != COLL_ALLREDUCE || nodes <= 1 || !(c->inter.ring_plateau > 1.0) ||
	    bytes < n * PLATEAU_MIN_BYTES_PER_RANK)
		return 1.0;
	return c->inter.ring_plateau;
}

double
collective_ring_intra_step_s(const struct cluster *c, int nodes)
{
	if (nodes <= 1)
		return c->intra.latency_s;
	return fmax(c->intra.latency_s, SIMPLE_NET_POSTS * c->inter.net_overhead_s);
}

/*
 * Flat ring over ranks spanning k nodes. Latency follows NCCL's tuning
 * model (ncclTopoTuneModel(), src/graph/tuning.cc; nInterSteps of v2.7.3-1
 * to v2.11 and from v2.23): of the ring's steps, those that cross
 * nodes (2(k-1) for all-reduce, k-1 otherwise) pay the inter-node alpha,
 * the others the intra-node one, floored at the network proxy's pace
 * (collective_ring_intra_step_s()); an all-reduce's latency is then
 * multiplied by NCCL's plateau factor (collective_ring_plateau()).
 * Bandwidth: with one channel per NIC, every link of the ring carries
 * factor * M, and the bytes leaving a node go through the per_node GPUs'
 * share of its NICs; the slower of the two bounds the collective.
 */
static double
ring_time(const struct cluster *c, const struct group_layout *g,
	  enum coll_kind kind, double bytes)
{
	double steps, factor, inter_steps, t_lat, t_bw;
	int n = g->size, k = g->nodes;

	ring_shape(kind, n, &steps, &factor);
	if (k <= 1)
		return steps * c->intra.latency_s +
		       factor * bytes / (kind == COLL_ALLTOALL ? a2a_intra_bw(c) : intra_bw(c));
	inter_steps = (kind == COLL_ALLREDUCE ? 2.0 : 1.0) * (k - 1);
	t_lat = (steps - inter_steps) * collective_ring_intra_step_s(c, k) + inter_steps * c->inter.latency_s;
	t_lat *= collective_ring_plateau(c, kind, n, k, bytes);
	if (kind == COLL_ALLTOALL) {
		/* Each rank sends M/n to every other; (n - per_node)/n leaves the node. */
		double off = bytes * (n - g->per_node) / n;
		double on = bytes * (g->per_node - 1) / n;

		t_lat = (n - g->per_node) * c->inter.latency_s + (g->per_node - 1) * c->intra.latency_s;
		return t_lat + fmax(off / a2a_nic_bw_msg(c, bytes / n), on / a2a_intra_bw(c));
	}
	/* Each ring step moves one chunk of M/n per rank. */
	t_bw = fmax(factor * bytes / intra_bw(c),
		    factor * bytes / (g->per_node * nic_bw_msg(c, bytes / n)));
	return t_lat + t_bw;
}

/*
 * Hierarchical all-reduce (the 2D algorithm in the formulas of Thakur et
 * al. and of MiCS/BytePS): reduce-scatter inside the node, per_node
 * concurrent inter-node all-reduces of M/per_node over the k nodes, each
 * on one GPU's NIC share, then an all-gather inside the node.
 */
static double
hierarchical_time(const struct cluster *c, const struct group_layout *g,
		  enum coll_kind kind, double bytes)
{
	struct group_layout intra = { g->per_node, g->per_node, 1 };
	struct group_layout inter = { g->nodes, 1, g->nodes };
	double t = 0.0;

	if (g->nodes <= 1 || g->per_node <= 1 || kind == COLL_ALLTOALL)
		return ring_time(c, g, kind, bytes);
	if (kind == COLL_ALLREDUCE || kind == COLL_REDUCESCATTER)
		t += ring_time(c, &intra, COLL_REDUCESCATTER, bytes);
	t += ring_time(c, &inter, kind, bytes / g->per_node);
	if (kind == COLL_ALLREDUCE || kind == COLL_ALLGATHER)
		t += ring_time(c, &intra, COLL_ALLGATHER, bytes);
	return t;
}

/*
 * A collective's fixed cost besides its steps: NCCL's base latency per
 * call (baseLat in src/graph/tuning.cc) and the kernel launch, paid once
 * whatever the algorithm; the intercept of SimuMax's fits of NCCL
 * measurements, t = a + (n-1) alpha + bytes / bandwidth. NCCL's plateau
 * factor multiplies the whole latency of a ring all-reduce, base
 * latency included (ncclTopoGetAlgoTime(): lat = latencies[coll][algo]
 * [proto], baseLat plus the steps, then lat *= 1.9).
 */
double
collective_time(const struct cluster *c, const struct group_layout *g,
		enum coll_kind kind, enum coll_algo algo, double bytes)
{
	if (g->size <= 1 || bytes <= 0)
		return 0.0;
	if (algo == COLL_ALGO_HIERARCHICAL)
		return c->intra.collective_latency_s + hierarchical_time(c, g, kind, bytes);
	return c->intra.collective_latency_s * collective_ring_plateau(c, kind, g->size, g->nodes, bytes) +
	       ring_time(c, g, kind, bytes);
}

/*
 * NCCL's broadcast is a ring used as a chain from the root (NCCL's
 * src/device/broadcast.h): pipelined chunks pass every rank once, so
 * every link, and every node's NICs, carry the whole message (nccl-tests
 * doc/PERFORMANCE.md: bus bandwidth = algorithm bandwidth for
 * Broadcast), and the chain's fill costs one step per rank: NCCL's
 * tuning model gives broadcast nsteps = nRanks, nNodes of them across
 * nodes (src/graph/tuning.cc; /work/shared/research/formulas.md Sec. 5).
 * The per-step latencies are the ring's (collective_ring_intra_step_s()).
 */
double
collective_broadcast_time(const struct cluster *c, const struct group_layout *g, double bytes)
{
	int n = g->size, k = g->nodes;
	double t_lat, t_bw;

	if (n <= 1 || bytes <= 0)
		return 0.0;
	if (k <= 1)
		return c->intra.collective_latency_s + n * c->intra.latency_s + bytes / intra_bw(c);
	t_lat = (double)(n - k) * collective_ring_intra_step_s(c, k) + k * c->inter.latency_s;
	t_bw = fmax(bytes / intra_bw(c), bytes / (g->per_node * nic_bw_msg(c, bytes)));
	return c->intra.collective_latency_s + t_lat + t_bw;
}

/*
 * NCCL's low-latency (LL) protocol, which its tuning model picks for an
 * all-reduce of a few bytes (ncclTopoTuneModel() and ncclTopoGetAlgoTime(),
 * src/graph/tuning.cc). Its tables, in us: hwLat NVLink Ring/LL and
 * Tree/LL 0.6 (0.47 and 0.52 to v2.17), NET Ring/LL 2.7 and Tree/LL 5.0
 * (every release v2.7.3-1 .. v2.30.7-1), baseLat Ring/LL 6.6 and Tree/LL
 * 6.8 (3.6 and 4.4 to v2.17); the same from v2.18.1-1 to v2.30.7-1. The
 * cluster's keys hold the Simple protocol's figures of the same tables,
 * hwLat NVLink Ring/Simple 3.4 (every release), NET Ring/Simple 9.6
 * (v2.7.3-1 .. v2.17 but 2.12-2.13) and baseLat Ring/Simple 8.4 (every
 * release): the LL figures are theirs times LL/Simple, so that a cluster
 * at NCCL's values gets NCCL's LL values and a slower link (a user's
 * override, a fit) slower LL steps in proportion. The PCIe row gives the
 * same ratio (1.0 / 5.7 against 0.6 / 3.4).
 */
#define NCCL_NVL_RING_SIMPLE_S 3.4e-6
#define NCCL_NVL_LL_S 0.6e-6
#define NCCL_NET_RING_SIMPLE_S 9.6e-6
#define NCCL_NET_RING_LL_S 2.7e-6
#define NCCL_NET_TREE_LL_S 5.0e-6
#define NCCL_BASE_RING_SIMPLE_S 8.4e-6
#define NCCL_BASE_RING_LL_S 6.6e-6
#define NCCL_BASE_TREE_LL_S 6.8e-6
/* LL sends a 4-byte flag with every 4 bytes of data: busBw * .5 for the
 * ring (tuning.cc v2.21.5-1 .. v2.30.7-1; 1/4 for an all-reduce before);
 * the tree's LL busBw is 1/3.8 of its Simple one (every release). */
#define NCCL_RING_LL_BW 0.5
#define NCCL_TREE_LL_BW (1.0 / 3.8)

/* floor(log2(k)), NCCL's log2i() (src/include/utils.h). */
static int
log2_floor(int k)
{
	int levels = 0;

	for (; k > 1; k >>= 1)
		levels++;
	return levels;
}

/*
 * Ring/LL all-reduce latency (tuning.cc v2.23.4-1 .. v2.30.7-1): baseLat +
 * (nsteps - nInterSteps) intraLat + nInterSteps interLat, nsteps 2(n-1),
 * nInterSteps 2(k-1); across nodes each intra-node step is floored at the
 * proxy's net overhead (not tripled, as for Simple), and with one rank a
 * node ("latencies are fully exposed") interLat is the tree's NET/LL.
 */
static double
ring_ll_time(const struct cluster *c, const struct group_layout *g, double bytes)
{
	int n = g->size, k = g->nodes;
	double intra = c->intra.latency_s * (NCCL_NVL_LL_S / NCCL_NVL_RING_SIMPLE_S);
	double inter = c->inter.latency_s *
		       ((g->per_node == 1 ? NCCL_NET_TREE_LL_S : NCCL_NET_RING_LL_S) / NCCL_NET_RING_SIMPLE_S);
	double inter_steps = k > 1 ? 2.0 * (k - 1) : 0.0;

	if (k > 1)
		intra = fmax(intra, c->inter.net_overhead_s);
	return c->intra.collective_latency_s * (NCCL_BASE_RING_LL_S / NCCL_BASE_RING_SIMPLE_S) +
	       (2.0 * (n - 1) - inter_steps) * intra + inter_steps * inter +
	       2.0 * (n - 1) / n * bytes / (NCCL_RING_LL_BW * intra_bw(c));
}

/*
 * Tree/LL all-reduce latency (tuning.cc v2.18.1-1 .. v2.30.7-1): baseLat +
 * 2 ((ranks a node - 1) intraLat + log2i(nodes) interLat); the tree's
 * algorithm bandwidth is half its bus bandwidth.
 */
static double
tree_ll_time(const struct cluster *c, const struct group_layout *g, double bytes)
{
	double intra = c->intra.latency_s * (NCCL_NVL_LL_S / NCCL_NVL_RING_SIMPLE_S);
	double inter = c->inter.latency_s * (NCCL_NET_TREE_LL_S / NCCL_NET_RING_SIMPLE_S);

	return c->intra.collective_latency_s * (NCCL_BASE_TREE_LL_S / NCCL_BASE_RING_SIMPLE_S) +
	       2.0 * ((g->per_node - 1) * intra + log2_floor(g->nodes) * inter) +
	       2.0 * bytes / (NCCL_TREE_LL_BW * intra_bw(c));
}

double
collective_small_allreduce_time(const struct cluster *c, const struct group_layout *g, double bytes)
{
	if (g->size <= 1 || bytes <= 0)
		return 0.0;
	return fmin(ring_ll_time(c, g, bytes), tree_ll_time(c, g, bytes));
}

double
collective_two_hop_allgather(const struct cluster *c, const struct group_layout *g, double bytes)
{
	struct group_layout inside = { g->per_node, g->per_node, 1 };
	struct group_layout across = { g->nodes, 1, g->nodes };
	if (g->size <= 1 || bytes <= 0)
		return 0.0;
	if (g->nodes <= 1 || g->per_node <= 1)
		return c->intra.collective_latency_s + ring_time(c, g, COLL_ALLGATHER, bytes);
	return 2.0 * c->intra.collective_latency_s + ring_time(c, &across, COLL_ALLGATHER, bytes / g->per_node) +
	       ring_time(c, &inside, COLL_ALLGATHER, bytes);
}

double
collective_p2p_shared_time(const struct cluster *c, double bytes, int senders)
{
	/* The node's NICs shared by the @senders GPUs sending at once,
	 * rather than by all of its GPUs. */
	double share = (double)c->gpus_per_node / (senders > 0 ? senders : c->gpus_per_node);

	if (bytes <= 0)
		return 0.0;
	return c->inter.latency_s + bytes / (nic_bw_msg(c, bytes) * share);
}

double
collective_p2p_time(const struct cluster *c, bool inter_node, double bytes)
{
	if (bytes <= 0)
		return 0.0;
	if (inter_node)
		return c->inter.latency_s + bytes / nic_bw_msg(c, bytes);
	return c->intra.latency_s + bytes / intra_bw(c);
}
