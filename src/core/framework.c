#include <stddef.h>
#include <string.h>

#include "plan/framework.h"
#include "plan/plan.h"

const char *const framework_gather_names[] = { "layer", "tensor", NULL };
const char *const framework_prefetch_names[] = { "pre", "post", "none", NULL };
const char *const framework_attention_names[] = { "profile", "fa2", "sdpa", "fa3", "cudnn", NULL };
const char *const framework_cp_ring_names[] = { "p2p", "allgather", NULL };
const char *const framework_moe_gemm_names[] = { "te_streams", "single", "gmm", NULL };
_Static_assert(sizeof(framework_moe_gemm_names) / sizeof(framework_moe_gemm_names[0]) == FRAMEWORK_MOE_GEMM_GMM + 2,
	       "a name for every grouped GEMM");
const char *const framework_moe_dispatcher_names[] = { "alltoall", "allgather_mask", "deepep", "hybridep",
							 NULL };
_Static_assert(sizeof(framework_moe_dispatcher_names) / sizeof(framework_moe_dispatcher_names[0]) ==
	       FRAMEWORK_MOE_DISPATCH_HYBRIDEP + 2, "a name for every dispatcher");
const char *const framework_optimizer_names[] = { "adam", "muon", NULL };
_Static_assert(sizeof(framework_optimizer_names) / sizeof(framework_optimizer_names[0]) == FRAMEWORK_OPTIMIZER_MUON + 2,
	       "a name for every optimizer");
const char *const framework_elementwise_names[] = { "fused", "eager", "compiled", NULL };
const char *const framework_graphs_names[] = { "none", "layer", "full", NULL };
const char *const framework_sac_names[] = { "attention", "op", "core_attn", NULL };
const char *const framework_zero_reduce_names[] = { "reduce_scatter", "all_reduce", NULL };
const char *const framework_zero_sync_names[] = { "allgather", "broadcast", NULL };
const char *const framework_main_grad_names[] = { "none", "fused", "unfused", NULL }; /* plan-cli hopper */

/* plan-cli optsearch: each set named by the schedules in it (--pp-schedule's words). */
const char *const framework_schedules_names[] = {
	"1f1b", "1f1b,zb-v,dualpipev", "1f1b,zb-h1,zb-v", "all", NULL,
};
_Static_assert(sizeof(framework_schedules_names) / sizeof(framework_schedules_names[0]) == FRAMEWORK_SCHED_COUNT + 1,
	       "a name for every schedule set");

bool
framework_runs_schedule(const struct framework *fw, int sched)
{
	int set = fw ? fw->pipeline_schedules : FRAMEWORK_SCHED_1F1B;

	switch (sched) {
	case PLAN_PP_1F1B:
		return true;
	case PLAN_PP_ZB_H1:
		return set == FRAMEWORK_SCHED_ZB || set == FRAMEWORK_SCHED_ALL;
	case PLAN_PP_ZB_V:
		return set != FRAMEWORK_SCHED_1F1B;
	case PLAN_PP_DUALPIPEV:
		return set == FRAMEWORK_SCHED_TORCHTITAN || set == FRAMEWORK_SCHED_ALL;
	default: /* DualPipe (two copies of the model a rank): DeepSeek's own framework */
		return set == FRAMEWORK_SCHED_ALL;
	}
}

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
	fw->fp8_amax_history = 1024;
	fw->cp_ring = FRAMEWORK_RING_P2P;
	fw->moe_grouped_gemm = FRAMEWORK_MOE_GEMM_TE_STREAMS; /* Megatron-Core's TEGroupedMLP */
	fw->moe_dispatcher = FRAMEWORK_MOE_DISPATCH_ALLTOALL;
	fw->optimizer = FRAMEWORK_OPTIMIZER_ADAM;
	fw->sp_regather = true; /* plan-cli review6: Megatron-Core's SP linears */
	fw->moe_tp_in_dispatcher = true; /* plan-cli a2apair: MoEAlltoAllTokenDispatcher */
	fw->zero_grad_reduce = FRAMEWORK_ZR_REDUCE_SCATTER;
	fw->zero_param_sync = FRAMEWORK_ZS_ALLGATHER;
	/* plan-cli h100: the loss as compute_ends_time() has always counted it. */
	fw->loss_fwd_bytes = FRAMEWORK_LOSS_FWD_BYTES;
	fw->loss_bwd_bytes = FRAMEWORK_LOSS_BWD_BYTES;
	fw->main_grad = FRAMEWORK_MG_NONE; /* plan-cli hopper */
	fw->metric_logit_bytes = 0.0;      /* plan-cli itercost: no training metrics */
	/* plan-cli reviewmem: the fp32 logits of Korthikanti et al. Sec. 4.3. */
	fw->loss_logit_memory = 4.0;
	/* plan-cli mtphead: the fp32 logits (softmax) saved for the backward. */
	fw->loss_kept_memory = 4.0;
	fw->zero3_step_bytes = 0.0;        /* plan-cli dsz3host: the step as compute_optimizer_time() */
	fw->zero3_tensor_launches = 0;
	fw->grad_check_bytes = 0.0;        /* plan-cli simumoe: no pass before the reduction */
	fw->grad_scale_bytes = 0.0;
	fw->grad_check_syncs = 0.0;        /* plan-cli review6: the check's result stays on the GPU */
	fw->step_bytes = 0.0;              /* plan-cli simumoe: the generic step below ZeRO-3 */
	fw->moe_param_gathers = 1;         /* plan-cli simumoe: one gather of the updated weights */
	/* plan-cli hostsync: no work of the training script per micro-batch */
	fw->microbatch_syncs = fw->loss_syncs = fw->p2p_syncs = fw->loss_allreduces = 0.0;
	fw->syncs_per_chunk = false;
	fw->pp_p2p_overlap = false; /* plan-cli reviewpipe: blocking exchanges */
	fw->dataloader_mask = false;
}
