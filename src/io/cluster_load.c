#include <stddef.h>
#include <string.h>

#include "plan/cluster.h"
#include "io/profile_load.h"

#define OFF(f) offsetof(struct cluster, f)

static const struct schema_key intra_schema[] = {
	{ .key = "bandwidth", .type = SCHEMA_QUANTITY, .unit = UNIT_BANDWIDTH, .required = true,
	  .offset = offsetof(struct cluster_intra, bandwidth_Bps), .min = UNITS_MIN_BANDWIDTH_BPS,
	  .max = UNITS_MAX_BANDWIDTH_BPS,
	  .help = "per GPU, per direction (NVLink/NVSwitch or PCIe)" },
	/* Default 3.4 us: NCCL's hwLat[NVLINK][Ring][Simple], the same in every
	 * release from v2.7.3-1 to v2.29.7-1 (src/graph/tuning.cc). */
	{ .key = "latency", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = offsetof(struct cluster_intra, latency_s), .min = 0, .max = 1, .def = "3.4 us",
	  .help = "per collective step (alpha; NCCL's NVLink ring step, src/graph/tuning.cc)" },
	{ .key = "collective_latency", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = offsetof(struct cluster_intra, collective_latency_s), .min = 0, .max = 1, .def = "0 s",
	  .help = "fixed cost of each collective besides its steps (NCCL's base latency, the kernel launch): "
		  "the intercept of a fit t = a + (n-1) alpha + bytes / bandwidth to nccl-tests" },
	/* Default 0.75: nccl-tests bus bandwidth over the NVLink line rate at
	 * large sizes, 0.67-0.82 measured (8 x A100 all-reduce 232.5 of 300
	 * GB/s, NVIDIA/nccl#1048; 8 x H100 ring all-reduce 365-370, reduce-
	 * scatter 360 and all-gather 350 of 450 GB/s, NVIDIA/nccl#1455, #1281;
	 * 8 x B200 all-gather 0.67, all-reduce 0.74, SimuMax @4dcaae5):
	 * framework-data.md Sec. 27. */
	{ .key = "efficiency", .type = SCHEMA_NUMBER,
	  .offset = offsetof(struct cluster_intra, efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .def = "0.75", .help = "fraction of bandwidth that NCCL reaches for large messages (nccl-tests busbw / line rate)" },
	{ .key = "all_to_all_efficiency", .type = SCHEMA_NUMBER,
	  .offset = offsetof(struct cluster_intra, all_to_all_efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .help = "fraction of bandwidth that NCCL's all-to-all reaches for large messages (nccl-tests "
		  "alltoall_perf busbw / line rate); absent: efficiency" },
	{ 0 },
};

static const struct schema_key inter_schema[] = {
	{ .key = "nics_per_node", .type = SCHEMA_INT, .required = true,
	  .offset = offsetof(struct cluster_inter, nics_per_node), .min = 1, .max = 1024,
	  .help = "network interfaces per node used for training traffic" },
	{ .key = "nic_bandwidth", .type = SCHEMA_QUANTITY, .unit = UNIT_BANDWIDTH, .required = true,
	  .offset = offsetof(struct cluster_inter, nic_bandwidth_Bps), .min = UNITS_MIN_BANDWIDTH_BPS,
	  .max = UNITS_MAX_BANDWIDTH_BPS,
	  .help = "per NIC, per direction" },
	/* Default 9.6 us: NCCL's hwLat[NET][Ring][Simple] of v2.7.3-1 to v2.11
	 * and v2.14 to v2.17 (28 us in v2.12-v2.13, 14 us from v2.18.1-1;
	 * src/graph/tuning.cc), the value every bundled InfiniBand cluster
	 * takes. */
	{ .key = "latency", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = offsetof(struct cluster_inter, latency_s), .min = 0, .max = 1, .def = "9.6 us",
	  .help = "per collective step (alpha; NCCL's network ring step, src/graph/tuning.cc)" },
	/* Default 0.85: nccl-tests all-reduce bus bandwidth over the NICs'
	 * line rate measured on A100 clusters with 4 x HDR a node, 0.86 on 2
	 * nodes (NVIDIA/nccl#1048), 0.85 on average over sizes up to 128 MiB
	 * and 0.96 at best on 3 (NVIDIA/nccl-tests#119); NVIDIA's DGX A100 192 of
	 * 200 GB/s (0.96, NVIDIA/nccl#812) and NDR 46-48 of 50 GB/s a NIC
	 * (0.92-0.96, NVIDIA/nccl-tests#290) are higher: framework-data.md
	 * Sec. 27. */
	{ .key = "efficiency", .type = SCHEMA_NUMBER,
	  .offset = offsetof(struct cluster_inter, efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .def = "0.85", .help = "fraction of NIC bandwidth that NCCL reaches for large messages" },
	{ .key = "all_to_all_efficiency", .type = SCHEMA_NUMBER,
	  .offset = offsetof(struct cluster_inter, all_to_all_efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .help = "fraction of NIC bandwidth that NCCL's all-to-all reaches for large messages; absent: "
		  "efficiency" },
	/* Default 64 KiB: Hockney's n_1/2 = r_inf t_0 with t_0 NCCL's 2.7 us
	 * network step of its low-latency protocol (hwLat[NET][Ring][LL],
	 * src/graph/tuning.cc, v2.7.3-1 to v2.29.7-1) and r_inf an HDR NIC's
	 * 25 GB/s: 67.5 kB. nccl-tests on one node count cannot measure it: a
	 * ring's m = M / n makes its cost factor x n x half / bandwidth, a
	 * constant per rank like the step latency (fit_link.h):
	 * framework-data.md Sec. 27. */
	{ .key = "message_half_size", .type = SCHEMA_QUANTITY, .unit = UNIT_SIZE,
	  .offset = offsetof(struct cluster_inter, half_size_bytes), .min = 0, .max = 1e12, .def = "64 KiB",
	  .help = "message size at which a network transfer reaches half its large-message bandwidth "
		  "(bandwidth x m / (m + half)): small messages are slow" },
	{ .key = "net_overhead", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = offsetof(struct cluster_inter, net_overhead_s), .min = 0, .max = 1e-3, .def = "1 us",
	  .help = "the host proxy's cost to post one network operation (NCCL's getNetOverhead(): 1 us on "
		  "Intel hosts, 2 us on AMD; NCCL_NET_OVERHEAD in ns): every intra-node step of a ring that "
		  "spans nodes takes at least 3 times it (Simple protocol)" },
	{ .key = "ring_plateau", .type = SCHEMA_NUMBER,
	  .offset = offsetof(struct cluster_inter, ring_plateau), .min = 1, .max = 4, .def = "1.9",
	  .help = "factor on the latency of a ring all-reduce that spans nodes (NCCL's \"plateau effect of "
		  "ring\", ncclTopoGetAlgoTime() in src/graph/tuning.cc): 1.9 in NCCL 2.7-2.16 and for "
		  "pre-Ampere GPUs after; 1.4 for Ampere and later GPUs from NCCL 2.18 (1.5 for Hopper in 2.17)" },
	{ 0 },
};

const struct schema_key cluster_schema[] = {
	{ .key = "name", .type = SCHEMA_STRING, .required = true, .offset = OFF(name),
	  .size = 64, .help = "profile name" },
	{ .key = "description", .type = SCHEMA_STRING, .offset = OFF(description),
	  .size = 256, .help = "free text" },
	{ .key = "nodes", .type = SCHEMA_INT, .required = true, .offset = OFF(nodes),
	  .min = 1, .max = 1000000, .help = "nodes in the cluster" },
	{ .key = "gpus_per_node", .type = SCHEMA_INT, .required = true, .offset = OFF(gpus_per_node),
	  .min = 1, .max = 1024, .help = "GPUs per node" },
	{ .key = "gpu", .type = SCHEMA_CUSTOM, .required = true, .offset = OFF(gpu), .sub = gpu_schema,
	  .parse = gpu_parse_ref,
	  .help = "the GPU: a GPU profile's name or path (gpus/), a mapping {base: NAME, key: value...} "
		  "that overrides some of its keys, or a full description with the keys below" },
	{ .key = "intra_node", .type = SCHEMA_MAP, .required = true, .offset = OFF(intra),
	  .sub = intra_schema, .help = "links between the GPUs of one node" },
	{ .key = "inter_node", .type = SCHEMA_MAP, .required = true, .offset = OFF(inter),
	  .sub = inter_schema, .help = "the network between nodes" },
	/* Checkpointing (predict --checkpoint-to; defaults in plan/checkpoint.h). */
	{ .key = "storage_bandwidth", .type = SCHEMA_QUANTITY, .unit = UNIT_BANDWIDTH,
	  .offset = OFF(storage_bandwidth_Bps), .min = UNITS_MIN_BANDWIDTH_BPS, .max = UNITS_MAX_BANDWIDTH_BPS,
	  .def = "20 Gbit/s",
	  .help = "remote persistent storage that checkpoints go to, for the whole job (Gemini's FSx: 20 Gbit/s)" },
	/* No default: the GPU's own (gpu.pcie_bandwidth, by generation),
	 * which this overrides where the host differs from the GPU's link
	 * (cluster_pcie_bandwidth_Bps; framework-data.md Sec. 34). */
	{ .key = "pcie_bandwidth", .type = SCHEMA_QUANTITY, .unit = UNIT_BANDWIDTH,
	  .offset = OFF(pcie_bandwidth_Bps), .min = UNITS_MIN_BANDWIDTH_BPS, .max = UNITS_MAX_BANDWIDTH_BPS,
	  .help = "one GPU to host memory, effective, each way, where the host differs from the GPU's own "
		  "link (e.g. GPUs sharing a PCIe switch); absent: gpu.pcie_bandwidth" },
	/* Default 120 s: an estimate between TrainMover's ~20 s with warm
	 * standby machines at 1,024 GPUs (arXiv:2412.12636) and checkpoint-
	 * restart baselines many times longer that include loading the
	 * checkpoint, which checkpoint.c counts apart: framework-data.md
	 * Sec. 27. */
	{ .key = "restart_time", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = OFF(restart_s), .min = 0, .min_exclusive = true, .max = 1e7, .def = "120 s",
	  .help = "restarting the job after a failure: a replacement machine, the processes, NCCL" },
	{ 0 },
};

static bool
cluster_finish(struct cluster *c, struct ytree *t, struct plan_error *err)
{
	if (!gpu_check(&c->gpu, t, "gpu.", err))
		return false;
	switch (cluster_init_gemm_curve(c)) {
	case CLUSTER_CURVE_OK:
		return true;
	case CLUSTER_CURVE_NOMEM:
		return plan_error_set(err, PLAN_ERR_NOMEM, t->file, 0, 0, "out of memory");
	case CLUSTER_CURVE_BAD_CURVE:
	default:
		return ytree_error(t, ytree_find_path(t, "gpu.gemm_efficiency"), err,
				   "gpu.gemm_efficiency cannot be interpolated");
	}
}

static bool
finish_cb(void *obj, struct ytree *t, struct plan_error *err)
{
	return cluster_finish(obj, t, err);
}

static const struct schema_profile cluster_profile = {
	cluster_schema, sizeof(struct cluster), NULL, finish_cb,
};

bool
cluster_load_file(struct cluster *x, const char *path, struct plan_error *err)
{
	return schema_load(&cluster_profile, path, NULL, x, err);
}

bool
cluster_load_string(struct cluster *x, const char *name, const char *text, struct plan_error *err)
{
	return schema_load(&cluster_profile, name, text, x, err);
}
