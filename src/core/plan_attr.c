/*
 * The plan attributes' table and the walks every surface shares: get,
 * set, parse and format one attribute, and complete a plan (plan_attr.h).
 */
#include <stdio.h>
#include <string.h>

#include "plan/collective.h"
#include "plan/compression.h"
#include "plan/gpu.h"
#include "plan/numparse.h"
#include "plan/plan_attr.h"

#define BIG 100000000L

/* A member's C type from its declaration, so that a row cannot read a
 * member as the wrong type (as io/fields.c does). */
#define CTYPE_OF(e) _Generic((e), int: PLAN_ATTR_C_INT, bool: PLAN_ATTR_C_BOOL, enum coll_algo: PLAN_ATTR_C_INT)
#define IN_PLAN(m) .home = PLAN_ATTR_IN_PLAN, .offset = offsetof(struct plan, m), \
	.ctype = CTYPE_OF(((const struct plan *)0)->m)
#define IN_OPT(m) .home = PLAN_ATTR_IN_OPTIONS, .offset = offsetof(struct estimate_options, m), \
	.ctype = CTYPE_OF(((const struct estimate_options *)0)->m)
#define LIST .type = PLAN_ATTR_LIST, .ctype = PLAN_ATTR_C_NONE

static const char *const dp_on_names[] = { "gpu", "cpu", NULL };

const struct plan_attr plan_attrs[PLAN_ATTR_COUNT + 1] = {
	[PLAN_ATTR_TP] = { "tp", "N", PLAN_ATTR_INT, IN_PLAN(tp), .min = 1, .max = 1 << 20, .def = 1,
		.flags = PLAN_ATTR_ALWAYS | PLAN_ATTR_SEARCHED, .help = "tensor-parallel degree (default 1)" },
	[PLAN_ATTR_PP] = { "pp", "N", PLAN_ATTR_INT, IN_PLAN(pp), .min = 1, .max = PLAN_MAX_STAGES, .def = 1,
		.flags = PLAN_ATTR_ALWAYS | PLAN_ATTR_SEARCHED, .help = "pipeline-parallel degree (default 1)" },
	[PLAN_ATTR_DP] = { "dp", "N", PLAN_ATTR_INT, IN_PLAN(dp), .min = 1, .max = 1 << 24, .def = 0,
		.flags = PLAN_ATTR_ALWAYS | PLAN_ATTR_SEARCHED,
		.help = "data-parallel degree (default: the GPUs left after tp x cp x pp)" },
	[PLAN_ATTR_VPP] = { "vpp", "N", PLAN_ATTR_INT, IN_PLAN(vpp), .min = 1, .max = 1024, .def = 1,
		.flags = PLAN_ATTR_SEARCHED, .help = "interleaved model chunks per GPU (default 1: plain 1F1B)" },
	[PLAN_ATTR_MICRO_BATCH] = { "micro_batch", "N", PLAN_ATTR_INT, IN_PLAN(micro_batch), .min = 1, .max = BIG,
		.def = 1, .flags = PLAN_ATTR_ALWAYS | PLAN_ATTR_SEARCHED,
		.help = "sequences per micro-batch (default 1)" },
	[PLAN_ATTR_GLOBAL_BATCH] = { "global_batch", "N", PLAN_ATTR_INT, IN_PLAN(global_batch), .min = 1,
		.max = BIG, .def = 0, .flags = PLAN_ATTR_ALWAYS, .help = "sequences per iteration (required)" },
	/* 0 is "unset" where a study or a runs CSV writes it: the model's. */
	[PLAN_ATTR_SEQ_LEN] = { "seq_len", "N", PLAN_ATTR_INT, IN_PLAN(seq_len), .min = 0, .max = BIG, .def = 0,
		.flags = PLAN_ATTR_ALWAYS, .help = "tokens per sequence (default, or 0: the model's seq_len)" },
	[PLAN_ATTR_SEQUENCE_PARALLEL] = { "sequence_parallel", NULL, PLAN_ATTR_BOOL, IN_PLAN(sequence_parallel),
		.flags = PLAN_ATTR_SEARCHED, .help = "Megatron sequence parallelism with TP" },
	[PLAN_ATTR_FLASH_ATTENTION] = { "flash_attention", NULL, PLAN_ATTR_BOOL, IN_PLAN(flash_attention),
		.def = -1, .flags = PLAN_ATTR_ALWAYS | PLAN_ATTR_GPU_DEFAULT,
		.help = "fused attention: no s^2 scores in memory (default on GPUs\n"
			"that run it: the GPU profile's flash_attention, Ampere on;\n"
			"--no-flash-attention: unfused, as before FlashAttention)" },
	[PLAN_ATTR_ZERO] = { "zero", "N", PLAN_ATTR_INT, IN_PLAN(zero), .min = 0, .max = 3, .def = 0,
		.flags = PLAN_ATTR_SEARCHED,
		.help = "ZeRO stage 0|1|2|3 over the DP group (default 0; 1 is\n"
			"Megatron's distributed optimizer, 3 FSDP FULL_SHARD)" },
	/* 0: no MiCS, as studies and runs CSVs write it (mics_group: [0, 8]). */
	[PLAN_ATTR_MICS_GROUP] = { "mics_group", "G", PLAN_ATTR_INT, IN_PLAN(mics_group), .min = 0, .max = 1 << 24,
		.def = 0, .flags = PLAN_ATTR_SEARCHED,
		.help = "MiCS: ZeRO-3 inside groups of G GPUs (implies --zero 3; 0: none)" },
	[PLAN_ATTR_EP] = { "ep", "N", PLAN_ATTR_INT, IN_PLAN(ep), .min = 1, .max = 1 << 24, .def = 1,
		.flags = PLAN_ATTR_SEARCHED,
		.help = "expert parallelism over the tp x cp x dp ranks (default 1)" },
	/* 0: the experts split as the dense layers, tp ways (Megatron-Core's default). */
	[PLAN_ATTR_ETP] = { "etp", "N", PLAN_ATTR_INT, IN_PLAN(etp), .min = 0, .max = 1 << 20, .def = 0,
		.flags = PLAN_ATTR_SEARCHED, /* plan-cli optsearch: search.c's etp_candidates */
		.help = "expert tensor parallelism: the experts split N ways,\n"
			"apart from tp (default, or 0: as tp); ep x etp divides\n"
			"tp x cp x dp (MoE parallel folding)" },
	[PLAN_ATTR_MOE_ROUTING] = { "moe_routing", "R", PLAN_ATTR_CHOICE, IN_PLAN(moe_routing),
		.choices = plan_moe_routing_names, .flags = PLAN_ATTR_SEARCHED,
		.help = "flat|bilevel all-to-all (default flat; bilevel: SMILE)" },
	[PLAN_ATTR_MOE_OVERLAP] = { "moe_overlap", "O", PLAN_ATTR_CHOICE, IN_PLAN(moe_overlap),
		.choices = plan_moe_overlap_names, .help = "none|lancet|combined-1f1b: overlap the all-to-all (default none)" },
	/* 0: a stage of the embedding or the loss alone, as Megatron-Core's
	 * --pipeline-model-parallel-layout allows (plan_validate_layout). */
	[PLAN_ATTR_STAGE_LAYERS] = { "stage_layers", "LIST", LIST, .min = 0, .max = 30000,
		.flags = PLAN_ATTR_NO_CONSTRAINT,
		.help = "layers per pipeline stage, e.g. 7,8,8,7 or 0,11,11,10 (0:\n"
			"the embedding or the loss alone), or per virtual stage\n"
			"(pp x vpp entries, in model order) when vpp > 1\n"
			"(default: the --pp-split)" },
	/* plan-cli pipeline: begin (uneven layouts and schedules) */
	[PLAN_ATTR_PP_SPLIT] = { "pp_split", "RULE", PLAN_ATTR_CHOICE, IN_PLAN(pp_split),
		.choices = plan_pp_split_names, .flags = PLAN_ATTR_SEARCHED,
		.help = "even|embedding|loss|embedding-loss|torchtitan: the layers over\n"
			"pp x vpp stages without --stage-layers (default even; Megatron's\n"
			"account_for_embedding/loss_in_pipeline_split count them as a\n"
			"layer; torchtitan: generate_split_points)" },
	[PLAN_ATTR_PP_FIRST_LAYERS] = { "pp_first_layers", "N", PLAN_ATTR_INT, IN_PLAN(pp_first_layers), .min = 0,
		.max = 30000, .def = 0, .flags = PLAN_ATTR_SEARCHED,
		.help = "layers of the first pipeline stage, the rest even over the\n"
			"middle ones (Megatron's --decoder-first-pipeline-num-layers; 0: even)" },
	[PLAN_ATTR_PP_LAST_LAYERS] = { "pp_last_layers", "N", PLAN_ATTR_INT, IN_PLAN(pp_last_layers), .min = 0,
		.max = 30000, .def = 0, .flags = PLAN_ATTR_SEARCHED,
		.help = "layers of the last pipeline stage (Megatron's\n"
			"--decoder-last-pipeline-num-layers; 0: even)" },
	[PLAN_ATTR_PP_SCHEDULE] = { "pp_schedule", "S", PLAN_ATTR_CHOICE, IN_PLAN(pp_schedule),
		.choices = plan_pp_schedule_names, .flags = PLAN_ATTR_SEARCHED,
		.help = "1f1b|zb-h1|zb-v|dualpipe|dualpipev (default 1f1b, interleaved\n"
			"with vpp > 1; zb-v and dualpipev need --vpp 2)" },
	/* plan-cli pipeline: end */
	[PLAN_ATTR_RECOMPUTE] = { "recompute", "MODE", PLAN_ATTR_CHOICE, IN_PLAN(recompute),
		.choices = plan_recompute_names, .flags = PLAN_ATTR_ALWAYS | PLAN_ATTR_SEARCHED,
		.help = "none|selective|full (default none)" },
	[PLAN_ATTR_STAGE_RECOMPUTE] = { "stage_recompute", "LIST", LIST, .choices = plan_recompute_names,
		.flags = PLAN_ATTR_NO_CONSTRAINT, .help = "recompute per stage, e.g. full,full,selective,none" },
	[PLAN_ATTR_RECOMPUTE_LAYERS] = { "recompute_layers", "N|LIST", LIST, .min = 0, .max = 30000,
		.flags = PLAN_ATTR_NO_CONSTRAINT,
		.help = "Slapo's checkpoint ratio: the first N layers of each stage\n"
			"(or a list, one per stage) recompute in full, the others\n"
			"as --recompute none|selective says (full: none)" },
	/* plan-cli recomp: begin */
	[PLAN_ATTR_RECOMPUTE_MODULES] = { "recompute_modules", "M[+M...]", PLAN_ATTR_SET, IN_PLAN(recompute_modules),
		.choices = plan_recompute_module_names, .def = 0,
		.help = "selective stages recompute these submodules (Megatron-Core's\n"
			"--recompute-modules): core_attn, mla_up_proj, moe_act, layernorm,\n"
			"mlp, moe, shared_experts (default framework: its profile's\n"
			"selective recomputation)" },
	[PLAN_ATTR_RECOMPUTE_METHOD] = { "recompute_method", "M", PLAN_ATTR_CHOICE, IN_PLAN(recompute_method),
		.choices = plan_recompute_method_names,
		.help = "uniform|block: full stages recompute groups of\n"
			"--recompute-num-layers layers keeping each group's input\n"
			"(uniform, default), or only the first N layers of each\n"
			"virtual stage (block; Megatron's --recompute-method)" },
	[PLAN_ATTR_RECOMPUTE_NUM_LAYERS] = { "recompute_num_layers", "N", PLAN_ATTR_INT, IN_PLAN(recompute_num_layers),
		.min = 0, .max = 30000, .def = 0,
		.help = "layers of a uniform group or of a block (Megatron's\n"
			"--recompute-num-layers; default, or 0: uniform 1)" },
	/* plan-cli recomp: end */
	[PLAN_ATTR_ACTIVATION_OFFLOAD_LAYERS] = { "activation_offload_layers", "N", PLAN_ATTR_INT,
		IN_PLAN(activation_offload_layers), .min = 0, .max = 30000, .def = 0,
		.help = "the first N layers' activations go to host memory and\n"
			"back (Megatron-Core's --cpu-offloading-num-layers;\n"
			"pp 1, no recomputation; default 0: none)" },
	[PLAN_ATTR_COMPRESS] = { "compress", "LIST", LIST, .flags = PLAN_ATTR_COMPRESSION | PLAN_ATTR_NO_CONSTRAINT,
		.help = "where to compress: any of tp,pp,dp (default with a\n"
			"compressor: tp,pp, MCBench's model-parallel activations)" },
	[PLAN_ATTR_COMPRESS_FROM_LAYER] = { "compress_from_layer", "N", PLAN_ATTR_INT, IN_PLAN(compress.from_layer),
		.min = 0, .max = 1 << 20, .def = -1, .flags = PLAN_ATTR_COMPRESSION | PLAN_ATTR_NO_CONSTRAINT,
		.help = "TP: compress layers above N (default: half the layers)" },
	[PLAN_ATTR_COMPRESS_FROM_STAGE] = { "compress_from_stage", "N", PLAN_ATTR_INT, IN_PLAN(compress.from_stage),
		.min = 0, .max = 1 << 20, .def = 0, .flags = PLAN_ATTR_COMPRESSION | PLAN_ATTR_NO_CONSTRAINT,
		.help = "PP: stages from N on compress their sends (default 0)" },
	[PLAN_ATTR_DP_COMPRESS_SCHEME] = { "dp_compress_scheme", "S", PLAN_ATTR_CHOICE, IN_PLAN(compress.dp_scheme),
		.choices = compress_dp_scheme_names, .flags = PLAN_ATTR_COMPRESSION | PLAN_ATTR_SEARCHED,
		.help = "auto|allgather|twoway|allreduce (default auto: allreduce for\n"
			"powersgd, else two-way push/pull as in BytePS-Compress)" },
	[PLAN_ATTR_DP_COMPRESS_ON] = { "dp_compress_on", "WHERE", PLAN_ATTR_CHOICE, IN_PLAN(compress.dp_on_cpu),
		.choices = dp_on_names, .flags = PLAN_ATTR_COMPRESSION | PLAN_ATTR_SEARCHED,
		.help = "gpu|cpu: where DP compression runs (default gpu)" },
	[PLAN_ATTR_PRECISION] = { "precision", "P", PLAN_ATTR_CHOICE, IN_PLAN(precision),
		.choices = plan_precision_names,
		.help = "bf16|fp16|fp8|fp4: the linear layers' GEMMs (default bf16; fp8 needs\n"
			"fp8 tensor cores, fp4 (NVFP4) Blackwell's)" },
	[PLAN_ATTR_TP_OVERLAP] = { "tp_overlap", NULL, PLAN_ATTR_BOOL, IN_PLAN(tp_overlap), .flags = PLAN_ATTR_SEARCHED,
		.help = "overlap the sequence-parallel collectives with their GEMMs\n"
			"(Megatron-Core's --tp-comm-overlap; needs --sequence-parallel)" },
	[PLAN_ATTR_CP] = { "cp", "N", PLAN_ATTR_INT, IN_PLAN(cp), .min = 1, .max = 1 << 16, .def = 1,
		.flags = PLAN_ATTR_SEARCHED,
		.help = "context parallelism: the sequence split N ways (default 1; needs\n"
			"--flash-attention)" },
	[PLAN_ATTR_CP_METHOD] = { "cp_method", "M", PLAN_ATTR_CHOICE, IN_PLAN(cp_method), .choices = plan_cp_method_names,
		.help = "ring|all-to-all|all-gather: ring attention (Megatron-Core, default),\n"
			"DeepSpeed-Ulysses' all-to-alls or Megatron-Core's K/V all-gather" },
	[PLAN_ATTR_DP_ALLREDUCE] = { "dp_allreduce", "ALGO", PLAN_ATTR_CHOICE, IN_OPT(dp_algo), .choices = coll_algo_names,
		.flags = PLAN_ATTR_SEARCHED, .help = "ring|hierarchical (default ring)" },
	[PLAN_ATTR_FP8_GATHER] = { "fp8_gather", NULL, PLAN_ATTR_BOOL, IN_PLAN(fp8_gather),
		.help = "ZeRO-3/FSDP all-gathers the fp8 linear weights in 1 byte (torchao's\n"
			"enable_fsdp_float8_all_gather; needs --precision fp8 and --zero 3)" },
	/* fp8attn: begin */
	[PLAN_ATTR_FP8_RECIPE] = { "fp8_recipe", "R", PLAN_ATTR_CHOICE, IN_PLAN(fp8_recipe),
		.choices = plan_fp8_recipe_names,
		.help = "framework|delayed|current|rowwise|blockwise|mxfp8: how fp8 scales\n"
			"(default framework: its profile's fp8_recipe; mxfp8 needs Blackwell)" },
	/* Megatron-Core's --first-last-layers-bf16 (megatron/core/fp8_utils.py,
	 * is_first_last_bf16_layer): 0, the plan's precision everywhere. */
	[PLAN_ATTR_BF16_FIRST_LAYERS] = { "bf16_first_layers", "N", PLAN_ATTR_INT, IN_PLAN(bf16_first_layers),
		.min = 0, .max = 30000, .def = 0,
		.help = "under --precision fp8|fp4 the model's first N transformer\n"
			"layers run in bf16 (Megatron-Core's --first-last-layers-bf16\n"
			"with --num-layers-at-start-in-bf16; default 0: none)" },
	[PLAN_ATTR_BF16_LAST_LAYERS] = { "bf16_last_layers", "N", PLAN_ATTR_INT, IN_PLAN(bf16_last_layers),
		.min = 0, .max = 30000, .def = 0,
		.help = "under --precision fp8|fp4 the model's last N transformer\n"
			"layers run in bf16 (--num-layers-at-end-in-bf16; default 0: none)" },
	[PLAN_ATTR_ATTENTION_KERNEL] = { "attention_kernel", "K", PLAN_ATTR_CHOICE, IN_PLAN(attention_kernel),
		.choices = plan_attention_kernel_names,
		.help = "framework|profile|fa2|fa3|cudnn|sdpa: the fused-attention kernel\n"
			"(default framework: its profile's attention_kernel; fa3 needs Hopper)" },
	/* fp8attn: end */
	/* -1: the framework profile's grad_reduce_overlap (optimize has its own --no-dp-overlap). */
	[PLAN_ATTR_DP_OVERLAP] = { "dp_overlap", NULL, PLAN_ATTR_BOOL, IN_PLAN(dp_overlap), .def = -1,
		.flags = PLAN_ATTR_FW_DEFAULT | PLAN_ATTR_NO_CONSTRAINT,
		.help = "overlap the DP gradient reduction with the backward even\n"
			"where the framework profile does not (Megatron's\n"
			"--overlap-grad-reduce; default: the profile's\n"
			"grad_reduce_overlap; --no-dp-overlap: no DP/ZeRO traffic\n"
			"overlaps computation)" },
	[PLAN_ATTR_MICS_HIERARCHICAL] = { "mics_hierarchical", NULL, PLAN_ATTR_BOOL, IN_PLAN(mics_hierarchical),
		.def = 1, .help = "MiCS: flat instead of 2-hop parameter all-gather" },
	[PLAN_ATTR_COUNT] = { .name = NULL },
};

const struct plan_attr *
plan_attr_find(const char *name)
{
	char want[64];
	size_t n = strlen(name);

	if (n >= sizeof(want))
		return NULL;
	for (size_t i = 0; i <= n; i++)
		want[i] = name[i] == '-' ? '_' : name[i];
	for (int i = 0; i < PLAN_ATTR_COUNT; i++)
		if (strcmp(plan_attrs[i].name, want) == 0)
			return &plan_attrs[i];
	return NULL;
}

const char *
plan_attr_option(const struct plan_attr *a, char *buf, size_t size)
{
	/* A switch that is on by default is given to turn it off. */
	bool negated = a->type == PLAN_ATTR_BOOL && a->def == 1;
	size_t i = 0;

	snprintf(buf, size, "%s%s", negated ? "no-" : "", a->name);
	for (; buf[i]; i++)
		if (buf[i] == '_')
			buf[i] = '-';
	return buf;
}

static void *
member(const struct plan_attr *a, const struct plan_attr_target *t)
{
	if (a->home == PLAN_ATTR_IN_OPTIONS)
		return t->opt ? (char *)t->opt + a->offset : NULL;
	return (char *)t->plan + a->offset;
}

long
plan_attr_get(const struct plan_attr *a, const struct plan_attr_target *t)
{
	const void *m = member(a, t);

	if (!m)
		return a->def;
	return a->ctype == PLAN_ATTR_C_BOOL ? *(const bool *)m : *(const int *)m;
}

void
plan_attr_set(const struct plan_attr *a, const struct plan_attr_target *t, long v)
{
	void *m = member(a, t);

	if (!m)
		return;
	if (a->ctype == PLAN_ATTR_C_BOOL)
		*(bool *)m = v != 0;
	else
		*(int *)m = (int)v;
}

/* The index of @text among @choices, or -1. */
static int
choice_index(const char *const *choices, const char *text)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(choices[i], text) == 0)
			return i;
	return -1;
}

/* "a, b, c" of @choices into @buf (as the CLI's messages list them). */
static const char *
choice_list(const char *const *choices, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; choices[i] && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i == 0 ? "" : ", ", choices[i]);
	return buf;
}

/* plan-cli recomp: "a+b" (or "a,b") of @choices as a bit mask; "framework": 0. */
static bool
parse_set(const struct plan_attr *a, const char *label, const char *text, long *v, char *why, size_t size)
{
	const char *t = text;
	long mask = 0;

	if (strcmp(text, "framework") == 0) {
		*v = 0;
		return true;
	}
	for (;;) {
		size_t len = strcspn(t, "+,");
		char tok[32], list[256];
		int i;

		snprintf(tok, sizeof(tok), "%.*s", (int)(len < sizeof(tok) ? len : sizeof(tok) - 1), t);
		/* Issue 25, twenty-third session: an empty item ('mlp+', '+mlp',
		 * 'a++b') was "unknown value ''", 'framework+mlp' an unknown
		 * 'framework' that the list calls valid, and a module named twice
		 * passed silently. */
		if (!text[0]) {
			snprintf(why, size, "%s is empty: give framework, or modules joined by '+'", label);
			return false;
		}
		if (len == 0) {
			snprintf(why, size, "%s '%s' has an empty item: join the modules with one '+' and no '+' "
				 "at either end", label, text);
			return false;
		}
		if (strcmp(tok, "framework") == 0) {
			snprintf(why, size, "%s '%s': 'framework' (the profile's selective recomputation) stands "
				 "alone, not joined to modules", label, text);
			return false;
		}
		if (len >= sizeof(tok) || (i = choice_index(a->choices, tok)) < 0) {
			snprintf(why, size, "unknown value '%.*s' for %s (valid: framework, or any of %s joined by '+')",
				 (int)len, t, label, choice_list(a->choices, list, sizeof(list)));
			return false;
		}
		if (mask & 1L << i) {
			snprintf(why, size, "%s '%s' names '%s' twice", label, text, tok);
			return false;
		}
		mask |= 1L << i;
		if (!t[len])
			break;
		t += len + 1;
	}
	*v = mask;
	return true;
}

static const char *const true_names[] = { "true", "yes", "on", "1", NULL };
static const char *const false_names[] = { "false", "no", "off", "0", NULL };

bool
plan_attr_parse_value(const struct plan_attr *a, const char *label, const char *text, long *v, char *why,
		      size_t size)
{
	char list[256];
	int i;

	if (!label)
		label = a->name;

	switch (a->type) {
	case PLAN_ATTR_INT:
		if (num_parse_long(text, a->min, a->max, v))
			return true;
		snprintf(why, size, "%s expects a whole number from %ld to %ld, got '%s'", label, a->min, a->max,
			 text);
		return false;
	case PLAN_ATTR_BOOL:
		if (choice_index(true_names, text) >= 0 || choice_index(false_names, text) >= 0) {
			*v = choice_index(true_names, text) >= 0;
			return true;
		}
		snprintf(why, size, "%s expects true or false, got '%s'", label, text);
		return false;
	case PLAN_ATTR_CHOICE:
		if ((i = choice_index(a->choices, text)) >= 0) {
			*v = i;
			return true;
		}
		if (!text[0]) /* was "unknown value ''" (issue 25, twenty-third session) */
			snprintf(why, size, "%s is empty (valid: %s)", label, choice_list(a->choices, list, sizeof(list)));
		else
			snprintf(why, size, "unknown value '%s' for %s (valid: %s)", text, label,
				 choice_list(a->choices, list, sizeof(list)));
		return false;
	case PLAN_ATTR_SET: /* plan-cli recomp */
		return parse_set(a, label, text, v, why, size);
	default:
		snprintf(why, size, "%s is a list, not one value", label);
		return false;
	}
}

/* "a,b,c" entries of a per-stage list into the plan; false with @why. */
static bool
parse_stage_list(const struct plan_attr *a, const char *label, const char *text, struct plan *p, char *why,
		 size_t size)
{
	enum plan_attr_id id = (enum plan_attr_id)(a - plan_attrs);
	const char *t = text;
	int n = 0;

	for (;;) {
		size_t len = strcspn(t, ",");
		char tok[32];
		long v;

		if (n == PLAN_MAX_STAGES) {
			snprintf(why, size, "%s: more than %d stages", label, PLAN_MAX_STAGES);
			return false;
		}
		snprintf(tok, sizeof(tok), "%.*s", (int)(len < sizeof(tok) ? len : sizeof(tok) - 1), t);
		if (len == 0) {
			snprintf(why, size, "%s expects a number or a comma-separated list, got '%s' (%s)", label, text,
				 text[0] ? "an empty entry" : "nothing");
			return false;
		}
		/* A bad entry as a bad value of one stage: the scalar's message. */
		if (a->choices ? (v = choice_index(a->choices, tok)) < 0 : !num_parse_long(tok, a->min, a->max, &v)) {
			struct plan_attr entry = *a;

			entry.type = a->choices ? PLAN_ATTR_CHOICE : PLAN_ATTR_INT;
			plan_attr_parse_value(&entry, label, len < sizeof(tok) ? tok : t, &v, why, size);
			return false;
		}
		if (id == PLAN_ATTR_STAGE_LAYERS)
			p->stage_layers[n++] = (short)v;
		else if (id == PLAN_ATTR_STAGE_RECOMPUTE)
			p->stage_recompute[n++] = (signed char)v;
		else
			p->stage_recompute_layers[n++] = (short)v;
		if (!t[len])
			break;
		t += len + 1;
	}
	if (id == PLAN_ATTR_STAGE_LAYERS)
		p->custom_layers = true, p->stage_layers_count = n;
	else if (id == PLAN_ATTR_STAGE_RECOMPUTE)
		p->custom_recompute = true, p->stage_recompute_count = n;
	else
		p->custom_recompute_layers = true, p->stage_recompute_layers_count = n;
	return true;
}

bool
plan_attr_parse(const struct plan_attr *a, const char *label, const char *text, const struct plan_attr_target *t,
		char *why, size_t size)
{
	long v;

	if (!label)
		label = a->name;
	if (a->type != PLAN_ATTR_LIST) {
		if (!plan_attr_parse_value(a, label, text, &v, why, size))
			return false;
		plan_attr_set(a, t, v);
		return true;
	}
	if (a == &plan_attrs[PLAN_ATTR_COMPRESS]) {
		if (plan_compress_parse(text, &t->plan->compress))
			return true;
		snprintf(why, size, "%s expects a list of tp, pp and dp, got '%s'", label, text);
		return false;
	}
	return parse_stage_list(a, label, text, t->plan, why, size);
}

const char *
plan_attr_format_value(const struct plan_attr *a, long v, char *buf, size_t size)
{
	if (a->type == PLAN_ATTR_BOOL)
		snprintf(buf, size, "%s", v ? "true" : "false");
	else if (a->type == PLAN_ATTR_SET) { /* plan-cli recomp */
		size_t n = 0;

		snprintf(buf, size, "framework");
		for (int i = 0; a->choices[i] && v > 0; i++)
			if ((v & 1L << i) && n < size)
				n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "+" : "", a->choices[i]);
	} else if (a->type == PLAN_ATTR_CHOICE && v >= 0)
		snprintf(buf, size, "%s", a->choices[v]);
	else
		snprintf(buf, size, "%ld", v);
	return buf;
}

/* A per-stage list as "a,b,c" (pp entries); false when the plan has none. */
static bool
format_stage_list(enum plan_attr_id id, const struct plan *p, char *buf, size_t size)
{
	size_t n = 0;

	if (id == PLAN_ATTR_STAGE_LAYERS ? !p->custom_layers :
	    id == PLAN_ATTR_STAGE_RECOMPUTE ? !p->custom_recompute : !p->custom_recompute_layers)
		return false;
	buf[0] = '\0';
	/* plan-cli pipeline: a layer list has one entry per virtual stage. */
	int entries = id == PLAN_ATTR_STAGE_LAYERS ? p->pp * p->vpp : p->pp;

	for (int s = 0; s < entries && s < PLAN_MAX_STAGES && n < size; s++) {
		const char *sep = s ? "," : "";

		if (id == PLAN_ATTR_STAGE_LAYERS)
			n += (size_t)snprintf(buf + n, size - n, "%s%d", sep, p->stage_layers[s]);
		else if (id == PLAN_ATTR_STAGE_RECOMPUTE)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", sep, plan_recompute_names[p->stage_recompute[s]]);
		else
			n += (size_t)snprintf(buf + n, size - n, "%s%d", sep, p->stage_recompute_layers[s]);
	}
	return true;
}

/*
 * Whether @a is written for @t at all: the attributes that mean nothing
 * in this plan are left out (a compression attribute without a
 * compressor or without its part compressed, moe_routing without EP,
 * recompute where the stages give theirs), so that predict_args stay short.
 */
static bool
applies(enum plan_attr_id id, const struct plan *p, bool has_compressor)
{
	const struct plan_compression *c = &p->compress;

	if ((plan_attrs[id].flags & PLAN_ATTR_COMPRESSION) && !has_compressor)
		return false;
	switch (id) {
	case PLAN_ATTR_MOE_ROUTING:
		return p->ep > 1;
	case PLAN_ATTR_FP8_RECIPE: /* fp8attn: written when not the framework's */
		return p->fp8_recipe != PLAN_FP8_FRAMEWORK;
	case PLAN_ATTR_ATTENTION_KERNEL:
		return p->attention_kernel != PLAN_ATTN_FRAMEWORK;
	case PLAN_ATTR_RECOMPUTE:
		return !p->custom_recompute;
	case PLAN_ATTR_COMPRESS_FROM_LAYER:
		return c->tp && c->from_layer >= 0;
	case PLAN_ATTR_COMPRESS_FROM_STAGE:
		return c->pp;
	case PLAN_ATTR_DP_COMPRESS_SCHEME:
	case PLAN_ATTR_DP_COMPRESS_ON:
		return c->dp;
	default:
		return true;
	}
}

bool
plan_attr_format(const struct plan_attr *a, const struct plan_attr_target *t, bool has_compressor, char *buf,
		 size_t size)
{
	enum plan_attr_id id = (enum plan_attr_id)(a - plan_attrs);
	const struct plan *p = t->plan;
	long v;

	if (!applies(id, p, has_compressor))
		return false;
	if (id == PLAN_ATTR_COMPRESS) {
		snprintf(buf, size, "%s%s%s%s%s", p->compress.tp ? "tp" : "", p->compress.tp && p->compress.pp ? "," : "",
			 p->compress.pp ? "pp" : "", (p->compress.tp || p->compress.pp) && p->compress.dp ? "," : "",
			 p->compress.dp ? "dp" : "");
		return true;
	}
	if (a->type == PLAN_ATTR_LIST)
		return format_stage_list(id, p, buf, size);
	v = plan_attr_get(a, t);
	/* The always-written ones only once set: 0 is "unset" for dp, seq_len
	 * and global_batch. With EP the routing is written either way, as
	 * predict_args always have. */
	if (id == PLAN_ATTR_MOE_ROUTING || (a->flags & PLAN_ATTR_ALWAYS) ?
	    a->type == PLAN_ATTR_INT && a->def == 0 && v == 0 : v == a->def)
		return false;
	plan_attr_format_value(a, v, buf, size);
	return true;
}

/* --recompute-layers N: the same N on every stage, once pp is known. */
static bool
complete_stage_lists(struct plan *p, struct plan_error *err)
{
	if (p->custom_recompute_layers && p->stage_recompute_layers_count == 1 && p->pp > 1 &&
	    p->pp <= PLAN_MAX_STAGES) {
		for (int s = 1; s < p->pp; s++)
			p->stage_recompute_layers[s] = p->stage_recompute_layers[0];
		p->stage_recompute_layers_count = p->pp;
	}
	if (p->custom_recompute_layers && p->stage_recompute_layers_count != p->pp)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "recompute_layers needs one number for every "
				      "stage or one entry per stage (pp %d), got %d", p->pp,
				      p->stage_recompute_layers_count);
	/* --stage-layers is the whole layout: a split rule beside it was
	 * silently ignored (predict --stage-layers 20,12 --pp-first-layers 5
	 * printed pp_first_layers 5 and ran 20,12). */
	if (p->custom_layers && (p->pp_first_layers || p->pp_last_layers))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "stage_layers gives every stage's layers: it does "
				      "not go with pp_first_layers or pp_last_layers (got %d and %d)",
				      p->pp_first_layers, p->pp_last_layers);
	if (p->custom_layers && p->pp_split != PLAN_PP_SPLIT_EVEN)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "stage_layers gives every stage's layers: it does "
				      "not go with pp_split %s", plan_pp_split_names[p->pp_split]);
	/* plan-cli pipeline: with vpp > 1 a layer list names every virtual stage. */
	if (p->custom_layers && p->stage_layers_count != (long long)p->pp * p->vpp)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "stage_layers needs one entry per %s (pp x vpp "
				      "%d x %d), got %d", p->vpp > 1 ? "virtual stage" : "stage", p->pp, p->vpp,
				      p->stage_layers_count);
	if (p->custom_recompute && p->stage_recompute_count != p->pp)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "stage_layers and stage_recompute need one "
				      "entry per stage (pp %d)", p->pp);
	return true;
}

bool
plan_complete(struct plan *p, const struct plan_fill *fill, const struct model *m, const struct cluster *c,
	      struct plan_error *err)
{
	long total = fill->gpus ? fill->gpus : cluster_gpus(c);
	struct plan unit = *p;
	long long shape, all;

	/* tp x cp x pp (dp 1), checked: each degree is in range, the product need not be. */
	unit.dp = 1;
	shape = plan_degrees_product(&unit);
	/* A degree below 1 is not an overflow (it was said to be one). */
	if (p->tp < 1 || p->cp < 1 || p->pp < 1)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "tp, cp and pp must be at least 1 (got %d, %d, %d)",
				      p->tp, p->cp, p->pp);
	if (shape < 0)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "tp x cp x pp (%d x %d x %d) is more than %lld "
				      "GPUs", p->tp, p->cp, p->pp, PLAN_MAX_GPUS);

	if (fill->gpus > cluster_gpus(c))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "gpus (%d) is more than cluster '%s' has (%d)",
				      fill->gpus, c->name, cluster_gpus(c));
	if (p->seq_len == 0)
		p->seq_len = m->seq_len;
	if (p->mics_group > 0 && p->zero == 0)
		p->zero = 3;
	p->flash_attention = gpu_plan_flash_attention(&c->gpu, fill->flash);
	/* plan-cli pipeline: layers that pp x vpp do not divide, with no
	 * rule of the plan's own, go as the framework splits them. */
	if (!p->custom_layers && p->pp_split == PLAN_PP_SPLIT_EVEN && p->pp_first_layers == 0 &&
	    p->pp_last_layers == 0 && p->pp >= 1 && p->vpp >= 1 && m->layers % ((long long)p->pp * p->vpp) != 0)
		p->pp_split = fill->pp_split;
	if (p->dp == 0) {
		if (total % shape != 0) {
			if (p->cp > 1)
				return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "%ld GPUs are not divisible by "
						      "tp x cp x pp (%d x %d x %d); give dp or the GPUs", total, p->tp,
						      p->cp, p->pp);
			return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "%ld GPUs are not divisible by tp x pp "
					      "(%d x %d); give dp or the GPUs", total, p->tp, p->pp);
		}
		p->dp = (int)(total / shape);
	} else if (fill->gpus && (all = plan_degrees_product(p)) != fill->gpus) {
		if (all < 0)
			return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "tp x cp x pp x dp (%d x %d x %d x %d) is "
					      "more than %lld GPUs", p->tp, p->cp, p->pp, p->dp, PLAN_MAX_GPUS);
		if (p->cp > 1)
			return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "gpus (%d) does not match tp x cp x pp x dp "
					      "(%d x %d x %d x %d = %lld)", fill->gpus, p->tp, p->cp, p->pp, p->dp, all);
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "gpus (%d) does not match tp x pp x dp "
				      "(%d x %d x %d = %lld)", fill->gpus, p->tp, p->pp, p->dp, all);
	}
	return complete_stage_lists(p, err);
}
