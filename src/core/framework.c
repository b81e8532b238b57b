#include <stddef.h>
#include <string.h>

#include "plan/framework.h"
#include "plan/plan.h"

const char *const framework_gather_names[] = { "layer", "tensor", NULL };
const char *const framework_prefetch_names[] = { "pre", "post", "none", NULL };
const char *const framework_attention_names[] = { "profile", "fa2", "sdpa", "fa3", "cudnn", NULL };
const char *const framework_cp_ring_names[] = { "p2p", "allgather", NULL };
const char *const framework_elementwise_names[] = { "fused", "eager", NULL };
const char *const framework_graphs_names[] = { "none", "layer", "full", NULL };
const char *const framework_sac_names[] = { "attention", "op", NULL };

void
framework_init_default(struct framework *fw)
{
	memset(fw, 0, sizeof(*fw));
	strcpy(fw->name, "built-in");
	fw->gather_unit = FRAMEWORK_GATHER_LAYER;
	fw->prefetch = FRAMEWORK_PREFETCH_PRE;
	fw->backward_regather = true;
	fw->recompute_regather = false;
	fw->grad_reduce_overlap = true;
	fw->gather_bytes = 2.0;
	fw->reduce_bytes = 2.0;
	/* Adam's fp32 first and second moments and fp32 master weights
	 * (Rajbhandari et al. 2020, Sec. 3.1: K = 12). */
	fw->optimizer_bytes = 12.0;
	fw->overlap_slowdown = 1.0;
	fw->attention_kernel = FRAMEWORK_ATTN_PROFILE;
	fw->elementwise = FRAMEWORK_EW_FUSED;
	fw->selective_recompute = FRAMEWORK_SAC_ATTENTION;
	fw->attention_speed = 1.0;
	/* Transformer Engine's DelayedScaling (recipe.py: amax_history_len 1024). */
	fw->fp8_recipe = PLAN_FP8_DELAYED - 1;
	fw->fp8_amax_history = 1024.0;
	fw->cp_ring = FRAMEWORK_RING_P2P;
	/* plan-cli h100: the loss as compute_ends_time() has always counted it. */
	fw->loss_fwd_bytes = FRAMEWORK_LOSS_FWD_BYTES;
	fw->loss_bwd_bytes = FRAMEWORK_LOSS_BWD_BYTES;
}
