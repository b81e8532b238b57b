/*
 * Checkpoints and failure recovery: what a checkpoint of a plan costs,
 * how long recovery takes, and the training time failures waste
 * (Wang et al., "GEMINI: Fast Failure Recovery in Distributed Training
 * with In-Memory Checkpoints", SOSP 2023; Young 1974 and Daly 2006 for
 * the interval of checkpoints to persistent storage).
 */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/error.h"
#include "plan/estimate.h"
#include "plan/model.h"
#include "plan/plan.h"

/** Where checkpoints go. */
enum checkpoint_target {
	CHECKPOINT_NONE,
	CHECKPOINT_CPU,     /**< Gemini: the CPU memory of the machine and of m - 1 peers */
	CHECKPOINT_STORAGE, /**< remote persistent storage (a shared file system, an object store) */
};

/** Target names, indexed by enum checkpoint_target, NULL-terminated. */
extern const char *const checkpoint_target_names[];

/*
 * Defaults, documented in plan-cli(1) and plan-cli-profiles(5). A cluster
 * key that is 0 (a cluster made in code) takes these too.
 */
/** Remote storage: the 20 Gbit/s of Gemini's evaluation (its FSx baseline). */
#define CHECKPOINT_DEFAULT_STORAGE_BPS (20e9 / 8)
/* GPU to host memory: the GPU's pcie_bandwidth (cluster_pcie_bandwidth_Bps). */
/**
 * Restarting the job after a failure: a replacement machine, the processes,
 * NCCL. An estimate: TrainMover (arXiv:2412.12636) restarts a 1,024-GPU job
 * in about 20 s from warm standby machines; restarts without them take
 * longer (docs/research/framework-data.md Sec. 27).
 */
#define CHECKPOINT_DEFAULT_RESTART_S 120.0
/**
 * Mean time between failures of one GPU (with its share of the machine),
 * in hours: Llama 3's 54-day run on 16,384 H100s had 419 unexpected
 * interruptions (Dubey et al. 2024, Sec. 3.3.4): 16384 x 54 x 24 / 419,
 * about 50,700 GPU-hours.
 */
#define CHECKPOINT_DEFAULT_GPU_MTBF_HOURS 50000.0
/** Copies in CPU memory by default (Gemini's m = 2: local and one peer). */
#define CHECKPOINT_DEFAULT_REPLICAS 2

/** What the user asks for; zero members take their defaults. */
struct checkpoint_options {
	int target;                   /**< enum checkpoint_target */
	int every;                    /**< iterations between checkpoints; 0: 1 for cpu, Young-Daly for storage */
	int replicas;                 /**< cpu: copies in CPU memory (local + replicas - 1 peers); 0: default */
	double storage_bandwidth_Bps; /**< 0: the cluster's storage_bandwidth */
	double failures_per_day;      /**< for the whole job; 0: from gpu_mtbf_hours */
	double gpu_mtbf_hours;        /**< 0: CHECKPOINT_DEFAULT_GPU_MTBF_HOURS */
};

/** Zero everything: no checkpoints. */
void checkpoint_options_init(struct checkpoint_options *o);

/** The cost of checkpointing one plan, and what failures take from it. */
struct checkpoint_estimate {
	int target;                  /**< enum checkpoint_target */
	int every;                   /**< iterations between checkpoints */
	int replicas;                /**< copies in CPU memory (cpu), else 0 */
	int machines;                /**< machines (nodes) the plan uses */
	double bytes_per_gpu;        /**< 16-bit weights + optimizer states of the largest stage's GPU */
	double bytes_per_machine;    /**< what one machine checkpoints: its GPUs' states */
	double bytes_total;          /**< one copy of the whole model's states (what storage holds) */
	double gpu_to_cpu_s;         /**< the GPU's states to host memory over PCIe */
	double to_peers_s;           /**< replicas - 1 copies of a machine's states to peers */
	double to_storage_s;         /**< every state to remote storage */
	double network_idle_s;       /**< per iteration: time the inter-node network carries no training traffic */
	double checkpoint_s;         /**< taking one checkpoint (t_ckpt) */
	double overhead_per_iteration_s; /**< what checkpointing adds to an iteration, on average */
	double overhead_fraction;    /**< of the iteration time */
	double interval_s;           /**< between checkpoints */
	double optimal_interval_s;   /**< Young-Daly sqrt(2 delta MTBF) for storage checkpoints */
	double recovery_cpu_s;       /**< states back from a peer's CPU memory and the local one */
	double recovery_storage_s;   /**< states back from remote storage */
	double restart_s;            /**< restarting the job, whatever the copy */
	double cpu_recovery_probability;     /**< cpu: one failed machine still finds a copy in CPU memory */
	double cpu_recovery_probability_two; /**< cpu: two machines failed at once */
	double failures_per_day;     /**< of the whole job */
	double wasted_per_failure_s; /**< expected training time one failure wastes */
	double wasted_fraction;      /**< of wall-clock time: checkpoint overhead and failures */
	double goodput_tokens_per_s; /**< tokens per second of useful training */
};

/**
 * The probability that a simultaneous failure of @failed of @machines
 * machines, drawn uniformly, leaves a copy of every machine's checkpoint
 * in some surviving CPU memory, under Gemini's placement of @replicas
 * copies: groups of @replicas machines that hold each other's
 * checkpoints; when @replicas does not divide @machines, the last
 * group of @replicas + (@machines mod @replicas) machines uses ring
 * placement (each machine's copy on itself and the next @replicas - 1).
 * Returns 1 for @failed <= 0, 0 for @failed >= @machines (or bad
 * @replicas: it needs 1 <= @replicas <= @machines); above 64 failures,
 * the probability for 64, a bound from above.
 */
double checkpoint_recovery_probability(int machines, int replicas, int failed);

/** Young (1974) and Daly (2006), first order: sqrt(2 @checkpoint_s @mtbf_s). */
double checkpoint_young_daly_s(double checkpoint_s, double mtbf_s);

/**
 * Gemini's expected time wasted by one failure (its Eq. 1, with the
 * restart): the checkpoint in progress, half an interval of lost
 * training on average, the retrieval and the restart.
 */
double checkpoint_wasted_per_failure_s(double checkpoint_s, double interval_s, double retrieval_s,
				       double restart_s);

/**
 * Per iteration, the time the inter-node network is free of training
 * traffic: the iteration less the inter-node groups' traffic, hidden or
 * not (DP/ZeRO before overlap, TP, PP, CP and EP where their groups span
 * nodes); 0 when it is busy throughout.
 */
double checkpoint_network_idle_s(const struct plan *p, const struct cluster *c, const struct estimate *e);

/**
 * The checkpoint cost of plan @p of @m on @c, predicted as @e (from
 * estimate_plan with @opt), under @o. Pure arithmetic. False with @err
 * (PLAN_ERR_PLAN) when @o cannot apply: no target, replicas above the
 * machines, a failure rate or bandwidth that is not positive.
 */
bool checkpoint_estimate(const struct model *m, const struct cluster *c, const struct plan *p,
			 const struct estimate_options *opt, const struct estimate *e,
			 const struct checkpoint_options *o, struct checkpoint_estimate *out,
			 struct plan_error *err);
