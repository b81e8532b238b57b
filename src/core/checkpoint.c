/*
 * Checkpoints and failures. Gemini (Wang et al., SOSP 2023) keeps each
 * machine's checkpoint in the CPU memory of the machine and of m - 1
 * peers, sends the peers' copies in the idle gaps of the training
 * traffic, and recovers from CPU memory instead of remote storage; its
 * wasted time per failure is t_ckpt + 1/(2f) + t_rtvl (Sec. 3, Eq. 1),
 * to which we add the restart. Checkpoints to storage take the
 * first-order optimal interval of Young (CACM 1974) and Daly (FGCS 2006),
 * sqrt(2 delta MTBF).
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "plan/checkpoint.h"
#include "plan/memory.h"
#include "plan/topology.h"

const char *const checkpoint_target_names[] = { "none", "cpu", "storage", NULL };

/* Failure counts the recovery probability handles exactly (doubles hold
 * C(n, k) far beyond it for any cluster). */
#define MAX_FAILED 64

void
checkpoint_options_init(struct checkpoint_options *o)
{
	memset(o, 0, sizeof(*o));
	o->target = CHECKPOINT_NONE;
}

static double
binomial(int n, int k)
{
	double r = 1.0;

	if (k < 0 || k > n)
		return 0.0;
	for (int i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return r;
}

/* Subsets of @j of the @s machines of a ring that hold no @m cyclically
 * consecutive ones (m consecutive failures lose a copy under ring
 * placement). The run of failures that starts at machine 0 has length a
 * and machine a survives; the rest is a line whose last run, b long,
 * joins the first around the ring: a + b < m. */
static double
ring_survivable(int s, int m, int j)
{
	/* f[run * w + k]: lines so far ending in a run of @run failures, with k failures. */
	double f[(MAX_FAILED + 1) * (MAX_FAILED + 1)], g[(MAX_FAILED + 1) * (MAX_FAILED + 1)];
	double total = 0.0;

	if (j >= s)
		return 0.0;
	for (int a = 0; a < m && a <= j; a++) {
		int len = s - a - 1, ones = j - a, w = ones + 1;
		size_t bytes = sizeof(double) * (size_t)(w * w);

		memset(f, 0, bytes);
		f[0] = 1.0;
		for (int pos = 0; pos < len; pos++) {
			memset(g, 0, bytes);
			for (int run = 0; run < m && run <= ones; run++)
				for (int k = run; k <= ones; k++) {
					double x = f[run * w + k];

					if (x == 0.0)
						continue;
					g[k] += x; /* machine pos survives */
					if (run + 1 < m && k + 1 <= ones)
						g[(run + 1) * w + k + 1] += x;
				}
			memcpy(f, g, bytes);
		}
		for (int b = 0; b + a < m && b <= ones; b++)
			total += f[b * w + ones];
	}
	return total;
}

/* @poly (survivable subsets by size, up to @k) times a group's polynomial @q. */
static void
poly_mul(double *poly, const double *q, int k)
{
	double r[MAX_FAILED + 1] = { 0 };

	for (int i = 0; i <= k; i++)
		for (int j = 0; i + j <= k; j++)
			r[i + j] += poly[i] * q[j];
	memcpy(poly, r, sizeof(r));
}

double
checkpoint_recovery_probability(int machines, int replicas, int failed)
{
	double poly[MAX_FAILED + 1] = { 0 }, group[MAX_FAILED + 1] = { 0 }, ring[MAX_FAILED + 1] = { 0 };
	int m = replicas, n = machines, groups, ring_size;

	if (failed <= 0)
		return 1.0;
	if (failed >= n || m < 1 || m > n)
		return 0.0;
	if (failed > MAX_FAILED)
		failed = MAX_FAILED; /* more failures only lower it: this is a bound from above */
	/* A group holds each of its members' checkpoints on all m members:
	 * any j < m of them may fail. */
	for (int j = 0; j < m && j <= failed; j++)
		group[j] = binomial(m, j);
	groups = n / m;
	ring_size = n % m ? m + n % m : 0;
	if (ring_size)
		groups--; /* Gemini's mixed placement: the last m + (n mod m) machines in a ring */
	poly[0] = 1.0;
	for (int i = 0; i < groups; i++)
		poly_mul(poly, group, failed);
	if (ring_size) {
		for (int j = 0; j <= failed; j++)
			ring[j] = ring_survivable(ring_size, m, j);
		poly_mul(poly, ring, failed);
	}
	return poly[failed] / binomial(n, failed);
}

double
checkpoint_young_daly_s(double checkpoint_s, double mtbf_s)
{
	return sqrt(2.0 * checkpoint_s * mtbf_s);
}

double
checkpoint_wasted_per_failure_s(double checkpoint_s, double interval_s, double retrieval_s, double restart_s)
{
	return checkpoint_s + 0.5 * interval_s + retrieval_s + restart_s;
}

double
checkpoint_network_idle_s(const struct plan *p, const struct cluster *c, const struct estimate *e)
{
	const struct estimate_details *d = &e->details;
	const struct estimate_breakdown *b = &e->breakdown;
	struct plan_layout lay;
	double busy = 0.0;

	topology_plan(p, c, &lay);
	/* DP and EP keep their traffic before overlap; TP, PP and CP only
	 * what is exposed (their overlap is within the same kernels). */
	if (d->dp_inter_node)
		busy += d->dp_total_s;
	if (d->ep_inter_node)
		busy += d->ep_total_s;
	if (d->tp_inter_node)
		busy += b->tp_comm;
	if (d->pp_inter_node)
		busy += b->pp_comm;
	if (lay.cp.nodes > 1)
		busy += b->cp_comm;
	return fmax(0.0, e->iteration_time_s - busy);
}

/* The largest stage's 16-bit weights and optimizer states on one GPU:
 * the memory model's terms, as ZeRO or MiCS shard them. */
static double
gpu_state_bytes(const struct model *m, const struct cluster *c, const struct plan *p,
		const struct estimate_options *opt)
{
	double best = 0.0;

	for (int s = 0; s < p->pp; s++) {
		struct memory_use u;
		struct plan ps = *p;
		double expert, params = estimate_stage_params(m, p, s, &expert);

		ps.recompute = plan_stage_recompute(p, s);
		memory_stage(m, &ps, c, opt ? opt->framework : NULL, s, params, expert, &u);
		best = fmax(best, u.weights + u.optimizer);
	}
	return best;
}

static bool
check_options(const struct checkpoint_options *o, int machines, struct plan_error *err)
{
	if (o->target != CHECKPOINT_CPU && o->target != CHECKPOINT_STORAGE)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "checkpoints need a target: cpu or storage");
	if (o->every < 0)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "checkpoint interval must be at least 1 iteration, got %d", o->every);
	if (o->replicas < 0 || o->replicas > machines)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "%d checkpoint replicas need as many machines; the plan uses %d",
				      o->replicas, machines);
	if (o->failures_per_day < 0 || o->gpu_mtbf_hours < 0 || o->storage_bandwidth_Bps < 0 ||
	    !isfinite(o->failures_per_day) || !isfinite(o->gpu_mtbf_hours) || !isfinite(o->storage_bandwidth_Bps))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "failure rate, GPU MTBF and storage bandwidth must be positive");
	return true;
}

static double
or_default(double v, double def)
{
	return v > 0 ? v : def;
}

/* Sizes, transfer times and the failure rate of @out. */
static void
ckpt_sizes(const struct model *m, const struct cluster *c, const struct plan *p,
	   const struct estimate_options *opt, const struct estimate *e,
	   const struct checkpoint_options *o, struct checkpoint_estimate *out)
{
	int gpus = plan_gpus(p), per_machine = gpus < c->gpus_per_node ? gpus : c->gpus_per_node;
	double storage = or_default(o->storage_bandwidth_Bps, or_default(c->storage_bandwidth_Bps,
				    CHECKPOINT_DEFAULT_STORAGE_BPS));
	double pcie = cluster_pcie_bandwidth_Bps(c);
	double net = c->inter.nics_per_node * c->inter.nic_bandwidth_Bps * c->inter.efficiency;
	double mtbf_h = or_default(o->gpu_mtbf_hours, CHECKPOINT_DEFAULT_GPU_MTBF_HOURS);

	out->target = o->target;
	out->machines = (gpus + c->gpus_per_node - 1) / c->gpus_per_node;
	out->bytes_per_gpu = gpu_state_bytes(m, c, p, opt);
	out->bytes_per_machine = per_machine * out->bytes_per_gpu;
	/* One copy of every state: 2 bytes of weights and 12 of fp32 master
	 * weights and Adam moments per parameter (the memory model's terms). */
	out->bytes_total = 14.0 * e->parameters;
	out->gpu_to_cpu_s = out->bytes_per_gpu / pcie;
	out->to_storage_s = out->bytes_total / storage;
	/* Recovery: the replacement machine fetches its checkpoint from a
	 * peer's CPU memory while the others reload theirs over PCIe; from
	 * storage, every machine reads at once, at the storage's bandwidth. */
	out->recovery_cpu_s = fmax(out->machines > 1 ? out->bytes_per_machine / net : 0.0, out->gpu_to_cpu_s);
	out->recovery_storage_s = fmax(out->to_storage_s, out->machines > 1 ? out->bytes_per_machine / net : 0.0);
	out->restart_s = or_default(c->restart_s, CHECKPOINT_DEFAULT_RESTART_S);
	out->failures_per_day = o->failures_per_day > 0 ? o->failures_per_day : gpus * 24.0 / mtbf_h;
	out->network_idle_s = checkpoint_network_idle_s(p, c, e);
	if (o->target == CHECKPOINT_CPU) {
		out->replicas = o->replicas > 0 ? o->replicas :
				(out->machines < CHECKPOINT_DEFAULT_REPLICAS ? out->machines : CHECKPOINT_DEFAULT_REPLICAS);
		out->to_peers_s = out->machines > 1 ? (out->replicas - 1) * out->bytes_per_machine / net : 0.0;
		out->cpu_recovery_probability = checkpoint_recovery_probability(out->machines, out->replicas, 1);
		out->cpu_recovery_probability_two = checkpoint_recovery_probability(out->machines, out->replicas, 2);
	}
}

/*
 * CPU checkpoints every N iterations: the local copy over PCIe overlaps
 * N iterations of training (the states change only at the next optimizer
 * step); the peers' copies go in the network's idle gaps, N iterations of
 * them (Gemini Sec. 5, traffic interleaving), and only what does not fit
 * stalls training. The checkpoint completes once its traffic has found
 * enough gaps.
 */
static void
ckpt_cpu_timing(double T, struct checkpoint_estimate *out)
{
	double n = out->every, idle = out->network_idle_s;
	double stall_net = fmax(0.0, out->to_peers_s - n * idle);
	double in_gaps = out->to_peers_s - stall_net;
	double stall_pcie = fmax(0.0, out->gpu_to_cpu_s - n * T);

	out->checkpoint_s = fmax(out->gpu_to_cpu_s, (idle > 0 ? in_gaps * T / idle : 0.0) + stall_net);
	out->overhead_per_iteration_s = fmax(stall_net, stall_pcie) / n;
}

/* Gemini's checkpoints to CPU memory (Wang et al., SOSP 2023): every
 * @o->every iterations, recovered from a CPU copy with the probability
 * ckpt_sizes() set, else from storage at its own optimal interval. */
static void
ckpt_cpu_plan(double T, double mtbf_s, const struct checkpoint_options *o, struct checkpoint_estimate *out)
{
	double fallback, optimal_storage;

	out->every = o->every > 0 ? o->every : 1;
	ckpt_cpu_timing(T, out);
	/* Young-Daly on what a checkpoint stalls: 0 when the gaps hold it. */
	out->optimal_interval_s = checkpoint_young_daly_s(out->overhead_per_iteration_s * out->every, mtbf_s);
	out->interval_s = out->every * (T + out->overhead_per_iteration_s);
	/* Without a copy in CPU memory, recovery falls back to storage
	 * checkpoints at their optimal interval (Gemini keeps them, rarely:
	 * their own cost is not counted here). */
	optimal_storage = checkpoint_young_daly_s(out->to_storage_s, mtbf_s);
	fallback = checkpoint_wasted_per_failure_s(out->to_storage_s, optimal_storage,
						   out->recovery_storage_s, out->restart_s);
	out->wasted_per_failure_s =
		out->cpu_recovery_probability *
			checkpoint_wasted_per_failure_s(out->checkpoint_s, out->interval_s,
							out->recovery_cpu_s, out->restart_s) +
		(1.0 - out->cpu_recovery_probability) * fallback;
}

/* Synchronous checkpoints to storage, every @o->every iterations or at
 * the Young-Daly interval. */
static bool
ckpt_storage_plan(double T, double mtbf_s, const struct checkpoint_options *o,
		  struct checkpoint_estimate *out, struct plan_error *err)
{
	/* Writing to storage stalls training (a synchronous save). */
	out->checkpoint_s = out->to_storage_s;
	out->optimal_interval_s = checkpoint_young_daly_s(out->to_storage_s, mtbf_s);
	if (o->every > 0) {
		out->every = o->every;
	} else {
		double every = fmax(1.0, round(out->optimal_interval_s / T));

		/* No cast past an int: an interval of 4e9 iterations printed
		 * "every -2147483648 iterations" (issue 28). */
		if (!(every <= INT_MAX))
			return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "the Young-Daly checkpoint "
					      "interval (%.3g s) is %.3g iterations of %.3g s, more than %d: give "
					      "--checkpoint-every", out->optimal_interval_s, every, T, INT_MAX);
		out->every = (int)every;
	}
	out->overhead_per_iteration_s = out->to_storage_s / out->every;
	out->interval_s = out->every * (T + out->overhead_per_iteration_s);
	out->wasted_per_failure_s = checkpoint_wasted_per_failure_s(out->checkpoint_s, out->interval_s,
								    out->recovery_storage_s, out->restart_s);
	return true;
}

bool
checkpoint_estimate(const struct model *m, const struct cluster *c, const struct plan *p,
		    const struct estimate_options *opt, const struct estimate *e,
		    const struct checkpoint_options *o, struct checkpoint_estimate *out,
		    struct plan_error *err)
{
	double T = e->iteration_time_s, mtbf_s, lambda, useful;
	int machines = (plan_gpus(p) + c->gpus_per_node - 1) / c->gpus_per_node;

	memset(out, 0, sizeof(*out));
	if (!check_options(o, machines, err))
		return false;
	ckpt_sizes(m, c, p, opt, e, o, out);
	mtbf_s = 86400.0 / out->failures_per_day;
	lambda = 1.0 / mtbf_s;
	if (o->target == CHECKPOINT_CPU)
		ckpt_cpu_plan(T, mtbf_s, o, out);
	else if (!ckpt_storage_plan(T, mtbf_s, o, out, err))
		return false;
	out->overhead_fraction = out->overhead_per_iteration_s / T;
	/* First order (Daly 2006): of each second, T / (T + overhead) trains,
	 * and failures take lambda x wasted of the rest. */
	useful = T / (T + out->overhead_per_iteration_s) * fmax(0.0, 1.0 - lambda * out->wasted_per_failure_s);
	out->wasted_fraction = 1.0 - useful;
	out->goodput_tokens_per_s = e->tokens_per_s * useful;
	if (!isfinite(out->goodput_tokens_per_s) || !isfinite(out->wasted_per_failure_s))
		return plan_error_nonfinite(p, "checkpoint", err);
	return true;
}
