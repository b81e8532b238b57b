#include <math.h>

#include "plan/collective.h"
#include "plan/mixer.h"
#include "plan/model.h"
#include "plan/pipeline.h"

double
pipeline_bubble_fraction(const struct plan *p)
{
	return (double)(p->pp - 1) / ((double)p->vpp * plan_microbatches(p));
}

/* plan-cli pipeline: begin (uneven layouts and schedules) */
bool
pipeline_v_shape(const struct plan *p)
{
	return p->pp_schedule == PLAN_PP_ZB_V || p->pp_schedule == PLAN_PP_DUALPIPEV;
}

int
pipeline_chunk_stage(const struct plan *p, int k)
{
	/* torchtitan's stage_ids_this_rank: "loop" puts virtual stage k on
	 * rank k mod p (Megatron's interleaving too), "v" pairs stage i with
	 * stage 2p - 1 - i (torchtitan/parallelisms/pipeline.py, 2024-12). */
	if (pipeline_v_shape(p) && k >= p->pp)
		return 2 * p->pp - 1 - k;
	return k % p->pp;
}

int
pipeline_stage_chunk(const struct plan *p, int stage, int j)
{
	if (pipeline_v_shape(p) && j == 1)
		return 2 * p->pp - 1 - stage;
	return j * p->pp + stage;
}

bool
pipeline_even_layout(const struct plan *p)
{
	return !p->custom_layers && p->pp_split == PLAN_PP_SPLIT_EVEN && p->pp_first_layers == 0 &&
	       p->pp_last_layers == 0;
}

/* Megatron-Core's layers of pipeline rank @rank with the first/last stage
 * set apart: the rest over the middle ranks (get_num_layers_to_build,
 * megatron/core/transformer/transformer_block.py, Megatron-Core 0.12). */
static int
megatron_rank_layers(const struct plan *p, const struct model *m, int rank)
{
	int rest = m->layers, left = p->pp;

	if (rank == 0 && p->pp_first_layers > 0)
		return p->pp_first_layers;
	if (rank == p->pp - 1 && p->pp_last_layers > 0)
		return p->pp_last_layers;
	if (p->pp_first_layers > 0)
		rest -= p->pp_first_layers, left--;
	if (p->pp_last_layers > 0)
		rest -= p->pp_last_layers, left--;
	return left > 0 ? rest / left : 0;
}

int
pipeline_chunk_layers(const struct plan *p, const struct model *m, int k)
{
	int chunks = p->pp * p->vpp, layers;

	if (p->custom_layers)
		return p->stage_layers[k];
	switch (p->pp_split) {
	case PLAN_PP_SPLIT_EMBEDDING:
	case PLAN_PP_SPLIT_LOSS:
	case PLAN_PP_SPLIT_EMBEDDING_LOSS: {
		/* account_for_{embedding,loss}_in_pipeline_split: the embedding
		 * and the loss count as a layer each in the even split, and the
		 * first (last) virtual stage builds one transformer layer less. */
		bool emb = p->pp_split != PLAN_PP_SPLIT_LOSS, loss = p->pp_split != PLAN_PP_SPLIT_EMBEDDING;

		layers = (m->layers + emb + loss) / chunks;
		return layers - (emb && k == 0) - (loss && k == chunks - 1);
	}
	case PLAN_PP_SPLIT_TORCHTITAN: {
		/* generate_split_points: the first stage floor(L/T), the middle
		 * ones one more while the remainder lasts, the last what is left. */
		int base = m->layers / chunks, extra = m->layers % chunks;

		if (chunks == 1)
			return m->layers;
		if (k == 0)
			return base;
		if (k < chunks - 1)
			return base + (k <= extra);
		return base + (extra > chunks - 2 ? extra - (chunks - 2) : 0);
	}
	default:
		if (p->pp_first_layers > 0 || p->pp_last_layers > 0)
			return megatron_rank_layers(p, m, pipeline_chunk_stage(p, k)) / p->vpp;
		return m->layers / chunks;
	}
}

int
pipeline_chunk_first_layer(const struct plan *p, const struct model *m, int k)
{
	int first = 1;

	if (pipeline_even_layout(p))
		return k * (m->layers / (p->pp * p->vpp)) + 1;
	for (int i = 0; i < k; i++)
		first += pipeline_chunk_layers(p, m, i);
	return first;
}

int
pipeline_stage_layer_count(const struct plan *p, const struct model *m, int stage)
{
	int layers = 0;

	for (int j = 0; j < p->vpp; j++)
		layers += pipeline_chunk_layers(p, m, pipeline_stage_chunk(p, stage, j));
	return layers;
}

/* DualPipe's rank @stage holds stage @stage and its mirror p - 1 - stage
 * (deepseek-ai/DualPipe @3da1bbe, examples/example_dualpipe.py: the
 * modules full_modules[rank] and full_modules[pp_size - 1 - rank]) and
 * runs half the micro-batches through each (dualpipe.py step():
 * half_num_chunks from either end); -1 under every other schedule. */
static int
dual_mirror(const struct plan *p, int stage)
{
	return p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1 ? p->pp - 1 - stage : -1;
}

double
pipeline_rank_layers(const struct plan *p, const struct model *m, int stage)
{
	int mirror = dual_mirror(p, stage);

	if (mirror < 0)
		return plan_stage_layers(p, m, stage);
	return 0.5 * (plan_stage_layers(p, m, stage) + plan_stage_layers(p, m, mirror));
}

double
pipeline_rank_moe_layers(const struct model *m, const struct plan *p, int stage)
{
	int mirror = dual_mirror(p, stage);

	if (mirror < 0)
		return pipeline_stage_moe_layers(m, p, stage);
	return 0.5 * (pipeline_stage_moe_layers(m, p, stage) + pipeline_stage_moe_layers(m, p, mirror));
}

/* plan-cli hybrid: the layers of one kind (model_layer_kind). */
struct kind_arg {
	const struct model *m;
	int kind;
};

static bool
kind_pred(int layer, const void *arg)
{
	const struct kind_arg *a = arg;

	return model_layer_kind(a->m, layer) == a->kind;
}

int
pipeline_stage_kind_layers(const struct model *m, const struct plan *p, int stage, int kind)
{
	struct kind_arg a = { m, kind };

	return pipeline_count_layers(m, p, stage, kind_pred, &a);
}

double
pipeline_rank_kind_layers(const struct model *m, const struct plan *p, int stage, int kind)
{
	int mirror = dual_mirror(p, stage);

	if (mirror < 0)
		return pipeline_stage_kind_layers(m, p, stage, kind);
	return 0.5 * (pipeline_stage_kind_layers(m, p, stage, kind) +
		      pipeline_stage_kind_layers(m, p, mirror, kind));
}

int
pipeline_prefix_kind_layers(const struct model *m, const struct plan *p, int stage, int n, int kind)
{
	struct kind_arg a = { m, kind };

	return pipeline_count_prefix_layers(m, p, stage, n, kind_pred, &a);
}

int
pipeline_rank_held_layers(const struct plan *p, const struct model *m, int stage)
{
	int mirror = dual_mirror(p, stage);

	return plan_stage_layers(p, m, stage) + (mirror < 0 ? 0 : plan_stage_layers(p, m, mirror));
}

double
pipeline_schedule_bubble(const struct plan *p, double fb, double b, double w)
{
	/* The fill no schedule avoids: a micro-batch's forward reaches the
	 * last rank (ZB-H1), the turn of a V (ZB-V, DualPipeV: chunks of half
	 * a stage) or DualPipe's middle rank (p/2 - 1 stages from either end)
	 * only after the forwards before it, and that rank then has its m
	 * micro-batches' work still to do: the bubble is at least F, F/2 or
	 * (p/2 - 1)/(p - 1) F per other stage (plan-cli reviewpp; the
	 * closed forms below fall under it when W outgrows the input
	 * gradient, where the schedules' own code does not: sail-sg's
	 * zbv.py and DualPipe's step() replayed in docs/research/
	 * framework-data.md). */
	double fwd = fb - b, bubble, fill;

	switch (p->pp_schedule) {
	case PLAN_PP_ZB_H1:
		/* ZB-H1 (Qi et al., ICLR 2024, Sec. 3.1): (p - 1)(F + B - W)
		 * with B the input gradient alone; with B the full backward
		 * (B_in + W), (p - 1)(F + B - 2W): DeepSeek-V3 Table 2's ZB1P. */
		bubble = fb - 2.0 * w;
		fill = fwd;
		break;
	case PLAN_PP_ZB_V:
		/* ZB-V: ZB-H1's warm-up over chunks of half a stage (Qi et al.
		 * 2024, Sec. 6): (p - 1)(F + B - 2W) / 2 in whole-stage units. */
		bubble = 0.5 * (fb - 2.0 * w);
		fill = 0.5 * fwd;
		break;
	case PLAN_PP_DUALPIPE:
		/* DeepSeek-V3 report Table 2: (p/2 - 1)(F&B + B - 3W), F&B the two
		 * overlapped chunks, here F + B (no credit for the overlap):
		 * (p/2 - 1) / (p - 1) of (F + 2B - 3W) per other stage. */
		bubble = (0.5 * p->pp - 1.0) / (p->pp - 1.0) * (fb + b - 3.0 * w);
		fill = (0.5 * p->pp - 1.0) / (p->pp - 1.0) * fwd;
		break;
	case PLAN_PP_DUALPIPEV:
		/* DualPipe's README: the same bubble on PP/2 devices, so with p
		 * ranks of two half-stage chunks (p - 1)(F + 2B - 3W) / 2. */
		bubble = 0.5 * (fb + b - 3.0 * w);
		fill = 0.5 * fwd;
		break;
	default:
		/* 1F1B: (p - 1)(F + B), over v when interleaved (SC21, Sec. 2.2). */
		return fb / p->vpp;
	}
	if (fill < 0.0)
		fill = 0.0;
	return bubble > fill ? bubble : fill;
}

double
pipeline_bound_slots(const struct plan *p)
{
	/* 1F1B: m + (p - 1)/v slots (SC21, Eq. 2); the other schedules' bubble
	 * can be near 0, so m slots is all a bound may assume. */
	if (p->pp_schedule != PLAN_PP_1F1B)
		return plan_microbatches(p);
	return plan_microbatches(p) + (double)(p->pp - 1) / p->vpp;
}

int
pipeline_head_stage(const struct plan *p)
{
	return pipeline_chunk_stage(p, p->pp * p->vpp - 1);
}

double
pipeline_end_share(const struct plan *p, int stage, bool head)
{
	/* DualPipe feeds half the micro-batches in at each end rank and
	 * takes each direction's loss at the other (deepseek-ai/DualPipe
	 * @3da1bbe, dualpipe.py step(): scatter(inputs, half_num_chunks) on
	 * the first and the last rank; is_last_stage = (is_first_rank and
	 * phase == 1) or (is_last_rank and phase == 0)): ranks 0 and p - 1
	 * each embed half the micro-batches and run the output layer and
	 * the loss of the other half. */
	if (p->pp_schedule == PLAN_PP_DUALPIPE && p->pp > 1)
		return stage == 0 || stage == p->pp - 1 ? 0.5 : 0.0;
	return stage == (head ? pipeline_head_stage(p) : 0) ? 1.0 : 0.0;
}
/* plan-cli pipeline: end */

/* The GPUs of a stage that share one node: they send at the same time. */
static int
stage_gpus_per_node(const struct plan *p, int gpus_per_node)
{
	long w = (long)p->tp * p->cp * p->dp;

	return w < gpus_per_node ? (int)w : gpus_per_node;
}

bool
pipeline_boundary_crosses(const struct plan *p, int gpus_per_node, int s)
{
	/* Ranks: TP innermost, then DP, then PP (Megatron's order). Stage s
	 * holds ranks s w .. (s+1) w - 1, w = t d; across the boundary after
	 * it, rank r pairs with r + w, or, after the last stage of an
	 * interleaved pipeline, with the same rank of stage 0. */
	long w = (long)p->tp * p->cp * p->dp, first = s * w;
	long peer = s + 1 < p->pp ? first + w : 0;

	if (p->pp <= 1)
		return false;
	for (long i = 0; i < w && i < gpus_per_node; i++)
		if ((first + i) / gpus_per_node != (peer + i) / gpus_per_node)
			return true;
	return w > gpus_per_node;
}

/* Whether any GPU of stage @s sits on another node than the same GPU of
 * stage @t (ranks as in pipeline_boundary_crosses). */
static bool
stages_cross(const struct plan *p, int gpus_per_node, int s, int t)
{
	long w = (long)p->tp * p->cp * p->dp;

	for (long i = 0; i < w && i < gpus_per_node; i++)
		if ((s * w + i) / gpus_per_node != (t * w + i) / gpus_per_node)
			return true;
	return w > gpus_per_node && s != t;
}

double
pipeline_mirror_grad_time(const struct plan *p, const struct cluster *c, int stage, double grad_bytes,
			  double *bytes_out)
{
	/* Stage i's weights live on rank i and rank p - 1 - i under
	 * DualPipe, each with half the micro-batches' gradient: the two sum
	 * theirs before the step (deepseek-ai/DualPipe @3da1bbe,
	 * examples/example_dualpipe.py, "Check grads": each module's grad
	 * plus the mirror rank's, gathered). Priced as the least that sum
	 * takes: every GPU swaps its @grad_bytes with the same GPU of the
	 * mirror rank (both ways at once), the node's GPUs sharing its NICs;
	 * after the pipeline drains (the last W of step() ends it), exposed. */
	int mirror = dual_mirror(p, stage);

	*bytes_out = 0.0;
	if (mirror < 0 || mirror == stage || grad_bytes <= 0.0)
		return 0.0;
	*bytes_out = grad_bytes;
	if (!stages_cross(p, c->gpus_per_node, stage, mirror))
		return collective_p2p_time(c, false, grad_bytes);
	return collective_p2p_shared_time(c, grad_bytes, stage_gpus_per_node(p, c->gpus_per_node));
}

double
pipeline_exchange_time(const struct model *m, const struct plan *p, const struct cluster *c,
		       const struct plan_layout *lay, bool inter_node, double *bytes_out)
{
	double bytes = 2.0 * p->micro_batch * (double)p->seq_len * m->hidden;
	int senders = stage_gpus_per_node(p, c->gpus_per_node);
	bool scatter;

	if (p->sequence_parallel)
		bytes /= p->tp; /* the activation is already split along s */
	scatter = inter_node && p->tp > 1 && !p->sequence_parallel;
	*bytes_out = scatter ? bytes / p->tp : bytes;
	if (!inter_node)
		return collective_p2p_time(c, false, bytes);
	if (scatter)
		return collective_p2p_shared_time(c, bytes / p->tp, senders) +
		       collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, bytes);
	return collective_p2p_shared_time(c, bytes, senders);
}

/* The exchange of a boundary depends only on whether it crosses nodes:
 * each kind is priced once per call (bench-predict: every stage's two
 * boundaries were priced afresh). */
struct p2p_memo {
	bool have[2];
	double time[2], bytes[2];
};

static double
memo_exchange_time(const struct model *m, const struct plan *p, const struct cluster *c,
		   const struct plan_layout *lay, bool inter_node, struct p2p_memo *memo, double *bytes_out)
{
	int k = inter_node ? 1 : 0;

	if (!memo->have[k]) {
		memo->time[k] = pipeline_exchange_time(m, p, c, lay, inter_node, &memo->bytes[k]);
		memo->have[k] = true;
	}
	*bytes_out = memo->bytes[k];
	return memo->time[k];
}

static double
stage_p2p_time(const struct model *m, const struct plan *p, const struct cluster *c,
	       const struct plan_layout *lay, int stage, struct p2p_memo *memo, double *bytes_out)
{
	/* The boundaries before and after the stage; an interleaved
	 * pipeline also wraps from the last stage to the first. */
	/* plan-cli pipeline: a V turns on the last rank, with no wrap. */
	int wrap = p->vpp > 1 && !pipeline_v_shape(p) ? p->pp - 1 : -1;
	int bounds[2] = { stage > 0 ? stage - 1 : wrap, stage < p->pp - 1 ? stage : wrap };
	double time = 0.0, bytes = 0.0;

	*bytes_out = 0.0;
	if (p->pp <= 1)
		return 0.0;
	for (int i = 0; i < 2; i++) {
		double b, t;
		/* Each of the v chunks exchanges over each boundary, but the
		 * wrap carries v - 1: virtual stage 0 on rank 0 receives no
		 * input and sends back no gradient, and the last virtual stage
		 * on rank p - 1 sends nothing on (Megatron-Core schedules.py
		 * forward_backward_pipelining_with_interleaving @d98e8a6:
		 * output_tensor = None on is_vp_last_stage and
		 * is_pp_last_stage, input_tensor_grad = None on the first). */
		double chunks = bounds[i] == wrap ? p->vpp - 1.0 : p->vpp;

		if (bounds[i] < 0)
			continue;
		t = memo_exchange_time(m, p, c, lay, pipeline_boundary_crosses(p, c->gpus_per_node, bounds[i]), memo,
				       &b);
		time += chunks * t;
		bytes += chunks * b;
	}
	*bytes_out = bytes;
	return time;
}

double
pipeline_stage_p2p_time(const struct model *m, const struct plan *p, const struct cluster *c,
			const struct plan_layout *lay, int stage, double *bytes_out)
{
	struct p2p_memo memo = { { false, false }, { 0.0, 0.0 }, { 0.0, 0.0 } };

	return stage_p2p_time(m, p, c, lay, stage, &memo, bytes_out);
}

void
pipeline_stages_p2p_time(const struct model *m, const struct plan *p, const struct cluster *c,
			 const struct plan_layout *lay, int n, double *time, double *bytes)
{
	struct p2p_memo memo = { { false, false }, { 0.0, 0.0 }, { 0.0, 0.0 } };

	for (int s = 0; s < n; s++)
		time[s] = stage_p2p_time(m, p, c, lay, s, &memo, &bytes[s]);
}

/* Megatron's interleaved schedule warms up with (v - 1) p + 2 (p - i - 1)
 * chunk forwards before its first backward, so stage i holds W, one more
 * than that (capped at all mb v of them); with chunks of L/(p v) layers
 * each, stage 0 holds Korthikanti's L (1 + (p-1)/(p v)). The forwards run
 * in groups of p micro-batches a chunk (schedules.py at Megatron-LM
 * d98e8a6: get_pp_rank_microbatches, microbatch_group_size_per_vp_stage
 * defaulting to p; forward k runs chunk (k mod p v) div p), so where the
 * rank's chunks differ in layers (an embedding or loss counted in the split,
 * --pp-split embedding-loss: chunk 0 of stage 0 holds none) the W forwards
 * hold the layers of the chunks they ran, not W / v of the stage's. Returns
 * the stage's layer-micro-batches over its layers: the micro-batches a
 * layer of the stage holds, on average. */
static double
interleaved_in_flight(const struct model *m, const struct plan *p, int stage, int mb)
{
	int v = p->vpp, total = mb * v, w = (v - 1) * p->pp + 2 * (p->pp - stage - 1) + 1;
	int layers = plan_stage_layers(p, m, stage);
	double held = 0.0;

	/* --moe-overlap combined-1f1b: the warm-up runs one forward more,
	 * so that the first steady-state step has a backward to pair with
	 * (schedules.py get_pp_rank_microbatches, overlap_moe_expert_
	 * parallel_comm, Megatron-LM d98e8a6 l. 966-970). */
	if (p->moe_overlap == PLAN_MOE_OVERLAP_COMBINED_1F1B)
		w++;
	if (w > total)
		w = total;
	if (layers <= 0)
		return (double)w / v;
	for (int k = 0; k < w; k++)
		held += pipeline_chunk_layers(p, m, pipeline_stage_chunk(p, stage, (k % (p->pp * v)) / p->pp));
	return held / layers;
}

/* A V's rank @stage holds chunk 0 (virtual stage @stage, on the way
 * down) and chunk 1 (virtual stage 2p - 1 - @stage, on the way back, the
 * loss's on rank 0), of @l0 and @l1 layers; the layer-micro-batches they
 * keep at the rank's peak (plan-cli reviewpipe, the schedules' own order
 * replayed, in docs/research/framework-data.md):
 * - ZB-V: sail-sg/zero-bubble-pipeline-parallelism @39f2c18,
 *   megatron/core/pipeline_parallel/zerobubble/scheduler/zbv.py
 *   (PipelineGraph.try_v_schedule, max_mem 2p chunks' forwards, its four
 *   fill variants), run as is for p 2-8, p <= m <= 4p and chunk costs
 *   (1,1,1) to (10,12,7): rank r peaks at (min(2p - r - 1, m), r + 1) or
 *   (min(2p - r, m), r) micro-batches of (chunk 0, chunk 1), whichever
 *   weighs more: 2p chunks, p whole stages, at m >= 2p and even chunks,
 *   but p + 1 chunks on rank 0 at m = p (not 2p).
 * - DualPipeV: deepseek-ai/DualPipe @3da1bbe, dualpipev.py step(): steps
 *   1-2 leave 2p - r - 1 of chunk 0 and r + 1 of chunk 1 in flight, and
 *   step 4's overlapped F0 + B1 one more chunk 0 before the backward frees
 *   one: (2p - r, r + 1), 2p + 1 chunks, the README's PP + 1 on PP/2
 *   devices. */
static double
v_in_flight(const struct plan *p, int stage, int mb, double l0, double l1)
{
	double down = 2.0 * p->pp - stage;

	if (p->pp_schedule == PLAN_PP_DUALPIPEV)
		return down * l0 + (stage + 1.0) * l1;
	return fmax(fmin(down - 1.0, mb) * l0 + (stage + 1.0) * l1, fmin(down, mb) * l0 + stage * l1);
}

/* pipeline_stored_layer_microbatches for @layers_per_stage layers of
 * @stage (1: what one layer holds, defined on a stage of none too). */
static double
stored_layer_microbatches(const struct model *m, const struct plan *p, int stage, double layers_per_stage)
{
	int mb = plan_microbatches(p);

	/* plan-cli pipeline: begin */
	switch (p->pp_schedule) {
	case PLAN_PP_ZB_V:
	case PLAN_PP_DUALPIPEV: {
		/* ZB-V keeps 1F1B's peak of p whole-stage micro-batches, 2p
		 * half-stage chunks, on every rank once m >= 2p (Qi et al., ICLR
		 * 2024, Sec. 6), fewer below; DualPipeV 2p + 1 chunks (the
		 * DualPipe README's PP + 1 on PP/2 devices): v_in_flight, chunk
		 * by chunk, over the rank's layers (an uneven V's chunks weigh
		 * their own layers). */
		double l0 = pipeline_chunk_layers(p, m, stage);
		double l1 = pipeline_chunk_layers(p, m, 2 * p->pp - 1 - stage);

		if (l0 + l1 <= 0.0)
			return layers_per_stage * v_in_flight(p, stage, mb, 1.0, 1.0) / 2.0;
		return layers_per_stage * v_in_flight(p, stage, mb, l0, l1) / (l0 + l1);
	}
	case PLAN_PP_DUALPIPE: {
		/* DeepSeek-V3 report, Table 2: PP + 1 micro-batches of a stage
		 * (its 2x parameters count in estimate_stage_params), of the
		 * rank's two stages: with h = min(i, p - 1 - i), dualpipe.py
		 * step()'s steps 1 and 2 run 2(p/2 - h - 1) + h + 1 forwards of
		 * phase 0 (stage h) and h + 1 of phase 1 (stage p - 1 - h,
		 * `phase ^= is_in_second_half`), and step 4's overlapped F&B
		 * one more before its backward frees one: p - h of stage h and
		 * h + 1 of stage p - 1 - h, p + 1 in all (a layout's uneven end
		 * stages no longer price an end rank's p + 1 at its own stage's
		 * layers alone). */
		int h = stage < p->pp - 1 - stage ? stage : p->pp - 1 - stage;

		return (double)(p->pp - h) * plan_stage_layers(p, m, h) +
		       (h + 1.0) * plan_stage_layers(p, m, p->pp - 1 - h);
	}
	default:
		break; /* ZB-H1 keeps 1F1B's memory (Qi et al., Sec. 3.1) */
	}
	/* plan-cli pipeline: end */
	if (p->vpp > 1)
		return interleaved_in_flight(m, p, stage, mb) * layers_per_stage;
	return layers_per_stage * (mb < p->pp - stage ? mb : p->pp - stage);
}

double
pipeline_stored_layer_microbatches(const struct model *m, const struct plan *p, int stage)
{
	return stored_layer_microbatches(m, p, stage, plan_stage_layers(p, m, stage));
}

double
pipeline_layer_microbatches(const struct model *m, const struct plan *p, int stage)
{
	int held = pipeline_rank_held_layers(p, m, stage);

	/* DualPipe's rank mixes two stages' micro-batches in its count: per
	 * layer it holds, or 1F1B's first-stage p on a rank of none. */
	if (dual_mirror(p, stage) >= 0)
		return held > 0 ? pipeline_stored_layer_microbatches(m, p, stage) / held : (double)p->pp;
	return stored_layer_microbatches(m, p, stage, 1.0);
}

/* Elements per token a linear layer's deferred W keeps: its saved input
 * @in and its output gradient @out (sail-sg/zero-bubble-pipeline-
 * parallelism @39f2c186, megatron/core/tensor_parallel/layers.py:
 * WeightGradStore.put(weight, partial(pre_process, grad_output, input),
 * ...) holds both until the W pass runs). */
static double
wgrad_kept(double in, double out)
{
	return in + out;
}

/* Of one layer's attention: its column-parallel projections read the
 * norm's output @hin (h/t saved under sequence parallelism) and write
 * their heads' share (/t); the row-parallel output projection reads the
 * heads' share and gets the whole h gradient (sequence parallelism's
 * reduce-scatter has an all-gather for backward). MLA's down-projections
 * are replicated (as op_sac_attention in memory.c counts them). */
static double
wgrad_attention(const struct model *m, double hin, double t)
{
	double a = m->heads, h = m->hidden, v = model_v_head_dim(m);

	if (m->attention == MODEL_ATTN_MLA) {
		const struct model_mla *l = &m->mla;
		double qk = model_qk_head_dim(m), q, kv;

		q = l->q_lora_rank > 0 ? wgrad_kept(hin, l->q_lora_rank) + wgrad_kept(l->q_lora_rank, a * qk / t) :
					 wgrad_kept(hin, a * qk / t);
		kv = wgrad_kept(hin, l->kv_lora_rank + l->qk_rope_head_dim) +
		     wgrad_kept(l->kv_lora_rank, a * (l->qk_nope_head_dim + v) / t);
		return q + kv + wgrad_kept(a * v / t, h);
	}
	/* QKV's output: with attention_output_gate the gate's columns too */
	return wgrad_kept(hin, model_qkv_dim(m) / t) +
	       wgrad_kept(a * model_head_dim(m) / t, h);
}

/* Of one MLP of @ffn on @rows rows a token: fc1 (and the gate) then fc2. */
static double
wgrad_mlp(const struct model *m, double hin, double ffn, double rows, double t)
{
	return rows * (wgrad_kept(hin, (m->gated_mlp ? 2.0 : 1.0) * ffn / t) + wgrad_kept(ffn / t, m->hidden));
}

double
pipeline_layer_wgrad_bytes(const struct model *m, const struct plan *p)
{
	/* 2-byte activations, per token of the micro-batch; an MoE layer's
	 * experts see cf k routed copies and the shared experts of each
	 * token, averaged over the layers (as memory.c's
	 * layer_activations_full). GPT-3's shapes at t = 1: attention h + 3h
	 * and h + h, MLP h + 4h and 4h + h: 16 h, 32 s b h bytes. */
	double t = p->tp, h = m->hidden, hin = p->sequence_parallel ? h / t : h;
	double mlp = wgrad_mlp(m, hin, m->ffn_hidden, 1.0, t);

	if (model_is_moe(m)) {
		double effn = m->moe.expert_ffn_hidden > 0 ? m->moe.expert_ffn_hidden : m->ffn_hidden;
		double rows = m->moe.capacity_factor * m->moe.top_k + m->moe.shared_experts;
		double frac = (double)model_moe_layers(m) / m->layers;

		mlp = (1.0 - frac) * mlp + frac * wgrad_mlp(m, h, effn, rows, t);
		if (m->moe.latent_size > 0) {
			/* Latent MoE (moe_layer.py @d98e8a6): the routed copies' fc1
			 * reads and fc2 writes l wide; the two "duplicated" latent
			 * projections (h -> l, l -> h) on the rank's own tokens
			 * (hin / h of them under SP). */
			double l = m->moe.latent_size, g = m->gated_mlp ? 2.0 : 1.0, ck = rows - m->moe.shared_experts;
			double routed = ck * (wgrad_kept(l, g * effn / t) + wgrad_kept(effn / t, l));
			double proj = hin / h * (wgrad_kept(h, l) + wgrad_kept(l, h));

			mlp = (1.0 - frac) * wgrad_mlp(m, hin, m->ffn_hidden, 1.0, t) +
			      frac * (routed + wgrad_mlp(m, h, effn, m->moe.shared_experts, t) + proj);
		}
	}
	if (model_is_hybrid(m)) {
		/* plan-cli hybrid (review16): the mean layer, kind by kind. */
		double sum = 0.0;

		for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
			struct model km;

			model_kind_model(m, kind, &km);
			sum += km.layers * (km.layers > 0 ? pipeline_layer_wgrad_bytes(&km, p) : 0.0);
		}
		return sum / m->layers;
	}
	/* A layer of one part (a hybrid model's kind model) keeps its part's:
	 * a mixer's in_proj (hin in, its share of the projections out) and
	 * out_proj (its share of d_inner or v in, h out). */
	double kept = 0.0;

	if (model_has_part(m, MODEL_PART_ATTENTION))
		kept += wgrad_attention(m, hin, t);
	if (model_has_part(m, MODEL_PART_MLP))
		kept += mlp;
	if (mixer_present(m))
		kept += wgrad_kept(hin, mixer_in_proj_dim(m) / t) + wgrad_kept(mixer_out_proj_in_dim(m) / t, h);
	return 2.0 * (double)p->seq_len * p->micro_batch * kept;
}

double
pipeline_deferred_w_bytes(const struct model *m, const struct plan *p, int stage)
{
	/* ZB-H1 (Qi et al., ICLR 2024, Sec. 2.1, "memory efficient
	 * schedule") starts each stage's W passes later by its warm-up, so
	 * every stage keeps p micro-batches in flight: stage i's p - i
	 * awaiting their backward (1F1B's, pipeline_stored_layer_microbatches)
	 * and i whose W is pending, each holding its linear layers' inputs
	 * and output gradients, whatever the recomputation (the stored
	 * closures keep them). Stage 0 keeps 1F1B's peak, the paper's claim;
	 * the later stages more than 1F1B's p - i. */
	if (p->pp_schedule != PLAN_PP_ZB_H1)
		return 0.0;
	if (model_is_hybrid(m)) {
		/* plan-cli hybrid (review16): the stage's own layers, kind by kind. */
		double kept = 0.0;

		for (int kind = 0; kind < MODEL_KIND_COUNT; kind++) {
			struct model km;
			int n = pipeline_stage_kind_layers(m, p, stage, kind);

			model_kind_model(m, kind, &km);
			if (n > 0)
				kept += n * pipeline_layer_wgrad_bytes(&km, p);
		}
		return (double)stage * kept;
	}
	return (double)stage * plan_stage_layers(p, m, stage) * pipeline_layer_wgrad_bytes(m, p);
}

double
pipeline_head_microbatches(const struct model *m, const struct plan *p, int stage)
{
	/* DualPipe's end rank runs the output layer in its phase 1 chunk
	 * (stage p - 1), of which step() keeps h + 1 = 1 micro-batch in
	 * flight (h = 0: see pipeline_stored_layer_microbatches), not the
	 * rank's p + 1. */
	if (dual_mirror(p, stage) >= 0)
		return 1.0;
	/* In a V the output layer is rank 0's chunk 1, which keeps r + 1 = 1
	 * micro-batch in flight (v_in_flight's replays of zbv.py and
	 * dualpipev.py), not the rank's p (plan-cli reviewpipe). */
	if (pipeline_v_shape(p) && stage == 0)
		return 1.0;
	/* Per layer, not the stored count over the stage's layers: a stage
	 * of the loss alone (--stage-layers ...,0) has none (0/0). */
	return pipeline_layer_microbatches(m, p, stage);
}

int
pipeline_stage_moe_layers(const struct model *m, const struct plan *p, int stage)
{
	int per_chunk = m->layers / (p->pp * p->vpp);
	int count = 0;

	if (!model_is_moe(m))
		return 0;
	if (!pipeline_even_layout(p)) {
		for (int j = 0; j < p->vpp; j++) {
			int k = pipeline_stage_chunk(p, stage, j), first = pipeline_chunk_first_layer(p, m, k);
			int n = pipeline_chunk_layers(p, m, k);

			if (n > 0)
				count += model_moe_layers_between(m, first, first + n - 1);
		}
		return count;
	}
	for (int j = 0; j < p->vpp; j++) {
		int first = (j * p->pp + stage) * per_chunk + 1;

		count += model_moe_layers_between(m, first, first + per_chunk - 1);
	}
	return count;
}

int
pipeline_count_layers(const struct model *m, const struct plan *p, int stage,
		      bool (*pred)(int layer, const void *arg), const void *arg)
{
	int per_chunk = m->layers / (p->pp * p->vpp);
	int count = 0;

	if (!pipeline_even_layout(p)) {
		for (int j = 0; j < p->vpp; j++) {
			int k = pipeline_stage_chunk(p, stage, j), first = pipeline_chunk_first_layer(p, m, k);

			for (int l = first; l < first + pipeline_chunk_layers(p, m, k); l++)
				if (pred(l, arg))
					count++;
		}
		return count;
	}
	for (int j = 0; j < p->vpp; j++) {
		int first = (j * p->pp + stage) * per_chunk + 1;

		for (int l = first; l < first + per_chunk; l++)
			if (pred(l, arg))
				count++;
	}
	return count;
}

/* The first @n layers of @stage that recompute in full, chunk by chunk
 * in model order: --recompute-layers (vpp 1) takes the stage's first n;
 * the block method (Megatron's --recompute-method block,
 * transformer_block.py _checkpointed_forward) the first
 * recompute_num_layers of each of its virtual stages, n in all
 * (plan_resolve_recompute). Counts those for which @pred holds. */
int
pipeline_count_prefix_layers(const struct model *m, const struct plan *p, int stage, int n,
			     bool (*pred)(int layer, const void *arg), const void *arg)
{
	int count = 0, left = n;

	for (int j = 0; j < p->vpp && left > 0; j++) {
		int k = pipeline_stage_chunk(p, stage, j), first = pipeline_chunk_first_layer(p, m, k);
		int take = pipeline_chunk_layers(p, m, k);

		if (plan_recompute_block(p) && take > p->recompute_num_layers)
			take = p->recompute_num_layers;
		take = take < left ? take : left;
		for (int l = first; l < first + take; l++)
			count += pred(l, arg);
		left -= take;
	}
	return count;
}

/* plan-cli bf16ends: begin (the first and last layers in bf16) */
struct bf16_layers_arg {
	const struct model *m;
	const struct plan *p;
	bool moe; /* count the MoE layers among them only */
};

/* Megatron-Core's is_first_last_bf16_layer (megatron/core/fp8_utils.py,
 * core_r0.13.0 on): global layer_no (0-based) < num_layers_at_start_in_bf16
 * or >= num_layers - num_layers_at_end_in_bf16; plan-cli numbers layers
 * from 1. */
bool
pipeline_layer_in_bf16(const struct model *m, const struct plan *p, int layer)
{
	return layer <= p->bf16_first_layers || layer > m->layers - p->bf16_last_layers;
}

static bool
bf16_layer(int layer, const void *arg)
{
	const struct bf16_layers_arg *a = arg;

	return pipeline_layer_in_bf16(a->m, a->p, layer) && (!a->moe || model_layer_is_moe(a->m, layer));
}

int
pipeline_prefix_bf16_layers(const struct model *m, const struct plan *p, int stage, int n, int *moe)
{
	struct bf16_layers_arg a = { m, p, false };
	int count = pipeline_count_prefix_layers(m, p, stage, n, bf16_layer, &a);

	a.moe = true;
	*moe = count > 0 && model_is_moe(m) ? pipeline_count_prefix_layers(m, p, stage, n, bf16_layer, &a) : 0;
	return count;
}

int
pipeline_stage_bf16_layers(const struct model *m, const struct plan *p, int stage, int *moe)
{
	struct bf16_layers_arg a = { m, p, false };
	int n;

	*moe = 0;
	if (p->bf16_first_layers <= 0 && p->bf16_last_layers <= 0)
		return 0;
	n = pipeline_count_layers(m, p, stage, bf16_layer, &a);
	if (n > 0 && model_is_moe(m)) {
		a.moe = true;
		*moe = pipeline_count_layers(m, p, stage, bf16_layer, &a);
	}
	return n;
}

double
pipeline_rank_bf16_layers(const struct model *m, const struct plan *p, int stage, double *moe)
{
	int mirror = dual_mirror(p, stage), mo = 0, mm = 0;
	double n = pipeline_stage_bf16_layers(m, p, stage, &mo);

	*moe = mo;
	if (mirror < 0)
		return n;
	n = 0.5 * (n + pipeline_stage_bf16_layers(m, p, mirror, &mm));
	*moe = 0.5 * (mo + mm);
	return n;
}
/* plan-cli bf16ends: end */
