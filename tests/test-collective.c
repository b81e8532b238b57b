#include <math.h>

#include "plan/collective.h"
#include "plan/topology.h"
#include "testutil.h"

/* TEST_CLUSTER: intra 300 GB/s x 0.75 = 225e9 B/s, alpha 3 us;
 * NIC share 25e9 x 0.85 = 21.25e9 B/s, alpha 5 us. */

START_TEST(test_layout)
{
	struct group_layout g;

	topology_group(8, 1, 8, &g);     /* TP 8: one node */
	ck_assert_int_eq(g.per_node, 8);
	ck_assert_int_eq(g.nodes, 1);
	topology_group(16, 8, 8, &g);    /* DP with TP 8: one rank per node */
	ck_assert_int_eq(g.per_node, 1);
	ck_assert_int_eq(g.nodes, 16);
	topology_group(32, 2, 8, &g);    /* DP with TP 2: 4 ranks per node */
	ck_assert_int_eq(g.per_node, 4);
	ck_assert_int_eq(g.nodes, 8);
}
END_TEST

START_TEST(test_allreduce_intra)
{
	struct cluster c;
	struct group_layout g = { 8, 8, 1 };

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* Ring: 2(n-1) alpha + 2(n-1)/n M / B = 14 x 3 us + 1.75 x 1e8 / 225e9
	 * = 42 us + 777.78 us = 819.78 us. */
	ck_assert_rel(collective_time(&c, &g, COLL_ALLREDUCE, COLL_ALGO_RING, 1e8),
		      0.0008197777777777778, 1e-12);
	/* All-gather: half the steps and half the bytes. */
	ck_assert_rel(collective_time(&c, &g, COLL_ALLGATHER, COLL_ALGO_RING, 1e8),
		      7 * 3e-6 + 0.875 * 1e8 / 225e9, 1e-12);
	ck_assert_double_eq(collective_time(&c, &(struct group_layout){ 1, 1, 1 },
					    COLL_ALLREDUCE, COLL_ALGO_RING, 1e8), 0.0);
	/* A fixed 23 us a collective (SimuMax's intercept on a DGX B200) is
	 * paid once: 23 us + 819.78 us for the all-reduce, and once for a
	 * 2-node hierarchical one too; nothing for a one-rank group. */
	c.intra.collective_latency_s = 23e-6;
	ck_assert_rel(collective_time(&c, &g, COLL_ALLREDUCE, COLL_ALGO_RING, 1e8),
		      23e-6 + 0.0008197777777777778, 1e-12);
	{
		struct group_layout two = { 16, 8, 2 };
		double base = collective_time(&c, &two, COLL_ALLREDUCE, COLL_ALGO_HIERARCHICAL, 1e8);

		c.intra.collective_latency_s = 0.0;
		ck_assert_rel(base - collective_time(&c, &two, COLL_ALLREDUCE, COLL_ALGO_HIERARCHICAL, 1e8),
			      23e-6, 1e-9);
	}
	c.intra.collective_latency_s = 23e-6;
	ck_assert_double_eq(collective_time(&c, &(struct group_layout){ 1, 1, 1 },
					    COLL_ALLREDUCE, COLL_ALGO_RING, 1e8), 0.0);
	c.intra.collective_latency_s = 0.0;
	cluster_release(&c);
}
END_TEST

START_TEST(test_allreduce_inter)
{
	struct cluster c;
	struct group_layout one_per_node = { 4, 1, 4 };
	struct group_layout full_nodes = { 16, 8, 2 };

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* All-reduces across nodes pay NCCL's plateau factor, 1.9 by default
	 * (test_ring_plateau), on their latency.
	 * 4 ranks on 4 nodes: 6 steps all inter, 6 x 5 us x 1.9 = 57 us, +
	 * 1.5 x 1e9 over one NIC share of 21.25e9 = 70.588235 ms: 0.0706452 s. */
	ck_assert_rel(collective_time(&c, &one_per_node, COLL_ALLREDUCE, COLL_ALGO_RING, 1e9),
		      0.07064523529411765, 1e-12);
	/* 16 ranks on 2 nodes: 30 steps, 2 inter (NCCL's count): (28 x 3 us +
	 * 2 x 5 us) x 1.9 = 94 us x 1.9 = 178.6 us; bytes 1.875e9 through 8
	 * NIC shares (170e9 B/s, slower than NVLink's 225e9): 11.029412 ms;
	 * total 0.0112080 s. */
	ck_assert_rel(collective_time(&c, &full_nodes, COLL_ALLREDUCE, COLL_ALGO_RING, 1e9),
		      0.011208011764705883, 1e-12);
	/* Hierarchical: intra RS (7 x 3 us + 7/8 x 1e9 / 225e9, one node: no
	 * plateau) + inter AR of 1e9/8 over 2 nodes (2 x 5 us x 1.9 = 19 us +
	 * 1.25e8 / 21.25e9) + intra AG (= RS): 2 x 3.909889 ms + 5.901353 ms
	 * = 13.721131 ms. */
	ck_assert_rel(collective_time(&c, &full_nodes, COLL_ALLREDUCE, COLL_ALGO_HIERARCHICAL, 1e9),
		      0.013721130718954248, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_net_overhead)
{
	struct cluster c;
	struct group_layout full_nodes = { 16, 8, 2 }, one_node = { 8, 8, 1 }, one_per_node = { 4, 1, 4 };

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* The default 1 us a network post: 3 us a step, no slower than the
	 * 3 us NVLink alpha, so test_allreduce_inter's 0.0112080 s stands. */
	ck_assert_rel(c.inter.net_overhead_s, 1e-6, 1e-15);
	ck_assert_rel(collective_ring_intra_step_s(&c, 2), 3e-6, 1e-15);
	ck_assert_rel(collective_time(&c, &full_nodes, COLL_ALLREDUCE, COLL_ALGO_RING, 1e9),
		      0.011208011764705883, 1e-12);
	/* An AMD host (NCCL: 2 us a post): the 28 NVLink steps of the 2-node
	 * ring take 3 x 2 = 6 us each: 28 x 6 us + 2 x 5 us = 178 us instead
	 * of 94 us, times the plateau's 1.9 = 338.2 us, plus the same
	 * 11.0294 ms of bytes: 0.0113678 s. */
	c.inter.net_overhead_s = 2e-6;
	ck_assert_rel(collective_ring_intra_step_s(&c, 2), 6e-6, 1e-15);
	ck_assert_rel(collective_time(&c, &full_nodes, COLL_ALLREDUCE, COLL_ALGO_RING, 1e9),
		      178e-6 * 1.9 + 1.875e9 / 170e9, 1e-12);
	/* All-gather over the same ranks: 14 NVLink steps at 6 us + 1 inter
	 * step at 5 us, and 15/16 x 1e9 through the node's 170e9 B/s. */
	ck_assert_rel(collective_time(&c, &full_nodes, COLL_ALLGATHER, COLL_ALGO_RING, 1e9),
		      14 * 6e-6 + 5e-6 + 0.9375e9 / 170e9, 1e-12);
	/* Inside one node no proxy is involved: 7 x 3 us, as before. */
	ck_assert_rel(collective_ring_intra_step_s(&c, 1), 3e-6, 1e-15);
	ck_assert_rel(collective_time(&c, &one_node, COLL_ALLGATHER, COLL_ALGO_RING, 1e8),
		      7 * 3e-6 + 0.875 * 1e8 / 225e9, 1e-12);
	/* One rank a node: every step crosses the network, none is floored. */
	ck_assert_rel(collective_time(&c, &one_per_node, COLL_ALLREDUCE, COLL_ALGO_RING, 1e9),
		      0.07064523529411765, 1e-12);
	/* NCCL counts nodes per communicator: the hierarchical all-reduce's
	 * rings inside a node and its one-rank-a-node ring across them have
	 * no step to floor, so test_allreduce_inter's 13.7211 ms stands; so
	 * do MiCS's two hops (16 ranks on 2 nodes, 8 MB: the 8 concurrent
	 * one-step gathers of 1 MB across at 21.25e9 B/s, 5 us + 1/2 x 1e6 /
	 * 21.25e9, and the 7 NVLink steps of 8 MB inside, 7 x 3 us + 7/8 x
	 * 8e6 / 225e9, each hop with its collective_latency of 0) and the
	 * all-to-all, which is not a ring (NCCL's point-to-point sends). */
	ck_assert_rel(collective_time(&c, &full_nodes, COLL_ALLREDUCE, COLL_ALGO_HIERARCHICAL, 1e9),
		      0.013721130718954248, 1e-12);
	ck_assert_rel(collective_two_hop_allgather(&c, &full_nodes, 8e6),
		      5e-6 + 0.5 * 1e6 / 21.25e9 + 7 * 3e-6 + 0.875 * 8e6 / 225e9, 1e-12);
	{
		double floored = collective_time(&c, &full_nodes, COLL_ALLTOALL, COLL_ALGO_RING, 1e8);

		c.inter.net_overhead_s = 0.0;
		ck_assert_double_eq(collective_time(&c, &full_nodes, COLL_ALLTOALL, COLL_ALGO_RING, 1e8), floored);
	}
	cluster_release(&c);
}
END_TEST

START_TEST(test_ring_plateau)
{
	struct cluster c;
	struct group_layout full_nodes = { 16, 8, 2 }, one_node = { 8, 8, 1 };

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* NCCL's "plateau effect of ring" (ncclTopoGetAlgoTime(), NCCL 2.7.3
	 * to 2.30): the schema's default is 1.9, NCCL's factor in 2.7-2.16. */
	ck_assert_rel(c.inter.ring_plateau, 1.9, 1e-15);
	/* It needs an all-reduce (reduce-scatter and all-gather keep 1), more
	 * than one node, and nRanks/16 x 65536 = 16 x 4096 = 65,536 bytes
	 * or more. */
	ck_assert_rel(collective_ring_plateau(&c, COLL_ALLREDUCE, 16, 2, 65536.0), 1.9, 1e-15);
	ck_assert_rel(collective_ring_plateau(&c, COLL_ALLREDUCE, 16, 2, 65535.0), 1.0, 1e-15);
	ck_assert_rel(collective_ring_plateau(&c, COLL_ALLREDUCE, 8, 1, 1e9), 1.0, 1e-15);
	ck_assert_rel(collective_ring_plateau(&c, COLL_ALLGATHER, 16, 2, 1e9), 1.0, 1e-15);
	ck_assert_rel(collective_ring_plateau(&c, COLL_REDUCESCATTER, 16, 2, 1e9), 1.0, 1e-15);
	/* Just below the size: 28 x 3 us + 2 x 5 us = 94 us of steps, and
	 * 1.875 x 65535 B through 170e9 B/s = 0.7228 us: no factor. */
	ck_assert_rel(collective_time(&c, &full_nodes, COLL_ALLREDUCE, COLL_ALGO_RING, 65535.0),
		      94e-6 + 1.875 * 65535.0 / 170e9, 1e-12);
	/* NCCL 2.18 on with an Ampere or later GPU: 1.4. With a 10 us base
	 * latency (intra_node.collective_latency), the factor covers it too:
	 * (10 us + 94 us) x 1.4 = 145.6 us + 1.875e9 / 170e9 = 11.029412 ms. */
	c.inter.ring_plateau = 1.4;
	c.intra.collective_latency_s = 10e-6;
	ck_assert_rel(collective_time(&c, &full_nodes, COLL_ALLREDUCE, COLL_ALGO_RING, 1e9),
		      145.6e-6 + 1.875e9 / 170e9, 1e-12);
	/* Inside one node NCCL applies no factor: 10 us + 14 x 3 us +
	 * 1.75 x 1e8 / 225e9. */
	ck_assert_rel(collective_time(&c, &one_node, COLL_ALLREDUCE, COLL_ALGO_RING, 1e8),
		      10e-6 + 42e-6 + 1.75e8 / 225e9, 1e-12);
	/* Nor to the broadcast: 16 steps, 14 at 3 us and 2 at 5 us, + 1e8
	 * through 8 NIC shares (170e9 B/s) as without the factor. */
	ck_assert_rel(collective_broadcast_time(&c, &full_nodes, 1e8), 10e-6 + 14 * 3e-6 + 2 * 5e-6 + 1e8 / 170e9,
		      1e-12);
	/* 1 switches it off. */
	c.inter.ring_plateau = 1.0;
	ck_assert_rel(collective_time(&c, &full_nodes, COLL_ALLREDUCE, COLL_ALGO_RING, 1e9),
		      104e-6 + 1.875e9 / 170e9, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_p2p_bits_vs_bytes)
{
	struct cluster bits, bytes;
	char yaml[2048];
	const char *at;

	test_load_cluster(&bits, TEST_CLUSTER_YAML);
	/* 5 us + 1e8 / 21.25e9 = 4.7109 ms. */
	ck_assert_rel(collective_p2p_time(&bits, true, 1e8), 0.004710882352941176, 1e-12);
	/* The same NIC written in bytes is 8x faster on the wire. */
	snprintf(yaml, sizeof(yaml), "%s", TEST_CLUSTER_YAML);
	at = strstr(yaml, "200 Gbit/s");
	ck_assert_ptr_nonnull(at);
	memcpy((char *)at, "200 GB/s  ", 10);
	test_load_cluster(&bytes, yaml);
	ck_assert_rel(collective_p2p_time(&bits, true, 1e9) - 5e-6,
		      8.0 * (collective_p2p_time(&bytes, true, 1e9) - 5e-6), 1e-12);
	cluster_release(&bits);
	cluster_release(&bytes);
}
END_TEST

START_TEST(test_message_size)
{
	struct cluster c;
	char yaml[2048];
	struct group_layout flat = { 32, 8, 4 };

	snprintf(yaml, sizeof(yaml), "%s", TEST_CLUSTER_YAML);
	memcpy(strstr(yaml, "0 B\n"), "64 KiB\n", 8);
	test_load_cluster(&c, yaml);
	ck_assert_rel(c.inter.half_size_bytes, 65536.0, 1e-15);
	/* A 64 KiB message reaches half the bandwidth: 5 us + 65536 / 10.625e9. */
	ck_assert_rel(collective_p2p_time(&c, true, 65536.0), 5e-6 + 65536.0 / 10.625e9, 1e-12);
	/* All-to-all over 32 ranks on 4 nodes, 4 MiB per rank: 24 of the 32
	 * messages of 128 KiB leave the node, at 2/3 of the bandwidth:
	 * 24 x 5 us + 7 x 3 us + (4 MiB x 24/32) / (21.25e9 x 2/3). */
	ck_assert_rel(collective_time(&c, &flat, COLL_ALLTOALL, COLL_ALGO_RING, 4194304.0),
		      24 * 5e-6 + 7 * 3e-6 + 4194304.0 * 0.75 / (21.25e9 * 131072.0 / (131072.0 + 65536.0)),
		      1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_broadcast)
{
	struct cluster c;
	struct group_layout node = { 8, 8, 1 };
	struct group_layout full_nodes = { 16, 8, 2 };
	struct group_layout one_per_node = { 4, 1, 4 };

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* NCCL's ring broadcast as a chain (tuning.cc: nsteps = n for
	 * Broadcast, nNodes of them across nodes; bus bandwidth = algorithm
	 * bandwidth, nccl-tests PERFORMANCE.md). One node: 8 x 3 us +
	 * 1e8 / 225e9 = 24 us + 444.44 us. */
	ck_assert_rel(collective_broadcast_time(&c, &node, 1e8), 24e-6 + 1e8 / 225e9, 1e-12);
	/* 16 ranks on 2 nodes: 14 x 3 us + 2 x 5 us = 52 us; the whole 1e9
	 * through the node's 8 NIC shares, 170e9 B/s (NVLink's 225e9 is
	 * faster): 5.88235 ms; 5.93435 ms in all. */
	ck_assert_rel(collective_broadcast_time(&c, &full_nodes, 1e9), 52e-6 + 1e9 / 170e9, 1e-12);
	/* One rank a node: 4 x 5 us + 1e9 / 21.25e9 = 20 us + 47.0588 ms: the
	 * same bytes as an all-gather's whole buffer, (n-1)/n more. */
	ck_assert_rel(collective_broadcast_time(&c, &one_per_node, 1e9), 20e-6 + 1e9 / 21.25e9, 1e-12);
	ck_assert_double_eq(collective_broadcast_time(&c, &(struct group_layout){ 1, 1, 1 }, 1e9), 0.0);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli hostsync: an all-reduce of one float (a loss) as NCCL's tuning
 * model prices it with LL, the cheaper of Ring/LL and Tree/LL (tuning.cc
 * v2.23.4-1 .. v2.30.7-1), each latency the cluster's Simple one times
 * NCCL's LL/Simple ratio. The test cluster: 3 us NVLink steps, so LL
 * 3 x 0.6/3.4 = 9/17 us; 5 us across nodes, so Ring/LL 5 x 2.7/9.6 =
 * 1.40625 us and Tree/LL 5 x 5.0/9.6 = 125/48 us; no base latency; the
 * 1 us net overhead; NVLink 225e9 B/s, Ring/LL at half of it (bytes
 * 2 x 1.75 x 4 = 14 over 225e9), Tree/LL at 1/3.8 and algorithm bandwidth
 * half the bus's (2 x 3.8 x 4 = 30.4 over 225e9).
 * One node of 8: ring 14 x 9/17 = 126/17 us, tree 2 x 7 x 9/17 the same,
 * the ring's bytes fewer: the ring.
 * 16 ranks on 2 nodes: ring 28 x max(9/17, 1) + 2 x 1.40625 = 30.8125 us;
 * tree 2 x (7 x 9/17 + 1 x 125/48) = 126/17 + 125/24 = 12.6201 us.
 * 512 ranks on 64 nodes: tree 126/17 + 2 x 6 x 125/48 = 126/17 + 31.25 us
 * (ring 896 + 126 x 1.40625 = 1073.2 us). 3 nodes of 8: log2i(3) = 1, as
 * on 2 nodes (ring 42 + 4 x 1.40625 = 47.625 us).
 * 4 ranks on 4 nodes, one a node: the ring's 6 steps all across nodes at
 * the tree's 125/48 us, 15.625 us; tree 2 x 2 x 125/48 = 125/12 us.
 * At NCCL's own figures (3.4, 9.6 us steps, base 8.4 us): one node of 8,
 * ring 6.6 + 14 x 0.6 = 15.0 us (tree 6.8 + 14 x 0.6 = 15.2 us); 220 ranks,
 * 4 a node on 55 nodes: tree 6.8 + 2 (3 x 0.6 + 5 x 5.0) = 60.4 us (ring
 * 6.6 + 330 x 1.0 + 108 x 2.7 = 628.2 us; the Simple tree of before
 * 8.4 + 2 (3 x 3.4 + 5 x 9.6) = 124.8 us).
 */
START_TEST(test_small_allreduce)
{
	struct cluster c;
	double ring_bw = 14.0 / 225e9, tree_bw = 30.4 / 225e9;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	ck_assert_rel(collective_small_allreduce_time(&c, &(struct group_layout){ 8, 8, 1 }, 4.0),
		      126.0 / 17 * 1e-6 + ring_bw, 1e-12);
	ck_assert_rel(collective_small_allreduce_time(&c, &(struct group_layout){ 16, 8, 2 }, 4.0),
		      (126.0 / 17 + 125.0 / 24) * 1e-6 + tree_bw, 1e-12);
	ck_assert_rel(collective_small_allreduce_time(&c, &(struct group_layout){ 512, 8, 64 }, 4.0),
		      (126.0 / 17 + 31.25) * 1e-6 + tree_bw, 1e-12);
	ck_assert_rel(collective_small_allreduce_time(&c, &(struct group_layout){ 24, 8, 3 }, 4.0),
		      (126.0 / 17 + 125.0 / 24) * 1e-6 + tree_bw, 1e-12);
	ck_assert_rel(collective_small_allreduce_time(&c, &(struct group_layout){ 4, 1, 4 }, 4.0),
		      125.0 / 12 * 1e-6 + tree_bw, 1e-12);
	ck_assert(collective_time(&c, &(struct group_layout){ 512, 8, 64 }, COLL_ALLREDUCE, COLL_ALGO_RING, 4.0) >
		  3318e-6);
	ck_assert_double_eq(collective_small_allreduce_time(&c, &(struct group_layout){ 1, 1, 1 }, 4.0), 0.0);
	ck_assert_double_eq(collective_small_allreduce_time(&c, &(struct group_layout){ 8, 8, 1 }, 0.0), 0.0);
	c.intra.latency_s = 3.4e-6;
	c.inter.latency_s = 9.6e-6;
	c.intra.collective_latency_s = 8.4e-6;
	ck_assert_rel(collective_small_allreduce_time(&c, &(struct group_layout){ 8, 8, 1 }, 4.0),
		      15.0e-6 + ring_bw, 1e-12);
	ck_assert_rel(collective_small_allreduce_time(&c, &(struct group_layout){ 220, 4, 55 }, 4.0),
		      60.4e-6 + tree_bw, 1e-12);
	cluster_release(&c);
}
END_TEST

/* A link's all-to-all efficiency (SimuMax @4dcaae5, configs/system/
 * b200_bf16_ceperm.json: NCCL's all2all 0.5968 of NVLink5 where
 * all-gather reaches 0.6735) prices the all-to-all alone. */
START_TEST(test_all_to_all_efficiency)
{
	struct cluster c;
	struct plan_error err;
	char yaml[2048];
	struct group_layout node = { 8, 8, 1 };
	struct group_layout two = { 16, 8, 2 };

	/* Absent: the link's efficiency. One node, 1e8 bytes: 7 x 3 us +
	 * 7/8 x 1e8 / (300e9 x 0.75) = 21 us + 388.889 us. */
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	ck_assert_double_eq(c.intra.all_to_all_efficiency, 0.0);
	ck_assert_rel(collective_time(&c, &node, COLL_ALLTOALL, COLL_ALGO_RING, 1e8),
		      21e-6 + 0.875e8 / 225e9, 1e-12);
	/* Two nodes, 1.6e8 bytes: 8 of the 16 slices leave the node, 8e7
	 * bytes on the GPU's NIC share 25e9 x 0.85 = 21.25e9 B/s (3.765 ms;
	 * NVLink's 7e7 / 225e9 = 0.311 ms is shorter); 8 x 5 us + 7 x 3 us. */
	ck_assert_rel(collective_time(&c, &two, COLL_ALLTOALL, COLL_ALGO_RING, 1.6e8),
		      61e-6 + 8e7 / 21.25e9, 1e-12);
	cluster_release(&c);

	/* The intra-node key before "inter_node:", the inter-node one last. */
	{
		const char *inter = strstr(TEST_CLUSTER_YAML, "inter_node:");

		snprintf(yaml, sizeof(yaml), "%.*s  all_to_all_efficiency: 0.6\n%s  all_to_all_efficiency: 0.5\n",
			 (int)(inter - TEST_CLUSTER_YAML), TEST_CLUSTER_YAML, inter);
	}
	test_load_cluster(&c, yaml);
	ck_assert_rel(c.intra.all_to_all_efficiency, 0.6, 1e-15);
	ck_assert_rel(c.inter.all_to_all_efficiency, 0.5, 1e-15);
	/* 7/8 x 1e8 / (300e9 x 0.6 = 180e9) = 486.111 us, + 21 us = 507.111 us;
	 * the all-gather keeps 0.75: 21 us + 388.889 us. */
	ck_assert_rel(collective_time(&c, &node, COLL_ALLTOALL, COLL_ALGO_RING, 1e8),
		      21e-6 + 0.875e8 / 180e9, 1e-12);
	ck_assert_rel(collective_time(&c, &node, COLL_ALLGATHER, COLL_ALGO_RING, 1e8),
		      21e-6 + 0.875e8 / 225e9, 1e-12);
	/* Two nodes: 8e7 / (25e9 x 0.5 = 12.5e9) = 6.4 ms (NVLink 7e7 / 180e9
	 * = 0.389 ms), + 61 us = 6.461 ms. */
	ck_assert_rel(collective_time(&c, &two, COLL_ALLTOALL, COLL_ALGO_RING, 1.6e8), 6.461e-3, 1e-12);
	cluster_release(&c);

	/* 0 is outside the schema's range 0.01-1. */
	memcpy(strstr(yaml, "all_to_all_efficiency: 0.6"), "all_to_all_efficiency: 0.0", 26);
	plan_error_clear(&err);
	ck_assert(!cluster_load_string(&c, "zero.yaml", yaml, &err));
}
END_TEST

static Suite *
collective_suite(void)
{
	Suite *s = suite_create("collective");
	TCase *tc = tcase_create("collective");

	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_allreduce_intra);
	tcase_add_test(tc, test_allreduce_inter);
	tcase_add_test(tc, test_net_overhead);
	tcase_add_test(tc, test_ring_plateau);
	tcase_add_test(tc, test_p2p_bits_vs_bytes);
	tcase_add_test(tc, test_message_size);
	tcase_add_test(tc, test_broadcast);
	tcase_add_test(tc, test_small_allreduce);
	tcase_add_test(tc, test_all_to_all_efficiency);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(collective_suite)
