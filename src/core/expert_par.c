#include <math.h>
#include <string.h>

#include "plan/collective.h"
#include "plan/expert_par.h"
#include "plan/framework.h"

/* Chunks Lancet pipelines the forward all-to-all with (its partition degree). */
#define LANCET_CHUNKS 4.0

/* One phase of the combined schedule: @comm on the communication stream
 * beside @comp on the computation stream; what the communication adds
 * to the compute: its excess, and the compute it overlaps @slowdown
 * times slower (the framework's overlap_slowdown: the collective's
 * kernels take SMs and memory bandwidth). */
static double
combined_phase(double comm, double comp, double slowdown)
{
	return fmax(0.0, comm - comp) + (slowdown - 1.0) * fmin(comm, comp);
}

/* How much slower the compute beside a combined-1F1B all-to-all runs:
 * DeepEP's and HybridEP's kernels hold moe_dispatcher_sms SMs for as
 * long as they run (deep_ep Buffer num_sms; Megatron-Core's
 * moe_flex_dispatcher_num_sms), so the GEMMs beside them get the other
 * sm_count - n: sm_count / (sm_count - n). NCCL's all-to-all, or a
 * count not given, costs the framework's overlap_slowdown. */
static double
combined_slowdown(const struct cluster *c, const struct framework *fw)
{
	int sms = c->gpu.sm_count;
	bool flex = fw && (fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_DEEPEP ||
			   fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_HYBRIDEP);

	if (!fw)
		return 1.0;
	if (flex && fw->moe_dispatcher_sms > 0 && sms > fw->moe_dispatcher_sms)
		return (double)sms / (sms - fw->moe_dispatcher_sms);
	return fw->overlap_slowdown;
}

/*
 * --moe-overlap combined-1f1b: Megatron-Core's overlap_moe_expert_
 * parallel_comm (Megatron-LM d98e8a6, combined_1f1b.py, and
 * models/common/model_chunk_schedule_plan.py TransformerLayerSchedulePlan.
 * run): in the steady state one micro-batch's forward runs layer by layer
 * beside another's backward, the all-to-alls on a communication stream,
 * four phases a layer pair:
 *   A: the backward's combine (an all-to-all) | the forward's attention
 *      block, router and permutation (pre_dispatch_computation);
 *   B: the forward's dispatch | the backward's expert dgrad;
 *   C: the backward's dispatch | the backward's expert wgrad and the
 *      forward's experts;
 *   D: the forward's combine | the backward's attention block.
 * A and C go to the backward's line, B and D to the forward's. A forward
 * without a backward beside it (the warm-up) and a backward without a
 * forward (the cool-down) expose their all-to-alls: of the m v forwards
 * of a rank's chunks, the warm-up's (p - i - 1) 2 + (v - 1) p + 1
 * (schedules.py get_pp_rank_microbatches, one more with the overlap),
 * v p on the ranks' mean (1 without pipelining: the first forward
 * alone, combined_1f1b_schedule_for_no_pipelining), run alone: a share
 * 1 - p / m of each pass overlaps. The expert parts of @layer: its
 * experts' GEMMs (mlp_fwd_s, the router's too), their dgrad as long,
 * their wgrad as long plus the fp32 gradient traffic (moe_wgrad_mem_s);
 * the rest of the layer's forward and backward is the attention block.
 * The backward of a combine sends what a dispatch sends, and the reverse.
 */
static void
ep_combined_1f1b(const struct plan *p, const struct cluster *c, const struct framework *fw,
		 const struct compute_layer *layer, double dispatch, double combine, double *fwd, double *bwd)
{
	double s = combined_slowdown(c, fw);
	double share = fmax(0.0, 1.0 - (double)p->pp / plan_microbatches(p));
	double experts = layer->mlp_fwd_s, wgrad = experts + layer->moe_wgrad_mem_s;
	double pre_fwd = fmax(0.0, layer->fwd_s - experts);
	double pre_bwd = fmax(0.0, layer->bwd_s - experts - wgrad);
	double ph_a = combined_phase(dispatch, pre_fwd, s), ph_b = combined_phase(dispatch, experts, s);
	double ph_c = combined_phase(combine, wgrad + experts, s), ph_d = combined_phase(combine, pre_bwd, s);

	*fwd = (1.0 - share) * (dispatch + combine) + share * (ph_b + ph_d);
	*bwd = (1.0 - share) * (dispatch + combine) + share * (ph_a + ph_c);
}

/*
 * Node-limited routing (DeepSeek-V3, arXiv:2412.19437, Sec. 2.1.2 and
 * 3.2.2): each token goes to the experts of at most M nodes, crossing the
 * network once to each (to the GPU of the same in-node index) and then
 * forwarded over NVLink to its experts there. Of the k copies a flat
 * dispatch sends, the network then carries at most min(M, N, k): the
 * inter-node hop's volume shrinks by min(M, N, k) / k. Flat routing sends
 * every (token, expert) copy on its own, so only the two-hop dispatch
 * gains.
 */
static double
node_limited_share(const struct model *m, const struct group_layout *g)
{
	double k = m->moe.top_k, limit = m->moe.max_nodes > 0 ? m->moe.max_nodes : k;

	limit = fmin(limit, fmin((double)g->nodes, k));
	return limit / k;
}

static double
a2a_time(const struct model *m, const struct cluster *c, const struct group_layout *g, int routing,
	 double bytes, double *inter, double *intra)
{
	*inter = *intra = 0.0;
	if (routing == PLAN_MOE_BILEVEL && g->nodes > 1 && g->per_node > 1) {
		struct group_layout across = { g->nodes, 1, g->nodes };
		struct group_layout inside = { g->per_node, g->per_node, 1 };
		double share = m->moe.max_nodes > 0 ? node_limited_share(m, g) : 1.0;

		/* Hop 1: to the right node, among equal local ranks (each on its
		 * GPU's NIC share), once per node with node-limited routing;
		 * hop 2: to the right GPU inside the node. */
		*inter = collective_time(c, &across, COLL_ALLTOALL, COLL_ALGO_RING, share * bytes);
		*intra = collective_time(c, &inside, COLL_ALLTOALL, COLL_ALGO_RING, bytes);
		return *inter + *intra;
	}
	return collective_time(c, g, COLL_ALLTOALL, COLL_ALGO_RING, bytes);
}

/*
 * The router after its GEMM, counted from Megatron-Core's TopKRouter with
 * the auxiliary load-balancing loss (megatron/core/transformer/moe/
 * router.py and moe_utils.py at NVIDIA/Megatron-LM 005742f, 2025):
 * forward, topk_softmax_with_capacity (fp32 softmax, top-k, the probs
 * and the routing map each a zeros + scatter), the aux-loss scores again
 * (compute_routing_scores_for_aux_loss: softmax, top-k, a zeros + int +
 * scatter + bool map), tokens per expert (a sum), and
 * switch_load_balancing_loss_func (a sum over tokens, a product-sum and a
 * scale) with its tracker: about 20 kernels; each touches the T x E
 * fp32 scores once, about 48 bytes per (token, expert) in all (two
 * softmaxes read and write 4 + 4, two top-ks read 4, four scatters with
 * their zero-fills write 4 + 4 + 4 + 1 + ..., two sums read 4 + 1).
 * Backward: the softmax's and the scatter's gradients and the aux loss's
 * (8 kernels, about 36 bytes per element). T is the rank's tokens
 * (sequence parallel: b s / t), E the experts.
 */
#define ROUTER_FWD_BYTES 48.0
#define ROUTER_BWD_BYTES 36.0

bool
ep_allgather_gathers(const struct model *m, const struct plan *p)
{
	return (p->sequence_parallel && p->tp > 1) || p->ep > 1 || m->moe.top_k > 1;
}

/*
 * Megatron-Core core_v0.5.0-core_v0.6.0's MoELayer.forward is the router,
 * token_permutation, the experts and token_unpermutation, nothing else
 * (megatron/core/transformer/moe/moe_layer.py), and with sequence
 * parallelism (which arguments.py requires for MoE with TP: "When using
 * MoE and tensor parallelism, sequence parallelism must be used") its
 * input stays the rank's s/t shard: the dispatcher's
 * gather_from_sequence_parallel_region_to_moe over TP x EP gathers it,
 * the experts' TP-sharded GEMMs leave partial sums, and
 * reduce_scatter_to_sequence_parallel_region_from_moe reduces them back
 * to the shard (token_dispatcher.py). So those two are the MLP's
 * sequence-parallel pair, not collectives beside it. core_v0.6.0 has no
 * shared expert; one (a later MLP of its own, shared_experts.py) would
 * gather and reduce its input itself.
 *
 * plan-cli a2apair: MoEAlltoAllTokenDispatcher is the same. Its
 * MoELayer.forward (core_v0.10.0-core_v0.14.0 moe_layer.py) is again the
 * router, the dispatcher, the experts and the combine, its input the
 * rank's s/t shard (forward raises without sequence parallelism under
 * TP); token_permutation (token_dispatch and dispatch_postprocess from
 * core_v0.13.0) exchanges the shard's routed tokens by all-to-all over EP
 * and then gathers them over the expert-TP group
 * (gather_from_sequence_parallel_region(..., group=self.tp_group),
 * self.tp_size = expert_tensor_parallel_size), and token_unpermutation
 * reduce-scatters the experts' partial sums over that group before the
 * combine all-to-all (token_dispatcher.py). Those are ep_layer_comm's
 * etp collectives; none runs over the attention's TP group (with etp 1,
 * none at all). core_r0.8.0's dispatcher did it by all_to_all_sp2hp /
 * hp2sp over TP instead, inside the dispatcher too. torchtitan (2025,
 * @08dc75a models/llama4/infra/parallelize.py apply_moe_ep_tp) wraps the
 * MoE module in PrepareModuleInputOutput, Shard(1) -> Replicate in and
 * Partial -> Shard(1) out: "all-gather for input, reduce-scatter for
 * output", the MLP's pair (framework moe_tp_in_dispatcher false).
 */
bool
ep_dispatcher_carries_tp(const struct model *m, const struct plan *p, const struct framework *fw)
{
	if (!model_is_moe(m) || !p->sequence_parallel || p->tp < 2 || m->moe.shared_experts > 0 ||
	    m->parallel_block)
		return false;
	/* fw NULL: the built-in framework, Megatron-Core's all-to-all. */
	if (!fw)
		return true;
	/* MoEFlexTokenDispatcher runs over the TP x EP group and replicates
	 * the routing over TP (_initialize_metadata): its dispatch does the
	 * gather, its combine the reduction. */
	return fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK ||
	       fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_DEEPEP ||
	       fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_HYBRIDEP || fw->moe_tp_in_dispatcher;
}

void
ep_layer_fixed(const struct model *m, const struct plan *p, const struct cluster *c,
	       const struct framework *fw, const struct plan_layout *lay, struct ep_layer_fixed *out)
{
	double tokens = (double)p->micro_batch * p->seq_len / p->tp;
	double elems = tokens * m->moe.experts, launch = c->gpu.launch_overhead_s;
	double local = (double)m->moe.experts / p->ep;

	out->router_fwd_s = EP_ROUTER_FWD_KERNELS * launch + compute_memory_time(c, ROUTER_FWD_BYTES * elems);
	out->router_bwd_s = EP_ROUTER_BWD_KERNELS * launch + compute_memory_time(c, ROUTER_BWD_BYTES * elems);
	out->sync_s = 0.0;
	if (fw && fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK) {
		/* MoEAllGatherTokenDispatcher.token_permutation (token_dispatcher.py,
		 * core_v0.5.0 and core_v0.6.0), dropless by construction (TopKRouter
		 * asserts moe_token_dropping off): the local indices and probs
		 * are masked_select-ed and the map taken by nonzero() (each sizes
		 * its output on the host: a device-to-host copy and a wait), and
		 * tokens_per_expert goes to the host (.cpu()) for the grouped
		 * GEMM's batch sizes: four synchronisations a layer's forward,
		 * three at top-1 (its probs are not selected), only the .cpu()
		 * without a gather (top-1, no SP, no EP). Each costs what the
		 * all-to-all dispatcher's sync does (below). */
		double syncs = !ep_allgather_gathers(m, p) ? 1.0 : m->moe.top_k > 1 ? 4.0 : 3.0;

		out->sync_s = syncs * 2.0 * launch;
	} else if (fw && fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_HYBRIDEP) {
		/* HybridEP, dropless (Megatron-LM d98e8a6 token_dispatcher.py
		 * _HybridEPManager: num_permuted_tokens None unless
		 * moe_expert_rank_capacity_factor or drop-and-pad, so
		 * fused_a2a.py HybridEPDispatch passes non_blocking False):
		 * dispatch_with_permute copies tokens_per_expert "through
		 * pinned memory" and synchronises the stream (DeepEP hybrid-ep
		 * 94a9f8f deep_ep/hybrid_ep_buffer.py): one wait a forward,
		 * costed as DeepEP's; the backward reuses the handle and
		 * num_permuted_tokens (HybridEPCombine.backward). Dropped and
		 * padded to capacity (model dropless false), the size is
		 * capacity x group x local experts, known on the host
		 * (setup_metadata): no wait. */
		out->sync_s = m->moe.dropless ? 2.0 * launch : 0.0;
	} else if (fw && fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_DEEPEP) {
		/* DeepEP's normal dispatch (csrc/deep_ep.cpp, intranode_dispatch
		 * and internode_dispatch) exchanges the counts in its
		 * notify_dispatch kernel, then the host spins on the mapped
		 * moe_recv_counter to size the receive buffers ("the CPU will
		 * wait for GPU's signal", Megatron's fused_a2a.py): one wait a
		 * forward, none in backward (the handle is cached), no gather
		 * of the counts. Its cost as the all-to-all dispatcher's. */
		out->sync_s = 2.0 * launch;
	} else if (m->moe.dropless && (p->ep > 1 || local > 1.0)) {
		/* MoEAlltoAllTokenDispatcher.preprocess (token_dispatcher.py,
		 * 005742f), dropless: the split sizes go to the host
		 * (.to("cpu")) and the stream synchronises before the EP
		 * all-to-all (cuda_sync_point "before_ep_alltoall"). The GPU's
		 * queue runs dry: it waits for the copy, one small operation,
		 * then for the first kernel the released host launches: two
		 * fixed kernel costs of the GPU profile (launch_overhead). */
		out->sync_s = 2.0 * launch;
		/* With EP or TP, the tokens per expert of every rank are
		 * gathered first (gather_from_sequence_parallel_region over the
		 * TP x EP ranks, E int64 counts each): a latency-bound collective. */
		if (lay->ep.size > 1)
			out->sync_s += collective_time(c, &lay->ep, COLL_ALLGATHER, COLL_ALGO_RING,
						       8.0 * m->moe.experts * lay->ep.size);
	}
	out->fwd_s = out->router_fwd_s + out->sync_s;
	out->bwd_s = out->router_bwd_s;
	out->recompute_s = plan_recomputes_moe_layer(p) /* plan-cli recomp */ ? out->fwd_s : 0.0;
}

/*
 * MoEAllGatherTokenDispatcher (token_dispatcher.py, core_v0.5.0 and
 * core_v0.6.0) with sequence parallelism or EP: every rank all-gathers
 * the hidden states, the top-k indices (int64) and their probs (bf16) of
 * all tokens over the TP x EP group (gather_from_sequence_parallel_
 * region_to_moe: the tensor_and_expert_parallel group, tp x ep
 * consecutive ranks, parallel_state.py), ep x tokens rows whatever k, and
 * reduce-scatters the combined output ([S/TP x B x TP x EP, h]) back.
 * Backward: the hidden states' gather becomes a reduce-scatter, the
 * output's reduce-scatter an all-gather, the probs' gather a
 * reduce-scatter (the indices take no gradient). None is overlapped.
 */
static void
ep_allgather_comm(const struct model *m, const struct plan *p, const struct cluster *c,
		  struct ep_layer_comm *out)
{
	double gathered = (double)p->ep * p->micro_batch * p->seq_len;
	double hidden = gathered * model_moe_width(m) * 2.0, k = m->moe.top_k;
	double n = (double)p->tp * p->ep;
	struct group_layout g;

	out->fwd_s = out->bwd_s = out->fwd_bytes = out->bwd_bytes = 0.0;
	if (!((p->sequence_parallel && p->tp > 1) || p->ep > 1))
		return;
	/* On the wire, each rank's (n - 1) / n of every buffer: forward the
	 * hidden states, int64 indices and bf16 probs gathered and the
	 * output reduce-scattered, backward the hidden states twice and the
	 * probs' gradient. */
	out->fwd_bytes = (n - 1.0) / n * (2.0 * hidden + 10.0 * k * gathered);
	out->bwd_bytes = (n - 1.0) / n * (2.0 * hidden + 2.0 * k * gathered);
	topology_group(p->tp * p->ep, 1, c->gpus_per_node, &g);
	out->fwd_s = collective_time(c, &g, COLL_ALLGATHER, COLL_ALGO_RING, hidden) +
		     collective_time(c, &g, COLL_ALLGATHER, COLL_ALGO_RING, 8.0 * k * gathered) +
		     collective_time(c, &g, COLL_ALLGATHER, COLL_ALGO_RING, 2.0 * k * gathered) +
		     collective_time(c, &g, COLL_REDUCESCATTER, COLL_ALGO_RING, hidden);
	out->bwd_s = collective_time(c, &g, COLL_REDUCESCATTER, COLL_ALGO_RING, hidden) +
		     collective_time(c, &g, COLL_ALLGATHER, COLL_ALGO_RING, hidden) +
		     collective_time(c, &g, COLL_REDUCESCATTER, COLL_ALGO_RING, 2.0 * k * gathered);
}

/*
 * DeepEP's normal (training) kernels, V1 (github.com/deepseek-ai/DeepEP,
 * docs/legacy.md; its README "Performance (V1)" table): measured on H800
 * (NVLink 200 GB/s a direction nominal, "~160 GB/s maximum") with a CX7
 * 400 Gbit/s (50 GB/s) NIC a GPU, DeepSeek-V3 shapes. The lowest row of
 * each link: intranode EP 8 dispatch 153 GB/s (combine 158) of the
 * nominal 200; internode EP 16 43 GB/s of the 50 (the EP 32 and 64 rows,
 * 58 and 51 GB/s, are "logical" bandwidth counting NVLink-forwarded
 * traffic that deepep_comm counts on its own link). Fractions of the
 * cluster profile's line rates, in place of its NCCL efficiencies (DeepEP
 * does not use NCCL).
 */
#define DEEPEP_NVL_FRACTION (153.0 / 200.0)
#define DEEPEP_RDMA_FRACTION (43.0 / 50.0)

/*
 * HybridEP (github.com/deepseek-ai/DeepEP, branch hybrid-ep, 94a9f8f,
 * docs/README_Hybrid-EP.md "GB200 Platform"): 8 ranks, 32 SMs (what
 * Megatron-Bridge's perf scripts set, scripts/performance/utils/
 * overrides.py moe_hybridep_num_sms = 32), 4096 tokens of h 7168 top-8,
 * "Kernel Only": dispatch BF16 764.03 GB/s, combine 737.13 GB/s of
 * NVLink5's 900 GB/s a direction. Kernel time, not the "Torch API" rows
 * (545.71 and 568.94), which add the host synchronisation that
 * ep_layer_fixed charges apart (tests/test_hybrid_ep.py: "misc =
 * device_sync, update_flag"). Its README gives no RDMA line-rate figure
 * (the H100 rows count NVLink-received bytes), so RDMA keeps DeepEP's.
 */
#define HYBRIDEP_NVL_DISPATCH_FRACTION (764.03 / 900.0)
#define HYBRIDEP_NVL_COMBINE_FRACTION (737.13 / 900.0)

/*
 * Expected number of the n equal groups (ranks or nodes, E / n experts
 * each) that k distinct experts drawn uniformly from E land in:
 * n (1 - C(E - E/n, k) / C(E, k)).
 */
static double
distinct_groups(double experts, double k, double n)
{
	double miss = 1.0, per = experts / n;

	if (n <= 1.0)
		return 1.0;
	for (int i = 0; i < (int)k; i++)
		miss *= fmax(0.0, (experts - per - i) / (experts - i));
	return n * (1.0 - miss);
}

/*
 * One DeepEP dispatch (or combine) of a rank's tokens, by Megatron-Core's
 * MoEFlexTokenDispatcher (token_dispatcher.py and fused_a2a.py,
 * core_r0.13-r0.14): the rank's b s / t tokens in bf16 (fused_dispatch
 * passes the hidden states as they are, no FP8 tuple; dispatch adds the
 * top-k int64 indices and fp32 probs), over the TP x EP group, the
 * routing replicated over expert TP. DeepEP sends a token once to each
 * node holding one of its experts, over RDMA to the GPU of the same local
 * index (at most max_nodes with node-limited routing, as
 * node_limited_share), and that GPU forwards it over NVLink once to each
 * rank holding one (is_token_in_rank: once a rank, not once an expert).
 * The RDMA and NVLink warps run at once: the slower link sets the time.
 */
static double
deepep_time(const struct model *m, const struct plan *p, const struct cluster *c,
	    const struct plan_layout *lay, double token_bytes, double nvl_fraction, double *inter, double *intra)
{
	const struct group_layout *g = &lay->ep;
	double e = m->moe.experts, k = m->moe.top_k, etp = lay->etp.size > 1 ? lay->etp.size : 1.0;
	double tokens = (double)p->micro_batch * p->seq_len / p->tp;
	double ranks = distinct_groups(e, k, g->size) * etp;
	double nodes = distinct_groups(e, k, g->nodes);
	double nvl = tokens * token_bytes * ranks * (g->per_node - 1.0) / g->per_node;

	if (m->moe.max_nodes > 0)
		nodes = fmin(nodes, m->moe.max_nodes);
	*intra = nvl / (c->intra.bandwidth_Bps * nvl_fraction);
	*inter = 0.0;
	if (g->nodes > 1) {
		double rdma = tokens * token_bytes * nodes * (g->nodes - 1.0) / g->nodes;

		*inter = rdma / (cluster_nic_share_Bps(c) * DEEPEP_RDMA_FRACTION) + c->inter.latency_s;
	}
	*intra += c->intra.latency_s;
	return fmax(*inter, *intra);
}

/*
 * DeepEP's buffers (Megatron-LM d98e8a6 fused_a2a.py get_buffer: one
 * Buffer for the tp x ep group, its NVLink and RDMA parts each the larger
 * of the dispatch and the combine config's size hint). The configs and
 * hints: DeepEP dd758ca deep_ep/buffers/legacy.py get_dispatch_config and
 * get_combine_config (chunked receive tokens by group size; Buffer.num_sms
 * 20, Megatron's default when moe_flex_dispatcher_num_sms is unset: 10
 * channels) and csrc/legacy/config.hpp get_nvl_buffer_size_hint and
 * get_rdma_buffer_size_hint: per channel and peer, the received tokens
 * with their 8-byte SourceMeta, 128 int64 top-k indices, 128 fp32
 * weights and 128 fp32 scales (kNumMaxTopK, kNumMaxScales), plus a few
 * counters; RDMA twice (send and receive) with a 16-byte int4 each, and
 * none for 8 ranks or fewer; both rounded up to 128 bytes. NVLink peers
 * are DeepEP's 8 (LEGACY_NUM_MAX_NVL_PEERS) whatever the node. A group
 * size the configs lack (Megatron then stops at DeepEP's assertion) takes
 * the next listed size's, or the largest's.
 */
#define DEEPEP_NUM_CHANNELS 10.0 /* Buffer.num_sms 20 / 2 */
#define DEEPEP_NVL_PEERS 8.0

static void
deepep_recv_tokens(double n, double *nvl_recv, double *rdma_recv)
{
	/* group size, dispatch and combine NVL receive tokens (the same),
	 * RDMA receive tokens aligned up to the send chunk: dispatch's and
	 * combine's larger. */
	static const double table[][3] = {
		{ 2, 256, 132 },   { 4, 256, 132 },   { 8, 256, 132 },   { 16, 288, 140 },
		{ 24, 288, 128 },  { 32, 288, 128 },  { 48, 288, 128 },  { 64, 288, 128 },
		{ 96, 480, 132 },  { 128, 560, 132 }, { 144, 720, 132 }, { 160, 720, 132 },
	};
	size_t i = 0, last = sizeof(table) / sizeof(table[0]) - 1;

	while (i < last && table[i][0] < n)
		i++;
	*nvl_recv = table[i][1];
	*rdma_recv = table[i][2];
}

static double
round_up_128(double bytes)
{
	return ceil(bytes / 128.0) * 128.0;
}

static double
deepep_buffer_bytes(double n, double hidden_bytes)
{
	double nvl_recv, rdma_recv, ch = DEEPEP_NUM_CHANNELS;
	double rdma_ranks = fmax(floor(n / DEEPEP_NVL_PEERS), 1.0), nvl_ranks = fmin(n, DEEPEP_NVL_PEERS);
	/* A token's payload: hidden, SourceMeta, top-k indices, weights, scales. */
	double token = hidden_bytes + 8.0 + 128.0 * 8.0 + 128.0 * 4.0 + 128.0 * 4.0;
	double nvl, rdma = 0.0;

	deepep_recv_tokens(n, &nvl_recv, &rdma_recv);
	nvl = round_up_128(ch * nvl_ranks * (2.0 * rdma_ranks + 3.0) * 4.0 + ch * nvl_ranks * nvl_recv * token);
	if (n > DEEPEP_NVL_PEERS)
		rdma = round_up_128(ch * rdma_ranks * (DEEPEP_NVL_PEERS * 2.0 + 2.0) * 2.0 * 4.0 +
				    ch * rdma_ranks * rdma_recv * 2.0 * (token + 16.0));
	return nvl + rdma;
}

/*
 * HybridEP's buffers (DeepEP hybrid-ep 94a9f8f; Megatron-LM d98e8a6
 * fused_a2a.py init_hybrid_ep_buffer: max_num_of_tokens_per_rank the
 * rank's tokens T, hidden_dim the dispatched width, num_local_experts).
 * Inside the NVLink domain (csrc/hybrid_ep/buffer/intranode.cu,
 * NVLCoordinator): the worst case of every token of the group routed to
 * one rank, M = T x R x N tokens (R ranks of the group a domain, N
 * domains), each bf16 token (2 w bytes) and its fp32 probabilities for
 * the domain's experts (E_local x R), the dispatch and the combine sharing
 * both (use_shared_buffer, the default), and fp32 scaling factors
 * (w / 128 a token) allocated even in bf16. Across domains
 * (internode_doca.cu, N > 1): the dispatch's T input tokens with their
 * probabilities for all experts and scales, and T (N - 1) tokens,
 * probabilities and scales to and from the other domains; the combine's
 * T (N - 1) reduced and grouped tokens and probabilities, two buffers.
 * Flags and preprocessing scratch (a few kB) are left out. Its guide's
 * example (docs/Hybrid-EP_Implementation.md Sec. 4.2, EP 64 in one
 * domain, 256 experts, w 7168, T 4096: "~3.75 GB") counts the tokens and
 * probabilities, not the scales.
 */
static double
hybridep_buffer_bytes(double tokens, double w, double local_experts, double per_domain, double domains)
{
	double m = tokens * per_domain * domains, probs = local_experts * per_domain, scales = floor(w / 128.0);
	double bytes = m * (2.0 * w + 4.0 * probs + 4.0 * scales);

	if (domains > 1.0) {
		double out = tokens * (domains - 1.0);

		bytes += tokens * (2.0 * w + 4.0 * probs * domains + 4.0 * scales) +
			 out * (2.0 * w + 4.0 * probs + 4.0 * scales) + 2.0 * out * (2.0 * w + 4.0 * probs);
	}
	return bytes;
}

double
ep_dispatcher_buffer_bytes(const struct model *m, const struct plan *p, const struct cluster *c,
			   const struct framework *fw)
{
	struct group_layout g;
	double n = (double)p->ep * plan_etp(p), w = model_moe_width(m);

	if (!fw || m->moe.experts <= 0 || n <= 1.0 ||
	    (fw->moe_dispatcher != FRAMEWORK_MOE_DISPATCH_DEEPEP &&
	     fw->moe_dispatcher != FRAMEWORK_MOE_DISPATCH_HYBRIDEP))
		return 0.0;
	if (fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_DEEPEP)
		return deepep_buffer_bytes(n, 2.0 * w);
	/* The tp x ep group: expert TP innermost, consecutive ranks. */
	topology_group((int)n, 1, c->gpus_per_node, &g);
	return hybridep_buffer_bytes((double)p->micro_batch * p->seq_len / p->tp, w, (double)m->moe.experts / p->ep,
				     g.per_node, g.nodes);
}

/* Dispatch and combine forward, the same two backward (a dispatch's
 * backward is a combine, FusedDispatch.backward, and the reverse).
 * HybridEP moves a token the same way: "Similar to DeepEP, Hybrid-EP
 * first performs IB communication between peer GPUs, then each rank
 * distributes the received inter-node data locally" (DeepEP hybrid-ep
 * 94a9f8f docs/Hybrid-EP_Implementation.md section 8), its "node" the
 * NVLink domain (num_of_hybrid_ep_ranks_per_nvlink_domain,
 * deep_ep/hybrid_ep_buffer.py), the cluster profile's gpus_per_node; its
 * combine pre-reduces inside the domain before the RDMA send, as DeepEP's
 * does; HybridEPDispatch.backward is a combine_with_unpermute and the
 * reverse (Megatron-LM d98e8a6 fused_a2a.py). Only its NVLink fractions
 * differ. DeepEP's token bytes are kept for it (an approximation:
 * HybridEP sends fp32 probs of the destination's experts with a token
 * and the routing map by its metadata all-gather, not top-k int64
 * indices and probs). */
static void
ep_deepep_comm(const struct model *m, const struct plan *p, const struct cluster *c,
	       const struct framework *fw, const struct plan_layout *lay, const struct compute_layer *layer,
	       struct ep_layer_comm *out)
{
	bool hybrid = fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_HYBRIDEP;
	double h2 = 2.0 * model_moe_width(m), k = m->moe.top_k, d_inter, d_intra, c_inter, c_intra;
	double d_nvl = hybrid ? HYBRIDEP_NVL_DISPATCH_FRACTION : DEEPEP_NVL_FRACTION;
	double c_nvl = hybrid ? HYBRIDEP_NVL_COMBINE_FRACTION : DEEPEP_NVL_FRACTION;
	double dispatch = deepep_time(m, p, c, lay, h2 + 12.0 * k, d_nvl, &d_inter, &d_intra);
	double combine = deepep_time(m, p, c, lay, h2, c_nvl, &c_inter, &c_intra);
	double tokens = (double)p->micro_batch * p->seq_len / p->tp;
	double n = lay->ep.size * (lay->etp.size > 1 ? lay->etp.size : 1.0);

	memset(out, 0, sizeof(*out));
	/* Expert TP alone (ep 1) is not modelled: Megatron's tp x ep > 1
	 * case with ep 1 is left at no cost. */
	if (lay->ep.size <= 1)
		return;
	out->bytes = tokens * h2 * distinct_groups(m->moe.experts, k, lay->ep.size) *
		     (lay->etp.size > 1 ? lay->etp.size : 1.0);
	out->a2a_s = dispatch;
	out->inter_s = d_inter;
	out->intra_s = d_intra;
	out->etp_s = 0.0;
	out->fwd_s = out->bwd_s = dispatch + combine;
	if (p->moe_overlap == PLAN_MOE_OVERLAP_COMBINED_1F1B)
		ep_combined_1f1b(p, c, fw, layer, dispatch, combine, &out->fwd_s, &out->bwd_s);
	out->fwd_bytes = out->bwd_bytes = n > 1.0 ? 2.0 * out->bytes * (n - 1.0) / n : 0.0;
	out->recompute_s = plan_recomputes_moe_layer(p) /* plan-cli recomp */ ? out->fwd_s : 0.0;
	out->total_s = out->fwd_s + out->bwd_s + out->recompute_s;
}

void
ep_layer_comm(const struct model *m, const struct plan *p, const struct cluster *c,
	      const struct framework *fw, const struct plan_layout *lay, const struct compute_layer *layer,
	      struct ep_layer_comm *out)
{
	double tokens = (double)p->micro_batch * p->seq_len;
	double a2a, fwd, bwd;

	if (fw && fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK) {
		bool again = plan_recomputes_moe_layer(p) /* plan-cli recomp */;

		out->bytes = out->a2a_s = out->inter_s = out->intra_s = out->etp_s = 0.0;
		ep_allgather_comm(m, p, c, out);
		out->recompute_s = again ? out->fwd_s : 0.0;
		out->total_s = out->fwd_s + out->bwd_s + out->recompute_s;
		return;
	}
	if (fw && (fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_DEEPEP ||
		   fw->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_HYBRIDEP)) {
		ep_deepep_comm(m, p, c, fw, lay, layer, out);
		return;
	}
	out->bytes = m->moe.capacity_factor * m->moe.top_k * tokens * model_moe_width(m) * 2.0 / p->tp;
	a2a = a2a_time(m, c, &lay->ep, p->moe_routing, out->bytes, &out->inter_s, &out->intra_s);
	out->a2a_s = a2a;
	/* Dispatch and combine: (ep - 1) / ep of each buffer leaves the rank. */
	out->fwd_bytes = lay->ep.size > 1 ? 2.0 * out->bytes * (lay->ep.size - 1.0) / lay->ep.size : 0.0;
	fwd = 2.0 * a2a;
	bwd = 2.0 * a2a;
	out->total_s = fwd + bwd + (plan_recomputes_moe_layer(p) /* plan-cli recomp */ ? fwd : 0.0);
	if (p->moe_overlap == PLAN_MOE_OVERLAP_LANCET) {
		/* Backward: the dW half of the backward GEMMs needs no
		 * all-to-all result, so the all-to-all runs under it. */
		double dw = 0.5 * (layer->bwd_s - 2.0 * layer->fwd_mem_s);
		/* Forward: k chunks; the first chunk's all-to-all is exposed,
		 * the rest overlaps the non-MoE work (attention, norms) of the
		 * other chunks. */
		double k = LANCET_CHUNKS, work = layer->fwd_s - layer->mlp_fwd_s;

		bwd = fmax(0.0, bwd - fmax(0.0, dw));
		fwd = fwd / k + fmax(0.0, fwd * (k - 1) / k - work * (k - 1) / k);
	} else if (p->moe_overlap == PLAN_MOE_OVERLAP_COMBINED_1F1B) {
		ep_combined_1f1b(p, c, fw, layer, a2a, a2a, &fwd, &bwd);
	}
	/* Expert TP (Megatron-Core's MoEAlltoAllTokenDispatcher, core_r0.12):
	 * after the dispatch all-to-all the etp ranks of an expert all-gather
	 * their routed tokens (gather_from_sequence_parallel_region over the
	 * expert TP group), etp x the all-to-all buffer, and reduce-scatter
	 * the experts' partial outputs before the combine; the backward runs
	 * the two the other way. Not overlapped. */
	out->etp_s = 0.0;
	if (lay->etp.size > 1) {
		double gathered = (double)lay->etp.size * out->bytes;

		out->etp_s = collective_time(c, &lay->etp, COLL_ALLGATHER, COLL_ALGO_RING, gathered) +
			     collective_time(c, &lay->etp, COLL_REDUCESCATTER, COLL_ALGO_RING, gathered);
		fwd += out->etp_s;
		bwd += out->etp_s;
		/* Each of the two sends (etp - 1) / etp of etp buffers. */
		out->fwd_bytes += 2.0 * (lay->etp.size - 1.0) * out->bytes;
		out->total_s += (plan_recomputes_moe_layer(p) /* plan-cli recomp */ ? 3.0 : 2.0) * out->etp_s;
	}
	out->fwd_s = fwd;
	out->bwd_s = bwd;
	out->bwd_bytes = out->fwd_bytes;
	out->recompute_s = plan_recomputes_moe_layer(p) /* plan-cli recomp */ ? fwd : 0.0;
}
