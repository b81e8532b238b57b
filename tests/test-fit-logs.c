/*
 * Microbenchmark logs: the nccl-tests and GEMM parsers on the sample
 * files of tests/data/ and on malformed lines, and the link and GEMM fits
 * on points generated from known parameters (fit_link.c, fit_gemm.c).
 */
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "testutil.h"
#include "plan/collective.h"
#include "plan/fit_gemm.h"
#include "plan/fit_link.h"
#include "io/gemm_log.h"
#include "io/nccl_log.h"

static void
data_path(char *buf, size_t size, const char *rel)
{
	const char *root = getenv("PLAN_TEST_SOURCE_ROOT");

	snprintf(buf, size, "%s/tests/data/%s", root ? root : ".", rel);
}

/* A deterministic wobble in [-amp, amp] (an LCG, the same on every machine). */
static double
wobble(unsigned *state, double amp)
{
	*state = *state * 1103515245u + 12345u;
	return amp * (2.0 * ((*state >> 8) & 0xffff) / 65535.0 - 1.0);
}

/* ------------------------------------------------------------ parsers */

START_TEST(test_sample_logs)
{
	static const struct { const char *file; int coll, ranks, nodes, rows; } cases[] = {
		{ "nccl/all_reduce_perf-8xh100.log", FIT_COLL_ALLREDUCE, 8, 1, 31 },
		/* No '# Collective test starting' line: the file name says it. */
		{ "nccl/all_gather_perf-8xh100.log", FIT_COLL_ALLGATHER, 8, 1, 24 },
		{ "nccl/all_reduce_perf-2x8xh100.log", FIT_COLL_ALLREDUCE, 16, 2, 24 },
		{ "nccl/all_reduce_perf-4x8xh100.log", FIT_COLL_ALLREDUCE, 32, 4, 24 },
		{ "nccl/alltoall_perf-8xh100.log", FIT_COLL_ALLTOALL, 8, 1, 24 },
		{ "nccl/alltoall_perf-2x8xh100.log", FIT_COLL_ALLTOALL, 16, 2, 24 },
	};
	char path[PATH_MAX];
	struct plan_error err;
	struct nccl_log log;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		data_path(path, sizeof(path), cases[i].file);
		plan_error_clear(&err);
		ck_assert_msg(nccl_log_load(path, &log, &err), "%s: %s", cases[i].file, err.message);
		ck_assert_int_eq(log.coll, cases[i].coll);
		ck_assert_int_eq(log.ranks, cases[i].ranks);
		ck_assert_int_eq(log.nodes, cases[i].nodes);
		ck_assert_int_eq(log.n, cases[i].rows);
		ck_assert_str_eq(log.gpu, "NVIDIA H100 80GB HBM3");
		ck_assert(log.avg_busbw_Bps > 1e9);
		nccl_log_release(&log);
	}
}
END_TEST

/*
 * Units: nccl-tests prints time in us and algbw in GB/s = 1e9 bytes/s
 * (not Gbit/s). Row '1048576 ... 10.00 104.86 183.50': 1048576 B /
 * 10 us = 104.86e9 B/s; busbw = 2 (8-1)/8 x algbw = 183.50e9 B/s.
 */
#define HEAD "# Collective test starting: all_reduce_perf\n" \
	"#  Rank  0 Group  0 Pid  1 on a device  0 [0x18] NVIDIA H100\n" \
	"#  Rank  1 Group  0 Pid  2 on a device  1 [0x19] NVIDIA H100\n" \
	"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n" \
	"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
#define ROW "     1048576        262144     float     sum      -1    10.00  104.86  183.50      0    10.00  104.86  183.50      0\n"

START_TEST(test_units)
{
	struct plan_error err;
	struct nccl_log log;

	plan_error_clear(&err);
	ck_assert_msg(nccl_log_parse("u.log", HEAD ROW "# Avg bus bandwidth    : 183.5\n", &log, &err), "%s",
		      err.message);
	ck_assert_int_eq(log.n, 1);
	ck_assert(log.rows[0].bytes == 1048576.0);
	ck_assert_double_eq_tol(log.rows[0].time_s[0], 10e-6, 1e-15);
	ck_assert_double_eq_tol(log.rows[0].algbw_Bps[0], 104.86e9, 1.0);
	ck_assert_double_eq_tol(log.rows[0].busbw_Bps[1], 183.50e9, 1.0);
	ck_assert_double_eq_tol(log.avg_busbw_Bps, 183.5e9, 1.0);
	ck_assert_rel(log.rows[0].bytes / log.rows[0].time_s[0], log.rows[0].algbw_Bps[0], 1e-3);
	nccl_log_release(&log);
}
END_TEST

/*
 * Malformed logs, at their line and the byte column where the token at
 * fault starts (the row's first for a row at fault; 0: the file). By hand:
 * ROW's tokens are padded to columns 12 (size), 26, 36, 44, 52 (root);
 * the out-of-place time starts at 57, its algbw at 63 (when the time is
 * 0.01), its #wrong at 84; "# Avg bus bandwidth    : " is 25 bytes. mpirun's
 * "[1,0]<stdout>:" (14 bytes) moves each 14 on. In "# Collective test
 * starting: broadcast_perf" the binary's name starts at 29.
 */
START_TEST(test_malformed)
{
	static const struct { const char *text; int line; const char *what; int column; } cases[] = {
		{ HEAD "     1048576        262144     float     sum      -1    10.00  104.86\n", 6, "columns", 6 },
		{ HEAD "     1048576        262144     float     sum      -1    ten  104.86  183.50      0    10.00  104.86  183.50      0\n",
		  6, "time column", 57 },
		{ HEAD "     1048576        262144     float     sum      -1    10.00  104.86  183.50      3    10.00  104.86  183.50      0\n",
		  6, "wrong results", 84 },
		/* Times in ms would make algbw 1000 x size / time. */
		{ HEAD "     1048576        262144     float     sum      -1    0.01  104.86  183.50      0    0.01  104.86  183.50      0\n",
		  6, "must be in us", 63 },
		{ HEAD "     1048576x       262144     float     sum      -1    10.00  104.86  183.50      0    10.00  104.86  183.50      0\n",
		  0, "no result table", 0 },
		{ HEAD "   -1048576        262144     float     sum      -1    10.00  104.86  183.50      0    10.00  104.86  183.50      0\n",
		  0, "no result table", 0 },
		{ "# Collective test starting: all_reduce_perf\n" ROW, 2, "before the table", 6 },
		{ "# Collective test starting: broadcast_perf\n", 1, "unknown collective", 29 },
		{ "#  Rank  0 Group  0 Pid  1 somewhere\n", 1, "rank line", 1 },
		{ HEAD, 0, "no result table", 0 },
		{ "", 0, "which collective", 0 },
		{ "#  size time\n", 1, "table header", 1 },
		{ "#  Rank  0 Group  0 Pid  1 on a device  0 [0x18] GPU\n", 0, "which collective", 0 },
		{ HEAD "# Avg bus bandwidth    : fast\n", 6, "Avg bus bandwidth", 26 },
		{ HEAD "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33\n",
		  6, "more than 32", 1 },
		{ HEAD "[1,0]<stdout>:     1048576        262144     float     sum      -1    ten  104.86  183.50      0    10.00  104.86  183.50      0\n",
		  6, "time column", 71 },
		{ "\n  #  size time\n", 2, "table header", 3 },
	};
	struct plan_error err;
	struct nccl_log log;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		plan_error_clear(&err);
		ck_assert_msg(!nccl_log_parse("bad.log", cases[i].text, &log, &err), "case %zu parsed", i);
		ck_assert_msg(strstr(err.message, cases[i].what), "case %zu: '%s'", i, err.message);
		ck_assert_int_eq(err.line, cases[i].line);
		ck_assert_msg(err.column == cases[i].column, "case %zu: column %d, expected %d", i, err.column,
			      cases[i].column);
		ck_assert_str_eq(err.file, "bad.log");
		ck_assert_int_eq(err.kind, PLAN_ERR_INPUT);
		nccl_log_release(&log);
	}
}
END_TEST

/* What is not the table is skipped: MPI prefixes, NCCL INFO lines, warnings. */
START_TEST(test_noise_lines)
{
	const char *text = "Warning: Permanently added 'node-1' to the list of known hosts.\n"
			   "# a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7 8 9 size\n"
			   "[1,0]<stdout>:# Collective test starting: all_reduce_perf\n"
			   "[1,0]<stdout>:#  Rank  0 Group  0 Pid  1 on a device  0 [0x18] NVIDIA H100\n"
			   "[1,0]<stdout>:#  Rank  1 Group  0 Pid  1 on b device  0 [0x18] NVIDIA H100\n"
			   "node-1:21:21 [0] NCCL INFO Bootstrap : Using eth0\n"
			   "1942ef50-8240:21:21 [0] NCCL INFO NET/Plugin\n"
			   "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
			   "[1,0]<stdout>:" ROW "\r\n"
			   "[1,0]<stdout>:           0             0     float     sum      -1     0.10    0.00    0.00    N/A     0.10    0.00    0.00    N/A\n";
	struct plan_error err;
	struct nccl_log log;

	plan_error_clear(&err);
	ck_assert_msg(nccl_log_parse("mpi.log", text, &log, &err), "%s", err.message);
	ck_assert_int_eq(log.n, 1); /* the size-0 row is left out */
	ck_assert_int_eq(log.ranks, 2);
	ck_assert_int_eq(log.nodes, 2);
	nccl_log_release(&log);
}
END_TEST

/* ---------------------------------------------------------- link fit */

/* Points of @coll on @ranks over @nodes, sizes 1 KiB to 1 GiB by 4x, from @c's model, wobbled by @amp. */
static int
make_points(const struct cluster *c, int coll, int ranks, int nodes, double amp, unsigned *seed,
	    struct fit_link_point *out)
{
	int n = 0;

	for (double b = 1024; b <= 1073741824.0; b *= 4, n++) {
		out[n] = (struct fit_link_point){ coll, ranks, nodes, b, 0.0 };
		out[n].time_s = fit_link_model_time(c, &out[n]) * (1.0 + wobble(seed, amp));
	}
	return n;
}

START_TEST(test_link_model_by_hand)
{
	struct cluster c;
	struct fit_link_point intra = { FIT_COLL_ALLREDUCE, 4, 1, 1e6, 0 };
	struct fit_link_point inter = { FIT_COLL_ALLREDUCE, 8, 2, 8e6, 0 };

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	/* 2(4-1) = 6 steps of 1 us, 2(4-1)/4 x 1e6 B at 1e11 B/s = 15 us. */
	ck_assert_double_eq_tol(fit_link_model_time(&c, &intra), 21e-6, 1e-15);
	/* 12 intra steps x 1 us + 2 inter steps x 10 us = 32 us, times NCCL's
	 * plateau factor for an all-reduce across nodes (the schema's 1.9;
	 * 8e6 B is over 8 x 4096) = 60.8 us; NIC side 1.75 x 8e6 / (4 x
	 * 2.5e9) = 1400 us (the NVLink side is 140 us): 1460.8 us. */
	ck_assert_double_eq_tol(fit_link_model_time(&c, &inter), 1460.8e-6, 1e-12);
	/* With NCCL's 1 us a network post, each of the 12 NVLink steps of
	 * the ring across nodes takes 3 x 1 = 3 us: (36 + 20) x 1.9 + 1400 us
	 * = 1506.4 us. */
	c.inter.net_overhead_s = 1e-6;
	ck_assert_double_eq_tol(fit_link_model_time(&c, &inter), 1506.4e-6, 1e-12);
	/* Below 8 x 4096 B NCCL applies no factor: 32 us + 1.75 x 16384 /
	 * 1e10 = 2.8672 us, with the 3 us steps 56 us + 2.8672 us. */
	inter.bytes = 16384;
	ck_assert_double_eq_tol(fit_link_model_time(&c, &inter), 56e-6 + 2.8672e-6, 1e-12);
	ck_assert_double_eq_tol(fit_link_model_time(&c, &intra), 21e-6, 1e-15);
	cluster_release(&c);
}
END_TEST

START_TEST(test_link_intra_recovers)
{
	static const double amps[] = { 0.0, 0.01 };
	struct fit_link_point pts[64];
	struct fit_link_result f;
	struct plan_error err;
	struct cluster c;
	unsigned seed = 7;
	int n;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	for (size_t a = 0; a < 2; a++) {
		n = make_points(&c, FIT_COLL_ALLREDUCE, 4, 1, amps[a], &seed, pts);
		n += make_points(&c, FIT_COLL_ALLGATHER, 4, 1, amps[a], &seed, pts + n);
		plan_error_clear(&err);
		ck_assert_msg(fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err), "%s", err.message);
		ck_assert_int_eq(f.params, 2);
		if (amps[a] == 0.0) {
			ck_assert_rel(f.bandwidth_Bps, 1e11, 1e-9);
			ck_assert_rel(f.latency_s, 1e-6, 1e-9);
			ck_assert(f.mape < 1e-9);
			continue;
		}
		ck_assert_msg(fabs(f.bandwidth_Bps - 1e11) < 2 * f.bandwidth_se, "%g +- %g", f.bandwidth_Bps,
			      f.bandwidth_se);
		ck_assert_msg(fabs(f.latency_s - 1e-6) < 2 * f.latency_se, "%g +- %g", f.latency_s, f.latency_se);
		ck_assert(f.mape > 0.001 && f.mape < 0.01);
	}
	cluster_release(&c);
}
END_TEST

START_TEST(test_link_inter_recovers)
{
	struct fit_link_point pts[64];
	struct fit_link_result f;
	struct plan_error err;
	struct cluster c;
	unsigned seed = 11;
	int n;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	c.inter.half_size_bytes = 262144;
	/* Two node counts tell the half size from the latency. */
	n = make_points(&c, FIT_COLL_ALLREDUCE, 8, 2, 0.01, &seed, pts);
	n += make_points(&c, FIT_COLL_ALLREDUCE, 16, 4, 0.01, &seed, pts + n);
	n += make_points(&c, FIT_COLL_ALLTOALL, 8, 2, 0.01, &seed, pts + n);
	plan_error_clear(&err);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTER, &c, &f, &err), "%s", err.message);
	/* The link's three from the all-reduces, the all-to-all bandwidth
	 * (the link's: no all_to_all_efficiency) from the all-to-alls. */
	ck_assert_int_eq(f.params, 4);
	ck_assert_int_eq(f.a2a_points, 11);
	ck_assert_msg(fabs(f.a2a_bandwidth_Bps - 2.5e9) < 3 * f.a2a_bandwidth_se, "%g +- %g", f.a2a_bandwidth_Bps,
		      f.a2a_bandwidth_se);
	ck_assert(f.half_size_fitted);
	ck_assert_msg(fabs(f.bandwidth_Bps - 2.5e9) < 2 * f.bandwidth_se, "%g +- %g", f.bandwidth_Bps, f.bandwidth_se);
	ck_assert_msg(fabs(f.latency_s - 10e-6) < 2 * f.latency_se, "%g +- %g", f.latency_s, f.latency_se);
	ck_assert_msg(fabs(f.half_size_bytes - 262144) < 2 * f.half_size_se, "%g +- %g", f.half_size_bytes,
		      f.half_size_se);
	/* One node count of all-gathers: the half size is held at the base
	 * cluster's. */
	c.inter.half_size_bytes = 65536;
	n = make_points(&c, FIT_COLL_ALLGATHER, 8, 2, 0.0, &seed, pts);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTER, &c, &f, &err), "%s", err.message);
	ck_assert(!f.half_size_fitted);
	ck_assert(f.half_size_bytes == 65536);
	ck_assert_rel(f.bandwidth_Bps, 2.5e9, 1e-9);
	ck_assert_rel(f.latency_s, 10e-6, 1e-9);
	/* All-reduces on one node count tell them apart: NCCL's plateau
	 * factor multiplies the latency from 8 x 4096 B on, and not the half
	 * size's term; exact points give both back. */
	n = make_points(&c, FIT_COLL_ALLREDUCE, 8, 2, 0.0, &seed, pts);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTER, &c, &f, &err), "%s", err.message);
	ck_assert(f.half_size_fitted);
	ck_assert_rel(f.half_size_bytes, 65536, 1e-6);
	ck_assert_rel(f.bandwidth_Bps, 2.5e9, 1e-9);
	ck_assert_rel(f.latency_s, 10e-6, 1e-9);
	/* Hosts whose network post costs 2 us (NCCL's AMD figure): the 12
	 * NVLink steps of the 8-rank all-reduce over 2 nodes take 6 us each,
	 * not the toy's 1 us (72 us against 12 us in every point); the fit
	 * takes that floor from the base cluster and still gives back the
	 * 10 us inter-node alpha and the 2.5e9 B/s, exactly. */
	c.inter.net_overhead_s = 2e-6;
	n = make_points(&c, FIT_COLL_ALLREDUCE, 8, 2, 0.0, &seed, pts);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTER, &c, &f, &err), "%s", err.message);
	ck_assert_rel(f.bandwidth_Bps, 2.5e9, 1e-9);
	ck_assert_rel(f.latency_s, 10e-6, 1e-9);
	cluster_release(&c);
}
END_TEST

/*
 * The fixed cost of a collective (intra_node.collective_latency, SimuMax's
 * fixed_latency_us): logs of two collectives with different step counts
 * (an all-reduce's 14 on 8 ranks, an all-gather's 7) tell it from the
 * per-step latency; exact points of the toy cluster with 8 us a
 * collective give back its alpha, its bandwidth and the 8 us, which the
 * fitted link then carries. One collective alone cannot: it is held at
 * 0, and an inter-node fit keeps the base cluster's.
 */
START_TEST(test_link_collective_latency)
{
	struct fit_link_point pts[64];
	struct fit_link_result f;
	struct plan_error err;
	struct cluster c, applied;
	unsigned seed = 5;
	int n;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	c.intra.collective_latency_s = 8e-6;
	n = make_points(&c, FIT_COLL_ALLREDUCE, 8, 1, 0.0, &seed, pts);
	n += make_points(&c, FIT_COLL_ALLGATHER, 8, 1, 0.0, &seed, pts + n);
	plan_error_clear(&err);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err), "%s", err.message);
	ck_assert(f.collective_latency_fitted);
	ck_assert_int_eq(f.params, 3);
	ck_assert_rel(f.collective_latency_s, 8e-6, 1e-9);
	ck_assert_rel(f.latency_s, c.intra.latency_s, 1e-9);
	ck_assert(f.mape < 1e-9);
	applied = c;
	applied.gemm_interp = NULL;
	applied.intra.collective_latency_s = 0.0;
	fit_link_apply(&f, &applied);
	ck_assert_rel(applied.intra.collective_latency_s, 8e-6, 1e-9);
	n = make_points(&c, FIT_COLL_ALLREDUCE, 8, 1, 0.0, &seed, pts);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err), "%s", err.message);
	ck_assert(!f.collective_latency_fitted);
	ck_assert_double_eq(f.collective_latency_s, 0.0);
	n = make_points(&c, FIT_COLL_ALLREDUCE, 16, 2, 0.0, &seed, pts);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTER, &c, &f, &err), "%s", err.message);
	ck_assert(!f.collective_latency_fitted);
	ck_assert_double_eq(f.collective_latency_s, 8e-6);
	ck_assert_rel(f.latency_s, c.inter.latency_s, 1e-9);
	cluster_release(&c);
}
END_TEST

/*
 * All-to-all at its own efficiency (collective.c), by hand on the toy
 * cluster with intra all_to_all_efficiency 0.6 and inter 0.5.
 */
START_TEST(test_link_a2a_model_by_hand)
{
	struct cluster c;
	struct fit_link_point intra = { FIT_COLL_ALLTOALL, 4, 1, 1e6, 0 };
	struct fit_link_point inter = { FIT_COLL_ALLTOALL, 8, 2, 8e6, 0 };

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	c.intra.all_to_all_efficiency = 0.6;
	c.inter.all_to_all_efficiency = 0.5;
	/* 3 steps of 1 us + 3/4 x 1e6 B at 100 GB/s x 0.6 = 12.5 us: 15.5 us. */
	ck_assert_double_eq_tol(fit_link_model_time(&c, &intra), 15.5e-6, 1e-15);
	/* 4 steps across nodes x 10 us + 3 inside x 1 us = 43 us; the NIC
	 * share 12.5e9 / 4 = 3.125e9 B/s x 0.5 carries 4/8 x 8e6 B: 2560 us
	 * (the NVLink's 3/8 x 8e6 B at 6e10 B/s, 50 us, is shorter): 2603 us. */
	ck_assert_double_eq_tol(fit_link_model_time(&c, &inter), 2603e-6, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * The all-to-all bandwidth from all-to-all points (alltoall_perf) beside
 * other collectives: exact points of the toy cluster at all_to_all
 * efficiency 0.6 inside the node (6e10 B/s) and 0.5 across (the NIC
 * share's 3.125e9 B/s x 0.5 = 1.5625e9 B/s) give them back exactly, the
 * link's own values too; applied, they are the efficiencies of the line
 * rates. All-to-all points alone fit the link's latency and their
 * bandwidth, not the link's efficiency.
 */
START_TEST(test_link_a2a_recovers)
{
	struct fit_link_point pts[64];
	struct fit_link_result f;
	struct plan_error err;
	struct cluster c, applied;
	unsigned seed = 13;
	int n;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	c.intra.collective_latency_s = 8e-6;
	c.intra.all_to_all_efficiency = 0.6;
	c.inter.all_to_all_efficiency = 0.5;
	c.inter.half_size_bytes = 262144;
	n = make_points(&c, FIT_COLL_ALLREDUCE, 4, 1, 0.0, &seed, pts);
	n += make_points(&c, FIT_COLL_ALLGATHER, 4, 1, 0.0, &seed, pts + n);
	n += make_points(&c, FIT_COLL_ALLTOALL, 4, 1, 0.0, &seed, pts + n);
	plan_error_clear(&err);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err), "%s", err.message);
	ck_assert(f.bandwidth_fitted);
	ck_assert_int_eq(f.a2a_points, 11);
	ck_assert_int_eq(f.params, 4); /* alpha, bandwidth, fixed cost; all-to-all bandwidth */
	ck_assert_rel(f.bandwidth_Bps, 1e11, 1e-9);
	ck_assert_rel(f.a2a_bandwidth_Bps, 6e10, 1e-9);
	ck_assert_rel(f.latency_s, 1e-6, 1e-9);
	ck_assert_rel(f.collective_latency_s, 8e-6, 1e-9);
	ck_assert(f.mape < 1e-9 && f.a2a_mape < 1e-9);
	applied = c;
	applied.gemm_interp = NULL;
	applied.intra.all_to_all_efficiency = 0.0;
	fit_link_apply(&f, &applied);
	ck_assert_rel(applied.intra.efficiency, 1.0, 1e-9);
	ck_assert_rel(applied.intra.all_to_all_efficiency, 0.6, 1e-9);

	/* Across nodes: all-reduces on two node counts fit the link, the
	 * all-to-alls on 8 ranks over 2 nodes its all-to-all bandwidth. */
	n = make_points(&c, FIT_COLL_ALLREDUCE, 8, 2, 0.0, &seed, pts);
	n += make_points(&c, FIT_COLL_ALLREDUCE, 16, 4, 0.0, &seed, pts + n);
	n += make_points(&c, FIT_COLL_ALLTOALL, 8, 2, 0.0, &seed, pts + n);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTER, &c, &f, &err), "%s", err.message);
	ck_assert_rel(f.bandwidth_Bps, 2.5e9, 1e-9);
	ck_assert_rel(f.a2a_bandwidth_Bps, 1.5625e9, 1e-9);
	ck_assert_rel(f.half_size_bytes, 262144, 1e-6);
	ck_assert(f.mape < 1e-9);
	applied = c;
	applied.gemm_interp = NULL;
	applied.inter.all_to_all_efficiency = 0.0;
	fit_link_apply(&f, &applied);
	ck_assert_rel(applied.inter.efficiency, 0.8, 1e-9);
	ck_assert_rel(applied.inter.all_to_all_efficiency, 0.5, 1e-9);

	/* All-to-alls alone (no fixed cost: one step count cannot tell it):
	 * alpha and their bandwidth; the link's efficiency is the base's. */
	c.intra.collective_latency_s = 0.0;
	n = make_points(&c, FIT_COLL_ALLTOALL, 4, 1, 0.0, &seed, pts);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err), "%s", err.message);
	ck_assert(!f.bandwidth_fitted);
	ck_assert_double_eq(f.bandwidth_Bps, 0.0);
	ck_assert_int_eq(f.params, 2);
	ck_assert_rel(f.a2a_bandwidth_Bps, 6e10, 1e-9);
	ck_assert_rel(f.latency_s, 1e-6, 1e-9);
	applied = c;
	applied.gemm_interp = NULL;
	applied.intra.efficiency = 0.9;
	fit_link_apply(&f, &applied);
	ck_assert_rel(applied.intra.efficiency, 0.9, 1e-15);
	ck_assert_rel(applied.intra.all_to_all_efficiency, 0.6, 1e-9);
	/* No line rate (fit-logs without --cluster): the all-to-all bandwidth
	 * is the rate, both efficiencies 1. */
	applied.intra.bandwidth_Bps = 0.0;
	fit_link_apply(&f, &applied);
	ck_assert_rel(applied.intra.bandwidth_Bps, 6e10, 1e-9);
	ck_assert_double_eq(applied.intra.efficiency, 1.0);
	ck_assert_rel(applied.intra.all_to_all_efficiency, 1.0, 1e-9);

	/* At 1 % noise the all-to-all bandwidth is within 2 standard errors. */
	c.intra.collective_latency_s = 8e-6;
	n = make_points(&c, FIT_COLL_ALLREDUCE, 4, 1, 0.01, &seed, pts);
	n += make_points(&c, FIT_COLL_ALLGATHER, 4, 1, 0.01, &seed, pts + n);
	n += make_points(&c, FIT_COLL_ALLTOALL, 4, 1, 0.01, &seed, pts + n);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err), "%s", err.message);
	ck_assert_msg(fabs(f.a2a_bandwidth_Bps - 6e10) < 2 * f.a2a_bandwidth_se, "%g +- %g", f.a2a_bandwidth_Bps,
		      f.a2a_bandwidth_se);
	ck_assert(f.a2a_bandwidth_se > 0 && f.a2a_mape > 0.001 && f.a2a_mape < 0.01);
	cluster_release(&c);
}
END_TEST

/*
 * fit_link_apply() by hand: a line rate below a fitted bandwidth is
 * raised to the fastest one. The toy's 100 GB/s NVLink with a ring fit of
 * 80 GB/s and an all-to-all one of 120 GB/s: the rate becomes 120 GB/s,
 * efficiency 80/120 = 2/3, all_to_all_efficiency 1. A ring fit alone
 * keeps the base's all-to-all bandwidth: 0.6 of 100 GB/s = 60 GB/s is
 * 0.5 of a rate raised to 120 GB/s.
 */
START_TEST(test_link_a2a_apply)
{
	struct fit_link_result r = { .level = FIT_LINK_INTRA, .bandwidth_fitted = true, .bandwidth_Bps = 8e10,
				     .a2a_points = 5, .a2a_bandwidth_Bps = 1.2e11, .latency_s = 1e-6 };
	struct cluster c;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	fit_link_apply(&r, &c);
	ck_assert_rel(c.intra.bandwidth_Bps, 1.2e11, 1e-15);
	ck_assert_rel(c.intra.efficiency, 2.0 / 3.0, 1e-15);
	ck_assert_rel(c.intra.all_to_all_efficiency, 1.0, 1e-15);
	cluster_release(&c);
	test_load_cluster(&c, TOY_CLUSTER_YAML);
	c.intra.all_to_all_efficiency = 0.6;
	r.bandwidth_Bps = 1.2e11;
	r.a2a_points = 0;
	fit_link_apply(&r, &c);
	ck_assert_rel(c.intra.bandwidth_Bps, 1.2e11, 1e-15);
	ck_assert_rel(c.intra.efficiency, 1.0, 1e-15);
	ck_assert_rel(c.intra.all_to_all_efficiency, 0.5, 1e-15);
	cluster_release(&c);
}
END_TEST

START_TEST(test_link_errors)
{
	struct fit_link_point pts[64];
	struct fit_link_result f;
	struct plan_error err;
	struct cluster c;
	unsigned seed = 3;
	int n;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	n = make_points(&c, FIT_COLL_ALLREDUCE, 8, 2, 0.0, &seed, pts);
	plan_error_clear(&err);
	ck_assert(!fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "one node"));
	ck_assert(!fit_link(pts, 2, FIT_LINK_INTER, &c, &f, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "cannot give"));
	ck_assert(!fit_link(pts, 0, FIT_LINK_INTER, &c, &f, &err));
	n = make_points(&c, FIT_COLL_ALLREDUCE, 4, 1, 0.0, &seed, pts);
	for (int i = 0; i < n; i++)
		pts[i].time_s = 1e-3 / (i + 1); /* shrinking with the size */
	ck_assert(!fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "do not grow"));
	pts[0].ranks = 1;
	ck_assert(!fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "point 1"));
	/* One all-to-all point beside the link's: no error for its bandwidth. */
	n = make_points(&c, FIT_COLL_ALLREDUCE, 4, 1, 0.0, &seed, pts);
	n += make_points(&c, FIT_COLL_ALLTOALL, 4, 1, 0.0, &seed, pts + n);
	ck_assert(!fit_link(pts, n - 10, FIT_LINK_INTRA, &c, &f, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "1 all-to-all point cannot"));
	/* All-to-all times under the link's 3 steps of 1 us: no bandwidth. */
	for (int i = n - 11; i < n; i++)
		pts[i].time_s = 1e-7;
	ck_assert(!fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "no all-to-all bandwidth"));
	cluster_release(&c);
}
END_TEST

/* The sample logs were made at intra 360 GB/s, 1.1 us (make-samples.py). */
START_TEST(test_link_sample_logs)
{
	static const char *const files[] = { "nccl/all_reduce_perf-8xh100.log", "nccl/all_gather_perf-8xh100.log" };
	struct fit_link_point *pts = NULL;
	struct fit_link_result f;
	struct plan_error err;
	struct nccl_log log;
	struct cluster c;
	char path[PATH_MAX];
	int n = 0, cap = 0;

	setenv("PLAN_CLI_PATH", getenv("PLAN_TEST_SOURCE_ROOT") ? getenv("PLAN_TEST_SOURCE_ROOT") : ".", 1);
	profile_path_init(NULL);
	test_load_profile(PROFILE_CLUSTER, "dgx-h100", &c);
	plan_error_clear(&err);
	for (int i = 0; i < 2; i++) {
		data_path(path, sizeof(path), files[i]);
		ck_assert_msg(nccl_log_load(path, &log, &err), "%s", err.message);
		ck_assert(nccl_log_points(&log, 0, &pts, &n, &cap, &err));
		nccl_log_release(&log);
	}
	ck_assert_int_eq(n, 55);
	ck_assert_msg(fit_link(pts, n, FIT_LINK_INTRA, &c, &f, &err), "%s", err.message);
	ck_assert(fabs(f.bandwidth_Bps - 360e9) < 2 * f.bandwidth_se);
	ck_assert(fabs(f.latency_s - 1.1e-6) < 2 * f.latency_se);
	ck_assert(f.mape < 0.02);
	/* Applied to dgx-h100 (450 GB/s): efficiency 0.8. */
	fit_link_apply(&f, &c);
	ck_assert_rel(c.intra.efficiency, 0.8, 0.01);
	free(pts);
	cluster_release(&c);
}
END_TEST

/*
 * The all-to-all sample logs were made at all_to_all_efficiency 0.6 of
 * the NVLink's 450 GB/s and 0.5 of the 50 GB/s NIC share (make-samples.py,
 * +-3 % wobble). Their 1 GiB rows by hand: on 8 GPUs 7 x 1.1 us + 7/8 x
 * 1073741824 B / 270e9 B/s = 7.7 + 3479.9 = 3487.6 us (the log: 3541.41);
 * on 16 over 2 nodes 7 x 3 us + 8 x 5 us + 8/16 x 1073741824 B / (25e9 B/s
 * x 67108864 / (67108864 + 65536)) = 61 + 21495.9 = 21556.9 us (the log:
 * 21069.21). Fitted beside the ring logs with sample-cluster.yaml, the
 * efficiencies come back.
 */
START_TEST(test_link_a2a_sample_logs)
{
	static const char *const intra[] = { "nccl/all_reduce_perf-8xh100.log", "nccl/all_gather_perf-8xh100.log",
					     "nccl/alltoall_perf-8xh100.log" };
	static const char *const inter[] = { "nccl/all_reduce_perf-2x8xh100.log", "nccl/all_reduce_perf-4x8xh100.log",
					     "nccl/alltoall_perf-2x8xh100.log" };
	const char *const *sets[] = { intra, inter };
	static const double a2a_Bps[] = { 270e9, 25e9 }, hand_s[] = { 3487.6e-6, 21556.9e-6 };
	static const double eff[] = { 0.6, 0.5 };
	struct fit_link_point *pts = NULL;
	struct fit_link_result f;
	struct plan_error err;
	struct nccl_log log;
	struct cluster c;
	char path[PATH_MAX];

	setenv("PLAN_CLI_PATH", getenv("PLAN_TEST_SOURCE_ROOT") ? getenv("PLAN_TEST_SOURCE_ROOT") : ".", 1);
	profile_path_init(NULL);
	for (int level = 0; level < 2; level++) {
		int n = 0, cap = 0;

		data_path(path, sizeof(path), "nccl/sample-cluster.yaml");
		plan_error_clear(&err);
		ck_assert_msg(cluster_load_file(&c, path, &err), "%s", err.message);
		for (int i = 0; i < 3; i++) {
			data_path(path, sizeof(path), sets[level][i]);
			ck_assert_msg(nccl_log_load(path, &log, &err), "%s", err.message);
			ck_assert(nccl_log_points(&log, 0, &pts, &n, &cap, &err));
			nccl_log_release(&log);
		}
		/* The last row of the all-to-all log is 8 GiB, the 1 GiB one three before. */
		ck_assert_double_eq(pts[n - 4].bytes, 1073741824.0);
		ck_assert_msg(fabs(pts[n - 4].time_s / hand_s[level] - 1) < 0.03, "%g s", pts[n - 4].time_s);
		ck_assert_msg(fit_link(pts, n, level, &c, &f, &err), "%s", err.message);
		ck_assert_int_eq(f.a2a_points, 24);
		ck_assert_msg(fabs(f.a2a_bandwidth_Bps - a2a_Bps[level]) < 2 * f.a2a_bandwidth_se, "%g +- %g",
			      f.a2a_bandwidth_Bps, f.a2a_bandwidth_se);
		ck_assert(f.a2a_mape < 0.02);
		fit_link_apply(&f, &c);
		ck_assert_rel(level == FIT_LINK_INTRA ? c.intra.all_to_all_efficiency : c.inter.all_to_all_efficiency,
			      eff[level], 0.01);
		ck_assert_rel(level == FIT_LINK_INTRA ? c.intra.efficiency : c.inter.efficiency, 0.8, 0.01);
		free(pts);
		pts = NULL;
		cluster_release(&c);
	}
}
END_TEST

/* ---------------------------------------------------------- GEMM fit */

/* The toy GPU (100 TFLOPS, eff_max 0.5) with a 5 us overhead and an fp8 peak. */
static void
toy_gpu(struct gpu *g)
{
	struct cluster c;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	*g = c.gpu;
	cluster_release(&c);
	g->gemm_overhead_s = 5e-6;
	g->peak_flops_fp8 = 200e12;
	g->fp8_gemm_ratio = 0.8;
}

static int
make_gemms(const struct gpu *g, double amp, unsigned *seed, struct fit_gemm_point *out)
{
	static const double shapes[][3] = {
		{ 256, 256, 256 }, { 512, 512, 512 }, { 1024, 1024, 1024 }, { 2048, 2048, 2048 },
		{ 4096, 4096, 4096 }, { 8192, 1024, 8192 }, { 4096, 14336, 4096 }, { 65536, 65536, 16 },
	};
	int n = 0;

	for (int dt = 0; dt < FIT_GEMM_DTYPE_COUNT; dt++)
		for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++, n++) {
			out[n] = (struct fit_gemm_point){ shapes[i][0], shapes[i][1], shapes[i][2], dt, 0 };
			out[n].time_s = fit_gemm_model_time(g, &out[n]) * (1.0 + wobble(seed, amp));
		}
	return n;
}

START_TEST(test_gemm_by_hand)
{
	struct fit_gemm_point p = { 4096, 4096, 4096, FIT_GEMM_BF16, 0 };
	struct gpu g;

	toy_gpu(&g);
	/* 2 x 4096^3 = 1.374e11 FLOPs at 0.5 x 1e14 = 2748.8 us, + 5 us. */
	ck_assert_double_eq_tol(fit_gemm_model_time(&g, &p), 2 * pow(4096, 3) / 5e13 + 5e-6, 1e-12);
	/* fp8: (F / (2e14 x 0.5) + 5 us) / 0.8 = (1374.4 + 5) / 0.8 us. */
	p.dtype = FIT_GEMM_FP8;
	ck_assert_double_eq_tol(fit_gemm_model_time(&g, &p), (2 * pow(4096, 3) / 1e14 + 5e-6) / 0.8, 1e-12);
}
END_TEST

/* The toy GPU and its GEMMs, noise-free. */
struct gemm_case {
	struct fit_gemm_point pts[32];
	struct fit_gemm_result f;
	struct plan_error err;
	struct gpu g;
	unsigned seed;
};

static int
gemm_case_init(struct gemm_case *t)
{
	t->seed = 5;
	toy_gpu(&t->g);
	plan_error_clear(&t->err);
	return make_gemms(&t->g, 0.0, &t->seed, t->pts);
}

START_TEST(test_gemm_recovers)
{
	struct gemm_case t;
	int n = gemm_case_init(&t);

	ck_assert_msg(fit_gemm(t.pts, n, &t.g, &t.f, &t.err), "%s", t.err.message);
	ck_assert_rel(t.f.efficiency_max, 0.5, 1e-9);
	ck_assert_rel(t.f.overhead_s, 5e-6, 1e-6);
	ck_assert_rel(t.f.fp8_ratio, 0.8, 1e-9);
	/* 65536 x 65536 x 16: 8.6 GB through HBM at 1e12 B/s, 8.6 ms > 2.75 ms of compute. */
	ck_assert_int_eq(t.f.memory_bound, 3);
	ck_assert_int_eq(t.f.points, 14);
	ck_assert_int_eq(t.f.fp8_points, 7);
	ck_assert(t.f.mape < 1e-9);
	n = make_gemms(&t.g, 0.02, &t.seed, t.pts);
	ck_assert_msg(fit_gemm(t.pts, n, &t.g, &t.f, &t.err), "%s", t.err.message);
	ck_assert_msg(fabs(t.f.efficiency_max - 0.5) < 2 * t.f.efficiency_max_se, "%g +- %g", t.f.efficiency_max,
		      t.f.efficiency_max_se);
	ck_assert_msg(fabs(t.f.overhead_s - 5e-6) < 2 * t.f.overhead_se, "%g +- %g", t.f.overhead_s, t.f.overhead_se);
	ck_assert_msg(fabs(t.f.fp8_ratio - 0.8) < 2 * t.f.fp8_ratio_se, "%g +- %g", t.f.fp8_ratio, t.f.fp8_ratio_se);
}
END_TEST

/* fit-logs --gemm inverts the wave factor and the power-limited clock
 * (compute_gemm_factor): GEMMs timed on a 132-SM GPU held at 500 W of
 * 700 give back the GPU's eff_max and overhead. */
START_TEST(test_gemm_waves_and_power)
{
	struct gemm_case t;
	struct fit_gemm_point p = { 4096, 1280, 8192, FIT_GEMM_BF16, 0 };
	int n;

	gemm_case_init(&t);
	t.g.sm_count = 132;
	t.g.gemm_tile_m = 128;
	t.g.gemm_tile_n = 256;
	t.g.rated_power_W = 700;
	t.g.power_limit_W = 500;
	/* By hand: wave factor 320/392 (test-gpu.c: 320 tiles of 128 x 128
	 * in 3 waves against the square GEMM's 392), clock (5/7)^(1/3):
	 * t = (2 x 4096 x 1280 x 8192 / (1e14 x 0.5) + 5 us) / (0.81633 x
	 * 0.89390) = (1717.99 + 5) us / 0.72973 = 2361.1 us. */
	ck_assert_double_eq_tol(fit_gemm_model_time(&t.g, &p),
				(2.0 * 4096 * 1280 * 8192 / 5e13 + 5e-6) / (320.0 / 392.0 * cbrt(5.0 / 7.0)), 1e-12);
	n = make_gemms(&t.g, 0.0, &t.seed, t.pts);
	ck_assert_msg(fit_gemm(t.pts, n, &t.g, &t.f, &t.err), "%s", t.err.message);
	ck_assert_rel(t.f.efficiency_max, 0.5, 1e-9);
	ck_assert_rel(t.f.overhead_s, 5e-6, 1e-6);
	ck_assert_rel(t.f.fp8_ratio, 0.8, 1e-9);
}
END_TEST

START_TEST(test_gemm_errors)
{
	struct gemm_case t;
	int n = gemm_case_init(&t);

	ck_assert(!fit_gemm(t.pts, 2, &t.g, &t.f, &t.err));
	ck_assert_ptr_nonnull(strstr(t.err.message, "cannot give"));
	for (int i = 0; i < n; i++)
		t.pts[i].time_s /= 4; /* eff_max 2: the wrong GPU */
	ck_assert(!fit_gemm(t.pts, n, &t.g, &t.f, &t.err));
	ck_assert_ptr_nonnull(strstr(t.err.message, "above 1"));
	t.g.peak_flops_fp8 = 0;
	ck_assert(!fit_gemm(t.pts, n, &t.g, &t.f, &t.err));
	ck_assert_ptr_nonnull(strstr(t.err.message, "no fp8 peak"));
}
END_TEST

/* The header-required CSV, its sample, and malformed files. */
/* gemm_log_load of @text, written to a temporary file. */
static bool
gemm_load_text(const char *text, struct fit_gemm_point **pts, int *n, struct plan_error *err)
{
	char tmpl[] = "/tmp/test-gemm-XXXXXX";
	int fd = mkstemp(tmpl);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	bool ok;

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	plan_error_clear(err);
	ok = gemm_log_load(tmpl, pts, n, err);
	unlink(tmpl);
	return ok;
}

START_TEST(test_gemm_csv)
{
	static const struct { const char *text; int line; const char *what; } cases[] = {
		{ "m,n,k,dtype\n1,2,3,bf16\n", 1, "missing column 'seconds'" },
		{ "1,2,3,bf16,1e-3\n", 1, "unknown column '1'" },
		{ "m,n,k,dtype,seconds\n1,2,3,int8,1e-3\n", 2, "unknown dtype 'int8'" },
		{ "m,n,k,dtype,seconds\n1,2,3,bf16,-1\n", 2, "'seconds'" },
		{ "m,n,k,dtype,seconds\n1.5,2,3,bf16,1\n", 2, "whole number" },
		{ "m,n,k,dtype,seconds\n1,2,3,bf16\n", 2, "5 columns" },
		{ "m,n,k,dtype,seconds\n", 1, "no GEMM rows" },
		{ "m,n,k,dtype,seconds,m\n", 1, "more than" },
	};
	struct fit_gemm_point *pts;
	struct plan_error err;
	char path[PATH_MAX];
	int n;

	data_path(path, sizeof(path), "gemm/h100-gemm.csv");
	plan_error_clear(&err);
	ck_assert_msg(gemm_log_load(path, &pts, &n, &err), "%s", err.message);
	ck_assert_int_eq(n, 36);
	ck_assert_int_eq(pts[0].dtype, FIT_GEMM_BF16);
	free(pts);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(!gemm_load_text(cases[i].text, &pts, &n, &err), "case %zu loaded", i);
		ck_assert_msg(strstr(err.message, cases[i].what), "case %zu: '%s'", i, err.message);
		ck_assert_int_eq(err.line, cases[i].line);
		ck_assert_ptr_null(pts);
	}
}
END_TEST

/* ------------------------------------------ GEMM waves (issue 25, item 2) */

/*
 * GEMMs around the wave boundaries of 114 SMs and of 132 (K 8192, so
 * compute-bound): M = 128 a, N = 128 b gives a x b tiles of 128 x 128.
 * Tile counts 96, 114, 115, 116, 120, 132, 133, 140, 228, 230 and the
 * squares that pin eff_max and the overhead.
 */
static int
make_wave_gemms(const struct gpu *g, double amp, unsigned *seed, struct fit_gemm_point *out)
{
	static const int ab[][2] = {
		{ 8, 12 }, { 6, 19 }, { 5, 23 }, { 4, 29 }, { 10, 12 }, { 12, 11 }, { 7, 19 }, { 10, 14 },
		{ 12, 19 }, { 10, 23 }, { 3, 38 }, { 9, 13 }, { 11, 11 }, { 16, 16 }, { 24, 24 }, { 32, 32 },
	};
	int n = 0;

	for (size_t i = 0; i < sizeof(ab) / sizeof(ab[0]); i++, n++) {
		out[n] = (struct fit_gemm_point){ 128.0 * ab[i][0], 128.0 * ab[i][1], 8192, FIT_GEMM_BF16, 0 };
		out[n].time_s = fit_gemm_model_time(g, &out[n]) * (1.0 + wobble(seed, amp));
	}
	out[n] = (struct fit_gemm_point){ 1024, 1024, 1024, FIT_GEMM_BF16, 0 };
	out[n].time_s = fit_gemm_model_time(g, &out[n]) * (1.0 + wobble(seed, amp));
	return n + 1;
}

/*
 * fit-logs --gemm finds the SM count and tile a log was timed with:
 * GEMMs made on the toy GPU with 114 SMs (an H100 PCIe's) and cuBLAS's
 * 128 x 128 tile, fitted from the profile's 132 SMs and 128 x 256.
 * One point's wave loss by hand: M 1536, N 1408 (12 x 11 = 132 tiles),
 * K 8192 on 114 SMs is 2 waves, 66 tiles a wave; the square GEMM of the
 * same FLOPs, side (1536 x 1408 x 8192)^(1/3) = 2606.6, is 21 x 21 =
 * 441 tiles in 4 waves, 110.25 a wave: factor 66 / 110.25 = 0.5986.
 */
/*
 * A GEMM CSV's errors at the field's first byte, counted by hand: CRLF
 * ends a line once, a blank line makes no record but is a line, blanks
 * before a field are not the field, a quoted field starts at its quote,
 * and a byte-order mark is not counted.
 */
START_TEST(test_gemm_csv_columns)
{
	static const struct { const char *text; int line, column; const char *what; } cases[] = {
		{ "m,n,k,dtype,seconds\n1,2,3,int8,1e-3\n", 2, 7, "unknown dtype" },
		{ "m,n,k,dtype,seconds\r\n\r\n1, 2,3,bf16,x\r\n", 3, 13, "'seconds'" },
		{ "m,n,k,dtype,seconds\n\"1\",\t2.5,3,bf16,1\n", 2, 6, "whole number" },
		{ "\xef\xbb\xbfm,n,k,dtype,seconds,m\n", 1, 21, "more than" },
		{ "m,n,k,dtype,second\n", 1, 13, "unknown column 'second'" },
		{ "m,n,k,dtype,seconds\n1,2,3,bf16\n", 2, 0, "5 columns" },
	};
	struct fit_gemm_point *pts;
	struct plan_error err;
	int n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(!gemm_load_text(cases[i].text, &pts, &n, &err), "case %zu loaded", i);
		ck_assert_msg(strstr(err.message, cases[i].what), "case %zu: '%s'", i, err.message);
		ck_assert_msg(err.line == cases[i].line && err.column == cases[i].column, "case %zu: at %d:%d, expected %d:%d",
			      i, err.line, err.column, cases[i].line, cases[i].column);
	}
}
END_TEST

START_TEST(test_gemm_wave_search)
{
	struct gemm_case t;
	struct cluster c;
	struct gpu truth;
	double worst = 0.0;
	int n;

	gemm_case_init(&t);
	truth = t.g;
	truth.sm_count = 114;
	truth.gemm_tile_m = truth.gemm_tile_n = 128;
	t.g.sm_count = 132;
	t.g.gemm_tile_m = 128;
	t.g.gemm_tile_n = 256;
	n = make_wave_gemms(&truth, 0.0, &t.seed, t.pts);
	ck_assert_msg(fit_gemm(t.pts, n, &t.g, &t.f, &t.err), "%s", t.err.message);
	ck_assert(t.f.waves_searched && t.f.waves_changed);
	ck_assert_int_eq(t.f.sm_count, 114);
	ck_assert_int_eq(t.f.tile_m, 128);
	ck_assert_int_eq(t.f.tile_n, 128);
	ck_assert_int_eq(t.f.candidates, 6 * (264 - 16 + 1) + 1); /* and sm_count 0 */
	ck_assert(t.f.sm_count_lo <= 114 && t.f.sm_count_hi >= 114 && t.f.sm_count_hi - t.f.sm_count_lo <= 2);
	ck_assert_rel(t.f.efficiency_max, 0.5, 1e-9);
	ck_assert_rel(t.f.overhead_s, 5e-6, 1e-6);
	ck_assert(t.f.mape < 1e-9 && t.f.mape_no_waves > 0.05);
	/* The loss reported is the chosen model's: the hand-worked point among them. */
	memset(&c, 0, sizeof(c));
	c.nodes = c.gpus_per_node = 1;
	c.gpu = truth;
	ck_assert_double_eq_tol(cluster_gemm_wave_factor(&c, 1536, 1408, 8192, 1), 66.0 / 110.25, 1e-12);
	for (int i = 0; i < n; i++)
		worst = fmax(worst, 1.0 - cluster_gemm_wave_factor(&c, t.pts[i].m, t.pts[i].n, t.pts[i].k, 1));
	ck_assert_double_eq_tol(t.f.wave_loss_max, worst, 1e-12);
	ck_assert(t.f.partial_wave > 0 && t.f.wave_loss_max >= 1.0 - 66.0 / 110.25 - 1e-12);
	/* Applied: the GPU predicts the log. */
	fit_gemm_apply(&t.f, &t.g);
	ck_assert_int_eq(t.g.sm_count, 114);
	ck_assert_rel(fit_gemm_model_time(&t.g, &t.pts[1]), t.pts[1].time_s, 1e-9);
	/* With 1 % noise the same values, and the errors still bracket the truth. */
	t.g.sm_count = 132;
	t.g.gemm_tile_m = 128;
	t.g.gemm_tile_n = 256;
	n = make_wave_gemms(&truth, 0.01, &t.seed, t.pts);
	ck_assert_msg(fit_gemm(t.pts, n, &t.g, &t.f, &t.err), "%s", t.err.message);
	printf("# waves at 1 %% noise: %d SMs (%d to %d), tile %d x %d, %d of 6 tiles alike; MAPE %.2f %%, "
	       "%.2f %% without waves\n", t.f.sm_count, t.f.sm_count_lo, t.f.sm_count_hi, t.f.tile_m, t.f.tile_n,
	       t.f.tiles_alike, 100 * t.f.mape, 100 * t.f.mape_no_waves);
	ck_assert(t.f.waves_changed && t.f.sm_count_lo <= 114 && t.f.sm_count_hi >= 114);
	ck_assert(t.f.tile_m == 128 && t.f.tile_n == 128);
	ck_assert_msg(fabs(t.f.efficiency_max - 0.5) < 2 * t.f.efficiency_max_se, "%g +- %g", t.f.efficiency_max,
		      t.f.efficiency_max_se);
}
END_TEST

/* A log that cannot tell the SM count (square GEMMs, 2 % noise) keeps the GPU's; one without
 * wave loss gives sm_count 0. */
START_TEST(test_gemm_waves_kept)
{
	struct gemm_case t;
	int n;

	gemm_case_init(&t);
	t.g.sm_count = 132;
	t.g.gemm_tile_m = 128;
	t.g.gemm_tile_n = 256;
	n = make_gemms(&t.g, 0.02, &t.seed, t.pts);
	ck_assert_msg(fit_gemm(t.pts, n, &t.g, &t.f, &t.err), "%s", t.err.message);
	ck_assert(t.f.waves_searched && !t.f.waves_changed);
	ck_assert(t.f.sm_count == 132 && t.f.tile_m == 128 && t.f.tile_n == 256);
	ck_assert(t.f.sm_count_lo < 132 && t.f.sm_count_hi > 132);
	/* A log made without wave loss (a library that hides its waves,
	 * stream-K) at the wave boundaries: sm_count 0 fits it best. */
	{
		struct gpu flat = t.g;

		flat.sm_count = 0;
		n = make_wave_gemms(&flat, 0.0, &t.seed, t.pts);
		ck_assert_msg(fit_gemm(t.pts, n, &t.g, &t.f, &t.err), "%s", t.err.message);
		ck_assert(t.f.waves_changed && t.f.sm_count == 0 && t.f.partial_wave == 0);
		ck_assert(t.f.mape < 1e-9);
		fit_gemm_apply(&t.f, &t.g);
		ck_assert_int_eq(t.g.sm_count, 0);
	}
	/* Without waves in the profile nothing is searched. */
	t.g.sm_count = 0;
	ck_assert_msg(fit_gemm(t.pts, n, &t.g, &t.f, &t.err), "%s", t.err.message);
	ck_assert(!t.f.waves_searched && t.f.candidates == 0);
}
END_TEST

static Suite *
fit_logs_suite(void)
{
	Suite *s = suite_create("fit-logs");
	TCase *tc = tcase_create("fit-logs");

	tcase_add_test(tc, test_sample_logs);
	tcase_add_test(tc, test_units);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_noise_lines);
	tcase_add_test(tc, test_link_model_by_hand);
	tcase_add_test(tc, test_link_intra_recovers);
	tcase_add_test(tc, test_link_inter_recovers);
	tcase_add_test(tc, test_link_collective_latency);
	tcase_add_test(tc, test_link_a2a_model_by_hand);
	tcase_add_test(tc, test_link_a2a_recovers);
	tcase_add_test(tc, test_link_a2a_apply);
	tcase_add_test(tc, test_link_errors);
	tcase_add_test(tc, test_link_sample_logs);
	tcase_add_test(tc, test_link_a2a_sample_logs);
	tcase_add_test(tc, test_gemm_by_hand);
	tcase_add_test(tc, test_gemm_recovers);
	tcase_add_test(tc, test_gemm_waves_and_power);
	tcase_add_test(tc, test_gemm_errors);
	tcase_add_test(tc, test_gemm_csv);
	tcase_add_test(tc, test_gemm_csv_columns);
	tcase_add_test(tc, test_gemm_wave_search);
	tcase_add_test(tc, test_gemm_waves_kept);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(fit_logs_suite)
