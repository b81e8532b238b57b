/*
 * Megatron-Core's recomputation as a plan decision: --recompute-modules
 * (transformer_config.py, recompute_modules, core_r0.13.0), each module's
 * bytes and recompute time worked out by hand from Korthikanti et al.
 * 2022's terms, and --recompute-method uniform|block with
 * --recompute-num-layers (transformer_block.py, _checkpointed_forward).
 */
#include <math.h>
#include <string.h>

#include "plan/compute.h"
#include "plan/estimate.h"
#include "plan/memory.h"
#include "plan/plan_attr.h"
#include "testutil.h"

/* A toy MoE: every layer 4 experts of width 512, top-2, capacity 1, one shared expert. */
#define TOY_MOE_YAML \
	TOY_MODEL_YAML "moe:\n  experts: 4\n  top_k: 2\n  capacity_factor: 1.0\n  expert_ffn_hidden: 512\n" \
		       "  shared_experts: 1\n"

#define RM(k) (1 << PLAN_RM_##k)

static void
toy_plan(struct plan *p)
{
	plan_init(p);
	p->tp = 2;
	p->pp = p->dp = 1;
	p->micro_batch = 1;
	p->global_batch = 8;
	p->seq_len = 1024;
	p->recompute = PLAN_RECOMPUTE_SELECTIVE;
}

/* The toy cluster, the model @model_yaml and toy_plan. */
static void
toy_setup(struct cluster *c, struct model *m, const char *model_yaml, struct plan *p)
{
	test_load_cluster(c, TOY_CLUSTER_YAML);
	test_load_model(m, model_yaml);
	toy_plan(p);
}

/* The toy GPT with 8 layers, toy_plan on pp 2 (4 layers a stage, 8
 * micro-batches) with full recomputation. */
static void
toy8_full_setup(struct cluster *c, struct model *m, struct plan *p)
{
	toy_setup(c, m, "name: toy\nlayers: 8\nhidden: 1024\nheads: 8\nvocab: 32768\nseq_len: 1024\n", p);
	p->pp = 2;
	p->recompute = PLAN_RECOMPUTE_FULL;
}

/*
 * The toy GPT (h 1024, a 8, d 128, f 4096, dropout) at s 1024, b 1, t 2,
 * no SP, unfused attention; sb = 1024. A layer keeps (Korthikanti et al.
 * 2022, Table 2) 10 sbh = 10,485,760 B replicated, and on each rank
 * (Q K V and the projection input 4096 wide: 8,388,608; the MLP's 4 sbf:
 * 16,777,216; the scores 5 a s^2 b: 41,943,040) / 2 = 33,554,432:
 * 44,040,192 B in all.
 */
START_TEST(test_module_bytes_dense)
{
	struct model m;
	struct plan p;

	test_load_model(&m, TOY_MODEL_YAML);
	toy_plan(&p);
	/* core_attn: the scores, 5 x 8 x 1024 x 1024 / 2 = 20,971,520. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_CORE_ATTN), 20971520.0, 1e-6);
	/* layernorm: the QKV and fc1 inputs, 2 x 2 sbh = 4,194,304 (no SP). */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_LAYERNORM), 4194304.0, 1e-6);
	/* mlp: 4 s b f / t = 4 x 1024 x 4096 / 2 = 8,388,608. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_MLP), 8388608.0, 1e-6);
	/* A dense model has no experts. */
	ck_assert_double_eq(memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_MOE), 0.0);
	/* core_attn alone is Korthikanti's selective: 44,040,192 - 20,971,520. */
	p.recompute_modules = RM(CORE_ATTN);
	ck_assert_double_eq_tol(memory_layer_activations(&m, &p, NULL), 23068672.0, 1e-6);
	p.recompute_modules = 0;
	ck_assert_double_eq_tol(memory_layer_activations(&m, &p, NULL), 23068672.0, 1e-6);
	/* core_attn + layernorm + mlp: 23,068,672 - 4,194,304 - 8,388,608 = 10,485,760. */
	p.recompute_modules = RM(CORE_ATTN) | RM(LAYERNORM) | RM(MLP);
	ck_assert_double_eq_tol(memory_layer_activations(&m, &p, NULL), 10485760.0, 1e-6);
	/* Without core_attn the scores stay: 44,040,192 - 8,388,608 = 35,651,584. */
	p.recompute_modules = RM(MLP);
	ck_assert_double_eq_tol(memory_layer_activations(&m, &p, NULL), 35651584.0, 1e-6);
	/* Sequence parallelism splits the norms' outputs: 4,194,304 / 2. */
	p.sequence_parallel = true;
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_LAYERNORM), 2097152.0, 1e-6);
	/* A fused attention keeps no scores: core_attn saves nothing more. */
	p.flash_attention = true;
	ck_assert_double_eq(memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_CORE_ATTN), 0.0);
}
END_TEST

/*
 * The toy MoE at t 2 (etp 2): routed rows r = cf k s b = 2048, shared
 * rows 1024, expert width e 512, every layer MoE.
 */
START_TEST(test_module_bytes_moe)
{
	struct model m;
	struct plan p;

	test_load_model(&m, TOY_MOE_YAML);
	toy_plan(&p);
	/* moe_act: 2 r e / t = 2 x 2048 x 512 / 2 = 1,048,576. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_MOE_ACT), 1048576.0, 1e-6);
	/* shared_experts: 4 s b e / t = 4 x 1024 x 512 / 2 = 1,048,576. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_SHARED_EXPERTS), 1048576.0,
				1e-6);
	/* moe: (4 (r + 1024) e + 4 r h etp) / t = (6,291,456 + 16,777,216) / 2. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&m, &p, NULL, PLAN_RM_MOE), 11534336.0, 1e-6);
	/* moe covers moe_act and shared_experts: they add nothing to it. */
	p.recompute_modules = RM(MOE);
	double moe = memory_layer_activations(&m, &p, NULL);
	p.recompute_modules = RM(MOE) | RM(MOE_ACT) | RM(SHARED_EXPERTS);
	ck_assert_double_eq_tol(memory_layer_activations(&m, &p, NULL), moe, 1e-6);
	/* moe_act and shared_experts alone: 2,097,152 less than core_attn alone. */
	p.recompute_modules = RM(CORE_ATTN);
	double attn = memory_layer_activations(&m, &p, NULL);
	p.recompute_modules = RM(CORE_ATTN) | RM(MOE_ACT) | RM(SHARED_EXPERTS);
	ck_assert_double_eq_tol(attn - memory_layer_activations(&m, &p, NULL), 2097152.0, 1e-6);
}
END_TEST

/*
 * Recompute time on the toy cluster (1000 GB/s at efficiency 1, no
 * launch cost): layernorm reruns two norms, each reading and writing sbh
 * 2-byte elements, 8 sbh = 8,388,608 B: 8.388608 us; mlp the MLP's GEMMs
 * and its activation, 4 s b f / t = 8,388,608 B: 8.388608 us more
 * (and fc1's fused norm under the TE spec); core_attn the attention
 * core's forward, fused or not.
 */
START_TEST(test_module_time)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct compute_layer cl;

	toy_setup(&c, &m, TOY_MODEL_YAML, &p);
	p.recompute_modules = RM(LAYERNORM);
	compute_layer_time(&m, &p, &c, NULL, false, &cl);
	ck_assert_double_eq_tol(cl.recompute_s, 8.388608e-6, 1e-15);
	p.recompute_modules = RM(MLP);
	compute_layer_time(&m, &p, &c, NULL, false, &cl);
	ck_assert_double_eq_tol(cl.recompute_s, cl.mlp_fwd_s + 8.388608e-6, 1e-15);
	/* Under the TE spec (selective_recompute core_attn) the checkpoint
	 * also reruns fc1's fused norm: it reads sbh and writes sbh 2-byte
	 * elements, 4 sbh = 4,194,304 B, 4.194304 us more. */
	{
		struct framework fw;

		framework_init_default(&fw);
		fw.selective_recompute = FRAMEWORK_SAC_CORE_ATTN;
		compute_layer_time(&m, &p, &c, &fw, false, &cl);
		ck_assert_double_eq_tol(cl.recompute_s, cl.mlp_fwd_s + 8.388608e-6 + 4.194304e-6, 1e-15);
	}
	/* A fused attention's forward runs again under core_attn; Korthikanti's
	 * selective (no modules) counts it as the kernel's own backward. */
	p.flash_attention = true;
	p.recompute_modules = RM(CORE_ATTN);
	compute_layer_time(&m, &p, &c, NULL, false, &cl);
	ck_assert(cl.attn_fwd_s > 0.0);
	ck_assert_double_eq_tol(cl.recompute_s, cl.attn_fwd_s, 1e-15);
	p.recompute_modules = 0;
	compute_layer_time(&m, &p, &c, NULL, false, &cl);
	ck_assert_double_eq(cl.recompute_s, 0.0);
	/* The MLP's half of the forward TP collectives runs again with mlp. */
	ck_assert_double_eq(plan_tp_recompute_share(&p, &m), 0.0);
	p.recompute_modules = RM(MLP);
	ck_assert_double_eq(plan_tp_recompute_share(&p, &m), 0.5);
	cluster_release(&c);
}
END_TEST

/*
 * normrev: layernorm under Megatron-Core's TE spec (a profile with
 * selective_recompute core_attn; gpt_layer_specs.py and
 * transformer_layer.py at Megatron-LM d98e8a6) recomputes only the norms
 * that are modules of their own: none in a dense GPT layer (both fused
 * into linear_qkv and linear_fc1), an MoE layer's pre_mlp_layernorm, MLA's
 * input_layernorm. At s 1024, b 1, t 2 (no SP) a norm's output is
 * 2 sbh = 2,097,152 B, and rerunning it moves 4 sbh = 4,194,304 B:
 * 4.194304 us at 1000 GB/s. Without a framework (or another one) the two
 * norms of test_module_bytes_dense stay.
 */
#define TOY_MLA_YAML \
	"name: mla\nlayers: 2\nhidden: 1024\nheads: 8\nvocab: 32768\nseq_len: 1024\nattention: mla\n" \
	"mla: {q_lora_rank: 256, kv_lora_rank: 256, qk_nope_head_dim: 64, qk_rope_head_dim: 32, " \
	"v_head_dim: 64}\n"

static double
layernorm_time(const struct model *m, const struct plan *p, const struct cluster *c, const struct framework *fw,
	       bool moe)
{
	struct compute_layer cl;

	compute_layer_time(m, p, c, fw, moe, &cl);
	return cl.recompute_s;
}

START_TEST(test_module_layernorm_te_spec)
{
	struct cluster c;
	struct model dense, moe, mla, mla_moe;
	struct plan p;
	struct framework fw;

	toy_setup(&c, &dense, TOY_MODEL_YAML, &p);
	test_load_model(&moe, TOY_MOE_YAML);
	test_load_model(&mla, TOY_MLA_YAML);
	/* MLA with one dense layer of two: half the layers MoE. */
	test_load_model(&mla_moe, TOY_MLA_YAML "moe: {experts: 4, top_k: 2, expert_ffn_hidden: 512, "
					       "first_dense_layers: 1}\n");
	framework_init_default(&fw);
	fw.selective_recompute = FRAMEWORK_SAC_CORE_ATTN;
	p.recompute_modules = RM(LAYERNORM);
	/* Dense GPT: both norms fused, nothing dropped or rerun. */
	ck_assert_double_eq(memory_recompute_module_bytes(&dense, &p, &fw, PLAN_RM_LAYERNORM), 0.0);
	ck_assert_double_eq(layernorm_time(&dense, &p, &c, &fw, false), 0.0);
	/* Other frameworks: the two norms, 4,194,304 B and 8.388608 us. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&dense, &p, NULL, PLAN_RM_LAYERNORM), 4194304.0, 1e-6);
	ck_assert_double_eq_tol(layernorm_time(&dense, &p, &c, NULL, false), 8.388608e-6, 1e-15);
	/* Every layer MoE: pre_mlp_layernorm only, 2,097,152 B, 4.194304 us. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&moe, &p, &fw, PLAN_RM_LAYERNORM), 2097152.0, 1e-6);
	ck_assert_double_eq_tol(layernorm_time(&moe, &p, &c, &fw, true), 4.194304e-6, 1e-15);
	/* MLA, dense: input_layernorm only. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&mla, &p, &fw, PLAN_RM_LAYERNORM), 2097152.0, 1e-6);
	ck_assert_double_eq_tol(layernorm_time(&mla, &p, &c, &fw, false), 4.194304e-6, 1e-15);
	/* MLA with MoE: the dense layer one norm (4.194304 us), the MoE layer
	 * two (8.388608 us); on average 1.5 norms, 3,145,728 B. */
	ck_assert_double_eq_tol(layernorm_time(&mla_moe, &p, &c, &fw, false), 4.194304e-6, 1e-15);
	ck_assert_double_eq_tol(layernorm_time(&mla_moe, &p, &c, &fw, true), 8.388608e-6, 1e-15);
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&mla_moe, &p, &fw, PLAN_RM_LAYERNORM), 3145728.0,
				1e-6);
	/* Sequence parallelism splits each norm's output: 3,145,728 / 2. */
	p.sequence_parallel = true;
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&mla_moe, &p, &fw, PLAN_RM_LAYERNORM), 1572864.0,
				1e-6);
	cluster_release(&c);
}
END_TEST

/*
 * mlprc: mlp under the TE spec also drops fc1's fused norm's output
 * (ln_out, h wide, replicated unless SP: transformer_layer.py l. 537-539
 * and 992-1011, gpt_layer_specs.py l. 336 and 542-544, Megatron-LM
 * d98e8a6; TE's LayerNormLinear saves it, layernorm_linear.py l. 526-536
 * at d0067d0). The toy GPT at s 1024, b 1, t 2 (sb 1024, no SP): 2 sbh =
 * 2,097,152 B beside the 4 s b f / t = 8,388,608 of test_module_bytes_dense.
 */
START_TEST(test_module_mlp_te_spec)
{
	struct model dense, moe, mla_moe;
	struct plan p;
	struct framework fw;

	test_load_model(&dense, TOY_MODEL_YAML);
	test_load_model(&moe, TOY_MOE_YAML);
	test_load_model(&mla_moe, TOY_MLA_YAML "moe: {experts: 4, top_k: 2, expert_ffn_hidden: 512, "
					       "first_dense_layers: 1}\n");
	toy_plan(&p);
	framework_init_default(&fw);
	fw.selective_recompute = FRAMEWORK_SAC_CORE_ATTN;
	/* bf16: 8,388,608 + 2,097,152 = 10,485,760; the local spec (no
	 * framework) keeps the norm's output, the checkpoint's input. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&dense, &p, &fw, PLAN_RM_MLP), 10485760.0, 1e-6);
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&dense, &p, NULL, PLAN_RM_MLP), 8388608.0, 1e-6);
	/* layernorm + mlp: the TE spec's layernorm drops nothing in a dense
	 * layer, so core_attn alone's 23,068,672 less 10,485,760 = 12,582,912;
	 * the local spec's layernorm drops the norm outputs and mlp not:
	 * 23,068,672 - 4,194,304 - 8,388,608 = 10,485,760 (each once). */
	p.recompute_modules = RM(CORE_ATTN) | RM(LAYERNORM) | RM(MLP);
	ck_assert_double_eq_tol(memory_layer_activations(&dense, &p, &fw), 12582912.0, 1e-6);
	ck_assert_double_eq_tol(memory_layer_activations(&dense, &p, NULL), 10485760.0, 1e-6);
	/* SP splits the norm's output: 8,388,608 + 1,048,576 = 9,437,184. */
	p.sequence_parallel = true;
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&dense, &p, &fw, PLAN_RM_MLP), 9437184.0, 1e-6);
	p.sequence_parallel = false;
	/* fp8 current scaling (q 1 byte an element saved): fc1's and the
	 * activation's outputs 2 s b f / t = 4,194,304, fc2's input q s b f / t
	 * = 2,097,152 and the norm's copy q s b h = 1,048,576: 7,340,032. */
	p.precision = PLAN_PRECISION_FP8;
	p.fp8_recipe = PLAN_FP8_CURRENT;
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&dense, &p, &fw, PLAN_RM_MLP), 7340032.0, 1e-6);
	/* An MoE layer ignores mlp (moe is its module): nothing. */
	ck_assert_double_eq(memory_recompute_module_bytes(&moe, &p, &fw, PLAN_RM_MLP), 0.0);
	p.precision = PLAN_PRECISION_BF16;
	p.fp8_recipe = PLAN_FP8_FRAMEWORK;
	/* MLA, one dense layer of two: mlp half of 10,485,760 = 5,242,880;
	 * layernorm the two input_layernorms and the MoE layer's
	 * pre_mlp_layernorm, 3,145,728 (test_module_layernorm_te_spec): the
	 * dense layer's fused norm is mlp's alone, and both together drop
	 * core_attn alone's activations by their sum, 8,388,608. */
	ck_assert_double_eq_tol(memory_recompute_module_bytes(&mla_moe, &p, &fw, PLAN_RM_MLP), 5242880.0, 1e-6);
	p.recompute_modules = RM(CORE_ATTN);
	double attn = memory_layer_activations(&mla_moe, &p, &fw);
	p.recompute_modules = RM(CORE_ATTN) | RM(LAYERNORM) | RM(MLP);
	ck_assert_double_eq_tol(attn - memory_layer_activations(&mla_moe, &p, &fw), 8388608.0, 1e-6);
}
END_TEST

/* A module the model lacks is refused, naming it. */
START_TEST(test_module_validate)
{
	struct cluster c;
	struct model dense, moe;
	struct plan p;
	struct plan_error err;

	toy_setup(&c, &dense, TOY_MODEL_YAML, &p);
	test_load_model(&moe, TOY_MOE_YAML);
	p.dp = 4;
	p.recompute_modules = RM(CORE_ATTN) | RM(LAYERNORM) | RM(MLP);
	ck_assert(plan_validate(&p, &dense, &c, &err));
	p.recompute_modules = RM(MLA_UP_PROJ);
	ck_assert(!plan_validate(&p, &dense, &c, &err));
	ck_assert_str_eq(err.message, "--recompute-modules mla_up_proj does not apply: model 'toy' has no multi-latent "
				      "attention (MLA)");
	p.recompute_modules = RM(MOE_ACT);
	ck_assert(!plan_validate(&p, &dense, &c, &err));
	ck_assert(plan_validate(&p, &moe, &c, &err));
	p.recompute_modules = RM(MLP);
	ck_assert(!plan_validate(&p, &moe, &c, &err));
	ck_assert(strstr(err.message, "every layer is MoE") != NULL);
	moe.moe.shared_experts = 0;
	p.recompute_modules = RM(SHARED_EXPERTS);
	ck_assert(!plan_validate(&p, &moe, &c, &err));
	cluster_release(&c);
}
END_TEST

/* The set reads and writes as names joined by '+'; "framework" is 0. */
START_TEST(test_module_names)
{
	const struct plan_attr *a = &plan_attrs[PLAN_ATTR_RECOMPUTE_MODULES];
	char buf[128], why[256];
	long v;

	ck_assert(plan_attr_parse_value(a, NULL, "core_attn+mlp", &v, why, sizeof(why)));
	ck_assert_int_eq(v, RM(CORE_ATTN) | RM(MLP));
	ck_assert_str_eq(plan_attr_format_value(a, v, buf, sizeof(buf)), "core_attn+mlp");
	ck_assert(plan_attr_parse_value(a, NULL, "mlp,core_attn", &v, why, sizeof(why)));
	ck_assert_int_eq(v, RM(CORE_ATTN) | RM(MLP));
	ck_assert(plan_attr_parse_value(a, NULL, "framework", &v, why, sizeof(why)));
	ck_assert_int_eq(v, 0);
	ck_assert_str_eq(plan_attr_format_value(a, 0, buf, sizeof(buf)), "framework");
	ck_assert(!plan_attr_parse_value(a, "--recompute-modules", "core_attn+mlpx", &v, why, sizeof(why)));
	ck_assert(strstr(why, "unknown value 'mlpx' for --recompute-modules") == why);
	ck_assert(!plan_attr_parse_value(a, "--recompute-modules", "core_attn++mlp", &v, why, sizeof(why)));
}
END_TEST

/*
 * The toy with 8 layers on pp 2, 8 micro-batches: stage 0 holds 2 in
 * flight (1F1B), 4 layers each, 8 layer-micro-batches. Full
 * recomputation keeps 2 sbh = 2,097,152 B of each and re-materialises
 * one layer (44,040,192 B); uniform groups of 2 keep ceil(4/2) = 2
 * inputs per micro-batch, half of them, and re-materialise 2 layers:
 * 35,651,584 B more (-8,388,608 + 44,040,192).
 */
START_TEST(test_uniform_memory)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct memory_use full, uni;

	toy8_full_setup(&c, &m, &p);
	memory_stage(&m, &p, &c, NULL, 0, 1e6, 0.0, &full);
	p.recompute_num_layers = 2;
	memory_stage(&m, &p, &c, NULL, 0, 1e6, 0.0, &uni);
	ck_assert_double_eq_tol(uni.activations - full.activations, 35651584.0, 1e-3);
	/* uniform 1 is plain full recomputation. */
	p.recompute_num_layers = 1;
	memory_stage(&m, &p, &c, NULL, 0, 1e6, 0.0, &uni);
	ck_assert_double_eq_tol(uni.activations, full.activations, 1e-3);
	cluster_release(&c);
}
END_TEST

/*
 * Block: the first N layers of each chunk. 8 layers on pp 2 x vpp 2 are
 * chunks of 2: N 1 recomputes 2 layers a stage, N 3 all 4 (a full stage).
 * On vpp 1 it prices as Slapo's --recompute-layers N, exactly.
 */
START_TEST(test_block)
{
	struct cluster c;
	struct model m;
	struct plan p, q;
	struct estimate a, b;
	struct estimate_options eo = { .dp_algo = COLL_ALGO_RING };
	struct plan_error err;

	toy8_full_setup(&c, &m, &p);
	p.vpp = 2;
	p.recompute_method = PLAN_RECOMPUTE_BLOCK;
	p.recompute_num_layers = 1;
	ck_assert_int_eq(plan_stage_recompute_layers(&p, &m, 0), 2);
	ck_assert_int_eq(plan_stage_mode(&p, &m, 0), PLAN_RECOMPUTE_NONE);
	p.recompute_num_layers = 3;
	ck_assert_int_eq(plan_stage_recompute_layers(&p, &m, 1), 4);
	ck_assert_int_eq(plan_stage_mode(&p, &m, 1), PLAN_RECOMPUTE_FULL);

	p.vpp = 1;
	p.recompute_num_layers = 1;
	q = p;
	q.recompute_method = PLAN_RECOMPUTE_UNIFORM;
	q.recompute_num_layers = 0;
	q.custom_recompute_layers = true;
	q.stage_recompute_layers_count = 2;
	q.stage_recompute_layers[0] = q.stage_recompute_layers[1] = 1;
	ck_assert_msg(estimate_plan(&m, &c, &p, &eo, &a, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m, &c, &q, &eo, &b, &err), "%s", err.message);
	ck_assert_double_eq_tol(a.iteration_time_s, b.iteration_time_s, 1e-15);
	ck_assert_double_eq_tol(a.memory.total, b.memory.total, 1e-3);
	/* Not with ZeRO-3, as --recompute-layers. */
	p.zero = 3;
	ck_assert(!plan_validate(&p, &m, &c, &err));
	cluster_release(&c);
}
END_TEST

static Suite *
recompute_suite(void)
{
	Suite *s = suite_create("recompute");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_module_bytes_dense);
	tcase_add_test(tc, test_module_bytes_moe);
	tcase_add_test(tc, test_module_time);
	tcase_add_test(tc, test_module_layernorm_te_spec);
	tcase_add_test(tc, test_module_mlp_te_spec);
	tcase_add_test(tc, test_module_validate);
	tcase_add_test(tc, test_module_names);
	tcase_add_test(tc, test_uniform_memory);
	tcase_add_test(tc, test_block);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(recompute_suite)
