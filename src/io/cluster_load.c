#include <math.h>
#include <stddef.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>

#include "plan/cluster.h"
#include "io/profile_load.h"

#define OFF(f) offsetof(struct cluster, f)

static const struct schema_key intra_schema[] = {
	{ .key = "bandwidth", .type = SCHEMA_QUANTITY, .unit = UNIT_BANDWIDTH, .required = true,
	  .offset = offsetof(struct cluster_intra, bandwidth_Bps), .min = UNITS_MIN_BANDWIDTH_BPS, .max = 1e18,
	  .help = "per GPU, per direction (NVLink/NVSwitch or PCIe)" },
	{ .key = "latency", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = offsetof(struct cluster_intra, latency_s), .min = 0, .max = 1, .def = "3 us",
	  .help = "per collective step (alpha)" },
	{ .key = "collective_latency", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = offsetof(struct cluster_intra, collective_latency_s), .min = 0, .max = 1, .def = "0 s",
	  .help = "fixed cost of each collective besides its steps (NCCL's base latency, the kernel launch): "
		  "the intercept of a fit t = a + (n-1) alpha + bytes / bandwidth to nccl-tests" },
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
	  .offset = offsetof(struct cluster_inter, nic_bandwidth_Bps), .min = UNITS_MIN_BANDWIDTH_BPS, .max = 1e18,
	  .help = "per NIC, per direction" },
	{ .key = "latency", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = offsetof(struct cluster_inter, latency_s), .min = 0, .max = 1, .def = "5 us",
	  .help = "per collective step (alpha)" },
	{ .key = "efficiency", .type = SCHEMA_NUMBER,
	  .offset = offsetof(struct cluster_inter, efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .def = "0.85", .help = "fraction of NIC bandwidth that NCCL reaches for large messages" },
	{ .key = "all_to_all_efficiency", .type = SCHEMA_NUMBER,
	  .offset = offsetof(struct cluster_inter, all_to_all_efficiency), .min = UNITS_MIN_EFFICIENCY, .max = 1,
	  .help = "fraction of NIC bandwidth that NCCL's all-to-all reaches for large messages; absent: "
		  "efficiency" },
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
	  .offset = OFF(storage_bandwidth_Bps), .min = UNITS_MIN_BANDWIDTH_BPS, .max = 1e18, .def = "20 Gbit/s",
	  .help = "remote persistent storage that checkpoints go to, for the whole job (Gemini's FSx: 20 Gbit/s)" },
	{ .key = "pcie_bandwidth", .type = SCHEMA_QUANTITY, .unit = UNIT_BANDWIDTH,
	  .offset = OFF(pcie_bandwidth_Bps), .min = UNITS_MIN_BANDWIDTH_BPS, .max = 1e18, .def = "25 GB/s",
	  .help = "one GPU to host memory, effective (PCIe Gen4 x16: about 25 of its 32 GB/s)" },
	{ .key = "restart_time", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME,
	  .offset = OFF(restart_s), .min = 0, .min_exclusive = true, .max = 1e7, .def = "120 s",
	  .help = "restarting the job after a failure: a replacement machine, the processes, NCCL" },
	{ 0 },
};

static bool
cluster_finish(struct cluster *c, struct ytree *t, struct plan_error *err)
{
	const struct curve *curve = &c->gpu.gemm_efficiency;

	if (!gpu_check(&c->gpu, t, "gpu.", err))
		return false;
	if (curve->n == 0)
		return true;
	for (int i = 0; i < curve->n; i++)
		c->gemm_log_x[i] = log10(curve->x[i]);
	/* Steffen's method is monotone between points: no overshoot above 1. */
	c->gemm_interp = gsl_interp_alloc(curve->n >= 3 ? gsl_interp_steffen : gsl_interp_linear,
					  (size_t)curve->n);
	if (!c->gemm_interp)
		return plan_error_set(err, PLAN_ERR_NOMEM, t->file, 0, 0, "out of memory");
	if (gsl_interp_init(c->gemm_interp, c->gemm_log_x, curve->y, (size_t)curve->n) != GSL_SUCCESS) {
		cluster_release(c);
		return ytree_error(t, ytree_find_path(t, "gpu.gemm_efficiency"), err,
				   "gpu.gemm_efficiency cannot be interpolated");
	}
	return true;
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
