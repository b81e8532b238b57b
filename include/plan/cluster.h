/* A GPU cluster profile: the GPU, the intra-node and inter-node links. */
#pragma once

#include <stdbool.h>

#include "plan/error.h"
#include "plan/gpu.h"




struct cluster_intra {
	double bandwidth_Bps;  /**< per GPU, per direction */
	double latency_s;      /**< per collective step */
	double collective_latency_s; /**< fixed cost of each collective, besides its steps */
	double efficiency;     /**< achievable fraction of bandwidth_Bps */
	double all_to_all_efficiency; /**< the same for all-to-all; 0: efficiency */
};

struct cluster_inter {
	int nics_per_node;
	double nic_bandwidth_Bps; /**< per NIC, per direction */
	double latency_s;         /**< per collective step */
	double efficiency;        /**< achievable fraction of the NIC bandwidth */
	double all_to_all_efficiency; /**< the same for all-to-all; 0: efficiency */
	double half_size_bytes;   /**< message size that reaches half the bandwidth */
	double net_overhead_s;    /**< host proxy's cost to post one network operation */
	double ring_plateau;      /**< NCCL's latency factor on multi-node ring all-reduce (0: none) */
};

/**
 * A homogeneous cluster. Owns a GSL interpolation object when a GEMM
 * efficiency curve is given: release with cluster_release(), and never
 * copy a loaded struct by value.
 */
struct cluster {
	char name[64];
	char description[256];
	int nodes;
	int gpus_per_node;
	struct gpu gpu;
	struct cluster_intra intra;
	struct cluster_inter inter;
	/* Checkpointing (plan/checkpoint.h; 0: its defaults). */
	double storage_bandwidth_Bps; /**< remote persistent storage, for the whole job */
	double pcie_bandwidth_Bps;    /**< override of gpu.pcie_bandwidth_Bps; 0: the GPU's */
	double restart_s;             /**< restarting the job after a failure */
	/* Derived at load time. */
	double gemm_log_x[CURVE_MAX_POINTS];
	void *gemm_interp; /**< gsl_interp *, owned */
};


/** Free what the cluster owns. Safe to call twice. */
void cluster_release(struct cluster *c);

/** What cluster_set_gpu can fail with. */
enum cluster_curve_status {
	CLUSTER_CURVE_OK,
	CLUSTER_CURVE_NOMEM,     /**< the interpolation object could not be allocated */
	CLUSTER_CURVE_BAD_CURVE, /**< gpu.gemm_efficiency cannot be interpolated */
};

/**
 * Make the derived GEMM-efficiency interpolation of @c from c->gpu's
 * curve (after loading, or after c->gpu was replaced), freeing any
 * earlier one. A GPU without a curve needs none.
 */
enum cluster_curve_status cluster_init_gemm_curve(struct cluster *c);

/** Put @g in place of @c's GPU and remake what derives from it. */
enum cluster_curve_status cluster_set_gpu(struct cluster *c, const struct gpu *g);

/** Total GPUs. */
int cluster_gpus(const struct cluster *c);

/**
 * One GPU's bandwidth to host memory, effective, each way: the cluster's
 * pcie_bandwidth where it sets one (a host that differs from the GPU's
 * own link, e.g. a PCIe switch shared by GPUs), else the GPU's, else
 * (a GPU made in code) GPU_DEFAULT_PCIE_BPS. Every host copy uses it.
 */
double cluster_pcie_bandwidth_Bps(const struct cluster *c);

/** Node NIC bandwidth shared by its GPUs, per GPU (bytes/s, line rate). */
double cluster_nic_share_Bps(const struct cluster *c);

/**
 * The factor on the GEMM efficiency for a GEMM whose smallest dimension
 * is @min_dim elements (the GPU's gemm_shape_efficiency; 1 without one):
 * a skinny GEMM of the same FLOPs fills fewer tiles and runs slower.
 */
double cluster_gemm_shape_factor(const struct cluster *c, double min_dim);

/**
 * Achieved fraction of peak for one GEMM kernel of @flops FLOPs: the
 * measured curve when the profile gives one (interpolated in log10 of
 * the FLOPs, clamped at its ends), else the parametric model
 * eff_max * t_ideal / (t_ideal + overhead).
 */
double cluster_gemm_efficiency(const struct cluster *c, double flops);

/**
 * The factor on a GEMM's efficiency from its last, partial wave of CTA
 * tiles (@batch GEMMs of m x n x k in one grid): the best fill of the
 * GPU's sm_count SMs over its CTA tiles (gemm_tile_m x gemm_tile_n, its
 * transpose and the square half tile), over the fill of the square GEMM
 * of the same FLOPs, at most 1. 1 when the GPU has no sm_count.
 */
double cluster_gemm_wave_factor(const struct cluster *c, double m, double n, double k, double batch);
