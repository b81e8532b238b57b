/* Uneven and interleaved pipeline layouts and the pipeline schedules
 * (pipeline.c), each value worked out by hand in its comment. */
#include <math.h>
#include <string.h>

#include "plan/estimate.h"
#include "plan/framework.h"
#include "plan/pipeline.h"
#include "plan/plan_attr.h"
#include "plan/topology.h"
#include "testutil.h"

#define LLAMA405_YAML \
	"name: l405\nlayers: 126\nhidden: 16384\nheads: 128\nkv_heads: 8\nffn_hidden: 53248\n" \
	"gated_mlp: true\nvocab: 128256\nseq_len: 8192\n"

static void
layers_plan(struct plan *p, int pp, int vpp)
{
	plan_init(p);
	p->tp = 8;
	p->pp = pp;
	p->vpp = vpp;
	p->dp = 8;
	p->global_batch = 8 * 4 * pp;
	p->seq_len = 2048;
}

static void
model_layers(struct model *m, int layers)
{
	char yaml[256];

	snprintf(yaml, sizeof(yaml), "name: t\nlayers: %d\nhidden: 4096\nheads: 32\nvocab: 32000\nseq_len: 2048\n",
		 layers);
	test_load_model(m, yaml);
}

/* Megatron-Core's account_for_embedding/loss_in_pipeline_split
 * (get_num_layers_to_build, transformer_block.py, 0.12): Llama 3.1 405B's
 * 126 layers + 2 = 128 over 8 x 8 virtual stages, 2 each, one less on the
 * first and the last: rank 0 holds virtual stages 0, 8, ..., 56, so
 * 1 + 7 x 2 = 15; rank 7 holds 7, ..., 63: 7 x 2 + 1 = 15; the others 16
 * (15 + 15 + 6 x 16 = 126). On 16 x 4: 128/64 = 2 a chunk, ranks 0 and 15
 * 1 + 3 x 2 = 7, the others 8 (7 + 7 + 14 x 8 = 126). */
START_TEST(test_embedding_loss_split)
{
	struct model m;
	struct plan p;
	struct plan_error err;

	test_load_model(&m, LLAMA405_YAML);
	layers_plan(&p, 8, 8);
	ck_assert(!plan_validate_layout(&p, &m, &err)); /* 126 % 64 */
	p.pp_split = PLAN_PP_SPLIT_EMBEDDING_LOSS;
	ck_assert_msg(plan_validate_layout(&p, &m, &err), "%s", err.message);
	ck_assert_int_eq(pipeline_chunk_layers(&p, &m, 0), 1);
	ck_assert_int_eq(pipeline_chunk_layers(&p, &m, 1), 2);
	ck_assert_int_eq(pipeline_chunk_layers(&p, &m, 63), 1);
	ck_assert_int_eq(pipeline_chunk_first_layer(&p, &m, 2), 4);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 15);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 3), 16);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 7), 15);
	layers_plan(&p, 16, 4);
	p.pp_split = PLAN_PP_SPLIT_EMBEDDING_LOSS;
	ck_assert_msg(plan_validate_layout(&p, &m, &err), "%s", err.message);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 7);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 1), 8);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 15), 7);
	/* The embedding alone: 127 is prime, no pp x vpp above 1 divides it. */
	p.pp_split = PLAN_PP_SPLIT_EMBEDDING;
	ck_assert(!plan_validate_layout(&p, &m, &err));
}
END_TEST

/* --decoder-first/last-pipeline-num-layers: DeepSeek-V3's 61 layers on
 * pp 16 with 1 on the first rank: (61 - 1)/15 = 4 on each other. With
 * vpp 2, L 20 on pp 4, first 2 and last 2: (20 - 4)/2 = 8 a middle rank,
 * 4 a chunk; the end ranks 1 a chunk. Virtual stage k is on rank k mod 4:
 * 1, 4, 4, 1, 1, 4, 4, 1. */
START_TEST(test_first_last_split)
{
	struct model m;
	struct plan p;
	struct plan_error err;
	const int want[8] = { 1, 4, 4, 1, 1, 4, 4, 1 };

	model_layers(&m, 61);
	layers_plan(&p, 16, 1);
	p.pp_first_layers = 1;
	ck_assert_msg(plan_validate_layout(&p, &m, &err), "%s", err.message);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 1);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 1), 4);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 15), 4);
	ck_assert_int_eq(plan_stage_first_layer(&p, &m, 2), 6);
	p.pp_first_layers = 2; /* 59 over 15 ranks */
	ck_assert(!plan_validate_layout(&p, &m, &err));
	p.pp_first_layers = 1;
	p.pp_split = PLAN_PP_SPLIT_EMBEDDING_LOSS; /* Megatron refuses both */
	ck_assert(!plan_validate_layout(&p, &m, &err));

	model_layers(&m, 20);
	layers_plan(&p, 4, 2);
	p.pp_first_layers = p.pp_last_layers = 2;
	ck_assert_msg(plan_validate_layout(&p, &m, &err), "%s", err.message);
	for (int k = 0; k < 8; k++)
		ck_assert_int_eq(pipeline_chunk_layers(&p, &m, k), want[k]);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 2);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 1), 8);
	p.pp_first_layers = 3; /* 3 layers do not split into 2 chunks */
	ck_assert(!plan_validate_layout(&p, &m, &err));
}
END_TEST

/* torchtitan's generate_split_points (torchtitan/parallelisms/pipeline.py,
 * 2024-12): 61 layers on 16 stages: base 3, 13 extra: stage 0 3, stages
 * 1-13 4, stage 14 3, the last 61 - (3 + 52 + 3) = 3. 94 layers (Qwen3-235B)
 * on 4 x 2: base 11, 6 extra: 11, 12 x 6, 11; ranks 0 (stages 0 and 4)
 * 23, 1 and 2 24, 3 (stages 3 and 7) 23. 15 layers on 4 stages: base 3,
 * extra 3 > 4 - 2: 3, 4, 4 and the last 3 + 1 = 4. In a V (ZB-V) rank r
 * holds stages r and 7 - r: rank 0 stages 0 and 7, 11 + 11 = 22, rank 3
 * stages 3 and 4, 24, and rank 0 also the output layer. */
START_TEST(test_torchtitan_split)
{
	struct model m;
	struct plan p;
	struct plan_error err;

	model_layers(&m, 61);
	layers_plan(&p, 16, 1);
	p.pp_split = PLAN_PP_SPLIT_TORCHTITAN;
	ck_assert_msg(plan_validate_layout(&p, &m, &err), "%s", err.message);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 3);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 1), 4);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 13), 4);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 14), 3);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 15), 3);

	model_layers(&m, 94);
	layers_plan(&p, 4, 2);
	p.pp_split = PLAN_PP_SPLIT_TORCHTITAN;
	ck_assert_msg(plan_validate_layout(&p, &m, &err), "%s", err.message);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 23);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 1), 24);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 3), 23);
	ck_assert_int_eq(pipeline_head_stage(&p), 3);
	p.pp_schedule = PLAN_PP_ZB_V;
	ck_assert_int_eq(pipeline_chunk_stage(&p, 7), 0);
	ck_assert_int_eq(pipeline_chunk_stage(&p, 4), 3);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 22);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 3), 24);
	ck_assert_int_eq(pipeline_head_stage(&p), 0);

	model_layers(&m, 15);
	layers_plan(&p, 4, 1);
	p.pp_split = PLAN_PP_SPLIT_TORCHTITAN;
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 3);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 2), 4);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 3), 4);
}
END_TEST

/* The framework's pipeline_split applies where the even split fails and
 * the plan names no rule: 61 layers on pp 16 under torchtitan's, 64 stay
 * even, and a plan's own first-stage count wins. */
START_TEST(test_framework_split)
{
	struct model m;
	struct cluster c;
	struct plan p;
	struct plan_error err;
	const struct plan_fill fill = { .gpus = 0, .flash = 1, .pp_split = PLAN_PP_SPLIT_TORCHTITAN };

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	model_layers(&m, 61);
	layers_plan(&p, 16, 1);
	p.dp = 0;
	ck_assert_msg(plan_complete(&p, &fill, &m, &c, &err), "%s", err.message);
	ck_assert_int_eq(p.pp_split, PLAN_PP_SPLIT_TORCHTITAN);
	layers_plan(&p, 16, 1);
	p.dp = 0;
	p.pp_first_layers = 1;
	ck_assert_msg(plan_complete(&p, &fill, &m, &c, &err), "%s", err.message);
	ck_assert_int_eq(p.pp_split, PLAN_PP_SPLIT_EVEN);
	model_layers(&m, 64);
	layers_plan(&p, 16, 1);
	p.dp = 0;
	ck_assert_msg(plan_complete(&p, &fill, &m, &c, &err), "%s", err.message);
	ck_assert_int_eq(p.pp_split, PLAN_PP_SPLIT_EVEN);
}
END_TEST

/* --stage-layers with vpp > 1 lists the pp x vpp virtual stages: 61 on
 * 2 x 2 as 15,16,15,15: rank 0 holds 15 + 15 = 30, rank 1 16 + 15 = 31. */
START_TEST(test_virtual_stage_list)
{
	struct model m;
	struct plan p;
	struct plan_error err;

	model_layers(&m, 61);
	layers_plan(&p, 2, 2);
	p.custom_layers = true;
	p.stage_layers_count = 4;
	p.stage_layers[0] = 15, p.stage_layers[1] = 16, p.stage_layers[2] = 15, p.stage_layers[3] = 15;
	ck_assert_msg(plan_validate_layout(&p, &m, &err), "%s", err.message);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 30);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 1), 31);
	ck_assert_int_eq(pipeline_chunk_first_layer(&p, &m, 3), 47);
	p.stage_layers[3] = 14;
	ck_assert(!plan_validate_layout(&p, &m, &err));
}
END_TEST

/*
 * A stage of no transformer layer (Megatron-Core's
 * --pipeline-model-parallel-layout "E|t*11|t*11|t*10L"): the toy GPT with
 * 32 layers (h 1024, V 32768, s 1024, learned positions, tied
 * embeddings) on the toy cluster, tp 1, pp 4, dp 2 (stage s on GPUs 2s
 * and 2s + 1: stages 0 and 1 share node 0), b 1, B 16 (m 8), the
 * built-in framework (no main_grad, no host model, no fixed costs).
 * Stage 0's slot is the embedding and its one exchange, nothing else:
 * - forward: read the rows, write the activations, 2 x 2 x 1024 x 1024
 *   B at 1e12 B/s = 4.194304e-6 s;
 * - backward: twice that, 8.388608e-6, and the gradient's zero fill of
 *   the V x h table, 2 x 32768 x 1024 B = 6.7108864e-5 s: 7.5497472e-5;
 * - the exchange with stage 1 (within the node): 2 b s h = 2,097,152 B
 *   at 1e11 B/s plus 1 us, 2.197152e-5 s (no wrap at vpp 1);
 * 1.01663296e-4 s in all. Its parameters are the embedding's, V h + s h
 * = 33,554,432 + 1,048,576 = 34,603,008, 16 bytes each (2 weight, 2
 * gradient, 12 Adam), 553,648,128 B; its activations the embedding's
 * dropout mask alone, s b h = 1,048,576 B for each of min(p, m) = 4
 * micro-batches in flight; with the GPU's 1 GiB reserved 1,631,584,256 B
 * (no NaN from a stage's stored micro-batches over its 0 layers). With
 * the loss alone on stage 3 (10,11,11,0) its slot is the output layer's.
 * Layouts with no layer at all, or not the model's 32, are refused.
 */
START_TEST(test_empty_stage)
{
	struct model m;
	struct cluster c;
	struct plan p, q;
	struct estimate e, f;
	struct plan_error err;
	const short layout[4] = { 0, 11, 11, 10 };

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, "name: toy32\nlayers: 32\nhidden: 1024\nheads: 8\nvocab: 32768\nseq_len: 1024\n");
	plan_init(&p);
	p.tp = 1;
	p.pp = 4;
	p.dp = 2;
	p.micro_batch = 1;
	p.global_batch = 16;
	p.seq_len = 1024;
	p.custom_layers = true;
	p.stage_layers_count = 4;
	memcpy(p.stage_layers, layout, sizeof(layout));
	ck_assert_msg(plan_validate_layout(&p, &m, &err), "%s", err.message);
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 0);
	ck_assert_int_eq(plan_stage_first_layer(&p, &m, 1), 1);
	/* --recompute-layers 0,2,2,0: 0 of stage 0's 0 layers is not "all in full". */
	p.custom_recompute_layers = true;
	p.stage_recompute_layers_count = 4;
	p.stage_recompute_layers[1] = p.stage_recompute_layers[2] = 2;
	ck_assert_int_eq(plan_stage_mode(&p, &m, 0), PLAN_RECOMPUTE_NONE);
	p.custom_recompute_layers = false;
	ck_assert_rel(estimate_stage_params(&m, &p, 0, NULL), 34603008.0, 1e-15);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert_rel(e.stage_slot_s[0], 1.01663296e-4, 1e-12);
	/* Every figure finite (estimate_finite), the pace set by another
	 * stage, and the same layout with the loss alone on stage 3. */
	ck_assert_int_ne(e.details.bottleneck_stage, 0);
	ck_assert_rel(e.stage_memory[0], 1631584256.0, 1e-12);
	/* Were the embedding's stage over the GPU's memory, no count of
	 * recomputed layers could help it (it has none to recompute). */
	e.stage_memory[0] = 2.0 * e.memory_capacity_bytes;
	ck_assert(!estimate_fewest_recompute_layers(&m, &p, NULL, &e, &q));
	p.stage_layers[0] = 10, p.stage_layers[3] = 0;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &f, &err), "%s", err.message);
	ck_assert(f.stage_slot_s[3] < f.stage_slot_s[2]);
	ck_assert(isfinite(f.stage_memory[3]) && f.stage_memory[3] > 0.0);
	/* All empty; a 0 with the rest short of the 32 layers. */
	memset(p.stage_layers, 0, sizeof(layout));
	ck_assert(!plan_validate_layout(&p, &m, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "stage_layers leaves every stage empty"));
	memcpy(p.stage_layers, layout, sizeof(layout));
	p.stage_layers[3] = 9;
	ck_assert(!plan_validate_layout(&p, &m, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "hold 31 layers but the model has 32"));
	cluster_release(&c);
}
END_TEST

/*
 * One other stage's bubble with F + B = 3, B = 2 (full backward), W = 0.8:
 * - 1F1B (p - 1)(F + B): 3 a stage; interleaved v = 2: 1.5.
 * - ZB-H1 F + B - 2W = 3 - 1.6 = 1.4. With F = B_in = W = 1 (Qi et al.'s
 *   case: F + B = 3, W = 1) 1: a third of 1F1B's 3, as the paper says.
 * - ZB-V half of ZB-H1's: 0.7.
 * - DualPipe on p = 8: (8/2 - 1)/7 x (3 + 2 - 2.4) = 3/7 x 2.6; over the 7
 *   other stages 3 x 2.6 = 7.8 = (PP/2 - 1)(F&B + B - 3W) of Table 2 with
 *   F&B = F + B = 3.
 * - DualPipeV 2.6 / 2 = 1.3; over 7 stages 9.1 = (16/2 - 1)(1.5 + 1 - 1.2)
 *   for its 16 chunks of half the times.
 * A W above the input gradient (W = 2, B_in = 0) brings each closed form
 * below 0 (ZB-H1 3 - 4 = -1), but the forward F = 3 - 2 = 1 of each stage
 * before the last (ZB-H1), the turn (ZB-V, DualPipeV: F/2 = 0.5) or the
 * middle rank (DualPipe: 3/7 x 1, over 7 stages 3 = (p/2 - 1) F) still
 * comes first: sail-sg's zbv.py (PipelineGraph.try_v_schedule, its own
 * cost model) on p 4, m 16 and chunk times F 1, B_in 1, W 2 ends 3 = (p -
 * 1) F/2 past the 6m of work, where the closed form says 0.
 */
START_TEST(test_schedule_bubble)
{
	struct plan p;

	layers_plan(&p, 8, 1);
	ck_assert_rel(pipeline_schedule_bubble(&p, 3.0, 2.0, 0.8), 3.0, 1e-15);
	p.vpp = 2;
	ck_assert_rel(pipeline_schedule_bubble(&p, 3.0, 2.0, 0.8), 1.5, 1e-15);
	p.vpp = 1;
	p.pp_schedule = PLAN_PP_ZB_H1;
	ck_assert_rel(pipeline_schedule_bubble(&p, 3.0, 2.0, 0.8), 1.4, 1e-14);
	ck_assert_rel(pipeline_schedule_bubble(&p, 3.0, 2.0, 1.0), 1.0, 1e-15);
	ck_assert_rel(pipeline_schedule_bubble(&p, 3.0, 2.0, 2.0), 1.0, 1e-15);
	p.pp_schedule = PLAN_PP_ZB_V;
	ck_assert_rel(pipeline_schedule_bubble(&p, 3.0, 2.0, 0.8), 0.7, 1e-14);
	ck_assert_rel(pipeline_schedule_bubble(&p, 3.0, 2.0, 2.0), 0.5, 1e-15);
	p.pp_schedule = PLAN_PP_DUALPIPE;
	ck_assert_rel(7.0 * pipeline_schedule_bubble(&p, 3.0, 2.0, 0.8), 7.8, 1e-14);
	ck_assert_rel(7.0 * pipeline_schedule_bubble(&p, 3.0, 2.0, 2.0), 3.0, 1e-14);
	p.pp_schedule = PLAN_PP_DUALPIPEV;
	ck_assert_rel(7.0 * pipeline_schedule_bubble(&p, 3.0, 2.0, 0.8), 9.1, 1e-14);
	ck_assert_rel(pipeline_schedule_bubble(&p, 3.0, 2.0, 2.0), 0.5, 1e-15);
	/* Bounds: m + (p - 1)/v slots under 1F1B, m under the others. */
	ck_assert_rel(pipeline_bound_slots(&p), 32.0, 1e-15);
	p.pp_schedule = PLAN_PP_1F1B;
	ck_assert_rel(pipeline_bound_slots(&p), 39.0, 1e-15);
}
END_TEST

/* Activations in flight, (layer, micro-batch) units, GPT-3 on p 12, m 96,
 * 8 layers a rank: 1F1B and ZB-H1 8 x 12 = 96 on stage 0, 8 x 1 on the
 * last; ZB-V 8 x min(12, 96) = 96 on every rank; DualPipe (p + 1) x 8 =
 * 104 (DeepSeek-V3 Table 2: PP + 1); DualPipeV (2p + 1)/2 x 8 = 100. */
START_TEST(test_schedule_activations)
{
	struct model m;
	struct plan p;

	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	p.pp_schedule = PLAN_PP_ZB_H1;
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 96.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 11), 8.0, 1e-15);
	p.pp_schedule = PLAN_PP_ZB_V;
	p.vpp = 2;
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 96.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 11), 96.0, 1e-15);
	p.pp_schedule = PLAN_PP_DUALPIPEV;
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 5), 100.0, 1e-15);
	p.pp_schedule = PLAN_PP_DUALPIPE;
	p.vpp = 1;
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 5), 104.0, 1e-15);
}
END_TEST

/* What each schedule needs: DualPipe an even pp, an even m >= 2p, v 1;
 * ZB-V and DualPipeV v 2; the zero-bubble ones m >= p and pp > 1. */
START_TEST(test_schedule_validation)
{
	struct model m;
	struct cluster c;
	struct plan p;
	struct plan_error err;

	test_load_model(&m, GPT3_YAML);
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	gpt3_plan(&p);
	p.dp = 4; /* the test cluster's 512 GPUs; m = 384 / 4 = 96 still */
	p.global_batch = 384;
	p.pp_schedule = PLAN_PP_DUALPIPE;
	ck_assert_msg(plan_validate(&p, &m, &c, &err), "%s", err.message);
	p.global_batch = 4 * 22; /* m = 22 < 2 x 12 */
	ck_assert(!plan_validate(&p, &m, &c, &err));
	p.global_batch = 4 * 25; /* m = 25 odd */
	ck_assert(!plan_validate(&p, &m, &c, &err));
	p.global_batch = 384;
	p.vpp = 2;
	ck_assert(!plan_validate(&p, &m, &c, &err));
	p.pp_schedule = PLAN_PP_ZB_V;
	ck_assert_msg(plan_validate(&p, &m, &c, &err), "%s", err.message);
	p.pp_schedule = PLAN_PP_DUALPIPEV;
	ck_assert_msg(plan_validate(&p, &m, &c, &err), "%s", err.message);
	p.vpp = 1;
	ck_assert(!plan_validate(&p, &m, &c, &err));
	p.pp_schedule = PLAN_PP_ZB_H1;
	ck_assert_msg(plan_validate(&p, &m, &c, &err), "%s", err.message);
	p.global_batch = 4 * 8; /* m = 8 < p */
	ck_assert(!plan_validate(&p, &m, &c, &err));
}
END_TEST

/* DualPipe's rank i also holds stage p - 1 - i: a middle rank of an even
 * layout twice the parameters of 1F1B's (Table 2: 2x), and the end ranks
 * both the embedding and the output layer. The estimate of each schedule:
 * ZB-H1's bubble is shorter; its stage 0 keeps 1F1B's memory and stage i
 * i micro-batches more whose W pass is pending (Qi et al. Sec. 2.1), each
 * layer's linear inputs and output gradients: GPT-3 at tp 8 without
 * sequence parallelism, per token attention h + 3h/8 (QKV) and h/8 + h
 * (projection), MLP h + 4h/8 and 4h/8 + h: 5.5 h elements, 11 s b h =
 * 11 x 2048 x 12288 = 276,824,064 bytes a layer (32 s b h =
 * 805,306,368 at tp 1, Qi et al.'s M_W); the last stage 11 x 8 layers of
 * it, 24,360,517,632 bytes more, full recomputation or not. */
START_TEST(test_schedule_estimates)
{
	struct model m;
	struct cluster c;
	struct plan p;
	struct estimate e1, e2;
	struct plan_error err;
	double one, two;

	test_load_model(&m, GPT3_YAML);
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	gpt3_plan(&p);
	one = estimate_stage_params(&m, &p, 3, NULL);
	p.pp_schedule = PLAN_PP_DUALPIPE;
	two = estimate_stage_params(&m, &p, 3, NULL);
	ck_assert_rel(two, 2.0 * one, 1e-15);
	ck_assert_rel(estimate_stage_params(&m, &p, 0, NULL), estimate_stage_params(&m, &p, 11, NULL), 1e-15);

	p.pp_schedule = PLAN_PP_1F1B;
	p.dp = 4; /* the test cluster's 512 GPUs; m = 96 */
	p.global_batch = 384;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e1, &err), "%s", err.message);
	p.pp_schedule = PLAN_PP_ZB_H1;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e2, &err), "%s", err.message);
	ck_assert(e2.breakdown.pp_bubble < e1.breakdown.pp_bubble);
	ck_assert(e2.breakdown.pp_bubble > 0.0);
	ck_assert_rel(e2.stage_memory[0], e1.stage_memory[0], 1e-15);
	ck_assert_rel(pipeline_layer_wgrad_bytes(&m, &p), 276824064.0, 1e-15);
	ck_assert_rel(e2.stage_memory[11] - e1.stage_memory[11], 24360517632.0, 1e-12);
	p.tp = 1;
	ck_assert_rel(pipeline_layer_wgrad_bytes(&m, &p), 805306368.0, 1e-15);
	ck_assert_rel(e2.details.bubble_fraction, e2.breakdown.pp_bubble / (96.0 * e2.details.slot_s), 1e-12);
}
END_TEST

/* Who runs the embedding and the output layer with the loss, per
 * micro-batch: 1F1B on p 12 stage 0 and stage 11; a V (ZB-V) both on
 * rank 0 (virtual stages 0 and 2p - 1 = 23 there); DualPipe half of each
 * on ranks 0 and 11, which feed half the micro-batches in and take the
 * other direction's loss (deepseek-ai/DualPipe @3da1bbe, dualpipe.py
 * step() and is_last_stage), none on a middle rank. */
START_TEST(test_end_share)
{
	struct plan p;

	gpt3_plan(&p);
	ck_assert(pipeline_end_share(&p, 0, false) == 1.0 && pipeline_end_share(&p, 0, true) == 0.0);
	ck_assert(pipeline_end_share(&p, 11, false) == 0.0 && pipeline_end_share(&p, 11, true) == 1.0);
	p.pp_schedule = PLAN_PP_ZB_V;
	p.vpp = 2;
	ck_assert(pipeline_end_share(&p, 0, false) == 1.0 && pipeline_end_share(&p, 0, true) == 1.0);
	ck_assert(pipeline_end_share(&p, 11, true) == 0.0);
	p.pp_schedule = PLAN_PP_DUALPIPE;
	p.vpp = 1;
	for (int s = 0; s < 12; s++) {
		double want = s == 0 || s == 11 ? 0.5 : 0.0;

		ck_assert(pipeline_end_share(&p, s, false) == want && pipeline_end_share(&p, s, true) == want);
	}
}
END_TEST

/*
 * DualPipe's end ranks are alike: each holds stages 0 and 11 (Table 2's
 * 2x parameters, both ends), p + 1 micro-batches in flight, one
 * micro-batch's logits at its loss (4 s b h / t (1 + V/h) = 4 x 2048 x
 * 12288 / 8 x (1 + 51200/12288) = 65,011,712 bytes) and the embedding's
 * dropout masks: rank 0's peak memory is rank 11's. Before, the logits sat
 * on rank 11 alone. Their slot runs half a micro-batch's embedding and
 * half its output layer and loss (the other half the other direction's):
 * shorter than 1F1B's last stage, which runs the whole output layer each
 * micro-batch (the embedding, a gather, costs less), where the layers and
 * the one boundary's exchange are the same (GPT-3, 8 layers a stage, every
 * boundary across nodes at tp 8 x dp 4).
 */
START_TEST(test_dualpipe_ends)
{
	struct model m;
	struct cluster c;
	struct plan p;
	struct estimate e1, e2;
	struct plan_error err;

	test_load_model(&m, GPT3_YAML);
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	gpt3_plan(&p);
	p.dp = 4;
	p.global_batch = 384; /* m = 96 */
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e1, &err), "%s", err.message);
	ck_assert_int_eq(e1.details.bottleneck_stage, 11);
	p.pp_schedule = PLAN_PP_DUALPIPE;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e2, &err), "%s", err.message);
	ck_assert_rel(e2.stage_memory[0], e2.stage_memory[11], 1e-15);
	ck_assert(e2.stage_memory[0] > e2.stage_memory[5] + 65011712.0);
	ck_assert(e2.details.slot_s < e1.details.slot_s);
	cluster_release(&c);
}
END_TEST

/*
 * DualPipe on an uneven layout (plan-cli pipe2): 30 layers on p 4, the
 * first stage 5 and the last 9, the middle ones (30 - 14)/2 = 8: stages
 * 5, 8, 8, 9. Rank i holds stages i and 3 - i (example_dualpipe.py) and
 * runs half the micro-batches through each (step()'s half_num_chunks):
 * per micro-batch rank 0 and rank 3 (5 + 9)/2 = 7 layers, ranks 1 and 2
 * 8; their weights 14 and 16 layers. In flight (step(), h = min(i, 3 -
 * i)): p - h of stage h and h + 1 of stage 3 - h: rank 0 and rank 3 4 x 5
 * + 1 x 9 = 29 (before: (p + 1) x its own stage, 25 and 45), ranks 1 and
 * 2 3 x 8 + 2 x 8 = 40; the output layer's chunk holds 1 micro-batch
 * (the MTP modules' activations; before p + 1 = 5). A layout of 7, 8, 8,
 * 7 gives every rank the same layers a micro-batch and the same weights,
 * so the same iteration time and parameters, and 5 x 7 = 35 in flight
 * on the end ranks; both layouts' end ranks are alike.
 */
START_TEST(test_dualpipe_uneven)
{
	struct model m;
	struct cluster c;
	struct plan p;
	struct estimate a, b;
	struct plan_error err;
	double pa;

	model_layers(&m, 30);
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	layers_plan(&p, 4, 1); /* tp 8 dp 8, m = 16 */
	p.pp_schedule = PLAN_PP_DUALPIPE;
	p.pp_first_layers = 5;
	p.pp_last_layers = 9;
	ck_assert_msg(plan_validate(&p, &m, &c, &err), "%s", err.message);
	ck_assert_rel(pipeline_rank_layers(&p, &m, 0), 7.0, 1e-15);
	ck_assert_rel(pipeline_rank_layers(&p, &m, 3), 7.0, 1e-15);
	ck_assert_rel(pipeline_rank_layers(&p, &m, 1), 8.0, 1e-15);
	ck_assert_int_eq(pipeline_rank_held_layers(&p, &m, 0), 14);
	ck_assert_int_eq(pipeline_rank_held_layers(&p, &m, 2), 16);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 29.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 3), 29.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 1), 40.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 2), 40.0, 1e-15);
	ck_assert_rel(pipeline_head_microbatches(&m, &p, 3), 1.0, 1e-15);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &a, &err), "%s", err.message);
	ck_assert_rel(a.stage_memory[0], a.stage_memory[3], 1e-12);
	pa = estimate_stage_params(&m, &p, 0, NULL);
	p.pp_first_layers = p.pp_last_layers = 7;
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 35.0, 1e-15);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &b, &err), "%s", err.message);
	ck_assert_rel(a.iteration_time_s, b.iteration_time_s, 1e-12);
	ck_assert_rel(estimate_stage_params(&m, &p, 0, NULL), pa, 1e-15);
	ck_assert(a.stage_memory[0] < b.stage_memory[0]);
	ck_assert_rel(b.stage_memory[0], b.stage_memory[3], 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * DualPipe's mirrored ranks sum their gradients (example_dualpipe.py,
 * "Check grads"): on the test cluster a GPU swapping 1e9 bytes with its
 * mirror. tp 8 dp 8 p 4: a stage is 64 GPUs, 8 nodes; ranks 0 and 3 on
 * other nodes, the node's 8 GPUs sharing its 8 NICs: 5 us + 1e9 / (25e9
 * x 0.85) = 0.04706382352941176 s. tp 2 dp 1: stages 1 (GPUs 2-3) and 2
 * (GPUs 4-5) share a node: NVLink, 3 us + 1e9 / (300e9 x 0.75) =
 * 0.004447444444444444 s. 1F1B sums nothing.
 */
START_TEST(test_dualpipe_mirror_grads)
{
	struct cluster c;
	struct plan p;
	double bytes;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	layers_plan(&p, 4, 1);
	ck_assert(pipeline_mirror_grad_time(&p, &c, 0, 1e9, &bytes) == 0.0 && bytes == 0.0);
	p.pp_schedule = PLAN_PP_DUALPIPE;
	ck_assert_rel(pipeline_mirror_grad_time(&p, &c, 0, 1e9, &bytes), 0.04706382352941176, 1e-12);
	ck_assert_rel(bytes, 1e9, 1e-15);
	p.tp = 2;
	p.dp = 1;
	ck_assert_rel(pipeline_mirror_grad_time(&p, &c, 1, 1e9, &bytes), 0.004447444444444444, 1e-12);
	cluster_release(&c);
}
END_TEST

/* A V's exchanges: rank 0's two chunks both cross the boundary to rank 1
 * (chunk 0 forward, chunk 2p - 1 back), none wraps to the last rank: twice
 * plain 1F1B's one exchange; interleaved 1F1B's rank 0 also borders the
 * last rank (the wrap), so it pays more than the V. */
START_TEST(test_v_shape_exchanges)
{
	struct model m;
	struct cluster c;
	struct plan p;
	struct plan_layout lay;
	double one, v, loop, bytes;

	test_load_model(&m, GPT3_YAML);
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	gpt3_plan(&p);
	p.dp = 4;
	p.global_batch = 384;
	topology_plan(&p, &c, &lay);
	one = pipeline_stage_p2p_time(&m, &p, &c, &lay, 0, &bytes);
	p.vpp = 2;
	loop = pipeline_stage_p2p_time(&m, &p, &c, &lay, 0, &bytes);
	p.pp_schedule = PLAN_PP_ZB_V;
	v = pipeline_stage_p2p_time(&m, &p, &c, &lay, 0, &bytes);
	ck_assert_rel(v, 2.0 * one, 1e-15);
	ck_assert(loop > v);
}
END_TEST

/*
 * pipeline_stages_p2p_time prices each kind of boundary once and must give
 * every stage exactly what pipeline_stage_p2p_time gives it (same calls,
 * same sums: bit-identical), for 1F1B, an interleaved loop (the wrap
 * from the last stage to the first) and a V (no wrap). GPT-3 on the test
 * cluster, tp 8 x dp 4 = 32 GPUs a stage: every boundary crosses nodes;
 * tp 2 x dp 1 = 2 GPUs a stage, 8 to a node: some do, some do not.
 */
START_TEST(test_stages_p2p_batched)
{
	struct model m;
	struct cluster c;
	struct plan p;
	struct plan_layout lay;
	double t[PLAN_MAX_STAGES], b[PLAN_MAX_STAGES];

	test_load_model(&m, GPT3_YAML);
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	for (int k = 0; k < 6; k++) {
		gpt3_plan(&p);
		p.dp = k < 3 ? 4 : 1;
		p.tp = k < 3 ? p.tp : 2;
		p.global_batch = 384;
		p.vpp = k % 3 == 0 ? 1 : 2;
		if (k % 3 == 2)
			p.pp_schedule = PLAN_PP_ZB_V;
		topology_plan(&p, &c, &lay);
		pipeline_stages_p2p_time(&m, &p, &c, &lay, p.pp, t, b);
		for (int s = 0; s < p.pp; s++) {
			double bytes, one = pipeline_stage_p2p_time(&m, &p, &c, &lay, s, &bytes);

			ck_assert(t[s] == one);
			ck_assert(b[s] == bytes);
			ck_assert(one > 0.0);
		}
	}
}
END_TEST

/*
 * The stage that sets the pace is the one whose slot, all its costs
 * counted, makes the longest iteration (estimate.c's core_pace), not the
 * one with the most GPU work: issue 25's property-test case 1683. GPT
 * 1.7B (24 layers) on AWS p3dn, tp 2, pp 8 (3 layers a stage), dp 6,
 * m = 24 / (6 x 2) = 2, stages recomputing none, full, none, full,
 * selective, none, none, selective, under llm-foundry with eager
 * element-wise kernels, per-op selective recomputation and larger gather
 * costs. Stage 7 holds the logits, so its slot carries llm-foundry's
 * metrics over them (metric_logit_bytes) and the loss's launches: it
 * paces. 20 us more latency per collective lengthens the full stages 1
 * and 3 (their recomputed forwards' TP all-reduces) past stage 7's GPU
 * work but not past its slot; paced by GPU work alone, stage 1 took over
 * and the iteration fell from 0.929269 to 0.928385 s. Now stage 7 paces
 * both, and the iteration grows (0.929269 -> 0.932107 s).
 */
START_TEST(test_pace_monotone)
{
	static const signed char rc[8] = { PLAN_RECOMPUTE_NONE, PLAN_RECOMPUTE_FULL, PLAN_RECOMPUTE_NONE,
					   PLAN_RECOMPUTE_FULL, PLAN_RECOMPUTE_SELECTIVE, PLAN_RECOMPUTE_NONE,
					   PLAN_RECOMPUTE_NONE, PLAN_RECOMPUTE_SELECTIVE };
	struct model m;
	struct cluster c, lat;
	struct framework fw;
	struct plan p;
	struct estimate a, b;
	struct plan_error err;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, &fw };

	test_setup_paths();
	test_load_profile(PROFILE_MODEL, "gpt-1.7b", &m);
	test_load_profile(PROFILE_CLUSTER, "aws-p3dn", &c);
	test_load_profile(PROFILE_FRAMEWORK, "llm-foundry", &fw);
	fw.elementwise = FRAMEWORK_EW_EAGER;
	fw.selective_recompute = FRAMEWORK_SAC_OP;
	fw.gather_overhead_s += 1e-5;
	fw.gather_rank_overhead_s += 1e-6;
	fw.gather_copy_passes += 1.0;
	fw.reduce_copy_passes += 1.0;
	plan_init(&p);
	p.tp = 2;
	p.pp = 8;
	p.dp = 6;
	p.micro_batch = 2;
	p.global_batch = 24;
	p.seq_len = 2048;
	p.recompute = PLAN_RECOMPUTE_FULL;
	p.flash_attention = true;
	p.dp_overlap = 1;
	p.zero = 2;
	p.custom_recompute = true;
	p.stage_recompute_count = 8;
	memcpy(p.stage_recompute, rc, sizeof(rc));
	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &a, &err), "%s", err.message);
	lat = c;
	lat.intra.collective_latency_s += 2e-5;
	ck_assert_msg(estimate_plan(&m, &lat, &p, &opt, &b, &err), "%s", err.message);
	ck_assert_int_eq(a.details.bottleneck_stage, 7);
	ck_assert_int_eq(b.details.bottleneck_stage, 7);
	ck_assert(b.details.slot_s > a.details.slot_s);
	ck_assert(b.iteration_time_s > a.iteration_time_s);
	cluster_release(&c);
}
END_TEST

/*
 * Hand-worked small case (plan-cli reviewpipe): p 4, m 8, v 2, a stage's
 * F = B_in = W = 1 (so F + B = 3 with B = B_in + W = 2, W = 1); L = 32
 * layers, 4 a chunk.
 * Bubble, summed over the p - 1 = 3 other stages:
 * - 1F1B (p - 1)(F + B) = 9, 3 a stage; interleaved 9 / v = 4.5, 1.5 a
 *   stage, and (p - 1)/(v m) = 3/16 of the 8 x 3 = 24 of work (SC21 Eq. 2).
 * - ZB-H1 (p - 1)(F + B - 2W) = 3 x 1 = 3, a third of 1F1B's (p - 1)(F +
 *   B + W)... with B the full backward, 1 a stage: the paper's "one third"
 *   at T_F = T_B = T_W (Qi et al. Sec. 2.1: 1F1B's (p-1)(T_F+T_B+T_W) = 9).
 * - ZB-V half a stage's: 0.5, 1.5 in all = (p - 1) f with chunk f = 1/2.
 * - DualPipe (PP/2 - 1)(F&B + B - 3W) = 1 x (3 + 2 - 3) = 2 (Table 2,
 *   F&B = F + B), 2/3 a stage.
 * - DualPipeV on 4 ranks = 8 stages of half the times: (8/2 - 1)(1.5 + 1 -
 *   1.5) = 3, 1 a rank.
 * In flight, (layer, micro-batch) units: 1F1B stage i min(p - i, m) x 8
 * layers: 32, 24, 16, 8. Interleaved, Megatron-Core's warm-up (p - i - 1)
 * x 2 + (v - 1) x p (get_pp_rank_microbatches, group size p) plus the
 * steady state's one: 11, 9, 7, 5 chunks of 4 layers: 44, 36, 28, 20
 * (stage 0: 32 x (1 + 3/8) = 44, Korthikanti's 1 + (p-1)/(p v)). ZB-V
 * p x 8 = 32 on every rank; DualPipe (p + 1) x 8 = 40; DualPipeV (2p + 1)
 * chunks of 4 layers = 36.
 */
START_TEST(test_small_case)
{
	struct model m;
	struct plan p;
	static const double inter[4] = { 44.0, 36.0, 28.0, 20.0 };

	model_layers(&m, 32);
	layers_plan(&p, 4, 2);
	p.dp = 1;
	p.global_batch = 8;
	ck_assert_int_eq(plan_microbatches(&p), 8);
	ck_assert_rel(pipeline_bubble_fraction(&p), 3.0 / 16.0, 1e-15);
	ck_assert_rel(3.0 * pipeline_schedule_bubble(&p, 3.0, 2.0, 1.0), 4.5, 1e-15);
	for (int i = 0; i < 4; i++)
		ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, i), inter[i], 1e-15);
	p.pp_schedule = PLAN_PP_ZB_V;
	ck_assert_rel(3.0 * pipeline_schedule_bubble(&p, 3.0, 2.0, 1.0), 1.5, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 32.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 3), 32.0, 1e-15);
	p.pp_schedule = PLAN_PP_DUALPIPEV;
	ck_assert_rel(3.0 * pipeline_schedule_bubble(&p, 3.0, 2.0, 1.0), 3.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 2), 36.0, 1e-15);
	p.vpp = 1;
	p.pp_schedule = PLAN_PP_1F1B;
	ck_assert_rel(3.0 * pipeline_schedule_bubble(&p, 3.0, 2.0, 1.0), 9.0, 1e-15);
	for (int i = 0; i < 4; i++)
		ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, i), 8.0 * (4 - i), 1e-15);
	p.pp_schedule = PLAN_PP_ZB_H1;
	ck_assert_rel(3.0 * pipeline_schedule_bubble(&p, 3.0, 2.0, 1.0), 3.0, 1e-15);
	p.pp_schedule = PLAN_PP_DUALPIPE;
	ck_assert_rel(3.0 * pipeline_schedule_bubble(&p, 3.0, 2.0, 1.0), 2.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 40.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 1), 40.0, 1e-15);
}
END_TEST

/*
 * Megatron-Core's interleaved schedule with overlap_p2p_comm (framework
 * key pp_p2p_overlap; schedules.py pp_post_forward / pp_pre_forward,
 * Megatron-LM d98e8a6): a steady-state exchange runs behind the next
 * chunk's compute, so a micro-batch's exchanges P on a stage with layer
 * compute C cost max(0, P - C) + (s - 1) min(P, C) in the slot, s the
 * framework's overlap_slowdown; the fill and drain keep P whole.
 * GPT-3, tp 8 pp 12 v 2 dp 4 (m 96) on the test cluster, P well under C
 * (a 6 MiB exchange a chunk against 4 layers' full-recompute work):
 * - s = 1: the slot loses P, the exchanges cost 0, the bubble is the
 *   same; the iteration m P shorter (the pacing stage unchanged).
 * - s = 1.15: 0.15 P left.
 * - v 1: Megatron-LM turns the overlap off without interleaving
 *   (arguments.py l. 1009-1012): unchanged.
 * With 1 Gbit/s NICs P is far above C, and a middle stage (two
 * boundaries, no end layers) paces: P - C + 0.15 C = P - 0.85 C, C its
 * compute and recomputation per micro-batch.
 */
START_TEST(test_interleaved_overlap)
{
	struct model m;
	struct cluster c, slow;
	struct framework fw;
	struct plan p;
	struct estimate off, on;
	struct plan_error err;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, &fw };
	char yaml[2048];
	const char *nic;
	double pp, comp;

	test_load_model(&m, GPT3_YAML);
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	gpt3_plan(&p);
	p.dp = 4;
	p.global_batch = 384;
	p.vpp = 2;
	framework_init_default(&fw);
	fw.overlap_slowdown = 1.0;
	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &off, &err), "%s", err.message);
	fw.pp_p2p_overlap = true;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &on, &err), "%s", err.message);
	pp = off.details.pp_p2p_s;
	ck_assert(pp > 0.0);
	ck_assert_int_eq(on.details.bottleneck_stage, off.details.bottleneck_stage);
	ck_assert_double_eq_tol(on.details.pp_p2p_s, 0.0, 1e-18);
	ck_assert_double_eq_tol(on.breakdown.pp_comm, 0.0, 1e-18);
	ck_assert_rel(on.breakdown.pp_bubble, off.breakdown.pp_bubble, 1e-12);
	ck_assert_rel(off.iteration_time_s - on.iteration_time_s, 96.0 * pp, 1e-9);
	ck_assert_rel(on.bytes.pp, off.bytes.pp, 1e-15);
	fw.overlap_slowdown = 1.15;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &on, &err), "%s", err.message);
	ck_assert_rel(on.details.pp_p2p_s, 0.15 * pp, 1e-12);
	p.vpp = 1;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &on, &err), "%s", err.message);
	fw.pp_p2p_overlap = false;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &off, &err), "%s", err.message);
	ck_assert_rel(on.iteration_time_s, off.iteration_time_s, 1e-15);

	nic = strstr(TEST_CLUSTER_YAML, "nic_bandwidth: 200 Gbit/s");
	ck_assert(nic != NULL);
	snprintf(yaml, sizeof(yaml), "%.*snic_bandwidth: 1 Gbit/s%s", (int)(nic - TEST_CLUSTER_YAML),
		 TEST_CLUSTER_YAML, nic + strlen("nic_bandwidth: 200 Gbit/s"));
	test_load_cluster(&slow, yaml);
	p.vpp = 2;
	ck_assert_msg(estimate_plan(&m, &slow, &p, &opt, &off, &err), "%s", err.message);
	fw.pp_p2p_overlap = true;
	ck_assert_msg(estimate_plan(&m, &slow, &p, &opt, &on, &err), "%s", err.message);
	ck_assert(on.details.bottleneck_stage > 0 && on.details.bottleneck_stage < 11);
	ck_assert_int_eq(on.details.bottleneck_stage, off.details.bottleneck_stage);
	comp = (on.breakdown.compute + on.breakdown.recompute) / 96.0;
	ck_assert(off.details.pp_p2p_s > comp);
	ck_assert_rel(on.details.pp_p2p_s, off.details.pp_p2p_s - 0.85 * comp, 1e-12);
	ck_assert_rel(on.breakdown.pp_bubble, off.breakdown.pp_bubble, 1e-12);
	cluster_release(&slow);
	cluster_release(&c);
}
END_TEST

/*
 * A V's two chunks, counted as the schedules' own order keeps them
 * (plan-cli reviewpipe; zbv.py and dualpipev.py replayed): rank r of p
 * holds (min(2p - r - 1, m), r + 1) or (min(2p - r, m), r) micro-batches
 * of (chunk 0, chunk 1) at its peak under ZB-V, (2p - r, r + 1) under
 * DualPipeV. The toy layout, 32 layers on p 4 x 2 chunks:
 * - even chunks of 4, ZB-V at m = p = 4: rank 0 max(4 x 4 + 1 x 4, 4 x
 *   4 + 0) = 20, rank 1 max(4 x 4 + 2 x 4, 4 x 4 + 1 x 4) = 24, rank 2
 *   28, rank 3 max(4 x 4 + 4 x 4, 4 x 4 + 3 x 4) = 32 (it was min(p, m)
 *   x 8 = 32 on every rank); at m = 2p = 8 every rank 2p x 4 = 32.
 * - the list 2,4,4,4,4,4,4,6 (rank 0 holds virtual stages 0 and 7: 2 and
 *   6 layers), m 8: ZB-V rank 0 max(7 x 2 + 1 x 6, 8 x 2 + 0) = 20 (it
 *   was 8 layers x 4 = 32); DualPipeV rank 0 8 x 2 + 1 x 6 = 22 (was
 *   (2p + 1)/2 x 8 = 36), rank 1 (chunks 1 and 6, 4 each) 7 x 4 + 2 x 4
 *   = 36.
 * - the output layer's chunk, rank 0's chunk 1, keeps r + 1 = 1
 *   micro-batch: the MTP modules' count there (pipeline_head_
 *   microbatches), 1 under both, not the rank's p.
 */
START_TEST(test_v_in_flight)
{
	struct model m;
	struct plan p;
	static const short list[8] = { 2, 4, 4, 4, 4, 4, 4, 6 };
	static const double at_p[4] = { 20.0, 24.0, 28.0, 32.0 };

	model_layers(&m, 32);
	layers_plan(&p, 4, 2);
	p.dp = 1;
	p.global_batch = 4;
	p.pp_schedule = PLAN_PP_ZB_V;
	for (int i = 0; i < 4; i++)
		ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, i), at_p[i], 1e-15);
	p.global_batch = 8;
	for (int i = 0; i < 4; i++)
		ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, i), 32.0, 1e-15);
	ck_assert_rel(pipeline_head_microbatches(&m, &p, 0), 1.0, 1e-15);
	p.custom_layers = true;
	p.stage_layers_count = 8;
	memcpy(p.stage_layers, list, sizeof(list));
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 20.0, 1e-15);
	ck_assert_rel(pipeline_layer_microbatches(&m, &p, 0), 20.0 / 8.0, 1e-15);
	p.pp_schedule = PLAN_PP_DUALPIPEV;
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 22.0, 1e-15);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 1), 36.0, 1e-15);
	ck_assert_rel(pipeline_head_microbatches(&m, &p, 0), 1.0, 1e-15);
}
END_TEST

static Suite *
pipeline_suite(void)
{
	Suite *s = suite_create("pipeline");
	TCase *tc = tcase_create("pipeline");

	tcase_add_test(tc, test_embedding_loss_split);
	tcase_add_test(tc, test_first_last_split);
	tcase_add_test(tc, test_torchtitan_split);
	tcase_add_test(tc, test_virtual_stage_list);
	tcase_add_test(tc, test_empty_stage);
	tcase_add_test(tc, test_framework_split);
	tcase_add_test(tc, test_schedule_bubble);
	tcase_add_test(tc, test_schedule_activations);
	tcase_add_test(tc, test_schedule_validation);
	tcase_add_test(tc, test_schedule_estimates);
	tcase_add_test(tc, test_end_share);
	tcase_add_test(tc, test_dualpipe_ends);
	tcase_add_test(tc, test_dualpipe_uneven);
	tcase_add_test(tc, test_dualpipe_mirror_grads);
	tcase_add_test(tc, test_v_shape_exchanges);
	tcase_add_test(tc, test_stages_p2p_batched);
	tcase_add_test(tc, test_pace_monotone);
	tcase_add_test(tc, test_small_case);
	tcase_add_test(tc, test_interleaved_overlap);
	tcase_add_test(tc, test_v_in_flight);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(pipeline_suite)
