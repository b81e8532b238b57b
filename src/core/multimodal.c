/*
 * DistMM's cost model (Huang et al., NSDI 2024): per-submodule plans on
 * disjoint GPU groups, balanced so that the groups wait little for the
 * slowest, and the batch-sync that the contrastive loss of CLIP (Radford
 * et al., "Learning Transferable Visual Models From Natural Language
 * Supervision", ICML 2021, Sec. 2.3) needs: the logits compare every
 * image with every text of the batch, so each rank gathers the whole
 * batch's embeddings.
 */
#include <stdio.h>
#include <string.h>

#include "plan/collective.h"
#include "plan/multimodal.h"
#include "plan/topology.h"

/* bf16 embeddings, as the encoders' outputs. */
#define EMBED_BYTES 2.0

double
multimodal_params_total(const struct multimodal *mm)
{
	double p = 0.0;

	for (int i = 0; i < mm->nsub; i++)
		p += model_params_total(&mm->sub[i].model) + (double)mm->sub[i].model.hidden * mm->embedding;
	return p;
}

int
multimodal_find(const struct multimodal *mm, const char *name)
{
	for (int i = 0; i < mm->nsub; i++)
		if (strcmp(mm->sub[i].name, name) == 0)
			return i;
	return -1;
}

/*
 * The cost form of formulas.md: per submodule an all-gather of
 * B x D x 2 bytes (forward) and the reduce-scatter of its gradient
 * (backward), T = (n-1) alpha + (n-1)/n B D 2 beta each, with the
 * cluster's two-level links (collective_time).
 */
double
multimodal_batch_sync_time(const struct cluster *c, int gpus, int nsub, int global_batch,
			   int embedding, double *bytes)
{
	struct group_layout g;
	double b = (double)global_batch * embedding * EMBED_BYTES;
	double t;

	if (bytes)
		*bytes = nsub * b;
	if (gpus <= 1)
		return 0.0;
	topology_group(gpus, 1, c->gpus_per_node, &g);
	t = collective_time(c, &g, COLL_ALLGATHER, COLL_ALGO_RING, b) +
	    collective_time(c, &g, COLL_REDUCESCATTER, COLL_ALGO_RING, b);
	return nsub * t;
}

/* Name the submodule before the estimate's message, truncating it to fit. */
static void
prefix_submodule(const char *name, struct plan_error *err)
{
	char msg[sizeof(err->message)];
	size_t n;

	memcpy(msg, err->message, sizeof(msg));
	n = (size_t)snprintf(err->message, sizeof(err->message), "submodule '%s': ", name);
	if (n < sizeof(err->message))
		memcpy(err->message + n, msg, strnlen(msg, sizeof(err->message) - n - 1) + 1);
	err->message[sizeof(err->message) - 1] = '\0';
}

/* Submodule i on its own plan, at its own sequence length (its tokens
 * per sample) and the batch shared by all. */
static bool
estimate_sub(const struct multimodal *mm, const struct cluster *c, const struct plan *plan, int i,
	     int batch, const struct estimate_options *opt, struct estimate *est, struct plan_error *err)
{
	struct plan p = *plan;

	p.seq_len = mm->sub[i].tokens;
	if (p.global_batch != batch)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "submodule '%s' has global batch %d, '%s' %d: every submodule sees "
				      "the same samples", mm->sub[i].name, p.global_batch, mm->sub[0].name, batch);
	if (!estimate_plan(&mm->sub[i].model, c, &p, opt, est, err)) {
		prefix_submodule(mm->sub[i].name, err);
		return false;
	}
	return true;
}

/* Add submodule i to the totals: summed on shared GPUs (monolithic, with
 * the largest "other" memory kept in *other for the caller to add once),
 * the largest and the slowest on disjoint groups (DistMM). */
static bool
add_sub(const struct multimodal *mm, int i, bool monolithic, double *other,
	struct multimodal_estimate *out, struct plan_error *err)
{
	const struct memory_use *mem = &out->sub[i].memory;

	if (monolithic) {
		if (i > 0 && out->gpus[i] != out->gpus[0])
			return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
					      "a monolithic plan runs every submodule on the same GPUs "
					      "('%s' %d, '%s' %d)", mm->sub[0].name, out->gpus[0],
					      mm->sub[i].name, out->gpus[i]);
		/* Every GPU holds all the submodules, and the activations
		 * of each forward pass wait for the loss. */
		/* plan-cli ubuf: TE's Userbuffers are the process's, once
		 * (initialize_ub), kept with "other". */
		double shared = mem->other + mem->userbuffers;

		out->memory_bytes += mem->total - shared;
		if (shared > *other)
			*other = shared;
		out->compute_s += out->sub[i].iteration_time_s;
	} else {
		out->total_gpus += out->gpus[i];
		if (mem->total > out->memory_bytes)
			out->memory_bytes = mem->total;
		if (out->sub[i].iteration_time_s > out->compute_s) {
			out->compute_s = out->sub[i].iteration_time_s;
			out->slowest = i;
		}
	}
	return true;
}

bool
multimodal_estimate(const struct multimodal *mm, const struct cluster *c, const struct plan *plans,
		    bool monolithic, const struct estimate_options *opt,
		    struct multimodal_estimate *out, struct plan_error *err)
{
	double other = 0.0;
	int batch = plans[0].global_batch;

	memset(out, 0, sizeof(*out));
	out->monolithic = monolithic;
	out->nsub = mm->nsub;
	for (int i = 0; i < mm->nsub; i++) {
		if (!estimate_sub(mm, c, &plans[i], i, batch, opt, &out->sub[i], err))
			return false;
		/* The degrees alone give the GPUs: seq_len does not matter. */
		out->gpus[i] = plan_gpus(&plans[i]);
		if (!add_sub(mm, i, monolithic, &other, out, err))
			return false;
	}
	if (monolithic) {
		out->total_gpus = out->gpus[0];
		out->memory_bytes += other;
	} else if (out->total_gpus > cluster_gpus(c)) {
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "the submodules' GPU groups need %d GPUs, more than cluster '%s' has (%d)",
				      out->total_gpus, c->name, cluster_gpus(c));
	}
	out->memory_capacity_bytes = out->sub[0].memory_capacity_bytes;
	out->fits = out->memory_bytes <= out->memory_capacity_bytes;
	for (int i = 0; !monolithic && i < mm->nsub; i++)
		out->fits = out->fits && out->sub[i].fits;
	out->batch_sync_s = multimodal_batch_sync_time(c, out->total_gpus, mm->nsub, batch, mm->embedding,
						       &out->batch_sync_bytes);
	out->iteration_time_s = out->compute_s + out->batch_sync_s;
	out->samples_per_s = batch / out->iteration_time_s;
	return true;
}
